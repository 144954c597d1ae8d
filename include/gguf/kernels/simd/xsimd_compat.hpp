#ifndef GGUF_KERNELS_SIMD_XSIMD_COMPAT_HPP
#define GGUF_KERNELS_SIMD_XSIMD_COMPAT_HPP

#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/simd/arch.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// The differences between the xsimd versions gguf supports (8.1, Debian's, up to 13) that the kernels
// meet, and nothing else: each is a name or a template argument that changed.

/** The int32 lanes of `x` reinterpreted as float bits (xsimd 9 changed bitwise_cast's argument). */
template <class A>
GGUF_SIMD_INLINE xsimd::batch<float, A> as_float(const xsimd::batch<std::int32_t, A>& x) noexcept {
#if XSIMD_VERSION_MAJOR >= 9
  return xsimd::bitwise_cast<float>(x);
#else
  return xsimd::bitwise_cast<xsimd::batch<float, A>>(x);
#endif
}

/** The float lanes of `x` reinterpreted as int32 bits. */
template <class A>
GGUF_SIMD_INLINE xsimd::batch<std::int32_t, A> as_int(const xsimd::batch<float, A>& x) noexcept {
#if XSIMD_VERSION_MAJOR >= 9
  return xsimd::bitwise_cast<std::int32_t>(x);
#else
  return xsimd::bitwise_cast<xsimd::batch<std::int32_t, A>>(x);
#endif
}

/**
 * xsimd::select of int32 lanes. xsimd 8.1's AVX-512BW integer select switches on the lane size at run
 * time, so it compiles its 8- and 16-bit blends for int32 lanes too, which GCC refuses at -O0 (a debug
 * build with -march=native on an AVX-512 machine did not compile); the float select moves the same bits.
 */
template <class A>
GGUF_SIMD_INLINE xsimd::batch<std::int32_t, A> select_int(const xsimd::batch_bool<std::int32_t, A>& c,
                                                          const xsimd::batch<std::int32_t, A>& a,
                                                          const xsimd::batch<std::int32_t, A>& b) noexcept {
#if XSIMD_VERSION_MAJOR < 9
  if constexpr (std::is_base_of_v<xsimd::avx512f, A>) {  // a mask register, the same for both lane types
    using mask = typename xsimd::batch_bool<std::int32_t, A>::register_type;
    return as_int<A>(xsimd::select(xsimd::batch_bool<float, A>(static_cast<mask>(c)), as_float<A>(a), as_float<A>(b)));
  } else {
    return xsimd::select(c, a, b);
  }
#else
  return xsimd::select(c, a, b);
#endif
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_XSIMD_COMPAT_HPP
