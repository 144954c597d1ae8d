#ifndef GGUF_KERNELS_IQ_GRID_QUANTIZE_SIMD_HPP
#define GGUF_KERNELS_IQ_GRID_QUANTIZE_SIMD_HPP

#include <array>
#include <tuple>
#include <bit>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "gguf/kernels/iq_grid/neighbours.hpp"
#include "gguf/kernels/iq_grid/quantize.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/simd/quantize_search.hpp"
#include "gguf/result.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the IQ grid quantizers iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s and iq1_m: ggml's algorithm as
// the scalar quantizers write it (they take these searches as a policy), with their time-takers in lanes.
// The search of a group's neighbour list for the grid point nearest to its weights: lanes<A> candidate
// points at once, each lane the scalar sum over the group's weights in their order, the candidates' levels
// loaded from a transposed copy of the lists; the least sum, first of equals, is the scalar search's
// choice (NaN never wins there, `d2 < best` being false, nor here). iq1_s's search of the best split of
// its sorted weights into three levels: lanes<A> split points at once, and where one beats the best so
// far, the scalar order from there.

namespace detail {

/**
 * The grid's neighbour lists with each listed point's levels (2 l + 1) beside them, transposed: for the
 * list at offset o of length n, weight i of its k-th point at byte (o + 1) * dims + i * n + k. A list's
 * candidates are then lanes<A> consecutive bytes per weight, one widening load instead of a gather
 * (ggml's lists name points anywhere in the grid: a gather of the grid's levels was slower than the
 * scalar search on AVX-512). Built once, on first use, in static storage (about 1 MB for iq2_xxs).
 */
template <class Search>
struct transposed_lists {
  /// Slots of the lists (their counts included).
  static constexpr std::size_t slots = std::tuple_size_v<decltype(Search::neighbours)>;
  /// The levels, plus 64 bytes that the last list's loads may read past its end.
  std::array<std::int8_t, slots * Search::dims + 64> levels{};

  /// Transposes the lists of `s`.
  explicit transposed_lists(const Search& s) noexcept {
    for (std::size_t o = 0; o < s.filled;) {
      const std::size_t n = s.neighbours[o];
      for (std::size_t k = 0; k < n; ++k) {
        for (std::size_t i = 0; i < Search::dims; ++i)
          levels[(o + 1) * Search::dims + i * n + k] = s.q[s.neighbours[o + 1 + k]][i];
      }
      o += n + 1;
    }
  }

  /// The transposed lists of `s` (one grid per Search type).
  static const transposed_lists& of(const Search& s) noexcept {
    static const transposed_lists t(s);
    return t;
  }
};

/**
 * The point of the neighbour list of `entry` nearest to xval at `scale` (least sum of weight * (scale * v -
 * x)^2 over its weights, v = value(level) of each, the first of equals; NaN sums never win), lanes<A>
 * candidates at once; its levels to L. @return its grid index, or -1
 */
template <class A, class Search, class Value>
inline int nearest_listed(const Search& s, std::int32_t entry, const float* xval, const float* weight, float scale,
                          std::int8_t* L, const Value& value) noexcept {
  using F = fbatch<A>;
  constexpr std::size_t G = lanes<A>;
  const std::uint16_t* list = s.list(entry);
  const std::size_t n = list[0];
  const auto offset = static_cast<std::size_t>(list - s.neighbours.data());
  const auto* levels =
      reinterpret_cast<const std::byte*>(transposed_lists<Search>::of(s).levels.data() + (offset + 1) * Search::dims);
  const F inf(std::numeric_limits<float>::infinity()), sc(scale);
  const F lane = lane_map<A>([](int i) { return static_cast<float>(i); });
  float best_d2 = FLT_MAX;
  int best = -1;
  for (std::size_t j = 0; j < n; j += G) {
    F d2(0.0f);
    for (std::size_t i = 0; i < Search::dims; ++i) {
      const F diff = mul_rounded<A>(sc, value(to_float<A>(load_i8<A>(levels + i * n + j)))) - F(xval[i]);
      d2 += mul_rounded<A>(F(weight[i]) * diff, diff);
    }
    // the lanes past the list's end, and NaN sums (never below the best), as infinity (never below FLT_MAX)
    d2 = xsimd::select(lane < F(static_cast<float>(n - j)) && d2 <= inf, d2, inf);
    const float least = -max_lane<A>(negate<A>(d2));
    if (least < best_d2) {
      best_d2 = least;
      best = list[1 + j + static_cast<std::size_t>(std::countr_zero(lane_bits<A>(d2 == F(least))))];
    }
  }
  if (best >= 0) s.levels(static_cast<std::size_t>(best), L);
  return best;
}

/// `scalar::detail::iq::best_neighbour` with lanes<A> candidates at a time: the same point, the same levels.
template <class A>
struct neighbour_lanes {
  /// The grid index of the neighbour-list point of `entry` nearest to xval at `scale`, or -1; its levels to L.
  template <class Search>
  int operator()(const Search& s, std::int32_t entry, const float* xval, const float* weight, float scale,
                 std::int8_t* L) const noexcept {
    return nearest_listed<A>(s, entry, xval, weight, scale, L, [](const fbatch<A>& q) { return q; });
  }

