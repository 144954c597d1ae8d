// What a write guarantees besides atomicity (test_save.cpp): the file keeps its identity (mode, owner,
// symlinks), temporaries are recognisable and a later run removes the stale ones, a backup proves whose
// it is, and a shard set is replaced all-or-nothing: from every state a crash can leave, recovery gives
// exactly the old set or exactly the new one. The tools' side (kills, signals, limits) is
// tests/faults/faults.py.
#include <doctest/doctest.h>

#include <gguf/model.hpp>
#include <gguf/save.hpp>
#include <gguf/split.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "gguf_writer.hpp"
#include "io_faults.hpp"
#include "test_files.hpp"

#if !defined(_WIN32)
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

// Each test file keeps its names in a namespace of its own.
namespace test_file_safety {

namespace fs = std::filesystem;
using gguf::errc;

namespace {

fs::path fresh(const std::string& name) { return test::fresh_dir("gguf-file-safety-tests", name); }

// A model of `n` f32 tensors of 256 weights, named and filled after `tag`: two models differ in every
// shard, in their metadata and in their tensor data.
std::vector<std::byte> model_bytes(const std::string& tag, int n) {
  test::file_builder fb;
  fb.kv("general.architecture", "llama").kv("general.name", tag);
  std::uint32_t seed = 2166136261u;
  for (const char c : tag) seed = (seed ^ static_cast<unsigned char>(c)) * 16777619u;
  for (int i = 0; i < n; ++i) {
    fb.tensor(tag + "." + std::to_string(i), gguf::ggml_type::f32, {256});
    std::vector<std::byte> data(1024);
    for (std::byte& b : data) b = static_cast<std::byte>((seed = seed * 1664525u + 1013904223u) >> 24);
    fb.tensors.back().data = data;
  }
  return fb.build();
}

// Every file of a directory by name, with its bytes.
std::map<std::string, std::vector<std::byte>> snapshot(const fs::path& dir) {
  std::map<std::string, std::vector<std::byte>> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) files[e.path().filename().string()] = test::read_file(e.path());
  }
  return files;
}

// Writes `bytes` at `p` and returns the model it holds.
gguf::model open_written(const fs::path& p, const std::vector<std::byte>& bytes) {
  test::write_file(p, bytes);
  auto m = gguf::open_model(p);
  REQUIRE(m);
  return std::move(*m);
}

// The set `prefix` split into shards of `per_shard` tensors from `bytes` (kept at `source`).
std::map<std::string, std::vector<std::byte>> split_into(const fs::path& source, const std::vector<std::byte>& bytes,
                                                         const fs::path& prefix, std::uint32_t per_shard) {
  const gguf::model m = open_written(source, bytes);
  gguf::split_options opt;
  opt.max_tensors = per_shard;
  REQUIRE(gguf::save_split(m, prefix, opt));
  std::map<std::string, std::vector<std::byte>> set;
  for (const auto& [name, content] : snapshot(prefix.parent_path())) {
    if (gguf::parse_shard_name(name)) set[name] = content;
  }
  return set;
}

// The shard files of a directory, and whether anything else of the swap is left (temporaries, moved
// aside shards, a journal).
std::map<std::string, std::vector<std::byte>> shards_in(const fs::path& dir, int& leftovers) {
  std::map<std::string, std::vector<std::byte>> set;
  leftovers = 0;
  for (const auto& [name, content] : snapshot(dir)) {
    if (gguf::parse_shard_name(name)) {
      set[name] = content;
    } else if (name.find(".gguf-tmp-") != std::string::npos || name.find(".gguf-old-") != std::string::npos ||
               name.find(".gguf-split-journal") != std::string::npos) {
      ++leftovers;
    }
  }
  return set;
}

}  // namespace

TEST_CASE("a temporary is named .NAME.gguf-tmp-XXXXXX beside its target, and locked while it is written") {
  const fs::path dir = fresh("names");
  const fs::path target = dir / "model.gguf";
  auto f = gguf::output_file::create_beside(target);
  REQUIRE(f);
  const std::string name = f->path().filename().string();
  CHECK(f->path().parent_path() == dir);
  CHECK(name.rfind(".model.gguf.gguf-tmp-", 0) == 0);
  CHECK(name.size() == std::string(".model.gguf.gguf-tmp-").size() + 6);
  // A live writer's temporary is not stale: a sweep leaves it.
  auto live = gguf::sweep_temporaries(target);
  REQUIRE(live);
  CHECK(live->removed.empty());
  REQUIRE(live->in_use.size() == 1);
  CHECK(live->in_use[0] == f->path());
  CHECK(fs::exists(f->path()));
  f->abandon();
  CHECK(!fs::exists(f->path()));
}

