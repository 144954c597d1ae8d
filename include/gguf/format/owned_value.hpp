#ifndef GGUF_FORMAT_OWNED_VALUE_HPP
#define GGUF_FORMAT_OWNED_VALUE_HPP

#include "gguf/version.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gguf/detail/endian.hpp"
#include "gguf/format/value.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * A metadata value that owns its bytes: what a `writer` stores for a key you set. It holds the value
 * encoded as GGUF v3 little-endian (what follows the type id in a file) and hands out a `value_view` of
 * it, so a value you build and a value read from a file are read, printed and written the same way.
 *
 * Build it from a scalar (`value(std::uint32_t{4096})`, `value(1e-5f)`, `value(true)`), a string
 * (`value("llama")`), or an array (`value::array(std::span<const float>)`, `value::strings(...)`,
 * `value::arrays(...)` for arrays of arrays), or copy one out of a file (`value(view)`).
 */
class value {
 public:
  /** The uint8 0 (what a default-constructed value is). */
  value() : value(std::uint8_t{0}) {}

  /**
   * A scalar of the value type that represents `T`: `std::uint8_t` ... `double`, and `bool`.
   * @param x the value
   */
  template <class T>
  requires gguf_scalar<T>
  explicit value(T x) : type_(value_type_of<T>::value) { put_scalar(bytes_, x); }

  /** A string (any bytes; GGUF strings are UTF-8 by convention, not checked). */
  explicit value(std::string_view s) : type_(value_type::string) {
    bytes_.resize(s.size());
    if (!s.empty()) std::memcpy(bytes_.data(), s.data(), s.size());
  }
  /** A string. */
  explicit value(const char* s) : value(std::string_view(s)) {}
  /** A string. */
  explicit value(const std::string& s) : value(std::string_view(s)) {}

  /**
   * A deep copy of a value read from a file (any type, nested arrays included), in the file's byte order
   * or not: the copy is little-endian v3.
   * @param v the value to copy
   */
  explicit value(const value_view& v) : type_(v.type()) {
    // The view's own layout: a scalar's bytes, a string's characters, an array's items.
    if (v.is_array()) {
      const array_view a = *v.get<array_view>();
      item_type_ = a.item_type();
      count_ = a.size();
      for (const value_view item : a) append_payload(bytes_, item);
    } else if (v.is_string()) {
      const std::string_view s = *v.get<std::string_view>();
      bytes_.resize(s.size());
      if (!s.empty()) std::memcpy(bytes_.data(), s.data(), s.size());
    } else {
      append_payload(bytes_, v);
    }
  }

  /**
   * An array of scalars.
   * @tparam T a `gguf_scalar` (the item type is `value_type_of<T>`)
   * @param items the items
   */
  template <class T>
  requires gguf_scalar<T>
  static value array(std::span<const T> items) {
    value v(value_type::array, value_type_of<T>::value, items.size());
    v.bytes_.reserve(items.size() * sizeof(T));
    for (T x : items) put_scalar(v.bytes_, x);
    return v;
  }
  /** An array of scalars, from a braced list: `value::array<float>({0.5f, 1.5f})`. */
  template <class T>
  requires gguf_scalar<T>
  static value array(std::initializer_list<T> items) { return array(std::span<const T>(items.begin(), items.size())); }

  /**
   * An array of strings.
   * @param items the strings (anything convertible to `std::string_view`)
   */
  template <class S>
  static value strings(std::span<const S> items) {
    value v(value_type::array, value_type::string, items.size());
    for (const S& s : items) put_string(v.bytes_, std::string_view(s));
    return v;
  }
  /** An array of strings, from a braced list. */
  static value strings(std::initializer_list<std::string_view> items) {
    return strings(std::span<const std::string_view>(items.begin(), items.size()));
  }

