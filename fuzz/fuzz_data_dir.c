/* fuzz/fuzz_data_dir — libFuzzer target for the data-folder reader (--data DIR of find-bad-case
 * and runall): the input describes a folder tree (odd file names, per-input folders, links, pipes,
 * .npy contents) that is built in a scratch folder, searched on a tiny model pair and removed.
 * The body and the input format live in fuzz_targets.h; tests/test_harden.c replays tests/regress/. */
#define QR_TESTING 1
#include "../qreport.c"
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (qr__hm_fuzz_data_dir(data, size) != 0) abort();
    return 0;
}
