// The IQ grid quantizers (gguf/kernels/iq_grid/quantize.hpp), held to ggml byte for byte: every case of
// tests/data/quantize/golden-iq.gguf (made by tests/oracle/make_quantize_golden_iq.py with the real ggml) is
// quantized again and compared; where ggml aborts, the quantizer must refuse. Then the round trip through the
// library's dequantizers on Gaussian data, and the refusals ggml makes by contract.
#include <doctest/doctest.h>

#include <gguf/dequantize.hpp>
#include <gguf/gguf.hpp>
#include <gguf/kernels/iq_grid/quantize.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// Each test file keeps its names in a namespace of its own.
namespace test_quantize_iq {

namespace fs = std::filesystem;
using gguf::errc;
using gguf::ggml_type;

namespace {

namespace ks = gguf::kernels::scalar;
using quantizer = errc (*)(const float*, std::byte*, std::size_t, const float*) noexcept;

struct iq_type {
  ggml_type type;
  quantizer fn;
  std::size_t block_bytes;
  bool needs_importance;
};

const iq_type iq_types[] = {
    {ggml_type::iq2_xxs, ks::quantize_iq2_xxs, sizeof(gguf::blocks::iq2_xxs), true},
    {ggml_type::iq2_xs, ks::quantize_iq2_xs, sizeof(gguf::blocks::iq2_xs), true},
    {ggml_type::iq2_s, ks::quantize_iq2_s, sizeof(gguf::blocks::iq2_s), false},
    {ggml_type::iq3_xxs, ks::quantize_iq3_xxs, sizeof(gguf::blocks::iq3_xxs), false},
    {ggml_type::iq3_s, ks::quantize_iq3_s, sizeof(gguf::blocks::iq3_s), false},
    {ggml_type::iq1_s, ks::quantize_iq1_s, sizeof(gguf::blocks::iq1_s), true},
    {ggml_type::iq1_m, ks::quantize_iq1_m, sizeof(gguf::blocks::iq1_m), false},
};

const iq_type& info(ggml_type t) {
  for (const auto& e : iq_types) {
    if (e.type == t) return e;
  }
  FAIL("not an IQ grid type");
  return iq_types[0];
}

const gguf::mapped_gguf& golden() {
  static const gguf::mapped_gguf file = [] {
    auto f = gguf::open((fs::path(GGUF_TEST_DATA_DIR) / "quantize" / "golden-iq.gguf").string().c_str());
    REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
    return std::move(*f);
  }();
  return file;
}

std::vector<float> floats_of(const gguf::tensor_info& t) {
  REQUIRE(t.type == ggml_type::f32);
  std::vector<float> v(t.n_elements);
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
  return v;
}

/// The rows of input `in`, quantized to `q` through gguf::quantize (with its importance when `weighted`):
/// the bytes, or the error.
errc quantize_input(const iq_type& q, std::string_view in, bool weighted, std::vector<std::byte>& out) {
  const gguf::mapped_gguf& g = golden();
  const gguf::tensor_info* src = g.find_tensor(std::string(in) + ".src");
  const gguf::tensor_info* imp = g.find_tensor(std::string(in) + ".importance");
  REQUIRE(src);
  REQUIRE(imp);
  const std::vector<float> x = floats_of(*src), w = floats_of(*imp);
  const std::size_t n = src->ne[0], rows = src->ne[1];
  out.assign(rows * (n / 256 * q.block_bytes), std::byte{0xA5});
  const auto written =
      gguf::quantize(q.type, x, n, out, weighted ? std::span<const float>(w) : std::span<const float>{});
  if (!written) return written.error().code;
  REQUIRE(*written == out.size());
  return errc::success;
}

void check_golden(ggml_type type) {
  const iq_type& q = info(type);
  const std::string name(gguf::to_string(type));
  const gguf::mapped_gguf& g = golden();
  std::size_t compared = 0, refused = 0;
  for (const gguf::tensor_info& t : g.tensors()) {
    std::string_view c = t.name;
    if (!c.ends_with(".q")) continue;
    c.remove_suffix(2);
    const bool weighted = !c.ends_with(".n");
    if (!weighted) c.remove_suffix(2);
    if (!c.ends_with("." + name)) continue;
    const std::string_view in = c.substr(0, c.size() - name.size() - 1);
    CAPTURE(t.name);
    REQUIRE(t.type == type);
    std::vector<std::byte> got;
    REQUIRE(quantize_input(q, in, weighted, got) == errc::success);
    REQUIRE(got.size() == t.data.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i] != t.data[i]) {
        FAIL_CHECK(t.name << ": block " << i / q.block_bytes << ", byte " << i % q.block_bytes << ": ours 0x"
                          << std::hex << static_cast<unsigned>(got[i]) << ", ggml 0x"
                          << static_cast<unsigned>(t.data[i]));
        break;
      }
    }
    ++compared;
  }
  // Where ggml aborts (GGML_ASSERT), the quantizer refuses the row.
  for (std::string_view c : *g.metadata().get<gguf::array_view>("quantize.refused")->as<std::string_view>()) {
    const bool weighted = !c.ends_with(".n");
    if (!weighted) c.remove_suffix(2);
    if (!c.ends_with("." + name)) continue;
    CAPTURE(c);
    std::vector<std::byte> got;
    CHECK(quantize_input(q, c.substr(0, c.size() - name.size() - 1), weighted, got) == errc::out_of_range);
    ++refused;
  }
  CHECK(compared >= 20);
  MESSAGE(name << ": " << compared << " golden cases equal, " << refused << " refused as ggml aborts");
}

