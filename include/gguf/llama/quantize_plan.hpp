#ifndef GGUF_LLAMA_QUANTIZE_PLAN_HPP
#define GGUF_LLAMA_QUANTIZE_PLAN_HPP

/**
 * @file
 * llama.cpp's choice of a type for every tensor when `llama_model_quantize` (the `llama-quantize` tool)
 * makes a file of a given file type: which tensors it converts and to what, in what order it writes them,
 * and which metadata it writes. The decision only; the conversion is the kernels' business.
 */

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "gguf/format/file.hpp"
#include "gguf/format/ggml_types.hpp"
#include "gguf/format/metadata.hpp"
#include "gguf/format/tensor_info.hpp"
#include "gguf/llama/file_type.hpp"
#include "gguf/llama/hparams.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/** The options of `llama_model_quantize` (llama-quantize's flags) that change the tensor types. */
struct quantize_options {
  std::optional<ggml_type> output_tensor_type;    ///< `--output-tensor-type`: output.weight's type
  std::optional<ggml_type> token_embedding_type;  ///< `--token-embedding-type`: token_embd.weight's type
  /// An importance matrix will be given (`--imatrix`): some mixes pick other types with one, and the
  /// IQ1/IQ2/IQ3_XXS types and Q2_K_S's q2_K need one (llama.cpp also stops at a tensor that needs one
  /// and has no entry in it: the caller's check, see `tensor_plan::needs_imatrix`).
  bool has_imatrix = false;
  bool allow_requantize = false;  ///< `--allow-requantize`: convert tensors that are already quantized
  bool pure = false;              ///< `--pure`: every weight gets the mix's main type (fallbacks aside)
  bool quantize_output = true;    ///< false for `--leave-output-tensor`: output.weight keeps its type
};

/** What becomes of one tensor. */
struct tensor_plan {
  std::string_view name;            ///< the tensor's name (a view into the model)
  ggml_type from = ggml_type::f32;  ///< its type in the model
  ggml_type to = ggml_type::f32;    ///< its type in the quantized file
  bool quantize = false;            ///< `to != from`: the data is converted; else copied as is
  bool needs_imatrix = false;       ///< llama.cpp refuses to make this tensor without an importance matrix
  std::size_t index = 0;            ///< the tensor's position in the model's tensors (file order)
  std::size_t output_index = 0;     ///< its position in the quantized file (see `quantize_tensor_less`)
};

namespace detail {
inline std::uint64_t block_size_of(ggml_type t) noexcept { return traits(t).block_size; }
inline bool is_quantized_type(ggml_type t) noexcept { return traits(t).quantized; }

/// The block of "blk.N....", as llama.cpp reads it with sscanf("blk.%d."): nullopt for other names.
constexpr std::optional<std::int64_t> quant_block_of(std::string_view name) noexcept {
  if (!name.starts_with("blk.")) return std::nullopt;
  std::size_t i = 4;
  const bool neg = i < name.size() && name[i] == '-';
  if (i < name.size() && (name[i] == '-' || name[i] == '+')) ++i;
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return std::nullopt;
  std::int64_t v = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    v = std::min<std::int64_t>(v * 10 + (name[i] - '0'), std::int64_t{1} << 40);  // saturates: no overflow
  }
  return neg ? -v : v;
}

// The broad roles llama.cpp's rules tell tensors apart by (tensor_category there): found by name.
enum class quant_role : std::uint8_t {
  token_embd,
  attn_q,
  attn_v,
  attn_k,
  attn_qkv,
  attn_kv_b,
  attn_output,
  ffn_up,
  ffn_gate,
  ffn_down,
  output,
  other
};

