#ifndef GGUF_TEXT_SPM_HPP
#define GGUF_TEXT_SPM_HPP

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/result.hpp"
#include "gguf/text/codepoints.hpp"
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
  explicit spm_encoder(const vocabulary& v) noexcept : v_(&v), splittable_(words_apart(v)) {}

  /** Per-call buffers: reuse one across calls to skip their allocation. */
  struct scratch {
    std::string text;                  ///< the escaped fragment
    std::vector<std::int32_t> next;    ///< per symbol: the next one, -1 at the end
    std::vector<std::int32_t> prev;    ///< the one before, -1 at the start
    std::vector<std::uint32_t> begin;  ///< its first byte
    std::vector<std::uint32_t> end;    ///< past its last byte (== begin: merged away)
    std::vector<token_id> id;          ///< its token once merged, else -1
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
  };

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
      missing = encode_piece(text, out, s);
    } else {
      std::size_t start = 0;
      const auto flush = [&](std::size_t end) {
        if (end == start) return;
        const std::string_view w = text.substr(start, end - start);
        start = end;
        const std::uint64_t h = detail::hash_bytes(w.data(), w.size());
        std::size_t n = 0;
        if (const token_id* ids = s.cache.find(w, h, n)) {
          out.insert(out.end(), ids, ids + n);
          return;
        }
        const std::size_t before = out.size();
        missing = encode_piece(w, out, s);
        if (missing < 0) s.cache.insert(w, h, out.data() + before, out.size() - before);
      };
      // split where a U+2581 follows anything but another one, at a character boundary as llama.cpp cuts them
      for (std::size_t at = 0; at < text.size();) {
        if (at > 0 && text.compare(at, 3, space) == 0 && (at < 3 || text.compare(at - 3, 3, space) != 0)) {
          flush(at);
          if (missing >= 0) break;
        }
        at += std::min<std::size_t>(utf8_sequence_length(static_cast<unsigned char>(text[at])), text.size() - at);
      }
      if (missing < 0) flush(text.size());
    }
    if (missing >= 0) return missing_byte(static_cast<unsigned char>(missing));
    return {};
  }

 private:
  static constexpr std::string_view space = "\xE2\x96\x81";

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

  // llama.cpp's merging over one stretch of the text; -1, or a byte no token spells (llama.cpp aborts).
  int encode_piece(std::string_view text, std::vector<token_id>& out, scratch& s) const {
    const vocabulary& v = *v_;
    s.next.clear(), s.prev.clear(), s.begin.clear(), s.end.clear(), s.id.clear(), s.heap.clear();
    for (std::size_t at = 0; at < text.size();) {
      std::size_t len = utf8_sequence_length(static_cast<unsigned char>(text[at]));
      if (len > text.size() - at) len = text.size() - at;
      s.begin.push_back(static_cast<std::uint32_t>(at));
      s.end.push_back(static_cast<std::uint32_t>(at + len));
      at += len;
    }
    const std::size_t n = s.begin.size();
    if (n == 0) return -1;
    s.next.resize(n), s.prev.resize(n), s.id.assign(n, no_token);
    for (std::size_t i = 0; i < n; ++i) {
      s.next[i] = i + 1 < n ? static_cast<std::int32_t>(i + 1) : -1;
      s.prev[i] = static_cast<std::int32_t>(i) - 1;
    }
    const auto push = [&](std::int32_t l, std::int32_t r) {
      if (l < 0 || r < 0) return;
      const auto b = s.begin[static_cast<std::size_t>(l)], e = s.end[static_cast<std::size_t>(r)];
      const token_id id = v.tokens.find(text.substr(b, e - b));
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
      s.end[r] = s.begin[r];  // empty: merged away
      s.next[l] = s.next[r];
      if (s.next[r] >= 0) s.prev[static_cast<std::size_t>(s.next[r])] = c.left;
      push(s.prev[l], c.left);
      push(c.left, s.next[l]);
    }
    for (std::int32_t i = 0; i >= 0; i = s.next[static_cast<std::size_t>(i)]) {
      const auto k = static_cast<std::size_t>(i);
      token_id id = s.id[k];
      if (id == no_token) id = v.tokens.find(text.substr(s.begin[k], s.end[k] - s.begin[k]));
      if (id != no_token) {
        out.push_back(id);
        continue;
      }
      // no token: the bytes, as "<0xXX>" tokens or single-byte tokens
      for (std::uint32_t b = s.begin[k]; b < s.end[k]; ++b) {
        const auto byte = static_cast<unsigned char>(text[b]);
        const token_id t = v.byte_tokens[byte];
        if (t == no_token) return byte;
        out.push_back(t);
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
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_SPM_HPP
