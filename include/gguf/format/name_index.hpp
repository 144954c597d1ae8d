#ifndef GGUF_FORMAT_NAME_INDEX_HPP
#define GGUF_FORMAT_NAME_INDEX_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace detail {

/**
 * The positions of n named items (metadata keys, tensor names) sorted by name: O(log n) lookup
 * without hashing or copying a name, and, as a by-product of sorting, the repeated names.
 */
class name_index {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /**
   * Sort items 0..n-1 by `name_of(i)`. Returns the first item, in the items' own order, whose name an
   * earlier item already has, or npos when all names are distinct.
   */
  template <class NameOf>
  std::size_t build(std::size_t n, NameOf name_of) {
    sorted_.resize(n);
    for (std::size_t i = 0; i < n; ++i) sorted_[i] = static_cast<std::uint32_t>(i);
    std::sort(sorted_.begin(), sorted_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const int c = name_of(a).compare(name_of(b));
      return c < 0 || (c == 0 && a < b);
    });
    std::size_t repeat = npos;
    for (std::size_t k = 1; k < n; ++k) {
      if (name_of(sorted_[k]) == name_of(sorted_[k - 1])) repeat = std::min<std::size_t>(repeat, sorted_[k]);
    }
    return repeat;
  }

  /** The item named `key`, or npos. */
  template <class NameOf>
  std::size_t find(std::string_view key, NameOf name_of) const {
    return find_if([&](std::uint32_t i) { return name_of(i).compare(key); });
  }

  /**
   * The item for which `compare(i)` (a three-way comparison of item i's name with the wanted name,
   * like `string_view::compare`) is 0, or npos.
   */
  template <class Compare>
  std::size_t find_if(Compare compare) const {
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), 0, [&](std::uint32_t i, int) { return compare(i) < 0; });
    return it != sorted_.end() && compare(*it) == 0 ? *it : npos;
  }

 private:
  std::vector<std::uint32_t> sorted_;
};

}  // namespace detail
GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_NAME_INDEX_HPP
