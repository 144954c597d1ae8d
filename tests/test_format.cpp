// The GGUF format, read back: each case states a fact of the spec and checks the reader agrees.
#include <doctest/doctest.h>

#include <gguf/open.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_format {

using gguf::errc;
using gguf::ggml_type;
using gguf::value_type;

namespace {
struct layout {
  std::uint32_t version;
  bool big;
  const char* name;
};
constexpr layout layouts[] = {{1, false, "v1 little-endian"}, {2, false, "v2 little-endian"},
                              {3, false, "v3 little-endian"}, {1, true, "v1 big-endian"},
                              {2, true, "v2 big-endian"},     {3, true, "v3 big-endian"}};

bool points_into(const test::bytes& b, const void* p) {
  const auto* c = static_cast<const std::byte*>(p);
  return c >= b.data() && c < b.data() + b.size();
}
}  // namespace

TEST_CASE("a header with no metadata and no tensors is a complete file") {
  const test::bytes b = test::file_builder().build();
  REQUIRE(b.size() == 24);  // magic, version, n_tensors, n_kv
  auto f = test::parse(b);
  REQUIRE(f);
  CHECK(f->version() == 3);
  CHECK(f->byte_order() == std::endian::little);
  CHECK(f->alignment() == 32);
  CHECK(f->metadata().empty());
  CHECK(f->tensors().empty());
  CHECK(f->data_offset() == 24);  // no tensors: no data section, no padding (as ggml)
}

TEST_CASE("versions 1, 2 and 3 in both byte orders read the same values") {
  for (const layout& l : layouts) {
    CAPTURE(l.name);
    test::file_builder fb(l.version, l.big);
    fb.kv("general.architecture", "llama")
        .kv<std::uint8_t>("u8", 0xAB)
        .kv<std::int8_t>("i8", -5)
        .kv<std::uint16_t>("u16", 0xBEEF)
        .kv<std::int16_t>("i16", -12345)
        .kv<std::uint32_t>("u32", 0xDEADBEEF)
        .kv<std::int32_t>("i32", -123456789)
        .kv<float>("f32", 1.5f)
        .kv<bool>("bool", true)
        .kv<std::uint64_t>("u64", 0x0123456789ABCDEFull)
        .kv<std::int64_t>("i64", -0x0123456789ABCDEFll)
        .kv<double>("f64", -2.25)
        .kv_array<std::uint16_t>("arr.u16", {1, 2, 0xFF00})
        .kv_array<std::string>("arr.str", {"a", "", "bcd"})
        .tensor("w", ggml_type::q4_0, {64, 3})
        .tensor("b", ggml_type::f32, {3});
    const test::bytes b = fb.build();
    auto f = test::parse(b);
    REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
    CHECK(f->version() == l.version);
    CHECK(f->byte_order() == (l.big ? std::endian::big : std::endian::little));
    const auto& m = f->metadata();
    CHECK(m.size() == 14);
    CHECK(m.architecture() == "llama");
    CHECK(*m.get<std::uint8_t>("u8") == 0xAB);
    CHECK(*m.get<std::int8_t>("i8") == -5);
    CHECK(*m.get<std::uint16_t>("u16") == 0xBEEF);
    CHECK(*m.get<std::int16_t>("i16") == -12345);
    CHECK(*m.get<std::uint32_t>("u32") == 0xDEADBEEF);
    CHECK(*m.get<std::int32_t>("i32") == -123456789);
    CHECK(*m.get<float>("f32") == 1.5f);
    CHECK(*m.get<bool>("bool") == true);
    CHECK(*m.get<std::uint64_t>("u64") == 0x0123456789ABCDEFull);
    CHECK(*m.get<std::int64_t>("i64") == -0x0123456789ABCDEFll);
    CHECK(*m.get<double>("f64") == -2.25);
    auto u16 = m.get<gguf::array_view>("arr.u16");
    REQUIRE(u16);
    CHECK(u16->size() == 3);
    CHECK(*u16->get<std::uint16_t>(2) == 0xFF00);
    std::vector<std::string_view> strs;
    for (auto s : *m.get<gguf::array_view>("arr.str")->as<std::string_view>()) strs.push_back(s);
    CHECK(strs == std::vector<std::string_view>{"a", "", "bcd"});
    REQUIRE(f->tensors().size() == 2);
    CHECK(f->tensors()[0].ne[0] == 64);
    CHECK(f->tensors()[0].ne[1] == 3);
    CHECK(f->tensors()[1].n_bytes == 12);
    CHECK(f->tensors()[1].offset == 128);  // 3 rows of 2 q4_0 blocks: 108 bytes, padded to 32
  }
}

