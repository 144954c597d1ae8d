#ifndef GGUF_SPLIT_JOURNAL_HPP
#define GGUF_SPLIT_JOURNAL_HPP

#include "gguf/version.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "gguf/format/shards.hpp"
#include "gguf/platform/paths.hpp"

/**
 * @file
 * Where the journal of a shard set lies, and whether one is pending: the one place that maps a shard's
 * path (or a set's prefix) to its set and journal, for the readers that refuse a half-swapped set, the
 * writers that must not replace one of its shards, and `recover_split`.
 */

GGUF_BEGIN_NAMESPACE

/**
 * The prefix of the shard set `path` names: for a shard's path ("dir/m-00002-of-00005.gguf") the path
 * before the numbers ("dir/m"); any other path is taken as a prefix itself.
 */
inline std::filesystem::path split_prefix_of(const std::filesystem::path& path) {
  const std::string name = detail::path_utf8(path.filename());
  const auto parts = parse_shard_name(name);
  return parts ? path.parent_path() / detail::utf8_path(parts->prefix) : path;
}

/** The journal of the shard set named by `prefix`: `prefix` + ".gguf-split-journal" (`split_journal_name`). */
inline std::filesystem::path split_journal_path(const std::filesystem::path& prefix) {
  return detail::utf8_path(split_journal_name(detail::path_utf8(prefix)));
}

/**
 * The journal an interrupted `save_split` left for the set `path` belongs to (a shard's path or the
 * prefix), when there is one: the set may then be half swapped.
 */
inline std::optional<std::filesystem::path> pending_split_journal(const std::filesystem::path& path) {
  std::filesystem::path journal = split_journal_path(split_prefix_of(path));
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(journal, ec))) return journal;
  return std::nullopt;
}

GGUF_END_NAMESPACE

#endif  // GGUF_SPLIT_JOURNAL_HPP
