#ifndef GGUF_KERNELS_IMPORTANCE_HPP
#define GGUF_KERNELS_IMPORTANCE_HPP

#include "gguf/format/ggml_types.hpp"
#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/registry.hpp"

/**
 * @file
 * Which quantizers need or read importance weights (an imatrix entry): facts about the types from their
 * registry rows (kernels/registry.hpp), apart from the quantizers themselves, so that `gguf::quantize`
 * checks its arguments without compiling a kernel when the kernels come from `gguf::dispatch`.
 */

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels {

/**
 * Whether ggml refuses to quantize type `t` without importance weights (ggml_quantize_requires_imatrix):
 * iq2_xxs, iq2_xs and iq1_s, whose grids need them to choose well (their rows' `importance` is
 * `required`).
 * @param t a ggml type
 * @return true for those three types
 */
constexpr bool requires_importance(ggml_type t) noexcept { return importance_use_of(t) == importance_use::required; }

/**
 * Whether type `t`'s quantizer reads importance weights at all (the others accept and ignore them, as
 * ggml does: f32, f16, bf16, q8_0, the ternary types, mxfp4, nvfp4, q1_0, q2_0).
 * @param t a ggml type
 * @return true when the weights change the bytes
 */
constexpr bool uses_importance(ggml_type t) noexcept { return importance_use_of(t) != importance_use::ignored; }

}  // namespace kernels
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_IMPORTANCE_HPP
