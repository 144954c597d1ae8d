#ifndef GGUF_KERNELS_TERNARY_QUANTIZE_HPP
#define GGUF_KERNELS_TERNARY_QUANTIZE_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The ternary types (BitNet b1.58, TriLMs): d = max |x| of the 256 weights, t = lround(x / d) + 1 in
// {0, 1, 2}. ggml ignores importance weights for them.

namespace detail {

/// The block's d (C's MAX over |x|, so a NaN last wins) and its inverse, d stored at `d_field`.
inline float ternary_scale(const float* x, std::byte* d_field) noexcept {
  float amax = 0;
  for (int j = 0; j < qk_k; ++j) amax = c_max(amax, std::fabs(x[j]));
  store_half(d_field, amax);
  return amax != 0 ? 1.0f / amax : 0.0f;
}

/// lroundf(v) + 1 as ggml's `int` (a NaN's LONG_MIN keeps low bits 0, giving 1), as unsigned bits.
inline std::uint32_t trit(float v) noexcept {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(x86_lround(v)) + 1u);
}

/// `n` trits of x[stride * k], most significant first, as a base-3 number in uint8 arithmetic (wrapping
/// as ggml's does), times 3^(5 - n), then scaled to a fixed-point fraction of 3^5 (rounded up).
inline std::uint8_t trit_byte(const float* x, int stride, int n, float id) noexcept {
  std::uint8_t q = 0;
  for (int k = 0; k < n; ++k) q = static_cast<std::uint8_t>((q * 3u + trit(x[k * stride] * id)) & 0xFFu);
  for (int k = n; k < 5; ++k) q = static_cast<std::uint8_t>((q * 3u) & 0xFFu);
  return static_cast<std::uint8_t>(((q * 256u + 242u) / 243u) & 0xFFu);
}

}  // namespace detail

/// tq1_0: five trits a byte in qs (32 bytes over 160 weights, 16 over the next 80), four in qh (16).
inline void quantize_tq1_0(const float* src, std::byte* dst, std::size_t n_per_row,
                           const float* /*importance*/) noexcept {
  using B = blocks::tq1_0;
  for (std::size_t i = 0; i < n_per_row / 256; ++i, src += 256, dst += sizeof(B)) {
    const float id = detail::ternary_scale(src, dst + offsetof(B, d));
    std::byte* qs = dst + offsetof(B, qs);
    for (int m = 0; m < 32; ++m) detail::store_le<std::uint8_t>(qs + m, detail::trit_byte(src + m, 32, 5, id));
    for (int m = 0; m < 16; ++m)
      detail::store_le<std::uint8_t>(qs + 32 + m, detail::trit_byte(src + 160 + m, 16, 5, id));
    for (int j = 0; j < 4; ++j) {
      detail::store_le<std::uint8_t>(dst + offsetof(B, qh) + j, detail::trit_byte(src + 240 + j, 4, 4, id));
    }
  }
}

/// tq2_0: four 2-bit trits a byte; byte m of each 32 holds weights m, m + 32, m + 64, m + 96 of its 128.
inline void quantize_tq2_0(const float* src, std::byte* dst, std::size_t n_per_row,
                           const float* /*importance*/) noexcept {
  using B = blocks::tq2_0;
  for (std::size_t i = 0; i < n_per_row / 256; ++i, src += 256, dst += sizeof(B)) {
    const float id = detail::ternary_scale(src, dst + offsetof(B, d));
    for (int j = 0; j < 64; j += 32) {
      const float* x = src + 4 * j;
      for (int m = 0; m < 32; ++m) {
        unsigned q = 0;
        for (int n = 0; n < 4; ++n) q += (detail::trit(x[m + 32 * n] * id) & 3u) << (2 * n);
        detail::store_le<std::uint8_t>(dst + offsetof(B, qs) + j + m, static_cast<std::uint8_t>(q & 0xFFu));
      }
    }
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_TERNARY_QUANTIZE_HPP
