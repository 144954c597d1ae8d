#ifndef GGUF_KERNELS_FP4_DEQUANTIZE_HPP
#define GGUF_KERNELS_FP4_DEQUANTIZE_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/format/blocks.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The 4-bit float types: each nibble is an E2M1 value (sign, 2 exponent bits, 1 mantissa bit) times a
// per-block scale. As in ggml, the nibble is looked up as twice its E2M1 value (an integer) and the scale
// is halved, so every weight is int8 -> float, times the halved scale: one rounding, as ggml's `x*d`.

/// mxfp4: 32 weights, one E8M0 scale; byte j holds weight j (low nibble) and weight j + 16 (high nibble).
inline void dequant_mxfp4(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::mxfp4;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 32) {
    // e = 255 is a plain 2^127 here (ggml does not treat it as NaN).
    const float d = e8m0_to_float_half(load_le<std::uint8_t>(src + offsetof(B, e)));
    const std::byte* qs = src + offsetof(B, qs);
    for (int j = 0; j < 16; ++j) {
      const std::uint8_t q = load_le<std::uint8_t>(qs + j);
      dst[j] = static_cast<float>(tables::kvalues_mxfp4[q & 0x0F]) * d;
      dst[j + 16] = static_cast<float>(tables::kvalues_mxfp4[q >> 4]) * d;
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
      const float d = ue4m3_to_float_half(load_le<std::uint8_t>(src + offsetof(B, d) + s));
      const std::byte* qs = src + offsetof(B, qs) + 8 * s;
      float* y = dst + 16 * s;
      for (int j = 0; j < 8; ++j) {
        const std::uint8_t q = load_le<std::uint8_t>(qs + j);
        y[j] = static_cast<float>(tables::kvalues_mxfp4[q & 0x0F]) * d;
        y[j + 8] = static_cast<float>(tables::kvalues_mxfp4[q >> 4]) * d;
      }
    }
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_FP4_DEQUANTIZE_HPP
