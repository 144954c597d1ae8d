#ifndef GGUF_LLAMA_MODEL_FACTS_HPP
#define GGUF_LLAMA_MODEL_FACTS_HPP

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "gguf/format/ggml_types.hpp"
#include "gguf/format/metadata.hpp"
#include "gguf/format/tensor_info.hpp"
#include "gguf/llama/file_type.hpp"
#include "gguf/llama/hparams.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * A model's parameters, counted as llama.cpp's `llama_model_n_params` counts them (every element of
 * every tensor of every shard) and split as gguf-py's `get_total_parameter_count` splits them: tensors
 * whose names contain "_exps" hold the routed experts, the rest is shared.
 */
struct param_count {
  std::uint64_t total = 0;         ///< every element: `llama_model_n_params`
  std::uint64_t shared = 0;        ///< elements outside the routed experts
  std::uint64_t experts = 0;       ///< elements of the routed experts, all of them
  std::uint64_t per_expert = 0;    ///< one expert's elements (each expert tensor's size / its expert count)
  std::uint32_t expert_count = 0;  ///< experts per expert tensor (their third dimension, averaged); 0 if dense
};

/** The parameter count of a model's tensors (all shards'). */
inline param_count count_params(std::span<const tensor_info> tensors) noexcept {
  param_count p;
  std::uint64_t expert_sum = 0, expert_tensors = 0;
  for (const tensor_info& t : tensors) {
    p.total += t.n_elements;
    if (t.name.find("_exps.") != std::string_view::npos && t.n_dims >= 3 && t.ne[2] != 0) {
      p.experts += t.n_elements;
      p.per_expert += t.n_elements / t.ne[2];
      expert_sum += t.ne[2];
      ++expert_tensors;
    } else {
      p.shared += t.n_elements;
    }
  }
  p.expert_count = expert_tensors ? static_cast<std::uint32_t>(expert_sum / expert_tensors) : 0;
  return p;
}

/**
 * A parameter count in the naming convention's notation, as gguf-py's
 * `model_weight_count_rounded_notation` writes it: K, M, B or T with at least two significant digits
 * ("8.0B", "70B", "135M", "1.5T").
 */
struct size_notation {
  std::array<char, 32> text{};  ///< NUL-terminated
  /** The notation as a view (valid while this object lives). */
  std::string_view view() const& noexcept { return text.data(); }
  std::string_view view() const&& = delete;  ///< would dangle: keep the notation in a variable, or `str()`
  /** The notation as a string. */
  std::string str() const { return text.data(); }
  /** The same text as `s`. */
  friend bool operator==(const size_notation& n, std::string_view s) noexcept { return n.view() == s; }
};

/** `n` in gguf-py's rounded notation (see `size_notation`). */
inline size_notation rounded_notation(std::uint64_t n) noexcept {
  const auto c = static_cast<double>(n);
  double scaled = c * 1e-3;
  char suffix = 'K';
  if (c > 1e12) {
    scaled = c * 1e-12, suffix = 'T';
  } else if (c > 1e9) {
    scaled = c * 1e-9, suffix = 'B';
  } else if (c > 1e6) {
    scaled = c * 1e-6, suffix = 'M';
  }
  // Python's round() (half to even) and the digits of its str(), leading zeros dropped.
  int digits = 0;
  for (auto r = static_cast<std::uint64_t>(std::nearbyint(scaled)); r != 0; r /= 10) ++digits;
  const int fix = digits < 2 ? 2 - digits : 0;
  size_notation s;
  std::snprintf(s.text.data(), s.text.size(), "%.*f%c", fix, scaled, suffix);
  return s;
}

/**
 * The size label of the naming convention, as gguf-py's `size_label` computes it when converting:
 * dense models their rounded total ("8.0B"), mixtures of experts `<experts>x<shared + one expert>`
 * ("8x7.2B").
 */
inline size_notation size_label(const param_count& p) noexcept {
  if (p.expert_count == 0) return rounded_notation(p.total);
  const size_notation per = rounded_notation(p.shared + p.per_expert);
  size_notation s;
  std::snprintf(s.text.data(), s.text.size(), "%ux%.20s", static_cast<unsigned>(p.expert_count), per.text.data());
  return s;
}

