#ifndef GGUF_PLATFORM_MAPPED_FILE_HPP
#define GGUF_PLATFORM_MAPPED_FILE_HPP

#include <cstddef>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <mutex>
#include <utility>
#include <vector>

#include "gguf/result.hpp"

#include "gguf/platform/os.hpp"

GGUF_BEGIN_NAMESPACE

namespace detail {
/**
 * The files of the live mappings, by address range (POSIX): lets `output_file` copy bytes that lie in a
 * mapped file in the kernel (`copy_file_range`), as `cp` does, instead of reading them through the
 * mapping one page fault at a time. Only an optimization: a range it does not know is written from
 * memory.
 */
class mapping_registry {
 public:
  /// The registry of the program.
  static mapping_registry& get() noexcept {
    static mapping_registry r;
    return r;
  }
  /// A file and the offset in it of a range of mapped bytes.
  struct location {
    int fd = -1;               ///< -1: the range is not (wholly) in a registered mapping
    std::uint64_t offset = 0;  ///< where the range starts in the file
  };
  /// Registers the mapping of `fd` at [data, data + size).
  void add(const std::byte* data, std::size_t size, int fd) {
    const std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back({data, size, fd});
  }
  /// Forgets the mapping at `data`.
  void remove(const std::byte* data) noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].data == data) {
        entries_[i] = entries_.back();
        entries_.pop_back();
        return;
      }
    }
  }
  /// The file holding [p, p + n), when a registered mapping holds all of it.
  location find(const std::byte* p, std::size_t n) noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const entry& e : entries_) {
      if (p >= e.data && n <= e.size && static_cast<std::size_t>(p - e.data) <= e.size - n) {
        return {e.fd, static_cast<std::uint64_t>(p - e.data)};
      }
    }
    return {};
  }

 private:
  struct entry {
    const std::byte* data;
    std::size_t size;
    int fd;
  };
  std::mutex mutex_;
  std::vector<entry> entries_;
};
}  // namespace detail

class mapped_file;
/// Its views point into the object: no `->` on a temporary `result<mapped_file>` (declared before any use of
/// that result, which would instantiate the primary template).
template <>
inline constexpr bool hands_out_views<mapped_file> = true;

/**
 * A whole file mapped read-only into memory (POSIX `mmap`, Windows `MapViewOfFile`), unmapped on
 * destruction. Moving it keeps the address: views into `bytes()` survive a move. Works on files the
 * process may only read. An empty file maps to an empty span.
 */
