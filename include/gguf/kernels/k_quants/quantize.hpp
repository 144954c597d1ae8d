#ifndef GGUF_KERNELS_K_QUANTS_QUANTIZE_HPP
#define GGUF_KERNELS_K_QUANTS_QUANTIZE_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/scalar/quantize_common.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

// The K-quants: 256-weight super-blocks of 16 or 32-weight sub-blocks, each sub-block with a scale (and
// a min for q2_K, q4_K, q5_K) that is itself quantized against the super-block's half-precision d (and
// dmin). As ggml_quantize_chunk: without importance weights quantize_row_*_ref (scales from
// make_qkx2_quants or make_q3_quants / make_qx_quants, then rounded against their maximum), with them
// quantize_row_*_impl (make_qkx3_quants or make_qx_quants weighted, sub-block scales fitted by
// make_qp_quants / make_qx_quants). Either way the weights are then re-rounded against the stored scales.

namespace detail {

/// The byte of an int, as C's assignment to a uint8_t / int8_t field keeps it.
constexpr std::uint8_t low_byte(int v) noexcept { return static_cast<std::uint8_t>(static_cast<unsigned>(v) & 0xFFu); }

/// `v` clamped to lo..hi.
constexpr int clamp(int v, int lo, int hi) noexcept { return v < lo ? lo : (v > hi ? hi : v); }

/// Weights 0..255 as 2-bit fields: byte l of each 32 holds weights l, l + 32, l + 64, l + 96 (q2_K, q3_K).
inline void pack_2bit(const std::uint8_t* L, std::byte* qs) noexcept {
  for (int j = 0; j < qk_k; j += 128) {
    for (int l = 0; l < 32; ++l) {
      const int v = L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6);
      store_le<std::uint8_t>(qs + j / 4 + l, low_byte(v));
    }
  }
}

/// q2_K's second pass: each weight re-rounded to 0..3 against the stored sub-block scale and min.
inline void requantize_q2_K(const float* x, const std::byte* scales, float d, float dmin, std::uint8_t* L) noexcept {
  for (int j = 0; j < qk_k / 16; ++j) {
    const auto sc = load_le<std::uint8_t>(scales + j);
    const float dl = d * static_cast<float>(sc & 0xF);
    if (dl == 0) continue;
    const float ml = mul(dmin, sc >> 4);  // exact (11 x 4 bits), yet kept unfused as ggml computes it
    for (int ii = 0; ii < 16; ++ii) L[16 * j + ii] = low_byte(clamp(nearest_int((x[16 * j + ii] + ml) / dl), 0, 3));
  }
}

/// The 16 6-bit q3_K scales (0..63, biased by 32) into their 12 bytes.
inline void pack_q3_K_scales(const int* ls, std::byte* out) noexcept {
  std::uint8_t s[12] = {};
  for (int j = 0; j < 16; ++j) {
    int l = ls[j];
    if (j < 8) {
      s[j] = low_byte(l & 0xF);
    } else {
      s[j - 8] = low_byte(s[j - 8] | ((l & 0xF) << 4));
    }
    l >>= 4;
    s[j % 4 + 8] = low_byte(s[j % 4 + 8] | (l << (2 * (j / 4))));
  }
  std::memcpy(out, s, 12);
}

/**
 * The second pass of q3_K and q6_K, the scalar specification of the SIMD twins': the weights of each of
 * the 16 sub-blocks of 16 re-rounded against its stored scale `dl[j]`, to clamp(nearest(x / dl), -half,
 * half - 1) + half; a sub-block whose scale is 0 keeps its levels.
 */
struct requantize_symmetric {
  /// Re-rounds the levels `L` of the 256 weights `x`.
  void operator()(const float* x, const float* dl, int half, std::int8_t* L) const noexcept {
    for (int j = 0; j < 16; ++j) {
      if (dl[j] == 0) continue;
      for (int ii = 0; ii < 16; ++ii) {
        L[16 * j + ii] = static_cast<std::int8_t>(clamp(nearest_int(x[16 * j + ii] / dl[j]), -half, half - 1) + half);
      }
    }
  }
};

