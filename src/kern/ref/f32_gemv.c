/* kern/ref/f32_gemv — the batch-1 transposed-B float product (a Linear layer on one row) in
 * ONNX Runtime's summation order: the plain-C oracle, the reduction every level shares, and
 * qr_f32_gemv_m1t, which splits the rows over the thread pool onto qr_kern.f32_gemv_m1t. */

/* Row n's eight lanes reduced as MLAS's M=1 transposed-B kernel does (see QrF32GemvM1tFn):
 * the order depends on where n lies in its block of four of N rows. */
static inline float qr__k_gemv_reduce(const float *l, int64_t n, int64_t N) {
    const int64_t pos = n < (N & ~(int64_t)3) ? 0 : (N & 2) && n < (N & ~(int64_t)1) ? 2 : 1;
    if (pos == 0) return (((l[0] + l[1]) + l[2]) + l[3]) + (((l[4] + l[5]) + l[6]) + l[7]);
    if (pos == 2) return ((l[2] + l[0]) + (l[6] + l[4])) + ((l[3] + l[1]) + (l[7] + l[5]));
    return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* QrF32GemvM1tFn, plain C, row by row: the definition. */
static void qr_f32_gemv_m1t__ref(int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a, const float *B,
                                 int64_t ldb, float *y, bool accumulate) {
    for (int64_t n = n0; n < n1; n++) {
        const float *b = B + n * ldb;
        float l[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
        int64_t k = 0;
        for (; k + 8 <= K; k += 8)
            for (int i = 0; i < 8; i++) {
                float p = a[k + i] * b[k + i];
                QR__K_ROUNDED(p);
                l[i] = l[i] + p;
            }
        for (int i = 0; k + i < K; i++) {
            float p = a[k + i] * b[k + i];
            QR__K_ROUNDED(p);
            l[i] = l[i] + p;
        }
        const float s = qr__k_gemv_reduce(l, n, N);
        y[n] = s + (accumulate ? y[n] : 0.0f);
    }
}

/* One pool job of qr_f32_gemv_m1t: rows [t*per_task, ...). */
typedef struct QrKGemvJob {
    int64_t N, K, ldb, per_task;
    const float *a, *B;
    float *y;
    bool accumulate;
} QrKGemvJob;

static void qr__k_gemv_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrKGemvJob *j = ctx;
    const int64_t n0 = t * j->per_task, n1 = QR_MIN(j->N, n0 + j->per_task);
    qr_kern.f32_gemv_m1t(n0, n1, j->N, j->K, j->a, j->B, j->ldb, j->y, j->accumulate);
}

/* y[n] = S_n + (accumulate ? y[n] : +0) for the N rows of B (N, K; row stride ldb) against
 * the one row a (K): QrF32GemvM1tFn's order for every row, on the current level, the rows
 * split over the thread pool in runs of whole blocks of four when there is enough work
 * (each row's sum depends only on n and N: the same bits for any thread count). */
static void qr_f32_gemv_m1t(int64_t N, int64_t K, const float *a, const float *B, int64_t ldb, float *y,
                            bool accumulate) {
    if (N <= 0) return;
    /* ~64 KB of B per task: small products stay on the calling thread */
    const int64_t per = QR_MAX(4, (16384 / QR_MAX(K, 1) + 3) / 4 * 4);
    QrKGemvJob j = { N, K, ldb, per, a, B, y, accumulate };
    const int64_t nt = (N + per - 1) / per;
    if (nt > 1 && N * K >= 65536) qr_pool_for(nt, qr__k_gemv_task, &j);
    else qr_kern.f32_gemv_m1t(0, N, N, K, a, B, ldb, y, accumulate);
}
