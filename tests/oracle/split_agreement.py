#!/usr/bin/env python3
"""gguf-split and sharded models against llama.cpp itself.

1. Shards: `gguf-split --split-max-tensors N` writes the bytes the oracle's `split` (gguf-split's own ggml
   calls) writes, for every N; the shards load in llama.cpp with the unsplit model's logits, and so do
   the shards of --split-max-size and --no-tensor-first-split, and shards laid out as gguf-py writes them.
2. Merge: `gguf-split --merge` writes the bytes llama.cpp's `gguf-split --merge` writes (rebuilt here with
   the same ggml calls: gguf_set_val_u16(split.count, 0), gguf_set_kv, gguf_add_tensor per shard), from
   any shard; `--drop-split-keys` gives back the original file; merged files load with the same logits.
3. Shard sets, mutated (a shard dropped, duplicated, swapped, renumbered, wrong counts, keys removed or
   of another type, a tensor moved or in two shards, a shard truncated): gguf-dump --model accepts
   exactly when llama.cpp's loader does, with an error naming the cause, but for the documented
   differences (DIFFERENCES below), where it refuses or accepts on purpose.

usage: split_agreement.py BUILD_EXAMPLES_DIR SHARED_DIR DATA_DIR
"""
import ctypes as C
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOKENS = "1,2,3,4"

# Where gguf::open_model decides otherwise than llama.cpp's loader, on purpose (README, "Sharded models").
DIFFERENCES = {
    # llama.cpp reads split.count from the first shard only; a shard that disagrees is a damaged set.
    "split.count wrong in a later shard": ("refuse", "accept"),
    # llama.cpp insists on being given the first shard; any shard names the whole set.
    "opened through shard 3": ("accept", "refuse"),
}


def run(cmd):
    return subprocess.run(cmd, capture_output=True)