  /**
   * An array of arrays (the format allows them; ggml's reader refuses them).
   * @param items arrays, all of the same item type
   * @return the array; `type_mismatch` when an item is not an array or the item types differ
   */
  static result<value> arrays(std::span<const value> items) {
    value v(value_type::array, value_type::array, items.size());
    value_type inner = value_type::uint8;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const value& item = items[i];
      if (item.type_ != value_type::array)
        return error{errc::type_mismatch, "an item of an array of arrays is not an array"};
      if (i > 0 && item.item_type_ != inner) {
        return error{errc::type_mismatch, "the arrays of an array of arrays have different item types"};
      }
      inner = item.item_type_;
      append_payload(v.bytes_, item.view());
    }
    return v;
  }

  /** The value's type. */
  value_type type() const noexcept { return type_; }

  /** A view of the value, valid while this object lives and is not modified. */
  value_view view() const& noexcept {
    constexpr detail::wire le{std::endian::native != std::endian::little, false};
    // Never null (an empty string or array points at zeros), as a view of a file never is.
    const std::byte* data = bytes_.empty() ? detail::zero_bytes : bytes_.data();
    return detail::value_access::make(type_, item_type_, le, data, bytes_.size(), count_);
  }
  value_view view() const&& = delete;  ///< would dangle: keep the value in a variable

  /** The encoded bytes: the scalar, the string's characters, or the array's items (v3, little-endian). */
  std::span<const std::byte> bytes() const& noexcept { return bytes_; }
  std::span<const std::byte> bytes() const&& = delete;  ///< would dangle: keep the value in a variable

 private:
  value(value_type t, value_type item, std::uint64_t count) : type_(t), item_type_(item), count_(count) {}

  template <class T>
  static void put_scalar(std::vector<std::byte>& out, T x) {
    if constexpr (std::is_same_v<T, bool>) {
      out.push_back(std::byte{static_cast<unsigned char>(x ? 1 : 0)});
    } else {
      using U = typename detail::unsigned_of_size<sizeof(T)>::type;
      U u = std::bit_cast<U>(x);
      if constexpr (std::endian::native != std::endian::little) u = detail::byteswap_unsigned(u);
      const std::size_t at = out.size();
      out.resize(at + sizeof(U));
      std::memcpy(out.data() + at, &u, sizeof(U));
    }
  }
  static void put_string(std::vector<std::byte>& out, std::string_view s) {
    put_scalar(out, static_cast<std::uint64_t>(s.size()));
    const std::size_t at = out.size();
    out.resize(at + s.size());
    if (!s.empty()) std::memcpy(out.data() + at, s.data(), s.size());
  }
  // What follows a value's type id in a v3 little-endian file: scalar bytes, a string with its length,
  // or an array's item type, count and items.
  static void append_payload(std::vector<std::byte>& out, const value_view& v) {
    switch (v.type()) {
      case value_type::uint8: put_scalar(out, *v.get<std::uint8_t>()); break;
      case value_type::int8: put_scalar(out, *v.get<std::int8_t>()); break;
      case value_type::uint16: put_scalar(out, *v.get<std::uint16_t>()); break;
      case value_type::int16: put_scalar(out, *v.get<std::int16_t>()); break;
      case value_type::uint32: put_scalar(out, *v.get<std::uint32_t>()); break;
      case value_type::int32: put_scalar(out, *v.get<std::int32_t>()); break;
      case value_type::float32: put_scalar(out, *v.get<float>()); break;
      case value_type::boolean: put_scalar(out, *v.get<bool>()); break;
      case value_type::uint64: put_scalar(out, *v.get<std::uint64_t>()); break;
      case value_type::int64: put_scalar(out, *v.get<std::int64_t>()); break;
      case value_type::float64: put_scalar(out, *v.get<double>()); break;
      case value_type::string: put_string(out, *v.get<std::string_view>()); break;
      case value_type::array: {
        const array_view a = *v.get<array_view>();
        put_scalar(out, static_cast<std::uint32_t>(a.item_type()));
        put_scalar(out, static_cast<std::uint64_t>(a.size()));
        for (const value_view item : a) append_payload(out, item);
        break;
      }
    }
  }

  std::vector<std::byte> bytes_;
  value_type type_ = value_type::uint8;
  value_type item_type_ = value_type::uint8;
  std::uint64_t count_ = 1;
};

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_OWNED_VALUE_HPP
