#ifndef GGUF_TEXT_SPECIAL_TOKENS_HPP
#define GGUF_TEXT_SPECIAL_TOKENS_HPP

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
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
 * `tokenizer_st_partition`: each token in turn (longest first) takes its leftmost non-overlapping
 * occurrences in the raw stretches the tokens before it left; an lstrip/rstrip token eats the ASCII
 * whitespace beside it; control and unknown tokens only with parse_special.
 *
 * llama.cpp searches the text once per special token. Here the result is computed stretch by stretch,
 * which gives the same fragments: a stretch is first cut by the first token in llama.cpp's order that
 * occurs in it (no earlier one can, and the pieces it leaves hold no occurrence of it), then each
 * piece likewise. The token that occurs first in llama.cpp's order is the longest one, so per end
 * position only the longest special token ending there matters: one Aho-Corasick pass over the text
 * finds it, a tree of range minima over those positions answers "the first token of a stretch" and
 * "its next occurrence" in logarithmic time, and a piece whose first bytes continue a match begun
 * before it re-runs the automaton from its start until the two runs agree. Time is linear in the
 * text (times a logarithm) whatever the vocabulary (nested tokens, a megabyte-long token); memory is
 * none for a text in which no special token occurs, else 8 bytes per position inside a partial match
 * of one, plus the fragments waiting to be handed out.
 */
class special_matcher {
 public:
  /** The matcher of `v`'s special tokens; `v` must outlive it. */
  explicit special_matcher(const vocabulary& v) : v_(&v) {
    build_trie(v);
    build_automaton(v);
  }

  /**
   * Cuts `text` into raw stretches and special tokens, calling `emit(fragment)` for each in text order.
   * @param text          the text, at most 2^32 - 2 bytes
   * @param parse_special also control and unknown tokens
   * @param emit          called with each fragment; a raw fragment is never empty
   */
  template <class Emit>
  void partition(std::string_view text, bool parse_special, Emit&& emit) const {
    if (text.empty()) return;
    if (!(parse_special ? any_all_ : any_plain_)) {  // no token applies (SPM's are all control tokens)
      emit(fragment{0, text.size(), no_token});
      return;
    }
    const std::vector<std::uint32_t>& out = parse_special ? out_all_ : out_plain_;
    run r{text, out, {}, {}, {}};
    scan(r);
    if (r.records.empty() || r.minima.empty() || r.minima[1] == none) {
      emit(fragment{0, text.size(), no_token});
      return;
    }
    std::vector<item> stack{{0, static_cast<std::uint32_t>(text.size()), no_token}};
    std::vector<item> split;
    std::vector<std::uint32_t> local;
    while (!stack.empty()) {
      const item it = stack.back();
      stack.pop_back();
      if (it.token != no_token) {
        emit(fragment{0, 0, it.token});
        continue;
      }
      split.clear();
      cut(r, it.begin, it.end, local, split);
      if (split.empty()) {
        emit(fragment{it.begin, static_cast<std::size_t>(it.end - it.begin), no_token});
      } else {
        stack.insert(stack.end(), split.rbegin(), split.rend());
      }
    }
  }

  /** `partition` into a vector (cleared first). */
  void partition(std::string_view text, bool parse_special, std::vector<fragment>& out) const {
    out.clear();
    partition(text, parse_special, [&](const fragment& f) { out.push_back(f); });
  }

 private:
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t root = 0;
  static constexpr std::size_t block = 32;  // records per leaf of the minima tree

  // A position inside a partial match: the automaton's state after the byte before `end`.
  struct record {
    std::uint32_t end;
    std::uint32_t state;
  };
  // A piece of text still to cut, or a special token found.
  struct item {
    std::uint32_t begin, end;
    token_id token;
  };
  // One call's state: the records of the whole text, and the minima of their ranks (a tree over blocks).
  struct run {
    std::string_view text;
    const std::vector<std::uint32_t>& out;  // per state: the rank of the longest token ending there
    std::vector<record> records;
    std::vector<std::uint32_t> minima;  // 1-based heap; leaves from `leaves`
    std::size_t leaves = 0;
  };

  // ---- building --------------------------------------------------------------------------------

