/* fuzz/fuzz_npy — libFuzzer target for the .npy reader (qr_npy_parse, round trip through qr_npy_encode).
 * Build and run: make fuzz FUZZ_SECONDS=N (clang -fsanitize=fuzzer,address,undefined).
 * The body lives in fuzz_targets.h and is replayed on tests/regress/ by tests/test_harden.c. */
#define QR_TESTING 1
#include "../qreport.c"
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (qr__hd_fuzz_npy(data, size) != 0) abort();
    return 0;
}
