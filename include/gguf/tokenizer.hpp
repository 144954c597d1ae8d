#ifndef GGUF_TOKENIZER_HPP
#define GGUF_TOKENIZER_HPP

/**
 * @file
 * Text to token ids and back, from the vocabulary a GGUF file carries (the tokenizer.ggml keys), with exactly
 * llama.cpp's ids (`llama_tokenize`) and bytes (`llama_detokenize`) for every tokenizer model it has:
 * SPM, BPE with each of its pre-tokenizers, WPM, UGM, RWKV and PLaMo-2.
 */

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/format/metadata.hpp"
#include "gguf/result.hpp"
#include "gguf/text/bpe.hpp"
#include "gguf/text/plamo2.hpp"
#include "gguf/text/rwkv.hpp"
#include "gguf/text/special_tokens.hpp"
#include "gguf/text/spm.hpp"
#include "gguf/text/ugm.hpp"
#include "gguf/text/vocabulary.hpp"
#include "gguf/text/wpm.hpp"

GGUF_BEGIN_NAMESPACE

/// A token id (llama.cpp's `llama_token`).
using token_id = text::token_id;

/// How `tokenizer::encode` treats special tokens (the two flags of `llama_tokenize`).
struct encode_options {
  bool add_special = true;     ///< add BOS/EOS/SEP as the vocabulary asks (`add_special`)
  bool parse_special = false;  ///< match control tokens' texts in the input (`parse_special`)
};

/// How `tokenizer::from` builds the tables.
struct build_options {
  /// The most threads to build with, the calling thread included (`std::thread::hardware_concurrency()`,
  /// say). Threads start and end within the call; a vocabulary of fewer than 65,536 tokens and merges
  /// is built on the calling thread alone. The tokenizer is the same whatever the number.
  unsigned threads = 1;
};

/// How `tokenizer::decode` treats special tokens (the two flags of `llama_detokenize`).
struct decode_options {
  bool remove_special = false;   ///< drop a leading BOS and a trailing EOS the vocabulary adds
  bool unparse_special = false;  ///< write control and unknown tokens' texts (otherwise nothing)
};

/**
 * A tokenizer built from a file's vocabulary: immutable, cheap to copy (copies share it), and safe to
 * use from many threads at once. It owns its tables; the file may be closed once it is built.
 */
class tokenizer {
 public:
  /**
   * Builds the tokenizer of a file's metadata, as llama.cpp's vocabulary loader does.
   * @param md      the metadata of a model, vocabulary file or a shard set's first shard
   * @param options how to build it
   * @return the tokenizer; `not_found` without a tokenizer, `out_of_range` for a tokenizer model or
   *         pre-tokenizer llama.cpp does not know, `bad_vocabulary` (naming the key) for one that cannot work
   */
  static result<tokenizer> from_metadata(const metadata_table& md, build_options options = {}) {
    auto v = text::load_vocabulary(md, options.threads);
    if (!v) return v.error();
    auto st = std::make_shared<state>(std::move(*v));
    const text::vocabulary& voc = st->vocab;
    switch (voc.type) {
      case text::vocab_type::spm: st->spm.emplace(voc); break;
      case text::vocab_type::bpe: st->bpe.emplace(voc); break;
      case text::vocab_type::wpm: st->wpm.emplace(voc); break;
      case text::vocab_type::ugm: {
        auto e = text::ugm_encoder::build(voc);
        if (!e) return e.error();
        st->ugm.emplace(std::move(*e));
        break;
      }
      case text::vocab_type::rwkv: st->rwkv.emplace(voc); break;
      case text::vocab_type::plamo2: {
        auto e = text::plamo2_encoder::build(voc);
        if (!e) return e.error();
        st->plamo2.emplace(std::move(*e));
        break;
      }
      case text::vocab_type::none: return error{errc::out_of_range, "a vocabulary without tokens"};
    }
    st->specials.emplace(voc);
    tokenizer t(std::move(st));
    // llama.cpp's newline token: the byte token of '\n' for SPM, the pad token for WPM, else "\n" tokenized
    if (voc.type == text::vocab_type::spm) {
      t.state_->newline = voc.byte_tokens['\n'] != text::no_token ? voc.byte_tokens['\n'] : voc.pad;
    } else if (voc.type == text::vocab_type::wpm) {
      t.state_->newline = voc.pad;
    } else {
      const auto ids = t.encode("\n", {false, false});
      t.state_->newline = !ids || ids->empty() ? voc.pad : ids->front();
    }
    return t;
  }

