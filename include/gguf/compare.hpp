#ifndef GGUF_COMPARE_HPP
#define GGUF_COMPARE_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
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
 * Compares two tensors: type, shape, bytes; when the shapes match but the bytes do not, dequantizes both,
 * a bounded number of rows at a time (two buffers of about `chunk_elements` floats, allocated here), and
 * measures the error of `b` against `a` (what a re-quantization or an edit did to the weights).
 * @return the comparison; the error of `dequantize_rows` (a tensor without data: `out_of_bounds`)
 */
inline result<tensor_comparison> compare_tensors(const tensor_info& a, const tensor_info& b,
                                                 std::uint64_t chunk_elements = std::uint64_t{1} << 20) {
  tensor_comparison c;
  c.same_type = a.type == b.type;
  c.same_shape = a.n_dims == b.n_dims && a.ne == b.ne;
  if (!c.same_shape) return c;
  c.same_bytes = c.same_type && a.byte_order == b.byte_order && a.data.size() == b.data.size() && a.has_data() &&
                 b.has_data() && std::equal(a.data.begin(), a.data.end(), b.data.begin());
  if (c.same_bytes || a.n_elements == 0) return c;
  const std::uint64_t row = a.ne[0], rows = a.n_rows();
  const std::uint64_t per_chunk = std::max<std::uint64_t>(1, chunk_elements / std::max<std::uint64_t>(row, 1));
  std::vector<float> x(static_cast<std::size_t>(std::min(rows, per_chunk) * row));
  std::vector<float> y(x.size());
  double sum_sq = 0.0;
  for (std::uint64_t first = 0; first < rows; first += per_chunk) {
    const std::uint64_t n = std::min(per_chunk, rows - first);
    const std::span<float> xs(x.data(), static_cast<std::size_t>(n * row)), ys(y.data(), xs.size());
    GGUF_TRY(dequantize_rows(a, first, n, xs));
    GGUF_TRY(dequantize_rows(b, first, n, ys));
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

GGUF_END_NAMESPACE

#endif  // GGUF_COMPARE_HPP
