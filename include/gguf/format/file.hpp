#ifndef GGUF_FORMAT_FILE_HPP
#define GGUF_FORMAT_FILE_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gguf/format/metadata.hpp"
#include "gguf/format/name_index.hpp"
#include "gguf/format/tensor_info.hpp"

GGUF_BEGIN_NAMESPACE

/** Limits the parser enforces on untrusted input, beyond the bytes themselves. */
struct parse_options {
  /// Arrays nested in arrays: a top-level array is depth 1. Values above 1024 act as 1024 (the
  /// recursion stays bounded whatever is asked).
  std::uint32_t max_depth = 64;
  /// Longest key, string value or tensor name, in bytes (ggml's GGUF_MAX_STRING_LENGTH).
  std::uint64_t max_string_length = std::uint64_t{1} << 30;
  /// Most items in one array (ggml's GGUF_MAX_ARRAY_ELEMENTS).
  std::uint64_t max_array_length = std::uint64_t{1} << 30;
  /// Bytes the parser may read: the header, key/values and tensor infos, everything before the data
  /// section. The parser allocates at most a few bytes per byte read (see SECURITY.md), so this also
  /// bounds its memory. The largest real files need some 20 MiB (a 256k-token vocabulary with scores).
  std::uint64_t max_metadata_bytes = std::uint64_t{256} << 20;
};

/// GGUF's default `ALIGNMENT` when `general.alignment` is absent.
inline constexpr std::uint32_t default_alignment = 32;

namespace detail {
class parser;
struct file_access;
}  // namespace detail

class file;
/// Its views point into the object: no `->` on a temporary `result<file>` (declared before any use of
/// that result, which would instantiate the primary template).
template <>
inline constexpr bool hands_out_views<file> = true;

/**
 * A parsed and validated GGUF file: header facts, metadata and tensor infos, all views into the
 * parsed bytes, which must outlive it (`gguf::open` returns a `mapped_gguf` that owns them). Cheap to
 * move; copying copies the two small index vectors, not the bytes.
 *
 * The accessors that return references or views into the `file` object itself (`metadata`, `tensors`,
 * `find_tensor`) are deleted on temporaries: such a view would dangle at the end of the statement.
 */
class file {
 public:
  /** An empty file: version 0, no metadata, no tensors (what a moved-from file holds). */
  file() = default;

  /** GGUF format version: 1, 2 or 3. */
  std::uint32_t version() const noexcept { return version_; }
  /** Byte order of the file's fields (big-endian files exist since v3). */
  std::endian byte_order() const noexcept { return byte_order_; }
  /** `general.alignment`, or 32. */
  std::uint32_t alignment() const noexcept { return alignment_; }
  /**
   * Offset of the data section: the end of the tensor infos rounded up to the alignment. As in ggml,
   * a file without tensors has no data section and no padding: this is then the end of the infos.
   */
  std::uint64_t data_offset() const noexcept { return data_offset_; }

  /** The metadata: key/value pairs in file order, with lookup by key. */
  const metadata_table& metadata() const& noexcept { return metadata_; }
  const metadata_table& metadata() const&& = delete;  ///< would dangle: keep the file in a variable

  /** Tensor infos in file order. */
  std::span<const tensor_info> tensors() const& noexcept { return tensors_; }
  std::span<const tensor_info> tensors() const&& = delete;  ///< would dangle: keep the file in a variable

  /**
   * The tensor with this name (binary search over a sorted index).
   * @param name the tensor name, exactly as stored
   * @return the tensor info, or nullptr when there is none
   */
  const tensor_info* find_tensor(std::string_view name) const& noexcept {
    const std::size_t i = by_name_.find(name, [this](std::size_t k) { return tensors_[k].name; });
    return i == detail::name_index::npos ? nullptr : &tensors_[i];
  }
  const tensor_info* find_tensor(std::string_view name) const&& = delete;  ///< would dangle

  /** The bytes this file was parsed from (owned by the caller, or by a `mapped_gguf`). */
  std::span<const std::byte> bytes() const noexcept { return bytes_; }

 private:
  friend class detail::parser;
  friend struct detail::file_access;

  std::span<const std::byte> bytes_;
  std::uint32_t version_ = 0;
  std::endian byte_order_ = std::endian::little;
  std::uint32_t alignment_ = default_alignment;
  std::uint64_t data_offset_ = 0;
  metadata_table metadata_;
  std::vector<tensor_info> tensors_;
  detail::name_index by_name_;
};

namespace detail {
/**
 * The accessors of a parsed file, for the types that own one together with the bytes it points into
 * (`mapped_gguf`, `header_buffer`): each forwards to the `file` the owner keeps as `file_`, and those that
 * return views are deleted on temporaries, where the view would dangle.
 * @tparam Owner the owning type, which befriends this class
 */
template <class Owner>
class file_accessors {
 public:
  /** GGUF format version: 1, 2 or 3. */
  std::uint32_t version() const noexcept { return parsed().version(); }
  /** Byte order of the file's fields. */
  std::endian byte_order() const noexcept { return parsed().byte_order(); }
  /** `general.alignment`, or 32. */
  std::uint32_t alignment() const noexcept { return parsed().alignment(); }
  /** Offset of the data section (see `file::data_offset`). */
  std::uint64_t data_offset() const noexcept { return parsed().data_offset(); }

  /** The metadata: key/value pairs in file order, with lookup by key. */
  const metadata_table& metadata() const& noexcept { return parsed().metadata(); }
  const metadata_table& metadata() const&& = delete;  ///< would dangle: keep the owner in a variable

  /** Tensor infos in file order. */
  std::span<const tensor_info> tensors() const& noexcept { return parsed().tensors(); }
  std::span<const tensor_info> tensors() const&& = delete;  ///< would dangle

  /**
   * The tensor with this name.
   * @param name the tensor name, exactly as stored
   * @return the tensor info, or nullptr when there is none
   */
  const tensor_info* find_tensor(std::string_view name) const& noexcept { return parsed().find_tensor(name); }
  const tensor_info* find_tensor(std::string_view name) const&& = delete;  ///< would dangle

  /** The parsed file, for functions that take a `const file&`; valid while its owner lives. */
  const file& info() const& noexcept { return parsed(); }
  const file& info() const&& = delete;  ///< would dangle

 private:
  const file& parsed() const noexcept { return static_cast<const Owner&>(*this).file_; }
};

/// What `open` needs of a file's insides.
struct file_access {
  /**
   * A header parsed from a copy of a file's first bytes, made to belong to `whole`, the file itself:
   * `bytes()` becomes `whole`, and every tensor's data a view into it (keys, values and names stay views
   * into the copy, which the caller keeps alive).
   */
  static void rebase(file& f, std::span<const std::byte> whole) noexcept {
    f.bytes_ = whole;
    for (tensor_info& t : f.tensors_) {
      t.data = whole.subspan(static_cast<std::size_t>(t.file_offset), static_cast<std::size_t>(t.n_bytes));
    }
  }
};
}  // namespace detail

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_FILE_HPP
