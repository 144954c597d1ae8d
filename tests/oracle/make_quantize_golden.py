#!/usr/bin/env python3
"""Writes tests/data/quantize/golden-a.gguf: ggml's own quantization of hostile and ordinary rows.

For every type the library quantizes, without and with importance weights, a few cases of 1-3 rows each
(row lengths: one block, a few blocks, a length that is not a multiple of 256 for the 32-weight types).
A case is three tensors: `<case>.src` (the f32 rows, shape [n, rows]), `<case>.importance` (f32, one
weight per column; only with weights) and `<case>.q` (ggml_quantize_chunk's bytes, in the quantized type,
the same shape). The metadata key `quantize.kinds.<case>` names each row's kind. The rows cycle through
the kinds of quantize_agreement.py (Gaussian, zeros, NaN, Inf, subnormal, 1e30 / FLT_MAX, constant,
outlier, negative only, a mix), so every type meets every kind.

usage: make_quantize_golden.py SHARED_DIR [OUT]   (OUT: tests/data/quantize/golden-a.gguf)
"""
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import quantize_agreement as qa  # noqa: E402  (the row and weight generators)

SPECIAL = ["nan", "inf", "zeros", "subnormal", "huge", "constant", "outlier", "negative", "mixed", "tiny"]


def lengths(block):
    if block == 1:
        return [(33, 3), (7, 1)]
    if block == 256:
        return [(256, 3), (512, 2), (256, 1)]
    if block == 32:
        return [(32, 3), (96, 2), (288, 1)]
    return [(block, 3), (3 * block, 2), (block, 1)]


def main():
    shared = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "data", "quantize", "golden-a.gguf")
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import ggml_oracle
    g = ggml_oracle.Ggml()
    w = ggml_oracle.Writer()
    f32 = g.type_id("f32")
    for name in qa.TYPES:
        t = g.type_id(name)
        block = g.traits(t).blck_size
        rng = random.Random("golden-" + name)
        kind_i = 0
        for weighted in (False, True):
            for idx, (n, rows) in enumerate(lengths(block)):
                kinds = []
                for _ in range(rows):
                    # Each case's first row is Gaussian; the rest walk through the special kinds.
                    kinds.append("gauss" if not kinds else SPECIAL[kind_i % len(SPECIAL)])
                    if len(kinds) > 1:
                        kind_i += 1
                if rows == 1:
                    kinds = [SPECIAL[kind_i % len(SPECIAL)]]
                    kind_i += 1
                data = qa.f32([v for k in kinds for v in qa.make_row(rng, k, n)])
                case = "%s.%s%d.%d" % (name, "w" if weighted else "u", n, idx)
                imat = qa.f32(qa.make_weights(rng, n)) if weighted else None
                q = g.quantize_chunk(t, data, n, imat)
                w.kvs.append(("quantize.kinds." + case, "string", ",".join(kinds)))
                shape = [n, rows] if rows > 1 else [n]  # ggml drops a trailing 1: the file is in its layout
                w.tensors.append((case + ".src", f32, shape, data))
                if imat is not None:
                    w.tensors.append((case + ".importance", f32, [n], imat))
                w.tensors.append((case + ".q", t, shape, q))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    w.write(out)
    print("%s: %d tensors, %d bytes" % (out, len(w.tensors), os.path.getsize(out)))


if __name__ == "__main__":
    main()
