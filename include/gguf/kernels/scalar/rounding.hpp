#ifndef GGUF_KERNELS_SCALAR_ROUNDING_HPP
#define GGUF_KERNELS_SCALAR_ROUNDING_HPP

#include "gguf/detail/isa.hpp"
#include "gguf/version.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

/**
 * a * b + c with two roundings, as ggml's reference C computes it: never fused into one FMA, whatever
 * -ffp-contract or -march the user compiles with (GCC contracts across statements in GNU mode, so a
 * plain `a * b + c` would round differently on an FMA machine). The empty asm makes the product opaque
 * to the optimiser.
 */
inline float mul_add(float a, float b, float c) noexcept {
  float p = a * b;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+x"(p));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(p));
#elif defined(__GNUC__)
  __asm__("" : "+r"(p));
#else
  volatile float v = p;  // MSVC does not contract under its default /fp:precise; this is a fallback
  p = v;
#endif
  return p + c;
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SCALAR_ROUNDING_HPP
