#ifndef GGUF_KERNELS_SIMD_IQ_GRIDS_HPP
#define GGUF_KERNELS_SIMD_IQ_GRIDS_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/iq_quants.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/derived_tables.hpp"
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
// question is only what is loaded and how it reaches a vector. Measured on the AVX-512 machine of the
// README (AMD EPYC, Zen 4), on the benchmark's random blocks:
//  - a gather (vpgatherdq of 8 rows, then the widening) ran at about half the speed of scalar loads:
//    it costs more uops and latency than the loads it replaces, which issue several a cycle and hit L1;
//  - with scalar loads the kernels are bound by instruction count, the integer work of the indices
//    included, not by the vector work. So for the grids small enough to stay in L1 beside the output
//    stream (iq2_xxs 8 KiB, iq2_xs 16 KiB, iq3_xxs 4 KiB as floats), the rows are kept as floats
//    (tables::float_rows) and so are the signs (sign7_rows: the +-1.0f factors per 7-bit field): per
//    8 weights one multiply by the row and one by the signs, both straight from memory, in ggml's order
//    (db * g * s), each index scaled by the shift that extracts it (row_of). +14% over widening bytes.
//    For iq2_s (32 KiB as floats) and iq3_s the float rows ran 8-9% slower (L1 misses; the split
//    indices' extra integer work), and iq1's grid would be 64 KiB: these widen the byte rows in
//    registers, two rows per 16 weights (ops.hpp's bytes16), the signs one xor into the sign bits
//    (flip_signs: a masked xor on AVX-512).
//  - iq1_s, iq1_m and iq3_s, where a register permute exists (AVX2, AVX-512), keep their grids as 4-bit
//    codes instead (tables::iq1_codes, iq3s_codes: a nibble per weight, iq1's delta sign folded into
//    the row index), spread over the lanes by one variable shift and looked up by a permute in a table
//    of the levels times the scale, computed as the scalar kernel computes each weight. Their indices
//    and scales are built with vector operations one block ahead (lookups_ahead), and AVX-512 broadcasts
//    iq3_s's rows from memory straight into their lanes. iq1_m: 22% -> 60% of memset, iq3_s 23% -> 35%.
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

/**
 * The iq1 weights before scaling, where a register permute looks them up (lut_bits<A> >= 3): lane k
 * (repeating every 8) is float(g) + (s ? -delta : delta) for the code k = (g + 1) | 4 s of
 * tables::iq1_codes, the very sums the scalar kernel rounds before it multiplies by dl.
 */
template <class A>
inline fbatch<A> iq1_levels(float delta) noexcept {
  alignas(64) float t[lanes<A>];
  for (std::size_t k = 0; k < lanes<A>; ++k) {
    const float g = static_cast<float>(static_cast<int>(k % 4) - 1);
    t[k] = k % 4 == 3 ? 0.0f : g + ((k / 4) % 2 != 0 ? -delta : delta);
  }
  return fbatch<A>::load_aligned(t);
}

/**
 * One iq1 block's lookups, made before its weights: each group's row of tables::iq1_codes and each
 * run's scale. Built with vector operations on AVX-512 (iq1m_lookups_of), where the integer work of the
 * indices, done group by group, was what bound the kernel.
 */
struct iq1_lookups {
  alignas(64) std::uint16_t row[32];  ///< group g's code row: its grid index, the delta's sign at bit 11
  alignas(64) float dl[16];           ///< the scale of weights 16 k .. 16 k + 15
};

/// iq1_m's lookups of the block at src: row = qs | qh nibble << 8, dl = d * (2 s + 1).
template <class A>
inline void iq1m_lookups_of(const std::byte* src, iq1_lookups& out) noexcept {
  using B = blocks::iq1_m;
  const scalar::detail::iq1m_scales scales(src + offsetof(B, scales));
  const float d = half_scale(scales.d_bits);
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* qh = src + offsetof(B, qh);
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {
    // Word g: byte g / 2 of qh, its nibble g % 2 moved to bits 8-11, or'ed onto byte g of qs.
    const __m512i h = _mm512_permutexvar_epi16(
        _mm512_set_epi16(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2,
                         1, 1, 0, 0),
        _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qh)))));
    const __m512i hi = _mm512_and_si512(_mm512_sllv_epi16(h, _mm512_set1_epi32(0x00040008)), _mm512_set1_epi16(0xF00));
    _mm512_store_si512(
        out.row, _mm512_or_si512(hi, _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)))));
    // Lane k: bits 3 (k % 4) of scale word k / 4.
    const __m512i w = _mm512_permutexvar_epi32(_mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
                                               _mm512_castsi256_si512(_mm256_cvtepu16_epi32(_mm_loadl_epi64(
                                                   reinterpret_cast<const __m128i*>(src + offsetof(B, scales))))));
    const __m512i s = _mm512_and_si512(_mm512_srlv_epi32(w, _mm512_set4_epi32(9, 6, 3, 0)), _mm512_set1_epi32(7));
    const __m512i odd = _mm512_or_si512(_mm512_slli_epi32(s, 1), _mm512_set1_epi32(1));
    _mm512_store_ps(out.dl, _mm512_mul_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(odd)));
    return;
  }