TEST_CASE("a big-endian file is recognised by its version word alone") {
  const test::bytes b = test::file_builder(3, true).build();
  CHECK(b[4] == std::byte{0});
  CHECK(b[7] == std::byte{3});  // 0x03000000 read little-endian
  auto f = test::parse(b);
  REQUIRE(f);
  CHECK(f->byte_order() == std::endian::big);
}

TEST_CASE("metadata keeps file order and is found by key") {
  const test::bytes b = test::file_builder()
                            .kv<std::uint32_t>("zeta", 1)
                            .kv<std::uint32_t>("alpha", 2)
                            .kv<std::uint32_t>("mid", 3)
                            .build();
  auto f = test::parse(b);
  REQUIRE(f);
  const auto& m = f->metadata();
  REQUIRE(m.size() == 3);
  CHECK(m[0].key == "zeta");
  CHECK(m[1].key == "alpha");
  CHECK(m[2].key == "mid");
  std::vector<std::string_view> keys;
  for (const auto& e : m) keys.push_back(e.key);
  CHECK(keys == std::vector<std::string_view>{"zeta", "alpha", "mid"});
  CHECK(m.find("alpha")->value.get<std::uint32_t>().value() == 2);
  CHECK(m.find("alph") == nullptr);
  CHECK(m.find("alphaa") == nullptr);
  CHECK(m.contains("mid"));
  CHECK(m.get<std::uint32_t>("nope").error().code == errc::not_found);
  CHECK(m[0].offset == 24);
  CHECK(points_into(b, m[0].key.data()));
}

TEST_CASE("typed access never reinterprets a value as another type") {
  const test::bytes b = test::file_builder()
                            .kv<std::uint32_t>("u32", 7)
                            .kv<std::int64_t>("neg", -1)
                            .kv<std::uint64_t>("big", std::uint64_t{1} << 40)
                            .kv("s", "text")
                            .kv<float>("f", 2.0f)
                            .kv_array<std::int32_t>("a", {1, 2})
                            .build();
  auto f = test::parse(b);
  REQUIRE(f);
  const auto& m = f->metadata();
  CHECK(m.get<std::int32_t>("u32").error().code == errc::type_mismatch);
  CHECK(m.get<std::uint64_t>("u32").error().code == errc::type_mismatch);
  CHECK(m.get<float>("u32").error().code == errc::type_mismatch);
  CHECK(m.get<std::string_view>("u32").error().code == errc::type_mismatch);
  CHECK(m.get<gguf::array_view>("s").error().code == errc::type_mismatch);
  CHECK(m.get<double>("f").error().code == errc::type_mismatch);
  CHECK(m.get<std::uint32_t>("a").error().code == errc::type_mismatch);
  CHECK(m.get<gguf::array_view>("a")->get<std::uint32_t>(0).error().code == errc::type_mismatch);
  CHECK(m.get<gguf::array_view>("a")->as<float>().error().code == errc::type_mismatch);
  CHECK(m.get<gguf::array_view>("a")->get<std::int32_t>(2).error().code == errc::out_of_range);
  // Integer conversions that keep the value are allowed, explicitly.
  CHECK(*m.get_integer<std::int32_t>("u32") == 7);
  CHECK(*m.get_integer<std::uint8_t>("u32") == 7);
  CHECK(*m.get_integer<std::uint64_t>("big") == std::uint64_t{1} << 40);
  CHECK(m.get_integer<std::uint32_t>("big").error().code == errc::out_of_range);
  CHECK(m.get_integer<std::uint64_t>("neg").error().code == errc::out_of_range);
  CHECK(*m.get_integer<std::int8_t>("neg") == -1);
  CHECK(m.get_integer<std::int32_t>("f").error().code == errc::type_mismatch);
  CHECK(m.get_integer<std::int32_t>("s").error().code == errc::type_mismatch);
}

