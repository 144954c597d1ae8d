// Split models: shard names, the split plan, open_model from any shard or the prefix, every shard set
// llama.cpp's gguf-split and gguf-py write, the ones they must not be confused with, and split + merge.
#include <doctest/doctest.h>

#include <gguf/dequantize.hpp>
#include <gguf/model.hpp>
#include <gguf/print.hpp>
#include <gguf/shard_set.hpp>
#include <gguf/split.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gguf_writer.hpp"
#include "io_faults.hpp"
#include "test_files.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_shards {

namespace fs = std::filesystem;
using gguf::errc;

namespace {

fs::path fresh_dir(const std::string& name) { return test::fresh_dir("gguf-shard-tests", name); }

// A model of 10 tensors (t0..t9, f32, sizes growing: t_i holds 64 * (i + 1) floats, each float its index),
// in ggml's layout, written with the library's writer.
fs::path write_model(const fs::path& dir, std::size_t n_tensors = 10) {
  gguf::writer w;
  REQUIRE(w.set("general.architecture", gguf::value("llama")));
  REQUIRE(w.set("general.name", gguf::value("sharded")));
  static std::vector<std::vector<float>> data;  // borrowed by the writer until it is saved
  data.clear();
  for (std::size_t i = 0; i < n_tensors; ++i) {
    std::vector<float>& d = data.emplace_back(64 * (i + 1));
    for (std::size_t k = 0; k < d.size(); ++k) d[k] = static_cast<float>(i * 1000 + k);
    const std::uint64_t ne[] = {d.size()};
    REQUIRE(w.add_tensor("t" + std::to_string(i), gguf::ggml_type::f32, ne, std::as_bytes(std::span(d))));
  }
  const fs::path p = dir / "model.gguf";
  REQUIRE(gguf::save(w, p));
  return p;
}

// Splits the model at `src` into `prefix` shards with at most `per_shard` tensors each.
std::vector<fs::path> split(const fs::path& src, const fs::path& prefix, std::uint32_t per_shard,
                            bool metadata_only_first = false) {
  auto m = gguf::open_model(src);
  REQUIRE(m);
  gguf::split_options opt;
  opt.max_tensors = per_shard;
  opt.metadata_only_first_shard = metadata_only_first;
  auto paths = gguf::save_split(*m, prefix, opt);
  REQUIRE(paths);
  return *paths;
}

// Rewrites a shard with one edit of its writer.
template <class Edit>
void edit_shard(const fs::path& p, Edit edit) {
  std::vector<std::byte> bytes = test::read_file(p);
  auto f = gguf::parse(bytes);
  REQUIRE(f);
  gguf::writer w = gguf::writer::from(*f);
  edit(w);
  REQUIRE(gguf::save(w, p));
}

std::string message(const gguf::result<gguf::model>& m) { return m ? "" : gguf::to_string(m.error()); }

// Every tensor of the model, opened through `path`, holds the floats write_model gave it.
void check_model(const fs::path& path, std::size_t n_shards, std::size_t n_tensors = 10) {
  const auto m = gguf::open_model(path);
  REQUIRE_MESSAGE(m, message(m));
  CHECK(m->n_shards() == n_shards);
  CHECK(m->metadata().get<std::string_view>("general.name").value_or("") == "sharded");
  REQUIRE(m->tensors().size() == n_tensors);
  for (std::size_t i = 0; i < n_tensors; ++i) {
    const gguf::tensor_info* t = m->find_tensor("t" + std::to_string(i));
    REQUIRE(t);
    CHECK(t == &m->tensors()[i]);
    CHECK(m->shard_of(*t) < n_shards);
    // The data lies in its own shard's mapping.
    const auto shard_bytes = m->shard(m->shard_of(*t)).bytes();
    CHECK(t->data.data() >= shard_bytes.data());
    CHECK(t->data.data() + t->data.size() <= shard_bytes.data() + shard_bytes.size());
    std::vector<float> out(t->n_elements);
    REQUIRE(gguf::dequantize(*t, out));
    for (std::size_t k = 0; k < out.size(); ++k) REQUIRE(out[k] == static_cast<float>(i * 1000 + k));
  }
  CHECK(m->find_tensor("missing") == nullptr);
}

}  // namespace

