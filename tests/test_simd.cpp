// Every SIMD kernel, on every instruction set this CPU supports, gives exactly the scalar kernel's bits:
// on every committed fixture, on block counts that are not a multiple of the vector width, and from
// and to unaligned addresses. Then gguf::dequantize in runtime-dispatch mode, end to end.
#include <doctest/doctest.h>

#include <gguf/dequantize.hpp>
#include <gguf/dispatch.hpp>
#include <gguf/gguf.hpp>
#include <gguf/kernels/scalar.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gguf::ggml_type;
using gguf::dispatch::isa;

static_assert(GGUF_RUNTIME_DISPATCH == 1, "this binary links gguf::dispatch");

namespace {

bool same_bits(const float* a, const float* b, std::size_t n, std::size_t& first_bad) {
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) {
      first_bad = i;
      return false;
    }
  }
  return true;
}

std::vector<isa> isas() {
  std::vector<isa> v;
  for (isa i : gguf::dispatch::all_isas) {
    if (gguf::dispatch::supported(i)) v.push_back(i);
  }
  return v;
}

// The blocks of every fixture tensor of `type`, plus random bytes (every bit pattern of scales).
std::vector<std::vector<std::byte>> inputs(ggml_type type) {
  std::vector<std::vector<std::byte>> in;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(GGUF_TEST_DATA_DIR) / "quants")) {
    if (e.path().extension() != ".gguf") continue;
    auto g = gguf::open(e.path().string().c_str());
    REQUIRE(g);
    if (const gguf::tensor_info* t = g->find_tensor("t." + std::string(gguf::to_string(type)))) {
      in.emplace_back(t->data.begin(), t->data.end());
    }
  }
  std::mt19937 rng(static_cast<unsigned>(type) + 1);
  std::vector<std::byte> noise(gguf::traits(type).type_size * 97);
  for (auto& b : noise) b = static_cast<std::byte>(rng());
  in.push_back(std::move(noise));
  return in;
}

