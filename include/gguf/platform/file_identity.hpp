#ifndef GGUF_PLATFORM_FILE_IDENTITY_HPP
#define GGUF_PLATFORM_FILE_IDENTITY_HPP

#include "gguf/version.hpp"

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <system_error>

#include "gguf/result.hpp"

#include "gguf/platform/os.hpp"

/**
 * @file
 * What makes a file the same file when it is rewritten: where it really is (the end of a symlink chain,
 * as in the Hugging Face cache, whose snapshots are links into blobs/), which file it is (device and
 * inode), and its mode and owner, which a new file written over it must carry on.
 */

GGUF_BEGIN_NAMESPACE

/**
 * The file `path` names once every symlink of its last component is followed (relative links from the
 * directory holding them), so that a rewrite replaces the file and leaves the links as links. A path
 * that is no link, or that does not exist, comes back as it is; so does the end of a dangling link.
 * @return the path; `io_error` (ELOOP) for a chain of more than 40 links
 */
inline result<std::filesystem::path> resolve_symlinks(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  for (int hops = 0; hops <= 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    fs::path link = fs::read_symlink(p, ec);
    if (ec) return error{errc::io_error, "cannot read the symbolic link"}.os(ec.value());
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  return error{errc::io_error, "too many levels of symbolic links"}.os(ELOOP);
}

/** Which file a path is (device and inode on POSIX; volume and file index on Windows). */
struct file_id {
  std::uint64_t device = 0;  ///< the device (volume) holding it
  std::uint64_t inode = 0;   ///< the file on that device
  /// Equal when both name the same file.
  friend bool operator==(const file_id&, const file_id&) = default;
};

/**
 * The identity of the file at `path` (following symlinks).
 * @return it; `io_error` with the OS's reason (ENOENT when there is no such file)
 */
inline result<file_id> identify(const std::filesystem::path& path) {
#if defined(_WIN32)
  HANDLE h = CreateFileW(path.c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                         OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    return error{errc::io_error, "cannot open the file"}.os(static_cast<std::int32_t>(GetLastError()));
  }
  BY_HANDLE_FILE_INFORMATION info{};
  const BOOL ok = GetFileInformationByHandle(h, &info);
  CloseHandle(h);
  if (!ok) return error{errc::io_error, "cannot read the file's identity"};
  return file_id{info.dwVolumeSerialNumber,
                 (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow};
#else
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return error{errc::io_error, "cannot read the file's status"}.os(errno);
  return file_id{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
#endif
}

/** True when `a` and `b` both exist and are the same file (through links, hard links included). */
inline bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  const auto x = identify(a);
  const auto y = identify(b);
  return x && y && *x == *y;
}

/**
 * The mode and owner of an existing file, to give to the new file that replaces it. On Windows nothing
 * is recorded (a new file inherits its directory's ACL, as the old one did).
 */
struct file_permissions {
  bool recorded = false;  ///< false: there was no file (a new file gets the default mode, umask applied)
#if !defined(_WIN32)
  mode_t mode = 0;  ///< the permission bits, setuid/setgid/sticky included
  uid_t uid = 0;    ///< the owner
  gid_t gid = 0;    ///< the group
#endif

  /// The permissions of the file at `path` (following symlinks); not `recorded` when it does not exist.
  static file_permissions of(const std::filesystem::path& path) noexcept {
    file_permissions p;
#if !defined(_WIN32)
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      p.recorded = true;
      p.mode = st.st_mode & 07777;
      p.uid = st.st_uid;
      p.gid = st.st_gid;
    }
#else
    (void)path;
#endif
    return p;
  }

#if !defined(_WIN32)
  /**
   * Gives the open file `fd` these permissions: the owner and group where the OS permits (root; a group
   * the caller belongs to), then the mode. A group that could not be kept gets no more access than
   * others had, and setuid/setgid are dropped when the owner or group changed, as `cp -p` does.
   */
  void apply(int fd) const noexcept {
    if (!recorded) return;
    mode_t m = mode;
    struct stat st {};
    if (::fstat(fd, &st) != 0) return;
    bool uid_kept = st.st_uid == uid, gid_kept = st.st_gid == gid;
    if (!uid_kept || !gid_kept) {
      if (::fchown(fd, uid, gid) == 0) {
        uid_kept = gid_kept = true;
      } else if (!gid_kept && ::fchown(fd, static_cast<uid_t>(-1), gid) == 0) {
        gid_kept = true;
      }
    }
    if (!uid_kept || !gid_kept) m &= ~static_cast<mode_t>(S_ISUID | S_ISGID);
    if (!gid_kept) m = (m & ~static_cast<mode_t>(S_IRWXG)) | ((m & S_IRWXO) << 3);
    ::fchmod(fd, m);
  }
#endif
};

GGUF_END_NAMESPACE

#endif  // GGUF_PLATFORM_FILE_IDENTITY_HPP
