#ifndef GGUF_TEXT_SLOT_INDEX_HPP
#define GGUF_TEXT_SLOT_INDEX_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gguf/detail/thread_team.hpp"
#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace text::detail {

/// Slots for `n` keys: a load factor of at most 0.7 (linear probing stays short; the tables stay small,
/// and a large vocabulary's build is bound by the memory it touches).
inline std::size_t table_capacity(std::size_t n) noexcept { return n + n * 3 / 7 + 16; }

/// The home slot of hash `h` in a table of `size` slots (the high half of h * size: no division).
inline std::size_t home_slot(std::uint64_t h, std::size_t size) noexcept {
#if defined(__SIZEOF_INT128__)
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::size_t>((static_cast<u128>(h) * size) >> 64);
#else
  const std::uint64_t s = size, lo = (h & 0xFFFFFFFFu) * s, hi = (h >> 32) * s;
  return static_cast<std::size_t>((hi + (lo >> 32)) >> 32);  // size < 2^32: the high half of h * size
#endif
}

/// Asks for the cache line at `p`, to be written.
inline void prefetch_for_write(const void* p) noexcept {
#if defined(__GNUC__)
  __builtin_prefetch(p, 1);
#else
  (void)p;
#endif
}

/**
 * An open-addressing index of the values 0 to n - 1 by 64-bit hashes of keys the caller keeps, probed
 * linearly. A slot is 4 bytes, so that a large vocabulary's index stays in the cache: the value + 1 in
 * the low bits (0: empty) and a tag of the hash's low bits above them (the home slot comes from its high
 * bits), so that most mismatches end without comparing keys.
 */
class slot_index {
 public:
  /// No value.
  static constexpr std::uint32_t none = 0xFFFFFFFFu;

  /** An empty index. */
  slot_index() = default;

  /**
   * The first value on hash `h`'s probe whose tag matches and whose key `same(value)` accepts.
   * @return the value, or `none`
   */
  template <class Same>
  std::uint32_t find(std::uint64_t h, Same&& same) const noexcept {
    if (size_ == 0) return none;
    const std::uint32_t tag = tag_of(h);
    for (std::size_t i = home_slot(h, size_);; i = i + 1 == size_ ? 0 : i + 1) {
      const std::uint32_t e = slots_[i];
      if (e == 0) return none;
      if ((e & ~value_mask()) == tag && same(value_of(e))) return value_of(e);
    }
  }

  /// The values `build` left out because an earlier value has the same key.
  struct repeats {
    std::uint32_t first = none;  ///< the lowest of them, or `none`
    std::size_t count = 0;       ///< how many
  };

  /**
   * The index of the values 0 to `n - 1`, each under `hash_of(value)`, inserted as if one after the other
   * in order: a value whose key is that of an earlier one (`same(earlier, value)`) is left out, and
   * lookups find the earlier one. The slots are fetched some values ahead, to overlap their cache misses.
   *
   * With a team of more than one thread, the slots are cut into stretches, one for each thread, and a
   * stretch is cleared and filled with the values whose home is there; the few whose probe runs past
   * the end of their stretch go in afterwards, on the calling thread. Lookups find the same values
   * either way.
   * @param n        the number of values
   * @param hash_of  the hash of a value's key (called from every thread)
   * @param same     whether two values' keys are equal (called from every thread)
   * @param team     the threads to use
   * @param left_out set to the values left out
   */
  template <class HashOf, class Same>
  static slot_index build(std::size_t n, HashOf&& hash_of, Same&& same, ::gguf::detail::thread_team& team,
                          repeats& left_out) {
    slot_index index(n);
    left_out = index.insert_all(n, hash_of, same, team);
    return index;
  }

  /** The bytes the slots take. */
  std::size_t memory_bytes() const noexcept { return size_ * sizeof(std::uint32_t); }

 private:
  // Room for the values 0 to n - 1, the slots not cleared yet.
  explicit slot_index(std::size_t n)
      : slots_(std::make_unique_for_overwrite<std::uint32_t[]>(n == 0 ? 0 : table_capacity(n))),
        size_(n == 0 ? 0 : table_capacity(n)) {
    while (value_bits_ < 31 && (std::uint64_t{1} << value_bits_) <= n + 1) ++value_bits_;
  }

