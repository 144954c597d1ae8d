// Dequantization, held to ggml bit for bit: every tensor of every committed fixture (ggml-quantized
// weights, random block bytes with NaN/Inf scales, odd shapes, 3-D/4-D, v1/v2, big-endian) against
// the float32 ggml computed for it (the fixture's .expected.gguf twin). Any NaN equals any NaN.
#include <doctest/doctest.h>

#include <gguf/dequantize.hpp>
#include <gguf/kernels/plain/dequantize.hpp>  // the scalar specification, tested directly below
#include <gguf/open.hpp>
#include <gguf/parallel.hpp>
#include <gguf/print.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_dequant {

namespace fs = std::filesystem;
using gguf::errc;
using gguf::ggml_type;

namespace {

const fs::path quants_dir = fs::path(GGUF_TEST_DATA_DIR) / "quants";

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

struct fixture {
  std::string name;
  gguf::mapped_gguf data, expected;
};

const std::vector<fixture>& fixtures() {
  static const std::vector<fixture> all = [] {
    std::vector<fixture> v;
    for (const auto& e : fs::directory_iterator(quants_dir)) {
      const std::string file = e.path().filename().string();
      const std::string suffix = ".expected.gguf";
      if (file.size() <= suffix.size() || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const std::string stem = file.substr(0, file.size() - suffix.size());
      auto data = gguf::open((quants_dir / (stem + ".gguf")).string().c_str());
      auto expected = gguf::open(e.path().string().c_str());
      REQUIRE_MESSAGE(data, stem << ": " << gguf::to_string(data.error()));
      REQUIRE_MESSAGE(expected, stem << ": " << gguf::to_string(expected.error()));
      v.push_back({stem, std::move(*data), std::move(*expected)});
    }
    return v;
  }();
  return all;
}

// Dequantize tensor t.<type> of every fixture and compare with ggml's floats.
void check_type(ggml_type type) {
  const std::string tensor = "t." + std::string(gguf::to_string(type));
  std::size_t tensors = 0;
  for (const fixture& fx : fixtures()) {
    const gguf::tensor_info* t = fx.data.find_tensor(tensor);
    if (!t) continue;
    CAPTURE(fx.name);
    const gguf::tensor_info* want = fx.expected.find_tensor(tensor);
    REQUIRE(want);
    REQUIRE(want->type == ggml_type::f32);
    REQUIRE(want->n_elements == t->n_elements);
    std::vector<float> got(t->n_elements, -12345.0f), ref(want->n_elements);
    REQUIRE(gguf::dequantize(*want, ref));
    REQUIRE(gguf::dequantize(*t, got));
    std::size_t bad = 0, first_bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!same_bits(got[i], ref[i]) && bad++ == 0) first_bad = i;
    }
    CHECK_MESSAGE(bad == 0, bad << " of " << got.size() << " differ; first at " << first_bad << ": got "
                                << got[first_bad] << ", ggml " << ref[first_bad]);

    // Rows: any range of rows equals the same slice of the whole tensor.
    const std::uint64_t rows = t->n_rows(), row = t->ne[0];
    for (std::uint64_t first = 0; first < rows; first += 2) {
      const std::uint64_t n = std::min<std::uint64_t>(3, rows - first);
      std::vector<float> part(n * row);
      REQUIRE(gguf::dequantize_rows(*t, first, n, part));
      CHECK(std::memcmp(part.data(), got.data() + first * row, part.size() * sizeof(float)) == 0);
    }
    ++tensors;
  }
  CHECK(tensors >= 10);  // every fixture holds every type
}

}  // namespace

