#ifndef GGUF_KERNELS_PLAIN_QUANTIZE_HPP
#define GGUF_KERNELS_PLAIN_QUANTIZE_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/half.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The half-precision element types: each float rounded to nearest even on its own. Importance weights
// mean nothing here and are ignored, as ggml ignores them.

/// f32: the floats as they are (ggml_quantize_chunk copies them).
inline void quantize_f32(const float* src, std::byte* dst, std::size_t n_per_row,
                         const float* /*importance*/) noexcept {
  for (std::size_t i = 0; i < n_per_row; ++i) detail::store_le<float>(dst + 4 * i, src[i]);
}

/// f16: ggml_fp32_to_fp16_row (every NaN becomes the quiet NaN of its sign, 0x7E00 / 0xFE00).
inline void quantize_f16(const float* src, std::byte* dst, std::size_t n_per_row,
                         const float* /*importance*/) noexcept {
  for (std::size_t i = 0; i < n_per_row; ++i)
    detail::store_le<std::uint16_t>(dst + 2 * i, detail::half_bits_nan_payload_dropped(src[i]));
}

/// bf16: ggml_fp32_to_bf16_row_ref (a NaN keeps its top bits, made quiet).
inline void quantize_bf16(const float* src, std::byte* dst, std::size_t n_per_row,
                          const float* /*importance*/) noexcept {
  for (std::size_t i = 0; i < n_per_row; ++i) detail::store_le<std::uint16_t>(dst + 2 * i, to_bf16(src[i]).bits);
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_PLAIN_QUANTIZE_HPP
