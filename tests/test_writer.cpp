// The writer: files built from scratch and from parsed files read back equal, in ggml's layout; every
// change a reader would refuse is refused when it is made; big-endian files hold big-endian tensors.
#include <doctest/doctest.h>

#include <gguf/compare.hpp>
#include <gguf/dequantize.hpp>
#include <gguf/open.hpp>
#include <gguf/print.hpp>
#include <gguf/save.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gguf_json.hpp"
#include "gguf_writer.hpp"
#include "test_files.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_writer {

namespace fs = std::filesystem;
using gguf::errc;
using gguf::value;
using gguf::value_type;

namespace {

const fs::path data_dir = GGUF_TEST_DATA_DIR;

std::vector<std::byte> write_all(const gguf::writer& w, const gguf::write_options& opt = {}) {
  std::vector<std::byte> out;
  gguf::vector_sink sink(out);
  const auto r = w.write(sink, opt);
  REQUIRE_MESSAGE(r, gguf::to_string(r.error()));
  return out;
}

using gguf::same_value;  // same type, same items, same bits (a NaN equals itself bit for bit)

// The parsed files hold the same keys in the same order, and the same tensors with the same floats.
void check_same_content(const gguf::file& a, const gguf::file& b) {
  REQUIRE(a.metadata().size() == b.metadata().size());
  for (std::size_t i = 0; i < a.metadata().size(); ++i) {
    CAPTURE(a.metadata()[i].key);
    CHECK(a.metadata()[i].key == b.metadata()[i].key);
    CHECK(same_value(a.metadata()[i].value, b.metadata()[i].value));
  }
  REQUIRE(a.tensors().size() == b.tensors().size());
  for (std::size_t i = 0; i < a.tensors().size(); ++i) {
    const gguf::tensor_info &s = a.tensors()[i], &t = b.tensors()[i];
    CAPTURE(s.name);
    CHECK(s.name == t.name);
    CHECK(s.type == t.type);
    CHECK(s.ne == t.ne);
    std::vector<float> x(s.n_elements), y(t.n_elements);
    REQUIRE(gguf::dequantize(s, x));
    REQUIRE(gguf::dequantize(t, y));
    CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("a file built from scratch: every value type, arrays of each, arrays of arrays, tensors") {
  gguf::writer w;
  REQUIRE(w.set("general.architecture", value("llama")));
  REQUIRE(w.set("u8", value(std::uint8_t{200})));
  REQUIRE(w.set("i8", value(std::int8_t{-100})));
  REQUIRE(w.set("u16", value(std::uint16_t{60000})));
  REQUIRE(w.set("i16", value(std::int16_t{-30000})));
  REQUIRE(w.set("u32", value(std::uint32_t{4000000000u})));
  REQUIRE(w.set("i32", value(std::int32_t{-2000000000})));
  REQUIRE(w.set("u64", value(std::uint64_t{18000000000000000000u})));
  REQUIRE(w.set("i64", value(std::int64_t{-9000000000000000000})));
  REQUIRE(w.set("f32", value(1e-5f)));
  REQUIRE(w.set("f64", value(0.1)));
  REQUIRE(w.set("bool", value(true)));
  REQUIRE(w.set("a.f32", value::array<float>({0.5f, -1.5f, std::numeric_limits<float>::infinity()})));
  REQUIRE(w.set("a.i64", value::array<std::int64_t>({1, -2})));
  REQUIRE(w.set("a.bool", value::array<bool>({true, false, true})));
  REQUIRE(w.set("a.str", value::strings({"<s>", "", "\xE2\x96\x81the"})));
  REQUIRE(w.set("a.empty", value::array<std::uint8_t>({})));
  const std::array<value, 2> rows{value::array<std::int32_t>({1, 2, 3}), value::array<std::int32_t>({4})};
  auto nested = value::arrays(rows);
  REQUIRE(nested);
  REQUIRE(w.set("a.nested", std::move(*nested)));

  std::vector<float> f32(64 * 3);
  for (std::size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<float>(i) * 0.25f - 7.0f;
  const std::array<std::uint64_t, 2> ne{64, 3};
  REQUIRE(w.add_tensor("w.f32", gguf::ggml_type::f32, ne, std::as_bytes(std::span(f32))));
  // A tensor produced while writing: q8_0 blocks made on demand, checked below through dequantize.
  const std::array<std::uint64_t, 2> ne_q{64, 2};  // 4 blocks of 34 bytes
  REQUIRE(w.add_tensor("w.q8_0", gguf::ggml_type::q8_0, ne_q, [](std::uint64_t offset, std::span<std::byte> out) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::uint64_t at = offset + i, in_block = at % 34;
      // d = 1.0 (0x3C00), q = position in the block - 2
      out[i] = in_block == 0 ? std::byte{0x00} : in_block == 1 ? std::byte{0x3C} : static_cast<std::byte>(in_block - 2);
    }
    return gguf::result<void>{};
  }));
  REQUIRE(
      w.add_tensor("empty", gguf::ggml_type::f16, std::array<std::uint64_t, 2>{0, 5}, std::span<const std::byte>{}));

  const std::vector<std::byte> bytes = write_all(w);
  CHECK(w.size().value() == bytes.size());
  const auto f = gguf::parse(bytes);
  REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
  CHECK(f->version() == 3);
  CHECK(f->metadata().size() == w.n_keys());
  for (std::size_t i = 0; i < w.n_keys(); ++i) {
    CAPTURE(w.key(i));
    CHECK(f->metadata()[i].key == w.key(i));
    CHECK(same_value(f->metadata()[i].value, w.value_at(i)));
  }
  CHECK(*f->metadata().get<std::uint64_t>("u64") == 18000000000000000000u);
  CHECK(gguf::to_string(f->metadata().value("a.nested").value()) == "[[1, 2, 3], [4]]");
  CHECK(gguf::to_string(f->metadata().value("a.str").value()) == "[\"<s>\", \"\", \"\xE2\x96\x81the\"]");

  std::vector<float> back(f32.size());
  REQUIRE(gguf::dequantize(*f->find_tensor("w.f32"), back));
  CHECK(back == f32);
  const gguf::tensor_info* q = f->find_tensor("w.q8_0");
  REQUIRE(q);
  std::vector<float> qf(128);
  REQUIRE(gguf::dequantize(*q, qf));
  for (std::size_t i = 0; i < qf.size(); ++i) CHECK(qf[i] == static_cast<float>(i % 32));
  CHECK(f->find_tensor("empty")->n_bytes == 0);
  CHECK(f->find_tensor("empty")->n_dims == 2);  // a 0 is kept, not dropped like a trailing 1
  // ggml's layout: infos padded to the alignment, each tensor padded, offsets packed.
  CHECK(f->data_offset() % 32 == 0);
  CHECK(f->find_tensor("w.q8_0")->offset == (64 * 3 * 4 + 31) / 32 * 32);
  CHECK(bytes.size() % 32 == 0);
}

TEST_CASE("every committed file round-trips: parse, write, parse gives the same keys, tensors and floats") {
  int n = 0;
  for (const auto& entry : fs::recursive_directory_iterator(data_dir)) {
    if (entry.path().extension() != ".gguf") continue;
    CAPTURE(entry.path().string());
    const auto g = gguf::open(entry.path());
    REQUIRE(g);
    const std::vector<std::byte> bytes = write_all(gguf::writer::from(g->info()));
    const auto f = gguf::parse(bytes);
    REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
    check_same_content(g->info(), *f);
    CHECK(f->byte_order() == g->byte_order());
    CHECK(f->version() == (g->version() == 2 ? 2u : 3u));  // v1 is written as v3; v2 stays v2, as in ggml
    // A file written by the writer is a fixed point: writing it again gives the same bytes.
    CHECK(write_all(gguf::writer::from(*f)) == bytes);
    // Files already in ggml's layout (every fixture the oracle or ggml wrote, v2/v3 little-endian with
    // tensors) come back byte for byte.
    if (g->version() >= 2 && !g->tensors().empty() && g->byte_order() == std::endian::little) {
      CHECK(bytes == test::read_file(entry.path()));
    }
    ++n;
  }
  CHECK(n >= 30);
}

TEST_CASE("set moves a key last as ggml does, replace keeps its place, and remove and rename") {
  gguf::writer w;
  REQUIRE(w.set("a", value(std::uint32_t{1})));
  REQUIRE(w.set("b", value(std::uint32_t{2})));
  REQUIRE(w.set("c", value(std::uint32_t{3})));
  REQUIRE(w.set("a", value("moved")));  // gguf_set_val_str: remove, then append
  CHECK(w.key(0) == "b");
  CHECK(w.key(2) == "a");
  REQUIRE(w.replace("b", value(2.5f)));  // in place
  CHECK(w.key(0) == "b");
  CHECK(*w.get("b")->get<float>() == 2.5f);
  CHECK(w.remove("c"));
  CHECK(!w.remove("c"));
  REQUIRE(w.rename("a", "z"));
  CHECK(w.key(1) == "z");
  CHECK(w.rename("missing", "x").error().code == errc::not_found);
  CHECK(w.rename("b", "z").error().code == errc::duplicate_key);
  const test::bytes written = write_all(w);
  const auto f = test::parse(written);
  REQUIRE(f);
  CHECK(f->metadata()[0].key == "b");
  CHECK(*f->metadata().get<std::string_view>("z") == "moved");
}

TEST_CASE("tensors: add, remove, rename, in order") {
  gguf::writer w;
  const std::vector<std::byte> d(32 * 4);
  const std::array<std::uint64_t, 1> ne{32};
  REQUIRE(w.add_tensor("a", gguf::ggml_type::f32, ne, d));
  REQUIRE(w.add_tensor("b", gguf::ggml_type::f32, ne, d));
  REQUIRE(w.add_tensor("c", gguf::ggml_type::f32, ne, d));
  CHECK(w.remove_tensor("b"));
  REQUIRE(w.rename_tensor("c", "b"));
  CHECK(w.rename_tensor("a", "b").error().code == errc::duplicate_tensor);
  const test::bytes written = write_all(w);
  const auto f = test::parse(written);
  REQUIRE(f);
  REQUIRE(f->tensors().size() == 2);
  CHECK(f->tensors()[1].name == "b");
  CHECK(f->tensors()[1].offset == 128);
}

TEST_CASE("the writer refuses what a reader would refuse, when it is asked for") {
  gguf::writer w;
  CHECK(w.set("", value(1.0f)).error().code == errc::empty_key);
  CHECK(w.set("general.alignment", value(std::uint32_t{48})).error().code == errc::bad_alignment);
  CHECK(w.set("general.alignment", value(std::uint64_t{64})).error().code == errc::bad_alignment);
  CHECK(w.set("general.alignment", value(std::uint32_t{0})).error().code == errc::bad_alignment);
  CHECK(w.set("general.alignment", value(std::uint32_t{64})));
  CHECK(w.alignment() == 64);
  CHECK(w.set_version(1).error().code == errc::bad_version);
  // Nested past max_depth (64).
  value deep = value::array<std::uint8_t>({1});
  for (int i = 0; i < 64; ++i) {
    const std::array<value, 1> one{deep};
    deep = value::arrays(one).value();
  }
  CHECK(w.set("deep", deep).error().code == errc::too_deep);

  const std::vector<std::byte> d(4 * 32);
  const std::array<std::uint64_t, 1> ne32{32};
  CHECK(w.add_tensor(std::string(64, 'n'), gguf::ggml_type::f32, ne32, d).error().code == errc::bad_tensor_name);
  REQUIRE(w.add_tensor(std::string(63, 'n'), gguf::ggml_type::f32, ne32, d));
  CHECK(w.add_tensor(std::string(63, 'n'), gguf::ggml_type::f32, ne32, d).error().code == errc::duplicate_tensor);
  CHECK(w.add_tensor("t", static_cast<gguf::ggml_type>(4), ne32, d).error().code == errc::bad_tensor_type);
  CHECK(w.add_tensor("t", gguf::ggml_type::q4_0, std::array<std::uint64_t, 1>{16}, d).error().code ==
        errc::bad_row_size);
  CHECK(w.add_tensor("t", gguf::ggml_type::f32, std::array<std::uint64_t, 5>{1, 1, 1, 1, 32}, d).error().code ==
        errc::bad_dimensions);
  CHECK(w.add_tensor("t", gguf::ggml_type::f32, std::array<std::uint64_t, 2>{std::uint64_t{1} << 63, 1}, d)
            .error()
            .code == errc::bad_dimensions);
  CHECK(w.add_tensor("t", gguf::ggml_type::f32,
                     std::array<std::uint64_t, 2>{std::uint64_t{1} << 40, std::uint64_t{1} << 30}, d)
            .error()
            .code == errc::overflow);
  const gguf::error size = w.add_tensor("t", gguf::ggml_type::f32, std::array<std::uint64_t, 1>{31}, d).error();
  CHECK(size.code == errc::size_mismatch);
  CHECK(size.subject() == "t");
  // What was refused left nothing behind: the file is still valid, with alignment 64.
  const test::bytes written = write_all(w);
  const auto f = test::parse(written);
  REQUIRE(f);
  CHECK(f->alignment() == 64);
  CHECK(f->tensors().size() == 1);
  CHECK(f->data_offset() % 64 == 0);
}

TEST_CASE("a producer's error stops the write and is returned as it is") {
  gguf::writer w;
  REQUIRE(w.add_tensor("t", gguf::ggml_type::f32, std::array<std::uint64_t, 1>{1024},
                       [](std::uint64_t offset, std::span<std::byte>) -> gguf::result<void> {
                         if (offset > 0) return {gguf::errc::io_error, "the source went away"};
                         return {};
                       }));
  std::vector<std::byte> out;
  gguf::vector_sink sink(out);
  gguf::write_options opt;
  opt.chunk_bytes = 1024;  // four chunks
  const auto r = w.write(sink, opt);
  CHECK(!r);
  CHECK(std::string(r.error().what()) == "the source went away");
}

TEST_CASE("big-endian files hold big-endian tensors: converted both ways, the same floats, exact round trip") {
  const auto le = gguf::open(data_dir / "quants/quants-be-le.gguf");
  REQUIRE(le);
  gguf::writer w = gguf::writer::from(le->info());
  w.set_byte_order(std::endian::big);
  const std::vector<std::byte> be = write_all(w);
  // The same bytes as the independent Python conversion (tests/data/make_big_endian.py, gguf-py's rule).
  CHECK(be == test::read_file(data_dir / "quants/quants-be.gguf"));
  const auto f = gguf::parse(be);
  REQUIRE(f);
  CHECK(f->byte_order() == std::endian::big);
  check_same_content(le->info(), *f);  // every tensor dequantizes to the same floats
  gguf::writer back = gguf::writer::from(*f);
  back.set_byte_order(std::endian::little);
  CHECK(write_all(back) == test::read_file(data_dir / "quants/quants-be-le.gguf"));

  // gguf-py's four quantized types: only their f16 scales move (d; d and dmin of q4_K; d at 208 of q6_K).
  for (const char* name : {"t.q4_0", "t.q8_0", "t.q4_K", "t.q6_K", "t.mxfp4"}) {
    const gguf::tensor_info* a = le->find_tensor(name);
    const gguf::tensor_info* b = f->find_tensor(name);
    REQUIRE((a && b));
    std::vector<std::byte> swapped(a->data.begin(), a->data.end());
    const std::size_t block = a->traits().type_size;
    for (std::size_t k = 0; k < swapped.size(); k += block) {
      const auto swap2 = [&](std::size_t at) { std::swap(swapped[k + at], swapped[k + at + 1]); };
      if (a->type == gguf::ggml_type::q4_0 || a->type == gguf::ggml_type::q8_0) swap2(0);
      if (a->type == gguf::ggml_type::q4_K) swap2(0), swap2(2);
      if (a->type == gguf::ggml_type::q6_K) swap2(208);
    }
    CHECK(std::equal(swapped.begin(), swapped.end(), b->data.begin()));
  }
}

TEST_CASE("the magic \"FUGG\" (gguf-py's byte-order converter) marks a big-endian file") {
  std::vector<std::byte> be = test::read_file(data_dir / "quants/quants-be.gguf");
  std::memcpy(be.data(), "FUGG", 4);
  const auto f = gguf::parse(be);
  REQUIRE(f);
  CHECK(f->byte_order() == std::endian::big);
  const auto le = gguf::open(data_dir / "quants/quants-be-le.gguf");
  REQUIRE(le);
  check_same_content(le->info(), *f);
  // FUGG with a little-endian version word is not a file.
  std::vector<std::byte> bad = test::read_file(data_dir / "quants/quants-be-le.gguf");
  std::memcpy(bad.data(), "FUGG", 4);
  CHECK(gguf::parse(bad).error().code == errc::bad_version);
}

TEST_CASE("random files: random keys and tensors written, read back equal") {
  std::mt19937_64 rng(20261123);
  const auto pick = [&](std::uint64_t n) { return static_cast<std::size_t>(rng() % n); };
  for (int file = 0; file < 60; ++file) {
    gguf::writer w;
    std::vector<std::vector<std::byte>> data;  // keeps the tensors' bytes alive
    const std::size_t n_keys = pick(12);
    for (std::size_t k = 0; k < n_keys; ++k) {
      const std::string key = "k." + std::to_string(k);
      switch (pick(8)) {
        case 0: REQUIRE(w.set(key, value(static_cast<std::uint32_t>(rng())))); break;
        case 1: REQUIRE(w.set(key, value(std::bit_cast<float>(static_cast<std::uint32_t>(rng()))))); break;
        case 2: REQUIRE(w.set(key, value(std::bit_cast<double>(rng())))); break;
        case 3: REQUIRE(w.set(key, value(std::string(pick(40), static_cast<char>('a' + pick(26)))))); break;
        case 4: REQUIRE(w.set(key, value(static_cast<std::int8_t>(rng())))); break;
        case 5: {
          std::vector<std::int16_t> xs(pick(50));
          for (auto& x : xs) x = static_cast<std::int16_t>(rng());
          REQUIRE(w.set(key, value::array(std::span<const std::int16_t>(xs))));
          break;
        }
        case 6: {
          std::vector<std::string> xs(pick(20));
          for (auto& x : xs) x = std::string(pick(10), static_cast<char>(pick(256)));
          REQUIRE(w.set(key, value::strings(std::span<const std::string>(xs))));
          break;
        }
        default: {
          std::vector<value> rows;
          for (std::size_t r = pick(4); r > 0; --r) rows.push_back(value::array<std::uint64_t>({rng(), rng()}));
          REQUIRE(w.set(key, value::arrays(rows).value()));
        }
      }
    }
    for (std::size_t t = pick(6); t > 0; --t) {
      const gguf::type_traits& tt = gguf::ggml_types[pick(gguf::ggml_types.size())];
      const std::array<std::uint64_t, 3> ne{tt.block_size * (1 + pick(3)), 1 + pick(3), 1 + pick(2)};
      std::vector<std::byte> bytes(ne[0] / tt.block_size * tt.type_size * ne[1] * ne[2]);
      for (auto& b : bytes) b = static_cast<std::byte>(rng());
      data.push_back(std::move(bytes));
      REQUIRE(w.add_tensor("t." + std::to_string(t), tt.type, ne, data.back()));
    }
    if (pick(3) == 0) w.set_byte_order(std::endian::big);
    const std::vector<std::byte> bytes = write_all(w);
    const auto f = gguf::parse(bytes);
    REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
    REQUIRE(f->metadata().size() == w.n_keys());
    for (std::size_t i = 0; i < w.n_keys(); ++i) CHECK(same_value(f->metadata()[i].value, w.value_at(i)));
    REQUIRE(f->tensors().size() == w.n_tensors());
    // The tensor bytes come back as given (little-endian), whatever the file's byte order.
    for (std::size_t i = 0; i < data.size(); ++i) {
      const gguf::tensor_info& t = f->tensors()[i];
      std::vector<std::byte> got(t.data.begin(), t.data.end());
      if (t.byte_order == std::endian::big) gguf::swap_blocks(t.type, got);
      CHECK(got == data[i]);
    }
  }
}

TEST_CASE("in-place headers: only when the new metadata fits the old padding, tensors unchanged") {
  test::file_builder fb;
  fb.kv("general.name", "abc").tensor("w", gguf::ggml_type::f32, {16});
  const std::vector<std::byte> bytes = fb.build();
  const auto f = test::parse(bytes);
  REQUIRE(f);
  const std::uint64_t slack = f->data_offset() - 24 - (8 + 12 + 4 + 8 + 3) - (8 + 1 + 4 + 8 + 4 + 8);
  gguf::writer w = gguf::writer::from(*f);
  REQUIRE(w.set("general.name", value(std::string(3 + slack, 'x'))));  // exactly fills the padding
  const auto h = w.in_place_header();
  REQUIRE_MESSAGE(h, gguf::to_string(h.error()));
  CHECK(h->size() == f->data_offset());
  REQUIRE(w.set("general.name", value(std::string(4 + slack, 'x'))));  // one byte too many
  CHECK(w.in_place_header().error().code == errc::out_of_range);
  gguf::writer removed = gguf::writer::from(*f);
  removed.remove_tensor("w");
  CHECK(!removed.in_place_header());
  CHECK(gguf::writer().in_place_header().error().code == errc::out_of_range);
}

}  // namespace test_writer