TEST_CASE("a stale temporary (its writer gone) is removed by the next sweep, nothing else is") {
  const fs::path dir = fresh("stale");
  const fs::path target = dir / "model.gguf";
  const std::vector<std::byte> junk(4096, std::byte{7});
  test::write_file(dir / ".model.gguf.gguf-tmp-Ab12Cd", junk);    // a killed writer's
  test::write_file(dir / ".model.gguf.gguf-tmp-toolong1", junk);  // not our pattern
  test::write_file(dir / ".other.gguf.gguf-tmp-Ab12Cd", junk);    // another target's
  test::write_file(dir / "model.gguf", junk);                     // the target itself
  auto r = gguf::sweep_temporaries(target);
  REQUIRE(r);
  REQUIRE(r->removed.size() == 1);
  CHECK(r->removed[0].filename() == ".model.gguf.gguf-tmp-Ab12Cd");
  CHECK(r->in_use.empty());
  CHECK(snapshot(dir).size() == 3);
}

#if !defined(_WIN32)  // Windows cannot delete a file its own process holds open without sharing
TEST_CASE("remove_temporaries (a signal handler's call) removes what is being written, not what was committed") {
  const fs::path dir = fresh("signal");
  auto a = gguf::output_file::create_beside(dir / "a.gguf");
  auto b = gguf::output_file::create_beside(dir / "b.gguf");
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(b->commit(dir / "b.gguf"));
  CHECK(gguf::remove_temporaries() == 1);
  CHECK(!fs::exists(a->path()));
  CHECK(fs::exists(dir / "b.gguf"));
}
#endif

#if !defined(_WIN32)  // symlinks need privileges on Windows
TEST_CASE("a rewrite follows a symlink chain: the file at its end is replaced, the links stay links") {
  const fs::path dir = fresh("links");
  fs::create_directories(dir / "blobs");
  fs::create_directories(dir / "snapshot");
  const fs::path real = dir / "blobs" / "abc123";
  test::write_file(real, model_bytes("old", 2));
  fs::create_symlink("../blobs/abc123", dir / "snapshot" / "link2");  // relative
  fs::create_symlink(dir / "snapshot" / "link2", dir / "link1");      // absolute, to a link
  auto resolved = gguf::resolve_symlinks(dir / "link1");
  REQUIRE(resolved);
  CHECK(gguf::same_file(*resolved, real));
  CHECK(resolved->filename() == "abc123");

  const auto src = gguf::open(dir / "link1");
  REQUIRE(src);
  gguf::writer w = gguf::writer::from(src->info());
  REQUIRE(w.replace("general.name", gguf::value("new")));
  auto staged = gguf::stage(w, dir / "link1");
  REQUIRE(staged);
  CHECK(fs::equivalent(staged->temporary().parent_path(), real.parent_path()));  // beside the real file
  REQUIRE(staged->commit());
  CHECK(fs::is_symlink(dir / "link1"));
  CHECK(fs::is_symlink(dir / "snapshot" / "link2"));
  CHECK(fs::read_symlink(dir / "snapshot" / "link2") == "../blobs/abc123");
  const auto g = gguf::open(real);
  REQUIRE(g);
  CHECK(g->metadata().get<std::string_view>("general.name").value_or("") == "new");
  CHECK(snapshot(dir / "blobs").size() == 1);  // no temporary left
  CHECK(snapshot(dir / "snapshot").size() == 1);
}

TEST_CASE("a chain of links that loops is an error, not a hang") {
  const fs::path dir = fresh("loop");
  fs::create_symlink("b", dir / "a");
  fs::create_symlink("a", dir / "b");
  const auto r = gguf::resolve_symlinks(dir / "a");
  REQUIRE(!r);
  CHECK(r.error().code == errc::io_error);
}

