#ifndef GGUF_TEXT_BYTE_TRIE_HPP
#define GGUF_TEXT_BYTE_TRIE_HPP

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/text/token_table.hpp"

GGUF_BEGIN_NAMESPACE
namespace text::detail {

/**
 * A trie over byte strings, each key with a token id: the lookups of llama.cpp's `naive_trie` (a
 * std::map per node) over flat arrays. Nodes are numbered breadth first, so a node's children are
 * consecutive nodes, found by the edge bytes the entry holds (up to 8) or by a bitmap and a popcount (more);
 * the root's 256 edges are a table. A subtree
 * holding a single key is one node with the key's remaining bytes (its tail), compared at once: walks
 * touch few nodes, and most of them in one cache line each. Building sorts the keys bucket by bucket
 * while it numbers the nodes, in time linear in the keys' bytes.
 */
class byte_trie {
 public:
  /**
   * Builds the trie of `keys[i]` → `values[i]`. A key given twice keeps its last value, as repeated
   * inserts into llama.cpp's naive_trie do.
   * @param keys   the byte strings (any bytes); they need not outlive the trie
   * @param values one id per key
   */
  void build(const std::vector<std::string_view>& keys, const std::vector<token_id>& values) {
    const std::size_t n = keys.size();
    // the keys as the sort moves them: the first 8 bytes travel along, so most reads are sequential
    struct item {
      std::uint64_t head;  // the first 8 bytes, the first in the high byte
      std::uint32_t size;  // the key's length
      std::uint32_t id;    // its index in keys
    };
    std::vector<item> idx(n), tmp(n);
    std::vector<std::uint16_t> kb(n), tmp_kb(n);  // per position in idx, its key's byte at the span's depth
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t h = 0;
      for (std::size_t j = 0; j < 8; ++j) {
        h = (h << 8) | (j < keys[i].size() ? static_cast<unsigned char>(keys[i][j]) : 0u);
      }
      idx[i] = {h, static_cast<std::uint32_t>(keys[i].size()), static_cast<std::uint32_t>(i)};
    }
    struct span {
      std::uint32_t begin, end, depth;
    };
    std::vector<span> queue;
    queue.reserve(n + 1);
    queue.push_back({0, static_cast<std::uint32_t>(n), 0});
    nodes_.clear(), label_.clear(), tails_.clear(), maps_.clear();
    label_.push_back(0);
    // key byte at `depth` plus one, 0 past the key's end: a key that ends here sorts first
    const auto key = [&](const item& it, std::uint32_t depth) -> unsigned {
      if (it.size <= depth) return 0;
      if (depth < 8) return static_cast<unsigned>((it.head >> (8 * (7 - depth))) & 0xFFu) + 1u;
      return static_cast<unsigned char>(keys[it.id][depth]) + 1u;
    };
    std::array<std::uint32_t, 258> count{};
    for (std::size_t at = 0; at < queue.size(); ++at) {
      const span s = queue[at];  // a copy: pushing children may move the queue
      entry e{static_cast<std::uint32_t>(queue.size()), no_token, 0, 0};
      if (s.end - s.begin == 1 && at != 0) {  // one key left: the rest of it is this node's tail
        const std::uint32_t i = idx[s.begin].id;
        e.value = values[i];
        const std::string_view rest = keys[i].substr(s.depth);
        e.tail_at = static_cast<std::uint32_t>(tails_.size());
        e.tail_len = static_cast<std::uint32_t>(rest.size());
        e.first |= tail;  // (a key ending exactly here is a tail of no bytes)
        tails_.insert(tails_.end(), rest.begin(), rest.end());
        nodes_.push_back(e);
        continue;
      }
      // a stable sort of the span by the byte at `depth` (ties keep key order: the last of a key wins),
      // each key's byte read once (the texts are scattered: reading them is most of the time)
      for (std::uint32_t a = s.begin; a < s.end; ++a) kb[a] = static_cast<std::uint16_t>(key(idx[a], s.depth));
      if (s.end - s.begin <= 32) {
        for (std::uint32_t a = s.begin + 1; a < s.end; ++a) {
          const item v = idx[a];
          const std::uint16_t kv = kb[a];
          std::uint32_t b = a;
          for (; b > s.begin && kb[b - 1] > kv; --b) idx[b] = idx[b - 1], kb[b] = kb[b - 1];
          idx[b] = v, kb[b] = kv;
        }
      } else {
        count.fill(0);
        for (std::uint32_t a = s.begin; a < s.end; ++a) ++count[kb[a] + 1u];
        for (std::size_t b = 1; b < count.size(); ++b) count[b] += count[b - 1];
        for (std::uint32_t a = s.begin; a < s.end; ++a) {
          const std::uint32_t to = s.begin + count[kb[a]]++;
          tmp[to] = idx[a], tmp_kb[to] = kb[a];
        }
        std::copy(tmp.begin() + s.begin, tmp.begin() + s.end, idx.begin() + s.begin);
        std::copy(tmp_kb.begin() + s.begin, tmp_kb.begin() + s.end, kb.begin() + s.begin);
      }
      std::uint32_t a = s.begin;
      while (a < s.end && kb[a] == 0) e.value = values[idx[a++].id];
      while (a < s.end) {
        const unsigned k = kb[a];
        std::uint32_t b = a + 1;
        while (b < s.end && kb[b] == k) ++b;
        queue.push_back({a, b, s.depth + 1});
        label_.push_back(static_cast<std::uint8_t>(k - 1));
        a = b;
      }
      const std::size_t n_children = queue.size() - e.first;
      if (n_children > 8) {  // many children: a bitmap of their bytes finds one in O(1)
        bitmap m{};
        for (std::size_t c = e.first; c < queue.size(); ++c)
          m.bits[label_[c] >> 6] |= std::uint64_t{1} << (label_[c] & 63);
        for (int w = 1; w < 4; ++w) m.rank[w] = static_cast<std::uint16_t>(m.rank[w - 1] + popcount(m.bits[w - 1]));
        e.tail_at = static_cast<std::uint32_t>(maps_.size());
        maps_.push_back(m);
        e.first |= many_children;
      } else {  // up to 8: their bytes in the entry itself, one cache line for the whole step
        unsigned char l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (std::size_t c = 0; c < n_children; ++c) l[c] = label_[e.first + c];
        std::memcpy(&e.tail_at, l, 4);
        std::memcpy(&e.tail_len, l + 4, 4);
      }
      nodes_.push_back(e);
    }
    nodes_.push_back({static_cast<std::uint32_t>(queue.size()), no_token, 0, 0});  // the last node's end
    root_.fill(none);
    for (std::uint32_t c = nodes_[0].first & index_mask; c < (nodes_[1].first & index_mask); ++c) root_[label_[c]] = c;
    if (queue.size() > index_mask) nodes_.clear(), root_.fill(none);  // 2^30 nodes: past any real vocabulary
  }

