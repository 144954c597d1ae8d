#ifndef GGUF_KERNELS_IQ_GRID_QUANTIZE_HPP
#define GGUF_KERNELS_IQ_GRID_QUANTIZE_HPP

#include <array>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/format/blocks.hpp"
#include "gguf/format/half.hpp"
#include "gguf/kernels/iq_grid/neighbours.hpp"
#include "gguf/result.hpp"

/**
 * @file
 * Float -> block quantizers of the IQ grid types (iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m),
 * byte for byte what ggml's ggml_quantize_chunk writes (ggml-quants.c, quantize_row_*_impl).
 *
 * How they stay exact: the same operations in the same order in float; every product that feeds a sum is
 * rounded first (detail::iq::mul: ggml is built without FMA, users may build with -ffp-contract=fast);
 * ggml's MAX and its strict comparisons, which decide ties and NaNs; its nearest_int bit trick; glibc's
 * qsort (a stable merge sort) for iq1's sorts; ggml's integer wrap-arounds where it stores ints in bytes.
 *
 * Errors: where ggml aborts (GGML_ASSERT on a grid search that finds nothing, a scale that is NaN, a
 * point "not on grid"), which happens for rows with NaN, infinities or values whose squares overflow,
 * these return errc::out_of_range; dst is then unspecified. ggml's one undefined path (iq1's whole-grid
 * fallback search, which reads out of bounds) is reported the same way.
 */

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {
namespace detail::iq {

/**
 * ggml's GGML_FP32_TO_FP16 (its portable ggml_compute_fp32_to_fp16): to nearest even; a NaN becomes
 * 0x7E00 with its sign. Every NaN that reaches a stored scale was made by arithmetic (a NaN weight
 * stops at an assert or leaves its group out first), and x86 makes the negative default NaN, so 0xFE00:
 * fixed here so ARM, whose default NaN is positive, writes the same byte.
 */
inline std::uint16_t half_bits_nan_as_x86(float x) noexcept {
  if (std::isnan(x)) return 0xFE00;
  return to_f16(x).bits;
}

/// The weights of n values: qw * sqrt(sigma2 + x^2) with importance qw, else x^2 (iq2_s has its own).
inline void group_weights(const float* xb, const float* qw, float sigma2, std::size_t n, float* w) noexcept {
  for (std::size_t i = 0; i < n; ++i) w[i] = qw ? qw[i] * std::sqrt(sigma2 + mul(xb[i], xb[i])) : xb[i] * xb[i];
}

/**
 * |x| of 8 values into xval and their sign bits, with an even number of minus signs (the 8th sign is not
 * stored): if odd, the value with the least weight * x^2 (the first on ties) keeps its sign and goes
 * negative in xval. @return the 7 stored sign bits
 */
inline std::uint8_t even_signs(const float* xb, const float* weight, float* xval) noexcept {
  unsigned s = 0, nflip = 0;
  for (unsigned i = 0; i < 8; ++i) {
    if (xb[i] >= 0) {
      xval[i] = xb[i];
    } else {
      xval[i] = -xb[i];
      ++nflip;
      s |= 1u << i;
    }
  }
  if (nflip % 2) {
    unsigned imin = 0;
    float min = weight[0] * xb[0] * xb[0];
    for (unsigned i = 1; i < 8; ++i) {
      const float ax = weight[i] * xb[i] * xb[i];
      if (ax < min) {
        min = ax;
        imin = i;
      }
    }
    xval[imin] = -xval[imin];
    s ^= 1u << imin;
  }
  return static_cast<std::uint8_t>(s & 127u);
}

/// |x| of 8 values into xval; @return all 8 sign bits (iq2_s, iq3_s store them all)
inline std::uint8_t plain_signs(const float* xb, float* xval) noexcept {
  unsigned s = 0;
  for (unsigned i = 0; i < 8; ++i) {
    if (xb[i] >= 0) {
      xval[i] = xb[i];
    } else {
      xval[i] = -xb[i];
      s |= 1u << i;
    }
  }
  return static_cast<std::uint8_t>(s);
}

/// ggml's MAX over n values, left to right.
inline float max_of(const float* x, std::size_t n) noexcept {
  float m = x[0];
  for (std::size_t i = 1; i < n; ++i) m = c_max(m, x[i]);
  return m;
}

/// sum w * x * q and sum w * q * q for q = 2 * L + 1, in order.
inline void level_sums(const float* w, const float* xval, const std::int8_t* L, std::size_t n, float& sumqx,
                       float& sumq2) noexcept {
  sumqx = 0;
  sumq2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float q = static_cast<float>(2 * L[i] + 1);
    sumqx += mul(w[i] * xval[i], q);
    sumq2 += mul(w[i] * q, q);
  }
}

/// The level of x at inverse scale id: nearest_int(0.5 * (id * x - 1)), clamped to 0..kmax-1.
inline std::int8_t level_at(float id, float x, int kmax) noexcept {
  const int l = nearest_int(0.5f * (mul(id, x) - 1.f));
  return static_cast<std::int8_t>(l < 0 ? 0 : (l > kmax - 1 ? kmax - 1 : l));
}

/**
 * The IQ quantizers' searches as a policy, ggml's here (SIMD twins pass their own, which give the same
 * levels, sums and points): the level of every weight at every trial scale, the trials' sums, and the
 * neighbour search of a group off the grid.
 */
struct neighbour_search {
  /// best_neighbour(s, entry, xval, weight, scale, L)
  template <class Search>
  int operator()(const Search& s, std::int32_t entry, const float* xval, const float* weight, float scale,
                 std::int8_t* L) const noexcept {
    return best_neighbour(s, entry, xval, weight, scale, L);
  }

  /// Ls[t][i] = level_at(ids[t], xval[i], kmax) for the first `trials` rows.
  template <std::size_t N>
  void levels(const float* xval, const float* ids, std::size_t trials, int kmax, std::int8_t (*Ls)[N]) const noexcept {
    for (std::size_t t = 0; t < trials; ++t) {
      for (std::size_t i = 0; i < N; ++i) Ls[t][i] = level_at(ids[t], xval[i], kmax);
    }
  }

  /// level_sums of each of the first `trials` rows of levels into sumqx[t], sumq2[t].
  template <std::size_t N>
  void sums(const float* w, const float* xval, const std::int8_t (*Ls)[N], std::size_t trials, float* sumqx,
            float* sumq2) const noexcept {
    for (std::size_t t = 0; t < trials; ++t) level_sums(w, xval, Ls[t], N, sumqx[t], sumq2[t]);
  }
};

/**
 * One group of Search::dims values at inverse scale id: the levels into L, and when they are not a grid
 * point, the best neighbour at `scale` instead (found by `nb`). @return the grid index, -1 when the search
 * found none
 */
template <class Search, class Neighbours>
int snap_group(const Search& s, const float* xval, const float* waux, float id, float scale, int kmax, std::int8_t* L,
               bool& on_grid, const Neighbours& nb) noexcept {
  for (std::size_t i = 0; i < Search::dims; ++i) L[i] = level_at(id, xval[i], kmax);
  const std::int32_t e = s.lookup(L);
  on_grid = e >= 0;
  return e >= 0 ? e : nb(s, e, xval, waux, scale, L);
}

/**
 * The trial scales of an IQ grid search, ggml's loop: for each inverse scale ids[t] in order, every group
 * snapped to the grid (its nearest levels, or when they are not a grid point the best neighbour at
 * 1 / ids[t]), and the levels kept in L with scale sum(w x q) / sum(w q^2) where sum(w x q)^2 / sum(w q^2)
 * beats the best so far (starting from 0, so L and scale stay as given when no trial wins). Every trial is
 * independent of the others until they are compared, so the policy computes all trials' levels, then the
 * groups off the grid are searched in trial order, then the policy sums every trial and they are compared
 * in order: ggml's operations, reordered only where nothing depends on the order.
 * @param on_grid where non-null, which groups of the winning trial were grid points (unchanged when none
 * wins) @return false where ggml asserts (a neighbour search that found nothing)
 */
template <std::size_t N, class Search, class Neighbours>
bool best_trial(const Search& s, const float* xval, const float* weight, const float* waux, const float* ids,
                std::size_t trials, int kmax, std::int8_t* L, float& scale, bool* on_grid,
                const Neighbours& nb) noexcept {
  constexpr std::size_t G = Search::dims, ng = N / G, most = 31;  // 2 * 15 + 1: the widest search, iq3_s's
  if (trials > most) return false;
  alignas(64) std::int8_t Ls[most][N];
  bool grid_point[most][ng];
  nb.template levels<N>(xval, ids, trials, kmax, Ls);
  for (std::size_t t = 0; t < trials; ++t) {
    const float trial_scale = 1 / ids[t];
    for (std::size_t k = 0; k < ng; ++k) {
      const std::int32_t e = s.lookup(Ls[t] + G * k);
      grid_point[t][k] = e >= 0;
      if (e < 0 && nb(s, e, xval + G * k, waux + G * k, trial_scale, Ls[t] + G * k) < 0) return false;
    }
  }
  float sumqx[most], sumq2[most];
  nb.template sums<N>(weight, xval, Ls, trials, sumqx, sumq2);
  float best = 0;
  for (std::size_t t = 0; t < trials; ++t) {
    if (sumq2[t] > 0 && sumqx[t] * sumqx[t] > best * sumq2[t]) {
      scale = sumqx[t] / sumq2[t];
      best = scale * sumqx[t];
      std::memcpy(L, Ls[t], N);
      if (on_grid != nullptr) std::memcpy(on_grid, grid_point[t], ng);
    }
  }
  return true;
}

/**
 * The scale search shared by iq2_xs, iq2_s, iq3_xxs and iq3_s: best_trial over the inverse scales
 * (2 kmax - 1 + is * step) / max for is in -is_max..is_max, from L = 0 and scale max / (2 kmax - 1); then
 * the groups that were off the grid (all with refine_all) snapped again at the best scale.
 * @return false where ggml asserts (a neighbour search that found nothing)
 */
template <std::size_t N, class Search, class Neighbours>
bool fit_levels(const Search& s, const float* xval, const float* weight, const float* waux, float max, int kmax,
                int is_max, float step, bool refine_all, std::int8_t* L, float& scale_out,
                const Neighbours& nb) noexcept {
  constexpr std::size_t G = Search::dims, ng = N / G, most = 31;
  if (is_max < 0 || is_max > 15) return false;
  const std::size_t trials = 2 * static_cast<std::size_t>(is_max) + 1;
  float ids[most];
  for (std::size_t t = 0; t < trials; ++t) {
    const float is = static_cast<float>(static_cast<int>(t) - is_max);
    ids[t] = (static_cast<float>(2 * kmax - 1) + mul(is, step)) / max;
  }
  bool is_on_grid[ng];
  for (bool& g : is_on_grid) g = !refine_all;  // iq3_s starts with every group "off" the grid
  float scale = max / static_cast<float>(2 * kmax - 1);
  for (std::size_t i = 0; i < N; ++i) L[i] = 0;
  if (!best_trial<N>(s, xval, weight, waux, ids, trials, kmax, L, scale, is_on_grid, nb)) return false;
  bool any_off = false;
  for (bool g : is_on_grid) any_off = any_off || !g;
  if (any_off && scale > 0) {
    const float id = 1 / scale;
    for (std::size_t k = 0; k < ng; ++k) {
      if (is_on_grid[k] && !refine_all) continue;
      bool unused;
      if (snap_group(s, xval + G * k, waux + G * k, id, scale, kmax, L + G * k, unused, nb) < 0) return false;
    }
    float sumqx, sumq2;
    level_sums(weight, xval, L, N, sumqx, sumq2);
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  scale_out = scale;
  return true;
}

/// The 4-bit sub-scale of `scale` under block scale 1/id: nearest_int(0.5 * (id * scale - 1)) in 0..lmax.
inline unsigned sub_scale(float id, float scale, int lmax) noexcept {
  const int l = nearest_int(0.5f * (mul(id, scale) - 1.f));
  return static_cast<unsigned>(l < 0 ? 0 : (l > lmax ? lmax : l));
}

/// The 4-bit sub-scales of n scales (n even) under block scale 1/id, two a byte, low nibble first.
inline void pack_sub_scales(std::byte* out, const float* scales, std::size_t n, float id) noexcept {
  for (std::size_t ib = 0; ib < n; ib += 2) {
    out[ib / 2] = static_cast<std::byte>(sub_scale(id, scales[ib], 15) | (sub_scale(id, scales[ib + 1], 15) << 4));
  }
}

/// glibc 2.36's qsort for iq1's (value, index) pairs: a top-down merge sort (halves n/2 and n - n/2)
/// taking the left element while compare(left, right) <= 0, compare being ggml's iq1_sort_helper
/// (-1, 1, or 0, which NaNs also give). Stable, so ties keep index order.
inline void glibc_msort(float* v, int* idx, std::size_t n, float* tv, int* ti) noexcept {
  if (n <= 1) return;
  const std::size_t n1 = n / 2;
  glibc_msort(v, idx, n1, tv, ti);
  glibc_msort(v + n1, idx + n1, n - n1, tv, ti);
  std::size_t a = 0, b = n1, o = 0;
  while (a < n1 && b < n) {
    const int cmp = v[a] < v[b] ? -1 : (v[a] > v[b] ? 1 : 0);
    if (cmp <= 0) {
      tv[o] = v[a];
      ti[o++] = idx[a++];
    } else {
      tv[o] = v[b];
      ti[o++] = idx[b++];
    }
  }
  while (a < n1) {
    tv[o] = v[a];
    ti[o++] = idx[a++];
  }
  for (std::size_t i = 0; i < o; ++i) {
    v[i] = tv[i];
    idx[i] = ti[i];
  }
}

/// The order of xb[0..N) ascending, as glibc's qsort leaves it.
template <std::size_t N>
inline std::array<int, N> sorted_order(const float* xb) noexcept {
  std::array<float, N> v{}, tv{};
  std::array<int, N> idx{}, ti{};
  for (std::size_t j = 0; j < N; ++j) {
    v[j] = xb[j];
    idx[j] = static_cast<int>(j);
  }
  glibc_msort(v.data(), idx.data(), N, tv.data(), ti.data());
  return idx;
}

/// The iq1 levels of a best split: sorted positions below i1 level 0, below i2 level 1, the rest 2.
template <std::size_t N>
inline void split_levels(const std::array<int, N>& order, int i1, int i2, std::int8_t (&L)[N]) noexcept {
  for (std::size_t j = 0; j < N; ++j) {
    const int jj = static_cast<int>(j);
    L[order[j]] = static_cast<std::int8_t>(jj < i1 ? 0 : (jj < i2 ? 1 : 2));
  }
}

inline constexpr float iq1_delta = tables::iq1s_delta;
/// iq1's three values shifted up by delta (-1 + delta, delta, 1 + delta) ...
inline constexpr float iq1_xp[3] = {-1 + iq1_delta, iq1_delta, 1 + iq1_delta};
/// ... and down (-1 - delta, -delta, 1 - delta)
inline constexpr float iq1_xm[3] = {-1 - iq1_delta, -iq1_delta, 1 - iq1_delta};

/// iq1_s's best split of a sub-block: its scale, the split points and the shift (i1 < 0 for none).
struct iq1_split {
  float scale;  ///< sum q x / sum q^2 of the best, or the sub-block's max when none was found
  int i1;       ///< the sorted weights below i1 take level 0
  int i2;       ///< those from i1 below i2 level 1, the rest level 2
  int shift;    ///< +1: the levels iq1_xp, -1: iq1_xm; 0 when none was found
};

/// iq1_m's best split of 16 weights: its scale, the split points and the shift choice k (i1 < 0 for none).
struct iq1_m_split {
  float scale;  ///< sum q x / sum q^2 of the best, or the group's max when none was found
  int i1;       ///< the sorted weights below i1 take level 0
  int i2;       ///< those from i1 below i2 level 1, the rest level 2
  int k;        ///< the shifts of the two 8: 0 (+, +), 1 (+, -), 2 (-, +), 3 (-, -); -1 when none was found
};

/// The prefix sums of iq1_m's split search, per half h of the 16: x[h][j] = sum of w x over the first j
/// sorted weights that lie in half h, w[h][j] the same of w; zeros past column 16 for SIMD loads.
struct iq1_m_sums {
  float x[2][32];  ///< prefix sums of w x, per half
  float w[2][32];  ///< prefix sums of w, per half
};

/// An i1's terms of iq1_m's sum q^2 (c01 W[i1] + W16 x2 x2) and its S[i1], per half and shift.
struct iq1_m_row {
  float a_p[2];  ///< with the levels shifted up
  float a_m[2];  ///< shifted down
  float x1[2];   ///< S[i1]
};

/// iq1_m's split constants and the split terms in ggml's order of operations (see iq1_searches::split_m).
struct iq1_m_terms {
  float c01p, c12p, c01m, c12m;  ///< x0^2 - x1^2 and x1^2 - x2^2 of both shifts
  float qx_p[2], qx_m[2];        ///< S16 * x2 per half and shift
  /// The terms of split point i1.
  iq1_m_row row(const iq1_m_sums& s, std::size_t i1) const noexcept {
    iq1_m_row r{};
    for (std::size_t h = 0; h < 2; ++h) {
      r.a_p[h] = mul(c01p, s.w[h][i1]) + mul(s.w[h][16] * iq1_xp[2], iq1_xp[2]);
      r.a_m[h] = mul(c01m, s.w[h][i1]) + mul(s.w[h][16] * iq1_xm[2], iq1_xm[2]);
      r.x1[h] = s.x[h][i1];
    }
    return r;
  }
  /// sum q x and sum q^2 of split (i1, i2) for the four shift choices.
  void choices(const iq1_m_sums& s, const iq1_m_row& a, std::size_t /*i1*/, std::size_t i2, float* sumqx,
               float* sumq2) const noexcept {
    float px[2], mx[2], p2[2], m2[2];
    for (std::size_t h = 0; h < 2; ++h) {
      const float sx12 = s.x[h][i2] + a.x1[h];
      px[h] = qx_p[h] - sx12;
      mx[h] = qx_m[h] - sx12;
      p2[h] = mul(c12p, s.w[h][i2]) + a.a_p[h];
      m2[h] = mul(c12m, s.w[h][i2]) + a.a_m[h];
    }
    sumqx[0] = px[0] + px[1], sumqx[1] = px[0] + mx[1], sumqx[2] = mx[0] + px[1], sumqx[3] = mx[0] + mx[1];
    sumq2[0] = p2[0] + p2[1], sumq2[1] = p2[0] + m2[1], sumq2[2] = m2[0] + p2[1], sumq2[3] = m2[0] + m2[1];
  }
};

/// The constants of iq1_m's split search for these sums.
inline iq1_m_terms iq1_m_terms_of(const iq1_m_sums& s) noexcept {
  const float* xp = iq1_xp;
  const float* xm = iq1_xm;
  iq1_m_terms t{};
  t.c01p = mul(xp[0], xp[0]) - mul(xp[1], xp[1]);
  t.c12p = mul(xp[1], xp[1]) - mul(xp[2], xp[2]);
  t.c01m = mul(xm[0], xm[0]) - mul(xm[1], xm[1]);
  t.c12m = mul(xm[1], xm[1]) - mul(xm[2], xm[2]);
  for (std::size_t h = 0; h < 2; ++h) {
    t.qx_p[h] = mul(s.x[h][16], xp[2]);
    t.qx_m[h] = mul(s.x[h][16], xm[2]);
  }
  return t;
}

/**
 * iq1_s's searches as ggml writes them, the scalar policy of quantize_iq1_s_with (SIMD twins pass their
 * own, which find the same).
 */
struct iq1_searches {
  /**
   * The split search (ggml's quantize_row_iq1_s_impl): over the prefix sums of w x and w of the sorted
   * 32 weights (sumx[0..32], sumw[0..32]), for i1 <= i2 and shift +1 then -1, the least-squares fit of
   * the three levels, the first best by sum(q x)^2 / sum(q^2) kept; `max` is the scale when none is found.
   */
  static iq1_split split(const float* sumx, const float* sumw, float max) noexcept {
    iq1_split r{max, -1, -1, 0};
    float best_score = -FLT_MAX;
    for (int i1 = 0; i1 <= 32; ++i1) {
      for (int i2 = i1; i2 <= 32; ++i2) {
        const float a = sumx[i1] - sumx[0], b = sumx[i2] - sumx[i1], c = sumx[32] - sumx[i2];
        const float wa = sumw[i1] - sumw[0], wb = sumw[i2] - sumw[i1], wc = sumw[32] - sumw[i2];
        for (int shift : {1, -1}) {
          const float* xs = shift == 1 ? iq1_xp : iq1_xm;
          const float sumqx = mul(a, xs[0]) + mul(b, xs[1]) + mul(c, xs[2]);
          const float sumq2 = mul(wa * xs[0], xs[0]) + mul(wb * xs[1], xs[1]) + mul(wc * xs[2], xs[2]);
          if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
            r.scale = sumqx / sumq2;
            best_score = r.scale * sumqx;
            r = {r.scale, i1, i2, shift};
          }
        }
      }
    }
    return r;
  }

  /**
   * iq1_m's split search, as the oracle's ggml computes it (its machine code; the C source beside it still
   * sums every split from scratch, which rounds differently): over the prefix sums of w x and w of the
   * sorted 16 weights, one pair per half of the 16 (`sx[h]`, `sw[h]`, columns 0..16), for i1 <= i2 and
   * the four shift choices k (0: (+, +), 1: (+, -), 2: (-, +), 3: (-, -) for the first and second 8), the
   * first best by sum(q x)^2 / sum(q^2). Per split and half, sum q x = S16 * x2 - (S[i1] + S[i2]) (x0 - x1
   * = x1 - x2 = -1 exactly) and sum q^2 = c12 * W[i2] + (c01 * W[i1] + W16 * x2 * x2), with c01 = x0^2 -
   * x1^2, c12 = x1^2 - x2^2; a choice adds its halves' terms.
   */
  static iq1_m_split split_m(const iq1_m_sums& s, float max) noexcept {
    const iq1_m_terms t = iq1_m_terms_of(s);
    iq1_m_split r{max, -1, -1, -1};
    float best_score = -FLT_MAX;
    for (std::size_t i1 = 0; i1 <= 16; ++i1) {
      const iq1_m_row a = t.row(s, i1);
      for (std::size_t i2 = i1; i2 <= 16; ++i2) {
        float sumqx[4], sumq2[4];
        t.choices(s, a, i1, i2, sumqx, sumq2);
        for (int k = 0; k < 4; ++k) {
          const auto uk = static_cast<std::size_t>(k);
          if (sumq2[uk] > 0 && sumqx[uk] * sumqx[uk] > best_score * sumq2[uk]) {
            r.scale = sumqx[uk] / sumq2[uk];
            best_score = r.scale * sumqx[uk];
            r.i1 = static_cast<int>(i1);
            r.i2 = static_cast<int>(i2);
            r.k = k;
          }
        }
      }
    }
    return r;
  }

  /// iq1_best_neighbour(s, entry, xval, weight, scale, xg, L)
  static int neighbour(const iq1_search_t& s, std::int32_t entry, const float* xval, const float* weight, float scale,
                       const float* xg, std::int8_t* L) noexcept {
    return iq1_best_neighbour(s, entry, xval, weight, scale, xg, L);
  }

  /// sorted_order<N>(xb): glibc's qsort.
  template <std::size_t N>
  static std::array<int, N> sorted(const float* xb) noexcept {
    return sorted_order<N>(xb);
  }
};

}  // namespace detail::iq

