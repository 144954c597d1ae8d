#ifndef GGUF_TEXT_BPE_HPP
#define GGUF_TEXT_BPE_HPP

#include <algorithm>
#include <limits>
#include <mutex>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/text/codepoints.hpp"
#include "gguf/text/pair_filter.hpp"
#include "gguf/text/text_cache.hpp"
#include "gguf/text/pretokenizer.hpp"
#include "gguf/text/token_table.hpp"
#include "gguf/text/unicode.hpp"
#include "gguf/text/vocabulary.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/**
 * llama.cpp's BPE tokenizer (`llm_tokenizer_bpe_session`): the text split into words by the
 * pre-tokenizer, each word's bytes (GPT-2 byte-level encoded, or raw UTF-8 for SPM-style BPE) merged by
 * rank, lowest first and leftmost among equals, and a piece that is no token spelt with byte tokens.
 */
class bpe_encoder {
 public:
  /** An encoder over `v`, which must outlive it. */
  explicit bpe_encoder(const vocabulary& v) : v_(&v) {
    for (unsigned b = 0; b < 256; ++b) {
      // A byte whose character is no token: llama.cpp looks up each byte of the character's UTF-8.
      std::string s;
      if (v.byte_encode) {
        append_utf8(s, byte_to_codepoint(static_cast<std::uint8_t>(b)));
      } else {
        s.assign(1, static_cast<char>(b));
      }
      fallback_[b].clear();
      for (char c : s) {
        const token_id id =
            v.byte_encode ? v.tokens.find(std::string_view(&c, 1)) : v.byte_tokens[static_cast<unsigned char>(c)];
        if (id != no_token) fallback_[b].push_back(id);
      }
    }
  }

  /** Per-call buffers: reuse one across calls to skip their allocation. */
  struct scratch {
    std::vector<char32_t> cpts;            ///< the fragment's code points
    std::string word;                      ///< one word's bytes
    std::string mapped;                    ///< one word byte-level encoded
    std::vector<std::int32_t> sym_id;      ///< per symbol of a word: its token, or -1
    std::vector<std::int32_t> sym_next;    ///< the next symbol, -1 at the end, -2 when merged away
    std::vector<std::int32_t> sym_prev;    ///< the symbol before, -1 at the start
    std::vector<std::uint32_t> sym_begin;  ///< the symbol's first byte in the word
    std::vector<std::uint32_t> sym_end;    ///< past its last byte
    std::vector<std::int32_t> pair_rank;   ///< a short word's pair from each symbol: its merge's rank
    std::vector<token_id> pair_result;     ///< and the token it makes
    detail::word_cache cache;              ///< words seen in this call
    detail::word_cache pieces;             ///< pieces of long words cut apart, seen in this call
    /// A pair of tokens and its merge, as merge_table::find gave it.
    struct pair_merge {
      std::uint64_t key = ~std::uint64_t{0};  ///< the two ids; all ones: empty
      merge_table::merge m;                   ///< the merge, rank -1 for none
    };
    std::vector<pair_merge> pairs;  ///< the pairs looked up in this call, direct-mapped (1024 of them)
    /// A pair to merge in a long word, as llama.cpp's queue holds it.
    struct candidate {
      std::uint64_t order;  ///< the rank, then the left symbol: lowest first
      std::int32_t right;   ///< the right symbol
      token_id left_id;     ///< the two tokens when pushed (stale when either changed)
      token_id right_id;    ///< the right one's
      token_id result;      ///< the joined token
      /// std::push_heap keeps the greatest on top: here the lowest rank, then the leftmost.
      bool operator<(const candidate& o) const noexcept { return order > o.order; }
    };
    std::vector<candidate> heap;  ///< a long word's pairs to merge
    /// The ids of a word of one ASCII character, once met in this call.
    struct ascii_word {
      std::uint8_t count = 0xFF;  ///< above 3: not met yet
      token_id ids[3] = {};       ///< its ids
    };
    ascii_word ascii[128];  ///< per character
  };

