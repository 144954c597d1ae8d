#!/usr/bin/env python3
"""Tiny random-weight models that llama.cpp loads, written with the shared oracle's pure-Python Writer:
what the oracle-backed checks (writer, split, facts, quantize) run llama.cpp on.

usage: models.py SHARED_DIR OUT.gguf [ARCH] [--layers N] [--embd N] [--vocab N] [--type f32|f16]
       ARCH: llama (default), qwen2, qwen3, gemma2, phi3
Standard library and the oracle only; deterministic for the same arguments.
"""
import argparse
import math
import os
import random
import struct
import sys


def _oracle(shared):
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import ggml_oracle
    return ggml_oracle


def _vocab(n_vocab):
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(256)]
    tokens += ["\u2581t%d" % i for i in range(n_vocab - len(tokens))]
    tokens = tokens[:n_vocab]
    types = [2, 3, 3] + [6] * 256 + [1] * (n_vocab - 259)
    return tokens, [-float(i) for i in range(n_vocab)], types[:n_vocab]


def tiny_model(shared, path, arch="llama", n_layer=2, n_embd=256, n_vocab=1024, dtype="f32", seed=1):
    o = _oracle(shared)
    rng = random.Random(seed)
    n_head, n_head_kv = 4, 2
    head_dim = n_embd // n_head
    n_ff = 2 * n_embd
    w = o.Writer(version=3)
    tokens, scores, types = _vocab(n_vocab)
    a = arch
    w.kvs += [
        ("general.architecture", "string", a),
        ("general.name", "string", "tiny %s" % a),
        ("%s.block_count" % a, "uint32", n_layer),
        ("%s.context_length" % a, "uint32", 2048),
        ("%s.embedding_length" % a, "uint32", n_embd),
        ("%s.feed_forward_length" % a, "uint32", n_ff),
        ("%s.attention.head_count" % a, "uint32", n_head),
        ("%s.attention.head_count_kv" % a, "uint32", n_head_kv),
        ("%s.rope.freq_base" % a, "float32", 10000.0),
        ("%s.attention.layer_norm_rms_epsilon" % a, "float32", 1e-5),
        ("general.file_type", "uint32", 0 if dtype == "f32" else 1),
        ("tokenizer.ggml.model", "string", "llama"),
        ("tokenizer.ggml.tokens", "array", ("string", tokens)),
        ("tokenizer.ggml.scores", "array", ("float32", scores)),
        ("tokenizer.ggml.token_type", "array", ("int32", types)),
        ("tokenizer.ggml.bos_token_id", "uint32", 1),
        ("tokenizer.ggml.eos_token_id", "uint32", 2),
    ]
    if a in ("gemma2",):
        w.kvs += [("%s.attention.key_length" % a, "uint32", head_dim), ("%s.attention.value_length" % a, "uint32", head_dim),
                  ("%s.attention.sliding_window" % a, "uint32", 128),
                  ("%s.attn_logit_softcapping" % a, "float32", 50.0), ("%s.final_logit_softcapping" % a, "float32", 30.0)]
    if a in ("qwen3",):
        w.kvs += [("%s.attention.key_length" % a, "uint32", head_dim), ("%s.attention.value_length" % a, "uint32", head_dim)]

    def tensor(name, ne, scale=None):
        n = 1
        for d in ne:
            n *= d
        s = scale if scale is not None else 1.0 / math.sqrt(ne[0])
        vals = [rng.gauss(0.0, s) for _ in range(n)]
        if dtype == "f16" and len(ne) > 1:
            w.tensors.append((name, 1, ne, struct.pack("<%de" % n, *vals)))
        else:
            w.tensors.append((name, 0, ne, struct.pack("<%df" % n, *vals)))

    def norm(name, ne):
        w.tensors.append((name, 0, ne, struct.pack("<%df" % ne[0], *[1.0 + rng.gauss(0, 0.01) for _ in range(ne[0])])))

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
            for b, d in (("attn_q.bias", n_embd), ("attn_k.bias", kv_dim), ("attn_v.bias", kv_dim)):
                w.tensors.append((p + b, 0, [d], struct.pack("<%df" % d, *[rng.gauss(0, 0.02) for _ in range(d)])))
        if a == "qwen3":
            norm(p + "attn_q_norm.weight", [head_dim])
            norm(p + "attn_k_norm.weight", [head_dim])
        tensor(p + "attn_output.weight", [n_embd, n_embd])
        if a == "gemma2":
            norm(p + "post_attention_norm.weight", [n_embd])
        norm(p + "ffn_norm.weight", [n_embd])
        if a == "phi3":
            tensor(p + "ffn_up.weight", [n_embd, 2 * n_ff])
        else:
            tensor(p + "ffn_gate.weight", [n_embd, n_ff])
            tensor(p + "ffn_up.weight", [n_embd, n_ff])
        tensor(p + "ffn_down.weight", [n_ff, n_embd])
        if a == "gemma2":
            norm(p + "post_ffw_norm.weight", [n_embd])
    norm("output_norm.weight", [n_embd])
    if a not in ("gemma2",):  # gemma ties the output to the embedding
        tensor("output.weight", [n_embd, n_vocab], 0.02)
    w.write(path)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shared")
    ap.add_argument("out")
    ap.add_argument("arch", nargs="?", default="llama")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--embd", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--type", default="f32", choices=["f32", "f16"])
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    tiny_model(a.shared, a.out, a.arch, a.layers, a.embd, a.vocab, a.type, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
