#!/usr/bin/env bash
# Issue 20's scenario on the real models: every pair proven equivalent, no healthy layer blamed.
#
# Usage: bench/trust.sh [OLD] [NEW_QREPORT] [WORKDIR]
#   OLD          a qreport binary from before the pair verification, or a commit to build one from
#                (default: a78a699^, the parent of "issue 20: every pair proven equivalent"); a
#                commit is built in a temporary `git worktree` under /tmp (third_party/ linked from
#                this checkout), removed at exit
#   NEW_QREPORT  the current binary (default ./qreport)
#   WORKDIR      where the bundles go (default: a fresh /tmp/qr_trust.XXXXXX, kept)
#   MODELS       (environment) default "resnet18_qatbn mobilenetv2_qatbn"; THREADS default 1
#
# Needs bench/models/<model>/{base,qat}.onnx and input.npy:
#   /usr/bin/python3 bench/make_models.py --models resnet18_qatbn,mobilenetv2_qatbn --threads 1
# For each model and each binary: qreport runall base.onnx qat.onnx -i input.npy --threads $THREADS
# --keep-dir, then bench/trust_summary.py prints pairs total / verified / UNVERIFIED, the verdict's
# first-drop layer and the advisor's main finding with whether their pair is verified, and every row
# whose old pairing differs from the current one. Exit 1 when the current binary leaves a pair
# unverified or an analysis value unmatched without a reason (trust_summary.py), 2 on a setup error.
set -u
cd "$(dirname "$0")/.."
OLD=${1:-a78a699^}
NEW=${2:-./qreport}
WORK=${3:-$(mktemp -d /tmp/qr_trust.XXXXXX)}
MODELS=${MODELS:-resnet18_qatbn mobilenetv2_qatbn}
THREADS=${THREADS:-1}
PY=${PY:-/usr/bin/python3}
mkdir -p "$WORK" || exit 2

OLDTREE=
cleanup() {
    if [ -n "$OLDTREE" ]; then git worktree remove --force "$OLDTREE" >/dev/null 2>&1; rm -rf "$OLDTREE"; fi
}
trap cleanup EXIT

if [ ! -x "$OLD" ] || [ -d "$OLD" ]; then
    commit=$(git rev-parse --verify -q "$OLD^{commit}") || { echo "trust.sh: '$OLD' is neither an executable nor a commit" >&2; exit 2; }
    OLDTREE=$(mktemp -d /tmp/qr_trust_old.XXXXXX)
    git worktree add --detach "$OLDTREE" "$commit" >/dev/null 2>&1 || { echo "trust.sh: git worktree add $commit failed" >&2; exit 2; }
    for f in include lib stamp; do ln -s "$PWD/third_party/$f" "$OLDTREE/third_party/$f"; done
    echo "building the old binary at $(git log -1 --format='%h %s' "$commit" | cut -c1-100)"
    make -C "$OLDTREE" qreport >"$WORK/old_build.log" 2>&1 || { echo "trust.sh: the old build failed (see $WORK/old_build.log)" >&2; exit 2; }
    OLD="$OLDTREE/qreport"
fi
[ -x "$NEW" ] || { echo "trust.sh: no $NEW (make qreport)" >&2; exit 2; }

echo "old: $OLD ($("$OLD" --version 2>&1 | head -1))"
echo "new: $NEW ($("$NEW" --version 2>&1 | head -1))"
echo "CPU: $(lscpu | grep 'Model name' | sed 's/.*: *//'); threads $THREADS; bundles in $WORK"
rc=0
for m in $MODELS; do
    d=bench/models/$m
    for f in base.onnx qat.onnx input.npy; do
        [ -f "$d/$f" ] || { echo "trust.sh: no $d/$f: /usr/bin/python3 bench/make_models.py --models ${m} --threads 1" >&2; exit 2; }
    done
    for tag in old new; do
        bin=$OLD; [ $tag = new ] && bin=$NEW
        rm -rf "$WORK/${m}_$tag"
        echo "+ $bin runall $d/base.onnx $d/qat.onnx -i $d/input.npy --threads $THREADS -o $WORK/${m}_$tag.zip --keep-dir $WORK/${m}_$tag"
        SOURCE_DATE_EPOCH=0 "$bin" runall "$d/base.onnx" "$d/qat.onnx" -i "$d/input.npy" --threads "$THREADS" --quiet \
            -o "$WORK/${m}_$tag.zip" --keep-dir "$WORK/${m}_$tag" >"$WORK/${m}_$tag.log" 2>&1
        r=$?
        [ $r -eq 0 ] || { echo "trust.sh: $tag runall on $m exited $r (see $WORK/${m}_$tag.log)" >&2; exit 2; }
    done
    "$PY" bench/trust_summary.py "$m" "$WORK/${m}_old" "$WORK/${m}_new" || rc=1
done
exit $rc
