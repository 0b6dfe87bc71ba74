#!/usr/bin/env bash
# fuzz/make_corpus.sh — builds the seed corpora of the fuzz targets into OUT (default
# build/fuzz/corpus/<target>/) from fixtures/ and the conformance data (../shared/conformance
# or $QR_CONFORMANCE_DIR). Generated, never committed; files over MAX_LEN bytes are skipped.
#   fuzz/make_corpus.sh [OUT]        (run from the repository root; make fuzz calls it)
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
OUT=${1:-build/fuzz/corpus}
MAX_LEN=${FUZZ_MAX_LEN:-65536}
CONF=${QR_CONFORMANCE_DIR:-../shared/conformance}

# add TARGET FILE...: copies each file (<= MAX_LEN bytes) under its sha1 (deduplicated)
add() {
  local t=$1 f h; shift
  mkdir -p "$OUT/$t"
  for f in "$@"; do
    [[ -f $f && $(stat -c%s "$f") -le $MAX_LEN ]] || continue
    h=$(sha1sum "$f" | cut -c1-40)
    [[ -e $OUT/$t/$h ]] || cp "$f" "$OUT/$t/$h"
  done
}

mapfile -t models < <(find fixtures -name '*.onnx' | sort)
mapfile -t npys < <(find fixtures -name '*.npy' | sort)
pbs=()
if [[ -d $CONF ]]; then
  mapfile -t cmodels < <(find "$CONF" -name '*.onnx' | sort)
  mapfile -t pbs < <(find "$CONF" -name '*.pb' | sort)
  models+=("${cmodels[@]}")
else
  echo "make_corpus: $CONF not found; seeds from fixtures/ only" >&2
fi
add onnx_load "${models[@]}"
add onnx_run "${models[@]}"
add npy "${npys[@]}"
add pb "${pbs[@]}"
# The regression inputs are seeds too (tests/regress/<target>-*).
for t in onnx_load onnx_run npy pb; do
  mapfile -t reg < <(find tests/regress -name "$t-*" 2>/dev/null | sort)
  if ((${#reg[@]})); then add "$t" "${reg[@]}"; fi
done
for t in onnx_load onnx_run npy pb; do
  printf 'make_corpus: %-10s %5d seeds\n' "$t" "$(find "$OUT/$t" -type f | wc -l)"
done
