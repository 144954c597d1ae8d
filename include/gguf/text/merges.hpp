#ifndef GGUF_TEXT_MERGES_HPP
#define GGUF_TEXT_MERGES_HPP

#include <algorithm>
#include <atomic>
#include <bit>
#include <memory>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/detail/thread_team.hpp"
#include "gguf/format/value.hpp"
#include "gguf/result.hpp"
#include "gguf/text/token_table.hpp"

GGUF_BEGIN_NAMESPACE
namespace text::detail {

/// A merge of `tokenizer.ggml.merges` split at its space, each half hashed (`hash_bytes`).
struct merge_text {
  const char* text = nullptr;      ///< "first second", in the file
  std::uint32_t first = 0;         ///< the length of the first half
  std::uint32_t second = 0;        ///< the length of the second half
  std::uint64_t hash[2] = {0, 0};  ///< of each half
  bool padded = false;             ///< whether 16 bytes may be read from the start of each half

  /// The first half.
  std::string_view left() const noexcept { return {text, first}; }
  /// The second half.
  std::string_view right() const noexcept { return {text + first + 1, second}; }
  /// The merge as written.
  std::string_view whole() const noexcept { return {text, std::size_t{first} + 1 + second}; }
};

/// The first ' ' among bytes 1 to 15 of the 16 bytes at p, else 16 (a little-endian host).
inline std::size_t find_space(const char* p) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull, spaces = 0x2020202020202020ull;
  const auto spaces_in = [](std::uint64_t w) {
    w ^= spaces;
    return (w - ones) & ~w & highs;  // the lowest flag is exact
  };
  const std::uint64_t a = spaces_in(load64(p)) & ~std::uint64_t{0x80}, b = spaces_in(load64(p + 8));
  if (a) return static_cast<std::size_t>(std::countr_zero(a)) / 8;
  if (b) return 8 + static_cast<std::size_t>(std::countr_zero(b)) / 8;
  return 16;
}

/** Reads the merges of an array of strings one after the other, split at their first space after byte 0 (as llama.cpp
 * splits them). */
class merge_reader {
 public:
  /// Where a merge is in the array.
  using position = array_view::typed_range<std::string_view>::iterator;

  /** The merges of `a`, an array of strings. */
  explicit merge_reader(const array_view& a) noexcept
      : merge_reader(a, strings(a).begin(), static_cast<std::size_t>(a.size())) {}

  /** `count` merges of `a` from `at`. */
  merge_reader(const array_view& a, position at, std::size_t count) noexcept
      : it_(at), left_(count), end_(reinterpret_cast<const char*>(a.bytes().data() + a.bytes().size())) {}

  /** The strings of `a`, an array of strings (else none). */
  static array_view::typed_range<std::string_view> strings(const array_view& a) noexcept {
    return a.as<std::string_view>().value_or(array_view::typed_range<std::string_view>{});
  }

  /** The merges not read yet. */
  std::size_t left() const noexcept { return left_; }

  /**
   * Appends the next `n` merges (or those left) to `out`, which has room for them (nothing is allocated).
   * @return false at a merge without a space (`bad()`); the merges before it are in `out`
   */
  bool read(std::vector<merge_text>& out, std::size_t n) noexcept {
    for (; n > 0 && left_ > 0; --n, --left_, ++it_) {
      const std::string_view w = *it_;
      // 16 bytes may be read past each half where the array goes on that far (nearly every merge)
      const bool padded =
          std::endian::native == std::endian::little && end_ - w.data() >= static_cast<std::ptrdiff_t>(w.size() + 16);
      std::size_t sp = padded ? find_space(w.data()) : 16;
      if (sp >= 16) {
        for (sp = padded ? 16 : 1; sp < w.size() && w[sp] != ' ';) ++sp;
      }
      if (sp >= w.size()) return false;
      merge_text m{w.data(), static_cast<std::uint32_t>(sp), static_cast<std::uint32_t>(w.size() - sp - 1), {}, padded};
      const char* const r = w.data() + sp + 1;
      m.hash[0] = padded ? hash_bytes_padded(w.data(), m.first) : hash_bytes(w.data(), m.first);
      m.hash[1] = padded ? hash_bytes_padded(r, m.second) : hash_bytes(r, m.second);
      out.push_back(m);
    }
    return true;
  }

