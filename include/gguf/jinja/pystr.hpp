#ifndef GGUF_JINJA_PYSTR_HPP
#define GGUF_JINJA_PYSTR_HPP

/**
 * @file
 * Python's str methods over UTF-8: what `{{ s.strip() }}`, `s.split()`, `|upper` and `|title` do in Jinja2,
 * whose strings are Python's. Lengths and indices count code points, as Python's do; case and character
 * classes are Python's own (`jinja/py_unicode_tables.hpp`, taken from CPython). Strings are valid UTF-8
 * (lone surrogates, which Python strings may hold, as their three-byte forms).
 */

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "gguf/detail/utf8.hpp"
#include "gguf/jinja/py_unicode_tables.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja::py {

// ---- code points --------------------------------------------------------------------------------

/// The code point at `s[i]` and its length in bytes (valid UTF-8 assumed; a stray byte is itself).
inline char32_t decode_at(std::string_view s, std::size_t i, std::size_t& len) noexcept {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    len = 1;
    return b0;
  }
  const auto cont = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k]) & 0x3F); };
  if ((b0 & 0xE0) == 0xC0 && i + 1 < s.size()) {
    len = 2;
    return (static_cast<char32_t>(b0 & 0x1F) << 6) | cont(1);
  }
  if ((b0 & 0xF0) == 0xE0 && i + 2 < s.size()) {
    len = 3;
    return (static_cast<char32_t>(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2);
  }
  if ((b0 & 0xF8) == 0xF0 && i + 3 < s.size()) {
    len = 4;
    return (static_cast<char32_t>(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
  }
  len = 1;
  return b0;
}

/// Appends the UTF-8 of `c` (surrogates included, as their three-byte forms).
inline void append(std::string& out, char32_t c) { gguf::detail::append_utf8(out, c); }

/// True when every byte of `s` is ASCII (then code points are bytes).
inline bool is_ascii(std::string_view s) noexcept {
  return std::ranges::all_of(s, [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

/**
 * True when `s` is UTF-8 the engine walks consistently: well-formed (RFC 3629), but for surrogates, which
 * a Python str may hold (`json.loads('"\\ud800"')`), kept in their three-byte form. What enters a
 * render (the template, the context's strings) is checked with it, so that every code point walk agrees.
 */
inline bool is_utf8(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    if (i + 8 <= s.size()) {  // ASCII 8 bytes at a time
      std::uint64_t x = 0;
      std::memcpy(&x, p + i, 8);
      if ((x & 0x8080808080808080u) == 0) {
        i += 8;
        continue;
      }
    }
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const gguf::detail::utf8_step st = gguf::detail::utf8_next(p + i, s.size() - i);
    if (st.valid) {
      i += st.length;
    } else if (p[i] == 0xED && i + 2 < s.size() && p[i + 1] >= 0xA0 && p[i + 1] <= 0xBF && (p[i + 2] & 0xC0) == 0x80) {
      i += 3;  // a surrogate
    } else {
      return false;
    }
  }
  return true;
}

/// Python's len(s): the code points.
inline std::size_t length(std::string_view s) noexcept {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

/// The byte offset of code point `k` (or s.size() past the end).
inline std::size_t offset_of(std::string_view s, std::size_t k) noexcept {
  std::size_t i = 0;
  while (k > 0 && i < s.size()) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    --k;
  }
  return i;
}

// ---- character classes and case ------------------------------------------------------------------

/// The `tables::flag` bits of `c`.
inline std::uint16_t flags(char32_t c) noexcept {
  const auto& runs = tables::flag_runs;
  std::size_t lo = 0, hi = std::size(runs);
  while (hi - lo > 1) {  // the last run starting at or before c
    const std::size_t mid = (lo + hi) / 2;
    if (runs[mid].first <= c) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return runs[lo].flags;
}

/// str.isspace() of one code point.
inline bool is_space(char32_t c) noexcept {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  return (flags(c) & tables::space) != 0;
}

/// The mapping of `c` in `map` (nullptr: unchanged).
template <std::size_t N>
const tables::case_mapping* find_mapping(const tables::case_mapping (&map)[N], char32_t c) noexcept {
  const auto* it = std::lower_bound(std::begin(map), std::end(map), static_cast<std::uint32_t>(c),
                                    [](const tables::case_mapping& m, std::uint32_t v) { return m.cp < v; });
  return it != std::end(map) && it->cp == c ? it : nullptr;
}

/// Appends `c` mapped by `map` (full mappings: one to three code points).
template <std::size_t N>
void append_mapped(std::string& out, const tables::case_mapping (&map)[N], char32_t c) {
  if (const auto* m = find_mapping(map, c)) {
    for (std::uint8_t k = 0; k < m->n; ++k) append(out, m->to[k]);
  } else {
    append(out, c);
  }
}

/// Whether U+03A3 at byte `i` of `s` is final (CPython's handle_capital_sigma).
inline bool final_sigma(std::string_view s, std::size_t i, std::size_t len) noexcept {
  // back: skip case-ignorable code points; the one before must be cased
  std::size_t j = i;
  bool cased_before = false;
  while (j > 0) {
    std::size_t k = j - 1;
    while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
    std::size_t l = 0;
    const std::uint16_t f = flags(decode_at(s, k, l));
    j = k;
    if (f & tables::case_ignorable) continue;
    cased_before = (f & tables::cased) != 0;
    break;
  }
  if (!cased_before) return false;
  for (std::size_t k = i + len; k < s.size();) {
    std::size_t l = 0;
    const std::uint16_t f = flags(decode_at(s, k, l));
    k += l;
    if (f & tables::case_ignorable) continue;
    return (f & tables::cased) == 0;
  }
  return true;
}

/// str.lower().
inline std::string lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const char32_t c = decode_at(s, i, len);
    if (c < 0x80) {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    } else if (c == 0x3A3) {
      append(out, final_sigma(s, i, len) ? 0x3C2 : 0x3C3);
    } else {
      append_mapped(out, tables::lower_map, c);
    }
    i += len;
  }
  return out;
}

/// str.upper().
inline std::string upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const char32_t c = decode_at(s, i, len);
    if (c < 0x80) {
      out += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    } else {
      append_mapped(out, tables::upper_map, c);
    }
    i += len;
  }
  return out;
}

/// str.title(): a cased character after a cased one lower-cased, any other title-cased.
inline std::string title(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool previous_cased = false;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const char32_t c = decode_at(s, i, len);
    if (previous_cased) {
      if (c == 0x3A3) {
        append(out, final_sigma(s, i, len) ? 0x3C2 : 0x3C3);
      } else {
        append_mapped(out, tables::lower_map, c);
      }
    } else {
      append_mapped(out, tables::title_map, c);
    }
    previous_cased = (flags(c) & tables::cased) != 0;
    i += len;
  }
  return out;
}

