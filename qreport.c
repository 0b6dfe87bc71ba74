/* qreport.c — the unity build: every module, its header right before its source, base
 * first. Build: see Makefile. Tests #include this file with QR_TESTING. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <ctype.h>
#include <float.h>
#include <strings.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "protobuf-c/protobuf-c.h"
#include "src/onnx/onnx.pb-c.h"

/* ---- modules, each header right before its source, lowest layer first ----
 * A module sees only what is included above it: calling a function of a module included
 * later does not compile (an implicit declaration, an error with -Werror; `make test`'s
 * "layers" test plants such calls and checks the compiler refuses them). The order is the
 * layer order of docs/ARCHITECTURE.md. */
#include "src/onnx/onnx.pb-c.c"

/* base/, tensor/ */
#include "src/base/base.h"
#include "src/base/base.c"
#include "src/base/sha256.h"
#include "src/base/sha256.c"
#include "src/base/pool.h"
#include "src/base/pool.c"
#include "src/tensor/tensor.h"
#include "src/tensor/tensor.c"

/* ir/, onnx/ (the graph, the loader: no operators) */
#include "src/ir/ir.h"
#include "src/ir/ir.c"
#include "src/onnx/onnx.h"
#include "src/onnx/onnx.c"

#include "src/kern/kern.h"
/* Kernels (src/kern/), one folder per ISA, one file name per kernel family in every
 * folder that has it (ref/ has every family: the oracle and the fallback). Order: ref/
 * first (the scalar pieces the SIMD kernels reuse), then gemm.c (the drivers: packing,
 * bands, the thread pool split), then each ISA's kernels, which call into both, and kern.c
 * last (the dispatch tables naming every kernel). Only the ISA being compiled for has
 * code: x86-64 files are empty on aarch64 and NEON files on x86-64. */
#include "src/kern/ref/f32_gemm.c"
#include "src/kern/ref/f32_gemv.c"
#include "src/kern/ref/f32_conv_m1.c"
#include "src/kern/ref/f32_pool.c"
#include "src/kern/ref/f32_stats.c"
#include "src/kern/ref/f64_exp.c"
#include "src/kern/ref/f32_sqsum.c"
#include "src/kern/ref/f32_steps.c"
#include "src/kern/ref/f32_trans.c"
#include "src/kern/ref/q_gemm.c"
#include "src/kern/ref/q8_dwconv2d.c"
#include "src/kern/ref/q8_pool.c"
#include "src/kern/ref/q8_eltwise.c"
#include "src/kern/ref/q8_stats.c"
#include "src/kern/ref/q8_conv_nhwc.c"
#include "src/kern/gemm.c"
#include "src/kern/neon/f32_gemm.c"
#include "src/kern/neon/f32_gemv.c"
#include "src/kern/neon/f64_exp.c"
#include "src/kern/neon/f32_conv_m1.c"
#include "src/kern/neon/q_gemm.c"
#include "src/kern/neon/q_gemm_i8mm.c"
#include "src/kern/neon/q8_dwconv2d.c"
#include "src/kern/neon/q8_stats.c"
#include "src/kern/avx2/f32_gemm.c"
#include "src/kern/avx2/f32_gemv.c"
#include "src/kern/avx2/f32_conv_m1.c"
#include "src/kern/avx2/f32_pool.c"
#include "src/kern/avx2/f32_stats.c"
#include "src/kern/avx2/f64_exp.c"
#include "src/kern/avx2/f32_sqsum.c"
#include "src/kern/avx2/f32_steps.c"
#include "src/kern/avx2/f32_trans.c"
#include "src/kern/avx2/q_gemm.c"
#include "src/kern/avx2/q8_dwconv2d.c"
#include "src/kern/avx2/q8_pool.c"
#include "src/kern/avx2/q8_eltwise.c"
#include "src/kern/avx2/q8_stats.c"
#include "src/kern/avx512/f32_gemm.c"
#include "src/kern/avx512/f32_gemv.c"
#include "src/kern/avx512/f32_steps.c"
#include "src/kern/avx512/f32_conv_m1.c"
#include "src/kern/avx512/f32_pool.c"
#include "src/kern/avx512/f32_stats.c"
#include "src/kern/avx512/f64_exp.c"
#include "src/kern/avx512/f32_sqsum.c"
#include "src/kern/avx512/q_gemm.c"
#include "src/kern/avx512/q8_dwconv2d.c"
#include "src/kern/avx512/q8_conv_nhwc.c"
#include "src/kern/kern.c"

/* qarith/: quantization arithmetic and the weight-only block formats (below ops/) */
#include "src/qarith/arith.h"
#include "src/qarith/arith.c"
#include "src/qarith/blocks.h"
#include "src/qarith/blocks.c"

