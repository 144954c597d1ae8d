#ifndef GGUF_KERNELS_SIMD_OPS_REDUCE_HPP
#define GGUF_KERNELS_SIMD_OPS_REDUCE_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/simd/ops/intrinsics.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

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
GGUF_SIMD_INLINE std::uint16_t half_bits_not_nan(float x) noexcept {
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

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_REDUCE_HPP
