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
#   AB_SPLIT=MS also prints the medians of the rounds whose first binary took less than MS ms
#   ("fast") and of the others ("slow"), with their ratios to ORT in the same rounds.
#   AB_RATIOS=MS,MS2,... prints, for every binary, the median over rounds of its time divided by
#   ORT's in the same round: for all rounds, then for the rounds whose ORT time falls under MS,
#   between MS and MS2, ... (ORT's own time tells the host's state, the binaries' does not).
set -u
if [ $# -lt 6 ]; then sed -n 2,13p "$0"; exit 2; fi
cd "$(dirname "$0")/.." || exit 2
NAME=$1 M=bench/models/$1 F=$2 MODE=$3 T=$4 R=$5
shift 5
declare -A res
rows=()
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
  rows+=("$line")
  line=
done
ort=$(echo "${res[ort]}" | med)
for b in "$@" ort; do
  m=$(echo "${res[$b]}" | med)
  echo "$NAME $F $MODE ${T}T $b: median ${m} ms, $(echo "$m / $ort" | bc -l | cut -c1-5)x ORT"
done
if [ -n "${AB_RATIOS:-}" ]; then
  printf '%s\n' "${rows[@]}" | awk -v cuts="${AB_RATIOS}" -v names="$* ort" '
    function med(s,   a, i, j, t, k) {
      k = split(s, a, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
    { n++; o[n] = $NF; for (i = 2; i < NF; i++) r[n, i] = $i / $NF; nf = NF }
    END { nb = split(names, nm, " "); nc = split(cuts, c, ","); c[0] = 0; c[nc + 1] = 1e9
      for (g = -1; g <= nc; g++) {
        lo = g < 0 ? 0 : c[g]; hi = g < 0 ? 1e9 : c[g + 1]; cnt = 0; os = ""
        for (i = 2; i < nf; i++) s[i] = ""
        for (k = 1; k <= n; k++) if (o[k] >= lo && o[k] < hi) { cnt++; os = os " " o[k]; for (i = 2; i < nf; i++) s[i] = s[i] " " r[k, i] }
        if (!cnt) continue
        line = g < 0 ? sprintf("per-round ratios, all %d rounds (ORT median %.3f ms):", cnt, med(os)) \
                     : sprintf("per-round ratios, %d rounds with ORT in [%s, %s) ms (ORT median %.3f ms):", cnt, lo, hi >= 1e9 ? "inf" : hi, med(os))
        for (i = 2; i < nf; i++) line = line sprintf(" %s %.3fx", nm[i - 1], med(s[i]))
        print line } }'
fi
if [ -n "${AB_SPLIT:-}" ]; then
  printf '%s\n' "${rows[@]}" | awk -v thr="$AB_SPLIT" -v names="$* ort" '
    function med(s, n,   a, i, j, t, k) {   # median of the n values in s
      k = split(s, a, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
    { st = ($2 < thr) ? "fast" : "slow"; cnt[st]++; for (i = 2; i <= NF; i++) v[st, i] = v[st, i] " " $i; nf = NF }
    END { nb = split(names, nm, " ");
      for (s = 1; s <= 2; s++) { st = s == 1 ? "fast" : "slow"; if (!cnt[st]) continue
        o = med(v[st, nf]); line = sprintf("%s (first binary %s %s ms), %d rounds:", st, st == "fast" ? "<" : ">=", thr, cnt[st])
        for (i = 2; i <= nf; i++) { m = med(v[st, i]); line = line sprintf(" %s %.3f ms %.3fx", nm[i - 1], m, m / o) }
        print line } }'
fi
