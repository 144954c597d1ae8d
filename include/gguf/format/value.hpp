#ifndef GGUF_FORMAT_VALUE_HPP
#define GGUF_FORMAT_VALUE_HPP

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>

#include "gguf/detail/endian.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/** The 13 metadata value types of the GGUF spec (`enum gguf_type`), with their on-disk ids. */
enum class value_type : std::uint32_t {
  uint8 = 0,
  int8 = 1,
  uint16 = 2,
  int16 = 3,
  uint32 = 4,
  int32 = 5,
  float32 = 6,
  boolean = 7,  ///< one byte, 0 or 1
  string = 8,   ///< length-prefixed bytes, no NUL
  array = 9,    ///< item type, count, items (items may be arrays)
  uint64 = 10,
  int64 = 11,
  float64 = 12,
};

/// One past the largest value type id (GGUF_TYPE_COUNT): ids from a file at or above it are invalid.
inline constexpr std::uint32_t value_type_count = 13;

/**
 * The type's name as ggml's tooling and the GGUF spec print it: "uint8", ..., "bool", "string",
 * "array", "float64"; "invalid" for an id outside the enumeration. The view is of a string literal, so
 * `.data()` is NUL-terminated.
 */
constexpr std::string_view to_string(value_type t) noexcept {
  constexpr std::string_view names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
                                        "bool",  "string", "array",  "uint64", "int64",  "float64"};
  const auto i = static_cast<std::uint32_t>(t);
  return i < value_type_count ? names[i] : std::string_view{"invalid"};
}

/// The former name of `to_string(value_type)`.
[[deprecated("use gguf::to_string(value_type)")]] constexpr std::string_view name(value_type t) noexcept {
  return to_string(t);
}

/** Bytes of one value of a fixed-size type; 0 for string and array (and unknown ids). */
constexpr std::size_t fixed_size(value_type t) noexcept {
  constexpr std::uint8_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  const auto i = static_cast<std::uint32_t>(t);
  return i < value_type_count ? sizes[i] : 0;
}

class array_view;

/// The C++ type that represents each value type: `value_type_of<T>` maps back.
// clang-format off
template <class T> struct value_type_of;
template <> struct value_type_of<std::uint8_t> { static constexpr value_type value = value_type::uint8; };
template <> struct value_type_of<std::int8_t> { static constexpr value_type value = value_type::int8; };
template <> struct value_type_of<std::uint16_t> { static constexpr value_type value = value_type::uint16; };
template <> struct value_type_of<std::int16_t> { static constexpr value_type value = value_type::int16; };
template <> struct value_type_of<std::uint32_t> { static constexpr value_type value = value_type::uint32; };
template <> struct value_type_of<std::int32_t> { static constexpr value_type value = value_type::int32; };
template <> struct value_type_of<float> { static constexpr value_type value = value_type::float32; };
template <> struct value_type_of<bool> { static constexpr value_type value = value_type::boolean; };
template <> struct value_type_of<std::string_view> { static constexpr value_type value = value_type::string; };
template <> struct value_type_of<array_view> { static constexpr value_type value = value_type::array; };
template <> struct value_type_of<std::uint64_t> { static constexpr value_type value = value_type::uint64; };
template <> struct value_type_of<std::int64_t> { static constexpr value_type value = value_type::int64; };
template <> struct value_type_of<double> { static constexpr value_type value = value_type::float64; };
// clang-format on

