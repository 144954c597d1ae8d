#ifndef GGUF_KERNELS_SIMD_OPS_AVX512_GRID_LOOKUPS_HPP
#define GGUF_KERNELS_SIMD_OPS_AVX512_GRID_LOOKUPS_HPP

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/derived_tables.hpp"
#include "gguf/kernels/iq_grid/dequantize.hpp"
#include "gguf/kernels/simd/ops/convert.hpp"
#include "gguf/kernels/simd/ops/intrinsics.hpp"
#include "gguf/kernels/simd/ops/unroll.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd::detail {

// The ops of the grid types by code rows (iq_grid/code_rows_simd.hpp, AVX-512 only): each block's row indices, sign
// bits and scales (and the 4-weight rows' codes), made before its weights with vector operations (16 or
// 32 lanes a step, the grid lookups of 4-weight rows in registers). Like the other ops headers, a home
// of intrinsics. What each computes is what the scalar kernels (iq_grid/dequantize.hpp) compute per group,
// which the ISA-vs-scalar tests hold the code kernels to.

/// One block's lookups for the code kernels.
struct grid_lookups {
  alignas(64) std::uint16_t row[64];    ///< each row's index in its code table (rows of 8 weights)
  alignas(64) std::uint16_t code[64];   ///< the codes of rows of 4 weights, already looked up: per 16
                                        ///< weights a 64-bit word in paired order (the 4 rows' even
                                        ///< halves, then their odd halves); on AVX-512 with each
                                        ///< weight's sign as bit 3 of its code
  alignas(64) std::uint16_t signs[16];  ///< bit j of signs[k]: weight 16 k + j is negated (the signed types)
  alignas(64) float scale[16];          ///< the scale of each run of weights that has one: weights
                                        ///< 16 k .. 16 k + 15 (iq2_xs, iq2_s, iq1_m) or 32 k .. 32 k
                                        ///< + 31 (iq3_xxs, iq3_s, iq1_s; 8 scales)
};

#if GGUF_SIMD_AVX512
/**
 * 32 byte lanes of 7-bit sign fields f made ggml's sign bytes ksigns_iq2xs[f]: f and its parity in bit
 * 7, the parities of its two nibbles looked up (vpshufb) and xor'ed, in 256-bit operations (16-bit lanes
 * and shifts would take three times the instructions).
 */
GGUF_SIMD_INLINE __m256i avx512_sign_bytes(__m256i f) noexcept {
  const __m256i parity = _mm256_broadcastsi128_si256(
      _mm_setr_epi8(0, -128, -128, 0, -128, 0, 0, -128, -128, 0, 0, -128, 0, -128, -128, 0));  // parity(n) << 7
  const __m256i low = _mm256_and_si256(f, _mm256_set1_epi8(15));
  const __m256i high = _mm256_and_si256(_mm256_srli_epi16(f, 4), _mm256_set1_epi8(15));
  return _mm256_ternarylogic_epi32(f, _mm256_shuffle_epi8(parity, low), _mm256_shuffle_epi8(parity, high),
                                   0xF6);  // f | (a ^ b)
}

/**
 * The signs and scales of iq3_xxs from its 8 32-bit words (four 7-bit sign fields, a 4-bit sub-scale on
 * top): the sign byte of group g (returned, byte g) from field g % 4 of word g / 4; the scale
 * d * (0.5 + s) * step of each 32 weights.
 */
GGUF_SIMD_INLINE __m256i avx512_aux_signs_scales(__m256i aux, float d, float step, grid_lookups& out) noexcept {
  // Field k of each word (bits 7 k .. 7 k + 6) into its byte k: byte k of the word shifted left by k.
  __m256i fields = _mm256_mask_blend_epi8(0x22222222, aux, _mm256_slli_epi32(aux, 1));
  fields = _mm256_mask_blend_epi8(0x44444444, fields, _mm256_slli_epi32(aux, 2));
  fields = _mm256_mask_blend_epi8(0x88888888, fields, _mm256_slli_epi32(aux, 3));
  const __m256i signs = avx512_sign_bytes(_mm256_and_si256(fields, _mm256_set1_epi8(127)));
  const __m256 s = _mm256_cvtepi32_ps(_mm256_srli_epi32(aux, 28));
  const __m256 db =
      _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(d), _mm256_add_ps(_mm256_set1_ps(0.5f), s)), _mm256_set1_ps(step));
  _mm256_store_ps(out.scale, db);
  return signs;
}

