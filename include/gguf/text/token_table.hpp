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

#include "gguf/text/slot_index.hpp"
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

}  // namespace detail

/**
 * Every token's text in one buffer, with an open-addressing index from text to id. The table owns its
 * texts (so it never points into a file that may be closed): made for a number of tokens and bytes,
 * its texts written (`write`, by several threads at once if need be), then indexed (`index`).
 */
class token_table {
 public:
  /** An empty table. */
  token_table() = default;

  /**
   * A table of `n` tokens whose texts take `bytes` bytes in all, to be written with `write`.
   * @param n               the number of tokens
   * @param bytes           the sum of their lengths
   * @param hash_on_writing whether `write` hashes each text for `index` (which otherwise hashes them
   *                        itself): worth it when several threads index, each looking at every hash
   */
  token_table(std::size_t n, std::size_t bytes, bool hash_on_writing = false)
      : text_(std::make_unique_for_overwrite<char[]>(bytes + padding)),
        offsets_(std::make_unique_for_overwrite<std::uint32_t[]>(n + 1)),
        hashes_(hash_on_writing ? std::make_unique_for_overwrite<std::uint64_t[]>(n) : nullptr),
        n_(n),
        bytes_(bytes) {
    std::memset(text_.get() + bytes, 0, padding);
    offsets_[0] = 0;
  }

  /**
   * Writes the texts of tokens `first`, `first + 1`, ... in order, from byte `at` of the table. Stretches
   * of tokens apart may be written by threads at once; every text must be written before `index`.
   * @param first    the id of the first token
   * @param at       where its text goes: the sum of the lengths of the tokens before it
   * @param limit    where the text of the token after the last one goes (its bytes are not touched)
   * @param for_each called with a function to call with each token's text in order, and whether 16 bytes
   *                 may be read from the text's start; the lengths must add up to `limit - at`
   * @return the byte after the last text
   */
  template <class ForEach>
  std::size_t write(token_id first, std::size_t at, std::size_t limit, ForEach&& for_each) noexcept {
    auto id = static_cast<std::size_t>(first);
    for_each([&](std::string_view s, bool readable) {
      char* const to = text_.get() + at;
      if (readable && s.size() <= 16 && at + 16 <= limit) {
        std::memcpy(to, s.data(), 16);  // one copy for every short text; the next text overwrites the rest
      } else if (!s.empty()) {
        std::memcpy(to, s.data(), s.size());
      }
      if (hashes_) {  // hashed where it came from: past a stretch's last text, another thread may be writing
        hashes_[id] = readable ? detail::hash_bytes_padded(s.data(), s.size()) : detail::hash_bytes(s.data(), s.size());
      }
      at += s.size();
      offsets_[++id] = static_cast<std::uint32_t>(at);
    });
    return at;
  }

  /**
   * Indexes every token by its text, once all are written.
   * @param team the threads to use
   * @return the first token whose text repeats an earlier one's (lookups find the earlier one), or `no_token`
   */
  token_id index(::gguf::detail::thread_team& team) {
    max_length_ = 0;
    for (std::size_t i = 0; i < n_; ++i) max_length_ = std::max(max_length_, length(i));
    const auto same = [&](std::uint32_t earlier, std::size_t id) { return detail::same_text(view(earlier), view(id)); };
    detail::slot_index::repeats r;
    if (hashes_) {
      slots_ = detail::slot_index::build(
          n_, [&](std::size_t id) { return hashes_[id]; }, same, team, r);
    } else {  // every text is written: 16 bytes may be read from each
      slots_ = detail::slot_index::build(
          n_, [&](std::size_t id) { return detail::hash_bytes_padded(start(id), length(id)); }, same, team, r);
    }
    hashes_.reset();
    return static_cast<token_id>(r.first);  // none is no_token
  }

  /** `index` on the calling thread. */
  token_id index() {
    ::gguf::detail::thread_team alone;
    return index(alone);
  }

  /** The number of tokens. */
  std::size_t size() const noexcept { return n_; }

  /** The text of token `id` (`0 <= id < size()`), a view into the table. */
  std::string_view text(token_id id) const noexcept { return view(static_cast<std::size_t>(id)); }

  /** The length of the longest text (once indexed). */
  std::size_t max_length() const noexcept { return max_length_; }

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

