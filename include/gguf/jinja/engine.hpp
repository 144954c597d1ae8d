#ifndef GGUF_JINJA_ENGINE_HPP
#define GGUF_JINJA_ENGINE_HPP

/**
 * @file
 * The engine behind `gguf::chat_template`: its two entry points, defined over the lexer, parser,
 * compiler checks and renderer of `jinja/`. <gguf/chat_template.hpp> includes this header (header-only,
 * the default); gguf::chat compiles it once (src/chat/chat_template.cpp) for programs that define
 * GGUF_CHAT_TEMPLATE_LIBRARY=1 and so compile only the API.
 */

#include <ctime>
#include <memory>
#include <string>
#include <string_view>

#include "gguf/chat_template.hpp"
#include "gguf/jinja/render.hpp"

GGUF_BEGIN_NAMESPACE
namespace detail {
inline namespace GGUF_CHAT_ENGINE_NAMESPACE {

// A compiled template: what its users see, then the program.
struct compiled_program : compiled_template {
  jinja::program program;
};

// the context's JSON as template values (strings point into the JSON)
// NOLINTNEXTLINE(misc-definitions-in-headers): inline, or in gguf::chat's one file
GGUF_CHAT_ENGINE_INLINE bool convert_context(jinja::renderer& r, const json& j, jinja::value& out, std::uint32_t depth,
                                             jinja::error_info& err) {
  using jinja::value;
  if (depth > 512) {
    err.type = jinja::error_info::kind::limit;
    err.message = "the context is nested too deeply";
    return false;
  }
  const auto memory = [&] {
    err.type = jinja::error_info::kind::limit;
    err.message = "the context needs more memory than the render's limit";
    return false;
  };
  const auto text = [&](std::string_view s) {  // what a render walks by code point must be UTF-8
    if (s.size() > 0xFFFFFFFFu) return memory();
    if (jinja::py::is_utf8(s)) return true;
    err.type = jinja::error_info::kind::value;
    err.message = "a string of the context is not valid UTF-8";
    return false;
  };
  switch (j.type()) {
    case json::kind::null: out = value::none(); return true;
    case json::kind::boolean: out = value::boolean(j.as_bool()); return true;
    case json::kind::integer: out = value::integer(j.as_int()); return true;
    case json::kind::big_integer:
      if (!text(j.as_string())) return false;
      out = value::string(j.as_string());
      out.type = jinja::vt::big_integer;
      return true;
    case json::kind::number: out = value::floating(j.as_double()); return true;
    case json::kind::string:
      if (!text(j.as_string())) return false;
      out = value::string(j.as_string());
      return true;
    case json::kind::array: {
      const auto& items = j.items();
      if (!r.make_list(items.size(), out)) return memory();
      for (std::size_t k = 0; k < items.size(); ++k)
        if (!convert_context(r, items[k], out.list()->items[k], depth + 1, err)) return false;
      return true;
    }
    case json::kind::object: {
      const auto& members = j.members();
      if (!r.make_dict(members.size(), out)) return memory();
      for (const auto& [k, v] : members) {
        value x;
        if (!text(k) || !convert_context(r, v, x, depth + 1, err)) return false;
        // a key twice (a json built in code may have one) keeps its first place and its last value
        if (!r.dict_set(out.dict(), value::string(k), x)) return memory();
      }
      return true;
    }
  }
  return true;
}

// NOLINTNEXTLINE(misc-definitions-in-headers): inline, or in gguf::chat's one file
GGUF_CHAT_ENGINE_INLINE std::shared_ptr<const compiled_template> compile_chat_template(
    std::string_view source, const jinja::compile_limits& limits, jinja::error_info& err) {
  auto t = std::make_shared<compiled_program>();
  if (!jinja::compile(source, t->program, err, limits)) return nullptr;
  t->source = std::string(source);
  return t;
}

/// The symbol of a variable's name in `t`, or -1 for a name the template never uses (whose value it
/// cannot read: a caller need not make it). For render_session's renderer's `bind_symbol`.
inline std::int64_t variable_symbol(const compiled_template& t, std::string_view name) noexcept {
  return static_cast<const compiled_program&>(t)  // NOLINT(cppcoreguidelines-pro-type-static-cast-downcast)
      .program.symbols.find(name);
}

/**
 * One render of a compiled template whose variables the caller makes itself, on the renderer, with its
 * `make_*` and binds with `bind`: how a caller with values of its own (pygguf's Python objects) renders
 * without a `json` in between. Header-only: a program that renders through it compiles the engine.
 */
class render_session {
 public:
  /// A render of `t` (made by compile_chat_template) with `options`; failures are reported in `err`,
  /// which must outlive the session. `workspace`, if given, lends it its buffers (see render_workspace).
  render_session(const compiled_template& t, const render_options& options, jinja::error_info& err,
                 jinja::render_workspace* workspace = nullptr)
      : r_(static_cast<const compiled_program&>(t).program,  // NOLINT(cppcoreguidelines-pro-type-static-cast-downcast)
           options.limits, options.now ? &*options.now : nullptr, err, workspace),
        err_(err) {}

  /// The renderer, to make and bind the variables on.
  jinja::renderer& renderer() noexcept { return r_; }

  /// Renders into `out` (appended); false with the error set, by the render or by making the variables.
  bool run(std::string& out) {
    if (err_.type != jinja::error_info::kind::none) return false;
    if (out.capacity() - out.size() < 2048) out.reserve(out.size() + 2048);  // a prompt's usual size, grown once
    return r_.run(out);
  }

 private:
  jinja::renderer r_;
  jinja::error_info& err_;
};

// NOLINTNEXTLINE(misc-definitions-in-headers): inline, or in gguf::chat's one file
GGUF_CHAT_ENGINE_INLINE bool render_chat_template(const compiled_template& t, const json& context,
                                                  const render_options& options, std::string& out,
                                                  jinja::error_info& err) {
  if (context.type() != json::kind::object) {
    err.type = jinja::error_info::kind::type;
    err.message = "the context must be a JSON object";
    return false;
  }
  render_session session(t, options, err);
  jinja::renderer& r = session.renderer();
  for (const auto& [key, v] : context.members()) {
    jinja::value x;
    if (!convert_context(r, v, x, 0, err)) return false;
    r.bind(key, x);
  }
  if (options.transformers_defaults) {
    if (!context.find("tools")) r.bind("tools", jinja::value::none());
    if (!context.find("documents")) r.bind("documents", jinja::value::none());
    if (!context.find("add_generation_prompt")) r.bind("add_generation_prompt", jinja::value::boolean(false));
  }
  return session.run(out);
}

}  // namespace GGUF_CHAT_ENGINE_NAMESPACE
}  // namespace detail
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_ENGINE_HPP
