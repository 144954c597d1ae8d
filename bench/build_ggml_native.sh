#!/usr/bin/env bash
# Builds libggml-base.so from a ggml checkout with -O3 -march=native and prints its path: the anchor
# "ggml's reference dequantizer compiled for this CPU" for gguf-bench's ggml/<type>/<n> benchmarks
# (the shared oracle's prebuilt library is compiled for any x86-64):
#   GGUF_BENCH_GGML=$(bench/build_ggml_native.sh ~/ggml /tmp/ggml-native) gguf-bench --benchmark_filter=...
# GGML_SRC_DIR is a clone of github.com/ggml-org/ggml, or llama.cpp's ggml/ folder. Through ggml's own
# CMake, ggml-base only (no backend, no tests or examples: nothing to download). A tree with ggml's
# include/ and src/ but without its build files (no CMakeLists.txt at the top, nor cmake/) cannot be
# configured: its ggml-base sources (as src/CMakeLists.txt lists them) are compiled directly, with the
# flags and definitions ggml's CMake gives them in a Release build on Linux.
# Logs go to stderr; JOBS sets the parallel jobs (default: all cores).
# usage: bench/build_ggml_native.sh GGML_SRC_DIR OUT_DIR
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 GGML_SRC_DIR OUT_DIR" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
flags=(-O3 -march=native)
jobs=${JOBS:-$(nproc)}

if [[ -f "$src/CMakeLists.txt" ]]; then
  generator=()
  if command -v ninja > /dev/null; then generator=(-G Ninja); fi
  cmake -S "$src" -B "$out" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="${flags[*]}" -DCMAKE_CXX_FLAGS="${flags[*]}" -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=ON \
    -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF >&2
  cmake --build "$out" --target ggml-base --parallel "$jobs" >&2
  lib=$(find "$out" -name libggml-base.so -print -quit)
elif [[ -f "$src/include/ggml.h" && -f "$src/src/CMakeLists.txt" ]]; then
  echo "$src has no CMakeLists.txt: compiling its ggml-base sources directly" >&2
  # The files of add_library(ggml-base ...) in src/CMakeLists.txt that are compiled.
  mapfile -t sources < <(awk '/add_library\(ggml-base/ { on = 1 }
    on { for (i = 1; i <= NF; i++) if ($i ~ /\.(c|cpp)\)?$/) { sub(/\)$/, "", $i); print $i } }
    on && /\)/ { exit }' "$src/src/CMakeLists.txt")
  if [[ ${#sources[@]} -eq 0 ]]; then
    echo "no ggml-base sources found in $src/src/CMakeLists.txt" >&2
    exit 1
  fi
  commit=$(git -C "$src" rev-parse --short HEAD 2> /dev/null || echo unknown)
  defs=(-DNDEBUG -D_XOPEN_SOURCE=600 -D_GNU_SOURCE -DGGML_SCHED_MAX_COPIES=4 -DGGML_BUILD -DGGML_SHARED
    -DGGML_VERSION='"unknown"' -DGGML_COMMIT="\"$commit\"" -I"$src/include" -I"$src/src")
  mkdir -p "$out/obj"
  objects=() pids=()
  for f in "${sources[@]}"; do
    objects+=("$out/obj/$f.o")  # ggml.c.o and ggml.cpp.o, as CMake names them
    if [[ $f == *.c ]]; then compile=("${CC:-cc}" -std=gnu11); else compile=("${CXX:-c++}" -std=gnu++17); fi
    echo "${compile[*]} ${flags[*]} $f" >&2
    "${compile[@]}" "${flags[@]}" -fPIC -pthread "${defs[@]}" -c "$src/src/$f" -o "${objects[-1]}" &
    pids+=($!)
    if [[ ${#pids[@]} -ge $jobs ]]; then wait -n || true; fi  # a failure is caught below
  done
  for p in "${pids[@]}"; do wait "$p"; done
  lib="$out/libggml-base.so"
  "${CXX:-c++}" -shared -o "$lib" "${objects[@]}" -pthread -lm
else
  echo "$src is not a ggml checkout (no CMakeLists.txt, include/ggml.h or src/CMakeLists.txt)" >&2
  exit 1
fi
if [[ -z "$lib" || ! -f "$lib" ]]; then
  echo "no libggml-base.so under $out" >&2
  exit 1
fi
echo "$lib"