class mapped_file {
 public:
  /** No mapping: an empty span. */
  mapped_file() noexcept = default;
  mapped_file(const mapped_file&) = delete;             ///< one owner per mapping
  mapped_file& operator=(const mapped_file&) = delete;  ///< one owner per mapping
  /// Takes over the mapping; `o` is left empty. The address does not change.
  mapped_file(mapped_file&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), fd_(std::exchange(o.fd_, -1)) {}
  /// Unmaps this mapping, then takes over `o`'s.
  mapped_file& operator=(mapped_file&& o) noexcept {
    if (this != &o) {
      unmap();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  /// Unmaps.
  ~mapped_file() { unmap(); }

  /**
   * Map the whole file at `path` read-only. The file is closed at once: the mapping keeps it alive.
   * @param path a file name: a `std::filesystem::path`, or anything it converts from (`const char*`,
   *             `std::string`, `std::string_view`); on Windows wide paths reach `CreateFileW` unchanged
   * @return the mapping; `io_error` with the OS's reason (`error::os_code`) when the file cannot be
   *         opened, sized or mapped, or it is not a regular file or does not fit the address space
   */
  static result<mapped_file> open(const std::filesystem::path& path) noexcept {
    mapped_file m;
#if defined(_WIN32)
    HANDLE h = CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL | FILE_FLAG_SEQUENTIAL_SCAN, nullptr);
    if (h == INVALID_HANDLE_VALUE) return os_error("cannot open file", static_cast<int>(GetLastError()));
    LARGE_INTEGER size;
    if (!GetFileSizeEx(h, &size)) {
      const auto code = static_cast<int>(GetLastError());
      CloseHandle(h);
      return os_error("cannot get the file size", code);
    }
    if (size.QuadPart > 0) {
      if (static_cast<unsigned long long>(size.QuadPart) > static_cast<unsigned long long>(SIZE_MAX)) {
        CloseHandle(h);
        return error{errc::io_error, "file too large for the address space"};
      }
      HANDLE mapping = CreateFileMappingW(h, nullptr, PAGE_READONLY, 0, 0, nullptr);
      const auto code = static_cast<int>(GetLastError());
      CloseHandle(h);
      if (!mapping) return os_error("cannot create a file mapping", code);
      void* p = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
      const auto map_code = static_cast<int>(GetLastError());
      CloseHandle(mapping);  // the view keeps the mapping alive
      if (!p) return os_error("cannot map the file", map_code);
      m.data_ = static_cast<const std::byte*>(p);
      m.size_ = static_cast<std::size_t>(size.QuadPart);
    } else {
      CloseHandle(h);
    }
#else
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return os_error("cannot open file", errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int code = errno;
      ::close(fd);
      return os_error("cannot get the file size", code);
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      if (S_ISDIR(st.st_mode)) return os_error("the path is not a file", EISDIR);  // "...: Is a directory"
      return error{errc::io_error, "not a regular file (a device or a pipe: read it with '-')"};
    }
    if (st.st_size > 0) {
      if (static_cast<unsigned long long>(st.st_size) > static_cast<unsigned long long>(SIZE_MAX)) {
        ::close(fd);
        return error{errc::io_error, "file too large for the address space"};
      }
      const auto size = static_cast<std::size_t>(st.st_size);
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      const int code = errno;
      if (p == MAP_FAILED) {
        ::close(fd);
        return os_error("cannot map the file", code);
      }
      // The descriptor stays open with the mapping: output_file copies ranges of it in the kernel.
      m.data_ = static_cast<const std::byte*>(p);
      m.size_ = size;
      m.fd_ = fd;
      detail::mapping_registry::get().add(m.data_, size, fd);
    } else {
      ::close(fd);
    }
#endif
    return m;
  }

  /** The mapped bytes (empty for an empty file). */
  std::span<const std::byte> bytes() const& noexcept { return {data_, size_}; }
  std::span<const std::byte> bytes() const&& = delete;  ///< would dangle: keep the mapping in a variable
  /** The first mapped byte, or nullptr for an empty file. */
  const std::byte* data() const& noexcept { return data_; }
  const std::byte* data() const&& = delete;  ///< would dangle
  /** The file's size in bytes. */
  std::size_t size() const noexcept { return size_; }

  /**
   * Copies bytes of the file without touching the mapping: on POSIX a `pread` from the file itself, so
   * that a mapping nobody has read yet stays unpopulated (the first touch of a mapping costs more than a
   * small read: page tables, then a TLB flush when it is unmapped); elsewhere a copy from the mapping.
   * @param offset where to start, from the start of the file
   * @param out    the buffer to fill
   * @return the bytes copied: `out.size()`, or fewer past the end of the file or when the read fails
   */
  std::size_t copy_out(std::uint64_t offset, std::span<std::byte> out) const noexcept {
    if (offset >= size_) return 0;
    if (out.size() > size_ - offset) out = out.first(static_cast<std::size_t>(size_ - offset));
#if !defined(_WIN32)
    std::size_t done = 0;
    while (fd_ >= 0 && done < out.size()) {
      const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (fd_ >= 0) return done;
#endif
    std::memcpy(out.data(), data_ + offset, out.size());
    return out.size();
  }

  /**
   * Drops the pages of `range` from the process, so that streaming a file much larger than RAM through a
   * mapping keeps the resident memory bounded: on POSIX `madvise(MADV_DONTNEED)` on the whole pages
   * inside `range`, whose pages come back from the file if read again. Only when a live `mapped_file`
   * (read-only, file-backed) holds all of `range`: on any other memory (a heap buffer, a mapping made
   * elsewhere) MADV_DONTNEED would zero the pages, so nothing is done. A no-op on other systems. A hint:
   * failures are ignored.
   */
  static void release(std::span<const std::byte> range) noexcept {
#if !defined(_WIN32)
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(range.data());
    const std::uintptr_t first = (begin + page - 1) / page * page, last = (begin + range.size()) / page * page;
    if (last <= first) return;
    if (detail::mapping_registry::get().find(range.data(), range.size()).fd < 0) return;  // not ours: keep it
    // NOLINTNEXTLINE(*-const-cast): madvise takes void*; the pages are only dropped, never written
    void* start = const_cast<std::byte*>(range.data() + (first - begin));
    ::madvise(start, last - first, MADV_DONTNEED);
#else
    (void)range;
#endif
  }

  /**
   * Map a range in now, in one call, instead of one page fault per page as it is first read: on Linux
   * `madvise(MADV_POPULATE_READ)` (5.14+, falling back to the `MADV_WILLNEED` read-ahead hint), on
   * Windows `PrefetchVirtualMemory`. Worth it for ranges that will be read in full, such as the
   * metadata before a parse or a tensor before dequantizing it. A hint: failures are ignored. (Windows
   * builds targeting versions before Windows 8 skip it.)
   * @param offset the first byte, from the start of the file; nothing happens past the end
   * @param length the number of bytes, clipped to the end of the file
   */
  void prefetch(std::size_t offset, std::size_t length) const noexcept {
    if (offset >= size_) return;
    if (length > size_ - offset) length = size_ - offset;
#if defined(_WIN32)
#if defined(_WIN32_WINNT) && _WIN32_WINNT >= 0x0602
    WIN32_MEMORY_RANGE_ENTRY range{const_cast<std::byte*>(data_) + offset, length};
    PrefetchVirtualMemory(GetCurrentProcess(), 1, &range, 0);
#endif
#else
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t start = offset / page * page;
    void* addr = const_cast<std::byte*>(data_) + start;  // NOLINT(*-const-cast): madvise takes void*
    const std::size_t len = length + (offset - start);
#if defined(__linux__)
    constexpr int populate_read = 22;  // MADV_POPULATE_READ, absent from older headers
    if (::madvise(addr, len, populate_read) == 0) return;
#endif
    ::madvise(addr, len, MADV_WILLNEED);
#endif
  }

 private:
  static error os_error(const char* what, int code) noexcept { return error{errc::io_error, what}.os(code); }

  void unmap() noexcept {
#if !defined(_WIN32)
    if (fd_ >= 0) {
      if (data_) detail::mapping_registry::get().remove(data_);
      ::close(fd_);
      fd_ = -1;
    }
#endif
    if (!data_) return;
#if defined(_WIN32)
    UnmapViewOfFile(data_);
#else
    ::munmap(const_cast<std::byte*>(data_), size_);  // NOLINT(*-const-cast): munmap takes void*
#endif
    data_ = nullptr;
    size_ = 0;
  }

  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;  // POSIX: the mapped file, open while mapped
};

GGUF_END_NAMESPACE

#endif  // GGUF_PLATFORM_MAPPED_FILE_HPP