/// The scales d * (0.5 + s) * step of 16 weights each, s the 16 nibbles of the 8 bytes at p, low first.
GGUF_SIMD_INLINE void avx512_nibble_scales(const std::byte* p, float d, float step, grid_lookups& out) noexcept {
  const __m512i bytes = _mm512_permutexvar_epi32(
      _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0),
      _mm512_castsi256_si512(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))));
  const __m512i s = _mm512_and_si512(_mm512_srlv_epi32(bytes, _mm512_set4_epi32(4, 0, 4, 0)), _mm512_set1_epi32(15));
  _mm512_store_ps(out.scale, _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(d),
                                                         _mm512_add_ps(_mm512_set1_ps(0.5f), _mm512_cvtepi32_ps(s))),
                                           _mm512_set1_ps(step)));
}

/**
 * Entry idx of the N-word table t for each of 32 word lanes (idx < N, N = 64 2^k): the table in
 * registers, 64 words a two-register permute (vpermi2w), the chunks then merged pairwise by index bits
 * 6, 7, ... (a tree of masked blends). A 16-bit code table of 256 or 512 rows costs 9 or 18 operations
 * per 32 rows here, where loading each row costs an index and a row load per 4 weights, which bound the
 * kernels of the 4-weight rows.
 */
template <std::size_t N>
GGUF_SIMD_INLINE __m512i avx512_lookup_words(const std::array<std::uint16_t, N>& t, __m512i idx) noexcept {
  static_assert(N >= 64 && (N & (N - 1)) == 0);
  // Unrolled by hand, so r is registers: GCC at -O2 kept these loops, and r in memory.
  constexpr std::size_t chunks = N / 64;
  constexpr int levels = std::countr_zero(chunks);
  __m512i r[chunks];
  unroll<static_cast<int>(chunks)>([&](auto c) GGUF_SIMD_INLINE_LAMBDA {
    r[c] = _mm512_permutex2var_epi16(_mm512_loadu_si512(t.data() + 64 * c), idx,
                                     _mm512_loadu_si512(t.data() + 64 * c + 32));
  });
  unroll<levels>([&](auto level) GGUF_SIMD_INLINE_LAMBDA {  // chunks >> level left, merged by bit 6 + level
    const __mmask32 high = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(static_cast<short>(64 << level)));
    unroll<static_cast<int>((chunks >> level) / 2)>(
        [&](auto c) GGUF_SIMD_INLINE_LAMBDA { r[c] = _mm512_mask_blend_epi16(high, r[2 * c], r[2 * c + 1]); });
  });
  return r[0];
}

/**
 * Rows 32 h .. 32 h + 31 of 4 weights looked up in `codes` (avx512_lookup_words), the signs of their
 * weights (32 sign bytes, bit j of byte g: weight 8 g + j) as bit 3 of each code: row r's 4 sign bits
 * (a nibble of byte r / 2) spread to bit 3 of the nibbles that hold weights 0, 1, 2, 3 in paired order
 * (bits 3, 11, 7, 15) by a word permute of a 16-entry table; then the bytes of each 4 rows reordered
 * into the paired word of their 16 weights (even halves first).
 */
