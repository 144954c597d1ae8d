#ifndef GGUF_PLATFORM_OUTPUT_FILE_HPP
#define GGUF_PLATFORM_OUTPUT_FILE_HPP

#include "gguf/version.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include "gguf/format/sink.hpp"
#include "gguf/platform/file_identity.hpp"
#include "gguf/platform/mapped_file.hpp"
#include "gguf/platform/temporary_files.hpp"
#include "gguf/result.hpp"

#include "gguf/platform/os.hpp"

GGUF_BEGIN_NAMESPACE

namespace detail {
#if defined(GGUF_TEST_IO_FAULTS)
// The library's own tests inject write failures and crashes at every byte (tests/io_faults.cpp defines
// these for them): how many of `n` bytes a write may write before the fault, and the fault.
std::size_t io_fault_allowance(std::size_t n) noexcept;
result<void> io_fault() noexcept;
#else
/// How many of `n` bytes a write may write: all (faults are injected only in the library's tests).
constexpr std::size_t io_fault_allowance(std::size_t n) noexcept { return n; }
/// Never reached outside the library's tests.
inline result<void> io_fault() noexcept { return {}; }
#endif
}  // namespace detail

/**
 * A file being written, as a `sink`: the OS half of writing files safely. Either a new temporary file
 * beside a target (`create_beside`), which `commit` flushes to the disk and renames over the target (at
 * every instant the target holds either its old content or the complete new one), or an existing file
 * opened for writing in place (`open_existing`). A temporary that is not committed is removed by the
 * destructor: an error never leaves one behind.
 */
class output_file final : public sink {
 public:
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  /// Takes over `o`'s file (`o` is left closed).
  output_file(output_file&& o) noexcept
      : handle_(std::exchange(o.handle_, invalid)),
        path_(std::move(o.path_)),
        temporary_(std::exchange(o.temporary_, false)),
        write_behind_(o.write_behind_),
        appended_(o.appended_),
        handed_to_disk_(o.handed_to_disk_),
        slot_(std::exchange(o.slot_, -1)) {}
  output_file& operator=(output_file&&) = delete;
  /// Closes the file; removes it when it is a temporary that was not committed.
  ~output_file() override { abandon(); }

