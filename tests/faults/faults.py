#!/usr/bin/env python3
"""Fault injection for the gguf command-line tools: what a crash, a signal or a failing disk may leave.

    python3 tests/faults/faults.py EXAMPLES_DIR DATA_DIR [--kills N] [--seed S] [--only TEXT]...

EXAMPLES_DIR holds the built tools (gguf-edit, gguf-split, gguf-quantize, gguf-info, gguf-dump), DATA_DIR
is the repository's tests/data. The script works in a fresh directory under /tmp (removed at the end),
runs the tools as processes, kills them at random instants or makes their writes fail, and then checks
the input, the output and the whole directory against sha256 digests taken before. Each case is one
guarantee, stated in its docstring; the output is one line per case and a last line
`N passed, M failed` (`, K skipped`). Exit status 0 when nothing failed.

Stdlib only. Cases that need root (chattr, chown, mount) are skipped, with the reason, where not
permitted. --seed makes the random kill instants reproducible (the seed is printed first).
"""

from __future__ import annotations

import argparse
import collections
import fcntl
import hashlib
import os
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

TIMEOUT = 60  # seconds: a tool that takes longer on these tiny files hangs
JOURNAL_SUFFIX = ".gguf-split-journal"
BACKUP_SUFFIX = ".gguf-backup"


# ---------------------------------------------------------------------------------------------------
# Outcomes


class Failure(Exception):
    """A guarantee does not hold (the message says which, and what was seen)."""


class Skip(Exception):
    """The case cannot run here (the message says why)."""


def expect(condition, message):
    """Fails the case with `message` (a string, or a callable giving one) unless `condition`."""
    if not condition:
        raise Failure(message() if callable(message) else message)


# ---------------------------------------------------------------------------------------------------
# Files and directories


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read(path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def snapshot(directory) -> dict:
    """Every entry of `directory` (hidden ones too): name -> sha256 of a file, 'link:TEXT', or 'dir'."""
    out = {}
    for name in os.listdir(directory):
        p = os.path.join(directory, name)
        if os.path.islink(p):
            out[name] = "link:" + os.readlink(p)
        elif os.path.isdir(p):
            out[name] = "dir"
        else:
            try:
                out[name] = sha(read(p))
            except OSError as e:  # a file removed while we look: report it as such
                out[name] = "unreadable:" + e.strerror
    return out


def tree_snapshot(directory) -> dict:
    """`snapshot` of a directory and every directory below it, keyed by relative path."""
    out = {}
    for root, dirs, files in os.walk(directory):
        rel = os.path.relpath(root, directory)
        for name, h in snapshot(root).items():
            out[os.path.normpath(os.path.join(rel, name))] = h
    return out


def describe(snap: dict, reference: dict | None = None) -> str:
    """A directory snapshot in a message: names, with a short digest, and which reference file each is."""
    if not snap:
        return "(empty)"
    parts = []
    for name in sorted(snap):
        h = snap[name]
        tag = h[:10] if len(h) == 64 else h
        if reference is not None and name in reference:
            tag += " same" if reference[name] == h else " DIFFERENT"
        parts.append(f"{name} [{tag}]")
    return ", ".join(parts)


def describe_sets(snap: dict, old: dict, new: dict) -> str:
    """A directory in a message, each entry tagged old, new (or old=new when both hold those bytes), or
    other."""
    if not snap:
        return "(empty)"
    parts = []
    for name in sorted(snap):
        h = snap[name]
        tags = [t for t, ref in (("old", old), ("new", new)) if ref.get(name) == h]
        parts.append(f"{name} [{'='.join(tags) or 'other'}]")
    return ", ".join(parts)


def diff(snap: dict, want: dict) -> str:
    """What differs between a directory and what it should hold."""
    extra = sorted(set(snap) - set(want))
    missing = sorted(set(want) - set(snap))
    changed = sorted(n for n in set(snap) & set(want) if snap[n] != want[n])
    out = []
    if extra:
        out.append("unexpected: " + ", ".join(extra))
    if missing:
        out.append("missing: " + ", ".join(missing))
    if changed:
        out.append("different bytes: " + ", ".join(changed))
    return "; ".join(out) or "same"


def clear(directory):
    """Removes everything in `directory` (which stays)."""
    for name in os.listdir(directory):
        p = os.path.join(directory, name)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.remove(p)


def fill(directory, files: dict):
    """Makes `directory` hold exactly `files` (name -> bytes)."""
    clear(directory)
    for name, data in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)


def temp_re(name: str):
    """The temporaries a writer of the file `name` makes beside it: `.NAME.gguf-tmp-XXXXXX`."""
    return re.compile(r"^\." + re.escape(name) + r"\.gguf-tmp-[^/]+$")


def temporaries(directory, names) -> list:
    """The temporaries in `directory` of any of the target file names `names`."""
    pats = [temp_re(n) for n in names]
    return sorted(e for e in os.listdir(directory) if any(p.match(e) for p in pats))


def any_temporaries(directory) -> list:
    return sorted(e for e in os.listdir(directory) if ".gguf-tmp-" in e)


def shard_names(stem: str, n: int) -> list:
    return [f"{stem}-{k:05d}-of-{n:05d}.gguf" for k in range(1, n + 1)]


def shards_in(snap: dict, stem: str) -> dict:
    """The entries of a snapshot that are shards of the set named `stem` (any count)."""
    pat = re.compile(re.escape(stem) + r"-\d{5}-of-\d{5}\.gguf$")
    return {n: h for n, h in snap.items() if pat.match(n)}


# ---------------------------------------------------------------------------------------------------
# Running the tools


def shown(arg) -> str:
    s = os.fsdecode(arg) if isinstance(arg, bytes) else str(arg)
    s = s.encode("utf-8", "backslashreplace").decode("utf-8")
    return s if len(s) <= 80 else s[:40] + f"...({len(s)} chars)"


class Ran:
    """A finished tool run: exit code (negative: the signal that ended it), output, duration."""

    def __init__(self, argv, rc, out, err, secs):
        self.argv, self.rc, self.out, self.err, self.secs = argv, rc, out, err, secs

    @property
    def err_text(self) -> str:
        return self.err.decode("utf-8", "backslashreplace")

    def lines(self) -> list:
        return self.err_text.splitlines()

    def error_lines(self) -> list:
        return [line for line in self.lines() if line.startswith("error:")]

    def __str__(self):
        tool = os.path.basename(shown(self.argv[0]))
        cmd = " ".join([tool] + [shown(a) for a in self.argv[1:]])
        status = f"exit {self.rc}" if self.rc >= 0 else f"killed by {signal.Signals(-self.rc).name}"
        err = self.err_text.strip()
        if len(err) > 600:
            err = err[:600] + "..."
        return f"`{cmd}` -> {status}; stderr: {err!r}"


def expect_exit(r: Ran, codes, what=""):
    codes = (codes,) if isinstance(codes, int) else tuple(codes)
    expect(r.rc in codes, lambda: f"{what}expected exit {' or '.join(map(str, codes))}: {r}")


def expect_error(r: Ran, codes=(1,), contains=(), what=""):
    """Exit with one of `codes` and exactly one `error:` line on stderr, holding each text of `contains`
    (case-insensitive)."""
    expect_exit(r, codes, what)
    errors = r.error_lines()
    expect(len(errors) == 1, lambda: f"{what}expected exactly one 'error:' line, got {len(errors)}: {r}")
    for text in (contains,) if isinstance(contains, (str, bytes)) else contains:
        expect(text.lower() in errors[0].lower(), lambda: f"{what}the error line does not mention {text!r}: {r}")


