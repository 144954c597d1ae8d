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
#include "gguf/jinja/render.hpp"
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

/**
 * A compiled chat template: immutable, cheap to copy (copies share it), safe to render from many
 * threads at once.
 */
class chat_template {
 public:
  /// The metadata key of a model's default template.
  static constexpr std::string_view default_key = "tokenizer.chat_template";

  /**
   * Compiles a template as Jinja2 compiles it in transformers' environment.
   * @param source the template
   * @param limits its size and the stack the compiler may use
   * @return the template; TemplateSyntaxError or TemplateAssertionError (an unknown filter or test) with
   *         its line, or a limit
   */
  static template_result<chat_template> compile(std::string_view source, const jinja::compile_limits& limits = {}) {
    auto p = std::make_shared<jinja::program>();
    template_error err;
    if (!jinja::compile(source, *p, err, limits)) return err;
    return chat_template(std::move(p));
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
    for (const auto& entry : md) {
      const std::string_view k = entry.key;
      if (k == default_key) {
        out.insert(out.begin(), std::string());
      } else if (k.size() > default_key.size() + 1 && k.substr(0, default_key.size()) == default_key &&
                 k[default_key.size()] == '.') {
        out.emplace_back(k.substr(default_key.size() + 1));
      }
    }
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
    std::tm now{};
    if (options.now) {
      now = *options.now;
    } else {
      const std::time_t t = std::time(nullptr);
#if defined(_WIN32)
      localtime_s(&now, &t);
#else
      localtime_r(&t, &now);
#endif
    }
    jinja::renderer r(*p_, options.limits, now);
    if (context.type() != json::kind::object) {
      err.type = template_error::kind::type;
      err.message = "the context must be a JSON object";
      return false;
    }
    for (const auto& [key, v] : context.members()) {
      jinja::value x;
      if (!convert(r, v, x, 0, err)) return false;
      r.bind(key, x);
    }
    if (options.transformers_defaults) {
      if (!context.find("tools")) r.bind("tools", jinja::value::none());
      if (!context.find("documents")) r.bind("documents", jinja::value::none());
      if (!context.find("add_generation_prompt")) r.bind("add_generation_prompt", jinja::value::boolean(false));
    }
    return r.run(out, err);
  }

  /// The template's source, as normalized for rendering (line ends as "\n", one trailing newline dropped).
  const jinja::program& program() const noexcept { return *p_; }

 private:
  explicit chat_template(std::shared_ptr<const jinja::program> p) noexcept : p_(std::move(p)) {}

  // the context's JSON as template values (strings point into the JSON)
  static bool convert(jinja::renderer& r, const json& j, jinja::value& out, std::uint32_t depth, template_error& err) {
    using jinja::value;
    if (depth > 512) {
      err.type = template_error::kind::limit;
      err.message = "the context is nested too deeply";
      return false;
    }
    const auto memory = [&] {
      err.type = template_error::kind::limit;
      err.message = "the context needs more memory than the render's limit";
      return false;
    };
    switch (j.type()) {
      case json::kind::null: out = value::none(); return true;
      case json::kind::boolean: out = value::boolean(j.as_bool()); return true;
      case json::kind::integer: out = value::integer(j.as_int()); return true;
      case json::kind::big_integer:
        out = value::string(j.as_string());
        out.type = jinja::vt::big_integer;
        return true;
      case json::kind::number: out = value::floating(j.as_double()); return true;
      case json::kind::string:
        if (j.as_string().size() > 0xFFFFFFFFu) return memory();
        out = value::string(j.as_string());
        return true;
      case json::kind::array: {
        const auto& items = j.items();
        if (!r.make_list(items.size(), out)) return memory();
        for (std::size_t k = 0; k < items.size(); ++k)
          if (!convert(r, items[k], out.list()->items[k], depth + 1, err)) return false;
        return true;
      }
      case json::kind::object: {
        const auto& members = j.members();
        if (!r.make_dict(members.size(), out)) return memory();
        for (const auto& [k, v] : members) {
          value x;
          if (!convert(r, v, x, depth + 1, err)) return false;
          if (!r.dict_append(out.dict(), value::string(k), x)) return memory();
        }
        return true;
      }
    }
    return true;
  }

  std::shared_ptr<const jinja::program> p_;
};

GGUF_END_NAMESPACE

#endif  // GGUF_CHAT_TEMPLATE_HPP
