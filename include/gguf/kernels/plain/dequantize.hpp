#ifndef GGUF_KERNELS_PLAIN_DEQUANTIZE_HPP
#define GGUF_KERNELS_PLAIN_DEQUANTIZE_HPP

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "gguf/kernels/float_formats.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

/// f32: a copy (ggml has no to_float for f32).
inline void dequant_f32(const std::byte* src, float* dst, std::size_t n) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, src, n * sizeof(float));
  } else {
    for (std::size_t i = 0; i < n; ++i) dst[i] = std::bit_cast<float>(load_le<std::uint32_t>(src + 4 * i));
  }
}

/// f16: IEEE half to float, exact.
inline void dequant_f16(const std::byte* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = half_to_float(load_le<std::uint16_t>(src + 2 * i));
}

/// bf16: the top 16 bits of a float.
inline void dequant_bf16(const std::byte* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = bf16_to_float(load_le<std::uint16_t>(src + 2 * i));
}

namespace detail {
/**
 * double -> float rounded to nearest even, as a C++ cast rounds, with values beyond the float range
 * going to +-inf (or +-FLT_MAX when they round down to it) without the cast's undefined behaviour.
 */
inline float narrow(double d) noexcept {
  constexpr double flt_max = std::numeric_limits<float>::max();
  constexpr double halfway = 0x1.ffffffp+127;  // FLT_MAX + half an ulp: ties round to even = 2^128 = inf
  const double a = std::fabs(d);
  if (a > flt_max) {  // NaN compares false and falls through to the cast, which keeps it NaN
    const float r = a >= halfway ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::max();
    return std::signbit(d) ? -r : r;
  }
  return static_cast<float>(d);
}
}  // namespace detail

/// f64: rounded to float (ggml has no to_float for f64).
inline void dequant_f64(const std::byte* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t bits = static_cast<std::uint64_t>(load_le<std::uint32_t>(src + 8 * i)) |
                               (static_cast<std::uint64_t>(load_le<std::uint32_t>(src + 8 * i + 4)) << 32);
    dst[i] = detail::narrow(std::bit_cast<double>(bits));
  }
}

/// i8: exact. The integer types convert as a cast rounds (nearest even); every int64 is within float range.
inline void dequant_i8(const std::byte* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(load_le<std::int8_t>(src + i));
}
/// i16: exact.
inline void dequant_i16(const std::byte* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = static_cast<float>(static_cast<std::int16_t>(load_le<std::uint16_t>(src + 2 * i)));
}
/// i32: exact up to 2^24 in magnitude, rounded to nearest even beyond.
inline void dequant_i32(const std::byte* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = static_cast<float>(static_cast<std::int32_t>(load_le<std::uint32_t>(src + 4 * i)));
}
/// i64: exact up to 2^24 in magnitude, rounded to nearest even beyond.
inline void dequant_i64(const std::byte* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t bits = static_cast<std::uint64_t>(load_le<std::uint32_t>(src + 8 * i)) |
                               (static_cast<std::uint64_t>(load_le<std::uint32_t>(src + 8 * i + 4)) << 32);
    dst[i] = static_cast<float>(static_cast<std::int64_t>(bits));
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_PLAIN_DEQUANTIZE_HPP
