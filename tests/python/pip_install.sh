#!/usr/bin/env bash
# pygguf the way the README installs it: a venv made with --system-site-packages (numpy and pybind11
# from the system), `pip install --no-build-isolation .` from the repository root, then the Python tests
# run from outside the checkout against the installed package.
# usage: tests/python/pip_install.sh VENV_DIR [TOOLS_DIR]
#   TOOLS_DIR  the built gguf tools the tests compare with (optional)
# The interpreter is the first of python3 on PATH and /usr/bin/python3 that imports numpy and pybind11.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$1
tools=${2:-}
python=""
for candidate in "$(command -v python3 || true)" /usr/bin/python3; do
  if [[ -n $candidate ]] && "$candidate" -c "import numpy, pybind11" 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [[ -z $python ]]; then
  echo "no Python imports numpy and pybind11: pygguf's pip install is skipped"
  exit 0
fi
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
(cd "$root" && CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/python" -m pip install --no-build-isolation -q .)
cd "$venv"  # away from the checkout: the installed package is the one imported
"$venv/bin/python" -c "import pygguf, sys; print('pygguf', pygguf.__version__, 'from', pygguf.__file__)"
PYGGUF_TOOLS="$tools" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/python"
