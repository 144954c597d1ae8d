#!/usr/bin/env bash
# Source coverage of the headers reached by a fuzz corpus: builds gguf-fuzz-replay with clang's
# coverage instrumentation, replays the corpus and the seeds through it, and prints llvm-cov's report.
#   tests/fuzz/coverage.sh CORPUS_DIR... (e.g. build-fuzz/tests/fuzz/corpus/new after `--target fuzz`)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${GGUF_COVERAGE_BUILD:-$root/build-coverage}"
flags="-fprofile-instr-generate -fcoverage-mapping"
CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGGUF_BUILD_BENCHMARKS=OFF \
  -DGGUF_BUILD_EXAMPLES=OFF -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" > /dev/null
cmake --build "$build" --target gguf-fuzz-replay
rm -f "$build/fuzz.profraw"
LLVM_PROFILE_FILE="$build/fuzz.profraw" "$build/tests/fuzz/gguf-fuzz-replay" "$@" "$root/tests/fuzz/seeds" \
  "$root/tests/data/vocab"
llvm-profdata-14 merge -o "$build/fuzz.profdata" "$build/fuzz.profraw"
llvm-cov-14 report "$build/tests/fuzz/gguf-fuzz-replay" -instr-profile="$build/fuzz.profdata" "$root/include/gguf"
