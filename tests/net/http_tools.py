#!/usr/bin/env python3
"""The tools on http(s):// URLs, against a real HTTP server on 127.0.0.1 (tests/net/range_server.py).

    python3 tests/net/http_tools.py TOOLS_DIR DATA_DIR [SHARED_DIR]

For every committed model and vocabulary (DATA_DIR; SHARED_DIR/data/vocab too when given), for a
synthetic file whose header is 3 MiB, and for shard sets that gguf-split makes of the model:
`gguf-info --json URL` is `gguf-info --json FILE` (but for "file"), `gguf-dump --json URL` is
`gguf-dump --json FILE` byte for byte, each file costs at most 2 requests and its header plus 2 MiB, as
the server counts them; `gguf-diff URL FILE` finds them equal, `gguf-dequant URL` writes the bytes it
writes from the file and `gguf-chat [--ids] URL` the text (the ids) it writes from the file. Then the servers that misbehave: no range support, a missing file, a dropped
connection, a lying length, a silent server, a server that drips, a file that changes between requests,
errors with empty bodies (404, 429, 5xx: retried, Retry-After honoured within bounds), header lines and
headers too long, a redirect, a token: each a clean `error:` line that names the URL once and exit 1 (or
success, where it should succeed), within the timeout. Tensors stream: gguf-dequant writes a tensor of
several chunks (one row of them, too) as from the file, and a 64 GiB tensor (a server that claims a huge
file) in bounded memory until it is stopped. Exit 0 when every check passes, 1 listing the failures.
Standard library only.
"""
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

try:
    import resource  # POSIX: a limit on the tools' address space
except ImportError:
    resource = None

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
    try:
        p = subprocess.run([os.path.join(TOOLS, tool)] + list(args), capture_output=True, env=e, timeout=timeout)
    except subprocess.TimeoutExpired:  # a hang: killed, and a failure of every check on it
        return None, b"", "(killed after %d s)" % timeout, time.monotonic() - start
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
    check(rc == rc_l, "%s: gguf-info exit %s from the URL, %d from the file (%s)" % (what, rc, rc_l, err))
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


def gguf_file(path, tensors):
    """A GGUF v3 file of `tensors`, each (name, ggml type id, dims, data bytes), aligned to 32 bytes."""

    def s(b):
        return struct.pack("<Q", len(b)) + b

    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1))
        f.write(s(b"general.architecture") + struct.pack("<I", 8) + s(b"llama"))
        offset = 0
        for name, type_id, dims, data in tensors:
            f.write(s(name.encode()) + struct.pack("<I", len(dims)) + struct.pack("<%dQ" % len(dims), *dims))
            f.write(struct.pack("<IQ", type_id, offset))
            offset += (len(data) + 31) // 32 * 32
        f.write(b"\0" * ((32 - f.tell() % 32) % 32))
        for _, _, _, data in tensors:
            f.write(data + b"\0" * ((32 - len(data) % 32) % 32))


