#!/usr/bin/env python3
"""gguf-quantize against llama.cpp's own llama_model_quantize: byte-identical files.

usage: quantize_model_agreement.py EXAMPLES_DIR SHARED_DIR [--work DIR] [--quick] [--ftypes A,B]

For tiny random-weight models of several architectures (tests/oracle/models.py; a 3-D expert model
among them) and every file type llama.cpp makes, without and with an importance matrix: llama.cpp
quantizes through the oracle's libllama (with the importance weights as its llama-quantize tool hands
them over, and the quantize.imatrix.* keys that tool adds as kv_overrides), gguf-quantize quantizes the
same model with --imatrix (a GGUF imatrix file, and a legacy .dat one) and the two files must be equal
byte for byte. File types that need an importance matrix are run with one only. Then the refusals:
unknown FTYPE, quantized input without --allow-requantize, an imatrix that lacks a needed entry or has
one of the wrong length: exit status, one error line, no output file.
Exits 1 on the first difference.
"""
import argparse
import ctypes as C
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402

NEEDS_IMATRIX = {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "Q2_K_S"}
# (model name, arch, layers, embd, dtype, file types: None for every one)
MODELS = [
    ("llama", "llama", 2, 256, "f16", None),
    ("qwen3moe", "qwen3moe", 2, 256, "f32", None),
    ("gemma2", "gemma2", 2, 256, "f32", ["Q4_K_M", "Q6_K", "IQ4_XS", "IQ2_XS", "Q3_K_S", "Q5_0"]),
    ("phi3", "phi3", 2, 256, "f16", ["Q4_K_M", "Q2_K", "IQ3_M", "BF16", "Q8_0"]),
    ("qwen2", "qwen2", 2, 256, "bf16", ["Q4_K_M", "IQ1_M", "Q5_K_S"]),
]
QUICK_FTYPES = ["Q4_K_M", "Q8_0", "IQ2_XS", "IQ3_S", "IQ1_M", "Q2_K_S", "F16", "BF16", "TQ1_0", "MXFP4_MOE"]


class _V(C.Union):
    _fields_ = [("i64", C.c_int64), ("f64", C.c_double), ("b", C.c_bool), ("s", C.c_char * 128)]


class _KVOverride(C.Structure):  # struct llama_model_kv_override
    _fields_ = [("tag", C.c_int), ("key", C.c_char * 128), ("val", _V)]


KV_INT, KV_STR = 0, 3


def llama_quantize(o, src, dst, ftype, imatrix, overrides):
    """llama_model_quantize with importance weights {name: [floats]} and kv_overrides [(key, int|str)]."""
    llama = o.Llama()
    p = llama.lib.llama_model_quantize_default_params()
    p.nthread, p.ftype = 2, o.FTYPES[ftype]
    keep = []
    if imatrix:
        rows = [(k.encode(), (C.c_float * len(w))(*w), len(w)) for k, w in imatrix.items()]
        p.imatrix = (o._ImatrixData * (len(rows) + 1))(*rows)
        keep.append(p.imatrix)
    if overrides:
        arr = (_KVOverride * (len(overrides) + 1))()
        for i, (k, v) in enumerate(overrides):
            arr[i].key = k.encode()
            if isinstance(v, int):
                arr[i].tag, arr[i].val.i64 = KV_INT, v
            else:
                arr[i].tag, arr[i].val.s = KV_STR, v.encode()[:127]
        p.kv_overrides = C.cast(arr, C.c_void_p)
        keep.append(arr)
    if llama.lib.llama_model_quantize(src.encode(), dst.encode(), C.byref(p)) != 0:
        raise ValueError(llama._error("llama_model_quantize failed"))


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def matrices(o, path):
    """name -> (ne0, n_mat) of every tensor of 2 or more dimensions: what llama-imatrix collects."""
    return {t["name"]: (t["shape"][0], t["shape"][2] if len(t["shape"]) > 2 else 1)
            for t in o.Ggml().inspect(path)["tensors"] if len(t["shape"]) > 1}


