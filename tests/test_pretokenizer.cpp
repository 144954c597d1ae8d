// The BPE pre-tokenizers: names as llama.cpp's load() maps them, and words as its unicode_regex_split
// cuts them. The regex families are checked against libstdc++'s std::regex / std::wregex run the way
// llama.cpp runs them (collapsed text, rewritten regex, regex_iterator, the gaps between matches).
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/text/codepoints.hpp"
#include "gguf/text/pretokenizer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_pretokenizer {

namespace {

using gguf::text::pre_tokenizer;
using gguf::text::pretokenized_word;

std::vector<char32_t> cpts(std::string_view utf8) {
  std::vector<char32_t> v;
  gguf::text::decode_utf8(utf8, v);
  return v;
}

std::string utf8(const std::vector<char32_t>& cp, std::uint32_t b, std::uint32_t e) {
  std::string s;
  for (std::uint32_t i = b; i < e; ++i) gguf::text::append_utf8(s, cp[i]);
  return s;
}

std::vector<std::string> words(pre_tokenizer type, std::string_view text) {
  const std::vector<char32_t> cp = cpts(text);
  std::vector<pretokenized_word> w;
  gguf::text::split_words(type, cp, w);
  std::vector<std::string> out;
  for (const pretokenized_word& x : w) out.push_back(utf8(cp, x.begin, x.end));
  return out;
}

using vs = std::vector<std::string>;

// ------------------------------------------------------------------------------------------------
// The reference: llama.cpp's unicode_regex_split procedure for its std::regex paths, with libstdc++.

std::string to_utf8(std::u32string_view s) {
  std::string o;
  for (char32_t c : s) gguf::text::append_utf8(o, c);
  return o;
}

// llama.cpp's unicode_regex_split_stl: the matches of regex_iterator over each piece, and the gaps.
template <class CharT>
std::vector<std::size_t> split_stl(const std::basic_string<CharT>& text, const std::basic_regex<CharT>& expr,
                                   const std::vector<std::size_t>& offsets) {
  std::vector<std::size_t> out;
  std::size_t start = 0;
  for (std::size_t offset : offsets) {
    std::regex_iterator<const CharT*> it(text.data() + start, text.data() + start + offset, expr);
    std::regex_iterator<const CharT*> end;
    std::int64_t start_idx = 0;
    for (; it != end; ++it) {
      const auto& m = *it;
      if (m.position() > start_idx) out.push_back(static_cast<std::size_t>(m.position() - start_idx));
      out.push_back(static_cast<std::size_t>(m.length()));
      start_idx = m.position() + m.length();
    }
    if (start_idx < static_cast<std::int64_t>(offset)) out.push_back(offset - static_cast<std::size_t>(start_idx));
    start += offset;
  }
  return out;
}

// llama.cpp's k_ucat_enum / k_ucat_cpt / k_ucat_map, as its source writes them.
struct ucat_ref {
  const char* name;
  char byte;
  const char* ascii;
};
const ucat_ref ucat_refs[] = {
    {"\\p{N}", '\xD1', "\x30-\x39"},
    {"\\p{L}", '\xD2', "\x41-\x5A\x61-\x7A"},
    {"\\p{P}", '\xD3', "\x21-\x23\x25-\x2A\x2C-\x2F\x3A-\x3B\x3F-\x40\\\x5B-\\\x5D\x5F\\\x7B\\\x7D"},
    {"\\p{M}", '\xD4', ""},
    {"\\p{S}", '\xD5', "\\\x24\\\x2B\x3C-\x3E\x5E\x60\\\x7C\\\x7E"},
    {"\\p{Lu}", '\xD2', "\x41-\x5A\x61-\x7A"},
    {"\\p{Ll}", '\xD2', "\x41-\x5A\x61-\x7A"},
    {"\\p{Lt}", '\xD2', "\x41-\x5A\x61-\x7A"},
    {"\\p{Lm}", '\xD2', "\x41-\x5A\x61-\x7A"},
    {"\\p{Lo}", '\xD2', "\x41-\x5A\x61-\x7A"},
};

// unicode_regex_split's regex rewrite for the collapsed text.
std::string collapse_ref(const std::string& re) {
  std::string out;
  bool inside = false;
  for (std::size_t i = 0; i < re.size(); ++i) {
    if (re[i] == '[' && (i == 0 || re[i - 1] != '\\')) {
      out += '[';
      inside = true;
      continue;
    }
    if (inside && re[i] == ']' && re[i - 1] != '\\') {
      out += ']';
      inside = false;
      continue;
    }
    if (re[i] == '\\' && i + 3 < re.size() && re[i + 1] == 'p' && re[i + 2] == '{') {
      const std::size_t close = re.find('}', i + 3);
      if (close != std::string::npos && close <= i + 10) {
        const std::string pat = re.substr(i, close - i + 1);
        bool done = false;
        for (const ucat_ref& u : ucat_refs) {
          if (pat == u.name) {
            if (!inside) out += '[';
            out += u.byte;
            out += u.ascii;
            if (!inside) out += ']';
            i = close;
            done = true;
            break;
          }
        }
        if (done) continue;
      }
    }
    out += re[i];
  }
  return out;
}

// Compiled reference regexes, one per entry of the header's table (custom ones left empty).
struct ref_regex {
  gguf::text::detail::pre::path kind;
  std::regex narrow;
  std::wregex wide;
};

const std::vector<ref_regex>& ref_regexes() {
  static const std::vector<ref_regex> v = [] {
    namespace p = gguf::text::detail::pre;
    constexpr auto flags = std::regex_constants::optimize | std::regex_constants::nosubs;  // llama.cpp's
    std::vector<ref_regex> r;
    for (std::u32string_view re : p::regexes) {
      ref_regex x;
      x.kind = p::path_of(re);
      if (x.kind == p::path::collapsed) {
        x.narrow = std::regex(collapse_ref(to_utf8(re)), flags);
      } else if (x.kind == p::path::wide) {
        x.wide = std::wregex(std::wstring(re.begin(), re.end()), flags);
      }
      r.push_back(std::move(x));
    }
    return r;
  }();
  return v;
}

// The words of `cp` for `type` by llama.cpp's procedure; the custom splitters are the header's own
// (they are checked against llama.cpp through the oracle), every std::regex step is libstdc++'s.
std::vector<std::size_t> reference_split(pre_tokenizer type, const std::vector<char32_t>& cp) {
  namespace p = gguf::text::detail::pre;
  std::vector<std::size_t> offsets = {cp.size()};
  std::string collapsed(cp.size(), '\0');
  std::wstring wtext(cp.size(), L'\0');
  for (std::size_t i = 0; i < cp.size(); ++i) {
    const auto f = gguf::text::flags_of(cp[i]);
    collapsed[i] = cp[i] < 128 ? static_cast<char>(cp[i]) : static_cast<char>(p::collapsed_byte(f.bits));
    wtext[i] = static_cast<wchar_t>(cp[i] > 0x7F && f.is_whitespace() ? 0x0B : cp[i]);
  }
  const auto list = static_cast<std::size_t>(p::list_of[static_cast<std::size_t>(type)]);
  for (std::size_t k = 0; k < p::list_count[list]; ++k) {
    const std::size_t idx = p::list_first[list] + k;
    const ref_regex& r = ref_regexes()[idx];
    if (r.kind == p::path::collapsed) {
      offsets = split_stl(collapsed, r.narrow, offsets);
    } else if (r.kind == p::path::wide) {
      offsets = split_stl(wtext, r.wide, offsets);
    } else {  // a custom splitter, piece by piece
      std::vector<std::uint16_t> fl(cp.size());
      for (std::size_t i = 0; i < cp.size(); ++i) fl[i] = gguf::text::flags_of(cp[i]).bits;
      std::vector<pretokenized_word> out;
      p::word_sink sink(
          [](void* v, std::span<const pretokenized_word> w) {
            auto& o = *static_cast<std::vector<pretokenized_word>*>(v);
            o.insert(o.end(), w.begin(), w.end());
          },
          &out);
      std::uint32_t start = 0;
      for (std::size_t off : offsets) {
        const auto e = static_cast<std::uint32_t>(start + off);
        p::piece s{cp.data(), fl.data(), start, e, sink, start};
        switch (r.kind) {
          case p::path::custom_gpt2: p::split_gpt2(s); break;
          case p::path::custom_llama3: p::split_llama3(s); break;
          case p::path::custom_kimi_k2: p::split_kimi_k2(s); break;
          default: p::split_afmoe(s); break;
        }
        start = e;
      }
      sink.flush();
      offsets.clear();
      for (const pretokenized_word& w : out) offsets.push_back(w.end - w.begin);
    }
  }
  std::vector<std::size_t> nonempty;
  for (std::size_t o : offsets)
    if (o != 0) nonempty.push_back(o);
  return nonempty;
}

// Random text from fragments that exercise every rule of every regex.
std::string random_text(std::mt19937& rng) {
  static const char* const pieces[] = {
      "a",
      "Z",
      "hello",
      "World",
      "HTML",
      "camelCase",
      "XMLHttp",
      "iPhone",
      "_",
      "x1",
      "a_b",
      "e\xCC\x81",
      "0",
      "7",
      "12",
      "123",
      "1234",
      "1234567",
      "2024",
      "3.14",
      "1,000",
      "\xD9\xA3\xD9\xA4",
      "\xE0\xA5\xAB",
      "\xEF\xBC\x91\xEF\xBC\x92",
      "\xC2\xB2",
      "\xE2\x85\xA2",  // ٣٤ ५ １２ ² Ⅲ
      " ",
      "  ",
      "    ",
      "\t",
      "\n",
      "\r\n",
      "\n\n",
      "\r",
      "\x0B",
      "\x0C",
      "\xC2\xA0",
      "\xE3\x80\x80",
      "\xE2\x80\xA8",
      "\xC2\x85",
      "\xE2\x80\x83",
      "\xE2\x80\x8B",
      "\x1C",
      "\x1F",
      "'s",
      "'t",
      "'re",
      "'ve",
      "'m",
      "'ll",
      "'d",
      "'S",
      "'RE",
      "'Ll",
      "n't",
      "'",
      "\xE2\x80\x99s",
      ".",
      ",",
      "!",
      "?",
      "...",
      "!!",
      "(",
      ")",
      "[",
      "]",
      "{",
      "}",
      "-",
      "--",
      "/",
      "\\",
      "$",
      "+",
      "<",
      "=",
      ">",
      "^",
      "~",
      "|",
      "`",
      "@",
      "#",
      "%",
      "&",
      "*",
      ":",
      ";",
      "\"",
      "_",
      "\xE2\x80\xA6",
      "\xE3\x80\x82",
      "\xEF\xBC\x8C",
      "\xE3\x80\x81",
      "\xE0\xA5\xA4",
      "\xDB\x94",
      "\xD8\x8C",
      "\xE2\x80\x9C",
      "\xE2\x80\x9D",
      "\xE2\x80\x94",
      "\xEF\xBC\x81",
      "\xEF\xBC\x9A",
      "\xE2\x82\xAC",
      "\xC2\xA9",
      "caf\xC3\xA9",
      "\xC3\x91o\xC3\xB1o",
      ("stra\xC3\x9F"
       "e"),
      "\xC3\x96l",
      "\xC2\xB5",
      "\xC7\x85",
      "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",
      "\xCE\xA9\xCE\xBC\xCE\xAD\xCE\xB3\xCE\xB1",
      "\xE4\xB8\xAD\xE6\x96\x87",
      "\xE4\xB8\x80",
      "\xE9\xBE\xA5",
      "\xE3\x90\x80",
      "\xF0\xA0\x80\x80",
      "\xEF\xA4\x80",
      "\xE3\x81\xB2\xE3\x82\x89",
      "\xE3\x82\xAB\xE3\x82\xBF",
      "\xEF\xBD\xB1",
      "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4",
      "\xE3\x84\xB1",
      "\xE3\x84\x85",
      "\xE0\xB8\x97\xE0\xB8\xA2",
      "\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\x82",
      "\xD8\xB9\xD8\xB1\xD8\xA8\xD9\x8A",
      "\xCC\x81",
      "\xCC\x88\xCC\xA3",
      "\xF0\x9F\x98\x80",
      "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",
      "\xE2\x9D\xA4\xEF\xB8\x8F",
      "\xEF\xBF\xBD",
      "\xCD\xB8",
      "\xEE\x80\x80",
      "\xF0\x90\x90\x80",
      "IMGIMG",
      "IMGIMGABZ",
      "<sentinel:12>",
      "<sentinel:>",
      "\xE2\x80\x98",
      "\xE2\x80\x9F",
      "\xE3\x80\x8C",
      "\xEF\xB8\xB0",
      "\xE3\x83\xBB",
  };
  constexpr std::size_t n_pieces = sizeof pieces / sizeof pieces[0];
  std::string s;
  const std::size_t count = std::uniform_int_distribution<std::size_t>(0, 30)(rng);
  for (std::size_t i = 0; i < count; ++i) s += pieces[std::uniform_int_distribution<std::size_t>(0, n_pieces - 1)(rng)];
  return s;
}

std::vector<std::size_t> lengths(pre_tokenizer type, const std::vector<char32_t>& cp) {
  std::vector<pretokenized_word> w;
  gguf::text::split_words(type, cp, w);
  std::vector<std::size_t> out;
  std::uint32_t at = 0;
  for (const pretokenized_word& x : w) {
    CHECK(x.begin == at);  // contiguous, in order
    at = x.end;
    out.push_back(x.end - x.begin);
  }
  CHECK(at == cp.size());
  return out;
}

}  // namespace

