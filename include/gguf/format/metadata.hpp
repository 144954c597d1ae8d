#ifndef GGUF_FORMAT_METADATA_HPP
#define GGUF_FORMAT_METADATA_HPP

#include <algorithm>
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

/** One key/value pair of the metadata section. */
struct metadata_entry {
  std::string_view key;  ///< a view into the file
  value_view value;
  std::uint64_t offset = 0;  ///< byte offset of the key's length field in the file
};

/**
 * The metadata section: entries in file order, plus a sorted index for O(log n) lookup by key.
 * Only the parser builds one; it allocates O(n_kv), never per array element.
 */
class metadata_table {
 public:
  using iterator = std::vector<metadata_entry>::const_iterator;

  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  iterator begin() const noexcept { return entries_.begin(); }
  iterator end() const noexcept { return entries_.end(); }
  /** Entry `i` in file order. */
  const metadata_entry& operator[](std::size_t i) const noexcept { return entries_[i]; }
  std::span<const metadata_entry> entries() const noexcept { return entries_; }

  /** The entry with this key, or nullptr. */
  const metadata_entry* find(std::string_view key) const noexcept {
    const std::size_t i = index_.find(key, [this](std::size_t k) { return entries_[k].key; });
    return i == detail::name_index::npos ? nullptr : &entries_[i];
  }
  bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }

  /** The value with this key, or `not_found`. */
  result<value_view> value(std::string_view key) const noexcept {
    const metadata_entry* e = find(key);
    if (!e) return {errc::not_found, 0, "no such metadata key"};
    return e->value;
  }

  /** The value with this key as `T` (exactly its stored type): `not_found` or `type_mismatch` otherwise. */
  template <class T>
  result<T> get(std::string_view key) const noexcept {
    const metadata_entry* e = find(key);
    if (!e) return {errc::not_found, 0, "no such metadata key"};
    return e->value.get<T>();
  }

  /** An integer value converted to `T` when it fits, whatever integer type it is stored as. */
  template <class T>
  result<T> get_integer(std::string_view key) const noexcept {
    const metadata_entry* e = find(key);
    if (!e) return {errc::not_found, 0, "no such metadata key"};
    return e->value.as_integer<T>();
  }

  /** `general.architecture`, or an empty view when it is absent or not a string. */
  std::string_view architecture() const noexcept { return get<std::string_view>("general.architecture").value_or(""); }

  /**
   * The entry `<general.architecture>.<name>`, e.g. `arch_find("context_length")` finds
   * `llama.context_length` in a llama model. Looks up without building the key string.
   */
  const metadata_entry* arch_find(std::string_view name) const noexcept {
    const std::string_view arch = architecture();
    if (arch.empty()) return nullptr;
    const std::size_t i = index_.find_if([&](std::size_t k) { return compare_joined(entries_[k].key, arch, name); });
    return i == detail::name_index::npos ? nullptr : &entries_[i];
  }

  /** `get<T>` on `<general.architecture>.<name>`. */
  template <class T>
  result<T> get_arch(std::string_view name) const noexcept {
    const metadata_entry* e = arch_find(name);
    if (!e) return {errc::not_found, 0, "no such architecture key"};
    return e->value.get<T>();
  }

  /// Internal: the parser appends entries, then calls `build_index`.
  void reserve(std::size_t n) { entries_.reserve(n); }
  void push_back(const metadata_entry& e) { entries_.push_back(e); }

  /** Index the keys. Returns the entry that repeats an earlier key, or nullptr. */
  const metadata_entry* build_index() {
    const std::size_t dup = index_.build(entries_.size(), [this](std::size_t k) { return entries_[k].key; });
    return dup == detail::name_index::npos ? nullptr : &entries_[dup];
  }

 private:
  // Three-way comparison of `key` with `arch + "." + name`, without concatenating.
  static int compare_joined(std::string_view key, std::string_view arch, std::string_view name) noexcept {
    const std::string_view parts[3] = {arch, ".", name};
    std::size_t pos = 0;
    for (std::string_view part : parts) {
      const std::string_view k = key.substr(std::min(pos, key.size()), part.size());
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
