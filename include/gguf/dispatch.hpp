#ifndef GGUF_DISPATCH_HPP
#define GGUF_DISPATCH_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "gguf/format/ggml_types.hpp"
#include "gguf/format/half.hpp"
#include "gguf/kernels/kernel_table.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * Runtime CPU dispatch: the kernels of every instruction set gguf was built for, chosen at run time from
 * what the CPU and the OS support (cpuid + xgetbv). Only available when linking the `gguf::dispatch`
 * CMake target, a small static library with one translation unit per instruction set; linking it
 * defines GGUF_RUNTIME_DISPATCH=1, which routes `gguf::dequantize` through `dispatch::kernel` and
 * `gguf::quantize` through `dispatch::quantizer`.
 * Without it, `gguf::dequantize` uses the best kernels the caller's own compiler flags allow.
 */
namespace dispatch {

/** The instruction sets the dispatch library can have kernels for (which ones it has depends on the target). */
enum class isa : std::uint8_t {
  scalar,    ///< the reference kernels
  sse2,      ///< x86-64 baseline
  avx2,      ///< AVX2 + FMA + F16C + BMI2 (Haswell, Zen and later)
  avx512bw,  ///< AVX-512 F/BW/DQ/VL (Skylake-X, Ice Lake, Zen 4 and later)
  neon64,    ///< ARM64 baseline
};
/// Every `isa`, in declaration order: to list or try them all.
inline constexpr isa all_isas[] = {isa::scalar, isa::sse2, isa::avx2, isa::avx512bw, isa::neon64};

/**
 * The lower-case name of an instruction set, as GGUF_FORCE_ISA takes it.
 * @param i an instruction set
 * @return "scalar", "sse2", "avx2", "avx512bw" or "neon64"; "unknown" outside the enumeration
 */
constexpr std::string_view to_string(isa i) noexcept {
  switch (i) {
    case isa::scalar: return "scalar";
    case isa::sse2: return "sse2";
    case isa::avx2: return "avx2";
    case isa::avx512bw: return "avx512bw";
    case isa::neon64: return "neon64";
  }
  return "unknown";
}

/// The former name of `to_string(isa)`.
[[deprecated("use gguf::dispatch::to_string(isa)")]] constexpr std::string_view name(isa i) noexcept {
  return to_string(i);
}

/**
 * Whether the kernels of `i` can be used here.
 * @param i an instruction set
 * @return true when they are built into this program and the CPU and the OS support them
 */
bool supported(isa i) noexcept;

/** The best supported instruction set: avx512bw, avx2, sse2 or neon64 in that order, else scalar. */
isa best() noexcept;

/**
 * The instruction set `dequantize` and `quantize` use: `best()`, unless the environment variable GGUF_FORCE_ISA names
 * a supported one ("scalar", "sse2", "avx2", "avx512bw", "neon64"; read once, at the first call) or
 * `set_active` chose another.
 */
isa active() noexcept;

/**
 * Use `i` from now on, in every thread (tests, benchmarks).
 * @param i an instruction set
 * @return true; false, changing nothing, when `i` is not `supported`
 */
bool set_active(isa i) noexcept;

/**
 * The kernel of a type for a given instruction set, whether active or not (to compare them).
 * @param type a type of `ggml_types`
 * @param i    an instruction set
 * @return the kernel, or nullptr when `i` is not `supported`
 */
dequant_fn kernel(ggml_type type, isa i) noexcept;

/**
 * The kernel of a type for the `active` instruction set: what `gguf::dequantize` calls.
 * @param type a type of `ggml_types`
 * @return the kernel, never null
 */
dequant_fn kernel(ggml_type type) noexcept;

/**
 * `kernel(type, i)` for the output `Out` (float, f16 or bf16).
 * @return the kernel, or nullptr when `i` is not `supported`
 */
template <dequant_output Out>
dequant_fn_to<Out> kernel_to(ggml_type type, isa i) noexcept;

/**
 * `kernel(type)` for the output `Out` (float, f16 or bf16): what `gguf::dequantize` calls for it.
 * @return the kernel, never null
 */
template <dequant_output Out>
dequant_fn_to<Out> kernel_to(ggml_type type) noexcept;

/**
 * The quantizer of a type for a given instruction set, whether active or not (to compare them).
 * @param type a ggml type
 * @param i    an instruction set
 * @return the quantizer; nullptr when `i` is not `supported` or the type has no quantizer (q8_1, q8_K,
 *         the integer types, f64)
 */
quant_fn quantizer(ggml_type type, isa i) noexcept;

/**
 * The quantizer of a type for the `active` instruction set: what `gguf::quantize` calls.
 * @param type a ggml type
 * @return the quantizer; nullptr when the type has none
 */
quant_fn quantizer(ggml_type type) noexcept;

/// @cond INTERNAL
extern template dequant_fn_to<float> kernel_to<float>(ggml_type, isa) noexcept;
extern template dequant_fn_to<f16> kernel_to<f16>(ggml_type, isa) noexcept;
extern template dequant_fn_to<bf16> kernel_to<bf16>(ggml_type, isa) noexcept;
extern template dequant_fn_to<float> kernel_to<float>(ggml_type) noexcept;
extern template dequant_fn_to<f16> kernel_to<f16>(ggml_type) noexcept;
extern template dequant_fn_to<bf16> kernel_to<bf16>(ggml_type) noexcept;

namespace detail {
/// The kernels of one instruction set (`gguf/kernels/kernel_table.hpp`).
using kernel_table = ::gguf::detail::kernel_table;

const kernel_table* base_table(isa i) noexcept;
}  // namespace detail
/// @endcond

}  // namespace dispatch
GGUF_END_NAMESPACE

#endif  // GGUF_DISPATCH_HPP
