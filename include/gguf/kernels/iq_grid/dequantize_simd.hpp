#ifndef GGUF_KERNELS_IQ_GRID_DEQUANTIZE_SIMD_HPP
#define GGUF_KERNELS_IQ_GRID_DEQUANTIZE_SIMD_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/iq_grid/dequantize.hpp"
#include "gguf/kernels/iq_grid/code_rows_simd.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/derived_tables.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the grid types of iq_grid/dequantize.hpp: iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s,
// iq1_m. Each group of 8 weights is a row of a grid (8 bytes: 8 magnitudes, or iq1's int8 values in
// {-1, 0, 1}) picked by an index of 8 to 11 bits, with a sign byte (iq2/iq3) or a delta shift (iq1), under
// a scale the block computes per 16 or 32 weights exactly as the scalar kernel does.
//
// The crux is the grid lookup: 256 to 2048 rows of 8 bytes (2 to 16 KiB) fit no register. A gather costs
// more uops and latency than the scalar loads it replaces, which issue several a cycle and hit L1; with
// scalar loads the kernels are bound by instruction count, the indices' integer work included.
// So on AVX-512 every grid type runs by code rows (iq_grid/code_rows_simd.hpp): each grid byte is one of at most 8
// levels, so a row becomes 4-bit codes looked up by a 16-entry permute in a table of the levels times
// the scale, signs included, the indices, signs and scales built with vector operations a block ahead,
// and the 4-weight rows of iq3_xxs and iq3_s looked up in registers (vpermi2w).
// On AVX2 the code rows are slower than these grid-row kernels (8-entry permutes, the signs flipped after
// them, the lookups made by scalar code), so AVX2 keeps the kernels below.
// The grid-row kernels, for AVX2, SSE and NEON:
//  - for the grids small enough to stay in L1 beside the output stream (iq2_xxs 8 KiB, iq2_xs 16 KiB,
//    iq3_xxs 4 KiB as floats), the rows are kept as floats (tables::float_rows) and so are the signs
//    (sign7_rows: the +-1.0f factors per 7-bit field): per 8 weights one multiply by the row and one by
//    the signs, both straight from memory, in ggml's order (db * g * s), each index scaled by the shift
//    that extracts it (row_of). For iq2_s (32 KiB as floats) and iq3_s float rows miss L1 (and their
//    split indices cost integer work), and iq1's grid would be 64 KiB: these widen the byte rows in
//    registers, two rows per 16 weights (ops.hpp's bytes16), the signs one xor into the sign bits
//    (flip_signs).
// On AVX-512 the float rows are multiplied in 256-bit halves (a row is 8 floats); half outputs join two
// halves first, as one 16-lane conversion costs less than two of 8. SSE and NEON have no gather anyway
// and run the same code four lanes at a time.
//  - iq2/iq3 by bytes: the scalar kernel computes db * float(g) * (+-1.0f); times -1 only flips the sign
//    bit, so the xor gives its bits (a NaN's sign may differ, which no comparison of NaNs sees).
//  - iq1: dl * (float(g) + delta), the delta and its sign per group folded into one vector added to the
//    widened bytes (iq1_shifts: one of 4 patterns per two groups), then the multiply, as the scalar
//    kernel orders them (an add then a multiply: nothing an FMA could fuse).

