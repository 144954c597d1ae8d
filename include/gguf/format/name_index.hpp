#ifndef GGUF_FORMAT_NAME_INDEX_HPP
#define GGUF_FORMAT_NAME_INDEX_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace detail {

/**
 * Sorts the positions `order` by `less(context, a, b)`, a strict total order. Every index sort of the
 * reader goes through this one function: a heap sort (in place, O(n log n), nothing allocated) written
 * out rather than std::sort, so that reading a file compiles one small sort and not <algorithm>.
 */
inline void sort_positions(std::vector<std::uint32_t>& order, bool (*less)(const void*, std::uint32_t, std::uint32_t),
                           const void* context) {
  std::uint32_t* a = order.data();
  const std::size_t n = order.size();
  const auto sift_down = [&](std::size_t root, std::size_t end) {
    while (2 * root + 1 < end) {
      std::size_t child = 2 * root + 1;
      if (child + 1 < end && less(context, a[child], a[child + 1])) ++child;
      if (!less(context, a[root], a[child])) return;
      const std::uint32_t t = a[root];
      a[root] = a[child];
      a[child] = t;
      root = child;
    }
  };
  for (std::size_t i = n / 2; i-- > 0;) sift_down(i, n);
  for (std::size_t end = n; end > 1; --end) {
    const std::uint32_t t = a[0];
    a[0] = a[end - 1];
    a[end - 1] = t;
    sift_down(0, end - 1);
  }
}

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
    const auto call = [](const void* f, std::size_t i) {
      return std::string_view((*static_cast<const NameOf*>(f))(i));
    };
    return build(n, names{call, &name_of});
  }

  /// Item i's name, through a plain function: one sort is compiled, whatever the caller's items are.
  struct names {
    std::string_view (*of)(const void* context, std::size_t i);  ///< the name of item i
    const void* context;                                         ///< what `of` reads
    std::string_view operator()(std::size_t i) const { return of(context, i); }
  };

  /** `build` through `names` (allocates only the index, 4 bytes an item). */
  std::size_t build(std::size_t n, names name_of) {
    sorted_.resize(n);
    for (std::size_t i = 0; i < n; ++i) sorted_[i] = static_cast<std::uint32_t>(i);
    sort_positions(
        sorted_,
        [](const void* names_of, std::uint32_t a, std::uint32_t b) {
          const names& f = *static_cast<const names*>(names_of);
          const int c = f(a).compare(f(b));
          return c < 0 || (c == 0 && a < b);  // equal names stay in their items' order
        },
        &name_of);
    std::size_t repeat = npos;
    for (std::size_t k = 1; k < n; ++k) {
      if (name_of(sorted_[k]) == name_of(sorted_[k - 1]) && sorted_[k] < repeat) repeat = sorted_[k];
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
    std::size_t lo = 0, hi = sorted_.size();  // the first position whose name is not less than the wanted
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (compare(sorted_[mid]) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo < sorted_.size() && compare(sorted_[lo]) == 0 ? sorted_[lo] : npos;
  }

 private:
  std::vector<std::uint32_t> sorted_;
};

}  // namespace detail
GGUF_END_NAMESPACE

#endif  // GGUF_FORMAT_NAME_INDEX_HPP
