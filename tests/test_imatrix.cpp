// Importance matrices (gguf/imatrix.hpp), as llama.cpp's llama-quantize reads them: the legacy .dat and
// the GGUF imatrix, the weights derived from each, and every malformed file refused without a crash.
// Whole-model quantization with them is checked against llama.cpp in tests/oracle/quantize_model_agreement.py.
#include <doctest/doctest.h>

#include <gguf/gguf.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <iterator>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

// Each test file keeps its names in a namespace of its own.
namespace test_imatrix {

using gguf::errc;
using gguf::ggml_type;

namespace {

/// Bytes of a legacy file, built field by field.
struct legacy_file {
  std::vector<std::byte> bytes;
  void i32(std::int32_t v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    bytes.insert(bytes.end(), p, p + 4);
  }
  void f32(float v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    bytes.insert(bytes.end(), p, p + 4);
  }
  void str(std::string_view s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    bytes.insert(bytes.end(), p, p + s.size());
  }
  void entry(std::string_view name, std::int32_t ncall, const std::vector<float>& values) {
    i32(static_cast<std::int32_t>(name.size()));
    str(name);
    i32(ncall);
    i32(static_cast<std::int32_t>(values.size()));
    for (float v : values) f32(v);
  }
};

/// A GGUF imatrix as llama-imatrix writes it: the keys, then in_sum2 and counts per entry.
struct gguf_imatrix {
  gguf::writer w;
  std::vector<std::vector<float>> keep;  // the tensors' floats (the writer borrows them)
  gguf_imatrix() {
    REQUIRE(w.set("general.type", gguf::value("imatrix")));
    REQUIRE(w.set("imatrix.datasets", gguf::value::strings({"wiki.train.raw", "code.txt"})));
    REQUIRE(w.set("imatrix.chunk_count", gguf::value(std::uint32_t{125})));
    REQUIRE(w.set("imatrix.chunk_size", gguf::value(std::uint32_t{512})));
  }
  void tensor(const std::string& name, std::vector<std::uint64_t> ne, std::vector<float> v) {
    keep.push_back(std::move(v));
    const std::span<const std::byte> data(reinterpret_cast<const std::byte*>(keep.back().data()),
                                          keep.back().size() * 4);
    REQUIRE(w.add_tensor(name, ggml_type::f32, ne, data));
  }
  std::vector<std::byte> bytes() const {
    std::vector<std::byte> out;
    gguf::vector_sink sink(out);
    REQUIRE(w.write(sink));
    return out;
  }
};

}  // namespace

TEST_CASE("imatrix legacy: values are averages times ncall, divided by ncall on reading") {
  legacy_file f;
  f.i32(2);
  f.entry("blk.0.attn_q.weight", 10, {10.0f, 25.0f, 1.0f});
  f.entry("blk.0.ffn_down.weight", 0, {3.0f, 4.0f});  // ncall 0: taken as they are
  auto m = gguf::read_imatrix(f.bytes);
  REQUIRE_MESSAGE(m, gguf::to_string(m.error()));
  CHECK(m->format() == gguf::imatrix::file_format::legacy);
  CHECK(m->entries().size() == 2);
  const auto q = m->find("blk.0.attn_q.weight");
  REQUIRE(q.size() == 3);
  CHECK(q[0] == 1.0f);
  CHECK(q[1] == 2.5f);
  CHECK(q[2] == 1.0f / 10.0f);  // float division, as llama.cpp's `v /= ncall`
  const auto d = m->find("blk.0.ffn_down.weight");
  REQUIRE(d.size() == 2);
  CHECK(d[1] == 4.0f);
  CHECK(m->find("blk.0.attn_k.weight").empty());
  CHECK(m->datasets().empty());  // an older file: no dataset, no chunk count
  CHECK(m->chunk_count() == 0);
}

TEST_CASE("imatrix legacy: the newer files end with the chunk count and the dataset's name") {
  legacy_file f;
  f.i32(1);
  f.entry("output.weight", 4, {8.0f});
  f.i32(125);
  f.i32(14);
  f.str("wiki.train.raw");
  auto m = gguf::read_imatrix(f.bytes);
  REQUIRE(m);
  CHECK(m->chunk_count() == 125);
  REQUIRE(m->datasets().size() == 1);
  CHECK(m->datasets()[0] == "wiki.train.raw");
  CHECK(m->find("output.weight")[0] == 2.0f);
}

TEST_CASE("imatrix legacy: a name given twice keeps its last values, and a name is read up to a NUL") {
  legacy_file f;
  f.i32(3);
  f.entry("a", 1, {1.0f});
  f.entry(std::string_view("b\0junk", 6), 1, {2.0f});
  f.entry("a", 1, {3.0f, 4.0f});
  auto m = gguf::read_imatrix(f.bytes);
  REQUIRE(m);
  CHECK(m->entries().size() == 2);
  CHECK(m->find("a").size() == 2);
  CHECK(m->find("a")[0] == 3.0f);
  CHECK(m->find("b")[0] == 2.0f);
}

TEST_CASE("imatrix legacy: every truncation and bad count is refused, never read past the end") {
  legacy_file f;
  f.i32(2);
  f.entry("blk.0.attn_q.weight", 10, {10.0f, 25.0f});
  f.entry("blk.0.attn_k.weight", 10, {1.0f});
  const std::size_t entries_end = f.bytes.size();
  f.i32(7);
  f.i32(4);
  f.str("data");
  for (std::size_t n = 0; n < f.bytes.size(); ++n) {
    CAPTURE(n);
    std::vector<std::byte> cut(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(n));
    const auto m = gguf::read_imatrix(cut);
    if (n == entries_end) {
      CHECK(m);  // an older file ends here
    } else {
      CHECK_FALSE(m);
    }
  }
  for (std::int32_t bad : {0, -1}) {
    legacy_file g;
    g.i32(bad);
    CHECK(gguf::read_imatrix(g.bytes).error().code == errc::out_of_range);
  }
  legacy_file no_values;
  no_values.i32(1);
  no_values.entry("x", 1, {});
  CHECK(gguf::read_imatrix(no_values.bytes).error().code == errc::out_of_range);
  legacy_file huge;
  huge.i32(1);
  huge.i32(0x7FFFFFFF);
  CHECK(gguf::read_imatrix(huge.bytes).error().code == errc::truncated);
  legacy_file negative;
  negative.i32(1);
  negative.i32(-5);
  CHECK(gguf::read_imatrix(negative.bytes).error().code == errc::truncated);
}

TEST_CASE("imatrix GGUF: in_sum2 / counts per matrix, and a matrix without counts gets weights 1") {
  gguf_imatrix g;
  g.tensor("blk.0.ffn_up_exps.weight.in_sum2", {2, 3}, {4, 8, 3, 6, 5, 7});
  g.tensor("blk.0.ffn_up_exps.weight.counts", {1, 3}, {4, 0, 2});
  g.tensor("blk.0.attn_q.weight.in_sum2", {2, 1}, {1, 2});
  g.tensor("blk.0.attn_q.weight.counts", {1, 1}, {3});
  g.tensor("unrelated.tensor", {1}, {0});  // other tensors are ignored
  auto m = gguf::read_imatrix(g.bytes());
  REQUIRE_MESSAGE(m, gguf::to_string(m.error()));
  CHECK(m->format() == gguf::imatrix::file_format::gguf);
  CHECK(m->entries().size() == 2);
  CHECK(m->chunk_count() == 125);
  CHECK(m->chunk_size() == 512);
  REQUIRE(m->datasets().size() == 2);
  CHECK(m->datasets()[1] == "code.txt");
  const auto e = m->find("blk.0.ffn_up_exps.weight");
  REQUIRE(e.size() == 6);
  CHECK(e[0] == 1.0f);
  CHECK(e[1] == 2.0f);
  CHECK(e[2] == 1.0f);  // count 0: never saw input during calibration
  CHECK(e[3] == 1.0f);
  CHECK(e[4] == 2.5f);
  CHECK(e[5] == 3.5f);
  CHECK(m->entries()[1].n_mat == 3);
  CHECK(m->find("blk.0.attn_q.weight")[1] == 2.0f / 3.0f);
  CHECK(m->check_finite());
}

TEST_CASE("imatrix GGUF: unpaired, mistyped or misshapen tensors and missing keys are refused") {
  {
    gguf_imatrix g;
    g.tensor("a.in_sum2", {2, 1}, {1, 2});
    CHECK(gguf::read_imatrix(g.bytes()).error().code == errc::not_found);
  }
  {
    gguf_imatrix g;
    g.tensor("a.counts", {1, 1}, {1});
    CHECK(gguf::read_imatrix(g.bytes()).error().code == errc::not_found);
  }
  {
    gguf_imatrix g;
    g.tensor("a.in_sum2", {2, 2}, {1, 2, 3, 4});
    g.tensor("a.counts", {1, 1}, {1});
    CHECK(gguf::read_imatrix(g.bytes()).error().code == errc::size_mismatch);
  }
  {
    gguf_imatrix g;
    REQUIRE(g.w.remove("imatrix.chunk_size"));
    g.tensor("a.in_sum2", {2, 1}, {1, 2});
    g.tensor("a.counts", {1, 1}, {1});
    CHECK(gguf::read_imatrix(g.bytes()).error().code == errc::not_found);
  }
  {
    gguf_imatrix g;  // no entries at all
    CHECK(gguf::read_imatrix(g.bytes()).error().code == errc::not_found);
  }
  {
    gguf_imatrix g;
    g.tensor("a.in_sum2", {2, 1}, {std::numeric_limits<float>::infinity(), 2});
    g.tensor("a.counts", {1, 1}, {1});
    auto m = gguf::read_imatrix(g.bytes());
    REQUIRE(m);
    CHECK(m->check_finite().error().code == errc::out_of_range);  // llama.cpp refuses such a matrix
    CHECK(m->check_finite().error().subject() == "a");
  }
}

TEST_CASE("check_finite: the floats ggml_validate_row_data checks, per type") {
  std::vector<std::byte> q4(2 * sizeof(gguf::blocks::q4_K), std::byte{0});
  CHECK(gguf::check_finite(ggml_type::q4_K, q4));
  // the second block's dmin is +inf (0x7C00)
  q4[sizeof(gguf::blocks::q4_K) + offsetof(gguf::blocks::q4_K, dmin) + 1] = std::byte{0x7C};
  const auto bad = gguf::check_finite(ggml_type::q4_K, q4);
  CHECK(bad.error().code == errc::out_of_range);
  CHECK(bad.error().offset == sizeof(gguf::blocks::q4_K) + offsetof(gguf::blocks::q4_K, dmin));
  // the quants themselves are never floats: any bytes pass
  std::vector<std::byte> q8(sizeof(gguf::blocks::q8_0), std::byte{0xFF});
  q8[0] = q8[1] = std::byte{0};
  CHECK(gguf::check_finite(ggml_type::q8_0, q8));
  const float f[3] = {1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  CHECK(gguf::check_finite(ggml_type::f32, std::as_bytes(std::span(f))).error().offset == 4);
  std::vector<std::byte> mx(sizeof(gguf::blocks::mxfp4), std::byte{0});
  mx[0] = std::byte{0xFF};  // E8M0 0xFF is NaN
  CHECK_FALSE(gguf::check_finite(ggml_type::mxfp4, mx));
  std::vector<std::byte> nv(sizeof(gguf::blocks::nvfp4), std::byte{0xFF});
  CHECK(gguf::check_finite(ggml_type::nvfp4, nv));  // every UE4M3 byte is a value
  CHECK(gguf::check_finite(ggml_type::q8_0, std::span(q8).first(5)).error().code == errc::size_mismatch);
  CHECK(gguf::check_finite(ggml_type::q8_1, {}).error().code == errc::bad_tensor_type);
}

namespace {

/// A one-block llama of f32 weights (random, fixed seed), written to `path`: enough for llama.cpp's mixes.
/// The tensors named in `poisoned` hold an infinity (their quantized blocks get an infinite scale).
void write_tiny_llama(const std::filesystem::path& path, std::vector<std::vector<float>>& data, bool with_4d = false,
                      std::initializer_list<std::string_view> poisoned = {}) {
  gguf::writer w;
  REQUIRE(w.set("general.architecture", gguf::value("llama")));
  REQUIRE(w.set("general.file_type", gguf::value(std::uint32_t{0})));
  REQUIRE(w.set("llama.block_count", gguf::value(std::uint32_t{1})));
  REQUIRE(w.set("llama.context_length", gguf::value(std::uint32_t{256})));
  REQUIRE(w.set("llama.embedding_length", gguf::value(std::uint32_t{256})));
  REQUIRE(w.set("llama.feed_forward_length", gguf::value(std::uint32_t{512})));
  REQUIRE(w.set("llama.attention.head_count", gguf::value(std::uint32_t{4})));
  REQUIRE(w.set("llama.attention.head_count_kv", gguf::value(std::uint32_t{4})));
  REQUIRE(w.set("split.count", gguf::value(std::uint16_t{0})));  // a merged file's leftover: dropped
  std::uint32_t state = 12345;
  const auto add = [&](const std::string& name, std::vector<std::uint64_t> ne) {
    std::size_t n = 1;
    for (auto d : ne) n *= d;
    std::vector<float> v(n);
    for (float& x : v) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<float>(static_cast<std::int32_t>(state)) * 1e-10f;
    }
    if (std::ranges::find(poisoned, name) != poisoned.end()) v[v.size() / 2] = std::numeric_limits<float>::infinity();
    data.push_back(std::move(v));
    const auto& d = data.back();
    REQUIRE(w.add_tensor(name, ggml_type::f32, ne, std::as_bytes(std::span(d))));
  };
  data.reserve(16);
  add("token_embd.weight", {256, 64});
  add("blk.0.attn_norm.weight", {256});
  add("blk.0.attn_q.weight", {256, 256});
  add("blk.0.attn_k.weight", {256, 256});
  add("blk.0.attn_v.weight", {256, 256});
  add("blk.0.attn_output.weight", {256, 256});
  add("blk.0.ffn_gate.weight", {256, 512});
  add("blk.0.ffn_up.weight", {256, 512});
  add("blk.0.ffn_down.weight", {512, 256});
  add("output.weight", {256, 64});
  if (with_4d) add("blk.0.extra.weight", {256, 16, 2, 2});
  REQUIRE(gguf::save(w, path));
}

}  // namespace

TEST_CASE("quantize_model: llama.cpp's file, every tensor what gguf::quantize makes of it, for any threads") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gguf-test-quantize-model";
  std::filesystem::create_directories(dir);
  {  // the mappings close before the directory goes (Windows cannot delete a mapped file)
    std::vector<std::vector<float>> data;
    write_tiny_llama(dir / "in.gguf", data);
    auto m = gguf::open_model(dir / "in.gguf");
    REQUIRE(m);
    const gguf::ftype_info* q4km = gguf::find_ftype("Q4_K_M");
    REQUIRE(q4km);

    gguf::quantize_model_options opt;
    REQUIRE(gguf::quantize_model(*m, dir / "one.gguf", *q4km, opt));
    opt.n_threads = 2;
    opt.chunk_weights = 300;  // windows of one row per thread, across the writer's chunks
    REQUIRE(gguf::quantize_model(*m, dir / "two.gguf", *q4km, opt));
    auto one = gguf::open(dir / "one.gguf");
    auto two = gguf::open(dir / "two.gguf");
    REQUIRE(one);
    REQUIRE(two);
    CHECK(std::ranges::equal(one->bytes(), two->bytes()));

    // every tensor converts through one workspace; a writer written twice (the second pass starts on a
    // workspace the last tensor holds) writes the same file twice
    std::vector<gguf::tensor_plan> steps(m->tensors().size());
    REQUIRE(gguf::plan_quantization(m->metadata(), m->tensors(), *q4km, {}, steps));
    auto w = gguf::quantized_writer(*m, *q4km, steps, opt);
    REQUIRE(w);
    std::vector<std::byte> first, second;
    gguf::vector_sink to_first(first), to_second(second);
    REQUIRE(w->write(to_first));
    REQUIRE(w->write(to_second));
    CHECK(std::ranges::equal(first, one->bytes()));
    CHECK(std::ranges::equal(second, one->bytes()));

    // the metadata: the model's keys, split keys dropped, the two llama.cpp sets last
    const auto& md = one->metadata();
    CHECK_FALSE(md.contains("split.count"));
    CHECK(md[md.size() - 2].key == "general.quantization_version");
    CHECK(md[md.size() - 1].key == "general.file_type");
    CHECK(md.get<std::uint32_t>("general.file_type").value() == 15);

    // each tensor: copied, or quantized from the source's floats row by row
    std::vector<gguf::tensor_plan> plan(m->tensors().size());
    REQUIRE(gguf::plan_quantization(m->metadata(), m->tensors(), *q4km, {}, plan));
    for (const gguf::tensor_plan& p : plan) {
      CAPTURE(p.name);
      const gguf::tensor_info* t = one->find_tensor(p.name);
      REQUIRE(t);
      CHECK(t->type == p.to);
      CHECK(one->tensors()[p.output_index].name == p.name);
      const std::vector<float>& src = data[p.index];
      std::vector<std::byte> want(t->n_bytes);
      REQUIRE(gguf::quantize(p.to, src, t->ne[0], want));
      CHECK(std::ranges::equal(want, t->data));
    }

    // importance weights of the wrong length are refused before anything is written
    std::vector<float> short_weights(100, 1.0f);
    opt.importance = [&](std::string_view name) {
      return name == "blk.0.attn_q.weight" ? std::span<const float>(short_weights) : std::span<const float>{};
    };
    const auto r = gguf::quantize_model(*m, dir / "refused.gguf", *q4km, opt);
    CHECK(r.error().code == errc::size_mismatch);
    CHECK(r.error().subject() == "blk.0.attn_q.weight");
    CHECK_FALSE(std::filesystem::exists(dir / "refused.gguf"));
    // a type that needs them, without: the plan refuses
    opt.importance = nullptr;
    CHECK(gguf::quantize_model(*m, dir / "refused.gguf", *gguf::find_ftype("IQ2_XS"), opt).error().code ==
          errc::not_found);
    CHECK_FALSE(std::filesystem::exists(dir / "refused.gguf"));
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_CASE("quantize_model: the first tensor in the file's order that fails is the error, whatever the threads") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gguf-test-quantize-model-fails";
  std::filesystem::create_directories(dir);
  {
    std::vector<std::vector<float>> data;
    // two tensors whose q4_K blocks get an infinite scale (llama.cpp refuses them after quantizing); the
    // threads convert ahead of the writer and may reach the second one first
    write_tiny_llama(dir / "in.gguf", data, false, {"blk.0.attn_k.weight", "blk.0.ffn_gate.weight"});
    auto m = gguf::open_model(dir / "in.gguf");
    REQUIRE(m);
    for (const unsigned threads : {1u, 2u, 4u}) {
      for (const std::size_t chunk : {std::size_t{256}, std::size_t{1} << 20}) {
        CAPTURE(threads);
        CAPTURE(chunk);
        gguf::quantize_model_options opt;
        opt.n_threads = threads;
        opt.chunk_weights = chunk;
        const auto r = gguf::quantize_model(*m, dir / "out.gguf", *gguf::find_ftype("Q4_K_M"), opt);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::out_of_range);
        CHECK(r.error().subject() == "blk.0.attn_k.weight");
        CHECK_FALSE(std::filesystem::exists(dir / "out.gguf"));
      }
    }
    CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_CASE("quantize_model: importance weights per matrix slice ne[2] only, so a 4-D tensor takes one row's worth") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gguf-test-quantize-model-4d";
  std::filesystem::create_directories(dir);
  {
    std::vector<std::vector<float>> data;
    write_tiny_llama(dir / "in.gguf", data, true);
    auto m = gguf::open_model(dir / "in.gguf");
    REQUIRE(m);
    std::vector<float> per_column(256, 1.0f), per_matrix(256 * 2, 1.0f);
    gguf::quantize_model_options opt;
    std::span<const float> given = per_matrix;
    opt.importance = [&](std::string_view name) {
      return name == "blk.0.extra.weight" ? given : std::span<const float>{};
    };
    const auto r = gguf::quantize_model(*m, dir / "out.gguf", *gguf::find_ftype("Q4_K_M"), opt);
    CHECK(r.error().code == errc::size_mismatch);
    CHECK(r.error().subject() == "blk.0.extra.weight");
    CHECK_FALSE(std::filesystem::exists(dir / "out.gguf"));
    given = per_column;  // one weight per column serves every matrix
    REQUIRE(gguf::quantize_model(*m, dir / "out.gguf", *gguf::find_ftype("Q4_K_M"), opt));
    auto out = gguf::open(dir / "out.gguf");
    REQUIRE(out);
    const gguf::tensor_info* t = out->find_tensor("blk.0.extra.weight");
    REQUIRE(t);
    std::vector<std::byte> want(t->n_bytes);
    REQUIRE(gguf::quantize(t->type, data.back(), 256, want, per_column));
    CHECK(std::ranges::equal(want, t->data));
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace test_imatrix