TEST_CASE("shard names: NAME-%05d-of-%05d.gguf, numbered from 1") {
  CHECK(gguf::shard_name("model", 0, 5) == "model-00001-of-00005.gguf");
  CHECK(gguf::shard_name("dir/m", 4, 5) == "dir/m-00005-of-00005.gguf");
  CHECK(gguf::shard_name("m", 9999, 65535) == "m-10000-of-65535.gguf");
  const auto p = gguf::parse_shard_name("dir/Llama-3-8B-00003-of-00005.gguf");
  REQUIRE(p);
  CHECK(p->prefix == "dir/Llama-3-8B");
  CHECK(p->index == 2);
  CHECK(p->count == 5);
  for (const char* bad : {"model.gguf", "m-00000-of-00005.gguf", "m-00006-of-00005.gguf", "m-0001-of-00005.gguf",
                          "m-00001-of-00005.bin", "-00001-of-00005.gguf x", "m00001-of-00005.gguf",
                          "m-00001-of-065536.gguf", "m-000001-of-00005.gguf", "m-00001-00005.gguf"}) {
    CAPTURE(bad);
    CHECK(!gguf::parse_shard_name(bad));
  }
  CHECK(gguf::parse_shard_name("-00001-of-00001.gguf")->prefix.empty());
}

TEST_CASE("the split plan is gguf-split's: by tensor count, by size, metadata-only first shard") {
  std::vector<gguf::tensor_info> ts(10);
  for (std::size_t i = 0; i < ts.size(); ++i) ts[i].n_bytes = 100 * (i + 1);  // padded to 32: 128, 224, 320...
  auto by_count = gguf::plan_split(ts, {4, 0, false});
  REQUIRE(by_count);
  CHECK(by_count->first == std::vector<std::size_t>{0, 4, 8});
  CHECK(by_count->tensors_in(2) == 2);
  auto first_empty = gguf::plan_split(ts, {4, 0, true});
  REQUIRE(first_empty);
  CHECK(first_empty->first == std::vector<std::size_t>{0, 0, 4, 8});
  CHECK(first_empty->tensors_in(0) == 0);
  // By size: a new shard when the next padded tensor would pass 700 bytes.
  auto by_size = gguf::plan_split(ts, {0, 700, false});
  REQUIRE(by_size);
  // 128 + 224 + 320 = 672; 416; 512; 608; then each tensor alone (704 bytes and more).
  CHECK(by_size->first == std::vector<std::size_t>{0, 3, 4, 5, 6, 7, 8, 9});
  // A tensor larger than the limit gets a shard of its own (gguf-split stops when it comes first).
  auto tiny = gguf::plan_split(ts, {0, 50, false});
  REQUIRE(tiny);
  CHECK(tiny->size() == 10);
  // No tensors: one shard with the metadata.
  auto none = gguf::plan_split({}, {});
  REQUIRE(none);
  CHECK(none->size() == 1);
  CHECK(gguf::plan_split(ts, {0, 0, false}).error().code == errc::out_of_range);
}

TEST_CASE("open_model: a plain file is a one-shard model, a shard opened alone still parses as a file") {
  const fs::path dir = fresh_dir("plain");
  const fs::path file = write_model(dir);
  check_model(file, 1);
  const auto shards = split(file, dir / "m", 3);
  REQUIRE(shards.size() == 4);
  const auto one = gguf::open(shards[1]);
  REQUIRE(one);
  CHECK(one->tensors().size() == 3);
  CHECK(*one->metadata().get<std::uint16_t>("split.no") == 1);
}

TEST_CASE("open_model: from any shard, or from the prefix, one model with every tensor") {
  const fs::path dir = fresh_dir("any");
  const fs::path file = write_model(dir);
  const auto shards = split(file, dir / "m", 3);
  for (const fs::path& s : shards) check_model(s, 4);
  check_model(dir / "m", 4);
  // The first shard holds the metadata and split.* keys; the others only the split.* keys.
  const auto m = gguf::open_model(shards[2]);
  REQUIRE(m);
  CHECK(m->shard(0).metadata().size() == 5);
  CHECK(m->shard(3).metadata().size() == 3);
  CHECK(m->shard_path(3) == shards[3]);
  CHECK(m->file_bytes() ==
        fs::file_size(shards[0]) + fs::file_size(shards[1]) + fs::file_size(shards[2]) + fs::file_size(shards[3]));
  // A metadata-only first shard (gguf-split --no-tensor-first-split).
  const auto light = split(file, dir / "light", 5, true);
  REQUIRE(light.size() == 3);
  check_model(light[0], 3);
  check_model(light[2], 3);
  // A model with one tensor per shard.
  const auto many = split(file, dir / "many", 1);
  CHECK(many.size() == 10);
  check_model(many[7], 10);
}

