#ifndef GGUF_KERNELS_SIMD_IQ_GRIDS_HPP
#define GGUF_KERNELS_SIMD_IQ_GRIDS_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/iq_quants.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the grid types of scalar/iq_quants.hpp: iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s,
// iq1_m. Each group of 8 weights is a row of a grid (8 bytes: 8 magnitudes, or iq1's int8 values in
// {-1, 0, 1}) picked by an index of 8 to 11 bits, with a sign byte (iq2/iq3) or a delta shift (iq1), under
// a scale the block computes per 16 or 32 weights exactly as the scalar kernel does.
//
// The crux is the grid lookup: 256 to 2048 rows of 8 bytes (2 to 16 KiB) fit no register, so no
// in-register table lookup (pshufb, vpermps, tbl) can do it. What remains is a load per row, and the
// question is only how the rows reach a vector. Two scalar 64-bit loads per 16 weights, joined in one
// register and widened in it (ops.hpp's bytes16), beat a gather: on the AVX-512 machine of the README
// (AMD EPYC), iq2_xxs ran at 10-13 G weights/s this way against 6-7 with vpgatherdq of 8 rows (one per
// 8 weights, then the same widening from the gathered register), since the gather costs more uops and
// latency than the scalar loads it replaces, which issue several a cycle and hit L1 (the grids are hot).
// SSE and NEON have no gather anyway. So every ISA runs the same code: per two groups, two row loads,
// one widening, one convert-multiply per vector, and the signs applied as one xor into the sign bits
// (ops.hpp's flip_signs: a masked xor on AVX-512):
//  - iq2/iq3: the scalar kernel computes db * float(g) * (+-1.0f); times -1 only flips the sign bit, so
//    the xor gives its bits (a NaN's sign may differ, which no comparison of NaNs sees).
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
inline void put_signed16(Out* y, const fbatch<A>& db, std::uint64_t row0, std::uint64_t row1,
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
inline void put_iq1_16(Out* y, const fbatch<A>& dl, std::uint64_t row0, std::uint64_t row1,
                       const fbatch<A>* shift) noexcept {
  constexpr std::size_t L = lanes<A>;
  ibatch<A> g[16 / L];
  bytes16<A>(row0 ^ top_bits, row1 ^ top_bits, g);  // int8 g + 128, zero-extended: no carry between bytes
  for (std::size_t k = 0; k < 16 / L; ++k) put<A>(y + k * L, (to_float<A>(g[k]) + shift[k]) * dl);
}

/// The sign byte of a 7-bit iq2_xxs/iq3_xxs field, its 8th sign restoring even parity.
inline std::uint32_t signs_of(std::uint32_t aux, int field) noexcept {
  return tables::ksigns_iq2xs[(aux >> (7 * field)) & 127];
}

}  // namespace detail

/// iq2_xxs: per 32 weights four 8-bit grid indices, then four 7-bit sign fields and a 4-bit sub-scale.
template <class A, class Out = float>
void dequant_iq2_xxs(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq2_xxs;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    for (int ib = 0; ib < 8; ++ib, qs += 8, dst += 32) {
      const auto aux = load_le<std::uint32_t>(qs + 4);
      const fbatch<A> db(scalar::detail::half_step_scale(d, aux >> 28, 0.25f));
      for (int p = 0; p < 2; ++p) {
        const std::uint32_t signs = detail::signs_of(aux, 2 * p) | (detail::signs_of(aux, 2 * p + 1) << 8);
        detail::put_signed16<A>(dst + 16 * p, db, tables::iq2xxs_grid[load_le<std::uint8_t>(qs + 2 * p)],
                                tables::iq2xxs_grid[load_le<std::uint8_t>(qs + 2 * p + 1)], signs);
      }
    }
  }
}

/// iq2_xs: per 8 weights a 16-bit word (9-bit grid index, 7-bit sign field); a 4-bit sub-scale per 16.
template <class A, class Out = float>
void dequant_iq2_xs(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq2_xs;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* scales = src + offsetof(B, scales);
    for (int ib = 0; ib < 8; ++ib) {
      const unsigned sc = load_le<std::uint8_t>(scales + ib);
      for (int p = 0; p < 2; ++p, qs += 4, dst += 16) {
        const fbatch<A> db(scalar::detail::half_step_scale(d, (sc >> (4 * p)) & 0xFu, 0.25f));
        const unsigned q0 = load_le<std::uint16_t>(qs), q1 = load_le<std::uint16_t>(qs + 2);
        const std::uint32_t signs =
            std::uint32_t{tables::ksigns_iq2xs[q0 >> 9]} | (std::uint32_t{tables::ksigns_iq2xs[q1 >> 9]} << 8);
        detail::put_signed16<A>(dst, db, tables::iq2xs_grid[q0 & 511], tables::iq2xs_grid[q1 & 511], signs);
      }
    }
  }
}

/// iq2_s: 10-bit grid indices (a byte of qs, 2 bits of qh), all 8 signs stored; a 4-bit sub-scale per 16.
template <class A, class Out = float>
void dequant_iq2_s(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq2_s;
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
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* scales_and_signs = qs + 64;
    for (int ib = 0; ib < 8; ++ib, dst += 32) {
      const auto aux = load_le<std::uint32_t>(scales_and_signs + 4 * ib);
      const fbatch<A> db(scalar::detail::half_step_scale(d, aux >> 28, 0.5f));
      for (int p = 0; p < 2; ++p) {
        const std::byte* q = qs + 8 * ib + 4 * p;
        const auto row = [&](int k) { return tables::iq3xxs_grid[load_le<std::uint8_t>(q + k)]; };
        const std::uint32_t signs = detail::signs_of(aux, 2 * p) | (detail::signs_of(aux, 2 * p + 1) << 8);
        detail::put_signed16<A>(dst + 16 * p, db, scalar::detail::join_rows(row(0), row(1)),
                                scalar::detail::join_rows(row(2), row(3)), signs);
      }
    }
  }
}

/// iq3_s: 9-bit indices of 4-value rows (a byte of qs, a bit of qh), 8 stored signs; an odd sub-scale per 32.
template <class A, class Out = float>
void dequant_iq3_s(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq3_s;
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
        const auto row = [&](int k) {
          return tables::iq3s_grid[load_le<std::uint8_t>(q + k) | (((h >> (4 * p + k)) & 1u) << 8)];
        };
        detail::put_signed16<A>(dst + 16 * p, db, scalar::detail::join_rows(row(0), row(1)),
                                scalar::detail::join_rows(row(2), row(3)),
                                load_le<std::uint16_t>(signs + 4 * ib + 2 * p));
      }
    }
  }
}

/// iq1_s: 11-bit indices (a byte of qs, 3 bits of qh); per 32 weights an odd sub-scale and the delta's sign.
template <class A, class Out = float>
void dequant_iq1_s(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq1_s;
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
        const auto row = [&](int l) {
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
  const detail::iq1_shifts<A> shifts(tables::iq1s_delta);  // ggml uses IQ1S_DELTA here too (equal to IQ1M_DELTA)
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

#endif  // GGUF_KERNELS_SIMD_IQ_GRIDS_HPP
