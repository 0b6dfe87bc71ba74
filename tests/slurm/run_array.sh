#!/usr/bin/env bash
# tests/slurm/run_array.sh N 'COMMAND' — the whole cycle for a test: start a private
# single-node Slurm (start.sh), run COMMAND as a job array of N tasks (submit_array.sh: bash
# in the current directory, caller's environment, SLURM_ARRAY_TASK_ID = 0..N-1 and
# SLURM_ARRAY_TASK_COUNT = N), stop the cluster and remove its files (stop.sh), whatever happens.
#
# Exit 0: the cluster started and all N tasks exited 0.
# Exit 77: skipped — Slurm is not installed, we are not root, or its daemons did not start;
#          the reason is on stderr as "skip: REASON".
# Exit 1: some task failed or did not run (per-task states and the failed tasks' output on stdout).
# Exit 2: usage error.
# When QR_SLURM_DIR and SLURM_CONF already describe a running cluster (eval "$(start.sh)"),
# that cluster is used and left running.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

(($# == 2)) && [[ $1 =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 N 'COMMAND'" >&2; exit 2; }
if [[ -n ${QR_SLURM_DIR:-} && -f ${SLURM_CONF:-/nonexistent} ]]; then
  exec "$here/submit_array.sh" "$@"
fi
env=$("$here/start.sh") || exit $?     # 77 with the reason when Slurm cannot start
eval "$env"
trap '"$here/stop.sh" "$QR_SLURM_DIR"' EXIT
trap 'exit 130' INT TERM
"$here/submit_array.sh" "$@"