TEST_CASE("open_model: shards laid out as gguf-py writes them (keys appended in its order, shapes untrimmed)") {
  const fs::path dir = fresh_dir("gguf-py");
  // gguf-py: the first shard has every key, then split.no, split.count, split.tensors.count; the others
  // those three only; names "{stem}-{i:05d}-of-{n:05d}.gguf".
  for (std::uint16_t k = 0; k < 2; ++k) {
    test::file_builder fb;
    if (k == 0) fb.kv("general.architecture", "llama").kv("general.name", "sharded");
    fb.kv<std::uint16_t>("split.no", k).kv<std::uint16_t>("split.count", 2).kv<std::int32_t>("split.tensors.count", 4);
    for (int i = 0; i < 2; ++i) fb.tensor("t" + std::to_string(2 * k + i), gguf::ggml_type::f32, {64, 1});
    test::write_file(dir / ("m-0000" + std::to_string(k + 1) + "-of-00002.gguf"), fb.build());
  }
  const auto m = gguf::open_model(dir / "m-00002-of-00002.gguf");
  REQUIRE_MESSAGE(m, message(m));
  CHECK(m->tensors().size() == 4);
  CHECK(m->find_tensor("t3")->n_dims == 2);
}

TEST_CASE("open_model: a shard set that is not one model is refused, naming the shard and the cause") {
  const fs::path dir = fresh_dir("hostile");
  const fs::path file = write_model(dir);
  const auto fresh = [&](const std::string& name) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().filename().string().rfind(name + "-", 0) == 0) fs::remove(e.path());
    }
    return split(file, dir / name, 3);  // 4 shards: 3 + 3 + 3 + 1 tensors
  };
  const auto refused = [&](const fs::path& path, errc code, const std::string& text) {
    const auto m = gguf::open_model(path);
    REQUIRE(!m);
    CHECK(m.error().code == code);
    CHECK_MESSAGE(gguf::to_string(m.error()).find(text) != std::string::npos, gguf::to_string(m.error()));
  };

  SUBCASE("a missing shard") {
    const auto s = fresh("missing");
    fs::remove(s[2]);
    refused(s[0], errc::io_error, "a shard of the model is missing: 'missing-00003-of-00004.gguf'");
    refused(s[3], errc::io_error, "missing-00003-of-00004.gguf");
    refused(dir / "missing", errc::io_error, "missing-00003-of-00004.gguf");
  }
  SUBCASE("a shard copied over another (duplicate), and two swapped") {
    auto s = fresh("dup");
    test::copy_file(s[1], s[2]);
    refused(s[0], errc::bad_shards,
            "split.no differs from the shard number in the file name: 'dup-00003-of-00004.gguf'");
    s = fresh("swap");
    fs::rename(s[1], dir / "tmp.gguf");
    fs::rename(s[2], s[1]);
    fs::rename(dir / "tmp.gguf", s[2]);
    refused(s[0], errc::bad_shards, "'swap-00002-of-00004.gguf'");
  }
  SUBCASE("renumbered: names that say another count") {
    const auto s = fresh("renum");
    for (std::uint32_t k = 0; k < 4; ++k) fs::rename(s[k], dir / gguf::shard_name("renum", k, 5));
    refused(dir / "renum-00001-of-00005.gguf", errc::bad_shards,
            "split.count differs from the shard count in the file name");
  }
  SUBCASE("split.count wrong in one shard (llama.cpp reads only the first's)") {
    const auto s = fresh("count");
    edit_shard(s[2], [](gguf::writer& w) { REQUIRE(w.replace("split.count", gguf::value(std::uint16_t{5}))); });
    refused(s[0], errc::bad_shards, "split.count differs between shards: 'count-00003-of-00004.gguf'");
  }
  SUBCASE("split.count missing, split.no missing, a key of another type") {
    auto s = fresh("nocount");
    edit_shard(s[1], [](gguf::writer& w) { w.remove("split.count"); });
    refused(s[0], errc::bad_shards, "a shard has no split.count");
    s = fresh("nono");
    edit_shard(s[3], [](gguf::writer& w) { w.remove("split.no"); });
    refused(s[0], errc::bad_shards, "a shard has no split.no: 'nono-00004-of-00004.gguf'");
    s = fresh("type");
    edit_shard(s[1], [](gguf::writer& w) { REQUIRE(w.replace("split.no", gguf::value(std::uint32_t{1}))); });
    refused(s[0], errc::type_mismatch, "'type-00002-of-00004.gguf: split.no' is uint32, not uint16");
  }
  SUBCASE("split.tensors.count that does not match the tensors found") {
    auto s = fresh("total");
    for (const fs::path& p : s) {
      edit_shard(p, [](gguf::writer& w) { REQUIRE(w.replace("split.tensors.count", gguf::value(std::int32_t{11}))); });
    }
    refused(s[2], errc::bad_shards, "split.tensors.count differs from the tensors in the shards");
    s = fresh("total2");
    edit_shard(s[1], [](gguf::writer& w) { REQUIRE(w.replace("split.tensors.count", gguf::value(std::int32_t{9}))); });
    refused(s[0], errc::bad_shards, "split.tensors.count differs between shards");
    s = fresh("nototal");
    edit_shard(s[0], [](gguf::writer& w) { w.remove("split.tensors.count"); });
    refused(s[0], errc::bad_shards, "the first shard has no split.tensors.count");
  }
  SUBCASE("a tensor in two shards, a tensor dropped, a tensor moved to another shard (fine)") {
    auto s = fresh("twice");
    {
      std::vector<std::byte> first = test::read_file(s[0]);
      auto f0 = gguf::parse(first);
      REQUIRE(f0);
      const gguf::tensor_info t0 = f0->tensors()[0];
      edit_shard(s[3], [&](gguf::writer& w) { REQUIRE(w.add_tensor(t0.name, t0.type, t0.dims(), t0.data)); });
    }
    refused(s[1], errc::duplicate_tensor, "a tensor is in two shards: 'twice-00004-of-00004.gguf: t0'");
    s = fresh("dropped");
    edit_shard(s[3], [](gguf::writer& w) { REQUIRE(w.remove_tensor("t9")); });
    refused(s[0], errc::bad_shards, "split.tensors.count differs from the tensors in the shards");
    s = fresh("moved");
    {
      std::vector<std::byte> last = test::read_file(s[3]);
      auto f3 = gguf::parse(last);
      REQUIRE(f3);
      const gguf::tensor_info t9 = f3->tensors()[0];
      edit_shard(s[1], [&](gguf::writer& w) { REQUIRE(w.add_tensor(t9.name, t9.type, t9.dims(), t9.data)); });
      edit_shard(s[3], [](gguf::writer& w) { REQUIRE(w.remove_tensor("t9")); });
    }
    const auto m = gguf::open_model(s[0]);
    REQUIRE_MESSAGE(m, message(m));
    CHECK(m->shard_of(*m->find_tensor("t9")) == 1);
  }
  SUBCASE("a damaged shard: its parse error, naming it") {
    const auto s = fresh("damaged");
    std::vector<std::byte> b = test::read_file(s[2]);
    b.resize(b.size() - 100);
    test::write_file(s[2], b);
    refused(s[0], errc::out_of_bounds, "damaged-00003-of-00004.gguf: t8");
  }
  SUBCASE("a shard whose name does not say where it belongs, a prefix of two sets") {
    const auto s = fresh("named");
    test::copy_file(s[0], dir / "renamed.gguf");
    refused(dir / "renamed.gguf", errc::bad_shards, "a shard's name must end in -0000k-of-0000n.gguf");
    // named-0000k-of-00002 beside named-0000k-of-00004 (copied in: a split replaces the prefix's set)
    fs::create_directories(dir / "elsewhere");
    std::vector<fs::path> other;
    for (const fs::path& p : split(file, dir / "elsewhere" / "named", 5)) {
      other.push_back(dir / p.filename());
      test::copy_file(p, other.back());
    }
    REQUIRE(other.size() == 2);
    refused(dir / "named", errc::bad_shards, "shard sets of several counts have this prefix");
    check_model(other[1], 2);  // by a shard's name there is no doubt

    // nothing of that name, nor shards named after it: what `open` says of a missing file, in the system's words
#ifdef _WIN32
    refused(dir / "nothing", errc::io_error, "cannot open file: File not found");
#else
    refused(dir / "nothing", errc::io_error, "cannot open file: No such file or directory");
#endif
  }
}

