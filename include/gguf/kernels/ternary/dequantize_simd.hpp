#ifndef GGUF_KERNELS_TERNARY_DEQUANTIZE_SIMD_HPP
#define GGUF_KERNELS_TERNARY_DEQUANTIZE_SIMD_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/simd/ops.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of ternary/dequantize.hpp's tq2_0 and tq1_0: 256 weights, weight = float(t - 1) * d with t the
// weight's 2-bit field (tq2_0) or base-3 digit (tq1_0).
// tq2_0: each 16-byte run of qs is widened to int32 once and gives 4 * 16 weights, one per 2-bit field.
//  - AVX2, AVX-512: a weight can take only 4 values, so the block's 4 products float(q - 1) * d are
//    computed once (one multiply), repeated across the vector, and each weight is a lane permute of
//    them indexed by its byte shifted right by 2l (vpermps reads only the index's low 3 or 4 bits, and
//    with the products repeating every 4 lanes the bits above the field do not matter): no mask, no
//    conversion, no multiply per weight.
//  - Otherwise: ((byte >> 2l) & 3) - 1 converted and multiplied per vector.
// tq1_0: each 16-byte run of qs is widened to int32 once, as fractions b << 8 of 16 bits, and gives its
// 5 digits one batch at a time (ggml's digit-major order): each multiply by 3 carries out the next digit
// (ops.hpp's base3_digit: two 16-bit multiplies on x86), the scalar kernel's uint8 arithmetic exactly.
// A digit becomes its weight as a tq2_0 field does: a permute of the block's products on AVX2 and
// AVX-512, else converted and multiplied. qh's 16 weights (lane 4n + m: digit n of qh[m]) with 4 lanes
// are 4 digits of its 4 bytes one after another; with 8 or 16, each lane starts from qh[m] 3^n mod 256
// (a per-lane shift and multiply) and takes one digit.

namespace detail {

/// Lane k = (k % 4) - 1, as floats: times d, the 4 products float(q - 1) * d repeated (AVX2, AVX-512).
template <class A>
GGUF_SIMD_INLINE fbatch<A> centred_levels() noexcept {
  alignas(64) std::int32_t t[lanes<A>];
  for (std::size_t k = 0; k < lanes<A>; ++k) t[k] = static_cast<std::int32_t>(k % 4) - 1;
  return to_float<A>(ibatch<A>::load_aligned(t));
}

/// The weights of the 2-bit fields at bit 2 * Field of the widened bytes w; p = centred_levels * d.
template <class A, int Field>
GGUF_SIMD_INLINE fbatch<A> field_weights(const ibatch<A>& w, const fbatch<A>& p, const fbatch<A>& d) noexcept {
  constexpr int shift = 2 * Field;
  if constexpr (lut_bits<A> >= 3) {
    if constexpr (shift == 0)
      return permute<A>(p, w);
    else
      return permute<A>(p, w >> shift);
  } else {
    (void)p;
    return to_float<A>(((w >> shift) & ibatch<A>(3)) - ibatch<A>(1)) * d;
  }
}

/// The 4 * 16 weights of 16 widened bytes: field l of byte j at y[32 * l + j].
template <class A, class Out>
GGUF_SIMD_INLINE void put_fields(const ibatch<A>* w, const fbatch<A>& p, const fbatch<A>& d, Out* y) noexcept {
  constexpr std::size_t L = lanes<A>;
  for (std::size_t k = 0; k < 16 / L; ++k) {
    put<A>(y + k * L, field_weights<A, 0>(w[k], p, d));
    put<A>(y + 32 + k * L, field_weights<A, 1>(w[k], p, d));
    put<A>(y + 64 + k * L, field_weights<A, 2>(w[k], p, d));
    put<A>(y + 96 + k * L, field_weights<A, 3>(w[k], p, d));
  }
}

/// 3^n, n < 4.
inline constexpr std::int32_t tq1_pow3[4] = {1, 3, 9, 27};

/// The weights of digits t (int32 lanes, 0 to 2): float(t - 1) * d; p = centred_levels * d.
template <class A>
GGUF_SIMD_INLINE fbatch<A> digit_weights(const ibatch<A>& t, const fbatch<A>& p, const fbatch<A>& d) noexcept {
  if constexpr (lut_bits<A> >= 3) {
    (void)d;
    return permute<A>(p, t);
  } else {
    (void)p;
    return to_float<A>(t - ibatch<A>(1)) * d;
  }
}

}  // namespace detail

