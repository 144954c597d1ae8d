#ifndef GGUF_KERNELS_SIMD_NIBBLE_DECODER_HPP
#define GGUF_KERNELS_SIMD_NIBBLE_DECODER_HPP

#include <array>
#include <cstddef>
#include <cstdint>

#include "gguf/kernels/derived_tables.hpp"
#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/simd/ops.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd::detail {

// The decoder the 4-bit table types share (iq4_nl, iq4_xs, mxfp4): 16 bytes per 32 weights, byte j
// holding weight j (low nibble) and weight j + 16 (high nibble), each nibble an index into a 16-entry int8
// table; the weight is that level converted to float times a scale, one rounding, as in the scalar
// kernels. nibble_decoder turns 16 bytes and a scale into the 32 floats:
//  - AVX-512: the 16 products scale * float(level) are one vector (one multiply), and each weight is a
//    lane permute of it indexed by its nibble (vpermps reads only an index's low 4 bits, so the low
//    nibble needs no mask): per 16 weights one permute and one store.
//  - AVX2, SSE4.1, NEON: one byte shuffle (pshufb, tbl) of the 16 low and one of the 16 high nibbles
//    gives the int8 levels, widened to int32, converted and multiplied per vector.
//  - SSE2 (no byte shuffle): one 16-bit lookup per byte gives both its levels (a 256-entry table made
//    at compile time), then as above from the int8 levels.
//  - Otherwise: the 16 products in a small array, read by index.
// (The lookups are the ops' `permute`, `nibble_table` and `put_nibbles16`.)

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
  GGUF_SIMD_INLINE void operator()(float scale, const std::byte* qs, Out* dst) const noexcept {
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
  GGUF_SIMD_INLINE void operator()(const float* products, const std::byte* qs, Out* dst) const noexcept {
    if constexpr (lut_bits<A> >= 4) {
      permute32(fbatch<A>::load_unaligned(products), qs, dst, subnormals::possible);
    } else {
      lookup(products, qs, dst);
    }
  }

 private:
  template <class Out>
  GGUF_SIMD_INLINE static void lookup(const float* products, const std::byte* qs, Out* dst) noexcept {
    for (int j = 0; j < 16; ++j) {
      const unsigned q = load_le<std::uint8_t>(qs + j);
      dst[j] = narrow<Out>(products[q & 0x0Fu]);
      dst[j + 16] = narrow<Out>(products[q >> 4]);
    }
  }
  /// Weight j is lane (nibble j) of products; the permute reads only an index's low 4 bits, so the low
  /// nibble needs no mask.
  template <class Out>
  GGUF_SIMD_INLINE static void permute32(const fbatch<A>& products, const std::byte* qs, Out* dst,
                                         subnormals normal) noexcept {
    put_nibbles16<A>(dst, products, qs, normal);
  }

  nibble_table<A> lut_;
  fbatch<A> levels_[16 / L];  ///< float(table[k]), lanes<A> at a time
};

}  // namespace kernels::simd::detail
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_NIBBLE_DECODER_HPP