/** How the layers of an architecture keep their context, for the memory estimate. */
struct arch_memory_traits {
  std::string_view arch;      ///< general.architecture
  std::uint32_t swa_pattern;  ///< every n-th layer has full attention, the others the sliding window (0: none)
  bool recurrent;             ///< every layer keeps a recurrent state instead of a KV cache
  bool hybrid;                ///< a layer with 0 KV heads is recurrent, the others attend
  bool parallel_hybrid;       ///< every layer both attends and keeps a recurrent state
  bool no_cache;              ///< no context memory at all: embedding and diffusion models
};

/**
 * The architectures whose layers are not all plain attention, as llama.cpp's `llama_model::load_hparams`
 * and `create_memory` set them (sliding-window patterns are in its code, not in the file). Every other
 * architecture: every layer attends to the whole context (a `sliding_window` key it ignores, as
 * llama.cpp does).
 */
inline constexpr std::array<arch_memory_traits, 32> arch_memory{{
    {"gemma2", 2, false, false, false, false},
    {"gemma3", 6, false, false, false, false},
    {"cohere2", 4, false, false, false, false},
    {"gpt-oss", 2, false, false, false, false},
    {"exaone4", 4, false, false, false, false},
    {"mamba", 0, true, false, false, false},
    {"mamba2", 0, true, false, false, false},
    {"rwkv6", 0, true, false, false, false},
    {"rwkv6qwen2", 0, true, false, false, false},
    {"rwkv7", 0, true, false, false, false},
    {"arwkv7", 0, true, false, false, false},
    {"jamba", 0, false, true, false, false},
    {"granitehybrid", 0, false, true, false, false},
    {"nemotron_h", 0, false, true, false, false},
    {"nemotron_h_moe", 0, false, true, false, false},
    {"plamo2", 0, false, true, false, false},
    {"lfm2", 0, false, true, false, false},
    {"lfm2moe", 0, false, true, false, false},
    {"qwen3next", 0, false, true, false, false},
    {"falcon-h1", 0, false, false, true, false},
    {"bert", 0, false, false, false, true},
    {"jina-bert-v2", 0, false, false, false, true},
    {"jina-bert-v3", 0, false, false, false, true},
    {"nomic-bert", 0, false, false, false, true},
    {"nomic-bert-moe", 0, false, false, false, true},
    {"neo-bert", 0, false, false, false, true},
    {"modern-bert", 0, false, false, false, true},
    {"gemma-embedding", 0, false, false, false, true},
    {"wavtokenizer-dec", 0, false, false, false, true},
    {"dream", 0, false, false, false, true},
    {"llada", 0, false, false, false, true},
    {"llada-moe", 0, false, false, false, true},
}};

/** The memory traits of `arch`: a plain-attention entry when the table does not list it. */
constexpr arch_memory_traits memory_traits(std::string_view arch) noexcept {
  for (const arch_memory_traits& a : arch_memory) {
    if (a.arch == arch) return a;
  }
  return {arch, 0, false, false, false, false};
}

/** What `estimate_memory` assumes about the context, as llama.cpp's context parameters say it. */
struct memory_options {
  std::uint32_t context = 0;                ///< tokens of context (`n_ctx`); 0: the model's context_length
  ggml_type cache_type_k = ggml_type::f16;  ///< the K cache's type (`--cache-type-k`)
  ggml_type cache_type_v = ggml_type::f16;  ///< the V cache's type (`--cache-type-v`)
  std::uint32_t ubatch = 512;               ///< `n_ubatch`: the slack a sliding-window cache keeps
  /// Sliding-window layers keep the whole context (`swa_full`, llama_context_default_params' default;
  /// llama-server and llama-cli default to false: the window plus `ubatch`).
  bool swa_full = false;
};

/** llama.cpp's padding of the context: the KV cache holds a multiple of 256 cells. */
inline constexpr std::uint32_t kv_cells_padding = 256;

/**
 * The memory a model takes in llama.cpp: its weights and the context's cache for one sequence. The
 * compute buffers (a few hundred MiB at most, by batch size) are not counted.
 */
