#!/usr/bin/env bash
# pygguf the way the README installs it: a venv made with --system-site-packages (numpy and pybind11
# from the system), `pip install --no-build-isolation .` from the repository root, then the Python tests
# run from outside the checkout against the installed package. Checked on the way: an interpreter that
# lacks a build requirement gets one line saying what is missing and how to get it (no traceback), and
# the install leaves a git checkout as it found it (`git status --porcelain` the same before and after:
# empty in CI's clean checkout).
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
in_git=0
if git -C "$root" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  in_git=1
  status_before=$(git -C "$root" status --porcelain)
fi

# Build requirements the interpreter cannot import (shadowed by packages that fail to import, first on
# PYTHONPATH): pip must fail with the build backend's one line naming them, before anything is built.
hidden=$(mktemp -d)
trap 'rm -rf "$hidden"' EXIT
refuse_without() {  # refuse_without EXPECTED_NAMES MODULE...
  local expected=$1 rc=0 out
  shift
  rm -rf "${hidden:?}"/*
  for module in "$@"; do
    mkdir -p "$hidden/$module"
    echo "raise ImportError('hidden by pip_install.sh')" > "$hidden/$module/__init__.py"
  done
  out=$(cd "$root" && PYTHONPATH="$hidden" "$venv/bin/python" -m pip install --no-build-isolation --no-deps . 2>&1) || rc=$?
  if [[ $rc == 0 ]] || grep -q "Traceback" <<< "$out" ||
     ! grep -q "^ *error: pygguf needs $expected to build, which .* lacks: on Debian/Ubuntu \`apt-get install " <<< "$out"; then
    printf '%s\n' "$out"
    echo "pip_install.sh: without $*, pip install did not fail with one line naming $expected (exit $rc)" >&2
    exit 1
  fi
  echo "without $*: $(grep -o "error: pygguf needs [^:]*" <<< "$out" | head -1)"
}
refuse_without "numpy and pybind11" numpy pybind11
refuse_without "setuptools.*" setuptools

(cd "$root" && CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/python" -m pip install --no-build-isolation -q .)
if [[ $in_git == 1 ]]; then
  status_after=$(git -C "$root" status --porcelain)
  if [[ $status_after != "$status_before" ]]; then
    echo "pip_install.sh: pip install changed the checkout (git status --porcelain, before and after):" >&2
    diff <(printf '%s\n' "$status_before") <(printf '%s\n' "$status_after") >&2 || true
    exit 1
  fi
fi
cd "$venv"  # away from the checkout: the installed package is the one imported
"$venv/bin/python" -c "import pygguf, sys; print('pygguf', pygguf.__version__, 'from', pygguf.__file__)"
PYGGUF_TOOLS="$tools" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/python"
