#ifndef GGUF_KERNELS_SIMD_QUANTIZE_SEARCH_HPP
#define GGUF_KERNELS_SIMD_QUANTIZE_SEARCH_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/kernels/scalar/quantize_common.hpp"
#include "gguf/kernels/simd/ops.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd::detail {

// ggml's scale searches (make_qkx_quants, make_qx_quants, make_q3_quants) in SIMD lanes, for the
// quantizers whose time they take: the k-quants' sub-blocks and the legacy blocks with importance
// weights. A search's sums run in the order of its weights, so the lanes are groups (sub-blocks or
// blocks), not weights. Each lane does exactly what the scalar search does to its group, operation for
// operation (a product is rounded before anything is added to it, as `scalar::detail::mul` makes sure;
// comparisons and selects as the scalar branches; NaN and infinities flow through the same IEEE
// operations), so the results are the scalar search's bits for every input.
// Every division goes through `div` (exact on neon64, where xsimd 8.1 divides by a refined reciprocal).
// Never a float `!=` on batches: xsimd's is ordered on AVX and AVX-512 (false for NaN), unordered on SSE
// and NEON; C's `!=` is unordered, so it is written `!(a == b)`.

/// `a * b` rounded, opaque to the optimiser: no later add may fuse with it (`scalar::detail::mul`).
template <class A>
inline fbatch<A> mul_rounded(const fbatch<A>& a, const fbatch<A>& b) noexcept {
  fbatch<A> p = a * b;
  opaque<A>(p);
  return p;
}

/// `scalar::detail::nearest_int` in every lane: the float rounded (to nearest even) by adding 1.5 * 2^23.
template <class A>
inline ibatch<A> nearest_int(fbatch<A> x) noexcept {
  opaque<A>(x);
  const fbatch<A> v = x + fbatch<A>(12582912.0f);
  return (as_int<A>(v) & ibatch<A>(0x007FFFFF)) - ibatch<A>(0x00400000);
}

/**
 * ggml's importance weighting (`scalar::detail::importance_weights`) of n weights, n a multiple
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
template <std::size_t N, std::size_t W>
inline void transpose_groups(const float* p, std::size_t count, float (&t)[N][W]) noexcept {
  const std::size_t real = count < W ? count : W;
  for (std::size_t j = 0; j < real; ++j) {
    for (std::size_t i = 0; i < N; ++i) t[i][j] = p[N * j + i];
  }
  for (std::size_t j = real; j < W; ++j) {
    for (std::size_t i = 0; i < N; ++i) t[i][j] = 0.0f;
  }
}

/// `transpose_groups` for one batch of lanes<A> groups.
template <class A, std::size_t N>
inline void transpose_groups(const float* p, std::size_t count, float (&t)[N][lanes<A>]) noexcept {
  transpose_groups<N, lanes<A>>(p, count, t);
}

/// Each lane's first weight of the largest magnitude (NaN never wins; 0 for a group of zeros), for the
/// lanes<A> groups from column `o` of transposed groups.
template <class A, std::size_t N, std::size_t W>
inline fbatch<A> largest_magnitude(const float (&xt)[N][W], std::size_t o = 0) noexcept {
  using F = fbatch<A>;
  F amax(0.0f), max(0.0f);
  for (std::size_t i = 0; i < N; ++i) {
    const F xi = F::load_aligned(xt[i] + o), ax = xsimd::abs(xi);
    const auto larger = ax > amax;
    amax = xsimd::select(larger, ax, amax);
    max = xsimd::select(larger, xi, max);
  }
  return max;
}

/**
 * `scalar::detail::make_qkx_quants` for lanes<A> groups of N weights at once, lane j the group at
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
    const float step = scalar::detail::mul(rdelta, is);
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

/// The level ggml's make_qx_quants gives weight v at inverse scale `iscale`: nearest, clamped to -nmax ... nmax - 1.
template <class A>
inline ibatch<A> qx_level(const fbatch<A>& iscale, const fbatch<A>& v, int nmax) noexcept {
  return xsimd::min(xsimd::max(nearest_int<A>(iscale * v), ibatch<A>(-nmax)), ibatch<A>(nmax - 1));
}

/// What `qx_search` chose for each lane's group.
template <class A>
struct qx_search_result {
  fbatch<A> iscale;                  ///< the inverse scale whose levels won (`qx_level` gives them again)
  fbatch<A> scale;                   ///< the scale: 0 where the group is not live
  xsimd::batch_bool<float, A> live;  ///< false for a group below group_max_eps: its levels are all 0

  /// The stored level (0 ... 2 nmax - 1) of weight `v` of each lane's group: the winner's, 0 where the
  /// group is not live.
  ibatch<A> level(const fbatch<A>& v, int nmax) const noexcept {
    const auto on = as_int<A>(xsimd::select(live, fbatch<A>(1.0f), fbatch<A>(0.0f))) != ibatch<A>(0);
    return select_int<A>(on, qx_level<A>(iscale, v, nmax) + ibatch<A>(nmax), ibatch<A>(0));
  }
};

/**
 * `scalar::detail::make_qx_quants`' search for lanes<A> transposed groups: xt[i][j] is weight i of group
 * j, wt[i][j] its importance. A trial's levels are not kept: the winning inverse scale gives them again,
 * as the scalar search does when it stores them. The trials run two at a time, their sums two
 * independent chains each (a trial's own sums are in weight order, one chain a sum), and their outcomes
 * are applied in ggml's order.
 */
