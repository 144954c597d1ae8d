#ifndef GGUF_DETAIL_XSIMD_COMPAT_HPP
#define GGUF_DETAIL_XSIMD_COMPAT_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "gguf/detail/float_formats.hpp"
#include "gguf/detail/isa.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
#include <arm_neon.h>
#endif

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

/**
 * The few operations the kernels need that xsimd does not offer in every version we support (8.1,
 * Debian's, lacks widening loads, byte shuffles and half conversion; 13 renamed bitwise_cast). Each
 * has an intrinsic path for the ISAs that have one, chosen at compile time from the batch's Arch, and a
 * portable fallback through memory. Everything else in the kernels is plain xsimd.
 */
template <class A>
using fbatch = xsimd::batch<float, A>;
template <class A>
using ibatch = xsimd::batch<std::int32_t, A>;

template <class A>
inline constexpr std::size_t lanes = fbatch<A>::size;

// Arch families (xsimd 8.1: avx512f derives from generic; 13: from avx2, hence most specific first).
template <class A>
inline constexpr bool is_avx512 =
#if defined(__AVX512F__) && defined(__AVX512BW__)
    std::is_base_of_v<xsimd::avx512f, A>;
#else
    false;
#endif
template <class A>
inline constexpr bool is_avx2 =
#if defined(__AVX2__)
    !is_avx512<A> && std::is_base_of_v<xsimd::avx2, A>;
#else
    false;
#endif
template <class A>
inline constexpr bool is_sse41 =
#if defined(__SSE4_1__)
    !is_avx512<A> && !is_avx2<A> && std::is_base_of_v<xsimd::sse4_1, A> && lanes<A> == 4;
#else
    false;
#endif
template <class A>
inline constexpr bool is_neon64 =
#if defined(__aarch64__) || defined(_M_ARM64)
    std::is_base_of_v<xsimd::neon64, A>;
#else
    false;
#endif

/** The int32 lanes reinterpreted as float bits. */
template <class A>
inline fbatch<A> as_float(const ibatch<A>& x) noexcept {
#if XSIMD_VERSION_MAJOR >= 9
  return xsimd::bitwise_cast<float>(x);
#else
  return xsimd::bitwise_cast<fbatch<A>>(x);
#endif
}

/** lanes<A> bytes at p, zero-extended to int32. */
template <class A>
inline ibatch<A> load_u8(const std::byte* p) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__SSE4_1__)
  if constexpr (is_sse41<A>) {
    std::int32_t w;
    std::memcpy(&w, p, 4);
    return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(w));
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    const uint16x8_t h = vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(w)));
    return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(h)));
  }
#endif
  alignas(64) std::int32_t tmp[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = detail::u8(p + i);
  return ibatch<A>::load_aligned(tmp);
}

/** lanes<A> bytes at p, sign-extended to int32. */
template <class A>
inline ibatch<A> load_i8(const std::byte* p) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__SSE4_1__)
  if constexpr (is_sse41<A>) {
    std::int32_t w;
    std::memcpy(&w, p, 4);
    return _mm_cvtepi8_epi32(_mm_cvtsi32_si128(w));
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    const int16x8_t h = vmovl_s8(vreinterpret_s8_u32(vdup_n_u32(w)));
    return vmovl_s16(vget_low_s16(h));
  }
#endif
  alignas(64) std::int32_t tmp[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = detail::i8(p + i);
  return ibatch<A>::load_aligned(tmp);
}

/** lanes<A> little-endian 16-bit words at p, zero-extended to int32. */
template <class A>
inline ibatch<A> load_u16(const std::byte* p) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__SSE4_1__)
  if constexpr (is_sse41<A>) return _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    return vreinterpretq_s32_u32(vmovl_u16(vreinterpret_u16_u8(vld1_u8(reinterpret_cast<const std::uint8_t*>(p)))));
  }
#endif
  alignas(64) std::int32_t tmp[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = detail::le16(p + 2 * i);
  return ibatch<A>::load_aligned(tmp);
}

/** lanes<A> IEEE halves at p as floats, exactly (subnormals, infinities, NaNs included). */
template <class A>
inline fbatch<A> load_half(const std::byte* p) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
#endif
#if defined(__AVX2__) && defined(__F16C__)
  if constexpr (is_avx2<A>) return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>)
    return vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(reinterpret_cast<const std::uint8_t*>(p))));
