#ifndef GGUF_KERNELS_K_QUANTS_DEQUANTIZE_HPP
#define GGUF_KERNELS_K_QUANTS_DEQUANTIZE_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/rounding.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The K-quants: 256-weight super-blocks split into sub-blocks of 16 or 32 weights, each with a small
// integer scale (and min) that is itself scaled by the block's half-precision d (and dmin). Computed as
// ggml's dequantize_row_* computes them: the sub-block scale d * sc is rounded to float first, then
// times the integer weight, then the (separately rounded) min is subtracted. (With a half d and scales
// of at most 8 bits every product is exact in float, so only the last operation rounds; the order is
// kept anyway.)

namespace detail {

struct scale_min {
  std::uint8_t sc, m;
};

/**
 * The 6-bit scale and min of sub-block j (0..7) of q4_K/q5_K, packed in 12 bytes (ggml's
 * get_scale_min_k4): bytes 0-3 hold the scales of j = 0..3 in their low 6 bits, bytes 4-7 their mins;
 * for j = 4..7 the low 4 bits come from the nibbles of bytes 8-11 (scale low, min high) and the top
 * 2 bits from the spare top bits of bytes 0-3 (scales) and 4-7 (mins).
 */
inline scale_min k4(const std::byte* scales, int j) noexcept {
  unsigned sc, m;
  if (j < 4) {
    sc = load_le<std::uint8_t>(scales + j) & 63;
    m = load_le<std::uint8_t>(scales + j + 4) & 63;
  } else {
    const unsigned lo = load_le<std::uint8_t>(scales + j + 4);
    const unsigned sc_hi = load_le<std::uint8_t>(scales + j - 4), m_hi = load_le<std::uint8_t>(scales + j);
    sc = (lo & 0x0Fu) | ((sc_hi >> 6) << 4);
    m = (lo >> 4) | ((m_hi >> 6) << 4);
  }
  return {static_cast<std::uint8_t>(sc), static_cast<std::uint8_t>(m)};
}

/**
 * The 6-bit scale of sub-block j (0..15) of q3_K, packed in 12 bytes: the low 4 bits are the low
 * (j < 8) or high (j >= 8) nibble of byte j % 8, the top 2 bits are bit pair j / 4 of byte 8 + j % 4.
 * Returned already offset by 32, in -32..31 (ggml stores it as int8_t and subtracts 32; the 6-bit
 * value never reaches the int8_t sign bit, so nothing wraps).
 */
inline int q3_scale(const std::byte* scales, int j) noexcept {
  const unsigned b = load_le<std::uint8_t>(scales + (j & 7));
  const unsigned lo = j < 8 ? (b & 0x0F) : (b >> 4);
  const unsigned hi = (load_le<std::uint8_t>(scales + 8 + (j & 3)) >> (2 * (j >> 2))) & 3;
  return static_cast<int>(lo | (hi << 4)) - 32;
}

}  // namespace detail

/// q2_K: 16 sub-blocks of 16 two-bit weights; x = (d * (sc & 15)) * q - dmin * (sc >> 4).
inline void dequant_q2_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q2_K;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const float dmin = half_to_float(load_le<std::uint16_t>(src + offsetof(B, dmin)));
    const std::byte* scales = src + offsetof(B, scales);
    const std::byte* qs = src + offsetof(B, qs);
    int is = 0;
    // Each 32-byte run of qs serves 128 weights: 4 bit pairs (shifts) x 2 halves of 16 bytes, in
    // that order, each half with its own scale byte.
    for (int n = 0; n < 2; ++n, qs += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int half = 0; half < 2; ++half, ++is, dst += 16) {
          const std::uint8_t sc = load_le<std::uint8_t>(scales + is);
          const float dl = d * static_cast<float>(sc & 0x0F);
          const float ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 0; l < 16; ++l) {
            const int q = (load_le<std::uint8_t>(qs + 16 * half + l) >> shift) & 3;
            dst[l] = mul_add(dl, static_cast<float>(q), -ml);  // negating ml is exact: same as dl*q - ml
          }
        }
      }
    }
  }
}

/// q3_K: 16 sub-blocks of 16 three-bit weights (2 low bits in qs, the high bit in hmask, set = +0,
/// clear = -4); x = (d * (scale - 32)) * q with q in -4..3.
inline void dequant_q3_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q3_K;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* scales = src + offsetof(B, scales);
    const std::byte* hmask = src + offsetof(B, hmask);
    const std::byte* qs = src + offsetof(B, qs);
    int is = 0;
    unsigned m = 1;  // hmask bit: one per (n, shift) pair, over all 32 hmask bytes
    // Same walk as q2_K; the high bits of weight l of each 32-weight run sit in hmask[l].
    for (int n = 0; n < 2; ++n, qs += 32) {
      for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
        for (int half = 0; half < 2; ++half, ++is, dst += 16) {
          const float dl = d * static_cast<float>(detail::q3_scale(scales, is));
          for (int l = 0; l < 16; ++l) {
            const int k = 16 * half + l;
            const int q =
                ((load_le<std::uint8_t>(qs + k) >> shift) & 3) - ((load_le<std::uint8_t>(hmask + k) & m) ? 0 : 4);
            dst[l] = dl * static_cast<float>(q);
          }
        }
      }
    }
  }
}

