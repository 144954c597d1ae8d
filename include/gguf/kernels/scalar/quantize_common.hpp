#ifndef GGUF_KERNELS_SCALAR_QUANTIZE_COMMON_HPP
#define GGUF_KERNELS_SCALAR_QUANTIZE_COMMON_HPP

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/detail/endian.hpp"
#include "gguf/format/half.hpp"
#include "gguf/kernels/barriers.hpp"
#include "gguf/kernels/isa.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::scalar {

/**
 * The pieces every quantizer shares: ggml's conversions as its compiled x86-64 code performs them, and
 * its scale searches. The quantizers must give ggml_quantize_chunk's bytes for any input, so each step
 * keeps ggml's operation order and roundings: every product that feeds a sum goes through `mul` (never
 * an FMA, whatever -ffp-contract the user builds with), and C's undefined float -> int conversions of NaN
 * and out-of-range values are spelled out as the x86 instruction ggml's binary runs (`x86_trunc`), so
 * that ARM64 writes the same bytes.
 */
namespace detail {

using ::gguf::detail::load_le;
using ::gguf::detail::store_le;

/// Weights of a K-quant super-block (QK_K).
inline constexpr int qk_k = 256;
/// ggml's GROUP_MAX_EPS: a group whose largest magnitude is below it is all zeros.
inline constexpr float group_max_eps = 1e-15f;

/** a * b rounded, then opaque: a sum it feeds is a separate rounding, never fused into an FMA. */
inline float mul(float a, float b) noexcept {
  float p = a * b;
  opaque(p);
  return p;
}

/// `mul` of a float and an integer (converted exactly, as C converts it).
inline float mul(float a, int b) noexcept { return mul(a, static_cast<float>(b)); }

/**
 * float -> int32 as x86's cvttss2si: toward zero, and INT32_MIN for NaN and for anything outside int32.
 * What ggml's `(int)`, `(int8_t)`, `(uint8_t)` casts of floats give on the machine its binary runs on
 * (the narrow casts then keep the low byte).
 */
constexpr std::int32_t x86_trunc(float x) noexcept {
  if (!(x >= -2147483648.0f && x < 2147483648.0f)) return INT32_MIN;
  return static_cast<std::int32_t>(x);
}

/// The low byte of `x86_trunc`: ggml's `(uint8_t)` / `(int8_t)` cast of a float (as bits).
constexpr std::uint8_t x86_trunc_byte(float x) noexcept {
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>(x86_trunc(x)) & 0xFFu);
}

/**
 * glibc's lroundf on x86-64: halves away from zero, and LONG_MIN (cvttss2si of 64 bits) for NaN and
 * anything outside int64. Every float of magnitude 2^23 or more is already an integer.
 */
inline std::int64_t x86_lround(float x) noexcept {
  if (!(x >= -9223372036854775808.0f && x < 9223372036854775808.0f)) return INT64_MIN;
  return static_cast<std::int64_t>(std::round(x));
}

/**
 * ggml's nearest_int: round to nearest even by adding 1.5 * 2^23 and reading the low mantissa bits.
 * Exact for |x| < 2^22; beyond, and for NaN and infinities, the bits give what they give (ggml asserts
 * only in debug builds), so the same arithmetic is done on the bits here, never a cast.
 */
inline int nearest_int(float x) noexcept {
  opaque(x);  // a product passed in must not fuse with the addition
  const float v = x + 12582912.0f;
  const auto bits = static_cast<std::int32_t>(std::bit_cast<std::uint32_t>(v) & 0x007FFFFFu);
  return bits - 0x00400000;
}

/**
 * ggml's GGML_FP32_TO_FP16 as its prebuilt library computes it (the portable bit-twiddling version):
 * round to nearest even, and every NaN the quiet NaN 0x7E00 with the sign kept and no payload (F16C
 * would keep the payload; ggml's own binary does not).
 */
