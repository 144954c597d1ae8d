#!/usr/bin/env python3
"""gguf-info's facts against llama.cpp itself, on random-weight models of every architecture models.py
builds (dense, grouped-query, sliding-window, mixture of experts, MLA, recurrent, fused QKV, learned
positions).

1. Parameters and vocabulary: `gguf-info --json` n_params and n_vocab equal llama.cpp's
   llama_model_n_params and llama_vocab_n_tokens, for f32 and f16 models, and through any shard of a
   split model.
2. Memory: memory.kv_cache equals the KV cache (and recurrent states) llama.cpp allocates for the same
   context length, cache type and sliding-window setting, as its context-creation log prints them
   ("llama_kv_cache: size = ...", "llama_memory_recurrent: size = ..."), within 1% (the log prints MiB
   with two decimals: sizes are chosen above 1 MiB); memory.weights equals its model buffer within 1%.
3. File type: the label of general.file_type for llama.cpp-quantized models (Q4_K_M, Q8_0, ...), and
   llama.cpp's guess when the key is removed.

usage: facts_agreement.py BUILD_EXAMPLES_DIR SHARED_DIR
"""
import ctypes as C
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Contexts and cache types the memory estimate is checked at (ggml type ids: f16 1, q8_0 8, q4_0 2).
CONTEXTS = (4096, 10000)
CACHE_TYPES = (("f16", 1), ("q8_0", 8), ("q4_0", 2))
# Layers per architecture, so that every cache is above 1 MiB at the smallest context (the log's
# two-decimal MiB is then within 0.5%).
LAYERS = {"mamba": 32, "gemma3": 12, "deepseek2": 4}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def mib(text):
    return float(text) * 1024 * 1024


class Contexts:
    """llama.cpp contexts created on a model with chosen parameters; what its log says it allocated."""

    def __init__(self, o):
        self.ll = o.Llama()
        self.L = self.ll.lib

    def allocated(self, path, n_ctx, type_kv, swa_full):
        L, ll = self.L, self.ll
        mp = L.llama_model_default_params()
        mp.n_gpu_layers, mp.load_mode = 0, 1
        ll.log.clear()
        model = L.llama_model_load_from_file(path.encode(), mp)
        if not model:
            raise ValueError(ll._error("load " + path))
        try:
            weights = sum(mib(m) for m in re.findall(r"CPU_Mapped model buffer size =\s*([\d.]+) MiB",
                                                     "".join(t for _, t in ll.log)))
            cp = L.llama_context_default_params()
            cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = n_ctx, 512, 512, 1
            cp.type_k = cp.type_v = type_kv
            cp.flash_attn_type = 1 if type_kv != 1 else 0  # a quantized V cache needs flash attention
            cp.swa_full = swa_full
            ll.log.clear()
            ctx = L.llama_init_from_model(model, cp)
            if not ctx:
                raise ValueError(ll._error("context for " + path))
            L.llama_free(ctx)
            text = "".join(t for _, t in ll.log)
            kv = sum(mib(m) for m in re.findall(r"llama_kv_cache: size =\s*([\d.]+) MiB", text))
            rs = sum(mib(m) for m in re.findall(r"llama_memory_recurrent: size =\s*([\d.]+) MiB", text))
            return weights, kv + rs, text
        finally:
            L.llama_model_free(model)


