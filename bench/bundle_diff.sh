#!/bin/sh
# bench/bundle_diff.sh — compares the runall bundles of two qreport binaries file by file.
# Usage: bench/bundle_diff.sh OLD_QREPORT NEW_QREPORT [WORKDIR]
# Runs `runall` with both binaries on the bench models (when bench/models exists) and on the
# fixture pairs, with several option sets (--data and --demote-int16 among them) and at 1 and
# 2 threads, and compares every file of the unzipped bundles (tables, JSON, HTML, PNG,
# badcase.npy) byte for byte. manifest.json is compared without its command line and thread
# count (and the stages' CPU times); SOURCE_DATE_EPOCH is set, so timings and peak memory are
# null in both. The NEW
# binary at 1 thread is also compared with itself at 2 threads. Prints one line per case and
# "N identical, N different"; exit 1 on a difference.
set -u
OLD=$(readlink -f "$1")
NEW=$(readlink -f "$2")
WORK=${3:-/tmp/qreport-bundle-diff}
cd "$(dirname "$0")/.." || exit 2
rm -rf "$WORK"
mkdir -p "$WORK"
export SOURCE_DATE_EPOCH=1
same=0
diff=0

# run LABEL BIN THREADS ARGS... -> $WORK/LABEL (unzipped bundle)
run() {
    label=$1 bin=$2 thr=$3
    shift 3
    "$bin" runall "$@" -o "$WORK/$label.zip" --keep-dir "$WORK/$label" --threads "$thr" --quiet \
        >"$WORK/$label.stdout" 2>"$WORK/$label.stderr"
    echo $? >"$WORK/$label.rc"
    if [ -f "$WORK/$label/manifest.json" ]; then
        # the per-stage CPU times (null here) are left out: binaries from before them compare too
        grep -v '"command_line"\|"threads"' "$WORK/$label/manifest.json" |
            sed 's/, "user_seconds": null, "sys_seconds": null//' >"$WORK/$label.manifest"
        rm "$WORK/$label/manifest.json"
    fi
}

# compare A B NAME: bundles, exit codes and terminal summaries
compare() {
    mkdir -p "$WORK/$1" "$WORK/$2"
    if diff -r "$WORK/$1" "$WORK/$2" >"$WORK/$3.diff" 2>&1 &&
       cmp -s "$WORK/$1.rc" "$WORK/$2.rc" && cmp -s "$WORK/$1.stdout" "$WORK/$2.stdout" &&
       { [ ! -f "$WORK/$1.manifest" ] || cmp -s "$WORK/$1.manifest" "$WORK/$2.manifest"; }; then
        same=$((same + 1))
        echo "identical  $3 ($(find "$WORK/$1" -type f | wc -l) files, exit $(cat "$WORK/$1.rc"))"
    else
        diff=$((diff + 1))
        echo "DIFFERENT  $3 (see $WORK/$3.diff)"
        [ -f "$WORK/$1.manifest" ] && diff "$WORK/$1.manifest" "$WORK/$2.manifest" >>"$WORK/$3.diff"
        diff "$WORK/$1.stdout" "$WORK/$2.stdout" >>"$WORK/$3.diff"
    fi
}

# case NAME ARGS...: old vs new at 2 threads, new at 1 vs 2 threads
case_() {
    name=$1
    shift
    run "$name.old" "$OLD" 2 "$@"
    run "$name.new" "$NEW" 2 "$@"
    run "$name.new1" "$NEW" 1 "$@"
    compare "$name.old" "$name.new" "$name"
    compare "$name.new" "$name.new1" "$name.threads"
}

for m in resnet18 mobilenetv2; do
    d=bench/models/$m
    [ -f "$d/qat.onnx" ] || continue
    case_ "$m" "$d/base.onnx" "$d/qat.onnx" -i "$d/input.npy"
done
for p in culprit int16_mixed integer_ops ort_qdq qat_fakequant qoperator; do
    d=fixtures/qpairs/$p
    case_ "$p" "$d/base.onnx" "$d/analysis.onnx" -i "$d/input.npy"
    case_ "$p.both" "$d/base.onnx" "$d/analysis.onnx" -i "$d/input.npy" --mode both --metric KL --topk-list 1,2
    case_ "$p.offone" "$d/base.onnx" "$d/analysis.onnx" -i "$d/input.npy" --sensitivity off-one --metric Cosine --reverse
done
d=fixtures/qpairs/culprit
case_ culprit.random "$d/base.onnx" "$d/analysis.onnx"
case_ culprit.int "$d/base.onnx" "$d/analysis.onnx" -i "$d/input.npy" --mode int --metric SQNR
case_ culprit.maxmem "$d/base.onnx" "$d/analysis.onnx" -i "$d/input.npy" --max-memory 2G
d=fixtures/qpairs/ort_qdq
case_ mismatch fixtures/qpairs/mismatch/base_other.onnx "$d/analysis.onnx" -i "$d/input.npy"
case_ plotnodes "$d/base.onnx" "$d/analysis.onnx" -i "$d/input.npy" --plot-nodes "$(sed -n 2p "$d/expected_match.tsv" | cut -f1)"
case_ data "$d/base.onnx" "$d/analysis.onnx" --data "$d/data"
d=fixtures/qpairs/int16_mixed
case_ demote "$d/base.onnx" "$d/analysis.onnx" -i "$d/input.npy" --demote-int16
echo "$same identical, $diff different"
[ "$diff" -eq 0 ]
