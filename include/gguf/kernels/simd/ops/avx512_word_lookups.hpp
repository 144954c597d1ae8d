#ifndef GGUF_KERNELS_SIMD_OPS_AVX512_WORD_LOOKUPS_HPP
#define GGUF_KERNELS_SIMD_OPS_AVX512_WORD_LOOKUPS_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gguf/format/half.hpp"
#include "gguf/kernels/simd/ops/load.hpp"
#include "gguf/kernels/simd/ops/lookup.hpp"
#include "gguf/kernels/simd/ops/store.hpp"
#include "gguf/kernels/simd/ops/intrinsics.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// The AVX-512 word lookups of half outputs (arch.hpp's uses_word_table; lut_bits<A> >= 4): a small float
// table rounded once to f16 or bf16 words, then looked up by a word permute (vpermw) per 32 weights. On
// other instruction sets only the declarations the kernels' discarded branches name.

namespace detail {
#if GGUF_SIMD_AVX512
/// The 32 floats of lo (words 0-15) and hi (words 16-31) as `Out` words in one register. `normal`: see
/// no_subnormals.
template <class Out>
GGUF_SIMD_INLINE __m512i avx512_words32(__m512 lo, __m512 hi, subnormals normal = subnormals::possible) noexcept {
#if defined(__AVX512BF16__)
  // Both rounded by one instruction, when no entry is subnormal (which it reads as zero; see
  // avx512_words): one operation fewer for every table.
  if constexpr (std::is_same_v<Out, bf16>) {
    if (normal == subnormals::none || (_mm512_fpclass_ps_mask(lo, 0x20) | _mm512_fpclass_ps_mask(hi, 0x20)) == 0)
        [[likely]] {
      return std::bit_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
    }
  }
#endif
  return _mm512_inserti64x4(_mm512_castsi256_si512(avx512_words<Out>(lo, normal)), avx512_words<Out>(hi, normal), 1);
}

/// The 16 entries of `table` as `Out` words, twice: vpermw on 32 words reads an index's low 5 bits, so
/// any byte or its high nibble indexes the right entry unmasked. `normal`: see no_subnormals.
template <class Out>
GGUF_SIMD_INLINE __m512i avx512_table_words(__m512 table, subnormals normal = subnormals::possible) noexcept {
#if defined(__AVX512BF16__)
  if constexpr (std::is_same_v<Out, bf16>) return avx512_words32<Out>(table, table, normal);
#endif
  const __m256i t = avx512_words<Out>(table, normal);
  return _mm512_inserti64x4(_mm512_castsi256_si512(t), t, 1);
}
#endif
}  // namespace detail

/*
 * Lookups of a 16-entry table by nibbles, stored as `Out`, where permute<A> looks up 16 entries
 * (lut_bits<A> >= 4). Half outputs round each table once, not each weight: on AVX-512 the table becomes
 * words and the lookup a word permute, half the conversions or fewer (the conversions, not the stores,
 * bound half outputs on Zen 4: vcvtps2ph and vcvtneps2bf16 on 512 bits take several cycles each).
 */

/** dst[j] = table[q[j] & 15] and dst[16 + j] = table[q[j] >> 4] for the 16 bytes at q. */
template <class A, class Out>
GGUF_SIMD_INLINE void put_nibbles16(Out* dst, const fbatch<A>& table, const std::byte* q,
                                    subnormals normal = subnormals::possible) noexcept {
  static_assert(lut_bits<A> >= 4);
#if GGUF_SIMD_AVX512
  if constexpr (uses_word_table<A, Out>) {
    // Two 256-bit word permutes (each reads an index's low 4 bits): neither the table nor the indices
    // are copied into a 512-bit register first (two inserts).
    const __m256i t = detail::avx512_words<Out>(table, normal);
    const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permutexvar_epi16(b, t));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16), _mm256_permutexvar_epi16(_mm256_srli_epi16(b, 4), t));
    return;
  }
#endif
  (void)normal;
  const ibatch<A> i = load_u8<A>(q);
  put<A>(dst, permute<A>(table, i));
  put<A>(dst + 16, permute<A>(table, i >> 4));
}

