#ifndef GGUF_FORMAT_SHARDS_HPP
#define GGUF_FORMAT_SHARDS_HPP

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/format/metadata.hpp"
#include "gguf/format/tensor_info.hpp"
#include "gguf/result.hpp"

/**
 * @file
 * Models split across files the way llama.cpp's `gguf-split` (and gguf-py) split them: the shard file
 * names, the three split keys (`split.no`, `split.count`, `split.tensors.count`), and the plan that decides which
 * tensors go to which shard. Standard library only: opening a sharded model is `gguf::open_model` (gguf/model.hpp),
 * writing shards `gguf::save_split` (gguf/split.hpp).
 *
 * A model in n shards is the files `PREFIX-00001-of-0000n.gguf` ... `PREFIX-0000n-of-0000n.gguf`
 * (numbers from 1 in names, 5 digits). The first shard holds all the metadata; every shard holds
 * `split.no` (uint16, its number from 0), `split.count` (uint16, n) and `split.tensors.count` (int32,
 * the tensors of the whole model), and its own tensors with their data.
 */

GGUF_BEGIN_NAMESPACE

/** The metadata keys of a sharded model (llama.cpp's LLM_KV_SPLIT_*). */
namespace split_keys {
/// uint16: the shard's number, from 0.
inline constexpr std::string_view no = "split.no";
/// uint16: the number of shards (a merged file keeps the key, set to 0).
inline constexpr std::string_view count = "split.count";
/// int32: the number of tensors in all shards together.
inline constexpr std::string_view tensors_count = "split.tensors.count";
}  // namespace split_keys

/** The most shards a model can have: `split.count` is a uint16. */
inline constexpr std::uint32_t max_shards = 65535;

/**
 * The file name of shard `index` (from 0) of `count`: `prefix` + "-%05d-of-%05d.gguf", as llama.cpp's
 * `llama_split_path` makes it ("model-00003-of-00005.gguf" for index 2 of 5).
 * @param prefix the path or name before the numbers
 * @param index  the shard's number, from 0
 * @param count  the number of shards
 */
inline std::string shard_name(std::string_view prefix, std::uint32_t index, std::uint32_t count) {
  char tail[40];
  std::snprintf(tail, sizeof tail, "-%05u-of-%05u.gguf", static_cast<unsigned>(index + 1),
                static_cast<unsigned>(count));
  std::string s(prefix);
  s += tail;
  return s;
}

/**
 * The journal of a shard set being replaced (`save_split`): `prefix` + ".gguf-split-journal", beside the
 * shards. While it exists the set may be half swapped: readers refuse the set and writers recover it
 * first (`recover_split`).
 * @param prefix the path or name before "-00001-of-0000n.gguf"
 */
inline std::string split_journal_name(std::string_view prefix) {
  std::string s(prefix);
  s += ".gguf-split-journal";
  return s;
}

/** What a shard's file name says: the prefix, the shard's number from 0, and the number of shards. */
struct shard_name_parts {
  std::string_view prefix;  ///< everything before "-00001-of-00005.gguf"
  std::uint32_t index = 0;  ///< the shard's number, from 0 (the name's number minus one)
  std::uint32_t count = 0;  ///< the number of shards the name says
};

/**
 * Reads a shard's file name: `PREFIX-NNNNN-of-MMMMM.gguf` with 1 <= NNNNN <= MMMMM (at least 5 digits
 * each, as `%05d` writes them; a number of 5 digits has no more than one form).
 * @param name a file name or path (the prefix keeps any directory)
 * @return the parts (views into `name`), or nothing when the name is not a shard's
 */
inline std::optional<shard_name_parts> parse_shard_name(std::string_view name) noexcept {
  constexpr std::string_view ext = ".gguf";
  if (name.size() < ext.size() || name.substr(name.size() - ext.size()) != ext) return std::nullopt;
  std::string_view rest = name.substr(0, name.size() - ext.size());
  // Reads the number that ends `rest`, as printed by %05u: at least 5 digits, no leading zero past them.
  const auto number = [&rest](std::uint32_t& out) {
    std::size_t digits = 0;
    while (digits < rest.size() && rest[rest.size() - 1 - digits] >= '0' && rest[rest.size() - 1 - digits] <= '9') {
      ++digits;
    }
    if (digits < 5 || digits > 10) return false;
    const std::string_view d = rest.substr(rest.size() - digits);
    if (digits > 5 && d[0] == '0') return false;
    std::uint64_t v = 0;
    for (char c : d) v = v * 10 + static_cast<std::uint64_t>(c - '0');
    if (v > max_shards) return false;
    out = static_cast<std::uint32_t>(v);
    rest.remove_suffix(digits);
    return true;
  };
  shard_name_parts p;
  std::uint32_t number_1 = 0;
  if (!number(p.count)) return std::nullopt;
  constexpr std::string_view of = "-of-";
  if (rest.size() < of.size() || rest.substr(rest.size() - of.size()) != of) return std::nullopt;
  rest.remove_suffix(of.size());
  if (!number(number_1)) return std::nullopt;
  if (rest.empty() || rest.back() != '-') return std::nullopt;
  rest.remove_suffix(1);
  if (number_1 < 1 || number_1 > p.count) return std::nullopt;
  p.prefix = rest;
  p.index = number_1 - 1;
  return p;
}

