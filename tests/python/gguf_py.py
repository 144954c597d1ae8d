"""Finds gguf-py, llama.cpp's Python package, the reference ``pygguf.compat`` is compared with.

Where it looks, in order:

1. ``GGUF_PY_DIR``: a folder holding the ``gguf`` package (llama.cpp's ``gguf-py`` folder);
2. an importable ``gguf`` (``pip install gguf``);
3. the cache ``$GGUF_ORACLE_HOME/gguf-py`` (``~/.cache/gguf-oracle/gguf-py``, beside the ggml oracle's
   npm folder), filled on first use from the llama.cpp sources in the npm package
   ``node-llama-cpp@3.22.1`` (needs ``npm`` and ``git``; nothing else is downloaded).

``load()`` gives the module, or ``None`` and the reason, for the tests to skip with.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

NPM_PACKAGE = "node-llama-cpp@3.22.1"
BUNDLE = "package/llama/gitRelease.bundle"

_cached: tuple[ModuleType | None, str] | None = None


def cache_dir() -> Path:
    """Where the fetched gguf-py is kept."""
    home = os.environ.get("GGUF_ORACLE_HOME") or os.path.join(Path.home(), ".cache", "gguf-oracle")
    return Path(home) / "gguf-py"


def _import_from(folder: Path | None) -> ModuleType:
    if folder is not None:
        sys.path.insert(0, str(folder))
    module = importlib.import_module("gguf")
    if not hasattr(module, "GGUFReader") or not hasattr(module, "quants"):
        raise ImportError(f"{module.__file__} is not gguf-py (no GGUFReader or quants)")
    return module


def _fetch(target: Path) -> None:
    """Extracts gguf-py from the npm package's llama.cpp git bundle into ``target``."""
    for program in ("npm", "git"):
        if shutil.which(program) is None:
            raise RuntimeError(f"{program} is not installed")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        work = Path(tmp)
        subprocess.run(["npm", "pack", "--silent", NPM_PACKAGE], cwd=work, check=True, capture_output=True, timeout=900)
        tgz = next(work.glob("node-llama-cpp-*.tgz"))
        with tarfile.open(tgz) as archive:
            bundle = archive.extractfile(BUNDLE)
            if bundle is None:
                raise RuntimeError(f"{tgz.name} has no {BUNDLE}")
            (work / "llama.bundle").write_bytes(bundle.read())
        subprocess.run(["git", "clone", "-q", str(work / "llama.bundle"), str(work / "llama")], check=True,
                       capture_output=True, timeout=900)
        try:
            os.replace(work / "llama" / "gguf-py", target)
        except OSError:
            if not (target / "gguf" / "__init__.py").exists():  # not another process that got there first
                raise


def load() -> tuple[ModuleType | None, str]:
    """gguf-py and where it came from, or ``None`` and why it cannot be had. Looked up once."""
    global _cached
    if _cached is None:
        _cached = _load()
    return _cached


def _load() -> tuple[ModuleType | None, str]:
    folder = os.environ.get("GGUF_PY_DIR")
    if folder:
        try:
            return _import_from(Path(folder)), f"GGUF_PY_DIR={folder}"
        except Exception as e:  # noqa: BLE001 (any failure to import is a reason to skip)
            return None, f"gguf-py from GGUF_PY_DIR={folder} does not import: {e}"
    try:
        module = _import_from(None)
        return module, f"the installed gguf ({module.__file__})"
    except Exception:  # noqa: BLE001 (not installed, or not gguf-py: try the cache)
        sys.modules.pop("gguf", None)
    target = cache_dir()
    try:
        if not (target / "gguf" / "__init__.py").exists():
            _fetch(target)
        return _import_from(target), str(target)
    except Exception as e:  # noqa: BLE001
        return None, f"gguf-py is not installed and could not be fetched from npm into {target}: {e}"
