#ifndef GGUF_KERNELS_SIMD_OPS_STORE_HPP
#define GGUF_KERNELS_SIMD_OPS_STORE_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gguf/format/half.hpp"
#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/simd/ops/intrinsics.hpp"
#include "gguf/kernels/simd/ops/reduce.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// ---- Stores -------------------------------------------------------------------------------------

/**
 * Whether the values of a store or table rounding below can be subnormal floats: their `normal` argument
 * (put_pair, table_words and the put_* lookups of avx512_word_lookups.hpp). `none` (no_subnormals) from a
 * kernel whose values cannot be: products of an f16 (or smaller) scale and integers or grid levels, every
 * nonzero one at least 2^-27 in magnitude. AVX512-BF16's rounding reads a subnormal as zero, so bf16
 * outputs check every vector for one (vfpclassps) and redo it with integers; that check, not the
 * rounding, is the dearest part of a table-lookup kernel's bf16 output. The default, `possible`, checks:
 * f32, bf16 and f64 inputs, f32 scales (q8_K) and E8M0 ones (mxfp4) can be tiny.
 */
enum class subnormals : bool { possible, none };

/// What a kernel whose values cannot be subnormal passes as `normal` (see subnormals).
inline constexpr subnormals no_subnormals = subnormals::none;

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
GGUF_SIMD_INLINE __m256i avx512_words(__m512 v, subnormals normal = subnormals::possible) noexcept {
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
    if (normal == subnormals::none) return r;
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
GGUF_SIMD_INLINE void put_pair(Out* p, const fbatch<A>& a, const fbatch<A>& b,
                               subnormals normal = subnormals::possible) noexcept {
#if GGUF_SIMD_AVX512 && defined(__AVX512BF16__)
  if constexpr (is_avx512<A> && std::is_same_v<Out, bf16>) {
    if (normal == subnormals::none || (_mm512_fpclass_ps_mask(a, 0x20) | _mm512_fpclass_ps_mask(b, 0x20)) == 0)
        [[likely]] {
      _mm512_storeu_si512(p, std::bit_cast<__m512i>(_mm512_cvtne2ps_pbh(b, a)));
      return;
    }
  }
#endif
  (void)normal;
  put<A>(p, a);
  put<A>(p + lanes<A>, b);
}

// ---- Streaming stores ---------------------------------------------------------------------------

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

/**
 * Copies `bytes` (a multiple of 64) from `src` to `dst` (64-byte aligned) with non-temporal stores
 * (`stream_fence` orders them before later stores). Only where `stream_stores<A>`.
 */
template <class A>
inline void stream_copy(void* dst, const void* src, std::size_t bytes) noexcept {
#if defined(__AVX512F__)
  if constexpr (is_avx512<A>) {
    auto* d = static_cast<__m512i*>(dst);
    const auto* s = static_cast<const __m512i*>(src);
    // the source by unaligned loads: as fast when it is aligned, and mingw's GCC may not align a
    // 64-byte-aligned local on the stack (its bug 54412)
    for (std::size_t i = 0; i < bytes / 64; ++i) _mm512_stream_si512(d + i, _mm512_loadu_si512(s + i));
    return;
  }
#endif
  static_assert(stream_stores<A>, "no streaming stores");
  std::memcpy(dst, src, bytes);
}

/**
 * The first floats of a row of n at src rounded to bf16 at dst, as put rounds them (ggml_fp32_to_bf16:
 * nearest even, a NaN made quiet): the bf16 quantizer's fast steps. Returns how many it rounded, the
 * rest left to the caller's puts: on AVX-512 every whole 32, two batches a step, 10 vector operations for
 * 32 weights (put's 18 would be the bound: Zen 4 runs two 512-bit operations a cycle): the nearest-even
 * increment added to each float's bits, the high words of both batches picked by one word permute into
 * one full store. A NaN, which would need its quiet bit, sends its step to put. Elsewhere none (0).
 */
template <class A>
GGUF_SIMD_INLINE std::size_t put_bf16_steps([[maybe_unused]] bf16* dst, [[maybe_unused]] const float* src,
                                            [[maybe_unused]] std::size_t n) noexcept {
  std::size_t i = 0;
#if GGUF_SIMD_AVX512
  if constexpr (is_avx512<A>) {
    const auto rounded = [](const __m512i w) {
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(w, 16), _mm512_set1_epi32(1));
      return _mm512_add_epi32(_mm512_add_epi32(w, _mm512_set1_epi32(0x7FFF)), lsb);
    };
    const __m512i high_words = _mm512_setr_epi32(0x00030001, 0x00070005, 0x000B0009, 0x000F000D, 0x00130011, 0x00170015,
                                                 0x001B0019, 0x001F001D, 0x00230021, 0x00270025, 0x002B0029, 0x002F002D,
                                                 0x00330031, 0x00370035, 0x003B0039, 0x003F003D);
    for (; i + 32 <= n; i += 32) {
      if (i + 32 + 512 <= n) prefetch_read(src + i + 512, 128);
      const __m512 a = _mm512_loadu_ps(src + i), b = _mm512_loadu_ps(src + i + 16);
      if (_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q) != 0) {
        put<A>(dst + i, fbatch<A>(a));
        put<A>(dst + i + 16, fbatch<A>(b));
        continue;
      }
      _mm512_storeu_si512(dst + i, _mm512_permutex2var_epi16(rounded(_mm512_castps_si512(a)), high_words,
                                                             rounded(_mm512_castps_si512(b))));
    }
  }
#endif
  return i;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_STORE_HPP
