#!/usr/bin/env python3
"""The README's two commands, as written, on a fresh clone: wall time, CPU time and peak memory.

    python3 bench/readme_commands.py [--only tool|all] [--keep DIR] [--shared]

Clones this checkout's HEAD into a new folder (without ../shared beside it, unless --shared), takes the
two shell blocks that follow "Build one tool" and "Build everything" in the README, and runs each there
with bash, exactly as a user pastes it. For each it prints the wall time, the CPU time of everything it
ran (user + system, from the kernel's accounting of the children) and the largest resident set of any
one process, then a line for the README. Exit status: 0 when both commands succeed, else 1 (their
output is shown).

What the figures assume: an otherwise idle machine (the wall time of a 2-core build doubles when
something else compiles beside it; the CPU time does not), a warm page cache, the Debian packages of the
README's apt lines installed, and the README's own -j2. CI runs this script (.ci/run) so that the README's
commands are run as written, in a clone without ../shared, on every change.
"""
import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def readme_commands():
    """The README's one-tool command and its build-everything-and-test command, as written."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    found = {}
    for key, lead in (("tool", "Build one tool"), ("all", "Build everything")):
        m = re.search(re.escape(lead) + r"[^\n]*\n(?:[^\n]*\n)*?```sh\n(.*?)```", text, re.S)
        if not m:
            sys.exit("error: README.md has no ```sh block after '%s'" % lead)
        found[key] = m.group(1).strip()
    return found


def run(command, cwd):
    """Runs `command` with bash in `cwd`: (exit status, wall s, CPU s, peak RSS MB, output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(["bash", "-c", command], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of the children is the largest of any one of them (KiB on Linux)
    return p.returncode, wall, cpu, after.ru_maxrss / 1024, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["tool", "all"], help="run one of the two commands")
    ap.add_argument("--keep", help="clone into DIR/main and keep it (default: a temporary folder, removed)")
    ap.add_argument("--shared", action="store_true", help="put a link to ../shared beside the clone")
    a = ap.parse_args()
    commands = readme_commands()
    parent = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="gguf-readme-")
    clone = os.path.join(parent, "main")
    try:
        if os.path.exists(clone):
            sys.exit("error: %s exists" % clone)
        os.makedirs(parent, exist_ok=True)
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        shared = os.path.join(os.path.dirname(ROOT), "shared")
        if a.shared and os.path.isdir(shared):
            os.symlink(shared, os.path.join(parent, "shared"))
        print("clone of %s at %s, %s ../shared beside it; %d cores" % (
            subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True).stdout.strip(), clone, "with" if a.shared else "without", os.cpu_count()))
        status = 0
        results = {}
        for key in ("tool", "all"):
            if a.only and key != a.only:
                continue
            if key == "all" and "tool" in results:
                shutil.rmtree(os.path.join(clone, "build"), ignore_errors=True)  # each from nothing
            print("\n$ " + commands[key], flush=True)
            rc, wall, cpu, rss, out = run(commands[key], clone)
            results[key] = (wall, cpu, rss)
            tail = out.strip().splitlines()[-3:]
            print("\n".join("  " + line for line in tail))
            print("exit %d: %.1f s wall, %.1f s CPU (user + system), largest process %.0f MB" % (rc, wall, cpu, rss),
                  flush=True)
            if rc != 0:
                print(out[-6000:])
                status = 1
        if status == 0:
            print("\nfor the README:")
            if "tool" in results:
                w, c, _ = results["tool"]
                print("  one tool: %.0f s (%.0f s of CPU)" % (w, c))
            if "all" in results:
                w, c, r = results["all"]
                print("  everything and the tests: %.1f min (%.1f min of CPU), at most %.1f GB in one process" %
                      (w / 60, c / 60, r / 1024))
        return status
    finally:
        if not a.keep:
            shutil.rmtree(parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
