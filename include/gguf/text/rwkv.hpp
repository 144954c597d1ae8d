#ifndef GGUF_TEXT_RWKV_HPP
#define GGUF_TEXT_RWKV_HPP

/**
 * @file
 * llama.cpp's RWKV tokenizer (`llm_tokenizer_rwkv_session`): greedy longest match over the tokens'
 * bytes, which the vocabulary stores escaped (`llama_unescape_rwkv_token`).
 */

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/text/token_table.hpp"
#include "gguf/text/vocabulary.hpp"
#include "gguf/text/byte_trie.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/**
 * The bytes an RWKV token's text stands for, as llama.cpp's `llama_unescape_rwkv_token`: `\t`, `\n`,
 * `\r` and `\\xHH` are escapes, a backslash before any other character is dropped, a trailing lone
 * backslash or an unfinished `\x` gives nothing. Hex digits are read as llama.cpp reads them on x86
 * (`char` signed): 'a'..'f' lower case only, anything else as `c - '0'` modulo 256, so `\\xG0` is 0x70
 * and an upper-case `\\xAB` is not 0xAB.
 * @param escaped a token's text as stored
 * @return the token's bytes
 */
inline std::string rwkv_unescape(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  bool escaping = false;
  unsigned hex_left = 0;
  std::uint8_t acc = 0;
  for (const char ch : escaped) {
    const auto c = static_cast<signed char>(ch);
    if (hex_left != 0) {
      const auto value = static_cast<std::uint8_t>(c >= 'a' ? c - 'a' + 10 : c - '0');
      acc = static_cast<std::uint8_t>((acc << 4) + value);
      if (--hex_left == 0) {
        out.push_back(static_cast<char>(acc));
        acc = 0;
      }
      continue;
    }
    if (escaping) {
      escaping = false;
      switch (ch) {
        case 't': out.push_back('\t'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 'x': hex_left = 2; break;
        default: out.push_back(ch); break;
      }
      continue;
    }
    if (ch == '\\') {
      escaping = true;
      continue;
    }
    out.push_back(ch);
  }
  return out;
}

/**
 * llama.cpp's RWKV tokenizer for one raw-text fragment: from each position, the longest token whose
 * bytes start there; a byte that starts no token gives the unknown token (`no_token` when the
 * vocabulary has none, as llama.cpp pushes it) and moves on one byte. Tokens with the same bytes: the
 * highest id wins (llama.cpp's trie keeps the last insert).
 *
 * One case where llama.cpp never ends: when a byte starts tokens' bytes but no token is a prefix of the
 * text there, it pushes token 0 and starts over from the fragment's first byte, forever. This encoder
 * pushes the unknown token and moves on one byte instead.
 */
class rwkv_encoder {
 public:
  /**
   * The encoder of `v`, which must outlive it: a trie of every token's unescaped bytes.
   * @param v a vocabulary (normally of type `rwkv`)
   */
  explicit rwkv_encoder(const vocabulary& v) : unk_(v.unk) {
    std::vector<std::string> bytes(v.size());
    std::vector<std::string_view> keys(v.size());
    std::vector<token_id> ids(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      bytes[i] = rwkv_unescape(v.tokens.text(static_cast<token_id>(i)));
      keys[i] = bytes[i];
      ids[i] = static_cast<token_id>(i);
    }
    trie_.build(keys, ids);
  }

  /**
   * Appends the ids of one raw-text fragment.
   * @param fragment any bytes
   * @param out      receives the ids
   */
  void encode(std::string_view fragment, std::vector<token_id>& out) const {
    std::size_t at = 0;
    while (at < fragment.size()) {
      const auto [len, best] = trie_.longest(fragment.substr(at));
      if (best == no_token) {  // no token at all (see the class comment for the path without a token)
        out.push_back(unk_);
        ++at;
        continue;
      }
      out.push_back(best);
      at += len;
    }
  }

 private:
  detail::byte_trie trie_;
  token_id unk_ = no_token;
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_RWKV_HPP
