// Every rule the reader enforces, each with the bad file built here. A GGUF file is untrusted input:
// a rejected file yields an error code and the offset of the offending field, never a crash or a
// huge allocation.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_validation {

using gguf::errc;
using gguf::ggml_type;

namespace {

gguf::error parse_error(const test::bytes& b, const gguf::parse_options& opt = {}) {
  auto f = test::parse(b, opt);
  REQUIRE_MESSAGE(!f, "the file was accepted");
  return f.error();
}

// A valid file exercising every section: all value types, arrays, and tensors with data.
test::file_builder rich_file(std::uint32_t version = 3, bool big = false) {
  test::file_builder fb(version, big);
  fb.kv("general.architecture", "llama")
      .kv<std::uint32_t>("general.alignment", 32)
      .kv<bool>("flag", true)
      .kv<double>("f64", 0.25)
      .kv_array<std::string>("tokens", {"<s>", "</s>", "hello"})
      .kv_array<float>("scores", {0.f, 1.f, 2.f})
      .kv_array<bool>("bools", {true, false})
      .tensor("a", ggml_type::q4_K, {256, 2})
      .tensor("b", ggml_type::f32, {3, 2});
  return fb;
}

const char* code_name(errc c) { return gguf::message(c); }

}  // namespace

TEST_CASE("the rich test file itself is valid") {
  const test::bytes b = rich_file().build();
  auto f = test::parse(b);
  REQUIRE_MESSAGE(f, gguf::to_string(f.error()));
}

TEST_CASE("magic: the first four bytes must be GGUF") {
  test::bytes b = rich_file().build();
  b[3] = std::byte{'G'};
  const gguf::error e = parse_error(b);
  CHECK(e.code == errc::bad_magic);
  CHECK(e.offset == 0);
  CHECK(parse_error(test::bytes{}).code == errc::truncated);
  CHECK(parse_error(test::bytes{std::byte{'G'}, std::byte{'G'}}).code == errc::truncated);
}

TEST_CASE("version: 1, 2 and 3 only, in either byte order") {
  for (std::uint32_t v : {0u, 4u, 0xFFFFu, 0x00040000u, 0x04000000u, 0xFFFFFFFFu}) {
    CAPTURE(v);
    test::bytes b;
    test::byte_writer(b).raw("GGUF").u32(v).u64(0).u64(0);
    const gguf::error e = parse_error(b);
    CHECK(e.code == errc::bad_version);
    CHECK(e.offset == 4);
  }
  test::bytes b;
  test::byte_writer(b).raw("GGUF").raw("\3\0");  // file ends inside the version
  CHECK(parse_error(b).code == errc::truncated);
}

TEST_CASE("truncation anywhere is refused") {
  for (const test::file_builder& fb : {rich_file(), rich_file(1, true), rich_file(2, true)}) {
    const test::bytes full = fb.build();
    for (std::size_t n = 0; n < full.size(); ++n) {
      CAPTURE(n);
      const test::bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      const gguf::error e = parse_error(cut);
      // Inside the header and infos the reader runs out of bytes; inside the data a tensor is cut off.
      CHECK_MESSAGE((e.code == errc::truncated || e.code == errc::out_of_bounds), code_name(e.code));
      CHECK(e.offset <= n);
    }
  }
}

TEST_CASE("counts that cannot fit in the remaining bytes are refused before any allocation") {
  for (std::uint64_t n : {std::uint64_t{1} << 62, std::uint64_t{0xFFFFFFFFFFFFFFFF}, std::uint64_t{1000}}) {
    CAPTURE(n);
    test::file_builder fb = rich_file();
    fb.n_kv = n;
    CHECK(parse_error(fb.build()).code == errc::truncated);
    fb = rich_file();
    fb.n_tensors = n;
    CHECK(parse_error(fb.build()).code == errc::truncated);
  }
}

TEST_CASE("string lengths that exceed the remaining bytes or the limit are refused") {
  SUBCASE("a key") {
    test::bytes b;
    test::byte_writer(b).raw("GGUF").u32(3).u64(0).u64(1).u64(std::uint64_t{1} << 20).raw("k").zeros(16);
    const gguf::error e = parse_error(b);
    CHECK(e.code == errc::truncated);
    CHECK(e.offset == 24);
  }
  SUBCASE("a string value") {
    test::file_builder fb;
    fb.kv_raw("s", [](test::byte_writer& w) { w.u32(8).u64(1000).raw("short"); });
    CHECK(parse_error(fb.build()).code == errc::truncated);
  }
  SUBCASE("a string in an array") {
    test::file_builder fb;
    fb.kv_raw("a", [](test::byte_writer& w) { w.u32(9).u32(8).u64(2).str("ok").u64(1000).raw("short"); });
    CHECK(parse_error(fb.build()).code == errc::truncated);
  }
  SUBCASE("longer than max_string_length") {
    const test::bytes b = test::file_builder().kv("s", std::string(100, 'x')).build();
    gguf::parse_options opt;
    opt.max_string_length = 99;
    const gguf::error e = parse_error(b, opt);
    CHECK(e.code == errc::limit_exceeded);
    CHECK(e.offset == 24 + 8 + 1 + 4);  // the value's length field
    opt.max_string_length = 100;
    CHECK(test::accepts(b, opt));
  }
}

