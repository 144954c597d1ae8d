// gguf::tokenizer: llama.cpp's tokenizers from a file's tokenizer.ggml.* keys. Tiny vocabularies built
// here show each rule; the real vocabularies of ../shared (when present) are checked against ids that
// llama.cpp gave (tests/oracle/tokenizer_agreement.py compares everything, in CI).
#include <doctest/doctest.h>
#include <gguf/open.hpp>
#include <gguf/tokenizer.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf_writer.hpp"

namespace {

using ids = std::vector<gguf::token_id>;
using gguf::errc;

// The byte-fallback tokens "<0x00>".."<0xFF>" an SPM vocabulary has, as type 6 (byte); the byte
// `missing` (if any) has another text instead, so that no token stands for it.
void add_byte_tokens(std::vector<std::string>& tokens, std::vector<float>& scores, std::vector<std::int32_t>& types,
                     int missing = -1) {
  static constexpr char hex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(std::string(b == missing ? "<not 0x" : "<0x") + hex[b >> 4] + hex[b & 15] + ">");
    scores.push_back(0.0f);
    types.push_back(6);
  }
}

// An SPM vocabulary: <unk> <s> </s>, the 256 byte tokens (but `missing`), then `pieces` with their
// scores (type normal).
test::file_builder spm_vocab(const std::vector<std::pair<std::string, float>>& pieces, int missing = -1) {
  std::vector<std::string> tokens{"<unk>", "<s>", "</s>"};
  std::vector<float> scores{0, 0, 0};
  std::vector<std::int32_t> types{2, 3, 3};
  add_byte_tokens(tokens, scores, types, missing);
  for (const auto& [t, s] : pieces) {
    tokens.push_back(t);
    scores.push_back(s);
    types.push_back(1);
  }
  test::file_builder fb;
  fb.kv("general.architecture", "llama")
      .kv("tokenizer.ggml.model", "llama")
      .kv_array("tokenizer.ggml.tokens", tokens)
      .kv_array("tokenizer.ggml.scores", scores)
      .kv_array("tokenizer.ggml.token_type", types);
  return fb;
}

constexpr gguf::token_id first_piece = 3 + 256;  // the id of spm_vocab's first piece

gguf::tokenizer build(const test::file_builder& fb) {
  const test::bytes b = fb.build();
  const auto f = test::parse(b);
  REQUIRE(f);
  auto t = gguf::tokenizer::from(*f);
  REQUIRE_MESSAGE(t, gguf::to_string(t.error()));
  return *t;
}

gguf::error build_error(const test::file_builder& fb) {
  const test::bytes b = fb.build();
  const auto f = test::parse(b);
  REQUIRE(f);
  auto t = gguf::tokenizer::from(*f);
  REQUIRE_FALSE(t);
  return t.error();
}

std::string bytes_of(const gguf::tokenizer& t, const ids& v, gguf::decode_options o = {}) {
  auto s = t.decode(v, o);
  REQUIRE(s);
  return *s;
}

}  // namespace

