#ifndef GGUF_KERNELS_LEGACY_QUANTIZE_SIMD_HPP
#define GGUF_KERNELS_LEGACY_QUANTIZE_SIMD_HPP

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/legacy/quantize.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/simd/quantize_common.hpp"
#include "gguf/kernels/simd/quantize_search.hpp"
#include "gguf/result.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the legacy quantizers (legacy/quantize.hpp): q8_0, q4_0, q4_1, q5_0, q5_1 (without
// importance weights one pass of independent lanes; with them ggml's scale search, one block a lane:
// simd/quantize_search.hpp), generic over the xsimd Arch, each the bytes of its scalar twin for every
// input.
// They keep ggml's order of float operations; a product is never followed by an add or a subtract of
// itself, so no -ffp-contract setting can fuse one into an FMA. Rows: lanes<A> weights at a time, the
// rest through the scalar twin.

namespace detail {

/**
 * A legacy block's 32 levels (int32, `vectors` batches) as ggml packs them: weight j in the low nibble
 * and weight j + 16 in the high nibble of byte j at `qs`, and for 5 bits each level's fifth bit, bit j
 * of the word at `qh`.
 */
template <class A, int Bits, std::size_t N>
inline void pack_levels(const ibatch<A> (&q)[N], std::byte* qs, std::byte* qh) noexcept {
  for (std::size_t k = 0; k < N / 2; ++k) {
    store_low_bytes<A>(qs + k * lanes<A>, (q[k] & ibatch<A>(0xF)) | ((q[k + N / 2] & ibatch<A>(0xF)) << 4));
  }
  if constexpr (Bits == 5) {
    std::uint32_t bits = 0;
    for (std::size_t k = 0; k < N; ++k)
      bits |= lane_bits<A>((q[k] & ibatch<A>(0x10)) != ibatch<A>(0)) << (k * lanes<A>);
    ::gguf::detail::store_le<std::uint32_t>(qh, bits);
  }
}

/**
 * The lane-wise minima and maxima of each of `n` (at most lanes<A>) blocks of 32 weights at `src`, for
 * `reduce_each` (the blocks past `n` as zeros); returns the largest |x| as an integer, lane-wise (a NaN's
 * or an infinity's is at least inf's bits).
 */
template <class A>
inline ibatch<A> block_extremes(const float* src, std::size_t n, fbatch<A> (&lo)[lanes<A>],
                                fbatch<A> (&hi)[lanes<A>]) noexcept {
  constexpr std::size_t vectors = 32 / lanes<A>;
  ibatch<A> magnitude(0);
  for (std::size_t g = 0; g < lanes<A>; ++g) {
    if (g >= n) {
      lo[g] = hi[g] = fbatch<A>(0.0f);
      continue;
    }
    fbatch<A> x[vectors];
    load_block<A>(src + 32 * g, x);
    lo[g] = x[0];
    hi[g] = x[0];
    magnitude = xsimd::max(magnitude, as_int<A>(x[0]) & ibatch<A>(0x7FFFFFFF));
    for (std::size_t k = 1; k < vectors; ++k) {
      lo[g] = xsimd::min(lo[g], x[k]);
      hi[g] = xsimd::max(hi[g], x[k]);
      magnitude = xsimd::max(magnitude, as_int<A>(x[k]) & ibatch<A>(0x7FFFFFFF));
    }
  }
  return magnitude;
}

/**
 * q4_0 / q5_0 blocks without importance weights (`scalar::detail::round_symmetric`): max = the first
 * weight of the largest magnitude, d = max / -2^(Bits-1), q = min(top, trunc(x * id + 2^(Bits-1) + 0.5)).
 * lanes<A> blocks at a time: their extremes reduced in one transposing tree, their scales divided and
 * converted to halves in one batch. The larger of a block's extremes is its max, unless it holds both
 * +m and -m: then the first of them, found in that block alone. A block with a NaN or an infinity, or
 * whose 1 / d overflows, goes through the scalar twin (there ggml's comparisons are order-dependent and
 * its casts of NaN the x86 instruction's); for the others every level lies in 0 ... 2^Bits, where a
 * truncating conversion is the same on every instruction set.
 */
template <class A, int Bits, class B>
inline void round_symmetric(const float* src, std::byte* dst, std::size_t n_blocks) noexcept {
  constexpr std::size_t vectors = 32 / lanes<A>, group = lanes<A>;
  constexpr int half = 1 << (Bits - 1), top = (1 << Bits) - 1;
  constexpr std::size_t qs_at = sizeof(B) - 16;
  constexpr auto reference = Bits == 4 ? scalar::quantize_q4_0 : scalar::quantize_q5_0;
  using F = fbatch<A>;
  using I = ibatch<A>;
  for (std::size_t first = 0; first < n_blocks; first += group) {
    const std::size_t n = n_blocks - first < group ? n_blocks - first : group;
    const float* in = src + 32 * first;
    std::byte* out = dst + sizeof(B) * first;
    if (first + 2 * group <= n_blocks) prefetch_read(in + 32 * group, 32 * group * sizeof(float));  // the next group
    F lo[group], hi[group];
    const I magnitude = block_extremes<A>(in, n, lo, hi);
    const F min = reduce_each<A, false>(lo), max = reduce_each<A, true>(hi), neg = negate<A>(min);
    const auto zero = xsimd::max(max, neg) == F(0.0f);  // ggml's max of an all-zero block stays +0
    alignas(64) float top_weight[group];
    xsimd::select(zero, F(0.0f), xsimd::select(neg > max, min, max)).store_aligned(top_weight);
    std::uint32_t special = 0;
    if (xsimd::any(magnitude >= I(0x7F800000))) {  // which blocks: their extremes may be anything
      for (std::size_t g = 0; g < n; ++g) {
        F x[vectors];
        load_block<A>(in + 32 * g, x);
        if (any_special<A>(x)) special |= 1u << g;
      }
    }
    // +m and -m in one block: the first of them
    for (std::uint32_t tie = lane_bits<A>(neg == max && !zero) & ~special; tie != 0; tie &= tie - 1) {
      const auto g = static_cast<std::size_t>(std::countr_zero(tie));
      if (g >= n) break;
      F x[vectors];
      load_block<A>(in + 32 * g, x);
      const float m = top_weight[g] < 0.0f ? -top_weight[g] : top_weight[g];
      std::uint32_t plus = 0, minus = 0;
      for (std::size_t k = 0; k < vectors; ++k) {
        plus |= lane_bits<A>(x[k] == F(m)) << (k * lanes<A>);
        minus |= lane_bits<A>(x[k] == F(-m)) << (k * lanes<A>);
      }
      top_weight[g] = (plus >> std::countr_zero(plus | minus)) & 1u ? m : -m;
    }
    const F d = div<A>(F::load_aligned(top_weight), F(static_cast<float>(-half)));
    const F id = xsimd::select(d == F(0.0f), F(0.0f), div<A>(F(1.0f), d));
    special |= lane_bits<A>(!(xsimd::abs(id) < F(3.0e38f)));  // d below 2^-128: x * id NaN or infinite
    alignas(64) float ids[group];
    alignas(64) std::int32_t halves[group];
    id.store_aligned(ids);
    f16_bits<A>(d).store_aligned(halves);
    const auto levels = [&](std::size_t g) GGUF_SIMD_INLINE_LAMBDA {
      F x[vectors];
      load_block<A>(in + 32 * g, x);
      ::gguf::detail::store_le<std::uint16_t>(out + sizeof(B) * g, static_cast<std::uint16_t>(halves[g]));
      I q[vectors];
      for (std::size_t k = 0; k < vectors; ++k) {
        F p = x[k] * F(ids[g]);
        opaque<A>(p);
        q[k] = xsimd::min(xsimd::batch_cast<std::int32_t>(p + F(static_cast<float>(half) + 0.5f)), I(top));
      }
      pack_levels<A, Bits>(q, out + sizeof(B) * g + qs_at, out + sizeof(B) * g + 2);
    };
    if (special == 0 && n == group) {  // nearly every group
      for (std::size_t g = 0; g < group; ++g) levels(g);
      continue;
    }
    for (std::size_t g = 0; g < n; ++g) {
      if ((special >> g) & 1u) {
        reference(in + 32 * g, out + sizeof(B) * g, 32, nullptr);
      } else {
        levels(g);
      }
    }
  }
}

/**
 * q4_1 / q5_1 blocks without importance weights (`scalar::detail::round_with_min`): d = (max - min) /
 * (2^Bits - 1), m = min, q = trunc((x - min) * id + 0.5). Through the scalar twin: a block with a NaN or
 * an infinity, an extreme that is zero (ggml keeps the first zero's sign: order matters), or a range
 * whose d or 1 / d overflows; the others' extremes are the same in any order, and their levels lie in
 * 0 ... 2^Bits - 1. lanes<A> blocks at a time: their extremes reduced in one transposing tree, their
 * scales divided and converted to halves in one batch, so a block's own work is its levels.
 */
template <class A, int Bits, class B>
inline void round_with_min(const float* src, std::byte* dst, std::size_t n_blocks) noexcept {
  constexpr std::size_t vectors = 32 / lanes<A>, group = lanes<A>;
  constexpr int top = (1 << Bits) - 1;
  constexpr std::size_t qs_at = sizeof(B) - 16;
  constexpr auto reference = Bits == 4 ? scalar::quantize_q4_1 : scalar::quantize_q5_1;
  using F = fbatch<A>;
  using I = ibatch<A>;
  for (std::size_t first = 0; first < n_blocks; first += group) {
    const std::size_t n = n_blocks - first < group ? n_blocks - first : group;
    const float* in = src + 32 * first;
    std::byte* out = dst + sizeof(B) * first;
    if (first + 2 * group <= n_blocks) prefetch_read(in + 32 * group, 32 * group * sizeof(float));  // the next group
    F lo[group], hi[group];
    const I magnitude = block_extremes<A>(in, n, lo, hi);
    const F min = reduce_each<A, false>(lo), max = reduce_each<A, true>(hi);
    const F d = div<A>(max - min, F(static_cast<float>(top)));
    const F id = xsimd::select(d == F(0.0f), F(0.0f), div<A>(F(1.0f), d));
    const F huge(3.0e38f);
    std::uint32_t special = lane_bits<A>(min == F(0.0f) || max == F(0.0f) || !(d < huge) || !(id < huge));
    if (xsimd::any(magnitude >= I(0x7F800000))) {  // which blocks: their extremes may be anything
      for (std::size_t g = 0; g < n; ++g) {
        F x[vectors];
        load_block<A>(in + 32 * g, x);
        if (any_special<A>(x)) special |= 1u << g;
      }
    }
    alignas(64) float mins[group], ids[group];
    alignas(64) std::int32_t halves[group];  // d's f16 bits, then min's: a block's first four bytes
    min.store_aligned(mins);
    id.store_aligned(ids);
    (f16_bits<A>(d) | (f16_bits<A>(min) << 16)).store_aligned(halves);
    for (std::size_t g = 0; g < n; ++g) {
      if ((special >> g) & 1u) {
        reference(in + 32 * g, out + sizeof(B) * g, 32, nullptr);
        continue;
      }
      F x[vectors];
      load_block<A>(in + 32 * g, x);
      std::byte* y = out + sizeof(B) * g;
      ::gguf::detail::store_le<std::uint32_t>(y, static_cast<std::uint32_t>(halves[g]));
      I q[vectors];
      for (std::size_t k = 0; k < vectors; ++k) {
        F p = (x[k] - F(mins[g])) * F(ids[g]);
        opaque<A>(p);
        q[k] = xsimd::batch_cast<std::int32_t>(p + F(0.5f));
        if constexpr (Bits == 4) q[k] = xsimd::min(q[k], I(top));  // q4_1's MIN(15, ...); q5_1 has none
      }
      pack_levels<A, Bits>(q, y + qs_at, y + 4);
    }
  }
}

/**
 * q4_0 / q5_0 rows with importance weights (`scalar::detail::search_symmetric`): make_qx_quants for
 * lanes<A> blocks at once, one block per lane, and their levels packed in lanes too (byte k of every
 * block in one batch), so only the finished bytes are moved back into their blocks.
 */
template <class A, int Bits, class B>
inline void search_symmetric(const float* x, std::byte* y, std::size_t n, const float* qw) noexcept {
  namespace q = scalar::detail;
  constexpr std::size_t G = lanes<A>;
  constexpr int nmax = 1 << (Bits - 1);
  using F = fbatch<A>;
  using I = ibatch<A>;
  const float sigma2 = q::row_sigma2(x, n);
  alignas(64) float weight[32 * G];
  alignas(64) float xt[32][G], wt[32][G];  // transposed: xt[i][j] is weight i of block j
  alignas(64) std::byte bytes[16][G];      // bytes[k][j]: byte k of block j's qs
  alignas(64) std::int32_t fifth[G];       // block j's fifth bits (q5_0), bit i weight i's
  alignas(64) float scales[G];
  const std::size_t nb = n / 32;
  for (std::size_t first = 0; first < nb; first += G) {
    const std::size_t count = nb - first < G ? nb - first : G;
    importance_weights<A>(qw + 32 * first, x + 32 * first, 32 * count, sigma2, weight);
    transpose_groups<A, 32>(x + 32 * first, count, xt);
    transpose_groups<A, 32>(weight, count, wt);
    const qx_search_result<A> c = qx_search<A, 32>(xt, wt, nmax);
    c.scale.store_aligned(scales);
    const auto level = [&](std::size_t i) { return c.level(F::load_aligned(xt[i]), nmax); };
    I high(0);
    for (std::size_t k = 0; k < 16; ++k) {
      const I lo = level(k), hi = level(k + 16);
      store_low_bytes<A>(bytes[k], (lo & I(0xF)) | ((hi & I(0xF)) << 4));
      if constexpr (Bits == 5) {
        high = high | (((lo >> 4) & I(1)) << static_cast<int>(k)) | (((hi >> 4) & I(1)) << static_cast<int>(k + 16));
      }
    }
    if constexpr (Bits == 5) high.store_aligned(fifth);
    for (std::size_t b = 0; b < count; ++b) {
      std::byte* out = y + sizeof(B) * (first + b);
      q::store_half(out, scales[b]);
      if constexpr (Bits == 5) q::store_le<std::uint32_t>(out + 2, static_cast<std::uint32_t>(fifth[b]));
      std::byte* qs = out + sizeof(B) - 16;
      for (std::size_t k = 0; k < 16; ++k) qs[k] = bytes[k][b];
    }
  }
}

/**
 * q4_1 / q5_1 rows with importance weights (`scalar::detail::search_with_min`): make_qkx_quants (rmin
 * -0.9, rdelta 0.05, 36 steps, squared error) for lanes<A> blocks at once, one block per lane.
 */
template <class A, int Bits, class B>
inline void search_with_min(const float* x, std::byte* y, std::size_t n, const float* qw) noexcept {
  namespace q = scalar::detail;
  constexpr std::size_t G = lanes<A>;
  const float sigma2 = q::row_sigma2(x, n);
  alignas(64) float weight[32 * G];
  std::uint8_t L[32 * G];
  float scale[G], min[G];
  const std::size_t nb = n / 32;
  for (std::size_t first = 0; first < nb; first += G) {
    const std::size_t count = nb - first < G ? nb - first : G;
    importance_weights<A>(qw + 32 * first, x + 32 * first, 32 * count, sigma2, weight);
    make_qkx_quants_lanes<A, 32>(x + 32 * first, weight, count, (1 << Bits) - 1, -0.9f, 0.05f, 36, L, scale, min);
    for (std::size_t b = 0; b < count; ++b) {
      std::byte* out = y + sizeof(B) * (first + b);
      q::store_half(out, scale[b]);
      q::store_half(out + 2, -min[b]);  // min[b] is ggml's the_min, the negated min
      int levels[32];
      for (std::size_t j = 0; j < 32; ++j) levels[j] = L[32 * b + j];
      std::byte* qs = out + sizeof(B) - 16;
      for (int j = 0; j < 16; ++j) q::store_le<std::uint8_t>(qs + j, q::nibbles(levels[j] & 0xF, levels[j + 16] & 0xF));
      if constexpr (Bits == 5) q::store_le<std::uint32_t>(out + 4, q::fifth_bits(levels));
    }
  }
}

/// A legacy type's rows: each weight in a lane without importance weights, each block with them.
template <class A, int Bits, bool WithMin, class B>
inline errc quantize_legacy(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  if constexpr (WithMin) {
    if (importance) {
      search_with_min<A, Bits, B>(src, dst, n_per_row, importance);
    } else {
      round_with_min<A, Bits, B>(src, dst, n_per_row / 32);
    }
  } else {
    if (importance) {
      search_symmetric<A, Bits, B>(src, dst, n_per_row, importance);
    } else {
      round_symmetric<A, Bits, B>(src, dst, n_per_row / 32);
    }
  }
  return errc::success;
}

}  // namespace detail

