#ifndef GGUF_KERNELS_SIMD_OPS_HPP
#define GGUF_KERNELS_SIMD_OPS_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "gguf/format/half.hpp"
#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/simd/arch.hpp"
#include "gguf/kernels/simd/xsimd_compat.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
#include <arm_neon.h>
#endif

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// The operations the kernels need that xsimd does not offer, or not in every version gguf supports
// (8.1, Debian's, lacks widening loads, byte shuffles, permutes and half conversion): the one home of
// intrinsics. Each op is a template on the xsimd architecture A with a branch per instruction set that
// has a better instruction (chosen at compile time by arch.hpp's predicates) and a portable fallback,
// through memory or plain xsimd, that gives the same bits. The kernel families (legacy, k_quants,
// nonlinear, plain, ternary) call these and never an intrinsic.

// ---- Conversions and constants ------------------------------------------------------------------

/** int32 -> float, exact for the small integers the kernels convert. */
template <class A>
GGUF_SIMD_INLINE fbatch<A> to_float(const ibatch<A>& x) noexcept {
  return xsimd::batch_cast<float>(x);
}

/** Lane i = f(i), for constant per-lane patterns. */
template <class A, class F>
GGUF_SIMD_INLINE fbatch<A> lane_map(F f) noexcept {
  alignas(64) float v[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) v[i] = f(static_cast<int>(i));
  return fbatch<A>::load_aligned(v);
}

/**
 * One half -> float, exactly, for the per-block scales: the F16C instruction where the translation unit
 * may use it (the portable conversion branches on subnormals, which costs more than the block's work).
 */
GGUF_SIMD_INLINE float half_scale(std::uint16_t h) noexcept {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return half_to_float(h);
#endif
}

/** The half at p as a float: half_scale of its bits. */
GGUF_SIMD_INLINE float half_scale(const std::byte* p) noexcept { return half_scale(load_le<std::uint16_t>(p)); }

/**
 * The halves at p and p + 2 (a block's d and m) as floats, each in every lane of `first` and `second`:
 * half_scale of each, the same bits. On AVX-512 one conversion makes both, and the second is broadcast
 * from the odd lane (cheaper than two scalar conversions).
 */
template <class A>
GGUF_SIMD_INLINE void half_scale_pair(const std::byte* p, fbatch<A>& first, fbatch<A>& second) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    const __m128 x = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_le<std::uint32_t>(p))));
    first = _mm512_broadcastss_ps(x);
    second = _mm512_broadcastss_ps(_mm_movehdup_ps(x));
    return;
  }
#endif
  first = fbatch<A>(half_scale(p));
  second = fbatch<A>(half_scale(p + 2));
}

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
 * rows. AVX-512 only (the grid code kernels, iq_codes.hpp).
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
 * two plain broadcasts in paired order. AVX-512 only (the grid code kernels, iq_codes.hpp).
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
 * ((b 3^n mod 256) 3) >> 8 of scalar/ternary.hpp's tq1_digit. On x86 two 16-bit multiplies (pmulhuw,
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

// ---- Byte-parallel assembly ---------------------------------------------------------------------
// The bit-heavy types (q3_K, q5_K, q6_K) assemble each weight's bits a byte at a time, 4 * lanes<S>
// weights per instruction, in a batch of arch S = swar_arch<A>. Every step moves bits only within their
// byte (shifts are masked), so the order of bytes in a lane never matters.

/** 4 * `lanes<S>` bytes at p, four to an int32 lane. */
template <class S>
GGUF_SIMD_INLINE ibatch<S> load_bytes(const std::byte* p) noexcept {
  return ibatch<S>::load_unaligned(reinterpret_cast<const std::int32_t*>(p));
}

/** Byte b in all four bytes of every lane. */
template <class S>
GGUF_SIMD_INLINE ibatch<S> bytes_of(std::uint8_t b) noexcept {
  return ibatch<S>(static_cast<std::int32_t>(0x01010101u * b));
}

