#ifndef GGUF_QUANTIZE_MODEL_HPP
#define GGUF_QUANTIZE_MODEL_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "gguf/dequantize.hpp"
#include "gguf/format/check_finite.hpp"
#include "gguf/format/file_type.hpp"
#include "gguf/format/owned_value.hpp"
#include "gguf/format/shards.hpp"
#include "gguf/format/writer.hpp"
#include "gguf/model.hpp"
#include "gguf/quantize.hpp"
#include "gguf/quantize_plan.hpp"
#include "gguf/result.hpp"
#include "gguf/save.hpp"

/**
 * @file
 * A whole model quantized as llama.cpp's `llama_model_quantize` does it, streamed: `quantized_writer`
 * gives a `writer` whose tensors are converted while it writes, a window of rows at a time (memory stays
 * about `n_threads * chunk_weights` floats and their converted bytes, whatever the tensor's or the
 * model's size: every tensor converts through one reused workspace), and `quantize_model` plans,
 * checks and saves in one call. For the same model, file type, options and importance matrix, the
 * file's bytes are llama.cpp's.
 */

GGUF_BEGIN_NAMESPACE

/**
 * Where the importance weights of a tensor come from (an imatrix file: `gguf::imatrix::find`): the
 * entry for a tensor name, one weight per column (times the experts of a 3-D expert tensor), or an empty
 * span when there is none. The spans must stay valid while the file is written.
 */
using importance_source = std::function<std::span<const float>(std::string_view tensor)>;

/** How `quantized_writer` and `quantize_model` quantize. */
struct quantize_model_options {
  /// The type choices (llama-quantize's flags); `has_imatrix` is set from `importance` by `quantize_model`.
  quantize_options types;
  /// Importance weights per tensor; empty for none.
  importance_source importance;
  /// Threads converting each window of rows, the writing thread included (the bytes do not depend on it).
  unsigned n_threads = 1;
  /// Weights each thread converts at a time: the window is `n_threads` of these, rounded to whole rows.
  std::size_t chunk_weights = std::size_t{1} << 22;
  /// Keys set last, in order, as llama.cpp's `kv_overrides` (llama-quantize adds `quantize.imatrix.*`).
  std::vector<std::pair<std::string, value>> extra_keys;
};

/// @cond INTERNAL
namespace quantize_impl {

struct tensor_job;

/// The buffers every tensor of one writer converts through, one tensor at a time (the writer produces its
/// tensors in order): the memory stays ~ one window and the threads' floats, whatever the model's size.
struct workspace {
  const tensor_job* owner = nullptr;  // whose rows `window` holds
  std::vector<std::byte> window;      // the converted bytes of whole rows
  std::uint64_t window_at = 0;        // where they start in the owner's data
  std::vector<std::vector<float>> scratch;
};

/// One tensor being converted: the source, the target type, and the shared workspace.
struct tensor_job {
  const tensor_info* t = nullptr;
  ggml_type to = ggml_type::f32;
  std::span<const float> importance;  // empty, or ne[0] (shared by every matrix), or ne[0] * ne[2]
  unsigned n_threads = 1;
  std::size_t chunk_weights = 0;
  std::uint64_t row_bytes = 0;
  std::shared_ptr<workspace> ws;

  /// Converts rows [first, first + n) into `out` with the scratch of thread `k`.
  result<void> convert(std::uint64_t first, std::uint64_t n, std::span<std::byte> out, unsigned k) noexcept {
    const std::uint64_t per_row = t->ne[0], rows_per_matrix = t->ne[1];
    std::vector<float>& f = ws->scratch[k];
    const std::uint64_t step = std::max<std::uint64_t>(1, f.size() / per_row);
    for (std::uint64_t r = first; r < first + n;) {
      // never across a matrix: each has its own slice of the importance weights
      const std::uint64_t matrix = r / rows_per_matrix;
      const std::uint64_t end = std::min({first + n, r + step, (matrix + 1) * rows_per_matrix});
      const std::span<float> x(f.data(), static_cast<std::size_t>((end - r) * per_row));
      GGUF_TRY(dequantize_rows(*t, r, end - r, x));
      std::span<const float> w;
      if (!importance.empty()) {
        w = importance.size() == per_row
                ? importance
                : importance.subspan(static_cast<std::size_t>(matrix * per_row), static_cast<std::size_t>(per_row));
      }
      const auto at = static_cast<std::size_t>((r - first) * row_bytes);
      const auto bytes = static_cast<std::size_t>((end - r) * row_bytes);
      const auto q = quantize(to, x, static_cast<std::size_t>(per_row), out.subspan(at, bytes), w);
      if (!q) return error(q.error()).about(t->name);
      r = end;
    }
    return {};
  }

