// What happens to GGUF files on their way to a user, as functions on bytes: the damage the hostile-
// input tests and the fuzz seeds apply to good files.
#ifndef GGUF_TESTS_DAMAGE_HPP
#define GGUF_TESTS_DAMAGE_HPP

#include <gguf/detail/utf8.hpp>

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
    const gguf::detail::utf8_step step = gguf::detail::utf8_next(p + i, in.size() - i);
    if (step.valid) {
      out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(i),
                 in.begin() + static_cast<std::ptrdiff_t>(i + step.length));
    } else {
      out.insert(out.end(), {std::byte{0xEF}, std::byte{0xBF}, std::byte{0xBD}});
    }
    i += step.length;
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
inline bytes truncated(const bytes& in, std::size_t n) {
  return bytes(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
}

/** A download into a preallocated file that stopped at byte `from`: the rest is zeros. */
inline bytes zero_tail(const bytes& in, std::size_t from) {
  bytes out = in;
  std::fill(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(), std::byte{0});
  return out;
}

}  // namespace test::damage

#endif  // GGUF_TESTS_DAMAGE_HPP
