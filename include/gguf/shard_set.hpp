#ifndef GGUF_SHARD_SET_HPP
#define GGUF_SHARD_SET_HPP

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gguf/format/name_index.hpp"
#include "gguf/format/shards.hpp"
#include "gguf/read_header.hpp"
#include "gguf/result.hpp"

/**
 * @file
 * A shard set as llama.cpp's loader checks it, over any kind of shard: mapped files (`open_model`,
 * gguf/model.hpp) or headers read through byte sources (`read_model_header`, here: a pipe, a callback,
 * HTTP range requests), with one tensor index across the shards. No file system and no network here:
 * the caller says how a shard's bytes are read.
 */

GGUF_BEGIN_NAMESPACE

namespace detail {

/// `e` about shard `name` (its file name; "name: subject" when `e` already names a key or tensor).
inline error in_shard(error e, std::string_view name) {
  const std::string_view subject = e.subject();
  if (subject.empty()) return e.about_file(name);
  std::string s(name);
  s += ": ";
  s += subject;
  return e.about_file(s);
}

/**
 * The shards of a model and one tensor index across them: what `model` and `model_header` hold. `Shard`
 * is anything with `metadata()` and `tensors()` (`mapped_gguf`, `header_buffer`); `Id` says where a shard
 * came from (a path, a name, a URL).
 */
template <class Shard, class Id>
class shard_set {
 public:
  /// One shard and where it came from.
  struct member {
    Id id;       ///< where it was read from
    Shard file;  ///< the shard
  };

  /// The shards, in order.
  const std::vector<member>& members() const noexcept { return shards_; }

  /// Every tensor of every shard, shard by shard in file order.
  std::span<const tensor_info> tensors() const noexcept {
    return shards_.size() == 1 ? shards_.front().file.tensors() : std::span<const tensor_info>(tensors_);
  }

  /// The tensor with this name, in whichever shard it is; nullptr when there is none.
  const tensor_info* find_tensor(std::string_view name) const noexcept {
    if (shards_.size() == 1) return shards_.front().file.find_tensor(name);
    const std::size_t i = by_name_.find(name, [this](std::size_t k) { return tensors_[k].name; });
    return i == name_index::npos ? nullptr : &tensors_[i];
  }

  /// The shard holding a tensor of `tensors()`; `members().size()` for a tensor of another set.
  std::size_t shard_of(const tensor_info& t) const noexcept {
    const std::span<const tensor_info> all = tensors();
    if (all.empty() || &t < all.data() || &t >= all.data() + all.size()) return shards_.size();
    if (shards_.size() == 1) return 0;
    const auto i = static_cast<std::size_t>(&t - all.data());
    return static_cast<std::size_t>(std::upper_bound(first_.begin(), first_.end(), i) - first_.begin()) - 1;
  }

  /**
   * The set that the shard `given` (opened first, by the name `given_name`) belongs to. Without
   * `split.count`, or with a count of 0 (a merged file) or 1, it is the whole model. Otherwise its name
   * must be a shard's and agree with its split keys, and `open(name)` reads each other shard by its file
   * name, returning a `result<member>`. Every shard is checked as llama.cpp's loader checks it, and more
   * (see `open_model`).
   */
  template <class Open>
  static result<shard_set> assemble(Id given, const std::string& given_name, Shard&& g, Open&& open) {
    auto keys = read_split_keys(g.metadata());
    if (!keys) return in_shard(keys.error(), given_name);
    shard_set m;
    if (!keys->count || *keys->count <= 1) {  // one file: no split.count, a merged file's 0, or 1 of 1
      if (keys->tensors_count && static_cast<std::uint64_t>(*keys->tensors_count) != g.tensors().size()) {
        return error{errc::bad_shards, "split.tensors.count differs from the tensors in the file"}.about_file(
            given_name);
      }
      m.shards_.push_back({std::move(given), std::move(g)});
      return m;
    }
    // A shard: its name must say where it belongs.
    const std::uint32_t n = *keys->count;
    const auto parts = parse_shard_name(given_name);
    if (!parts) {
      return error{errc::bad_shards, "a shard's name must end in -0000k-of-0000n.gguf to find the others"}.about_file(
          given_name);
    }
    if (parts->count != n) {
      return error{errc::bad_shards, "split.count differs from the shard count in the file name"}.about_file(
          given_name);
    }
    m.prefix_ = parts->prefix;
    m.shards_.reserve(n);
    const auto take_given = [&] { return result<member>(member{std::move(given), std::move(g)}); };  // once
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::string name = shard_name(parts->prefix, k, n);
      result<member> s = k == parts->index ? take_given() : open(name);
      if (!s) {
        error e = s.error();
        if (e.code == errc::io_error && e.os_code == ENOENT) e.detail = "a shard of the model is missing";
        if (e.code == errc::io_error) return e.about_file(name);
        return in_shard(e, name);
      }
      if (error e = m.check_shard(s->file, k, n, name); e.code != errc::success) return e;
      m.shards_.push_back(std::move(*s));
    }
    if (error e = m.index(); e.code != errc::success) return e;
    return m;
  }

