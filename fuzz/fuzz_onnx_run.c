/* fuzz/fuzz_onnx_run — libFuzzer target for model execution: a fuzzed model that loads and
 * passes shape inference runs on small zero inputs under a memory budget; crashes and hangs
 * are bugs. Mutations are mostly structural (onnx_mutator.h). Body in fuzz_targets.h. */
#define QR_TESTING 1
#include "../qreport.c"
#include "fuzz_targets.h"
#include "onnx_mutator.h"

/* The memory cap: linked with -Wl,--wrap=posix_memalign, so every tensor and arena block
 * (qr_aligned_alloc) passes here. While a run is armed, allocations beyond what is left of
 * QR_FUZZ_RUN_BUDGET fail (ENOMEM), which the library must report as QR_ERR_NOMEM. */
int __real_posix_memalign(void **p, size_t align, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size) {
    if (qr__hd_budget_armed) {
        if (size > qr__hd_budget_left) return ENOMEM;
        qr__hd_budget_left -= size;
    }
    return __real_posix_memalign(p, align, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (qr__hd_fuzz_onnx_run(data, size) != 0) abort();
    return 0;
}
