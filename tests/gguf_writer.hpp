// Test-side GGUF writer: builds well-formed files and, field by field, every malformed one the
// validation tests need. It writes what it is told, including lies (wrong counts, bad types).
#ifndef GGUF_TESTS_GGUF_WRITER_HPP
#define GGUF_TESTS_GGUF_WRITER_HPP

#include <gguf/format/parser.hpp>
#include <gguf/format/value.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace test {

using bytes = std::vector<std::byte>;

/** Appends fields in a file's byte order and count width (GGUF v1: 32-bit counts and lengths). */
class byte_writer {
 public:
  explicit byte_writer(bytes& out, std::uint32_t version = 3, bool big_endian = false)
      : out_(out), narrow_(version == 1), big_(big_endian) {}

  template <class T>
  byte_writer& put(T v) {
    static_assert(std::is_arithmetic_v<T>);
    unsigned char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    if ((std::endian::native == std::endian::big) != big_) {
      for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
    }
    for (unsigned char c : b) out_.push_back(std::byte{c});
    return *this;
  }
  byte_writer& u8(std::uint8_t v) { return put(v); }
  byte_writer& u32(std::uint32_t v) { return put(v); }
  byte_writer& u64(std::uint64_t v) { return put(v); }
  /** A count or length: uint32 in v1, uint64 otherwise. */
  byte_writer& count(std::uint64_t n) { return narrow_ ? put(static_cast<std::uint32_t>(n)) : put(n); }
  byte_writer& raw(std::string_view s) {
    for (char c : s) out_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  byte_writer& str(std::string_view s) { return count(s.size()).raw(s); }
  byte_writer& zeros(std::size_t n) {
    out_.insert(out_.end(), n, std::byte{0});
    return *this;
  }
  std::size_t size() const { return out_.size(); }

 private:
  bytes& out_;
  bool narrow_;
  bool big_;
};

using value_writer = std::function<void(byte_writer&)>;

/** A tensor info and its data. `offset` defaults to the next aligned position. */
struct tensor_spec {
  std::string name;
  std::uint32_t type = 0;
  std::vector<std::uint64_t> ne;
  std::optional<std::uint64_t> offset;
  std::optional<bytes> data;  // default: a ramp of the tensor's size
};

/** A whole file, written in order: header, key/values, tensor infos, padding, data. */
struct file_builder {
  std::uint32_t version = 3;
  bool big_endian = false;
  std::uint32_t alignment = 32;                  // for computing offsets and padding (write general.alignment yourself)
  std::optional<std::uint64_t> n_kv, n_tensors;  // override the counts written in the header
  std::vector<std::pair<std::string, value_writer>> kvs;  // key, then "type + value" writer
  std::vector<tensor_spec> tensors;
  std::size_t extra_tail = 0;  // bytes appended after the data

  file_builder() = default;
  explicit file_builder(std::uint32_t v, bool big = false) : version(v), big_endian(big) {}

  /** A key with a raw type id and payload writer. */
  file_builder& kv_raw(std::string key, value_writer type_and_value) {
    kvs.emplace_back(std::move(key), std::move(type_and_value));
    return *this;
  }
  template <class T>
  file_builder& kv(std::string key, T v) {
    if constexpr (std::is_convertible_v<T, std::string_view>) {
      const std::string s(v);
      return kv_raw(std::move(key), [s](byte_writer& w) { w.u32(8).str(s); });
    } else {
      constexpr auto t = static_cast<std::uint32_t>(gguf::value_type_of<T>::value);
      if constexpr (std::is_same_v<T, bool>) {
        return kv_raw(std::move(key), [v](byte_writer& w) { w.u32(t).u8(v ? 1 : 0); });
      } else {
        return kv_raw(std::move(key), [v](byte_writer& w) { w.u32(t).put(v); });
      }
    }
  }
  template <class T>
  file_builder& kv_array(std::string key, std::vector<T> items) {
    return kv_raw(std::move(key), [items](byte_writer& w) {
      w.u32(9);
      if constexpr (std::is_same_v<T, std::string>) {
        w.u32(8).count(items.size());
        for (const auto& s : items) w.str(s);
      } else if constexpr (std::is_same_v<T, bool>) {
        w.u32(7).count(items.size());
        for (bool b : items) w.u8(b ? 1 : 0);
      } else {
        w.u32(static_cast<std::uint32_t>(gguf::value_type_of<T>::value)).count(items.size());
        for (T x : items) w.put(x);
      }
    });
  }
  file_builder& tensor(std::string name, gguf::ggml_type type, std::vector<std::uint64_t> ne,
                       std::optional<std::uint64_t> offset = std::nullopt) {
    tensors.push_back({std::move(name), static_cast<std::uint32_t>(type), std::move(ne), offset, std::nullopt});
    return *this;
  }

  static std::uint64_t nbytes(const tensor_spec& t) {
    const gguf::type_traits* tt = gguf::find_type(t.type);
    if (!tt) return 0;
    std::uint64_t n = 1;
    for (auto d : t.ne) n *= d;
    return n / tt->block_size * tt->type_size;
  }

  bytes build() const {
    bytes out;
    byte_writer w(out, version, big_endian);
    w.raw("GGUF").u32(version);
    w.count(n_tensors.value_or(tensors.size())).count(n_kv.value_or(kvs.size()));
    for (const auto& [key, value] : kvs) {
      w.str(key);
      value(w);
    }
    std::vector<std::uint64_t> offsets;
    std::uint64_t next = 0;
    for (const auto& t : tensors) {
      const std::uint64_t off = t.offset.value_or(next);
      offsets.push_back(off);
      const std::uint64_t size = t.data ? t.data->size() : nbytes(t);
      next = (off + size + alignment - 1) / alignment * alignment;
      w.str(t.name).u32(static_cast<std::uint32_t>(t.ne.size()));
      for (auto d : t.ne) w.count(d);
      w.u32(t.type).u64(off);
    }
    if (!tensors.empty()) {
      w.zeros((alignment - out.size() % alignment) % alignment);
      const std::size_t data_start = out.size();
      for (std::size_t i = 0; i < tensors.size(); ++i) {
        const auto& t = tensors[i];
        bytes d;
        if (t.data) {
          d = *t.data;
        } else {
          d.resize(nbytes(t));
          for (std::size_t k = 0; k < d.size(); ++k) d[k] = static_cast<std::byte>(k * 7 + i);
        }
        if (d.empty()) continue;  // e.g. a lying offset far past the end: nothing to place
        const std::size_t at = data_start + offsets[i];
        if (out.size() < at + d.size()) out.resize(at + d.size());
        std::memcpy(out.data() + at, d.data(), d.size());
      }
    }
    w.zeros(extra_tail);
    return out;
  }
};

inline gguf::result<gguf::file> parse(const bytes& b, const gguf::parse_options& opt = {}) {
  return gguf::parse(std::span<const std::byte>(b), opt);
}
// As gguf::parse: the file points into `b`, so a temporary would dangle (ASan found three tests doing it).
gguf::result<gguf::file> parse(bytes&& b, const gguf::parse_options& opt = {}) = delete;

/** Whether the bytes parse (nothing of the file is kept, so a temporary is fine). */
inline bool accepts(const bytes& b, const gguf::parse_options& opt = {}) { return parse(b, opt).has_value(); }

}  // namespace test

#endif  // GGUF_TESTS_GGUF_WRITER_HPP
