#ifndef GGUF_RESULT_HPP
#define GGUF_RESULT_HPP

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
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
  need_more,            ///< `parse_prefix`: the header goes on past the bytes given; `error::needed` says how far
  bad_shards,           ///< shards of a split model that do not make one model (missing, misnumbered, miscounted)
  bad_hparams,          ///< model hyperparameters that cannot be right (a per-layer array of the wrong length, 0 heads)
  pending_restore,      ///< an interrupted write left a backup or a journal: restore it before writing the file again
  bad_vocabulary,       ///< tokenizer metadata no tokenizer can use (short arrays, ids out of range)
  cancelled,            ///< the caller stopped the work (`write_options::stop`)
  bad_json,             ///< text that is not JSON where JSON is read (`parse_json`)
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
    case errc::need_more: return "the header goes on past the bytes given";
    case errc::bad_shards: return "the shards do not make one model";
    case errc::bad_hparams: return "the model's hyperparameters do not fit together";
    case errc::pending_restore: return "an interrupted write must be restored first";
    case errc::bad_vocabulary: return "unusable tokenizer vocabulary";
    case errc::cancelled: return "stopped by the caller";
    case errc::bad_json: return "not JSON";
  }
  return "unknown error";
}

/**
 * An error as a value: what went wrong, and the context a person needs to act on it. Never allocates:
 *
 * - `code`, and `detail`, a string literal naming the broken rule;
 * - `offset`: the byte offset of the failing field in the parsed buffer, for errors about bytes
 *   (`has_offset()`); lookups and size checks have none;
 * - `subject()`: what the error is about (a metadata key, a tensor name), copied into the error (63
 *   bytes at most, cut with "..."), so it cannot dangle when the caller's string goes away;
 * - `expected`, `actual`: for a `type_mismatch`, the type asked for and the type stored ("int32",
 *   "uint32"), string literals;
 * - `os_code`: for an `io_error`, the OS's error number (`errno`, or `GetLastError()` on Windows);
 * - `needed`: for `need_more`, `truncated` and `out_of_bounds`, the size the input must have for the
 *   failing field to fit (for `need_more`, the exact prefix length with which the parse gets further).
 *
 * `to_string` joins them into one line: "no such metadata key: 'llama.rope.scale'", "metadata value has
 * another type: 'llama.context_length' is uint32, not int32", "cannot open file: No such file or
 * directory", "tensor name appears twice: 'output.weight' (at byte 4321)".
 */
struct error {
  /// `offset` of an error that is not about a byte of the input.
  static constexpr std::uint64_t no_offset = ~std::uint64_t{0};
  /// Longest subject kept, in bytes (a longer one is cut and ends with "...").
  static constexpr std::size_t max_subject = 63;

  // The members are ordered so that the struct has no padding: every byte is initialized, so copies
  // of it never read indeterminate bytes (GCC warns about those).
  std::uint64_t offset = no_offset;  ///< byte offset of the failing field, or `no_offset`
  /// need_more, truncated, out_of_bounds: the input size with which the failing field fits; 0 when unknown
  std::uint64_t needed = 0;
  const char* detail = nullptr;    ///< a string literal naming the broken rule, or nullptr
  const char* expected = nullptr;  ///< type_mismatch: the type asked for (a literal), or nullptr
  const char* actual = nullptr;    ///< type_mismatch: the type stored (a literal), or nullptr
  std::int32_t os_code = 0;        ///< io_error: errno, or GetLastError() on Windows; 0 when none
  errc code = errc::success;       ///< what failed; `success` for no error

  /** No error (`errc::success`). */
  constexpr error() noexcept = default;
  /**
   * An error that is not about a byte of the input.
   * @param c    what failed
   * @param what a string literal (it is kept, not copied), or nullptr for `message(c)`
   */
  constexpr error(errc c, const char* what = nullptr) noexcept : detail(what), code(c) {}
  /**
   * An error about the field at byte `at` of the parsed buffer.
   * @param c    what failed
   * @param at   byte offset of the failing field
   * @param what a string literal (it is kept, not copied), or nullptr for `message(c)`
   */
  constexpr error(errc c, std::uint64_t at, const char* what) noexcept : offset(at), detail(what), code(c) {}

