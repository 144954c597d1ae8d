#ifndef GGUF_OPEN_HPP
#define GGUF_OPEN_HPP

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <memory>
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
class mapped_gguf : public detail::file_accessors<mapped_gguf> {
 public:
  /** The whole mapped file. */
  std::span<const std::byte> bytes() const& noexcept { return file_.bytes(); }
  std::span<const std::byte> bytes() const&& = delete;  ///< would dangle

  /** The mapping, to `mapped_file::prefetch` a tensor before reading it. */
  const mapped_file& mapping() const& noexcept { return map_; }
  const mapped_file& mapping() const&& = delete;  ///< would dangle

 private:
  friend class detail::file_accessors<mapped_gguf>;
  friend result<mapped_gguf> open(const std::filesystem::path& path, const parse_options& opt);
  mapped_gguf(mapped_file&& m, std::unique_ptr<std::byte[]>&& header, file&& f) noexcept
      : map_(std::move(m)), header_(std::move(header)), file_(std::move(f)) {}
  mapped_file map_;                      // declared first: destroyed after the views into it
  std::unique_ptr<std::byte[]> header_;  // a small header, read apart (see `open`); it does not move
  file file_;
};

/// Headers up to this size (every shard but a model's first, most small models) are read with one read
/// into a buffer instead of through the mapping: see `open`.
inline constexpr std::size_t small_header_bytes = std::size_t{64} << 10;

/**
 * Map the file at `path` read-only and parse it. Nothing is read ahead, and the mapping is not touched
 * until tensor data is read: a header that fits in the first `small_header_bytes` is read with one read
 * call into a buffer the result keeps (on Linux the first touch of a mapping costs twice that read:
 * page tables, then a TLB flush at unmap; this is what makes opening a model of many shards cheap); a
 * larger one (a vocabulary) is parsed in place, its pages faulted in as the parse goes.
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
  // A small header in a buffer: 16 KiB first (a shard's header), then what the parse asks for, up to
  // small_header_bytes. The buffer is not zeroed: every byte the parse sees was read.
  std::size_t have = 0, want = m->size() < (std::size_t{16} << 10) ? m->size() : (std::size_t{16} << 10);
  std::unique_ptr<std::byte[]> header;
  while (want <= small_header_bytes) {
    std::unique_ptr<std::byte[]> bigger(new std::byte[want]);
    if (have) std::memcpy(bigger.get(), header.get(), have);
    header = std::move(bigger);
    if (m->copy_out(have, std::span<std::byte>(header.get() + have, want - have)) != want - have) break;
    have = want;
    auto f = parse_prefix(std::span<const std::byte>(header.get(), have), m->size(), opt);
    if (f) {
      detail::file_access::rebase(*f, m->bytes());
      return mapped_gguf(std::move(*m), std::move(header), std::move(*f));
    }
    // An error within the prefix is the whole file's error (the prefix parse is exact).
    if (f.error().code != errc::need_more) return f.error();
    const std::uint64_t twice = 2 * std::uint64_t{have};
    want = static_cast<std::size_t>(f.error().needed > twice ? f.error().needed : twice);
  }
  auto f = parse(m->bytes(), opt);
  if (!f) return f.error();
  return mapped_gguf(std::move(*m), nullptr, std::move(*f));
}

GGUF_END_NAMESPACE

#endif  // GGUF_OPEN_HPP
