#ifndef GGUF_KERNELS_LOW_BIT_DEQUANTIZE_SIMD_HPP
#define GGUF_KERNELS_LOW_BIT_DEQUANTIZE_SIMD_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/ternary/dequantize_simd.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of low_bit/dequantize.hpp: q1_0 and q2_0, one half scale a block, weights packed least
// significant bits first in natural order, so lanes<A> consecutive weights come from one 32-bit word.
//  - q1_0: x = bit ? d : -d. The scalar kernel picks d or its negation, which flips the sign bit (also
//    of a NaN); here each lane's bit becomes a lane mask (bit_lanes) and the sign bit of d is flipped
//    where it is clear: no branch, no arithmetic, the same bits.
//  - q2_0: x = float(q - 1) * d. On AVX2 and AVX-512 the block's 4 products are computed once and each
//    weight is a lane permute of them indexed by its word shifted right by its field's position (the
//    permute reads only the index's low 3 or 4 bits, and the products repeat every 4 lanes); with 4 lanes
//    (SSE, NEON: no permute, and SSE2 has no per-lane shift) a byte's 4 fields are built from two lane
//    masks, its low and its high field bits, and (q - 1) is converted and multiplied as the scalar
//    kernel does.

/// q1_0: 128 weights, 32 from each little-endian word of qs.
template <class A, class Out = float>
void dequant_q1_0(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::q1_0;
  constexpr std::size_t L = lanes<A>;
  static_assert(32 % L == 0);
  const ibatch<A> sign(std::numeric_limits<std::int32_t>::min());
  ibatch<A> even_lanes_sign(0);  // the sign bit in even lanes: d ^ it is -d, d, -d, d, ...
  if constexpr (uses_word_table<A, Out>) {
    alignas(64) std::int32_t t[L];
    for (std::size_t k = 0; k < L; ++k) t[k] = k % 2 ? 0 : std::numeric_limits<std::int32_t>::min();
    even_lanes_sign = ibatch<A>::load_aligned(t);
  }
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 128) {
    const ibatch<A> d(std::bit_cast<std::int32_t>(half_scale(src + offsetof(B, d))));
    const std::byte* qs = src + offsetof(B, qs);
    if constexpr (uses_word_table<A, Out>) {  // -d and d rounded once, then blended
      const word_pair w = pair_words<A, Out>(as_float<A>(d ^ even_lanes_sign), no_subnormals);
      for (std::size_t j = 0; j < 128; j += 32) put_bits32<A>(dst + j, w, load_le<std::uint32_t>(qs + j / 8));
      continue;
    }
    for (std::size_t j = 0; j < 128; j += 32) {
      const std::uint32_t w = load_le<std::uint32_t>(qs + j / 8);
      for (std::size_t s = 0; s < 32; s += L) {
        put<A>(dst + j + s, as_float<A>(d ^ (sign & ~bit_lanes<A>(w >> s))));
      }
    }
  }
}

namespace detail {

/// Bits 0, 2, 4, 6 of b (Odd: 1, 3, 5, 7) packed into bits 0-3.
template <bool Odd>
constexpr std::uint32_t every_other_bit(std::uint32_t b) noexcept {
  std::uint32_t x = (Odd ? b >> 1 : b) & 0x55;
  x = (x | (x >> 1)) & 0x33;
  return (x | (x >> 2)) & 0x0F;
}

}  // namespace detail

/// q2_0: 64 weights, 16 from each little-endian word of qs.
template <class A, class Out = float>
void dequant_q2_0(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::q2_0;
  constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0);
  ibatch<A> shift[16 / L];  // lane k of shift[c]: 2 * (c * L + k), the position of its weight's field
  for (std::size_t c = 0; c < 16 / L; ++c) {
    alignas(64) std::int32_t t[L];
    for (std::size_t k = 0; k < L; ++k) t[k] = static_cast<std::int32_t>(2 * (c * L + k));
    shift[c] = ibatch<A>::load_aligned(t);
  }
  const fbatch<A> centred = detail::centred_levels<A>();
  const ibatch<A> one(1), two(2);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 64) {
    const fbatch<A> d(half_scale(src + offsetof(B, d)));
    const fbatch<A> p = centred * d;  // lane k: float((k % 4) - 1) * d, the scalar kernel's products
    const std::byte* qs = src + offsetof(B, qs);
    if constexpr (uses_word_table<A, Out>) {  // the products rounded once
      const word_table t = table_words<A, Out>(p, no_subnormals);
      put_packed_2bit32<A>(dst, t, qs);
      put_packed_2bit32<A>(dst + 32, t, qs + 8);
      continue;
    }
    for (std::size_t j = 0; j < 64; j += 16) {
      const std::uint32_t word = load_le<std::uint32_t>(qs + j / 4);
      if constexpr (lut_bits<A> >= 3) {
        const ibatch<A> w(static_cast<std::int32_t>(word));
        for (std::size_t c = 0; c < 16 / L; ++c) {
          put<A>(dst + j + c * L, permute<A>(p, shift_right_lanes<A>(w, shift[c])));
        }
      } else {  // 4 lanes: one byte, its low and high field bits made lane masks
        static_assert(L == 4);
        (void)p;
        for (std::size_t c = 0; c < 4; ++c) {
          const std::uint32_t b = (word >> (8 * c)) & 0xFF;
          const ibatch<A> q = (bit_lanes<A>(detail::every_other_bit<false>(b)) & one) +
                              (bit_lanes<A>(detail::every_other_bit<true>(b)) & two);
          put<A>(dst + j + 4 * c, (to_float<A>(q - one) * d));
        }
      }
    }
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_LOW_BIT_DEQUANTIZE_SIMD_HPP
