#ifndef GGUF_TEXT_PRETOKENIZER_HPP
#define GGUF_TEXT_PRETOKENIZER_HPP

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gguf/result.hpp"
#include "gguf/text/codepoints.hpp"
#include "gguf/text/unicode.hpp"
#include "gguf/version.hpp"

/**
 * @file
 * llama.cpp's BPE pre-tokenizers: the names of `tokenizer.ggml.pre`, and the split of a text into words
 * exactly as llama.cpp's `unicode_regex_split` splits it for each type, without std::regex.
 *
 * llama.cpp applies a list of regexes in turn, each re-splitting the pieces of the one before. A regex
 * goes one of three ways there, and each is reproduced here:
 * - five exact strings have hand-written splitters ("custom": GPT-2's, Llama 3's, Kimi K2's, AFMoE's
 *   digits, which tiny_aya's digit regex also gets); they are copied with their quirks, which differ
 *   from the regexes (at piece ends; AFMoE's takes any \\p{N} and keeps the text before a number in the
 *   number's first word);
 * - a regex with \\p{N}, \\p{L}, \\p{P}, \\p{M}, \\p{S} or \\p{Lu}.. runs as std::regex over a "collapsed"
 *   text, every code point above U+007F replaced by one byte for its category (whitespace by \\v), and the
 *   regex rewritten to match those bytes (and ASCII by llama.cpp's lists: its \\p{S} has '~');
 * - any other runs as std::wregex over the code points, whitespace above U+007F replaced by \\v.
 * The std::regex ways are reproduced by a small backtracking matcher with libstdc++'s ECMAScript
 * semantics (ordered alternatives, greedy repeats, lookaheads, the classic "C" locale's \\s \\d \\w, how
 * regex_iterator steps past an empty match, lookahead sub-matches that start their own \\b), over one
 * bit mask of classes per code point; the text between matches is a word as well.
 */