  /// Converts the window of rows that holds byte `offset` of the tensor's data.
  result<void> fill(std::uint64_t offset) {
    const std::uint64_t rows = t->n_rows(), first = offset / row_bytes;
    const std::uint64_t per_thread = std::max<std::uint64_t>(1, chunk_weights / t->ne[0]);
    const std::uint64_t n = std::min(rows - first, per_thread * n_threads);
    std::vector<std::byte>& window = ws->window;
    ws->owner = nullptr;  // until the rows are whole
    window.resize(static_cast<std::size_t>(n * row_bytes));
    ws->window_at = first * row_bytes;
    const auto threads = static_cast<unsigned>(std::min<std::uint64_t>(n_threads, n));
    if (ws->scratch.size() < threads) ws->scratch.resize(threads);
    for (unsigned k = 0; k < threads; ++k) {
      ws->scratch[k].resize(static_cast<std::size_t>(std::min(per_thread, n) * t->ne[0]));
    }
    std::vector<result<void>> results(threads);
    const auto work = [&](unsigned k) {
      const std::uint64_t a = n * k / threads, b = n * (k + 1) / threads;
      const std::span<std::byte> out(window.data() + a * row_bytes, static_cast<std::size_t>((b - a) * row_bytes));
      results[k] = convert(first + a, b - a, out, k);
    };
    std::vector<std::thread> workers;
    workers.reserve(threads - 1);
    for (unsigned k = 1; k < threads; ++k) workers.emplace_back(work, k);
    work(0);
    for (std::thread& th : workers) th.join();
    for (const result<void>& r : results) GGUF_TRY(r);
    // llama.cpp checks what it made (ggml_validate_row_data) and stops at a NaN or infinite scale.
    if (const result<void> ok = check_finite(to, window); !ok) {
      error e = ok.error();
      e.detail = "the quantized data has a NaN or infinite scale (llama.cpp: quantized data validation failed)";
      e.offset = error::no_offset;
      return e.about(t->name);
    }
    ws->owner = this;
    return {};
  }

  /// The writer's producer: bytes [offset, offset + out.size()) of the converted tensor.
  result<void> produce(std::uint64_t offset, std::span<std::byte> out) {
    while (!out.empty()) {
      const std::vector<std::byte>& window = ws->window;
      if (ws->owner != this || offset < ws->window_at || offset >= ws->window_at + window.size()) {
        GGUF_TRY(fill(offset));
      }
      const auto from = static_cast<std::size_t>(offset - ws->window_at);
      const std::size_t n = std::min(out.size(), window.size() - from);
      std::copy_n(window.data() + from, n, out.data());
      out = out.subspan(n);
      offset += n;
    }
    return {};
  }
};

}  // namespace quantize_impl
/// @endcond

/**
 * The quantized file of `m` as a `writer`, its tensors converted while it writes (`gguf::save` it, or
 * write it to any sink): the metadata of llama.cpp's quantized file (the model's keys, then
 * `general.quantization_version` and `general.file_type` set as ggml's gguf_set_val_u32 sets them, the
 * split keys removed, `opt.extra_keys` set last) and the tensors in `plan`'s output order, each copied or
 * converted (to floats, then to its type, with its importance weights, matrix by matrix) as `plan` says.
 * The converting producers share one workspace: call them one at a time, as the writer does.
 *
 * Everything that can be checked before a byte is written is: the importance weights of every tensor to
 * convert (llama.cpp's rules: an entry of `ne[0] * ne[2]` weights, or of `ne[0]` for one matrix, all
 * finite; token_embd.weight's entry of another length is ignored; a tensor whose type needs weights must
 * have them). What only the conversion finds (a row ggml aborts on; a NaN or infinite scale, which
 * llama.cpp refuses after quantizing) stops the write with an error naming the tensor.
 *
 * @param m     the model (it and the importance spans must outlive the writer)
 * @param ftype the file type (`general.file_type`)
 * @param plan  `plan_quantization`'s plan of `m` for `ftype`
 * @param opt   threads, chunk size, importance weights, extra keys
 * @return the writer; `size_mismatch` for a plan of another size or importance weights of the wrong length,
 *         `not_found` for a tensor that needs importance weights and has none, `out_of_range` for
 *         non-finite importance weights, the writer's errors
 */
