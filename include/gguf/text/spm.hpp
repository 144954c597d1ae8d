#ifndef GGUF_TEXT_SPM_HPP
#define GGUF_TEXT_SPM_HPP

#include <algorithm>
#include <atomic>
#include <mutex>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/result.hpp"
#include "gguf/text/codepoints.hpp"
#include "gguf/text/pair_filter.hpp"
#include "gguf/text/text_cache.hpp"
#include "gguf/text/token_table.hpp"
#include "gguf/text/vocabulary.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/**
 * llama.cpp's SentencePiece tokenizer (`llm_tokenizer_spm_session`): the text's UTF-8 characters
 * merged pairwise, the pair whose joined text is the token of highest score first (leftmost among
 * equals), until no pair makes a token; a character that is no token is spelt with byte tokens.
 * Where the vocabulary has no token for such a byte (llama.cpp aborts: `byte_to_token` throws), the
 * text cannot be tokenized, and encoding says so.
 */
class spm_encoder {
 public:
  /** An encoder over `v`, which must outlive it. */
  explicit spm_encoder(const vocabulary& v) : v_(&v), splittable_(words_apart(v)) {}

  /** Per-call buffers: reuse one across calls to skip their allocation. */
  struct scratch {
    std::string text;                  ///< the escaped fragment
    std::vector<std::int32_t> next;    ///< per symbol: the next one, -1 at the end
    std::vector<std::int32_t> prev;    ///< the one before, -1 at the start
    std::vector<std::uint32_t> begin;  ///< its first byte
    std::vector<std::uint32_t> end;    ///< past its last byte (== begin: merged away)
    std::vector<token_id> id;          ///< its token once merged, else -1
    std::vector<std::uint64_t> head;   ///< the `unit_key` of its first character
    std::vector<std::uint64_t> tail;   ///< and of its last
    /// A pair whose joined text is a token, as llama.cpp's `llm_bigram_spm`.
    struct candidate {
      float score;         ///< the joined token's score
      std::int32_t left;   ///< the left symbol
      std::int32_t right;  ///< the right symbol
      std::uint32_t size;  ///< the joined length when pushed (stale when it differs)
      token_id result;     ///< the joined token
      /// The heap's order: the greatest on top is the highest score, then the leftmost.
      bool operator<(const candidate& o) const noexcept { return score != o.score ? score < o.score : left > o.left; }
    };
    std::vector<candidate> heap;  ///< the pairs to merge, best on top
    detail::word_cache cache;     ///< words seen in this call
    /// A character cut off on both sides and its ids (its token, or its bytes' tokens), by `unit_key`.
    struct unit_ids {
      std::uint64_t key = 0;    ///< 0: empty
      token_id ids[4] = {};     ///< its token, or one per byte
      std::uint32_t count = 0;  ///< how many of `ids`
    };
    std::vector<unit_ids> units;  ///< characters seen in this call, direct-mapped (1024 of them)
    /// Hashes of long words seen once, direct-mapped (1024): a long word is cached when it comes again.
    std::vector<std::uint64_t> seen;
    /// A text of at most 7 bytes (its bytes and length packed in `key`) and its token, or -1.
    struct short_token {
      std::uint64_t key = 0;   ///< 0: empty
      token_id id = no_token;  ///< its token, or -1
    };
    std::vector<short_token> short_tokens;  ///< short texts looked up in this call, direct-mapped (1024)
  };

