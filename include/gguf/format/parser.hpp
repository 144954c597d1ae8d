#ifndef GGUF_FORMAT_PARSER_HPP
#define GGUF_FORMAT_PARSER_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gguf/format/byte_reader.hpp"
#include "gguf/format/file.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/// The size to give `parse_prefix` for a file whose size is not known (a pipe, a stream).
inline constexpr std::uint64_t unknown_size = ~std::uint64_t{0};

namespace detail {

/// `a + b`, or UINT64_MAX when it overflows.
constexpr std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) noexcept {
  return a + b < a ? ~std::uint64_t{0} : a + b;
}
/// `a * b`, or UINT64_MAX when it overflows.
constexpr std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) noexcept {
  return b != 0 && a > ~std::uint64_t{0} / b ? ~std::uint64_t{0} : a * b;
}

/**
 * The error for a field at `at` that needs the input to be `end` bytes long, when fewer are given: past
 * `max_metadata_bytes` a limit, past the file's size a truncation, else (a prefix of a longer file) a
 * request for more bytes.
 */
GGUF_COLD inline error short_read(std::uint64_t at, std::uint64_t end, std::uint64_t file_size,
                                  const parse_options& opt, const char* what) noexcept {
  if (end > opt.max_metadata_bytes && file_size > opt.max_metadata_bytes) {
    return error{errc::limit_exceeded, at, "header and metadata exceed max_metadata_bytes"};
  }
  if (end > file_size) return error{errc::truncated, at, what}.needs(end);
  return error{errc::need_more, at, what}.needs(end);
}

/**
 * The GGUF reader: header, metadata and tensor infos, checked against everything a hostile file can
 * get wrong. The byte order and the count width (v1 stores counts, lengths and dimensions as uint32; v2
 * and v3 as uint64) are run-time flags: one parser is compiled, not four. Only the hot loop, the walk
 * over an array of strings (every vocabulary), is compiled per byte order and width (`walk_strings`).
 *
 * It reads the first bytes of a file of `file_size` bytes (all of them for `parse`; a prefix for
 * `parse_prefix`, where the size may be `unknown_size`). A field that does not fit in the bytes given is
 * a `short_read`: the parse stops there, and says how long the input must be for it to fit. Every other
 * rule depends only on bytes before the failing field, so a prefix that holds the whole header gives
 * exactly the result of the whole file.
 */
class parser {
 public:
  // The cursor sees only the first max_metadata_bytes: a field that crosses that limit fails as a limit.
  parser(std::span<const std::byte> bytes, std::uint64_t file_size, const parse_options& opt, std::uint32_t version,
         std::endian order) noexcept
      : r_(bytes.first(bytes.size() < opt.max_metadata_bytes ? bytes.size()
                                                             : static_cast<std::size_t>(opt.max_metadata_bytes)),
           8),
        opt_(opt),
        bytes_(bytes),
        file_size_(file_size),
        version_(version),
        order_(order),
        count_size_(version == 1 ? 4 : 8),
        max_depth_(opt.max_depth < 1024 ? opt.max_depth : 1024) {
    w_.swap = order != std::endian::native;
    w_.narrow = count_size_ == 4;
  }