/// str.capitalize(): the first code point title-cased, the rest lower-cased.
inline std::string capitalize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const char32_t c = decode_at(s, i, len);
    if (i == 0) {
      append_mapped(out, tables::title_map, c);
    } else if (c == 0x3A3) {
      append(out, final_sigma(s, i, len) ? 0x3C2 : 0x3C3);
    } else {
      append_mapped(out, tables::lower_map, c);
    }
    i += len;
  }
  return out;
}

/// str.swapcase().
inline std::string swapcase(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const char32_t c = decode_at(s, i, len);
    const std::uint16_t f = flags(c);
    if (f & tables::upper) {
      if (c == 0x3A3) {
        append(out, final_sigma(s, i, len) ? 0x3C2 : 0x3C3);
      } else {
        append_mapped(out, tables::lower_map, c);
      }
    } else if (f & tables::lower) {
      append_mapped(out, tables::upper_map, c);
    } else {
      append(out, c);
    }
    i += len;
  }
  return out;
}

/// Which predicate `is_all` checks.
enum class predicate { space, alpha, alnum, decimal, digit, numeric, printable };

/// str.isspace(), isalpha(), ...: non-empty and every code point has the property (isprintable: empty is true).
inline bool is_all(std::string_view s, predicate p) noexcept {
  static constexpr std::uint16_t bit[] = {tables::space, tables::alpha,   tables::alnum,    tables::decimal,
                                          tables::digit, tables::numeric, tables::printable};
  if (s.empty()) return p == predicate::printable;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const char32_t c = decode_at(s, i, len);
    if ((flags(c) & bit[static_cast<int>(p)]) == 0) return false;
    i += len;
  }
  return true;
}

