#ifndef GGUF_KERNELS_IQ_TABLE_DEQUANTIZE_SIMD_HPP
#define GGUF_KERNELS_IQ_TABLE_DEQUANTIZE_SIMD_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/derived_tables.hpp"
#include "gguf/kernels/simd/nibble_decoder.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the IQ table types (iq_table/dequantize.hpp): iq4_nl and iq4_xs, each nibble an index
// into ggml's kvalues_iq4nl times a scale computed per 32 weights in scalar code exactly as the scalar
// kernel computes it, decoded by simd/nibble_decoder.hpp.

/// iq4_nl: 32 weights, d * level(nibble).
template <class A, class Out = float>
void dequant_iq4_nl(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq4_nl;
  const detail::nibble_decoder<A> decode(tables::kvalues_iq4nl, tables::iq4nl_pairs);
  std::size_t i = 0;
  for (; i + 2 <= nb; i += 2, src += 2 * sizeof(B), dst += 64) {  // two blocks a turn: half the loop overhead
    const float d0 = half_scale(src + offsetof(B, d)), d1 = half_scale(src + sizeof(B) + offsetof(B, d));
    decode(d0, src + offsetof(B, qs), dst);
    decode(d1, src + sizeof(B) + offsetof(B, qs), dst + 32);
  }
  if (i < nb) decode(half_scale(src + offsetof(B, d)), src + offsetof(B, qs), dst);
}

/// iq4_xs: 256 weights; per 32, the scale d * (ls - 32) with the 6-bit ls from scales_l and scales_h.
template <class A, class Out = float>
void dequant_iq4_xs(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::iq4_xs;
  const detail::nibble_decoder<A> decode(tables::kvalues_iq4nl, tables::iq4nl_pairs);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += blocks::qk_k) {
    const float d = half_scale(src + offsetof(B, d));
    const unsigned scales_h = load_le<std::uint16_t>(src + offsetof(B, scales_h));
    const std::uint32_t scales_l = load_le<std::uint32_t>(src + offsetof(B, scales_l));  // nibble ib = low bits of ls
    const std::byte* qs = src + offsetof(B, qs);
    for (unsigned ib = 0; ib < 8; ++ib) {
      const int ls = static_cast<int>(((scales_l >> (4 * ib)) & 0xFu) | (((scales_h >> (2 * ib)) & 3u) << 4));
      decode(d * static_cast<float>(ls - 32), qs + 16 * ib, dst + 32 * ib);
    }
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_IQ_TABLE_DEQUANTIZE_SIMD_HPP
