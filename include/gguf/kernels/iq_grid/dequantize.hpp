#ifndef GGUF_KERNELS_IQ_GRID_DEQUANTIZE_HPP
#define GGUF_KERNELS_IQ_GRID_DEQUANTIZE_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/format/blocks.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The IQ ("importance") quantizations. Most store, per group of 8 (or 4) weights, an index into a
// grid of magnitude patterns (iq_tables.hpp) plus a sign byte, under a block scale d and a small
// per-32-weight scale. Each weight is computed as ggml's dequantize_row_* computes it, in the same
// order and with float intermediates, so the results match bit for bit (there is no a*b + c here
// that an FMA could fuse: the sums are all multiplied, not added to a product).

namespace detail {

/// Value j (0..7) of a grid row: byte j of the little-endian word, read by shifting so the host's
/// byte order does not matter.
constexpr std::uint8_t grid_byte(std::uint64_t row, int j) noexcept {
  return static_cast<std::uint8_t>(row >> (8 * j));
}

/// Two 4-value rows of the iq3 grids as one 8-value row (first row in values 0..3).
constexpr std::uint64_t grid_row_pair(std::uint32_t lo, std::uint32_t hi) noexcept {
  return static_cast<std::uint64_t>(lo) | (static_cast<std::uint64_t>(hi) << 32);
}

/// 8 weights of the iq2/iq3 types: db * magnitude, times -1 where bit j of the sign byte is set
/// (ggml multiplies by -1.f rather than negating; that is the same bits).
inline void put_signed8(float* y, float db, std::uint64_t row, std::uint8_t signs) noexcept {
  for (int j = 0; j < 8; ++j) {
    const float s = (signs & tables::kmask_iq2xs[static_cast<std::size_t>(j)]) ? -1.0f : 1.0f;
    y[j] = db * static_cast<float>(grid_byte(row, j)) * s;
  }
}

/// 8 weights of the iq1 types: the grid holds int8 values in {-1, 0, 1}, shifted by +-delta before
/// scaling (the sum is rounded first, then multiplied: dl * (g + delta)).
inline void put_iq1_8(float* y, float dl, std::uint64_t row, float delta) noexcept {
  for (int j = 0; j < 8; ++j) {
    const auto g = static_cast<std::int8_t>(grid_byte(row, j));
    y[j] = dl * (static_cast<float>(g) + delta);
  }
}

/// iq1_m's scales: the four little-endian 16-bit words (four 3-bit sub-scales each in the low 12 bits)
/// and the half-precision block scale spread over their top nibbles, least significant first.
struct iq1m_scales {
  std::uint16_t sc[4];   ///< the words
  std::uint16_t d_bits;  ///< the block scale's half bits

  explicit iq1m_scales(const std::byte* scales) noexcept
      : sc{load_le<std::uint16_t>(scales), load_le<std::uint16_t>(scales + 2), load_le<std::uint16_t>(scales + 4),
           load_le<std::uint16_t>(scales + 6)},
        d_bits(static_cast<std::uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) |
                                          (sc[3] & 0xF000))) {}
};

/// The 4-bit sub-scale of the iq2/iq3_xxs types as a float multiplier: d * (0.5 + s) * k, left to right.
inline float half_step_scale(float d, unsigned s, float k) noexcept { return d * (0.5f + static_cast<float>(s)) * k; }

}  // namespace detail

/// iq2_xxs: 2.06 bpw. Per 32 weights, 8 bytes: four 8-bit grid indices, then a 32-bit word holding four 7-bit sign
/// fields (bits 0..27) and the 4-bit sub-scale (bits 28..31).
inline void dequant_iq2_xxs(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq2_xxs;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    for (int ib = 0; ib < 8; ++ib, qs += 8) {
      const std::uint32_t aux = load_le<std::uint32_t>(qs + 4);
      const float db = detail::half_step_scale(d, aux >> 28, 0.25f);
      for (int l = 0; l < 4; ++l, dst += 8) {
        const std::uint8_t signs = tables::ksigns_iq2xs[(aux >> (7 * l)) & 127];
        detail::put_signed8(dst, db, tables::iq2xxs_grid[load_le<std::uint8_t>(qs + l)], signs);
      }
    }
  }
}