namespace {

// The files of `dir` as byte sources: what read_model_header is given for a set that is not mapped (a
// pipe, HTTP range requests); every read is counted.
struct directory_sources {
  fs::path dir;
  std::size_t reads = 0;

  gguf::result<gguf::sized_source<std::function<std::size_t(std::uint64_t, std::span<std::byte>)>>> operator()(
      std::string_view name) {
    const fs::path p = dir / std::string(name);
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(p, ec);
    if (ec) return gguf::error{errc::io_error, "cannot open"}.os(ENOENT);
    auto bytes = std::make_shared<std::vector<std::byte>>(test::read_file(p));
    return gguf::sized_source<std::function<std::size_t(std::uint64_t, std::span<std::byte>)>>{
        [this, bytes](std::uint64_t at, std::span<std::byte> out) {
          ++reads;
          const std::size_t n =
              at >= bytes->size() ? 0 : std::min(out.size(), bytes->size() - static_cast<std::size_t>(at));
          if (n) std::memcpy(out.data(), bytes->data() + at, n);
          return n;
        },
        size};
  }
};

}  // namespace

TEST_CASE("read_model_header: a shard set read through byte sources is the model open_model maps") {
  const fs::path dir = fresh_dir("sources");
  const fs::path file = write_model(dir);
  const auto shards = split(file, dir / "m", 3);
  for (const fs::path& given : {shards[0], shards[2], file}) {
    CAPTURE(given.filename().string());
    directory_sources src{dir};
    gguf::read_header_options opt;
    opt.first_read = 64;  // several reads a shard
    const auto h = gguf::read_model_header(given.filename().string(), src, opt);
    REQUIRE_MESSAGE(h, gguf::to_string(h.error()));
    const auto m = gguf::open_model(given);
    REQUIRE(m);
    REQUIRE(h->n_shards() == m->n_shards());
    CHECK(h->metadata().size() == m->metadata().size());
    CHECK(h->reads() == src.reads);
    REQUIRE(h->tensors().size() == m->tensors().size());
    for (std::size_t i = 0; i < m->tensors().size(); ++i) {
      const gguf::tensor_info& a = h->tensors()[i];
      const gguf::tensor_info& b = m->tensors()[i];
      CHECK(a.name == b.name);
      CHECK(a.type == b.type);
      CHECK(a.n_elements == b.n_elements);
      CHECK(a.offset == b.offset);
      CHECK(h->shard_of(a) == m->shard_of(b));
      CHECK(h->find_tensor(b.name) == &a);
    }
    for (std::size_t k = 0; k < h->n_shards(); ++k) CHECK(h->shard_name(k) == m->shard_path(k).filename().string());
  }
  // Refused as open_model refuses, naming the shard.
  fs::remove(shards[2]);
  directory_sources src{dir};
  const auto missing = gguf::read_model_header(shards[0].filename().string(), src);
  REQUIRE(!missing);
  CHECK(missing.error().code == errc::io_error);
  CHECK(gguf::to_string(missing.error()).find("a shard of the model is missing: 'm-00003-of-00004.gguf'") !=
        std::string::npos);
  test::copy_file(shards[1], shards[2]);
  const auto duplicate = gguf::read_model_header(shards[3].filename().string(), src);
  REQUIRE(!duplicate);
  CHECK(duplicate.error().code == errc::bad_shards);
  CHECK(gguf::to_string(duplicate.error()).find("'m-00003-of-00004.gguf'") != std::string::npos);
}

