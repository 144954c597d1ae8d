#!/usr/bin/env bash
# Compares `gguf-dump --json` with ggml's own parse (the oracle's `inspect`) on every GGUF file of the
# shared data folder: the full-size vocabularies and fixtures that tests/data holds reduced copies of.
# Usage: check_agreement.sh GGUF_DUMP SHARED_DIR
set -euo pipefail
dump=$1
shared=$2
oracle="$shared/oracle/ggml_oracle.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GGML_ORACLE_LIB=${GGML_ORACLE_LIB:-$(bash "$shared/oracle/setup.sh")}
n=0
fail=0
for f in "$shared"/data/vocab/*.gguf "$shared"/data/quants/*.gguf; do
  name=$(basename "$f")
  python3 "$oracle" inspect "$f" > "$tmp/ggml.json" || { echo "ggml rejects $name"; fail=1; continue; }
  "$dump" --json "$f" > "$tmp/ours.json" || { echo "gguf-dump rejects $name"; fail=1; continue; }
  if cmp -s "$tmp/ggml.json" "$tmp/ours.json"; then
    echo "agree: $name"
  else
    echo "DIFFER: $name"
    fail=1
  fi
  n=$((n + 1))
done
echo "oracle agreement: $n files compared"
exit $fail
