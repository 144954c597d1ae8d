// The Unicode layer of the tokenizers: llama.cpp's code point flags, case maps, NFD map, GPT-2 byte map
// and UTF-8 handling (src/unicode.cpp), quirks included, since token ids depend on every one of them.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/text/codepoints.hpp"
#include "gguf/text/unicode.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_unicode {

using namespace gguf::text;
using cf = codepoint_flags;

namespace {

std::uint16_t category(char32_t cp) { return flags_of(cp).category(); }

std::vector<char32_t> decode(std::string_view bytes) {
  std::vector<char32_t> out;
  decode_utf8(bytes, out);
  return out;
}

std::string utf8(char32_t cp) {
  std::string s;
  append_utf8(s, cp);
  return s;
}

constexpr char32_t fffd = replacement_character;

}  // namespace

TEST_CASE("unicode: ASCII has llama.cpp's categories") {
  for (char32_t c = '0'; c <= '9'; ++c) CHECK(category(c) == cf::number);
  for (char32_t c = 'A'; c <= 'Z'; ++c) CHECK(category(c) == cf::letter);
  for (char32_t c = 'a'; c <= 'z'; ++c) CHECK(category(c) == cf::letter);
  for (char32_t c : std::u32string_view(U"!\"#%&'()*,-./:;?@[\\]_{}")) CHECK(category(c) == cf::punctuation);
  for (char32_t c : std::u32string_view(U"$+<=>^`|~")) CHECK(category(c) == cf::symbol);
  CHECK(category(U' ') == cf::separator);
  for (char32_t c = 0; c < 0x20; ++c) CHECK(category(c) == cf::control);
  CHECK(category(0x7F) == cf::control);
  // The whitespace bit comes on top of the category.
  CHECK(flags_of(U' ').is_whitespace());
  CHECK(flags_of(U'\t').is_whitespace());
  CHECK(flags_of(U'\t').is_control());
  CHECK_FALSE(flags_of(U'_').is_whitespace());
}

TEST_CASE("unicode: letters, numbers and marks of several scripts") {
  for (char32_t c :
       std::initializer_list<char32_t>{0xE9, 0x3BB, 0x416, 0x628, 0x915, 0x4E2D, 0x3042, 0xD55C, 0x10400}) {
    CAPTURE(static_cast<std::uint32_t>(c));
    CHECK(category(c) == cf::letter);  // é λ Ж ب क 中 あ 한 𐐀
  }
  for (char32_t c : std::initializer_list<char32_t>{0xB2, 0xBD, 0x663, 0x96F, 0x216B, 0xFF11, 0x1D7CE}) {
    CAPTURE(static_cast<std::uint32_t>(c));
    CHECK(category(c) == cf::number);  // ² ½ ٣ ९ Ⅻ １ 𝟎: digits, letter-like and other numbers
  }
  for (char32_t c : std::initializer_list<char32_t>{0x301, 0x64B, 0x93F, 0x20DD}) {
    CAPTURE(static_cast<std::uint32_t>(c));
    CHECK(category(c) == cf::accent_mark);  // combining acute, fathatan, Devanagari vowel sign i, enclosing circle
  }
  CHECK(category(0xAB) == cf::punctuation);    // «
  CHECK(category(0x2014) == cf::punctuation);  // em dash
  CHECK(category(0x3002) == cf::punctuation);  // 。
  CHECK(category(0x20AC) == cf::symbol);       // €
  CHECK(category(0x1F600) == cf::symbol);      // 😀
  CHECK(category(0x2028) == cf::separator);    // line separator
}

TEST_CASE("unicode: control, private use, surrogates and unassigned code points") {
  CHECK(category(0x200B) == cf::control);  // zero width space is a format character (Cf), not whitespace
  CHECK_FALSE(flags_of(0x200B).is_whitespace());
  CHECK(category(0xFEFF) == cf::control);    // byte order mark
  CHECK(category(0xE000) == cf::control);    // private use
  CHECK(category(0x10FFFD) == cf::control);  // private use, plane 16
  CHECK(category(0xD800) == cf::control);    // surrogates are control too
  CHECK(category(0x378) == cf::undefined);   // unassigned
  CHECK(category(0xFFFF) == cf::undefined);  // noncharacter
  CHECK(category(0x10FFFF) == cf::undefined);
  // Past U+10FFFF (which llama.cpp's decoder can produce): undefined and nothing else.
  CHECK(flags_of(0x110000).as_uint() == cf::undefined);
  CHECK(flags_of(0x1FFFFF).as_uint() == cf::undefined);
  CHECK(flags_of(0xFFFFFFFF).as_uint() == cf::undefined);
  // Flags that no code point has, as llama.cpp's splitters use past the end of a text.
  CHECK(codepoint_flags{}.as_uint() == 0);
}