def expect_notes(r: Ran, tool: str, names, what=""):
    """For each removed stale temporary in `names`: a line on stderr starting with the tool's name and
    mentioning it."""
    for name in names:
        expect(any(line.startswith(tool) and name in line for line in r.lines()),
               lambda: f"{what}no '{tool}: ...' note on stderr mentions the stale temporary {name}: {r}")


class Env:
    """The tools, the inputs and the random source shared by all cases."""

    def __init__(self, examples, data, work, kills, rng):
        self.examples, self.data, self.work, self.kills, self.rng = examples, data, work, kills, rng
        self.inputs = os.path.join(work, "inputs")
        self.input_snapshot = {}
        self._cases = 0

    def exe(self, tool) -> str:
        return os.path.join(self.examples, tool)

    def run(self, tool, *args, fsize=None, timeout=TIMEOUT) -> Ran:
        """Runs a tool to its end. `fsize`: the RLIMIT_FSIZE it runs under."""
        argv = [self.exe(tool), *args]
        preexec = None
        if fsize is not None:
            def preexec():
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                               preexec_fn=preexec)
        except subprocess.TimeoutExpired:
            raise Failure(f"{tool} did not finish in {timeout} s: {' '.join(shown(a) for a in args)}")
        return Ran(argv, p.returncode, p.stdout, p.stderr, time.monotonic() - t0)

    def run_signalled(self, tool, args, delay, sig=signal.SIGKILL) -> Ran:
        """Starts a tool and sends it `sig` `delay` seconds later (it may have finished by then)."""
        argv = [self.exe(tool), *args]
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        left = t0 + delay - time.monotonic()
        if left > 0:
            time.sleep(left)
        try:
            os.kill(p.pid, sig)  # not yet waited for: the pid is still this process's child
        except ProcessLookupError:
            pass
        try:
            out, err = p.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise Failure(f"{tool} did not end within {TIMEOUT} s of {signal.Signals(sig).name}")
        return Ran(argv, p.returncode, out, err, time.monotonic() - t0)

    def mkdir(self, *parts) -> str:
        p = os.path.join(self.work, *parts)
        os.makedirs(p, exist_ok=True)
        return p

    def case_dir(self, name) -> str:
        self._cases += 1
        return self.mkdir("cases", f"{self._cases:02d}-{re.sub(r'[^A-Za-z0-9.-]+', '_', name)}")

    def input(self, name) -> str:
        return os.path.join(self.inputs, name)

    def input_bytes(self, name) -> bytes:
        return read(self.input(name))


# ---------------------------------------------------------------------------------------------------
# The inputs


MODEL = "model.gguf"            # tests/data/model/tiny-llama-q4_K_M.gguf: 21 tensors, 571 KB
SMALL = "small.gguf"            # a vocabulary (no tensors, 6 KB)
QUANTS = "quants.gguf"          # tests/data/quants/quants-v1.gguf (82 KB)
MEDIUM = "medium.gguf"          # tests/data/quants/quants-s2.expected.gguf (241 KB)
SHARDS3 = "shards3"             # MODEL split in 3 (--split-max-tensors 8), a directory of inputs
EDIT = "general.name=string:edited by the fault tests"
IN_PLACE_EDIT = "llama.context_length=uint32:2048"  # same size: fits in place


def prepare_inputs(env: Env):
    """Copies the committed files the cases read into the work directory, and splits MODEL once."""
    os.makedirs(env.inputs)
    shutil.copyfile(os.path.join(env.data, "model", "tiny-llama-q4_K_M.gguf"), env.input(MODEL))
    shutil.copyfile(os.path.join(env.data, "vocab", "ggml-vocab-bert-bge.gguf"), env.input(SMALL))
    shutil.copyfile(os.path.join(env.data, "quants", "quants-v1.gguf"), env.input(QUANTS))
    shutil.copyfile(os.path.join(env.data, "quants", "quants-s2.expected.gguf"), env.input(MEDIUM))
    os.makedirs(env.input(SHARDS3))
    r = env.run("gguf-split", "--split-max-tensors", "8", env.input(MODEL), os.path.join(env.input(SHARDS3), "model"))
    if r.rc != 0 or len(os.listdir(env.input(SHARDS3))) != 3:
        raise Failure(f"setup: splitting the model into 3 shards: {r}; made {os.listdir(env.input(SHARDS3))}")
    env.input_snapshot = tree_snapshot(env.inputs)


# ---------------------------------------------------------------------------------------------------
# Writers and the states of their directory


class Scenario:
    """A writer run over one directory: what the directory holds before (old) and after an
    uninterrupted run (new), and how long that run takes (T, the range of the random kill instants).

    `target` is the file it replaces (None for a shard set, where `stem` names the set)."""

    def __init__(self, env, label, tool, args, directory, old: dict, target=None, stem=None):
        self.env, self.label, self.tool, self.args, self.dir = env, label, tool, list(args), directory
        self.old = old  # name -> bytes
        self.old_snap = {n: sha(b) for n, b in old.items()}
        self.target, self.stem = target, stem
        self.new_snap, self.T = None, None
        os.makedirs(directory, exist_ok=True)

    def path(self, name) -> str:
        return os.path.join(self.dir, name)

    def reset(self):
        fill(self.dir, self.old)

    def run(self) -> Ran:
        return self.env.run(self.tool, *self.args)

    def snap(self) -> dict:
        return snapshot(self.dir)

    def interrupted(self, what, i, sig=signal.SIGKILL):
        """From the old state, one run sent `sig` at a random instant in [0, T]: where (for messages),
        the run, and the directory after it."""
        self.reset()
        delay = self.env.rng.uniform(0, self.T)
        where = f"{self.label}, {what} #{i + 1} at {delay * 1e3:.1f} of {self.T * 1e3:.1f} ms: "
        r = self.env.run_signalled(self.tool, self.args, delay, sig)
        return where, r, self.snap()

    def measure(self, runs=3):
        """Runs the writer uninterrupted from the old state: its result is the new state; T is the median
        duration."""
        times = []
        for i in range(runs):
            self.reset()
            r = self.run()
            expect_exit(r, 0, f"{self.label}: an uninterrupted run: ")
            snap = self.snap()
            if self.new_snap is None:
                self.new_snap = snap
            expect(snap == self.new_snap, lambda: f"{self.label}: two uninterrupted runs differ: {diff(snap, self.new_snap)}")
            times.append(r.secs)
        expect(not any_temporaries(self.dir), lambda: f"{self.label}: an uninterrupted run left "
               f"{any_temporaries(self.dir)}")
        expect(self.new_snap != self.old_snap, f"{self.label}: the run changes nothing (a test bug)")
        self.T = statistics.median(times)
        self.reset()
        return self

    def state(self, snap=None) -> str | None:
        """'old' or 'new' when the directory holds exactly that, else None."""
        snap = self.snap() if snap is None else snap
        return "old" if snap == self.old_snap else "new" if snap == self.new_snap else None

    def put_back_old_target(self):
        """Puts the old target (or its absence) back, leaving everything else (temporaries) alone."""
        p = self.path(self.target)
        if os.path.lexists(p):
            os.remove(p)
        if self.target in self.old:
            with open(p, "wb") as f:
                f.write(self.old[self.target])


def rewrite_scenario(env, d) -> Scenario:
    """gguf-edit FILE --set K=T:V: FILE rewritten (a new file renamed over it)."""
    return Scenario(env, "gguf-edit FILE --set", "gguf-edit", [os.path.join(d, "f.gguf"), "--set", EDIT], d,
                    {"f.gguf": env.input_bytes(MODEL)}, target="f.gguf").measure()


