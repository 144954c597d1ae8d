// pygguf._core: writing files (save, edit, split, merge, quantize_model) and model facts.
//
// Python values become gguf::value here (the inference rules are documented in pygguf/_writing.py);
// every file is written beside its target, flushed and renamed over it, with the GIL released while
// the bytes move. A write polls for Ctrl-C (PyErr_CheckSignals, at most every 100 ms) and for an
// exception of quantize_model's progress callback; either stops it with nothing left behind, and the
// Python exception is raised once the library has cleaned up.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core.hpp"

namespace pygguf {
namespace {

namespace fs = std::filesystem;
using gguf::value_type;

// ---- Python classes looked up once ------------------------------------------------------------------

// Looked up on first use (the package is imported by then) and deliberately never released, as the
// core's GGUFError: they live as long as the interpreter.
PyObject* cached(const char* module, const char* name) {
  return py::object(py::module_::import(module).attr(name)).release().ptr();
}
PyObject* value_type_class() {
  static PyObject* c = cached("pygguf._types", "ValueType");
  return c;
}
PyObject* string_array_class() {
  static PyObject* c = cached("pygguf._core", "StringArray");
  return c;
}
PyObject* numpy_generic_class() {
  static PyObject* c = cached("numpy", "generic");
  return c;
}

bool is_instance(py::handle o, PyObject* cls) {
  const int r = PyObject_IsInstance(o.ptr(), cls);
  if (r < 0) throw py::error_already_set();
  return r == 1;
}

std::string show(py::handle o) { return py::repr(o).cast<std::string>(); }

// ---- Python values -> gguf::value ------------------------------------------------------------------

constexpr int max_depth = 64;  // the reader's limit of nested arrays, and a guard against a list in itself

/// Where a value is being converted, for messages: "general.name" or "tokens[3]".
struct where {
  std::string_view key;
  [[noreturn]] void type_error(const std::string& why) const { throw py::type_error(std::string(key) + ": " + why); }
  [[noreturn]] void value_error(const std::string& why) const { throw py::value_error(std::string(key) + ": " + why); }
};

std::string_view type_name(value_type t) { return gguf::to_string(t); }

// The metadata type of a numpy dtype, or nullopt (float16, complex, strings, objects...).
std::optional<value_type> type_of_dtype(const py::dtype& d) {
  const char kind = d.kind();
  const auto size = d.itemsize();
  if (kind == 'b' && size == 1) return value_type::boolean;
  if (kind == 'i') {
    if (size == 1) return value_type::int8;
    if (size == 2) return value_type::int16;
    if (size == 4) return value_type::int32;
    if (size == 8) return value_type::int64;
  }
  if (kind == 'u') {
    if (size == 1) return value_type::uint8;
    if (size == 2) return value_type::uint16;
    if (size == 4) return value_type::uint32;
    if (size == 8) return value_type::uint64;
  }
  if (kind == 'f' && size == 4) return value_type::float32;
  if (kind == 'f' && size == 8) return value_type::float64;
  return std::nullopt;
}

bool is_explicit(py::handle o) {
  return PyTuple_Check(o.ptr()) && PyTuple_GET_SIZE(o.ptr()) == 2 &&
         is_instance(PyTuple_GET_ITEM(o.ptr(), 0), value_type_class());
}

bool is_array_like(py::handle o) {
  return PyList_Check(o.ptr()) || py::isinstance<py::array>(o) || is_instance(o, string_array_class());
}

// A str as the bytes it was decoded from (surrogateescape: the partial UTF-8 of a vocabulary survives
// a read and a write), bytes and bytearray as they are.
std::string string_of(py::handle o, const where& at) {
  if (PyUnicode_Check(o.ptr())) return std::string(encode_utf8(o));
  if (PyBytes_Check(o.ptr())) return std::string(py::reinterpret_borrow<py::bytes>(o));
  if (PyByteArray_Check(o.ptr())) {
    return std::string(PyByteArray_AS_STRING(o.ptr()), static_cast<std::size_t>(PyByteArray_GET_SIZE(o.ptr())));
  }
  at.type_error(show(o) + " is not a string (str or bytes)");
}

// An integer of type T: any object with __index__ (int, bool, numpy integers), in T's range.
template <class T>
T integer_of(py::handle o, value_type t, const where& at) {
  if (PyFloat_Check(o.ptr())) at.type_error(show(o) + " is not an integer (" + std::string(type_name(t)) + ")");
  PyObject* index = PyNumber_Index(o.ptr());
  if (!index) {
    PyErr_Clear();
    at.type_error(show(o) + " is not an integer (" + std::string(type_name(t)) + ")");
  }
  const auto n = py::reinterpret_steal<py::object>(index);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  bool fits = false;
  T out{};
  if (overflow == 0) {
    if constexpr (std::is_signed_v<T>) {
      fits = v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
    } else {
      fits = v >= 0 && static_cast<unsigned long long>(v) <= std::numeric_limits<T>::max();
    }
    out = static_cast<T>(v);
  } else if (overflow > 0 && std::is_same_v<T, std::uint64_t>) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(n.ptr());
    if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
    } else {
      fits = true;
      out = static_cast<T>(u);
    }
  }
  if (!fits) {
    at.value_error(show(o) + " is out of range for " + std::string(type_name(t)) + " (" +
                   std::to_string(std::numeric_limits<T>::min()) + " to " +
                   std::to_string(std::numeric_limits<T>::max()) + ")");
  }
  return out;
}