TEST_CASE("pre-tokenizer names as llama.cpp maps them") {
  using gguf::text::pre_tokenizer_from_name;
  CHECK(*pre_tokenizer_from_name("gpt-2") == pre_tokenizer::gpt2);
  CHECK(*pre_tokenizer_from_name("llama-bpe") == pre_tokenizer::llama3);
  CHECK(*pre_tokenizer_from_name("pixtral") == pre_tokenizer::llama3);
  CHECK(*pre_tokenizer_from_name("llama4") == pre_tokenizer::gpt4o);
  CHECK(*pre_tokenizer_from_name("exaone4") == pre_tokenizer::gpt2);
  CHECK(*pre_tokenizer_from_name("megrez") == pre_tokenizer::qwen2);
  CHECK(*pre_tokenizer_from_name("bailingmoe2") == pre_tokenizer::bailingmoe);
  CHECK(*pre_tokenizer_from_name("default") == pre_tokenizer::default_);
  CHECK(*pre_tokenizer_from_name("") == pre_tokenizer::default_);
  CHECK(*pre_tokenizer_from_name("granite-embed-multi-311m") == pre_tokenizer::gemma4);
  for (std::string_view bad : {"gpt-oss", "chatglm3", "jina-v2-zh", "Gpt-2", "qwen2 "}) {
    const auto r = pre_tokenizer_from_name(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error() == gguf::errc::out_of_range);
    CHECK(gguf::to_string(r.error()) == "unknown pre-tokenizer type: '" + std::string(bad) + "'");
  }
  // every type has a name, and the names that select a type round-trip
  for (std::size_t i = 0; i < gguf::text::pre_tokenizer_count; ++i) {
    const auto t = static_cast<pre_tokenizer>(i);
    const auto back = pre_tokenizer_from_name(gguf::text::name(t));
    if (t == pre_tokenizer::chatglm3 || t == pre_tokenizer::llama4 || t == pre_tokenizer::pixtral) continue;
    REQUIRE(back);
    CHECK(*back == t);
  }
  CHECK_FALSE(gguf::text::byte_encoded(pre_tokenizer::gemma4));
  CHECK(gguf::text::byte_encoded(pre_tokenizer::qwen2));
}

