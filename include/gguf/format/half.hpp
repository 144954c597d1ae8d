#ifndef GGUF_FORMAT_HALF_HPP
#define GGUF_FORMAT_HALF_HPP

#include <bit>
#include <cstdint>
#include <type_traits>

#include "gguf/version.hpp"

/**
 * @file
 * The two 16-bit float formats of ggml tensors as value types, `f16` (IEEE binary16) and `bf16`
 * (bfloat16), for dequantizing to half precision: the output engines upload to a GPU. Each holds its bits
 * and nothing else (2 bytes, trivially copyable), so a `std::span<f16>` is the array a GPU API takes.
 * The conversions from float round to nearest even, as ggml's ggml_fp32_to_fp16 and ggml_fp32_to_bf16
 * do; a NaN stays a NaN (quiet; which one is not part of the contract: F16C, NEON and ggml's portable
 * code each keep a different part of the payload).
 */

GGUF_BEGIN_NAMESPACE

/** An IEEE binary16 value, by its bits. */
struct f16 {
  std::uint16_t bits = 0;  ///< sign, 5 exponent bits, 10 mantissa bits
  /// Equal bits (so +0 != -0 and a NaN equals itself: a value type, not IEEE comparison).
  friend constexpr bool operator==(f16, f16) noexcept = default;
};

/** A bfloat16 value (the top half of a float), by its bits. */
struct bf16 {
  std::uint16_t bits = 0;  ///< sign, 8 exponent bits, 7 mantissa bits
  /// Equal bits (so +0 != -0 and a NaN equals itself: a value type, not IEEE comparison).
  friend constexpr bool operator==(bf16, bf16) noexcept = default;
};

static_assert(sizeof(f16) == 2 && std::is_trivially_copyable_v<f16> && std::is_standard_layout_v<f16>);
static_assert(sizeof(bf16) == 2 && std::is_trivially_copyable_v<bf16> && std::is_standard_layout_v<bf16>);

/**
 * `x` rounded to the nearest binary16, ties to even: overflow to infinity from 65520, subnormals below
 * 2^-14, a NaN quiet with the top 9 bits of its payload (as F16C and NEON convert).
 */
constexpr f16 to_f16(float x) noexcept {
  const std::uint32_t w = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint16_t>((w >> 16) & 0x8000u);
  const std::uint32_t a = w & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return {static_cast<std::uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu))};
  if (a >= 0x477FF000u) return {static_cast<std::uint16_t>(sign | 0x7C00u)};  // 65520 and up round to infinity
  if (a >= 0x38800000u) {                                                     // a normal half: round at bit 13
    const std::uint32_t r = a + 0xFFFu + ((a >> 13) & 1u);
    return {static_cast<std::uint16_t>(sign | ((r - 0x38000000u) >> 13))};
  }
  const std::uint32_t e = a >> 23;  // a subnormal half (or zero): |x| * 2^24 rounded to an integer
  if (e < 102) return {sign};       // below 2^-25: rounds to zero
  const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u, shift = 126 - e;  // |x| * 2^24 = m / 2^shift
  const std::uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  return {static_cast<std::uint16_t>(sign | (q + ((rem > half || (rem == half && (q & 1u) != 0)) ? 1u : 0u)))};
}

/** `x` rounded to the nearest bfloat16, ties to even, as ggml_fp32_to_bf16: a NaN keeps its top bits, made quiet. */
constexpr bf16 to_bf16(float x) noexcept {
  const std::uint32_t w = std::bit_cast<std::uint32_t>(x);
  if ((w & 0x7FFFFFFFu) > 0x7F800000u) return {static_cast<std::uint16_t>((w >> 16) | 0x40u)};
  return {static_cast<std::uint16_t>((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16)};
}

/** The float `h` stands for, exactly. */
constexpr float to_float(f16 h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000u) << 16;
  const std::uint32_t exp = (h.bits >> 10) & 0x1Fu;
  std::uint32_t man = h.bits & 0x3FFu;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (man << 13) | (man != 0 ? 0x00400000u : 0u));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
  if (man == 0) return std::bit_cast<float>(sign);
  std::uint32_t e = 113;  // a subnormal: normalised
  while ((man & 0x400u) == 0) {
    man <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((man & 0x3FFu) << 13));
}

/** The float `h` stands for, exactly: its bits in the top half. */
constexpr float to_float(bf16 h) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(h.bits) << 16); }

/// The element types `dequantize` writes: float, f16 or bf16.
template <class T>
concept dequant_output = std::is_same_v<T, float> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_HALF_HPP
