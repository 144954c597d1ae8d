#ifndef GGUF_FORMAT_TENSOR_INFO_HPP
#define GGUF_FORMAT_TENSOR_INFO_HPP

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "gguf/format/ggml_types.hpp"

GGUF_BEGIN_NAMESPACE

/// ggml's GGML_MAX_DIMS.
inline constexpr std::uint32_t max_dims = 4;

/**
 * A tensor's shape, outermost dimension first, as PyTorch and NumPy write it: GGUF stores dimensions
 * innermost first (`ne`), so a `[out, in]` weight stored as `ne = {in, out}` has the shape `[out, in]`.
 * A small value type: `rank()` dimensions, iterable, comparable, printed as "[32000, 4096]"
 * (`to_string`, `operator<<` in `gguf/print.hpp`).
 */
class tensor_shape {
 public:
  /** Rank 0: no dimensions (a scalar; one element). */
  constexpr tensor_shape() noexcept = default;
  /**
   * The shape of stored dimensions.
   * @param ne the dimensions innermost first, as stored (at most `max_dims`; more are ignored)
   */
  constexpr explicit tensor_shape(std::span<const std::uint64_t> ne) noexcept
      : rank_(static_cast<std::uint32_t>(ne.size() < max_dims ? ne.size() : max_dims)) {
    for (std::uint32_t i = 0; i < rank_; ++i) dims_[i] = ne[rank_ - 1 - i];
  }

  /** The number of dimensions (`n_dims` as stored, 0 to 4). */
  constexpr std::uint32_t rank() const noexcept { return rank_; }
  /** `rank()`, for range algorithms. */
  constexpr std::size_t size() const noexcept { return rank_; }
  /** True for rank 0. */
  constexpr bool empty() const noexcept { return rank_ == 0; }
  /** Dimension `i`, outermost first; 1 for `rank() <= i < max_dims` (as ggml pads shapes). */
  constexpr std::uint64_t operator[](std::size_t i) const noexcept { return i < max_dims ? dims_[i] : 1; }
  /** The first dimension (the outermost). */
  constexpr const std::uint64_t* begin() const& noexcept { return dims_.data(); }
  /** Past the last of the `rank()` dimensions. */
  constexpr const std::uint64_t* end() const& noexcept { return dims_.data() + rank_; }
  // Iterators into a temporary would dangle (`t.shape().begin()`); `for (auto d : t.shape())` is fine.
  const std::uint64_t* begin() const&& = delete;  ///< would dangle: keep the shape in a variable
  const std::uint64_t* end() const&& = delete;    ///< would dangle: keep the shape in a variable
  /** The product of the dimensions (1 for rank 0). The parser bounds it for every valid tensor. */
  constexpr std::uint64_t n_elements() const noexcept {
    std::uint64_t n = 1;
    for (std::uint32_t i = 0; i < rank_; ++i) n *= dims_[i];
    return n;
  }
  /** Same rank and dimensions. */
  friend constexpr bool operator==(const tensor_shape& a, const tensor_shape& b) noexcept {
    return a.rank_ == b.rank_ && a.dims_ == b.dims_;
  }

 private:
  std::array<std::uint64_t, max_dims> dims_{1, 1, 1, 1};
  std::uint32_t rank_ = 0;
};

/**
 * One tensor of the file, validated: its type is known, `ne[0]` is a multiple of the block size,
 * sizes do not overflow, and its data lies inside the file without overlapping another tensor's.
 */
struct tensor_info {
  std::string_view name;            ///< a view into the file; at most 63 bytes
  ggml_type type = ggml_type::f32;  ///< a known type (the parser refuses unknown and removed ids)
  std::uint32_t n_dims = 0;         ///< as stored (0..4)
  /// Elements per dimension, innermost first as stored (`ne[0]` is the row length); padded with 1s.
  std::array<std::uint64_t, max_dims> ne{1, 1, 1, 1};
  std::uint64_t offset = 0;       ///< relative to the start of the data section
  std::uint64_t file_offset = 0;  ///< absolute offset of the first byte in the file
  std::uint64_t n_elements = 0;   ///< ne[0] * ne[1] * ne[2] * ne[3], below INT64_MAX
  std::uint64_t n_bytes = 0;      ///< the data's size: n_elements / block_size * type_size
  /// The tensor's bytes in the file (or mapping); empty when a header-only parse (`parse_prefix`) did
  /// not get them (then `has_data()` is false).
  std::span<const std::byte> data;
  /// The byte order of `data`: the file's (a big-endian file holds big-endian tensors; see
  /// gguf/format/byte_order.hpp). `dequantize` converts; the bytes themselves are as stored.
  std::endian byte_order = std::endian::little;

  /// True when `data` holds the tensor's bytes: always after `parse`, `open` and `open_model`; after
  /// `parse_prefix` only for tensors that lie within the prefix.
  bool has_data() const noexcept { return data.size() == n_bytes; }

  /// The traits of `type`: block size, bytes per block, name.
  const type_traits& traits() const noexcept { return ::gguf::traits(type); }

  /** The stored dimensions, innermost first (`n_dims` entries). */
  std::span<const std::uint64_t> dims() const noexcept { return {ne.data(), n_dims}; }

  /**
   * The shape outermost first, as PyTorch and NumPy write it: a `[out, in]` weight is stored as
   * `ne = {in, out}`; `n_dims` dimensions (`shape()[i]` is 1 past them).
   */
  tensor_shape shape() const noexcept { return tensor_shape(dims()); }

  /** Elements in one row (`ne[0]`). */
  std::uint64_t row_length() const noexcept { return ne[0]; }
  /**
   * Rows: the product of every dimension but the first. The parser bounds it for every tensor with
   * elements; a tensor with `ne[0] == 0` may declare any others (ggml accepts it), so the product
   * saturates at UINT64_MAX instead of wrapping.
   */
  std::uint64_t n_rows() const noexcept {
    std::uint64_t r = ne[1];
    for (std::size_t i = 2; i < max_dims; ++i) {
      if (ne[i] != 0 && r > UINT64_MAX / ne[i]) return UINT64_MAX;
      r *= ne[i];
    }
    return r;
  }
  /** Bytes in one row: `ne[0] / block_size * type_size`. */
  std::uint64_t row_size() const noexcept {
    const type_traits& t = traits();
    return ne[0] / t.block_size * t.type_size;
  }
};

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_TENSOR_INFO_HPP
