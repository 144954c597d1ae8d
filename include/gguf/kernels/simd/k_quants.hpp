#ifndef GGUF_KERNELS_SIMD_K_QUANTS_HPP
#define GGUF_KERNELS_SIMD_K_QUANTS_HPP

#include <cstddef>

#include "gguf/detail/isa.hpp"
#include "gguf/detail/xsimd_compat.hpp"
#include "gguf/kernels/blocks.hpp"
#include "gguf/kernels/scalar.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// PLACEHOLDER: forwards to the scalar kernels until the SIMD kernels are written.
template <class A>
void dequant_q2_K(const std::byte* src, float* dst, std::size_t nb) noexcept { scalar::dequant_q2_K(src, dst, nb); }
template <class A>
void dequant_q3_K(const std::byte* src, float* dst, std::size_t nb) noexcept { scalar::dequant_q3_K(src, dst, nb); }
template <class A>
void dequant_q4_K(const std::byte* src, float* dst, std::size_t nb) noexcept { scalar::dequant_q4_K(src, dst, nb); }
template <class A>
void dequant_q5_K(const std::byte* src, float* dst, std::size_t nb) noexcept { scalar::dequant_q5_K(src, dst, nb); }
template <class A>
void dequant_q6_K(const std::byte* src, float* dst, std::size_t nb) noexcept { scalar::dequant_q6_K(src, dst, nb); }
template <class A>
void dequant_q8_K(const std::byte* src, float* dst, std::size_t nb) noexcept { scalar::dequant_q8_K(src, dst, nb); }

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_K_QUANTS_HPP