/// q3_K's second pass and packing: levels -4..3 against the stored scales, the high bit to hmask.
template <class Requantize = requantize_symmetric>
inline void finish_q3_K(const float* x, std::byte* y, std::int8_t* L, Requantize requantize = {}) noexcept {
  using B = blocks::q3_K;
  const float d = half_value(load_le<std::uint16_t>(y + offsetof(B, d)));
  std::uint8_t s[12];
  std::memcpy(s, y + offsetof(B, scales), 12);
  float dl[16];
  for (int j = 0; j < 16; ++j) {
    const int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
    const int sc = (lo | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
    dl[j] = d * static_cast<float>(sc);
  }
  requantize(x, dl, 4, L);
  // Level l (0..7) is l & 3 in qs and l >> 2 in bit j / 32 of hmask[j % 32]; without branches, which
  // the levels of real weights would mispredict half the time.
  std::uint8_t hmask[32], q[qk_k];
  for (int l = 0; l < 32; ++l) {
    int h = 0;
    for (int k = 0; k < 8; ++k) h |= ((L[32 * k + l] >> 2) & 1) << k;
    hmask[l] = low_byte(h);
  }
  for (int j = 0; j < qk_k; ++j) q[j] = low_byte(L[j] & 3);
  std::memcpy(y + offsetof(B, hmask), hmask, 32);
  pack_2bit(q, y + offsetof(B, qs));
}

/// q4_K / q5_K's 8 6-bit scales and mins into their 12 bytes (ggml's get_scale_min_k4 layout).
inline void pack_k4_scales(const std::uint8_t* ls, const std::uint8_t* lm, std::byte* out) noexcept {
  std::uint8_t s[12] = {};
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] = ls[j];
      s[j + 4] = lm[j];
    } else {
      s[j + 4] = low_byte((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      s[j - 4] = low_byte(s[j - 4] | ((ls[j] >> 4) << 6));
      s[j] = low_byte(s[j] | ((lm[j] >> 4) << 6));
    }
  }
  std::memcpy(out, s, 12);
}

