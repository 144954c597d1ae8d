#ifndef GGUF_TEXT_SPECIAL_TOKENS_HPP
#define GGUF_TEXT_SPECIAL_TOKENS_HPP

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gguf/text/token_table.hpp"
#include "gguf/text/vocabulary.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/** A stretch of raw text, or one special token found in it. */
struct fragment {
  std::size_t begin = 0;      ///< first byte of the stretch (raw text)
  std::size_t length = 0;     ///< its length (raw text)
  token_id token = no_token;  ///< the special token, or no_token for raw text
};

/**
 * Special tokens cut out of a text before it is tokenized, exactly as llama.cpp's
 * `tokenizer_st_partition`: each token in turn, longest first, takes its leftmost non-overlapping
 * occurrences in the raw stretches the tokens before it left; an lstrip/rstrip token eats the ASCII
 * whitespace beside it; control and unknown tokens only with parse_special.
 *
 * llama.cpp searches the text once per special token; here one pass over the text finds every
 * occurrence of every special token (a byte trie of their texts), and each token that occurs is then
 * applied in llama.cpp's order to the stretches, in one merge pass.
 */
class special_matcher {
 public:
  /** The matcher of `v`'s special tokens; `v` must outlive it. */
  explicit special_matcher(const vocabulary& v) : v_(&v) {
    nodes_.push_back({});
    for (std::size_t rank = 0; rank < v.special_tokens.size(); ++rank) {
      const std::string_view t = v.tokens.text(v.special_tokens[rank]);
      std::uint32_t n = 0;
      for (const char c : t) n = child(n, static_cast<unsigned char>(c));
      if (nodes_[n].rank < 0) nodes_[n].rank = static_cast<std::int32_t>(rank);  // equal texts cannot occur
      first_bytes_[static_cast<unsigned char>(t.front())] = true;
    }
  }

  /**
   * Cuts `text` into raw stretches and special tokens.
   * @param text          the text
   * @param parse_special also control and unknown tokens
   * @param out           receives the fragments in text order (cleared first)
   */
  void partition(std::string_view text, bool parse_special, std::vector<fragment>& out) const {
    out.clear();
    if (text.empty()) return;
    out.push_back({0, text.size(), no_token});
    // every occurrence of every special token that applies: (rank, position)
    std::vector<std::pair<std::uint32_t, std::uint32_t>> hits;
    for (std::size_t p = 0; p < text.size(); ++p) {
      if (!first_bytes_[static_cast<unsigned char>(text[p])]) continue;
      std::uint32_t n = 0;
      for (std::size_t q = p; q < text.size(); ++q) {
        n = find_child(n, static_cast<unsigned char>(text[q]));
        if (n == 0) break;
        const std::int32_t rank = nodes_[n].rank;
        if (rank >= 0 && applies(static_cast<std::size_t>(rank), parse_special)) {
          hits.emplace_back(static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(p));
        }
      }
    }
    if (hits.empty()) return;
    std::sort(hits.begin(), hits.end());
    std::vector<fragment> next;
    for (std::size_t i = 0; i < hits.size();) {
      std::size_t j = i;
      while (j < hits.size() && hits[j].first == hits[i].first) ++j;
      apply(text, hits[i].first, hits.data() + i, hits.data() + j, out, next);
      out.swap(next);
      i = j;
    }
  }

 private:
  struct node {
    std::uint32_t first_child = 0, next_sibling = 0;  // 0: none (the root is no one's child)
    unsigned char byte = 0;
    std::int32_t rank = -1;  // index into vocabulary::special_tokens of the token ending here
  };

  bool applies(std::size_t rank, bool parse_special) const noexcept {
    return parse_special || !(v_->attr(v_->special_tokens[rank]) & (token_attr::control | token_attr::unknown));
  }

  std::uint32_t find_child(std::uint32_t n, unsigned char b) const noexcept {
    for (std::uint32_t c = nodes_[n].first_child; c != 0; c = nodes_[c].next_sibling) {
      if (nodes_[c].byte == b) return c;
    }
    return 0;
  }

  std::uint32_t child(std::uint32_t n, unsigned char b) {
    if (const std::uint32_t c = find_child(n, b)) return c;
    const auto c = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({0, nodes_[n].first_child, b, -1});
    nodes_[n].first_child = c;
    return c;
  }

  static bool c_space(char c) noexcept { return c == ' ' || (c >= '\t' && c <= '\r'); }

  // One token's occurrences [first, last) (ascending positions) applied to the stretches `in`.
  void apply(std::string_view text, std::uint32_t rank, const std::pair<std::uint32_t, std::uint32_t>* first,
             const std::pair<std::uint32_t, std::uint32_t>* last, const std::vector<fragment>& in,
             std::vector<fragment>& out) const {
    out.clear();
    const token_id id = v_->special_tokens[rank];
    const std::size_t len = v_->tokens.text(id).size();
    const std::uint32_t a = v_->attr(id);
    for (const fragment& f : in) {
      if (f.token != no_token) {
        out.push_back(f);
        continue;
      }
      std::size_t pos = f.begin;
      const std::size_t end = f.begin + f.length;
      while (first != last && first->second < pos) ++first;  // inside an earlier token or stretch
      bool matched = false;
      for (; first != last && first->second + len <= end; ++first) {
        const std::size_t m = first->second;
        if (m < pos) continue;  // overlaps the previous occurrence (or was eaten by rstrip)
        matched = true;
        std::size_t left = m - pos;
        if (a & token_attr::lstrip) {
          while (left > 0 && c_space(text[pos + left - 1])) --left;
        }
        if (left > 0) out.push_back({pos, left, no_token});
        out.push_back({0, 0, id});
        pos = m + len;
        if (pos >= end) break;
        if (a & token_attr::rstrip) {
          while (pos < end && c_space(text[pos])) ++pos;
        }
      }
      if (!matched) {
        out.push_back(f);
      } else if (pos < end) {
        out.push_back({pos, end - pos, no_token});
      }
    }
  }

  const vocabulary* v_;
  std::vector<node> nodes_;
  std::array<bool, 256> first_bytes_{};
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_SPECIAL_TOKENS_HPP
