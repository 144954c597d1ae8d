#ifndef GGUF_KERNELS_PLAIN_DEQUANTIZE_SIMD_HPP
#define GGUF_KERNELS_PLAIN_DEQUANTIZE_SIMD_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/plain/dequantize.hpp"
#include "gguf/kernels/simd/ops.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of plain/dequantize.hpp's f16, bf16, f64 and i64, generic over the xsimd Arch. f16 and bf16 are
// pure bit reshaping, so the result is exact by construction. f16 goes through the hardware conversion where there
// is one (F16C, AVX-512, NEON: exact for every number, subnormals included; a signalling NaN comes out
// quiet, as from ggml's own F16C path, where the scalar kernel keeps its bits: still a NaN, which is all
// the kernels promise), else through integer arithmetic that never produces a float subnormal (so no
// flush-to-zero mode can change it). bf16 is its 16 bits moved to the top of a float. `n` counts
// elements, any number: 4 * lanes<A> at a time, then one vector at a time, then one element at a time.
// (No elements are peeled to align dst: that trades split stores for split loads.)
// f64 and i64 round to float to nearest even, as the scalar casts, in the hardware's conversion where it
// has one (cvtpd2ps, fcvtn; AVX-512DQ's vcvtqq2ps for int64); elsewhere an int64 goes through a double
// made exact first (directly below 2^51 in magnitude, else with its low bits folded into a sticky bit),
// which then rounds once (ops.hpp's load_i64_as_float). `n` counts elements, as for f16.

namespace detail {

/**
 * Halves (zero-extended in int32 lanes) -> floats, exactly, with integer operations and one exact
 * int -> float conversion. Normal halves, infinities and NaNs rebias their exponent in place (by 127 - 15,
 * or to 255 when it is 31, the payload kept and a NaN quieted as ggml's conversion does); zeros and
 * subnormals are m * 2^-24 with m < 1024, a product that is exact and never subnormal in float.
 */
template <class A>
GGUF_SIMD_INLINE fbatch<A> halves_to_float(const ibatch<A>& h) noexcept {
  const ibatch<A> mag = h & ibatch<A>(0x7FFF);
  const ibatch<A> sign = (h >> 15) << 31;
  const ibatch<A> rebias = select_int<A>(mag >= ibatch<A>(0x7C00), ibatch<A>(224 << 23), ibatch<A>(112 << 23));
  const ibatch<A> quiet = select_int<A>(mag > ibatch<A>(0x7C00), ibatch<A>(0x00400000), ibatch<A>(0));  // NaN: quiet it
  const fbatch<A> big = as_float<A>(sign | quiet | ((mag << 13) + rebias));
  const fbatch<A> m = to_float<A>(mag);
  const fbatch<A> small = m * as_float<A>(sign | ibatch<A>(0x33800000));  // +-2^-24, so -0 stays -0
  return xsimd::select(m < fbatch<A>(1024.0f), small, big);
}

/// f16 elements: vectors of lanes<A>, pairs of vectors, single elements.
template <class A>
struct f16_elements {
  static fbatch<A> vector(const std::byte* p) noexcept {
    if constexpr (native_half<A>) {
      return load_half<A>(p);
    } else {
      return halves_to_float<A>(load_u16<A>(p));
    }
  }
  static void pair(const std::byte* p, fbatch<A>& a, fbatch<A>& b) noexcept {
    if constexpr (native_half<A>) {
      a = load_half<A>(p);
      b = load_half<A>(p + 2 * lanes<A>);
    } else {
      ibatch<A> lo, hi;
      load_u16_pair<A>(p, lo, hi);
      a = halves_to_float<A>(lo);
      b = halves_to_float<A>(hi);
    }
  }
  static float one(const std::byte* p) noexcept { return half_scale(p); }
};

/// bf16 elements: each word moved to the top half of a float.
template <class A>
struct bf16_elements {
  static fbatch<A> vector(const std::byte* p) noexcept { return load_bf16<A>(p); }
  static void pair(const std::byte* p, fbatch<A>& a, fbatch<A>& b) noexcept { load_bf16_pair<A>(p, a, b); }
  static float one(const std::byte* p) noexcept { return bf16_to_float(load_le<std::uint16_t>(p)); }
};

/// The loop shared by both: 4 * lanes<A> elements a turn, then lanes<A>, then one.
template <class A, class E, class Out>
GGUF_SIMD_INLINE void convert_words(const std::byte* src, Out* dst, std::size_t n) noexcept {
  constexpr std::size_t L = lanes<A>;
  std::size_t i = 0;
  // Outputs far larger than the caches: non-temporal stores write whole lines without reading them
  // first, which matters here because these types move the most bytes per weight (2 in, 4 out).
  if constexpr (stream_stores<A> && std::is_same_v<Out, float>) {
    if (n * sizeof(float) >= (std::size_t{16} << 20) && (reinterpret_cast<std::uintptr_t>(dst) & 63) == 0) {
      for (; i + 4 * L <= n; i += 4 * L) {
        fbatch<A> a, b, c, d;
        E::pair(src + 2 * i, a, b);
        E::pair(src + 2 * (i + 2 * L), c, d);
        stream_store<A>(dst + i, a);
        stream_store<A>(dst + i + L, b);
        stream_store<A>(dst + i + 2 * L, c);
        stream_store<A>(dst + i + 3 * L, d);
      }
      stream_fence();
    }
  }
  for (; i + 4 * L <= n; i += 4 * L) {
    fbatch<A> a, b, c, d;
    E::pair(src + 2 * i, a, b);
    put_pair<A>(dst + i, a, b);
    E::pair(src + 2 * (i + 2 * L), c, d);
    put_pair<A>(dst + i + 2 * L, c, d);
  }
  for (; i + L <= n; i += L) put<A>(dst + i, E::vector(src + 2 * i));
  for (; i < n; ++i) dst[i] = narrow<Out>(E::one(src + 2 * i));
}

}  // namespace detail