constexpr quant_role quant_role_of(std::string_view n) noexcept {
  const auto has = [n](std::string_view s) { return n.find(s) != std::string_view::npos; };
  if (n == "output.weight") return quant_role::output;
  if (n == "token_embd.weight" || n == "per_layer_token_embd.weight") return quant_role::token_embd;
  if (has("attn_qkv.weight")) return quant_role::attn_qkv;
  if (has("attn_kv_b.weight")) return quant_role::attn_kv_b;
  if (has("attn_v.weight")) return quant_role::attn_v;
  if (has("attn_k.weight")) return quant_role::attn_k;
  if (has("attn_q.weight")) return quant_role::attn_q;
  if (has("attn_output.weight")) return quant_role::attn_output;
  if (has("ffn_up")) return quant_role::ffn_up;
  if (has("ffn_gate")) return quant_role::ffn_gate;
  if (has("ffn_down")) return quant_role::ffn_down;
  return quant_role::other;
}

// The V-like projections: the most sensitive to quantization, they share one counter.
constexpr bool is_attn_v_like(quant_role r) noexcept {
  return r == quant_role::attn_v || r == quant_role::attn_qkv || r == quant_role::attn_kv_b;
}

/// llama.cpp's llama_ftype ids, by name, for the rules below.
namespace ft {
inline constexpr std::uint32_t f32 = 0, q4_0 = 2, q5_0 = 8, q2_K = 10, q3_K_S = 11, q3_K_M = 12, q3_K_L = 13,
                               q4_K_S = 14, q4_K_M = 15, q5_K_M = 17, iq2_xxs = 19, iq2_xs = 20, q2_K_S = 21,
                               iq3_xs = 22, iq3_xxs = 23, iq1_s = 24, iq4_nl = 25, iq3_s = 26, iq3_m = 27, iq2_s = 28,
                               iq2_m = 29, iq4_xs = 30, iq1_m = 31, tq1_0 = 36, tq2_0 = 37, mxfp4_moe = 38, nvfp4 = 39,
                               q2_0 = 41;
}

/// Whether llama.cpp converts this tensor at all (tensor_allows_quantization): weights of 2 or more
/// dimensions, but not norms, routers, positions, convolutions and the other small or exact tensors.
constexpr bool quant_allows(const tensor_info& t, const quantize_options& opt) noexcept {
  // ggml_n_dims: trailing dimensions of 1 do not count, whatever n_dims the file stores.
  std::uint32_t dims = 1;
  for (std::uint32_t i = 1; i < max_dims; ++i) {
    if (t.ne[i] > 1) dims = i + 1;
  }
  if (dims < 2) return false;
  const std::string_view n = t.name;
  if (!n.ends_with("weight")) return false;
  if (!opt.quantize_output && n == "output.weight") return false;
  // llama.cpp compares with its architecture's names of these two; no architecture has another name for them
  if (n == "position_embd.weight" || n == "token_types.weight") return false;
  constexpr std::array<std::string_view, 35> kept{"_norm.weight",
                                                  "ffn_gate_inp.weight",
                                                  "ffn_gate_tid2eid.weight",
                                                  "altup",
                                                  "laurel",
                                                  "per_layer_model_proj",
                                                  "ssm_conv1d",
                                                  "shortconv.conv.weight",
                                                  "indexer.k_proj.weight",
                                                  "indexer.q_proj.weight",
                                                  "time_mix_first.weight",
                                                  "time_mix_w0.weight",
                                                  "time_mix_w1.weight",
                                                  "time_mix_w2.weight",
                                                  "time_mix_v0.weight",
                                                  "time_mix_v1.weight",
                                                  "time_mix_v2.weight",
                                                  "time_mix_a0.weight",
                                                  "time_mix_a1.weight",
                                                  "time_mix_a2.weight",
                                                  "time_mix_g1.weight",
                                                  "time_mix_g2.weight",
                                                  "time_mix_decay_w1.weight",
                                                  "time_mix_decay_w2.weight",
                                                  "time_mix_lerp_fused.weight",
                                                  "attn_rel_b.weight",
                                                  ".position_embd",
                                                  "sam.pos_embd",
                                                  "sam.neck.",
                                                  "sam.net_",
                                                  ".rel_pos",
                                                  ".patch_embd",
                                                  ".patch_merger",
                                                  "a.rvq.codebook",
                                                  "mm.a.code_embd"};
  return std::ranges::none_of(kept, [n](std::string_view k) { return n.find(k) != std::string_view::npos; });
}