  /** The merge `read` stopped at. */
  std::string_view bad() const noexcept { return *it_; }

 private:
  position it_;
  std::size_t left_;
  const char* end_;
};

/**
 * Finds the tokens of merges: each half's and the joined text's. The lookups of one merge do not wait
 * for those of the one before, so the processor overlaps their cache misses (prefetching them by hand
 * was slower). Nothing is allocated after it is made.
 */
class merge_resolver {
 public:
  /** Looks up in `tokens`. */
  explicit merge_resolver(const token_table& tokens) : tokens_(&tokens), longest_(tokens.max_length()) {
    joined_.reserve(longest_);
  }

  /**
   * Writes the ids of `merges` to `out`, in order.
   * @return how many merges were resolved: fewer than `merges.size()` at the first whose texts are not tokens
   */
  std::size_t resolve(std::span<const merge_text> merges, merge_ids* out) noexcept {
    const token_table& t = *tokens_;
    for (std::size_t i = 0; i < merges.size(); ++i) {
      const merge_text& m = merges[i];
      const std::string_view first = m.left(), second = m.right();
      const bool padded = m.padded && first.size() <= 16 && second.size() <= 16;
      const token_id l = padded ? t.find_padded(first, m.hash[0]) : t.find(first, m.hash[0]);
      const token_id r = padded ? t.find_padded(second, m.hash[1]) : t.find(second, m.hash[1]);
      // A merge's token is nearly always the one after the previous merge's (a BPE vocabulary lists
      // the merged tokens in rank order): that one is compared first, in order through the texts.
      token_id j = last_joined_ + 1;
      const std::string_view guess = j >= 0 && static_cast<std::size_t>(j) < t.size() ? t.text(j) : std::string_view{};
      const bool same = guess.size() == first.size() + second.size() &&
                        (padded ? equal_padded(guess.data(), first.data(), first.size()) &&
                                      equal_padded(guess.data() + first.size(), second.data(), second.size())
                                : equal_bytes(guess.data(), first.data(), first.size()) &&
                                      equal_bytes(guess.data() + first.size(), second.data(), second.size()));
      if (!same) {
        if (first.size() + second.size() > longest_) {
          j = no_token;  // longer than any token
        } else {
          joined_.assign(first).append(second);  // within the room reserved
          j = t.find_joined(first, second, hash_bytes(joined_.data(), joined_.size()));
        }
      }
      last_joined_ = j;
      if (l == no_token || r == no_token || j == no_token) return i;
      out[i] = {l, r, j};
    }
    return merges.size();
  }

 private:
  const token_table* tokens_;
  std::size_t longest_;
  token_id last_joined_ = no_token;
  std::string joined_;
};

/// How far `resolve_merges` went.
struct merges_resolved {
  std::size_t good = 0;   ///< the merges resolved before the first bad one
  std::string_view bad;   ///< the first bad merge, if any
  bool no_space = false;  ///< whether it has no space (else it names a text that is not a token)

  /// The error that names the bad merge.
  error to_error() const {
    return error{errc::bad_vocabulary, no_space ? "a merge is not two tokens separated by a space"
                                                : "a merge names a text that is not a token"}
        .about("tokenizer.ggml.merges", ": ", bad);
  }
};

/**
 * Reads and resolves `count` merges from `reader` into `out`, a chunk at a time (so that they stay in
 * the cache), with `todo` as room for a chunk (its capacity).
 */
inline merges_resolved resolve_merges(merge_reader& reader, merge_resolver& resolver, std::size_t count, merge_ids* out,
                                      std::vector<merge_text>& todo) noexcept {
  for (std::size_t done = 0; done < count;) {
    todo.clear();
    const bool read = reader.read(todo, std::min(todo.capacity(), count - done));
    const std::size_t good = resolver.resolve(todo, out + done);
    if (good < todo.size()) return {done + good, todo[good].whole(), false};
    done += todo.size();
    if (!read) return {done, reader.bad(), true};
  }
  return {count, {}, false};
}

/// The merges read and resolved at a time: their texts and ids stay in the cache.
inline constexpr std::size_t merge_chunk = 2048;

