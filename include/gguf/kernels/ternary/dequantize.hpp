#ifndef GGUF_KERNELS_TERNARY_DEQUANTIZE_HPP
#define GGUF_KERNELS_TERNARY_DEQUANTIZE_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/format/blocks.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The ternary types of 256 weights: each weight is (t - 1) * d with t in {0, 1, 2} (t = 3 is possible in
// tq2_0's 2-bit fields and gives 2 * d), converted int -> float and multiplied once, as ggml does.

namespace detail {

/**
 * Digit n of a tq1_0 byte. The byte stores its digits as a fixed-point fraction of 3^5 (or 3^4),
 * most significant first: multiplying by 3^n in uint8 arithmetic (the wrap-around drops the digits
 * before n) and then taking (q * 3) >> 8 extracts digit n. Any byte value is valid input; ones a
 * quantizer would never write (>= 243 in qs) still decode the way ggml decodes them, to 0, 1 or 2.
 */
inline int tq1_digit(std::uint8_t byte, std::uint8_t pow3) noexcept {
  const auto q = static_cast<std::uint8_t>(byte * pow3);
  return (q * 3) >> 8;
}

inline constexpr std::uint8_t pow3[5] = {1, 3, 9, 27, 81};

}  // namespace detail

/**
 * tq1_0: qs holds 5 digits a byte, qh 4 digits a byte (qh's 4 * 4 = 16 plus qs's 48 * 5 = 240 = 256).
 * Weights come out in ggml's order: qs[0..32) digit 0, digit 1, ..., digit 4 (32 weights each); then
 * qs[32..48) digits 0..4 (16 each); then qh[0..4) digits 0..3 (4 each).
 */
inline void dequant_tq1_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::tq1_0;
  using detail::pow3;
  using detail::tq1_digit;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* qh = src + offsetof(B, qh);
    // Digits 0..n_digits-1 of the bytes [begin, end), digit-major.
    const auto emit = [&](const std::byte* bytes, int begin, int end, int n_digits) {
      for (int n = 0; n < n_digits; ++n)
        for (int m = begin; m < end; ++m)
          *dst++ = static_cast<float>(tq1_digit(load_le<std::uint8_t>(bytes + m), pow3[n]) - 1) * d;
    };
    emit(qs, 0, 32, 5);
    emit(qs, 32, 48, 5);
    emit(qh, 0, 4, 4);
  }
}

/// tq2_0: 2 bits a weight. Each 32-byte half of qs gives 128 weights: bits 0-1 of its 32 bytes, then
/// bits 2-3, 4-5, 6-7.
inline void dequant_tq2_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::tq2_0;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    for (int j = 0; j < 64; j += 32)
      for (int l = 0; l < 4; ++l)
        for (int m = 0; m < 32; ++m) {
          const int q = (load_le<std::uint8_t>(qs + j + m) >> (2 * l)) & 3;
          *dst++ = static_cast<float>(q - 1) * d;
        }
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_TERNARY_DEQUANTIZE_HPP