def streamed_files(root):
    """rows.gguf: tensors of several 1 Mi-element chunks (q8_0 rows, f16, one f32 row of 3 Mi elements),
    random bytes; rows-edited.gguf: the same with a few q8_0 blocks changed; huge.gguf: one f32 tensor of
    16 Gi elements (64 GiB), whose bytes only the padded server has."""
    rng = random.Random(7)
    q8 = bytearray(rng.randbytes(4096 // 32 * 34 * 700))
    f16 = rng.randbytes(2 * 1536 * 1024)
    row = rng.randbytes(4 * (3 << 20))
    os.makedirs(os.path.join(root, "stream"), exist_ok=True)
    gguf_file(os.path.join(root, "stream", "rows.gguf"),
              [("q8", 8, [4096, 700], bytes(q8)), ("half", 1, [1536, 1024], f16), ("row", 0, [3 << 20], row)])
    for at in (100, 1 << 20, len(q8) - 40):
        q8[at] ^= 0x55
    gguf_file(os.path.join(root, "stream", "rows-edited.gguf"),
              [("q8", 8, [4096, 700], bytes(q8)), ("half", 1, [1536, 1024], f16), ("row", 0, [3 << 20], row)])
    gguf_file(os.path.join(root, "stream", "huge.gguf"), [("huge", 0, [1 << 34], b"")])


def limited():
    """The address space of a tool that must not allocate a tensor's size: 1 GiB."""
    if resource is not None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


_address_limit = None


def address_limit_applies():
    """Whether the tools run under `limited`: not when they are built with AddressSanitizer, which reserves
    terabytes of address space for its shadow memory at start; there the resident-memory check alone
    bounds them."""
    global _address_limit
    if _address_limit is None:
        p = subprocess.run([os.path.join(TOOLS, "gguf-dump"), "--version"], capture_output=True,
                           preexec_fn=limited if resource else None)
        _address_limit = resource is not None and p.returncode == 0
    return _address_limit


def peak_memory_kib(pid):
    """The peak resident memory of a running process (Linux), or None."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def stopped_while_working(args, what, progress):
    """Runs a tool that would work for hours in 1 GiB of address space; `progress()` says when it has got
    on. Then SIGTERM: it must still be running, with bounded memory, and end as the tools end on SIGTERM."""
    p = subprocess.Popen([os.path.join(TOOLS, args[0])] + args[1:], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, preexec_fn=limited if address_limit_applies() else None)
    start = time.monotonic()
    while p.poll() is None and not progress() and time.monotonic() - start < 60:
        time.sleep(0.1)
    running = p.poll() is None
    got_on = progress()
    peak = peak_memory_kib(p.pid)
    if running:
        p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    err = p.stderr.read().decode("utf-8", "replace")
    check(running and got_on, "%s: ended (exit %s) before it got on: %r" % (what, p.returncode, err))
    check(peak is None or peak < 256 * 1024, "%s: %s KiB resident" % (what, peak))
    if running and os.name == "posix":
        lines = err.strip().splitlines()
        check(rc == 128 + signal.SIGTERM and len(lines) == 1 and lines[0].startswith("error: terminated"),
              "%s: on SIGTERM exit %s, stderr %r" % (what, rc, err))


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
            check(rc == 0, "%s: gguf-diff URL FILE: exit %s (%s%s)" % (names[1], rc, out[-300:], err))

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
        check(rc == 0 and b"equal" in out, "gguf-diff URL FILE: exit %s (%s)" % (rc, err))
        other = os.path.join(root, "edited.gguf")
        rc, _, err, _ = run("gguf-edit", model, "-o", other, "--set", "general.name=string:edited")
        assert rc == 0, err
        rc, out, err, _ = run("gguf-diff", url, other)
        check(rc == 1 and b"general.name" in out, "gguf-diff URL EDITED: exit %s, %s" % (rc, out[:200]))

        # gguf-chat: a model's chat template (and for --ids its tokenizer) from the URL's header, as from
        # the file.
        conversation = os.path.join(root, "conversation.json")
        with open(conversation, "w") as f:
            json.dump({"messages": [{"role": "user", "content": "Hello"}], "add_generation_prompt": True}, f)
        for rel in [r for r in singles if r.endswith("/ggml-vocab-phi-3.gguf")]:
            for ids in ([], ["--ids"]) if rel.startswith("shared-") else ([],):  # the reduced copy has no tokenizer
                rc, out, err, _ = run("gguf-chat", *ids, BASE + "/ok/" + rel, conversation)
                rc_l, out_l, err_l, _ = run("gguf-chat", *ids, os.path.join(root, rel), conversation)
                check(rc == 0 and rc_l == 0 and out and out == out_l,
                      "gguf-chat %s URL of %s: exit %s, %r (from the file: %r)" % (" ".join(ids), rel, rc, err, err_l))

        # Servers that misbehave: one `error:` line that names the URL once, exit 1 (gguf-diff: 2), with
        # the requests it should cost (None: 1 and 2 retries at most), within the time it should take.
        rel = "model/tiny-llama-q4_K_M.gguf"
        big = "big/big-header.gguf"
        first_tensor = {rel: dump["tensors"][0]["name"], big: "blob", "model/nothing.gguf": "x"}
        quick = {"GGUF_HTTP_TIMEOUT": "1"}
        cases = [
            ("norange", rel, {}, "does not support range requests", 1, 15),
            ("ok", "model/nothing.gguf", {}, "not found (HTTP 404)", 1, 15),
            ("empty", "model/nothing.gguf", {}, "not found (HTTP 404)", 1, 15),
            ("drop", rel, {}, "error:", None, 15),
            ("liar", rel, {}, "error:", None, 15),
            ("liar", big, {}, "error:", None, 15),
            ("drop", big, {}, "error:", None, 15),
            ("slow", rel, quick, "did not answer in time", 3, 15),
            # A drip: the low-speed limit ends each attempt, or the deadline ends the read.
            ("drip", rel, quick, "the server sent too slowly", 3, 15),
            ("drip", rel, {"GGUF_HTTP_DEADLINE": "2"}, "before the deadline", 1, 6),
            ("changing", big, {}, "the file changed between two requests", None, 15),
            ("auth", rel, {}, "refuses access", 1, 15),
            ("auth", rel, {"HF_TOKEN": "wrong"}, "refuses access", 1, 15),
            # Statuses with empty bodies: said first; 404 and 410 at once, 429 and 5xx after two retries.
            ("status-404", rel, {}, "not found (HTTP 404)", 1, 15),
            ("status-410", rel, {}, "not found (HTTP 410", 1, 15),
            ("status-429", rel, {}, "the server has had too many requests (HTTP 429)", 3, 15),
            ("status-500", rel, {}, "the server failed (HTTP 500)", 3, 15),
            ("status-502", rel, {}, "(HTTP 502)", 3, 15),
            ("status-503", rel, {}, "the server is unavailable (HTTP 503)", 3, 15),
            ("status-504", rel, {}, "(HTTP 504)", 3, 15),
            ("busy-long", rel, {}, "asks for a longer wait than allowed", 1, 15),
            # Headers too long: our words for libcurl's "Out of memory", and a bound on how many.
            ("bigheader", rel, {}, "a response header line longer than libcurl accepts", 1, 15),
            ("floodhead", rel, {}, "more than 256 KiB of response headers", 1, 15),
        ]
        out_file = os.path.join(root, "never.bin")
        for mode, path, env, text, requests, seconds in cases:
            url = BASE + "/" + mode + "/" + path
            for tool in ("gguf-info", "gguf-dump", "gguf-diff", "gguf-dequant"):
                args = {"gguf-diff": [url, model], "gguf-dequant": [url, first_tensor[path], out_file]}.get(tool, [url])
                reset()
                rc, _, err, took = run(tool, *args, env=env, timeout=60)
                sent = stats().get("/" + mode + "/" + path, [0, 0])[0]
                what = "%s %s/%s" % (tool, mode, path)
                if requests is None:
                    check(sent <= 3, "%s: %d requests (1 and 2 retries at most)" % (what, sent))
                else:
                    check(sent == requests, "%s: %d requests, not %d" % (what, sent, requests))
                want = 2 if tool == "gguf-diff" else 1
                lines = err.strip().splitlines()
                check(rc == want and len(lines) == 1 and lines[0].startswith("error: " + url + ": ") and text in err,
                      "%s: exit %s, stderr %r" % (what, rc, err))
                check(err.count(url) == 1 and err.count(os.path.basename(path)) == 1,
                      "%s: the URL named more than once: %r" % (what, err))
                check(took < seconds, "%s: %.1f s" % (what, took))
                check(not os.path.exists(out_file), "%s: wrote %s" % (what, out_file))
        for mode, path, env in [("redirect", rel, {}), ("auth", rel, {"HF_TOKEN": "sekrit"}), ("flaky", rel, {}),
                                ("flaky", big, {}), ("empty", rel, {}), ("padded", rel, {})]:
            same_info(BASE + "/" + mode + "/" + path, os.path.join(root, path), "%s %s" % (mode, path), env)
            rc, out, err, _ = run("gguf-dump", "--json", BASE + "/" + mode + "/" + path, env=env)
            _, out_l, _, _ = run("gguf-dump", "--json", os.path.join(root, path))
            check(rc == 0 and out == out_l, "gguf-dump %s %s: exit %s, %s" % (mode, path, rc, err))
        # A 429 with "Retry-After: 1" (every other request): waited for, then the header as from the file.
        reset()
        rc, out, err, took = run("gguf-info", "--json", BASE + "/busy/" + rel)
        _, out_l, _, _ = run("gguf-info", "--json", os.path.join(root, rel))
        check(rc == 0 and info_without_file(out) == info_without_file(out_l), "busy: exit %s, %s" % (rc, err))
        check(took >= 1 and stats()["/busy/" + rel][0] == 2, "busy: %.1f s, %s requests" % (took, stats()))

        # Tensors stream through one request and a bounded buffer: several chunks, rows or one long row,
        # to each output type, as from the file, from a good server and from one that fails every other
        # request; gguf-diff compares them a chunk at a time.
        streamed_files(root)
        rows = os.path.join(root, "stream", "rows.gguf")
        out_url, out_file = os.path.join(root, "url.bin"), os.path.join(root, "file.bin")
        for mode in ("ok", "flaky"):
            for name in ("q8", "half", "row"):
                for to in ("f32", "f16", "bf16"):
                    what = "gguf-dequant --to %s %s/stream/rows.gguf %s" % (to, mode, name)
                    reset()
                    rc, _, err, _ = run("gguf-dequant", "--to", to, BASE + "/" + mode + "/stream/rows.gguf", name, out_url)
                    run("gguf-dequant", "--to", to, rows, name, out_file)
                    check(rc == 0 and open(out_url, "rb").read() == open(out_file, "rb").read(),
                          "%s: exit %s, other bytes (%s)" % (what, rc, err))
                    sent = stats()["/" + mode + "/stream/rows.gguf"][0]
                    check(sent <= (3 if mode == "ok" else 9), "%s: %d requests" % (what, sent))
        edited = os.path.join(root, "stream", "rows-edited.gguf")
        for a, b in [(BASE + "/ok/stream/rows.gguf", edited), (rows, BASE + "/flaky/stream/rows-edited.gguf"),
                     (BASE + "/ok/stream/rows.gguf", BASE + "/ok/stream/rows.gguf")]:
            rc, out, err, _ = run("gguf-diff", a, b)
            rc_l, out_l, _, _ = run("gguf-diff", rows, edited if b != a else rows)
            check(rc == rc_l and out == out_l, "gguf-diff %s %s: exit %s, %s%s" % (a, b, rc, out, err))
        # A 64 GiB tensor (a server that claims a 1 TiB file): headers as any, and gguf-dequant and gguf-diff
        # at work in 1 GiB of address space until they are stopped, their output never half-written.
        huge = BASE + "/padded/stream/huge.gguf"
        rc, out, err, _ = run("gguf-dump", huge)
        check(rc == 0 and b"68719476736" in out, "gguf-dump of a 64 GiB tensor: exit %s, %s" % (rc, err))
        out_huge = os.path.join(root, "huge.bin")

        def written():
            temps = [n for n in os.listdir(root) if n.startswith(".huge.bin.")]
            return any(os.path.getsize(os.path.join(root, n)) >= 64 << 20 for n in temps)

        stopped_while_working(["gguf-dequant", huge, "huge", out_huge], "gguf-dequant of a 64 GiB tensor", written)
        check(not os.path.exists(out_huge) and not [n for n in os.listdir(root) if n.startswith(".huge.bin.")],
              "gguf-dequant of a 64 GiB tensor: an output or a temporary left: %s" % os.listdir(root))
        reset()
        stopped_while_working(["gguf-diff", huge, huge], "gguf-diff of a 64 GiB tensor",
                              lambda: stats().get("/padded/stream/huge.gguf", [0, 0])[1] >= 128 << 20)

        # A shard of a set missing on the server: a 404 with a body or an empty one, named.
        names = sets[0]
        os.remove(os.path.join(root, names[-1]))
        for mode in ("ok", "empty"):
            url = BASE + "/" + mode + "/" + names[0]
            rc, _, err, _ = run("gguf-info", url)
            check(rc == 1 and err.startswith("error: " + url + ": ") and "a shard of the model is missing" in err
                  and os.path.basename(names[-1]) in err and err.count(url) == 1,
                  "a missing shard (%s): exit %s, %s" % (mode, rc, err))
        # The first shard missing, given by its own URL: named once (the URL ends with its name).
        os.remove(os.path.join(root, names[0]))
        url = BASE + "/empty/" + names[0]
        rc, _, err, _ = run("gguf-dump", "--model", url)
        check(rc == 1 and "not found (HTTP 404)" in err and err.count(os.path.basename(names[0])) == 1,
              "the given shard missing: exit %s, %s" % (rc, err))
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(root, ignore_errors=True)
    print("%d checks, %d failed" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
