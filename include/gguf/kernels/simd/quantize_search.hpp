#ifndef GGUF_KERNELS_SIMD_QUANTIZE_SEARCH_HPP
#define GGUF_KERNELS_SIMD_QUANTIZE_SEARCH_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/kernels/scalar/quantize/common.hpp"
#include "gguf/kernels/simd/ops.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd::detail {

// ggml's scale searches (make_qkx_quants, make_qx_quants, make_q3_quants) in SIMD lanes, for the
// quantizers whose time they take: the k-quants' sub-blocks and the legacy blocks with importance
// weights. A search's sums run in the order of its weights, so the lanes are groups (sub-blocks or
// blocks), not weights. Each lane does exactly what the scalar search does to its group, operation for
// operation (a product is rounded before anything is added to it, as `scalar::quant::mul` makes sure;
// comparisons and selects as the scalar branches; NaN and infinities flow through the same IEEE
// operations), so the results are the scalar search's bits for every input.
// Every division goes through `div` (exact on neon64, where xsimd 8.1 divides by a refined reciprocal).
// Never a float `!=` on batches: xsimd's is ordered on AVX and AVX-512 (false for NaN), unordered on SSE
// and NEON; C's `!=` is unordered, so it is written `!(a == b)`.

/// `a * b` rounded, opaque to the optimiser: no later add may fuse with it (`scalar::quant::mul`).
template <class A>
inline fbatch<A> mul_rounded(const fbatch<A>& a, const fbatch<A>& b) noexcept {
  fbatch<A> p = a * b;
  opaque<A>(p);
  return p;
}

/// `scalar::quant::nearest_int` in every lane: the float rounded (to nearest even) by adding 1.5 * 2^23.
template <class A>
inline ibatch<A> nearest_int(fbatch<A> x) noexcept {
  opaque<A>(x);
  const fbatch<A> v = x + fbatch<A>(12582912.0f);
  return (as_int<A>(v) & ibatch<A>(0x007FFFFF)) - ibatch<A>(0x00400000);
}

/**
 * ggml's importance weighting (`scalar::quant::importance_weights`) of n weights, n a multiple
 * of lanes<A>: qw * sqrt(sigma2 + x^2), every operation IEEE-rounded (sqrt included), so each lane is the
 * scalar float.
 */
template <class A>
inline void importance_weights(const float* qw, const float* x, std::size_t n, float sigma2, float* out) noexcept {
  for (std::size_t j = 0; j < n; j += lanes<A>) {
    const fbatch<A> v = fbatch<A>::load_unaligned(x + j);
    const fbatch<A> w =
        mul_rounded<A>(fbatch<A>::load_unaligned(qw + j), sqrt<A>(fbatch<A>(sigma2) + mul_rounded<A>(v, v)));
    w.store_unaligned(out + j);
  }
}

/// Groups of N floats as lanes: t[i][j] is float i of group j (at p + N * j), 0 in the idle lanes j >= count.
template <class A, std::size_t N>
inline void transpose_groups(const float* p, std::size_t count, float (&t)[N][lanes<A>]) noexcept {
  for (std::size_t j = 0; j < lanes<A>; ++j) {
    for (std::size_t i = 0; i < N; ++i) t[i][j] = j < count ? p[N * j + i] : 0.0f;
  }
}

/// Each lane's first weight of the largest magnitude (NaN never wins; 0 for a group of zeros).
template <class A, std::size_t N>
inline fbatch<A> largest_magnitude(const float (&xt)[N][lanes<A>]) noexcept {
  using F = fbatch<A>;
  F amax(0.0f), max(0.0f);
  for (std::size_t i = 0; i < N; ++i) {
    const F xi = F::load_aligned(xt[i]), ax = xsimd::abs(xi);
    const auto larger = ax > amax;
    amax = xsimd::select(larger, ax, amax);
    max = xsimd::select(larger, xi, max);
  }
  return max;
}

/**
 * `scalar::quant::make_qkx_quants` for lanes<A> groups of N weights at once, lane j the group at
 * x + N * j with weights w + N * j; `count` groups are real, the other lanes idle. Writes each group's
 * levels to L + N * j, its scale to scale[j] and its min to the_min[j]. The error is squared, or
 * absolute with UseMad.
 */