/// iq2_xs: 2.31 bpw. Per 8 weights a 16-bit word: 9-bit grid index, 7-bit sign field. Two 4-bit sub-scales per 32
/// weights, one for each 16.
inline void dequant_iq2_xs(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq2_xs;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* scales = src + offsetof(B, scales);
    for (int ib = 0; ib < 8; ++ib) {
      const std::uint8_t sc = load_le<std::uint8_t>(scales + ib);
      const float db[2] = {detail::half_step_scale(d, sc & 0xFu, 0.25f), detail::half_step_scale(d, sc >> 4u, 0.25f)};
      for (int l = 0; l < 4; ++l, dst += 8) {
        const std::uint16_t q = load_le<std::uint16_t>(qs + 2 * (4 * ib + l));
        detail::put_signed8(dst, db[l / 2], tables::iq2xs_grid[q & 511], tables::ksigns_iq2xs[q >> 9]);
      }
    }
  }
}

/// iq2_s: 2.56 bpw. qs holds 32 low index bytes then 32 sign bytes (all 8 signs stored); qh adds 2 index bits per group
/// (10-bit index); two 4-bit sub-scales per 32 weights.
inline void dequant_iq2_s(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq2_s;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* signs = qs + 32;
    const std::byte* qh = src + offsetof(B, qh);
    const std::byte* scales = src + offsetof(B, scales);
    for (int ib = 0; ib < 8; ++ib) {
      const std::uint8_t sc = load_le<std::uint8_t>(scales + ib);
      const float db[2] = {detail::half_step_scale(d, sc & 0xFu, 0.25f), detail::half_step_scale(d, sc >> 4u, 0.25f)};
      const unsigned h = load_le<std::uint8_t>(qh + ib);
      for (int l = 0; l < 4; ++l, dst += 8) {
        const unsigned idx = load_le<std::uint8_t>(qs + 4 * ib + l) | (((h >> (2 * l)) & 3u) << 8);
        detail::put_signed8(dst, db[l / 2], tables::iq2s_grid[idx], load_le<std::uint8_t>(signs + 4 * ib + l));
      }
    }
  }
}

/// iq3_xxs: 3.06 bpw. qs holds 64 index bytes (one per 4 weights) then, per 32 weights, a 32-bit word of four 7-bit
/// sign fields and the 4-bit sub-scale, as iq2_xxs (but a sub-scale step of 0.5, not 0.25).
inline void dequant_iq3_xxs(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq3_xxs;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* scales_and_signs = qs + 64;
    for (int ib = 0; ib < 8; ++ib) {
      const std::uint32_t aux = load_le<std::uint32_t>(scales_and_signs + 4 * ib);
      const float db = detail::half_step_scale(d, aux >> 28, 0.5f);
      for (int l = 0; l < 4; ++l, dst += 8) {
        const std::byte* q = qs + 8 * ib + 2 * l;
        const std::uint64_t row = detail::grid_row_pair(tables::iq3xxs_grid[load_le<std::uint8_t>(q)],
                                                        tables::iq3xxs_grid[load_le<std::uint8_t>(q + 1)]);
        detail::put_signed8(dst, db, row, tables::ksigns_iq2xs[(aux >> (7 * l)) & 127]);
      }
    }
  }
}