struct memory_estimate {
  std::uint64_t weights = 0;    ///< the tensors' data bytes, every shard's
  std::uint64_t k = 0;          ///< the K cache: cells x K row bytes, over the attention layers
  std::uint64_t v = 0;          ///< the V cache
  std::uint64_t recurrent = 0;  ///< recurrent states (Mamba's conv and SSM states, RWKV's): f32, one per sequence
  std::uint32_t cells = 0;      ///< KV cells of a full-attention layer: the context padded to 256
  std::uint32_t swa_cells = 0;  ///< KV cells of a sliding-window layer (0 without any)
  std::uint32_t attention_layers = 0;  ///< layers with a KV cache (sliding-window ones included)
  std::uint32_t swa_layers = 0;        ///< of which with a sliding window
  std::uint32_t recurrent_layers = 0;  ///< layers with a recurrent state

  /** The whole context cache: K, V and recurrent states. */
  std::uint64_t kv_cache() const noexcept { return k + v + recurrent; }
  /** Weights and the context cache. */
  std::uint64_t total() const noexcept { return weights + kv_cache(); }
};

namespace detail {

// Bytes of `n` elements of type `t`, or nullopt when `n` is not a whole number of blocks.
inline std::optional<std::uint64_t> cache_row_bytes(ggml_type t, std::uint64_t n) noexcept {
  const type_traits& tr = traits(t);
  if (n % tr.block_size != 0) return std::nullopt;
  return n / tr.block_size * tr.type_size;
}

}  // namespace detail

/**
 * Estimates what llama.cpp allocates for a model at a context length (see docs/FACTS.md for the formulas):
 * - weights: the sum of the tensors' bytes;
 * - attention layers: `cells` x (`key_length` x KV heads) elements of `cache_type_k` for K, and likewise
 *   with `value_length` for V; `cells` is the context padded to 256; a sliding-window layer (gemma2's
 *   every other layer, gemma3's five of six, ...) holds min(cells, pad(window + ubatch, 256)) unless
 *   `swa_full`; head sizes default to embedding_length / head_count; MLA models (deepseek2 with
 *   key_length_mla and value_length_mla) cache only K: the compressed latent and the rope part, which
 *   their files declare as key_length with one KV head (V is a view of it);
 * - embedding and diffusion models (bert and its kin, gemma-embedding, dream, llada): no cache at all;
 * - recurrent layers (Mamba, RWKV, the hybrids' SSM layers): one f32 state per sequence, (d_conv - 1) x
 *   (d_inner + 2 x groups x d_state) plus d_state x d_inner elements (RWKV: 2 x n_embd plus n_embd x
 *   head_size).
 * @return the estimate; `bad_hparams` when a key it needs is missing or 0 (block_count, embedding_length,
 *         head_count for attention layers), a head size is not a whole number of cache-type blocks, or a
 *         size overflows; errors of `read_hparams` come first
 */
