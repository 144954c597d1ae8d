#!/usr/bin/env python3
"""The library's quantizers against ggml's ggml_quantize_chunk on random and hostile rows.

For every type the library quantizes, several seeds, with and without importance weights: each call
quantizes a matrix whose rows are of different kinds (Gaussian of random scale, all zeros, NaN, +-Inf,
subnormals, 1e30 and FLT_MAX, constant, one outlier, negative only, a mix of all of them) with the test
tool `quantize_raw` and with the oracle, and compares the bytes. Prints the first differing row, block
and byte per failure; exits 1 when anything differs.

usage: quantize_agreement.py QUANTIZE_RAW SHARED_DIR [--seeds N] [--types a,b,...]
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile

TYPES = ["f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K",
         "q6_K", "iq4_nl", "iq4_xs", "tq1_0", "tq2_0", "mxfp4", "nvfp4", "q1_0", "q2_0"]
FLT_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]
NAN, INF = float("nan"), float("inf")
KINDS = ["gauss", "zeros", "nan", "inf", "subnormal", "huge", "constant", "outlier", "negative", "mixed",
         "tiny", "gauss"]


def row_lengths(block):
    if block == 1:
        return [1, 7, 96]
    if block == 256:
        return [256, 512, 1024]
    return sorted({block, 2 * block, 3 * block, 9 * block if block == 32 else 5 * block, 4096})


def make_row(rng, kind, n):
    scale = 10 ** rng.uniform(-4, 2)
    g = [rng.gauss(0.0, scale) for _ in range(n)]
    if kind == "gauss":
        return g
    if kind == "zeros":
        return [0.0] * n if rng.random() < 0.5 else [rng.choice([0.0, -0.0]) for _ in range(n)]
    if kind == "nan":
        for _ in range(max(1, n // 40)):
            g[rng.randrange(n)] = NAN
        g[rng.choice([0, n - 1])] = NAN
        return g
    if kind == "inf":
        for _ in range(max(1, n // 60)):
            g[rng.randrange(n)] = rng.choice([INF, -INF])
        return g
    if kind == "subnormal":
        return [v * 1e-41 if rng.random() < 0.8 else rng.choice([1e-45, -1e-45, 1e-40]) for v in g]
    if kind == "tiny":
        return [v * 1e-12 for v in g]
    if kind == "huge":
        g = [v / scale * 1e30 for v in g]
        for _ in range(max(1, n // 50)):
            g[rng.randrange(n)] = rng.choice([FLT_MAX, -FLT_MAX, 3e38, 1e38])
        return g
    if kind == "constant":
        return [rng.choice([1.0, -1.0, scale, -scale, 0.5])] * n
    if kind == "outlier":
        g[rng.randrange(n)] *= rng.choice([1000.0, -1000.0, 50.0])
        return g
    if kind == "negative":
        return [-abs(v) for v in g]
    if kind == "mixed":
        specials = [NAN, INF, -INF, FLT_MAX, -FLT_MAX, 1e-45, -1e-40, 0.0, -0.0, 1e30, 65504.0, 65520.0]
        for _ in range(max(2, n // 16)):
            g[rng.randrange(n)] = rng.choice(specials)
        return g
    raise ValueError(kind)


def make_weights(rng, n):
    kind = rng.choice(["uniform", "uniform", "zeros_some", "wide"])
    if kind == "uniform":
        return [rng.uniform(0.1, 3.0) for _ in range(n)]
    if kind == "zeros_some":
        return [0.0 if rng.random() < 0.3 else rng.uniform(0.0, 2.0) for _ in range(n)]
    return [10 ** rng.uniform(-3, 3) for _ in range(n)]


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tool")
    ap.add_argument("shared")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--types", default=",".join(TYPES))
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.shared, "oracle"))
    import ggml_oracle
    g = ggml_oracle.Ggml()
    failures = checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        src_p, imat_p, out_p = (os.path.join(tmp, n) for n in ("src", "imat", "out"))
        for name in args.types.split(","):
            t = g.type_id(name)
            tr = g.traits(t)
            block, size = tr.blck_size, tr.type_size
            for seed in range(args.seeds):
                rng = random.Random("%s-%d" % (name, seed))
                for n in row_lengths(block):
                    rows = [make_row(rng, k, n) for k in KINDS]
                    data = f32([v for r in rows for v in r])
                    with open(src_p, "wb") as f:
                        f.write(data)
                    for weighted in (False, True):
                        imat = f32(make_weights(rng, n)) if weighted else None
                        want = g.quantize_chunk(t, data, n, imat)
                        cmd = [args.tool, name, src_p, out_p, str(n)]
                        if weighted:
                            with open(imat_p, "wb") as f:
                                f.write(imat)
                            cmd.append(imat_p)
                        subprocess.run(cmd, check=True)
                        with open(out_p, "rb") as f:
                            got = f.read()
                        checks += 1
                        if got == want:
                            continue
                        failures += 1
                        if len(got) != len(want):
                            print("DIFFER %s n=%d seed=%d weights=%s: %d bytes, ggml %d"
                                  % (name, n, seed, weighted, len(got), len(want)))
                            continue
                        i = next(i for i in range(len(got)) if got[i] != want[i])
                        row_bytes = n // block * size
                        r, within = divmod(i, row_bytes)
                        b, byte = divmod(within, size)
                        print("DIFFER %s n=%d seed=%d weights=%s: row %d (%s) block %d byte %d: ours %02x, ggml %02x"
                              % (name, n, seed, weighted, r, KINDS[r], b, byte, got[i], want[i]))
    print("quantize agreement: %d comparisons, %d differ" % (checks, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
