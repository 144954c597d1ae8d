#ifndef GGUF_DEQUANTIZE_HPP
#define GGUF_DEQUANTIZE_HPP

#include <cstddef>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>

#include "gguf/format/byte_order.hpp"
#include "gguf/format/half.hpp"
#include "gguf/format/tensor_info.hpp"
#include "gguf/result.hpp"

// Two modes, in two inline namespaces so that a program mixing them cannot break the ODR:
// - header-only (default): the best kernels the including translation unit's flags allow
//   (kernels::simd::best_arch; build with -march=native and dispatch costs nothing);
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

// Every entry point writes float, f16 or bf16 (gguf/format/half.hpp): the half outputs are the float
// results rounded to nearest even, as ggml_fp32_to_fp16 / ggml_fp32_to_bf16 round them, in registers as
// the kernels make them (never a float array in between). One overload per output type, so that a
// std::vector<float> or an array converts to its span as before.

/// @cond INTERNAL
namespace dequant_impl {

template <dequant_output Out>
inline dequant_fn_to<Out> kernel_for(ggml_type type) noexcept {
#if GGUF_RUNTIME_DISPATCH
  return ::gguf::dispatch::kernel_to<Out>(type);
#else
  return kernels::best_kernel_to<Out>(type);
#endif
}

template <dequant_output Out>
inline result<void> dequantize_blocks(ggml_type type, std::span<const std::byte> src, std::span<Out> out,
                                      std::endian order) noexcept {
  const type_traits* t = find_type(static_cast<std::uint32_t>(type));
  if (!t) return {errc::bad_tensor_type, "unknown tensor type"};
  if (out.size() % t->block_size != 0) return {errc::size_mismatch, "output is not a whole number of blocks"};
  const std::size_t blocks = out.size() / t->block_size;
  if (src.size() / t->type_size < blocks || src.size() != blocks * t->type_size) {
    return {errc::size_mismatch, "input size does not match the output size"};
  }
  if (blocks == 0) return {};
  const dequant_fn_to<Out> kernel = kernel_for<Out>(type);
  if (order == std::endian::little || block_fields(type).empty()) {
    kernel(src.data(), out.data(), blocks);
    return {};
  }
  // Big-endian blocks: made little-endian a chunk at a time, then the same kernel.
  alignas(64) std::byte chunk[16384];
  const std::size_t per_chunk = sizeof chunk / t->type_size;
  for (std::size_t i = 0; i < blocks; i += per_chunk) {
    const std::size_t n = blocks - i < per_chunk ? blocks - i : per_chunk;
    std::memcpy(chunk, src.data() + i * t->type_size, n * t->type_size);
    swap_blocks(type, std::span<std::byte>(chunk, n * t->type_size));
    kernel(chunk, out.data() + i * t->block_size, n);
  }
  return {};
}

template <dequant_output Out>
inline result<void> dequantize_tensor(const tensor_info& t, std::span<Out> out) noexcept {
  if (out.size() != t.n_elements) {
    return error{errc::size_mismatch, "output size differs from the element count"}.about(t.name);
  }
  if (!t.has_data()) return error{errc::out_of_bounds, "tensor data not read (a header-only parse)"}.about(t.name);
  return dequantize_blocks<Out>(t.type, t.data, out, t.byte_order);
}

template <dequant_output Out>
inline result<void> dequantize_tensor_rows(const tensor_info& t, std::uint64_t first_row, std::uint64_t n_rows,
                                           std::span<Out> out) noexcept {
  const std::uint64_t rows = t.n_rows();
  if (first_row > rows || n_rows > rows - first_row) {
    return error{errc::out_of_range, "rows outside the tensor"}.about(t.name);
  }
  if (out.size() != n_rows * t.ne[0]) {
    return error{errc::size_mismatch, "output size differs from n_rows * ne[0]"}.about(t.name);
  }
  if (!t.has_data()) return error{errc::out_of_bounds, "tensor data not read (a header-only parse)"}.about(t.name);
  const std::uint64_t row_bytes = t.row_size();
  return dequantize_blocks<Out>(
      t.type,
      t.data.subspan(static_cast<std::size_t>(first_row * row_bytes), static_cast<std::size_t>(n_rows * row_bytes)),
      out, t.byte_order);
}

}  // namespace dequant_impl
/// @endcond

