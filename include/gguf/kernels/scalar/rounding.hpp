#ifndef GGUF_KERNELS_SCALAR_ROUNDING_HPP
#define GGUF_KERNELS_SCALAR_ROUNDING_HPP

#include "gguf/kernels/barriers.hpp"
#include "gguf/kernels/isa.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

/**
 * a * b + c with two roundings, as ggml's reference C computes it: never fused into one FMA, whatever
 * -ffp-contract or -march the user compiles with (the product is made opaque, see `opaque`).
 */
inline float mul_add(float a, float b, float c) noexcept {
  float p = a * b;
  opaque(p);
  return p + c;
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SCALAR_ROUNDING_HPP