inline result<memory_estimate> estimate_memory(const hparams& h, std::span<const tensor_info> tensors,
                                               const memory_options& opt = {}) noexcept {
  memory_estimate m;
  for (const tensor_info& t : tensors) m.weights += t.n_bytes;
  const auto bad = [](const char* why) { return error{errc::bad_hparams, why}; };
  if (!h.block_count || *h.block_count == 0) return bad("no block_count: the layers are unknown");
  if (!h.embedding_length || *h.embedding_length == 0) return bad("no embedding_length");
  const std::uint32_t n_layer = *h.block_count, n_embd = *h.embedding_length;
  const std::uint64_t context = opt.context ? opt.context : h.context_length.value_or(0);
  if (context == 0) return bad("no context length: give one");
  if (context > (std::uint64_t{1} << 31)) return bad("a context above 2^31 tokens");
  const auto pad = [](std::uint64_t n) { return (n + kv_cells_padding - 1) / kv_cells_padding * kv_cells_padding; };
  m.cells = static_cast<std::uint32_t>(pad(context));

  const arch_memory_traits traits = memory_traits(h.architecture);
  if (traits.no_cache) return m;  // llama.cpp creates no memory for them: each batch is the whole context
  const bool swa = traits.swa_pattern != 0 && h.sliding_window && *h.sliding_window != 0;
  if (swa) {
    m.swa_cells = opt.swa_full ? m.cells
                               : static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                     m.cells, pad(std::uint64_t{*h.sliding_window} + opt.ubatch)));
  }
  // Recurrent state sizes (llama_hparams::n_embd_r / n_embd_s).
  std::uint64_t r_elems = 0, s_elems = 0;
  if (h.wkv_head_size && *h.wkv_head_size != 0) {
    r_elems = std::uint64_t{h.token_shift_count.value_or(2)} * n_embd;
    s_elems = std::uint64_t{n_embd} * *h.wkv_head_size;
  } else {
    const std::uint64_t d_conv = h.ssm_conv_kernel.value_or(0), d_inner = h.ssm_inner_size.value_or(0);
    const std::uint64_t d_state = h.ssm_state_size.value_or(0), groups = h.ssm_group_count.value_or(0);
    r_elems = (d_conv > 0 ? d_conv - 1 : 0) * (d_inner + 2 * groups * d_state);
    s_elems = d_state * d_inner;
  }
  // MLA (llama_hparams::is_mla): the cache holds the compressed latent and the rope part as K; V is a
  // view of it, not stored.
  const bool mla = h.key_length_mla.value_or(0) != 0 && h.value_length_mla.value_or(0) != 0;
  for (std::uint32_t il = 0; il < n_layer; ++il) {
    const std::uint32_t kv_heads = h.n_head_kv(il);
    const bool recurrent = traits.recurrent || traits.parallel_hybrid || (traits.hybrid && kv_heads == 0);
    const bool attends = !traits.recurrent && (traits.parallel_hybrid || !recurrent);
    if (recurrent) {
      ++m.recurrent_layers;
      m.recurrent += (r_elems + s_elems) * sizeof(float);
    }
    if (!attends) continue;
    const std::uint32_t heads = h.n_head(il);
    if (heads == 0 && (!h.key_length || !h.value_length)) return bad("no head_count: the head size is unknown");
    const std::uint64_t head_k = h.key_length ? *h.key_length : n_embd / heads;
    const std::uint64_t head_v = h.value_length ? *h.value_length : n_embd / heads;
    constexpr std::uint64_t max_row = std::uint64_t{1} << 40;  // elements; far above any real model's
    if (head_k * kv_heads > max_row || head_v * kv_heads > max_row) {
      return bad("the KV cache's size overflows: absurd head sizes or counts");
    }
    const auto k_row = detail::cache_row_bytes(opt.cache_type_k, head_k * kv_heads);
    const auto v_row = detail::cache_row_bytes(opt.cache_type_v, head_v * kv_heads);
    if (!k_row || (!mla && !v_row)) return bad("a K or V row is not a whole number of the cache type's blocks");
    const bool swa_layer = swa && (il % traits.swa_pattern < traits.swa_pattern - 1);
    const std::uint64_t cells = swa_layer ? m.swa_cells : m.cells;
    ++m.attention_layers;
    m.swa_layers += swa_layer ? 1 : 0;
    m.k += cells * *k_row;
    if (!mla) m.v += cells * *v_row;  // rows below 2^40 elements, cells below 2^31: no overflow
  }
  return m;
}

/** What a model is, from its metadata and tensors: what `gguf-info` prints. */
struct model_facts {
  hparams hp;                ///< the standard keys, typed
  param_count params;        ///< the parameters, as llama.cpp counts them
  type_census census;        ///< tensors, elements and bytes per tensor type
  file_type_fact file_type;  ///< the quantization mix: declared, or guessed from the census

  /** The size label: `general.size_label` when the file has one, else computed (`size_label`). */
  size_notation label() const noexcept {
    if (hp.size_label && !hp.size_label->empty() && hp.size_label->size() < sizeof(size_notation::text)) {
      size_notation s;
      std::copy(hp.size_label->begin(), hp.size_label->end(), s.text.begin());
      return s;
    }
    return size_label(params);
  }
};

/**
 * The facts of a model: typed keys, parameter count, census and file type.
 * @param md      the model's metadata (a split model's first shard's)
 * @param tensors every tensor of the model, all shards'
 * @return the facts, or the error of `read_hparams`
 */
inline result<model_facts> facts(const metadata_table& md, std::span<const tensor_info> tensors) noexcept {
  model_facts f;
  auto h = read_hparams(md);
  if (!h) return h.error();
  f.hp = *h;
  f.params = count_params(tensors);
  f.census = census(tensors);
  f.file_type = file_type_of(f.hp.file_type, f.census);
  return f;
}

GGUF_END_NAMESPACE

#endif  // GGUF_LLAMA_MODEL_FACTS_HPP
