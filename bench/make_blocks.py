#!/usr/bin/env python3
"""Writes bench/data/gaussian-blocks.gguf: the input of gguf-bench's dequant/<type>/<n> for every block
type. Each tensor "t.<type>" holds 65536 weights that ggml itself quantized (ggml_quantize_chunk, through
the shared oracle; the quantizers that need importance weights get the oracle's) from random Gaussian
floats: rows of 4096 whose scales spread over three decades and carry a few outliers, as checkpoints'
weights do. So a benchmark of up to 65536 weights sees no block twice, and the kernels' data-dependent
branches meet what real models give them, not a short pattern the branch predictor learns.

usage: python3 bench/make_blocks.py SHARED_DIR [OUT]   (deterministic: the same file every time)
"""
import os
import random
import sys

N = 65536
ROW = 4096
# Not block types: the benchmark draws these from Gaussian floats itself.
PLAIN = ("f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64")


def main(shared, out):
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import ggml_oracle as o
    g = o.Ggml()
    rng = random.Random(20261123)
    w = o.Writer()
    w.kvs += [("general.architecture", "string", "bench"),
              ("general.name", "string", "ggml-quantized Gaussian weights for gguf-bench")]
    for e in g.types():
        if e["name"] in PLAIN:
            continue
        values = []
        for _ in range(N // ROW):
            scale = 10 ** rng.uniform(-2.5, 0.5)
            row = [rng.gauss(0.0, scale) for _ in range(ROW)]
            for _ in range(ROW // 97):
                row[rng.randrange(ROW)] *= rng.choice([8.0, -12.0, 30.0])
            values += row
        data = g.quantize(e["id"], values, ROW)
        w.tensors.append(("t." + e["name"], e["id"], [ROW, N // ROW], data))
    w.write(out)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        sys.exit(2)
    here = os.path.dirname(os.path.abspath(__file__))
    main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else os.path.join(here, "data", "gaussian-blocks.gguf"))
