#ifndef GGUF_KERNELS_SIMD_LEGACY_HPP
#define GGUF_KERNELS_SIMD_LEGACY_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gguf/detail/isa.hpp"
#include "gguf/detail/xsimd_compat.hpp"
#include "gguf/kernels/blocks.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of scalar/legacy.hpp, one per block type, generic over the xsimd Arch: lanes<A> weights
// at a time (4 on SSE/NEON, 8 on AVX2, 16 on AVX-512). Bit-exact with the scalar kernels: the same
// int -> float conversions and products; where the scalar code rounds q * d and + m separately, an FMA
// is used instead because q * d is exact in float (q < 32 needs 5 bits, the half d 11: 16 < 24 bits),
// so fused and unfused round once, at the same place.

namespace detail_legacy {

/// Lane i = 0x10 if bit i of `word` is set, else 0: the fifth bits of lanes<A> weights of the q5 types.
/// (One masked move on AVX-512, and + compare elsewhere; no xsimd::select, which xsimd 8.1 fails to
/// compile for int32 on AVX-512 at -O0.)
template <class A>
inline ibatch<A> fifth_bits(std::uint32_t word) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_maskz_mov_epi32(static_cast<__mmask16>(word), _mm512_set1_epi32(0x10));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    const __m256i bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i set = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(word)), bits), bits);
    return _mm256_and_si256(set, _mm256_set1_epi32(0x10));
  }
#endif
#if defined(__SSE4_1__)
  if constexpr (is_sse41<A>) {
    const __m128i bits = _mm_setr_epi32(1, 2, 4, 8);
    const __m128i set = _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(static_cast<int>(word)), bits), bits);
    return _mm_and_si128(set, _mm_set1_epi32(0x10));
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    const std::uint32_t b[4] = {1, 2, 4, 8};
    const uint32x4_t set = vtstq_u32(vdupq_n_u32(word), vld1q_u32(b));
    return vreinterpretq_s32_u32(vandq_u32(set, vdupq_n_u32(0x10)));
  }
#endif
  alignas(64) std::int32_t t[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) t[i] = static_cast<std::int32_t>(((word >> i) & 1u) << 4);
  return ibatch<A>::load_aligned(t);
}

template <class A, class B>
inline void dequant_q4_q5(const std::byte* src, float* dst, std::size_t nb) noexcept {
  constexpr bool fifth_bit = std::is_same_v<B, blocks::q5_0> || std::is_same_v<B, blocks::q5_1>;
  constexpr bool has_min = std::is_same_v<B, blocks::q4_1> || std::is_same_v<B, blocks::q5_1>;
  constexpr std::int32_t centre = has_min ? 0 : (fifth_bit ? 16 : 8);
  constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0);
  const ibatch<A> low4(0x0F), c(centre);
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 32) {
    const fbatch<A> d(half_scale(src + offsetof(B, d)));
    fbatch<A> m(0.0f);
    if constexpr (has_min) m = fbatch<A>(half_scale(src + offsetof(B, m)));
    std::uint32_t qh = 0;  // bit k: the fifth bit of weight k
    if constexpr (fifth_bit) qh = detail::le32(src + offsetof(B, qh));
    const std::byte* qs = src + offsetof(B, qs);
    for (std::size_t j = 0; j < 16; j += L) {
      const ibatch<A> q = load_u8<A>(qs + j);
      ibatch<A> q0 = q & low4, q1 = q >> 4;
      if constexpr (fifth_bit) {
        q0 = q0 | fifth_bits<A>(qh >> j);
        q1 = q1 | fifth_bits<A>(qh >> (j + 16));
      }
      if constexpr (has_min) {
        xsimd::fma(to_float<A>(q0), d, m).store_unaligned(dst + j);
        xsimd::fma(to_float<A>(q1), d, m).store_unaligned(dst + j + 16);
      } else {
        (to_float<A>(q0 - c) * d).store_unaligned(dst + j);
        (to_float<A>(q1 - c) * d).store_unaligned(dst + j + 16);
      }
    }
  }
}

template <class A, class B>
inline void dequant_q8(const std::byte* src, float* dst, std::size_t nb) noexcept {
  constexpr std::size_t L = lanes<A>;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 32) {
    const fbatch<A> d(half_scale(src + offsetof(B, d)));
    const std::byte* qs = src + offsetof(B, qs);
    for (std::size_t j = 0; j < 32; j += L) (to_float<A>(load_i8<A>(qs + j)) * d).store_unaligned(dst + j);
  }
}

}  // namespace detail_legacy

template <class A>
void dequant_q4_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail_legacy::dequant_q4_q5<A, blocks::q4_0>(src, dst, nb);
}
template <class A>
void dequant_q4_1(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail_legacy::dequant_q4_q5<A, blocks::q4_1>(src, dst, nb);
}
template <class A>
void dequant_q5_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail_legacy::dequant_q4_q5<A, blocks::q5_0>(src, dst, nb);
}
template <class A>
void dequant_q5_1(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail_legacy::dequant_q4_q5<A, blocks::q5_1>(src, dst, nb);
}
template <class A>
void dequant_q8_0(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail_legacy::dequant_q8<A, blocks::q8_0>(src, dst, nb);
}
template <class A>
void dequant_q8_1(const std::byte* src, float* dst, std::size_t nb) noexcept {
  detail_legacy::dequant_q8<A, blocks::q8_1>(src, dst, nb);
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_LEGACY_HPP
