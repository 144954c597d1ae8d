#ifndef GGUF_KERNELS_K_QUANTS_DEQUANTIZE_SIMD_HPP
#define GGUF_KERNELS_K_QUANTS_DEQUANTIZE_SIMD_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/barriers.hpp"
#include "gguf/kernels/simd/ops.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of k_quants/dequantize.hpp, one per block type, each written once, generic over the xsimd
// Arch; ISA-specific instructions live in ops.hpp, each with a portable path.
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
//  - Where weights are looked up instead of converted (see `permute`), each table entry is computed by
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

namespace detail {

// ---- Drivers -------------------------------------------------------------------------------------

inline constexpr std::size_t chunk = 8;

/**
 * Runs a kernel over chunks of blocks: first `scales(block, table)` fills each block's table of T
 * sub-block scales (vector stores), then `weights(block, table, out)` dequantizes each block,
 * broadcasting from its table. The split is for speed: a broadcast load of one float out of a vector
 * store still in the store buffer is not forwarded and waits for the store to commit, stalling every
 * block; a chunk later the tables are plain L1 hits.
 */
template <class B, std::size_t T, class Out, class Scales, class Weights>
GGUF_SIMD_INLINE void chunked(const std::byte* src, Out* dst, std::size_t nb, Scales&& scales,
                              Weights&& weights) noexcept {
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
template <class A, class B, std::size_t T, bool Signed, class Out, class Scales, class Groups, class Weights>
GGUF_SIMD_INLINE void run_groups(const std::byte* src, Out* dst, std::size_t nb, Scales&& scales, Groups&& groups,
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
        Out* out = dst + 256 * i;
        groups(src + i * sizeof(B), [&](auto g, std::size_t o, const ibatch<S>& v) GGUF_SIMD_INLINE_LAMBDA {
          ibatch<A> q[P / L];
          widen_bytes<A, Signed, S>(v, q);
          static_assert(P / L % 2 == 0, "widened in pairs (AVX-512: 2 vectors of 16 weights)");
          for (std::size_t k = 0; k < P / L; k += 2) {
            put_pair<A>(out + 32 * g + o + k * L, weights(q[k], t, g, o + k * L),
                        weights(q[k + 1], t, g, o + (k + 1) * L), no_subnormals);
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
        groups(src + i * sizeof(B), [&](auto g, std::size_t o, const ibatch<S>& v)
                                        GGUF_SIMD_INLINE_LAMBDA { v.store_aligned(buf[i] + 8 * g + o / 4); });
      }
      in_memory(tab);
      in_memory(buf);
      for (std::size_t i = 0; i < n; ++i) {
        const float* t = tab[i];
        Out* out = dst + 256 * i;
        const std::byte* q = reinterpret_cast<const std::byte*>(buf[i]);
        unroll<8>([&](auto g) GGUF_SIMD_INLINE_LAMBDA {
          for (std::size_t l = 0; l < 32; l += 16) {
            ibatch<A> v[16 / L];
            widen16<A, Signed>(q + 32 * g + l, v);
            for (std::size_t k = 0; k < 16 / L; ++k) {
              put<A>(out + 32 * g + l + k * L, weights(v[k], t, g, l + k * L));
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
GGUF_SIMD_INLINE void q3_scales(const std::byte* sp, ibatch<A>* s) noexcept {
  const std::uint32_t a0 = load_le<std::uint32_t>(sp), a1 = load_le<std::uint32_t>(sp + 4),
                      a2 = load_le<std::uint32_t>(sp + 8);
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
GGUF_SIMD_INLINE void k4_scales(const std::byte* b, float* t) noexcept {
  constexpr std::size_t L = lanes<A>;
  const std::byte* sp = b + offsetof(B, scales);
  const std::uint32_t a0 = load_le<std::uint32_t>(sp), a1 = load_le<std::uint32_t>(sp + 4),
                      a2 = load_le<std::uint32_t>(sp + 8);
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

}  // namespace detail

// ---- Kernels -------------------------------------------------------------------------------------

/// q2_K: 16 sub-blocks of 16 two-bit weights; x = (d * (sc & 15)) * q - dmin * (sc >> 4).
template <class A, class Out = float>
void dequant_q2_K(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::q2_K;
  constexpr std::size_t L = lanes<A>;
  detail::chunked<B, 32>(
      src, dst, nb,
      [](const std::byte* b, float* t) GGUF_SIMD_INLINE_LAMBDA {  // t[c] = dl, t[16 + c] = -ml of sub-block c
        const fbatch<A> d(half_scale(b + offsetof(B, d))), ndmin(-half_scale(b + offsetof(B, dmin)));
        ibatch<A> s[16 / L];
        widen16<A>(b + offsetof(B, scales), s);
        for (std::size_t k = 0; k < 16 / L; ++k) {
          (to_float<A>(s[k] & ibatch<A>(15)) * d).store_aligned(t + k * L);
          (to_float<A>(s[k] >> 4) * ndmin).store_aligned(t + 16 + k * L);
        }
      },
      // Sub-block c = 8n + 2s + half: bit pair s of qs[32n + 16 half + l], l < 16 (weights 16c + l).
      [](const std::byte* b, const float* t, auto* out) GGUF_SIMD_INLINE_LAMBDA {
        const std::byte* qs = b + offsetof(B, qs);
        if constexpr (lut_bits<A> >= 3) {
          // Tables of (q, sub-block) for G consecutive sub-blocks: entry i is q = (i >> log2 G) & 3 of
          // sub-block G k + i % G, so the index is q << log2 G | c % G (bits above lut_bits ignored).
          // AVX-512: G = 4, four tables per block and no per-vector arithmetic. AVX2: G = 1, a table
          // per sub-block (grouping 2 costs more index work than it saves).
          constexpr int G = lut_bits<A> >= 4 ? 4 : 1, gb = G == 4 ? 2 : 0;
          const fbatch<A> q = lane_map<A>([](int i) { return static_cast<float>((i >> gb) & 3); });
          constexpr auto group = static_cast<std::size_t>(G);
          const auto table = [&](int k) GGUF_SIMD_INLINE_LAMBDA {
            return xsimd::fma(q, repeat<A, group>(t + G * k), repeat<A, group>(t + 16 + G * k));
          };
          fbatch<A> tab[group > 1 ? 16 / group : 1];
          if constexpr (G > 1) {
            unroll<16 / G>([&](auto k) GGUF_SIMD_INLINE_LAMBDA { tab[k] = table(k); });
          }
          if constexpr (uses_word_table<A, Out>) {
            // Half outputs: each table rounded once; bit pair s of qs[32 n + l], l < 32, is weight l of
            // sub-blocks 8 n + 2 s and 8 n + 2 s + 1, the runs 2 s % 4 and 2 s % 4 + 1 of table 2 n + s / 2.
            unroll<2>([&](auto n) GGUF_SIMD_INLINE_LAMBDA {
              const word_table words[2] = {table_words<A, Out>(tab[2 * n], no_subnormals),
                                           table_words<A, Out>(tab[2 * n + 1], no_subnormals)};
              unroll<4>([&](auto s) GGUF_SIMD_INLINE_LAMBDA {
                put_grouped_2bit32<A, 2 * s, 2 * s % 4>(out + 16 * (8 * n + 2 * s), words[s / 2], qs + 32 * n);
              });
            });
            return;
          }
          unroll<4>([&](auto g) GGUF_SIMD_INLINE_LAMBDA {  // 16 bytes of qs: n = g / 2, half = g % 2
            constexpr int n = g / 2, half = g % 2;
            ibatch<A> ws[16 / L];
            widen16<A>(qs + 16 * g, ws);
            for (std::size_t l = 0; l < 16; l += L) {
              const ibatch<A>& w = ws[l / L];
              unroll<4>([&](auto s) GGUF_SIMD_INLINE_LAMBDA {
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
                put<A>(out + 16 * c + l, permute<A>(G > 1 ? tab[c / G] : table(c), idx));
              });
            }
          });
        } else {
          unroll<4>([&](auto g) GGUF_SIMD_INLINE_LAMBDA {
            constexpr int n = g / 2, half = g % 2;
            ibatch<A> ws[16 / L];
            widen16<A>(qs + 16 * g, ws);
            for (std::size_t l = 0; l < 16; l += L) {
              const ibatch<A>& w = ws[l / L];
              unroll<4>([&](auto s) GGUF_SIMD_INLINE_LAMBDA {
                constexpr int c = 8 * n + 2 * s + half;
                const ibatch<A> q = s == 0 ? (w & ibatch<A>(3)) : s == 3 ? (w >> 6) : ((w >> (2 * s)) & ibatch<A>(3));
                put<A>(out + 16 * c + l, xsimd::fma(to_float<A>(q), fbatch<A>(t[c]), fbatch<A>(t[16 + c])));
              });
            }
          });
        }
      });
}

/// q3_K: 16 sub-blocks of 16 three-bit weights (2 low bits in qs, the high bit in hmask, set = +0,
/// clear = -4); x = (d * (scale - 32)) * q with q in -4..3.
template <class A, class Out = float>
void dequant_q3_K(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::q3_K;
  using S = swar_arch<A>;
  constexpr bool lut = lut_bits<A> >= 3;  // else the bytes are made signed, q - 4, as in q6_K
  const auto scales = [](const std::byte* b, float* t) GGUF_SIMD_INLINE_LAMBDA {  // t[c] = dl of sub-block c
    constexpr std::size_t L = lanes<A>;
    ibatch<A> s[16 / L];
    detail::q3_scales<A>(b + offsetof(B, scales), s);
    const fbatch<A> d(half_scale(b + offsetof(B, d)));
    for (std::size_t k = 0; k < 16 / L; ++k) (to_float<A>(s[k] - ibatch<A>(32)) * d).store_aligned(t + k * L);
  };
  // Group g = 4n + s: bit pair s of qs[32n + l] plus 4 * bit g of hmask[l] (weights 128n + 32s + l).
  const auto groups = [](const std::byte* b, auto&& put) GGUF_SIMD_INLINE_LAMBDA {
    for (std::size_t o = 0; o < 32; o += 4 * lanes<S>) {
      const ibatch<S> h = load_bytes<S>(b + offsetof(B, hmask) + o);
      unroll<2>([&](auto n) GGUF_SIMD_INLINE_LAMBDA {
        const ibatch<S> q = load_bytes<S>(b + offsetof(B, qs) + 32 * n + o);
        unroll<4>([&](auto s) GGUF_SIMD_INLINE_LAMBDA {
          constexpr int g = 4 * n + s;
          const ibatch<S> v = byte_pair<s, S>(q) | byte_bit_to<g, 2, S>(h);
          put(int_c<g>{}, o, lut ? v : sub_bytes<S>(v, 4));
        });
      });
    }
  };
  if constexpr (uses_word_table<A, Out>) {
    // Half outputs: the 8 values of sub-blocks 2g and 2g + 1 in one table, rounded once per 32 weights.
    static_assert(4 * lanes<S> == 32);
    detail::chunked<B, 16>(
        src, dst, nb, scales, [&groups](const std::byte* b, const float* t, Out* out) GGUF_SIMD_INLINE_LAMBDA {
          const fbatch<A> v = lane_map<A>([](int i) { return static_cast<float>((i >> 1) - 4); });
          groups(b, [&](auto g, std::size_t, const ibatch<S>& q) GGUF_SIMD_INLINE_LAMBDA {
            put_two_runs32<A>(out + 32 * g, table_words<A, Out>(v * repeat<A, 2>(t + 2 * g), no_subnormals), q);
          });
        });
    return;
  }
  detail::run_groups<A, B, 16, !lut>(
      src, dst, nb, scales, groups,
      // q = byte - 4 (looked up, or already subtracted); sub-block 2g + l / 16.
      [](const ibatch<A>& q, const float* t, auto g, std::size_t l) GGUF_SIMD_INLINE_LAMBDA {
        const fbatch<A> dl(t[2 * g + l / 16]);
        if constexpr (lut) {
          const fbatch<A> v = lane_map<A>([](int i) { return static_cast<float>((i & 7) - 4); });
          return permute<A>(v * dl, q);
        } else {
          return to_float<A>(q) * dl;
        }
      });
}

/// q4_K: 8 sub-blocks of 32 four-bit weights with 6-bit scales and mins; x = (d * sc) * q - dmin * m.
template <class A, class Out = float>
void dequant_q4_K(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::q4_K;
  constexpr std::size_t L = lanes<A>;
  detail::chunked<B, 16>(
      src, dst, nb, [](const std::byte* b, float* t) GGUF_SIMD_INLINE_LAMBDA { detail::k4_scales<A, B>(b, t); },
      // qs[32j + l] holds weight l of sub-block 2j (low nibble) and of 2j + 1 (high nibble).
      [](const std::byte* b, const float* t, auto* out) GGUF_SIMD_INLINE_LAMBDA {
        unroll<4>([&](auto j) GGUF_SIMD_INLINE_LAMBDA {
          const fbatch<A> dl0(t[2 * j]), nml0(t[8 + 2 * j]), dl1(t[2 * j + 1]), nml1(t[9 + 2 * j]);
          if constexpr (lut_bits<A> >= 4) {  // 16-entry tables: the nibbles are indices
            const fbatch<A> q = lane_map<A>([](int i) { return static_cast<float>(i); });
            put_nibbles32<A>(out + 64 * j, xsimd::fma(q, dl0, nml0), xsimd::fma(q, dl1, nml1),
                             b + offsetof(B, qs) + 32 * j, no_subnormals);
          } else {
            ibatch<A> ws[32 / L];
            widen16<A>(b + offsetof(B, qs) + 32 * j, ws);
            widen16<A>(b + offsetof(B, qs) + 32 * j + 16, ws + 16 / L);
            for (std::size_t l = 0; l < 32; l += L) {
              const ibatch<A>& w = ws[l / L];
              put<A>(out + 64 * j + l, xsimd::fma(to_float<A>(w & ibatch<A>(15)), dl0, nml0));
              put<A>(out + 64 * j + 32 + l, xsimd::fma(to_float<A>(w >> 4), dl1, nml1));
            }
          }
        });
      });
}

/// q5_K: q4_K with a fifth bit per weight, bit g of qh[l] for weight l of sub-block g.
template <class A, class Out = float>
void dequant_q5_K(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::q5_K;
  using S = swar_arch<A>;
  const auto scales = [](const std::byte* b, float* t) GGUF_SIMD_INLINE_LAMBDA { detail::k4_scales<A, B>(b, t); };
  // Group g = 2j + k = sub-block g: the low (k = 0) or high nibble of qs[32j + l], bit g of qh[l].
  const auto groups = [](const std::byte* b, auto&& put) GGUF_SIMD_INLINE_LAMBDA {
    for (std::size_t o = 0; o < 32; o += 4 * lanes<S>) {
      const ibatch<S> h = load_bytes<S>(b + offsetof(B, qh) + o);
      const ibatch<S> low = bytes_of<S>(0x0F);
      unroll<4>([&](auto j) GGUF_SIMD_INLINE_LAMBDA {
        const ibatch<S> q = load_bytes<S>(b + offsetof(B, qs) + 32 * j + o);
        put(int_c<2 * j>{}, o, (q & low) | byte_bit_to<2 * j, 4, S>(h));
        put(int_c<2 * j + 1>{}, o, ((q >> 4) & low) | byte_bit_to<2 * j + 1, 4, S>(h));
      });
    }
  };
  if constexpr (uses_word_table<A, Out>) {
    // Half outputs: a sub-block's 32 values rounded once (as many conversions as its weights would
    // take, but no per-weight widening, conversion or scaling), then looked up by the bytes.
    static_assert(4 * lanes<S> == 32);
    detail::chunked<B, 16>(
        src, dst, nb, scales, [&groups](const std::byte* b, const float* t, Out* out) GGUF_SIMD_INLINE_LAMBDA {
          const fbatch<A> k = lane_map<A>([](int i) { return static_cast<float>(i); });
          const fbatch<A> k16 = lane_map<A>([](int i) { return static_cast<float>(i + 16); });
          groups(b, [&](auto g, std::size_t, const ibatch<S>& q) GGUF_SIMD_INLINE_LAMBDA {
            const fbatch<A> dl(t[g]), nml(t[8 + g]);
            put_bytes32<A>(out + 32 * g,
                           table_words32<A, Out>(xsimd::fma(k, dl, nml), xsimd::fma(k16, dl, nml), no_subnormals), q);
          });
        });
    return;
  }
  detail::run_groups<A, B, 16, false>(
      src, dst, nb, scales, groups,
      [](const ibatch<A>& q, const float* t, auto g, std::size_t)
          GGUF_SIMD_INLINE_LAMBDA { return xsimd::fma(to_float<A>(q), fbatch<A>(t[g]), fbatch<A>(t[8 + g])); });
}

/// q6_K: 16 sub-blocks of 16 six-bit weights (4 low bits in ql, 2 high in qh) with int8 scales;
/// x = (d * sc) * (q - 32).
template <class A, class Out = float>
void dequant_q6_K(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::q6_K;
  using S = swar_arch<A>;
  detail::run_groups<A, B, 16, true>(
      src, dst, nb,
      [](const std::byte* b, float* t) GGUF_SIMD_INLINE_LAMBDA {  // t[c] = dl of sub-block c
        constexpr std::size_t L = lanes<A>;
        const fbatch<A> d(half_scale(b + offsetof(B, d)));
        ibatch<A> s[16 / L];
        widen16<A, true>(b + offsetof(B, scales), s);
        for (std::size_t k = 0; k < 16 / L; ++k) (to_float<A>(s[k]) * d).store_aligned(t + k * L);
      },
      // Group g = 4n + k: the low (k < 2) or high nibble of ql[64n + 32(k % 2) + l] and, above it, bit
      // pair k of qh[32n + l] (weights 128n + 32k + l).
      // (n is a loop counter, not unrolled by hand: GCC 12 kept the second copy out of line, a call per block.)
      [](const std::byte* b, auto&& put) GGUF_SIMD_INLINE_LAMBDA {
        for (std::size_t n = 0; n < 2; ++n) {
          for (std::size_t o = 0; o < 32; o += 4 * lanes<S>) {
            const ibatch<S> h = load_bytes<S>(b + offsetof(B, qh) + 32 * n + o);
            const ibatch<S> w0 = load_bytes<S>(b + offsetof(B, ql) + 64 * n + o);
            const ibatch<S> w1 = load_bytes<S>(b + offsetof(B, ql) + 64 * n + 32 + o);
            const ibatch<S> low = bytes_of<S>(0x0F), top = bytes_of<S>(0x30);
            unroll<4>([&](auto k) GGUF_SIMD_INLINE_LAMBDA {
              const ibatch<S>& w = k % 2 ? w1 : w0;
              const ibatch<S> nib = (k < 2 ? w : (w >> 4)) & low;
              ibatch<S> hb;
              if constexpr (k < 2)
                hb = (h << (4 - 2 * k)) & top;
              else if constexpr (k == 2)
                hb = h & top;
              else
                hb = (h >> 2) & top;
              put(4 * n + k, o, sub_bytes<S>(nib | hb, 32));
            });
          }
        }
      },
      // q - 32 (already subtracted), scale of sub-block 2g + l / 16.
      [](const ibatch<A>& q, const float* t, auto g, std::size_t l)
          GGUF_SIMD_INLINE_LAMBDA { return to_float<A>(q) * fbatch<A>(t[2 * g + l / 16]); });
}

/// q8_K: 256 int8 weights times a float32 d (the bsums are not needed to dequantize).
template <class A, class Out = float>
void dequant_q8_K(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::q8_K;
  constexpr std::size_t L = lanes<A>;
  for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 256) {
    const fbatch<A> d(std::bit_cast<float>(load_le<std::uint32_t>(src + offsetof(B, d))));
    const std::byte* qs = src + offsetof(B, qs);
    for (std::size_t j = 0; j < 256; j += 32) {
      ibatch<A> q[32 / L];
      widen16<A, true>(qs + j, q);
      widen16<A, true>(qs + j + 16, q + 16 / L);
      for (std::size_t k = 0; k < 32 / L; k += 2)
        put_pair<A>(dst + j + k * L, to_float<A>(q[k]) * d, to_float<A>(q[k + 1]) * d);
    }
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_K_QUANTS_DEQUANTIZE_SIMD_HPP
