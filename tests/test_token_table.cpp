// The tokenizers' lookup structures: texts to ids, merge pairs to ranks, and the merges as a vocabulary
// lists them ("first second", split at the first space after byte 0, as llama.cpp splits them).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/detail/thread_team.hpp"
#include "gguf/text/codepoints.hpp"
#include "gguf/text/merges.hpp"
#include "gguf/text/pair_filter.hpp"
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
  std::size_t bytes = 0;
  for (const std::string& s : texts) bytes += s.size();
  token_table t(texts.size(), bytes);
  t.write(0, 0, bytes, [&](auto&& add) {
    for (const std::string& s : texts) add(s, false);
  });
  CHECK(t.index() == 1);  // the empty text, 8 times: the second one repeats the first
  std::size_t longest = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CHECK(t.text(static_cast<token_id>(i)) == texts[i]);
    const token_id want = texts[i].empty() ? 0 : static_cast<token_id>(i);
    CHECK(t.find(texts[i]) == want);
    const std::string padded = texts[i] + std::string(16, '\x5A');
    CHECK(t.find_padded({padded.data(), texts[i].size()}, detail::hash_bytes(texts[i].data(), texts[i].size())) ==
          want);
    longest = std::max(longest, texts[i].size());
  }
  CHECK(t.max_length() == longest);
  CHECK(t.find("no such text at all, not in the sample") == no_token);
}

TEST_CASE("texts written in stretches, each copied 16 bytes at a time where it may, are the texts") {
  // readable texts inside a larger buffer: a short text's copy runs past its end, into the next text's
  // room, which the next text then fills; the last text of a stretch is copied exactly
  const std::string source =
      "alpha"
      "be"
      "gamma"
      "de"
      "epsilonzeta"
      "eta" +
      std::string(16, '#');
  const std::vector<std::string_view> texts = {
      std::string_view(source).substr(0, 5),   std::string_view(source).substr(5, 2),
      std::string_view(source).substr(7, 5),   std::string_view(source).substr(12, 2),
      std::string_view(source).substr(14, 11), std::string_view(source).substr(25, 3)};
  token_table t(texts.size(), 28);
  // the second stretch first, as another thread may write it
  CHECK(t.write(3, 12, 28, [&](auto&& add) {
    for (std::size_t i = 3; i < 6; ++i) add(texts[i], true);
  }) == 28);
  CHECK(t.write(0, 0, 12, [&](auto&& add) {
    for (std::size_t i = 0; i < 3; ++i) add(texts[i], true);
  }) == 12);
  CHECK(t.index() == no_token);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CHECK(t.text(static_cast<token_id>(i)) == texts[i]);
    CHECK(t.find(texts[i]) == static_cast<token_id>(i));
  }
}

TEST_CASE("index names the first token whose text repeats an earlier one's") {
  const std::vector<std::string> texts = {"alpha", "beta", "alpha", "gamma", "beta"};
  token_table t(texts.size(), 22);
  t.write(0, 0, 22, [&](auto&& add) {
    for (const std::string& s : texts) add(s, false);
  });
  CHECK(t.index() == 2);
  CHECK(t.text(3) == "gamma");
  CHECK(t.find("alpha") == 0);
  CHECK(t.find("beta") == 1);
  CHECK(t.find("gamma") == 3);
}

TEST_CASE("a large table indexed by two threads finds what one thread's finds") {
  // 60 000 texts, some repeated: each thread fills the index's slots of its own half
  std::vector<std::string> texts;
  for (int i = 0; i < 60000; ++i) texts.push_back("t" + std::to_string(i % 50000 == i ? i : i - 50000) + "x");
  std::size_t bytes = 0;
  for (const std::string& s : texts) bytes += s.size();
  const auto build = [&](unsigned threads, token_id& dup) {
    gguf::detail::thread_team team(threads);
    token_table t(texts.size(), bytes);
    t.write(0, 0, bytes, [&](auto&& add) {
      for (const std::string& s : texts) add(s, false);
    });
    dup = t.index(team);
    return t;
  };
  token_id dup1 = 0, dup2 = 0;
  const token_table one = build(1, dup1), two = build(2, dup2);
  CHECK(dup1 == 50000);
  CHECK(dup2 == 50000);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const token_id want = static_cast<token_id>(i < 50000 ? i : i - 50000);
    CHECK(one.find(texts[i]) == want);
    CHECK(two.find(texts[i]) == want);
  }
  CHECK(two.find("t50000x") == no_token);
}