TEST_CASE("SPM: a space before the text, spaces as U+2581, the best-scoring pair merged first") {
  // "▁ab" scores best, so "ab" joins "▁" rather than "▁a" being made first
  const auto t = build(spm_vocab({{"\xE2\x96\x81", -1},
                                  {"a", -2},
                                  {"b", -2},
                                  {"\xE2\x96\x81"
                                   "a",
                                   -3},
                                  {"ab", -1.5f},
                                  {"\xE2\x96\x81"
                                   "ab",
                                   -0.5f}}));
  const gguf::token_id sp = first_piece, a = first_piece + 1, b = first_piece + 2, sp_a = first_piece + 3,
                       sp_ab = first_piece + 5;
  CHECK(t.encode("ab") == ids{1, sp_ab});  // BOS (add_bos is SPM's default), then "▁ab"
  CHECK(t.encode("ab", {false, false}) == ids{sp_ab});
  CHECK(t.encode("a a", {false, false}) == ids{sp_a, sp_a});
  CHECK(t.encode("ba", {false, false}) == ids{sp, b, a});  // "▁b" and "ba" are no tokens
  CHECK(t.encode("", {true, false}) == ids{1});            // an empty text is BOS alone
  CHECK(t.encode("", {false, false}) == ids{});
  // a character that is no token is spelt in bytes: "é" is C3 A9
  CHECK(t.encode("\xC3\xA9", {false, false}) == ids{sp, 3 + 0xC3, 3 + 0xA9});
  // and back: byte tokens are bytes again; the space encode added stays, as in llama.cpp (it strips
  // the first token's space, and that is BOS, which writes nothing; without BOS it strips it)
  CHECK(bytes_of(t, *t.encode("ab a\xC3\xA9")) == " ab a\xC3\xA9");
  CHECK(bytes_of(t, *t.encode("ab a\xC3\xA9"), {true, false}) == " ab a\xC3\xA9");
  CHECK(bytes_of(t, *t.encode("ab a\xC3\xA9", {false, false})) == "ab a\xC3\xA9");
}

TEST_CASE("SPM: control tokens in the text are text unless parse_special, and then split it") {
  auto fb = spm_vocab({{"\xE2\x96\x81", -1}, {"<", -5}, {"s", -5}, {">", -5}, {"x", -2}, {"\xE2\x96\x81x", -1}});
  const auto t = build(fb);
  const gguf::token_id x_sp = first_piece + 5, x = first_piece + 4;
  CHECK(t.encode("x<s>x", {false, true}) == ids{x_sp, 1, x_sp});  // after a special token, a space again
  const ids plain = *t.encode("x<s>x", {false, false});
  CHECK(plain.size() == 5);
  CHECK(plain[0] == x_sp);
  CHECK(plain[4] == x);
  // control tokens write nothing unless unparse_special
  CHECK(bytes_of(t, {1, x}) == "x");
  CHECK(bytes_of(t, {1, x}, {false, true}) == "<s>x");
}

TEST_CASE("the tokenizer refuses, naming the key, a vocabulary llama.cpp would misread") {
  SUBCASE("token types shorter than the token list") {
    auto fb = spm_vocab({{"a", -1}});
    fb.kvs.erase(fb.kvs.begin() + 4);
    fb.kv_array("tokenizer.ggml.token_type", std::vector<std::int32_t>{1, 1});
    const auto e = build_error(fb);
    CHECK(e.code == errc::bad_vocabulary);
    CHECK(e.subject() == "tokenizer.ggml.token_type");
  }
  SUBCASE("SPM without scores") {
    auto fb = spm_vocab({{"a", -1}});
    fb.kvs.erase(fb.kvs.begin() + 3);
    const auto e = build_error(fb);
    CHECK(e.code == errc::bad_vocabulary);
    CHECK(e.subject() == "tokenizer.ggml.scores");
  }
  SUBCASE("a special id past the vocabulary") {
    auto fb = spm_vocab({{"a", -1}});
    fb.kv("tokenizer.ggml.eos_token_id", std::uint32_t{100000});
    const auto e = build_error(fb);
    CHECK(e.code == errc::bad_vocabulary);
    CHECK(e.subject() == "tokenizer.ggml.eos_token_id");
  }
  SUBCASE("the same text twice") {
    const auto e = build_error(spm_vocab({{"a", -1}, {"a", -2}}));
    CHECK(e.code == errc::bad_vocabulary);
    CHECK(std::string(e.subject()).find("tokenizer.ggml.tokens") == 0);
  }
  SUBCASE("a tokenizer model llama.cpp does not know") {
    test::file_builder fb;
    fb.kv("tokenizer.ggml.model", "sentencepiece-v9").kv_array("tokenizer.ggml.tokens", std::vector<std::string>{"a"});
    const auto e = build_error(fb);
    CHECK(e.code == errc::out_of_range);
    CHECK(gguf::to_string(e).find("sentencepiece-v9") != std::string::npos);
  }
  SUBCASE("no tokenizer at all") {
    test::file_builder fb;
    fb.kv("general.architecture", "llama");
    CHECK(build_error(fb).code == errc::not_found);
  }
}

