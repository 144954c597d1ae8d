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
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

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