TEST_CASE("a rewrite keeps the file's mode, and its owner and group where permitted") {
  const fs::path dir = fresh("modes");
  for (const mode_t mode : {0600, 0640, 0444, 0755}) {
    CAPTURE(mode);
    const fs::path p = dir / "m.gguf";
    test::write_file(p, model_bytes("old", 1));
    REQUIRE(::chmod(p.c_str(), mode) == 0);
    const bool root = ::geteuid() == 0;
    if (root) REQUIRE(::chown(p.c_str(), 65534, 65534) == 0);  // a foreign owner: root may keep it
    if (!root && (mode & 0200) == 0) continue;                 // a file we may not write is refused (below)
    const auto src = gguf::open(p);
    REQUIRE(src);
    gguf::writer w = gguf::writer::from(src->info());
    REQUIRE(w.replace("general.name", gguf::value("new")));
    REQUIRE(gguf::save(w, p));
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == mode);
    if (root) {
      CHECK(st.st_uid == 65534);
      CHECK(st.st_gid == 65534);
    }
    fs::remove(p);
  }
}

TEST_CASE("a new file gets the default mode: 0666 less the umask") {
  const fs::path dir = fresh("umask");
  const mode_t old = ::umask(027);
  gguf::writer w;
  const auto r = gguf::save(w, dir / "new.gguf");
  ::umask(old);
  REQUIRE(r);
  struct stat st {};
  REQUIRE(::stat((dir / "new.gguf").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
}
#endif

TEST_CASE("nothing replaces a directory, a device or a pipe") {
  const fs::path dir = fresh("not-files");
  fs::create_directories(dir / "sub");
  gguf::writer w;
  CHECK(gguf::save(w, dir / "sub").error().code == errc::io_error);
  CHECK(fs::is_directory(dir / "sub"));
#if !defined(_WIN32)
  CHECK(gguf::save(w, "/dev/null").error().code == errc::io_error);
  CHECK(fs::is_character_file("/dev/null"));
#endif
}

#if !defined(_WIN32)
TEST_CASE("a backup proves whose it is: one of another file, or of a file replaced since, is refused") {
  const fs::path dir = fresh("backups");
  const fs::path a = dir / "a.gguf", b = dir / "b.gguf";
  const std::vector<std::byte> bytes_a = model_bytes("aaa", 3), bytes_b = model_bytes("bbb", 3);
  test::write_file(a, bytes_a);
  test::write_file(b, bytes_b);
  const auto fa = test::parse(bytes_a);
  REQUIRE(fa);

  // A genuine backup of a: an in-place edit of a killed in the middle of its overwrite.
  const auto make_backup = [&] {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      test::injected_io_faults() = {
          static_cast<std::int64_t>(gguf::detail::backup_record::size + fa->data_offset() + fa->data_offset() / 2),
          true};
      const auto src = gguf::open(a);
      gguf::writer w = gguf::writer::from(src->info());
      (void)w.replace("general.name", gguf::value("zzz"));
      (void)gguf::save_in_place(w, a);
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    for (const auto& e : fs::directory_iterator(dir)) {  // the killed child's backup temporary
      if (e.path().filename().string().find(".gguf-tmp-") != std::string::npos) fs::remove(e.path());
    }
    REQUIRE(fs::exists(gguf::in_place_backup_path(a)));
  };

  SUBCASE("beside another file of the same size: refused, nothing written") {
    make_backup();
    fs::rename(gguf::in_place_backup_path(a), gguf::in_place_backup_path(b));
    const auto r = gguf::restore_in_place_backup(b);
    REQUIRE(!r);
    CHECK(r.error().code == errc::size_mismatch);
    CHECK(test::read_file(b) == bytes_b);
    CHECK(fs::exists(gguf::in_place_backup_path(b)));  // left for a person to look at
  }
  SUBCASE("after the file was replaced by another (a quantization): refused") {
    make_backup();
    test::write_file(dir / "new", bytes_b);
    fs::rename(dir / "new", a);
    CHECK(gguf::restore_in_place_backup(a).error().code == errc::size_mismatch);
    CHECK(test::read_file(a) == bytes_b);
  }
  SUBCASE("random bytes under the backup's name: refused") {
    std::vector<std::byte> noise(65536);
    for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<std::byte>((i * 2654435761u) >> 13);
    test::write_file(gguf::in_place_backup_path(a), noise);
    CHECK(gguf::restore_in_place_backup(a).error().code == errc::size_mismatch);
    CHECK(test::read_file(a) == bytes_a);
  }
  SUBCASE("a damaged backup: refused") {
    make_backup();
    std::vector<std::byte> backup = test::read_file(gguf::in_place_backup_path(a));
    backup[backup.size() - 3] ^= std::byte{1};
    test::write_file(gguf::in_place_backup_path(a), backup);
    CHECK(gguf::restore_in_place_backup(a).error().code == errc::size_mismatch);
  }
  SUBCASE("its own file, torn by the kill: restored byte for byte") {
    make_backup();
    CHECK(test::read_file(a) != bytes_a);
    REQUIRE(gguf::restore_in_place_backup(a));
    CHECK(test::read_file(a) == bytes_a);
    CHECK(!fs::exists(gguf::in_place_backup_path(a)));
  }
}
#endif

TEST_CASE("a shard set replaces the old set of its prefix, of any count, and nothing else") {
  const fs::path dir = fresh("split-replace");
  const auto old_set = split_into(dir / "old.src", model_bytes("old", 7), dir / "m", 1);
  CHECK(old_set.size() == 7);
  test::write_file(dir / "m2-00001-of-00001.gguf", model_bytes("other", 1));  // another prefix: kept
  fs::remove(dir / "old.src");
  const auto new_set = split_into(dir / "new.src", model_bytes("new", 6), dir / "m", 2);
  int leftovers = 0;
  const auto now = shards_in(dir, leftovers);
  CHECK(leftovers == 0);
  CHECK(now.size() == 3 + 1);
  CHECK(now.count("m-00001-of-00003.gguf") == 1);
  CHECK(now.count("m2-00001-of-00001.gguf") == 1);
  CHECK(now.count("m-00001-of-00007.gguf") == 0);
}

TEST_CASE("a shard prefix must name files, not a directory") {
  const fs::path dir = fresh("split-prefix");
  const gguf::model m = open_written(dir / "src.gguf", model_bytes("x", 2));
  CHECK(gguf::save_split(m, dir / "").error().code == errc::io_error);
  CHECK(gguf::save_split(m, dir).error().code == errc::io_error);
  CHECK(gguf::save_split(m, dir / "missing" / "m").error().code == errc::io_error);
  CHECK(snapshot(dir).size() == 1);
}

// The swap of step 3, one rename at a time, as a crash can interrupt it: for every prefix of the
// sequence, and with the journal committed or not, recovery gives exactly one set.
TEST_CASE("from every state a crash can leave in a set swap, recovery gives exactly the old set or the new") {
  const fs::path dir = fresh("swap-states");
  const fs::path src = dir / "src";
  fs::create_directories(src);
  // The old set: 4 shards. The new one: 4 shards of other content, so a mix is visible.
  const auto old_set = split_into(src / "old.gguf", model_bytes("old", 4), dir / "m", 1);
  fs::remove(src / "old.gguf");
  fs::create_directories(dir / "new");
  const auto new_set = split_into(src / "new.gguf", model_bytes("new", 4), dir / "new" / "m", 1);
  REQUIRE(old_set.size() == 4);
  REQUIRE(new_set.size() == 4);
  const fs::path journal = gguf::split_journal_path(dir / "m");

  // The renames of a swap, as swap_file_set makes them: the old shards aside (the first first), then the
  // new ones in (the first last).
  const auto stage_state = [&](std::size_t renames_done, bool committed) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file()) fs::remove(e.path());
    }
    for (const auto& [name, bytes] : old_set) test::write_file(dir / name, bytes);
    gguf::swap_journal j;
    std::vector<std::pair<fs::path, fs::path>> steps;
    for (const auto& [name, bytes] : old_set) {
      j.old_files.push_back({name, "." + name + ".gguf-old-Q1w2E3"});
      steps.emplace_back(dir / name, dir / j.old_files.back().aside);
    }
    for (auto it = new_set.rbegin(); it != new_set.rend(); ++it) {
      const std::string temp = "." + it->first + ".gguf-tmp-Z9y8X7";
      test::write_file(dir / temp, it->second);
      j.new_files.push_back({temp, it->first, *gguf::identify(dir / temp)});
      steps.emplace_back(dir / temp, dir / it->first);
    }
    j.committed = committed;
    const std::string text = j.encode();
    test::write_file(journal, std::vector<std::byte>(reinterpret_cast<const std::byte*>(text.data()),
                                                     reinterpret_cast<const std::byte*>(text.data()) + text.size()));
    for (std::size_t k = 0; k < renames_done; ++k) fs::rename(steps[k].first, steps[k].second);
    return steps.size();
  };

  const std::size_t n_steps = stage_state(0, false);
  for (std::size_t done = 0; done <= n_steps; ++done) {
    for (const bool committed : {false, true}) {
      if (committed && done != n_steps) continue;  // committed only once every rename is done
      CAPTURE(done);
      CAPTURE(committed);
      stage_state(done, committed);
      // While the journal is there, no reader takes the set for a model.
      CHECK(gguf::open_model(dir / "m-00002-of-00004.gguf").error().code == errc::pending_restore);
      CHECK(gguf::open_model(dir / "m").error().code == errc::pending_restore);
      // Nor does a writer replace one of its shards.
      gguf::writer w;
      CHECK(gguf::save(w, dir / "m-00003-of-00004.gguf").error().code == errc::pending_restore);

      const auto r = gguf::recover_split(dir / "m-00003-of-00004.gguf");
      REQUIRE(r);
      CHECK(*r == (committed ? gguf::split_recovery::completed : gguf::split_recovery::rolled_back));
      int leftovers = 0;
      const auto now = shards_in(dir, leftovers);
      CHECK(leftovers == 0);
      CHECK(now == (committed ? new_set : old_set));
      CHECK(gguf::open_model(dir / "m"));
      CHECK(*gguf::recover_split(dir / "m") == gguf::split_recovery::nothing);
    }
  }
}

