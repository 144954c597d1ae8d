// Parsing from a prefix: for every cut of every file, parse_prefix either asks for more bytes, exactly
// as many as let the parse get further, or gives what the full parse gives. Each prefix is copied to a
// heap block of exactly its size, so the sanitizer builds catch a read past the cut.
#include <doctest/doctest.h>

#include <gguf/dequantize.hpp>
#include <gguf/print.hpp>
#include <gguf/read_header.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gguf_writer.hpp"
#include "test_files.hpp"
#include "prefix_property.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_prefix {

namespace fs = std::filesystem;
using gguf::errc;

namespace {

std::vector<fs::path> gguf_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".gguf") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The same header, as the tests state it.
void check_same_header(const gguf::file& whole, const gguf::file& part) {
  const char* d = prefix_property::header_differs(whole, part);
  CHECK_MESSAGE(d == nullptr, d);
}

void check_every_cut(const std::vector<std::byte>& bytes) {
  std::size_t cut = 0;
  const char* v = prefix_property::check_every_cut(bytes, &cut);
  CAPTURE(cut);
  CHECK_MESSAGE(v == nullptr, v);
}

// A sample of cuts for big files: the first bytes, spread cuts, and around every request met.
void check_sampled_cuts(const std::vector<std::byte>& bytes, std::size_t n) {
  const auto full = gguf::parse(bytes);
  std::vector<std::size_t> cuts;
  for (std::size_t c = 0; c <= std::min<std::size_t>(bytes.size(), 64); ++c) cuts.push_back(c);
  std::mt19937_64 rng(bytes.size());
  for (std::size_t i = 0; i < n; ++i) cuts.push_back(static_cast<std::size_t>(rng() % (bytes.size() + 1)));
  for (std::size_t cut : cuts) {
    CAPTURE(cut);
    const char* v = prefix_property::check_cut_exact(bytes, full, cut);
    REQUIRE_MESSAGE(v == nullptr, v);
  }
}

#ifdef GGUF_SHARED_DIR  // its one use
// The requests a reader makes for a header: 2 MiB first, then what is asked for, at least doubling.
std::size_t requests_from(const std::vector<std::byte>& bytes, std::size_t first) {
  std::size_t have = std::min(first, bytes.size()), n = 1;
  for (;;) {
    const auto r = gguf::parse_prefix(std::span<const std::byte>(bytes).first(have), bytes.size());
    if (r || r.error() != errc::need_more) return n;
    have = static_cast<std::size_t>(
        std::min<std::uint64_t>(std::max<std::uint64_t>(r.error().needed, 2 * have), bytes.size()));
    ++n;
  }
}
#endif

}  // namespace

TEST_CASE("parse_prefix: every cut of every test file asks for exactly what moves it on, or parses as the whole") {
  const fs::path data = GGUF_TEST_DATA_DIR;
  std::vector<fs::path> files = gguf_files(data / "vocab");
  for (const fs::path& p : gguf_files(data / "model")) files.push_back(p);
  files.push_back(data / "quants" / "quants-s1.gguf");
  files.push_back(data / "quants" / "quants-v1.gguf");
  files.push_back(data / "quants" / "quants-be.gguf");
  for (const fs::path& p : files) {
    CAPTURE(p.string());
    const std::vector<std::byte> bytes = test::read_file(p);
    const auto full = gguf::parse(bytes);
    REQUIRE(full);
    if (full->data_offset() + 4096 < bytes.size()) {
      // Every cut through the header and a stretch of the data; past that, tensors only gain their data.
      const std::span<const std::byte> all(bytes);
      for (std::size_t cut = 0; cut <= full->data_offset() + 4096; ++cut) {
        CAPTURE(cut);
        const prefix_property::cut_result r = prefix_property::check_cut(all, full, cut);
        REQUIRE_MESSAGE(r.violation == nullptr, r.violation);
        if (r.needed > cut + 1) REQUIRE(prefix_property::check_cut(all, full, cut + 1).needed == r.needed);
      }
      check_sampled_cuts(bytes, 16);
    } else {
      check_every_cut(bytes);
    }
  }
}

