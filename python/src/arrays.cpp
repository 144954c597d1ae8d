// pygguf._core: dequantize and quantize raw blocks, and the table of ggml types.
#include <algorithm>
#include <bit>
#include <limits>
#include <vector>

#include "core.hpp"
#include "gguf/kernels/scalar.hpp"  // which types have a quantizer

namespace pygguf {
namespace {

// Runs f(first, last) over [0, n) split in up to `threads` parts of at least `min_part`, the calling
// thread included; the first failure wins.
template <class F>
gguf::result<void> parallel_ranges(std::uint64_t n, unsigned threads, std::uint64_t min_part, F&& f) {
  const auto parts =
      static_cast<unsigned>(std::clamp<std::uint64_t>(n / std::max<std::uint64_t>(min_part, 1), 1, threads));
  std::vector<gguf::result<void>> results(parts);
  std::vector<std::thread> workers;
  auto work = [&](unsigned k) { results[k] = f(n * k / parts, n * (k + 1) / parts); };
  for (unsigned k = 1; k < parts; ++k) workers.emplace_back(work, k);
  work(0);
  for (std::thread& w : workers) w.join();
  for (const auto& r : results)
    if (!r) return r;
  return {};
}

// numpy's shape (ne0 last) of `shape_`, given in ggml's order (ne0 first): None (one dimension), an int
// or an iterable of ints, each from 0 to the largest Py_ssize_t, holding `n` elements.
std::vector<py::ssize_t> shape_of(const py::object& shape_, std::uint64_t n) {
  if (shape_.is_none()) return {static_cast<py::ssize_t>(n)};
  const py::list dims = PyIndex_Check(shape_.ptr()) ? py::list(py::make_tuple(shape_)) : py::list(shape_);
  std::vector<py::ssize_t> shape;
  std::uint64_t count = 1;
  bool overflow = false, zero = false;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const auto d = static_cast<std::uint64_t>(int_arg(dims[k], "shape[" + std::to_string(k) + "]", 0, PY_SSIZE_T_MAX));
    shape.insert(shape.begin(), static_cast<py::ssize_t>(d));
    zero = zero || d == 0;
    if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / d) overflow = true;
    count *= d;
  }
  if (zero) count = 0, overflow = false;
  if (overflow || count != n) {
    // the exact product, however large (a wrapped one could even match)
    const py::object product = py::module_::import("math").attr("prod")(dims);
    throw py::value_error("shape " + py::repr(py::tuple(dims)).cast<std::string>() + " has " + int_text(product) +
                          " elements, the bytes hold " + std::to_string(n));
  }
  return shape;
}

// Refuses a numpy array of multi-byte items in the non-native byte order when the bytes are to be read in
// the native one: a '>f2' array read as little-endian would give wrong values. (A native array with
// byte_order='big' is left alone: its bytes may well be a big-endian file's, read into a typed array.)
void check_order(const py::object& raw, std::endian order) {
  if (!py::isinstance<py::array>(raw) || order != std::endian::native) return;
  const py::dtype d = py::reinterpret_borrow<py::array>(raw).dtype();
  if (d.itemsize() < 2 || d.attr("isnative").cast<bool>()) return;
  throw py::value_error("raw is an array of dtype '" + py::str(d.attr("str")).cast<std::string>() +
                        "' but byte_order is '" + (order == std::endian::big ? "big" : "little") +
                        "': pass byte_order='" + (order == std::endian::big ? "little" : "big") + "'");
}

