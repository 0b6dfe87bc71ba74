#!/usr/bin/env bash
# fuzz/run.sh — runs one libFuzzer target (built by make fuzz-build) for a time budget.
#   fuzz/run.sh TARGET SECONDS           random seed; new inputs kept in build/fuzz/work/TARGET
#   fuzz/run.sh --smoke TARGET SECONDS   fixed seed, scratch work folder (make test)
#   fuzz/run.sh --probe CC               exit 0 when CC can link -fsanitize=fuzzer
# A crash stops the run: the input is saved as build/fuzz/artifacts/TARGET/crash-* (or
# leak-, timeout-, oom-). Make it a regression test: copy it to tests/regress/TARGET-NAME
# (tests/test_harden.c replays every file there through the same target body) and fix.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."

if [[ ${1:-} == --probe ]]; then
  d=$(mktemp -d)
  printf '%s\n' '#include <stdint.h>' '#include <stddef.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' > "$d/p.c"
  "${2:-clang}" -fsanitize=fuzzer,address,undefined -o "$d/p" "$d/p.c" >/dev/null 2>&1 && rc=0 || rc=1
  rm -rf "$d"
  exit $rc
fi
smoke=0
if [[ ${1:-} == --smoke ]]; then smoke=1; shift; fi
t=${1:?target}; secs=${2:?seconds}
bin=build/fuzz/fuzz_$t
[[ -x $bin ]] || { echo "fuzz/run.sh: $bin not built (make fuzz-build)" >&2; exit 2; }

case $t in   # loaders must not allocate much more than their input: a malloc > 64 MB is a finding
  onnx_load) opts=(-max_len=65536 -malloc_limit_mb=64 -dict=fuzz/onnx.dict) ;;
  onnx_run)  opts=(-max_len=65536 -timeout=10 -dict=fuzz/onnx.dict) ;;   # capped: QR_FUZZ_RUN_BUDGET
  npy)       opts=(-max_len=16384 -malloc_limit_mb=64 -dict=fuzz/npy.dict) ;;
  pb)        opts=(-max_len=65536 -malloc_limit_mb=64) ;;
  data_dir)  opts=(-max_len=16384 -malloc_limit_mb=128 -timeout=10 -dict=fuzz/data_dir.dict) ;;   # builds a folder tree per input
  *) echo "fuzz/run.sh: unknown target $t" >&2; exit 2 ;;
esac
art=build/fuzz/artifacts/$t
log=build/fuzz/$t.log
if ((smoke)); then
  work=build/fuzz/smoke/$t; rm -rf "$work"; opts+=(-seed=1); log=build/fuzz/$t.smoke.log
else
  work=build/fuzz/work/$t
fi
mkdir -p "$work" "$art"
base=/tmp; [[ -d /dev/shm && -w /dev/shm ]] && base=/dev/shm    # tmpfs: the .pb target fsyncs
tmp=$(mktemp -d "$base/qr_fuzz_run.XXXXXX")   # the target's scratch folder (QR_FUZZ_TMP)
trap 'rm -rf "$tmp"' EXIT
rc=0
QR_FUZZ_TMP=$tmp "./$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=2048 \
  -artifact_prefix="$art/" "$work" "build/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
times > "$tmp/times"     # builtin, no fork: line 2 is the user and system time of the fuzzer (children)
cpu=$(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$tmp/times")
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.*\(cov: [0-9]*\).*\(ft: [0-9]*\).*\(corp: [0-9/a-zA-Z]*\).*/\1 \2 \3/p')
if ((rc)); then
  echo "fuzz_$t: FAILED after ${execs:-?} executions, ${cpu:-?} s of CPU (log: $log):"
  grep -E 'ERROR|SUMMARY|==[0-9]+==|fuzz:|Test unit written|artifact' "$log" | head -20
  exit 1
fi
printf 'fuzz_%-9s %4s s  %5s s cpu  %10s executions  %s  ok\n' "$t" "$secs" "${cpu:-?}" "${execs:-?}" "$cov"
if ((smoke)); then rm -rf "$work"; fi
