#ifndef GGUF_KERNELS_SIMD_OPS_LOOKUP_HPP
#define GGUF_KERNELS_SIMD_OPS_LOOKUP_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/simd/ops/intrinsics.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// ---- Lookups ------------------------------------------------------------------------------------

/**
 * table[idx & (lanes<A> - 1)] per lane, a register-wide float permute (vpermps): the permute ignores
 * the index bits above lut_bits<A>, which lets callers skip masking. Only where lut_bits<A> != 0.
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> permute(const fbatch<A>& table, const ibatch<A>& idx) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) return _mm512_permutexvar_ps(idx, table);
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_permutevar8x32_ps(table, idx);
#endif
  static_assert(lut_bits<A> != 0, "no register-wide permute");
  (void)idx;
  return table;
}

/** Lane i = p[i % G]: G consecutive floats repeated across the vector (one load on AVX2/AVX-512). */
template <class A, std::size_t G>
GGUF_SIMD_INLINE fbatch<A> repeat(const float* p) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A> && G == 4) return _mm512_broadcast_f32x4(_mm_loadu_ps(p));
  if constexpr (is_avx512<A> && G == 2) {
    double w;
    std::memcpy(&w, p, sizeof w);
    return _mm512_castpd_ps(_mm512_set1_pd(w));
  }
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A> && G == 2) {
    double w;
    std::memcpy(&w, p, sizeof w);
    return _mm256_castpd_ps(_mm256_set1_pd(w));
  }
#endif
  alignas(64) float v[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) v[i] = p[i % G];
  return fbatch<A>::load_aligned(v);
}

/**
 * The nibbles of the 16 bytes at p as permute indices, for 16-weight groups whose byte j holds weights j
 * (low nibble) and j + 8 (high nibble), nvfp4's sub-blocks: lane j of a is byte j, lane 8 + j of a is
 * byte j >> 4, and b the same of bytes 8-15. Only bits 0-3 of a lane are specified (`permute` reads no
 * others). Only where lanes<A> == 16.
 */
template <class A>
GGUF_SIMD_INLINE void nibble_indices(const std::byte* p, ibatch<A>& a, ibatch<A>& b) noexcept {
  static_assert(lanes<A> == 16, "16 weights a batch");
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {  // bytes 0-7 and their high nibbles (a 16-bit shift: bits 0-3 are right)
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), h = _mm_srli_epi16(q, 4);
    a = _mm512_cvtepu8_epi32(_mm_unpacklo_epi64(q, h));
    b = _mm512_cvtepu8_epi32(_mm_unpackhi_epi64(q, h));
    return;
  }
#endif
  alignas(64) std::int32_t t[32];
  for (int g = 0; g < 2; ++g) {
    for (int j = 0; j < 8; ++j) {
      const unsigned q = load_le<std::uint8_t>(p + 8 * g + j);
      t[16 * g + j] = static_cast<std::int32_t>(q & 0x0Fu);
      t[16 * g + 8 + j] = static_cast<std::int32_t>(q >> 4);
    }
  }
  a = ibatch<A>::load_aligned(t);
  b = ibatch<A>::load_aligned(t + 16);
}

/**
 * A 16-entry int8 table looked up by the 4-bit nibbles of 16 bytes at a time (the non-linear 4-bit
 * types), in the form the instruction set looks it up fastest: a byte-shuffle register (pshufb, tbl),
 * or, on SSE2 without a byte shuffle, `pairs`: a 256-entry table of both nibbles' levels per byte.
 */
template <class A>
class nibble_table {
  static constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0);

 public:
  /**
   * Keeps both pointers, which must outlive the object, and loads `table` into a register where the
   * instruction set has a byte shuffle.
   * @param table the 16 levels
   * @param pairs per byte value q, table[q & 15] | table[q >> 4] << 8 (the SSE2 path's one lookup per
   *              byte); see tables::nibble_pairs
   */
  nibble_table(const std::int8_t* table, const std::uint16_t* pairs) noexcept : table_(table), pairs_(pairs) {
#if defined(__SSE4_1__) || defined(__AVX2__)  // (MSVC defines only the latter)
    if constexpr (is_avx2<A> || is_sse41<A>) bytes_ = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table));
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
    if constexpr (is_neon64<A>) bytes_ = vld1q_s8(table);
