#ifndef GGUF_KERNELS_LOW_BIT_QUANTIZE_HPP
#define GGUF_KERNELS_LOW_BIT_QUANTIZE_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The 1- and 2-bit types with one half scale a block, as quantize_row_q1_0_ref / q2_0_ref write them.
// ggml accepts importance weights for them and ignores them.

/// q1_0: d = mean |x| of the 128 weights, one bit a weight: set for x >= 0 (a NaN's bit is clear).
inline void quantize_q1_0(const float* src, std::byte* dst, std::size_t n_per_row,
                          const float* /*importance*/) noexcept {
  using B = blocks::q1_0;
  for (std::size_t i = 0; i < n_per_row / 128; ++i, src += 128, dst += sizeof(B)) {
    float sum_abs = 0;
    for (int j = 0; j < 128; ++j) sum_abs += std::fabs(src[j]);
    detail::store_half(dst + offsetof(B, d), sum_abs / 128);
    for (int k = 0; k < 16; ++k) {
      unsigned bits = 0;
      for (int b = 0; b < 8; ++b) bits |= (src[8 * k + b] >= 0.0f ? 1u : 0u) << b;
      detail::store_le<std::uint8_t>(dst + offsetof(B, qs) + k, static_cast<std::uint8_t>(bits));
    }
  }
}

/// q2_0: d = max |x| of the 64 weights, q = round(x / d) + 1 clamped to 0..3 (-d, 0, d, 2d).
inline void quantize_q2_0(const float* src, std::byte* dst, std::size_t n_per_row,
                          const float* /*importance*/) noexcept {
  using B = blocks::q2_0;
  for (std::size_t i = 0; i < n_per_row / 64; ++i, src += 64, dst += sizeof(B)) {
    float amax = 0;
    for (int j = 0; j < 64; ++j) {
      const float a = std::fabs(src[j]);
      if (a > amax) amax = a;
    }
    const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
    detail::store_half(dst + offsetof(B, d), amax);
    for (int k = 0; k < 16; ++k) {
      unsigned byte = 0;
      for (int m = 0; m < 4; ++m) {
        // (int)roundf: a NaN gives INT_MIN there, so level 0.
        int q = detail::x86_trunc(std::round(src[4 * k + m] * id)) + 1;
        q = q < 0 ? 0 : (q > 3 ? 3 : q);
        byte |= static_cast<unsigned>(q) << (2 * m);
      }
      detail::store_le<std::uint8_t>(dst + offsetof(B, qs) + k, static_cast<std::uint8_t>(byte));
    }
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_LOW_BIT_QUANTIZE_HPP