// A float of type T (float or double), refusing what the type cannot hold as gguf-edit does: a finite
// number that would become infinite, or a non-zero one that would become 0.
template <class T>
T float_of(py::handle o, value_type t, const where& at) {
  if (PyUnicode_Check(o.ptr()) || PyBytes_Check(o.ptr()) || PyBool_Check(o.ptr())) {
    at.type_error(show(o) + " is not a number (" + std::string(type_name(t)) + ")");
  }
  const double d = PyFloat_AsDouble(o.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    at.type_error(show(o) + " is not a number (" + std::string(type_name(t)) + ")");
  }
  const T x = static_cast<T>(d);
  if (std::isfinite(d) && std::isinf(x)) {
    at.value_error(show(o) + " is too large for " + std::string(type_name(t)) + " (float64 holds it)");
  }
  if (d != 0.0 && x == T(0)) {
    at.value_error(show(o) + " is too small for " + std::string(type_name(t)) + ": it would become 0");
  }
  return x;
}

bool bool_of(py::handle o, const where& at) {
  if (o.ptr() == Py_True) return true;
  if (o.ptr() == Py_False) return false;
  if (is_instance(o, numpy_generic_class()) && py::dtype::from_args(o.attr("dtype")).kind() == 'b') {
    return PyObject_IsTrue(o.ptr()) == 1;
  }
  if (!PyFloat_Check(o.ptr())) {
    if (PyObject* index = PyNumber_Index(o.ptr())) {
      const auto n = py::reinterpret_steal<py::object>(index);
      const long long v = PyLong_AsLongLong(n.ptr());
      if (v == 0 || v == 1) return v == 1;
    }
    PyErr_Clear();
  }
  at.type_error(show(o) + " is not a bool (True, False, 1 or 0)");
}

gguf::value scalar_of(value_type t, py::handle o, const where& at) {
  switch (t) {
    case value_type::uint8: return gguf::value(integer_of<std::uint8_t>(o, t, at));
    case value_type::int8: return gguf::value(integer_of<std::int8_t>(o, t, at));
    case value_type::uint16: return gguf::value(integer_of<std::uint16_t>(o, t, at));
    case value_type::int16: return gguf::value(integer_of<std::int16_t>(o, t, at));
    case value_type::uint32: return gguf::value(integer_of<std::uint32_t>(o, t, at));
    case value_type::int32: return gguf::value(integer_of<std::int32_t>(o, t, at));
    case value_type::uint64: return gguf::value(integer_of<std::uint64_t>(o, t, at));
    case value_type::int64: return gguf::value(integer_of<std::int64_t>(o, t, at));
    case value_type::float32: return gguf::value(float_of<float>(o, t, at));
    case value_type::float64: return gguf::value(float_of<double>(o, t, at));
    case value_type::boolean: return gguf::value(bool_of(o, at));
    case value_type::string: return gguf::value(string_of(o, at));
    case value_type::array: break;
  }
  at.type_error("an array needs a list or a numpy array, not " + show(o));
}

// The items of an array-like (list, 1-D numpy array, StringArray) as a list.
py::list items_of(py::handle o, const where& at) {
  if (PyList_Check(o.ptr())) return py::reinterpret_borrow<py::list>(o);
  if (py::isinstance<py::array>(o)) {
    const auto a = py::reinterpret_borrow<py::array>(o);
    if (a.ndim() != 1) {
      at.type_error("a numpy array of " + std::to_string(a.ndim()) +
                    " dimensions: metadata arrays have one (nested lists for arrays of arrays)");
    }
    return a.attr("tolist")();
  }
  if (is_instance(o, string_array_class())) return o.attr("tolist")(true);  // the stored bytes
  at.type_error(show(o) + " is not an array (a list or a numpy array)");
}

template <class T>
gguf::value gather(const py::list& items, value_type t, const where& at) {
  std::vector<T> xs;
  xs.reserve(items.size());
  for (const py::handle item : items) {
    if constexpr (std::is_floating_point_v<T>) {
      xs.push_back(float_of<T>(item, t, at));
    } else {
      xs.push_back(integer_of<T>(item, t, at));
    }
  }
  return gguf::value::array(std::span<const T>(xs));
}

// The items of a 1-D numpy array of T (any byte order or stride), without a Python object per item.
template <class T>
gguf::value numpy_items(const py::array& a) {
  const auto c = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!c) throw py::error_already_set();
  return gguf::value::array(std::span<const T>(c.data(), static_cast<std::size_t>(c.size())));
}

gguf::value value_of(py::handle o, const where& at, int depth);