/// Gaussian rows, quantized and dequantized: the error relative to the data's RMS.
double round_trip_error(ggml_type type, bool weighted) {
  const iq_type& q = info(type);
  constexpr std::size_t n = 4096;
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n), w(n, 1.0f), y(n);
  for (auto& v : x) v = dist(rng);
  std::vector<std::byte> blocks(n / 256 * q.block_bytes);
  REQUIRE(q.fn(x.data(), blocks.data(), n, weighted ? w.data() : nullptr) == errc::success);
  REQUIRE(gguf::dequantize(type, blocks, y));
  double err = 0, ref = 0;
  for (std::size_t i = 0; i < n; ++i) {
    err += (x[i] - y[i]) * static_cast<double>(x[i] - y[i]);
    ref += x[i] * static_cast<double>(x[i]);
  }
  return std::sqrt(err / ref);
}

}  // namespace

#define GGUF_QUANTIZE_IQ_CASE(t)                                                                           \
  TEST_CASE("quantize " #t " writes ggml's bytes for every golden input, and refuses where ggml aborts") { \
    check_golden(ggml_type::t);                                                                            \
  }
GGUF_QUANTIZE_IQ_CASE(iq2_xxs)
GGUF_QUANTIZE_IQ_CASE(iq2_xs)
GGUF_QUANTIZE_IQ_CASE(iq2_s)
GGUF_QUANTIZE_IQ_CASE(iq3_xxs)
GGUF_QUANTIZE_IQ_CASE(iq3_s)
GGUF_QUANTIZE_IQ_CASE(iq1_s)
GGUF_QUANTIZE_IQ_CASE(iq1_m)

TEST_CASE("quantize iq grids: each neighbour list table is exactly as long as ggml's searches make it") {
  namespace iq = ks::detail::iq;
  CHECK(iq::iq2xxs_search().filled == iq::iq2xxs_search().neighbours.size());
  CHECK(iq::iq2xs_search().filled == iq::iq2xs_search().neighbours.size());
  CHECK(iq::iq2s_search().filled == iq::iq2s_search().neighbours.size());
  CHECK(iq::iq1_search().filled == iq::iq1_search().neighbours.size());
  CHECK(iq::iq3xxs_search().filled == iq::iq3xxs_search().neighbours.size());
  CHECK(iq::iq3s_search().filled == iq::iq3s_search().neighbours.size());
  // Every grid point maps to itself.
  const auto& s = iq::iq2xs_search();
  for (std::size_t j = 0; j < s.grid_size; ++j) {
    std::int8_t L[8];
    s.levels(j, L);
    REQUIRE(s.lookup(L) == static_cast<std::int32_t>(j));
  }
}