namespace detail {

/// The one-element types whose lanes<A> elements load as one vector: `load(p)` gives them as floats,
/// two vectors a turn; the tail, and big-endian hosts, through the scalar kernel `tail`, one by one.
template <class A, class Out, class Load>
GGUF_SIMD_INLINE void convert_elements(const std::byte* src, Out* dst, std::size_t n, std::size_t size, Load load,
                                       void (*tail)(const std::byte*, float*, std::size_t) noexcept) noexcept {
  constexpr std::size_t L = lanes<A>;
  std::size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 2 * L <= n; i += 2 * L) {
      put_pair<A>(dst + i, load(src + size * i), load(src + size * (i + L)));
    }
    for (; i + L <= n; i += L) put<A>(dst + i, load(src + size * i));
  }
  for (; i < n; ++i) {
    float x;
    tail(src + size * i, &x, 1);
    dst[i] = narrow<Out>(x);
  }
}

}  // namespace detail

/// f64: rounded to float by the hardware conversion, which gives what the scalar kernel's checked cast
/// gives, out-of-range values included (little-endian hosts: the doubles are read as they lie).
template <class A, class Out = float>
void dequant_f64(const std::byte* src, Out* dst, std::size_t n) noexcept {
  detail::convert_elements<A>(
      src, dst, n, 8, [](const std::byte* p) GGUF_SIMD_INLINE_LAMBDA { return load_f64_as_float<A>(p); },
      scalar::dequant_f64);
}

/// i64: rounded to float to nearest even, as the scalar kernel's cast (little-endian hosts, as f64).
template <class A, class Out = float>
void dequant_i64(const std::byte* src, Out* dst, std::size_t n) noexcept {
  detail::convert_elements<A>(
      src, dst, n, 8, [](const std::byte* p) GGUF_SIMD_INLINE_LAMBDA { return load_i64_as_float<A>(p); },
      scalar::dequant_i64);
}

/// f32: a copy for float outputs; else each float rounded in registers.
template <class A, class Out = float>
void dequant_f32(const std::byte* src, Out* dst, std::size_t n) noexcept {
  if constexpr (std::is_same_v<Out, float>) {
    scalar::dequant_f32(src, dst, n);
  } else {
    detail::convert_elements<A>(
        src, dst, n, 4,
        [](const std::byte* p)
            GGUF_SIMD_INLINE_LAMBDA { return fbatch<A>::load_unaligned(reinterpret_cast<const float*>(p)); },
        scalar::dequant_f32);
  }
}

/// i8: sign-extended and converted, exact.
template <class A, class Out = float>
void dequant_i8(const std::byte* src, Out* dst, std::size_t n) noexcept {
  detail::convert_elements<A>(
      src, dst, n, 1, [](const std::byte* p) GGUF_SIMD_INLINE_LAMBDA { return to_float<A>(load_i8<A>(p)); },
      scalar::dequant_i8);
}

/// i16: sign-extended ((w ^ 0x8000) - 0x8000: no shift, which xsimd 8.1 runs lane by lane on AVX-512), exact.
template <class A, class Out = float>
void dequant_i16(const std::byte* src, Out* dst, std::size_t n) noexcept {
  detail::convert_elements<A>(
      src, dst, n, 2,
      [](const std::byte* p) GGUF_SIMD_INLINE_LAMBDA {
        const ibatch<A> bias(0x8000);
        return to_float<A>((load_u16<A>(p) ^ bias) - bias);
      },
      scalar::dequant_i16);
}

/// i32: converted to nearest even (cvtdq2ps, scvtf), as the scalar kernel's cast.
template <class A, class Out = float>
void dequant_i32(const std::byte* src, Out* dst, std::size_t n) noexcept {
  detail::convert_elements<A>(
      src, dst, n, 4,
      [](const std::byte* p) GGUF_SIMD_INLINE_LAMBDA {
        return to_float<A>(ibatch<A>::load_unaligned(reinterpret_cast<const std::int32_t*>(p)));
      },
      scalar::dequant_i32);
}

/// f16: IEEE half -> float, exact. `n` elements.
template <class A, class Out = float>
void dequant_f16(const std::byte* src, Out* dst, std::size_t n) noexcept {
  detail::convert_words<A, detail::f16_elements<A>>(src, dst, n);
}

/// bf16: the top 16 bits of a float. `n` elements.
template <class A, class Out = float>
void dequant_bf16(const std::byte* src, Out* dst, std::size_t n) noexcept {
  detail::convert_words<A, detail::bf16_elements<A>>(src, dst, n);
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_PLAIN_DEQUANTIZE_SIMD_HPP