  // A trie of the texts, children in linked lists, then renumbered breadth first so that each node's
  // children are one range of ids in byte order.
  void build_trie(const vocabulary& v) {
    struct tmp {
      std::uint32_t first_child = 0, next_sibling = 0;
      unsigned char byte = 0;
      std::uint32_t rank = none;
    };
    std::vector<tmp> t(1);
    const auto find = [&](std::uint32_t n, unsigned char b) -> std::uint32_t {
      for (std::uint32_t c = t[n].first_child; c != 0; c = t[c].next_sibling)
        if (t[c].byte == b) return c;
      return 0;
    };
    for (std::size_t rank = 0; rank < v.special_tokens.size(); ++rank) {
      std::uint32_t n = 0;
      for (const char ch : v.tokens.text(v.special_tokens[rank])) {
        const auto b = static_cast<unsigned char>(ch);
        std::uint32_t c = find(n, b);
        if (c == 0) {
          c = static_cast<std::uint32_t>(t.size());
          t.push_back({0, t[n].first_child, b, none});
          t[n].first_child = c;
        }
        n = c;
      }
      if (n != 0 && t[n].rank == none) t[n].rank = static_cast<std::uint32_t>(rank);  // the first of equal texts
    }
    // breadth first, children sorted by byte
    const std::size_t n_nodes = t.size();
    std::vector<std::uint32_t> order{0}, kids;
    order.reserve(n_nodes);
    first_child_.assign(n_nodes + 1, 0);
    byte_.assign(n_nodes, 0);
    terminal_.assign(n_nodes, none);
    std::vector<std::uint32_t> new_id(n_nodes, 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::uint32_t old = order[i];
      kids.clear();
      for (std::uint32_t c = t[old].first_child; c != 0; c = t[c].next_sibling) kids.push_back(c);
      std::sort(kids.begin(), kids.end(), [&](std::uint32_t a, std::uint32_t b) { return t[a].byte < t[b].byte; });
      first_child_[i] = static_cast<std::uint32_t>(order.size());
      for (const std::uint32_t c : kids) {
        new_id[c] = static_cast<std::uint32_t>(order.size());
        order.push_back(c);
      }
      byte_[i] = t[old].byte;
      terminal_[i] = t[old].rank;
    }
    first_child_[n_nodes] = static_cast<std::uint32_t>(n_nodes);
    root_next_.fill(root);
    for (std::uint32_t c = first_child_[0]; c < first_child_[1]; ++c) root_next_[byte_[c]] = c;
    for (std::size_t i = 0; i < v.special_tokens.size(); ++i) {
      lengths_.push_back(static_cast<std::uint32_t>(v.tokens.text(v.special_tokens[i]).size()));
      attrs_.push_back(v.attr(v.special_tokens[i]));
    }
  }

  // Failure links and, per state, the longest token (applicable with and without parse_special) that
  // ends there: breadth first, each from its parent's.
  void build_automaton(const vocabulary& v) {
    const std::size_t n_nodes = byte_.size();
    fail_.assign(n_nodes, root);
    out_all_.assign(n_nodes, none);
    out_plain_.assign(n_nodes, none);
    for (std::uint32_t n = 0; n < n_nodes; ++n) {
      for (std::uint32_t c = first_child_[n]; c < first_child_[n + 1]; ++c) {
        fail_[c] = n == root ? root : next(fail_[n], byte_[c]);
      }
      if (n == root) continue;
      const std::uint32_t rank = terminal_[n];
      const bool control = rank != none && (attrs_[rank] & (token_attr::control | token_attr::unknown)) != 0;
      out_all_[n] = rank != none ? rank : out_all_[fail_[n]];
      out_plain_[n] = rank != none && !control ? rank : out_plain_[fail_[n]];
      any_all_ = any_all_ || rank != none;
      any_plain_ = any_plain_ || (rank != none && !control);
    }
    (void)v;
  }

