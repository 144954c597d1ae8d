"""Builds pygguf's compiled core with CMake (the same target as the CMake option GGUF_BUILD_PYTHON).

setuptools cannot give each of the dispatch library's sources its own instruction-set flags, so the
extension is built by CMake and copied where setuptools expects it. Environment:
  CMAKE_BUILD_PARALLEL_LEVEL   compile jobs (default: the number of CPUs, at most 4)
  PYGGUF_CMAKE_ARGS            extra arguments for the CMake configure step
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    """Configures the repository with CMake and builds the `pygguf_core` target."""

    def build_extension(self, ext: Extension) -> None:
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("pygguf needs CMake (3.25 or later) to build")
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
        subprocess.run(args, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(min(os.cpu_count() or 1, 4))
        subprocess.run([cmake, "--build", str(build), "--target", "pygguf_core", "-j", jobs], check=True)
        built = sorted((build / "python" / "pygguf").glob("_core*"))
        built = [p for p in built if p.suffix in (".so", ".pyd")]
        if not built:
            raise RuntimeError(
                f"CMake did not build pygguf's core for {sys.executable}: see its messages above "
                "(numpy, pybind11 and the Python headers are needed)")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)


setup(
    packages=["pygguf"],
    package_dir={"pygguf": "python/pygguf"},
    package_data={"pygguf": ["*.pyi", "py.typed"]},
    ext_modules=[Extension("pygguf._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