TEST_CASE("a roll-back interrupted itself is finished by the next recovery") {
  const fs::path dir = fresh("swap-twice");
  const auto old_set = split_into(dir / "old.src", model_bytes("old", 3), dir / "m", 1);
  fs::remove(dir / "old.src");
  // The state a roll-back leaves when killed half-way: one new shard taken back out, one old shard back.
  gguf::swap_journal j;
  for (const auto& [name, bytes] : old_set) {
    j.old_files.push_back({name, "." + name + ".gguf-old-AAAAAA"});
    fs::rename(dir / name, dir / j.old_files.back().aside);
  }
  const std::vector<std::string> names = {"m-00003-of-00003.gguf", "m-00002-of-00003.gguf", "m-00001-of-00003.gguf"};
  for (const std::string& name : names) {
    const std::string temp = "." + name + ".gguf-tmp-BBBBBB";
    test::write_file(dir / name, model_bytes("new" + name, 1));
    j.new_files.push_back({temp, name, *gguf::identify(dir / name)});
  }
  fs::rename(dir / names[0], dir / j.new_files[0].temporary);         // taken back out
  fs::rename(dir / j.old_files[2].aside, dir / j.old_files[2].name);  // its old shard back
  const std::string text = j.encode();
  test::write_file(gguf::split_journal_path(dir / "m"),
                   std::vector<std::byte>(reinterpret_cast<const std::byte*>(text.data()),
                                          reinterpret_cast<const std::byte*>(text.data()) + text.size()));
  REQUIRE(*gguf::recover_split(dir / "m") == gguf::split_recovery::rolled_back);
  int leftovers = 0;
  CHECK(shards_in(dir, leftovers) == old_set);
  CHECK(leftovers == 0);
}

