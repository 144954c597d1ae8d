#ifndef GGUF_FORMAT_WRITER_HPP
#define GGUF_FORMAT_WRITER_HPP

#include "gguf/version.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/detail/endian.hpp"
#include "gguf/format/byte_order.hpp"
#include "gguf/format/file.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/format/owned_value.hpp"
#include "gguf/format/sink.hpp"
#include "gguf/format/tensor_info.hpp"
#include "gguf/format/value.hpp"
#include "gguf/result.hpp"

/**
 * @file
 * Writing GGUF files: `writer` holds keys and tensors (new ones, or borrowed from a parsed file) and
 * writes them to a `sink` in exactly the layout ggml's `gguf_write_to_file` produces. Standard library
 * only: files, atomic replacement and in-place edits are in gguf/save.hpp.
 */

GGUF_BEGIN_NAMESPACE

/**
 * Produces a tensor's bytes on demand, for tensors too big to hold (a converter or quantizer writing
 * layer by layer): called with consecutive ranges, it fills `out` with the bytes at `offset` of the
 * tensor's data, in the byte order given to `add_tensor`.
 */
using tensor_producer = std::function<result<void>(std::uint64_t offset, std::span<std::byte> out)>;

/** How `writer::write` streams. */
struct write_options {
  /// The largest piece of tensor data held or converted at a time (memory stays O(metadata + this)).
  std::size_t chunk_bytes = std::size_t{4} << 20;
  /// Called after each chunk with the bytes written so far and the total: progress for a person.
  std::function<void(std::uint64_t written, std::uint64_t total)> progress;
  /// Asked after the header and after each chunk: true stops the write with `errc::cancelled`, as any
  /// error stops it (so `save`, `stage`, `save_split` and `quantize_model` leave no file behind). For a
  /// user's interrupt, or a binding's (Python's Ctrl-C).
  std::function<bool()> stop;
  /// Called with each range of borrowed tensor data once written, so a mapping can drop its pages
  /// (`gguf::save` passes `mapped_file::release`): peak memory stays bounded for files larger than RAM.
  std::function<void(std::span<const std::byte>)> done_with;
};

/**
 * A GGUF file to write: metadata in the order added, tensors in the order added, written in the
 * layout of ggml's `gguf_write_to_file` (for the same keys and tensors in the same order, the same
 * bytes): header, key/values, tensor infos (n_dims without trailing 1s; offsets packed, each tensor
 * padded to the alignment), padding to the alignment (even without tensors), the data.
 *
 * Start empty, or from a parsed file (`writer::from`), whose keys and tensor data it borrows: the file's
 * bytes must outlive the writer. Every change is checked when it is made, so a writer never produces a
 * file this library's reader would refuse (ggml's reader refuses more: arrays of arrays, v1, big-endian
 * files). Writes version 3, or 2 when the source file is v2 (as ggml), little-endian unless asked.
 */
class writer {
 public:
  /** An empty file: version 3, little-endian, no keys, no tensors. */
  writer() = default;

  /**
   * A writer holding everything of `f`: its keys in order (values are views into `f`'s bytes) and its
   * tensors (their data borrowed from `f`, in `f`'s byte order). Version: `f`'s if 2 or 3, else 3;
   * byte order: `f`'s.
   * @param f a parsed file; its bytes must outlive the writer
   */
  static writer from(const file& f) {
    writer w;
    w.version_ = f.version() == 2 ? 2 : 3;
    w.order_ = f.byte_order();
    w.source_data_offset_ = f.data_offset();
    w.source_tensors_ = f.tensors().size();
    w.keys_.reserve(f.metadata().size());
    for (const metadata_entry& e : f.metadata()) w.keys_.push_back(entry{std::string(e.key), std::nullopt, e.value});
    w.tensors_.reserve(f.tensors().size());
    for (const tensor_info& t : f.tensors()) {
      tensor_entry te;
      te.name = std::string(t.name);
      te.type = t.type;
      te.ne = t.ne;
      te.n_bytes = t.n_bytes;
      te.data = t.data;
      te.order = t.byte_order;
      te.source_offset = t.offset;
      w.tensors_.push_back(std::move(te));
    }
    return w;
  }