// The specializations, one per value type, for the reference.
/**
 * @struct value_type_of<std::uint8_t>
 * `std::uint8_t` represents `value_type::uint8`.
 * @var value_type_of<std::uint8_t>::value
 * `value_type::uint8`
 * @struct value_type_of<std::int8_t>
 * `std::int8_t` represents `value_type::int8`.
 * @var value_type_of<std::int8_t>::value
 * `value_type::int8`
 * @struct value_type_of<std::uint16_t>
 * `std::uint16_t` represents `value_type::uint16`.
 * @var value_type_of<std::uint16_t>::value
 * `value_type::uint16`
 * @struct value_type_of<std::int16_t>
 * `std::int16_t` represents `value_type::int16`.
 * @var value_type_of<std::int16_t>::value
 * `value_type::int16`
 * @struct value_type_of<std::uint32_t>
 * `std::uint32_t` represents `value_type::uint32`.
 * @var value_type_of<std::uint32_t>::value
 * `value_type::uint32`
 * @struct value_type_of<std::int32_t>
 * `std::int32_t` represents `value_type::int32`.
 * @var value_type_of<std::int32_t>::value
 * `value_type::int32`
 * @struct value_type_of<float>
 * `float` represents `value_type::float32`.
 * @var value_type_of<float>::value
 * `value_type::float32`
 * @struct value_type_of<bool>
 * `bool` represents `value_type::boolean`.
 * @var value_type_of<bool>::value
 * `value_type::boolean`
 * @struct value_type_of<std::string_view>
 * `std::string_view` represents `value_type::string`.
 * @var value_type_of<std::string_view>::value
 * `value_type::string`
 * @struct value_type_of<array_view>
 * `array_view` represents `value_type::array`.
 * @var value_type_of<array_view>::value
 * `value_type::array`
 * @struct value_type_of<std::uint64_t>
 * `std::uint64_t` represents `value_type::uint64`.
 * @var value_type_of<std::uint64_t>::value
 * `value_type::uint64`
 * @struct value_type_of<std::int64_t>
 * `std::int64_t` represents `value_type::int64`.
 * @var value_type_of<std::int64_t>::value
 * `value_type::int64`
 * @struct value_type_of<double>
 * `double` represents `value_type::float64`.
 * @var value_type_of<double>::value
 * `value_type::float64`
 */

/// The fixed-size numeric types a value can hold (bool included): the ones `as_span` can view.
template <class T>
concept gguf_scalar = requires {
  value_type_of<T>::value;
}
&&std::is_arithmetic_v<T>;

namespace detail {

/// How the bytes of a file are laid out: byte order, and GGUF v1's 32-bit lengths and counts.
struct wire {
  bool swap = false;    ///< the file's byte order is not the host's
  bool narrow = false;  ///< v1: string lengths and array counts are uint32
  constexpr std::size_t count_size() const noexcept { return narrow ? 4 : 8; }
  std::uint64_t count_at(const std::byte* p) const noexcept {
    return narrow ? load<std::uint32_t>(p, swap) : load<std::uint64_t>(p, swap);
  }
};

struct value_access;  // builds views: the parser's and iteration's way in
/// What a default `value_view` points at: a uint8 0.
inline constexpr std::byte zero_bytes[8] = {};

/// The GGUF name of the integer type T ("int32", ...), for errors; a string literal.
template <class T>
constexpr const char* integer_name() noexcept {
  constexpr bool s = std::is_signed_v<T>;
  switch (sizeof(T)) {
    case 1: return s ? "int8" : "uint8";
    case 2: return s ? "int16" : "uint16";
    case 4: return s ? "int32" : "uint32";
    default: return s ? "int64" : "uint64";
  }
}

}  // namespace detail

/**
 * A metadata value: a view of its bytes in the file, tagged with its type. Scalars are decoded on
 * access (in the file's byte order); strings are `std::string_view`s into the file; arrays are lazy
 * `array_view`s. Only `get<T>` with exactly the stored type succeeds: there is no silent
 * reinterpretation, and `as_integer` converts between integer types only when the value fits.
 *
 * Views are made by the parser from validated bytes and stay valid as long as those bytes do.
 */
class value_view {
 public:
  /** The uint8 0 (the bytes of no file); only the parser and array iteration make views of a file. */
  constexpr value_view() noexcept = default;

  /// The stored type.
  constexpr value_type type() const noexcept { return type_; }
  /// True for an array value.
  constexpr bool is_array() const noexcept { return type_ == value_type::array; }
  /// True for a string value.
  constexpr bool is_string() const noexcept { return type_ == value_type::string; }

  /**
   * The value as `T`, which must be the C++ type of the stored type (`uint32_t` for uint32, ...).
   * @tparam T a type with a `value_type_of<T>` (`std::string_view` for strings, `array_view` for arrays)
   * @return the decoded value (a view into the file for strings and arrays), or `type_mismatch`
   */
  template <class T>
  result<T> get() const noexcept;

  /**
   * The value of any integer type (bool excluded) converted to the integer type `T` when it is
   * representable: for keys that converters store with different widths, such as a context length
   * stored as uint32 by one and uint64 by another.
   * @tparam T an integer type other than bool
   * @return the value as `T`; `out_of_range` when it does not fit, `type_mismatch` for a value that is
   *         not an integer
   */
  template <class T>
  result<T> as_integer() const noexcept;

  /** The raw bytes of the value in the file: for strings the characters, for arrays the items. */
  constexpr std::span<const std::byte> bytes() const noexcept { return {data_, static_cast<std::size_t>(size_)}; }