template <class A, std::size_t N, bool UseMad = false>
inline void make_qkx_quants_lanes(const float* x, const float* w, std::size_t count, int nmax, float rmin, float rdelta,
                                  int nstep, std::uint8_t* L, float* scale_out, float* min_out) noexcept {
  constexpr std::size_t G = lanes<A>;
  using F = fbatch<A>;
  using I = ibatch<A>;
  alignas(64) float xt[N][G], wt[N][G];  // transposed: xt[i][j] is weight i of group j
  transpose_groups<A, N>(x, count, xt);
  transpose_groups<A, N>(w, count, wt);
  const auto X = [&](std::size_t i) { return F::load_aligned(xt[i]); };
  const auto W = [&](std::size_t i) { return F::load_aligned(wt[i]); };
  const F zero(0.0f);
  const I top(nmax);
  const auto error_of = [](const F& diff) {
    if constexpr (UseMad) {
      return xsimd::abs(diff);
    } else {
      return diff * diff;
    }
  };
  const auto level = [&](const F& iscale, const F& v, const F& low) {  // as a float: exact, 0 ... nmax
    const I l = nearest_int<A>(iscale * (v - low));
    return to_float<A>(xsimd::min(xsimd::max(l, I(0)), top));
  };

  F min = X(0), max = X(0), sum_w = W(0);
  F sum_x = mul_rounded<A>(sum_w, X(0));
  for (std::size_t i = 1; i < N; ++i) {
    const F xi = X(i), wi = W(i);
    min = xsimd::select(xi < min, xi, min);
    max = xsimd::select(xi > max, xi, max);
    sum_w += wi;
    sum_x += mul_rounded<A>(wi, xi);
  }
  min = xsimd::select(min > zero, zero, min);
  // the others return at once: every level 0, scale 0, their min. Not `max != min`: xsimd's float != is
  // ordered on AVX (false for NaN) and unordered on SSE; C's is true for NaN
  const auto live = !(max == min);

  alignas(64) float best[N][G], trial[N][G];  // levels
  F iscale = div<A>(F(static_cast<float>(nmax)), max - min);
  F scale = div<A>(F(1.0f), iscale);
  F best_error = zero;
  for (std::size_t i = 0; i < N; ++i) {
    const F xi = X(i);
    const F l = level(iscale, xi, min);
    l.store_aligned(best[i]);
    const F diff = (mul_rounded<A>(scale, l) + min) - xi;
    best_error += mul_rounded<A>(W(i), error_of(diff));
  }
  for (int is = 0; is <= nstep; ++is) {
    const float step = scalar::quant::mul(rdelta, is);
    iscale = div<A>(F(rmin + step + static_cast<float>(nmax)), max - min);
    F sum_l = zero, sum_l2 = zero, sum_xl = zero;
    for (std::size_t i = 0; i < N; ++i) {
      const F xi = X(i), wi = W(i);
      const F l = level(iscale, xi, min);
      l.store_aligned(trial[i]);
      const F wl = wi * l;
      sum_l += mul_rounded<A>(wi, l);
      sum_l2 += mul_rounded<A>(wl, l);
      sum_xl += mul_rounded<A>(wl, xi);
    }
    const F D = mul_rounded<A>(sum_w, sum_l2) - mul_rounded<A>(sum_l, sum_l);
    const auto solvable = live && D > zero;
    if (!xsimd::any(solvable)) continue;
    F this_scale = div<A>(mul_rounded<A>(sum_w, sum_xl) - mul_rounded<A>(sum_x, sum_l), D);
    F this_min = div<A>(mul_rounded<A>(sum_l2, sum_x) - mul_rounded<A>(sum_l, sum_xl), D);
    const auto positive = this_min > zero;
    this_min = xsimd::select(positive, zero, this_min);
    this_scale = xsimd::select(positive, div<A>(sum_xl, sum_l2), this_scale);
    F cur_error = zero;
    for (std::size_t i = 0; i < N; ++i) {
      const F diff = (mul_rounded<A>(this_scale, F::load_aligned(trial[i])) + this_min) - X(i);
      cur_error += mul_rounded<A>(W(i), error_of(diff));
    }
    const auto better = solvable && cur_error < best_error;
    if (!xsimd::any(better)) continue;
    for (std::size_t i = 0; i < N; ++i) {
      xsimd::select(better, F::load_aligned(trial[i]), F::load_aligned(best[i])).store_aligned(best[i]);
    }
    best_error = xsimd::select(better, cur_error, best_error);
    scale = xsimd::select(better, this_scale, scale);
    min = xsimd::select(better, this_min, min);
  }
  alignas(64) float scales[G], mins[G], lives[G];
  xsimd::select(live, scale, zero).store_aligned(scales);
  negate<A>(min).store_aligned(mins);  // not -min: xsimd's is 0 - min on AVX-512
  xsimd::select(live, F(1.0f), zero).store_aligned(lives);
  for (std::size_t j = 0; j < count; ++j) {
    scale_out[j] = scales[j];
    min_out[j] = mins[j];
    for (std::size_t i = 0; i < N; ++i) {
      L[N * j + i] = lives[j] != 0.0f ? static_cast<std::uint8_t>(best[i][j]) : std::uint8_t{0};
    }
  }
}