inline result<writer> quantized_writer(const model& m, const ftype_info& ftype, std::span<const tensor_plan> plan,
                                       const quantize_model_options& opt) {
  const std::span<const tensor_info> tensors = m.tensors();
  if (plan.size() != tensors.size()) return error{errc::size_mismatch, "the plan needs one entry per tensor"};
  writer w = writer::from_metadata(m.shard(0).info());
  for (const quantize_added_key& k : quantize_added_keys(ftype)) GGUF_TRY(w.set(k.key, value(k.value)));
  for (std::string_view k : {split_keys::no, split_keys::count, split_keys::tensors_count}) w.remove(k);
  for (const auto& [key, v] : opt.extra_keys) GGUF_TRY(w.set(key, v));

  const auto ws = std::make_shared<quantize_impl::workspace>();  // one tensor at a time: one workspace
  std::vector<const tensor_plan*> order(plan.size());
  for (const tensor_plan& p : plan) {
    if (p.output_index >= order.size() || p.index >= tensors.size() || order[p.output_index]) {
      return error{errc::size_mismatch, "the plan is not a permutation of the tensors"};
    }
    order[p.output_index] = &p;
  }
  for (const tensor_plan* p : order) {
    const tensor_info& t = tensors[p->index];
    if (!p->quantize) {
      GGUF_TRY(w.add_tensor(t.name, t.type, t.dims(), t.data, t.byte_order));
      continue;
    }
    auto job = std::make_shared<quantize_impl::tensor_job>();
    job->ws = ws;
    job->t = &t;
    job->to = p->to;
    job->n_threads = std::max(1u, opt.n_threads);
    job->chunk_weights = std::max<std::size_t>(1, opt.chunk_weights);
    job->row_bytes = t.ne[0] / traits(p->to).block_size * traits(p->to).type_size;
    if (opt.importance) {
      const std::span<const float> imp = opt.importance(t.name);
      const std::uint64_t per_matrix = t.ne[0], all = t.ne[0] * t.ne[2];
      // llama.cpp's slices run over ne[2] only: per-expert weights for a 4-D tensor would be misread
      const bool sliced = imp.size() == all && all != per_matrix;
      if (sliced && t.ne[3] != 1) {
        return error{errc::size_mismatch, "per-matrix importance weights for a 4-D tensor"}.about(t.name);
      }
      if (!imp.empty() && imp.size() != all && imp.size() != per_matrix && t.name != "token_embd.weight") {
        return error{errc::size_mismatch, "the importance weights are not one per column (times the experts)"}.about(
            t.name);
      }
      if (imp.size() == all || imp.size() == per_matrix) job->importance = imp;
      for (const float v : job->importance) {
        if (!std::isfinite(v))
          return error{errc::out_of_range, "the importance weights are not all finite"}.about(t.name);
      }
    }
    if (job->importance.empty() && (p->needs_imatrix || kernels::requires_importance(p->to))) {
      return error{errc::not_found, "this type needs importance weights and the imatrix has none for it"}.about(t.name);
    }
    GGUF_TRY(w.add_tensor(t.name, p->to, t.dims(),
                          [job](std::uint64_t offset, std::span<std::byte> out) { return job->produce(offset, out); }));
  }
  return w;
}

/**
 * Quantizes `m` to file type `ftype` into the file `out` as llama.cpp's `llama_model_quantize` does:
 * plans (`plan_quantization`), checks, and saves the `quantized_writer` atomically (`gguf::save`: on any
 * error, `out` is left as it was and no partial file remains).
 * @param m     the model (one file, or a split model through any shard)
 * @param out   the file to write
 * @param ftype the file type
 * @param opt   the options (`opt.types.has_imatrix` is taken from `opt.importance`)
 * @param save  progress, chunk size, flush
 * @return nothing, or the first error: the plan's (a type that needs importance weights, a quantized
 *         tensor without `allow_requantize`), `quantized_writer`'s, the conversion's, the file system's
 */
inline result<void> quantize_model(const model& m, const std::filesystem::path& out, const ftype_info& ftype,
                                   const quantize_model_options& opt, const save_options& save = {}) {
  quantize_options types = opt.types;
  types.has_imatrix = static_cast<bool>(opt.importance);
  std::vector<tensor_plan> plan(m.tensors().size());
  GGUF_TRY(plan_quantization(m.metadata(), m.tensors(), ftype, types, plan));
  auto w = quantized_writer(m, ftype, plan, opt);
  if (!w) return w.error();
  return gguf::save(*w, out, save);
}

GGUF_END_NAMESPACE

#endif  // GGUF_QUANTIZE_MODEL_HPP
