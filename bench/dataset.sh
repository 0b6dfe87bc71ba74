#!/bin/sh
# bench/dataset.sh — memory and marginal cost of the data-set comparison (issue 16).
#
# For each bench model pair (bench/models/<model>/{base,qat}.onnx from `make bench-models`):
#   - writes a data folder of 256 seeded random 1x3x224x224 float32 samples (numpy, /usr/bin/python3)
#     into $QR_BENCH_TMP (default /tmp/qr-bench-dataset);
#   - times `qreport runall base qat -i input.npy` (the single-sample runall every marginal cost is
#     compared with) and `qreport compare base qat --data DIR --samples N` for N = 1 8 32 128 256,
#     REPS times each (median; once for 128 and 256), 2 threads, wall time and peak RSS by /usr/bin/time;
#   - prints per N: median wall s, peak RSS MB, marginal s/sample = (t(N) - t(1)) / (N - 1), and that
#     marginal as a fraction of the single-sample runall; and RSS(256) / RSS(1).
# What is measured is `compare --data` (runall --data does not pool over the set yet).
# The machine may be shared: numbers are noisy; the CPU is printed.
# Usage: bench/dataset.sh [model ...]   (default: resnet18 mobilenetv2)  REPS=3 QR=./qreport NS="1 8 32 128 256"
set -eu
QR=${QR:-./qreport}
REPS=${REPS:-3}
TMP=${QR_BENCH_TMP:-/tmp/qr-bench-dataset}
MODELS=${*:-"resnet18 mobilenetv2"}
PY=/usr/bin/python3
mkdir -p "$TMP"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) online; qreport $($QR --version | head -2 | tail -1)"
echo "2 threads; medians of $REPS runs; the machine may be shared with other jobs (noisy)"
# run LABEL CMD...: REPS runs; prints "median_wall peak_rss_kb" of them
run() {
    out=""
    i=0
    reps=$REPS
    [ "${BIG:-0}" = 1 ] && reps=1
    while [ $i -lt "$reps" ]; do
        /usr/bin/time -f "%e %M" -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
        out="$out $(tail -1 "$TMP/time")"
        i=$((i + 1))
    done
    echo "$out" | $PY -c 'import sys,statistics as s; v=sys.stdin.read().split(); w=[float(x) for x in v[0::2]]; r=[int(x) for x in v[1::2]]; print(s.median(w), max(r))'
}
for m in $MODELS; do
    B=bench/models/$m/base.onnx; A=bench/models/$m/qat.onnx; I=bench/models/$m/input.npy
    [ -f "$B" ] || { echo "no $B: run 'make bench-models'" >&2; exit 2; }
    D=$TMP/$m
    if [ ! -f "$D/255.npy" ]; then
        mkdir -p "$D"
        $PY -c "
import numpy as np, sys
r = np.random.default_rng(16)
for k in range(256): np.save(sys.argv[1] + '/%d.npy' % k, r.normal(0, 1, (1, 3, 224, 224)).astype(np.float32))
" "$D"
    fi
    set -- $(run "$QR" runall "$B" "$A" -i "$I" -o "$TMP/r.zip" --threads 2 --quiet)
    RA=$1; RA_RSS=$2
    echo
    echo "$m: runall -i (1 sample): ${RA} s, peak RSS $((RA_RSS / 1024)) MB"
    printf '%8s %10s %10s %16s %18s\n' samples wall_s rss_MB marginal_s/smp marginal/runall
    T1=""; R1=""
    for n in ${NS:-1 8 32 128 256}; do
        BIG=0; [ $n -gt 32 ] && BIG=1     # one run for 128 and 256 samples (minutes each)
        set -- $(BIG=$BIG run "$QR" compare "$B" "$A" --data "$D" --samples $n -o "$TMP/c" --threads 2 --quiet)
        [ -z "$T1" ] && { T1=$1; R1=$2; }
        $PY -c "
n, t, r, t1, ra = $n, $1, $2, $T1, $RA
mg = (t - t1) / (n - 1) if n > 1 else float('nan')
print('%8d %10.2f %10d %16.3f %18.3f' % (n, t, r // 1024, mg, mg / ra))"
        RN=$2
    done
    $PY -c "print('peak RSS %s / 1 samples: %.3f' % ('$n', $RN / $R1))"
done
