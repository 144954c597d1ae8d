#ifndef GGUF_IMATRIX_HPP
#define GGUF_IMATRIX_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/detail/endian.hpp"
#include "gguf/format/parser.hpp"
#include "gguf/platform/mapped_file.hpp"
#include "gguf/result.hpp"

/**
 * @file
 * Importance matrices as llama.cpp's `llama-imatrix` writes them, read into the weights its
 * `llama-quantize` hands to `llama_model_quantize`: per tensor, one float per column (times the
 * experts of a 3-D expert tensor), ready for `gguf::quantize`'s `importance` and
 * `quantize_model_options::importance`. Both formats:
 *
 * - GGUF (`general.type` = "imatrix"): keys `imatrix.datasets` (strings), `imatrix.chunk_count` and
 *   `imatrix.chunk_size` (uint32), and per tensor `<name>.in_sum2` (f32, `[n_per_row, n_mat]`, the
 *   summed squared activations) and `<name>.counts` (f32, `[1, n_mat]`, how many were summed). The
 *   weight is `in_sum2 / count`, matrix by matrix; a matrix that never got a count (0) gets weights 1.
 * - Legacy binary (`.dat`, little-endian): int32 entry count (at least 1); per entry int32 name length,
 *   the name, int32 `ncall`, int32 value count (at least 1), the floats (averages times `ncall`), which
 *   are divided by `ncall` when it is positive; then, optionally, int32 chunk count, int32 dataset name
 *   length and the name. A name given twice keeps its last values.
 *
 * As llama-quantize: a file that begins "GGUF" is read as GGUF, anything else as legacy.
 */

GGUF_BEGIN_NAMESPACE

/**
 * An importance matrix: entries sorted by name, each a run of floats in one buffer. Owns its data (a
 * file's worth of floats; loading allocates, using does not).
 */
class imatrix {
 public:
  /** The file format an importance matrix was read from. */
  enum class file_format : std::uint8_t {
    gguf,    ///< GGUF with `*.in_sum2` / `*.counts` tensors
    legacy,  ///< llama-imatrix's original binary `.dat`
  };

  /** One tensor's weights. */
  struct entry {
    std::string name;         ///< the tensor's name
    std::size_t offset = 0;   ///< where its floats start in the buffer
    std::size_t size = 0;     ///< how many: columns times matrices
    std::uint64_t n_mat = 1;  ///< matrices (experts): `size / n_mat` columns each
  };

  /** An empty matrix (no entries). */
  imatrix() = default;

  /**
   * The weights of a tensor.
   * @param tensor the tensor's name
   * @return its floats (valid while this object lives and is not modified), or an empty span
   */
  std::span<const float> find(std::string_view tensor) const noexcept {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), tensor,
                                     [](const entry& e, std::string_view n) { return e.name < n; });
    if (it == entries_.end() || it->name != tensor) return {};
    return values(*it);
  }
  /** Every entry, sorted by name. */
  std::span<const entry> entries() const noexcept { return entries_; }
  /** The floats of an entry of `entries()`. */
  std::span<const float> values(const entry& e) const noexcept { return {values_.data() + e.offset, e.size}; }
  /** The datasets it was computed on (GGUF: every one; legacy: the one name, when the file has it). */
  std::span<const std::string> datasets() const noexcept { return datasets_; }
  /** The chunks it was computed on (`imatrix.chunk_count`, the legacy file's last call), 0 when unknown. */
  std::int64_t chunk_count() const noexcept { return chunk_count_; }
  /** Tokens per chunk (`imatrix.chunk_size`); 0 for a legacy file. */
  std::uint32_t chunk_size() const noexcept { return chunk_size_; }
  /** The format it was read from. */
  file_format format() const noexcept { return format_; }

  /**
   * Whether every weight is finite: llama.cpp refuses an importance matrix with a NaN or an infinity
   * anywhere ("imatrix contains non-finite value").
   * @return nothing, or `out_of_range` about the first entry with one
   */
  result<void> check_finite() const noexcept {
    for (const entry& e : entries_) {
      for (const float v : values(e)) {
        if (!std::isfinite(v))
          return error{errc::out_of_range, "the importance matrix has a non-finite value"}.about(e.name);
      }
    }
    return {};
  }

 private:
  friend result<imatrix> read_imatrix(std::span<const std::byte> bytes);
  std::vector<entry> entries_;
  std::vector<float> values_;
  std::vector<std::string> datasets_;
  std::int64_t chunk_count_ = 0;
  std::uint32_t chunk_size_ = 0;
  file_format format_ = file_format::gguf;

  /// Sorts the entries by name; a name given twice keeps its last values (legacy files only).
  void finish() {
    // by name, then in file order (the offsets grow with it): the last of equal names is the file's last
    std::sort(entries_.begin(), entries_.end(), [](const entry& a, const entry& b) {
      return a.name < b.name || (a.name == b.name && a.offset < b.offset);
    });
    std::vector<entry> unique;
    unique.reserve(entries_.size());
    for (entry& e : entries_) {
      if (!unique.empty() && unique.back().name == e.name) {
        unique.back() = std::move(e);
      } else {
        unique.push_back(std::move(e));
      }
    }
    entries_ = std::move(unique);
  }

  static result<imatrix> read_gguf(std::span<const std::byte> bytes);
  static result<imatrix> read_legacy(std::span<const std::byte> bytes);
};

