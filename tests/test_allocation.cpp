// Parsing allocates O(n_kv + n_tensors): never per array item, never from an unchecked count.
// Tokenizing holds at most 24 bytes per byte of text beyond the tokenizer, whatever the text.
#include <doctest/doctest.h>
#include <gguf/open.hpp>
#include <gguf/tokenizer.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "../bench/tokenize_corpus.hpp"
#include "../bench/tokenize_scripts.hpp"
#include "gguf_writer.hpp"

// A counting global allocator for this test binary (malloc-backed, so GCC's pairing check must be told).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<bool> counting{false};
std::atomic<std::size_t> allocations{0}, allocated{0};
// every allocation's size sits in a header before it: the bytes alive, and their peak
constexpr std::size_t header = 16;  // malloc's alignment (max_align_t)
std::atomic<long long> live{0}, peak{0};

void* allocate(std::size_t n) noexcept {
  if (counting) {
    ++allocations;
    allocated += n;
  }
  auto* p = static_cast<unsigned char*>(std::malloc(n + header));
  if (!p) return nullptr;
  std::memcpy(p, &n, sizeof n);
  const long long now = live.fetch_add(static_cast<long long>(n)) + static_cast<long long>(n);
  long long top = peak.load();
  while (now > top && !peak.compare_exchange_weak(top, now)) {}
  return p + header;
}
void release(void* q) noexcept {
  if (!q) return;
  unsigned char* p = static_cast<unsigned char*>(q) - header;
  std::size_t n = 0;
  std::memcpy(&n, p, sizeof n);
  live -= static_cast<long long>(n);
  std::free(p);
}
}  // namespace

void* operator new(std::size_t n) {
  if (void* p = allocate(n)) return p;
#if defined(__cpp_exceptions)
  throw std::bad_alloc();
#else
  std::abort();
#endif
}
void operator delete(void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
// The nothrow forms too (std::get_temporary_buffer, behind std::stable_partition and std::stable_sort,
// uses them): else they come from the runtime's allocator and are freed by the release() above.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }

TEST_CASE("a 150k-token vocabulary is parsed and walked with a handful of allocations") {
  std::vector<std::string> vocab;
  for (int i = 0; i < 150000; ++i) vocab.push_back("token" + std::to_string(i));
  const test::bytes b = test::file_builder()
                            .kv("general.architecture", "llama")
                            .kv_array("tokenizer.ggml.tokens", vocab)
                            .kv_array("tokenizer.ggml.scores", std::vector<float>(150000, 0.5f))
                            .kv_array("tokenizer.ggml.token_type", std::vector<std::int32_t>(150000, 1))
                            .tensor("w", gguf::ggml_type::q8_0, {4096, 4})
                            .build();
  allocations = 0;
  allocated = 0;
  counting = true;
  auto f = test::parse(b);
  std::size_t n = 0, chars = 0;
  if (f) {
    for (std::string_view s : *f->metadata().get<gguf::array_view>("tokenizer.ggml.tokens")->as<std::string_view>()) {
      ++n;
      chars += s.size();
    }
  }
  counting = false;
  REQUIRE(f);
  CHECK(n == 150000);
  CHECK(chars > 0);
  CHECK(allocations <= 8);
  CHECK(allocated < 1024);
}

TEST_CASE("a header declaring 2^60 keys allocates nothing before refusing") {
  test::file_builder fb;
  fb.n_kv = std::uint64_t{1} << 60;
  const test::bytes b = fb.build();
  allocations = 0;
  counting = true;
  auto f = test::parse(b);
  counting = false;
  CHECK(!f);
  CHECK(allocations == 0);
}

// The worst a file can do: the smallest possible entries, as many as its bytes hold. The parser keeps a
// fixed-size record per entry (metadata_entry, tensor_info and their index slots), so what it allocates
// stays a small multiple of the input: never more than 8 bytes per byte (SECURITY.md).
TEST_CASE("the smallest possible entries allocate at most 8 bytes per input byte") {
  for (std::uint32_t version : {1u, 3u}) {
    CAPTURE(version);
    const std::uint64_t n = 20000;
    test::bytes kvs;  // n one-letter keys holding a uint8: refused at the second, after reading all
    test::byte_writer w(kvs, version);
    w.raw("GGUF").u32(version).count(0).count(n);
    for (std::uint64_t i = 0; i < n; ++i) w.str("k").u32(0).u8(0);

    test::bytes infos;  // n empty-named scalar tensors at offset 0
    test::byte_writer t(infos, version);
    t.raw("GGUF").u32(version).count(n).count(0);
    for (std::uint64_t i = 0; i < n; ++i) t.str("").u32(0).u32(0).u64(0);
    t.zeros(64);

    for (const test::bytes* b : {&kvs, &infos}) {
      allocated = 0;
      counting = true;
      auto f = test::parse(*b);
      counting = false;
      CHECK(!f);
      CHECK(allocated > 0);
      CHECK(allocated <= 8 * b->size());
    }
  }
}

namespace {

// The most heap `encode` holds at once beyond what was held before it, per byte of text (its ids included).
double peak_bytes_per_byte(const gguf::tokenizer& t, const std::string& text,
                           std::vector<gguf::token_id>* ids = nullptr) {
  const long long before = live.load();
  peak = before;
  auto r = t.encode(text, {true, false});
  const long long top = peak.load();
  REQUIRE(r);
  if (ids) *ids = std::move(*r);
  return static_cast<double>(top - before) / static_cast<double>(text.size());
}

std::string repeat(const std::string& s, std::size_t bytes) {
  std::string out;
  while (out.size() + s.size() <= bytes) out += s;
  return out;
}

// A byte-level BPE vocabulary (GPT-2's pre-tokenizer, no merges) with `extra` as user-defined tokens.
gguf::tokenizer byte_level(const std::vector<std::string>& extra) {
  std::vector<std::string> tokens;
  for (unsigned b = 0; b < 256; ++b) {  // GPT-2's byte-to-character mapping, written out
    unsigned c = b;
    if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255))) {
      unsigned k = 0;
      for (unsigned x = 0; x < b; ++x)
        if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255))) ++k;
      c = 256 + k;
    }
    std::string s;
    if (c < 0x80) {
      s += static_cast<char>(c);
    } else {
      s += static_cast<char>(0xC0 | (c >> 6));
      s += static_cast<char>(0x80 | (c & 0x3F));
    }
    tokens.push_back(s);
  }
  std::vector<std::int32_t> types(256, 1);
  for (const std::string& e : extra) {
    tokens.push_back(e);
    types.push_back(4);  // user-defined
  }
  const test::bytes b = test::file_builder()
                            .kv("general.architecture", "gpt2")
                            .kv("tokenizer.ggml.model", "gpt2")
                            .kv("tokenizer.ggml.pre", "gpt-2")
                            .kv_array("tokenizer.ggml.tokens", tokens)
                            .kv_array("tokenizer.ggml.token_type", types)
                            .kv_array("tokenizer.ggml.merges", std::vector<std::string>{})
                            .build();
  const auto f = test::parse(b);
  REQUIRE(f);
  auto t = gguf::tokenizer::from(*f);
  REQUIRE_MESSAGE(t, gguf::to_string(t.error()));
  return *t;
}

}  // namespace

