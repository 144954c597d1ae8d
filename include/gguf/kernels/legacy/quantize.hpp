#ifndef GGUF_KERNELS_LEGACY_QUANTIZE_HPP
#define GGUF_KERNELS_LEGACY_QUANTIZE_HPP

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The first-generation 32-weight blocks, as ggml_quantize_chunk writes them. Without importance weights
// each block is rounded straight from its extremes (quantize_row_*_ref); with them, the _0 types search a
// symmetric scale (make_qx_quants) and the _1 types a scale and min (make_qkx3_quants), weighting each
// weight by importance * sqrt(mean square of the row + x^2).

namespace detail {

/// A nibble pair byte: weight j low, weight j + 16 high (the legacy blocks' order).
inline std::uint8_t nibbles(int lo, int hi) noexcept {
  return static_cast<std::uint8_t>(static_cast<unsigned>(lo | (hi << 4)) & 0xFFu);
}

/// ggml's `MIN(top, (int8_t)(v))` of a float: the cast as x86 performs it, then the signed minimum.
inline int min_of_int8(int top, float v) noexcept {
  const auto q = static_cast<std::int8_t>(x86_trunc_byte(v));
  return q < top ? q : top;
}

/// The fifth bits of 32 levels, bit j for weight j (q5_0, q5_1's qh).
inline std::uint32_t fifth_bits(const int* q) noexcept {
  std::uint32_t qh = 0;
  for (int j = 0; j < 32; ++j) qh |= ((static_cast<std::uint32_t>(q[j]) & 0x10u) >> 4) << j;
  return qh;
}

/// The mean square of a row: the spread ggml's importance weighting of the legacy types adds to x^2.
inline float row_sigma2(const float* x, std::size_t n) noexcept { return sum_of_squares(x, n) / static_cast<float>(n); }

/// q4_0 and q5_0 without weights: d = max / -(2^(bits-1)), q = x / d + 2^(bits-1) rounded down from +0.5.
template <int Bits>
inline void round_symmetric(const float* x, std::byte* y, std::size_t nb, std::size_t block_bytes) noexcept {
  constexpr int half = 1 << (Bits - 1), top = (1 << Bits) - 1;
  for (std::size_t i = 0; i < nb; ++i, x += 32, y += block_bytes) {
    const float max = signed_amax(x, 32);
    const float d = max / static_cast<float>(-half);
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_half(y, d);
    int q[32];
    for (int j = 0; j < 32; ++j) q[j] = min_of_int8(top, mul(x[j], id) + (static_cast<float>(half) + 0.5f));
    std::byte* qs = y + block_bytes - 16;
    for (int j = 0; j < 16; ++j) store_le<std::uint8_t>(qs + j, nibbles(q[j] & 0xF, q[j + 16] & 0xF));
    if constexpr (Bits == 5) store_le<std::uint32_t>(y + 2, fifth_bits(q));
  }
}

/// q4_1 and q5_1 without weights: d = (max - min) / (2^bits - 1), q = (x - min) / d rounded.
template <int Bits>
inline void round_with_min(const float* x, std::byte* y, std::size_t nb, std::size_t block_bytes) noexcept {
  constexpr int top = (1 << Bits) - 1;
  for (std::size_t i = 0; i < nb; ++i, x += 32, y += block_bytes) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < 32; ++j) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / static_cast<float>(top);
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_half(y, d);
    store_half(y + 2, min);
    int q[32];
    for (int j = 0; j < 32; ++j) {
      const float v = mul(x[j] - min, id) + 0.5f;
      // q4_1 clamps to 15 through int8; q5_1 keeps the cast's byte as ggml does.
      q[j] = Bits == 4 ? min_of_int8(top, v) : x86_trunc_byte(v);
    }
    std::byte* qs = y + block_bytes - 16;
    for (int j = 0; j < 16; ++j) store_le<std::uint8_t>(qs + j, nibbles(q[j] & 0xF, q[j + 16] & 0xF));
    if constexpr (Bits == 5) store_le<std::uint32_t>(y + 4, fifth_bits(q));
  }
}