TEST_CASE("a journal that is not one is refused, and nothing is touched") {
  const fs::path dir = fresh("swap-bad-journal");
  const auto old_set = split_into(dir / "old.src", model_bytes("old", 2), dir / "m", 1);
  for (const std::string text : {"", "gguf set-swap journal 1\nstate\tswapping\n", "garbage\nend\n",
                                 "gguf set-swap journal 1\nstate\tswapping\nnew\ta\tb\t1\nend\n"}) {
    test::write_file(gguf::split_journal_path(dir / "m"),
                     std::vector<std::byte>(reinterpret_cast<const std::byte*>(text.data()),
                                            reinterpret_cast<const std::byte*>(text.data()) + text.size()));
    CHECK(gguf::recover_split(dir / "m").error().code == errc::size_mismatch);
  }
  fs::remove(gguf::split_journal_path(dir / "m"));
  int leftovers = 0;
  const auto now = shards_in(dir, leftovers);
  CHECK(now == old_set);
}

TEST_CASE("the journal's text reads back as written") {
  gguf::swap_journal j;
  j.committed = true;
  j.new_files.push_back({".a.gguf-tmp-x", "a", {7, 18446744073709551615ull}});
  j.old_files.push_back({"b c", ".b c.gguf-old-y"});
  const auto back = gguf::swap_journal::decode(j.encode());
  REQUIRE(back);
  CHECK(back->committed);
  REQUIRE(back->new_files.size() == 1);
  CHECK(back->new_files[0].target == "a");
  CHECK(back->new_files[0].id == gguf::file_id{7, 18446744073709551615ull});
  REQUIRE(back->old_files.size() == 1);
  CHECK(back->old_files[0].name == "b c");
}

}  // namespace test_file_safety
