#ifndef GGUF_KERNELS_BLOCKS_HPP
#define GGUF_KERNELS_BLOCKS_HPP

#include <cstddef>
#include <cstdint>

#include "gguf/detail/isa.hpp"
#include "gguf/format/ggml_types.hpp"

GGUF_KERNELS_BEGIN_NAMESPACE
namespace blocks {

/**
 * The on-disk block layouts of ggml's quantized types (ggml-common.h), field for field. They document
 * the formats and give the byte offsets the kernels read at (`offsetof`); kernels never cast file bytes
 * to these structs, since tensor data may sit at any alignment. Halves (`half`) are IEEE binary16 bits,
 * all fields little-endian. QK_K = 256.
 */
using half = std::uint16_t;
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

#define GGUF_CHECK_BLOCK(name) \
  static_assert(sizeof(name) == traits(ggml_type::name).type_size, "block " #name " does not match the type table")
GGUF_CHECK_BLOCK(q4_0);
GGUF_CHECK_BLOCK(q4_1);
GGUF_CHECK_BLOCK(q5_0);
GGUF_CHECK_BLOCK(q5_1);
GGUF_CHECK_BLOCK(q8_0);
GGUF_CHECK_BLOCK(q8_1);
GGUF_CHECK_BLOCK(q2_K);
GGUF_CHECK_BLOCK(q3_K);
GGUF_CHECK_BLOCK(q4_K);
GGUF_CHECK_BLOCK(q5_K);
GGUF_CHECK_BLOCK(q6_K);
GGUF_CHECK_BLOCK(q8_K);
GGUF_CHECK_BLOCK(iq2_xxs);
GGUF_CHECK_BLOCK(iq2_xs);
GGUF_CHECK_BLOCK(iq2_s);
GGUF_CHECK_BLOCK(iq3_xxs);
GGUF_CHECK_BLOCK(iq3_s);
GGUF_CHECK_BLOCK(iq1_s);
GGUF_CHECK_BLOCK(iq1_m);
GGUF_CHECK_BLOCK(iq4_nl);
GGUF_CHECK_BLOCK(iq4_xs);
GGUF_CHECK_BLOCK(tq1_0);
GGUF_CHECK_BLOCK(tq2_0);
GGUF_CHECK_BLOCK(mxfp4);
GGUF_CHECK_BLOCK(nvfp4);
GGUF_CHECK_BLOCK(q1_0);
GGUF_CHECK_BLOCK(q2_0);
#undef GGUF_CHECK_BLOCK

}  // namespace blocks
GGUF_KERNELS_END_NAMESPACE

#endif  // GGUF_KERNELS_BLOCKS_HPP
