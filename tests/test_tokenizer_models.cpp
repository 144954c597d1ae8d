// The WPM, UGM, RWKV and PLaMo-2 encoders: tiny vocabularies written in memory, with ids checked by hand
// and against llama.cpp (tests/oracle: ggml_oracle.py tokenize --no-add-special on the same files), and
// the real BERT vocabulary of the shared corpus when it is there.
#include <doctest/doctest.h>

#include <gguf/text/plamo2.hpp>
#include <gguf/text/rwkv.hpp>
#include <gguf/text/ugm.hpp>
#include <gguf/text/vocabulary.hpp>
#include <gguf/text/wpm.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifdef GGUF_SHARED_DIR
#include <filesystem>

#include <gguf/open.hpp>
#endif

#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_tokenizer_models {

using gguf::errc;
using gguf::text::token_id;
using gguf::text::vocabulary;
using ids = std::vector<token_id>;

namespace {

// llama_token_type values of tokenizer.ggml.token_type
constexpr std::int32_t normal = 1, unknown = 2, control = 3, user_defined = 4, byte = 6;

struct token {
  std::string text;
  float score = 0;
  std::int32_t type = normal;
};

// A vocabulary as load_vocabulary reads it from a file with these tokens and keys.
vocabulary load(std::string_view model, const std::vector<token>& tokens, test::file_builder fb = {}) {
  std::vector<std::string> texts;
  std::vector<float> scores;
  std::vector<std::int32_t> types;
  for (const token& t : tokens) texts.push_back(t.text), scores.push_back(t.score), types.push_back(t.type);
  fb.kv("general.architecture", "test");
  fb.kv("tokenizer.ggml.model", model);
  fb.kv_array("tokenizer.ggml.tokens", texts);
  fb.kv_array("tokenizer.ggml.scores", scores);
  fb.kv_array("tokenizer.ggml.token_type", types);
  const test::bytes b = fb.build();
  const auto f = test::parse(b);
  REQUIRE(f.has_value());
  auto v = gguf::text::load_vocabulary(f->metadata());
  REQUIRE(v.has_value());
  return std::move(*v);
}

// A precompiled charsmap as SentencePiece lays it out: the blob size, the XOR-compressed double array
// (each trie node with a 256-unit block of its own, so every transition stays in the array), then the
// NUL-terminated replacements.
std::vector<std::uint8_t> charsmap(const std::vector<std::pair<std::string, std::string>>& map) {
  struct node {
    std::map<unsigned char, std::unique_ptr<node>> children;
    int replacement = -1;
  };
  node root;
  std::string strings;
  for (const auto& [from, to] : map) {
    node* n = &root;
    for (const char c : from) {
      auto& child = n->children[static_cast<unsigned char>(c)];
      if (!child) child = std::make_unique<node>();
      n = child.get();
    }
    n->replacement = static_cast<int>(strings.size());
    strings += to;
    strings.push_back('\0');
  }
  std::vector<std::uint32_t> units(256, 0);
  const auto place = [&](auto&& self, const node& n, std::uint32_t at, unsigned char label) -> void {
    const auto block = static_cast<std::uint32_t>(units.size());
    units.resize(units.size() + 256, 0);
    units[at] = ((at ^ block) << 10) | (n.replacement >= 0 ? 1u << 8 : 0u) | label;
    if (n.replacement >= 0) units[block] = (1u << 31) | static_cast<std::uint32_t>(n.replacement);
    for (const auto& [c, child] : n.children) self(self, *child, block ^ c, c);
  };
  place(place, root, 0, 0);
  std::vector<std::uint8_t> out;
  const auto put = [&](std::uint32_t x) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
  };
  put(static_cast<std::uint32_t>(units.size() * 4));
  for (const std::uint32_t u : units) put(u);
  out.insert(out.end(), strings.begin(), strings.end());
  return out;
}

template <class Encoder>
ids encode(const Encoder& e, std::string_view text) {
  ids out;
  e.encode(text, out);
  return out;
}

const std::vector<token> wpm_tokens = {{"[UNK]", 0, control},
                                       {"\xE2\x96\x81hello"},
                                       {"\xE2\x96\x81world"},
                                       {"!"},
                                       {"\xE2\x96\x81!"},
                                       {"s"},
                                       {"\xE2\x96\x81h"},
                                       {"ello"},
                                       {"\xE2\x96\x81\xE4\xB8\xAD"},
                                       {"\xE2\x96\x81"
                                        "e"},
                                       {"[CLS]", 0, control},
                                       {"[SEP]", 0, control}};

test::file_builder wpm_keys() {
  test::file_builder fb;
  fb.kv("tokenizer.ggml.unknown_token_id", std::uint32_t{0});
  fb.kv("tokenizer.ggml.seperator_token_id", std::uint32_t{11});
  fb.kv("tokenizer.ggml.bos_token_id", std::uint32_t{10});
  return fb;
}

}  // namespace

