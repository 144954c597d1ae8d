#!/usr/bin/env python3
"""Turns a gguf-bench JSON report into the README's performance table, with the issue's targets.

usage: gguf-bench --benchmark_out=bench.json --benchmark_out_format=json [--benchmark_repetitions=3]
       python3 bench/report.py bench.json
Targets (single thread, 65536 weights): at least 10 G weights/s and 4x the ggml reference, or, where 4x
would pass the ceiling, 60% of memset/65536 of the same run; out of cache, 80% of memset/16777216.
"""
import json
import sys

# The prebuilt ggml reference, G weights/s, single thread, 64 Ki weights (issue 4's figures).
GGML = {"f16": 1.07, "bf16": 11.8, "q4_0": 2.43, "q4_1": 1.75, "q5_0": 1.60, "q5_1": 1.67, "q8_0": 9.5,
        "q2_K": 1.37, "q3_K": 1.85, "q4_K": 8.3, "q5_K": 5.8, "q6_K": 1.30, "iq4_nl": 1.16, "iq4_xs": 1.22,
        "mxfp4": 1.08}
SIMD = ["f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K",
        "q8_K", "iq4_nl", "iq4_xs", "mxfp4", "tq2_0"]


def main():
    data = json.load(open(sys.argv[1]))
    rate = {}
    label = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        rate[name] = b["weights/s"] / 1e9
        label[name] = b.get("label", "")
    ms, mb = rate["memset/65536"], rate.get("memset/16777216")
    isa = data["context"].get("gguf_isa", "?")
    print("Kernels: %s (runtime dispatch). memset/65536: %.1f G weights/s; memset/16777216: %.1f G weights/s.\n"
          % (isa, ms, mb or 0))
    print("| type | ours, 64 Ki (G w/s) | ggml (G w/s) | × ggml | target | | ours, 16 Mi | target |")
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    failures = 0
    for t in SIMD:
        ours = rate.get("dequant/%s/65536" % t)
        if ours is None:
            continue
        ref = GGML.get(t)
        need = 10.0
        if ref:
            need = max(need, 4 * ref if 4 * ref <= ms else 0.6 * ms)
        ok = ours >= need
        failures += not ok
        big = rate.get("dequant/%s/16777216" % t)
        big_need = 0.8 * mb if big is not None and mb else None
        big_ok = big is None or big >= big_need
        failures += not big_ok
        print("| %s | %.1f | %s | %s | %.1f | %s | %s | %s |" % (
            t, ours, "%.2f" % ref if ref else "–", "%.1f×" % (ours / ref) if ref else "–", need,
            "ok" if ok else "**below**",
            "%.1f" % big if big is not None else "", ("%.1f %s" % (big_need, "ok" if big_ok else "**below**"))
            if big is not None else ""))
    others = [n for n in rate if n.startswith("dequant/") and n.endswith("/65536") and n.split("/")[1] not in SIMD]
    if others:
        print("\nScalar-only types, 64 Ki weights (G weights/s): " + ", ".join(
            "%s %.2f" % (n.split("/")[1], rate[n]) for n in sorted(others)))
    print("\n%d below target" % failures)


if __name__ == "__main__":
    main()
