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

/**
 * @file
 * Errors as values: `errc`, `error`, `result<T>` and the GGUF_TRY macro.
 */

GGUF_BEGIN_NAMESPACE

/** Why an operation failed. Errors are values: nothing in the library throws unless asked to. */
enum class errc : std::uint8_t {
  success = 0,          ///< no error: what `error{}` holds
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
  unspecified,          ///< a `result<T>` with a `T` was built from `error{}`, which names no failure
};

/**
 * A short, stable English description of an error code.
 * @param code any code, `success` included
 * @return a string literal; "unknown error" for a value outside the enumeration
 */
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
    case errc::unspecified: return "error without a cause (a result built from error{})";
  }
  return "unknown error";
}

/**
 * An error as a value: what went wrong, where in the input, and a specific static description.
 * `offset` is the byte offset in the parsed buffer of the field that failed the check (0 for errors that
 * are not about bytes). `detail` always points to a string literal, so an error never allocates or dangles.
 */
struct error {
  errc code = errc::success;     ///< what failed; `success` for no error
  std::uint64_t offset = 0;      ///< byte offset of the failing field in the parsed buffer, or 0
  const char* detail = nullptr;  ///< a string literal naming the broken rule, or nullptr

  /** No error (`errc::success`). */
  constexpr error() noexcept = default;
  /**
   * The error `c` at byte `off`.
   * @param c    what failed
   * @param off  byte offset of the failing field, 0 for errors that are not about bytes
   * @param what a string literal (it is kept, not copied), or nullptr for `message(c)`
   */
  constexpr error(errc c, std::uint64_t off = 0, const char* what = nullptr) noexcept
      : code(c), offset(off), detail(what) {}

  /// True when this is an error (`code != errc::success`).
  constexpr explicit operator bool() const noexcept { return code != errc::success; }
  /// `detail` when there is one, else `message(code)`.
  constexpr const char* what() const noexcept { return detail ? detail : message(code); }
  /// `e == errc::not_found`: compares the code only.
  friend constexpr bool operator==(const error& e, errc c) noexcept { return e.code == c; }
};

/**
 * The error as one line for logs and CLI tools: `what()`, then the offset for an actual error, as in
 * "general.alignment must be a non-zero power of two (at byte 123)".
 */
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
  /// Keeps `e`; `what()` is `to_string(e)`.
  explicit gguf_error(const error& e) : std::runtime_error(to_string(e)), error_(e) {}
  /// The error that was thrown (code, offset and detail).
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
 * True for types whose accessors return views into the object itself (`file`, `mapped_gguf`,
 * `mapped_file`): `result<T>::operator->` is deleted on a temporary result of such a type, because the
 * view would dangle at the end of the statement. Each such type specializes it beside its definition.
 */
template <class T>
inline constexpr bool hands_out_views = false;

/**
 * `T` or an `error`, shaped like C++23 `std::expected<T, error>` (which GCC 12 lacks in C++20 mode):
 * `has_value()`, `operator*`, `->`, `value()` (throws or aborts on error), `error()`, and simdjson's
 * `get(out)` that returns the error code and never throws.
 */
template <class T>
class [[nodiscard]] result {  // NOLINT(*-special-member-functions): operator=(result) is both assignments
  static_assert(!std::is_reference_v<T>, "use a pointer or std::reference_wrapper");

 public:
  using value_type = T;  ///< the type of the value

  /// A value (copied); implicit, so a function returning `result<T>` can `return v;`.
  result(const T& v) noexcept(std::is_nothrow_copy_constructible_v<T>) : ok_(true) {  // NOLINT
    ::new (&storage_.value) T(v);
  }
  /// A value (moved).
  result(T&& v) noexcept(std::is_nothrow_move_constructible_v<T>) : ok_(true) {  // NOLINT
    ::new (&storage_.value) T(std::move(v));
  }
  /// An error. `error{}` (errc::success) names no failure: it becomes errc::unspecified, so a result
  /// without a value never reports success.
  result(::gguf::error e) noexcept : ok_(false) {  // NOLINT(google-explicit-constructor)
    storage_.err = e ? e : ::gguf::error{errc::unspecified, e.offset, nullptr};
  }
  /// An error built in place: `return {errc::not_found, 0, "no such key"};`.
  result(errc c, std::uint64_t offset = 0, const char* what = nullptr) noexcept  // NOLINT
      : result(::gguf::error{c, offset, what}) {}