#endif
  for (unsigned g = 0; g < 32; ++g) {
    const unsigned nibble = (load_le<std::uint8_t>(qh + g / 2) >> (4 * (g % 2))) & 15u;
    out.row[g] = static_cast<std::uint16_t>(load_le<std::uint8_t>(qs + g) | (nibble << 8));
  }
  for (unsigned k = 0; k < 16; ++k)
    out.dl[k] = d * static_cast<float>(2 * ((scales.sc[k / 4] >> (3 * (k % 4))) & 7u) + 1);
}

/// iq1_s's lookups of the block at src: row = qs | 3 bits of qh << 8 | the delta's sign << 11, and
/// dl = d * (2 s + 1) of each 32 weights (twice: dl[k] is the scale of weights 16 k ..).
template <class A>
inline void iq1s_lookups_of(const std::byte* src, iq1_lookups& out) noexcept {
  using B = blocks::iq1_s;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* qh = src + offsetof(B, qh);
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {
    const __m128i words = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qh));
    // Word g: qh word g / 4, its bits 3 (g % 4) .. + 2 moved to bits 8-10 and its bit 15 to bit 11.
    const __m512i h = _mm512_permutexvar_epi16(_mm512_set_epi16(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3,
                                                                3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
                                               _mm512_castsi128_si512(words));
    const __m512i index = _mm512_slli_epi16(
        _mm512_and_si512(_mm512_srlv_epi16(h, _mm512_set4_epi32(0x00090006, 0x00030000, 0x00090006, 0x00030000)),
                         _mm512_set1_epi16(7)),
        8);
    const __m512i sign = _mm512_and_si512(_mm512_srli_epi16(h, 4), _mm512_set1_epi16(0x800));
    const __m512i low = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)));
    _mm512_store_si512(out.row, _mm512_ternarylogic_epi32(index, sign, low, 0xFE));  // index | sign | low
    // Lane k: bits 12-14 of qh word k / 2.
    const __m512i w = _mm512_permutexvar_epi32(_mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0),
                                               _mm512_castsi256_si512(_mm256_cvtepu16_epi32(words)));
    const __m512i s = _mm512_and_si512(_mm512_srli_epi32(w, 12), _mm512_set1_epi32(7));
    const __m512i odd = _mm512_or_si512(_mm512_slli_epi32(s, 1), _mm512_set1_epi32(1));
    _mm512_store_ps(out.dl, _mm512_mul_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(odd)));
    return;
  }
#endif
  for (unsigned g = 0; g < 32; ++g) {
    const unsigned h = load_le<std::uint16_t>(qh + 2 * (g / 4));
    out.row[g] = static_cast<std::uint16_t>(load_le<std::uint8_t>(qs + g) | (((h >> (3 * (g % 4))) & 7u) << 8) |
                                            ((h >> 4) & 0x800u));
  }
  for (unsigned k = 0; k < 16; ++k) {
    out.dl[k] = d * static_cast<float>(2 * ((load_le<std::uint16_t>(qh + 2 * (k / 2)) >> 12) & 7u) + 1);
  }
}

/** 16 iq1 weights by permute: the rows of codes a and b (tables::iq1_codes) looked up in `table`. */
template <class A, class Out>
inline void put_iq1_codes16(Out* y, const fbatch<A>& table, std::uint32_t a, std::uint32_t b) noexcept {
  constexpr std::size_t L = lanes<A>;
  ibatch<A> v[16 / L];
  nibble_lanes16<A>(a, b, v);
  for (std::size_t k = 0; k < 16 / L; ++k) put<A>(y + k * L, permute<A>(table, v[k]));
}

/**
 * body(lookups, block) for each of the nb blocks at src, the lookups (made by make(block, lookups))
 * made one block ahead. The grid kernels that look weights up by permute build a block's indices and
 * scales with vector operations, stored, then read back by scalar loads, which x86 does not forward
 * from a wider store (on Zen 4 the loads wait for the stores to reach the cache: made just before use,
 * the iq1 kernels ran at 2/3 of the speed they run at made ahead).
 */
