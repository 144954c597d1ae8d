#ifndef GGUF_KERNELS_REGISTRY_HPP
#define GGUF_KERNELS_REGISTRY_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "gguf/detail/endian.hpp"
#include "gguf/format/blocks.hpp"
#include "gguf/format/check_finite.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/format/half.hpp"
#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/kernel_table.hpp"
#include "gguf/result.hpp"

/**
 * @file
 * One row per ggml type: everything the kernels know about it, in one place. Every table of kernels
 * (the scalar specification, each instruction set's, the dispatch library's) and the importance facts
 * are derived from these rows; a `static_assert` below checks that every type of `ggml_types` has
 * exactly one, and that its block layout has the type's size. The rows name functions without
 * including them, so this header includes no kernel: each table's header expands the rows after
 * including the kernels it needs (`kernels/scalar.hpp`, `kernels/simd.hpp`).
 *
 * Adding a type: its block struct (`format/blocks.hpp`), its family's code (the scalar dequantizer and
 * quantizer, their SIMD twins), and its row here. docs/ARCHITECTURE.md gives the recipe.
 */

// clang-format off
/**
 * @def GGUF_KERNEL_REGISTRY
 * The rows, one per ggml type: `GGUF_KERNEL_REGISTRY(ROW)` expands `ROW(type, block, dequantize,
 * dequantize_simd, quantize, quantize_simd, nan, importance)` once per type, where
 * - `type` is the `ggml_type` enumerator;
 * - `block` the layout of one block (`gguf::blocks`), or the element type of a one-weight type;
 * - `dequantize` the scalar dequantizer in `kernels::scalar`, the specification;
 * - `dequantize_simd` its twin in `kernels::simd`, a template on the architecture and the output type;
 * - `quantize` the scalar quantizer in `kernels::scalar` (returning `errc`, or `void` when it cannot
 *   fail), or `no_quantizer`: the types ggml_quantize_chunk refuses (q8_1, q8_K) and the integer types;
 * - `quantize_simd` its twin in `kernels::simd`, a template on the architecture, or `no_quantizer`
 *   where the scalar one serves every instruction set;
 * - `nan` how its bytes come out on a target whose default NaN is not x86's (`kernels::nan_policy`);
 * - `importance` what the quantizer does with importance weights (`kernels::importance_use`).
 */
