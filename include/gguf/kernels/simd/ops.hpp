#ifndef GGUF_KERNELS_SIMD_OPS_HPP
#define GGUF_KERNELS_SIMD_OPS_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/isa.hpp"
#include "gguf/kernels/simd/arch.hpp"
#include "gguf/kernels/simd/xsimd_compat.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
#include <arm_neon.h>
#endif

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// The operations the kernels need that xsimd does not offer, or not in every version gguf supports
// (8.1, Debian's, lacks widening loads, byte shuffles, permutes and half conversion): the one home of
// intrinsics. Each op is a template on the xsimd architecture A with a branch per instruction set that
// has a better instruction (chosen at compile time by arch.hpp's predicates) and a portable fallback,
// through memory or plain xsimd, that gives the same bits. The kernel families (legacy, k_quants,
// nonlinear, plain, ternary) call these and never an intrinsic.

// ---- Conversions and constants ------------------------------------------------------------------

/** int32 -> float, exact for the small integers the kernels convert. */
template <class A>
inline fbatch<A> to_float(const ibatch<A>& x) noexcept {
  return xsimd::batch_cast<float>(x);
}

/** Lane i = f(i), for constant per-lane patterns. */
template <class A, class F>
inline fbatch<A> lane_map(F f) noexcept {
  alignas(64) float v[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) v[i] = f(static_cast<int>(i));
  return fbatch<A>::load_aligned(v);
}

/**
 * One half -> float, exactly, for the per-block scales: the F16C instruction where the translation unit
 * may use it (the portable conversion branches on subnormals, which costs more than the block's work).
 */
inline float half_scale(const std::byte* p) noexcept {
#if defined(__F16C__)
  return _cvtsh_ss(load_le<std::uint16_t>(p));
#else
  return half_to_float(load_le<std::uint16_t>(p));
#endif
}

// ---- Widening loads -----------------------------------------------------------------------------

/** lanes<A> bytes at p, zero-extended to int32. */
template <class A>
inline ibatch<A> load_u8(const std::byte* p) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__SSE4_1__)
  if constexpr (is_sse41<A>) {
    std::int32_t w;
    std::memcpy(&w, p, 4);
    return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(w));
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    const uint16x8_t h = vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(w)));
    return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(h)));
  }
#endif
  alignas(64) std::int32_t tmp[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = load_le<std::uint8_t>(p + i);
  return ibatch<A>::load_aligned(tmp);
}

/** lanes<A> bytes at p, sign-extended to int32. */
template <class A>
inline ibatch<A> load_i8(const std::byte* p) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__SSE4_1__)
  if constexpr (is_sse41<A>) {
    std::int32_t w;
    std::memcpy(&w, p, 4);
    return _mm_cvtepi8_epi32(_mm_cvtsi32_si128(w));
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    const int16x8_t h = vmovl_s8(vreinterpret_s8_u32(vdup_n_u32(w)));
    return vmovl_s16(vget_low_s16(h));
  }
#endif
  alignas(64) std::int32_t tmp[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = load_le<std::int8_t>(p + i);
  return ibatch<A>::load_aligned(tmp);
}

/** lanes<A> little-endian 16-bit words at p, zero-extended to int32. */
template <class A>
inline ibatch<A> load_u16(const std::byte* p) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__SSE4_1__)
  if constexpr (is_sse41<A>) return _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse2_only<A>) {
    return _mm_unpacklo_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), _mm_setzero_si128());
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    return vreinterpretq_s32_u32(vmovl_u16(vreinterpret_u16_u8(vld1_u8(reinterpret_cast<const std::uint8_t*>(p)))));
  }
#endif
  alignas(64) std::int32_t tmp[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = load_le<std::uint16_t>(p + 2 * i);
  return ibatch<A>::load_aligned(tmp);
}

