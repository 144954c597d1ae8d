// Every SIMD kernel, on every instruction set this CPU supports, gives exactly the scalar kernel's bits:
// on every committed fixture, on block counts that are not a multiple of the vector width, and from
// and to unaligned addresses. Then gguf::dequantize in runtime-dispatch mode, end to end.
#include <doctest/doctest.h>

#include <gguf/dequantize.hpp>
#include <gguf/dispatch.hpp>
#include <gguf/gguf.hpp>
#include <gguf/kernels/scalar.hpp>

#include <bit>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <limits>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <algorithm>
#include <vector>

namespace fs = std::filesystem;
using gguf::ggml_type;
using gguf::dispatch::isa;

static_assert(GGUF_RUNTIME_DISPATCH == 1, "this binary links gguf::dispatch");

namespace {

bool same_bits(const float* a, const float* b, std::size_t n, std::size_t& first_bad) {
  if (std::memcmp(a, b, n * sizeof(float)) == 0) return true;  // the common case, fast in a sanitizer build
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) {
      first_bad = i;
      return false;
    }
  }
  return true;
}

// Random bytes (every bit pattern of scales and codes), 8 from each draw.
void fill_random(std::vector<std::byte>& bytes, unsigned seed) {
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    const std::uint64_t r = rng();
    std::memcpy(bytes.data() + i, &r, std::min<std::size_t>(8, bytes.size() - i));
  }
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
  std::vector<std::byte> noise(gguf::traits(type).type_size * 97);
  fill_random(noise, static_cast<unsigned>(type) + 1);
  in.push_back(std::move(noise));
  // The edges random bytes rarely hit: integers at every power of two and one off it (where int -> float
  // rounds, ties included), and floats at the edges of the half formats (rounding ties, overflow to
  // infinity, subnormal halves, zeros, infinities, NaNs).
  const auto values = [&](auto zero, const auto& list) {
    std::vector<std::byte> v(list.size() * sizeof zero);
    std::memcpy(v.data(), list.data(), v.size());
    in.push_back(std::move(v));
  };
  if (type == ggml_type::i64 || type == ggml_type::i32) {
    std::vector<std::int64_t> list;
    for (int k = 0; k < 63; ++k) {
      const std::int64_t p = std::int64_t{1} << k;
      for (std::int64_t d : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}, p / 2, p / 2 + 1}) {
        list.push_back(p + d);
        list.push_back(-(p + d));
      }
    }
    list.push_back(INT64_MIN);
    list.push_back(INT64_MAX);
    if (type == ggml_type::i64) {
      values(std::int64_t{}, list);
    } else {
      std::vector<std::int32_t> narrow;
      for (std::int64_t x : list) narrow.push_back(static_cast<std::int32_t>(x));
      values(std::int32_t{}, narrow);
    }
  }
  if (type == ggml_type::f32) {
    std::vector<float> list = {65504.0f,    65519.996f,   65520.0f,      0x1.0p-24f, 0x1.0p-25f,  0x1.8p-25f,
                               0x1.0p-14f,  0x1.ffcp-15f, 0x1.002p0f,    0x1.006p0f, 0x1.0101p0f, 0x1.0180p0f,
                               0x1.0080p0f, 1e-40f,       0.0f,          -0.0f,      INFINITY,    -INFINITY,
                               NAN,         -NAN,         3.4028235e38f, 1.0f};
    const std::size_t n = list.size();
    for (std::size_t i = 0; i < n; ++i) list.push_back(-list[i]);
    values(0.0f, list);
  }
  if (type == ggml_type::q8_K) {
    // Its scale is a float32, so tiny and subnormal ones give subnormal weights, which AVX512-BF16's
    // rounding reads as zero unless the kernel checks for them (see no_subnormals in kernels/simd/ops/store.hpp).
    // Random scales are subnormal once in 256 blocks: too rare for the 97 above.
    const float tiny[] = {1e-40f, -1e-39f, 0x1.0p-126f, -0x1.0p-130f, 0x1.0p-149f, 0x1.8p-120f};
    std::vector<std::byte> v(sizeof(gguf::blocks::q8_K) * std::size(tiny));
    fill_random(v, 11);
    for (std::size_t i = 0; i < std::size(tiny); ++i) {
      std::memcpy(v.data() + i * sizeof(gguf::blocks::q8_K) + offsetof(gguf::blocks::q8_K, d), &tiny[i], sizeof(float));
    }
    in.push_back(std::move(v));
  }
  return in;
}