/** dst[j] = lo[q[j] & 15] and dst[32 + j] = hi[q[j] >> 4] for the 32 bytes at q. */
template <class A, class Out>
GGUF_SIMD_INLINE void put_nibbles32(Out* dst, const fbatch<A>& lo, const fbatch<A>& hi, const std::byte* q,
                                    subnormals normal = subnormals::possible) noexcept {
  static_assert(lut_bits<A> >= 4);
#if GGUF_SIMD_AVX512
  if constexpr (uses_word_table<A, Out>) {
    if constexpr (std::is_same_v<Out, f16>) {
      // f16: 256-bit word permutes of each table, as put_nibbles16 (faster than 512-bit ones). bf16
      // keeps these: one vcvtne2ps2bf16 makes a table's two copies, and its 512-bit permutes are faster.
      const __m256i tl = detail::avx512_words<Out>(lo), th = detail::avx512_words<Out>(hi);
      for (std::size_t j = 0; j < 32; j += 16) {
        const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + j)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j), _mm256_permutexvar_epi16(b, tl));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32 + j),
                            _mm256_permutexvar_epi16(_mm256_srli_epi16(b, 4), th));
      }
      return;
    }
    const __m512i b = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
    _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(b, detail::avx512_table_words<Out>(lo, normal)));
    _mm512_storeu_si512(dst + 32,
                        _mm512_permutexvar_epi16(_mm512_srli_epi16(b, 4), detail::avx512_table_words<Out>(hi, normal)));
    return;
  }
#endif
  (void)normal;
  constexpr std::size_t L = lanes<A>;
  for (std::size_t j = 0; j < 32; j += L) {
    const ibatch<A> i = load_u8<A>(q + j);
    put<A>(dst + j, permute<A>(lo, i));
    put<A>(dst + 32 + j, permute<A>(hi, i >> 4));
  }
}

/**
 * Lookups in a 32-entry table, lo (entries 0-15) and hi (16-31), by 5-bit values whose low 4 bits are the
 * nibbles of the 16 bytes at q and whose fifth bits are `fifth` (q5_0, q5_1): dst[j] = t[(q[j] & 15) + 16
 * bit j of fifth], dst[16 + j] = t[(q[j] >> 4) + 16 bit 16 + j], j < 16. AVX-512 only (lut_bits<A> >= 4).
 * Floats: a permute of lo by the nibbles, then one of hi merged under the fifth bits as a mask, so no
 * index is assembled (the permutes read the low 4 bits). Halves: the 32 entries rounded once to words,
 * the 5-bit indices made in byte lanes (and, shift, a masked add of 16: 128- and 256-bit operations),
 * one word permute for the 32 weights: less work than masking, converting and scaling each weight.
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_fifth_nibbles16(Out* dst, const fbatch<A>& lo, const fbatch<A>& hi, const std::byte* q,
                                          std::uint32_t fifth, subnormals normal = subnormals::possible) noexcept {
  static_assert(lut_bits<A> >= 4, "AVX-512 only");
#if GGUF_SIMD_AVX512
  if constexpr (std::is_same_v<Out, float>) {
    const __m512i i0 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
    const __m512i i1 = _mm512_srli_epi32(i0, 4);
    const auto k0 = static_cast<__mmask16>(fifth), k1 = static_cast<__mmask16>(fifth >> 16);
    _mm512_storeu_ps(dst, _mm512_mask_permutexvar_ps(_mm512_permutexvar_ps(i0, lo), k0, i0, hi));
    _mm512_storeu_ps(dst + 16, _mm512_mask_permutexvar_ps(_mm512_permutexvar_ps(i1, lo), k1, i1, hi));
  } else {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), low4 = _mm_set1_epi8(15);
    __m256i idx = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(b, low4)),
                                          _mm_and_si128(_mm_srli_epi16(b, 4), low4), 1);
    idx = _mm256_mask_add_epi8(idx, _cvtu32_mask32(fifth), idx, _mm256_set1_epi8(16));
    _mm512_storeu_si512(
        dst, _mm512_permutexvar_epi16(_mm512_cvtepu8_epi16(idx), detail::avx512_words32<Out>(lo, hi, normal)));
  }
#else
  (void)dst, (void)lo, (void)hi, (void)q, (void)fifth, (void)normal;
#endif
}

// The word lookups of half outputs (arch.hpp's uses_word_table): AVX-512 BW only. Elsewhere only their
// declarations, for the kernels' branches that `if constexpr (uses_word_table<A, Out>)` discards.
#if GGUF_SIMD_AVX512
/// A float table rounded to `Out` words once, for the lookups below that run many times per table.
using word_table = __m512i;

/** `table` as `Out` words, each 16-entry table twice (see put_nibbles16). `normal`: see no_subnormals. */
template <class A, class Out>
GGUF_SIMD_INLINE word_table table_words(const fbatch<A>& table, subnormals normal = subnormals::possible) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  return detail::avx512_table_words<Out>(table, normal);
}

