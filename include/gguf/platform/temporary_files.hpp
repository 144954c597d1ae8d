#ifndef GGUF_PLATFORM_TEMPORARY_FILES_HPP
#define GGUF_PLATFORM_TEMPORARY_FILES_HPP

#include "gguf/version.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gguf/result.hpp"

#include "gguf/platform/os.hpp"

#if !defined(_WIN32)
#include <sys/file.h>
#endif

/**
 * @file
 * The temporary files a save writes beside its target, by name: `.NAME.gguf-tmp-XXXXXX` for a target
 * named NAME, so that a person and a later run can tell them apart from anything else. While its writer
 * lives a temporary is locked (POSIX: `flock`; Windows: opened without sharing), which is how a later run
 * proves one stale: it can take the lock only when the writer is gone (killed, or the machine crashed).
 *
 * The temporaries this process is writing are also listed where a signal handler can reach them:
 * `remove_temporaries` is async-signal-safe, for a program that ends on SIGINT or SIGTERM and must not
 * leave a full-size hidden file behind (the gguf tools call it from their handlers).
 */

GGUF_BEGIN_NAMESPACE

namespace detail {

/// What follows ".NAME" in a temporary's name, before its random part.
inline constexpr std::string_view temporary_marker = ".gguf-tmp-";

/**
 * The temporaries being written, in fixed slots a signal handler can read without locks or allocation.
 * A path too long for a slot (or a slot table full) is not listed: the file is then removed by its
 * writer's destructor only.
 */
class temporary_registry {
 public:
  static constexpr std::size_t slots = 32;
  static constexpr std::size_t max_path = 1024;
  using char_type = std::filesystem::path::value_type;

  /// The registry of the program.
  static temporary_registry& get() noexcept {
    static temporary_registry r;
    return r;
  }
  /// Lists `p`; returns its slot, or -1 when it could not be listed.
  int add(const std::filesystem::path& p) noexcept {
    const auto& s = p.native();
    if (s.size() >= max_path) return -1;
    for (std::size_t i = 0; i < slots; ++i) {
      int expected = free;
      if (!state_[i].compare_exchange_strong(expected, filling)) continue;
      for (std::size_t k = 0; k < s.size(); ++k) path_[i][k] = s[k];
      path_[i][s.size()] = 0;
      state_[i].store(listed);
      return static_cast<int>(i);
    }
    return -1;
  }
  /// Forgets slot `i` (from `add`; -1 is ignored).
  void remove(int i) noexcept {
    if (i >= 0) state_[static_cast<std::size_t>(i)].store(free);
  }
  /// Removes every listed file (async-signal-safe); returns how many were removed.
  std::size_t remove_all() noexcept {
    std::size_t n = 0;
    for (std::size_t i = 0; i < slots; ++i) {
      int expected = listed;
      if (!state_[i].compare_exchange_strong(expected, filling)) continue;
#if defined(_WIN32)
      if (DeleteFileW(path_[i])) ++n;
#else
      if (::unlink(path_[i]) == 0) ++n;
#endif
      state_[i].store(free);
    }
    return n;
  }
  /// How many finished outputs this process is putting in place now (see `output_committing`).
  std::atomic<int> committing{0};
  /// Set once this process has put an output in place (see `output_committed`).
  std::atomic<bool> committed{false};

  /// Counts a commit in progress while it lives; `done()` records that it succeeded.
  class commit_scope {
   public:
    commit_scope() noexcept { get().committing.fetch_add(1); }
    ~commit_scope() { get().committing.fetch_sub(1); }
    commit_scope(const commit_scope&) = delete;
    commit_scope& operator=(const commit_scope&) = delete;
    commit_scope(commit_scope&&) = delete;
    commit_scope& operator=(commit_scope&&) = delete;
    /// Records that the output is in place.
    static void done() noexcept { get().committed.store(true); }
  };