/// The type of a file type's ordinary weights (llama_ftype_get_default_type): the main type, but IQ2_S
/// mixes iq2_xs with iq2_s. NVFP4 has none in the oracle's build (it refuses the file type; newer
/// sources give nvfp4).
constexpr std::optional<ggml_type> quant_default_type(const ftype_info& f) noexcept {
  if (find_ftype(f.id) == nullptr || f.id == ft::nvfp4) return std::nullopt;
  return f.id == ft::iq2_s ? ggml_type::iq2_xs : f.main_type;
}

/// The state llama.cpp carries from tensor to tensor (quantize_state_impl): counts and position counters.
struct quant_state {
  std::uint32_t ftype = 0;
  std::string_view arch;
  std::int64_t n_expert = 0;
  std::int64_t n_gqa = 0;
  bool is_70b = false;
  bool tied_embeddings = true;
  std::int64_t n_attention_wv = 0, n_layer = 0;
  std::int64_t i_attention_wv = 0, i_ffn_down = 0, i_ffn_gate = 0, i_ffn_up = 0;
};

constexpr bool use_more_bits(std::int64_t i, std::int64_t n) noexcept {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/// The layer a feed-forward tensor belongs to (llama.cpp's layer_info): its counter, or with experts the
/// number in its name, since experts may be stored out of order.
inline result<std::int64_t> quant_ffn_layer(const quant_state& s, std::int64_t counter,
                                            std::string_view name) noexcept {
  if (s.n_expert <= 1) return counter;
  const std::optional<std::int64_t> il = quant_block_of(name);
  if (!il) return error{errc::bad_hparams, "an expert model's feed-forward tensor outside the blocks"}.about(name);
  if (*il < 0 || *il >= s.n_layer) {
    return error{errc::bad_hparams, "a feed-forward tensor's block is not below block_count"}.about(name);
  }
  return *il;
}

/// The mix's rules (llama_tensor_get_type_impl): `t` is the default type, the result before fallbacks.
inline result<ggml_type> quant_mix_type(quant_state& s, ggml_type t, const tensor_info& info, quant_role role,
                                        const quantize_options& opt) noexcept {
  using enum ggml_type;
  const std::uint32_t f = s.ftype;
  const auto any = [f](std::initializer_list<std::uint32_t> l) { return std::find(l.begin(), l.end(), f) != l.end(); };
  const bool falcon = s.arch == "falcon";
  if (role == quant_role::output || (s.tied_embeddings && role == quant_role::token_embd)) {
    // a tied embedding is also the output: it gets the output's type
    if (opt.output_tensor_type) return *opt.output_tensor_type;
    if (f == ft::mxfp4_moe) return q8_0;
    if (falcon || info.ne[0] % block_size_of(t) != 0) return q8_0;
    if (any({ft::iq2_xxs, ft::iq2_xs, ft::iq3_xxs, ft::iq1_s, ft::iq2_s, ft::iq2_m, ft::iq1_m})) return q5_K;
    return t != q8_0 ? q6_K : t;
  }
  if (f == ft::mxfp4_moe) {  // experts (3-D) in mxfp4, everything else q8_0
    const bool expert_role = role == quant_role::ffn_up || role == quant_role::ffn_gate || role == quant_role::ffn_down;
    return info.ne[2] > 1 && (s.arch != "bailingmoe3" || expert_role) ? mxfp4 : q8_0;
  }
  if (role == quant_role::token_embd) {
    if (opt.token_embedding_type) return *opt.token_embedding_type;
    if (any({ft::iq2_xxs, ft::iq2_xs, ft::iq1_s, ft::iq1_m})) return q2_K;
    if (any({ft::iq2_s, ft::iq2_m, ft::iq3_xxs})) return iq3_s;
    if (any({ft::tq1_0, ft::tq2_0, ft::q2_0})) return q4_K;
    return t;
  }
  if (any({ft::iq2_xxs, ft::iq2_xs, ft::iq1_s, ft::iq2_s, ft::iq2_m, ft::iq1_m})) {
    const bool two_s = f == ft::iq2_s || f == ft::iq2_m;
    if (is_attn_v_like(role)) {
      ++s.i_attention_wv;
      if (s.n_gqa >= 4 || s.n_expert >= 4) return q4_K;
      return two_s ? iq3_s : q2_K;
    }
    if (s.n_expert == 8 && role == quant_role::attn_k) return q4_K;
    if (role == quant_role::ffn_down) {
      // the first eighth of the ffn_down tensors, counted in file order, whatever their layers
      const bool first = s.i_ffn_down < s.n_layer / 8;
      ++s.i_ffn_down;
      return first ? (two_s ? iq3_s : q2_K) : t;
    }
    if (role == quant_role::attn_output) {
      if (s.n_expert == 8) return q5_K;
      if (f == ft::iq1_s || f == ft::iq1_m) return iq2_xxs;
      if (two_s) return iq3_s;
    }
    return t;
  }
  if (is_attn_v_like(role)) {
    const std::int64_t i = s.i_attention_wv++;
    const bool gqa4 = s.n_gqa >= 4;
    // the first rule that matches decides, in llama.cpp's order
    const auto mix = [&]() noexcept -> ggml_type {
      if (f == ft::q2_K) return gqa4 ? q4_K : q3_K;
      if (f == ft::q2_K_S && gqa4) return q4_K;
      if (f == ft::iq3_xxs) return gqa4 ? q4_K : !opt.has_imatrix ? iq3_s : iq3_xxs;
      if ((f == ft::iq3_xs || f == ft::iq3_s) && gqa4) return q4_K;
      if (f == ft::iq3_m) return q4_K;
      if (f == ft::q3_K_M) return i < 2 ? q5_K : q4_K;
      if (f == ft::q3_K_L) return q5_K;
      if ((f == ft::iq4_nl || f == ft::iq4_xs) && gqa4) return q5_K;
      if ((f == ft::q4_K_M || f == ft::q5_K_M) && use_more_bits(i, s.n_attention_wv)) return q6_K;
      if (f == ft::q4_K_S && i < 4) return q5_K;
      return t;
    };
    t = mix();
    // 70B shares each V among 8 heads: V is small, more bits cost little
    if (s.is_70b && (t == q3_K || t == q4_K)) t = q5_K;
    if (s.n_expert == 8) t = q8_0;
    return t;
  }
  if (role == quant_role::attn_k) {
    if (s.n_expert == 8) return q8_0;
    if (f == ft::iq3_xs) return iq3_xxs;
    if (f == ft::iq3_xxs) return iq2_s;
    return t;
  }
  if (role == quant_role::attn_q) {
    if (f == ft::iq3_xs) return iq3_xxs;
    if (f == ft::iq3_xxs) return iq2_s;
    return t;
  }
  if (role == quant_role::ffn_down) {
    const result<std::int64_t> il = quant_ffn_layer(s, s.i_ffn_down, info.name);
    if (!il) return il.error();
    ++s.i_ffn_down;
    const std::int64_t i = *il, n = s.n_layer;
    // the first rule that matches decides, in llama.cpp's order
    if (f == ft::q2_K) return q3_K;
    if (f == ft::q2_K_S) return i < n / 8 ? q4_K : t;
    if (f == ft::iq3_xxs && !opt.has_imatrix) return i < n / 8 ? q4_K : q3_K;
    if (f == ft::q3_K_M) return i < n / 16 ? q5_K : !falcon || use_more_bits(i, n) ? q4_K : q3_K;
    if (f == ft::iq3_m && (i < n / 8 || (s.n_expert == 8 && use_more_bits(i, n)))) return q4_K;
    if (f == ft::q3_K_L) return falcon ? q4_K : q5_K;
    if (f == ft::q4_K_M && falcon) return i < n / 16 ? q6_K : use_more_bits(i, n) ? q5_K : q4_K;
    if (f == ft::q4_K_M) return use_more_bits(i, n) ? q6_K : t;
    if (i < n / 8 && (f == ft::iq4_nl || f == ft::iq4_xs) && !opt.has_imatrix) return q5_K;
    if (f == ft::q5_K_M && use_more_bits(i, n)) return q6_K;
    if (f == ft::q4_K_S && !falcon && i < n / 8) return q5_K;
    // only with an imatrix: without one the result stays what it always was
    if ((f == ft::q4_0 || f == ft::q5_0) && opt.has_imatrix && i < n / 8) return f == ft::q4_0 ? q4_1 : q5_1;
    return t;
  }
  if (role == quant_role::attn_output) {
    if (falcon) return f == ft::q3_K_L ? q4_K : t;
    if (s.n_expert == 8) {
      return any({ft::q2_K, ft::iq3_xs, ft::iq3_xxs, ft::q3_K_S, ft::q3_K_M, ft::iq4_nl, ft::q4_K_S, ft::q4_K_M,
                  ft::iq3_s, ft::iq3_m, ft::iq4_xs})
                 ? q5_K
                 : t;
    }
    if (f == ft::q2_K) return q3_K;
    if (f == ft::iq3_xxs) return iq3_s;
    if (f == ft::q3_K_M || f == ft::iq3_m) return q4_K;
    if (f == ft::q3_K_L) return q5_K;
    return t;
  }
  if (role == quant_role::ffn_gate || role == quant_role::ffn_up) {
    std::int64_t& counter = role == quant_role::ffn_gate ? s.i_ffn_gate : s.i_ffn_up;
    const result<std::int64_t> il = quant_ffn_layer(s, counter, info.name);
    if (!il) return il.error();
    ++counter;
    if (f == ft::iq3_xs && *il >= s.n_layer / 8 && *il < 7 * s.n_layer / 8) return iq3_xxs;
  }
  return t;
}

/// A type whose blocks do not fit the row takes a near one with 32-element blocks, else f16
/// (tensor_type_fallback). The stored llama.cpp source throws for every type without a listed fallback;
/// the oracle's build does so for q1_0 only, and takes f16 for q8_0, q4_0, iq4_nl, mxfp4, ...
inline result<ggml_type> quant_fallback(const tensor_info& info, ggml_type t) noexcept {
  using enum ggml_type;
  const std::uint64_t n = info.ne[0];
  if (n % block_size_of(t) == 0) return t;
  ggml_type r = f16;
  switch (t) {
    case iq1_s:
    case iq1_m:
    case iq2_xxs:
    case iq2_xs:
    case iq2_s:
    case iq3_xxs:
    case iq3_s:
    case iq4_xs: r = iq4_nl; break;
    case q2_0:
    case q2_K:
    case q3_K:
    case tq1_0:
    case tq2_0: r = q4_0; break;
    case q4_K: r = q5_0; break;
    case q5_K: r = q5_1; break;
    case q6_K: r = q8_0; break;
    case q1_0: return error{errc::bad_row_size, "no type to fall back to for a row this long"}.about(info.name);
    default: return f16;
  }
  return n % block_size_of(r) == 0 ? r : f16;
}

/// The types that llama.cpp does not make without an importance matrix (tensor_requires_imatrix).
constexpr bool quant_needs_imatrix(std::string_view name, ggml_type t, std::uint32_t ftype) noexcept {
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight" || name == "output.weight") return false;
  switch (t) {
    case ggml_type::iq3_xxs:
    case ggml_type::iq2_xxs:
    case ggml_type::iq2_xs:
    case ggml_type::iq2_s:
    case ggml_type::iq1_m:
    case ggml_type::iq1_s: return true;
    case ggml_type::q2_K: return ftype == ft::q2_K_S;  // k-quants need none, but Q2_K_S's q2_K does
    default: return false;
  }
}
}  // namespace detail