template <class A, std::size_t N>
inline qx_search_result<A> qx_search(const float (&xt)[N][lanes<A>], const float (&wt)[N][lanes<A>],
                                     int nmax) noexcept {
  using F = fbatch<A>;
  const F zero(0.0f);
  alignas(64) float wxt[N][lanes<A>];  // w * x, rounded: ggml's first factor of sumlx's terms
  for (std::size_t i = 0; i < N; ++i) (F::load_aligned(wt[i]) * F::load_aligned(xt[i])).store_aligned(wxt[i]);
  const auto add_terms = [&](std::size_t i, const F& iscale, F& sumlx, F& suml2) {
    const F l = to_float<A>(qx_level<A>(iscale, F::load_aligned(xt[i]), nmax));
    sumlx += mul_rounded<A>(F::load_aligned(wxt[i]), l);
    suml2 += mul_rounded<A>(mul_rounded<A>(F::load_aligned(wt[i]), l), l);
  };

  const F max = largest_magnitude<A, N>(xt);
  const auto live = xsimd::abs(max) >= F(scalar::detail::group_max_eps);  // the others: levels 0, scale 0
  F chosen = div<A>(F(static_cast<float>(-nmax)), max);
  F sumlx = zero, suml2 = zero;
  for (std::size_t i = 0; i < N; ++i) add_terms(i, chosen, sumlx, suml2);
  F scale = xsimd::select(suml2 == zero, zero, div<A>(sumlx, suml2));  // C's != is true for NaN: see `live`
  F best_fit = scale * sumlx;
  const auto consider = [&](const F& iscale, const F& sx, const F& s2) {
    const auto better = live && s2 > zero && sx * sx > best_fit * s2;
    chosen = xsimd::select(better, iscale, chosen);
    scale = xsimd::select(better, div<A>(sx, s2), scale);
    best_fit = xsimd::select(better, scale * sx, best_fit);
  };
  const auto trial = [&](int is) {
    return div<A>(F(-(static_cast<float>(nmax) + scalar::detail::mul(0.1f, is))), max);
  };
  constexpr int steps[18] = {-9, -8, -7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7, 8, 9};  // ggml's, 0 excluded
  for (std::size_t s = 0; s < 18; s += 2) {
    const F ia = trial(steps[s]), ib = trial(steps[s + 1]);
    F ax = zero, a2 = zero, bx = zero, b2 = zero;
    for (std::size_t i = 0; i < N; ++i) {
      add_terms(i, ia, ax, a2);
      add_terms(i, ib, bx, b2);
    }
    consider(ia, ax, a2);
    consider(ib, bx, b2);
  }
  return {chosen, xsimd::select(live, scale, zero), live};
}

/**
 * `scalar::detail::make_qx_quants` for lanes<A> groups of N weights at once, lane j the group at
 * x + N * j with importance weights qw + N * j (or x^2 without them); `count` groups are real. Writes
 * each group's levels + nmax to L + N * j (unless L is null: q3_K re-rounds them, see
 * `requantize_symmetric_lanes`) and its scale to scale[j].
 */
template <class A, std::size_t N>
inline void make_qx_quants_lanes(const float* x, const float* qw, std::size_t count, int nmax, std::int8_t* L,
                                 float* scale_out) noexcept {
  constexpr std::size_t G = lanes<A>;
  using F = fbatch<A>;
  alignas(64) float xt[N][G], wt[N][G];  // transposed: xt[i][j] is weight i of group j
  transpose_groups<A, N>(x, count, xt);
  if (qw) {
    transpose_groups<A, N>(qw, count, wt);
  } else {
    for (std::size_t i = 0; i < N; ++i) (F::load_aligned(xt[i]) * F::load_aligned(xt[i])).store_aligned(wt[i]);
  }
  const qx_search_result<A> c = qx_search<A, N>(xt, wt, nmax);
  alignas(64) float scales[G];
  c.scale.store_aligned(scales);
  for (std::size_t j = 0; j < count; ++j) scale_out[j] = scales[j];
  if (!L) return;
  alignas(64) std::int32_t levels[N][G];
  for (std::size_t i = 0; i < N; ++i) c.level(F::load_aligned(xt[i]), nmax).store_aligned(levels[i]);
  for (std::size_t j = 0; j < count; ++j) {
    for (std::size_t i = 0; i < N; ++i) L[N * j + i] = static_cast<std::int8_t>(levels[i][j]);
  }
}

