// What happens to GGUF files on their way to a user, as functions on bytes: the damage the hostile-
// input tests and the fuzz seeds apply to good files.
#ifndef GGUF_TESTS_DAMAGE_HPP
#define GGUF_TESTS_DAMAGE_HPP

#include <gguf/diagnose.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace test::damage {

using bytes = std::vector<std::byte>;

/**
 * Opened as UTF-8 text and saved again (an editor, `str(data, errors="replace")`, a copy-paste):
 * every maximal ill-formed subsequence becomes U+FFFD, EF BF BD, as Unicode §3.9 and Python do.
 */
inline bytes text_replaced(const bytes& in) {
  bytes out;
  out.reserve(in.size() + in.size() / 2);
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  std::size_t i = 0;
  while (i < in.size()) {
    if (const std::size_t len = gguf::detail::utf8_sequence(p + i, in.size() - i)) {
      out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(i), in.begin() + static_cast<std::ptrdiff_t>(i + len));
      i += len;
      continue;
    }
    // The maximal subpart: a lead byte and the continuation bytes that are still valid after it.
    std::size_t skip = 1;
    const unsigned c = p[i];
    const std::size_t need = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
    for (std::size_t k = 1; k < need && i + k < in.size(); ++k) {
      unsigned lo = 0x80, hi = 0xBF;
      if (k == 1 && c == 0xE0) lo = 0xA0;
      if (k == 1 && c == 0xED) hi = 0x9F;
      if (k == 1 && c == 0xF0) lo = 0x90;
      if (k == 1 && c == 0xF4) hi = 0x8F;
      if (p[i + k] < lo || p[i + k] > hi) break;
      skip = k + 1;
    }
    out.insert(out.end(), {std::byte{0xEF}, std::byte{0xBF}, std::byte{0xBD}});
    i += skip;
  }
  return out;
}

/** Copied in text mode to Windows (FTP ASCII, git autocrlf): every LF becomes CR LF. */
inline bytes crlf(const bytes& in) {
  bytes out;
  for (std::byte b : in) {
    if (b == std::byte{'\n'}) out.push_back(std::byte{'\r'});
    out.push_back(b);
  }
  return out;
}

/** An interrupted download: the first `n` bytes. */
inline bytes truncated(const bytes& in, std::size_t n) { return bytes(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n)); }

/** A download into a preallocated file that stopped at byte `from`: the rest is zeros. */
inline bytes zero_tail(const bytes& in, std::size_t from) {
  bytes out = in;
  std::fill(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(), std::byte{0});
  return out;
}

}  // namespace test::damage

#endif  // GGUF_TESTS_DAMAGE_HPP