// An array of `t` items from an array-like (item by item, range-checked), or of inferred items when
// `t` is `array` (an array of arrays).
gguf::value typed_array(value_type t, py::handle o, const where& at, int depth) {
  if (t == value_type::array) return value_of(o, at, depth);
  // A numpy array of exactly that type: its bytes, without a Python object per item.
  if (py::isinstance<py::array>(o)) {
    const auto a = py::reinterpret_borrow<py::array>(o);
    const auto dt = type_of_dtype(a.dtype());
    if (a.ndim() == 1 && dt && *dt == t) {
      switch (t) {
        case value_type::uint8: return numpy_items<std::uint8_t>(a);
        case value_type::int8: return numpy_items<std::int8_t>(a);
        case value_type::uint16: return numpy_items<std::uint16_t>(a);
        case value_type::int16: return numpy_items<std::int16_t>(a);
        case value_type::uint32: return numpy_items<std::uint32_t>(a);
        case value_type::int32: return numpy_items<std::int32_t>(a);
        case value_type::uint64: return numpy_items<std::uint64_t>(a);
        case value_type::int64: return numpy_items<std::int64_t>(a);
        case value_type::float32: return numpy_items<float>(a);
        case value_type::float64: return numpy_items<double>(a);
        case value_type::boolean: return numpy_items<bool>(a);
        default: break;
      }
    }
  }
  const py::list items = items_of(o, at);
  switch (t) {
    case value_type::uint8: return gather<std::uint8_t>(items, t, at);
    case value_type::int8: return gather<std::int8_t>(items, t, at);
    case value_type::uint16: return gather<std::uint16_t>(items, t, at);
    case value_type::int16: return gather<std::int16_t>(items, t, at);
    case value_type::uint32: return gather<std::uint32_t>(items, t, at);
    case value_type::int32: return gather<std::int32_t>(items, t, at);
    case value_type::uint64: return gather<std::uint64_t>(items, t, at);
    case value_type::int64: return gather<std::int64_t>(items, t, at);
    case value_type::float32: return gather<float>(items, t, at);
    case value_type::float64: return gather<double>(items, t, at);
    case value_type::boolean: {  // std::vector<bool> is not contiguous
      const std::unique_ptr<bool[]> xs(new bool[items.empty() ? 1 : items.size()]);
      std::size_t i = 0;
      for (const py::handle item : items) xs[i++] = bool_of(item, at);
      return gguf::value::array(std::span<const bool>(xs.get(), items.size()));
    }
    case value_type::string: {
      std::vector<std::string> xs;
      xs.reserve(items.size());
      for (const py::handle item : items) xs.push_back(string_of(item, at));
      return gguf::value::strings(std::span<const std::string>(xs));
    }
    case value_type::array: break;
  }
  at.type_error("unreachable");
}

// The item type of a list, inferred as gguf-py infers a value's type (bool, int, float, str/bytes),
// with ints widened together (int32 when every item fits, else int64, else uint64), numpy scalars
// keeping their own type, and arrays for an array of arrays.
gguf::value inferred_array(const py::list& items, const where& at, int depth) {
  if (items.empty()) {
    at.value_error("an empty list has no item type: give it as (pygguf.ValueType.X, [])");
  }
  enum class kind { none, boolean, integer, floating, string, array, numpy };
  kind k = kind::none;
  value_type numpy_type = value_type::uint8;
  long long lo = 0;
  unsigned long long hi = 0;
  bool big = false;  // an item above INT64_MAX
  bool negative = false;
  for (const py::handle item : items) {
    kind ki = kind::none;
    value_type ti = value_type::uint8;
    if (PyBool_Check(item.ptr())) {
      ki = kind::boolean;
    } else if (PyUnicode_Check(item.ptr()) || PyBytes_Check(item.ptr()) || PyByteArray_Check(item.ptr())) {
      ki = kind::string;
    } else if (is_instance(item, numpy_generic_class())) {
      const auto t = type_of_dtype(py::dtype::from_args(item.attr("dtype")));
      if (!t) at.type_error("a numpy scalar of a type GGUF has no value type for: " + show(item));
      ki = kind::numpy;
      ti = *t;
    } else if (PyLong_Check(item.ptr())) {
      ki = kind::integer;
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
      if (overflow > 0) {
        big = true;
      } else if (overflow < 0) {
        at.value_error(show(item) + " is below int64's range");
      } else {
        lo = std::min(lo, v);
        if (v > 0) hi = std::max(hi, static_cast<unsigned long long>(v));
        negative = negative || v < 0;
      }
    } else if (PyFloat_Check(item.ptr())) {
      ki = kind::floating;
    } else if (is_array_like(item) || is_explicit(item)) {
      ki = kind::array;
    } else {
      at.type_error(show(item) + " cannot be an array item (bool, int, float, str, bytes, a list)");
    }
    if (k == kind::none) {
      k = ki;
      numpy_type = ti;
    } else if (k != ki || (k == kind::numpy && numpy_type != ti)) {
      at.type_error("the items of an array must all have one type (" + show(items[0]) + " and " + show(item) +
                    "): give it as (pygguf.ValueType.X, [...])");
    }
  }
  switch (k) {
    case kind::boolean: return typed_array(value_type::boolean, items, at, depth);
    case kind::string: return typed_array(value_type::string, items, at, depth);
    case kind::floating: return typed_array(value_type::float32, items, at, depth);
    case kind::numpy: return typed_array(numpy_type, items, at, depth);
    case kind::integer: {
      if (big && negative) at.value_error("the integers span more than int64 and uint64 can hold");
      if (big) return typed_array(value_type::uint64, items, at, depth);
      const bool int32 = lo >= std::numeric_limits<std::int32_t>::min() &&
                         hi <= static_cast<unsigned long long>(std::numeric_limits<std::int32_t>::max());
      return typed_array(int32 ? value_type::int32 : value_type::int64, items, at, depth);
    }
    case kind::array: {
      std::vector<gguf::value> arrays;
      arrays.reserve(items.size());
      for (const py::handle item : items) {
        gguf::value v = value_of(item, at, depth + 1);
        if (v.type() != value_type::array) at.type_error("an item of an array of arrays is not an array");
        arrays.push_back(std::move(v));
      }
      auto v = gguf::value::arrays(arrays);
      if (!v) at.type_error("the arrays of an array of arrays must all have one item type");
      return std::move(*v);
    }
    case kind::none: break;
  }
  at.type_error("unreachable");
}

