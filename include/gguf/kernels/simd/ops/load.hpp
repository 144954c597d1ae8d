#ifndef GGUF_KERNELS_SIMD_OPS_LOAD_HPP
#define GGUF_KERNELS_SIMD_OPS_LOAD_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/simd/ops/intrinsics.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// ---- Widening loads -----------------------------------------------------------------------------

/** lanes<A> bytes at p, zero-extended to int32. */
template <class A>
GGUF_SIMD_INLINE ibatch<A> load_u8(const std::byte* p) noexcept {
#if GGUF_SIMD_AVX512
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
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = load_le<std::uint8_t>(p + i);
  return ibatch<A>::load_aligned(tmp);
}

/** lanes<A> bytes at p, sign-extended to int32. */
template <class A>
GGUF_SIMD_INLINE ibatch<A> load_i8(const std::byte* p) noexcept {
#if GGUF_SIMD_AVX512
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
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = load_le<std::int8_t>(p + i);
  return ibatch<A>::load_aligned(tmp);
}

/** lanes<A> little-endian 16-bit words at p, zero-extended to int32. */
template <class A>
GGUF_SIMD_INLINE ibatch<A> load_u16(const std::byte* p) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__SSE4_1__)
  if constexpr (is_sse41<A>) return _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse2_only<A>) {
    return _mm_unpacklo_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), _mm_setzero_si128());
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    return vreinterpretq_s32_u32(vmovl_u16(vreinterpret_u16_u8(vld1_u8(reinterpret_cast<const std::uint8_t*>(p)))));
  }
#endif
  alignas(64) std::int32_t tmp[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = load_le<std::uint16_t>(p + 2 * i);
  return ibatch<A>::load_aligned(tmp);
}

/** 2 * lanes<A> little-endian 16-bit words at p, zero-extended to int32: lo gets the first lanes<A>. */
template <class A>
GGUF_SIMD_INLINE void load_u16_pair(const std::byte* p, ibatch<A>& lo, ibatch<A>& hi) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {  // 8 words, one load, two unpacks
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), zero = _mm_setzero_si128();
    lo = _mm_unpacklo_epi16(w, zero);
    hi = _mm_unpackhi_epi16(w, zero);
    return;
  }
#endif
  lo = load_u16<A>(p);
  hi = load_u16<A>(p + 2 * lanes<A>);
}

