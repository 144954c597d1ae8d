#ifndef GGUF_KERNELS_BARRIERS_HPP
#define GGUF_KERNELS_BARRIERS_HPP

#include "gguf/kernels/isa.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels {

/**
 * Makes the float `x` opaque to the optimiser, in a register: an empty asm that claims to change it.
 * Stops `a * b` from being fused with a later `+ c` into one FMA whatever -ffp-contract or -march the
 * user compiles with (GCC contracts across statements in GNU mode), so the scalar kernels round twice,
 * as ggml's reference C does.
 */
inline void opaque(float& x) noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+x"(x));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(x));
#elif defined(__GNUC__)
  __asm__("" : "+r"(x));
#else
  volatile float v = x;  // MSVC does not contract under its default /fp:precise; this is a fallback
  x = v;
#endif
}

/**
 * Makes the compiler store `x` and read it back from memory: the SIMD kernels' scale tables must be in
 * memory before they are broadcast from it (see k_quants/dequantize_simd.hpp, `chunked`).
 */
template <class T>
inline void in_memory(T& x) noexcept {
#if defined(__GNUC__)
  __asm__("" : "+m"(x));
#else
  (void)x;
#endif
}

}  // namespace kernels
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_BARRIERS_HPP
