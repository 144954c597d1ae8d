// Saving files: at every instant the path holds the old file or the complete new one. Faults are
// injected for real: a child process writes under a file-size limit (RLIMIT_FSIZE), so a write fails
// after N bytes (EFBIG, as a full disk fails with ENOSPC) or, with SIGXFSZ at its default, the process
// is killed right there (a crash mid-write), for many N.
#include <doctest/doctest.h>

#include <gguf/open.hpp>
#include <gguf/save.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <system_error>
#include <optional>
#include <vector>

#include "gguf_writer.hpp"
#include "io_faults.hpp"
#include "test_files.hpp"

#if !defined(_WIN32)
#include <csignal>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

// Each test file keeps its names in a namespace of its own.
namespace test_save {

namespace fs = std::filesystem;
using gguf::errc;

namespace {

fs::path scratch(const std::string& name) { return test::scratch("gguf-save-tests", name); }

// A model with room in its padding: general.name "old", tensors of 4 KiB each.
std::vector<std::byte> model_bytes() {
  test::file_builder fb;
  fb.kv("general.architecture", "llama").kv("general.name", "old");
  for (int i = 0; i < 4; ++i) fb.tensor("blk." + std::to_string(i) + ".w", gguf::ggml_type::f32, {1024});
  return fb.build();
}

// general.name of the file at p, or "" when it does not parse.
std::string name_of(const fs::path& p) {
  const auto g = gguf::open(p);
  if (!g) return "";
  return std::string(g->metadata().get<std::string_view>("general.name").value_or(""));
}

// Temporary files a save left in the directory of p.
int leftovers(const fs::path& p) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(p.parent_path())) {
    const std::string f = e.path().filename().string();
    if (f.rfind("." + p.filename().string() + ".", 0) == 0) ++n;
  }
  return n;
}

// Sets general.name of `path` to `name` and saves it the way `in_place` says; the result's error or 0.
int edit_name(const fs::path& path, const std::string& name, bool in_place) {
  auto g = gguf::open(path);
  if (!g) return 100;
  gguf::writer w = gguf::writer::from(g->info());
  if (!w.replace("general.name", gguf::value(name))) return 101;
  const auto r = in_place ? gguf::save_in_place(w, path) : gguf::save(w, path);
  return r ? 0 : static_cast<int>(r.error().code);
}

#if !defined(_WIN32)
// Runs `f` in a child whose writes fail past `limit` bytes of any file (EFBIG), or which is killed there
// (`crash`). Returns true when the child finished (whatever f returned), false when it was killed.
bool in_child(std::uint64_t limit, bool crash, const std::function<int()>& f) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (!crash) std::signal(SIGXFSZ, SIG_IGN);
    const rlimit rl{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    ::_exit(f());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status);
}
#endif

}  // namespace

TEST_CASE("save writes a new file and renames it over the target, its own source included") {
  const fs::path p = scratch("atomic.gguf");
  test::write_file(p, model_bytes());
#if defined(_WIN32)
  // Windows refuses to rename over a mapped file: `save` says so and leaves the file as it was; `stage`,
  // then closing the source, then `commit` is the way (what gguf-edit does everywhere).
  CHECK(edit_name(p, "new", false) == static_cast<int>(errc::io_error));
  CHECK(name_of(p) == "old");
  std::optional<gguf::staged_file> staged;
  {
    const auto source = gguf::open(p);
    REQUIRE(source);
    gguf::writer w = gguf::writer::from(source->info());
    REQUIRE(w.replace("general.name", gguf::value("new")));
    auto s = gguf::stage(w, p);
    REQUIRE(s);
    staged.emplace(std::move(*s));
  }  // the mapping goes; the staged file holds every byte
  CHECK(staged->commit());
#else
  CHECK(edit_name(p, "new", false) == 0);
#endif
  CHECK(name_of(p) == "new");
  CHECK(leftovers(p) == 0);
  // The tensors came through unchanged.
  const auto g = gguf::open(p);
  REQUIRE(g);
  CHECK(g->tensors().size() == 4);
  const test::bytes original = model_bytes();
  const auto before = test::parse(original);
  REQUIRE(before);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(std::equal(g->tensors()[i].data.begin(), g->tensors()[i].data.end(), before->tensors()[i].data.begin()));
  }
  fs::remove(p);
}

