#ifndef GGUF_KERNELS_SIMD_STREAMING_HPP
#define GGUF_KERNELS_SIMD_STREAMING_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/kernels/kernel_table.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/format/half.hpp"
#include "gguf/kernels/simd/arch.hpp"
#include "gguf/kernels/simd/ops.hpp"

/**
 * @file
 * Outputs far larger than the caches, written with non-temporal stores: every kernel dequantizes into a
 * tile that stays in L1, and the tile goes to its place in whole lines that are never read first. An
 * ordinary store to a line that is not in the cache reads the line from memory before it writes it (and
 * evicts something useful): out of cache that read is half the memory traffic of a kernel, which
 * otherwise runs far faster than memory. The extra copy through L1 costs next to nothing there.
 */

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

/// Outputs of at least this many bytes are streamed: far past the L2 of any CPU, and too big to stay in
/// a shared L3 beside anything else. Smaller ones keep ordinary stores (their reader finds them cached).
inline constexpr std::size_t stream_min_bytes = std::size_t{16} << 20;

/// The L1-resident tile a streamed kernel writes before the tile is streamed out (small, so that its
/// lines are still in L1 when they are read back).
inline constexpr std::size_t stream_tile_bytes = 4096;

/**
 * `Kernel` (the kernel of type `T` writing `Out`), its output streamed when it is at least
 * `stream_min_bytes` and 64-byte aligned: a tile of whole blocks at a time into L1, then out with
 * `stream_copy`; the blocks after the last whole tile with ordinary stores. The same values in the same
 * places as `Kernel` alone.
 */
template <class A, dequant_output Out, ggml_type T, dequant_fn_to<Out> Kernel>
inline void streamed(const std::byte* src, Out* dst, std::size_t n_blocks) noexcept {
  if constexpr (stream_stores<A>) {
    constexpr std::size_t block = traits(T).block_size, size = traits(T).type_size;
    constexpr std::size_t per_tile = std::max<std::size_t>(1, stream_tile_bytes / (block * sizeof(Out)));
    constexpr std::size_t tile_bytes = per_tile * block * sizeof(Out);
    static_assert(tile_bytes % 64 == 0, "a tile is whole lines");
    if (n_blocks * block * sizeof(Out) >= stream_min_bytes && (reinterpret_cast<std::uintptr_t>(dst) & 63) == 0) {
      alignas(64) std::byte tile[tile_bytes];  // the kernel's Out values (implicit-lifetime types)
      std::size_t i = 0;
      for (; i + per_tile <= n_blocks; i += per_tile) {
        // per_tile, as a count the compiler cannot fold: a constant one makes GCC unroll the kernel's
        // tail loops into warnings about iterations that never run (-Waggressive-loop-optimizations)
        const std::size_t m = std::min(per_tile, n_blocks - i);
        Kernel(src + i * size, reinterpret_cast<Out*>(tile), m);
        stream_copy<A>(dst + i * block, tile, tile_bytes);
      }
      stream_fence();
      if (i < n_blocks) Kernel(src + i * size, dst + i * block, n_blocks - i);
      return;
    }
  }
  Kernel(src, dst, n_blocks);
}

/**
 * `Kernel` streamed (`streamed`) where the architecture has streaming stores, for the block types' float
 * outputs; else `Kernel` itself. The half outputs write half the bytes and already run near the memory's
 * bandwidth, and f16/bf16 to float stream from their registers without a tile (simd/plain.hpp): a tile
 * would slow them.
 */
template <class A, dequant_output Out, ggml_type T, dequant_fn_to<Out> Kernel>
constexpr dequant_fn_to<Out> streaming_kernel() noexcept {
  if constexpr (stream_stores<A> && std::is_same_v<Out, float> && traits(T).block_size > 1) {
    return &streamed<A, Out, T, Kernel>;
  } else {
    return Kernel;
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_STREAMING_HPP
