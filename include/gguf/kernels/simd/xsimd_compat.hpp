#ifndef GGUF_KERNELS_SIMD_XSIMD_COMPAT_HPP
#define GGUF_KERNELS_SIMD_XSIMD_COMPAT_HPP

#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "gguf/kernels/isa.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// The differences between the xsimd versions gguf supports (8.1, Debian's, up to 13) that the kernels
// meet, and nothing else: each is a name or a template argument that changed.

/** The int32 lanes of `x` reinterpreted as float bits (xsimd 9 changed bitwise_cast's argument). */
template <class A>
inline xsimd::batch<float, A> as_float(const xsimd::batch<std::int32_t, A>& x) noexcept {
#if XSIMD_VERSION_MAJOR >= 9
  return xsimd::bitwise_cast<float>(x);
#else
  return xsimd::bitwise_cast<xsimd::batch<float, A>>(x);
#endif
}

/** The float lanes of `x` reinterpreted as int32 bits. */
template <class A>
inline xsimd::batch<std::int32_t, A> as_int(const xsimd::batch<float, A>& x) noexcept {
#if XSIMD_VERSION_MAJOR >= 9
  return xsimd::bitwise_cast<std::int32_t>(x);
#else
  return xsimd::bitwise_cast<xsimd::batch<std::int32_t, A>>(x);
#endif
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_XSIMD_COMPAT_HPP