TEST_CASE("strings are views into the file, arrays are lazy views") {
  std::vector<std::string> vocab;
  for (int i = 0; i < 1000; ++i) vocab.push_back("tok" + std::to_string(i));
  const test::bytes b = test::file_builder().kv_array("tokenizer.ggml.tokens", vocab).kv("name", "x").build();
  auto f = test::parse(b);
  REQUIRE(f);
  CHECK(points_into(b, f->metadata().get<std::string_view>("name")->data()));
  const gguf::array_view a = *f->metadata().get<gguf::array_view>("tokenizer.ggml.tokens");
  CHECK(a.item_type() == value_type::string);
  CHECK(a.size() == 1000);
  std::size_t i = 0;
  for (std::string_view s : *a.as<std::string_view>()) {
    CHECK(points_into(b, s.data()));
    CHECK(s == vocab[i++]);
  }
  CHECK(i == 1000);
  CHECK(*a.get<std::string_view>(999) == "tok999");
  i = 0;
  for (gguf::value_view v : a) CHECK(*v.get<std::string_view>() == vocab[i++]);
  CHECK(i == 1000);
}

TEST_CASE("numeric arrays: element by element in both byte orders, as a span when the layout allows") {
  const std::vector<float> scores = {0.5f, -1.0f, 3.25f, 1e-3f};
  for (bool big : {false, true}) {
    CAPTURE(big);
    test::file_builder fb(3, big);
    fb.kv<std::uint8_t>("pad", 0)  // puts the array items at an offset aligned for float
        .kv_array("tokenizer.ggml.scores", scores);
    const test::bytes b = fb.build();
    auto f = test::parse(b);
    REQUIRE(f);
    const gguf::array_view a = *f->metadata().get<gguf::array_view>("tokenizer.ggml.scores");
    std::vector<float> got;
    for (float x : *a.as<float>()) got.push_back(x);
    CHECK(got == scores);
    for (std::size_t i = 0; i < scores.size(); ++i) CHECK(*a.get<float>(i) == scores[i]);
    auto span = a.as_span<float>();
    const bool aligned = reinterpret_cast<std::uintptr_t>(a.bytes().data()) % alignof(float) == 0;
    if (!big && aligned) {
      REQUIRE(span);
      CHECK(std::vector<float>(span->begin(), span->end()) == scores);
    } else {
      CHECK(span.error().code == errc::type_mismatch);
    }
    CHECK(a.as_span<std::int32_t>().error().code == errc::type_mismatch);
  }
}

TEST_CASE("arrays may hold arrays (ggml refuses them, the spec allows them)") {
  const test::bytes b = test::file_builder()
                            .kv_raw("nested",
                                    [](test::byte_writer& w) {
                                      w.u32(9).u32(9).count(2);                // array of 2 arrays
                                      w.u32(8).count(2).str("ab").str("c");    // ["ab", "c"]
                                      w.u32(4).count(3).u32(1).u32(2).u32(3);  // [1, 2, 3]
                                    })
                            .kv<std::uint32_t>("after", 42)
                            .build();
  auto f = test::parse(b);
  REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
  const gguf::array_view outer = *f->metadata().get<gguf::array_view>("nested");
  CHECK(outer.item_type() == value_type::array);
  REQUIRE(outer.size() == 2);
  const gguf::array_view first = *outer.get<gguf::array_view>(0);
  const gguf::array_view second = *outer.get<gguf::array_view>(1);
  CHECK(first.item_type() == value_type::string);
  CHECK(*first.get<std::string_view>(1) == "c");
  CHECK(second.item_type() == value_type::uint32);
  CHECK(*second.get<std::uint32_t>(2) == 3);
  int n = 0;
  for (gguf::value_view v : outer) {
    CHECK(v.is_array());
    ++n;
  }
  CHECK(n == 2);
  CHECK(*f->metadata().get<std::uint32_t>("after") == 42);
}

