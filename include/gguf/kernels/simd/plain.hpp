#ifndef GGUF_KERNELS_SIMD_PLAIN_HPP
#define GGUF_KERNELS_SIMD_PLAIN_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/detail/float_formats.hpp"
#include "gguf/detail/isa.hpp"
#include "gguf/detail/xsimd_compat.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of scalar/plain.hpp's f16 and bf16, generic over the xsimd Arch. Both are pure bit
// reshaping, so the result is exact by construction. f16 goes through the hardware conversion where there
// is one (F16C, AVX-512, NEON: exact for every number, subnormals included; a signalling NaN comes out
// quiet, as from ggml's own F16C path, where the scalar kernel keeps its bits: still a NaN, which is all
// the kernels promise), else through integer arithmetic that never produces a float subnormal (so no
// flush-to-zero mode can change it). bf16 is its 16 bits moved to the top of a float. `n` counts
// elements, any number: 4 * lanes<A> at a time, then one vector at a time, then one element at a time.
// (Peeling elements first to align dst measured no faster here: it trades split stores for split loads.)

namespace detail_plain {

/// lanes<A> hardware half -> float conversions exist for this Arch.
template <class A>
inline constexpr bool native_half =
#if defined(__F16C__)
    is_avx2<A> ||
#endif
    is_avx512<A> || is_neon64<A>;

/// An x86 SSE batch (4 lanes): 8 words load as one 16-byte vector and unpack into two.
template <class A>
inline constexpr bool is_sse = is_sse2_only<A> || is_sse41<A>;

/** lanes<A> little-endian 16-bit words at p, zero-extended to int32 (compat's load_u16, plus SSE2). */
template <class A>
inline ibatch<A> load_words(const std::byte* p) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse2_only<A>) {
    return _mm_unpacklo_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), _mm_setzero_si128());
  }
#endif
  return load_u16<A>(p);
}

/** 2 * lanes<A> little-endian 16-bit words at p, zero-extended to int32: lo gets the first lanes<A>. */
template <class A>
inline void load_words(const std::byte* p, ibatch<A>& lo, ibatch<A>& hi) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), zero = _mm_setzero_si128();
    lo = _mm_unpacklo_epi16(w, zero);
    hi = _mm_unpackhi_epi16(w, zero);
    return;
  }
#endif
  lo = load_words<A>(p);
  hi = load_words<A>(p + 2 * lanes<A>);
}

/**
 * Halves (zero-extended in int32 lanes) -> floats, exactly, with integer operations and one exact
 * int -> float conversion. Normal halves, infinities and NaNs rebias their exponent in place (by 127 - 15,
 * or to 255 when it is 31, the payload kept and a NaN quieted as ggml's conversion does); zeros and subnormals are m *
 * 2^-24 with m < 1024, a product that is exact and never subnormal in float.
 */
template <class A>
inline fbatch<A> halves_to_float(const ibatch<A>& h) noexcept {
  const ibatch<A> mag = h & ibatch<A>(0x7FFF);
  const ibatch<A> sign = (h >> 15) << 31;
  const ibatch<A> rebias = xsimd::select(mag >= ibatch<A>(0x7C00), ibatch<A>(224 << 23), ibatch<A>(112 << 23));
  const ibatch<A> quiet = xsimd::select(mag > ibatch<A>(0x7C00), ibatch<A>(0x00400000), ibatch<A>(0));  // NaN: quiet it
  const fbatch<A> big = as_float<A>(sign | quiet | ((mag << 13) + rebias));
  const fbatch<A> m = to_float<A>(mag);
  const fbatch<A> small = m * as_float<A>(sign | ibatch<A>(0x33800000));  // +-2^-24, so -0 stays -0
  return xsimd::select(m < fbatch<A>(1024.0f), small, big);
}

