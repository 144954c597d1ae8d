#ifndef GGUF_FORMAT_GGML_TYPES_HPP
#define GGUF_FORMAT_GGML_TYPES_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * ggml's tensor type ids, as stored in a GGUF tensor info (`enum ggml_type` in ggml.h).
 * The gaps are ids that were removed from the format (Q4_2, Q4_3, the Q4_0_x_y and IQ4_NL_x_y
 * interleavings): a file using them is rejected.
 */
enum class ggml_type : std::uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q8_1 = 9,
  q2_K = 10,
  q3_K = 11,
  q4_K = 12,
  q5_K = 13,
  q6_K = 14,
  q8_K = 15,
  iq2_xxs = 16,
  iq2_xs = 17,
  iq3_xxs = 18,
  iq1_s = 19,
  iq4_nl = 20,
  iq3_s = 21,
  iq2_s = 22,
  iq4_xs = 23,
  i8 = 24,
  i16 = 25,
  i32 = 26,
  i64 = 27,
  f64 = 28,
  iq1_m = 29,
  bf16 = 30,
  tq1_0 = 34,
  tq2_0 = 35,
  mxfp4 = 39,
  nvfp4 = 40,
  q1_0 = 41,
  q2_0 = 42,
};

/// One past the largest id ggml defines (GGML_TYPE_COUNT).
inline constexpr std::uint32_t ggml_type_count = 43;

/** What the format says about a tensor type: one row of the table below. */
struct type_traits {
  ggml_type type;            ///< the type id
  std::string_view name;     ///< ggml's lower-case name (`ggml_type_name`), e.g. "q4_K"
  std::uint32_t block_size;  ///< weights per block
  std::uint32_t type_size;   ///< bytes per block
  bool quantized;            ///< ggml's `is_quantized`

  /// Bits per weight, e.g. 4.5 for q4_0.
  constexpr double bits_per_weight() const noexcept { return 8.0 * type_size / block_size; }
};

/// The whole type table, in id order: the one place block sizes and byte sizes are written down
/// (ggml-common.h's block structs; FORMAT.md's table).
inline constexpr std::array<type_traits, 35> ggml_types{{
    {ggml_type::f32, "f32", 1, 4, false},
    {ggml_type::f16, "f16", 1, 2, false},
    {ggml_type::q4_0, "q4_0", 32, 18, true},
    {ggml_type::q4_1, "q4_1", 32, 20, true},
    {ggml_type::q5_0, "q5_0", 32, 22, true},
    {ggml_type::q5_1, "q5_1", 32, 24, true},
    {ggml_type::q8_0, "q8_0", 32, 34, true},
    {ggml_type::q8_1, "q8_1", 32, 36, true},
    {ggml_type::q2_K, "q2_K", 256, 84, true},
    {ggml_type::q3_K, "q3_K", 256, 110, true},
    {ggml_type::q4_K, "q4_K", 256, 144, true},
    {ggml_type::q5_K, "q5_K", 256, 176, true},
    {ggml_type::q6_K, "q6_K", 256, 210, true},
    {ggml_type::q8_K, "q8_K", 256, 292, true},
    {ggml_type::iq2_xxs, "iq2_xxs", 256, 66, true},
    {ggml_type::iq2_xs, "iq2_xs", 256, 74, true},
    {ggml_type::iq3_xxs, "iq3_xxs", 256, 98, true},
    {ggml_type::iq1_s, "iq1_s", 256, 50, true},
    {ggml_type::iq4_nl, "iq4_nl", 32, 18, true},
    {ggml_type::iq3_s, "iq3_s", 256, 110, true},
    {ggml_type::iq2_s, "iq2_s", 256, 82, true},
    {ggml_type::iq4_xs, "iq4_xs", 256, 136, true},
    {ggml_type::i8, "i8", 1, 1, false},
    {ggml_type::i16, "i16", 1, 2, false},
    {ggml_type::i32, "i32", 1, 4, false},
    {ggml_type::i64, "i64", 1, 8, false},
    {ggml_type::f64, "f64", 1, 8, false},
    {ggml_type::iq1_m, "iq1_m", 256, 56, true},
    {ggml_type::bf16, "bf16", 1, 2, false},
    {ggml_type::tq1_0, "tq1_0", 256, 54, true},
    {ggml_type::tq2_0, "tq2_0", 256, 66, true},
    {ggml_type::mxfp4, "mxfp4", 32, 17, true},
    {ggml_type::nvfp4, "nvfp4", 64, 36, true},
    {ggml_type::q1_0, "q1_0", 128, 18, true},
    {ggml_type::q2_0, "q2_0", 64, 18, true},
}};

namespace detail {
/// id -> row of ggml_types, or -1 for ids that are unknown or removed.
inline constexpr std::array<std::int8_t, ggml_type_count> type_index = [] {
  std::array<std::int8_t, ggml_type_count> idx{};
  for (auto& i : idx) i = -1;
  for (std::size_t r = 0; r < ggml_types.size(); ++r) {
    idx[static_cast<std::uint32_t>(ggml_types[r].type)] = static_cast<std::int8_t>(r);
  }
  return idx;
}();
}  // namespace detail

/**
 * The traits of a type id as read from a file (the tensor info's `ggml_type` field).
 * @param id any 32-bit value
 * @return the row of `ggml_types`, or nullptr for unknown and removed ids
 */
constexpr const type_traits* find_type(std::uint32_t id) noexcept {
  if (id >= ggml_type_count) return nullptr;
  const int r = detail::type_index[id];
  return r < 0 ? nullptr : &ggml_types[static_cast<std::size_t>(r)];
}

/** The traits of a valid type (an enumerator; for ids from a file, `find_type`). */
constexpr const type_traits& traits(ggml_type t) noexcept { return *find_type(static_cast<std::uint32_t>(t)); }

/**
 * ggml's name of a type (`ggml_type_name`): "q4_K", "f16", ...; "invalid" for a value that is not a type.
 * The view is of a string literal, so `.data()` is NUL-terminated.
 */
constexpr std::string_view to_string(ggml_type t) noexcept {
  const type_traits* tt = find_type(static_cast<std::uint32_t>(t));
  return tt ? tt->name : std::string_view{"invalid"};
}

/// The former name of `to_string(ggml_type)`.
[[deprecated("use gguf::to_string(ggml_type)")]] constexpr std::string_view name(ggml_type t) noexcept {
  return to_string(t);
}

/**
 * The type with ggml's name `n`.
 * @param n a name as `ggml_type_name` prints it ("q4_K", "bf16"): exact and case-sensitive
 * @return the type, or std::nullopt when no type has that name
 */
constexpr std::optional<ggml_type> type_from_name(std::string_view n) noexcept {
  for (const auto& t : ggml_types) {
    if (t.name == n) return t.type;
  }
  return std::nullopt;
}

static_assert(traits(ggml_type::q8_1).type_size == 36, "Q8_1 is half d, half s, int8 qs[32]");
static_assert(traits(ggml_type::q2_K).block_size == 256 && static_cast<int>(ggml_type::q2_K) == 10);
static_assert(find_type(4) == nullptr && find_type(31) == nullptr && find_type(38) == nullptr);

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_GGML_TYPES_HPP
