#ifndef GGUF_KERNELS_SIMD_NONLINEAR_HPP
#define GGUF_KERNELS_SIMD_NONLINEAR_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/derived_tables.hpp"
#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the 4-bit table types: iq4_nl, iq4_xs (scalar/iq_quants.hpp), mxfp4 and nvfp4
// (scalar/fp4.hpp). The first three store 16 bytes per 32 weights, byte j holding weight j (low nibble)
// and weight j + 16 (high nibble), each nibble an index into a 16-entry int8 table; the weight is that
// level converted to float times a scale computed per 32 weights, in scalar code exactly as the scalar
// kernel computes it. One helper, nibble_decoder, turns 16 bytes and a scale into the 32 floats:
//  - AVX-512: the 16 products scale * float(level) are one vector (one multiply), and each weight is a
//    lane permute of it indexed by its nibble (vpermps reads only an index's low 4 bits, so the low
//    nibble needs no mask): per 16 weights one permute and one store.
//  - AVX2, SSE4.1, NEON: one byte shuffle (pshufb, tbl) of the 16 low and one of the 16 high nibbles
//    gives the int8 levels, widened to int32, converted and multiplied per vector.
//  - SSE2 (no byte shuffle): one 16-bit lookup per byte gives both its levels (a 256-entry table made
//    at compile time), then as above from the int8 levels.
//  - Otherwise: the 16 products in a small array, read by index.
// (The lookups are ops.hpp's `permute` and `nibble_table`.)
// Every weight is scale * float(level) (or float(level) * scale: the same product), one rounding, as in
// the scalar kernels. mxfp4's two subnormal scales use products computed at compile time
// (tables::mxfp4_tiny).
// nvfp4 has mxfp4's nibbles and table in groups of 16 weights, byte j of a group holding weights j and
// j + 8, each group with its own UE4M3 scale (read from a 256-entry table of the halved scales rather
// than converted, which branches; no scale makes a product subnormal). AVX-512: a group is one permute of
// its 16 products, indexed by its 8 bytes then their high nibbles (ops.hpp's nibble_indices). Elsewhere
// 16 bytes are two groups for nibble_table: the low nibbles' levels of bytes 0-7 are weights 0-7 of the
// first group, of bytes 8-15 weights 0-7 of the second; the high nibbles' are weights 8-15 of each.

namespace detail {

template <class A>
class nibble_decoder {
  static constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0);
  /// The nibbles' int8 levels come out of a table lookup 16 at a time (shuffle, or SSE2's pairs).
  static constexpr bool table_lookup = byte_shuffle<A> || is_sse2_only<A>;

 public:
  /// `pairs` = tables::make_nibble_pairs(table).
  nibble_decoder(const std::array<std::int8_t, 16>& table, const tables::nibble_pairs& pairs) noexcept
      : lut_(table.data(), pairs.data()) {
    alignas(64) std::int32_t wide[16];
    for (std::size_t k = 0; k < 16; ++k) wide[k] = table[k];
    for (std::size_t k = 0; k < 16; k += L) levels_[k / L] = to_float<A>(ibatch<A>::load_aligned(wide + k));
  }

  /// dst[j] = scale * table[qs[j] & 15], dst[j + 16] = scale * table[qs[j] >> 4], j < 16, for a scale
  /// whose products are never subnormal (an f16 one, or mxfp4's from 2^-126 up; see no_subnormals).
  template <class Out>
  void operator()(float scale, const std::byte* qs, Out* dst) const noexcept {
    const fbatch<A> d(scale);
    if constexpr (lut_bits<A> >= 4) {
      permute32(levels_[0] * d, qs, dst, no_subnormals);
    } else if constexpr (table_lookup) {
      ibatch<A> lo[16 / L], hi[16 / L];
      lut_.lookup(qs, lo, hi);
      for (std::size_t k = 0; k < 16 / L; ++k) {
        put<A>(dst + k * L, (to_float<A>(lo[k]) * d));
        put<A>(dst + 16 + k * L, (to_float<A>(hi[k]) * d));
      }
    } else {
      alignas(64) float products[16];
      for (std::size_t k = 0; k < 16; k += L) (levels_[k / L] * d).store_aligned(products + k);
      lookup(products, qs, dst);
    }
  }

  /// dst[j] = products[qs[j] & 15], dst[j + 16] = products[qs[j] >> 4], j < 16: for products computed
  /// beforehand (the rare scales whose products are subnormal, which are slow to compute on some CPUs).
  template <class Out>
  void operator()(const float* products, const std::byte* qs, Out* dst) const noexcept {
    if constexpr (lut_bits<A> >= 4) {
      permute32(fbatch<A>::load_unaligned(products), qs, dst, false);
    } else {
      lookup(products, qs, dst);
    }
  }