/// Sub-block j's scale and min from the 12 bytes (ggml's get_scale_min_k4).
inline void unpack_k4_scale(int j, const std::uint8_t* q, int& sc, int& m) noexcept {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

/// q4_K / q5_K's second pass: levels 0..nmax against the stored scales and mins.
inline void requantize_k4(const float* x, const std::byte* y, int nmax, std::uint8_t* L) noexcept {
  // q4_K and q5_K share d, dmin and scales at the same offsets.
  const float d = half_value(load_le<std::uint16_t>(y));
  const float dmin = half_value(load_le<std::uint16_t>(y + 2));
  std::uint8_t s[12];
  std::memcpy(s, y + 4, 12);
  for (int j = 0; j < 8; ++j) {
    int sc = 0, m = 0;
    unpack_k4_scale(j, s, sc, m);
    const float dl = d * static_cast<float>(sc);
    if (dl == 0) continue;
    const float ml = mul(dmin, m);
    for (int ii = 0; ii < 32; ++ii) {
      L[32 * j + ii] = low_byte(clamp(nearest_int((x[32 * j + ii] + ml) / dl), 0, nmax));
    }
  }
}

/// q4_K's nibbles: each 32 bytes hold sub-block 2i low and 2i + 1 high.
inline void pack_q4_K(const std::uint8_t* L, std::byte* qs) noexcept {
  for (int j = 0; j < qk_k; j += 64) {
    for (int l = 0; l < 32; ++l) store_le<std::uint8_t>(qs + j / 2 + l, low_byte(L[j + l] | (L[j + l + 32] << 4)));
  }
}

/// q5_K's low nibbles (as q4_K) and fifth bits (bit 2i / 2i + 1 of qh[l] for sub-blocks 2i / 2i + 1).
inline void pack_q5_K(const std::uint8_t* L, std::byte* qh_out, std::byte* ql_out) noexcept {
  std::uint8_t qh[32] = {};
  for (int n = 0, shift = 0; n < qk_k; n += 64, shift += 2) {
    for (int j = 0; j < 32; ++j) {
      int l1 = L[n + j], l2 = L[n + j + 32];
      if (l1 > 15) {
        l1 -= 16;
        qh[j] = low_byte(qh[j] | (1 << shift));
      }
      if (l2 > 15) {
        l2 -= 16;
        qh[j] = low_byte(qh[j] | (2 << shift));
      }
      store_le<std::uint8_t>(ql_out + n / 2 + j, low_byte(l1 | (l2 << 4)));
    }
  }
  std::memcpy(qh_out, qh, 32);
}

/// The weights of q4_K / q5_K's sub-blocks without importance: av_x + |x|, av_x the sub-block's RMS.
inline void rms_plus_abs(const float* x, float* w) noexcept {
  const float av_x = std::sqrt(sum_of_squares(x, 32) / 32);
  for (int l = 0; l < 32; ++l) w[l] = av_x + std::fabs(x[l]);
}

/// The trial scales of q4_K / q5_K's sub-block search: rmin, rdelta and nstep of make_qkx2/3_quants.
struct k4_trials {
  float rmin;    ///< the first trial's offset of the minimum, in levels
  float rdelta;  ///< the step between trials
  int nstep;     ///< the number of steps after the first trial
};

/// q4_K / q5_K's trials: the reference path's (q4_K and q5_K differ), and the importance-weighted one.
template <int Bits>
constexpr k4_trials k4_trials_of(bool weighted) noexcept {
  if (weighted) return {-0.9f, 0.05f, 36};
  return Bits == 4 ? k4_trials{-1.f, 0.1f, 20} : k4_trials{-0.5f, 0.1f, 15};
}

/**
 * The weights of q4_K / q5_K's sub-block j of the super-block at `x`: av_x + |x| without importance
 * weights; with them, qw * sqrt(sigma2 + x^2), and their sum in `*sw`.
 */
inline void k4_weights(const float* x, const float* qw, float sigma2, int j, float* w, float* sw) noexcept {
  if (!qw) {
    rms_plus_abs(x + 32 * j, w);
    return;
  }
  importance_weights(qw + 32 * j, x + 32 * j, 32, sigma2, w);
  float sumw = 0;
  for (int l = 0; l < 32; ++l) sumw += w[l];
  *sw = sumw;
}

/// The super-block's mean square as q4_K / q5_K's importance weighting uses it (twice the mean square).
inline float k4_sigma2(const float* x) noexcept { return 2 * sum_of_squares(x, qk_k) / qk_k; }

/**
 * q4_K and q5_K, one super-block, after the sub-block searches (`scales`, `mins`, the levels in `L`, and
 * with `qw` the weight sums `sw`): the 6-bit scales and mins, the two halves, the levels re-rounded
 * against the stored scales, packed.
 */
template <int Bits>
inline void k4_finish(const float* x, std::byte* y, const float* qw, const float* scales, const float* mins,
                      const float* sw, std::uint8_t* L) noexcept {
  constexpr int nmax = (1 << Bits) - 1;
  std::uint8_t Ls[8], Lm[8];
  if (!qw) {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < 8; ++j) {
      const std::uint8_t ls = low_byte(nearest_int(inv_scale * scales[j]));
      const std::uint8_t lm = low_byte(nearest_int(inv_min * mins[j]));
      Ls[j] = ls < 63 ? ls : 63;
      Lm[j] = lm < 63 ? lm : 63;
    }
    pack_k4_scales(Ls, Lm, y + 4);
    store_half(y, max_scale / 63.f);
    store_half(y + 2, max_min / 63.f);
  } else {
    const float d_block = make_qp_quants(8, 63, scales, Ls, sw);
    const float m_block = make_qp_quants(8, 63, mins, Lm, sw);
    if constexpr (Bits == 5) {  // q5_K clamps the wrapped levels; q4_K stores them as they are
      for (int j = 0; j < 8; ++j) {
        if (Ls[j] > 63) Ls[j] = 63;
        if (Lm[j] > 63) Lm[j] = 63;
      }
    }
    pack_k4_scales(Ls, Lm, y + 4);
    store_half(y, d_block);
    store_half(y + 2, m_block);
  }
  requantize_k4(x, y, nmax, L);
  if constexpr (Bits == 4) {
    pack_q4_K(L, y + offsetof(blocks::q4_K, qs));
  } else {
    pack_q5_K(L, y + offsetof(blocks::q5_K, qh), y + offsetof(blocks::q5_K, qs));
  }
}