/** 2 * lanes<A> little-endian 16-bit words at p, zero-extended to int32: lo gets the first lanes<A>. */
template <class A>
inline void load_u16_pair(const std::byte* p, ibatch<A>& lo, ibatch<A>& hi) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {  // 8 words, one load, two unpacks
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), zero = _mm_setzero_si128();
    lo = _mm_unpacklo_epi16(w, zero);
    hi = _mm_unpackhi_epi16(w, zero);
    return;
  }
#endif
  lo = load_u16<A>(p);
  hi = load_u16<A>(p + 2 * lanes<A>);
}

/**
 * lanes<A> little-endian doubles at p rounded to floats: the hardware conversion (cvtpd2ps, fcvtn), which
 * rounds to nearest even as a cast does, overflowing to infinity from FLT_MAX + half an ulp, NaNs kept NaN.
 */
template <class A>
inline fbatch<A> load_f64_as_float(const std::byte* p) noexcept {
  const auto* d = reinterpret_cast<const double*>(p);  // NOLINT: unaligned loads below
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {
    const __m256 lo = _mm512_cvtpd_ps(_mm512_loadu_pd(d)), hi = _mm512_cvtpd_ps(_mm512_loadu_pd(d + 8));
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
  }
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(d + 4)), _mm256_cvtpd_ps(_mm256_loadu_pd(d)));
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) return _mm_movelh_ps(_mm_cvtpd_ps(_mm_loadu_pd(d)), _mm_cvtpd_ps(_mm_loadu_pd(d + 2)));
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) return vcombine_f32(vcvt_f32_f64(vld1q_f64(d)), vcvt_f32_f64(vld1q_f64(d + 2)));
#endif
  alignas(64) float v[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) {
    double x;
    std::memcpy(&x, p + 8 * i, sizeof x);
    v[i] = static_cast<float>(x);  // as the scalar kernel, for values in range (the others: see above)
  }
  return fbatch<A>::load_aligned(v);
}

/** lanes<A> IEEE halves at p as floats, exactly (subnormals, infinities, NaNs included). */
template <class A>
inline fbatch<A> load_half(const std::byte* p) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
#endif
#if defined(__AVX2__) && defined(__F16C__)
  if constexpr (is_avx2<A>) return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>)
    return vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(reinterpret_cast<const std::uint8_t*>(p))));
#endif
  alignas(64) float tmp[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) tmp[i] = half_to_float(load_le<std::uint16_t>(p + 2 * i));
  return fbatch<A>::load_aligned(tmp);
}

/** lanes<A> bfloat16s at p as floats: each word moved to the top half of a float. */
template <class A>
inline fbatch<A> load_bf16(const std::byte* p) noexcept {
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    const uint16x4_t w = vreinterpret_u16_u8(vld1_u8(reinterpret_cast<const std::uint8_t*>(p)));
    return vreinterpretq_f32_u32(vshll_n_u16(w, 16));
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {  // interleaving zero words with the data puts each word on top of a float
    const __m128i w = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), w));
  }
#endif
  return as_float<A>(load_u16<A>(p) << 16);
}

/** 2 * lanes<A> bfloat16s at p: a gets the first lanes<A>. */
template <class A>
inline void load_bf16_pair(const std::byte* p, fbatch<A>& a, fbatch<A>& b) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {  // 8 words, one load
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), zero = _mm_setzero_si128();
    a = _mm_castsi128_ps(_mm_unpacklo_epi16(zero, w));
    b = _mm_castsi128_ps(_mm_unpackhi_epi16(zero, w));
    return;
  }
#endif
  a = load_bf16<A>(p);
  b = load_bf16<A>(p + 2 * lanes<A>);
}

// ---- 16 bytes at a time -------------------------------------------------------------------------

