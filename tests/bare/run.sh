#!/usr/bin/env bash
# tests/bare/run.sh — the README's two commands and CI on a bare machine: builds a fresh
# Debian bookworm chroot (mmdebstrap, or debootstrap; default variant, nothing added), copies
# a clean clone of this checkout's HEAD plus ../shared into it and runs, as root inside it:
#
#   ./build.sh && make test      (README "Build and test")
#   bash .ci/run                 (installs the CI tools itself, then the whole CI)
#
# Run it whenever what build.sh or .ci/run install changes. Not part of `make test`: it takes
# long (network downloads, the full CI under qemu and ASan). Needs root (chroot, mounts).
#
#   tests/bare/run.sh [--keep] [--only-readme|--only-ci] [--container] [--only MODULE] [--dir DIR]
#     --keep         leave the chroot (DIR) in place afterwards (default: removed)
#     --only-readme  stop after the README's two commands (skip .ci/run)
#     --only-ci      only `bash .ci/run` (it builds and runs `make test` itself)
#     --dir DIR      build the chroot in DIR (default: a new /tmp/qr-bare.XXXXXX)
#     --container    run the steps in new PID/UTS/IPC/mount namespaces (unshare): a container
#                    without an engine, as CI containers run (the Slurm tests start there too)
#     --only MODULE  instead of the README and CI steps: ./build.sh, tests/tools.sh, then only
#                    the test modules matching MODULE (e.g. --only slurm)
#
# The mirror is the host's: the chroot gets the Debian apt sources of /etc/apt/sources.list*
# (deb822 .sources or one-line .list, third-party sources left out). Inside the chroot a
# policy-rc.d forbids starting services while packages are installed (as in CI containers):
# the slurmd/munge packages would otherwise start daemons from the chroot, outside our control.
# Prints each step's wall time; the log is DIR/bare.log; last line "bare: passed in N s" or
# "bare: FAILED at STEP". Exit 0 only when every step passed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
keep=0 only_readme=0 only_ci=0 container=0 only=0 dir=
while (($#)); do
  case $1 in
    --keep) keep=1 ;;
    --only-readme) only_readme=1 ;;
    --only-ci) only_ci=1 ;;
    --container) container=1 ;;
    --only) only=$2; shift ;;
    --dir) dir=$2; shift ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tests/bare/run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $EUID -eq 0 ]] || { echo "tests/bare/run.sh: needs root (chroot, mounts)" >&2; exit 2; }
shared=$(readlink -f "$repo/../shared" 2>/dev/null || true)
[[ -d $shared ]] || { echo "tests/bare/run.sh: ../shared not found beside $repo" >&2; exit 2; }

T0=$SECONDS
[[ -n $dir ]] || dir=$(mktemp -d /tmp/qr-bare.XXXXXX)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
root=$dir/root
log=$dir/bare.log
: > "$log"
say() { printf '==> [bare] %s\n' "$*" | tee -a "$log"; }
step=setup

cleanup() {
  local rc=$? p
  # Processes still running in the chroot (daemons a step left behind): ours, end them by pid.
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$root" ]] || continue
    kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
  for m in dev/pts dev/shm dev proc sys; do
    mountpoint -q "$root/$m" 2>/dev/null || continue
    umount -R "$root/$m" 2>/dev/null || umount -l "$root/$m" 2>/dev/null || true
  done
  if ((rc == 0)); then say "passed in $((SECONDS - T0)) s (commit $commit; log $log)"
  else say "FAILED at step '$step' after $((SECONDS - T0)) s (log $log)"; fi
  if ((keep)); then say "chroot kept: $root"
  elif [[ -d $root ]]; then rm -rf --one-file-system "$root"; fi
  # Last line for the caller (after the removal, so it is the last thing printed).
  if ((rc == 0)); then echo "bare: passed in $((SECONDS - T0)) s"; else echo "bare: FAILED at $step"; fi
}
commit=$(git -C "$repo" rev-parse --short HEAD)
trap cleanup EXIT

