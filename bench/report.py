#!/usr/bin/env python3
"""Turns a gguf-bench JSON report into the README's performance table, with the issue's targets.

usage: gguf-bench --benchmark_out=bench.json --benchmark_out_format=json [--benchmark_repetitions=3]
       python3 bench/report.py bench.json
Every dequant/<type>/65536 as a share of memset/65536 of the same run, and dequant/<type>/16777216 as a
share of fill_nt/16777216 (the out-of-cache ceiling: non-temporal stores); the ggml column is its prebuilt
reference dequantizer as measured for 0.1.0 (not the same run). When the report holds gguf-bench's same-run
anchor, ggml/<type>/<n> (ggml's dequantizer on the same input, loaded from $GGUF_BENCH_GGML or the oracle),
a "× ggml, same run" column follows each size: dequant/<type>/<n> over ggml/<type>/<n>, in weights/s.
When it holds dequant_f16/<type>/65536 and dequant_bf16/<type>/65536, two columns give the half outputs'
weights/s as a share of the float output's.
"""
import json
import sys

# The prebuilt ggml reference, G weights/s, single thread, 64 Ki weights (issue 4's figures).
GGML = {"f16": 1.07, "bf16": 11.8, "q4_0": 2.43, "q4_1": 1.75, "q5_0": 1.60, "q5_1": 1.67, "q8_0": 9.5,
        "q2_K": 1.37, "q3_K": 1.85, "q4_K": 8.3, "q5_K": 5.8, "q6_K": 1.30, "iq4_nl": 1.16, "iq4_xs": 1.22,
        "mxfp4": 1.08}


def main():
    data = json.load(open(sys.argv[1]))
    rate = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        rate[b.get("run_name", b["name"])] = b["weights/s"] / 1e9
    ms, mb = rate["memset/65536"], rate.get("memset/16777216")
    nt = rate.get("fill_nt/16777216")
    isa = data["context"].get("gguf_isa", "?")
    same = any(n.startswith("ggml/") for n in rate)  # the same-run anchor: only then the extra columns
    halves = any(n.startswith("dequant_f16/") for n in rate)
    print("Kernels: %s (runtime dispatch). Ceilings, G weights/s: memset/65536 %.1f, memcpy/65536 %.1f; "
          "memset/16777216 %.1f, fill_nt/16777216 %.1f."
          % (isa, ms, rate.get("memcpy/65536", 0), mb or 0, nt or 0))
    if same:
        print("Same run: ggml/<type>/<n> is %s, %s." % (
            data["context"].get("ggml_version", "ggml"), data["context"].get("ggml_library", "?")))
    print()
    head = ["type", "64 Ki", "% of memset", "ggml", "× ggml", "16 Mi", "% of fill_nt"]
    if same:
        head[5:5] = ["× ggml, same run"]
        head.append("× ggml, same run")
    if halves:
        head[3:3] = ["f16 out", "bf16 out"]
    print("| %s |" % " | ".join(head))
    print("|---|" + "---:|" * (len(head) - 1))

    def vs_ggml(t, n, none):  # dequant/<t>/<n> over ggml/<t>/<n>
        ours, theirs = rate.get("dequant/%s/%d" % (t, n)), rate.get("ggml/%s/%d" % (t, n))
        if ours is None:
            return none
        if not theirs:
            return "–"
        return ("%.1f×" if ours >= theirs else "%.2f×") % (ours / theirs)  # 2 digits below 1×
    below = []
    names = [n.split("/")[1] for n in rate if n.startswith("dequant/") and n.endswith("/65536")]
    for t in sorted(names, key=lambda t: -rate["dequant/%s/65536" % t]):
        ours = rate["dequant/%s/65536" % t]
        ref = GGML.get(t)
        big = rate.get("dequant/%s/16777216" % t)
        share = ours / ms
        if share < (0.3 if t in ("f64", "i64") else 0.5):
            below.append(t)
        cells = [t, "%.2f" % ours, "%.0f%%" % (100 * share), "%.2f" % ref if ref else "–",
                 "%.1f×" % (ours / ref) if ref else "–", "%.1f" % big if big is not None else "",
                 "%.0f%%" % (100 * big / nt) if big is not None and nt else ""]
        if same:
            cells[5:5] = [vs_ggml(t, 65536, "–")]
            cells.append(vs_ggml(t, 16777216, ""))
        if halves:  # the half outputs' weights/s over the float output's
            cells[3:3] = ["%.2f×" % (rate.get("dequant_%s/%s/65536" % (h, t), 0) / ours) for h in ("f16", "bf16")]
        print("| %s |" % " | ".join(cells))
    print("\nBelow 50%% of memset/65536 (30%% for f64, i64): %s" % (", ".join(below) or "none"))


if __name__ == "__main__":
    main()
