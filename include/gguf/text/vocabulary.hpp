#ifndef GGUF_TEXT_VOCABULARY_HPP
#define GGUF_TEXT_VOCABULARY_HPP

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/detail/thread_team.hpp"
#include "gguf/format/metadata.hpp"
#include "gguf/result.hpp"
#include "gguf/text/codepoints.hpp"
#include "gguf/text/merges.hpp"
#include "gguf/text/pretokenizer.hpp"
#include "gguf/text/token_table.hpp"
#include "gguf/text/unicode.hpp"

GGUF_BEGIN_NAMESPACE
namespace text {

/// The tokenizer model a vocabulary names in `tokenizer.ggml.model` (llama.cpp's `llama_vocab_type`).
enum class vocab_type : std::uint8_t {
  none,    ///< "no_vocab"/"none": ids only, no text
  spm,     ///< "llama": SentencePiece byte-fallback BPE by scores
  bpe,     ///< "gpt2" (and "hybriddna", "whitespace", "gemma4"): byte-level BPE by merge ranks
  wpm,     ///< "bert": WordPiece
  ugm,     ///< "t5": SentencePiece unigram
  rwkv,    ///< "rwkv": greedy longest match over escaped byte strings
  plamo2,  ///< "plamo2": PLaMo-2's unigram-like dynamic programming
};

/// llama.cpp's token attributes (`llama_token_attr`), a bit set.
namespace token_attr {
inline constexpr std::uint32_t undefined = 0;      ///< no type given
inline constexpr std::uint32_t unknown = 1u << 0;  ///< the unknown token
inline constexpr std::uint32_t unused = 1u << 1;   ///< reserved, never produced
inline constexpr std::uint32_t normal = 1u << 2;   ///< an ordinary piece of text
inline constexpr std::uint32_t control = 1u << 3;  ///< a control token (BOS, EOS, ...): matched only with parse_special
inline constexpr std::uint32_t user_defined = 1u << 4;  ///< an added token: matched in text before tokenizing
inline constexpr std::uint32_t byte = 1u << 5;          ///< a byte-fallback token "<0xXX>"
inline constexpr std::uint32_t normalized = 1u << 6;    ///< (unused by llama.cpp's tokenizers)
inline constexpr std::uint32_t lstrip = 1u << 7;        ///< eats the whitespace before it when matched
inline constexpr std::uint32_t rstrip = 1u << 8;        ///< eats the whitespace after it when matched
inline constexpr std::uint32_t single_word = 1u << 9;   ///< (unused by llama.cpp's tokenizers)
}  // namespace token_attr

/// The suffix (U+E000) that keeps the "hybriddna" model's k-mers apart from equal BPE tokens.
inline constexpr std::string_view dna_marker = "\xEE\x80\x80";

/**
 * A tokenizer's vocabulary as llama.cpp loads it (`llama_vocab::impl::load`): token texts, scores and
 * attributes, merges, special ids and flags. It owns everything; the file may be closed afterwards.
 */
struct vocabulary {
  vocab_type type = vocab_type::spm;  ///< the tokenizer model
  std::string name;                   ///< `general.name`, or `tokenizer.ggml.model` without one: for messages
  std::string model;                  ///< `tokenizer.ggml.model` as written
  std::string pre_name;               ///< `tokenizer.ggml.pre` as written ("" when absent)
  pre_tokenizer pre{};                ///< the BPE pre-tokenizer (the default one for other models)

  token_table tokens;                       ///< texts and the text → id index
  std::vector<float> scores;                ///< per token; empty when the file has none (each scores 0)
  std::vector<std::uint32_t> attrs;         ///< per token, `token_attr` bits
  merge_table merges;                       ///< BPE merges by token ids
  std::size_t max_token_length = 0;         ///< the longest token text, in bytes
  std::vector<token_id> special_tokens;     ///< control, user-defined and unknown tokens, longest text first
  std::array<token_id, 256> byte_tokens{};  ///< per byte, the token llama.cpp's byte_to_token gives, or no_token

  token_id bos = no_token;      ///< beginning of sequence
  token_id eos = no_token;      ///< end of sequence
  token_id eot = no_token;      ///< end of turn
  token_id eom = no_token;      ///< end of message
  token_id unk = no_token;      ///< unknown
  token_id sep = no_token;      ///< separator
  token_id pad = no_token;      ///< padding
  token_id mask = no_token;     ///< mask
  token_id fim_pre = no_token;  ///< fill-in-the-middle: prefix
  token_id fim_suf = no_token;  ///< fill-in-the-middle: suffix
  token_id fim_mid = no_token;  ///< fill-in-the-middle: middle
  token_id fim_pad = no_token;  ///< fill-in-the-middle: padding
  token_id fim_rep = no_token;  ///< fill-in-the-middle: repository
  token_id fim_sep = no_token;  ///< fill-in-the-middle: file separator
  std::vector<token_id> eog;    ///< every end-of-generation token, ascending