  result<file> run() {
    file f;
    f.bytes_ = bytes_;
    f.version_ = version_;
    f.byte_order_ = order_;

    // Header counts. Each kv and tensor info takes a minimum number of bytes, so a count the bytes
    // cannot hold is refused (or more bytes asked for) before anything is reserved for it.
    std::uint64_t n_tensors = 0, n_kv = 0;
    if (!read_count(n_tensors, "header ends before the tensor count")) return err_;
    if (!read_count(n_kv, "header ends before the metadata count")) return err_;
    const std::uint64_t min_kv = count_size_ + 4 + 1;          // key length, type, u8 value
    const std::uint64_t min_tensor = count_size_ + 4 + 4 + 8;  // name len, n_dims, type, offset
    const std::uint64_t least = add_sat(mul_sat(n_kv, min_kv), mul_sat(n_tensors, min_tensor));
    if (least > r_.remaining()) {
      return short_of(8, add_sat(r_.position(), least), "tensor or metadata count exceeds what the file can hold");
    }

    // Metadata.
    f.metadata_.reserve(static_cast<std::size_t>(n_kv));
    for (std::uint64_t i = 0; i < n_kv; ++i) {
      metadata_entry e;
      e.offset = r_.position();
      if (!read_string(e.key)) return err_;
      if (e.key.empty()) return error{errc::empty_key, e.offset, "metadata key is empty"};
      std::uint32_t type = 0;
      const std::size_t type_at = r_.position();
      if (!read(type, "file ends before a value type")) return err_.about(e.key);
      if (!read_value(type, type_at, 0, e.value)) return err_.about(e.key);
      f.metadata_.push_back(e);
    }
    if (const metadata_entry* dup = f.metadata_.build_index()) {
      return error{errc::duplicate_key, dup->offset, "metadata key appears twice"}.about(dup->key);
    }
    if (const metadata_entry* a = f.metadata_.find("general.alignment")) {
      auto v = a->value.get<std::uint32_t>();
      if (!v) return error{errc::bad_alignment, a->offset, "general.alignment must be a uint32"};
      if (*v == 0 || (*v & (*v - 1)) != 0) {
        return error{errc::bad_alignment, a->offset, "general.alignment must be a non-zero power of two"};
      }
      f.alignment_ = *v;
    }

    // Tensor infos.
    f.tensors_.reserve(static_cast<std::size_t>(n_tensors));
    std::vector<std::uint64_t> info_at;                        // where each info starts, for error offsets found later
    info_at.reserve(static_cast<std::size_t>(n_tensors) + 1);  // and the end of the last
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
      info_at.push_back(r_.position());
      tensor_info t;
      if (!read_tensor_info(t, f.alignment_)) return err_.about(t.name);
      f.tensors_.push_back(t);
    }

    // Errors about a tensor's place point at its offset field, the last 8 bytes of its info.
    const std::uint64_t infos_end = r_.position();
    info_at.push_back(infos_end);
    const auto offset_field = [&](std::size_t i) { return info_at[i + 1] - 8; };

    // Data section: aligned after the infos when there are tensors (ggml leaves a tensorless file
    // unpadded). Only its place is part of the header: a prefix need not reach it.
    std::uint64_t data = infos_end;
    if (n_tensors > 0) data = (data + f.alignment_ - 1) / f.alignment_ * f.alignment_;
    if (data > file_size_) {
      return error{errc::truncated, r_.position(), "file ends before the data section"}.needs(data);
    }
    f.data_offset_ = data;
    for (std::size_t i = 0; i < f.tensors_.size(); ++i) {
      tensor_info& t = f.tensors_[i];
      // Past the end of the file (when its size is known), or of any file (when it is not).
      const std::uint64_t end = add_sat(add_sat(data, t.offset), t.n_bytes);
      if (end > file_size_ || end == ~std::uint64_t{0}) {
        return error{errc::out_of_bounds, offset_field(i), "tensor data extends past the end of the file"}
            .about(t.name)
            .needs(end);
      }
      t.file_offset = data + t.offset;
      t.byte_order = order_;  // a big-endian file holds big-endian tensors (format/byte_order.hpp)
      // The data, when the bytes given hold it (always for a whole file; a prefix may end before).
      if (end <= bytes_.size()) {
        t.data = bytes_.subspan(static_cast<std::size_t>(t.file_offset), static_cast<std::size_t>(t.n_bytes));
      }
    }

    // Names: a sorted index for lookup, which also finds duplicates.
    const std::size_t dup = f.by_name_.build(f.tensors_.size(), [&](std::size_t k) { return f.tensors_[k].name; });
    if (dup != detail::name_index::npos)
      return error{errc::duplicate_tensor, info_at[dup], "tensor name appears twice"}.about(f.tensors_[dup].name);