  /// `scalar::detail::iq::neighbour_search::levels`: lanes<A> weights of a trial at a time.
  template <std::size_t N>
  void levels(const float* xval, const float* ids, std::size_t trials, int kmax, std::int8_t (*Ls)[N]) const noexcept {
    using F = fbatch<A>;
    using I = ibatch<A>;
    static_assert(N % lanes<A> == 0);
    for (std::size_t t = 0; t < trials; ++t) {
      const F id(ids[t]);
      for (std::size_t i = 0; i < N; i += lanes<A>) {
        const F half_step = F(0.5f) * (mul_rounded<A>(id, F::load_unaligned(xval + i)) - F(1.0f));
        const I l = xsimd::min(xsimd::max(nearest_int<A>(half_step), I(0)), I(kmax - 1));
        store_low_bytes<A>(reinterpret_cast<std::byte*>(Ls[t] + i), l);
      }
    }
  }

  /**
   * `scalar::detail::iq::neighbour_search::sums`: lanes<A> trials at a time, each lane's sums in weight
   * order (one chain each, where the scalar sums are one chain a trial after another).
   */
  template <std::size_t N>
  void sums(const float* w, const float* xval, const std::int8_t (*Ls)[N], std::size_t trials, float* sumqx,
            float* sumq2) const noexcept {
    using F = fbatch<A>;
    constexpr std::size_t G = lanes<A>;
    alignas(64) std::int8_t lt[N][G];  // transposed: lt[i][j] is weight i's level in trial first + j
    alignas(64) float sx[G], s2[G];
    for (std::size_t first = 0; first < trials; first += G) {
      const std::size_t count = trials - first < G ? trials - first : G;
      for (std::size_t j = 0; j < G; ++j) {
        for (std::size_t i = 0; i < N; ++i) lt[i][j] = j < count ? Ls[first + j][i] : std::int8_t{0};
      }
      F sumx(0.0f), sum2(0.0f);
      for (std::size_t i = 0; i < N; ++i) {
        const F q = to_float<A>(load_i8<A>(reinterpret_cast<const std::byte*>(lt[i])) * ibatch<A>(2) + ibatch<A>(1));
        sumx += mul_rounded<A>(F(w[i] * xval[i]), q);
        sum2 += mul_rounded<A>(mul_rounded<A>(F(w[i]), q), q);
      }
      sumx.store_aligned(sx);
      sum2.store_aligned(s2);
      for (std::size_t j = 0; j < count; ++j) {
        sumqx[first + j] = sx[j];
        sumq2[first + j] = s2[j];
      }
    }
  }
};

/**
 * `scalar::detail::iq::iq1_searches` in lanes. The split search with lanes<A> consecutive i2 at once: each lane's sums
 * the scalar ones. The best score only grows and its comparison (sumqx^2 > best * sumq2, sumq2 > 0) rounds
 * monotonically in it, so a candidate that does not beat the best before a batch beats none after it: only the
 * candidates that do are replayed, in the scalar loop's order, each against the best it would meet there. The first
 * best, exactly.
 */
template <class A>
struct iq1_searches_lanes {
  /// The best split; `max` is the scale when none is found. sumx and sumw hold zeros up to 48.
  static scalar::detail::iq::iq1_split split(const float* sumx, const float* sumw, float max) noexcept {
    namespace iq = scalar::detail::iq;
    using F = fbatch<A>;
    constexpr std::size_t G = lanes<A>;
    static_assert(G <= 16);
    const F zero(0.0f), lane = lane_map<A>([](int i) { return static_cast<float>(i); });
    const F p0(iq::iq1_xp[0]), p1(iq::iq1_xp[1]), p2(iq::iq1_xp[2]);
    const F m0(iq::iq1_xm[0]), m1(iq::iq1_xm[1]), m2(iq::iq1_xm[2]);
    iq::iq1_split r{max, -1, -1, 0};
    float best_score = -FLT_MAX;
    // a candidate that beat the best before its batch, against the best so far; its scale and score were
    // divided in lanes, so the replay's chain is a product and a compare
    const auto consider = [&](float sumqx, float sumq2, float scale, float score, int i1, int i2, int shift) {
      if (sumqx * sumqx > best_score * sumq2) {
        best_score = score;
        r = {scale, i1, i2, shift};
      }
    };
    for (int i1 = 0; i1 <= 32; ++i1) {
      const F a(sumx[i1] - sumx[0]), wa(sumw[i1] - sumw[0]), x1(sumx[i1]), w1(sumw[i1]);
      const F x32(sumx[32]), w32(sumw[32]);
      for (int i2 = i1; i2 <= 32; i2 += static_cast<int>(G)) {
        const F x2 = F::load_unaligned(sumx + i2), w2 = F::load_unaligned(sumw + i2);
        const F b = x2 - x1, c = x32 - x2, wb = w2 - w1, wc = w32 - w2;
        const F qxp = mul_rounded<A>(a, p0) + mul_rounded<A>(b, p1) + mul_rounded<A>(c, p2);
        const F q2p = mul_rounded<A>(wa * p0, p0) + mul_rounded<A>(wb * p1, p1) + mul_rounded<A>(wc * p2, p2);
        const F qxm = mul_rounded<A>(a, m0) + mul_rounded<A>(b, m1) + mul_rounded<A>(c, m2);
        const F q2m = mul_rounded<A>(wa * m0, m0) + mul_rounded<A>(wb * m1, m1) + mul_rounded<A>(wc * m2, m2);
        const F best(best_score);
        const auto live = lane < F(static_cast<float>(33 - i2));  // lanes i2 + k <= 32
        const std::uint32_t beats_p = lane_bits<A>((q2p > zero) & (qxp * qxp > best * q2p) & live);
        const std::uint32_t beats_m = lane_bits<A>((q2m > zero) & (qxm * qxm > best * q2m) & live);
        std::uint32_t any = beats_p | beats_m;
        if (any == 0) continue;
        alignas(64) float sp[G], s2p[G], scp[G], bp[G], sm[G], s2m[G], scm[G], bm[G];
        const F scale_p = div<A>(qxp, q2p), scale_m = div<A>(qxm, q2m);
        qxp.store_aligned(sp);
        q2p.store_aligned(s2p);
        scale_p.store_aligned(scp);
        (scale_p * qxp).store_aligned(bp);
        qxm.store_aligned(sm);
        q2m.store_aligned(s2m);
        scale_m.store_aligned(scm);
        (scale_m * qxm).store_aligned(bm);
        for (; any != 0; any &= any - 1) {
          const int k = std::countr_zero(any);
          const auto uk = static_cast<std::size_t>(k);
          if ((beats_p >> k & 1u) != 0) consider(sp[uk], s2p[uk], scp[uk], bp[uk], i1, i2 + k, 1);
          if ((beats_m >> k & 1u) != 0) consider(sm[uk], s2m[uk], scm[uk], bm[uk], i1, i2 + k, -1);
        }
      }
    }
    return r;
  }