  std::uint32_t child(std::uint32_t n, unsigned char b) const noexcept {
    std::uint32_t lo = first_child_[n], hi = first_child_[n + 1];
    while (lo < hi) {  // binary search: the root and a few others have many children
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (byte_[mid] < b) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo < first_child_[n + 1] && byte_[lo] == b ? lo : root;
  }

  // The automaton's step: the longest suffix of (state's text + b) that is a prefix of a token.
  std::uint32_t next(std::uint32_t s, unsigned char b) const noexcept {
    while (s != root) {
      if (const std::uint32_t c = child(s, b); c != root) return c;
      s = fail_[s];
    }
    return root_next_[b];
  }

  // ---- one call --------------------------------------------------------------------------------

  // A pass over the text: does any token apply? Then another: a record per position inside a partial
  // match, and the minima tree. (Text without special tokens, or with only the beginnings of some, costs
  // no memory.)
  void scan(run& r) const {
    const auto* p = reinterpret_cast<const unsigned char*>(r.text.data());
    const auto n = static_cast<std::uint32_t>(r.text.size());
    const auto walk = [&](auto&& at) {
      std::uint32_t s = root;
      for (std::uint32_t i = 0; i < n; ++i) {
        if (s == root) {
          while (i < n && root_next_[p[i]] == root) ++i;  // most text: no token starts here
          if (i == n) break;
        }
        s = next(s, p[i]);
        if (s != root && at(i + 1, s)) return;
      }
    };
    bool any = false;
    std::size_t count = 0;  // the records there will be: reserved, not grown (8 bytes a byte at worst)
    walk([&](std::uint32_t, std::uint32_t s) {
      any = any || r.out[s] != none;
      ++count;
      return false;
    });
    if (!any) return;
    r.records.reserve(count);
    walk([&](std::uint32_t end, std::uint32_t s) {
      r.records.push_back({end, s});
      return false;
    });
    const std::size_t blocks = (r.records.size() + block - 1) / block;
    r.leaves = 1;
    while (r.leaves < blocks) r.leaves *= 2;
    r.minima.assign(2 * r.leaves, none);
    for (std::size_t k = 0; k < r.records.size(); ++k) {
      std::uint32_t& m = r.minima[r.leaves + k / block];
      m = std::min(m, r.out[r.records[k].state]);
    }
    for (std::size_t k = r.leaves - 1; k >= 1; --k) r.minima[k] = std::min(r.minima[2 * k], r.minima[2 * k + 1]);
  }

  static std::uint32_t key(const run& r, std::size_t k) noexcept { return r.out[r.records[k].state]; }

  // The least rank among records [lo, hi).
  static std::uint32_t range_min(const run& r, std::size_t lo, std::size_t hi) {
    std::uint32_t m = none;
    while (lo < hi && lo % block != 0) m = std::min(m, key(r, lo++));
    while (hi > lo && hi % block != 0) m = std::min(m, key(r, --hi));
    std::size_t a = r.leaves + lo / block, b = r.leaves + hi / block;  // whole blocks [a, b)
    while (a < b) {
      if (a & 1) m = std::min(m, r.minima[a++]);
      if (b & 1) m = std::min(m, r.minima[--b]);
      a /= 2, b /= 2;
    }
    return m;
  }

  // The first record at or after `lo` whose rank is at most `rank`, or records.size().
  static std::size_t first_at_most(const run& r, std::size_t lo, std::uint32_t rank) {
    const std::size_t n = r.records.size();
    while (lo < n && lo % block != 0) {
      if (key(r, lo) <= rank) return lo;
      ++lo;
    }
    if (lo >= n) return n;
    // the first whole block from lo / block on with a minimum at most `rank`: up from the leaf, then down
    std::size_t node = r.leaves + lo / block;
    if (r.minima[node] > rank) {
      while (true) {
        while (node & 1) {  // a right child: go up until there is a right sibling
          node /= 2;
          if (node == 0) return n;
        }
        ++node;  // the right sibling
        if (r.minima[node] <= rank) break;
      }
    }
    while (node < r.leaves) node = r.minima[2 * node] <= rank ? 2 * node : 2 * node + 1;
    for (std::size_t k = (node - r.leaves) * block; k < n; ++k)
      if (key(r, k) <= rank) return k;
    return n;
  }

  static std::size_t first_record_ending_at_or_after(const run& r, std::uint32_t end) {
    return static_cast<std::size_t>(std::lower_bound(r.records.begin(), r.records.end(), end,
                                                     [](const record& x, std::uint32_t e) { return x.end < e; }) -
                                    r.records.begin());
  }

  static bool c_space(char c) noexcept { return c == ' ' || (c >= '\t' && c <= '\r'); }

  // Cuts the piece [a, b) by the first token in llama.cpp's order that occurs in it, into `split`
  // (pieces and tokens in text order); leaves `split` empty when none occurs.
  void cut(const run& r, std::uint32_t a, std::uint32_t b, std::vector<std::uint32_t>& local,
           std::vector<item>& split) const {
    // A match that began before `a` does not count: re-run the automaton from `a` until it agrees
    // with the whole text's run (from then on they are the same), keeping the ranks it finds.
    const auto* p = reinterpret_cast<const unsigned char*>(r.text.data());
    local.clear();
    std::size_t k = first_record_ending_at_or_after(r, a + 1);
    std::uint32_t s = root, e = a;
    while (e < b) {
      s = next(s, p[e]);
      ++e;
      std::uint32_t global = root;
      if (k < r.records.size() && r.records[k].end == e) global = r.records[k++].state;
      if (s == global) break;
      local.push_back(r.out[s]);
    }
    // records [lo, hi) hold the positions from e (where the runs agree) to b
    const std::uint32_t agree = static_cast<std::uint32_t>(a + 1 + local.size());  // first end position not in local
    const std::size_t lo = agree <= b ? first_record_ending_at_or_after(r, agree) : r.records.size();
    const std::size_t hi = first_record_ending_at_or_after(r, b + 1);
    std::uint32_t rank = lo < hi ? range_min(r, lo, hi) : none;
    for (const std::uint32_t x : local) rank = std::min(rank, x);
    if (rank == none) return;

    const token_id id = v_->special_tokens[rank];
    const std::uint32_t len = lengths_[rank], attr = attrs_[rank];
    std::uint32_t pos = a;
    std::size_t scan_local = 0;  // local[i] is the end position a + 1 + i
    while (pos < b && b - pos >= len) {
      // the first end position >= pos + len with this token, in the re-run part, then in the records
      std::uint32_t end = 0;
      for (std::size_t i = std::max<std::size_t>(scan_local, pos + len - a - 1); i < local.size(); ++i) {
        if (local[i] == rank) {
          end = static_cast<std::uint32_t>(a + 1 + i);
          scan_local = i + 1;
          break;
        }
      }
      if (end == 0) {
        scan_local = local.size();
        const std::size_t from = first_record_ending_at_or_after(r, std::max(agree, pos + len));
        const std::size_t f = from < hi ? first_at_most(r, from, rank) : hi;
        if (f >= hi) break;
        end = r.records[f].end;
      }
      const std::uint32_t m = end - len;
      std::uint32_t left = m - pos;
      if (attr & token_attr::lstrip) {
        while (left > 0 && c_space(r.text[pos + left - 1])) --left;
      }
      if (left > 0) split.push_back({pos, pos + left, no_token});
      split.push_back({0, 0, id});
      pos = end;
      if (attr & token_attr::rstrip) {
        while (pos < b && c_space(r.text[pos])) ++pos;
      }
    }
    if (split.empty()) return;
    if (pos < b) split.push_back({pos, b, no_token});
  }

  const vocabulary* v_;
  std::vector<std::uint32_t> first_child_;  // per node (and one past): its children are [first, next's first)
  std::vector<unsigned char> byte_;         // per node: the byte leading to it
  std::vector<std::uint32_t> terminal_;     // per node: the rank of the token whose text it is, or none
  std::vector<std::uint32_t> fail_;         // per node: its longest proper suffix in the trie
  std::vector<std::uint32_t> out_all_;      // per node: the rank of the longest token ending there
  std::vector<std::uint32_t> out_plain_;    // likewise among tokens that are neither control nor unknown
  std::vector<std::uint32_t> lengths_;      // per rank: the token's length
  std::vector<std::uint32_t> attrs_;        // per rank: the token's attributes
  std::array<std::uint32_t, 256> root_next_{};
  bool any_all_ = false, any_plain_ = false;  // a token applies at all, with and without parse_special
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_SPECIAL_TOKENS_HPP
