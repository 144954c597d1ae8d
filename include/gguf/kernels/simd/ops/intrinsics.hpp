#ifndef GGUF_KERNELS_SIMD_OPS_INTRINSICS_HPP
#define GGUF_KERNELS_SIMD_OPS_INTRINSICS_HPP

#include <xsimd/xsimd.hpp>

#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/simd/arch.hpp"
#include "gguf/kernels/simd/xsimd_compat.hpp"

// What every ops header starts from: xsimd, the instruction-set predicates (arch.hpp), the differences
// between xsimd versions, and the instruction sets' intrinsic headers, included here and nowhere else.

#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
#include <arm_neon.h>
#endif

#endif  // GGUF_KERNELS_SIMD_OPS_INTRINSICS_HPP