/**
 * lanes<A> little-endian doubles at p rounded to floats: the hardware conversion (cvtpd2ps, fcvtn), which
 * rounds to nearest even as a cast does, overflowing to infinity from FLT_MAX + half an ulp, NaNs kept NaN.
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> load_f64_as_float(const std::byte* p) noexcept {
  const auto* d = reinterpret_cast<const double*>(p);  // NOLINT: unaligned loads below
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    const __m256 lo = _mm512_cvtpd_ps(_mm512_loadu_pd(d)), hi = _mm512_cvtpd_ps(_mm512_loadu_pd(d + 8));
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
  }
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(d + 4)), _mm256_cvtpd_ps(_mm256_loadu_pd(d)));
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) return _mm_movelh_ps(_mm_cvtpd_ps(_mm_loadu_pd(d)), _mm_cvtpd_ps(_mm_loadu_pd(d + 2)));
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) return vcombine_f32(vcvt_f32_f64(vld1q_f64(d)), vcvt_f32_f64(vld1q_f64(d + 2)));
#endif
  alignas(64) float v[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) {
    double x;
    std::memcpy(&x, p + 8 * i, sizeof x);
    v[i] = static_cast<float>(x);  // as the scalar kernel, for values in range (the others: see above)
  }
  return fbatch<A>::load_aligned(v);
}

#if defined(__SSE2__) || defined(_M_X64)
namespace detail {
// int64 -> float without a direct conversion (SSE2, AVX2): through a double that is exact, so that the one
// rounding is the final double -> float, to nearest even as the scalar cast.
//  - |x| < 2^51, the usual case (checked per batch): x + 2^51 is the mantissa of the double 2^52 + 2^51 + x,
//    from which subtracting 2^52 + 2^51 leaves x exactly.
//  - Otherwise: |x| < 2^53 is exact as it is. Beyond, floats and the midpoints between them are multiples
//    of 2^29, so the low 29 bits only tell whether x is one exactly: folded into one sticky bit (2^28), x
//    keeps its side of every midpoint and needs 35 significant bits. The double is then built exactly from
//    the two halves (magic exponents, as compilers convert uint64):
//    (2^84 + 2^63 + hi 2^32) - (2^84 + 2^63 + 2^52) + (2^52 + lo).

/// 2 int64 -> 2 floats in the low half, rounded as static_cast<float>(std::int64_t), any value.
GGUF_SIMD_INLINE __m128 i64x2_exact(__m128i x) noexcept {
  const __m128i low29 = _mm_set1_epi64x(0x1FFFFFFF);
  // -2^53 <= x < 2^53 where bits 53-63 all equal the sign: compared in the high dword, copied to both.
  const __m128i small = _mm_shuffle_epi32(_mm_cmpeq_epi32(_mm_srai_epi32(x, 21), _mm_srai_epi32(x, 31)), 0xF5);
  const __m128i low_zero = _mm_cmpeq_epi32(_mm_and_si128(x, low29), _mm_setzero_si128());  // high dword: ones
  const __m128i kept = _mm_and_si128(x, _mm_or_si128(small, _mm_set1_epi64x(~std::int64_t{0x1FFFFFFF})));
  const __m128i y = _mm_or_si128(kept, _mm_andnot_si128(_mm_or_si128(small, low_zero), _mm_set1_epi64x(0x10000000)));
  const __m128i hi = _mm_xor_si128(_mm_srli_epi64(y, 32), _mm_set1_epi64x(0x4530000080000000));
  const __m128i lo = _mm_or_si128(_mm_and_si128(y, _mm_set1_epi64x(0xFFFFFFFF)), _mm_set1_epi64x(0x4330000000000000));
  const __m128d bias = _mm_castsi128_pd(_mm_set1_epi64x(0x4530000080100000));  // 2^84 + 2^63 + 2^52
  return _mm_cvtpd_ps(_mm_add_pd(_mm_sub_pd(_mm_castsi128_pd(hi), bias), _mm_castsi128_pd(lo)));
}

/// x + 2^51 (t) -> floats in the low half, for |x| < 2^51 (t < 2^52).
GGUF_SIMD_INLINE __m128 i64x2_small(__m128i t) noexcept {
  const __m128i k = _mm_set1_epi64x(0x4330000000000000);  // 2^52
  return _mm_cvtpd_ps(_mm_sub_pd(_mm_castsi128_pd(_mm_or_si128(t, k)), _mm_set1_pd(0x1.8p52)));
}

#if defined(__AVX2__)
/// 4 int64 -> 4 floats, rounded as static_cast<float>(std::int64_t), any value: i64x2_exact, 256 bits wide.
GGUF_SIMD_INLINE __m128 i64x4_exact(__m256i x) noexcept {
  const __m256i low29 = _mm256_set1_epi64x(0x1FFFFFFF);
  const __m256i small =
      _mm256_shuffle_epi32(_mm256_cmpeq_epi32(_mm256_srai_epi32(x, 21), _mm256_srai_epi32(x, 31)), 0xF5);
  const __m256i low_zero = _mm256_cmpeq_epi32(_mm256_and_si256(x, low29), _mm256_setzero_si256());
  const __m256i kept = _mm256_and_si256(x, _mm256_or_si256(small, _mm256_set1_epi64x(~std::int64_t{0x1FFFFFFF})));
  const __m256i y =
      _mm256_or_si256(kept, _mm256_andnot_si256(_mm256_or_si256(small, low_zero), _mm256_set1_epi64x(0x10000000)));
  const __m256i hi = _mm256_xor_si256(_mm256_srli_epi64(y, 32), _mm256_set1_epi64x(0x4530000080000000));
  const __m256i lo = _mm256_blend_epi32(y, _mm256_set1_epi64x(0x4330000000000000), 0xAA);  // high dwords
  const __m256d bias = _mm256_castsi256_pd(_mm256_set1_epi64x(0x4530000080100000));
  return _mm256_cvtpd_ps(_mm256_add_pd(_mm256_sub_pd(_mm256_castsi256_pd(hi), bias), _mm256_castsi256_pd(lo)));
}

/// x + 2^51 (t) -> floats, for |x| < 2^51: i64x2_small, 256 bits wide.
GGUF_SIMD_INLINE __m128 i64x4_small(__m256i t) noexcept {
  const __m256i k = _mm256_set1_epi64x(0x4330000000000000);
  return _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(t, k)), _mm256_set1_pd(0x1.8p52)));
}
#endif
}  // namespace detail
#endif

/**
 * lanes<A> little-endian int64 at p rounded to floats to nearest even, as static_cast<float>(std::int64_t)
 * (the scalar cvtsi2ss, scvtf): AVX-512DQ's vcvtqq2ps (xsimd's avx512bw implies DQ); elsewhere through a
 * double made exact first, since rounding to double and then to float could round twice: at once when
 * the batch's magnitudes are small (see detail::i64x2_exact), else with the low bits folded.
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> load_i64_as_float(const std::byte* p) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    const __m256 lo = _mm512_cvtepi64_ps(_mm512_loadu_si512(p)), hi = _mm512_cvtepi64_ps(_mm512_loadu_si512(p + 64));
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
  }
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    const __m256i bias = _mm256_set1_epi64x(std::int64_t{1} << 51);
    const __m256i t0 = _mm256_add_epi64(x0, bias), t1 = _mm256_add_epi64(x1, bias);
    if (_mm256_testz_si256(_mm256_or_si256(t0, t1), _mm256_set1_epi64x(~((std::int64_t{1} << 52) - 1)))) [[likely]] {
      return _mm256_set_m128(detail::i64x4_small(t1), detail::i64x4_small(t0));
    }
    return _mm256_set_m128(detail::i64x4_exact(x1), detail::i64x4_exact(x0));
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
    const __m128i bias = _mm_set1_epi64x(std::int64_t{1} << 51);
    const __m128i t0 = _mm_add_epi64(x0, bias), t1 = _mm_add_epi64(x1, bias);
    const __m128i top = _mm_srli_epi64(_mm_or_si128(t0, t1), 52);  // 0 in both lanes: both batches small
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(top, _mm_setzero_si128())) == 0xFFFF) [[likely]] {
      return _mm_movelh_ps(detail::i64x2_small(t0), detail::i64x2_small(t1));
    }
    return _mm_movelh_ps(detail::i64x2_exact(x0), detail::i64x2_exact(x1));
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    const auto load = [](const std::byte* q) GGUF_SIMD_INLINE_LAMBDA {
      return vreinterpretq_s64_u8(vld1q_u8(reinterpret_cast<const std::uint8_t*>(q)));
    };
    const int64x2_t x0 = load(p), x1 = load(p + 16);
    const float64x2_t d0 = vcvtq_f64_s64(x0), d1 = vcvtq_f64_s64(x1), limit = vdupq_n_f64(0x1p53);
    const uint64x2_t big = vorrq_u64(vcageq_f64(d0, limit), vcageq_f64(d1, limit));  // |x| >= 2^53
    if (vmaxvq_u32(vreinterpretq_u32_u64(big)) == 0) [[likely]] {
      return vcvt_high_f32_f64(vcvt_f32_f64(d0), d1);
    }
    const auto exact = [](int64x2_t x) GGUF_SIMD_INLINE_LAMBDA {  // the low bits folded as on x86, then scvtf (exact)
      const uint64x2_t small = vceqq_s64(vshrq_n_s64(x, 53), vshrq_n_s64(x, 63));
      const uint64x2_t sticky = vandq_u64(vtstq_s64(x, vdupq_n_s64(0x1FFFFFFF)), vdupq_n_u64(0x10000000));
      const int64x2_t folded = vorrq_s64(vbicq_s64(x, vdupq_n_s64(0x1FFFFFFF)), vreinterpretq_s64_u64(sticky));
      return vcvtq_f64_s64(vbslq_s64(small, x, folded));
    };
    return vcvt_high_f32_f64(vcvt_f32_f64(exact(x0)), exact(x1));
  }
#endif
  alignas(64) float v[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) {
    std::int64_t x;
    std::memcpy(&x, p + 8 * i, sizeof x);
    v[i] = static_cast<float>(x);
  }
  return fbatch<A>::load_aligned(v);
}

/** lanes<A> IEEE halves at p as floats, exactly (subnormals, infinities, NaNs included). */
template <class A>
GGUF_SIMD_INLINE fbatch<A> load_half(const std::byte* p) noexcept {
#if GGUF_SIMD_AVX512
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
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = half_to_float(load_le<std::uint16_t>(p + 2 * i));
  return fbatch<A>::load_aligned(tmp);
}

