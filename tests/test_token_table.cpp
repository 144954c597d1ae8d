// The tokenizers' lookup structures: texts to ids, merge pairs to ranks, and the merges as a vocabulary
// lists them ("first second", split at the first space after byte 0, as llama.cpp splits them).
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/text/merges.hpp"
#include "gguf/text/token_table.hpp"
#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_token_table {

using namespace gguf::text;

namespace {

// Every text of 0 to 40 bytes from a fixed random stream, some with the bytes the hash's loads overlap.
std::vector<std::string> sample_texts() {
  std::mt19937 rng(7);
  std::vector<std::string> out;
  for (std::size_t n = 0; n <= 40; ++n) {
    for (int k = 0; k < 8; ++k) {
      std::string s(n, '\0');
      for (char& c : s) c = static_cast<char>(rng() & 0xFF);
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a text hashes the same read exactly or read 16 bytes at a time") {
  for (const std::string& s : sample_texts()) {
    if (s.size() > 16) continue;
    std::string padded = s + std::string(16, '\x5A');  // bytes past the end that must not count
    CHECK(detail::hash_bytes(s.data(), s.size()) == detail::hash_bytes_padded(padded.data(), s.size()));
  }
}

TEST_CASE("two texts of up to 16 bytes compare equal read 16 bytes at a time exactly when they are") {
  for (const std::string& s : sample_texts()) {
    if (s.size() > 16) continue;
    const std::string a = s + std::string(16, '\x5A'), b = s + std::string(16, '\xA5');  // differ past the end
    CHECK(detail::equal_padded(a.data(), b.data(), s.size()));
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::string c = b;
      c[i] = static_cast<char>(c[i] ^ 0x80);
      CHECK_FALSE(detail::equal_padded(a.data(), c.data(), s.size()));
      CHECK(detail::equal_padded(a.data(), c.data(), i));  // the bytes before it still agree
    }
  }
}

TEST_CASE("texts that differ in one byte or in length hash differently") {
  const std::vector<std::string> texts = sample_texts();
  for (const std::string& s : texts) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::string t = s;
      t[i] = static_cast<char>(t[i] ^ 1);
      CHECK(detail::hash_bytes(s.data(), s.size()) != detail::hash_bytes(t.data(), t.size()));
    }
    const std::string longer = s + '\0';
    CHECK(detail::hash_bytes(s.data(), s.size()) != detail::hash_bytes(longer.data(), longer.size()));
  }
}

TEST_CASE("a merge splits at its first space after byte 0") {
  const auto at = [](std::string s) {
    s.resize(s.size() + 16, 'x');
    return detail::find_space(s.data());
  };
  CHECK(at("a b") == 1);
  CHECK(at("  b") == 1);  // a first half that is a space
  CHECK(at("abcdefgh ij") == 8);
  CHECK(at("abcdefghijklmno p") == 15);
  CHECK(at("abcdefghijklmnop q") == 16);  // past the 16 bytes looked at: the caller goes on
  CHECK(at(" abc") == 16);                // byte 0 is never the separator
}

TEST_CASE("the text index finds every token by its text, and the first of two equal texts") {
  const std::vector<std::string> texts = sample_texts();
  token_table t;
  std::size_t bytes = 0;
  for (const std::string& s : texts) bytes += s.size();
  t.reserve(texts.size(), bytes);
  const token_id dup = t.append_all([&](auto&& add) {
    for (const std::string& s : texts) add(s, false);
  });
  CHECK(dup == 1);  // the empty text, 8 times: the second one repeats the first
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CHECK(t.text(static_cast<token_id>(i)) == texts[i]);
    const token_id want = texts[i].empty() ? 0 : static_cast<token_id>(i);
    CHECK(t.find(texts[i]) == want);
    const std::string padded = texts[i] + std::string(16, '\x5A');
    CHECK(t.find_padded({padded.data(), texts[i].size()}, detail::hash_bytes(texts[i].data(), texts[i].size())) ==
          want);
  }
  CHECK(t.find("no such text at all, not in the sample") == no_token);
}