// A Python value as a metadata value (see pygguf/_writing.py for the rules).
gguf::value value_of(py::handle o, const where& at, int depth) {
  if (depth > max_depth) at.value_error("arrays nested more than 64 deep");
  if (is_explicit(o)) {
    const auto t = static_cast<value_type>(py::reinterpret_borrow<py::tuple>(o)[0].cast<int>());
    const py::handle x = PyTuple_GET_ITEM(o.ptr(), 1);
    if (t == value_type::array) {
      if (!is_array_like(x)) at.type_error("ValueType.ARRAY needs a list or a numpy array, not " + show(x));
      return value_of(x, at, depth);
    }
    if (is_array_like(x)) return typed_array(t, x, at, depth + 1);
    return scalar_of(t, x, at);
  }
  if (PyBool_Check(o.ptr())) return gguf::value(o.ptr() == Py_True);
  if (PyUnicode_Check(o.ptr()) || PyBytes_Check(o.ptr()) || PyByteArray_Check(o.ptr())) {
    return gguf::value(string_of(o, at));
  }
  if (py::isinstance<py::array>(o)) {
    const auto a = py::reinterpret_borrow<py::array>(o);
    if (a.ndim() == 0) return value_of(a[py::tuple()], at, depth);  // a numpy scalar
    const char kind = a.dtype().kind();
    if (kind == 'U' || kind == 'S' || kind == 'O') return inferred_array(items_of(o, at), at, depth + 1);
    const auto t = type_of_dtype(a.dtype());
    if (!t) at.type_error("a numpy array of dtype " + show(a.dtype()) + " (GGUF metadata has no such type)");
    return typed_array(*t, o, at, depth + 1);
  }
  if (is_instance(o, numpy_generic_class())) {
    const auto t = type_of_dtype(py::dtype::from_args(o.attr("dtype")));
    if (!t) at.type_error("a numpy scalar of a type GGUF has no value type for: " + show(o));
    return scalar_of(*t, o, at);
  }
  if (PyLong_Check(o.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
    if (overflow > 0) return scalar_of(value_type::uint64, o, at);
    if (overflow < 0) at.value_error(show(o) + " is below int64's range");
    if (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max()) {
      return gguf::value(static_cast<std::int32_t>(v));
    }
    return gguf::value(static_cast<std::int64_t>(v));
  }
  if (PyFloat_Check(o.ptr())) return scalar_of(value_type::float32, o, at);
  if (PyList_Check(o.ptr())) return inferred_array(py::reinterpret_borrow<py::list>(o), at, depth + 1);
  if (is_instance(o, string_array_class())) return typed_array(value_type::string, o, at, depth + 1);
  if (PyTuple_Check(o.ptr())) {
    at.type_error("a tuple is not a value: a list for an array, (pygguf.ValueType.X, value) for a type");
  }
  at.type_error(show(o) +
                " has no GGUF value type (bool, int, float, str, bytes, list, numpy array or scalar, "
                "or (pygguf.ValueType.X, value))");
}

/// Keys and values from Python: [(key, value), ...].
std::vector<std::pair<std::string, gguf::value>> entries_of(const py::list& entries) {
  std::vector<std::pair<std::string, gguf::value>> out;
  out.reserve(entries.size());
  for (const py::handle e : entries) {
    const auto pair = py::reinterpret_borrow<py::tuple>(e);
    const py::handle k = pair[0];
    if (!PyUnicode_Check(k.ptr())) throw py::type_error("a metadata key must be a str, not " + show(k));
    std::string key = k.cast<std::string>();
    gguf::value v = value_of(pair[1], where{key}, 0);
    out.emplace_back(std::move(key), std::move(v));
  }
  return out;
}

// ---- cancellation ----------------------------------------------------------------------------------

/**
 * Whether Python asked a write to stop: Ctrl-C (a pending signal) or an exception of a callback, kept
 * here to be raised once the library has cleaned up. Declared where the GIL is held, so that the
 * exception it keeps is released with the GIL held.
 */
class cancel_state {
 public:
  /// True when the write must stop; polls the signals (with the GIL) at most every 100 ms, or now.
  bool poll(bool now = false) {
    if (error_) return true;
    const auto t = std::chrono::steady_clock::now();
    if (!now && t - last_ < std::chrono::milliseconds(100)) return false;
    last_ = t;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) error_.emplace();
    return error_.has_value();
  }
  /// Keeps the Python error being handled (call with the GIL held, in a catch block).
  void fail(py::error_already_set& e) { error_.emplace(std::move(e)); }
  /// Raises the kept exception, if any (with the GIL held).
  void rethrow() {
    if (error_) {
      py::error_already_set e = std::move(*error_);
      error_.reset();
      throw e;
    }
  }
  bool cancelled() const noexcept { return error_.has_value(); }

 private:
  std::optional<py::error_already_set> error_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

gguf::error cancelled_error() { return gguf::error{gguf::errc::cancelled, "the write was stopped"}; }

/**
 * Writes `w` to `target` as `gguf::save` does (`gguf::stage`: symlinks followed, `check_replaceable`, a
 * temporary beside the target, flushed, then renamed over it), stopping when Python asks (`cancel_state`,
 * through `write_options::stop`). Call without the GIL.
 * @param progress      the writer's progress, or empty
 * @param before_commit called once everything is written and flushed, before the rename (to unmap a
 *                      source that is the target), or empty
 */
gguf::result<void> write_file(const gguf::writer& w, const fs::path& target, cancel_state& state,
                              std::function<void(std::uint64_t, std::uint64_t)> progress = {},
                              const std::function<void()>& before_commit = {}) {
  gguf::save_options opt;
  opt.progress = std::move(progress);
  opt.stop = [&state] { return state.poll(); };
  auto staged = gguf::stage(w, target, opt);
  if (!staged) return staged.error();
  if (state.poll(true)) return cancelled_error();  // nothing is put in place after a cancel
  if (before_commit) before_commit();
  return staged->commit();
}

/// After a write: the kept Python exception, else the library's error (about `path`), else nothing.
void finish(cancel_state& state, const gguf::result<void>& r, const std::string& path) {
  state.rethrow();
  if (!r) raise(r.error(), path);
}

// ---- sources ---------------------------------------------------------------------------------------

std::string path_string(const fs::path& p) { return gguf::detail::path_utf8(p); }

/// A model to read: opened here from a path (any shard of a set), or an open pygguf Source.
struct model_ref {
  std::optional<gguf::model> owned;
  source_ptr held;
  std::string path;  // the first shard's, for errors
  /// The model (valid while this object lives; moving it moves the model, whose views stay valid).
  const gguf::model& operator*() const noexcept { return owned ? *owned : *held->model(); }
  const gguf::model* operator->() const noexcept { return &**this; }
};

model_ref model_of(const py::object& src, const char* what) {
  model_ref r;
  if (py::isinstance<source>(src)) {
    r.held = src.cast<source_ptr>();
    if (!r.held->model()) {
      throw py::value_error(std::string(what) + " needs a model opened from a file, not from a buffer");
    }
    r.path = path_string(r->shard_path(0));
    return r;
  }
  const auto p = src.cast<fs::path>();
  r.path = path_string(p);
  gguf::result<gguf::model> m = [&] {
    py::gil_scoped_release unlocked;
    return gguf::open_model(p);
  }();
  if (!m) raise(m.error(), r.path);
  r.owned.emplace(std::move(*m));
  return r;
}

std::endian order_of(const std::string& s) {
  if (s == "little") return std::endian::little;
  if (s == "big") return std::endian::big;
  throw py::value_error("byte_order is 'little' or 'big', not '" + s + "'");
}

// ---- save ------------------------------------------------------------------------------------------

void set_all(gguf::writer& w, std::vector<std::pair<std::string, gguf::value>>& entries) {
  for (auto& [key, v] : entries) take(w.set(key, std::move(v)));
}

// save(path, copy_from, entries, tensors, alignment, byte_order): copy_from is a Source whose metadata
// comes first (types kept) or None; tensors are (name, type, buffer, ne, byte order) in file order.
void save(const fs::path& path, const py::object& copy_from, const py::list& entries, const py::list& tensors,
          const py::object& alignment, const std::string& byte_order) {
  const std::endian order = order_of(byte_order);
  gguf::writer w;
  w.set_byte_order(order);
  source_ptr from;
  if (!copy_from.is_none()) {
    from = copy_from.cast<source_ptr>();
    for (const gguf::metadata_entry& e : from->metadata()) take(w.set(e.key, gguf::value(e.value)));
  }
  auto values = entries_of(entries);
  set_all(w, values);
  if (!alignment.is_none()) {
    const auto a = int_arg(alignment, "alignment", 1, 0xFFFFFFFFll);  // the library checks the power of two
    gguf::value v(static_cast<std::uint32_t>(a));
    if (w.contains("general.alignment")) {
      take(w.replace("general.alignment", std::move(v)));
    } else if (a != 32) {
      take(w.set("general.alignment", std::move(v)));
    }
  }
  std::vector<std::unique_ptr<held_buffer>> held;
  held.reserve(tensors.size());
  for (const py::handle t : tensors) {
    const auto item = py::reinterpret_borrow<py::tuple>(t);
    const auto name = item[0].cast<std::string>();
    const gguf::ggml_type type = to_type(py::object(item[1]));
    held.push_back(std::make_unique<held_buffer>(py::object(item[2])));
    std::vector<std::uint64_t> ne;
    const py::object dims = item[3];
    for (const py::handle d : dims) {
      const std::string what = name + ": shape[" + std::to_string(ne.size()) + "]";
      ne.push_back(uint_arg(d, what, std::numeric_limits<std::int64_t>::max()));  // ggml's ne are int64
    }
    take(w.add_tensor(name, type, ne, held.back()->span(), order_of(item[4].cast<std::string>())));
  }
  cancel_state state;
  gguf::result<void> r;
  {
    py::gil_scoped_release unlocked;
    r = write_file(w, path, state);
  }
  finish(state, r, path_string(path));
}

// ---- edit ------------------------------------------------------------------------------------------

// edit(src, dst, set, delete, rename, byte_order, in_place): src is a path or a Source; dst a path or
// None (src itself); set [(key, value)]; delete [key]; rename [(key, new)]; byte_order None or a name.
void edit(const py::object& src, const py::object& dst, const py::list& set, const std::vector<std::string>& del,
          const std::vector<std::pair<std::string, std::string>>& rename, const py::object& byte_order, bool in_place) {
  const bool new_order = !byte_order.is_none();
  const std::endian order = new_order ? order_of(byte_order.cast<std::string>()) : std::endian::little;
  auto values = entries_of(set);

  // The source: a file opened here, a one-file model, or a parsed buffer.
  std::optional<gguf::mapped_gguf> opened;
  std::optional<gguf::file> reparsed;
  source_ptr held;
  const gguf::file* file = nullptr;
  std::optional<fs::path> src_path;
  if (py::isinstance<source>(src)) {
    held = src.cast<source_ptr>();
    if (in_place) {
      // its mapping would see the new header under the views already handed out
      throw py::value_error("in_place edits a file by its path: close the model first and give the path");
    }
    if (const gguf::model* m = held->model()) {
      if (m->n_shards() != 1) {
        throw py::value_error("edit takes one file, not a split model: merge it first (pygguf.merge)");
      }
      file = &m->shard(0).info();
      src_path = m->shard_path(0);
    } else {  // a buffer: the same bytes parsed again, for a gguf::file
      auto f = gguf::parse(held->header_bytes());
      if (!f) raise(f.error());
      reparsed.emplace(std::move(*f));
      file = &*reparsed;
    }
  } else {
    src_path = src.cast<fs::path>();
  }
  if (!src_path && (in_place || dst.is_none())) {
    throw py::value_error("a model parsed from a buffer has no file to edit: give dst");
  }
  const std::optional<fs::path> dst_path = dst.is_none() ? std::nullopt : std::optional<fs::path>(dst.cast<fs::path>());
  const std::string name = path_string(src_path ? *src_path : *dst_path);

  if (src_path) {
    // An interrupted in-place edit: the file may hold a half-written header (gguf-edit refuses it too).
    auto resolved = gguf::resolve_symlinks(*src_path);
    if (!resolved) raise(resolved.error(), name);
    std::error_code ec;
    if (fs::exists(fs::symlink_status(gguf::in_place_backup_path(*resolved), ec))) {
      raise(gguf::error{gguf::errc::pending_restore,
                        "an interrupted in-place edit left a backup of this file: restore it first "
                        "(gguf-edit --restore)"}
                .about_file(path_string(gguf::in_place_backup_path(*resolved).filename())),
            name);
    }
  }
  if (!file) {
    gguf::result<gguf::mapped_gguf> g = [&] {
      py::gil_scoped_release unlocked;
      return gguf::open(*src_path);
    }();
    if (!g) raise(g.error(), name);
    opened.emplace(std::move(*g));
    file = &opened->info();
  }

  gguf::writer w = gguf::writer::from(*file);
  if (new_order) w.set_byte_order(order);
  for (const std::string& key : del) w.remove(key);
  for (const auto& [from, to] : rename) take(w.rename(from, to));
  set_all(w, values);

  if (in_place) {
    if (new_order && order != file->byte_order()) {
      raise(gguf::error{gguf::errc::out_of_range,
                        "a new byte order rewrites the tensor data: it cannot be done in place"},
            name);
    }
    gguf::result<void> r;
    {
      py::gil_scoped_release unlocked;
      r = gguf::save_in_place(w, *src_path);
    }
    if (!r) raise(r.error(), name);
    return;
  }
  const fs::path target = dst_path ? *dst_path : *src_path;
  cancel_state state;
  gguf::result<void> r;
  {
    py::gil_scoped_release unlocked;
    // the source's mapping goes before the rename (Windows cannot rename over a mapped file)
    r = write_file(w, target, state, {}, [&] { opened.reset(); });
  }
  finish(state, r, path_string(target));
}

// ---- split and merge -------------------------------------------------------------------------------

py::list split(const py::object& src, const fs::path& prefix, std::uint32_t max_tensors, std::uint64_t max_bytes,
               bool metadata_only_first_shard) {
  const model_ref m = model_of(src, "split");
  gguf::split_options opt;
  opt.max_tensors = max_tensors;
  opt.max_bytes = max_bytes;
  opt.metadata_only_first_shard = metadata_only_first_shard;
  cancel_state state;
  gguf::save_options save;
  // asked after each chunk of every shard (a last look at the signals after the last one): nothing is
  // swapped in once it says stop
  bool last = false;
  save.progress = [&last](std::uint64_t done, std::uint64_t total) { last = done == total; };
  save.stop = [&state, &last] { return state.poll(last); };
  gguf::result<std::vector<fs::path>> r = cancelled_error();
  {
    py::gil_scoped_release unlocked;
    r = gguf::save_split(*m, prefix, opt, save);
  }
  state.rethrow();
  if (!r) {
    // an error about one shard names it (its file name); the path then is that shard's
    const gguf::error& e = r.error();
    const std::string_view subject = e.subject();
    std::string path = path_string(prefix);
    if (subject.find(".gguf") != std::string_view::npos)
      path = path_string(prefix.parent_path() / std::string(subject));
    raise(e, path);
  }
  py::list out;
  for (const fs::path& p : *r) out.append(py::str(path_string(p)));
  return out;
}

void merge(const py::object& src, const fs::path& dst, bool keep_split_keys) {
  const model_ref m = model_of(src, "merge");
  if (!m->metadata().contains(gguf::split_keys::count)) {
    raise(gguf::error{gguf::errc::not_found, "not a shard of a split model: it has no split.count"}.about(
              gguf::split_keys::count),
          m.path);
  }
  gguf::merge_options opt;
  opt.keep_split_keys = keep_split_keys;
  auto w = gguf::merged_writer(*m, opt);
  if (!w) raise(w.error(), m.path);
  cancel_state state;
  gguf::result<void> r;
  {
    py::gil_scoped_release unlocked;
    r = write_file(*w, dst, state);
  }
  finish(state, r, path_string(dst));
}

// ---- quantize_model --------------------------------------------------------------------------------

const gguf::ftype_info& ftype_of(const py::handle& f) {
  const gguf::ftype_info* info = nullptr;
  if (PyUnicode_Check(f.ptr())) {
    const auto s = f.cast<std::string>();
    info = gguf::find_ftype(std::string_view(s));
    if (!info && !s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 6) {
      info = gguf::find_ftype(static_cast<std::uint32_t>(std::stoul(s)));
    }
    if (!info) throw py::value_error("unknown file type '" + s + "' (llama-quantize's names: Q4_K_M, Q8_0, ...)");
  } else {
    const py::object id = index_arg(f, "ftype");
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(id.ptr(), &overflow);
    if (overflow == 0 && v >= 0 && v <= 0xFFFF) info = gguf::find_ftype(static_cast<std::uint32_t>(v));
    if (!info) throw py::value_error("unknown file type id " + int_text(id));
  }
  return *info;
}

// quantize_model(src, dst, ftype, imatrix, imatrix_name, threads, progress, allow_requantize,
// output_tensor_type, token_embedding_type, leave_output_tensor, pure)
void quantize_model(const py::object& src, const fs::path& dst, const py::object& ftype_, const py::object& imatrix,
                    const std::string& imatrix_name, unsigned threads, const py::object& progress,
                    bool allow_requantize, const py::object& output_tensor_type, const py::object& token_embedding_type,
                    bool leave_output_tensor, bool pure) {
  const gguf::ftype_info& ftype = ftype_of(ftype_);
  gguf::quantize_model_options opt;
  opt.types.allow_requantize = allow_requantize;
  opt.types.pure = pure;
  opt.types.quantize_output = !leave_output_tensor;
  if (!output_tensor_type.is_none()) opt.types.output_tensor_type = to_type(output_tensor_type);
  if (!token_embedding_type.is_none()) opt.types.token_embedding_type = to_type(token_embedding_type);
  opt.n_threads = threads ? threads : std::max(1u, std::thread::hardware_concurrency());

  const model_ref m = model_of(src, "quantize_model");
  const std::string dst_name = path_string(dst);
  for (std::size_t k = 0; k < m->n_shards(); ++k) {
    if (gguf::same_file(m->shard_path(k), dst)) {
      raise(gguf::error{gguf::errc::out_of_range,
                        "the output is the input itself: it would be replaced by its own quantization"}
                .about_file(path_string(dst.filename())),
            dst_name);
    }
  }

  std::optional<gguf::imatrix> imat;
  if (!imatrix.is_none()) {
    const auto ipath = imatrix.cast<fs::path>();
    gguf::result<gguf::imatrix> loaded = [&] {
      py::gil_scoped_release unlocked;
      return gguf::load_imatrix(ipath);
    }();
    if (!loaded) raise(loaded.error(), path_string(ipath));
    imat.emplace(std::move(*loaded));
    if (auto used = gguf::use_imatrix(opt, *imat, imatrix_name); !used) raise(used.error(), path_string(ipath));
  }
  opt.types.has_imatrix = imat.has_value();

  std::vector<gguf::tensor_plan> plan(m->tensors().size());
  if (auto p = gguf::plan_quantization(m->metadata(), m->tensors(), ftype, opt.types, plan); !p) {
    raise(p.error(), m.path);
  }
  auto w = gguf::quantized_writer(*m, ftype, plan, opt);
  if (!w) raise(w.error(), m.path);
  auto header = w->header();
  if (!header) raise(header.error(), m.path);

  // Where each tensor's data ends in the file: the writer's byte count tells which tensors are done.
  const std::size_t n = w->n_tensors();
  std::vector<std::uint64_t> ends(n);
  std::uint64_t at = header->size();
  for (std::size_t k = 0; k < n; ++k) {
    ends[k] = at + w->tensor_bytes(k);
    at += (w->tensor_bytes(k) + w->alignment() - 1) / w->alignment() * w->alignment();
  }
  cancel_state state;
  std::size_t done = 0;
  const gguf::writer& writer = *w;
  auto on_progress = [&](std::uint64_t written, std::uint64_t) {
    std::size_t k = done;
    while (k < n && ends[k] <= written) ++k;
    if (k != done && !progress.is_none() && !state.cancelled()) {
      py::gil_scoped_acquire gil;
      for (; done < k; ++done) {
        try {
          progress(done + 1, n, py::str(std::string(writer.tensor_name(done))));
        } catch (py::error_already_set& e) {
          state.fail(e);
          break;
        }
      }
    }
    done = k;
    state.poll();
  };
  gguf::result<void> r;
  {
    py::gil_scoped_release unlocked;
    r = write_file(writer, dst, state, on_progress);
  }
  finish(state, r, dst_name);
}

// ---- facts -----------------------------------------------------------------------------------------

// A string as gguf-info's JSON holds it: cut at the first NUL, invalid UTF-8 replaced by U+FFFD.
py::str json_string(std::string_view s) {
  if (const std::size_t nul = s.find('\0'); nul != std::string_view::npos) s = s.substr(0, nul);
  return decode_utf8(s, "replace");
}

template <class T>
py::object optional(const std::optional<T>& v) {
  if (!v) return py::none();
  if constexpr (std::is_same_v<T, std::string_view>) {
    return json_string(*v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return py::float_(static_cast<double>(*v));
  } else {
    return py::int_(*v);
  }
}

std::optional<gguf::ggml_type> cache_type(const std::string& name) {
  auto t = gguf::type_from_name(name);
  if (!t || *t == gguf::ggml_type::q8_1 || *t == gguf::ggml_type::q8_K) {
    throw py::value_error("unknown cache type '" + name + "' (f16, bf16, f32, q8_0, q4_0, ...)");
  }
  return t;
}

// facts(src, file, context, cache_type_k, cache_type_v, swa_full, ubatch): gguf-info --json's object.
py::dict facts(const py::object& src, const py::object& file, std::uint32_t context, const std::string& cache_k,
               const std::string& cache_v, bool swa_full, std::uint32_t ubatch) {
  gguf::memory_options opt;
  opt.context = context;
  opt.cache_type_k = *cache_type(cache_k);
  opt.cache_type_v = *cache_type(cache_v);
  opt.swa_full = swa_full;
  opt.ubatch = ubatch;

  // a model from a path, an open model, or a parsed buffer (metadata and tensors are all it needs)
  model_ref ref;
  source_ptr buffer;
  const gguf::metadata_table* md = nullptr;
  std::span<const gguf::tensor_info> tensors;
  std::size_t n_shards = 1;
  if (py::isinstance<source>(src) && !src.cast<source_ptr>()->model()) {
    buffer = src.cast<source_ptr>();
    md = &buffer->metadata();
    tensors = buffer->tensors();
  } else {
    ref = model_of(src, "facts");
    md = &ref->metadata();
    tensors = ref->tensors();
    n_shards = ref->n_shards();
  }
  const auto f = gguf::facts(*md, tensors);
  if (!f) raise(f.error(), ref.path);
  const gguf::hparams& h = f->hp;
  const auto mem = gguf::estimate_memory(h, tensors, opt);
  const gguf::size_notation label = f->label(), computed = gguf::size_label(f->params);
  const std::uint32_t n_layer = h.block_count.value_or(0);
  const std::uint64_t ctx = opt.context ? opt.context : h.context_length.value_or(0);

  py::dict d;
  d["file"] = file;
  d["shards"] = n_shards;
  d["architecture"] = json_string(h.architecture);
  d["name"] = optional(h.name);
  d["n_params"] = f->params.total;
  d["n_params_shared"] = f->params.shared;
  d["n_params_experts"] = f->params.experts;
  d["expert_count"] = f->params.expert_count;
  d["expert_used_count"] = optional(h.expert_used_count);
  d["size_label"] = json_string(label.view());
  d["size_label_computed"] = json_string(computed.view());
  d["file_type"] = json_string(f->file_type.ftype ? f->file_type.ftype->name : std::string_view("unknown"));
  d["file_type_id"] = f->file_type.ftype ? py::object(py::int_(f->file_type.ftype->id)) : py::object(py::none());
  d["file_type_source"] = f->file_type.declared ? "general.file_type" : "guessed";
  d["context_length"] = optional(h.context_length);
  d["n_vocab"] = optional(h.n_vocab());
  d["tokenizer"] = optional(h.tokenizer_model);
  d["tokenizer_pre"] = optional(h.tokenizer_pre);
  d["chat_template"] = h.has_chat_template;
  py::list templates;
  for (const gguf::chat_template_entry& t : gguf::chat_template_entries(*md)) {
    py::dict item;
    item["name"] = json_string(t.name);
    const auto text = t.entry->value.get<std::string_view>();
    item["bytes"] = text ? py::object(py::int_(text->size())) : py::object(py::none());
    templates.append(item);
  }
  d["chat_templates"] = templates;
  d["n_layer"] = optional(h.block_count);
  d["n_embd"] = optional(h.embedding_length);
  d["n_head"] = h.head_count ? py::object(py::int_(h.head_count->max(n_layer))) : py::object(py::none());
  d["n_head_kv"] = h.head_count_kv ? py::object(py::int_(h.head_count_kv->max(n_layer)))
                   : h.head_count  ? py::object(py::int_(h.head_count->max(n_layer)))
                                   : py::object(py::none());
  d["expert_count_declared"] = optional(h.expert_count);
  d["sliding_window"] = optional(h.sliding_window);
  d["rope_freq_base"] = optional(h.rope_freq_base);
  d["bits_per_weight"] = f->census.total.bits_per_weight();
  py::list census;
  for (const gguf::type_traits& t : gguf::ggml_types) {
    const gguf::type_count& c = f->census[t.type];
    if (!c.tensors) continue;
    py::dict e;
    e["type"] = json_string(t.name);
    e["tensors"] = c.tensors;
    e["elements"] = c.elements;
    e["bytes"] = c.bytes;
    e["bits_per_weight"] = c.bits_per_weight();
    census.append(e);
  }
  d["census"] = census;
  py::dict memory;
  memory["context"] = ctx ? py::object(py::int_(ctx)) : py::object(py::none());
  memory["cache_type_k"] = json_string(gguf::to_string(opt.cache_type_k));
  memory["cache_type_v"] = json_string(gguf::to_string(opt.cache_type_v));
  memory["weights"] = f->census.total.bytes;
  if (mem) {
    memory["kv_cache"] = mem->kv_cache();
    memory["k"] = mem->k;
    memory["v"] = mem->v;
    memory["recurrent"] = mem->recurrent;
    memory["cells"] = mem->cells;
    memory["swa_cells"] = mem->swa_cells;
    memory["total"] = mem->total();
  } else {
    memory["kv_cache"] = py::none();
    memory["total"] = py::none();
    memory["error"] = json_string(gguf::to_string(mem.error()));
  }
  d["memory"] = memory;
  return d;
}

}  // namespace

void bind_writing(py::module_& m) {
  m.def("save", &save, py::arg("path"), py::arg("copy_from"), py::arg("entries"), py::arg("tensors"),
        py::arg("alignment"), py::arg("byte_order"));
  m.def("edit", &edit, py::arg("src"), py::arg("dst"), py::arg("set"), py::arg("delete"), py::arg("rename"),
        py::arg("byte_order"), py::arg("in_place"));
  m.def("split", &split, py::arg("src"), py::arg("prefix"), py::arg("max_tensors"), py::arg("max_bytes"),
        py::arg("metadata_only_first_shard"));
  m.def("merge", &merge, py::arg("src"), py::arg("dst"), py::arg("keep_split_keys"));
  m.def("quantize_model", &quantize_model, py::arg("src"), py::arg("dst"), py::arg("ftype"), py::arg("imatrix"),
        py::arg("imatrix_name"), py::arg("threads"), py::arg("progress"), py::arg("allow_requantize"),
        py::arg("output_tensor_type"), py::arg("token_embedding_type"), py::arg("leave_output_tensor"),
        py::arg("pure"));
  m.def("facts", &facts, py::arg("src"), py::arg("file"), py::arg("context"), py::arg("cache_type_k"),
        py::arg("cache_type_v"), py::arg("swa_full"), py::arg("ubatch"));
}

}  // namespace pygguf