GGUF_BEGIN_NAMESPACE
namespace text {

/**
 * A BPE pre-tokenizer: llama.cpp's `llama_vocab_pre_type`, one value per LLAMA_VOCAB_PRE_TYPE_*. The
 * first 45 have llama.cpp's numbers; the names that select each one are in `pre_tokenizer_from_name`.
 */
enum class pre_tokenizer : std::uint8_t {
  default_ = 0,          ///< DEFAULT: "default", or no tokenizer.ggml.pre
  llama3 = 1,            ///< LLAMA3
  deepseek_llm = 2,      ///< DEEPSEEK_LLM
  deepseek_coder = 3,    ///< DEEPSEEK_CODER
  falcon = 4,            ///< FALCON
  mpt = 5,               ///< MPT
  starcoder = 6,         ///< STARCODER
  gpt2 = 7,              ///< GPT2
  refact = 8,            ///< REFACT
  command_r = 9,         ///< COMMAND_R
  stablelm2 = 10,        ///< STABLELM2
  qwen2 = 11,            ///< QWEN2
  olmo = 12,             ///< OLMO
  dbrx = 13,             ///< DBRX
  smaug = 14,            ///< SMAUG
  poro = 15,             ///< PORO
  chatglm3 = 16,         ///< CHATGLM3 (no name selects it; splits as the default)
  chatglm4 = 17,         ///< CHATGLM4
  viking = 18,           ///< VIKING
  jais = 19,             ///< JAIS
  tekken = 20,           ///< TEKKEN
  smollm = 21,           ///< SMOLLM
  codeshell = 22,        ///< CODESHELL
  bloom = 23,            ///< BLOOM
  gpt3_finnish = 24,     ///< GPT3_FINNISH
  exaone = 25,           ///< EXAONE
  chameleon = 26,        ///< CHAMELEON
  minerva = 27,          ///< MINERVA
  deepseek3_llm = 28,    ///< DEEPSEEK3_LLM
  gpt4o = 29,            ///< GPT4O
  superbpe = 30,         ///< SUPERBPE
  trillion = 31,         ///< TRILLION
  bailingmoe = 32,       ///< BAILINGMOE
  llama4 = 33,           ///< LLAMA4 (no name selects it: "llama4" is gpt4o; splits as the default)
  pixtral = 34,          ///< PIXTRAL (no name selects it: "pixtral" is llama3; splits as the default)
  seed_coder = 35,       ///< SEED_CODER
  hunyuan = 36,          ///< HUNYUAN
  kimi_k2 = 37,          ///< KIMI_K2
  hunyuan_dense = 38,    ///< HUNYUAN_DENSE
  grok_2 = 39,           ///< GROK_2
  granite_docling = 40,  ///< GRANITE_DOCLING
  minimax_m2 = 41,       ///< MINIMAX_M2
  afmoe = 42,            ///< AFMOE
  solar_open = 43,       ///< SOLAR_OPEN
  youtu = 44,            ///< YOUTU
  qwen35,                ///< QWEN35
  jais2,                 ///< JAIS2
  joyai_llm,             ///< JOYAI_LLM
  hy_v4,                 ///< HY_V4
  spark2_5,              ///< SPARK2_5
  mellum2,               ///< MELLUM2
  granite_emb_multi,     ///< GRANITE_EMB_MULTI
  tiny_aya,              ///< TINY_AYA
  ufakzeka,              ///< UFAKZEKA
  laguna,                ///< LAGUNA
  exaone_moe,            ///< EXAONE_MOE
  gemma4,                ///< GEMMA4 (SPM-style BPE: raw UTF-8, split at newlines only)
  sarvam_moe,            ///< SARVAM_MOE (as gemma4)
  minicpm5,              ///< MINICPM5
  whitespace,            ///< WHITESPACE (tokenizer model "whitespace"; raw UTF-8)
};

/// One past the last `pre_tokenizer` value.
inline constexpr std::size_t pre_tokenizer_count = static_cast<std::size_t>(pre_tokenizer::whitespace) + 1;

/** A word: the code points [begin, end) of the text given to `split_words`. */
struct pretokenized_word {
  std::uint32_t begin = 0;  ///< index of the first code point
  std::uint32_t end = 0;    ///< index one past the last code point
};

namespace detail::pre {

struct named_pre {
  std::string_view name;
  pre_tokenizer type;
};

// Every tokenizer.ggml.pre name llama.cpp's load() accepts, in its order. The oracle's libllama accepts
// all of them (and refuses e.g. "gpt-oss", "jina-v2-zh", "chatglm3").
inline constexpr named_pre names[] = {
    {"default", pre_tokenizer::default_},
    {"minicpm5", pre_tokenizer::minicpm5},
    {"llama3", pre_tokenizer::llama3},
    {"llama-v3", pre_tokenizer::llama3},
    {"llama-bpe", pre_tokenizer::llama3},
    {"falcon3", pre_tokenizer::llama3},
    {"falcon-h1", pre_tokenizer::llama3},
    {"pixtral", pre_tokenizer::llama3},
    {"midm-2.0", pre_tokenizer::llama3},
    {"lfm2", pre_tokenizer::llama3},
    {"jina-v5-nano", pre_tokenizer::llama3},
    {"deepseek-llm", pre_tokenizer::deepseek_llm},
    {"deepseek-coder", pre_tokenizer::deepseek_coder},
    {"deepseek-v3", pre_tokenizer::deepseek3_llm},
    {"spark2_5", pre_tokenizer::spark2_5},
    {"youtu", pre_tokenizer::youtu},
    {"falcon", pre_tokenizer::falcon},
    {"mpt", pre_tokenizer::mpt},
    {"starcoder", pre_tokenizer::starcoder},
    {"gpt-2", pre_tokenizer::gpt2},
    {"phi-2", pre_tokenizer::gpt2},
    {"jina-es", pre_tokenizer::gpt2},
    {"jina-de", pre_tokenizer::gpt2},
    {"gigachat", pre_tokenizer::gpt2},
    {"jina-v2-es", pre_tokenizer::gpt2},
    {"jina-v2-de", pre_tokenizer::gpt2},
    {"a.x-4.0", pre_tokenizer::gpt2},
    {"mellum", pre_tokenizer::gpt2},
    {"modern-bert", pre_tokenizer::gpt2},
    {"jais-2", pre_tokenizer::jais2},
    {"gemma4", pre_tokenizer::gemma4},
    {"granite-embed-multi-311m", pre_tokenizer::gemma4},
    {"sarvam-moe", pre_tokenizer::sarvam_moe},
    {"jina-v1-en", pre_tokenizer::gpt2},
    {"jina-v2-code", pre_tokenizer::gpt2},
    {"roberta-bpe", pre_tokenizer::gpt2},
    {"whitespace", pre_tokenizer::whitespace},
    {"refact", pre_tokenizer::refact},
    {"command-r", pre_tokenizer::command_r},
    {"qwen2", pre_tokenizer::qwen2},
    {"deepseek-r1-qwen", pre_tokenizer::qwen2},
    {"kormo", pre_tokenizer::qwen2},
    {"f2llmv2", pre_tokenizer::qwen2},
    {"qwen35", pre_tokenizer::qwen35},
    {"stablelm2", pre_tokenizer::stablelm2},
    {"olmo", pre_tokenizer::olmo},
    {"dbrx", pre_tokenizer::dbrx},
    {"smaug-bpe", pre_tokenizer::smaug},
    {"poro-chat", pre_tokenizer::poro},
    {"glm4", pre_tokenizer::chatglm4},
    {"chatglm-bpe", pre_tokenizer::chatglm4},
    {"viking", pre_tokenizer::viking},
    {"jais", pre_tokenizer::jais},
    {"tekken", pre_tokenizer::tekken},
    {"smollm", pre_tokenizer::smollm},
    {"codeshell", pre_tokenizer::codeshell},
    {"bloom", pre_tokenizer::bloom},
    {"gpt3-finnish", pre_tokenizer::gpt3_finnish},
    {"exaone", pre_tokenizer::exaone},
    {"exaone4", pre_tokenizer::gpt2},
    {"exaone-moe", pre_tokenizer::exaone_moe},
    {"chameleon", pre_tokenizer::chameleon},
    {"minerva-7b", pre_tokenizer::minerva},
    {"megrez", pre_tokenizer::qwen2},
    {"gpt-4o", pre_tokenizer::gpt4o},
    {"llama4", pre_tokenizer::gpt4o},
    {"kanana2", pre_tokenizer::gpt4o},
    {"talkie", pre_tokenizer::gpt4o},
    {"granite-embed-multi-97m", pre_tokenizer::granite_emb_multi},
    {"tiny_aya", pre_tokenizer::tiny_aya},
    {"cohere2moe", pre_tokenizer::tiny_aya},
    {"superbpe", pre_tokenizer::superbpe},
    {"trillion", pre_tokenizer::trillion},
    {"granite-docling", pre_tokenizer::granite_docling},
    {"bailingmoe", pre_tokenizer::bailingmoe},
    {"bailingmoe2", pre_tokenizer::bailingmoe},
    {"llada-moe", pre_tokenizer::bailingmoe},
    {"seed-coder", pre_tokenizer::seed_coder},
    {"hunyuan", pre_tokenizer::hunyuan},
    {"hunyuan-dense", pre_tokenizer::hunyuan_dense},
    {"hy_v4", pre_tokenizer::hy_v4},
    {"joyai-llm", pre_tokenizer::joyai_llm},
    {"kimi-k2", pre_tokenizer::kimi_k2},
    {"ufakzeka", pre_tokenizer::ufakzeka},
    {"grok-2", pre_tokenizer::grok_2},
    {"afmoe", pre_tokenizer::afmoe},
    {"laguna", pre_tokenizer::laguna},
    {"minimax-m2", pre_tokenizer::minimax_m2},
    {"solar-open", pre_tokenizer::solar_open},
    {"mellum2", pre_tokenizer::mellum2},
};

// The name `name()` gives each type: the first that selects it, else the enumerator's llama.cpp name.
inline constexpr std::string_view type_names[pre_tokenizer_count] = {
    "default",
    "llama3",
    "deepseek-llm",
    "deepseek-coder",
    "falcon",
    "mpt",
    "starcoder",
    "gpt-2",
    "refact",
    "command-r",
    "stablelm2",
    "qwen2",
    "olmo",
    "dbrx",
    "smaug-bpe",
    "poro-chat",
    "chatglm3",
    "glm4",
    "viking",
    "jais",
    "tekken",
    "smollm",
    "codeshell",
    "bloom",
    "gpt3-finnish",
    "exaone",
    "chameleon",
    "minerva-7b",
    "deepseek-v3",
    "gpt-4o",
    "superbpe",
    "trillion",
    "bailingmoe",
    "llama4",
    "pixtral",
    "seed-coder",
    "hunyuan",
    "kimi-k2",
    "hunyuan-dense",
    "grok-2",
    "granite-docling",
    "minimax-m2",
    "afmoe",
    "solar-open",
    "youtu",
    "qwen35",
    "jais-2",
    "joyai-llm",
    "hy_v4",
    "spark2_5",
    "mellum2",
    "granite-embed-multi-97m",
    "tiny_aya",
    "ufakzeka",
    "laguna",
    "exaone-moe",
    "gemma4",
    "sarvam-moe",
    "minicpm5",
    "whitespace",
};

// The regexes of llama.cpp's llm_tokenizer_bpe, in order (byte for byte the strings of the oracle's
// libllama); each list below is a range of them.
// NOLINTBEGIN(bugprone-suspicious-missing-comma): long regexes are split across lines, on purpose
inline constexpr std::u32string_view regexes[] = {
    // llama3
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // jais2
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{"
    U"32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",
    // deepseek_llm
    U"[\r\n]",
    U"\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF\u0370-"
    U"\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-"
    U"\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-"
    U"\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-"
    U"\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-"
    U"\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-"
    U"\u2134\u2139\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-"
    U"\u2CEE\u2CF2\u2CF3\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-"
    U"\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3\U000104D8-"
    U"\U000104FB\U00010C80-\U00010CB2\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943]+",
    U"\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+",
    U"\\s+$",
    U"[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+",
    U"\\p{N}+",
    // deepseek3_llm
    U"\\p{N}{1,3}",
    U"[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
    U"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    U"?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    // spark2_5
    U"\\p{N}{1,3}",
    U"[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
    U"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    U"?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
    U"\\p{N}",
    // youtu
    U"[\uAC00-\uD7A3\u3131-\u318E]+|[\uFF01\u2026\u201C\u201D\u2018\u2019\u2014\uFF1A\uFF1B\uFF0C\u3001-\u303F\uFE30-"
    U"\uFE4F]+|[\u3105-\u312F]+|[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
    U"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]"
    U"|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{"
    U"Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // deepseek_coder
    U"[\r\n]",
    U"\\s?\\p{L}+",
    U"\\s?\\p{P}+",
    U"[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+",
    U"\\p{N}",
    // falcon
    U"[\\p{P}\\$\\+<=>\\^~\\|`]+",
    U"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    U"[0-9][0-9][0-9]",
    // starcoder
    U"\\p{N}",
    U"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    // gpt2
    U"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    // qwen2
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // qwen35
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| "
    U"?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // poro
    U" ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+",
    // viking
    U" ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+",
    U"\\p{N}",
    // tekken
    U"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))"
    U"+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // chameleon
    U"<sentinel:[0-9]+>",
    U"(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
    U"([\\t\\n]|    |  )",
    U"\\p{N}",
    U"[\\p{P}!-/:-@\\[-`{-~]",
    U"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    // gpt4o
    U"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'["
    U"lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'["
    U"vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // granite_emb_multi
    U"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV]["
    U"eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'["
    U"sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // tiny_aya
    U"\\d{1,3}(?=(?:\\d{3})*\\b)",
    U"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]"
    U"|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{"
    U"Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // kimi_k2
    U"\\p{Han}+",
    // superbpe
    U"\\p{N}+",
    U"(?=(\\d{3})+(?!\\d))",
    // bailingmoe
    U"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
    // seed_coder
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| "
    U"?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // ufakzeka
    U"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // afmoe
    U"\\p{AFMoE_digits}",
    U"[\u4E00-\u9FFF\u3400-\u4DBF\u8C48-\uFAFF\u3040-\u309F\u30A0-\u30FF\uFF65-\uFF9F\u2F00-\u2FDF\u0E40-\u0E7F\u0E80-"
    U"\u0EFF\u1780-\u17FF\u1000-\u109F\uAA60-\uAA7F\uA9E0-\uA9FF\uAC00-\uD7AF\u1100-\u11FF]+",
    U"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    U"?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // laguna
    U"[^\\n]+|[\\n]+",
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // exaone_moe
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: "
    U"\\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
    // gemma4
    U"[^\\n]+|[\\n]+",
    // minicpm5
    U"\\p{N}{1,3}",
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    // whitespace
    U"\\S+",
    // default_
    U"[\\p{P}\\$\\+<=>\\^~\\|]+",
    U"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    U"\\p{N}+",
    U"[0-9][0-9][0-9]",
};
// NOLINTEND(bugprone-suspicious-missing-comma)

// A type's regex list: `list_count` regexes from `list_first`.
enum class regex_list : std::uint8_t {
  llama3,
  jais2,
  deepseek_llm,
  deepseek3_llm,
  spark2_5,
  youtu,
  deepseek_coder,
  falcon,
  starcoder,
  gpt2,
  qwen2,
  qwen35,
  poro,
  viking,
  tekken,
  chameleon,
  gpt4o,
  granite_emb_multi,
  tiny_aya,
  kimi_k2,
  superbpe,
  bailingmoe,
  seed_coder,
  ufakzeka,
  afmoe,
  laguna,
  exaone_moe,
  gemma4,
  minicpm5,
  whitespace,
  default_
};
inline constexpr std::uint8_t list_first[] = {0,  1,  2,  8,  11, 15, 17, 22, 25, 27, 28, 29, 30, 31, 33, 34,
                                              40, 41, 42, 44, 45, 47, 48, 49, 50, 53, 55, 56, 57, 59, 60};
inline constexpr std::uint8_t list_count[] = {1, 1, 6, 3, 4, 2, 5, 3, 2, 1, 1, 1, 1, 2, 1, 6,
                                              1, 1, 2, 1, 2, 1, 1, 1, 3, 2, 1, 1, 2, 1, 4};

// The regex list of each type (llm_tokenizer_bpe's constructor; `default` for the types it has no case for).
inline constexpr regex_list list_of[pre_tokenizer_count] = {
    regex_list::default_,           // default_
    regex_list::llama3,             // llama3
    regex_list::deepseek_llm,       // deepseek_llm
    regex_list::deepseek_coder,     // deepseek_coder
    regex_list::falcon,             // falcon
    regex_list::gpt2,               // mpt
    regex_list::starcoder,          // starcoder
    regex_list::gpt2,               // gpt2
    regex_list::starcoder,          // refact
    regex_list::starcoder,          // command_r
    regex_list::qwen2,              // stablelm2
    regex_list::qwen2,              // qwen2
    regex_list::gpt2,               // olmo
    regex_list::llama3,             // dbrx
    regex_list::llama3,             // smaug
    regex_list::poro,               // poro
    regex_list::default_,           // chatglm3
    regex_list::llama3,             // chatglm4
    regex_list::viking,             // viking
    regex_list::gpt2,               // jais
    regex_list::tekken,             // tekken
    regex_list::starcoder,          // smollm
    regex_list::starcoder,          // codeshell
    regex_list::poro,               // bloom
    regex_list::poro,               // gpt3_finnish
    regex_list::starcoder,          // exaone
    regex_list::chameleon,          // chameleon
    regex_list::starcoder,          // minerva
    regex_list::deepseek3_llm,      // deepseek3_llm
    regex_list::gpt4o,              // gpt4o
    regex_list::superbpe,           // superbpe
    regex_list::gpt2,               // trillion
    regex_list::bailingmoe,         // bailingmoe
    regex_list::default_,           // llama4
    regex_list::default_,           // pixtral
    regex_list::seed_coder,         // seed_coder
    regex_list::qwen2,              // hunyuan
    regex_list::kimi_k2,            // kimi_k2
    regex_list::deepseek3_llm,      // hunyuan_dense
    regex_list::qwen2,              // grok_2 (its own case in llama.cpp, the same regex as qwen2)
    regex_list::gpt2,               // granite_docling
    regex_list::gpt4o,              // minimax_m2
    regex_list::afmoe,              // afmoe
    regex_list::qwen2,              // solar_open
    regex_list::youtu,              // youtu
    regex_list::qwen35,             // qwen35
    regex_list::jais2,              // jais2
    regex_list::deepseek3_llm,      // joyai_llm
    regex_list::deepseek3_llm,      // hy_v4
    regex_list::spark2_5,           // spark2_5
    regex_list::starcoder,          // mellum2
    regex_list::granite_emb_multi,  // granite_emb_multi
    regex_list::tiny_aya,           // tiny_aya
    regex_list::ufakzeka,           // ufakzeka
    regex_list::laguna,             // laguna
    regex_list::exaone_moe,         // exaone_moe
    regex_list::gemma4,             // gemma4
    regex_list::gemma4,             // sarvam_moe
    regex_list::minicpm5,           // minicpm5
    regex_list::whitespace,         // whitespace
};

}  // namespace detail::pre

/**
 * The pre-tokenizer llama.cpp selects for a `tokenizer.ggml.pre` name (its `llama_vocab::impl::load`).
 * llama.cpp treats a missing (or empty) name as "default", after a warning; pass "default" for it.
 * @param name the value of tokenizer.ggml.pre
 * @return the type; for a name llama.cpp refuses, `errc::out_of_range` whose `to_string` reads as
 *         llama.cpp's message: "unknown pre-tokenizer type: 'x'"
 */
inline result<pre_tokenizer> pre_tokenizer_from_name(std::string_view name) noexcept {
  if (name.empty()) return pre_tokenizer::default_;  // llama.cpp: "missing pre-tokenizer type, using: 'default'"
  for (const detail::pre::named_pre& n : detail::pre::names)
    if (n.name == name) return n.type;
  return error{errc::out_of_range, "unknown pre-tokenizer type"}.about(name);
}

/**
 * A name of the type: the first tokenizer.ggml.pre name that selects it ("gpt-2", "llama3"), and for the
 * three types no name selects, llama.cpp's enumerator in lower case ("chatglm3", "llama4", "pixtral").
 */
constexpr std::string_view name(pre_tokenizer type) noexcept {
  const auto i = static_cast<std::size_t>(type);
  return i < pre_tokenizer_count ? detail::pre::type_names[i] : std::string_view("unknown");
}

/**
 * True when llama.cpp maps a word's bytes to GPT-2's printable code points before merging (its
 * `byte_encode`); false for the SPM-style BPE types (gemma4, sarvam_moe) and whitespace, whose tokens are
 * raw UTF-8.
 */
constexpr bool byte_encoded(pre_tokenizer type) noexcept {
  return type != pre_tokenizer::gemma4 && type != pre_tokenizer::sarvam_moe && type != pre_tokenizer::whitespace;
}

namespace detail::pre {
// The places each regex list splits the same way whatever text is around them (see `safe_cut`):
// - `cut_letters`: a space between two letters, where it starts the word of the second;
// - `cut_newline`: a lone newline between two other characters (the second not a '/', which GPT-4o's
//   symbol runs take after newlines), which is a word, or ends one;
// - `cut_line`: after any newline not followed by another, where a first stage of `[\r\n]` or of lines
//   (`[^\n]+|[\n]+`) ends a piece whatever is around.
// A list has a rule only where every stage cuts there (or leaves the place inside a piece that a later
// stage cuts there) and no stage's lookahead reads past it: not superbpe (the text between digit runs is
// one word), nor Bloom's (Poro's) punctuation-gap words across a newline, nor DeepSeek LLM's gaps of
// letters outside its ranges, nor EXAONE-MoE's words of letters joined by spaces, nor gemma4's lines but
// between them. tests/test_pretokenizer.cpp checks every type on random texts of every kind, cut at every
// such place.
inline constexpr std::uint8_t cut_letters = 1, cut_newline = 2, cut_line = 4;
inline constexpr std::uint8_t cut_rules[] = {
    cut_letters | cut_newline,  // llama3
    cut_letters | cut_newline,  // jais2
    cut_line,                   // deepseek_llm
    cut_letters | cut_newline,  // deepseek3_llm
    cut_letters | cut_newline,  // spark2_5
    cut_letters | cut_newline,  // youtu
    cut_letters | cut_line,     // deepseek_coder
    cut_letters | cut_newline,  // falcon
    cut_letters | cut_newline,  // starcoder
    cut_letters | cut_newline,  // gpt2
    cut_letters | cut_newline,  // qwen2
    cut_letters | cut_newline,  // qwen35
    cut_letters,                // poro
    cut_letters,                // viking
    cut_letters | cut_newline,  // tekken
    cut_letters | cut_line,     // chameleon
    cut_letters | cut_newline,  // gpt4o
    cut_letters | cut_newline,  // granite_emb_multi
    cut_letters | cut_newline,  // tiny_aya
    cut_letters | cut_newline,  // kimi_k2
    0,                          // superbpe
    cut_letters | cut_newline,  // bailingmoe
    cut_letters | cut_newline,  // seed_coder
    cut_letters | cut_newline,  // ufakzeka
    cut_letters | cut_newline,  // afmoe
    cut_letters | cut_line,     // laguna
    cut_newline,                // exaone_moe
    cut_line,                   // gemma4
    cut_letters | cut_newline,  // minicpm5
    cut_letters | cut_newline,  // whitespace
    cut_letters | cut_newline,  // default_
};
static_assert(sizeof cut_rules == static_cast<std::size_t>(regex_list::default_) + 1);

// The flags of the code point that ends at byte `at` of `t` (0 < at), as decoding the whole text gives it:
// a valid sequence's lead is never taken by the sequence before it, so its bytes decode alone.
inline codepoint_flags flags_before(std::string_view t, std::size_t at) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(t.data());
  std::size_t lead = at - 1;
  while (lead > 0 && at - lead < 4 && (p[lead] & 0xC0u) == 0x80u) --lead;
  const utf8_decoded d = decode_utf8_at(p + lead, t.size() - lead, above_unicode::invalid);
  return flags_of(lead + d.length == at ? d.codepoint : replacement_character);
}

// The flags of the code point that starts at byte `at` of `t` (at < size).
inline codepoint_flags flags_at(std::string_view t, std::size_t at) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(t.data());
  return flags_of(decode_utf8_at(p + at, t.size() - at, above_unicode::invalid).codepoint);
}
}  // namespace detail::pre