TEST_CASE("parse_prefix: every cut of every hostile seed gives the whole file's error, or asks for more") {
  const fs::path seeds = fs::path(GGUF_TEST_DATA_DIR) / ".." / "fuzz" / "seeds";
  const std::vector<fs::path> files = gguf_files(seeds);
  REQUIRE(files.size() > 20);
  for (const fs::path& p : files) {
    CAPTURE(p.string());
    const std::vector<std::byte> bytes = test::read_file(p);
    if (bytes.size() > (std::size_t{1} << 16)) {
      check_sampled_cuts(bytes, 64);
    } else {
      check_every_cut(bytes);
    }
  }
}

TEST_CASE("parse_prefix: what it asks for, field by field") {
  test::file_builder fb;
  fb.kv("general.name", "tiny").tensor("w", gguf::ggml_type::f32, {8});
  const test::bytes b = fb.build();
  const auto need = [&](std::size_t cut) {
    const auto r = gguf::parse_prefix(std::span<const std::byte>(b).first(cut), b.size());
    return r ? 0 : r.error().needed;
  };
  CHECK(need(0) == 4);   // the magic
  CHECK(need(4) == 8);   // the version
  CHECK(need(8) == 16);  // the tensor count
  // With both counts (1 kv, 1 tensor), at least 8 + 4 + 1 and 8 + 4 + 4 + 8 bytes must follow.
  CHECK(need(16) == 24);
  CHECK(need(24) == 24 + 13 + 24);
  // The key (length and 12 bytes), its type, the value (length and 4 bytes), then the tensor name's length.
  CHECK(need(24 + 37) == 24 + 8 + 12 + 4 + 8 + 4 + 8);
  // The whole header: the data may be missing.
  const auto whole = gguf::parse(b);
  REQUIRE(whole);
  const auto head = gguf::parse_prefix(std::span<const std::byte>(b).first(whole->data_offset()), b.size());
  REQUIRE(head);
  CHECK(!head->tensors()[0].has_data());
  std::vector<float> out(8);
  CHECK(gguf::dequantize(head->tensors()[0], out).error().code == errc::out_of_bounds);
  // A prefix past the file's size is a caller's mistake.
  CHECK(gguf::parse_prefix(b, b.size() - 1).error().code == errc::size_mismatch);
  // Known to be the whole file, a short header is a truncation, not a request.
  CHECK(gguf::parse_prefix(std::span<const std::byte>(b).first(20), 20).error().code == errc::truncated);
  CHECK(gguf::to_string(gguf::parse_prefix(std::span<const std::byte>(b).first(10)).error()) ==
        "header ends before the tensor count (at byte 8): read at least 16 bytes");
}

TEST_CASE("parse_prefix: limits apply to what it would be asked to read") {
  test::file_builder fb;
  fb.kv("big", std::string(4000, 'x'));
  const test::bytes b = fb.build();
  gguf::parse_options opt;
  opt.max_metadata_bytes = 1024;
  // The string does not fit in 1024 bytes: a limit, whether or not the bytes are there.
  CHECK(gguf::parse_prefix(std::span<const std::byte>(b).first(100), b.size(), opt).error().code ==
        errc::limit_exceeded);
  CHECK(gguf::parse_prefix(std::span<const std::byte>(b).first(100), gguf::unknown_size, opt).error().code ==
        errc::limit_exceeded);
  CHECK(gguf::parse(b, opt).error().code == errc::limit_exceeded);
  // A count no file can hold, with the size unknown: the limit, not a request for exabytes.
  test::bytes huge;
  test::byte_writer(huge).raw("GGUF").u32(3).u64(0).u64(std::uint64_t{1} << 60);
  CHECK(gguf::parse_prefix(huge).error().code == errc::limit_exceeded);
  CHECK(gguf::parse_prefix(huge, std::uint64_t{1} << 40).error().code == errc::limit_exceeded);
  CHECK(gguf::parse_prefix(huge, 1000).error().code == errc::truncated);
}

