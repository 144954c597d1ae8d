#ifndef GGUF_SPLIT_HPP
#define GGUF_SPLIT_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "gguf/format/shards.hpp"
#include "gguf/format/writer.hpp"
#include "gguf/model.hpp"
#include "gguf/platform/file_set_swap.hpp"
#include "gguf/platform/paths.hpp"
#include "gguf/save.hpp"
#include "gguf/split_journal.hpp"

/**
 * @file
 * Splitting a model into shards and merging shards into one file, byte for byte as llama.cpp's
 * `gguf-split` does (for the same options, the same files), through `writer` and `save`: every file is
 * written beside its target and flushed; a set of shards replaces the old set all-or-nothing, through a
 * journal that recovers an interrupted swap.
 */

GGUF_BEGIN_NAMESPACE

/**
 * The writer of shard `k` of `plan` for `m`, as `gguf-split` builds it: the first shard gets the model's
 * metadata; every shard gets `split.no` = k, `split.count` (set to 0 first, then to the count, which
 * moves it last, as gguf-split does), `split.tensors.count`, and its tensors, borrowed from `m`.
 * @param m    the model (its mappings must outlive the writer)
 * @param plan a plan for `m`'s tensors (`plan_split(m.tensors(), ...)`)
 * @param k    the shard, from 0
 * @return the writer; `out_of_range` for a `k` past the plan or more than INT32_MAX tensors
 */
inline result<writer> shard_writer(const model& m, const split_plan& plan, std::size_t k) {
  if (k >= plan.size() || plan.n_tensors != m.tensors().size()) {
    return error{errc::out_of_range, "no such shard in the plan, or a plan for another model"};
  }
  if (plan.n_tensors > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    return error{errc::out_of_range, "split.tensors.count is an int32: too many tensors"};
  }
  writer w = k == 0 ? writer::from_metadata(m.shard(0).info()) : writer();
  w.set_byte_order(m.shard(0).byte_order());
  GGUF_TRY(w.set(split_keys::no, value(static_cast<std::uint16_t>(k))));
  GGUF_TRY(w.set(split_keys::count, value(std::uint16_t{0})));
  GGUF_TRY(w.set(split_keys::tensors_count, value(static_cast<std::int32_t>(plan.n_tensors))));
  const std::span<const tensor_info> all = m.tensors();
  for (std::size_t i = plan.first[k], end = i + plan.tensors_in(k); i < end; ++i) {
    const tensor_info& t = all[i];
    GGUF_TRY(w.add_tensor(t.name, t.type, t.dims(), t.data, t.byte_order));
  }
  GGUF_TRY(w.set(split_keys::count, value(static_cast<std::uint16_t>(plan.size()))));
  return w;
}

/**
 * The paths `save_split` writes: `shard_name(prefix, k, n)` for each shard k of `n`.
 */
inline std::vector<std::filesystem::path> shard_paths(const std::filesystem::path& prefix, std::size_t n) {
  std::vector<std::filesystem::path> out;
  out.reserve(n);
  const std::string p = detail::path_utf8(prefix);
  for (std::size_t k = 0; k < n; ++k) {
    out.push_back(detail::utf8_path(shard_name(p, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(n))));
  }
  return out;
}

/**
 * The files beside `prefix` named as its shards (`PREFIX-NNNNN-of-MMMMM.gguf`, any count), in name
 * order: the set `save_split` replaces.
 * @return their names (not paths); `io_error` when the directory cannot be read
 */
inline result<std::vector<std::string>> existing_shards(const std::filesystem::path& prefix) {
  auto all = detail::directory_names(prefix.parent_path());
  if (!all) return all.error();
  const std::string want = detail::path_utf8(prefix.filename());
  std::vector<std::string> names;
  for (std::string& name : *all) {
    const auto parts = parse_shard_name(name);
    if (parts && parts->prefix == want) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

/**
 * Why `prefix` cannot name a shard set, if anything: empty, ending in a directory separator, naming an
 * existing directory, or holding a tab or newline (the journal's separators).
 * @return nothing, or `io_error` (EISDIR, ENOENT) / `out_of_range` saying why
 */
inline result<void> check_split_prefix(const std::filesystem::path& prefix) {
  namespace fs = std::filesystem;
  const std::string p = detail::path_utf8(prefix);
  if (p.empty() || !prefix.has_filename()) {
    return error{errc::io_error, "the prefix names a directory: give the shards' name after it (dir/model)"}.os(EISDIR);
  }
  if (p.find_first_of("\t\n") != std::string::npos) {
    return error{errc::out_of_range, "a shard prefix cannot hold a tab or a newline"};
  }
  std::error_code ec;
  if (fs::is_directory(prefix, ec)) {
    return error{errc::io_error, "the prefix names a directory: give the shards' name after it (dir/model)"}.os(EISDIR);
  }
  const fs::path dir = prefix.parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec)) {
    return error{errc::io_error, "the shards' directory does not exist"}.os(ENOENT).about_file(detail::path_utf8(dir));
  }
  return {};
}