TEST_CASE("array counts that exceed the remaining bytes or the limit are refused") {
  for (std::uint32_t item = 0; item <= 12; ++item) {
    CAPTURE(item);
    test::file_builder fb;
    fb.kv_raw("a", [item](test::byte_writer& w) { w.u32(9).u32(item).u64(std::uint64_t{1} << 29).zeros(16); });
    CHECK(parse_error(fb.build()).code == errc::truncated);
    test::file_builder huge;  // past ggml's GGUF_MAX_ARRAY_ELEMENTS (2^30)
    huge.kv_raw("a", [item](test::byte_writer& w) { w.u32(9).u32(item).u64(std::uint64_t{1} << 61).zeros(16); });
    CHECK(parse_error(huge.build()).code == errc::limit_exceeded);
  }
  const test::bytes b = test::file_builder().kv_array<std::uint8_t>("a", std::vector<std::uint8_t>(10)).build();
  gguf::parse_options opt;
  opt.max_array_length = 9;
  CHECK(parse_error(b, opt).code == errc::limit_exceeded);
}

TEST_CASE("the header, metadata and tensor infos together are at most max_metadata_bytes") {
  const test::bytes b = rich_file().build();
  auto f = test::parse(b);
  REQUIRE(f);
  const std::uint64_t infos_end = f->tensors().back().file_offset - f->tensors().back().offset;  // data section
  gguf::parse_options opt;
  opt.max_metadata_bytes = infos_end;  // the infos end before the padding: enough
  CHECK(test::accepts(b, opt));
  opt.max_metadata_bytes = 100;  // inside the key/values
  const gguf::error e = parse_error(b, opt);
  CHECK(e.code == errc::limit_exceeded);
  CHECK(e.offset <= 100);
  // A file shorter than the limit is truncated, not over it.
  opt.max_metadata_bytes = b.size();
  CHECK(parse_error(test::bytes(b.begin(), b.begin() + 100), opt).code == errc::truncated);
  // Counts that the limit cannot hold are refused before anything is reserved for them.
  test::file_builder many = rich_file();
  many.n_kv = 1000;
  opt.max_metadata_bytes = 4096;
  test::bytes big = many.build();
  big.resize(1 << 20);
  CHECK(parse_error(big, opt).code == errc::limit_exceeded);
  CHECK(gguf::parse_options{}.max_metadata_bytes == std::uint64_t{256} << 20);
}

TEST_CASE("unknown value types are refused, also as array item types") {
  for (std::uint32_t t : {13u, 100u, 0xFFFFFFFFu}) {
    CAPTURE(t);
    test::file_builder fb;
    fb.kv<std::uint32_t>("ok", 1).kv_raw("bad", [t](test::byte_writer& w) { w.u32(t).u64(0); });
    const gguf::error e = parse_error(fb.build());
    CHECK(e.code == errc::bad_value_type);
    CHECK(e.offset == 24 + (8 + 2 + 4 + 4) + 8 + 3);  // the type field of "bad"

    test::file_builder fa;
    fa.kv_raw("arr", [t](test::byte_writer& w) { w.u32(9).u32(t).u64(0); });
    CHECK(parse_error(fa.build()).code == errc::bad_value_type);
  }
}

TEST_CASE("keys must be non-empty and unique") {
  const gguf::error empty = parse_error(test::file_builder().kv<std::uint8_t>("", 1).build());
  CHECK(empty.code == errc::empty_key);
  CHECK(empty.offset == 24);

  test::file_builder fb;
  fb.kv<std::uint8_t>("b", 1).kv<std::uint8_t>("a", 1).kv<std::uint16_t>("b", 2);
  const gguf::error dup = parse_error(fb.build());
  CHECK(dup.code == errc::duplicate_key);
  CHECK(dup.offset == 24 + 2 * (8 + 1 + 4 + 1));  // the second "b"
}