namespace {

// A byte-level BPE vocabulary (GPT-2's byte-to-character map: ' ' is 'Ġ'), every single byte a token.
test::file_builder bpe_vocab(const std::string& pre, const std::vector<std::string>& merges,
                             const std::vector<std::string>& extra, const std::vector<std::int32_t>& extra_types = {}) {
  std::vector<std::string> tokens;
  std::vector<std::int32_t> types;
  for (unsigned b = 0; b < 256; ++b) {
    std::string s;
    gguf::text::append_utf8(s, gguf::text::byte_to_codepoint(static_cast<std::uint8_t>(b)));
    tokens.push_back(s);
    types.push_back(1);
  }
  for (std::size_t i = 0; i < extra.size(); ++i) {
    tokens.push_back(extra[i]);
    types.push_back(i < extra_types.size() ? extra_types[i] : 1);
  }
  test::file_builder fb;
  fb.kv("general.architecture", "gpt2")
      .kv("tokenizer.ggml.model", "gpt2")
      .kv("tokenizer.ggml.pre", pre)
      .kv_array("tokenizer.ggml.tokens", tokens)
      .kv_array("tokenizer.ggml.token_type", types)
      .kv_array("tokenizer.ggml.merges", merges);
  return fb;
}

}  // namespace

TEST_CASE("BPE: words by the pre-tokenizer, bytes merged by rank, the lowest first") {
  // merges: "l l" (rank 0), "h e" (1), "he ll" (2), "Ġ w" (3), "hell o" (4)
  const auto t = build(
      bpe_vocab("gpt-2", {"l l", "h e", "he ll", "\xC4\xA0 w", "hell o"}, {"ll", "he", "hell", "\xC4\xA0w", "hello"}));
  const gguf::token_id ll = 256, hell = 258, sp_w = 259, hello = 260;
  CHECK(t.encode("hello", {false, false}) == ids{hello});
  CHECK(t.encode("hello world", {false, false}) == ids{hello, sp_w, 'o', 'r', 'l', 'd'});
  CHECK(t.encode("helll", {false, false}) == ids{hell, 'l'});    // "l l" is taken leftmost: he|ll|l
  CHECK(t.encode("ll ll", {false, false}) == ids{ll, ' ', ll});  // token b is byte b's character
  CHECK(t.decode(ids{hello, sp_w, 'o'})->compare("hello wo") == 0);
  // the GPT-2 pre-tokenizer keeps "'s" apart and a space with the word after it
  const ids s = *t.encode("he's", {false, false});
  CHECK(s.front() == 257);  // "he"
  CHECK(s.size() == 3);     // he, ', s
}

TEST_CASE("BPE: the pre-tokenizer must be one llama.cpp knows, and it is refused by name") {
  const auto e = build_error(bpe_vocab("my-own-regex", {"l l"}, {"ll"}));
  CHECK(e.code == errc::out_of_range);
  CHECK(gguf::to_string(e).find("my-own-regex") != std::string::npos);
}

TEST_CASE("BPE: merges must name tokens, and the token they make must exist") {
  CHECK(build_error(bpe_vocab("gpt-2", {"l l", "x yz"}, {"ll"})).code == errc::bad_vocabulary);
  CHECK(build_error(bpe_vocab("gpt-2", {"h e"}, {"ll"})).code == errc::bad_vocabulary);  // "he" is none
  CHECK(build_error(bpe_vocab("gpt-2", {"nospace"}, {"ll"})).code == errc::bad_vocabulary);
}