TEST_CASE("output_committing holds while an output is put in place, output_committed once one is") {
  // A signal handler lets the program go on while a commit is under way; a long-lived program that
  // saves again later must see it false between commits.
  const fs::path p = scratch("committing.gguf");
  test::write_file(p, model_bytes());
  CHECK_FALSE(gguf::output_committing());
  const auto g = gguf::open(p);
  REQUIRE(g);
  gguf::writer w = gguf::writer::from(g->info());
  REQUIRE(w.replace("general.name", gguf::value("new")));
  const fs::path q = scratch("committing-out.gguf");
  auto staged = gguf::stage(w, q);
  REQUIRE(staged);
  CHECK_FALSE(gguf::output_committing());  // written, not yet being put in place
  REQUIRE(staged->commit());
  CHECK_FALSE(gguf::output_committing());
  CHECK(gguf::output_committed());
  CHECK(name_of(q) == "new");
  fs::remove(p);
  fs::remove(q);
}

TEST_CASE("an error leaves the target untouched and no temporary behind") {
  const fs::path p = scratch("untouched.gguf");
  test::write_file(p, model_bytes());
  const auto g = gguf::open(p);
  REQUIRE(g);
  gguf::writer w = gguf::writer::from(g->info());
  REQUIRE(w.add_tensor("late", gguf::ggml_type::f32, std::array<std::uint64_t, 1>{256},
                       [](std::uint64_t, std::span<std::byte>) -> gguf::result<void> {
                         return {errc::io_error, "the producer failed"};
                       }));
  CHECK(!gguf::save(w, p));
  CHECK(name_of(p) == "old");
  CHECK(test::read_file(p) == model_bytes());
  CHECK(leftovers(p) == 0);
  // A directory that cannot hold a new file: nothing is written, the error says why.
  const gguf::error e = gguf::save(w, "/nonexistent-dir/x.gguf").error();
  CHECK(e.code == errc::io_error);
  CHECK(e.os_code != 0);
  fs::remove(p);
}

TEST_CASE("a write its caller stops ends with errc::cancelled, the target untouched and no temporary behind") {
  const fs::path p = scratch("stopped.gguf");
  test::write_file(p, model_bytes());
  const auto g = gguf::open(p);
  REQUIRE(g);
  gguf::writer w = gguf::writer::from(g->info());
  REQUIRE(w.replace("general.name", gguf::value("new")));
  for (int asked_before_stop : {0, 1, 3}) {  // after the header, after the first chunk, later
    gguf::save_options opt;
    opt.chunk_bytes = 64;
    int asked = 0;
    opt.stop = [&] { return asked++ == asked_before_stop; };
    const auto r = gguf::save(w, p, opt);
    REQUIRE(!r);
    CHECK(r.error().code == errc::cancelled);
    CHECK(asked == asked_before_stop + 1);
    CHECK(name_of(p) == "old");
    CHECK(leftovers(p) == 0);
  }
#if !defined(_WIN32)  // Windows refuses to rename over the mapped source (see above)
  gguf::save_options never;
  never.stop = [] { return false; };
  CHECK(gguf::save(w, p, never));
  CHECK(name_of(p) == "new");
#endif
  std::error_code ec;
  fs::remove(p, ec);
}

