#ifndef GGUF_KERNELS_IQ_GRID_CODE_ROWS_SIMD_HPP
#define GGUF_KERNELS_IQ_GRID_CODE_ROWS_SIMD_HPP

#include <array>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/barriers.hpp"
#include "gguf/kernels/derived_tables.hpp"
#include "gguf/kernels/simd/ops/avx512_grid_lookups.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// The grid types by register permute, on AVX-512 (grid_codes, below). Every byte of a grid is one of at
// most 8 levels (iq2: 8, 25, 43; iq3_xxs: 4 ... 62; iq3_s: 1 ... 15; iq1: -1, 0, 1), so a grid row is
// kept as 4-bit codes (tables::code_rows, iq1_codes), a row of 8 weights in 32 bits and one of 4 in 16
// (the even weights' codes in its low byte: paired order, which makes the codes of 16 weights one
// 64-bit word). Per 16 weights the rows are spread over the lanes by broadcasts and one variable shift
// (each lane's code in its low bits, whatever above it, which the permute ignores; nibble_lanes16,
// paired_nibble_lanes16) and looked up in a table of the levels times the scale, computed as the scalar
// kernel computes each weight (db * float(g), then times -1 for a negative sign; iq1: dl * (float(g) +
// delta)). The table has 16 entries and the second 8 are the first times -1, a sign being bit 3 of the
// index (set by a masked or, or by `make` in the codes of the 4-weight rows): the same bits as ggml's
// even for a NaN.
//
// The integer work of the indices, not the vector work, bounded these kernels when each group computed
// its own. So a block's row indices, sign bits and scales are built first (simd/ops/avx512_grid_lookups.hpp, with
// vector operations), and the weights then read them back with plain loads, built a block ahead
// (each_block_with_lookups), since x86 does not forward a vector store to narrower loads.

