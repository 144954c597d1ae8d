#!/usr/bin/env python3
"""Whole-model quantization time: gguf-quantize against llama.cpp's own llama_model_quantize.

usage: quantize_model_timing.py EXAMPLES_DIR SHARED_DIR [--ftype Q4_K_M] [--threads 1,2] [--runs 3]
                                [--layers 4] [--embd 1024] [--vocab 8192] [--work DIR]

Makes a tiny-llama layout with random f16 weights (tests/oracle/models.py), then for each thread count
quantizes it with llama_model_quantize (the oracle's prebuilt libllama through ctypes, nthread set) and
with gguf-quantize --threads, alternating, and prints the best wall time of each and their ratio.
Checks that the two files are byte-identical. The README's "Quantizing a model" table comes from here.
"""
import argparse
import ctypes as C
import filecmp
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
import models  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("examples")
    ap.add_argument("shared")
    ap.add_argument("--ftype", default="Q4_K_M")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--embd", type=int, default=1024)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--work")
    a = ap.parse_args()
    o = models._oracle(a.shared)
    tmp = tempfile.TemporaryDirectory()
    work = a.work or tmp.name
    src = os.path.join(work, "model-f16.gguf")
    models.main([a.shared, src, "llama", "--layers", str(a.layers), "--embd", str(a.embd), "--vocab",
                 str(a.vocab), "--type", "f16"])
    llama = o.Llama()
    tool = os.path.join(a.examples, "gguf-quantize")
    ref, ours = os.path.join(work, "llama.gguf"), os.path.join(work, "gguf.gguf")
    print(f"model: {os.path.getsize(src) / 1e6:.0f} MB f16, {a.ftype}")
    print("| threads | llama.cpp | gguf-quantize | ratio |\n|---:|---:|---:|---:|")
    for n in (int(t) for t in a.threads.split(",")):
        best_ref = best_ours = float("inf")
        for _ in range(a.runs):
            p = llama.lib.llama_model_quantize_default_params()
            p.nthread, p.ftype = n, o.FTYPES[a.ftype]
            t0 = time.perf_counter()
            if llama.lib.llama_model_quantize(src.encode(), ref.encode(), C.byref(p)) != 0:
                sys.exit("llama_model_quantize failed")
            best_ref = min(best_ref, time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run([tool, "--threads", str(n), src, ours, a.ftype], check=True)
            best_ours = min(best_ours, time.perf_counter() - t0)
        if not filecmp.cmp(ref, ours, shallow=False):
            sys.exit("the files differ")
        print(f"| {n} | {best_ref:.2f} s | {best_ours:.2f} s | {best_ref / best_ours:.2f}× |")
    print(f"out: {os.path.getsize(ours) / 1e6:.0f} MB; the files are identical")


if __name__ == "__main__":
    main()
