/* bench/conv_cold — one float convolution on the best kernel level, its weights packed as
 * `qreport run` packs them (qr_kern.f32_conv_pack, when the level's coc path takes it; else the
 * GEMM path reads them in place), timed hot or with its weights cold: a model run reads a layer's
 * weights from memory, which the kernels alone with hot caches do not show (not part of make test).
 * Build: make build/conv_cold
 * Run:   ./build/conv_cold C M H [KS [S]] [reps] [cold]   e.g. ./build/conv_cold 160 960 7  (MobileNetV2's 7x7
 *        expansion), ./build/conv_cold 512 512 7 3 (ResNet-18's layer4); C input channels, M output channels,
 *        an H x H input, a KS x KS window (default 1) of stride S (default 1), padding KS / 2, bias and Clip(0, 6).
 *        cold 1 (default): before every call a 64 MB read empties the caches, then the input and the output are
 *        touched again (only the weights come from memory); 0: hot. One thread (QR_THREADS sets more).
 * Prints the median and minimum of reps calls (after 10 warm-up calls) in microseconds and GFLOP/s. */
#define QR_TESTING 1
#include "../qreport.c"

static int cc_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s C M H [KS [S]] [reps] [cold 0|1]\n", argv[0]);
        return 2;
    }
    const int64_t C = atoll(argv[1]), M = atoll(argv[2]), H = atoll(argv[3]);
    const int64_t KS = argc > 4 ? atoll(argv[4]) : 1, S = argc > 5 ? atoll(argv[5]) : 1;
    const int reps = argc > 6 ? atoi(argv[6]) : 200, cold = argc > 7 ? atoi(argv[7]) : 1;
    if (C < 1 || M < 1 || H < 1 || KS < 1 || S < 1 || reps < 1 || KS > H) {
        fprintf(stderr, "conv_cold: bad sizes\n");
        return 2;
    }
    qr_kern_init();
    const char *th = getenv("QR_THREADS");
    if (qr_pool_init(th ? atoi(th) : 1) != QR_OK) return 1;
    const int64_t P = KS / 2, OH = (H + 2 * P - KS) / S + 1, K = C * KS * KS;
    float *x = qr_aligned_alloc((size_t)(C * H * H) * sizeof(float)), *y = qr_aligned_alloc((size_t)(M * OH * OH) * sizeof(float));
    float *w = qr_aligned_alloc((size_t)(M * K) * sizeof(float)), *bias = qr_aligned_alloc((size_t)M * sizeof(float));
    const size_t flush_b = (size_t)64 << 20;
    unsigned char *flush = malloc(flush_b);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!x || !y || !w || !bias || !flush || !t) return 1;
    for (int64_t i = 0; i < C * H * H; i++) x[i] = (float)((i * 7919) % 1000) / 1000.0f;
    for (int64_t i = 0; i < M * K; i++) w[i] = (float)((i * 104729) % 2001 - 1000) / 100000.0f;
    for (int64_t i = 0; i < M; i++) bias[i] = 0.01f * (float)i;
    memset(y, 0, (size_t)(M * OH * OH) * sizeof(float));
    memset(flush, 1, flush_b);
    QrF32ConvB cb = { x, C, H, H, KS, KS, S, S, 1, 1, P, P, OH, OH };
    const size_t pb = qr_kern.f32_conv_pack_bytes(M, &cb);
    float *pk = pb ? qr_aligned_alloc(pb) : NULL;
    if (pk) qr_kern.f32_conv_pack(M, w, K, &cb, pk);
    QrF32Fused f = { .ep = { bias, 0.0f, 6.0f }, .a_pack = pk };
    volatile unsigned char sink = 0;
    for (int r = 0; r < reps + 10; r++) {
        if (cold) {
            for (size_t i = 0; i < flush_b; i += 64) sink += flush[i];
            for (size_t i = 0; i < (size_t)(C * H * H) * sizeof(float); i += 64) sink += ((volatile unsigned char *)x)[i];
            for (size_t i = 0; i < (size_t)(M * OH * OH) * sizeof(float); i += 64) sink += ((volatile unsigned char *)y)[i];
        }
        const double t0 = qr_time_now();
        qr_kern.f32_conv_gemm_fused(M, w, K, &cb, y, OH * OH, &f);
        if (r >= 10) t[r - 10] = qr_time_now() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cc_cmp);
    const double flop = 2.0 * (double)M * (double)K * (double)(OH * OH);
    printf("conv C=%lld M=%lld %lldx%lld k%lld s%lld, level %s, weights %s (%zu packed bytes), %s: median %.1f us "
           "(%.0f GFLOP/s), min %.1f us\n", (long long)C, (long long)M, (long long)H, (long long)H, (long long)KS,
           (long long)S, qr_isa_name(qr_kern.isa), pk ? "packed" : "in place", pb, cold ? "weights cold" : "hot",
           t[reps / 2] * 1e6, flop / t[reps / 2] * 1e-9, t[0] * 1e6);
    qr_aligned_free(x);
    qr_aligned_free(y);
    qr_aligned_free(w);
    qr_aligned_free(bias);
    qr_aligned_free(pk);
    free(flush);
    free(t);
    return 0;
}