/**
 * The first byte offset at or after `from` where the words of `text` for `type` split into the words of
 * the bytes before it and the words of the bytes after it, each split alone; `text.size()` if none.
 *
 * A long text can then be decoded and split a stretch at a time, in buffers that stay small. The places
 * are found from the bytes around them alone: a space between two letters (the space starts the next
 * word), a newline between two characters that are not whitespace (the newline is a word of its own,
 * or ends a run of symbols), or for the types whose first stage cuts lines, after a newline. Which of the two hold for
 * which pre-tokenizer is in `detail::pre::cut_rules`; a type with neither is never cut.
 * @param type the pre-tokenizer
 * @param text any bytes, as they are decoded and split
 * @param from where to start looking (0 is never a place)
 */
inline std::size_t safe_cut(pre_tokenizer type, std::string_view text, std::size_t from) noexcept {
  namespace p = detail::pre;
  const std::uint8_t rules = p::cut_rules[static_cast<std::size_t>(p::list_of[static_cast<std::size_t>(type)])];
  const std::size_t n = text.size();
  if (rules == 0) return n;
  for (std::size_t at = std::max<std::size_t>(from, 2); at + 1 < n; ++at) {
    const char c = text[at];
    if (c == ' ' && (rules & p::cut_letters) != 0 && p::flags_before(text, at).is_letter() &&
        p::flags_at(text, at + 1).is_letter())
      return at;
    if (text[at - 1] != '\n' || c == '\n') continue;
    if ((rules & p::cut_line) != 0) return at;
    if ((rules & p::cut_newline) != 0 && c != '/' && !p::flags_at(text, at).is_whitespace() &&
        !p::flags_before(text, at - 1).is_whitespace())
      return at;
  }
  return n;
}