  bool add_space_prefix = false;                   ///< SPM/UGM: a space before the text
  bool add_bos = false;                            ///< add_special adds BOS
  bool add_eos = false;                            ///< add_special adds EOS
  bool add_sep = false;                            ///< add_special adds SEP (WPM always)
  bool ignore_merges = false;                      ///< BPE: a word that is a token is that token
  bool clean_spaces = false;                       ///< detokenize removes spaces before punctuation
  bool remove_extra_whitespaces = false;           ///< UGM: runs of spaces become one
  bool escape_whitespaces = true;                  ///< spaces are written as U+2581
  bool treat_whitespace_as_suffix = false;         ///< UGM: the space goes after the text
  bool lowercase = true;                           ///< WPM/whitespace: lower-case the text
  bool strip_accents = true;                       ///< WPM: NFD and drop accent marks
  bool byte_encode = true;                         ///< BPE: GPT-2 byte-level encoding (not for SPM-style BPE)
  std::vector<std::uint8_t> precompiled_charsmap;  ///< UGM's normalizer, as stored
  token_id dna_kmers_from = no_token;  ///< "hybriddna": tokens after this one ("<oov>") show without dna_marker

  /// The number of tokens.
  std::size_t size() const noexcept { return tokens.size(); }
  /// True when `id` names a token.
  bool valid(token_id id) const noexcept { return id >= 0 && static_cast<std::size_t>(id) < tokens.size(); }
  /// The attributes of a valid id.
  std::uint32_t attr(token_id id) const noexcept { return attrs[static_cast<std::size_t>(id)]; }
  /// The score of a valid id.
  float score(token_id id) const noexcept { return scores.empty() ? 0.0f : scores[static_cast<std::size_t>(id)]; }
  /// True when `id` ends generation.
  bool is_eog(token_id id) const noexcept { return std::binary_search(eog.begin(), eog.end(), id); }
};

namespace detail {

// What llama.cpp sets per tokenizer.ggml.pre name besides the regexes (its load()).
struct pre_flags {
  bool clean_spaces_off = false;
  bool ignore_merges = false;
  bool add_bos = false;
  bool add_sep = false;
  bool escape_whitespaces = false;
  bool no_bos = false;
  bool no_lowercase = false;
};

inline pre_flags flags_of_pre(std::string_view n) noexcept {
  pre_flags f;
  const auto is = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  if (is({"minicpm5"})) f.ignore_merges = true;
  if (is({"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"})) {
    f.ignore_merges = f.add_bos = true;
  }
  if (is({"deepseek-llm",    "deepseek-coder", "deepseek-v3", "spark2_5",  "command-r",  "qwen2",    "deepseek-r1-qwen",
          "kormo",           "f2llmv2",        "qwen35",      "poro-chat", "viking",     "smollm",   "gpt-4o",
          "llama4",          "kanana2",        "talkie",      "tiny_aya",  "cohere2moe", "superbpe", "trillion",
          "granite-docling", "bailingmoe",     "bailingmoe2", "llada-moe", "seed-coder", "hunyuan",  "hunyuan-dense",
          "hy_v4",           "joyai-llm",      "kimi-k2",     "ufakzeka",  "grok-2",     "afmoe",    "laguna",
          "minimax-m2",      "solar-open",     "sarvam-moe"})) {
    f.clean_spaces_off = true;
  }
  if (is({"youtu"})) f.clean_spaces_off = f.ignore_merges = true;
  if (is({"tekken"})) f.clean_spaces_off = f.ignore_merges = f.add_bos = true;
  if (is({"chameleon"})) f.clean_spaces_off = f.add_bos = true;
  if (is({"granite-embed-multi-97m"})) f.clean_spaces_off = f.ignore_merges = true;
  if (is({"gemma4", "granite-embed-multi-311m", "sarvam-moe"})) f.escape_whitespaces = true;
  if (is({"jina-v1-en", "jina-v2-code", "roberta-bpe"})) f.add_sep = true;
  if (is({"glm4", "chatglm-bpe"})) f.no_bos = true;
  if (is({"whitespace"})) f.no_lowercase = true;
  return f;
}

// llama.cpp's names that mark end-of-turn, end-of-message and fill-in-the-middle tokens by their text.
inline bool one_of(std::string_view s, std::initializer_list<std::string_view> names) noexcept {
  return std::find(names.begin(), names.end(), s) != names.end();
}

inline error vocab_error(const char* what, std::string_view key) noexcept {
  return error{errc::bad_vocabulary, what}.about(key);
}

// Reads an optional integer/bool key; a key of another type is an error naming it.
template <class T>
inline result<bool> read_optional(const metadata_table& md, std::string_view key, T& out) noexcept {
  const metadata_entry* e = md.find(key);
  if (!e) return false;
  if constexpr (std::is_same_v<T, bool>) {
    auto v = e->value.get<bool>();
    if (!v) return vocab_error("must be a bool", key);
    out = *v;
  } else {
    auto v = e->value.as_integer<std::uint32_t>();
    if (!v) return vocab_error("must be an unsigned 32-bit integer", key);
    out = static_cast<T>(*v);
  }
  return true;
}

// The text llama.cpp gives the empty token `i`, "[EMPTY_i]", made without allocating.
struct empty_token_name {
  explicit empty_token_name(std::size_t i) noexcept {
    std::memcpy(text, "[EMPTY_", 7);
    char* const end = std::to_chars(text + 7, text + sizeof(text) - 1, i).ptr;
    *end = ']';
    length = static_cast<std::size_t>(end + 1 - text);
  }
  std::string_view view() const noexcept { return {text, length}; }
  std::size_t size() const noexcept { return length; }

