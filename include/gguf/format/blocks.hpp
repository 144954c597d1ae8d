#ifndef GGUF_FORMAT_BLOCKS_HPP
#define GGUF_FORMAT_BLOCKS_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/format/ggml_types.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * The on-disk block layouts of ggml's quantized types (ggml-common.h), field for field: format facts,
 * defined once, outside the per-instruction-set kernel namespaces. They document the formats and give the
 * byte offsets the kernels read at (`offsetof`); kernels never cast file bytes to these structs, since
 * tensor data may sit at any alignment. Halves (`half`) are IEEE binary16 bits,
 * all fields little-endian. QK_K = 256.
 */
namespace blocks {

/// The bits of an IEEE binary16 (ggml's ggml_half), little-endian in the file.
using half = std::uint16_t;
/// Weights in a K-quant or IQ super-block (ggml's QK_K).
inline constexpr std::size_t qk_k = 256;

// One line per block, as a table.
// clang-format off
struct q4_0 { half d; std::uint8_t qs[16]; };                   ///< x = (nibble - 8) * d
struct q4_1 { half d, m; std::uint8_t qs[16]; };                ///< x = nibble * d + m
struct q5_0 { half d; std::uint8_t qh[4]; std::uint8_t qs[16]; };  ///< 5th bits in qh
struct q5_1 { half d, m; std::uint8_t qh[4]; std::uint8_t qs[16]; };
struct q8_0 { half d; std::int8_t qs[32]; };
struct q8_1 { half d, s; std::int8_t qs[32]; };                 ///< s = d * sum(qs), unused here
struct q2_K { std::uint8_t scales[16]; std::uint8_t qs[64]; half d, dmin; };
struct q3_K { std::uint8_t hmask[32]; std::uint8_t qs[64]; std::uint8_t scales[12]; half d; };
struct q4_K { half d, dmin; std::uint8_t scales[12]; std::uint8_t qs[128]; };
struct q5_K { half d, dmin; std::uint8_t scales[12]; std::uint8_t qh[32]; std::uint8_t qs[128]; };
struct q6_K { std::uint8_t ql[128]; std::uint8_t qh[64]; std::int8_t scales[16]; half d; };
struct q8_K { float d; std::int8_t qs[256]; std::int16_t bsums[16]; };
struct iq2_xxs { half d; std::uint16_t qs[32]; };
struct iq2_xs { half d; std::uint16_t qs[32]; std::uint8_t scales[8]; };
struct iq2_s { half d; std::uint8_t qs[64]; std::uint8_t qh[8]; std::uint8_t scales[8]; };
struct iq3_xxs { half d; std::uint8_t qs[96]; };
struct iq3_s { half d; std::uint8_t qs[64]; std::uint8_t qh[8]; std::uint8_t signs[32]; std::uint8_t scales[4]; };
struct iq1_s { half d; std::uint8_t qs[32]; std::uint16_t qh[8]; };
struct iq1_m { std::uint8_t qs[32]; std::uint8_t qh[16]; std::uint8_t scales[8]; };  ///< d is spread over scales
struct iq4_nl { half d; std::uint8_t qs[16]; };
struct iq4_xs { half d; std::uint16_t scales_h; std::uint8_t scales_l[4]; std::uint8_t qs[128]; };
struct tq1_0 { std::uint8_t qs[48]; std::uint8_t qh[4]; half d; };  ///< base-3 digits, 5 (qs) or 4 (qh) a byte
struct tq2_0 { std::uint8_t qs[64]; half d; };
struct mxfp4 { std::uint8_t e; std::uint8_t qs[16]; };          ///< E8M0 scale, E2M1 nibbles
struct nvfp4 { std::uint8_t d[4]; std::uint8_t qs[32]; };       ///< UE4M3 scale per 16 weights
struct q1_0 { half d; std::uint8_t qs[16]; };                   ///< x = bit ? d : -d
struct q2_0 { half d; std::uint8_t qs[16]; };                   ///< x = (q - 1) * d
// clang-format on

// The fields, as ggml-common.h names them, for the reference (weight j is the block's j-th, from 0).
/**
 * @var q4_0::d
 * the block scale
 * @var q4_0::qs
 * byte j: weight j in the low nibble, weight j + 16 in the high
 * @var q4_1::d
 * the block scale
 * @var q4_1::m
 * the block min, added to every weight
 * @var q4_1::qs
 * as in q4_0
 * @struct q5_0
 * q5_0: 32 weights, x = (q - 16) * d with 5-bit q.
 * @var q5_0::d
 * the block scale
 * @var q5_0::qh
 * the fifth bits: weight j's is bit j of this little-endian 32-bit word
 * @var q5_0::qs
 * the low 4 bits, as in q4_0
 * @struct q5_1
 * q5_1: 32 weights, x = q * d + m with 5-bit q.
 * @var q5_1::d
 * the block scale
 * @var q5_1::m
 * the block min, added to every weight
 * @var q5_1::qh
 * the fifth bits, as in q5_0
 * @var q5_1::qs
 * the low 4 bits, as in q4_0
 * @struct q8_0
 * q8_0: 32 weights, x = q * d.
 * @var q8_0::d
 * the block scale
 * @var q8_0::qs
 * the weights, in order
 * @var q8_1::d
 * the block scale
 * @var q8_1::s
 * d times the sum of qs (for dot products)
 * @var q8_1::qs
 * the weights, in order
 * @struct q2_K
 * q2_K: 256 weights in 16 sub-blocks of 16, x = d * sc * q - dmin * m with 2-bit q.
 * @var q2_K::scales
 * per sub-block, its 4-bit scale sc (low nibble) and 4-bit min m (high nibble)
 * @var q2_K::qs
 * the weights, 4 a byte (order: kernels::scalar::dequant_q2_K)
 * @var q2_K::d
 * the scale of the sub-block scales
 * @var q2_K::dmin
 * the scale of the sub-block mins
 * @struct q3_K
 * q3_K: 256 weights in 16 sub-blocks of 16, x = d * (sc - 32) * q with q in -4..3.
 * @var q3_K::hmask
 * the high bits: clear subtracts 4 from the weight (order: kernels::scalar::dequant_q3_K)
 * @var q3_K::qs
 * the low 2 bits of the weights, 4 a byte
 * @var q3_K::scales
 * the 16 6-bit sub-block scales sc, packed: the low 4 bits in the nibbles of bytes 0-7, the top 2 in bytes 8-11
 * @var q3_K::d
 * the scale of the sub-block scales
 * @struct q4_K
 * q4_K: 256 weights in 8 sub-blocks of 32, x = d * sc * q - dmin * m with 4-bit q.
 * @var q4_K::d
 * the scale of the sub-block scales
 * @var q4_K::dmin
 * the scale of the sub-block mins
 * @var q4_K::scales
 * the 8 6-bit scales sc and 8 6-bit mins m, packed (ggml's get_scale_min_k4)
 * @var q4_K::qs
 * each 32 bytes: sub-block 2i in the low nibbles, 2i + 1 in the high
 * @struct q5_K
 * q5_K: q4_K with 5-bit q.
 * @var q5_K::d
 * the scale of the sub-block scales
 * @var q5_K::dmin
 * the scale of the sub-block mins
 * @var q5_K::scales
 * as in q4_K
 * @var q5_K::qh
 * the fifth bits: bit k of byte l is that of weight l of sub-block k
 * @var q5_K::qs
 * the low 4 bits, as in q4_K
 * @struct q6_K
 * q6_K: 256 weights in 16 sub-blocks of 16, x = d * sc * (q - 32) with 6-bit q.
 * @var q6_K::ql
 * the low 4 bits of the weights, 2 a byte (order: kernels::scalar::dequant_q6_K)
 * @var q6_K::qh
 * the high 2 bits of the weights, 4 a byte
 * @var q6_K::scales
 * the signed 8-bit sub-block scales sc
 * @var q6_K::d
 * the scale of the sub-block scales
 * @struct q8_K
 * q8_K: 256 weights, x = q * d (an intermediate type of ggml's dot products).
 * @var q8_K::d
 * the block scale, a float32
 * @var q8_K::qs
 * the weights, in order
 * @var q8_K::bsums
 * the sum of each 16 weights (not needed to dequantize)
 * @struct iq2_xxs
 * iq2_xxs: 256 weights, 2.06 bits each, from an 8-weight grid (tables::iq2xxs_grid).
 * @var iq2_xxs::d
 * the super-block scale
 * @var iq2_xxs::qs
 * per 32 weights, 4 grid indices (one byte each) and a 32-bit word of 4 7-bit sign fields and a 4-bit sub-scale
 * @struct iq2_xs
 * iq2_xs: 256 weights, 2.31 bits each, from an 8-weight grid (tables::iq2xs_grid).
 * @var iq2_xs::d
 * the super-block scale
 * @var iq2_xs::qs
 * per 8 weights, a 9-bit grid index and a 7-bit sign field
 * @var iq2_xs::scales
 * per 32 weights, two 4-bit sub-scales, one for each 16
 * @struct iq2_s
 * iq2_s: 256 weights, 2.56 bits each, from an 8-weight grid (tables::iq2s_grid).
 * @var iq2_s::d
 * the super-block scale
 * @var iq2_s::qs
 * the low 8 bits of 32 grid indices, then 32 sign bytes
 * @var iq2_s::qh
 * the top 2 bits of each grid index, 4 indices a byte
 * @var iq2_s::scales
 * per 32 weights, two 4-bit sub-scales, one for each 16
 * @struct iq3_xxs
 * iq3_xxs: 256 weights, 3.06 bits each, from a 4-weight grid (tables::iq3xxs_grid).
 * @var iq3_xxs::d
 * the super-block scale
 * @var iq3_xxs::qs
 * 64 grid indices (one byte each), then per 32 weights a 32-bit word of 4 7-bit sign fields and a 4-bit sub-scale
 * @struct iq3_s
 * iq3_s: 256 weights, 3.44 bits each, from a 4-weight grid (tables::iq3s_grid).
 * @var iq3_s::d
 * the super-block scale
 * @var iq3_s::qs
 * the low 8 bits of the 64 grid indices
 * @var iq3_s::qh
 * the ninth bits of the grid indices, one byte per 32 weights
 * @var iq3_s::signs
 * one sign byte per 8 weights
 * @var iq3_s::scales
 * per 32 weights, a 4-bit s for the odd sub-scale 1 + 2s
 * @struct iq1_s
 * iq1_s: 256 weights, 1.56 bits each, from an 8-weight grid of -1, 0, 1 (tables::iq1s_grid).
 * @var iq1_s::d
 * the super-block scale
 * @var iq1_s::qs
 * the low 8 bits of the 32 grid indices
 * @var iq1_s::qh
 * per 32 weights: the top 3 bits of its 4 indices, a 3-bit sub-scale and the sign of the delta
 * @var iq1_m::qs
 * the low 8 bits of the 32 grid indices
 * @var iq1_m::qh
 * per 8 weights, a nibble: the top 3 bits of the index and the sign of the delta
 * @var iq1_m::scales
 * four 16-bit words: 3-bit sub-scales per 16 weights, and d in their top nibbles
 * @struct iq4_nl
 * iq4_nl: 32 weights, x = d * tables::kvalues_iq4nl[nibble].
 * @var iq4_nl::d
 * the block scale
 * @var iq4_nl::qs
 * as in q4_0
 * @struct iq4_xs
 * iq4_xs: 256 weights, iq4_nl's levels with a 6-bit sub-scale per 32 weights.
 * @var iq4_xs::d
 * the super-block scale
 * @var iq4_xs::scales_h
 * the top 2 bits of the 8 sub-scales
 * @var iq4_xs::scales_l
 * the low 4 bits of the 8 sub-scales, two a byte
 * @var iq4_xs::qs
 * per 32 weights, 16 bytes as in q4_0
 * @var tq1_0::qs
 * 5 base-3 digits a byte (order: kernels::scalar::dequant_tq1_0)
 * @var tq1_0::qh
 * 4 base-3 digits a byte
 * @var tq1_0::d
 * the block scale
 * @struct tq2_0
 * tq2_0: 256 ternary weights, x = (q - 1) * d with 2-bit q.
 * @var tq2_0::qs
 * the weights, 4 a byte (order: kernels::scalar::dequant_tq2_0)
 * @var tq2_0::d
 * the block scale
 * @var mxfp4::e
 * the scale 2^(e - 127)
 * @var mxfp4::qs
 * byte j: weight j in the low nibble, weight j + 16 in the high
 * @var nvfp4::d
 * the UE4M3 scales of the four 16-weight sub-blocks
 * @var nvfp4::qs
 * per sub-block s, bytes 8s .. 8s + 7: weight j in the low nibble, j + 8 in the high
 * @var q1_0::d
 * the block scale
 * @var q1_0::qs
 * one bit a weight, least significant first: weight j is bit j % 8 of byte j / 8
 * @var q2_0::d
 * the block scale
 * @var q2_0::qs
 * 2 bits a weight, least significant first: weight j is in byte j / 4
 */

// kernels/registry.hpp checks that each block has its type's size (every type has a row there).

}  // namespace blocks
GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_BLOCKS_HPP