/**
 * q4_K and q5_K, one super-block: each sub-block's scale and min searched (make_qkx_quants; the trials
 * of the reference path, or with `qw` of the importance-weighted one), then `k4_finish`.
 */
template <int Bits>
inline void quantize_k4_block(const float* x, std::byte* y, const float* qw) noexcept {
  constexpr int nmax = (1 << Bits) - 1;
  constexpr k4_trials plain = k4_trials_of<Bits>(false), weighted = k4_trials_of<Bits>(true);
  const k4_trials t = qw ? weighted : plain;
  std::uint8_t L[qk_k], Laux[32];
  float weights[32], mins[8], scales[8], sw[8] = {};
  const float sigma2 = qw ? k4_sigma2(x) : 0.f;
  for (int j = 0; j < 8; ++j) {
    k4_weights(x, qw, sigma2, j, weights, &sw[j]);
    scales[j] =
        make_qkx_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, t.rmin, t.rdelta, t.nstep, false);
  }
  k4_finish<Bits>(x, y, qw, scales, mins, sw, L);
}

}  // namespace detail

namespace detail {

/**
 * The weights of q2_K's sub-block j of the super-block at `x`: |x| without importance weights; with
 * them, qw * sqrt(sigma2 + x^2) (sigma2 the super-block's mean square), and their sum in `*sw`.
 */
inline void q2_K_weights(const float* x, const float* qw, float sigma2, int j, float* w, float* sw) noexcept {
  if (!qw) {
    for (int l = 0; l < 16; ++l) w[l] = std::fabs(x[16 * j + l]);
    return;
  }
  importance_weights(qw + 16 * j, x + 16 * j, 16, sigma2, w);
  float sumw = 0;
  for (int l = 0; l < 16; ++l) sumw += w[l];
  *sw = sumw;
}

/**
 * q2_K, one super-block, after its sub-blocks' searches (`scales`, `mins`, levels in `L`, with `qw` the
 * weight sums `sw`): the 4-bit scales and mins, the two halves, the levels re-rounded, packed.
 */
inline void q2_K_finish(const float* x, std::byte* dst, const float* qw, const float* scales, const float* mins,
                        const float* sw, std::uint8_t* L) noexcept {
  using B = blocks::q2_K;
  std::byte* const sc = dst + offsetof(B, scales);
  float d = 0, dmin = 0;
  if (!qw) {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 16; ++j) {
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    std::uint8_t s[16] = {};
    if (max_scale > 0) {
      const float iscale = 15.f / max_scale;
      for (int j = 0; j < 16; ++j) s[j] = low_byte(nearest_int(iscale * scales[j]));
      d = store_half(dst + offsetof(B, d), max_scale / 15.f);
    } else {
      d = store_half(dst + offsetof(B, d), 0.f);
    }
    if (max_min > 0) {
      const float iscale = 15.f / max_min;
      for (int j = 0; j < 16; ++j) s[j] = low_byte(s[j] | (nearest_int(iscale * mins[j]) << 4));
      dmin = store_half(dst + offsetof(B, dmin), max_min / 15.f);
    } else {
      dmin = store_half(dst + offsetof(B, dmin), 0.f);
    }
    std::memcpy(sc, s, 16);
  } else {
    std::uint8_t Ls[16], Lm[16];
    const float dm = make_qp_quants(16, 15, scales, Ls, sw);
    const float mm = make_qp_quants(16, 15, mins, Lm, sw);
    d = store_half(dst + offsetof(B, d), dm);
    dmin = store_half(dst + offsetof(B, dmin), mm);
    for (int j = 0; j < 16; ++j) store_le<std::uint8_t>(sc + j, low_byte(Ls[j] | (Lm[j] << 4)));
  }
  requantize_q2_K(x, sc, d, dmin, L);
  pack_2bit(L, dst + offsetof(B, qs));
}

}  // namespace detail