  /**
   * Creates an empty temporary file beside `target` (`.NAME.gguf-tmp-XXXXXX` for a target named NAME,
   * see temporary_files.hpp), so that renaming it over `target` is atomic (same file system). It is
   * locked while this object lives, and listed for `remove_temporaries`. When `target` exists, the new
   * file gets its mode and, where permitted, its owner and group (`file_permissions`); otherwise the
   * default mode (0666 less the umask). `target` should be the end of any symlink chain
   * (`resolve_symlinks`): a rename replaces a link, not the file it points to.
   * @return the file; `io_error` with the OS's reason (a read-only or missing directory; EACCES for a
   *         target the caller may not write, as `cp` refuses it)
   */
  static result<output_file> create_beside(const std::filesystem::path& target) {
    const std::filesystem::path prefix = temporary_prefix(target);
#if defined(_WIN32)
    for (unsigned attempt = 0; attempt < 100; ++attempt) {
      std::filesystem::path p = prefix;
      p += detail::random_suffix();
      // No sharing: a later run cannot delete it while this process writes it (how it tells it stale).
      HANDLE h =
          CreateFileW(p.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr);
      if (h != INVALID_HANDLE_VALUE) return output_file(h, p, true, detail::temporary_registry::get().add(p));
      if (GetLastError() != ERROR_FILE_EXISTS) {
        return error{errc::io_error, "cannot create a temporary file beside the target"}.os(
            static_cast<std::int32_t>(GetLastError()));
      }
    }
    return error{errc::io_error, "cannot create a temporary file beside the target"};
#else
    const file_permissions perms = file_permissions::of(target);
    if (perms.recorded && ::access(target.c_str(), W_OK) != 0 && errno == EACCES) {
      return error{errc::io_error, "the file is not writable"}.os(EACCES);
    }
    for (unsigned attempt = 0; attempt < 100; ++attempt) {
      std::filesystem::path p = prefix;
      p += detail::random_suffix();
      // Listed before it exists: a signal between its creation and its listing would leave it behind.
      const int slot = detail::temporary_registry::get().add(p);
      // 0600 while the owner and mode of a file it replaces are not yet applied: a private model is
      // never readable by others, not even for an instant.
      const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, perms.recorded ? 0600 : 0666);
      if (fd < 0) {
        const int code = errno;
        detail::temporary_registry::get().remove(slot);
        if (code == EEXIST) continue;
        return error{errc::io_error, "cannot create a temporary file beside the target"}.os(code);
      }
      ::flock(fd, LOCK_EX | LOCK_NB);
      perms.apply(fd);
      return output_file(fd, p, true, slot);
    }
    return error{errc::io_error, "cannot create a temporary file beside the target"}.os(EEXIST);
#endif
  }

  /**
   * Opens an existing file to overwrite part of it (an in-place edit); nothing is truncated.
   * @return the file; `io_error` with the OS's reason
   */
  static result<output_file> open_existing(const std::filesystem::path& path) {
#if defined(_WIN32)
    HANDLE h = CreateFileW(path.c_str(), GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ, nullptr, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
      return error{errc::io_error, "cannot open the file for writing"}.os(static_cast<std::int32_t>(GetLastError()));
    }
    return output_file(h, path, false);
#else
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return error{errc::io_error, "cannot open the file for writing"}.os(errno);
    return output_file(fd, path, false);
#endif
  }

  /** The file's path. */
  const std::filesystem::path& path() const noexcept { return path_; }

  /**
   * Appends `bytes` at the current position (all of them: short writes are continued).
   * @return nothing; `io_error` with the OS's reason (a full disk: ENOSPC; a file size limit: EFBIG)
   */
  result<void> write(std::span<const std::byte> bytes) override {
    const std::size_t allowed = detail::io_fault_allowance(bytes.size());
    const bool fault = allowed < bytes.size();
    bytes = bytes.first(allowed);
#if defined(__linux__)
    // Bytes of a mapped file (a tensor borrowed from the model being rewritten) are copied in the kernel,
    // as cp does: no page faults, no pages of the source left in the process.
    if (bytes.size() >= 65536) {
      const detail::mapping_registry::location src = detail::mapping_registry::get().find(bytes.data(), bytes.size());
      if (src.fd >= 0) {
        loff_t in = static_cast<loff_t>(src.offset);
        while (!bytes.empty()) {
          const ssize_t done = ::copy_file_range(src.fd, &in, handle_, nullptr, bytes.size(), 0);
          if (done < 0 && errno == EINTR) continue;
          if (done <= 0) break;  // not supported here (another file system, an old kernel): write() below
          bytes = bytes.subspan(static_cast<std::size_t>(done));
        }
      }
    }
#endif
    while (!bytes.empty()) {
#if defined(_WIN32)
      const DWORD n = static_cast<DWORD>(bytes.size() < (1u << 30) ? bytes.size() : (1u << 30));
      DWORD done = 0;
      if (!WriteFile(handle_, bytes.data(), n, &done, nullptr) || done == 0) {
        return error{errc::io_error, "cannot write the file"}.os(static_cast<std::int32_t>(GetLastError()));
      }
#else
      const ssize_t done =
          ::write(handle_, bytes.data(), bytes.size() < (std::size_t{1} << 30) ? bytes.size() : (std::size_t{1} << 30));
      if (done < 0 && errno == EINTR) continue;
      if (done <= 0) return error{errc::io_error, "cannot write the file"}.os(done < 0 ? errno : ENOSPC);
#endif
      bytes = bytes.subspan(static_cast<std::size_t>(done));
    }
    write_behind(allowed);
    if (fault) return detail::io_fault();
    return {};
  }

  /**
   * Writes `bytes` at `offset` (all of them), for an in-place edit.
   * @return nothing, or `io_error` with the OS's reason
   */
  // NOLINTNEXTLINE(*-make-member-function-const): it writes the file
  result<void> write_at(std::uint64_t offset, std::span<const std::byte> bytes) {
    const std::size_t allowed = detail::io_fault_allowance(bytes.size());
    const bool fault = allowed < bytes.size();
    bytes = bytes.first(allowed);
    while (!bytes.empty()) {
#if defined(_WIN32)
      OVERLAPPED at{};
      at.Offset = static_cast<DWORD>(offset);
      at.OffsetHigh = static_cast<DWORD>(offset >> 32);
      const DWORD n = static_cast<DWORD>(bytes.size() < (1u << 30) ? bytes.size() : (1u << 30));
      DWORD done = 0;
      if (!WriteFile(handle_, bytes.data(), n, &done, &at) || done == 0) {
        return error{errc::io_error, "cannot write the file"}.os(static_cast<std::int32_t>(GetLastError()));
      }
#else
      const ssize_t done = ::pwrite(handle_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
      if (done < 0 && errno == EINTR) continue;
      if (done <= 0) return error{errc::io_error, "cannot write the file"}.os(done < 0 ? errno : ENOSPC);
#endif
      bytes = bytes.subspan(static_cast<std::size_t>(done));
      offset += static_cast<std::uint64_t>(done);
    }
    if (fault) return detail::io_fault();
    return {};
  }

  /**
   * Reads `out.size()` bytes at `offset`.
   * @return nothing; `io_error` with the OS's reason, or `truncated` when the file is shorter
   */
  result<void> read_at(std::uint64_t offset, std::span<std::byte> out) const {
    while (!out.empty()) {
#if defined(_WIN32)
      OVERLAPPED at{};
      at.Offset = static_cast<DWORD>(offset);
      at.OffsetHigh = static_cast<DWORD>(offset >> 32);
      const DWORD n = static_cast<DWORD>(out.size() < (1u << 30) ? out.size() : (1u << 30));
      DWORD done = 0;
      if (!ReadFile(handle_, out.data(), n, &done, &at)) {
        return error{errc::io_error, "cannot read the file"}.os(static_cast<std::int32_t>(GetLastError()));
      }
#else
      const ssize_t done = ::pread(handle_, out.data(), out.size(), static_cast<off_t>(offset));
      if (done < 0 && errno == EINTR) continue;
      if (done < 0) return error{errc::io_error, "cannot read the file"}.os(errno);
#endif
      if (done == 0) return {errc::truncated, "the file is shorter than its header"};
      out = out.subspan(static_cast<std::size_t>(done));
      offset += static_cast<std::uint64_t>(done);
    }
    return {};
  }

  /**
   * Flushes the file's data and size to the disk (fsync, FlushFileBuffers): after it returns, a crash
   * cannot lose what was written.
   * @return nothing, or `io_error` with the OS's reason
   */
  // NOLINTNEXTLINE(*-make-member-function-const): it changes the file on the disk
  result<void> sync() {
#if defined(_WIN32)
    if (!FlushFileBuffers(handle_)) {
      return error{errc::io_error, "cannot flush the file to the disk"}.os(static_cast<std::int32_t>(GetLastError()));
    }
#else
    if (::fsync(handle_) != 0) return error{errc::io_error, "cannot flush the file to the disk"}.os(errno);
#endif
    return {};
  }

  /**
   * Finishes a temporary file: flushes it to the disk (unless `flush` is false), closes it, renames it
   * over `target` and flushes the directory, so that the rename itself survives a crash. On an error the
   * temporary is removed and `target` keeps its old content.
   * @return nothing, or `io_error` with the OS's reason
   */
  result<void> commit(const std::filesystem::path& target, bool flush = true) {
    if (flush) GGUF_TRY(sync());
    detail::temporary_registry::commit_scope committing;
#if defined(_WIN32)
    close();
    if (!MoveFileExW(path_.c_str(), target.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
      const auto code = static_cast<std::int32_t>(GetLastError());
      abandon();
      return error{errc::io_error, "cannot rename the new file over the target"}.os(code);
    }
#else
    // Renamed while still open and locked: a later run's sweep cannot take it for a stale temporary.
    if (::rename(path_.c_str(), target.c_str()) != 0) {
      const int code = errno;
      abandon();
      return error{errc::io_error, "cannot rename the new file over the target"}.os(code);
    }
    close();
    if (flush) sync_directory(target);
#endif
    detail::temporary_registry::get().remove(std::exchange(slot_, -1));
    temporary_ = false;
    path_ = target;
    detail::temporary_registry::commit_scope::done();
    return {};
  }

  /**
   * Closes the file and leaves it where it is: a temporary is no longer removed by this object nor by
   * `remove_temporaries` (a journal that lists it owns it now).
   * @return the file's path
   */
  std::filesystem::path release() noexcept {
    close();
    temporary_ = false;
    detail::temporary_registry::get().remove(std::exchange(slot_, -1));
    return path_;
  }

  /** Closes the file and removes it if it is an uncommitted temporary. */
  void abandon() noexcept {
    close();
    if (temporary_) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
      temporary_ = false;
    }
    detail::temporary_registry::get().remove(std::exchange(slot_, -1));
  }

  /**
   * Flushes a directory entry change (a rename, a removal) in the directory of `path` to the disk. A
   * hint where the OS has no such thing (Windows flushes renames with MOVEFILE_WRITE_THROUGH).
   */
  static void sync_directory(const std::filesystem::path& path) noexcept {
#if !defined(_WIN32)
    const std::filesystem::path dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    const int fd = ::open(dir.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
#else
    (void)path;
#endif
  }

  /**
   * Whether a new file's pages are handed to the disk as they are written (on by default; Linux): right
   * when the file is flushed at `commit`, which then waits for the last pages only; extra I/O when it is
   * not (a caller that saves without flushing turns it off).
   * @param on hand pages to the disk every 8 MiB written
   */
  void set_write_behind(bool on) noexcept { write_behind_ = on; }

 private:
#if defined(_WIN32)
  using handle_type = HANDLE;
  static inline const handle_type invalid = INVALID_HANDLE_VALUE;
#else
  using handle_type = int;
  static constexpr handle_type invalid = -1;
#endif
  output_file(handle_type h, std::filesystem::path p, bool temporary, int slot = -1) noexcept
      : handle_(h), path_(std::move(p)), temporary_(temporary), slot_(slot) {}

  // A new file's pages are handed to the disk as they are written, without waiting for them (Linux:
  // sync_file_range): the disk writes while the file is still being made, and the flush at `commit`
  // waits for the last pages only, not for the whole file.
  void write_behind([[maybe_unused]] std::size_t n) noexcept {
#if defined(__linux__)
    constexpr std::uint64_t step = std::uint64_t{8} << 20;
    appended_ += n;
    if (!temporary_ || !write_behind_ || appended_ - handed_to_disk_ < step) return;
    ::sync_file_range(handle_, static_cast<off_t>(handed_to_disk_), static_cast<off_t>(appended_ - handed_to_disk_),
                      SYNC_FILE_RANGE_WRITE);
    handed_to_disk_ = appended_;
#endif
  }

  void close() noexcept {
    if (handle_ == invalid) return;
#if defined(_WIN32)
    CloseHandle(handle_);
#else
    ::close(handle_);
#endif
    handle_ = invalid;
  }

  handle_type handle_ = invalid;
  std::filesystem::path path_;
  bool temporary_ = false;
  bool write_behind_ = true;
  std::uint64_t appended_ = 0;        // bytes `write` appended
  std::uint64_t handed_to_disk_ = 0;  // of which handed to the disk by `write_behind`
  int slot_ = -1;                     // its entry in detail::temporary_registry
};

GGUF_END_NAMESPACE

#endif  // GGUF_PLATFORM_OUTPUT_FILE_HPP
