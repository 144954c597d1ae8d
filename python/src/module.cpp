// pygguf._core: the module, and the helpers every part shares (errors, types, numpy views).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "core.hpp"

namespace pygguf {

py::capsule keep_alive(const source_ptr& s) {
  return py::capsule(new source_ptr(s), [](void* p) { delete static_cast<source_ptr*>(p); });
}

py::array new_array(const py::dtype& dtype, std::vector<py::ssize_t> shape, const void* source, bool copy) {
  std::size_t bytes = static_cast<std::size_t>(dtype.itemsize());
  for (const py::ssize_t d : shape) bytes *= static_cast<std::size_t>(d);
  constexpr std::size_t page = 4096, line = 64;
  const bool large = bytes >= 16 * page;
  // numpy's own memory, a view into it at the chosen start (numpy's arrays start 16 bytes into a line)
  const py::array_t<std::uint8_t> memory(static_cast<py::ssize_t>(bytes + (large ? page : line)));
  const auto at = reinterpret_cast<std::uintptr_t>(memory.data()), from = reinterpret_cast<std::uintptr_t>(source);
  std::uintptr_t start = copy ? at + (from + line - at % line) % line : (at + line - 1) / line * line;
  if (large && copy) {  // at the page offset half a page from the source's
    start = at + ((from + page / 2) % page + page - at % page) % page;
  }
  return py::array(dtype, std::move(shape), {}, reinterpret_cast<void*>(start), memory);
}

void set_readonly(py::array& a) {
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
}

py::array readonly_view(const source_ptr& s, const py::dtype& dtype, std::vector<py::ssize_t> shape, const void* data) {
  py::array a(dtype, std::move(shape), {}, data, keep_alive(s));
  set_readonly(a);
  return a;
}

namespace {

// GGUFError, defined in Python (pygguf/_errors.py) so that it can carry attributes and be documented
// there; looked up once. Deliberately never released: it lives as long as the interpreter.
PyObject* gguf_error_class() {
  static PyObject* cls = py::object(py::module_::import("pygguf._errors").attr("GGUFError")).release().ptr();
  return cls;
}

}  // namespace

const char* code_name(gguf::errc c) noexcept {
  // gguf::errc's enumerators, by value
  static constexpr const char* names[] = {"success",           "io_error",         "truncated",
                                          "bad_magic",         "bad_version",      "bad_value_type",
                                          "bad_bool",          "empty_key",        "duplicate_key",
                                          "bad_alignment",     "too_deep",         "limit_exceeded",
                                          "bad_tensor_name",   "duplicate_tensor", "bad_dimensions",
                                          "overflow",          "bad_tensor_type",  "bad_row_size",
                                          "misaligned_offset", "out_of_bounds",    "overlapping_tensors",
                                          "not_found",         "type_mismatch",    "out_of_range",
                                          "size_mismatch",     "unspecified",      "need_more",
                                          "bad_shards",        "bad_hparams",      "pending_restore",
                                          "bad_vocabulary",    "cancelled",        "bad_json"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<std::size_t>(gguf::errc::bad_json) + 1);
  const auto i = static_cast<std::size_t>(c);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "unknown";
}

py::str decode_utf8(std::string_view s, const char* errors) {
  const auto n = static_cast<Py_ssize_t>(s.size());
  PyObject* o = nullptr;
  if (std::string_view(errors) == "surrogateescape") {
    o = PyUnicode_DecodeUTF8(s.data(), n, nullptr);
    if (!o) PyErr_Clear();
  }
  if (!o) o = PyUnicode_DecodeUTF8(s.data(), n, errors);
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

py::bytes encode_utf8(const py::handle& str) {
  PyObject* b = PyUnicode_AsEncodedString(str.ptr(), "utf-8", "surrogateescape");
  if (!b) throw py::error_already_set();
  return py::reinterpret_steal<py::bytes>(b);
}

void raise(const gguf::error& e, const std::string& path) {
  const std::string message = gguf::to_string(e);
  if (e.code == gguf::errc::io_error) {
    const std::string name = path.empty() ? std::string(e.subject()) : path;
    py::object err;
    if (e.os_code != 0) {
      // OSError(errno, strerror, filename): Python picks the subclass (FileNotFoundError, ...)
      err = py::module_::import("builtins").attr("OSError")(e.os_code, decode_utf8(message), decode_utf8(name));
    } else {
      err = py::module_::import("builtins").attr("OSError")(decode_utf8(message));
    }
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(err.ptr())), err.ptr());
    throw py::error_already_set();
  }
  const py::object offset = e.has_offset() ? py::object(py::int_(e.offset)) : py::object(py::none());
  // the message and subject may quote a file's bytes that are not UTF-8
  const py::object key = e.subject().empty() ? py::object(py::none()) : py::object(decode_utf8(e.subject()));
  const py::object err = py::reinterpret_borrow<py::object>(gguf_error_class())(
      decode_utf8(message, "backslashreplace"), py::str(code_name(e.code)), offset, key);
  PyErr_SetObject(gguf_error_class(), err.ptr());
  throw py::error_already_set();
}

py::object index_arg(const py::handle& o, const std::string& name) {
  // a float has no __index__, but say so before Python's generic message
  if (PyFloat_Check(o.ptr()) || !PyIndex_Check(o.ptr())) {
    throw py::type_error(name + " must be an integer, not " + Py_TYPE(o.ptr())->tp_name);
  }
  PyObject* i = PyNumber_Index(o.ptr());
  if (!i) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(i);
}

std::string int_text(const py::handle& i) {
  // str() refuses ints of more than sys.get_int_max_str_digits() digits (4300 by default)
  PyObject* s = PyObject_Str(i.ptr());
  if (s) return py::reinterpret_steal<py::str>(s).cast<std::string>();
  PyErr_Clear();
  return "an integer of " + py::str(i.attr("bit_length")()).cast<std::string>() + " bits";
}

