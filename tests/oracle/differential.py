#!/usr/bin/env python3
"""Differential test against ggml itself: mutates committed GGUF files (byte changes, bit flips,
deletions, insertions in the header and metadata) and compares our `gguf-dump --json` with ggml's own
parse (the oracle's inspect) on each mutant.

- Both accept: the JSON must be identical, byte for byte.
- Only ggml accepts: allowed only for the checks ggml lacks (tensor data past the end of the file,
  bool bytes other than 0/1).
- Only we accept: allowed only where ggml is stricter than the format (offsets with gaps or out of
  order, v1 files, big-endian files, nested arrays).
Anything else fails.

usage: differential.py GGUF_DUMP SHARED_DIR DATA_DIR [SEED] [COUNT]
"""
import json
import os
import random
import subprocess
import sys
import tempfile

OURS_ONLY_OK = ("tensor data extends past the end of the file", "bool byte is neither 0 nor 1")
GGML_ONLY_OK = ("has offset", "GGUFv1 is no longer supported", "mismatch between the host and model endianness",
                "has invalid GGUF type 9")


def main():
    dump, shared, data = sys.argv[1:4]
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    count = int(sys.argv[5]) if len(sys.argv) > 5 else 300
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import ggml_oracle
    ggml = ggml_oracle.Ggml()
    seeds = [os.path.join(root, f) for root, _, files in os.walk(data) for f in sorted(files)
             if f.endswith(".gguf") and ".expected." not in f]
    rng = random.Random(seed)
    stats, failures = {}, []
    tmp = tempfile.mkdtemp()
    for it in range(count):
        b = bytearray(open(rng.choice(seeds), "rb").read())
        head = min(len(b), 4096)
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(8, head)
            k = rng.random()
            if k < 0.5:
                b[pos] = rng.randrange(256)
            elif k < 0.7:
                b[pos] ^= 1 << rng.randrange(8)
            elif k < 0.85:
                del b[pos:pos + rng.randint(1, 16)]
            else:
                b[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        path = os.path.join(tmp, "mutant-%d.gguf" % it)
        with open(path, "wb") as f:
            f.write(b)
        try:
            ref, ref_err = json.dumps(ggml.inspect(path), ensure_ascii=False) + "\n", ""
        except ValueError as e:
            ref, ref_err = None, str(e)
        run = subprocess.run([dump, "--json", path], capture_output=True)
        ours = run.stdout.decode("utf-8", "surrogateescape") if run.returncode == 0 else None
        our_err = run.stderr.decode("utf-8", "replace")
        if run.returncode not in (0, 1):
            kind = "CRASH or bad exit %d" % run.returncode
        elif ref is not None and ours is not None:
            kind = "both accept, same JSON" if ref == ours else "DIFFERENT JSON"
        elif ref is None and ours is None:
            kind = "both reject"
        elif ours is None:
            kind = "only ggml accepts" + ("" if any(s in our_err for s in OURS_ONLY_OK) else ": UNEXPECTED")
        else:
            kind = "only we accept" + ("" if any(s in ref_err for s in GGML_ONLY_OK) else ": UNEXPECTED")
        stats[kind] = stats.get(kind, 0) + 1
        if kind.isupper() or "UNEXPECTED" in kind or "DIFFERENT" in kind or "CRASH" in kind:
            keep = os.path.join(tmp, "failure-%d.gguf" % it)
            os.rename(path, keep)
            failures.append("%s: %s (ggml: %s; ours: %s)" % (keep, kind, ref_err.strip()[:200], our_err.strip()))
        else:
            os.remove(path)
    for kind, n in sorted(stats.items()):
        print("%5d  %s" % (n, kind))
    for f in failures:
        print("FAIL " + f)
    print("differential: %d mutants, %d failures" % (count, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
