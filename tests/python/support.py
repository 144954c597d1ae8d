"""What the Python tests share: where the test data lies, and the built tools they compare with."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
RULES = ROOT / "tests" / "fuzz" / "seeds" / "rules"
#: The shared test data and the oracle: ../shared beside the checkout, or $GGUF_SHARED_DIR. Every test that
#: needs them skips, naming what is missing, when they are not there.
SHARED = Path(os.environ.get("GGUF_SHARED_DIR", ROOT.parent / "shared"))
ORACLE = SHARED / "oracle" / "ggml_oracle.py"


def cases(values, what: str) -> list:
    """`values` to parametrize a test with, or, when there are none (no ../shared), one case that skips
    naming `what`: pytest 7.2 cannot name the cases of an empty list and stops at collection."""
    values = list(values)
    if values:
        return values
    return [pytest.param(None, id="none", marks=pytest.mark.skip(reason=f"no {what} (../shared is not there)"))]


def committed_files() -> list[Path]:
    """Every GGUF file the repository holds that the library accepts (the rule seeds named ok-*)."""
    files = sorted(DATA.rglob("*.gguf")) + sorted(RULES.glob("ok-*.gguf"))
    files += sorted((ROOT / "tests" / "fuzz" / "seeds" / "fixtures").glob("*.gguf"))
    return files


def refused_files() -> list[Path]:
    """The rule seeds the library refuses: one broken rule each."""
    return sorted(p for p in RULES.glob("*.gguf") if not p.name.startswith("ok-"))


def find_tool(name: str) -> Path | None:
    """A built gguf tool: in $PYGGUF_TOOLS (ctest sets it to the build's examples folder), else on PATH."""
    folder = os.environ.get("PYGGUF_TOOLS")
    if folder:
        for candidate in (Path(folder) / name, Path(folder) / f"{name}.exe"):
            if candidate.exists():
                return candidate
    found = shutil.which(name)
    return Path(found) if found else None


def tool(name: str) -> Path:
    """`find_tool`, skipping the test without it."""
    found = find_tool(name)
    if found is None:
        pytest.skip(f"{name} is not built (set PYGGUF_TOOLS to the build's examples folder)")
    return found
