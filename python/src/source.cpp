// pygguf._core.Source: a model or buffer, its metadata as Python values and zero-copy numpy views, its
// tensors' infos, raw bytes and dequantized values.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core.hpp"

namespace pygguf {

// ---- source ----------------------------------------------------------------------------------------

std::shared_ptr<source> source::open(const std::filesystem::path& path, const gguf::parse_options& opt) {
  gguf::result<gguf::model> m = [&] {
    py::gil_scoped_release unlocked;
    return gguf::open_model(path, opt);
  }();
  if (!m) raise(m.error(), path.string());
  std::shared_ptr<source> s(new source());
  s->model_.emplace(std::move(*m));
  return s;
}

namespace {

// mmap.mmap, looked up once and never released (as the core's GGUFError).
PyObject* mmap_class() {
  static PyObject* cls = py::object(py::module_::import("mmap").attr("mmap")).release().ptr();
  return cls;
}

bool contains(const Py_buffer& outer, const void* start, std::size_t size) {
  const auto* base = static_cast<const std::byte*>(outer.buf);
  const auto* first = static_cast<const std::byte*>(start);
  return first >= base && size <= static_cast<std::size_t>(outer.len) &&
         static_cast<std::size_t>(first - base) <= static_cast<std::size_t>(outer.len) - size;
}

/**
 * Whether `bytes` (the buffer `exporter` exports) lie in memory no one can write while `pin` is held; if so,
 * `pin` is filled with an export of that memory's owner (release it when done). The owners that cannot
 * change: a `bytes` object (immutable by the language), and an `mmap.mmap` made with ACCESS_READ (its
 * pages are mapped read-only, and it cannot be closed or resized while an export of it exists; as for
 * any mapped file, only a process writing the file itself changes it). The chain to the owner is
 * followed through a memoryview's `obj` and a numpy array's `base`. Everything else can change: a
 * bytearray, array.array or writable mmap; a numpy array that owns its memory (its `writeable` flag can
 * be set back); a read-only view of any of these; and unknown exporters, whose promises cannot be
 * checked. The memory found must hold `bytes` too: an exporter could hand out other memory than its
 * owner's (a Python class with `__buffer__`).
 */
bool immutable_owner(const py::handle& exporter, std::span<const std::byte> bytes, Py_buffer& pin) {
  py::object o = py::reinterpret_borrow<py::object>(exporter);
  for (int depth = 0; !o.is_none() && depth < 64; ++depth) {
    PyObject* p = o.ptr();
    if (PyBytes_Check(p) || Py_TYPE(p) == reinterpret_cast<PyTypeObject*>(mmap_class())) {
      if (PyObject_GetBuffer(p, &pin, PyBUF_SIMPLE) != 0) throw py::error_already_set();  // a closed mmap
      if ((PyBytes_Check(p) || pin.readonly) && contains(pin, bytes.data(), bytes.size())) return true;
      PyBuffer_Release(&pin);
      return false;
    }
    if (PyMemoryView_Check(p)) {
      // its exporter, None for memory a C extension wrapped; a released memoryview raises ValueError
      PyObject* obj = PyObject_GetAttrString(p, "obj");
      if (!obj) {
        PyErr_Clear();
        return false;
      }
      o = py::reinterpret_steal<py::object>(obj);
    } else if (py::isinstance<py::array>(o)) {
      PyObject* base = py::detail::array_proxy(p)->base;  // null: numpy's own memory
      if (!base) return false;
      o = py::reinterpret_borrow<py::object>(base);
    } else {
      return false;
    }
  }
  return false;
}

}  // namespace

std::shared_ptr<source> source::parse(const py::object& buffer, const gguf::parse_options& opt) {
  std::shared_ptr<source> s(new source());
  if (PyObject_GetBuffer(buffer.ptr(), &s->buffer_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  s->has_buffer_ = true;
  std::span<const std::byte> bytes(static_cast<const std::byte*>(s->buffer_.buf),
                                   static_cast<std::size_t>(s->buffer_.len));
  s->has_owner_ = immutable_owner(buffer, bytes, s->owner_);
  if (!s->has_owner_) {  // it could change under the parsed views: parse a copy
    s->copy_ = std::make_unique<std::byte[]>(bytes.size() ? bytes.size() : 1);
    if (!bytes.empty()) std::memcpy(s->copy_.get(), bytes.data(), bytes.size());
    bytes = {s->copy_.get(), bytes.size()};
    PyBuffer_Release(&s->buffer_);
    s->has_buffer_ = false;
  }
  gguf::result<gguf::file> f = [&] {
    py::gil_scoped_release unlocked;
    return gguf::parse(bytes, opt);
  }();
  if (!f) raise(f.error());
  s->file_.emplace(std::move(*f));
  return s;
}

source::~source() {
  if (has_buffer_ || has_owner_) {
    py::gil_scoped_acquire locked;
    if (has_buffer_) PyBuffer_Release(&buffer_);
    if (has_owner_) PyBuffer_Release(&owner_);
  }
}

const gguf::metadata_table& source::metadata() const noexcept {
  return model_ ? model_->metadata() : file_->metadata();
}
std::span<const gguf::tensor_info> source::tensors() const noexcept {
  return model_ ? model_->tensors() : file_->tensors();
}
const gguf::tensor_info* source::find_tensor(std::string_view name) const noexcept {
  return model_ ? model_->find_tensor(name) : file_->find_tensor(name);
}
std::uint32_t source::version() const noexcept { return model_ ? model_->shard(0).version() : file_->version(); }
std::uint32_t source::alignment() const noexcept { return model_ ? model_->shard(0).alignment() : file_->alignment(); }
std::endian source::byte_order() const noexcept { return model_ ? model_->shard(0).byte_order() : file_->byte_order(); }
std::size_t source::shard_of(const gguf::tensor_info& t) const noexcept { return model_ ? model_->shard_of(t) : 0; }
std::size_t source::n_shards() const noexcept { return model_ ? model_->n_shards() : 1; }
std::vector<std::filesystem::path> source::paths() const {
  std::vector<std::filesystem::path> out;
  if (model_)
    for (std::size_t k = 0; k < model_->n_shards(); ++k) out.push_back(model_->shard_path(k));
  return out;
}
std::span<const std::byte> source::header_bytes() const noexcept {
  return model_ ? model_->shard(0).bytes() : file_->bytes();
}

namespace {

// ---- metadata values --------------------------------------------------------------------------------

// Strings are str, decoded with surrogateescape (decode_utf8): nothing is lost.

// numpy's type code of a numeric GGUF type ('\0' for string and array).
char numpy_code(gguf::value_type t) {
  using vt = gguf::value_type;
  switch (t) {
    case vt::uint8: return 'B';
    case vt::int8: return 'b';
    case vt::uint16: return 'H';
    case vt::int16: return 'h';
    case vt::uint32: return 'I';
    case vt::int32: return 'i';
    case vt::float32: return 'f';
    case vt::boolean: return '?';
    case vt::uint64: return 'Q';
    case vt::int64: return 'q';
    case vt::float64: return 'd';
    default: return '\0';
  }
}

py::dtype numpy_dtype(gguf::value_type t, std::endian order) {
  std::string fmt(1, order == std::endian::big ? '>' : '<');
  fmt += numpy_code(t);
  return py::dtype(fmt);
}

/// A lazy, read-only sequence over an array of strings in the file: an item is decoded when asked for.
class string_array {
 public:
  string_array(source_ptr s, gguf::array_view a) : s_(std::move(s)), a_(a) {}

  std::size_t size() const noexcept { return static_cast<std::size_t>(a_.size()); }

  // Item i's bytes. The first random access walks the array once to index it (iteration never does).
  std::string_view at(std::size_t i) const {
    if (items_.empty() && size() > 0) {
      items_.reserve(size());
      for (std::string_view v : *a_.as<std::string_view>()) items_.push_back(v);
    }
    return items_[i];
  }

  // An index as a list takes it: any integer (negative from the end), IndexError outside the array.
  std::size_t index(const py::handle& o) const {
    if (!PyIndex_Check(o.ptr())) {
      throw py::type_error(std::string("string array indices must be integers or slices, not ") +
                           Py_TYPE(o.ptr())->tp_name);
    }
    py::ssize_t i = PyNumber_AsSsize_t(o.ptr(), PyExc_IndexError);  // "cannot fit 'int' into an index-sized integer"
    if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
    const auto n = static_cast<py::ssize_t>(size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("string array index out of range");
    return static_cast<std::size_t>(i);
  }

  py::object get(const py::object& i) const {
    if (PySlice_Check(i.ptr())) return slice(py::reinterpret_borrow<py::slice>(i));
    return decode_utf8(at(index(i)));
  }

  py::bytes raw(const py::object& i) const {
    const std::string_view v = at(index(i));
    return {v.data(), v.size()};
  }

  py::list slice(const py::slice& sl) const {
    py::ssize_t start = 0, stop = 0, step = 0, len = 0;
    if (!sl.compute(static_cast<py::ssize_t>(size()), &start, &stop, &step, &len)) throw py::error_already_set();
    py::list out(len);
    for (py::ssize_t k = 0; k < len; ++k) {
      PyList_SET_ITEM(out.ptr(), k, decode_utf8(at(static_cast<std::size_t>(start + k * step))).release().ptr());
    }
    return out;
  }

  py::list to_list(bool as_bytes) const {
    py::list out(size());
    std::size_t k = 0;
    for (std::string_view v : *a_.as<std::string_view>()) {
      py::object o = as_bytes ? py::object(py::bytes(v.data(), v.size())) : py::object(decode_utf8(v));
      PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(k++), o.release().ptr());  // steals it
    }
    return out;
  }

  const source_ptr& owner() const noexcept { return s_; }
  const gguf::array_view& array() const noexcept { return a_; }

 private:
  source_ptr s_;
  gguf::array_view a_;
  mutable std::vector<std::string_view> items_;
};

// A metadata value as Python sees it: int, float, bool, str; numeric arrays as read-only numpy views
// over the file (in its byte order); string arrays as string_array; nested arrays as lists.
py::object to_python(const source_ptr& s, const gguf::value_view& v) {
  using vt = gguf::value_type;
  switch (v.type()) {
    case vt::uint8: return py::int_(*v.get<std::uint8_t>());
    case vt::int8: return py::int_(*v.get<std::int8_t>());
    case vt::uint16: return py::int_(*v.get<std::uint16_t>());
    case vt::int16: return py::int_(*v.get<std::int16_t>());
    case vt::uint32: return py::int_(*v.get<std::uint32_t>());
    case vt::int32: return py::int_(*v.get<std::int32_t>());
    case vt::uint64: return py::int_(*v.get<std::uint64_t>());
    case vt::int64: return py::int_(*v.get<std::int64_t>());
    case vt::float32: return py::float_(*v.get<float>());
    case vt::float64: return py::float_(*v.get<double>());
    case vt::boolean: return py::bool_(*v.get<bool>());
    case vt::string: return decode_utf8(*v.get<std::string_view>());
    case vt::array: {
      const gguf::array_view a = *v.get<gguf::array_view>();
      if (a.item_type() == vt::string) return py::cast(string_array(s, a));
      if (a.item_type() == vt::array) {
        py::list out;
        for (const gguf::value_view item : a) out.append(to_python(s, item));
        return out;
      }
      return readonly_view(s, numpy_dtype(a.item_type(), s->byte_order()), {static_cast<py::ssize_t>(a.size())},
                           a.bytes().data());
    }
  }
  return py::none();
}

// A key or tensor name as the file's bytes: a str (encoded back with surrogateescape, as `decode` made
// it: names that are not UTF-8 round-trip) or bytes.
std::string name_bytes(const py::handle& name) {
  if (PyUnicode_Check(name.ptr())) return std::string(encode_utf8(name));
  if (PyBytes_Check(name.ptr())) return std::string(py::reinterpret_borrow<py::bytes>(name));
  throw py::type_error("a key or tensor name is a str or bytes");
}

const gguf::metadata_entry& entry(const source& s, const py::handle& key) {
  const gguf::metadata_entry* e = s.metadata().find(name_bytes(key));
  if (!e) {
    PyErr_SetObject(PyExc_KeyError, key.ptr());
    throw py::error_already_set();
  }
  return *e;
}

// ---- tensors -----------------------------------------------------------------------------------------

const gguf::tensor_info& tensor_at(const source& s, py::ssize_t i) {
  const auto all = s.tensors();
  if (i < 0 || static_cast<std::size_t>(i) >= all.size()) throw py::index_error("tensor index out of range");
  return all[static_cast<std::size_t>(i)];
}

template <class Out>
gguf::result<void> dequantize_into(const gguf::tensor_info& t, std::uint64_t first_row, std::uint64_t n_rows, void* dst,
                                   unsigned threads) {
  const std::span<Out> out(static_cast<Out*>(dst), static_cast<std::size_t>(n_rows * t.ne[0]));
  if (first_row == 0 && n_rows == t.n_rows()) return gguf::dequantize_parallel(t, out, threads);
  return gguf::dequantize_rows(t, first_row, n_rows, out);
}

py::array dequantize_tensor(const source_ptr& s, py::ssize_t i, const py::object& dtype, const py::object& out,
                            const py::object& threads, const py::object& first, const py::object& last) {
  const gguf::tensor_info& t = tensor_at(*s, i);
  const out_kind kind = to_out_kind(dtype);
  const unsigned n_threads = threads_arg(threads);
  std::uint64_t first_row = 0, n_rows = t.n_rows();
  std::vector<py::ssize_t> shape;
  if (first.is_none()) {
    for (std::uint32_t d = t.n_dims; d-- > 0;) shape.push_back(static_cast<py::ssize_t>(t.ne[d]));
  } else {
    // any int is an index, however large: outside 0 <= first <= last <= n_rows it is an IndexError
    const py::object fi = index_arg(first, "first"), la = index_arg(last, "last");
    const py::int_ rows(t.n_rows());
    const auto less = [](const py::object& x, const py::object& y) {
      const int r = PyObject_RichCompareBool(x.ptr(), y.ptr(), Py_LT);
      if (r < 0) throw py::error_already_set();
      return r == 1;
    };
    if (less(fi, py::int_(0)) || less(la, fi) || less(rows, la)) {
      throw py::index_error("rows(" + int_text(fi) + ", " + int_text(la) + ") of a tensor of " +
                            std::to_string(t.n_rows()) + " rows: 0 <= first <= last <= " + std::to_string(t.n_rows()));
    }
    first_row = fi.cast<std::uint64_t>();
    n_rows = la.cast<std::uint64_t>() - first_row;
    shape = {static_cast<py::ssize_t>(n_rows), static_cast<py::ssize_t>(t.ne[0])};
  }
  // f32 to f32 from a little-endian file: a copy
  const bool copy = t.type == gguf::ggml_type::f32 && kind == out_kind::f32 && s->byte_order() == std::endian::native;
  const std::byte* from = t.data.data() + (copy ? first_row * t.ne[0] * sizeof(float) : 0);
  py::array a = output_array(kind, out, std::move(shape), n_rows * t.ne[0], from, copy);
  void* dst = a.mutable_data();
  gguf::result<void> r;
  {
    py::gil_scoped_release unlocked;
    switch (kind) {
      case out_kind::f32: r = dequantize_into<float>(t, first_row, n_rows, dst, n_threads); break;
      case out_kind::f16: r = dequantize_into<gguf::f16>(t, first_row, n_rows, dst, n_threads); break;
      case out_kind::bf16: r = dequantize_into<gguf::bf16>(t, first_row, n_rows, dst, n_threads); break;
    }
  }
  if (!r) raise(r.error());
  return a;
}

py::tuple tensor_tuple(const source& s, const gguf::tensor_info& t) {
  py::tuple shape(t.n_dims);
  for (std::uint32_t d = 0; d < t.n_dims; ++d) shape[d] = py::int_(t.ne[d]);
  return py::make_tuple(decode_utf8(t.name), static_cast<std::uint32_t>(t.type), shape, t.n_elements, t.n_bytes,
                        t.file_offset, t.offset, s.shard_of(t));
}

gguf::parse_options options_from(const py::dict& limits) {
  gguf::parse_options opt;
  constexpr auto u64 = std::numeric_limits<std::uint64_t>::max();
  for (const auto& [k, v] : limits) {
    if (!PyUnicode_Check(k.ptr()))
      throw py::type_error("a parse limit's name is a str, not " + py::repr(k).cast<std::string>());
    const auto key = k.cast<std::string>();
    const std::string name = "limits['" + key + "']";
    if (key == "max_depth") {
      opt.max_depth = static_cast<std::uint32_t>(uint_arg(v, name, std::numeric_limits<std::uint32_t>::max()));
    } else if (key == "max_string_length") {
      opt.max_string_length = uint_arg(v, name, u64);
    } else if (key == "max_array_length") {
      opt.max_array_length = uint_arg(v, name, u64);
    } else if (key == "max_metadata_bytes") {
      opt.max_metadata_bytes = uint_arg(v, name, u64);
    } else {
      throw py::type_error("unknown parse limit: '" + key + "'");
    }
  }
  return opt;
}

}  // namespace

void bind_source(py::module_& m) {
  py::class_<string_array>(m, "StringArray",
                           "A read-only sequence of the strings of a metadata array, decoded as they are read.")
      .def("__len__", &string_array::size)
      .def("__getitem__", &string_array::get, py::arg("index"))
      .def("raw", &string_array::raw, py::arg("index"), "Item `index` as bytes, as stored.")
      .def("tolist", &string_array::to_list, py::arg("as_bytes") = false,
           "Every item, as a list of str (or of bytes with as_bytes=True).");

  using holder = std::shared_ptr<source>;
  py::class_<source, holder>(m, "Source", "A parsed GGUF file, shard set or buffer (see pygguf.open).")
      .def_static(
          "open",
          [](const std::filesystem::path& p, const py::dict& limits) { return source::open(p, options_from(limits)); },
          py::arg("path"), py::arg("limits") = py::dict())
      .def_static(
          "parse", [](const py::object& b, const py::dict& limits) { return source::parse(b, options_from(limits)); },
          py::arg("buffer"), py::arg("limits") = py::dict())
      .def_property_readonly("version", &source::version)
      .def_property_readonly("alignment", &source::alignment)
      .def_property_readonly("byte_order",
                             [](const source& s) { return s.byte_order() == std::endian::big ? "big" : "little"; })
      .def_property_readonly("n_shards", &source::n_shards)
      .def_property_readonly("paths", &source::paths)
      .def("keys",
           [](const source& s) {
             py::list out;
             for (const gguf::metadata_entry& e : s.metadata()) out.append(decode_utf8(e.key));
             return out;
           })
      .def("__len__", [](const source& s) { return s.metadata().size(); })
      .def("contains", [](const source& s, const py::object& k) { return s.metadata().contains(name_bytes(k)); })
      .def("value", [](const holder& s, const py::object& k) { return to_python(s, entry(*s, k).value); })
      .def("value_type",
           [](const source& s, const py::object& k) { return static_cast<int>(entry(s, k).value.type()); })
      .def("item_type",
           [](const source& s, const py::object& k) -> py::object {
             const gguf::value_view& v = entry(s, k).value;
             if (!v.is_array()) return py::none();
             return py::int_(static_cast<int>(v.get<gguf::array_view>()->item_type()));
           })
      .def("entry_offset", [](const source& s, const py::object& k) { return entry(s, k).offset; })
      .def("header_view",
           [](const holder& s) {
             const auto b = s->header_bytes();
             return readonly_view(s, py::dtype("uint8"), {static_cast<py::ssize_t>(b.size())}, b.data());
           })
      .def("tensor_count", [](const source& s) { return s.tensors().size(); })
      .def("tensor", [](const source& s, py::ssize_t i) { return tensor_tuple(s, tensor_at(s, i)); })
      .def("tensor_index",
           [](const source& s, const py::object& name) -> py::ssize_t {
             const gguf::tensor_info* t = s.find_tensor(name_bytes(name));
             return t ? static_cast<py::ssize_t>(t - s.tensors().data()) : -1;
           })
      .def("raw",
           [](const holder& s, py::ssize_t i) {
             const gguf::tensor_info& t = tensor_at(*s, i);
             return readonly_view(s, py::dtype("uint8"), {static_cast<py::ssize_t>(t.data.size())}, t.data.data());
           })
      .def("dequantize", &dequantize_tensor, py::arg("index"), py::arg("dtype") = py::none(),
           py::arg("out") = py::none(), py::arg("threads") = py::none(), py::arg("first_row") = py::none(),
           py::arg("last_row") = py::none());
}

}  // namespace pygguf