    // Overlap. Offsets may come in any order and leave gaps (ggml wrongly insists on a packed,
    // ordered layout), but no byte may belong to two tensors. Files written in order skip the sort.
    if (!check_overlap(f.tensors_, offset_field)) return err_;
    return f;
  }

 private:
  GGUF_COLD bool fail(errc c, std::uint64_t at, const char* what, std::string_view subject = {}) noexcept {
    err_ = error{c, at, what}.about(subject);
    return false;
  }

  // A field at `at` that needs the input to be `end` bytes long did not fit.
  GGUF_COLD error short_of(std::uint64_t at, std::uint64_t end, const char* what) noexcept {
    return short_read(at, end, file_size_, opt_, what);
  }
  GGUF_COLD bool fail_short(std::uint64_t at, std::uint64_t end, const char* what) noexcept {
    err_ = short_of(at, end, what);
    return false;
  }

  template <class T>
  bool read(T& out, const char* what) noexcept {
    const std::size_t at = r_.position();
    if (!r_.has(sizeof(T))) return fail_short(at, at + sizeof(T), what);
    out = detail::load<T>(r_.cursor(), w_.swap);
    r_.skip(sizeof(T));
    return true;
  }

  bool read_count(std::uint64_t& n, const char* what) noexcept {
    if (count_size_ == 8) return read(n, what);
    std::uint32_t c = 0;
    if (!read(c, what)) return false;
    n = c;
    return true;
  }

  // A length-prefixed string (key, string value or tensor name) as a view into the bytes.
  bool read_string(std::string_view& s) noexcept {
    const std::size_t at = r_.position();
    std::uint64_t len = 0;
    if (!read_count(len, "file ends before a string length")) return false;
    if (len > opt_.max_string_length) return fail(errc::limit_exceeded, at, "string longer than max_string_length");
    if (!r_.has(len)) return fail_short(at, add_sat(r_.position(), len), "string length exceeds the remaining bytes");
    s = {reinterpret_cast<const char*>(r_.cursor()), static_cast<std::size_t>(len)};
    r_.skip(len);
    return true;
  }

  // One value of type `type` (read at `type_at`) at `depth` arrays deep.
  bool read_value(std::uint32_t type, std::size_t type_at, std::uint32_t depth, value_view& out) noexcept {
    if (type >= value_type_count) return fail(errc::bad_value_type, type_at, "unknown metadata value type");
    const auto t = static_cast<value_type>(type);
    const std::size_t at = r_.position();
    if (const std::size_t fs = fixed_size(t)) {
      if (!r_.has(fs)) return fail_short(at, at + fs, "file ends inside a value");
      if (t == value_type::boolean && std::to_integer<std::uint8_t>(*r_.cursor()) > 1) {
        return fail(errc::bad_bool, at, "bool byte is neither 0 nor 1");
      }
      out = detail::value_access::make(t, value_type::uint8, w_, r_.cursor(), fs, 1);
      r_.skip(fs);
      return true;
    }
    if (t == value_type::string) {
      std::string_view s;
      if (!read_string(s)) return false;
      out = detail::value_access::make(t, value_type::uint8, w_, reinterpret_cast<const std::byte*>(s.data()), s.size(),
                                       1);
      return true;
    }
    return read_array(at, depth + 1, out);
  }

  bool read_array(std::size_t at, std::uint32_t depth, value_view& out) noexcept {
    if (depth > max_depth_) return fail(errc::too_deep, at, "arrays nested deeper than max_depth");
    std::uint32_t item = 0;
    std::uint64_t n = 0;
    if (!read(item, "file ends before an array item type")) return false;
    if (item >= value_type_count) return fail(errc::bad_value_type, at, "unknown array item type");
    if (!read_count(n, "file ends before an array length")) return false;
    if (n > opt_.max_array_length) return fail(errc::limit_exceeded, at + 4, "array longer than max_array_length");
    const auto it = static_cast<value_type>(item);
    const std::size_t begin = r_.position();
    const std::byte* items = r_.cursor();
    const std::uint64_t room = r_.remaining();
    // Every item takes at least `least` bytes: a length the bytes cannot hold stops here.
    const auto too_long = [&](std::uint64_t least) {
      return fail_short(at + 4, add_sat(begin, mul_sat(n, least)), "array length exceeds the remaining bytes");
    };

    if (const std::size_t fs = fixed_size(it)) {
      if (n > room / fs) return too_long(fs);
      if (it == value_type::boolean) {
        for (std::uint64_t i = 0; i < n; ++i) {
          if (std::to_integer<std::uint8_t>(items[i]) > 1)
            return fail(errc::bad_bool, begin + i, "bool byte is neither 0 nor 1");
        }
      }
      r_.skip(n * fs);
    } else if (it == value_type::string) {
      // The hot loop of every vocabulary: 100k+ length-prefixed strings, compiled per byte order and
      // width. Each length is checked against what remains, so a lying length cannot move the cursor
      // past the end.
      if (n > room / count_size_) return too_long(count_size_);
      const string_walk walked = walk(items, items + room, n, opt_.max_string_length);
      const std::uint64_t here = begin + static_cast<std::uint64_t>(walked.end - items);
      switch (walked.stop) {
        case string_walk::done: break;
        case string_walk::no_length: return fail_short(here, here + count_size_, "file ends before a string length");
        case string_walk::too_long: return fail(errc::limit_exceeded, here, "string longer than max_string_length");
        case string_walk::past_end:
          return fail_short(here, add_sat(here + count_size_, walked.length),
                            "string length exceeds the remaining bytes");
      }
      r_.skip(static_cast<std::uint64_t>(walked.end - items));
    } else {  // arrays of arrays: each item is an item type, a count and items
      if (n > room / (4 + count_size_)) return too_long(4 + count_size_);
      for (std::uint64_t i = 0; i < n; ++i) {
        value_view nested;
        if (!read_array(r_.position(), depth + 1, nested)) return false;
      }
    }
    out = detail::value_access::make(value_type::array, it, w_, items, r_.position() - begin, n);
    return true;
  }

  bool read_tensor_info(tensor_info& t, std::uint32_t alignment) noexcept {
    const std::size_t at = r_.position();
    if (!read_string(t.name)) return false;
    // ggml keeps names in char[GGML_MAX_NAME = 64] with the NUL: 63 bytes at most.
    if (t.name.size() >= 64) return fail(errc::bad_tensor_name, at, "tensor name longer than 63 bytes");

    const std::size_t dims_at = r_.position();
    if (!read(t.n_dims, "file ends before n_dims")) return false;
    if (t.n_dims > max_dims) return fail(errc::bad_dimensions, dims_at, "n_dims is greater than 4");
    for (std::uint32_t d = 0; d < t.n_dims; ++d) {
      const std::size_t ne_at = r_.position();
      if (!read_count(t.ne[d], "file ends inside the dimensions")) return false;
      if (t.ne[d] > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return fail(errc::bad_dimensions, ne_at, "negative dimension");
      }
    }
    // ggml's own rule (ne are int64_t there): the element count must stay below INT64_MAX.
    constexpr std::uint64_t imax = std::numeric_limits<std::int64_t>::max();
    const auto& ne = t.ne;
    const bool has_zero = ne[0] == 0 || ne[1] == 0 || ne[2] == 0 || ne[3] == 0;
    if (!has_zero &&
        (imax / ne[1] <= ne[0] || imax / ne[2] <= ne[0] * ne[1] || imax / ne[3] <= ne[0] * ne[1] * ne[2])) {
      return fail(errc::overflow, dims_at, "tensor element count overflows");
    }
    t.n_elements = ne[0] * ne[1] * ne[2] * ne[3];

    const std::size_t type_at = r_.position();
    std::uint32_t type = 0;
    if (!read(type, "file ends before the tensor type")) return false;
    const type_traits* tt = find_type(type);
    if (!tt) return fail(errc::bad_tensor_type, type_at, "unknown or removed tensor type");
    t.type = tt->type;
    if (ne[0] % tt->block_size != 0)
      return fail(errc::bad_row_size, dims_at, "ne[0] is not a multiple of the block size");
    const std::uint64_t blocks = t.n_elements / tt->block_size;
    if (blocks > std::numeric_limits<std::uint64_t>::max() / tt->type_size) {
      return fail(errc::overflow, dims_at, "tensor byte size overflows");
    }
    t.n_bytes = blocks * tt->type_size;

    const std::size_t off_at = r_.position();
    if (!read(t.offset, "file ends before the tensor offset")) return false;
    if (t.offset % alignment != 0)
      return fail(errc::misaligned_offset, off_at, "tensor offset is not a multiple of the alignment");
    return true;
  }

  template <class OffsetField>
  bool check_overlap(const std::vector<tensor_info>& ts, OffsetField offset_field) {
    bool ordered = true;
    for (std::size_t i = 1; i < ts.size() && ordered; ++i) ordered = ts[i - 1].offset <= ts[i].offset;
    std::vector<std::uint32_t> order;
    if (!ordered) {
      order.resize(ts.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
      detail::sort_positions(
          order,
          [](const void* infos, std::uint32_t a, std::uint32_t b) {
            const auto& t = *static_cast<const std::vector<tensor_info>*>(infos);
            return t[a].offset < t[b].offset || (t[a].offset == t[b].offset && a < b);
          },
          &ts);
    }
    auto at = [&](std::size_t k) -> std::size_t { return ordered ? k : order[k]; };
    std::uint64_t end = 0;  // end of the data seen so far (empty tensors occupy no bytes)
    for (std::size_t k = 0; k < ts.size(); ++k) {
      const tensor_info& t = ts[at(k)];
      if (t.n_bytes == 0) continue;
      if (t.offset < end)
        return fail(errc::overlapping_tensors, offset_field(at(k)), "tensor data overlaps another tensor", t.name);
      end = t.offset + t.n_bytes;
    }
    return true;
  }

  // Where a walk over an array of strings stopped, and why.
  struct string_walk {
    enum stop_kind : std::uint8_t { done, no_length, too_long, past_end };
    const std::byte* end;  // done: past the last string; else: the failing string's length field
    stop_kind stop;
    std::uint64_t length;  // past_end: the length read
  };

  template <std::endian Order, class Count>
  static string_walk walk_strings(const std::byte* p, const std::byte* end, std::uint64_t n,
                                  std::uint64_t max_len) noexcept {
    for (std::uint64_t i = 0; i < n; ++i) {
      if (static_cast<std::size_t>(end - p) < sizeof(Count)) return {p, string_walk::no_length, 0};
      const std::uint64_t len = detail::load<Count, Order>(p);
      if (len > max_len) return {p, string_walk::too_long, len};
      if (len > static_cast<std::uint64_t>(end - p) - sizeof(Count)) return {p, string_walk::past_end, len};
      p += sizeof(Count) + len;
    }
    return {p, string_walk::done, 0};
  }

  string_walk walk(const std::byte* p, const std::byte* end, std::uint64_t n, std::uint64_t max_len) const noexcept {
    constexpr auto le = std::endian::little, be = std::endian::big;
    if (order_ == le) {
      return count_size_ == 8 ? walk_strings<le, std::uint64_t>(p, end, n, max_len)
                              : walk_strings<le, std::uint32_t>(p, end, n, max_len);
    }
    return count_size_ == 8 ? walk_strings<be, std::uint64_t>(p, end, n, max_len)
                            : walk_strings<be, std::uint32_t>(p, end, n, max_len);
  }

  // Reads through the parser's own loads (byte order and width are run-time flags); the cursor's own
  // order is unused.
  byte_reader<std::endian::little> r_;
  const parse_options& opt_;
  std::span<const std::byte> bytes_;
  std::uint64_t file_size_;
  std::uint32_t version_;
  std::endian order_;
  std::uint32_t count_size_;  // 4 (v1) or 8 bytes
  std::uint32_t max_depth_;
  detail::wire w_{};
  error err_{};
};