inline result<imatrix> imatrix::read_gguf(std::span<const std::byte> bytes) {
  auto f = parse(bytes);
  if (!f) return f.error();
  imatrix m;
  m.format_ = file_format::gguf;
  if (!f->metadata().contains("imatrix.datasets")) {
    return error{errc::not_found,
                 "not an importance matrix: a GGUF file without imatrix.datasets (a model? llama-imatrix writes them)"};
  }
  const auto datasets = f->metadata().get<array_view>("imatrix.datasets");
  if (!datasets) return datasets.error();
  for (const value_view v : *datasets) {
    const auto s = v.get<std::string_view>();
    if (!s) return error{errc::type_mismatch, "imatrix.datasets is not an array of strings"};
    m.datasets_.emplace_back(*s);
  }
  const auto chunks = f->metadata().get<std::uint32_t>("imatrix.chunk_count");
  if (!chunks) return chunks.error();
  const auto chunk_size = f->metadata().get<std::uint32_t>("imatrix.chunk_size");
  if (!chunk_size) return chunk_size.error();
  m.chunk_count_ = static_cast<std::int32_t>(*chunks);  // llama.cpp keeps it in an int
  m.chunk_size_ = *chunk_size;

  constexpr std::string_view sums_suffix = ".in_sum2", counts_suffix = ".counts";
  const auto stem = [](std::string_view name, std::string_view suffix) {
    return name.size() > suffix.size() && name.ends_with(suffix) ? name.substr(0, name.size() - suffix.size())
                                                                 : std::string_view{};
  };
  for (const tensor_info& sums : f->tensors()) {
    const std::string_view name = stem(sums.name, sums_suffix);
    if (name.empty()) continue;
    const tensor_info* counts = f->find_tensor(std::string(name) + std::string(counts_suffix));
    if (!counts) return error{errc::not_found, "in_sum2 without counts"}.about(sums.name);
    if (sums.type != ggml_type::f32 || counts->type != ggml_type::f32) {
      return error{errc::type_mismatch, "in_sum2 and counts must be f32"}.about(sums.name);
    }
    const std::uint64_t ne0 = sums.ne[0], ne1 = sums.ne[1];
    if (sums.ne[2] != 1 || sums.ne[3] != 1 || counts->n_elements != ne1) {
      return error{errc::size_mismatch, "in_sum2 must be [columns, matrices] with one count per matrix"}.about(
          sums.name);
    }
    if (sums.n_elements > (std::uint64_t{1} << 40))
      return error{errc::limit_exceeded, "an entry too large"}.about(sums.name);
    entry e{std::string(name), m.values_.size(), static_cast<std::size_t>(sums.n_elements), ne1};
    m.values_.resize(m.values_.size() + e.size);
    float* out = m.values_.data() + e.offset;
    for (std::uint64_t j = 0; j < ne1; ++j) {
      const auto count = detail::load_le<float>(counts->data.data() + 4 * j);
      for (std::uint64_t i = 0; i < ne0; ++i) {
        // a matrix that never saw input during calibration gets weights 1
        out[j * ne0 + i] = count > 0.0f ? detail::load_le<float>(sums.data.data() + 4 * (j * ne0 + i)) / count : 1.0f;
      }
    }
    m.entries_.push_back(std::move(e));
  }
  // counts without in_sum2
  for (const tensor_info& counts : f->tensors()) {
    const std::string_view name = stem(counts.name, counts_suffix);
    if (!name.empty() && !f->find_tensor(std::string(name) + std::string(sums_suffix))) {
      return error{errc::not_found, "counts without in_sum2"}.about(counts.name);
    }
  }
  if (m.entries_.empty()) return error{errc::not_found, "the importance matrix has no entries"};
  m.finish();
  return m;
}