template <std::size_t N>
GGUF_SIMD_INLINE __m512i avx512_signed_codes4(const std::array<std::uint16_t, N>& codes, __m512i rows,
                                              __m256i sign_bytes, unsigned h) noexcept {
  alignas(64) static constexpr std::array<std::uint16_t, 32> spread = [] {
    std::array<std::uint16_t, 32> t{};  // index bit 4 (the next nibble's bit 0) ignored
    for (unsigned s = 0; s < 32; ++s) {
      for (unsigned j = 0; j < 4; ++j) {
        t[s] = static_cast<std::uint16_t>(t[s] | ((s >> j) & 1u) << (4 * tables::paired_nibble(j, 4) + 3));
      }
    }
    return t;
  }();
  const __m512i bytes = _mm512_cvtepu8_epi16(sign_bytes);  // word g: sign byte g
  const __m512i pairs =
      _mm512_permutexvar_epi16(_mm512_add_epi16(_mm512_set_epi16(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9,
                                                                 8, 8, 7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0),
                                                _mm512_set1_epi16(static_cast<short>(16 * h))),
                               bytes);
  const __m512i nibbles = _mm512_srlv_epi16(pairs, _mm512_set1_epi32(0x00040000));
  const __m512i signed_rows = _mm512_or_si512(avx512_lookup_words(codes, rows),
                                              _mm512_permutexvar_epi16(nibbles, _mm512_load_si512(spread.data())));
  return _mm512_shuffle_epi8(signed_rows, _mm512_set4_epi32(0x0F0D0B09, 0x0E0C0A08, 0x07050301, 0x06040200));
}

/// Copies the 32 stored sign bytes at p (iq2_s): x86 is little-endian, so they are the sign words.
GGUF_SIMD_INLINE void avx512_copy_signs(const std::byte* p, grid_lookups& out) noexcept {
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.signs), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

/// iq2_xs: per group a 16-bit word, a 9-bit row and a 7-bit sign field; a 4-bit sub-scale per 16.
GGUF_SIMD_INLINE void iq2xs_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq2_xs;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* scales = src + offsetof(B, scales);
  const __m512i w = _mm512_loadu_si512(qs);
  _mm512_store_si512(out.row, _mm512_and_si512(w, _mm512_set1_epi16(511)));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.signs),
                     avx512_sign_bytes(_mm512_cvtepi16_epi8(_mm512_srli_epi16(w, 9))));
  avx512_nibble_scales(scales, d, 0.25f, out);
}

/// iq2_s: 10-bit rows (a byte of qs, 2 bits of qh), the 32 sign bytes stored; a 4-bit sub-scale per 16.
GGUF_SIMD_INLINE void iq2s_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq2_s;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* qh = src + offsetof(B, qh);
  const std::byte* scales = src + offsetof(B, scales);
  avx512_copy_signs(qs + 32, out);
  // Word g: byte g / 4 of qh, its bits 2 (g % 4) and up moved to bits 8-9, or'ed onto byte g of qs.
  const __m512i h = _mm512_permutexvar_epi16(
      _mm512_set_epi16(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
      _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qh)))));
  const __m512i high =
      _mm512_and_si512(_mm512_sllv_epi16(h, _mm512_set4_epi32(0x00020004, 0x00060008, 0x00020004, 0x00060008)),
                       _mm512_set1_epi16(0x300));
  _mm512_store_si512(
      out.row, _mm512_or_si512(high, _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)))));
  avx512_nibble_scales(scales, d, 0.25f, out);
}

/// iq2_xxs: per 32 weights 4 index bytes of 8-weight rows and a word of sign fields and sub-scale.
GGUF_SIMD_INLINE void iq2xxs_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq2_xxs;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  // The index quads are the even 32-bit words of qs, the sign words the odd.
  const __m512i words = _mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15), _mm512_loadu_si512(qs));
  _mm512_store_si512(out.row, _mm512_cvtepu8_epi16(_mm512_castsi512_si256(words)));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.signs),
                     avx512_aux_signs_scales(_mm512_extracti64x4_epi64(words, 1), d, 0.25f, out));
}

/// iq3_xxs: 64 index bytes of 4-weight rows, then per 32 weights a word of sign fields and sub-scale.
GGUF_SIMD_INLINE void iq3xxs_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq3_xxs;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const __m256i signs =
      avx512_aux_signs_scales(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 64)), d, 0.5f, out);
  for (unsigned h = 0; h < 2; ++h) {
    const __m512i row = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * h)));
    _mm512_store_si512(out.code + 32 * h, avx512_signed_codes4(tables::iq3xxs_codes, row, signs, h));
  }
}