/**
 * dst[32 l + j] = t[(q[j] >> 2 l) & 3] for the 32 bytes at q and l < 4, where t = table_words of a table
 * repeating every 4 lanes (so any index's low 2 bits pick the entry).
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_2bit32(Out* dst, const word_table& t, const std::byte* q) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  const __m512i b = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(b, t));
  _mm512_storeu_si512(dst + 32, _mm512_permutexvar_epi16(_mm512_srli_epi16(b, 2), t));
  _mm512_storeu_si512(dst + 64, _mm512_permutexvar_epi16(_mm512_srli_epi16(b, 4), t));
  _mm512_storeu_si512(dst + 96, _mm512_permutexvar_epi16(_mm512_srli_epi16(b, 6), t));
}

/**
 * dst[j] = t[4 ((q[j] >> Shift) & 3) + First + j / 16] for the 32 bytes at q: 2-bit fields of two runs
 * of 16 weights whose tables interleave in the table_words t (entry 4 v + k: value v of run k, k < 4).
 */
template <class A, int Shift, int First, class Out>
GGUF_SIMD_INLINE void put_grouped_2bit32(Out* dst, const word_table& t, const std::byte* q) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  static_assert(Shift % 2 == 0 && Shift <= 6 && First >= 0 && First <= 2);
  const __m512i b = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
  __m512i v;  // the field at bits 2-3
  if constexpr (Shift >= 2) {
    v = _mm512_srli_epi16(b, static_cast<unsigned>(Shift - 2));
  } else {
    v = _mm512_slli_epi16(b, 2);
  }
  const __m512i run = _mm512_inserti64x4(_mm512_set1_epi16(First), _mm256_set1_epi16(First + 1), 1);
  const __m512i idx = _mm512_or_si512(_mm512_and_si512(v, _mm512_set1_epi16(0xC)), run);
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(idx, t));
}

/// The two words a bit chooses between (put_bits32), each in every lane.
struct word_pair {
  __m512i zero;  ///< the word of a clear bit
  __m512i one;   ///< the word of a set bit
};

/** Entries 0 and 1 of `table` rounded to `Out` words, once for the many put_bits32 that use them. */
template <class A, class Out>
GGUF_SIMD_INLINE word_pair pair_words(const fbatch<A>& table, subnormals normal = subnormals::possible) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  const word_table t = table_words<A, Out>(table, normal);
  return {_mm512_permutexvar_epi16(_mm512_setzero_si512(), t), _mm512_permutexvar_epi16(_mm512_set1_epi16(1), t)};
}

/** dst[j] = bit j of `bits` ? w.one : w.zero for j < 32 (q1_0: d and -d): a blend by the bits themselves. */
template <class A, class Out>
GGUF_SIMD_INLINE void put_bits32(Out* dst, const word_pair& w, std::uint32_t bits) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  _mm512_storeu_si512(dst, _mm512_mask_blend_epi16(bits, w.zero, w.one));
}

/**
 * dst[j] = t[(q[j / 4] >> 2 (j % 4)) & 3] for j < 32 (the 8 bytes at q, fields least significant
 * first), where t = table_words of a table repeating every 4 lanes.
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_packed_2bit32(Out* dst, const word_table& t, const std::byte* q) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  std::uint64_t bytes;
  std::memcpy(&bytes, q, sizeof bytes);
  // Word j holds byte j / 4 (128-bit lane c: words 8c .. 8c + 7 from bytes 2c and 2c + 1), shifted by
  // its field's position; the table's period makes the bits above the field irrelevant.
  const __m512i b = _mm512_set1_epi64(static_cast<long long>(bytes));
  const __m512i spread =
      _mm512_shuffle_epi8(b, _mm512_set_epi8(-1, 7, -1, 7, -1, 7, -1, 7, -1, 6, -1, 6, -1, 6, -1, 6,  // lane 3
                                             -1, 5, -1, 5, -1, 5, -1, 5, -1, 4, -1, 4, -1, 4, -1, 4,  // lane 2
                                             -1, 3, -1, 3, -1, 3, -1, 3, -1, 2, -1, 2, -1, 2, -1, 2,  // lane 1
                                             -1, 1, -1, 1, -1, 1, -1, 1, -1, 0, -1, 0, -1, 0, -1, 0));
  const __m512i idx = _mm512_srlv_epi16(spread, _mm512_set4_epi32(0x00060004, 0x00020000, 0x00060004, 0x00020000));
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(idx, t));
}

/**
 * dst[j] = t[2 q[j] + j / 16] for the 32 bytes q[j] < 16 of `bytes`: two runs of 16 weights whose
 * tables interleave in t (entry 2 v + r: value v of run r).
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_two_runs32(Out* dst, const word_table& t, const ibatch<swar_arch<A>>& bytes) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  const __m512i w = _mm512_cvtepu8_epi16(static_cast<__m256i>(bytes));
  const __m512i run = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(1), 1);
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(_mm512_or_si512(_mm512_slli_epi16(w, 1), run), t));
}

/** A 32-entry float table, lo (entries 0-15) and hi (16-31), as `Out` words in one register. */
template <class A, class Out>
GGUF_SIMD_INLINE word_table table_words32(const fbatch<A>& lo, const fbatch<A>& hi,
                                          subnormals normal = subnormals::possible) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  return detail::avx512_words32<Out>(lo, hi, normal);
}