  /**
   * Appends the ids of one raw-text fragment.
   * @param text the fragment (any bytes)
   * @param out  receives the ids
   * @param s    buffers, reusable
   * @param escape_spaces write spaces as U+2581 first when the vocabulary says so (false: done already)
   */
  void encode(std::string_view text, std::vector<token_id>& out, scratch& s, bool escape_spaces = true) const {
    const vocabulary& v = *v_;
    std::string escaped;
    if (escape_spaces && v.escape_whitespaces) {
      escaped.reserve(text.size());
      text::escape_spaces(text, escaped);
      text = escaped;
    }
    // a stretch at a time, cut where the words on each side do not depend on the other: the code points,
    // their classes and the splitter's buffers stay small (and in cache) however long the text
    constexpr std::size_t stretch = std::size_t{1} << 15;
    const std::size_t first_id = out.size();
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = text.size() - at > 2 * stretch ? safe_cut(v.pre, text, at + stretch) : text.size();
      encode_stretch(text.substr(at, end - at), out, s);
      at = end;
      if (at < text.size()) detail::reserve_for_rest(out, out.size() - first_id, at, text.size() - at);
    }
    if (s.cpts.capacity() > (std::size_t{1} << 18)) std::vector<char32_t>().swap(s.cpts);  // a long text's
  }

 private:
  // The ids of a stretch of text whose words are its own (see `encode`).
  void encode_stretch(std::string_view text, std::vector<token_id>& out, scratch& s) const {
    const vocabulary& v = *v_;
    s.cpts.clear();
    // llama.cpp aborts writing a value above U+10FFFF back: read as an invalid byte
    const bool exact = decode_utf8(text, s.cpts, above_unicode::invalid);
    // when the code points write back to the text, a word is the text's own bytes (no copy): the byte
    // offset of a code point follows the words, which come in order
    std::size_t cp_at = 0, byte_at = 0;
    const auto byte_of = [&](std::size_t cp) {
      for (; cp_at < cp; ++cp_at) byte_at += utf8_length(s.cpts[cp_at]);
      return byte_at;
    };
    split_words(v.pre, s.cpts, [&](std::span<const pretokenized_word> words) {
      for (const pretokenized_word& w : words) {
        if (w.end - w.begin == 1 && s.cpts[w.begin] < 0x80) {  // one ASCII character: a digit, a sign, a space
          scratch::ascii_word& a = s.ascii[s.cpts[w.begin]];
          if (a.count > 3) {
            const std::size_t before = out.size();
            const char c = static_cast<char>(s.cpts[w.begin]);
            encode_word(std::string_view(&c, 1), out, s);
            if (out.size() - before > 3) continue;  // not kept (no vocabulary spells one byte so)
            a.count = static_cast<std::uint8_t>(out.size() - before);
            std::copy(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(), a.ids);
            continue;
          }
          detail::append_ids(out, a.ids, a.count);
          continue;
        }
        std::string_view word;
        if (exact) {
          const std::size_t b = byte_of(w.begin);
          word = text.substr(b, byte_of(w.end) - b);
        } else {
          s.word.clear();
          for (std::uint32_t i = w.begin; i < w.end; ++i) append_utf8(s.word, s.cpts[i]);
          word = s.word;
        }
        if (word.empty()) continue;
        const std::uint64_t h = detail::hash_bytes(word.data(), word.size());
        std::size_t n = 0;
        if (const token_id* ids = s.cache.find(word, h, n)) {
          detail::append_ids(out, ids, n);
          continue;
        }
        const std::size_t before = out.size();
        encode_word(word, out, s);
        s.cache.insert(word, h, out.data() + before, out.size() - before);
      }
    });
  }

  // One word: its symbols (bytes, or UTF-8 characters without byte-level encoding) merged by rank.
  void encode_word(std::string_view word, std::vector<token_id>& out, scratch& s) const {
    const vocabulary& v = *v_;
    if (v.byte_encode) {
      s.mapped.clear();
      for (char c : word) append_utf8(s.mapped, byte_to_codepoint(static_cast<std::uint8_t>(c)));
    } else {
      s.mapped.assign(word);
    }
    if (v.ignore_merges || (v.pre == pre_tokenizer::gemma4 && s.mapped.find_first_not_of('\n') == std::string::npos)) {
      // a word that is a token is that token (gemma4: a run of newlines, as llama.cpp special-cases it)
      const token_id whole = v.tokens.find(s.mapped);
      if (whole != no_token) {
        out.push_back(whole);
        return;
      }
    }
    if (word.size() > cut_above && pairs_of_vocabulary()) {
      encode_cut(word, out, s);
      return;
    }
    merge_word(word, out, s);
  }

  // Words longer than this are cut where no merge can join (`pairs_`): an unspaced script's words (Thai,
  // Chinese, Japanese: a sentence is one word) rarely repeat, their pieces do.
  static constexpr std::size_t cut_above = 24;

  // The kinds of units `pairs_` holds: a whole character, the end of one (a token that begins inside a
  // character; its last byte) and the start of one (a token that ends inside a character; its lead byte).
  enum : unsigned { unit_whole = 0, unit_tail = 1, unit_head = 2 };

  // Whether a merge may join the character [a, a + na) to the one at [b, b + nb) after it in valid UTF-8.
  bool may_join(const char* a, std::size_t na, const char* b, std::size_t nb) const noexcept {
    if (!v_->byte_encode) return pairs_.may_follow(detail::unit_key(a, na), detail::unit_key(b, nb));
    const std::uint64_t aw = detail::unit_key(a, na, unit_whole), bw = detail::unit_key(b, nb, unit_whole);
    const std::uint64_t at = detail::unit_key(a + na - 1, 1, unit_tail), bh = detail::unit_key(b, 1, unit_head);
    return pairs_.may_follow(aw, bw) || (na > 1 && pairs_.may_follow(at, bw)) ||
           (nb > 1 && pairs_.may_follow(aw, bh)) || (na > 1 && nb > 1 && pairs_.may_follow(at, bh));
  }

  // A long word cut between characters no merge joins; each piece merged apart (and each distinct one once).
  void encode_cut(std::string_view word, std::vector<token_id>& out, scratch& s) const {
    std::size_t start = 0, prev = 0;
    const auto piece = [&](std::string_view p) {
      const std::uint64_t h = detail::hash_bytes(p.data(), p.size());
      std::size_t n = 0;
      if (const token_id* ids = s.pieces.find(p, h, n)) {
        detail::append_ids(out, ids, n);
        return;
      }
      const std::size_t before = out.size();
      merge_word(p, out, s);
      s.pieces.insert(p, h, out.data() + before, out.size() - before);
    };
    for (std::size_t at = 0; at < word.size();) {
      const std::size_t len =
          std::min<std::size_t>(utf8_sequence_length(static_cast<unsigned char>(word[at])), word.size() - at);
      if (at > start && !may_join(word.data() + prev, at - prev, word.data() + at, len)) {
        piece(word.substr(start, at - start));
        start = at;
      }
      prev = at;
      at += len;
    }
    piece(word.substr(start));
  }

  // The pairs of neighbouring units inside the tokens a merge can make, as a word's bytes split them: with
  // byte-level encoding, each token's bytes as whole characters, a character's end first (a token that
  // begins inside one) and a character's start last; tokens that are no piece of valid UTF-8 never form
  // in a word (words are valid UTF-8) and are left out. Without it, characters as SPM splits them.
  static detail::pair_filter pairs_in(const vocabulary& v) {
    std::size_t bytes = 0;
    for (token_id id = 0; static_cast<std::size_t>(id) < v.size(); ++id) bytes += v.tokens.text(id).size();
    detail::pair_filter f(detail::pair_filter::pairs_for(bytes, v.size()));
    std::string raw;
    for (token_id id = 0; static_cast<std::size_t>(id) < v.size(); ++id) {
      const std::string_view t = v.tokens.text(id);
      if (!v.byte_encode) {
        f.add_characters(t);
        continue;
      }
      raw.clear();
      bool mapped = true;
      for (std::size_t at = 0; at < t.size() && mapped;) {
        const auto d = decode_utf8_at(reinterpret_cast<const unsigned char*>(t.data()) + at, t.size() - at);
        const int b = codepoint_to_byte(d.codepoint);
        mapped = b >= 0 && d.length > 0;
        raw += static_cast<char>(b);
        at += d.length ? d.length : 1;
      }
      if (mapped) add_raw_units(f, raw);
    }
    return f;
  }

  static void add_raw_units(detail::pair_filter& f, std::string_view r) {
    const auto cont = [&](std::size_t i) { return (static_cast<unsigned char>(r[i]) & 0xC0) == 0x80; };
    std::size_t at = 0;
    std::uint64_t prev = 0;
    bool have_prev = false;
    if (cont(0)) {  // the end of a character: its last byte stands for it
      while (at < r.size() && cont(at)) ++at;
      if (at > 4) return;
      prev = detail::unit_key(r.data() + at - 1, 1, unit_tail), have_prev = true;
    }
    while (at < r.size()) {
      const auto lead = static_cast<unsigned char>(r[at]);
      if (lead >= 0x80 && lead < 0xC0) return;  // a continuation byte out of place: not in valid UTF-8
      const std::size_t len = utf8_sequence_length(lead);
      std::size_t k = 1;
      while (k < len && at + k < r.size() && cont(at + k)) ++k;
      std::uint64_t key;
      if (k == len) {
        key = detail::unit_key(r.data() + at, len, unit_whole);
      } else if (at + k == r.size()) {  // the start of a character: its lead byte stands for it
        key = detail::unit_key(r.data() + at, 1, unit_head);
      } else {
        return;  // a character cut short inside the token: not in valid UTF-8
      }
      if (have_prev) f.add(prev, key);
      prev = key, have_prev = true;
      at += k;
    }
  }

  // One word's symbols (bytes, or characters) merged, as llama.cpp.
  void merge_word(std::string_view word, std::vector<token_id>& out, scratch& s) const {
    const vocabulary& v = *v_;
    // symbols
    s.sym_id.clear(), s.sym_begin.clear(), s.sym_end.clear();
    if (v.byte_encode) {
      for (std::size_t i = 0; i < word.size(); ++i) {
        const auto b = static_cast<unsigned char>(word[i]);
        s.sym_id.push_back(v.byte_tokens[b]);
        s.sym_begin.push_back(static_cast<std::uint32_t>(i));
        s.sym_end.push_back(static_cast<std::uint32_t>(i + 1));
      }
    } else {
      for (std::size_t i = 0; i < word.size();) {
        std::size_t len = utf8_sequence_length(static_cast<unsigned char>(word[i]));
        if (len > word.size() - i) len = word.size() - i;
        s.sym_id.push_back(v.tokens.find(word.substr(i, len)));
        s.sym_begin.push_back(static_cast<std::uint32_t>(i));
        s.sym_end.push_back(static_cast<std::uint32_t>(i + len));
        i += len;
      }
    }
    const std::size_t n = s.sym_id.size();
    if (s.pairs.empty()) s.pairs.resize(1024);
    s.sym_next.resize(n);
    s.sym_prev.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      s.sym_next[i] = i + 1 < n ? static_cast<std::int32_t>(i + 1) : -1;
      s.sym_prev[i] = static_cast<std::int32_t>(i) - 1;
    }
    // Merge the lowest rank, leftmost first: the order llama.cpp's queue pops (rank, then left index).
    if (n <= 24) {
      merge_by_scan(s);
    } else {
      merge_by_heap(s);
    }
    for (std::int32_t i = n ? 0 : -1; i >= 0; i = s.sym_next[static_cast<std::size_t>(i)]) {
      const auto k = static_cast<std::size_t>(i);
      if (s.sym_id[k] != no_token) {
        out.push_back(s.sym_id[k]);
        continue;
      }
      // Not a token: only an unmerged symbol (merges make tokens). Byte by byte, as llama.cpp.
      for (std::uint32_t b = s.sym_begin[k]; b < s.sym_end[k]; ++b) {
        const auto& f = fallback_[static_cast<unsigned char>(word[b])];
        if (v.byte_encode) {
          out.insert(out.end(), f.begin(), f.end());
        } else {
          const token_id id = v.byte_tokens[static_cast<unsigned char>(word[b])];
          if (id != no_token) out.push_back(id);
        }
      }
    }
  }

  // merge_table::find through the call's memo of pairs: a word's merging asks for the same pairs again
  // and again (a scan, every pass; a run of spaces or newlines, every step), and the memo stays in the
  // first-level cache where the table does not.
  static merge_table::merge find_merge(const vocabulary& v, scratch& s, token_id l, token_id r) noexcept {
    if (l < 0 || r < 0) return {};
    const std::uint64_t key = (std::uint64_t{static_cast<std::uint32_t>(l)} << 32) | static_cast<std::uint32_t>(r);
    scratch::pair_merge& e = s.pairs[static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 54)];
    if (e.key != key) e.key = key, e.m = v.merges.find(l, r);
    return e.m;
  }

  // A short word: a scan per merge beats a heap. Each pair's merge is looked up once and kept by its
  // left symbol; a join looks up the two pairs it changed.
  void merge_by_scan(scratch& s) const {
    const vocabulary& v = *v_;
    constexpr std::int32_t none = std::numeric_limits<std::int32_t>::max();
    const std::size_t n = s.sym_id.size();
    s.pair_rank.resize(n), s.pair_result.resize(n);
    const auto look = [&](std::size_t l) {
      const std::int32_t r = s.sym_next[l];
      const merge_table::merge m =
          r < 0 ? merge_table::merge{} : find_merge(v, s, s.sym_id[l], s.sym_id[static_cast<std::size_t>(r)]);
      s.pair_rank[l] = m.rank >= 0 ? m.rank : none;
      s.pair_result[l] = m.result;
    };
    for (std::size_t i = 0; i + 1 < n; ++i) look(i);
    for (;;) {
      std::int32_t best = -1, best_rank = none;
      for (std::int32_t i = 0; s.sym_next[static_cast<std::size_t>(i)] >= 0;
           i = s.sym_next[static_cast<std::size_t>(i)]) {
        if (s.pair_rank[static_cast<std::size_t>(i)] < best_rank)
          best = i, best_rank = s.pair_rank[static_cast<std::size_t>(i)];
      }
      if (best < 0) return;
      const auto l = static_cast<std::size_t>(best);
      join(s, l, s.pair_result[l]);
      look(l);
      if (s.sym_prev[l] >= 0) look(static_cast<std::size_t>(s.sym_prev[l]));
    }
  }

  // A long word (a run of spaces, a hash): a heap of candidate pairs, each checked still current when
  // popped, as llama.cpp's queue does.
  void merge_by_heap(scratch& s) const {
    const vocabulary& v = *v_;
    std::vector<scratch::candidate>& heap = s.heap;
    heap.clear();
    const auto push = [&](std::int32_t l, std::int32_t r) {
      if (l < 0 || r < 0) return;
      const token_id a = s.sym_id[static_cast<std::size_t>(l)], b = s.sym_id[static_cast<std::size_t>(r)];
      const auto m = find_merge(v, s, a, b);
      if (m.rank < 0) return;
      const std::uint64_t order =
          (std::uint64_t{static_cast<std::uint32_t>(m.rank)} << 32) | static_cast<std::uint32_t>(l);
      heap.push_back({order, r, a, b, m.result});
      std::push_heap(heap.begin(), heap.end());
    };
    for (std::int32_t i = 0; s.sym_next[static_cast<std::size_t>(i)] >= 0;
         i = s.sym_next[static_cast<std::size_t>(i)]) {
      push(i, s.sym_next[static_cast<std::size_t>(i)]);
    }
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      const scratch::candidate c = heap.back();
      heap.pop_back();
      const auto left = static_cast<std::int32_t>(c.order & 0xFFFFFFFFu);
      const auto l = static_cast<std::size_t>(left);
      if (s.sym_next[l] != c.right || s.sym_id[l] != c.left_id ||
          s.sym_id[static_cast<std::size_t>(c.right)] != c.right_id) {
        continue;  // one of the two was merged since
      }
      join(s, l, c.result);
      push(s.sym_prev[l], left);
      push(left, s.sym_next[l]);
    }
  }

  // Symbol l absorbs the one after it, becoming token `result`.
  static void join(scratch& s, std::size_t l, token_id result) noexcept {
    const auto r = static_cast<std::size_t>(s.sym_next[l]);
    s.sym_id[l] = result;
    s.sym_end[l] = s.sym_end[r];
    s.sym_next[l] = s.sym_next[r];
    s.sym_id[r] = no_token;
    s.sym_next[r] = -2;  // gone
    if (s.sym_next[l] >= 0) s.sym_prev[static_cast<std::size_t>(s.sym_next[l])] = static_cast<std::int32_t>(l);
  }

  const vocabulary* v_;
  // Neighbouring units inside tokens, where long words may be cut: made when the first long word needs
  // it (a few milliseconds for a large vocabulary, which a tokenizer of short prompts never spends).
  mutable std::once_flag pairs_once_;
  mutable detail::pair_filter pairs_;
  const detail::pair_filter& pairs_of_vocabulary() const {
    std::call_once(pairs_once_, [this] { pairs_ = pairs_in(*v_); });
    return pairs_;
  }
  std::vector<token_id> fallback_[256];
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_BPE_HPP
