#ifndef GGUF_KERNELS_TERNARY_QUANTIZE_SIMD_HPP
#define GGUF_KERNELS_TERNARY_QUANTIZE_SIMD_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/ternary/quantize.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/result.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the quantizers whose levels are -1, 0, +1 times max |x|: tq1_0, tq2_0 (BitNet b1.58,
// TriLMs), and q2_0's (low_bit/quantize_simd.hpp). Each weight's level is one comparison of p = x * (1 /
// amax) with +-0.5: for a block without NaN, infinities or a scale too small to invert, |p| <= 1 + 2^-23,
// where C's lround / round (half away from zero) is exactly that, so each lane is the scalar level; the
// packings are small-integer arithmetic in float lanes (exact). The other blocks go through the scalar
// twin: its running maximum takes NaN in order, its casts of NaN and infinities are x86's.

namespace detail {

/**
 * The block's scale, max |x| (with no NaN in the block, the maximum in any order), stored as ggml's half
 * at `d_field`, and its inverse (0 for a block of zeros) in `inv`; false, with nothing stored, for a
 * block the scalar twin must take (a NaN or an infinity, or a maximum whose inverse overflows).
 */
template <class A, std::size_t N>
inline bool ternary_scale(const float* x, std::byte* d_field, float& inv) noexcept {
  const fbatch<A> inf(std::numeric_limits<float>::infinity());
  fbatch<A> m(0.0f);
  auto finite = m < inf;
  for (std::size_t j = 0; j < N; j += lanes<A>) {
    const fbatch<A> a = xsimd::abs(fbatch<A>::load_unaligned(x + j));
    finite = finite & (a < inf);  // fails for NaN too
    m = xsimd::max(m, a);
  }
  if (!xsimd::all(finite)) return false;
  const float amax = max_lane<A>(m);
  inv = amax != 0.0f ? 1.0f / amax : 0.0f;
  if (!(inv < std::numeric_limits<float>::infinity())) return false;
  ::gguf::detail::store_le<std::uint16_t>(d_field, half_bits_not_nan<A>(amax));
  return true;
}

/// lround(x * id) + 1 in every lane as a float (0, 1 or 2), for |x * id| <= 1 + 2^-23.
template <class A>
inline fbatch<A> trit(const float* x, const fbatch<A>& id) noexcept {
  using F = fbatch<A>;
  const F p = F::load_unaligned(x) * id;
  return F(1.0f) + xsimd::select(p >= F(0.5f), F(1.0f), F(0.0f)) - xsimd::select(p <= F(-0.5f), F(1.0f), F(0.0f));
}

/// ggml's tq1_0 byte of a base-3 number q (0 ... 242): (q * 256 + 242) / 243 in integers, from floats
/// (the quotient's fraction, +0.5 / 243, stays 0.002 away from an integer: no rounding crosses one).
template <class A>
inline void store_trit_bytes(std::byte* p, const fbatch<A>& q) noexcept {
  using F = fbatch<A>;
  const F v = (q * F(256.0f) + F(242.5f)) * F(1.0f / 243.0f);
  store_low_bytes<A>(p, xsimd::batch_cast<std::int32_t>(v));
}

}  // namespace detail

/// tq1_0 rows (`scalar::quantize_tq1_0`): five trits a byte for the first 240 weights, in lanes.
template <class A>
inline errc quantize_tq1_0(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using B = blocks::tq1_0;
  using F = fbatch<A>;
  constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0);
  for (std::size_t b = 0; b < n_per_row / 256; ++b, src += 256, dst += sizeof(B)) {
    float inv;
    if (!detail::ternary_scale<A, 256>(src, dst + offsetof(B, d), inv)) {
      scalar::quantize_tq1_0(src, dst, 256, importance);
      continue;
    }
    const F id(inv);
    std::byte* qs = dst + offsetof(B, qs);
    const auto five = [&](const float* x, std::size_t stride, std::byte* out) {
      F q = detail::trit<A>(x, id);
      for (std::size_t k = 1; k < 5; ++k) q = q * F(3.0f) + detail::trit<A>(x + k * stride, id);
      detail::store_trit_bytes<A>(out, q);
    };
    for (std::size_t m = 0; m < 32; m += L) five(src + m, 32, qs + m);             // weights 0 ... 159
    for (std::size_t m = 0; m < 16; m += L) five(src + 160 + m, 16, qs + 32 + m);  // 160 ... 239
    for (int j = 0; j < 4; ++j) {  // weights 240 ... 255: four bytes of four trits
      ::gguf::detail::store_le<std::uint8_t>(dst + offsetof(B, qh) + j,
                                             scalar::detail::trit_byte(src + 240 + j, 4, 4, inv));
    }
  }
  return errc::success;
}

/// tq2_0 rows (`scalar::quantize_tq2_0`): byte m of each 32 the trits of weights m, m + 32, m + 64, m + 96.
template <class A>
inline errc quantize_tq2_0(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using B = blocks::tq2_0;
  using F = fbatch<A>;
  constexpr std::size_t L = lanes<A>;
  static_assert(32 % L == 0);
  for (std::size_t b = 0; b < n_per_row / 256; ++b, src += 256, dst += sizeof(B)) {
    float inv;
    if (!detail::ternary_scale<A, 256>(src, dst + offsetof(B, d), inv)) {
      scalar::quantize_tq2_0(src, dst, 256, importance);
      continue;
    }
    const F id(inv);
    for (std::size_t half = 0; half < 2; ++half) {
      const float* x = src + 128 * half;
      for (std::size_t m = 0; m < 32; m += L) {
        const F q = detail::trit<A>(x + m, id) + detail::trit<A>(x + m + 32, id) * F(4.0f) +
                    detail::trit<A>(x + m + 64, id) * F(16.0f) + detail::trit<A>(x + m + 96, id) * F(64.0f);
        store_low_bytes<A>(dst + offsetof(B, qs) + 32 * half + m, xsimd::batch_cast<std::int32_t>(q));
      }
    }
  }
  return errc::success;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_TERNARY_QUANTIZE_SIMD_HPP
