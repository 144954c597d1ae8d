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
#include "gguf/detail/ordered_pipeline.hpp"
#include "gguf/format/check_finite.hpp"
#include "gguf/format/owned_value.hpp"
#include "gguf/format/shards.hpp"
#include "gguf/format/writer.hpp"
#include "gguf/imatrix.hpp"
#include "gguf/llama/file_type.hpp"
#include "gguf/llama/quantize_plan.hpp"
#include "gguf/model.hpp"
#include "gguf/quantize.hpp"
#include "gguf/result.hpp"
#include "gguf/save.hpp"

/**
 * @file
 * A whole model quantized as llama.cpp's `llama_model_quantize` does it, streamed: `quantized_writer`
 * gives a `writer` whose tensors are converted while it writes, in units of `chunk_weights` weights that
 * `n_threads` threads make ahead of the writing (memory stays about `n_threads` units of floats and
 * `2 * n_threads` of converted bytes, whatever the tensor's or the model's size), and `quantize_model` plans,
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
  /// Threads converting, the writing thread included (the bytes do not depend on it).
  unsigned n_threads = 1;
  /// Weights a thread converts at a time (a unit of whole rows, at least one, never across tensors):
  /// small enough that the threads finish together, large enough that a unit's hand-over costs nothing.
  std::size_t chunk_weights = std::size_t{1} << 20;
  /// Keys set last, in order, as llama.cpp's `kv_overrides` (llama-quantize adds `quantize.imatrix.*`).
  std::vector<std::pair<std::string, value>> extra_keys;
};

/**
 * Quantizes with an importance matrix as llama-quantize does: its weights for the tensors it has, and
 * the keys llama-quantize writes about it (`quantize.imatrix.file`, `.dataset` (the first one),
 * `.entries_count`, `.chunks_count` when known), appended to `opt.extra_keys`.
 * @param opt       the options to complete; `im` must outlive the quantization
 * @param im        the matrix (`load_imatrix`)
 * @param file_name the name it was given by, written as llama-quantize writes it (cut at 127 bytes)
 * @return nothing; `not_found` for a matrix without entries, and `check_finite`'s error for one holding
 *         a value that is not finite (llama.cpp refuses both, used or not)
 */
inline result<void> use_imatrix(quantize_model_options& opt, const imatrix& im, std::string_view file_name) {
  if (im.entries().empty()) return error{errc::not_found, "the importance matrix has no entries"};
  GGUF_TRY(im.check_finite());
  opt.importance = [&im](std::string_view name) { return im.find(name); };
  const auto text = [](std::string_view s) { return value(std::string(s.substr(0, 127))); };  // kv_overrides' size
  opt.extra_keys.emplace_back("quantize.imatrix.file", text(file_name));
  if (!im.datasets().empty()) opt.extra_keys.emplace_back("quantize.imatrix.dataset", text(im.datasets().front()));
  opt.extra_keys.emplace_back("quantize.imatrix.entries_count", value(static_cast<std::uint32_t>(im.entries().size())));
  if (im.chunk_count() > 0) {
    opt.extra_keys.emplace_back("quantize.imatrix.chunks_count", value(static_cast<std::uint32_t>(im.chunk_count())));
  }
  return {};
}

/// @cond INTERNAL
namespace detail {

/// One tensor to convert: its source, its target type and importance weights, and its units of rows.
struct tensor_job {
  const tensor_info* t = nullptr;
  ggml_type to = ggml_type::f32;
  std::span<const float> importance;  // empty, or ne[0] (shared by every matrix), or ne[0] * ne[2]
  std::uint64_t row_bytes = 0;        // of the converted rows
  std::uint64_t rows_per_unit = 1;
  std::uint64_t first_unit = 0;  // its units are first_unit .. first_unit + ceil(rows / rows_per_unit) - 1
};

/**
 * Every tensor one writer converts, in the file's order, cut into units of whole rows (never across
 * tensors) that a pipeline of threads converts ahead of the writer, across tensor boundaries: while the
 * writer's thread copies and writes one unit, the others are being made (and the writer's thread makes
 * units itself rather than wait). The bytes do not depend on the cut: every row is quantized alone.
 */
class conversion {
 public:
  /// Adds the next tensor to convert (in the file's order); returns its index for `produce`.
  std::size_t add(tensor_job job) {
    job.first_unit = n_units_;
    n_units_ += (job.t->n_rows() + job.rows_per_unit - 1) / job.rows_per_unit;
    jobs_.push_back(job);
    return jobs_.size() - 1;
  }

  /// Starts nothing yet: the workers start with the first unit the writer asks for.
  void prepare(unsigned n_threads) {
    scratch_.resize(n_threads);
    pipeline_ = std::make_unique<detail::ordered_pipeline>(
        n_units_, n_threads, [this](std::uint64_t unit, std::vector<std::byte>& bytes, unsigned thread) {
          return make(unit, bytes, thread);
        });
  }

  /// The writer's producer for job `j`: bytes [offset, offset + out.size()) of the converted tensor.
  result<void> produce(std::size_t j, std::uint64_t offset, std::span<std::byte> out) {
    const tensor_job& job = jobs_[j];
    const std::uint64_t unit_bytes = job.rows_per_unit * job.row_bytes;
    while (!out.empty()) {
      const std::uint64_t local = offset / unit_bytes;
      auto bytes = pipeline_->acquire(job.first_unit + local);
      if (!bytes) return bytes.error();
      const auto from = static_cast<std::size_t>(offset - local * unit_bytes);
      const std::size_t n = std::min(out.size(), bytes->size() - from);
      std::copy_n(bytes->data() + from, n, out.data());
      out = out.subspan(n);
      offset += n;
    }
    return {};
  }

