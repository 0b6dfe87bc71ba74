/* qreport.c — the unity build: every module header, then every module source,
 * base first. Build: see Makefile. Tests #include this file with QR_TESTING. */
#define _GNU_SOURCE
/* Module APIs are `static` in one translation unit; functions the CLI does not
 * reach (yet) are still part of a module's API and exercised by tests/. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <errno.h>
#include <ctype.h>
#include <float.h>
#include <strings.h>

#include "protobuf-c/protobuf-c.h"
#include "src/onnx/onnx.pb-c.h"

/* ---- headers ---- */
#include "src/base/base.h"
#include "src/base/sha256.h"
#include "src/tensor/tensor.h"
#include "src/ir/ir.h"
#include "src/onnx/onnx.h"
#include "src/ops/ops.h"
#include "src/kern/kern.h"
#include "src/run/run.h"
#include "src/quant/quant.h"
#include "src/quant/twin.h"
#include "src/quant/lower.h"
#include "src/report/table.h"
#include "src/report/plot.h"
#include "src/report/json.h"
#include "src/report/zip.h"
#include "src/report/html.h"
#include "src/report/progress.h"
#include "src/analysis/stats.h"
#include "src/analysis/match.h"
#include "src/analysis/session.h"
#include "src/analysis/metrics.h"
#include "src/analysis/compare.h"
#include "src/analysis/sens.h"
#include "src/analysis/check.h"
#include "src/analysis/weights.h"
#include "src/analysis/dist.h"
#include "src/analysis/advisor.h"
#include "src/analysis/whatif.h"
#include "src/analysis/badcase.h"
#include "src/report/bundle.h"

/* ---- sources ---- */
#include "src/onnx/onnx.pb-c.c"
#include "src/base/base.c"
#include "src/base/sha256.c"
#include "src/tensor/tensor.c"
#include "src/ir/ir.c"
#include "src/onnx/onnx.c"
#include "src/kern/ref/f32_gemm.c"
#include "src/kern/kern.c"
#include "src/ops/ops.c"
#include "src/ops/elementwise.c"
#include "src/ops/shape.c"
#include "src/ops/nn.c"
#include "src/ops/quant.c"
#include "src/ops/registry.c"
#include "src/run/run.c"
#include "src/quant/quant.c"
#include "src/quant/twin.c"
#include "src/quant/lower.c"
#include "src/report/table.c"
#include "src/report/plot.c"
#include "src/report/json.c"
#include "src/report/zip.c"
#include "src/report/html.c"
#include "src/report/progress.c"
#include "src/analysis/stats.c"
#include "src/analysis/match.c"
#include "src/analysis/session.c"
#include "src/analysis/metrics.c"
#include "src/analysis/compare.c"
#include "src/analysis/sens.c"
#include "src/analysis/check.c"
#include "src/analysis/weights.c"
#include "src/analysis/dist.c"
#include "src/analysis/advisor.c"
#include "src/analysis/whatif.c"
#include "src/analysis/badcase.c"
#include "src/report/bundle.c"
#include "src/cli/cli.c"
