/* fuzz/fuzz_main — every libFuzzer target in one binary, one unity build of qreport.c under
 * -fsanitize=fuzzer,address,undefined (five such builds were most of `make test`'s time).
 * The target is the name the binary is run by: build/fuzz/fuzz_<target> are links to
 * build/fuzz/fuzz_qreport (fuzz/run.sh runs them), or QR_FUZZ_TARGET=<target>. Bodies in
 * fuzz_targets.h (tests/test_harden.c replays tests/regress/ through the same ones). */
#define QR_TESTING 1
#include "../qreport.c"
#include "fuzz_targets.h"
#define QR_FUZZ_ONNX_MUTATOR qr__fz_onnx_mutator
#include "onnx_mutator.h"

/* The memory cap of onnx_run: linked with -Wl,--wrap=posix_memalign, so every tensor and arena
 * block (qr_aligned_alloc) passes here. While a run is armed (only qr__hd_fuzz_onnx_run arms
 * it), allocations beyond what is left of QR_FUZZ_RUN_BUDGET fail (ENOMEM), which the library
 * must report as QR_ERR_NOMEM. */
int __real_posix_memalign(void **p, size_t align, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size) {
    if (qr__hd_budget_armed) {
        if (size > qr__hd_budget_left) return ENOMEM;
        qr__hd_budget_left -= size;
    }
    return __real_posix_memalign(p, align, size);
}

typedef struct QrFzTarget {
    const char *name;
    int (*body)(const uint8_t *data, size_t size);
    bool onnx_mutator;          /* structure-aware mutations (onnx_mutator.h) */
} QrFzTarget;

static const QrFzTarget qr__fz_targets[] = {
    { "onnx_load", qr__hd_fuzz_onnx_load, false },
    { "npy", qr__hd_fuzz_npy, false },
    { "pb", qr__hd_fuzz_pb, false },
    { "onnx_run", qr__hd_fuzz_onnx_run, true },
    { "data_dir", qr__hm_fuzz_data_dir, false },
};
static const QrFzTarget *qr__fz_target;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *name = getenv("QR_FUZZ_TARGET");
    if (!name || !*name) {
        const char *a0 = *argc > 0 ? (*argv)[0] : "";
        const char *base = strrchr(a0, '/');
        base = base ? base + 1 : a0;
        name = !strncmp(base, "fuzz_", 5) ? base + 5 : base;
    }
    for (size_t i = 0; i < QR_ARRAY_LEN(qr__fz_targets); i++)
        if (!strcmp(name, qr__fz_targets[i].name)) qr__fz_target = &qr__fz_targets[i];
    if (!qr__fz_target) {
        fprintf(stderr, "fuzz_qreport: no target '%s': run it as build/fuzz/fuzz_<target> or set QR_FUZZ_TARGET "
                        "(onnx_load, npy, pb, onnx_run, data_dir)\n", name);
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (qr__fz_target->body(data, size) != 0) abort();
    return 0;
}

/* libFuzzer's own mutations, except onnx_run's structure-aware ones. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    if (qr__fz_target->onnx_mutator) return qr__fz_onnx_mutator(data, size, max_size, seed);
    return LLVMFuzzerMutate(data, size, max_size);
}
