#ifndef GGUF_PARALLEL_HPP
#define GGUF_PARALLEL_HPP

#include <algorithm>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include "gguf/dequantize.hpp"

// Beside the dequantize it calls, in the same mode namespace (see dequantize.hpp).
GGUF_DEQUANT_BEGIN_NAMESPACE

/// @cond INTERNAL
namespace dequant_impl {
template <dequant_output Out>
inline result<void> dequantize_parallel_to(const tensor_info& t, std::span<Out> out, unsigned n_threads) {
  if (out.size() != t.n_elements) {
    return error{errc::size_mismatch, "output size differs from the element count"}.about(t.name);
  }
  constexpr std::uint64_t min_weights_per_thread = std::uint64_t{1} << 18;  // 1 MiB of output
  const std::uint64_t rows = t.n_rows(), row = t.ne[0];
  if (row == 0 || rows == 0) return {};
  const std::uint64_t by_size = std::max<std::uint64_t>(1, t.n_elements / min_weights_per_thread);
  const auto threads = static_cast<unsigned>(std::min<std::uint64_t>({n_threads, by_size, rows}));
  if (threads <= 1) return dequantize(t, out);
  std::vector<result<void>> results(threads);
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  auto work = [&](unsigned k) {
    const std::uint64_t first = rows * k / threads, last = rows * (k + 1) / threads;
    results[k] = dequantize_rows(t, first, last - first, out.subspan(first * row, (last - first) * row));
  };
  for (unsigned k = 1; k < threads; ++k) workers.emplace_back(work, k);
  work(0);
  for (std::thread& w : workers) w.join();
  for (const result<void>& r : results) {
    if (!r) return r;
  }
  return {};
}
}  // namespace dequant_impl
/// @endcond

/**
 * Dequantize a whole tensor with up to `n_threads` threads, the calling thread included, each converting
 * one contiguous range of rows (`dequantize_rows`). The threads live for the call: no pool, no global
 * state. Worth it for tensors that leave the caches (a single core is bound by its own store
 * bandwidth there); small tensors, or `n_threads <= 1`, run on the calling thread. Same bits as
 * `dequantize`: the split never crosses a block.
 * @param t         a tensor of a parsed file, whose `data` is still alive
 * @param out       `t.n_elements` floats
 * @param n_threads the most threads to use (`std::thread::hardware_concurrency()`, say); fewer run when
 *                  the tensor has fewer rows, or fewer than 2^18 weights (1 MiB of output) per thread
 * @return success, or `size_mismatch` when `out.size() != t.n_elements`
 */
inline result<void> dequantize_parallel(const tensor_info& t, std::span<float> out, unsigned n_threads) {
  return dequant_impl::dequantize_parallel_to<float>(t, out, n_threads);
}
/// `dequantize_parallel` to f16: each weight the float result rounded to nearest even (`to_f16`).
inline result<void> dequantize_parallel(const tensor_info& t, std::span<f16> out, unsigned n_threads) {
  return dequant_impl::dequantize_parallel_to<f16>(t, out, n_threads);
}
/// `dequantize_parallel` to bf16: each weight the float result rounded to nearest even (`to_bf16`).
inline result<void> dequantize_parallel(const tensor_info& t, std::span<bf16> out, unsigned n_threads) {
  return dequant_impl::dequantize_parallel_to<bf16>(t, out, n_threads);
}

GGUF_DEQUANT_END_NAMESPACE

#endif  // GGUF_PARALLEL_HPP