namespace detail {

inline constexpr std::uint64_t top_bits = 0x8080808080808080u;

/**
 * 16 weights of two iq2/iq3 groups: byte j of `row0` (j < 8) and of `row1` (j >= 8) times `db`, the sign
 * flipped where bit j of `signs` is set.
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_signed16(Out* y, const fbatch<A>& db, std::uint64_t row0, std::uint64_t row1,
                                   std::uint32_t signs) noexcept {
  constexpr std::size_t L = lanes<A>;
  ibatch<A> g[16 / L];
  bytes16<A>(row0, row1, g);
  for (std::size_t k = 0; k < 16 / L; ++k) {
    put<A>(y + k * L, flip_signs<A>(to_float<A>(g[k]) * db, signs >> (k * L)));
  }
}

/**
 * The shifts added to the grid values of two iq1 groups: for each of the 4 sign patterns s (bit r set:
 * group r's delta negated) the vectors of lanes 0-15, each lane (+-delta) - 128. The grid bytes are
 * widened as g + 128 (unsigned), and float(g + 128) + ((+-delta) - 128) is float(g) + (+-delta) exactly:
 * every value here is a multiple of 2^-3 below 2^8, far inside a float's 24 bits, so both sums are exact
 * and equal. One add then does the delta, its sign and the re-centring (no subtract, no sign flip).
 */
template <class A>
struct iq1_shifts {
  fbatch<A> v[4][16 / lanes<A>];  ///< v[s][k]: lanes k * lanes<A> ... of pattern s

  explicit iq1_shifts(float delta) noexcept {
    constexpr std::size_t L = lanes<A>;
    for (unsigned pattern = 0; pattern < 4; ++pattern) {
      for (std::size_t k = 0; k < 16 / L; ++k) {
        alignas(64) float lane[L];
        for (std::size_t j = 0; j < L; ++j) {
          const bool negative = ((pattern >> ((k * L + j) / 8)) & 1u) != 0;
          lane[j] = (negative ? -delta : delta) - 128.0f;
        }
        v[pattern][k] = fbatch<A>::load_aligned(lane);
      }
    }
  }
};

/**
 * 16 weights of two iq1 groups: dl * (float(g) + delta) for the int8 values g of `row0` (weights 0-7) and
 * `row1` (8-15), `shift` the pattern of their deltas' signs (iq1_shifts).
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_iq1_16(Out* y, const fbatch<A>& dl, std::uint64_t row0, std::uint64_t row1,
                                 const fbatch<A>* shift) noexcept {
  constexpr std::size_t L = lanes<A>;
  ibatch<A> g[16 / L];
  bytes16<A>(row0 ^ top_bits, row1 ^ top_bits, g);  // int8 g + 128, zero-extended: no carry between bytes
  for (std::size_t k = 0; k < 16 / L; ++k) put<A>(y + k * L, (to_float<A>(g[k]) + shift[k]) * dl);
}

/**
 * 16 weights made as two row_arch<A> batches, stored as `Out`. On AVX-512 half outputs join the halves
 * first, since one 16-lane conversion costs less than two of 8.
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_row_pair(Out* y, const fbatch<row_arch<A>>& lo, const fbatch<row_arch<A>>& hi) noexcept {
  if constexpr (is_avx512<A> && !std::is_same_v<Out, float>) {
    put<A>(y, concat_rows<A>(lo, hi));
  } else {
    put<row_arch<A>>(y, lo);
    put<row_arch<A>>(y + 8, hi);
  }
}

/**
 * Row `(word >> Shift) & Mask` of float_rows `t` (W = 8 or 4 floats per row), the index times W made by
 * the shift itself: one shift and one mask, and the address a scaled index. Two integer instructions
 * where the plain expression costs three or four; this integer work, not the vector work, is what
 * bounds these kernels.
 */
template <unsigned Shift, std::uint32_t Mask, std::size_t N, std::size_t W>
GGUF_SIMD_INLINE const float* row_of(const tables::float_rows<N, W>& t, std::uint32_t word) noexcept {
  constexpr unsigned up = W == 8 ? 3 : 2;
  static_assert(W == (1u << up));
  std::uint32_t i;
  if constexpr (Shift >= up) {
    i = (word >> (Shift - up)) & (Mask << up);
  } else {
    i = (word << (up - Shift)) & (Mask << up);
  }
  return t.v + i;
}

/**
 * 16 weights of the iq2/iq3 types from float rows of 4 values (a row of 8 is two): r[0] r[1] under the
 * sign factors s0, r[2] r[3] under s1, each weight db * row[j] * sign[j] in ggml's order, both operands
 * straight from memory. On 8 lanes each pair of 4-float rows is joined in one register first.
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_rows4x4(Out* y, const fbatch<row_arch<A>>& db, const float* const* r, const float* s0,
                                  const float* s1) noexcept {
  using R = row_arch<A>;
  if constexpr (lanes<R> == 8) {
    put_row_pair<A>(y, load_row_pair<R>(r[0], r[1]) * db * fbatch<R>::load_aligned(s0),
                    load_row_pair<R>(r[2], r[3]) * db * fbatch<R>::load_aligned(s1));
  } else {
    static_assert(lanes<R> == 4);
    for (int k = 0; k < 4; ++k) {
      put<R>(y + 4 * k, fbatch<R>::load_aligned(r[k]) * db * fbatch<R>::load_aligned((k < 2 ? s0 : s1) + 4 * (k % 2)));
    }
  }
}

/** 16 weights of the iq2 types: two rows of 8 floats (row_of) under their sign factors, as put_rows4x4. */
template <class A, class Out>
GGUF_SIMD_INLINE void put_rows8x2(Out* y, const fbatch<row_arch<A>>& db, const float* row0, const float* sign0,
                                  const float* row1, const float* sign1) noexcept {
  using R = row_arch<A>;
  if constexpr (lanes<R> == 8) {  // a row is one load
    put_row_pair<A>(y, fbatch<R>::load_aligned(row0) * db * fbatch<R>::load_aligned(sign0),
                    fbatch<R>::load_aligned(row1) * db * fbatch<R>::load_aligned(sign1));
  } else {
    const float* halves[4] = {row0, row0 + 4, row1, row1 + 4};
    put_rows4x4<A>(y, db, halves, sign0, sign1);
  }
}

}  // namespace detail

