#ifndef GGUF_SAVE_HPP
#define GGUF_SAVE_HPP

#include "gguf/version.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <span>
#include <system_error>
#include <utility>
#include <vector>

#include "gguf/format/writer.hpp"
#include "gguf/platform/file_identity.hpp"
#include "gguf/platform/mapped_file.hpp"
#include "gguf/platform/output_file.hpp"
#include "gguf/platform/paths.hpp"
#include "gguf/result.hpp"
#include "gguf/split_journal.hpp"

/**
 * @file
 * Writing files so that a crash or a full disk never leaves a half-written model at the path:
 *
 * - `save` (and `stage` + `commit`) writes a new file beside the target, flushes it to the disk and
 *   renames it over the target. At every instant the path holds the old file or the complete new one;
 *   on an error the target is untouched and nothing is left behind.
 * - `save_in_place` rewrites only the header of a file the writer was made from, when the new metadata
 *   fits before the tensor data (the alignment padding is the slack): no tensor byte moves, so editing a
 *   40 GB model takes milliseconds and no extra disk. It first saves the old header beside the file
 *   (`in_place_backup_path`), flushed, then overwrites, flushes and removes the copy. After a crash in
 *   between, `restore_in_place_backup` (or `gguf-edit --restore FILE`) writes the old header back, once
 *   it has checked that the backup belongs to the file.
 * - A rewrite keeps the file's identity: a symlink is followed and stays a link; the new file gets the
 *   old one's mode, owner and group. A file with a pending backup, or a shard of a set with a pending
 *   journal, is not replaced (`check_replaceable`).
 */

GGUF_BEGIN_NAMESPACE

/** How `save` and `stage` write: the writer's options, and whether to flush to the disk. */
struct save_options : write_options {
  /**
   * Flush the new file to the disk (fsync) before renaming it over the target, and the directory after:
   * then even a power failure leaves the old file or the complete new one at the path. Without it the
   * rename is still atomic for a crashing process, but after a power failure the path may hold a file
   * whose data never reached the disk. It costs the time the disk takes to write the file (about as
   * much again as the copy itself here).
   */
  bool flush = true;
};

/** Where `save_in_place` keeps the old header of `path` while it overwrites it: `path` + ".gguf-backup". */
inline std::filesystem::path in_place_backup_path(const std::filesystem::path& path) {
  std::filesystem::path p = path;
  p += ".gguf-backup";
  return p;
}

/**
 * Why `target` may not be replaced now, if anything: a pending in-place backup of it, a journal of an
 * interrupted shard-set swap it belongs to, a directory in its place, or a file that is not a regular one
 * (a device or a pipe, which a rename would replace). Every save checks it first
 * (`stage`); a tool may call it before doing any work.
 * @param target the path to be written (symlinks already followed: `resolve_symlinks`)
 * @return nothing; `pending_restore` naming the backup or journal; `io_error` for a directory (EISDIR) or
 *         a file that is not a regular one
 */
inline result<void> check_replaceable(const std::filesystem::path& target) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  if (fs::is_directory(st)) return error{errc::io_error, "the output is a directory"}.os(EISDIR);
  // A rename would replace a device or a pipe by a file (as root: /dev/null itself).
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    return error{errc::io_error, "the output is not a regular file (a device, a pipe): write it another way"};
  }
  const fs::path backup = in_place_backup_path(target);
  if (fs::exists(fs::symlink_status(backup, ec))) {
    return error{errc::pending_restore,
                 "an interrupted in-place edit left a backup of this file (restore it first: "
                 "gguf-edit --restore)"}
        .about_file(detail::path_utf8(backup.filename()));
  }
  if (const auto journal = pending_split_journal(target)) {
    return error{errc::pending_restore,
                 "an interrupted gguf-split left a journal for this shard set (restore it first: gguf-split --restore)"}
        .about_file(detail::path_utf8(journal->filename()));
  }
  return {};
}

/**
 * A new file written in full beside its target and flushed to the disk, not yet in place: `commit`
 * renames it over the target; destroying it uncommitted removes it. Between the two you may close the
 * file the writer read from (Windows cannot rename over a file that is still mapped).
 */
