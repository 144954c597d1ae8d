#!/usr/bin/env python3
"""Render every shared chat template with every case of tests/chat/cases through the reference (Jinja2 as
transformers sets it up, see reference.py) and write the results as one JSON report.

usage: make_expected.py OUT.json [--shared DIR] [--now ISO] [--only SUBSTRING]

The report is `{template: {case: {"ok": true, "text": ...} | {"ok": false, "error": "Class: message"}}}`,
templates and cases named by file stem. A template Jinja2 cannot compile has the compile error in every
case. The templates stay in ../shared (or $GGUF_SHARED_DIR): write OUT outside the repository.
Prints how many pairs render and raise, the errors by class, and the templates that do not compile.
"""
from __future__ import annotations

import argparse
import collections
import copy
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import reference  # noqa: E402

ROOT = HERE.parents[1]
CASES = HERE / "cases"
#: The fixed clock of every agreement run (strftime_now), also the C++ side's --now.
NOW = "2026-01-15T10:30:00"


def shared_dir(given: str | None = None) -> Path:
    """../shared beside the checkout, or $GGUF_SHARED_DIR, or what the command line gives."""
    return Path(given or os.environ.get("GGUF_SHARED_DIR") or ROOT.parent / "shared")


def template_paths(shared: Path, only: str | None = None) -> list[Path]:
    """The shared chat templates, sorted by name (optionally those whose name contains `only`)."""
    paths = sorted((shared / "data" / "chat-templates").glob("*.jinja"))
    return [p for p in paths if not only or only in p.stem]


def case_paths() -> list[Path]:
    """The conversation cases of tests/chat/cases, sorted by name."""
    return sorted(CASES.glob("*.json"))


def render_all(templates: list[Path], cases: list[Path], now: str = NOW) -> tuple[dict, dict]:
    """The report for every template × case, and {template: compile error} for those Jinja2 refuses.
    Each template is compiled once; each case is loaded once and rendered from a fresh copy (templates
    can only read their variables in the immutable sandbox, but a copy keeps one case from another)."""
    when = reference.parse_now(now)
    contexts = {c.stem: reference.load_case(str(c)) for c in cases}
    report, compile_errors = {}, {}
    for path in templates:
        results = report[path.stem] = {}
        try:
            template = reference.compile_template(reference.read_template(str(path)), when)
        except Exception as e:
            compile_errors[path.stem] = reference.error_text(e)
            for name in contexts:
                results[name] = {"ok": False, "error": compile_errors[path.stem]}
            continue
        for name, context in contexts.items():
            try:
                results[name] = {"ok": True, "text": reference.render_compiled(template, copy.deepcopy(context))}
            except Exception as e:  # Jinja2's errors and what filters raise (tojson's TypeError...)
                results[name] = {"ok": False, "error": reference.error_text(e)}
    return report, compile_errors


def summarize(report: dict, compile_errors: dict, out=sys.stdout) -> None:
    """Counts: pairs, rendered, raised (raise_exception apart from Jinja2's own errors), by error class,
    the cases every template refuses or none does, and the templates that do not compile."""
    pairs = rendered = 0
    classes = collections.Counter()
    case_raised = collections.Counter()
    for template, results in report.items():
        for case, r in results.items():
            pairs += 1
            if r["ok"]:
                rendered += 1
            else:
                classes[r["error"].split(":", 1)[0]] += 1
                case_raised[case] += 1
    raised = pairs - rendered
    ncases = len(next(iter(report.values()), {}))
    print(f"{len(report)} templates x {ncases} cases = {pairs} pairs: {rendered} rendered, {raised} raised", file=out)
    for cls, n in classes.most_common():
        note = " (raise_exception)" if cls == "TemplateError" else ""
        print(f"  {n:6d} {cls}{note}", file=out)
    print("cases by templates refusing them:", file=out)
    for case in sorted(next(iter(report.values()), {})):
        print(f"  {case_raised[case]:4d} {case}", file=out)
    print(f"{len(compile_errors)} templates do not compile in Jinja2 (they must not compile for us either):", file=out)
    for template, error in sorted(compile_errors.items()):
        print(f"  {template}: {error}", file=out)


def main() -> int:
    """Render, write OUT, print the summary."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the JSON report to write (outside the repository)")
    ap.add_argument("--shared", help="the shared directory (default ../shared or $GGUF_SHARED_DIR)")
    ap.add_argument("--now", default=NOW, help=f"strftime_now's clock (default {NOW})")
    ap.add_argument("--only", help="only the templates whose name contains this")
    args = ap.parse_args()
    templates = template_paths(shared_dir(args.shared), args.only)
    if not templates:
        print(f"skip: no chat templates in {shared_dir(args.shared) / 'data' / 'chat-templates'}")
        return 0
    start = time.perf_counter()
    report, compile_errors = render_all(templates, case_paths(), args.now)
    elapsed = time.perf_counter() - start
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(report, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")
    summarize(report, compile_errors)
    print(f"wrote {args.out} in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
