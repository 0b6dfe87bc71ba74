# tests/slurm/lib.sh — shared by the single-node Slurm scripts (sourced, not run).
# Diagnostics go to stderr; "skip: REASON" lines too. Exit code 77 means "skipped".
QR_SLURM_SKIP=77

qr_slurm_log() { printf 'slurm: %s\n' "$*" >&2; }

# qr_slurm_skip REASON: say why Slurm cannot be used here and exit 77.
qr_slurm_skip() { printf 'skip: %s\n' "$*" >&2; exit "$QR_SLURM_SKIP"; }

# The programs a cluster of one node needs (Debian: slurm-wlm, munge).
QR_SLURM_PROGS=(munged munge unmunge slurmctld slurmd sbatch sinfo squeue scontrol scancel)

# qr_slurm_need_env: dies unless a running cluster is described by the environment.
qr_slurm_need_env() {
  [[ -n ${QR_SLURM_DIR:-} && -n ${SLURM_CONF:-} && -f ${SLURM_CONF:-/nonexistent} ]] || {
    printf 'slurm: no running cluster in the environment (eval "$(tests/slurm/start.sh)" first)\n' >&2
    exit 2
  }
}
