#ifndef GGUF_COMPARE_HPP
#define GGUF_COMPARE_HPP

#include <algorithm>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <span>
#include <string_view>
#include <vector>

#include "gguf/dequantize.hpp"
#include "gguf/format/tensor_info.hpp"
#include "gguf/format/value.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * True when two metadata values are the same value: the same type (for arrays the same item type and
 * length) and equal items. Compares decoded values, so a big-endian file's value equals a little-endian
 * one's. Floats compare by their bits: NaN equals the same NaN, -0 differs from +0 (what a file holds).
 */
inline bool same_value(const value_view& a, const value_view& b) noexcept {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case value_type::string: return *a.get<std::string_view>() == *b.get<std::string_view>();
    case value_type::array: {
      const array_view x = *a.get<array_view>(), y = *b.get<array_view>();
      if (x.item_type() != y.item_type() || x.size() != y.size()) return false;
      auto i = x.begin(), j = y.begin();
      for (; i != x.end(); ++i, ++j) {
        if (!same_value(*i, *j)) return false;
      }
      return true;
    }
    case value_type::float32:
      return std::bit_cast<std::uint32_t>(*a.get<float>()) == std::bit_cast<std::uint32_t>(*b.get<float>());
    case value_type::float64:
      return std::bit_cast<std::uint64_t>(*a.get<double>()) == std::bit_cast<std::uint64_t>(*b.get<double>());
    case value_type::boolean: return *a.get<bool>() == *b.get<bool>();
    default: break;
  }
  // Integers: compared as the wide type of their signedness.
  const bool is_signed = a.type() == value_type::int8 || a.type() == value_type::int16 ||
                         a.type() == value_type::int32 || a.type() == value_type::int64;
  if (is_signed) return a.as_integer<std::int64_t>().value_or(0) == b.as_integer<std::int64_t>().value_or(1);
  return a.as_integer<std::uint64_t>().value_or(0) == b.as_integer<std::uint64_t>().value_or(1);
}

/** How two tensors of the same name compare. */
struct tensor_comparison {
  bool same_type = false;   ///< the same ggml type
  bool same_shape = false;  ///< the same dimensions
  bool same_bytes = false;  ///< the same type, shape and data bytes (in the same byte order)
  /// When the shapes match (the types may differ): the largest |a - b| over the dequantized elements
  /// (infinity when one is NaN and the other not, or they are infinities of different signs)...
  double max_abs = 0.0;
  double rms = 0.0;             ///< ... and the root of the mean of (a - b)^2
  std::uint64_t differing = 0;  ///< elements whose dequantized values differ (bit for bit)
};

/**
 * Where `compare_tensors` reads a tensor's data, a part at a time: `read(offset, n)` returns the bytes
 * `[offset, offset + n)` of the tensor's data (offsets from its first byte) as a
 * `result<std::span<const std::byte>>`, valid until that source is called again: a mapped file's own
 * bytes, or a buffer filled from a network.
 */
template <class Read>
concept tensor_data_source = std::invocable<Read&, std::uint64_t, std::size_t> &&
    std::convertible_to<std::invoke_result_t<Read&, std::uint64_t, std::size_t>, result<std::span<const std::byte>>>;

/**
 * Compares two tensors whose data is read a part at a time (`tensor_data_source`; a tensor over HTTP):
 * type, shape, bytes; when the shapes match, both dequantized, a bounded number of elements at a time
 * (two buffers of about `chunk_elements` floats, allocated here, whatever the tensors' shape), and the
 * error of `b` against `a` measured (what a re-quantization or an edit did to the weights). Parts whose
 * bytes are the same (same type and byte order) are not dequantized. `read_a` and `read_b` are distinct
 * sources: a part of `a` stays valid while `b`'s is read.
 * @return the comparison; the first error of a source; `size_mismatch` (naming the tensor) for a part of
 *         another size than asked for
 */
