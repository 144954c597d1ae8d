#ifndef GGUF_KERNELS_FP4_QUANTIZE_HPP
#define GGUF_KERNELS_FP4_QUANTIZE_HPP

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The 4-bit floats mxfp4 and nvfp4: E2M1 levels against a power-of-two or UE4M3 scale, each weight the
// nearest level; importance weights ignored.

namespace detail {

/// The E2M1 level (doubled, ggml's kvalues_mxfp4) nearest to x / (2 e), the first of equals; NaN gives 0.
inline std::uint8_t nearest_e2m1(float x, float e) noexcept {
  int best = 0;
  float best_err = std::fabs(mul(static_cast<float>(tables::kvalues_mxfp4[0]), e) - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(mul(static_cast<float>(tables::kvalues_mxfp4[static_cast<std::size_t>(i)]), e) - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return static_cast<std::uint8_t>(best);
}

/**
 * floorf(log2f(x)) for x > 0 as glibc computes it: log2 rounded to float first, so x just below a power
 * of two gives that power's exponent. log2 in double rounded to float is that float (the correctly
 * rounded one) and does not depend on the platform's log2f.
 */
inline float floor_log2f(float x) noexcept {
  // A normal x = m 2^e whose m is below 2 - 2^-11: log2 x = e + f with f < 1 - 3.5e-4, farther from e + 1
  // than the float rounding can move it (half an ulp of |e| <= 127 is <= 2^-17): floor(rounded) is e.
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t exponent = (bits >> 23) & 0xFFu, mantissa = bits & 0x7FFFFFu;
  if (bits >> 31 == 0 && exponent != 0 && exponent != 0xFF && mantissa < 0x7FF000u)
    return static_cast<float>(static_cast<int>(exponent) - 127);
  return std::floor(static_cast<float>(std::log2(static_cast<double>(x))));
}

/**
 * ggml_fp32_to_ue4m3: the UE4M3 code of x (4 exponent bits, bias 7, 3 mantissa bits), rounding half
 * up on the mantissa bits, saturating at 0x7E (448); 0 for x <= 0 and NaN.
 */
inline std::uint8_t to_ue4m3(float x) noexcept {
  if (!(x > 0.0f)) return 0;
  if (x > 448.0f) x = 448.0f;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  int exp = static_cast<int>((bits >> 23) & 0xFFu) - 127 + 7;
  if (exp <= 0) {
    int man = x86_trunc(mul(x, 512.0f) + 0.5f);
    if (man > 7) man = 7;
    return man < 1 ? std::uint8_t{0} : static_cast<std::uint8_t>(man);
  }
  if (exp >= 15) return 0x7E;
  int man = static_cast<int>((bits >> 20) & 0x7u) + static_cast<int>((bits >> 19) & 1u);
  if (man > 7) {
    man = 0;
    if (++exp >= 15) return 0x7E;
  }
  return static_cast<std::uint8_t>((exp << 3) | man);
}

}  // namespace detail

/// mxfp4: E8M0 scale 2^(floor(log2 amax) - 2), each weight the nearest E2M1 level. Importance ignored.
inline void quantize_mxfp4(const float* src, std::byte* dst, std::size_t n_per_row,
                           const float* /*importance*/) noexcept {
  using B = blocks::mxfp4;
  for (std::size_t i = 0; i < n_per_row / 32; ++i, src += 32, dst += sizeof(B)) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) {
      if (amax < std::fabs(src[j])) amax = std::fabs(src[j]);
    }
    // ggml's (uint8_t) of the float exponent: an infinite amax gives 0, a subnormal one wraps.
    const std::uint8_t e = amax > 0.0f ? detail::x86_trunc_byte(detail::floor_log2f(amax) - 2 + 127) : std::uint8_t{0};
    const float d = e8m0_to_float_half(e);
    detail::store_le<std::uint8_t>(dst + offsetof(B, e), e);
    for (int j = 0; j < 16; ++j) {
      const auto q =
          static_cast<std::uint8_t>(detail::nearest_e2m1(src[j], d) | (detail::nearest_e2m1(src[j + 16], d) << 4));
      detail::store_le<std::uint8_t>(dst + offsetof(B, qs) + j, q);
    }
  }
}

/// nvfp4: per 16 weights a UE4M3 scale of amax / 6, each weight the nearest E2M1 level. Importance ignored.
inline void quantize_nvfp4(const float* src, std::byte* dst, std::size_t n_per_row,
                           const float* /*importance*/) noexcept {
  using B = blocks::nvfp4;
  for (std::size_t i = 0; i < n_per_row / 64; ++i, dst += sizeof(B)) {
    for (int s = 0; s < 4; ++s, src += 16) {
      float amax = 0;
      for (int j = 0; j < 16; ++j) {
        if (amax < std::fabs(src[j])) amax = std::fabs(src[j]);
      }
      const std::uint8_t ue = detail::to_ue4m3(amax / 6.0f);
      detail::store_le<std::uint8_t>(dst + offsetof(B, d) + s, ue);
      const float d = ue4m3_to_float_half(ue);
      for (int j = 0; j < 8; ++j) {
        const auto q =
            static_cast<std::uint8_t>(detail::nearest_e2m1(src[j], d) | (detail::nearest_e2m1(src[j + 8], d) << 4));
        detail::store_le<std::uint8_t>(dst + offsetof(B, qs) + 8 * s + j, q);
      }
    }
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_FP4_QUANTIZE_HPP
