#ifndef GGUF_KERNELS_SIMD_K_QUANTS_HPP
#define GGUF_KERNELS_SIMD_K_QUANTS_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "gguf/detail/isa.hpp"
#include "gguf/detail/xsimd_compat.hpp"
#include "gguf/kernels/blocks.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of scalar/k_quants.hpp, one per block type, each written once, generic over the xsimd
// Arch; ISA-specific instructions live in the small helpers of detail_kq, each with a portable path.
//
// Bit-exact with the scalar kernels, NaN and Inf scales included:
//  - A sub-block's scale d * sc (and min dmin * m) is the scalar kernel's single float product,
//    computed in a vector lane, then broadcast. -(dmin * m) is computed as (-dmin) * m: IEEE products
//    are sign-symmetric, so that is exactly the negation (signed zeros included).
//  - q2_K, q4_K, q5_K: the scalar kernel rounds dl * q, then adds -ml. Here xsimd::fma does both: with
//    a half d (11 significant bits), a scale of at most 6 bits and q of at most 5, dl and dl * q are
//    exact in float (<= 22 bits; no overflow, and no underflow: d's smallest step, 2^-24, is a normal
//    float), so rounding the product changes nothing and fused (or xsimd's unfused fallback) and the
//    scalar's unfused evaluation agree to the bit.
//  - q3_K, q6_K: x = dl * q, one product, as in the scalar kernel; the integer q is exact in float.
//    q8_K: d * q, d a float32.
//  - Where weights are looked up instead of converted (see `lookup`), each table entry is computed by
//    that same expression for the entry's q, so a lookup returns what the arithmetic would have.
//
// Speed. Single thread, output in L2, the ceiling is the store path (on the Zen 5 this was tuned on:
// ~1.5 cycles per 64-byte store, one store per cycle; FMA, int->float, shifts and shuffles issue twice
// per cycle, and/or/add four times). So per vector of output the kernels keep the work to a few
// instructions, and hoist everything per block:
//  - Each block's sub-block scales are computed as vectors into a table ahead of time, a chunk of
//    blocks at a time (`chunked`), and broadcast from L1 as the weights need them.
//  - The packed 6-bit scales of q3_K/q4_K/q5_K are unpacked four at a time in 32-bit scalar words and
//    widened in one go (`bytes16`).
//  - Bit-heavy types (q3_K, q5_K, q6_K) assemble each weight's bits a byte at a time, 32 weights per
//    instruction, then widen (`run_groups`): from registers on AVX-512, through a small buffer
//    elsewhere; q6_K's (and q3_K's) offset is subtracted there too, a byte at a time.
//  - With a register-wide float permute (AVX2: 8 entries, AVX-512: 16), a weight of few enough values
//    is looked up in a small table instead of masked, converted and scaled: q4_K (AVX-512), q3_K, and
//    q2_K, whose AVX-512 tables hold four sub-blocks each (no per-vector arithmetic at all).