 private:
  static constexpr int free = 0, filling = 1, listed = 2;
  std::atomic<int> state_[slots] = {};
  char_type path_[slots][max_path] = {};
};

/// A random part for a temporary's name: 6 characters of [0-9A-Za-z] (O_EXCL settles any collision).
inline std::string random_suffix() {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t x = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#if defined(_WIN32)
  x ^= static_cast<std::uint64_t>(GetCurrentProcessId()) << 32;
#else
  x ^= static_cast<std::uint64_t>(::getpid()) << 32;
#endif
  x += 0x9E3779B97F4A7C15ull * (counter.fetch_add(1) + 1);
  // splitmix64's finalizer
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  constexpr std::string_view digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string s(6, '0');
  for (char& c : s) {
    c = digits[x % digits.size()];
    x /= digits.size();
  }
  return s;
}

}  // namespace detail

/**
 * The name prefix of `target`'s temporaries: `.NAME.gguf-tmp-` in `target`'s directory (a random part
 * follows it).
 */
inline std::filesystem::path temporary_prefix(const std::filesystem::path& target) {
  const std::filesystem::path dir = target.parent_path();
  std::filesystem::path name = ".";
  name += target.filename();
  name += std::string(detail::temporary_marker);
  return dir.empty() ? name : dir / name;
}

/**
 * Removes every temporary file this process is writing. Async-signal-safe: call it from a handler of
 * SIGINT/SIGTERM/SIGHUP before ending the process, so that no full-size temporary is left. (On Windows
 * a temporary still open cannot be removed: the next run's `sweep_temporaries` removes it.)
 * @return how many files were removed
 */
inline std::size_t remove_temporaries() noexcept { return detail::temporary_registry::get().remove_all(); }

/**
 * True while this process is putting a finished output in place (a rename over the target, or the swap
 * of a shard set), in any thread. A signal handler that sees it should let the program go on instead of
 * ending it: the output is complete, and ending now could leave a shard set half swapped or report a
 * failure that did not happen. Async-signal-safe.
 */
inline bool output_committing() noexcept {
  return detail::temporary_registry::get().committing.load(std::memory_order_relaxed) > 0;
}

/**
 * True once this process has put an output in place. A tool that writes one output and then ends lets
 * a signal pass after that too (what is left is reporting success); a program that goes on to other
 * work asks `output_committing` only. Async-signal-safe.
 */
inline bool output_committed() noexcept {
  return detail::temporary_registry::get().committed.load(std::memory_order_relaxed);
}

/** What `sweep_temporaries` found beside a target. */
struct sweep_report {
  std::vector<std::filesystem::path> removed;  ///< stale temporaries (their writer is gone), now removed
  std::vector<std::filesystem::path> in_use;   ///< temporaries a live process is writing, left alone
};

/**
 * Looks for temporaries of `target` (`.NAME.gguf-tmp-*` beside it) and removes those whose writer is
 * gone, which their lock proves; those still being written are reported and left alone.
 * @return what was found; `io_error` when the directory cannot be read
 */
inline result<sweep_report> sweep_temporaries(const std::filesystem::path& target) {
  namespace fs = std::filesystem;
  sweep_report report;
  const fs::path prefix = temporary_prefix(target);
  const fs::path dir = prefix.parent_path().empty() ? fs::path(".") : prefix.parent_path();
  const auto want = prefix.filename().native();
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return report;
    return error{errc::io_error, "cannot read the directory"}.os(ec.value());
  }
  for (fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    const auto name = it->path().filename().native();
    if (name.size() != want.size() + 6 || name.compare(0, want.size(), want) != 0) continue;
    const fs::path p = prefix.parent_path().empty() ? fs::path(name) : prefix.parent_path() / name;
#if defined(_WIN32)
    // Its writer opened it without sharing: deleting fails while the writer lives.
    if (DeleteFileW(p.c_str())) {
      report.removed.push_back(p);
    } else {
      report.in_use.push_back(p);
    }
#else
    const int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      report.in_use.push_back(p);
    } else {
      // Still the file we locked (not renamed and replaced meanwhile): then it is stale.
      struct stat locked {
      }, named{};
      if (::fstat(fd, &locked) == 0 && ::lstat(p.c_str(), &named) == 0 && locked.st_ino == named.st_ino &&
          locked.st_dev == named.st_dev && ::unlink(p.c_str()) == 0) {
        report.removed.push_back(p);
      }
    }
    ::close(fd);
#endif
  }
  return report;
}

GGUF_END_NAMESPACE

#endif  // GGUF_PLATFORM_TEMPORARY_FILES_HPP