TEST_CASE("wpm: words cut into the longest tokens, lower-cased and without accents, as llama.cpp") {
  const vocabulary v = load("bert", wpm_tokens, wpm_keys());
  CHECK(v.lowercase);  // llama.cpp's default without tokenizer.ggml.normalizer.lowercase
  CHECK(v.strip_accents);
  const gguf::text::wpm_encoder e(v);
  CHECK(encode(e, "Hello World!") == ids{1, 2, 4});  // "!" alone is the word "▁!"
  CHECK(encode(e, "Hellos") == ids{1, 5});
  CHECK(encode(e, "h\xC3\xA9llo") == ids{1});  // NFD, accent dropped
  CHECK(encode(e, "xyz") == ids{0});           // no token starts it: unknown
  CHECK(encode(e, "hellox") == ids{0});        // "▁hello" then nothing for "x": the whole word is unknown
  CHECK(encode(e, "\xE4\xB8\xAD") == ids{8});  // a CJK ideograph is a word of its own
  CHECK(encode(e, "  ").empty());
  CHECK(encode(e, "\xC3\xA9!") == ids{9, 4});
  CHECK(encode(e, std::string_view("hello\0world", 11)) == ids{0});  // U+0000 dropped: "helloworld"
  CHECK(encode(e, "HELLO\xE3\x80\x80world") == ids{1, 2});           // U+3000 is whitespace
  CHECK(encode(e, "\xF4\x90\x80\x80").empty());                      // above U+10FFFF (llama.cpp throws): left out
}

TEST_CASE("wpm: tokenizer.ggml.normalizer.lowercase false keeps the case") {
  test::file_builder fb = wpm_keys();
  fb.kv("tokenizer.ggml.normalizer.lowercase", false);
  const vocabulary v = load("bert", wpm_tokens, fb);
  CHECK_FALSE(v.lowercase);
  CHECK_FALSE(v.strip_accents);
  const gguf::text::wpm_encoder e(v);
  CHECK(encode(e, "Hello world") == ids{0, 2});
  CHECK(encode(e, "h\xC3\xA9llo") == ids{0});
}

namespace {

const std::vector<token> ugm_tokens = {{"<pad>", 0, control},
                                       {"</s>", 0, control},
                                       {"<unk>", 0, unknown},
                                       {"\xE2\x96\x81", -2},
                                       {"\xE2\x96\x81"
                                        "a",
                                        -3},
                                       {"a", -2},
                                       {"b", -2},
                                       {"ab", -3},
                                       {"X", -1},
                                       {"<u>", -100, user_defined},
                                       {"c", -1.5f}};

vocabulary ugm_vocab(std::vector<std::uint8_t> cm) {
  test::file_builder fb;
  fb.kv("tokenizer.ggml.add_space_prefix", true);
  fb.kv_array("tokenizer.ggml.precompiled_charsmap", std::move(cm));
  return load("t5", ugm_tokens, fb);
}

}  // namespace

TEST_CASE("ugm: normalization and Viterbi as llama.cpp") {
  const vocabulary v =
      ugm_vocab(charsmap({{"\xEF\xBC\xA1", "a"}, {"\xEF\xBD\x82", "b"}, {"\xE3\x80\x80", " "}, {"<", "c"}}));
  auto e = gguf::text::ugm_encoder::build(v);
  REQUIRE(e.has_value());
  std::string norm;
  e->normalize("\xEF\xBC\xA1 \xEF\xBD\x82", norm);
  CHECK(norm ==
        "\xE2\x96\x81"
        "a\xE2\x96\x81"
        "b");
  // "▁a"+"b" and "▁"+"ab" both score -5: the first found (at the earlier start) is kept
  CHECK(encode(*e, "ab") == ids{3, 7});
  CHECK(encode(*e, "\xEF\xBC\xA1 \xEF\xBD\x82") == ids{4, 3, 6});  // full-width letters through the charsmap
  CHECK(encode(*e, "abc") == ids{3, 7, 10});
  CHECK(encode(*e, "xy") == ids{3, 2});  // two unknown characters give one unknown token
  // "<" starts the user-defined "<u>": llama.cpp copies that path as it is, so the charsmap's "<" → "c"
  // never applies
  CHECK(encode(*e, "<") == ids{3, 2});
  CHECK(encode(*e, "a<") == ids{4, 2});
  CHECK(encode(*e,
               "\xEF\xBC\xA1\xE3\x80\x80\xE3\x80\x80"
               "b") == ids{4, 3, 3, 6});
  CHECK(encode(*e,
               "a\xFF"
               "b") == ids{4, 2, 6});  // an invalid byte is U+FFFD, unknown
  CHECK(encode(*e, "").empty());
}

