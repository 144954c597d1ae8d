#!/usr/bin/env python3
"""Randomized agreement of the library's IQ quantizers with ggml's ggml_quantize_chunk.

Usage: quantize_agreement_iq.py TOOL [--seeds N] [--types iq2_xxs,...] [--oracle DIR]

TOOL is the build's tests/tools quantize_raw executable (raw f32 rows in, blocks out). For each seed
and type, a few rows of one kind (Gaussian at a random scale, sparse, constant, one outlier, denormals,
integers, ties) at 256, 512 or 4096 per row, with random importance weights (some zero) and, where ggml
allows it, without; the bytes must be identical. Inputs stay finite and below 1e15 in magnitude: ggml
aborts on NaN, infinities and values whose squares overflow (the golden file covers those, and our
quantizers return an error there). Exit 1 on the first disagreement, printing the case.
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = ["iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m"]
NEEDS_IMATRIX = {"iq2_xxs", "iq2_xs", "iq1_s"}


def rows_of(rng, kind, n):
    scale = 10.0 ** rng.uniform(-6, 6)
    if kind == "gauss":
        return [rng.gauss(0, scale) for _ in range(n)]
    if kind == "sparse":
        return [rng.gauss(0, scale) if rng.random() < 0.1 else 0.0 for _ in range(n)]
    if kind == "constant":
        v = rng.choice([1.0, -2.5, scale])
        return [v] * n
    if kind == "outlier":
        x = [rng.gauss(0, 1) for _ in range(n)]
        x[rng.randrange(n)] = rng.choice([1, -1]) * 1e4
        return x
    if kind == "denormal":
        return [rng.choice([1, -1]) * rng.randrange(1, 1 << 23) * 2.0 ** -149 for _ in range(n)]
    if kind == "ints":
        return [float(rng.randrange(-4, 5)) for _ in range(n)]
    if kind == "ties":  # few distinct values: exercises the stable sorts and tie-breaking
        vals = [rng.gauss(0, 1) for _ in range(3)]
        return [rng.choice(vals) for _ in range(n)]
    if kind == "uniform":
        return [rng.uniform(-scale, scale) for _ in range(n)]
    raise ValueError(kind)


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tool")
    ap.add_argument("--seeds", type=int, default=12)
    ap.add_argument("--types", default=",".join(TYPES))
    # ../shared/oracle beside the checkout, as every other agreement script finds it
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--oracle", default=os.environ.get("GGML_ORACLE_DIR",
                                                       os.path.join(os.path.dirname(here), "shared", "oracle")))
    a = ap.parse_args()
    sys.path.insert(0, a.oracle)
    import ggml_oracle
    g = ggml_oracle.Ggml()
    kinds = ["gauss", "gauss", "sparse", "constant", "outlier", "denormal", "ints", "ties", "uniform"]
    start, n_cases = time.time(), 0
    with tempfile.TemporaryDirectory() as tmp:
        src_p, w_p, out_p = (os.path.join(tmp, f) for f in ("src.bin", "w.bin", "out.bin"))
        for seed in range(a.seeds):
            for t in a.types.split(","):
                rng = random.Random("%s-%d" % (t, seed))
                n = rng.choice([256, 256, 512, 4096]) if seed % 4 == 3 else rng.choice([256, 512])
                nrows = rng.choice([1, 2, 3])
                kind = rng.choice(kinds)
                data = f32([v for _ in range(nrows) for v in rows_of(rng, kind, n)])
                wts = [rng.uniform(0.0, 4.0) if rng.random() < 0.9 else 0.0 for _ in range(n)]
                for use_w in ([True] if t in NEEDS_IMATRIX else [True, False]):
                    w = f32(wts) if use_w else None
                    want = g.quantize_chunk(g.type_id(t), data, n, w)
                    with open(src_p, "wb") as f:
                        f.write(data)
                    args = [a.tool, t, src_p, out_p, str(n)]
                    if use_w:
                        with open(w_p, "wb") as f:
                            f.write(w)
                        args.append(w_p)
                    r = subprocess.run(args, capture_output=True, text=True)
                    got = open(out_p, "rb").read() if r.returncode == 0 else None
                    n_cases += 1
                    if got != want:
                        bad = "tool failed: " + r.stderr.strip() if got is None else next(
                            "first differing byte %d" % i for i in range(len(want)) if got[i] != want[i])
                        print("DISAGREE %s seed=%d kind=%s n_per_row=%d rows=%d imatrix=%s: %s"
                              % (t, seed, kind, n, nrows, use_w, bad))
                        return 1
                    os.remove(out_p)
    print("%d cases agree (%.1f s)" % (n_cases, time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
