#!/usr/bin/env bash
# tests/slurm/submit_array.sh N 'COMMAND' — on the cluster started by start.sh (QR_SLURM_DIR,
# SLURM_CONF in the environment), submit a job array of N tasks (sbatch --array=0-(N-1)),
# each running COMMAND with bash in the current directory and the caller's environment,
# plus Slurm's: SLURM_ARRAY_TASK_ID (0..N-1), SLURM_ARRAY_TASK_COUNT (N), SLURM_ARRAY_JOB_ID...
# Waits for every task (QR_SLURM_TIMEOUT seconds, default 600; then cancels), prints one line
# per task ("task I: STATE exit CODE") and, for each task that failed, its output's last lines.
# Exit 0 when every task COMPLETED with exit code 0, 1 otherwise; 2 on usage errors.
# Each task's stdout+stderr: $QR_SLURM_DIR/jobs/<jobid>_<task>.out (removed by stop.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
PATH=$PATH:/usr/sbin:/sbin

(($# == 2)) && [[ $1 =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 N 'COMMAND'" >&2; exit 2; }
n=$1 cmd=$2
qr_slurm_need_env
jobs=$QR_SLURM_DIR/jobs
script=$(mktemp "$jobs/array.XXXXXX")
{ echo '#!/usr/bin/env bash'; printf '%s\n' "$cmd"; } > "$script"
chmod +x "$script"

id=$(sbatch --parsable --array="0-$((n - 1))" --job-name=qr-array --chdir="$PWD" \
        --output="$jobs/%A_%a.out" "$script") || { qr_slurm_log "sbatch failed"; exit 1; }
id=${id%%;*}
qr_slurm_log "job array $id: $n tasks of: $cmd"

# Wait until no task is pending or running (squeue answers; polling every 0.5 s).
deadline=$((SECONDS + ${QR_SLURM_TIMEOUT:-600}))
while :; do
  if ! left=$(squeue -h -r -j "$id" -o %i 2>/dev/null); then left=unknown; fi
  [[ -z $left ]] && break
  if ((SECONDS > deadline)); then
    qr_slurm_log "job array $id not done after ${QR_SLURM_TIMEOUT:-600} s: cancelled"
    scancel "$id" 2>/dev/null || true
    break
  fi
  sleep 0.5
done

# One line per task from the controller's record (kept MinJobAge seconds after the end).
declare -A state code
while read -r line; do
  t=$(sed -n 's/.* ArrayTaskId=\([0-9]*\) .*/\1/p' <<<"$line")
  [[ -n $t ]] || continue
  state[$t]=$(sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p' <<<"$line")
  code[$t]=$(sed -n 's/.* ExitCode=\([0-9:]*\) .*/\1/p' <<<"$line")
done < <(scontrol -o show job "$id" 2>/dev/null)

ok=0
for ((t = 0; t < n; t++)); do
  s=${state[$t]:-MISSING} c=${code[$t]:-?}
  printf 'task %d: %s exit %s\n' "$t" "$s" "$c"
  if [[ $s == COMPLETED && $c == 0:0 ]]; then ok=$((ok + 1)); continue; fi
  f=$jobs/${id}_$t.out
  if [[ -s $f ]]; then printf -- '--- task %d output (last lines of %s)\n' "$t" "$f"; tail -n 20 "$f"; fi
done
((ok == n)) || { qr_slurm_log "job array $id: $ok of $n tasks succeeded"; exit 1; }
qr_slurm_log "job array $id: all $n tasks succeeded"