template <tensor_data_source ReadA, tensor_data_source ReadB>
result<tensor_comparison> compare_tensors(const tensor_info& a, ReadA&& read_a, const tensor_info& b, ReadB&& read_b,
                                          std::uint64_t chunk_elements = std::uint64_t{1} << 20) {
  tensor_comparison c;
  c.same_type = a.type == b.type;
  c.same_shape = a.n_dims == b.n_dims && a.ne == b.ne;
  if (!c.same_shape) return c;
  const bool byte_comparable = c.same_type && a.byte_order == b.byte_order;
  c.same_bytes = byte_comparable;
  if (a.n_elements == 0) return c;
  const type_traits &ta = a.traits(), &tb = b.traits();
  // Parts of whole blocks of both types (ne[0] is a whole number of each, so the element count too).
  const std::uint64_t step = std::lcm(std::uint64_t{ta.block_size}, std::uint64_t{tb.block_size});
  const std::uint64_t per_chunk = std::max(step, chunk_elements / step * step);
  std::vector<float> x(static_cast<std::size_t>(std::min(a.n_elements, per_chunk)));
  std::vector<float> y(x.size());
  double sum_sq = 0.0;
  for (std::uint64_t first = 0; first < a.n_elements; first += per_chunk) {
    const std::uint64_t n = std::min(per_chunk, a.n_elements - first);
    const std::uint64_t na = n / ta.block_size * ta.type_size, nb = n / tb.block_size * tb.type_size;
    auto pa = read_a(first / ta.block_size * ta.type_size, static_cast<std::size_t>(na));
    if (!pa) return pa.error();
    auto pb = read_b(first / tb.block_size * tb.type_size, static_cast<std::size_t>(nb));
    if (!pb) return pb.error();
    const std::span<const std::byte> ba = *pa, bb = *pb;
    if (ba.size() != na || bb.size() != nb) {
      return error{errc::size_mismatch, "a source gave another number of bytes than asked for"}.about(
          ba.size() != na ? a.name : b.name);
    }
    if (byte_comparable && std::equal(ba.begin(), ba.end(), bb.begin())) continue;  // the same weights
    c.same_bytes = false;
    const std::span<float> xs(x.data(), static_cast<std::size_t>(n)), ys(y.data(), xs.size());
    if (auto r = dequantize(a.type, ba, xs, a.byte_order); !r) return error(r.error()).about(a.name);
    if (auto r = dequantize(b.type, bb, ys, b.byte_order); !r) return error(r.error()).about(b.name);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (std::bit_cast<std::uint32_t>(xs[i]) == std::bit_cast<std::uint32_t>(ys[i])) continue;
      ++c.differing;
      const double d = std::fabs(static_cast<double>(xs[i]) - static_cast<double>(ys[i]));
      const double e = std::isnan(d) ? INFINITY : d;
      c.max_abs = std::max(c.max_abs, e);
      sum_sq += e * e;
    }
  }
  c.rms = std::sqrt(sum_sq / static_cast<double>(a.n_elements));
  return c;
}

/**
 * Compares two tensors whose data is in memory (a mapped model's): `compare_tensors` above, each part a
 * view of `data`.
 * @return the comparison; `out_of_bounds` (naming the tensor) when the shapes match but a tensor's data
 *         was not read (`parse_prefix`)
 */
inline result<tensor_comparison> compare_tensors(const tensor_info& a, const tensor_info& b,
                                                 std::uint64_t chunk_elements = std::uint64_t{1} << 20) {
  if (a.n_dims == b.n_dims && a.ne == b.ne && a.n_elements != 0) {
    for (const tensor_info* t : {&a, &b}) {
      if (!t->has_data())
        return error{errc::out_of_bounds, "tensor data not read (a header-only parse)"}.about(t->name);
    }
  }
  const auto in_memory = [](const tensor_info& t) {
    return [&t](std::uint64_t offset, std::size_t n) -> result<std::span<const std::byte>> {
      return t.data.subspan(static_cast<std::size_t>(offset), n);
    };
  };
  return compare_tensors(a, in_memory(a), b, in_memory(b), chunk_elements);
}

GGUF_END_NAMESPACE

#endif  // GGUF_COMPARE_HPP
