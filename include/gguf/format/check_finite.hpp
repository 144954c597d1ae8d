#ifndef GGUF_FORMAT_CHECK_FINITE_HPP
#define GGUF_FORMAT_CHECK_FINITE_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "gguf/detail/endian.hpp"
#include "gguf/format/blocks.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/result.hpp"

/**
 * @file
 * The check ggml makes of tensor data before trusting it (ggml_validate_row_data: llama.cpp runs it on
 * every tensor it quantizes, and on load with `check_tensors`): no NaN or infinity where a float is
 * stored. Which floats that is, per type, is a format fact.
 */

GGUF_BEGIN_NAMESPACE

namespace detail {

/// An IEEE binary16 that is NaN or infinite (exponent all ones).
constexpr bool half_not_finite(std::uint16_t h) noexcept { return (h & 0x7C00u) == 0x7C00u; }

/// The byte offsets of the f16 fields ggml checks in one block of `t` (up to two), and how many.
struct checked_halves {
  std::size_t offset[2] = {};
  std::size_t count = 0;
};

constexpr checked_halves halves_checked(ggml_type t) noexcept {
  namespace b = blocks;
  switch (t) {
    case ggml_type::q1_0: return {{offsetof(b::q1_0, d)}, 1};
    case ggml_type::q2_0: return {{offsetof(b::q2_0, d)}, 1};
    case ggml_type::q4_0: return {{offsetof(b::q4_0, d)}, 1};
    case ggml_type::q5_0: return {{offsetof(b::q5_0, d)}, 1};
    case ggml_type::q8_0: return {{offsetof(b::q8_0, d)}, 1};
    case ggml_type::q4_1: return {{offsetof(b::q4_1, d), offsetof(b::q4_1, m)}, 2};
    case ggml_type::q5_1: return {{offsetof(b::q5_1, d), offsetof(b::q5_1, m)}, 2};
    case ggml_type::q2_K: return {{offsetof(b::q2_K, d), offsetof(b::q2_K, dmin)}, 2};
    case ggml_type::q3_K: return {{offsetof(b::q3_K, d)}, 1};
    case ggml_type::q4_K: return {{offsetof(b::q4_K, d), offsetof(b::q4_K, dmin)}, 2};
    case ggml_type::q5_K: return {{offsetof(b::q5_K, d), offsetof(b::q5_K, dmin)}, 2};
    case ggml_type::q6_K: return {{offsetof(b::q6_K, d)}, 1};
    case ggml_type::tq1_0: return {{offsetof(b::tq1_0, d)}, 1};
    case ggml_type::tq2_0: return {{offsetof(b::tq2_0, d)}, 1};
    case ggml_type::iq1_s: return {{offsetof(b::iq1_s, d)}, 1};
    case ggml_type::iq2_xxs: return {{offsetof(b::iq2_xxs, d)}, 1};
    case ggml_type::iq2_xs: return {{offsetof(b::iq2_xs, d)}, 1};
    case ggml_type::iq2_s: return {{offsetof(b::iq2_s, d)}, 1};
    case ggml_type::iq3_xxs: return {{offsetof(b::iq3_xxs, d)}, 1};
    case ggml_type::iq3_s: return {{offsetof(b::iq3_s, d)}, 1};
    case ggml_type::iq4_nl: return {{offsetof(b::iq4_nl, d)}, 1};
    case ggml_type::iq4_xs: return {{offsetof(b::iq4_xs, d)}, 1};
    default: return {};
  }
}

}  // namespace detail

/**
 * Whether the floats stored in `data` (whole blocks of type `t`) are finite, as ggml_validate_row_data
 * decides: every value of f32, f64, f16 and bf16 data; every block's f16 scale (and min, for the types
 * with one) of the quantized types; iq1_m's scale spread over its `scales`; q8_K's float scale; mxfp4's
 * E8M0 exponent, where 0xFF is NaN. nvfp4 and the integer types have nothing to check. Little-endian data.
 * @param t    the type
 * @param data whole blocks of it
 * @return nothing; `out_of_range` at the offset (in `data`) of the first non-finite field, or
 *         `size_mismatch` when `data` is not whole blocks, or `bad_tensor_type` for an unknown type and
 *         for q8_1, which ggml's check refuses outright
 */
inline result<void> check_finite(ggml_type t, std::span<const std::byte> data) noexcept {
  using detail::load_le;
  const type_traits* tr = find_type(static_cast<std::uint32_t>(t));
  if (!tr) return error{errc::bad_tensor_type, "unknown tensor type"};
  const std::size_t size = tr->type_size;
  if (data.size() % size != 0) return error{errc::size_mismatch, "the data is not a whole number of blocks"};
  const std::size_t n = data.size() / size;
  const std::byte* p = data.data();
  const auto bad = [](std::size_t at, bool nan) {
    return error{errc::out_of_range, at,
                 nan ? "a NaN where ggml requires a finite float" : "an infinity where ggml requires a finite float"};
  };
  switch (t) {
    case ggml_type::f32:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = load_le<std::uint32_t>(p + 4 * i);
        if ((u & 0x7F800000u) == 0x7F800000u) return bad(4 * i, (u & 0x007FFFFFu) != 0);
      }
      return {};
    case ggml_type::f64:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t u = load_le<std::uint64_t>(p + 8 * i);
        if ((u & 0x7FF0000000000000u) == 0x7FF0000000000000u) return bad(8 * i, (u & 0x000FFFFFFFFFFFFFu) != 0);
      }
      return {};
    case ggml_type::f16:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t h = load_le<std::uint16_t>(p + 2 * i);
        if (detail::half_not_finite(h)) return bad(2 * i, (h & 0x03FFu) != 0);
      }
      return {};
    case ggml_type::bf16:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t h = load_le<std::uint16_t>(p + 2 * i);
        if ((h & 0x7F80u) == 0x7F80u) return bad(2 * i, (h & 0x007Fu) != 0);
      }
      return {};
    case ggml_type::q8_K:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = load_le<std::uint32_t>(p + i * size + offsetof(blocks::q8_K, d));
        if ((u & 0x7F800000u) == 0x7F800000u) return bad(i * size, (u & 0x007FFFFFu) != 0);
      }
      return {};
    case ggml_type::mxfp4:
      for (std::size_t i = 0; i < n; ++i) {
        if (p[i * size + offsetof(blocks::mxfp4, e)] == std::byte{0xFF}) return bad(i * size, true);
      }
      return {};
    case ggml_type::iq1_m:
      for (std::size_t i = 0; i < n; ++i) {
        const std::byte* sc = p + i * size + offsetof(blocks::iq1_m, scales);
        const auto s = [sc](int k) { return static_cast<unsigned>(load_le<std::uint16_t>(sc + 2 * k)); };
        const auto h = static_cast<std::uint16_t>((s(0) >> 12) | ((s(1) >> 8) & 0x00F0u) | ((s(2) >> 4) & 0x0F00u) |
                                                  (s(3) & 0xF000u));
        if (detail::half_not_finite(h)) return bad(i * size, (h & 0x03FFu) != 0);
      }
      return {};
    case ggml_type::q8_1: return error{errc::bad_tensor_type, "ggml's check refuses q8_1 data"};
    default: break;
  }
  const detail::checked_halves c = detail::halves_checked(t);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < c.count; ++k) {
      const std::size_t at = i * size + c.offset[k];
      const std::uint16_t h = load_le<std::uint16_t>(p + at);
      if (detail::half_not_finite(h)) return bad(at, (h & 0x03FFu) != 0);
    }
  }
  return {};
}

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_CHECK_FINITE_HPP
