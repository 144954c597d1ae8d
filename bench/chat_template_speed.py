"""pygguf.ChatTemplate against Jinja2 as transformers sets it up, in the same process, on every shared
chat template.

  PYTHONPATH=build/python /usr/bin/python3 bench/chat_template_speed.py [--shared DIR] [--repeat 7]
      [--cases chat_multi_turn,tools_full_round] [--only SUBSTRING] [--markdown] [--json OUT]

compile: jinja2's environment set up as transformers' _compile_jinja_template sets it up (a new
    ImmutableSandboxedEnvironment with its extensions, filter and globals, then from_string:
    tests/chat/reference.py's compile_template) against pygguf.ChatTemplate(source).
render: the compiled jinja2 template's render(**variables), with the variables transformers passes
    (tools and documents None when absent, add_generation_prompt False unless given), against
    ChatTemplate.render(messages, tools=..., documents=..., add_generation_prompt=..., **rest). Both
    read the clock as transformers does (strftime_now is the current time); each pair's texts are
    first checked equal with a fixed clock, and pairs Jinja2 raises on are skipped.

Each figure is the best of --repeat runs of enough calls to take at least --min-ms (Jinja2's and ours
alternate, so that both see the same machine). The ratio is Jinja2's time over ours: how many times
faster pygguf is. Needs jinja2 (Debian's /usr/bin/python3 has 3.1.2) and ../shared/data/chat-templates.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "chat"))
import make_expected  # noqa: E402
import reference  # noqa: E402

import pygguf  # noqa: E402

#: The goals: how many times faster than Jinja2 each must be (the ratio in the same run).
TARGETS = {"compile": 20.0, "render": 10.0}
DEFAULT_CASES = "chat_multi_turn,tools_full_round"


def calls_per_run(fn, min_seconds: float) -> int:
    """How many calls of `fn` take at least `min_seconds` (a doubling count, from one)."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= min_seconds or n >= 1 << 20:
            return n
        n *= 2


def best_pair(jinja, ours, repeat: int, min_seconds: float) -> tuple[float, float]:
    """The best time of one call of each, in seconds, their runs alternating."""
    nj, no = calls_per_run(jinja, min_seconds), calls_per_run(ours, min_seconds)
    tj = to = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(nj):
            jinja()
        tj = min(tj, (time.perf_counter() - t0) / nj)
        t0 = time.perf_counter()
        for _ in range(no):
            ours()
        to = min(to, (time.perf_counter() - t0) / no)
    return tj, to


def summary(ratios: list[float]) -> dict[str, float]:
    """Median, geometric mean and minimum of the ratios."""
    return {
        "median": statistics.median(ratios),
        "geomean": math.exp(sum(math.log(r) for r in ratios) / len(ratios)),
        "min": min(ratios),
    }


