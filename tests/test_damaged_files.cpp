// Files real users meet: good GGUF files after a text tool, an interrupted download or a preallocated
// download that stopped. Each is refused with the failing field's offset, and `gguf::diagnose` names
// what happened to it, so the `error:` line tells the user what to do.
#include <doctest/doctest.h>

#include <gguf/diagnose.hpp>
#include <gguf/open.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "damage.hpp"
#include "gguf_writer.hpp"
#include "test_files.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_damaged_files {

namespace fs = std::filesystem;
using gguf::damage;
using gguf::errc;

namespace {

// The real files in tests/data: converter-written vocabularies, ggml's quant fixtures and a model.
std::vector<fs::path> real_files() {
  const fs::path data = GGUF_TEST_DATA_DIR;
  std::vector<fs::path> files;
  for (const char* dir : {"vocab", "model"}) {
    for (const auto& e : fs::directory_iterator(data / dir)) {
      if (e.path().extension() == ".gguf") files.push_back(e.path());
    }
  }
  files.push_back(data / "quants" / "quants-s1.gguf");
  files.push_back(data / "quants" / "quants-be.gguf");
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 14);
  return files;
}

std::size_t first_invalid_utf8(const test::bytes& b) {
  const auto* p = reinterpret_cast<const unsigned char*>(b.data());
  std::size_t i = 0;
  while (i < b.size()) {
    const gguf::detail::utf8_step step = gguf::detail::utf8_next(p + i, b.size() - i);
    if (!step.valid) return i;
    i += step.length;
  }
  return b.size();
}

gguf::error refused(const test::bytes& b) {
  auto f = test::parse(b);
  REQUIRE_MESSAGE(!f, "the damaged file was accepted");
  const gguf::error e = f.error();
  CHECK(e.offset <= b.size());
  CHECK(gguf::explain(b, e).find("(at byte ") != std::string::npos);
  return e;
}

}  // namespace

TEST_CASE("a file saved by a text tool is refused, and said to be") {
  // Invalid UTF-8 became U+FFFD: three bytes for one or more, so every later offset moved.
  int damaged = 0;
  for (const fs::path& p : real_files()) {
    CAPTURE(p.filename().string());
    const test::bytes good = test::read_file(p);
    const std::size_t first = first_invalid_utf8(good);
    auto f = test::parse(good);
    REQUIRE(f);
    if (first >= f->data_offset()) continue;  // a header that is all valid UTF-8 survives a text tool
    ++damaged;
    const test::bytes text = test::damage::text_replaced(good);
    const gguf::error e = refused(text);
    const gguf::diagnosis d = gguf::diagnose(text, e);
    CHECK(d.kind == damage::text_replacement);
    CHECK(d.offset == first);  // the first replacement is where the first invalid byte was
    CHECK(d.count >= 1);
    CHECK(gguf::explain(text, e).find("U+FFFD") != std::string::npos);
  }
  CHECK(damaged >= 8);  // scores, counts and tensor infos put invalid UTF-8 in nearly every header
}

TEST_CASE("a file copied in text mode (LF to CR LF) is refused, and said to be") {
  int damaged = 0;
  for (const fs::path& p : real_files()) {
    CAPTURE(p.filename().string());
    const test::bytes good = test::read_file(p);
    auto f = test::parse(good);
    REQUIRE(f);
    const auto lf = std::find(good.begin(), good.end(), std::byte{'\n'});
    if (lf - good.begin() >= static_cast<std::ptrdiff_t>(f->data_offset())) continue;  // no LF in the header
    ++damaged;
    const test::bytes text = test::damage::crlf(good);
    const gguf::error e = refused(text);
    const gguf::diagnosis d = gguf::diagnose(text, e);
    // A header that is also valid UTF-8 with U+FFFD in its strings reads as a text tool's work first.
    CHECK((d.kind == damage::crlf || d.kind == damage::text_replacement));
    if (d.kind == damage::crlf) CHECK(d.offset == static_cast<std::uint64_t>(lf - good.begin()));
  }
  CHECK(damaged >= 8);
}

TEST_CASE("a truncated download is refused wherever it was cut, with the size it has") {
  for (const fs::path& p : real_files()) {
    CAPTURE(p.filename().string());
    const test::bytes good = test::read_file(p);
    auto f = test::parse(good);
    REQUIRE(f);
    std::uint64_t end = f->data_offset();  // the bytes the file needs: its last tensor's end
    for (const gguf::tensor_info& t : f->tensors()) end = std::max(end, t.file_offset + t.n_bytes);
    const std::size_t step = std::max<std::size_t>(1, static_cast<std::size_t>(end) / 97);
    for (std::size_t n = 0; n < end; n += step) {
      CAPTURE(n);
      const test::bytes cut = test::damage::truncated(good, n);
      const gguf::error e = refused(cut);
      CHECK((e.code == errc::truncated || e.code == errc::out_of_bounds));
      const gguf::diagnosis d = gguf::diagnose(cut, e);
      // Cut inside zero bytes (padding, zero weights), the tail looks zero-filled: still a download.
      CHECK((d.kind == damage::truncated || d.kind == damage::zero_tail));
      if (d.kind == damage::truncated) CHECK(d.offset == n);
    }
  }
}

TEST_CASE("a preallocated download that stopped (zeros to the end) is refused where the zeros start") {
  // Zeros from anywhere in the key/values or tensor infos: refused, and the zeros found. (Zeros that
  // start in the tensor data are valid weights: only a checksum of the file can tell.)
  int cases = 0;
  for (const fs::path& p : real_files()) {
    CAPTURE(p.filename().string());
    const test::bytes good = test::read_file(p);
    auto f = test::parse(good);
    REQUIRE(f);
    const std::uint64_t last_info =
        f->tensors().empty() ? f->metadata().entries().back().offset : f->data_offset() - 64;  // inside the last infos
    const std::size_t step = std::max<std::size_t>(1, static_cast<std::size_t>(last_info) / 61);
    for (std::size_t from = 24; from < last_info; from += step) {
      CAPTURE(from);
      const test::bytes zeroed = test::damage::zero_tail(good, from);
      auto z = test::parse(zeroed);
      if (z) continue;  // rare: zeros that still make a valid file (e.g. a last string array)
      ++cases;
      const gguf::error e = z.error();
      const gguf::diagnosis d = gguf::diagnose(zeroed, e);
      CHECK(d.kind == damage::zero_tail);
      CHECK(d.offset <= from);  // the zeros may start a little earlier: bytes that were zero already
      CHECK(d.count == zeroed.size() - d.offset);
      CHECK(e.offset >= d.offset);
    }
  }
  CHECK(cases >= 500);
}

TEST_CASE("diagnose: an intact file's error gets no made-up cause") {
  test::file_builder fb;
  fb.kv<std::uint32_t>("general.alignment", 48).tensor("t", gguf::ggml_type::f32, {64});
  const test::bytes b = fb.build();
  auto f = test::parse(b);
  REQUIRE(!f);
  CHECK(!gguf::diagnose(b, f.error()));
  CHECK(gguf::explain(b, f.error()) == gguf::to_string(f.error()));

  test::bytes v;  // a version field with zero high bytes is not a zero-filled tail
  test::byte_writer(v).raw("GGUF").u32(4).zeros(40);
  auto g = test::parse(v);
  REQUIRE(!g);
  CHECK(!gguf::diagnose(v, g.error()));

  CHECK(gguf::explain(test::bytes{}, gguf::error{errc::truncated, 0, "file ends before the magic"}) ==
        "file ends before the magic (at byte 0); the file is empty");
}

}  // namespace test_damaged_files