class staged_file {
 public:
  /**
   * Renames the new file over the target (atomic; the directory is flushed too).
   * @return nothing, or `io_error` with the OS's reason (then the target is untouched)
   */
  result<void> commit() { return file_.commit(target_, flush_); }
  /** The path the file will have: the target given to `stage`, or the file its symlinks lead to. */
  const std::filesystem::path& target() const noexcept { return target_; }
  /** Where the new file is being written (a temporary beside `target()`). */
  const std::filesystem::path& temporary() const noexcept { return file_.path(); }

 private:
  friend result<staged_file> stage(const writer& w, const std::filesystem::path& target, const save_options& opt);
  staged_file(output_file&& f, std::filesystem::path target, bool flush) noexcept
      : file_(std::move(f)), target_(std::move(target)), flush_(flush) {}
  output_file file_;
  std::filesystem::path target_;
  bool flush_;
};

/**
 * Writes `w` to a temporary file beside `target` (the first half of `save`; `commit` flushes and renames
 * it). A `target` that is a symlink is followed to its end: that file is rewritten, in its own directory,
 * and the links stay links. The new file keeps the mode, owner and group of the file it replaces
 * (`output_file::create_beside`). Borrowed tensor data is copied in the kernel when it lies in a mapped
 * file (Linux), else written from memory and released as it goes (`mapped_file::release`): a file larger
 * than RAM streams through.
 * @param w      what to write
 * @param target the path the file will have after `commit`
 * @param opt    chunk size, progress, flush (`done_with` is set to `mapped_file::release` when empty)
 * @return the staged file; on an error (the writer's, a full disk, a read-only directory, a target that
 *         `check_replaceable` refuses) nothing is left
 */
inline result<staged_file> stage(const writer& w, const std::filesystem::path& target, const save_options& opt = {}) {
  auto resolved = resolve_symlinks(target);
  if (!resolved) return resolved.error();
  GGUF_TRY(check_replaceable(*resolved));
  auto out = output_file::create_beside(*resolved);
  if (!out) return out.error();
  out->set_write_behind(opt.flush);  // early writeback only pays when `commit` waits for the disk
  write_options o = opt;             // NOLINT(cppcoreguidelines-slicing): the writer's part of the options
  if (!o.done_with) o.done_with = [](std::span<const std::byte> range) { mapped_file::release(range); };
  GGUF_TRY(w.write(*out, o));
  return staged_file(std::move(*out), std::move(*resolved), opt.flush);
}

/**
 * Writes `w` to `path` atomically: `stage`, then `commit`.
 * @return nothing, or the first error (then `path` holds what it held before, and no temporary remains)
 */
inline result<void> save(const writer& w, const std::filesystem::path& path, const save_options& opt = {}) {
  auto staged = stage(w, path, opt);
  if (!staged) return staged.error();
  return staged->commit();
}

namespace detail {

/**
 * An in-place backup: a 64-byte record, then the old header. The record says whose backup it is, so
 * that a restore never writes a header over another file (one that replaced the edited file since, or
 * any file a stray backup lies beside): the file's identity (device and inode: a replacement by rename
 * is another file), its size and a fingerprint of its tensor data, which an in-place edit never changes.
 */
struct backup_record {
  static constexpr std::array<char, 8> magic = {'G', 'G', 'U', 'F', 'B', 'A', 'K', '1'};
  static constexpr std::size_t n_fields = 7;
  static constexpr std::size_t size = 8 + 8 * n_fields;
  std::uint64_t file_size = 0;    ///< the file's size when the backup was made
  std::uint64_t header_size = 0;  ///< the bytes saved: the file's [0, header_size)
  std::uint64_t data_hash = 0;    ///< `fingerprint` of the file past the header
  std::uint64_t header_hash = 0;  ///< FNV-1a of the saved bytes: a damaged backup is refused
  std::uint64_t device = 0;       ///< the file's `file_id`
  std::uint64_t inode = 0;
  std::uint64_t reserved = 0;

