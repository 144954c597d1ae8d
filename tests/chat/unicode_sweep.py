#!/usr/bin/env python3
"""Python's str methods in our engine against Jinja2's (which are Python's), code point by code point.

Templates call `strip()`, `split()`, `title()`, `upper()`, `isspace()`... on arbitrary text; the engine
answers from tables generated from Python's unicodedata (src/generate/py_unicode_tables.py). This renders,
for every assigned code point c (and a sample of unassigned ones), the predicates and case mappings of
`c`, and of the strings around it that the context-dependent rules read (`"a" + c + "b"` for title's
word boundaries, `"AΣ" + c` for the final sigma, `c + "x" + c` for strip and split), through both
engines, in chunks, and compares the texts.

usage: unicode_sweep.py GGUF_CHAT [ARGS...]   ours speaks `--batch` (tests/chat/README.md)
Exits 1 on a difference (the first ones are shown), 0 when all agree, 0 with `skip:` without jinja2.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHUNK = 4000  # code points a render: well within the engine's default step and output limits

TEMPLATE = """{%- for c in chars -%}
{{ [c.isspace(), c.isalpha(), c.isalnum(), c.isdecimal(), c.isdigit(), c.isnumeric(), c.isprintable(),
    c.islower(), c.isupper(), c.istitle(), c.upper(), c.lower(), c.title(), c.capitalize(), c.swapcase(),
    ('a' ~ c ~ 'b').title(), ('AΣ' ~ c).lower(), ('AΣ' ~ c ~ 'a').lower(), (c ~ 'x' ~ c).strip(),
    (c ~ 'x' ~ c).split(), c|length, (c ~ 'Ab').istitle()] }}
{% endfor -%}"""


def code_points() -> list[str]:
    """Every assigned code point but the surrogates, and every 97th unassigned one."""
    out = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if unicodedata.category(c) != "Cn" or cp % 97 == 0:
            out.append(c)
    return out


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    try:
        sys.path.insert(0, str(HERE))
        import reference
    except ImportError:
        print("skip: jinja2 is not importable (Debian: python3-jinja2)")
        return 0
    chars = code_points()
    chunks = [chars[i:i + CHUNK] for i in range(0, len(chars), CHUNK)]
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp, "sweep.jinja")
        template.write_text(TEMPLATE, encoding="utf-8")
        requests = []
        for k, chunk in enumerate(chunks):
            case = Path(tmp, f"chunk{k}.json")
            case.write_text(json.dumps({"chars": chunk}, ensure_ascii=True), encoding="utf-8")
            requests.append(json.dumps({"template": str(template), "input": str(case)}))
        run = subprocess.run([*sys.argv[1:], "--batch"], input="\n".join(requests) + "\n", capture_output=True,
                             text=True, encoding="utf-8", timeout=600)
        if run.returncode != 0:
            print(f"error: ours exited {run.returncode}: {run.stderr.strip()[:500]}")
            return 1
        replies = [json.loads(line) for line in run.stdout.splitlines()]
    if len(replies) != len(chunks):
        print(f"error: {len(replies)} replies to {len(chunks)} requests")
        return 1
    compiled = reference.compile_template(TEMPLATE)
    bad = 0
    for chunk, reply in zip(chunks, replies):
        want = reference.render_compiled(compiled, {"chars": chunk}).split("\n")
        if not reply.get("ok"):
            print(f"error: ours failed on U+{ord(chunk[0]):04X}..U+{ord(chunk[-1]):04X}: {reply.get('error')}")
            return 1
        have = reply["text"].split("\n")
        for c, w, h in zip(chunk, want, have):
            if w != h:
                bad += 1
                if bad <= 10:
                    print(f"U+{ord(c):04X} {unicodedata.name(c, '?')}:\n  Jinja2: {w}\n  ours:   {h}")
        if len(want) != len(have):
            bad += 1
            print(f"U+{ord(chunk[0]):04X}..: {len(have)} lines where Jinja2 has {len(want)}")
    print(f"{len(chars) - bad} of {len(chars)} code points agree ({unicodedata.unidata_version} in this Python)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
