/* fuzz/fuzz_onnx_load — libFuzzer target for the ONNX loader (qr_run_load_buffer).
 * Build and run: make fuzz FUZZ_SECONDS=N (clang -fsanitize=fuzzer,address,undefined).
 * The body lives in fuzz_targets.h and is replayed on tests/regress/ by tests/test_harden.c. */
#define QR_TESTING 1
#include "../qreport.c"
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (qr__hd_fuzz_onnx_load(data, size) != 0) abort();
    return 0;
}
