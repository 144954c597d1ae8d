#ifndef GGUF_TEXT_PYTHON_FLOAT_HPP
#define GGUF_TEXT_PYTHON_FLOAT_HPP

/**
 * @file
 * A double as Python's `repr(float)` writes it, which is how `json.dumps`, Jinja2's `{{ x }}` and
 * ggml's reference tools print numbers: what gguf-dump's JSON and the chat templates must match.
 */

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/**
 * Appends `d` as Python's `repr(float)`: the shortest digits that read back as `d`, positional for
 * decimal exponents -4..15 ("0.0001", "1e+16" beyond), with ".0" when positional and integral ("100.0"),
 * a two-digit exponent at least ("1e-05"); "nan", "inf" and "-inf" for the non-finite.
 * @param out where the text goes
 * @param d   any double
 */
inline void append_python_float(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);  // shortest: "d.ddde+XX"
  std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
  if (!s.empty() && s[0] == '-') {
    out += '-';
    s.remove_prefix(1);
  }
  const std::size_t e = s.find('e');
  char digits[32];
  std::size_t n = 0;
  for (const char c : s.substr(0, e))
    if (c != '.') digits[n++] = c;
  int exponent = 0;
  std::string_view ex = s.substr(e + 1);
  const bool negative = !ex.empty() && ex[0] == '-';
  if (!ex.empty() && (ex[0] == '+' || ex[0] == '-')) ex.remove_prefix(1);
  for (const char c : ex) exponent = exponent * 10 + (c - '0');
  if (negative) exponent = -exponent;
  while (n > 1 && digits[n - 1] == '0') --n;
  const std::string_view ds(digits, n);
  const int point = exponent + 1;  // the decimal point after this many digits
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-point), '0');
      out += ds;
    } else if (static_cast<std::size_t>(point) >= n) {
      out += ds;
      out.append(static_cast<std::size_t>(point) - n, '0');
      out += ".0";
    } else {
      out += ds.substr(0, static_cast<std::size_t>(point));
      out += '.';
      out += ds.substr(static_cast<std::size_t>(point));
    }
    return;
  }
  out += ds[0];
  if (n > 1) {
    out += '.';
    out += ds.substr(1);
  }
  out += 'e';
  out += exponent < 0 ? '-' : '+';
  const int a = exponent < 0 ? -exponent : exponent;
  if (a < 10) out += '0';
  out += std::to_string(a);
}

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_PYTHON_FLOAT_HPP
