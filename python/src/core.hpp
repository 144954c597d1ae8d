// pygguf's C++ core: what every part of the module shares. The Python package (python/pygguf/) builds
// the public API on top of these few classes and functions.
#ifndef PYGGUF_CORE_HPP
#define PYGGUF_CORE_HPP

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.hpp"

namespace pygguf {

namespace py = pybind11;

/**
 * What a model's views point into: a model opened from a path (one file or a shard set, mapped), or a
 * parsed buffer the caller gave. The parser checks every length and offset once and the views trust
 * them afterwards, so a buffer is parsed in place only when no one can change its bytes while it is
 * held (`parse`); any other buffer is copied first. Immutable once made; shared by the model object,
 * its tensors and every numpy view, so that a view outlives `close()` safely.
 */
class source {
 public:
  /// Opens `path` (any shard of a set opens the set).
  static std::shared_ptr<source> open(const std::filesystem::path& path, const gguf::parse_options& opt);
  /**
   * Parses the bytes of `buffer` (any object with the buffer protocol). In place, without a copy, only
   * when the bytes belong to an owner that cannot change while it is held (`immutable_owner`): `bytes`,
   * an `mmap.mmap` made with ACCESS_READ, or a memoryview or numpy array over one of those. Anything
   * else is copied first, read-only or not: a read-only view (`memoryview.toreadonly()`, a numpy array
   * with `writeable=False`) says nothing about who else can write the memory under it.
   */
  static std::shared_ptr<source> parse(const py::object& buffer, const gguf::parse_options& opt);

  source(const source&) = delete;
  source& operator=(const source&) = delete;
  ~source();

  /// The metadata (the first shard's for a set).
  const gguf::metadata_table& metadata() const noexcept;
  /// Every tensor, shard by shard in file order.
  std::span<const gguf::tensor_info> tensors() const noexcept;
  /// The tensor of this name, or nullptr.
  const gguf::tensor_info* find_tensor(std::string_view name) const noexcept;
  /// GGUF version, alignment and byte order of the (first) file.
  std::uint32_t version() const noexcept;
  std::uint32_t alignment() const noexcept;
  std::endian byte_order() const noexcept;
  /// The shard holding tensor `t` (0 for a single file or a buffer).
  std::size_t shard_of(const gguf::tensor_info& t) const noexcept;
  /// The number of files (1 for a buffer).
  std::size_t n_shards() const noexcept;
  /// The files' paths (empty for a buffer).
  std::vector<std::filesystem::path> paths() const;
  /// The opened model (nullptr for a buffer).
  const gguf::model* model() const noexcept { return model_ ? &*model_ : nullptr; }
  /// The (first) file's bytes as parsed: for metadata views and compat's field parts.
  std::span<const std::byte> header_bytes() const noexcept;