/// The number of chunks of the merges of `a`, an array of strings (`merge_chunk` merges a chunk).
inline std::size_t merge_chunks(const array_view& a) noexcept {
  return static_cast<std::size_t>((a.size() + merge_chunk - 1) / merge_chunk);
}

/// Appends where each chunk of the merges of `a` starts to `starts`, which has room for them (nothing
/// is allocated: `merge_chunks(a)`).
inline void find_merge_chunks(const array_view& a, std::vector<merge_reader::position>& starts) noexcept {
  const auto n = static_cast<std::size_t>(a.size());
  std::size_t i = 0;
  const auto strings = merge_reader::strings(a);
  for (auto it = strings.begin(); i < n; ++it, ++i) {
    if (i % merge_chunk == 0) starts.push_back(it);
  }
}

/**
 * The merge table of `tokenizer.ggml.merges` (`a`, an array of strings) over `tokens`, read and resolved
 * in chunks. With a team of more than one thread, the threads take the chunks in turn.
 * @param team   the threads to use
 * @param starts where each chunk starts (`find_merge_chunks`), needed only with more than one thread
 *               (else found here)
 * @return the table; `bad_vocabulary` naming the first merge that is no two tokens
 */
inline result<merge_table> load_merges(const array_view& a, const token_table& tokens,
                                       ::gguf::detail::thread_team& team,
                                       std::vector<merge_reader::position> starts = {}) {
  constexpr std::size_t chunk = merge_chunk;
  const auto n = static_cast<std::size_t>(a.size());
  auto by_rank = std::make_unique_for_overwrite<merge_ids[]>(n);
  const std::size_t n_chunks = (n + chunk - 1) / chunk;
  if (team.size() == 1 || n_chunks < 8) {
    merge_reader reader(a);
    merge_resolver resolver(tokens);
    std::vector<merge_text> todo;
    todo.reserve(chunk);
    if (const merges_resolved r = resolve_merges(reader, resolver, n, by_rank.get(), todo); r.good < n) {
      return r.to_error();
    }
    return merge_table(std::move(by_rank), n, team);
  }
  if (starts.size() != n_chunks) {
    starts.clear();
    starts.reserve(n_chunks);
    find_merge_chunks(a, starts);
  }
  struct alignas(64) thread_state {  // each thread's own, a cache line apart
    explicit thread_state(const token_table& t) : resolver(t) { todo.reserve(chunk); }
    merge_resolver resolver;
    std::vector<merge_text> todo;
  };
  std::vector<thread_state> state;
  state.reserve(team.size());
  for (unsigned k = 0; k < team.size(); ++k) state.emplace_back(tokens);
  std::atomic<std::size_t> first_bad{n};  // the first bad merge found so far
  team.run(n_chunks, [&](std::size_t c, unsigned thread) {
    const std::size_t first = c * chunk, count = std::min(chunk, n - first);
    if (first >= first_bad.load(std::memory_order_relaxed)) return;
    merge_reader reader(a, starts[c], count);
    thread_state& my = state[thread];
    const std::size_t good = resolve_merges(reader, my.resolver, count, by_rank.get() + first, my.todo).good;
    if (good < count) {
      std::size_t seen = first_bad.load(std::memory_order_relaxed);
      while (first + good < seen && !first_bad.compare_exchange_weak(seen, first + good)) {}
    }
  });
  if (const std::size_t bad = first_bad.load(); bad < n) {
    // its text, read again on this thread
    merge_reader reader(a, starts[bad / chunk], bad % chunk + 1);
    merge_resolver resolver(tokens);
    std::vector<merge_text> todo;
    todo.reserve(chunk);
    std::vector<merge_ids> ids(chunk);
    return resolve_merges(reader, resolver, bad % chunk + 1, ids.data(), todo).to_error();
  }
  return merge_table(std::move(by_rank), n, team);
}

/** `load_merges` on the calling thread. */
inline result<merge_table> load_merges(const array_view& a, const token_table& tokens) {
  ::gguf::detail::thread_team alone;
  return load_merges(a, tokens, alone);
}

}  // namespace text::detail
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_MERGES_HPP
