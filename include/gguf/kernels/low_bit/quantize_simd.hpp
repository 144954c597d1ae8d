#ifndef GGUF_KERNELS_LOW_BIT_QUANTIZE_SIMD_HPP
#define GGUF_KERNELS_LOW_BIT_QUANTIZE_SIMD_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/low_bit/quantize.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/ternary/quantize_simd.hpp"
#include "gguf/result.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twin of q2_0's quantizer (low_bit/quantize.hpp). Its levels are those of the ternary types,
// -1, 0, +1 times max |x|, so it rounds with their lanes (ternary/quantize_simd.hpp: `ternary_scale`,
// `trit`). q1_0's quantizer is scalar on every instruction set.

/// q2_0 rows (`scalar::quantize_q2_0`): levels round(x / amax) + 1 (0, 1, 2), four weights a byte.
template <class A>
inline errc quantize_q2_0(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using B = blocks::q2_0;
  using F = fbatch<A>;
  using I = ibatch<A>;
  constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0);
  const F shift = lane_map<A>([](int i) { return static_cast<float>(1 << (2 * (i & 3))); });
  for (std::size_t b = 0; b < n_per_row / 64; ++b, src += 64, dst += sizeof(B)) {
    float inv;  // ggml tests amax > 0 here, != 0 for the ternary types: the same for a maximum of |x|
    if (!detail::ternary_scale<A, 64>(src, dst + offsetof(B, d), inv)) {
      scalar::quantize_q2_0(src, dst, 64, importance);
      continue;
    }
    const F id(inv);
    alignas(64) std::byte shifted[64];  // weight j's level in its bits of byte j / 4
    for (std::size_t j = 0; j < 64; j += L)
      store_low_bytes<A>(shifted + j, xsimd::batch_cast<std::int32_t>(detail::trit<A>(src + j, id) * shift));
    alignas(64) std::int32_t word[16];
    std::memcpy(word, shifted, sizeof word);
    for (std::size_t k = 0; k < 16; k += L) {  // the four bytes of each word hold disjoint bits: OR them
      const I w = I::load_aligned(word + k);
      store_low_bytes<A>(dst + offsetof(B, qs) + k, (w | (w >> 8) | (w >> 16) | (w >> 24)) & I(0xFF));
    }
  }
  return errc::success;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_LOW_BIT_QUANTIZE_SIMD_HPP
