#!/usr/bin/env python3
"""Golden per-tensor types of llama.cpp's llama_model_quantize for tests/test_quantize_plan.cpp.

usage: make_quantize_plan_golden.py SHARED_DIR OUT_DIR [--work DIR] [--models a,b,...]

For each tiny model (tests/oracle/models.py, plus an 8-expert MoE built here) it runs the oracle's
llama.cpp quantizer for every ftype, without and with a flat importance matrix, and a few option sets
(--output-tensor-type, --token-embedding-type, --pure, a quantized input with and without
allow_requantize). It writes to OUT_DIR:
  MODEL.header the model's header only: a GGUF file cut before its data (not named .gguf: the tests
               that load every committed .gguf want whole files), metadata without the tokenizer
               arrays, tensor infos as in the model; the test parses it with parse_prefix
  MODEL.txt    one line per run:  FTYPE IMATRIX OUT EMB PURE REQUANT : TYPES
               IMATRIX/PURE/REQUANT are 0 or 1, OUT/EMB a ggml type name or - (OUT "keep": the output
               tensor left as it is, --leave-output-tensor); TYPES has one character per tensor in the
               model's file order, the ggml type id's digit in TYPE_DIGITS (f32 0, f16 1, q4_K c, ...),
               or is "error" when llama.cpp refused;
               "order : I..." the output file's tensor order (indices into the file order);
               "keys : K..." the output file's metadata keys in order (after a Q4_K_M run).
Standard library and the oracle only; deterministic.
"""
import argparse
import ctypes as C
import math
import os
import random
import struct
import sys

# one character per ggml type id (0..42)
TYPE_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402

FTYPES = ["F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q2_K_S", "Q3_K_S", "Q3_K_M",
          "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS",
          "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS", "IQ3_S", "IQ3_M", "IQ4_NL", "IQ4_XS", "TQ1_0", "TQ2_0",
          "MXFP4_MOE", "Q1_0", "Q2_0", "ALL_F32"]
