#ifndef GGUF_KERNELS_LEGACY_DEQUANTIZE_SIMD_HPP
#define GGUF_KERNELS_LEGACY_DEQUANTIZE_SIMD_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/simd/ops.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of legacy/dequantize.hpp, one per block type, generic over the xsimd Arch: lanes<A> weights
// at a time (4 on SSE/NEON, 8 on AVX2, 16 on AVX-512). Bit-exact with the scalar kernels: the same
// int -> float conversions and products; where the scalar code rounds q * d and + m separately, an FMA
// is used instead because q * d is exact in float (q < 32 needs 5 bits, the half d 11: 16 < 24 bits),
// so fused and unfused round once, at the same place.

namespace detail {

template <class A, class B, class Out>
GGUF_SIMD_INLINE void dequant_q4_q5(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  constexpr bool fifth_bit = std::is_same_v<B, blocks::q5_0> || std::is_same_v<B, blocks::q5_1>;
  constexpr bool has_min = std::is_same_v<B, blocks::q4_1> || std::is_same_v<B, blocks::q5_1>;
  constexpr std::int32_t centre = has_min ? 0 : (fifth_bit ? 16 : 8);
  constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0);
  const ibatch<A> low4(0x0F), c(centre);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 32) {
    fbatch<A> d, m(0.0f);
    if constexpr (has_min) {
      static_assert(offsetof(B, m) == offsetof(B, d) + 2);
      half_scale_pair<A>(src + offsetof(B, d), d, m);
    } else {
      d = fbatch<A>(half_scale(src + offsetof(B, d)));
    }
    const std::byte* qs = src + offsetof(B, qs);
    if constexpr (!fifth_bit && lut_bits<A> >= 4) {
      // AVX-512: the block's 16 values looked up by the nibbles (half outputs round them once).
      const fbatch<A> q = lane_map<A>([](int k) { return static_cast<float>(k - centre); });
      put_nibbles16<A>(dst, has_min ? xsimd::fma(q, d, m) : q * d, qs, no_subnormals);
      continue;
    }
    std::uint32_t qh = 0;  // bit k: the fifth bit of weight k
    if constexpr (fifth_bit) qh = load_le<std::uint32_t>(src + offsetof(B, qh));
    if constexpr (fifth_bit && lut_bits<A> >= 4) {
      // AVX-512: the block's 32 values in two registers, looked up (each entry the expression below).
      const fbatch<A> k = lane_map<A>([](int e) { return static_cast<float>(e - centre); });
      const fbatch<A> k16 = lane_map<A>([](int e) { return static_cast<float>(e + 16 - centre); });
      if constexpr (has_min) {
        put_fifth_nibbles16<A>(dst, xsimd::fma(k, d, m), xsimd::fma(k16, d, m), qs, qh, no_subnormals);
      } else {
        put_fifth_nibbles16<A>(dst, k * d, k16 * d, qs, qh, no_subnormals);
      }
      continue;
    }
    // Weight by weight where there is no lookup (4 or 8 lanes: AVX-512 took a path above).
    for (std::size_t j = 0; j < 16; j += L) {
      const ibatch<A> q = load_u8<A>(qs + j);
      ibatch<A> q0 = q & low4, q1 = q >> 4;
      if constexpr (fifth_bit) {
        q0 = mark_lanes<A>(q0, qh >> j, 16);
        q1 = mark_lanes<A>(q1, qh >> (j + 16), 16);
      }
      const fbatch<A> x0 = has_min ? xsimd::fma(to_float<A>(q0), d, m) : to_float<A>(q0 - c) * d;
      const fbatch<A> x1 = has_min ? xsimd::fma(to_float<A>(q1), d, m) : to_float<A>(q1 - c) * d;
      put<A>(dst + j, x0);
      put<A>(dst + j + 16, x1);
    }
  }
}

template <class A, class B, class Out>
GGUF_SIMD_INLINE void dequant_q8(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  constexpr std::size_t L = lanes<A>;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 32) {
    const fbatch<A> d(half_scale(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    for (std::size_t j = 0; j < 32; j += 2 * L) {
      put_pair<A>(dst + j, to_float<A>(load_i8<A>(qs + j)) * d, to_float<A>(load_i8<A>(qs + j + L)) * d, no_subnormals);
    }
  }
}

}  // namespace detail

/// q4_0: 32 weights, x = (q - 8) * d.
template <class A, class Out = float>
void dequant_q4_0(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_q4_q5<A, blocks::q4_0>(src, dst, nb);
}
/// q4_1: 32 weights, x = q * d + m (one FMA: q * d is exact).
template <class A, class Out = float>
void dequant_q4_1(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_q4_q5<A, blocks::q4_1>(src, dst, nb);
}
/// q5_0: 32 weights, x = (q - 16) * d, the fifth bits from qh.
template <class A, class Out = float>
void dequant_q5_0(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_q4_q5<A, blocks::q5_0>(src, dst, nb);
}
/// q5_1: 32 weights, x = q * d + m, the fifth bits from qh.
template <class A, class Out = float>
void dequant_q5_1(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_q4_q5<A, blocks::q5_1>(src, dst, nb);
}
/// q8_0: 32 int8 weights, x = q * d.
template <class A, class Out = float>
void dequant_q8_0(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_q8<A, blocks::q8_0>(src, dst, nb);
}
/// q8_1: as q8_0 (s is not needed).
template <class A, class Out = float>
void dequant_q8_1(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_q8<A, blocks::q8_1>(src, dst, nb);
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_LEGACY_DEQUANTIZE_SIMD_HPP
