#!/usr/bin/env python3
"""The README stays a page a newcomer reads through: at most 350 lines (issue 47); the rest belongs in
docs/. usage: check_readme.py ROOT"""
import sys
from pathlib import Path

LIMIT = 350
lines = (Path(sys.argv[1]) / "README.md").read_text(encoding="utf-8").count("\n")
print(f"README.md: {lines} lines (at most {LIMIT})")
sys.exit(0 if lines <= LIMIT else 1)
