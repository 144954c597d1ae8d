#ifndef GGUF_DETAIL_ISA_HPP
#define GGUF_DETAIL_ISA_HPP

#include <cstddef>

#include "gguf/version.hpp"

/**
 * Kernel code lives in an inline namespace named for the instruction set the translation unit is
 * compiled for. The runtime-dispatch library compiles the same headers once per ISA (-mavx2,
 * -mavx512bw, ...); without distinct names the linker could keep the AVX-512 copy of an inline helper
 * and hand it to the baseline code path (seen at -O0 with GCC). Parsing code does not depend on the
 * ISA and stays outside. A translation unit may set GGUF_ISA_NS itself.
 */
#ifndef GGUF_ISA_NS
#if defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
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

#define GGUF_KERNELS_BEGIN_NAMESPACE \
  GGUF_BEGIN_NAMESPACE               \
  inline namespace GGUF_ISA_NS {
#define GGUF_KERNELS_END_NAMESPACE \
  }                                \
  GGUF_END_NAMESPACE

GGUF_BEGIN_NAMESPACE
/**
 * A block kernel: dequantize `n_blocks` whole blocks at `src` into `n_blocks * block_size` floats at
 * `dst` (for the one-weight types f32 ... i64, a block is one element). Any alignment. Kernels cannot
 * fail: sizes are checked before they run.
 */
using dequant_fn = void (*)(const std::byte* src, float* dst, std::size_t n_blocks) noexcept;
GGUF_END_NAMESPACE

#endif  // GGUF_DETAIL_ISA_HPP