TEST_CASE("in place: only the header is rewritten, the tensors do not move, the backup goes") {
  const fs::path p = scratch("in-place.gguf");
  test::write_file(p, model_bytes());
  const std::vector<std::byte> before = test::read_file(p);
  CHECK(edit_name(p, "newer", true) == 0);
  const std::vector<std::byte> after = test::read_file(p);
  REQUIRE(after.size() == before.size());
  const auto f = test::parse(before);
  REQUIRE(f);
  CHECK(std::equal(after.begin() + static_cast<std::ptrdiff_t>(f->data_offset()), after.end(),
                   before.begin() + static_cast<std::ptrdiff_t>(f->data_offset())));
  CHECK(name_of(p) == "newer");
  CHECK(!fs::exists(gguf::in_place_backup_path(p)));
  // Too long for the padding: refused, with the way out, and nothing changed.
  const int too_long = edit_name(p, std::string(200, 'x'), true);
  CHECK(too_long == static_cast<int>(errc::out_of_range));
  CHECK(test::read_file(p) == after);
  fs::remove(p);
}

#if !defined(_WIN32)
TEST_CASE("a backup left by an interrupted in-place edit blocks every write of the file, and restores it") {
  const fs::path p = scratch("backup.gguf");
  const std::vector<std::byte> original = model_bytes();
  test::write_file(p, original);
  const auto f = test::parse(original);
  REQUIRE(f);
  // Killed half-way through the overwrite: the backup (its record and the old header) is flushed, the
  // header half overwritten.
  const auto budget =
      static_cast<std::int64_t>(gguf::detail::backup_record::size + f->data_offset() + f->data_offset() / 2);
  in_child(~std::uint64_t{0} >> 1, false, [&] {
    test::injected_io_faults() = {budget, true};
    return edit_name(p, "newer", true);
  });
  REQUIRE(fs::exists(gguf::in_place_backup_path(p)));
  CHECK(test::read_file(p) != original);
  // Neither another in-place edit nor a new file may replace it while the backup waits.
  gguf::writer w = gguf::writer::from(*f);
  REQUIRE(w.replace("general.name", gguf::value("x")));
  CHECK(gguf::save_in_place(w, p).error().code == errc::pending_restore);
  CHECK(gguf::save(w, p).error().code == errc::pending_restore);
  REQUIRE(gguf::restore_in_place_backup(p));
  CHECK(test::read_file(p) == original);
  CHECK(!fs::exists(gguf::in_place_backup_path(p)));
  CHECK(gguf::restore_in_place_backup(p).error().code == errc::not_found);
  for (const auto& e : fs::directory_iterator(p.parent_path())) {  // the killed child's backup temporary
    if (e.path().filename().string().rfind(".backup.gguf", 0) == 0) fs::remove(e.path());
  }
  fs::remove(p);
}
#endif

TEST_CASE("in place, a write failing after N bytes, for every N: the old file, or the new one") {
  const fs::path p = scratch("in-place-errors.gguf");
  const std::vector<std::byte> original = model_bytes();
  const auto parsed = test::parse(original);
  REQUIRE(parsed);
  int failed = 0;
  // The backup (header bytes), then the header over the old one: every byte of both.
  const auto last = static_cast<std::int64_t>(gguf::detail::backup_record::size + 2 * parsed->data_offset() + 4);
  for (std::int64_t budget = 0; budget <= last; ++budget) {
    test::write_file(p, original);
    test::injected_io_faults() = {budget, false};
    const int r = edit_name(p, "newer", true);
    test::injected_io_faults() = {};
    CAPTURE(budget);
    failed += r != 0;
    // An error writes the old header back at once: the file is the old one, or the edit went through.
    CHECK((r == 0 ? name_of(p) == "newer" : test::read_file(p) == original));
    CHECK(!fs::exists(gguf::in_place_backup_path(p)));
    CHECK(leftovers(p) == 0);
  }
  CHECK(failed > static_cast<int>(parsed->data_offset()));  // failures in both the backup and the overwrite
  fs::remove(p);
}

