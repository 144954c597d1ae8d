#!/usr/bin/env python3
"""The semantics cases of gguf::chat_template (semantics.json), checked against Jinja2.

semantics.json lists small templates, each with its render variables and what Jinja2, set up as
transformers sets it up (reference.py), gives: the text, or the exception it raises (`error`, and for
`raise_exception` the `message` verbatim). The C++ tests (tests/test_chat_template.cpp) render every case
and compare; this script keeps the file honest:

    semantics.py            check that every stored expectation is still Jinja2's (exit 1 on a drift)
    semantics.py --update   rewrite the expectations from Jinja2 (after adding or editing a case)

A case may carry `ours`: the exception name our engine reports where Python raises something Jinja2 does
not wrap (a SyntaxError of the Python Jinja2 compiles to, a TypeError for the missing loader). The clock
of strftime_now is fixed at NOW. Exits 0 with `skip:` when jinja2 is not importable.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "semantics.json"
NOW = datetime(2026, 1, 15, 10, 30, 0)


def expectation(template: str, context: dict) -> dict:
    """What the reference gives for one case: {"text": ...} or {"error": name[, "message": ...]}."""
    import reference

    try:
        return {"text": reference.render(template, context, NOW)}
    except Exception as e:  # noqa: BLE001 - any exception is the expectation
        out = {"error": type(e).__name__}
        if out["error"] == "TemplateError":
            out["message"] = str(e)
        return out


def visible(text: str) -> str:
    """A JSON line with invisible characters (other than the space) written as \\u escapes."""
    out = []
    for ch in text:
        if ch == " " or (ch.isprintable() and not ch.isspace()):
            out.append(ch)
        elif ord(ch) < 0x10000:
            out.append("\\u%04x" % ord(ch))
        else:
            cp = ord(ch) - 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)))
    return "".join(out)


def write(cases: list[dict]) -> None:
    """One case a line, keys in a fixed order."""
    order = ["why", "template", "context", "text", "error", "message", "ours"]
    lines = [visible(json.dumps({k: c[k] for k in order if k in c}, ensure_ascii=False)) for c in cases]
    CASES.write_text("[\n " + ",\n ".join(lines) + "\n]\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite the expectations from Jinja2")
    args = ap.parse_args()
    try:
        import jinja2  # noqa: F401
    except ImportError:
        print("skip: jinja2 is not importable (Debian: python3-jinja2)")
        return 0
    sys.path.insert(0, str(HERE))
    cases = json.loads(CASES.read_text(encoding="utf-8"))
    drift = 0
    for c in cases:
        want = expectation(c["template"], c["context"])
        have = {k: c[k] for k in ("text", "error", "message") if k in c}
        if want == have:
            continue
        if args.update:
            for k in ("text", "error", "message"):
                c.pop(k, None)
            c.update(want)
        else:
            drift += 1
            print(f"drift: {c['why']}\n  stored: {have!r:.300}\n  Jinja2: {want!r:.300}")
    if args.update:
        write(cases)
        print(f"{len(cases)} cases written to {CASES}")
        return 0
    print(f"{len(cases) - drift} of {len(cases)} stored expectations are Jinja2's")
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())
