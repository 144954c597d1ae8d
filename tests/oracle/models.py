#!/usr/bin/env python3
"""Tiny random-weight models that llama.cpp loads, written with the shared oracle's pure-Python Writer:
what the oracle-backed checks (writer, split, facts, quantize) run llama.cpp on.

usage: models.py SHARED_DIR OUT.gguf [ARCH] [--layers N] [--embd N] [--vocab N] [--type f32|f16|bf16]
       ARCH: llama (default), qwen2, qwen3, gemma2, phi3, qwen3moe, deepseek2, mamba, gemma3,
             falcon, gpt2, command-r (arch_list() names them; every one loads and decodes in the
             oracle's llama.cpp)
       --layers: 2 by default, 6 for gemma3 (its 5-of-6 sliding-window pattern)
Standard library and the oracle only; deterministic for the same arguments.
"""
import argparse
import math
import os
import random
import struct
import sys

# the llama-style transformers (_llama_like), then one builder each for the others
ARCHS = ["llama", "qwen2", "qwen3", "gemma2", "phi3", "qwen3moe", "gemma3", "command-r",
         "deepseek2", "mamba", "falcon", "gpt2"]


def arch_list():
    """The architectures tiny_model builds and the oracle's llama.cpp loads and decodes."""
    return list(ARCHS)


def _oracle(shared):
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import ggml_oracle
    return ggml_oracle


def _vocab(n_vocab, specials=()):
    """an SPM vocab: <unk> <s> </s>, the 256 byte tokens, U+2581 "tN" words; specials (control
    tokens) take the last ids"""
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(256)]
    tokens += ["\u2581t%d" % i for i in range(n_vocab - len(tokens))]
    tokens = tokens[:n_vocab]
    types = [2, 3, 3] + [6] * 256 + [1] * (n_vocab - 259)
    types = types[:n_vocab]
    if specials:
        tokens[-len(specials):] = specials
        types[-len(specials):] = [3] * len(specials)
    return tokens, [-float(i) for i in range(n_vocab)], types