  std::array<std::byte, size> encode() const noexcept {
    std::array<std::byte, size> out{};
    std::memcpy(out.data(), magic.data(), magic.size());
    const std::uint64_t fields[n_fields] = {file_size, header_size, data_hash, header_hash, device, inode, reserved};
    for (std::size_t i = 0; i < n_fields; ++i) {
      for (std::size_t b = 0; b < 8; ++b) out[8 + 8 * i + b] = static_cast<std::byte>(fields[i] >> (8 * b));
    }
    return out;
  }
  static std::optional<backup_record> decode(std::span<const std::byte> in) noexcept {
    if (in.size() < size || std::memcmp(in.data(), magic.data(), magic.size()) != 0) return std::nullopt;
    std::uint64_t f[n_fields] = {};
    for (std::size_t i = 0; i < n_fields; ++i) {
      for (std::size_t b = 0; b < 8; ++b) f[i] |= static_cast<std::uint64_t>(in[8 + 8 * i + b]) << (8 * b);
    }
    return backup_record{f[0], f[1], f[2], f[3], f[4], f[5], f[6]};
  }
};

inline std::uint64_t fnv1a(std::span<const std::byte> bytes, std::uint64_t h = 0xcbf29ce484222325ull) noexcept {
  for (const std::byte b : bytes) h = (h ^ static_cast<std::uint64_t>(b)) * 0x100000001b3ull;
  return h;
}

/// A fingerprint of `f`'s bytes past `from`: its first and last MiB there (an edit never moves them).
inline result<std::uint64_t> fingerprint(const output_file& f, std::uint64_t from, std::uint64_t file_size) {
  constexpr std::uint64_t span = std::uint64_t{1} << 20;
  if (from >= file_size) return fnv1a({});
  std::vector<std::byte> buf(static_cast<std::size_t>(std::min(span, file_size - from)));
  GGUF_TRY(f.read_at(from, buf));
  std::uint64_t h = fnv1a(buf);
  const std::uint64_t tail = std::max(from, file_size > span ? file_size - span : 0);
  buf.resize(static_cast<std::size_t>(file_size - tail));
  GGUF_TRY(f.read_at(tail, buf));
  return fnv1a(buf, h);
}

inline result<std::uint64_t> size_of(const std::filesystem::path& p) {
  std::error_code ec;
  const std::uintmax_t n = std::filesystem::file_size(p, ec);
  if (ec) return error{errc::io_error, "cannot read the file's size"}.os(ec.value());
  return static_cast<std::uint64_t>(n);
}

}  // namespace detail

/**
 * Writes the saved header back over `path` after an interrupted `save_in_place`, flushes it, and removes
 * the backup. A backup that does not belong to the file is refused and left as it is: one made for
 * another file, one made before the file was replaced, a damaged one, or anything else at that name.
 * A backup is bound to its file (the same file, not a copy: move the pair, don't copy it).
 * @return nothing; `not_found` when there is no backup; `size_mismatch` for a backup of another file
 *         (or no backup at all); `io_error` with the OS's reason
 */
inline result<void> restore_in_place_backup(const std::filesystem::path& path) {
  auto resolved = resolve_symlinks(path);
  if (!resolved) return resolved.error();
  const std::filesystem::path backup = in_place_backup_path(*resolved);
  const std::string backup_name = detail::path_utf8(backup.filename());
  std::error_code ec;
  if (!std::filesystem::exists(backup, ec)) {
    return error{errc::not_found, "no in-place backup to restore"}.about_file(backup_name);
  }
  auto saved = mapped_file::open(backup);
  if (!saved) return saved.error();
  const std::span<const std::byte> bytes = saved->bytes();
  const auto record = detail::backup_record::decode(bytes);
  if (!record || record->header_size != bytes.size() - detail::backup_record::size) {
    return error{errc::size_mismatch, "not a backup made by an in-place edit: left as it is"}.about_file(backup_name);
  }
  const std::span<const std::byte> header = bytes.subspan(detail::backup_record::size);
  if (detail::fnv1a(header) != record->header_hash || header.size() < 4 || std::memcmp(header.data(), "GGUF", 4) != 0) {
    return error{errc::size_mismatch, "the backup is damaged: left as it is"}.about_file(backup_name);
  }
  auto size = detail::size_of(*resolved);
  if (!size) return size.error();
  auto f = output_file::open_existing(*resolved);
  if (!f) return f.error();
  if (*size != record->file_size || record->header_size > *size) {
    return error{errc::size_mismatch, "the backup belongs to another file (its size differs): left as it is"}
        .about_file(backup_name);
  }
  const auto id = identify(*resolved);
  if (!id) return id.error();
  if (id->device != record->device || id->inode != record->inode) {
    return error{errc::size_mismatch,
                 "the backup belongs to another file (or to this path before the file was replaced): left as it is"}
        .about_file(backup_name);
  }
  auto data = detail::fingerprint(*f, record->header_size, *size);
  if (!data) return data.error();
  if (*data != record->data_hash) {
    return error{errc::size_mismatch,
                 "the backup belongs to another file (its tensor data differs: replaced since?): left as it is"}
        .about_file(backup_name);
  }
  GGUF_TRY(f->write_at(0, header));
  GGUF_TRY(f->sync());
  *saved = mapped_file{};  // unmapped before the removal (Windows cannot remove a mapped file)
  std::filesystem::remove(backup, ec);
  output_file::sync_directory(backup);
  return {};
}

