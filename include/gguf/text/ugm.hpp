#ifndef GGUF_TEXT_UGM_HPP
#define GGUF_TEXT_UGM_HPP

/**
 * @file
 * llama.cpp's unigram tokenizer (`llm_tokenizer_ugm` / `llm_tokenizer_ugm_session`, T5's "t5"
 * vocabularies): SentencePiece's normalization through the precompiled character map, then the
 * best-scoring segmentation by Viterbi.
 */

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/result.hpp"
#include "gguf/text/codepoints.hpp"
#include "gguf/text/token_table.hpp"
#include "gguf/text/vocabulary.hpp"
#include "gguf/text/byte_trie.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/**
 * llama.cpp's unigram (UGM) tokenizer for one raw-text fragment.
 *
 * Normalization, position by position: the longest prefix of a user-defined token's text is copied as
 * is (llama.cpp matches the trie *path*, so a prefix of such a token that is no token counts too); else
 * the longest match of the precompiled charsmap (an XOR-compressed double array, XCDA) is replaced; else
 * one UTF-8 character is copied, or an invalid byte becomes U+FFFD. Spaces then become U+2581 (with
 * `escape_whitespaces`), one is put before the text (`add_space_prefix`; after it with
 * `treat_whitespace_as_suffix`), and runs of spaces merge (`remove_extra_whitespaces`, which also puts
 * a space before every word, as llama.cpp does).
 *
 * Segmentation: the Viterbi of SentencePiece over the normalized bytes, one UTF-8 character a step:
 * scores summed in double, user-defined tokens scored 0, a character no token starts scored as unknown
 * (the lowest normal score minus 10, in float), the first best path kept on ties, consecutive unknowns
 * merged into one.
 *
 * Where llama.cpp throws while tokenizing (a charsmap index out of its arrays, an unterminated
 * replacement), `build` refuses the vocabulary instead: every state the charsmap can reach is checked
 * once, so `encode` never fails.
 */
