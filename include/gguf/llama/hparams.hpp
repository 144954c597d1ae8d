#ifndef GGUF_LLAMA_HPARAMS_HPP
#define GGUF_LLAMA_HPARAMS_HPP

#include <cstdint>
#include <optional>
#include <string_view>

#include "gguf/format/metadata.hpp"
#include "gguf/format/value.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

namespace detail {
struct hparams_reader;
}  // namespace detail

/// llama.cpp's LLAMA_MAX_LAYERS: it refuses a model with more blocks, and so does `read_hparams`.
inline constexpr std::uint32_t max_layers = 512;

/**
 * A count that llama.cpp reads "as a key or an array" (`get_key_or_arr`): one uint32 for every layer, or
 * an array of uint32 or int32 with one item per layer (`head_count_kv` of models whose layers differ, a
 * 0 marking a layer without attention). A view into the file's metadata: no allocation.
 */
class per_layer {
 public:
  /** No value (an empty optional is the usual way to say so; this is its inside). */
  constexpr per_layer() noexcept = default;
  /** The same value for every layer. */
  constexpr explicit per_layer(std::uint32_t v) noexcept : scalar_(v) {}

  /** True when the file stores one value per layer (an array). */
  constexpr bool is_array() const noexcept { return array_.size() != 0; }
  /**
   * The value of layer `il` (`il < block_count`, which `read_hparams` checked the array's length against).
   * Array items were checked too: none is negative.
   */
  std::uint32_t operator[](std::uint32_t il) const noexcept {
    if (!is_array()) return scalar_;
    if (array_.item_type() == value_type::int32)
      return static_cast<std::uint32_t>(array_.get<std::int32_t>(il).value_or(0));
    return array_.get<std::uint32_t>(il).value_or(0);
  }
  /** The largest value over `n_layer` layers. */
  std::uint32_t max(std::uint32_t n_layer) const noexcept {
    std::uint32_t m = is_array() ? 0 : scalar_;
    for (std::uint32_t i = 0; is_array() && i < n_layer; ++i) m = (*this)[i] > m ? (*this)[i] : m;
    return m;
  }

 private:
  friend struct detail::hparams_reader;
  array_view array_;
  std::uint32_t scalar_ = 0;
};

/**
 * The standard keys of a model, typed: the general keys, the hyperparameters llama.cpp reads under the
 * architecture's name and the tokenizer keys. Every member is optional: absent in the file, absent
 * here. A key stored with another type than the one gguf-py writes and llama.cpp requires is an error from
 * `read_hparams`, never converted. Strings are views into the file. Keys not listed here stay in `metadata()`.
 */
struct hparams {
  // general.*
  std::string_view architecture;                      ///< general.architecture ("" when absent)
  std::optional<std::string_view> name;               ///< general.name
  std::optional<std::string_view> basename;           ///< general.basename
  std::optional<std::string_view> size_label;         ///< general.size_label, as the converter wrote it
  std::optional<std::string_view> finetune;           ///< general.finetune
  std::optional<std::string_view> version;            ///< general.version
  std::optional<std::string_view> organization;       ///< general.organization
  std::optional<std::string_view> license;            ///< general.license
  std::optional<std::string_view> type;               ///< general.type ("model", "adapter", ...)
  std::optional<std::uint32_t> file_type;             ///< general.file_type: a llama_ftype (see file_type.hpp)
  std::optional<std::uint32_t> quantization_version;  ///< general.quantization_version

  // {arch}.*: the model's shape
  std::optional<std::uint32_t> vocab_size;                  ///< {arch}.vocab_size (when no tokenizer says)
  std::optional<std::uint32_t> context_length;              ///< {arch}.context_length: the training context
  std::optional<std::uint32_t> embedding_length;            ///< {arch}.embedding_length (n_embd)
  std::optional<std::uint32_t> block_count;                 ///< {arch}.block_count (n_layer)
  std::optional<per_layer> feed_forward_length;             ///< {arch}.feed_forward_length (n_ff)
  std::optional<std::uint32_t> leading_dense_block_count;   ///< {arch}.leading_dense_block_count (MoE)
  std::optional<std::uint32_t> expert_feed_forward_length;  ///< {arch}.expert_feed_forward_length
  std::optional<std::uint32_t> expert_count;                ///< {arch}.expert_count
  std::optional<std::uint32_t> expert_used_count;           ///< {arch}.expert_used_count
  std::optional<std::uint32_t> expert_shared_count;         ///< {arch}.expert_shared_count

