#!/usr/bin/env python3
"""Writes tests/data/model/tiny-llama-q4_K_M.gguf: the structure of a llama.cpp Q4_K_M model (the
tensor names, shapes, types and metadata llama.cpp's converter and quantizer produce for a llama
model), scaled down to 2 layers of width 256, with every tensor quantized by ggml itself. Beside it,
tiny-llama-q4_K_M.expected.txt lists, per tensor, the FNV-1a 64 hash of ggml's float32 dequantization
(the oracle's `dequant`), its element count and its first value, so the test checks every bit without
committing megabytes of floats.

usage: make_model_fixture.py SHARED_DIR OUT_DIR
"""
import os
import random
import struct
import sys


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    shared, out_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import ggml_oracle as o

    g = o.Ggml()
    rng = random.Random(2026)
    n_embd, n_ff, n_vocab, n_layer, n_head, n_head_kv = 256, 256, 256, 2, 4, 2
    head_dim = n_embd // n_head
    t = {name: g.type_id(name) for name in ("f32", "q4_K", "q6_K")}

    w = o.Writer(version=3)
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(32)] + \
             ["\u2581" + "tok%d" % i for i in range(n_vocab - 35)]
    w.kvs += [
        ("general.architecture", "string", "llama"),
        ("general.name", "string", "tiny llama (ggml oracle fixture)"),
        ("llama.block_count", "uint32", n_layer),
        ("llama.context_length", "uint32", 4096),
        ("llama.embedding_length", "uint32", n_embd),
        ("llama.feed_forward_length", "uint32", n_ff),
        ("llama.attention.head_count", "uint32", n_head),
        ("llama.attention.head_count_kv", "uint32", n_head_kv),
        ("llama.rope.freq_base", "float32", 10000.0),
        ("llama.attention.layer_norm_rms_epsilon", "float32", 1e-5),
        ("general.file_type", "uint32", 15),  # LLAMA_FTYPE_MOSTLY_Q4_K_M
        ("llama.vocab_size", "uint32", n_vocab),
        ("llama.rope.dimension_count", "uint32", head_dim),
        ("tokenizer.ggml.model", "string", "llama"),
        ("tokenizer.ggml.tokens", "array", ("string", tokens)),
        ("tokenizer.ggml.scores", "array", ("float32", [-float(i) for i in range(n_vocab)])),
        ("tokenizer.ggml.token_type", "array", ("int32", [2, 3, 3] + [6] * 32 + [1] * (n_vocab - 35))),
        ("tokenizer.ggml.bos_token_id", "uint32", 1),
        ("tokenizer.ggml.eos_token_id", "uint32", 2),
        ("general.quantization_version", "uint32", 2),
    ]

    # (name, ne, type): what llama.cpp's Q4_K_M recipe picks for a llama model.
    plan = [("token_embd.weight", [n_embd, n_vocab], "q4_K")]
    for i in range(n_layer):
        more_bits = i % 2 == 0  # Q4_K_M gives q6_K to attn_v / ffn_down in part of the layers
        plan += [
            ("blk.%d.attn_norm.weight" % i, [n_embd], "f32"),
            ("blk.%d.attn_q.weight" % i, [n_embd, n_embd], "q4_K"),
            ("blk.%d.attn_k.weight" % i, [n_embd, head_dim * n_head_kv], "q4_K"),
            ("blk.%d.attn_v.weight" % i, [n_embd, head_dim * n_head_kv], "q6_K" if more_bits else "q4_K"),
            ("blk.%d.attn_output.weight" % i, [n_embd, n_embd], "q4_K"),
            ("blk.%d.ffn_norm.weight" % i, [n_embd], "f32"),
            ("blk.%d.ffn_gate.weight" % i, [n_embd, n_ff], "q4_K"),
            ("blk.%d.ffn_up.weight" % i, [n_embd, n_ff], "q4_K"),
            ("blk.%d.ffn_down.weight" % i, [n_ff, n_embd], "q6_K" if more_bits else "q4_K"),
        ]
    plan += [("output_norm.weight", [n_embd], "f32"), ("output.weight", [n_embd, n_vocab], "q6_K")]

    lines = []
    for name, ne, tname in plan:
        n = 1
        for x in ne:
            n *= x
        if tname == "f32":
            vals = [1.0 + rng.gauss(0, 0.05) for _ in range(n)]
        else:
            scale = 0.02 * (1.0 + rng.random())
            vals = [rng.gauss(0, scale) for _ in range(n)]
        data = g.quantize(t[tname], vals, ne[0]) if tname != "f32" else struct.pack("<%df" % n, *vals)
        w.tensors.append((name, t[tname], ne, data))
        ref = struct.pack("<%df" % n, *g.dequantize(t[tname], data, n))
        lines.append("%s %016x %d %s" % (name, fnv1a64(ref), n, struct.unpack("<I", ref[:4])[0]))

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "tiny-llama-q4_K_M.gguf")
    w.write(path)
    # Check the hashes against the oracle's own `dequant` of the written file, tensor by tensor.
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for line in lines:
            name = line.split()[0]
            raw = os.path.join(tmp, "t.bin")
            subprocess.check_call([sys.executable, os.path.join(shared, "oracle", "ggml_oracle.py"),
                                   "dequant", path, name, raw])
            with open(raw, "rb") as f:
                assert "%016x" % fnv1a64(f.read()) == line.split()[1], name
    with open(os.path.join(out_dir, "tiny-llama-q4_K_M.expected.txt"), "w") as f:
        f.write("# tensor fnv1a64(ggml float32 LE bytes) n_elements first_value_bits\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