namespace detail_kq {

/**
 * The 16 bytes lo (bytes 0-7, least significant first) and hi (8-15), zero-extended into
 * out[0 .. 16 / lanes<A>): for scale bytes assembled in scalar registers, without the trip through
 * memory (a vector load of bytes just stored one word at a time is not forwarded and stalls).
 */
template <class A>
inline void bytes16(std::uint64_t lo, std::uint64_t hi, ibatch<A>* out) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (is_avx512<A> || is_avx2<A> || is_sse41<A> || is_sse2_only<A>) {
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
      unpack16_sse2<A>(x, out);
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

/// Lane i = f(i), for constant per-lane patterns.
template <class A, class F>
inline fbatch<A> lane_map(F f) noexcept {
  alignas(64) float v[lanes<A>];
  for (std::size_t i = 0; i < lanes<A>; ++i) v[i] = f(static_cast<int>(i));
  return fbatch<A>::load_aligned(v);
}

/// Makes the compiler store x and read it back from memory (see `chunked`).
template <class T>
inline void in_memory(T& x) noexcept {
#if defined(__GNUC__)
  __asm__("" : "+m"(x));
#else
  (void)x;
#endif
}

/// f(integral_constant<int, 0>), ..., f(integral_constant<int, N - 1>): compile-time indices, so that
/// every shift count and table index below is a constant.
template <class F, int... I>
inline void unroll_each(F& f, std::integer_sequence<int, I...> /*indices*/) noexcept {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
inline void unroll(F&& f) noexcept {
  unroll_each(f, std::make_integer_sequence<int, N>{});
}
template <int I>
using int_c = std::integral_constant<int, I>;

// ---- Lookups -------------------------------------------------------------------------------------

/// log2 of the entries of a register-wide float permute (vpermps): 4 on AVX-512, 3 on AVX2, else 0.
template <class A>
inline constexpr int lut_bits = is_avx512<A> ? 4
                                : is_avx2<A> ? 3
                                             : 0;

/// table[idx & (lanes<A> - 1)] per lane: the permute ignores the index bits above lut_bits<A>, which
/// lets callers skip masking. Only where lut_bits<A> != 0.
template <class A>
inline fbatch<A> lookup(const fbatch<A>& table, const ibatch<A>& idx) noexcept {
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

/// Lane i = p[i % G]: G consecutive floats repeated across the vector (one load on AVX2/AVX-512).
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

// ---- Byte-parallel assembly ----------------------------------------------------------------------

/// The integer batch the byte-parallel steps run on: 256 bits where the ISA has them (AVX-512
/// included, whose 32 bytes then widen to two batches), else A itself (16 bytes).
template <class A, class = void>
struct swar_arch_t {
  using type = A;
};
#if defined(__AVX2__)
template <class A>
struct swar_arch_t<A, std::enable_if_t<is_avx512<A>>> {
  using type = xsimd::avx2;
};
#endif
template <class A>
using swar_arch = typename swar_arch_t<A>::type;

/// 4 * lanes<S> bytes at p, four to an int32 lane. Every byte-parallel step moves bits only within
/// their byte (shifts are masked), so the order of bytes in a lane never matters.
template <class S>
inline ibatch<S> load_bytes(const std::byte* p) noexcept {
  return ibatch<S>::load_unaligned(reinterpret_cast<const std::int32_t*>(p));
}

/// Byte b in all four bytes of every lane.
template <class S>
inline ibatch<S> bytes_of(std::uint8_t b) noexcept {
  return ibatch<S>(static_cast<std::int32_t>(0x01010101u * b));
}

/// Bit `From` of each byte of v moved to bit `To` of the same byte, all other bits cleared.
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

/// Bit pair `Pair` (bits 2 Pair, 2 Pair + 1) of each byte of v, in bits 0-1.
template <int Pair, class S>
inline ibatch<S> byte_pair(const ibatch<S>& v) noexcept {
  if constexpr (Pair == 3)
    return (v >> 6) & bytes_of<S>(3);
  else if constexpr (Pair == 0)
    return v & bytes_of<S>(3);
  else
    return (v >> (2 * Pair)) & bytes_of<S>(3);
}

/// v - b in each byte, wrapping (the weight bytes of q6_K made signed before widening).
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

/// AVX-512 widens the assembled bytes straight from the register: two 16-lane batches per 32 bytes,
/// three instructions and no memory. Elsewhere a widening load is one instruction, cheaper than
/// widening from a register, and the bytes go through a small buffer (see `run_groups`).
template <class A>
inline constexpr bool widen_in_registers = is_avx512<A>&& lanes<swar_arch<A>> == 8;

/// The 4 * lanes<S> bytes of v, zero- (Signed: sign-) extended into out[]. Only where
/// widen_in_registers<A>.
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

// ---- Drivers -------------------------------------------------------------------------------------

inline constexpr std::size_t chunk = 8;

/**
 * Runs a kernel over chunks of blocks: first `scales(block, table)` fills each block's table of T
 * sub-block scales (vector stores), then `weights(block, table, out)` dequantizes each block,
 * broadcasting from its table. The split is for speed: a broadcast load of one float out of a vector
 * store still in the store buffer is not forwarded and waits for the store to commit, stalling every
 * block (measured: ~20% on q2_K); a chunk later the tables are plain L1 hits.
 */
template <class B, std::size_t T, class Scales, class Weights>
inline void chunked(const std::byte* src, float* dst, std::size_t nb, Scales&& scales, Weights&& weights) noexcept {
  alignas(64) float tab[chunk][T];
  while (nb != 0) {
    const std::size_t n = nb < chunk ? nb : chunk;
    for (std::size_t i = 0; i < n; ++i) scales(src + i * sizeof(B), tab[i]);
    in_memory(tab);
    for (std::size_t i = 0; i < n; ++i) {
      weights(src + i * sizeof(B), static_cast<const float*>(tab[i]), dst + 256 * i);
    }
    src += n * sizeof(B);
    dst += 256 * n;
    nb -= n;
  }
}

/**
 * The driver of the bit-heavy types (q3_K, q5_K, q6_K), which assemble each weight's bits a byte at a
 * time, 4 * lanes<S> weights per instruction, then widen. On top of `chunked`'s `scales`:
 * `groups(block, put)` calls put(int_c<g>, o, v) with the weight bytes (unsigned) o .. o + 4 lanes<S> - 1
 * of each 32-weight group g (0..7, weights 32g .. 32g + 31 of the block); `weights(q, table, int_c<g>, l)`
 * turns lanes<A> of them, widened to int32 (l = offset of the first in the group), into floats.
 * Either put widens and stores at once (widen_in_registers), or it parks the bytes in a chunk buffer
 * that a second loop widens with loads.
 */
template <class A, class B, std::size_t T, bool Signed, class Scales, class Groups, class Weights>
inline void run_groups(const std::byte* src, float* dst, std::size_t nb, Scales&& scales, Groups&& groups,
                       Weights&& weights) noexcept {
  using S = swar_arch<A>;
  constexpr std::size_t L = lanes<A>, P = 4 * lanes<S>;
  static_assert(32 % P == 0 && P % L == 0);
  alignas(64) float tab[chunk][T];
  if constexpr (widen_in_registers<A>) {
    while (nb != 0) {
      const std::size_t n = nb < chunk ? nb : chunk;
      for (std::size_t i = 0; i < n; ++i) scales(src + i * sizeof(B), tab[i]);
      in_memory(tab);
      for (std::size_t i = 0; i < n; ++i) {
        const float* t = tab[i];
        float* out = dst + 256 * i;
        groups(src + i * sizeof(B), [&](auto g, std::size_t o, const ibatch<S>& v) {
          ibatch<A> q[P / L];
          widen_bytes<A, Signed, S>(v, q);
          for (std::size_t k = 0; k < P / L; ++k) {
            weights(q[k], t, g, o + k * L).store_unaligned(out + 32 * g + o + k * L);
          }
        });
      }
      src += n * sizeof(B);
      dst += 256 * n;
      nb -= n;
    }
  } else {
    alignas(64) std::int32_t buf[chunk][64];  // each block's 256 weight bytes, read back as bytes
    while (nb != 0) {
      const std::size_t n = nb < chunk ? nb : chunk;
      for (std::size_t i = 0; i < n; ++i) {
        scales(src + i * sizeof(B), tab[i]);
        groups(src + i * sizeof(B),
               [&](auto g, std::size_t o, const ibatch<S>& v) { v.store_aligned(buf[i] + 8 * g + o / 4); });
      }
      in_memory(tab);
      in_memory(buf);
      for (std::size_t i = 0; i < n; ++i) {
        const float* t = tab[i];
        float* out = dst + 256 * i;
        const std::byte* q = reinterpret_cast<const std::byte*>(buf[i]);
        unroll<8>([&](auto g) {
          for (std::size_t l = 0; l < 32; l += 16) {
            ibatch<A> v[16 / L];
            widen16<A, Signed>(q + 32 * g + l, v);
            for (std::size_t k = 0; k < 16 / L; ++k) {
              weights(v[k], t, g, l + k * L).store_unaligned(out + 32 * g + l + k * L);
            }
          }
        });
      }
      src += n * sizeof(B);
      dst += 256 * n;
      nb -= n;
    }
  }
}

// ---- Scales --------------------------------------------------------------------------------------

/**
 * q3_K's sixteen 6-bit scales (see scalar q3_scale), unpacked four at a time in 32-bit words and
 * widened: s[k] holds scales k * lanes<A> ...; still offset by 32.
 */
template <class A>
inline void q3_scales(const std::byte* sp, ibatch<A>* s) noexcept {
  const std::uint32_t a0 = detail::le32(sp), a1 = detail::le32(sp + 4), a2 = detail::le32(sp + 8);
  const std::uint32_t s0 = (a0 & 0x0F0F0F0F) | ((a2 & 0x03030303) << 4);         // scales 0-3
  const std::uint32_t s1 = (a1 & 0x0F0F0F0F) | (((a2 >> 2) & 0x03030303) << 4);  // 4-7
  const std::uint32_t s2 = ((a0 >> 4) & 0x0F0F0F0F) | (((a2 >> 4) & 0x03030303) << 4);
  const std::uint32_t s3 = ((a1 >> 4) & 0x0F0F0F0F) | (((a2 >> 6) & 0x03030303) << 4);
  bytes16<A>(s0 | std::uint64_t{s1} << 32, s2 | std::uint64_t{s3} << 32, s);
}

/**
 * q4_K/q5_K: table[0..7] = d * sc, table[8..15] = -(dmin * m) of the 8 sub-blocks (see scalar k4:
 * bytes 0-3 hold sc 0-3, 4-7 m 0-3, the nibbles of 8-11 the low bits of sc/m 4-7, the spare top bits
 * of 0-7 their high bits). One 64-byte store on AVX-512.
 */
template <class A, class B>
inline void k4_scales(const std::byte* b, float* t) noexcept {
  constexpr std::size_t L = lanes<A>;
  const std::byte* sp = b + offsetof(B, scales);
  const std::uint32_t a0 = detail::le32(sp), a1 = detail::le32(sp + 4), a2 = detail::le32(sp + 8);
  const std::uint32_t sc_hi = (a2 & 0x0F0F0F0F) | ((a0 >> 2) & 0x30303030);
  const std::uint32_t m_hi = ((a2 >> 4) & 0x0F0F0F0F) | ((a1 >> 2) & 0x30303030);
  ibatch<A> s[16 / L];
  bytes16<A>((a0 & 0x3F3F3F3F) | std::uint64_t{sc_hi} << 32, (a1 & 0x3F3F3F3F) | std::uint64_t{m_hi} << 32, s);
  const fbatch<A> d(half_scale(b + offsetof(B, d))), ndmin(-half_scale(b + offsetof(B, dmin)));
  for (std::size_t k = 0; k < 16 / L; ++k) {
    fbatch<A> mul = k * L < 8 ? d : ndmin;
    if constexpr (L > 8) {  // sc 0-7 in lanes 0-7, m 0-7 in lanes 8-15
      mul = xsimd::select(lane_map<A>([](int i) { return static_cast<float>(i); }) < fbatch<A>(8.0f), d, ndmin);
    }
    (to_float<A>(s[k]) * mul).store_aligned(t + k * L);
  }
}

}  // namespace detail_kq

// ---- Kernels -------------------------------------------------------------------------------------

/// q2_K: 16 sub-blocks of 16 two-bit weights; x = (d * (sc & 15)) * q - dmin * (sc >> 4).
template <class A>
void dequant_q2_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q2_K;
  constexpr std::size_t L = lanes<A>;
  detail_kq::chunked<B, 32>(
      src, dst, nb,
      [](const std::byte* b, float* t) {  // t[c] = dl, t[16 + c] = -ml of sub-block c
        const fbatch<A> d(half_scale(b + offsetof(B, d))), ndmin(-half_scale(b + offsetof(B, dmin)));
        ibatch<A> s[16 / L];
        widen16<A>(b + offsetof(B, scales), s);
        for (std::size_t k = 0; k < 16 / L; ++k) {
          (to_float<A>(s[k] & ibatch<A>(15)) * d).store_aligned(t + k * L);
          (to_float<A>(s[k] >> 4) * ndmin).store_aligned(t + 16 + k * L);
        }
      },
      // Sub-block c = 8n + 2s + half: bit pair s of qs[32n + 16 half + l], l < 16 (weights 16c + l).
      [](const std::byte* b, const float* t, float* out) {
        const std::byte* qs = b + offsetof(B, qs);
        if constexpr (detail_kq::lut_bits<A> >= 3) {
          // Tables of (q, sub-block) for G consecutive sub-blocks: entry i is q = (i >> log2 G) & 3 of
          // sub-block G k + i % G, so the index is q << log2 G | c % G (bits above lut_bits ignored).
          // AVX-512: G = 4, four tables per block and no per-vector arithmetic. AVX2: G = 1, a table
          // per sub-block (grouping 2 costs more index work than it saves).
          constexpr int G = detail_kq::lut_bits<A> >= 4 ? 4 : 1, gb = G == 4 ? 2 : 0;
          const fbatch<A> q = detail_kq::lane_map<A>([](int i) { return static_cast<float>((i >> gb) & 3); });
          const auto table = [&](int k) {
            return xsimd::fma(q, detail_kq::repeat<A, G>(t + G * k), detail_kq::repeat<A, G>(t + 16 + G * k));
          };
          fbatch<A> tab[G > 1 ? 16 / G : 1];
          if constexpr (G > 1) {
            for (int k = 0; k < 16 / G; ++k) tab[k] = table(k);
          }
          detail_kq::unroll<4>([&](auto g) {  // 16 bytes of qs: n = g / 2, half = g % 2
            constexpr int n = g / 2, half = g % 2;
            ibatch<A> ws[16 / L];
            widen16<A>(qs + 16 * g, ws);
            for (std::size_t l = 0; l < 16; l += L) {
              const ibatch<A>& w = ws[l / L];
              detail_kq::unroll<4>([&](auto s) {
                constexpr int c = 8 * n + 2 * s + half, shift = 2 * s - gb;
                ibatch<A> idx;
                if constexpr (shift < 0) {  // low bits already clear
                  idx = w << -shift;
                  if constexpr (c % G != 0) idx = idx | ibatch<A>(c % G);
                } else if constexpr (G == 1) {
                  idx = shift ? w >> shift : w;
                } else {
                  idx = shift ? w >> shift : w;
                  if constexpr (c % G == G - 1)
                    idx = idx | ibatch<A>(G - 1);
                  else
                    idx = (idx & ibatch<A>(~(G - 1))) | ibatch<A>(c % G);
                }
                detail_kq::lookup<A>(G > 1 ? tab[c / G] : table(c), idx).store_unaligned(out + 16 * c + l);
              });
            }
          });
        } else {
          detail_kq::unroll<4>([&](auto g) {
            constexpr int n = g / 2, half = g % 2;
            ibatch<A> ws[16 / L];
            widen16<A>(qs + 16 * g, ws);
            for (std::size_t l = 0; l < 16; l += L) {
              const ibatch<A>& w = ws[l / L];
              detail_kq::unroll<4>([&](auto s) {
                constexpr int c = 8 * n + 2 * s + half;
                const ibatch<A> q = s == 0 ? (w & ibatch<A>(3)) : s == 3 ? (w >> 6) : ((w >> (2 * s)) & ibatch<A>(3));
                xsimd::fma(to_float<A>(q), fbatch<A>(t[c]), fbatch<A>(t[16 + c])).store_unaligned(out + 16 * c + l);
              });
            }
          });
        }
      });
}

/// q3_K: 16 sub-blocks of 16 three-bit weights (2 low bits in qs, the high bit in hmask, set = +0,
/// clear = -4); x = (d * (scale - 32)) * q with q in -4..3.
template <class A>
void dequant_q3_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q3_K;
  using S = detail_kq::swar_arch<A>;
  constexpr bool lut = detail_kq::lut_bits<A> >= 3;  // else the bytes are made signed, q - 4, as in q6_K
  detail_kq::run_groups<A, B, 16, !lut>(
      src, dst, nb,
      [](const std::byte* b, float* t) {  // t[c] = dl of sub-block c
        constexpr std::size_t L = lanes<A>;
        ibatch<A> s[16 / L];
        detail_kq::q3_scales<A>(b + offsetof(B, scales), s);
        const fbatch<A> d(half_scale(b + offsetof(B, d)));
        for (std::size_t k = 0; k < 16 / L; ++k) (to_float<A>(s[k] - ibatch<A>(32)) * d).store_aligned(t + k * L);
      },
      // Group g = 4n + s: bit pair s of qs[32n + l] plus 4 * bit g of hmask[l] (weights 128n + 32s + l).
      [](const std::byte* b, auto&& put) {
        for (std::size_t o = 0; o < 32; o += 4 * lanes<S>) {
          const ibatch<S> h = detail_kq::load_bytes<S>(b + offsetof(B, hmask) + o);
          detail_kq::unroll<2>([&](auto n) {
            const ibatch<S> q = detail_kq::load_bytes<S>(b + offsetof(B, qs) + 32 * n + o);
            detail_kq::unroll<4>([&](auto s) {
              constexpr int g = 4 * n + s;
              const ibatch<S> v = detail_kq::byte_pair<s, S>(q) | detail_kq::byte_bit_to<g, 2, S>(h);
              put(detail_kq::int_c<g>{}, o, lut ? v : detail_kq::sub_bytes<S>(v, 4));
            });
          });
        }
      },
      // q = byte - 4 (looked up, or already subtracted); sub-block 2g + l / 16.
      [](const ibatch<A>& q, const float* t, auto g, std::size_t l) {
        const fbatch<A> dl(t[2 * g + l / 16]);
        if constexpr (lut) {
          const fbatch<A> v = detail_kq::lane_map<A>([](int i) { return static_cast<float>((i & 7) - 4); });
          return detail_kq::lookup<A>(v * dl, q);
        } else {
          return to_float<A>(q) * dl;
        }
      });
}

/// q4_K: 8 sub-blocks of 32 four-bit weights with 6-bit scales and mins; x = (d * sc) * q - dmin * m.
template <class A>
void dequant_q4_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q4_K;
  constexpr std::size_t L = lanes<A>;
  detail_kq::chunked<B, 16>(
      src, dst, nb, [](const std::byte* b, float* t) { detail_kq::k4_scales<A, B>(b, t); },
      // qs[32j + l] holds weight l of sub-block 2j (low nibble) and of 2j + 1 (high nibble).
      [](const std::byte* b, const float* t, float* out) {
        detail_kq::unroll<4>([&](auto j) {
          const fbatch<A> dl0(t[2 * j]), nml0(t[8 + 2 * j]), dl1(t[2 * j + 1]), nml1(t[9 + 2 * j]);
          if constexpr (detail_kq::lut_bits<A> >= 4) {  // 16-entry tables: the nibbles are indices
            const fbatch<A> q = detail_kq::lane_map<A>([](int i) { return static_cast<float>(i); });
            const fbatch<A> t0 = xsimd::fma(q, dl0, nml0), t1 = xsimd::fma(q, dl1, nml1);
            ibatch<A> ws[32 / L];
            widen16<A>(b + offsetof(B, qs) + 32 * j, ws);
            widen16<A>(b + offsetof(B, qs) + 32 * j + 16, ws + 16 / L);
            for (std::size_t l = 0; l < 32; l += L) {
              const ibatch<A>& w = ws[l / L];
              detail_kq::lookup<A>(t0, w).store_unaligned(out + 64 * j + l);
              detail_kq::lookup<A>(t1, w >> 4).store_unaligned(out + 64 * j + 32 + l);
            }
          } else {
            ibatch<A> ws[32 / L];
            widen16<A>(b + offsetof(B, qs) + 32 * j, ws);
            widen16<A>(b + offsetof(B, qs) + 32 * j + 16, ws + 16 / L);
            for (std::size_t l = 0; l < 32; l += L) {
              const ibatch<A>& w = ws[l / L];
              xsimd::fma(to_float<A>(w & ibatch<A>(15)), dl0, nml0).store_unaligned(out + 64 * j + l);
              xsimd::fma(to_float<A>(w >> 4), dl1, nml1).store_unaligned(out + 64 * j + 32 + l);
            }
          }
        });
      });
}