  /** The bytes the table holds (texts, offsets and index). */
  std::size_t memory_bytes() const noexcept {
    return bytes_ + padding + (n_ + 1) * sizeof(std::uint32_t) + slots_.memory_bytes();
  }

 private:
  const char* start(std::size_t i) const noexcept { return text_.get() + offsets_[i]; }
  std::size_t length(std::size_t i) const noexcept { return offsets_[i + 1] - offsets_[i]; }
  std::string_view view(std::size_t i) const noexcept { return {start(i), length(i)}; }
  // The token in the first slot from h's home whose tag matches and whose text `same` accepts.
  template <class Same>
  token_id probe(std::uint64_t h, Same&& same) const noexcept {
    return static_cast<token_id>(slots_.find(h, [&](std::uint32_t id) { return same(view(id)); }));
  }
  static constexpr std::size_t padding = 16;  // readable bytes past the last text (hash_bytes_padded)
  std::unique_ptr<char[]> text_;
  std::unique_ptr<std::uint32_t[]> offsets_;
  std::unique_ptr<std::uint64_t[]> hashes_;  // of each text, from `write` to `index` (if asked for)
  std::size_t n_ = 0, bytes_ = 0, max_length_ = 0;
  detail::slot_index slots_;
};

/**
 * One merge of `tokenizer.ggml.merges` by ids: `left` then `right` make `result`. A plain aggregate
 * (arrays of them are made without writing them first): make one with all three ids.
 */
struct merge_ids {
  token_id left;    ///< the first token
  token_id right;   ///< the second token
  token_id result;  ///< the token of the two texts joined
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

  /**
   * The table of the merges in rank order, `n` of them at `by_rank`. Of two merges of one pair, the
   * lower rank wins, as in llama.cpp.
   * @param by_rank the merges, lowest rank first
   * @param n       how many
   * @param team    the threads to index them with
   */
  merge_table(std::unique_ptr<merge_ids[]> by_rank, std::size_t n, ::gguf::detail::thread_team& team)
      : merges_(std::move(by_rank)), n_(n) {
    index(team);
  }

  /** The table of `by_rank`, the merges in rank order (copied), indexed on the calling thread. */
  explicit merge_table(std::span<const merge_ids> by_rank)
      : merges_(std::make_unique_for_overwrite<merge_ids[]>(by_rank.size())), n_(by_rank.size()) {
    std::copy(by_rank.begin(), by_rank.end(), merges_.get());
    ::gguf::detail::thread_team alone;
    index(alone);
  }

  /** The merge of `left` then `right`, or a merge with rank -1. */
  merge find(token_id left, token_id right) const noexcept {
    if (left < 0 || right < 0) return {};
    const std::uint32_t rank = slots_.find(hash(key(left, right)), [&](std::uint32_t r) {
      const merge_ids& m = merges_[r];
      return m.left == left && m.right == right;
    });
    if (rank == detail::slot_index::none) return {};
    return {static_cast<std::int32_t>(rank), merges_[rank].result};
  }

  /** The number of pairs that merge (a pair listed twice counts once). */
  std::size_t size() const noexcept { return size_; }

 private:
  void index(::gguf::detail::thread_team& team) {
    detail::slot_index::repeats r;
    slots_ = detail::slot_index::build(
        n_, [&](std::size_t i) { return hash(key(merges_[i])); },
        [&](std::uint32_t earlier, std::size_t i) { return key(merges_[earlier]) == key(merges_[i]); }, team, r);
    size_ = n_ - r.count;
  }
  static std::uint64_t key(token_id l, token_id r) noexcept {
    return (std::uint64_t{static_cast<std::uint32_t>(l)} << 32) | static_cast<std::uint32_t>(r);
  }
  static std::uint64_t key(const merge_ids& m) noexcept { return key(m.left, m.right); }
  static std::uint64_t hash(std::uint64_t k) noexcept {
    k ^= k >> 31;
    k *= 0x7FB5D329728EA185ull;
    return k ^ (k >> 27);
  }
  std::unique_ptr<merge_ids[]> merges_;  // by rank
  std::size_t n_ = 0;
  detail::slot_index slots_;
  std::size_t size_ = 0;
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_TOKEN_TABLE_HPP
