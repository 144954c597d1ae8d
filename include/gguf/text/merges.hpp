#ifndef GGUF_TEXT_MERGES_HPP
#define GGUF_TEXT_MERGES_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
  /** The merges of `a`, an array of strings. */
  explicit merge_reader(const array_view& a) noexcept
      : range_(a.as<std::string_view>().value_or(array_view::typed_range<std::string_view>{})),
        it_(range_.begin()),
        left_(static_cast<std::size_t>(a.size())),
        end_(reinterpret_cast<const char*>(a.bytes().data() + a.bytes().size())) {}

  /** The merges not read yet. */
  std::size_t left() const noexcept { return left_; }

  /**
   * Appends the next `n` merges (or those left) to `out`.
   * @return `bad_vocabulary` naming a merge without a space; the merges before it are in `out`
   */
  result<void> read(std::vector<merge_text>& out, std::size_t n) {
    for (; n > 0 && left_ > 0; --n, --left_, ++it_) {
      const std::string_view w = *it_;
      // 16 bytes may be read past each half where the array goes on that far (nearly every merge)
      const bool padded =
          std::endian::native == std::endian::little && end_ - w.data() >= static_cast<std::ptrdiff_t>(w.size() + 16);
      std::size_t sp = padded ? find_space(w.data()) : 16;
      if (sp >= 16) {
        for (sp = padded ? 16 : 1; sp < w.size() && w[sp] != ' ';) ++sp;
      }
      if (sp >= w.size()) {
        return error{errc::bad_vocabulary, "a merge is not two tokens separated by a space"}.about(
            "tokenizer.ggml.merges", ": ", w);
      }
      merge_text m{w.data(), static_cast<std::uint32_t>(sp), static_cast<std::uint32_t>(w.size() - sp - 1), {}, padded};
      const char* const r = w.data() + sp + 1;
      m.hash[0] = padded ? hash_bytes_padded(w.data(), m.first) : hash_bytes(w.data(), m.first);
      m.hash[1] = padded ? hash_bytes_padded(r, m.second) : hash_bytes(r, m.second);
      out.push_back(m);
    }
    return {};
  }

 private:
  array_view::typed_range<std::string_view> range_;
  array_view::typed_range<std::string_view>::iterator it_;
  std::size_t left_;
  const char* end_;
};

/**
 * Finds the tokens of merges: each half's and the joined text's. The lookups of one merge do not wait
 * for those of the one before, so the processor overlaps their cache misses (prefetching them by hand
 * was slower).
 */
class merge_resolver {
 public:
  /** Looks up in `tokens`. */
  explicit merge_resolver(const token_table& tokens) noexcept : tokens_(&tokens) {}

  /**
   * Appends the ids of `merges` to `out`, in order.
   * @return `bad_vocabulary` naming the first merge whose texts are not tokens
   */
  result<void> resolve(std::span<const merge_text> merges, std::vector<merge_ids>& out) {
    const token_table& t = *tokens_;
    for (const merge_text& m : merges) {
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
        joined_.assign(first).append(second);
        j = t.find_joined(first, second, hash_bytes(joined_.data(), joined_.size()));
      }
      last_joined_ = j;
      if (l == no_token || r == no_token || j == no_token) {
        return error{errc::bad_vocabulary, "a merge names a text that is not a token"}.about("tokenizer.ggml.merges",
                                                                                             ": ", m.whole());
      }
      out.push_back({l, r, j});
    }
    return {};
  }

 private:
  const token_table* tokens_;
  token_id last_joined_ = no_token;
  std::string joined_;
};

/**
 * The merge table of `tokenizer.ggml.merges` (`a`, an array of strings) over `tokens`, on the calling
 * thread: read and resolved in chunks that stay in the cache.
 * @return the table; `bad_vocabulary` naming the first merge that is no two tokens
 */
inline result<merge_table> load_merges(const array_view& a, const token_table& tokens) {
  constexpr std::size_t chunk = 2048;
  const auto n = static_cast<std::size_t>(a.size());
  merge_reader reader(a);
  merge_resolver resolver(tokens);
  merge_table table(n);
  std::vector<merge_text> todo;
  std::vector<merge_ids> ids;
  todo.reserve(chunk);
  ids.reserve(chunk);
  while (reader.left() > 0) {
    todo.clear();
    ids.clear();
    const result<void> read = reader.read(todo, chunk);
    if (auto r = resolver.resolve(todo, ids); !r) return r.error();
    if (!read) return read.error();  // after the merges before it
    table.add(ids);
  }
  return table;
}

}  // namespace text::detail
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_MERGES_HPP
