#!/usr/bin/env bash
# tests/slurm/start.sh — start a private single-node Slurm cluster (munged, slurmctld, slurmd)
# for the tests, as root, without systemd. Everything lives in a fresh temp directory
# (munge key and socket, slurm.conf, state, spool, logs); ports are chosen free, so several
# clusters (several test runs) can coexist on one machine and the host's own Slurm (if any)
# is never touched.
#
#   eval "$(tests/slurm/start.sh)"   # exports QR_SLURM_DIR and SLURM_CONF
#   ...sbatch / tests/slurm/submit_array.sh ...
#   tests/slurm/stop.sh              # kills what start.sh started, removes QR_SLURM_DIR
#
# stdout: only the export lines. Exit 77 ("skip: REASON" on stderr) when Slurm is not
# installed or its daemons do not come up (their logs' last lines are printed); nothing is
# left running or on disk then. QR_SLURM_CPUS: CPUs the node advertises (default: the
# machine's, at least 4, so a 4-task array runs at once).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
PATH=$PATH:/usr/sbin:/sbin

"$here/install-check.sh" || exit $?   # 77 + "skip: REASON" when Slurm is not installed

# A TCP port nobody listens on (from /proc/net/tcp{,6}; the daemons fail loudly on a race).
used_ports() {
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk 'NR > 1 { split($2, a, ":"); print strtonum("0x" a[2]) }' 2>/dev/null ||
    true
}
free_port() {
  local used p
  used=" $(used_ports | tr '\n' ' ') $* "
  while :; do
    p=$((20000 + RANDOM % 40000))
    [[ $used == *" $p "* ]] || { echo "$p"; return; }
  done
}

D=$(mktemp -d /tmp/qr-slurm.XXXXXX)

mkdir -p "$D/munge" "$D/ctld" "$D/spool" "$D/jobs"
chmod 711 "$D" "$D/munge"   # munged wants its socket reachable by all (the key stays 0400)
export QR_SLURM_DIR=$D SLURM_CONF=$D/slurm.conf

fail() {  # fail REASON: stop what started, show the logs, skip
  local f
  for f in "$D"/munged.log "$D"/slurmctld.log "$D"/slurmd.log "$D"/*.out; do
    [[ -s $f ]] || continue
    printf -- '--- last lines of %s\n' "${f##*/}" >&2
    tail -n 15 "$f" >&2
  done
  local why
  why=$(daemon_error)   # before stop.sh removes $D
  "$here/stop.sh" >/dev/null 2>&1 || true
  qr_slurm_skip "single-node Slurm did not start: $*$why"
}

# The daemons' own words for the skip line: the last error/fatal line of each daemon's log or
# output (slurmd -D writes to both), e.g. ": slurmd: fatal: Unable to determine this slurmd's NodeName".
daemon_error() {
  local f d line out=
  for d in munged slurmctld slurmd; do
    line=
    for f in "$D/$d.log" "$D/$d.out"; do
      [[ -s $f ]] || continue
      line=$(grep -aiE 'error|fatal' "$f" | tail -n 1 | sed -E 's/^\[[^]]*\] *//' | cut -c1-300)
      [[ -n $line ]] && break
    done
    [[ -n $line ]] && out+="; $d: $line"
  done
  printf '%s' "$out"
}

# munge: a private key and socket; slurm.conf points the daemons and clients at it.
head -c 1024 /dev/urandom > "$D/munge/munge.key"
chmod 400 "$D/munge/munge.key"
sock=$D/munge/munge.socket
setsid munged --foreground --force --socket="$sock" --key-file="$D/munge/munge.key" \
  --pid-file="$D/munge/munged.pid" --log-file="$D/munged.log" --seed-file="$D/munge/munged.seed" \
  </dev/null >"$D/munged.out" 2>&1 &
echo $! > "$D/munged.pid"
for _ in $(seq 50); do [[ -S $sock ]] && break; sleep 0.1; done
munge -S "$sock" -n 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1 || fail "munged does not answer on $sock"

host=$(hostname -s)
cpus=${QR_SLURM_CPUS:-$(nproc)}
((cpus >= 4)) || cpus=${QR_SLURM_CPUS:-4}
ctld_port=$(free_port)
d_port=$(free_port "$ctld_port")
cat > "$SLURM_CONF" <<CONF
# Written by tests/slurm/start.sh: a private single-node cluster, all state under $D.
ClusterName=qrtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$D/ctld
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/ctld/slurmctld.pid
SlurmdPidFile=$D/spool/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups (no systemd in CI containers), no accounting database, no mail.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# The node advertises $cpus CPUs whatever the machine has (config_overrides).
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=qr Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

setsid slurmctld -D -c -f "$SLURM_CONF" </dev/null >"$D/slurmctld.out" 2>&1 &
echo $! > "$D/slurmctld.pid"
setsid slurmd -D -f "$SLURM_CONF" </dev/null >"$D/slurmd.out" 2>&1 &
echo $! > "$D/slurmd.pid"

# Up when sinfo shows the node idle (60 s at most).
state=
for _ in $(seq 120); do
  kill -0 "$(<"$D/slurmctld.pid")" 2>/dev/null || fail "slurmctld exited"
  kill -0 "$(<"$D/slurmd.pid")" 2>/dev/null || fail "slurmd exited"
  state=$(sinfo -h -N -o '%t' 2>/dev/null | head -1 || true)
  [[ $state == idle ]] && break
  sleep 0.5
done
[[ $state == idle ]] || fail "node $host not idle after 60 s (sinfo state: '${state:-no answer}')"
qr_slurm_log "cluster up in $D: node $host, $cpus CPUs, slurmctld port $ctld_port, slurmd port $d_port"
printf 'export QR_SLURM_DIR=%q SLURM_CONF=%q\n' "$D" "$SLURM_CONF"