/// tq2_0: each 32-byte half of qs gives 128 weights: bits 0-1 of its 32 bytes, then 2-3, 4-5, 6-7.
template <class A, class Out = float>
void dequant_tq2_0(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::tq2_0;
  constexpr std::size_t L = lanes<A>;
  const fbatch<A> centred = detail::centred_levels<A>();
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += blocks::qk_k) {
    const fbatch<A> d(half_scale(src + offsetof(B, d)));
    const fbatch<A> p = centred * d;  // lane k: float((k % 4) - 1) * d, the products of the scalar kernel
    const std::byte* qs = src + offsetof(B, qs);
    if constexpr (uses_word_table<A, Out>) {  // half outputs: p rounded once
      const word_table t = table_words<A, Out>(p, no_subnormals);
      put_2bit32<A>(dst, t, qs);
      put_2bit32<A>(dst + 128, t, qs + 32);
      continue;
    }
    for (std::size_t m = 0; m < 64; m += 16) {  // bytes m .. m + 15 of qs
      ibatch<A> w[16 / L];
      widen16<A>(qs + m, w);
      detail::put_fields<A>(w, p, d, dst + (m / 32) * 128 + m % 32);
    }
  }
}

/// tq1_0: qs[0, 32) gives digits 0-4 of its bytes, 32 weights each; qs[32, 48) digits 0-4, 16 each; qh
/// digits 0-3, 4 each.
template <class A, class Out = float>
void dequant_tq1_0(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::tq1_0;
  constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0 && L % 4 == 0);
  const fbatch<A> centred = detail::centred_levels<A>();
  // qh, more than 4 lanes: lane j of batch c is digit n = (c L + j) / 4 of byte m = j % 4, whose fraction
  // is byte m of the word times 3^n.
  ibatch<A> qh_shift, qh_pow[16 / L];
  if constexpr (L > 4) {
    alignas(64) std::int32_t t[16];
    for (std::size_t j = 0; j < L; ++j) t[j] = static_cast<std::int32_t>(8 * (j % 4));
    qh_shift = ibatch<A>::load_aligned(t);
    for (std::size_t j = 0; j < 16; ++j) t[j] = detail::tq1_pow3[j / 4];
    for (std::size_t c = 0; c < 16 / L; ++c) qh_pow[c] = ibatch<A>::load_aligned(t + c * L);
  }
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += blocks::qk_k) {
    const fbatch<A> d(half_scale(src + offsetof(B, d)));
    const fbatch<A> p = centred * d;  // lane k: float((k % 4) - 1) * d, the products of the scalar kernel
    const std::byte* qs = src + offsetof(B, qs);
    if constexpr (uses_word_table<A, Out>) {  // half outputs: p rounded once
      const word_table t = table_words<A, Out>(p, no_subnormals);
      put_base3_digits<A, 32>(dst, t, qs);
      put_base3_digits<A, 16>(dst + 160, t, qs + 32);
      put_base3_qh16<A>(dst + 240, t, load_le<std::uint32_t>(src + offsetof(B, qh)));
      continue;
    }
    for (std::size_t m = 0; m < 48; m += 16) {  // bytes m .. m + 15: 5 digits of 32 (then 16) weights
      const std::size_t stride = m < 32 ? 32 : 16;
      Out* y = dst + (m < 32 ? m : 160);
      ibatch<A> f[16 / L];
      widen16<A>(qs + m, f);
      for (std::size_t k = 0; k < 16 / L; ++k) f[k] = f[k] << 8;
      for (std::size_t n = 0; n < 5; ++n) {
        for (std::size_t k = 0; k < 16 / L; ++k) {
          put<A>(y + n * stride + k * L, detail::digit_weights<A>(base3_digit<A>(f[k]), p, d));
        }
      }
    }
    if constexpr (L == 4) {  // batch n is digit n of the 4 bytes: one digit after another
      ibatch<A> f = load_u8<A>(src + offsetof(B, qh)) << 8;
      for (std::size_t n = 0; n < 4; ++n) {
        put<A>(dst + 240 + 4 * n, detail::digit_weights<A>(base3_digit<A>(f), p, d));
      }
    } else {
      const ibatch<A> word(static_cast<std::int32_t>(load_le<std::uint32_t>(src + offsetof(B, qh))));
      const ibatch<A> bytes = (shift_right_lanes<A>(word, qh_shift) & ibatch<A>(0xFF)) << 8;
      for (std::size_t c = 0; c < 16 / L; ++c) {
        ibatch<A> f = (bytes * qh_pow[c]) & ibatch<A>(0xFFFF);
        put<A>(dst + 240 + c * L, detail::digit_weights<A>(base3_digit<A>(f), p, d));
      }
    }
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_TERNARY_DEQUANTIZE_SIMD_HPP
