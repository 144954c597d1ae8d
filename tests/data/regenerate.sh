#!/usr/bin/env bash
# Rebuilds everything in tests/data/ from the shared folder (see README.md there).
#   tests/data/regenerate.sh [SHARED]     SHARED defaults to <repo root>/../shared
# Needs python3; the oracle (SHARED/oracle/ggml_oracle.py) installs its pinned ggml
# (npm @node-llama-cpp/linux-x64@3.22.1) on first use through SHARED/oracle/setup.sh.
# Takes about 3 minutes (fixture generation dominates). Output is deterministic:
# running it on an up-to-date tree changes no file.
set -euo pipefail

root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
shared="${1:-$root/../shared}"
shared="$(cd "$shared" && pwd)"
oracle="$shared/oracle/ggml_oracle.py"
data="$root/tests/data"
export PYTHONIOENCODING=utf-8   # the oracle prints JSON with ensure_ascii=False

# inspect FILE.gguf -> FILE.json when ggml accepts the file; no JSON (and a note) when it rejects it
inspect() {
  local f="$1" j="${1%.gguf}.json" tmp
  tmp="$(mktemp)"
  if python3 "$oracle" inspect "$f" > "$tmp"; then
    cat "$tmp" > "$j"
    rm -f "$tmp"
  else
    echo "ggml rejects $(basename "$f"): $(cat "$tmp")" >&2
    rm -f "$tmp" "$j"
  fi
}

# 1. small vocab copies + oracle JSON
mkdir -p "$data/vocab"
python3 "$data/make_small_vocab.py" "$shared/data/vocab" "$data/vocab"
for f in "$data"/vocab/*.gguf; do inspect "$f"; done

# 2. dequant fixtures
q="$data/quants"
mkdir -p "$q"
for n in quants-s1 raw-s1; do
  for s in .gguf .expected.gguf; do
    cp "$shared/data/quants/$n$s" "$q/$n$s"
    chmod 644 "$q/$n$s"
  done
done
fixture() { local out="$1"; shift; python3 "$oracle" fixture "$q/$out" "$@"; }
fixture quants-s2     --seed 2 --rows 3 --blocks 3
fixture raw-s2        --seed 2 --random-bytes
fixture quants-v2     --seed 3 --version 2
fixture quants-be-le  --seed 4
# The big-endian twin: the oracle's own big-endian fixtures swap the header only and keep little-endian
# tensor data; a big-endian GGUF file holds big-endian tensors (gguf-py), so convert the twin instead.
python3 "$data/make_big_endian.py" "$q/quants-be-le.gguf" "$q/quants-be.gguf"
cp "$q/quants-be-le.expected.gguf" "$q/quants-be.expected.gguf"
fixture quants-v1     --seed 5 --version 1
fixture quants-v1-le3 --seed 5
fixture quants-4d     --seed 6 --rows 2 --blocks 1 --extra-dims 3,2
fixture quants-3d     --seed 7 --rows 1 --blocks 1 --extra-dims 5

# the big-endian and v1 files must hold the same tensors as their little-endian v3 twins
cmp "$q/quants-be.expected.gguf" "$q/quants-be-le.expected.gguf"
cmp "$q/quants-v1.expected.gguf" "$q/quants-v1-le3.expected.gguf"

for f in "$q"/*.gguf; do inspect "$f"; done   # quants-be.gguf and quants-v1.gguf are rejected

# 3. a llama.cpp Q4_K_M model structure, quantized by ggml, with the hashes of ggml's dequantization
python3 "$data/make_model_fixture.py" "$shared" "$data/model"
inspect "$data/model/tiny-llama-q4_K_M.gguf"
# 4. the fuzzer's small oracle fixtures (tests/fuzz/README.md)
fx="$root/tests/fuzz/seeds/fixtures"
tmp="$(mktemp -d)"
python3 "$oracle" fixture "$tmp/quants" --seed 11 --rows 1 --blocks 1
python3 "$oracle" fixture "$tmp/raw"    --seed 12 --rows 1 --blocks 1 --random-bytes
python3 "$oracle" fixture "$tmp/v1-be"  --seed 13 --rows 1 --blocks 1 --version 1 --endian be
python3 "$oracle" fixture "$tmp/v2-4d"  --seed 14 --rows 2 --blocks 1 --version 2 --extra-dims 2,1 \
  --types q4_K,q8_0,iq4_xs,f16,tq2_0,mxfp4
mkdir -p "$fx"
for n in quants raw v1-be v2-4d; do cp "$tmp/$n.gguf" "$fx/$n.gguf"; done
rm -rf "$tmp"
# 5. the IQ quantizers' golden bytes (tests/test_quantize_iq.cpp)
python3 "$root/tests/oracle/make_quantize_golden_iq.py" --oracle "$shared/oracle" --out "$data/quantize/golden-iq.gguf"

# quantization golden file
python3 "$root/tests/oracle/make_quantize_golden.py" "$shared" "$data/quantize/golden-a.gguf"

echo "tests/data regenerated"
