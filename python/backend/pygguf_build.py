"""pygguf's build backend: setuptools' (``setuptools.build_meta``), once the interpreter is known to have
what the build needs.

``pip install --no-build-isolation .`` installs nothing: it builds with the interpreter's own packages,
and a missing one would surface as a traceback (setuptools: pip cannot load the backend; wheel: "invalid
command 'bdist_wheel'"; numpy or pybind11: deep in CMake's output). Each hook that builds or makes the
wheel's metadata checks them all first and stops with one line naming what is missing and how to get it.
"""

from __future__ import annotations

import importlib
import shutil
import sys
from typing import Any

# Debian's package of each requirement
_DEBIAN = {
    "setuptools": "python3-setuptools",
    "wheel": "python3-wheel",
    "numpy": "python3-numpy",
    "pybind11": "python3-pybind11",
    "cmake": "cmake",
}


def _imports(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def missing() -> list[str]:
    """What this interpreter lacks to build pygguf, in the order of ``_DEBIAN``."""
    absent = [m for m in ("setuptools", "numpy", "pybind11") if not _imports(m)]
    # setuptools before 70.1 takes bdist_wheel from the wheel package; later ones have their own
    if not _imports("setuptools.command.bdist_wheel") and not _imports("wheel.bdist_wheel"):
        absent.append("wheel")
    if shutil.which("cmake") is None:
        absent.append("cmake")
    return sorted(absent, key=list(_DEBIAN).index)


def _check() -> None:
    absent = missing()
    if absent:
        names = ", ".join(absent[:-1]) + (" and " if len(absent) > 1 else "") + absent[-1]
        # one line, without a traceback (SystemExit prints just its message)
        sys.exit(
            f"error: pygguf needs {names} to build, which {sys.executable} lacks: on Debian/Ubuntu "
            f"`apt-get install {' '.join(_DEBIAN[m] for m in absent)}` and make the venv with that python3 "
            "(/usr/bin/python3 -m venv --system-site-packages .venv), or install them into this Python, or "
            "drop --no-build-isolation to let pip fetch them"
        )


def _backend(check: bool = True) -> Any:
    if check:
        _check()
    elif not _imports("setuptools"):
        sys.exit(f"error: pygguf needs setuptools, which {sys.executable} lacks (Debian: python3-setuptools)")
    from setuptools import build_meta  # noqa: PLC0415 (only once it is known to import)

    return build_meta


# The hooks of PEP 517 and PEP 660. Requirements and source distributions need setuptools alone.


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    """setuptools' answer (with build isolation, pip installs pyproject.toml's requirements first)."""
    return _backend(check=False).get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings: Any = None) -> list[str]:
    """setuptools' answer."""
    return _backend(check=False).get_requires_for_build_editable(config_settings)


def get_requires_for_build_sdist(config_settings: Any = None) -> list[str]:
    """setuptools' answer."""
    return _backend(check=False).get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Any = None) -> str:
    """The wheel's metadata (setuptools makes it with wheel's code: checked as for a build)."""
    return _backend().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: Any = None) -> str:
    """The editable wheel's metadata."""
    return _backend().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory: str, config_settings: Any = None, metadata_directory: str | None = None) -> str:
    """Builds the wheel: the compiled core by CMake (setup.py)."""
    return _backend().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: Any = None, metadata_directory: str | None = None) -> str:
    """Builds an editable wheel."""
    return _backend().build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory: str, config_settings: Any = None) -> str:
    """A source distribution (nothing compiled)."""
    return _backend(check=False).build_sdist(sdist_directory, config_settings)
