#ifndef GGUF_KERNELS_SIMD_ARCH_HPP
#define GGUF_KERNELS_SIMD_ARCH_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "gguf/kernels/isa.hpp"

/**
 * @def GGUF_SIMD_DIAGNOSTICS_PUSH
 * Opens a region of SIMD kernel code in which GCC before 13 does not report the false
 * `-W(maybe-)uninitialized` warnings of its own AVX-512 headers: they build their "undefined" vectors
 * as `__m512 __Y = __Y;`, which `-Wall` flags wherever such an intrinsic is inlined (GCC bug 105593,
 * fixed in GCC 13), so a user's `-Wall -Werror -march=native` build would fail on gguf's headers. Only
 * these two warnings, only in kernel code, only on those compilers.
 * @def GGUF_SIMD_DIAGNOSTICS_POP
 * Closes the region GGUF_SIMD_DIAGNOSTICS_PUSH opened.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#define GGUF_SIMD_DIAGNOSTICS_PUSH                                                           \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define GGUF_SIMD_DIAGNOSTICS_POP _Pragma("GCC diagnostic pop")
#else
#define GGUF_SIMD_DIAGNOSTICS_PUSH
#define GGUF_SIMD_DIAGNOSTICS_POP
#endif

/**
 * @def GGUF_SIMD_INLINE
 * `inline`, and inlined whatever the optimiser's budget: every building block of the dequantization
 * kernels (ops.hpp's operations, the drivers' helpers, a block's lookups) is declared so, as xsimd
 * declares its own. Left to itself, GCC at -O2 and clang at any level kept some out of line in a kernel's
 * loop, a call per block with the vector constants reloaded after it.
 * @def GGUF_SIMD_INLINE_LAMBDA
 * The same for a lambda (after its parameter list): the kernels' per-group and per-block lambdas. Empty
 * where the compiler has no such attribute (MSVC).
 */
#if defined(__GNUC__) || defined(__clang__)
#define GGUF_SIMD_INLINE inline __attribute__((always_inline))
#define GGUF_SIMD_INLINE_LAMBDA __attribute__((always_inline))
#elif defined(_MSC_VER)
#define GGUF_SIMD_INLINE __forceinline
#define GGUF_SIMD_INLINE_LAMBDA
#else
#define GGUF_SIMD_INLINE inline
#define GGUF_SIMD_INLINE_LAMBDA
#endif

/**
 * @def GGUF_SIMD_AVX512
 * 1 where this translation unit may use AVX-512 as the kernels do: F, BW, VL and DQ, which every
 * AVX-512 CPU but Knights Landing and Knights Mill has and the dispatch library compiles with. With less
 * (`-mavx512f` alone, `-march=knl`) the header-only kernels are AVX2's (see best_arch).
 */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#define GGUF_SIMD_AVX512 1
#else
#define GGUF_SIMD_AVX512 0
#endif

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// Which instruction set an xsimd architecture `A` is, and what it can do: every compile-time predicate
// the kernels and ops.hpp choose code paths by, in one place. A predicate is true only in a translation
// unit whose compiler flags enable that instruction set, so code guarded by it always compiles there.
// Adding an instruction set (SVE, RVV) means a predicate here and its branches in ops.hpp.

/// The float batch of an architecture.
template <class A>
using fbatch = xsimd::batch<float, A>;
template <class A>
using ibatch = xsimd::batch<std::int32_t, A>;  ///< the int32 batch of the same width

/// Lanes of a float (or int32) batch: 4 on SSE/NEON, 8 on AVX2, 16 on AVX-512.
template <class A>
inline constexpr std::size_t lanes = fbatch<A>::size;

// Families, most specific first (xsimd 8.1's avx512f derives from generic, 13's from avx2).

/// AVX-512 as the kernels use it (F, BW, VL and DQ, as the dispatch library compiles it).
template <class A>
inline constexpr bool is_avx512 =
#if GGUF_SIMD_AVX512
    std::is_base_of_v<xsimd::avx512f, A>;
#else
    false;
#endif

/**
 * The architecture of the header-only kernels (`best_kernel`, `best_quantizer`): xsimd's best for this
 * translation unit's flags, except an AVX-512 without BW, VL or DQ (GGUF_SIMD_AVX512 is 0), whose
 * kernels would be the generic ones at 16 lanes, which exist for 4 and 8: AVX2 (with FMA where the flags
 * have it) there.
 */