TEST_CASE("a bool is the byte 0 or 1") {
  const gguf::error e =
      parse_error(test::file_builder().kv_raw("b", [](test::byte_writer& w) { w.u32(7).u8(2); }).build());
  CHECK(e.code == errc::bad_bool);
  CHECK(e.offset == 24 + 8 + 1 + 4);
  const gguf::error a =
      parse_error(test::file_builder()
                      .kv_raw("b", [](test::byte_writer& w) { w.u32(9).u32(7).u64(3).u8(1).u8(0).u8(0xFF); })
                      .build());
  CHECK(a.code == errc::bad_bool);
  CHECK(a.offset == 24 + 8 + 1 + 4 + 4 + 8 + 2);
}

TEST_CASE("general.alignment must be a uint32 non-zero power of two") {
  CHECK(parse_error(test::file_builder().kv<std::uint64_t>("general.alignment", 32).build()).code ==
        errc::bad_alignment);
  CHECK(parse_error(test::file_builder().kv<std::int32_t>("general.alignment", 32).build()).code ==
        errc::bad_alignment);
  CHECK(parse_error(test::file_builder().kv<std::uint32_t>("general.alignment", 0).build()).code ==
        errc::bad_alignment);
  CHECK(parse_error(test::file_builder().kv<std::uint32_t>("general.alignment", 48).build()).code ==
        errc::bad_alignment);
  for (std::uint32_t a : {1u, 2u, 8u, 4096u, 0x80000000u}) {
    const test::bytes b = test::file_builder().kv<std::uint32_t>("general.alignment", a).build();
    auto f = test::parse(b);
    REQUIRE(f);
    CHECK(f->alignment() == a);
  }
}

TEST_CASE("arrays nest at most max_depth deep") {
  auto nested = [](int depth) {  // `depth` arrays, one inside the other, the innermost empty
    return test::file_builder().kv_raw("n", [depth](test::byte_writer& w) {
      w.u32(9);
      for (int d = 1; d < depth; ++d) w.u32(9).u64(1);
      w.u32(0).u64(0);
    });
  };
  CHECK(test::accepts(nested(64).build()));
  const gguf::error e = parse_error(nested(65).build());
  CHECK(e.code == errc::too_deep);
  gguf::parse_options opt;
  opt.max_depth = 3;
  CHECK(test::accepts(nested(3).build(), opt));
  CHECK(parse_error(nested(4).build(), opt).code == errc::too_deep);
  opt.max_depth = 0xFFFFFFFF;  // recursion stays bounded whatever is asked
  CHECK(parse_error(nested(2000).build(), opt).code == errc::too_deep);
}

TEST_CASE("tensor names are unique and shorter than 64 bytes") {
  test::file_builder ok;
  ok.tensor(std::string(63, 'n'), ggml_type::f32, {1});
  CHECK(test::accepts(ok.build()));

  test::file_builder long_name;
  long_name.tensor(std::string(64, 'n'), ggml_type::f32, {1});
  const gguf::error e = parse_error(long_name.build());
  CHECK(e.code == errc::bad_tensor_name);
  CHECK(e.offset == 24);

  test::file_builder dup;
  dup.tensor("w", ggml_type::f32, {1}).tensor("v", ggml_type::f32, {1}).tensor("w", ggml_type::f32, {1});
  const gguf::error d = parse_error(dup.build());
  CHECK(d.code == errc::duplicate_tensor);
  CHECK(d.offset == 24 + 2 * (8 + 1 + 4 + 8 + 4 + 8));  // the third info
}

TEST_CASE("at most 4 dimensions, none negative") {
  test::file_builder five;
  five.tensor("t", ggml_type::f32, {1, 1, 1, 1, 1});
  CHECK(parse_error(five.build()).code == errc::bad_dimensions);

  test::file_builder neg;
  neg.tensor("t", ggml_type::f32, {4, std::uint64_t{1} << 63});
  const gguf::error e = parse_error(neg.build());
  CHECK(e.code == errc::bad_dimensions);
  CHECK(e.offset == 24 + 8 + 1 + 4 + 8);  // ne[1]
}

TEST_CASE("element counts and byte sizes must not overflow") {
  test::file_builder elems;
  elems.tensor("t", ggml_type::f32, {std::uint64_t{1} << 32, std::uint64_t{1} << 32});
  CHECK(parse_error(elems.build()).code == errc::overflow);
  test::file_builder elems4;
  elems4.tensor("t", ggml_type::i8, {1 << 16, 1 << 16, 1 << 16, 1 << 16});
  CHECK(parse_error(elems4.build()).code == errc::overflow);
  test::file_builder bytes;  // 2^62 floats fit an int64 count, but not 2^64 bytes
  bytes.tensor("t", ggml_type::f32, {std::uint64_t{1} << 62});
  CHECK(parse_error(bytes.build()).code == errc::overflow);
  test::file_builder huge;  // no overflow, but far more than the file holds
  huge.tensors.push_back({"t", 0, {std::uint64_t{1} << 40}, std::nullopt, test::bytes{}});
  CHECK(parse_error(huge.build()).code == errc::out_of_bounds);
}