/** Magic and version, then the parser of that byte order and count width. */
inline result<file> parse_any(std::span<const std::byte> bytes, std::uint64_t file_size, const parse_options& opt) {
  if (bytes.size() < 4) return short_read(0, 4, file_size, opt, "file ends before the magic");
  // "GGUF"; or "FUGG", the magic gguf-py's byte-order converter writes to mark a big-endian file.
  const bool fugg = std::memcmp(bytes.data(), "FUGG", 4) == 0;
  if (!fugg && std::memcmp(bytes.data(), "GGUF", 4) != 0) return error{errc::bad_magic, 0, "magic is not \"GGUF\""};
  if (bytes.size() < 8) return short_read(4, 8, file_size, opt, "file ends before the version");
  // With the "GGUF" magic nothing marks a big-endian file but its version word: 3 reads as 0x03000000
  // the wrong way round.
  const auto v = detail::load<std::uint32_t, std::endian::little>(bytes.data() + 4);
  const auto vs = detail::byteswap_unsigned(v);
  if (v >= 1 && v <= 3 && !fugg) return parser(bytes, file_size, opt, v, std::endian::little).run();
  if (vs >= 1 && vs <= 3) return parser(bytes, file_size, opt, vs, std::endian::big).run();
  if (fugg) return error{errc::bad_version, 4, "big-endian magic \"FUGG\" with a version that is not 1, 2 or 3"};
  return error{errc::bad_version, 4, v == 0 ? "version 0" : "version is not 1, 2 or 3"};
}

}  // namespace detail

