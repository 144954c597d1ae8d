// Quantization, held to ggml byte for byte: every case of tests/data/quantize/golden-a.gguf (ggml's
// ggml_quantize_chunk output for ordinary and hostile rows: NaN, Inf, subnormals, FLT_MAX, zeros,
// constants, outliers, every type, with and without importance weights, made by
// tests/oracle/make_quantize_golden.py) is quantized again here and compared; plus the refusals, and
// quantize -> dequantize round trips within a per-type error bound.
#include <doctest/doctest.h>

#include <gguf/dequantize.hpp>
#include <gguf/kernels/scalar.hpp>  // the scalar specification and the header-only
#include <gguf/kernels/simd.hpp>    // quantizers, tested directly
#include <gguf/open.hpp>
#include <gguf/print.hpp>
#include <gguf/quantize.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

// Each test file keeps its names in a namespace of its own.
namespace test_quantize {

namespace fs = std::filesystem;
using gguf::errc;
using gguf::ggml_type;

namespace {

const fs::path golden_path = fs::path(GGUF_TEST_DATA_DIR) / "quantize" / "golden-a.gguf";

const gguf::mapped_gguf& golden() {
  static const gguf::mapped_gguf file = [] {
    auto f = gguf::open(golden_path.string().c_str());
    REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
    return std::move(*f);
  }();
  return file;
}

std::vector<float> floats_of(const gguf::tensor_info& t) {
  std::vector<float> v(t.n_elements);
  REQUIRE(gguf::dequantize(t, v));
  return v;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Quantize every golden case of `type` and compare with ggml's bytes; returns the number of cases.
std::size_t check_golden(ggml_type type) {
  const gguf::mapped_gguf& file = golden();
  std::size_t cases = 0, weighted = 0;
  for (const gguf::tensor_info& q : file.tensors()) {
    if (q.type != type || !ends_with(q.name, ".q")) continue;
    const std::string name(q.name.substr(0, q.name.size() - 2));
    const gguf::tensor_info* src = file.find_tensor(name + ".src");
    REQUIRE_MESSAGE(src, name);
    const gguf::tensor_info* imp = file.find_tensor(name + ".importance");
    const std::vector<float> x = floats_of(*src);
    const std::vector<float> w = imp ? floats_of(*imp) : std::vector<float>{};
    const auto n_per_row = static_cast<std::size_t>(src->ne[0]);
    std::vector<std::byte> got(q.data.size() + 7, std::byte{0xA5});  // room past the end: must stay untouched
    const auto written = gguf::quantize(type, x, n_per_row, got, w);
    REQUIRE_MESSAGE(written, name << ": " << gguf::to_string(written.error()));
    REQUIRE(*written == q.data.size());
    const std::size_t block_bytes = gguf::traits(type).type_size;
    for (std::size_t i = 0; i < q.data.size(); ++i) {
      if (got[i] != q.data[i]) {
        const auto kinds = file.metadata().get<std::string_view>("quantize.kinds." + name);
        const std::size_t row_bytes = q.data.size() / static_cast<std::size_t>(q.n_rows());
        FAIL_CHECK(name << " (rows: " << (kinds ? *kinds : std::string_view("?")) << "): row " << i / row_bytes
                        << " block " << i % row_bytes / block_bytes << " byte " << i % block_bytes << " is "
                        << static_cast<int>(got[i]) << ", ggml wrote " << static_cast<int>(q.data[i]));
        break;
      }
    }
    for (std::size_t i = q.data.size(); i < got.size(); ++i) CHECK(got[i] == std::byte{0xA5});
    ++cases;
    if (imp) ++weighted;
  }
  CHECK(weighted > 0);
  CHECK(cases > weighted);
  return cases;
}

}  // namespace

#define GGUF_QUANTIZE_CASE(t)                                                                            \
  TEST_CASE("quantize " #t " writes ggml_quantize_chunk's bytes, with and without importance weights") { \
    CHECK(check_golden(ggml_type::t) >= 4);                                                              \
  }
GGUF_QUANTIZE_CASE(f32)
GGUF_QUANTIZE_CASE(f16)
GGUF_QUANTIZE_CASE(bf16)
GGUF_QUANTIZE_CASE(q4_0)
GGUF_QUANTIZE_CASE(q4_1)
GGUF_QUANTIZE_CASE(q5_0)
GGUF_QUANTIZE_CASE(q5_1)
GGUF_QUANTIZE_CASE(q8_0)
GGUF_QUANTIZE_CASE(q2_K)
GGUF_QUANTIZE_CASE(q3_K)
GGUF_QUANTIZE_CASE(q4_K)
GGUF_QUANTIZE_CASE(q5_K)
GGUF_QUANTIZE_CASE(q6_K)
GGUF_QUANTIZE_CASE(iq4_nl)
GGUF_QUANTIZE_CASE(iq4_xs)
GGUF_QUANTIZE_CASE(tq1_0)
GGUF_QUANTIZE_CASE(tq2_0)
GGUF_QUANTIZE_CASE(mxfp4)
GGUF_QUANTIZE_CASE(nvfp4)
GGUF_QUANTIZE_CASE(q1_0)
GGUF_QUANTIZE_CASE(q2_0)

TEST_CASE("quantize: every type with a quantizer has golden cases (here, or the IQ grid types' in golden-iq.gguf)") {
  auto iq = gguf::open((golden_path.parent_path() / "golden-iq.gguf").string().c_str());
  REQUIRE(iq);
  std::size_t types = 0;
  for (const gguf::type_traits& t : gguf::ggml_types) {
    if (!gguf::kernels::scalar_quantizer(t.type)) continue;
    ++types;
    bool found = false;
    for (const gguf::mapped_gguf* file : {&golden(), static_cast<const gguf::mapped_gguf*>(&*iq)}) {
      for (const gguf::tensor_info& q : file->tensors()) found = found || (q.type == t.type && ends_with(q.name, ".q"));
    }
    CHECK_MESSAGE(found, t.name);
  }
  CHECK(types == 28);
}

TEST_CASE("quantize: a row length that is not a whole number of blocks is refused") {
  std::vector<float> x(512, 1.0f);
  std::vector<std::byte> out(4096);
  CHECK(gguf::quantize(ggml_type::q4_0, x, 48, out).error().code == errc::bad_row_size);
  CHECK(gguf::quantize(ggml_type::q4_K, x, 288, out).error().code == errc::bad_row_size);
  CHECK(gguf::quantize(ggml_type::q1_0, x, 64, out).error().code == errc::bad_row_size);
  CHECK(gguf::quantize(ggml_type::q8_0, x, 0, out).error().code == errc::bad_row_size);
  CHECK(gguf::quantized_size(ggml_type::q6_K, 1, 100).error().code == errc::bad_row_size);
  // A length that is a multiple of 32 but not of 256 is a valid row for the 32-weight types.
  CHECK(gguf::quantize(ggml_type::q4_0, std::span<const float>(x).first(288), 288, out).value() == 9 * 18);
}

TEST_CASE("quantize: the input must be whole rows and the output large enough") {
  std::vector<float> x(300, 0.5f);
  std::vector<std::byte> out(1024);
  CHECK(gguf::quantize(ggml_type::q8_0, x, 32, out).error().code == errc::size_mismatch);
  x.resize(256);
  CHECK(gguf::quantize(ggml_type::q4_K, x, 256, std::span<std::byte>(out).first(143)).error().code ==
        errc::size_mismatch);
  CHECK(gguf::quantize(ggml_type::q4_K, x, 256, std::span<std::byte>(out).first(144)).value() == 144);
  CHECK(gguf::quantize(ggml_type::q8_0, x, 128, out).value() == 2 * 4 * 34);
  CHECK(gguf::quantize(ggml_type::q8_0, std::span<const float>{}, 32, out).value() == 0);  // no rows
}

TEST_CASE("quantize: importance weights are one per column, and required where ggml requires them") {
  std::vector<float> x(512, 0.25f), w(256, 1.0f);
  std::vector<std::byte> out(4096);
  CHECK(gguf::quantize(ggml_type::q4_K, x, 256, out, std::span<const float>(w).first(255)).error().code ==
        errc::size_mismatch);
  CHECK(gguf::quantize(ggml_type::q4_K, x, 512, out, w).error().code == errc::size_mismatch);
  CHECK(gguf::quantize(ggml_type::q4_K, x, 256, out, w).value() == 2 * 144);
  // Types that ignore weights accept them (ggml does) and write the same bytes as without.
  std::vector<std::byte> with(4096), without(4096);
  REQUIRE(gguf::quantize(ggml_type::q8_0, x, 256, with, w));
  REQUIRE(gguf::quantize(ggml_type::q8_0, x, 256, without));
  CHECK(with == without);
  CHECK_FALSE(gguf::kernels::uses_importance(ggml_type::q8_0));
  CHECK(gguf::kernels::uses_importance(ggml_type::q4_K));
  // iq2_xxs, iq2_xs and iq1_s cannot be quantized without weights.
  for (ggml_type t : {ggml_type::iq2_xxs, ggml_type::iq2_xs, ggml_type::iq1_s}) {
    CHECK(gguf::kernels::requires_importance(t));
    CHECK(gguf::quantize(t, x, 256, out).error().code == errc::size_mismatch);
  }
  CHECK_FALSE(gguf::kernels::requires_importance(ggml_type::iq1_m));
}

TEST_CASE("the kernel registry: every type's row holds for its kernels") {
  namespace k = gguf::kernels;
  std::mt19937 rng(11);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> x(512), w1(512), w2(512);
  for (float& v : x) v = gauss(rng);
  for (float& v : w1) v = std::fabs(gauss(rng)) + 0.01f;
  for (float& v : w2) v = std::fabs(gauss(rng)) * 4.0f + 0.01f;
  for (const gguf::type_traits& tt : gguf::ggml_types) {
    const ggml_type t = tt.type;
    CAPTURE(gguf::to_string(t));
    // Every type dequantizes; it quantizes exactly when its row names a quantizer.
    const bool dequantizes = k::scalar_kernel(t) != nullptr && k::best_kernel(t) != nullptr;
    CHECK(dequantizes);
    const bool quantizes = k::nan_policy_of(t) != k::nan_policy::not_quantized;
    const bool scalar_quantizer = k::scalar_quantizer(t) != nullptr, best_quantizer = k::best_quantizer(t) != nullptr;
    CHECK(scalar_quantizer == quantizes);
    CHECK(best_quantizer == quantizes);
    if (!quantizes) {
      CHECK(k::importance_use_of(t) == k::importance_use::ignored);
      continue;
    }
    // Importance weights: ignored means the bytes do not depend on them; used, that they do;
    // required, that a row without them is refused.
    const std::size_t size = gguf::quantized_size(t, 1, 512).value();
    std::vector<std::byte> a(size), b(size), none(size);
    REQUIRE(gguf::quantize(t, x, 512, a, w1));
    REQUIRE(gguf::quantize(t, x, 512, b, w2));
    const auto use = k::importance_use_of(t);
    CHECK(k::requires_importance(t) == (use == k::importance_use::required));
    CHECK(k::uses_importance(t) == (use != k::importance_use::ignored));
    if (use == k::importance_use::ignored) {
      REQUIRE(gguf::quantize(t, x, 512, none));
      CHECK(a == b);
      CHECK(a == none);
    } else {
      CHECK(a != b);
      CHECK(gguf::quantize(t, x, 512, none).has_value() == (use == k::importance_use::used));
    }
  }
}

TEST_CASE("quantize: types without a quantizer and unknown ids are refused") {
  std::vector<float> x(256, 1.0f), w(256, 1.0f);
  std::vector<std::byte> out(4096);
  for (ggml_type t :
       {ggml_type::q8_1, ggml_type::q8_K, ggml_type::i8, ggml_type::i32, ggml_type::i64, ggml_type::f64}) {
    CAPTURE(gguf::to_string(t));
    const bool none = gguf::kernels::scalar_quantizer(t) == nullptr;
    CHECK(none);
    CHECK(gguf::quantize(t, x, 256, out, w).error().code == errc::bad_tensor_type);
  }
  CHECK(gguf::quantize(static_cast<ggml_type>(4), x, 256, out).error().code == errc::bad_tensor_type);
  CHECK(gguf::quantized_size(static_cast<ggml_type>(99), 1, 256).error().code == errc::bad_tensor_type);
}

TEST_CASE("quantized_size is rows times blocks per row times block bytes") {
  CHECK(gguf::quantized_size(ggml_type::q4_0, 3, 64).value() == 3 * 2 * 18);
  CHECK(gguf::quantized_size(ggml_type::q6_K, 2, 512).value() == 2 * 2 * 210);
  CHECK(gguf::quantized_size(ggml_type::f16, 5, 7).value() == 70);
  CHECK(gguf::quantized_size(ggml_type::q8_0, 0, 32).value() == 0);
  CHECK(gguf::quantized_size(ggml_type::f32, SIZE_MAX / 2, 32).error().code == errc::overflow);
}

TEST_CASE("quantize: rows are independent, so a tensor may be quantized in chunks of rows") {
  std::mt19937 rng(7);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> x(4 * 512), w(512);
  for (float& v : x) v = gauss(rng);
  for (float& v : w) v = std::fabs(gauss(rng)) + 0.1f;
  for (ggml_type t : {ggml_type::q4_0, ggml_type::q5_1, ggml_type::q3_K, ggml_type::iq4_xs}) {
    CAPTURE(gguf::to_string(t));
    const std::size_t row = gguf::quantized_size(t, 1, 512).value();
    std::vector<std::byte> whole(4 * row), parts(4 * row);
    REQUIRE(gguf::quantize(t, x, 512, whole, w));
    for (std::size_t r = 0; r < 4; ++r) {
      REQUIRE(gguf::quantize(t, std::span<const float>(x).subspan(r * 512, 512), 512,
                             std::span<std::byte>(parts).subspan(r * row, row), w));
    }
    CHECK(whole == parts);
  }
}

TEST_CASE("quantize then dequantize: the error on Gaussian weights is within each type's bound") {
  struct bound {
    ggml_type type;
    double rmse;  // relative to the weights' RMS: ggml's own error on these weights, plus about a quarter
  };
  const bound bounds[] = {
      {ggml_type::f32, 0.0},      {ggml_type::f16, 0.0003}, {ggml_type::bf16, 0.0021}, {ggml_type::q8_0, 0.0065},
      {ggml_type::q6_K, 0.022},   {ggml_type::q5_0, 0.052}, {ggml_type::q5_1, 0.047},  {ggml_type::q5_K, 0.045},
      {ggml_type::q4_0, 0.106},   {ggml_type::q4_1, 0.098}, {ggml_type::q4_K, 0.09},   {ggml_type::iq4_nl, 0.093},
      {ggml_type::iq4_xs, 0.094}, {ggml_type::q3_K, 0.19},  {ggml_type::q2_K, 0.37},   {ggml_type::mxfp4, 0.145},
      {ggml_type::nvfp4, 0.12},   {ggml_type::tq1_0, 0.85}, {ggml_type::tq2_0, 0.85},  {ggml_type::q2_0, 0.75},
      {ggml_type::q1_0, 0.65},
  };

  std::mt19937 rng(11);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  constexpr std::size_t n = 4096;
  std::vector<float> x(n), back(n);
  for (float& v : x) v = gauss(rng);
  double sum2 = 0;
  for (float v : x) sum2 += double(v) * v;
  const double rms = std::sqrt(sum2 / n);
  for (const bound& b : bounds) {
    for (bool weighted : {false, true}) {
      CAPTURE(gguf::to_string(b.type));
      CAPTURE(weighted);
      std::vector<float> w(weighted ? n : 0, 1.0f);
      std::vector<std::byte> q(gguf::quantized_size(b.type, 1, n).value());
      REQUIRE(gguf::quantize(b.type, x, n, q, w));
      REQUIRE(gguf::dequantize(b.type, q, back));
      double err = 0;
      for (std::size_t i = 0; i < n; ++i) err += (double(back[i]) - x[i]) * (double(back[i]) - x[i]);
      const double rmse = std::sqrt(err / n) / rms;
      CHECK(rmse <= b.rmse);
    }
  }
}

TEST_CASE("quantize: the SIMD quantizers this build picks write the scalar quantizers' bytes, hostile rows included") {
  // gguf::quantize runs kernels::best_quantizer (SIMD for f16, bf16, q8_0, and the legacy 4/5-bit types
  // without importance weights, on the instruction set the build targets: SSE2, AVX2, AVX-512 or NEON in
  // CI); the scalar quantizer is the specification.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 rng(11);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 99);
  const float specials[] = {nan,      -nan,     inf,     -inf,     0.0f, -0.0f, 1e-45f, -1e-40f, 3.4e38f, -3.4e38f,
                            65504.0f, 65520.0f, 6.1e-5f, 2.98e-8f, 0.5f, -0.5f, 1.5f,   2.5f,    1e-39f};
  for (ggml_type t : {ggml_type::f16, ggml_type::bf16, ggml_type::q8_0, ggml_type::q4_0, ggml_type::q4_1,
                      ggml_type::q5_0, ggml_type::q5_1}) {
    CAPTURE(gguf::to_string(t));
    REQUIRE(static_cast<bool>(gguf::kernels::best_quantizer(t)));
    for (std::size_t n : {32, 64, 96, 160, 4096}) {
      for (int kind = 0; kind < 13; ++kind) {
        std::vector<float> x(n);
        const float scale = std::pow(10.0f, static_cast<float>(kind * 6 - 24));  // 1e-24 .. 1e18
        for (float& v : x) v = gauss(rng) * scale;
        if (kind >= 4) {  // specials sprinkled in, more of them each kind
          for (float& v : x) {
            if (pick(rng) < (kind - 3) * 5) v = specials[static_cast<std::size_t>(pick(rng)) % std::size(specials)];
          }
        }
        if (kind == 2) {  // exact ties: multiples of d/2 (q8_0) and of half ulps
          for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<int>(i % 255) - 127) * 0.5f;
        }
        if (kind == 3) std::fill(x.begin(), x.end(), 0.0f);
        if (kind == 8) {  // the largest magnitude twice per block, with both signs: the first one counts
          for (std::size_t b = 0; b < n; b += 32) {
            const std::size_t i = b + static_cast<std::size_t>(pick(rng)) % 32,
                              j = b + static_cast<std::size_t>(pick(rng)) % 32;
            x[i] = 9.0f;
            x[j] = -9.0f;
          }
        }
        if (kind == 9) {  // zeros of both signs as a block's minimum or maximum (or both: all zero)
          for (float& v : x) v = pick(rng) < 30 ? (pick(rng) < 50 ? 0.0f : -0.0f) : std::fabs(v);
          for (std::size_t i = 0; i + 32 <= n; i += 64)
            std::fill_n(x.begin() + static_cast<std::ptrdiff_t>(i), 32, -0.0f);
        }
        if (kind == 10) {  // ranges whose max - min overflows
          for (float& v : x) v = v < 0 ? -3.0e38f : 3.0e38f;
        }
        if (kind == 11) {  // subnormal weights: d is tiny and 1 / d overflows
          for (float& v : x) v = gauss(rng) * 1e-40f;
        }
        if (kind == 12) {  // a constant row
          std::fill(x.begin(), x.end(), -1.25f);
        }
        const std::size_t bytes = gguf::quantized_size(t, 1, n).value();
        std::vector<std::byte> simd(bytes), reference(bytes);
        REQUIRE(gguf::kernels::best_quantizer(t)(x.data(), simd.data(), n, nullptr) == errc::success);
        REQUIRE(gguf::kernels::scalar_quantizer(t)(x.data(), reference.data(), n, nullptr) == errc::success);
        CAPTURE(n);
        CAPTURE(kind);
        CHECK(simd == reference);
      }
    }
  }
}

}  // namespace test_quantize
