#!/usr/bin/env bash
# Builds the library, the examples, the test suites and the dispatch library for
# 64-bit Windows with Debian's mingw-w64 (the MapViewOfFile path of gguf/platform/mapped_file.hpp
# included), through CMake and cmake/toolchains/x86_64-w64-mingw32.cmake. With wine installed, also
# runs them (ctest with wine as the emulator).
# Needs: g++-mingw-w64-x86-64 doctest-dev libxsimd-dev (header-only, shared with the host); wine64 optional.
# usage: tests/cross/mingw.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build-mingw}
deps="$out/deps"
# Only the header-only dependencies from the host, with their CMake packages: never /usr/include itself.
mkdir -p "$deps/include" "$deps/lib/x86_64-linux-gnu/cmake" "$deps/lib/cmake"
ln -sfn /usr/include/xsimd "$deps/include/xsimd"
ln -sfn /usr/include/doctest "$deps/include/doctest"
cp -r /usr/lib/x86_64-linux-gnu/cmake/xsimd "$deps/lib/x86_64-linux-gnu/cmake/"
cp -r /usr/lib/cmake/doctest "$deps/lib/cmake/"
sed -i "s|set(_IMPORT_PREFIX \"/usr\")|set(_IMPORT_PREFIX \"$deps\")|" "$deps/lib/cmake/doctest/doctestTargets.cmake"  # not relocatable

wine=""  # Debian's wine64 package puts its loader outside PATH
for w in wine /usr/lib/wine/wine64; do
  if command -v "$w" > /dev/null; then wine=$(command -v "$w") && break; fi
done
wineserver=""
for w in wineserver /usr/lib/wine/wineserver; do
  if command -v "$w" > /dev/null; then wineserver=$(command -v "$w") && break; fi
done
emulator=()
if [[ -n "$wine" ]]; then
  emulator=(-DCMAKE_CROSSCOMPILING_EMULATOR="$wine")
  # A prefix of its own, made once before anything runs in it (no mono or gecko install prompts).
  export WINEDEBUG=-all WINEPREFIX="$out/wineprefix" WINEDLLOVERRIDES="mscoree,mshtml="
  "$wine" wineboot --init
fi
# The README's snippets compile in the Linux Release build, which replays the fuzz corpus as the ARM64
# build does; here they would only cost time.
cmake -S "$root" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGUF_WERROR=ON -DGGUF_BUILD_BENCHMARKS=OFF \
  -DGGUF_README_SNIPPETS=OFF -DGGUF_FUZZ_REPLAY=OFF -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/x86_64-w64-mingw32.cmake" \
  -Dxsimd_DIR="$deps/lib/x86_64-linux-gnu/cmake/xsimd" -Ddoctest_DIR="$deps/lib/cmake/doctest" \
  "${emulator[@]}"
cmake --build "$out" -j"$(nproc)"
file "$out/examples/gguf-dump.exe" | grep -q "PE32+ executable" || { echo "not a Windows executable"; exit 1; }
if [[ -n "$wine" ]]; then
  # One wineserver for the whole run, and wine's services started once, before any test, with their
  # output to /dev/null. Otherwise every program (the CLI test alone starts ~150) starts a server and the
  # services of its own, ~2 s each (the Windows tests took 7 min, now 20 s). The services must not be
  # started by a test: they would inherit its output, and ctest would wait on that pipe until they exit.
  if [[ -n "$wineserver" ]]; then
    "$wineserver" -k > /dev/null 2>&1 || true  # the setup's server, if it still lingers
    "$wineserver" -w
    "$wineserver" -p < /dev/null > /dev/null 2>&1
    trap '"$wineserver" -k || true' EXIT
    "$wine" wineboot --init < /dev/null > /dev/null 2>&1
  fi
  # Under wine a test program now and then fails to start at all (no output, exit within 10 ms, seen once
  # in ~20 runs); a test must fail three times in a row to fail here. Real failures fail every time.
  ctest --test-dir "$out" --output-on-failure -j"$(nproc)" --repeat until-pass:3
else
  echo "wine not installed: built for Windows, not run"
fi