/**
 * The order in which llama.cpp writes (and decides) the tensors of a quantized file: by block number
 * ("blk.N." prefix; tensors outside the blocks first), then by name, bytewise.
 */
constexpr bool quantize_tensor_less(std::string_view a, std::string_view b) noexcept {
  const std::int64_t la = detail::quant_block_of(a).value_or(-1), lb = detail::quant_block_of(b).value_or(-1);
  return la != lb ? la < lb : a < b;
}

/**
 * Decides, as llama.cpp's `llama_model_quantize` does, the type of every tensor of a model in a file of
 * type `ftype`: which tensors it converts and to what (the mix's rules by tensor role, layer, experts and
 * grouped-query heads; the fallbacks for rows that the type's blocks do not divide; the options).
 *
 * Allocates nothing: the caller owns `plan`, one entry per tensor
 * (`std::vector<gguf::tensor_plan> plan(f.tensors().size())`). On return it holds the tensors in the
 * model's order (`plan[i]` is `tensors[i]`), each with its place in the quantized file.
 *
 * @param md      the model's metadata (a split model's first shard's)
 * @param tensors the model's tensors, every shard's, in order
 * @param ftype   the file type to make (`find_ftype("Q4_K_M")`)
 * @param opt     the options
 * @param plan    `tensors.size()` entries, all overwritten
 * @return nothing, or why llama.cpp would refuse, about the first tensor (in the quantized file's order) it
 *         would stop at (the plan is then complete all the same): `not_found` "needs an importance matrix"
 *         for a type that needs one when `opt.has_imatrix` is false; `type_mismatch` for a quantized
 *         tensor to convert without `allow_requantize`; `bad_row_size` for a q1_0 tensor whose rows
 *         are not a whole number of blocks;
 *         `bad_hparams` for an expert model's feed-forward tensor outside its blocks; `size_mismatch` for
 *         a `plan` of the wrong size, `out_of_range` for a file type llama.cpp cannot make; the errors of
 *         `read_hparams`
 */
