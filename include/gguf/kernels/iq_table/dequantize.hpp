#ifndef GGUF_KERNELS_IQ_TABLE_DEQUANTIZE_HPP
#define GGUF_KERNELS_IQ_TABLE_DEQUANTIZE_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The IQ table types: 4-bit indices into ggml's 16 non-uniform int8 levels (kvalues_iq4nl), times a
// scale per 32 weights.

/// iq4_nl: 4.5 bpw, 32-weight blocks: nibbles index a fixed non-linear table of int8 levels, times d.
inline void dequant_iq4_nl(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq4_nl;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 32) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    for (int j = 0; j < 16; ++j) {
      const std::uint8_t q = load_le<std::uint8_t>(qs + j);
      dst[j] = d * static_cast<float>(tables::kvalues_iq4nl[q & 0x0F]);
      dst[j + 16] = d * static_cast<float>(tables::kvalues_iq4nl[q >> 4]);
    }
  }
}

/// iq4_xs: 4.25 bpw: iq4_nl's levels in 256-weight blocks, with a 6-bit sub-scale per 32 weights (low 4 bits in
/// scales_l, high 2 in scales_h) offset by -32; d * (ls - 32) is an int product converted once.
inline void dequant_iq4_xs(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq4_xs;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const unsigned scales_h = load_le<std::uint16_t>(src + offsetof(B, scales_h));
    const std::byte* scales_l = src + offsetof(B, scales_l);
    const std::byte* qs = src + offsetof(B, qs);
    for (int ib = 0; ib < 8; ++ib, qs += 16, dst += 32) {
      const unsigned lo = (load_le<std::uint8_t>(scales_l + ib / 2) >> (4 * (ib % 2))) & 0xFu;
      const unsigned hi = (scales_h >> (2 * ib)) & 3u;
      const int ls = static_cast<int>(lo | (hi << 4));
      const float dl = d * static_cast<float>(ls - 32);
      for (int j = 0; j < 16; ++j) {
        const std::uint8_t q = load_le<std::uint8_t>(qs + j);
        dst[j] = dl * static_cast<float>(tables::kvalues_iq4nl[q & 0x0F]);
        dst[j + 16] = dl * static_cast<float>(tables::kvalues_iq4nl[q >> 4]);
      }
    }
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_IQ_TABLE_DEQUANTIZE_HPP
