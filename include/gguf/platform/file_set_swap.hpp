#ifndef GGUF_PLATFORM_FILE_SET_SWAP_HPP
#define GGUF_PLATFORM_FILE_SET_SWAP_HPP

#include "gguf/version.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "gguf/platform/file_identity.hpp"
#include "gguf/platform/output_file.hpp"
#include "gguf/platform/paths.hpp"
#include "gguf/result.hpp"

/**
 * @file
 * Replacing a set of files in one directory all-or-nothing, with a journal (as SQLite's rollback journal
 * and git's lock files do it). A rename replaces one file atomically; a set of files (a model's shards)
 * needs more:
 *
 * 1. The new files are written as temporaries beside their targets and flushed (the caller).
 * 2. The journal, listing every new file (temporary name, target name, file identity) and every old one
 *    (its name and the name it is moved aside to), is written and flushed: from now on the directory
 *    can always be brought back to exactly one set.
 * 3. The old files are moved aside, the first shard first; the new ones are renamed into place, the first
 *    shard last. In between, the set has no first shard: a reader (llama.cpp included) fails to open it
 *    rather than load a mix, and this library's readers name the journal.
 * 4. The journal is marked committed (rewritten atomically), then the old files and the journal go.
 *
 * After a failure in 3 the swap is rolled back at once; after a crash anywhere, `recover` rolls back
 * (journal not committed: the old set) or finishes (committed: the new set). Both only rename and
 * remove, decide each step by what is on disk, and can be interrupted and run again.
 */

GGUF_BEGIN_NAMESPACE

/** The journal of a set swap: what is being replaced by what, in one directory (names, not paths). */
struct swap_journal {
  /// A new file: written as `temporary`, to be renamed to `target`; `id` tells it from an old file.
  struct incoming {
    std::string temporary;  ///< its temporary name
    std::string target;     ///< its name in the set
    file_id id;             ///< which file it is (a rename keeps it)
  };
  /// An old file: `name`, moved aside to `aside` during the swap.
  struct outgoing {
    std::string name;   ///< its name in the old set
    std::string aside;  ///< where it waits until the swap is committed or rolled back
  };
  bool committed = false;           ///< every new file is in place: recovery finishes, never rolls back
  std::vector<incoming> new_files;  ///< in the order they are renamed in (the first shard last)
  std::vector<outgoing> old_files;  ///< in the order they are moved aside (the first shard first)

  /** The journal as text: one line each, fields separated by tabs, and an `end` line. */
  std::string encode() const {
    std::string s = "gguf set-swap journal 1\n";
    s += committed ? "state\tcommitted\n" : "state\tswapping\n";
    for (const incoming& f : new_files) {
      s += "new\t" + f.temporary + "\t" + f.target + "\t" + std::to_string(f.id.device) + "\t" +
           std::to_string(f.id.inode) + "\n";
    }
    for (const outgoing& f : old_files) s += "old\t" + f.name + "\t" + f.aside + "\n";
    s += "end\n";
    return s;
  }
  /** Reads `encode`'s text; nothing for anything else (a damaged or foreign file). */
  static std::optional<swap_journal> decode(std::string_view text) {
    swap_journal j;
    std::vector<std::string_view> lines;
    while (!text.empty()) {
      const std::size_t nl = text.find('\n');
      if (nl == std::string_view::npos) return std::nullopt;  // every line ends with a newline
      lines.push_back(text.substr(0, nl));
      text.remove_prefix(nl + 1);
    }
    if (lines.size() < 3 || lines.front() != "gguf set-swap journal 1" || lines.back() != "end") return std::nullopt;
    if (lines[1] != "state\tcommitted" && lines[1] != "state\tswapping") return std::nullopt;
    j.committed = lines[1] == "state\tcommitted";
    for (std::size_t i = 2; i + 1 < lines.size(); ++i) {
      std::vector<std::string_view> f;
      std::string_view line = lines[i];
      for (std::size_t tab; (tab = line.find('\t')) != std::string_view::npos; line.remove_prefix(tab + 1)) {
        f.push_back(line.substr(0, tab));
      }
      f.push_back(line);
      for (std::size_t k = 1; k < f.size(); ++k) {
        if (f[k].empty()) return std::nullopt;
      }
      if (f[0] == "new" && f.size() == 5) {
        const auto dev = number(f[3]), ino = number(f[4]);
        if (!dev || !ino) return std::nullopt;
        j.new_files.push_back({std::string(f[1]), std::string(f[2]), {*dev, *ino}});
      } else if (f[0] == "old" && f.size() == 3) {
        j.old_files.push_back({std::string(f[1]), std::string(f[2])});
      } else {
        return std::nullopt;
      }
    }
    return j;
  }

