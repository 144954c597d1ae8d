#ifndef GGUF_SAVE_HPP
#define GGUF_SAVE_HPP

#include "gguf/version.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <system_error>
#include <utility>
#include <vector>

#include "gguf/format/writer.hpp"
#include "gguf/platform/mapped_file.hpp"
#include "gguf/platform/output_file.hpp"
#include "gguf/result.hpp"

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
 *   between, `restore_in_place_backup` (or `gguf-edit --restore FILE`, or
 *   `dd if=FILE.gguf-backup of=FILE conv=notrunc`) writes the old header back.
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
  /** The target path. */
  const std::filesystem::path& target() const noexcept { return target_; }

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
 * it). Borrowed tensor data is copied in the kernel when it lies in a mapped file (Linux), else written
 * from memory and released as it goes (`mapped_file::release`): a file larger than RAM streams through.
 * @param w      what to write
 * @param target the path the file will have after `commit`
 * @param opt    chunk size, progress, flush (`done_with` is set to `mapped_file::release` when empty)
 * @return the staged file; on an error (the writer's, a full disk, a read-only directory) nothing is left
 */
inline result<staged_file> stage(const writer& w, const std::filesystem::path& target, const save_options& opt = {}) {
  auto out = output_file::create_beside(target);
  if (!out) return out.error();
  out->set_write_behind(opt.flush);  // early writeback only pays when `commit` waits for the disk
  write_options o = opt;             // NOLINT(cppcoreguidelines-slicing): the writer's part of the options
  if (!o.done_with) o.done_with = [](std::span<const std::byte> range) { mapped_file::release(range); };
  GGUF_TRY(w.write(*out, o));
  return staged_file(std::move(*out), target, opt.flush);
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

/** Where `save_in_place` keeps the old header of `path` while it overwrites it: `path` + ".gguf-backup". */
inline std::filesystem::path in_place_backup_path(const std::filesystem::path& path) {
  std::filesystem::path p = path;
  p += ".gguf-backup";
  return p;
}

/**
 * Writes the saved header back over `path` after an interrupted `save_in_place`, flushes it, and removes
 * the backup.
 * @return nothing; `not_found` when there is no backup; `io_error` with the OS's reason
 */
inline result<void> restore_in_place_backup(const std::filesystem::path& path) {
  const std::filesystem::path backup = in_place_backup_path(path);
  std::error_code ec;
  if (!std::filesystem::exists(backup, ec)) {
    return error{errc::not_found, "no in-place backup to restore"}.about(backup.string());
  }
  auto saved = mapped_file::open(backup);
  if (!saved) return saved.error();
  auto f = output_file::open_existing(path);
  if (!f) return f.error();
  GGUF_TRY(f->write_at(0, saved->bytes()));
  GGUF_TRY(f->sync());
  std::filesystem::remove(backup, ec);
  output_file::sync_directory(backup);
  return {};
}

/**
 * Edits the file `w` was made from (`writer::from` of `path`'s parse) in place: only its header is
 * rewritten, which must fit before the tensor data exactly as the old one did (`writer::in_place_header`);
 * keys may change, tensors may be renamed, none added or removed.
 *
 * The old header is first saved to `in_place_backup_path(path)` (flushed), then overwritten and flushed,
 * then the backup is removed. On an error while overwriting, the old header is written back at once; a
 * crash leaves the backup for `restore_in_place_backup`.
 * @return nothing; `out_of_range` when the new header does not fit (write a new file with `save`);
 *         `io_error` with the OS's reason; `duplicate_key` when a backup of an earlier interrupted edit
 *         is still there (restore it first)
 */
inline result<void> save_in_place(const writer& w, const std::filesystem::path& path) {
  const std::filesystem::path backup = in_place_backup_path(path);
  std::error_code ec;
  if (std::filesystem::exists(backup, ec)) {
    return error{errc::duplicate_key, "an interrupted in-place edit left its backup: restore it first"}.about(
        backup.string());
  }
  auto header = w.in_place_header();
  if (!header) return header.error();
  auto f = output_file::open_existing(path);
  if (!f) return f.error();
  std::vector<std::byte> old(header->size());
  GGUF_TRY(f->read_at(0, old));
  if (old == *header) return {};  // nothing changes

  {  // 1. The old header, beside the file, flushed (and its name flushed) before anything is overwritten.
    auto saved = output_file::create_beside(backup);
    if (!saved) return saved.error();
    GGUF_TRY(saved->write(old));
    GGUF_TRY(saved->commit(backup));
  }
  // 2. The new header over the old, flushed; on an error, the old one back.
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
