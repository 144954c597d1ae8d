#ifndef GGUF_TEXT_CODEPOINTS_HPP
#define GGUF_TEXT_CODEPOINTS_HPP

/**
 * @file
 * UTF-8 exactly as llama.cpp reads and writes it (src/unicode.cpp), which is more lenient than RFC 3629:
 * token ids depend on the code points a text decodes to, so ill-formed input must decode the same way.
 *
 * What llama.cpp's decoder accepts: a lead byte's high bits choose the length (0xxxxxxx: 1, 110xxxxx:
 * 2, 1110xxxx: 3, 11110xxx: 4) and the following bytes must be 10xxxxxx; nothing else is checked.
 * Overlong forms (C0 80 is U+0000), surrogates (ED A0 80 is U+D800) and values above U+10FFFF
 * (F4 90 80 80 is 0x110000, up to F7 BF BF BF, 0x1FFFFF) all decode. Anything else (a continuation
 * byte first, F8..FF, a missing or wrong continuation byte, a sequence cut off by the end of the text)
 * gives U+FFFD for the lead byte alone, and decoding resumes at the next byte: a cut-off E2 82 gives two
 * U+FFFD, not one as RFC 3629's "maximal subpart" would.
 */

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/detail/utf8.hpp"
#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/// U+FFFD REPLACEMENT CHARACTER: what llama.cpp decodes an invalid byte to.
inline constexpr char32_t replacement_character = 0xFFFD;

/** One step of llama.cpp's decoder: the code point it pushes and how many bytes it advances. */
struct utf8_decoded {
  char32_t codepoint;    ///< the decoded value (up to 0x1FFFFF), or U+FFFD for an invalid byte
  std::uint32_t length;  ///< bytes consumed, 1 to 4; an invalid byte consumes 1 (a valid U+FFFD takes 3)
};

/**
 * What decoding does with the values above U+10FFFF that llama.cpp's decoder accepts (F4 90 80 80 to
 * F7 BF BF BF). llama.cpp's BPE, WPM and PLaMo-2 tokenizers later write every code point back as UTF-8
 * and abort on such a value; its SPM and UGM tokenizers copy the bytes through and never fail.
 */
enum class above_unicode : bool {
  keep,     ///< decode them, as llama.cpp does
  invalid,  ///< read their lead byte as an invalid byte (U+FFFD, one byte), as llama.cpp reads F8..FF: the
            ///< nearest input llama.cpp tokenizes, where it would abort
};

/**
 * The step llama.cpp's `unicode_cpts_from_utf8` takes at p[0..n), n > 0 the bytes left: the result of
 * `unicode_cpt_from_utf8`, or, where that throws, U+FFFD and one byte.
 * @param p    the bytes
 * @param n    how many there are (at least one)
 * @param mode what a value above U+10FFFF gives
 */