#if defined(__SSE2__) || defined(_M_X64)
namespace detail {
/// SSE2: the 16 bytes of x, zero- (Signed: sign-) extended into out[0..4), with unpacks only.
template <class A, bool Signed = false>
inline void unpack16_sse2(__m128i x, ibatch<A>* out) noexcept {
  if constexpr (Signed) {  // each byte to the top of its lane, then shifted down arithmetically
    const __m128i lo = _mm_unpacklo_epi8(x, x), hi = _mm_unpackhi_epi8(x, x);
    out[0] = _mm_srai_epi32(_mm_unpacklo_epi16(lo, lo), 24);
    out[1] = _mm_srai_epi32(_mm_unpackhi_epi16(lo, lo), 24);
    out[2] = _mm_srai_epi32(_mm_unpacklo_epi16(hi, hi), 24);
    out[3] = _mm_srai_epi32(_mm_unpackhi_epi16(hi, hi), 24);
  } else {
    const __m128i z = _mm_setzero_si128();
    const __m128i lo = _mm_unpacklo_epi8(x, z), hi = _mm_unpackhi_epi8(x, z);
    out[0] = _mm_unpacklo_epi16(lo, z);
    out[1] = _mm_unpackhi_epi16(lo, z);
    out[2] = _mm_unpacklo_epi16(hi, z);
    out[3] = _mm_unpackhi_epi16(hi, z);
  }
}
}  // namespace detail
#endif

/**
 * The 16 bytes at p, zero- (Signed: sign-) extended into out[0 .. 16 / lanes<A>): the widening loads
 * above, except on SSE2 without SSE4.1, where one load and unpacks serve 16 weights.
 */
template <class A, bool Signed = false>
inline void widen16(const std::byte* p, ibatch<A>* out) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse2_only<A>) {
    detail::unpack16_sse2<A, Signed>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), out);
    return;
  }
#endif
  for (std::size_t k = 0; k < 16 / lanes<A>; ++k) {
    out[k] = Signed ? load_i8<A>(p + k * lanes<A>) : load_u8<A>(p + k * lanes<A>);
  }
}

/**
 * The 16 bytes lo (bytes 0-7, least significant first) and hi (8-15), zero-extended into
 * out[0 .. 16 / lanes<A>): for bytes assembled in scalar registers (packed scales), without the trip
 * through memory (a vector load of bytes just stored one word at a time is not forwarded and stalls).
 */
template <class A>
inline void bytes16(std::uint64_t lo, std::uint64_t hi, ibatch<A>* out) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_avx512<A> || is_avx2<A> || is_sse<A>) {
    const __m128i x = _mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo));
#if defined(__AVX512F__) && defined(__AVX512BW__)
    if constexpr (is_avx512<A>) {
      out[0] = _mm512_cvtepu8_epi32(x);
      return;
    }
#endif
#if defined(__AVX2__)
    if constexpr (is_avx2<A>) {
      out[0] = _mm256_cvtepu8_epi32(x);
      out[1] = _mm256_cvtepu8_epi32(_mm_unpackhi_epi64(x, x));
      return;
    }
#endif
#if defined(__SSE4_1__)
    if constexpr (is_sse41<A>) {
      out[0] = _mm_cvtepu8_epi32(x);
      out[1] = _mm_cvtepu8_epi32(_mm_srli_si128(x, 4));
      out[2] = _mm_cvtepu8_epi32(_mm_srli_si128(x, 8));
      out[3] = _mm_cvtepu8_epi32(_mm_srli_si128(x, 12));
      return;
    }
#endif
    if constexpr (is_sse2_only<A>) {
      detail::unpack16_sse2<A>(x, out);
      return;
    }
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    const uint8x16_t v = vcombine_u8(vcreate_u8(lo), vcreate_u8(hi));
    const uint16x8_t a = vmovl_u8(vget_low_u8(v)), b = vmovl_high_u8(v);
    out[0] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(a)));
    out[1] = vreinterpretq_s32_u32(vmovl_high_u16(a));
    out[2] = vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(b)));
    out[3] = vreinterpretq_s32_u32(vmovl_high_u16(b));
    return;
  }
#endif
  alignas(64) std::byte bytes[16];
  for (int k = 0; k < 8; ++k) {
    bytes[k] = static_cast<std::byte>(lo >> (8 * k));
    bytes[8 + k] = static_cast<std::byte>(hi >> (8 * k));
  }
  for (std::size_t k = 0; k < 16 / lanes<A>; ++k) out[k] = load_u8<A>(bytes + k * lanes<A>);
}

