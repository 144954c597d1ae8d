#ifndef GGUF_RESULT_HPP
#define GGUF_RESULT_HPP

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "gguf/version.hpp"

#if GGUF_EXCEPTIONS
#include <stdexcept>
#endif

GGUF_BEGIN_NAMESPACE

/** Why an operation failed. Errors are values: nothing in the library throws unless asked to. */
enum class errc : std::uint8_t {
  success = 0,
  io_error,             ///< the file could not be opened, measured or mapped
  truncated,            ///< the bytes end before a field, or a declared count/length cannot fit in them
  bad_magic,            ///< the first four bytes are not "GGUF"
  bad_version,          ///< version 0, or above 3 in either byte order
  bad_value_type,       ///< a metadata value type (or array item type) outside 0..12
  bad_bool,             ///< a bool byte other than 0 or 1
  empty_key,            ///< a metadata key of length 0
  duplicate_key,        ///< the same metadata key twice
  bad_alignment,        ///< general.alignment not a uint32, or not a non-zero power of two
  too_deep,             ///< arrays nested deeper than parse_options::max_depth
  limit_exceeded,       ///< a parse_options limit: string or array length, metadata bytes
  bad_tensor_name,      ///< a tensor name of 64 bytes or more (ggml's GGML_MAX_NAME, NUL included)
  duplicate_tensor,     ///< the same tensor name twice
  bad_dimensions,       ///< n_dims above 4, or a negative dimension
  overflow,             ///< the element count or byte size of a tensor does not fit in 64 bits
  bad_tensor_type,      ///< an unknown or removed ggml type id
  bad_row_size,         ///< ne[0] is not a multiple of the type's block size
  misaligned_offset,    ///< a tensor offset that is not a multiple of the alignment
  out_of_bounds,        ///< tensor data that lies (partly) outside the file
  overlapping_tensors,  ///< two tensors whose data share bytes
  not_found,            ///< no metadata key or tensor of that name
  type_mismatch,        ///< a value asked for as a type it does not have
  out_of_range,         ///< a value, index or count outside what the call accepts
  size_mismatch,        ///< a buffer whose size does not match the data (or is not a whole number of blocks)
};

/** A short, stable English description of an error code. */
constexpr const char* message(errc code) noexcept {
  switch (code) {
    case errc::success: return "success";
    case errc::io_error: return "I/O error";
    case errc::truncated: return "truncated file";
    case errc::bad_magic: return "not a GGUF file (bad magic)";
    case errc::bad_version: return "unsupported GGUF version";
    case errc::bad_value_type: return "unknown metadata value type";
    case errc::bad_bool: return "bool value is neither 0 nor 1";
    case errc::empty_key: return "empty metadata key";
    case errc::duplicate_key: return "duplicate metadata key";
    case errc::bad_alignment: return "invalid general.alignment";
    case errc::too_deep: return "arrays nested too deeply";
    case errc::limit_exceeded: return "resource limit exceeded";
    case errc::bad_tensor_name: return "invalid tensor name";
    case errc::duplicate_tensor: return "duplicate tensor name";
    case errc::bad_dimensions: return "invalid tensor dimensions";
    case errc::overflow: return "tensor size overflows";
    case errc::bad_tensor_type: return "unknown or removed tensor type";
    case errc::bad_row_size: return "row length is not a multiple of the block size";
    case errc::misaligned_offset: return "misaligned tensor offset";
    case errc::out_of_bounds: return "tensor data outside the file";
    case errc::overlapping_tensors: return "overlapping tensor data";
    case errc::not_found: return "not found";
    case errc::type_mismatch: return "type mismatch";
    case errc::out_of_range: return "out of range";
    case errc::size_mismatch: return "size mismatch";
  }
  return "unknown error";
}

/**
 * An error as a value: what went wrong, where in the input, and a specific static description.
 * `offset` is the byte offset in the parsed buffer of the field that failed the check (0 for errors that
 * are not about bytes). `detail` always points to a string literal, so an error never allocates or dangles.
 */
struct error {
  errc code = errc::success;
  std::uint64_t offset = 0;
  const char* detail = nullptr;

  constexpr error() noexcept = default;
  constexpr error(errc c, std::uint64_t off = 0, const char* what = nullptr) noexcept
      : code(c), offset(off), detail(what) {}

  constexpr explicit operator bool() const noexcept { return code != errc::success; }
  constexpr const char* what() const noexcept { return detail ? detail : message(code); }
  friend constexpr bool operator==(const error& e, errc c) noexcept { return e.code == c; }
};

/** "general.alignment must be a non-zero power of two (at byte 123)": for logs and CLI tools. */
inline std::string to_string(const error& e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (at byte %llu)", static_cast<unsigned long long>(e.offset));
  std::string s = e.what();
  if (e.code != errc::success) s += buf;
  return s;
}

#if GGUF_EXCEPTIONS
/** Thrown by `result<T>::value()` on an error when exceptions are enabled. */
class gguf_error : public std::runtime_error {
 public:
  explicit gguf_error(const error& e) : std::runtime_error(to_string(e)), error_(e) {}
  const ::gguf::error& code() const noexcept { return error_; }