template <class B, class Lookups, class Make, class Body>
inline void lookups_ahead(const std::byte* src, std::size_t nb, Make&& make, Body&& body) noexcept {
  if (nb == 0) return;
  Lookups ahead[2];
  make(src, ahead[0]);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    if (i + 1 < nb) make(src + sizeof(B), ahead[(i + 1) % 2]);
    in_memory(ahead);  // read back by loads: extracting each from its register costs more
    body(ahead[i % 2], src);
  }
}

/**
 * The iq1 weights where a register permute looks them up (lut_bits<A> >= 3): each block's lookups
 * (`make`: iq1s_lookups_of or iq1m_lookups_of), then per 16 weights two code rows looked up in the levels
 * times their scale. The lookups are made a block ahead: they are stored as vectors and read back by
 * scalar loads, which x86 does not forward from a wider store (on Zen 4 the loads then wait for the
 * stores to reach the cache: made just before use, the kernel ran at 2/3 of this speed).
 */
template <class A, class B, class Out, class Make>
inline void dequant_iq1_codes(const std::byte* src, Out* dst, std::size_t nb, Make&& make) noexcept {
  const fbatch<A> levels = iq1_levels<A>(tables::iq1s_delta);  // ggml's iq1_m uses IQ1S_DELTA too (equal)
  lookups_ahead<B, iq1_lookups>(src, nb, make, [&](const iq1_lookups& b, const std::byte*) {
    for (std::size_t k = 0; k < 16; ++k, dst += 16) {
      put_iq1_codes16<A>(dst, levels * fbatch<A>(b.dl[k]), tables::iq1_codes[b.row[2 * k]],
                         tables::iq1_codes[b.row[2 * k + 1]]);
    }
  });
}

/// iq3_s's lookups: each 4-weight row's grid index (a byte of qs, a bit of qh) and each 32 weights' db.
struct iq3s_lookups {
  alignas(64) std::uint16_t row[64];  ///< row r's index: qs[r] | (bit r of qh) << 8
  alignas(64) float db[8];            ///< d * (1 + 2 s) of weights 32 k ..
};

/**
 * The codes of 16 iq3_s weights, rows `row[0 .. 4)` of tables::iq3s_codes, in lanes as nibble_lanes16
 * makes them. On AVX-512 each row is broadcast from memory straight into its 4 lanes (a row read as
 * the low half of a word: the shifts never reach the high half), no row passing through an integer
 * register; elsewhere two rows are joined in one first.
 */
template <class A>
inline void iq3s_code_lanes(const std::uint16_t* row, ibatch<A>* out) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {
    const auto word = [&](int k) {  // row k in the low 16 bits
      return load_le<std::uint32_t>(reinterpret_cast<const std::byte*>(tables::iq3s_codes.data() + row[k]));
    };
    __m512i v = _mm512_set1_epi32(static_cast<int>(word(0)));
    v = _mm512_mask_set1_epi32(v, 0x00F0, static_cast<int>(word(1)));
    v = _mm512_mask_set1_epi32(v, 0x0F00, static_cast<int>(word(2)));
    v = _mm512_mask_set1_epi32(v, 0xF000, static_cast<int>(word(3)));
    out[0] = _mm512_srlv_epi32(v, _mm512_set4_epi32(12, 8, 4, 0));
    return;
  }
#endif
  const auto code = [&](int k) { return std::uint32_t{tables::iq3s_codes[row[k]]}; };
  nibble_lanes16<A>(code(0) | code(1) << 16, code(2) | code(3) << 16, out);
}

/// iq3_s's lookups of the block at src.
template <class A>
inline void iq3s_lookups_of(const std::byte* src, iq3s_lookups& out) noexcept {
  using B = blocks::iq3_s;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* qh = src + offsetof(B, qh);
  const std::byte* scales = src + offsetof(B, scales);
  for (unsigned k = 0; k < 8; ++k) {
    out.db[k] = d * static_cast<float>(1 + 2 * ((load_le<std::uint8_t>(scales + k / 2) >> (4 * (k % 2))) & 0xFu));
  }
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {  // bit r of the 64-bit qh is row r's ninth bit (added: below it the byte)
    const auto h = load_le<std::uint64_t>(qh);
    for (unsigned half = 0; half < 2; ++half) {
      const __m512i low = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * half)));
      _mm512_store_si512(out.row + 32 * half, _mm512_mask_add_epi16(low, static_cast<__mmask32>(h >> (32 * half)), low,
                                                                    _mm512_set1_epi16(0x100)));
    }
    return;
  }
