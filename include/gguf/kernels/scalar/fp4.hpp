#ifndef GGUF_KERNELS_SCALAR_FP4_HPP
#define GGUF_KERNELS_SCALAR_FP4_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/detail/isa.hpp"
#include "gguf/detail/float_formats.hpp"
#include "gguf/kernels/blocks.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The 4-bit float types: each nibble is an E2M1 value (sign, 2 exponent bits, 1 mantissa bit) times a
// per-block scale. As in ggml, the nibble is looked up as twice its E2M1 value (an integer) and the scale
// is halved, so every weight is int8 -> float, times the halved scale: one rounding, as ggml's `x*d`.

/// ggml's kvalues_mxfp4 (kvalues_fp4 in ggml-common.h): E2M1 nibble -> 2 * its value. Bit 3 is the sign,
/// so 0x8 is -0, which the table maps to +0 like ggml.
inline constexpr std::int8_t kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/// mxfp4: 32 weights, one E8M0 scale; byte j holds weight j (low nibble) and weight j + 16 (high nibble).
inline void dequant_mxfp4(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::mxfp4;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 32) {
    // e = 255 is a plain 2^127 here (ggml does not treat it as NaN).
    const float d = detail::e8m0_to_float_half(detail::u8(src + offsetof(B, e)));
    const std::byte* qs = src + offsetof(B, qs);
    for (int j = 0; j < 16; ++j) {
      const std::uint8_t q = detail::u8(qs + j);
      dst[j] = static_cast<float>(kvalues_mxfp4[q & 0x0F]) * d;
      dst[j + 16] = static_cast<float>(kvalues_mxfp4[q >> 4]) * d;
    }
  }
}

/// nvfp4: 64 weights in four sub-blocks of 16, each with its own UE4M3 scale. Within sub-block s, byte
/// 8s + j holds weight j (low nibble) and weight j + 8 (high nibble) of that sub-block.
inline void dequant_nvfp4(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::nvfp4;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 64) {
    for (int s = 0; s < 4; ++s) {
      // UE4M3 0x00 and 0x7F (its NaN) both give a zero scale, so no weight of nvfp4 is ever NaN.
      const float d = detail::ue4m3_to_float_half(detail::u8(src + offsetof(B, d) + s));
      const std::byte* qs = src + offsetof(B, qs) + 8 * s;
      float* y = dst + 16 * s;
      for (int j = 0; j < 8; ++j) {
        const std::uint8_t q = detail::u8(qs + j);
        y[j] = static_cast<float>(kvalues_mxfp4[q & 0x0F]) * d;
        y[j + 8] = static_cast<float>(kvalues_mxfp4[q >> 4]) * d;
      }
    }
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SCALAR_FP4_HPP
