#ifndef GGUF_KERNELS_PLAIN_QUANTIZE_SIMD_HPP
#define GGUF_KERNELS_PLAIN_QUANTIZE_SIMD_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/half.hpp"
#include "gguf/kernels/plain/quantize.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/result.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the f16 and bf16 quantizers (plain/quantize.hpp), each the bytes of its scalar twin for
// every input: the rows lanes<A> weights at a time, the rest through the scalar twin.

namespace detail {

/// ggml's f16 of each lane (its portable conversion: to nearest even, every NaN 0x7E00 with its sign).
template <class A>
inline void put_ggml_halves(std::byte* p, const fbatch<A>& v) noexcept {
  const ibatch<A> w = as_int<A>(v);
  const auto nan = (w & ibatch<A>(0x7FFFFFFF)) > ibatch<A>(0x7F800000);
  if (xsimd::any(nan)) {  // the hardware keeps a NaN's payload: ggml's conversion does not
    const ibatch<A> h = select_int<A>(nan, ((w >> 16) & ibatch<A>(0x8000)) | ibatch<A>(0x7E00), f16_bits<A>(v));
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
  std::size_t i = put_bf16_steps<A>(reinterpret_cast<bf16*>(dst), src, n_per_row);  // AVX-512: 32 a step
  for (; i + lanes<A> <= n_per_row; i += lanes<A>)  // put: dequantize's bf16 store, the same rounding
    put<A>(reinterpret_cast<bf16*>(dst + 2 * i), fbatch<A>::load_unaligned(src + i));
  scalar::quantize_bf16(src + i, dst + 2 * i, n_per_row - i, importance);
  return errc::success;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_PLAIN_QUANTIZE_SIMD_HPP
