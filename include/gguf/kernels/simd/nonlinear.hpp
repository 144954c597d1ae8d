#ifndef GGUF_KERNELS_SIMD_NONLINEAR_HPP
#define GGUF_KERNELS_SIMD_NONLINEAR_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/detail/float_formats.hpp"
#include "gguf/detail/isa.hpp"
#include "gguf/detail/xsimd_compat.hpp"
#include "gguf/kernels/blocks.hpp"
#include "gguf/kernels/iq_tables.hpp"
#include "gguf/kernels/scalar/fp4.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the 4-bit table types: iq4_nl, iq4_xs (scalar/iq_quants.hpp) and mxfp4 (scalar/fp4.hpp).
// All three store 16 bytes per 32 weights, byte j holding weight j (low nibble) and weight j + 16 (high
// nibble), each nibble an index into a 16-entry int8 table; the weight is that level converted to float
// times a scale computed per 32 weights, in scalar code exactly as the scalar kernel computes it. One
// helper, nibble_decoder, turns 16 bytes and a scale into the 32 floats:
//  - AVX-512: the 16 products scale * float(level) are one vector (one multiply), and each weight is a
//    lane permute of it indexed by its nibble (vpermps reads only an index's low 4 bits, so the low
//    nibble needs no mask): per 16 weights one permute and one store.
//  - AVX2, SSE4.1, NEON: one byte shuffle (pshufb, tbl) of the 16 low and one of the 16 high nibbles
//    gives the int8 levels, widened to int32, converted and multiplied per vector.
//  - SSE2 (no byte shuffle): one 16-bit lookup per byte gives both its levels (a 256-entry table made
//    at compile time), then as above from the int8 levels.
//  - Otherwise: the 16 products in a small array, read by index.
// Every weight is scale * float(level) (or float(level) * scale: the same product), one rounding, as in
// the scalar kernels. mxfp4's two subnormal scales use products computed at compile time (see
// mxfp4_tiny below).

namespace detail_nonlinear {

/// An x86 target with byte shuffles and sign-extending loads (SSE4.1 and up), 4 or 8 lanes.
template <class A>
inline constexpr bool byte_shuffle_x86 = is_avx2<A> || is_sse41<A>;

/// The levels of both nibbles of every byte q, as a little-endian 16-bit word: table[q & 15] in the
/// low byte, table[q >> 4] in the high byte (the SSE2 path's one lookup per byte).
struct level_pairs {
  std::uint16_t v[256];
};
constexpr level_pairs make_level_pairs(const std::int8_t* table) noexcept {
  level_pairs p{};
  for (unsigned q = 0; q < 256; ++q) {
    p.v[q] = static_cast<std::uint16_t>(static_cast<std::uint8_t>(table[q & 15]) |
                                        (static_cast<unsigned>(static_cast<std::uint8_t>(table[q >> 4])) << 8));
  }
  return p;
}
inline constexpr level_pairs iq4nl_pairs = make_level_pairs(iq::kvalues_iq4nl.data());
inline constexpr level_pairs mxfp4_pairs = make_level_pairs(scalar::kvalues_mxfp4);

template <class A>
class nibble_decoder {
  static constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0);

 public:
  /// `pairs` = make_level_pairs(table).
  nibble_decoder(const std::int8_t* table, const level_pairs& pairs) noexcept : pairs_(pairs.v) {
    alignas(64) std::int32_t wide[16];
    for (int k = 0; k < 16; ++k) wide[k] = table[k];
    for (std::size_t k = 0; k < 16; k += L) levels_[k / L] = to_float<A>(ibatch<A>::load_aligned(wide + k));
#if defined(__SSE4_1__) || defined(__AVX2__)  // (MSVC defines only the latter)
    if constexpr (byte_shuffle_x86<A>) bytes_ = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table));
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
    if constexpr (is_neon64<A>) bytes_ = vld1q_s8(table);
#endif
  }

  /// dst[j] = scale * table[qs[j] & 15], dst[j + 16] = scale * table[qs[j] >> 4], j < 16.
  void operator()(float scale, const std::byte* qs, float* dst) const noexcept {
    const fbatch<A> d(scale);
#if defined(__AVX512F__) && defined(__AVX512BW__)
    if constexpr (is_avx512<A>) {
      permute32(levels_[0] * d, qs, dst);
      return;
    }
#endif
#if defined(__SSE4_1__) || defined(__AVX2__)
    if constexpr (byte_shuffle_x86<A>) {
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
      const __m128i low4 = _mm_set1_epi8(0x0F);
      const __m128i lo = _mm_shuffle_epi8(bytes_, _mm_and_si128(q, low4));
      const __m128i hi = _mm_shuffle_epi8(bytes_, _mm_and_si128(_mm_srli_epi16(q, 4), low4));
      put16(lo, d, dst);
      put16(hi, d, dst + 16);
      return;
    }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
    if constexpr (is_neon64<A>) {
      const uint8x16_t q = vld1q_u8(reinterpret_cast<const std::uint8_t*>(qs));
      put16(vqtbl1q_s8(bytes_, vandq_u8(q, vdupq_n_u8(0x0F))), d, dst);
      put16(vqtbl1q_s8(bytes_, vshrq_n_u8(q, 4)), d, dst + 16);
      return;
    }
#endif
#if defined(__SSE2__) || defined(_M_X64)
    if constexpr (is_sse2_only<A>) {
      put32_sse2(qs, d, dst);
      return;
    }
#endif
    alignas(64) float products[16];
    for (std::size_t k = 0; k < 16; k += L) (levels_[k / L] * d).store_aligned(products + k);
    lookup(products, qs, dst);
  }

  /// dst[j] = products[qs[j] & 15], dst[j + 16] = products[qs[j] >> 4], j < 16: for products computed
  /// beforehand (the rare scales whose products are subnormal, which are slow to compute on some CPUs).
  void operator()(const float* products, const std::byte* qs, float* dst) const noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
    if constexpr (is_avx512<A>) {
      permute32(_mm512_loadu_ps(products), qs, dst);
      return;
    }