def edit_out_scenario(env, d) -> Scenario:
    """gguf-edit IN -o OUT --set K=T:V over an existing OUT."""
    return Scenario(env, "gguf-edit IN -o OUT", "gguf-edit",
                    [env.input(MODEL), "-o", os.path.join(d, "out.gguf"), "--set", EDIT], d,
                    {"out.gguf": env.input_bytes(SMALL)}, target="out.gguf").measure()


def quantize_scenario(env, d) -> Scenario:
    """gguf-quantize --allow-requantize IN OUT Q8_0 over an existing OUT."""
    return Scenario(env, "gguf-quantize IN OUT", "gguf-quantize",
                    ["--allow-requantize", env.input(MODEL), os.path.join(d, "out.gguf"), "Q8_0"], d,
                    {"out.gguf": env.input_bytes(QUANTS)}, target="out.gguf").measure()


def merge_scenario(env, d) -> Scenario:
    """gguf-split --merge FIRST_SHARD OUT (OUT does not exist before)."""
    first = os.path.join(env.input(SHARDS3), shard_names("model", 3)[0])
    return Scenario(env, "gguf-split --merge", "gguf-split", ["--merge", first, os.path.join(d, "merged.gguf")], d,
                    {}, target="merged.gguf").measure()


def in_place_scenario(env, d) -> Scenario:
    """gguf-edit FILE --set K=T:V --in-place: FILE's header rewritten in place, with a backup."""
    return Scenario(env, "gguf-edit --in-place", "gguf-edit",
                    [os.path.join(d, "f.gguf"), "--set", IN_PLACE_EDIT, "--in-place"], d,
                    {"f.gguf": env.input_bytes(MODEL)}, target="f.gguf").measure()


def split_set(env, source, k, scratch) -> dict:
    """The shard files `gguf-split --split-max-tensors k source` writes (name -> bytes), made in `scratch`."""
    os.makedirs(scratch, exist_ok=True)
    clear(scratch)
    r = env.run("gguf-split", "--split-max-tensors", str(k), env.input(source), os.path.join(scratch, "model"))
    expect_exit(r, 0, "making an old shard set: ")
    out = {n: read(os.path.join(scratch, n)) for n in os.listdir(scratch)}
    clear(scratch)
    return out


def split_scenario(env, d, old_source, old_k, new_source, new_k) -> Scenario:
    """gguf-split --split-max-tensors new_k NEW PREFIX over the set PREFIX-* that old_source split by
    old_k made."""
    old = split_set(env, old_source, old_k, d + ".scratch")
    sc = Scenario(env, f"gguf-split over a set ({len(old)} shards -> ?)", "gguf-split",
                  ["--split-max-tensors", str(new_k), env.input(new_source), os.path.join(d, "model")], d, old,
                  stem="model").measure()
    sc.label = f"gguf-split over a set ({len(old)} -> {len(sc.new_snap)} shards)"
    return sc


# ---------------------------------------------------------------------------------------------------
# 1 + 2. Atomic single-file writes under kill -9, and the stale temporaries the next run removes


def kill_single_file_writer(env, sc: Scenario, in_place=False) -> str:
    """Kills the writer at random instants in [0, T]. After each kill the target holds the old bytes or
    the complete new ones; nothing else is in the directory but the writer's own temporaries
    (.NAME.gguf-tmp-*), and for --in-place the backup FILE.gguf-backup (then `gguf-edit --restore FILE`
    gives back the old file byte for byte). A temporary left behind is removed by the next run, which
    says so on stderr, and that run writes the new file."""
    target = sc.target
    backup = target + BACKUP_SUFFIX
    own = [target, backup] if in_place else [target]
    stats = collections.Counter()
    lapses = []
    for i in range(env.kills):
        where, r, snap = sc.interrupted("kill", i)
        expect(r.rc in (0, -signal.SIGKILL), lambda: f"{where}{r}")
        temps = temporaries(sc.dir, own)
        for name in snap:
            expect(name == target or (in_place and name == backup) or name in temps or
                   (name in sc.old_snap and snap[name] == sc.old_snap[name]),
                   lambda: f"{where}unexpected entry {name}: the directory holds {describe(snap, sc.old_snap)}")
        if in_place and backup in snap:
            stats["backup"] += 1
            rr = env.run("gguf-edit", "--restore", sc.path(target))
            expect_exit(rr, 0, f"{where}restoring a genuine backup: ")
            expect(not os.path.exists(sc.path(backup)), f"{where}--restore left the backup")
            expect(sha(read(sc.path(target))) == sc.old_snap[target],
                   f"{where}after --restore the file is not the old file byte for byte")
        else:
            h = snap.get(target)
            which = "old" if h == sc.old_snap.get(target) else "new" if h == sc.new_snap.get(target) else None
            expect(which, lambda: f"{where}the target is neither old nor new ({'absent' if h is None else 'torn'}); "
                   f"stderr {r.err_text!r}")
            stats[which] += 1
        temps = temporaries(sc.dir, own)
        if temps:
            stats["temporary"] += 1
            sc.put_back_old_target()
            rr = sc.run()
            what = f"{where}the next run after a kill that left {temps}: "
            expect_exit(rr, 0, what)
            now = sc.snap()
            if in_place and now != sc.new_snap and {n: h for n, h in now.items() if n not in temps} == sc.new_snap:
                # Only the backup's own temporary survived: counted, and the loop goes on (see the report).
                lapses.append(f"{what}{sorted(set(now) - set(sc.new_snap))} still there ({rr})")
                continue
            expect(now == sc.new_snap, lambda: f"{what}{diff(now, sc.new_snap)}")
            expect_notes(rr, sc.tool, temps, where)
    expect(not lapses, lambda: f"{len(lapses)} of {stats['temporary']} stale temporaries of the backup "
           f"(.{backup}.gguf-tmp-*) survived the next in-place edit of {target}; the first: {lapses[0]}")
    parts = [f"{stats[k]} {k}" for k in ("old", "new", "backup") if stats[k]]
    note = f"; {stats['temporary']} left a temporary, removed by the next run" if stats["temporary"] else ""
    return f"{env.kills} kills: {', '.join(parts)}{note}"


def case_kill_rewrite(env):
    """`gguf-edit FILE --set` killed (-9) at any instant: FILE is old or new byte for byte."""
    return kill_single_file_writer(env, rewrite_scenario(env, env.case_dir("kill-rewrite")))


def case_kill_edit_out(env):
    """`gguf-edit IN -o OUT` killed (-9) over an existing OUT: OUT is old or new byte for byte."""
    return kill_single_file_writer(env, edit_out_scenario(env, env.case_dir("kill-edit-out")))


def case_kill_quantize(env):
    """`gguf-quantize IN OUT Q8_0` killed (-9) over an existing OUT: OUT is old or new byte for byte."""
    return kill_single_file_writer(env, quantize_scenario(env, env.case_dir("kill-quantize")))


def case_kill_merge(env):
    """`gguf-split --merge SHARD OUT` killed (-9): OUT is absent or the complete merged file."""
    return kill_single_file_writer(env, merge_scenario(env, env.case_dir("kill-merge")))


def case_kill_in_place(env):
    """`gguf-edit FILE --set ... --in-place` killed (-9): with a FILE.gguf-backup left, `--restore` gives
    back the old file byte for byte; without one, FILE is old or new."""
    return kill_single_file_writer(env, in_place_scenario(env, env.case_dir("kill-in-place")), in_place=True)


STALE = "Zq9x7P"  # the random part of a temporary the cases leave as if a killed writer had