  /**
   * Builds the tokenizer of anything with `metadata()`: a parsed file, a mapped file, a model or shard set.
   * @param source  the file or model; it may be closed afterwards
   * @param options how to build it
   */
  template <class Source>
  requires requires(const Source& s) {
    { s.metadata() } -> std::convertible_to<const metadata_table&>;
  }
  static result<tokenizer> from(const Source& source, build_options options = {}) {
    return from_metadata(source.metadata(), options);
  }

  /// The longest text `encode` takes: llama.cpp's `llama_tokenize` takes an `int32_t` length.
  static constexpr std::size_t max_text_bytes = 0x7FFFFFFF;

  /**
   * Token ids of `text`, identical to llama.cpp's `llama_tokenize(vocab, text, ..., add_special,
   * parse_special)`. Time and memory are linear in the text whatever the vocabulary.
   * @param text any bytes (invalid UTF-8 is tokenized as llama.cpp does: as U+FFFD or as bytes; a
   *             4-byte sequence above U+10FFFF, on which llama.cpp's BPE, WPM and PLaMo-2 abort, as
   *             the invalid bytes it is)
   * @param opt  whether to add BOS/EOS/SEP and whether to match control tokens in the text
   * @return the ids; `limit_exceeded` for a text over `max_text_bytes`; `bad_vocabulary`, naming the
   *         byte and the vocabulary, where llama.cpp aborts because the vocabulary lacks a token the
   *         text needs (an SPM vocabulary without the byte token of a character it has no token for)
   */
  result<std::vector<token_id>> encode(std::string_view text, encode_options opt = {}) const {
    std::vector<token_id> out;
    // a token per four bytes, about what prose takes: the doublings of a text of one token a byte
    // (digits, byte fallback) then peak at 6 bytes per byte, not up to 12
    out.reserve(std::min(text.size(), max_text_bytes) / 4 + 8);
    GGUF_TRY(encode(text, out, opt));
    return out;
  }

  /** `encode`, appending to `out`; on an error `out` is left as it was. */
  result<void> encode(std::string_view text, std::vector<token_id>& out, encode_options opt = {}) const {
    if (text.size() > max_text_bytes) {
      return error{errc::limit_exceeded, "a text too long to tokenize (llama_tokenize takes at most 2^31 - 1 bytes)"};
    }
    const std::size_t before = out.size();
    error failed;
    encode_fragments(text, out, opt, failed);
    if (failed) {
      out.resize(before);
      return failed;
    }
    return {};
  }

  /**
   * The bytes of `ids`, identical to llama.cpp's `llama_detokenize` (not necessarily valid UTF-8: a
   * character may be split across ids).
   * @return the bytes; `out_of_range` for an id outside the vocabulary
   */
  result<std::string> decode(std::span<const token_id> ids, decode_options opt = {}) const {
    const text::vocabulary& v = state_->vocab;
    bool remove_space = v.add_space_prefix;
    if (opt.remove_special && v.add_bos && !ids.empty() && ids.front() == v.bos) {
      remove_space = false;
      ids = ids.subspan(1);
    }
    if (opt.remove_special && v.add_eos && !ids.empty() && ids.back() == v.eos) ids = ids.first(ids.size() - 1);
    std::string out;
    for (const token_id id : ids) {
      if (!v.valid(id)) return error{errc::out_of_range, "a token id outside the vocabulary"};
      const std::size_t at = out.size();
      append_piece(out, id, opt.unparse_special);
      if (remove_space && out.size() > at && out[at] == ' ') out.erase(at, 1);
      remove_space = false;
    }
    if (v.clean_spaces) clean_spaces(out);
    return out;
  }

  /**
   * The bytes of one token, as llama.cpp's `llama_token_to_piece(vocab, id, ..., lstrip 0, special)`.
   * @param id      the token
   * @param special write control and unknown tokens' texts (otherwise they have no bytes)
   * @return the bytes; `out_of_range` for an id outside the vocabulary
   */
  result<std::string> token_to_piece(token_id id, bool special = true) const {
    if (!state_->vocab.valid(id)) return error{errc::out_of_range, "a token id outside the vocabulary"};
    std::string out;
    append_piece(out, id, special);
    return out;
  }