#endif
    lookup(products, qs, dst);
  }

 private:
  static void lookup(const float* products, const std::byte* qs, float* dst) noexcept {
    for (int j = 0; j < 16; ++j) {
      const unsigned q = detail::u8(qs + j);
      dst[j] = products[q & 0x0Fu];
      dst[j + 16] = products[q >> 4];
    }
  }
#if defined(__SSE2__) || defined(_M_X64)
  /// SSE2: one 16-bit pair lookup per byte (pinsrw), then the low and the high levels split apart and
  /// sign-extended with shifts.
  template <class Q = A>
  void put32_sse2(const std::byte* qs, const fbatch<Q>& d, float* dst) const noexcept {
    __m128i w[2];
    for (int h = 0; h < 2; ++h) {
      const std::byte* q = qs + 8 * h;
      __m128i v = _mm_cvtsi32_si128(pairs_[detail::u8(q)]);
      v = _mm_insert_epi16(v, pairs_[detail::u8(q + 1)], 1);
      v = _mm_insert_epi16(v, pairs_[detail::u8(q + 2)], 2);
      v = _mm_insert_epi16(v, pairs_[detail::u8(q + 3)], 3);
      v = _mm_insert_epi16(v, pairs_[detail::u8(q + 4)], 4);
      v = _mm_insert_epi16(v, pairs_[detail::u8(q + 5)], 5);
      v = _mm_insert_epi16(v, pairs_[detail::u8(q + 6)], 6);
      w[h] = _mm_insert_epi16(v, pairs_[detail::u8(q + 7)], 7);
    }
    for (int h = 0; h < 2; ++h) {
      const __m128i lo = _mm_srai_epi16(_mm_slli_epi16(w[h], 8), 8), hi = _mm_srai_epi16(w[h], 8);
      // int16 -> int32: each word into the top half of a dword, then an arithmetic shift back.
      const __m128i zero = _mm_setzero_si128();
      (to_float<Q>(_mm_srai_epi32(_mm_unpacklo_epi16(zero, lo), 16)) * d).store_unaligned(dst + 8 * h);
      (to_float<Q>(_mm_srai_epi32(_mm_unpackhi_epi16(zero, lo), 16)) * d).store_unaligned(dst + 8 * h + 4);
      (to_float<Q>(_mm_srai_epi32(_mm_unpacklo_epi16(zero, hi), 16)) * d).store_unaligned(dst + 16 + 8 * h);
      (to_float<Q>(_mm_srai_epi32(_mm_unpackhi_epi16(zero, hi), 16)) * d).store_unaligned(dst + 16 + 8 * h + 4);
    }
  }
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__)
  /// Weight j is lane (nibble j) of products; vpermps reads only an index's low 4 bits.
  static void permute32(__m512 products, const std::byte* qs, float* dst) noexcept {
    const __m512i idx = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
    _mm512_storeu_ps(dst, _mm512_permutexvar_ps(idx, products));
    _mm512_storeu_ps(dst + 16, _mm512_permutexvar_ps(_mm512_srli_epi32(idx, 4), products));
  }
#endif
#if defined(__SSE4_1__) || defined(__AVX2__)
  /// 16 int8 levels -> 16 floats times d at dst.
  template <class Q = A>
  static void put16(__m128i v, const fbatch<Q>& d, float* dst) noexcept {
    if constexpr (is_avx2<Q>) {
      (to_float<Q>(_mm256_cvtepi8_epi32(v)) * d).store_unaligned(dst);
      (to_float<Q>(_mm256_cvtepi8_epi32(_mm_srli_si128(v, 8))) * d).store_unaligned(dst + 8);
    } else {
      (to_float<Q>(_mm_cvtepi8_epi32(v)) * d).store_unaligned(dst);
      (to_float<Q>(_mm_cvtepi8_epi32(_mm_srli_si128(v, 4))) * d).store_unaligned(dst + 4);
      (to_float<Q>(_mm_cvtepi8_epi32(_mm_srli_si128(v, 8))) * d).store_unaligned(dst + 8);
      (to_float<Q>(_mm_cvtepi8_epi32(_mm_srli_si128(v, 12))) * d).store_unaligned(dst + 12);
    }
  }
  __m128i bytes_{};
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  template <class Q = A>
  static void put16(int8x16_t v, const fbatch<Q>& d, float* dst) noexcept {
    const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_high_s8(v);
    (to_float<Q>(vmovl_s16(vget_low_s16(lo))) * d).store_unaligned(dst);
    (to_float<Q>(vmovl_high_s16(lo)) * d).store_unaligned(dst + 4);
    (to_float<Q>(vmovl_s16(vget_low_s16(hi))) * d).store_unaligned(dst + 8);
    (to_float<Q>(vmovl_high_s16(hi)) * d).store_unaligned(dst + 12);
  }
  int8x16_t bytes_{};
