"""Builds pygguf's compiled core with CMake (the same target as the CMake option GGUF_BUILD_PYTHON).

setuptools cannot give each of the dispatch library's sources its own instruction-set flags, so the
extension is built by CMake and copied where setuptools expects it. Nothing is written into the source
tree: setuptools' build directories and its .egg-info go to a temporary directory, removed at the end.
pip runs this through python/backend/pygguf_build.py, which first checks that the interpreter has what
the build needs.
Environment:
  CMAKE_BUILD_PARALLEL_LEVEL   compile jobs (default: the number of CPUs, at most 4)
  PYGGUF_CMAKE_ARGS            extra arguments for the CMake configure step
  PYGGUF_BUILD_DIR             build there instead, and keep it (a second install then rebuilds only
                               what changed)
"""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _scratch() -> str:
    """Where setuptools builds: $PYGGUF_BUILD_DIR, or a temporary directory removed at exit."""
    kept = os.environ.get("PYGGUF_BUILD_DIR")
    if kept:
        Path(kept).mkdir(parents=True, exist_ok=True)
        return str(Path(kept).resolve())
    path = tempfile.mkdtemp(prefix="pygguf-build-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _run(args: list[str]) -> None:
    """Runs a CMake step; its own messages say what failed, so a failure ends the build without a traceback."""
    if subprocess.run(args).returncode != 0:
        sys.exit(f"error: pygguf's build failed in `{shlex.join(args)}`: see CMake's messages above")


class CMakeBuild(build_ext):
    """Configures the repository with CMake and builds the `pygguf_core` target."""

    def build_extension(self, ext: Extension) -> None:
        cmake = shutil.which("cmake")
        if cmake is None:
            sys.exit("error: pygguf needs CMake (3.25 or later) to build (Debian: apt-get install cmake)")
        build = Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        args = [
            cmake, "-S", str(ROOT), "-B", str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DGGUF_BUILD_PYTHON=ON", "-DGGUF_BUILD_TESTS=OFF", "-DGGUF_BUILD_EXAMPLES=OFF",
            "-DGGUF_BUILD_BENCHMARKS=OFF", "-DGGUF_INSTALL=OFF",
            f"-DPython_EXECUTABLE={sys.executable}",
        ]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        args += shlex.split(os.environ.get("PYGGUF_CMAKE_ARGS", ""))
        _run(args)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(min(os.cpu_count() or 1, 4))
        _run([cmake, "--build", str(build), "--target", "pygguf_core", "-j", jobs])
        built = sorted((build / "python" / "pygguf").glob("_core*"))
        built = [p for p in built if p.suffix in (".so", ".pyd")]
        if not built:
            sys.exit(
                f"error: CMake did not build pygguf's core for {sys.executable}: see its messages above "
                "(numpy, pybind11 and the Python headers are needed; Debian: python3-dev)"
            )
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)


_SCRATCH = _scratch()

setup(
    packages=["pygguf"],
    package_dir={"pygguf": "python/pygguf"},
    package_data={"pygguf": ["*.pyi", "py.typed"]},
    ext_modules=[Extension("pygguf._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
    # out of the source tree: a checkout stays clean (`git status`) after `pip install .`
    options={"build": {"build_base": os.path.join(_SCRATCH, "build")}, "egg_info": {"egg_base": _SCRATCH}},
)