#define GGUF_KERNEL_REGISTRY(ROW)                                                                                        \
  /*  type      block           dequantize       _simd            quantize          _simd             nan              importance */ \
  /* plain: one weight a block */                                                                                        \
  ROW(f32,     float,           dequant_f32,     dequant_f32,     quantize_f32,     no_quantizer,     as_computed,     ignored)  \
  ROW(f16,     f16,             dequant_f16,     dequant_f16,     quantize_f16,     quantize_f16,     as_computed,     ignored)  \
  ROW(bf16,    bf16,            dequant_bf16,    dequant_bf16,    quantize_bf16,    quantize_bf16,    as_computed,     ignored)  \
  ROW(f64,     double,          dequant_f64,     dequant_f64,     no_quantizer,     no_quantizer,     not_quantized,   ignored)  \
  ROW(i8,      std::int8_t,     dequant_i8,      dequant_i8,      no_quantizer,     no_quantizer,     not_quantized,   ignored)  \
  ROW(i16,     std::int16_t,    dequant_i16,     dequant_i16,     no_quantizer,     no_quantizer,     not_quantized,   ignored)  \
  ROW(i32,     std::int32_t,    dequant_i32,     dequant_i32,     no_quantizer,     no_quantizer,     not_quantized,   ignored)  \
  ROW(i64,     std::int64_t,    dequant_i64,     dequant_i64,     no_quantizer,     no_quantizer,     not_quantized,   ignored)  \
  /* legacy: 32 weights, one scale (and minimum) */                                                                      \
  ROW(q4_0,    blocks::q4_0,    dequant_q4_0,    dequant_q4_0,    quantize_q4_0,    quantize_q4_0,    x86_scale_signs, used)     \
  ROW(q4_1,    blocks::q4_1,    dequant_q4_1,    dequant_q4_1,    quantize_q4_1,    quantize_q4_1,    x86_scale_signs, used)     \
  ROW(q5_0,    blocks::q5_0,    dequant_q5_0,    dequant_q5_0,    quantize_q5_0,    quantize_q5_0,    x86_scale_signs, used)     \
  ROW(q5_1,    blocks::q5_1,    dequant_q5_1,    dequant_q5_1,    quantize_q5_1,    quantize_q5_1,    x86_scale_signs, used)     \
  ROW(q8_0,    blocks::q8_0,    dequant_q8_0,    dequant_q8_0,    quantize_q8_0,    quantize_q8_0,    x86_scale_signs, ignored)  \
  ROW(q8_1,    blocks::q8_1,    dequant_q8_1,    dequant_q8_1,    no_quantizer,     no_quantizer,     not_quantized,   ignored)  \
  /* k-quants: 256 weights, sub-block scales */                                                                          \
  ROW(q2_K,    blocks::q2_K,    dequant_q2_K,    dequant_q2_K,    quantize_q2_K,    quantize_q2_K,    x86_scale_signs, used)     \
  ROW(q3_K,    blocks::q3_K,    dequant_q3_K,    dequant_q3_K,    quantize_q3_K,    quantize_q3_K,    x86_scale_signs, used)     \
  ROW(q4_K,    blocks::q4_K,    dequant_q4_K,    dequant_q4_K,    quantize_q4_K,    quantize_q4_K,    x86_scale_signs, used)     \
  ROW(q5_K,    blocks::q5_K,    dequant_q5_K,    dequant_q5_K,    quantize_q5_K,    quantize_q5_K,    x86_scale_signs, used)     \
  ROW(q6_K,    blocks::q6_K,    dequant_q6_K,    dequant_q6_K,    quantize_q6_K,    quantize_q6_K,    x86_scale_signs, used)     \
  ROW(q8_K,    blocks::q8_K,    dequant_q8_K,    dequant_q8_K,    no_quantizer,     no_quantizer,     not_quantized,   ignored)  \
  /* IQ grids: weights looked up in ggml's grids */                                                                      \
  ROW(iq2_xxs, blocks::iq2_xxs, dequant_iq2_xxs, dequant_iq2_xxs, quantize_iq2_xxs, quantize_iq2_xxs, x86_written,     required) \
  ROW(iq2_xs,  blocks::iq2_xs,  dequant_iq2_xs,  dequant_iq2_xs,  quantize_iq2_xs,  quantize_iq2_xs,  x86_written,     required) \
  ROW(iq2_s,   blocks::iq2_s,   dequant_iq2_s,   dequant_iq2_s,   quantize_iq2_s,   quantize_iq2_s,   x86_written,     used)     \
  ROW(iq3_xxs, blocks::iq3_xxs, dequant_iq3_xxs, dequant_iq3_xxs, quantize_iq3_xxs, quantize_iq3_xxs, x86_written,     used)     \
  ROW(iq3_s,   blocks::iq3_s,   dequant_iq3_s,   dequant_iq3_s,   quantize_iq3_s,   quantize_iq3_s,   x86_written,     used)     \
  ROW(iq1_s,   blocks::iq1_s,   dequant_iq1_s,   dequant_iq1_s,   quantize_iq1_s,   quantize_iq1_s,   x86_written,     required) \
  ROW(iq1_m,   blocks::iq1_m,   dequant_iq1_m,   dequant_iq1_m,   quantize_iq1_m,   quantize_iq1_m,   x86_written,     used)     \
  /* IQ tables: 4-bit indices into a table of 16 levels */                                                               \
  ROW(iq4_nl,  blocks::iq4_nl,  dequant_iq4_nl,  dequant_iq4_nl,  quantize_iq4_nl,  quantize_iq4_nl,  x86_scale_signs, used)     \
  ROW(iq4_xs,  blocks::iq4_xs,  dequant_iq4_xs,  dequant_iq4_xs,  quantize_iq4_xs,  quantize_iq4_xs,  x86_scale_signs, used)     \
  /* FP4: E2M1 weights, E8M0 or UE4M3 scales */                                                                          \
  ROW(mxfp4,   blocks::mxfp4,   dequant_mxfp4,   dequant_mxfp4,   quantize_mxfp4,   quantize_mxfp4,   as_computed,     ignored)  \
  ROW(nvfp4,   blocks::nvfp4,   dequant_nvfp4,   dequant_nvfp4,   quantize_nvfp4,   quantize_nvfp4,   as_computed,     ignored)  \
  /* ternary: weights in {-1, 0, 1} */                                                                                   \
  ROW(tq1_0,   blocks::tq1_0,   dequant_tq1_0,   dequant_tq1_0,   quantize_tq1_0,   quantize_tq1_0,   x86_scale_signs, ignored)  \
  ROW(tq2_0,   blocks::tq2_0,   dequant_tq2_0,   dequant_tq2_0,   quantize_tq2_0,   quantize_tq2_0,   x86_scale_signs, ignored)  \
  /* low bit: 1 or 2 bits a weight, one scale */                                                                         \
  ROW(q1_0,    blocks::q1_0,    dequant_q1_0,    dequant_q1_0,    quantize_q1_0,    no_quantizer,     x86_scale_signs, ignored)  \
  ROW(q2_0,    blocks::q2_0,    dequant_q2_0,    dequant_q2_0,    quantize_q2_0,    quantize_q2_0,    x86_scale_signs, ignored)