/** The split keys of one file, as far as it has them. */
struct split_keys_of_file {
  std::optional<std::uint16_t> no;            ///< `split.no`
  std::optional<std::uint16_t> count;         ///< `split.count`
  std::optional<std::int32_t> tensors_count;  ///< `split.tensors.count`
};

/**
 * Reads the split keys of a file's metadata, each of exactly the type llama.cpp reads it as.
 * @return the keys present; `type_mismatch` (naming the key) for one of another type
 */
inline result<split_keys_of_file> read_split_keys(const metadata_table& m) noexcept {
  split_keys_of_file k;
  if (m.contains(split_keys::no)) {
    auto v = m.get<std::uint16_t>(split_keys::no);
    if (!v) return v.error();
    k.no = *v;
  }
  if (m.contains(split_keys::count)) {
    auto v = m.get<std::uint16_t>(split_keys::count);
    if (!v) return v.error();
    k.count = *v;
  }
  if (m.contains(split_keys::tensors_count)) {
    auto v = m.get<std::int32_t>(split_keys::tensors_count);
    if (!v) return v.error();
    k.tensors_count = *v;
  }
  return k;
}

/** How to split a model into shards (llama.cpp's `gguf-split` options). */
struct split_options {
  /// At most this many tensors per shard (`--split-max-tensors`, llama.cpp's default 128); used when
  /// `max_bytes` is 0.
  std::uint32_t max_tensors = 128;
  /// At most this many bytes of tensor data per shard, each tensor counted padded to 32 bytes
  /// (`--split-max-size`; "4G" is 4e9). 0: split by `max_tensors`.
  std::uint64_t max_bytes = 0;
  /// The first shard holds only the metadata (`--no-tensor-first-split`): a reader can fetch it alone.
  bool metadata_only_first_shard = false;
};

/**
 * Which tensors go in which shard: shard k holds tensors `first[k]` to `first[k + 1] - 1` of the model in
 * order (the last one up to `n_tensors`).
 */
struct split_plan {
  std::vector<std::size_t> first;  ///< the first tensor of each shard; `first.size()` is the shard count
  std::size_t n_tensors = 0;       ///< the model's tensors

  /** The number of shards. */
  std::size_t size() const noexcept { return first.size(); }
  /** The number of tensors in shard `k`. */
  std::size_t tensors_in(std::size_t k) const noexcept {
    return (k + 1 < first.size() ? first[k + 1] : n_tensors) - first[k];
  }
};

/**
 * Plans the shards as llama.cpp's `gguf-split` does, so that the same options give the same shards:
 * by count, a new shard every `max_tensors` tensors; by size, a new shard when the next tensor (padded
 * to 32 bytes) would take the shard past `max_bytes`. One difference: a tensor larger than `max_bytes`
 * gets a shard of its own where gguf-split stops with "one of splits have 0 tensors" (when such a
 * tensor comes first).
 * @param tensors the model's tensors, in the order they will be written
 * @param opt     the limits
 * @return the plan; `out_of_range` for `max_tensors` 0 (without `max_bytes`), or more than 65535 shards
 */
inline result<split_plan> plan_split(std::span<const tensor_info> tensors, const split_options& opt) {
  if (opt.max_bytes == 0 && opt.max_tensors == 0) {
    return error{errc::out_of_range, "max_tensors must be at least 1"};
  }
  split_plan plan;
  plan.n_tensors = tensors.size();
  plan.first.push_back(0);
  if (opt.metadata_only_first_shard) plan.first.push_back(0);
  std::uint64_t shard_bytes = 0;  // tensor bytes in the current shard, each padded to 32 (GGUF_DEFAULT_ALIGNMENT)
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::uint64_t n = (tensors[i].n_bytes + 31) / 32 * 32;
    const bool shard_empty = plan.first.back() == i;
    bool split = false;
    if (opt.max_bytes != 0) {
      split = !shard_empty && shard_bytes + n > opt.max_bytes;
    } else {
      split = i > 0 && i % opt.max_tensors == 0;
    }
    if (split) {
      plan.first.push_back(i);
      shard_bytes = 0;
    }
    shard_bytes += n;
  }
  if (plan.first.size() > max_shards) {
    return error{errc::out_of_range, "more than 65535 shards: raise the limit per shard"};
  }
  return plan;
}

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_SHARDS_HPP