/** Bit `From` of each byte of v moved to bit `To` of the same byte, all other bits cleared. */
template <int From, int To, class S>
GGUF_SIMD_INLINE ibatch<S> byte_bit_to(const ibatch<S>& v) noexcept {
  const ibatch<S> mask = bytes_of<S>(static_cast<std::uint8_t>(1u << To));
  if constexpr (From < To)
    return (v << (To - From)) & mask;
  else if constexpr (From > To)
    return (v >> (From - To)) & mask;
  else
    return v & mask;
}

/** Bit pair `Pair` (bits 2 Pair, 2 Pair + 1) of each byte of v, in bits 0-1. */
template <int Pair, class S>
GGUF_SIMD_INLINE ibatch<S> byte_pair(const ibatch<S>& v) noexcept {
  if constexpr (Pair == 3)
    return (v >> 6) & bytes_of<S>(3);
  else if constexpr (Pair == 0)
    return v & bytes_of<S>(3);
  else
    return (v >> (2 * Pair)) & bytes_of<S>(3);
}

/** v - b in each byte, wrapping (weight bytes made signed before widening). */
template <class S>
GGUF_SIMD_INLINE ibatch<S> sub_bytes(const ibatch<S>& v, std::uint8_t b) noexcept {
#if defined(__AVX2__)
  if constexpr (lanes<S> == 8 && std::is_base_of_v<xsimd::avx2, S>) {
    return _mm256_sub_epi8(v, _mm256_set1_epi8(static_cast<char>(b)));
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (lanes<S> == 4 && std::is_base_of_v<xsimd::sse2, S>) {
    return _mm_sub_epi8(v, _mm_set1_epi8(static_cast<char>(b)));
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<S>) {
    return vreinterpretq_s32_s8(vsubq_s8(vreinterpretq_s8_s32(v), vdupq_n_s8(static_cast<std::int8_t>(b))));
  }
#endif
  // Borrow-free per byte: set each byte's top bit before subtracting the low seven bits of b, then
  // put the top bit right (Hacker's Delight 2-18).
  const ibatch<S> top = bytes_of<S>(0x80), x = bytes_of<S>(b);
  return ((v | top) - (x & bytes_of<S>(0x7F))) ^ ((v ^ ~x) & top);
}

/**
 * The 4 * `lanes<S>` bytes of v, zero- (Signed: sign-) extended into out[]. Only where
 * `widen_in_registers<A>`.
 */
template <class A, bool Signed, class S>
GGUF_SIMD_INLINE void widen_bytes(const ibatch<S>& v, ibatch<A>* out) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (widen_in_registers<A>) {
    const __m256i x = v;
    if constexpr (Signed) {
      out[0] = _mm512_cvtepi8_epi32(_mm256_castsi256_si128(x));
      out[1] = _mm512_cvtepi8_epi32(_mm256_extracti128_si256(x, 1));
    } else {
      out[0] = _mm512_cvtepu8_epi32(_mm256_castsi256_si128(x));
      out[1] = _mm512_cvtepu8_epi32(_mm256_extracti128_si256(x, 1));
    }
    return;
  }
#endif
  static_assert(widen_in_registers<A>, "widen through memory instead");
  (void)v;
  (void)out;
}

// ---- Stores -------------------------------------------------------------------------------------

/**
 * The `normal` argument of the stores and table roundings below, from a kernel whose values cannot be
 * subnormal floats: products of an f16 (or smaller) scale and integers or grid levels, every nonzero one
 * at least 2^-27 in magnitude. AVX512-BF16's rounding reads a subnormal as zero, so bf16 outputs check
 * every vector for one (vfpclassps) and redo it with integers; that check, not the rounding, is the
 * dearest part of a table-lookup kernel's bf16 output. The
 * default, false, checks: f32, bf16 and f64 inputs, f32 scales (q8_K) and E8M0 ones (mxfp4) can be tiny.
 */
inline constexpr bool no_subnormals = true;