namespace {

// `i` (a Python int) as a long long, or nullopt when it does not fit.
std::optional<long long> to_long_long(const py::handle& i) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0) return std::nullopt;
  return v;
}

}  // namespace

long long int_arg(const py::handle& o, const std::string& name, long long lo, long long hi) {
  const py::object i = index_arg(o, name);
  const std::optional<long long> v = to_long_long(i);
  if (!v || *v < lo || *v > hi) {
    throw py::value_error(name + " must be from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not " +
                          int_text(i));
  }
  return *v;
}

std::uint64_t uint_arg(const py::handle& o, const std::string& name, std::uint64_t hi) {
  const py::object i = index_arg(o, name);
  const unsigned long long v = PyLong_AsUnsignedLongLong(i.ptr());  // OverflowError when negative or too large
  const bool failed = v == static_cast<unsigned long long>(-1) && PyErr_Occurred();
  if (failed) PyErr_Clear();
  if (failed || v > hi) {
    throw py::value_error(name + " must be from 0 to " + std::to_string(hi) + ", not " + int_text(i));
  }
  return v;
}

unsigned threads_arg(const py::handle& threads) {
  if (threads.is_none()) return std::max(1u, std::thread::hardware_concurrency());
  const py::object i = index_arg(threads, "threads");
  const std::optional<long long> v = to_long_long(i);
  const bool huge = !v && PyObject_RichCompareBool(i.ptr(), py::int_(0).ptr(), Py_GT) == 1;
  if (!huge && (!v || *v < 1)) throw py::value_error("threads must be at least 1, not " + int_text(i));
  // more threads than parts of the work are never started: any larger count means "as many as useful"
  return huge ? 1024u : static_cast<unsigned>(std::min<long long>(*v, 1024));
}

gguf::ggml_type to_type(const py::handle& t) {
  if (py::isinstance<py::str>(t)) {
    const auto name = t.cast<std::string>();
    if (const auto t2 = gguf::type_from_name(name)) return *t2;
    throw py::value_error("unknown ggml type name: '" + name + "'");
  }
  if (!PyFloat_Check(t.ptr()) && PyIndex_Check(t.ptr())) {
    const py::object i = index_arg(t, "a ggml type");
    const std::optional<long long> v = to_long_long(i);
    if (v && *v >= 0 && *v <= 0xFFFFFFFFll) {
      if (gguf::find_type(static_cast<std::uint32_t>(*v))) return static_cast<gguf::ggml_type>(*v);
    }
    throw py::value_error("unknown ggml type id: " + int_text(i));
  }
  throw py::type_error("a ggml type is an int, a pygguf.GGMLType or a name such as 'q4_K'");
}

out_kind to_out_kind(const py::handle& dtype) {
  if (dtype.is_none()) return out_kind::f32;
  if (py::isinstance<py::str>(dtype) && dtype.cast<std::string>() == "bfloat16") return out_kind::bf16;
  const py::dtype d = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  if (d.is(py::dtype::of<float>()) || (d.kind() == 'f' && d.itemsize() == 4)) return out_kind::f32;
  if (d.kind() == 'f' && d.itemsize() == 2) return out_kind::f16;
  throw py::value_error("dtype must be numpy.float32, numpy.float16 or 'bfloat16' (uint16 bits)");
}

py::dtype dtype_of(out_kind k) {
  switch (k) {
    case out_kind::f32: return py::dtype("float32");
    case out_kind::f16: return py::dtype("float16");
    case out_kind::bf16: return py::dtype("uint16");
  }
  return py::dtype("float32");
}

py::array output_array(out_kind kind, const py::object& out, std::vector<py::ssize_t> shape, std::uint64_t n,
                       const void* source, bool copy) {
  if (out.is_none()) return new_array(dtype_of(kind), std::move(shape), source, copy);
  if (!py::isinstance<py::array>(out)) {
    throw py::type_error(std::string("out must be a numpy array, not ") + Py_TYPE(out.ptr())->tp_name);
  }
  py::array a = py::reinterpret_borrow<py::array>(out);
  const py::dtype want = dtype_of(kind), got = a.dtype();
  const auto text = [](const py::dtype& d) { return py::str(py::handle(d)).cast<std::string>(); };
  if (got.kind() != want.kind() || got.itemsize() != want.itemsize()) {
    throw py::value_error("out has dtype " + text(got) + ", not " + text(want));
  }
  if (!got.attr("isnative").cast<bool>()) {
    throw py::value_error("out has dtype '" + got.attr("str").cast<std::string>() +
                          "', not the native byte order the values are written in: give a " + text(want) +
                          " array (and .astype() it afterwards)");
  }
  if (!(a.flags() & py::array::c_style) || !a.writeable()) {
    throw py::value_error("out must be C-contiguous and writeable");
  }
  if (static_cast<std::uint64_t>(a.size()) != n) {
    throw py::value_error("out has " + std::to_string(a.size()) + " elements, not " + std::to_string(n));
  }
  return a;
}

}  // namespace pygguf

PYBIND11_MODULE(_core, m) {
  m.doc() = "pygguf's compiled core; use the pygguf package, which documents the API.";
  m.attr("version") = std::to_string(GGUF_VERSION_MAJOR) + "." + std::to_string(GGUF_VERSION_MINOR) + "." +
                      std::to_string(GGUF_VERSION_PATCH);
  pygguf::bind_source(m);
  pygguf::bind_arrays(m);
  pygguf::bind_writing(m);
  pygguf::bind_tokenizer(m);
  pygguf::bind_chat_template(m);
}
