// Parsing allocates O(n_kv + n_tensors): never per array item, never from an unchecked count.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "gguf_writer.hpp"

// A counting global allocator for this test binary (malloc-backed, so GCC's pairing check must be told).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<bool> counting{false};
std::atomic<std::size_t> allocations{0}, allocated{0};
}  // namespace

void* operator new(std::size_t n) {
  if (counting) {
    ++allocations;
    allocated += n;
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
#if defined(__cpp_exceptions)
  throw std::bad_alloc();
#else
  std::abort();
#endif
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::get_temporary_buffer, behind std::stable_partition and std::stable_sort,
// uses them): else they come from the runtime's allocator and are freed by the free() above.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (counting) {
    ++allocations;
    allocated += n;
  }
  return std::malloc(n ? n : 1);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

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
