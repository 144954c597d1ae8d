#ifndef GGUF_KERNELS_SIMD_QUANTIZE_HPP
#define GGUF_KERNELS_SIMD_QUANTIZE_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/quantize/legacy.hpp"
#include "gguf/kernels/scalar/quantize/plain.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/result.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the quantizers whose work is one pass of independent lanes: f16, bf16 and q8_0, generic
// over the xsimd Arch, each the bytes of its scalar twin (kernels/scalar/quantize) for every input. They
// keep ggml's order of float operations; a product is never followed by an add or a subtract of itself,
// so no -ffp-contract setting can fuse one into an FMA. Rows: lanes<A> weights at a time, the rest
// through the scalar twin.

namespace detail {

/// ggml's f16 of each lane (its portable conversion: to nearest even, every NaN 0x7E00 with its sign).
template <class A>
inline void put_ggml_halves(std::byte* p, const fbatch<A>& v) noexcept {
  const ibatch<A> w = as_int<A>(v);
  const auto nan = (w & ibatch<A>(0x7FFFFFFF)) > ibatch<A>(0x7F800000);
  if (xsimd::any(nan)) {  // the hardware keeps a NaN's payload: ggml's conversion does not
    const ibatch<A> h = xsimd::select(nan, ((w >> 16) & ibatch<A>(0x8000)) | ibatch<A>(0x7E00), f16_bits<A>(v));
    store_words<A>(reinterpret_cast<f16*>(p), h);
  } else {  // nearest even, overflow to infinity: the hardware's conversion is ggml's
    put<A>(reinterpret_cast<f16*>(p), v);
  }
}

}  // namespace detail

/// f16 rows: ggml_fp32_to_fp16_row's bytes (`scalar::quantize_f16`).
template <class A>
inline errc quantize_f16(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  std::size_t i = 0;
  for (; i + lanes<A> <= n_per_row; i += lanes<A>)
    detail::put_ggml_halves<A>(dst + 2 * i, fbatch<A>::load_unaligned(src + i));
  scalar::quantize_f16(src + i, dst + 2 * i, n_per_row - i, importance);
  return errc::success;
}

/// bf16 rows: ggml_fp32_to_bf16_row_ref's bytes (`scalar::quantize_bf16`).
template <class A>
inline errc quantize_bf16(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  std::size_t i = 0;
  for (; i + lanes<A> <= n_per_row; i += lanes<A>) {
    detail::store_words<A>(reinterpret_cast<bf16*>(dst + 2 * i),
                           detail::bf16_bits<A>(fbatch<A>::load_unaligned(src + i)));
  }
  scalar::quantize_bf16(src + i, dst + 2 * i, n_per_row - i, importance);
  return errc::success;
}

/**
 * q8_0 rows (`scalar::quantize_q8_0`): per block of 32, amax = max |x|, d = amax / 127, q = round(x / d)
 * half away from zero. A block with a NaN or an infinity goes through the scalar twin (there ggml's MAX is
 * order-dependent and its casts of NaN are the x86 instruction's); for the others the maximum of the lanes
 * is the maximum in any order, and the rounding is decided without subtracting from the product:
 * |p| >= trunc(|p|) + 0.5, both exact.
 */
template <class A>
inline errc quantize_q8_0(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  constexpr std::size_t per_block = 32, vectors = per_block / lanes<A>;
  static_assert(per_block % lanes<A> == 0);
  for (std::size_t b = 0; b < n_per_row / per_block; ++b, src += per_block, dst += sizeof(blocks::q8_0)) {
    fbatch<A> x[vectors];
    fbatch<A> amax(0.0f);
    ibatch<A> special(0);
    for (std::size_t k = 0; k < vectors; ++k) {
      x[k] = fbatch<A>::load_unaligned(src + k * lanes<A>);
      amax = xsimd::max(amax, xsimd::abs(x[k]));
      special = special | (as_int<A>(x[k]) & ibatch<A>(0x7F800000));
    }
    if (xsimd::any(special == ibatch<A>(0x7F800000))) {  // a NaN or an infinity: the scalar twin
      scalar::quantize_q8_0(src, dst, per_block, importance);
      continue;
    }
    alignas(64) float lane_max[lanes<A>];  // xsimd 8.1 has no reduce_max
    amax.store_aligned(lane_max);
    float max = lane_max[0];
    for (std::size_t k = 1; k < lanes<A>; ++k) max = lane_max[k] > max ? lane_max[k] : max;
    const float d = max / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    if (!(id < 3.0e38f)) {  // d below 2^-128: 1 / d is infinite, and x * id NaN or infinite
      scalar::quantize_q8_0(src, dst, per_block, importance);
      continue;
    }
    scalar::quant::store_half(dst, d);
    alignas(64) std::int32_t q[per_block];
    for (std::size_t k = 0; k < vectors; ++k) {
      const fbatch<A> p = x[k] * fbatch<A>(id);
      const fbatch<A> a = xsimd::abs(p);
      const fbatch<A> t = to_float<A>(xsimd::batch_cast<std::int32_t>(a));  // |p| <= 127.00002: exact trunc
      const fbatch<A> r = t + xsimd::select(a >= t + fbatch<A>(0.5f), fbatch<A>(1.0f), fbatch<A>(0.0f));
      const ibatch<A> m = xsimd::batch_cast<std::int32_t>(r);
      xsimd::select(as_int<A>(p) < ibatch<A>(0), ibatch<A>(0) - m, m).store_aligned(q + k * lanes<A>);
    }
    for (std::size_t j = 0; j < per_block; ++j) dst[2 + j] = static_cast<std::byte>(q[j] & 0xFF);
  }
  return errc::success;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_QUANTIZE_HPP
