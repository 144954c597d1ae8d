#ifndef GGUF_KERNELS_SIMD_HPP
#define GGUF_KERNELS_SIMD_HPP

#include "gguf/kernels/kernel_table.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/scalar.hpp"
#include "gguf/kernels/scalar/quantize.hpp"

/**
 * @file
 * The kernel of each type for an instruction set, and the best ones the including translation unit's
 * flags allow. Defining GGUF_NO_SIMD before including any gguf header leaves out the SIMD kernels and
 * xsimd altogether: every type then uses its scalar kernel (for targets xsimd does not support, or to
 * compare against the specification).
 */

#if !defined(GGUF_NO_SIMD)
#include "gguf/kernels/simd/iq_grids.hpp"
#include "gguf/kernels/simd/k_quants.hpp"
#include "gguf/kernels/simd/legacy.hpp"
#include "gguf/kernels/simd/low_bit.hpp"
#include "gguf/kernels/simd/nonlinear.hpp"
#include "gguf/kernels/simd/plain.hpp"
#include "gguf/kernels/simd/quantize.hpp"
#include "gguf/kernels/simd/quantize_iq.hpp"
#include "gguf/kernels/simd/quantize_iq4.hpp"
#include "gguf/kernels/simd/quantize_k.hpp"
#include "gguf/kernels/simd/quantize_ternary.hpp"
#include "gguf/kernels/simd/streaming.hpp"
#include "gguf/kernels/simd/ternary.hpp"
#endif