 private:
  friend class array_view;
  friend struct detail::value_access;
  // Built by the parser and by array iteration from validated bytes only.
  constexpr value_view(value_type t, value_type item, detail::wire w, const std::byte* data, std::uint64_t size,
                       std::uint64_t count) noexcept
      : type_(t), item_type_(item), wire_(w), data_(data), size_(size), count_(count) {}
  value_type type_ = value_type::uint8;
  value_type item_type_ = value_type::uint8;
  detail::wire wire_{};
  const std::byte* data_ = detail::zero_bytes;  // never null: a default view reads as the uint8 0
  std::uint64_t size_ = 1;                      // bytes: the scalar, the string characters, or all array items
  std::uint64_t count_ = 1;                     // arrays: number of items
};

namespace detail {

/// The one way to build value views: used by the parser and by array iteration, on bytes they have
/// validated.
struct value_access {
  static constexpr value_view make(value_type t, value_type item, wire w, const std::byte* data, std::uint64_t size,
                                   std::uint64_t count) noexcept {
    return {t, item, w, data, size, count};
  }
  /// How a view's bytes are laid out (for the writer's copy without decoding).
  static constexpr wire wire_of(const value_view& v) noexcept { return v.wire_; }
};

/// Decode the (already validated) value of type `t` that starts at `p`; `*next` receives its end.
inline value_view decode_value(value_type t, const std::byte* p, wire w, const std::byte** next) noexcept;

/// Byte length of `n` validated items of type `t` starting at `p`.
inline std::uint64_t items_extent(value_type t, const std::byte* p, std::uint64_t n, wire w) noexcept {
  if (const std::size_t fs = fixed_size(t)) return n * fs;
  const std::byte* q = p;
  if (t == value_type::string) {
    const std::size_t cs = w.count_size();
    for (std::uint64_t i = 0; i < n; ++i) q += cs + w.count_at(q);
  } else {
    for (std::uint64_t i = 0; i < n; ++i) (void)decode_value(t, q, w, &q);
  }
  return static_cast<std::uint64_t>(q - p);
}

inline value_view decode_value(value_type t, const std::byte* p, wire w, const std::byte** next) noexcept {
  if (const std::size_t fs = fixed_size(t)) {
    *next = p + fs;
    return value_access::make(t, value_type::uint8, w, p, fs, 1);
  }
  if (t == value_type::string) {
    const std::uint64_t len = w.count_at(p);
    p += w.count_size();
    *next = p + len;
    return value_access::make(t, value_type::uint8, w, p, len, 1);
  }
  const auto item = static_cast<value_type>(load<std::uint32_t>(p, w.swap));
  const std::uint64_t n = w.count_at(p + 4);
  p += 4 + w.count_size();
  const std::uint64_t extent = items_extent(item, p, n, w);
  *next = p + extent;
  return value_access::make(t, item, w, p, extent, n);
}

template <class T>
inline T decode_scalar(const std::byte* p, bool swap) noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    return load<std::uint8_t>(p, false) != 0;  // the parser admitted only 0 and 1
  } else {
    return load<T>(p, swap);
  }
}

}  // namespace detail

/**
 * A lazy view of an array value: item type, item count and the items' bytes. Iterating yields
 * `value_view`s (`for (auto v : arr)`), `as<T>()` yields decoded `T`s, e.g. every token of a 150k
 * vocabulary as `std::string_view` without allocating. Fixed-size items have O(1) `get<T>(i)`; a
 * string or nested-array item `i` is found by walking the items before it.
 */
class array_view {
 public:
  /** An empty array of uint8. */
  constexpr array_view() noexcept = default;

  /// The type of every item.
  constexpr value_type item_type() const noexcept { return item_type_; }
  /// The number of items, as stored.
  constexpr std::uint64_t size() const noexcept { return count_; }
  /// True when there are no items.
  constexpr bool empty() const noexcept { return count_ == 0; }
  /** The bytes of all items, as stored. */
  constexpr std::span<const std::byte> bytes() const noexcept { return {data_, static_cast<std::size_t>(size_)}; }
  /** For an array of strings, the sum of their lengths (the stored bytes less the length fields); else
   * `bytes().size()`. */
  constexpr std::uint64_t text_bytes() const noexcept {
    return item_type_ == value_type::string ? size_ - count_ * wire_.count_size() : size_;
  }