TEST_CASE("tensor types must be known and not removed") {
  for (std::uint32_t t : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u, 0xFFFFFFFFu}) {
    CAPTURE(t);
    test::file_builder fb;
    fb.tensors.push_back({"t", t, {32}, std::nullopt, test::bytes(64)});
    const gguf::error e = parse_error(fb.build());
    CHECK(e.code == errc::bad_tensor_type);
    CHECK(e.offset == 24 + 8 + 1 + 4 + 8);
  }
}

TEST_CASE("ne[0] must be a multiple of the block size") {
  test::file_builder fb;
  fb.tensor("t", ggml_type::q4_0, {48, 2});
  CHECK(parse_error(fb.build()).code == errc::bad_row_size);
  test::file_builder k;
  k.tensor("t", ggml_type::q6_K, {128});
  CHECK(parse_error(k.build()).code == errc::bad_row_size);
  test::file_builder ok;  // only the row length counts: 2 rows of 32
  ok.tensor("t", ggml_type::q4_0, {32, 2});
  CHECK(test::accepts(ok.build()));
}

TEST_CASE("tensor offsets are multiples of the alignment") {
  test::file_builder fb;
  fb.tensor("t", ggml_type::f32, {4}, 16);
  const gguf::error e = parse_error(fb.build());
  CHECK(e.code == errc::misaligned_offset);
  CHECK(e.offset == 24 + 8 + 1 + 4 + 8 + 4);
}

TEST_CASE("tensor data must lie inside the file") {
  test::file_builder past;
  past.tensor("t", ggml_type::f32, {8});
  test::bytes b = past.build();
  b.resize(b.size() - 1);
  CHECK(parse_error(b).code == errc::out_of_bounds);

  test::file_builder distant;
  distant.tensors.push_back({"t", 0, {8}, std::uint64_t{1} << 63, test::bytes{}});
  const gguf::error e = parse_error(distant.build());
  CHECK(e.code == errc::out_of_bounds);
  CHECK(e.offset == 24 + 8 + 1 + 4 + 8 + 4);  // the tensor's offset field

  // The data section itself starts past the end: infos end, padding is missing.
  test::bytes header;
  test::byte_writer(header).raw("GGUF").u32(3).u64(1).u64(0).str("t").u32(1).u64(0).u32(0).u64(0);
  CHECK(parse_error(header).code == errc::truncated);
}

TEST_CASE("tensors may not share bytes") {
  test::file_builder fb;
  fb.tensor("a", ggml_type::f32, {16}, 0).tensor("b", ggml_type::f32, {16}, 32);  // a is 64 bytes
  CHECK(parse_error(fb.build()).code == errc::overlapping_tensors);
  test::file_builder rev;  // the same, out of order
  rev.tensor("b", ggml_type::f32, {16}, 32).tensor("a", ggml_type::f32, {16}, 0);
  CHECK(parse_error(rev.build()).code == errc::overlapping_tensors);
  test::file_builder same;
  same.tensor("a", ggml_type::f32, {8}, 0).tensor("b", ggml_type::f32, {8}, 0);
  const gguf::error e = parse_error(same.build());
  CHECK(e.code == errc::overlapping_tensors);
  CHECK(e.offset == 24 + 2 * (8 + 1 + 4 + 8 + 4 + 8) - 8);  // the second tensor's offset field
  test::file_builder touching;                              // adjacent is fine
  touching.tensor("a", ggml_type::f32, {8}, 32).tensor("b", ggml_type::f32, {8}, 0);
  CHECK(test::accepts(touching.build()));
}

TEST_CASE("what ggml accepts is accepted") {
  SUBCASE("empty strings as values and tensor names") {
    test::file_builder fb;
    fb.kv("s", "").tensor("", ggml_type::f32, {1});
    CHECK(test::accepts(fb.build()));
  }
  SUBCASE("empty arrays of every item type") {
    test::file_builder fb;
    for (std::uint32_t t = 0; t <= 12; ++t) {
      fb.kv_raw("a" + std::to_string(t), [t](test::byte_writer& w) { w.u32(9).u32(t).u64(0); });
    }
    CHECK(test::accepts(fb.build()));
  }
  SUBCASE("bytes after the last tensor") {
    test::file_builder fb = rich_file();
    fb.extra_tail = 100;
    CHECK(test::accepts(fb.build()));
  }
  SUBCASE("zero dimensions") {
    test::file_builder fb;
    fb.tensor("z", ggml_type::f32, {0, 0, 0, 0});
    CHECK(test::accepts(fb.build()));
  }
}

}  // namespace test_validation