namespace detail::pre {

// ---------------------------------------------------------------------------------------------------
// The regex side: llama.cpp's choice of path, its rewrite for the collapsed text, and a backtracking
// matcher with libstdc++'s ECMAScript semantics over one 64-bit class mask per code point.

inline constexpr char32_t no_char = 0xFFFFFFFF;  // what llama.cpp's custom splitters read past a piece

enum class path : std::uint8_t {
  custom_gpt2,
  custom_llama3,
  custom_kimi_k2,
  custom_afmoe,
  collapsed,
  wide,
  llama3_one_digit  // ours, not llama.cpp's: Qwen2's regex as the Llama 3 splitter with one digit a word
};

// The bytes llama.cpp's collapsed text holds for a code point above U+007F (k_ucat_cpt; 0x0B for
// whitespace, 0xD0 for the categories it has no byte for).
constexpr std::uint8_t collapsed_byte(std::uint16_t bits) noexcept {
  if (bits & codepoint_flags::whitespace) return 0x0B;
  switch (bits & codepoint_flags::mask_categories) {
    case codepoint_flags::number: return 0xD1;
    case codepoint_flags::letter: return 0xD2;
    case codepoint_flags::punctuation: return 0xD3;
    case codepoint_flags::accent_mark: return 0xD4;
    case codepoint_flags::symbol: return 0xD5;
    default: return 0xD0;
  }
}

// k_ucat_enum and k_ucat_map of unicode_regex_split: a \p{..} name, its byte, and the ASCII it stands for.
struct ucat {
  std::u32string_view name;
  char32_t byte;
  std::u32string_view ascii;
};
inline constexpr ucat ucats[] = {
    {U"\\p{N}", 0xD1, U"0-9"},
    {U"\\p{L}", 0xD2, U"A-Za-z"},
    {U"\\p{P}", 0xD3, U"!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"},
    {U"\\p{M}", 0xD4, U""},
    {U"\\p{S}", 0xD5, U"\\$\\+<->^`\\|\\~"},
    {U"\\p{Lu}", 0xD2, U"A-Za-z"},
    {U"\\p{Ll}", 0xD2, U"A-Za-z"},
    {U"\\p{Lt}", 0xD2, U"A-Za-z"},
    {U"\\p{Lm}", 0xD2, U"A-Za-z"},
    {U"\\p{Lo}", 0xD2, U"A-Za-z"},
};

// The strings unicode_regex_split_custom recognizes (compared whole).
inline constexpr std::u32string_view custom_gpt2_regex =
    U"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
inline constexpr std::u32string_view custom_llama3_regexes[] = {
    U"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    U"\\s+(?!\\S)|\\s+",
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}"
    U"\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

// Which way unicode_regex_split sends a regex: custom by exact string, collapsed when it names a
// \p{..} category it knows, std::wregex otherwise.
constexpr path path_of(std::u32string_view re) noexcept {
  if (re == custom_gpt2_regex) return path::custom_gpt2;
  for (std::u32string_view r : custom_llama3_regexes)
    if (re == r) return path::custom_llama3;
  if (re == U"\\p{Han}+") return path::custom_kimi_k2;
  if (re == U"\\p{AFMoE_digits}") return path::custom_afmoe;
  // tiny_aya's digit regex goes to the AFMoE splitter too (llama.cpp: "TODO: Revisit this regex")
  if (re == U"\\d{1,3}(?=(?:\\d{3})*\\b)") return path::custom_afmoe;
  for (const ucat& u : ucats)
    if (re.find(u.name) != std::u32string_view::npos) return path::collapsed;
  return path::wide;
}

// llama.cpp's rewrite of a regex for the collapsed text: each known \p{..} becomes its byte and its
// ASCII, in brackets unless already inside brackets (tracked by its heuristic: a '[' or ']' not after '\').
inline std::u32string collapse_regex(std::u32string_view re) {
  std::u32string out;
  bool inside = false;
  for (std::size_t i = 0; i < re.size(); ++i) {
    if (re[i] == '[' && (i == 0 || re[i - 1] != '\\')) {
      out += '[';
      inside = true;
      continue;
    }
    if (inside && re[i] == ']' && re[i - 1] != '\\') {
      out += ']';
      inside = false;
      continue;
    }
    if (re[i] == '\\' && i + 3 < re.size() && re[i + 1] == 'p' && re[i + 2] == '{') {
      const std::size_t close = re.find('}', i + 3);
      if (close != std::u32string_view::npos && close <= i + 10) {
        const std::u32string_view pat = re.substr(i, close - i + 1);
        const ucat* hit = nullptr;
        for (const ucat& u : ucats)
          if (u.name == pat) hit = &u;
        if (hit) {
          if (!inside) out += '[';
          out += hit->byte;
          out += hit->ascii;
          if (!inside) out += ']';
          i = close;
          continue;
        }
      }
    }
    out += re[i];
  }
  return out;
}

// The classic "C" locale's ctype, which std::regex and std::wregex use: ASCII only, for char and wchar_t.
enum : std::uint8_t { ctype_space = 1, ctype_digit = 2, ctype_word = 4 };
constexpr std::uint8_t ctype_of(char32_t c) noexcept {
  if (c >= 0x80) return 0;
  if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return ctype_space;
  if (c >= '0' && c <= '9') return ctype_digit | ctype_word;
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return ctype_word;
  return 0;
}

// A bracket expression (or one character, or \s \d \w and their negations).
struct char_class {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  std::uint8_t named = 0;        // \s \d \w inside: the class holds what they match
  std::uint8_t neg_named = 0;    // \S \D \W inside: the class holds what they do not match
  bool negated = false;          // [^...]
  std::vector<char_class> also;  // classes the code point must be in as well: (?=[X])[Y] is X and Y

  bool contains(char32_t c) const noexcept {
    bool in = false;
    for (const auto& r : ranges)
      if (c >= r.first && c <= r.second) {
        in = true;
        break;
      }
    const std::uint8_t t = ctype_of(c);
    if ((named & t) != 0) in = true;
    if ((neg_named & ~t & 7) != 0) in = true;
    if (in == negated) return false;
    return std::all_of(also.begin(), also.end(), [c](const char_class& a) { return a.contains(c); });
  }
  friend bool operator==(const char_class& a, const char_class& b) noexcept {
    return a.ranges == b.ranges && a.named == b.named && a.neg_named == b.neg_named && a.negated == b.negated &&
           a.also == b.also;
  }
};

enum : std::uint8_t { op_cls, op_run, op_split, op_jmp, op_look, op_wordb, op_eol, op_match };

// One instruction. split: go on at the next, retry at `a`. run: `cls` repeated a..b times, greedily.
// look: the sub-program at `a` must match here (or must not, with `neg`).
struct inst {
  std::uint8_t op = op_match;
  std::uint8_t cls = 0;
  bool neg = false;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
};

inline constexpr std::uint32_t unbounded = 0xFFFFFFFF;

// A compiled regex.
struct program {
  std::vector<inst> code;
  std::vector<char_class> classes;          // at most 64: one bit each in a code point's mask
  std::uint64_t table[256] = {};            // masks of the symbols below 256
  std::uint64_t first = ~std::uint64_t{0};  // a match starts on one of these classes (all: unknown)
  std::vector<std::uint64_t> first_at;      // the same from each instruction on
  std::uint8_t word_class = 0;              // \w, for \b
  bool collapsed = false;
  bool ok = true;

  std::uint64_t mask_of(char32_t sym) const noexcept {
    if (sym < 256) return table[sym];
    std::uint64_t m = 0;
    for (std::size_t i = 0; i < classes.size(); ++i)
      if (classes[i].contains(sym)) m |= std::uint64_t{1} << i;
    return m;
  }
};

// Parser for the ECMAScript subset llama.cpp's regexes use, into a tree, then into instructions.
class compiler {
 public:
  explicit compiler(program& p) : p_(p) {}

  void compile(std::u32string_view re) {
    re_ = re;
    pos_ = 0;
    const std::uint32_t root = alternation();
    if (pos_ != re_.size()) fail();
    if (!p_.ok) return;
    emit(root);
    p_.code.push_back(inst{op_match});
    // lookahead bodies, after the main program (emitting one may queue more: no iterators)
    for (std::size_t k = 0; k < pending_.size(); ++k) {  // NOLINT(modernize-loop-convert)
      p_.code[pending_[k].first].a = size();
      emit(pending_[k].second);
      p_.code.push_back(inst{op_match});
    }
    for (std::size_t c = 0; c < 256; ++c) p_.table[c] = mask_slow(static_cast<char32_t>(c));
    p_.first_at.resize(p_.code.size());
    for (std::uint32_t pc = 0; pc < size(); ++pc) {
      std::vector<std::uint8_t> seen(p_.code.size(), 0);
      bool nullable = false;
      const std::uint64_t f = first(pc, seen, nullable);
      p_.first_at[pc] = nullable ? ~std::uint64_t{0} : f;
    }
    p_.first = p_.first_at[0];
  }