TEST_CASE("unicode: the data is Unicode 15.1, as llama.cpp's") {
  CHECK(category(0x31EF) == cf::symbol);   // CJK STROKE HXG, new in 15.1
  CHECK(category(0x2FFC) == cf::symbol);   // ideographic description character, new in 15.1
  CHECK(category(0x2EBF0) == cf::letter);  // CJK Extension I, new in 15.1
  CHECK(category(0x2EE5D) == cf::letter);
  CHECK(category(0x2EE5E) == cf::undefined);
  CHECK(category(0x11F00) == cf::accent_mark);  // Kawi, new in 15.0
  CHECK(category(0x1C89) == cf::undefined);     // new in 16.0, so not yet
}

TEST_CASE("unicode: every code point has exactly one category") {
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    const std::uint16_t cat = category(c);
    if (cat == 0 || (cat & (cat - 1)) != 0) {
      CAPTURE(static_cast<std::uint32_t>(c));
      FAIL("not exactly one category bit");
    }
  }
}

TEST_CASE("unicode: the whitespace set is White_Space") {
  std::set<char32_t> ws;
  for (char32_t c = 0; c <= 0x10FFFF; ++c)
    if (flags_of(c).is_whitespace()) ws.insert(c);
  const std::set<char32_t> expected = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,   0xA0,   0x1680,
                                       0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
                                       0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
  CHECK(ws == expected);
}

TEST_CASE("unicode: case maps are UnicodeData's simple mappings") {
  CHECK(to_lower(U'A') == U'a');
  CHECK(to_lower(U'z') == U'z');
  CHECK(to_lower(U'1') == U'1');
  CHECK(to_lower(0xC9) == 0xE9);        // É → é
  CHECK(to_lower(0x3A9) == 0x3C9);      // Ω → ω
  CHECK(to_lower(0x416) == 0x436);      // Ж → ж
  CHECK(to_lower(0x130) == U'i');       // İ → i: one code point, the dot is lost
  CHECK(to_lower(0x1E9E) == 0xDF);      // ẞ → ß
  CHECK(to_lower(0x212A) == U'k');      // Kelvin sign
  CHECK(to_lower(0x1C5) == 0x1C6);      // titlecase ǅ → ǆ
  CHECK(to_lower(0x10400) == 0x10428);  // Deseret
  CHECK(to_lower(0x1E921) == 0x1E943);  // Adlam, the last mapping
  CHECK(to_lower(0x4E2D) == 0x4E2D);

  CHECK(to_upper(U'a') == U'A');
  CHECK(to_upper(U'Z') == U'Z');
  CHECK(to_upper(0xDF) == 0xDF);    // ß has no one-code-point upper case
  CHECK(to_upper(0xFF) == 0x178);   // ÿ → Ÿ
  CHECK(to_upper(0x131) == U'I');   // dotless ı → I
  CHECK(to_upper(0x17F) == U'S');   // long s
  CHECK(to_upper(0xB5) == 0x39C);   // micro sign → Greek Μ
  CHECK(to_upper(0x1C5) == 0x1C4);  // titlecase ǅ → Ǆ
  CHECK(to_upper(0x1C6) == 0x1C4);
  // Alternating runs map every other code point only.
  CHECK(to_lower(0x100) == 0x101);
  CHECK(to_lower(0x101) == 0x101);
  CHECK(to_upper(0x101) == 0x100);
  CHECK(to_upper(0x100) == 0x100);
  // Beyond the code space: unchanged.
  CHECK(to_lower(0x110000) == 0x110000);
  CHECK(to_upper(0x1FFFFF) == 0x1FFFFF);
}

TEST_CASE("unicode: is_lowercase and is_uppercase mark the results of the case maps") {
  CHECK(flags_of(U'a').is_lowercase());
  CHECK_FALSE(flags_of(U'a').is_uppercase());
  CHECK(flags_of(U'A').is_uppercase());
  CHECK(flags_of(0xDF).is_lowercase());         // ß: the lower case of ẞ
  CHECK_FALSE(flags_of(0xAA).is_lowercase());   // ª is a letter without case
  CHECK_FALSE(flags_of(0x1C5).is_lowercase());  // titlecase ǅ is neither map's result
  CHECK_FALSE(flags_of(0x1C5).is_uppercase());
  CHECK_FALSE(flags_of(U'1').is_lowercase());
}