namespace detail {
/**
 * q4_K and q5_K: 8 sub-blocks of 32 weights with 6-bit scales and mins; x = (d * sc) * q - dmin * m.
 * q5_K is q4_K plus a fifth bit per weight in qh (bit 2j for sub-block 2j, bit 2j + 1 for 2j + 1).
 */
template <class B>
inline void dequant_k4_k5(const std::byte* src, float* dst, std::size_t nb) noexcept {
  constexpr bool fifth_bit = std::is_same_v<B, blocks::q5_K>;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const float dmin = half_to_float(load_le<std::uint16_t>(src + offsetof(B, dmin)));
    const std::byte* scales = src + offsetof(B, scales);
    const std::byte* qs = src + offsetof(B, qs);
    // Each 32 bytes of qs give 64 weights: the low nibbles (sub-block 2j), then the high (2j + 1).
    for (int j = 0; j < 4; ++j, qs += 32, dst += 64) {
      const scale_min a = k4(scales, 2 * j);
      const scale_min b = k4(scales, 2 * j + 1);
      const float d1 = d * static_cast<float>(a.sc), m1 = dmin * static_cast<float>(a.m);
      const float d2 = d * static_cast<float>(b.sc), m2 = dmin * static_cast<float>(b.m);
      for (int l = 0; l < 32; ++l) {
        const std::uint8_t q = load_le<std::uint8_t>(qs + l);
        unsigned lo = q & 0x0F, hi = q >> 4;
        if constexpr (fifth_bit) {
          const unsigned h = load_le<std::uint8_t>(src + offsetof(B, qh) + l) >> (2 * j);
          lo |= (h & 1) << 4;
          hi |= (h & 2) << 3;
        }
        dst[l] = mul_add(d1, static_cast<float>(lo), -m1);  // negating m is exact: same as d1*q - m1
        dst[l + 32] = mul_add(d2, static_cast<float>(hi), -m2);
      }
    }
  }
}
}  // namespace detail

/// q4_K: 8 sub-blocks of 32 four-bit weights with 6-bit scales and mins; x = (d * sc) * q - dmin * m.
inline void dequant_q4_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail::dequant_k4_k5<blocks::q4_K>(src, dst, nb);
}

/// q5_K: q4_K with a fifth bit per weight in qh.
inline void dequant_q5_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail::dequant_k4_k5<blocks::q5_K>(src, dst, nb);
}

/// q6_K: 16 sub-blocks of 16 six-bit weights (4 low bits in ql, 2 high in qh) with int8 scales;
/// x = (d * sc) * (q - 32), both products rounded in that order.
inline void dequant_q6_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q6_K;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    const float d = half_to_float(load_le<std::uint16_t>(src + offsetof(B, d)));
    const std::byte* ql = src + offsetof(B, ql);
    const std::byte* qh = src + offsetof(B, qh);
    const std::byte* sc = src + offsetof(B, scales);
    // Each half (128 weights) uses 64 bytes of ql, 32 of qh and 8 scales. Weight l + 32k takes its
    // low nibble from ql[l] (k = 0, 2) or ql[l + 32] (k = 1, 3), low then high, and its top bits
    // from bit pair k of qh[l]; its scale is sc[l / 16 + 2k].
    for (int n = 0; n < 2; ++n, ql += 64, qh += 32, sc += 8, dst += 128) {
      for (int l = 0; l < 32; ++l) {
        const unsigned lo0 = load_le<std::uint8_t>(ql + l), lo1 = load_le<std::uint8_t>(ql + l + 32),
                       h = load_le<std::uint8_t>(qh + l);
        const int q[4] = {
            static_cast<int>((lo0 & 0x0F) | (((h >> 0) & 3) << 4)) - 32,
            static_cast<int>((lo1 & 0x0F) | (((h >> 2) & 3) << 4)) - 32,
            static_cast<int>((lo0 >> 4) | (((h >> 4) & 3) << 4)) - 32,
            static_cast<int>((lo1 >> 4) | (((h >> 6) & 3) << 4)) - 32,
        };
        for (int k = 0; k < 4; ++k) {
          const float dl = d * static_cast<float>(load_le<std::int8_t>(sc + l / 16 + 2 * k));
          dst[l + 32 * k] = dl * static_cast<float>(q[k]);
        }
      }
    }
  }
}

/// q8_K: 256 int8 weights times a float32 d (the bsums are not needed to dequantize).
inline void dequant_q8_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q8_K;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 256) {
    const float d = std::bit_cast<float>(load_le<std::uint32_t>(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    for (int j = 0; j < 256; ++j) dst[j] = d * static_cast<float>(load_le<std::int8_t>(qs + j));
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_K_QUANTS_DEQUANTIZE_HPP