TEST_CASE("every regex of llama.cpp compiles") { CHECK(gguf::text::detail::pre::stages().ok); }

TEST_CASE("gpt-2: contractions, letters, numbers and punctuation runs with one leading space") {
  CHECK(words(pre_tokenizer::gpt2, "Hello world") == vs{"Hello", " world"});
  CHECK(words(pre_tokenizer::gpt2, "I'm can't we'LL") == vs{"I", "'m", " can", "'t", " we", "'", "LL"});
  CHECK(words(pre_tokenizer::gpt2, "in 2024, 12345!") == vs{"in", " 2024", ",", " 12345", "!"});
  CHECK(words(pre_tokenizer::gpt2, "a   b") == vs{"a", "  ", " b"});  // \s+(?!\S) leaves one space
  CHECK(words(pre_tokenizer::gpt2, "a\n\nb ") == vs{"a", "\n", "\n", "b", " "});
  CHECK(words(pre_tokenizer::gpt2, "caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87") ==
        vs{"caf\xC3\xA9", " \xE4\xB8\xAD\xE6\x96\x87"});
  CHECK(words(pre_tokenizer::gpt2, "hi \xF0\x9F\x98\x80\xF0\x9F\x98\x80!") ==
        vs{"hi", " \xF0\x9F\x98\x80\xF0\x9F\x98\x80!"});
}