# the 80-block llama (llama.cpp's 70B rules) is big: the mixes that differ there
FTYPES_70B = ["Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "IQ3_S", "IQ3_M", "IQ4_XS", "Q5_K_M"]

# name: (arch, layers, embd, dtype, extra option runs)
MODELS = {
    "llama80": ("llama", 80, 256, "f16", False),
    "llama16": ("llama", 16, 256, "f16", True),
    "llama_narrow": ("llama", 2, 160, "f32", False),
    "qwen2": ("qwen2", 2, 256, "f32", False),
    "gemma2": ("gemma2", 2, 256, "f32", True),
    "phi3": ("phi3", 3, 256, "f16", False),
    "qwen3moe": ("qwen3moe", 4, 256, "f32", False),
    "moe8": ("moe8", 8, 256, "f16", False),
    "falcon": ("falcon", 8, 256, "f16", False),
    "deepseek2": ("deepseek2", 3, 256, "f32", True),
    "mamba": ("mamba", 2, 256, "f32", False),
    "gpt2": ("gpt2", 2, 256, "f32", False),
}


def moe8(shared, path, n_layer, n_embd, dtype):
    """qwen3moe with 8 experts of n_embd (llama.cpp's n_expert == 8 rules), 4 heads, 1 KV head (n_gqa 4)."""
    m = models._Model(models._oracle(shared), "qwen3moe", n_layer, n_embd, 1024, dtype, 7)
    n_head, n_head_kv, n_expert, n_ff_exp = 4, 1, 8, n_embd
    head_dim = n_embd // n_head
    m.header([("block_count", "uint32", n_layer), ("context_length", "uint32", 2048),
              ("embedding_length", "uint32", n_embd), ("feed_forward_length", "uint32", 2 * n_embd),
              ("attention.head_count", "uint32", n_head), ("attention.head_count_kv", "uint32", n_head_kv),
              ("rope.freq_base", "float32", 10000.0), ("attention.layer_norm_rms_epsilon", "float32", 1e-5),
              ("attention.key_length", "uint32", head_dim), ("attention.value_length", "uint32", head_dim),
              ("expert_count", "uint32", n_expert), ("expert_used_count", "uint32", 2),
              ("expert_feed_forward_length", "uint32", n_ff_exp)])
    t = m.tensor
    t("token_embd.weight", [n_embd, 1024], 0.02)
    for i in range(n_layer):
        p = "blk.%d." % i
        m.norm(p + "attn_norm.weight", [n_embd])
        t(p + "attn_q.weight", [n_embd, n_embd])
        t(p + "attn_k.weight", [n_embd, head_dim * n_head_kv])
        t(p + "attn_v.weight", [n_embd, head_dim * n_head_kv])
        m.norm(p + "attn_q_norm.weight", [head_dim])
        m.norm(p + "attn_k_norm.weight", [head_dim])
        t(p + "attn_output.weight", [n_embd, n_embd])
        m.norm(p + "ffn_norm.weight", [n_embd])
        t(p + "ffn_gate_inp.weight", [n_embd, n_expert])
        t(p + "ffn_gate_exps.weight", [n_embd, n_ff_exp, n_expert])
        t(p + "ffn_up_exps.weight", [n_embd, n_ff_exp, n_expert])
        t(p + "ffn_down_exps.weight", [n_ff_exp, n_embd, n_expert])
    m.norm("output_norm.weight", [n_embd])
    t("output.weight", [n_embd, 1024], 0.02)
    m.w.write(path)


def header_only(o, src, dst):
    """dst: src's metadata without tokenizer arrays and its tensor infos at their offsets, no data."""
    g = o.Ggml()
    d = g.inspect(src)
    w = o.Writer(version=3)
    for kv in d["metadata"]:
        if kv["type"] == "array":
            continue
        w.kvs.append((kv["key"], kv["type"], kv["value"]))
    last = 0
    for t in d["tensors"]:
        w.tensors.append((t["name"], g.type_id(t["type"]), t["shape"], b"", t["offset"]))
        last = max(last, t["offset"])
    raw = w.to_bytes()
    body = (last + w.alignment - 1) // w.alignment * w.alignment
    with open(dst, "wb") as f:
        f.write(raw[:len(raw) - body])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shared")
    ap.add_argument("out")
    ap.add_argument("--work", default="/tmp/quantize-plan-work")
    ap.add_argument("--models", default=",".join(MODELS))
    a = ap.parse_args(argv)
    o = models._oracle(a.shared)
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    g = o.Ggml()
    llama = o.Llama()
    tmp = os.path.join(a.work, "out.gguf")

    def run(src, ftype, imatrix, out=None, emb=None, pure=False, requant=False):
        p = llama.lib.llama_model_quantize_default_params()
        p.nthread, p.ftype = 2, o.FTYPES[ftype]
        if out == "keep":
            p.quantize_output_tensor = False
        elif out:
            p.output_tensor_type = g.type_id(out)
        if emb:
            p.token_embedding_type = g.type_id(emb)
        p.pure, p.allow_requantize = pure, requant
        keep = None
        if imatrix:
            rows = [(t["name"].encode(), (C.c_float * n)(*([1.0] * n)), n)
                    for t in g.inspect(src)["tensors"] if len(t["shape"]) > 1
                    for n in [t["shape"][0] * (t["shape"][2] if len(t["shape"]) > 2 else 1)]]
            keep = (o._ImatrixData * (len(rows) + 1))(*rows)
            p.imatrix = keep
        llama.log.clear()
        if os.path.exists(tmp):
            os.remove(tmp)
        if llama.lib.llama_model_quantize(src.encode(), tmp.encode(), C.byref(p)) != 0:
            return None
        return g.inspect(tmp)

    for name in a.models.split(","):
        arch, n_layer, n_embd, dtype, extra = MODELS[name]
        src = os.path.join(a.work, name + ".gguf")
        if arch == "moe8":
            moe8(a.shared, src, n_layer, n_embd, dtype)
        else:
            models.tiny_model(a.shared, src, arch, n_layer, n_embd, 1024, dtype)
        inp = g.inspect(src)
        names = [t["name"] for t in inp["tensors"]]
        lines = []

        def record(label, d):
            if d is None:
                lines.append(label + " : error")
                return
            by = {t["name"]: t["type"] for t in d["tensors"]}
            lines.append(label + " : " + "".join(TYPE_DIGITS[g.type_id(by[n])] for n in names))
            return d

        for ft in (FTYPES_70B if n_layer == 80 else FTYPES):
            for im in (0, 1):
                d = record("%s %d - - 0 0" % (ft, im), run(src, ft, im))
                if ft == "Q4_K_M" and im == 0:
                    order = [names.index(t["name"]) for t in d["tensors"]]
                    keys = [kv["key"] for kv in d["metadata"]]
        if extra:
            for ft in ("Q4_K_M", "IQ2_XS", "MXFP4_MOE", "F16"):
                record("%s 1 q8_0 q4_0 0 0" % ft, run(src, ft, 1, out="q8_0", emb="q4_0"))
                record("%s 1 q5_K - 0 0" % ft, run(src, ft, 1, out="q5_K"))
                record("%s 1 - iq4_nl 0 0" % ft, run(src, ft, 1, emb="iq4_nl"))
                record("%s 1 keep - 0 0" % ft, run(src, ft, 1, out="keep"))
            for ft in ("Q4_K_M", "Q3_K_M", "IQ2_XXS", "Q2_K", "IQ3_XS", "Q6_K"):
                record("%s 1 - - 1 0" % ft, run(src, ft, 1, pure=True))
                record("%s 0 - - 1 0" % ft, run(src, ft, 0, pure=True))
        lines.append("order : " + " ".join(map(str, order)))
        lines.append("keys : " + " ".join(keys))
        header_only(o, src, os.path.join(a.out, name + ".header"))
        if extra:  # a quantized input: requantizing is refused unless allowed
            q8 = os.path.join(a.work, name + "_q8.gguf")
            run(src, "Q8_0", 1)
            os.replace(tmp, q8)
            qin = g.inspect(q8)
            qnames = [t["name"] for t in qin["tensors"]]
            qlines = []
            for ft in ("Q4_K_M", "Q8_0", "IQ3_S", "F16"):
                for rq in (0, 1):
                    d = run(q8, ft, 1, requant=bool(rq))
                    lab = "%s 1 - - 0 %d" % (ft, rq)
                    if d is None:
                        qlines.append(lab + " : error")
                    else:
                        by = {t["name"]: t["type"] for t in d["tensors"]}
                        qlines.append(lab + " : " + "".join(TYPE_DIGITS[g.type_id(by[n])] for n in qnames))
                        qorder = [qnames.index(t["name"]) for t in d["tensors"]]
                        qkeys = [kv["key"] for kv in d["metadata"]]
            qlines.append("order : " + " ".join(map(str, qorder)))
            qlines.append("keys : " + " ".join(qkeys))
            header_only(o, q8, os.path.join(a.out, name + "_q8.header"))
            with open(os.path.join(a.out, name + "_q8.txt"), "w") as f:
                f.write("\n".join(qlines) + "\n")
        with open(os.path.join(a.out, name + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print(name, len(lines), "lines", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