namespace detail {

/**
 * body(lookups, block) for each of the nb blocks at src, the lookups (made by make(block, lookups))
 * made one block ahead: they are stored as vectors and read back by scalar loads, which x86 does not
 * forward from a wider store: made just before use, the loads would wait for the stores to reach the
 * cache.
 */
template <class B, class Make, class Body>
GGUF_SIMD_INLINE void each_block_with_lookups(const std::byte* src, std::size_t nb, Make&& make, Body&& body) noexcept {
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
GGUF_SIMD_INLINE fbatch<A> level_lanes(const std::array<std::uint8_t, M>& levels) noexcept {
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
GGUF_SIMD_INLINE fbatch<A> iq1_levels(float delta) noexcept {
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
GGUF_SIMD_INLINE void dequant_codes(const std::byte* src, Out* dst, std::size_t nb, const std::array<Code, N>& codes,
                                    const fbatch<A>& levels, Make&& make) noexcept {
  static_assert(lanes<A> == 16 && lut_bits<A> >= 4, "16-entry tables, a group of 16 weights a batch");
  static_assert(RowWeights == 8 ? sizeof(Code) == 4 : RowWeights == 4 && sizeof(Code) == 2);
  static_assert(Run == 16 || Run == 32);
  // Entries 8-15 of a table are entries 0-7 negated: (-g) * db is -(db * g) bit for bit, even for a NaN
  // or an infinite db (which a product by -1 keeps), so the levels carry the signs.
  constexpr bool by_words = uses_word_table<A, Out> && Run == 32;
  // bf16 of a table per 16 weights: two runs stored together, which rounds them with one instruction
  // (put_pair). Floats and f16 are faster a run at a time.
  constexpr bool paired = !by_words && Run == 16 && std::is_same_v<Out, bf16>;
  constexpr std::size_t step = Run == 32 || paired ? 2 : 1;  // runs a turn
  alignas(64) float t[16];
  levels.store_aligned(t);
  if constexpr (Signed) {
    for (std::size_t k = 8; k < 16; ++k) t[k] = -t[k];
  }
  const fbatch<A> signed_levels = fbatch<A>::load_aligned(t);
  // The 16 weights k (0-15) of a block looked up in `table`.
  const auto lookup = [&](const grid_lookups& b, std::size_t k, const fbatch<A>& table) GGUF_SIMD_INLINE_LAMBDA {
    ibatch<A> idx;
    if constexpr (RowWeights == 8) {
      idx = nibble_lanes16<A>(codes[b.row[2 * k]], codes[b.row[2 * k + 1]]);
      // A negative weight's index has bit 3 set (the 4-weight rows' codes have it from `make`).
      if constexpr (Signed) idx = mark_lanes<A>(idx, b.signs + k, 8);
    } else {
      idx = paired_nibble_lanes16<A>(load_le<std::uint64_t>(reinterpret_cast<const std::byte*>(b.code + 4 * k)));
    }
    return permute<A>(table, idx);
  };
  each_block_with_lookups<B>(src, nb, make, [&](const grid_lookups& b, const std::byte*) GGUF_SIMD_INLINE_LAMBDA {
    unroll<16 / step>([&](auto turn) GGUF_SIMD_INLINE_LAMBDA {  // unrolled at -O2 too
      constexpr std::size_t k0 = turn * step;
      // db * float(g), as the scalar kernel computes it
      const fbatch<A> table = signed_levels * fbatch<A>(b.scale[Run == 32 ? k0 / 2 : k0]);
      if constexpr (by_words) {
        // Half outputs of a table for 32 weights: the table rounded once, the 32 weights' codes put in
        // word lanes and looked up by a word permute, no conversion per weight. (For a table of 16
        // weights, rounding it costs what rounding the weights does.)
        const word_table words = table_words<A, Out>(table, no_subnormals);
        if constexpr (RowWeights == 4) {
          put_paired_codes32<A>(dst, words, reinterpret_cast<const std::byte*>(b.code + 4 * k0));
        } else {
          const std::uint16_t* r = b.row + 2 * k0;
          put_row_codes32<A, Signed>(
              dst, words, codes[r[0]], codes[r[1]], codes[r[2]], codes[r[3]],
              Signed ? load_le<std::uint32_t>(reinterpret_cast<const std::byte*>(b.signs + k0)) : 0);
        }
      } else if constexpr (paired) {
        put_pair<A>(dst, lookup(b, k0, table), lookup(b, k0 + 1, signed_levels * fbatch<A>(b.scale[k0 + 1])),
                    no_subnormals);
      } else {
        for (std::size_t k = 0; k < step; ++k) put<A>(dst + 16 * k, lookup(b, k0 + k, table));
      }
      dst += 16 * step;
    });
  });
}

}  // namespace detail

/**
 * Where the grid types run by code rows (tables::code_rows): AVX-512, whose 16-entry permute carries the
 * signs. On AVX2 (8 entries, the signs flipped after the permute, the lookups made by scalar code) the
 * grid-row kernels of iq_grid/dequantize_simd.hpp are faster.
 */
template <class A>
inline constexpr bool grid_codes = lut_bits<A> >= 4;

/// iq2_xxs by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq2_xxs_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq2_xxs, 8, 32, true>(
      src, dst, nb, tables::iq2xxs_codes, detail::level_lanes<A>(tables::iq2_levels), detail::iq2xxs_lookups);
}

/// iq2_xs by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq2_xs_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq2_xs, 8, 16, true>(
      src, dst, nb, tables::iq2xs_codes, detail::level_lanes<A>(tables::iq2_levels), detail::iq2xs_lookups);
}

/// iq2_s by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq2_s_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq2_s, 8, 16, true>(
      src, dst, nb, tables::iq2s_codes, detail::level_lanes<A>(tables::iq2_levels), detail::iq2s_lookups);
}

/// iq3_xxs by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq3_xxs_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq3_xxs, 4, 32, true>(
      src, dst, nb, tables::iq3xxs_codes, detail::level_lanes<A>(tables::iq3xxs_levels), detail::iq3xxs_lookups);
}

/// iq3_s by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq3_s_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq3_s, 4, 32, true>(
      src, dst, nb, tables::iq3s_codes, detail::level_lanes<A>(tables::iq3s_levels), detail::iq3s_lookups);
}

/// iq1_s by code rows (grid_codes<A>).
template <class A, class Out>
void dequant_iq1_s_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq1_s, 8, 32, false>(
      src, dst, nb, tables::iq1_codes, detail::iq1_levels<A>(tables::iq1s_delta), detail::iq1s_lookups);
}

/// iq1_m by code rows (grid_codes<A>); ggml uses IQ1S_DELTA here too (equal to IQ1M_DELTA).
template <class A, class Out>
void dequant_iq1_m_codes(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  detail::dequant_codes<A, blocks::iq1_m, 8, 16, false>(
      src, dst, nb, tables::iq1_codes, detail::iq1_levels<A>(tables::iq1s_delta), detail::iq1m_lookups);
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_IQ_GRID_CODE_ROWS_SIMD_HPP