namespace detail {

/**
 * Floats -> their nearest-even binary16 bits in int32 lanes, with float and integer operations only (no
 * F16C): the exponent is clamped to the half range by adding a power of two that makes the float adder
 * round at the half's last mantissa bit (the classic method of ggml's portable ggml_compute_fp32_to_fp16),
 * every step signed-safe for SSE2. A NaN comes out as F16C and NEON give it: quiet, the payload's top bits.
 */
template <class A>
GGUF_SIMD_INLINE ibatch<A> f16_bits(const fbatch<A>& v) noexcept {
  const ibatch<A> w = as_int<A>(v);
  const ibatch<A> a = w & ibatch<A>(0x7FFFFFFF);
  const fbatch<A> scaled = (as_float<A>(a) * fbatch<A>(0x1.0p+112f)) * fbatch<A>(0x1.0p-110f);
  const ibatch<A> e = a & ibatch<A>(0x7F800000);
  const ibatch<A> least(0x38800000);  // 2^-14: below it the half is subnormal, rounded at 2^-24
  const ibatch<A> bias = select_int<A>(e < least, least, e) + ibatch<A>(0x07800000);
  const ibatch<A> bits = as_int<A>(as_float<A>(bias) + scaled);
  const ibatch<A> finite = ((bits >> 13) & ibatch<A>(0x7C00)) + (bits & ibatch<A>(0x0FFF));
  const ibatch<A> nan = ibatch<A>(0x7E00) | ((a >> 13) & ibatch<A>(0x3FF));
  return ((w >> 16) & ibatch<A>(0x8000)) | select_int<A>(a > ibatch<A>(0x7F800000), nan, finite);
}

/**
 * Floats -> their nearest-even bfloat16 bits in int32 lanes, as ggml_fp32_to_bf16 (a NaN made quiet):
 * integer adds and logical shifts, spelled out on AVX2 (AVX-512 rounds in put, without them).
 */
template <class A>
GGUF_SIMD_INLINE ibatch<A> bf16_bits(const fbatch<A>& v) noexcept {
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    const __m256i w = _mm256_castps_si256(v);
    const __m256i top = _mm256_srli_epi32(w, 16);
    const __m256i lsb = _mm256_and_si256(top, _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(w, _mm256_set1_epi32(0x7FFF)), lsb), 16);
    const __m256i nan =
        _mm256_cmpgt_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x7FFFFFFF)), _mm256_set1_epi32(0x7F800000));
    return _mm256_blendv_epi8(rounded, _mm256_or_si256(top, _mm256_set1_epi32(0x40)), nan);
  }
#endif
  const ibatch<A> w = as_int<A>(v);
  const ibatch<A> one(1), low(0xFFFF);
  const ibatch<A> rounded = ((w + ibatch<A>(0x7FFF) + ((w >> 16) & one)) >> 16) & low;
  const ibatch<A> nan = ((w >> 16) | ibatch<A>(0x40)) & low;
  return select_int<A>((w & ibatch<A>(0x7FFFFFFF)) > ibatch<A>(0x7F800000), nan, rounded);
}

/** The low 16 bits of each lane of x (each < 65536), stored at p: the lanes narrowed in registers. */
template <class A, class Out>
GGUF_SIMD_INLINE void store_words(Out* p, const ibatch<A>& x) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(x));
    return;
  }
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    const __m256i v = x;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
    return;
  }
#endif
#if defined(__SSE4_1__)
  if constexpr (is_sse41<A>) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi32(x, x));
    return;
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse2_only<A>) {  // no unsigned pack: sign-extend the words, then the signed pack is exact
    const __m128i y = _mm_srai_epi32(_mm_slli_epi32(x, 16), 16);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packs_epi32(y, y));
    return;
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    vst1_u16(reinterpret_cast<std::uint16_t*>(p), vmovn_u32(vreinterpretq_u32_s32(x)));
    return;
  }
#endif
  alignas(64) std::int32_t t[lanes<A>];
  x.store_aligned(t);
  for (std::size_t i = 0; i < lanes<A>; ++i) p[i] = Out{static_cast<std::uint16_t>(t[i])};
}

}  // namespace detail