def make_imatrix(o, path, mats, seed, counts=3.0, drop=()):
    """A GGUF imatrix as llama-imatrix writes it, and the weights llama-quantize derives from it
    (in_sum2 / counts, per matrix) as {name: [floats]}; entries in `drop` are left out."""
    rng = random.Random(seed)
    w = o.Writer()
    w.kvs += [("general.type", "string", "imatrix"), ("imatrix.datasets", "array", ("string", ["calib.txt"])),
              ("imatrix.chunk_count", "uint32", 42), ("imatrix.chunk_size", "uint32", 512)]
    weights = {}
    for name, (ne0, n_mat) in sorted(mats.items()):
        if name in drop:
            continue
        sums = [rng.uniform(0.01, 40.0) for _ in range(ne0 * n_mat)]
        sums = list(struct.unpack("<%df" % len(sums), f32(sums)))
        weights[name] = [struct.unpack("<f", struct.pack("<f", s / counts))[0] for s in sums]
        w.tensors.append((name + ".in_sum2", 0, [ne0, n_mat], f32(sums)))
        w.tensors.append((name + ".counts", 0, [1, n_mat], f32([counts] * n_mat)))
    w.write(path)
    return weights


def make_legacy_imatrix(path, weights, ncall=42, dataset="calib.txt"):
    """The legacy .dat of the same weights: each entry's values times ncall (llama-imatrix's average),
    which llama-quantize divides by ncall again; then the chunk count and dataset name. Returns the
    weights llama-quantize reads back (two float roundings away from `weights`)."""
    out, back = struct.pack("<i", len(weights)), {}
    for name, vals in weights.items():
        n = name.encode()
        out += struct.pack("<i", len(n)) + n + struct.pack("<ii", ncall, len(vals))
        scaled = struct.unpack("<%df" % len(vals), f32([v * ncall for v in vals]))
        out += f32(scaled)
        back[name] = [struct.unpack("<f", struct.pack("<f", v / ncall))[0] for v in scaled]
    out += struct.pack("<i", ncall) + struct.pack("<i", len(dataset)) + dataset.encode()
    with open(path, "wb") as f:
        f.write(out)
    return back


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def first_diff(a, b):
    return next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("examples")
    ap.add_argument("shared")
    ap.add_argument("--work")
    ap.add_argument("--quick", action="store_true", help="a few file types per model")
    ap.add_argument("--ftypes")
    a = ap.parse_args()
    o = models._oracle(a.shared)
    tool = os.path.join(a.examples, "gguf-quantize")
    tmp = tempfile.TemporaryDirectory()
    work = a.work or tmp.name
    os.makedirs(work, exist_ok=True)
    start, checks = time.time(), 0

    def agree(label, ref, ours):
        nonlocal checks
        checks += 1
        x, y = open(ref, "rb").read(), open(ours, "rb").read()
        if x != y:
            print("DIFFER %s: %d vs %d bytes, first difference at byte %d" % (label, len(x), len(y), first_diff(x, y)))
            sys.exit(1)

    for name, arch, layers, embd, dtype, ftypes in MODELS:
        src = os.path.join(work, name + ".gguf")
        if not os.path.exists(src):
            models.tiny_model(a.shared, src, arch, n_layer=layers, n_embd=embd, dtype=dtype, seed=11)
        mats = matrices(o, src)
        imat = os.path.join(work, name + ".imatrix.gguf")
        weights = make_imatrix(o, imat, mats, name)
        legacy = os.path.join(work, name + ".imatrix.dat")
        legacy_weights = make_legacy_imatrix(legacy, weights)
        chosen = a.ftypes.split(",") if a.ftypes else (ftypes or sorted(o.FTYPES))
        if a.quick and not a.ftypes:
            chosen = [f for f in chosen if f in QUICK_FTYPES] if ftypes is None else chosen[:2]
        for ft in chosen:
            if ft == "NVFP4":  # the oracle's libllama cannot make it
                continue
            for with_imatrix in ([True] if ft in NEEDS_IMATRIX else [False, True]):
                ref, ours = os.path.join(work, "ref.gguf"), os.path.join(work, "ours.gguf")
                for p in (ref, ours):
                    if os.path.exists(p):
                        os.remove(p)
                if with_imatrix:
                    overrides = [("quantize.imatrix.file", imat), ("quantize.imatrix.dataset", "calib.txt"),
                                 ("quantize.imatrix.entries_count", len(weights)),
                                 ("quantize.imatrix.chunks_count", 42)]
                    llama_quantize(o, src, ref, ft, weights, overrides)
                else:
                    try:
                        llama_quantize(o, src, ref, ft, None, [])
                    except ValueError:  # some mixes need an imatrix for some tensors: both must refuse
                        r = run([tool, src, ours, ft])
                        if r.returncode != 1 or os.path.exists(ours) or not r.stderr.startswith("error:"):
                            print("NOT REFUSED %s %s without imatrix: exit %d" % (name, ft, r.returncode))
                            sys.exit(1)
                        checks += 1
                        continue
                cmd = [tool, "--threads", "2"] + (["--imatrix", imat] if with_imatrix else []) + [src, ours, ft]
                r = run(cmd)
                if r.returncode != 0:
                    print("FAILED %s %s imatrix=%s: %s" % (name, ft, with_imatrix, r.stderr.strip()))
                    sys.exit(1)
                agree("%s %s imatrix=%s" % (name, ft, with_imatrix), ref, ours)
                if with_imatrix and ft in ("Q4_K_M", "IQ2_XS"):  # the same through the legacy format
                    os.remove(ours)
                    overrides[0] = ("quantize.imatrix.file", legacy)
                    llama_quantize(o, src, ref, ft, legacy_weights, overrides)
                    r = run([tool, "--imatrix", legacy, src, ours, ft])
                    if r.returncode != 0:
                        print("FAILED %s %s legacy imatrix: %s" % (name, ft, r.stderr.strip()))
                        sys.exit(1)
                    agree("%s %s legacy imatrix" % (name, ft), ref, ours)
        print("%s: agrees (%.0f s)" % (name, time.time() - start))

    # refusals: exit 1 (2 for usage), one error line, nothing written
    src = os.path.join(work, "llama.gguf")
    mats = matrices(o, src)
    out = os.path.join(work, "refused.gguf")
    if os.path.exists(out):
        os.remove(out)
    short = os.path.join(work, "short.imatrix.gguf")
    make_imatrix(o, short, mats, "short", drop={"blk.0.ffn_down.weight"})
    wrong = os.path.join(work, "wrong.imatrix.gguf")
    make_imatrix(o, wrong, {k: (v[0] // 2, v[1]) if k == "blk.1.attn_q.weight" else v for k, v in mats.items()}, "w")
    q8 = os.path.join(work, "llama.q8_0.gguf")
    llama_quantize(o, src, q8, "Q8_0", None, [])
    cases = [
        ([src, out, "Q9_K"], 2, "unknown file type"),
        ([src, out, "IQ2_XS"], 1, "imatrix"),
        (["--imatrix", short, src, out, "IQ2_XS"], 1, "blk.0.ffn_down.weight"),
        (["--imatrix", wrong, src, out, "Q4_K_M"], 1, "blk.1.attn_q.weight"),
        ([q8, out, "Q4_K_M"], 1, "--allow-requantize"),
        (["--imatrix", os.path.join(work, "missing.dat"), src, out, "Q4_K_M"], 1, "missing.dat"),
        (["--output-tensor-type", "q9_9", src, out, "Q4_K_M"], 2, "q9_9"),
    ]
    for args, status, needle in cases:
        r = run([tool] + args)
        lines = r.stderr.strip().splitlines()
        ok = r.returncode == status and not os.path.exists(out) and needle in r.stderr
        if status == 1:
            ok = ok and len(lines) == 1 and lines[0].startswith("error:")
        if not ok:
            print("REFUSAL %s: exit %d (want %d), output %s, stderr %r"
                  % (" ".join(args), r.returncode, status, os.path.exists(out), r.stderr))
            sys.exit(1)
        checks += 1
    # requantizing with the flag is llama.cpp's requantization
    ref = os.path.join(work, "ref.gguf")
    p = o.Llama()
    prm = p.lib.llama_model_quantize_default_params()
    prm.nthread, prm.ftype, prm.allow_requantize = 2, o.FTYPES["Q4_K_M"], True
    if p.lib.llama_model_quantize(q8.encode(), ref.encode(), C.byref(prm)) != 0:
        raise ValueError("llama_model_quantize failed")
    r = run([tool, "--allow-requantize", q8, out, "Q4_K_M"])
    if r.returncode != 0:
        print("FAILED requantize: " + r.stderr)
        sys.exit(1)
    agree("requantize Q8_0 -> Q4_K_M", ref, out)
    print("%d files and refusals agree with llama.cpp (%.0f s)" % (checks, time.time() - start))


if __name__ == "__main__":
    main()
