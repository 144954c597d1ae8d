#!/usr/bin/env python3
"""Turns gguf-bench JSON reports into the README's performance table, with the issue's targets.

usage: gguf-bench --benchmark_out=bench.json --benchmark_out_format=json [--benchmark_repetitions=3]
       python3 bench/report.py bench.json [more.json ...]
Every dequant/<type>/65536 as a share of memset/65536 of the same run and of traffic/<type>/65536 (the
type's own ceiling: its bytes read and written, nothing computed), and dequant/<type>/16777216 as a share
of fill_nt/16777216 (the out-of-cache ceiling: non-temporal stores); the ggml column is its prebuilt
reference dequantizer as measured for 0.1.0 (not the same run). When the report holds gguf-bench's same-run
anchor, ggml/<type>/<n> (ggml's dequantizer on the same input, loaded from $GGUF_BENCH_GGML or the oracle),
a "× ggml, same run" column follows each size: dequant/<type>/<n> over ggml/<type>/<n>, in weights/s.
When it holds dequant_f16/<type>/65536 and dequant_bf16/<type>/65536, two columns give the half outputs'
weights/s as a share of the float output's.
With several reports (runs minutes apart: this machine's speed drifts), every cell is the median of the
runs' own figures, a ratio the median of each run's ratio, never a ratio of medians of different runs.
"""
import json
import statistics
import sys

# The prebuilt ggml reference, G weights/s, single thread, 64 Ki weights (issue 4's figures).
GGML = {"f16": 1.07, "bf16": 11.8, "q4_0": 2.43, "q4_1": 1.75, "q5_0": 1.60, "q5_1": 1.67, "q8_0": 9.5,
        "q2_K": 1.37, "q3_K": 1.85, "q4_K": 8.3, "q5_K": 5.8, "q6_K": 1.30, "iq4_nl": 1.16, "iq4_xs": 1.22,
        "mxfp4": 1.08}


def rates(path):
    """G weights/s of each benchmark of one report (the median of its repetitions, if it has them)."""
    data = json.load(open(path))
    rate = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        rate[b.get("run_name", b["name"])] = b["weights/s"] / 1e9
    return data["context"], rate


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = [rates(p) for p in sys.argv[1:]]
    context = runs[0][0]

    def med(f):
        """The median over the runs of f(rate), skipping runs where it is None; None if all are."""
        values = [v for v in (f(r) for _, r in runs) if v is not None]
        return statistics.median(values) if values else None

    def ratio(a, b):
        return lambda r: r[a] / r[b] if a in r and r.get(b) else None

    ms = med(lambda r: r.get("memset/65536"))
    nt = med(lambda r: r.get("fill_nt/16777216"))
    print("Kernels: %s (runtime dispatch), %d run(s). Ceilings, G weights/s: memset/65536 %.1f, memcpy/65536 "
          "%.1f; memset/16777216 %.1f, fill_nt/16777216 %.1f." % (
              context.get("gguf_isa", "?"), len(runs), ms, med(lambda r: r.get("memcpy/65536")) or 0,
              med(lambda r: r.get("memset/16777216")) or 0, nt or 0))
    names = set().union(*(r.keys() for _, r in runs))
    same = any(n.startswith("ggml/") for n in names)  # the same-run anchor: only then the extra columns
    halves = any(n.startswith("dequant_f16/") for n in names)
    traffic = any(n.startswith("traffic/") for n in names)
    if same:
        print("Same run: ggml/<type>/<n> is %s, %s." % (
            context.get("ggml_version", "ggml"), context.get("ggml_library", "?")))
    print()
    head = ["type", "64 Ki", "% of memset"]
    head += ["% of traffic"] if traffic else []
    head += ["f16 out", "bf16 out"] if halves else []
    head += ["ggml", "× ggml"] + (["× ggml, same run"] if same else [])
    head += ["16 Mi", "% of fill_nt"] + (["× ggml, same run"] if same else [])
    print("| %s |" % " | ".join(head))
    print("|---|" + "---:|" * (len(head) - 1))

    def times(x):
        return "" if x is None else ("%.1f×" if x >= 1 else "%.2f×") % x  # 2 digits below 1×

    def percent(x):
        return "" if x is None else "%.0f%%" % (100 * x)

    below = []
    types = {n.split("/")[1] for n in names if n.startswith("dequant/") and n.endswith("/65536")}
    speed = {t: med(lambda r, t=t: r.get("dequant/%s/65536" % t)) for t in types}
    for t in sorted(types, key=lambda t: -speed[t]):
        ours, ref = speed[t], GGML.get(t)
        small, big = "dequant/%s/65536" % t, "dequant/%s/16777216" % t
        share = med(ratio(small, "memset/65536"))
        if share < (0.3 if t in ("f64", "i64") else 0.5):
            below.append(t)
        cells = [t, "%.2f" % ours, percent(share)]
        if traffic:
            cells.append(percent(med(ratio(small, "traffic/%s/65536" % t))))
        if halves:  # the half outputs' weights/s over the float output's
            cells += ["%.2f×" % med(ratio("dequant_%s/%s/65536" % (h, t), small)) for h in ("f16", "bf16")]
        cells += ["%.2f" % ref if ref else "–", times(ours / ref) if ref else "–"]
        if same:
            cells.append(times(med(ratio(small, "ggml/%s/65536" % t))) or "–")
        large = med(lambda r: r.get(big))
        cells += ["%.1f" % large if large is not None else "", percent(med(ratio(big, "fill_nt/16777216")))]
        if same:
            cells.append(times(med(ratio(big, "ggml/%s/16777216" % t))))
        print("| %s |" % " | ".join(cells))
    print("\nBelow 50%% of memset/65536 (30%% for f64, i64): %s" % (", ".join(below) or "none"))


if __name__ == "__main__":
    main()