/** dst[j] = t[bytes[j]] for the 32 bytes (each < 32) of `bytes`: a widening and one word permute. */
template <class A, class Out>
GGUF_SIMD_INLINE void put_bytes32(Out* dst, const word_table& t, const ibatch<swar_arch<A>>& bytes) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(_mm512_cvtepu8_epi16(static_cast<__m256i>(bytes)), t));
}

/**
 * dst[j] = t[code of weight j] for 32 weights whose 4-bit codes are the two 64-bit words at `codes` in
 * paired order (weight 2 m of a word's 16 at nibble m, weight 2 m + 1 at nibble 8 + m; see
 * paired_nibble_lanes16), t = table_words of a 16-entry table. In word lanes, three operations for 32
 * weights: a word permute puts in lane j the 16-bit piece that holds weight j's nibble, a variable word
 * shift brings the nibble down (the bits above it index the table's second copy alike), and the word
 * permute of the table looks it up. Indices made in 32-bit lanes and narrowed to words (vpmovdw) took
 * two shifts, two narrowings and two permutes for the same 32.
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_paired_codes32(Out* dst, const word_table& t, const std::byte* codes) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  // Lane j: piece 4 (j / 16) + 2 (j % 2) + (j % 16) / 8, shifted by 4 ((j % 16) / 2 % 4).
  const __m512i piece = _mm512_set_epi16(7, 5, 7, 5, 7, 5, 7, 5, 6, 4, 6, 4, 6, 4, 6, 4,  // lanes 31 ... 16
                                         3, 1, 3, 1, 3, 1, 3, 1, 2, 0, 2, 0, 2, 0, 2, 0);
  const __m512i shift = _mm512_set_epi16(12, 12, 8, 8, 4, 4, 0, 0, 12, 12, 8, 8, 4, 4, 0, 0,  //
                                         12, 12, 8, 8, 4, 4, 0, 0, 12, 12, 8, 8, 4, 4, 0, 0);
  const __m512i w = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes)));
  const __m512i idx = _mm512_srlv_epi16(_mm512_permutexvar_epi16(piece, w), shift);
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(idx, t));
}

/**
 * dst[j] = t[code of weight j] for 32 weights in 4 rows of 8, the rows' codes a, b, c, d (weight i of a
 * row at nibble i; see nibble_lanes16), t = table_words of a 16-entry table; where Signed, bit j of
 * `signs` set adds 8 to weight j's code (the table's second half, the levels negated). The rows are put
 * in one 128-bit lane (a broadcast and three masked ones), then as put_paired_codes32: a word permute,
 * a variable word shift, the word permute of the table.
 */
template <class A, bool Signed, class Out>
GGUF_SIMD_INLINE void put_row_codes32(Out* dst, const word_table& t, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                                      std::uint32_t d, std::uint32_t signs) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  // Lane j: piece 2 (j / 8) + (j % 8) / 4 (rows in 32-bit lanes, so two pieces a row), shifted by 4 (j % 4).
  const __m512i piece = _mm512_set_epi16(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4,  // lanes 31 ... 16
                                         3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  const __m512i shift = _mm512_set_epi16(12, 8, 4, 0, 12, 8, 4, 0, 12, 8, 4, 0, 12, 8, 4, 0,  //
                                         12, 8, 4, 0, 12, 8, 4, 0, 12, 8, 4, 0, 12, 8, 4, 0);
  __m512i rows = _mm512_set1_epi32(static_cast<int>(a));
  rows = _mm512_mask_set1_epi32(rows, 0x2, static_cast<int>(b));
  rows = _mm512_mask_set1_epi32(rows, 0x4, static_cast<int>(c));
  rows = _mm512_mask_set1_epi32(rows, 0x8, static_cast<int>(d));
  __m512i idx = _mm512_srlv_epi16(_mm512_permutexvar_epi16(piece, rows), shift);
  if constexpr (Signed) {
    // Bit 3 of a signed type's code is clear, so adding 8 sets it (there is no 16-bit masked or).
    idx = _mm512_mask_add_epi16(idx, _cvtu32_mask32(signs), idx, _mm512_set1_epi16(8));
  } else {
    (void)signs;
  }
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi16(idx, t));
}