def main(bindir, shared):
    sys.path.insert(0, os.path.join(shared, "oracle"))
    sys.path.insert(0, HERE)
    import ggml_oracle as o
    import models

    info = os.path.join(bindir, "gguf-info")
    split_tool = os.path.join(bindir, "gguf-split")
    edit = os.path.join(bindir, "gguf-edit")
    oracle = [sys.executable, os.path.join(shared, "oracle", "ggml_oracle.py")]
    tmp = tempfile.mkdtemp(prefix="gguf-facts-agreement-")
    failures, checks = [], 0
    contexts = Contexts(o)

    def fail(msg):
        failures.append(msg)
        print("FAIL:", msg)

    def facts(path, *args):
        r = run([info, "--json", path] + list(args))
        if r.returncode != 0:
            fail("gguf-info %s %s: exit %d: %s" % (path, " ".join(args), r.returncode, r.stderr.strip()))
            return None
        return json.loads(r.stdout)

    def loaded(paths):
        r = run(oracle + ["llama-load"] + list(paths))
        return json.loads(r.stdout) if r.returncode == 0 else None

    for arch in models.arch_list():
        for dtype in ("f32", "f16"):
            path = os.path.join(tmp, "%s-%s.gguf" % (arch, dtype))
            models.tiny_model(shared, path, arch, LAYERS.get(arch), dtype=dtype)
            ref = loaded([path])
            got = facts(path)
            if ref is None or got is None:
                fail("%s %s: llama.cpp or gguf-info could not read it" % (arch, dtype))
                continue
            checks += 1
            for key in ("n_params", "n_vocab"):
                if got[key] != ref[key]:
                    fail("%s %s: %s %s, llama.cpp %s" % (arch, dtype, key, got[key], ref[key]))
            if got["architecture"] != arch or got["n_layer"] != ref["n_layer"]:
                fail("%s %s: architecture %s, %s layers" % (arch, dtype, got["architecture"], got["n_layer"]))
            if dtype == "f16":
                continue
            for n_ctx in CONTEXTS:
                for name, type_id in CACHE_TYPES:
                    for swa_full in ((False, True) if got.get("sliding_window") else (False,)):
                        args = ["--ctx", str(n_ctx), "--cache-type", name, "--ubatch", "512"]
                        args += ["--swa-full"] if swa_full else []
                        mine = facts(path, *args)
                        try:
                            weights, kv, log = contexts.allocated(path, n_ctx, type_id, swa_full)
                        except ValueError as e:  # llama.cpp cannot make this cache (a row of partial blocks)
                            if mine and mine["memory"]["kv_cache"] is not None:
                                fail("%s ctx %d %s: llama.cpp refuses (%s), gguf-info estimates %s"
                                     % (arch, n_ctx, name, e, mine["memory"]["kv_cache"]))
                            continue
                        if mine is None:
                            continue
                        checks += 1
                        what = "%s ctx %d cache %s%s" % (arch, n_ctx, name, " swa-full" if swa_full else "")
                        est = mine["memory"]["kv_cache"]
                        if est is None or abs(est - kv) > 0.01 * kv:
                            fail("%s: kv_cache %s, llama.cpp allocates %.0f (%s)" % (
                                what, est, kv, mine["memory"].get("error", "")))
                            sys.stderr.write(log)
                        if abs(mine["memory"]["weights"] - weights) > 0.01 * weights:
                            fail("%s: weights %d, llama.cpp's buffer %.0f" % (what, mine["memory"]["weights"], weights))
        print("%-10s ok so far: %d checks, %d failures" % (arch, checks, len(failures)))

    # Through any shard of a split model: the whole model's facts.
    path = os.path.join(tmp, "qwen3moe-f32.gguf")
    prefix = os.path.join(tmp, "moe-split")
    r = run([split_tool, "--split-max-tensors", "7", path, prefix])
    shards = sorted(p for p in os.listdir(tmp) if p.startswith("moe-split-"))
    whole = facts(path)
    ref = loaded([os.path.join(tmp, shards[0])])
    for s in shards:
        got = facts(os.path.join(tmp, s))
        checks += 1
        if r.returncode != 0 or got is None or ref is None or got["n_params"] != ref["n_params"] or \
                got["n_params"] != whole["n_params"] or got["memory"]["weights"] != whole["memory"]["weights"]:
            fail("split model through %s: %s, llama.cpp %s" % (s, got and got["n_params"], ref and ref["n_params"]))

    # File types: llama.cpp's quantizer writes general.file_type; without it, its guess.
    base = os.path.join(tmp, "llama-f32.gguf")
    for ftype in ("Q4_K_M", "Q8_0", "Q6_K", "Q4_0", "IQ4_XS", "Q3_K_S"):
        q = os.path.join(tmp, "llama-%s.gguf" % ftype)
        r = run(oracle + ["llama-quantize", base, q, ftype])
        if r.returncode != 0:
            fail("llama-quantize %s: %s" % (ftype, r.stderr.strip()[-300:]))
            continue
        got = facts(q)
        checks += 1
        if got is None or got["file_type"] != ftype or got["file_type_source"] != "general.file_type":
            fail("%s: file_type %s" % (ftype, got and (got["file_type"], got["file_type_source"])))
        bare = os.path.join(tmp, "llama-%s-nokey.gguf" % ftype)
        r = run([edit, q, "-o", bare, "--del", "general.file_type"])
        got = facts(bare)
        checks += 1
        guess = {"Q4_K_M": "Q4_K_M", "Q8_0": "Q8_0", "Q6_K": "Q6_K", "Q4_0": "Q4_0", "IQ4_XS": "IQ4_XS",
                 "Q3_K_S": "Q3_K_M"}[ftype]  # llama.cpp guesses a k-quant's medium mix
        if r.returncode != 0 or got is None or got["file_type"] != guess or got["file_type_source"] != "guessed":
            fail("%s without general.file_type: %s" % (ftype, got and (got["file_type"], got["file_type_source"])))

    print("%d checks, %d failures" % (checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