TEST_CASE("read_header: a header through a callback, a read at a time, never past the header") {
  const std::vector<std::byte> bytes =
      test::read_file(fs::path(GGUF_TEST_DATA_DIR) / "model" / "tiny-llama-q4_K_M.gguf");
  const auto full = gguf::parse(bytes);
  REQUIRE(full);
  for (std::size_t first : {std::size_t{8}, std::size_t{100}, std::size_t{4096}, std::size_t{2} << 20}) {
    CAPTURE(first);
    std::uint64_t furthest = 0;
    std::size_t calls = 0;
    gguf::read_header_options opt;
    opt.first_read = first;
    // A source that hands out at most 1000 bytes per call, as a pipe may.
    const auto h = gguf::read_header(
        [&](std::uint64_t offset, std::span<std::byte> out) -> std::size_t {
          ++calls;
          REQUIRE(offset <= bytes.size());
          const std::size_t n =
              std::min<std::size_t>({out.size(), 1000, bytes.size() - static_cast<std::size_t>(offset)});
          std::memcpy(out.data(), bytes.data() + offset, n);
          furthest = std::max<std::uint64_t>(furthest, offset + n);
          return n;
        },
        bytes.size(), opt);
    REQUIRE(h);
    check_same_header(*full, h->info());
    CHECK(h->reads() == calls);
    // It stops at the header: what it read is at most the larger of the first read and twice the header.
    CHECK(furthest <= std::max<std::uint64_t>(first, 2 * full->data_offset()));
  }
  // A source that ends inside the header; one that fails.
  const auto cut = gguf::read_header([&](std::uint64_t offset, std::span<std::byte> out) -> std::size_t {
    const std::size_t end = 500;
    const std::size_t n = offset >= end ? 0 : std::min<std::size_t>(out.size(), end - static_cast<std::size_t>(offset));
    std::memcpy(out.data(), bytes.data() + offset, n);
    return n;
  });
  REQUIRE(!cut);
  CHECK(cut.error().code == errc::truncated);
  CHECK(cut.error().needed > 500);
  const auto failing = gguf::read_header([](std::uint64_t, std::span<std::byte>) -> gguf::result<std::size_t> {
    return gguf::error{errc::io_error, "the network is down"};
  });
  CHECK(failing.error().code == errc::io_error);
}

TEST_CASE("read_header: from a C stream, as gguf-dump - reads standard input") {
  const fs::path p = fs::path(GGUF_TEST_DATA_DIR) / "vocab" / "ggml-vocab-llama-spm.gguf";
  std::FILE* f = std::fopen(p.string().c_str(), "rb");
  REQUIRE(f);
  const auto h = gguf::read_header(f);
  std::fclose(f);
  REQUIRE(h);
  const std::vector<std::byte> bytes = test::read_file(p);
  const auto full = gguf::parse(bytes);
  REQUIRE(full);
  check_same_header(*full, h->info());
}

#ifdef GGUF_SHARED_DIR
TEST_CASE("parse_prefix on the full shared vocabularies, and the requests a header takes from 2 MiB") {
  const std::vector<fs::path> files = gguf_files(fs::path(GGUF_SHARED_DIR) / "data" / "vocab");
  REQUIRE(files.size() == 12);
  for (const fs::path& p : files) {
    CAPTURE(p.string());
    const std::vector<std::byte> bytes = test::read_file(p);
    const auto full = gguf::parse(bytes);
    REQUIRE(full);
    check_sampled_cuts(bytes, 24);
    // From a first request of 2 MiB, doubling: one request for a header up to 2 MiB, two up to 4 MiB.
    const std::size_t requests = requests_from(bytes, std::size_t{2} << 20);
    MESSAGE(p.filename().string() << ": header " << full->data_offset() << " bytes, " << requests << " request(s)");
    CHECK(requests == (full->data_offset() <= (std::size_t{2} << 20) ? 1u : 2u));
  }
}
#endif

}  // namespace test_prefix
