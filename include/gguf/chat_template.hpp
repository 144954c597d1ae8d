#ifndef GGUF_CHAT_TEMPLATE_HPP
#define GGUF_CHAT_TEMPLATE_HPP

/**
 * @file
 * Chat templates, rendered exactly as Hugging Face transformers renders them (`apply_chat_template`):
 * Jinja2 3.1 in transformers' environment — `ImmutableSandboxedEnvironment(trim_blocks=True,
 * lstrip_blocks=True)` with the loop controls and the `{% generation %}` block, transformers' `tojson`,
 * and the globals `raise_exception` and `strftime_now` — with Python's semantics where templates rely on
 * them (str methods, printing of lists and dicts, integer and float arithmetic). A template is compiled
 * once and rendered many times, from many threads; every render is bounded in output, memory, steps,
 * depth and time, so a hostile template fails cleanly.
 */

#include <chrono>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/format/metadata.hpp"
#include "gguf/jinja/options.hpp"
#include "gguf/llama/chat_template_keys.hpp"
#include "gguf/json.hpp"

GGUF_BEGIN_NAMESPACE

/// Why a template could not be compiled or rendered: the Python exception Jinja2 raises there (its
/// name by `name()`), its message (a `raise_exception` message verbatim) and the template line.
using template_error = jinja::error_info;

/// "TemplateError: message" (and " (line N)" when known): one line for logs and tools.
inline std::string to_string(const template_error& e) {
  std::string s = e.name();
  s += ": ";
  s += e.message;
  if (e.line) s += " (line " + std::to_string(e.line) + ")";
  return s;
}

/**
 * A `T` or a `template_error`, shaped like `gguf::result` (`has_value()`, `*`, `->`, `error()`).
 */
template <class T>
class [[nodiscard]] template_result {
 public:
  /// A value.
  template_result(T v) : v_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  /// An error.
  template_result(template_error e) : e_(std::move(e)) {}  // NOLINT(google-explicit-constructor)
  /// True when there is a value.
  bool has_value() const noexcept { return v_.has_value(); }
  /// `has_value()`.
  explicit operator bool() const noexcept { return v_.has_value(); }
  /// The value (unchecked).
  T& operator*() & noexcept { return *v_; }
  /// The value (unchecked).
  const T& operator*() const& noexcept { return *v_; }
  /// The value moved out (unchecked).
  T operator*() && noexcept { return std::move(*v_); }
  /// Member access to the value (unchecked).
  T* operator->() noexcept { return &*v_; }
  /// Member access to the value (unchecked).
  const T* operator->() const noexcept { return &*v_; }
  /// The error (empty, `type == none`, when there is a value).
  const template_error& error() const noexcept { return e_; }

 private:
  std::optional<T> v_;
  template_error e_;
};

/// How a render runs.
struct render_options {
  /// The clock of `strftime_now`: this local time when set, else the current local time.
  std::optional<std::tm> now;
  /// What one render may cost (output, memory, steps, depth, time).
  jinja::limits limits;
  /// Give `tools` and `documents` (None) and `add_generation_prompt` (False) when the context has not,
  /// as transformers' apply_chat_template always passes them.
  bool transformers_defaults = true;
};

namespace detail {
/// What a compiled template holds that its users see (the engine's program follows it in the object).
struct compiled_template {
  std::string source;  ///< the template as given
};
}  // namespace detail

// The engine's two entry points. Header-only (the default), they are inline and defined by
// <gguf/jinja/engine.hpp>, included at the end of this header; with GGUF_CHAT_TEMPLATE_LIBRARY=1 (set by
// linking gguf::chat) they are compiled once in that library and a program that includes this header
// compiles only the API. Each mode has an inline namespace of its own, so that both can meet in one
// program without breaking the one-definition rule.
#ifndef GGUF_CHAT_TEMPLATE_LIBRARY
/// 1: the engine is compiled once in gguf::chat (which defines it for the programs linking it); 0 (the
/// default): header-only, compiled in every file that includes this header.
#define GGUF_CHAT_TEMPLATE_LIBRARY 0
#endif
#if GGUF_CHAT_TEMPLATE_LIBRARY
/// The inline namespace of the engine's entry points in this mode.
#define GGUF_CHAT_ENGINE_NAMESPACE chat_engine_compiled
/// How the entry points are declared in this mode: defined once, in gguf::chat.
#define GGUF_CHAT_ENGINE_INLINE
#else
/// The inline namespace of the engine's entry points in this mode.
#define GGUF_CHAT_ENGINE_NAMESPACE chat_engine_inline
/// How the entry points are declared in this mode: inline, defined by <gguf/jinja/engine.hpp>.
#define GGUF_CHAT_ENGINE_INLINE inline
#endif
namespace detail {
inline namespace GGUF_CHAT_ENGINE_NAMESPACE {
/// Compiles `source`: the template, or nullptr with `err` set.
GGUF_CHAT_ENGINE_INLINE std::shared_ptr<const compiled_template> compile_chat_template(
    std::string_view source, const jinja::compile_limits& limits, jinja::error_info& err);
/// Renders `t` with `context` (a JSON object) into `out`; false with `err` set.
GGUF_CHAT_ENGINE_INLINE bool render_chat_template(const compiled_template& t, const json& context,
                                                  const render_options& options, std::string& out,
                                                  jinja::error_info& err);
}  // namespace GGUF_CHAT_ENGINE_NAMESPACE
}  // namespace detail