/// iq2_xxs: per 32 weights four 8-bit grid indices, then four 7-bit sign fields and a 4-bit sub-scale.
template <class A, class Out = float>
void dequant_iq2_xxs(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq2_xxs;
  if constexpr (grid_codes<A>) {
    dequant_iq2_xxs_codes<A>(src, dst, nb);
    return;
  }
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    for (int ib = 0; ib < 8; ++ib, qs += 8) {
      const auto aux = load_le<std::uint32_t>(qs + 4);
      const fbatch<row_arch<A>> db(scalar::detail::half_step_scale(d, aux >> 28, 0.25f));
      const auto idx = load_le<std::uint32_t>(qs);
      unroll<2>([&](auto p) GGUF_SIMD_INLINE_LAMBDA {
        detail::put_rows8x2<A>(dst + 16 * p, db, detail::row_of<16 * p, 255>(tables::iq2xxs_rows, idx),
                               detail::row_of<14 * p, 127>(tables::sign7_rows, aux),
                               detail::row_of<16 * p + 8, 255>(tables::iq2xxs_rows, idx),
                               detail::row_of<14 * p + 7, 127>(tables::sign7_rows, aux));
      });
      dst += 32;
    }
  }
}

/// iq2_xs: per 8 weights a 16-bit word (9-bit grid index, 7-bit sign field); a 4-bit sub-scale per 16.
template <class A, class Out = float>
void dequant_iq2_xs(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq2_xs;
  if constexpr (grid_codes<A>) {
    dequant_iq2_xs_codes<A>(src, dst, nb);
    return;
  }
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* scales = src + offsetof(B, scales);
    for (int ib = 0; ib < 8; ++ib) {
      const unsigned sc = load_le<std::uint8_t>(scales + ib);
      unroll<2>([&](auto p) GGUF_SIMD_INLINE_LAMBDA {
        const fbatch<row_arch<A>> db(scalar::detail::half_step_scale(d, (sc >> (4 * p)) & 0xFu, 0.25f));
        const auto w = load_le<std::uint32_t>(qs);  // two groups' words
        detail::put_rows8x2<A>(
            dst, db, detail::row_of<0, 511>(tables::iq2xs_rows, w), detail::row_of<9, 127>(tables::sign7_rows, w),
            detail::row_of<16, 511>(tables::iq2xs_rows, w), detail::row_of<25, 127>(tables::sign7_rows, w));
        qs += 4;
        dst += 16;
      });
    }
  }
}