/**
 * The scales of `scalar::detail::make_q3_quants` for `count` (at most W) groups of N weights, group j at
 * x + N * j, to scale[j]. Not their levels: q3_K, the one user, re-rounds every level against its stored
 * scale and searches again the few groups whose scale is stored as 0 (`requantize_symmetric_lanes`), which
 * costs less than transposing all levels back.
 *
 * A group makes passes over its weights until one changes nothing (at most five), each pass a chain
 * with a division in every link. Four in five groups of real weights stop after their first pass, and
 * only one in a hundred makes five, so lanes that simply waited for the slowest of their batch would do
 * twice the work: after every pass the groups still going are packed into the first lanes (a column
 * copy; a group's order of operations is its own, so where it runs does not matter) and the others
 * written out. The batches of a pass are independent chains, interleaved weight by weight.
 */
template <class A, std::size_t N, std::size_t W>
inline void make_q3_quants_lanes(const float* x, std::size_t count, int nmax, float* scale_out) noexcept {
  constexpr std::size_t G = lanes<A>;
  static_assert(W % G == 0);
  using F = fbatch<A>;
  using I = ibatch<A>;
  // Per weight, transposed (column j is a group): x, its weight w = x * x, w * x, its level, and the
  // level's two terms of the sums, (w * x) * l and (w * l) * l, kept so that a pass recomputes only a
  // new level's. Per group: the two sums, the first's square, its index, and whether the pass changed it.
  alignas(64) float xt[N][W], wt[N][W], wxt[N][W], lv[N][W], xl[N][W], l2[N][W];
  alignas(64) float sx[W], s2[W], sq[W], changed[W];
  std::size_t id[W];
  transpose_groups<N, W>(x, count, xt);
  const F zero(0.0f), one(1.0f);
  const auto clamp = [&](const I& l) { return to_float<A>(xsimd::min(xsimd::max(l, I(-nmax)), I(nmax - 1))); };
  const auto finish = [&](std::size_t column) {  // group id[column] is done
    scale_out[id[column]] = s2[column] > 0.0f ? sx[column] / s2[column] : 0.0f;
  };

  for (std::size_t o = 0; o < count; o += G) {
    const F max = largest_magnitude<A>(xt, o);
    xsimd::select(xsimd::abs(max) >= F(scalar::detail::group_max_eps), one, zero).store_aligned(changed + o);
    const F iscale = div<A>(F(static_cast<float>(-nmax)), max);
    F slx = zero, sl2 = zero;
    for (std::size_t i = 0; i < N; ++i) {
      const F xi = F::load_aligned(xt[i] + o), w = mul_rounded<A>(xi, xi), wx = mul_rounded<A>(w, xi);
      const F l = clamp(nearest_int<A>(iscale * xi));
      const F tx = mul_rounded<A>(wx, l), t2 = mul_rounded<A>(mul_rounded<A>(w, l), l);
      w.store_aligned(wt[i] + o);
      wx.store_aligned(wxt[i] + o);
      l.store_aligned(lv[i] + o);
      tx.store_aligned(xl[i] + o);
      t2.store_aligned(l2[i] + o);
      slx += tx;
      sl2 += t2;
    }
    slx.store_aligned(sx + o);
    sl2.store_aligned(s2 + o);
    (slx * slx).store_aligned(sq + o);
  }
  // Groups below ggml's epsilon are all zeros; the others (still "changed") make their passes.
  std::size_t active = 0;
  const auto move = [&](std::size_t from, std::size_t to) {  // a group's column
    if (from == to) return;
    for (std::size_t i = 0; i < N; ++i) {
      xt[i][to] = xt[i][from];
      wt[i][to] = wt[i][from];
      wxt[i][to] = wxt[i][from];
      lv[i][to] = lv[i][from];
      xl[i][to] = xl[i][from];
      l2[i][to] = l2[i][from];
    }
    sx[to] = sx[from];
    s2[to] = s2[from];
    sq[to] = sq[from];
    id[to] = id[from];
  };
  const auto pack = [&](bool last) {  // the changed groups to the first columns, the others written out
    std::size_t kept = 0;
    for (std::size_t column = 0; column < active; ++column) {
      if (changed[column] == 0.0f || last) {
        finish(column);
        continue;
      }
      move(column, kept++);
    }
    active = kept;
  };
  for (std::size_t j = 0; j < count; ++j) {
    if (changed[j] == 0.0f) {
      scale_out[j] = 0.0f;
      continue;
    }
    id[j] = j;
    move(j, active++);
  }

  alignas(64) float lane[G];
  for (std::size_t j = 0; j < G; ++j) lane[j] = static_cast<float>(j);
  // Up to four batches run as interleaved chains with their sums in registers (in memory, the sums
  // would wait for store forwarding at every link). The first pass runs on every group; the later ones
  // on the few groups left (one in five, then fewer), where one full-width batch would be a single
  // latency-bound chain: there half-width batches (AVX-512: 256 bits) make two or three chains of it.
  const auto chains = [&]<class B, std::size_t NK>(std::size_t first) {
    using FB = fbatch<B>;
    using IB = ibatch<B>;
    constexpr std::size_t GB = lanes<B>;
    const FB zero_b(0.0f), one_b(1.0f);
    const auto clamp_b = [&](const IB& l) { return to_float<B>(xsimd::min(xsimd::max(l, IB(-nmax)), IB(nmax - 1))); };
    FB sumlx[NK], suml2[NK], squared[NK], moved[NK];
    xsimd::batch_bool<float, B> real[NK];
    unroll<static_cast<int>(NK)>([&](auto kc) {
      constexpr auto k = static_cast<std::size_t>(decltype(kc)::value);
      const std::size_t o = GB * (first + k);
      sumlx[k] = FB::load_aligned(sx + o);
      suml2[k] = FB::load_aligned(s2 + o);
      squared[k] = FB::load_aligned(sq + o);
      moved[k] = zero_b;
      real[k] = FB::load_aligned(lane) < FB(static_cast<float>(active - o));
    });
    for (std::size_t i = 0; i < N; ++i) {
      unroll<static_cast<int>(NK)>([&](auto kc) {
        constexpr auto k = static_cast<std::size_t>(decltype(kc)::value);
        const std::size_t o = GB * (first + k);
        const FB xi = FB::load_aligned(xt[i] + o), w = FB::load_aligned(wt[i] + o);
        const FB wx = FB::load_aligned(wxt[i] + o), li = FB::load_aligned(lv[i] + o);
        const FB txi = FB::load_aligned(xl[i] + o), t2i = FB::load_aligned(l2[i] + o);
        const FB slx_without = sumlx[k] - txi;  // the sums without weight i
        const FB sl2_without = suml2[k] - t2i;
        const FB new_l = clamp_b(nearest_int<B>(div<B>(xi * sl2_without, slx_without)));
        const FB tx = mul_rounded<B>(wx, new_l), t2 = mul_rounded<B>(mul_rounded<B>(w, new_l), new_l);
        const FB slx = slx_without + tx;
        const FB sl2 = sl2_without + t2;
        const FB slx_squared = slx * slx;
        const auto update = real[k] && slx_without > zero_b && !(new_l == li) && sl2 > zero_b &&
                            slx_squared * suml2[k] > squared[k] * sl2;
        xsimd::select(update, new_l, li).store_aligned(lv[i] + o);
        xsimd::select(update, tx, txi).store_aligned(xl[i] + o);
        xsimd::select(update, t2, t2i).store_aligned(l2[i] + o);
        sumlx[k] = xsimd::select(update, slx, sumlx[k]);
        suml2[k] = xsimd::select(update, sl2, suml2[k]);
        squared[k] = xsimd::select(update, slx_squared, squared[k]);
        moved[k] = xsimd::select(update, one_b, moved[k]);
      });
    }
    unroll<static_cast<int>(NK)>([&](auto kc) {
      constexpr auto k = static_cast<std::size_t>(decltype(kc)::value);
      const std::size_t o = GB * (first + k);
      sumlx[k].store_aligned(sx + o);
      suml2[k].store_aligned(s2 + o);
      squared[k].store_aligned(sq + o);
      moved[k].store_aligned(changed + o);
    });
  };
  const auto pass = [&]<class B>() {
    constexpr std::size_t GB = lanes<B>;
    const std::size_t batches = (active + GB - 1) / GB;
    std::size_t k = 0;
    for (; k + 4 <= batches; k += 4) chains.template operator()<B, 4>(k);
    switch (batches - k) {
      case 1: chains.template operator()<B, 1>(k); break;
      case 2: chains.template operator()<B, 2>(k); break;
      case 3: chains.template operator()<B, 3>(k); break;
      default: break;
    }
  };
  if (active > 0) {  // the first pass at full width, the others (at most four) on what is left
    pass.template operator()<A>();
    pack(false);
  }
  for (int itry = 1; itry < 5 && active > 0; ++itry) {
    pass.template operator()<swar_arch<A>>();
    pack(itry == 4);
  }
}

}  // namespace kernels::simd::detail
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_QUANTIZE_SEARCH_HPP
