/* kern/ref/f32_gemv — the batch-1 float products (one row of A) in ONNX Runtime's summation
 * orders, transposed B (a Linear layer) and plain B (MatMul): the plain-C oracles, the
 * reduction every level shares, and qr_f32_gemv_m1t / qr_f32_gemv_m1, which split the work
 * over the thread pool onto qr_kern.f32_gemv_m1t / qr_kern.f32_gemv_m1. */

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
                QR_KERN_ROUNDED(p);
                l[i] = l[i] + p;
            }
        for (int i = 0; k + i < K; i++) {
            float p = a[k + i] * b[k + i];
            QR_KERN_ROUNDED(p);
            l[i] = l[i] + p;
        }
        const float s = qr__k_gemv_reduce(l, n, N);
        y[n] = s + (accumulate ? y[n] : 0.0f);
    }
}

/* QrF32GemvM1tQ8Fn, plain C: each row dequantized as DequantizeLinear does, then as
 * qr_f32_gemv_m1t__ref. */
static void qr_f32_gemv_m1t_q8__ref(int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a, const void *q,
                                    bool q_signed, int64_t ldb, const float *scale, int64_t ss, const int32_t *zp,
                                    int64_t zps, float *y, bool accumulate) {
    for (int64_t n = n0; n < n1; n++) {
        const float s = scale[n * ss];
        const int32_t z = zp ? zp[n * zps] : 0;
        const int8_t *qs = (const int8_t *)q + n * ldb;
        const uint8_t *qu = (const uint8_t *)q + n * ldb;
        float l[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
        for (int64_t k = 0; k < K; k++) {
            const float b = (float)((q_signed ? (int32_t)qs[k] : (int32_t)qu[k]) - z) * s;
            float p = a[k] * b;
            QR_KERN_ROUNDED(p);
            l[k % 8] = l[k % 8] + p;
        }
        const float r = qr__k_gemv_reduce(l, n, N);
        y[n] = r + (accumulate ? y[n] : 0.0f);
    }
}

/* One pool job of qr_f32_gemv_m1t: rows [t*per_task, ...). */
typedef struct QrKGemvJob {
    int64_t N, K, ldb, per_task;
    const float *a, *B;
    float *y;
    bool accumulate;
    const void *q;              /* not NULL: B as 8-bit integers (qr_f32_gemv_m1t_q8) */
    bool q_signed;
    const float *scale;
    int64_t ss, zps;
    const int32_t *zp;
} QrKGemvJob;

static void qr__k_gemv_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrKGemvJob *j = ctx;
    const int64_t n0 = t * j->per_task, n1 = QR_MIN(j->N, n0 + j->per_task);
    if (j->q)
        qr_kern.f32_gemv_m1t_q8(n0, n1, j->N, j->K, j->a, j->q, j->q_signed, j->ldb, j->scale, j->ss, j->zp, j->zps, j->y,
                                j->accumulate);
    else
        qr_kern.f32_gemv_m1t(n0, n1, j->N, j->K, j->a, j->B, j->ldb, j->y, j->accumulate);
}

/* Runs job j (all but per_task set): ~16K elements of B per task (~64 KB of floats; the 8-bit
 * form keeps the same rows, a quarter of the bytes), small products on the calling thread. */
static void qr__k_gemv_run(QrKGemvJob *j) {
    if (j->N <= 0) return;
    j->per_task = QR_MAX(4, (16384 / QR_MAX(j->K, 1) + 3) / 4 * 4);
    const int64_t nt = (j->N + j->per_task - 1) / j->per_task;
    if (nt > 1 && j->N * j->K >= 65536) {
        qr_pool_for(nt, qr__k_gemv_task, j);
    } else {
        j->per_task = j->N;   /* one task: every row */
        qr__k_gemv_task(j, 0, 0);
    }
}

/* y[n] = S_n + (accumulate ? y[n] : +0) for the N rows of B (N, K; row stride ldb) against
 * the one row a (K): QrF32GemvM1tFn's order for every row, on the current level, the rows
 * split over the thread pool in runs of whole blocks of four when there is enough work
 * (each row's sum depends only on n and N: the same bits for any thread count). */
static void qr_f32_gemv_m1t(int64_t N, int64_t K, const float *a, const float *B, int64_t ldb, float *y,
                            bool accumulate) {
    QrKGemvJob j = { N, K, ldb, 0, a, B, y, accumulate, NULL, false, NULL, 0, 0, NULL };
    qr__k_gemv_run(&j);
}

/* qr_f32_gemv_m1t for a B given as 8-bit integers (QrF32GemvM1tQ8Fn's q, scale, zp): the
 * same rows per task (B's bytes a quarter as many), the same bits. */
static void qr_f32_gemv_m1t_q8(int64_t N, int64_t K, const float *a, const void *q, bool q_signed, int64_t ldb,
                               const float *scale, int64_t ss, const int32_t *zp, int64_t zps, float *y, bool accumulate) {
    QrKGemvJob j = { N, K, ldb, 0, a, NULL, y, accumulate, q, q_signed, scale, ss, zps, zp };
    qr__k_gemv_run(&j);
}