#if !defined(_WIN32)
TEST_CASE("a write that fails after N bytes, for every N: the path holds the old or the new file") {
  const fs::path p = scratch("faults.gguf");
  const std::vector<std::byte> original = model_bytes();
  const std::uint64_t size = original.size();
  int failed = 0, succeeded = 0;
  for (std::uint64_t limit = 0; limit <= size + 64; limit += 97) {
    test::write_file(p, original);
    REQUIRE(in_child(limit, false, [&] { return edit_name(p, "new", false); }));
    const std::string name = name_of(p);
    CAPTURE(limit);
    CHECK((name == "old" || name == "new"));
    (name == "new" ? succeeded : failed)++;
    CHECK(leftovers(p) == 0);  // an error removes its temporary
  }
  CHECK(failed > 0);
  CHECK(succeeded > 0);
  fs::remove(p);
}

TEST_CASE("a crash after N bytes, for every N: the path holds the old or the new file") {
  const fs::path p = scratch("crashes.gguf");
  const std::vector<std::byte> original = model_bytes();
  int crashed = 0;
  for (std::uint64_t limit = 0; limit <= original.size() + 64; limit += 89) {
    test::write_file(p, original);
    crashed += in_child(limit, true, [&] { return edit_name(p, "new", false); }) ? 0 : 1;
    const std::string name = name_of(p);
    CAPTURE(limit);
    CHECK((name == "old" || name == "new"));
    for (const auto& e : fs::directory_iterator(p.parent_path())) {  // a crash may leave a temporary
      if (e.path().filename().string().rfind(".crashes.gguf.", 0) == 0) fs::remove(e.path());
    }
  }
  CHECK(crashed > 0);
  fs::remove(p);
}

TEST_CASE("in place, a crash after N bytes, for every N: the old or new file, or a backup that restores it") {
  const fs::path p = scratch("in-place-crashes.gguf");
  const fs::path backup = gguf::in_place_backup_path(p);
  const std::vector<std::byte> original = model_bytes();
  const auto parsed = test::parse(original);
  REQUIRE(parsed);
  int restored = 0;
  const auto last = static_cast<std::int64_t>(gguf::detail::backup_record::size + 2 * parsed->data_offset() + 4);
  for (std::int64_t budget = 0; budget <= last; ++budget) {
    test::write_file(p, original);
    in_child(~std::uint64_t{0} >> 1, false, [&] {
      test::injected_io_faults() = {budget, true};  // killed at byte `budget`
      return edit_name(p, "newer", true);
    });
    CAPTURE(budget);
    if (fs::exists(backup)) {  // killed after the backup was flushed: what restore gives back
      REQUIRE(gguf::restore_in_place_backup(p));
      CHECK(test::read_file(p) == original);
      ++restored;
    } else {
      const std::string name = name_of(p);
      CHECK((name == "old" || name == "newer"));
    }
    for (const auto& e : fs::directory_iterator(p.parent_path())) {  // a temporary of the backup may remain
      if (e.path().filename().string().rfind(".in-place-crashes.gguf", 0) == 0) fs::remove(e.path());
    }
  }
  CHECK(restored >= static_cast<int>(parsed->data_offset()));  // a kill at every byte of the overwrite
  fs::remove(p);
}
#endif

TEST_CASE("save never drops the pages of tensor data in the caller's own memory (only a mapped file's)") {
  // MADV_DONTNEED on heap memory zeroes it: save may release only pages of files it maps itself.
  std::vector<float> weights(1 << 20);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i % 977) + 0.5f;
  const std::vector<float> copy = weights;
  gguf::writer w;
  const std::uint64_t ne[] = {1024, 1024};
  REQUIRE(w.add_tensor("w", gguf::ggml_type::f32, ne, std::as_bytes(std::span(weights))));
  const fs::path path = fs::temp_directory_path() / "gguf-test-save-heap.gguf";
  REQUIRE(gguf::save(w, path));
  CHECK(weights == copy);
  {  // closed before the file goes (Windows cannot delete a mapped file)
    auto back = gguf::open(path);
    REQUIRE(back);
    CHECK(std::memcmp(back->find_tensor("w")->data.data(), copy.data(), copy.size() * sizeof(float)) == 0);
  }
  std::error_code ec;
  fs::remove(path, ec);
}

}  // namespace test_save