 private:
  // Shard k of n's split keys against its name and the first shard's.
  error check_shard(const Shard& s, std::uint32_t k, std::uint32_t n, const std::string& name) const {
    auto k_keys = read_split_keys(s.metadata());
    if (!k_keys) return in_shard(k_keys.error(), name);
    if (!k_keys->no) return error{errc::bad_shards, "a shard has no split.no"}.about_file(name);
    if (*k_keys->no != k) {
      return error{errc::bad_shards, "split.no differs from the shard number in the file name"}.about_file(name);
    }
    if (!k_keys->count) return error{errc::bad_shards, "a shard has no split.count"}.about_file(name);
    if (*k_keys->count != n) return error{errc::bad_shards, "split.count differs between shards"}.about_file(name);
    if (k == 0 && !k_keys->tensors_count) {
      return error{errc::bad_shards, "the first shard has no split.tensors.count"}.about_file(name);
    }
    if (k > 0 && k_keys->tensors_count &&
        *k_keys->tensors_count !=
            *shards_.front().file.metadata().template get<std::int32_t>(split_keys::tensors_count)) {
      return error{errc::bad_shards, "split.tensors.count differs between shards"}.about_file(name);
    }
    return {};
  }

  // One tensor index across the shards, checked against split.tensors.count.
  error index() {
    std::size_t total = 0;
    for (const member& s : shards_) total += s.file.tensors().size();
    tensors_.reserve(total);
    first_.reserve(shards_.size());
    for (const member& s : shards_) {
      first_.push_back(tensors_.size());
      tensors_.insert(tensors_.end(), s.file.tensors().begin(), s.file.tensors().end());
    }
    const std::size_t dup = by_name_.build(total, [&](std::size_t i) { return tensors_[i].name; });
    if (dup != name_index::npos) {
      return in_shard(error{errc::duplicate_tensor, "a tensor is in two shards"}.about(tensors_[dup].name),
                      name_of(shard_of(tensors_[dup])));
    }
    const std::int32_t declared =
        *shards_.front().file.metadata().template get<std::int32_t>(split_keys::tensors_count);
    if (declared < 0 || static_cast<std::uint64_t>(declared) != total) {
      return error{errc::bad_shards, "split.tensors.count differs from the tensors in the shards"}.about_file(
          name_of(0));
    }
    return {};
  }

  // The file name of shard k, for messages.
  std::string name_of(std::size_t k) const {
    return shard_name(prefix_, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(shards_.size()));
  }

  std::vector<member> shards_;
  std::vector<tensor_info> tensors_;  // every shard's, when there are several
  std::vector<std::size_t> first_;    // where each shard's tensors start in tensors_
  name_index by_name_;
  std::string prefix_;  // the shards' name prefix, when there are several
};

/**
 * What a model and a model_header both offer, over their shard set (`Derived::set_`): the accessors that
 * return views are deleted on temporaries.
 */
template <class Derived>
class model_accessors {
 public:
  /** The number of files: 1 for a model in one file. */
  std::size_t n_shards() const noexcept { return set().members().size(); }

  /** The model's metadata: the first shard's (with its split keys, when it has them). */
  const metadata_table& metadata() const& noexcept { return set().members().front().file.metadata(); }
  const metadata_table& metadata() const&& = delete;  ///< would dangle: keep the model in a variable

  /** Every tensor of every shard, shard by shard in file order. */
  std::span<const tensor_info> tensors() const& noexcept { return set().tensors(); }
  std::span<const tensor_info> tensors() const&& = delete;  ///< would dangle

  /**
   * The tensor with this name, in whichever shard it is.
   * @return the tensor info, or nullptr when there is none
   */
  const tensor_info* find_tensor(std::string_view name) const& noexcept { return set().find_tensor(name); }
  const tensor_info* find_tensor(std::string_view name) const&& = delete;  ///< would dangle

  /**
   * The shard holding a tensor of `tensors()`.
   * @param t a tensor of this model's `tensors()`
   * @return its shard's number, from 0; `n_shards()` for a tensor of another model
   */
  std::size_t shard_of(const tensor_info& t) const noexcept { return set().shard_of(t); }

 private:
  const auto& set() const noexcept { return static_cast<const Derived&>(*this).set_; }
};

}  // namespace detail

