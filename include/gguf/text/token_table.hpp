#ifndef GGUF_TEXT_TOKEN_TABLE_HPP
#define GGUF_TEXT_TOKEN_TABLE_HPP

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/// A token id, as llama.cpp's `llama_token`.
using token_id = std::int32_t;
/// No token (llama.cpp's `LLAMA_TOKEN_NULL`).
inline constexpr token_id no_token = -1;

#if defined(__GNUC__)
#define GGUF_TEXT_INLINE inline __attribute__((always_inline))
#else
#define GGUF_TEXT_INLINE inline
#endif

namespace detail {

// Unaligned loads of a string's bytes.
inline std::uint64_t load64(const char* q) noexcept {
  std::uint64_t w;
  std::memcpy(&w, q, 8);
  return w;
}
inline std::uint32_t load32(const char* q) noexcept {
  std::uint32_t w;
  std::memcpy(&w, q, 4);
  return w;
}

// A string of at most 16 bytes as two little-endian words, zero past its end, read without a byte past
// it: overlapping loads, no branch on each length (the lengths of a vocabulary's texts are random).
inline void short_words(const char* p, std::size_t n, std::uint64_t& w0, std::uint64_t& w1) noexcept {
  if (n >= 8) {
    w0 = load64(p);
    w1 = n > 8 ? load64(p + n - 8) >> (8 * (16 - n)) : 0;
  } else if (n >= 4) {
    w0 = std::uint64_t{load32(p)} | ((std::uint64_t{load32(p + n - 4)} >> (8 * (8 - n))) << 32);
    w1 = 0;
  } else {
    const auto b = [&](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(p[i])}; };
    w0 = n ? b(0) | (b(n / 2) << (8 * (n / 2))) | (b(n - 1) << (8 * (n - 1))) : 0;
    w1 = 0;
  }
}

// `short_words` where the 16 bytes from p may be read (masked loads); the same words on a little-endian
// host, where it is used.
inline void short_words_padded(const char* p, std::size_t n, std::uint64_t& w0, std::uint64_t& w1) noexcept {
  const auto keep = [](std::uint64_t w, std::size_t k) { return k >= 8 ? w : w & ((std::uint64_t{1} << (8 * k)) - 1); };
  w0 = keep(load64(p), n);
  w1 = n > 8 ? keep(load64(p + 8), n - 8) : 0;
}

inline constexpr std::uint64_t hash_seed = 0x9E3779B97F4A7C15ull, hash_mul = 0xBF58476D1CE4E5B9ull;

inline std::uint64_t hash_finish(std::uint64_t h) noexcept {
  h ^= h >> 32;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 29);
}

// The hash of a string of at most 16 bytes from its words.
inline std::uint64_t hash_words(std::uint64_t w0, std::uint64_t w1, std::size_t n) noexcept {
  std::uint64_t h = (hash_seed ^ (n * hash_mul) ^ w0) * hash_mul;
  h ^= h >> 29;
  return hash_finish((h ^ w1) * hash_mul);
}

/** A fast 64-bit hash of a byte string (8 bytes a step); the tables below need speed, not secrecy. */
GGUF_TEXT_INLINE std::uint64_t hash_bytes(const char* p, std::size_t n) noexcept {
  if (n <= 16) {
    std::uint64_t w0, w1;
    short_words(p, n, w0, w1);
    return hash_words(w0, w1, n);
  }
  std::uint64_t h = hash_seed ^ (n * hash_mul);
  const char* const last = p + n - 8;
  for (; p < last; p += 8) {
    h = (h ^ load64(p)) * hash_mul;
    h ^= h >> 29;
  }
  return hash_finish((h ^ load64(last)) * hash_mul);  // the last 8 bytes overlap the words before
}

/** `hash_bytes` where the 16 bytes from `p` may be read, whatever `n` (fewer branches). */
GGUF_TEXT_INLINE std::uint64_t hash_bytes_padded(const char* p, std::size_t n) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    if (n <= 16) {
      std::uint64_t w0, w1;
      short_words_padded(p, n, w0, w1);
      return hash_words(w0, w1, n);
    }
  }
  return hash_bytes(p, n);
}