def ours_arguments(context: dict) -> tuple[object, dict]:
    """A case's variables as ChatTemplate.render's arguments: messages, then the keywords."""
    rest = dict(context)
    messages = rest.pop("messages", [])
    return messages, rest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", help="the shared directory (default ../shared or $GGUF_SHARED_DIR)")
    ap.add_argument("--cases", default=DEFAULT_CASES, help=f"the contexts, tests/chat/cases names (default {DEFAULT_CASES})")
    ap.add_argument("--only", help="only the templates whose name contains this")
    ap.add_argument("--repeat", type=int, default=7, help="runs of each measurement; the best counts (default 7)")
    ap.add_argument("--min-ms", type=float, default=2.0, help="the shortest run, in ms (default 2)")
    ap.add_argument("--markdown", action="store_true", help="the per-template table in Markdown")
    ap.add_argument("--json", type=Path, help="write every figure there")
    args = ap.parse_args()
    sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")

    templates = make_expected.template_paths(make_expected.shared_dir(args.shared), args.only)
    if not templates:
        print(f"skip: no chat templates in {make_expected.shared_dir(args.shared) / 'data' / 'chat-templates'}")
        return 0
    case_names = [c for c in args.cases.split(",") if c]
    contexts = {c: reference.load_case(str(make_expected.CASES / f"{c}.json")) for c in case_names}
    fixed = reference.parse_now(make_expected.NOW)
    min_seconds = args.min_ms / 1000
    print(f"pygguf {pygguf.__version__}, jinja2 {reference.jinja2.__version__}, Python {sys.version.split()[0]}; "
          f"{len(templates)} templates, contexts {', '.join(case_names)}; best of {args.repeat} runs of >= {args.min_ms} ms")

    rows = []
    for path in templates:
        source = reference.read_template(str(path))
        row = {"template": path.stem, "compile": None, "render": {}}
        try:
            checked = reference.compile_template(source, fixed)
        except Exception as e:  # noqa: BLE001 (none of the 150 today)
            row["error"] = reference.error_text(e)
            rows.append(row)
            continue
        ours = pygguf.ChatTemplate(source)
        tj, to = best_pair(lambda: reference.compile_template(source), lambda: pygguf.ChatTemplate(source),
                           args.repeat, min_seconds)
        row["compile"] = {"jinja2": tj, "pygguf": to, "ratio": tj / to}
        jinja = reference.compile_template(source)  # the clock read at each render, as transformers'
        for name, context in contexts.items():
            variables = reference.render_variables(context)
            messages, rest = ours_arguments(context)
            try:
                want = checked.render(**variables)
            except Exception:  # noqa: BLE001 (the pairs Jinja2 raises on are not timed)
                continue
            got = ours.render(messages, now=fixed, **rest)
            if got != want:
                raise SystemExit(f"{path.stem} × {name}: pygguf's text differs from Jinja2's")
            tj, to = best_pair(lambda: jinja.render(**variables), lambda: ours.render(messages, **rest),
                               args.repeat, min_seconds)
            row["render"][name] = {"jinja2": tj, "pygguf": to, "ratio": tj / to}
        rows.append(row)
        if not args.markdown:
            c = row["compile"]
            text = f"{path.stem[:60]:<60} compile {c['jinja2'] * 1e6:9.0f} {c['pygguf'] * 1e6:7.1f} us x{c['ratio']:6.1f}"
            for name, r in row["render"].items():
                text += f" | {name} {r['jinja2'] * 1e6:7.1f} {r['pygguf'] * 1e6:6.1f} us x{r['ratio']:5.1f}"
            print(text, flush=True)

    if args.markdown:
        head = "| template | compile jinja2 µs | pygguf µs | × |"
        rule = "|---|---:|---:|---:|"
        for name in case_names:
            head += f" render {name} jinja2 µs | pygguf µs | × |"
            rule += "---:|---:|---:|"
        print(head)
        print(rule)
        for row in rows:
            c = row["compile"]
            if c is None:
                print(f"| {row['template']} | {row.get('error', '')} |")
                continue
            line = f"| {row['template']} | {c['jinja2'] * 1e6:.0f} | {c['pygguf'] * 1e6:.1f} | {c['ratio']:.0f} |"
            for name in case_names:
                r = row["render"].get(name)
                line += " – | – | – |" if r is None else f" {r['jinja2'] * 1e6:.1f} | {r['pygguf'] * 1e6:.1f} | {r['ratio']:.1f} |"
            print(line)

    compile_ratios = [r["compile"]["ratio"] for r in rows if r["compile"]]
    groups = {"compile": compile_ratios}
    for name in case_names:
        groups[f"render {name}"] = [r["render"][name]["ratio"] for r in rows if name in r["render"]]
    groups["render (all)"] = [x["ratio"] for r in rows for x in r["render"].values()]
    figures = {}
    print()
    for what, ratios in groups.items():
        if not ratios:
            continue
        s = figures[what] = summary(ratios) | {"n": len(ratios)}
        target = TARGETS["compile" if what == "compile" else "render"]
        verdict = "meets" if s["median"] >= target else "misses"
        print(f"{what:<32} n={s['n']:<4} median x{s['median']:6.1f}  geomean x{s['geomean']:6.1f}  "
              f"min x{s['min']:6.1f}  ({verdict} the x{target:.0f} target at the median)")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summary": figures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
