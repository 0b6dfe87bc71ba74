#!/usr/bin/env bash
# bench/sens_topk.sh [QREPORT] [MODEL...]: the grouped sensitivity ranking against brute force (--all-rows)
# on bench/models/<MODEL> (default vit_b16 bert_base): exits 1 unless the top 10 of sensitive_ops.csv
# (op_name, sensitive_type and every metric column, as printed) are the same; prints per model the
# node executions and the evaluations of both (sensitive_ops.json, deterministic: valid under load),
# the seconds each took and /proc/loadavg. With /work/dbg_counters.patch applied (never committed) the
# GEMM GFLOP and executor runs are on the DBG lines of runall, not here.
set -uo pipefail
cd "$(dirname "$0")/.."
qr=${1:-./qreport}
shift || true
models=("$@")
[[ ${#models[@]} -eq 0 ]] && models=(vit_b16 bert_base)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) ($(nproc) cores); load before: $(cat /proc/loadavg)"
for m in "${models[@]}"; do
  d=bench/models/$m
  [[ -f $d/qat.onnx ]] || { echo "$m: no bench/models/$m/qat.onnx (bench/make_transformers.py makes it)"; status=1; continue; }
  for mode in grouped all; do
    extra=(); [[ $mode == all ]] && extra=(--all-rows)
    t0=$(date +%s.%N)
    "$qr" sensitivity "$d/base.onnx" "$d/qat.onnx" -i "$d/input.npy" --threads 2 --quiet "${extra[@]}" -o "$tmp/$m.$mode" \
      > "$tmp/$m.$mode.log" 2>&1 || { echo "$m $mode: qreport failed"; tail -3 "$tmp/$m.$mode.log"; status=1; continue 2; }
    t1=$(date +%s.%N)
    python3 - "$tmp/$m.$mode/sensitive_ops.json" "$m" "$mode" "$(echo "$t1 - $t0" | bc)" "$(cat /proc/loadavg)" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
g = j.get('grouped')
ev = f"{g['group_evaluations']} groups + {g['rows_evaluated']} rows of {g['rows']}" if g else f"{len(j['ops'])} rows"
print(f"{sys.argv[2]:10s} {sys.argv[3]:8s} node executions {j['node_executions']:6d}  evaluations: {ev}  "
      f"({float(sys.argv[4]):.1f} s wall with the cumulative error, under load {sys.argv[5]})")
EOF
  done
  if cmp -s <(sed -n 2,11p "$tmp/$m.grouped/sensitive_ops.csv") <(sed -n 2,11p "$tmp/$m.all/sensitive_ops.csv"); then
    echo "$m: top 10 identical (names, types, metrics)"
  else
    echo "$m: top 10 DIFFER"; diff <(sed -n 2,11p "$tmp/$m.grouped/sensitive_ops.csv") <(sed -n 2,11p "$tmp/$m.all/sensitive_ops.csv")
    status=1
  fi
done
exit $status