#if GGUF_SIMD_AVX512
namespace detail {

/**
 * The 16 floats of v rounded to nearest even to `Out` (f16 or bf16), as the 16 words of a 256-bit
 * register: AVX-512's narrowing, shared by put and put_nibbles. `normal`: see no_subnormals.
 */
template <class Out>
GGUF_SIMD_INLINE __m256i avx512_words(__m512 v, bool normal = false) noexcept {
  if constexpr (std::is_same_v<Out, f16>) {
    // The zero-masked form with every lane set (the same instruction): GCC's unoptimized macro for the
    // plain one passes its mask as -1, which -Wsign-conversion reports in a user's debug build.
    return _mm512_maskz_cvtps_ph(static_cast<__mmask16>(0xFFFF), v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {
#if defined(__AVX512BF16__)
    // AVX512-BF16 rounds to nearest even and quiets a NaN as ggml does, in one instruction, but reads a
    // subnormal as zero: lanes holding one (never the product of an f16 or e8m0 scale and an integer,
    // so rare) are rounded with integers instead.
    __m256i r = std::bit_cast<__m256i>(_mm512_cvtneps_pbh(v));
    if (normal) return r;
    if (const __mmask16 sub = _mm512_fpclass_ps_mask(v, 0x20); sub != 0) [[unlikely]] {
      const __m512i w = _mm512_castps_si512(v);
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(w, 16), _mm512_set1_epi32(1));
      const __m512i up = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(w, _mm512_set1_epi32(0x7FFF)), lsb), 16);
      r = _mm256_mask_mov_epi16(r, sub, _mm512_cvtepi32_epi16(up));
    }
    return r;
#else
    (void)normal;
    // Rounded in the high words, which are then picked: no shift.
    const __m512i w = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(w, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(w, _mm512_set1_epi32(0x7FFF)), lsb);
    r = _mm512_mask_or_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), w, _mm512_set1_epi32(0x00400000));
    // The high words gathered by a byte shuffle in each 128-bit lane and a qword permute (cheaper than
    // vpermw or a shift and vpmovdw).
    const __m512i in_lane = _mm512_shuffle_epi8(
        r, _mm512_broadcast_i32x4(_mm_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1)));
    return _mm512_castsi512_si256(_mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), in_lane));
#endif
  }
}

}  // namespace detail
#endif

/**
 * v stored at p (any alignment) as `Out`: the floats themselves, or each rounded to nearest even to f16
 * (the hardware conversion on AVX2/AVX-512 (F16C) and NEON, else detail::f16_bits: the same bits) or to
 * bf16 (AVX512-BF16's conversion, else integer rounding), narrowed in registers: the one store of every
 * kernel.
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put(Out* p, const fbatch<A>& v) noexcept {
  if constexpr (std::is_same_v<Out, float>) {
    v.store_unaligned(p);
  } else {
#if GGUF_SIMD_AVX512
    if constexpr (is_avx512<A>) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), detail::avx512_words<Out>(v));
      return;
    }
#endif
    if constexpr (std::is_same_v<Out, f16>) {
#if defined(__AVX2__) && defined(__F16C__)
      if constexpr (is_avx2<A>) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                         _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        return;
      }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
      if constexpr (is_neon64<A>) {
        vst1_u16(reinterpret_cast<std::uint16_t*>(p), vreinterpret_u16_f16(vcvt_f16_f32(v)));
        return;
      }
#endif
      detail::store_words<A>(p, detail::f16_bits<A>(v));
    } else {
      detail::store_words<A>(p, detail::bf16_bits<A>(v));
    }
  }
}

/**
 * a at p and b right after it (p + lanes<A>): two puts, or on AVX512-BF16 one vcvtne2ps2bf16 rounding
 * both to bf16 (half the conversions of two puts; a subnormal among them takes the two puts' path).
 * `normal`: see no_subnormals.
 */
