#ifndef GGUF_KERNELS_IQ_TABLE_QUANTIZE_SIMD_HPP
#define GGUF_KERNELS_IQ_TABLE_QUANTIZE_SIMD_HPP

#include <cstddef>
#include <cstdint>
#include <limits>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"
#include "gguf/kernels/iq_table/quantize.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/simd/quantize_search.hpp"
#include "gguf/kernels/tables.hpp"
#include "gguf/result.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the iq4_nl and iq4_xs quantizers. Their time is the scale search of each 32-weight
// sub-block (`scalar::detail::iq4_scale`: 16 trial scales, each weight's nearest of the 16 non-linear
// levels for each): here lanes<A> sub-blocks at once, one a lane, every operation the scalar one in the
// scalar order (as quantize_search.hpp's searches), the nearest level found by comparisons against all
// 16 levels instead of a binary search (the same level, ties and NaN included). The rounding of the
// scales that follows is `scalar::detail::iq4_finish` itself, its levels chosen in lanes too.
// A super-block with a NaN or an infinity in its weights or importance weights goes through the scalar
// twin.

namespace detail {

/**
 * ggml's best_index_int8(16, kvalues_iq4nl, p) in every lane (`index`, as a float) and its level: p at
 * or below the first level gives 0, at or above the last (or NaN, where the binary search ends) 15,
 * otherwise the nearer of the two levels around p, the upper one on a tie.
 */
template <class A>
inline void nearest_iq4(const fbatch<A>& p, const fbatch<A> (&v)[16], fbatch<A>& index, fbatch<A>& level) noexcept {
  using F = fbatch<A>;
  F lo = v[0], below(0.0f), hi = v[15];
  for (int k = 1; k < 15; ++k) {  // lo: the last level <= p, hi: the first level > p
    const auto le = v[k] <= p;
    lo = xsimd::select(le, v[k], lo);
    below = xsimd::select(le, F(static_cast<float>(k)), below);
  }
  for (int k = 14; k >= 1; --k) hi = xsimd::select(v[k] > p, v[k], hi);
  const auto down = (p - lo) < (hi - p);
  const auto first = p <= v[0], last = !(p < v[15]);
  index = xsimd::select(first, F(0.0f), xsimd::select(last, F(15.0f), xsimd::select(down, below, below + F(1.0f))));
  level = xsimd::select(first, v[0], xsimd::select(last, v[15], xsimd::select(down, lo, hi)));
}

/**
 * `scalar::detail::iq4_scale` for lanes<A> sub-blocks of 32 at once, lane j the sub-block at x + 32 * j
 * with the weighting w + 32 * j (x^2 when w is null); `count` sub-blocks are real. Writes scale[j].
 */
template <class A>
inline void iq4_scales_lanes(const float* x, const float* w, std::size_t count, float* scale_out) noexcept {
  constexpr std::size_t G = lanes<A>, N = 32;
  using F = fbatch<A>;
  const std::int8_t* values = tables::kvalues_iq4nl.data();
  F v[16];
  for (std::size_t k = 0; k < 16; ++k) v[k] = F(static_cast<float>(values[k]));
  alignas(64) float xt[N][G], wt[N][G];
  transpose_groups<A, N>(x, count, xt);
  if (w) {
    transpose_groups<A, N>(w, count, wt);
  } else {
    for (std::size_t i = 0; i < N; ++i) (F::load_aligned(xt[i]) * F::load_aligned(xt[i])).store_aligned(wt[i]);
  }
  const F zero(0.0f);
  const F max = largest_magnitude<A, N>(xt);
  const auto live = xsimd::abs(max) >= F(scalar::detail::group_max_eps);
  const auto sums = [&](const F& id, F& sumqx, F& sumq2) {
    sumqx = sumq2 = zero;
    for (std::size_t i = 0; i < N; ++i) {
      const F xi = F::load_aligned(xt[i]), wi = F::load_aligned(wt[i]);
      F index, q;
      nearest_iq4<A>(id * xi, v, index, q);
      sumqx += mul_rounded<A>(wi * q, xi);
      sumq2 += mul_rounded<A>(wi * q, q);
    }
  };
  F sumqx, sumq2;
  const F d0 = div<A>(negate<A>(max), v[0]);
  sums(div<A>(F(1.0f), d0), sumqx, sumq2);
  F d = xsimd::select(sumq2 > zero, div<A>(sumqx, sumq2), zero);
  F best = d * sumqx;
  for (int itry = -7; itry <= 7; ++itry) {
    sums(div<A>(F(static_cast<float>(itry + values[0])), max), sumqx, sumq2);
    const auto better = sumq2 > zero && sumqx * sumqx > best * sumq2;
    if (!xsimd::any(better)) continue;
    d = xsimd::select(better, div<A>(sumqx, sumq2), d);
    best = xsimd::select(better, d * sumqx, best);
  }
  alignas(64) float scales[G];
  xsimd::select(live, d, zero).store_aligned(scales);
  for (std::size_t j = 0; j < count; ++j) scale_out[j] = scales[j];
}

/// `scalar::detail::iq4_nearest` in lanes: n (a multiple of lanes<A>) weights' nearest levels to x * id.
template <class A>
struct iq4_nearest_lanes {
  /// Writes L[0 .. n).
  void operator()(const float* x, float id, int n, std::uint8_t* L) const noexcept {
    using F = fbatch<A>;
    F v[16];
    for (std::size_t k = 0; k < 16; ++k) v[k] = F(static_cast<float>(tables::kvalues_iq4nl[k]));
    for (std::size_t j = 0; j < static_cast<std::size_t>(n); j += lanes<A>) {
      F index, level;
      nearest_iq4<A>(F(id) * F::load_unaligned(x + j), v, index, level);
      store_low_bytes<A>(reinterpret_cast<std::byte*>(L + j), xsimd::batch_cast<std::int32_t>(index));
    }
  }
};

/// Whether all n floats at p are finite (none NaN or infinite).
template <class A>
inline bool all_finite(const float* p, std::size_t n) noexcept {
  const fbatch<A> inf(std::numeric_limits<float>::infinity());
  auto finite = fbatch<A>(0.0f) < inf;
  for (std::size_t j = 0; j < n; j += lanes<A>) finite = finite & (xsimd::abs(fbatch<A>::load_unaligned(p + j)) < inf);
  return xsimd::all(finite);
}

/**
 * iq4_nl (SB 32) or iq4_xs (SB 256) rows: the sub-block scales of a chunk of whole super-blocks and whole
 * lane groups in lanes, then each super-block's `iq4_finish`.
 */
template <class A, int SB, class B>
inline void quantize_iq4_rows(const float* x, std::byte* y, std::size_t n, const float* qw) noexcept {
  namespace q = scalar::detail;
  constexpr std::size_t G = lanes<A>, per_sb = SB / 32, K = G > per_sb ? G : per_sb;
  static_assert(K % G == 0 && K % per_sb == 0);
  const auto scales_h = [](std::byte* block) {  // iq4_xs' sub-block scales (iq4_nl has none)
    if constexpr (SB == 32) {
      return static_cast<std::byte*>(nullptr);
    } else {
      return block + offsetof(B, scales_h);
    }
  };
  const auto scales_l = [](std::byte* block) {
    if constexpr (SB == 32) {
      return static_cast<std::byte*>(nullptr);
    } else {
      return block + offsetof(B, scales_l);
    }
  };
  alignas(64) float weight[32 * K];
  float scales[K];
  const std::size_t nsub = n / 32;
  for (std::size_t first = 0; first < nsub; first += K) {
    const std::size_t count = nsub - first < K ? nsub - first : K;  // whole super-blocks, as n is
    const float* xc = x + 32 * first;
    const float* wc = qw ? qw + 32 * first : nullptr;
    std::byte* yc = y + sizeof(B) * (first / per_sb);
    const bool simd = all_finite<A>(xc, 32 * count) && (!wc || all_finite<A>(wc, 32 * count));
    if (simd && wc) {
      for (std::size_t s = 0; s < count / per_sb; ++s) {
        const float* xs = xc + SB * s;
        const float sigma2 = q::sum_of_squares(xs, SB) * (2.f / static_cast<float>(SB));
        importance_weights<A>(wc + SB * s, xs, SB, sigma2, weight + SB * s);
      }
    }
    for (std::size_t g = 0; simd && g < count; g += G) {
      iq4_scales_lanes<A>(xc + 32 * g, wc ? weight + 32 * g : nullptr, count - g < G ? count - g : G, scales + g);
    }
    for (std::size_t s = 0; s < count / per_sb; ++s) {
      const float* xs = xc + SB * s;
      std::byte* ys = yc + sizeof(B) * s;
      if (simd) {
        q::iq4_finish(SB, xs, scales + per_sb * s, ys + offsetof(B, d), ys + offsetof(B, qs), scales_h(ys),
                      scales_l(ys), iq4_nearest_lanes<A>{});
      } else {
        q::iq4_super_block(SB, xs, wc ? wc + SB * s : nullptr, ys + offsetof(B, d), ys + offsetof(B, qs), scales_h(ys),
                           scales_l(ys));
      }
    }
  }
}

}  // namespace detail

/// iq4_nl rows (`scalar::quantize_iq4_nl`): the block scales' searches in lanes.
template <class A>
inline errc quantize_iq4_nl(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::quantize_iq4_rows<A, 32, blocks::iq4_nl>(src, dst, n_per_row, importance);
  return errc::success;
}

/// iq4_xs rows (`scalar::quantize_iq4_xs`): the sub-block scales' searches in lanes.
template <class A>
inline errc quantize_iq4_xs(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  detail::quantize_iq4_rows<A, 256, blocks::iq4_xs>(src, dst, n_per_row, importance);
  return errc::success;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_IQ_TABLE_QUANTIZE_SIMD_HPP