TEST_CASE("unicode: nfd gives the first code point of the canonical decomposition") {
  CHECK(nfd(0xE9) == U'e');      // é
  CHECK(nfd(0xC5) == U'A');      // Å
  CHECK(nfd(0x212B) == U'A');    // Ångström sign → Å → A
  CHECK(nfd(0x1EA5) == U'a');    // ấ: two levels of decomposition
  CHECK(nfd(0x2260) == U'=');    // ≠
  CHECK(nfd(0x344) == 0x308);    // combining dialytika tonos
  CHECK(nfd(0xF73) == 0xF71);    // Tibetan vowel sign ii: canonically ordered first
  CHECK(nfd(0xD55C) == 0x1112);  // 한: its leading jamo
  CHECK(nfd(0xAC00) == 0x1100);
  CHECK(nfd(0xF900) == 0x8C48);  // CJK compatibility ideograph
  CHECK(nfd(0x2FA1D) == 0x2A600);
  // No canonical decomposition: unchanged.
  CHECK(nfd(U'a') == U'a');
  CHECK(nfd(0) == 0);
  CHECK(nfd(0xC6) == 0xC6);      // Æ
  CHECK(nfd(0xFB01) == 0xFB01);  // ﬁ: a compatibility decomposition only
  CHECK(nfd(0x110000) == 0x110000);
  // is_nfd marks the results of the map, and U+0000 (a dummy range of llama.cpp's table).
  CHECK(flags_of(U'e').is_nfd());
  CHECK(flags_of(U'=').is_nfd());
  CHECK(flags_of(0x1112).is_nfd());
  CHECK(flags_of(0).is_nfd());
  CHECK_FALSE(flags_of(U'q').is_nfd());
  CHECK_FALSE(flags_of(0xE9).is_nfd());
}

TEST_CASE("unicode: GPT-2's byte map") {
  std::set<char32_t> seen;
  for (unsigned b = 0; b < 256; ++b) {
    const char32_t cp = byte_to_codepoint(static_cast<std::uint8_t>(b));
    CHECK(codepoint_to_byte(cp) == static_cast<int>(b));
    seen.insert(cp);
  }
  CHECK(seen.size() == 256);
  CHECK(byte_to_codepoint('!') == U'!');
  CHECK(byte_to_codepoint('a') == U'a');
  CHECK(byte_to_codepoint(0xE9) == 0xE9);
  CHECK(byte_to_codepoint(0x00) == 0x100);
  CHECK(byte_to_codepoint(' ') == 0x120);   // Ġ
  CHECK(byte_to_codepoint('\n') == 0x10A);  // Ċ
  CHECK(byte_to_codepoint(0x7F) == 0x121);
  CHECK(byte_to_codepoint(0xA0) == 0x142);
  CHECK(byte_to_codepoint(0xAD) == 0x143);  // the last one
  CHECK(codepoint_to_byte(U' ') == -1);     // space stands for no byte: Ġ does
  CHECK(codepoint_to_byte(0x144) == -1);
  CHECK(codepoint_to_byte(0x4E2D) == -1);
  CHECK(codepoint_to_byte(0x110000) == -1);
  static_assert(byte_to_codepoint(' ') == 0x120);
}

TEST_CASE("unicode: UTF-8 decoding of valid text") {
  CHECK(decode("").empty());
  CHECK(decode("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80") == std::vector<char32_t>{U'a', 0xE9, 0x4E2D, 0x1F600});
  CHECK(decode(std::string_view("\0x", 2)) == std::vector<char32_t>{0, U'x'});
  CHECK(decode("\xEF\xBF\xBD") == std::vector<char32_t>{fffd});  // a real U+FFFD
  std::vector<char32_t> out = {U'z'};
  decode_utf8("ab", out);  // appends
  CHECK(out == std::vector<char32_t>{U'z', U'a', U'b'});
  const auto* p = reinterpret_cast<const unsigned char*>("\xE4\xB8\xAD");
  CHECK(decode_utf8_at(p, 3).codepoint == 0x4E2D);
  CHECK(decode_utf8_at(p, 3).length == 3);
}

TEST_CASE("unicode: UTF-8 decoding of invalid bytes: U+FFFD for one byte, then go on") {
  CHECK(decode("\x80") == std::vector<char32_t>{fffd});  // a continuation byte first
  CHECK(decode("\xBF"
               "a") == std::vector<char32_t>{fffd, U'a'});
  for (unsigned b = 0xF8; b <= 0xFF; ++b) {  // bytes that start nothing
    const char s[2] = {static_cast<char>(b), '\x80'};
    CHECK(decode(std::string_view(s, 2)) == std::vector<char32_t>{fffd, fffd});
  }
  CHECK(decode("\xC3"
               "A") == std::vector<char32_t>{fffd, U'A'});  // a missing continuation byte
  CHECK(decode("\xE2\x28\xA1") == std::vector<char32_t>{fffd, U'(', fffd});
  CHECK(decode("\xF0\x9F\x98"
               "a") == std::vector<char32_t>{fffd, fffd, fffd, U'a'});
  // Cut off by the end: each byte is its own U+FFFD (not one for the whole, as RFC 3629 decoders do).
  CHECK(decode("\xC3") == std::vector<char32_t>{fffd});
  CHECK(decode("\xE4\xB8") == std::vector<char32_t>{fffd, fffd});
  CHECK(decode("\xF0\x9F\x98") == std::vector<char32_t>{fffd, fffd, fffd});
  // The bytes left bound the step, not the sequence's own length.
  const auto* p = reinterpret_cast<const unsigned char*>("\xE4\xB8\xAD");
  CHECK(decode_utf8_at(p, 2).codepoint == fffd);
  CHECK(decode_utf8_at(p, 2).length == 1);
}