inline result<void> plan_quantization(const metadata_table& md, std::span<const tensor_info> tensors,
                                      const ftype_info& ftype, const quantize_options& opt,
                                      std::span<tensor_plan> plan) noexcept {
  if (plan.size() != tensors.size()) return error{errc::size_mismatch, "the plan needs one entry per tensor"};
  const std::optional<ggml_type> main = detail::quant_default_type(ftype);
  if (!main) return error{errc::out_of_range, "not a file type llama.cpp makes"};
  const result<hparams> h = read_hparams(md);
  if (!h) return h.error();

  detail::quant_state s;
  s.ftype = ftype.id;
  s.arch = h->architecture;
  s.n_expert = h->expert_count.value_or(0);
  s.n_layer = h->block_count.value_or(0);
  const std::uint32_t heads = h->block_count.value_or(0) ? h->n_head(0) : 0;
  const std::uint32_t kv_heads = h->block_count.value_or(0) ? h->n_head_kv(0) : 0;
  s.n_gqa = kv_heads ? heads / kv_heads : 0;
  // llama.cpp's LLM_TYPE_70B: llama with 80 blocks and fewer KV heads than heads (not the 8-expert models)
  s.is_70b = s.arch == "llama" && s.n_expert != 8 && s.n_layer == 80 && heads != kv_heads;

  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const tensor_info& t = tensors[i];
    plan[i] = tensor_plan{t.name, t.type, t.type, false, false, i, 0};
    if (t.name == "output.weight") s.tied_embeddings = false;
    if (detail::is_attn_v_like(detail::quant_role_of(t.name))) ++s.n_attention_wv;
  }
  // the counters advance in the order llama.cpp visits the tensors: its output order
  std::sort(plan.begin(), plan.end(),
            [](const tensor_plan& a, const tensor_plan& b) { return quantize_tensor_less(a.name, b.name); });
  result<void> stop;     // the first error of llama.cpp's first pass (types, imatrix)
  result<void> requant;  // the first of its second pass (conversions)
  for (std::size_t k = 0; k < plan.size(); ++k) {
    tensor_plan& p = plan[k];
    p.output_index = k;
    const tensor_info& t = tensors[p.index];
    if (!detail::quant_allows(t, opt)) continue;
    const detail::quant_role role = detail::quant_role_of(t.name);
    ggml_type to = *main;
    if (opt.token_embedding_type && role == detail::quant_role::token_embd) {
      to = *opt.token_embedding_type;
    } else if (opt.output_tensor_type && role == detail::quant_role::output) {
      to = *opt.output_tensor_type;
    } else if (detail::is_quantized_type(*main)) {
      if (!opt.pure) {
        const result<ggml_type> mixed = detail::quant_mix_type(s, to, t, role, opt);
        if (!mixed) {
          if (stop) stop = mixed.error();
          continue;
        }
        to = *mixed;
      }
      const result<ggml_type> fitted = detail::quant_fallback(t, to);
      if (!fitted) {
        if (stop) stop = fitted.error();
        continue;
      }
      to = *fitted;
    }
    p.to = to;
    p.quantize = to != p.from;
    p.needs_imatrix = detail::quant_needs_imatrix(t.name, to, ftype.id);
    if (p.needs_imatrix && !opt.has_imatrix && stop) {
      stop = error{errc::not_found, "this type needs an importance matrix"}.about(t.name);
    }
    if (p.quantize && detail::is_quantized_type(p.from) && !opt.allow_requantize && requant) {
      requant = error{errc::type_mismatch, "requantizing a quantized tensor needs allow_requantize"}.about(t.name);
    }
  }
  std::sort(plan.begin(), plan.end(), [](const tensor_plan& a, const tensor_plan& b) { return a.index < b.index; });
  if (!stop) return stop;
  return requant;
}

