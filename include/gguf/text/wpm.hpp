#ifndef GGUF_TEXT_WPM_HPP
#define GGUF_TEXT_WPM_HPP

/**
 * @file
 * llama.cpp's WordPiece tokenizer (`llm_tokenizer_wpm_session`, BERT's "bert" vocabularies), and the
 * byte trie the WPM, UGM and RWKV encoders walk.
 */

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/text/byte_trie.hpp"
#include "gguf/text/codepoints.hpp"
#include "gguf/text/token_table.hpp"
#include "gguf/text/unicode.hpp"
#include "gguf/text/vocabulary.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/**
 * llama.cpp's WordPiece tokenizer (`llm_tokenizer_wpm_session::tokenize`): the text split into words at
 * whitespace and around punctuation, ASCII symbols and CJK ideographs (control characters, U+0000 and
 * U+FFFD dropped; lower-cased and accents stripped as the vocabulary says), then each word, prefixed
 * with U+2581, cut greedily into the longest tokens from its start; a word that cannot be cut to its
 * end is the unknown token alone.
 *
 * Quirks kept: matching is by bytes (a token may end inside a character); a cut-off word's tokens are
 * all dropped; the unknown token is the vocabulary's (`no_token` when it has none, as in llama.cpp).
 * Where llama.cpp aborts (a code point above U+10FFFF, from F4 90.. to F7 BF BF BF, cannot be written
 * back as UTF-8) the lead byte reads as invalid, U+FFFD, as llama.cpp reads F8..FF.
 */
class wpm_encoder {
 public:
  /**
   * The encoder of `v`, which must outlive it. Builds a trie of every token's text (4 ms for BERT's 30k).
   * @param v a vocabulary (any type; its flags `lowercase` and `strip_accents` apply)
   */
  explicit wpm_encoder(const vocabulary& v) : unk_(v.unk), lowercase_(v.lowercase), strip_(v.strip_accents) {
    std::vector<std::string_view> keys(v.size());
    std::vector<token_id> ids(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      keys[i] = v.tokens.text(static_cast<token_id>(i));
      ids[i] = static_cast<token_id>(i);
    }
    trie_.build(keys, ids);
    max_len_ = v.max_token_length;
    // ASCII's classes, by the same rules as every other code point (NFD and accents leave ASCII alone)
    for (char32_t c = 0; c < 128; ++c) {
      const codepoint_flags f = flags_of(c);
      std::uint8_t k = keep;
      if (f.is_whitespace()) {
        k = split;
      } else if (c == 0 || f.is_control()) {
        k = drop;
      } else if (f.is_punctuation() || (c < 0x7F && f.is_symbol())) {
        k = alone;
      }
      ascii_class_[c] = k;
      ascii_char_[c] = static_cast<char>(lowercase_ ? to_lower(c) : c);
    }
  }

  /** Buffers of one call; reuse one across calls to skip their allocation. */
  struct scratch {
    std::string word;  ///< the word being gathered, after its U+2581
  };

  /**
   * Appends the ids of one raw-text fragment (BOS and SEP are the caller's).
   * @param fragment any bytes (invalid UTF-8 decodes to U+FFFD, which is dropped)
   * @param out      receives the ids
   */
  void encode(std::string_view fragment, std::vector<token_id>& out) const {
    scratch s;
    encode(fragment, out, s);
  }

  /** `encode` with reusable buffers. */
  void encode(std::string_view fragment, std::vector<token_id>& out, scratch& s) const {
    std::string& w = s.word;
    w.assign(phantom_space);
    const auto flush = [&] {
      if (w.size() > phantom_space.size()) encode_word(w, out);
      w.resize(phantom_space.size());
    };
    const auto* p = reinterpret_cast<const unsigned char*>(fragment.data());
    const std::size_t n = fragment.size();
    for (std::size_t i = 0; i < n;) {
      if (p[i] < 0x80) {
        const unsigned char c = p[i++];
        switch (ascii_class_[c]) {
          case keep: w.push_back(ascii_char_[c]); break;
          case split: flush(); break;
          case drop: break;
          default:
            flush();
            w.push_back(ascii_char_[c]);
            flush();
            break;
        }
        continue;
      }
      const utf8_decoded d = decode_utf8_at(p + i, n - i, above_unicode::invalid);
      i += d.length;
      char32_t cp = d.codepoint;
      if (strip_) cp = nfd(cp);
      const codepoint_flags f = flags_of(cp);
      if (f.is_whitespace()) {
        flush();
        continue;
      }
      if (cp == 0 || cp == replacement_character || f.is_control()) continue;
      if (strip_ && f.is_accent_mark()) continue;
      const char32_t out_cp = lowercase_ ? to_lower(cp) : cp;
      if (f.is_punctuation() || (cp < 0x7F && f.is_symbol()) || is_chinese_char(cp)) {
        flush();
        append_utf8(w, out_cp);
        flush();
      } else {
        append_utf8(w, out_cp);
      }
    }
    flush();
  }

  /** llama.cpp's `is_chinese_char`: the CJK ideograph blocks BERT splits around (its ranges exactly). */
  static constexpr bool is_chinese_char(char32_t c) noexcept {
    return (c >= 0x04E00 && c <= 0x09FFF) || (c >= 0x03400 && c <= 0x04DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) ||
           (c >= 0x2B920 && c <= 0x2CEAF) ||  // 0x2B920, not 0x2B820: as HF's Rust code, hence llama.cpp
           (c >= 0x0F900 && c <= 0x0FAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
  }

 private:
  static constexpr std::string_view phantom_space = "\xE2\x96\x81";
  enum : std::uint8_t { keep, split, drop, alone };

  // One word, U+2581 first: the longest token at each position (llama.cpp tries lengths up to
  // max_token_len + 1 from the longest down, which is the deepest key on the trie path).
  void encode_word(std::string_view w, std::vector<token_id>& out) const {
    const std::size_t n = w.size(), start = out.size();
    std::size_t i = 0;
    while (i < n) {
      const std::size_t limit = std::min(n, i + max_len_ + 1);
      const auto [len, best] = trie_.longest(w.substr(i, limit - i));
      if (best == no_token) {  // llama.cpp discards the word's tokens so far
        out.resize(start);
        break;
      }
      out.push_back(best);
      i += len;
    }
    if (out.size() == start) out.push_back(unk_);
  }

  detail::byte_trie trie_;
  std::size_t max_len_ = 0;
  token_id unk_ = no_token;
  bool lowercase_ = false, strip_ = false;
  std::array<std::uint8_t, 128> ascii_class_{};
  std::array<char, 128> ascii_char_{};
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_WPM_HPP