/**
 * Splits `m` into shards `prefix-00001-of-0000n.gguf` ... as `gguf-split` does: the same options give the
 * same bytes (`shard_writer`). The shards that already have the prefix (of any count) are replaced
 * all-or-nothing (`swap_file_set`): every new shard is written beside its target and flushed, a journal
 * is written, the old shards are moved aside, the new ones renamed in, and the old ones removed. An error
 * leaves the old set as it was and no new file; a crash leaves the journal, which `recover_split` (and
 * `gguf-split --restore`) turns into exactly the old set or exactly the new one.
 * @param m      the model: one file, or shards (re-split)
 * @param prefix the shards' path before "-00001-of-0000n.gguf"
 * @param opt    how to split
 * @param save   flush, chunk size, and progress: called with the bytes written over all shards and their
 *               total
 * @return the paths written; or the plan's, a writer's or the disk's error (its subject names the shard);
 *         `pending_restore` when the set has a journal of an interrupted swap (`recover_split` first)
 */
inline result<std::vector<std::filesystem::path>> save_split(const model& m, const std::filesystem::path& prefix,
                                                             const split_options& opt = {},
                                                             const save_options& save = {}) {
  GGUF_TRY(check_split_prefix(prefix));
  const std::filesystem::path journal = split_journal_path(prefix);
  if (detail::exists_no_follow(journal)) {
    return error{errc::pending_restore,
                 "an interrupted gguf-split left a journal for this shard set (restore it "
                 "first: gguf-split --restore)"}
        .about_file(detail::path_utf8(journal.filename()));
  }
  auto plan = plan_split(m.tensors(), opt);
  if (!plan) return plan.error();
  std::vector<writer> writers;
  writers.reserve(plan->size());
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < plan->size(); ++k) {
    auto w = shard_writer(m, *plan, k);
    if (!w) return w.error();
    auto size = w->size();
    if (!size) return size.error();
    total += *size;
    writers.push_back(std::move(*w));
  }
  std::vector<std::filesystem::path> paths = shard_paths(prefix, plan->size());
  auto old = existing_shards(prefix);
  if (!old) return old.error();
  for (const std::filesystem::path& p : paths) {
    if (auto r = check_replaceable(p); !r) return r.error();
  }

  // 1. Every shard written and flushed beside its target (not through symlinks: a set lives in one
  //    directory, and a shard that is a link is replaced as a name).
  std::vector<std::pair<output_file, std::string>> staged;
  staged.reserve(writers.size());
  std::uint64_t before = 0;  // bytes of the shards already written
  for (std::size_t k = 0; k < writers.size(); ++k) {
    const std::string name = detail::path_utf8(paths[k].filename());
    write_options o = save;  // NOLINT(cppcoreguidelines-slicing): the writer's part of the options
    if (save.progress) {
      o.progress = [&save, before, total](std::uint64_t written, std::uint64_t) {
        save.progress(before + written, total);
      };
    }
    if (!o.done_with) o.done_with = [](std::span<const std::byte> range) { mapped_file::release(range); };
    auto out = output_file::create_beside(paths[k]);
    if (!out) {
      error e = out.error();
      return e.about_file(name);
    }
    out->set_write_behind(save.flush);
    auto written = writers[k].write(*out, o);
    if (written && save.flush) written = out->sync();
    if (!written) {
      error e = written.error();
      return e.subject().empty() ? e.about_file(name) : e;
    }
    before += *writers[k].size();
    staged.emplace_back(std::move(*out), name);
  }
  // 2. Swapped in: the first shard last, so that a set caught in between has no first shard (nothing
  //    loads it) rather than a mix of old and new shards.
  std::vector<std::pair<output_file, std::string>> last_first;
  last_first.reserve(staged.size());
  while (!staged.empty()) {
    last_first.push_back(std::move(staged.back()));
    staged.pop_back();
  }
  std::vector<std::string> old_names = std::move(*old);
  std::stable_partition(old_names.begin(), old_names.end(),
                        [](const std::string& n) { return parse_shard_name(n)->index == 0; });
  const std::filesystem::path dir = prefix.parent_path().empty() ? std::filesystem::path(".") : prefix.parent_path();
  GGUF_TRY(swap_file_set(dir, journal, last_first, old_names));
  return paths;
}