  template <class HashOf, class Same>
  repeats insert_all(std::size_t n, HashOf& hash_of, Same& same, ::gguf::detail::thread_team& team) {
    constexpr std::size_t min_per_stretch = 16384;
    const auto stretches = static_cast<unsigned>(std::clamp<std::size_t>(n / min_per_stretch, 1, team.size()));
    // Each stretch's own, a cache line apart. The values whose probe ran past the end of the stretch
    // wait in `overflow`; with more than it has room for, the stretch stops, and the calling thread goes
    // on from there: the threads allocate nothing.
    struct alignas(64) stretch_state {
      std::size_t begin = 0, end = 0;  // its slots
      repeats found;
      std::vector<std::uint32_t> overflow;
      std::size_t stopped = 0;
    };
    const std::size_t size = size_;
    std::vector<stretch_state> state(stretches);
    for (unsigned k = 0; k < stretches; ++k) {
      state[k].begin = size * k / stretches;
      state[k].end = size * (k + 1) / stretches;
      state[k].overflow.reserve(256);
      state[k].stopped = n;
    }
    team.run(stretches, [&](std::size_t k, unsigned) {
      stretch_state& my = state[k];
      const std::size_t begin = my.begin, end = my.end;
      std::fill(slots_.get() + begin, slots_.get() + end, std::uint32_t{0});  // by the thread that fills it
      // A block of values at a time: those whose home is in the stretch are picked out without a branch
      // (which would mispredict on every other value), then inserted with their slots fetched ahead.
      constexpr std::size_t block = 256, ahead = 16;
      struct pick {
        std::uint64_t hash;
        std::size_t home, value;
      } picked[block];
      for (std::size_t first = 0; first < n; first += block) {
        std::size_t count = 0;
        for (std::size_t v = first; v < std::min(first + block, n); ++v) {
          const std::uint64_t h = hash_of(v);
          const std::size_t home = home_slot(h, size);
          picked[count] = {h, home, v};
          count += home - begin < end - begin;
        }
        for (std::size_t j = 0; j < std::min(ahead, count); ++j) prefetch_for_write(&slots_[picked[j].home]);
        for (std::size_t j = 0; j < count; ++j) {
          if (j + ahead < count) prefetch_for_write(&slots_[picked[j + ahead].home]);
          const pick p = picked[j];
          const std::uint32_t tag = tag_of(p.hash);
          for (std::size_t s = p.home;;) {
            std::uint32_t& e = slots_[s];
            if (e == 0) {
              e = tag | static_cast<std::uint32_t>(p.value + 1);
              break;
            }
            if ((e & ~value_mask()) == tag && same(value_of(e), p.value)) {
              note(my.found, p.value);
              break;
            }
            if (++s == end) {
              if (my.overflow.size() == my.overflow.capacity()) {
                my.stopped = p.value;
                return;
              }
              my.overflow.push_back(static_cast<std::uint32_t>(p.value));
              break;
            }
          }
        }
      }
    });
    repeats all;
    for (stretch_state& st : state) {
      for (const std::uint32_t v : st.overflow) insert(v, hash_of(v), same, st.found);
      for (std::size_t v = st.stopped; v < n; ++v) {
        if (const std::uint64_t h = hash_of(v), s = home_slot(h, size); s >= st.begin && s < st.end) {
          insert(static_cast<std::uint32_t>(v), h, same, st.found);
        }
      }
      all.first = std::min(all.first, st.found.first);
      all.count += st.found.count;
    }
    return all;
  }

  static void note(repeats& r, std::size_t v) noexcept {
    r.first = std::min(r.first, static_cast<std::uint32_t>(v));
    ++r.count;
  }
  // One value, probing the whole table.
  template <class Same>
  void insert(std::uint32_t v, std::uint64_t h, Same& same, repeats& found) noexcept {
    const std::uint32_t tag = tag_of(h);
    for (std::size_t i = home_slot(h, size_);; i = i + 1 == size_ ? 0 : i + 1) {
      std::uint32_t& e = slots_[i];
      if (e == 0) {
        e = tag | (v + 1);
        return;
      }
      if ((e & ~value_mask()) == tag && same(value_of(e), v)) return note(found, v);
    }
  }
  std::uint32_t value_mask() const noexcept { return (std::uint32_t{1} << value_bits_) - 1; }
  std::uint32_t tag_of(std::uint64_t h) const noexcept { return static_cast<std::uint32_t>(h) & ~value_mask(); }
  std::uint32_t value_of(std::uint32_t e) const noexcept { return (e & value_mask()) - 1; }

  std::unique_ptr<std::uint32_t[]> slots_;
  std::size_t size_ = 0;
  unsigned value_bits_ = 16;
};

}  // namespace text::detail
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_SLOT_INDEX_HPP
