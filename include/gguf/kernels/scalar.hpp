#ifndef GGUF_KERNELS_SCALAR_HPP
#define GGUF_KERNELS_SCALAR_HPP

#include <cstddef>
#include <type_traits>
#include <utility>

#include "gguf/kernels/kernel_table.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/format/half.hpp"
#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/scalar/fp4.hpp"
#include "gguf/kernels/scalar/iq_quants.hpp"
#include "gguf/kernels/scalar/k_quants.hpp"
#include "gguf/kernels/scalar/quantize.hpp"
#include "gguf/kernels/scalar/legacy.hpp"
#include "gguf/kernels/scalar/low_bit.hpp"
#include "gguf/kernels/scalar/plain.hpp"
#include "gguf/kernels/scalar/ternary.hpp"

/**
 * @namespace gguf::kernels
 * The dequantization kernels: per type, one function that converts whole blocks to floats (`dequant_fn`).
 * `scalar_kernel` hands out a type's reference kernel, `simd_kernel<A>` its kernel for the xsimd
 * architecture `A`, `best_kernel` the best one the translation unit's compiler flags allow. The code sits
 * in an inline namespace named for that instruction set (kernels/isa.hpp), which qualified names omit.
 */
/**
 * @namespace gguf::kernels::scalar
 * The reference kernels, plain C++: bit-exact with ggml's dequantize_row_* (docs/FORMAT.md defines the
 * types ggml has no to_float for). Every faster kernel is held to them bit for bit.
 */

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels {

using ::gguf::dequant_fn;
using ::gguf::dequant_fn_to;

/**
 * The scalar kernel of each type: the specification every faster kernel is held to, bit for bit
 * (ggml's dequantize_row_* for the types it has, FORMAT.md for the rest).
 * @param t a ggml type
 * @return the kernel; nullptr only for a value outside the enumeration
 */
constexpr dequant_fn scalar_kernel(ggml_type t) noexcept {
  using namespace scalar;
  switch (t) {
    case ggml_type::f32: return dequant_f32;
    case ggml_type::f16: return dequant_f16;
    case ggml_type::bf16: return dequant_bf16;
    case ggml_type::f64: return dequant_f64;
    case ggml_type::i8: return dequant_i8;
    case ggml_type::i16: return dequant_i16;
    case ggml_type::i32: return dequant_i32;
    case ggml_type::i64: return dequant_i64;
    case ggml_type::q4_0: return dequant_q4_0;
    case ggml_type::q4_1: return dequant_q4_1;
    case ggml_type::q5_0: return dequant_q5_0;
    case ggml_type::q5_1: return dequant_q5_1;
    case ggml_type::q8_0: return dequant_q8_0;
    case ggml_type::q8_1: return dequant_q8_1;
    case ggml_type::q2_K: return dequant_q2_K;
    case ggml_type::q3_K: return dequant_q3_K;
    case ggml_type::q4_K: return dequant_q4_K;
    case ggml_type::q5_K: return dequant_q5_K;
    case ggml_type::q6_K: return dequant_q6_K;
    case ggml_type::q8_K: return dequant_q8_K;
    case ggml_type::iq2_xxs: return dequant_iq2_xxs;
    case ggml_type::iq2_xs: return dequant_iq2_xs;
    case ggml_type::iq2_s: return dequant_iq2_s;
    case ggml_type::iq3_xxs: return dequant_iq3_xxs;
    case ggml_type::iq3_s: return dequant_iq3_s;
    case ggml_type::iq1_s: return dequant_iq1_s;
    case ggml_type::iq1_m: return dequant_iq1_m;
    case ggml_type::iq4_nl: return dequant_iq4_nl;
    case ggml_type::iq4_xs: return dequant_iq4_xs;
    case ggml_type::tq1_0: return dequant_tq1_0;
    case ggml_type::tq2_0: return dequant_tq2_0;
    case ggml_type::mxfp4: return dequant_mxfp4;
    case ggml_type::nvfp4: return dequant_nvfp4;
    case ggml_type::q1_0: return dequant_q1_0;
    case ggml_type::q2_0: return dequant_q2_0;
  }
  return nullptr;
}

namespace scalar {

/**
 * The specification of the half outputs: type T's scalar kernel, its floats rounded one by one (`narrow`),
 * through a buffer of 256 floats on the stack.
 */
template <dequant_output Out, ggml_type T>
void rounded(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  constexpr std::size_t block = traits(T).block_size, bytes = traits(T).type_size, per = 256 / block;
  constexpr dequant_fn k = scalar_kernel(T);
  float buf[256];
  for (std::size_t i = 0; i < nb; i += per) {
    const std::size_t n = nb - i < per ? nb - i : per;
    k(src + i * bytes, buf, n);
    for (std::size_t j = 0; j < n * block; ++j) dst[i * block + j] = narrow<Out>(buf[j]);
  }
}

}  // namespace scalar

/// @cond INTERNAL
namespace detail {
template <dequant_output Out, std::size_t... I>
constexpr dequant_fn_to<Out> rounded_kernel(ggml_type t, std::index_sequence<I...> /*types*/) noexcept {
  dequant_fn_to<Out> k = nullptr;
  ((k = ggml_types[I].type == t ? scalar::rounded<Out, ggml_types[I].type> : k), ...);
  return k;
}
}  // namespace detail
/// @endcond

/**
 * The scalar kernel of each type writing `Out`: `scalar_kernel` for float; for f16 and bf16 its floats
 * rounded to nearest even, the specification of every faster half kernel.
 * @param t a ggml type
 * @return the kernel; nullptr only for a value outside the enumeration
 */
template <dequant_output Out>
constexpr dequant_fn_to<Out> scalar_kernel_to(ggml_type t) noexcept {
  if constexpr (std::is_same_v<Out, float>) {
    return scalar_kernel(t);
  } else {
    return detail::rounded_kernel<Out>(t, std::make_index_sequence<std::size(ggml_types)>());
  }
}

/**
 * A table of kernels for the dispatch library: `pick(type, Out{})` for every type and output (float,
 * f16, bf16).
 */
template <class Pick>
constexpr ::gguf::detail::kernel_table kernel_table_of(Pick pick) noexcept {
  ::gguf::detail::kernel_table table;
  for (const type_traits& tt : ggml_types) {
    const auto i = static_cast<std::uint32_t>(tt.type);
    table.f32_out[i] = pick(tt.type, float{});
    table.f16_out[i] = pick(tt.type, f16{});
    table.bf16_out[i] = pick(tt.type, bf16{});
  }
  return table;
}

/** Every scalar kernel and quantizer, for the dispatch library. */
constexpr ::gguf::detail::kernel_table scalar_kernel_table() noexcept {
  ::gguf::detail::kernel_table table =
      kernel_table_of([](ggml_type t, auto out) { return scalar_kernel_to<decltype(out)>(t); });
  for (const type_traits& tt : ggml_types)
    table.quantize[static_cast<std::uint32_t>(tt.type)] = scalar_quantizer(tt.type);
  return table;
}

}  // namespace kernels
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SCALAR_HPP
