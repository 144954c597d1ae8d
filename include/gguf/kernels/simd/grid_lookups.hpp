#ifndef GGUF_KERNELS_SIMD_GRID_LOOKUPS_HPP
#define GGUF_KERNELS_SIMD_GRID_LOOKUPS_HPP

#include <array>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/derived_tables.hpp"
#include "gguf/kernels/scalar/iq_quants.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// The ops of the grid types by code rows (iq_codes.hpp): each block's row indices, sign bits and scales
// (and the 4-weight rows' codes), made before its weights. Like ops.hpp, the one other home of
// intrinsics: AVX-512 builds them with vector operations (16 or 32 lanes a step, the grid lookups of
// 4-weight rows in registers), every other instruction set with scalar code of the same result.

namespace detail {

/// One block's lookups for the code kernels.
struct grid_lookups {
  alignas(64) std::uint16_t row[64];    ///< each row's index in its code table (rows of 8 weights)
  alignas(64) std::uint16_t code[64];   ///< each row's codes, already looked up (rows of 4 weights; on
                                        ///< AVX-512 with each weight's sign as bit 3 of its code)
  alignas(64) std::uint16_t signs[16];  ///< bit j of signs[k]: weight 16 k + j is negated (the signed types)
  alignas(64) float scale[16];          ///< the scale of weights 16 k .. 16 k + 15
};

#if defined(__AVX512F__) && defined(__AVX512BW__)
/// Lanes of 7-bit sign fields f made ggml's sign bytes ksigns_iq2xs[f]: f and its parity in bit 7.
inline __m512i avx512_sign_bytes16(__m512i f) noexcept {  // 16-bit lanes
  __m512i x = _mm512_xor_si512(f, _mm512_srli_epi16(f, 4));
  x = _mm512_xor_si512(x, _mm512_srli_epi16(x, 2));
  x = _mm512_xor_si512(x, _mm512_srli_epi16(x, 1));
  return _mm512_or_si512(f, _mm512_slli_epi16(_mm512_and_si512(x, _mm512_set1_epi16(1)), 7));
}

/**
 * The signs and scales of iq3_xxs from its 8 32-bit words (four 7-bit sign fields, a 4-bit sub-scale on
 * top): the sign byte of group g (returned, byte g) from field g % 4 of word g / 4; the scale
 * d * (0.5 + s) * step of each 32 weights, twice.
 */
inline __m256i avx512_aux_signs_scales(__m256i aux, float d, float step, grid_lookups& out) noexcept {
  const __m512i w = _mm512_castsi256_si512(aux);
  __m512i f[2];
  for (int h = 0; h < 2; ++h) {  // groups 16 h ..: dword lanes, then narrowed to words
    const __m512i lane = _mm512_permutexvar_epi32(
        _mm512_add_epi32(_mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0), _mm512_set1_epi32(4 * h)),
        w);
    f[h] = _mm512_and_si512(_mm512_srlv_epi32(lane, _mm512_set4_epi32(21, 14, 7, 0)), _mm512_set1_epi32(127));
  }
  const __m512i fields =
      _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(f[0])), _mm512_cvtepi32_epi16(f[1]), 1);
  const __m256i signs = _mm512_cvtepi16_epi8(avx512_sign_bytes16(fields));
  const __m256 s = _mm256_cvtepi32_ps(_mm256_srli_epi32(aux, 28));
  const __m256 db =
      _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(d), _mm256_add_ps(_mm256_set1_ps(0.5f), s)), _mm256_set1_ps(step));
  _mm512_store_ps(out.scale, _mm512_permutexvar_ps(_mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0),
                                                   _mm512_castps256_ps512(db)));
  return signs;
}