/// iq2_s: 10-bit grid indices (a byte of qs, 2 bits of qh), all 8 signs stored; a 4-bit sub-scale per 16.
template <class A, class Out = float>
void dequant_iq2_s(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq2_s;
  if constexpr (grid_codes<A>) {
    dequant_iq2_s_codes<A>(src, dst, nb);
    return;
  }
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* signs = qs + 32;
    const std::byte* qh = src + offsetof(B, qh);
    const std::byte* scales = src + offsetof(B, scales);
    for (int ib = 0; ib < 8; ++ib) {
      const unsigned sc = load_le<std::uint8_t>(scales + ib);
      const unsigned h = load_le<std::uint8_t>(qh + ib);
      for (int p = 0; p < 2; ++p, dst += 16) {
        const fbatch<A> db(scalar::detail::half_step_scale(d, (sc >> (4 * p)) & 0xFu, 0.25f));
        const std::byte* q = qs + 4 * ib + 2 * p;
        const unsigned idx0 = load_le<std::uint8_t>(q) | (((h >> (4 * p)) & 3u) << 8);
        const unsigned idx1 = load_le<std::uint8_t>(q + 1) | (((h >> (4 * p + 2)) & 3u) << 8);
        detail::put_signed16<A>(dst, db, tables::iq2s_grid[idx0], tables::iq2s_grid[idx1],
                                load_le<std::uint16_t>(signs + 4 * ib + 2 * p));
      }
    }
  }
}

/// iq3_xxs: 8-bit indices of 4-value rows, two per group; sign fields and sub-scale as iq2_xxs (step 0.5).
template <class A, class Out = float>
void dequant_iq3_xxs(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq3_xxs;
  if constexpr (grid_codes<A>) {
    dequant_iq3_xxs_codes<A>(src, dst, nb);
    return;
  }
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* scales_and_signs = qs + 64;
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      const auto aux = load_le<std::uint32_t>(scales_and_signs + 4 * ib);
      const fbatch<row_arch<A>> db(scalar::detail::half_step_scale(d, aux >> 28, 0.5f));
      const std::uint32_t q[2] = {load_le<std::uint32_t>(qs + 8 * ib), load_le<std::uint32_t>(qs + 8 * ib + 4)};
      unroll<2>([&](auto p) GGUF_SIMD_INLINE_LAMBDA {  // groups 2p and 2p + 1: the four index bytes of q[p]
        const float* rows[4] = {
            detail::row_of<0, 255>(tables::iq3xxs_rows, q[p]), detail::row_of<8, 255>(tables::iq3xxs_rows, q[p]),
            detail::row_of<16, 255>(tables::iq3xxs_rows, q[p]), detail::row_of<24, 255>(tables::iq3xxs_rows, q[p])};
        detail::put_rows4x4<A>(dst + 16 * p, db, rows, detail::row_of<14 * p, 127>(tables::sign7_rows, aux),
                               detail::row_of<14 * p + 7, 127>(tables::sign7_rows, aux));
      });
    }
  }
}