/**
 * `scalar::quant::make_qx_quants` for lanes<A> groups of N weights at once, lane j the group at
 * x + N * j with importance weights qw + N * j (or x^2 without them); `count` groups are real. Writes
 * each group's levels + nmax to L + N * j and its scale to scale[j].
 */
template <class A, std::size_t N>
inline void make_qx_quants_lanes(const float* x, const float* qw, std::size_t count, int nmax, std::int8_t* L,
                                 float* scale_out) noexcept {
  constexpr std::size_t G = lanes<A>;
  using F = fbatch<A>;
  using I = ibatch<A>;
  alignas(64) float xt[N][G], wt[N][G];  // transposed: xt[i][j] is weight i of group j
  transpose_groups<A, N>(x, count, xt);
  if (qw) {
    transpose_groups<A, N>(qw, count, wt);
  } else {
    for (std::size_t i = 0; i < N; ++i) (F::load_aligned(xt[i]) * F::load_aligned(xt[i])).store_aligned(wt[i]);
  }
  const auto X = [&](std::size_t i) { return F::load_aligned(xt[i]); };
  const auto W = [&](std::size_t i) { return F::load_aligned(wt[i]); };
  const F zero(0.0f);
  const auto level = [&](const F& iscale, const F& v) {  // as a float: exact, -nmax ... nmax - 1
    const I l = nearest_int<A>(iscale * v);
    return to_float<A>(xsimd::min(xsimd::max(l, I(-nmax)), I(nmax - 1)));
  };

  const F max = largest_magnitude<A, N>(xt);
  const auto live = xsimd::abs(max) >= F(scalar::quant::group_max_eps);  // the others: levels 0, scale 0

  alignas(64) float best[N][G];  // levels
  F sumlx = zero, suml2 = zero;
  F iscale = div<A>(F(static_cast<float>(-nmax)), max);
  for (std::size_t i = 0; i < N; ++i) {
    const F xi = X(i), wi = W(i);
    const F l = level(iscale, xi);
    l.store_aligned(best[i]);
    sumlx += mul_rounded<A>(wi * xi, l);
    suml2 += mul_rounded<A>(mul_rounded<A>(wi, l), l);
  }
  F scale = xsimd::select(suml2 == zero, zero, div<A>(sumlx, suml2));  // C's != is true for NaN: see `live` above
  F best_fit = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = div<A>(F(-(static_cast<float>(nmax) + scalar::quant::mul(0.1f, is))), max);
    sumlx = suml2 = zero;
    alignas(64) float trial[N][G];
    for (std::size_t i = 0; i < N; ++i) {
      const F xi = X(i), wi = W(i);
      const F l = level(iscale, xi);
      l.store_aligned(trial[i]);
      sumlx += mul_rounded<A>(wi * xi, l);
      suml2 += mul_rounded<A>(mul_rounded<A>(wi, l), l);
    }
    const auto better = live && suml2 > zero && sumlx * sumlx > best_fit * suml2;
    if (!xsimd::any(better)) continue;
    for (std::size_t i = 0; i < N; ++i) {
      xsimd::select(better, F::load_aligned(trial[i]), F::load_aligned(best[i])).store_aligned(best[i]);
    }
    scale = xsimd::select(better, div<A>(sumlx, suml2), scale);
    best_fit = xsimd::select(better, scale * sumlx, best_fit);
  }
  alignas(64) float scales[G], lives[G];
  xsimd::select(live, scale, zero).store_aligned(scales);
  xsimd::select(live, F(1.0f), zero).store_aligned(lives);
  for (std::size_t j = 0; j < count; ++j) {
    scale_out[j] = scales[j];
    for (std::size_t i = 0; i < N; ++i) {
      const int l = static_cast<int>(best[i][j]) + nmax;
      L[N * j + i] = lives[j] != 0.0f ? static_cast<std::int8_t>(l) : std::int8_t{0};
    }
  }
}

