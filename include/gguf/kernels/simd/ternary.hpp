#ifndef GGUF_KERNELS_SIMD_TERNARY_HPP
#define GGUF_KERNELS_SIMD_TERNARY_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/simd/ops.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twin of scalar/ternary.hpp's tq2_0: 256 weights, 2 bits each, weight = float(q - 1) * d. Each
// 16-byte run of qs is widened to int32 once and gives 4 * 16 weights, one per 2-bit field.
//  - AVX2, AVX-512: a weight can take only 4 values, so the block's 4 products float(q - 1) * d are
//    computed once (one multiply), repeated across the vector, and each weight is a lane permute of
//    them indexed by its byte shifted right by 2l (vpermps reads only the index's low 3 or 4 bits, and
//    with the products repeating every 4 lanes the bits above the field do not matter): no mask, no
//    conversion, no multiply per weight.
//  - Otherwise: ((byte >> 2l) & 3) - 1 converted and multiplied per vector.

namespace detail {

/// Lane k = (k % 4) - 1, as floats: times d, the 4 products float(q - 1) * d repeated (AVX2, AVX-512).
template <class A>
inline fbatch<A> centred_levels() noexcept {
  alignas(64) std::int32_t t[lanes<A>];
  for (std::size_t k = 0; k < lanes<A>; ++k) t[k] = static_cast<std::int32_t>(k % 4) - 1;
  return to_float<A>(ibatch<A>::load_aligned(t));
}

/// The weights of the 2-bit fields at bit 2 * Field of the widened bytes w; p = centred_levels * d.
template <class A, int Field>
inline fbatch<A> field_weights(const ibatch<A>& w, const fbatch<A>& p, const fbatch<A>& d) noexcept {
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
template <class A>
inline void put_fields(const ibatch<A>* w, const fbatch<A>& p, const fbatch<A>& d, float* y) noexcept {
  constexpr std::size_t L = lanes<A>;
  for (std::size_t k = 0; k < 16 / L; ++k) {
    field_weights<A, 0>(w[k], p, d).store_unaligned(y + k * L);
    field_weights<A, 1>(w[k], p, d).store_unaligned(y + 32 + k * L);
    field_weights<A, 2>(w[k], p, d).store_unaligned(y + 64 + k * L);
    field_weights<A, 3>(w[k], p, d).store_unaligned(y + 96 + k * L);
  }
}

}  // namespace detail

/// tq2_0: each 32-byte half of qs gives 128 weights: bits 0-1 of its 32 bytes, then 2-3, 4-5, 6-7.
template <class A>
void dequant_tq2_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::tq2_0;
  constexpr std::size_t L = lanes<A>;
  const fbatch<A> centred = detail::centred_levels<A>();
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += blocks::qk_k) {
    const fbatch<A> d(half_scale(src + offsetof(B, d)));
    const fbatch<A> p = centred * d;  // lane k: float((k % 4) - 1) * d, the products of the scalar kernel
    const std::byte* qs = src + offsetof(B, qs);
    for (std::size_t m = 0; m < 64; m += 16) {  // bytes m .. m + 15 of qs
      ibatch<A> w[16 / L];
      widen16<A>(qs + m, w);
      detail::put_fields<A>(w, p, d, dst + (m / 32) * 128 + m % 32);
    }
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_TERNARY_HPP