def stale_temporary_removed(env, sc: Scenario, temp_for: str) -> str:
    """A temporary `.NAME.gguf-tmp-XXXXXX` beside the target, not locked (its writer is dead): the next
    run removes it, notes it on stderr (`TOOL: ... NAME ...`), and writes the new state."""
    sc.reset()
    temp = f".{temp_for}.gguf-tmp-{STALE}"
    with open(sc.path(temp), "wb") as f:
        f.write(b"GGUF" + os.urandom(4000))
    r = sc.run()
    expect_exit(r, 0, "with a stale temporary beside the target: ")
    snap = sc.snap()
    expect(snap == sc.new_snap, lambda: f"after the run with a stale temporary: {diff(snap, sc.new_snap)}")
    expect_notes(r, sc.tool, [temp])
    return f"{temp} removed and noted"


def case_stale_temporaries(env):
    """Every writer removes a stale temporary of its target (edit, edit -o, quantize, merge, a shard of
    a split) before writing, and says so."""
    done = []
    sc = rewrite_scenario(env, env.case_dir("stale-rewrite"))
    done.append(stale_temporary_removed(env, sc, sc.target))
    sc = edit_out_scenario(env, env.case_dir("stale-edit-out"))
    stale_temporary_removed(env, sc, sc.target)
    sc = quantize_scenario(env, env.case_dir("stale-quantize"))
    stale_temporary_removed(env, sc, sc.target)
    sc = merge_scenario(env, env.case_dir("stale-merge"))
    stale_temporary_removed(env, sc, sc.target)
    sc = split_scenario(env, env.case_dir("stale-split"), MODEL, 3, MODEL, 8)
    stale_temporary_removed(env, sc, shard_names("model", 3)[1])
    return "edit, edit -o, quantize, merge, split: each removed and noted a stale temporary"


def case_live_temporary_kept(env):
    """A temporary that is locked (its writer may be alive) is not removed by another run."""
    sc = rewrite_scenario(env, env.case_dir("live-temporary"))
    sc.reset()
    temp = f".{sc.target}.gguf-tmp-{STALE}"
    fd = os.open(sc.path(temp), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.write(fd, b"GGUF")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # whatever lock the writer tests: BSD, POSIX or OFD
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = sc.run()
        expect(os.path.exists(sc.path(temp)), lambda: f"a locked temporary was removed: {r}")
        expect(r.rc in (0, 1), lambda: f"{r}")
        want = sc.new_snap if r.rc == 0 else sc.old_snap
        snap = {n: h for n, h in sc.snap().items() if n != temp}
        expect(snap == {n: h for n, h in want.items()}, lambda: f"{r}: {diff(snap, want)}")
        if r.rc == 1:
            expect_error(r)
    finally:
        os.close(fd)
    return f"kept (the run exited {r.rc})"


# ---------------------------------------------------------------------------------------------------
# 5. Shard sets replaced all or nothing


def check_readers_during_swap(env, sc: Scenario, snap, where):
    """While a journal is there, gguf-info and gguf-dump on a shard exit 1 naming --restore, or exit 0
    when the shards on disk are all of the old set or all of the new one."""
    on_disk = shards_in(snap, sc.stem)
    whole = on_disk in (sc.old_snap, sc.new_snap)
    firsts = [n for n in (sorted(sc.old_snap)[0], sorted(sc.new_snap)[0]) if n in on_disk]
    probes = list(dict.fromkeys(firsts + ([env.rng.choice(sorted(on_disk))] if on_disk else [])))
    refusals = 0
    for k, name in enumerate(probes):
        tool = "gguf-info" if k % 2 == 0 else "gguf-dump"
        r = env.run(tool, sc.path(name))
        if r.rc == 0:
            expect(whole, lambda: f"{where}{tool} read a shard of a half-swapped set (journal present) and exited 0; "
                   f"the shards are {describe_sets(on_disk, sc.old_snap, sc.new_snap)}")
        else:
            expect_error(r, 1, "--restore", f"{where}{tool} during a swap (journal present): ")
            refusals += 1
    return refusals


def kill_split_over_set(env, sc: Scenario) -> str:
    """Kills `gguf-split` replacing an existing set at random instants in [0, T]. Without a journal the
    shards on disk are exactly the old set or exactly the new one; with the journal, readers refuse
    (naming --restore) or see a whole set. Then either `gguf-split --restore SHARD` (exit 0 after
    completing or rolling back a swap; exit 1 with an error line when there was nothing to restore) or
    the next plain run of the same split leaves exactly the old or the new set: every shard byte for
    byte, no other shard, no temporary, no journal."""
    journal = sc.stem + JOURNAL_SUFFIX
    old_first, new_first = sorted(sc.old_snap)[0], sorted(sc.new_snap)[0]
    stats = collections.Counter()
    lapses = collections.defaultdict(list)
    for i in range(env.kills):
        where, r, snap = sc.interrupted("kill", i)
        expect(r.rc in (0, -signal.SIGKILL), lambda: f"{where}{r}")
        on_disk = shards_in(snap, sc.stem)
        has_journal = journal in snap
        if has_journal:
            stats["journal"] += 1
            stats["readers refused"] += check_readers_during_swap(env, sc, snap, where)
        else:
            which = "old" if on_disk == sc.old_snap else "new" if on_disk == sc.new_snap else None
            expect(which, lambda: f"{where}no journal, and the shards are neither the old set nor the new one: "
                   f"{describe_sets(snap, sc.old_snap, sc.new_snap)}")
            stats[which] += 1
        if any_temporaries(sc.dir):
            stats["temporaries"] += 1
        if i % 2 == 0:
            first = env.rng.choice([old_first, new_first])
            rr = env.run("gguf-split", "--restore", sc.path(first))
            what = f"{where}`gguf-split --restore {first}` after the kill left {describe_sets(snap, sc.old_snap, sc.new_snap)}: "
            if has_journal:
                expect_exit(rr, 0, what)
            else:
                expect_exit(rr, (0, 1), what)
                if rr.rc == 1:
                    expect_error(rr, 1, (), what)
            after = sc.snap()
            state = sc.state(after)
            leftover = [n for n in after if ".gguf-tmp-" in n]
            if state is None and leftover and sc.state({n: h for n, h in after.items() if n not in leftover}):
                # The set is whole and there is no journal, but temporaries stay: counted, the loop goes on.
                lapses[f"--restore (exit {rr.rc}) left the dead writer's temporaries"].append(
                    f"{what}{leftover} still there ({rr})")
                continue
            expect(state, lambda: f"{what}the directory is neither exactly the old set nor the new one: "
                   f"{describe_sets(after, sc.old_snap, sc.new_snap)} ({rr})")
            stats[("restored " + state) if rr.rc == 0 else "nothing to restore"] += 1
        else:
            rr = sc.run()
            what = f"{where}the next `gguf-split` after the kill left {describe_sets(snap, sc.old_snap, sc.new_snap)}: "
            expect_exit(rr, 0, what)
            after = sc.snap()
            leftover = [n for n in after if ".gguf-tmp-" in n]
            if after != sc.new_snap and {n: h for n, h in after.items() if n not in leftover} == sc.new_snap:
                lapses["the next split left the dead writer's temporaries"].append(f"{what}{leftover} still there ({rr})")
                continue
            expect(after == sc.new_snap, lambda: f"{what}{diff(after, sc.new_snap)}")
            stats["rerun"] += 1
    expect(not lapses, lambda: f"{stats_line(stats)}; but (the set itself whole, no journal): " + "; ".join(
        f"{len(v)} times {k}, the first: {v[0]}" for k, v in lapses.items()))
    return f"{env.kills} kills: {stats_line(stats)}"


def stats_line(stats) -> str:
    return ", ".join(f"{stats[k]} {k}" for k in sorted(stats))


def case_kill_split_7_to_3(env):
    """A set of 7 shards replaced by a set of 3 (another --split-max-tensors), killed at any instant:
    the old 7 or the new 3 after recovery, never a mix, and after success no file of the old set."""
    sc = split_scenario(env, env.case_dir("kill-split-7-3"), MODEL, 3, MODEL, 8)
    return kill_split_over_set(env, sc)


def case_kill_split_3_to_3(env):
    """A set of 3 shards replaced by another 3 (--split-max-tensors 7 -> 8: the same names, every shard
    different), killed at any instant."""
    sc = split_scenario(env, env.case_dir("kill-split-3-3"), MODEL, 7, MODEL, 8)
    return kill_split_over_set(env, sc)


def case_restore_nothing(env):
    """`gguf-split --restore SHARD` with no interrupted swap: exit 1, one error line, nothing changes."""
    d = env.case_dir("restore-nothing")
    old = split_set(env, MODEL, 8, d + ".scratch")
    fill(d, old)
    before = snapshot(d)
    r = env.run("gguf-split", "--restore", os.path.join(d, sorted(old)[0]))
    expect_error(r, 1)
    expect(snapshot(d) == before, lambda: f"--restore changed the directory: {diff(snapshot(d), before)}")
    return "refused, nothing changed"


# ---------------------------------------------------------------------------------------------------
# 3. Signals


SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def signal_writers(env, sig, runs) -> str:
    """SIGINT, SIGTERM or SIGHUP to a writer: it removes its temporaries and exits 128+signal with one
    `error:` line, the target untouched; or it had finished (exit 0, the new state). The writers:
    gguf-edit FILE, gguf-quantize, gguf-split --merge, gguf-split over an existing set."""
    name = signal.Signals(sig).name
    code = SIGNALS[sig]
    base = env.case_dir(f"signal-{name}")
    scenarios = [rewrite_scenario(env, os.path.join(base, "edit")),
                 quantize_scenario(env, os.path.join(base, "quantize")),
                 merge_scenario(env, os.path.join(base, "merge")),
                 split_scenario(env, os.path.join(base, "split"), MODEL, 3, MODEL, 8)]
    stats = collections.Counter()
    for i in range(runs):
        sc = scenarios[i % len(scenarios)]
        where, r, snap = sc.interrupted(name, i, sig)
        if r.rc == 0:
            stats["finished"] += 1
            expect(snap == sc.new_snap, lambda: f"{where}exit 0 but {diff(snap, sc.new_snap)}")
        elif r.rc == code:
            stats["handled"] += 1
            expect_error(r, code, (), where)
            expect(snap == sc.old_snap, lambda: f"{where}exit {code} but not the old state: {diff(snap, sc.old_snap)} ({r})")
        elif r.rc == -sig:
            # Ended by the signal itself: before the tool set up its handlers (while the program loads), or
            # after it was done with them. Acceptable only when nothing was half done.
            stats["ended by the signal"] += 1
            expect(snap in (sc.old_snap, sc.new_snap), lambda: f"{where}ended by the signal (no handler), and "
                   f"the directory is neither the old one nor the new one: {diff(snap, sc.old_snap)}")
        else:
            raise Failure(f"{where}expected exit {code} (or 0): {r}")
    expect(stats["handled"] > 0 or stats["ended by the signal"] == 0,
           lambda: f"{name} never made a writer exit {code}: {dict(stats)}")
    return f"{runs} runs: {stats_line(stats)}"


def signal_runs(env):
    """Runs per signal: twice --kills (a signal racing the creation of a temporary is a narrow window)."""
    return max(8, 2 * env.kills)


def case_sigint(env):
    """SIGINT to a writer: exit 130, one error line, target untouched, no temporary."""
    return signal_writers(env, signal.SIGINT, signal_runs(env))


def case_sigterm(env):
    """SIGTERM to a writer: exit 143, one error line, target untouched, no temporary."""
    return signal_writers(env, signal.SIGTERM, signal_runs(env))


def case_sighup(env):
    """SIGHUP to a writer: exit 129, one error line, target untouched, no temporary."""
    return signal_writers(env, signal.SIGHUP, signal_runs(env))


# ---------------------------------------------------------------------------------------------------
# 4. File-size limit


def refused_leaving_old(sc: Scenario, r: Ran, contains=(), what=""):
    """The writer failed with exit 1 and one `error:` line, and its directory holds exactly the old state."""
    expect_error(r, 1, contains, what)
    snap = sc.snap()
    expect(snap == sc.old_snap, lambda: f"{what}after the failure: {diff(snap, sc.old_snap)} ({r})")


def case_file_size_limit(env):
    """Under RLIMIT_FSIZE smaller than the output, every writer exits 1 with one error line saying "File
    too large"; the target is untouched and no temporary is left (SIGXFSZ does not kill it)."""
    base = env.case_dir("fsize")
    for sc in (rewrite_scenario(env, os.path.join(base, "edit")),
               edit_out_scenario(env, os.path.join(base, "edit-out")),
               quantize_scenario(env, os.path.join(base, "quantize")),
               merge_scenario(env, os.path.join(base, "merge")),
               split_scenario(env, os.path.join(base, "split"), MODEL, 3, MODEL, 8)):
        sc.reset()
        r = env.run(sc.tool, *sc.args, fsize=100_000)
        refused_leaving_old(sc, r, "File too large", f"{sc.label} under a 100 kB file size limit: ")
    return "edit, edit -o, quantize, merge, split refused cleanly"


# ---------------------------------------------------------------------------------------------------
# 6. A rename refused in the middle of a shard swap (chattr +i)


def chattr(flag, path) -> subprocess.CompletedProcess:
    return subprocess.run(["chattr", flag, path], capture_output=True, text=True)


def mount_tmpfs(path, size) -> str | None:
    """Mounts a tmpfs of `size` at `path`; None when done, else why not."""
    os.makedirs(path, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], capture_output=True, text=True)
    return None if p.returncode == 0 else (" ".join(p.stderr.split()) or f"mount exited {p.returncode}")


