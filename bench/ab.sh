#!/bin/bash
# bench/ab.sh — interleaved A/B latency of qreport binaries against ONNX Runtime on one bench
# model (not part of make test; `make bench` is the full harness). Each round runs every binary
# and then ORT once (`qreport run --repeat 20`, `node bench/ort_bench.js ... 20`), so machine
# noise hits all of them alike; prints each one's median over the rounds and its ratio to ORT.
# Usage: bench/ab.sh MODEL FILE MODE THREADS ROUNDS BIN...
#   e.g. bench/ab.sh mobilenetv2 base.onnx sim 2 9 /tmp/qreport-old ./qreport
#   MODEL: a folder of bench/models; FILE: base.onnx or qat.onnx; MODE: sim or int.
#   AB_ROUNDS=1 also prints each round's times on one line (round: BIN... ort): a shared host can
#   change state for tens of seconds (session 27: two threads' copies 4-5x slower, ORT barely),
#   so rounds are worth sorting by state before taking medians (bench/RESULTS_CNN.md).
set -u
if [ $# -lt 6 ]; then sed -n 2,9p "$0"; exit 2; fi
cd "$(dirname "$0")/.." || exit 2
NAME=$1 M=bench/models/$1 F=$2 MODE=$3 T=$4 R=$5
shift 5
declare -A res
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for _ in $(seq "$R"); do
  for b in "$@" ort; do
    if [ "$b" = ort ]; then
      v=$(node bench/ort_bench.js "$M/$F" "$M/input.npy" "$T" 20 2>/dev/null | grep -o 'median_ms=[0-9.]*' | cut -d= -f2)
    else
      v=$("$b" run "$M/$F" -i "$M/input.npy" -o /tmp/qreport-ab --threads "$T" --repeat 20 --quiet --mode "$MODE" 2>&1 |
          grep -o 'median_ms=[0-9.]*' | cut -d= -f2)
    fi
    res[$b]="${res[$b]:-} $v"
    line="${line:-round:} $v"
  done
  [ -n "${AB_ROUNDS:-}" ] && echo "$line"
  line=
done
ort=$(echo "${res[ort]}" | med)
for b in "$@" ort; do
  m=$(echo "${res[$b]}" | med)
  echo "$NAME $F $MODE ${T}T $b: median ${m} ms, $(echo "$m / $ort" | bc -l | cut -c1-5)x ORT"
done
