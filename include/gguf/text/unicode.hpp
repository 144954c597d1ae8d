#ifndef GGUF_TEXT_UNICODE_HPP
#define GGUF_TEXT_UNICODE_HPP

/**
 * @file
 * The Unicode data of llama.cpp's tokenizers, equal to its src/unicode.cpp for every code point:
 * category flags (`unicode_cpt_flags_from_cpt`), case maps (`unicode_tolower`, and the upper-case map of
 * its data), the one-code-point NFD map (`unicode_cpts_normalize_nfd`) and GPT-2's byte-to-code-point
 * map (`unicode_byte_to_utf8` / `unicode_utf8_to_byte`). The data is Unicode 15.1, as llama.cpp's; see
 * unicode_tables.hpp and src/generate/unicode_tables.py.
 */

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gguf/text/unicode_tables.hpp"
#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/**
 * A code point's flags, bit for bit llama.cpp's `unicode_cpt_flags`: one category bit (or undefined),
 * and four helper bits. The helper bits are llama.cpp's, quirks included: is_lowercase and is_uppercase
 * mark the *results* of its case maps ('a' is lowercase because 'A' maps to it; U+00AA is not), and
 * is_nfd marks the results of its NFD map, and U+0000.
 */
struct codepoint_flags {
  static constexpr std::uint16_t undefined = 0x0001;        ///< unassigned (Cn): no category
  static constexpr std::uint16_t number = 0x0002;           ///< \\p{N}
  static constexpr std::uint16_t letter = 0x0004;           ///< \\p{L}
  static constexpr std::uint16_t separator = 0x0008;        ///< \\p{Z}
  static constexpr std::uint16_t accent_mark = 0x0010;      ///< \\p{M}
  static constexpr std::uint16_t punctuation = 0x0020;      ///< \\p{P}
  static constexpr std::uint16_t symbol = 0x0040;           ///< \\p{S}
  static constexpr std::uint16_t control = 0x0080;          ///< \\p{C} but Cn: Cc, Cf, Co and Cs
  static constexpr std::uint16_t mask_categories = 0x00FF;  ///< the category bits above
  static constexpr std::uint16_t whitespace = 0x0100;       ///< regex \\s (White_Space)
  static constexpr std::uint16_t lowercase = 0x0200;        ///< the lower case of some code point
  static constexpr std::uint16_t uppercase = 0x0400;        ///< the upper case of some code point
  static constexpr std::uint16_t nfd = 0x0800;              ///< the NFD of some code point, or U+0000

  /// The bit set. Zero (no bit, not even undefined) is what llama.cpp's splitters see past a text's end.
  std::uint16_t bits = 0;

  /// No flags (as llama.cpp's `unicode_cpt_flags{}`).
  constexpr codepoint_flags() noexcept = default;
  /// The flags with these bits.
  constexpr explicit codepoint_flags(std::uint16_t b) noexcept : bits(b) {}

  /// The bits as llama.cpp's `as_uint()` gives them.
  constexpr std::uint16_t as_uint() const noexcept { return bits; }
  /// The category bits only (llama.cpp's `category_flag()`).
  constexpr std::uint16_t category() const noexcept { return bits & mask_categories; }

  /// Unassigned.
  constexpr bool is_undefined() const noexcept { return (bits & undefined) != 0; }
  /// \\p{N}.
  constexpr bool is_number() const noexcept { return (bits & number) != 0; }
  /// \\p{L}.
  constexpr bool is_letter() const noexcept { return (bits & letter) != 0; }
  /// \\p{Z}.
  constexpr bool is_separator() const noexcept { return (bits & separator) != 0; }
  /// \\p{M}.
  constexpr bool is_accent_mark() const noexcept { return (bits & accent_mark) != 0; }
  /// \\p{P}.
  constexpr bool is_punctuation() const noexcept { return (bits & punctuation) != 0; }
  /// \\p{S}.
  constexpr bool is_symbol() const noexcept { return (bits & symbol) != 0; }
  /// \\p{C} but unassigned.
  constexpr bool is_control() const noexcept { return (bits & control) != 0; }
  /// In llama.cpp's whitespace set (regex \\s): U+0009..U+000D, U+0020, U+0085, U+00A0, U+1680,
  /// U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
  constexpr bool is_whitespace() const noexcept { return (bits & whitespace) != 0; }
  /// The lower case of some code point (see the struct comment).
  constexpr bool is_lowercase() const noexcept { return (bits & lowercase) != 0; }
  /// The upper case of some code point (see the struct comment).
  constexpr bool is_uppercase() const noexcept { return (bits & uppercase) != 0; }
  /// The NFD of some code point, or U+0000 (see the struct comment).
  constexpr bool is_nfd() const noexcept { return (bits & nfd) != 0; }

  /// Same bits.
  friend constexpr bool operator==(codepoint_flags, codepoint_flags) noexcept = default;
};

/**
 * The flags of `cp`, as llama.cpp's `unicode_cpt_flags_from_cpt`: undefined alone above U+10FFFF
 * (decoding can give up to 0x1FFFFF). ASCII from a table of its own; the rest in three table loads.
 */