/// q2_K: 16 sub-blocks of 16 weights on 2 bits, 4-bit scales and mins; importance weights are used.
inline void quantize_q2_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using namespace detail;
  std::uint8_t L[qk_k], Laux[16];
  float weight[16], mins[16], scales[16], sw[16] = {};
  for (std::size_t i = 0; i < n_per_row / qk_k; ++i, src += qk_k, dst += sizeof(blocks::q2_K)) {
    const float* qw = importance ? importance + qk_k * i : nullptr;
    const float sigma2 = qw ? sum_of_squares(src, qk_k) / qk_k : 0.f;
    for (int j = 0; j < 16; ++j) {
      q2_K_weights(src, qw, sigma2, j, weight, &sw[j]);
      scales[j] = qw ? make_qkx_quants(16, 3, src + 16 * j, weight, L + 16 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false)
                     : make_qkx_quants(16, 3, src + 16 * j, weight, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
    }
    q2_K_finish(src, dst, qw, scales, mins, sw, L);
  }
}

namespace detail {

/// The weights of q3_K's sub-block j with importance weights: qw * sqrt(sigma2 + x^2), their sum in `*sw`.
inline void q3_K_weights(const float* x, const float* qw, float sigma2, int j, float* w, float* sw) noexcept {
  importance_weights(qw + 16 * j, x + 16 * j, 16, sigma2, w);
  float sumw = 0;
  for (int l = 0; l < 16; ++l) sumw += w[l];
  *sw = sumw;
}

/**
 * q3_K, one super-block, after its sub-blocks' searches (`scales`, levels + 4 in `L`; with `qw` the
 * weight sums `sw`): the 6-bit scales, the half, the levels re-rounded against them, packed.
 */
template <class Requantize = requantize_symmetric>
inline void q3_K_finish(const float* x, std::byte* dst, const float* qw, const float* scales, const float* sw,
                        std::int8_t* L, Requantize requantize = {}) noexcept {
  using B = blocks::q3_K;
  int ls[16];
  if (!qw) {
    float max_scale = 0, amax = 0;
    for (int j = 0; j < 16; ++j) {
      const float a = std::fabs(scales[j]);
      if (a > amax) {
        amax = a;
        max_scale = scales[j];
      }
    }
    if (max_scale != 0) {
      const float iscale = -32.f / max_scale;
      for (int j = 0; j < 16; ++j) {
        // ggml keeps nearest_int's result in an int8_t before clamping it.
        const auto l = static_cast<std::int8_t>(low_byte(nearest_int(iscale * scales[j])));
        ls[j] = clamp(l, -32, 31) + 32;
      }
      pack_q3_K_scales(ls, dst + offsetof(B, scales));
      store_half(dst + offsetof(B, d), 1 / iscale);
    } else {
      std::memset(dst + offsetof(B, scales), 0, 12);
      store_half(dst + offsetof(B, d), 0.f);
    }
  } else {
    std::int8_t Ls[16];
    const float d_block = make_qx_quants(16, 32, scales, Ls, sw);
    for (int j = 0; j < 16; ++j) ls[j] = Ls[j];
    pack_q3_K_scales(ls, dst + offsetof(B, scales));
    store_half(dst + offsetof(B, d), d_block);
  }
  finish_q3_K(x, dst, L, requantize);
}

}  // namespace detail

/// q3_K: 16 sub-blocks of 16 weights on 3 bits, 6-bit signed scales; importance weights are used.
inline void quantize_q3_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using namespace detail;
  std::int8_t L[qk_k];
  float scales[16], weight[16], sw[16] = {};
  for (std::size_t i = 0; i < n_per_row / qk_k; ++i, src += qk_k, dst += sizeof(blocks::q3_K)) {
    const float* qw = importance ? importance + qk_k * i : nullptr;
    const float sigma2 = qw ? 2 * sum_of_squares(src, qk_k) / qk_k : 0.f;
    for (int j = 0; j < 16; ++j) {
      if (qw) {
        q3_K_weights(src, qw, sigma2, j, weight, &sw[j]);
        scales[j] = make_qx_quants(16, 4, src + 16 * j, L + 16 * j, weight);
      } else {
        scales[j] = make_q3_quants(16, 4, src + 16 * j, L + 16 * j);
      }
    }
    q3_K_finish(src, dst, qw, scales, sw, L);
  }
}

