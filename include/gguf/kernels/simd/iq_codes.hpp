#ifndef GGUF_KERNELS_SIMD_IQ_CODES_HPP
#define GGUF_KERNELS_SIMD_IQ_CODES_HPP

#include <array>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/barriers.hpp"
#include "gguf/kernels/derived_tables.hpp"
#include "gguf/kernels/simd/grid_lookups.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// The grid types by register permute, where there is one (AVX2, AVX-512: lut_bits<A> >= 3). Every byte
// of a grid is one of at most 8 levels (iq2: 8, 25, 43; iq3_xxs: 4 ... 62; iq3_s: 1 ... 15; iq1: -1, 0,
// 1), so a grid row is kept as 4-bit codes (tables::code_rows, iq1_codes), a row of 8 weights in 32 bits
// and one of 4 in 16. Per 16 weights the rows are spread over the lanes by one variable shift (each
// lane's code in its low bits, whatever above it, which the permute ignores) and looked up in a table
// of the levels times the scale, computed as the scalar kernel computes each weight (db * float(g), then
// times -1 for a negative sign; iq1: dl * (float(g) + delta)). On AVX-512 the table has 16 entries and
// the second 8 are the first times -1, a sign being bit 3 of the index (set by a masked or): the same
// bits as ggml's even for a NaN; on AVX2 (8 entries) a sign flips the sign bit afterwards.
//
// The integer work of the indices, not the vector work, bounded these kernels when each group computed
// its own. So a block's row indices, sign bits and scales are built first (grid_lookups.hpp: vector
// operations on AVX-512, scalar code elsewhere), and the weights then read them back with plain loads;
// built a block ahead (lookups_ahead), since x86 does not forward a vector store to narrower loads.

namespace detail {

/**
 * body(lookups, block) for each of the nb blocks at src, the lookups (made by make(block, lookups))
 * made one block ahead: they are stored as vectors and read back by scalar loads, which x86 does not
 * forward from a wider store (on Zen 4 the loads wait for the stores to reach the cache: made just
 * before use, the iq1 kernels ran at 2/3 of the speed they run at made ahead).
 */
template <class B, class Make, class Body>
inline void lookups_ahead(const std::byte* src, std::size_t nb, Make&& make, Body&& body) noexcept {
  if (nb == 0) return;
  grid_lookups ahead[2];
  make(src, ahead[0]);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B)) {
    if (i + 1 < nb) make(src + sizeof(B), ahead[(i + 1) % 2]);
    in_memory(ahead);  // read back by loads: extracting each from its register costs more
    body(ahead[i % 2], src);
  }
}

/// Lane k: float(levels[k % 8]) (0 past the levels): the levels of a code table, unscaled.
template <class A, std::size_t M>
inline fbatch<A> level_lanes(const std::array<std::uint8_t, M>& levels) noexcept {
  alignas(64) float t[lanes<A>];
  for (std::size_t k = 0; k < lanes<A>; ++k) t[k] = k % 8 < M ? static_cast<float>(levels[k % 8]) : 0.0f;
  return fbatch<A>::load_aligned(t);
}

/**
 * The iq1 weights before scaling: lane k (repeating every 8) is float(g) + (s ? -delta : delta) for the
 * code k = (g + 1) | 4 s of tables::iq1_codes, the very sums the scalar kernel rounds before it
 * multiplies by dl.
 */
template <class A>
inline fbatch<A> iq1_levels(float delta) noexcept {
  alignas(64) float t[lanes<A>];
  for (std::size_t k = 0; k < lanes<A>; ++k) {
    const float g = static_cast<float>(static_cast<int>(k % 4) - 1);
    t[k] = k % 4 == 3 ? 0.0f : g + ((k / 4) % 2 != 0 ? -delta : delta);
  }
  return fbatch<A>::load_aligned(t);
}

/**
 * The weights of a grid type from its code rows: per block the lookups (`make`), then per 16 weights
 * their rows of `codes` (RowWeights 8: std::uint32_t rows, looked up here; 4: std::uint16_t rows, which
 * `make` looked up) looked up in `levels` times the scale (one per Run weights: 16 or 32), negated
 * where Signed and the weight's sign bit is set.
 */
template <class A, class B, std::size_t RowWeights, std::size_t Run, bool Signed, class Out, class Code, std::size_t N,
          class Make>