/**
 * Edits the file `w` was made from (`writer::from` of `path`'s parse) in place: only its header is
 * rewritten, which must fit before the tensor data exactly as the old one did (`writer::in_place_header`);
 * keys may change, tensors may be renamed, none added or removed. A symlink is followed: the file it
 * leads to is edited, and its backup lies beside that file.
 *
 * The old header is first saved to `in_place_backup_path(path)` (flushed, with what identifies the file:
 * `restore_in_place_backup`), then overwritten by one write and flushed, then the backup is removed. On
 * an error while overwriting, the old header is written back at once; a crash leaves the backup for
 * `restore_in_place_backup`. A reader that opens the file during the write may see a torn header and
 * call the file corrupt; it never sees torn tensor data.
 * @return nothing; `out_of_range` when the new header does not fit (write a new file with `save`);
 *         `io_error` with the OS's reason; `pending_restore` when a backup of an earlier interrupted
 *         edit is still there (restore it first)
 */
inline result<void> save_in_place(const writer& w, const std::filesystem::path& path) {
  auto resolved = resolve_symlinks(path);
  if (!resolved) return resolved.error();
  const std::filesystem::path backup = in_place_backup_path(*resolved);
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(backup, ec))) {
    return error{errc::pending_restore, "an interrupted in-place edit left its backup: restore it first"}.about_file(
        detail::path_utf8(backup.filename()));
  }
  auto header = w.in_place_header();
  if (!header) return header.error();
  auto f = output_file::open_existing(*resolved);
  if (!f) return f.error();
  std::vector<std::byte> old(header->size());
  GGUF_TRY(f->read_at(0, old));
  if (old == *header) return {};  // nothing changes

  {  // 1. The old header and whose it is, beside the file, flushed (and its name flushed) before anything
     //    is overwritten.
    auto size = detail::size_of(*resolved);
    if (!size) return size.error();
    detail::backup_record record;
    record.file_size = *size;
    record.header_size = old.size();
    auto data = detail::fingerprint(*f, old.size(), *size);
    if (!data) return data.error();
    record.data_hash = *data;
    record.header_hash = detail::fnv1a(old);
    const auto id = identify(*resolved);
    if (!id) return id.error();
    record.device = id->device;
    record.inode = id->inode;
    auto saved = output_file::create_beside(backup);
    if (!saved) return saved.error();
    GGUF_TRY(saved->write(record.encode()));
    GGUF_TRY(saved->write(old));
    GGUF_TRY(saved->commit(backup));
  }
  // 2. The new header over the old in one write, flushed; on an error, the old one back.
  result<void> written = f->write_at(0, *header);
  if (written) written = f->sync();
  if (!written) {
    if (f->write_at(0, old) && f->sync()) {
      std::filesystem::remove(backup, ec);
      output_file::sync_directory(backup);
    }
    return written;
  }
  // 3. Done: the backup goes.
  std::filesystem::remove(backup, ec);
  output_file::sync_directory(backup);
  return {};
}

GGUF_END_NAMESPACE

#endif  // GGUF_SAVE_HPP
