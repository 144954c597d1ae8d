#ifndef GGUF_JINJA_OPTIONS_HPP
#define GGUF_JINJA_OPTIONS_HPP

/**
 * @file
 * What compiling or rendering a template may cost, and how either fails: the small part of the engine
 * that its callers see (`<gguf/chat_template.hpp>` includes this, not the engine, when the engine comes
 * compiled from gguf::chat).
 */

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

/// Why a template failed: the kind of Python exception Jinja2 raises there, its message and line.
struct error_info {
  /// Which exception Jinja2 raises (the names are Python's).
  enum class kind : std::uint8_t {
    none,           ///< no error
    syntax,         ///< TemplateSyntaxError (compile time)
    assertion,      ///< TemplateAssertionError (compile time: an unknown filter or test)
    undefined,      ///< UndefinedError: an Undefined used where a value is needed
    type,           ///< TypeError
    value,          ///< ValueError
    index,          ///< IndexError
    key,            ///< KeyError
    zero_division,  ///< ZeroDivisionError
    overflow,       ///< OverflowError (the sandbox's range limit, integer overflow)
    security,       ///< SecurityError (the immutable sandbox)
    raised,         ///< TemplateError from raise_exception(message)
    runtime,        ///< TemplateRuntimeError
    unsupported,    ///< what this engine does not do (include, import, extends, random, ...)
    limit,          ///< a render limit (output, memory, steps, depth, time)
  };

  kind type = kind::none;  ///< which
  std::string message;     ///< the message (raise_exception's verbatim)
  std::uint32_t line = 0;  ///< the template line, 0 when unknown

  /// The Python exception's name.
  const char* name() const noexcept {
    switch (type) {
      case kind::none: return "";
      case kind::syntax: return "TemplateSyntaxError";
      case kind::assertion: return "TemplateAssertionError";
      case kind::undefined: return "UndefinedError";
      case kind::type: return "TypeError";
      case kind::value: return "ValueError";
      case kind::index: return "IndexError";
      case kind::key: return "KeyError";
      case kind::zero_division: return "ZeroDivisionError";
      case kind::overflow: return "OverflowError";
      case kind::security: return "SecurityError";
      case kind::raised: return "TemplateError";
      case kind::runtime: return "TemplateRuntimeError";
      case kind::unsupported: return "unsupported";
      case kind::limit: return "limit";
    }
    return "";
  }
};

/// What compiling one template may cost (a chat template is a few KB: the largest known is 17 KB).
struct compile_limits {
  std::size_t max_source = std::size_t{1} << 20;   ///< bytes of source
  std::size_t max_stack = std::size_t{256} << 10;  ///< bytes of stack the parser and the checks may use
};

/// What one render may cost.
struct limits {
  std::size_t max_output = std::size_t{64} << 20;   ///< bytes of text it writes
  std::size_t max_memory = std::size_t{256} << 20;  ///< bytes of values it makes
  /// loop iterations, calls, items a filter goes through, 16 items of a list made, 4 KiB of text made
  std::uint64_t max_steps = 5'000'000;
  std::uint32_t max_depth = 200;  ///< nested macro calls (Python's recursion limit stops Jinja2 at 197)
  std::size_t max_stack = std::size_t{512} << 10;  ///< bytes of the thread's stack the render may use
  std::chrono::milliseconds max_time{2000};        ///< wall-clock time
};

}  // namespace jinja
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_OPTIONS_HPP
