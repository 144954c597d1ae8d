#ifndef GGUF_KERNELS_SIMD_OPS_BYTES_HPP
#define GGUF_KERNELS_SIMD_OPS_BYTES_HPP

#include <cstdint>
#include <type_traits>

#include "gguf/kernels/simd/ops/intrinsics.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// ---- Byte-parallel assembly ---------------------------------------------------------------------
// The bit-heavy types (q3_K, q5_K, q6_K) assemble each weight's bits a byte at a time, 4 * lanes<S>
// weights per instruction, in a batch of arch S = swar_arch<A>. Every step moves bits only within their
// byte (shifts are masked), so the order of bytes in a lane never matters.

/** 4 * `lanes<S>` bytes at p, four to an int32 lane. */
template <class S>
GGUF_SIMD_INLINE ibatch<S> load_bytes(const std::byte* p) noexcept {
  return ibatch<S>::load_unaligned(reinterpret_cast<const std::int32_t*>(p));
}

/** Byte b in all four bytes of every lane. */
template <class S>
GGUF_SIMD_INLINE ibatch<S> bytes_of(std::uint8_t b) noexcept {
  return ibatch<S>(static_cast<std::int32_t>(0x01010101u * b));
}

/** Bit `From` of each byte of v moved to bit `To` of the same byte, all other bits cleared. */
template <int From, int To, class S>
GGUF_SIMD_INLINE ibatch<S> byte_bit_to(const ibatch<S>& v) noexcept {
  const ibatch<S> mask = bytes_of<S>(static_cast<std::uint8_t>(1u << To));
  if constexpr (From < To)
    return (v << (To - From)) & mask;
  else if constexpr (From > To)
    return (v >> (From - To)) & mask;
  else
    return v & mask;
}

/** Bit pair `Pair` (bits 2 Pair, 2 Pair + 1) of each byte of v, in bits 0-1. */
template <int Pair, class S>
GGUF_SIMD_INLINE ibatch<S> byte_pair(const ibatch<S>& v) noexcept {
  if constexpr (Pair == 3)
    return (v >> 6) & bytes_of<S>(3);
  else if constexpr (Pair == 0)
    return v & bytes_of<S>(3);
  else
    return (v >> (2 * Pair)) & bytes_of<S>(3);
}

/** v - b in each byte, wrapping (weight bytes made signed before widening). */
template <class S>
GGUF_SIMD_INLINE ibatch<S> sub_bytes(const ibatch<S>& v, std::uint8_t b) noexcept {
#if defined(__AVX2__)
  if constexpr (lanes<S> == 8 && std::is_base_of_v<xsimd::avx2, S>) {
    return _mm256_sub_epi8(v, _mm256_set1_epi8(static_cast<char>(b)));
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (lanes<S> == 4 && std::is_base_of_v<xsimd::sse2, S>) {
    return _mm_sub_epi8(v, _mm_set1_epi8(static_cast<char>(b)));
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<S>) {
    return vreinterpretq_s32_s8(vsubq_s8(vreinterpretq_s8_s32(v), vdupq_n_s8(static_cast<std::int8_t>(b))));
  }
#endif
  // Borrow-free per byte: set each byte's top bit before subtracting the low seven bits of b, then
  // put the top bit right (Hacker's Delight 2-18).
  const ibatch<S> top = bytes_of<S>(0x80), x = bytes_of<S>(b);
  return ((v | top) - (x & bytes_of<S>(0x7F))) ^ ((v ^ ~x) & top);
}

/**
 * The 4 * `lanes<S>` bytes of v, zero- (Signed: sign-) extended into out[]. Only where
 * `widen_in_registers<A>`.
 */
template <class A, bool Signed, class S>
GGUF_SIMD_INLINE void widen_bytes(const ibatch<S>& v, ibatch<A>* out) noexcept {
#if GGUF_SIMD_AVX512
  if constexpr (widen_in_registers<A>) {
    const __m256i x = v;
    if constexpr (Signed) {
      out[0] = _mm512_cvtepi8_epi32(_mm256_castsi256_si128(x));
      out[1] = _mm512_cvtepi8_epi32(_mm256_extracti128_si256(x, 1));
    } else {
      out[0] = _mm512_cvtepu8_epi32(_mm256_castsi256_si128(x));
      out[1] = _mm512_cvtepu8_epi32(_mm256_extracti128_si256(x, 1));
    }
    return;
  }
#endif
  static_assert(widen_in_registers<A>, "widen through memory instead");
  (void)v;
  (void)out;
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_BYTES_HPP