/// iq3_s: 9-bit indices of 4-value rows (a byte of qs, a bit of qh), 8 stored signs; an odd sub-scale per 32.
template <class A, class Out = float>
void dequant_iq3_s(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq3_s;
  if constexpr (grid_codes<A>) {
    dequant_iq3_s_codes<A>(src, dst, nb);
    return;
  }
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* qh = src + offsetof(B, qh);
    const std::byte* signs = src + offsetof(B, signs);
    const std::byte* scales = src + offsetof(B, scales);
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      const unsigned s = (load_le<std::uint8_t>(scales + ib / 2) >> (4 * (ib % 2))) & 0xFu;
      const fbatch<A> db(d * static_cast<float>(1 + 2 * s));
      const unsigned h = load_le<std::uint8_t>(qh + ib);
      for (int p = 0; p < 2; ++p) {
        const std::byte* q = qs + 8 * ib + 4 * p;
        const auto row = [&](int k) GGUF_SIMD_INLINE_LAMBDA {
          return tables::iq3s_grid[load_le<std::uint8_t>(q + k) | (((h >> (4 * p + k)) & 1u) << 8)];
        };
        detail::put_signed16<A>(dst + 16 * p, db, scalar::detail::grid_row_pair(row(0), row(1)),
                                scalar::detail::grid_row_pair(row(2), row(3)),
                                load_le<std::uint16_t>(signs + 4 * ib + 2 * p));
      }
    }
  }
}

/// iq1_s: 11-bit indices (a byte of qs, 3 bits of qh); per 32 weights an odd sub-scale and the delta's sign.
template <class A, class Out = float>
void dequant_iq1_s(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq1_s;
  if constexpr (grid_codes<A>) {
    dequant_iq1_s_codes<A>(src, dst, nb);
    return;
  }
  const detail::iq1_shifts<A> shifts(tables::iq1s_delta);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* qh = src + offsetof(B, qh);
    for (int ib = 0; ib < 8; ++ib, qs += 4, dst += 32) {
      const unsigned h = load_le<std::uint16_t>(qh + 2 * ib);
      const fbatch<A> dl(d * static_cast<float>(2 * ((h >> 12) & 7u) + 1));
      const fbatch<A>* shift = shifts.v[(h & 0x8000u) != 0 ? 3 : 0];
      for (int p = 0; p < 2; ++p) {
        const auto row = [&](int l) GGUF_SIMD_INLINE_LAMBDA {
          return tables::iq1s_grid[load_le<std::uint8_t>(qs + l) | (((h >> (3 * l)) & 7u) << 8)];
        };
        detail::put_iq1_16<A>(dst + 16 * p, dl, row(2 * p), row(2 * p + 1), shift);
      }
    }
  }
}

/// iq1_m: the block scale spread over the sub-scale words; per 8 weights a qh nibble (3 index bits, the
/// delta's sign); an odd sub-scale per 16.
template <class A, class Out = float>
void dequant_iq1_m(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq1_m;
  if constexpr (grid_codes<A>) {
    dequant_iq1_m_codes<A>(src, dst, nb);
    return;
  }
  // ggml uses IQ1S_DELTA here too (equal to IQ1M_DELTA)
  const detail::iq1_shifts<A> shifts(tables::iq1s_delta);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const scalar::detail::iq1m_scales scales(src + offsetof(B, scales));
    const std::uint16_t* sc = scales.sc;
    const float d = half_scale(scales.d_bits);
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* qh = src + offsetof(B, qh);
    for (int ib = 0; ib < 8; ++ib) {
      const unsigned w = sc[ib / 2] >> (6 * (ib % 2));
      for (int p = 0; p < 2; ++p, dst += 16) {
        const fbatch<A> dl(d * static_cast<float>(2 * ((w >> (3 * p)) & 7u) + 1));
        const unsigned hh = load_le<std::uint8_t>(qh + 2 * ib + p);  // the two groups' nibbles
        const std::byte* q = qs + 4 * ib + 2 * p;
        const fbatch<A>* shift = shifts.v[((hh >> 3) & 1u) | ((hh >> 6) & 2u)];  // the two delta signs
        detail::put_iq1_16<A>(dst, dl, tables::iq1s_grid[load_le<std::uint8_t>(q) | ((hh & 7u) << 8)],
                              tables::iq1s_grid[load_le<std::uint8_t>(q + 1) | (((hh >> 4) & 7u) << 8)], shift);
      }
    }
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_IQ_GRID_DEQUANTIZE_SIMD_HPP