/** True when the `n` bytes at `a` and `b` are equal: short keys compared with a few loads, not a call. */
inline bool equal_bytes(const char* a, const char* b, std::size_t n) noexcept {
  if (n >= 8) {
    if (n > 16) return std::memcmp(a, b, n) == 0;
    return load64(a) == load64(b) && load64(a + n - 8) == load64(b + n - 8);
  }
  if (n >= 4) return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

/** `equal_bytes` for `n` <= 16 where the 16 bytes from `a` and from `b` may be read: no branch on `n`. */
inline bool equal_padded(const char* a, const char* b, std::size_t n) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    const auto keep = [](std::size_t k) { return k >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * k)) - 1; };
    const std::uint64_t x0 = (load64(a) ^ load64(b)) & keep(n);
    const std::uint64_t x1 = (load64(a + 8) ^ load64(b + 8)) & (n > 8 ? keep(n - 8) : 0);
    return (x0 | x1) == 0;
  } else {
    return equal_bytes(a, b, n);
  }
}

/// True when two byte strings are equal (`equal_bytes` after the sizes).
inline bool same_text(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && equal_bytes(a.data(), b.data(), a.size());
}

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

}  // namespace detail

/**
 * Every token's text in one buffer, with an open-addressing index from text to id. Building copies the
 * texts once (so the table never points into a file that may be closed) and allocates three arrays.
 */
class token_table {
 public:
  /** An empty table. */
  token_table() = default;

  /**
   * Reserves room for `n` tokens of `bytes` bytes in all.
   * @param n     the number of tokens
   * @param bytes the sum of their lengths
   */
  void reserve(std::size_t n, std::size_t bytes) {
    text_ = std::make_unique<char[]>(bytes + padding);  // zeroed: hash_bytes_padded reads past a text
    capacity_bytes_ = bytes;
    offsets_.assign(1, 0);
    offsets_.reserve(n + 1);
    slots_.assign(detail::table_capacity(n), 0);
    id_bits_ = 16;
    while (id_bits_ < 31 && (std::uint64_t{1} << id_bits_) <= n + 1) ++id_bits_;
  }

  /**
   * Appends the next token (its id is the number appended before it) and indexes it.
   * @param s the token's text; `reserve` counted its bytes
   * @return `no_token` when it was new, else the id of the earlier token with the same text (this one is
   *         still appended, and lookups find the earlier one)
   */
  token_id push_back(std::string_view s) noexcept {
    const std::uint32_t at = offsets_.back();
    if (!s.empty()) std::memcpy(text_.get() + at, s.data(), s.size());
    offsets_.push_back(at + static_cast<std::uint32_t>(s.size()));
    const auto id = static_cast<token_id>(offsets_.size() - 2);
    const std::uint64_t h = detail::hash_bytes(s.data(), s.size());
    const std::uint32_t tag = tag_of(h);
    for (std::size_t i = detail::home_slot(h, slots_.size());; i = i + 1 == slots_.size() ? 0 : i + 1) {
      std::uint32_t& e = slots_[i];
      if (e == 0) {
        e = tag | (static_cast<std::uint32_t>(id) + 1);
        return no_token;
      }
      if ((e & ~id_mask()) == tag && detail::same_text(text(id_of(e)), s)) return id_of(e);
    }
  }

  /** The number of tokens. */
  std::size_t size() const noexcept { return offsets_.empty() ? 0 : offsets_.size() - 1; }

  /** The text of token `id` (`0 <= id < size()`), a view into the table. */
  std::string_view text(token_id id) const noexcept {
    const auto i = static_cast<std::size_t>(id);
    return {text_.get() + offsets_[i], offsets_[i + 1] - offsets_[i]};
  }

  /**
   * The id of the token whose text is `s`.
   * @return the id, or `no_token`
   */
  token_id find(std::string_view s) const noexcept { return find(s, detail::hash_bytes(s.data(), s.size())); }

  /** `find` with the hash already computed (`detail::hash_bytes(s)`). */
  token_id find(std::string_view s, std::uint64_t h) const noexcept {
    return probe(h, [&](std::string_view t) { return detail::same_text(t, s); });
  }

  /** `find` where the 16 bytes from `s.data()` may be read (fewer branches). */
  token_id find_padded(std::string_view s, std::uint64_t h) const noexcept {
    if (s.size() > 16) return find(s, h);
    // the table has 16 bytes past each text's start
    return probe(h, [&](std::string_view t) {
      return t.size() == s.size() && detail::equal_padded(t.data(), s.data(), s.size());
    });
  }

  /** `find` of the text `a` followed by `b`, with `h` the hash of the two joined, without joining them. */
  token_id find_joined(std::string_view a, std::string_view b, std::uint64_t h) const noexcept {
    return probe(h, [&](std::string_view t) {
      return t.size() == a.size() + b.size() && detail::equal_bytes(t.data(), a.data(), a.size()) &&
             detail::equal_bytes(t.data() + a.size(), b.data(), b.size());
    });
  }

