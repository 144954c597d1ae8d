// pygguf._core.Source: a model or buffer, its metadata as Python values and zero-copy numpy views, its
// tensors' infos, raw bytes and dequantized values.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <cstring>
#include <thread>

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

std::shared_ptr<source> source::parse(const py::object& buffer, const gguf::parse_options& opt) {
  std::shared_ptr<source> s(new source());
  if (PyObject_GetBuffer(buffer.ptr(), &s->buffer_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  s->has_buffer_ = true;
  std::span<const std::byte> bytes(static_cast<const std::byte*>(s->buffer_.buf),
                                   static_cast<std::size_t>(s->buffer_.len));
  if (!s->buffer_.readonly) {  // it could change under the parsed views: parse a copy
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
  if (has_buffer_) {
    py::gil_scoped_acquire locked;
    PyBuffer_Release(&buffer_);
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

  std::size_t index(py::ssize_t i) const {
    const auto n = static_cast<py::ssize_t>(size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("string array index out of range");
    return static_cast<std::size_t>(i);
  }

  py::object get(py::ssize_t i) const { return decode_utf8(at(index(i))); }

  py::bytes raw(py::ssize_t i) const {
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

unsigned thread_count(const py::object& threads) {
  if (threads.is_none()) return std::max(1u, std::thread::hardware_concurrency());
  const long n = threads.cast<long>();
  if (n < 1) throw py::value_error("threads must be at least 1");
  return static_cast<unsigned>(std::min<long>(n, 1024));
}

// The output array: `out` when given (checked), else a new one of `shape`.
py::array output(out_kind kind, const py::object& out, std::vector<py::ssize_t> shape, std::uint64_t n,
                 const void* source, bool copy) {
  if (out.is_none()) return new_array(dtype_of(kind), std::move(shape), source, copy);
  if (!py::isinstance<py::array>(out)) throw py::type_error("out must be a numpy array");
  py::array a = py::reinterpret_borrow<py::array>(out);
  if (!a.dtype().is(dtype_of(kind)) &&
      !(a.dtype().kind() == dtype_of(kind).kind() && a.dtype().itemsize() == dtype_of(kind).itemsize() &&
        a.dtype().attr("isnative").cast<bool>())) {
    throw py::value_error("out has dtype " + py::str(a.dtype()).cast<std::string>() + ", not " +
                          py::str(dtype_of(kind)).cast<std::string>());
  }
  if (!(a.flags() & py::array::c_style) || !a.writeable())
    throw py::value_error("out must be C-contiguous and writeable");
  if (static_cast<std::uint64_t>(a.size()) != n) {
    throw py::value_error("out has " + std::to_string(a.size()) + " elements, not " + std::to_string(n));
  }
  return a;
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
  const unsigned n_threads = thread_count(threads);
  std::uint64_t first_row = 0, n_rows = t.n_rows();
  std::vector<py::ssize_t> shape;
  if (first.is_none()) {
    for (std::uint32_t d = t.n_dims; d-- > 0;) shape.push_back(static_cast<py::ssize_t>(t.ne[d]));
  } else {
    const auto a = first.cast<long long>(), b = last.cast<long long>();
    const auto rows = static_cast<long long>(t.n_rows());
    if (a < 0 || b < a || b > rows) {
      throw py::index_error("rows(" + std::to_string(a) + ", " + std::to_string(b) + ") of a tensor of " +
                            std::to_string(rows) + " rows");
    }
    first_row = static_cast<std::uint64_t>(a);
    n_rows = static_cast<std::uint64_t>(b - a);
    shape = {static_cast<py::ssize_t>(n_rows), static_cast<py::ssize_t>(t.ne[0])};
  }
  // f32 to f32 from a little-endian file: a copy
  const bool copy = t.type == gguf::ggml_type::f32 && kind == out_kind::f32 && s->byte_order() == std::endian::native;
  const std::byte* from = t.data.data() + (copy ? first_row * t.ne[0] * sizeof(float) : 0);
  py::array a = output(kind, out, std::move(shape), n_rows * t.ne[0], from, copy);
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
  for (const auto& [k, v] : limits) {
    const auto key = k.cast<std::string>();
    if (key == "max_depth") {
      opt.max_depth = v.cast<std::uint32_t>();
    } else if (key == "max_string_length") {
      opt.max_string_length = v.cast<std::uint64_t>();
    } else if (key == "max_array_length") {
      opt.max_array_length = v.cast<std::uint64_t>();
    } else if (key == "max_metadata_bytes") {
      opt.max_metadata_bytes = v.cast<std::uint64_t>();
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
      .def("__getitem__", &string_array::slice, py::arg("slice"))
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