/**
 * @namespace gguf::kernels::simd
 * The SIMD kernels, templates on the xsimd architecture `A`, for the types where SIMD pays: each gives
 * exactly the bits of its scalar twin. Also what they share: the architecture predicates (simd/arch.hpp)
 * and the operations xsimd lacks (simd/ops.hpp).
 */

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels {

#if !defined(GGUF_NO_SIMD)
/**
 * The kernel of each type for the xsimd architecture `A`, writing `Out` (float, f16 or bf16): its SIMD
 * kernel where there is one, else the scalar kernel. Every SIMD kernel gives exactly the scalar kernel's
 * bits (for f16 and bf16: the scalar floats rounded to nearest even); an output past the caches goes
 * out with non-temporal stores where `A` has them (simd/streaming.hpp).
 * @param t a valid ggml type
 * @return the kernel, never null for a type of `ggml_types`
 */
template <class A, dequant_output Out = float>
constexpr dequant_fn_to<Out> simd_kernel(ggml_type t) noexcept {
  switch (t) {
    case ggml_type::q4_0: return simd::streaming_kernel<A, Out, ggml_type::q4_0, simd::dequant_q4_0<A, Out>>();
    case ggml_type::q4_1: return simd::streaming_kernel<A, Out, ggml_type::q4_1, simd::dequant_q4_1<A, Out>>();
    case ggml_type::q5_0: return simd::streaming_kernel<A, Out, ggml_type::q5_0, simd::dequant_q5_0<A, Out>>();
    case ggml_type::q5_1: return simd::streaming_kernel<A, Out, ggml_type::q5_1, simd::dequant_q5_1<A, Out>>();
    case ggml_type::q8_0: return simd::streaming_kernel<A, Out, ggml_type::q8_0, simd::dequant_q8_0<A, Out>>();
    case ggml_type::q8_1: return simd::streaming_kernel<A, Out, ggml_type::q8_1, simd::dequant_q8_1<A, Out>>();
    case ggml_type::q2_K: return simd::streaming_kernel<A, Out, ggml_type::q2_K, simd::dequant_q2_K<A, Out>>();
    case ggml_type::q3_K: return simd::streaming_kernel<A, Out, ggml_type::q3_K, simd::dequant_q3_K<A, Out>>();
    case ggml_type::q4_K: return simd::streaming_kernel<A, Out, ggml_type::q4_K, simd::dequant_q4_K<A, Out>>();
    case ggml_type::q5_K: return simd::streaming_kernel<A, Out, ggml_type::q5_K, simd::dequant_q5_K<A, Out>>();
    case ggml_type::q6_K: return simd::streaming_kernel<A, Out, ggml_type::q6_K, simd::dequant_q6_K<A, Out>>();
    case ggml_type::q8_K: return simd::streaming_kernel<A, Out, ggml_type::q8_K, simd::dequant_q8_K<A, Out>>();
    case ggml_type::f16: return simd::streaming_kernel<A, Out, ggml_type::f16, simd::dequant_f16<A, Out>>();
    case ggml_type::bf16: return simd::streaming_kernel<A, Out, ggml_type::bf16, simd::dequant_bf16<A, Out>>();
    case ggml_type::f64: return simd::streaming_kernel<A, Out, ggml_type::f64, simd::dequant_f64<A, Out>>();
    case ggml_type::f32: return simd::streaming_kernel<A, Out, ggml_type::f32, simd::dequant_f32<A, Out>>();
    case ggml_type::i8: return simd::streaming_kernel<A, Out, ggml_type::i8, simd::dequant_i8<A, Out>>();
    case ggml_type::i16: return simd::streaming_kernel<A, Out, ggml_type::i16, simd::dequant_i16<A, Out>>();
    case ggml_type::i32: return simd::streaming_kernel<A, Out, ggml_type::i32, simd::dequant_i32<A, Out>>();
    case ggml_type::i64: return simd::streaming_kernel<A, Out, ggml_type::i64, simd::dequant_i64<A, Out>>();
    case ggml_type::iq2_xxs: return simd::streaming_kernel<A, Out, ggml_type::iq2_xxs, simd::dequant_iq2_xxs<A, Out>>();
    case ggml_type::iq2_xs: return simd::streaming_kernel<A, Out, ggml_type::iq2_xs, simd::dequant_iq2_xs<A, Out>>();
    case ggml_type::iq2_s: return simd::streaming_kernel<A, Out, ggml_type::iq2_s, simd::dequant_iq2_s<A, Out>>();
    case ggml_type::iq3_xxs: return simd::streaming_kernel<A, Out, ggml_type::iq3_xxs, simd::dequant_iq3_xxs<A, Out>>();
    case ggml_type::iq3_s: return simd::streaming_kernel<A, Out, ggml_type::iq3_s, simd::dequant_iq3_s<A, Out>>();
    case ggml_type::iq1_s: return simd::streaming_kernel<A, Out, ggml_type::iq1_s, simd::dequant_iq1_s<A, Out>>();
    case ggml_type::iq1_m: return simd::streaming_kernel<A, Out, ggml_type::iq1_m, simd::dequant_iq1_m<A, Out>>();
    case ggml_type::iq4_nl: return simd::streaming_kernel<A, Out, ggml_type::iq4_nl, simd::dequant_iq4_nl<A, Out>>();
    case ggml_type::iq4_xs: return simd::streaming_kernel<A, Out, ggml_type::iq4_xs, simd::dequant_iq4_xs<A, Out>>();
    case ggml_type::mxfp4: return simd::streaming_kernel<A, Out, ggml_type::mxfp4, simd::dequant_mxfp4<A, Out>>();
    case ggml_type::nvfp4: return simd::streaming_kernel<A, Out, ggml_type::nvfp4, simd::dequant_nvfp4<A, Out>>();
    case ggml_type::tq2_0: return simd::streaming_kernel<A, Out, ggml_type::tq2_0, simd::dequant_tq2_0<A, Out>>();
    case ggml_type::tq1_0: return simd::streaming_kernel<A, Out, ggml_type::tq1_0, simd::dequant_tq1_0<A, Out>>();
    case ggml_type::q1_0: return simd::streaming_kernel<A, Out, ggml_type::q1_0, simd::dequant_q1_0<A, Out>>();
    case ggml_type::q2_0: return simd::streaming_kernel<A, Out, ggml_type::q2_0, simd::dequant_q2_0<A, Out>>();
    default: return scalar_kernel_to<Out>(t);
  }
}
#endif

/**
 * The best kernel of `t` writing `Out` the compiler flags of this translation unit allow
 * (`simd::best_arch`), or its scalar kernel under GGUF_NO_SIMD.
 * @param t a valid ggml type
 * @return the kernel, never null for a type of `ggml_types`
 */
template <dequant_output Out>
constexpr dequant_fn_to<Out> best_kernel_to(ggml_type t) noexcept {
#if defined(GGUF_NO_SIMD)
  return scalar_kernel_to<Out>(t);
#else
  return simd_kernel<simd::best_arch, Out>(t);
#endif
}

/**
 * The best kernel of `t` the compiler flags of this translation unit allow (`simd::best_arch`), or
 * its scalar kernel under GGUF_NO_SIMD.
 * @param t a valid ggml type
 * @return the kernel, never null for a type of `ggml_types`
 */
constexpr dequant_fn best_kernel(ggml_type t) noexcept { return best_kernel_to<float>(t); }

/**
 * The quantizer of `t` for the xsimd architecture `A`: a SIMD twin where there is one (f16, bf16, q8_0,
 * q4_0, q4_1, q5_0, q5_1, q2_K ... q6_K, iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m, iq4_nl, iq4_xs,
 * mxfp4, nvfp4, tq1_0, tq2_0, q2_0), else the scalar quantizer.
 * Every one writes exactly the scalar quantizer's bytes (x86's NaN signs included, as there).
 * @param t a ggml type
 * @return the quantizer; nullptr where `scalar_quantizer` has none
 */
template <class A>
constexpr quant_fn simd_quantizer(ggml_type t) noexcept {
#if !defined(GGUF_NO_SIMD)
  switch (t) {
    case ggml_type::f16: return simd::quantize_f16<A>;
    case ggml_type::bf16: return simd::quantize_bf16<A>;
    case ggml_type::q8_0: return detail::x86_nan_signs<ggml_type::q8_0, simd::quantize_q8_0<A>>();
    case ggml_type::q4_0: return detail::x86_nan_signs<ggml_type::q4_0, simd::quantize_q4_0<A>>();
    case ggml_type::q4_1: return detail::x86_nan_signs<ggml_type::q4_1, simd::quantize_q4_1<A>>();
    case ggml_type::q5_0: return detail::x86_nan_signs<ggml_type::q5_0, simd::quantize_q5_0<A>>();
    case ggml_type::q5_1: return detail::x86_nan_signs<ggml_type::q5_1, simd::quantize_q5_1<A>>();
    case ggml_type::iq2_xxs: return simd::quantize_iq2_xxs<A>;
    case ggml_type::iq2_xs: return simd::quantize_iq2_xs<A>;
    case ggml_type::iq2_s: return simd::quantize_iq2_s<A>;
    case ggml_type::iq3_xxs: return simd::quantize_iq3_xxs<A>;
    case ggml_type::iq3_s: return simd::quantize_iq3_s<A>;
    case ggml_type::iq1_s: return simd::quantize_iq1_s<A>;
    case ggml_type::iq1_m: return simd::quantize_iq1_m<A>;
    case ggml_type::iq4_nl: return detail::x86_nan_signs<ggml_type::iq4_nl, simd::quantize_iq4_nl<A>>();
    case ggml_type::iq4_xs: return detail::x86_nan_signs<ggml_type::iq4_xs, simd::quantize_iq4_xs<A>>();
    case ggml_type::mxfp4: return simd::quantize_mxfp4<A>;
    case ggml_type::nvfp4: return simd::quantize_nvfp4<A>;
    case ggml_type::tq1_0: return detail::x86_nan_signs<ggml_type::tq1_0, simd::quantize_tq1_0<A>>();
    case ggml_type::tq2_0: return detail::x86_nan_signs<ggml_type::tq2_0, simd::quantize_tq2_0<A>>();
    case ggml_type::q2_0: return detail::x86_nan_signs<ggml_type::q2_0, simd::quantize_q2_0<A>>();
    case ggml_type::q2_K: return detail::x86_nan_signs<ggml_type::q2_K, simd::quantize_q2_K<A>>();
    case ggml_type::q3_K: return detail::x86_nan_signs<ggml_type::q3_K, simd::quantize_q3_K<A>>();
    case ggml_type::q4_K: return detail::x86_nan_signs<ggml_type::q4_K, simd::quantize_q4_K<A>>();
    case ggml_type::q5_K: return detail::x86_nan_signs<ggml_type::q5_K, simd::quantize_q5_K<A>>();
    case ggml_type::q6_K: return detail::x86_nan_signs<ggml_type::q6_K, simd::quantize_q6_K<A>>();
    default: break;
  }
#endif
  return scalar_quantizer(t);
}

/**
 * The best quantizer of `t` the compiler flags of this translation unit allow (`simd::best_arch`), or
 * its scalar quantizer under GGUF_NO_SIMD: what `gguf::quantize` runs.
 * @param t a ggml type
 * @return the quantizer; nullptr where `scalar_quantizer` has none
 */
constexpr quant_fn best_quantizer(ggml_type t) noexcept {
#if defined(GGUF_NO_SIMD)
  return scalar_quantizer(t);
#else
  return simd_quantizer<simd::best_arch>(t);
#endif
}

/** Every best kernel, for the dispatch library (one table per instruction set). */
constexpr ::gguf::detail::kernel_table best_kernel_table() noexcept {
  ::gguf::detail::kernel_table table =
      kernel_table_of([](ggml_type t, auto out) { return best_kernel_to<decltype(out)>(t); });
  for (const type_traits& tt : ggml_types)
    table.quantize[static_cast<std::uint32_t>(tt.type)] = best_quantizer(tt.type);
  return table;
}

/**
 * The best kernels writing `Out` alone (the other entries null): the dispatch library's table of an
 * instruction-set extension that only changes one output's kernels (AVX512-BF16: bf16).
 */
template <dequant_output Out>
constexpr ::gguf::detail::kernel_table best_kernel_table_to() noexcept {
  ::gguf::detail::kernel_table table;
  for (const type_traits& tt : ggml_types)
    table.outputs<Out>()[static_cast<std::uint32_t>(tt.type)] = best_kernel_to<Out>(tt.type);
  return table;
}

}  // namespace kernels
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_HPP