// pygguf.dequantize(raw, type, shape, dtype, out, threads): `shape` in ggml's order (ne0 first); the
// result in numpy's (ne0 last).
py::array dequantize(const py::object& raw, const py::handle& type_, const py::object& shape_, const py::object& dtype,
                     const py::object& out, const py::object& threads, const std::string& byte_order) {
  const gguf::ggml_type type = to_type(type_);
  const gguf::type_traits& tt = gguf::traits(type);
  const held_buffer in(raw);
  const auto src = in.span();
  if (src.size() % tt.type_size != 0) {
    throw py::value_error(std::to_string(src.size()) + " bytes are not a whole number of " + std::string(tt.name) +
                          " blocks (" + std::to_string(tt.type_size) + " bytes each)");
  }
  const std::uint64_t n = src.size() / tt.type_size * tt.block_size;
  const std::vector<py::ssize_t> shape = shape_of(shape_, n);
  if (byte_order != "little" && byte_order != "big") throw py::value_error("byte_order is 'little' or 'big'");
  const std::endian order = byte_order == "big" ? std::endian::big : std::endian::little;
  check_order(raw, order);
  const out_kind kind = to_out_kind(dtype);
  py::array a = output_array(kind, out, shape, n, src.data(),
                             type == gguf::ggml_type::f32 && kind == out_kind::f32 && order == std::endian::native);
  const std::uint64_t blocks = src.size() / tt.type_size;
  void* dst = a.mutable_data();
  const unsigned n_threads = threads_arg(threads);
  gguf::result<void> r;
  {
    py::gil_scoped_release unlocked;
    r = parallel_ranges(
        blocks, n_threads, (std::uint64_t{1} << 18) / tt.block_size, [&](std::uint64_t b0, std::uint64_t b1) {
          const auto part = src.subspan(static_cast<std::size_t>(b0 * tt.type_size),
                                        static_cast<std::size_t>((b1 - b0) * tt.type_size));
          const auto at = static_cast<std::size_t>(b0 * tt.block_size),
                     count = static_cast<std::size_t>((b1 - b0) * tt.block_size);
          switch (kind) {
            case out_kind::f32:
              return gguf::dequantize(type, part, std::span<float>(static_cast<float*>(dst) + at, count), order);
            case out_kind::f16:
              return gguf::dequantize(type, part, std::span<gguf::f16>(static_cast<gguf::f16*>(dst) + at, count),
                                      order);
            case out_kind::bf16:
              return gguf::dequantize(type, part, std::span<gguf::bf16>(static_cast<gguf::bf16*>(dst) + at, count),
                                      order);
          }
          return gguf::result<void>{};
        });
  }
  if (!r) raise(r.error());
  return a;
}

// pygguf.quantize(array, type, imatrix, threads): rows along the last axis; the result is uint8,
// shaped as the array with its last axis in bytes (as gguf.quants.quantize).
py::array quantize(const py::array& array_, const py::handle& type_, const py::object& imatrix,
                   const py::object& threads) {
  const gguf::ggml_type type = to_type(type_);
  const gguf::type_traits& tt = gguf::traits(type);
  const auto src_array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array_);
  if (!src_array) throw py::type_error("quantize takes an array of numbers");
  if (src_array.ndim() == 0) throw py::value_error("quantize takes an array of at least one dimension");
  const auto n_per_row = static_cast<std::size_t>(src_array.shape(src_array.ndim() - 1));
  const auto n = static_cast<std::size_t>(src_array.size());
  const std::size_t rows = n_per_row ? n / n_per_row : 0;
  std::vector<float> importance;
  if (!imatrix.is_none()) {
    const auto im = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(imatrix);
    if (!im) throw py::type_error("imatrix must be an array of numbers");
    importance.assign(im.data(), im.data() + im.size());
  }
  const std::size_t row_bytes = take(gguf::quantized_size(type, 1, n_per_row));
  std::vector<py::ssize_t> shape(src_array.shape(), src_array.shape() + src_array.ndim());
  shape.back() = static_cast<py::ssize_t>(row_bytes);
  py::array_t<std::uint8_t> out(shape);
  const float* src = src_array.data();
  auto* dst = reinterpret_cast<std::byte*>(out.mutable_data());
  const unsigned n_threads = threads_arg(threads);
  gguf::result<void> r;
  {
    py::gil_scoped_release unlocked;
    r = parallel_ranges(
        rows, n_threads, std::max<std::size_t>(1, (std::size_t{1} << 16) / std::max<std::size_t>(n_per_row, 1)),
        [&](std::uint64_t a, std::uint64_t b) -> gguf::result<void> {
          auto q = gguf::quantize(type, std::span<const float>(src + a * n_per_row, (b - a) * n_per_row), n_per_row,
                                  std::span<std::byte>(dst + a * row_bytes, (b - a) * row_bytes), importance);
          if (!q) return q.error();
          return {};
        });
  }
  if (!r) raise(r.error());
  (void)tt;
  return out;
}

}  // namespace

void bind_arrays(py::module_& m) {
  m.def("dequantize", &dequantize, py::arg("raw"), py::arg("type"), py::arg("shape") = py::none(),
        py::arg("dtype") = py::none(), py::arg("out") = py::none(), py::arg("threads") = py::none(),
        py::arg("byte_order") = "little");
  m.def("quantize", &quantize, py::arg("array"), py::arg("type"), py::arg("imatrix") = py::none(),
        py::arg("threads") = py::none());
  // (id, name, block_size, type_size, quantized, can_quantize) of every ggml type
  py::list types;
  for (const gguf::type_traits& t : gguf::ggml_types) {
    types.append(py::make_tuple(static_cast<std::uint32_t>(t.type), std::string(t.name), t.block_size, t.type_size,
                                t.quantized, gguf::kernels::scalar_quantizer(t.type) != nullptr));
  }
  m.attr("types") = types;
}

}  // namespace pygguf