TEST_CASE("llama3: case-insensitive contractions, 1-3 digit groups, newlines") {
  CHECK(words(pre_tokenizer::llama3, "I'M 1234567") == vs{"I", "'M", " ", "123", "456", "7"});
  CHECK(words(pre_tokenizer::llama3, "x = (a+b);\n\n  y") == vs{"x", " =", " (", "a", "+b", ");\n\n", " ", " y"});
  CHECK(words(pre_tokenizer::llama3, "\tword  \n end") == vs{"\tword", "  \n", " end"});
}

TEST_CASE("qwen2: single digits, deepseek-coder and starcoder: digits apart") {
  CHECK(words(pre_tokenizer::qwen2, "abc 2024") == vs{"abc", " ", "2", "0", "2", "4"});
  CHECK(words(pre_tokenizer::starcoder, "v12 x") == vs{"v", "1", "2", " x"});
  CHECK(words(pre_tokenizer::deepseek_coder, "Hi 42\n") == vs{"Hi", " ", "4", "2", "\n"});
}

TEST_CASE("gpt-4o: words split at case changes, contractions kept, CJK and emoji") {
  CHECK(words(pre_tokenizer::gpt4o, "HelloWorld XMLHttp don't") == vs{"Hello", "World", " XMLHttp", " don't"});
  CHECK(words(pre_tokenizer::gpt4o, "\xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80 12345") ==
        vs{"\xE4\xB8\xAD\xE6\x96\x87", " \xF0\x9F\x98\x80", " ", "123", "45"});
}

