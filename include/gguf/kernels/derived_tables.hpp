#ifndef GGUF_KERNELS_DERIVED_TABLES_HPP
#define GGUF_KERNELS_DERIVED_TABLES_HPP

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "gguf/kernels/tables.hpp"
#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace tables {

// Tables the SIMD kernels compute at compile time from ggml's (tables.hpp): data, defined once, outside
// the per-instruction-set kernel namespaces.

/// Per byte value q, the levels of both its nibbles as a little-endian 16-bit word: table[q & 15] in the
/// low byte, table[q >> 4] in the high byte (the one lookup per byte of the SSE2 nibble path).
using nibble_pairs = std::array<std::uint16_t, 256>;

/** nibble_pairs of a 16-entry table. */
constexpr nibble_pairs make_nibble_pairs(const std::array<std::int8_t, 16>& table) noexcept {
  nibble_pairs p{};
  for (unsigned q = 0; q < 256; ++q) {
    p[q] = static_cast<std::uint16_t>(static_cast<std::uint8_t>(table[q & 15]) |
                                      (static_cast<unsigned>(static_cast<std::uint8_t>(table[q >> 4])) << 8));
  }
  return p;
}

/// make_nibble_pairs(kvalues_iq4nl)
inline constexpr nibble_pairs iq4nl_pairs = make_nibble_pairs(kvalues_iq4nl);
/// make_nibble_pairs(kvalues_mxfp4)
inline constexpr nibble_pairs mxfp4_pairs = make_nibble_pairs(kvalues_mxfp4);

/**
 * mxfp4's products float(level) * scale for the E8M0 bytes 0 and 1, whose halved scales 2^-128 and
 * 2^-127 are float subnormals (ggml writes e = 0 for every all-zero block): computed here at compile
 * time, because multiplying by a subnormal at run time is slow on some x86 CPUs. Every such product
 * is exact (a small integer times a power of two no smaller than the least subnormal), so it has the
 * same bits however it is computed.
 */
struct mxfp4_tiny_products {
  alignas(64) float v[2][16];  ///< v[e][k] = kvalues_mxfp4[k] * 2^(e - 128)
};
/// The products for e = 0 and e = 1.
inline constexpr mxfp4_tiny_products mxfp4_tiny = [] {
  mxfp4_tiny_products t{};
  for (unsigned e = 0; e < 2; ++e) {
    const float scale = std::bit_cast<float>(0x00200000u << e);  // 2^-128, 2^-127: e8m0_to_float_half(e)
    for (int k = 0; k < 16; ++k) t.v[e][k] = static_cast<float>(kvalues_mxfp4[static_cast<std::size_t>(k)]) * scale;
  }
  return t;
}();

/**
 * Grid rows as floats, `W` per row (8 for the iq2 grids, 4 for iq3's): what the SIMD kernels of the
 * grid types multiply straight from memory. Every byte is a small integer, so float(byte) is exact and
 * these are the very values ggml's dequantizers convert each time.
 */
template <std::size_t N, std::size_t W>
struct float_rows {
  alignas(64) float v[N * W];  ///< v[row * W + j]: value j of the row (one flat array: a row is reached
                               ///< by a scaled offset from v, which stays inside it)
};

/**
 * The rows of a grid whose rows are little-endian words of unsigned bytes (8 per std::uint64_t row for
 * the iq2 grids, 4 per std::uint32_t row for iq3's): byte j of the word is value j.
 */
template <class Word, std::size_t N>
constexpr float_rows<N, sizeof(Word)> widen_rows(const std::array<Word, N>& grid) noexcept {
  constexpr std::size_t W = sizeof(Word);
  float_rows<N, W> r{};
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = 0; j < W; ++j) r.v[i * W + j] = static_cast<float>((grid[i] >> (8 * j)) & 0xFFu);
  }
  return r;
}

/// iq2xxs_grid as floats (8 KiB)
inline constexpr float_rows<256, 8> iq2xxs_rows = widen_rows(iq2xxs_grid);
/// iq2xs_grid as floats (16 KiB)
inline constexpr float_rows<512, 8> iq2xs_rows = widen_rows(iq2xs_grid);
/// iq3xxs_grid as floats (4 KiB)
inline constexpr float_rows<256, 4> iq3xxs_rows = widen_rows(iq3xxs_grid);

/**
 * Per 7-bit sign field f of iq2_xxs, iq2_xs and iq3_xxs, the 8 factors ggml multiplies by: -1.0f where
 * bit j of ksigns_iq2xs[f] (the field, its 8th sign restoring even parity) is set, else 1.0f (4 KiB).
 * Multiplying by them, rather than flipping sign bits, keeps even a NaN's bits as ggml's.
 */