/// q4_0 rows (`scalar::quantize_q4_0`): each weight in a lane without importance weights, each block with them.
template <class A>
inline errc quantize_q4_0(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  return detail::quantize_legacy<A, 4, false, blocks::q4_0>(src, dst, n_per_row, importance);
}

/// q5_0 rows (`scalar::quantize_q5_0`): each weight in a lane without importance weights, each block with them.
template <class A>
inline errc quantize_q5_0(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  return detail::quantize_legacy<A, 5, false, blocks::q5_0>(src, dst, n_per_row, importance);
}

/// q4_1 rows (`scalar::quantize_q4_1`): each weight in a lane without importance weights, each block with them.
template <class A>
inline errc quantize_q4_1(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  return detail::quantize_legacy<A, 4, true, blocks::q4_1>(src, dst, n_per_row, importance);
}

/// q5_1 rows (`scalar::quantize_q5_1`): each weight in a lane without importance weights, each block with them.
template <class A>
inline errc quantize_q5_1(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  return detail::quantize_legacy<A, 5, true, blocks::q5_1>(src, dst, n_per_row, importance);
}

/**
 * q8_0 rows (`scalar::quantize_q8_0`): per block of 32, amax = max |x|, d = amax / 127, q = round(x / d)
 * half away from zero. lanes<A> blocks at a time: their maxima reduced in one transposing tree, their
 * scales divided and converted to halves in one batch. A block with a NaN or an infinity goes through
 * the scalar twin (there ggml's MAX is order-dependent and its casts of NaN are the x86 instruction's),
 * as does one whose 1 / d overflows; for the others the maximum of the lanes is the maximum in any
 * order, and the rounding is decided without subtracting from the product: |p| >= trunc(|p|) + 0.5,
 * both exact.
 */
