#!/usr/bin/env python3
"""gguf::chat_template against Jinja2 as transformers sets it up (reference.py): every shared chat
template × every case of tests/chat/cases, byte for byte.

usage: agreement.py [options] GGUF_CHAT [ARGS...]     ours is `GGUF_CHAT [ARGS...] --template T --now ISO IN.json`
       agreement.py --batch [options] GGUF_CHAT [ARGS...]  ours is one `GGUF_CHAT [ARGS...] --batch --now ISO`
                                                           process fed JSON lines (README.md)
       agreement.py --pygguf [options]                     ours is pygguf.ChatTemplate, in process
       agreement.py --self-test                            the plumbing, with the reference as ours

Where Jinja2 renders, ours must render the same text; where Jinja2 raises, ours must fail (exit 1 and an
`error: ...` line on stderr, nothing on stdout); where Jinja2's error comes from the template's
raise_exception, our error must contain its message verbatim. Prints a table of the templates with
mismatches and the first mismatches with the first differing offset; exits 1 on any mismatch, 0 when all
agree, and 0 with `skip:` when ../shared (or $GGUF_SHARED_DIR) or ours is missing.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_expected  # noqa: E402
import reference  # noqa: E402

#: Seconds one render may take (templates are small; a hang is a bug of ours).
TIMEOUT = 30

KINDS = {
    "text": "texts differ",
    "ours_raised": "ours failed where Jinja2 renders",
    "ours_rendered": "ours rendered where Jinja2 raises",
    "message": "raise_exception's message missing from our error",
    "broken": "crash, timeout or malformed output",
}


class Broken(Exception):
    """Ours neither rendered nor failed cleanly: a crash, a timeout, a wrong exit code or stderr."""


# --- ours: each renderer is a callable (template_path, case_path) -> (ok, text_or_error) -----------------

class CommandRenderer:
    """One process a render: `CMD --template T --now ISO IN.json`; exit 0 = the text on stdout, exit 1 =
    an `error: ...` line on stderr (what follows `error: ` is returned), anything else is Broken."""

    def __init__(self, cmd: list[str], now: str):
        self.cmd, self.now = cmd, now

    def __call__(self, template_path: Path, case_path: Path) -> tuple[bool, str]:
        """Render one pair in a fresh process."""
        argv = [*self.cmd, "--template", str(template_path), "--now", self.now, str(case_path)]
        try:
            run = subprocess.run(argv, capture_output=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Broken(f"timeout after {TIMEOUT} s")
        return parse_process_result(run.returncode, run.stdout, run.stderr)


def parse_process_result(code: int, out: bytes, err: bytes) -> tuple[bool, str]:
    """(ok, text_or_error) from a render's exit code and output, or Broken."""
    if code == 0:
        try:
            return True, out.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Broken(f"stdout is not UTF-8: {e}")
    if code == 1:
        text = err.decode("utf-8", "replace").removesuffix("\n")
        if out:
            raise Broken(f"exit 1 with {len(out)} bytes on stdout")
        # One `error:` line; more lines only as the continuation of a message with newlines in it.
        if not text.startswith("error: ") or "\nerror:" in text:
            raise Broken(f"exit 1 without exactly one `error:` line on stderr: {text[:300]!r}")
        return False, text[len("error: "):]
    raise Broken(f"exit code {code}: {err.decode('utf-8', 'replace')[-300:]!r}")