 private:
  static std::optional<std::uint64_t> number(std::string_view s) {
    if (s.empty() || s.size() > 20) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) return std::nullopt;
      v = v * 10 + d;
    }
    return v;
  }
};

/** What `recover_set_swap` did. */
enum class swap_recovery : std::uint8_t {
  rolled_back,  ///< the swap had not committed: the old set is back
  completed,    ///< the swap had committed: the new set stays, the old files are gone
};

namespace detail {

inline bool exists_no_follow(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(p, ec));
}

// A rename that reports the file it failed on.
inline result<void> rename_file(const std::filesystem::path& from, const std::filesystem::path& to, const char* what) {
  std::error_code ec;
  std::filesystem::rename(from, to, ec);
  if (ec) return error{errc::io_error, what}.os(ec.value()).about_file(path_utf8(from.filename()));
  return {};
}

// Writes the journal atomically (a temporary, flushed, renamed, the directory flushed).
inline result<void> write_journal(const std::filesystem::path& path, const swap_journal& j) {
  auto f = output_file::create_beside(path);
  if (!f) return f.error();
  const std::string text = j.encode();
  GGUF_TRY(f->write(std::as_bytes(std::span<const char>(text.data(), text.size()))));
  return f->commit(path);
}

// The old set moved back and the new files removed. Each step checks what is on disk, so an
// interrupted roll-back can run again.
inline result<void> roll_back(const std::filesystem::path& dir, const swap_journal& j,
                              const std::filesystem::path& journal) {
  for (const swap_journal::incoming& f : j.new_files) {
    const std::filesystem::path temp = dir / utf8_path(f.temporary), target = dir / utf8_path(f.target);
    if (exists_no_follow(temp)) continue;  // never renamed in
    const auto id = identify(target);
    if (id && *id == f.id) GGUF_TRY(rename_file(target, temp, "cannot take a new file back out of the set"));
  }
  for (const swap_journal::outgoing& f : j.old_files) {
    const std::filesystem::path aside = dir / utf8_path(f.aside), name = dir / utf8_path(f.name);
    if (exists_no_follow(aside)) GGUF_TRY(rename_file(aside, name, "cannot move an old file back"));
  }
  std::error_code ec;
  for (const swap_journal::incoming& f : j.new_files) std::filesystem::remove(dir / utf8_path(f.temporary), ec);
  output_file::sync_directory(journal);
  std::filesystem::remove(journal, ec);
  output_file::sync_directory(journal);
  return {};
}

// A committed swap's end: the old files and the journal go.
inline void finish(const std::filesystem::path& dir, const swap_journal& j, const std::filesystem::path& journal) {
  std::error_code ec;
  for (const swap_journal::outgoing& f : j.old_files) std::filesystem::remove(dir / utf8_path(f.aside), ec);
  for (const swap_journal::incoming& f : j.new_files) std::filesystem::remove(dir / utf8_path(f.temporary), ec);
  output_file::sync_directory(journal);
  std::filesystem::remove(journal, ec);
  output_file::sync_directory(journal);
}

}  // namespace detail

