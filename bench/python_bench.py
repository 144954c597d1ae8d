"""pygguf's speed, each figure against its anchor measured in the same run.

  PYTHONPATH=build/python python3 bench/python_bench.py [--gguf-bench build/bench/gguf-bench]
      [--repeat 5] [--types q4_K,q8_0,...] [--vocab FILE] [--no-gguf-py] [--json OUT]

1. Dequantizing 4 Mi weights (16 MiB of float32) into a new array, one thread: pygguf.dequantize against
   the C++ kernel writing a new buffer (gguf-bench's dequant_new/<type>/4194304, run right before), and
   against gguf-py's gguf.quants.dequantize where gguf-py can be had (tests/python/gguf_py.py). The
   ceiling where moving the bytes bounds both: numpy copying 16 MiB into a new array.
2. Opening a 100k-token vocabulary and reading every metadata value: pygguf against gguf-py's
   GGUFReader (its constructor builds every value's parts; contents() of each field after).
3. Quantizing 4 Mi weights, one thread: pygguf.quantize against gguf.quants.quantize, on the types
   gguf-py quantizes.

The blocks are bench/data/gaussian-blocks.gguf's (ggml quantized them from Gaussian weights), drawn at
random to 4 Mi weights as gguf-bench draws them; plain types are Gaussian weights. Times are medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import pygguf

ROOT = Path(__file__).resolve().parents[1]
N = 4 * 1024 * 1024  # weights
ROW = 4096


def median_seconds(fn, repeat: int) -> float:
    fn()  # warm: page tables, caches, lazy imports
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def blocks(t: pygguf.GGMLType, pool: pygguf.Model, rng: np.random.Generator) -> np.ndarray:
    """N weights of type t as a model holds them: uint8 rows of ROW weights."""
    name = f"t.{t.ggml_name}"
    if name in pool.tensors and t.quantized:
        src = pool.tensors[name].raw.reshape(-1, t.type_size)
        picked = src[rng.integers(0, src.shape[0], N // t.block_size)]
        return np.ascontiguousarray(picked).reshape(N // ROW, ROW // t.block_size * t.type_size)
    x = rng.standard_normal(N, dtype=np.float32)
    if t == pygguf.GGMLType.F32:
        raw = x.view(np.uint8)
    elif t == pygguf.GGMLType.F16:
        raw = x.astype(np.float16).view(np.uint8)
    elif t == pygguf.GGMLType.BF16:
        bits = x.view(np.uint32).astype(np.uint64)
        raw = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16).view(np.uint8)
    elif t == pygguf.GGMLType.F64:
        raw = x.astype(np.float64).view(np.uint8)
    else:
        return None
    return raw.reshape(N // ROW, -1)


def gguf_bench_rate(bench: Path, name: str, repeat: int) -> float | None:
    """gguf-bench's median weights/s for one benchmark."""
    out = subprocess.run(
        [str(bench), f"--benchmark_filter=^{name}$", f"--benchmark_repetitions={repeat}",
         "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
        capture_output=True, text=True)
    if out.returncode != 0:
        return None
    for b in json.loads(out.stdout)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            return b.get("weights/s")
    return None


def load_gguf_py(disabled: bool):
    if disabled:
        return None, "--no-gguf-py"
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import gguf_py  # noqa: PLC0415 (tests/python/gguf_py.py)

    return gguf_py.load()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf-bench", type=Path, default=ROOT / "build" / "bench" / "gguf-bench")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--types", default="")
    ap.add_argument("--vocab", type=Path, default=ROOT.parent / "shared" / "data" / "vocab" / "ggml-vocab-deepseek-llm.gguf")
    ap.add_argument("--no-gguf-py", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    gguf, why = load_gguf_py(args.no_gguf_py)
    print(f"pygguf {pygguf.__version__}; gguf-py: {'yes' if gguf else 'no (' + why + ')'}")
    results: dict = {"dequantize": [], "open": {}, "quantize": []}
    rng = np.random.default_rng(1)
    pool = pygguf.open(ROOT / "bench" / "data" / "gaussian-blocks.gguf")
    wanted = {s for s in args.types.split(",") if s}
    types = [t for t in pygguf.GGMLType if not wanted or t.ggml_name in wanted]

    # the ceiling: 16 MiB into a new array
    src = np.ones(N, np.float32)
    copy_s = median_seconds(lambda: src.copy(), args.repeat)
    print(f"\nceiling: numpy copies {N * 4 >> 20} MiB into a new array at {N / copy_s / 1e9:.2f} G weights/s")
    print("\n| type | pygguf G weights/s | C++ kernel, new buffer | pygguf / C++ | gguf-py | pygguf / gguf-py |")
    print("|---|---:|---:|---:|---:|---:|")
    for t in types:
        raw = blocks(t, pool, rng)
        if raw is None:
            continue
        cpp = gguf_bench_rate(args.gguf_bench, f"dequant_new/{t.ggml_name}/{N}", 3) if args.gguf_bench.exists() else None
        ours = N / median_seconds(lambda: pygguf.dequantize(raw, t, threads=1), args.repeat)
        ref = None
        if gguf is not None and t != pygguf.GGMLType.F32:  # gguf-py returns f32 data as it is: no work
            try:
                qt = gguf.GGMLQuantizationType(int(t))
                ref_s = median_seconds(lambda: gguf.quants.dequantize(raw, qt), max(1, args.repeat // 2))
                ref = N / ref_s
            except (ValueError, NotImplementedError, KeyError, AttributeError):
                ref = None
        row = {"type": t.ggml_name, "pygguf": ours, "cpp_new": cpp, "gguf_py": ref}
        results["dequantize"].append(row)
        fmt = lambda v: f"{v / 1e9:.2f}" if v else "-"  # noqa: E731
        ratio = lambda a, b: f"{a / b:.2f}x" if a and b else "-"  # noqa: E731
        print(f"| {t.ggml_name} | {fmt(ours)} | {fmt(cpp)} | {ratio(ours, cpp)} | {fmt(ref)} | {ratio(ours, ref)} |")
    results["ceiling_copy"] = N / copy_s

    if args.vocab.exists():
        def ours_open() -> None:
            with pygguf.open(args.vocab) as m:
                for k in m.metadata:
                    m.metadata[k]

        def ours_strings() -> None:
            with pygguf.open(args.vocab) as m:
                for k in m.metadata:
                    v = m.metadata[k]
                    if isinstance(v, pygguf.StringArray):
                        v.tolist()

        o = median_seconds(ours_open, max(args.repeat, 20))
        s = median_seconds(ours_strings, args.repeat)
        results["open"] = {"file": args.vocab.name, "pygguf": o, "pygguf_every_string": s}
        print(f"\nopen {args.vocab.name} and read every value: pygguf {o * 1e3:.2f} ms "
              f"(every string decoded to str: {s * 1e3:.1f} ms)", end="")
        if gguf is not None:
            t0 = time.perf_counter()
            r = gguf.GGUFReader(args.vocab)
            for f in r.fields.values():
                f.contents()
            g = time.perf_counter() - t0
            results["open"]["gguf_py"] = g
            print(f"; gguf-py's GGUFReader {g:.2f} s: {g / o:.0f}x")
        else:
            print()

    if gguf is not None:
        x = rng.standard_normal((N // ROW, ROW), dtype=np.float32)
        print("\n| type | pygguf G weights/s | gguf-py | pygguf / gguf-py |")
        print("|---|---:|---:|---:|")
        for t in types:
            if not t.can_quantize or t == pygguf.GGMLType.F32 or (t.quantized and t.block_size > ROW):
                continue
            qt = gguf.GGMLQuantizationType(int(t))
            try:
                ref_s = median_seconds(lambda: gguf.quants.quantize(x, qt), max(1, args.repeat // 2))
            except (NotImplementedError, ValueError, KeyError, AttributeError, TypeError):
                continue
            ours = N / median_seconds(lambda: pygguf.quantize(x, t, threads=1), args.repeat)
            results["quantize"].append({"type": t.ggml_name, "pygguf": ours, "gguf_py": N / ref_s})
            print(f"| {t.ggml_name} | {ours / 1e9:.3f} | {N / ref_s / 1e9:.3f} | {ours * ref_s / N:.0f}x |")

    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
