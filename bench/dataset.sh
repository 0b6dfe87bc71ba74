#!/bin/sh
# bench/dataset.sh — marginal cost and memory of `runall --data` (issue 16).
#
# For each bench model pair (bench/models/<model>/{base,qat}.onnx from `make bench-models`):
#   - writes a data folder of 256 seeded random 1x3x224x224 float32 samples (numpy, /usr/bin/python3)
#     into $QR_BENCH_TMP (default /tmp/qr-bench-dataset);
#   - times `qreport runall base qat -i input.npy` (the whole single-sample runall every marginal cost
#     is compared with) and `qreport runall base qat --data DIR --samples N` for N in $NS
#     (default 1 8 32 128 256), REPS runs each (median; ONE run for N > 32: minutes each), 2 threads,
#     wall time and peak RSS by /usr/bin/time;
#   - prints per N: median wall s, peak RSS MB, the "data set" phase (the pass over the samples, from
#     runall's progress lines on stderr), the second "data set" stage (its tables and the pass of the
#     distributions over the set) and the rest of the run, the marginal cost per sample
#     = (t(N) - t(1)) / (N - 1) and that as a fraction of the single-sample runall; then
#     peak RSS(N_last) / RSS(1).
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
echo "2 threads; medians of $REPS runs (1 run for more than 32 samples); the machine may be shared with other jobs (noisy)"
# run CMD...: REPS runs; prints "median_wall peak_rss_kb median_dataset_phase_s" of them
run() {
    out=""
    i=0
    reps=$REPS
    [ "${BIG:-0}" = 1 ] && reps=1
    while [ $i -lt "$reps" ]; do
        /usr/bin/time -f "%e %M" -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
        # the pass's duration as progress prints it: 850ms, 4.2s, 2m05s; the second "data set" stage
        # (after the analyses: the tables and the distributions' pass over the set)
        ds=$(sed -n 's/.*\] data set: done in \([0-9a-z.]*\).*/\1/p' "$TMP/err" | head -1)
        ds2=$(sed -n 's/.*\] data set: done in \([0-9a-z.]*\).*/\1/p' "$TMP/err" | sed -n 2p)
        out="$out $(tail -1 "$TMP/time") $($PY -c '
import re, sys
def sec(v):
    m = re.fullmatch(r"(?:(\d+)m)?([\d.]+)(ms|s)", v)
    return 0 if not m else (int(m.group(1) or 0) * 60 + float(m.group(2)) / (1000 if m.group(3) == "ms" else 1))
print(sec(sys.argv[1]), sec(sys.argv[2]))' "${ds:-none}" "${ds2:-none}")"
        i=$((i + 1))
    done
    echo "$out" | $PY -c 'import sys,statistics as s; v=sys.stdin.read().split(); w=[float(x) for x in v[0::4]]; r=[int(x) for x in v[1::4]]; d=[float(x) for x in v[2::4]]; e=[float(x) for x in v[3::4]]; print(s.median(w), max(r), s.median(d), s.median(e))'
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
    set -- $(run "$QR" runall "$B" "$A" -i "$I" -o "$TMP/r.zip" --threads 2)
    RA=$1; RA_RSS=$2
    echo
    echo "$m: runall -i (1 sample): ${RA} s, peak RSS $((RA_RSS / 1024)) MB"
    printf '%8s %9s %8s %12s %12s %9s %14s %16s\n' samples wall_s rss_MB dataset_ph_s dist_pass_s rest_s marginal_s/smp marginal/runall
    T1=""; R1=""
    for n in ${NS:-1 8 32 128 256}; do
        BIG=0; [ $n -gt 32 ] && BIG=1
        set -- $(BIG=$BIG run "$QR" runall "$B" "$A" --data "$D" --samples $n -o "$TMP/d.zip" --threads 2)
        [ -z "$T1" ] && { T1=$1; R1=$2; }
        $PY -c "
n, t, r, d, e, t1, ra = $n, $1, $2, $3, $4, $T1, $RA
mg = (t - t1) / (n - 1) if n > 1 else float('nan')
print('%8d %9.2f %8d %12.2f %12.2f %9.2f %14.3f %16.3f' % (n, t, r // 1024, d, e, t - d - e, mg, mg / ra))"
        RN=$2
    done
    $PY -c "print('peak RSS %s / 1 samples: %.3f' % ('$n', $RN / $R1))"
done