/** lanes<A> bfloat16s at p as floats: each word moved to the top half of a float. */
template <class A>
GGUF_SIMD_INLINE fbatch<A> load_bf16(const std::byte* p) noexcept {
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    const uint16x4_t w = vreinterpret_u16_u8(vld1_u8(reinterpret_cast<const std::uint8_t*>(p)));
    return vreinterpretq_f32_u32(vshll_n_u16(w, 16));
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {  // interleaving zero words with the data puts each word on top of a float
    const __m128i w = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), w));
  }
#endif
  return as_float<A>(load_u16<A>(p) << 16);
}

/** 2 * lanes<A> bfloat16s at p: a gets the first lanes<A>. */
template <class A>
GGUF_SIMD_INLINE void load_bf16_pair(const std::byte* p, fbatch<A>& a, fbatch<A>& b) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {  // 8 words, one load
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), zero = _mm_setzero_si128();
    a = _mm_castsi128_ps(_mm_unpacklo_epi16(zero, w));
    b = _mm_castsi128_ps(_mm_unpackhi_epi16(zero, w));
    return;
  }
#endif
  a = load_bf16<A>(p);
  b = load_bf16<A>(p + 2 * lanes<A>);
}

// ---- 16 bytes at a time -------------------------------------------------------------------------

#if defined(__SSE2__) || defined(_M_X64)
namespace detail {
/// SSE2: the 16 bytes of x, zero- (Signed: sign-) extended into out[0..4), with unpacks only.
template <class A, bool Signed = false>
GGUF_SIMD_INLINE void unpack16_sse2(__m128i x, ibatch<A>* out) noexcept {
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
}  // namespace detail
#endif

/**
 * The 16 bytes at p, zero- (Signed: sign-) extended into out[0 .. 16 / lanes<A>): the widening loads
 * above, except on SSE2 without SSE4.1, where one load and unpacks serve 16 weights.
 */
template <class A, bool Signed = false>
GGUF_SIMD_INLINE void widen16(const std::byte* p, ibatch<A>* out) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse2_only<A>) {
    detail::unpack16_sse2<A, Signed>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), out);
    return;
  }
