#ifndef GGUF_FORMAT_PARSER_HPP
#define GGUF_FORMAT_PARSER_HPP

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ranges>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gguf/format/byte_reader.hpp"
#include "gguf/format/file.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

namespace detail {

/**
 * The GGUF reader: header, metadata and tensor infos, checked against everything a hostile file can
 * get wrong. One instantiation per byte order and count width (v1 stores counts, lengths and
 * dimensions as uint32; v2 and v3 as uint64).
 */
template <std::endian Order, class Count>
class parser {
 public:
  // The cursor sees only the first max_metadata_bytes: a field that crosses that limit fails like a
  // truncated one, and `run` tells the two apart by the size of the whole file.
  parser(std::span<const std::byte> bytes, const parse_options& opt, std::uint32_t version) noexcept
      : r_(bytes.first(static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), opt.max_metadata_bytes))), 8),
        opt_(opt),
        bytes_(bytes),
        version_(version) {
    w_.swap = Order != std::endian::native;
    w_.narrow = sizeof(Count) == 4;
    max_depth_ = std::min<std::uint32_t>(opt.max_depth, 1024);
  }

  result<file> run() {
    result<file> f = parse_all();
    if (!f && f.error().code == errc::truncated && bytes_.size() > r_.size()) {
      return error{errc::limit_exceeded, f.error().offset, "header and metadata exceed max_metadata_bytes"};
    }
    return f;
  }

 private:
  result<file> parse_all() {
    file f;
    f.bytes_ = bytes_;
    f.version_ = version_;
    f.byte_order_ = Order;

    // Header counts. Each kv and tensor info takes a minimum number of bytes, so a count the
    // remaining bytes cannot hold is refused before anything is reserved for it.
    std::uint64_t n_tensors = 0, n_kv = 0;
    if (!read_count(n_tensors)) return error{errc::truncated, r_.position(), "header ends before the tensor count"};
    if (!read_count(n_kv)) return error{errc::truncated, r_.position(), "header ends before the metadata count"};
    constexpr std::uint64_t min_kv = sizeof(Count) + 4 + 1;          // key length, type, u8 value
    constexpr std::uint64_t min_tensor = sizeof(Count) + 4 + 4 + 8;  // name len, n_dims, type, offset
    const std::uint64_t room = r_.remaining();
    if (n_kv > room / min_kv || n_tensors > (room - n_kv * min_kv) / min_tensor) {
      return error{errc::truncated, 8, "tensor or metadata count exceeds what the file can hold"};
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
      if (!r_.read(type)) return error{errc::truncated, type_at, "file ends before a value type"};
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

    // Data section: aligned after the infos when there are tensors (ggml leaves a tensorless file unpadded).
    std::uint64_t data = infos_end;
    if (n_tensors > 0) data = (data + f.alignment_ - 1) / f.alignment_ * f.alignment_;
    if (data > bytes_.size()) return error{errc::truncated, r_.position(), "file ends before the data section"};
    f.data_offset_ = data;
    const std::uint64_t data_size = bytes_.size() - data;
    for (std::size_t i = 0; i < f.tensors_.size(); ++i) {
      tensor_info& t = f.tensors_[i];
      if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
        return error{errc::out_of_bounds, offset_field(i), "tensor data extends past the end of the file"}.about(
            t.name);
      }
      t.file_offset = data + t.offset;
      t.data = bytes_.subspan(static_cast<std::size_t>(t.file_offset), static_cast<std::size_t>(t.n_bytes));
      t.byte_order = Order;  // a big-endian file holds big-endian tensors (format/byte_order.hpp)
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

  bool fail(errc c, std::uint64_t at, const char* what, std::string_view subject = {}) noexcept {
    err_ = error{c, at, what}.about(subject);
    return false;
  }

  bool read_count(std::uint64_t& n) noexcept {
    Count c;
    if (!r_.read(c)) return false;
    n = c;
    return true;
  }

  // A length-prefixed string (key, string value or tensor name) as a view into the bytes.
  bool read_string(std::string_view& s) noexcept {
    const std::size_t at = r_.position();
    std::uint64_t len = 0;
    if (!read_count(len)) return fail(errc::truncated, at, "file ends before a string length");
    if (len > opt_.max_string_length) return fail(errc::limit_exceeded, at, "string longer than max_string_length");
    if (!r_.has(len)) return fail(errc::truncated, at, "string length exceeds the remaining bytes");
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
      if (!r_.has(fs)) return fail(errc::truncated, at, "file ends inside a value");
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
    if (!r_.read(item)) return fail(errc::truncated, at, "file ends before an array item type");
    if (item >= value_type_count) return fail(errc::bad_value_type, at, "unknown array item type");
    if (!read_count(n)) return fail(errc::truncated, at + 4, "file ends before an array length");
    if (n > opt_.max_array_length) return fail(errc::limit_exceeded, at + 4, "array longer than max_array_length");
    const auto it = static_cast<value_type>(item);
    const std::size_t begin = r_.position();
    const std::byte* items = r_.cursor();
    const std::uint64_t room = r_.remaining();

    if (const std::size_t fs = fixed_size(it)) {
      if (n > room / fs) return fail(errc::truncated, at + 4, "array length exceeds the remaining bytes");
      if (it == value_type::boolean) {
        for (std::uint64_t i = 0; i < n; ++i) {
          if (std::to_integer<std::uint8_t>(items[i]) > 1)
            return fail(errc::bad_bool, begin + i, "bool byte is neither 0 nor 1");
        }
      }
      r_.skip(n * fs);
    } else if (it == value_type::string) {
      // The hot loop of every vocabulary: 100k+ length-prefixed strings. Each length is checked
      // against what remains, so a lying length cannot move the cursor past the end.
      if (n > room / sizeof(Count)) return fail(errc::truncated, at + 4, "array length exceeds the remaining bytes");
      const std::byte* p = items;
      const std::byte* const end = items + room;
      const std::uint64_t max_len = opt_.max_string_length;
      for (std::uint64_t i = 0; i < n; ++i) {
        if (static_cast<std::size_t>(end - p) < sizeof(Count)) {
          return fail(errc::truncated, begin + static_cast<std::size_t>(p - items), "file ends before a string length");
        }
        const std::uint64_t len = detail::load<Count, Order>(p);
        if (len > max_len) {
          return fail(errc::limit_exceeded, begin + static_cast<std::size_t>(p - items),
                      "string longer than max_string_length");
        }
        if (len > static_cast<std::uint64_t>(end - p) - sizeof(Count)) {
          return fail(errc::truncated, begin + static_cast<std::size_t>(p - items),
                      "string length exceeds the remaining bytes");
        }
        p += sizeof(Count) + len;
      }
      r_.skip(static_cast<std::uint64_t>(p - items));
    } else {  // arrays of arrays: each item is an item type, a count and items
      if (n > room / (4 + sizeof(Count)))
        return fail(errc::truncated, at + 4, "array length exceeds the remaining bytes");
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
    if (!r_.read(t.n_dims)) return fail(errc::truncated, dims_at, "file ends before n_dims");
    if (t.n_dims > max_dims) return fail(errc::bad_dimensions, dims_at, "n_dims is greater than 4");
    for (std::uint32_t d = 0; d < t.n_dims; ++d) {
      const std::size_t ne_at = r_.position();
      if (!read_count(t.ne[d])) return fail(errc::truncated, ne_at, "file ends inside the dimensions");
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
    if (!r_.read(type)) return fail(errc::truncated, type_at, "file ends before the tensor type");
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
    if (!r_.read(t.offset)) return fail(errc::truncated, off_at, "file ends before the tensor offset");
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
      std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return ts[a].offset < ts[b].offset || (ts[a].offset == ts[b].offset && a < b);
      });
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

  byte_reader<Order> r_;
  const parse_options& opt_;
  std::span<const std::byte> bytes_;
  std::uint32_t version_;
  std::uint32_t max_depth_ = 64;
  detail::wire w_{};
  error err_{};
};

}  // namespace detail

/**
 * Parse and validate a GGUF file held in memory (a mapping, a buffer, a fuzzer's input). The result
 * holds views into `bytes`, which must outlive it. Allocates O(n_kv + n_tensors), never per array item.
 * @param bytes the whole file, any alignment; little- or big-endian, GGUF version 1, 2 or 3
 * @param opt   limits beyond the bytes themselves
 * @return the file, or the first rule the bytes break (code, byte offset, description)
 */
inline result<file> parse(std::span<const std::byte> bytes, const parse_options& opt = {}) {
  if (bytes.size() < 4) return error{errc::truncated, 0, "file ends before the magic"};
  // "GGUF"; or "FUGG", the magic gguf-py's byte-order converter writes to mark a big-endian file.
  const bool fugg = std::memcmp(bytes.data(), "FUGG", 4) == 0;
  if (!fugg && std::memcmp(bytes.data(), "GGUF", 4) != 0) return error{errc::bad_magic, 0, "magic is not \"GGUF\""};
  if (bytes.size() < 8) return error{errc::truncated, 4, "file ends before the version"};
  // With the "GGUF" magic nothing marks a big-endian file but its version word: 3 reads as 0x03000000
  // the wrong way round.
  const auto v = detail::load<std::uint32_t, std::endian::little>(bytes.data() + 4);
  const auto vs = detail::byteswap_unsigned(v);
  if (v >= 1 && v <= 3 && !fugg) {
    if (v == 1) return detail::parser<std::endian::little, std::uint32_t>(bytes, opt, v).run();
    return detail::parser<std::endian::little, std::uint64_t>(bytes, opt, v).run();
  }
  if (vs >= 1 && vs <= 3) {
    if (vs == 1) return detail::parser<std::endian::big, std::uint32_t>(bytes, opt, vs).run();
    return detail::parser<std::endian::big, std::uint64_t>(bytes, opt, vs).run();
  }
  if (fugg) return error{errc::bad_version, 4, "big-endian magic \"FUGG\" with a version that is not 1, 2 or 3"};
  return error{errc::bad_version, 4, v == 0 ? "version 0" : "version is not 1, 2 or 3"};
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
 * Deleted: parsing a temporary buffer (`parse(read_file(path))`) would hand out views into bytes that die
 * at the end of the statement; keep the buffer in a variable. Views (`std::span`) and lvalues are accepted.
 */
template <class Bytes>
requires(std::ranges::contiguous_range<Bytes> && !std::ranges::borrowed_range<Bytes> &&
         !std::is_lvalue_reference_v<Bytes>) result<file> parse(Bytes&& temporary, const parse_options& opt = {})
= delete;

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_PARSER_HPP