/// str.islower() (`want_upper` false) or str.isupper(): a cased code point, none of the other case.
inline bool is_case(std::string_view s, bool want_upper) noexcept {
  bool cased = false;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const std::uint16_t f = flags(decode_at(s, i, len));
    i += len;
    // the `title` flag is the one-character str.istitle(), true for Lu and Lt alike: Lt is title, not upper
    const bool titlecase = (f & tables::title) && !(f & tables::upper);
    if (titlecase || (f & (want_upper ? tables::lower : tables::upper))) return false;
    if (f & (want_upper ? tables::upper : tables::lower)) cased = true;
  }
  return cased;
}

/// str.istitle().
inline bool is_title(std::string_view s) noexcept {
  bool cased = false, previous_cased = false;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const std::uint16_t f = flags(decode_at(s, i, len));
    i += len;
    if ((f & tables::upper) || (f & tables::title)) {
      if (previous_cased) return false;
      previous_cased = cased = true;
    } else if (f & tables::lower) {
      if (!previous_cased) return false;
      previous_cased = cased = true;
    } else {
      previous_cased = false;
    }
  }
  return cased;
}

// ---- strip, split, find --------------------------------------------------------------------------

/// Which ends `strip` works on.
enum class side { both, left, right };

/// str.strip() / lstrip() / rstrip(): whitespace (Python's), or the code points of `chars` when given.
inline std::string_view strip(std::string_view s, side where, const std::string_view* chars = nullptr) noexcept {
  const auto stripped = [&](char32_t c) {
    if (!chars) return is_space(c);
    for (std::size_t k = 0; k < chars->size();) {
      std::size_t l = 0;
      if (decode_at(*chars, k, l) == c) return true;
      k += l;
    }
    return false;
  };
  std::size_t b = 0, e = s.size();
  if (where != side::right) {
    while (b < e) {
      std::size_t len = 0;
      if (!stripped(decode_at(s, b, len))) break;
      b += len;
    }
  }
  if (where != side::left) {
    while (e > b) {
      std::size_t k = e - 1;
      while (k > b && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
      std::size_t len = 0;
      if (!stripped(decode_at(s, k, len))) break;
      e = k;
    }
  }
  return s.substr(b, e - b);
}

/// Calls `part(piece)` for each piece of str.split(sep, maxsplit) (`sep` null: runs of whitespace).
template <class Part>
void split(std::string_view s, const std::string_view* sep, long long maxsplit, Part&& part) {
  if (sep) {
    std::size_t at = 0;
    for (long long n = 0; maxsplit < 0 || n < maxsplit; ++n) {
      const std::size_t k = s.find(*sep, at);
      if (k == std::string_view::npos) break;
      part(s.substr(at, k - at));
      at = k + sep->size();
    }
    part(s.substr(at));
    return;
  }
  std::size_t i = 0;
  long long n = 0;
  while (true) {
    while (i < s.size()) {  // skip whitespace
      std::size_t len = 0;
      if (!is_space(decode_at(s, i, len))) break;
      i += len;
    }
    if (i >= s.size()) return;
    if (maxsplit >= 0 && n >= maxsplit) {  // the rest, its trailing whitespace kept (as CPython)
      part(s.substr(i));
      return;
    }
    std::size_t j = i;
    while (j < s.size()) {
      std::size_t len = 0;
      if (is_space(decode_at(s, j, len))) break;
      j += len;
    }
    part(s.substr(i, j - i));
    ++n;
    i = j;
  }
}

/// Calls `part(piece)` for each piece of str.rsplit(sep, maxsplit), last piece first.
template <class Part>
void rsplit(std::string_view s, const std::string_view* sep, long long maxsplit, Part&& part) {
  if (sep) {
    std::size_t end = s.size();
    for (long long n = 0; maxsplit < 0 || n < maxsplit; ++n) {
      if (end < sep->size()) break;
      const std::size_t k = s.rfind(*sep, end - sep->size());
      if (k == std::string_view::npos) break;
      part(s.substr(k + sep->size(), end - k - sep->size()));
      end = k;
    }
    part(s.substr(0, end));
    return;
  }
  std::size_t e = s.size();
  long long n = 0;
  while (true) {
    while (e > 0) {  // skip whitespace back
      std::size_t k = e - 1;
      while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
      std::size_t len = 0;
      if (!is_space(decode_at(s, k, len))) break;
      e = k;
    }
    if (e == 0) return;
    if (maxsplit >= 0 && n >= maxsplit) {  // the rest, its leading whitespace kept
      part(s.substr(0, e));
      return;
    }
    std::size_t b = e;
    while (b > 0) {
      std::size_t k = b - 1;
      while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
      std::size_t len = 0;
      if (is_space(decode_at(s, k, len))) break;
      b = k;
    }
    part(s.substr(b, e - b));
    ++n;
    e = b;
  }
}

/// Whether the code point at byte `i` starts a line break of str.splitlines (its length in `len`).
inline bool line_break_at(std::string_view s, std::size_t i, std::size_t& len) noexcept {
  std::size_t l = 0;
  const char32_t c = decode_at(s, i, l);
  switch (c) {
    case '\r': len = i + 1 < s.size() && s[i + 1] == '\n' ? 2 : 1; return true;
    case '\n':
    case 0x0B:
    case 0x0C:
    case 0x1C:
    case 0x1D:
    case 0x1E:
    case 0x85:
    case 0x2028:
    case 0x2029: len = l; return true;
    default: return false;
  }
}

/// Calls `part(line)` for each line of str.splitlines(keepends).
template <class Part>
void splitlines(std::string_view s, bool keepends, Part&& part) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    if (line_break_at(s, i, len)) {
      part(s.substr(start, (keepends ? i + len : i) - start));
      i += len;
      start = i;
    } else {
      std::size_t l = 0;
      (void)decode_at(s, i, l);
      i += l;
    }
  }
  if (start < s.size()) part(s.substr(start));
}