/* ops/ (ops.h: every family file; registry.c: the one op table) */
#include "src/ops/ops.h"
#include "src/ops/ops.c"
#include "src/ops/elementwise.c"
#include "src/ops/shape.c"
#include "src/ops/nn.c"
#include "src/ops/qdq.c"
#include "src/ops/q_matmul.c"
#include "src/ops/q_conv.c"
#include "src/ops/qlinear.c"
#include "src/ops/contrib_wq.c"
#include "src/ops/contrib_int.c"
#include "src/ops/contrib_llm.c"
#include "src/ops/registry.c"

/* run/: binding nodes to operators, shape inference, the executor */
#include "src/run/run.h"
#include "src/run/run.c"

/* quant/: the graph passes (quantizers, the float twin, the integer lowering) and the memory estimate */
#include "src/quant/qtable.h"
#include "src/quant/qtable.c"
#include "src/quant/twkit.h"
#include "src/quant/twkit.c"
#include "src/quant/twin_wq.h"
#include "src/quant/twin_wq.c"
#include "src/quant/twin.h"
#include "src/quant/twin.c"
#include "src/quant/lower.h"
#include "src/quant/lower.c"
#include "src/quant/memest.h"
#include "src/quant/memest.c"

/* report/ writers (files.h: the bundle's file names, constants only) */
#include "src/report/files.h"
#include "src/report/table.h"
#include "src/report/table.c"
#include "src/report/plot.h"
#include "src/report/plot.c"
#include "src/report/json.h"
#include "src/report/json.c"
#include "src/report/zip.h"
#include "src/report/zip.c"
#include "src/report/html.h"
#include "src/report/html.c"
#include "src/report/graph.h"
#include "src/report/graph.c"
#include "src/report/progress.h"
#include "src/report/progress.c"

/* analysis/: the prepared pair, then the analyses over it */
#include "src/analysis/stats.h"
#include "src/analysis/stats.c"
#include "src/analysis/metrics.h"
#include "src/analysis/metrics.c"
#include "src/analysis/dsacc.h"
#include "src/analysis/dsacc.c"
#include "src/analysis/sketch.h"
#include "src/analysis/sketch.c"
#include "src/analysis/dsset.h"
#include "src/analysis/dsset.c"
#include "src/analysis/match.h"
#include "src/analysis/match.c"
#include "src/analysis/session.h"
#include "src/analysis/session.c"
#include "src/analysis/compare.h"
#include "src/analysis/compare.c"
#include "src/analysis/select.h"
#include "src/analysis/select.c"
#include "src/analysis/sens.h"
#include "src/analysis/sens.c"
#include "src/analysis/values.h"
#include "src/analysis/values.c"
#include "src/analysis/check.h"
#include "src/analysis/check.c"
#include "src/analysis/weights.h"
#include "src/analysis/weights.c"
#include "src/analysis/dist.h"
#include "src/analysis/dist.c"
#include "src/analysis/advkit.h"
#include "src/analysis/advkit.c"
#include "src/analysis/advisor_tf.h"
#include "src/analysis/advisor_tf.c"
#include "src/analysis/advisor.h"
#include "src/analysis/advisor.c"
#include "src/analysis/whatif.h"
#include "src/analysis/whatif.c"
#include "src/analysis/demote.h"
#include "src/analysis/demote.c"
#include "src/analysis/badcase.h"
#include "src/analysis/badcase.c"
#include "src/analysis/frag.h"
#include "src/analysis/frag.c"
#include "src/analysis/tokens.h"
#include "src/analysis/tokens.c"
#include "src/analysis/generate.h"
#include "src/analysis/generate.c"
#include "src/analysis/dsstat.h"
#include "src/analysis/dsstat.c"
#include "src/analysis/dataset.h"
#include "src/analysis/dataset.c"
#include "src/analysis/dspart.h"
#include "src/analysis/dspart.c"

/* deploy/ */
#include "src/deploy/dump.h"
#include "src/deploy/dump.c"
#include "src/deploy/onnxw.h"
#include "src/deploy/onnxw.c"
#include "src/deploy/extract.h"
#include "src/deploy/extract.c"
#include "src/deploy/promote.h"
#include "src/deploy/promote.c"
#include "src/deploy/hooks.h"
#include "src/deploy/hooks.c"

/* runall/ (the bundle's pages, then the driver), cli/ */
#include "src/runall/bundle.h"
#include "src/runall/bundle.c"
#include "src/runall/runall.h"
#include "src/runall/runall.c"
#include "src/cli/cli.c"
#include "src/cli/deploy.c"
#include "src/cli/main.c"
