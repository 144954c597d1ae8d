#ifndef GGUF_FORMAT_METADATA_HPP
#define GGUF_FORMAT_METADATA_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/format/name_index.hpp"
#include "gguf/format/value.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

namespace detail {
class parser;
}  // namespace detail

/** One key/value pair of the metadata section. */
struct metadata_entry {
  std::string_view key;      ///< a view into the file
  value_view value;          ///< the value, a view into the file
  std::uint64_t offset = 0;  ///< byte offset of the key's length field in the file
};

/**
 * The metadata section: entries in file order, plus a sorted index for O(log n) lookup by key.
 * Only the parser builds one; it allocates O(n_kv), never per array element.
 */
class metadata_table {
 public:
  using iterator = std::vector<metadata_entry>::const_iterator;  ///< over the entries in file order

  /// The number of entries (the header's n_kv).
  std::size_t size() const noexcept { return entries_.size(); }
  /// True when the file has no metadata.
  bool empty() const noexcept { return entries_.empty(); }
  /// The first entry in file order.
  iterator begin() const noexcept { return entries_.begin(); }
  /// Past the last entry.
  iterator end() const noexcept { return entries_.end(); }
  /** Entry `i` in file order, unchecked (`i < size()`). */
  const metadata_entry& operator[](std::size_t i) const noexcept { return entries_[i]; }
  /// All entries in file order.
  std::span<const metadata_entry> entries() const noexcept { return entries_; }

  /**
   * The entry with this key (binary search over a sorted index).
   * @param key the whole key, exactly as stored (e.g. "general.name")
   * @return the entry, or nullptr when there is none
   */
  const metadata_entry* find(std::string_view key) const noexcept {
    const std::size_t i = index_.find(key, [this](std::size_t k) { return entries_[k].key; });
    return i == detail::name_index::npos ? nullptr : &entries_[i];
  }
  /// True when an entry has this key.
  bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }

  /**
   * The value with this key, of whatever type.
   * @param key the whole key, exactly as stored
   * @return the value, or `not_found`
   */
  result<value_view> value(std::string_view key) const noexcept {
    const metadata_entry* e = find(key);
    if (!e) return missing(key);
    return e->value;
  }

  /**
   * The value with this key as `T`, exactly its stored type (see `value_view::get`).
   * @tparam T the C++ type of the stored type (`std::uint32_t` for uint32, `std::string_view`, ...)
   * @param key the whole key, exactly as stored
   * @return the value; `not_found` when there is no such key, `type_mismatch` when it has another type
   */
  template <class T>
  result<T> get(std::string_view key) const noexcept {
    const metadata_entry* e = find(key);
    if (!e) return missing(key);
    return named(e->value.get<T>(), e->key);
  }

  /**
   * An integer value converted to `T` when it fits, whatever integer type it is stored as (see
   * `value_view::as_integer`).
   * @tparam T an integer type other than bool
   * @param key the whole key, exactly as stored
   * @return the value; `not_found`, `type_mismatch` (not an integer) or `out_of_range` (does not fit)
   */
  template <class T>
  result<T> get_integer(std::string_view key) const noexcept {
    const metadata_entry* e = find(key);
    if (!e) return missing(key);
    return named(e->value.as_integer<T>(), e->key);
  }

  /** `general.architecture`, or an empty view when it is absent or not a string. */
  std::string_view architecture() const noexcept { return get<std::string_view>("general.architecture").value_or(""); }

  /**
   * The entry whose key is the value of `general.architecture`, a dot and `name`: in a llama model,
   * `arch_find("context_length")` finds `llama.context_length`. Looks up without building the key string.
   * @param name the key after the architecture and its dot
   * @return the entry, or nullptr when there is none or the file names no architecture
   */
  const metadata_entry* arch_find(std::string_view name) const noexcept {
    const std::string_view arch = architecture();
    if (arch.empty()) return nullptr;
    const std::size_t i = index_.find_if([&](std::size_t k) { return compare_joined(entries_[k].key, arch, name); });
    return i == detail::name_index::npos ? nullptr : &entries_[i];
  }

  /**
   * `get<T>` on the key that `arch_find(name)` finds.
   * @tparam T the C++ type of the stored type
   * @param name the key after the architecture and its dot, e.g. "block_count"
   * @return the value; `not_found` (no such key, or no architecture) or `type_mismatch`
   */
  template <class T>
  result<T> get_arch(std::string_view name) const noexcept {
    const metadata_entry* e = arch_find(name);
    if (e) return named(e->value.get<T>(), e->key);
    const std::string_view arch = architecture();
    if (arch.empty()) return error{errc::not_found, "no general.architecture to look up"}.about(name);
    return missing(arch, ".", name);
  }

 private:
  friend class detail::parser;

  // The not_found error of a lookup, naming the key (joined from parts, without allocating).
  static error missing(std::string_view key, std::string_view part2 = {}, std::string_view part3 = {}) noexcept {
    return error{errc::not_found, "no such metadata key"}.about(key, part2, part3);
  }
  // A value's error, now naming the key it belongs to.
  template <class T>
  static result<T> named(result<T>&& r, std::string_view key) noexcept {
    if (r) return std::move(r);
    error e = r.error();
    return e.about(key);
  }

  // The parser appends the entries, then indexes them.
  void reserve(std::size_t n) { entries_.reserve(n); }
  void push_back(const metadata_entry& e) { entries_.push_back(e); }
  // Returns the entry that repeats an earlier key, or nullptr.
  const metadata_entry* build_index() {
    const std::size_t dup = index_.build(entries_.size(), [this](std::size_t k) { return entries_[k].key; });
    return dup == detail::name_index::npos ? nullptr : &entries_[dup];
  }

  // Three-way comparison of `key` with `arch + "." + name`, without concatenating.
  static int compare_joined(std::string_view key, std::string_view arch, std::string_view name) noexcept {
    const std::string_view parts[3] = {arch, ".", name};
    std::size_t pos = 0;
    for (std::string_view part : parts) {
      const std::string_view k = key.substr(pos < key.size() ? pos : key.size(), part.size());
      if (const int c = k.compare(part)) return c;
      pos += part.size();
    }
    return key.size() > pos ? 1 : 0;
  }

  std::vector<metadata_entry> entries_;
  detail::name_index index_;
};

GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_METADATA_HPP