#endif
  for (unsigned r = 0; r < 64; ++r) {
    out.row[r] = static_cast<std::uint16_t>(load_le<std::uint8_t>(qs + r) |
                                            (((load_le<std::uint8_t>(qh + r / 8) >> (r % 8)) & 1u) << 8));
  }
}

/**
 * 16 weights made as two row_arch<A> batches, stored as `Out`. On AVX-512 half outputs join the halves
 * first, since one 16-lane conversion costs less than two of 8.
 */
template <class A, class Out>
inline void put_halves(Out* y, const fbatch<row_arch<A>>& lo, const fbatch<row_arch<A>>& hi) noexcept {
  if constexpr (is_avx512<A> && !std::is_same_v<Out, float>) {
    put<A>(y, join_rows<A>(lo, hi));
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
inline const float* row_of(const tables::float_rows<N, W>& t, std::uint32_t word) noexcept {
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
inline void put_rows4x4(Out* y, const fbatch<row_arch<A>>& db, const float* const* r, const float* s0,
                        const float* s1) noexcept {
  using R = row_arch<A>;
  if constexpr (lanes<R> == 8) {
    put_halves<A>(y, load_row_pair<R>(r[0], r[1]) * db * fbatch<R>::load_aligned(s0),
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
inline void put_rows8x2(Out* y, const fbatch<row_arch<A>>& db, const float* row0, const float* sign0, const float* row1,
                        const float* sign1) noexcept {
  using R = row_arch<A>;
  if constexpr (lanes<R> == 8) {  // a row is one load
    put_halves<A>(y, fbatch<R>::load_aligned(row0) * db * fbatch<R>::load_aligned(sign0),
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
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    for (int ib = 0; ib < 8; ++ib, qs += 8) {
      const auto aux = load_le<std::uint32_t>(qs + 4);
      const fbatch<row_arch<A>> db(scalar::detail::half_step_scale(d, aux >> 28, 0.25f));
      const auto idx = load_le<std::uint32_t>(qs);
      unroll<2>([&](auto p) {
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
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_scale(src + offsetof(B, d));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* scales = src + offsetof(B, scales);
    for (int ib = 0; ib < 8; ++ib) {
      const unsigned sc = load_le<std::uint8_t>(scales + ib);
      unroll<2>([&](auto p) {
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
      const fbatch<row_arch<A>> db(scalar::detail::half_step_scale(d, aux >> 28, 0.5f));
      const std::uint32_t q[2] = {load_le<std::uint32_t>(qs + 8 * ib), load_le<std::uint32_t>(qs + 8 * ib + 4)};
      unroll<2>([&](auto p) {  // groups 2p and 2p + 1: the four index bytes of q[p]
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
  if constexpr (lut_bits<A> >= 3) {  // each weight's code looked up by a permute, its sign flipped
    constexpr std::size_t L = lanes<A>;
    alignas(64) float odd[L];  // lane k: the grid value of code k % 8
    for (std::size_t k = 0; k < L; ++k) odd[k] = static_cast<float>(2 * (k % 8) + 1);
    const fbatch<A> levels = fbatch<A>::load_aligned(odd);
    detail::lookups_ahead<B, detail::iq3s_lookups>(
        src, nb, detail::iq3s_lookups_of<A>, [&](const detail::iq3s_lookups& b, const std::byte* block) {
          const std::byte* signs = block + offsetof(B, signs);
          for (std::size_t ib = 0; ib < 8; ++ib) {
            const fbatch<A> table = levels * fbatch<A>(b.db[ib]);  // db * float(g), as the scalar kernel
            for (std::size_t p = 0; p < 2; ++p, dst += 16) {
              ibatch<A> v[16 / L];
              detail::iq3s_code_lanes<A>(b.row + 8 * ib + 4 * p, v);
              const unsigned s = load_le<std::uint16_t>(signs + 4 * ib + 2 * p);
              for (std::size_t k = 0; k < 16 / L; ++k) {
                put<A>(dst + k * L, flip_signs<A>(permute<A>(table, v[k]), s >> (k * L)));
              }
            }
          }
        });
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
  if constexpr (lut_bits<A> >= 3) {  // each weight's code looked up by a permute
    detail::dequant_iq1_codes<A, B>(src, dst, nb, detail::iq1s_lookups_of<A>);
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
  if constexpr (lut_bits<A> >= 3) {  // each weight's code looked up by a permute
    detail::dequant_iq1_codes<A, B>(src, dst, nb, detail::iq1m_lookups_of<A>);
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

#endif  // GGUF_KERNELS_SIMD_IQ_GRIDS_HPP