/**
 * Parse and validate a GGUF file held in memory (a mapping, a buffer, a fuzzer's input). The result
 * holds views into `bytes`, which must outlive it. Allocates O(n_kv + n_tensors), never per array item.
 * @param bytes the whole file, any alignment; little- or big-endian, GGUF version 1, 2 or 3
 * @param opt   limits beyond the bytes themselves
 * @return the file, or the first rule the bytes break (code, byte offset, description)
 */
inline result<file> parse(std::span<const std::byte> bytes, const parse_options& opt = {}) {
  return detail::parse_any(bytes, bytes.size(), opt);
}

/**
 * The same, for bytes given as a pointer and a size.
 * @param data  the first byte; the bytes must outlive the result
 * @param size  the number of bytes
 * @param opt   limits beyond the bytes themselves
 * @return the file, or the first rule the bytes break (code, byte offset, description)
 */
inline result<file> parse(const void* data, std::size_t size, const parse_options& opt = {}) {
  return parse(std::span<const std::byte>(static_cast<const std::byte*>(data), size), opt);
}

/**
 * Parse the header, metadata and tensor infos from the first bytes of a file, without its tensor data:
 * for a file read over HTTP range requests, from a pipe, or through a callback (`gguf::read_header`).
 *
 * Either the prefix holds the whole header, and the result is what `parse` gives for the whole file,
 * except that a tensor whose bytes lie past the prefix has an empty `data` (`tensor_info::has_data()` is
 * false); or it is `errc::need_more` with `error().needed`, the exact length of the shortest prefix
 * with which the parse gets further (every shorter prefix gives this same answer). Read at least that
 * much and call again: reading about twice what you have each time, a header takes a few requests
 * (the shared vocabularies, 0.6 to 4 MiB of header, take one or two from 2 MiB). Never reads a byte
 * past the prefix.
 *
 * @param prefix    the first bytes of the file (any number, up to the whole file)
 * @param file_size the size of the whole file when known (a `stat`, a Content-Length), else
 *                  `unknown_size`. Known, the result equals `parse`'s for the whole file, errors
 *                  included: a field past the end is `truncated`, tensor data past it `out_of_bounds`.
 *                  Unknown, tensor data is only checked to lie within any possible file.
 * @param opt       limits beyond the bytes themselves (`max_metadata_bytes` also bounds what a prefix
 *                  may be asked to grow to)
 * @return the file (views into `prefix`), `need_more`, or the first rule the bytes break
 */