 private:
  template <class Out>
  static void lookup(const float* products, const std::byte* qs, Out* dst) noexcept {
    for (int j = 0; j < 16; ++j) {
      const unsigned q = load_le<std::uint8_t>(qs + j);
      dst[j] = narrow<Out>(products[q & 0x0Fu]);
      dst[j + 16] = narrow<Out>(products[q >> 4]);
    }
  }
  /// Weight j is lane (nibble j) of products; the permute reads only an index's low 4 bits, so the low
  /// nibble needs no mask.
  template <class Out>
  static void permute32(const fbatch<A>& products, const std::byte* qs, Out* dst, bool normal) noexcept {
    put_nibbles16<A>(dst, products, qs, normal);
  }

  nibble_table<A> lut_;
  fbatch<A> levels_[16 / L];  ///< float(table[k]), lanes<A> at a time
};

template <class A, class Out>
GGUF_SIMD_INLINE void mxfp4_block(const nibble_decoder<A>& decode, const std::byte* src, Out* dst) noexcept {
  using B = blocks::mxfp4;
  const std::uint8_t e = load_le<std::uint8_t>(src + offsetof(B, e));
  if (e < 2) [[unlikely]] {  // subnormal halved scales: products made at compile time (tables::mxfp4_tiny)
    decode(tables::mxfp4_tiny.v[e], src + offsetof(B, qs), dst);
  } else {
    decode(e8m0_to_float_half(e), src + offsetof(B, qs), dst);
  }
}

}  // namespace detail

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

/// mxfp4: 32 weights, float(E2M1 level, doubled) * the halved E8M0 scale.
template <class A, class Out = float>
void dequant_mxfp4(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::mxfp4;
  const detail::nibble_decoder<A> decode(tables::kvalues_mxfp4, tables::mxfp4_pairs);
  std::size_t i = 0;
  for (; i + 2 <= nb; i += 2, src += 2 * sizeof(B), dst += 64) {
    detail::mxfp4_block<A>(decode, src, dst);
    detail::mxfp4_block<A>(decode, src + sizeof(B), dst + 32);
  }
  if (i < nb) detail::mxfp4_block<A>(decode, src, dst);
}

namespace detail {

/// ue4m3_to_float_half of every byte: nvfp4's scales by lookup.
inline constexpr std::array<float, 256> ue4m3_halves = [] {
  std::array<float, 256> t{};
  for (std::size_t x = 0; x < 256; ++x) t[x] = ue4m3_to_float_half(static_cast<std::uint8_t>(x));
  return t;
}();

}  // namespace detail

/// nvfp4: 64 weights in four groups of 16, float(E2M1 level, doubled) * the group's halved UE4M3 scale.
template <class A, class Out = float>
void dequant_nvfp4(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::nvfp4;
  constexpr std::size_t L = lanes<A>;
  const auto scale = [&src](std::size_t s) GGUF_SIMD_INLINE_LAMBDA {  // the scale of group s of the block at src
    return detail::ue4m3_halves[load_le<std::uint8_t>(src + offsetof(B, d) + s)];
  };
  if constexpr (lut_bits<A> >= 4) {
    alignas(64) std::int32_t wide[16];
    for (std::size_t k = 0; k < 16; ++k) wide[k] = tables::kvalues_mxfp4[k];
    const fbatch<A> levels = to_float<A>(ibatch<A>::load_aligned(wide));
    for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 64) {
      for (std::size_t h = 0; h < 2; ++h) {  // groups 2h and 2h + 1
        ibatch<A> a, b;
        nibble_indices<A>(src + offsetof(B, qs) + 16 * h, a, b);
        put_pair<A>(dst + 32 * h, permute<A>(levels * fbatch<A>(scale(2 * h)), a),
                    permute<A>(levels * fbatch<A>(scale(2 * h + 1)), b), no_subnormals);
      }
    }
  } else {
    const nibble_table<A> lut(tables::kvalues_mxfp4.data(), tables::mxfp4_pairs.data());
    for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 64) {
      for (std::size_t h = 0; h < 2; ++h) {
        ibatch<A> lo[16 / L], hi[16 / L];
        lut.lookup(src + offsetof(B, qs) + 16 * h, lo, hi);
        for (std::size_t k = 0; k < 16 / L; ++k) {
          const std::size_t s = 2 * h + k * L / 8, j = k * L % 8;  // batch k: group s, weights j ..
          const fbatch<A> d(scale(s));
          put<A>(dst + 16 * s + j, (to_float<A>(lo[k]) * d));
          put<A>(dst + 16 * s + 8 + j, (to_float<A>(hi[k]) * d));
        }
      }
    }
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_NONLINEAR_HPP