/// f16 elements: vectors of lanes<A>, pairs of vectors, single elements.
template <class A>
struct f16_elements {
  static fbatch<A> vector(const std::byte* p) noexcept {
    if constexpr (native_half<A>) {
      return load_half<A>(p);
    } else {
      return halves_to_float<A>(load_words<A>(p));
    }
  }
  static void pair(const std::byte* p, fbatch<A>& a, fbatch<A>& b) noexcept {
    if constexpr (native_half<A>) {
      a = load_half<A>(p);
      b = load_half<A>(p + 2 * lanes<A>);
    } else {
      ibatch<A> lo, hi;
      load_words<A>(p, lo, hi);
      a = halves_to_float<A>(lo);
      b = halves_to_float<A>(hi);
    }
  }
  static float one(const std::byte* p) noexcept { return half_scale(p); }
};

/// bf16 elements: each word moved to the top half of a float.
template <class A>
struct bf16_elements {
  static fbatch<A> vector(const std::byte* p) noexcept {
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
    return as_float<A>(load_words<A>(p) << 16);
  }
  static void pair(const std::byte* p, fbatch<A>& a, fbatch<A>& b) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
    if constexpr (is_sse<A>) {  // 8 words, one load
      const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), zero = _mm_setzero_si128();
      a = _mm_castsi128_ps(_mm_unpacklo_epi16(zero, w));
      b = _mm_castsi128_ps(_mm_unpackhi_epi16(zero, w));
      return;
    }
#endif
    a = vector(p);
    b = vector(p + 2 * lanes<A>);
  }
  static float one(const std::byte* p) noexcept { return detail::bf16_to_float(detail::le16(p)); }
};

/// The loop shared by both: 4 * lanes<A> elements a turn, then lanes<A>, then one.
template <class A, class E>
inline void convert_words(const std::byte* src, float* dst, std::size_t n) noexcept {
  constexpr std::size_t L = lanes<A>;
  std::size_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  // Outputs far larger than the caches: non-temporal stores write whole lines without reading them
  // first, which matters here because these types move the most bytes per weight (2 in, 4 out).
  if constexpr (is_avx512<A>) {
    if (n * sizeof(float) >= (std::size_t{16} << 20) && (reinterpret_cast<std::uintptr_t>(dst) & 63) == 0) {
      for (; i + 4 * L <= n; i += 4 * L) {
        fbatch<A> a, b, c, d;
        E::pair(src + 2 * i, a, b);
        E::pair(src + 2 * (i + 2 * L), c, d);
        _mm512_stream_ps(dst + i, a);
        _mm512_stream_ps(dst + i + L, b);
        _mm512_stream_ps(dst + i + 2 * L, c);
        _mm512_stream_ps(dst + i + 3 * L, d);
      }
      _mm_sfence();
    }
  }
#endif
  for (; i + 4 * L <= n; i += 4 * L) {
    fbatch<A> a, b, c, d;
    E::pair(src + 2 * i, a, b);
    a.store_unaligned(dst + i);
    b.store_unaligned(dst + i + L);
    E::pair(src + 2 * (i + 2 * L), c, d);
    c.store_unaligned(dst + i + 2 * L);
    d.store_unaligned(dst + i + 3 * L);
  }
  for (; i + L <= n; i += L) E::vector(src + 2 * i).store_unaligned(dst + i);
  for (; i < n; ++i) dst[i] = E::one(src + 2 * i);
}

}  // namespace detail_plain

/// f16: IEEE half -> float, exact. `n` elements.
template <class A>
void dequant_f16(const std::byte* src, float* dst, std::size_t n) noexcept {
  detail_plain::convert_words<A, detail_plain::f16_elements<A>>(src, dst, n);
}

/// bf16: the top 16 bits of a float. `n` elements.
template <class A>
void dequant_bf16(const std::byte* src, float* dst, std::size_t n) noexcept {
  detail_plain::convert_words<A, detail_plain::bf16_elements<A>>(src, dst, n);
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_PLAIN_HPP
