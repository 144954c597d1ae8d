#!/usr/bin/env python3
"""The tools on http(s):// URLs, against a real HTTP server on 127.0.0.1 (tests/net/range_server.py).

    python3 tests/net/http_tools.py TOOLS_DIR DATA_DIR [SHARED_DIR]

For every committed model and vocabulary (DATA_DIR; SHARED_DIR/data/vocab too when given), for a
synthetic file whose header is 3 MiB, and for shard sets that gguf-split makes of the model:
`gguf-info --json URL` is `gguf-info --json FILE` (but for "file"), `gguf-dump --json URL` is
`gguf-dump --json FILE` byte for byte, each file costs at most 2 requests and its header plus 2 MiB, as
the server counts them; `gguf-diff URL FILE` finds them equal and `gguf-dequant URL` writes the bytes it
writes from the file. Then the servers that misbehave: no range support, a missing file, a dropped
connection, a lying length, a silent server, a file that changes between requests, a redirect, a token:
each a clean `error:` line and exit 1 (or success, where it should succeed), within the timeout. Exit 0
when every check passes, 1 listing the failures. Standard library only.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
FAILURES = []
CHECKS = [0]


def check(ok, what):
    CHECKS[0] += 1
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)


def run(tool, *args, env=None, timeout=120):
    e = dict(os.environ)
    e.pop("HF_TOKEN", None)
    e.pop("HUGGING_FACE_HUB_TOKEN", None)
    e.update(env or {})
    start = time.monotonic()
    p = subprocess.run([os.path.join(TOOLS, tool)] + list(args), capture_output=True, env=e, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace"), time.monotonic() - start


def get(url):
    with urllib.request.urlopen(url) as r:
        return r.read()


def stats():
    return json.loads(get(BASE + "/_stats"))


def reset():
    get(BASE + "/_reset")


def header_size(path):
    rc, out, err, _ = run("gguf-dump", "--json", path)
    assert rc == 0, err
    return json.loads(out)["data_offset"]


def info_without_file(out):
    d = json.loads(out)
    d.pop("file", None)
    return d


def same_info(url, local, what, env=None):
    """gguf-info --json of the URL is that of the file (but for "file"), or fails as the file does."""
    rc, out, err, _ = run("gguf-info", "--json", url, env=env)
    rc_l, out_l, err_l, _ = run("gguf-info", "--json", local)
    check(rc == rc_l, "%s: gguf-info exit %d from the URL, %d from the file (%s)" % (what, rc, rc_l, err))
    if rc == 0 and rc_l == 0:
        check(info_without_file(out) == info_without_file(out_l), "%s: gguf-info --json differs" % what)
    elif rc == rc_l:  # facts that cannot be told (a vocabulary alone) fail the same way from both
        check(err.split(": ", 1)[-1] == err_l.split(": ", 1)[-1], "%s: other errors: %s / %s" % (what, err, err_l))


def big_header_file(path, size=3 << 20, data=24 << 20):
    """A GGUF v3 file whose header holds an array of strings of `size` bytes in all, then one f32 tensor
    of `data` bytes (zeros): what the reader must stop before."""
    words = []
    total = 0
    i = 0
    while total < size:
        w = ("token-%d-" % i + "x" * (i % 23)).encode()
        words.append(w)
        total += 8 + len(w)
        i += 1
    key = b"test.big_array"
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 1, 2))
        f.write(struct.pack("<Q", len(b"general.architecture")) + b"general.architecture")
        f.write(struct.pack("<IQ", 8, 5) + b"llama")
        f.write(struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", 9, 8, len(words)))
        for w in words:
            f.write(struct.pack("<Q", len(w)) + w)
        f.write(struct.pack("<Q", 4) + b"blob" + struct.pack("<IQIQ", 1, data // 4, 0, 0))
        f.write(b"\0" * ((32 - f.tell() % 32) % 32))
        f.write(b"\0" * data)


def served_files(root, data, shared):
    """Copies the test files under `root`; returns (single files, shard sets as lists of names)."""
    singles = []
    for sub, d in [("model", os.path.join(data, "model")), ("vocab", os.path.join(data, "vocab"))] + (
        [("shared-vocab", os.path.join(shared, "data", "vocab"))] if shared else []
    ):
        if not os.path.isdir(d):
            continue
        os.makedirs(os.path.join(root, sub), exist_ok=True)
        for name in sorted(os.listdir(d)):
            if name.endswith(".gguf"):
                shutil.copy(os.path.join(d, name), os.path.join(root, sub, name))
                singles.append(sub + "/" + name)
    os.makedirs(os.path.join(root, "big"), exist_ok=True)
    big_header_file(os.path.join(root, "big", "big-header.gguf"))
    singles.append("big/big-header.gguf")
    model = os.path.join(data, "model", "tiny-llama-q4_K_M.gguf")
    sets = []
    for label, args in [("by-count", ["--split-max-tensors", "8"]),
                        ("light-first", ["--split-max-tensors", "12", "--no-tensor-first-split"])]:
        os.makedirs(os.path.join(root, "sets"), exist_ok=True)
        rc, _, err, _ = run("gguf-split", *args, model, os.path.join(root, "sets", label))
        assert rc == 0, err
        names = sorted(n for n in os.listdir(os.path.join(root, "sets")) if n.startswith(label + "-"))
        sets.append(["sets/" + n for n in names])
    return singles, sets


def main():
    global TOOLS, BASE
    TOOLS, data = sys.argv[1], sys.argv[2]
    shared = sys.argv[3] if len(sys.argv) > 3 and os.path.isdir(os.path.join(sys.argv[3], "data", "vocab")) else None
    root = tempfile.mkdtemp(prefix="gguf-http-")
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "range_server.py"), root], stdout=subprocess.PIPE)
    try:
        BASE = "http://127.0.0.1:%d" % int(server.stdout.readline())
        singles, sets = served_files(root, data, shared)
        print("%d files and %d shard sets on %s" % (len(singles), len(sets), BASE), flush=True)

        # Every file: the same facts and the same dump as from the file, in at most 2 requests and the
        # header plus 2 MiB.
        for rel in singles:
            local = os.path.join(root, rel)
            url = BASE + "/ok/" + rel
            reset()
            same_info(url, local, rel)
            s = stats().get("/ok/" + rel, [0, 0])
            limit = header_size(local) + (2 << 20)
            check(s[0] <= 2, "%s: %d requests" % (rel, s[0]))
            check(s[1] <= limit, "%s: %d bytes sent, more than the header + 2 MiB (%d)" % (rel, s[1], limit))
            if header_size(local) > 2 << 20:
                print("%s: header %d bytes: %d requests, %d bytes sent" % (rel, header_size(local), s[0], s[1]))
            rc, out, err, _ = run("gguf-dump", "--json", url)
            _, out_l, _, _ = run("gguf-dump", "--json", local)
            check(rc == 0 and out == out_l, "%s: gguf-dump --json differs (%s)" % (rel, err))

        # Shard sets: from the first shard's URL and from another's, the model of the files.
        for names in sets:
            for given in (names[0], names[-1]):
                reset()
                rc, out, err, _ = run("gguf-info", "--json", BASE + "/ok/" + given)
                _, out_l, _, _ = run("gguf-info", "--json", os.path.join(root, given))
                check(rc == 0 and info_without_file(out) == info_without_file(out_l),
                      "%s: gguf-info of the set differs (%s)" % (given, err))
                st = stats()
                for n in names:
                    s = st.get("/ok/" + n, [0, 0])
                    check(1 <= s[0] <= 2, "%s: %d requests for %s" % (given, s[0], n))
                rc, out, err, _ = run("gguf-dump", "--model", "--json", BASE + "/ok/" + given)
                _, out_l, _, _ = run("gguf-dump", "--model", "--json", os.path.join(root, given))
                check(rc == 0 and out == out_l, "%s: gguf-dump --model --json differs (%s)" % (given, err))
            model = os.path.join(data, "model", "tiny-llama-q4_K_M.gguf")
            rc, out, err, _ = run("gguf-diff", BASE + "/ok/" + names[1], model)
            check(rc == 0, "%s: gguf-diff URL FILE: exit %d (%s%s)" % (names[1], rc, out[-300:], err))

        # Tensors by their ranges: gguf-dequant and gguf-diff.
        model = os.path.join(data, "model", "tiny-llama-q4_K_M.gguf")
        url = BASE + "/ok/model/tiny-llama-q4_K_M.gguf"
        dump = json.loads(run("gguf-dump", "--json", model)[1])
        for t in dump["tensors"][:3]:
            a, b = os.path.join(root, "a.bin"), os.path.join(root, "b.bin")
            reset()
            rc, _, err, _ = run("gguf-dequant", url, t["name"], a)
            check(rc == 0, "gguf-dequant URL %s: %s" % (t["name"], err))
            run("gguf-dequant", model, t["name"], b)
            check(rc == 0 and open(a, "rb").read() == open(b, "rb").read(), "gguf-dequant URL %s: other bytes" % t["name"])
            check(stats()["/ok/model/tiny-llama-q4_K_M.gguf"][0] <= 3, "gguf-dequant URL: more than 3 requests")
        rc, out, err, _ = run("gguf-diff", url, model)
        check(rc == 0 and b"equal" in out, "gguf-diff URL FILE: exit %d (%s)" % (rc, err))
        other = os.path.join(root, "edited.gguf")
        rc, _, err, _ = run("gguf-edit", model, "-o", other, "--set", "general.name=string:edited")
        assert rc == 0, err
        rc, out, err, _ = run("gguf-diff", url, other)
        check(rc == 1 and b"general.name" in out, "gguf-diff URL EDITED: exit %d, %s" % (rc, out[:200]))

        # Servers that misbehave: one `error:` line, exit 1, within the timeout (GGUF_HTTP_TIMEOUT=1 s).
        rel = "model/tiny-llama-q4_K_M.gguf"
        big = "big/big-header.gguf"
        quick = {"GGUF_HTTP_TIMEOUT": "1"}
        cases = [
            ("norange", rel, {}, "does not support range requests"),
            ("ok", "model/nothing.gguf", {}, "not found"),
            ("drop", rel, {}, "error:"),
            ("liar", rel, {}, "error:"),
            ("liar", big, {}, "error:"),
            ("drop", big, {}, "error:"),
            ("slow", rel, quick, "did not answer in time"),
            ("changing", big, {}, "the file changed between two requests"),
            ("auth", rel, {}, "refuses access"),
            ("auth", rel, {"HF_TOKEN": "wrong"}, "refuses access"),
        ]
        for mode, path, env, text in cases:
            for tool in ("gguf-info", "gguf-dump", "gguf-diff"):
                args = [BASE + "/" + mode + "/" + path] + ([model] if tool == "gguf-diff" else [])
                reset()
                rc, _, err, took = run(tool, *args, env=env, timeout=60)
                sent = stats().get("/" + mode + "/" + path, [0, 0])[0]
                check(sent <= 3, "%s %s/%s: %d requests (1 and 2 retries at most)" % (tool, mode, path, sent))
                want = 2 if tool == "gguf-diff" else 1
                lines = err.strip().splitlines()
                check(rc == want and len(lines) == 1 and lines[0].startswith("error:") and text in err,
                      "%s %s/%s: exit %d, stderr %r" % (tool, mode, path, rc, err))
                check(took < 15, "%s %s/%s: %.1f s" % (tool, mode, path, took))
        for mode, path, env in [("redirect", rel, {}), ("auth", rel, {"HF_TOKEN": "sekrit"}), ("flaky", rel, {}),
                                ("flaky", big, {})]:
            same_info(BASE + "/" + mode + "/" + path, os.path.join(root, path), "%s %s" % (mode, path), env)
            rc, out, err, _ = run("gguf-dump", "--json", BASE + "/" + mode + "/" + path, env=env)
            _, out_l, _, _ = run("gguf-dump", "--json", os.path.join(root, path))
            check(rc == 0 and out == out_l, "gguf-dump %s %s: exit %d, %s" % (mode, path, rc, err))
        # A shard of a set missing on the server.
        names = sets[0]
        os.remove(os.path.join(root, names[-1]))
        rc, _, err, _ = run("gguf-info", BASE + "/ok/" + names[0])
        check(rc == 1 and "a shard of the model is missing" in err and os.path.basename(names[-1]) in err,
              "a missing shard: exit %d, %s" % (rc, err))
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(root, ignore_errors=True)
    print("%d checks, %d failed" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