def unmount(path):
    subprocess.run(["umount", path], capture_output=True)
    if os.path.ismount(path):
        subprocess.run(["umount", "-l", path], capture_output=True)


def immutable_shard_in(env, d) -> str | None:
    """The immutable-shard check with the set in `d`; None when chattr is not permitted there."""
    sc = split_scenario(env, d, MODEL, 7, MODEL, 8)
    sc.reset()
    victim = sorted(sc.old_snap)[1]
    p = chattr("+i", sc.path(victim))
    if p.returncode != 0:
        return None
    try:
        r = sc.run()
        expect_error(r, 1, sc.path(victim), "a split over a set with an immutable shard: ")
        snap = sc.snap()
        expect(snap == sc.old_snap, lambda: f"after the refused swap: {diff(snap, sc.old_snap)}")
    finally:
        chattr("-i", sc.path(victim))
    return f"refused naming {victim}, old set intact: {r.error_lines()[0]!r}"


def case_immutable_shard(env):
    """One old shard (not the first) immutable (chattr +i): gguf-split over the set (same shard count)
    exits 1 with one error line naming that shard's path; the old set is intact byte for byte, no
    journal, no temporary. Tried in the work directory, else on a tmpfs of its own."""
    if shutil.which("chattr") is None:
        raise Skip("skipped: no chattr here")
    base = env.case_dir("immutable-shard")
    done = immutable_shard_in(env, os.path.join(base, "set"))
    if done:
        return done
    mnt = os.path.join(base, "tmpfs")
    why = mount_tmpfs(mnt, "4m")
    if why:
        raise Skip(f"skipped: chattr not permitted here, and no tmpfs to try it on ({why})")
    try:
        done = immutable_shard_in(env, os.path.join(mnt, "set"))
        if not done:
            raise Skip("skipped: chattr not permitted here (neither in the work directory nor on a tmpfs)")
        return done + " (on a tmpfs)"
    finally:
        unfreeze(mnt)
        unmount(mnt)