/// q4_0 and q5_0 with weights: make_qx_quants per block.
template <int Bits>
inline void search_symmetric(const float* x, std::byte* y, std::size_t n, const float* qw,
                             std::size_t block_bytes) noexcept {
  const float sigma2 = row_sigma2(x, n);
  float weight[32];
  std::int8_t L[32];
  for (std::size_t ib = 0; ib < n / 32; ++ib, x += 32, qw += 32, y += block_bytes) {
    importance_weights(qw, x, 32, sigma2, weight);
    store_half(y, make_qx_quants(32, 1 << (Bits - 1), x, L, weight));
    int q[32];
    for (int j = 0; j < 32; ++j) q[j] = L[j];
    std::byte* qs = y + block_bytes - 16;
    for (int j = 0; j < 16; ++j) store_le<std::uint8_t>(qs + j, nibbles(q[j] & 0xF, q[j + 16] & 0xF));
    if constexpr (Bits == 5) store_le<std::uint32_t>(y + 2, fifth_bits(q));
  }
}

/// q4_1 and q5_1 with weights: make_qkx3_quants per block (levels 0..2^bits - 1 and a min).
template <int Bits>
inline void search_with_min(const float* x, std::byte* y, std::size_t n, const float* qw,
                            std::size_t block_bytes) noexcept {
  const float sigma2 = row_sigma2(x, n);
  float weight[32];
  std::uint8_t L[32], Laux[32];
  for (std::size_t ib = 0; ib < n / 32; ++ib, x += 32, qw += 32, y += block_bytes) {
    importance_weights(qw, x, 32, sigma2, weight);
    float min = 0;
    const float d = make_qkx_quants(32, (1 << Bits) - 1, x, weight, L, &min, Laux, -0.9f, 0.05f, 36, false);
    store_half(y, d);
    store_half(y + 2, -min);
    int q[32];
    for (int j = 0; j < 32; ++j) q[j] = L[j];
    std::byte* qs = y + block_bytes - 16;
    for (int j = 0; j < 16; ++j) store_le<std::uint8_t>(qs + j, nibbles(q[j] & 0xF, q[j + 16] & 0xF));
    if constexpr (Bits == 5) store_le<std::uint32_t>(y + 4, fifth_bits(q));
  }
}

/**
 * A q4/q5 row: with importance weights a weighted search of the scale (and of the min, for the _1
 * types), without them ggml's plain rounding of max / -2^(Bits-1) (or (max - min) / (2^Bits - 1)).
 */
template <int Bits, bool WithMin, class B>
inline void legacy_row(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  if constexpr (WithMin) {
    if (importance) {
      search_with_min<Bits>(src, dst, n_per_row, importance, sizeof(B));
    } else {
      round_with_min<Bits>(src, dst, n_per_row / 32, sizeof(B));
    }
  } else {
    if (importance) {
      search_symmetric<Bits>(src, dst, n_per_row, importance, sizeof(B));
    } else {
      round_symmetric<Bits>(src, dst, n_per_row / 32, sizeof(B));
    }
  }
}

}  // namespace detail

/// q4_0: d = max / -8 and rounded nibbles; with importance weights, a weighted search of d.
inline void quantize_q4_0(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::legacy_row<4, false, blocks::q4_0>(src, dst, n_per_row, importance);
}

/// q4_1: d = (max - min) / 15 and m = min; with importance weights, a weighted search of both.
inline void quantize_q4_1(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::legacy_row<4, true, blocks::q4_1>(src, dst, n_per_row, importance);
}

/// q5_0: d = max / -16 and rounded 5-bit levels; with importance weights, a weighted search of d.
inline void quantize_q5_0(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::legacy_row<5, false, blocks::q5_0>(src, dst, n_per_row, importance);
}

/// q5_1: d = (max - min) / 31 and m = min; with importance weights, a weighted search of both.
inline void quantize_q5_1(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::legacy_row<5, true, blocks::q5_1>(src, dst, n_per_row, importance);
}

/// q8_0: d = amax / 127, q = round(x / d). ggml ignores importance weights for q8_0.
inline void quantize_q8_0(const float* src, std::byte* dst, std::size_t n_per_row,
                          const float* /*importance*/) noexcept {
  using namespace detail;
  for (std::size_t i = 0; i < n_per_row / 32; ++i, src += 32, dst += sizeof(blocks::q8_0)) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = c_max(amax, std::fabs(src[j]));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_half(dst, d);
    for (int j = 0; j < 32; ++j) store_le<std::uint8_t>(dst + 2 + j, x86_trunc_byte(std::round(src[j] * id)));
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_LEGACY_QUANTIZE_HPP
