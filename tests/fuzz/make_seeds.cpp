// gguf-fuzz-seeds: the fuzzer's hand-made seeds, one small file per validation rule plus valid files
// that reach every corner of the format, and damaged copies of a good file. Each seed is parsed as it
// is made and must give the error it is named for, so the set cannot drift from the rules.
//
//   gguf-fuzz-seeds write DIR    write the seeds (tests/fuzz/seeds/rules is this output)
//   gguf-fuzz-seeds check DIR    exit 1 unless DIR holds exactly these seeds, byte for byte
#include <gguf/diagnose.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "damage.hpp"
#include "gguf_writer.hpp"

using gguf::errc;
using gguf::ggml_type;

namespace {

struct seed {
  std::string name;
  test::bytes bytes;
  errc expected;  // errc::success for a file that must parse
};

// Every value type as a scalar and as an array, nested arrays, and tensors of several block types.
test::file_builder rich(std::uint32_t version = 3, bool big = false) {
  test::file_builder fb(version, big);
  fb.kv("general.architecture", "llama")
      .kv<std::uint32_t>("general.alignment", 32)
      .kv<std::uint32_t>("llama.context_length", 4096)
      .kv("tokenizer.chat_template", "{% for m in messages %}\n{{ m.content }}\n{% endfor %}")
      .kv<std::uint8_t>("u8", 200)
      .kv<std::int8_t>("i8", -100)
      .kv<std::uint16_t>("u16", 60000)
      .kv<std::int16_t>("i16", -30000)
      .kv<std::int32_t>("i32", -2000000000)
      .kv<float>("f32", 1.5f)
      .kv<bool>("flag", true)
      .kv<std::uint64_t>("u64", std::uint64_t{1} << 40)
      .kv<std::int64_t>("i64", -(std::int64_t{1} << 40))
      .kv<double>("f64", -0.25)
      .kv_array<std::string>("tokenizer.ggml.tokens", {"<s>", "</s>", "hello", "\xe2\x96\x81world", ""})
      .kv_array<float>("tokenizer.ggml.scores", {0.f, -1000.f, 2.5f, -3.25f, 1e-8f})
      .kv_array<std::int32_t>("tokenizer.ggml.token_type", {3, 3, 1, 1, 6})
      .kv_array<bool>("bools", {true, false, true})
      .kv_array<std::uint8_t>("u8s", {0, 1, 255})
      .kv_array<std::int16_t>("i16s", {-1, 1})
      .kv_array<std::uint64_t>("u64s", {1, 2})
      .kv_array<double>("f64s", {0.5, -0.5})
      .kv_raw("nested",
              [](test::byte_writer& w) {  // [[1, 2], [], [3]] as uint16, and [["a"], ["b", "c"]]
                w.u32(9).u32(9).count(3);
                w.u32(2).count(2).put<std::uint16_t>(1).put<std::uint16_t>(2);
                w.u32(2).count(0);
                w.u32(2).count(1).put<std::uint16_t>(3);
              })
      .kv_raw("nested_strings",
              [](test::byte_writer& w) {
                w.u32(9).u32(9).count(2);
                w.u32(8).count(1).str("a");
                w.u32(8).count(2).str("b").str("c");
              })
      .tensor("token_embd.weight", ggml_type::q4_K, {256, 2})
      .tensor("output_norm.weight", ggml_type::f32, {8})
      .tensor("blk.0.attn_q.weight", ggml_type::q8_0, {64, 2})
      .tensor("blk.0.ffn_down.weight", ggml_type::iq2_xs, {256})
      .tensor("blk.0.ffn_up.weight", ggml_type::f16, {4, 2, 2})
      .tensor("blk.0.ffn_gate.weight", ggml_type::mxfp4, {32, 1, 1, 2});
  return fb;
}

test::file_builder one_kv(const std::string& key, test::value_writer w) {
  return test::file_builder().kv_raw(key, std::move(w));
}

test::file_builder one_tensor(std::uint32_t type, std::vector<std::uint64_t> ne,
                              std::optional<std::uint64_t> offset = {}) {
  test::file_builder fb;
  fb.tensors.push_back({"t", type, std::move(ne), offset, std::nullopt});
  return fb;
}

test::file_builder nested(int depth) {  // `depth` arrays, one inside the other, the innermost empty
  return one_kv("n", [depth](test::byte_writer& w) {
    w.u32(9);
    for (int d = 1; d < depth; ++d) w.u32(9).u64(1);
    w.u32(0).u64(0);
  });
}

std::vector<seed> make_seeds() {
  std::vector<seed> s;
  auto add = [&](std::string name, const test::file_builder& fb, errc e) {
    s.push_back({std::move(name), fb.build(), e});
  };
  auto add_bytes = [&](std::string name, test::bytes b, errc e) { s.push_back({std::move(name), std::move(b), e}); };
  const auto u32 = [](std::uint32_t v) { return static_cast<std::uint32_t>(v); };

  // Valid files.
  add("ok-rich-v3", rich(), errc::success);
  add("ok-rich-v3-be", rich(3, true), errc::success);
  add("ok-rich-v2", rich(2), errc::success);
  add("ok-rich-v1-be", rich(1, true), errc::success);
  add("ok-no-tensors", test::file_builder().kv("general.architecture", "x"), errc::success);
  add("ok-empty", test::file_builder(), errc::success);
  {
    test::file_builder fb;
    for (std::uint32_t t = 0; t <= 12; ++t) {
      fb.kv_raw("a" + std::to_string(t), [t](test::byte_writer& w) { w.u32(9).u32(t).u64(0); });
    }
    add("ok-empty-arrays", fb, errc::success);
  }
  add("ok-zero-dims", test::file_builder().tensor("z", ggml_type::f32, {0, 5}).tensor("y", ggml_type::q4_0, {0}),
      errc::success);
  add("ok-unordered-with-gaps",
      test::file_builder().tensor("b", ggml_type::f32, {8}, 96).tensor("a", ggml_type::q4_0, {32}, 0), errc::success);
  {
    test::file_builder fb = rich();
    fb.extra_tail = 100;
    add("ok-bytes-after-data", fb, errc::success);
  }
  add("ok-alignment-1",
      test::file_builder()
          .kv<std::uint32_t>("general.alignment", 1)
          .tensor("t", ggml_type::i8, {3})
          .tensor("u", ggml_type::i8, {5}),
      errc::success);
  add("ok-nested-64-deep", nested(64), errc::success);
  add("ok-name-63-bytes", test::file_builder().tensor(std::string(63, 'n'), ggml_type::f32, {1}), errc::success);

  // One per rule.
  {
    test::bytes b;
    test::byte_writer(b).raw("GGML").u32(3).u64(0).u64(0);  // ggml's pre-GGUF magic
    add_bytes("bad-magic", b, errc::bad_magic);
  }
  {
    test::bytes b;
    test::byte_writer(b).raw("GGUF").u32(4).u64(0).u64(0);
    add_bytes("bad-version", b, errc::bad_version);
  }
  {
    test::bytes b;
    test::byte_writer(b).raw("GGUF").raw("\3\0");
    add_bytes("truncated-version", b, errc::truncated);
  }
  {
    test::file_builder fb = rich();
    fb.n_kv = std::uint64_t{1} << 60;
    add("truncated-kv-count", fb, errc::truncated);
    fb = rich();
    fb.n_tensors = 1000;
    add("truncated-tensor-count", fb, errc::truncated);
  }
  add("truncated-string", one_kv("s", [](test::byte_writer& w) { w.u32(8).u64(1000).raw("short"); }), errc::truncated);
  add("truncated-array-string",
      one_kv("a", [](test::byte_writer& w) { w.u32(9).u32(8).u64(2).str("ok").u64(1000).raw("x"); }), errc::truncated);
  add("truncated-array-count", one_kv("a", [](test::byte_writer& w) { w.u32(9).u32(6).u64(1 << 20).zeros(16); }),
      errc::truncated);
  {
    test::bytes b;  // infos end, the padding before the data section is missing
    test::byte_writer(b).raw("GGUF").u32(3).u64(1).u64(0).str("t").u32(1).u64(0).u32(0).u64(0);
    add_bytes("truncated-data-section", b, errc::truncated);
  }
  add("limit-string-length", one_kv("s", [](test::byte_writer& w) { w.u32(8).u64(std::uint64_t{1} << 31).raw("x"); }),
      errc::limit_exceeded);
  add("limit-array-length",
      one_kv("a", [](test::byte_writer& w) { w.u32(9).u32(0).u64(std::uint64_t{1} << 61).zeros(8); }),
      errc::limit_exceeded);
  add("bad-value-type", one_kv("k", [](test::byte_writer& w) { w.u32(13).u64(0); }), errc::bad_value_type);
  add("bad-array-item-type", one_kv("k", [](test::byte_writer& w) { w.u32(9).u32(0xFFFFFFFF).u64(0); }),
      errc::bad_value_type);
  add("bad-bool", one_kv("b", [](test::byte_writer& w) { w.u32(7).u8(2); }), errc::bad_bool);
  add("bad-bool-in-array", one_kv("b", [](test::byte_writer& w) { w.u32(9).u32(7).u64(3).u8(1).u8(0).u8(0xFF); }),
      errc::bad_bool);
  add("empty-key", test::file_builder().kv<std::uint8_t>("", 1), errc::empty_key);
  add("duplicate-key", test::file_builder().kv<std::uint8_t>("b", 1).kv<std::uint8_t>("a", 1).kv<std::uint16_t>("b", 2),
      errc::duplicate_key);
  add("alignment-not-uint32", test::file_builder().kv<std::uint64_t>("general.alignment", 32), errc::bad_alignment);
  add("alignment-zero", test::file_builder().kv<std::uint32_t>("general.alignment", 0), errc::bad_alignment);
  add("alignment-not-power-of-two", test::file_builder().kv<std::uint32_t>("general.alignment", 48),
      errc::bad_alignment);
  add("too-deep", nested(65), errc::too_deep);
  add("tensor-name-64-bytes", test::file_builder().tensor(std::string(64, 'n'), ggml_type::f32, {1}),
      errc::bad_tensor_name);
  add("duplicate-tensor",
      test::file_builder()
          .tensor("w", ggml_type::f32, {1})
          .tensor("v", ggml_type::f32, {1})
          .tensor("w", ggml_type::f32, {1}),
      errc::duplicate_tensor);
  add("five-dimensions", one_tensor(0, {1, 1, 1, 1, 1}), errc::bad_dimensions);
  add("negative-dimension", one_tensor(0, {4, std::uint64_t{1} << 63}), errc::bad_dimensions);
  add("overflow-elements", one_tensor(u32(24), {1 << 16, 1 << 16, 1 << 16, 1 << 16}), errc::overflow);
  add("overflow-bytes", one_tensor(0, {std::uint64_t{1} << 62}), errc::overflow);
  add("tensor-type-removed", one_tensor(4, {32}), errc::bad_tensor_type);
  add("tensor-type-unknown", one_tensor(0xFFFF, {32}), errc::bad_tensor_type);
  add("row-size", one_tensor(u32(12), {128}), errc::bad_row_size);  // q6_K rows are 256 weights
  add("misaligned-offset", one_tensor(0, {4}, 16), errc::misaligned_offset);
  {
    test::bytes b = one_tensor(0, {8}).build();
    b.pop_back();
    add_bytes("out-of-bounds", b, errc::out_of_bounds);
  }
  {
    test::file_builder fb = one_tensor(0, {8}, std::uint64_t{1} << 63);
    fb.tensors[0].data = test::bytes{};  // nothing to place that far
    add("out-of-bounds-offset", fb, errc::out_of_bounds);
  }
  add("overlapping-tensors",
      test::file_builder().tensor("b", ggml_type::f32, {16}, 32).tensor("a", ggml_type::f32, {16}, 0),
      errc::overlapping_tensors);

  // A good file after what happens to files on the way (tests/damage.hpp).
  const test::bytes good = rich().build();
  add_bytes("damaged-text-replaced", test::damage::text_replaced(good), errc::success);  // the code is checked below
  add_bytes("damaged-crlf", test::damage::crlf(good), errc::success);
  add_bytes("damaged-zero-tail", test::damage::zero_tail(good, 200), errc::success);
  add_bytes("damaged-truncated", test::damage::truncated(good, good.size() - 100), errc::out_of_bounds);
  return s;
}

test::bytes read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  test::bytes b(c.size());
  if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "write") != 0 && std::strcmp(argv[1], "check") != 0)) {
    std::fputs("usage: gguf-fuzz-seeds write|check DIR\n", stderr);
    return 2;
  }
  const bool write = std::strcmp(argv[1], "write") == 0;
  const std::filesystem::path dir = argv[2];
  int bad = 0;
  std::map<std::string, bool> names;
  for (const seed& s : make_seeds()) {
    const std::string file = s.name + ".gguf";
    names[file] = true;
    auto f = test::parse(s.bytes);
    const bool damaged = s.name.rfind("damaged-", 0) == 0;
    const errc got = f ? errc::success : f.error().code;
    // Damaged files must be refused, and diagnosed; the others give exactly their rule's error.
    const bool ok = damaged ? !f && gguf::diagnose(s.bytes, f.error()) : got == s.expected;
    if (!ok) {
      std::fprintf(stderr, "%s: got '%s'\n", file.c_str(), f ? "accepted" : gguf::to_string(f.error()).c_str());
      ++bad;
    }
    if (write) {
      std::filesystem::create_directories(dir);
      std::ofstream(dir / file, std::ios::binary)
          .write(reinterpret_cast<const char*>(s.bytes.data()), static_cast<std::streamsize>(s.bytes.size()));
    } else if (read_file(dir / file) != s.bytes) {
      std::fprintf(stderr, "%s: differs from what gguf-fuzz-seeds makes (run: gguf-fuzz-seeds write %s)\n",
                   (dir / file).string().c_str(), dir.string().c_str());
      ++bad;
    }
  }
  if (!write) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (!names.count(e.path().filename().string())) {
        std::fprintf(stderr, "%s: not a seed gguf-fuzz-seeds makes\n", e.path().string().c_str());
        ++bad;
      }
    }
  }
  std::printf("%zu seeds %s, %d problems\n", names.size(), write ? "written" : "checked", bad);
  return bad ? 1 : 0;
}