  /**
   * A writer holding `f`'s keys in order (views into `f`'s bytes) and no tensors: the start of a file
   * that keeps a model's metadata with other tensors (a shard, a merged model, a quantized copy).
   * Version 3 (as ggml's `gguf_init_empty` + `gguf_set_kv`); byte order: `f`'s.
   * @param f a parsed file; its bytes must outlive the writer
   */
  static writer from_metadata(const file& f) {
    writer w;
    w.order_ = f.byte_order();
    w.keys_.reserve(f.metadata().size());
    for (const metadata_entry& e : f.metadata()) w.keys_.push_back(entry{std::string(e.key), std::nullopt, e.value});
    return w;
  }

  // ---- Header ---------------------------------------------------------------------------------

  /** The version written: 2 or 3. */
  std::uint32_t version() const noexcept { return version_; }
  /**
   * Sets the version written (2 and 3 have the same layout; v1's 32-bit fields are not written).
   * @return nothing, or `bad_version` for another version
   */
  result<void> set_version(std::uint32_t v) noexcept {
    if (v != 2 && v != 3) return {errc::bad_version, "only versions 2 and 3 are written"};
    version_ = v;
    return {};
  }
  /** The byte order written. */
  std::endian byte_order() const noexcept { return order_; }
  /**
   * Sets the byte order written: a big-endian file holds big-endian tensors, converted on the way
   * (gguf/format/byte_order.hpp); converting back gives the original bytes.
   */
  void set_byte_order(std::endian order) noexcept { order_ = order; }
  /** The data alignment: `general.alignment` (a uint32 power of two), or 32. */
  std::uint32_t alignment() const noexcept {
    const entry* e = find(alignment_key);
    return e ? *e->view().get<std::uint32_t>() : default_alignment;
  }

  // ---- Metadata -------------------------------------------------------------------------------

