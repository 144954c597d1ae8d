// mapped_file: a read-only mapping that outlives moves, and clean errors for what cannot be mapped.
#include <doctest/doctest.h>

#include <gguf/open.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_mapped_file {

namespace fs = std::filesystem;

namespace {
fs::path temp_file(const char* name, const test::bytes& content) {
  const fs::path p = fs::temp_directory_path() / (std::string("gguf-test-") + name);
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
  return p;
}
}  // namespace

TEST_CASE("a mapped file shows the file's bytes and keeps its address when moved") {
  test::file_builder fb;
  fb.kv("general.architecture", "test").tensor("w", gguf::ggml_type::f32, {16});
  const test::bytes content = fb.build();
  const fs::path p = temp_file("map.gguf", content);
  auto m = gguf::mapped_file::open(p.string().c_str());
  REQUIRE(m);
  REQUIRE(m->size() == content.size());
  CHECK(std::equal(content.begin(), content.end(), m->bytes().begin()));
  const std::byte* addr = m->data();
  gguf::mapped_file moved = std::move(*m);
  CHECK(moved.data() == addr);
  CHECK(m->data() == nullptr);
  moved.prefetch(0, moved.size());
  fs::remove(p);
}

TEST_CASE("open() maps and parses, and views stay valid as the result moves") {
  test::file_builder fb;
  fb.kv("general.architecture", "test").tensor("w", gguf::ggml_type::f32, {16});
  const fs::path p = temp_file("open.gguf", fb.build());
  fs::permissions(p, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);  // read-only
  auto g = gguf::open(p.string().c_str());
  REQUIRE_MESSAGE(g, gguf::to_string(g.error()));
  auto moved = std::move(*g);
  CHECK(moved.metadata().architecture() == "test");
  const gguf::tensor_info* w = moved.find_tensor("w");
  REQUIRE(w);
  CHECK(w->data.data() == moved.mapping().data() + w->file_offset);
  fs::permissions(p, fs::perms::owner_all);
  fs::remove(p);
}

TEST_CASE("what cannot be mapped is an io_error, and an empty file is a truncated GGUF") {
  CHECK(gguf::mapped_file::open("/nonexistent/dir/x.gguf").error().code == gguf::errc::io_error);
  CHECK(gguf::mapped_file::open(fs::temp_directory_path().string().c_str()).error().code == gguf::errc::io_error);
  const fs::path empty = temp_file("empty.gguf", {});
  auto m = gguf::mapped_file::open(empty.string().c_str());
  REQUIRE(m);
  CHECK(m->size() == 0);
  CHECK(gguf::open(empty.string().c_str()).error().code == gguf::errc::truncated);
  fs::remove(empty);
}

}  // namespace test_mapped_file