class ugm_encoder {
 public:
  /**
   * The encoder of `v`, which must outlive it.
   * @param v a vocabulary (normally of type `ugm`)
   * @return the encoder; `bad_vocabulary` naming tokenizer.ggml.precompiled_charsmap for a charsmap
   *         llama.cpp would fail on, or tokenizer.ggml.unknown_token_id when there is no unknown token
   */
  static result<ugm_encoder> build(const vocabulary& v) {
    ugm_encoder e;
    if (!v.valid(v.unk)) {
      return error{errc::bad_vocabulary, "the unigram tokenizer needs an unknown token"}.about(
          "tokenizer.ggml.unknown_token_id");
    }
    e.unk_ = v.unk;
    e.escape_ = v.escape_whitespaces;
    e.prepend_ = !v.treat_whitespace_as_suffix && v.add_space_prefix;
    e.append_ = v.treat_whitespace_as_suffix && v.add_space_prefix;
    e.merge_ = v.remove_extra_whitespaces;
    if (auto r = e.load_charsmap(v.precompiled_charsmap); !r) return r.error();

    // the tries: normal, user-defined and unused tokens; user-defined ones alone for normalization
    const std::size_t n = v.size();
    std::vector<std::string_view> keys, user_keys;
    std::vector<token_id> ids, user_ids;
    keys.reserve(n), ids.reserve(n);
    float min_score = FLT_MAX;
    for (std::size_t i = 0; i < n; ++i) {
      const auto id = static_cast<token_id>(i);
      const std::uint32_t a = v.attr(id);
      if (a & token_attr::normal) min_score = std::min(min_score, v.score(id));
      if (a & (token_attr::normal | token_attr::user_defined | token_attr::unused)) {
        keys.push_back(v.tokens.text(id));
        ids.push_back(id);
      }
      if (a & token_attr::user_defined) {
        user_keys.push_back(v.tokens.text(id));
        user_ids.push_back(id);
      }
    }
    e.tokens_.build(keys, ids);
    e.user_.build(user_keys, user_ids);
    for (unsigned c = 0; c < 256; ++c) e.user_first_[c] = e.user_.starts(static_cast<unsigned char>(c));
    // per token, the score a match adds (user-defined tokens 0, to make them likely: normal scores are
    // log probabilities)
    e.score_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto id = static_cast<token_id>(i);
      e.score_[i] = (v.attr(id) & token_attr::user_defined) ? 0.0 : double{v.score(id)};
    }
    e.unknown_score_ = min_score - 10.0f;  // in float, as llama.cpp
    return e;
  }

  /** Buffers of one call; reuse one across calls to skip their allocation. */
  struct scratch {
    std::string normalized;  ///< the normalized fragment
    /// The best segmentation of each prefix of it: its last token, where that starts, its score.
    /// The best tokenization of the text up to an offset: its last token, where it starts, its score.
    struct best {
      token_id id;       ///< the last token
      std::size_t from;  ///< where that token starts
      double score;      ///< the sum of the scores (llama.cpp sums in double)
    };
    std::vector<best> best_of;  ///< per normalized byte offset, and one past the end
  };

  /**
   * Appends the ids of one raw-text fragment (BOS and EOS are the caller's).
   * @param fragment any bytes
   * @param out      receives the ids
   */
  void encode(std::string_view fragment, std::vector<token_id>& out) const {
    scratch s;
    encode(fragment, out, s);
  }

  /** `encode` with reusable buffers. */
  void encode(std::string_view fragment, std::vector<token_id>& out, scratch& s) const {
    normalize(fragment, s.normalized);
    const std::string& t = s.normalized;
    const std::size_t len = t.size();
    if (len == 0) return;
    auto& best = s.best_of;
    best.assign(len + 1, {unk_, 0, -DBL_MAX});
    best[0] = {unk_, 0, 0.0};
    const auto* p = reinterpret_cast<const unsigned char*>(t.data());
    for (std::size_t at = 0; at < len;) {
      const std::size_t n_char = std::min(utf8_sequence_length(p[at]), len - at);
      const double base = best[at].score;
      bool whole_char = false;
      tokens_.prefixes(std::string_view(t).substr(at), [&](std::size_t n_bytes, token_id id) {
        if (n_bytes == n_char) whole_char = true;
        const double score = base + score_[static_cast<std::size_t>(id)];
        auto& champ = best[at + n_bytes];
        if (score > champ.score) champ = {id, at, score};
      });
      if (!whole_char) {  // no token is exactly this character: it is unknown
        const double score = base + double{unknown_score_};
        if (score > best[at + n_char].score) best[at + n_char] = {unk_, at, score};
      }
      at += n_char;
    }
    // back from the end, a run of unknowns giving one
    const std::size_t first = out.size();
    bool prev_unknown = false;
    for (std::size_t at = len;;) {
      const auto& b = best[at];
      const bool unknown = b.id == unk_;
      if (!(prev_unknown && unknown)) out.push_back(b.id);
      if (b.from == 0) break;
      prev_unknown = unknown;
      at = b.from;
    }
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  }

  /**
   * The normalized text llama.cpp segments (its `normalize`), for inspection and tests.
   * @param fragment any bytes
   * @param out      receives the normalized bytes (replaced, not appended)
   */
  void normalize(std::string_view fragment, std::string& out) const {
    out.clear();
    out.reserve(fragment.size() * 3);
    const std::string_view space = escape_ ? std::string_view("\xE2\x96\x81") : std::string_view(" ");
    bool space_prepended = false, in_word = false;
    const auto emit = [&](char c) {
      if (c != ' ') {
        if (!in_word) {
          in_word = true;
          if ((prepend_ && !space_prepended) || merge_) {
            out.append(space);
            space_prepended = true;
          }
        }
        out.push_back(c);
      } else {
        in_word = false;
        if (!merge_) out.append(space);
      }
    };
    for (std::size_t at = 0; at < fragment.size();) {
      const auto c0 = static_cast<unsigned char>(fragment[at]);
      if (c0 < 0x80 && !user_first_[c0] && !xcda_first_[c0]) {  // most text: the byte as it is
        emit(static_cast<char>(c0));
        ++at;
        continue;
      }
      const piece r = normalize_prefix(fragment, at);
      for (const char c : r.text) emit(c);
      at += r.consumed;
    }
    if (append_) out.append(space);
  }

 private:
  ugm_encoder() = default;

  struct piece {
    std::string_view text;  // the normalized bytes
    std::size_t consumed;   // the input bytes they stand for
  };

  // XCDA unit fields, as llama.cpp's xcda_array_view decodes them
  static std::uint32_t base_of(std::uint32_t u) noexcept { return (u >> 10) << ((u & (1u << 9)) >> 6); }
  static std::uint32_t lcheck_of(std::uint32_t u) noexcept { return u & ((1u << 31) | 0xFFu); }
  static bool leaf_of(std::uint32_t u) noexcept { return ((u >> 8) & 1u) != 0; }
  static std::uint32_t value_of(std::uint32_t u) noexcept { return u & ((1u << 31) - 1); }

  piece normalize_prefix(std::string_view in, std::size_t at) const {
    const auto* p = reinterpret_cast<const unsigned char*>(in.data());
    const std::size_t n = in.size();
    const unsigned char c0 = p[at];
    if (user_first_[c0]) {  // the trie path's length, a whole token or not (llama.cpp's)
      const std::size_t k = user_.path_length(in.substr(at));
      if (k > 0) return {in.substr(at, k), k};
    }
    if (xcda_first_[c0]) {
      std::size_t longest = 0;
      std::uint32_t repl = 0;
      std::uint32_t node = base_of(xcda_[0]);
      for (std::size_t k = at; k < n; ++k) {
        const unsigned char c = p[k];
        if (c == 0) break;
        node ^= c;
        if (node >= xcda_.size() || lcheck_of(xcda_[node]) != c) break;  // (build checked every index)
        const bool leaf = leaf_of(xcda_[node]);
        node ^= base_of(xcda_[node]);
        if (leaf) {
          if (node >= xcda_.size()) break;
          longest = k - at + 1;
          repl = value_of(xcda_[node]);
        }
      }
      if (longest > 0 && repl < replacements_.size()) {
        const char* r = replacements_.data() + repl;
        return {std::string_view(r, std::strlen(r)), longest};  // build checked the terminator
      }
    }
    if (c0 < 0x80) return {in.substr(at, 1), 1};
    // one character as it is, or U+FFFD for an invalid byte (llama.cpp's unicode_cpt_from_utf8 throws)
    const utf8_decoded d = decode_utf8_at(p + at, n - at);
    if (d.codepoint == replacement_character && d.length == 1) return {"\xEF\xBF\xBD", 1};
    return {in.substr(at, d.length), d.length};
  }

  // Reads the charsmap as llama.cpp does (a little-endian blob size, the XCDA units, then NUL-terminated
  // replacements), and walks every state an input can reach: each of the 255 transitions a byte can try
  // must index the array, and each match's replacement must start inside its strings and end with a NUL.
  result<bool> load_charsmap(const std::vector<std::uint8_t>& cm) {
    xcda_first_.fill(false);
    if (cm.empty()) return true;
    const auto bad = [](const char* what) {
      return error{errc::bad_vocabulary, what}.about("tokenizer.ggml.precompiled_charsmap");
    };
    if (cm.size() < 4) return bad("is too small for its header");
    const auto u32 = [&](std::size_t at) {
      std::uint32_t x;
      std::memcpy(&x, cm.data() + at, 4);
      if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap32(x);
      return x;
    };
    const std::uint32_t blob = u32(0);
    if (std::uint64_t{blob} + 4 >= cm.size()) return bad("its double array runs past its end");
    xcda_.resize(blob / 4);
    for (std::size_t i = 0; i < xcda_.size(); ++i) xcda_[i] = u32(4 + 4 * i);
    replacements_.assign(cm.begin() + 4 + blob, cm.end());
    if (xcda_.empty()) return true;  // llama.cpp then matches nothing

    const std::size_t size = xcda_.size();
    std::vector<std::uint8_t> seen(size + 256, 0);  // a state at or past size + 256 fails every transition
    std::vector<std::uint32_t> stack;
    const std::uint32_t start = base_of(xcda_[0]);
    if (start >= seen.size()) return bad("its root points past its end");
    seen[start] = 1;
    stack.push_back(start);
    while (!stack.empty()) {
      const std::uint32_t s = stack.back();
      stack.pop_back();
      for (std::uint32_t c = 1; c < 256; ++c) {
        const std::uint32_t at = s ^ c;
        if (at >= size) return bad("has a transition past the end of its double array");
        if (lcheck_of(xcda_[at]) != c) continue;
        if (s == start) xcda_first_[c] = true;
        const std::uint32_t next = at ^ base_of(xcda_[at]);
        if (leaf_of(xcda_[at])) {
          if (next >= size) return bad("has a match whose value is past the end of its double array");
          const std::uint32_t off = value_of(xcda_[next]);
          if (off >= replacements_.size()) return bad("has a replacement past the end of its strings");
          if (std::find(replacements_.begin() + off, replacements_.end(), '\0') == replacements_.end()) {
            return bad("has an unterminated replacement");
          }
        }
        if (next >= seen.size()) return bad("has a transition past the end of its double array");
        if (!seen[next]) {
          seen[next] = 1;
          stack.push_back(next);
        }
      }
    }
    return true;
  }

  detail::byte_trie tokens_;            // normal, user-defined and unused tokens
  std::vector<double> score_;           // per token, the score a match adds
  detail::byte_trie user_;              // user-defined tokens
  std::array<bool, 256> user_first_{};  // bytes a user-defined token starts with
  std::vector<std::uint32_t> xcda_;     // the charsmap's double array, in native byte order
  std::vector<char> replacements_;      // its NUL-terminated replacement strings
  std::array<bool, 256> xcda_first_{};  // bytes a charsmap match can start with
  float unknown_score_ = 0;
  token_id unk_ = no_token;
  bool escape_ = true, prepend_ = false, append_ = false, merge_ = false;
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_UGM_HPP