  /**
   * `scalar::detail::iq::sorted_order<N>` (glibc's merge sort, stable) by ranks: weight i goes to position
   * #{j : x[j] < x[i]} + #{j < i : x[j] == x[i]}, the one a stable sort gives it, counted lanes<A> weights
   * at once without a branch (the merge sort's compares mispredict half the time). A group with a NaN,
   * which compares equal to everything there, is the merge sort's.
   */
  template <std::size_t N>
  static std::array<int, N> sorted(const float* xb) noexcept {
    using F = fbatch<A>;
    constexpr std::size_t G = lanes<A>;
    static_assert(N % G == 0);
    F v[N / G], rank[N / G];
    const F one(1.0f), lane = lane_map<A>([](int i) { return static_cast<float>(i); });
    auto nan = xsimd::batch_bool<float, A>(false);
    for (std::size_t c = 0; c < N / G; ++c) {
      v[c] = F::load_unaligned(xb + G * c);
      rank[c] = F(0.0f);
      nan = nan || xsimd::isnan(v[c]);
    }
    if (xsimd::any(nan)) return scalar::detail::iq::sorted_order<N>(xb);
    for (std::size_t j = 0; j < N; ++j) {
      const F xj(xb[j]), before(static_cast<float>(j));
      for (std::size_t c = 0; c < N / G; ++c) {
        const auto goes_after = (xj < v[c]) || ((xj == v[c]) && (before < lane + F(static_cast<float>(G * c))));
        rank[c] = xsimd::select(goes_after, rank[c] + one, rank[c]);
      }
    }
    alignas(64) float r[N];
    for (std::size_t c = 0; c < N / G; ++c) rank[c].store_aligned(r + G * c);
    std::array<int, N> order{};
    for (std::size_t i = 0; i < N; ++i) order[static_cast<std::size_t>(r[i])] = static_cast<int>(i);
    return order;
  }