TEST_CASE("a large vocabulary built on two threads is the one built on one") {
  // Byte-level BPE with 58k tokens and 58k merges (enough for threads): the letter pairs, each pair with
  // a letter after it, and 40 000 pairs of pairs, each made by its merge in rank order; then one empty
  // token (its name "[EMPTY_i]" is not in the array's byte count) and one "extra" made by no merge.
  std::vector<std::string> merges, extra;
  std::string letters;
  for (char c = 'a'; c <= 'z'; ++c) letters += c;
  std::vector<std::string> pairs;
  for (char a : letters) {
    for (char b : letters) pairs.push_back({a, b});
  }
  for (const std::string& p : pairs) merges.push_back(p.substr(0, 1) + " " + p.substr(1)), extra.push_back(p);
  for (const std::string& p : pairs) {
    for (char c : letters) merges.push_back(p + " " + c), extra.push_back(p + c);
  }
  for (std::size_t i = 0; extra.size() < 58000; ++i) {
    const std::string& a = pairs[(i * 37) % pairs.size()];
    const std::string& b = pairs[i / pairs.size() + (i % 13)];
    if (a + b == extra.back()) continue;
    merges.push_back(a + " " + b);
    extra.push_back(a + b);
  }
  extra.push_back("");
  const test::bytes file = bpe_vocab("gpt-2", merges, extra).build();
  const auto f = test::parse(file);
  REQUIRE(f);
  auto one = gguf::tokenizer::from(*f, {1});
  auto two = gguf::tokenizer::from(*f, {2});
  REQUIRE_MESSAGE(one, gguf::to_string(one.error()));
  REQUIRE_MESSAGE(two, gguf::to_string(two.error()));
  REQUIRE(one->n_vocab() == two->n_vocab());
  const auto empty = static_cast<gguf::token_id>(one->n_vocab() - 1);
  CHECK(*two->token_to_piece(empty) == "[EMPTY_" + std::to_string(empty) + "]");
  for (gguf::token_id id = 0; id < static_cast<gguf::token_id>(one->n_vocab()); id += 97) {
    CHECK(*one->token_to_piece(id) == *two->token_to_piece(id));
  }
  std::uint64_t x = 12345;
  for (int k = 0; k < 200; ++k) {
    std::string text;
    for (int i = 0; i < 60; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      text += (x >> 60) < 2 ? ' ' : letters[(x >> 33) % 26];
    }
    CHECK(one->encode(text) == *two->encode(text));
  }
  // the merges work: a pair is its token, a pair and a letter theirs
  CHECK(two->encode("aa", {false, false}) == ids{256});
  CHECK(two->encode("aab", {false, false}) == ids{256 + 676 + 1});
}

TEST_CASE("decode: clean_spaces removes the spaces BPE tokenizers put before punctuation and contractions") {
  const auto t = build(bpe_vocab("gpt-2", {}, {}));
  const auto bytes = [&](std::string_view s) {
    ids v;
    for (unsigned char c : s) v.push_back(c);
    return *t.decode(v);
  };
  CHECK(bytes("a , b . c ? d !") == "a, b. c? d!");
  CHECK(bytes("it ' s") == "it's");  // " ' " loses both spaces
  CHECK(bytes("he 's , they 're , I 'm , we 've") == "he's, they're, I'm, we've");
  CHECK(bytes("don 't , we 'll , he 'd") == "don 't, we 'll, he 'd");  // as llama.cpp: left as they are
}

TEST_CASE("decode: an id outside the vocabulary is an error, not a crash") {
  const auto t = build(spm_vocab({{"a", -1}}));
  CHECK(t.decode(ids{1, 100000}).error().code == errc::out_of_range);
  CHECK(t.decode(ids{-5}).error().code == errc::out_of_range);
  CHECK(t.token_to_piece(100000).error().code == errc::out_of_range);
}

