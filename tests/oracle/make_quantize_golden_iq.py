#!/usr/bin/env python3
"""Writes tests/data/quantize/golden-iq.gguf: ggml's bytes for the IQ grid quantizers on chosen inputs.

Usage: make_quantize_golden_iq.py [--out PATH] [--oracle DIR] [--check TOOL]

Per input <in> (a kind of values at one shape): tensor <in>.src (f32, ne = [n_per_row, rows]) and
<in>.importance (f32, one weight per column); per type and weighting, <in>.<type>.q (with importance)
or <in>.<type>.n.q (without, for the types ggml allows it), holding ggml_quantize_chunk's bytes. Where
ggml aborts (GGML_ASSERT: NaN, infinities, overflowing squares) there is no .q tensor; the case's name
(<in>.<type> or <in>.<type>.n) is listed in the metadata array quantize.refused instead. Each case runs
in a forked child so an abort only ends that child. --check TOOL also runs tests/tools' quantize_raw
on every case and fails unless it writes the same bytes, or refuses exactly where ggml aborts.
The file is written by ggml (gguf_write_to_file), in its layout. Deterministic.
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TYPES = ["iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m"]
NEEDS_IMATRIX = {"iq2_xxs", "iq2_xs", "iq1_s"}
SHAPES = [(256, 1), (512, 1), (256, 2)]


def values(kind, n, rng):
    g = [rng.gauss(0, 1) for _ in range(n)]
    if kind == "gauss":
        return g
    if kind == "zeros":
        return [0.0] * n
    if kind == "constant":
        return [1.5] * n
    if kind == "outlier":
        g[n // 3] = 1e4
        return g
    if kind == "denormal":
        return [v * 2.0 ** -140 for v in g]  # float subnormals (2^-126 and below), mixed signs
    if kind == "tiny":
        return [v * 1e-9 for v in g]  # below some of the group epsilons, above others
    if kind == "large":
        return [v * 1e17 for v in g]  # squares near 1e34: sums stay finite
    if kind == "huge":
        g[7] = 3e38  # its square overflows
        return g
    if kind == "mixed_overflow":
        return [(1e19 if i % 2 else -1e19) * (1 + i / n) for i in range(n)]
    if kind == "nan_scale":  # iq1_m's refitted scale is inf / inf: x86's default NaN, stored as 0xFE00
        return [(1.2e19 if i % 2 else -1.2e19) if i < 16 else v for i, v in enumerate(g)]
    if kind == "nan":
        g[5] = float("nan")
        return g
    if kind == "inf":
        g[40] = float("inf")
        return g
    if kind == "ninf":
        g[200 % n] = float("-inf")
        return g
    if kind == "sparse":  # whole 32-weight blocks of zeros between others (iq3_s's pointer skip)
        return [0.0 if (i // 32) % 3 == 1 else v for i, v in enumerate(g)]
    if kind == "ties":
        return [[-0.5, 0.25, 1.0][int(abs(v) * 7) % 3] for v in g]
    raise ValueError(kind)


KINDS = ["gauss", "zeros", "constant", "outlier", "denormal", "tiny", "large", "huge", "mixed_overflow",
         "nan_scale", "nan", "inf", "ninf", "sparse", "ties"]


def inputs():
    """(name, n_per_row, rows, kind, data f32 bytes, importance f32 bytes), deterministic."""
    out = []
    for kind in KINDS:
        for n, rows in SHAPES:
            rng = random.Random("%s-%d-%d" % (kind, n, rows))
            vals = [v for r in range(rows) for v in values(kind, n, rng)]
            imp = [0.0 if rng.random() < 0.05 else rng.uniform(0.1, 4.0) for _ in range(n)]
            out.append(("%s.%dx%d" % (kind, n, rows), n, rows, kind, struct.pack("<%df" % len(vals), *vals),
                        struct.pack("<%df" % n, *imp)))
    rng = random.Random("gauss-4096")
    vals = [rng.gauss(0, 0.02) for _ in range(4096)]
    imp = [rng.uniform(0.1, 4.0) for _ in range(4096)]
    out.append(("gauss.4096x1", 4096, 1, "gauss", struct.pack("<4096f", *vals), struct.pack("<4096f", *imp)))
    return out


def quantize_forked(g, t, data, n, imp):
    """ggml's bytes, or None when ggml aborts (in the child)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # ggml prints "Oops: ..." before some aborts
        os.dup2(devnull, 2)  # and its abort message
        try:
            out = g.quantize_chunk(g.type_id(t), data, n, imp)
            os.write(w, b"OK" + out)
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while True:
        c = os.read(r, 1 << 16)
        if not c:
            break
        chunks.append(c)
    os.close(r)
    os.waitpid(pid, 0)
    got = b"".join(chunks)
    return got[2:] if got.startswith(b"OK") else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "quantize", "golden-iq.gguf"))
    ap.add_argument("--oracle", default=os.environ.get("GGML_ORACLE_DIR", os.path.join(ROOT, "..", "shared", "oracle")))
    ap.add_argument("--check", metavar="TOOL")
    a = ap.parse_args()
    sys.path.insert(0, a.oracle)
    os.environ.setdefault("GGML_NO_BACKTRACE", "1")  # an abort would otherwise start gdb for a backtrace
    import ggml_oracle
    g = ggml_oracle.Ggml()
    for t in TYPES:  # build ggml's grids once, before forking
        g.lib.ggml_quantize_init(g.type_id(t))
    writer = ggml_oracle.Writer()
    refused, tensors, bad = [], [], 0
    tmp = tempfile.mkdtemp()
    for name, n, rows, kind, data, imp in inputs():
        tensors.append((name + ".src", 0, [n, rows], data))
        tensors.append((name + ".importance", 0, [n], imp))
        for t in TYPES:
            for weighted in ([True] if t in NEEDS_IMATRIX else [True, False]):
                case = "%s.%s%s" % (name, t, "" if weighted else ".n")
                want = quantize_forked(g, t, data, n, imp if weighted else None)
                if want is None:
                    refused.append(case)
                else:
                    tensors.append((case + ".q", g.type_id(t), [n, rows], want))
                if a.check:
                    paths = [os.path.join(tmp, f) for f in ("src", "imp", "out")]
                    open(paths[0], "wb").write(data)
                    open(paths[1], "wb").write(imp)
                    cmd = [a.check, t, paths[0], paths[2], str(n)] + ([paths[1]] if weighted else [])
                    res = subprocess.run(cmd, capture_output=True, text=True)
                    got = open(paths[2], "rb").read() if res.returncode == 0 else None
                    if res.returncode not in (0, 3) or got != want:
                        bad += 1
                        what = "ggml aborts" if want is None else "%d bytes" % len(want)
                        print("MISMATCH %s: ggml %s, ours %s" % (case, what, "refused" if got is None else
                              "differs at byte %d" % next((i for i in range(min(len(got), len(want or b"")))
                                                            if got[i] != want[i]), -1)))
                    if res.returncode == 0:
                        os.remove(paths[2])
    writer.kvs.append(("quantize.refused", "array", ("string", refused)))
    writer.tensors = tensors
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    raw = os.path.join(tmp, "raw.gguf")
    writer.write(raw)
    g.rewrite(raw, a.out)  # ggml's own writer lays the file out (tests/test_writer.cpp checks every fixture is)
    print("%s: %d tensors, %d refused cases, %d bytes" % (a.out, len(tensors), len(refused), os.path.getsize(a.out)))
    if a.check:
        print("check: %d mismatches" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
