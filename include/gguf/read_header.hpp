#ifndef GGUF_READ_HEADER_HPP
#define GGUF_READ_HEADER_HPP

#include <algorithm>
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gguf/format/parser.hpp"

/**
 * @file
 * Reading only the header of a GGUF file (header, metadata, tensor infos) from any source of bytes: a
 * pipe, a socket, HTTP range requests, a callback. No mapping; the bytes read are held in a buffer the
 * result owns, and reading stops once the header is complete.
 */

GGUF_BEGIN_NAMESPACE

class header_buffer;
/// Its views point into the object: no `->` on a temporary `result<header_buffer>`.
template <>
inline constexpr bool hands_out_views<header_buffer> = true;

/** How `read_header` reads. */
struct read_header_options {
  /// The first read's size: most headers fit in 2 MiB (all 12 vocabularies of the test corpus but the
  /// two of more than 2 MiB, which take a second read), as \@huggingface/gguf also assumes.
  std::size_t first_read = std::size_t{2} << 20;
  /// After the first read, each read asks for what the parser needs, and at least as much again as is
  /// held, or this much more when that is less: a source that pays per byte (HTTP) keeps what it reads
  /// past the header small.
  std::size_t max_step = SIZE_MAX;
  /// The parser's limits (`max_metadata_bytes` also bounds how much is read).
  parse_options parse;
};

/// A source of bytes for `read_header`: `read(offset, buffer)` returns the bytes it wrote, as a
/// `std::size_t` or a `result<std::size_t>`.
template <class Read>
concept byte_source = std::invocable<Read&, std::uint64_t, std::span<std::byte>>;

template <byte_source Read>
result<header_buffer> read_header(Read&& read, std::uint64_t file_size = unknown_size,
                                  const read_header_options& opt = {});

/**
 * The header of a GGUF file read into a buffer it owns: what `read_header` returns. Offers the parsed
 * `file` (`info()`) and its parts directly; tensor `data` is empty unless the bytes read happened to hold
 * it (`tensor_info::has_data`). Moving it keeps every view valid (the buffer does not move).
 */
class header_buffer : public detail::file_accessors<header_buffer> {
 public:
  /**
   * The bytes read: the start of the file, at least up to the end of the tensor infos. Of what was read
   * past the data offset, the bytes after the last tensor held whole are kept only when they are few
   * (64 KiB at most): a shard's header is not held with the megabytes its first read took.
   */
  std::span<const std::byte> bytes() const& noexcept { return bytes_; }
  std::span<const std::byte> bytes() const&& = delete;  ///< would dangle
  /** The number of reads the source was asked for: what a header costs over a network. */
  std::size_t reads() const noexcept { return reads_; }

 private:
  friend class detail::file_accessors<header_buffer>;
  template <byte_source Read>
  friend result<header_buffer> read_header(Read&& read, std::uint64_t file_size, const read_header_options& opt);
  header_buffer(std::vector<std::byte>&& b, file&& f, std::size_t reads) noexcept
      : bytes_(std::move(b)), file_(std::move(f)), reads_(reads) {}
  std::vector<std::byte> bytes_;  // declared first: destroyed after the views into it
  file file_;
  std::size_t reads_ = 0;
};

/**
 * Reads and parses the header of a GGUF file from a source of bytes, a read at a time: first
 * `first_read` bytes, then, while the parse asks for more (`parse_prefix`), at least what it asks for
 * and at least as much again as is held, or `max_step` more when that is less. Stops as soon as the
 * header is complete: tensor data is not read.
 *
 * @param read      the source: called as `read(offset, buffer)` with consecutive offsets from 0, it
 *                  fills the start of `buffer` with the file's bytes at `offset` and returns how many
 *                  it wrote, as a `result<std::size_t>` or a plain `std::size_t`: fewer than asked only
 *                  at the end of the file (0 there)
 * @param file_size the file's size when known (a `stat`, a Content-Length): then the tensors are also
 *                  checked to lie within the file, as `parse` checks them; else `unknown_size`
 * @param opt       the first read's size and the parser's limits
 * @return the header; `truncated` when the source ends before the header does; the source's error; or
 *         the first rule the bytes break
 */
