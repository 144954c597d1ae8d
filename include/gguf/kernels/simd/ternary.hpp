#ifndef GGUF_KERNELS_SIMD_TERNARY_HPP
#define GGUF_KERNELS_SIMD_TERNARY_HPP

#include <cstddef>

#include "gguf/detail/isa.hpp"
#include "gguf/detail/xsimd_compat.hpp"
#include "gguf/kernels/blocks.hpp"
#include "gguf/kernels/scalar.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// PLACEHOLDER: forwards to the scalar kernels until the SIMD kernels are written.
template <class A>
void dequant_tq2_0(const std::byte* src, float* dst, std::size_t nb) noexcept { scalar::dequant_tq2_0(src, dst, nb); }

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_TERNARY_HPP