// The reference rounding of the half outputs, written independently of gguf's to_f16/to_bf16: ggml's
// portable ggml_compute_fp32_to_fp16 (float arithmetic) and ggml_compute_fp32_to_bf16.
std::uint16_t ggml_fp16(float f) {
  const float scale_to_inf = 0x1.0p+112f, scale_to_zero = 0x1.0p-110f;
  float base = (std::fabs(f) * scale_to_inf) * scale_to_zero;
  const std::uint32_t w = std::bit_cast<std::uint32_t>(f), shl1_w = w + w, sign = w & 0x80000000u;
  std::uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(base);
  const std::uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
  return static_cast<std::uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}
std::uint16_t ggml_bf16(float f) {
  const std::uint32_t w = std::bit_cast<std::uint32_t>(f);
  if ((w & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((w >> 16) | 64u);
  return static_cast<std::uint16_t>((w + (0x7FFFu + ((w >> 16) & 1u))) >> 16);
}

std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }
std::uint32_t bits_of(gguf::f16 x) { return x.bits; }
std::uint32_t bits_of(gguf::bf16 x) { return x.bits; }
bool is_nan(float x) { return std::isnan(x); }
bool is_nan(gguf::f16 x) { return (x.bits & 0x7FFFu) > 0x7C00u; }
bool is_nan(gguf::bf16 x) { return (x.bits & 0x7FFFu) > 0x7F80u; }

// The reference output of `Out`: the scalar kernel's floats, rounded by the reference conversion.
template <class Out>
std::vector<Out> reference_output(ggml_type type, const std::byte* src, std::size_t blocks) {
  std::vector<float> f(blocks * gguf::traits(type).block_size);
  gguf::kernels::scalar_kernel(type)(src, f.data(), blocks);
  if constexpr (std::is_same_v<Out, float>) {
    return f;
  } else {
    std::vector<Out> out(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) {
      if constexpr (std::is_same_v<Out, gguf::f16>) {
        out[i] = gguf::f16{ggml_fp16(f[i])};
      } else {
        out[i] = gguf::bf16{ggml_bf16(f[i])};
      }
    }
    return out;
  }
}

template <class Out>
bool same_output(const Out* a, const Out* b, std::size_t n, std::size_t& first_bad) {
  if (std::memcmp(a, b, n * sizeof(Out)) == 0) return true;  // the common case, fast in a sanitizer build
  for (std::size_t i = 0; i < n; ++i) {
    if (is_nan(a[i]) && is_nan(b[i])) continue;
    if (bits_of(a[i]) != bits_of(b[i])) {
      first_bad = i;
      return false;
    }
  }
  return true;
}

// Every kernel of `type` writing `Out`, on every instruction set (the scalar one included), against the
// reference: every fixture tensor and random blocks, block counts 1 to 40 and all, from and to
// addresses off their alignment.
// Every instruction set's kernel of `type` writing `Out` and, where the CPU has an extension that
// replaces it (AVX512-BF16 for bf16 outputs), also the kernel a CPU without the extension runs.
template <class Out>
std::vector<std::pair<std::string, gguf::dequant_fn_to<Out>>> kernels_of(ggml_type type) {
  std::vector<std::pair<std::string, gguf::dequant_fn_to<Out>>> v;
  for (isa i : isas()) {
    const gguf::dequant_fn_to<Out> k = gguf::dispatch::kernel_to<Out>(type, i);
    v.emplace_back(std::string(gguf::dispatch::to_string(i)), k);
    const gguf::dequant_fn_to<Out> base = gguf::dispatch::detail::base_table(i)->template get<Out>(type);
    if (base != k) v.emplace_back(std::string(gguf::dispatch::to_string(i)) + " without extensions", base);
  }
  return v;
}

template <class Out>
void check(ggml_type type) {
  const gguf::type_traits& tt = gguf::traits(type);
  INFO("isas: " << isas().size());
  for (const auto& kernel : kernels_of<Out>(type)) {
    const std::string& name = kernel.first;  // not a structured binding: CAPTURE's lambda takes it
    const gguf::dequant_fn_to<Out> k = kernel.second;
    CAPTURE(name);
    REQUIRE_MESSAGE(static_cast<bool>(k), "no kernel");
    for (const std::vector<std::byte>& data : inputs(type)) {
      const std::size_t blocks = data.size() / tt.type_size;
      // Every block count up to 40, then the whole input; at offsets 0..3 of the source and destination.
      for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{5}, std::size_t{7},
                            std::size_t{17}, std::size_t{33}, std::size_t{40}, blocks}) {
        n = std::min(n, blocks);
        const std::size_t weights = n * tt.block_size;
        const std::vector<Out> want = reference_output<Out>(type, data.data(), n);
        for (std::size_t shift : {0, 1, 3}) {
          std::vector<std::byte> src(n * tt.type_size + shift);
          std::memcpy(src.data() + shift, data.data(), n * tt.type_size);
          std::vector<Out> out(weights + 2);
          const Out guard = gguf::kernels::narrow<Out>(-7.0f);
          std::fill(out.begin(), out.end(), guard);
          Out* dst = out.data() + (shift ? 1 : 0);
          k(src.data() + shift, dst, n);
          std::size_t bad = 0;
          CHECK_MESSAGE(same_output(dst, want.data(), weights, bad),
                        "n=" << n << " shift=" << shift << " first difference at " << bad << ": 0x" << std::hex
                             << bits_of(dst[bad]) << " vs 0x" << bits_of(want[bad]));
          CHECK(bits_of(out.back()) == bits_of(guard));  // nothing written past the end
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
    check<float>(t.type);
  }
}

TEST_CASE("f16 and bf16 outputs are the scalar floats rounded to nearest even, on every instruction set") {
  for (const gguf::type_traits& t : gguf::ggml_types) {
    CAPTURE(t.name);
    check<gguf::f16>(t.type);
    check<gguf::bf16>(t.type);
  }
}

TEST_CASE("to_f16 and to_bf16 round as ggml does: every 257th float, and the edges") {
  // Every sign, exponent and a spread of mantissas: the subnormal halves, the overflow to infinity at
  // 65520, ties at every exponent (steps of 257 hit low mantissa bits of every pattern), NaNs.
  std::size_t bad = 0;
  const auto check_one = [&](std::uint32_t w) {
    const float x = std::bit_cast<float>(w);
    const gguf::f16 h = gguf::to_f16(x);
    const gguf::bf16 b = gguf::to_bf16(x);
    const bool nan = std::isnan(x);
    if ((nan ? !is_nan(h) : h.bits != ggml_fp16(x)) || (nan ? !is_nan(b) : b.bits != ggml_bf16(x))) {
      if (bad++ == 0) CHECK_MESSAGE(false, "float 0x" << std::hex << w << ": f16 0x" << h.bits << " bf16 0x" << b.bits);
    }
    // The conversion back is exact, and a rounded value rounds to itself.
    if (!nan && gguf::to_f16(gguf::to_float(h)) != h && bad++ == 0)
      CHECK_MESSAGE(false, "f16 0x" << std::hex << h.bits);
    if (!nan && gguf::to_bf16(gguf::to_float(b)) != b && bad++ == 0)
      CHECK_MESSAGE(false, "bf16 0x" << std::hex << b.bits);
  };
  for (std::uint64_t w = 0; w <= 0xFFFFFFFFu; w += 257) check_one(static_cast<std::uint32_t>(w));
  for (std::uint32_t w : {0x477FEFFFu, 0x477FF000u, 0x477FF001u, 0x33000000u, 0x33000001u, 0x337FFFFFu, 0x38800000u,
                          0x387FFFFFu, 0x7F800000u, 0xFF800000u, 0x7F800001u, 0x7FC00000u, 0xFFFFFFFFu, 0x80000000u,
                          0x3F808000u, 0x3F818000u, 0x7F7FFFFFu}) {
    check_one(w);
  }
  CHECK(bad == 0);
}

TEST_CASE("dequantize, dequantize_rows and dequantize_parallel write f16 and bf16") {
  auto g = gguf::open((fs::path(GGUF_TEST_DATA_DIR) / "quants/raw-s1.gguf").string().c_str());
  REQUIRE(g);
  for (const gguf::tensor_info& t : g->tensors()) {
    CAPTURE(t.name);
    std::vector<float> f(t.n_elements);
    REQUIRE(gguf::dequantize(t, f));
    std::vector<gguf::f16> h(t.n_elements), hr(t.n_elements), hp(t.n_elements);
    std::vector<gguf::bf16> b(t.n_elements);
    REQUIRE(gguf::dequantize(t, h));
    REQUIRE(gguf::dequantize(t, b));
    REQUIRE(gguf::dequantize_rows(t, 0, t.n_rows(), hr));
    REQUIRE(gguf::dequantize_parallel(t, hp, 2));
    std::size_t bad = 0;
    for (std::size_t k = 0; k < f.size(); ++k) {
      const bool nan = std::isnan(f[k]);
      if (nan ? !is_nan(h[k]) || !is_nan(b[k]) : h[k] != gguf::to_f16(f[k]) || b[k] != gguf::to_bf16(f[k])) ++bad;
      if (hr[k] != h[k] || hp[k] != h[k]) ++bad;
    }
    CHECK(bad == 0);
    std::vector<gguf::f16> wrong(t.n_elements + 1);
    CHECK(gguf::dequantize(t, wrong).error() == gguf::errc::size_mismatch);
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

namespace {

// An output of 16 MiB or more to a 64-byte aligned destination goes through L1 tiles and non-temporal
// stores (kernels/simd/streaming.hpp, where the instruction set has them): whole tiles, then the blocks
// after the last one. Random blocks (every bit pattern of scales) against the scalar kernel.
template <class Out>
void check_streamed(ggml_type type) {
  const gguf::type_traits& tt = gguf::traits(type);
  const std::size_t blocks = (std::size_t{16} << 20) / sizeof(Out) / tt.block_size + 3;  // not a whole tile
  const std::size_t n = blocks * tt.block_size;
  std::vector<std::byte> src(blocks * tt.type_size);
  fill_random(src, static_cast<unsigned>(type) + 5);
  const std::vector<Out> want = reference_output<Out>(type, src.data(), blocks);
  // A 64-byte aligned destination, portably (Windows has no aligned_alloc), and a guard after it.
  std::vector<Out> storage(n + 64 / sizeof(Out) + 1);
  Out* const out = storage.data() + (64 - reinterpret_cast<std::uintptr_t>(storage.data()) % 64) % 64 / sizeof(Out);
  const Out guard = gguf::kernels::narrow<Out>(-7.0f);
  out[n] = guard;
  for (const auto& kernel : kernels_of<Out>(type)) {
    const std::string& name = kernel.first;
    CAPTURE(name);
    kernel.second(src.data(), out, blocks);
    std::size_t bad = 0;
    CHECK_MESSAGE(same_output(out, want.data(), n, bad), "first difference at " << bad);
    CHECK(bits_of(out[n]) == bits_of(guard));
  }
}

}  // namespace

TEST_CASE("every type's output past the caches (the non-temporal store path) equals the scalar kernel's") {
#if defined(__x86_64__) || defined(_M_X64)  // the instruction sets with streaming stores; qemu would take minutes
  for (const gguf::type_traits& t : gguf::ggml_types) {
    CAPTURE(t.name);
    check_streamed<float>(t.type);
  }
  for (const ggml_type t : {ggml_type::f16, ggml_type::bf16, ggml_type::q4_K, ggml_type::q8_0, ggml_type::iq2_xxs}) {
    CAPTURE(gguf::to_string(t));
    check_streamed<gguf::f16>(t);
    check_streamed<gguf::bf16>(t);
  }
#else
  MESSAGE("no streaming stores on this instruction set");
#endif
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

TEST_CASE("every quantizer of every supported instruction set writes the scalar quantizer's bytes") {
  // gguf::quantize runs dispatch::quantizer(type) in dispatch mode: SIMD twins where a type has one (all
  // but q1_0), the scalar quantizer elsewhere. Rows of Gaussian weights at many scales (down to blocks
  // of subnormals, whose inverse overflows, and with groups so small that their scale rounds to 0), with ties, zeros of
  // both signs, ranges that overflow, subnormals, infinities; and NaN of either sign, one kind of NaN per row: where
  // two different NaNs meet in one operation, which comes out is the compiler's choice of operand order (C++ leaves it
  // open; LLVM swaps an addition's operands freely), for ggml's code as for ours. With and without importance weights.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {inf, -inf, 0.0f, -0.0f, 1e-45f, -1e-40f, 3.4e38f, -3.4e38f, 65520.0f, 0.5f};
  std::mt19937 rng(5);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 99);
  constexpr std::size_t n = 1280;  // five super-blocks: q3_K searches four at once, then the fifth alone
  std::vector<std::vector<float>> rows;
  for (int kind = 0; kind < 14; ++kind) {
    std::vector<float> x(n);
    const float scale = kind < 7 ? std::pow(10.0f, static_cast<float>(kind * 5 - 20)) : 1.0f;  // 1e-20 .. 1e10
    for (float& v : x) v = gauss(rng) * scale;
    if (kind == 11) {  // subnormals only (max |x| below 2^-128: 1 / max is infinite)
      for (float& v : x) v *= 1e-40f;
    }
    if (kind == 12) {  // around 2^-126: the smallest normal scales
      for (float& v : x) v = std::ldexp(v, -126);
    }
    if (kind == 13) {  // every third group of 16 a thousand times smaller: its k-quant scale rounds to 0
      for (std::size_t k = 0; k < n; ++k) x[k] *= k / 16 % 3 == 1 ? 1e-3f : 1.0f;
    }
    if (kind == 1) std::fill(x.begin(), x.end(), 0.0f);
    if (kind == 2) {  // zeros of both signs, extremes of both signs twice
      for (float& v : x) v = pick(rng) < 30 ? (pick(rng) < 50 ? 0.0f : -0.0f) : std::fabs(v);
      x[3] = 7.0f;
      x[9] = -7.0f;
    }
    if (kind == 3) {
      for (float& v : x) v = v < 0 ? -3.0e38f : 3.0e38f;
    }
    if (kind == 7 || kind == 8) {  // infinities, huge and tiny values
      for (float& v : x) {
        if (pick(rng) < (kind - 6) * 6) v = specials[static_cast<std::size_t>(pick(rng)) % std::size(specials)];
      }
    }
    if (kind >= 9) {  // NaN, positive then negative
      for (float& v : x) {
        if (pick(rng) < 5) v = kind == 9 ? nan : -nan;
      }
    }
    rows.push_back(std::move(x));
  }
  std::vector<float> importance(n);
  for (float& w : importance) w = std::fabs(gauss(rng)) + 0.01f;
  for (const gguf::type_traits& tt : gguf::ggml_types) {
    const gguf::quant_fn reference = gguf::kernels::scalar_quantizer(tt.type);
    if (!reference) continue;
    CAPTURE(tt.name);
    const std::size_t bytes = n / tt.block_size * tt.type_size;
    for (isa i : isas()) {
      CAPTURE(gguf::dispatch::to_string(i));
      const gguf::quant_fn q = gguf::dispatch::quantizer(tt.type, i);
      REQUIRE(static_cast<bool>(q));
      for (bool weighted : {false, true}) {
        if (!weighted && gguf::kernels::requires_importance(tt.type)) continue;
        const float* w = weighted ? importance.data() : nullptr;
        for (std::size_t r = 0; r < rows.size(); ++r) {
          CAPTURE(r);
          CAPTURE(weighted);
          std::vector<std::byte> got(bytes), want(bytes);
          const gguf::errc e = q(rows[r].data(), got.data(), n, w);
          REQUIRE(e == reference(rows[r].data(), want.data(), n, w));
          if (e == gguf::errc::success) CHECK(got == want);
        }
      }
    }
    CHECK(static_cast<bool>(gguf::dispatch::quantizer(tt.type, static_cast<isa>(200))) == false);
  }
  CHECK(static_cast<bool>(gguf::dispatch::quantizer(ggml_type::q8_K)) == false);

  // gguf::quantize follows the active instruction set
  for (isa i : isas()) {
    REQUIRE(gguf::dispatch::set_active(i));
    const bool same = gguf::dispatch::quantizer(ggml_type::q4_0) == gguf::dispatch::quantizer(ggml_type::q4_0, i);
    CHECK(same);
    std::vector<std::byte> got(n / 32 * 18), want(n / 32 * 18);
    REQUIRE(gguf::quantize(ggml_type::q4_0, rows[0], n, got));
    REQUIRE(gguf::kernels::scalar_quantizer(ggml_type::q4_0)(rows[0].data(), want.data(), n, nullptr) ==
            gguf::errc::success);
    CHECK(got == want);
  }
  gguf::dispatch::set_active(gguf::dispatch::best());
}
