#!/usr/bin/env python3
"""Turns gguf-bench quantize reports into the README's quantization table.

usage: gguf-bench --benchmark_filter='^(ggml_)?quantize(_imatrix)?/.*/65536$|^memcpy/65536$' \
           --benchmark_repetitions=3 --benchmark_out=prebuilt.json --benchmark_out_format=json
       GGUF_BENCH_GGML=/path/to/native/libggml-base.so gguf-bench ... --benchmark_out=native.json
       python3 bench/report_quantize.py prebuilt.json [native.json]
For every quantize/<type>/<n> (and quantize_imatrix/<type>/<n>, importance weights given), the medians'
weights/s, and the ratio to the anchor of the same run, ggml_quantize[_imatrix]/<type>/<n>: ggml's
ggml_quantize_chunk on the same input, from the first report's library (the oracle's prebuilt ggml) and,
with a second report, from its library (ggml built with -O3 -march=native by bench/build_ggml_native.sh).
"""
import json
import sys

REQUIRED = {"iq2_xxs", "iq2_xs", "iq1_s"}  # ggml quantizes these only with importance weights


def medians(path):
    data = json.load(open(path))
    rate = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        v = b.get("items_per_second", b.get("weights/s"))
        if v:
            rate[b.get("run_name", b["name"])] = v / 1e9
    return data["context"], rate


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    ctx, pre = medians(sys.argv[1])
    nat = medians(sys.argv[2])[1] if len(sys.argv) == 3 else {}
    print("Kernels: %s (runtime dispatch); memcpy/65536 %.1f G weights/s."
          % (ctx.get("gguf_isa", "?"), pre.get("memcpy/65536", 0)))
    head = "| type | importance weights | gguf G/s | × ggml prebuilt |" + (" × ggml -march=native |" if nat else "")
    print(head)
    print("|---|---|---:|---:|" + ("---:|" if nat else ""))
    worst = {}
    for name, v in pre.items():
        kind, _, rest = name.partition("/")
        if kind not in ("quantize", "quantize_imatrix"):
            continue
        t = rest.split("/")[0]
        # each anchor against gguf's figure of its own run
        ratio = lambda r: ("%.2f×" % (r[name] / r[f"ggml_{name}"])) if f"ggml_{name}" in r and name in r else "–"
        weights = "yes" if kind == "quantize_imatrix" or t in REQUIRED else "no"
        row = "| %s | %s | %.3f | %s |" % (t, weights, v, ratio(pre))
        if nat:
            row += " %s |" % ratio(nat)
        print(row)
        if f"ggml_{name}" in pre:
            worst[name] = v / pre[f"ggml_{name}"]
    if worst:
        w = min(worst, key=worst.get)
        print("\nworst against prebuilt ggml: %s, %.2f×" % (w, worst[w]))


if __name__ == "__main__":
    main()