/// str.replace(old, new, count): an empty `old` goes between every code point (and at both ends).
inline std::string replace(std::string_view s, std::string_view from, std::string_view to, long long count) {
  std::string out;
  if (from.empty()) {
    long long n = 0;
    for (std::size_t i = 0; i <= s.size();) {
      if (count < 0 || n < count) {
        out += to;
        ++n;
      }
      if (i == s.size()) break;
      std::size_t len = 0;
      (void)decode_at(s, i, len);
      out.append(s.substr(i, len));
      i += len;
    }
    return out;
  }
  std::size_t at = 0;
  for (long long n = 0; count < 0 || n < count; ++n) {
    const std::size_t k = s.find(from, at);
    if (k == std::string_view::npos) break;
    out.append(s.substr(at, k - at));
    out.append(to);
    at = k + from.size();
  }
  out.append(s.substr(at));
  return out;
}

/// The length in bytes of `replace(s, from, to, count)`, without making it (a limit is checked first).
inline std::uint64_t replaced_size(std::string_view s, std::string_view from, std::string_view to, long long count) {
  std::uint64_t n = 0;
  if (from.empty()) {
    n = 1;  // before every code point and at the end
    for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  } else {
    for (std::size_t at = s.find(from);
         at != std::string_view::npos && (count < 0 || n < static_cast<std::uint64_t>(count));
         at = s.find(from, at + from.size()))
      ++n;
  }
  if (count >= 0) n = std::min<std::uint64_t>(n, static_cast<std::uint64_t>(count));
  return s.size() + n * to.size() - n * from.size();
}

/// str.count(sub): non-overlapping occurrences (an empty `sub`: code points + 1).
inline std::size_t count(std::string_view s, std::string_view sub) noexcept {
  if (sub.empty()) return length(s) + 1;
  std::size_t n = 0;
  for (std::size_t k = s.find(sub); k != std::string_view::npos; k = s.find(sub, k + sub.size())) ++n;
  return n;
}

/// Python's repr of a str: single quotes unless it holds a ' and no ", escapes for the rest.
inline void append_repr(std::string& out, std::string_view s) {
  const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char q = dq ? '"' : '\'';
  out += q;
  static constexpr char hex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const char32_t c = decode_at(s, i, len);
    if (c == static_cast<char32_t>(q) || c == '\\') {  // NOLINT(bugprone-branch-clone): the quote and the backslash
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x20 && c != 0x7F && (c < 0x80 || (flags(c) & tables::printable))) {
      out.append(s.substr(i, len));
    } else if (c < 0x100) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else if (c < 0x10000) {
      out += "\\u";
      for (int k = 12; k >= 0; k -= 4) out += hex[(c >> k) & 15];
    } else {
      out += "\\U";
      for (int k = 28; k >= 0; k -= 4) out += hex[(c >> k) & 15];
    }
    i += len;
  }
  out += q;
}

}  // namespace jinja::py
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_PYSTR_HPP
