#ifndef GGUF_KERNELS_KERNEL_TABLE_HPP
#define GGUF_KERNELS_KERNEL_TABLE_HPP

// The kernels' function types and the table of one instruction set's kernels: what the kernels fill
// and the dispatch library (gguf/dispatch.hpp) hands out, so that the kernels never include it.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/format/ggml_types.hpp"
#include "gguf/format/half.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * A dequantization kernel: converts `n_blocks` whole blocks at `src` into `n_blocks * block_size` floats
 * at `dst` (for the one-weight types f32 ... i64, a block is one element). Any alignment. Kernels cannot
 * fail: `gguf::dequantize` checks sizes before it calls one. `dispatch::kernel` hands them out, and
 * `gguf::kernels::scalar_kernel` / `best_kernel` in header-only code.
 */
using dequant_fn = void (*)(const std::byte* src, float* dst, std::size_t n_blocks) noexcept;

/**
 * A dequantization kernel writing `Out`: float (`dequant_fn`), or `f16` / `bf16`, each weight the float
 * result rounded to nearest even (`to_f16`, `to_bf16`), rounded in registers as it is made.
 */
template <dequant_output Out>
using dequant_fn_to = void (*)(const std::byte* src, Out* dst, std::size_t n_blocks) noexcept;

enum class errc : std::uint8_t;  // gguf/result.hpp

/**
 * A row quantizer: `n_per_row` floats at `src` (a whole number of blocks) into `n_per_row / block_size`
 * blocks at `dst` (any alignment), with one importance weight per column at `importance`, or none
 * (nullptr). The callers check sizes first (`gguf::quantize` does); the one failure left is a row ggml
 * itself cannot quantize (it aborts: the IQ grid types on NaN, infinities or squares that overflow),
 * `errc::out_of_range`, after which the row's bytes are unspecified. Every instruction set's quantizer of
 * a type writes the same bytes. `dispatch::quantizer` hands them out, and `gguf::kernels::scalar_quantizer`
 * / `best_quantizer` in header-only code.
 */
using quant_fn = errc (*)(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept;

/// @cond INTERNAL
namespace detail {

/// The kernels of one instruction set, per type id and output: one table the dispatch library holds per set.
struct kernel_table {
  dequant_fn_to<float> f32_out[ggml_type_count] = {};  ///< float outputs
  dequant_fn_to<f16> f16_out[ggml_type_count] = {};    ///< f16 outputs
  dequant_fn_to<bf16> bf16_out[ggml_type_count] = {};  ///< bf16 outputs
  quant_fn quantize[ggml_type_count] = {};             ///< quantizers (null where a type has none)

  /// The kernels writing `Out`, indexed by type.
  template <dequant_output Out>
  constexpr auto& outputs() noexcept {
    return outputs_of<Out>(*this);
  }
  /// The kernels writing `Out`, indexed by type.
  template <dequant_output Out>
  constexpr const auto& outputs() const noexcept {
    return outputs_of<Out>(*this);
  }
  /// The kernel of `t` for `Out`.
  template <dequant_output Out>
  constexpr dequant_fn_to<Out> get(ggml_type t) const noexcept {
    return outputs<Out>()[static_cast<std::uint32_t>(t)];
  }

 private:
  // The one place that says which array holds which output (self: the table, const or not).
  template <class Out, class Self>
  static constexpr auto& outputs_of(Self& self) noexcept {
    if constexpr (std::is_same_v<Out, float>) {
      return self.f32_out;
    } else if constexpr (std::is_same_v<Out, f16>) {
      return self.f16_out;
    } else {
      return self.bf16_out;
    }
  }
};

}  // namespace detail
/// @endcond

GGUF_END_NAMESPACE

#endif  // GGUF_KERNELS_KERNEL_TABLE_HPP
