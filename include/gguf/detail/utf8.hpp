#ifndef GGUF_DETAIL_UTF8_HPP
#define GGUF_DETAIL_UTF8_HPP

#include <cstddef>
#include <cstdint>
#include <string>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace detail {

/** One step through UTF-8 text: a whole sequence, or an ill-formed part to replace with U+FFFD. */
struct utf8_step {
  std::size_t length;  ///< bytes this step covers (1 to 4)
  bool valid;          ///< a well-formed sequence; otherwise a maximal ill-formed subpart
};

/**
 * The step at p[0..n), n > 0. Well-formed means RFC 3629: no overlongs, no surrogates, nothing above
 * U+10FFFF. An ill-formed step is the lead byte plus the continuation bytes still valid after it (the
 * "maximal subpart" of Unicode §3.9, which Python's decoder and json.dumps replace with one U+FFFD).
 */
constexpr utf8_step utf8_next(const unsigned char* p, std::size_t n) noexcept {
  const unsigned c = p[0];
  if (c < 0x80) return {1, true};
  std::size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the second byte's range; later bytes are plain continuations
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return {1, false};  // a byte that never starts a sequence
  }
  std::size_t k = 1;
  while (k < len && k < n && p[k] >= (k == 1 ? lo : 0x80u) && p[k] <= (k == 1 ? hi : 0xBFu)) ++k;
  return {k, k == len};
}

/**
 * Appends the UTF-8 of `cp` to `out`: any value up to U+10FFFF, surrogates included (ED A0 80 for
 * U+D800, as Python and llama.cpp encode them); above U+10FFFF it appends nothing and returns false.
 */
inline bool append_utf8(std::string& out, char32_t cp) {
  const auto byte = [](std::uint32_t v) { return static_cast<char>(static_cast<unsigned char>(v)); };
  const std::uint32_t c = cp;
  if (c <= 0x7F) {
    out.push_back(byte(c));
  } else if (c <= 0x7FF) {
    const char s[2] = {byte(0xC0 | (c >> 6)), byte(0x80 | (c & 0x3F))};
    out.append(s, 2);
  } else if (c <= 0xFFFF) {
    const char s[3] = {byte(0xE0 | (c >> 12)), byte(0x80 | ((c >> 6) & 0x3F)), byte(0x80 | (c & 0x3F))};
    out.append(s, 3);
  } else if (c <= 0x10FFFF) {
    const char s[4] = {byte(0xF0 | (c >> 18)), byte(0x80 | ((c >> 12) & 0x3F)), byte(0x80 | ((c >> 6) & 0x3F)),
                       byte(0x80 | (c & 0x3F))};
    out.append(s, 4);
  } else {
    return false;
  }
  return true;
}

}  // namespace detail
GGUF_END_NAMESPACE

#endif  // GGUF_DETAIL_UTF8_HPP