  // {arch}.attention.*
  std::optional<per_layer> head_count;            ///< {arch}.attention.head_count (n_head)
  std::optional<per_layer> head_count_kv;         ///< {arch}.attention.head_count_kv (defaults to n_head)
  std::optional<std::uint32_t> key_length;        ///< {arch}.attention.key_length (head dim of K)
  std::optional<std::uint32_t> value_length;      ///< {arch}.attention.value_length (head dim of V)
  std::optional<std::uint32_t> key_length_mla;    ///< {arch}.attention.key_length_mla (MLA, per head)
  std::optional<std::uint32_t> value_length_mla;  ///< {arch}.attention.value_length_mla (MLA, per head)
  std::optional<std::uint32_t> q_lora_rank;       ///< {arch}.attention.q_lora_rank (MLA)
  std::optional<std::uint32_t> kv_lora_rank;      ///< {arch}.attention.kv_lora_rank (MLA: the cached latent)
  std::optional<std::uint32_t> sliding_window;    ///< {arch}.attention.sliding_window (n_swa)
  std::optional<float> layer_norm_epsilon;        ///< {arch}.attention.layer_norm_epsilon
  std::optional<float> layer_norm_rms_epsilon;    ///< {arch}.attention.layer_norm_rms_epsilon

  // {arch}.rope.*
  std::optional<std::uint32_t> rope_dimension_count;           ///< {arch}.rope.dimension_count (n_rot)
  std::optional<float> rope_freq_base;                         ///< {arch}.rope.freq_base
  std::optional<std::string_view> rope_scaling_type;           ///< {arch}.rope.scaling.type
  std::optional<float> rope_scaling_factor;                    ///< {arch}.rope.scaling.factor
  std::optional<std::uint32_t> rope_scaling_original_context;  ///< {arch}.rope.scaling.original_context_length

  // {arch}.ssm.* (Mamba and the hybrids) and {arch}.wkv.* (RWKV)
  std::optional<std::uint32_t> ssm_conv_kernel;     ///< {arch}.ssm.conv_kernel (d_conv)
  std::optional<std::uint32_t> ssm_inner_size;      ///< {arch}.ssm.inner_size (d_inner)
  std::optional<std::uint32_t> ssm_state_size;      ///< {arch}.ssm.state_size (d_state)
  std::optional<std::uint32_t> ssm_time_step_rank;  ///< {arch}.ssm.time_step_rank (dt_rank)
  std::optional<std::uint32_t> ssm_group_count;     ///< {arch}.ssm.group_count (Mamba-2's n_group)
  std::optional<std::uint32_t> wkv_head_size;       ///< {arch}.wkv.head_size (RWKV)
  std::optional<std::uint32_t> token_shift_count;   ///< {arch}.token_shift_count (RWKV; 2 when absent)

  // tokenizer.ggml.*
  std::optional<std::string_view> tokenizer_model;  ///< tokenizer.ggml.model ("llama", "gpt2", ...)
  std::optional<std::string_view> tokenizer_pre;    ///< tokenizer.ggml.pre
  std::optional<std::uint64_t> n_tokens;            ///< the length of tokenizer.ggml.tokens
  std::optional<std::uint32_t> bos_token_id;        ///< tokenizer.ggml.bos_token_id
  std::optional<std::uint32_t> eos_token_id;        ///< tokenizer.ggml.eos_token_id
  bool has_chat_template = false;                   ///< tokenizer.chat_template is present

  /** The vocabulary size: the tokenizer's token count, else `{arch}.vocab_size`. */
  std::optional<std::uint64_t> n_vocab() const noexcept {
    if (n_tokens) return n_tokens;
    if (vocab_size) return *vocab_size;
    return std::nullopt;
  }
  /** Heads of layer `il` (0 when the file does not say). */
  std::uint32_t n_head(std::uint32_t il) const noexcept { return head_count ? (*head_count)[il] : 0; }
  /** KV heads of layer `il`: head_count_kv, else head_count (llama.cpp's default). */
  std::uint32_t n_head_kv(std::uint32_t il) const noexcept { return head_count_kv ? (*head_count_kv)[il] : n_head(il); }
};

namespace detail {

// Reads keys with the type gguf-py writes; an error names the key and both types.
struct hparams_reader {
  const metadata_table& md;
  std::string_view arch;