template <class A, class Out>
GGUF_SIMD_INLINE void put_pair(Out* p, const fbatch<A>& a, const fbatch<A>& b, bool normal = false) noexcept {
#if GGUF_SIMD_AVX512 && defined(__AVX512BF16__)
  if constexpr (is_avx512<A> && std::is_same_v<Out, bf16>) {
    if (normal || (_mm512_fpclass_ps_mask(a, 0x20) | _mm512_fpclass_ps_mask(b, 0x20)) == 0) [[likely]] {
      _mm512_storeu_si512(p, std::bit_cast<__m512i>(_mm512_cvtne2ps_pbh(b, a)));
      return;
    }
  }
#endif
  (void)normal;
  put<A>(p, a);
  put<A>(p + lanes<A>, b);
}

namespace detail {
#if GGUF_SIMD_AVX512
/// The 32 floats of lo (words 0-15) and hi (words 16-31) as `Out` words in one register. `normal`: see
/// no_subnormals.
template <class Out>
GGUF_SIMD_INLINE __m512i avx512_words32(__m512 lo, __m512 hi, bool normal = false) noexcept {
#if defined(__AVX512BF16__)
  // Both rounded by one instruction, when no entry is subnormal (which it reads as zero; see
  // avx512_words): one operation fewer for every table.
  if constexpr (std::is_same_v<Out, bf16>) {
    if (normal || (_mm512_fpclass_ps_mask(lo, 0x20) | _mm512_fpclass_ps_mask(hi, 0x20)) == 0) [[likely]] {
      return std::bit_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
    }
  }
#endif
  return _mm512_inserti64x4(_mm512_castsi256_si512(avx512_words<Out>(lo, normal)), avx512_words<Out>(hi, normal), 1);
}

/// The 16 entries of `table` as `Out` words, twice: vpermw on 32 words reads an index's low 5 bits, so
/// any byte or its high nibble indexes the right entry unmasked. `normal`: see no_subnormals.
template <class Out>
GGUF_SIMD_INLINE __m512i avx512_table_words(__m512 table, bool normal = false) noexcept {
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
                                    bool normal = false) noexcept {
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
                                    bool normal = false) noexcept {
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
                                          std::uint32_t fifth, bool normal = false) noexcept {
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
GGUF_SIMD_INLINE word_table table_words(const fbatch<A>& table, bool normal = false) noexcept {
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
GGUF_SIMD_INLINE word_pair pair_words(const fbatch<A>& table, bool normal = false) noexcept {
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
GGUF_SIMD_INLINE word_table table_words32(const fbatch<A>& lo, const fbatch<A>& hi, bool normal = false) noexcept {
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
word_table table_words(const fbatch<A>& table, bool normal = false) noexcept;
template <class A, class Out>
void put_2bit32(Out* dst, const word_table& t, const std::byte* q) noexcept;
template <class A, int Shift, int First, class Out>
void put_grouped_2bit32(Out* dst, const word_table& t, const std::byte* q) noexcept;
struct word_pair {};
template <class A, class Out>
word_pair pair_words(const fbatch<A>& table, bool normal = false) noexcept;
template <class A, class Out>
void put_bits32(Out* dst, const word_pair& w, std::uint32_t bits) noexcept;
template <class A, class Out>
void put_packed_2bit32(Out* dst, const word_table& t, const std::byte* q) noexcept;
template <class A, class Out>
void put_two_runs32(Out* dst, const word_table& t, const ibatch<swar_arch<A>>& bytes) noexcept;
template <class A, class Out>
word_table table_words32(const fbatch<A>& lo, const fbatch<A>& hi, bool normal = false) noexcept;
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

/** A non-temporal store of v at dst, 64-byte aligned: writes a whole line without reading it first.
    Only where stream_stores<A>; stream_fence() orders the stores before anything after it. */
template <class A>
GGUF_SIMD_INLINE void stream_store(float* dst, const fbatch<A>& v) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    _mm512_stream_ps(dst, v);
    return;
  }
#endif
  static_assert(stream_stores<A>, "no streaming stores");
  v.store_aligned(dst);
}

/** Orders the streaming stores before later stores (sfence); nothing where there are none. */
GGUF_SIMD_INLINE void stream_fence() noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  _mm_sfence();
#endif
}

// ---- Reductions and narrowing for the quantizers --------------------------------------------------

/**
 * Makes `v` opaque to the optimiser, in a register: the SIMD `opaque` (kernels/barriers.hpp). Where the
 * reference rounds a product before adding to it, the compiler must not fuse the two into an FMA.
 */
template <class A>
GGUF_SIMD_INLINE void opaque(fbatch<A>& v) noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  auto r = static_cast<typename fbatch<A>::register_type>(v);
  __asm__("" : "+v"(r));
  v = fbatch<A>(r);
#elif defined(__GNUC__) && defined(__aarch64__)
  auto r = static_cast<typename fbatch<A>::register_type>(v);
  __asm__("" : "+w"(r));
  v = fbatch<A>(r);
#else
  alignas(64) volatile float lane[lanes<A>];  // MSVC does not contract under /fp:precise; a fallback
  alignas(64) float t[lanes<A>];
  v.store_aligned(t);
  for (std::size_t k = 0; k < lanes<A>; ++k) lane[k] = t[k];
  for (std::size_t k = 0; k < lanes<A>; ++k) t[k] = lane[k];
  v = fbatch<A>::load_aligned(t);
#endif
}

/**
 * a / b in every lane, correctly rounded (IEEE): xsimd 8.1's float division on neon64 is a reciprocal
 * estimate refined by Newton-Raphson steps, a few ulps off; AArch64 has the exact instruction.
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> div(const fbatch<A>& a, const fbatch<A>& b) noexcept {
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) return fbatch<A>(vdivq_f32(a, b));
#endif
  return a / b;
}

/**
 * sqrt(x) in every lane, correctly rounded (IEEE): xsimd 8.1's float square root on neon64 is NEON's
 * reciprocal-square-root estimate refined twice, not the exact instruction AArch64 has.
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> sqrt(const fbatch<A>& x) noexcept {
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) return fbatch<A>(vsqrtq_f32(x));
#endif
  return xsimd::sqrt(x);
}

/**
 * Asks for the `bytes` from `p` to be brought into the cache for reading, a line at a time: a kernel
 * reading a long row out of memory fetches its next stretch while it works on this one (the hardware's
 * prefetcher alone falls behind a loop that reads in bursts). A hint; nothing where the compiler has
 * no way to give it.
 */
GGUF_SIMD_INLINE void prefetch_read([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t bytes) noexcept {
  for (std::size_t at = 0; at < bytes; at += 64) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(static_cast<const char*>(p) + at);
#elif defined(_M_X64) || defined(_M_IX86)
    _mm_prefetch(static_cast<const char*>(p) + at, _MM_HINT_T0);
#endif
  }
}

/**
 * -x in every lane, the sign bit flipped (IEEE negation, C's unary minus): xsimd 8.1 negates on
 * AVX-512 as 0 - x, which gives +0 for +0 (and a NaN's sign unchanged).
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> negate(const fbatch<A>& x) noexcept {
  return xsimd::bitwise_xor(x, fbatch<A>(-0.0f));
}

/** The largest lane of `v`, which holds no NaN (with none, the maximum is the same in any order). */
template <class A>
GGUF_SIMD_INLINE float max_lane(const fbatch<A>& v) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) return _mm512_reduce_max_ps(v);
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 0x55)));
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {
    __m128 m = v;
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 0x55)));
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) return vmaxvq_f32(v);
#endif
  alignas(64) float lane[lanes<A>];
  v.store_aligned(lane);
  float max = lane[0];
  for (std::size_t k = 1; k < lanes<A>; ++k) max = lane[k] > max ? lane[k] : max;
  return max;
}