  /// Copies the value or the error.
  result(const result& o) : ok_(o.ok_) {
    if (ok_)
      ::new (&storage_.value) T(o.storage_.value);
    else
      storage_.err = o.storage_.err;
  }
  /// Moves the value (the source keeps a moved-from value) or copies the error.
  result(result&& o) noexcept(std::is_nothrow_move_constructible_v<T>) : ok_(o.ok_) {
    if (ok_)
      ::new (&storage_.value) T(std::move(o.storage_.value));
    else
      storage_.err = o.storage_.err;
  }
  /// Copy and move assignment in one: `o` is taken by value.
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

  /// True when there is a value.
  bool has_value() const noexcept { return ok_; }
  /// `has_value()`.
  explicit operator bool() const noexcept { return ok_; }

  /** The error; `errc::success` when there is a value. */
  ::gguf::error error() const noexcept { return ok_ ? ::gguf::error{} : storage_.err; }

  /**
   * The value. On an error, throws `gguf_error` (GGUF_EXCEPTIONS) or prints the error and aborts.
   * @return a reference to the value
   */
  T& value() & {
    if (!ok_) detail::fail(storage_.err);
    return storage_.value;
  }
  /// The value; throws or aborts on an error, as `value() &`.
  const T& value() const& {
    if (!ok_) detail::fail(storage_.err);
    return storage_.value;
  }
  /**
   * The value, moved out; throws or aborts on an error, as `value() &`. Rvalue access returns by value,
   * not `T&&`: `for (auto x : *get_range())` then keeps the range alive (a `T&&` into the dying temporary
   * would dangle before C++23).
   */
  T value() && {
    if (!ok_) detail::fail(storage_.err);
    return std::move(storage_.value);
  }
  /**
   * The value, or `fallback` on an error.
   * @param fallback anything convertible to `T`
   * @return a copy of the value, or `fallback` as a `T`
   */
  template <class U>
  T value_or(U&& fallback) const& {
    return ok_ ? storage_.value : static_cast<T>(std::forward<U>(fallback));
  }

  /// The value, unchecked: the caller has tested `has_value()`.
  T& operator*() & noexcept { return storage_.value; }
  /// The value, unchecked.
  const T& operator*() const& noexcept { return storage_.value; }
  /// The value moved out, unchecked (by value, as `value() &&`).
  T operator*() && noexcept(std::is_nothrow_move_constructible_v<T>) { return std::move(storage_.value); }
  /// Member access to the value, unchecked.
  T* operator->() & noexcept { return &storage_.value; }
  /// Member access to the value, unchecked.
  const T* operator->() const& noexcept { return &storage_.value; }
  /// Member access on a temporary result, for types that do not hand out views into themselves.
  T* operator->() && noexcept requires(!hands_out_views<T>) { return &storage_.value; }
  /// Deleted for `hands_out_views<T>`: a view would outlive the temporary. Keep the result in a variable,
  /// or take the value out with `*` (which moves it).
  T* operator->() && requires(hands_out_views<T>) = delete;
  const T* operator->() const&& requires(hands_out_views<T>) = delete;  ///< deleted, as the overload above

  /**
   * simdjson style: move the value into `out` on success. Never throws.
   * @param out receives the value; left alone on an error
   * @return `errc::success`, or the error's code
   */
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
  using value_type = void;  ///< no value
  /// Success.
  result() noexcept = default;
  /// `e`; unlike `result<T>`, `error{}` is a success here.
  result(::gguf::error e) noexcept : err_(e) {}  // NOLINT
  /// An error built in place, or success for `errc::success`.
  result(errc c, std::uint64_t offset = 0, const char* what = nullptr) noexcept  // NOLINT
      : err_{c, offset, what} {}
  /// True on success.
  bool has_value() const noexcept { return err_.code == errc::success; }
  /// `has_value()`.
  explicit operator bool() const noexcept { return has_value(); }
  /// The error; `errc::success` on success.
  ::gguf::error error() const noexcept { return err_; }
  /// Nothing on success; throws `gguf_error` (GGUF_EXCEPTIONS) or prints the error and aborts otherwise.
  void value() const {
    if (!has_value()) detail::fail(err_);
  }

 private:
  ::gguf::error err_{};
};

GGUF_END_NAMESPACE

/**
 * Propagate an error, like SIMDJSON_TRY: evaluate `expr` and, when it holds an error, return that error
 * from the enclosing function (which returns a `result` or an `error`). A value is discarded.
 * @param expr an expression of type `result<U>`, for any `U`
 */
#define GGUF_TRY(expr)                                      \
  do {                                                      \
    auto&& gguf_try_result_ = (expr);                       \
    if (!gguf_try_result_) return gguf_try_result_.error(); \
  } while (0)

#endif  // GGUF_RESULT_HPP
