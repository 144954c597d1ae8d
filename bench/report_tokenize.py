#!/usr/bin/env python3
"""Turns gguf-bench's tokenize/ benchmarks into the table of issue 49: per vocabulary and kind of text,
gguf::tokenizer's speed as a multiple of llama.cpp's llama_tokenize on the same bytes in the same run.

usage: gguf-bench --benchmark_filter='^tokenize/' --benchmark_out=tok.json --benchmark_out_format=json
       python3 bench/report_tokenize.py tok.json [more.json ...] [--markdown]
With several reports (runs minutes apart: this machine's speed drifts), each cell is the median of the
runs' own ratios, never a ratio of medians taken from different runs. The targets: every category at
least 4x (WPM 2x), the mix at least 10x (WPM 3x).
"""
import json
import statistics
import sys


def times(path):
    """Seconds per call of every tokenize/ benchmark of one report (median of repetitions if any)."""
    data = json.load(open(path))
    t = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        if not name.startswith("tokenize/") or b.get("error_occurred"):
            continue
        t[name] = (b["real_time"], b.get("bytes_per_second", 0.0))
    return t


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    runs = [times(p) for p in args]
    ratios, speed = {}, {}
    for t in runs:
        for name, (ours, bps) in t.items():
            if name.endswith("/llama.cpp"):
                continue
            anchor = t.get(name + "/llama.cpp")
            parts = name.split("/")
            vocab, cat = parts[1], (parts[2] if len(parts) > 2 else "corpus")
            speed.setdefault((vocab, cat), []).append(bps / 1e6)
            if anchor:
                ratios.setdefault((vocab, cat), []).append(anchor[0] / ours)
    vocabs = sorted({v for v, _ in speed})
    cats = []
    for _, c in speed:
        if c not in cats:
            cats.append(c)
    order = ["latin", "cyrillic", "greek", "arabic", "hebrew", "indic", "thai", "cjk", "hangul", "emoji",
             "combining", "code", "numbers", "whitespace", "mix", "corpus"]
    cats = [c for c in order if c in cats] + [c for c in cats if c not in order]
    md = "--markdown" in sys.argv
    sep = " | " if md else " "
    head = ["vocabulary"] + cats + ["worst"]
    if md:
        print("| " + " | ".join(head) + " |")
        print("|---" + "|---:" * (len(head) - 1) + "|")
    else:
        print(f"{'vocabulary':<16}" + "".join(f"{c[:7]:>8}" for c in head[1:]))
    fails = 0
    for v in vocabs:
        cells, worst = [], None
        wpm = v.startswith("bert")
        for c in cats:
            r = ratios.get((v, c))
            if not r:
                cells.append("–")
                continue
            m = statistics.median(r)
            goal = (3 if wpm else 10) if c in ("mix", "corpus") else (2 if wpm else 4)
            flag = "" if m >= goal else "!"
            fails += flag == "!"
            cells.append(f"{m:.1f}{flag}")
            if c not in ("mix", "corpus") and (worst is None or m < worst[0]):
                worst = (m, c)
        cells.append(f"{worst[0]:.1f} {worst[1]}" if worst else "–")
        if md:
            print("| " + " | ".join([v] + cells) + " |")
        else:
            print(f"{v:<16}" + "".join(f"{x:>8}" for x in cells[:-1]) + f"  {cells[-1]}")
    print(f"\n{fails} cells below the target (marked !)")


if __name__ == "__main__":
    main()