/// @cond INTERNAL
#if defined(__SSE2__) || defined(_M_X64)
namespace detail {
// The shuffles of reduce_each's tree for a register R of 16, 32 or 64 bytes: `within` picks floats
// within each 128-bit lane (M: shuffle_ps's selector), `across` whole 128-bit lanes (W: permute2f128's
// or shuffle_f32x4's own encoding).
template <int M, class R>
GGUF_SIMD_INLINE R within(R a, R b) noexcept {
  if constexpr (sizeof(R) == 16) {
    return _mm_shuffle_ps(a, b, M);
#if defined(__AVX__)
  } else if constexpr (sizeof(R) == 32) {
    return _mm256_shuffle_ps(a, b, M);
#endif
#if defined(__AVX512F__)
  } else {
    return _mm512_shuffle_ps(a, b, M);
#endif
  }
}
template <int W, class R>
GGUF_SIMD_INLINE R across(R a, [[maybe_unused]] R b) noexcept {
#if defined(__AVX512F__)
  if constexpr (sizeof(R) == 64) return _mm512_shuffle_f32x4(a, b, W);
#endif
#if defined(__AVX__)
  if constexpr (sizeof(R) == 32) return _mm256_permute2f128_ps(a, b, W);
#endif
  return a;  // one 128-bit lane: nothing to move (not called)
}
}  // namespace detail
#endif
/// @endcond