inline result<imatrix> imatrix::read_legacy(std::span<const std::byte> bytes) {
  imatrix m;
  m.format_ = file_format::legacy;
  std::size_t at = 0;
  const auto i32 = [&](std::int32_t& out) {
    if (bytes.size() - at < 4) return false;
    out = detail::load_le<std::int32_t>(bytes.data() + at);
    at += 4;
    return true;
  };
  std::int32_t n_entries = 0;
  if (!i32(n_entries)) return error{errc::truncated, 0, "no entry count"};
  if (n_entries < 1) return error{errc::out_of_range, 0, "an importance matrix needs at least one entry"};
  for (std::int32_t k = 0; k < n_entries; ++k) {
    const std::size_t entry_at = at;
    std::int32_t len = 0, ncall = 0, nval = 0;
    if (!i32(len)) return error{errc::truncated, entry_at, "an entry's name length is missing"};
    if (len < 0 || static_cast<std::size_t>(len) > bytes.size() - at) {
      return error{errc::truncated, entry_at, "an entry's name runs past the end"};
    }
    std::string_view raw(reinterpret_cast<const char*>(bytes.data() + at), static_cast<std::size_t>(len));
    at += static_cast<std::size_t>(len);
    std::string name(raw.substr(0, raw.find('\0')));  // llama.cpp reads it as a C string
    if (!i32(ncall) || !i32(nval)) return error{errc::truncated, entry_at, "an entry's counts are missing"}.about(name);
    if (nval < 1) return error{errc::out_of_range, entry_at, "an entry needs at least one value"}.about(name);
    if (static_cast<std::size_t>(nval) > (bytes.size() - at) / 4) {
      return error{errc::truncated, entry_at, "an entry's values run past the end"}.about(name);
    }
    entry e{std::move(name), m.values_.size(), static_cast<std::size_t>(nval), 1};
    m.values_.resize(m.values_.size() + e.size);
    float* out = m.values_.data() + e.offset;
    for (std::size_t i = 0; i < e.size; ++i) {
      const auto v = detail::load_le<float>(bytes.data() + at + 4 * i);
      out[i] = ncall > 0 ? v / static_cast<float>(ncall) : v;  // the sums were averages times ncall
    }
    at += 4 * e.size;
    m.entries_.push_back(std::move(e));
  }
  // newer legacy files end with the chunk count and the dataset's name
  if (at < bytes.size()) {
    const std::size_t tail = at;
    std::int32_t last_call = 0, len = 0;
    if (!i32(last_call) || !i32(len)) return error{errc::truncated, tail, "the dataset name is cut off"};
    if (len < 0 || static_cast<std::size_t>(len) > bytes.size() - at) {
      return error{errc::truncated, tail, "the dataset name runs past the end"};
    }
    m.chunk_count_ = last_call;
    m.datasets_.emplace_back(reinterpret_cast<const char*>(bytes.data() + at), static_cast<std::size_t>(len));
  }
  m.finish();
  return m;
}

/**
 * Reads an importance matrix in either format from its bytes (see the file's description).
 * @param bytes the whole file
 * @return the matrix; for GGUF the parser's errors, `not_found` for a missing key, an in_sum2 without
 *         counts (or counts without in_sum2) or no entries at all, `type_mismatch` for tensors that are
 *         not f32, `size_mismatch` for shapes that do not pair; for legacy `truncated` (at the entry's
 *         offset) and `out_of_range` for counts below 1
 */
inline result<imatrix> read_imatrix(std::span<const std::byte> bytes) {
  const bool gguf = bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0;
  return gguf ? imatrix::read_gguf(bytes) : imatrix::read_legacy(bytes);
}

/**
 * Reads an importance matrix file (`read_imatrix` of its mapped bytes; the file is closed on return).
 * @param path the file
 * @return the matrix, or `io_error` and `read_imatrix`'s errors, about the path
 */
inline result<imatrix> load_imatrix(const std::filesystem::path& path) {
  auto f = mapped_file::open(path);
  if (!f) return f.error();
  auto m = read_imatrix(f->bytes());
  if (!m && m.error().subject().empty()) return error(m.error()).about_file(path.string());
  return m;
}

GGUF_END_NAMESPACE

#endif  // GGUF_IMATRIX_HPP
