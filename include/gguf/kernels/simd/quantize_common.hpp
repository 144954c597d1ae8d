#ifndef GGUF_KERNELS_SIMD_QUANTIZE_COMMON_HPP
#define GGUF_KERNELS_SIMD_QUANTIZE_COMMON_HPP

#include <cstddef>
#include <limits>

#include "gguf/kernels/simd/ops.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd::detail {

// What the SIMD quantizers of blocks share (the scale searches are in quantize_search.hpp).

/// Whether any lane of the N batches is NaN or infinite (|x| < inf fails for both).
template <class A, std::size_t N>
inline bool any_special(const fbatch<A> (&x)[N]) noexcept {
  const fbatch<A> inf(std::numeric_limits<float>::infinity());
  auto finite = xsimd::abs(x[0]) < inf;
  for (std::size_t k = 1; k < N; ++k) finite = finite & (xsimd::abs(x[k]) < inf);
  return !xsimd::all(finite);
}

/// Loads N batches of weights from `src`: a block of N * lanes<A>.
template <class A, std::size_t N>
inline void load_block(const float* src, fbatch<A> (&x)[N]) noexcept {
  for (std::size_t k = 0; k < N; ++k) x[k] = fbatch<A>::load_unaligned(src + k * lanes<A>);
}

}  // namespace kernels::simd::detail
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_QUANTIZE_COMMON_HPP