 private:
  enum : std::uint8_t { n_empty, n_cls, n_cat, n_alt, n_rep, n_look, n_wordb, n_eol };
  struct node {
    std::uint8_t kind = n_empty;
    std::uint8_t cls = 0;
    bool neg = false;
    std::uint32_t min = 0, max = 0;
    std::vector<std::uint32_t> kids;
  };

  program& p_;
  std::u32string_view re_;
  std::size_t pos_ = 0;
  std::vector<node> nodes_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pending_;  // (look instruction, body node)

  void fail() noexcept { p_.ok = false; }
  bool at_end() const noexcept { return pos_ >= re_.size(); }
  char32_t peek() const noexcept { return at_end() ? 0 : re_[pos_]; }
  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(p_.code.size()); }

  std::uint64_t mask_slow(char32_t c) const noexcept {
    std::uint64_t m = 0;
    for (std::size_t i = 0; i < p_.classes.size(); ++i)
      if (p_.classes[i].contains(c)) m |= std::uint64_t{1} << i;
    return m;
  }

  std::uint32_t add(node n) {
    nodes_.push_back(std::move(n));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  std::uint8_t intern(const char_class& c) {
    for (std::size_t i = 0; i < p_.classes.size(); ++i)
      if (p_.classes[i] == c) return static_cast<std::uint8_t>(i);
    if (p_.classes.size() == 64) {
      fail();
      return 0;
    }
    p_.classes.push_back(c);
    return static_cast<std::uint8_t>(p_.classes.size() - 1);
  }
  std::uint32_t class_node(const char_class& c) {
    node n;
    n.kind = n_cls;
    n.cls = intern(c);
    return add(std::move(n));
  }
  static char_class single(char32_t c) {
    char_class k;
    k.ranges.emplace_back(c, c);
    return k;
  }

  std::uint32_t alternation() {
    node n;
    n.kind = n_alt;
    n.kids.push_back(sequence());
    while (!at_end() && peek() == '|') {
      ++pos_;
      n.kids.push_back(sequence());
    }
    if (n.kids.size() == 1) return n.kids[0];
    return add(std::move(n));
  }

  std::uint32_t sequence() {
    node n;
    n.kind = n_cat;
    while (!at_end() && peek() != '|' && peek() != ')' && p_.ok) n.kids.push_back(term());
    // (?=[X])[Y] is one code point in X and Y: one class, which a repeat then runs without a lookahead
    std::vector<std::uint32_t> kids;
    for (std::size_t k = 0; k < n.kids.size(); ++k) {
      const node& look = nodes_[n.kids[k]];
      if (look.kind == n_look && !look.neg && k + 1 < n.kids.size()) {
        const int x = single_class(look.kids[0]), y = single_class(n.kids[k + 1]);
        if (x >= 0 && y >= 0) {
          char_class both = p_.classes[static_cast<std::size_t>(y)];
          both.also.push_back(p_.classes[static_cast<std::size_t>(x)]);
          kids.push_back(class_node(both));
          ++k;
          continue;
        }
      }
      kids.push_back(n.kids[k]);
    }
    n.kids = std::move(kids);
    return add(std::move(n));
  }

  // The class of a node that is one class and nothing else, or -1.
  int single_class(std::uint32_t id) const {
    const node* n = &nodes_[id];
    while (n->kind == n_cat && n->kids.size() == 1) n = &nodes_[n->kids[0]];
    return n->kind == n_cls ? n->cls : -1;
  }

  std::uint32_t term() {
    const char32_t c = peek();
    if (c == '$') {
      ++pos_;
      node n;
      n.kind = n_eol;
      return add(std::move(n));
    }
    if (c == '\\' && pos_ + 1 < re_.size() && (re_[pos_ + 1] == 'b' || re_[pos_ + 1] == 'B')) {
      node n;
      n.kind = n_wordb;
      n.neg = re_[pos_ + 1] == 'B';
      pos_ += 2;
      char_class w;
      w.named = ctype_word;
      p_.word_class = intern(w);
      return add(std::move(n));
    }
    if (re_.substr(pos_, 3) == U"(?=" || re_.substr(pos_, 3) == U"(?!") {
      node n;
      n.kind = n_look;
      n.neg = re_[pos_ + 2] == '!';
      pos_ += 3;
      n.kids.push_back(alternation());
      if (peek() != ')') fail();
      ++pos_;
      return add(std::move(n));
    }
    std::uint32_t atom_id = 0;
    if (c == '(') {
      pos_ += re_.substr(pos_, 3) == U"(?:" ? 3u : 1u;  // groups capture nothing that matters (nosubs)
      atom_id = alternation();
      if (peek() != ')') fail();
      ++pos_;
    } else if (c == '[') {
      ++pos_;
      atom_id = class_node(bracket());
    } else if (c == '.') {
      ++pos_;
      char_class k;
      k.ranges = {{'\n', '\n'}, {'\r', '\r'}};
      k.negated = true;
      atom_id = class_node(k);
    } else if (c == '\\') {
      ++pos_;
      char_class k;
      if (!escape(k, false)) fail();
      atom_id = class_node(k);
    } else if (c == '*' || c == '+' || c == '?' || c == '{' || c == ')' || c == '^') {
      fail();
      ++pos_;
      return 0;
    } else {
      ++pos_;
      atom_id = class_node(single(c));
    }
    return quantified(atom_id);
  }

  std::uint32_t number() {
    std::uint32_t v = 0;
    if (at_end() || peek() < '0' || peek() > '9') fail();
    while (!at_end() && peek() >= '0' && peek() <= '9') v = v * 10 + static_cast<std::uint32_t>(re_[pos_++] - '0');
    return v;
  }

  std::uint32_t quantified(std::uint32_t atom_id) {
    std::uint32_t lo = 1, hi = 1;
    const char32_t q = peek();
    if (q == '*') {
      lo = 0, hi = unbounded, ++pos_;
    } else if (q == '+') {
      lo = 1, hi = unbounded, ++pos_;
    } else if (q == '?') {
      lo = 0, hi = 1, ++pos_;
    } else if (q == '{') {
      ++pos_;
      lo = hi = number();
      if (peek() == ',') {
        ++pos_;
        hi = peek() == '}' ? unbounded : number();
      }
      if (peek() != '}' || hi < lo) fail();
      ++pos_;
    } else {
      return atom_id;
    }
    if (peek() == '?') fail();  // lazy repeats: no regex of llama.cpp's has one
    node n;
    n.kind = n_rep;
    n.min = lo;
    n.max = hi;
    n.kids.push_back(atom_id);
    return add(std::move(n));
  }

  // After a backslash: a class escape (into `k`'s named bits) or one character (into `k`'s ranges).
  bool escape(char_class& k, bool in_bracket) {
    if (at_end()) return false;
    const char32_t e = re_[pos_++];
    char32_t ch = e;
    switch (e) {
      case 'd': k.named |= ctype_digit; return true;
      case 's': k.named |= ctype_space; return true;
      case 'w': k.named |= ctype_word; return true;
      case 'D':
      case 'S':
      case 'W': {
        const std::uint8_t t = e == 'D' ? ctype_digit : e == 'S' ? ctype_space : ctype_word;
        if (in_bracket) {
          k.neg_named |= t;
        } else {
          k.named |= t;
          k.negated = true;
        }
        return true;
      }
      case 'r': ch = '\r'; break;
      case 'n': ch = '\n'; break;
      case 't': ch = '\t'; break;
      case 'f': ch = '\f'; break;
      case 'v': ch = '\v'; break;
      case '0': ch = 0; break;
      case 'x':
      case 'u': {
        const int digits = e == 'x' ? 2 : 4;
        ch = 0;
        for (int i = 0; i < digits; ++i) {
          if (at_end()) return false;
          const char32_t h = re_[pos_++];
          const int v = h >= '0' && h <= '9'   ? int(h - '0')
                        : h >= 'a' && h <= 'f' ? int(h - 'a' + 10)
                        : h >= 'A' && h <= 'F' ? int(h - 'A' + 10)
                                               : -1;
          if (v < 0) return false;
          ch = ch * 16 + static_cast<char32_t>(v);
        }
        break;
      }
      default:
        if (e >= '1' && e <= '9') return false;  // back-references: none in llama.cpp's regexes
        break;                                   // identity escape (libstdc++ also takes \p as 'p')
    }
    k.ranges.emplace_back(ch, ch);
    return true;
  }

  // After '[': the bracket expression up to its ']'.
  char_class bracket() {
    char_class k;
    if (peek() == '^') {
      k.negated = true;
      ++pos_;
    }
    while (p_.ok) {
      if (at_end()) {
        fail();
        break;
      }
      if (peek() == ']') {
        ++pos_;
        break;
      }
      char32_t lo = 0;
      if (peek() == '\\') {
        ++pos_;
        char_class e;
        if (!escape(e, true)) fail();
        if (e.ranges.empty()) {  // \s \d \w or a negation: no range may start here
          k.named |= e.named;
          k.neg_named |= e.neg_named;
          continue;
        }
        lo = e.ranges[0].first;
      } else {
        lo = re_[pos_++];
      }
      char32_t hi = lo;
      if (pos_ + 1 < re_.size() && peek() == '-' && re_[pos_ + 1] != ']') {
        ++pos_;
        if (peek() == '\\') {
          ++pos_;
          char_class e;
          if (!escape(e, true) || e.ranges.empty()) fail();
          hi = e.ranges.empty() ? lo : e.ranges[0].first;
        } else {
          hi = re_[pos_++];
        }
        if (hi < lo) fail();
      }
      k.ranges.emplace_back(lo, hi);
    }
    return k;
  }

  void emit(std::uint32_t id) {
    const node n = nodes_[id];  // a copy: emit() adds no nodes, but keep it simple and safe
    switch (n.kind) {
      case n_empty: break;
      case n_cls: p_.code.push_back(inst{op_cls, n.cls}); break;
      case n_cat:
        for (std::uint32_t k : n.kids) emit(k);
        break;
      case n_alt: {
        std::vector<std::uint32_t> jumps;
        for (std::size_t i = 0; i + 1 < n.kids.size(); ++i) {
          const std::uint32_t s = size();
          p_.code.push_back(inst{op_split});
          emit(n.kids[i]);
          jumps.push_back(size());
          p_.code.push_back(inst{op_jmp});
          p_.code[s].a = size();
        }
        emit(n.kids.back());
        for (std::uint32_t j : jumps) p_.code[j].a = size();
        break;
      }
      case n_rep: {
        const int body = single_class(n.kids[0]);
        if (body >= 0) {  // one class repeated: one instruction that backtracks by itself
          inst r{op_run, static_cast<std::uint8_t>(body)};
          r.a = n.min;
          r.b = n.max;
          p_.code.push_back(r);
          break;
        }
        for (std::uint32_t i = 0; i < n.min; ++i) emit(n.kids[0]);
        if (n.max == unbounded) {  // greedy loop; bodies never match empty in these regexes
          const std::uint32_t top = size();
          p_.code.push_back(inst{op_split});
          emit(n.kids[0]);
          inst j{op_jmp};
          j.a = top;
          p_.code.push_back(j);
          p_.code[top].a = size();
        } else {
          std::vector<std::uint32_t> splits;
          for (std::uint32_t i = n.min; i < n.max; ++i) {
            splits.push_back(size());
            p_.code.push_back(inst{op_split});
            emit(n.kids[0]);
          }
          for (std::uint32_t s : splits) p_.code[s].a = size();
        }
        break;
      }
      case n_look: {
        inst l{op_look};
        l.neg = n.neg;
        pending_.emplace_back(size(), n.kids[0]);
        p_.code.push_back(l);
        break;
      }
      case n_wordb: {
        inst w{op_wordb};
        w.neg = n.neg;
        p_.code.push_back(w);
        break;
      }
      case n_eol: p_.code.push_back(inst{op_eol}); break;
      default: fail();
    }
  }

  // The classes a match from `pc` can start with; `nullable` when it can end without a code point.
  std::uint64_t first(std::uint32_t pc, std::vector<std::uint8_t>& seen, bool& nullable) const {
    if (pc >= p_.code.size() || seen[pc]) return 0;  // a loop back: its body consumed already
    seen[pc] = 1;
    const inst& in = p_.code[pc];
    switch (in.op) {
      case op_cls: return std::uint64_t{1} << in.cls;
      case op_run:
        if (in.a > 0) return std::uint64_t{1} << in.cls;
        return (std::uint64_t{1} << in.cls) | first(pc + 1, seen, nullable);
      case op_split: return first(pc + 1, seen, nullable) | first(in.a, seen, nullable);
      case op_jmp: return first(in.a, seen, nullable);
      case op_look:
      case op_wordb: return first(pc + 1, seen, nullable);
      default: nullable = true; return 0;
    }
  }
};

inline program compile_regex(std::u32string_view re) {
  program p;
  const path w = path_of(re);
  p.collapsed = w == path::collapsed;
  if (p.collapsed) {
    for (char32_t c : re)
      if (c >= 0x80) p.ok = false;  // llama.cpp throws "Regex includes both unicode categories and non-ASCII"
    const std::u32string c = collapse_regex(re);
    compiler(p).compile(c);
  } else {
    compiler(p).compile(re);
  }
  return p;
}

// One step of a type's list: a custom splitter, or a compiled regex.
struct stage {
  path kind = path::wide;  // how it runs
  program prog;            // the regex compiled, when llama.cpp runs it as one (collapsed or wide)
};

// Qwen2's regex (stablelm2, hunyuan, grok-2, solar-open too), which llama.cpp runs with std::regex: it is
// Llama 3's but for one digit a word, so the Llama 3 splitter, so limited, splits as that regex does, a
// fraction of the backtracking matcher's time (tests compare the two on every kind of text).
inline constexpr std::u32string_view qwen2_regex =
    U"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    U"?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// All types' stages, compiled once.
struct stage_table {
  std::vector<stage> stages;  // in the order of `regexes`
  bool ok = true;
};

inline const stage_table& stages() {
  static const stage_table t = [] {
    stage_table s;
    for (std::u32string_view re : regexes) {
      stage st;
      st.kind = path_of(re);
      if (st.kind == path::collapsed || st.kind == path::wide) {
        st.prog = compile_regex(re);
        if (!st.prog.ok) s.ok = false;
      }
      if (re == qwen2_regex) st.kind = path::llama3_one_digit;
      s.stages.push_back(std::move(st));
    }
    return s;
  }();
  return t;
}

// libstdc++'s regex_constants flags that change a match.
enum : std::uint8_t { f_prev_avail = 1, f_not_null = 2, f_continuous = 4 };

// The backtracking matcher: libstdc++'s _Executor in DFS mode, for ECMAScript.
class matcher {
 public:
  const program* prog = nullptr;
  const std::uint64_t* mask = nullptr;  // per code point of the piece: mask[i] for the code point origin + i
  std::uint32_t origin = 0;             // the piece's start
  std::uint32_t end = 0;                // the piece's end

