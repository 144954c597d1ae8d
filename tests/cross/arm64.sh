#!/usr/bin/env bash
# Builds the test suites for ARM64 (xsimd's NEON kernels) with Debian's cross compiler and runs them
# under qemu-user: gguf-tests and gguf-simd-tests through the dispatch selector, which on ARM64 offers
# the scalar and neon64 tables (the NEON kernels compiled once, in select.cpp, as CMake builds them);
# and the fuzz target's replay of the seed corpus.
# Needs: g++-aarch64-linux-gnu qemu-user-static doctest-dev libxsimd-dev (header-only, shared with the host).
# usage: tests/cross/arm64.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build-arm64}
mkdir -p "$out/include"
# Only the header-only dependencies from the host: never the host's /usr/include as a whole.
ln -sfn /usr/include/xsimd "$out/include/xsimd"
ln -sfn /usr/include/doctest "$out/include/doctest"
cxx=aarch64-linux-gnu-g++
flags=(-std=c++20 -O2 -static -Wall -Wextra -Wpedantic -Werror -Wno-restrict
       -I"$root/include" -I"$root/tests" -I"$root/examples" -isystem "$out/include"
       -DGGUF_TEST_DATA_DIR="\"$root/tests/data\"")
cd "$root/tests"
# One object per source, as many at a time as there are cores (g++ given several sources compiles them
# one after another): every test_*.cpp of gguf-tests (as CMake builds it), then the simd suite and the
# fuzz replay; all through the dispatch selector.
mkdir -p "$out/dispatch"
suite=()
for f in test_*.cpp; do
  [[ $f == test_simd.cpp || $f == test_no_simd.cpp ]] || suite+=("${f%.cpp}")
done
suite+=(io_faults)  # output_file's fault hooks: gguf-tests' sources see them (GGUF_TEST_IO_FAULTS)
dispatch=("${suite[@]}" test_simd ../src/dispatch/select fuzz/fuzz_gguf fuzz/replay_main)
compile() {  # MODE SOURCE (without .cpp)
  local extra=()
  [[ $1 == dispatch ]] && extra=(-DGGUF_RUNTIME_DISPATCH=1 -DGGUF_DISPATCH_NEON64)
  [[ " ${suite[*]} " == *" $2 "* ]] && extra+=(-DGGUF_TEST_IO_FAULTS)
  "$cxx" "${flags[@]}" "${extra[@]}" -c "$2.cpp" -o "$out/$1/$(basename "$2").o"
}
echo "compiling ${#dispatch[@]} sources for arm64"
pids=()
for job in "${dispatch[@]/#/dispatch:}"; do
  while (( $(jobs -rp | wc -l) >= $(nproc) )); do wait -n; done
  compile "${job%%:*}" "${job#*:}" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done  # each compile's status: set -e stops at the first failure
objs() { local d=$1; shift; for f in "$@"; do printf '%s\n' "$out/$d/$(basename "$f").o"; done; }
mapfile -t tests < <(objs dispatch "${suite[@]}" ../src/dispatch/select)
"$cxx" "${flags[@]}" "${tests[@]}" -o "$out/gguf-tests"
"$cxx" "${flags[@]}" "$out/dispatch/"{test_main,test_simd,select}.o -o "$out/gguf-simd-tests"
"$cxx" "${flags[@]}" "$out/dispatch/"{fuzz_gguf,replay_main,select}.o -o "$out/gguf-fuzz-replay"
# Each program runs on one core under qemu, so gguf-tests (about 22 s) runs beside the other three
# (about 20 s together), each side into a log shown when both are done.
qemu-aarch64-static "$out/gguf-tests" > "$out/gguf-tests.log" 2>&1 &
suite=$!
status=0
{  # (&&: set -e does not act inside a command that || follows)
  qemu-aarch64-static "$out/gguf-simd-tests" -s -tc="the instruction sets*" &&
    qemu-aarch64-static "$out/gguf-simd-tests" &&
    qemu-aarch64-static "$out/gguf-fuzz-replay" fuzz/seeds data/vocab fuzz/findings  # NEON against scalar on the seeds
} > "$out/simd.log" 2>&1 || status=$?
wait "$suite" || status=$?
cat "$out/gguf-tests.log" "$out/simd.log"
exit "$status"