  /// The number of tokens (`llama_vocab_n_tokens`).
  std::size_t n_vocab() const noexcept { return state_->vocab.size(); }
  /// The tokenizer model.
  text::vocab_type type() const noexcept { return state_->vocab.type; }
  /// The text of a token as stored (`llama_vocab_get_text`); empty for an id outside the vocabulary.
  std::string_view token_text(token_id id) const noexcept {
    return state_->vocab.valid(id) ? state_->vocab.tokens.text(id) : std::string_view{};
  }
  /// The id whose text is exactly `s`, or -1.
  token_id find(std::string_view s) const noexcept { return state_->vocab.tokens.find(s); }
  /// True when `id` ends generation (llama.cpp's `llama_vocab_is_eog`).
  bool is_eog(token_id id) const noexcept { return state_->vocab.is_eog(id); }
  /// Beginning of sequence, or -1.
  token_id bos() const noexcept { return state_->vocab.bos; }
  /// End of sequence, or -1.
  token_id eos() const noexcept { return state_->vocab.eos; }
  /// End of turn, or -1.
  token_id eot() const noexcept { return state_->vocab.eot; }
  /// Separator, or -1.
  token_id sep() const noexcept { return state_->vocab.sep; }
  /// Unknown, or -1.
  token_id unk() const noexcept { return state_->vocab.unk; }
  /// Padding, or -1.
  token_id pad() const noexcept { return state_->vocab.pad; }
  /// Newline, as llama.cpp finds it (`llama_vocab_nl`), or -1.
  token_id newline() const noexcept { return state_->newline; }
  /// Everything llama.cpp loads: special ids, flags, scores, attributes.
  const text::vocabulary& vocabulary() const noexcept { return state_->vocab; }

 private:
  struct state {
    explicit state(text::vocabulary&& v) : vocab(std::move(v)) {}
    text::vocabulary vocab;  // the encoders point at it: state never moves (it lives in a shared_ptr)
    std::optional<text::spm_encoder> spm;
    std::optional<text::bpe_encoder> bpe;
    std::optional<text::wpm_encoder> wpm;
    std::optional<text::ugm_encoder> ugm;
    std::optional<text::rwkv_encoder> rwkv;
    std::optional<text::plamo2_encoder> plamo2;
    std::optional<text::special_matcher> specials;
    token_id newline = text::no_token;
  };
  explicit tokenizer(std::shared_ptr<state> s) noexcept : state_(std::move(s)) {}

  // The ids of each fragment the special tokens leave, as each tokenizer model encodes it; the first
  // failure stops the work (the rest of the fragments are skipped).
  void encode_fragments(std::string_view text, std::vector<token_id>& out, encode_options opt, error& failed) const {
    const text::vocabulary& v = state_->vocab;
    using vt = text::vocab_type;
    const auto raw = [&](const text::fragment& f) { return text.substr(f.begin, f.length); };
    switch (v.type) {
      case vt::spm: {
        if (opt.add_special && v.add_bos) out.push_back(v.bos);
        bool prev_special = true;
        text::spm_encoder::scratch s;
        std::string& buf = s.text;
        state_->specials->partition(text, opt.parse_special, [&](const text::fragment& f) {
          if (failed) return;
          if (f.token != text::no_token) {
            out.push_back(f.token);
            prev_special = true;
            return;
          }
          // escaped and encoded a stretch at a time: the escaped copy stays small, and in cache
          const std::string_view r = raw(f);
          const std::size_t first_id = out.size();
          std::size_t at = 0;
          do {
            const std::size_t end = state_->spm->stretch_end(r, at, std::size_t{1} << 15);
            buf.clear();
            if (at == 0 && v.add_space_prefix && prev_special) buf += "\xE2\x96\x81";
            text::escape_spaces(r.substr(at, end - at), buf);
            if (auto e = state_->spm->encode(buf, out, s); !e) failed = e.error();
            at = end;
            if (at < r.size()) text::detail::reserve_for_rest(out, out.size() - first_id, at, r.size() - at);
          } while (at < r.size() && !failed);
          prev_special = false;
        });
        if (opt.add_special && v.add_eos) out.push_back(v.eos);
        break;
      }
      case vt::bpe: {
        if (opt.add_special && v.add_bos) out.push_back(v.bos);
        text::bpe_encoder::scratch s;
        state_->specials->partition(text, opt.parse_special, [&](const text::fragment& f) {
          if (f.token != text::no_token) {
            out.push_back(f.token);
          } else if (v.model == "whitespace") {
            encode_whitespace_model(raw(f), out, s);
          } else if (v.model == "hybriddna") {
            encode_dna_model(raw(f), out, s);
          } else {
            state_->bpe->encode(raw(f), out, s);
          }
        });
        if (opt.add_special && v.add_eos) out.push_back(v.eos);
        break;
      }
      case vt::wpm: {
        if (opt.add_special) out.push_back(v.bos);
        state_->specials->partition(text, opt.parse_special, [&](const text::fragment& f) {
          if (f.token != text::no_token) {
            out.push_back(f.token);
          } else {
            state_->wpm->encode(raw(f), out);
          }
        });
        if (opt.add_special) out.push_back(v.sep);
        break;
      }
      case vt::ugm: {
        if (opt.add_special && v.add_bos) out.push_back(v.bos);
        state_->specials->partition(text, opt.parse_special, [&](const text::fragment& f) {
          if (f.token != text::no_token) {
            out.push_back(f.token);
          } else {
            state_->ugm->encode(raw(f), out);
          }
        });
        if (opt.add_special && v.add_eos) out.push_back(v.eos);
        break;
      }
      case vt::rwkv:
      case vt::plamo2: {
        state_->specials->partition(text, opt.parse_special, [&](const text::fragment& f) {
          if (f.token != text::no_token) {
            out.push_back(f.token);
          } else if (v.type == vt::rwkv) {
            state_->rwkv->encode(raw(f), out);
          } else {
            state_->plamo2->encode(raw(f), out);
          }
        });
        break;
      }
      case vt::none: break;
    }
  }