TEST_CASE("unicode: UTF-8 decoding accepts what RFC 3629 rejects, as llama.cpp does") {
  CHECK(decode("\xC0\x80") == std::vector<char32_t>{0});                 // overlong NUL
  CHECK(decode("\xC0\xAF") == std::vector<char32_t>{U'/'});              // overlong '/'
  CHECK(decode("\xE0\x80\x80") == std::vector<char32_t>{0});             // overlong, three bytes
  CHECK(decode("\xED\xA0\x80") == std::vector<char32_t>{0xD800});        // a surrogate
  CHECK(decode("\xF4\x90\x80\x80") == std::vector<char32_t>{0x110000});  // past U+10FFFF
  CHECK(decode("\xF7\xBF\xBF\xBF") == std::vector<char32_t>{0x1FFFFF});  // the largest
}

TEST_CASE("unicode: decode_utf8 says whether the code points write back to the same bytes") {
  const auto exact = [](std::string_view bytes, above_unicode mode = above_unicode::keep) {
    std::vector<char32_t> out;
    return decode_utf8(bytes, out, mode);
  };
  CHECK(exact(""));
  CHECK(exact("plain ASCII, longer than sixteen bytes at a time"));
  CHECK(exact("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"));
  CHECK(exact("\xEF\xBF\xBD"));                    // a real U+FFFD writes back
  CHECK(exact("\xED\xA0\x80"));                    // so does a surrogate
  CHECK_FALSE(exact("\x80"));                      // a bad byte read as U+FFFD does not
  CHECK_FALSE(exact("\xC0\xAF"));                  // nor an overlong form
  CHECK_FALSE(exact("0123456789abcdef\xE2\x82"));  // nor a cut-off sequence after an ASCII block
  CHECK_FALSE(exact("\xF4\x90\x80\x80"));          // nor a value above U+10FFFF, which writes nothing
  CHECK_FALSE(exact("\xF4\x90\x80\x80", above_unicode::invalid));
}

TEST_CASE("unicode: UTF-8 encoding") {
  CHECK(utf8(U'a') == "a");
  CHECK(utf8(0) == std::string(1, '\0'));
  CHECK(utf8(0xE9) == "\xC3\xA9");
  CHECK(utf8(0x4E2D) == "\xE4\xB8\xAD");
  CHECK(utf8(0x1F600) == "\xF0\x9F\x98\x80");
  CHECK(utf8(0xD800) == "\xED\xA0\x80");  // surrogates are written, as llama.cpp does
  CHECK(utf8(0x10FFFF) == "\xF4\x8F\xBF\xBF");
  std::string s = "x";
  CHECK_FALSE(append_utf8(s, 0x110000));  // where llama.cpp throws: nothing written
  CHECK(s == "x");
  CHECK(append_utf8(s, U'y'));
  CHECK(s == "xy");
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {  // decoding undoes encoding everywhere
    const std::string e = utf8(c);
    const utf8_decoded d = decode_utf8_at(reinterpret_cast<const unsigned char*>(e.data()), e.size());
    if (d.codepoint != c || d.length != e.size()) {
      CAPTURE(static_cast<std::uint32_t>(c));
      FAIL("round trip");
    }
  }
}

TEST_CASE("unicode: utf8_sequence_length reads the high bits only") {
  CHECK(utf8_sequence_length(0x41) == 1);
  CHECK(utf8_sequence_length(0x80) == 1);  // a continuation byte
  CHECK(utf8_sequence_length(0xBF) == 1);
  CHECK(utf8_sequence_length(0xC0) == 2);
  CHECK(utf8_sequence_length(0xDF) == 2);
  CHECK(utf8_sequence_length(0xE0) == 3);
  CHECK(utf8_sequence_length(0xEF) == 3);
  CHECK(utf8_sequence_length(0xF0) == 4);
  CHECK(utf8_sequence_length(0xF8) == 4);  // not a lead byte at all, still 4
  CHECK(utf8_sequence_length(0xFF) == 4);
}

TEST_CASE("unicode: the lookups work at compile time") {
  static_assert(flags_of(U'A').is_letter());
  static_assert(flags_of(0x4E2D).is_letter());
  static_assert(to_lower(0xC9) == 0xE9);
  static_assert(nfd(0xE9) == U'e');
  CHECK(true);
}

}  // namespace test_unicode