/**
 * Lane j of the result = the largest (Max) or smallest lane of v[j], none of which holds a NaN: lanes<A>
 * horizontal reductions in one transposing tree (log2(lanes) levels of shuffle pairs, one min or max per
 * pair), about two shuffles and one operation per input instead of a reduction's 2 log2(lanes). Two lanes
 * that compare equal may come from either input (+0 and -0: a caller that cares sees the zero).
 */
template <class A, bool Max>
GGUF_SIMD_INLINE fbatch<A> reduce_each(const fbatch<A> (&v)[lanes<A>]) noexcept {
  using F = fbatch<A>;
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_avx512<A> || is_avx2<A> || is_sse<A>) {
    const auto op = [](const F& a, const F& b)
                        GGUF_SIMD_INLINE_LAMBDA -> F { return Max ? xsimd::max(a, b) : xsimd::min(a, b); };
    using detail::across;
    using detail::within;
    using R = typename F::register_type;
    constexpr std::size_t L = lanes<A>;
    // within 128-bit lanes: the four floats of each 128-bit lane of v[4q .. 4q+3] reduced into one register
    R quad[L / 4];
    for (std::size_t q = 0; q < L / 4; ++q) {
      R pair[2];
      for (std::size_t p = 0; p < 2; ++p) {
        const R a = v[4 * q + 2 * p], b = v[4 * q + 2 * p + 1];
        pair[p] = op(within<0x44>(a, b), within<0xEE>(a, b));
      }
      quad[q] = op(within<0x88>(pair[0], pair[1]), within<0xDD>(pair[0], pair[1]));
    }
    // across 128-bit lanes: quad[q]'s 128-bit lanes reduced into 128-bit lane q of the result
    if constexpr (L == 4) {
      return quad[0];
    } else if constexpr (L == 8) {
      return op(across<0x20>(quad[0], quad[1]), across<0x31>(quad[0], quad[1]));
    } else {
      const R lo = op(across<0x44>(quad[0], quad[1]), across<0xEE>(quad[0], quad[1]));
      const R hi = op(across<0x44>(quad[2], quad[3]), across<0xEE>(quad[2], quad[3]));
      return op(across<0x88>(lo, hi), across<0xDD>(lo, hi));
    }
  }
#endif
  alignas(64) float out[lanes<A>];
  for (std::size_t j = 0; j < lanes<A>; ++j) out[j] = Max ? max_lane<A>(v[j]) : -max_lane<A>(negate<A>(v[j]));
  return F::load_aligned(out);
}

