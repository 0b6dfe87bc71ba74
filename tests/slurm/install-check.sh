#!/usr/bin/env bash
# tests/slurm/install-check.sh — is a single-node Slurm possible here?
# Exit 0 (prints "slurm: ready: <versions>") when every program is installed and we are root;
# exit 77 with "skip: REASON" on stderr otherwise. Install: apt-get install slurm-wlm munge.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

missing=()
for p in "${QR_SLURM_PROGS[@]}"; do
  command -v "$p" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin command -v "$p" >/dev/null 2>&1 || missing+=("$p")
done
((${#missing[@]} == 0)) ||
  qr_slurm_skip "Slurm not installed (missing: ${missing[*]}; apt-get install slurm-wlm munge)"
# slurmd runs the jobs as the submitting user and needs root for that (setuid to the user).
[[ $EUID -eq 0 ]] || qr_slurm_skip "the single-node Slurm needs root (slurmd switches to the job's user)"
PATH=$PATH:/usr/sbin:/sbin
qr_slurm_log "ready: $(slurmctld -V 2>&1 | head -1), $(munged -V 2>&1 | head -1 | awk '{print $1}')"
