#ifndef GGUF_KERNELS_SCALAR_QUANTIZE_HPP
#define GGUF_KERNELS_SCALAR_QUANTIZE_HPP

#include <cstddef>

#include "gguf/kernels/kernel_table.hpp"
#include "gguf/format/check_finite.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/kernels/importance.hpp"
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

using ::gguf::quant_fn;  // gguf/kernels/kernel_table.hpp

namespace detail {
/// A quantizer that cannot fail, as a `quant_fn`.
template <void (*F)(const float*, std::byte*, std::size_t, const float*) noexcept>
errc never_fails(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  F(src, dst, n_per_row, importance);
  return errc::success;
}

/// The scalar quantizers as written: on x86, `scalar_quantizer` itself.
constexpr quant_fn native_scalar_quantizer(ggml_type t) noexcept {
  using namespace scalar;
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

/// Whether this target's arithmetic makes the negative default NaN (0xFFC00000), as x86's SSE does;
/// ARM, RISC-V, POWER and WebAssembly make the positive one (0x7FC00000).
inline constexpr bool x86_default_nan =
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
    true;
#else
    false;
#endif

/**
 * Type `T`'s quantizer with its block scales' NaN signs as x86 makes them, on a target that makes the
 * positive default NaN. ggml's reference bytes are x86's: a scale that arithmetic makes NaN from finite or
 * infinite weights (inf / inf of two overflowing sums, 0 * inf, inf - inf) is 0xFE00 there and 0x7E00
 * elsewhere. In a row with no NaN weight or importance weight, every NaN scale was made that way (and
 * negation, the one sign operation applied after, flips both alike), so its sign is flipped here; a NaN
 * carried from a NaN weight keeps its sign on every target and is left alone. (The IQ grid types refuse
 * NaN weights and write 0xFE00 themselves, `iq::ggml_half`.)
 */
template <ggml_type T, quant_fn F>
errc with_x86_nan_signs(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  const errc e = F(src, dst, n_per_row, importance);
  const auto nan = [](const float* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isnan(p[i])) return true;
    }
    return false;
  };
  if (e != errc::success || nan(src, n_per_row) || (importance && nan(importance, n_per_row))) return e;
  constexpr ::gguf::detail::checked_halves halves = ::gguf::detail::halves_checked(T);
  const type_traits& traits = *find_type(static_cast<std::uint32_t>(T));
  for (std::size_t b = 0; b < n_per_row / traits.block_size; ++b, dst += traits.type_size) {
    for (std::size_t k = 0; k < halves.count; ++k) {
      std::byte* h = dst + halves.offset[k];
      const auto bits = ::gguf::detail::load_le<std::uint16_t>(h);
      if ((bits & 0x7FFFu) > 0x7C00u)
        ::gguf::detail::store_le<std::uint16_t>(h, static_cast<std::uint16_t>(bits ^ 0x8000u));
    }
  }
  return e;
}

/// Type `T`'s quantizer `F`, with its block scales' NaN signs as x86 makes them on every target.
template <ggml_type T, quant_fn F>
constexpr quant_fn x86_nan_signs() noexcept {
  if constexpr (x86_default_nan) {
    return F;
  } else {
    return with_x86_nan_signs<T, F>;
  }
}

}  // namespace detail

/**
 * The reference (scalar) quantizer of each type: bytes identical to ggml's ggml_quantize_chunk (as built
 * for x86, on every target), row by row.
 * @param t a ggml type
 * @return the quantizer; nullptr for the types this library does not quantize (q8_1 and q8_K, which
 *         ggml_quantize_chunk refuses too; the integer types and f64)
 */
constexpr quant_fn scalar_quantizer(ggml_type t) noexcept {
  if constexpr (!detail::x86_default_nan) {
    using detail::native_scalar_quantizer;
    using detail::x86_nan_signs;
    switch (t) {
      case ggml_type::q4_0: return x86_nan_signs<ggml_type::q4_0, native_scalar_quantizer(ggml_type::q4_0)>();
      case ggml_type::q4_1: return x86_nan_signs<ggml_type::q4_1, native_scalar_quantizer(ggml_type::q4_1)>();
      case ggml_type::q5_0: return x86_nan_signs<ggml_type::q5_0, native_scalar_quantizer(ggml_type::q5_0)>();
      case ggml_type::q5_1: return x86_nan_signs<ggml_type::q5_1, native_scalar_quantizer(ggml_type::q5_1)>();
      case ggml_type::q8_0: return x86_nan_signs<ggml_type::q8_0, native_scalar_quantizer(ggml_type::q8_0)>();
      case ggml_type::q2_K: return x86_nan_signs<ggml_type::q2_K, native_scalar_quantizer(ggml_type::q2_K)>();
      case ggml_type::q3_K: return x86_nan_signs<ggml_type::q3_K, native_scalar_quantizer(ggml_type::q3_K)>();
      case ggml_type::q4_K: return x86_nan_signs<ggml_type::q4_K, native_scalar_quantizer(ggml_type::q4_K)>();
      case ggml_type::q5_K: return x86_nan_signs<ggml_type::q5_K, native_scalar_quantizer(ggml_type::q5_K)>();
      case ggml_type::q6_K: return x86_nan_signs<ggml_type::q6_K, native_scalar_quantizer(ggml_type::q6_K)>();
      case ggml_type::iq4_nl: return x86_nan_signs<ggml_type::iq4_nl, native_scalar_quantizer(ggml_type::iq4_nl)>();
      case ggml_type::iq4_xs: return x86_nan_signs<ggml_type::iq4_xs, native_scalar_quantizer(ggml_type::iq4_xs)>();
      case ggml_type::tq1_0: return x86_nan_signs<ggml_type::tq1_0, native_scalar_quantizer(ggml_type::tq1_0)>();
      case ggml_type::tq2_0: return x86_nan_signs<ggml_type::tq2_0, native_scalar_quantizer(ggml_type::tq2_0)>();
      case ggml_type::q1_0: return x86_nan_signs<ggml_type::q1_0, native_scalar_quantizer(ggml_type::q1_0)>();
      case ggml_type::q2_0: return x86_nan_signs<ggml_type::q2_0, native_scalar_quantizer(ggml_type::q2_0)>();
      default: break;
    }
  }
  return detail::native_scalar_quantizer(t);
}

}  // namespace kernels
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SCALAR_QUANTIZE_HPP