  /**
   * Where to end the stretch of raw text (before its spaces are escaped) that starts at `from`, so that
   * stretches can be escaped and encoded one after another in a buffer of bounded size with the ids
   * unchanged: about `about` bytes on, at a space that starts a word (one after a character that is no
   * space, nor U+2581, nor cut short), else the end. Vocabularies whose tokens join a word to the space
   * after it are never cut (the end).
   */
  std::size_t stretch_end(std::string_view raw, std::size_t from, std::size_t about) const noexcept {
    if (!splittable_ || raw.size() - from <= about) return raw.size();
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(raw[i]); };
    for (std::size_t p = raw.find(' ', from + about); p != std::string_view::npos; p = raw.find(' ', p + 1)) {
      if (byte(p - 1) == ' ' || byte(p - 1) >= 0xC0 || byte(p - 2) >= 0xE0 || byte(p - 3) >= 0xF0) continue;
      if (raw.substr(p - 3, 3) == space) continue;
      return p;
    }
    return raw.size();
  }

  /**
   * Appends the ids of one text, already prefixed and with spaces escaped (as llama.cpp's session gets it).
   * @param text the text (any bytes)
   * @param out  receives the ids
   * @param s    buffers, reusable
   * @return nothing; `bad_vocabulary` naming the byte when a character is no token and one of its bytes
   *         has no byte token either (`out` then holds part of the ids)
   */
  result<void> encode(std::string_view text, std::vector<token_id>& out, scratch& s) const {
    int missing = -1;  // per word a plain int: a result per word costs a tenth of SPM's speed
    if (!splittable_) {
      missing = encode_cut(text, out, s);
    } else {
      std::size_t start = 0;
      const auto flush = [&](std::size_t end) {
        if (end == start) return;
        const std::string_view w = text.substr(start, end - start);
        start = end;
        missing = encode_word(w, out, s, true);
      };
      // split where a U+2581 follows anything but another one, at a character boundary as llama.cpp cuts them
      std::size_t known = 0;  // a character boundary at or before the U+2581 looked at
      for (std::size_t at = text.find(space, 1); at != std::string_view::npos; at = text.find(space, at + 1)) {
        if (!at_boundary(text, at, known)) continue;
        if (!(at >= 3 && text[at - 3] == space[0] && text[at - 2] == space[1] && text[at - 1] == space[2])) {
          flush(at);
          if (missing >= 0) break;
        }
        // the rest of a run of U+2581 stays in this word: stepped over here, not found one by one
        while (at + 6 <= text.size() && text[at + 3] == space[0] && text[at + 4] == space[1] &&
               text[at + 5] == space[2])
          at += 3;
        known = at;
      }
      if (missing < 0) flush(text.size());
    }
    if (missing >= 0) return missing_byte(static_cast<unsigned char>(missing));
    return {};
  }

 private:
  static constexpr std::string_view space = "\xE2\x96\x81";

  // Whether byte `at` starts a character as encode_piece steps through the text (utf8_sequence_length
  // from each lead), `known` being such a start before it. Only a lead byte among the three before `at`
  // can reach over it: in valid UTF-8 none does, and the stepping is skipped.
  static bool at_boundary(std::string_view text, std::size_t at, std::size_t known) noexcept {
    const auto byte = [&](std::size_t back) { return back <= at ? static_cast<unsigned char>(text[at - back]) : 0; };
    if (byte(1) < 0xC0 && byte(2) < 0xE0 && byte(3) < 0xF0) return true;
    std::size_t k = known;
    while (k < at) k += utf8_sequence_length(static_cast<unsigned char>(text[k]));
    return k == at;
  }

  // Merges never join a character to a U+2581 after it (unless it is one too) when no token holds such
  // a pair: then words (each space and what follows it) are tokenized apart, and each once.
  static bool words_apart(const vocabulary& v) noexcept {
    for (token_id id = 0; static_cast<std::size_t>(id) < v.size(); ++id) {
      const std::string_view t = v.tokens.text(id);
      for (std::size_t k = t.find(space, 1); k != std::string_view::npos; k = t.find(space, k + 1)) {
        if (k < 3 || t.substr(k - 3, 3) != space) return false;
      }
    }
    return true;
  }

  // The ids of a word (or a piece of one) from the call's cache, else merged and remembered; -1, or a
  // byte no token spells. A long word not seen before (an unspaced script: Thai, Chinese, Japanese) is
  // first cut where no token joins the characters on both sides (`pairs_`): merges never cross such a
  // place, and the pieces repeat where the word does not.
  int encode_word(std::string_view w, std::vector<token_id>& out, scratch& s, bool may_cut) const {
    const std::uint64_t h = detail::hash_bytes(w.data(), w.size());
    std::size_t n = 0;
    if (const token_id* ids = s.cache.find(w, h, n)) {
      detail::append_ids(out, ids, n);
      return -1;
    }
    const std::size_t before = out.size();
    int missing;
    if (may_cut && w.size() > cut_above) {
      // a long word is cut, and cached only when it comes again (most never do: unspaced scripts)
      if (s.seen.empty()) s.seen.resize(1024);
      std::uint64_t& seen = s.seen[static_cast<std::size_t>(h >> 54)];
      if (seen != h) {
        seen = h;
        return encode_cut(w, out, s);
      }
      missing = encode_cut(w, out, s);
    } else {
      missing = encode_piece(w, out, s);
    }
    if (missing < 0) s.cache.insert(w, h, out.data() + before, out.size() - before);
    return missing;
  }

  // Words longer than this are cut: shorter ones repeat whole often enough.
  static constexpr std::size_t cut_above = 24;

  // `text` cut where no token holds the characters on both sides, each piece encoded as a word.
  int encode_cut(std::string_view text, std::vector<token_id>& out, scratch& s) const {
    const detail::pair_filter& pairs = pairs_of_vocabulary();
    if (!pairs) return encode_piece(text, out, s);
    std::size_t start = 0, prev_len = 0;
    std::uint64_t prev = 0;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t len =
          std::min<std::size_t>(utf8_sequence_length(static_cast<unsigned char>(text[at])), text.size() - at);
      const std::uint64_t key = detail::unit_key(text.data() + at, len);
      if (at > start && !pairs.may_follow(prev, key)) {
        const std::string_view piece = text.substr(start, at - start);
        const int missing =
            start + prev_len == at ? encode_unit(piece, prev, out, s) : encode_word(piece, out, s, false);
        if (missing >= 0) return missing;
        start = at;
      }
      prev = key, prev_len = len;
      at += len;
    }
    if (start == text.size()) return -1;
    const std::string_view piece = text.substr(start);
    if (piece.size() == prev_len) return encode_unit(piece, prev, out, s);
    return start == 0 ? encode_piece(text, out, s) : encode_word(piece, out, s, false);  // uncut: the caller's
  }

  // One character cut off on both sides (`key` its unit_key): its token, or its bytes' tokens.
  int encode_unit(std::string_view c, std::uint64_t key, std::vector<token_id>& out, scratch& s) const {
    if (s.units.empty()) s.units.resize(1024);
    scratch::unit_ids& e = s.units[static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 54)];
    if (e.key != key) {
      const std::size_t before = out.size();
      if (const token_id id = v_->tokens.find(c); id != no_token) {
        out.push_back(id);
      } else if (const int missing = spell_bytes(c, out); missing >= 0) {
        return missing;
      }
      e.key = key;
      e.count = static_cast<std::uint32_t>(out.size() - before);
      std::copy(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(), e.ids);
      return -1;
    }
    detail::append_ids(out, e.ids, e.count);
    return -1;
  }

  // A character that is no token, as its bytes' tokens; -1, or the byte that has none.
  int spell_bytes(std::string_view w, std::vector<token_id>& out) const {
    for (const char c : w) {
      const token_id t = v_->byte_tokens[static_cast<unsigned char>(c)];
      if (t == no_token) return static_cast<unsigned char>(c);
      out.push_back(t);
    }
    return -1;
  }

  // The pairs of adjacent characters (as encode_piece splits text) inside any token's text.
  static detail::pair_filter pairs_in(const vocabulary& v) {
    std::size_t n = 0;
    for (token_id id = 0; static_cast<std::size_t>(id) < v.size(); ++id) n += v.tokens.text(id).size();
    detail::pair_filter f(detail::pair_filter::pairs_for(n, v.size()));
    for (token_id id = 0; static_cast<std::size_t>(id) < v.size(); ++id) f.add_characters(v.tokens.text(id));
    return f;
  }

  // The token whose text is `t`, or -1; a short text through the call's memo (digits, whitespace and the
  // pairs of a script's characters come again and again, and the memo stays in cache where the table
  // does not).
  token_id find_token(std::string_view t, scratch& s) const {
    if (t.size() > 7) return v_->tokens.find(t);
    std::uint64_t key = t.size();  // the length in the low byte, the bytes above it: never 0
    for (std::size_t i = 0; i < t.size(); ++i) key |= std::uint64_t{static_cast<unsigned char>(t[i])} << (8 * i + 8);
    if (s.short_tokens.empty()) s.short_tokens.resize(1024);
    scratch::short_token& e = s.short_tokens[static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 54)];
    if (e.key != key) e.key = key, e.id = v_->tokens.find(t);
    return e.id;
  }

  // llama.cpp's merging over one stretch of the text; -1, or a byte no token spells (llama.cpp aborts).
  int encode_piece(std::string_view text, std::vector<token_id>& out, scratch& s) const {
    const vocabulary& v = *v_;
    s.next.clear(), s.prev.clear(), s.begin.clear(), s.end.clear(), s.id.clear(), s.heap.clear();
    s.head.clear();
    // once made, the pair filter answers most failing pairs before the token table is probed (a pair
    // of symbols is a token only if their touching characters are neighbours inside some token)
    const detail::pair_filter* filter = pairs_ready_.load(std::memory_order_acquire) ? &pairs_ : nullptr;
    for (std::size_t at = 0; at < text.size();) {
      std::size_t len = utf8_sequence_length(static_cast<unsigned char>(text[at]));
      if (len > text.size() - at) len = text.size() - at;
      s.begin.push_back(static_cast<std::uint32_t>(at));
      s.end.push_back(static_cast<std::uint32_t>(at + len));
      if (filter) s.head.push_back(detail::unit_key(text.data() + at, len));
      at += len;
    }
    if (filter) s.tail = s.head;
    const std::size_t n = s.begin.size();
    if (n == 0) return -1;
    s.next.resize(n), s.prev.resize(n), s.id.assign(n, no_token);
    for (std::size_t i = 0; i < n; ++i) {
      s.next[i] = i + 1 < n ? static_cast<std::int32_t>(i + 1) : -1;
      s.prev[i] = static_cast<std::int32_t>(i) - 1;
    }
    const auto push = [&](std::int32_t l, std::int32_t r) {
      if (l < 0 || r < 0) return;
      if (filter && !filter->may_follow(s.tail[static_cast<std::size_t>(l)], s.head[static_cast<std::size_t>(r)]))
        return;
      const auto b = s.begin[static_cast<std::size_t>(l)], e = s.end[static_cast<std::size_t>(r)];
      const token_id id = find_token(text.substr(b, e - b), s);
      if (id == no_token) return;
      s.heap.push_back({v.score(id), l, r, e - b, id});
      std::push_heap(s.heap.begin(), s.heap.end());
    };
    for (std::size_t i = 1; i < n; ++i) push(static_cast<std::int32_t>(i - 1), static_cast<std::int32_t>(i));
    while (!s.heap.empty()) {
      std::pop_heap(s.heap.begin(), s.heap.end());
      const scratch::candidate c = s.heap.back();
      s.heap.pop_back();
      const auto l = static_cast<std::size_t>(c.left), r = static_cast<std::size_t>(c.right);
      // llama.cpp's staleness test: both alive and together exactly as long as when pushed
      if (s.end[l] == s.begin[l] || s.end[r] == s.begin[r] ||
          (s.end[l] - s.begin[l]) + (s.end[r] - s.begin[r]) != c.size) {
        continue;
      }
      s.id[l] = c.result;
      s.end[l] = s.end[r];
      if (filter) s.tail[l] = s.tail[r];
      s.end[r] = s.begin[r];  // empty: merged away
      s.next[l] = s.next[r];
      if (s.next[r] >= 0) s.prev[static_cast<std::size_t>(s.next[r])] = c.left;
      push(s.prev[l], c.left);
      push(c.left, s.next[l]);
    }
    for (std::int32_t i = 0; i >= 0; i = s.next[static_cast<std::size_t>(i)]) {
      const auto k = static_cast<std::size_t>(i);
      token_id id = s.id[k];
      if (id == no_token) id = find_token(text.substr(s.begin[k], s.end[k] - s.begin[k]), s);
      if (id != no_token) {
        out.push_back(id);
        continue;
      }
      // no token: the bytes, as "<0xXX>" tokens or single-byte tokens
      if (const int missing = spell_bytes(text.substr(s.begin[k], s.end[k] - s.begin[k]), out); missing >= 0) {
        return missing;
      }
    }
    return -1;
  }

  GGUF_COLD error missing_byte(unsigned char byte) const {
    static constexpr char hex[] = "0123456789ABCDEF";
    const char name[] = {'<', '0', 'x', hex[byte >> 4], hex[byte & 15], '>'};
    return error{errc::bad_vocabulary, "the vocabulary has no byte token for a byte of the text (llama.cpp aborts)"}
        .about(std::string_view(name, sizeof name), " in ", v_->name);
  }

  const vocabulary* v_;
  bool splittable_ = false;
  // Adjacent characters inside tokens, where text may be cut: made when the first long word needs it
  // (a millisecond or two for a large vocabulary, which a tokenizer of short prompts never spends).
  mutable std::once_flag pairs_once_;
  mutable detail::pair_filter pairs_;
  const detail::pair_filter& pairs_of_vocabulary() const {
    std::call_once(pairs_once_, [this] {
      pairs_ = pairs_in(*v_);
      pairs_ready_.store(true, std::memory_order_release);
    });
    return pairs_;
  }
  mutable std::atomic<bool> pairs_ready_{false};  // pairs_ made: short words may ask it too
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_SPM_HPP