  /**
   * Appends tokens as `push_back` does, all at once: hashed first, then indexed with the slots fetched
   * some tokens ahead (the inserts of a large vocabulary are cache misses, overlapped this way).
   * @param for_each called with a function to call with each token's text, in id order, and whether
   *                 the 16 bytes from its start may be read (`reserve` counted the texts' bytes)
   * @return the id of the first token whose text repeats an earlier one's, or `no_token`
   */
  template <class ForEach>
  token_id append_all(ForEach&& for_each) {
    // in chunks, so that the hashes stay in the cache
    constexpr std::size_t chunk = 2048, ahead = 16;
    std::uint64_t hashes[chunk];
    std::size_t pending = 0;
    token_id dup = no_token;
    const auto index = [&] {
      const std::size_t first = size() - pending;
      for (std::size_t i = 0; i < pending; ++i) {
        if (i + ahead < pending) __builtin_prefetch(&slots_[detail::home_slot(hashes[i + ahead], slots_.size())], 1);
        const std::uint64_t h = hashes[i];
        const std::uint32_t tag = tag_of(h);
        const auto id = static_cast<token_id>(first + i);
        const std::string_view s = text(id);
        for (std::size_t k = detail::home_slot(h, slots_.size());; k = k + 1 == slots_.size() ? 0 : k + 1) {
          std::uint32_t& e = slots_[k];
          if (e == 0) {
            e = tag | (static_cast<std::uint32_t>(id) + 1);
            break;
          }
          if ((e & ~id_mask()) == tag && detail::same_text(text(id_of(e)), s)) {
            if (dup == no_token) dup = id;
            break;
          }
        }
      }
      pending = 0;
    };
    for_each([&](std::string_view s, bool padded) {
      const std::uint32_t at = offsets_.back();
      if (at + s.size() > capacity_bytes_) grow(at + s.size());
      char* const to = text_.get() + at;
      if (padded && s.size() <= 16) {  // 16 bytes copied: the table has room past its end
        std::memcpy(to, s.data(), 16);
      } else if (!s.empty()) {
        std::memcpy(to, s.data(), s.size());
      }
      offsets_.push_back(at + static_cast<std::uint32_t>(s.size()));
      hashes[pending++] = detail::hash_bytes_padded(to, s.size());
      if (pending == chunk) index();
    });
    index();
    return dup;
  }

  /** The bytes the table holds (texts, offsets and index). */
  std::size_t memory_bytes() const noexcept {
    return capacity_bytes_ + offsets_.capacity() * sizeof(std::uint32_t) + slots_.capacity() * sizeof(std::uint32_t);
  }

 private:
  // The token in the first slot from h's home whose tag matches and whose text `same` accepts.
  template <class Same>
  token_id probe(std::uint64_t h, Same&& same) const noexcept {
    if (slots_.empty()) return no_token;
    const std::uint32_t tag = tag_of(h);
    for (std::size_t i = detail::home_slot(h, slots_.size());; i = i + 1 == slots_.size() ? 0 : i + 1) {
      const std::uint32_t e = slots_[i];
      if (e == 0) return no_token;
      if ((e & ~id_mask()) == tag && same(text(id_of(e)))) return id_of(e);
    }
  }
  // Room for at least `bytes` bytes of text (an estimate in `reserve` fell short).
  void grow(std::size_t bytes) {
    const std::size_t cap = std::max(bytes, capacity_bytes_ * 2);
    auto t = std::make_unique<char[]>(cap + padding);
    if (offsets_.back() != 0) std::memcpy(t.get(), text_.get(), offsets_.back());
    text_ = std::move(t);
    capacity_bytes_ = cap;
  }
  // A slot is 4 bytes (a large vocabulary's index stays in the cache): the id + 1 in the low id_bits_
  // bits (0: empty), a tag from the hash's low bits above them (the home slot comes from its high bits),
  // so that most mismatches end without comparing text.
  std::uint32_t id_mask() const noexcept { return (std::uint32_t{1} << id_bits_) - 1; }
  std::uint32_t tag_of(std::uint64_t h) const noexcept { return static_cast<std::uint32_t>(h) & ~id_mask(); }
  token_id id_of(std::uint32_t e) const noexcept { return static_cast<token_id>((e & id_mask()) - 1); }
  static constexpr std::size_t padding = 16;  // readable bytes past the last text (hash_bytes_padded)
  std::unique_ptr<char[]> text_;
  std::size_t capacity_bytes_ = 0;
  std::vector<std::uint32_t> offsets_;
  std::vector<std::uint32_t> slots_;
  unsigned id_bits_ = 16;
};