  // A match starting at `pos` (libstdc++'s _M_begin is `begin`); its end in `out`.
  bool match(std::uint32_t pc, std::uint32_t begin, std::uint32_t pos, std::uint8_t fl, std::uint32_t& out) {
    const std::size_t base = stack_.size();
    const inst* code = prog->code.data();
    for (;;) {
      const inst& in = code[pc];
      bool ok = false;
      switch (in.op) {
        case op_cls:
          if (pos < end && ((mask[pos - origin] >> in.cls) & 1) != 0) {
            ++pos;
            ++pc;
            ok = true;
          }
          break;
        case op_run: {
          const std::uint64_t bit = std::uint64_t{1} << in.cls;
          const std::uint32_t room = end - pos;
          const std::uint32_t lim = in.b < room ? in.b : room;
          std::uint32_t n = 0;
          while (n < lim && (mask[pos + n - origin] & bit) != 0) ++n;
          if (n >= in.a) {
            if (n > in.a) stack_.push_back(frame{pc + 1, pos + n, pos + in.a, true});
            pos += n;
            ++pc;
            ok = true;
          }
          break;
        }
        case op_split: {
          // an alternative that cannot start on this code point is not tried (nor pushed): same result
          const std::uint64_t here = pos < end ? mask[pos - origin] : 0;
          const std::uint64_t* fa = prog->first_at.data();
          const bool next = (fa[pc + 1] & here) != 0 || fa[pc + 1] == ~std::uint64_t{0};
          const bool alt = (fa[in.a] & here) != 0 || fa[in.a] == ~std::uint64_t{0};
          if (next) {
            if (alt) stack_.push_back(frame{in.a, pos, 0, false});
            ++pc;
            ok = true;
          } else if (alt) {
            pc = in.a;
            ok = true;
          }
          break;
        }
        case op_jmp:
          pc = in.a;
          ok = true;
          break;
        case op_look: {
          // libstdc++ runs a sub-executor from here: its own _M_begin, the same flags
          std::uint32_t sub_end = 0;
          const bool m = match(in.a, pos, pos, fl, sub_end);
          if (m != in.neg) {
            ++pc;
            ok = true;
          }
          break;
        }
        case op_wordb: {
          const std::uint64_t w = std::uint64_t{1} << prog->word_class;
          const bool left =
              (pos != begin || (fl & f_prev_avail) != 0) && pos > origin && (mask[pos - 1 - origin] & w) != 0;
          const bool right = pos < end && (mask[pos - origin] & w) != 0;
          if ((left != right) != in.neg) {
            ++pc;
            ok = true;
          }
          break;
        }
        case op_eol:
          if (pos == end) {
            ++pc;
            ok = true;
          }
          break;
        default:  // op_match
          if (!((fl & f_not_null) != 0 && pos == begin)) {
            out = pos;
            stack_.resize(base);
            return true;
          }
          break;
      }
      if (ok) continue;
      if (stack_.size() == base) return false;
      frame& t = stack_.back();
      pc = t.pc;
      if (t.run) {  // one repetition fewer
        pos = --t.pos;
        if (t.pos == t.low) stack_.pop_back();
      } else {
        pos = t.pos;
        stack_.pop_back();
      }
    }
  }