/// q5_K: q4_K with a fifth bit per weight, bit g of qh[l] for weight l of sub-block g.
template <class A>
void dequant_q5_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q5_K;
  using S = detail_kq::swar_arch<A>;
  detail_kq::run_groups<A, B, 16, false>(
      src, dst, nb, [](const std::byte* b, float* t) { detail_kq::k4_scales<A, B>(b, t); },
      // Group g = 2j + k = sub-block g: the low (k = 0) or high nibble of qs[32j + l], bit g of qh[l].
      [](const std::byte* b, auto&& put) {
        for (std::size_t o = 0; o < 32; o += 4 * lanes<S>) {
          const ibatch<S> h = detail_kq::load_bytes<S>(b + offsetof(B, qh) + o);
          const ibatch<S> low = detail_kq::bytes_of<S>(0x0F);
          detail_kq::unroll<4>([&](auto j) {
            const ibatch<S> q = detail_kq::load_bytes<S>(b + offsetof(B, qs) + 32 * j + o);
            put(detail_kq::int_c<2 * j>{}, o, (q & low) | detail_kq::byte_bit_to<2 * j, 4, S>(h));
            put(detail_kq::int_c<2 * j + 1>{}, o, ((q >> 4) & low) | detail_kq::byte_bit_to<2 * j + 1, 4, S>(h));
          });
        }
      },
      [](const ibatch<A>& q, const float* t, auto g, std::size_t) {
        return xsimd::fma(to_float<A>(q), fbatch<A>(t[g]), fbatch<A>(t[8 + g]));
      });
}