  template <class T>
  result<std::optional<T>> get(const metadata_entry* e) const noexcept {
    if (!e) return std::optional<T>{};
    auto v = e->value.get<T>();
    if (!v) return error(v.error()).about(e->key);
    return std::optional<T>{*v};
  }
  template <class T>
  result<std::optional<T>> general(std::string_view key) const noexcept {
    return get<T>(md.find(key));
  }
  template <class T>
  result<std::optional<T>> arch_key(std::string_view key) const noexcept {
    return get<T>(arch.empty() ? nullptr : md.arch_find(key));
  }
  // A uint32, or an array of uint32/int32 with exactly n_layer non-negative items.
  result<std::optional<per_layer>> layers(std::string_view key, std::optional<std::uint32_t> n_layer) const noexcept {
    const metadata_entry* e = arch.empty() ? nullptr : md.arch_find(key);
    if (!e) return std::optional<per_layer>{};
    if (!e->value.is_array()) {
      auto v = e->value.get<std::uint32_t>();
      if (!v) return error(v.error()).about(e->key);
      return std::optional<per_layer>{per_layer(*v)};
    }
    const array_view a = *e->value.get<array_view>();
    if (a.item_type() != value_type::uint32 && a.item_type() != value_type::int32) {
      return error{errc::type_mismatch, "a per-layer array holds uint32 or int32 items"}.about(e->key);
    }
    if (!n_layer) return error{errc::bad_hparams, "a per-layer array in a model without block_count"}.about(e->key);
    if (a.size() != *n_layer) {
      return error{errc::bad_hparams, "a per-layer array's length differs from block_count"}.about(e->key);
    }
    if (a.item_type() == value_type::int32) {
      for (std::uint64_t i = 0; i < a.size(); ++i) {
        if (a.get<std::int32_t>(i).value_or(0) < 0) {
          return error{errc::bad_hparams, "a per-layer count is negative"}.about(e->key);
        }
      }
    }
    per_layer p;
    p.array_ = a;
    return std::optional<per_layer>{p};
  }
};

}  // namespace detail

#define GGUF_HPARAM(member, expr)           \
  do {                                      \
    auto gguf_hp_ = (expr);                 \
    if (!gguf_hp_) return gguf_hp_.error(); \
    h.member = *gguf_hp_;                   \
  } while (false)

/**
 * The standard keys of `md`, typed (see `hparams`).
 * @return the keys; `type_mismatch` naming the key when one is stored with another type than gguf-py
 *         writes (`llama.context_length` as a string, say); `bad_hparams` for a `block_count` above
 *         `max_layers`, or a per-layer array whose length is not `block_count` or with a negative item
 */