  // regex_search from `start` to `end`: the first position with a match, and its end.
  bool search(std::uint32_t start, std::uint8_t fl, std::uint32_t& at, std::uint32_t& out) {
    const std::uint64_t first = prog->first;
    for (std::uint32_t s = start;; ++s) {
      if (first == ~std::uint64_t{0} || (s < end && (mask[s - origin] & first) != 0)) {
        if (match(0, s, s, fl, out)) {
          at = s;
          return true;
        }
      }
      if ((fl & f_continuous) != 0 || s == end) return false;
      fl |= f_prev_avail;  // libstdc++'s _M_search: past the first position the one before is readable
    }
  }

 private:
  struct frame {
    std::uint32_t pc;
    std::uint32_t pos;
    std::uint32_t low;  // run: the fewest repetitions' end
    bool run;
  };
  std::vector<frame> stack_;
};

}  // namespace detail::pre

namespace detail::pre {

// ---------------------------------------------------------------------------------------------------
// llama.cpp's hand-written splitters, one piece [b, e) at a time. Past the piece they read no code point
// and no flags, which is where they differ from their regexes (a piece-final space, "\s+(?!\S)").

inline constexpr std::uint16_t f_num = codepoint_flags::number;
inline constexpr std::uint16_t f_let = codepoint_flags::letter;
inline constexpr std::uint16_t f_ws = codepoint_flags::whitespace;

// unicode_cpt_is_han (Kimi K2).
constexpr bool is_han(char32_t c) noexcept {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0x2CEB0 && c <= 0x2EBEF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// A piece and the words found in it so far.
// Where a stage puts its words: a small buffer handed on in batches, to the next stage or to the caller,
// so that no stage holds the words of the whole text.
class word_sink {
 public:
  using flush_fn = void (*)(void* context, std::span<const pretokenized_word> words);
  word_sink() = default;
  word_sink(flush_fn f, void* context) noexcept : f_(f), context_(context) {}
  void push_back(pretokenized_word w) {
    buf_[n_++] = w;
    if (n_ == buf_.size()) flush();
  }
  void flush() {
    if (n_ == 0) return;
    const std::size_t n = n_;
    n_ = 0;
    f_(context_, std::span<const pretokenized_word>(buf_.data(), n));
  }

 private:
  flush_fn f_ = nullptr;
  void* context_ = nullptr;
  std::size_t n_ = 0;
  std::array<pretokenized_word, 128> buf_{};
};

struct piece {
  const char32_t* cp;
  const std::uint16_t* fl;
  std::uint32_t b, e;
  word_sink& out;
  std::uint32_t prev;  // end of the last word

  std::uint16_t flags(std::uint32_t p) const noexcept { return p < e ? fl[p] : 0; }
  char32_t at(std::uint32_t p) const noexcept { return p < e ? cp[p] : no_char; }
  void word_to(std::uint32_t to) {
    if (to > prev) out.push_back(pretokenized_word{prev, to});
    prev = to;
  }
  // 's 't 'm 'd 're 've 'll at `p` (a quote), lower-cased first when `fold`: its length, or 0.
  std::uint32_t contraction(std::uint32_t p, bool fold) const noexcept {
    if (cp[p] != '\'' || p + 1 >= e) return 0;
    const char32_t n = fold ? to_lower(cp[p + 1]) : cp[p + 1];
    if (n == 's' || n == 't' || n == 'm' || n == 'd') return 2;
    if (p + 2 >= e) return 0;
    const char32_t nn = fold ? to_lower(cp[p + 2]) : cp[p + 2];
    return ((n == 'r' && nn == 'e') || (n == 'v' && nn == 'e') || (n == 'l' && nn == 'l')) ? 3 : 0;
  }
  // The whitespace tail shared by the Llama 3 and Kimi K2 splitters: \s*[\r\n]+, \s+(?!\S), \s+, or one
  // code point.
  void whitespace_or_one(std::uint32_t& pos, bool newlines) {
    std::uint32_t n = 0, last_nl = 0;
    while ((flags(pos + n) & f_ws) != 0) {
      const char32_t c = at(pos + n);
      if (newlines && (c == '\r' || c == '\n')) last_nl = pos + n + 1;
      ++n;
    }
    if (last_nl > 0) {
      pos = last_nl;
    } else if (n > 1 && at(pos + n) != no_char) {
      pos += n - 1;
    } else if (n > 0) {
      pos += n;
    } else {
      ++pos;
    }
    word_to(pos);
  }
  // \p{N}{1,3} (or \p{N}{1,`most`}), repeated.
  void digits(std::uint32_t& pos, std::uint32_t most = 3) {
    std::uint32_t ini = pos;
    while ((flags(pos) & f_num) != 0) {
      if (++pos - ini >= most) {
        word_to(pos);
        ini = pos;
      }
    }
    word_to(pos);
  }
};

// unicode_regex_split_custom_gpt2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
inline void split_gpt2(piece& s) {
  for (std::uint32_t pos = s.b; pos < s.e;) {
    const char32_t c = s.cp[pos];
    if (const std::uint32_t k = s.contraction(pos, false)) {
      pos += k;
      s.word_to(pos);
      continue;
    }
    std::uint16_t f2 = c == ' ' ? s.flags(pos + 1) : s.fl[pos];
    const std::uint16_t classes[2] = {f_let, f_num};
    bool done = false;
    for (std::uint16_t cls : classes) {
      if ((f2 & cls) != 0) {
        pos += c == ' ';
        while ((f2 & cls) != 0) f2 = s.flags(++pos);
        s.word_to(pos);
        done = true;
        break;
      }
    }
    if (done) continue;
    if ((f2 & (f_ws | f_let | f_num)) == 0 && f2 != 0) {
      pos += c == ' ';
      while ((f2 & (f_ws | f_let | f_num)) == 0 && f2 != 0) f2 = s.flags(++pos);
      s.word_to(pos);
      continue;
    }
    s.whitespace_or_one(pos, false);
  }
}

// The last alternatives of Llama 3's regex and Kimi K2's: " ?[^\s\p{L}\p{N}]+[\r\n]*", then whitespace.
// Whether the first code point's own flags or those after the space decide differs between the two
// splitters of llama.cpp (`test_first`).
inline void symbols_or_whitespace(piece& s, std::uint32_t& pos, char32_t c, std::uint16_t f, bool test_first) {
  std::uint16_t f2 = c == ' ' ? s.flags(pos + 1) : f;
  if ((f2 & (f_ws | f_let | f_num)) == 0 && (test_first ? f : f2) != 0) {
    pos += c == ' ';
    while ((f2 & (f_ws | f_let | f_num)) == 0 && f2 != 0) f2 = s.flags(++pos);
    for (char32_t c2 = s.at(pos); c2 == '\r' || c2 == '\n'; c2 = s.at(++pos)) {}
    s.word_to(pos);
    return;
  }
  s.whitespace_or_one(pos, true);
}

// unicode_regex_split_custom_llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// With `digits` 1 it is Qwen2's regex (see `qwen2_regex`).
inline void split_llama3(piece& s, std::uint32_t digits = 3) {
  for (std::uint32_t pos = s.b; pos < s.e;) {
    const char32_t c = s.cp[pos];
    const std::uint16_t f = s.fl[pos];
    if (const std::uint32_t k = s.contraction(pos, true)) {
      pos += k;
      s.word_to(pos);
      continue;
    }
    if (!(c == '\r' || c == '\n' || (f & f_num) != 0) && ((f & f_let) != 0 || (s.flags(pos + 1) & f_let) != 0)) {
      ++pos;
      while ((s.flags(pos) & f_let) != 0) ++pos;
      s.word_to(pos);
      continue;
    }
    if ((f & f_num) != 0) {
      s.digits(pos, digits);
      continue;
    }
    symbols_or_whitespace(s, pos, c, f, /*test_first=*/true);  // llama.cpp tests `flags` here, not `flags2`
  }
}

// unicode_regex_split_custom_kimi_k2: [\p{Han}]+, letter words without Han (an optional leading
// non-letter, then letters, then an optional contraction), \p{N}{1,3}, then as Llama 3.
inline void split_kimi_k2(piece& s) {
  const auto letter = [&s](std::uint32_t p) { return (s.flags(p) & f_let) != 0 && !is_han(s.at(p)); };
  for (std::uint32_t pos = s.b; pos < s.e;) {
    const char32_t c = s.cp[pos];
    const std::uint16_t f = s.fl[pos];
    if (is_han(c)) {
      while (is_han(s.at(pos))) ++pos;
      s.word_to(pos);
      continue;
    }
    const bool may_lead = !(c == '\r' || c == '\n' || (f & (f_let | f_num)) != 0);
    if (((f & f_let) != 0 && !is_han(c)) || (may_lead && letter(pos + 1))) {
      bool lead = false;
      if (may_lead) {
        lead = true;
        ++pos;
      }
      bool any = false;
      while (letter(pos)) {
        any = true;
        ++pos;
      }
      if (any || (!lead && letter(pos))) {
        if (!any) ++pos;
        while (letter(pos)) ++pos;
        if (s.at(pos) == '\'' && pos + 1 < s.e) pos += s.contraction(pos, true);
        s.word_to(pos);
        continue;
      }
      if (lead) --pos;
    }
    if ((f & f_num) != 0) {
      s.digits(pos);
      continue;
    }
    symbols_or_whitespace(s, pos, c, f, /*test_first=*/false);
  }
}

// unicode_regex_split_custom_afmoe: a run of n digits splits into n % 3 leading digits, then threes; the
// text before a run stays in the run's first word, and the text after the last run is one word.
inline void split_afmoe(piece& s) {
  for (std::uint32_t pos = s.b; pos < s.e;) {
    if ((s.fl[pos] & f_num) == 0) {
      ++pos;
      continue;
    }
    const std::uint32_t start = pos;
    while (pos < s.e && (s.fl[pos] & f_num) != 0) ++pos;
    std::uint32_t cur = start + (pos - start) % 3;
    if (cur > start) s.word_to(cur);
    for (; cur < pos; cur += 3) s.word_to(cur + 3);
  }
  s.word_to(s.e);
}

}  // namespace detail::pre

/**
 * Splits texts into words as llama.cpp's pre-tokenizers do, reusing its buffers from call to call: after
 * the first calls it allocates nothing but the words' own growth. One per thread.
 */
class word_splitter {
 public:
  /**
   * Appends the words of `text` for the pre-tokenizer `type` to `words`, in order. The words cover the
   * text without gaps, as llama.cpp's `unicode_regex_split` does, but for the empty words llama.cpp
   * also keeps (after an empty regex match), which hold nothing to tokenize and are left out.
   * @param type  the pre-tokenizer
   * @param text  the code points, as `decode_utf8` (llama.cpp's `unicode_cpts_from_utf8`) gives them;
   *              fewer than 2^32
   * @param words receives the words
   */
  void split(pre_tokenizer type, std::span<const char32_t> text, std::vector<pretokenized_word>& words) {
    split(type, text, [&](std::span<const pretokenized_word> w) { words.insert(words.end(), w.begin(), w.end()); });
  }