#endif
  const std::uint16_t* pairs_;  ///< make_level_pairs(table) (SSE2)
  fbatch<A> levels_[16 / L];    ///< float(table[k]), lanes<A> at a time
};

}  // namespace detail_nonlinear

/// iq4_nl: 32 weights, d * level(nibble).
template <class A>
void dequant_iq4_nl(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq4_nl;
  const detail_nonlinear::nibble_decoder<A> decode(iq::kvalues_iq4nl.data(), detail_nonlinear::iq4nl_pairs);
  std::size_t i = 0;
  for (; i + 2 <= nb; i += 2, src += 2 * sizeof(B), dst += 64) {  // two blocks a turn: half the loop overhead
    const float d0 = half_scale(src + offsetof(B, d)), d1 = half_scale(src + sizeof(B) + offsetof(B, d));
    decode(d0, src + offsetof(B, qs), dst);
    decode(d1, src + sizeof(B) + offsetof(B, qs), dst + 32);
  }
  if (i < nb) decode(half_scale(src + offsetof(B, d)), src + offsetof(B, qs), dst);
}

/// iq4_xs: 256 weights; per 32, the scale d * (ls - 32) with the 6-bit ls from scales_l and scales_h.
template <class A>
void dequant_iq4_xs(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq4_xs;
  const detail_nonlinear::nibble_decoder<A> decode(iq::kvalues_iq4nl.data(), detail_nonlinear::iq4nl_pairs);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += blocks::qk_k) {
    const float d = half_scale(src + offsetof(B, d));
    const unsigned scales_h = detail::le16(src + offsetof(B, scales_h));
    const std::uint32_t scales_l = detail::le32(src + offsetof(B, scales_l));  // nibble ib = low bits of ls
    const std::byte* qs = src + offsetof(B, qs);
    for (unsigned ib = 0; ib < 8; ++ib) {
      const int ls = static_cast<int>(((scales_l >> (4 * ib)) & 0xFu) | (((scales_h >> (2 * ib)) & 3u) << 4));
      decode(d * static_cast<float>(ls - 32), qs + 16 * ib, dst + 32 * ib);
    }
  }
}

namespace detail_nonlinear {
/**
 * mxfp4's products float(level) * scale for the E8M0 bytes 0 and 1, whose halved scales 2^-128 and
 * 2^-127 are float subnormals (ggml writes e = 0 for every all-zero block): computed here at compile
 * time, because multiplying by a subnormal at run time is slow on some x86 CPUs (on the AMD Zen 5 this
 * was measured on, the benchmark tensor, one such block in eight, ran ~3x slower). Every such product
 * is exact (a small integer times a power of two no smaller than the least subnormal), so it has the
 * same bits however it is computed.
 */
struct mxfp4_tiny_products {
  alignas(64) float v[2][16];
};
inline constexpr mxfp4_tiny_products mxfp4_tiny = [] {
  mxfp4_tiny_products t{};
  for (int e = 0; e < 2; ++e)
    for (int k = 0; k < 16; ++k)
      t.v[e][k] =
          static_cast<float>(scalar::kvalues_mxfp4[k]) * detail::e8m0_to_float_half(static_cast<std::uint8_t>(e));
  return t;
}();

template <class A>
inline void mxfp4_block(const nibble_decoder<A>& decode, const std::byte* src, float* dst) noexcept {
  using B = blocks::mxfp4;
  const std::uint8_t e = detail::u8(src + offsetof(B, e));
  if (e < 2) [[unlikely]] {
    decode(mxfp4_tiny.v[e], src + offsetof(B, qs), dst);
  } else {
    decode(detail::e8m0_to_float_half(e), src + offsetof(B, qs), dst);
  }
}
}  // namespace detail_nonlinear

/// mxfp4: 32 weights, float(E2M1 level, doubled) * the halved E8M0 scale.
template <class A>
void dequant_mxfp4(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::mxfp4;
  const detail_nonlinear::nibble_decoder<A> decode(scalar::kvalues_mxfp4, detail_nonlinear::mxfp4_pairs);
  std::size_t i = 0;
  for (; i + 2 <= nb; i += 2, src += 2 * sizeof(B), dst += 64) {
    detail_nonlinear::mxfp4_block<A>(decode, src, dst);
    detail_nonlinear::mxfp4_block<A>(decode, src + sizeof(B), dst + 32);
  }
  if (i < nb) detail_nonlinear::mxfp4_block<A>(decode, src, dst);
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_NONLINEAR_HPP