/** One merge of `tokenizer.ggml.merges` by ids: `left` then `right` make `result`. */
struct merge_ids {
  token_id left = no_token;    ///< the first token
  token_id right = no_token;   ///< the second token
  token_id result = no_token;  ///< the token of the two texts joined
};

/**
 * The BPE merges as a map from a pair of token ids to the merge's rank and the token it makes. llama.cpp
 * keys its map by the two texts; every merge of a valid vocabulary names tokens, so ids say the same.
 *
 * The merges are kept in rank order, and an open-addressing index of 4-byte slots (the rank and a tag
 * of the pair's hash) finds them: the index of a large vocabulary stays in the cache, and a pair that
 * is no merge (most pairs a tokenizer asks about) is told by the tags alone.
 */
class merge_table {
 public:
  /** A merge: its rank (its index in `tokenizer.ggml.merges`) and the id of the joined token. */
  struct merge {
    std::int32_t rank = -1;      ///< lower merges first; -1: no merge
    token_id result = no_token;  ///< the token of the two texts joined
  };

  /** An empty table. */
  merge_table() = default;

  /** An empty table with room for `n` merges (no more may be added). */
  explicit merge_table(std::size_t n) : slots_(n == 0 ? 0 : detail::table_capacity(n), 0) {
    merges_.reserve(n);
    while (rank_bits_ < 31 && (std::uint64_t{1} << rank_bits_) <= n + 1) ++rank_bits_;
  }

  /**
   * Adds merges of the ranks after those added before, lowest first. Of two merges of one pair, the
   * lower rank wins, as in llama.cpp. The slots are fetched some merges ahead, to overlap their misses.
   */
  void add(std::span<const merge_ids> merges) noexcept {
    constexpr std::size_t ahead = 16;
    const std::size_t first = merges_.size();
    merges_.insert(merges_.end(), merges.begin(), merges.end());
    const std::size_t n = merges.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (i + ahead < n) {
        const merge_ids& a = merges[i + ahead];
        __builtin_prefetch(&slots_[detail::home_slot(hash(key(a.left, a.right)), slots_.size())], 1);
      }
      const std::uint64_t k = key(merges[i].left, merges[i].right), h = hash(k);
      const std::uint32_t tag = tag_of(h);
      for (std::size_t s = detail::home_slot(h, slots_.size());; s = s + 1 == slots_.size() ? 0 : s + 1) {
        std::uint32_t& e = slots_[s];
        if (e == 0) {
          e = tag | static_cast<std::uint32_t>(first + i + 1);
          ++size_;
          break;
        }
        if ((e & ~rank_mask()) == tag && key(merges_[rank_of(e)].left, merges_[rank_of(e)].right) == k) break;
      }
    }
  }

  /** The merge of `left` then `right`, or a merge with rank -1. */
  merge find(token_id left, token_id right) const noexcept {
    if (slots_.empty() || left < 0 || right < 0) return {};
    const std::uint64_t k = key(left, right), h = hash(k);
    const std::uint32_t tag = tag_of(h);
    for (std::size_t i = detail::home_slot(h, slots_.size());; i = i + 1 == slots_.size() ? 0 : i + 1) {
      const std::uint32_t e = slots_[i];
      if (e == 0) return {};
      if ((e & ~rank_mask()) == tag) {
        const merge_ids& m = merges_[rank_of(e)];
        if (m.left == left && m.right == right) return {static_cast<std::int32_t>(rank_of(e)), m.result};
      }
    }
  }

  /** The number of pairs that merge (a pair listed twice counts once). */
  std::size_t size() const noexcept { return size_; }

 private:
  static std::uint64_t key(token_id l, token_id r) noexcept {
    return (std::uint64_t{static_cast<std::uint32_t>(l)} << 32) | static_cast<std::uint32_t>(r);
  }
  static std::uint64_t hash(std::uint64_t k) noexcept {
    k ^= k >> 31;
    k *= 0x7FB5D329728EA185ull;
    return k ^ (k >> 27);
  }
  // A slot: the rank + 1 in the low rank_bits_ bits (0: empty), a tag from the hash's low bits above
  // them (the home slot comes from its high bits).
  std::uint32_t rank_mask() const noexcept { return (std::uint32_t{1} << rank_bits_) - 1; }
  std::uint32_t tag_of(std::uint64_t h) const noexcept { return static_cast<std::uint32_t>(h) & ~rank_mask(); }
  std::size_t rank_of(std::uint32_t e) const noexcept { return (e & rank_mask()) - 1; }
  std::vector<merge_ids> merges_;     // by rank
  std::vector<std::uint32_t> slots_;  // the index
  std::size_t size_ = 0;
  unsigned rank_bits_ = 16;
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_TOKEN_TABLE_HPP