# ---------------------------------------------------------------------------------------------------
# 7. A full file system


def case_full_disk(env):
    """On a 300 KiB tmpfs: a write that does not fit (edit -o, rewrite, quantize, merge, split over a
    set) exits 1 with one error line; the target is untouched, nothing is left."""
    mnt = env.mkdir("tmpfs")
    why = mount_tmpfs(mnt, "300k")
    if why:
        raise Skip(f"skipped: mount not permitted here ({why})")
    try:
        done = []
        for make in (
            lambda d: Scenario(env, "gguf-edit IN -o OUT", "gguf-edit",
                               [env.input(MODEL), "-o", os.path.join(d, "out.gguf"), "--set", EDIT], d,
                               {"out.gguf": env.input_bytes(SMALL)}, target="out.gguf"),
            lambda d: Scenario(env, "gguf-edit FILE --set", "gguf-edit", [os.path.join(d, "f.gguf"), "--set", EDIT], d,
                               {"f.gguf": env.input_bytes(MEDIUM)}, target="f.gguf"),
            lambda d: Scenario(env, "gguf-quantize IN OUT", "gguf-quantize",
                               ["--allow-requantize", env.input(MODEL), os.path.join(d, "out.gguf"), "Q8_0"], d,
                               {"out.gguf": env.input_bytes(SMALL)}, target="out.gguf"),
            lambda d: Scenario(env, "gguf-split --merge", "gguf-split",
                               ["--merge", os.path.join(env.input(SHARDS3), shard_names("model", 3)[0]),
                                os.path.join(d, "merged.gguf")], d, {}, target="merged.gguf"),
            lambda d: Scenario(env, "gguf-split over a set", "gguf-split",
                               ["--split-max-tensors", "8", env.input(MODEL), os.path.join(d, "model")], d,
                               split_set(env, QUANTS, 8, os.path.join(env.work, "scratch-quants")), stem="model"),
        ):
            sc = make(mnt)
            sc.reset()
            r = sc.run()
            refused_leaving_old(sc, r, (), f"{sc.label} on a full tmpfs: ")
            done.append(sc.label)
            clear(mnt)
        return "refused cleanly: " + ", ".join(done)
    finally:
        unmount(mnt)


# ---------------------------------------------------------------------------------------------------
# 8. The identity of a rewritten file: mode, owner, symlinks


def identity_writers(env, base):
    return [rewrite_scenario(env, os.path.join(base, "edit")),
            edit_out_scenario(env, os.path.join(base, "edit-out")),
            quantize_scenario(env, os.path.join(base, "quantize"))]


def case_mode_kept(env):
    """Rewriting a file (gguf-edit FILE, gguf-edit IN -o OUT, gguf-quantize IN OUT over an existing OUT)
    keeps its mode: 0600, 0640, 0444."""
    # A user other than root may not rewrite a file of mode 0444 (the tools refuse it, as cp does).
    modes = (0o600, 0o640, 0o444) if os.geteuid() == 0 else (0o600, 0o640)
    for sc in identity_writers(env, env.case_dir("mode")):
        for mode in modes:
            sc.reset()
            os.chmod(sc.path(sc.target), mode)
            r = sc.run()
            expect_exit(r, 0, f"{sc.label} over a file of mode {mode:04o}: ")
            expect(sc.snap() == sc.new_snap, f"{sc.label}: {diff(sc.snap(), sc.new_snap)}")
            got = os.stat(sc.path(sc.target)).st_mode & 0o7777
            expect(got == mode, f"{sc.label}: the file had mode {mode:04o}, now {got:04o}")
    return ", ".join(f"{m:04o}" for m in modes) + " kept by edit, edit -o, quantize" + (
        "" if os.geteuid() == 0 else " (0444 only as root)")


def case_owner_kept(env):
    """Rewriting a file keeps its owner and group (65534:65534, a file root rewrites)."""
    for sc in identity_writers(env, env.case_dir("owner")):
        sc.reset()
        try:
            os.chown(sc.path(sc.target), 65534, 65534)
        except OSError as e:
            raise Skip(f"skipped: chown not permitted here ({e.strerror})")
        os.chmod(sc.path(sc.target), 0o640)
        r = sc.run()
        expect_exit(r, 0, f"{sc.label} over a file of 65534:65534: ")
        expect(sc.snap() == sc.new_snap, f"{sc.label}: {diff(sc.snap(), sc.new_snap)}")
        st = os.stat(sc.path(sc.target))
        expect((st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o640),
               f"{sc.label}: owner 65534:65534 mode 0640 became {st.st_uid}:{st.st_gid} mode {st.st_mode & 0o7777:04o}")
    return "65534:65534 kept by edit, edit -o, quantize"


class LinkChain:
    """link1 (absolute) -> link2 (relative) -> real.gguf, the links in one directory, the file in another."""

    def __init__(self, env, base, content: bytes):
        self.links = os.path.join(base, "links")
        self.real_dir = os.path.join(base, "real")
        os.makedirs(self.links, exist_ok=True)
        os.makedirs(self.real_dir, exist_ok=True)
        clear(self.links)
        clear(self.real_dir)
        self.real = os.path.join(self.real_dir, "real.gguf")
        with open(self.real, "wb") as f:
            f.write(content)
        self.link2 = os.path.join(self.links, "link2")
        self.link1 = os.path.join(self.links, "link1")
        os.symlink(os.path.join("..", "real", "real.gguf"), self.link2)
        os.symlink(self.link2, self.link1)
        self.links_before = snapshot(self.links)

    def check(self, new_sha: str, what):
        """The links are still the same links; the real file holds the new bytes (their sha256); nothing
        else in either directory."""
        for link in (self.link1, self.link2):
            expect(os.path.islink(link), f"{what}{os.path.basename(link)} is no longer a symlink")
        links = snapshot(self.links)
        expect(links == self.links_before, lambda: f"{what}the links' directory: {diff(links, self.links_before)}")
        real = snapshot(self.real_dir)
        want = {"real.gguf": new_sha}
        expect(real == want, lambda: f"{what}the real file's directory: {diff(real, want)}")


def case_symlink_chain(env):
    """Through link1 -> link2 -> real file (absolute and relative links, the file in another directory):
    gguf-edit LINK --set, gguf-edit LINK --set --in-place and gguf-edit IN -o LINK rewrite the real file;
    the links stay links with the same text; no temporary or backup is left in either directory."""
    base = env.case_dir("symlinks")
    ref = rewrite_scenario(env, os.path.join(base, "ref-edit"))
    ref_in_place = in_place_scenario(env, os.path.join(base, "ref-in-place"))
    ref_out = edit_out_scenario(env, os.path.join(base, "ref-edit-out"))
    checks = [
        ("gguf-edit LINK --set", lambda c: ["gguf-edit", c.link1, "--set", EDIT], MODEL, ref),
        ("gguf-edit LINK --set --in-place", lambda c: ["gguf-edit", c.link1, "--set", IN_PLACE_EDIT, "--in-place"],
         MODEL, ref_in_place),
        ("gguf-edit IN -o LINK", lambda c: ["gguf-edit", env.input(MODEL), "-o", c.link1, "--set", EDIT], SMALL,
         ref_out),
    ]
    for label, argv, start, reference in checks:
        chain = LinkChain(env, base, env.input_bytes(start))
        r = env.run(*argv(chain))
        expect_exit(r, 0, f"{label}: ")
        chain.check(reference.new_snap[reference.target], f"{label}: ")
    return "links kept, real file rewritten, nothing left"