/// iq3_s: 9-bit rows of 4 weights (a byte of qs, a bit of qh), 32 sign bytes, an odd sub-scale per 32.
GGUF_SIMD_INLINE void iq3s_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq3_s;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* qh = src + offsetof(B, qh);
  const std::byte* scales = src + offsetof(B, scales);
  const std::byte* signs = src + offsetof(B, signs);
  // Lane k: nibble k of the 4 scale bytes (weights 32 k ..), d * (1 + 2 s).
  const __m256i sc =
      _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(load_le<std::uint32_t>(scales))),
                                         _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                       _mm256_set1_epi32(15));
  const __m256i odd = _mm256_or_si256(_mm256_slli_epi32(sc, 1), _mm256_set1_epi32(1));
  _mm256_store_ps(out.scale, _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(odd)));
  const auto h = load_le<std::uint64_t>(qh);  // bit r: row r's ninth bit (added: below it the byte)
  const __m256i sign_bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(signs));
  for (unsigned half = 0; half < 2; ++half) {
    const __m512i low = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * half)));
    const __m512i row =
        _mm512_mask_add_epi16(low, static_cast<__mmask32>(h >> (32 * half)), low, _mm512_set1_epi16(0x100));
    _mm512_store_si512(out.code + 32 * half, avx512_signed_codes4(tables::iq3s_codes, row, sign_bytes, half));
  }
}

/// iq1_s: rows qs | 3 bits of qh << 8 | the delta's sign << 11 (tables::iq1_codes); dl per 32.
GGUF_SIMD_INLINE void iq1s_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq1_s;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* qh = src + offsetof(B, qh);
  const __m128i words = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qh));
  // Word g: qh word g / 4, its bits 3 (g % 4) .. + 2 moved to bits 8-10 and its bit 15 to bit 11.
  const __m512i h = _mm512_permutexvar_epi16(
      _mm512_set_epi16(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
      _mm512_castsi128_si512(words));
  const __m512i index = _mm512_slli_epi16(
      _mm512_and_si512(_mm512_srlv_epi16(h, _mm512_set4_epi32(0x00090006, 0x00030000, 0x00090006, 0x00030000)),
                       _mm512_set1_epi16(7)),
      8);
  const __m512i sign = _mm512_and_si512(_mm512_srli_epi16(h, 4), _mm512_set1_epi16(0x800));
  const __m512i low = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)));
  _mm512_store_si512(out.row, _mm512_ternarylogic_epi32(index, sign, low, 0xFE));  // index | sign | low
  // Lane k: bits 12-14 of qh word k (weights 32 k ..), d * (2 s + 1).
  const __m256i s = _mm256_and_si256(_mm256_srli_epi32(_mm256_cvtepu16_epi32(words), 12), _mm256_set1_epi32(7));
  const __m256i odd = _mm256_or_si256(_mm256_slli_epi32(s, 1), _mm256_set1_epi32(1));
  _mm256_store_ps(out.scale, _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(odd)));
}

/// iq1_m: rows qs | qh nibble << 8 (3 index bits and the delta's sign); dl = d * (2 s + 1) per 16.
GGUF_SIMD_INLINE void iq1m_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq1_m;
  const scalar::detail::iq1m_scales scales(src + offsetof(B, scales));
  const float d = half_scale(scales.d_bits);
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* qh = src + offsetof(B, qh);
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
  _mm512_store_ps(out.scale, _mm512_mul_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(odd)));
}

#else
/// @cond INTERNAL
// Declared for the code kernels' definitions, which only AVX-512 instantiates (grid_codes).
void iq2xs_lookups(const std::byte* src, grid_lookups& out) noexcept;
void iq2s_lookups(const std::byte* src, grid_lookups& out) noexcept;
void iq2xxs_lookups(const std::byte* src, grid_lookups& out) noexcept;
void iq3xxs_lookups(const std::byte* src, grid_lookups& out) noexcept;
void iq3s_lookups(const std::byte* src, grid_lookups& out) noexcept;
void iq1s_lookups(const std::byte* src, grid_lookups& out) noexcept;
void iq1m_lookups(const std::byte* src, grid_lookups& out) noexcept;
/// @endcond
#endif

}  // namespace kernels::simd::detail
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_AVX512_GRID_LOOKUPS_HPP