/**
 * `plan_quantization` of a parsed file.
 * @param model the file (one whole model)
 * @param ftype the file type to make
 * @param opt   the options
 * @param plan  `model.tensors().size()` entries
 * @return as `plan_quantization` above
 */
inline result<void> plan_quantization(const file& model, const ftype_info& ftype, const quantize_options& opt,
                                      std::span<tensor_plan> plan) noexcept {
  return plan_quantization(model.metadata(), model.tensors(), ftype, opt, plan);
}

/// The version of the quantized formats llama.cpp writes as `general.quantization_version` (GGML_QNT_VERSION).
inline constexpr std::uint32_t quantization_version = 2;

/**
 * Whether llama.cpp's quantized file keeps an input key: every key but the two it writes anew and the
 * split keys (it writes one file). The kept keys stay in their order, values unchanged.
 *
 * `general.alignment` is kept too, yet llama.cpp lays the tensors out 32 bytes apart whatever it says: from
 * an input with `general.alignment` = 64 and a tensor of 32 bytes, the oracle's llama.cpp writes a file
 * that ggml then refuses ("tensor ... has offset 32, expected 64"). Matching llama.cpp byte for byte means
 * doing the same; a writer that wants a readable file drops the key instead.
 */
constexpr bool quantize_keeps_key(std::string_view key) noexcept {
  return key != "general.quantization_version" && key != "general.file_type" && key != "split.no" &&
         key != "split.count" && key != "split.tensors.count";
}

/** A uint32 key that llama.cpp appends to the kept keys of a quantized file. */
struct quantize_added_key {
  std::string_view key;  ///< the key
  std::uint32_t value;   ///< its value (a uint32)
};

/**
 * The keys llama.cpp appends, in order, after the kept ones (`quantize_keeps_key`):
 * `general.quantization_version` = 2 and `general.file_type` = the file type's id.
 */
constexpr std::array<quantize_added_key, 2> quantize_added_keys(const ftype_info& ftype) noexcept {
  return {{{"general.quantization_version", quantization_version}, {"general.file_type", ftype.id}}};
}

GGUF_END_NAMESPACE

#endif  // GGUF_LLAMA_QUANTIZE_PLAN_HPP