TEST_CASE("a slot index holds every value when the hashes crowd at the ends of the threads' stretches") {
  // Hostile hashes: every key's home is one of the last slots of the first stretch or of the table, so
  // that probes run past a stretch's end (they are inserted afterwards, in order) or wrap around.
  const std::size_t n = 40000;
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = i % 30000;  // 10 000 repeats
  const auto hash_of = [&](std::size_t v) -> std::uint64_t {
    const std::uint64_t k = keys[v];
    const std::uint64_t near = (k % 2 == 0) ? 0x7FFFFFFFFFFFFFFFull : 0xFFFFFFFFFFFFFFFFull;  // ends of halves
    return near - (k % 64) * 0x0000100000000000ull - (k * 0x9E3779B9ull % 0xFFFFFull);
  };
  for (unsigned threads : {1u, 2u}) {
    gguf::detail::thread_team team(threads);
    detail::slot_index::repeats r;
    const detail::slot_index index = detail::slot_index::build(
        n, hash_of, [&](std::uint32_t a, std::size_t b) { return keys[a] == keys[b]; }, team, r);
    CHECK(r.count == 10000);
    CHECK(r.first == 30000);
    for (std::size_t v = 0; v < n; ++v) {
      const std::uint32_t found = index.find(hash_of(v), [&](std::uint32_t a) { return keys[a] == keys[v]; });
      CHECK(found == static_cast<std::uint32_t>(v % 30000));
    }
  }
}

TEST_CASE("a merge table gives each pair its lowest rank, indexed by one thread or two") {
  // 50 000 merges over few tokens: many pairs repeat, and long probe runs form
  std::mt19937 rng(3);
  const std::size_t n = 50000;
  std::vector<gguf::text::merge_ids> by_rank;
  std::vector<std::int32_t> seen(300 * 300, -1);  // the expected winner per pair
  for (std::int32_t rank = 0; rank < static_cast<std::int32_t>(n); ++rank) {
    // the first 20 000 merges all of one pair's neighbours
    const token_id l = rank < 20000 ? static_cast<token_id>(rank % 7) : static_cast<token_id>(rng() % 300);
    const token_id r = rank < 20000 ? 5 : static_cast<token_id>(rng() % 300);
    by_rank.push_back({l, r, static_cast<token_id>(rank + 1000)});
    auto& s = seen[static_cast<std::size_t>(l) * 300 + static_cast<std::size_t>(r)];
    if (s < 0) s = rank;
  }
  gguf::detail::thread_team team(2);
  auto copy = std::make_unique_for_overwrite<gguf::text::merge_ids[]>(n);
  std::copy(by_rank.begin(), by_rank.end(), copy.get());
  const merge_table one(by_rank), two(std::move(copy), n, team);
  std::size_t pairs = 0;
  for (token_id l = 0; l < 300; ++l) {
    for (token_id r = 0; r < 300; ++r) {
      const std::int32_t want = seen[static_cast<std::size_t>(l) * 300 + static_cast<std::size_t>(r)];
      for (const merge_table* t : {&one, &two}) {
        const merge_table::merge m = t->find(l, r);
        CHECK(m.rank == want);
        if (want >= 0) CHECK(m.result == want + 1000);
      }
      pairs += want >= 0;
    }
  }
  CHECK(one.size() == pairs);
  CHECK(two.size() == pairs);
  CHECK(one.find(-1, 0).rank == -1);
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
    auto tokens = f->metadata().get<gguf::array_view>("tokenizer.ggml.tokens");
    REQUIRE(tokens);
    const auto text_bytes = static_cast<std::size_t>(tokens->text_bytes());
    token_table t(static_cast<std::size_t>(tokens->size()), text_bytes);
    t.write(0, 0, text_bytes, [&](auto&& add) {
      for (std::string_view s : *tokens->as<std::string_view>()) add(s, false);
    });
    t.index();
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

TEST_CASE("merges resolved by two threads, a chunk at a time, name the first bad merge") {
  // 40 000 merges "a<i> b" of tokens "b" and "a<i>" making "a<i>b": twenty chunks, taken in turn
  const std::size_t n = 40000;
  std::vector<std::string> tokens = {"b"};
  std::vector<std::string> merges;
  for (std::size_t i = 0; i < n; ++i) {
    tokens.push_back("a" + std::to_string(i));
    tokens.push_back("a" + std::to_string(i) + "b");
    merges.push_back("a" + std::to_string(i) + " b");
  }
  const auto load = [&](const std::vector<std::string>& m, unsigned threads) -> gguf::result<merge_table> {
    test::file_builder fb;
    fb.kv_array("tokenizer.ggml.tokens", tokens).kv_array("tokenizer.ggml.merges", m);
    const test::bytes bytes = fb.build();
    const auto f = test::parse(bytes);
    REQUIRE(f);
    auto a = f->metadata().get<gguf::array_view>("tokenizer.ggml.merges");
    auto ts = f->metadata().get<gguf::array_view>("tokenizer.ggml.tokens");
    REQUIRE(a);
    REQUIRE(ts);
    gguf::detail::thread_team team(threads);
    const auto text_bytes = static_cast<std::size_t>(ts->text_bytes());
    token_table t(static_cast<std::size_t>(ts->size()), text_bytes);
    t.write(0, 0, text_bytes, [&](auto&& add) {
      for (std::string_view s : *ts->as<std::string_view>()) add(s, false);
    });
    REQUIRE(t.index(team) == no_token);
    return detail::load_merges(*a, t, team);
  };
  for (unsigned threads : {1u, 2u}) {
    auto good = load(merges, threads);
    REQUIRE(good);
    CHECK(good->size() == n);
    for (std::size_t i = 0; i < n; i += 997) {
      const merge_table::merge m = good->find(static_cast<token_id>(1 + 2 * i), 0);
      CHECK(m.rank == static_cast<std::int32_t>(i));
      CHECK(m.result == static_cast<token_id>(2 + 2 * i));
    }
    std::vector<std::string> bad = merges;
    bad[31000] = "a31000 c";  // no token "c"
    bad[25000] = "a25000b";   // no space (the first bad one)
    bad[39999] = "a1 a2";     // "a1a2" is no token
    auto e = load(bad, threads);
    REQUIRE_FALSE(e);
    CHECK(e.error().code == gguf::errc::bad_vocabulary);
    CHECK(gguf::to_string(e.error()).find("a25000b") != std::string::npos);
    CHECK(gguf::to_string(e.error()).find("space") != std::string::npos);
    bad[25000] = merges[25000];
    e = load(bad, threads);
    REQUIRE_FALSE(e);
    CHECK(gguf::to_string(e.error()).find("a31000 c") != std::string::npos);
  }
}

}  // namespace test_token_table

