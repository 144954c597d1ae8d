#ifndef GGUF_KERNELS_FLOAT_FORMATS_HPP
#define GGUF_KERNELS_FLOAT_FORMATS_HPP

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gguf/detail/endian.hpp"
#include "gguf/format/half.hpp"
#include "gguf/kernels/isa.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels {

/// Block fields are little-endian (docs/FORMAT.md, "Byte order"): read with the library's one loader.
using ::gguf::detail::load_le;

/** `x` as an `Out`: itself, or rounded to nearest even (`to_f16`, `to_bf16`). */
template <dequant_output Out>
constexpr Out narrow(float x) noexcept {
  if constexpr (std::is_same_v<Out, float>) {
    return x;
  } else if constexpr (std::is_same_v<Out, f16>) {
    return to_f16(x);
  } else {
    return to_bf16(x);
  }
}

/**
 * IEEE binary16 -> binary32, exactly (every half, subnormals, infinities and NaN payloads included):
 * the value ggml's GGML_FP16_TO_FP32 and F16C's vcvtph2ps give.
 */
constexpr float half_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t man = h & 0x3FFu;
  std::uint32_t bits;
  if (exp == 0x1F) {
    // inf, or NaN with its payload and the quiet bit set: ggml converts through a float multiply
    // (and F16C, NEON's fcvt the same way), which quiets a signaling NaN.
    bits = sign | 0x7F800000u | (man << 13) | (man ? 0x00400000u : 0u);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;  // +-0
  } else {        // subnormal: normalise
    std::uint32_t e = 113;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((man & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

/** bfloat16 -> binary32: the top half of a float. */
constexpr float bf16_to_float(std::uint16_t h) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

/**
 * E8M0 scale (MXFP4) halved, as ggml's GGML_E8M0_TO_FP32_HALF: 2^(e-128), with e = 0 and 1 the
 * subnormals 2^-128 and 2^-127. (The halving pairs with ggml's doubled E2M1 table.) e = 255 gives
 * 2^127, not NaN, as in ggml.
 */
constexpr float e8m0_to_float_half(std::uint8_t e) noexcept {
  const std::uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<std::uint32_t>(e - 1) << 23);
  return std::bit_cast<float>(bits);
}

/**
 * UE4M3 scale (NVFP4) halved, as ggml's ggml_ue4m3_to_fp32: 4 exponent bits (bias 7), 3 mantissa bits,
 * the top bit ignored but by the NaN test; 0x00 and 0x7F (its NaN) give 0, 0xFF gives 240. Every result is
 * exact in float.
 */
constexpr float ue4m3_to_float_half(std::uint8_t x) noexcept {
  if (x == 0 || x == 0x7F) return 0.0f;
  const int exp = (x >> 3) & 0xF;
  const int man = x & 0x7;
  // exp 0: man * 2^-9; else (1 + man/8) * 2^(exp-7) = (8 + man) * 2^(exp-10). Then halved.
  const float raw =
      exp == 0 ? static_cast<float>(man) * 0x1p-9f
               : static_cast<float>(8 + man) * std::bit_cast<float>(static_cast<std::uint32_t>(exp - 10 + 127) << 23);
  return raw * 0.5f;
}

}  // namespace kernels
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_FLOAT_FORMATS_HPP