/**
 * Dequantize `out.size()` weights of type `type` from the blocks in `src` (the raw form, for callers who
 * hold blocks themselves). Bit-exact with ggml's reference dequantizers.
 * @param type  the blocks' type
 * @param src   exactly `out.size() / block_size` blocks
 * @param out   the floats; a whole number of blocks
 * @param order the byte order of the blocks: little (GGUF's usual), or big, as in a big-endian file
 *              (its multi-byte fields are swapped on the way, a chunk at a time through a small buffer
 *              on the stack; see gguf/format/byte_order.hpp)
 * @return nothing; `bad_tensor_type` for a value that is not a type, `size_mismatch` when `out` is not a
 *         whole number of blocks or `src` does not hold exactly those blocks
 */
inline result<void> dequantize(ggml_type type, std::span<const std::byte> src, std::span<float> out,
                               std::endian order = std::endian::little) noexcept {
  return dequant_impl::dequantize_blocks<float>(type, src, out, order);
}
/// `dequantize` to f16: each weight the float result rounded to nearest even (`to_f16`).
inline result<void> dequantize(ggml_type type, std::span<const std::byte> src, std::span<f16> out,
                               std::endian order = std::endian::little) noexcept {
  return dequant_impl::dequantize_blocks<f16>(type, src, out, order);
}
/// `dequantize` to bf16: each weight the float result rounded to nearest even (`to_bf16`).
inline result<void> dequantize(ggml_type type, std::span<const std::byte> src, std::span<bf16> out,
                               std::endian order = std::endian::little) noexcept {
  return dequant_impl::dequantize_blocks<bf16>(type, src, out, order);
}

/**
 * Dequantize a whole tensor, in the byte order of its file.
 * @param t   the tensor
 * @param out `t.n_elements` floats, in storage order (`ne[0]` fastest)
 * @return nothing; `size_mismatch` (naming the tensor) when `out` has another size, `out_of_bounds` when
 *         the tensor's data was not read (`parse_prefix`)
 */
inline result<void> dequantize(const tensor_info& t, std::span<float> out) noexcept {
  return dequant_impl::dequantize_tensor<float>(t, out);
}
/// `dequantize` a whole tensor to f16 (`to_f16` of each float result).
inline result<void> dequantize(const tensor_info& t, std::span<f16> out) noexcept {
  return dequant_impl::dequantize_tensor<f16>(t, out);
}
/// `dequantize` a whole tensor to bf16 (`to_bf16` of each float result).
inline result<void> dequantize(const tensor_info& t, std::span<bf16> out) noexcept {
  return dequant_impl::dequantize_tensor<bf16>(t, out);
}

/**
 * Dequantize rows `first_row` to `first_row + n_rows - 1` of a tensor (a row is `ne[0]` weights; rows
 * run over ne[1], then ne[2], then ne[3]): an embedding lookup, or a big tensor streamed in chunks.
 * @param t         the tensor
 * @param first_row the first row, from 0
 * @param n_rows    how many rows
 * @param out       exactly `n_rows * ne[0]` floats
 * @return nothing; `out_of_range` for rows outside the tensor, `size_mismatch` for another `out` size,
 *         `out_of_bounds` when the tensor's data was not read (`parse_prefix`)
 */
inline result<void> dequantize_rows(const tensor_info& t, std::uint64_t first_row, std::uint64_t n_rows,
                                    std::span<float> out) noexcept {
  return dequant_impl::dequantize_tensor_rows<float>(t, first_row, n_rows, out);
}
/// `dequantize_rows` to f16 (`to_f16` of each float result).
inline result<void> dequantize_rows(const tensor_info& t, std::uint64_t first_row, std::uint64_t n_rows,
                                    std::span<f16> out) noexcept {
  return dequant_impl::dequantize_tensor_rows<f16>(t, first_row, n_rows, out);
}
/// `dequantize_rows` to bf16 (`to_bf16` of each float result).
inline result<void> dequantize_rows(const tensor_info& t, std::uint64_t first_row, std::uint64_t n_rows,
                                    std::span<bf16> out) noexcept {
  return dequant_impl::dequantize_tensor_rows<bf16>(t, first_row, n_rows, out);
}

GGUF_DEQUANT_END_NAMESPACE

#endif  // GGUF_DEQUANTIZE_HPP