// Issue 47's repro: 196 nested user-defined tokens ("\u2248" x 5 .. 200) over a megabyte of "\u2248" took
// 21 s and 2.1 GB, every occurrence of every token being listed; llama.cpp's order takes the longest
// first, and so does the automaton here, in one pass.
TEST_CASE("nested special tokens over a long run: llama.cpp's ids, linear time, bounded memory") {
  const std::string approx = "\xE2\x89\x88";
  std::vector<std::string> nested;
  for (std::size_t k = 5; k <= 200; ++k) nested.push_back(repeat(approx, 3 * k));
  const gguf::tokenizer t = byte_level(nested);
  const std::string text = repeat(approx, 1'000'000);  // 333,333 of them
  std::vector<gguf::token_id> ids;
  const double per_byte = peak_bytes_per_byte(t, text, &ids);
  // the longest token 1666 times (333,200), then the 133 left as one token
  const gguf::token_id longest = 256 + 195, rest = 256 + (133 - 5);
  REQUIRE(ids.size() == 1667);
  CHECK(std::count(ids.begin(), ids.end() - 1, longest) == 1666);
  CHECK(ids.back() == rest);
  CHECK(per_byte <= 24.0);
}

// Issue 47's repro: a user-defined token of a megabyte, and a text that is its beginning (100 KB took
// 9 s, each position walking the token's trie as far as the text went).
TEST_CASE("a megabyte-long special token over text that begins it: linear, and the text's own ids") {
  const std::string approx = "\xE2\x89\x88";
  const gguf::tokenizer with = byte_level({repeat(approx, std::size_t{1} << 20)}), without = byte_level({});
  const std::string text = repeat(approx, 300'000);
  std::vector<gguf::token_id> ids;
  (void)peak_bytes_per_byte(without, text);  // the thread's buffers, grown once
  const double per_byte = peak_bytes_per_byte(with, text, &ids);
  CHECK(ids == without.encode(text, {true, false}));
  // the text is one word of 300,000 symbols for BPE (its own cost); the unfinished token adds nothing
  CHECK(per_byte <= peak_bytes_per_byte(without, text) + 0.01);
}

#ifdef GGUF_SHARED_DIR
TEST_CASE("tokenizing mixed text holds at most 24 bytes per byte beyond the tokenizer, every shared vocabulary") {
  const std::string text = bench::tokenize_corpus(std::size_t{4} << 20);
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(GGUF_SHARED_DIR) / "data" / "vocab")) {
    if (e.path().extension() != ".gguf") continue;
    CAPTURE(e.path().filename().string());
    const auto f = gguf::open(e.path());
    REQUIRE(f);
    const auto t = gguf::tokenizer::from(*f);
    REQUIRE(t);
    CHECK(peak_bytes_per_byte(*t, text) <= 24.0);
  }
}

TEST_CASE("tokenizing any kind of text holds at most 24 bytes per byte, every shared vocabulary") {
  // each script family, code, digit runs, whitespace runs: one token a byte (digits) and unspaced words
  // (Thai, Chinese) cost the most
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(GGUF_SHARED_DIR) / "data" / "vocab")) {
    if (e.path().extension() != ".gguf") continue;
    const auto f = gguf::open(e.path());
    REQUIRE(f);
    const auto t = gguf::tokenizer::from(*f);
    REQUIRE(t);
    for (const std::string_view kind : bench::script_category_names()) {
      CAPTURE(e.path().filename().string());
      CAPTURE(kind);
      CHECK(peak_bytes_per_byte(*t, bench::script_text(kind, std::size_t{1} << 20)) <= 24.0);
    }
  }
}
#endif
