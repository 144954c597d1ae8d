#ifndef GGUF_TEXT_PLAMO2_HPP
#define GGUF_TEXT_PLAMO2_HPP

/**
 * @file
 * llama.cpp's PLaMo-2 tokenizer (`llm_tokenizer_plamo2`): a dynamic programme over the text's code
 * points, right to left, driven by a table of every suffix of every token.
 */

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/result.hpp"
#include "gguf/text/codepoints.hpp"
#include "gguf/text/token_table.hpp"
#include "gguf/text/vocabulary.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/**
 * llama.cpp's PLaMo-2 tokenizer for one raw-text fragment.
 *
 * The table (built as llama.cpp builds it): every token's text and each of its code-point suffixes is a
 * "suffix", sorted by its reversed bytes; each suffix has a block of rows, one per prefix of it that is
 * itself a suffix (longest first: length, token id or -1, score ×10⁴ rounded or "invalid" for a
 * non-token, the prefix's suffix id), then a sentinel row (one code point, unknown). Encoding walks the
 * code points from the end, following (code point, suffix id) → suffix id, and keeps the lowest cost
 * of each position (first found on ties); a code point covered by no token is spelt with the byte
 * tokens of its UTF-8. A leading U+FEFF is dropped.
 */
class plamo2_encoder {
 public:
  /**
   * The encoder of `v`, which must outlive it.
   * @param v a vocabulary (normally of type `plamo2`) with a byte token `<0xXX>` for every byte
   * @return the encoder; `bad_vocabulary` naming the first missing byte token (llama.cpp refuses the
   *         vocabulary too, and also counts a byte token of id 0 as missing)
   */
  static result<plamo2_encoder> build(const vocabulary& v) {
    plamo2_encoder e;
    std::unordered_map<std::string, float> suffix_score;  // NaN: a suffix that is no token
    std::vector<char32_t> cps;
    std::string s;
    e.bytes_.assign(256, 0);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto id = static_cast<token_id>(i);
      const std::string_view text = v.tokens.text(id);
      if (v.attr(id) & token_attr::byte) {
        if (text.size() == 6 && text.substr(0, 3) == "<0x" && text.back() == '>' && hex(text[3]) >= 0 &&
            hex(text[4]) >= 0) {
          e.bytes_[static_cast<std::size_t>(hex(text[3])) * 16 + static_cast<std::size_t>(hex(text[4]))] = id;
        }
        continue;
      }
      suffix_score[std::string(text)] = v.score(id);
      cps.clear();
      decode_utf8(text, cps);
      for (const char32_t cp : cps) {
        if (cp > 0x10FFFF) {  // llama.cpp throws writing it back as UTF-8
          return error{errc::bad_vocabulary, "a token has a code point above U+10FFFF"}.about("tokenizer.ggml.tokens",
                                                                                              ": ", text);
        }
      }
      for (std::size_t k = 1; k < cps.size(); ++k) {
        s.clear();
        for (std::size_t j = k; j < cps.size(); ++j) append_utf8(s, cps[j]);
        suffix_score.try_emplace(s, std::numeric_limits<float>::quiet_NaN());
      }
    }
    for (int b = 0; b < 256; ++b) {
      if (e.bytes_[static_cast<std::size_t>(b)] == 0) {
        static constexpr char digits[] = "0123456789ABCDEF";
        const char name[7] = {'<', '0', 'x', digits[b >> 4], digits[b & 15], '>', 0};
        return error{errc::bad_vocabulary, "PLaMo-2 needs a byte token for every byte; missing"}.about(
            "tokenizer.ggml.tokens", ": ", name);
      }
    }

    // the suffixes in the order of their reversed bytes, the empty one first
    std::vector<std::string> suffixes;
    suffixes.reserve(suffix_score.size() + 1);
    for (const auto& kv : suffix_score) suffixes.push_back(kv.first);
    suffixes.emplace_back();
    std::vector<std::string> reversed(suffixes.size());
    std::vector<std::uint32_t> order(suffixes.size());
    for (std::size_t i = 0; i < suffixes.size(); ++i) {
      reversed[i].assign(suffixes[i].rbegin(), suffixes[i].rend());
      order[i] = static_cast<std::uint32_t>(i);
    }
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return reversed[a] < reversed[b]; });

    // suffix ids (the first row of each block) and the (first code point, rest's id) → suffix id map
    std::unordered_map<std::string, std::int32_t> suffix_id;
    suffix_id.reserve(suffixes.size());
    std::int32_t rows = 0;
    std::string rest;
    for (const std::uint32_t o : order) {
      const std::string& suf = suffixes[o];
      suffix_id[suf] = rows;
      if (suf.empty()) {
        ++rows;
        continue;
      }
      cps.clear();
      decode_utf8(suf, cps);
      rest.clear();
      for (std::size_t k = 1; k < cps.size(); ++k) append_utf8(rest, cps[k]);
      // operator[]: an id not seen yet is 0, as in llama.cpp (only ill-formed UTF-8 gets here)
      e.to_suffix_.insert(code(cps[0], suffix_id[rest]), rows);
      std::int32_t n_rows = 1;
      for (std::size_t len = cps.size(); len > 0; --len) {
        s.clear();
        for (std::size_t k = 0; k < len; ++k) append_utf8(s, cps[k]);
        if (suffix_score.contains(s)) ++n_rows;
      }
      rows += n_rows;
    }

    e.table_.reserve(static_cast<std::size_t>(rows));
    for (const std::uint32_t o : order) {
      cps.clear();
      decode_utf8(suffixes[o], cps);
      for (std::size_t len = cps.size(); len > 0; --len) {
        s.clear();
        for (std::size_t k = 0; k < len; ++k) append_utf8(s, cps[k]);
        const auto it = suffix_score.find(s);
        if (it == suffix_score.end()) continue;
        row r;
        r.length = static_cast<std::int32_t>(len);
        r.token = v.tokens.find(s);
        r.score = std::isfinite(it->second) ? to_int32(std::round(double{it->second} * 1e4)) : invalid_score;
        r.piece = suffix_id[s];
        e.table_.push_back(r);
      }
      e.table_.push_back({1, no_token, unknown_score, 0});
    }
    return e;
  }

  /** Buffers of one call; reuse one across calls to skip their allocation. */
  struct scratch {
    std::vector<char32_t> cps;         ///< the fragment's code points
    std::vector<std::int64_t> cost;    ///< per position, the lowest cost of the rest
    std::vector<std::int32_t> length;  ///< per position, the length of its best piece
    std::vector<token_id> token;       ///< per position, its best piece's token (-1: bytes)
  };

  /**
   * Appends the ids of one raw-text fragment.
   * @param fragment any bytes (invalid UTF-8 decodes to U+FFFD)
   * @param out      receives the ids
   */
  void encode(std::string_view fragment, std::vector<token_id>& out) const {
    scratch s;
    encode(fragment, out, s);
  }

  /** `encode` with reusable buffers. */
  void encode(std::string_view fragment, std::vector<token_id>& out, scratch& sc) const {
    auto& cps = sc.cps;
    cps.clear();
    decode_utf8(fragment, cps, above_unicode::invalid);             // llama.cpp aborts writing such a value back
    std::size_t skip = (!cps.empty() && cps[0] == 0xFEFF) ? 1 : 0;  // a byte order mark
    const std::size_t n = cps.size() - skip;
    if (n == 0) return;
    const char32_t* c = cps.data() + skip;
    auto& cost = sc.cost;
    auto& length = sc.length;
    auto& token = sc.token;
    cost.assign(n + 1, std::int64_t{1} << 60);
    cost[n] = 0;
    length.assign(n + 1, 0);
    token.assign(n + 1, 0);
    const std::size_t rows = table_.size();
    std::size_t suffix = 0;
    for (std::size_t i = n; i-- > 0;) {
      // the longest suffix of a token that the text from i starts with
      for (std::size_t p = suffix; p < rows; ++p) {
        suffix = static_cast<std::size_t>(to_suffix_.find(code(c[i], table_[p].piece)));
        if (suffix > 0 || table_[p].score == unknown_score) break;
      }
      for (std::size_t p = suffix; p < rows; ++p) {
        const row& r = table_[p];
        if (r.score > invalid_score) {
          const auto len = static_cast<std::size_t>(r.length);
          // llama.cpp trusts the table to stay inside the text; stop a row that would not
          if (len <= n - i) {
            const std::int64_t s = cost[i + len] - r.score;
            if (s < cost[i]) {
              cost[i] = s;
              length[i] = r.length;
              token[i] = r.token;
            }
          }
        }
        if (r.score == unknown_score) break;
      }
    }
    for (std::size_t pos = 0; pos < n;) {
      if (token[pos] >= 0) {
        out.push_back(token[pos]);
      } else {  // the code point's UTF-8 as byte tokens
        const std::uint32_t cp = c[pos];
        const int len = 1 + (cp >= 0x80) + (cp >= 0x800) + (cp >= 0x10000);
        for (int k = 0; k < len; ++k) {
          std::uint32_t b = len == 1 ? cp : (k == 0 ? (0xF00u >> len) & 0xFFu : 0x80u);
          b |= (cp >> ((len - k - 1) * 6)) & 0x3Fu;
          out.push_back(bytes_[b & 0xFFu]);
        }
      }
      pos += length[pos] > 0 ? static_cast<std::size_t>(length[pos]) : 1;  // (llama.cpp asserts > 0)
    }
  }

 private:
  plamo2_encoder() = default;

  static constexpr std::int32_t invalid_score = -20000000;
  static constexpr std::int32_t unknown_score = -10000000;

  struct row {
    std::int32_t length = 0;    // code points
    token_id token = no_token;  // -1: a suffix that is no token, or the sentinel
    std::int32_t score = 0;     // round(score * 1e4), invalid_score or unknown_score
    std::int32_t piece = 0;     // the suffix id of this prefix
  };

  // (code point, suffix id) → suffix id, open addressing (llama.cpp: an unordered_map of int64)
  class code_map {
   public:
    void insert(std::uint64_t k, std::int32_t v) {
      if ((size_ + 1) * 2 > slots_.size()) grow();
      put(k, v);
    }
    std::int32_t find(std::uint64_t k) const noexcept {
      if (slots_.empty()) return 0;
      for (std::size_t i = hash(k) & mask_;; i = (i + 1) & mask_) {
        if (slots_[i].value < 0) return 0;
        if (slots_[i].key == k) return slots_[i].value;
      }
    }

   private:
    struct slot {
      std::uint64_t key = 0;
      std::int32_t value = -1;
    };
    static std::uint64_t hash(std::uint64_t k) noexcept {
      k ^= k >> 31;
      k *= 0x7FB5D329728EA185ull;
      return k ^ (k >> 27);
    }
    void put(std::uint64_t k, std::int32_t v) {
      for (std::size_t i = hash(k) & mask_;; i = (i + 1) & mask_) {
        if (slots_[i].value < 0) {
          slots_[i] = {k, v};
          ++size_;
          return;
        }
        if (slots_[i].key == k) {  // a later insert replaces, as map[k] = v
          slots_[i].value = v;
          return;
        }
      }
    }
    void grow() {
      std::vector<slot> old = std::move(slots_);
      slots_.assign(old.empty() ? 64 : old.size() * 2, slot{});
      mask_ = slots_.size() - 1;
      size_ = 0;
      for (const slot& s : old)
        if (s.value >= 0) put(s.key, s.value);
    }
    std::vector<slot> slots_;
    std::size_t mask_ = 0, size_ = 0;
  };

  static std::uint64_t code(char32_t cp, std::int32_t id) noexcept {
    return (std::uint64_t{cp} << 32) | static_cast<std::uint32_t>(id);
  }
  static int hex(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  // A double to int32 as x86's conversion does it: out of range gives INT32_MIN (C++ leaves it undefined)
  static std::int32_t to_int32(double x) noexcept {
    if (!(x >= -2147483648.0 && x < 2147483648.0)) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(x);
  }

  std::vector<token_id> bytes_;  // per byte, its token
  code_map to_suffix_;
  std::vector<row> table_;
};

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_PLAMO2_HPP
