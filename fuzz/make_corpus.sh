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

# data_dir: folder trees in the record format of fuzz_targets.h (qr__hm_fuzz_data_dir):
# a config byte (model pair, --num-steps, metric), then "==> PATH <==\n" CONTENT records.
mkdir -p "$OUT/data_dir"
dd_seed() {   # dd_seed NAME CONFIG-BYTE-OCTAL [RECORD-TEXT...]; a record's content may be @file:PATH
  local name=$1 cfg=$2 r; shift 2
  {
    printf "\\$cfg"
    for r in "$@"; do
      if [[ $r == *'<==@file:'* ]]; then printf '==> %s <==\n' "${r%% <==@file:*}"; cat "${r#*<==@file:}"; printf '\n'
      else printf '==> %s\n' "$r"; fi
    done
  } > "$OUT/data_dir/seed-$name"
}
# a valid float32 [2, 4] .npy written byte by byte (header padded to 128 bytes; bash strings
# cannot hold NUL bytes, so fill bytes in the records below avoid them)
npy24=$(mktemp)
hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }"
printf '\x93NUMPY\x01\x00\x76\x00%s%*s\n' "$hdr" $((128 - 10 - ${#hdr} - 1)) '' > "$npy24"
head -c 32 /dev/urandom >> "$npy24"
fixture_npy=$(find fixtures -name 'input.npy' | sort | head -1)
dd_seed flat 000 $'0.npy <==\n@npy <f4 1x4' $'1.npy <==\n@npy <f4 2x4' $'10.npy <==\n@npy <f4 3x4\n\xc0\x7f\xc0\x7f' \
  $'2.npy <==\n@npy <f4 1x4\n\x01\x01\x80\x7f' "raw.npy <==@file:$npy24"
dd_seed steps 044 $'0.npy <==\n@npy <f4 1x4' $'1.npy <==\n@npy <f4 1x4\n\x01\x02' $'2.npy <==\n@npy <f8 1x4'
dd_seed folders 001 $'x/0.npy <==\n@npy <f4 1x4' $'in_0_b/0.npy <==\n@npy <f4 1x4' $'x/1.npy <==\n@npy <f4 2x4' \
  $'in_0_b/1.npy <==\n@npy <f4 2x4\n\xff\xff\xff\xff' $'x/2.npy <==\n@npy <f4 1x4'
dd_seed raw_names 041 $'in:0/b/0.npy <==\n@npy <f4 1x4' $'x/0.npy <==\n@npy <f4 1x4'
dd_seed ids 002 $'ids/0.npy <==\n@npy <i8 5' $'ids/1.npy <==\n@npy <f4 5' $'ids/2.npy <==\n@npy <i8 0' $'ids/3.npy <==\n@npy <i8 '
dd_seed odd_names 140 $'a b.npy <==\n@npy <f4 1x4' $'.hidden.npy <==\n@npy <f4 1x4' $'-1.npy <==\n@npy <f4 1x4' \
  $'1e3.npy <==\n@npy <f4 1x4' $'\xef\xbc\x90.npy <==\n@npy <f4 1x4' $'x.npy.npy <==\n@npy <f4 1x4' $'dir.npy/ <==\n' \
  $'nested/deeper/0.npy <==\n@npy <f4 1x4' $'empty.npy <==\n' $'garbage.npy <==\n\x93NUMPY\x01\x00\xff' \
  $'%s%n.npy <==\n@npy <f4 1x4' $'000000000000000000000000000000000000000000000000000000007.npy <==\n@npy <f4 1x4'
dd_seed links 200 $'0.npy <==\n@npy <f4 1x4' $'1.npy <==\n@link 0.npy' $'2.npy <==\n@link 2.npy' $'3.npy <==\n@link missing' \
  $'4.npy <==\n@fifo' $'sub/ <==\n' $'5.npy <==\n@link sub'
dd_seed wrong 240 $'0.npy <==\n@npy <f4 1x5' $'1.npy <==\n@npy |b1 1x4' $'2.npy <==\n@npy <f4 4'
if [[ -n $fixture_npy ]]; then dd_seed fixture 000 "0.npy <==@file:$fixture_npy" $'1.npy <==\n@npy <f4 1x4'; fi
rm -f "$npy24"

# The regression inputs are seeds too (tests/regress/<target>-*).
for t in onnx_load onnx_run npy pb data_dir; do
  mapfile -t reg < <(find tests/regress -name "$t-*" 2>/dev/null | sort)
  if ((${#reg[@]})); then add "$t" "${reg[@]}"; fi
done
for t in onnx_load onnx_run npy pb data_dir; do
  printf 'make_corpus: %-10s %5d seeds\n' "$t" "$(find "$OUT/$t" -type f | wc -l)"
done
