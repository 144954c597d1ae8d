#ifndef GGUF_FORMAT_BYTE_READER_HPP
#define GGUF_FORMAT_BYTE_READER_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "gguf/detail/endian.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * A forward cursor over untrusted bytes, templated on the byte order of the data it reads.
 *
 * Every read is bounds-checked against what remains (`n > remaining()`, never `pos + n > size`, which
 * can wrap), and a failed read leaves the cursor where it was, so the caller can report the offset of
 * the field that did not fit. Reads return `false` instead of an error value: the parser knows which
 * field it was reading and builds the error itself.
 */
template <std::endian Order>
class byte_reader {
 public:
  static constexpr std::endian byte_order = Order;  ///< the byte order multi-byte reads decode

  /** A reader over no bytes. */
  constexpr byte_reader() noexcept = default;
  /**
   * A reader over `bytes`, at `pos`.
   * @param bytes the buffer; it must outlive the reader and every view read from it
   * @param pos   the starting position, clamped to `bytes.size()`
   */
  constexpr explicit byte_reader(std::span<const std::byte> bytes, std::size_t pos = 0) noexcept
      : data_(bytes.data()), size_(bytes.size()), pos_(pos <= bytes.size() ? pos : bytes.size()) {}

  /// Offset of the next byte to read, from the start of the buffer.
  constexpr std::size_t position() const noexcept { return pos_; }
  /// Size of the whole buffer.
  constexpr std::size_t size() const noexcept { return size_; }
  /// Bytes left to read.
  constexpr std::size_t remaining() const noexcept { return size_ - pos_; }
  /// True at the end of the buffer.
  constexpr bool empty() const noexcept { return pos_ == size_; }
  /// True when `n` more bytes can be read; `n` may be any 64-bit count a file declares.
  constexpr bool has(std::uint64_t n) const noexcept { return n <= remaining(); }
  /// The next byte to read (the end of the buffer when `empty()`).
  constexpr const std::byte* cursor() const noexcept { return data_ + pos_; }

  /**
   * Read one arithmetic or enum value of type T, in the reader's byte order, at any alignment.
   * @param out receives the value; left alone on failure
   * @return false, without moving, when fewer than `sizeof(T)` bytes remain
   */
  template <class T>
  bool read(T& out) noexcept {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>);
    if (sizeof(T) > remaining()) return false;
    out = detail::load<T, Order>(data_ + pos_);
    pos_ += sizeof(T);
    return true;
  }

  /**
   * Read `n` raw bytes as a view into the buffer (no copy).
   * @param n   the byte count, as declared by the file
   * @param out receives the view; left alone on failure
   * @return false, without moving, when fewer than `n` bytes remain
   */
  bool read_bytes(std::uint64_t n, std::span<const std::byte>& out) noexcept {
    if (!has(n)) return false;
    out = {data_ + pos_, static_cast<std::size_t>(n)};
    pos_ += static_cast<std::size_t>(n);
    return true;
  }

  /**
   * Move `n` bytes forward.
   * @param n the byte count, as declared by the file
   * @return false, without moving, when fewer than `n` bytes remain
   */
  bool skip(std::uint64_t n) noexcept {
    if (!has(n)) return false;
    pos_ += static_cast<std::size_t>(n);
    return true;
  }

  /**
   * Move to an absolute position within the buffer (end included).
   * @param pos the offset from the start of the buffer
   * @return false, without moving, when `pos > size()`
   */
  bool seek(std::uint64_t pos) noexcept {
    if (pos > size_) return false;
    pos_ = static_cast<std::size_t>(pos);
    return true;
  }

 private:
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t pos_ = 0;
};

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_BYTE_READER_HPP