constexpr codepoint_flags flags_of(char32_t cp) noexcept {
  namespace t = unicode_data;
  if (cp < 0x80) return codepoint_flags{t::ascii_flags[cp]};
  if (cp > 0x10FFFF) return codepoint_flags{codepoint_flags::undefined};
  const std::uint32_t c = cp;
  const std::uint32_t b2 = t::stage1[c >> (t::shift_low + t::shift_mid)];
  const std::uint32_t b3 = t::stage2[(b2 << t::shift_mid) | ((c >> t::shift_low) & ((1u << t::shift_mid) - 1))];
  return codepoint_flags{t::flag_values[t::stage3[(b3 << t::shift_low) | (c & ((1u << t::shift_low) - 1))]]};
}

namespace detail {

/// `cp` through a case map given as runs (binary search on the runs' first code points); `cp` if unmapped.
template <std::size_t N>
constexpr char32_t map_case(const unicode_data::case_run (&runs)[N], char32_t cp) noexcept {
  const auto* it =
      std::upper_bound(runs, runs + N, cp, [](char32_t c, const unicode_data::case_run& r) { return c < r.first; });
  if (it == runs) return cp;
  --it;
  if (cp > it->last || (cp - it->first) % it->stride != 0) return cp;
  return cp + static_cast<char32_t>(it->delta);  // modulo 2^32: a negative delta subtracts
}

}  // namespace detail

/**
 * The simple lower-case mapping of `cp` (UnicodeData.txt), as llama.cpp's `unicode_tolower`: one code
 * point, so U+0130 'İ' gives 'i' and U+1E9E 'ẞ' gives 'ß'; `cp` itself when it has none.
 */
constexpr char32_t to_lower(char32_t cp) noexcept {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  return detail::map_case(unicode_data::lower_runs, cp);
}

/**
 * The simple upper-case mapping of `cp` (llama.cpp's `unicode_map_uppercase`): one code point, so 'ß'
 * stays 'ß' and U+01C6 'ǆ' gives U+01C4 'Ǆ'; `cp` itself when it has none.
 */
constexpr char32_t to_upper(char32_t cp) noexcept {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') ? cp - 32 : cp;
  return detail::map_case(unicode_data::upper_runs, cp);
}

/**
 * The first code point of the canonical decomposition (NFD) of `cp`, as llama.cpp's
 * `unicode_cpts_normalize_nfd` maps each code point: 'é' gives 'e' (its accent is dropped, not
 * appended), a Hangul syllable its leading jamo, U+212B 'Å' gives 'A'; `cp` itself when it has none.
 */
constexpr char32_t nfd(char32_t cp) noexcept {
  if (cp < 0xC0) return cp;  // nothing below U+00C0 decomposes
  namespace t = unicode_data;
  const auto* end = t::nfd_ranges + sizeof(t::nfd_ranges) / sizeof(t::nfd_ranges[0]);
  const auto* it =
      std::upper_bound(t::nfd_ranges, end, cp, [](char32_t c, const t::nfd_range& r) { return c < r.first; });
  if (it == t::nfd_ranges) return cp;
  --it;
  return cp <= it->last ? static_cast<char32_t>(it->nfd) : cp;
}

namespace detail {

/// GPT-2's byte-level map, both ways.
struct gpt2_byte_map {
  char32_t to_codepoint[256];  ///< the code point standing for each byte
  std::int16_t to_byte[324];   ///< the byte each code point U+0000..U+0143 stands for, or -1
};

/// GPT-2's bytes_to_unicode(): the printable bytes ! to ~, ¡ to ¬ and ® to ÿ stand for themselves; the
/// other 68, in byte order, for U+0100 upwards (space, 0x20, is U+0120 'Ġ').
constexpr gpt2_byte_map make_gpt2_byte_map() noexcept {
  gpt2_byte_map m{};
  for (auto& b : m.to_byte) b = -1;
  char32_t next = 256;
  for (unsigned b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const char32_t cp = printable ? char32_t{b} : next++;
    m.to_codepoint[b] = cp;
    m.to_byte[cp] = static_cast<std::int16_t>(b);
  }
  return m;
}

/// The map, built at compile time.
inline constexpr gpt2_byte_map gpt2_bytes = make_gpt2_byte_map();

}  // namespace detail

/// The code point GPT-2's byte-level BPE writes for byte `b` (llama.cpp's `unicode_byte_to_utf8`).
constexpr char32_t byte_to_codepoint(std::uint8_t b) noexcept { return detail::gpt2_bytes.to_codepoint[b]; }

/// The byte code point `cp` stands for in GPT-2's byte-level BPE (llama.cpp's `unicode_utf8_to_byte`),
/// or -1 if it stands for none (where llama.cpp's map lookup throws std::out_of_range).
constexpr int codepoint_to_byte(char32_t cp) noexcept { return cp < 324 ? detail::gpt2_bytes.to_byte[cp] : -1; }

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_UNICODE_HPP
