#!/usr/bin/env python3
"""Every public header is named in docs/ARCHITECTURE.md's folder tree, in its own folder.

    python3 tests/docs/check_architecture.py [REPO_ROOT]

The tree is the first ``` block under "## Folders": a folder is a line `NAME/` (indented two spaces a
level); a header is any word ending in `.hpp` on a line, in the folder the line's indentation puts it in
(a folder line may name headers of its own, `detail/  ...: endian.hpp, utf8.hpp`). Exit 0 when every
header under include/gguf/ is named, 1 listing those that are not (and names of headers that do not
exist, which the tree must not keep).
"""
import os
import re
import sys


def named_headers(text):
    block = text.split("## Folders", 1)[1].split("```", 2)[1]
    found = set()
    stack = []  # (indent, folder path)
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        first = line.split()[0]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        here = stack[-1][1] if stack else ""
        folder = None
        if first.endswith("/"):
            folder = (here + first) if here or first == "include/gguf/" else first
            if first == "include/gguf/":
                folder = ""
            stack.append((indent, folder))
        words = re.findall(r"[A-Za-z0-9_./]+\.hpp", line)
        for w in words:
            base = folder if folder is not None else here
            found.add(w if "/" in w and not base else base + w)
    return found


def main(root):
    text = open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8").read()
    named = named_headers(text)
    inc = os.path.join(root, "include", "gguf")
    headers = set()
    for d, _, files in os.walk(inc):
        for f in files:
            if f.endswith(".hpp"):
                headers.add(os.path.relpath(os.path.join(d, f), inc).replace(os.sep, "/"))
    missing = sorted(headers - named)
    stale = sorted(n for n in named - headers if not n.startswith(("src/", "tests/", "bench/", "examples/")))
    for h in missing:
        print(f"not named in docs/ARCHITECTURE.md: include/gguf/{h}")
    for h in stale:
        print(f"named in docs/ARCHITECTURE.md but not a header: {h}")
    print(f"{len(headers)} public headers, {len(missing)} not named, {len(stale)} stale names")
    return 1 if missing or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")))