  // The "whitespace" tokenizer model: BPE over each run of non-whitespace (lower-cased if asked).
  void encode_whitespace_model(std::string_view fragment, std::vector<token_id>& out,
                               text::bpe_encoder::scratch& s) const {
    const text::vocabulary& v = state_->vocab;
    std::string escaped;
    if (v.escape_whitespaces) fragment = escaped = escape_spaces(fragment);
    std::vector<char32_t> cpts;
    text::decode_utf8(fragment, cpts, text::above_unicode::invalid);
    std::string segment;
    const auto flush = [&] {
      if (segment.empty()) return;
      state_->bpe->encode(segment, out, s, false);
      segment.clear();
    };
    for (const char32_t c : cpts) {
      if (text::flags_of(c).is_whitespace()) {
        flush();
      } else {
        text::append_utf8(segment, v.lowercase ? text::to_lower(c) : c);
      }
    }
    flush();
  }

  // The "hybriddna" tokenizer model: text between <dna> and </dna> as 6-letter k-mers, the rest as BPE.
  void encode_dna_model(std::string_view fragment, std::vector<token_id>& out, text::bpe_encoder::scratch& s) const {
    const text::vocabulary& v = state_->vocab;
    std::string escaped;
    if (v.escape_whitespaces) fragment = escaped = escape_spaces(fragment);
    constexpr std::string_view open = "<dna>", close = "</dna>";
    const token_id begin_id = v.tokens.find(open), end_id = v.tokens.find(close), oov = v.tokens.find("<oov>");
    if (begin_id == text::no_token || end_id == text::no_token || oov == text::no_token) {
      state_->bpe->encode(fragment, out, s, false);
      return;
    }
    constexpr std::size_t k = 6;
    const auto kmer = [&](std::string m) {
      m += text::dna_marker;
      const token_id id = v.tokens.find(m);
      out.push_back(id != text::no_token ? id : oov);
    };
    std::size_t pos = 0;
    while (pos < fragment.size()) {
      const std::size_t start = fragment.find(open, pos);
      if (start == std::string_view::npos) {
        state_->bpe->encode(fragment.substr(pos), out, s, false);
        break;
      }
      if (start > pos) state_->bpe->encode(fragment.substr(pos, start - pos), out, s, false);
      out.push_back(begin_id);
      const std::size_t content = start + open.size();
      const std::size_t end = fragment.find(close, content);
      std::string seq(fragment.substr(content, (end == std::string_view::npos ? fragment.size() : end) - content));
      for (char& c : seq) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      }
      std::size_t i = 0;
      for (; i + k <= seq.size(); i += k) kmer(seq.substr(i, k));
      if (i < seq.size()) {
        std::string m = seq.substr(i);
        m.append(k - m.size(), 'A');
        kmer(m);
      }
      if (end == std::string_view::npos) break;
      out.push_back(end_id);
      pos = end + close.size();
    }
  }

  static std::string escape_spaces(std::string_view t) {
    std::string out;
    out.reserve(t.size());
    for (const char c : t) {
      if (c == ' ') {
        out += "\xE2\x96\x81";
      } else {
        out += c;
      }
    }
    return out;
  }

  // llama.cpp's token_to_piece (lstrip 0).
  void append_piece(std::string& out, token_id id, bool special) const {
    const text::vocabulary& v = state_->vocab;
    using namespace text::token_attr;
    const std::uint32_t a = v.attr(id);
    if (!special && (a & (unknown | control))) return;
    std::string_view t = v.tokens.text(id);
    if (v.dna_kmers_from != text::no_token && id > v.dna_kmers_from && t.size() > text::dna_marker.size() &&
        t.substr(t.size() - text::dna_marker.size()) == text::dna_marker) {
      t.remove_suffix(text::dna_marker.size());  // llama.cpp erases the marker from the k-mers' texts
    }
    const auto unescape = [&] {
      for (std::size_t i = 0; i < t.size();) {
        if (t.compare(i, 3, "\xE2\x96\x81") == 0) {
          out += ' ';
          i += 3;
        } else {
          out += t[i++];
        }
      }
    };
    const auto byte_of = [&] {
      // "<0xXX>": llama.cpp reads the two characters after "<0x" with strtol
      unsigned value = 0;
      for (std::size_t i = 3; i < 5 && i < t.size(); ++i) {
        const char c = t[i];
        unsigned d;
        if (c >= '0' && c <= '9') {
          d = static_cast<unsigned>(c - '0');
        } else if (c >= 'a' && c <= 'f') {
          d = static_cast<unsigned>(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
          d = static_cast<unsigned>(c - 'A' + 10);
        } else {
          break;
        }
        value = value * 16 + d;
      }
      out += static_cast<char>(value);
    };
    switch (v.type) {
      case text::vocab_type::spm:
      case text::vocab_type::wpm:
      case text::vocab_type::ugm:
        if (a & (unknown | control | user_defined)) {
          out += t;
        } else if (a & normal) {
          unescape();
        } else if (a & byte) {
          byte_of();
        }
        break;
      case text::vocab_type::bpe:
        if (a & (unknown | control | user_defined)) {
          out += t;
        } else if (a & normal) {
          if (v.escape_whitespaces) {
            unescape();
          } else {
            decode_byte_level(out, t);
          }
        } else if (a & byte) {
          byte_of();
        }
        break;
      case text::vocab_type::rwkv: out += text::rwkv_unescape(t); break;
      case text::vocab_type::plamo2:
        if ((a & byte) && t.size() == 6 && t.substr(0, 3) == "<0x" && t.back() == '>' && hex(t[3]) && hex(t[4])) {
          byte_of();
        } else {
          out += t;
        }
        break;
      case text::vocab_type::none: break;
    }
  }

  static bool hex(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  // llama_decode_text: each character back to its byte; one that is none is written out as llama.cpp does
  static void decode_byte_level(std::string& out, std::string_view t) {
    std::vector<char32_t> cpts;
    text::decode_utf8(t, cpts);
    for (const char32_t c : cpts) {
      const int b = text::codepoint_to_byte(c);
      if (b >= 0) {
        out += static_cast<char>(b);
        continue;
      }
      std::string u;
      text::append_utf8(u, c);
      static constexpr char digits[] = "0123456789abcdef";
      out += "[UNK_BYTE_0x";
      for (const char ch : u) {
        out += digits[static_cast<unsigned char>(ch) >> 4];
        out += digits[static_cast<unsigned char>(ch) & 15];
      }
      out += t;
      out += ']';
    }
  }

  // llama_detokenize's clean_spaces passes, in place.
  static void clean_spaces(std::string& s) {
    if (s.empty()) return;
    // " ?", " !", " .", " ,": the space goes
    std::size_t total = 1;
    for (std::size_t i = 1; i < s.size(); ++i) {
      const char x = s[i];
      if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
      s[total++] = x;
    }
    s.resize(total);
    // " ' ": both spaces go
    const std::size_t total2 = s.size();
    total = 1;
    for (std::size_t i = 1; i < total2; ++i) {
      const char x = s[i];
      if (x == '\'' && i + 1 < total2 && s[i - 1] == ' ' && s[i + 1] == ' ') {
        --total;
        s[++i] = '\0';
      }
      s[total++] = x;
    }
    s.resize(total);
    // " 's", " 'm", " 're", " 've": the space goes
    const std::size_t total3 = s.size();
    total = 1;
    for (std::size_t i = 1; i < total3; ++i) {
      const char x = s[i];
      if (s[i - 1] == ' ' && x == '\'' && i + 1 < total3) {
        const char x1 = s[i + 1];
        if (x1 == 's' || x1 == 'm') {
          --total;
        } else if (x1 != 't' && x1 != 'd' && i + 2 < total3) {
          const char x2 = s[i + 2];
          if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) --total;
        }
      }
      s[total++] = x;
    }
    s.resize(total);
  }

  std::shared_ptr<state> state_;
};

GGUF_END_NAMESPACE

#endif  // GGUF_TOKENIZER_HPP
