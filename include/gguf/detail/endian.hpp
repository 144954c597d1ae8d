#ifndef GGUF_DETAIL_ENDIAN_HPP
#define GGUF_DETAIL_ENDIAN_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace detail {

/// std::byteswap is C++23; this is the C++20 stand-in for unsigned integers.
template <class U>
constexpr U byteswap_unsigned(U v) noexcept {
  static_assert(std::is_unsigned_v<U>);
  if constexpr (sizeof(U) == 1) {
    return v;
  } else if constexpr (sizeof(U) == 2) {
    return static_cast<U>((v >> 8) | (v << 8));
  } else {
#if defined(__GNUC__) || defined(__clang__)
    if constexpr (sizeof(U) == 4) return __builtin_bswap32(v);
    if constexpr (sizeof(U) == 8) return __builtin_bswap64(v);
#endif
    U r = 0;
    for (std::size_t i = 0; i < sizeof(U); ++i) {
      r = static_cast<U>((r << 8) | ((v >> (8 * i)) & 0xFF));
    }
    return r;
  }
}

// clang-format off
template <std::size_t N> struct unsigned_of_size;
template <> struct unsigned_of_size<1> { using type = std::uint8_t; };
template <> struct unsigned_of_size<2> { using type = std::uint16_t; };
template <> struct unsigned_of_size<4> { using type = std::uint32_t; };
template <> struct unsigned_of_size<8> { using type = std::uint64_t; };
// clang-format on

/**
 * Load a trivially copyable scalar stored in byte order `Order` at `p` (any alignment).
 * memcpy + bit_cast, never reinterpret_cast: the bytes come from an arbitrary file offset.
 */
template <class T, std::endian Order>
inline T load(const std::byte* p) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  using U = typename unsigned_of_size<sizeof(T)>::type;
  U u;
  std::memcpy(&u, p, sizeof(U));
  if constexpr (Order != std::endian::native) u = byteswap_unsigned(u);
  return std::bit_cast<T>(u);
}

/// The same, with the byte order known only at run time (value views keep it as a flag).
template <class T>
inline T load(const std::byte* p, bool swap) noexcept {
  using U = typename unsigned_of_size<sizeof(T)>::type;
  U u;
  std::memcpy(&u, p, sizeof(U));
  if (swap) u = byteswap_unsigned(u);
  return std::bit_cast<T>(u);
}

/**
 * A little-endian scalar at `p` (any alignment): tensor data and the header of a little-endian file. The one
 * loader of block fields: it compiles to a plain load on little-endian hosts and to a load and a byte
 * swap on big-endian ones.
 */
template <class T>
inline T load_le(const std::byte* p) noexcept {
  return load<T, std::endian::little>(p);
}

/**
 * Store the scalar `v` little-endian at `p` (any alignment): the one writer of block fields (the quantizers),
 * the mirror of `load_le`.
 */
template <class T>
inline void store_le(std::byte* p, T v) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  using U = typename unsigned_of_size<sizeof(T)>::type;
  U u = std::bit_cast<U>(v);
  if constexpr (std::endian::native != std::endian::little) u = byteswap_unsigned(u);
  std::memcpy(p, &u, sizeof(U));
}

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "mixed-endian hosts are not supported");

}  // namespace detail
GGUF_END_NAMESPACE

#endif  // GGUF_DETAIL_ENDIAN_HPP