TEST_CASE("read_header: a header is held without the megabytes of data its first read took") {
  // A small header before 4 MiB of data: the first read (2 MiB) takes half of it, and gives it back; a
  // tensor the read holds whole keeps its data.
  gguf::writer w;
  REQUIRE(w.set("general.architecture", gguf::value("llama")));
  std::vector<float> small(64, 1.0f), big(std::size_t{1} << 20, 2.0f);
  const std::uint64_t ne_small[] = {small.size()}, ne_big[] = {big.size()};
  REQUIRE(w.add_tensor("small", gguf::ggml_type::f32, ne_small, std::as_bytes(std::span(small))));
  REQUIRE(w.add_tensor("big", gguf::ggml_type::f32, ne_big, std::as_bytes(std::span(big))));
  std::vector<std::byte> bytes;
  gguf::vector_sink sink(bytes);
  REQUIRE(w.write(sink));
  const auto h = gguf::read_header(
      [&](std::uint64_t at, std::span<std::byte> out) -> std::size_t {
        const std::size_t n = std::min(out.size(), bytes.size() - static_cast<std::size_t>(at));
        std::memcpy(out.data(), bytes.data() + at, n);
        return n;
      },
      bytes.size());
  REQUIRE(h);
  const gguf::tensor_info* s = h->find_tensor("small");
  REQUIRE(s);
  CHECK(s->has_data());
  CHECK(!h->find_tensor("big")->has_data());
  CHECK(h->bytes().size() == h->data_offset() + s->offset + s->n_bytes);
  CHECK(h->reads() == 1);
}