 private:
  ::gguf::error error_;
};
#endif

namespace detail {
[[noreturn]] inline void fail(const ::gguf::error& e) {
#if GGUF_EXCEPTIONS
  throw gguf_error(e);
#else
  std::fprintf(stderr, "gguf: unchecked error: %s\n", e.what());
  std::abort();
#endif
}
}  // namespace detail

/**
 * `T` or an `error`, shaped like C++23 `std::expected<T, error>` (which GCC 12 lacks in C++20 mode):
 * `has_value()`, `operator*`, `->`, `value()` (throws or aborts on error), `error()`, and simdjson's
 * `get(out)` that returns the error code and never throws.
 */
template <class T>
class [[nodiscard]] result {  // NOLINT(*-special-member-functions): operator=(result) is both assignments
  static_assert(!std::is_reference_v<T>, "use a pointer or std::reference_wrapper");

 public:
  using value_type = T;

  result(const T& v) noexcept(std::is_nothrow_copy_constructible_v<T>) : ok_(true) {  // NOLINT
    ::new (&storage_.value) T(v);
  }
  result(T&& v) noexcept(std::is_nothrow_move_constructible_v<T>) : ok_(true) {  // NOLINT
    ::new (&storage_.value) T(std::move(v));
  }
  result(::gguf::error e) noexcept : ok_(false) { storage_.err = e; }            // NOLINT
  result(errc c, std::uint64_t offset = 0, const char* what = nullptr) noexcept  // NOLINT
      : result(::gguf::error{c, offset, what}) {}

  result(const result& o) : ok_(o.ok_) {
    if (ok_)
      ::new (&storage_.value) T(o.storage_.value);
    else
      storage_.err = o.storage_.err;
  }
  result(result&& o) noexcept(std::is_nothrow_move_constructible_v<T>) : ok_(o.ok_) {
    if (ok_)
      ::new (&storage_.value) T(std::move(o.storage_.value));
    else
      storage_.err = o.storage_.err;
  }
  result& operator=(result o) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &o) {
      this->~result();
      ::new (this) result(std::move(o));
    }
    return *this;
  }
  ~result() {
    if (ok_) storage_.value.~T();
  }

  bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }

  /** The error; `errc::success` when there is a value. */
  ::gguf::error error() const noexcept { return ok_ ? ::gguf::error{} : storage_.err; }

  T& value() & {
    if (!ok_) detail::fail(storage_.err);
    return storage_.value;
  }
  const T& value() const& {
    if (!ok_) detail::fail(storage_.err);
    return storage_.value;
  }
  // Rvalue access returns by value, not T&&: `for (auto x : *get_range())` then keeps the range
  // alive (a T&& into the dying temporary would dangle before C++23).
  T value() && {
    if (!ok_) detail::fail(storage_.err);
    return std::move(storage_.value);
  }
  template <class U>
  T value_or(U&& fallback) const& {
    return ok_ ? storage_.value : static_cast<T>(std::forward<U>(fallback));
  }

  T& operator*() & noexcept { return storage_.value; }
  const T& operator*() const& noexcept { return storage_.value; }
  T operator*() && noexcept(std::is_nothrow_move_constructible_v<T>) { return std::move(storage_.value); }
  T* operator->() noexcept { return &storage_.value; }
  const T* operator->() const noexcept { return &storage_.value; }

  /** simdjson style: move the value into `out` on success; return the error code either way. */
  errc get(T& out) && noexcept(std::is_nothrow_move_assignable_v<T>) {
    if (!ok_) return storage_.err.code;
    out = std::move(storage_.value);
    return errc::success;
  }

 private:
  union storage {          // NOLINT(*-special-member-functions): `result` constructs and destroys the member
    storage() noexcept {}  // NOLINT(*-use-equals-default): = default would be deleted (non-trivial T)
    ~storage() {}          // NOLINT(*-use-equals-default)
    T value;
    ::gguf::error err;
  } storage_;
  bool ok_;
};

/** `result<void>`: success or an error. */
template <>
class [[nodiscard]] result<void> {
 public:
  using value_type = void;
  result() noexcept = default;
  result(::gguf::error e) noexcept : err_(e) {}                                  // NOLINT
  result(errc c, std::uint64_t offset = 0, const char* what = nullptr) noexcept  // NOLINT
      : err_{c, offset, what} {}
  bool has_value() const noexcept { return err_.code == errc::success; }
  explicit operator bool() const noexcept { return has_value(); }
  ::gguf::error error() const noexcept { return err_; }
  void value() const {
    if (!has_value()) detail::fail(err_);
  }

 private:
  ::gguf::error err_{};
};

GGUF_END_NAMESPACE

/// Propagate an error from an expression returning `result<...>`, like SIMDJSON_TRY.
#define GGUF_TRY(expr)                                      \
  do {                                                      \
    auto&& gguf_try_result_ = (expr);                       \
    if (!gguf_try_result_) return gguf_try_result_.error(); \
  } while (0)

#endif  // GGUF_RESULT_HPP
