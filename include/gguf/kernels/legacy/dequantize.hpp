#ifndef GGUF_KERNELS_LEGACY_DEQUANTIZE_HPP
#define GGUF_KERNELS_LEGACY_DEQUANTIZE_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/rounding.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The first-generation 32-weight blocks. Each weight is an integer times a half-precision scale,
// computed as ggml's dequantize_row_* computes it: int -> float, times d (plus m, rounded separately).

namespace detail {
/**
 * q4_0, q4_1, q5_0, q5_1: 32 weights, byte j holding weight j (low nibble) and j + 16 (high nibble);
 * the q5 types add a fifth bit per weight from the 32-bit qh (bit j, bit j + 16). The _0 types centre
 * the integer (x = (q - 8) * d, or q - 16) and the _1 types add a min: x = q * d + m.
 */
template <class B>
inline void dequant_q4_q5(const std::byte* src, float* dst, std::size_t nb) noexcept {
  constexpr bool fifth_bit = std::is_same_v<B, blocks::q5_0> || std::is_same_v<B, blocks::q5_1>;
  constexpr bool has_min = std::is_same_v<B, blocks::q4_1> || std::is_same_v<B, blocks::q5_1>;
  constexpr int centre = has_min ? 0 : (fifth_bit ? 16 : 8);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 32) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    std::uint32_t qh = 0;
    if constexpr (fifth_bit) qh = load_le<std::uint32_t>(src + offsetof(B, qh));
    float m = 0;
    if constexpr (has_min) m = half_to_float(load_le<std::uint16_t>(src + offsetof(B, m)));
    for (int j = 0; j < 16; ++j) {
      const std::uint8_t q = load_le<std::uint8_t>(qs + j);
      const int q0 = static_cast<int>((q & 0x0F) | (((qh >> j) << 4) & 0x10)) - centre;
      const int q1 = static_cast<int>((q >> 4) | ((qh >> (j + 12)) & 0x10)) - centre;
      if constexpr (has_min) {
        dst[j] = mul_add(static_cast<float>(q0), d, m);
        dst[j + 16] = mul_add(static_cast<float>(q1), d, m);
      } else {
        dst[j] = static_cast<float>(q0) * d;
        dst[j + 16] = static_cast<float>(q1) * d;
      }
    }
  }
}
}  // namespace detail

/// q4_0: 32 weights, x = (q - 8) * d with q the 4-bit nibble.
inline void dequant_q4_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail::dequant_q4_q5<blocks::q4_0>(src, dst, nb);
}
/// q4_1: 32 weights, x = q * d + m (product and sum rounded separately, as ggml does).
inline void dequant_q4_1(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail::dequant_q4_q5<blocks::q4_1>(src, dst, nb);
}
/// q5_0: 32 weights, x = (q - 16) * d with q the nibble plus a fifth bit from qh.
inline void dequant_q5_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail::dequant_q4_q5<blocks::q5_0>(src, dst, nb);
}
/// q5_1: 32 weights, x = q * d + m with q the nibble plus a fifth bit from qh.
inline void dequant_q5_1(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail::dequant_q4_q5<blocks::q5_1>(src, dst, nb);
}

namespace detail {
/// x = q * d for 32 int8 weights: q8_0, and q8_1 (whose second half, s, is not needed).
template <class B>
inline void dequant_q8(const std::byte* src, float* dst, std::size_t nb) noexcept {
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 32) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    for (int j = 0; j < 32; ++j) dst[j] = static_cast<float>(load_le<std::int8_t>(qs + j)) * d;
  }
}
}  // namespace detail

/// q8_0: 32 int8 weights, x = q * d.
inline void dequant_q8_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail::dequant_q8<blocks::q8_0>(src, dst, nb);
}

/// q8_1 has no ggml to_float (it is an intermediate type); FORMAT.md defines it as half(d) * q.
inline void dequant_q8_1(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail::dequant_q8<blocks::q8_1>(src, dst, nb);
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_LEGACY_DEQUANTIZE_HPP