  /**
   * A range over the items as `T`: the item type's C++ type (`std::string_view` for strings,
   * `array_view` for nested arrays), or `value_view` for any item type.
   */
  template <class T>
  class typed_range {
   public:
    /** A forward iterator that decodes the item it points at on each dereference, yielding `T` by value. */
    class iterator {
     public:
      using iterator_category = std::forward_iterator_tag;  ///< a forward iterator
      using value_type = T;                                 ///< the item type
      using difference_type = std::ptrdiff_t;               ///< a signed distance
      using pointer = void;                                 ///< none: items are decoded, not stored
      using reference = T;                                  ///< by value

      /** A singular iterator. */
      iterator() noexcept = default;
      /// The current item, decoded.
      T operator*() const noexcept {
        if constexpr (std::is_same_v<T, std::string_view>) {
          return {reinterpret_cast<const char*>(p_ + wire_.count_size()), static_cast<std::size_t>(wire_.count_at(p_))};
        } else if constexpr (std::is_same_v<T, value_view> || std::is_same_v<T, array_view>) {
          const std::byte* next;
          return T(detail::decode_value(item_, p_, wire_, &next));
        } else {
          return detail::decode_scalar<T>(p_, wire_.swap);
        }
      }
      /// To the next item (strings and nested arrays are walked over).
      iterator& operator++() noexcept {
        if constexpr (std::is_same_v<T, std::string_view>) {
          p_ += wire_.count_size() + wire_.count_at(p_);
        } else if constexpr (std::is_same_v<T, value_view> || std::is_same_v<T, array_view>) {
          (void)detail::decode_value(item_, p_, wire_, &p_);
        } else {
          p_ += sizeof(T);
        }
        --left_;
        return *this;
      }
      /// Post-increment.
      iterator operator++(int) noexcept {
        iterator t = *this;
        ++*this;
        return t;
      }
      /// Iterators into one range are equal when they have as many items left.
      friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.left_ == b.left_; }

     private:
      friend class typed_range;
      iterator(::gguf::value_type item, detail::wire w, const std::byte* p, std::uint64_t left) noexcept
          : item_(item), wire_(w), p_(p), left_(left) {}
      ::gguf::value_type item_ = ::gguf::value_type::uint8;
      detail::wire wire_{};
      const std::byte* p_ = nullptr;
      std::uint64_t left_ = 0;
    };

    /** An empty range. */
    typed_range() noexcept = default;
    /// The items of `a`, unchecked: `array_view::as<T>()` checks that `T` fits the item type.
    explicit typed_range(const array_view& a) noexcept
        : item_(a.item_type_), wire_(a.wire_), data_(a.data_), size_(a.size_), count_(a.count_) {}
    /// The first item.
    iterator begin() const noexcept { return {item_, wire_, data_, count_}; }
    /// Past the last item.
    iterator end() const noexcept { return {item_, wire_, data_ + size_, 0}; }
    /// The number of items.
    std::uint64_t size() const noexcept { return count_; }
    /// True when there are no items.
    bool empty() const noexcept { return count_ == 0; }

