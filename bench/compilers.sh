#!/bin/bash
# bench/compilers.sh — gcc vs clang for the hot kernels (issue: "inspect the generated
# assembly ... use clang for the build if it is faster, measured"). Builds the kernel
# micro-benchmark with both compilers (same flags as the Makefile's qreport), then
#  1. per hot kernel: instruction lines, FMA / vpdpbusd count, zmm spill stores and reloads
#     on the stack (vmov* %zmmN -> (%rsp) and back) — the VNNI-accumulator trap;
#  2. GFLOP/s (f32, avx512) and GOP/s (q8, vnni) per shape, 1 and 2 threads, both builds
#     run one after the other per shape (median of REPS runs each).
# Usage: bash bench/compilers.sh [REPS]   (x86-64 with AVX-512 VNNI; not part of make test)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-9}
OUT=${TMPDIR:-/tmp}/qreport-compilers
mkdir -p "$OUT"
FLAGS="-std=gnu11 -O2 -Wall -Wextra -Werror -Ithird_party/include -I."
LIBS="-Lthird_party/lib -lminizip -lz -lprotobuf-c -lm -lpthread"
gcc $FLAGS -Wno-format-truncation -o "$OUT/bench_gcc" bench/kern_bench.c $LIBS
clang $FLAGS -o "$OUT/bench_clang" bench/kern_bench.c $LIBS
echo "gcc:   $(gcc --version | head -1)"
echo "clang: $(clang --version | head -1)"
echo
echo "## hot kernels: zmm spills (stack stores / reloads) in the whole function"
printf "%-34s %-6s %6s %6s %7s %7s\n" function cc lines fma+dp spill-st spill-ld
for f in qr__k_f32_avx512_ukr8 qr__k_f32_avx512_w16_8 qr__k_q8_vnni_ukr_bu qr__k_q8_vnni_ukr_au qr__k_m1d512_3x3_s1 qr__k_m1d512_3x3_s2x; do
    for cc in gcc clang; do
        objdump -d --no-show-raw-insn "$OUT/bench_$cc" | awk "/<$f>:/,/^\$/" > "$OUT/asm.s"
        [ -s "$OUT/asm.s" ] || { printf "%-34s %-6s (not found: inlined)\n" "$f" "$cc"; continue; }
        printf "%-34s %-6s %6d %6d %7d %7d\n" "$f" "$cc" "$(wc -l < "$OUT/asm.s")" \
            "$(grep -c -E 'vfmadd|vpdpbusd' "$OUT/asm.s" || true)" \
            "$(grep -c -E 'vmov[a-z0-9]* +%zmm[0-9]+,.*\(%rsp\)' "$OUT/asm.s" || true)" \
            "$(grep -c -E 'vmov[a-z0-9]* +-?(0x)?[0-9a-f]*\(%rsp\),%zmm' "$OUT/asm.s" || true)"
    done
done
echo
echo "## throughput, GFLOP/s (f32, avx512) / GOP/s (q8, vnni), median of $REPS runs: gcc then clang"
printf "%-4s %-26s %9s %9s %9s %9s %7s\n" kind shape "gcc 1T" "clang 1T" "gcc 2T" "clang 2T" "cl/gcc"
for kind in f32 q8; do
    lvl=$([ $kind = f32 ] && echo avx512 || echo vnni)
    BENCH_LEVEL=$lvl "$OUT/bench_gcc" "$REPS" $kind | grep "^$kind " | grep -v " shape " > "$OUT/gcc.txt"
    BENCH_LEVEL=$lvl "$OUT/bench_clang" "$REPS" $kind | grep "^$kind " | grep -v " shape " > "$OUT/clang.txt"
    # the shape is everything between the kind and the M N K level columns
    paste -d'|' "$OUT/gcc.txt" "$OUT/clang.txt" | awk -F'|' -v kind=$kind '{
        n = split($1, g, " "); split($2, c, " ");
        name = ""; for (i = 2; i <= n - 7; i++) name = name (i > 2 ? " " : "") g[i];
        printf "%-4s %-26s %9.1f %9.1f %9.1f %9.1f %7.2f\n", kind, name, g[n-2], c[n-2], g[n-1], c[n-1], (c[n-2] + c[n-1]) / (g[n-2] + g[n-1]) }'
done