/// A shard's bytes for `read_model_header`: a byte source (see `read_header`) and the file's size.
template <byte_source Read>
struct sized_source {
  Read read;                          ///< the bytes, `read(offset, buffer)`
  std::uint64_t size = unknown_size;  ///< the file's size when known (then tensors are checked to lie in it)
};

class model_header;
template <class OpenSource>
result<model_header> read_model_header(std::string_view name, OpenSource&& open, const read_header_options& opt = {});
/// Its views point into the object: no `->` on a temporary `result<model_header>`.
template <>
inline constexpr bool hands_out_views<model_header> = true;

/**
 * The headers of a model, one file or every shard of a split model, read through byte sources with
 * `read_model_header` (no mapping, no tensor data): the metadata of the first shard and one index of
 * every shard's tensor infos. What `gguf::facts` and `estimate_memory` need, for a model that is not on
 * this machine. Moving it keeps every view valid.
 */
class model_header : public detail::model_accessors<model_header> {
 public:
  /** Shard `k` (from 0): its own header (only the first has the model's metadata). */
  const header_buffer& shard(std::size_t k) const& noexcept { return set_.members()[k].file; }
  const header_buffer& shard(std::size_t k) const&& = delete;  ///< would dangle
  /** The file name shard `k` was read by. */
  const std::string& shard_name(std::size_t k) const& noexcept { return set_.members()[k].id; }
  const std::string& shard_name(std::size_t k) const&& = delete;  ///< would dangle
  /** The size of shard `k`'s file, as its source said (`unknown_size` when it did not). */
  std::uint64_t file_size(std::size_t k) const noexcept { return sizes_[k]; }
  /** The number of reads the byte sources were asked for, over every shard. */
  std::size_t reads() const noexcept {
    std::size_t n = 0;
    for (const auto& m : set_.members()) n += m.file.reads();
    return n;
  }

 private:
  template <class OpenSource>
  friend result<model_header> read_model_header(std::string_view name, OpenSource&& open,
                                                const read_header_options& opt);
  friend class detail::model_accessors<model_header>;
  model_header(detail::shard_set<header_buffer, std::string>&& s, std::vector<std::uint64_t>&& sizes) noexcept
      : set_(std::move(s)), sizes_(std::move(sizes)) {}
  detail::shard_set<header_buffer, std::string> set_;
  std::vector<std::uint64_t> sizes_;  // each shard's file size
};

/**
 * Reads the headers of a model, one file or every shard of a split model, each through a byte source: the
 * shard set of `open_model` without mapping a file. The shard named `name` decides, as in `open_model`;
 * the other shards are read by their file names, found from its name.
 *
 * @param name   the file name of the model or of any of its shards ("m-00002-of-00003.gguf")
 * @param open   `open(std::string_view name)` returns a `result<sized_source<Read>>` for the file of that
 *               name; an `io_error` with ENOENT reads as a missing shard
 * @param opt    the first read's size and the parser's limits, for every shard; `max_metadata_bytes`
 *               also bounds the bytes of every shard's header held together
 * @return the model's headers; or the errors of `open_model`, each naming its shard; `limit_exceeded`
 *         when the headers together exceed `max_metadata_bytes`
 */
template <class OpenSource>
result<model_header> read_model_header(std::string_view name, OpenSource&& open, const read_header_options& opt) {
  using set = detail::shard_set<header_buffer, std::string>;
  std::vector<std::pair<std::string, std::uint64_t>> sizes;  // every file read, and its size
  std::uint64_t held = 0;  // the bytes of the headers read: the limit of one header bounds them all
  const auto read_one = [&](std::string_view file) -> result<set::member> {
    auto src = open(file);
    if (!src) return src.error();
    sizes.emplace_back(std::string(file), src->size);
    auto h = read_header(src->read, src->size, opt);
    if (!h) return h.error();
    held += h->bytes().size();
    if (held > opt.parse.max_metadata_bytes) {
      return error{errc::limit_exceeded, "the shards' headers exceed max_metadata_bytes in all"};
    }
    return set::member{std::string(file), std::move(*h)};
  };
  const std::string given(name);
  auto first = read_one(given);
  if (!first) return parse_shard_name(given) ? detail::in_shard(first.error(), given) : first.error();
  auto s = set::assemble(std::move(first->id), given, std::move(first->file),
                         [&](const std::string& file) { return read_one(file); });
  if (!s) return s.error();
  std::vector<std::uint64_t> shard_sizes;
  for (const auto& m : s->members()) {
    const auto it = std::find_if(sizes.begin(), sizes.end(), [&](const auto& e) { return e.first == m.id; });
    shard_sizes.push_back(it == sizes.end() ? unknown_size : it->second);
  }
  return model_header(std::move(*s), std::move(shard_sizes));
}

GGUF_END_NAMESPACE

#endif  // GGUF_SHARD_SET_HPP