TEST_CASE("general.alignment sets the data alignment and tensor offsets follow it") {
  test::file_builder fb;
  fb.alignment = 64;
  fb.kv<std::uint32_t>("general.alignment", 64).tensor("a", ggml_type::f32, {3}).tensor("b", ggml_type::f16, {5});
  const test::bytes b = fb.build();
  auto f = test::parse(b);
  REQUIRE(f);
  CHECK(f->alignment() == 64);
  CHECK(f->data_offset() % 64 == 0);
  CHECK(f->tensors()[1].offset == 64);
}

TEST_CASE("tensor infos: dims innermost first, sizes, and data views into the file") {
  test::file_builder fb;
  fb.tensor("blk.0.attn_q.weight", ggml_type::q8_0, {64, 4, 3, 2}).tensor("scalar", ggml_type::i32, {});
  const test::bytes b = fb.build();
  auto f = test::parse(b);
  REQUIRE(f);
  const gguf::tensor_info& t = f->tensors()[0];
  CHECK(t.name == "blk.0.attn_q.weight");
  CHECK(t.type == ggml_type::q8_0);
  CHECK(t.n_dims == 4);
  CHECK(t.dims().size() == 4);
  CHECK(t.ne == std::array<std::uint64_t, 4>{64, 4, 3, 2});
  CHECK(t.shape() == gguf::tensor_shape(std::array<std::uint64_t, 4>{64, 4, 3, 2}));
  const gguf::tensor_shape shape = t.shape();
  CHECK(std::vector<std::uint64_t>(shape.begin(), shape.end()) == std::vector<std::uint64_t>{2, 3, 4, 64});
  std::vector<std::uint64_t> dims;
  for (std::uint64_t d : t.shape()) dims.push_back(d);  // a range-for keeps the temporary alive
  CHECK(dims == std::vector<std::uint64_t>{2, 3, 4, 64});
  CHECK(t.n_elements == 64 * 4 * 3 * 2);
  CHECK(t.row_length() == 64);
  CHECK(t.n_rows() == 24);
  CHECK(t.row_size() == 2 * 34);
  CHECK(t.n_bytes == 24 * 2 * 34);
  CHECK(t.offset == 0);
  CHECK(t.file_offset == f->data_offset());
  CHECK(t.data.data() == b.data() + f->data_offset());
  CHECK(t.data.size() == t.n_bytes);
  CHECK(t.data[5] == std::byte{35});  // the writer's ramp: k * 7
  const gguf::tensor_info& s = f->tensors()[1];
  CHECK(s.n_dims == 0);  // a scalar: ggml reads it as ne = {1, 1, 1, 1}
  CHECK(s.n_elements == 1);
  CHECK(s.shape().rank() == 0);
  CHECK(s.shape().n_elements() == 1);
  CHECK(s.shape()[0] == 1);
  CHECK(f->find_tensor("scalar") == &s);
  CHECK(f->find_tensor("blk.0.attn_q.weight") == &t);
  CHECK(f->find_tensor("blk.0") == nullptr);
}

TEST_CASE("tensor offsets may come in any order and leave gaps (ggml refuses both)") {
  test::file_builder fb;
  fb.tensor("late", ggml_type::f32, {8}, 256)
      .tensor("early", ggml_type::f32, {8}, 0)
      .tensor("mid", ggml_type::f32, {8}, 64);
  const test::bytes b = fb.build();
  auto f = test::parse(b);
  REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
  CHECK(f->find_tensor("late")->offset == 256);
  CHECK(f->find_tensor("late")->data.data() == b.data() + f->data_offset() + 256);
}

