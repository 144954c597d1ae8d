#!/usr/bin/env python3
"""What including gguf costs a program's build: CPU seconds (user + system) to compile the programs in
bench/compile_cost/, each against a file that includes only <vector>, <string> and <span>, measured in
the same run (this machine's speed moves from day to day: the figure is the difference).

    python3 bench/compile_cost.py [--cxx g++] [--runs 3] [--markdown]

Each program is compiled `--runs` times with -std=c++20 -O2 -c (and the flags below) and its median
taken; baseline.cpp is compiled before each of them, so that it sees the same machine.

| program        | what it is                                                   | extra flags                      |
| baseline.cpp   | the anchor                                                   |                                  |
| read.cpp       | <gguf/open.hpp>: open a file, read a key and the tensor names |                                  |
| umbrella.cpp   | <gguf/gguf.hpp>, the kernels from gguf::dispatch              | -DGGUF_RUNTIME_DISPATCH=1        |
| dequantize.cpp | header-only dequantization of any type                       | -march=native                    |
| tokenize.cpp   | <gguf/tokenizer.hpp>: build a tokenizer, encode and decode    |                                  |
| chat.cpp       | <gguf/chat_template.hpp>: compile a template, render JSON;   | -DGGUF_CHAT_TEMPLATE_LIBRARY=1   |
|                | the engine from gguf::chat                                    |                                  |
| chat.cpp       | the same, header-only: the engine compiled in the file        |                                  |
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS = [
    ("read.cpp", "reading a file: `<gguf/open.hpp>`", []),
    ("umbrella.cpp", "the umbrella `<gguf/gguf.hpp>`, kernels from `gguf::dispatch`", ["-DGGUF_RUNTIME_DISPATCH=1"]),
    ("dequantize.cpp", "dequantizing header-only, `-march=native`", ["-march=native"]),
    ("tokenize.cpp", "tokenizing: `<gguf/tokenizer.hpp>`", []),
    ("chat.cpp", "chat templates: `<gguf/chat_template.hpp>`, the engine from `gguf::chat`",
     ["-DGGUF_CHAT_TEMPLATE_LIBRARY=1"]),
    ("chat.cpp", "chat templates header-only: the engine compiled in the file", []),
]


def compile_once(cxx, source, flags):
    """CPU seconds of one compile."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([cxx, "-std=c++20", "-O2", "-I", os.path.join(ROOT, "include"), *flags, "-c",
                        os.path.join(HERE, "compile_cost", source), "-o", os.devnull], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("error: %s does not compile:\n%s" % (source, r.stderr[-2000:]))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--markdown", action="store_true", help="print the README's table")
    args = ap.parse_args()
    base, rows = [], []
    for name, what, flags in PROGRAMS:
        times = []
        for _ in range(args.runs):
            base.append(compile_once(args.cxx, "baseline.cpp", []))
            times.append(compile_once(args.cxx, name, flags))
        rows.append((name, what, flags, statistics.median(times)))
    b = statistics.median(base)
    version = subprocess.run([args.cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    if args.markdown:
        print("| job | CPU s | over the baseline |")
        print("|---|---:|---:|")
        print("| baseline: `<vector>`, `<string>`, `<span>` | %.2f | |" % b)
        for name, what, flags, t in rows:
            print("| %s | %.2f | **%+.2f s** |" % (what, t, t - b))
    else:
        print("%s, -O2, median of %d; baseline %.2f s" % (version, args.runs, b))
        for name, what, flags, t in rows:
            print("%-16s %6.2f s  %+6.2f s over the baseline  %s" % (name, t, t - b, " ".join(flags)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
