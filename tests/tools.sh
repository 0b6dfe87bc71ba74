#!/usr/bin/env bash
# tests/tools.sh — the tools `make test` uses beyond the build, installed the way build.sh
# installs the build tools: as root, what is missing is installed (Debian packages with apt-get;
# ONNX Runtime for node from the npm registry, pinned by tests/ort/package-lock.json, whose sha512
# integrity npm checks, into third_party/ort/node_modules, git-ignored). Not root: prints what is
# missing and the command that installs it; the tests that need it then say skipped.
#
#   tests/tools.sh            install what is missing (root), else list it; exit 0
#   tests/tools.sh --check    only list what is missing; exit 1 when something is
#
# What each tool is for:
#   python3                 independent JSON and zip readers (tests/test_bundle.c)
#   unzip, coreutils        the bundle read back by Info-ZIP; sha256sum for the manifest digests
#   nodejs, npm             ONNX Runtime for node (tests/ort_run.js: deploy checks, overlays)
#   chromium                renders index.html headless (tests/render_html.sh)
#   slurm-wlm, munge        the single-node cluster of the Slurm tests (tests/slurm/)
#   clang, libclang-rt-14-dev  libFuzzer for make test's fuzz smoke run
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[[ ${1:-} == --check ]] && check=1

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
pkgs=()
for p in python3 unzip nodejs npm chromium slurm-wlm munge clang libclang-rt-14-dev; do
  installed "$p" || pkgs+=("$p")
done
# A node from elsewhere (e.g. a vendor repository's nodejs that bundles npm) serves as well.
if command -v node >/dev/null && command -v npm >/dev/null; then
  pkgs=("${pkgs[@]/nodejs}"); pkgs=("${pkgs[@]/npm}")
fi
pkgs=($(printf '%s\n' "${pkgs[@]}" | grep . || true))

ORT=third_party/ort
ort_ok() {
  [[ -f $ORT/node_modules/onnxruntime-node/package.json ]] && cmp -s tests/ort/package-lock.json "$ORT/package-lock.json" &&
    node -e "require('./$ORT/node_modules/onnxruntime-node')" >/dev/null 2>&1
}

if ((check)); then
  missing=("${pkgs[@]}")
  command -v node >/dev/null && ort_ok || missing+=("onnxruntime-node@1.30.0 ($ORT)")
  if ((${#missing[@]})); then echo "tests/tools.sh: missing: ${missing[*]}"; exit 1; fi
  echo "tests/tools.sh: every test tool present"; exit 0
fi

if ((${#pkgs[@]})); then
  if [[ $EUID -ne 0 ]]; then
    echo "tests/tools.sh: not root: the tests that need ${pkgs[*]} will say skipped" >&2
    echo "tests/tools.sh: install them with: sudo apt-get install --no-install-recommends ${pkgs[*]}" >&2
  else
    echo "==> tests/tools.sh: apt-get install ${pkgs[*]}"
    apt=(apt-get -q -y -o Dpkg::Use-Pty=0)
    "${apt[@]}" update >/dev/null
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install --no-install-recommends "${pkgs[@]}" >/dev/null
  fi
fi

if command -v npm >/dev/null && ! ort_ok; then
  echo "==> tests/tools.sh: onnxruntime-node 1.30.0 -> $ORT (npm ci, integrity from tests/ort/package-lock.json)"
  rm -rf "$ORT"
  mkdir -p "$ORT"
  cp tests/ort/package.json tests/ort/package-lock.json "$ORT/"
  # --ignore-scripts: the package ships its CPU binaries; its install script only fetches GPU ones.
  if ! (cd "$ORT" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null); then
    echo "tests/tools.sh: npm ci failed: the tests that need ONNX Runtime will say skipped" >&2
    rm -rf "$ORT"
  elif ! ort_ok; then
    echo "tests/tools.sh: onnxruntime-node installed but does not load in $(node --version 2>&1): the ORT tests will say skipped" >&2
  fi
fi
exit 0