TEST_CASE("empty tensors occupy no bytes") {
  test::file_builder fb;
  fb.tensor("empty", ggml_type::q4_K, {0, 7}).tensor("x", ggml_type::f32, {4});
  const test::bytes b = fb.build();
  auto f = test::parse(b);
  REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
  CHECK(f->tensors()[0].n_elements == 0);
  CHECK(f->tensors()[0].n_bytes == 0);
  CHECK(f->tensors()[1].offset == 0);
}

TEST_CASE("architecture keys are found without building strings") {
  const test::bytes b = test::file_builder()
                            .kv("general.architecture", "llama")
                            .kv<std::uint32_t>("llama.context_length", 4096)
                            .kv<std::uint32_t>("llama.context_lengthx", 1)
                            .kv<std::uint32_t>("llamacontext_length", 2)
                            .kv<float>("llama.attention.layer_norm_rms_epsilon", 1e-5f)
                            .build();
  auto f = test::parse(b);
  REQUIRE(f);
  const auto& m = f->metadata();
  CHECK(*m.get_arch<std::uint32_t>("context_length") == 4096);
  CHECK(*m.get_arch<float>("attention.layer_norm_rms_epsilon") == 1e-5f);
  CHECK(m.get_arch<std::uint32_t>("context").error().code == errc::not_found);
  CHECK(m.get_arch<std::uint32_t>("block_count").error().code == errc::not_found);
  CHECK(m.arch_find("context_length")->key == "llama.context_length");

  const test::bytes no_arch = test::file_builder().kv<std::uint32_t>("llama.context_length", 1).build();
  auto g = test::parse(no_arch);
  REQUIRE(g);
  CHECK(g->metadata().architecture().empty());
  CHECK(g->metadata().get_arch<std::uint32_t>("context_length").error().code == errc::not_found);
}

TEST_CASE("result<T> works like std::expected") {
  gguf::result<int> ok = 5;
  gguf::result<int> bad = gguf::error{errc::truncated, 12, "x"};
  CHECK(ok.has_value());
  CHECK(*ok == 5);
  CHECK(!bad);
  CHECK(bad.error().code == errc::truncated);
  CHECK(bad.error().offset == 12);
  CHECK(bad.value_or(7) == 7);
  int out = 0;
  CHECK(gguf::result<int>(9).get(out) == errc::success);
  CHECK(out == 9);
  CHECK(gguf::result<int>(errc::not_found).get(out) == errc::not_found);
  CHECK(gguf::to_string(bad.error()) == "x (at byte 12)");
#if GGUF_EXCEPTIONS
  CHECK_THROWS_AS((void)bad.value(), gguf::gguf_error);
#endif
}

TEST_CASE("a result without a value never says success") {
  // error{} names no failure: a result built from it (by mistake) reports errc::unspecified.
  const gguf::result<int> from_default{gguf::error{}};
  CHECK(!from_default.has_value());
  CHECK(from_default.error().code == errc::unspecified);
  CHECK(gguf::result<int>(errc::success).error().code == errc::unspecified);
  int out = 0;
  CHECK(gguf::result<int>(gguf::error{}).get(out) == errc::unspecified);
  // result<void> is the exception: there, no error is success.
  CHECK(gguf::result<void>(gguf::error{}).has_value());
}

TEST_CASE("views into a temporary do not compile: the traps tests/compile_fail closes") {
  // `->` stays usable on temporaries of view types, whose views point into the file, not into them.
  test::file_builder fb;
  fb.kv_array<std::uint32_t>("a", {1, 2, 3});
  const std::vector<std::byte> bytes = fb.build();
  const gguf::result<gguf::file> f = gguf::parse(bytes);
  REQUIRE(f);
  CHECK(*f->metadata().get<gguf::array_view>("a")->get<std::uint32_t>(2) == 3);
  static_assert(gguf::hands_out_views<gguf::file> && gguf::hands_out_views<gguf::mapped_gguf> &&
                gguf::hands_out_views<gguf::mapped_file> && !gguf::hands_out_views<gguf::array_view>);
}

}  // namespace test_format