# -- the host's Debian sources, for mmdebstrap and the chroot's apt --------------------------
sources=$dir/debian.sources
{
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    # keep deb822 stanzas whose URIs are Debian's
    awk 'BEGIN { RS = ""; ORS = "\n\n" } /URIs:[^\n]*debian\.(org|net)/' "$f"
  done
} > "$sources"
lists=$(grep -hE '^deb\s+(\[[^]]*\]\s+)?\S*debian\.(org|net)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
if [[ ! -s $sources && -n $lists ]]; then sources=$dir/debian.list; printf '%s\n' "$lists" > "$sources"; fi
[[ -s $sources ]] || { sources=$dir/debian.list; echo "deb http://deb.debian.org/debian bookworm main" > "$sources"; }
say "apt sources from the host: $(grep -hE '^(URIs:|deb )' "$sources" | grep -oE 'https?://[^ ]+' | sort -u | tr '\n' ' ')"

# -- the chroot -----------------------------------------------------------------------------
step="bootstrap tool"
if ! command -v mmdebstrap >/dev/null && ! command -v debootstrap >/dev/null; then
  say "installing mmdebstrap"
  DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0 install --no-install-recommends mmdebstrap >>"$log" 2>&1 ||
    { apt-get -q update >>"$log" 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0 install --no-install-recommends mmdebstrap >>"$log" 2>&1; }
fi
step="bootstrap"
t=$SECONDS
if command -v mmdebstrap >/dev/null; then
  say "mmdebstrap bookworm (default variant) -> $root"
  mmdebstrap --mode=root bookworm "$root" "$sources" >>"$log" 2>&1
else
  mirror=$(grep -hE '^(URIs:|deb )' "$sources" | grep -oE 'https?://[^ ]+/debian/?' | head -1)
  say "debootstrap bookworm $mirror -> $root"
  debootstrap bookworm "$root" "${mirror:-http://deb.debian.org/debian}" >>"$log" 2>&1
  rm -f "$root"/etc/apt/sources.list
  cp "$sources" "$root/etc/apt/sources.list.d/${sources##*/}"
fi
say "bootstrap: $((SECONDS - t)) s ($(du -sh --one-file-system "$root" | cut -f1))"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# The network's own certificate authorities (a proxy that re-signs TLS, as in this workplace:
# npm's registry answers through it): the host's local CAs, picked up by ca-certificates when
# the chroot installs it. Like resolv.conf, a property of the network, not of the project.
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
printf '#!/bin/sh\n# tests/bare/run.sh: no service starts while packages are installed (as in CI containers)\nexit 101\n' \
  > "$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"

# -- a clean clone of HEAD + ../shared ------------------------------------------------------
step="copy"
git clone -q --no-hardlinks "$repo" "$root/root/qreport"
git -C "$root/root/qreport" checkout -q "$(git -C "$repo" rev-parse HEAD)"
cp -a --dereference "$shared" "$root/root/shared"
say "clone of $commit in /root/qreport, ../shared copied ($(du -sh "$root/root/shared" | cut -f1))"

mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"

# in_chroot NAME CMD: runs CMD (bash) in /root/qreport inside the chroot with a clean environment
in_chroot() {
  local name=$1 t=$SECONDS rc=0
  step=$name
  say "$name"
  if ((container)); then
    # A container without a container engine: new PID, UTS, IPC and mount namespaces (the
    # steps see their own process tree — PID 1 is the step's shell —, their own hostname and
    # their own /proc), as a CI container runs them; the network is the host's loopback.
    env -i HOME=/root TERM=dumb LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      unshare --fork --pid --uts --ipc --mount chroot "$root" /bin/bash -c \
      "mount -t proc proc /proc && hostname qr-container && cd /root/qreport && $2" >>"$log" 2>&1 || rc=$?
  else
    env -i HOME=/root TERM=dumb LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      chroot "$root" /bin/bash -c "cd /root/qreport && $2" >>"$log" 2>&1 || rc=$?
  fi
  tail -n 3 "$log" | sed 's/^/    /'
  say "$name: exit $rc, $((SECONDS - t)) s"
  return "$rc"
}

if [[ $only != 0 ]]; then
  in_chroot "./build.sh" "./build.sh"
  in_chroot "tests/tools.sh + test modules '$only'" "tests/tools.sh && make build/test_main && QR_BIN=./qreport ./build/test_main --only '$only' | grep -E '^(FAIL|skip|slurm|[0-9]+ passed)'"
  grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | sed "s/^/    --only $only: /" | tee -a "$log"
  grep -qE '^[0-9]+ passed, 0 failed, 0 skipped' "$log" || { step="--only $only: failed or skipped"; exit 1; }
  step=done
  exit 0
fi
if ((!only_ci)); then
  in_chroot "./build.sh (README)" "./build.sh"
  in_chroot "make test (README)" "make test"
  grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | sed 's/^/    README make test: /' | tee -a "$log"
fi
if ((!only_readme)); then
  in_chroot "bash .ci/run" "bash .ci/run"
  grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | sed 's/^/    .ci\/run: /' | tee -a "$log"
fi
step=done