#endif
  alignas(64) float tmp[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = detail::half_to_float(detail::le16(p + 2 * i));
  return fbatch<A>::load_aligned(tmp);
}

/**
 * out[i] = table[idx[i]] for 16 indices below 16 (a 16-entry byte table: pshufb, tbl), for the
 * non-linear 4-bit types.
 */
template <class A>
inline void lookup16(const std::int8_t* table, const std::uint8_t* idx, std::int8_t* out) noexcept {
#if defined(__SSSE3__)
  if constexpr (is_avx512<A> || is_avx2<A> || is_sse41<A>) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table));
    const __m128i i = _mm_loadu_si128(reinterpret_cast<const __m128i*>(idx));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(t, i));
    return;
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    vst1q_s8(out, vqtbl1q_s8(vld1q_s8(table), vld1q_u8(idx)));
    return;
  }
#endif
  for (int i = 0; i < 16; ++i) out[i] = table[idx[i]];
}

/// x86 SSE2 without SSE4.1 (the x86-64 baseline), where the widening loads above fall back to memory.
template <class A>
inline constexpr bool is_sse2_only =
#if defined(__SSE2__) || defined(_M_X64)
    lanes<A> == 4 && !is_sse41<A> && std::is_base_of_v<xsimd::sse2, A>;
#else
    false;
#endif

#if defined(__SSE2__) || defined(_M_X64)
/// SSE2: the 16 bytes of x, zero- (Signed: sign-) extended into out[0..4), with unpacks only.
template <class A, bool Signed = false>
inline void unpack16_sse2(__m128i x, ibatch<A>* out) noexcept {
  if constexpr (Signed) {  // each byte to the top of its lane, then shifted down arithmetically
    const __m128i lo = _mm_unpacklo_epi8(x, x), hi = _mm_unpackhi_epi8(x, x);
    out[0] = _mm_srai_epi32(_mm_unpacklo_epi16(lo, lo), 24);
    out[1] = _mm_srai_epi32(_mm_unpackhi_epi16(lo, lo), 24);
    out[2] = _mm_srai_epi32(_mm_unpacklo_epi16(hi, hi), 24);
    out[3] = _mm_srai_epi32(_mm_unpackhi_epi16(hi, hi), 24);
  } else {
    const __m128i z = _mm_setzero_si128();
    const __m128i lo = _mm_unpacklo_epi8(x, z), hi = _mm_unpackhi_epi8(x, z);
    out[0] = _mm_unpacklo_epi16(lo, z);
    out[1] = _mm_unpackhi_epi16(lo, z);
    out[2] = _mm_unpacklo_epi16(hi, z);
    out[3] = _mm_unpackhi_epi16(hi, z);
  }
}
#endif

/**
 * The 16 bytes at p, zero- (Signed: sign-) extended into out[0 .. 16 / lanes<A>): the compat header's
 * widening loads, except on SSE2 without SSE4.1, where one load and unpacks serve 16 weights.
 */
template <class A, bool Signed = false>
inline void widen16(const std::byte* p, ibatch<A>* out) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse2_only<A>) {
    unpack16_sse2<A, Signed>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), out);
    return;
  }
#endif
  for (std::size_t k = 0; k < 16 / lanes<A>; ++k) {
    out[k] = Signed ? load_i8<A>(p + k * lanes<A>) : load_u8<A>(p + k * lanes<A>);
  }
}

/**
 * One half -> float, exactly, for the per-block scales: the F16C instruction where the translation unit
 * may use it (the portable conversion branches on subnormals, which costs more than the block's work).
 */
inline float half_scale(const std::byte* p) noexcept {
#if defined(__F16C__)
  return _cvtsh_ss(detail::le16(p));
#else
  return detail::half_to_float(detail::le16(p));
#endif
}

/** int32 -> float, exact for the small integers the kernels convert. */
template <class A>
inline fbatch<A> to_float(const ibatch<A>& x) noexcept {
  return xsimd::batch_cast<float>(x);
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_DETAIL_XSIMD_COMPAT_HPP
