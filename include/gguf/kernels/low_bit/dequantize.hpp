#ifndef GGUF_KERNELS_LOW_BIT_DEQUANTIZE_HPP
#define GGUF_KERNELS_LOW_BIT_DEQUANTIZE_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/format/blocks.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The 1- and 2-bit types with one half-precision scale a block. Weights are packed least significant
// bits first: weight j sits in byte j / 8 (q1_0) or j / 4 (q2_0), in natural order.

/// q1_0: 128 weights, x = bit ? d : -d. No arithmetic: the scale itself or its negation (a NaN scale
/// gives NaN either way, with the sign bit flipped for clear bits).
inline void dequant_q1_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q1_0;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 128) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const float neg_d = -d;
    const std::byte* qs = src + offsetof(B, qs);
    for (int j = 0; j < 128; ++j) dst[j] = ((load_le<std::uint8_t>(qs + j / 8) >> (j % 8)) & 1) != 0 ? d : neg_d;
  }
}

/// q2_0: 64 weights, x = (q - 1) * d with q in 0..3, i.e. -1, 0, +1, +2 times d.
inline void dequant_q2_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q2_0;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 64) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    for (int j = 0; j < 64; ++j) {
      const int q = (load_le<std::uint8_t>(qs + j / 4) >> (2 * (j % 4))) & 3;
      dst[j] = static_cast<float>(q - 1) * d;
    }
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_LOW_BIT_DEQUANTIZE_HPP