  /**
   * Sets the subject: the parts joined, copied, cut at `max_subject` bytes (on a UTF-8 boundary, ending
   * "...").
   * @return `*this`, to chain
   */
  GGUF_COLD constexpr error& about(std::string_view part, std::string_view part2 = {},
                                   std::string_view part3 = {}) noexcept {
    std::size_t n = 0;
    bool cut = false;
    for (std::string_view p : {part, part2, part3}) {
      for (char c : p) {
        if (n == max_subject) {
          cut = true;
          break;
        }
        subject_[n++] = c;
      }
    }
    if (cut) {
      n = max_subject - 3;
      while (n > 0 && (static_cast<unsigned char>(subject_[n]) & 0xC0) == 0x80) --n;  // not inside a character
      for (int k = 0; k < 3; ++k) subject_[n++] = '.';
    }
    subject_[n] = '\0';
    subject_size_ = static_cast<std::uint8_t>(n);
    return *this;
  }
  /**
   * Sets the types of a `type_mismatch`.
   * @param asked_for the type the caller asked for (a string literal)
   * @param stored    the type the value has (a string literal)
   * @return `*this`, to chain
   */
  constexpr error& types(const char* asked_for, const char* stored) noexcept {
    expected = asked_for;
    actual = stored;
    return *this;
  }
  /**
   * Sets `needed`: the input size with which the failing field would fit.
   * @return `*this`, to chain
   */
  constexpr error& needs(std::uint64_t size) noexcept {
    needed = size;
    return *this;
  }
  /**
   * Sets the subject to a file name or path, cut at the front when it is longer than `max_subject`
   * ("...-00003-of-00005.gguf"): the end of a file name tells one shard from another.
   * @return `*this`, to chain
   */
  GGUF_COLD constexpr error& about_file(std::string_view name) noexcept {
    if (name.size() <= max_subject) return about(name);
    std::size_t from = name.size() - (max_subject - 3);
    while (from < name.size() && (static_cast<unsigned char>(name[from]) & 0xC0) == 0x80) ++from;  // whole characters
    return about("...", name.substr(from));
  }
  /**
   * Sets the OS error number of an `io_error`.
   * @return `*this`, to chain
   */
  constexpr error& os(std::int32_t number) noexcept {
    os_code = number;
    return *this;
  }

  /// True when this is an error (`code != errc::success`).
  constexpr explicit operator bool() const noexcept { return code != errc::success; }
  /// `detail` when there is one, else `message(code)`.
  constexpr const char* what() const noexcept { return detail ? detail : message(code); }
  /// True when `offset` is a byte offset in the input.
  constexpr bool has_offset() const noexcept { return offset != no_offset; }
  /// What the error is about (a key, a tensor name), or empty.
  constexpr std::string_view subject() const noexcept { return {subject_, subject_size_}; }
  /// `e == errc::not_found`: compares the code only.
  friend constexpr bool operator==(const error& e, errc c) noexcept { return e.code == c; }

 private:
  std::uint8_t subject_size_ = 0;
  char subject_[max_subject + 1] = {};
  [[maybe_unused]] std::uint8_t reserved_[2] = {};  // no tail padding either
};
static_assert(sizeof(void*) != 8 || std::has_unique_object_representations_v<error>,
              "error has no padding on 64-bit hosts (see the order of its members)");

/**
 * The error as one line for logs and CLI tools: `what()`, then the subject (quoted, control bytes
 * escaped), the types of a mismatch, the OS's reason, and the byte offset when there is one.
 * @return e.g. "no such metadata key: 'general.nmae'", or "success" for no error
 */
GGUF_COLD inline std::string to_string(const error& e) {
  std::string s = e.what();
  if (!e) return s;
  const std::string_view subject = e.subject();
  if (!subject.empty()) {
    s += ": '";
    for (char c : subject) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7F || c == '\'' || c == '\\') {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\x%02x", u);
        s += esc;
      } else {
        s += c;
      }
    }
    s += '\'';
  }
  if (e.expected && e.actual) {
    if (e.code == errc::out_of_range) {  // a value that does not fit the type asked for
      s += subject.empty() ? ": a " : ", a ";
      s += e.actual;
      s += ", does not fit in ";
      s += e.expected;
    } else {  // a value of another type than the one asked for
      s += subject.empty() ? ": it is " : " is ";
      s += e.actual;
      s += ", not ";
      s += e.expected;
    }
  }
  if (e.os_code != 0) {
    s += ": ";
    s += std::system_category().message(e.os_code);
  }
  if (e.has_offset()) {
    char buf[40];
    std::snprintf(buf, sizeof buf, " (at byte %llu)", static_cast<unsigned long long>(e.offset));
    s += buf;
  }
  if (e.code == errc::need_more && e.needed != 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ": read at least %llu bytes", static_cast<unsigned long long>(e.needed));
    s += buf;
  }
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
  std::fprintf(stderr, "gguf: unchecked error: %s\n", to_string(e).c_str());
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
  result(const ::gguf::error& e) noexcept : ok_(false) {  // NOLINT(google-explicit-constructor)
    storage_.err = e;
    if (!e) storage_.err.code = errc::unspecified;
  }
  // (NOLINT: implicit on purpose; and clang-tidy 14 misses that a delegating constructor initializes ok_.)
  /// An error built in place, not about a byte: `return {errc::not_found, "no such key"};`.
  result(errc c, const char* what = nullptr) noexcept : result(::gguf::error{c, what}) {}  // NOLINT
  /// An error about the byte at `at` of the input.
  result(errc c, std::uint64_t at, const char* what) noexcept : result(::gguf::error{c, at, what}) {}  // NOLINT

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

  /**
   * True when `r` holds a value equal to `v`; an error equals no value (as `std::expected == T`).
   * @param r the result
   * @param v a value
   */
  friend bool operator==(const result& r, const T& v) requires std::equality_comparable<T> {
    return r.ok_ && r.storage_.value == v;
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
  result(const ::gguf::error& e) noexcept : err_(e) {}  // NOLINT(google-explicit-constructor)
  /// An error built in place, not about a byte, or success for `errc::success`.
  result(errc c, const char* what = nullptr) noexcept : err_{c, what} {}  // NOLINT(google-explicit-constructor)
  /// An error about the byte at `at` of the input.
  result(errc c, std::uint64_t at, const char* what) noexcept : err_{c, at, what} {}
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