/// The scales d * (0.5 + s) * step of 16 weights each, s the 16 nibbles of the 8 bytes at p, low first.
inline void avx512_nibble_scales(const std::byte* p, float d, float step, grid_lookups& out) noexcept {
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
inline __m512i avx512_lookup_words(const std::array<std::uint16_t, N>& t, __m512i idx) noexcept {
  static_assert(N >= 64 && (N & (N - 1)) == 0);
  __m512i r[N / 64];
  for (std::size_t c = 0; c < N / 64; ++c) {
    r[c] = _mm512_permutex2var_epi16(_mm512_loadu_si512(t.data() + 64 * c), idx,
                                     _mm512_loadu_si512(t.data() + 64 * c + 32));
  }
  for (std::size_t n = N / 64, bit = 64; n > 1; n /= 2, bit *= 2) {
    const __mmask32 high = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(static_cast<short>(bit)));
    for (std::size_t c = 0; c < n / 2; ++c) r[c] = _mm512_mask_blend_epi16(high, r[2 * c], r[2 * c + 1]);
  }
  return r[0];
}

/**
 * Rows 32 h .. 32 h + 31 of 4 weights looked up in `codes` (avx512_lookup_words), the signs of their
 * weights (32 sign bytes, bit j of byte g: weight 8 g + j) as bit 3 of each code: row r's 4 sign bits
 * (a nibble of byte r / 2) spread to bits 3, 7, 11, 15 by a word permute of a 16-entry table.
 */
template <std::size_t N>
inline __m512i avx512_signed_codes4(const std::array<std::uint16_t, N>& codes, __m512i rows, __m256i sign_bytes,
                                    unsigned h) noexcept {
  alignas(64) static constexpr std::array<std::uint16_t, 32> spread = [] {
    std::array<std::uint16_t, 32> t{};  // index bit 4 (the next nibble's bit 0) ignored
    for (unsigned s = 0; s < 32; ++s) {
      for (unsigned b = 0; b < 4; ++b) t[s] = static_cast<std::uint16_t>(t[s] | ((s >> b) & 1u) << (4 * b + 3));
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
  return _mm512_or_si512(avx512_lookup_words(codes, rows),
                         _mm512_permutexvar_epi16(nibbles, _mm512_load_si512(spread.data())));
}
#endif

/// Looks the 64 rows of 4 weights up in `codes`, the scalar twin of avx512_lookup_words.
template <std::size_t N>
inline void lookup_codes4(const std::array<std::uint16_t, N>& codes, grid_lookups& out) noexcept {
  for (unsigned r = 0; r < 64; ++r) out.code[r] = codes[out.row[r]];
}

/// Scalar twin of avx512_aux_signs_scales.
inline void aux_signs_scales(const std::byte* aux, float d, float step, grid_lookups& out) noexcept {
  for (unsigned ib = 0; ib < 8; ++ib) {
    const auto w = load_le<std::uint32_t>(aux + 4 * ib);
    for (unsigned p = 0; p < 2; ++p) {
      out.signs[2 * ib + p] = static_cast<std::uint16_t>(tables::ksigns_iq2xs[(w >> (14 * p)) & 127] |
                                                         tables::ksigns_iq2xs[(w >> (14 * p + 7)) & 127] << 8);
      out.scale[2 * ib + p] = scalar::detail::half_step_scale(d, w >> 28, step);
    }
  }
}

/// Scalar twin of avx512_nibble_scales.
inline void nibble_scales(const std::byte* p, float d, float step, grid_lookups& out) noexcept {
  for (unsigned k = 0; k < 16; ++k) {
    out.scale[k] = scalar::detail::half_step_scale(d, (load_le<std::uint8_t>(p + k / 2) >> (4 * (k % 2))) & 15u, step);
  }
}

/// Copies the 32 stored sign bytes at p (iq2_s, iq3_s).
template <class A>
inline void copy_signs(const std::byte* p, grid_lookups& out) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {  // x86: the words are little-endian already
    _mm256_store_si256(reinterpret_cast<__m256i*>(out.signs), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return;
  }
#endif
  for (unsigned k = 0; k < 16; ++k) out.signs[k] = load_le<std::uint16_t>(p + 2 * k);
}

/// iq2_xs: per group a 16-bit word, a 9-bit row and a 7-bit sign field; a 4-bit sub-scale per 16.
template <class A>
inline void iq2xs_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq2_xs;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* scales = src + offsetof(B, scales);
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {
    const __m512i w = _mm512_loadu_si512(qs);
    _mm512_store_si512(out.row, _mm512_and_si512(w, _mm512_set1_epi16(511)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out.signs),
                       _mm512_cvtepi16_epi8(avx512_sign_bytes16(_mm512_srli_epi16(w, 9))));
    avx512_nibble_scales(scales, d, 0.25f, out);
    return;
  }
#endif
  for (unsigned g = 0; g < 32; g += 2) {
    const unsigned w0 = load_le<std::uint16_t>(qs + 2 * g), w1 = load_le<std::uint16_t>(qs + 2 * g + 2);
    out.row[g] = static_cast<std::uint16_t>(w0 & 511u);
    out.row[g + 1] = static_cast<std::uint16_t>(w1 & 511u);
    out.signs[g / 2] = static_cast<std::uint16_t>(tables::ksigns_iq2xs[w0 >> 9] | tables::ksigns_iq2xs[w1 >> 9] << 8);
  }
  nibble_scales(scales, d, 0.25f, out);
}

/// iq2_s: 10-bit rows (a byte of qs, 2 bits of qh), the 32 sign bytes stored; a 4-bit sub-scale per 16.
template <class A>
inline void iq2s_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq2_s;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* qh = src + offsetof(B, qh);
  const std::byte* scales = src + offsetof(B, scales);
  copy_signs<A>(qs + 32, out);
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {
    // Word g: byte g / 4 of qh, its bits 2 (g % 4) and up moved to bits 8-9, or'ed onto byte g of qs.
    const __m512i h = _mm512_permutexvar_epi16(
        _mm512_set_epi16(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0,
                         0),
        _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qh)))));
    const __m512i high =
        _mm512_and_si512(_mm512_sllv_epi16(h, _mm512_set4_epi32(0x00020004, 0x00060008, 0x00020004, 0x00060008)),
                         _mm512_set1_epi16(0x300));
    _mm512_store_si512(
        out.row, _mm512_or_si512(high, _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)))));
    avx512_nibble_scales(scales, d, 0.25f, out);
    return;
  }