/**
 * `scalar::quant::make_q3_quants` for lanes<A> groups of N weights at once, lane j the group at
 * x + N * j; `count` groups are real. Each lane makes its own passes (up to five, until one changes
 * nothing), the others idle. Writes each group's levels + nmax to L + N * j and its scale to scale[j].
 */
template <class A, std::size_t N>
inline void make_q3_quants_lanes(const float* x, std::size_t count, int nmax, std::int8_t* L,
                                 float* scale_out) noexcept {
  constexpr std::size_t G = lanes<A>;
  using F = fbatch<A>;
  using I = ibatch<A>;
  alignas(64) float xt[N][G], lv[N][G];  // transposed weights, and levels as floats
  transpose_groups<A, N>(x, count, xt);
  const auto X = [&](std::size_t i) { return F::load_aligned(xt[i]); };
  const F zero(0.0f);
  const auto clamp = [&](const I& l) { return to_float<A>(xsimd::min(xsimd::max(l, I(-nmax)), I(nmax - 1))); };

  const F max = largest_magnitude<A, N>(xt);
  const auto live = xsimd::abs(max) >= F(scalar::quant::group_max_eps);
  const F iscale = div<A>(F(static_cast<float>(-nmax)), max);
  F sumlx = zero, suml2 = zero;
  for (std::size_t i = 0; i < N; ++i) {
    const F xi = X(i), w = xi * xi;
    const F l = clamp(nearest_int<A>(iscale * xi));
    l.store_aligned(lv[i]);
    sumlx += mul_rounded<A>(w * xi, l);
    suml2 += mul_rounded<A>(mul_rounded<A>(w, l), l);
  }
  auto active = live;
  for (int itry = 0; itry < 5 && xsimd::any(active); ++itry) {
    xsimd::batch_bool<float, A> changed(false);  // none yet
    for (std::size_t i = 0; i < N; ++i) {
      const F xi = X(i), w = xi * xi, li = F::load_aligned(lv[i]);
      const F slx_without = sumlx - mul_rounded<A>(w * xi, li);  // the sums without weight i
      const F sl2_without = suml2 - mul_rounded<A>(mul_rounded<A>(w, li), li);
      const F new_l = clamp(nearest_int<A>(div<A>(xi * sl2_without, slx_without)));
      const F slx = slx_without + mul_rounded<A>(w * xi, new_l);
      const F sl2 = sl2_without + mul_rounded<A>(mul_rounded<A>(w, new_l), new_l);
      const auto update =
          active && slx_without > zero && !(new_l == li) && sl2 > zero && slx * slx * suml2 > sumlx * sumlx * sl2;
      xsimd::select(update, new_l, li).store_aligned(lv[i]);
      sumlx = xsimd::select(update, slx, sumlx);
      suml2 = xsimd::select(update, sl2, suml2);
      changed = changed || update;
    }
    active = active && changed;
  }
  alignas(64) float scales[G], lives[G];
  xsimd::select(live && suml2 > zero, div<A>(sumlx, suml2), zero).store_aligned(scales);
  xsimd::select(live, F(1.0f), zero).store_aligned(lives);
  for (std::size_t j = 0; j < count; ++j) {
    scale_out[j] = scales[j];
    for (std::size_t i = 0; i < N; ++i) {
      const int l = static_cast<int>(lv[i][j]) + nmax;
      L[N * j + i] = lives[j] != 0.0f ? static_cast<std::int8_t>(l) : std::int8_t{0};
    }
  }
}

}  // namespace kernels::simd::detail
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_QUANTIZE_SEARCH_HPP
