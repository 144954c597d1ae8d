#ifndef GGUF_OPEN_HPP
#define GGUF_OPEN_HPP

#include <utility>

#include "gguf/format/parser.hpp"
#include "gguf/platform/mapped_file.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * A parsed GGUF `file` that owns the read-only mapping its views point into. Moving it is safe: a
 * mapping keeps its address. Everything of `file` is available directly (`g->metadata()` on the
 * result of `gguf::open`).
 */
class mapped_gguf : public file {
 public:
  /** The parsed file (also reachable as `*this`). */
  const file& info() const noexcept { return *this; }
  const mapped_file& mapping() const noexcept { return map_; }

 private:
  friend result<mapped_gguf> open(const char* path, const parse_options& opt);
  mapped_gguf(mapped_file&& m, file&& f) noexcept : file(std::move(f)), map_(std::move(m)) {}
  mapped_file map_;
};

/**
 * Bytes at the start of a file that `open` maps in before parsing: the parser reads every byte of the
 * metadata, and one populate call costs far less than a page fault per 4 KiB (a 100k-token vocabulary
 * spans a thousand pages). Tensor data past this prefix stays lazily mapped.
 */
inline constexpr std::size_t open_prefetch_bytes = std::size_t{16} << 20;

/** Map the file at `path` read-only and parse it. */
inline result<mapped_gguf> open(const char* path, const parse_options& opt = {}) {
  auto m = mapped_file::open(path);
  if (!m) return m.error();
  m->prefetch(0, open_prefetch_bytes);
  auto f = parse(m->bytes(), opt);
  if (!f) return f.error();
  return mapped_gguf(std::move(*m), std::move(*f));
}

GGUF_END_NAMESPACE

#endif  // GGUF_OPEN_HPP