#endif
  for (unsigned g = 0; g < 32; ++g) {
    out.row[g] = static_cast<std::uint16_t>(load_le<std::uint8_t>(qs + g) |
                                            ((load_le<std::uint8_t>(qh + g / 4) >> (2 * (g % 4))) & 3u) << 8);
  }
  nibble_scales(scales, d, 0.25f, out);
}

/// iq3_xxs: 64 index bytes of 4-weight rows, then per 32 weights a word of sign fields and sub-scale.
template <class A>
inline void iq3xxs_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq3_xxs;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {
    const __m256i signs =
        avx512_aux_signs_scales(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 64)), d, 0.5f, out);
    for (unsigned h = 0; h < 2; ++h) {
      const __m512i row = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * h)));
      _mm512_store_si512(out.code + 32 * h, avx512_signed_codes4(tables::iq3xxs_codes, row, signs, h));
    }
    return;
  }
#endif
  for (unsigned r = 0; r < 64; ++r) out.row[r] = load_le<std::uint8_t>(qs + r);
  lookup_codes4(tables::iq3xxs_codes, out);
  aux_signs_scales(qs + 64, d, 0.5f, out);
}

/// iq3_s: 9-bit rows of 4 weights (a byte of qs, a bit of qh), 32 sign bytes, an odd sub-scale per 32.
template <class A>
inline void iq3s_lookups(const std::byte* src, grid_lookups& out) noexcept {
  using B = blocks::iq3_s;
  const float d = half_scale(src + offsetof(B, d));
  const std::byte* qs = src + offsetof(B, qs);
  const std::byte* qh = src + offsetof(B, qh);
  const std::byte* scales = src + offsetof(B, scales);
  const std::byte* signs = src + offsetof(B, signs);
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {  // bit r of the 64-bit qh is row r's ninth bit (added: below it the byte)
    // Lane k: nibble k / 2 of the 4 scale bytes (weights 32 (k / 2) ..), d * (1 + 2 s).
    const __m512i bytes = _mm512_permutexvar_epi32(
        _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
        _mm512_castsi128_si512(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(load_le<std::uint32_t>(scales))))));
    const __m512i sc = _mm512_and_si512(_mm512_srlv_epi32(bytes, _mm512_set4_epi32(4, 4, 0, 0)), _mm512_set1_epi32(15));
    const __m512i odd = _mm512_or_si512(_mm512_slli_epi32(sc, 1), _mm512_set1_epi32(1));
    _mm512_store_ps(out.scale, _mm512_mul_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(odd)));
    const auto h = load_le<std::uint64_t>(qh);
    const __m256i sign_bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(signs));
    for (unsigned half = 0; half < 2; ++half) {
      const __m512i low = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * half)));
      const __m512i row =
          _mm512_mask_add_epi16(low, static_cast<__mmask32>(h >> (32 * half)), low, _mm512_set1_epi16(0x100));
      _mm512_store_si512(out.code + 32 * half, avx512_signed_codes4(tables::iq3s_codes, row, sign_bytes, half));
    }
    return;
  }