using best_arch = std::conditional_t<std::is_base_of_v<xsimd::avx512f, xsimd::default_arch> && !GGUF_SIMD_AVX512,
#if defined(__FMA__)
                                     xsimd::fma3<xsimd::avx2>,
#else
                                     xsimd::avx2,
#endif
                                     xsimd::default_arch>;

/// AVX2 (FMA and F16C are separate predicates where they matter).
template <class A>
inline constexpr bool is_avx2 =
#if defined(__AVX2__)
    !is_avx512<A> && std::is_base_of_v<xsimd::avx2, A>;
#else
    false;
#endif

/// SSE4.1 (and SSSE3's byte shuffle), 4 lanes.
template <class A>
inline constexpr bool is_sse41 =
#if defined(__SSE4_1__)
    !is_avx512<A> && !is_avx2<A> && std::is_base_of_v<xsimd::sse4_1, A> && lanes<A> == 4;
#else
    false;
#endif

/// x86-64's baseline, SSE2 without SSE4.1: no widening loads, no byte shuffle.
template <class A>
inline constexpr bool is_sse2_only =
#if defined(__SSE2__) || defined(_M_X64)
    lanes<A> == 4 && !is_sse41<A> && std::is_base_of_v<xsimd::sse2, A>;
#else
    false;
#endif

/// Any 4-lane x86 batch (SSE2 or SSE4.1).
template <class A>
inline constexpr bool is_sse = is_sse2_only<A> || is_sse41<A>;

/// ARM64's Advanced SIMD.
template <class A>
inline constexpr bool is_neon64 =
#if defined(__aarch64__) || defined(_M_ARM64)
    std::is_base_of_v<xsimd::neon64, A>;
#else
    false;
#endif

// Capabilities.

/// lanes<A> halves convert to floats in one instruction (F16C, AVX-512, NEON's fcvtl).
template <class A>
inline constexpr bool native_half =
#if defined(__F16C__)
    is_avx2<A> ||
#endif
    is_avx512<A> || is_neon64<A>;

/// A 16-entry byte table can be looked up 16 bytes at a time (pshufb, tbl).
template <class A>
inline constexpr bool byte_shuffle = is_avx2<A> || is_sse41<A> || is_neon64<A>;

/// log2 of the entries of a register-wide float permute (vpermps): 4 on AVX-512, 3 on AVX2, else 0.
template <class A>
inline constexpr int lut_bits = is_avx512<A> ? 4
                                : is_avx2<A> ? 3
                                             : 0;

/// Half outputs (`Out` f16 or bf16) looked up as words (AVX-512 BW's vpermw): a kernel whose weights are
/// entries of a small table rounds the table once (ops.hpp's table_words and put_* lookups), not every
/// weight, since the conversion is what a half output costs.
template <class A, class Out>
inline constexpr bool uses_word_table = is_avx512<A> && !std::is_same_v<Out, float>;

/// Non-temporal (streaming) stores of a whole batch, for outputs far larger than the caches.
template <class A>
inline constexpr bool stream_stores = is_avx512<A>;

/// The integer batch the byte-parallel steps run on: 256 bits where the ISA has them (AVX-512
/// included, whose 32 bytes then widen to two batches), else A itself (16 bytes).
template <class A, class = void>
struct swar_arch_t {
  using type = A;  ///< the architecture itself
};
#if defined(__AVX2__)
template <class A>
struct swar_arch_t<A, std::enable_if_t<is_avx512<A>>> {
  using type = xsimd::avx2;  ///< AVX-512 assembles bytes in 256-bit registers
};
#endif
/// `swar_arch_t<A>::type`.
template <class A>
using swar_arch = typename swar_arch_t<A>::type;

/// The batch a grid row of 8 floats fills: 256 bits on AVX-512 too (one row a load, no joining of two
/// rows into one register), else A.
template <class A>
using row_arch = swar_arch<A>;
/// Bytes assembled in a swar_arch register widen straight from it (AVX-512: two 16-lane batches per
/// 32 bytes, three instructions and no memory). Elsewhere a widening load is one instruction, cheaper
/// than widening from a register, so the bytes go through a small buffer.
template <class A>
inline constexpr bool widen_in_registers = is_avx512<A>&& lanes<swar_arch<A>> == 8;

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_ARCH_HPP