#define GGUF_DEQUANT_CASE(t) \
  TEST_CASE("dequant " #t " is bit-exact with ggml on every fixture") { check_type(ggml_type::t); }
GGUF_DEQUANT_CASE(f32)
GGUF_DEQUANT_CASE(f16)
GGUF_DEQUANT_CASE(bf16)
GGUF_DEQUANT_CASE(f64)
GGUF_DEQUANT_CASE(i8)
GGUF_DEQUANT_CASE(i16)
GGUF_DEQUANT_CASE(i32)
GGUF_DEQUANT_CASE(i64)
GGUF_DEQUANT_CASE(q4_0)
GGUF_DEQUANT_CASE(q4_1)
GGUF_DEQUANT_CASE(q5_0)
GGUF_DEQUANT_CASE(q5_1)
GGUF_DEQUANT_CASE(q8_0)
GGUF_DEQUANT_CASE(q8_1)
GGUF_DEQUANT_CASE(q2_K)
GGUF_DEQUANT_CASE(q3_K)
GGUF_DEQUANT_CASE(q4_K)
GGUF_DEQUANT_CASE(q5_K)
GGUF_DEQUANT_CASE(q6_K)
GGUF_DEQUANT_CASE(q8_K)
GGUF_DEQUANT_CASE(iq2_xxs)
GGUF_DEQUANT_CASE(iq2_xs)
GGUF_DEQUANT_CASE(iq2_s)
GGUF_DEQUANT_CASE(iq3_xxs)
GGUF_DEQUANT_CASE(iq3_s)
GGUF_DEQUANT_CASE(iq1_s)
GGUF_DEQUANT_CASE(iq1_m)
GGUF_DEQUANT_CASE(iq4_nl)
GGUF_DEQUANT_CASE(iq4_xs)
GGUF_DEQUANT_CASE(tq1_0)
GGUF_DEQUANT_CASE(tq2_0)
GGUF_DEQUANT_CASE(mxfp4)
GGUF_DEQUANT_CASE(nvfp4)
GGUF_DEQUANT_CASE(q1_0)
GGUF_DEQUANT_CASE(q2_0)
#undef GGUF_DEQUANT_CASE

TEST_CASE("every type of the table has a dequant test above") { CHECK(gguf::ggml_types.size() == 35); }

TEST_CASE("dequantize refuses sizes that do not match") {
  std::vector<std::byte> blocks(2 * 18);
  std::vector<float> out(64);
  CHECK(gguf::dequantize(ggml_type::q4_0, blocks, out));
  std::vector<float> odd(63);
  CHECK(gguf::dequantize(ggml_type::q4_0, blocks, odd).error().code == errc::size_mismatch);
  std::vector<float> more(96);
  CHECK(gguf::dequantize(ggml_type::q4_0, blocks, more).error().code == errc::size_mismatch);
  std::vector<std::byte> extra(2 * 18 + 1);
  CHECK(gguf::dequantize(ggml_type::q4_0, extra, out).error().code == errc::size_mismatch);
  CHECK(gguf::dequantize(static_cast<ggml_type>(4), blocks, out).error().code == errc::bad_tensor_type);
  CHECK(gguf::dequantize(ggml_type::q4_0, std::span<const std::byte>(), std::span<float>()));

  test::file_builder fb;
  fb.tensor("w", ggml_type::q8_0, {64, 3});
  const test::bytes b = fb.build();
  auto f = test::parse(b);
  REQUIRE(f);
  const gguf::tensor_info& t = f->tensors()[0];
  std::vector<float> whole(t.n_elements - 1);
  CHECK(gguf::dequantize(t, whole).error().code == errc::size_mismatch);
  std::vector<float> row(64);
  CHECK(gguf::dequantize_rows(t, 2, 1, row));
  CHECK(gguf::dequantize_rows(t, 3, 1, row).error().code == errc::out_of_range);
  CHECK(gguf::dequantize_rows(t, 1, 1, std::span<float>(row).first(32)).error().code == errc::size_mismatch);
  CHECK(gguf::dequantize_rows(t, 3, 0, std::span<float>()));
}

TEST_CASE("double -> float narrowing: nearest even, +-inf past the range, never undefined") {
  auto narrow = [](double d) {
    std::vector<std::byte> b(8);
    std::memcpy(b.data(), &d, 8);
    float out = 0;
    gguf::kernels::scalar::dequant_f64(b.data(), &out, 1);
    return out;
  };
  CHECK(narrow(1.0) == 1.0f);
  CHECK(narrow(0.1) == 0.1f);
  CHECK(narrow(1e300) == INFINITY);
  CHECK(narrow(-1e300) == -INFINITY);
  CHECK(narrow(0x1.fffffefffffffp+127) == std::numeric_limits<float>::max());  // rounds down to FLT_MAX
  CHECK(narrow(0x1.ffffffp+127) == INFINITY);                                  // the tie rounds to even: inf
  CHECK(std::isnan(narrow(NAN)));
  CHECK(narrow(1e-50) == 0.0f);
}

TEST_CASE("a llama.cpp Q4_K_M model structure: every tensor dequantizes to ggml's bits") {
  const fs::path dir = fs::path(GGUF_TEST_DATA_DIR) / "model";
  auto g = gguf::open((dir / "tiny-llama-q4_K_M.gguf").string().c_str());
  REQUIRE(g);
  const auto& m = g->metadata();
  CHECK(m.architecture() == "llama");
  const std::uint32_t layers = *m.get_arch<std::uint32_t>("block_count");
  const std::uint32_t width = *m.get_arch<std::uint32_t>("embedding_length");
  CHECK(layers == 2);
  CHECK(*m.get<std::uint32_t>("general.file_type") == 15);  // MOSTLY_Q4_K_M
  CHECK(g->tensors().size() == 3 + 9 * layers);             // token_embd, output_norm, output, and 9 per layer
  const gguf::tensor_info* embd = g->find_tensor("token_embd.weight");
  REQUIRE(embd);
  CHECK(embd->type == ggml_type::q4_K);
  CHECK(embd->ne[0] == width);
  CHECK(embd->shape()[0] == m.get<gguf::array_view>("tokenizer.ggml.tokens")->size());  // [n_vocab, n_embd]

  // Expected: one line per tensor, "name fnv1a64 n_elements first_value_bits", from the oracle.
  std::ifstream in(dir / "tiny-llama-q4_K_M.expected.txt");
  std::string line;
  std::size_t checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, hash;
    std::uint64_t n = 0;
    std::uint32_t first = 0;
    fields >> name >> hash >> n >> first;
    CAPTURE(name);
    const gguf::tensor_info* t = g->find_tensor(name);
    REQUIRE(t);
    REQUIRE(t->n_elements == n);
    std::vector<float> out(n);
    REQUIRE(gguf::dequantize(*t, out));
    CHECK(std::bit_cast<std::uint32_t>(out[0]) == first);
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (float x : out) {
      const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
      for (int k = 0; k < 4; ++k) {
        h ^= (bits >> (8 * k)) & 0xFF;
        h *= 0x100000001B3ull;
      }
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    CHECK(hash == hex);
    ++checked;
  }
  CHECK(checked == g->tensors().size());
}

TEST_CASE("dequantize_parallel gives the same bits as dequantize, for any thread count") {
  test::file_builder fb;
  fb.tensor("big", ggml_type::q4_K, {1024, 700});  // 716800 weights: enough to split
  fb.tensor("small", ggml_type::q8_0, {64, 3});
  const test::bytes b = fb.build();
  auto f = test::parse(b);
  REQUIRE(f);
  for (const gguf::tensor_info& t : f->tensors()) {
    std::vector<float> one(t.n_elements);
    REQUIRE(gguf::dequantize(t, one));
    for (unsigned threads : {0u, 1u, 2u, 3u, 8u}) {
      CAPTURE(threads);
      std::vector<float> many(t.n_elements, -1.0f);
      REQUIRE(gguf::dequantize_parallel(t, many, threads));
      CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0);
    }
    std::vector<float> wrong(t.n_elements + 1);
    CHECK(gguf::dequantize_parallel(t, wrong, 2).error().code == errc::size_mismatch);
  }
}

}  // namespace test_dequant