#endif
  for (unsigned k = 0; k < 16; ++k) {
    out.scale[k] = d * static_cast<float>(1 + 2 * ((load_le<std::uint8_t>(scales + k / 4) >> (4 * (k / 2 % 2))) & 15u));
  }
  for (unsigned r = 0; r < 64; ++r) {
    out.row[r] = static_cast<std::uint16_t>(load_le<std::uint8_t>(qs + r) |
                                            (((load_le<std::uint8_t>(qh + r / 8) >> (r % 8)) & 1u) << 8));
  }
  lookup_codes4(tables::iq3s_codes, out);
  copy_signs<A>(signs, out);
}

/// iq1_s: rows qs | 3 bits of qh << 8 | the delta's sign << 11 (tables::iq1_codes); dl per 32, twice.
template <class A>
inline void iq1s_lookups(const std::byte* src, grid_lookups& out) noexcept {
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
    _mm512_store_ps(out.scale, _mm512_mul_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(odd)));
    return;
  }
#endif
  for (unsigned g = 0; g < 32; ++g) {
    const unsigned h = load_le<std::uint16_t>(qh + 2 * (g / 4));
    out.row[g] = static_cast<std::uint16_t>(load_le<std::uint8_t>(qs + g) | (((h >> (3 * (g % 4))) & 7u) << 8) |
                                            ((h >> 4) & 0x800u));
  }
  for (unsigned k = 0; k < 16; ++k) {
    out.scale[k] = d * static_cast<float>(2 * ((load_le<std::uint16_t>(qh + 2 * (k / 2)) >> 12) & 7u) + 1);
  }
}

/// iq1_m: rows qs | qh nibble << 8 (3 index bits and the delta's sign); dl = d * (2 s + 1) per 16.
template <class A>
inline void iq1m_lookups(const std::byte* src, grid_lookups& out) noexcept {
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
    _mm512_store_ps(out.scale, _mm512_mul_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(odd)));
    return;
  }
#endif
  for (unsigned g = 0; g < 32; ++g) {
    const unsigned nibble = (load_le<std::uint8_t>(qh + g / 2) >> (4 * (g % 2))) & 15u;
    out.row[g] = static_cast<std::uint16_t>(load_le<std::uint8_t>(qs + g) | (nibble << 8));
  }
  for (unsigned k = 0; k < 16; ++k) {
    out.scale[k] = d * static_cast<float>(2 * ((scales.sc[k / 4] >> (3 * (k % 4))) & 7u) + 1);
  }
}

}  // namespace detail

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_GRID_LOOKUPS_HPP
