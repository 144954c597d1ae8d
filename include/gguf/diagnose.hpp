#ifndef GGUF_DIAGNOSE_HPP
#define GGUF_DIAGNOSE_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <utility>

#include "gguf/detail/utf8.hpp"
#include "gguf/platform/mapped_file.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * What probably happened to a file the parser refused. The error says which field failed; someone
 * holding a broken download wants to know why. The damage real files meet leaves fingerprints:
 *
 * - `text_replacement`: opened and saved by a text tool, which replaced every byte that is not UTF-8
 *   with U+FFFD (EF BF BD) and so shifted every later offset. The bytes up to the failure are then
 *   valid UTF-8 with replacement characters in them, which a real header (floats, counts) never is.
 * - `crlf`: a text-mode copy (FTP ASCII mode, git autocrlf) turned every LF byte into CR LF.
 * - `zero_tail`: the file is zeros from the failing field (or before it) to its end: a download into a
 *   preallocated file that stopped, or a copy that ran out of space.
 * - `truncated`: the file ends before the data it declares.
 *
 * These are likely causes, not proofs: a diagnosis is a hint for the person reading the error.
 */
enum class damage : std::uint8_t { none, text_replacement, crlf, zero_tail, truncated };

/** What `diagnose` found: the kind of damage, where it starts and how much of it there is. */
struct diagnosis {
  damage kind = damage::none;  ///< the likely cause, or `none`
  std::uint64_t offset = 0;    ///< where the damage starts (the file size for `truncated`)
  std::uint64_t count = 0;     ///< replacement characters, CR LF pairs, or zero bytes (0 for `truncated`)
  /// True when a cause was found (`kind != damage::none`).
  explicit operator bool() const noexcept { return kind != damage::none; }
};

/**
 * The likely cause of a parse error, from the bytes around it: see `damage` for the fingerprints.
 * @param bytes the bytes the parser refused, the whole file
 * @param e     the error `parse` returned for them
 * @return the damage found; `damage::none` when nothing fits, for no error and for `io_error`
 */
inline diagnosis diagnose(std::span<const std::byte> bytes, const error& e) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::uint64_t size = bytes.size();
  if (!e || e.code == errc::io_error || !e.has_offset()) return {};  // not a refusal of these bytes
  // The bytes the parser went through, plus a little: a failing field may straddle the damage.
  const std::uint64_t seen = std::min<std::uint64_t>(size, e.offset + 64);

  // Saved as text: valid UTF-8 up to there, with replacement characters in it.
  {
    std::uint64_t i = 0, replaced = 0, first = 0;
    bool valid = true;
    while (i < seen) {
      const detail::utf8_step step = detail::utf8_next(p + i, static_cast<std::size_t>(size - i));
      if (!step.valid) {
        valid = false;
        break;
      }
      if (step.length == 3 && p[i] == 0xEF && p[i + 1] == 0xBF && p[i + 2] == 0xBD && replaced++ == 0) first = i;
      i += step.length;
    }
    if (valid && replaced) return {damage::text_replacement, first, replaced};
  }

  // CR LF line ends: every LF seen follows a CR.
  {
    std::uint64_t pairs = 0, first = 0;
    bool lone_lf = false;
    for (std::uint64_t i = 0; i < seen && !lone_lf; ++i) {
      if (p[i] != '\n') continue;
      if (i == 0 || p[i - 1] != '\r')
        lone_lf = true;
      else if (pairs++ == 0)
        first = i - 1;
    }
    if (!lone_lf && pairs) return {damage::crlf, first, pairs};
  }

  // A tail of zeros that starts at or before the failing field (a field that merely ends in zero
  // bytes, like a version 4, is not one).
  {
    std::uint64_t z = size;
    while (z > 0 && p[z - 1] == 0) --z;
    if (size - z >= 16 && z <= e.offset) return {damage::zero_tail, z, size - z};
  }

  if (e.code == errc::truncated || e.code == errc::out_of_bounds) return {damage::truncated, size, 0};
  return {};
}

/**
 * The error as one line for a person: `to_string(e)`, then the likely cause when `diagnose` finds one,
 * as in "tensor data extends past the end of the file (at byte 912); the file ends at byte 4096, before
 * the data it declares: a truncated download?".
 * @param bytes the bytes the parser refused, the whole file
 * @param e     the error `parse` returned for them
 * @return the message, in English
 */
inline std::string explain(std::span<const std::byte> bytes, const error& e) {
  std::string s = to_string(e);
  const diagnosis d = diagnose(bytes, e);
  // Each cause's sentence takes two numbers, in the order its format names them.
  const char* format = nullptr;
  std::uint64_t first = d.count, second = d.offset;
  switch (d.kind) {
    case damage::none: return s;
    case damage::text_replacement:
      format =
          "; the file looks saved by a text tool: it is valid UTF-8 up to there with %llu U+FFFD "
          "replacement characters, the first at byte %llu, and each one shifts every later offset";
      break;
    case damage::crlf:
      format =
          "; the file looks copied in text mode: every LF byte up to there follows a CR (%llu pairs, the "
          "first at byte %llu), and each CR shifts every later offset";
      break;
    case damage::zero_tail:
      format =
          "; the file is all zeros from byte %llu to its end (%llu bytes): an incomplete download into a "
          "preallocated file?";
      std::swap(first, second);
      break;
    case damage::truncated:
      if (d.offset == 0) return s + "; the file is empty";
      // (printf ignores an extra number)
      format = e.needed > d.offset
                   ? "; the file ends at byte %llu, before the data it declares (it needs %llu bytes): a truncated "
                     "download?"
                   : "; the file ends at byte %llu, before the data it declares: a truncated download?";
      first = d.offset;
      second = e.needed;
      break;
  }
  char buf[320];
  std::snprintf(buf, sizeof buf, format, static_cast<unsigned long long>(first),
                static_cast<unsigned long long>(second));
  return s + buf;
}

/**
 * `explain` for a file that failed to open: maps `path` again to look at the damage, so a caller of
 * `gguf::open` needs nothing but the path and the error. An I/O error is explained as it is.
 * @param path the path given to `open`
 * @param e    the error `open` returned
 * @return one line for a person, as `explain(bytes, e)`
 */
inline std::string explain(const std::filesystem::path& path, const error& e) {
  if (!e || e.code == errc::io_error || !e.has_offset()) return to_string(e);
  const result<mapped_file> m = mapped_file::open(path);
  return m ? explain(m->bytes(), e) : to_string(e);
}

GGUF_END_NAMESPACE

#endif  // GGUF_DIAGNOSE_HPP