template <class A>
inline errc quantize_q8_0(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  constexpr std::size_t per_block = 32, vectors = per_block / lanes<A>, group = lanes<A>;
  static_assert(per_block % lanes<A> == 0);
  using F = fbatch<A>;
  using I = ibatch<A>;
  const std::size_t n_blocks = n_per_row / per_block;
  for (std::size_t first = 0; first < n_blocks; first += group) {
    const std::size_t n = n_blocks - first < group ? n_blocks - first : group;
    const float* in = src + per_block * first;
    std::byte* out = dst + sizeof(blocks::q8_0) * first;
    if (first + 2 * group <= n_blocks) prefetch_read(in + per_block * group, per_block * group * sizeof(float));
    F amax[group];
    I magnitude(0);  // the largest |x| as an integer: a NaN's or an infinity's is at least inf's
    for (std::size_t g = 0; g < group; ++g) {
      amax[g] = F(0.0f);
      for (std::size_t k = 0; g < n && k < vectors; ++k) {
        const F x = F::load_unaligned(in + per_block * g + k * lanes<A>);
        amax[g] = xsimd::max(amax[g], xsimd::abs(x));
        magnitude = xsimd::max(magnitude, as_int<A>(x) & I(0x7FFFFFFF));
      }
    }
    const F d = div<A>(reduce_each<A, true>(amax), F(127.0f));
    const F id = xsimd::select(d == F(0.0f), F(0.0f), div<A>(F(1.0f), d));
    std::uint32_t special = lane_bits<A>(!(id < F(3.0e38f)));  // d below 2^-128: x * id NaN or infinite
    if (xsimd::any(magnitude >= I(0x7F800000))) {
      for (std::size_t g = 0; g < n; ++g) {
        F x[vectors];
        detail::load_block<A>(in + per_block * g, x);
        if (detail::any_special<A>(x)) special |= 1u << g;
      }
    }
    alignas(64) float ids[group];
    alignas(64) std::int32_t halves[group];
    id.store_aligned(ids);
    detail::f16_bits<A>(d).store_aligned(halves);
    for (std::size_t g = 0; g < n; ++g) {
      std::byte* y = out + sizeof(blocks::q8_0) * g;
      if ((special >> g) & 1u) {
        scalar::quantize_q8_0(in + per_block * g, y, per_block, importance);
        continue;
      }
      ::gguf::detail::store_le<std::uint16_t>(y, static_cast<std::uint16_t>(halves[g]));
      for (std::size_t k = 0; k < vectors; ++k) {
        const F p = F::load_unaligned(in + per_block * g + k * lanes<A>) * F(ids[g]);
        const F a = xsimd::abs(p);
        const F t = to_float<A>(xsimd::batch_cast<std::int32_t>(a));  // |p| <= 127.00002: exact trunc
        const F r = t + xsimd::select(a >= t + F(0.5f), F(1.0f), F(0.0f));
        const I m = xsimd::batch_cast<std::int32_t>(r);
        const I q = select_int<A>(as_int<A>(p) < I(0), I(0) - m, m);
        store_low_bytes<A>(y + 2 + k * lanes<A>, q & I(0xFF));
      }
    }
  }
  return errc::success;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_LEGACY_QUANTIZE_SIMD_HPP