TEST_CASE("any bytes are safe to tokenize") {
  const auto spm = build(spm_vocab({{"\xE2\x96\x81", -1}, {"a", -2}}));  // with a byte token for each byte
  const auto bpe = build(bpe_vocab("gpt-2", {"l l"}, {"ll"}));
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (const std::string& s : {all, std::string("\xF0\x9F"), std::string("\xE2\x96"), std::string(300, ' ') + "\xC3"}) {
    const auto a = spm.encode(s), b = bpe.encode(s, {false, false});
    REQUIRE(a);
    REQUIRE(b);
    CHECK(!a->empty());
    CHECK(!b->empty());
  }
}

TEST_CASE("nothing is dropped: where llama.cpp aborts, the nearest text it tokenizes, or an error") {
  SUBCASE("above U+10FFFF (BPE, WPM, PLaMo-2 abort): the lead byte is invalid, U+FFFD, as F8..FF are") {
    const auto bpe = build(bpe_vocab("gpt-2", {}, {}));
    // llama.cpp gives FF FF FF FF four U+FFFD (EF BF BD, as byte tokens); F4 90 80 80 is the same
    CHECK(bpe.encode("\xF4\x90\x80\x80 beyond", {false, false}) ==
          *bpe.encode("\xFF\xFF\xFF\xFF beyond", {false, false}));
    CHECK(bpe.encode("\xF7\xBF\xBF\xBF", {false, false}) == *bpe.encode("\xFF\xFF\xFF\xFF", {false, false}));
    CHECK(bpe.encode("\xF4\x90\x80\x80", {false, false})->size() == 12);
    // U+10FFFF itself is a code point: four byte tokens
    CHECK(bpe.encode("\xF4\x8F\xBF\xBF", {false, false})->size() == 4);
  }
  SUBCASE("an SPM vocabulary without the byte token a character needs: an error naming byte and vocabulary") {
    auto fb = spm_vocab({{"\xE2\x96\x81", -1}, {"a", -2}}, 0xC3);
    fb.kv("general.name", "tiny-spm");
    const auto t = build(fb);
    const auto e = t.encode(
        "a\xC3\xA9"
        "a",
        {false, false});
    REQUIRE_FALSE(e);
    CHECK(e.error().code == errc::bad_vocabulary);
    CHECK(e.error().subject() == "<0xC3> in tiny-spm");
    // appending: `out` is left as it was
    ids out{7, 8};
    CHECK_FALSE(t.encode("\xC3\xA9", out, {false, false}));
    CHECK(out == ids{7, 8});
    CHECK(t.encode("aa", {false, false}));  // what the vocabulary has is fine
  }
}

#ifdef GGUF_SHARED_DIR
TEST_CASE("real vocabularies: the ids llama.cpp gives") {
  const std::filesystem::path dir = std::filesystem::path(GGUF_SHARED_DIR) / "data" / "vocab";
  const auto tok = [&](const char* name) {
    auto f = gguf::open(dir / name);
    REQUIRE(f);
    auto t = gguf::tokenizer::from(*f);
    REQUIRE_MESSAGE(t, gguf::to_string(t.error()));
    return *t;
  };
  const std::string text = "Hello world, this is a test. \xE4\xBD\xA0\xE5\xA5\xBD \xC3\xBF \xF0\x9F\x98\x80  spaces";
  CHECK(tok("ggml-vocab-llama-spm.gguf").encode(text) == ids{1,     15043, 3186,  29892, 445,   338,   263,
                                                             1243,  29889, 29871, 30919, 31076, 29871, 30370,
                                                             29871, 243,   162,   155,   131,   29871, 8162});
  CHECK(tok("ggml-vocab-baichuan.gguf").encode(text) ==
        ids{1, 24568, 1275, 31125, 828, 715, 650, 1801, 79, 9875, 31213, 31106, 36586, 31106, 36301, 31106, 7707});
}
#endif