  /**
   * Calls `f(length, id)` for every key that is a prefix of `s`, shortest first.
   * @param s the text to match at its start
   * @param f called with the key's length in bytes and its id
   */
  template <class F>
  void prefixes(std::string_view s, F&& f) const {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    if (n == 0) return;
    std::uint32_t nd = root_[p[0]];
    std::size_t k = 1;
    while (nd != none) {
      const entry& e = nodes_[nd];
      if ((e.first & kind_mask) == tail) {  // a single key's remaining bytes
        if (e.tail_len > n - k) return;
        const char* t = tails_.data() + e.tail_at;
        for (std::uint32_t j = 0; j < e.tail_len; ++j)  // short: a loop beats a call to memcmp
          if (static_cast<unsigned char>(t[j]) != p[k + j]) return;
        f(k + e.tail_len, e.value);
        return;
      }
      if (e.value != no_token) f(k, e.value);
      if (k == n) return;
      nd = child(nd, p[k++]);
    }
  }

  /**
   * The longest key that is a prefix of `s`.
   * @return its length and id, or {0, no_token}
   */
  std::pair<std::size_t, token_id> longest(std::string_view s) const {
    std::pair<std::size_t, token_id> best{0, no_token};
    prefixes(s, [&](std::size_t len, token_id id) { best = {len, id}; });
    return best;
  }