void check(ggml_type type) {
  const gguf::type_traits& tt = gguf::traits(type);
  const gguf::dequant_fn reference = gguf::kernels::scalar_kernel(type);
  INFO("isas: " << isas().size());
  for (isa i : isas()) {
    CAPTURE(gguf::dispatch::to_string(i));
    const gguf::dequant_fn k = gguf::dispatch::kernel(type, i);
    REQUIRE_MESSAGE(static_cast<bool>(k), "no kernel");
    for (const std::vector<std::byte>& data : inputs(type)) {
      const std::size_t blocks = data.size() / tt.type_size;
      // Every block count up to 40, then the whole input; at offsets 0..3 of the source and destination.
      for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{5}, std::size_t{7},
                            std::size_t{17}, std::size_t{33}, std::size_t{40}, blocks}) {
        n = std::min(n, blocks);
        const std::size_t weights = n * tt.block_size;
        std::vector<float> want(weights);
        reference(data.data(), want.data(), n);
        for (std::size_t shift : {0, 1, 3}) {
          std::vector<std::byte> src(n * tt.type_size + shift);
          std::memcpy(src.data() + shift, data.data(), n * tt.type_size);
          std::vector<float> out(weights + 2, -7.0f);
          float* dst = reinterpret_cast<float*>(reinterpret_cast<char*>(out.data()) + (shift ? 4 : 0));
          k(src.data() + shift, dst, n);
          std::size_t bad = 0;
          CHECK_MESSAGE(same_bits(dst, want.data(), weights, bad), "n=" << n << " shift=" << shift
                                                                        << " first difference at " << bad << ": "
                                                                        << dst[bad] << " vs " << want[bad]);
          CHECK(out.back() == -7.0f);  // nothing written past the end
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("the instruction sets of this machine") {
  std::string names;
  for (isa i : isas()) names += std::string(gguf::dispatch::to_string(i)) + " ";
  MESSAGE("supported: " << names << "| best: " << gguf::dispatch::to_string(gguf::dispatch::best()));
  CHECK(gguf::dispatch::supported(isa::scalar));
  CHECK(gguf::dispatch::supported(gguf::dispatch::best()));
  CHECK(gguf::dispatch::set_active(isa::scalar));
  CHECK(gguf::dispatch::active() == isa::scalar);
  CHECK(gguf::dispatch::set_active(gguf::dispatch::best()));
}

TEST_CASE("every kernel of every supported instruction set equals the scalar kernel") {
  for (const gguf::type_traits& t : gguf::ggml_types) {
    CAPTURE(t.name);
    check(t.type);
  }
}

TEST_CASE("gguf::dequantize in dispatch mode gives ggml's bits on every instruction set") {
  auto data = gguf::open((fs::path(GGUF_TEST_DATA_DIR) / "quants/raw-s1.gguf").string().c_str());
  auto want = gguf::open((fs::path(GGUF_TEST_DATA_DIR) / "quants/raw-s1.expected.gguf").string().c_str());
  REQUIRE(data);
  REQUIRE(want);
  for (isa i : isas()) {
    CAPTURE(gguf::dispatch::to_string(i));
    REQUIRE(gguf::dispatch::set_active(i));
    for (const gguf::tensor_info& t : data->tensors()) {
      CAPTURE(t.name);
      const gguf::tensor_info* w = want->find_tensor(t.name);
      REQUIRE(w);
      std::vector<float> got(t.n_elements), ref(w->n_elements);
      REQUIRE(gguf::dequantize(t, got));
      std::memcpy(ref.data(), w->data.data(), ref.size() * sizeof(float));
      std::size_t bad = 0;
      CHECK_MESSAGE(same_bits(got.data(), ref.data(), got.size(), bad), "first difference at " << bad);
    }
  }
  gguf::dispatch::set_active(gguf::dispatch::best());
}

TEST_CASE("f16 and bf16 outputs past the caches (the non-temporal store path) equal the scalar kernel") {
  const std::size_t n = (std::size_t{16} << 20) / sizeof(float) + 37;  // 16 MiB and a tail
  std::vector<std::byte> src(2 * n);
  std::mt19937 rng(5);
  for (auto& b : src) b = static_cast<std::byte>(rng());
  // A 64-byte aligned destination (the streaming stores need one), portably: Windows has no aligned_alloc.
  std::vector<float> storage(n + 16);
  float* const out = storage.data() + (64 - reinterpret_cast<std::uintptr_t>(storage.data()) % 64) % 64 / sizeof(float);
  std::vector<float> want(n);
  for (ggml_type type : {ggml_type::f16, ggml_type::bf16}) {
    CAPTURE(gguf::to_string(type));
    gguf::kernels::scalar_kernel(type)(src.data(), want.data(), n);
    for (isa i : isas()) {
      CAPTURE(gguf::dispatch::to_string(i));
      gguf::dispatch::kernel(type, i)(src.data(), out, n);
      std::size_t bad = 0;
      CHECK_MESSAGE(same_bits(out, want.data(), n, bad), "first difference at " << bad);
    }
  }
}

TEST_CASE("all 65536 halves convert to the same float bits on every instruction set, NaNs quieted as in ggml") {
  // A conversion is a pure function, so here even NaN bits must agree: ggml converts through a float
  // multiply, which sets the quiet bit of a signaling NaN and keeps its payload; F16C and NEON do the same.
  std::vector<std::byte> src(2 * 65536);
  for (std::size_t h = 0; h < 65536; ++h) {
    src[2 * h] = static_cast<std::byte>(h & 0xFF);
    src[2 * h + 1] = static_cast<std::byte>(h >> 8);
  }
  std::vector<float> out(65536);
  for (isa i : isas()) {
    CAPTURE(gguf::dispatch::to_string(i));
    gguf::dispatch::kernel(ggml_type::f16, i)(src.data(), out.data(), out.size());
    std::size_t bad = 0;
    for (std::uint32_t h = 0; h < 65536; ++h) {
      // ggml's ggml_compute_fp16_to_fp32, for normals, infinities and NaNs (exponent 31)
      const std::uint32_t w = h << 16, two_w = w + w;
      std::uint32_t want =
          std::bit_cast<std::uint32_t>(std::bit_cast<float>((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f);
      if (two_w < (1u << 27))
        want = std::bit_cast<std::uint32_t>(std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f);
      want |= w & 0x80000000u;
      if (std::bit_cast<std::uint32_t>(out[h]) != want && bad++ == 0) {
        CHECK_MESSAGE(
            false, "half 0x" << std::hex << h << ": 0x" << std::bit_cast<std::uint32_t>(out[h]) << ", ggml 0x" << want);
      }
    }
    CHECK(bad == 0);
  }
}