#endif
  }

  /**
   * The levels of the 16 bytes at qs as int32: lo[] gets table[qs[j] & 15], hi[] gets table[qs[j] >> 4],
   * j = 0..15, 16 / lanes<A> batches each.
   */
  void lookup(const std::byte* qs, ibatch<A>* lo, ibatch<A>* hi) const noexcept {
#if defined(__SSE4_1__) || defined(__AVX2__)
    if constexpr (is_avx2<A> || is_sse41<A>) {
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
      const __m128i low4 = _mm_set1_epi8(0x0F);
      widen_levels(_mm_shuffle_epi8(bytes_, _mm_and_si128(q, low4)), lo);
      widen_levels(_mm_shuffle_epi8(bytes_, _mm_and_si128(_mm_srli_epi16(q, 4), low4)), hi);
      return;
    }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
    if constexpr (is_neon64<A>) {
      const uint8x16_t q = vld1q_u8(reinterpret_cast<const std::uint8_t*>(qs));
      widen_levels(vqtbl1q_s8(bytes_, vandq_u8(q, vdupq_n_u8(0x0F))), lo);
      widen_levels(vqtbl1q_s8(bytes_, vshrq_n_u8(q, 4)), hi);
      return;
    }
#endif
#if defined(__SSE2__) || defined(_M_X64)
    if constexpr (is_sse2_only<A>) {  // one 16-bit pair lookup per byte (pinsrw), then split with shifts
      for (int h = 0; h < 2; ++h) {
        const std::byte* q = qs + 8 * h;
        __m128i w = _mm_cvtsi32_si128(pairs_[load_le<std::uint8_t>(q)]);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 1)], 1);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 2)], 2);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 3)], 3);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 4)], 4);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 5)], 5);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 6)], 6);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 7)], 7);
        const __m128i l = _mm_srai_epi16(_mm_slli_epi16(w, 8), 8), u = _mm_srai_epi16(w, 8);
        // int16 -> int32: each word into the top half of a dword, then an arithmetic shift back.
        const __m128i zero = _mm_setzero_si128();
        lo[2 * h] = _mm_srai_epi32(_mm_unpacklo_epi16(zero, l), 16);
        lo[2 * h + 1] = _mm_srai_epi32(_mm_unpackhi_epi16(zero, l), 16);
        hi[2 * h] = _mm_srai_epi32(_mm_unpacklo_epi16(zero, u), 16);
        hi[2 * h + 1] = _mm_srai_epi32(_mm_unpackhi_epi16(zero, u), 16);
      }
      return;
    }
#endif
    alignas(64) std::int32_t l[16], u[16];
    for (int j = 0; j < 16; ++j) {
      const unsigned q = load_le<std::uint8_t>(qs + j);
      l[j] = table_[q & 0x0Fu];
      u[j] = table_[q >> 4];
    }
    for (std::size_t k = 0; k < 16 / L; ++k) {
      lo[k] = ibatch<A>::load_aligned(l + k * L);
      hi[k] = ibatch<A>::load_aligned(u + k * L);
    }
  }

 private:
#if defined(__SSE4_1__) || defined(__AVX2__)
  /// 16 int8 levels -> 16 / lanes<A> int32 batches.
  static void widen_levels(__m128i v, ibatch<A>* out) noexcept {
    if constexpr (is_avx2<A>) {
      out[0] = _mm256_cvtepi8_epi32(v);
      out[1] = _mm256_cvtepi8_epi32(_mm_srli_si128(v, 8));
    } else {
      out[0] = _mm_cvtepi8_epi32(v);
      out[1] = _mm_cvtepi8_epi32(_mm_srli_si128(v, 4));
      out[2] = _mm_cvtepi8_epi32(_mm_srli_si128(v, 8));
      out[3] = _mm_cvtepi8_epi32(_mm_srli_si128(v, 12));
    }
  }
  __m128i bytes_{};
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  static void widen_levels(int8x16_t v, ibatch<A>* out) noexcept {
    const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_high_s8(v);
    out[0] = vmovl_s16(vget_low_s16(lo));
    out[1] = vmovl_high_s16(lo);
    out[2] = vmovl_s16(vget_low_s16(hi));
    out[3] = vmovl_high_s16(hi);
  }
  int8x16_t bytes_{};
#endif
  const std::int8_t* table_;
  const std::uint16_t* pairs_;
};

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_LOOKUP_HPP
