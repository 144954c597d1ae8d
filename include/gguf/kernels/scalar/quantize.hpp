#ifndef GGUF_KERNELS_SCALAR_QUANTIZE_HPP
#define GGUF_KERNELS_SCALAR_QUANTIZE_HPP

#include <cstddef>

#include "gguf/format/ggml_types.hpp"
#include "gguf/kernels/isa.hpp"
#include "gguf/result.hpp"
#include "gguf/kernels/scalar/quantize/common.hpp"
#include "gguf/kernels/scalar/quantize/iq_quants.hpp"
#include "gguf/kernels/scalar/quantize/k_quants.hpp"
#include "gguf/kernels/scalar/quantize/legacy.hpp"
#include "gguf/kernels/scalar/quantize/low_bit.hpp"
#include "gguf/kernels/scalar/quantize/nonlinear.hpp"
#include "gguf/kernels/scalar/quantize/plain.hpp"
#include "gguf/kernels/scalar/quantize/ternary.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels {

/**
 * A row quantizer: `n_per_row` floats at `src` (a whole number of blocks) into `n_per_row / block_size`
 * blocks at `dst` (any alignment), with one importance weight per column at `importance`, or none
 * (nullptr). The callers check sizes first; the one failure left is a row ggml itself cannot quantize
 * (it aborts: the IQ grid types on NaN, infinities or squares that overflow), `errc::out_of_range`, after
 * which the row's bytes are unspecified.
 */
using quant_fn = errc (*)(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept;

namespace quant_detail {
/// A quantizer that cannot fail, as a `quant_fn`.
template <void (*F)(const float*, std::byte*, std::size_t, const float*) noexcept>
errc never_fails(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  F(src, dst, n_per_row, importance);
  return errc::success;
}
}  // namespace quant_detail

/**
 * The reference (scalar) quantizer of each type: bytes identical to ggml's ggml_quantize_chunk, row by row.
 * @param t a ggml type
 * @return the quantizer; nullptr for the types this library does not quantize (q8_1 and q8_K, which
 *         ggml_quantize_chunk refuses too; the integer types and f64)
 */
constexpr quant_fn scalar_quantizer(ggml_type t) noexcept {
  using namespace scalar;
  using quant_detail::never_fails;
  switch (t) {
    case ggml_type::f32: return never_fails<quantize_f32>;
    case ggml_type::f16: return never_fails<quantize_f16>;
    case ggml_type::bf16: return never_fails<quantize_bf16>;
    case ggml_type::q4_0: return never_fails<quantize_q4_0>;
    case ggml_type::q4_1: return never_fails<quantize_q4_1>;
    case ggml_type::q5_0: return never_fails<quantize_q5_0>;
    case ggml_type::q5_1: return never_fails<quantize_q5_1>;
    case ggml_type::q8_0: return never_fails<quantize_q8_0>;
    case ggml_type::q2_K: return never_fails<quantize_q2_K>;
    case ggml_type::q3_K: return never_fails<quantize_q3_K>;
    case ggml_type::q4_K: return never_fails<quantize_q4_K>;
    case ggml_type::q5_K: return never_fails<quantize_q5_K>;
    case ggml_type::q6_K: return never_fails<quantize_q6_K>;
    case ggml_type::iq2_xxs: return quantize_iq2_xxs;
    case ggml_type::iq2_xs: return quantize_iq2_xs;
    case ggml_type::iq2_s: return quantize_iq2_s;
    case ggml_type::iq3_xxs: return quantize_iq3_xxs;
    case ggml_type::iq3_s: return quantize_iq3_s;
    case ggml_type::iq1_s: return quantize_iq1_s;
    case ggml_type::iq1_m: return quantize_iq1_m;
    case ggml_type::iq4_nl: return never_fails<quantize_iq4_nl>;
    case ggml_type::iq4_xs: return never_fails<quantize_iq4_xs>;
    case ggml_type::tq1_0: return never_fails<quantize_tq1_0>;
    case ggml_type::tq2_0: return never_fails<quantize_tq2_0>;
    case ggml_type::mxfp4: return never_fails<quantize_mxfp4>;
    case ggml_type::nvfp4: return never_fails<quantize_nvfp4>;
    case ggml_type::q1_0: return never_fails<quantize_q1_0>;
    case ggml_type::q2_0: return never_fails<quantize_q2_0>;
    default: return nullptr;
  }
}

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

#endif  // GGUF_KERNELS_SCALAR_QUANTIZE_HPP
