#ifndef GGUF_KERNELS_SIMD_OPS_CONVERT_HPP
#define GGUF_KERNELS_SIMD_OPS_CONVERT_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/simd/ops/intrinsics.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

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

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_CONVERT_HPP