/* QrF32GemvM1Fn, plain C, column by column: the definition. */
static void qr_f32_gemv_m1__ref(int64_t n0, int64_t n1, int64_t K, const float *a, const float *B, int64_t ldb,
                                float *y, bool accumulate) {
    for (int64_t n = n0; n < n1; n++) {
        float c = accumulate ? y[n] : 0.0f;
        for (int64_t k = 0; k < K;) {
            const int64_t g = K - k >= 4 ? 4 : K - k >= 2 ? 2 : 1;
            float s = a[k] * B[k * ldb + n];
            QR_KERN_ROUNDED(s);
            for (int64_t i = 1; i < g; i++) {
                float p = a[k + i] * B[(k + i) * ldb + n];
                QR_KERN_ROUNDED(p);
                s = s + p;
            }
            c = s + c;
            k += g;
        }
        y[n] = c;
    }
}

/* One pool job of qr_f32_gemv_m1: columns [t*per_task, ...). */
typedef struct QrKGemvM1Job {
    int64_t N, K, ldb, per_task;
    const float *a, *B;
    float *y;
    bool accumulate;
} QrKGemvM1Job;

static void qr__k_gemv_m1_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrKGemvM1Job *j = ctx;
    const int64_t n0 = t * j->per_task, n1 = QR_MIN(j->N, n0 + j->per_task);
    qr_kern.f32_gemv_m1(n0, n1, j->K, j->a, j->B, j->ldb, j->y, j->accumulate);
}

/* y (N) = a (K) @ B (K, N; row stride ldb) [+ y] in QrF32GemvM1Fn's order on the current
 * level; columns split over the pool in runs of whole 64-column groups (~16K elements of B a
 * task) when there is enough work. Each column's sum depends only on its own values: the same
 * bits for any thread count. */
static void qr_f32_gemv_m1(int64_t N, int64_t K, const float *a, const float *B, int64_t ldb, float *y,
                           bool accumulate) {
    if (N <= 0) return;
    QrKGemvM1Job j = { N, K, ldb, 0, a, B, y, accumulate };
    j.per_task = QR_MAX(64, (16384 / QR_MAX(K, 1) + 63) / 64 * 64);
    const int64_t nt = (N + j.per_task - 1) / j.per_task;
    if (nt > 1 && N * K >= 65536) {
        qr_pool_for(nt, qr__k_gemv_m1_task, &j);
    } else {
        j.per_task = N;
        qr__k_gemv_m1_task(&j, 0, 0);
    }
}

#ifdef QR_TESTING
/* QrF32GemvPackedFn, plain C: the definition (fmaf: one rounding per multiply-add, as the
 * SIMD levels' chains), the tests' oracle. Not a level's entry: the ref level's QrF32GemmFn
 * sums K whole. */
QR_TESTAPI void qr_f32_gemv_packed__ref(int64_t r0, int64_t r1, int64_t K, const float *Ap, const float *b, float *y,
                                        bool accumulate) {
    for (int64_t r = r0; r < r1; r++) {
        const float *a = Ap + (r / 16) * K * 16 + r % 16;
        for (int64_t pc = 0; pc < K; pc += QR_KERN_F32_KC) {
            float s = 0.0f;
            for (int64_t k = pc; k < QR_MIN(K, pc + QR_KERN_F32_KC); k++) s = fmaf(a[k * 16], b[k], s);
            y[r] = pc == 0 && !accumulate ? s : y[r] + s;
        }
    }
}
#endif

/* Bytes of A (M, K) packed for QrF32GemvPackedFn: M rounded up to 16 rows. */
static size_t qr_f32_gemv_pack_bytes(int64_t M, int64_t K) {
    return M > 0 && K > 0 ? (size_t)((M + 15) / 16 * 16) * (size_t)K * sizeof(float) : 0;
}

/* dst = A (M, K; row stride lda) packed for QrF32GemvPackedFn (qr_f32_gemv_pack_bytes bytes). */
static void qr_f32_gemv_pack(int64_t M, int64_t K, const float *A, int64_t lda, float *dst) {
    for (int64_t p = 0; p < (M + 15) / 16; p++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t i = 0; i < 16; i++) {
                const int64_t r = p * 16 + i;
                dst[(p * K + k) * 16 + i] = r < M ? A[r * lda + k] : 0.0f;
            }
}

/* One pool job of qr_f32_gemv_packed (qr_f32_gemv_m1's job: N the rows, a the vector b, B the
 * packed rows): rows [t*per_task, ...). */
static void qr__k_gemv_p_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrKGemvM1Job *j = ctx;
    const int64_t r0 = t * j->per_task;
    qr_kern.f32_gemv_packed(r0, QR_MIN(j->N, r0 + j->per_task), j->K, j->B, j->a, j->y, j->accumulate);
}

/* y = A @ b [+ y] from A packed (qr_f32_gemv_pack) on the current level, which has
 * f32_gemv_packed: the rows split over the pool in runs of whole panels, about eight tasks per
 * thread (each row's sum depends on its row alone: the same bits for any thread count). */
static void qr_f32_gemv_packed(int64_t M, int64_t K, const float *Ap, const float *b, float *y, bool accumulate) {
    if (M <= 0 || K <= 0) return;
    const int threads = (double)M * (double)K < QR_KERN_POOL_MIN_MACS ? 1 : qr_pool_threads();
    QrKGemvM1Job j = { M, K, 0, (M + 8 * threads * 16 - 1) / (8 * threads * 16) * 16, b, Ap, y, accumulate };
    const int64_t nt = (M + j.per_task - 1) / j.per_task;
    if (threads > 1 && nt > 1) qr_pool_for(nt, qr__k_gemv_p_task, &j);
    else qr_kern.f32_gemv_packed(0, M, K, Ap, b, y, accumulate);
}
