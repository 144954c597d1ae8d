#ifndef GGUF_KERNELS_SCALAR_QUANTIZE_HPP
#define GGUF_KERNELS_SCALAR_QUANTIZE_HPP

// scalar_quantizer moved to gguf/kernels/scalar.hpp, with the other scalar tables; kept so existing
// includes compile.
#include "gguf/kernels/scalar.hpp"

#endif  // GGUF_KERNELS_SCALAR_QUANTIZE_HPP
