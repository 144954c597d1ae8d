// Errors a user can act on: each names what it is about (the key, the tensor), the types of a
// mismatch, the OS's reason for an I/O error, and a byte offset only when it is about a byte.
#include <doctest/doctest.h>

#include <gguf/diagnose.hpp>
#include <gguf/open.hpp>
#include <gguf/print.hpp>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_errors {

namespace fs = std::filesystem;
using gguf::errc;

namespace {

std::vector<std::byte> small_model() {
  test::file_builder fb;
  fb.kv("general.architecture", "llama")
      .kv<std::uint32_t>("llama.context_length", 4096)
      .kv<std::uint32_t>("big", 300)
      .kv_array<float>("scores", {0.5f, 1.5f})
      .tensor("blk.0.attn_q.weight", gguf::ggml_type::f32, {4, 2});
  return fb.build();
}

}  // namespace

TEST_CASE("a missing key is named, and a lookup has no byte offset") {
  const auto bytes = small_model();
  const auto f = gguf::parse(bytes);
  REQUIRE(f);
  const gguf::error e = f->metadata().get<std::uint32_t>("general.nmae").error();
  CHECK(e.code == errc::not_found);
  CHECK(e.subject() == "general.nmae");
  CHECK(!e.has_offset());
  CHECK(gguf::to_string(e) == "no such metadata key: 'general.nmae'");
  // An architecture key is named in full, joined without allocating.
  CHECK(gguf::to_string(f->metadata().get_arch<float>("rope.freq_base").error()) ==
        "no such metadata key: 'llama.rope.freq_base'");
}

TEST_CASE("a type mismatch names the key, the type asked for and the type stored") {
  const auto bytes = small_model();
  const auto f = gguf::parse(bytes);
  REQUIRE(f);
  const gguf::error e = f->metadata().get<std::int32_t>("llama.context_length").error();
  CHECK(e.code == errc::type_mismatch);
  CHECK(std::string(e.expected) == "int32");
  CHECK(std::string(e.actual) == "uint32");
  CHECK(gguf::to_string(e) == "metadata value has another type: 'llama.context_length' is uint32, not int32");
  CHECK(gguf::to_string(f->metadata().get_integer<std::int8_t>("big").error()) ==
        "integer does not fit the requested type: 'big', a uint32, does not fit in int8");
  CHECK(gguf::to_string(f->metadata().get_integer<std::int8_t>("scores").error()) ==
        "metadata value is not an integer: 'scores' is array, not int8");
  const gguf::array_view scores = f->metadata().get<gguf::array_view>("scores").value();
  CHECK(gguf::to_string(scores.get<double>(0).error()) == "array items have another type: it is float32, not float64");
  CHECK(gguf::to_string(scores.get<float>(7).error()) == "array index past the last item");
}

TEST_CASE("a refused file's error says where, and what it is about") {
  test::file_builder fb;
  fb.kv<std::uint8_t>("general.flag", 1).kv<std::uint8_t>("general.flag", 2);
  const test::bytes b = fb.build();
  const gguf::error dup = test::parse(b).error();
  CHECK(dup.code == errc::duplicate_key);
  CHECK(dup.has_offset());
  CHECK(gguf::to_string(dup) ==
        "metadata key appears twice: 'general.flag' (at byte " + std::to_string(dup.offset) + ")");
  // The magic is a field at byte 0: an offset that means something is printed even when it is 0.
  const std::vector<std::byte> junk(16, std::byte{'x'});
  CHECK(gguf::to_string(gguf::parse(junk).error()) == "magic is not \"GGUF\" (at byte 0)");
}

TEST_CASE("subjects are copied, cut at 63 bytes on a character boundary, and printed escaped") {
  gguf::error e{errc::not_found, "no such metadata key"};
  const std::string caller(100, 'k');
  e.about(caller);
  CHECK(e.subject().size() == 63);
  CHECK(e.subject().substr(60) == "...");
  // A multi-byte character is never cut in half.
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "\xC3\xA9";  // U+00E9, 2 bytes each
  e.about(accents);
  const std::string_view s = e.subject();
  CHECK(s.substr(s.size() - 3) == "...");
  CHECK((s.size() - 3) % 2 == 0);
  // Control bytes and quotes come out escaped: one line, whatever a hostile file names its keys.
  e.about(std::string_view("a\nb'c", 5));
  CHECK(gguf::to_string(e) == "no such metadata key: 'a\\x0ab\\x27c'");
}

TEST_CASE("an I/O error carries the OS's reason") {
  const auto missing = gguf::open("/nonexistent/dir/model.gguf");
  REQUIRE(!missing);
  CHECK(missing.error().code == errc::io_error);
  CHECK(!missing.error().has_offset());
  CHECK(missing.error().os_code != 0);
  CHECK(gguf::to_string(missing.error()) ==
        "cannot open file: " + std::system_category().message(missing.error().os_code));
  const auto dir = gguf::open(fs::temp_directory_path());
  REQUIRE(!dir);
  CHECK(dir.error().os_code != 0);
#if !defined(_WIN32)  // errno; Windows gives GetLastError() codes (ERROR_PATH_NOT_FOUND, ERROR_ACCESS_DENIED)
  CHECK(missing.error().os_code == ENOENT);
  CHECK(dir.error().os_code == EISDIR);
#endif
}

TEST_CASE("open takes a path, a std::string, a std::string_view or a C string") {
  const fs::path p = fs::temp_directory_path() / "gguf-open-overloads.gguf";
  const auto bytes = small_model();
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const std::string s = p.string();
  CHECK(gguf::open(p));
  CHECK(gguf::open(s));
  CHECK(gguf::open(std::string_view(s)));
  CHECK(gguf::open(s.c_str()));
  fs::remove(p);
}

TEST_CASE("explain(path, error): the likely cause after a failed open, without mapping by hand") {
  const fs::path p = fs::temp_directory_path() / "gguf-explain-truncated.gguf";
  auto bytes = small_model();
  bytes.resize(bytes.size() - 5);  // a download cut short
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const auto g = gguf::open(p);
  REQUIRE(!g);
  const std::string line = gguf::explain(p, g.error());
  CHECK(line.find("truncated download") != std::string::npos);
  CHECK(line.rfind(gguf::to_string(g.error()), 0) == 0);
  // An I/O error is explained as it is.
  CHECK(gguf::explain("/nonexistent/x.gguf", gguf::open("/nonexistent/x.gguf").error()) ==
        gguf::to_string(gguf::open("/nonexistent/x.gguf").error()));
  fs::remove(p);
}

}  // namespace test_errors