  /// iq1_m's best split (`scalar::detail::iq::iq1_searches::split_m`), lanes<A> consecutive i2 at once as in `split`.
  static scalar::detail::iq::iq1_m_split split_m(const scalar::detail::iq::iq1_m_sums& s, float max) noexcept {
    namespace iq = scalar::detail::iq;
    using F = fbatch<A>;
    constexpr std::size_t G = lanes<A>;
    static_assert(G <= 16);
    const iq::iq1_m_terms t = iq::iq1_m_terms_of(s);
    const F zero(0.0f), lane = lane_map<A>([](int i) { return static_cast<float>(i); });
    const F c12p(t.c12p), c12m(t.c12m);
    iq::iq1_m_split r{max, -1, -1, -1};
    float best_score = -FLT_MAX;
    for (std::size_t i1 = 0; i1 <= 16; ++i1) {
      const iq::iq1_m_row a = t.row(s, i1);
      for (std::size_t i2 = i1; i2 <= 16; i2 += G) {
        F px[2], mx[2], p2[2], m2[2];
        for (std::size_t h = 0; h < 2; ++h) {
          const F sx12 = F::load_unaligned(s.x[h] + i2) + F(a.x1[h]);
          const F w2 = F::load_unaligned(s.w[h] + i2);
          px[h] = F(t.qx_p[h]) - sx12;
          mx[h] = F(t.qx_m[h]) - sx12;
          p2[h] = mul_rounded<A>(c12p, w2) + F(a.a_p[h]);
          m2[h] = mul_rounded<A>(c12m, w2) + F(a.a_m[h]);
        }
        const F qx[4] = {px[0] + px[1], px[0] + mx[1], mx[0] + px[1], mx[0] + mx[1]};
        const F q2[4] = {p2[0] + p2[1], p2[0] + m2[1], m2[0] + p2[1], m2[0] + m2[1]};
        // as in `split`: the candidates that beat the best before this batch, replayed in ggml's order
        // (split point, then shift choice) against the best so far
        const F best(best_score);
        const auto live = lane < F(static_cast<float>(17 - static_cast<int>(i2)));  // lanes i2 + j <= 16
        std::uint32_t beats[4], any = 0;
        for (std::size_t k = 0; k < 4; ++k) {
          beats[k] = lane_bits<A>((q2[k] > zero) & (qx[k] * qx[k] > best * q2[k]) & live);
          any |= beats[k];
        }
        if (any == 0) continue;
        // each candidate's scale and score divided in lanes: the replay's chain is a product and a compare
        alignas(64) float sqx[4][G], sq2[4][G], sscale[4][G], sscore[4][G];
        for (std::size_t k = 0; k < 4; ++k) {
          const F scale = div<A>(qx[k], q2[k]);
          qx[k].store_aligned(sqx[k]);
          q2[k].store_aligned(sq2[k]);
          scale.store_aligned(sscale[k]);
          (scale * qx[k]).store_aligned(sscore[k]);
        }
        for (; any != 0; any &= any - 1) {
          const int j = std::countr_zero(any);
          const auto uj = static_cast<std::size_t>(j);
          for (std::size_t k = 0; k < 4; ++k) {
            const float sumqx = sqx[k][uj], sumq2 = sq2[k][uj];
            if ((beats[k] >> j & 1u) != 0 && sumqx * sumqx > best_score * sumq2) {
              r.scale = sscale[k][uj];
              best_score = sscore[k][uj];
              r.i1 = static_cast<int>(i1);
              r.i2 = static_cast<int>(i2) + j;
              r.k = static_cast<int>(k);
            }
          }
        }
      }
    }
    return r;
  }

