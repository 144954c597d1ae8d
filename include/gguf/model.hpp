#ifndef GGUF_MODEL_HPP
#define GGUF_MODEL_HPP

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "gguf/format/shards.hpp"
#include "gguf/open.hpp"
#include "gguf/platform/paths.hpp"
#include "gguf/shard_set.hpp"
#include "gguf/split_journal.hpp"

/**
 * @file
 * A model as one thing, whether it is one file or shards written by llama.cpp's `gguf-split` or gguf-py:
 * `open_model` from any shard's path or the shards' name prefix, one tensor index across the shards,
 * validated as llama.cpp's loader validates a shard set, and more.
 */

GGUF_BEGIN_NAMESPACE

class model;
/// Its views point into the object: no `->` on a temporary `result<model>` (declared before any use of
/// that result, which would instantiate the primary template).
template <>
inline constexpr bool hands_out_views<model> = true;

/**
 * A model opened with `open_model`: one file, or every shard of a split model, mapped read-only, with
 * the metadata of the first shard and one tensor index across all shards. Each tensor's `data` is a view
 * into its own shard's mapping, so `dequantize` and everything else that takes a `tensor_info` works
 * unchanged. Shards are mapped lazily: opening reads headers, tensor bytes are paged in when touched.
 *
 * Like `mapped_gguf`, it owns the mappings (moving it is safe), and every accessor that returns a view is
 * deleted on temporaries.
 */
class model : public detail::model_accessors<model> {
 public:
  /**
   * Shard `k` (from 0), parsed and mapped: its own metadata (only the first has the model's), tensors
   * and bytes.
   */
  const mapped_gguf& shard(std::size_t k) const& noexcept { return set_.members()[k].file; }
  const mapped_gguf& shard(std::size_t k) const&& = delete;  ///< would dangle: keep the model in a variable
  /** The path of shard `k`. */
  const std::filesystem::path& shard_path(std::size_t k) const& noexcept { return set_.members()[k].id; }
  const std::filesystem::path& shard_path(std::size_t k) const&& = delete;  ///< would dangle

  /** The total size of the files, in bytes. */
  std::uint64_t file_bytes() const noexcept {
    std::uint64_t n = 0;
    for (const auto& s : set_.members()) n += s.file.bytes().size();
    return n;
  }

 private:
  friend result<model> open_model(const std::filesystem::path& path, const parse_options& opt);
  friend class detail::model_accessors<model>;
  using shards = detail::shard_set<mapped_gguf, std::filesystem::path>;
  explicit model(shards&& s) noexcept : set_(std::move(s)) {}
  shards set_;
};

/**
 * The files of a model by their names alone, without reading them: `path` itself when its name is not
 * a shard's; every shard's path (existing or not) when it is ("m-00002-of-00003.gguf" gives the three
 * "m-0000k-of-00003.gguf"); when no file has the path, the shards whose name starts with it ("m" finds
 * "m-00001-of-00003.gguf" and its siblings). `open_model` reads the count from the first shard's
 * metadata, which is what decides.
 * @return the paths in shard order; `io_error` (ENOENT, "cannot open file") when nothing matches, `bad_shards` when
 * shard sets of several counts share the prefix
 */
inline result<std::vector<std::filesystem::path>> find_shards(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path first = path;
  if (!fs::exists(path, ec)) {
    // A prefix: the first shard of the one set named after it.
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    const std::string want = detail::path_utf8(path.filename());
    std::vector<fs::path> found;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = detail::path_utf8(it->path().filename());
      const auto parts = parse_shard_name(name);
      if (parts && parts->index == 0 && parts->prefix == want)
        found.push_back(path.parent_path() / it->path().filename());
    }
    if (found.empty()) {
      // no file, no shards named after it: as `open` says of a missing file ("cannot open file: No such
      // file or directory"), so that every tool words it alike; the caller names the path
      return error{errc::io_error, "cannot open file"}.os(ENOENT);
    }
    if (found.size() > 1) {
      std::sort(found.begin(), found.end());
      return error{errc::bad_shards, "shard sets of several counts have this prefix: open one by a shard's name"}
          .about_file(detail::path_utf8(found[1].filename()));
    }
    first = found.front();
  }
  const std::string name = detail::path_utf8(first.filename());
  const auto parts = parse_shard_name(name);
  if (!parts) return std::vector<fs::path>{first};
  std::vector<fs::path> all;
  all.reserve(parts->count);
  for (std::uint32_t k = 0; k < parts->count; ++k) {
    all.push_back(first.parent_path() / detail::utf8_path(shard_name(parts->prefix, k, parts->count)));
  }
  return all;
}

/**
 * Opens a model: one GGUF file, or all the shards of a split model, from any shard's path or from the
 * shards' name prefix ("models/llama" for "models/llama-00001-of-00005.gguf" ...).
 *
 * The file at `path` (or the first shard of the prefix) decides: without `split.count`, or with a count
 * of 0 (a merged file) or 1, it is the whole model. Otherwise its name must be a shard's
 * (`NAME-%05d-of-%05d.gguf`, numbers from 1) and agree with its `split.no` and `split.count`, and the
 * other shards are found beside it by name. Every shard is then checked as llama.cpp's loader checks it,
 * and more: each is valid GGUF; each has `split.no` (its number in its name, from 0) and `split.count`
 * (the same in all); the first has `split.tensors.count`, equal to the tensors of all shards (and so does
 * any other shard that has the key); no tensor is in two shards. llama.cpp refuses to be given any shard
 * but the first; this accepts them all.
 *
 * @param path a shard, a whole file, or a prefix
 * @param opt  the parser's limits, for every shard
 * @return the model; or `io_error` (a file that cannot be opened: "a shard of the model is missing:
 *         'model-00003-of-00005.gguf'"), a parse error of one shard (its subject names the shard),
 *         `bad_shards` (numbers or counts that disagree), `duplicate_tensor` (a tensor in two shards),
 *         `type_mismatch` (a split key of another type than llama.cpp's), `pending_restore` (the set has
 *         the journal of an interrupted `save_split`: it may be half replaced)
 */
inline result<model> open_model(const std::filesystem::path& path, const parse_options& opt = {}) {
  namespace fs = std::filesystem;
  // A set caught in a swap by a crash may be a mix of old and new shards: never read it as one model.
  if (const auto journal = pending_split_journal(path)) {
    return error{errc::pending_restore,
                 "an interrupted gguf-split left this shard set half replaced: restore it first (gguf-split --restore)"}
        .about_file(detail::path_utf8(journal->filename()));
  }
  auto located = find_shards(path);
  if (!located) return located.error();
  // Opened by a shard's name, the model is opened by that shard; by a prefix, by the first.
  std::error_code ec;
  const fs::path given = fs::exists(path, ec) ? path : located->front();
  const std::string given_name = detail::path_utf8(given.filename());

  auto g = open(given, opt);
  if (!g) return parse_shard_name(given_name) ? detail::in_shard(g.error(), given_name) : g.error();
  const fs::path dir = given.parent_path();
  auto set = model::shards::assemble(given, given_name, std::move(*g), [&](const std::string& name) {
    fs::path p = dir / detail::utf8_path(name);
    auto s = open(p, opt);
    if (!s) return result<model::shards::member>(s.error());
    return result<model::shards::member>(model::shards::member{std::move(p), std::move(*s)});
  });
  if (!set) return set.error();
  return model(std::move(*set));
}

GGUF_END_NAMESPACE

#endif  // GGUF_MODEL_HPP