TEST_CASE("the pair filter never says no to a pair it holds, and says no to most others") {
  using gguf::text::detail::pair_filter;
  using gguf::text::detail::unit_key;
  // every key differs by bytes, length and kind
  CHECK(unit_key("a", 1) != unit_key("a", 1, 1));
  CHECK(unit_key("ab", 1) == unit_key("a", 1));
  CHECK(unit_key("\xE0\xB8\x81", 2) != unit_key("\xE0\xB8\x81", 3));

  pair_filter none;
  CHECK_FALSE(static_cast<bool>(none));
  CHECK(none.may_follow(unit_key("a", 1), unit_key("a", 1)));  // a filter not made cuts nothing

  // pairs of random characters of every UTF-8 length, as the tokenizers key them
  std::mt19937_64 rng(7);
  const auto key = [&] {
    static constexpr char32_t from[] = {0x20, 0xA0, 0x900, 0x4E00, 0x1F300};
    static constexpr char32_t count[] = {0x5F, 0x700, 0x2000, 0x5000, 0x300};
    const std::uint64_t r = rng();
    const char32_t cp = from[r % 5] + static_cast<char32_t>((r >> 8) % count[r % 5]);
    std::string s;
    gguf::text::append_utf8(s, cp);
    return unit_key(s.data(), s.size(), static_cast<unsigned>(r >> 40) % 3);
  };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> held, other;
  for (int i = 0; i < 20000; ++i) held.emplace_back(key(), key());
  std::sort(held.begin(), held.end());
  while (other.size() < held.size()) {
    const std::pair<std::uint64_t, std::uint64_t> p{key(), key()};
    if (!std::binary_search(held.begin(), held.end(), p)) other.push_back(p);
  }
  pair_filter f(held.size());
  for (const auto& [a, b] : held) f.add(a, b);
  for (const auto& [a, b] : held) REQUIRE(f.may_follow(a, b));
  std::size_t yes = 0;
  for (const auto& [a, b] : other) yes += f.may_follow(a, b);
  CHECK(yes < other.size() / 25);  // under 4% wrong at the size it was made for (about 2% expected)
  CHECK(f.memory_bytes() >= held.size() * 10 / 8);
}