/**
 * A compiled chat template: immutable, cheap to copy (copies share it), safe to render from many
 * threads at once.
 */
class chat_template {
 public:
  /// The metadata key of a model's default template.
  static constexpr std::string_view default_key = chat_template_key;

  /**
   * Compiles a template as Jinja2 compiles it in transformers' environment.
   * @param source the template
   * @param limits its size and the stack the compiler may use
   * @return the template; TemplateSyntaxError or TemplateAssertionError (an unknown filter or test) with
   *         its line, or a limit
   */
  static template_result<chat_template> compile(std::string_view source, const jinja::compile_limits& limits = {}) {
    template_error err;
    auto t = detail::compile_chat_template(source, limits, err);
    if (!t) return err;
    return chat_template(std::move(t));
  }

  /**
   * The template a model carries: `tokenizer.chat_template`, or `tokenizer.chat_template.NAME`.
   * @param md   a model's metadata
   * @param name empty for the default template, else a named one
   * @return the compiled template; an error when the key is missing (naming it) or does not compile
   */
  static template_result<chat_template> from_metadata(const metadata_table& md, std::string_view name = {}) {
    std::string key(default_key);
    if (!name.empty()) key += "." + std::string(name);
    const auto source = md.get<std::string_view>(key);
    if (!source) {
      template_error e;
      e.type = template_error::kind::key;
      e.message = "the model has no chat template '" + key + "'";
      return e;
    }
    return compile(*source);
  }

  /**
   * The template of anything with `metadata()`: a parsed or mapped file, a model, a shard set.
   * @param source the file or model; it may be closed afterwards (the template keeps its own copy)
   * @param name   empty for the default template, else a named one
   */
  template <class Source>
  requires requires(const Source& s) {
    { s.metadata() } -> std::convertible_to<const metadata_table&>;
  }
  static template_result<chat_template> from(const Source& source, std::string_view name = {}) {
    return from_metadata(source.metadata(), name);
  }

  /**
   * The variables a model gives every render, as llama.cpp's server passes them: `bos_token` and
   * `eos_token`, the texts of its BOS and EOS tokens (each left out when the model has none, as
   * transformers leaves out a tokenizer's missing special token).
   * @param md a model's metadata
   * @return a JSON object, to merge into a render's context
   */
  static json model_variables(const metadata_table& md) {
    json vars = json(json::object_type{});
    const auto tokens = md.get<array_view>("tokenizer.ggml.tokens");
    const auto token_text = [&](std::string_view id_key, std::string_view var) {
      const auto id = md.get_integer<std::uint64_t>(id_key);
      if (!id || !tokens || tokens->item_type() != value_type::string || *id >= tokens->size()) return;
      std::uint64_t k = 0;
      for (const std::string_view text : *tokens->as<std::string_view>()) {
        if (k++ == *id) {
          vars.set(var, json(text));
          return;
        }
      }
    };
    token_text("tokenizer.ggml.bos_token_id", "bos_token");
    token_text("tokenizer.ggml.eos_token_id", "eos_token");
    return vars;
  }

  /// The names of a model's templates: "" for `tokenizer.chat_template`, then each NAME of
  /// `tokenizer.chat_template.NAME`, in the file's order.
  static std::vector<std::string> names(const metadata_table& md) {
    std::vector<std::string> out;
    for (const chat_template_entry& e : chat_template_entries(md)) out.emplace_back(e.name);
    return out;
  }

  /**
   * Renders the template with `context`'s members as its variables (`messages`, `tools`, `documents`,
   * `add_generation_prompt`, `bos_token`, `eos_token`, and any other).
   * @param context a JSON object
   * @param options the clock, the limits, transformers' defaults
   * @return the text; the error Jinja2 raises there (a `raise_exception` message verbatim), or a limit
   */
  template_result<std::string> render(const json& context, const render_options& options = {}) const {
    std::string out;
    template_error err;
    if (!render(context, out, err, options)) return err;
    return out;
  }

  /// `render`, appending to `out`; false with `err` set on an error (`out` then holds part of the text).
  bool render(const json& context, std::string& out, template_error& err, const render_options& options = {}) const {
    return detail::render_chat_template(*t_, context, options, out, err);
  }

  /// The template's source, as it was given.
  const std::string& source() const noexcept { return t_->source; }

  /// The compiled template, for the engine's lower-level entry point (`detail::render_session`, with
  /// which pygguf renders Python objects without a `json` in between).
  const detail::compiled_template& compiled() const noexcept { return *t_; }

 private:
  explicit chat_template(std::shared_ptr<const detail::compiled_template> t) noexcept : t_(std::move(t)) {}

  std::shared_ptr<const detail::compiled_template> t_;
};

GGUF_END_NAMESPACE

#if !GGUF_CHAT_TEMPLATE_LIBRARY
#include "gguf/jinja/engine.hpp"
#endif

#endif  // GGUF_CHAT_TEMPLATE_HPP
