#ifndef GGUF_PRINT_HPP
#define GGUF_PRINT_HPP

#include "gguf/version.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <version>

#include "gguf/format/ggml_types.hpp"
#include "gguf/format/tensor_info.hpp"
#include "gguf/format/value.hpp"
#include "gguf/result.hpp"

/// 1 when the standard library has `<format>`: gguf's types then have `std::formatter`s.
#if defined(__cpp_lib_format) && __cpp_lib_format >= 201907L
#include <format>
#define GGUF_HAS_STD_FORMAT 1
#else
#define GGUF_HAS_STD_FORMAT 0
#endif

/**
 * @file
 * Printing the types people print: `operator<<` for ggml_type, value_type, errc, error, value_view,
 * tensor_shape and tensor_info, `to_string` for values and shapes, and `std::formatter`s for the same
 * types where the standard library has `<format>` (GGUF_HAS_STD_FORMAT: GCC 13, Clang 17 with libc++,
 * MSVC 2019 16.10 and later), so `std::format("{} {}", t.type, t.shape())` works there.
 */

GGUF_BEGIN_NAMESPACE

/**
 * A shape as text, outermost first: "[32000, 4096]"; "[]" for rank 0.
 * @param s the shape
 * @return the text
 */
inline std::string to_string(const tensor_shape& s) {
  std::string out = "[";
  for (std::uint32_t i = 0; i < s.rank(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  out += ']';
  return out;
}

namespace detail {
// The shortest digits that read back as the same float (or double): 1e-05f prints "1e-05".
template <class F>
inline void append_number(std::string& out, F x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

inline void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", u);
      out += esc;
    } else {
      out += c;
    }
  }
  out += '"';
}

inline void append_value(std::string& out, const value_view& v, std::uint64_t max_items, bool quote_strings) {
  switch (v.type()) {
    case value_type::uint8: out += std::to_string(*v.get<std::uint8_t>()); break;
    case value_type::int8: out += std::to_string(*v.get<std::int8_t>()); break;
    case value_type::uint16: out += std::to_string(*v.get<std::uint16_t>()); break;
    case value_type::int16: out += std::to_string(*v.get<std::int16_t>()); break;
    case value_type::uint32: out += std::to_string(*v.get<std::uint32_t>()); break;
    case value_type::int32: out += std::to_string(*v.get<std::int32_t>()); break;
    case value_type::uint64: out += std::to_string(*v.get<std::uint64_t>()); break;
    case value_type::int64: out += std::to_string(*v.get<std::int64_t>()); break;
    case value_type::float32: append_number(out, *v.get<float>()); break;
    case value_type::float64: append_number(out, *v.get<double>()); break;
    case value_type::boolean: out += *v.get<bool>() ? "true" : "false"; break;
    case value_type::string:
      if (quote_strings) {
        append_quoted(out, *v.get<std::string_view>());
      } else {
        out += *v.get<std::string_view>();
      }
      break;
    case value_type::array: {
      const array_view a = *v.get<array_view>();
      out += '[';
      std::uint64_t shown = 0;
      for (const value_view item : a) {
        if (shown == max_items) break;
        if (shown++) out += ", ";
        append_value(out, item, max_items, true);
      }
      if (shown < a.size()) out += shown ? ", ..." : "...";
      out += ']';
      break;
    }
  }
}
}  // namespace detail

/**
 * A metadata value as text: a number as C++ writes it (floats with the shortest digits that read back
 * the same), `true`/`false`, a string as its text, an array as `[item, item, ...]` with string items
 * quoted ("\"", "\\" and control bytes escaped).
 * @param v         the value
 * @param max_items items shown per array (nested ones included) before "..."; all by default
 * @return the text
 */
inline std::string to_string(const value_view& v, std::uint64_t max_items = std::numeric_limits<std::uint64_t>::max()) {
  std::string out;
  detail::append_value(out, v, max_items, false);
  return out;
}

/** Writes ggml's name of the type ("q4_K"). */
inline std::ostream& operator<<(std::ostream& os, ggml_type t) { return os << to_string(t); }
/** Writes the value type's name ("uint32"). */
inline std::ostream& operator<<(std::ostream& os, value_type t) { return os << to_string(t); }
/** Writes the code's message (`message(code)`). */
inline std::ostream& operator<<(std::ostream& os, errc code) { return os << message(code); }
/** Writes `to_string(e)`: the error as one line. */
inline std::ostream& operator<<(std::ostream& os, const error& e) { return os << to_string(e); }
/** Writes `to_string(v)`: every item of an array. */
inline std::ostream& operator<<(std::ostream& os, const value_view& v) { return os << to_string(v); }
/** Writes the shape, outermost first: "[32000, 4096]". */
inline std::ostream& operator<<(std::ostream& os, const tensor_shape& s) { return os << to_string(s); }
/** Writes the tensor's name, type and shape: "token_embd.weight q4_K [32000, 4096]". */
inline std::ostream& operator<<(std::ostream& os, const tensor_info& t) {
  return os << t.name << ' ' << t.type << ' ' << t.shape();
}

GGUF_END_NAMESPACE

#if GGUF_HAS_STD_FORMAT
/// @cond internal
GGUF_BEGIN_NAMESPACE
namespace detail {
/// A formatter that formats a type through its `to_string`, with the options of a string.
template <class T>
struct string_formatter : std::formatter<std::string_view, char> {
  template <class FormatContext>
  auto format(const T& value, FormatContext& ctx) const {
    const auto text = ::gguf::to_string(value);
    return std::formatter<std::string_view, char>::format(std::string_view(text), ctx);
  }
};
}  // namespace detail
GGUF_END_NAMESPACE

template <>
struct std::formatter<gguf::ggml_type, char> : gguf::detail::string_formatter<gguf::ggml_type> {};
template <>
struct std::formatter<gguf::value_type, char> : gguf::detail::string_formatter<gguf::value_type> {};
template <>
struct std::formatter<gguf::error, char> : gguf::detail::string_formatter<gguf::error> {};
template <>
struct std::formatter<gguf::value_view, char> : gguf::detail::string_formatter<gguf::value_view> {};
template <>
struct std::formatter<gguf::tensor_shape, char> : gguf::detail::string_formatter<gguf::tensor_shape> {};
/// @endcond
#endif

#endif  // GGUF_PRINT_HPP