#endif
  for (std::size_t k = 0; k < 16 / lanes<A>; ++k) {
    out[k] = Signed ? load_i8<A>(p + k * lanes<A>) : load_u8<A>(p + k * lanes<A>);
  }
}

/**
 * The 16 bytes lo (bytes 0-7, least significant first) and hi (8-15), zero-extended into
 * out[0 .. 16 / lanes<A>): for bytes assembled in scalar registers (packed scales), without the trip
 * through memory (a vector load of bytes just stored one word at a time is not forwarded and stalls).
 */
template <class A>
GGUF_SIMD_INLINE void bytes16(std::uint64_t lo, std::uint64_t hi, ibatch<A>* out) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_avx512<A> || is_avx2<A> || is_sse<A>) {
    const __m128i x = _mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo));
#if GGUF_SIMD_AVX512
    if constexpr (is_avx512<A>) {
      out[0] = _mm512_cvtepu8_epi32(x);
      return;
    }
#endif
#if defined(__AVX2__)
    if constexpr (is_avx2<A>) {
      out[0] = _mm256_cvtepu8_epi32(x);
      out[1] = _mm256_cvtepu8_epi32(_mm_unpackhi_epi64(x, x));
      return;
    }
#endif
#if defined(__SSE4_1__)
    if constexpr (is_sse41<A>) {
      out[0] = _mm_cvtepu8_epi32(x);
      out[1] = _mm_cvtepu8_epi32(_mm_srli_si128(x, 4));
      out[2] = _mm_cvtepu8_epi32(_mm_srli_si128(x, 8));
      out[3] = _mm_cvtepu8_epi32(_mm_srli_si128(x, 12));
      return;
    }
#endif
    if constexpr (is_sse2_only<A>) {
      detail::unpack16_sse2<A>(x, out);
      return;
    }
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    const uint8x16_t v = vcombine_u8(vcreate_u8(lo), vcreate_u8(hi));
    const uint16x8_t a = vmovl_u8(vget_low_u8(v)), b = vmovl_high_u8(v);
    out[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(a)));
    out[1] = vreinterpretq_s32_u32(vmovl_high_u16(a));
    out[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(b)));
    out[3] = vreinterpretq_s32_u32(vmovl_high_u16(b));
    return;
  }