TEST_CASE("default and falcon: punctuation runs first, then digits in threes") {
  CHECK(words(pre_tokenizer::default_, "a... 1234567") == vs{"a", "...", " ", "123", "456", "7"});
  CHECK(words(pre_tokenizer::falcon, "x=1234;") == vs{"x", "=", "123", "4", ";"});
}

TEST_CASE("superbpe and tiny_aya: digits grouped from the right") {
  CHECK(words(pre_tokenizer::superbpe, "1234567") == vs{"1", "234", "567"});
  // tiny_aya's \d{1,3}(?=(?:\d{3})*\b) runs as AFMoE's splitter in llama.cpp: any \p{N}, and no \b
  CHECK(words(pre_tokenizer::tiny_aya, "1234 x") == vs{"1", "234", " x"});
  CHECK(words(pre_tokenizer::tiny_aya, "1234a") == vs{"1", "234", "a"});
  CHECK(words(pre_tokenizer::tiny_aya, "1234\xD9\xA3") == vs{"12", "34\xD9\xA3"});
}

TEST_CASE("kimi-k2 and afmoe custom splitters") {
  CHECK(words(pre_tokenizer::kimi_k2,
              "\xE4\xB8\xAD\xE6\x96\x87"
              "abc's 12345") == vs{"\xE4\xB8\xAD\xE6\x96\x87", "abc's", " ", "123", "45"});
  CHECK(words(pre_tokenizer::afmoe, "ab 12345 cd") == vs{"ab", " ", "12", "345", " cd"});
}

TEST_CASE("bloom: everything but whitespace and some punctuation, gemma4: lines") {
  CHECK(words(pre_tokenizer::bloom, "Hello, world!") == vs{"Hello", ",", " world", "!"});
  CHECK(words(pre_tokenizer::gemma4, "a b\n\nc") == vs{"a b", "\n\n", "c"});
}

TEST_CASE("an empty text has no words") {
  std::vector<pretokenized_word> w;
  gguf::text::split_words(pre_tokenizer::gpt4o, std::vector<char32_t>{}, w);
  CHECK(w.empty());
}