   private:
    ::gguf::value_type item_ = ::gguf::value_type::uint8;
    detail::wire wire_{};
    const std::byte* data_ = nullptr;
    std::uint64_t size_ = 0;
    std::uint64_t count_ = 0;
  };

  /** Iterating an array yields its items as `value_view`s. */
  using iterator = typed_range<value_view>::iterator;
  /// The first item, as a `value_view`.
  iterator begin() const noexcept { return typed_range<value_view>(*this).begin(); }
  /// Past the last item.
  iterator end() const noexcept { return typed_range<value_view>(*this).end(); }

  /**
   * The items as a range of `T`, decoded one at a time while iterating; nothing is allocated.
   * @tparam T the item type's C++ type (`value_type_of<T>::value == item_type()`)
   * @return the range, or `type_mismatch` for another `T`
   */
  template <class T>
  result<typed_range<T>> as() const noexcept {
    if (value_type_of<T>::value != item_type_) return item_mismatch(value_type_of<T>::value);
    return typed_range<T>(*this);
  }

  /**
   * Item `i` as `T` (O(1) for fixed-size items, O(i) for strings and nested arrays).
   * @tparam T the item type's C++ type
   * @param i  the index, from 0
   * @return the item; `type_mismatch` for another `T`, `out_of_range` for `i >= size()`
   */
  template <class T>
  result<T> get(std::uint64_t i) const noexcept {
    if (value_type_of<T>::value != item_type_) return item_mismatch(value_type_of<T>::value);
    if (i >= count_) return {errc::out_of_range, "array index past the last item"};
    if constexpr (gguf_scalar<T>) {
      return detail::decode_scalar<T>(data_ + i * sizeof(T), wire_.swap);
    } else {
      auto it = typed_range<T>(*this).begin();
      for (std::uint64_t k = 0; k < i; ++k) ++it;
      return *it;
    }
  }

  /**
   * The items as a `std::span<const T>` straight into the file, when the layout allows it: `T` is the
   * item type, the file's byte order is the host's (or items are single bytes) and the items are
   * aligned for `T`. Otherwise `type_mismatch`; `as<T>()` works in every case.
   * @tparam T a `gguf_scalar` (a fixed-size numeric type or bool)
   * @return a span of `size()` items into the file, or `type_mismatch`
   */
  template <class T>
  result<std::span<const T>> as_span() const noexcept {
    static_assert(gguf_scalar<T>, "spans are for fixed-size numeric items");
    if (value_type_of<T>::value != item_type_) return item_mismatch(value_type_of<T>::value);
    if (sizeof(T) > 1 && wire_.swap) return {errc::type_mismatch, "array is in the other byte order (use as<T>())"};
    if (reinterpret_cast<std::uintptr_t>(data_) % alignof(T) != 0) {
      return {errc::type_mismatch, "array items are not aligned for a span (use as<T>())"};
    }
    // The bytes are a valid object representation of T[count] (bools were checked to be 0/1).
    return std::span<const T>(reinterpret_cast<const T*>(data_), static_cast<std::size_t>(count_));
  }

 private:
  friend class value_view;
  error item_mismatch(value_type asked_for) const noexcept {
    return error{errc::type_mismatch, "array items have another type"}.types(to_string(asked_for).data(),
                                                                             to_string(item_type_).data());
  }
  // From an array value: `value_view::get<array_view>()` for users, and array iteration.
  constexpr explicit array_view(const value_view& v) noexcept
      : item_type_(v.item_type_), wire_(v.wire_), data_(v.data_), size_(v.size_), count_(v.count_) {}

  value_type item_type_ = value_type::uint8;
  detail::wire wire_{};
  const std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t count_ = 0;
};

template <class T>
result<T> value_view::get() const noexcept {
  constexpr value_type want = value_type_of<T>::value;
  if (type_ != want) {
    return error{errc::type_mismatch, "metadata value has another type"}.types(to_string(want).data(),
                                                                               to_string(type_).data());
  }
  if constexpr (std::is_same_v<T, std::string_view>) {
    return std::string_view(reinterpret_cast<const char*>(data_), static_cast<std::size_t>(size_));
  } else if constexpr (std::is_same_v<T, array_view>) {
    return array_view(*this);
  } else {
    return detail::decode_scalar<T>(data_, wire_.swap);
  }
}

template <class T>
result<T> value_view::as_integer() const noexcept {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  const auto too_big = [this] {
    return error{errc::out_of_range, "integer does not fit the requested type"}.types(detail::integer_name<T>(),
                                                                                      to_string(type_).data());
  };
  auto fits = [&](auto v) -> result<T> {
    using V = decltype(v);
    if constexpr (std::is_signed_v<V> == std::is_signed_v<T>) {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return too_big();
    } else if constexpr (std::is_signed_v<V>) {  // signed -> unsigned
      if (v < 0 || static_cast<std::make_unsigned_t<V>>(v) > std::numeric_limits<T>::max()) return too_big();
    } else {  // unsigned -> signed
      if (v > static_cast<std::make_unsigned_t<T>>(std::numeric_limits<T>::max())) return too_big();
    }
    return static_cast<T>(v);
  };
  switch (type_) {
    case value_type::uint8: return fits(detail::load<std::uint8_t>(data_, wire_.swap));
    case value_type::int8: return fits(detail::load<std::int8_t>(data_, wire_.swap));
    case value_type::uint16: return fits(detail::load<std::uint16_t>(data_, wire_.swap));
    case value_type::int16: return fits(detail::load<std::int16_t>(data_, wire_.swap));
    case value_type::uint32: return fits(detail::load<std::uint32_t>(data_, wire_.swap));
    case value_type::int32: return fits(detail::load<std::int32_t>(data_, wire_.swap));
    case value_type::uint64: return fits(detail::load<std::uint64_t>(data_, wire_.swap));
    case value_type::int64: return fits(detail::load<std::int64_t>(data_, wire_.swap));
    default:
      return error{errc::type_mismatch, "metadata value is not an integer"}.types(detail::integer_name<T>(),
                                                                                  to_string(type_).data());
  }
}

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_VALUE_HPP
