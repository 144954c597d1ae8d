#ifndef GGUF_KERNELS_SCALAR_HPP
#define GGUF_KERNELS_SCALAR_HPP

#include <cstddef>
#include <type_traits>
#include <utility>

#include "gguf/format/ggml_types.hpp"
#include "gguf/format/half.hpp"
#include "gguf/kernels/importance.hpp"
#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/kernel_table.hpp"
#include "gguf/kernels/registry.hpp"
#include "gguf/result.hpp"

// Every family's scalar code, for the rows to name.
#include "gguf/kernels/fp4/dequantize.hpp"
#include "gguf/kernels/fp4/quantize.hpp"
#include "gguf/kernels/iq_grid/dequantize.hpp"
#include "gguf/kernels/iq_grid/quantize.hpp"
#include "gguf/kernels/iq_table/dequantize.hpp"
#include "gguf/kernels/iq_table/quantize.hpp"
#include "gguf/kernels/k_quants/dequantize.hpp"
#include "gguf/kernels/k_quants/quantize.hpp"
#include "gguf/kernels/legacy/dequantize.hpp"
#include "gguf/kernels/legacy/quantize.hpp"
#include "gguf/kernels/low_bit/dequantize.hpp"
#include "gguf/kernels/low_bit/quantize.hpp"
#include "gguf/kernels/plain/dequantize.hpp"
#include "gguf/kernels/plain/quantize.hpp"
#include "gguf/kernels/ternary/dequantize.hpp"
#include "gguf/kernels/ternary/quantize.hpp"

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
 * The scalar kernel of each type (its registry row's `dequantize`): the specification every faster kernel
 * is held to, bit for bit (ggml's dequantize_row_* for the types it has, FORMAT.md for the rest).
 * @param t a ggml type
 * @return the kernel; nullptr only for a value outside the enumeration
 */
constexpr dequant_fn scalar_kernel(ggml_type t) noexcept {
  switch (t) {
#define GGUF_REGISTRY_SCALAR_KERNEL(type, block, dq, ...) \
  case ggml_type::type: return scalar::dq;
    GGUF_KERNEL_REGISTRY(GGUF_REGISTRY_SCALAR_KERNEL)
#undef GGUF_REGISTRY_SCALAR_KERNEL
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

using ::gguf::quant_fn;  // gguf/kernels/kernel_table.hpp

namespace scalar {
/// The `quantize` column of a registry row whose type has no quantizer.
inline constexpr std::nullptr_t no_quantizer = nullptr;
}  // namespace scalar

/**
 * The reference (scalar) quantizer of each type (its registry row's `quantize`, under its NaN policy):
 * bytes identical to ggml's ggml_quantize_chunk (as built for x86, on every target), row by row.
 * @param t a ggml type
 * @return the quantizer; nullptr for the types this library does not quantize (q8_1 and q8_K, which
 *         ggml_quantize_chunk refuses too; the integer types and f64)
 */
constexpr quant_fn scalar_quantizer(ggml_type t) noexcept {
  switch (t) {
#define GGUF_REGISTRY_SCALAR_QUANTIZER(type, block, dq, dq_simd, q, ...) \
  case ggml_type::type: return detail::with_nan_policy<ggml_type::type, detail::as_quant_fn<scalar::q>()>();
    GGUF_KERNEL_REGISTRY(GGUF_REGISTRY_SCALAR_QUANTIZER)
#undef GGUF_REGISTRY_SCALAR_QUANTIZER
  }
  return nullptr;
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