 private:
  source() = default;
  std::optional<gguf::model> model_;
  Py_buffer buffer_{};  // the caller's buffer, parsed in place
  bool has_buffer_ = false;
  Py_buffer owner_{};  // an export of the buffer's immutable owner: an mmap cannot be closed under it
  bool has_owner_ = false;
  std::unique_ptr<std::byte[]> copy_;  // the bytes of a buffer that could change, copied
  std::optional<gguf::file> file_;
};

using source_ptr = std::shared_ptr<source>;

/**
 * The bytes of any object with the buffer protocol, C-contiguous, held while this lives (the object
 * cannot be resized meanwhile: numpy and bytearray refuse while a view is held).
 */
class held_buffer {
 public:
  explicit held_buffer(const py::handle& o) {
    if (PyObject_GetBuffer(o.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
  }
  ~held_buffer() { PyBuffer_Release(&view_); }
  held_buffer(const held_buffer&) = delete;
  held_buffer& operator=(const held_buffer&) = delete;
  /// The bytes.
  std::span<const std::byte> span() const noexcept {
    return {static_cast<const std::byte*>(view_.buf), static_cast<std::size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

/// An owner for numpy's `base`: keeps `s` alive while the array (or any view of it) lives.
py::capsule keep_alive(const source_ptr& s);

/**
 * A read-only numpy array over memory `s` owns, without copying.
 * @param dtype   the numpy dtype (byte order included)
 * @param shape   numpy's shape
 * @param data    the first byte
 */
py::array readonly_view(const source_ptr& s, const py::dtype& dtype, std::vector<py::ssize_t> shape, const void* data);

/**
 * A new, writable, C-contiguous array (a view into numpy's own memory) for the output of a kernel that
 * reads `source`. Its data starts on a 64-byte boundary (numpy's own start 16 bytes in): a vector store
 * never straddles two cache lines, and the dequantizers stream an output past the caches only into whole
 * lines. With `copy` (the output is `source`'s bytes: f32 to f32, a memcpy) it starts at `source`'s
 * offset in a cache line instead (a copy between different offsets ran at a third of the speed here),
 * half a page away from `source`'s offset in its page when large (so that the copy's loads never wait on
 * its stores to the same offset of another page: 4K aliasing).
 */
py::array new_array(const py::dtype& dtype, std::vector<py::ssize_t> shape, const void* source = nullptr,
                    bool copy = false);

/// Marks an array read-only.
void set_readonly(py::array& a);

/**
 * Raises the Python exception for a library error: `OSError` (errno and path) for an I/O error,
 * else `pygguf.GGUFError` (a ValueError) with the message, the code's name, the byte offset and the
 * subject (a key or a tensor name).
 * @param e    the error
 * @param path the file the call was about, for OSError's filename (empty: the error's subject)
 */
[[noreturn]] void raise(const gguf::error& e, const std::string& path = {});

/**
 * `s` decoded as UTF-8 to a str. With "surrogateescape" (strict decoding first, CPython's fastest path),
 * bytes that are not UTF-8 become lone surrogates and `encode_utf8` gives them back: a file's partial
 * UTF-8 (a token's text, a key) survives a read and a write. Other handlers ("backslashreplace",
 * "replace") are for text shown to people.
 */
py::str decode_utf8(std::string_view s, const char* errors = "surrogateescape");

/// The bytes a str stands for: its UTF-8, with the lone surrogates of `decode_utf8` turned back into bytes.
py::bytes encode_utf8(const py::handle& str);

/// The name of an error code's enumerator ("bad_vocabulary").
const char* code_name(gguf::errc c) noexcept;

/// The value of a result, or `raise`.
template <class T>
T take(gguf::result<T>&& r, const std::string& path = {}) {
  if (!r) raise(r.error(), path);
  if constexpr (!std::is_void_v<T>) return std::move(*r);
}

/**
 * An integer argument (int, numpy integer, anything with `__index__`; not a float) as a Python int.
 * @throws TypeError naming `name` for anything else
 */
py::object index_arg(const py::handle& o, const std::string& name);

/// The decimal digits of a Python int, for messages (its size in bits when it is too long to print).
std::string int_text(const py::handle& i);

/// An integer argument from `lo` to `hi`: TypeError for a non-integer, ValueError naming `name` and the
/// range for any value outside it, however large.
long long int_arg(const py::handle& o, const std::string& name, long long lo, long long hi);

/// An unsigned integer argument from 0 to `hi`, as `int_arg`.
std::uint64_t uint_arg(const py::handle& o, const std::string& name, std::uint64_t hi);

/// `threads=`: every core for None; else an integer of at least 1 (ValueError otherwise), capped at 1024.
unsigned threads_arg(const py::handle& threads);

/// A ggml type from an int, a GGMLType or a type name ("q4_K"); ValueError for anything else.
gguf::ggml_type to_type(const py::handle& t);

/// numpy's dtype for a dequantized output: float32, float16, or "bfloat16" (uint16 bits).
enum class out_kind { f32, f16, bf16 };
out_kind to_out_kind(const py::handle& dtype);
py::dtype dtype_of(out_kind k);

/**
 * The destination of a dequantization: `out` when given, checked (a numpy array, C-contiguous, writeable,
 * of `n` elements, of the dtype of `kind` in the native byte order: the kernels write native values, so
 * a '>f4' array would get wrong ones); else a `new_array` of `shape`.
 * @throws TypeError for an `out` that is not a numpy array, ValueError for one that does not fit
 */
py::array output_array(out_kind kind, const py::object& out, std::vector<py::ssize_t> shape, std::uint64_t n,
                       const void* source = nullptr, bool copy = false);

/// Binds each part of the module (core_*.cpp).
void bind_source(py::module_& m);         // source.cpp: Source, StringArray
void bind_arrays(py::module_& m);         // arrays.cpp: dequantize, quantize, the type table
void bind_writing(py::module_& m);        // writing.cpp: save, edit, split, merge, quantize_model, facts
void bind_tokenizer(py::module_& m);      // tokenizer.cpp: Tokenizer
void bind_chat_template(py::module_& m);  // chat_template.cpp: ChatTemplate

}  // namespace pygguf

#endif  // PYGGUF_CORE_HPP