/**
 * Lane i = all ones if bit i of `word` is set, else 0 (bits 0 to lanes<A> - 1): one bit per weight made
 * a lane mask, for the 1-bit types. (A masked move on AVX-512; and + compare on AVX2, SSE and NEON.)
 */
template <class A>
inline ibatch<A> bit_lanes(std::uint32_t word) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_maskz_mov_epi32(static_cast<__mmask16>(word), _mm512_set1_epi32(-1));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) {
    const __m256i bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(word)), bits), bits);
  }
#endif
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_sse<A>) {
    const __m128i bits = _mm_setr_epi32(1, 2, 4, 8);
    return _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(static_cast<int>(word)), bits), bits);
  }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  if constexpr (is_neon64<A>) {
    const std::uint32_t b[4] = {1, 2, 4, 8};
    return vreinterpretq_s32_u32(vtstq_u32(vdupq_n_u32(word), vld1q_u32(b)));
  }
#endif
  alignas(64) std::int32_t t[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) t[i] = ((word >> i) & 1u) != 0 ? -1 : 0;
  return ibatch<A>::load_aligned(t);
}

/** Lane i = 0x10 if bit i of `word` is set, else 0: the fifth bits of lanes<A> weights of the q5 types. */
template <class A>
inline ibatch<A> fifth_bits(std::uint32_t word) noexcept {
  return bit_lanes<A>(word) & ibatch<A>(0x10);
}

/**
 * Lane i of x shifted right (arithmetically) by lane i of n, 0 <= n < 32: one instruction on AVX2 and
 * AVX-512 (xsimd 8.1 runs AVX-512's element by element), xsimd's own elsewhere.
 */
template <class A>
inline ibatch<A> shift_right_lanes(const ibatch<A>& x, const ibatch<A>& n) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_srav_epi32(x, n);
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_srav_epi32(x, n);
#endif
  return x >> n;
}

// ---- Lookups ------------------------------------------------------------------------------------

/**
 * table[idx & (lanes<A> - 1)] per lane, a register-wide float permute (vpermps): the permute ignores
 * the index bits above lut_bits<A>, which lets callers skip masking. Only where lut_bits<A> != 0.
 */
template <class A>
inline fbatch<A> permute(const fbatch<A>& table, const ibatch<A>& idx) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) return _mm512_permutexvar_ps(idx, table);
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A>) return _mm256_permutevar8x32_ps(table, idx);
#endif
  static_assert(lut_bits<A> != 0, "no register-wide permute");
  (void)idx;
  return table;
}

/** Lane i = p[i % G]: G consecutive floats repeated across the vector (one load on AVX2/AVX-512). */
template <class A, std::size_t G>
inline fbatch<A> repeat(const float* p) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A> && G == 4) return _mm512_broadcast_f32x4(_mm_loadu_ps(p));
#endif
#if defined(__AVX2__)
  if constexpr (is_avx2<A> && G == 2) {
    double w;
    std::memcpy(&w, p, sizeof w);
    return _mm256_castpd_ps(_mm256_set1_pd(w));
  }
#endif
  alignas(64) float v[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) v[i] = p[i % G];
  return fbatch<A>::load_aligned(v);
}

/**
 * A 16-entry int8 table looked up by the 4-bit nibbles of 16 bytes at a time (the non-linear 4-bit
 * types), in the form the instruction set looks it up fastest: a byte-shuffle register (pshufb, tbl),
 * or, on SSE2 without a byte shuffle, `pairs`: a 256-entry table of both nibbles' levels per byte.
 */
template <class A>
class nibble_table {
  static constexpr std::size_t L = lanes<A>;
  static_assert(16 % L == 0);