constexpr std::uint16_t half_bits_nan_payload_dropped(float x) noexcept {
  const std::uint32_t w = std::bit_cast<std::uint32_t>(x);
  if ((w & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>(((w >> 16) & 0x8000u) | 0x7E00u);
  return to_f16(x).bits;
}

/// The float of half bits (exact).
constexpr float half_value(std::uint16_t h) noexcept { return to_float(f16{h}); }

/// `x` stored as ggml stores a block's half field, and the float it stands for.
inline float store_half(std::byte* p, float x) noexcept {
  const std::uint16_t h = half_bits_nan_payload_dropped(x);
  store_le<std::uint16_t>(p, h);
  return half_value(h);
}

/// C's MAX(a, b) macro, `a > b ? a : b`: with a NaN `b` wins, with a NaN `a` too (unordered compare).
constexpr float c_max(float a, float b) noexcept { return a > b ? a : b; }

/**
 * The index of the value of the sorted table `val` (n entries) nearest to `x`, ties to the lower one
 * (ggml's best_index_int8). A NaN fails every comparison and ends on the last index.
 */
inline int best_index_int8(int n, const std::int8_t* val, float x) noexcept {
  if (x <= static_cast<float>(val[0])) return 0;
  if (x >= static_cast<float>(val[n - 1])) return n - 1;
  int lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (x < static_cast<float>(val[mid])) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return x - static_cast<float>(val[hi - 1]) < static_cast<float>(val[hi]) - x ? hi - 1 : hi;
}

/// The element of largest magnitude (the first of equals; NaNs never win): the signed value.
inline float signed_amax(const float* x, int n, float* amax_out = nullptr) noexcept {
  float amax = 0, max = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax_out) *amax_out = amax;
  return max;
}

/**
 * Symmetric scale search (ggml's make_qx_quants with rmse_type 1): levels -nmax..nmax-1 stored as
 * 0..2*nmax-1 in `L`, the scale refined by least squares with weights `qw` (x^2 when null) over 19 trial
 * inverse scales around -nmax / max. Returns the scale (0 for an all-zero group).
 */
inline float make_qx_quants(int n, int nmax, const float* x, std::int8_t* L, const float* qw) noexcept {
  const float max = signed_amax(x, n);
  if (!(std::fabs(max) >= group_max_eps)) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  const auto clamp = [nmax](int l) { return l < -nmax ? -nmax : (l > nmax - 1 ? nmax - 1 : l); };
  const auto weight = [&](int i) { return qw ? qw[i] : x[i] * x[i]; };
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp(nearest_int(iscale * x[i]));
    L[i] = static_cast<std::int8_t>(l + nmax);
    const float w = weight(i);
    sumlx += mul(w * x[i], l);
    suml2 += mul(mul(w, l), l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + mul(0.1f, is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp(nearest_int(iscale * x[i]));
      const float w = weight(i);
      sumlx += mul(w * x[i], l);
      suml2 += mul(mul(w, l), l);
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = static_cast<std::int8_t>(nmax + clamp(nearest_int(iscale * x[i])));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

/**
 * Symmetric 3-bit search (ggml's make_q3_quants with do_rmse): levels -nmax..nmax-1, then up to five
 * passes moving single weights to the level that improves the x^2-weighted fit. `L` gets the level
 * plus nmax. Returns the scale.
 */
inline float make_q3_quants(int n, int nmax, const float* x, std::int8_t* L) noexcept {
  const float max = signed_amax(x, n);
  if (!(std::fabs(max) >= group_max_eps)) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  const auto clamp = [nmax](int l) { return l < -nmax ? -nmax : (l > nmax - 1 ? nmax - 1 : l); };
  const float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp(nearest_int(iscale * x[i]));
    L[i] = static_cast<std::int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += mul(w * x[i], l);
    suml2 += mul(mul(w, l), l);
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - mul(w * x[i], L[i]);
      if (slx > 0) {
        float sl2 = suml2 - mul(mul(w, L[i]), L[i]);
        const int new_l = clamp(nearest_int(x[i] * sl2 / slx));
        if (new_l != L[i]) {
          slx += mul(w * x[i], new_l);
          sl2 += mul(mul(w, new_l), new_l);
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<std::int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<std::int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/**
 * Scale-and-min search (ggml's make_qkx2_quants and make_qkx3_quants, which agree whenever the weights
 * are given): levels 0..nmax with x ~ scale * l - the_min, the weighted error (absolute with `use_mad`,
 * else squared) minimised over nstep + 1 trial inverse scales (rmin + rdelta * is + nmax) / (max - min),
 * each refitted by weighted least squares. Returns the scale; `*the_min` gets the (non-negative) min.
 */
inline float make_qkx_quants(int n, int nmax, const float* x, const float* weights, std::uint8_t* L, float* the_min,
                             std::uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) noexcept {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = mul(sum_w, x[0]);
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += mul(w, x[i]);
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.f;
  }
  const auto clamp = [nmax](int l) { return l < 0 ? 0 : (l > nmax ? nmax : l); };
  const auto error_of = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<std::uint8_t>(clamp(nearest_int(iscale * (x[i] - min))));
    const float diff = mul(scale, L[i]) + min - x[i];
    best_error += mul(weights[i], error_of(diff));
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + mul(rdelta, is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp(nearest_int(iscale * (x[i] - min)));
      Laux[i] = static_cast<std::uint8_t>(l);
      const float w = weights[i];
      sum_l += mul(w, l);
      sum_l2 += mul(w * static_cast<float>(l), l);
      sum_xl += mul(w * static_cast<float>(l), x[i]);
    }
    const float D = mul(sum_w, sum_l2) - mul(sum_l, sum_l);
    if (D > 0) {
      float this_scale = (mul(sum_w, sum_xl) - mul(sum_x, sum_l)) / D;
      float this_min = (mul(sum_l2, sum_x) - mul(sum_l, sum_xl)) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        const float diff = mul(this_scale, Laux[i]) + this_min - x[i];
        cur_error += mul(weights[i], error_of(diff));
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

/**
 * The scale of non-negative values (sub-block scales or mins) on levels 0..nmax (ggml's make_qp_quants):
 * 9 trial inverse scales around nmax / max, then up to five passes of single-level moves, all weighted
 * by `qw`. `L` gets the levels as bytes (ggml's uint8 array, wrap-around included). Returns the scale.
 */
inline float make_qp_quants(int n, int nmax, const float* x, std::uint8_t* L, const float* qw) noexcept {
  float max = 0;
  for (int i = 0; i < n; ++i) max = c_max(max, x[i]);
  if (max < group_max_eps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  const auto byte = [](int l) { return static_cast<std::uint8_t>(static_cast<unsigned>(l) & 0xFFu); };
  const auto at_most = [nmax](int l) { return l < nmax ? l : nmax; };
  float iscale = static_cast<float>(nmax) / max;
  for (int i = 0; i < n; ++i) L[i] = byte(nearest_int(iscale * x[i]));
  const float scale = 1 / iscale;
  float best_mse = 0;
  for (int i = 0; i < n; ++i) {
    const float diff = x[i] - mul(scale, L[i]);
    best_mse += mul(qw[i] * diff, diff);
  }
  for (int is = -4; is <= 4; ++is) {
    if (is == 0) continue;
    const float iscale_is = (mul(0.1f, is) + static_cast<float>(nmax)) / max;
    const float scale_is = 1 / iscale_is;
    float mse = 0;
    for (int i = 0; i < n; ++i) {
      const int l = at_most(nearest_int(iscale_is * x[i]));
      const float diff = x[i] - mul(scale_is, l);
      mse += mul(qw[i] * diff, diff);
    }
    if (mse < best_mse) {
      best_mse = mse;
      iscale = iscale_is;
    }
  }
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = at_most(nearest_int(iscale * x[i]));
    L[i] = byte(l);
    const float w = qw[i];
    sumlx += mul(w * x[i], l);
    suml2 += mul(mul(w, l), l);
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = qw[i];
      float slx = sumlx - mul(w * x[i], L[i]);
      float sl2 = suml2 - mul(mul(w, L[i]), L[i]);
      if (slx > 0 && sl2 > 0) {
        const int new_l = at_most(nearest_int(x[i] * sl2 / slx));
        if (new_l != L[i]) {
          slx += mul(w * x[i], new_l);
          sl2 += mul(mul(w, new_l), new_l);
          if (slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = byte(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/// The sum of squares of n values, in order (each square rounded before it is added).
inline float sum_of_squares(const float* x, std::size_t n) noexcept {
  float s = 0;
  for (std::size_t i = 0; i < n; ++i) s += mul(x[i], x[i]);
  return s;
}

/**
 * ggml's importance weighting of a group from the user's weights: qw * sqrt(sigma2 + x^2), sigma2 the
 * row's (or super-block's) mean square as the caller computed it.
 */
inline void importance_weights(const float* qw, const float* x, int n, float sigma2, float* out) noexcept {
  // Opaque too: the caller sums them, and a product must not fuse into that sum either.
  for (int j = 0; j < n; ++j) out[j] = mul(qw[j], std::sqrt(sigma2 + mul(x[j], x[j])));
}

}  // namespace detail
}  // namespace kernels::scalar
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_SCALAR_QUANTIZE_COMMON_HPP
