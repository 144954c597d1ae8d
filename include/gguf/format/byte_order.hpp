#ifndef GGUF_FORMAT_BYTE_ORDER_HPP
#define GGUF_FORMAT_BYTE_ORDER_HPP

#include "gguf/version.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "gguf/detail/endian.hpp"
#include "gguf/format/blocks.hpp"
#include "gguf/format/ggml_types.hpp"

/**
 * @file
 * Tensor data in a big-endian file. The GGUF spec says a big-endian file holds big-endian tensors, and
 * gguf-py writes them so: the elements of f32, f16, bf16 and the integer types byte-swapped, and, in
 * quantized blocks (its gguf_convert_endian.py), the f16 scale fields swapped (`d` of q4_0 and q8_0, `d`
 * and `dmin` of q4_K, `d` of q6_K) and mxfp4 left alone. This library extends that rule to every type the
 * same way: **every field of a block that ggml-common.h declares as a multi-byte number is swapped**
 * (halves, floats, `uint16_t`/`int16_t` arrays); byte arrays are not. gguf-py's four quantized types come
 * out exactly as it converts them. `block_fields` lists those fields per type; `swap_blocks` applies the
 * rule (it is its own inverse).
 */

GGUF_BEGIN_NAMESPACE

/**
 * A run of `count` multi-byte numbers of `width` bytes at byte `offset` of a block: what a byte-order
 * conversion swaps.
 */
struct block_field {
  std::uint16_t offset;  ///< byte offset in the block
  std::uint8_t width;    ///< bytes of one number: 2, 4 or 8
  std::uint8_t count;    ///< numbers in the run
};

namespace detail {
// clang-format off
inline constexpr block_field fields_elem2[] = {{0, 2, 1}};
inline constexpr block_field fields_elem4[] = {{0, 4, 1}};
inline constexpr block_field fields_elem8[] = {{0, 8, 1}};
inline constexpr block_field fields_d[] = {{0, 2, 1}};           // ggml_half d first
inline constexpr block_field fields_d_m[] = {{0, 2, 2}};         // ggml_half d, m (or d, s / d, dmin)
inline constexpr block_field fields_q2_K[] = {{offsetof(blocks::q2_K, d), 2, 2}};
inline constexpr block_field fields_q3_K[] = {{offsetof(blocks::q3_K, d), 2, 1}};
inline constexpr block_field fields_q6_K[] = {{offsetof(blocks::q6_K, d), 2, 1}};
inline constexpr block_field fields_q8_K[] = {{offsetof(blocks::q8_K, d), 4, 1}, {offsetof(blocks::q8_K, bsums), 2, 16}};
inline constexpr block_field fields_iq2_xxs[] = {{0, 2, 1}, {offsetof(blocks::iq2_xxs, qs), 2, 32}};
inline constexpr block_field fields_iq2_xs[] = {{0, 2, 1}, {offsetof(blocks::iq2_xs, qs), 2, 32}};
inline constexpr block_field fields_iq1_s[] = {{0, 2, 1}, {offsetof(blocks::iq1_s, qh), 2, 8}};
inline constexpr block_field fields_iq4_xs[] = {{0, 2, 2}};      // d, scales_h
inline constexpr block_field fields_tq1_0[] = {{offsetof(blocks::tq1_0, d), 2, 1}};
inline constexpr block_field fields_tq2_0[] = {{offsetof(blocks::tq2_0, d), 2, 1}};
// clang-format on
}  // namespace detail

/**
 * The multi-byte numbers of one block of type `t`, which a byte-order conversion swaps (empty for
 * i8, iq1_m, mxfp4 and nvfp4, whose blocks are bytes only). For the one-element types a block is one
 * element.
 * @param t a valid type
 * @return the runs of numbers, in block order
 */
constexpr std::span<const block_field> block_fields(ggml_type t) noexcept {
  switch (t) {
    case ggml_type::f16:
    case ggml_type::bf16:
    case ggml_type::i16: return detail::fields_elem2;
    case ggml_type::f32:
    case ggml_type::i32: return detail::fields_elem4;
    case ggml_type::f64:
    case ggml_type::i64: return detail::fields_elem8;
    case ggml_type::q4_0:
    case ggml_type::q5_0:
    case ggml_type::q8_0:
    case ggml_type::iq2_s:
    case ggml_type::iq3_xxs:
    case ggml_type::iq3_s:
    case ggml_type::iq4_nl:
    case ggml_type::q1_0:
    case ggml_type::q2_0: return detail::fields_d;
    case ggml_type::q4_1:
    case ggml_type::q5_1:
    case ggml_type::q8_1:
    case ggml_type::q4_K:
    case ggml_type::q5_K: return detail::fields_d_m;
    case ggml_type::q2_K: return detail::fields_q2_K;
    case ggml_type::q3_K: return detail::fields_q3_K;
    case ggml_type::q6_K: return detail::fields_q6_K;
    case ggml_type::q8_K: return detail::fields_q8_K;
    case ggml_type::iq2_xxs: return detail::fields_iq2_xxs;
    case ggml_type::iq2_xs: return detail::fields_iq2_xs;
    case ggml_type::iq1_s: return detail::fields_iq1_s;
    case ggml_type::iq4_xs: return detail::fields_iq4_xs;
    case ggml_type::tq1_0: return detail::fields_tq1_0;
    case ggml_type::tq2_0: return detail::fields_tq2_0;
    case ggml_type::i8:
    case ggml_type::iq1_m:
    case ggml_type::mxfp4:
    case ggml_type::nvfp4: return {};
  }
  return {};
}

namespace detail {
/// Reverses the bytes of `count` numbers of `width` (2, 4 or 8) bytes at `p`.
inline void swap_run(std::byte* p, std::size_t width, std::size_t count) noexcept {
  const auto swap_each = [&](auto word) {
    using U = decltype(word);
    for (std::size_t k = 0; k < count; ++k, p += sizeof(U)) {
      std::memcpy(&word, p, sizeof(U));
      word = byteswap_unsigned(word);
      std::memcpy(p, &word, sizeof(U));
    }
  };
  if (width == 2) swap_each(std::uint16_t{});
  if (width == 4) swap_each(std::uint32_t{});
  if (width == 8) swap_each(std::uint64_t{});
}
}  // namespace detail

/**
 * Swaps the byte order of every multi-byte field of the whole blocks in `data`, in place: little-endian
 * blocks become big-endian ones and back (the conversion is its own inverse).
 * @param t    the blocks' type (valid)
 * @param data whole blocks of `t`; a partial block at the end is left alone
 */
inline void swap_blocks(ggml_type t, std::span<std::byte> data) noexcept {
  const std::span<const block_field> fields = block_fields(t);
  if (fields.empty()) return;
  const std::size_t block = traits(t).type_size;
  const std::size_t n = data.size() / block;
  if (fields.size() == 1 && fields[0].width == block) {  // one-element types: one run over everything
    detail::swap_run(data.data(), fields[0].width, n);
    return;
  }
  std::byte* p = data.data();
  for (std::size_t b = 0; b < n; ++b, p += block) {
    for (const block_field& f : fields) detail::swap_run(p + f.offset, f.width, f.count);
  }
}

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_BYTE_ORDER_HPP