TEST_CASE("quantize iq2_xxs, iq2_xs and iq1_s require importance, and every IQ type whole 256-weight blocks") {
  std::vector<float> x(512, 1.0f);
  std::vector<std::byte> out(512 / 256 * 110);
  for (const auto& q : iq_types) {
    CAPTURE(gguf::to_string(q.type));
    const errc e = q.fn(x.data(), out.data(), 512, nullptr);
    CHECK(e == (q.needs_importance ? errc::not_found : errc::success));
    CHECK(q.fn(x.data(), out.data(), 300, x.data()) == errc::size_mismatch);
    // Through gguf::quantize: refused before anything is written.
    std::vector<std::byte> canary(out.size(), std::byte{0xA5});
    const auto r = gguf::quantize(q.type, x, 512, canary);
    CHECK(static_cast<bool>(r) == !q.needs_importance);
    if (q.needs_importance) CHECK(canary == std::vector<std::byte>(out.size(), std::byte{0xA5}));
    CHECK(gguf::quantize(q.type, x, 300, out, x).error().code == errc::bad_row_size);
  }
}

TEST_CASE("quantize: the IQ grid types refuse a row exactly where ggml aborts on it, with out_of_range") {
  // Rows of 0.5 with one NaN, or one infinity, at weight 1: where ggml (the oracle's build) aborts on
  // a GGML_ASSERT and where it writes blocks. The bytes it writes are checked in the golden cases.
  struct expectation {
    ggml_type type;
    bool aborts_on_nan, aborts_on_inf;
  };
  const expectation cases[] = {{ggml_type::iq2_xxs, false, true}, {ggml_type::iq2_xs, true, false},
                               {ggml_type::iq2_s, true, false},   {ggml_type::iq3_xxs, true, true},
                               {ggml_type::iq3_s, true, true},    {ggml_type::iq1_s, false, true},
                               {ggml_type::iq1_m, false, true}};
  const std::vector<float> w(256, 1.0f);
  std::vector<std::byte> out(256);
  for (const expectation& c : cases) {
    for (const float special : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      std::vector<float> x(256, 0.5f);
      x[17] = special;
      CAPTURE(gguf::to_string(c.type));
      CAPTURE(special);
      const auto r = gguf::quantize(c.type, x, 256, out, w);
      if (std::isnan(special) ? c.aborts_on_nan : c.aborts_on_inf) {
        CHECK(r.error().code == errc::out_of_range);
      } else {
        CHECK(r);
      }
    }
  }
  // The other types quantize such rows, as ggml does.
  std::vector<float> x(256, 0.5f);
  x[17] = std::numeric_limits<float>::infinity();
  CHECK(gguf::quantize(ggml_type::q4_K, x, 256, out, w));
}

TEST_CASE("quantize IQ types round trip Gaussian data within each type's error") {
  struct bound {
    ggml_type type;
    double weighted, unweighted;  ///< relative RMSE bounds, with importance 1 and without importance
  };
  // This data gives (ggml's and ours, being the same bytes): iq1_s 0.489, iq1_m 0.449 / 0.574, iq2_xxs 0.341,
  // iq2_xs 0.297, iq2_s 0.246 / 0.261, iq3_xxs 0.181 / 0.209, iq3_s 0.139 / 0.167; the bounds add ~8%.
  const bound bounds[] = {{ggml_type::iq1_s, 0.53, 0},    {ggml_type::iq1_m, 0.49, 0.62},
                          {ggml_type::iq2_xxs, 0.37, 0},  {ggml_type::iq2_xs, 0.32, 0},
                          {ggml_type::iq2_s, 0.27, 0.28}, {ggml_type::iq3_xxs, 0.20, 0.23},
                          {ggml_type::iq3_s, 0.15, 0.18}};
  for (const bound& b : bounds) {
    CAPTURE(gguf::to_string(b.type));
    const double e = round_trip_error(b.type, true);
    CHECK(e < b.weighted);
    if (!info(b.type).needs_importance) {
      const double u = round_trip_error(b.type, false);
      MESSAGE(gguf::to_string(b.type) << " relative RMSE " << e << " (without importance " << u << ")");
      CHECK(u < b.unweighted);
    }
  }
}

}  // namespace test_quantize_iq