/**
 * iq2_xxs, one row: n_per_row / 256 blocks of 66 bytes (see blocks::iq2_xxs), as ggml's
 * quantize_row_iq2_xxs_impl. Importance is required (ggml asserts without it).
 * @param src n_per_row floats @param dst n_per_row / 256 * 66 bytes, any alignment
 * @param n_per_row a multiple of 256 @param importance n_per_row weights (one per column), or nullptr
 * @return errc::success; errc::not_found without importance; errc::size_mismatch when n_per_row is not a
 * multiple of 256; errc::out_of_range where ggml aborts (NaN, infinite or overflowing values)
 * @param nb the neighbour search (`detail::iq::neighbour_search`, ggml's; or a SIMD twin)
 */
template <class Neighbours = detail::iq::neighbour_search>
[[nodiscard]] inline errc quantize_iq2_xxs_with(const float* src, std::byte* dst, std::size_t n_per_row,
                                                const float* importance, const Neighbours& nb = {}) noexcept {
  namespace iq = detail::iq;
  using B = blocks::iq2_xxs;
  if (importance == nullptr) return errc::not_found;
  if (n_per_row % blocks::qk_k != 0) return errc::size_mismatch;
  const auto& grid = iq::iq2xxs_search();
  constexpr int kmax = 3;
  for (std::size_t ibl = 0; ibl < n_per_row / blocks::qk_k; ++ibl, dst += sizeof(B)) {
    const float* xbl = src + blocks::qk_k * ibl;
    std::array<std::uint32_t, 16> q2{};
    std::array<float, 8> scales{};
    float max_scale = 0;
    const float sigma2 = detail::sum_of_squares(xbl, 256) / 256;
    for (std::size_t ib = 0; ib < 8; ++ib) {
      const float* xb = xbl + 32 * ib;
      float weight[32], waux[32], xval[32];
      std::int8_t L[32];
      std::uint8_t signs[4];
      iq::group_weights(xb, importance + blocks::qk_k * ibl + 32 * ib, sigma2, 32, weight);
      for (std::size_t i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
      for (std::size_t k = 0; k < 4; ++k) signs[k] = iq::even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
      const float max = iq::max_of(xval, 32);
      if (max < 1e-15f) continue;  // GROUP_MAX_EPS: a zero sub-scale and grid point 0
      std::uint8_t Lu[32];
      float scale = detail::make_qp_quants(32, kmax + 1, xval, Lu, weight);
      for (std::size_t i = 0; i < 32; ++i) L[i] = static_cast<std::int8_t>(Lu[i]);
      const float eff_max = scale * kmax;
      if (eff_max <= 0) continue;
      float ids[13];
      for (int is = -6; is <= 6; ++is) {
        ids[is + 6] = (static_cast<float>(2 * kmax - 1) + iq::mul(static_cast<float>(is), 0.1f)) / eff_max;
      }
      if (!iq::best_trial<32>(grid, xval, weight, waux, ids, 13, kmax, L, scale, nullptr, nb)) {
        return errc::out_of_range;
      }
      if (scale > 0) {  // every group again at the best scale
        const float id = 1 / scale;
        bool unused;
        for (std::size_t k = 0; k < 4; ++k) {
          if (iq::snap_group(grid, xval + 8 * k, waux + 8 * k, id, scale, kmax, L + 8 * k, unused, nb) < 0) {
            return errc::out_of_range;
          }
        }
        float sumqx, sumq2;
        iq::level_sums(weight, xval, L, 32, sumqx, sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
      }
      if (scale < 0) {  // "should never happen" in ggml: a positive scale, the signs flipped
        scale = -scale;
        for (auto& s : signs) s = static_cast<std::uint8_t>(~s & 127);
      }
      for (std::size_t k = 0; k < 4; ++k) {
        const std::int32_t g = grid.lookup(L + 8 * k);
        if (g < 0) return errc::out_of_range;  // ggml: "Oops: found point not on grid"
        q2[2 * ib] |= static_cast<std::uint32_t>(g) << (8 * k);
        q2[2 * ib + 1] |= static_cast<std::uint32_t>(signs[k]) << (7 * k);
      }
      if (!(scale >= 0)) return errc::out_of_range;
      scales[ib] = scale;
      max_scale = iq::c_max(max_scale, scale);
    }
    std::memset(dst, 0, sizeof(B));
    if (max_scale == 0) continue;
    const float d = max_scale / 31;
    detail::store_le(dst + offsetof(B, d), iq::half_bits_nan_as_x86(d));
    const float id = 1 / d;
    for (std::size_t ib = 0; ib < 8; ++ib) q2[2 * ib + 1] |= iq::sub_scale(id, scales[ib], 15) << 28;
    for (std::size_t j = 0; j < 16; ++j) detail::store_le(dst + offsetof(B, qs) + 4 * j, q2[j]);
  }
  return errc::success;
}

/// quantize_iq2_xxs_with the scalar neighbour search: ggml's code.
[[nodiscard]] inline errc quantize_iq2_xxs(const float* src, std::byte* dst, std::size_t n_per_row,
                                           const float* importance) noexcept {
  return quantize_iq2_xxs_with(src, dst, n_per_row, importance);
}

/**
 * iq2_xs, one row: n_per_row / 256 blocks of 74 bytes (blocks::iq2_xs), as ggml's quantize_row_iq2_xs_impl.
 * Importance is required. Parameters and errors as quantize_iq2_xxs.
 */
template <class Neighbours = detail::iq::neighbour_search>
[[nodiscard]] inline errc quantize_iq2_xs_with(const float* src, std::byte* dst, std::size_t n_per_row,
                                               const float* importance, const Neighbours& nb = {}) noexcept {
  namespace iq = detail::iq;
  using B = blocks::iq2_xs;
  if (importance == nullptr) return errc::not_found;
  if (n_per_row % blocks::qk_k != 0) return errc::size_mismatch;
  const auto& grid = iq::iq2xs_search();
  for (std::size_t ibl = 0; ibl < n_per_row / blocks::qk_k; ++ibl, dst += sizeof(B)) {
    const float* xbl = src + blocks::qk_k * ibl;
    std::array<std::uint16_t, 32> q2{};
    std::array<float, 16> scales{};
    float max_scale = 0;
    const float sigma2 = detail::sum_of_squares(xbl, 256) / 256;
    for (std::size_t ib = 0; ib < 16; ++ib) {
      const float* xb = xbl + 16 * ib;
      float weight[16], waux[16], xval[16];
      std::int8_t L[16];
      std::uint8_t signs[2];
      iq::group_weights(xb, importance + blocks::qk_k * ibl + 16 * ib, sigma2, 16, weight);
      for (std::size_t i = 0; i < 16; ++i) waux[i] = std::sqrt(weight[i]);
      for (std::size_t k = 0; k < 2; ++k) signs[k] = iq::even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
      const float max = iq::max_of(xval, 16);
      if (max < 1e-15f) continue;  // GROUP_MAX_EPS: the group's q2 words stay 0
      float scale;
      if (!iq::fit_levels<16>(grid, xval, weight, waux, max, 3, 9, 0.1f, false, L, scale, nb))
        return errc::out_of_range;
      if (scale < 0) {
        scale = -scale;
        for (auto& s : signs) s = static_cast<std::uint8_t>(~s & 127);
      }
      for (std::size_t k = 0; k < 2; ++k) {
        const std::int32_t g = grid.lookup(L + 8 * k);
        if (g < 0) return errc::out_of_range;
        q2[2 * ib + k] = static_cast<std::uint16_t>(static_cast<unsigned>(g) | (unsigned{signs[k]} << 9));
      }
      if (!(scale >= 0)) return errc::out_of_range;
      scales[ib] = scale;
      max_scale = iq::c_max(max_scale, scale);
    }
    std::memset(dst, 0, sizeof(B));
    if (max_scale == 0) continue;
    const float d = max_scale / 31;
    detail::store_le(dst + offsetof(B, d), iq::half_bits_nan_as_x86(d));
    const float id = 1 / d;
    iq::pack_sub_scales(dst + offsetof(B, scales), scales.data(), 16, id);
    for (std::size_t j = 0; j < 32; ++j) detail::store_le(dst + offsetof(B, qs) + 2 * j, q2[j]);
  }
  return errc::success;
}

/// quantize_iq2_xs_with the scalar neighbour search: ggml's code.
[[nodiscard]] inline errc quantize_iq2_xs(const float* src, std::byte* dst, std::size_t n_per_row,
                                          const float* importance) noexcept {
  return quantize_iq2_xs_with(src, dst, n_per_row, importance);
}

/**
 * iq2_s, one row: n_per_row / 256 blocks of 82 bytes (blocks::iq2_s), as ggml's quantize_row_iq2_s_impl;
 * without importance the weights are sigma2 / 4 + x^2. Parameters and errors as quantize_iq2_xxs (importance
 * optional).
 */
template <class Neighbours = detail::iq::neighbour_search>
[[nodiscard]] inline errc quantize_iq2_s_with(const float* src, std::byte* dst, std::size_t n_per_row,
                                              const float* importance, const Neighbours& nb = {}) noexcept {
  namespace iq = detail::iq;
  using B = blocks::iq2_s;
  if (n_per_row % blocks::qk_k != 0) return errc::size_mismatch;
  const auto& grid = iq::iq2s_search();
  for (std::size_t ibl = 0; ibl < n_per_row / blocks::qk_k; ++ibl, dst += sizeof(B)) {
    const float* xbl = src + blocks::qk_k * ibl;
    std::memset(dst, 0, sizeof(B));
    std::byte* qs = dst + offsetof(B, qs);
    std::byte* qh = dst + offsetof(B, qh);
    std::array<float, 16> scales{};
    float max_scale = 0;
    const float sigma2 = 2 * detail::sum_of_squares(xbl, 256) / 256;
    for (std::size_t ib = 0; ib < 16; ++ib) {
      const float* xb = xbl + 16 * ib;
      float weight[16], waux[16], xval[16];
      std::int8_t L[16];
      std::uint8_t signs[2];
      if (importance) {
        iq::group_weights(xb, importance + blocks::qk_k * ibl + 16 * ib, sigma2, 16, weight);
      } else {
        for (std::size_t i = 0; i < 16; ++i) weight[i] = iq::mul(0.25f, sigma2) + iq::mul(xb[i], xb[i]);
      }
      for (std::size_t i = 0; i < 16; ++i) waux[i] = std::sqrt(weight[i]);
      for (std::size_t k = 0; k < 2; ++k) signs[k] = iq::plain_signs(xb + 8 * k, xval + 8 * k);
      const float max = iq::max_of(xval, 16);
      if (max < 1e-8f) continue;  // GROUP_MAX_EPS_IQ2_S
      float scale;
      if (!iq::fit_levels<16>(grid, xval, weight, waux, max, 3, 9, 0.1f, false, L, scale, nb))
        return errc::out_of_range;
      if (scale < 0) {
        scale = -scale;
        for (auto& s : signs) s = static_cast<std::uint8_t>(~s);
      }
      for (std::size_t k = 0; k < 2; ++k) {
        const std::int32_t g = grid.lookup(L + 8 * k);
        if (g < 0) return errc::out_of_range;
        const std::size_t i8 = 2 * ib + k;
        const auto ug = static_cast<unsigned>(g);
        qs[i8] = static_cast<std::byte>(ug & 255u);
        qh[i8 / 4] |= static_cast<std::byte>((ug >> 8) << (2 * (i8 % 4)));
        qs[32 + i8] = static_cast<std::byte>(signs[k]);
      }
      if (!(scale >= 0)) return errc::out_of_range;
      scales[ib] = scale;
      max_scale = iq::c_max(max_scale, scale);
    }
    if (max_scale == 0) continue;
    const float d = max_scale / 31;
    detail::store_le(dst + offsetof(B, d), iq::half_bits_nan_as_x86(d * 0.9875f));
    const float id = 1 / d;
    iq::pack_sub_scales(dst + offsetof(B, scales), scales.data(), 16, id);
  }
  return errc::success;
}

/// quantize_iq2_s_with the scalar neighbour search: ggml's code.
[[nodiscard]] inline errc quantize_iq2_s(const float* src, std::byte* dst, std::size_t n_per_row,
                                         const float* importance) noexcept {
  return quantize_iq2_s_with(src, dst, n_per_row, importance);
}

/**
 * iq3_xxs, one row: n_per_row / 256 blocks of 98 bytes (blocks::iq3_xxs), as ggml's quantize_row_iq3_xxs_impl
 * (grid size 256); without importance the weights are x^2. Parameters and errors as quantize_iq2_xxs
 * (importance optional).
 */
template <class Neighbours = detail::iq::neighbour_search>
[[nodiscard]] inline errc quantize_iq3_xxs_with(const float* src, std::byte* dst, std::size_t n_per_row,
                                                const float* importance, const Neighbours& nb = {}) noexcept {
  namespace iq = detail::iq;
  using B = blocks::iq3_xxs;
  if (n_per_row % blocks::qk_k != 0) return errc::size_mismatch;
  const auto& grid = iq::iq3xxs_search();
  for (std::size_t ibl = 0; ibl < n_per_row / blocks::qk_k; ++ibl, dst += sizeof(B)) {
    const float* xbl = src + blocks::qk_k * ibl;
    std::array<std::uint8_t, 64> q3{};
    std::array<std::uint32_t, 8> scales_and_signs{};
    std::array<float, 8> scales{};
    float max_scale = 0;
    const float sigma2 = 2 * detail::sum_of_squares(xbl, 256) / 256;
    for (std::size_t ib = 0; ib < 8; ++ib) {
      const float* xb = xbl + 32 * ib;
      float weight[32], waux[32], xval[32];
      std::int8_t L[32];
      std::uint8_t signs[4];
      iq::group_weights(xb, importance ? importance + blocks::qk_k * ibl + 32 * ib : nullptr, sigma2, 32, weight);
      for (std::size_t i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
      for (std::size_t k = 0; k < 4; ++k) signs[k] = iq::even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
      const float max = iq::max_of(xval, 32);
      if (max < 1e-8f) continue;  // GROUP_MAX_EPS_IQ3_XXS
      float scale;
      if (!iq::fit_levels<32>(grid, xval, weight, waux, max, 8, 15, 0.2f, false, L, scale, nb))
        return errc::out_of_range;
      if (scale < 0) {
        scale = -scale;
        for (auto& s : signs) s = static_cast<std::uint8_t>(~s & 127);
      }
      for (std::size_t k = 0; k < 8; ++k) {
        const std::int32_t g = grid.lookup(L + 4 * k);
        if (g < 0) return errc::out_of_range;
        q3[8 * ib + k] = static_cast<std::uint8_t>(g);
      }
      scales_and_signs[ib] =
          unsigned{signs[0]} | (unsigned{signs[1]} << 7) | (unsigned{signs[2]} << 14) | (unsigned{signs[3]} << 21);
      if (!(scale >= 0)) return errc::out_of_range;
      scales[ib] = scale;
      max_scale = iq::c_max(max_scale, scale);
    }
    std::memset(dst, 0, sizeof(B));
    if (max_scale == 0) continue;
    const float d = max_scale / 31;
    detail::store_le(dst + offsetof(B, d), iq::half_bits_nan_as_x86(d * 1.0125f));
    const float id = 1 / d;
    std::memcpy(dst + offsetof(B, qs), q3.data(), 64);
    for (std::size_t ib = 0; ib < 8; ++ib) {
      detail::store_le(dst + offsetof(B, qs) + 64 + 4 * ib,
                       scales_and_signs[ib] | (iq::sub_scale(id, scales[ib], 15) << 28));
    }
  }
  return errc::success;
}

/// quantize_iq3_xxs_with the scalar neighbour search: ggml's code.
[[nodiscard]] inline errc quantize_iq3_xxs(const float* src, std::byte* dst, std::size_t n_per_row,
                                           const float* importance) noexcept {
  return quantize_iq3_xxs_with(src, dst, n_per_row, importance);
}

/**
 * iq3_s, one row: n_per_row / 256 blocks of 110 bytes (blocks::iq3_s), as ggml's quantize_row_iq3_s_impl
 * (32-weight blocks); without importance the weights are x^2. Parameters and errors as quantize_iq2_xxs
 * (importance optional).
 */
template <class Neighbours = detail::iq::neighbour_search>
[[nodiscard]] inline errc quantize_iq3_s_with(const float* src, std::byte* dst, std::size_t n_per_row,
                                              const float* importance, const Neighbours& nb = {}) noexcept {
  namespace iq = detail::iq;
  using B = blocks::iq3_s;
  if (n_per_row % blocks::qk_k != 0) return errc::size_mismatch;
  const auto& grid = iq::iq3s_search();
  for (std::size_t ibl = 0; ibl < n_per_row / blocks::qk_k; ++ibl, dst += sizeof(B)) {
    const float* xbl = src + blocks::qk_k * ibl;
    std::memset(dst, 0, sizeof(B));
    std::array<float, 8> scales{};
    float max_scale = 0;
    // ggml advances its qs and signs pointers only past the 32-weight blocks it quantizes: after an all-zero
    // block, the next one's indices and signs take its place (and the row's last ones stay zero). Its qh
    // bits and scales are placed by position. Kept, for the same bytes.
    std::size_t written = 0;
    const float sigma2 = 2 * detail::sum_of_squares(xbl, 256) / 256;
    for (std::size_t ib = 0; ib < 8; ++ib) {
      const float* xb = xbl + 32 * ib;
      float weight[32], waux[32], xval[32];
      std::int8_t L[32];
      std::uint8_t signs[4];
      iq::group_weights(xb, importance ? importance + blocks::qk_k * ibl + 32 * ib : nullptr, sigma2, 32, weight);
      for (std::size_t i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
      for (std::size_t k = 0; k < 4; ++k) signs[k] = iq::plain_signs(xb + 8 * k, xval + 8 * k);
      const float max = iq::max_of(xval, 32);
      if (max == 0) continue;  // ggml tests !max here, no epsilon
      float scale;
      if (!iq::fit_levels<32>(grid, xval, weight, waux, max, 8, 9, 0.2f, true, L, scale, nb)) return errc::out_of_range;
      if (scale < 0) {
        scale = -scale;
        for (auto& s : signs) s = static_cast<std::uint8_t>(~s);
      }
      for (std::size_t k = 0; k < 8; ++k) {
        const std::int32_t g = grid.lookup(L + 4 * k);
        if (g < 0) return errc::out_of_range;
        const auto ug = static_cast<unsigned>(g);
        dst[offsetof(B, qs) + 8 * written + k] = static_cast<std::byte>(ug & 255u);
        dst[offsetof(B, qh) + ib] |= static_cast<std::byte>((ug >> 8) << k);
      }
      for (std::size_t k = 0; k < 4; ++k) dst[offsetof(B, signs) + 4 * written + k] = static_cast<std::byte>(signs[k]);
      ++written;
      if (!(scale >= 0)) return errc::out_of_range;
      scales[ib] = scale;
      max_scale = iq::c_max(max_scale, scale);
    }
    if (max_scale == 0) continue;
    const float d = max_scale / 31;
    detail::store_le(dst + offsetof(B, d), iq::half_bits_nan_as_x86(d * 1.033f));
    const float id = 1 / d;
    iq::pack_sub_scales(dst + offsetof(B, scales), scales.data(), 8, id);
  }
  return errc::success;
}

/// quantize_iq3_s_with the scalar neighbour search: ggml's code.
[[nodiscard]] inline errc quantize_iq3_s(const float* src, std::byte* dst, std::size_t n_per_row,
                                         const float* importance) noexcept {
  return quantize_iq3_s_with(src, dst, n_per_row, importance);
}

/**
 * iq1_s, one row: n_per_row / 256 blocks of 50 bytes (blocks::iq1_s), as ggml's quantize_row_iq1_s_impl: per
 * 32 weights the exact best split into three levels (over the sorted values), then grid points. Importance
 * is required. Parameters and errors as quantize_iq2_xxs.
 */
template <class Searches = detail::iq::iq1_searches>
[[nodiscard]] inline errc quantize_iq1_s_with(const float* src, std::byte* dst, std::size_t n_per_row,
                                              const float* importance, const Searches& searches = {}) noexcept {
  namespace iq = detail::iq;
  using B = blocks::iq1_s;
  if (importance == nullptr) return errc::not_found;
  if (n_per_row % blocks::qk_k != 0) return errc::size_mismatch;
  const auto& grid = iq::iq1_search();
  for (std::size_t ibl = 0; ibl < n_per_row / blocks::qk_k; ++ibl, dst += sizeof(B)) {
    const float* xbl = src + blocks::qk_k * ibl;
    std::memset(dst, 0, sizeof(B));
    std::array<std::uint16_t, 8> qh{};
    std::array<float, 8> scales{};
    std::array<int, 8> shifts{};
    float max_scale = 0;
    const float sigma2 = 2 * detail::sum_of_squares(xbl, 256) / 256;
    for (std::size_t ib = 0; ib < 8; ++ib) {
      const float* xb = xbl + 32 * ib;
      float weight[32];
      std::int8_t L[32];
      iq::group_weights(xb, importance + blocks::qk_k * ibl + 32 * ib, sigma2, 32, weight);
      float max = std::fabs(xb[0]);
      for (std::size_t i = 1; i < 32; ++i) max = iq::c_max(max, std::fabs(xb[i]));
      shifts[ib] = 1;
      if (max < 1e-12f) continue;  // GROUP_MAX_EPS_IQ1_S
      const auto order = searches.template sorted<32>(xb);
      float sumx[33 + 16] = {}, sumw[33 + 16] = {};  // zeros past the end for a SIMD search's loads
      for (std::size_t j = 0; j < 32; ++j) {
        const auto i = static_cast<std::size_t>(order[j]);
        sumx[j + 1] = sumx[j] + iq::mul(weight[i], xb[i]);
        sumw[j + 1] = sumw[j] + weight[i];
      }
      const iq::iq1_split split = searches.split(sumx, sumw, max);
      float scale = split.scale;
      int besti1 = split.i1, besti2 = split.i2, best_shift = split.shift;
      if (besti1 < 0 || besti2 < 0 || best_shift == 0) continue;
      iq::split_levels(order, besti1, besti2, L);
      if (scale < 0) {
        for (auto& l : L) l = static_cast<std::int8_t>(2 - l);
        scale = -scale;
        best_shift = -best_shift;
      }
      const float* xx = best_shift == 1 ? iq::iq1_xp : iq::iq1_xm;
      bool all_on_grid = true;
      std::array<int, 4> index{};
      for (std::size_t k = 0; k < 4; ++k) {
        const std::int32_t e = grid.lookup(L + 8 * k);
        index[k] = e;
        if (e < 0) {
          all_on_grid = false;
          index[k] = searches.neighbour(grid, e, xb + 8 * k, weight + 8 * k, scale, xx, L + 8 * k);
          if (index[k] < 0) return errc::out_of_range;
        }
      }
      if (!all_on_grid) {
        float sumqx = 0, sumq2 = 0;
        for (std::size_t k = 0; k < 4; ++k) {
          const auto& pg = grid.q[static_cast<std::size_t>(index[k])];
          for (std::size_t j = 0; j < 8; ++j) {
            const float w = weight[8 * k + j], q = xx[(pg[j] - 1) / 2];
            sumqx += iq::mul(w * q, xb[8 * k + j]);
            sumq2 += iq::mul(w * q, q);
          }
        }
        if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
      }
      unsigned h = 0;
      for (std::size_t k = 0; k < 4; ++k) {
        const auto ug = static_cast<unsigned>(index[k]);
        dst[offsetof(B, qs) + 4 * ib + k] = static_cast<std::byte>(ug & 255u);
        h |= (ug >> 8) << (3 * k);
      }
      qh[ib] = static_cast<std::uint16_t>(h);
      if (!(scale >= 0)) return errc::out_of_range;
      scales[ib] = scale;
      shifts[ib] = best_shift;
      max_scale = iq::c_max(max_scale, scale);
    }
    if (max_scale != 0) {
      const float d = max_scale / 15;
      detail::store_le(dst + offsetof(B, d), iq::half_bits_nan_as_x86(d * 1.125f));
      const float id = 1 / d;
      for (std::size_t ib = 0; ib < 8; ++ib) {
        unsigned l = iq::sub_scale(id, scales[ib], 7);
        if (shifts[ib] == -1) l |= 8;
        qh[ib] = static_cast<std::uint16_t>(qh[ib] | (l << 12));
      }
    }
    for (std::size_t ib = 0; ib < 8; ++ib) detail::store_le(dst + offsetof(B, qh) + 2 * ib, qh[ib]);
  }
  return errc::success;
}

/// quantize_iq1_s_with the scalar searches: ggml's code.
[[nodiscard]] inline errc quantize_iq1_s(const float* src, std::byte* dst, std::size_t n_per_row,
                                         const float* importance) noexcept {
  return quantize_iq1_s_with(src, dst, n_per_row, importance);
}

/**
 * iq1_m, one row: n_per_row / 256 blocks of 56 bytes (blocks::iq1_m), as ggml's quantize_row_iq1_m_impl: per
 * 16 weights the exact best split into three levels with a shift sign per 8, then grid points, then the
 * block scale refitted over the whole super-block. Without importance the weights are x^2. Parameters and
 * errors as quantize_iq2_xxs (importance optional).
 */
template <class Searches = detail::iq::iq1_searches>
[[nodiscard]] inline errc quantize_iq1_m_with(const float* src, std::byte* dst, std::size_t n_per_row,
                                              const float* importance, const Searches& searches = {}) noexcept {
  namespace iq = detail::iq;
  using B = blocks::iq1_m;
  if (n_per_row % blocks::qk_k != 0) return errc::size_mismatch;
  const auto& grid = iq::iq1_search();
  constexpr std::uint8_t masks[4] = {0x00, 0x80, 0x08, 0x88};
  // Which shift (x_p, x_m) each 8 of a 16 use, per best_k: 0 = (+, +), 1 = (+, -), 2 = (-, +), 3 = (-, -).
  const auto shift_of = [](int best_k, std::size_t k) {
    return (k == 0 ? best_k < 2 : best_k % 2 == 0) ? iq::iq1_xp : iq::iq1_xm;
  };
  for (std::size_t ibl = 0; ibl < n_per_row / blocks::qk_k; ++ibl, dst += sizeof(B)) {
    const float* xbl = src + blocks::qk_k * ibl;
    const float* qwbl = importance ? importance + blocks::qk_k * ibl : nullptr;
    std::memset(dst, 0, sizeof(B));
    std::byte* qs = dst + offsetof(B, qs);
    std::byte* qh = dst + offsetof(B, qh);
    std::array<float, 16> scales{};
    std::array<int, 16> shifts{};
    float max_scale = 0;
    const float sigma2 = 2 * detail::sum_of_squares(xbl, 256) / 256;
    for (std::size_t ib = 0; ib < 16; ++ib) {
      const float* xb = xbl + 16 * ib;
      float weight[16];
      std::int8_t L[16];
      iq::group_weights(xb, qwbl ? qwbl + 16 * ib : nullptr, sigma2, 16, weight);
      float max = std::fabs(xb[0]);
      for (std::size_t i = 1; i < 16; ++i) max = iq::c_max(max, std::fabs(xb[i]));
      if (max < 1e-7f) continue;  // GROUP_MAX_EPS_IQ1_M
      const auto order = searches.template sorted<16>(xb);
      iq::iq1_m_sums sums{};  // see iq1_searches::split_m
      for (std::size_t j = 0; j < 16; ++j) {
        const auto i = static_cast<std::size_t>(order[j]);
        const std::size_t h = i < 8 ? 0 : 1, o = 1 - h;
        sums.x[h][j + 1] = sums.x[h][j] + iq::mul(weight[i], xb[i]);
        sums.w[h][j + 1] = sums.w[h][j] + weight[i];
        sums.x[o][j + 1] = sums.x[o][j];
        sums.w[o][j + 1] = sums.w[o][j];
      }
      const iq::iq1_m_split split = searches.split_m(sums, max);
      float scale = split.scale;
      int besti1 = split.i1, besti2 = split.i2, best_k = split.k;
      if (besti1 < 0 || besti2 < 0 || best_k < 0) continue;
      iq::split_levels(order, besti1, besti2, L);
      if (scale < 0) {
        for (auto& l : L) l = static_cast<std::int8_t>(2 - l);
        scale = -scale;
        best_k = 3 - best_k;
      }
      bool all_on_grid = true;
      std::array<int, 2> index{};
      for (std::size_t k = 0; k < 2; ++k) {
        const std::int32_t e = grid.lookup(L + 8 * k);
        index[k] = e;
        if (e < 0) {
          all_on_grid = false;
          index[k] = searches.neighbour(grid, e, xb + 8 * k, weight + 8 * k, scale, shift_of(best_k, k), L + 8 * k);
          if (index[k] < 0) return errc::out_of_range;
        }
      }
      if (!all_on_grid) {
        float sumqx = 0, sumq2 = 0;
        for (std::size_t k = 0; k < 2; ++k) {
          const float* xx = shift_of(best_k, k);
          const auto& pg = grid.q[static_cast<std::size_t>(index[k])];
          for (std::size_t j = 0; j < 8; ++j) {
            const float w = weight[8 * k + j], q = xx[(pg[j] - 1) / 2];
            sumqx += iq::mul(w * q, xb[8 * k + j]);
            sumq2 += iq::mul(w * q, q);
          }
        }
        if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
      }
      const auto u0 = static_cast<unsigned>(index[0]), u1 = static_cast<unsigned>(index[1]);
      qs[2 * ib] = static_cast<std::byte>(u0 & 255u);
      qs[2 * ib + 1] = static_cast<std::byte>(u1 & 255u);
      qh[ib] = static_cast<std::byte>((u0 >> 8) | ((u1 >> 8) << 4));
      if (!(scale >= 0)) return errc::out_of_range;
      scales[ib] = scale;
      shifts[ib] = best_k;
      max_scale = iq::c_max(max_scale, scale);
    }
    if (max_scale == 0) continue;
    std::array<std::uint16_t, 4> sc{};
    float d = max_scale / 15;
    const float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (std::size_t ib = 0; ib < 16; ++ib) {
      const unsigned l = iq::sub_scale(id, scales[ib], 7);
      sc[ib / 4] = static_cast<std::uint16_t>(sc[ib / 4] | (l << (3 * (ib % 4))));
      qh[ib] |= static_cast<std::byte>(masks[shifts[ib]]);
      const float* xb = xbl + 16 * ib;
      float weight[16];
      iq::group_weights(xb, qwbl ? qwbl + 16 * ib : nullptr, sigma2, 16, weight);
      const auto h = static_cast<unsigned>(qh[ib]);
      for (std::size_t k = 0; k < 2; ++k) {
        const float* xx = shift_of(shifts[ib], k);
        const std::size_t g = static_cast<unsigned>(qs[2 * ib + k]) + ((h << (8 - 4 * k)) & 0x700u);
        const auto& pg = grid.q[g];
        for (std::size_t j = 0; j < 8; ++j) {
          const float w = weight[8 * k + j], q = xx[(pg[j] - 1) / 2] * static_cast<float>(2 * l + 1);
          sumqx += iq::mul(w * q, xb[8 * k + j]);
          sumq2 += iq::mul(w * q, q);
        }
      }
    }
    if (sumq2 > 0) d = sumqx / sumq2;
    const unsigned s = iq::half_bits_nan_as_x86(d * 1.1125f);
    sc[0] = static_cast<std::uint16_t>(sc[0] | ((s & 0x000Fu) << 12));
    sc[1] = static_cast<std::uint16_t>(sc[1] | ((s & 0x00F0u) << 8));
    sc[2] = static_cast<std::uint16_t>(sc[2] | ((s & 0x0F00u) << 4));
    sc[3] = static_cast<std::uint16_t>(sc[3] | (s & 0xF000u));
    for (std::size_t j = 0; j < 4; ++j) detail::store_le(dst + offsetof(B, scales) + 2 * j, sc[j]);
  }
  return errc::success;
}

/// quantize_iq1_m_with the scalar searches: ggml's code.
[[nodiscard]] inline errc quantize_iq1_m(const float* src, std::byte* dst, std::size_t n_per_row,
                                         const float* importance) noexcept {
  return quantize_iq1_m_with(src, dst, n_per_row, importance);
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_IQ_GRID_QUANTIZE_HPP
