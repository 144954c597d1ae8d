#!/usr/bin/env python3
"""Writes a 150k-token BPE vocabulary for gguf-bench's tokenizer_build/ (no real one of that size is in
../shared): deepseek-llm's tokens, types and merges, extended with tokens that join two random short
tokens of it, each with its merge, to 151,643 tokens and 149,000 merges (Qwen2's vocabulary size).

usage: python3 bench/make_vocab_150k.py SHARED_DIR OUT_DIR   (deterministic: the same file every time)
       GGUF_BENCH_VOCAB_DIR=OUT_DIR build/bench/gguf-bench --benchmark_filter=tokenizer_build
"""
import json
import os
import random
import subprocess
import sys

N_TOKENS = 151643


def main(shared, out_dir):
    oracle = os.path.join(shared, "oracle", "ggml_oracle.py")
    sys.path.insert(0, os.path.dirname(oracle))
    from ggml_oracle import Writer
    src = os.path.join(shared, "data", "vocab", "ggml-vocab-deepseek-llm.gguf")
    dump = subprocess.run([sys.executable, oracle, "inspect", src], capture_output=True, text=True, check=True)
    md = json.loads(dump.stdout)
    kv = {e["key"]: e for e in md["metadata"]}
    tokens = list(kv["tokenizer.ggml.tokens"]["value"]["value"])
    types = list(kv["tokenizer.ggml.token_type"]["value"]["value"])
    merges = list(kv["tokenizer.ggml.merges"]["value"]["value"])
    have = set(tokens)
    short = [t for t, ty in zip(tokens, types) if ty == 1 and 1 <= len(t) <= 4 and " " not in t]
    rng = random.Random(1)
    while len(tokens) < N_TOKENS:
        a, b = rng.choice(short), rng.choice(short)
        if a + b in have:
            continue
        have.add(a + b)
        tokens.append(a + b)
        types.append(1)
        merges.append(a + " " + b)
    w = Writer()
    for e in md["metadata"]:
        k, t, v = e["key"], e["type"], e["value"]
        if k == "tokenizer.ggml.tokens":
            w.kvs.append((k, "array", ("string", tokens)))
        elif k == "tokenizer.ggml.token_type":
            w.kvs.append((k, "array", ("int32", types)))
        elif k == "tokenizer.ggml.merges":
            w.kvs.append((k, "array", ("string", merges)))
        elif t == "array":
            w.kvs.append((k, "array", (v["type"], v["value"])))
        else:
            w.kvs.append((k, t, v))
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "synthetic-150k.gguf")
    w.write(path)
    print(f"{path}: {len(tokens)} tokens, {len(merges)} merges")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