  char text[32] = {};
  std::size_t length = 0;
};

}  // namespace detail

/**
 * Loads the vocabulary from a file's metadata exactly as llama.cpp's `llama_vocab::impl::load` does, and
 * checks what llama.cpp assumes: arrays as long as the token list, merges that name tokens, special ids
 * in range, a scores array where SPM needs one.
 * @param md      the metadata of a model or vocabulary file (or a shard set's first shard)
 * @param threads the most threads to build the tables with, the calling thread included (a vocabulary
 *                of fewer than 65,536 tokens and merges is built on the calling thread alone)
 * @return the vocabulary; `bad_vocabulary` naming the key for a vocabulary that cannot be used,
 *         `not_found` for a file without `tokenizer.ggml.model`/`tokenizer.ggml.tokens`, `out_of_range`
 *         for a tokenizer model or pre-tokenizer llama.cpp does not know (named as llama.cpp names it)
 */
inline result<vocabulary> load_vocabulary(const metadata_table& md, unsigned threads = 1) {
  vocabulary v;
  {
    const metadata_entry* e = md.find("tokenizer.ggml.model");
    if (!e) return error{errc::not_found, "no tokenizer in the file"}.about("tokenizer.ggml.model");
    auto s = e->value.get<std::string_view>();
    if (!s) return detail::vocab_error("must be a string", "tokenizer.ggml.model");
    v.model = std::string(*s);
  }
  if (const metadata_entry* e = md.find("tokenizer.ggml.pre")) {
    auto s = e->value.get<std::string_view>();
    if (!s) return detail::vocab_error("must be a string", "tokenizer.ggml.pre");
    v.pre_name = std::string(*s);
  }
  const std::string& m = v.model;
  std::string pre_name = v.pre_name;
  // llama.cpp's defaults per model
  if (m == "no_vocab" || m == "none") {
    return error{errc::out_of_range, "a vocabulary without tokens (tokenizer.ggml.model 'none') cannot tokenize"}.about(
        "tokenizer.ggml.model");
  }
  if (m == "llama") {
    v.type = vocab_type::spm;
    v.bos = 1, v.eos = 2, v.unk = 0;
  } else if (m == "bert") {
    v.type = vocab_type::wpm;
    v.bos = 101, v.unk = 100, v.sep = 102, v.pad = 0, v.mask = 103;
    v.add_sep = true;
  } else if (m == "gpt2" || m == "hybriddna" || m == "whitespace") {
    v.type = vocab_type::bpe;
    v.bos = 11, v.eos = 11;
  } else if (m == "t5") {
    v.type = vocab_type::ugm;
    v.eos = 1, v.unk = 2, v.pad = 0;
  } else if (m == "rwkv") {
    v.type = vocab_type::rwkv;
  } else if (m == "plamo2") {
    v.type = vocab_type::plamo2;
    v.bos = 1, v.eos = 2, v.unk = 0, v.pad = 3;
  } else if (m == "gemma4") {
    v.type = vocab_type::bpe;
    pre_name = "gemma4";
  } else {
    return error{errc::out_of_range, "unknown tokenizer"}.about("tokenizer.ggml.model", ": ", m);
  }

  if (v.type == vocab_type::bpe) {
    v.add_space_prefix = false;
    v.escape_whitespaces = false;
    v.clean_spaces = true;
    auto p = pre_tokenizer_from_name(pre_name.empty() ? std::string_view("default") : std::string_view(pre_name));
    if (!p) return p.error();
    v.pre = *p;
    const detail::pre_flags f = detail::flags_of_pre(pre_name);
    if (f.clean_spaces_off) v.clean_spaces = false;
    v.ignore_merges = f.ignore_merges;
    v.add_bos = f.add_bos;
    if (f.add_sep) v.add_sep = true;
    if (f.escape_whitespaces) v.escape_whitespaces = true;
    if (f.no_bos) v.bos = no_token;
    v.byte_encode = byte_encoded(v.pre);
  } else if (v.type == vocab_type::spm) {
    v.add_space_prefix = true, v.clean_spaces = false, v.add_bos = true, v.add_eos = false;
  } else if (v.type == vocab_type::wpm) {
    v.add_space_prefix = false, v.clean_spaces = true, v.add_bos = true, v.add_eos = false, v.add_sep = true;
  } else if (v.type == vocab_type::ugm) {
    v.add_bos = false, v.add_eos = true;
  } else if (v.type == vocab_type::rwkv) {
    v.add_space_prefix = false, v.clean_spaces = false, v.add_bos = false, v.add_eos = false;
  }
  if (auto r = detail::read_optional(md, "tokenizer.ggml.add_space_prefix", v.add_space_prefix); !r) return r.error();
  if (auto r = detail::read_optional(md, "tokenizer.ggml.remove_extra_whitespaces", v.remove_extra_whitespaces); !r) {
    return r.error();
  }

  // tokens
  const metadata_entry* tok = md.find("tokenizer.ggml.tokens");
  if (!tok) return error{errc::not_found, "no token list in the file"}.about("tokenizer.ggml.tokens");
  auto tok_arr = tok->value.get<array_view>();
  if (!tok_arr || tok_arr->item_type() != value_type::string) {
    return detail::vocab_error("must be an array of strings", "tokenizer.ggml.tokens");
  }
  if (tok_arr->size() >= 0x7FFFFFFFu)
    return detail::vocab_error("has more tokens than a token id can name", "tokenizer.ggml.tokens");
  const auto n = static_cast<std::size_t>(tok_arr->size());
  if (n == 0) return detail::vocab_error("is empty", "tokenizer.ggml.tokens");
  // helpers only where there is work enough to share (their start costs a tenth of a millisecond): a
  // large BPE vocabulary, whose merges take most of the time
  std::size_t n_merges = 0;
  if (const metadata_entry* e = md.find("tokenizer.ggml.merges"); e && v.type == vocab_type::bpe) {
    if (auto a = e->value.get<array_view>()) n_merges = static_cast<std::size_t>(a->size());
  }
  constexpr std::size_t min_items_for_threads = 65536;
  ::gguf::detail::thread_team team(n + n_merges >= min_items_for_threads ? threads : 1);
  std::vector<detail::merge_reader::position> merge_starts;

  // scores: float32 or int32, at least as long as the token list (SPM and UGM need them)
  if (const metadata_entry* e = md.find("tokenizer.ggml.scores")) {
    auto a = e->value.get<array_view>();
    if (!a || (a->item_type() != value_type::float32 && a->item_type() != value_type::int32)) {
      return detail::vocab_error("must be an array of float32 or int32", "tokenizer.ggml.scores");
    }
    if (a->size() < n) return detail::vocab_error("has fewer scores than there are tokens", "tokenizer.ggml.scores");
    v.scores.assign(n, 0.0f);
    std::size_t i = 0;
    if (const auto span = a->as_span<float>()) {
      std::memcpy(v.scores.data(), span->data(), n * sizeof(float));  // the file's own order and alignment
    } else if (a->item_type() == value_type::float32) {
      for (float s : *a->as<float>()) {
        if (i == n) break;
        v.scores[i++] = s;
      }
    } else {
      for (std::int32_t s : *a->as<std::int32_t>()) {
        if (i == n) break;
        v.scores[i++] = static_cast<float>(s);
      }
    }
  } else if (v.type == vocab_type::spm || v.type == vocab_type::ugm || v.type == vocab_type::plamo2) {
    return detail::vocab_error("is missing: this tokenizer model chooses pieces by score", "tokenizer.ggml.scores");
  }

  // token types → attributes (converted below, beside the texts)
  array_view types;
  if (const metadata_entry* e = md.find("tokenizer.ggml.token_type")) {
    auto a = e->value.get<array_view>();
    if (!a || a->item_type() != value_type::int32)
      return detail::vocab_error("must be an array of int32", "tokenizer.ggml.token_type");
    if (a->size() < n) return detail::vocab_error("has fewer types than there are tokens", "tokenizer.ggml.token_type");
    types = *a;
  }
  v.attrs.reserve(n);
  const auto convert_types = [&] {  // allocates nothing: the room is reserved
    v.attrs.assign(n, token_attr::normal);
    if (types.size() == 0) return;
    // llama_token_type: 0 undefined, 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
    static constexpr std::uint32_t map[7] = {token_attr::undefined, token_attr::normal,       token_attr::unknown,
                                             token_attr::control,   token_attr::user_defined, token_attr::unused,
                                             token_attr::byte};
    const auto attr_of = [](std::int32_t t) { return (t >= 0 && t <= 6) ? map[t] : token_attr::undefined; };
    if (const auto span = types.as_span<std::int32_t>()) {
      for (std::size_t i = 0; i < n; ++i) v.attrs[i] = attr_of((*span)[i]);
    } else {
      std::size_t i = 0;
      for (std::int32_t t : *types.as<std::int32_t>()) {
        if (i == n) break;
        v.attrs[i++] = attr_of(t);
      }
    }
  };

  // texts, copied once into the table (an empty token becomes "[EMPTY_i]", as in llama.cpp)
  {
    const auto strings = *tok_arr->as<std::string_view>();
    const char* const end = reinterpret_cast<const char*>(tok_arr->bytes().data() + tok_arr->bytes().size());
    // one thread: one pass over the texts, which the array's size counts unless a token is empty
    bool written = false;
    if (team.size() == 1) {
      const auto listed = static_cast<std::size_t>(tok_arr->text_bytes());
      v.tokens = token_table(n, listed);
      v.tokens.write(0, 0, listed, [&](auto&& add) {
        auto it = strings.begin();
        for (std::size_t i = 0; i < n; ++i, ++it) {
          const std::string_view s = *it;
          if (s.empty()) return;  // its name needs room: the texts are written in stretches below
          add(s, end - s.data() >= 16);
        }
        written = true;
      });
    }
    // else a stretch of tokens at a time, in turn: where each starts in the array and in the table first
    constexpr std::size_t chunk = 4096;
    struct stretch {
      array_view::typed_range<std::string_view>::iterator from;
      std::size_t at = 0;  // where its first text goes
    };
    std::vector<stretch> stretches;
    std::size_t bytes = 0;
    // the merges' chunks are found at the same time (a BPE vocabulary's, with threads to share them)
    array_view merges;
    if (const metadata_entry* e = md.find("tokenizer.ggml.merges"); e && v.type == vocab_type::bpe && team.size() > 1) {
      if (auto a = e->value.get<array_view>(); a && a->item_type() == value_type::string) merges = *a;
    }
    merge_starts.reserve(detail::merge_chunks(merges));
    if (!written) stretches.reserve(n / chunk + 1);
    enum class job { walk_tokens, walk_merges, attributes };
    job jobs[3];
    std::size_t n_jobs = 0;
    if (!written) jobs[n_jobs++] = job::walk_tokens;  // the longest first
    if (merges.size() > 0) jobs[n_jobs++] = job::walk_merges;
    jobs[n_jobs++] = job::attributes;
    team.run(n_jobs, [&](std::size_t k, unsigned) {
      switch (jobs[k]) {
        case job::walk_merges: detail::find_merge_chunks(merges, merge_starts); return;
        case job::attributes: convert_types(); return;
        case job::walk_tokens: break;
      }
      std::size_t i = 0;
      for (auto it = strings.begin(); i < n; ++it, ++i) {
        if (i % chunk == 0) stretches.push_back({it, bytes});
        const std::size_t length = (*it).size();
        bytes += length != 0 ? length : detail::empty_token_name(i).size();
      }
    });
    if (!written) v.tokens = token_table(n, bytes, team.size() > 1);
    team.run(stretches.size(), [&](std::size_t c, unsigned) {
      const std::size_t first = c * chunk, count = std::min(chunk, n - first);
      const std::size_t limit = c + 1 < stretches.size() ? stretches[c + 1].at : bytes;
      v.tokens.write(static_cast<token_id>(first), stretches[c].at, limit, [&](auto&& add) {
        auto it = stretches[c].from;
        for (std::size_t k = 0; k < count; ++k, ++it) {
          const std::string_view s = *it;
          if (s.empty()) {
            add(detail::empty_token_name(first + k).view(), false);
          } else {
            add(s, end - s.data() >= 16);
          }
        }
      });
    });
    if (const token_id dup = v.tokens.index(team); dup != no_token) {
      return error{errc::bad_vocabulary, "a token appears twice"}.about("tokenizer.ggml.tokens", ": ",
                                                                        v.tokens.text(dup));
    }
    v.max_token_length = v.tokens.max_length();
  }

  if (m == "hybriddna") v.dna_kmers_from = v.tokens.find("<oov>");

  // merges
  if (v.type == vocab_type::bpe) {
    if (const metadata_entry* e = md.find("tokenizer.ggml.merges")) {
      auto a = e->value.get<array_view>();
      if (!a || a->item_type() != value_type::string)
        return detail::vocab_error("must be an array of strings", "tokenizer.ggml.merges");
      if (a->size() >= 0x7FFFFFFFu)
        return detail::vocab_error("has more merges than a rank can name", "tokenizer.ggml.merges");
      auto t = detail::load_merges(*a, v.tokens, team, std::move(merge_starts));
      if (!t) return t.error();
      v.merges = std::move(*t);
    } else if (pre_name != "kimi-k2") {
      return error{errc::not_found, "BPE needs its merges"}.about("tokenizer.ggml.merges");
    }
  }

  // UGM's normalizer
  if (v.type == vocab_type::ugm) {
    if (const metadata_entry* e = md.find("tokenizer.ggml.precompiled_charsmap")) {
      auto a = e->value.get<array_view>();
      if (!a || (a->item_type() != value_type::int8 && a->item_type() != value_type::uint8)) {
        return detail::vocab_error("must be an array of int8 or uint8", "tokenizer.ggml.precompiled_charsmap");
      }
      const auto b = a->bytes();
      v.precompiled_charsmap.assign(reinterpret_cast<const std::uint8_t*>(b.data()),
                                    reinterpret_cast<const std::uint8_t*>(b.data()) + b.size());
      if (v.precompiled_charsmap.size() < 4) {
        return detail::vocab_error("is too small for its header", "tokenizer.ggml.precompiled_charsmap");
      }
      std::uint32_t blob = 0;
      std::memcpy(&blob, v.precompiled_charsmap.data(), 4);  // little-endian, as the file stores it
      if constexpr (std::endian::native == std::endian::big) blob = __builtin_bswap32(blob);
      if (std::uint64_t{blob} + 4 >= v.precompiled_charsmap.size()) {
        return detail::vocab_error("its double array runs past its end", "tokenizer.ggml.precompiled_charsmap");
      }
    }
  }

  // special ids: defaults out of range are dropped, keys out of range are refused
  {
    struct key_id {
      std::string_view key;
      token_id* id;
    };
    const key_id keys[] = {
        {"tokenizer.ggml.bos_token_id", &v.bos},         {"tokenizer.ggml.eos_token_id", &v.eos},
        {"tokenizer.ggml.eot_token_id", &v.eot},         {"tokenizer.ggml.eom_token_id", &v.eom},
        {"tokenizer.ggml.unknown_token_id", &v.unk},     {"tokenizer.ggml.seperator_token_id", &v.sep},
        {"tokenizer.ggml.padding_token_id", &v.pad},     {"tokenizer.ggml.mask_token_id", &v.mask},
        {"tokenizer.ggml.fim_pre_token_id", &v.fim_pre}, {"tokenizer.ggml.fim_suf_token_id", &v.fim_suf},
        {"tokenizer.ggml.fim_mid_token_id", &v.fim_mid}, {"tokenizer.ggml.fim_pad_token_id", &v.fim_pad},
        {"tokenizer.ggml.fim_rep_token_id", &v.fim_rep}, {"tokenizer.ggml.fim_sep_token_id", &v.fim_sep},
        {"tokenizer.ggml.prefix_token_id", &v.fim_pre},  {"tokenizer.ggml.suffix_token_id", &v.fim_suf},
        {"tokenizer.ggml.middle_token_id", &v.fim_mid},
    };
    for (const key_id& k : keys) {
      if (*k.id >= 0 && !v.valid(*k.id)) *k.id = no_token;
      const metadata_entry* e = md.find(k.key);
      if (!e) continue;
      auto id = e->value.as_integer<std::uint32_t>();
      if (!id) return detail::vocab_error("must be an unsigned 32-bit integer", k.key);
      if (*id >= n) return detail::vocab_error("names a token past the end of the vocabulary", k.key);
      *k.id = static_cast<token_id>(*id);
    }
    if (auto r = detail::read_optional(md, "tokenizer.ggml.add_bos_token", v.add_bos); !r) return r.error();
    if (auto r = detail::read_optional(md, "tokenizer.ggml.add_eos_token", v.add_eos); !r) return r.error();
    if (auto r = detail::read_optional(md, "tokenizer.ggml.add_sep_token", v.add_sep); !r) return r.error();
    if (v.pre == pre_tokenizer::gemma4) v.add_bos = true;
    // llama.cpp asserts when it adds a token that does not exist; refuse the vocabulary instead
    const bool adds_specials = v.type == vocab_type::spm || v.type == vocab_type::bpe || v.type == vocab_type::ugm;
    if (((adds_specials && v.add_bos) || v.type == vocab_type::wpm) && v.bos == no_token) {
      return detail::vocab_error("is true, but there is no BOS token", "tokenizer.ggml.add_bos_token");
    }
    if (adds_specials && v.add_eos && v.eos == no_token) {
      return detail::vocab_error("is true, but there is no EOS token", "tokenizer.ggml.add_eos_token");
    }
    // llama.cpp asserts at tokenize time; refuse the vocabulary instead (BPE never adds SEP)
    if (v.type == vocab_type::wpm && v.sep == no_token)
      return detail::vocab_error("has no SEP token, which BERT adds", "tokenizer.ggml.seperator_token_id");
    // llama.cpp's normalizer_options default to true; the "whitespace" pre-tokenizer sets false before the key
    v.lowercase = !(v.type == vocab_type::bpe && detail::flags_of_pre(pre_name).no_lowercase);
    if (auto r = detail::read_optional(md, "tokenizer.ggml.normalizer.lowercase", v.lowercase); !r) return r.error();
    v.strip_accents = v.lowercase;
    if (auto r = detail::read_optional(md, "tokenizer.ggml.normalizer.strip_accents", v.strip_accents); !r) {
      return r.error();
    }
  }

  // llama.cpp recognises end-of-turn, fill-in-the-middle and end-of-generation tokens by their text, and
  // makes them control tokens
  {
    const auto mark = [&](token_id id) { v.attrs[static_cast<std::size_t>(id)] |= token_attr::control; };
    // the lowest id among the names (llama.cpp takes the first its hash map yields)
    const auto detect = [&](token_id& slot, std::initializer_list<std::string_view> names) {
      if (slot != no_token) return;
      for (std::string_view name : names) {
        const token_id id = v.tokens.find(name);
        if (id != no_token && (slot == no_token || id < slot)) slot = id;
      }
      if (slot != no_token) mark(slot);
    };
    detect(v.eot, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
                   "_<EOT>", "[EOT]", "<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>",
                   "<end_of_utterance>"});
    detect(v.eom, {"<|eom_id|>"});
    detect(v.fim_pre,
           {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\357\275\234fim\342\226\201begin\357\275\234>", "<PRE>",
            "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"});
    detect(v.fim_suf,
           {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\357\275\234fim\342\226\201hole\357\275\234>", "<SUF>",
            "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"});
    detect(v.fim_mid, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\357\275\234fim\342\226\201end\357\275\234>",
                       "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"});
    detect(v.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
    detect(v.fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
    detect(v.fim_sep, {"<|file_sep|>"});

    // control tokens whose text says "unused" are unused
    for (std::size_t i = 0; i < n; ++i) {
      if ((v.attrs[i] & token_attr::control) && !(v.attrs[i] & token_attr::unused) &&
          v.tokens.text(static_cast<token_id>(i)).find("unused") != std::string_view::npos) {
        v.attrs[i] |= token_attr::unused;
      }
    }

    std::vector<token_id> eog;
    for (token_id id : {v.fim_pad, v.fim_rep, v.fim_sep})
      if (id != no_token) eog.push_back(id);
    for (std::string_view name :
         std::initializer_list<std::string_view>{"<|eot_id|>",
                                                 "<|im_end|>",
                                                 "<|end|>",
                                                 "<|return|>",
                                                 "<|call|>",
                                                 "<|flush|>",
                                                 "<|calls|>",
                                                 "<end_of_turn>",
                                                 "<|endoftext|>",
                                                 "</s>",
                                                 "<|eom_id|>",
                                                 "<EOT>",
                                                 "_<EOT>",
                                                 "[EOT]",
                                                 "[EOS]",
                                                 "<|end_of_text|>",
                                                 "<end_of_utterance>",
                                                 "<eos>",
                                                 "<turn|>",
                                                 "<|tool_response>",
                                                 "<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>",
                                                 "[e~["}) {
      const token_id id = v.tokens.find(name);
      if (id == no_token) continue;
      eog.push_back(id);
      mark(id);
    }
    for (std::string_view name : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
      const token_id id = v.tokens.find(name);
      if (id != no_token) v.attrs[static_cast<std::size_t>(id)] = token_attr::user_defined;
    }
    for (token_id id : {v.eos, v.eot, v.eom})
      if (id != no_token) eog.push_back(id);
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
    // o200k_harmony and solar-open: "<|end|>" is not the end when "<|return|>"/"<|call|>" are there
    const auto eog_text = [&](std::string_view s) {
      for (token_id id : eog)
        if (v.tokens.text(id) == s) return id;
      return no_token;
    };
    const token_id end_id = eog_text("<|end|>");
    const bool has_call = eog_text("<|call|>") != no_token || eog_text("<|calls|>") != no_token;
    if (end_id != no_token && has_call && (eog_text("<|return|>") != no_token || eog_text("<|flush|>") != no_token)) {
      eog.erase(std::find(eog.begin(), eog.end(), end_id));
      v.attrs[static_cast<std::size_t>(end_id)] = token_attr::user_defined;
    }
    const token_id s_id = eog_text("</s>");
    if (s_id != no_token && eog_text("<|tool_response>") != no_token) {
      eog.erase(std::find(eog.begin(), eog.end(), s_id));
      v.attrs[static_cast<std::size_t>(s_id)] = token_attr::normal;
    }
    v.eog = std::move(eog);
  }

  // the special tokens, longest first (llama.cpp sorts with std::sort: ties keep its order)
  for (token_id id = 0; static_cast<std::size_t>(id) < n; ++id) {
    if (v.attr(id) & (token_attr::control | token_attr::user_defined | token_attr::unknown))
      v.special_tokens.push_back(id);
  }
  std::sort(v.special_tokens.begin(), v.special_tokens.end(),
            [&](token_id a, token_id b) { return v.tokens.text(a).size() > v.tokens.text(b).size(); });

  // per-model attributes llama.cpp sets by name
  {
    std::string name(md.get<std::string_view>("general.name").value_or(""));
    v.name = name.empty() ? v.model : name;
    for (char& c : name) c = static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
    const std::string_view arch = md.get<std::string_view>("general.architecture").value_or("");
    const auto contains = [](std::string_view s, std::initializer_list<std::string_view> parts) {
      return std::any_of(parts.begin(), parts.end(),
                         [&](std::string_view p) { return s.find(p) != std::string_view::npos; });
    };
    const auto set = [&](std::string_view text, std::uint32_t bit, bool on) -> bool {
      const token_id id = v.tokens.find(text);
      if (id == no_token) return false;
      auto& a = v.attrs[static_cast<std::size_t>(id)];
      a = on ? (a | bit) : (a & ~bit);
      return true;
    };
    if (contains(v.pre_name, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
        contains(arch, {"nomic-bert-moe", "jina-bert-v3"})) {
      set("<mask>", token_attr::lstrip, true);
    } else if (contains(name, {"phi-3", "phi3"})) {
      for (token_id id : v.special_tokens) v.attrs[static_cast<std::size_t>(id)] |= token_attr::rstrip;
      if (!set("</s>", token_attr::rstrip, true) || !set("<unk>", token_attr::rstrip, false) ||
          !set("<s>", token_attr::rstrip, false) || !set("<|endoftext|>", token_attr::rstrip, false)) {
        return error{errc::bad_vocabulary, "a Phi-3 vocabulary without </s>, <unk>, <s> or <|endoftext|>"}.about(
            "tokenizer.ggml.tokens");
      }
    } else if (contains(name, {"modern-bert"})) {
      set("[MASK]", token_attr::lstrip, true);
    }
  }

  // byte tokens, as llama.cpp's byte_to_token finds them
  for (unsigned b = 0; b < 256; ++b) {
    token_id id = no_token;
    if (v.type == vocab_type::spm || v.type == vocab_type::ugm || v.type == vocab_type::plamo2 ||
        (v.type == vocab_type::bpe && !v.byte_encode)) {
      static constexpr char hex[] = "0123456789ABCDEF";
      const char buf[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
      id = v.tokens.find(std::string_view(buf, 6));
      if (id == no_token && v.type != vocab_type::plamo2 && v.type != vocab_type::bpe) {
        const char c = static_cast<char>(b);
        id = v.tokens.find(std::string_view(&c, 1));
      }
    } else {
      std::string s;
      append_utf8(s, byte_to_codepoint(static_cast<std::uint8_t>(b)));
      id = v.tokens.find(s);
    }
    v.byte_tokens[b] = id;
  }
  return v;
}

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_VOCABULARY_HPP
