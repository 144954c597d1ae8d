#ifndef GGUF_KERNELS_FP4_QUANTIZE_SIMD_HPP
#define GGUF_KERNELS_FP4_QUANTIZE_SIMD_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/fp4/quantize.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/simd/quantize_common.hpp"
#include "gguf/kernels/tables.hpp"
#include "gguf/result.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the 4-bit float quantizers (fp4/quantize.hpp): mxfp4 and nvfp4, the scale of a block
// in scalar code, every weight's nearest level in lanes; each the bytes of its scalar twin for every
// input.

namespace detail {

/**
 * `scalar::detail::nearest_e2m1` in every lane: the index of the first of kvalues_mxfp4's 16 levels
 * (times e) nearest to x, as a float. Each level times e is exact (e a power of two or a UE4M3 value,
 * the levels 0 ... 12), so the errors are the scalar ones bit for bit; NaN never wins, as there.
 */
template <class A>
inline fbatch<A> nearest_e2m1(const fbatch<A>& x, float e) noexcept {
  namespace q = scalar::detail;
  using F = fbatch<A>;
  F best(0.0f);
  F best_err = xsimd::abs(F(q::mul(static_cast<float>(tables::kvalues_mxfp4[0]), e)) - x);
  for (std::size_t i = 1; i < 16; ++i) {
    const F err = xsimd::abs(F(q::mul(static_cast<float>(tables::kvalues_mxfp4[i]), e)) - x);
    const auto closer = err < best_err;
    best = xsimd::select(closer, F(static_cast<float>(i)), best);
    best_err = xsimd::select(closer, err, best_err);
  }
  return best;
}

/** Index batches as bytes: byte j the low nibble from `lo` lane j, the high from `hi` lane j. */
template <class A>
inline void store_nibble_pairs(std::byte* p, const fbatch<A>& lo, const fbatch<A>& hi) noexcept {
  const ibatch<A> l = xsimd::batch_cast<std::int32_t>(lo), h = xsimd::batch_cast<std::int32_t>(hi);
  store_low_bytes<A>(p, l | (h << 4));
}

}  // namespace detail

/**
 * mxfp4 rows (`scalar::quantize_mxfp4`): per block of 32 the E8M0 exponent of max |x| (scalar), then every
 * weight's nearest level in lanes. A block with a NaN or an infinity goes through the scalar twin (its
 * running maximum skips NaN in order).
 */
template <class A>
inline errc quantize_mxfp4(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using B = blocks::mxfp4;
  constexpr std::size_t per_block = 32, vectors = per_block / lanes<A>;
  static_assert(per_block % lanes<A> == 0);
  for (std::size_t b = 0; b < n_per_row / per_block; ++b, src += per_block, dst += sizeof(B)) {
    fbatch<A> x[vectors];
    fbatch<A> amax(0.0f);
    for (std::size_t k = 0; k < vectors; ++k) {
      x[k] = fbatch<A>::load_unaligned(src + k * lanes<A>);
      amax = xsimd::max(amax, xsimd::abs(x[k]));
    }
    if (detail::any_special<A>(x)) {
      scalar::quantize_mxfp4(src, dst, per_block, importance);
      continue;
    }
    const float max = max_lane<A>(amax);
    const std::uint8_t e =
        max > 0.0f ? scalar::detail::x86_trunc_byte(scalar::detail::floor_log2f(max) - 2 + 127) : std::uint8_t{0};
    const float d = e8m0_to_float_half(e);
    ::gguf::detail::store_le<std::uint8_t>(dst + offsetof(B, e), e);
    fbatch<A> idx[vectors];
    for (std::size_t k = 0; k < vectors; ++k) idx[k] = detail::nearest_e2m1<A>(x[k], d);
    for (std::size_t k = 0; k < vectors / 2; ++k)  // byte j: weight j low, weight j + 16 high
      detail::store_nibble_pairs<A>(dst + offsetof(B, qs) + k * lanes<A>, idx[k], idx[k + vectors / 2]);
  }
  return errc::success;
}

/**
 * nvfp4 rows (`scalar::quantize_nvfp4`): per 16 weights the UE4M3 scale of max |x| / 6 (scalar), then
 * every weight's nearest level in lanes. A block of 64 with a NaN or an infinity goes through the scalar
 * twin.
 */
template <class A>
inline errc quantize_nvfp4(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using B = blocks::nvfp4;
  constexpr std::size_t per_block = 64, per_sub = 16, vectors = per_sub / lanes<A>;
  static_assert(per_sub % lanes<A> == 0);
  for (std::size_t b = 0; b < n_per_row / per_block; ++b, src += per_block, dst += sizeof(B)) {
    fbatch<A> x[4 * vectors];
    for (std::size_t k = 0; k < 4 * vectors; ++k) x[k] = fbatch<A>::load_unaligned(src + k * lanes<A>);
    if (detail::any_special<A>(x)) {
      scalar::quantize_nvfp4(src, dst, per_block, importance);
      continue;
    }
    for (std::size_t s = 0; s < 4; ++s) {
      const fbatch<A>* xs = x + s * vectors;
      fbatch<A> amax(0.0f);
      for (std::size_t k = 0; k < vectors; ++k) amax = xsimd::max(amax, xsimd::abs(xs[k]));
      const std::uint8_t ue = scalar::detail::to_ue4m3(max_lane<A>(amax) / 6.0f);
      ::gguf::detail::store_le<std::uint8_t>(dst + offsetof(B, d) + s, ue);
      const float d = ue4m3_to_float_half(ue);
      std::byte* qs = dst + offsetof(B, qs) + 8 * s;  // byte j: weight j low, weight j + 8 high
      if constexpr (vectors == 1) {                   // the pairs are in one batch
        alignas(64) float idx[per_sub];
        detail::nearest_e2m1<A>(xs[0], d).store_aligned(idx);
        for (std::size_t j = 0; j < 8; ++j)
          ::gguf::detail::store_le<std::uint8_t>(
              qs + j, static_cast<std::uint8_t>(static_cast<int>(idx[j]) | (static_cast<int>(idx[j + 8]) << 4)));
      } else {
        for (std::size_t k = 0; k < vectors / 2; ++k) {
          detail::store_nibble_pairs<A>(qs + k * lanes<A>, detail::nearest_e2m1<A>(xs[k], d),
                                        detail::nearest_e2m1<A>(xs[k + vectors / 2], d));
        }
      }
    }
  }
  return errc::success;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_FP4_QUANTIZE_SIMD_HPP
