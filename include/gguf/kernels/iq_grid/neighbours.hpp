#ifndef GGUF_KERNELS_IQ_GRID_NEIGHBOURS_HPP
#define GGUF_KERNELS_IQ_GRID_NEIGHBOURS_HPP

#include <array>
#include <bit>
#include <cfloat>
#include <cstddef>
#include <cstdint>

#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"
#include "gguf/kernels/tables.hpp"

/**
 * @file
 * The grid searches of the IQ quantizers (ggml-quants.c: iq2xs_init_impl, iq3xs_init_impl and the
 * *_find_best_neighbour functions): which grid point a group of levels is, and, when it is none, the
 * grid points nearest to it, searched for the one that fits the weights best.
 *
 * Why the tables are filled lazily, once, into static storage (a function-local static, so C++'s
 * thread-safe initialisation) and neither generated nor constexpr: the neighbour lists hold ~720,000
 * 16-bit entries over the six grids (1.4 MB; generated source would be several MB in a header every
 * kernel user parses), and computing them takes ~90 million small-integer operations, far beyond what a
 * compiler's constant evaluator does in the few hundred milliseconds a header may cost. Built at run
 * time they take ~0.1 s for all six grids at -O2, once per process and only for the types used; the
 * storage is zero-initialised BSS (no heap). Only the points a quantizer can look up get a list (every
 * level in 0..2 for the 8-weight grids, where ggml also fills the 3^8..4^8 points no quantizer reaches);
 * the lists themselves are ggml's: the grid points of the `nwant` smallest distances, by distance then
 * index (the order of its qsort on (distance, index) pairs, a total order).
 */

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar::detail::iq {

// ggml's rounding steps, shared with the other quantizers (scalar/quantize_common.hpp).
using detail::c_max;
using detail::mul;
using detail::nearest_int;

// ---- grids --------------------------------------------------------------------------------------

/**
 * One IQ grid prepared for searching: ggml's `the_grid` (per grid point and weight, 2 * level + 1), the
 * map from a group's levels to its grid index or to its neighbour list, and the lists.
 * @tparam GridSize grid points; @tparam Dims weights per point; @tparam Levels levels per weight that a
 * quantizer can ask for; @tparam Slots the lists' total length (their counts included), a fact of the grid
 */
template <std::size_t GridSize, std::size_t Dims, std::size_t Levels, std::size_t Slots>
struct grid_search {
  /// Points of the map: every combination of levels.
  static constexpr std::size_t points = [] {
    std::size_t p = 1;
    for (std::size_t i = 0; i < Dims; ++i) p *= Levels;
    return p;
  }();
  static constexpr std::size_t grid_size = GridSize;  ///< grid points
  static constexpr std::size_t dims = Dims;           ///< weights per grid point

  std::array<std::array<std::int8_t, Dims>, GridSize> q{};  ///< 2 * level + 1 per grid point and weight
  std::array<std::int32_t, points> map{};         ///< grid index, or -(1 + offset of the point's list in neighbours)
  std::array<std::uint16_t, Slots> neighbours{};  ///< per list: its length n, then n grid indices
  std::size_t filled = 0;                         ///< slots used (== Slots: checked by the tests)

  /**
   * Builds the tables. @param level_of the level (0..Levels-1) of weight k of grid point j
   * @param nwant how many distinct distances a neighbour list spans (ggml's nwant)
   */
  grid_search(int (*level_of)(std::size_t j, std::size_t k), int nwant) noexcept {
    map.fill(-1);
    for (std::size_t j = 0; j < GridSize; ++j) {
      std::size_t key = 0;
      for (std::size_t k = Dims; k-- > 0;) {
        const int l = level_of(j, k);
        q[j][k] = static_cast<std::int8_t>(2 * l + 1);
        key = key * Levels + static_cast<std::size_t>(l);
      }
      map[key] = static_cast<std::int32_t>(j);
    }
    std::array<int, GridSize> d2{};
    for (std::size_t p = 0; p < points; ++p) {
      if (map[p] >= 0) continue;
      std::array<int, Dims> pos{};
      for (std::size_t k = 0, rest = p; k < Dims; ++k, rest /= Levels) {
        pos[k] = 2 * static_cast<int>(rest % Levels) + 1;
      }
      // The nwant smallest distinct squared distances, ascending (at most 3 of them).
      std::array<int, 3> want{INT32_MAX, INT32_MAX, INT32_MAX};
      for (std::size_t j = 0; j < GridSize; ++j) {
        int d = 0;
        for (std::size_t k = 0; k < Dims; ++k) d += (q[j][k] - pos[k]) * (q[j][k] - pos[k]);
        d2[j] = d;
        for (int w = 0; w < nwant; ++w) {
          if (d == want[static_cast<std::size_t>(w)]) break;
          if (d < want[static_cast<std::size_t>(w)]) {
            for (int v = nwant - 1; v > w; --v)
              want[static_cast<std::size_t>(v)] = want[static_cast<std::size_t>(v - 1)];
            want[static_cast<std::size_t>(w)] = d;
            break;
          }
        }
      }
      const std::size_t start = filled++;
      std::size_t n = 0;
      for (int w = 0; w < nwant; ++w) {
        for (std::size_t j = 0; j < GridSize; ++j) {
          if (d2[j] == want[static_cast<std::size_t>(w)] && filled < Slots) {
            neighbours[filled++] = static_cast<std::uint16_t>(j);
            ++n;
          }
        }
      }
      if (start < Slots) neighbours[start] = static_cast<std::uint16_t>(n);
      map[p] = -1 - static_cast<std::int32_t>(start);
    }
  }

  /**
   * The map entry of a group of levels L[0..Dims) (as ggml's kmap): its grid index (>= 0), or -(1 + the
   * offset of its neighbour list). A level outside 0..Levels-1 (ggml reads out of bounds) gives INT32_MIN.
   */
  std::int32_t lookup(const std::int8_t* L) const noexcept {
    std::size_t key = 0;
    for (std::size_t k = Dims; k-- > 0;) {
      if (L[k] < 0 || static_cast<std::size_t>(L[k]) >= Levels) return INT32_MIN;
      key = key * Levels + static_cast<std::size_t>(L[k]);
    }
    return map[key];
  }

  /// The neighbour list of a map entry < 0 (its length first).
  const std::uint16_t* list(std::int32_t entry) const noexcept {
    return neighbours.data() + static_cast<std::size_t>(-1 - static_cast<std::int64_t>(entry));
  }

  /// Sets L[0..Dims) to the levels of grid point g ((2l + 1 - 1) / 2, as ggml).
  void levels(std::size_t g, std::int8_t* L) const noexcept {
    for (std::size_t k = 0; k < Dims; ++k) L[k] = static_cast<std::int8_t>((q[g][k] - 1) / 2);
  }
};

// The level of a grid value: the grids' distinct magnitudes, in ascending order, are the levels.
inline int iq2_level(std::uint64_t row, std::size_t k) noexcept {
  const auto b = static_cast<std::uint8_t>(row >> (8 * k));  // 0x08, 0x19, 0x2b
  return (b > 0x08 ? 1 : 0) + (b > 0x19 ? 1 : 0);
}

/// iq2_xxs: 256 points, lists over 2 distances.
using iq2xxs_search_t = grid_search<256, 8, 3, 119462>;
/// iq2_xs: 512 points, lists over 2 distances.
using iq2xs_search_t = grid_search<512, 8, 3, 187770>;
/// iq2_s: 1024 points, lists over 1 distance.
using iq2s_search_t = grid_search<1024, 8, 3, 50253>;
/// iq1_s and iq1_m: 2048 points of -1, 0, 1, lists over 3 distances.
using iq1_search_t = grid_search<2048, 8, 3, 332234>;
/// iq3_xxs: 256 points of 4 weights, 8 levels, lists over 2 distances.
using iq3xxs_search_t = grid_search<256, 4, 8, 22825>;
/// iq3_s: 512 points of 4 weights, 8 levels, lists over 3 distances.
using iq3s_search_t = grid_search<512, 4, 8, 28317>;

/// The iq2_xxs search tables, built on first use.
inline const iq2xxs_search_t& iq2xxs_search() noexcept {
  static const iq2xxs_search_t s([](std::size_t j, std::size_t k) { return iq2_level(tables::iq2xxs_grid[j], k); }, 2);
  return s;
}
/// The iq2_xs search tables, built on first use.
inline const iq2xs_search_t& iq2xs_search() noexcept {
  static const iq2xs_search_t s([](std::size_t j, std::size_t k) { return iq2_level(tables::iq2xs_grid[j], k); }, 2);
  return s;
}
/// The iq2_s search tables, built on first use.
inline const iq2s_search_t& iq2s_search() noexcept {
  static const iq2s_search_t s([](std::size_t j, std::size_t k) { return iq2_level(tables::iq2s_grid[j], k); }, 1);
  return s;
}
/// The iq1_s/iq1_m search tables, built on first use (grid values -1, 0, 1 are levels 0, 1, 2).
inline const iq1_search_t& iq1_search() noexcept {
  static const iq1_search_t s(
      [](std::size_t j, std::size_t k) {
        return static_cast<std::int8_t>(static_cast<std::uint8_t>(tables::iq1s_grid[j] >> (8 * k))) + 1;
      },
      3);
  return s;
}
/// The iq3_xxs search tables, built on first use (magnitudes 4, 12, ..., 52, 62 are levels 0..7).
inline const iq3xxs_search_t& iq3xxs_search() noexcept {
  static const iq3xxs_search_t s(
      [](std::size_t j, std::size_t k) {
        return (static_cast<int>((tables::iq3xxs_grid[j] >> (8 * k)) & 0xFFu) - 4) / 8;
      },
      2);
  return s;
}
/// The iq3_s search tables, built on first use (magnitudes 1, 3, ..., 15 are levels 0..7).
inline const iq3s_search_t& iq3s_search() noexcept {
  static const iq3s_search_t s(
      [](std::size_t j, std::size_t k) {
        return (static_cast<int>((tables::iq3s_grid[j] >> (8 * k)) & 0xFFu) - 1) / 2;
      },
      3);
  return s;
}

/**
 * ggml's iq2_find_best_neighbour / iq3_find_best_neighbour: of a neighbour list, the grid point with
 * the least sum of weight * (scale * q - x)^2 (the first on ties), its levels written to L.
 * @return its grid index, or -1 when no sum is below FLT_MAX (NaN or infinite: ggml asserts)
 */
template <class Search>
int best_neighbour(const Search& s, std::int32_t entry, const float* xval, const float* weight, float scale,
                   std::int8_t* L) noexcept {
  const std::uint16_t* list = s.list(entry);
  float best_d2 = FLT_MAX;
  int best = -1;
  for (std::size_t j = 1; j <= list[0]; ++j) {
    const auto& pg = s.q[list[j]];
    float d2 = 0;
    for (std::size_t i = 0; i < Search::dims; ++i) {
      const float diff = mul(scale, static_cast<float>(pg[i])) - xval[i];
      d2 += mul(weight[i] * diff, diff);
    }
    if (d2 < best_d2) {
      best_d2 = d2;
      best = list[j];
    }
  }
  if (best >= 0) s.levels(static_cast<std::size_t>(best), L);
  return best;
}

/**
 * ggml's iq1_find_best_neighbour2: of a neighbour list, the grid point with the least sum of
 * weight * (scale * xg[level] - x)^2 (the first on ties), its levels written to L.
 * @return its grid index, or -1 when no sum is below FLT_MAX: ggml then scans the whole grid with an
 * out-of-bounds read (xval[i] for xval[j]), undefined, so this is reported as an error
 */
inline int iq1_best_neighbour(const iq1_search_t& s, std::int32_t entry, const float* xval, const float* weight,
                              float scale, const float* xg, std::int8_t* L) noexcept {
  const std::uint16_t* list = s.list(entry);
  float best_d2 = FLT_MAX;
  int best = -1;
  for (std::size_t j = 1; j <= list[0]; ++j) {
    const auto& pg = s.q[list[j]];
    float d2 = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      const float diff = mul(scale, xg[(pg[i] - 1) / 2]) - xval[i];
      d2 += mul(weight[i] * diff, diff);
    }
    if (d2 < best_d2) {
      best_d2 = d2;
      best = list[j];
    }
  }
  if (best >= 0) s.levels(static_cast<std::size_t>(best), L);
  return best;
}

}  // namespace kernels::scalar::detail::iq
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_IQ_GRID_NEIGHBOURS_HPP
