#ifndef GGUF_OPEN_HPP
#define GGUF_OPEN_HPP

#include <filesystem>
#include <utility>

#include "gguf/format/parser.hpp"
#include "gguf/platform/mapped_file.hpp"

GGUF_BEGIN_NAMESPACE

class mapped_gguf;
/// Its views point into the object: no `->` on a temporary `result<mapped_gguf>` (declared before any use of
/// that result, which would instantiate the primary template).
template <>
inline constexpr bool hands_out_views<mapped_gguf> = true;

/**
 * A parsed GGUF file together with the read-only mapping its views point into: what `gguf::open`
 * returns. It owns the mapping (moving it is safe: a mapping keeps its address) and offers everything
 * of `file` directly (`g->metadata()`, `g->tensors()`); `info()` is the parsed `file` itself, for
 * functions that take one.
 *
 * It is not a `file`: a `file` copied out of it would point into a mapping it does not own. Every
 * accessor that returns a view is deleted on temporaries (`(*%gguf::open(p)).tensors()` does not
 * compile), so a view can only come from a `mapped_gguf` that is still alive.
 */
class mapped_gguf {
 public:
  /** GGUF format version: 1, 2 or 3. */
  std::uint32_t version() const noexcept { return file_.version(); }
  /** Byte order of the file's fields. */
  std::endian byte_order() const noexcept { return file_.byte_order(); }
  /** `general.alignment`, or 32. */
  std::uint32_t alignment() const noexcept { return file_.alignment(); }
  /** Offset of the data section (see `file::data_offset`). */
  std::uint64_t data_offset() const noexcept { return file_.data_offset(); }

  /** The metadata: key/value pairs in file order, with lookup by key. */
  const metadata_table& metadata() const& noexcept { return file_.metadata(); }
  const metadata_table& metadata() const&& = delete;  ///< would dangle: keep the model in a variable

  /** Tensor infos in file order; their `data` views point into the mapping. */
  std::span<const tensor_info> tensors() const& noexcept { return file_.tensors(); }
  std::span<const tensor_info> tensors() const&& = delete;  ///< would dangle

  /**
   * The tensor with this name.
   * @param name the tensor name, exactly as stored
   * @return the tensor info, or nullptr when there is none
   */
  const tensor_info* find_tensor(std::string_view name) const& noexcept { return file_.find_tensor(name); }
  const tensor_info* find_tensor(std::string_view name) const&& = delete;  ///< would dangle

  /** The whole mapped file. */
  std::span<const std::byte> bytes() const& noexcept { return file_.bytes(); }
  std::span<const std::byte> bytes() const&& = delete;  ///< would dangle

  /** The parsed file, for functions that take a `const file&`; valid while this object lives. */
  const file& info() const& noexcept { return file_; }
  const file& info() const&& = delete;  ///< would dangle

  /** The mapping, to `mapped_file::prefetch` a tensor before reading it. */
  const mapped_file& mapping() const& noexcept { return map_; }
  const mapped_file& mapping() const&& = delete;  ///< would dangle

 private:
  friend result<mapped_gguf> open(const std::filesystem::path& path, const parse_options& opt);
  mapped_gguf(mapped_file&& m, file&& f) noexcept : map_(std::move(m)), file_(std::move(f)) {}
  mapped_file map_;  // declared first: destroyed after the views into it
  file file_;
};

/**
 * Bytes at the start of a file that `open` maps in before parsing: the parser reads every byte of the
 * metadata, and one populate call costs far less than a page fault per 4 KiB (a 100k-token vocabulary
 * spans a thousand pages). Tensor data past this prefix stays lazily mapped.
 */
inline constexpr std::size_t open_prefetch_bytes = std::size_t{16} << 20;

/**
 * Map the file at `path` read-only and parse it. The first `open_prefetch_bytes` are mapped in before
 * parsing; tensor data is read lazily, page by page, when it is first touched.
 * @param path a file name: a `std::filesystem::path` or anything it converts from (`const char*`,
 *             `std::string`, `std::string_view`; wide paths on Windows)
 * @param opt  the parser's limits
 * @return the parsed file with its mapping, or why it could not be opened (`io_error` with the OS's
 *         reason) or was refused (the rule and the byte offset; `explain(path, error)` adds the likely
 *         cause)
 */
inline result<mapped_gguf> open(const std::filesystem::path& path, const parse_options& opt = {}) {
  auto m = mapped_file::open(path);
  if (!m) return m.error();
  m->prefetch(0, open_prefetch_bytes);
  auto f = parse(m->bytes(), opt);
  if (!f) return f.error();
  return mapped_gguf(std::move(*m), std::move(*f));
}

GGUF_END_NAMESPACE

#endif  // GGUF_OPEN_HPP