/** The lanes of a comparison as bits, lane k in bit k (x86's movemask). */
template <class A, class T>
GGUF_SIMD_INLINE std::uint32_t lane_bits(const xsimd::batch_bool<T, A>& b) noexcept {
  static_assert(sizeof(T) == 4);
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) return static_cast<__mmask16>(b);
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    if constexpr (std::is_same_v<T, float>) {
      return static_cast<std::uint32_t>(_mm256_movemask_ps(b));
    } else {
      return static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(b)));
    }
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {
    if constexpr (std::is_same_v<T, float>) {
      return static_cast<std::uint32_t>(_mm_movemask_ps(b));
    } else {
      return static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(b)));
    }
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    static constexpr std::uint32_t bit[4] = {1, 2, 4, 8};
    return vaddvq_u32(vandq_u32(static_cast<uint32x4_t>(b), vld1q_u32(bit)));
  }
#endif
  alignas(64) std::int32_t lane[lanes<A>];
  if constexpr (std::is_same_v<T, std::int32_t>) {
    select_int<A>(b, ibatch<A>(1), ibatch<A>(0)).store_aligned(lane);
  } else {
    xsimd::select(b, xsimd::batch<T, A>(T(1)), xsimd::batch<T, A>(T(0))).store_aligned(reinterpret_cast<T*>(lane));
  }
  std::uint32_t bits = 0;
  for (std::size_t k = 0; k < lanes<A>; ++k) {
    T t;
    std::memcpy(&t, lane + k, sizeof t);
    bits |= static_cast<std::uint32_t>(t != T(0)) << k;
  }
  return bits;
}

/**
 * The f16 bits of a float that is not NaN, as ggml converts it (nearest even, overflow to infinity): the
 * hardware's conversion where the instruction set has one, else the portable `to_f16`.
 */
template <class A>
GGUF_SIMD_INLINE std::uint16_t half_of(float x) noexcept {
#if defined(__F16C__)
  if constexpr (is_avx2<A> || is_avx512<A>) {
    // _mm_cvtps_ph, not _cvtss_sh: clang's macro for the latter is a compound literal (-Wpedantic)
    const __m128i h = _mm_cvtps_ph(_mm_set_ss(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return static_cast<std::uint16_t>(_mm_cvtsi128_si32(h) & 0xFFFF);
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) return vget_lane_u16(vreinterpret_u16_f16(vcvt_f16_f32(vdupq_n_f32(x))), 0);
#endif
  return to_f16(x).bits;
}

/** The low byte of each lane of `x` (each in 0 ... 255), stored at p: narrowed in registers. */
template <class A>
GGUF_SIMD_INLINE void store_low_bytes(std::byte* p, const ibatch<A>& x) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(x));
    return;
  }
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    const __m256i v = x;
    const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(w, w));
    return;
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {  // the signed pack is exact for 0 ... 255
    const __m128i w = _mm_packs_epi32(x, x);
    const int v = _mm_cvtsi128_si32(_mm_packus_epi16(w, w));
    std::memcpy(p, &v, 4);
    return;
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    const uint16x4_t w = vmovn_u32(vreinterpretq_u32_s32(x));
    const uint8x8_t b = vmovn_u16(vcombine_u16(w, w));
    const std::uint32_t v = vget_lane_u32(vreinterpret_u32_u8(b), 0);
    std::memcpy(p, &v, 4);
    return;
  }
#endif
  alignas(64) std::int32_t t[lanes<A>];
  x.store_aligned(t);
  for (std::size_t i = 0; i < lanes<A>; ++i) p[i] = static_cast<std::byte>(t[i]);
}
// ---- Loop helpers -------------------------------------------------------------------------------

/// A compile-time index, as `unroll` passes them: every shift count and table index in the body is then a
/// constant.
template <int I>
using int_c = std::integral_constant<int, I>;

namespace detail {
template <class F, int... I>
GGUF_SIMD_INLINE void unroll_each(F& f, std::integer_sequence<int, I...> /*indices*/) noexcept {
  (f(int_c<I>{}), ...);
}
}  // namespace detail

/** Calls f with int_c<0> ... int_c<N - 1>, unrolled. */
template <int N, class F>
GGUF_SIMD_INLINE void unroll(F&& f) noexcept {
  detail::unroll_each(f, std::make_integer_sequence<int, N>{});
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_HPP