/// q6_K: 16 sub-blocks of 16 six-bit weights (4 low bits in ql, 2 high in qh) with int8 scales;
/// x = (d * sc) * (q - 32).
template <class A>
void dequant_q6_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q6_K;
  using S = detail_kq::swar_arch<A>;
  detail_kq::run_groups<A, B, 16, true>(
      src, dst, nb,
      [](const std::byte* b, float* t) {  // t[c] = dl of sub-block c
        constexpr std::size_t L = lanes<A>;
        const fbatch<A> d(half_scale(b + offsetof(B, d)));
        ibatch<A> s[16 / L];
        widen16<A, true>(b + offsetof(B, scales), s);
        for (std::size_t k = 0; k < 16 / L; ++k) (to_float<A>(s[k]) * d).store_aligned(t + k * L);
      },
      // Group g = 4n + k: the low (k < 2) or high nibble of ql[64n + 32(k % 2) + l] and, above it, bit
      // pair k of qh[32n + l] (weights 128n + 32k + l).
      [](const std::byte* b, auto&& put) {
        detail_kq::unroll<2>([&](auto n) {
          for (std::size_t o = 0; o < 32; o += 4 * lanes<S>) {
            const ibatch<S> h = detail_kq::load_bytes<S>(b + offsetof(B, qh) + 32 * n + o);
            const ibatch<S> w0 = detail_kq::load_bytes<S>(b + offsetof(B, ql) + 64 * n + o);
            const ibatch<S> w1 = detail_kq::load_bytes<S>(b + offsetof(B, ql) + 64 * n + 32 + o);
            const ibatch<S> low = detail_kq::bytes_of<S>(0x0F), top = detail_kq::bytes_of<S>(0x30);
            detail_kq::unroll<4>([&](auto k) {
              const ibatch<S>& w = k % 2 ? w1 : w0;
              const ibatch<S> nib = (k < 2 ? w : (w >> 4)) & low;
              ibatch<S> hb;
              if constexpr (k < 2)
                hb = (h << (4 - 2 * k)) & top;
              else if constexpr (k == 2)
                hb = h & top;
              else
                hb = (h >> 2) & top;
              put(detail_kq::int_c<4 * n + k>{}, o, detail_kq::sub_bytes<S>(nib | hb, 32));
            });
          }
        });
      },
      // q - 32 (already subtracted), scale of sub-block 2g + l / 16.
      [](const ibatch<A>& q, const float* t, auto g, std::size_t l) {
        return to_float<A>(q) * fbatch<A>(t[2 * g + l / 16]);
      });
}

/// q8_K: 256 int8 weights times a float32 d (the bsums are not needed to dequantize).
template <class A>
void dequant_q8_K(const std::byte* src, float* dst, std::size_t nb) noexcept {
  using B = blocks::q8_K;
  constexpr std::size_t L = lanes<A>;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 256) {
    const fbatch<A> d(std::bit_cast<float>(detail::le32(src + offsetof(B, d))));
    const std::byte* qs = src + offsetof(B, qs);
    for (std::size_t j = 0; j < 256; j += 16) {
      ibatch<A> q[16 / L];
      widen16<A, true>(qs + j, q);
      for (std::size_t k = 0; k < 16 / L; ++k) (to_float<A>(q[k]) * d).store_unaligned(dst + j + k * L);
    }
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SIMD_K_QUANTS_HPP