  /** The number of keys. */
  std::size_t n_keys() const noexcept { return keys_.size(); }
  /** Key `i` in file order. */
  std::string_view key(std::size_t i) const noexcept { return keys_[i].key; }
  /** The value of key `i` (a view valid while the writer and its source live, until the key changes). */
  value_view value_at(std::size_t i) const noexcept { return keys_[i].view(); }
  /**
   * The value of a key.
   * @return a view (valid while the writer and its source live, until the key changes), or `not_found`
   */
  result<value_view> get(std::string_view key) const noexcept {
    const entry* e = find(key);
    if (!e) return error{errc::not_found, "no such metadata key"}.about(key);
    return e->view();
  }
  /** True when the key is present. */
  bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }

  /**
   * Sets a key as ggml's `gguf_set_val_*` does: an existing key is removed and the new one appended
   * last (so `gguf-edit --set` gives ggml's bytes).
   * @param key the key (not empty)
   * @param v   the value
   * @return nothing; `empty_key`, `bad_alignment` (general.alignment must be a uint32 power of two),
   *         `limit_exceeded` (a key over 65535 bytes, or a value a reader would refuse: a string over
   *         1 GiB, an array over 2^30 items or nested over 64 deep), `out_of_range` (a key with a byte
   *         that is not printable ASCII, which the spec forbids)
   */
  result<void> set(std::string_view key, value v) {
    GGUF_TRY(check_key(key, v.view()));
    remove(key);
    keys_.push_back(entry{std::string(key), std::move(v), value_view{}});
    return {};
  }
  /**
   * Sets a key in place: an existing key keeps its position (`set` moves it last, as ggml); a new key is
   * appended.
   * @return the errors of `set`
   */
  result<void> replace(std::string_view key, value v) {
    GGUF_TRY(check_key(key, v.view()));
    if (entry* e = find(key)) {
      e->owned = std::move(v);
      return {};
    }
    keys_.push_back(entry{std::string(key), std::move(v), value_view{}});
    return {};
  }
  /**
   * Removes a key (ggml's `gguf_remove_key`).
   * @return true when there was one
   */
  bool remove(std::string_view key) {
    const auto it = std::find_if(keys_.begin(), keys_.end(), [&](const entry& e) { return e.key == key; });
    if (it == keys_.end()) return false;
    keys_.erase(it);
    return true;
  }
  /**
   * Renames a key, keeping its position and value.
   * @return nothing; `not_found`, `duplicate_key` (the new name exists), `empty_key`, or `bad_alignment`
   *         (a value that cannot be general.alignment)
   */
  result<void> rename(std::string_view from, std::string_view to) {
    entry* e = find(from);
    if (!e) return error{errc::not_found, "no such metadata key"}.about(from);
    if (from == to) return {};
    if (find(to)) return error{errc::duplicate_key, "a key of that name exists"}.about(to);
    GGUF_TRY(check_key(to, e->view()));
    e->key = std::string(to);
    return {};
  }

  // ---- Tensors --------------------------------------------------------------------------------

  /** The number of tensors. */
  std::size_t n_tensors() const noexcept { return tensors_.size(); }
  /** Tensor `i`'s name. */
  std::string_view tensor_name(std::size_t i) const noexcept { return tensors_[i].name; }
  /** Tensor `i`'s type. */
  ggml_type tensor_type(std::size_t i) const noexcept { return tensors_[i].type; }
  /** Tensor `i`'s byte size. */
  std::uint64_t tensor_bytes(std::size_t i) const noexcept { return tensors_[i].n_bytes; }

  /**
   * Adds a tensor whose bytes you hold (borrowed: they must outlive the writer).
   * @param name  at most 63 bytes, unique
   * @param type  its type
   * @param ne    its dimensions, innermost first (`ne[0]` the row length), at most 4
   * @param data  exactly its bytes: ne[0] / block_size * type_size * ne[1] * ...
   * @param order the byte order of `data` (converted to the file's when they differ)
   * @return nothing; `bad_tensor_name`, `duplicate_tensor`, `bad_tensor_type`, `bad_dimensions`,
   *         `bad_row_size`, `overflow`, or `size_mismatch` when `data` is not exactly the tensor's size
   */
  result<void> add_tensor(std::string_view name, ggml_type type, std::span<const std::uint64_t> ne,
                          std::span<const std::byte> data, std::endian order = std::endian::little) {
    tensor_entry te;
    GGUF_TRY(make_tensor(te, name, type, ne));
    if (data.size() != te.n_bytes) {
      return error{errc::size_mismatch, "tensor data size does not match its type and shape"}.about(name);
    }
    te.data = data;
    te.order = order;
    tensors_.push_back(std::move(te));
    return {};
  }
  /**
   * Adds a tensor whose bytes a function produces while the file is written, a chunk at a time.
   * @param name    at most 63 bytes, unique
   * @param type    its type
   * @param ne      its dimensions, innermost first, at most 4
   * @param produce called with consecutive ranges of the tensor's data (see `tensor_producer`)
   * @param order   the byte order the producer writes in
   * @return the errors of the other `add_tensor`, but `size_mismatch`
   */
  result<void> add_tensor(std::string_view name, ggml_type type, std::span<const std::uint64_t> ne,
                          tensor_producer produce, std::endian order = std::endian::little) {
    tensor_entry te;
    GGUF_TRY(make_tensor(te, name, type, ne));
    te.produce = std::move(produce);
    te.order = order;
    tensors_.push_back(std::move(te));
    return {};
  }
  /**
   * Removes a tensor.
   * @return true when there was one
   */
  bool remove_tensor(std::string_view name) {
    const auto it =
        std::find_if(tensors_.begin(), tensors_.end(), [&](const tensor_entry& t) { return t.name == name; });
    if (it == tensors_.end()) return false;
    tensors_.erase(it);
    return true;
  }
  /**
   * Renames a tensor, keeping its position and data.
   * @return nothing; `not_found`, `duplicate_tensor` or `bad_tensor_name`
   */
  result<void> rename_tensor(std::string_view from, std::string_view to) {
    const auto it =
        std::find_if(tensors_.begin(), tensors_.end(), [&](const tensor_entry& t) { return t.name == from; });
    if (it == tensors_.end()) return error{errc::not_found, "no such tensor"}.about(from);
    if (from == to) return {};
    GGUF_TRY(check_tensor_name(to));
    it->name = std::string(to);
    return {};
  }

  // ---- Output ---------------------------------------------------------------------------------

  /**
   * Everything before the data section: header, key/values, tensor infos and the padding (what ggml
   * writes with `only_meta`).
   * @return the bytes; `limit_exceeded` when they would pass the reader's `max_metadata_bytes` (256 MiB)
   */
  result<std::vector<std::byte>> header() const { return build_header(false); }

  /**
   * The header for an in-place edit of the file this writer was made from (`from`): the same tensors in
   * the same order at the same offsets, so that no tensor byte moves, padded to end exactly where the
   * source's data section starts.
   * @return the bytes to write over the source's first `data_offset()` bytes; `out_of_range` when they do
   *         not fit there (then write a new file instead), `size_mismatch` when the tensors changed
   */
  result<std::vector<std::byte>> in_place_header() const {
    if (!source_data_offset_) return {errc::out_of_range, "the writer was not made from a file (writer::from)"};
    if (tensors_.size() != source_tensors_) {
      return {errc::size_mismatch, "tensors were removed: their data would leave a gap (write a new file instead)"};
    }
    for (const tensor_entry& t : tensors_) {
      if (!t.source_offset)
        return error{errc::size_mismatch, "a tensor was added: its data must be written"}.about(t.name);
    }
    return build_header(true);
  }

  /**
   * The size of the whole file `write` writes.
   * @return the size in bytes, or the error `header()` gives
   */
  result<std::uint64_t> size() const {
    auto h = header();
    if (!h) return h.error();
    std::uint64_t n = h->size();
    for (const tensor_entry& t : tensors_) n += pad(t.n_bytes, alignment());
    return n;
  }

  /**
   * Writes the whole file to `out`: the header, then each tensor's data (streamed from its source in
   * chunks of at most `opt.chunk_bytes`, converted to the file's byte order when it differs) followed by
   * zeros to the alignment.
   * @return nothing, or the first error: the header's, a producer's, the sink's
   */
  result<void> write(sink& out, const write_options& opt = {}) const {
    auto h = header();
    if (!h) return h.error();
    std::uint64_t total = h->size();
    const std::uint32_t align = alignment();
    for (const tensor_entry& t : tensors_) total += pad(t.n_bytes, align);
    GGUF_TRY(out.write(*h));
    std::uint64_t written = h->size();
    if (opt.progress) opt.progress(written, total);
    const auto stopped = [&opt] { return opt.stop && opt.stop(); };
    if (stopped()) return error{errc::cancelled, "the write was stopped"};

    std::vector<std::byte> buffer;  // for converted or produced data only
    static constexpr std::byte zeros[256] = {};
    for (const tensor_entry& t : tensors_) {
      const std::size_t block = traits(t.type).type_size;
      const std::size_t chunk = std::max<std::size_t>(block, opt.chunk_bytes / block * block);
      const bool swap = t.order != order_ && !block_fields(t.type).empty();
      for (std::uint64_t at = 0; at < t.n_bytes; at += chunk) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, t.n_bytes - at));
        std::span<const std::byte> piece;
        if (!t.produce && !swap) {
          piece = t.data.subspan(static_cast<std::size_t>(at), n);
        } else {
          buffer.resize(n);
          if (t.produce) {
            GGUF_TRY(t.produce(at, buffer));
          } else {
            std::memcpy(buffer.data(), t.data.data() + at, n);
          }
          if (swap) swap_blocks(t.type, buffer);
          piece = buffer;
        }
        GGUF_TRY(out.write(piece));
        if (!t.produce && opt.done_with) opt.done_with(t.data.subspan(static_cast<std::size_t>(at), n));
        written += n;
        if (opt.progress) opt.progress(written, total);
        if (stopped()) return error{errc::cancelled, "the write was stopped"};
      }
      for (std::uint64_t left = pad(t.n_bytes, align) - t.n_bytes; left > 0;) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, sizeof zeros));
        GGUF_TRY(out.write(std::span<const std::byte>(zeros, n)));
        left -= n;
        written += n;
      }
    }
    if (opt.progress && !tensors_.empty()) opt.progress(written, total);
    return {};
  }

 private:
  static constexpr std::string_view alignment_key = "general.alignment";

  struct entry {
    std::string key;
    std::optional<value> owned;  // a value set through the writer
    value_view borrowed;         // or a view into the source file
    value_view view() const noexcept { return owned ? owned->view() : borrowed; }
  };

  struct tensor_entry {
    std::string name;
    ggml_type type = ggml_type::f32;
    std::array<std::uint64_t, max_dims> ne{1, 1, 1, 1};
    std::uint64_t n_bytes = 0;
    std::span<const std::byte> data;             // borrowed bytes, or
    tensor_producer produce;                     // a producer
    std::endian order = std::endian::little;     // of data / produce
    std::optional<std::uint64_t> source_offset;  // from writer::from: where its data is in the source
  };

  static constexpr std::uint64_t pad(std::uint64_t x, std::uint64_t a) noexcept { return (x + a - 1) / a * a; }

  entry* find(std::string_view key) noexcept {
    for (entry& e : keys_) {
      if (e.key == key) return &e;
    }
    return nullptr;
  }
  const entry* find(std::string_view key) const noexcept {
    for (const entry& e : keys_) {
      if (e.key == key) return &e;
    }
    return nullptr;
  }

  static constexpr std::size_t max_key_length = 65535;

  // What the spec forbids in a key, and what the reader (with default parse_options) would refuse in its
  // value.
  static result<void> check_key(std::string_view key, const value_view& v) {
    if (key.empty()) return {errc::empty_key, "metadata key is empty"};
    const parse_options limits;
    // The spec: a key is ASCII, at most 65535 bytes. Control characters are refused too: no key means
    // one, and they would break every tool that prints keys one a line.
    if (key.size() > max_key_length) {
      return error{errc::limit_exceeded, "key longer than 65535 bytes (the GGUF spec's limit)"}.about(
          key.substr(0, 40));
    }
    for (const char c : key) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7F) {
        return error{errc::out_of_range, "a key is printable ASCII (the GGUF spec): this one has another byte"}.about(
            key);
      }
    }
    if (key == alignment_key) {
      const auto a = v.get<std::uint32_t>();
      if (!a) return error{errc::bad_alignment, "general.alignment must be a uint32"}.about(key);
      if (*a == 0 || (*a & (*a - 1)) != 0) {
        return error{errc::bad_alignment, "general.alignment must be a non-zero power of two"}.about(key);
      }
    }
    GGUF_TRY(check_value(v, 0, limits));
    return {};
  }
  static result<void> check_value(const value_view& v, std::uint32_t depth, const parse_options& limits) {
    if (v.is_string() && v.bytes().size() > limits.max_string_length) {
      return {errc::limit_exceeded, "string longer than max_string_length"};
    }
    if (!v.is_array()) return {};
    if (depth + 1 > limits.max_depth) return {errc::too_deep, "arrays nested deeper than max_depth"};
    const array_view a = *v.get<array_view>();
    if (a.size() > limits.max_array_length) return {errc::limit_exceeded, "array longer than max_array_length"};
    if (a.item_type() == value_type::string || a.item_type() == value_type::array) {
      for (const value_view item : a) GGUF_TRY(check_value(item, depth + 1, limits));
    }
    return {};
  }

  result<void> check_tensor_name(std::string_view name) const {
    if (name.size() >= 64) return error{errc::bad_tensor_name, "tensor name longer than 63 bytes"}.about(name);
    for (const tensor_entry& t : tensors_) {
      if (t.name == name) return error{errc::duplicate_tensor, "a tensor of that name exists"}.about(name);
    }
    return {};
  }

  // The parser's rules for a tensor info, applied before it can be written.
  result<void> make_tensor(tensor_entry& te, std::string_view name, ggml_type type,
                           std::span<const std::uint64_t> ne) const {
    GGUF_TRY(check_tensor_name(name));
    const type_traits* tt = find_type(static_cast<std::uint32_t>(type));
    if (!tt) return error{errc::bad_tensor_type, "unknown or removed tensor type"}.about(name);
    if (ne.size() > max_dims) return error{errc::bad_dimensions, "more than 4 dimensions"}.about(name);
    constexpr std::uint64_t imax = std::numeric_limits<std::int64_t>::max();
    std::array<std::uint64_t, max_dims> d{1, 1, 1, 1};
    for (std::size_t i = 0; i < ne.size(); ++i) {
      if (ne[i] > imax) return error{errc::bad_dimensions, "dimension above INT64_MAX"}.about(name);
      d[i] = ne[i];
    }
    const bool has_zero = d[0] == 0 || d[1] == 0 || d[2] == 0 || d[3] == 0;
    if (!has_zero && (imax / d[1] <= d[0] || imax / d[2] <= d[0] * d[1] || imax / d[3] <= d[0] * d[1] * d[2])) {
      return error{errc::overflow, "tensor element count overflows"}.about(name);
    }
    if (d[0] % tt->block_size != 0) {
      return error{errc::bad_row_size, "ne[0] is not a multiple of the block size"}.about(name);
    }
    const std::uint64_t elements = d[0] * d[1] * d[2] * d[3];
    if (elements / tt->block_size > std::numeric_limits<std::uint64_t>::max() / tt->type_size) {
      return error{errc::overflow, "tensor byte size overflows"}.about(name);
    }
    te.name = std::string(name);
    te.type = type;
    te.ne = d;
    te.n_bytes = elements / tt->block_size * tt->type_size;
    return {};
  }

  // ggml_n_dims: the dimensions up to the last that is not 1 (at least one). A dimension of 0 counts as
  // not 1 here: ggml would drop a trailing 0 and so change the tensor's size.
  static std::uint32_t n_dims(const std::array<std::uint64_t, max_dims>& ne) noexcept {
    for (std::uint32_t i = max_dims - 1; i >= 1; --i) {
      if (ne[i] != 1) return i + 1;
    }
    return 1;
  }

  // ---- Encoding -------------------------------------------------------------------------------

  struct encoder {
    std::vector<std::byte>& out;
    bool swap;  // the target's byte order is not the host's

    template <class T>
    void put(T x) {
      using U = typename detail::unsigned_of_size<sizeof(T)>::type;
      U u = std::bit_cast<U>(x);
      if (swap) u = detail::byteswap_unsigned(u);
      const std::size_t at = out.size();
      out.resize(at + sizeof(U));
      std::memcpy(out.data() + at, &u, sizeof(U));
    }
    void bytes(std::span<const std::byte> b) { out.insert(out.end(), b.begin(), b.end()); }
    void string(std::string_view s) {
      put(static_cast<std::uint64_t>(s.size()));
      bytes(std::as_bytes(std::span<const char>(s.data(), s.size())));
    }
    void payload(const value_view& v) {
      switch (v.type()) {
        case value_type::uint8: put(*v.get<std::uint8_t>()); break;
        case value_type::int8: put(*v.get<std::int8_t>()); break;
        case value_type::uint16: put(*v.get<std::uint16_t>()); break;
        case value_type::int16: put(*v.get<std::int16_t>()); break;
        case value_type::uint32: put(*v.get<std::uint32_t>()); break;
        case value_type::int32: put(*v.get<std::int32_t>()); break;
        case value_type::float32: put(*v.get<float>()); break;
        case value_type::boolean: put(static_cast<std::uint8_t>(*v.get<bool>() ? 1 : 0)); break;
        case value_type::uint64: put(*v.get<std::uint64_t>()); break;
        case value_type::int64: put(*v.get<std::int64_t>()); break;
        case value_type::float64: put(*v.get<double>()); break;
        case value_type::string: string(*v.get<std::string_view>()); break;
        case value_type::array: array(*v.get<array_view>(), detail::value_access::wire_of(v)); break;
      }
    }
    void array(const array_view& a, detail::wire w) {
      put(static_cast<std::uint32_t>(a.item_type()));
      put(static_cast<std::uint64_t>(a.size()));
      // Items already laid out as the target wants them (same byte order, 64-bit lengths) are copied
      // whole: a 150k-token vocabulary is one copy, not 150k.
      const bool same_layout = w.swap == swap && !w.narrow;
      const value_type it = a.item_type();
      if (same_layout && (fixed_size(it) != 0 || it == value_type::string)) {
        bytes(a.bytes());
        return;
      }
      for (const value_view item : a) payload(item);
    }
  };

  result<std::vector<std::byte>> build_header(bool in_place) const {
    std::vector<std::byte> out(4);
    std::memcpy(out.data(), "GGUF", 4);  // the magic is bytes, the same in both byte orders
    encoder e{out, order_ != std::endian::native};
    e.put(version_);
    e.put(static_cast<std::uint64_t>(tensors_.size()));
    e.put(static_cast<std::uint64_t>(keys_.size()));
    for (const entry& kv : keys_) {
      e.string(kv.key);
      const value_view v = kv.view();
      e.put(static_cast<std::uint32_t>(v.type()));
      e.payload(v);
    }
    const std::uint32_t align = alignment();
    std::uint64_t offset = 0;
    for (const tensor_entry& t : tensors_) {
      e.string(t.name);
      const std::uint32_t nd = n_dims(t.ne);
      e.put(nd);
      for (std::uint32_t i = 0; i < nd; ++i) e.put(t.ne[i]);
      e.put(static_cast<std::uint32_t>(t.type));
      const std::uint64_t at = in_place ? *t.source_offset : offset;
      if (in_place && at % align != 0) {
        return error{errc::misaligned_offset, "the new alignment does not fit the tensors' offsets"}.about(t.name);
      }
      e.put(at);
      offset = at + pad(t.n_bytes, align);
    }
    if (out.size() > parse_options{}.max_metadata_bytes) {
      return {errc::limit_exceeded, "header and metadata exceed max_metadata_bytes (256 MiB)"};
    }
    std::uint64_t end = pad(out.size(), align);
    if (in_place) {
      if (tensors_.empty() ? out.size() > *source_data_offset_ : end != *source_data_offset_) {
        return {errc::out_of_range,
                "the new metadata does not fit before the tensor data (the alignment padding is "
                "all the room there is): write a new file instead"};
      }
      end = *source_data_offset_;  // a file without tensors ends where its metadata did
    }
    out.resize(static_cast<std::size_t>(end), std::byte{0});
    return out;
  }

  std::uint32_t version_ = 3;
  std::endian order_ = std::endian::little;
  std::vector<entry> keys_;
  std::vector<tensor_entry> tensors_;
  std::optional<std::uint64_t> source_data_offset_;
  std::size_t source_tensors_ = 0;
};

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_WRITER_HPP