class _Model:
    """One file being built: its metadata, its tensors drawn from one seeded RNG in call order."""

    def __init__(self, o, arch, n_layer, n_embd, n_vocab, dtype, seed):
        self.arch, self.n_layer, self.n_embd, self.n_vocab, self.dtype = arch, n_layer, n_embd, n_vocab, dtype
        self.rng = random.Random(seed)
        self.w = o.Writer(version=3)

    def kv(self, key, typ, value):
        """a key of the architecture: kv("block_count", ...) writes ARCH.block_count"""
        self.w.kvs.append(("%s.%s" % (self.arch, key), typ, value))

    def header(self, hparams, specials=()):
        """general.*, the architecture's (key, type, value) hparams, the file type, the tokenizer."""
        tokens, scores, types = _vocab(self.n_vocab, specials)
        self.w.kvs += [("general.architecture", "string", self.arch),
                       ("general.name", "string", "tiny %s" % self.arch)]
        for k, t, v in hparams:
            self.kv(k, t, v)
        self.w.kvs += [
            ("general.file_type", "uint32", {"f32": 0, "f16": 1, "bf16": 32}[self.dtype]),
            ("tokenizer.ggml.model", "string", "llama"),
            ("tokenizer.ggml.tokens", "array", ("string", tokens)),
            ("tokenizer.ggml.scores", "array", ("float32", scores)),
            ("tokenizer.ggml.token_type", "array", ("int32", types)),
            ("tokenizer.ggml.bos_token_id", "uint32", 1),
            ("tokenizer.ggml.eos_token_id", "uint32", 2),
        ]

    def tensor(self, name, ne, scale=None, f32=False):
        """a weight, N(0, scale) (1/sqrt(ne0) by default); f16 when asked, except 1-D ones and f32 ones"""
        n = 1
        for d in ne:
            n *= d
        s = scale if scale is not None else 1.0 / math.sqrt(ne[0])
        vals = [self.rng.gauss(0.0, s) for _ in range(n)]
        if self.dtype == "f16" and len(ne) > 1 and not f32:
            self.w.tensors.append((name, 1, ne, struct.pack("<%de" % n, *vals)))
        elif self.dtype == "bf16" and len(ne) > 1 and not f32:  # the top half of the f32, rounded to even
            bits = struct.unpack("<%dI" % n, struct.pack("<%df" % n, *vals))
            half = [((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF for b in bits]
            self.w.tensors.append((name, 30, ne, struct.pack("<%dH" % n, *half)))
        else:
            self.w.tensors.append((name, 0, ne, struct.pack("<%df" % n, *vals)))

    def norm(self, name, ne):
        """a norm's weight, about 1 (f32)"""
        self.w.tensors.append((name, 0, ne, struct.pack("<%df" % ne[0], *[1.0 + self.rng.gauss(0, 0.01) for _ in range(ne[0])])))

    def bias(self, name, d):
        """a bias, N(0, 0.02) (f32)"""
        self.w.tensors.append((name, 0, [d], struct.pack("<%df" % d, *[self.rng.gauss(0, 0.02) for _ in range(d)])))

    def layer_norm(self, name, d):
        """a LayerNorm's weight and bias"""
        self.norm(name + ".weight", [d])
        self.bias(name + ".bias", d)


def _llama_like(m):
    """llama and its kin: RMS norms, q/k/v/o attention with GQA (4 heads, 2 KV heads), a gated FFN.
    qwen2: q/k/v biases; qwen3: q/k norms; gemma2: post norms, softcaps, tied output;
    phi3: fused qkv and gate+up, its special tokens; qwen3moe: qwen3 with 4 experts, 2 used;
    gemma3: gemma2's norms, q/k norms, 5 sliding-window layers in 6;
    command-r: no FFN norm (parallel), LayerNorm, tied output."""
    a, n_layer, n_embd, n_vocab = m.arch, m.n_layer, m.n_embd, m.n_vocab
    n_head, n_head_kv = 4, 2
    head_dim = n_embd // n_head
    n_ff = 2 * n_embd
    n_expert, n_ff_exp = 4, n_embd // 2
    m.header([
        ("block_count", "uint32", n_layer),
        ("context_length", "uint32", 2048),
        ("embedding_length", "uint32", n_embd),
        ("feed_forward_length", "uint32", n_ff),
        ("attention.head_count", "uint32", n_head),
        ("attention.head_count_kv", "uint32", n_head_kv),
        ("rope.freq_base", "float32", 10000.0),
        ("attention.layer_norm_rms_epsilon" if a != "command-r" else "attention.layer_norm_epsilon", "float32", 1e-5),
    ], ["<|endoftext|>", "<|end|>"] if a == "phi3" else ())  # llama.cpp looks these up for a "phi3" name
    if a in ("gemma2",):
        m.kv("attention.key_length", "uint32", head_dim)
        m.kv("attention.value_length", "uint32", head_dim)
        m.kv("attention.sliding_window", "uint32", 128)
        m.kv("attn_logit_softcapping", "float32", 50.0)
        m.kv("final_logit_softcapping", "float32", 30.0)
    if a in ("qwen3", "qwen3moe"):
        m.kv("attention.key_length", "uint32", head_dim)
        m.kv("attention.value_length", "uint32", head_dim)
    if a == "qwen3moe":
        m.kv("expert_count", "uint32", n_expert)
        m.kv("expert_used_count", "uint32", 2)
        m.kv("expert_feed_forward_length", "uint32", n_ff_exp)
    if a == "gemma3":  # 8 < the 64-token test context, so the window masks something
        m.kv("attention.key_length", "uint32", head_dim)
        m.kv("attention.value_length", "uint32", head_dim)
        m.kv("attention.sliding_window", "uint32", 8)
        m.kv("rope.freq_base_swa", "float32", 10000.0)
    if a == "command-r":
        m.kv("logit_scale", "float32", 0.0625)

    tensor, norm = m.tensor, m.norm
    kv_dim = head_dim * n_head_kv
    tensor("token_embd.weight", [n_embd, n_vocab], 0.02)
    for i in range(n_layer):
        p = "blk.%d." % i
        norm(p + "attn_norm.weight", [n_embd])
        if a == "phi3":
            tensor(p + "attn_qkv.weight", [n_embd, n_embd + 2 * kv_dim])
        else:
            tensor(p + "attn_q.weight", [n_embd, n_embd])
            tensor(p + "attn_k.weight", [n_embd, kv_dim])
            tensor(p + "attn_v.weight", [n_embd, kv_dim])
        if a == "qwen2":
            m.bias(p + "attn_q.bias", n_embd)
            m.bias(p + "attn_k.bias", kv_dim)
            m.bias(p + "attn_v.bias", kv_dim)
        if a in ("qwen3", "qwen3moe", "gemma3"):
            norm(p + "attn_q_norm.weight", [head_dim])
            norm(p + "attn_k_norm.weight", [head_dim])
        tensor(p + "attn_output.weight", [n_embd, n_embd])
        if a in ("gemma2", "gemma3"):
            norm(p + "post_attention_norm.weight", [n_embd])
        if a != "command-r":
            norm(p + "ffn_norm.weight", [n_embd])
        if a == "phi3":
            tensor(p + "ffn_up.weight", [n_embd, 2 * n_ff])
            tensor(p + "ffn_down.weight", [n_ff, n_embd])
        elif a == "qwen3moe":
            tensor(p + "ffn_gate_inp.weight", [n_embd, n_expert])
            tensor(p + "ffn_gate_exps.weight", [n_embd, n_ff_exp, n_expert])
            tensor(p + "ffn_up_exps.weight", [n_embd, n_ff_exp, n_expert])
            tensor(p + "ffn_down_exps.weight", [n_ff_exp, n_embd, n_expert])
        else:
            tensor(p + "ffn_gate.weight", [n_embd, n_ff])
            tensor(p + "ffn_up.weight", [n_embd, n_ff])
            tensor(p + "ffn_down.weight", [n_ff, n_embd])
        if a in ("gemma2", "gemma3"):
            norm(p + "post_ffw_norm.weight", [n_embd])
    norm("output_norm.weight", [n_embd])
    if a not in ("gemma2", "gemma3", "command-r"):  # these tie the output to the embedding
        tensor("output.weight", [n_embd, n_vocab], 0.02)


def _deepseek2(m):
    """DeepSeek-V2/V3 multi-head latent attention in the layout with attn_k_b/attn_v_b (MLA
    absorbed: one KV head of kv_lora_rank + rope dims), no q LoRA (attn_q direct), one leading
    dense block, then MoE blocks of 4 routed experts (2 used) and 1 shared expert."""
    n_layer, n_embd, n_vocab = m.n_layer, m.n_embd, m.n_vocab
    n_head = 4
    kv_lora, rope_dim, nope_dim, v_dim = 64, 16, 32, 32
    n_ff, n_expert, n_ff_exp = 2 * n_embd, 4, n_embd // 2
    m.header([
        ("block_count", "uint32", n_layer),
        ("context_length", "uint32", 2048),
        ("embedding_length", "uint32", n_embd),
        ("feed_forward_length", "uint32", n_ff),
        ("attention.head_count", "uint32", n_head),
        ("attention.head_count_kv", "uint32", 1),
        ("rope.freq_base", "float32", 10000.0),
        ("attention.layer_norm_rms_epsilon", "float32", 1e-5),
        ("attention.key_length", "uint32", kv_lora + rope_dim),
        ("attention.value_length", "uint32", kv_lora),
        ("attention.key_length_mla", "uint32", nope_dim + rope_dim),
        ("attention.value_length_mla", "uint32", v_dim),
        ("attention.q_lora_rank", "uint32", 0),
        ("attention.kv_lora_rank", "uint32", kv_lora),
        ("rope.dimension_count", "uint32", rope_dim),
        ("leading_dense_block_count", "uint32", 1),
        ("expert_count", "uint32", n_expert),
        ("expert_used_count", "uint32", 2),
        ("expert_shared_count", "uint32", 1),
        ("expert_feed_forward_length", "uint32", n_ff_exp),
        ("expert_weights_scale", "float32", 1.0),
        ("expert_weights_norm", "bool", True),
        ("expert_gating_func", "uint32", 2),  # sigmoid, as V3
    ])
    tensor, norm = m.tensor, m.norm
    tensor("token_embd.weight", [n_embd, n_vocab], 0.02)
    for i in range(n_layer):
        p = "blk.%d." % i
        norm(p + "attn_norm.weight", [n_embd])
        tensor(p + "attn_q.weight", [n_embd, n_head * (nope_dim + rope_dim)])
        tensor(p + "attn_kv_a_mqa.weight", [n_embd, kv_lora + rope_dim])
        norm(p + "attn_kv_a_norm.weight", [kv_lora])
        tensor(p + "attn_k_b.weight", [nope_dim, kv_lora, n_head])
        tensor(p + "attn_v_b.weight", [kv_lora, v_dim, n_head])
        tensor(p + "attn_output.weight", [n_head * v_dim, n_embd])
        norm(p + "ffn_norm.weight", [n_embd])
        if i < 1:
            tensor(p + "ffn_gate.weight", [n_embd, n_ff])
            tensor(p + "ffn_up.weight", [n_embd, n_ff])
            tensor(p + "ffn_down.weight", [n_ff, n_embd])
        else:
            tensor(p + "ffn_gate_inp.weight", [n_embd, n_expert])
            m.bias(p + "exp_probs_b.bias", n_expert)
            tensor(p + "ffn_gate_exps.weight", [n_embd, n_ff_exp, n_expert])
            tensor(p + "ffn_up_exps.weight", [n_embd, n_ff_exp, n_expert])
            tensor(p + "ffn_down_exps.weight", [n_ff_exp, n_embd, n_expert])
            tensor(p + "ffn_gate_shexp.weight", [n_embd, n_ff_exp])
            tensor(p + "ffn_up_shexp.weight", [n_embd, n_ff_exp])
            tensor(p + "ffn_down_shexp.weight", [n_ff_exp, n_embd])
    norm("output_norm.weight", [n_embd])
    tensor("output.weight", [n_embd, n_vocab], 0.02)


def _mamba(m):
    """Mamba (1): no attention; a selective state-space block per layer."""
    n_layer, n_embd, n_vocab = m.n_layer, m.n_embd, m.n_vocab
    d_conv, d_inner, d_state = 4, 2 * n_embd, 16
    dt_rank = (n_embd + 15) // 16
    m.header([
        ("block_count", "uint32", n_layer),
        ("context_length", "uint32", 2048),
        ("embedding_length", "uint32", n_embd),
        ("feed_forward_length", "uint32", 0),
        ("attention.head_count", "uint32", 0),
        ("attention.layer_norm_rms_epsilon", "float32", 1e-5),
        ("ssm.conv_kernel", "uint32", d_conv),
        ("ssm.inner_size", "uint32", d_inner),
        ("ssm.state_size", "uint32", d_state),
        ("ssm.time_step_rank", "uint32", dt_rank),
    ])
    tensor, norm = m.tensor, m.norm
    tensor("token_embd.weight", [n_embd, n_vocab], 0.02)
    for i in range(n_layer):
        p = "blk.%d." % i
        norm(p + "attn_norm.weight", [n_embd])
        tensor(p + "ssm_in.weight", [n_embd, 2 * d_inner])
        tensor(p + "ssm_conv1d.weight", [d_conv, d_inner], f32=True)  # ggml's ssm_conv takes f32 only
        m.bias(p + "ssm_conv1d.bias", d_inner)
        tensor(p + "ssm_x.weight", [d_inner, dt_rank + 2 * d_state])
        tensor(p + "ssm_dt.weight", [dt_rank, d_inner])
        m.bias(p + "ssm_dt.bias", d_inner)
        # A = -exp(A_log) with A_log = log(1..d_state), as Mamba initialises it
        a = [-float(s + 1) for _ in range(d_inner) for s in range(d_state)]
        m.w.tensors.append((p + "ssm_a", 0, [d_state, d_inner], struct.pack("<%df" % len(a), *a)))
        m.norm(p + "ssm_d", [d_inner])
        tensor(p + "ssm_out.weight", [d_inner, n_embd])
    norm("output_norm.weight", [n_embd])
    tensor("output.weight", [n_embd, n_vocab], 0.02)


def _falcon(m):
    """Falcon (7B layout): LayerNorm, fused qkv with one KV head, parallel attention and an ungated FFN."""
    n_layer, n_embd, n_vocab = m.n_layer, m.n_embd, m.n_vocab
    n_head, n_head_kv = 4, 1
    head_dim = n_embd // n_head
    n_ff = 4 * n_embd
    m.header([
        ("block_count", "uint32", n_layer),
        ("context_length", "uint32", 2048),
        ("embedding_length", "uint32", n_embd),
        ("feed_forward_length", "uint32", n_ff),
        ("attention.head_count", "uint32", n_head),
        ("attention.head_count_kv", "uint32", n_head_kv),
        ("attention.layer_norm_epsilon", "float32", 1e-5),
    ])
    tensor = m.tensor
    tensor("token_embd.weight", [n_embd, n_vocab], 0.02)
    for i in range(n_layer):
        p = "blk.%d." % i
        m.layer_norm(p + "attn_norm", n_embd)
        tensor(p + "attn_qkv.weight", [n_embd, n_embd + 2 * head_dim * n_head_kv])
        tensor(p + "attn_output.weight", [n_embd, n_embd])
        tensor(p + "ffn_up.weight", [n_embd, n_ff])
        tensor(p + "ffn_down.weight", [n_ff, n_embd])
    m.layer_norm("output_norm", n_embd)
    tensor("output.weight", [n_embd, n_vocab], 0.02)


def _gpt2(m):
    """GPT-2: learned positions, LayerNorm, fused qkv, biases everywhere, an ungated FFN."""
    n_layer, n_embd, n_vocab = m.n_layer, m.n_embd, m.n_vocab
    n_head, n_ctx = 4, 256  # a short context keeps position_embd small
    n_ff = 4 * n_embd
    m.header([
        ("block_count", "uint32", n_layer),
        ("context_length", "uint32", n_ctx),
        ("embedding_length", "uint32", n_embd),
        ("feed_forward_length", "uint32", n_ff),
        ("attention.head_count", "uint32", n_head),
        ("attention.layer_norm_epsilon", "float32", 1e-5),
    ])
    tensor = m.tensor
    tensor("token_embd.weight", [n_embd, n_vocab], 0.02)
    tensor("position_embd.weight", [n_embd, n_ctx], 0.01)
    for i in range(n_layer):
        p = "blk.%d." % i
        m.layer_norm(p + "attn_norm", n_embd)
        tensor(p + "attn_qkv.weight", [n_embd, 3 * n_embd])
        m.bias(p + "attn_qkv.bias", 3 * n_embd)
        tensor(p + "attn_output.weight", [n_embd, n_embd])
        m.bias(p + "attn_output.bias", n_embd)
        m.layer_norm(p + "ffn_norm", n_embd)
        tensor(p + "ffn_up.weight", [n_embd, n_ff])
        m.bias(p + "ffn_up.bias", n_ff)
        tensor(p + "ffn_down.weight", [n_ff, n_embd])
        m.bias(p + "ffn_down.bias", n_embd)
    m.layer_norm("output_norm", n_embd)
    tensor("output.weight", [n_embd, n_vocab], 0.02)


_BUILDERS = {"deepseek2": _deepseek2, "mamba": _mamba, "falcon": _falcon, "gpt2": _gpt2}
_DEFAULT_LAYERS = {"gemma3": 6}


def tiny_model(shared, path, arch="llama", n_layer=None, n_embd=256, n_vocab=1024, dtype="f32", seed=1):
    """Write a tiny random model of ARCH (one of arch_list()) to path; n_layer None: 2 (gemma3: 6)."""
    if arch not in ARCHS:
        raise ValueError("unknown arch %r (have: %s)" % (arch, " ".join(ARCHS)))
    if n_layer is None:
        n_layer = _DEFAULT_LAYERS.get(arch, 2)
    m = _Model(_oracle(shared), arch, n_layer, n_embd, n_vocab, dtype, seed)
    _BUILDERS.get(arch, _llama_like)(m)
    m.w.write(path)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shared")
    ap.add_argument("out")
    ap.add_argument("arch", nargs="?", default="llama", choices=ARCHS)
    ap.add_argument("--layers", type=int, default=None, help="2 by default, 6 for gemma3")
    ap.add_argument("--embd", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--type", default="f32", choices=["f32", "f16", "bf16"])
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    tiny_model(a.shared, a.out, a.arch, a.layers, a.embd, a.vocab, a.type, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