 public:
  /**
   * Keeps both pointers, which must outlive the object, and loads `table` into a register where the
   * instruction set has a byte shuffle.
   * @param table the 16 levels
   * @param pairs per byte value q, table[q & 15] | table[q >> 4] << 8 (the SSE2 path's one lookup per
   *              byte); see tables::nibble_pairs
   */
  nibble_table(const std::int8_t* table, const std::uint16_t* pairs) noexcept : table_(table), pairs_(pairs) {
#if defined(__SSE4_1__) || defined(__AVX2__)  // (MSVC defines only the latter)
    if constexpr (is_avx2<A> || is_sse41<A>) bytes_ = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table));
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
    if constexpr (is_neon64<A>) bytes_ = vld1q_s8(table);
#endif
  }

  /**
   * The levels of the 16 bytes at qs as int32: lo[] gets table[qs[j] & 15], hi[] gets table[qs[j] >> 4],
   * j = 0..15, 16 / lanes<A> batches each.
   */
  void lookup(const std::byte* qs, ibatch<A>* lo, ibatch<A>* hi) const noexcept {
#if defined(__SSE4_1__) || defined(__AVX2__)
    if constexpr (is_avx2<A> || is_sse41<A>) {
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
      const __m128i low4 = _mm_set1_epi8(0x0F);
      widen_levels(_mm_shuffle_epi8(bytes_, _mm_and_si128(q, low4)), lo);
      widen_levels(_mm_shuffle_epi8(bytes_, _mm_and_si128(_mm_srli_epi16(q, 4), low4)), hi);
      return;
    }
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
    if constexpr (is_neon64<A>) {
      const uint8x16_t q = vld1q_u8(reinterpret_cast<const std::uint8_t*>(qs));
      widen_levels(vqtbl1q_s8(bytes_, vandq_u8(q, vdupq_n_u8(0x0F))), lo);
      widen_levels(vqtbl1q_s8(bytes_, vshrq_n_u8(q, 4)), hi);
      return;
    }
#endif
#if defined(__SSE2__) || defined(_M_X64)
    if constexpr (is_sse2_only<A>) {  // one 16-bit pair lookup per byte (pinsrw), then split with shifts
      for (int h = 0; h < 2; ++h) {
        const std::byte* q = qs + 8 * h;
        __m128i w = _mm_cvtsi32_si128(pairs_[load_le<std::uint8_t>(q)]);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 1)], 1);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 2)], 2);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 3)], 3);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 4)], 4);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 5)], 5);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 6)], 6);
        w = _mm_insert_epi16(w, pairs_[load_le<std::uint8_t>(q + 7)], 7);
        const __m128i l = _mm_srai_epi16(_mm_slli_epi16(w, 8), 8), u = _mm_srai_epi16(w, 8);
        // int16 -> int32: each word into the top half of a dword, then an arithmetic shift back.
        const __m128i zero = _mm_setzero_si128();
        lo[2 * h] = _mm_srai_epi32(_mm_unpacklo_epi16(zero, l), 16);
        lo[2 * h + 1] = _mm_srai_epi32(_mm_unpackhi_epi16(zero, l), 16);
        hi[2 * h] = _mm_srai_epi32(_mm_unpacklo_epi16(zero, u), 16);
        hi[2 * h + 1] = _mm_srai_epi32(_mm_unpackhi_epi16(zero, u), 16);
      }
      return;
    }
#endif
    alignas(64) std::int32_t l[16], u[16];
    for (int j = 0; j < 16; ++j) {
      const unsigned q = load_le<std::uint8_t>(qs + j);
      l[j] = table_[q & 0x0Fu];
      u[j] = table_[q >> 4];
    }
    for (std::size_t k = 0; k < 16 / L; ++k) {
      lo[k] = ibatch<A>::load_aligned(l + k * L);
      hi[k] = ibatch<A>::load_aligned(u + k * L);
    }
  }

 private:
#if defined(__SSE4_1__) || defined(__AVX2__)
  /// 16 int8 levels -> 16 / lanes<A> int32 batches.
  static void widen_levels(__m128i v, ibatch<A>* out) noexcept {
    if constexpr (is_avx2<A>) {
      out[0] = _mm256_cvtepi8_epi32(v);
      out[1] = _mm256_cvtepi8_epi32(_mm_srli_si128(v, 8));
    } else {
      out[0] = _mm_cvtepi8_epi32(v);
      out[1] = _mm_cvtepi8_epi32(_mm_srli_si128(v, 4));
      out[2] = _mm_cvtepi8_epi32(_mm_srli_si128(v, 8));
      out[3] = _mm_cvtepi8_epi32(_mm_srli_si128(v, 12));
    }
  }
  __m128i bytes_{};
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
  static void widen_levels(int8x16_t v, ibatch<A>* out) noexcept {
    const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_high_s8(v);
    out[0] = vmovl_s16(vget_low_s16(lo));
    out[1] = vmovl_high_s16(lo);
    out[2] = vmovl_s16(vget_low_s16(hi));
    out[3] = vmovl_high_s16(hi);
  }
  int8x16_t bytes_{};
#endif
  const std::int8_t* table_;
  const std::uint16_t* pairs_;
};

// ---- Byte-parallel assembly ---------------------------------------------------------------------
// The bit-heavy types (q3_K, q5_K, q6_K) assemble each weight's bits a byte at a time, 4 * lanes<S>
// weights per instruction, in a batch of arch S = swar_arch<A>. Every step moves bits only within their
// byte (shifts are masked), so the order of bytes in a lane never matters.

/** 4 * `lanes<S>` bytes at p, four to an int32 lane. */
template <class S>
inline ibatch<S> load_bytes(const std::byte* p) noexcept {
  return ibatch<S>::load_unaligned(reinterpret_cast<const std::int32_t*>(p));
}

/** Byte b in all four bytes of every lane. */
template <class S>
inline ibatch<S> bytes_of(std::uint8_t b) noexcept {
  return ibatch<S>(static_cast<std::int32_t>(0x01010101u * b));
}

/** Bit `From` of each byte of v moved to bit `To` of the same byte, all other bits cleared. */
template <int From, int To, class S>
inline ibatch<S> byte_bit_to(const ibatch<S>& v) noexcept {
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
inline ibatch<S> byte_pair(const ibatch<S>& v) noexcept {
  if constexpr (Pair == 3)
    return (v >> 6) & bytes_of<S>(3);
  else if constexpr (Pair == 0)
    return v & bytes_of<S>(3);
  else
    return (v >> (2 * Pair)) & bytes_of<S>(3);
}

/** v - b in each byte, wrapping (weight bytes made signed before widening). */
template <class S>
inline ibatch<S> sub_bytes(const ibatch<S>& v, std::uint8_t b) noexcept {
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
inline void widen_bytes(const ibatch<S>& v, ibatch<A>* out) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
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

// ---- Stores -------------------------------------------------------------------------------------

/** A non-temporal store of v at dst, 64-byte aligned: writes a whole line without reading it first.
    Only where stream_stores<A>; stream_fence() orders the stores before anything after it. */
template <class A>
inline void stream_store(float* dst, const fbatch<A>& v) noexcept {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  if constexpr (is_avx512<A>) {
    _mm512_stream_ps(dst, v);
    return;
  }
#endif
  static_assert(stream_stores<A>, "no streaming stores");
  v.store_aligned(dst);
}

/** Orders the streaming stores before later stores (sfence); nothing where there are none. */
inline void stream_fence() noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  _mm_sfence();
#endif
}

// ---- Loop helpers -------------------------------------------------------------------------------

/// A compile-time index, as `unroll` passes them: every shift count and table index in the body is then a
/// constant.
template <int I>
using int_c = std::integral_constant<int, I>;

namespace detail {
template <class F, int... I>
inline void unroll_each(F& f, std::integer_sequence<int, I...> /*indices*/) noexcept {
  (f(int_c<I>{}), ...);
}
}  // namespace detail

/** Calls f with int_c<0> ... int_c<N - 1>, unrolled. */
template <int N, class F>
inline void unroll(F&& f) noexcept {
  detail::unroll_each(f, std::make_integer_sequence<int, N>{});
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_SIMD_OPS_HPP