inline void dequant_codes(const std::byte* src, Out* dst, std::size_t nb, const std::array<Code, N>& codes,
                          const fbatch<A>& levels, Make&& make) noexcept {
  constexpr std::size_t L = lanes<A>;
  static_assert(lut_bits<A> >= 3 && (RowWeights == 8 ? sizeof(Code) == 4 : RowWeights == 4 && sizeof(Code) == 2));
  static_assert(Run == 16 || Run == 32);
  // Entries 8-15 of an AVX-512 table are entries 0-7 negated: (-g) * db is -(db * g) bit for bit, even
  // for a NaN or an infinite db (which a product by -1 keeps), so the levels carry the signs.
  constexpr bool signed_table = Signed && lut_bits<A> >= 4;
  constexpr bool by_words = word_lookups<A, Out> && Run == 32;
  alignas(64) float t[L];
  levels.store_aligned(t);
  if constexpr (signed_table) {
    for (std::size_t k = 8; k < L; ++k) t[k] = -t[k];
  }
  const fbatch<A> signed_levels = fbatch<A>::load_aligned(t);
  lookups_ahead<B>(src, nb, make, [&](const grid_lookups& b, const std::byte*) {
    for (std::size_t k0 = 0; k0 < 16; k0 += Run / 16) {
      const fbatch<A> table = signed_levels * fbatch<A>(b.scale[k0]);  // db * float(g), as the scalar kernel
      // Half outputs round a table used for 32 weights once and look the words up (put_words16); for
      // 16 weights the narrowing and word permute cost more than the conversion they save.
      word_table words{};
      if constexpr (by_words) words = table_words<A, Out>(table);
      for (std::size_t k = k0; k < k0 + Run / 16; ++k, dst += 16) {
        ibatch<A> v[16 / L];
        if constexpr (RowWeights == 8) {
          nibble_lanes16<A>(codes[b.row[2 * k]], codes[b.row[2 * k + 1]], v);
        } else {
          nibble_lanes16<A>(load_le<std::uint32_t>(reinterpret_cast<const std::byte*>(b.code + 4 * k)),
                            load_le<std::uint32_t>(reinterpret_cast<const std::byte*>(b.code + 4 * k + 2)), v);
        }
        for (std::size_t m = 0; m < 16 / L; ++m) {
          const unsigned signs = static_cast<unsigned>(b.signs[k]) >> (m * L);
          // On AVX-512 the signed tables need bit 3 of the index set for a negative weight; the
          // 4-weight rows have it already (`make` put the signs in the codes).
          const ibatch<A> idx = signed_table && RowWeights == 8 ? mark_lanes<A>(v[m], signs, 8) : v[m];
          if constexpr (by_words) {
            put_words16<A>(dst + m * L, words, idx);
          } else if constexpr (signed_table) {
            put<A>(dst + m * L, permute<A>(table, idx));
          } else if constexpr (Signed) {
            put<A>(dst + m * L, flip_signs<A>(permute<A>(table, v[m]), signs));
          } else {
            put<A>(dst + m * L, permute<A>(table, v[m]));
          }
        }
      }
    }
  });
}

}  // namespace detail

/// Where the grid types run by code rows (tables::code_rows): a register permute of 8 entries or more.
template <class A>
inline constexpr bool grid_codes = lut_bits<A> >= 3;

/// iq2_xs by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq2_xs_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq2_xs, 8, 16, true>(
      src, dst, nb, tables::iq2xs_codes, detail::level_lanes<A>(tables::iq2_levels), detail::iq2xs_lookups<A>);
}

/// iq2_s by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq2_s_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq2_s, 8, 16, true>(
      src, dst, nb, tables::iq2s_codes, detail::level_lanes<A>(tables::iq2_levels), detail::iq2s_lookups<A>);
}

/// iq3_xxs by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq3_xxs_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq3_xxs, 4, 32, true>(
      src, dst, nb, tables::iq3xxs_codes, detail::level_lanes<A>(tables::iq3xxs_levels), detail::iq3xxs_lookups<A>);
}

/// iq3_s by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq3_s_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq3_s, 4, 32, true>(
      src, dst, nb, tables::iq3s_codes, detail::level_lanes<A>(tables::iq3s_levels), detail::iq3s_lookups<A>);
}

/// iq1_s by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq1_s_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq1_s, 8, 32, false>(
      src, dst, nb, tables::iq1_codes, detail::iq1_levels<A>(tables::iq1s_delta), detail::iq1s_lookups<A>);
}

/// iq1_m by code rows (grid_codes<A>); ggml uses IQ1S_DELTA here too (equal to IQ1M_DELTA).
template <class A, class Out>
void dequant_iq1_m_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq1_m, 8, 16, false>(
      src, dst, nb, tables::iq1_codes, detail::iq1_levels<A>(tables::iq1s_delta), detail::iq1m_lookups<A>);
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_IQ_CODES_HPP
