// pygguf._core: the module, and the helpers every part shares (errors, types, numpy views).
#include <cerrno>
#include <cstring>
#include <string>

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
                                          "bad_vocabulary",    "cancelled"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<std::size_t>(gguf::errc::cancelled) + 1);
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

gguf::ggml_type to_type(const py::handle& t) {
  if (py::isinstance<py::str>(t)) {
    const auto name = t.cast<std::string>();
    if (const auto t2 = gguf::type_from_name(name)) return *t2;
    throw py::value_error("unknown ggml type name: '" + name + "'");
  }
  if (py::isinstance<py::int_>(t) || py::hasattr(t, "__index__")) {
    const auto v = py::reinterpret_borrow<py::object>(t).attr("__index__")().cast<long long>();
    if (v >= 0 && v <= 0xFFFFFFFFll) {
      if (gguf::find_type(static_cast<std::uint32_t>(v))) return static_cast<gguf::ggml_type>(v);
    }
    throw py::value_error("unknown ggml type id: " + std::to_string(v));
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

}  // namespace pygguf

PYBIND11_MODULE(_core, m) {
  m.doc() = "pygguf's compiled core; use the pygguf package, which documents the API.";
  m.attr("version") = std::to_string(GGUF_VERSION_MAJOR) + "." + std::to_string(GGUF_VERSION_MINOR) + "." +
                      std::to_string(GGUF_VERSION_PATCH);
  pygguf::bind_source(m);
  pygguf::bind_arrays(m);
  pygguf::bind_writing(m);
  pygguf::bind_tokenizer(m);
}