def main(bindir, shared, data):
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import ggml_oracle as o

    oracle = [sys.executable, os.path.join(shared, "oracle", "ggml_oracle.py")]
    split_tool = os.path.join(bindir, "gguf-split")
    dump = os.path.join(bindir, "gguf-dump")
    tmp = tempfile.mkdtemp(prefix="gguf-split-agreement-")
    failures, checks = [], 0
    g = o.Ggml()
    L = g.lib

    def fail(msg):
        failures.append(msg)
        print("FAIL:", msg)

    def load(paths):
        r = run(oracle + ["llama-load"] + list(paths) + ["--tokens", TOKENS])
        try:
            return json.loads(r.stdout)
        except ValueError:
            return {"ok": False, "error": r.stderr.decode(errors="replace")}

    def read(p):
        with open(p, "rb") as f:
            return f.read()

    def ggml_merge(first, out):
        """llama.cpp's gguf_merge, step for step, with ggml's own calls."""
        n = int([m for m in g.inspect(first)["metadata"] if m["key"] == "split.count"][0]["value"])
        prefix = first[: -len("-00001-of-00000.gguf")]
        paths = [first] + ["%s-%05d-of-%05d.gguf" % (prefix, i + 1, n) for i in range(1, n)]
        out_ctx = L.gguf_init_empty()
        ctxs = []
        try:
            for i, p in enumerate(paths):
                meta = C.c_void_p()
                ctx = g.open(p, meta)
                ctxs.append((ctx, meta, p))
                if i == 0:
                    L.gguf_set_val_u16(ctx, b"split.count", 0)
                    L.gguf_set_kv(out_ctx, ctx)
                for t in range(L.gguf_get_n_tensors(ctx)):
                    L.gguf_add_tensor(out_ctx, L.ggml_get_tensor(meta, L.gguf_get_tensor_name(ctx, t)))
            head = (C.c_uint8 * L.gguf_get_meta_size(out_ctx))()
            L.gguf_get_meta_data(out_ctx, head)
            with open(out, "wb") as f:
                f.write(bytes(head))
                for ctx, _, p in ctxs:
                    with open(p, "rb") as src:
                        for t in range(L.gguf_get_n_tensors(ctx)):
                            src.seek(L.gguf_get_data_offset(ctx) + L.gguf_get_tensor_offset(ctx, t))
                            d = src.read(L.gguf_get_tensor_size(ctx, t))
                            f.write(d + b"\0" * ((-len(d)) % 32))
        finally:
            for ctx, meta, _ in ctxs:
                L.gguf_free(ctx)
                L.ggml_free(meta)
            L.gguf_free(out_ctx)

    def rebuild(src, dst, drop=(), add=(), kv_edit=None):
        """A shard rewritten with the oracle's pure-Python Writer: tensors dropped or added (name -> (type,
        shape, bytes)), keys edited by kv_edit(list)."""
        info = json.loads(run([dump, "--json", src]).stdout)
        w = o.Writer(version=3)
        kvs = []
        for m in info["metadata"]:
            v = m["value"]
            if m["type"] == "array":
                v = (v["type"], v["value"])
            kvs.append((m["key"], m["type"], v))
        w.kvs = kv_edit(kvs) if kv_edit else kvs
        raw = read(src)
        for t in info["tensors"]:
            if t["name"] in drop:
                continue
            at = info["data_offset"] + t["offset"]
            w.tensors.append((t["name"], g.type_id(t["type"]), t["shape"], raw[at:at + t["size"]]))
        for name, (tid, shape, blob) in add:
            w.tensors.append((name, tid, shape, blob))
        w.write(dst)

    def tensor_of(path, name):
        info = json.loads(run([dump, "--json", path]).stdout)
        raw = read(path)
        for t in info["tensors"]:
            if t["name"] == name:
                at = info["data_offset"] + t["offset"]
                return g.type_id(t["type"]), t["shape"], raw[at:at + t["size"]]
        raise KeyError(name)

    model = os.path.join(data, "model", "tiny-llama-q4_K_M.gguf")
    want = load([model])
    assert want.get("ok"), want
    n_tensors = len(g.inspect(model)["tensors"])

    # 1. Shards, byte for byte, for every count; and they load.
    for n in [1, 2, 3, 5, 7, 20, 21, 128]:
        d = os.path.join(tmp, "n%d" % n)
        os.makedirs(d)
        ref = json.loads(run(oracle + ["split", model, os.path.join(d, "ref"), "--max-tensors", str(n)]).stdout)
        r = run([split_tool, "--split-max-tensors", str(n), model, os.path.join(d, "ours")])
        if r.returncode != 0:
            fail("split %d: %s" % (n, r.stderr.decode(errors="replace")))
            continue
        ours = sorted(glob.glob(os.path.join(d, "ours-*.gguf")))
        checks += 1
        if len(ours) != len(ref) or any(read(a) != read(b) for a, b in zip(ours, ref)):
            fail("split --split-max-tensors %d: shards differ from gguf-split's" % n)
        got = load([ours[0]])
        if got.get("logits_sha256") != want["logits_sha256"]:
            fail("split %d: llama.cpp logits %s" % (n, got.get("logits_sha256") or got.get("error")))
        # Merged back, from the last shard: llama.cpp's bytes; without the keys, the original.
        merged, mref, back = (os.path.join(d, x) for x in ("merged.gguf", "merged-ref.gguf", "back.gguf"))
        r = run([split_tool, "--merge", ours[-1], merged])
        ggml_merge(ref[0], mref)
        checks += 1
        if r.returncode != 0 or read(merged) != read(mref):
            fail("merge of %d shards: differs from llama.cpp's gguf-split --merge" % len(ours))
        run([split_tool, "--merge", "--drop-split-keys", ours[0], back])
        checks += 1
        if read(back) != read(model):
            fail("split %d + merge --drop-split-keys: not the original bytes" % n)
        if load([merged]).get("logits_sha256") != want["logits_sha256"]:
            fail("merge of %d shards: llama.cpp logits differ" % len(ours))
        # --merge never overwrites, as llama.cpp.
        if run([split_tool, "--merge", ours[0], merged]).returncode != 1:
            fail("merge over an existing file did not fail")

    for label, opts in [("--split-max-size 1M", ["--split-max-size", "1M"]),
                        ("--no-tensor-first-split", ["--split-max-tensors", "8", "--no-tensor-first-split"]),
                        ("--split-max-size, metadata-only first", ["--split-max-size", "1M", "--no-tensor-first-split"])]:
        d = tempfile.mkdtemp(dir=tmp)
        r = run([split_tool] + opts + [model, os.path.join(d, "m")])
        shards = sorted(glob.glob(os.path.join(d, "m-*.gguf")))
        checks += 1
        if r.returncode != 0 or not shards:
            fail("%s: %s" % (label, r.stderr.decode(errors="replace")))
            continue
        got = load([shards[0]])
        if got.get("logits_sha256") != want["logits_sha256"]:
            fail("%s: llama.cpp logits %s" % (label, got.get("logits_sha256") or got.get("error")))
        ours = run([dump, "--model", "--json", shards[-1]])
        if ours.returncode != 0 or len(json.loads(ours.stdout)["tensors"]) != n_tensors:
            fail("%s: gguf-dump --model does not see the whole model" % label)
    # --dry-run writes nothing.
    d = tempfile.mkdtemp(dir=tmp)
    r = run([split_tool, "--dry-run", "--split-max-tensors", "4", model, os.path.join(d, "m")])
    if r.returncode != 0 or os.listdir(d) or b"n_split: 6" not in r.stdout:
        fail("--dry-run: %r, wrote %s" % (r.stdout, os.listdir(d)))

    # Shards as gguf-py writes them: every key in the first, then split.no, split.count, split.tensors.count.
    d = tempfile.mkdtemp(dir=tmp)
    info = json.loads(run([dump, "--json", model]).stdout)
    names = [t["name"] for t in info["tensors"]]
    groups = [names[:8], names[8:16], names[16:]]
    for k, group in enumerate(groups):
        def kv_edit(kvs, k=k):
            kvs = kvs if k == 0 else []
            return kvs + [("split.no", "uint16", k), ("split.count", "uint16", 3), ("split.tensors.count", "int32", len(names))]
        rebuild(model, os.path.join(d, "py-%05d-of-00003.gguf" % (k + 1)), drop=set(names) - set(group), kv_edit=kv_edit)
    checks += 1
    got = load([os.path.join(d, "py-00001-of-00003.gguf")])
    mine = run([dump, "--model", os.path.join(d, "py-00002-of-00003.gguf")])
    if got.get("logits_sha256") != want["logits_sha256"] or mine.returncode != 0:
        fail("gguf-py layout: llama.cpp %s, gguf-dump --model exit %d %s" % (
            got.get("logits_sha256") or got.get("error"), mine.returncode, mine.stderr.decode(errors="replace")))

    # 3. Mutated shard sets: accept or refuse as llama.cpp's loader does.
    base = os.path.join(tmp, "base")
    os.makedirs(base)
    run([split_tool, "--split-max-tensors", "5", model, os.path.join(base, "m")])
    shards = sorted(glob.glob(os.path.join(base, "m-*.gguf")))
    assert len(shards) == 5, shards

    def case(label, mutate, open_with=0, cause=None):
        """mutate(dir, paths) changes a copy of the shard set; both loaders open shard `open_with`."""
        nonlocal checks
        d = tempfile.mkdtemp(dir=tmp)
        paths = []
        for p in shards:
            shutil.copy(p, d)
            paths.append(os.path.join(d, os.path.basename(p)))
        mutate(d, paths)
        target = paths[open_with]
        llama = load([target])
        mine = run([dump, "--model", target])
        ours_ok, llama_ok = mine.returncode == 0, bool(llama.get("ok"))
        err = mine.stderr.decode(errors="replace").strip()
        checks += 1
        verdict = ("accept" if ours_ok else "refuse", "accept" if llama_ok else "refuse")
        if label in DIFFERENCES:
            if verdict != DIFFERENCES[label]:
                fail("%s: gguf %s, llama.cpp %s; documented: %s" % (label, verdict[0], verdict[1], DIFFERENCES[label]))
        elif ours_ok != llama_ok:
            fail("%s: gguf %s (%s), llama.cpp %s (%s)" % (label, verdict[0], err, verdict[1], llama.get("error", "")))
        if not ours_ok and cause and cause not in err:
            fail("%s: the error does not name the cause '%s': %s" % (label, cause, err))
        if ours_ok and llama_ok and llama.get("logits_sha256") != want["logits_sha256"]:
            fail("%s: accepted, but llama.cpp's logits differ" % label)
        print("%-44s gguf %-7s llama.cpp %-7s %s" % (label, verdict[0], verdict[1], err[:110]))

    def rewrite(path, *edits):
        tmpf = path + ".tmp"
        r = run(oracle + ["rewrite", path, tmpf] + list(edits))
        assert r.returncode == 0, r.stderr
        os.replace(tmpf, path)

    def rename_all(d, paths, count):
        for i, p in enumerate(paths):
            os.rename(p, os.path.join(d, "m-%05d-of-%05d.gguf" % (i + 1, count)))
            paths[i] = os.path.join(d, "m-%05d-of-%05d.gguf" % (i + 1, count))

    def move_tensor(d, paths):
        name = json.loads(run([dump, "--json", paths[1]]).stdout)["tensors"][0]["name"]
        blob = tensor_of(paths[1], name)
        rebuild(paths[1], paths[1] + ".x", drop={name})
        rebuild(paths[3], paths[3] + ".x", add=[(name, blob)])
        os.replace(paths[1] + ".x", paths[1])
        os.replace(paths[3] + ".x", paths[3])

    def copy_tensor(d, paths):
        name = json.loads(run([dump, "--json", paths[1]]).stdout)["tensors"][0]["name"]
        rebuild(paths[3], paths[3] + ".x", add=[(name, tensor_of(paths[1], name))])
        os.replace(paths[3] + ".x", paths[3])

    def truncate(d, paths):
        with open(paths[2], "r+b") as f:
            f.truncate(os.path.getsize(paths[2]) - 64)

    case("intact", lambda d, p: None)
    case("opened through shard 3", lambda d, p: None, open_with=2)
    case("shard 3 missing", lambda d, p: os.remove(p[2]), cause="a shard of the model is missing: 'm-00003-of-00005.gguf'")
    case("last shard missing", lambda d, p: os.remove(p[4]), cause="m-00005-of-00005.gguf")
    case("shard 2 copied over shard 3", lambda d, p: shutil.copy(p[1], p[2]), cause="split.no differs")
    case("shards 2 and 4 swapped", lambda d, p: (os.rename(p[1], p[1] + ".x"), os.rename(p[3], p[1]),
                                                 os.rename(p[1] + ".x", p[3])), cause="split.no differs")
    case("renumbered as 6 shards", lambda d, p: rename_all(d, p, 6), cause="split.count differs from the shard count")
    case("split.count wrong in the first shard", lambda d, p: rewrite(p[0], "--set", "split.count=uint16:4"),
         cause="split.count differs from the shard count in the file name")
    case("split.count wrong in a later shard", lambda d, p: rewrite(p[3], "--set", "split.count=uint16:4"),
         cause="split.count differs between shards")
    case("split.count 1 in every shard", lambda d, p: [rewrite(x, "--set", "split.count=uint16:1") for x in p],
         cause="split.tensors.count differs from the tensors in the file")
    case("split.count of another type", lambda d, p: rewrite(p[0], "--set", "split.count=uint32:5"),
         cause="is uint32, not uint16")
    case("split.no missing in shard 2", lambda d, p: rewrite(p[1], "--del", "split.no"), cause="a shard has no split.no")
    case("split.tensors.count wrong in the first shard", lambda d, p: rewrite(p[0], "--set", "split.tensors.count=int32:20"),
         cause="split.tensors.count differs between shards")
    case("split.tensors.count wrong in every shard",
         lambda d, p: [rewrite(x, "--set", "split.tensors.count=int32:20") for x in p],
         cause="split.tensors.count differs from the tensors in the shards")
    case("split.tensors.count missing", lambda d, p: rewrite(p[0], "--del", "split.tensors.count"),
         cause="the first shard has no split.tensors.count")
    case("a tensor moved from shard 2 to shard 4", move_tensor)
    case("a tensor in shards 2 and 4", copy_tensor, cause="a tensor is in two shards")
    case("shard 3 truncated", truncate, cause="m-00003-of-00005.gguf")

    shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks, %d failures" % (checks, len(failures)))
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