  /**
   * How many leading bytes of `s` lie on the path of some key, whether or not a key ends there
   * (llama.cpp's `naive_trie::get_longest_prefix`).
   */
  std::size_t path_length(std::string_view s) const {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    if (n == 0 || root_[p[0]] == none) return 0;
    std::uint32_t nd = root_[p[0]];
    std::size_t k = 1;
    for (;;) {
      const entry& e = nodes_[nd];
      if ((e.first & kind_mask) == tail) {
        const char* t = tails_.data() + e.tail_at;
        std::size_t j = 0;
        while (j < e.tail_len && k < n && static_cast<unsigned char>(t[j]) == p[k]) ++j, ++k;
        return k;
      }
      if (k == n) return k;
      const std::uint32_t next = child(nd, p[k]);
      if (next == none) return k;
      nd = next;
      ++k;
    }
  }

  /** True when some key starts with byte `c`. */
  bool starts(unsigned char c) const noexcept { return root_[c] != none; }

  /** The bytes the trie holds. */
  std::size_t memory_bytes() const noexcept {
    return nodes_.capacity() * sizeof(entry) + label_.capacity() + tails_.capacity() +
           maps_.capacity() * sizeof(bitmap) + sizeof(root_);
  }

 private:
  static constexpr std::uint32_t none = 0;  // the root is nobody's child, so 0 can say "no node"
  // an entry's `first` holds its kind in its top two bits
  static constexpr std::uint32_t tail = 1u << 31, many_children = 1u << 30, kind_mask = 3u << 30;
  static constexpr std::uint32_t index_mask = ~kind_mask;

  static constexpr int popcount(std::uint64_t x) noexcept {  // inline: std::popcount calls libgcc without -mpopcnt
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return static_cast<int>((x * 0x0101010101010101ull) >> 56);
  }

  struct entry {
    std::uint32_t first;     // its kind, and its first child (the next entry's is its children's end)
    token_id value;          // the key ending here (at its tail's end for a tail node), or no_token
    std::uint32_t tail_at;   // a tail: where its bytes start in tails_; many children: its bitmap; else
    std::uint32_t tail_len;  // a tail: how many bytes; else (with tail_at) up to 8 children's bytes
  };

  struct bitmap {
    std::uint64_t bits[4];  // the children's bytes
    std::uint16_t rank[4];  // children before each word
  };

  std::uint32_t child(std::uint32_t n, unsigned char c) const noexcept {
    const entry& e = nodes_[n];
    const std::uint32_t lo = e.first & index_mask;
    if (e.first & many_children) {
      const bitmap& m = maps_[e.tail_at];
      const std::uint64_t w = m.bits[c >> 6], bit = std::uint64_t{1} << (c & 63);
      if (!(w & bit)) return none;
      return lo + m.rank[c >> 6] + static_cast<std::uint32_t>(popcount(w & (bit - 1)));
    }
    const std::uint32_t count = (nodes_[n + 1].first & index_mask) - lo;  // up to 8, in the entry
    unsigned char l[8];
    std::memcpy(l, &e.tail_at, 4);
    std::memcpy(l + 4, &e.tail_len, 4);
    for (std::uint32_t i = 0; i < count; ++i)
      if (l[i] == c) return lo + i;
    return none;
  }

  std::vector<entry> nodes_;               // breadth first, and one more for the last node's end
  std::vector<std::uint8_t> label_;        // per node, the byte of the edge into it
  std::vector<char> tails_;                // the tails' bytes
  std::vector<bitmap> maps_;               // the children of nodes with more than 8
  std::array<std::uint32_t, 256> root_{};  // the root's children by byte
};

}  // namespace text::detail
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_BYTE_TRIE_HPP
