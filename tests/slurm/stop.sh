#!/usr/bin/env bash
# tests/slurm/stop.sh [DIR] — stop the cluster tests/slurm/start.sh started in DIR (default
# $QR_SLURM_DIR): cancels its jobs, stops slurmd, slurmctld and munged by the process ids
# start.sh recorded, then removes DIR. Safe to call twice or on a half-started cluster.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
PATH=$PATH:/usr/sbin:/sbin

D=${1:-${QR_SLURM_DIR:-}}
[[ -n $D ]] || { qr_slurm_log "stop: no cluster directory (argument or QR_SLURM_DIR)"; exit 2; }
[[ -d $D ]] || exit 0
case $D in /tmp/qr-slurm.*) ;; *) qr_slurm_log "stop: $D is not a start.sh directory"; exit 2 ;; esac
export SLURM_CONF=$D/slurm.conf

alive() { [[ -f $D/$1.pid ]] && kill -0 "$(<"$D/$1.pid")" 2>/dev/null; }

# Jobs first, while slurmd can still end their steps.
if alive slurmctld && alive slurmd && [[ -f $SLURM_CONF ]]; then
  scancel --full --quiet --partition=qr 2>/dev/null || true
  for _ in $(seq 40); do
    [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
    sleep 0.25
  done
fi
# SIGTERM to the three at once (each takes ~2 s to exit), SIGKILL after 10 s.
pids=()
for d in slurmd slurmctld munged; do
  alive "$d" || continue
  pids+=("$(<"$D/$d.pid")")
  kill -TERM "${pids[-1]}" 2>/dev/null
done
for _ in $(seq 100); do
  left=()
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && left+=("$pid"); done
  ((${#left[@]})) || break
  sleep 0.1
done
for pid in "${left[@]}"; do
  qr_slurm_log "stop: process $pid ignores SIGTERM: SIGKILL"
  kill -KILL "$pid" 2>/dev/null
done
rm -rf "$D"
