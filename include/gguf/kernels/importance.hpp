#ifndef GGUF_KERNELS_IMPORTANCE_HPP
#define GGUF_KERNELS_IMPORTANCE_HPP

#include "gguf/format/ggml_types.hpp"
#include "gguf/kernels/isa.hpp"

/**
 * @file
 * Which quantizers need or read importance weights (an imatrix entry): facts about the types, apart
 * from the quantizers themselves, so that `gguf::quantize` checks its arguments without compiling a
 * kernel when the kernels come from `gguf::dispatch`.
 */

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels {

/**
 * Whether ggml refuses to quantize type `t` without importance weights (ggml_quantize_requires_imatrix):
 * iq2_xxs, iq2_xs and iq1_s, whose grids need them to choose well.
 * @param t a ggml type
 * @return true for those three types
 */
constexpr bool requires_importance(ggml_type t) noexcept {
  return t == ggml_type::iq2_xxs || t == ggml_type::iq2_xs || t == ggml_type::iq1_s;
}

/**
 * Whether type `t`'s quantizer reads importance weights at all (the others accept and ignore them, as
 * ggml does: f32, f16, bf16, q8_0, the ternary types, mxfp4, nvfp4, q1_0, q2_0).
 * @param t a ggml type
 * @return true when the weights change the bytes
 */
constexpr bool uses_importance(ggml_type t) noexcept {
  switch (t) {
    case ggml_type::q4_0:
    case ggml_type::q4_1:
    case ggml_type::q5_0:
    case ggml_type::q5_1:
    case ggml_type::q2_K:
    case ggml_type::q3_K:
    case ggml_type::q4_K:
    case ggml_type::q5_K:
    case ggml_type::q6_K:
    case ggml_type::iq4_nl:
    case ggml_type::iq4_xs:
    case ggml_type::iq2_xxs:
    case ggml_type::iq2_xs:
    case ggml_type::iq2_s:
    case ggml_type::iq3_xxs:
    case ggml_type::iq3_s:
    case ggml_type::iq1_s:
    case ggml_type::iq1_m: return true;
    default: return false;
  }
}

}  // namespace kernels
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_IMPORTANCE_HPP