def case_symlink_in_place_killed(env):
    """`gguf-edit LINK --in-place` killed at random instants: a backup, if any, is beside the real file
    (never beside the link), and `gguf-edit --restore LINK` gives back the old file."""
    base = env.case_dir("symlink-in-place-kill")
    sc = in_place_scenario(env, os.path.join(base, "ref"))
    old, new_sha = sc.old["f.gguf"], sc.new_snap["f.gguf"]
    stats = collections.Counter()
    runs = max(5, env.kills // 2)
    for i in range(runs):
        chain = LinkChain(env, os.path.join(base, "chain"), old)
        delay = env.rng.uniform(0, sc.T)
        where = f"kill #{i + 1} at {delay * 1e3:.1f} ms: "
        r = env.run_signalled("gguf-edit", [chain.link1, "--set", IN_PLACE_EDIT, "--in-place"], delay)
        expect(r.rc in (0, -signal.SIGKILL), lambda: f"{where}{r}")
        links = snapshot(chain.links)
        expect(links == chain.links_before, lambda: f"{where}the links' directory: {diff(links, chain.links_before)}")
        real = snapshot(chain.real_dir)
        extra = [n for n in real if n not in ("real.gguf", "real.gguf" + BACKUP_SUFFIX)
                 and not temp_re("real.gguf").match(n) and not temp_re("real.gguf" + BACKUP_SUFFIX).match(n)]
        expect(not extra, lambda: f"{where}unexpected beside the real file: {extra}")
        if "real.gguf" + BACKUP_SUFFIX in real:
            stats["backup"] += 1
            rr = env.run("gguf-edit", "--restore", chain.link1)
            expect_exit(rr, 0, f"{where}gguf-edit --restore LINK: ")
            expect(read(chain.real) == old, f"{where}after --restore LINK the real file is not the old one")
            expect(not os.path.exists(chain.real + BACKUP_SUFFIX), f"{where}--restore left the backup")
        else:
            got = real.get("real.gguf")
            which = "old" if got == sha(old) else "new" if got == new_sha else None
            expect(which, f"{where}the real file is neither old nor new")
            stats[which] += 1
    return f"{runs} kills: {stats_line(stats)}"


# ---------------------------------------------------------------------------------------------------
# 9. In-place backups


def catch_backup(env, path, edit=IN_PLACE_EDIT, attempts=300) -> bool:
    """Runs `gguf-edit PATH --set EDIT --in-place` and kills it the moment PATH.gguf-backup appears,
    until one is left (a genuine backup of an interrupted edit). Leaves PATH as the kill left it."""
    backup = path + BACKUP_SUFFIX
    original = read(path)
    for _ in range(attempts):
        with open(path, "wb") as f:
            f.write(original)
        p = subprocess.Popen([env.exe("gguf-edit"), path, "--set", edit, "--in-place"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 5
        while p.poll() is None and time.monotonic() < deadline:
            if os.path.exists(backup):
                os.kill(p.pid, signal.SIGKILL)
                break
        p.wait()
        if os.path.exists(backup):
            return True
    return False


def genuine_backup(env, d, name, content) -> str:
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(content)
    if not catch_backup(env, path):
        raise Skip(f"skipped: could not catch an in-place edit between its backup and its end in 300 tries "
                   f"(a file system whose flush takes no time?)")
    return path


def case_restore_genuine_backup(env):
    """A backup left by a killed in-place edit: `gguf-edit --restore FILE` exits 0, FILE is the old file
    byte for byte, the backup is gone."""
    d = env.case_dir("restore-genuine")
    path = genuine_backup(env, d, "f.gguf", env.input_bytes(MODEL))
    r = env.run("gguf-edit", "--restore", path)
    expect_exit(r, 0)
    snap = snapshot(d)
    want = {"f.gguf": sha(env.input_bytes(MODEL))}
    expect(snap == want, lambda: f"after --restore: {diff(snap, want)}")
    return "restored the old file byte for byte"


def case_restore_stale_backup(env):
    """A backup made for file A, moved beside file B as B.gguf-backup: `gguf-edit --restore B` exits 1
    with one error line, B unchanged."""
    d = env.case_dir("restore-stale")
    a = genuine_backup(env, d, "a.gguf", env.input_bytes(MODEL))
    b = os.path.join(d, "b.gguf")
    shutil.copyfile(env.input(QUANTS), b)
    os.replace(a + BACKUP_SUFFIX, b + BACKUP_SUFFIX)
    before = read(b)
    r = env.run("gguf-edit", "--restore", b)
    expect_error(r, 1)
    expect(read(b) == before, "--restore of another file's backup changed the file")
    return "refused"


def case_restore_random_backup(env):
    """A FILE.gguf-backup of 64 KiB of random bytes: `gguf-edit --restore FILE` exits 1, FILE unchanged."""
    d = env.case_dir("restore-random")
    path = os.path.join(d, "f.gguf")
    shutil.copyfile(env.input(MODEL), path)
    with open(path + BACKUP_SUFFIX, "wb") as f:
        f.write(os.urandom(65536))
    r = env.run("gguf-edit", "--restore", path)
    expect_error(r, 1)
    expect(read(path) == env.input_bytes(MODEL), "--restore of a random backup changed the file")
    return "refused"


def case_pending_backup_blocks_writers(env):
    """While FILE.gguf-backup is pending, every writer refuses to replace FILE (exit 1, one error line
    naming the backup) and FILE and the backup stay as they are; then --restore brings back the old file."""
    d = env.case_dir("pending-backup")
    path = genuine_backup(env, d, "f.gguf", env.input_bytes(MODEL))
    backup_name = "f.gguf" + BACKUP_SUFFIX
    before = snapshot(d)
    for argv in (["gguf-edit", path, "--set", EDIT],
                 ["gguf-edit", path, "--set", IN_PLACE_EDIT, "--in-place"],
                 ["gguf-edit", env.input(SMALL), "-o", path],
                 ["gguf-quantize", "--allow-requantize", env.input(MODEL), path, "Q8_0"]):
        r = env.run(*argv)
        expect_error(r, 1, backup_name, "a writer over a file with a pending backup: ")
        expect(snapshot(d) == before, lambda: f"{r}: {diff(snapshot(d), before)}")
    r = env.run("gguf-edit", "--restore", path)
    expect_exit(r, 0)
    expect(snapshot(d) == {"f.gguf": sha(env.input_bytes(MODEL))}, "--restore did not give back the old file")
    return "edit, edit --in-place, edit -o, quantize refused; --restore restored"


# ---------------------------------------------------------------------------------------------------
# 10. Refusals: nothing written


def refused(env, d, argv, codes=(1, 2), contains=(), what=""):
    """Runs argv; expects the refusal and that the directory `d` did not change."""
    before = tree_snapshot(d)
    r = env.run(*argv)
    expect_error(r, codes, contains, what)
    after = tree_snapshot(d)
    expect(after == before, lambda: f"{what}{r}: the refusal wrote: {diff(after, before)}")
    return r


def case_refused_values(env):
    """gguf-edit refuses, writing nothing: an alignment whose padding would pass 64 MiB (naming --force),
    float32 values too large or too small for the type, uint8:300, a 70000-byte key, a key that is not
    valid UTF-8."""
    d = env.case_dir("refused-values")
    out = os.path.join(d, "o.gguf")
    bad = [
        ("general.alignment=uint32:2147483648", ("--force",)),
        ("x=float32:1e99", ("too large",)),
        ("x=float32:1e-50", ("too small",)),
        ("x=uint8:300", ("too large",)),
        ("k" * 70000 + "=string:v", ()),
        (b"gen\xffkey=string:v", ()),
    ]
    problems = []
    for edit, contains in bad:
        try:
            refused(env, d, ["gguf-edit", env.input(MODEL), "-o", out, "--set", edit], (1, 2), contains,
                    f"--set {shown(edit)}: ")
        except Failure as e:
            problems.append(str(e))
        clear(d)
    expect(not problems, lambda: f"{len(problems)} of {len(bad)} not refused as they should be: " +
           " | ".join(problems))
    return f"{len(bad)} values refused"


def case_quantize_onto_input(env):
    """gguf-quantize IN IN (also through a symlink or a hard link to IN) exits 1; IN unchanged."""
    d = env.case_dir("quantize-onto-input")
    f = os.path.join(d, "f.gguf")
    shutil.copyfile(env.input(MODEL), f)
    os.symlink("f.gguf", os.path.join(d, "sym.gguf"))
    os.link(f, os.path.join(d, "hard.gguf"))
    for out in ("f.gguf", "sym.gguf", "hard.gguf"):
        refused(env, d, ["gguf-quantize", "--allow-requantize", f, os.path.join(d, out), "Q8_0"], (1,), (),
                f"gguf-quantize f.gguf {out}: ")
    return "same file, symlink, hard link refused"


def case_split_prefix_is_directory(env):
    """gguf-split IN PREFIX where PREFIX ends in '/' or names an existing directory: refused, nothing
    written in the directory or beside it."""
    d = env.case_dir("split-prefix-dir")
    outdir = os.path.join(d, "outdir")
    os.makedirs(outdir)
    for prefix in (outdir + "/", outdir):
        refused(env, d, ["gguf-split", "--split-max-tensors", "8", env.input(MODEL), prefix], (1, 2), (),
                f"gguf-split IN {shown(prefix)}: ")
    return "refused"


def case_output_is_directory(env):
    """An output that is an existing directory (gguf-edit -o, gguf-quantize, gguf-split --merge) is refused
    at once with an error line naming it."""
    d = env.case_dir("output-dir")
    target = os.path.join(d, "dir.gguf")
    os.makedirs(target)
    first = os.path.join(env.input(SHARDS3), shard_names("model", 3)[0])
    for argv in (["gguf-edit", env.input(MODEL), "-o", target, "--set", EDIT],
                 ["gguf-quantize", "--allow-requantize", env.input(MODEL), target, "Q8_0"],
                 ["gguf-split", "--merge", first, target]):
        r = refused(env, d, argv, (1, 2), (target,), f"{argv[0]} to a directory: ")
        expect(r.secs < 5, f"{r}: took {r.secs:.1f} s to refuse")
    return "edit -o, quantize, merge refused naming the directory"


# ---------------------------------------------------------------------------------------------------
# Running the cases


CASES = [
    ("1.atomic.kill-rewrite", case_kill_rewrite),
    ("1.atomic.kill-edit-out", case_kill_edit_out),
    ("1.atomic.kill-quantize", case_kill_quantize),
    ("1.atomic.kill-merge", case_kill_merge),
    ("1.atomic.kill-in-place", case_kill_in_place),
    ("2.temporaries.stale-removed", case_stale_temporaries),
    ("2.temporaries.live-kept", case_live_temporary_kept),
    ("3.signals.SIGINT", case_sigint),
    ("3.signals.SIGTERM", case_sigterm),
    ("3.signals.SIGHUP", case_sighup),
    ("4.fsize-limit", case_file_size_limit),
    ("5.shards.kill-split-7-to-3", case_kill_split_7_to_3),
    ("5.shards.kill-split-3-to-3", case_kill_split_3_to_3),
    ("5.shards.restore-nothing", case_restore_nothing),
    ("6.shards.immutable-shard", case_immutable_shard),
    ("7.full-tmpfs", case_full_disk),
    ("8.identity.mode", case_mode_kept),
    ("8.identity.owner", case_owner_kept),
    ("8.identity.symlink-chain", case_symlink_chain),
    ("8.identity.symlink-in-place-killed", case_symlink_in_place_killed),
    ("9.backups.restore-genuine", case_restore_genuine_backup),
    ("9.backups.restore-stale", case_restore_stale_backup),
    ("9.backups.restore-random", case_restore_random_backup),
    ("9.backups.pending-blocks-writers", case_pending_backup_blocks_writers),
    ("10.refused.values", case_refused_values),
    ("10.refused.quantize-onto-input", case_quantize_onto_input),
    ("10.refused.split-prefix-directory", case_split_prefix_is_directory),
    ("10.refused.output-directory", case_output_is_directory),
]


def unfreeze(root):
    """Clears the immutable flag anywhere under `root` (a case interrupted between chattr +i and -i)."""
    if shutil.which("chattr") is None:
        return
    for dirpath, dirs, files in os.walk(root):
        for name in files:
            subprocess.run(["chattr", "-i", os.path.join(dirpath, name)], capture_output=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("examples", help="the directory of the built tools")
    ap.add_argument("data", help="the repository's tests/data")
    ap.add_argument("--kills", type=int, default=30, help="kills per scenario (default 30)")
    ap.add_argument("--seed", type=int, default=None, help="seed of the random kill instants")
    ap.add_argument("--only", action="append", default=[], help="run the cases whose name contains this")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args(argv)

    for tool in ("gguf-edit", "gguf-split", "gguf-quantize", "gguf-info", "gguf-dump"):
        if not os.access(os.path.join(a.examples, tool), os.X_OK):
            print(f"error: {os.path.join(a.examples, tool)}: not an executable tool", file=sys.stderr)
            return 2
    # A signal ignored here (a background job of a non-interactive shell ignores SIGINT) stays ignored
    # in the tools: give them the default disposition, as a terminal would.
    for sig in SIGNALS:
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 32)
    print(f"fault injection: seed {seed}, {a.kills} kills per scenario", flush=True)

    work = tempfile.mkdtemp(prefix="gguf-faults-", dir="/tmp")
    env = Env(os.path.abspath(a.examples), os.path.abspath(a.data), work, a.kills, random.Random(seed))
    passed = failed = skipped = 0
    t_start = time.monotonic()
    try:
        try:
            prepare_inputs(env)
        except Exception as e:  # noqa: BLE001 -- no case can run without the inputs
            print(f"FAIL setup: {e}", flush=True)
            print("0 passed, 1 failed")
            return 1
        for name, fn in CASES:
            if a.only and not any(o in name for o in a.only):
                continue
            t0 = time.monotonic()
            try:
                detail = fn(env)
                now = tree_snapshot(env.inputs)
                expect(now == env.input_snapshot, lambda: f"an input changed: {diff(now, env.input_snapshot)}")
                passed += 1
                print(f"PASS {name}: {detail} ({time.monotonic() - t0:.1f} s)", flush=True)
            except Skip as e:
                skipped += 1
                print(f"SKIP {name}: {e}", flush=True)
            except Failure as e:
                failed += 1
                print(f"FAIL {name}: {e} ({time.monotonic() - t0:.1f} s)", flush=True)
            except Exception:  # noqa: BLE001 -- a bug of this script: report it as the case's failure
                failed += 1
                print(f"FAIL {name}: the test itself raised:\n{traceback.format_exc()}", flush=True)
            finally:
                unfreeze(os.path.join(work, "cases"))
    finally:
        unfreeze(work)
        for root, dirs, files in os.walk(work, topdown=False):  # a tmpfs a case left mounted
            for name in dirs:
                if os.path.ismount(os.path.join(root, name)):
                    unmount(os.path.join(root, name))
        if a.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"({time.monotonic() - t_start:.0f} s)")
    summary = f"{passed} passed, {failed} failed"
    if skipped:
        summary += f", {skipped} skipped"
    print(summary)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
