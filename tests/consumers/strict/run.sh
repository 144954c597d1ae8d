#!/usr/bin/env bash
# Compiles tests/consumers/strict/everything.cpp with the strictest warnings users apply to their own
# code, as errors, with gcc and clang, with and without -march=native (then also without exceptions or
# RTTI, as errors-as-values users build), unoptimized (a debug build: GCC compiles some intrinsics
# differently at -O0), with an AVX-512 that lacks BW (-mavx512f alone, whose kernels are AVX2's),
# and the runtime-dispatch TUs: gguf's headers must not leak a warning into a user's build, nor fail to
# compile in one.
# usage: tests/consumers/strict/run.sh [COMPILER...]   (default: g++ clang++)
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
strict=(-std=c++20 -O2 -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror)
compilers=("$@")
[[ ${#compilers[@]} -gt 0 ]] || compilers=(g++ clang++)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Each compile is a job of its own, as many at a time as there are cores; its output is shown if it fails.
n=0
jobs_run=()
compile() {  # compile DESCRIPTION COMMAND...
  n=$((n + 1))
  while (( $(jobs -rp | wc -l) >= $(nproc) )); do wait -n || true; done
  echo "$1"
  (if "${@:2}" -o "$out/$n.o" > "$out/$n.log" 2>&1; then echo 0; else echo 1; fi > "$out/$n.rc") &
  jobs_run+=("$n:$1")
}

for cxx in "${compilers[@]}"; do
  command -v "$cxx" > /dev/null || { echo "$cxx: not installed"; exit 1; }
  for arch in "" "-march=native -fno-exceptions -fno-rtti" "-O0 -march=native" "-O0 -mavx512f"; do
    # shellcheck disable=SC2086  # the flags are words
    compile "$cxx ${strict[*]} $arch" "$cxx" "${strict[@]}" $arch -I"$root/include" -c "$root/tests/consumers/strict/everything.cpp"
  done
  # The dispatch library's translation units, as a user's project builds them (gguf_add_dispatch_library).
  avx512="-mavx512f -mavx512cd -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mf16c -mbmi -mbmi2"
  for isa in "avx2:best_kernel_table():-mavx2 -mfma -mf16c -mbmi -mbmi2" \
             "avx512bw:best_kernel_table():$avx512" \
             "avx512bf16:best_kernel_table_to<bf16>():$avx512 -mavx512bf16"; do
    name=${isa%%:*} rest=${isa#*:}
    table=${rest%%:*} flags=${rest#*:}
    sed "s/@GGUF_ISA@/$name/g; s/@GGUF_ISA_TABLE@/$table/g; s/@GGUF_ISA_FLAGS_TEXT@/$flags/g" \
      "$root/src/dispatch/isa_table.cpp.in" > "$out/isa_$name.cpp"
    # shellcheck disable=SC2086
    compile "$cxx ${strict[*]} dispatch $name" "$cxx" "${strict[@]}" $flags -I"$root/include" -c "$out/isa_$name.cpp"
  done
  compile "$cxx ${strict[*]} dispatch select" "$cxx" "${strict[@]}" -DGGUF_DISPATCH_X86 -DGGUF_DISPATCH_AVX2 \
    -DGGUF_DISPATCH_AVX512BW -DGGUF_DISPATCH_AVX512BF16 -I"$root/include" -c "$root/src/dispatch/select.cpp"
  # The chat-template engine and the tokenizer (not in the umbrella): header-only, and as gguf::chat's
  # library builds the engine's one file.
  for arch in "" "-march=native -fno-exceptions -fno-rtti"; do
    # shellcheck disable=SC2086
    compile "$cxx ${strict[*]} $arch chat templates" "$cxx" "${strict[@]}" $arch -I"$root/include" \
      -c "$root/tests/consumers/strict/chat.cpp"
  done
  compile "$cxx ${strict[*]} gguf::chat" "$cxx" "${strict[@]}" -I"$root/include" -c "$root/src/chat/chat_template.cpp"
done
wait
failed=0
for job in "${jobs_run[@]}"; do
  i=${job%%:*}
  if [[ $(cat "$out/$i.rc") != 0 ]]; then
    echo "FAILED: ${job#*:}"
    cat "$out/$i.log"
    failed=1
  fi
done
[[ $failed == 0 ]] || exit 1
echo "no warnings"