/// @cond INTERNAL
namespace detail {
/// Bytes read past a header (and past the tensor data they hold whole) that `read_header` keeps rather
/// than copy the header to give them back.
inline constexpr std::uint64_t trim_slack = std::uint64_t{64} << 10;
}  // namespace detail
/// @endcond

template <byte_source Read>
result<header_buffer> read_header(Read&& read, std::uint64_t file_size, const read_header_options& opt) {
  using detail::trim_slack;
  std::vector<std::byte> buf;
  std::size_t have = 0, reads = 0;
  std::uint64_t want = std::max<std::size_t>(opt.first_read, 8);
  bool ended = false;
  for (;;) {
    // Fill the buffer to `want` bytes (or the end of the file).
    if (file_size != unknown_size) want = std::min<std::uint64_t>(want, file_size);
    buf.resize(static_cast<std::size_t>(std::max<std::uint64_t>(want, have)));
    while (have < want && !ended) {
      const std::span<std::byte> into(buf.data() + have, static_cast<std::size_t>(want) - have);
      std::size_t got = 0;
      ++reads;
      if constexpr (std::is_convertible_v<std::invoke_result_t<Read&, std::uint64_t, std::span<std::byte>>,
                                          std::size_t>) {
        got = read(static_cast<std::uint64_t>(have), into);
      } else {
        auto r = read(static_cast<std::uint64_t>(have), into);
        if (!r) return r.error();
        got = *r;
      }
      if (got > into.size()) return error{errc::io_error, "the source returned more bytes than asked for"};
      if (got == 0) ended = true;
      have += got;
    }
    buf.resize(have);
    // A source that ends is not taken for the whole file: it may well be a prefix (`head -c`, one range
    // request), so without a `file_size` tensor bounds stay unchecked.
    auto f = parse_prefix(std::span<const std::byte>(buf), file_size, opt.parse);
    if (f) {
      // A first read of megabytes for a header of kilobytes (a shard's): what no tensor's data fills
      // whole is given back (parsed again from a copy of the rest), so that a set of many shards holds
      // its headers rather than its reads.
      std::uint64_t keep = f->data_offset();
      for (const tensor_info& t : f->tensors()) {
        if (t.has_data() && t.n_bytes != 0)
          keep = std::max<std::uint64_t>(keep, f->data_offset() + t.offset + t.n_bytes);
      }
      if (keep < have && have - keep > trim_slack) {
        std::vector<std::byte> kept(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(keep));
        if (auto g = parse_prefix(std::span<const std::byte>(kept), file_size, opt.parse)) {
          return header_buffer(std::move(kept), std::move(*g), reads);
        }
      }
      // The file points into buf's heap block, which moving the vector keeps.
      return header_buffer(std::move(buf), std::move(*f), reads);
    }
    if (f.error().code != errc::need_more) return f.error();
    if (ended) {
      return error{errc::truncated, f.error().offset, "the source ends before the header does"}.needs(f.error().needed);
    }
    const std::uint64_t step = std::min<std::uint64_t>(have, opt.max_step);
    want = std::max<std::uint64_t>(f.error().needed, have + std::max<std::uint64_t>(step, 1));
  }
}

/**
 * `read_header` from a C stream (standard input, a pipe, an open file), read from where it stands.
 * @param stream    an open stream, in binary mode (on Windows, `_setmode(_fileno(stdin), _O_BINARY)`)
 * @param file_size the file's size when known, else `unknown_size`
 * @param opt       the first read's size and the parser's limits
 * @return as `read_header`; `io_error` with the OS's reason when the stream fails
 */
inline result<header_buffer> read_header(std::FILE* stream, std::uint64_t file_size = unknown_size,
                                         const read_header_options& opt = {}) {
  return read_header(
      [stream](std::uint64_t, std::span<std::byte> out) -> result<std::size_t> {
        const std::size_t n = std::fread(out.data(), 1, out.size(), stream);
        if (n < out.size() && std::ferror(stream)) return error{errc::io_error, "cannot read the stream"}.os(errno);
        return n;
      },
      file_size, opt);
}

GGUF_END_NAMESPACE

#endif  // GGUF_READ_HEADER_HPP