/// q4_K: 8 sub-blocks of 32 weights on 4 bits, 6-bit scales and mins; importance weights are used.
inline void quantize_q4_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  for (std::size_t i = 0; i < n_per_row / detail::qk_k; ++i) {
    detail::quantize_k4_block<4>(src + detail::qk_k * i, dst + sizeof(blocks::q4_K) * i,
                                 importance ? importance + detail::qk_k * i : nullptr);
  }
}

/// q5_K: 8 sub-blocks of 32 weights on 5 bits, 6-bit scales and mins; importance weights are used.
inline void quantize_q5_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  for (std::size_t i = 0; i < n_per_row / detail::qk_k; ++i) {
    detail::quantize_k4_block<5>(src + detail::qk_k * i, dst + sizeof(blocks::q5_K) * i,
                                 importance ? importance + detail::qk_k * i : nullptr);
  }
}

namespace detail {

/**
 * q6_K, one super-block, after its sub-blocks' searches (make_qx_quants: `scales`, levels + 32 in `L`):
 * the 8-bit scales against the largest, the levels re-rounded against them, packed (an all-zero block
 * when every scale is below ggml's epsilon).
 */
template <class Requantize = requantize_symmetric>
inline void q6_K_finish(const float* x, std::byte* dst, const float* scales, std::int8_t* L,
                        Requantize requantize = {}) noexcept {
  using B = blocks::q6_K;
  float max_scale = 0, max_abs_scale = 0;
  for (int ib = 0; ib < 16; ++ib) {
    const float a = std::fabs(scales[ib]);
    if (a > max_abs_scale) {
      max_abs_scale = a;
      max_scale = scales[ib];
    }
  }
  if (max_abs_scale < group_max_eps) {
    std::memset(dst, 0, sizeof(B));
    return;
  }
  const float iscale = -128.f / max_scale;
  const float d = store_half(dst + offsetof(B, d), 1 / iscale);
  std::int8_t sc[16];
  for (int ib = 0; ib < 16; ++ib) {
    const int l = nearest_int(iscale * scales[ib]);
    sc[ib] = static_cast<std::int8_t>(low_byte(l < 127 ? l : 127));
    store_le<std::int8_t>(dst + offsetof(B, scales) + ib, sc[ib]);
  }
  float dl[16];
  for (int j = 0; j < 16; ++j) dl[j] = d * static_cast<float>(sc[j]);
  requantize(x, dl, 32, L);
  std::byte* ql = dst + offsetof(B, ql);
  std::byte* qh = dst + offsetof(B, qh);
  for (int j = 0; j < qk_k; j += 128, ql += 64, qh += 32) {
    for (int l = 0; l < 32; ++l) {
      const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
      store_le<std::uint8_t>(ql + l, low_byte((q1 & 0xF) | ((q3 & 0xF) << 4)));
      store_le<std::uint8_t>(ql + l + 32, low_byte((q2 & 0xF) | ((q4 & 0xF) << 4)));
      store_le<std::uint8_t>(qh + l, low_byte((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6)));
    }
  }
}

}  // namespace detail

/// q6_K: 16 sub-blocks of 16 weights on 6 bits, 8-bit signed scales; importance weights are used.
inline void quantize_q6_K(const float* src, std::byte* dst, std::size_t n_per_row, const float* importance) noexcept {
  using namespace detail;
  std::int8_t L[qk_k];
  float scales[16];
  for (std::size_t i = 0; i < n_per_row / qk_k; ++i, src += qk_k, dst += sizeof(blocks::q6_K)) {
    for (int ib = 0; ib < 16; ++ib) {
      const float* qw = importance ? importance + qk_k * i + 16 * ib : nullptr;
      scales[ib] = make_qx_quants(16, 32, src + 16 * ib, L + 16 * ib, qw);
    }
    q6_K_finish(src, dst, scales, L);
  }
}

}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_K_QUANTS_QUANTIZE_HPP