inline result<hparams> read_hparams(const metadata_table& md) noexcept {
  hparams h;
  const metadata_entry* a = md.find("general.architecture");
  if (a) {
    auto s = a->value.get<std::string_view>();
    if (!s) return error(s.error()).about(a->key);
    h.architecture = *s;
  }
  const detail::hparams_reader r{md, h.architecture};
  GGUF_HPARAM(name, r.general<std::string_view>("general.name"));
  GGUF_HPARAM(basename, r.general<std::string_view>("general.basename"));
  GGUF_HPARAM(size_label, r.general<std::string_view>("general.size_label"));
  GGUF_HPARAM(finetune, r.general<std::string_view>("general.finetune"));
  GGUF_HPARAM(version, r.general<std::string_view>("general.version"));
  GGUF_HPARAM(organization, r.general<std::string_view>("general.organization"));
  GGUF_HPARAM(license, r.general<std::string_view>("general.license"));
  GGUF_HPARAM(type, r.general<std::string_view>("general.type"));
  GGUF_HPARAM(file_type, r.general<std::uint32_t>("general.file_type"));
  GGUF_HPARAM(quantization_version, r.general<std::uint32_t>("general.quantization_version"));

  GGUF_HPARAM(vocab_size, r.arch_key<std::uint32_t>("vocab_size"));
  GGUF_HPARAM(context_length, r.arch_key<std::uint32_t>("context_length"));
  GGUF_HPARAM(embedding_length, r.arch_key<std::uint32_t>("embedding_length"));
  GGUF_HPARAM(block_count, r.arch_key<std::uint32_t>("block_count"));
  if (h.block_count && *h.block_count > max_layers) {
    return error{errc::bad_hparams, "more blocks than llama.cpp's 512 (LLAMA_MAX_LAYERS)"}.about(
        md.arch_find("block_count")->key);
  }
  GGUF_HPARAM(feed_forward_length, r.layers("feed_forward_length", h.block_count));
  GGUF_HPARAM(leading_dense_block_count, r.arch_key<std::uint32_t>("leading_dense_block_count"));
  GGUF_HPARAM(expert_feed_forward_length, r.arch_key<std::uint32_t>("expert_feed_forward_length"));
  GGUF_HPARAM(expert_count, r.arch_key<std::uint32_t>("expert_count"));
  GGUF_HPARAM(expert_used_count, r.arch_key<std::uint32_t>("expert_used_count"));
  GGUF_HPARAM(expert_shared_count, r.arch_key<std::uint32_t>("expert_shared_count"));

  GGUF_HPARAM(head_count, r.layers("attention.head_count", h.block_count));
  GGUF_HPARAM(head_count_kv, r.layers("attention.head_count_kv", h.block_count));
  GGUF_HPARAM(key_length, r.arch_key<std::uint32_t>("attention.key_length"));
  GGUF_HPARAM(value_length, r.arch_key<std::uint32_t>("attention.value_length"));
  GGUF_HPARAM(key_length_mla, r.arch_key<std::uint32_t>("attention.key_length_mla"));
  GGUF_HPARAM(value_length_mla, r.arch_key<std::uint32_t>("attention.value_length_mla"));
  GGUF_HPARAM(q_lora_rank, r.arch_key<std::uint32_t>("attention.q_lora_rank"));
  GGUF_HPARAM(kv_lora_rank, r.arch_key<std::uint32_t>("attention.kv_lora_rank"));
  GGUF_HPARAM(sliding_window, r.arch_key<std::uint32_t>("attention.sliding_window"));
  GGUF_HPARAM(layer_norm_epsilon, r.arch_key<float>("attention.layer_norm_epsilon"));
  GGUF_HPARAM(layer_norm_rms_epsilon, r.arch_key<float>("attention.layer_norm_rms_epsilon"));

  GGUF_HPARAM(rope_dimension_count, r.arch_key<std::uint32_t>("rope.dimension_count"));
  GGUF_HPARAM(rope_freq_base, r.arch_key<float>("rope.freq_base"));
  GGUF_HPARAM(rope_scaling_type, r.arch_key<std::string_view>("rope.scaling.type"));
  GGUF_HPARAM(rope_scaling_factor, r.arch_key<float>("rope.scaling.factor"));
  GGUF_HPARAM(rope_scaling_original_context, r.arch_key<std::uint32_t>("rope.scaling.original_context_length"));

  GGUF_HPARAM(ssm_conv_kernel, r.arch_key<std::uint32_t>("ssm.conv_kernel"));
  GGUF_HPARAM(ssm_inner_size, r.arch_key<std::uint32_t>("ssm.inner_size"));
  GGUF_HPARAM(ssm_state_size, r.arch_key<std::uint32_t>("ssm.state_size"));
  GGUF_HPARAM(ssm_time_step_rank, r.arch_key<std::uint32_t>("ssm.time_step_rank"));
  GGUF_HPARAM(ssm_group_count, r.arch_key<std::uint32_t>("ssm.group_count"));
  GGUF_HPARAM(wkv_head_size, r.arch_key<std::uint32_t>("wkv.head_size"));
  GGUF_HPARAM(token_shift_count, r.arch_key<std::uint32_t>("token_shift_count"));

  GGUF_HPARAM(tokenizer_model, r.general<std::string_view>("tokenizer.ggml.model"));
  GGUF_HPARAM(tokenizer_pre, r.general<std::string_view>("tokenizer.ggml.pre"));
  GGUF_HPARAM(bos_token_id, r.general<std::uint32_t>("tokenizer.ggml.bos_token_id"));
  GGUF_HPARAM(eos_token_id, r.general<std::uint32_t>("tokenizer.ggml.eos_token_id"));
  if (const metadata_entry* t = md.find("tokenizer.ggml.tokens")) {
    auto arr = t->value.get<array_view>();
    if (!arr) return error(arr.error()).about(t->key);
    if (arr->item_type() != value_type::string) {
      return error{errc::type_mismatch, "the tokens are not an array of strings"}.about(t->key);
    }
    h.n_tokens = arr->size();
  }
  h.has_chat_template = md.contains("tokenizer.chat_template");
  return h;
}

#undef GGUF_HPARAM

GGUF_END_NAMESPACE

#endif  // GGUF_LLAMA_HPARAMS_HPP