#endif
  alignas(64) std::byte bytes[16];
  for (int k = 0; k < 8; ++k) {
    bytes[k] = static_cast<std::byte>(lo >> (8 * k));
    bytes[8 + k] = static_cast<std::byte>(hi >> (8 * k));
  }
  for (std::size_t k = 0; k < 16 / lanes<A>; ++k) out[k] = load_u8<A>(bytes + k * lanes<A>);
}

/**
 * Two batches of row_arch<A> (8 lanes) as one AVX-512 batch, lo in lanes 0-7: one insert. For the
 * kernels that compute in 8-lane rows but store half outputs, whose 16-lane conversion is the cheaper.
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> concat_rows([[maybe_unused]] const fbatch<row_arch<A>>& lo,
                                       [[maybe_unused]] const fbatch<row_arch<A>>& hi) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
  }
#endif
  static_assert(is_avx512<A>, "only AVX-512 joins two 8-lane rows");
  return fbatch<A>(0.0f);
}

/**
 * Two 4-float rows at lo and hi (16-byte aligned) as one 8-lane batch, lo in lanes 0-3: one load and
 * one insert from memory. Only for 8-lane batches (AVX2, and row_arch of AVX-512).
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> load_row_pair(const float* lo, const float* hi) noexcept {
  static_assert(lanes<A> == 8, "an 8-lane batch");
#if defined(__AVX__)
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(lo)), _mm_load_ps(hi), 1);
#else
  alignas(32) float t[8] = {lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]};
  return fbatch<A>::load_aligned(t);
#endif
}

/**
 * Lane i = all ones if bit i of `word` is set, else 0 (bits 0 to lanes<A> - 1): one bit per weight made
 * a lane mask, for the 1-bit types. (A masked move on AVX-512; and + compare on AVX2, SSE and NEON.)
 */
template <class A>
GGUF_SIMD_INLINE ibatch<A> bit_lanes(std::uint32_t word) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) return _mm512_maskz_mov_epi32(static_cast<__mmask16>(word), _mm512_set1_epi32(-1));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    const __m256i bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(word)), bits), bits);
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {
    const __m128i bits = _mm_setr_epi32(1, 2, 4, 8);
    return _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(static_cast<int>(word)), bits), bits);
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    const std::uint32_t b[4] = {1, 2, 4, 8};
    return vreinterpretq_s32_u32(vtstq_u32(vdupq_n_u32(word), vld1q_u32(b)));
  }
#endif
  alignas(64) std::int32_t t[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) t[i] = ((word >> i) & 1u) != 0 ? -1 : 0;
  return ibatch<A>::load_aligned(t);
}

/**
 * v with the sign bit of lane i flipped where bit i of `word` is set: the signs of the grid types. One
 * masked xor on AVX-512; a lane mask (bit_lanes), an and and an xor elsewhere.
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> flip_signs(const fbatch<A>& v, std::uint32_t word) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    const __m512i x = _mm512_castps_si512(v);
    return _mm512_castsi512_ps(_mm512_mask_xor_epi32(x, static_cast<__mmask16>(word), x, _mm512_set1_epi32(INT32_MIN)));
  }
#endif
  return v ^ (as_float<A>(bit_lanes<A>(word)) & as_float<A>(ibatch<A>(INT32_MIN)));
}

/** v with `bit` or'ed into lane i where bit i of `word` is set: one masked or on AVX-512. */
template <class A>
GGUF_SIMD_INLINE ibatch<A> mark_lanes(const ibatch<A>& v, std::uint32_t word, std::int32_t bit) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) return _mm512_mask_or_epi32(v, static_cast<__mmask16>(word), v, _mm512_set1_epi32(bit));
#endif
  return v | (bit_lanes<A>(word) & ibatch<A>(bit));
}

/**
 * mark_lanes of the 16-bit word at `word`. On AVX-512 the mask register is loaded from memory (kmovw
 * from memory: a load and nothing else). GCC 12 compiles _load_mask16 to a general-register load and a
 * kmovw from the register, which Zen 4 runs at half the rate of a vector or: the dearest step of the
 * signs of the 8-weight grid rows.
 */
template <class A>
GGUF_SIMD_INLINE ibatch<A> mark_lanes(const ibatch<A>& v, const std::uint16_t* word, std::int32_t bit) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
#if defined(__GNUC__)
    __mmask16 mask;
    __asm__("kmovw %1, %0" : "=k"(mask) : "m"(*word));