// clang-format on

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels {

/**
 * How a type's quantized bytes come out on a target whose default NaN is not x86's. ggml's reference
 * bytes are those of its x86 build, where arithmetic that makes a NaN from numbers (inf / inf, 0 * inf,
 * inf - inf) makes the negative one (an f16 0xFE00); ARM, RISC-V, POWER and WebAssembly make the
 * positive one (0x7E00).
 */
enum class nan_policy : std::uint8_t {
  not_quantized,    ///< the type has no quantizer
  as_computed,      ///< the bytes do not depend on the default NaN: NaN weights are carried as they are
                    ///< (f32, f16, bf16), or the scales' formats have no signed NaN (mxfp4, nvfp4)
  x86_scale_signs,  ///< a block's f16 scale that arithmetic made NaN gets x86's sign on every target
                    ///< (`detail::with_x86_nan_signs`); a NaN carried from a weight keeps its own
  x86_written,      ///< the quantizer writes x86's NaN scale itself (0xFE00, `half_bits_nan_as_x86`),
                    ///< and refuses the rows ggml aborts on (`errc::out_of_range`): the IQ grid types
};

/** What a type's quantizer does with importance weights (an imatrix entry), as ggml's does. */
enum class importance_use : std::uint8_t {
  ignored,   ///< accepted and ignored: the bytes are the same without them
  used,      ///< read when given: they change the bytes
  required,  ///< ggml refuses to quantize without them (ggml_quantize_requires_imatrix)
};

/// @cond INTERNAL
namespace detail {

/// The facts of a row that are values (its functions are named where a table is derived).
struct registry_facts {
  ggml_type type;
  nan_policy nan;
  importance_use importance;
};

/// Every row's facts, in the registry's order.
inline constexpr registry_facts registry_rows[] = {
#define GGUF_REGISTRY_FACTS(type, block, dq, dq_simd, q, q_simd, nan, importance) \
  {ggml_type::type, nan_policy::nan, importance_use::importance},
    GGUF_KERNEL_REGISTRY(GGUF_REGISTRY_FACTS)
#undef GGUF_REGISTRY_FACTS
};

/// Whether every type of `ggml_types` has exactly one row, and no row names another type.
constexpr bool registry_is_complete() noexcept {
  if (std::size(registry_rows) != std::size(ggml_types)) return false;
  for (const type_traits& tt : ggml_types) {
    std::size_t rows = 0;
    for (const registry_facts& r : registry_rows) rows += r.type == tt.type ? 1 : 0;
    if (rows != 1) return false;
  }
  return true;
}

/// The facts of type `t`'s row; nullptr for a value outside the enumeration.
constexpr const registry_facts* registry_row(ggml_type t) noexcept {
  for (const registry_facts& r : registry_rows) {
    if (r.type == t) return &r;
  }
  return nullptr;
}

}  // namespace detail
/// @endcond

static_assert(detail::registry_is_complete(), "every ggml type needs exactly one row in GGUF_KERNEL_REGISTRY");

#define GGUF_REGISTRY_BLOCK(type, block, ...)                       \
  static_assert(sizeof(block) == traits(ggml_type::type).type_size, \
                "the block layout of " #type " in GGUF_KERNEL_REGISTRY does not have the type's size");
GGUF_KERNEL_REGISTRY(GGUF_REGISTRY_BLOCK)
#undef GGUF_REGISTRY_BLOCK

/**
 * The NaN policy of type `t`'s quantizer (its row's `nan` column).
 * @param t a ggml type
 * @return the policy; `not_quantized` for a value outside the enumeration
 */
constexpr nan_policy nan_policy_of(ggml_type t) noexcept {
  const detail::registry_facts* row = detail::registry_row(t);
  return row ? row->nan : nan_policy::not_quantized;
}

/// @cond INTERNAL
namespace detail {

/// Whether this target's arithmetic makes the negative default NaN (0xFFC00000), as x86's SSE does;
/// ARM, RISC-V, POWER and WebAssembly make the positive one (0x7FC00000).
inline constexpr bool x86_default_nan =
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
    true;
#else
    false;
#endif

/**
 * Type `T`'s quantizer `F` with its block scales' NaN signs flipped to x86's, on a target that makes the
 * positive default NaN (`nan_policy::x86_scale_signs`). In a row with no NaN weight or importance
 * weight, every NaN scale was made by arithmetic from numbers (and negation, the one sign operation
 * applied after, flips both alike), so its sign is flipped; a NaN carried from a NaN weight keeps its
 * sign on every target and is left alone.
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
  constexpr type_traits tt = traits(T);
  for (std::size_t b = 0; b < n_per_row / tt.block_size; ++b, dst += tt.type_size) {
    for (std::size_t k = 0; k < halves.count; ++k) {
      std::byte* h = dst + halves.offset[k];
      const auto bits = ::gguf::detail::load_le<std::uint16_t>(h);
      if ((bits & 0x7FFFu) > 0x7C00u)
        ::gguf::detail::store_le<std::uint16_t>(h, static_cast<std::uint16_t>(bits ^ 0x8000u));
    }
  }
  return e;
}

/// A quantizer that cannot fail, as a `quant_fn`.
template <void (*F)(const float*, std::byte*, std::size_t, const float*) noexcept>
errc never_fails(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  F(src, dst, n_per_row, importance);
  return errc::success;
}

/// A registry row's quantizer as a `quant_fn`: `F` itself, `F` wrapped when it cannot fail (returns
/// void), or nullptr for `no_quantizer`.
template <auto F>
constexpr quant_fn as_quant_fn() noexcept {
  if constexpr (std::is_null_pointer_v<decltype(F)>) {
    return nullptr;
  } else if constexpr (std::is_void_v<decltype(F(nullptr, nullptr, 0, nullptr))>) {
    return never_fails<F>;
  } else {
    return F;
  }
}

/**
 * Type `T`'s quantizer `F` (any instruction set's) under its row's NaN policy: the bytes of ggml's x86
 * build on every target. nullptr stays nullptr.
 */
template <ggml_type T, quant_fn F>
constexpr quant_fn with_nan_policy() noexcept {
  if constexpr (F != nullptr && !x86_default_nan && nan_policy_of(T) == nan_policy::x86_scale_signs) {
    return with_x86_nan_signs<T, F>;
  } else {
    return F;
  }
}

}  // namespace detail
/// @endcond

/**
 * What type `t`'s quantizer does with importance weights (its row's `importance` column).
 * @param t a ggml type
 * @return the use; `ignored` for a value outside the enumeration
 */
constexpr importance_use importance_use_of(ggml_type t) noexcept {
  const detail::registry_facts* row = detail::registry_row(t);
  return row ? row->importance : importance_use::ignored;
}

}  // namespace kernels
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_REGISTRY_HPP