TEST_CASE("append_all names the first token that repeats an earlier text, and an estimate too small grows") {
  token_table t;
  t.reserve(4, 2);  // fewer bytes than the texts have
  const token_id dup = t.append_all([&](auto&& add) {
    add(std::string_view("alpha"), false);
    add(std::string_view("beta"), false);
    add(std::string_view("alpha"), false);
    add(std::string_view("gamma"), false);
  });
  CHECK(dup == 2);
  CHECK(t.text(3) == "gamma");
  CHECK(t.find("alpha") == 0);
  CHECK(t.find("gamma") == 3);
}

TEST_CASE("a merge table gives each pair its lowest rank, added in batches") {
  // 50 000 merges over few tokens: many pairs repeat, and long probe runs form
  std::mt19937 rng(3);
  const std::size_t n = 50000;
  merge_table t(n);
  std::vector<gguf::text::merge_ids> batch;
  std::vector<std::int32_t> seen(300 * 300, -1);  // the expected winner per pair
  for (std::int32_t rank = 0; rank < static_cast<std::int32_t>(n); ++rank) {
    // the first 20 000 merges all of one pair's neighbours
    const token_id l = rank < 20000 ? static_cast<token_id>(rank % 7) : static_cast<token_id>(rng() % 300);
    const token_id r = rank < 20000 ? 5 : static_cast<token_id>(rng() % 300);
    batch.push_back({l, r, static_cast<token_id>(rank + 1000)});
    if (batch.size() == 777) t.add(batch), batch.clear();
    auto& s = seen[static_cast<std::size_t>(l) * 300 + static_cast<std::size_t>(r)];
    if (s < 0) s = rank;
  }
  t.add(batch);
  std::size_t pairs = 0;
  for (token_id l = 0; l < 300; ++l) {
    for (token_id r = 0; r < 300; ++r) {
      const std::int32_t want = seen[static_cast<std::size_t>(l) * 300 + static_cast<std::size_t>(r)];
      const merge_table::merge m = t.find(l, r);
      CHECK(m.rank == want);
      if (want >= 0) {
        CHECK(m.result == want + 1000);
        ++pairs;
      }
    }
  }
  CHECK(t.size() == pairs);
  CHECK(t.find(-1, 0).rank == -1);
  CHECK(merge_table().find(0, 0).rank == -1);
}

TEST_CASE("tokenizer.ggml.merges is read and resolved to ids, the first bad merge named") {
  const auto vocabulary_file = [](const std::vector<std::string>& merges) {
    test::file_builder fb;
    fb.kv_array("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b", "c", "ab", "abc", "bc"})
        .kv_array("tokenizer.ggml.merges", merges);
    return fb.build();
  };
  const auto load = [](const test::bytes& bytes) -> gguf::result<merge_table> {
    const auto f = test::parse(bytes);
    REQUIRE(f);
    auto a = f->metadata().get<gguf::array_view>("tokenizer.ggml.merges");
    REQUIRE(a);
    token_table t;
    auto tokens = f->metadata().get<gguf::array_view>("tokenizer.ggml.tokens");
    REQUIRE(tokens);
    t.reserve(static_cast<std::size_t>(tokens->size()), static_cast<std::size_t>(tokens->text_bytes()));
    t.append_all([&](auto&& add) {
      for (std::string_view s : *tokens->as<std::string_view>()) add(s, false);
    });
    return detail::load_merges(*a, t);
  };
  {
    auto m = load(vocabulary_file({"a b", "ab c", "b c"}));
    REQUIRE(m);
    CHECK(m->find(0, 1).rank == 0);
    CHECK(m->find(0, 1).result == 3);
    CHECK(m->find(3, 2).result == 4);
    CHECK(m->find(1, 2).rank == 2);
    CHECK(m->find(1, 0).rank == -1);
  }
  {
    auto m = load(vocabulary_file({"a b", "a d", "nospace"}));
    REQUIRE_FALSE(m);
    CHECK(m.error().code == gguf::errc::bad_vocabulary);
    CHECK(gguf::to_string(m.error()).find("a d") != std::string::npos);  // the first bad one
  }
  {
    auto m = load(vocabulary_file({"a b", "nospace", "a d"}));
    REQUIRE_FALSE(m);
    CHECK(gguf::to_string(m.error()).find("nospace") != std::string::npos);
  }
}

}  // namespace test_token_table
