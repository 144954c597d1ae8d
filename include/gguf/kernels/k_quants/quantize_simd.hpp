#ifndef GGUF_KERNELS_K_QUANTS_QUANTIZE_SIMD_HPP
#define GGUF_KERNELS_K_QUANTS_QUANTIZE_SIMD_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"
#include "gguf/kernels/k_quants/quantize.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/simd/quantize_search.hpp"
#include "gguf/result.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the k-quant quantizers. Their time goes into the sub-block searches (make_qkx_quants
// tries 16 to 37 scales per sub-block, each a pass over its weights): those run in lanes, one sub-block
// per lane (simd/quantize_search.hpp), the scalar search's bits for every input. The rest of a
// super-block (its scales' scale, the re-rounding, the packing) is the scalar code itself.

namespace detail {

/**
 * `scalar::detail::requantize_symmetric` (q3_K's and q6_K's second pass) with a sub-block's weights in
 * lanes. The levels of the first pass survive only in sub-blocks whose stored scale is 0, so with
 * `Search` those are not kept by the searches at all (their transposition back would cost more than the
 * rest of the block's work) but found again, by the scalar search of q3_K without importance weights.
 */
template <class A, bool Search = false>
struct requantize_symmetric_lanes {
  /// Re-rounds the levels `L` of the 256 weights `x` against the 16 sub-block scales `dl`.
  void operator()(const float* x, const float* dl, int half, std::int8_t* L) const noexcept {
    using F = fbatch<A>;
    using I = ibatch<A>;
    static_assert(16 % lanes<A> == 0);
    const I low(-half), high(half - 1), offset(half);
    for (std::size_t j = 0; j < 16; ++j) {
      if (dl[j] == 0) {
        if constexpr (Search) scalar::detail::make_q3_quants(16, half, x + 16 * j, L + 16 * j);
        continue;
      }
      const F d(dl[j]);
      for (std::size_t i = 16 * j; i < 16 * j + 16; i += lanes<A>) {
        const I l = nearest_int<A>(div<A>(F::load_unaligned(x + i), d));
        store_low_bytes<A>(reinterpret_cast<std::byte*>(L + i), xsimd::min(xsimd::max(l, low), high) + offset);
      }
    }
  }
};

/// q3_K rows (`scalar::quantize_q3_K`): the 16 sub-block searches in lanes, then `scalar::detail::q3_K_finish`.
template <class A>
inline void quantize_q3_K_rows(const float* src, std::byte* dst, std::size_t n_per_row, const float* qw) noexcept {
  namespace q = scalar::detail;
  constexpr std::size_t G = lanes<A>, qk = q::qk_k;
  constexpr std::size_t S = 4;  // super-blocks searched together without importance weights
  static_assert(16 * S % G == 0);
  const std::size_t nb = n_per_row / qk;
  if (!qw) {
    std::int8_t L[qk];  // every level is re-rounded or searched again in q3_K_finish: no input
    float scales[S * 16];
    for (std::size_t b = 0; b < nb; b += S) {
      const std::size_t n = nb - b < S ? nb - b : S;
      const float* x = src + qk * b;
      make_q3_quants_lanes<A, 16, 16 * S>(x, 16 * n, 4, scales);
      for (std::size_t s = 0; s < n; ++s) {
        q::q3_K_finish(x + qk * s, dst + sizeof(blocks::q3_K) * (b + s), nullptr, scales + 16 * s, nullptr, L,
                       requantize_symmetric_lanes<A, true>{});
      }
    }
    return;
  }
  std::int8_t L[qk];
  alignas(64) float weights[qk];
  float scales[16], sw[16] = {};
  for (std::size_t b = 0; b < nb; ++b) {
    const float* x = src + qk * b;
    const float* w = qw + qk * b;
    const float sigma2 = 2 * q::sum_of_squares(x, qk) / qk;
    for (int j = 0; j < 16; ++j) q::q3_K_weights(x, w, sigma2, j, weights + 16 * j, &sw[j]);
    for (std::size_t g = 0; g < 16; g += G) {
      const std::size_t count = 16 - g < G ? 16 - g : G;
      make_qx_quants_lanes<A, 16>(x + 16 * g, weights + 16 * g, count, 4, L + 16 * g, scales + g);
    }
    q::q3_K_finish(x, dst + sizeof(blocks::q3_K) * b, w, scales, sw, L, requantize_symmetric_lanes<A>{});
  }
}

/// q6_K rows (`scalar::quantize_q6_K`): the 16 sub-block searches in lanes, then `scalar::detail::q6_K_finish`.
template <class A>
inline void quantize_q6_K_rows(const float* src, std::byte* dst, std::size_t n_per_row, const float* qw) noexcept {
  namespace q = scalar::detail;
  constexpr std::size_t G = lanes<A>, qk = q::qk_k;
  std::int8_t L[qk];
  float scales[16];
  for (std::size_t b = 0; b < n_per_row / qk; ++b) {
    const float* x = src + qk * b;
    const float* w = qw ? qw + qk * b : nullptr;
    for (std::size_t g = 0; g < 16; g += G) {
      const std::size_t count = 16 - g < G ? 16 - g : G;
      make_qx_quants_lanes<A, 16>(x + 16 * g, w ? w + 16 * g : nullptr, count, 32, L + 16 * g, scales + g);
    }
    q::q6_K_finish(x, dst + sizeof(blocks::q6_K) * b, scales, L, requantize_symmetric_lanes<A>{});
  }
}

/**
 * q4_K / q5_K rows (`scalar::quantize_q4_K`, `quantize_q5_K`): the sub-block searches of lanes<A> / 8
 * super-blocks at once (of half a super-block twice, with 4 lanes), then `scalar::detail::k4_finish`.
 */
template <class A, int Bits, class B>
inline void quantize_k4(const float* src, std::byte* dst, std::size_t n_per_row, const float* qw) noexcept {
  namespace q = scalar::detail;
  constexpr std::size_t G = lanes<A>, per_group = G >= 8 ? G / 8 : 1, qk = q::qk_k;
  constexpr q::k4_trials plain = q::k4_trials_of<Bits>(false), weighted = q::k4_trials_of<Bits>(true);
  const q::k4_trials t = qw ? weighted : plain;
  const std::size_t nb = n_per_row / qk;
  for (std::size_t first = 0; first < nb; first += per_group) {
    const std::size_t n = nb - first < per_group ? nb - first : per_group;
    alignas(64) float weights[per_group * qk];
    float scales[per_group * 8], mins[per_group * 8], sw[per_group * 8] = {};
    std::uint8_t L[per_group * qk];
    const float* x = src + qk * first;
    const float* imp = qw ? qw + qk * first : nullptr;
    for (std::size_t b = 0; b < n; ++b) {
      const float sigma2 = imp ? q::k4_sigma2(x + qk * b) : 0.f;
      for (int j = 0; j < 8; ++j) {
        q::k4_weights(x + qk * b, imp ? imp + qk * b : nullptr, sigma2, j,
                      weights + qk * b + 32 * static_cast<std::size_t>(j), &sw[8 * b + static_cast<std::size_t>(j)]);
      }
    }
    for (std::size_t g = 0; g < 8 * n; g += G) {
      const std::size_t count = 8 * n - g < G ? 8 * n - g : G;
      make_qkx_quants_lanes<A, 32>(x + 32 * g, weights + 32 * g, count, (1 << Bits) - 1, t.rmin, t.rdelta, t.nstep,
                                   L + 32 * g, scales + g, mins + g);
    }
    for (std::size_t b = 0; b < n; ++b) {
      q::k4_finish<Bits>(x + qk * b, dst + sizeof(B) * (first + b), imp ? imp + qk * b : nullptr, scales + 8 * b,
                         mins + 8 * b, sw + 8 * b, L + qk * b);
    }
  }
}

/// q2_K rows (`scalar::quantize_q2_K`): the 16 sub-block searches in lanes, then `scalar::detail::q2_K_finish`.
template <class A>
inline void quantize_q2_K_rows(const float* src, std::byte* dst, std::size_t n_per_row, const float* qw) noexcept {
  namespace q = scalar::detail;
  constexpr std::size_t G = lanes<A>, qk = q::qk_k;
  std::uint8_t L[qk];
  alignas(64) float weights[qk];
  float scales[16], mins[16], sw[16] = {};
  for (std::size_t b = 0; b < n_per_row / qk; ++b) {
    const float* x = src + qk * b;
    const float* w = qw ? qw + qk * b : nullptr;
    const float sigma2 = w ? q::sum_of_squares(x, qk) / qk : 0.f;
    for (int j = 0; j < 16; ++j) q::q2_K_weights(x, w, sigma2, j, weights + 16 * j, &sw[j]);
    for (std::size_t g = 0; g < 16; g += G) {
      const std::size_t count = 16 - g < G ? 16 - g : G;
      if (w) {
        make_qkx_quants_lanes<A, 16>(x + 16 * g, weights + 16 * g, count, 3, -0.9f, 0.05f, 36, L + 16 * g, scales + g,
                                     mins + g);
      } else {
        make_qkx_quants_lanes<A, 16, true>(x + 16 * g, weights + 16 * g, count, 3, -0.5f, 0.1f, 15, L + 16 * g,
                                           scales + g, mins + g);
      }
    }
    q::q2_K_finish(x, dst + sizeof(blocks::q2_K) * b, w, scales, mins, sw, L);
  }
}

}  // namespace detail

