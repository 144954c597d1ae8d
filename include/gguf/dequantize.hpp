#ifndef GGUF_DEQUANTIZE_HPP
#define GGUF_DEQUANTIZE_HPP

#include <cstddef>
#include <cstdint>
#include <span>

#include "gguf/format/tensor_info.hpp"
#include "gguf/result.hpp"

// Two modes, in two inline namespaces so that a program mixing them cannot break the ODR:
// - header-only (default): the best kernels the including translation unit's flags allow
//   (xsimd::default_arch; build with -march=native and dispatch costs nothing);
// - runtime dispatch (GGUF_RUNTIME_DISPATCH=1, set by linking gguf::dispatch): the kernels of the best
//   instruction set the CPU supports, chosen at run time.
#if GGUF_RUNTIME_DISPATCH
#include "gguf/dispatch.hpp"
/// Opens the namespace of the dequantization entry points: `gguf::v0::runtime_dispatch` when linking
/// gguf::dispatch, the kernels' instruction-set namespace otherwise.
#define GGUF_DEQUANT_BEGIN_NAMESPACE \
  GGUF_BEGIN_NAMESPACE               \
  inline namespace runtime_dispatch {
/// Closes GGUF_DEQUANT_BEGIN_NAMESPACE.
#define GGUF_DEQUANT_END_NAMESPACE \
  }                                \
  GGUF_END_NAMESPACE
#else
#include "gguf/kernels/simd.hpp"
#define GGUF_DEQUANT_BEGIN_NAMESPACE GGUF_KERNELS_BEGIN_NAMESPACE
#define GGUF_DEQUANT_END_NAMESPACE GGUF_KERNELS_END_NAMESPACE
#endif

GGUF_DEQUANT_BEGIN_NAMESPACE

/**
 * Dequantize `out.size()` weights of type `type` from the blocks in `src` (the raw form, for callers
 * who hold blocks themselves). `out.size()` must be a whole number of blocks and `src` must hold
 * exactly those blocks. Bit-exact with ggml's reference dequantizers.
 * @param type the blocks' type
 * @param src  the blocks, little-endian, any alignment
 * @param out  one float per weight
 * @return success; `bad_tensor_type` for an id outside `ggml_types`, `size_mismatch` when the sizes
 *         disagree (then `out` is left alone)
 */
inline result<void> dequantize(ggml_type type, std::span<const std::byte> src, std::span<float> out) noexcept {
  const type_traits* t = find_type(static_cast<std::uint32_t>(type));
  if (!t) return {errc::bad_tensor_type, "unknown tensor type"};
  if (out.size() % t->block_size != 0) return {errc::size_mismatch, "output is not a whole number of blocks"};
  const std::size_t blocks = out.size() / t->block_size;
  if (src.size() / t->type_size < blocks || src.size() != blocks * t->type_size) {
    return {errc::size_mismatch, "input size does not match the output size"};
  }
  if (blocks == 0) return {};
#if GGUF_RUNTIME_DISPATCH
  const dequant_fn kernel = ::gguf::dispatch::kernel(type);
#else
  const dequant_fn kernel = kernels::best_kernel(type);
#endif
  kernel(src.data(), out.data(), blocks);
  return {};
}

/**
 * Dequantize a whole tensor.
 * @param t   a tensor of a parsed file, whose `data` is still alive
 * @param out `t.n_elements` floats, in the tensor's order (`ne[0]` fastest)
 * @return success, or `size_mismatch` when `out.size() != t.n_elements`
 */
inline result<void> dequantize(const tensor_info& t, std::span<float> out) noexcept {
  if (out.size() != t.n_elements) {
    return error{errc::size_mismatch, "output size differs from the element count"}.about(t.name);
  }
  return dequantize(t.type, t.data, out);
}

/**
 * Dequantize `n_rows` consecutive rows of a tensor, from row `first_row` on (a row is `ne[0]` weights;
 * rows run over ne[1], then ne[2], then ne[3]): an embedding lookup, or a big tensor streamed in chunks.
 * @param t         a tensor of a parsed file, whose `data` is still alive
 * @param first_row the first row, from 0
 * @param n_rows    the number of rows
 * @param out       `n_rows * ne[0]` floats
 * @return success; `out_of_range` when the rows are not all in the tensor (`first_row + n_rows` above
 *         `t.n_rows()`), `size_mismatch` when `out` has another size
 */
inline result<void> dequantize_rows(const tensor_info& t, std::uint64_t first_row, std::uint64_t n_rows,
                                    std::span<float> out) noexcept {
  const std::uint64_t rows = t.n_rows();
  if (first_row > rows || n_rows > rows - first_row) {
    return error{errc::out_of_range, "rows outside the tensor"}.about(t.name);
  }
  if (out.size() != n_rows * t.ne[0]) {
    return error{errc::size_mismatch, "output size differs from n_rows * ne[0]"}.about(t.name);
  }
  const std::uint64_t row_bytes = t.row_size();
  return dequantize(
      t.type,
      t.data.subspan(static_cast<std::size_t>(first_row * row_bytes), static_cast<std::size_t>(n_rows * row_bytes)),
      out);
}

GGUF_DEQUANT_END_NAMESPACE

#endif  // GGUF_DEQUANTIZE_HPP
