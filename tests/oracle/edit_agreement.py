#!/usr/bin/env python3
"""gguf-edit against ggml itself: for every file ggml reads, `gguf-edit IN -o OUT EDITS` must write the
bytes ggml's own writer writes for the same edits (`ggml_oracle.py rewrite IN OUT EDITS`); random files
(every value type, arrays of each, random tensors of every type) too, and ggml must read what gguf-edit
writes, with the JSON gguf-dump prints. Then a model llama.cpp quantized: the same logits after a
no-op rewrite, after editing general.name, and after a big-endian round trip.

usage: edit_agreement.py BUILD_EXAMPLES_DIR SHARED_DIR DATA_DIR
"""
import glob
import hashlib
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, **kw)


def main(bindir, shared, data):
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import ggml_oracle as o
    sys.path.insert(0, HERE)
    import models

    oracle = [sys.executable, os.path.join(shared, "oracle", "ggml_oracle.py")]
    edit = os.path.join(bindir, "gguf-edit")
    dump = os.path.join(bindir, "gguf-dump")
    tmp = tempfile.mkdtemp(prefix="gguf-edit-agreement-")
    ours, ref = os.path.join(tmp, "ours.gguf"), os.path.join(tmp, "ref.gguf")
    failures, compared = [], 0

    def same_as_ggml(src, edits, label):
        nonlocal compared
        r = run([edit, src, "-o", ours] + edits)
        if r.returncode != 0:
            failures.append("%s: gguf-edit failed: %s" % (label, r.stderr.decode(errors="replace").strip()))
            return
        r = run(oracle + ["rewrite", src, ref] + edits)
        if r.returncode != 0:
            failures.append("%s: ggml refused: %s" % (label, r.stderr.decode(errors="replace").strip()))
            return
        compared += 1
        if open(ours, "rb").read() != open(ref, "rb").read():
            failures.append("%s: bytes differ from ggml's" % label)

    edit_sets = [
        [],
        ["--set", "general.name=string:edited by gguf-edit"],
        ["--del", "general.name", "--set", "general.alignment=uint32:32"],
        ["--set", "x.u8=uint8:255", "--set", "x.i8=int8:-128", "--set", "x.u16=uint16:0xffff", "--set", "x.i16=int16:-1",
         "--set", "x.u32=uint32:4000000000", "--set", "x.i32=int32:-7", "--set", "x.u64=uint64:18446744073709551615",
         "--set", "x.i64=int64:-9223372036854775808", "--set", "x.f32=float32:0.1", "--set", "x.f64=float64:1e-300",
         "--set", "x.b=bool:false", "--set", "x.s=string:\u00e9\u6f22\U0001F600"],
        ["--set", "x.f32=float32:inf", "--set", "x.f64=float64:-0.0", "--del", "x.f32", "--set", "x.f32=float32:3.4e38"],
    ]
    files = sorted(glob.glob(os.path.join(shared, "data", "*", "*.gguf")) + glob.glob(os.path.join(data, "*", "*.gguf")))
    for f in files:
        try:
            o.Ggml().inspect(f)
        except ValueError:
            continue  # v1 and big-endian files: ggml cannot read them, so it has no rewrite to compare with
        for k, edits in enumerate(edit_sets):
            same_as_ggml(f, edits, "%s [edits %d]" % (os.path.relpath(f, os.path.dirname(data)), k))

    # Random files: every value type, arrays of each, random tensors of every type ggml reads.
    rng = random.Random(2026)
    types = [t for t in o.Ggml().types()]
    scalar_makers = {
        "uint8": lambda: rng.randrange(256), "int8": lambda: rng.randrange(-128, 128),
        "uint16": lambda: rng.randrange(65536), "int16": lambda: rng.randrange(-32768, 32768),
        "uint32": lambda: rng.randrange(2 ** 32), "int32": lambda: rng.randrange(-2 ** 31, 2 ** 31),
        "uint64": lambda: rng.randrange(2 ** 64), "int64": lambda: rng.randrange(-2 ** 63, 2 ** 63),
        "float32": lambda: struct.unpack("<f", struct.pack("<I", rng.randrange(2 ** 32)))[0],
        "float64": lambda: struct.unpack("<d", struct.pack("<Q", rng.randrange(2 ** 64)))[0],
        "bool": lambda: rng.random() < 0.5,
        "string": lambda: bytes(rng.randrange(1, 256) for _ in range(rng.randrange(20))).decode("latin-1"),
    }
    for n in range(40):
        w = o.Writer()
        for k in range(rng.randrange(15)):
            t = rng.choice(list(scalar_makers))
            if rng.random() < 0.3:
                w.kvs.append(("k%d" % k, "array", (t, [scalar_makers[t]() for _ in range(rng.randrange(30))])))
            else:
                w.kvs.append(("k%d" % k, t, scalar_makers[t]()))
        for i in range(rng.randrange(6)):
            tt = rng.choice(types)
            ne = [tt["block_size"] * rng.randrange(1, 4) if tt["block_size"] > 1 else rng.randrange(1, 70),
                  rng.randrange(1, 4)]
            size = ne[0] // tt["block_size"] * tt["type_size"] * ne[1]
            w.tensors.append(("t%d" % i, tt["id"], ne, bytes(rng.randrange(256) for _ in range(size))))
        src = os.path.join(tmp, "random.gguf")
        w.write(src)
        same_as_ggml(src, [], "random file %d" % n)
        same_as_ggml(src, ["--set", "k0=string:x", "--del", "k1"], "random file %d, edited" % n)
        # ggml reads what gguf-edit wrote, as gguf-dump prints it.
        run([edit, src, "-o", ours])
        ggml_json = run(oracle + ["inspect", ours]).stdout
        our_json = run([dump, "--json", ours]).stdout
        if ggml_json != our_json:
            failures.append("random file %d: ggml's JSON of gguf-edit's output differs from gguf-dump's" % n)

    # A model llama.cpp quantized, loaded by llama.cpp before and after.
    f32 = models.tiny_model(shared, os.path.join(tmp, "f32.gguf"))
    q = os.path.join(tmp, "q4_K_M.gguf")
    r = run(oracle + ["llama-quantize", f32, q, "Q4_K_M"])
    if r.returncode != 0:
        failures.append("llama-quantize failed: %s" % r.stderr.decode(errors="replace"))
    else:
        def logits(path):
            out = run(oracle + ["llama-load", path, "--tokens", "1,2,3,4"])
            return json.loads(out.stdout).get("logits_sha256")

        want = logits(q)
        for label, edits, byte_order in [("no-op rewrite", [], None), ("general.name edited", ["--set", "general.name=string:renamed"], None),
                                         ("big-endian round trip", [], "big")]:
            if byte_order:
                be = os.path.join(tmp, "be.gguf")
                run([edit, q, "-o", be, "--byte-order", "big"])
                run([edit, be, "-o", ours, "--byte-order", "little"])
                if open(ours, "rb").read() != open(q, "rb").read():
                    failures.append("model: the big-endian round trip changed bytes")
            else:
                same_as_ggml(q, edits, "model, %s" % label)
            got = logits(ours)
            if not want or got != want:
                failures.append("model, %s: logits %s, want %s" % (label, got, want))
        # In place: general.name of the same length, same logits; the tensor bytes do not move.
        inplace = os.path.join(tmp, "inplace.gguf")
        with open(q, "rb") as a, open(inplace, "wb") as b:
            b.write(a.read())
        r = run([edit, inplace, "--set", "general.name=string:tiny llamb", "--in-place"])
        if r.returncode != 0:
            failures.append("model, in place: %s" % r.stderr.decode(errors="replace").strip())
        elif logits(inplace) != want:
            failures.append("model, in place: logits changed")

    for f in failures:
        print("FAIL", f)
    print("edit agreement: %d files compared with ggml's writer, %d failures" % (compared, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]) if len(sys.argv) == 4 else (print(__doc__), 2)[1])