/// iq3_s: 3.44 bpw. Per 32 weights: 8 index bytes (one per 4 weights) with a 9th bit each from qh[ib], 4 sign bytes,
/// and an odd sub-scale 1 + 2*s (4-bit s, two to a byte), multiplied as an int.
inline void dequant_iq3_s(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq3_s;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* qh = src + offsetof(B, qh);
    const std::byte* signs = src + offsetof(B, signs);
    const std::byte* scales = src + offsetof(B, scales);
    for (int ib = 0; ib < 8; ++ib) {
      const unsigned s = (load_le<std::uint8_t>(scales + ib / 2) >> (4 * (ib % 2))) & 0xFu;
      const float db = d * static_cast<float>(1 + 2 * s);
      const unsigned h = load_le<std::uint8_t>(qh + ib);
      for (int l = 0; l < 4; ++l, dst += 8) {
        const std::byte* q = qs + 8 * ib + 2 * l;
        const unsigned idx1 = load_le<std::uint8_t>(q) | (((h >> (2 * l)) & 1u) << 8);
        const unsigned idx2 = load_le<std::uint8_t>(q + 1) | (((h >> (2 * l + 1)) & 1u) << 8);
        const std::uint64_t row = detail::grid_row_pair(tables::iq3s_grid[idx1], tables::iq3s_grid[idx2]);
        detail::put_signed8(dst, db, row, load_le<std::uint8_t>(signs + 4 * ib + l));
      }
    }
  }
}

/// iq1_s: 1.56 bpw. Per 32 weights a 16-bit qh: 3 high index bits per group of 8 (bits 0..11), an odd sub-scale 1 + 2*s
/// (bits 12..14) and the sign of the delta shift (bit 15).
inline void dequant_iq1_s(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq1_s;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* qh = src + offsetof(B, qh);
    for (int ib = 0; ib < 8; ++ib) {
      const unsigned h = load_le<std::uint16_t>(qh + 2 * ib);
      const float dl = d * static_cast<float>(2 * ((h >> 12) & 7u) + 1);
      const float delta = (h & 0x8000u) ? -tables::iq1s_delta : tables::iq1s_delta;
      for (int l = 0; l < 4; ++l, dst += 8) {
        const unsigned idx = load_le<std::uint8_t>(qs + 4 * ib + l) | (((h >> (3 * l)) & 7u) << 8);
        detail::put_iq1_8(dst, dl, tables::iq1s_grid[idx], delta);
      }
    }
  }
}

/// iq1_m: 1.75 bpw. No d field: the half-precision block scale is spread over the top nibbles of the four little-endian
/// 16-bit words of scales, whose low 12 bits hold four 3-bit s each, the odd sub-scales 1 + 2*s of 16 weights. Per
/// group of 8, a qh nibble gives 3 high index bits and the delta sign.
inline void dequant_iq1_m(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::iq1_m;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const detail::iq1m_scales scales(src + offsetof(B, scales));
    const std::uint16_t* sc = scales.sc;
    const float d = half_to_float(scales.d_bits);
    const std::byte* qs = src + offsetof(B, qs);
    const std::byte* qh = src + offsetof(B, qh);
    for (int ib = 0; ib < 8; ++ib) {
      const unsigned w = sc[ib / 2] >> (6 * (ib % 2));
      const float dl[2] = {d * static_cast<float>(2 * (w & 7u) + 1), d * static_cast<float>(2 * ((w >> 3) & 7u) + 1)};
      for (int l = 0; l < 4; ++l, dst += 8) {
        const unsigned h = load_le<std::uint8_t>(qh + 2 * ib + l / 2) >> (4 * (l % 2));  // this group's nibble
        const unsigned idx = load_le<std::uint8_t>(qs + 4 * ib + l) | ((h & 7u) << 8);
        // ggml uses IQ1S_DELTA here, not IQ1M_DELTA (the two are equal).
        const float delta = (h & 8u) ? -tables::iq1s_delta : tables::iq1s_delta;
        detail::put_iq1_8(dst, dl[l / 2], tables::iq1s_grid[idx], delta);
      }
    }
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_IQ_GRID_DEQUANTIZE_HPP
