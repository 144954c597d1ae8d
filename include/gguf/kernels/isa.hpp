#ifndef GGUF_KERNELS_ISA_HPP
#define GGUF_KERNELS_ISA_HPP

#include "gguf/version.hpp"

/**
 * @file
 * The namespace of kernel code. Kernels live in an inline namespace named for the instruction set the
 * translation unit is compiled for. The runtime-dispatch library compiles the same headers once per ISA
 * (-mavx2, -mavx512bw, ...); without distinct names the linker could keep the AVX-512 copy of an inline
 * helper and hand it to the baseline code path (seen at -O0 with GCC). Only code goes there: data (block
 * layouts, lookup tables) and the parser do not depend on the ISA and stay outside, defined once. A
 * translation unit may set GGUF_ISA_NS itself (the dispatch library does).
 */

/**
 * @def GGUF_ISA_NS
 * The name of the kernels' inline namespace: by default from the compiler's target macros (isa_avx512bf16,
 * isa_avx512bw, isa_avx2, isa_avx2_nofma, isa_sse4_1, isa_neon64, else isa_base); a translation unit may define it
 * first.
 */
#ifndef GGUF_ISA_NS
#if defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__) && defined(__AVX512BF16__)
#define GGUF_ISA_NS isa_avx512bf16
#elif defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#define GGUF_ISA_NS isa_avx512bw
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define GGUF_ISA_NS isa_avx2
#elif defined(__AVX2__)
#define GGUF_ISA_NS isa_avx2_nofma
#elif defined(__SSE4_1__)
#define GGUF_ISA_NS isa_sse4_1
#elif defined(__aarch64__) || defined(_M_ARM64)
#define GGUF_ISA_NS isa_neon64
#else
#define GGUF_ISA_NS isa_base
#endif
#endif

/// Opens `gguf::v0::GGUF_ISA_NS` (both inline): kernel headers only.
#define GGUF_KERNELS_BEGIN_NAMESPACE \
  GGUF_BEGIN_NAMESPACE               \
  inline namespace GGUF_ISA_NS {
/// Closes GGUF_KERNELS_BEGIN_NAMESPACE.
#define GGUF_KERNELS_END_NAMESPACE \
  }                                \
  GGUF_END_NAMESPACE

#endif  // GGUF_KERNELS_ISA_HPP