/**
 * tq1_0's base-3 digits looked up in t (a table repeating every 4 lanes, entry digit): for the N bytes
 * at q (32 or 16), dst[N n + j] = t[digit n of q[j]], n < 5, each digit carried out of a 16-bit
 * fraction by a multiply by 3 (base3_digit) in 16-bit lanes.
 */
template <class A, std::size_t N, class Out>
GGUF_SIMD_INLINE void put_base3_digits(Out* dst, const word_table& t, const std::byte* q) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  static_assert(N == 32 || N == 16);
  if constexpr (N == 32) {
    __m512i f = _mm512_slli_epi16(_mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q))), 8);
    const __m512i three = _mm512_set1_epi16(3);
    for (std::size_t n = 0; n < 5; ++n) {
      _mm512_storeu_si512(dst + 32 * n, _mm512_permutexvar_epi16(_mm512_mulhi_epu16(f, three), t));
      f = _mm512_mullo_epi16(f, three);
    }
  } else {
    __m256i f = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))), 8);
    const __m256i three = _mm256_set1_epi16(3), t16 = _mm512_castsi512_si256(t);
    for (std::size_t n = 0; n < 5; ++n) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16 * n),
                          _mm256_permutexvar_epi16(_mm256_mulhi_epu16(f, three), t16));
      f = _mm256_mullo_epi16(f, three);
    }
  }
}

/**
 * tq1_0's qh: dst[4 n + m] = t[digit n of byte m of `word`], n < 4: each byte's fraction times 3^n in
 * 16-bit lanes, then one digit.
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_base3_qh16(Out* dst, const word_table& t, std::uint32_t word) noexcept {
  static_assert(uses_word_table<A, Out>, "for half outputs looked up as words");
  // Word j: byte j % 4 in its high byte (the fraction byte << 8), times 3^(j / 4) modulo 2^16.
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(word)),
                                            _mm256_setr_epi8(-1, 0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1, 3, -1,
                                                             0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1, 3));
  const __m256i f = _mm256_mullo_epi16(bytes, _mm256_setr_epi16(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst),
                      _mm256_permutexvar_epi16(_mm256_mulhi_epu16(f, _mm256_set1_epi16(3)), _mm512_castsi512_si256(t)));
}

#else
/// @cond INTERNAL
/// The words of a table where there are none (see uses_word_table): never made.
struct word_table {};
template <class A, class Out>
word_table table_words(const fbatch<A>& table, subnormals normal = subnormals::possible) noexcept;
template <class A, class Out>
void put_2bit32(Out* dst, const word_table& t, const std::byte* q) noexcept;
template <class A, int Shift, int First, class Out>
void put_grouped_2bit32(Out* dst, const word_table& t, const std::byte* q) noexcept;
struct word_pair {};
template <class A, class Out>
word_pair pair_words(const fbatch<A>& table, subnormals normal = subnormals::possible) noexcept;
template <class A, class Out>
void put_bits32(Out* dst, const word_pair& w, std::uint32_t bits) noexcept;
template <class A, class Out>
void put_packed_2bit32(Out* dst, const word_table& t, const std::byte* q) noexcept;
template <class A, class Out>
void put_two_runs32(Out* dst, const word_table& t, const ibatch<swar_arch<A>>& bytes) noexcept;
template <class A, class Out>
word_table table_words32(const fbatch<A>& lo, const fbatch<A>& hi, subnormals normal = subnormals::possible) noexcept;
template <class A, class Out>
void put_bytes32(Out* dst, const word_table& t, const ibatch<swar_arch<A>>& bytes) noexcept;
template <class A, std::size_t N, class Out>
void put_base3_digits(Out* dst, const word_table& t, const std::byte* q) noexcept;
template <class A, class Out>
void put_paired_codes32(Out* dst, const word_table& t, const std::byte* codes) noexcept;
template <class A, bool Signed, class Out>
void put_row_codes32(Out* dst, const word_table& t, std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d,
                     std::uint32_t signs) noexcept;
template <class A, class Out>
void put_base3_qh16(Out* dst, const word_table& t, std::uint32_t word) noexcept;
/// @endcond
#endif

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_AVX512_WORD_LOOKUPS_HPP
