#ifndef GGUF_SPLIT_HPP
#define GGUF_SPLIT_HPP

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
#include "gguf/save.hpp"

/**
 * @file
 * Splitting a model into shards and merging shards into one file, byte for byte as llama.cpp's
 * `gguf-split` does (for the same options, the same files), through `writer` and `save`: every file is
 * written beside its target, flushed and renamed, and a failure leaves no shard behind.
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
 * Splits `m` into shards `prefix-00001-of-0000n.gguf` ... as `gguf-split` does: the same options give the
 * same bytes (`shard_writer`). All shards are written and flushed beside their targets first, then
 * renamed into place: an error while writing (a full disk) leaves no shard, new or partial.
 * @param m      the model: one file, or shards (re-split)
 * @param prefix the shards' path before "-00001-of-0000n.gguf"
 * @param opt    how to split
 * @param save   flush, chunk size, and progress: called with the bytes written over all shards and their
 *               total
 * @return the paths written; or the plan's, a writer's or the disk's error
 */
inline result<std::vector<std::filesystem::path>> save_split(const model& m, const std::filesystem::path& prefix,
                                                             const split_options& opt = {},
                                                             const save_options& save = {}) {
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

  // 1. Every shard written and flushed beside its target.
  std::vector<staged_file> staged;
  staged.reserve(writers.size());
  std::uint64_t before = 0;  // bytes of the shards already written
  for (std::size_t k = 0; k < writers.size(); ++k) {
    save_options o = save;
    if (save.progress) {
      o.progress = [&save, before, total](std::uint64_t written, std::uint64_t) {
        save.progress(before + written, total);
      };
    }
    auto s = stage(writers[k], paths[k], o);
    if (!s) return s.error();  // the staged shards go with `staged`
    before += *writers[k].size();
    staged.push_back(std::move(*s));
  }
  // 2. All renamed into place. A rename that fails (rare: the disk is full by then) takes back the
  //    shards already renamed, so that no incomplete set is left.
  for (std::size_t k = 0; k < staged.size(); ++k) {
    if (auto r = staged[k].commit(); !r) {
      std::error_code ec;
      for (std::size_t j = 0; j < k; ++j) std::filesystem::remove(paths[j], ec);
      return r.error();
    }
  }
  return paths;
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