TEST_CASE("every pre-tokenizer splits as llama.cpp's std::regex procedure") {
  if constexpr (sizeof(wchar_t) < 4) {
    // The reference runs std::wregex on wchar_t code points as llama.cpp does; a 16-bit wchar_t
    // (Windows) cuts the code points above U+FFFF, where llama.cpp on Linux, and this library
    // everywhere, keep them: no reference here (the Linux and ARM64 builds run this case).
    MESSAGE("skipped: wchar_t has 16 bits on this platform");
    return;
  }
  std::mt19937 rng(20240607);
  for (std::size_t t = 0; t < gguf::text::pre_tokenizer_count; ++t) {
    const auto type = static_cast<pre_tokenizer>(t);
    CAPTURE(gguf::text::name(type));
    const int rounds = 2000;
    for (int i = 0; i < rounds; ++i) {
      const std::string text = random_text(rng);
      const std::vector<char32_t> cp = cpts(text);
      CAPTURE(text);
      const std::vector<std::size_t> got = lengths(type, cp);
      const std::vector<std::size_t> want = reference_split(type, cp);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("Qwen2's splitter (the Llama 3 one with single digits) splits as its regex on every kind of text") {
  // llama.cpp runs Qwen2's regex through std::regex; this library through a hand-written splitter, whose
  // specification is the regex matcher (itself checked against std::regex above): long random texts of
  // every script, digit runs, whitespace runs and symbols, split both ways
  std::mt19937 rng(49);
  const pre_tokenizer types[] = {pre_tokenizer::qwen2, pre_tokenizer::stablelm2, pre_tokenizer::hunyuan};
  gguf::text::word_splitter fast, regex;
  regex.regex_only = true;
  for (const pre_tokenizer type : types) {
    CAPTURE(gguf::text::name(type));
    for (int i = 0; i < 300; ++i) {
      std::string text;
      for (int k = 0; k < 20; ++k) text += random_text(rng);
      const std::vector<char32_t> cp = cpts(text);
      CAPTURE(text);
      std::vector<pretokenized_word> a, b;
      fast.split(type, cp, a);
      regex.split(type, cp, b);
      REQUIRE(a.size() == b.size());
      for (std::size_t w = 0; w < a.size(); ++w) REQUIRE((a[w].begin == b[w].begin && a[w].end == b[w].end));
    }
  }
}

}  // namespace test_pretokenizer

namespace test_pretokenizer {

TEST_CASE("safe_cut: the words of the text on each side, split alone, are the words of the whole") {
  // The BPE tokenizer decodes and splits a long text a stretch at a time, cut where safe_cut says: cut at
  // every such place, random texts of every kind (with invalid bytes) split as they do whole, for every
  // pre-tokenizer; and the places are found often enough to matter.
  std::mt19937 rng(4949);
  static const char* const extra[] = {
      " ",        "\n",           "\n\n", " \n",  "\r\n", "  ",  "\t", "\xC3", "\x80", "\xF4\x90\x80\x80",
      "\xC2\xA0", "\xE3\x80\x80", "a b",  "x\ny", ".\n.", "1\n2"};
  constexpr std::size_t n_extra = sizeof extra / sizeof extra[0];
  const auto split = [](pre_tokenizer type, std::string_view t, std::vector<std::string>& out) {
    std::vector<char32_t> cp;
    gguf::text::decode_utf8(t, cp, gguf::text::above_unicode::invalid);
    std::vector<pretokenized_word> w;
    gguf::text::split_words(type, cp, w);
    for (const pretokenized_word& x : w) out.push_back(utf8(cp, x.begin, x.end));
  };
  for (std::size_t t = 0; t < gguf::text::pre_tokenizer_count; ++t) {
    const auto type = static_cast<pre_tokenizer>(t);
    CAPTURE(gguf::text::name(type));
    std::size_t cuts = 0;
    for (int i = 0; i < 500; ++i) {
      std::string text;
      for (int k = 0; k < 12; ++k) {
        text += random_text(rng);
        text += extra[std::uniform_int_distribution<std::size_t>(0, n_extra - 1)(rng)];
      }
      CAPTURE(text);
      std::vector<std::string> whole, pieces;
      split(type, text, whole);
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = gguf::text::safe_cut(type, text, at + 1);
        REQUIRE(end > at);
        REQUIRE(end <= text.size());
        cuts += end < text.size();
        split(type, std::string_view(text).substr(at, end - at), pieces);
        at = end;
      }
      REQUIRE(pieces == whole);
    }
    if (type == pre_tokenizer::superbpe) {
      CHECK(cuts == 0);
    } else {
      CHECK(cuts > 100);
    }
  }
}

}  // namespace test_pretokenizer