inline constexpr float_rows<128, 8> sign7_rows = [] {
  float_rows<128, 8> r{};
  for (std::size_t f = 0; f < 128; ++f) {
    for (unsigned j = 0; j < 8; ++j) r.v[f * 8 + j] = ((ksigns_iq2xs[f] >> j) & 1u) != 0 ? -1.0f : 1.0f;
  }
  return r;
}();

/**
 * The nibble that holds weight j's code in a code row of n weights: for n = 4 the even weights' codes
 * in the low byte, the odd weights' in the high byte ("paired order"), so the low bytes of 4 rows and
 * then their high bytes are a 64-bit word whose low half holds the even weights of 16 and whose high
 * half the odd ones, which a broadcast and one 64-bit variable shift spread over 16 lanes in order (lane
 * 2k: nibble k of the low half, lane 2k + 1: nibble k of the high half). Rows of 8 keep weight j in
 * nibble j: each is a half of 16 weights already.
 */
constexpr unsigned paired_nibble(unsigned j, unsigned n) noexcept { return n == 4 ? j % 2 * 2 + j / 2 : j; }

/**
 * iq1s_grid as 4-bit codes (the iq1 kernels that look weights up with a register permute): row
 * r + 2048 s holds in nibble j the code (g + 1) | 4 s of the grid's value g in {-1, 0, 1} at byte j of
 * row r, s the sign of the delta (1: -delta), so an index with the delta's sign above its 11 bits
 * finds the whole lookup index of each of the row's 8 weights (16 KiB, as many bytes as the grid).
 */
inline constexpr std::array<std::uint32_t, 4096> iq1_codes = [] {
  std::array<std::uint32_t, 4096> c{};
  for (std::size_t r = 0; r < 4096; ++r) {
    for (unsigned j = 0; j < 8; ++j) {
      const auto g = static_cast<std::int8_t>(iq1s_grid[r % 2048] >> (8 * j));
      c[r] |= (static_cast<std::uint32_t>(g + 1) | static_cast<std::uint32_t>(r / 2048) << 2) << (4 * j);
    }
  }
  return c;
}();

/**
 * A grid's rows as 4-bit codes, for the kernels that look weights up with a register permute: nibble
 * paired_nibble(j, n) of row r is the position in `levels` of the grid's byte j of row r (n = 8 bytes of
 * a std::uint64_t row make a std::uint32_t code row, 4 of a std::uint32_t a std::uint16_t in paired
 * order). A byte missing from `levels` stops the compilation (an index past the end in a constant
 * expression).
 */
template <class Code, class Word, std::size_t N, std::size_t M>
constexpr std::array<Code, N> code_rows(const std::array<Word, N>& grid,
                                        const std::array<std::uint8_t, M>& levels) noexcept {
  static_assert(2 * sizeof(Code) == sizeof(Word) && M <= 8);
  std::array<Code, N> c{};
  for (std::size_t r = 0; r < N; ++r) {
    for (unsigned j = 0; j < sizeof(Word); ++j) {
      const auto b = static_cast<std::uint8_t>(grid[r] >> (8 * j));
      std::size_t code = 0;
      while (levels[code] != b) ++code;
      c[r] = static_cast<Code>(c[r] | code << (4 * paired_nibble(j, sizeof(Word))));
    }
  }
  return c;
}

/// The values of the iq2 grids' bytes, in code order.
inline constexpr std::array<std::uint8_t, 3> iq2_levels{{8, 25, 43}};
/// The values of iq3xxs_grid's bytes, in code order.
inline constexpr std::array<std::uint8_t, 8> iq3xxs_levels{{4, 12, 20, 28, 36, 44, 52, 62}};
/// The values of iq3s_grid's bytes, in code order.
inline constexpr std::array<std::uint8_t, 8> iq3s_levels{{1, 3, 5, 7, 9, 11, 13, 15}};

/// iq2xxs_grid as codes of iq2_levels (1 KiB)
inline constexpr auto iq2xxs_codes = code_rows<std::uint32_t>(iq2xxs_grid, iq2_levels);
/// iq2xs_grid as codes of iq2_levels (2 KiB)
inline constexpr auto iq2xs_codes = code_rows<std::uint32_t>(iq2xs_grid, iq2_levels);
/// iq2s_grid as codes of iq2_levels (4 KiB)
inline constexpr auto iq2s_codes = code_rows<std::uint32_t>(iq2s_grid, iq2_levels);
/// iq3xxs_grid as codes of iq3xxs_levels (512 bytes)
inline constexpr auto iq3xxs_codes = code_rows<std::uint16_t>(iq3xxs_grid, iq3xxs_levels);
/// iq3s_grid as codes of iq3s_levels (1 KiB)
inline constexpr auto iq3s_codes = code_rows<std::uint16_t>(iq3s_grid, iq3s_levels);

}  // namespace tables
GGUF_END_NAMESPACE

#endif  // GGUF_KERNELS_DERIVED_TABLES_HPP
