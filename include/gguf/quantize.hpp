#ifndef GGUF_QUANTIZE_HPP
#define GGUF_QUANTIZE_HPP

#include <cstddef>
#include <cstdint>
#include <span>

#include "gguf/version.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/kernels/importance.hpp"
#include "gguf/result.hpp"

// Two modes, as gguf/dequantize.hpp: the quantizers of the best instruction set this translation unit's
// flags allow (header-only), or those of the CPU's best, compiled once in gguf::dispatch
// (GGUF_RUNTIME_DISPATCH=1): then no kernel is compiled here. Each mode in its own inline namespace.
#if GGUF_RUNTIME_DISPATCH
#include "gguf/dispatch.hpp"
/// Opens the namespace of the quantization entry points (see GGUF_DEQUANT_BEGIN_NAMESPACE).
#define GGUF_QUANT_BEGIN_NAMESPACE \
  GGUF_BEGIN_NAMESPACE             \
  inline namespace runtime_dispatch {
/// Closes GGUF_QUANT_BEGIN_NAMESPACE.
#define GGUF_QUANT_END_NAMESPACE \
  }                              \
  GGUF_END_NAMESPACE
#else
#include "gguf/kernels/scalar.hpp"
#include "gguf/kernels/simd.hpp"
/// Opens the namespace of the quantization entry points: the kernels' instruction-set namespace.
#define GGUF_QUANT_BEGIN_NAMESPACE GGUF_KERNELS_BEGIN_NAMESPACE
/// Closes GGUF_QUANT_BEGIN_NAMESPACE.
#define GGUF_QUANT_END_NAMESPACE GGUF_KERNELS_END_NAMESPACE
#endif

/**
 * @file
 * Floats to blocks: the reference quantizers, byte for byte what ggml's ggml_quantize_chunk writes
 * (same searches, same roundings, no fused multiply-adds, NaN and infinities included), for f32, f16,
 * bf16, the legacy and K-quant types, the IQ types, the ternary, 4-bit float and 1/2-bit types.
 */

GGUF_QUANT_BEGIN_NAMESPACE

/**
 * The bytes `n_rows` rows of `n_per_row` weights take in type `type`.
 * @param type      a ggml type
 * @param n_rows    how many rows
 * @param n_per_row weights per row; a multiple of the type's block size
 * @return the size; `bad_tensor_type` for a value that is not a type, `bad_row_size` when `n_per_row` is
 *         0 or not a whole number of blocks, `overflow` when the size does not fit in a size_t
 */
inline result<std::size_t> quantized_size(ggml_type type, std::size_t n_rows, std::size_t n_per_row) noexcept {
  const type_traits* t = find_type(static_cast<std::uint32_t>(type));
  if (!t) return {errc::bad_tensor_type, "unknown tensor type"};
  if (n_per_row == 0 || n_per_row % t->block_size != 0) {
    return {errc::bad_row_size, "the row length is not a whole number of blocks"};
  }
  const std::size_t row_bytes = n_per_row / t->block_size * t->type_size;
  if (n_rows != 0 && row_bytes > SIZE_MAX / n_rows) return {errc::overflow, "the quantized size overflows"};
  return row_bytes * n_rows;
}

/**
 * Quantize rows of floats to type `type`, bit-exact with ggml's ggml_quantize_chunk (and its
 * quantize_row_*_ref where it calls them). Rows are independent: quantizing a tensor in chunks of rows
 * gives the same bytes.
 * @param type       the type to write; every type `kernels::scalar_quantizer` has a quantizer for
 * @param src        the weights, `src.size() / n_per_row` whole rows, `ne[0]` fastest
 * @param n_per_row  weights per row (`ne[0]`); a multiple of the type's block size
 * @param dst        room for the blocks: at least `quantized_size(type, rows, n_per_row)` bytes
 * @param importance importance weights (an imatrix entry), one per column (`n_per_row`), or empty for
 *                   none; types that do not use them ignore them, as ggml does (`kernels::uses_importance`)
 * @return the bytes written; `bad_tensor_type` for an unknown type or one without a quantizer (q8_1,
 *         q8_K, the integer types, f64), `bad_row_size` when `n_per_row` is 0 or not a
 *         whole number of blocks, `size_mismatch` when `src` is not whole rows, `dst` is too small,
 *         `importance` is neither empty nor `n_per_row` long, or is empty for a type that requires it
 *         (`kernels::requires_importance`), `overflow` when the size does not fit in a size_t,
 *         `out_of_range` for a row that ggml aborts on (the IQ grid types, iq2_* iq3_* iq1_*, on NaN,
 *         infinities or values whose squares overflow; ggml asserts) — `dst` is then unspecified from
 *         that row on. Every other error is found before anything is written.
 */
inline result<std::size_t> quantize(ggml_type type, std::span<const float> src, std::size_t n_per_row,
                                    std::span<std::byte> dst, std::span<const float> importance = {}) noexcept {
  const type_traits* t = find_type(static_cast<std::uint32_t>(type));
  if (!t) return {errc::bad_tensor_type, "unknown tensor type"};
  if (n_per_row == 0 || n_per_row % t->block_size != 0) {
    return {errc::bad_row_size, "the row length is not a whole number of blocks"};
  }
  if (!importance.empty() && importance.size() != n_per_row) {
    return {errc::size_mismatch, "importance weights must be one per column"};
  }
  if (importance.empty() && kernels::requires_importance(type)) {
    return {errc::size_mismatch, "this type requires importance weights"};
  }
#if GGUF_RUNTIME_DISPATCH
  const quant_fn fn = dispatch::quantizer(type);  // the active instruction set's (gguf::dispatch)
#else
  const quant_fn fn = kernels::best_quantizer(type);  // the best this translation unit's flags allow
#endif
  if (!fn) return {errc::bad_tensor_type, "no quantizer for this type"};
  if (src.size() % n_per_row != 0) return {errc::size_mismatch, "the input is not a whole number of rows"};
  const std::size_t rows = src.size() / n_per_row;
  const std::size_t row_bytes = n_per_row / t->block_size * t->type_size;
  if (rows != 0 && row_bytes > SIZE_MAX / rows) return {errc::overflow, "the quantized size overflows"};
  if (dst.size() < rows * row_bytes) return {errc::size_mismatch, "the output is too small"};
  const float* qw = importance.empty() ? nullptr : importance.data();
  for (std::size_t r = 0; r < rows; ++r) {
    if (fn(src.data() + r * n_per_row, dst.data() + r * row_bytes, n_per_row, qw) != errc::success) {
      return {errc::out_of_range, "a row ggml cannot quantize to this type (NaN, infinity or overflow)"};
    }
  }
  return rows * row_bytes;
}

GGUF_QUANT_END_NAMESPACE

#endif  // GGUF_QUANTIZE_HPP