  /// `scalar::detail::iq::iq1_best_neighbour` as `neighbour_lanes` does best_neighbour: levels 2 l + 1
  /// stand for xg[l].
  static int neighbour(const scalar::detail::iq::iq1_search_t& s, std::int32_t entry, const float* xval,
                       const float* weight, float scale, const float* xg, std::int8_t* L) noexcept {
    using F = fbatch<A>;
    const F g0(xg[0]), g1(xg[1]), g2(xg[2]);
    return nearest_listed<A>(s, entry, xval, weight, scale, L, [&](const F& q) {
      return xsimd::select(q == F(1.0f), g0, xsimd::select(q == F(3.0f), g1, g2));
    });
  }
};

}  // namespace detail

/// iq1_s rows: `scalar::quantize_iq1_s`'s bytes, the split searches in lanes.
template <class A>
inline errc quantize_iq1_s(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  return scalar::quantize_iq1_s_with(src, dst, n_per_row, importance, detail::iq1_searches_lanes<A>{});
}

/// iq1_m rows: `scalar::quantize_iq1_m`'s bytes, the split and neighbour searches in lanes.
template <class A>
inline errc quantize_iq1_m(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  return scalar::quantize_iq1_m_with(src, dst, n_per_row, importance, detail::iq1_searches_lanes<A>{});
}

/// iq2_xxs rows: `scalar::quantize_iq2_xxs`'s bytes, the neighbour searches in lanes.
template <class A>
inline errc quantize_iq2_xxs(const float* src, std::byte* dst, std::size_t n_per_row,
                             const float* importance) noexcept {
  return scalar::quantize_iq2_xxs_with(src, dst, n_per_row, importance, detail::neighbour_lanes<A>{});
}

/// iq2_xs rows: `scalar::quantize_iq2_xs`'s bytes, the neighbour searches in lanes.
template <class A>
inline errc quantize_iq2_xs(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  return scalar::quantize_iq2_xs_with(src, dst, n_per_row, importance, detail::neighbour_lanes<A>{});
}

/// iq2_s rows: `scalar::quantize_iq2_s`'s bytes, the neighbour searches in lanes.
template <class A>
inline errc quantize_iq2_s(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  return scalar::quantize_iq2_s_with(src, dst, n_per_row, importance, detail::neighbour_lanes<A>{});
}

/// iq3_xxs rows: `scalar::quantize_iq3_xxs`'s bytes, the neighbour searches in lanes.
template <class A>
inline errc quantize_iq3_xxs(const float* src, std::byte* dst, std::size_t n_per_row,
                             const float* importance) noexcept {
  return scalar::quantize_iq3_xxs_with(src, dst, n_per_row, importance, detail::neighbour_lanes<A>{});
}

/// iq3_s rows: `scalar::quantize_iq3_s`'s bytes, the neighbour searches in lanes.
template <class A>
inline errc quantize_iq3_s(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  return scalar::quantize_iq3_s_with(src, dst, n_per_row, importance, detail::neighbour_lanes<A>{});
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_IQ_GRID_QUANTIZE_SIMD_HPP