/// q2_K rows: `scalar::quantize_q2_K`'s bytes, the sub-block searches in SIMD lanes.
template <class A>
inline errc quantize_q2_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::quantize_q2_K_rows<A>(src, dst, n_per_row, importance);
  return errc::success;
}

/// q3_K rows: `scalar::quantize_q3_K`'s bytes, the sub-block searches in SIMD lanes.
template <class A>
inline errc quantize_q3_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::quantize_q3_K_rows<A>(src, dst, n_per_row, importance);
  return errc::success;
}

/// q6_K rows: `scalar::quantize_q6_K`'s bytes, the sub-block searches in SIMD lanes.
template <class A>
inline errc quantize_q6_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::quantize_q6_K_rows<A>(src, dst, n_per_row, importance);
  return errc::success;
}

/// q4_K rows: `scalar::quantize_q4_K`'s bytes, the sub-block searches in SIMD lanes.
template <class A>
inline errc quantize_q4_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::quantize_k4<A, 4, blocks::q4_K>(src, dst, n_per_row, importance);
  return errc::success;
}

/// q5_K rows: `scalar::quantize_q5_K`'s bytes, the sub-block searches in SIMD lanes.
template <class A>
inline errc quantize_q5_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::quantize_k4<A, 5, blocks::q5_K>(src, dst, n_per_row, importance);
  return errc::success;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_K_QUANTS_QUANTIZE_SIMD_HPP
