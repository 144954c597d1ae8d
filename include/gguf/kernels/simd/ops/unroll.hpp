#ifndef GGUF_KERNELS_SIMD_OPS_UNROLL_HPP
#define GGUF_KERNELS_SIMD_OPS_UNROLL_HPP

#include <type_traits>
#include <utility>

#include "gguf/kernels/simd/ops/intrinsics.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

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

#endif  // GGUF_KERNELS_SIMD_OPS_UNROLL_HPP