 private:
  // Converts unit `unit` into `bytes` with the scratch floats of `thread`, and checks what it made.
  result<void> make(std::uint64_t unit, std::vector<std::byte>& bytes, unsigned thread) {
    const auto it = std::upper_bound(jobs_.begin(), jobs_.end(), unit,
                                     [](std::uint64_t u, const tensor_job& job) { return u < job.first_unit; });
    const tensor_job& job = *(it - 1);
    const std::uint64_t first = (unit - job.first_unit) * job.rows_per_unit;
    const std::uint64_t n = std::min(job.rows_per_unit, job.t->n_rows() - first);
    bytes.resize(static_cast<std::size_t>(n * job.row_bytes));
    std::vector<float>& f = scratch_[thread];
    f.resize(static_cast<std::size_t>(job.rows_per_unit * job.t->ne[0]));
    GGUF_TRY(convert(job, first, n, bytes, f));
    // llama.cpp checks what it made (ggml_validate_row_data) and stops at a NaN or infinite scale.
    if (const result<void> ok = check_finite(job.to, bytes); !ok) {
      error e = ok.error();
      e.detail = "the quantized data has a NaN or infinite scale (llama.cpp: quantized data validation failed)";
      e.offset = error::no_offset;
      return e.about(job.t->name);
    }
    return {};
  }

  // Converts rows [first, first + n) of the job's tensor into `out`, through the floats `f`.
  static result<void> convert(const tensor_job& job, std::uint64_t first, std::uint64_t n, std::span<std::byte> out,
                              std::span<float> f) {
    const tensor_info& t = *job.t;
    const std::uint64_t per_row = t.ne[0], rows_per_matrix = t.ne[1];
    for (std::uint64_t r = first; r < first + n;) {
      // never across a matrix: each has its own slice of the importance weights
      const std::uint64_t matrix = r / rows_per_matrix;
      const std::uint64_t end = std::min({first + n, r + job.rows_per_unit, (matrix + 1) * rows_per_matrix});
      const std::span<float> x = f.first(static_cast<std::size_t>((end - r) * per_row));
      GGUF_TRY(dequantize_rows(t, r, end - r, x));
      std::span<const float> w;
      if (!job.importance.empty()) {
        w = job.importance.size() == per_row
                ? job.importance
                : job.importance.subspan(static_cast<std::size_t>(matrix * per_row), static_cast<std::size_t>(per_row));
      }
      const auto at = static_cast<std::size_t>((r - first) * job.row_bytes);
      const auto bytes = static_cast<std::size_t>((end - r) * job.row_bytes);
      const auto q = quantize(job.to, x, static_cast<std::size_t>(per_row), out.subspan(at, bytes), w);
      if (!q) return error(q.error()).about(t.name);
      r = end;
    }
    return {};
  }

  std::vector<tensor_job> jobs_;
  std::uint64_t n_units_ = 0;
  std::vector<std::vector<float>> scratch_;             // per thread
  std::unique_ptr<detail::ordered_pipeline> pipeline_;  // last: its workers stop before the rest goes
};

}  // namespace detail
/// @endcond

/**
 * The quantized file of `m` as a `writer`, its tensors converted while it writes (`gguf::save` it, or
 * write it to any sink): the metadata of llama.cpp's quantized file (the model's keys, then
 * `general.quantization_version` and `general.file_type` set as ggml's gguf_set_val_u32 sets them, the
 * split keys removed, `opt.extra_keys` set last) and the tensors in `plan`'s output order, each copied or
 * converted (to floats, then to its type, with its importance weights, matrix by matrix) as `plan` says.
 * The converting producers share one pipeline of threads: call them one at a time, as the writer does
 * (in the file's order is the fast path; any other order gives the same bytes, later).
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

  // one writer, one conversion: its producers are called one at a time, in the file's order when it writes
  const auto conv = std::make_shared<detail::conversion>();
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
    detail::tensor_job job;
    job.t = &t;
    job.to = p->to;
    job.row_bytes = t.ne[0] / traits(p->to).block_size * traits(p->to).type_size;
    job.rows_per_unit =
        std::max<std::uint64_t>(1, std::max<std::size_t>(1, opt.chunk_weights) / std::max<std::uint64_t>(1, t.ne[0]));
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
      if (imp.size() == all || imp.size() == per_matrix) job.importance = imp;
      for (const float v : job.importance) {
        if (!std::isfinite(v))
          return error{errc::out_of_range, "the importance weights are not all finite"}.about(t.name);
      }
    }
    if (job.importance.empty() && (p->needs_imatrix || kernels::requires_importance(p->to))) {
      return error{errc::not_found, "this type needs importance weights and the imatrix has none for it"}.about(t.name);
    }
    const std::size_t j = conv->add(job);
    GGUF_TRY(w.add_tensor(t.name, p->to, t.dims(), [conv, j](std::uint64_t offset, std::span<std::byte> out) {
      return conv->produce(j, offset, out);
    }));
  }
  conv->prepare(std::max(1u, opt.n_threads));
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
 *         tensor without `allow_requantize`), `quantized_writer`'s, the conversion's, the file system's;
 *         `out_of_range` when `out` is the input (one of its shards, by any name)
 */
inline result<void> quantize_model(const model& m, const std::filesystem::path& out, const ftype_info& ftype,
                                   const quantize_model_options& opt, const save_options& save = {}) {
  for (std::size_t k = 0; k < m.n_shards(); ++k) {
    if (same_file(m.shard_path(k), out)) {
      return error{errc::out_of_range, "the output is the input itself: it would be replaced by its own quantization"}
          .about_file(detail::path_utf8(out.filename()));
    }
  }
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