class BatchRenderer:
    """One long-lived `CMD --batch --now ISO` process: a JSON line `{"template": T, "input": IN}` in,
    a JSON line `{"ok": true, "text": ...}` or `{"ok": false, "error": ...}` out, in order."""

    def __init__(self, cmd: list[str], now: str):
        self.cmd, self.now = cmd, now
        self.proc = None

    def _start(self):
        """(Re)start the process; a crash costs the pair being rendered, not the run."""
        self.proc = subprocess.Popen([*self.cmd, "--batch", "--now", self.now], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def __call__(self, template_path: Path, case_path: Path) -> tuple[bool, str]:
        """Send one request, read its reply line."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        request = json.dumps({"template": str(template_path), "input": str(case_path)}) + "\n"
        try:
            self.proc.stdin.write(request.encode("utf-8"))
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()  # bytes up to b"\n": U+2028 inside a reply is no line end
        except (BrokenPipeError, OSError) as e:
            self.proc = None
            raise Broken(f"batch process died: {e}")
        if not line:
            code = self.proc.wait()
            self.proc = None
            raise Broken(f"batch process ended (exit {code}) without a reply")
        try:
            reply = json.loads(line.decode("utf-8"))
            return (True, reply["text"]) if reply["ok"] else (False, reply["error"])
        except (ValueError, KeyError, TypeError) as e:
            raise Broken(f"malformed batch reply {line[:200]!r}: {e}")

    def close(self):
        """End the process (closing its stdin is the end of the batch)."""
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=TIMEOUT)
            self.proc = None


def pygguf_renderer(now: str):
    """pygguf's ChatTemplate as ours, in process, or None when pygguf (with ChatTemplate) cannot be imported.
    Each template is compiled once (`ChatTemplate(source)`); a case's variables are render's arguments
    (`render(messages, now=..., **the rest)`: tools, documents and add_generation_prompt are keywords of it,
    every other variable too); an exception is our error, `Kind: message` (TemplateError's str is
    `Kind: message (line N)`, raise_exception's message verbatim)."""
    try:
        from pygguf import ChatTemplate
    except ImportError:
        return None
    when = reference.parse_now(now)
    compiled = {}

    def render_ours(template_path: Path, case_path: Path) -> tuple[bool, str]:
        """Render in process, compiling each template once."""
        try:
            if template_path not in compiled:
                try:
                    compiled[template_path] = ChatTemplate(reference.read_template(str(template_path)))
                except Exception as e:  # remembered: every case of the template reports it
                    compiled[template_path] = e
            template = compiled[template_path]
            if isinstance(template, Exception):
                raise template
            variables = reference.load_case(str(case_path))
            messages = variables.pop("messages", None)
            return True, template.render(messages, now=when, **variables)
        except Exception as e:
            return False, f"{type(e).__name__}: {e}"
    return render_ours


def reference_renderer(now: str, mutate: bool = False):
    """The reference in process, standing in for ours (self-test); `mutate` makes it wrong on purpose
    in each way the comparison must catch, keyed on the case name."""
    when = reference.parse_now(now)
    compiled = {}

    def render_ours(template_path: Path, case_path: Path) -> tuple[bool, str]:
        """Render with Jinja2, maybe then spoil the answer."""
        try:
            if template_path not in compiled:
                compiled[template_path] = reference.compile_template(reference.read_template(str(template_path)), when)
            ok, out = True, reference.render_compiled(compiled[template_path], reference.load_case(str(case_path)))
        except Exception as e:
            ok, out = False, reference.error_text(e)
        if mutate:
            name = case_path.stem
            if name == "chat_single_turn" and ok:
                out = out[:len(out) // 2] + "\u00a0" + out[len(out) // 2 + 1:]  # one character changed
            elif name == "chat_two_turn" and ok:
                ok, out = False, "RuntimeError: spoiled"
            elif name == "alternation_user_user":
                ok, out = (True, "rendered anyway") if not ok else (ok, out)
            elif name == "alternation_two_systems" and not ok and reference.is_raise_exception(out):
                out = "TemplateError: some other message"
            elif name == "system_only":
                raise Broken("pretend crash")
        return ok, out
    return render_ours


# --- the comparison -----------------------------------------------------------------------------------------

def compare(expected: dict, ours_ok: bool, ours: str) -> str | None:
    """The mismatch kind of one pair (a KINDS key), or None when ours agrees with Jinja2's `expected`."""
    if expected["ok"]:
        if not ours_ok:
            return "ours_raised"
        return None if ours == expected["text"] else "text"
    if ours_ok:
        return "ours_rendered"
    if reference.is_raise_exception(expected["error"]):
        message = expected["error"][len("TemplateError: "):]
        if message not in ours:
            return "message"
    return None


def first_difference(a: str, b: str) -> int:
    """The first offset (in characters) where a and b differ."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def describe(template: str, case: str, kind: str, expected: dict, ours_ok: bool, ours: str) -> str:
    """A few lines on one mismatch: for texts, the first differing offset, its line and column, and the
    text around it on both sides (repr, so whitespace shows)."""
    head = f"{template} × {case}: {KINDS[kind]}"
    if kind == "text":
        want = expected["text"]
        at = first_difference(want, ours)
        line = want.count("\n", 0, at) + 1
        column = at - (want.rfind("\n", 0, at) + 1) + 1
        lo = max(0, at - 40)
        return (f"{head} at offset {at} (line {line}, column {column}; lengths {len(want)} and {len(ours)})\n"
                f"    jinja2: {want[lo:at + 40]!r}\n"
                f"    ours:   {ours[lo:at + 40]!r}")
    if kind == "ours_raised":
        return f"{head}\n    ours: {ours}\n    jinja2 rendered {len(expected['text'])} characters"
    if kind == "ours_rendered":
        return f"{head}\n    jinja2: {expected['error']}\n    ours rendered {len(ours)} characters: {ours[:80]!r}"
    if kind == "message":
        return f"{head}\n    jinja2: {expected['error']}\n    ours:   {ours}"
    return f"{head}\n    {ours}"


def run_agreement(render_ours, templates: list[Path], cases: list[Path], expected: dict,
                  jobs: int = 1, show: int = 10, rows: int = 40, out=sys.stdout) -> dict:
    """Render every pair with ours (`jobs` at once), compare with `expected` (make_expected's report),
    print the table (its first `rows` templates with mismatches, and the total) and the first `show`
    mismatches; returns {kind: count} of the mismatches."""
    missing = [f"{t.stem} × {c.stem}" for t in templates for c in cases if c.stem not in expected.get(t.stem, {})]
    if missing:
        raise SystemExit(f"the expected report lacks {len(missing)} pairs, e.g. {missing[0]}: remake it")
    pairs = [(t, c) for t in templates for c in cases]

    def one(pair):
        """Ours on one pair, Broken folded into the answer."""
        try:
            ok, text = render_ours(*pair)
            return ok, text, None
        except Broken as e:
            return False, str(e), "broken"

    if jobs > 1:
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            results = list(pool.map(one, pairs))
    else:
        results = [one(p) for p in pairs]

    per_template = collections.OrderedDict((t.stem, collections.Counter()) for t in templates)
    kinds = collections.Counter()
    shown = []
    for (t, c), (ok, text, broken) in zip(pairs, results):
        want = expected[t.stem][c.stem]
        kind = broken or compare(want, ok, text)
        per_template[t.stem]["pairs"] += 1
        per_template[t.stem][kind or "agree"] += 1
        if kind:
            kinds[kind] += 1
            if len(shown) < show:
                shown.append(describe(t.stem, c.stem, kind, want, ok, text))

    columns = ["pairs", "agree", *KINDS]
    bad = [(t, c) for t, c in per_template.items() if c["agree"] != c["pairs"]]  # templates with mismatches
    total = collections.Counter()
    for counts in per_template.values():
        total.update(counts)
    listed = bad[:rows] + [("TOTAL", total)]
    width = max(len("template"), *(len(t) for t, _ in listed))
    print(f"{'template':<{width}} " + " ".join(f"{k:>{max(6, len(k))}}" for k in columns), file=out)
    for i, (t, counts) in enumerate(listed):
        if i == len(listed) - 1 and len(bad) > rows:
            print(f"... and {len(bad) - rows} more templates with mismatches (--rows)", file=out)
        print(f"{t:<{width}} " + " ".join(f"{counts[k]:>{max(6, len(k))}}" for k in columns), file=out)
    for text in shown:
        print(text, file=out)
    if sum(kinds.values()) > len(shown):
        print(f"... and {sum(kinds.values()) - len(shown)} more mismatches", file=out)
    print(f"{total['agree']} of {total['pairs']} pairs agree; {len(bad)} of {len(per_template)} templates with "
          f"mismatches", file=out)
    return dict(kinds)


def load_expected(path: str | None, templates: list[Path], cases: list[Path], now: str) -> dict:
    """make_expected's report from `path`, or rendered here (a few seconds)."""
    if path:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    return make_expected.render_all(templates, cases, now)[0]


def self_test(templates: list[Path], cases: list[Path], now: str) -> int:
    """The plumbing with the reference as ours: in process, through the CLI (`--template` form, a sample)
    and through --batch, all must agree; a spoiled reference must show each mismatch kind once per
    template where it applies. Exit 0 when all hold."""
    expected = make_expected.render_all(templates, cases, now)[0]
    me = [sys.executable, str(HERE / "reference.py")]
    failures = []
    print("== in process")
    if run_agreement(reference_renderer(now), templates, cases, expected, show=3):
        failures.append("the reference disagrees with itself in process")
    print("== CLI, one process a render (a sample of templates)")
    sample = templates[::max(1, len(templates) // 4)][:4]
    if run_agreement(CommandRenderer(me, now), sample, cases, expected, jobs=os.cpu_count() or 1, show=3):
        failures.append("the reference disagrees with itself through its CLI")
    print("== --batch")
    batch = BatchRenderer(me, now)
    try:
        if run_agreement(batch, templates, cases, expected, show=3):
            failures.append("the reference disagrees with itself through --batch")
    finally:
        batch.close()
    print("== a spoiled reference (mismatches expected)")
    names = {c.stem for c in cases}
    kinds = run_agreement(reference_renderer(now, mutate=True), templates, cases, expected, show=5, rows=5)
    want = collections.Counter()
    for t in templates:
        r = expected[t.stem]
        want["text"] += "chat_single_turn" in names and r["chat_single_turn"]["ok"]
        want["ours_raised"] += "chat_two_turn" in names and r["chat_two_turn"]["ok"]
        want["ours_rendered"] += "alternation_user_user" in names and not r["alternation_user_user"]["ok"]
        want["message"] += ("alternation_two_systems" in names and not r["alternation_two_systems"]["ok"]
                            and reference.is_raise_exception(r["alternation_two_systems"]["error"]))
        want["broken"] += "system_only" in names
    if {k: v for k, v in want.items() if v} != kinds:
        failures.append(f"the spoiled reference's mismatches were {kinds}, not {dict(want)}")
    for f in failures:
        print("FAIL: " + f)
    print("self-test " + ("failed" if failures else "passed"))
    return 1 if failures else 0


def main() -> int:
    """Parse the command line, skip when something is missing, run."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("ours", nargs="*", help="the gguf-chat binary and any arguments to put before ours")
    ap.add_argument("--batch", action="store_true", help="ours speaks the JSON-lines batch protocol")
    ap.add_argument("--pygguf", action="store_true", help="ours is pygguf.ChatTemplate in this process")
    ap.add_argument("--self-test", action="store_true", help="the reference as ours, and a spoiled one")
    ap.add_argument("--shared", help="the shared directory (default ../shared or $GGUF_SHARED_DIR)")
    ap.add_argument("--only", help="only the templates whose name contains this")
    ap.add_argument("--case", help="only the cases whose name contains this")
    ap.add_argument("--now", default=make_expected.NOW, help=f"the fixed clock (default {make_expected.NOW})")
    ap.add_argument("--expected", help="make_expected.py's report instead of rendering the reference here")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="renders at once (per-render mode)")
    ap.add_argument("--show", type=int, default=10, help="mismatches to show (default 10)")
    ap.add_argument("--rows", type=int, default=40, help="templates with mismatches to list (default 40)")
    args = ap.parse_args()
    sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")

    templates = make_expected.template_paths(make_expected.shared_dir(args.shared), args.only)
    if not templates:
        print(f"skip: no chat templates in {make_expected.shared_dir(args.shared) / 'data' / 'chat-templates'}")
        return 0
    cases = [c for c in make_expected.case_paths() if not args.case or args.case in c.stem]
    if args.self_test:
        return self_test(templates, cases, args.now)

    if args.pygguf:
        render_ours = pygguf_renderer(args.now)
        if render_ours is None:
            print("skip: pygguf has no ChatTemplate (not built, or not importable here)")
            return 0
    else:
        if not args.ours:
            ap.error("give the gguf-chat binary (or --pygguf, or --self-test)")
        if not (Path(args.ours[0]).is_file() or shutil.which(args.ours[0])):
            print(f"skip: {args.ours[0]} is not there (build gguf-chat first)")
            return 0
        render_ours = (BatchRenderer if args.batch else CommandRenderer)(args.ours, args.now)
    expected = load_expected(args.expected, templates, cases, args.now)
    try:
        kinds = run_agreement(render_ours, templates, cases, expected,
                              jobs=1 if args.batch or args.pygguf else args.jobs, show=args.show, rows=args.rows)
    finally:
        if isinstance(render_ours, BatchRenderer):
            render_ours.close()
    return 1 if kinds else 0


if __name__ == "__main__":
    sys.exit(main())
