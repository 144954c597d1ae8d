#ifndef GGUF_KERNELS_SIMD_HPP
#define GGUF_KERNELS_SIMD_HPP

#include "gguf/kernels/kernel_table.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/registry.hpp"
#include "gguf/kernels/scalar.hpp"

/**
 * @file
 * The kernel of each type for an instruction set, and the best ones the including translation unit's
 * flags allow. Defining GGUF_NO_SIMD before including any gguf header leaves out the SIMD kernels and
 * xsimd altogether: every type then uses its scalar kernel (for targets xsimd does not support, or to
 * compare against the specification).
 */

#if !defined(GGUF_NO_SIMD)
// Every family's SIMD code, for the rows to name.
#include "gguf/kernels/fp4/dequantize_simd.hpp"
#include "gguf/kernels/fp4/quantize_simd.hpp"
#include "gguf/kernels/iq_grid/dequantize_simd.hpp"
#include "gguf/kernels/iq_grid/quantize_simd.hpp"
#include "gguf/kernels/iq_table/dequantize_simd.hpp"
#include "gguf/kernels/iq_table/quantize_simd.hpp"
#include "gguf/kernels/k_quants/dequantize_simd.hpp"
#include "gguf/kernels/k_quants/quantize_simd.hpp"
#include "gguf/kernels/legacy/dequantize_simd.hpp"
#include "gguf/kernels/legacy/quantize_simd.hpp"
#include "gguf/kernels/low_bit/dequantize_simd.hpp"
#include "gguf/kernels/low_bit/quantize_simd.hpp"
#include "gguf/kernels/plain/dequantize_simd.hpp"
#include "gguf/kernels/plain/quantize_simd.hpp"
#include "gguf/kernels/simd/streaming.hpp"
#include "gguf/kernels/ternary/dequantize_simd.hpp"
#include "gguf/kernels/ternary/quantize_simd.hpp"
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
namespace simd {
/// The `quantize_simd` column of a registry row whose scalar quantizer serves every instruction set.
template <class A>
inline constexpr std::nullptr_t no_quantizer = nullptr;
}  // namespace simd

/**
 * The kernel of each type for the xsimd architecture `A`, writing `Out` (float, f16 or bf16): its
 * registry row's `dequantize_simd`. Every SIMD kernel gives exactly the scalar kernel's
 * bits (for f16 and bf16: the scalar floats rounded to nearest even); an output past the caches goes
 * out with non-temporal stores where `A` has them (simd/streaming.hpp).
 * @param t a valid ggml type
 * @return the kernel, never null for a type of `ggml_types`
 */
template <class A, dequant_output Out = float>
constexpr dequant_fn_to<Out> simd_kernel(ggml_type t) noexcept {
  switch (t) {
#define GGUF_REGISTRY_SIMD_KERNEL(type, block, dq, dq_simd, ...) \
  case ggml_type::type: return simd::streaming_kernel<A, Out, ggml_type::type, simd::dq_simd<A, Out>>();
    GGUF_KERNEL_REGISTRY(GGUF_REGISTRY_SIMD_KERNEL)
#undef GGUF_REGISTRY_SIMD_KERNEL
  }
  return scalar_kernel_to<Out>(t);
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
 * The quantizer of `t` for the xsimd architecture `A`: its registry row's `quantize_simd` where there is
 * one (every quantized type but f32 and q1_0), else the scalar quantizer. Every one writes exactly the
 * scalar quantizer's bytes (under the same NaN policy).
 * @param t a ggml type
 * @return the quantizer; nullptr where `scalar_quantizer` has none
 */
template <class A>
constexpr quant_fn simd_quantizer(ggml_type t) noexcept {
#if !defined(GGUF_NO_SIMD)
  switch (t) {
#define GGUF_REGISTRY_SIMD_QUANTIZER(type, block, dq, dq_simd, q, q_simd, ...)                   \
  case ggml_type::type:                                                                          \
    if constexpr (constexpr quant_fn f = detail::as_quant_fn<simd::q_simd<A>>(); f != nullptr) { \
      return detail::with_nan_policy<ggml_type::type, f>();                                      \
    }                                                                                            \
    break;
    GGUF_KERNEL_REGISTRY(GGUF_REGISTRY_SIMD_QUANTIZER)
#undef GGUF_REGISTRY_SIMD_QUANTIZER
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