constexpr utf8_decoded decode_utf8_at(const unsigned char* p, std::size_t n,
                                      above_unicode mode = above_unicode::keep) noexcept {
  const std::uint32_t b0 = p[0];
  const auto cont = [&](std::size_t i) { return (p[i] & 0xC0u) == 0x80u; };
  if (b0 < 0x80) return {b0, 1};
  if ((b0 & 0x40) == 0) return {replacement_character, 1};  // a continuation byte cannot start
  if ((b0 & 0x20) == 0) {
    if (n < 2 || !cont(1)) return {replacement_character, 1};
    return {((b0 & 0x1Fu) << 6) | (p[1] & 0x3Fu), 2};
  }
  if ((b0 & 0x10) == 0) {
    if (n < 3 || !cont(1) || !cont(2)) return {replacement_character, 1};
    return {((b0 & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu), 3};
  }
  if ((b0 & 0x08) == 0) {
    if (n < 4 || !cont(1) || !cont(2) || !cont(3)) return {replacement_character, 1};
    const char32_t c = ((b0 & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
    if (c > 0x10FFFF && mode == above_unicode::invalid) return {replacement_character, 1};
    return {c, 4};
  }
  return {replacement_character, 1};  // F8..FF start nothing
}

/** The bytes `append_utf8` writes for `cp` up to U+10FFFF (4 above, where it writes none). */
constexpr std::size_t utf8_length(char32_t cp) noexcept {
  return 1 + std::size_t{cp >= 0x80} + std::size_t{cp >= 0x800} + std::size_t{cp >= 0x10000};
}

/**
 * Appends the code points of `text` to `out`, as llama.cpp's `unicode_cpts_from_utf8` returns them
 * (see the file comment for invalid input). Throws only what a vector's growth throws.
 * @param text any bytes
 * @param out  where the code points go
 * @param mode what a value above U+10FFFF gives
 * @return whether writing the code points back as UTF-8 gives `text` again (each one has its shortest
 *         form, and no byte was read as U+FFFD); with `above_unicode::invalid`, a word's bytes are then
 *         the text's own bytes
 */
inline bool decode_utf8(std::string_view text, std::vector<char32_t>& out, above_unicode mode = above_unicode::keep) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  const std::size_t base = out.size();
  out.resize(base + n);  // never more code points than bytes: write through a pointer, trim after
  char32_t* w = out.data() + base;
  std::size_t i = 0;
  bool exact = true;
  while (i < n) {
    if (p[i] < 0x80) {  // ASCII, most text of most tokenizers: sixteen bytes at a time where all are
      if (i + 16 <= n) {
        std::uint64_t a = 0, b = 0;
        std::memcpy(&a, p + i, 8), std::memcpy(&b, p + i + 8, 8);
        if (((a | b) & 0x8080808080808080ull) == 0) {
          for (std::size_t k = 0; k < 16; ++k) w[k] = p[i + k];
          w += 16, i += 16;
          continue;
        }
      }
      *w++ = p[i++];
      continue;
    }
    const utf8_decoded d = decode_utf8_at(p + i, n - i, mode);
    *w++ = d.codepoint;
    // not a U+FFFD for a bad byte, nor an overlong form, nor a value above U+10FFFF (which writes nothing)
    exact &= d.codepoint <= 0x10FFFF && utf8_length(d.codepoint) == d.length;
    i += d.length;
  }
  out.resize(static_cast<std::size_t>(w - out.data()));
  return exact;
}

/**
 * Appends the UTF-8 of `cp` to `out`, as llama.cpp's `unicode_cpt_to_utf8`: any value up to U+10FFFF,
 * surrogates included (ED A0 80 for U+D800). Above U+10FFFF, where llama.cpp throws
 * std::invalid_argument("invalid codepoint"), it appends nothing and returns false; such values come
 * from decoding F4 90.. to F7 BF BF BF, so a caller copying llama.cpp must decide what its throw means.
 */
inline bool append_utf8(std::string& out, char32_t cp) { return gguf::detail::append_utf8(out, cp); }

/**
 * The length of the sequence a byte starts, from its high four bits alone, as llama.cpp's
 * `unicode_len_utf8`: 1 for 00..BF (continuation bytes too), 2 for C0..DF, 3 for E0..EF, 4 for F0..FF.
 * It does not validate: callers (such as the SPM tokenizer) use it to step through text.
 */
constexpr std::size_t utf8_sequence_length(unsigned char lead) noexcept {
  constexpr std::uint8_t lengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lengths[lead >> 4];
}

/**
 * Appends `text` to `out` with each space written as U+2581 (SentencePiece's escaping, which llama.cpp
 * applies before SPM and SPM-style BPE): the spaces counted first, the output sized once and written in
 * one pass (no call per space: text may be mostly spaces).
 */
inline void escape_spaces(std::string_view text, std::string& out) {
  std::size_t spaces = 0;
  for (const char c : text) spaces += c == ' ';
  const std::size_t at = out.size();
  out.resize(at + text.size() + 2 * spaces);
  char* o = out.data() + at;
  if (spaces * 16 < text.size()) {  // few spaces: the stretches between them copied whole
    for (std::size_t from = 0;;) {
      const std::size_t sp = std::min(text.find(' ', from), text.size());
      std::memcpy(o, text.data() + from, sp - from);
      o += sp - from;
      if (sp == text.size()) return;
      o[0] = '\xE2', o[1] = '\x96', o[2] = '\x81';
      o += 3;
      from = sp + 1;
    }
  }
  // many: each byte written with a U+2581's tail after it, which the next byte overwrites unless it was a
  // space (no branch: spaces in prose are too irregular to predict); two bytes of room at the end
  out.resize(out.size() + 2);
  o = out.data() + at;
  for (const char c : text) {
    const bool sp = c == ' ';
    o[0] = sp ? '\xE2' : c;
    o[1] = '\x96';
    o[2] = '\x81';
    o += 1 + 2 * static_cast<std::size_t>(sp);
  }
  out.resize(out.size() - 2);
}

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_CODEPOINTS_HPP
