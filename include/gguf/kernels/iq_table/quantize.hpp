#ifndef GGUF_KERNELS_IQ_TABLE_QUANTIZE_HPP
#define GGUF_KERNELS_IQ_TABLE_QUANTIZE_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The IQ table types, whose 4-bit codes index ggml's 16 non-uniform levels (kvalues_iq4nl): iq4_nl and
// iq4_xs, a scale searched per 32 weights.

namespace detail {

/**
 * The least-squares scale of one 32-weight sub-block of iq4_nl / iq4_xs (the first half of ggml's
 * quantize_row_iq4_nl_impl, ntry 7): d = -max / values[0] and 15 trial inverse scales around it, each
 * weight its nearest level; 0 for a sub-block below group_max_eps. `weight` is the importance weighting.
 */
inline float iq4_scale(const float* xb, const float* weight) noexcept {
  constexpr int ntry = 7;
  const std::int8_t* values = tables::kvalues_iq4nl.data();
  float amax = 0;
  const float max = signed_amax(xb, 32, &amax);
  if (amax < group_max_eps) return 0;
  float d = -max / static_cast<float>(values[0]);
  float id = 1 / d;
  float sumqx = 0, sumq2 = 0;
  for (int j = 0; j < 32; ++j) {
    const float q = static_cast<float>(values[best_index_int8(16, values, id * xb[j])]);
    sumqx += mul(weight[j] * q, xb[j]);
    sumq2 += mul(weight[j] * q, q);
  }
  d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
  float best = d * sumqx;
  for (int itry = -ntry; itry <= ntry; ++itry) {
    id = static_cast<float>(itry + values[0]) / max;
    sumqx = sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
      const float q = static_cast<float>(values[best_index_int8(16, values, id * xb[j])]);
      sumqx += mul(weight[j] * q, xb[j]);
      sumq2 += mul(weight[j] * q, q);
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

/// Each of n weights' nearest iq4 level to x[j] * id (ggml's best_index_int8), written to L[j].
struct iq4_nearest {
  /// Writes L[0 .. n).
  void operator()(const float* x, float id, int n, std::uint8_t* L) const noexcept {
    for (int j = 0; j < n; ++j)
      L[j] = static_cast<std::uint8_t>(best_index_int8(16, tables::kvalues_iq4nl.data(), id * x[j]));
  }
};

/**
 * The second half of quantize_row_iq4_nl_impl, from the `sb / 32` sub-block scales: for iq4_xs (sb 256)
 * the scales rounded to 6 bits against d = -max_scale / 32 (the first scale of the largest magnitude) and
 * every weight's level chosen again against its rounded scale; for iq4_nl (sb 32) against the one scale.
 * Writes the half d at `dh`, the nibbles at `q4`, and for iq4_xs the scale bits at `scales_h` / `scales_l`.
 * `nearest` chooses the levels (`iq4_nearest`, or a SIMD twin of it).
 */
template <class Nearest = iq4_nearest>
inline void iq4_finish(int sb, const float* x, const float* scales, std::byte* dh, std::byte* q4, std::byte* scales_h,
                       std::byte* scales_l, Nearest nearest = {}) noexcept {
  const int nb = sb / 32;
  std::uint8_t L[qk_k];
  if (nb > 1) {
    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < nb; ++ib) {
      if (std::fabs(scales[ib]) > amax_scale) {
        amax_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    const float d = -max_scale / 32;
    store_half(dh, d);
    const float id = d != 0 ? 1 / d : 0.f;
    std::uint16_t sh = 0;
    std::uint8_t sl[qk_k / 64] = {};
    for (int ib = 0; ib < nb; ++ib) {
      int l = nearest_int(id * scales[ib]);
      l = l < -32 ? -32 : (l > 31 ? 31 : l);
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0 ? 1 / dl : 0.f;
      nearest(x + 32 * ib, idl, 32, L + 32 * ib);
      l += 32;
      const auto lo = static_cast<unsigned>(l & 0xF), hi = static_cast<unsigned>(l >> 4);
      sl[ib / 2] = static_cast<std::uint8_t>(sl[ib / 2] | (ib % 2 == 0 ? lo : lo << 4));
      sh = static_cast<std::uint16_t>(sh | (hi << (2 * (ib % 8))));
    }
    store_le<std::uint16_t>(scales_h, sh);
    std::memcpy(scales_l, sl, static_cast<std::size_t>(nb / 2));
  } else {
    store_half(dh, scales[0]);
    const float id = scales[0] != 0 ? 1 / scales[0] : 0;
    nearest(x, id, sb, L);
  }
  for (int i = 0; i < nb; ++i) {
    for (int j = 0; j < 16; ++j) {
      store_le<std::uint8_t>(q4 + 16 * i + j, static_cast<std::uint8_t>(L[32 * i + j] | (L[32 * i + 16 + j] << 4)));
    }
  }
}

/**
 * iq4_nl / iq4_xs, one super-block of `sb` weights in sub-blocks of 32 (ggml's quantize_row_iq4_nl_impl
 * with ntry 7, what ggml_quantize_chunk runs with and without weights): each sub-block's scale
 * (`iq4_scale`, weighted by qw * sqrt(sigma2 + x^2) with sigma2 twice the super-block's mean square, or
 * by x^2 without importance weights), then `iq4_finish`.
 */
inline void iq4_super_block(int sb, const float* x, const float* qw, std::byte* dh, std::byte* q4, std::byte* scales_h,
                            std::byte* scales_l) noexcept {
  const float sigma2 = sum_of_squares(x, static_cast<std::size_t>(sb)) * (2.f / static_cast<float>(sb));
  float scales[qk_k / 32] = {}, weight[32];
  for (int ib = 0; ib < sb / 32; ++ib) {
    const float* xb = x + 32 * ib;
    if (qw) {
      importance_weights(qw + 32 * ib, xb, 32, sigma2, weight);
    } else {
      for (int j = 0; j < 32; ++j) weight[j] = xb[j] * xb[j];
    }
    scales[ib] = iq4_scale(xb, weight);
  }
  iq4_finish(sb, x, scales, dh, q4, scales_h, scales_l);
}

}  // namespace detail

/// iq4_nl: one scale per 32 weights, 4-bit indices into kvalues_iq4nl; importance weights are used.
inline void quantize_iq4_nl(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using B = blocks::iq4_nl;
  for (std::size_t i = 0; i < n_per_row / 32; ++i, src += 32, dst += sizeof(B)) {
    detail::iq4_super_block(32, src, importance ? importance + 32 * i : nullptr, dst + offsetof(B, d),
                            dst + offsetof(B, qs), nullptr, nullptr);
  }
}

/// iq4_xs: iq4_nl's levels with 6-bit sub-block scales under one half d per 256; importance weights used.
inline void quantize_iq4_xs(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using B = blocks::iq4_xs;
  for (std::size_t i = 0; i < n_per_row / 256; ++i, src += 256, dst += sizeof(B)) {
    detail::iq4_super_block(256, src, importance ? importance + 256 * i : nullptr, dst + offsetof(B, d),
                            dst + offsetof(B, qs), dst + offsetof(B, scales_h), dst + offsetof(B, scales_l));
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_IQ_TABLE_QUANTIZE_HPP