TEST_CASE("ugm: a charsmap llama.cpp would index out of bounds is refused at build") {
  std::vector<std::uint8_t> cm = charsmap({{"a", "b"}});
  // the root's BASE (unit 0) pointing past the array: every transition from it is out of bounds
  cm[4 + 1] = 0xFF, cm[4 + 2] = 0xFF, cm[4 + 3] = 0x3F;
  const vocabulary v = ugm_vocab(cm);
  const auto e = gguf::text::ugm_encoder::build(v);
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().code == errc::bad_vocabulary);
  CHECK(e.error().subject() == "tokenizer.ggml.precompiled_charsmap");

  std::vector<std::uint8_t> cut = charsmap({{"a", "b"}});
  cut.pop_back();  // the replacement's NUL
  const auto e2 = gguf::text::ugm_encoder::build(ugm_vocab(cut));
  REQUIRE_FALSE(e2.has_value());
  CHECK(e2.error().subject() == "tokenizer.ggml.precompiled_charsmap");
}

TEST_CASE("rwkv: escapes unescaped as llama.cpp, greedy longest match") {
  using gguf::text::rwkv_unescape;
  CHECK(rwkv_unescape("\\x41") == "A");
  CHECK(rwkv_unescape("\\t\\r\\n") == "\t\r\n");
  CHECK(rwkv_unescape("\\q\\\\") == "q\\");
  CHECK(rwkv_unescape("\\xAB") == "\"");  // upper-case hex read as c - '0': 17 * 16 + 18 = 0x122 → 0x22
  CHECK(rwkv_unescape("ab\\") == "ab");
  CHECK(rwkv_unescape("\\x4").empty());

  const std::vector<token> tokens = {{"a"}, {"b"}, {"ab"}, {"abc"}, {"\\n"}, {"\\xe4\\xb8\\xad"}, {"\\xe4"}, {" "}};
  const vocabulary v = load("rwkv", tokens);
  const gguf::text::rwkv_encoder e(v);
  CHECK(encode(e, "abcab\n\xE4\xB8\xAD x") == ids{3, 2, 4, 5, 7, -1});  // no unknown token: -1, as llama.cpp
  CHECK(encode(e, "ab\xE4X") == ids{2, 6, -1});
  CHECK(encode(e, "ba") == ids{1, 0});
}

TEST_CASE("plamo2: the table-driven dynamic programme, bytes for the rest") {
  std::vector<token> tokens = {{"<|plamo:unk|>", 0, unknown},
                               {"<|plamo:bos|>", 0, control},
                               {"<|plamo:eos|>", 0, control},
                               {"<|plamo:pad|>", 0, control}};
  static constexpr char hex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) tokens.push_back({std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">", 0, byte});
  tokens.push_back({"a", -1});
  tokens.push_back({"b", -1});
  tokens.push_back({"ab", -1.5f});
  tokens.push_back({"\xC3\xA9", -2});
  {
    auto e = gguf::text::plamo2_encoder::build(load("plamo2", tokens));
    REQUIRE(e.has_value());
    CHECK(encode(*e, "ab") == ids{262});
    CHECK(encode(*e, "abz") == ids{262, 4 + 'z'});
    CHECK(encode(*e, "\xC3\xA9") == ids{263});
    CHECK(encode(*e, "\xC3\xBC") == ids{4 + 0xC3, 4 + 0xBC});  // ü: its UTF-8 bytes
    CHECK(encode(*e,
                 "\xEF\xBB\xBF"
                 "a") == ids{260});  // a leading BOM is dropped
    CHECK(encode(*e, "ba") == ids{261, 260});
  }
  tokens[4 + 0x41].type = normal;  // "<0x41>" is no byte token any more
  const auto e = gguf::text::plamo2_encoder::build(load("plamo2", tokens));
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().code == errc::bad_vocabulary);
  CHECK(std::string_view(e.error().subject()).find("<0x41>") != std::string_view::npos);
}

#ifdef GGUF_SHARED_DIR
TEST_CASE("wpm: the real BERT vocabulary (bge) gives llama.cpp's ids") {
  const auto f = gguf::open(std::filesystem::path(GGUF_SHARED_DIR) / "data" / "vocab" / "ggml-vocab-bert-bge.gguf");
  REQUIRE(f.has_value());
  const auto v = gguf::text::load_vocabulary(f->metadata());
  REQUIRE(v.has_value());
  const gguf::text::wpm_encoder e(*v);
  CHECK(encode(e, "Hello, World!") == ids{7592, 1010, 2088, 999});
  CHECK(encode(e,
               "The caf\xC3\xA9\xE2\x80\x99s na\xC3\xAFve r\xC3\xA9sum\xC3\xA9 \xE2\x80\x94 \xE6\x9D\xB1\xE4\xBA\xAC "
               "2024.") == ids{1996, 7668, 1521, 1055, 15743, 13746, 1517, 1879, 1755, 16798, 2549, 1012});
  CHECK(encode(e, "  multiple   spaces\tand\nnewlines  ") == ids{3674, 7258, 1998, 2047, 12735});
  CHECK(encode(e, "supercalifragilistic") == ids{3565, 9289, 10128, 29181, 24411, 4588});
  CHECK(encode(e, "invalid \xFF\xFE bytes") == ids{19528, 27507});
}
#endif

}  // namespace test_tokenizer_models
