#ifndef GGUF_KERNELS_FP4_DEQUANTIZE_SIMD_HPP
#define GGUF_KERNELS_FP4_DEQUANTIZE_SIMD_HPP

#include <array>
#include <cstddef>
#include <cstdint>

#include "gguf/format/blocks.hpp"
#include "gguf/kernels/derived_tables.hpp"
#include "gguf/kernels/float_formats.hpp"
#include "gguf/kernels/simd/nibble_decoder.hpp"
#include "gguf/kernels/simd/ops.hpp"
#include "gguf/kernels/tables.hpp"

GGUF_SIMD_DIAGNOSTICS_PUSH
GGUF_KERNELS_BEGIN_NAMESPACE
namespace kernels::simd {

// SIMD twins of the 4-bit floats (fp4/dequantize.hpp). mxfp4 is decoded by simd/nibble_decoder.hpp
// with the doubled E2M1 levels and the halved E8M0 scale; its two subnormal scales use products computed
// at compile time (tables::mxfp4_tiny).
// nvfp4 has mxfp4's nibbles and table in groups of 16 weights, byte j of a group holding weights j and
// j + 8, each group with its own UE4M3 scale (read from a 256-entry table of the halved scales rather
// than converted, which branches; no scale makes a product subnormal). AVX-512: a group is one permute of
// its 16 products, indexed by its 8 bytes then their high nibbles (the ops' nibble_indices). Elsewhere
// 16 bytes are two groups for nibble_table: the low nibbles' levels of bytes 0-7 are weights 0-7 of the
// first group, of bytes 8-15 weights 0-7 of the second; the high nibbles' are weights 8-15 of each.

namespace detail {

template <class A, class Out>
GGUF_SIMD_INLINE void mxfp4_block(const nibble_decoder<A>& decode, const std::byte* src, Out* dst) noexcept {
  using B = blocks::mxfp4;
  const std::uint8_t e = load_le<std::uint8_t>(src + offsetof(B, e));
  if (e < 2) [[unlikely]] {  // subnormal halved scales: products made at compile time (tables::mxfp4_tiny)
    decode(tables::mxfp4_tiny.v[e], src + offsetof(B, qs), dst);
  } else {
    decode(e8m0_to_float_half(e), src + offsetof(B, qs), dst);
  }
}

}  // namespace detail

/// mxfp4: 32 weights, float(E2M1 level, doubled) * the halved E8M0 scale.
template <class A, class Out = float>
void dequant_mxfp4(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::mxfp4;
  const detail::nibble_decoder<A> decode(tables::kvalues_mxfp4, tables::mxfp4_pairs);
  std::size_t i = 0;
  for (; i + 2 <= nb; i += 2, src += 2 * sizeof(B), dst += 64) {
    detail::mxfp4_block<A>(decode, src, dst);
    detail::mxfp4_block<A>(decode, src + sizeof(B), dst + 32);
  }
  if (i < nb) detail::mxfp4_block<A>(decode, src, dst);
}

namespace detail {

/// ue4m3_to_float_half of every byte: nvfp4's scales by lookup.
inline constexpr std::array<float, 256> ue4m3_halves = [] {
  std::array<float, 256> t{};
  for (std::size_t x = 0; x < 256; ++x) t[x] = ue4m3_to_float_half(static_cast<std::uint8_t>(x));
  return t;
}();

}  // namespace detail

/// nvfp4: 64 weights in four groups of 16, float(E2M1 level, doubled) * the group's halved UE4M3 scale.
template <class A, class Out = float>
void dequant_nvfp4(const std::byte* src, Out* dst, std::size_t nb) noexcept {
  using B = blocks::nvfp4;
  constexpr std::size_t L = lanes<A>;
  const auto scale = [&src](std::size_t s) GGUF_SIMD_INLINE_LAMBDA {  // the scale of group s of the block at src
    return detail::ue4m3_halves[load_le<std::uint8_t>(src + offsetof(B, d) + s)];
  };
  if constexpr (lut_bits<A> >= 4) {
    alignas(64) std::int32_t wide[16];
    for (std::size_t k = 0; k < 16; ++k) wide[k] = tables::kvalues_mxfp4[k];
    const fbatch<A> levels = to_float<A>(ibatch<A>::load_aligned(wide));
    for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 64) {
      for (std::size_t h = 0; h < 2; ++h) {  // groups 2h and 2h + 1
        ibatch<A> a, b;
        nibble_indices<A>(src + offsetof(B, qs) + 16 * h, a, b);
        put_pair<A>(dst + 32 * h, permute<A>(levels * fbatch<A>(scale(2 * h)), a),
                    permute<A>(levels * fbatch<A>(scale(2 * h + 1)), b), no_subnormals);
      }
    }
  } else {
    const nibble_table<A> lut(tables::kvalues_mxfp4.data(), tables::mxfp4_pairs.data());
    for (std::size_t i = 0; i < nb; ++i, src += sizeof(B), dst += 64) {
      for (std::size_t h = 0; h < 2; ++h) {
        ibatch<A> lo[16 / L], hi[16 / L];
        lut.lookup(src + offsetof(B, qs) + 16 * h, lo, hi);
        for (std::size_t k = 0; k < 16 / L; ++k) {
          const std::size_t s = 2 * h + k * L / 8, j = k * L % 8;  // batch k: group s, weights j ..
          const fbatch<A> d(scale(s));
          put<A>(dst + 16 * s + j, (to_float<A>(lo[k]) * d));
          put<A>(dst + 16 * s + 8 + j, (to_float<A>(hi[k]) * d));
        }
      }
    }
  }
}

}  // namespace kernels::simd
GGUF_KERNELS_END_NAMESPACE
GGUF_SIMD_DIAGNOSTICS_POP

#endif  // GGUF_KERNELS_FP4_DEQUANTIZE_SIMD_HPP