  /**
   * `split`, handing the words to `emit` in order, in batches (`std::span<const pretokenized_word>`), as
   * the last stage finds them: the words of the whole text are never held (only the pieces of the
   * stages before the last, for the pre-tokenizers that have several).
   */
  template <class Emit>
  void split(pre_tokenizer type, std::span<const char32_t> text, Emit&& emit) {
    namespace p = detail::pre;
    const auto n = static_cast<std::uint32_t>(text.size());
    if (n == 0) return;
    flags_.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) flags_[i] = flags_of(text[i]).bits;  // once per code point
    const auto list = static_cast<std::size_t>(p::list_of[static_cast<std::size_t>(type)]);
    text_ = text;
    first_ = p::list_first[list], count_ = p::list_count[list];
    using emit_t = std::remove_reference_t<Emit>;
    // Each stage's pieces go to the next stage a batch at a time (each piece is split apart from the
    // others), the last stage's words to the caller: no stage's pieces of the whole text are held.
    p::word_sink to_caller([](void* e, std::span<const pretokenized_word> w) { (*static_cast<emit_t*>(e))(w); },
                           static_cast<void*>(std::addressof(emit)));
    for (std::size_t k = 0; k + 1 < count_; ++k) {
      levels_[k].sink = p::word_sink(
          [](void* c, std::span<const pretokenized_word> w) {
            auto* l = static_cast<level*>(c);
            l->owner->run(l->depth + 1, w);
          },
          &levels_[k]);
      levels_[k].owner = this, levels_[k].depth = k;
    }
    last_sink_ = &to_caller;
    const pretokenized_word whole{0, n};
    run(0, std::span<const pretokenized_word>(&whole, 1));
    release_if_large();
  }

  /**
   * For tests: run every stage llama.cpp runs as a regex through the regex matcher, where this splitter
   * has a hand-written twin (Qwen2's); false by default.
   */
  bool regex_only = false;

 private:
  // One stage's state while the stages after it run: its pieces waiting for the next stage, its
  // matcher, and its classes of the piece it is in.
  struct level {
    detail::pre::word_sink sink;
    detail::pre::matcher matcher;
    std::vector<std::uint64_t> mask;
    word_splitter* owner = nullptr;
    std::size_t depth = 0;
  };
  static constexpr std::size_t max_stages = 8;
  std::vector<std::uint16_t> flags_;
  std::array<level, max_stages> levels_;
  std::span<const char32_t> text_;
  std::size_t first_ = 0, count_ = 0;
  detail::pre::word_sink* last_sink_ = nullptr;

  // Stage `k` on the pieces `pieces`, its words handed on as they come.
  void run(std::size_t k, std::span<const pretokenized_word> pieces) {
    namespace p = detail::pre;
    const p::stage& st = p::stages().stages[first_ + k];
    p::word_sink& dst = k + 1 == count_ ? *last_sink_ : levels_[k].sink;
    if (st.kind == p::path::collapsed || st.kind == p::path::wide ||
        (regex_only && st.prog.ok && !st.prog.code.empty())) {
      for (const pretokenized_word& w : pieces) regex_piece(levels_[k], st.prog, w.begin, w.end, dst);
    } else {
      for (const pretokenized_word& w : pieces) {
        p::piece s{text_.data(), flags_.data(), w.begin, w.end, dst, w.begin};
        switch (st.kind) {
          case p::path::custom_gpt2: p::split_gpt2(s); break;
          case p::path::custom_llama3: p::split_llama3(s); break;
          case p::path::llama3_one_digit: p::split_llama3(s, 1); break;
          case p::path::custom_kimi_k2: p::split_kimi_k2(s); break;
          default: p::split_afmoe(s); break;
        }
      }
    }
    dst.flush();
  }

  // A call on a long text leaves no long buffers behind (the splitter is thread_local).
  void release_if_large() {
    constexpr std::size_t keep = std::size_t{1} << 18;
    if (flags_.capacity() > keep) std::vector<std::uint16_t>().swap(flags_);
    for (level& l : levels_)
      if (l.mask.capacity() > keep) std::vector<std::uint64_t>().swap(l.mask);
  }

  // Each code point's classes in [b, e), seen as llama.cpp feeds the regex: the collapsed byte, or the
  // code point with non-ASCII whitespace as \v.
  void masks(const detail::pre::program& prog, std::uint32_t b, std::uint32_t e, std::vector<std::uint64_t>& mask) {
    mask.resize(e - b);
    char32_t last_sym = 0xFFFFFFFF;
    std::uint64_t last_mask = 0;
    for (std::uint32_t i = b; i < e; ++i) {
      const char32_t c = text_[i];
      std::uint64_t& m = mask[i - b];
      if (c < 0x80) {
        m = prog.table[c];
        continue;
      }
      const std::uint16_t f = flags_[i];
      if (prog.collapsed) {
        m = prog.table[detail::pre::collapsed_byte(f)];
        continue;
      }
      const char32_t sym = (f & codepoint_flags::whitespace) != 0 ? char32_t{0x0B} : c;
      if (sym < 256) {
        m = prog.table[sym];
      } else {
        if (sym != last_sym) last_mask = prog.mask_of(sym), last_sym = sym;  // runs of one script repeat
        m = last_mask;
      }
    }
  }

  // llama.cpp's unicode_regex_split_stl on one piece: regex_iterator's matches, and the text between.
  void regex_piece(level& lv, const detail::pre::program& prog, std::uint32_t b, std::uint32_t e,
                   detail::pre::word_sink& out) {
    namespace p = detail::pre;
    masks(prog, b, e, lv.mask);
    p::matcher& m = lv.matcher;
    m.prog = &prog;
    m.mask = lv.mask.data();
    m.origin = b;
    m.end = e;
    std::uint32_t last = b, at = 0, to = 0;
    std::uint8_t fl = 0;
    bool found = m.search(b, fl, at, to);
    while (found) {
      if (at > last) out.push_back(pretokenized_word{last, at});
      if (to > at) out.push_back(pretokenized_word{at, to});
      last = to;
      std::uint32_t start = to;
      if (at == to) {  // an empty match: first a non-empty one right here, else search on from the next
        if (start == e) break;
        if (m.search(start, fl | p::f_not_null | p::f_continuous | p::f_prev_avail, at, to)) continue;
        ++start;
      }
      fl |= p::f_prev_avail;
      found = m.search(start, fl, at, to);
    }
    if (last < e) out.push_back(pretokenized_word{last, e});
  }
};

namespace detail {
// The calling thread's splitter: its buffers are reused from call to call.
inline word_splitter& thread_splitter() {
  thread_local word_splitter splitter;
  return splitter;
}
}  // namespace detail

/**
 * Appends the words of `text` for the pre-tokenizer `type` to `words` (see `word_splitter::split`),
 * with one `word_splitter` per thread.
 */
inline void split_words(pre_tokenizer type, std::span<const char32_t> text, std::vector<pretokenized_word>& words) {
  detail::thread_splitter().split(type, text, words);
}

/**
 * `split_words`, handing the words to `emit` in batches as they are found (see `word_splitter::split`).
 */
template <class Emit>
void split_words(pre_tokenizer type, std::span<const char32_t> text, Emit&& emit) {
  detail::thread_splitter().split(type, text, std::forward<Emit>(emit));
}

}  // namespace text
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_PRETOKENIZER_HPP