TEST_CASE("read_model_header: the shards' headers together are bounded by max_metadata_bytes") {
  const fs::path dir = fresh_dir("sources-bound");
  const auto shards = split(write_model(dir), dir / "m", 3);
  std::uint64_t largest = 0, total = 0;
  for (const fs::path& p : shards) {
    largest = std::max<std::uint64_t>(largest, fs::file_size(p));
    total += fs::file_size(p);
  }
  directory_sources src{dir};
  gguf::read_header_options opt;
  opt.parse.max_metadata_bytes = total;  // each file is read whole: the headers and data held are the files
  REQUIRE(gguf::read_model_header(shards[0].filename().string(), src, opt));
  opt.parse.max_metadata_bytes = largest;  // each header fits, not all of them
  const auto m = gguf::read_model_header(shards[0].filename().string(), src, opt);
  REQUIRE(!m);
  CHECK(m.error().code == errc::limit_exceeded);
  CHECK(gguf::to_string(m.error()).find("the shards' headers exceed max_metadata_bytes in all: 'm-0000") !=
        std::string::npos);
}

TEST_CASE("merge: llama.cpp's layout keeps split.no and split.tensors.count, split.count 0 last, or the original") {
  const fs::path dir = fresh_dir("merge");
  const fs::path file = write_model(dir);
  const auto shards = split(file, dir / "m", 4);
  const auto m = gguf::open_model(shards[1]);
  REQUIRE(m);
  auto keep = gguf::merged_writer(*m);
  REQUIRE(keep);
  REQUIRE(gguf::save(*keep, dir / "merged.gguf"));
  const auto merged = gguf::open(dir / "merged.gguf");
  REQUIRE(merged);
  const auto& md = merged->metadata();
  REQUIRE(md.size() == 5);
  CHECK(md[2].key == "split.no");
  CHECK(md[3].key == "split.tensors.count");
  CHECK(md[4].key == "split.count");
  CHECK(*md.get<std::uint16_t>("split.count") == 0);
  check_model(dir / "merged.gguf", 1);  // split.count 0: a whole model
  // Without the keys: the very bytes that were split.
  gguf::merge_options drop;
  drop.keep_split_keys = false;
  auto original = gguf::merged_writer(*m, drop);
  REQUIRE(original);
  REQUIRE(gguf::save(*original, dir / "back.gguf"));
  CHECK(test::read_file(dir / "back.gguf") == test::read_file(file));
  // And re-splitting the shards gives the same shards.
  const auto again = split(shards.back(), dir / "again", 4);
  REQUIRE(again.size() == shards.size());
  for (std::size_t k = 0; k < shards.size(); ++k) CHECK(test::read_file(again[k]) == test::read_file(shards[k]));
}

TEST_CASE("save_split: a failure leaves no shard behind") {
  const fs::path dir = fresh_dir("fail");
  const fs::path file = write_model(dir);
  auto m = gguf::open_model(file);
  REQUIRE(m);
  gguf::split_options opt;
  opt.max_tensors = 2;
  // The writes fail once some 5 KiB are written: in the middle of the second shard.
  test::injected_io_faults() = {5000, false};
  const auto r = gguf::save_split(*m, dir / "s", opt);
  test::injected_io_faults() = {};
  REQUIRE(!r);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    CAPTURE(e.path().string());
    CHECK(e.path().filename() == "model.gguf");
    ++files;
  }
  CHECK(files == 1);
}

}  // namespace test_shards
