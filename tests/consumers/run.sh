#!/usr/bin/env bash
# The three ways users consume gguf, each building examples/gguf-load.cpp and loading the same model:
#   installed     find_package(gguf CONFIG) after `cmake --install`; gguf::dispatch and gguf::chat from the
#                 shipped sources (a template rendered through gguf::chat)
#   fetchcontent  FetchContent_Declare(gguf SOURCE_DIR ...): nothing but gguf::gguf, no flags added
#   recipe        the README's FetchContent recipe as written, GIT_REPOSITORY pointed at a clone
#   pkg-config    c++ $(pkg-config --cflags --libs gguf)
#   examples      examples/CMakeLists.txt configured on its own against the installed package (the two
#                 examples it runs built)
# All must print the same checksum of the model's floats.
# usage: tests/consumers/run.sh [WORK_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$root/build-consumers}
example="$root/examples/gguf-load.cpp"
model="$root/tests/data/model/tiny-llama-q4_K_M.gguf"
rm -rf "$work"
mkdir -p "$work"

echo "-- install"
cmake -S "$root" -B "$work/gguf" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGUF_BUILD_TESTS=OFF \
  -DGGUF_BUILD_EXAMPLES=OFF -DGGUF_BUILD_BENCHMARKS=OFF -DGGUF_BUILD_PYTHON=OFF -DGGUF_INSTALL=ON > /dev/null
cmake --install "$work/gguf" --prefix "$work/prefix" > /dev/null
for f in include/gguf/gguf.hpp share/cmake/gguf/ggufConfig.cmake share/cmake/gguf/ggufConfigVersion.cmake \
         share/cmake/gguf/gguf_dispatch.cmake share/cmake/gguf/dispatch/select.cpp share/cmake/gguf/gguf_chat.cmake \
         share/cmake/gguf/chat/chat_template.cpp share/pkgconfig/gguf.pc; do
  [[ -f "$work/prefix/$f" ]] || { echo "not installed: $f"; exit 1; }
done

check() {  # check NAME BINARY: the last line (the checksum) must match the first consumer's
  local line
  line=$("$2" "$model" | tail -1)
  echo "$1: $line"
  want=${want:-$line}
  [[ "$line" == "$want" ]] || { echo "$1 disagrees"; exit 1; }
}

echo "-- find_package"
cmake -S "$root/tests/consumers/installed" -B "$work/installed" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DEXAMPLE="$example" -DCHAT_EXAMPLE="$root/bench/compile_cost/chat.cpp" > /dev/null
cmake --build "$work/installed" > /dev/null
check installed "$work/installed/gguf-load"
chat=$("$work/installed/chat-render" "{{ messages[0].content|upper }}" '{"messages": [{"content": "hi"}]}')
echo "installed+chat: $chat"
[[ "$chat" == "HI" ]] || { echo "gguf::chat from the installed package rendered '$chat'"; exit 1; }
check installed+dispatch "$work/installed/gguf-load-dispatch"

echo "-- FetchContent"
cmake -S "$root/tests/consumers/fetchcontent" -B "$work/fetchcontent" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGGUF_SOURCE_DIR="$root" -DEXAMPLE="$example" > /dev/null
cmake --build "$work/fetchcontent" > /dev/null
if find "$work/fetchcontent" -name 'libgguf_dispatch.a' | grep -q .; then
  echo "FetchContent built gguf_dispatch, which nothing linked"; exit 1
fi
check fetchcontent "$work/fetchcontent/gguf-load"

echo "-- the README's FetchContent recipe, as written, against a clone of this repository"
# The block after the README's "fetchcontent-recipe" marker, with its GIT_REPOSITORY pointed at a clone
# (file://) and its GIT_TAG as written (a branch), then pinned to the commit; nothing else is changed.
git clone -q --bare "$root" "$work/gguf.git"
recipe=$(awk '/fetchcontent-recipe/ {found = 1; next} found && /^```cmake/ {inside = 1; next} inside && /^```/ {exit} inside {print}' "$root/README.md")
[[ -n "$recipe" ]] || { echo "no FetchContent recipe in README.md"; exit 1; }
commit=$(git -C "$root" rev-parse HEAD)
for pin in branch commit; do
  dir="$work/recipe-$pin"
  mkdir -p "$dir"
  body=$(printf '%s\n' "$recipe" | sed -E "s|GIT_REPOSITORY +[^ )]+|GIT_REPOSITORY file://$work/gguf.git|")
  if [[ $pin == commit ]]; then body=$(printf '%s\n' "$body" | sed -E "s|GIT_TAG +[^ )]+|GIT_TAG        $commit|"); fi
  printf 'cmake_minimum_required(VERSION 3.25)\nproject(recipe LANGUAGES CXX)\nadd_executable(app "%s")\n%s\n' \
    "$example" "$body" > "$dir/CMakeLists.txt"
  if [[ $pin == branch ]] && ! git -C "$work/gguf.git" rev-parse --verify -q "$(printf '%s\n' "$recipe" | sed -nE 's/.*GIT_TAG +([^ )]+).*/\1/p')" > /dev/null; then
    echo "(the recipe's branch is not in this clone: only the pinned commit is built)"
    continue
  fi
  cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; exit 1; }
  cmake --build "$dir/build" > /dev/null
  check "fetchcontent-recipe ($pin)" "$dir/build/app"
done

echo "-- pkg-config"
export PKG_CONFIG_PATH="$work/prefix/share/pkgconfig"
# shellcheck disable=SC2046  # word splitting of pkg-config's output is intended
c++ -std=c++20 -O2 $(pkg-config --cflags gguf) "$example" -o "$work/gguf-load-pc" $(pkg-config --libs gguf)
check pkg-config "$work/gguf-load-pc"
echo "-- the examples as a standalone project (examples/CMakeLists.txt against the installed package)"
cmake -S "$root/examples" -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" > /dev/null
# The two it runs: the main build compiles every tool, with the same warnings as errors.
cmake --build "$work/examples" --target gguf-load gguf-metadata > /dev/null
check examples-standalone "$work/examples/gguf-load"
"$work/examples/gguf-metadata" "$model" > /dev/null
echo "all consumers agree"