#else
    const __mmask16 mask = _load_mask16(const_cast<__mmask16*>(word));
#endif
    return _mm512_mask_or_epi32(v, mask, v, _mm512_set1_epi32(bit));
  }
#endif
  return mark_lanes<A>(v, *word, bit);
}

/**
 * Lane i of x shifted right (arithmetically) by lane i of n, 0 <= n < 32: one instruction on AVX2 and
 * AVX-512 (xsimd 8.1 runs AVX-512's element by element), xsimd's own elsewhere.
 */
template <class A>
GGUF_SIMD_INLINE ibatch<A> shift_right_lanes(const ibatch<A>& x, const ibatch<A>& n) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) return _mm512_srav_epi32(x, n);
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_srav_epi32(x, n);
#endif
  return x >> n;
}

/**
 * 16 lanes of 4-bit codes from a 64-bit word of them in paired order (tables::paired_nibble): lane 2k
 * holds nibble k of the word's low 32 bits, lane 2k + 1 nibble k of its high 32 bits, in its low 4 bits,
 * the bits above whatever the shift leaves (for permute, which ignores them). A 64-bit broadcast (from
 * memory: a load and nothing else) and one 64-bit variable shift; a 32-bit broadcast of each half merged
 * under a mask, which Zen 4 runs at half the rate of a shift, was the dearest instruction of the 4-weight
 * rows. AVX-512 only (the grid code kernels, iq_grid/code_rows_simd.hpp).
 */
template <class A>
GGUF_SIMD_INLINE ibatch<A> paired_nibble_lanes16(std::uint64_t w) noexcept {
  static_assert(is_avx512<A>, "the grid code kernels run on AVX-512 only");
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    return _mm512_srlv_epi64(_mm512_set1_epi64(static_cast<long long>(w)),
                             _mm512_setr_epi64(0, 4, 8, 12, 16, 20, 24, 28));
  }
#endif
  (void)w;
  return {};
}

/**
 * 16 lanes of 4-bit codes from two words of 8: lane j holds nibble j of a (j < 8) or nibble j - 8 of b
 * in its low 4 bits, the bits above it whatever the shift leaves (for permute, which ignores them). Two
 * broadcasts, the second under a mask, and one variable shift: fewer operations than a word unpack of
 * two plain broadcasts in paired order. AVX-512 only (the grid code kernels, iq_grid/code_rows_simd.hpp).
 */
template <class A>
GGUF_SIMD_INLINE ibatch<A> nibble_lanes16(std::uint32_t a, std::uint32_t b) noexcept {
  static_assert(is_avx512<A>, "the grid code kernels run on AVX-512 only");
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    const __m512i ab = _mm512_mask_set1_epi32(_mm512_set1_epi32(static_cast<int>(a)), 0xFF00, static_cast<int>(b));
    return _mm512_srlv_epi32(ab, _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28));
  }
#endif
  (void)a;
  (void)b;
  return {};
}

/**
 * The next base-3 digit of fractions of 16 bits (tq1_0): lane f < 2^16 gives floor(3 f / 2^16), which is
 * 0, 1 or 2, and becomes 3 f mod 2^16. A byte b as f = b << 8 gives, call after call, the digits
 * ((b 3^n mod 256) 3) >> 8 of ternary/dequantize.hpp's tq1_digit. On x86 two 16-bit multiplies (pmulhuw,
 * pmullw; each lane's high word is zero and stays zero), elsewhere 32-bit arithmetic.
 */
template <class A>
GGUF_SIMD_INLINE ibatch<A> base3_digit(ibatch<A>& f) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    const __m512i three = _mm512_set1_epi16(3), x = f;
    f = _mm512_mullo_epi16(x, three);
    return _mm512_mulhi_epu16(x, three);
  }
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    const __m256i three = _mm256_set1_epi16(3), x = f;
    f = _mm256_mullo_epi16(x, three);
    return _mm256_mulhi_epu16(x, three);
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {
    const __m128i three = _mm_set1_epi16(3), x = f;
    f = _mm_mullo_epi16(x, three);
    return _mm_mulhi_epu16(x, three);
  }
#endif
  const ibatch<A> t = f * ibatch<A>(3);
  f = t & ibatch<A>(0xFFFF);
  return t >> 16;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_LOAD_HPP