/**
 * Removes the stale temporaries of the shard set named by `prefix` (`sweep_temporaries` of every shard
 * name of the prefix, of any count, that has one, and of its journal): what a `save_split` killed before
 * its journal was written leaves. Call it after `recover_split`: a journal owns the temporaries it lists.
 * @return what was removed, and the temporaries a live process is writing
 */
inline result<sweep_report> sweep_split_temporaries(const std::filesystem::path& prefix) {
  auto names = detail::directory_names(prefix.parent_path());
  if (!names) return names.error();
  const std::string want = detail::path_utf8(prefix.filename());
  std::vector<std::string> targets = {split_journal_name(want)};
  for (const std::string& name : *names) {
    const std::size_t marker = name.rfind(detail::temporary_marker);
    if (name.size() < 2 || name[0] != '.' || marker == std::string::npos) continue;
    const std::string target = name.substr(1, marker - 1);
    const auto parts = parse_shard_name(target);
    if (parts && parts->prefix == want && std::find(targets.begin(), targets.end(), target) == targets.end()) {
      targets.push_back(target);
    }
  }
  sweep_report all;
  for (const std::string& target : targets) {
    auto r = sweep_temporaries(prefix.parent_path() / detail::utf8_path(target));
    if (!r) return r.error();
    all.removed.insert(all.removed.end(), r->removed.begin(), r->removed.end());
    all.in_use.insert(all.in_use.end(), r->in_use.begin(), r->in_use.end());
  }
  return all;
}

/** What `recover_split` did, if anything. */
enum class split_recovery : std::uint8_t {
  nothing,      ///< no journal: the set was not being swapped
  rolled_back,  ///< the swap had not committed: the old set is back
  completed,    ///< the swap had committed: the new set stays
};

/**
 * Recovers the shard set named by `prefix` (or by any shard's path) after an interrupted `save_split`:
 * exactly the old set or exactly the new one, and no journal, temporaries or moved-aside shards.
 * @return what it did; `size_mismatch` for an unreadable journal; `io_error` when a rename fails
 */
inline result<split_recovery> recover_split(const std::filesystem::path& prefix_or_shard) {
  const auto journal = pending_split_journal(prefix_or_shard);
  if (!journal) return split_recovery::nothing;
  auto r = recover_set_swap(*journal);
  if (!r) return r.error();
  return *r == swap_recovery::completed ? split_recovery::completed : split_recovery::rolled_back;
}

/** How `merged_writer` treats the split keys (`split.no`, `split.count`, `split.tensors.count`). */
struct merge_options {
  /// Keep them as llama.cpp's `gguf-split --merge` does: `split.no` and `split.tensors.count` stay,
  /// `split.count` becomes 0 and moves last. False: drop all three, so that splitting a file and merging
  /// it back gives the original bytes.
  bool keep_split_keys = true;
};

/**
 * The writer of one file holding every shard of `m`, as `gguf-split --merge` writes it: the first
 * shard's metadata (with the split keys as `opt` says), then every tensor, shard by shard.
 * @param m   the model (its mappings must outlive the writer)
 * @param opt what to do with the split keys
 * @return the writer, or the error of a key or tensor it refuses
 */
inline result<writer> merged_writer(const model& m, const merge_options& opt = {}) {
  writer w = writer::from_metadata(m.shard(0).info());
  if (opt.keep_split_keys) {
    GGUF_TRY(w.set(split_keys::count, value(std::uint16_t{0})));
  } else {
    w.remove(split_keys::no);
    w.remove(split_keys::count);
    w.remove(split_keys::tensors_count);
  }
  for (const tensor_info& t : m.tensors()) GGUF_TRY(w.add_tensor(t.name, t.type, t.dims(), t.data, t.byte_order));
  return w;
}

GGUF_END_NAMESPACE

#endif  // GGUF_SPLIT_HPP
