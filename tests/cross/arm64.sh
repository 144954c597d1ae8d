#!/usr/bin/env bash
# Builds the test suites for ARM64 (xsimd's NEON kernels) with Debian's cross compiler and runs them
# under qemu-user: gguf-tests in header-only mode (xsimd::default_arch is neon64) and gguf-simd-tests
# through the dispatch selector, which on ARM64 offers the scalar and neon64 tables; and the fuzz
# target's replay of the seed corpus.
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
echo "building gguf-tests for arm64"
"$cxx" "${flags[@]}" test_main.cpp test_format.cpp test_validation.cpp test_allocation.cpp test_real_files.cpp \
  test_json.cpp test_mapped_file.cpp test_dequant.cpp test_damaged_files.cpp test_errors.cpp test_print.cpp test_writer.cpp test_save.cpp \
  -o "$out/gguf-tests" &
echo "building gguf-simd-tests for arm64"
"$cxx" "${flags[@]}" -DGGUF_RUNTIME_DISPATCH=1 -DGGUF_DISPATCH_NEON64 test_main.cpp test_simd.cpp \
  "$root/src/dispatch/select.cpp" -o "$out/gguf-simd-tests" &
wait %1 && wait %2
echo "building gguf-fuzz-replay for arm64"
"$cxx" "${flags[@]}" -DGGUF_RUNTIME_DISPATCH=1 -DGGUF_DISPATCH_NEON64 fuzz/fuzz_gguf.cpp fuzz/replay_main.cpp \
  "$root/src/dispatch/select.cpp" -o "$out/gguf-fuzz-replay"
qemu-aarch64-static "$out/gguf-tests"
qemu-aarch64-static "$out/gguf-simd-tests" -s -tc="the instruction sets*"
qemu-aarch64-static "$out/gguf-simd-tests"
qemu-aarch64-static "$out/gguf-fuzz-replay" fuzz/seeds data/vocab fuzz/findings  # NEON against scalar on the seeds