inline result<file> parse_prefix(std::span<const std::byte> prefix, std::uint64_t file_size = unknown_size,
                                 const parse_options& opt = {}) {
  if (file_size < prefix.size()) {
    return error{errc::size_mismatch, "the prefix is longer than the file size given"};
  }
  return detail::parse_any(prefix, file_size, opt);
}

namespace detail {
template <class T>
inline constexpr bool is_std_span = false;
template <class T, std::size_t N>
inline constexpr bool is_std_span<std::span<T, N>> = true;
/// A temporary that owns bytes (a std::vector, a std::array): the views of its parse would dangle. A span
/// is a view, and may be a temporary.
template <class Bytes>
concept owning_bytes = !std::is_lvalue_reference_v<Bytes> && !is_std_span<std::remove_cvref_t<Bytes>> &&
                       std::is_convertible_v<Bytes&, std::span<const std::byte>>;
}  // namespace detail

/**
 * Deleted: parsing a temporary buffer (`parse(read_file(path))`) would hand out views into bytes that die
 * at the end of the statement; keep the buffer in a variable. Views (`std::span`) and lvalues are accepted.
 */
template <class Bytes>
requires(detail::owning_bytes<Bytes>) result<file> parse(Bytes&& temporary, const parse_options& opt = {})
= delete;

/** Deleted for the same reason as `parse` of a temporary. */
template <class Bytes>
requires(detail::owning_bytes<Bytes>) result<file> parse_prefix(Bytes&& temporary,
                                                                std::uint64_t file_size = unknown_size,
                                                                const parse_options& opt = {})
= delete;

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_PARSER_HPP