/**
 * Replaces the files `old_names` in `dir` by the new files `incoming` (written and flushed beside their
 * targets by `output_file::create_beside`, in the order they are to be renamed in), all-or-nothing,
 * through the journal at `journal` (in `dir`). See the file's comment for the steps.
 * @param dir       the directory of every file
 * @param journal   where the journal is written (it must not exist)
 * @param incoming  each new file and its target name; released to the journal
 * @param old_names the files of the old set, in the order they are to be moved aside
 * @return nothing; on an error the old set is back (the error names the file that failed) or, when even
 *         the roll-back failed, the journal stays for `recover_set_swap` (`pending_restore`)
 */
inline result<void> swap_file_set(const std::filesystem::path& dir, const std::filesystem::path& journal,
                                  std::vector<std::pair<output_file, std::string>>& incoming,
                                  std::span<const std::string> old_names) {
  swap_journal j;
  for (auto& [file, target] : incoming) {
    auto id = identify(file.path());
    if (!id) return id.error();
    j.new_files.push_back({detail::path_utf8(file.path().filename()), target, *id});
  }
  for (const std::string& name : old_names) {
    j.old_files.push_back({name, "." + name + ".gguf-old-" + detail::random_suffix()});
  }
  // From here on the output is being put in place: a signal handler lets it finish (`output_committing`).
  detail::temporary_registry::commit_scope committing;
  GGUF_TRY(detail::write_journal(journal, j));
  for (auto& f : incoming) f.first.release();  // the journal owns the temporaries now

  result<void> r;
  for (const swap_journal::outgoing& f : j.old_files) {
    r = detail::rename_file(dir / detail::utf8_path(f.name), dir / detail::utf8_path(f.aside),
                            "cannot move an old file aside");
    if (!r) break;
  }
  for (std::size_t i = 0; r && i < j.new_files.size(); ++i) {
    r = detail::rename_file(dir / detail::utf8_path(j.new_files[i].temporary),
                            dir / detail::utf8_path(j.new_files[i].target), "cannot rename a new file into place");
  }
  if (!r) {
    if (!detail::roll_back(dir, j, journal)) {
      return error{errc::pending_restore, "the swap failed and could not be rolled back: restore it"}.about_file(
          detail::path_utf8(journal.filename()));
    }
    return r;
  }
  output_file::sync_directory(journal);
  j.committed = true;
  if (auto w = detail::write_journal(journal, j); !w) {
    // Every new file is in place; the journal still says "swapping", so a recovery would roll back:
    // do it now, while the error can be reported.
    (void)detail::roll_back(dir, j, journal);
    return w;
  }
  detail::temporary_registry::commit_scope::done();
  detail::finish(dir, j, journal);
  return {};
}

/**
 * Brings a directory whose set swap was interrupted (a crash, a kill) back to exactly one set: the old
 * one when the journal had not committed, the new one when it had.
 * @param journal the journal's path
 * @return what it did; `not_found` when there is no journal; `size_mismatch` for a journal it cannot read
 *         (then nothing is touched); `io_error` when a rename fails (run it again)
 */
inline result<swap_recovery> recover_set_swap(const std::filesystem::path& journal) {
  const std::string name = detail::path_utf8(journal.filename());
  if (!detail::exists_no_follow(journal))
    return error{errc::not_found, "no interrupted swap to recover"}.about_file(name);
  auto m = mapped_file::open(journal);
  if (!m) return m.error();
  const std::span<const std::byte> b = m->bytes();
  const auto j = swap_journal::decode(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  if (!j) return error{errc::size_mismatch, "not a journal this library wrote, or a damaged one"}.about_file(name);
  *m = {};
  const std::filesystem::path dir = journal.parent_path().empty() ? std::filesystem::path(".") : journal.parent_path();
  if (j->committed) {
    detail::finish(dir, *j, journal);
    return swap_recovery::completed;
  }
  GGUF_TRY(detail::roll_back(dir, *j, journal));
  return swap_recovery::rolled_back;
}

GGUF_END_NAMESPACE

#endif  // GGUF_PLATFORM_FILE_SET_SWAP_HPP
