/* tests/kern — every kernel level the CPU has against its __ref twin (odd sizes, tails,
 * strides, zero points, extreme values), the ref kernels against independent double /
 * int64 loops, and the thread pool (every task once; same bits for 1, 2 and 3 threads). */

/* Kernel tables of every level this machine supports (ref first). */
static int qt__k_levels(QrKernels *out, int max) {
    static const QrIsa all[] = { QR_ISA_REF, QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_VNNI, QR_ISA_NEON, QR_ISA_DOT,
                                 QR_ISA_I8MM };
    int n = 0;
    for (int i = 0; i < QR_ARRAY_LEN(all) && n < max; i++)
        if (qr_kern_table(all[i], &out[n]) == QR_OK) n++;
    qr_err_clear();
    return n;
}

static float *qt__k_randf(int64_t n, uint64_t *rng) {
    float *p = qr_aligned_alloc((size_t)QR_MAX(n, 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++) p[i] = qr_rng_normal(rng);
    return p;
}

/* ==== thread pool ================================================================= */

typedef struct { _Atomic int hits[1000]; double part[1000]; } QtPoolCtx;

static void qt__pool_fn(void *ctx, int64_t t, int tid) {
    QtPoolCtx *c = ctx;
    QR_UNUSED(tid);
    atomic_fetch_add(&c->hits[t], 1);
    double s = 0;
    for (int i = 0; i < 1000; i++) s += sin((double)(t * 1000 + i));
    c->part[t] = s;
}

static void qt__pool_nested_fn(void *ctx, int64_t t, int tid) {
    QtPoolCtx *c = ctx;
    QR_UNUSED(tid);
    /* a parallel-for inside a task */
    QtPoolCtx *inner = calloc(1, sizeof *inner);
    qr_pool_for(7, qt__pool_fn, inner);
    int ok = 1;
    for (int i = 0; i < 7; i++) ok &= inner->hits[i] == 1;
    free(inner);
    atomic_fetch_add(&c->hits[t], ok);
}

/* Nested parallel-fors: which threads ran the inner tasks, and whether any rule was broken. */
typedef struct {
    _Atomic int busy[QR_POOL_MAX_THREADS];   /* an inner task with this tid is running */
    _Atomic int tids;                        /* bit per tid that ran an inner task */
    _Atomic int clash, reentered, bad_tid, hits[64];
    int threads;
    bool wait;                               /* the first inner task waits for another thread */
} QtPoolNest;

static _Thread_local int qt__pool_in_outer;   /* this thread is inside an outer task */

static void qt__pool_inner_fn(void *ctx, int64_t t, int tid) {
    QtPoolNest *c = ctx;
    if (tid < 0 || tid >= c->threads) { atomic_fetch_add(&c->bad_tid, 1); return; }
    if (atomic_exchange(&c->busy[tid], 1)) atomic_fetch_add(&c->clash, 1);   /* two running tasks, one tid */
    atomic_fetch_or(&c->tids, 1 << tid);
    atomic_fetch_add(&c->hits[t], 1);
    /* the first task waits (at most 5 s) until another thread has run one: a nested
     * parallel-for that runs serially on its caller never gets there */
    for (int i = 0; c->wait && t == 0 && i < 5000 && atomic_load(&c->tids) == (1 << tid); i++) usleep(1000);
    double s = 0;
    for (int i = 0; i < 20000; i++) s += sin((double)(t + i));
    if (s == 12345.0) atomic_fetch_add(&c->hits[t], 1);   /* (never: keeps the loop) */
    atomic_store(&c->busy[tid], 0);
}

/* Outer task: task 1 runs a nested parallel-for; a thread is never inside two outer tasks. */
static void qt__pool_outer_fn(void *ctx, int64_t t, int tid) {
    QtPoolNest *c = ctx;
    QR_UNUSED(tid);
    if (qt__pool_in_outer) atomic_fetch_add(&c->reentered, 1);
    qt__pool_in_outer = 1;
    if (t == 1) qr_pool_for(64, qt__pool_inner_fn, c);
    qt__pool_in_outer = 0;
}

/* Every outer task runs a nested parallel-for; the waiting caller must not take a sibling. */
static void qt__pool_outer_all_fn(void *ctx, int64_t t, int tid) {
    QtPoolNest *c = ctx;
    QR_UNUSED(tid);
    QR_UNUSED(t);
    if (qt__pool_in_outer) atomic_fetch_add(&c->reentered, 1);
    qt__pool_in_outer = 1;
    QtPoolNest *in = calloc(1, sizeof *in);
    in->threads = c->threads;
    qr_pool_for(16, qt__pool_inner_fn, in);
    atomic_fetch_add(&c->clash, in->clash + in->bad_tid);
    free(in);
    qt__pool_in_outer = 0;
}

/* A nested parallel-for takes the idle thread: with 2 threads, the inner tasks of an outer
 * job run on both (the first inner task waits for the other thread), every task once, never
 * two at a time with one tid, and no thread enters an outer task while inside one. */
static void test_pool_nested(void) {
    QT_OK(qr_pool_init(2));
    QtPoolNest *c = calloc(1, sizeof *c);
    c->threads = 2;
    c->wait = true;
    qr_pool_for(2, qt__pool_outer_fn, c);
    QT_CHECKF(atomic_load(&c->tids) == 3, "inner tasks ran on tids mask %d (want both threads)", atomic_load(&c->tids));
    for (int t = 0; t < 64; t++) QT_CHECKF(c->hits[t] == 1, "inner task %d ran %d times", t, (int)c->hits[t]);
    QT_CHECK(c->clash == 0 && c->bad_tid == 0 && c->reentered == 0);
    for (int threads = 2; threads <= 3; threads++) {
        QT_OK(qr_pool_init(threads));
        memset(c, 0, sizeof *c);
        c->threads = threads;
        qr_pool_for(40, qt__pool_outer_all_fn, c);
        QT_CHECKF(c->clash == 0 && c->reentered == 0, "threads %d: %d tid clashes, %d outer tasks re-entered", threads,
                  (int)c->clash, (int)c->reentered);
    }
    free(c);
    qr_pool_shutdown();
    QT_OK(qr_pool_init(0));
}

/* Records the order tasks ran in and the tid that ran each; task 0 waits (at most 5 s) until
 * another task has started when `wait` is set. */
typedef struct {
    _Atomic int n;
    int order[64], tid_of[64];
    bool wait;
} QtPoolSeg;

static void qt__pool_seg_fn(void *ctx, int64_t t, int tid) {
    QtPoolSeg *c = ctx;
    c->order[atomic_fetch_add(&c->n, 1)] = (int)t;
    c->tid_of[t] = tid;
    for (int i = 0; c->wait && t == 0 && i < 5000 && atomic_load(&c->n) < 2; i++) usleep(1000);
}

/* The pool's segments: thread k claims its own run of consecutive tasks first, then the
 * following segments' in turn (checked by draining as each tid on this thread), so that kernels
 * numbering tasks in the order of the data they write give a thread the same share of
 * consecutive jobs; and live, with 2 threads, the worker's first task is the second segment's
 * first (with one shared counter it would be task 1), but task 1 with qr_pool_for_queue. */
static void test_pool_segments(void) {
    static const struct { int n, nseg, tid, want[12]; } cases[] = {
        { 10, 3, 1, { 3, 4, 5, 6, 7, 8, 9, 0, 1, 2 } },
        { 10, 3, 0, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
        { 10, 3, 2, { 6, 7, 8, 9, 0, 1, 2, 3, 4, 5 } },
        { 10, 3, 4, { 3, 4, 5, 6, 7, 8, 9, 0, 1, 2 } },   /* tid 4 of 3 segments: segment 1 */
        { 2, 5, 1, { 1, 0 } },                           /* fewer tasks than threads: 2 segments */
        { 7, 2, 1, { 3, 4, 5, 6, 0, 1, 2 } },
        { 1, 2, 1, { 0 } },
    };
    const int tid0 = qr__pool_tid;
    for (int ci = 0; ci < QR_ARRAY_LEN(cases); ci++) {
        QtPoolSeg c = { 0 };
        QrPoolJob j;
        qr__pool_job_init(&j, cases[ci].n, cases[ci].nseg, qt__pool_seg_fn, &c);
        qr__pool_tid = cases[ci].tid;
        qr__pool_drain(&j);
        qr__pool_tid = tid0;
        QT_CHECKF(atomic_load(&c.n) == cases[ci].n, "case %d: %d tasks ran of %d", ci, atomic_load(&c.n), cases[ci].n);
        for (int i = 0; i < cases[ci].n; i++)
            QT_CHECKF(c.order[i] == cases[ci].want[i], "case %d: the %d-th task run is %d, want %d", ci, i, c.order[i],
                      cases[ci].want[i]);
        QT_CHECK(!qr__pool_left(&j));
    }
    QT_OK(qr_pool_init(2));
    QtPoolSeg c = { .wait = true };
    qr_pool_for(4, qt__pool_seg_fn, &c);
    QT_CHECKF(atomic_load(&c.n) == 4 && c.order[0] == 0 && c.order[1] == 2 && c.tid_of[0] == 0 && c.tid_of[2] == 1,
              "2 threads, 4 tasks: order %d %d %d %d, task 2 on tid %d (want 0 2 .. .., tid 1)", c.order[0], c.order[1],
              c.order[2], c.order[3], c.tid_of[2]);
    QtPoolSeg q = { .wait = true };   /* one queue: the worker's first task is task 1 */
    qr_pool_for_queue(4, qt__pool_seg_fn, &q);
    QT_CHECKF(atomic_load(&q.n) == 4 && q.order[0] == 0 && q.order[1] == 1 && q.tid_of[1] == 1,
              "queue, 2 threads, 4 tasks: order %d %d %d %d, task 1 on tid %d (want 0 1 .. .., tid 1)", q.order[0],
              q.order[1], q.order[2], q.order[3], q.tid_of[1]);
    qr_pool_shutdown();
    QT_OK(qr_pool_init(0));
}

/* Rtol's maximum straight from its definition (|x - y| / |x|; FLT_MAX where x = 0 != y), in
 * double: the reference of the f32_rtol kernels (here and in test_incr). */
static double qt_rtol_naive(const float *x, const float *y, int64_t n) {
    double want = 0;
    for (int64_t i = 0; i < n; i++) {
        double ad = fabs((double)x[i] - (double)y[i]), ax = fabs((double)x[i]);
        double r = ax > 0 ? ad / ax : (ad > 0 ? FLT_MAX : 0);
        if (r > want) want = r;
    }
    return want;
}

static void test_pool(void) {
    double ref_sum = 0;
    for (int threads = 1; threads <= 3; threads++) {
        QT_OK(qr_pool_init(threads));
        QT_CHECK(qr_pool_threads() == threads);
        QtPoolCtx *c = calloc(1, sizeof *c);
        qr_pool_for(1000, qt__pool_fn, c);
        double sum = 0;
        for (int t = 0; t < 1000; t++) {
            QT_CHECKF(c->hits[t] == 1, "threads=%d task %d ran %d times", threads, t, (int)c->hits[t]);
            sum += c->part[t];   /* merged in task order: the same bits for any thread count */
        }
        if (threads == 1) ref_sum = sum;
        QT_CHECKF(memcmp(&sum, &ref_sum, sizeof sum) == 0, "threads=%d: %.17g vs %.17g", threads, sum, ref_sum);
        memset(c, 0, sizeof *c);
        qr_pool_for(5, qt__pool_nested_fn, c);
        for (int t = 0; t < 5; t++) QT_CHECK(c->hits[t] == 1);
        qr_pool_for(0, qt__pool_fn, c);   /* no tasks: no call */
        free(c);
    }
    setenv("QR_THREADS", "2x", 1);
    QT_CHECK(qr_pool_init(0) == QR_ERR_INVALID);
    setenv("QR_THREADS", "2", 1);
    QT_OK(qr_pool_init(0));
    QT_CHECK(qr_pool_threads() == 2);
    unsetenv("QR_THREADS");
    qr_pool_shutdown();
    QT_OK(qr_pool_init(0));
}

/* ==== float32 GEMM ================================================================ */

/* C = A @ B in double, and the error scale sum_k |a b| per element. */
static void qt__k_gemm_f64(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                           double *C, double *S) {
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0, a = 0;
            for (int64_t k = 0; k < K; k++) {
                double p = (double)A[i * lda + k] * B[k * ldb + j];
                s += p;
                a += fabs(p);
            }
            C[i * N + j] = s;
            S[i * N + j] = a;
        }
}

typedef struct { int64_t M, N, K, pa, pb, pc; } QtGemmShape;

static void test_f32_gemm(void) {
    static const QtGemmShape shapes[] = {
        { 1, 1, 1, 0, 0, 0 },       { 1, 1000, 512, 0, 0, 0 }, { 7, 17, 3, 1, 2, 3 },    { 13, 33, 257, 0, 5, 1 },
        { 6, 16, 256, 0, 0, 0 },    { 12, 32, 512, 3, 0, 0 },  { 64, 49, 576, 0, 0, 0 }, { 5, 100, 1, 0, 0, 7 },
        { 130, 70, 300, 2, 1, 0 },  { 11, 31, 0, 0, 0, 0 },    { 200, 3, 40, 0, 0, 2 },  { 37, 530, 19, 0, 0, 0 },
        { 193, 45, 600, 0, 3, 0 },  { 2, 2, 1000, 0, 0, 0 },   { 1000, 1, 512, 0, 3, 0 }, { 77, 1, 33, 0, 0, 0 },
        { 300, 1, 1000, 5, 0, 2 },  { 70, 256, 600, 0, 0, 0 }, { 40, 250, 300, 0, 6, 0 },
    };
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 42;
    for (int si = 0; si < QR_ARRAY_LEN(shapes); si++) {
        const QtGemmShape *s = &shapes[si];
        int64_t lda = s->K + s->pa, ldb = s->N + s->pb, ldc = s->N + s->pc;
        float *A = qt__k_randf(s->M * lda, &rng), *B = qt__k_randf(s->K * ldb, &rng);
        float *C0 = qt__k_randf(s->M * ldc, &rng), *C = qr_aligned_alloc((size_t)(s->M * ldc) * sizeof(float));
        double *D = malloc((size_t)QR_MAX(1, s->M * s->N) * sizeof(double));
        double *S = malloc((size_t)QR_MAX(1, s->M * s->N) * sizeof(double));
        qt__k_gemm_f64(s->M, s->N, s->K, A, lda, B, ldb, D, S);
        double tol = QR_KERN_F32_DOT_TOL(s->K);
        for (int l = 0; l < nl; l++)
            for (int acc = 0; acc < 2; acc++) {
                memcpy(C, C0, (size_t)(s->M * ldc) * sizeof(float));
                lv[l].f32_gemm(s->M, s->N, s->K, A, lda, B, ldb, C, ldc, acc);
                for (int64_t i = 0; i < s->M; i++)
                    for (int64_t j = 0; j < ldc; j++) {
                        float got = C[i * ldc + j], c0 = C0[i * ldc + j];
                        if (j >= s->N) {   /* the stride padding is never written */
                            QT_CHECKF(memcmp(&got, &c0, 4) == 0, "%s: C[%lld][%lld] padding written",
                                      qr_isa_name(lv[l].isa), (long long)i, (long long)j);
                            continue;
                        }
                        double want = D[i * s->N + j] + (acc ? c0 : 0.0);
                        double bound = tol * (S[i * s->N + j] + (acc ? fabs(c0) : 0.0)) + 1e-30;
                        QT_CHECKF(fabs(got - want) <= bound, "%s M=%lld N=%lld K=%lld acc=%d: C[%lld][%lld]=%.9g want %.9g",
                                  qr_isa_name(lv[l].isa), (long long)s->M, (long long)s->N, (long long)s->K, acc,
                                  (long long)i, (long long)j, got, want);
                    }
            }
        qr_aligned_free(A);
        qr_aligned_free(B);
        qr_aligned_free(C0);
        qr_aligned_free(C);
        free(D);
        free(S);
    }
}

/* The GEMM epilogue (bias per row, clamp, NaN through the clamp) on every level against
 * double loops. */
static void test_f32_gemm_ex(void) {
    static const QtGemmShape shapes[] = {
        { 1, 1, 1, 0, 0, 0 }, { 7, 17, 3, 1, 2, 3 }, { 13, 33, 300, 0, 5, 1 }, { 64, 49, 576, 0, 0, 0 },
        { 130, 70, 700, 2, 1, 0 }, { 50, 1, 33, 0, 2, 0 }, { 9, 9, 0, 0, 0, 0 },
    };
    static const float clamps[3][2] = { { -INFINITY, INFINITY }, { 0.0f, INFINITY }, { -0.5f, 0.5f } };
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 43;
    for (int si = 0; si < QR_ARRAY_LEN(shapes); si++) {
        const QtGemmShape *s = &shapes[si];
        int64_t lda = s->K + s->pa, ldb = s->N + s->pb, ldc = s->N + s->pc;
        float *A = qt__k_randf(s->M * lda, &rng), *B = qt__k_randf(s->K * ldb, &rng), *bias = qt__k_randf(s->M, &rng);
        float *C0 = qt__k_randf(s->M * ldc, &rng), *C = qr_aligned_alloc((size_t)(s->M * ldc) * sizeof(float));
        if (s->K > 0) A[0] = NAN;   /* row 0 is NaN throughout */
        double *D = malloc((size_t)QR_MAX(1, s->M * s->N) * sizeof(double)), *S = malloc((size_t)QR_MAX(1, s->M * s->N) * sizeof(double));
        qt__k_gemm_f64(s->M, s->N, s->K, A, lda, B, ldb, D, S);
        for (int l = 0; l < nl; l++)
            for (int v = 0; v < 12; v++) {
                bool acc = v & 1, use_bias = (v >> 1) & 1;
                QrF32Epilogue ep = { use_bias ? bias : NULL, clamps[v / 4][0], clamps[v / 4][1] };
                memcpy(C, C0, (size_t)(s->M * ldc) * sizeof(float));
                lv[l].f32_gemm_ex(s->M, s->N, s->K, A, lda, B, ldb, C, ldc, acc, &ep);
                for (int64_t i = 0; i < s->M; i++)
                    for (int64_t j = 0; j < s->N; j++) {
                        float got = C[i * ldc + j], c0 = C0[i * ldc + j];
                        double want = D[i * s->N + j] + (acc ? c0 : 0.0) + (use_bias ? bias[i] : 0.0);
                        if (want == want) want = want < ep.lo ? ep.lo : want > ep.hi ? ep.hi : want;
                        double bound = QR_KERN_F32_DOT_TOL(s->K) * (S[i * s->N + j] + fabs(c0) + fabs(bias[i])) + 1e-30;
                        QT_CHECKF((want != want && got != got) || fabs(got - want) <= bound,
                                  "%s M=%lld N=%lld K=%lld variant %d: C[%lld][%lld]=%.9g want %.9g", qr_isa_name(lv[l].isa),
                                  (long long)s->M, (long long)s->N, (long long)s->K, v, (long long)i, (long long)j, got, want);
                    }
            }
        qr_aligned_free(A);
        qr_aligned_free(B);
        qr_aligned_free(bias);
        qr_aligned_free(C0);
        qr_aligned_free(C);
        free(D);
        free(S);
    }
}

/* f32_gemm_bt_fused (B given as its transpose) gives, at every level, the bits of the same
 * level's f32_gemm_fused on the transposed copy: plain, in ORT's adapted K blocks (conv_n), with
 * a bias, clamp and ReLU; accumulate or not; tails in M, N and K, padded row strides, one
 * column (N = 1) and one K block (the sweep order). */
static void test_f32_gemm_bt(void) {
    static const QtGemmShape shapes[] = {
        { 1, 1, 1, 0, 0, 0 },     { 7, 17, 3, 1, 2, 3 },   { 13, 33, 257, 0, 5, 1 },  { 197, 96, 768, 0, 0, 0 },
        { 130, 70, 300, 2, 1, 0 }, { 50, 1, 33, 0, 2, 0 }, { 40, 197, 64, 0, 3, 0 },  { 64, 49, 576, 0, 0, 0 },
        { 9, 9, 0, 0, 0, 0 },     { 33, 300, 20, 1, 0, 0 },
    };
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 44;
    for (int si = 0; si < QR_ARRAY_LEN(shapes); si++) {
        const QtGemmShape *s = &shapes[si];
        /* Bt (N, K) with row stride ldt; B (K, N) its transpose, row stride ldb */
        int64_t lda = s->K + s->pa, ldt = s->K + s->pb, ldb = s->N + s->pb, ldc = s->N + s->pc;
        float *A = qt__k_randf(s->M * lda, &rng), *Bt = qt__k_randf(s->N * ldt, &rng), *bias = qt__k_randf(s->M, &rng);
        float *B = qt__k_randf(s->K * ldb, &rng), *C0 = qt__k_randf(s->M * ldc, &rng);
        float *C = qr_aligned_alloc((size_t)(s->M * ldc) * sizeof(float)), *W = qr_aligned_alloc((size_t)(s->M * ldc) * sizeof(float));
        for (int64_t k = 0; k < s->K; k++)
            for (int64_t n = 0; n < s->N; n++) B[k * ldb + n] = Bt[n * ldt + k];
        for (int l = 0; l < nl; l++)
            for (int v = 0; v < 6; v++) {
                const bool acc = v & 1;
                QrF32Fused fu = { .ep = { NULL, -INFINITY, INFINITY } };
                if (v / 2 == 1) fu.conv_n = s->N;
                if (v / 2 == 2) fu = (QrF32Fused){ .ep = { bias, -1.0f, 2.0f }, .relu = true };
                const QrF32Fused *f = v / 2 ? &fu : NULL;
                memcpy(C, C0, (size_t)(s->M * ldc) * sizeof(float));
                memcpy(W, C0, (size_t)(s->M * ldc) * sizeof(float));
                lv[l].f32_gemm_bt_fused(s->M, s->N, s->K, A, lda, Bt, ldt, C, ldc, acc, f);
                lv[l].f32_gemm_fused(s->M, s->N, s->K, A, lda, B, ldb, W, ldc, acc, f);
                QT_CHECKF(memcmp(C, W, (size_t)(s->M * ldc) * sizeof(float)) == 0,
                          "%s M=%lld N=%lld K=%lld variant %d: bits differ from the transposed copy's", qr_isa_name(lv[l].isa),
                          (long long)s->M, (long long)s->N, (long long)s->K, v);
            }
        qr_aligned_free(A);
        qr_aligned_free(Bt);
        qr_aligned_free(B);
        qr_aligned_free(bias);
        qr_aligned_free(C0);
        qr_aligned_free(C);
        qr_aligned_free(W);
    }
}

/* Every level gives the same bits with 1, 2 and 3 threads (large enough to be split). */
static void test_f32_gemm_threads(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 7;
    const int64_t M = 150, N = 333, K = 700;
    float *A = qt__k_randf(M * K, &rng), *B = qt__k_randf(K * N, &rng);
    float *C1 = qr_aligned_alloc((size_t)(M * N) * sizeof(float)), *C = qr_aligned_alloc((size_t)(M * N) * sizeof(float));
    for (int l = 0; l < nl; l++) {
        for (int threads = 1; threads <= 3; threads++) {
            QT_OK(qr_pool_init(threads));
            float *dst = threads == 1 ? C1 : C;
            lv[l].f32_gemm(M, N, K, A, K, B, N, dst, N, false);
            if (threads > 1)
                QT_CHECKF(memcmp(C, C1, (size_t)(M * N) * sizeof(float)) == 0, "%s: %d threads differ from 1",
                          qr_isa_name(lv[l].isa), threads);
        }
    }
    QT_OK(qr_pool_init(0));
    qr_aligned_free(A);
    qr_aligned_free(B);
    qr_aligned_free(C1);
    qr_aligned_free(C);
}

#if defined(__x86_64__)
/* The lines qr__k_f32_pf_step prefetched, as flags per cache line of [qt__k_pf_lo, +n lines). */
static uintptr_t qt__k_pf_lo;
static int64_t qt__k_pf_n, qt__k_pf_outside;
static unsigned char *qt__k_pf_seen;

static void qt__k_pf_record(const void *line) {
    const uintptr_t x = (uintptr_t)line;
    if (x < qt__k_pf_lo || (int64_t)((x - qt__k_pf_lo) / 64) >= qt__k_pf_n) qt__k_pf_outside++;
    else qt__k_pf_seen[(x - qt__k_pf_lo) / 64] = 1;
}

/* The next-panel prefetch of the float driver (kern/gemm.c) on every x86 SIMD level, one
 * thread (one task): every cache line of B's elements is prefetched before its panel is packed,
 * except the first panel's (K rows < 256, columns < 32 at most), and no line holds none of them;
 * for a Linear layer's float B (padded rows, 3 K blocks, a narrow last panel) and for a
 * quantized B (one byte per element). The bits are test_f32_gemm's and test_f32_gemm_qb's. */
static void test_f32_gemm_prefetch(void) {
    QrKernels lv[8];
    const int nl = qt__k_levels(lv, 8), saved = qr_pool_threads();
    const int64_t M = 70, N = 200, K = 600, ldb = 205;
    uint64_t rng = 99;
    float *A = qt__k_randf(M * K, &rng), *B = qt__k_randf(K * ldb, &rng), *C = qt__k_randf(M * N, &rng);
    unsigned char *q = qr_aligned_alloc((size_t)(K * N));
    for (int64_t i = 0; i < K * N; i++) q[i] = (unsigned char)qr_rng_next(&rng);
    float sc = 0.01f;
    const QrF32QuantB qb = { q, false, &sc, 0, NULL, 0 };
    QrF32Fused fq = { .ep = { NULL, -INFINITY, INFINITY }, .qb = &qb };
    qr_pool_init(1);
    for (int l = 0; l < nl; l++) {
        if (lv[l].isa == QR_ISA_REF) continue;
        for (int quant = 0; quant < 2; quant++) {
            const unsigned char *base = quant ? q : (const unsigned char *)B;
            const int64_t el = quant ? 1 : 4, ld = quant ? N : ldb;
            qt__k_pf_lo = (uintptr_t)base & ~(uintptr_t)63;
            qt__k_pf_n = (int64_t)(((uintptr_t)base + (uintptr_t)(K * ld * el) - qt__k_pf_lo + 63) / 64);
            qt__k_pf_seen = calloc((size_t)qt__k_pf_n, 1);
            qt__k_pf_outside = 0;
            qr__k_pf_hook = qt__k_pf_record;
            if (quant) lv[l].f32_gemm_fused(M, N, K, A, K, NULL, N, C, N, false, &fq);
            else lv[l].f32_gemm(M, N, K, A, K, B, ldb, C, N, false);
            qr__k_pf_hook = NULL;
            int64_t missed = 0, stray = 0;
            unsigned char *used = calloc((size_t)qt__k_pf_n, 1);
            for (int64_t k = 0; k < K; k++)
                for (int64_t n = 0; n < N; n++) {
                    const int64_t li = (int64_t)(((uintptr_t)(base + (k * ld + n) * el) - qt__k_pf_lo) / 64);
                    used[li] = 1;
                    if (!qt__k_pf_seen[li] && (k >= 256 || n >= 32)) missed++;
                }
            for (int64_t i = 0; i < qt__k_pf_n; i++) stray += qt__k_pf_seen[i] && !used[i];
            QT_CHECKF(missed == 0 && stray == 0 && qt__k_pf_outside == 0,
                      "%s %s B: %lld lines not prefetched, %lld prefetched holding no element of B, %lld outside",
                      qr_isa_name(lv[l].isa), quant ? "quantized" : "float", (long long)missed, (long long)stray,
                      (long long)qt__k_pf_outside);
            free(used);
            free(qt__k_pf_seen);
        }
    }
    qr_pool_init(saved);
    qr_aligned_free(A);
    qr_aligned_free(B);
    qr_aligned_free(C);
    qr_aligned_free(q);
}
#endif

/* ==== integer GEMMs ================================================================ */

/* Random 8-/16-bit matrix of rows x ld elements: mostly uniform, some extremes. */
static void *qt__k_randq(int64_t n, int bytes, bool sgn, uint64_t *rng) {
    void *p = qr_aligned_alloc((size_t)QR_MAX(n, 1) * (size_t)bytes);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = qr_rng_next(rng);
        int64_t lo = sgn ? -(1 << (8 * bytes - 1)) : 0, hi = sgn ? (1 << (8 * bytes - 1)) - 1 : (1 << (8 * bytes)) - 1;
        int64_t v = (r & 7) == 0 ? lo : (r & 7) == 1 ? hi : lo + (int64_t)((r >> 8) % (uint64_t)(hi - lo + 1));
        if (bytes == 1) ((uint8_t *)p)[i] = (uint8_t)v;
        else ((uint16_t *)p)[i] = (uint16_t)v;
    }
    return p;
}

typedef struct { int64_t M, N, K, pa, pb, pc; } QtQShape;
static const QtQShape qt__k_qshapes[] = {
    { 1, 1, 1, 0, 0, 0 },    { 5, 7, 3, 1, 2, 3 },     { 6, 16, 4, 0, 0, 0 },   { 8, 32, 1024, 0, 0, 0 },
    { 13, 33, 1031, 3, 1, 2 }, { 64, 49, 577, 0, 0, 0 }, { 9, 100, 2049, 0, 5, 0 }, { 70, 3, 17, 0, 0, 1 },
    { 130, 65, 300, 2, 0, 0 }, { 11, 31, 0, 0, 0, 0 },
};

/* Zero points for an operand: none, one, or one per row/column, in the operand's range. */
static const int32_t *qt__k_zps(int kind, int64_t n, int bytes, bool sgn, int32_t *buf, uint64_t *rng, int64_t *stride) {
    int32_t lo = sgn ? -(1 << (8 * bytes - 1)) : 0, hi = sgn ? (1 << (8 * bytes - 1)) - 1 : (1 << (8 * bytes)) - 1;
    *stride = kind == 2 ? 1 : 0;
    if (kind == 0) return NULL;
    for (int64_t i = 0; i < (kind == 2 ? n : 1); i++) {
        uint64_t r = qr_rng_next(rng);
        buf[i] = (r & 3) == 0 ? lo : (r & 3) == 1 ? hi : lo + (int32_t)((r >> 8) % (uint64_t)(hi - lo + 1));
    }
    return buf;
}

/* 8-bit and 16-bit GEMMs of every level bit-exact with __ref over shapes, signedness,
 * zero-point layouts and accumulate. */
static void test_q_gemm(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    printf("kern: levels tested:");
    for (int l = 0; l < nl; l++) printf(" %s", qr_isa_name(lv[l].isa));
    printf("\n");
    uint64_t rng = 99;
    int32_t *za = malloc(256 * sizeof(int32_t)), *zb = malloc(256 * sizeof(int32_t));
    for (int bytes = 1; bytes <= 2; bytes++)
        for (int si = 0; si < QR_ARRAY_LEN(qt__k_qshapes); si++)
            for (int sg = 0; sg < 4; sg++) {
                const QtQShape *s = &qt__k_qshapes[si];
                if (bytes == 2 && s->K > 600) continue;   /* keeps the int64 ref fast */
                bool as = sg & 1, bs = sg >> 1;
                int64_t lda = s->K + s->pa, ldb = s->N + s->pb, ldc = s->N + s->pc;
                void *A = qt__k_randq(s->M * lda, bytes, as, &rng), *B = qt__k_randq(s->K * ldb, bytes, bs, &rng);
                QrQOperand qa = { A, lda, as, NULL, 0, NULL }, qb = { B, ldb, bs, NULL, 0, NULL };
                int zk = (si + sg) % 3;
                qa.zp = qt__k_zps(zk, s->M, bytes, as, za, &rng, &qa.zp_stride);
                qb.zp = qt__k_zps((zk + 1) % 3, s->N, bytes, bs, zb, &rng, &qb.zp_stride);
                size_t cb = (size_t)QR_MAX(1, s->M * ldc) * 8;
                unsigned char *C0 = qr_aligned_alloc(cb), *Cr = qr_aligned_alloc(cb), *C = qr_aligned_alloc(cb);
                for (size_t i = 0; i < cb; i++) C0[i] = (unsigned char)qr_rng_next(&rng);
                for (int acc = 0; acc < 2; acc++) {
                    memcpy(Cr, C0, cb);
                    if (bytes == 1) qr_q8_gemm__ref(s->M, s->N, s->K, &qa, &qb, (int32_t *)Cr, ldc, acc);
                    else qr_q16_gemm__ref(s->M, s->N, s->K, &qa, &qb, (int64_t *)Cr, ldc, acc);
                    for (int l = 1; l < nl; l++) {
                        memcpy(C, C0, cb);
                        if (bytes == 1) lv[l].q8_gemm(s->M, s->N, s->K, &qa, &qb, (int32_t *)C, ldc, acc);
                        else lv[l].q16_gemm(s->M, s->N, s->K, &qa, &qb, (int64_t *)C, ldc, acc);
                        QT_CHECKF(memcmp(C, Cr, cb) == 0, "%s q%d M=%lld N=%lld K=%lld signed a=%d b=%d zp=%d acc=%d",
                                  qr_isa_name(lv[l].isa), 8 * bytes, (long long)s->M, (long long)s->N, (long long)s->K,
                                  as, bs, zk, acc);
                    }
                }
                qr_aligned_free(A);
                qr_aligned_free(B);
                qr_aligned_free(C0);
                qr_aligned_free(Cr);
                qr_aligned_free(C);
            }
    free(za);
    free(zb);
}

/* The ref kernels against independent arithmetic: the 8-bit sum wraps modulo 2^32 (K
 * large enough to pass 2^31), the 16-bit one is exact at the extremes. */
static void test_q_gemm_ref(void) {
    enum { K = 70001 };
    uint8_t *a = malloc(K);
    int8_t *b = malloc(K);
    for (int k = 0; k < K; k++) { a[k] = 255; b[k] = -128; }
    int32_t za = 0, zb = 127;   /* (255 - 0) * (-128 - 127) = -65025 per term */
    QrQOperand qa = { a, K, false, &za, 0, NULL }, qb = { b, 1, true, &zb, 0, NULL };
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    for (int l = 0; l < nl; l++) {
        int32_t c = 7;
        lv[l].q8_gemm(1, 1, K, &qa, &qb, &c, 1, false);
        int64_t exact = (int64_t)K * -65025;
        QT_CHECKF(c == (int32_t)(uint32_t)(uint64_t)exact, "%s: %d vs %lld mod 2^32", qr_isa_name(lv[l].isa), c,
                  (long long)exact);
    }
    free(a);
    free(b);
    /* 16-bit: -32768 * -32768 summed 1000 times with zero points at the far end */
    int16_t a16[1000], b16[1000];
    for (int k = 0; k < 1000; k++) { a16[k] = -32768; b16[k] = -32768; }
    int32_t za16 = 32767, zb16 = 32767;
    QrQOperand ra = { a16, 1000, true, &za16, 0, NULL }, rb = { b16, 1, true, &zb16, 0, NULL };
    for (int l = 0; l < nl; l++) {
        int64_t c = 0;
        lv[l].q16_gemm(1, 1, 1000, &ra, &rb, &c, 1, false);
        QT_CHECKF(c == 1000LL * 65535 * 65535, "%s: %lld", qr_isa_name(lv[l].isa), (long long)c);
    }
}

static void test_q_gemm_threads(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 5;
    const int64_t M = 150, N = 333, K = 700;
    for (int bytes = 1; bytes <= 2; bytes++) {
        void *A = qt__k_randq(M * K, bytes, false, &rng), *B = qt__k_randq(K * N, bytes, true, &rng);
        int32_t za = 17, zb = -3;
        QrQOperand qa = { A, K, false, &za, 0, NULL }, qb = { B, N, true, &zb, 0, NULL };
        size_t cb = (size_t)(M * N) * 8;
        unsigned char *C1 = qr_aligned_alloc(cb), *C = qr_aligned_alloc(cb);
        memset(C1, 0, cb);
        memset(C, 0, cb);
        float mult[1] = { 3e-5f };
        for (int l = 1; l < nl; l++)
            for (int threads = 1; threads <= 3; threads++) {
                QT_OK(qr_pool_init(threads));
                unsigned char *dst = threads == 1 ? C1 : C;
                if (bytes == 1) lv[l].q8_gemm(M, N, K, &qa, &qb, (int32_t *)dst, N, false);
                else lv[l].q16_gemm(M, N, K, &qa, &qb, (int64_t *)dst, N, false);
                if (bytes == 1) {   /* the fused requantization, into the bytes after the int32 result */
                    QrQ8Requant rq = { NULL, 0, 0, mult, 0, 0, 7, 0, 255, dst + (size_t)(M * N) * 4, N, 1 };
                    lv[l].q8_gemm_rq(M, N, K, &qa, &qb, NULL, &rq);
                }
                if (threads > 1)
                    QT_CHECKF(memcmp(C, C1, cb) == 0, "%s q%d: %d threads differ", qr_isa_name(lv[l].isa), 8 * bytes, threads);
            }
        qr_aligned_free(A);
        qr_aligned_free(B);
        qr_aligned_free(C1);
        qr_aligned_free(C);
    }
    QT_OK(qr_pool_init(0));
}

/* Requantization: every level bit-exact with __ref, and __ref equal to ops/qdq.c's
 * qr_quant_requantize (an independent formulation) for 8-bit outputs. */
static void test_requant(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 3;
    enum { N = 203 };
    int32_t acc[N], bias[N];
    float mult[N];
    uint16_t yr[N], y[N];
    static const int32_t ranges[4][2] = { { 0, 255 }, { -128, 127 }, { 0, 65535 }, { -32768, 32767 } };
    for (int it = 0; it < 40; it++) {
        for (int i = 0; i < N; i++) {
            uint64_t r = qr_rng_next(&rng);
            acc[i] = (r & 15) == 0 ? INT32_MIN : (r & 15) == 1 ? INT32_MAX : (int32_t)((int64_t)(r >> 16) % 200001 - 100000);
            bias[i] = (int32_t)((r >> 40) % 2001) - 1000;
            mult[i] = (float)((double)((r >> 20) % 100000) * 1e-7);
            if ((r & 63) == 5) mult[i] = NAN;
            if ((r & 63) == 6) mult[i] = INFINITY;
        }
        int rk = it % 4, bytes = rk < 2 ? 1 : 2;
        int32_t lo = ranges[rk][0], hi = ranges[rk][1];
        int32_t zp = it % 3 == 0 ? lo : it % 3 == 1 ? hi : (lo + hi) / 2;
        int64_t bst = it & 1, mst = (it >> 1) & 1;
        int n = N - it % 5;
        qr_s32_requant__ref(n, acc, it % 7 ? bias : NULL, bst, mult, mst, zp, lo, hi, yr, bytes);
        if (bytes == 1)
            for (int i = 0; i < n; i++) {
                int32_t a = (int32_t)((uint32_t)acc[i] + (uint32_t)(it % 7 ? bias[i * bst] : 0));
                int32_t want = qr_quant_requantize(a, mult[i * mst], zp, (QrQuantRange){ lo, hi });
                QT_CHECKF((uint8_t)want == ((uint8_t *)yr)[i], "ref %d: %d vs %d", i, ((uint8_t *)yr)[i], want);
            }
        for (int l = 1; l < nl; l++) {
            memset(y, 0, sizeof y);
            lv[l].s32_requant(n, acc, it % 7 ? bias : NULL, bst, mult, mst, zp, lo, hi, y, bytes);
            QT_CHECKF(memcmp(y, yr, (size_t)n * (size_t)bytes) == 0, "%s requant it=%d", qr_isa_name(lv[l].isa), it);
        }
    }
}

/* ==== depthwise convolution, max pooling ======================================== */

typedef struct { int64_t H, W, KH, KW, sh, sw, dh, dw, ph, pw, pe_h, pe_w; } QtWin;
static const QtWin qt__k_wins[] = {
    { 112, 112, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 }, { 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 }, { 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
    { 14, 14, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1 },   { 9, 45, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2 },   { 13, 70, 3, 3, 1, 2, 2, 2, 2, 2, 2, 2 },
    { 5, 33, 3, 7, 3, 3, 1, 1, 0, 3, 0, 3 },    { 4, 4, 3, 3, 1, 1, 1, 1, 3, 3, 3, 3 },    { 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },
    { 30, 67, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0 },   { 8, 40, 1, 9, 1, 1, 1, 3, 0, 12, 0, 12 }, { 10, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2 },
    { 11, 11, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1 },   { 28, 28, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2 },  { 3, 30, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0 },
    /* the direct depthwise kernels' edges: one row, 16/17/31/33 columns, pads wider than
     * the input, asymmetric pads, several column blocks with a partial last one */
    { 1, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },    { 5, 33, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0 },  { 6, 31, 3, 3, 2, 2, 1, 1, 2, 2, 1, 0 },
    { 9, 64, 5, 5, 2, 2, 1, 1, 0, 4, 3, 1 },    { 3, 2, 5, 5, 1, 1, 1, 1, 4, 4, 4, 4 },   { 18, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
    { 13, 35, 3, 3, 2, 2, 1, 1, 1, 0, 1, 2 },   { 5, 31, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },  { 4, 63, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
    /* the 3x3 stride-1 form with one column of left padding (next block's columns carried,
     * kw = 2 by valignd): no right padding with 17 / 33 / 48 columns (the last output reads
     * the next block's first column), two padding rows on top, a partial block of one */
    { 7, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0 },    { 9, 33, 3, 3, 1, 1, 1, 1, 2, 1, 0, 0 },  { 6, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0 },
    { 5, 49, 3, 3, 1, 1, 1, 1, 0, 1, 2, 1 },
    /* small planes: the AVX-512 flat form (3x3, stride 1, OW == W <= 12, OH*OW <= 256: 16
     * consecutive outputs of the plane per vector) — 4x4, 5x9, 9x5, one row, one element,
     * 21x12 (16 vectors, a partial last), 16x12 (12, none partial), pads only at the end,
     * two rows / columns of pad at the start, more pad rows than rows; next to them the 14x14
     * and 16x16 planes the row form keeps */
    { 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },     { 5, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },   { 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
    { 1, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },    { 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },   { 21, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
    { 16, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },   { 6, 11, 3, 3, 1, 1, 1, 1, 0, 0, 2, 2 },  { 7, 10, 3, 3, 1, 1, 1, 1, 2, 2, 0, 0 },
    { 3, 2, 3, 3, 1, 1, 1, 1, 2, 1, 1, 1 },     { 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 }, { 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
    /* stride 2 on planes at most 7 outputs wide (two output rows per vector): 14x14 -> 7x7,
     * an odd last row pair, three pad columns, 15 columns unpadded, one input row, one column */
    { 14, 14, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },   { 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },   { 5, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
    { 9, 13, 3, 3, 2, 2, 1, 1, 2, 3, 0, 0 },    { 5, 15, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0 },  { 1, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
    { 2, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
    /* one or two column blocks (the 3x3 stride-1 row walk, qr__k_m1d512_3x3_s1r; stride 2
     * next to it): 13 outputs with two pad rows on top and none at the bottom, 28x28 -> 14x14,
     * 12 outputs from one column of left pad only, 17 columns without right pad (16 outputs
     * reading the next block's first column), one output row, 28x28, 29 columns with two pad
     * rows at the bottom */
    { 5, 13, 3, 3, 1, 1, 1, 1, 2, 1, 0, 1 },    { 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 }, { 11, 25, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0 },
    { 4, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0 },    { 3, 15, 3, 3, 2, 2, 1, 1, 0, 1, 0, 1 }, { 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
    { 6, 29, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1 },
    /* max pooling read straight from the rows (kern/avx512/f32_pool.c): ResNet-18's 3x3/2 with
     * ceil mode's extra end pad, stride 2 with dilation 2 and 3 over 16-output blocks and their
     * partial last one, stride 1 with dilation 3, a 2x2/2 window without pads */
    { 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 2, 2 }, { 9, 75, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1 }, { 7, 100, 2, 4, 1, 2, 1, 3, 0, 2, 1, 3 },
    { 6, 61, 3, 3, 1, 1, 3, 3, 2, 2, 2, 2 },    { 8, 66, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
};

/* out size of a window along one dim */
static int64_t qt__k_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
    return (in + pb + pe - (k - 1) * d - 1) / s + 1;
}

/* One output of a one-filter convolution (QrF32ConvM1Fn) written out from its definition:
 * the K products in tap order (0 input in the padding), each rounded, then summed in
 * ONNX Runtime's M=1 groups — fours, then a pair, then a single — from +0, then the bias. */
static float qt__k_m1_one(const float *x, int64_t C, int64_t H, int64_t W, const float *w, const QtWin *q,
                          int64_t oh, int64_t ow, float bias) {
    const int64_t K = C * q->KH * q->KW;
    float p[3 * 9 * 9];
    int64_t k = 0;
    for (int64_t c = 0; c < C; c++)
        for (int64_t kh = 0; kh < q->KH; kh++)
            for (int64_t kw = 0; kw < q->KW; kw++, k++) {
                int64_t ih = oh * q->sh - q->ph + kh * q->dh, iw = ow * q->sw - q->pw + kw * q->dw;
                volatile float prod = w[k] * (ih >= 0 && ih < H && iw >= 0 && iw < W ? x[(c * H + ih) * W + iw] : 0.0f);
                p[k] = prod;
            }
    float acc = 0.0f;
    int64_t i = 0;
    for (; i + 4 <= K; i += 4) acc = (((p[i] + p[i + 1]) + p[i + 2]) + p[i + 3]) + acc;
    if (i + 2 <= K) {
        acc = (p[i] + p[i + 1]) + acc;
        i += 2;
    }
    if (i < K) acc = p[i] + acc;
    return acc + bias;
}

/* QrF32ConvM1Fn: every level (ref included) has exactly the bits of the definition above,
 * for every window, 1 and 3 input channels (K % 4 takes every value), an infinite weight
 * (NaN where it meets the padding, as in ORT's zero-filled im2col), NaN and infinite
 * inputs with an infinite weight inside the window and a -0 bias (the sums with ORT's
 * + 0, fused activations included), and no write past y. */
static void test_conv_m1(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 11;
    int cases = 0, nan_seen = 0, act_cases = 0;
    for (int wi = 0; wi < QR_ARRAY_LEN(qt__k_wins); wi++)
        for (int64_t C = 1; C <= 3; C += 2)
            for (int inf = 0; inf <= 2; inf++) {
                const QtWin *q = &qt__k_wins[wi];
                int64_t OH = qt__k_out(q->H, q->KH, q->sh, q->dh, q->ph, q->pe_h), OW = qt__k_out(q->W, q->KW, q->sw, q->dw, q->pw, q->pe_w);
                int64_t K = C * q->KH * q->KW;
                float *x = qt__k_randf(C * q->H * q->W, &rng), *w = qt__k_randf(K, &rng);
                float *want = qr_aligned_alloc((size_t)(OH * OW) * sizeof(float));
                float *y = qr_aligned_alloc((size_t)(OH * OW + 16) * sizeof(float));
                if (inf == 1) w[0] = INFINITY;
                if (inf == 2) {   /* NaN, +-Inf inputs (every 7th, 11th, 13th element), w[4] = -Inf */
                    for (int64_t i = 0; i < C * q->H * q->W; i++)
                        x[i] = i % 7 == 3 ? NAN : i % 11 == 5 ? INFINITY : i % 13 == 6 ? -INFINITY : x[i];
                    w[QR_MIN(4, K - 1)] = -INFINITY;
                }
                const float bias = inf == 1 ? 0.0f : inf == 2 ? -0.0f : 0.25f * (float)wi - 1.0f;
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
                        want[oh * OW + ow] = qt__k_m1_one(x, C, q->H, q->W, w, q, oh, ow, bias);
                        nan_seen += want[oh * OW + ow] != want[oh * OW + ow];
                    }
                QrF32ConvB b = { x, C, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, OH, OW };
                for (int l = 0; l < nl; l++) {
                    for (int64_t i = 0; i < OH * OW + 16; i++) y[i] = -7.0f;
                    qr_kern_release();   /* scratch of exactly the size asked for: over-reads show under ASan */
                    lv[l].f32_conv_m1(&b, w, bias, y);
                    int64_t bad = -1;
                    for (int64_t i = 0; i < OH * OW && bad < 0; i++)
                        if (memcmp(&y[i], &want[i], 4) && !(y[i] != y[i] && want[i] != want[i])) bad = i;
                    QT_CHECKF(bad < 0, "%s window %d C=%lld inf=%d: y[%lld] = %.9g want %.9g", qr_isa_name(lv[l].isa), wi,
                              (long long)C, inf, (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                    for (int64_t i = OH * OW; i < OH * OW + 16; i++) QT_CHECK(y[i] == -7.0f);
                    cases++;
                    /* the fused activation form: a Clip, a ReLU, both, as the steps give them */
                    for (int a = 0; a < 3 && lv[l].f32_conv_m1_act; a++) {
                        QrF32Step act[2] = { { .op = QR_F32_STEP_CLAMP, .lo = -0.5f, .hi = 0.75f }, { .op = QR_F32_STEP_RELU } };
                        const QrF32Step *as = a == 1 ? act + 1 : act;
                        const int na = a == 2 ? 2 : 1;
                        for (int64_t i = 0; i < OH * OW + 16; i++) y[i] = -7.0f;
                        const int used = lv[l].f32_conv_m1_act(&b, 1, 0, w, 0, &bias, y, 0, as, na);
                        if (used < 0) {
                            for (int64_t i = 0; i < OH * OW + 16; i++) QT_CHECK(y[i] == -7.0f);
                            continue;
                        }
                        QT_CHECKF(used == na, "%s act %d: %d of %d steps fused", qr_isa_name(lv[l].isa), a, used, na);
                        float *wa = qr_aligned_alloc((size_t)(OH * OW) * sizeof(float));
                        qr_f32_steps__ref(as, na, want, wa, OH * OW, 0, 0);
                        bad = -1;
                        for (int64_t i = 0; i < OH * OW && bad < 0; i++)
                            if (memcmp(&y[i], &wa[i], 4) && !(y[i] != y[i] && wa[i] != wa[i])) bad = i;
                        QT_CHECKF(bad < 0, "%s act %d window %d C=%lld inf=%d: y[%lld] = %.9g want %.9g", qr_isa_name(lv[l].isa),
                                  a, wi, (long long)C, inf, (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : wa[bad]);
                        for (int64_t i = OH * OW; i < OH * OW + 16; i++) QT_CHECK(y[i] == -7.0f);
                        qr_aligned_free(wa);
                        act_cases++;
                    }
                }
                qr_aligned_free(x);
                qr_aligned_free(w);
                qr_aligned_free(want);
                qr_aligned_free(y);
            }
    /* The +0 the sums start from: a zero image, negative weights (every product -0) and a -0
     * bias give +0 only through it (the kernels drop it for any other bias) */
    int zero_cases = 0;
    for (int wi = 0; wi < QR_ARRAY_LEN(qt__k_wins); wi++) {
        const QtWin *q = &qt__k_wins[wi];
        const int64_t OH = qt__k_out(q->H, q->KH, q->sh, q->dh, q->ph, q->pe_h), OW = qt__k_out(q->W, q->KW, q->sw, q->dw, q->pw, q->pe_w);
        float *x = qr_aligned_alloc((size_t)(q->H * q->W) * sizeof(float)), *w = qr_aligned_alloc((size_t)(q->KH * q->KW) * sizeof(float));
        float *y = qr_aligned_alloc((size_t)(OH * OW + 16) * sizeof(float));
        for (int64_t i = 0; i < q->H * q->W; i++) x[i] = 0.0f;
        for (int64_t i = 0; i < q->KH * q->KW; i++) w[i] = -1.0f - (float)i;
        QrF32ConvB b = { x, 1, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, OH, OW };
        for (int neg = 0; neg <= 1; neg++) {
            const float bias = neg ? -0.0f : 0.0f;
            const float want = qt__k_m1_one(x, 1, q->H, q->W, w, q, 0, 0, bias);
            QT_CHECK(want == 0.0f && !signbit(want));
            for (int l = 0; l < nl; l++) {
                for (int64_t i = 0; i < OH * OW; i++) y[i] = -7.0f;
                lv[l].f32_conv_m1(&b, w, bias, y);
                int64_t bad = -1;
                for (int64_t i = 0; i < OH * OW && bad < 0; i++)
                    if (memcmp(&y[i], &want, 4)) bad = i;
                QT_CHECKF(bad < 0, "%s window %d bias %s0: y[%lld] = %g (sign %d)", qr_isa_name(lv[l].isa), wi, neg ? "-" : "+",
                          (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0 : signbit(y[bad]) != 0);
                zero_cases++;
            }
        }
        qr_aligned_free(x);
        qr_aligned_free(w);
        qr_aligned_free(y);
    }
    QT_CHECK(zero_cases == QR_ARRAY_LEN(qt__k_wins) * 2 * nl);
    QT_CHECKF(nan_seen > 0, "no NaN from an infinite weight in the padding");
    QT_CHECK(cases == QR_ARRAY_LEN(qt__k_wins) * 2 * 3 * nl);
    bool any_act = false;   /* a level with the fused form runs it on the 3x3 windows */
    for (int l = 0; l < nl; l++) any_act = any_act || lv[l].f32_conv_m1_act;
    QT_CHECK(!any_act || act_cases > 0);
    printf("conv_m1: %d level x window cases exact, %d with a fused activation\n", cases, act_cases);
}

/* QrF32ConvM1ActFn over several planes in one call: plane p at x + p*xs (a gap between the
 * planes), weights w + p*ws, bias[p], output y + p*ys, each with the bits of the one-plane
 * definition above (then the fused Clip / ReLU) — biases +0.5, -0, -0, 1, +0 and a zero
 * image with negative weights in planes 1 and 4, where only the -0 bias keeps ORT's + 0
 * visible (the kernels split the call into runs by it) — and nothing written between the
 * planes' outputs or past them; a window without a direct form writes nothing and says -1. */
static void test_conv_m1_planes(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 23;
    static const QtWin wins[] = {
        { 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },     { 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 }, { 37, 45, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },
        { 14, 14, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 },   { 9, 45, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2 },  { 20, 33, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0 },
        { 8, 40, 1, 9, 1, 1, 1, 3, 0, 12, 0, 12 },
    };
    enum { NP = 5 };
    const float biases[NP] = { 0.5f, -0.0f, -0.0f, 1.0f, 0.0f };
    int checked = 0, whole = 0;
    for (int wi = 0; wi < QR_ARRAY_LEN(wins); wi++) {
        const QtWin *q = &wins[wi];
        const int64_t OH = qt__k_out(q->H, q->KH, q->sh, q->dh, q->ph, q->pe_h), OW = qt__k_out(q->W, q->KW, q->sw, q->dw, q->pw, q->pe_w);
        const int64_t K = q->KH * q->KW, xs = q->H * q->W + 5, ws = K + 3, ys = OH * OW + 7;
        float *x = qt__k_randf(NP * xs, &rng), *w = qt__k_randf(NP * ws, &rng);
        for (int p = 1; p < NP; p += 3) {   /* planes 1 and 4: a zero image, negative weights */
            for (int64_t i = 0; i < q->H * q->W; i++) x[p * xs + i] = 0.0f;
            for (int64_t k = 0; k < K; k++) w[p * ws + k] = -1.0f - (float)k;
        }
        float *want = qr_aligned_alloc((size_t)(NP * ys) * sizeof(float)), *y = qr_aligned_alloc((size_t)(NP * ys) * sizeof(float));
        QrF32Step act[2] = { { .op = QR_F32_STEP_CLAMP, .lo = -0.5f, .hi = 0.75f }, { .op = QR_F32_STEP_RELU } };
        for (int a = 0; a < 2; a++) {   /* no step; Clip then ReLU */
            const int na = a ? 2 : 0;
            for (int64_t i = 0; i < NP * ys; i++) want[i] = -7.0f;
            for (int p = 0; p < NP; p++) {
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++)
                        want[p * ys + oh * OW + ow] = qt__k_m1_one(x + p * xs, 1, q->H, q->W, w + p * ws, q, oh, ow, biases[p]);
                if (na) qr_f32_steps__ref(act, na, want + p * ys, want + p * ys, OH * OW, 0, 0);
            }
            QrF32ConvB b = { x, 1, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, OH, OW };
            for (int l = 0; l < nl; l++) {
                if (!lv[l].f32_conv_m1_act) continue;
                for (int64_t i = 0; i < NP * ys; i++) y[i] = -7.0f;
                const int used = lv[l].f32_conv_m1_act(&b, NP, xs, w, ws, biases, y, ys, na ? act : NULL, na);
                if (used < 0) {
                    int64_t wrote = 0;
                    for (int64_t i = 0; i < NP * ys; i++) wrote += y[i] != -7.0f;
                    QT_CHECKF(wrote == 0, "%s window %d: -1 but %lld elements written", qr_isa_name(lv[l].isa), wi, (long long)wrote);
                    continue;
                }
                QT_CHECKF(used == na, "%s window %d: %d of %d steps fused", qr_isa_name(lv[l].isa), wi, used, na);
                int64_t bad = -1;
                for (int64_t i = 0; i < NP * ys && bad < 0; i++)
                    if (memcmp(&y[i], &want[i], 4)) bad = i;
                QT_CHECKF(bad < 0, "%s window %d act %d: plane %lld element %lld = %.9g want %.9g", qr_isa_name(lv[l].isa), wi, a,
                          (long long)(bad / ys), (long long)(bad % ys), bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                checked++;
                whole += lv[l].isa != QR_ISA_REF;
            }
        }
        qr_aligned_free(x);
        qr_aligned_free(w);
        qr_aligned_free(want);
        qr_aligned_free(y);
    }
    QT_CHECK(checked > 0);
    printf("conv_m1 planes: %d level x window x activation calls of %d planes exact (%d by a SIMD level)\n", checked, NP, whole);
}

/* Convolution as an implicit-im2col GEMM: every level (ref included) against a double
 * loop, for every window above, 1-5 input channels and several output-channel counts. */
static void test_conv_gemm(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 21;
    static const int64_t chans[][2] = { { 1, 1 }, { 3, 13 }, { 5, 40 } };
    for (int wi = 0; wi < QR_ARRAY_LEN(qt__k_wins); wi++)
        for (int ci = 0; ci < 3; ci++) {
            const QtWin *q = &qt__k_wins[wi];
            const int64_t C = chans[ci][0], M = chans[ci][1], KK = q->KH * q->KW, K = C * KK;
            QrF32ConvB b = { NULL, C, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw,
                             qt__k_out(q->H, q->KH, q->sh, q->dh, q->ph, q->pe_h), qt__k_out(q->W, q->KW, q->sw, q->dw, q->pw, q->pe_w) };
            const int64_t P = b.OH * b.OW, ldy = P + 3;
            float *x = qt__k_randf(C * q->H * q->W, &rng), *A = qt__k_randf(M * K, &rng), *bias = qt__k_randf(M, &rng);
            float *Y = qr_aligned_alloc((size_t)(M * ldy) * sizeof(float));
            b.x = x;
            QrF32Epilogue ep = { bias, 0.0f, INFINITY };
            for (int l = 0; l < nl; l++) {
                for (int64_t i = 0; i < M * ldy; i++) Y[i] = 7.0f;
                lv[l].f32_conv_gemm(M, A, K, &b, Y, ldy, ci == 1 ? &ep : NULL);
                for (int64_t m = 0; m < M; m++)
                    for (int64_t p = 0; p < ldy; p++) {
                        if (p >= P) { QT_CHECK(Y[m * ldy + p] == 7.0f); continue; }
                        int64_t oh = p / b.OW, ow = p % b.OW;
                        double s = 0, a = 0;
                        for (int64_t k = 0; k < K; k++) {
                            int64_t c = k / KK, kh = k % KK / q->KW, kw = k % q->KW;
                            int64_t ih = oh * q->sh - q->ph + kh * q->dh, iw = ow * q->sw - q->pw + kw * q->dw;
                            if (ih < 0 || ih >= q->H || iw < 0 || iw >= q->W) continue;
                            double t = (double)A[m * K + k] * x[(c * q->H + ih) * q->W + iw];
                            s += t;
                            a += fabs(t);
                        }
                        if (ci == 1) { s += bias[m]; a += fabs(bias[m]); s = s < 0 ? 0 : s; }
                        QT_CHECKF(fabs(Y[m * ldy + p] - s) <= QR_KERN_F32_DOT_TOL(K + 1) * a + 1e-30,
                                  "%s window %d C=%lld M=%lld: Y[%lld][%lld] = %.9g want %.9g", qr_isa_name(lv[l].isa), wi,
                                  (long long)C, (long long)M, (long long)m, (long long)p, Y[m * ldy + p], s);
                    }
            }
            qr_aligned_free(x);
            qr_aligned_free(A);
            qr_aligned_free(bias);
            qr_aligned_free(Y);
        }
}

/* Max pooling: the ref against a direct window scan (same tie rule on distinct values),
 * every level bit-exact with ref, NaN included. */
static void test_maxpool(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 12;
    for (int wi = 0; wi < QR_ARRAY_LEN(qt__k_wins); wi++) {
        const QtWin *q = &qt__k_wins[wi];
        int64_t OH = qt__k_out(q->H, q->KH, q->sh, q->dh, q->ph, q->pe_h), OW = qt__k_out(q->W, q->KW, q->sw, q->dw, q->pw, q->pe_w);
        float *x = qt__k_randf(q->H * q->W, &rng), *rb = qr_aligned_alloc((size_t)q->W * sizeof(float));
        float *yr = qr_aligned_alloc((size_t)(OH * OW) * sizeof(float)), *y = qr_aligned_alloc((size_t)(OH * OW) * sizeof(float));
        qr_f32_maxpool2d__ref(x, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, yr, OH, OW, rb);
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                float best = 0;
                bool any = false;
                for (int64_t kh = 0; kh < q->KH; kh++)
                    for (int64_t kw = 0; kw < q->KW; kw++) {
                        int64_t ih = oh * q->sh - q->ph + kh * q->dh, iw = ow * q->sw - q->pw + kw * q->dw;
                        if (ih < 0 || ih >= q->H || iw < 0 || iw >= q->W) continue;
                        float v = x[ih * q->W + iw];
                        if (!any || v > best) best = v;
                        any = true;
                    }
                QT_CHECKF(yr[oh * OW + ow] == best, "ref window %d (%lld,%lld): %g vs %g", wi, (long long)oh, (long long)ow,
                          yr[oh * OW + ow], best);
            }
        /* pass 0: NaN every 7th element; pass 1: only +0 and -0 (every window a tie, so the
         * order of the comparisons decides the sign of each output) */
        for (int pass = 0; pass < 2; pass++) {
            for (int64_t i = 0; i < q->H * q->W; i++)
                if (pass == 1) x[i] = (qr_rng_next(&rng) & 1) ? -0.0f : 0.0f;
                else if (i % 7 == 0) x[i] = NAN;
            qr_f32_maxpool2d__ref(x, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, yr, OH, OW, rb);
            for (int l = 1; l < nl; l++) {
                for (int64_t i = 0; i < OH * OW; i++) y[i] = 5.0f;
                lv[l].f32_maxpool2d(x, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, y, OH, OW, rb);
                QT_CHECKF(memcmp(y, yr, (size_t)(OH * OW) * sizeof(float)) == 0, "%s window %d pass %d",
                          qr_isa_name(lv[l].isa), wi, pass);
            }
        }
        qr_aligned_free(x);
        qr_aligned_free(rb);
        qr_aligned_free(yr);
        qr_aligned_free(y);
    }
}

/* ==== analysis kernels ============================================================ */

static bool qt__k_close(double got, double want, double scale) {
    return fabs(got - want) <= QR_KERN_STATS_RTOL * scale + 1e-300 || (got != got && want != want);
}

/* Pair statistics: the ref against plain double loops over the whole arrays; every level
 * within QR_KERN_STATS_RTOL of ref with the same counts and min/max. */
static void test_pair_stats(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 13;
    static const int64_t sizes[] = { 0, 1, 7, 8, 4096, 4099, 10000, 20480 };
    for (int si = 0; si < QR_ARRAY_LEN(sizes); si++)
        for (int special = 0; special < 2; special++) {
            int64_t n = sizes[si];
            float *x = qt__k_randf(n, &rng), *y = qt__k_randf(n, &rng);
            for (int64_t i = 0; i < n; i++) { x[i] = 3.0f + 2.0f * x[i]; y[i] = x[i] + 0.01f * y[i]; }
            if (special && n > 5000) { x[5000] = NAN; y[4100] = INFINITY; x[4200] = -INFINITY; y[n - 1] = NAN; }
            /* independent: whole-array two-pass in double */
            double sx = 0, sxx = 0, syy = 0, sxy = 0, sdd = 0, sad = 0, mad = 0, m2 = 0, mn = INFINITY, mx = -INFINITY;
            int64_t nx = 0, np = 0, nnan = 0;
            for (int64_t i = 0; i < n; i++) {
                if (x[i] != x[i]) nnan++;
                if (isfinite(x[i])) { nx++; sx += x[i]; mn = QR_MIN(mn, x[i]); mx = QR_MAX(mx, x[i]); }
                if (!isfinite(x[i]) || !isfinite(y[i])) continue;
                double a = x[i], b = y[i], d = a - b;
                np++; sxx += a * a; syy += b * b; sxy += a * b; sdd += d * d; sad += fabs(d); mad = QR_MAX(mad, fabs(d));
            }
            double mean = nx ? sx / (double)nx : 0;
            for (int64_t i = 0; i < n; i++) if (isfinite(x[i])) m2 += (x[i] - mean) * (x[i] - mean);
            QrF32PairStats r;
            qr_f32_pair_stats_init(&r);
            qr_f32_pair_stats__ref(x, y, n, &r);
            QT_CHECK(r.x.n == nx && r.n == np && r.x.n_nan == nnan);
            QT_CHECK(!nx || (r.x.min == mn && r.x.max == mx));
            QT_CHECK(qt__k_close(r.sxx, sxx, sxx) && qt__k_close(r.syy, syy, syy) && qt__k_close(r.sdd, sdd, sdd));
            QT_CHECK(qt__k_close(r.sxy, sxy, sqrt(sxx * syy)) && qt__k_close(r.sad, sad, sad) && r.maxad == mad);
            QT_CHECKF(!nx || (qt__k_close(r.x.mean, mean, fabs(mean)) && fabs(r.x.m2 - m2) <= 1e-9 * m2),
                      "n=%lld mean %.17g vs %.17g m2 %.17g vs %.17g", (long long)n, r.x.mean, mean, r.x.m2, m2);
            for (int l = 1; l < nl; l++) {
                QrF32PairStats s;
                qr_f32_pair_stats_init(&s);
                lv[l].f32_pair_stats(x, y, n, &s);
                const char *isa = qr_isa_name(lv[l].isa);
                QT_CHECKF(s.x.n == r.x.n && s.y.n == r.y.n && s.n == r.n && s.x.n_nan == r.x.n_nan &&
                              s.y.n_posinf == r.y.n_posinf && s.x.n_neginf == r.x.n_neginf,
                          "%s n=%lld counts", isa, (long long)n);
                QT_CHECKF(s.x.min == r.x.min && s.x.max == r.x.max && s.y.min == r.y.min && s.y.max == r.y.max &&
                              s.maxad == r.maxad, "%s n=%lld min/max", isa, (long long)n);
                QT_CHECKF(qt__k_close(s.sxx, r.sxx, r.sxx) && qt__k_close(s.syy, r.syy, r.syy) &&
                              qt__k_close(s.sxy, r.sxy, sqrt(r.sxx * r.syy)) && qt__k_close(s.sdd, r.sdd, r.sdd) &&
                              qt__k_close(s.sad, r.sad, r.sad),
                          "%s n=%lld sums", isa, (long long)n);
                double sc = r.x.m2 + (double)r.x.n * r.x.mean * r.x.mean;
                QT_CHECKF(qt__k_close(s.x.mean, r.x.mean, fabs(r.x.mean)) && qt__k_close(s.x.m2, r.x.m2, sc) &&
                              qt__k_close(s.y.m2, r.y.m2, r.y.m2 + (double)r.y.n * r.y.mean * r.y.mean),
                          "%s n=%lld moments %.17g %.17g", isa, (long long)n, s.x.m2, r.x.m2);
                QrF32PairStats xo;   /* y == NULL: only x */
                qr_f32_pair_stats_init(&xo);
                lv[l].f32_pair_stats(x, NULL, n, &xo);
                QT_CHECK(xo.x.n == r.x.n && xo.n == 0 && xo.y.n == 0 && qt__k_close(xo.x.m2, r.x.m2, sc));
            }
            qr_aligned_free(x);
            qr_aligned_free(y);
        }
}

/* The avx512 level's pair statistics are the avx2 level's bit for bit (its fused passes keep
 * every accumulator's sequence): pairs and single arrays, partial and short blocks, blocks with
 * NaN / +-Inf in x or only in y, offset (unaligned) starts, values of mixed scale. */
static void test_pair_stats_avx512(void) {
    QrKernels a2, a5;
    bool have = qr_kern_table(QR_ISA_AVX2, &a2) == QR_OK && qr_kern_table(QR_ISA_AVX512, &a5) == QR_OK;
    qr_err_clear();
    if (!have) QT_SKIP("the CPU has no AVX-512F/BW/VL (or no AVX2)");
    uint64_t rng = 29;
    static const int64_t sizes[] = { 1, 7, 8, 16, 4096, 4104, 4097, 3 * 4096 + 24, 10 * 4096 + 5 };
    const int64_t nmax = 10 * 4096 + 5 + 3;
    float *x = qt__k_randf(nmax, &rng), *y = qt__k_randf(nmax, &rng);
    for (int64_t i = 0; i < nmax; i++) {
        double sc = i % 4096 < 2048 ? 1e-3 : 50.0;
        x[i] = (float)(sc * x[i] + (i % 3 ? 7.5 : -2));
        y[i] = x[i] + (float)(0.03 * sc) * y[i];
    }
    char bad[320] = "";
    for (int special = 0; special < 3 && !bad[0]; special++) {
        if (special == 1) { x[4100] = NAN; y[9000] = INFINITY; x[13000] = -INFINITY; }
        if (special == 2) { x[4100] = 1; x[13000] = 2; y[20000] = NAN; }    /* non-finite in y only */
        for (int si = 0; si < QR_ARRAY_LEN(sizes) && !bad[0]; si++)
            for (int off = 0; off < 4 && !bad[0]; off += 3)
                for (int withy = 0; withy < 2 && !bad[0]; withy++) {
                    int64_t n = sizes[si];
                    QrF32PairStats w, g;
                    qr_f32_pair_stats_init(&w);
                    qr_f32_pair_stats_init(&g);
                    a2.f32_pair_stats(x + off, withy ? y + off : NULL, n, &w);
                    a5.f32_pair_stats(x + off, withy ? y + off : NULL, n, &g);
                    if (memcmp(&w, &g, sizeof w))
                        snprintf(bad, sizeof bad, "n %lld off %d %s special %d: avx512 differs from avx2 (sdd %.17g vs "
                                 "%.17g, x.m2 %.17g vs %.17g, sxy %.17g vs %.17g)", (long long)n, off, withy ? "pair" : "x only",
                                 special, w.sdd, g.sdd, w.x.m2, g.x.m2, w.sxy, g.sxy);
                }
    }
    qr_aligned_free(x);
    qr_aligned_free(y);
    QT_CHECKF(!bad[0], "%s", bad);
}

/* One array's block moments (f32_moment_blocks, which the statistics' pooled tasks call): at
 * every level each m[k] is bit for bit what the same level's f32_pair_stats(block k, NULL) merges
 * into an empty accumulator, and avx512's are avx2's. Block counts that fill the avx512 level's
 * groups of four and ones that leave spare places, short last blocks (multiple of 8 or not),
 * offset starts; NaN, +-Inf, a block all NaN, +-0 ties for min/max, denormals, mixed scales. */
static void test_moment_blocks(void) {
    QrKernels lv[8], a2;
    int nl = qt__k_levels(lv, 8);
    bool have2 = qr_kern_table(QR_ISA_AVX2, &a2) == QR_OK;
    qr_err_clear();
    uint64_t rng = 31;
    enum { B = QR_KERN_STATS_BLOCK };
    static const int64_t sizes[] = { 0, 1, 8, 13, B, B + 8, 2 * B, 3 * B + 5, 4 * B, 4 * B + 16, 5 * B, 7 * B + 3,
                                     9 * B + 24, 13 * B };
    const int64_t nmax = 13 * B + 8;
    float *x = qt__k_randf(nmax, &rng);
    QrF32Moments *m = malloc(14 * sizeof *m), *w = malloc(14 * sizeof *w);
    char bad[320] = "";
    for (int special = 0; special < 3 && !bad[0]; special++) {
        for (int64_t i = 0; i < nmax; i++) {
            double sc = (i / 1500) % 3 == 0 ? 1e-3 : (i / 1500) % 3 == 1 ? 40.0 : 1.0;
            x[i] = (float)(sc * qr_rng_normal(&rng) + (i % 7 == 0 ? 3.5 : -0.25));
            if (i % 11 == 0) x[i] = (i / 11) % 2 ? 0.0f : -0.0f;
            if (i >= 4 * B && i < 5 * B && !(x[i] > 0)) x[i] = (i / 3) % 2 ? 0.0f : -0.0f;   /* ReLU-like: min a zero */
        }
        if (special >= 1) {
            x[B + 100] = NAN; x[5 * B + 9] = INFINITY; x[6 * B + 4000] = -INFINITY;
            for (int64_t i = 0; i < 7; i++) x[9 * B + 3 + i] = 1e-41f * (float)(i + 1);   /* denormals */
        }
        if (special == 2) for (int64_t i = 2 * B; i < 3 * B; i++) x[i] = NAN;             /* a block all NaN */
        for (int si = 0; si < QR_ARRAY_LEN(sizes) && !bad[0]; si++)
            for (int off = 0; off < 8 && !bad[0]; off += 5) {
                int64_t n = sizes[si], nb = (n + B - 1) / B;
                if (n + off > nmax) continue;
                if (have2) a2.f32_moment_blocks(x + off, n, w);
                for (int l = 0; l < nl && !bad[0]; l++) {
                    lv[l].f32_moment_blocks(x + off, n, m);
                    for (int64_t k = 0; k < nb && !bad[0]; k++) {
                        QrF32PairStats one;
                        qr_f32_pair_stats_init(&one);
                        lv[l].f32_pair_stats(x + off + k * B, NULL, QR_MIN(B, n - k * B), &one);
                        if (memcmp(&one.x, &m[k], sizeof m[k]))
                            snprintf(bad, sizeof bad, "%s special %d n %lld off %d block %lld: moments differ from the "
                                     "level's pair statistics (m2 %.17g vs %.17g)", qr_isa_name(lv[l].isa), special,
                                     (long long)n, off, (long long)k, m[k].m2, one.x.m2);
                        else if (have2 && lv[l].isa >= QR_ISA_AVX512 && memcmp(&w[k], &m[k], sizeof m[k]))
                            snprintf(bad, sizeof bad, "%s special %d n %lld off %d block %lld: moments differ from avx2's "
                                     "(m2 %.17g vs %.17g)", qr_isa_name(lv[l].isa), special, (long long)n, off, (long long)k,
                                     m[k].m2, w[k].m2);
                    }
                }
            }
    }
    free(m);
    free(w);
    qr_aligned_free(x);
    QT_CHECKF(!bad[0], "%s", bad);
}

/* Largest relative error: the ref equals the plain maximum of every quotient (its skip test
 * never skips a winner), every level returns the ref's bits; zeros (0/0, d/0), ties, lengths
 * around the vector width, and a rising sequence (every element a new maximum). */
static void test_rtol(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 23;
    enum { N = 3001 };
    float *x = qt__k_randf(N, &rng), *y = qt__k_randf(N, &rng);
    for (int i = 0; i < N; i++) y[i] = x[i] + 1e-3f * y[i];
    x[10] = 0.0f; y[10] = 0.0f;              /* 0/0 = 0 */
    x[200] = 1e-30f; y[200] = 2e-30f;        /* a tiny |x|: ratio 1 */
    x[1500] = 3.0f; y[1500] = 3.0f;
    for (int c = 0; c < 4; c++) {
        if (c == 1) {
            for (int i = 0; i < N; i += 3) x[i] = y[i] = 0.0f;     /* ReLU's zeros in both: 0/0 */
            x[777] = 0.0f; y[777] = 1e-7f;                         /* d/0 = FLT_MAX */
        }
        if (c == 2) for (int i = 0; i < N; i++) { x[i] = 1.0f; y[i] = 1.0f + 1e-6f * (float)i; }   /* rising */
        if (c == 3) for (int i = 0; i < N; i++) { x[i] = (i % 2) ? 2.0f : -2.0f; y[i] = 0.0f; }   /* ties: ratio 1 */
        static const int64_t ns[] = { 0, 1, 7, 8, 9, 15, 16, 17, 64, 1000, N };
        for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++) {
            int64_t n = ns[ni];
            double want = qt_rtol_naive(x, y, n);
            double r = qr_f32_rtol__ref(x, y, n);
            QT_CHECKF(memcmp(&r, &want, 8) == 0, "ref rtol case %d n=%lld: %.17g vs %.17g", c, (long long)n, r, want);
            for (int l = 1; l < nl; l++) {
                double v = lv[l].f32_rtol(x, y, n);
                QT_CHECKF(memcmp(&v, &want, 8) == 0, "%s rtol case %d n=%lld: %.17g vs %.17g", qr_isa_name(lv[l].isa), c,
                          (long long)n, v, want);
            }
        }
    }
    qr_aligned_free(x);
    qr_aligned_free(y);
}

/* Largest relative error on awkward values: every level bit for bit against the plain maximum
 * at every length 0..80 and many up to 5003, from two offsets. Values: NaN and +-Inf in x or y
 * or both, +-0 in both (0/0), zeros in x against non-zero y (d/0 = FLT_MAX) early and then many
 * more (the kernels skip x == 0 once the maximum is FLT_MAX or more), denormal x against normal
 * y after that (quotients beyond FLT_MAX: a kernel that skipped too much would miss them),
 * denormal differences, and a case of finite values only. */
static void test_rtol_special(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 71;
    enum { N = 5003 + 8 };
    float *x = qt__k_randf(N, &rng), *y = qt__k_randf(N, &rng);
    char bad[256] = "";
    for (int c = 0; c < 5 && !bad[0]; c++) {
        for (int i = 0; i < N; i++) {
            float v = qr_rng_normal(&rng);
            x[i] = v < 0.3f ? 0.0f : v;                           /* ReLU-like: many zeros */
            y[i] = x[i] == 0 ? 0.0f : x[i] + 1e-3f * qr_rng_normal(&rng);
        }
        for (int i = 5; c >= 1 && i < N; i += 97) { x[i] = 0.0f; y[i] = (i % 3) ? 1e-6f : -0.0f; }   /* d/0, -0 */
        for (int i = 1700; c >= 2 && i < N; i += 211) { x[i] = 1e-40f; y[i] = 1.0f + (float)i; }  /* past FLT_MAX */
        for (int i = 2900; c >= 2 && i < N; i += 401) { x[i] = 3e-39f; y[i] = 2e-39f; }            /* denormal d */
        if (c >= 3)
            for (int i = 40; i < N; i += 333) {
                int k = (i / 333) % 6;
                if (k == 0) x[i] = NAN;
                if (k == 1) y[i] = NAN;
                if (k == 2) x[i] = INFINITY;
                if (k == 3) y[i] = -INFINITY;
                if (k == 4) x[i] = y[i] = INFINITY;
                if (k == 5) { x[i] = 0.0f; y[i] = NAN; }
            }
        if (c == 4) { x[3] = 0.0f; y[3] = 2.0f; x[4000] = 1e-45f; y[4000] = 3e38f; }   /* FLT_MAX first, then beyond */
        for (int off = 0; off < 8 && !bad[0]; off += 5)
            for (int64_t n = 0; n + off <= N && !bad[0]; n = n < 80 ? n + 1 : n * 5 / 4 + 3) {
                int64_t m = n > 4000 && n < 5003 ? 5003 - off : n;
                double want = qt_rtol_naive(x + off, y + off, m);
                for (int l = 0; l < nl && !bad[0]; l++) {
                    double v = lv[l].f32_rtol(x + off, y + off, m);
                    if (memcmp(&v, &want, 8))
                        snprintf(bad, sizeof bad, "%s case %d off %d n=%lld: %.17g vs %.17g", qr_isa_name(lv[l].isa), c, off,
                                 (long long)m, v, want);
                }
            }
    }
    qr_aligned_free(x);
    qr_aligned_free(y);
    QT_CHECKF(!bad[0], "%s", bad);
}

/* qr_f64_exp (the metrics' KL exponential, kern/ref/f64_exp.c): every level's f32_exp_sub
 * bit-exact with the ref at every length (tails), including NaN, infinities, zeros, the clamps
 * and values around them; the ref within 2 ulp of long double expl over the whole range. */
static void test_kern_exp(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 31;
    enum { N = 4099 };
    float *x = qt__k_randf(N, &rng);
    double *want = malloc(N * sizeof *want), *got = malloc(N * sizeof *got);
    static const float special[] = { 0.0f, -0.0f, NAN, INFINITY, -INFINITY, -745.0f, -746.0f, -745.2f, -708.4f, -708.3f,
                                     709.78f, 709.79f, 710.5f, 1e-30f, -1e-45f, 0.34657359f, -0.34657359f, 88.0f, -103.9f };
    for (int i = 0; i < N; i++) x[i] = i < QR_ARRAY_LEN(special) ? special[i] : x[i] * (i % 3 ? 30.0f : 800.0f);
    static const double subs[] = { 0.0, 3.5, -2.0, 700.0 };
    double worst = 0;
    for (int si = 0; si < QR_ARRAY_LEN(subs); si++) {
        qr_f32_exp_sub__ref(x, subs[si], want, N);
        for (int i = 0; i < N; i++) {
            double a = (double)x[i] - subs[si];
            if (a != a) { QT_CHECKF(want[i] != want[i], "exp(NaN) = %g, want NaN", want[i]); continue; }
            long double ref = expl((long double)a);
            if (a < -746.0) ref = expl(-746.0L);   /* the clamp: 0 either way */
            double e = want[i];
            if (isinf((double)ref) || ref == 0) {
                QT_CHECKF(e == (double)ref || (ref < 0x1p-1074L && e <= 0x1p-1074), "exp(%.17g) = %.17g, want %.17Lg", a, e, ref);
                continue;
            }
            int ex;
            frexpl(ref, &ex);
            long double ulp = ldexpl(1.0L, QR_MAX(ex - 53, -1074));
            double u = (double)(fabsl((long double)e - ref) / ulp);
            if (u > worst) worst = u;
            QT_CHECKF(u <= 2.0, "exp(%.17g) = %.17g, %.2f ulp from %.21Lg", a, e, u, ref);
        }
        QT_CHECK(want[0] == exp(-subs[si]) || subs[si] != 0.0);
        for (int l = 1; l < nl; l++) {
            static const int64_t ns[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 1000, N };
            for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++) {
                int64_t n = ns[ni], off = ni % 3;   /* unaligned starts too */
                if (n + off > N) n = N - off;
                for (int64_t i = 0; i < n + 2 && off + i < N; i++) got[i] = -1.0;
                lv[l].f32_exp_sub(x + off, subs[si], got, n);
                for (int64_t i = 0; i < n; i++)
                    QT_CHECKF(memcmp(&got[i], &want[off + i], 8) == 0, "%s exp(%.9g - %g) n=%lld: %.17g vs ref %.17g",
                              qr_isa_name(lv[l].isa), (double)x[off + i], subs[si], (long long)n, got[i], want[off + i]);
                if (n + off < N) QT_CHECKF(got[n] == -1.0, "%s exp n=%lld wrote past the end", qr_isa_name(lv[l].isa), (long long)n);
            }
        }
    }
    QT_CHECK(qr_f64_exp(0.0) == 1.0 && qr_f64_exp(-INFINITY) == 0.0 && qr_f64_exp(INFINITY) == INFINITY);
    QT_CHECK(qr_f64_exp(1.0) == 0x1.5bf0a8b145769p+1);   /* e, correctly rounded */
    printf("    exp: worst %.3f ulp of long double expl over %d x %d values\n", worst, N, QR_ARRAY_LEN(subs));
    qr_aligned_free(x);
    free(want);
    free(got);
}

/* KL's sums of both sides (QrF32KlSidesFn, every level; the avx2 and neon levels through their one-side
 * kernels) and of one side (the ref's QrF32KlSideFn, with and without t) against the plain definition
 * (qr_f64_exp per pair, pairs with a non-finite value skipped, each sum in element order, the product
 * rounded on its own) bit for bit at every length (the SIMD levels' pipeline fill
 * and drain, tails), unaligned starts, with and without t, sums that start non-zero, and NaN /
 * +-Inf in v, in w and in both, alone and in whole vectors. */
static void test_kern_kl_side(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 77;
    enum { N = 5003 };
    float *v = qt__k_randf(N, &rng), *w = qt__k_randf(N, &rng);
    for (int i = 0; i < N; i++) w[i] = v[i] + 0.1f * w[i];
    for (int bad = 0; bad < 2; bad++) {
        if (bad) {
            static const float nf[] = { NAN, INFINITY, -INFINITY };
            for (int i = 3; i < N; i += 97) v[i] = nf[i % 3];
            for (int i = 40; i < N; i += 131) w[i] = nf[(i + 1) % 3];
            for (int i = 700; i < 716; i++) v[i] = NAN;                /* whole vectors (8, 4, 2 lanes) */
            for (int i = 1200; i < 1208; i++) w[i] = INFINITY;
            v[2000] = w[2000] = NAN;
        }
        static const double subs[] = { 0.0, 2.5, -1.0 };
        for (int si = 0; si < QR_ARRAY_LEN(subs); si++) {
            static const int64_t ns[] = { 0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 47, 48, 49, 63, 64, 65, 97, 1000, N };
            for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++) {
                int64_t n = ns[ni], off = ni % 3;
                if (n + off > N) n = N - off;
                const float *x = v + off, *y = w + off;
                double ws = 0.25 * ni, wt = -0.5 * si, ws2 = 0.25 * ni;   /* the plain definition */
                for (int64_t i = 0; i < n; i++) {
                    double xi = x[i], yi = y[i];
                    if (!isfinite(xi) || !isfinite(yi)) continue;
                    double e = qr_f64_exp(xi - subs[si]), p = e * (xi - yi);
                    QR_KERN_ROUNDED(p);
                    ws += e;
                    wt += p;
                    ws2 += e;
                }
                const double suby = subs[(si + 1) % QR_ARRAY_LEN(subs)];   /* the y side's (QrF32KlSidesFn) */
                double wy = 0.125 * ni;
                for (int64_t i = 0; i < n; i++)
                    if (isfinite(x[i]) && isfinite(y[i])) wy += qr_f64_exp((double)y[i] - suby);
                for (int l = 0; l < nl; l++) {
                    double bs = 0.25 * ni, bt = -0.5 * si, by = 0.125 * ni;
                    lv[l].f32_kl_sides(x, y, n, subs[si], suby, &bs, &bt, &by);
                    QT_CHECKF(memcmp(&bs, &ws, 8) == 0 && memcmp(&bt, &wt, 8) == 0 && memcmp(&by, &wy, 8) == 0,
                              "%s kl_sides (%s, sub %g / %g) n=%lld: %.17g %.17g %.17g, want %.17g %.17g %.17g",
                              qr_isa_name(lv[l].isa), bad ? "non-finite" : "finite", subs[si], suby, (long long)n, bs, bt, by,
                              ws, wt, wy);
                }
                double gs = 0.25 * ni, gt = -0.5 * si, gs2 = 0.25 * ni;   /* the one side the levels build on */
                qr_f32_kl_side__ref(x, y, n, subs[si], &gs, &gt);
                qr_f32_kl_side__ref(x, y, n, subs[si], &gs2, NULL);
                QT_CHECKF(memcmp(&gs, &ws, 8) == 0 && memcmp(&gt, &wt, 8) == 0 && memcmp(&gs2, &ws2, 8) == 0,
                          "ref kl_side (%s, sub %g) n=%lld: s %.17g t %.17g s(no t) %.17g, want %.17g %.17g %.17g",
                          bad ? "non-finite" : "finite", subs[si], (long long)n, gs, gt, gs2, ws, wt, ws2);
            }
        }
    }
    qr_aligned_free(v);
    qr_aligned_free(w);
}

/* The error split's sums of squares (QrF32SqErrSplitFn, QrF32ClipSqFn): every level against the
 * plain definitions (each sum one addition per counted element in element order) bit for bit, at
 * every length (the SIMD levels' pipeline fill and drain, tails), unaligned starts, masks with
 * other non-zero bytes than 1 and none, sums that start at -0, +0, a value or NaN, stretches of
 * +0 terms (the levels leave those out) and all-+0 runs, NaN / +-Inf in x, in y, in whole vectors;
 * clip flags under every combination of implied bounds, scaled and not, every mask byte written. */
static void test_kern_sqsum(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 91;
    enum { N = 5003 };
    float *x = qt__k_randf(N, &rng), *y = qt__k_randf(N, &rng), *z = calloc(N, sizeof *z);
    uint8_t *mk = malloc(N), *got = malloc(N + 8), *want = malloc(N + 8);
    for (int i = 0; i < N; i++) {
        uint64_t r = qr_rng_next(&rng);
        y[i] = x[i] + 0.37f * y[i];
        if ((i >= 3000 && r % 5 < 2) || (i / 40) % 3 == 1) y[i] = x[i];   /* +0 terms: in stretches, then scattered */
        if ((i / 64) % 7 == 3) x[i] = y[i] = 0.0f;                   /* both zero (a Relu's zeros) */
        mk[i] = (r >> 8) % 9 == 0 ? (uint8_t)(1 + (r >> 16) % 3 * 127) : 0;   /* 1, 128, 255 */
        if (i >= 2400 && i < 2440) mk[i] = 1;
        x[i] *= 3.0f;
        y[i] *= 3.0f;
    }
    static const float nf[] = { NAN, INFINITY, -INFINITY };
    for (int i = 5; i < N; i += 89) x[i] = nf[i % 3];
    for (int i = 31; i < N; i += 127) y[i] = nf[(i + 1) % 3];
    for (int i = 800; i < 816; i++) x[i] = NAN;
    for (int i = 1600; i < 1608; i++) y[i] = -INFINITY;
    static const int64_t ns[] = { 0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 39, 40, 41, 63, 64, 65, 97, 1000, N };
    static const double s0s[][2] = { { 0.0, 0.0 }, { -0.0, -0.0 }, { 1.5, -0.0 }, { NAN, 2.0 } };
    int bad = 0;
    for (int zc = 0; zc < 2; zc++)                /* zc: x == y everywhere, only +0 terms */
        for (int mi = 0; mi < 2; mi++)
            for (int si = 0; si < QR_ARRAY_LEN(s0s); si++)
                for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++) {
                    int64_t n = ns[ni], off = ni % 3;
                    if (n + off > N) n = N - off;
                    const float *px = (zc ? z : x) + off, *py = (zc ? z : y) + off;
                    const uint8_t *m = mi ? mk + off : NULL;
                    double w0 = s0s[si][0], w1 = s0s[si][1];   /* the plain definition */
                    for (int64_t i = 0; i < n; i++) {
                        if (!isfinite(px[i]) || !isfinite(py[i])) continue;
                        double d = (double)py[i] - (double)px[i], t = d * d;
                        QR_KERN_ROUNDED(t);
                        if (m && m[i]) w1 += t;
                        else w0 += t;
                    }
                    for (int l = 0; l < nl && !bad; l++) {
                        double g[2] = { s0s[si][0], s0s[si][1] };
                        lv[l].f32_sqerr_split(px, py, m, n, g);
                        if (memcmp(&g[0], &w0, 8) || memcmp(&g[1], &w1, 8)) {
                            QT_CHECKF(0, "%s sqerr_split n=%lld off %lld mask %d start %d zero %d: %.17g %.17g, want %.17g %.17g",
                                      qr_isa_name(lv[l].isa), (long long)n, (long long)off, mi, si, zc, g[0], g[1], w0, w1);
                            bad = 1;
                        }
                    }
                }
    static const float ib[][2] = { { NAN, NAN }, { 0.0f, NAN }, { 0.0f, 6.0f }, { NAN, 1.5f }, { -1.0f, -0.25f } };
    static const double qb[][2] = { { -2.0, 2.5 }, { 0.0, 0.0625 }, { -0.3, 7.9 } };
    for (int ii = 0; ii < QR_ARRAY_LEN(ib); ii++)
        for (int qi = 0; qi < QR_ARRAY_LEN(qb); qi++)
            for (int sc = 0; sc < 2; sc++)
                for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++) {
                    int64_t n = ns[ni], off = (ni + ii) % 3;
                    if (n + off > N) n = N - off;
                    const float *u = (ni % 2 ? x : y) + off;
                    const double st = 0.0235, s0 = ni % 4 == 1 ? -0.0 : ni % 4 == 2 ? 3.25 : 0.0;
                    QrF32ClipSq w = { 1, 2, 3, s0 };   /* the plain definition */
                    memset(want, 0xAA, (size_t)n + 8);
                    for (int64_t i = 0; i < n; i++) {
                        double v = u[i];
                        if (ib[ii][0] == ib[ii][0] && v < ib[ii][0]) v = ib[ii][0];
                        if (ib[ii][1] == ib[ii][1] && v > ib[ii][1]) v = ib[ii][1];
                        want[i] = 0;
                        if (!isfinite(v)) continue;
                        w.n_fin++;
                        if (v < qb[qi][0] || v > qb[qi][1]) { want[i] = 1; w.n_clip++; }
                        else w.n_in++;
                        double q = sc ? v / st : v, t = q * q;
                        QR_KERN_ROUNDED(t);
                        w.s += t;
                    }
                    for (int l = 0; l < nl && !bad; l++) {
                        QrF32ClipSq g = { 1, 2, 3, s0 };
                        memset(got, 0xAA, (size_t)n + 8);
                        lv[l].f32_clip_sq(u, n, ib[ii][0], ib[ii][1], qb[qi][0], qb[qi][1], st, sc, got, &g);
                        if (memcmp(&g.s, &w.s, 8) || g.n_fin != w.n_fin || g.n_clip != w.n_clip || g.n_in != w.n_in ||
                            memcmp(got, want, (size_t)n + 8)) {
                            QT_CHECKF(0, "%s clip_sq n=%lld bounds %d range %d scaled %d: s %.17g want %.17g, fin %lld/%lld "
                                      "clip %lld/%lld in %lld/%lld, flags %s", qr_isa_name(lv[l].isa), (long long)n, ii, qi, sc,
                                      g.s, w.s, (long long)g.n_fin, (long long)w.n_fin, (long long)g.n_clip,
                                      (long long)w.n_clip, (long long)g.n_in, (long long)w.n_in,
                                      memcmp(got, want, (size_t)n + 8) ? "differ" : "same");
                            bad = 1;
                        }
                    }
                }
    QT_CHECK(!bad);
    QT_CHECKF(nl >= 2, "levels tested: %d", nl);
    qr_aligned_free(x);
    qr_aligned_free(y);
    free(z);
    free(mk);
    free(got);
    free(want);
}

/* 8-bit block statistics (QrQ8StatsFn): the ref against direct sums, every level the ref's
 * integers at many lengths (tails, more than one 64K chunk), int8 and uint8, extremes. */
static void test_kern_q8_stats(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 57;
    enum { N = 200003 };
    uint8_t *buf = malloc(N);
    static const int64_t ns[] = { 0, 1, 15, 16, 17, 31, 32, 33, 100, 4096, 65535, 65536, 65567, 131104, N };
    int bad = 0;
    char msg[300] = "";
    for (int fill = 0; fill < 4; fill++) {
        for (int64_t i = 0; i < N; i++)
            buf[i] = fill == 0 ? (uint8_t)qr_rng_next(&rng) : fill == 1 ? 0xff : fill == 2 ? 0x80 : (uint8_t)(i % 3 == 0 ? 0x7f : 0x81);
        for (int sg = 0; sg < 2; sg++)
            for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++) {
                int64_t n = ns[ni], off = ni % 3;
                if (n + off > N) n = N - off;
                int64_t s1 = 0, s2 = 0;
                int32_t mn = 0, mx = 0;
                for (int64_t i = 0; i < n; i++) {
                    int32_t x = sg ? (int8_t)buf[off + i] : buf[off + i];
                    s1 += x;
                    s2 += (int64_t)x * x;
                    if (i == 0 || x < mn) mn = x;
                    if (i == 0 || x > mx) mx = x;
                }
                for (int l = 0; l < nl; l++) {
                    QrQ8Stats q;
                    lv[l].q8_stats(buf + off, sg, n, &q);
                    if ((q.s1 != s1 || q.s2 != s2 || q.mn != mn || q.mx != mx) && !bad++)
                        snprintf(msg, sizeof msg, "%s %s fill %d n=%lld: %lld %lld %d %d, want %lld %lld %d %d",
                                 qr_isa_name(lv[l].isa), sg ? "int8" : "uint8", fill, (long long)n, (long long)q.s1,
                                 (long long)q.s2, q.mn, q.mx, (long long)s1, (long long)s2, mn, mx);
                }
            }
    }
    QT_CHECKF(!bad, "%d wrong; first: %s", bad, msg);
    free(buf);
}

/* The weights' quantization check (QrF32WquantFn): every level that has one against the ref — the
 * same y bits and counts — over 8-bit and 16-bit ranges, one or per-element parameters, with and
 * without the float weight and the stored integers, NaN, infinities, -0, halves and far values, a zero
 * scale, and lengths around the vector width. */
static void test_kern_wquant(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    enum { N = 1037 };
    float *x = malloc(N * sizeof(float)), *s = malloc(N * sizeof(float)), *y0 = malloc(N * sizeof(float)),
          *y1 = malloc(N * sizeof(float));
    int32_t *z = malloc(N * sizeof(int32_t));
    uint8_t *q = malloc(N);
    QT_CHECK(x && s && y0 && y1 && z && q);
    static const int32_t ranges[4][2] = { { -128, 127 }, { 0, 255 }, { -32768, 32767 }, { -8, 7 } };
    static const int64_t ns[] = { 0, 1, 15, 16, 17, 33, 1000, N };
    uint64_t rng = 71;
    int bad = 0, levels = 0;
    char msg[300] = "";
    for (int l = 0; l < nl; l++) {
        if (!lv[l].f32_wquant || lv[l].isa == QR_ISA_REF) continue;
        levels++;
        for (int cfg = 0; cfg < 4 * 2 * 3 * 2; cfg++) {
            const int ri = cfg % 4, ss = (cfg / 4) % 2, st = (cfg / 8) % 3, with_x = cfg / 24;   /* st: none, int8, uint8 */
            if (!with_x && !st) continue;
            const int32_t lo = ranges[ri][0], hi = ranges[ri][1];
            for (int i = 0; i < N; i++) {
                uint64_t r = qr_rng_next(&rng);
                s[i] = i % 97 == 5 ? 0.0f : 0.001f * (float)(1 + (r >> 58));
                z[i] = lo + (int32_t)((r >> 30) % (uint64_t)(hi - lo + 1));
                const float s1 = ss ? s[i] : s[0];
                const int k = (int)((r >> 12) % 9);
                const double m = (double)((int64_t)((r >> 20) % 600) - 300);
                x[i] = k < 3 ? (float)((m + 0.5) * s1) : k == 3 ? -0.0f : k == 4 ? 0.0f : k == 5 ? 1e30f
                     : (float)((m + (double)((r >> 40) % 1000) * 1e-3) * s1 * (k == 6 ? 200 : 1));
                if (i % 89 == 7) x[i] = NAN;
                if (i % 113 == 9) x[i] = i & 1 ? INFINITY : -INFINITY;
                q[i] = (uint8_t)(r >> 48);
            }
            for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++) {
                const int64_t n = ns[ni];
                QrWqCounts c0 = {0}, c1 = {0};
                const void *stp = st ? q : NULL;
                qr_f32_wquant__ref(with_x ? x : NULL, stp, st == 1, s, z, ss, lo, hi, n, y0, &c0);
                lv[l].f32_wquant(with_x ? x : NULL, stp, st == 1, s, z, ss, lo, hi, n, y1, &c1);
                if ((memcmp(y0, y1, (size_t)n * sizeof(float)) || memcmp(&c0, &c1, sizeof c0)) && !bad++)
                    snprintf(msg, sizeof msg, "%s range [%d, %d] ss %d stored %d x %d n %lld: sat %lld/%lld far %lld/%lld "
                             "zero %lld/%lld nonfinite %lld/%lld diff %lld/%lld", qr_isa_name(lv[l].isa), lo, hi, ss, st,
                             with_x, (long long)n, (long long)c1.sat, (long long)c0.sat, (long long)c1.far, (long long)c0.far,
                             (long long)c1.zero, (long long)c0.zero, (long long)c1.nonfinite, (long long)c0.nonfinite,
                             (long long)c1.diff, (long long)c0.diff);
            }
        }
    }
    free(x); free(s); free(y0); free(y1); free(z); free(q);
    QT_CHECKF(!bad, "%d wrong; first: %s", bad, msg);
    if (!levels) QT_SKIP("no level with a kernel of its own on this CPU (the avx2 and neon levels use analysis/weights.c's loop)");
}

/* The fragility's tie scan (QrF32TieScanFn): every level stops at the ref's block, and the ref at the
 * first block with an element whose 2 · saturate(x / sc) is an odd integer (checked lane by lane in
 * doubles here: the same quotient, exact). One planted tie per trial at each lane of a block, exact
 * ties just off by one ulp, saturated values (at lo / hi: even or odd bounds), NaN / ±Inf, on three scales. */
static bool qt__k_tie_lane(float x, float sc, float lo, float hi) {
    float v = x / sc;
    if (!(v >= lo)) v = lo;
    if (v > hi) v = hi;
    double w = 2.0 * (double)v;
    return w == floor(w) && fmod(fabs(w), 2.0) == 1.0;
}

static void test_kern_tie_scan(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    enum { NB = 9 };
    float x[16 * NB];
    static const float scales[3] = { 0.5f, 0.0371f, 3.0f }, bounds[3][2] = { { -128, 127 }, { -0.5f, 255.5f }, { -7, 8 } };
    uint64_t rng = 5;
    int bad = 0, trials = 0, found = 0;
    char msg[200] = "";
    for (int t = 0; t < 16 * NB * 3; t++) {
        const float sc = scales[t % 3], lo = bounds[(t / 3) % 3][0], hi = bounds[(t / 3) % 3][1];
        for (int i = 0; i < 16 * NB; i++) {
            uint64_t r = qr_rng_next(&rng);
            const int k = (int)(r % 301) - 150;
            x[i] = (float)k * sc + (float)((r >> 20) % 1000) * 1e-4f * sc;   /* rarely a tie */
            if ((r >> 40) % 50 == 0) x[i] = (r >> 50) & 1 ? NAN : (r >> 51) & 1 ? INFINITY : -INFINITY;
        }
        const int at = (t * 7) % (16 * NB), kind = t % 5;
        const float k = (float)((int)(qr_rng_next(&rng) % 301) - 150);
        x[at] = kind == 0 ? (k + 0.5f) * sc : kind == 1 ? nextafterf((k + 0.5f) * sc, INFINITY)
              : kind == 2 ? 1e9f : kind == 3 ? -1e9f : -(k + 0.5f) * sc;
        int want = NB;
        for (int i = 0; i < 16 * NB && want == NB; i++) if (qt__k_tie_lane(x[i], sc, lo, hi)) want = i / 16;
        for (int b0 = 0; b0 <= NB; b0 += 3) {
            const int64_t ref = qr_f32_tie_scan__ref(x + 16 * b0, NB - b0, sc, lo, hi);
            const int64_t wb = want >= b0 ? want - b0 : -1;
            trials++;
            found += ref < NB - b0;
            if (wb >= 0 && ref != wb && !bad++) snprintf(msg, sizeof msg, "ref: trial %d from block %d: %lld, definition %lld", t, b0, (long long)ref, (long long)wb);
            for (int l = 0; l < nl; l++) {
                const int64_t got = lv[l].f32_tie_scan(x + 16 * b0, NB - b0, sc, lo, hi);
                if (got != ref && !bad++)
                    snprintf(msg, sizeof msg, "%s: trial %d from block %d: %lld, ref %lld", qr_isa_name(lv[l].isa), t, b0,
                             (long long)got, (long long)ref);
            }
        }
    }
    QT_CHECKF(!bad, "%d wrong; first: %s", bad, msg);
    QT_CHECKF(found > trials / 4, "only %d of %d scans found a tie", found, trials);
}

/* Histogram and fake quantization: every level bit-exact with ref; the refs against
 * direct formulas (bin edges, ops/qdq.c's quantize + dequantize). */
static void test_hist_fakequant(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 17;
    enum { N = 5003 };
    float *x = qt__k_randf(N, &rng), *y = qr_aligned_alloc(N * sizeof(float)), *yr = qr_aligned_alloc(N * sizeof(float));
    x[0] = NAN; x[1] = INFINITY; x[2] = -INFINITY; x[3] = -2.0f; x[4] = 2.0f; x[5] = -0.0f; x[6] = 1e30f;
    int64_t cr[130], c[130];
    static const int32_t nbins[] = { 1, 7, 128 };
    for (int bi = 0; bi < 3; bi++)
        for (int ri = 0; ri < 3; ri++) {
            float lo = ri == 0 ? -2.0f : ri == 1 ? 0.0f : 0.5f, hi = ri == 0 ? 2.0f : ri == 1 ? 1e-3f : 0.5f;
            memset(cr, 0, sizeof cr);
            qr_f32_hist__ref(x, N, lo, hi, nbins[bi], cr);
            int64_t total = 0, inr = 0;
            for (int b = 0; b < nbins[bi]; b++) total += cr[b];
            for (int i = 0; i < N; i++) inr += hi > lo ? (x[i] >= lo && x[i] <= hi) : x[i] == lo;
            QT_CHECKF(total == inr, "ref hist total %lld vs %lld", (long long)total, (long long)inr);
            if (ri == 0) QT_CHECK(cr[nbins[bi] - 1] >= 1 && cr[0] >= 1);   /* x = hi lands in the last bin, lo in the first */
            for (int l = 1; l < nl; l++) {
                memset(c, 0, sizeof c);
                lv[l].f32_hist(x, N, lo, hi, nbins[bi], c);
                QT_CHECKF(memcmp(c, cr, sizeof c) == 0, "%s hist nbins=%d range %d", qr_isa_name(lv[l].isa), nbins[bi], ri);
            }
        }
    static const int32_t qr[3][2] = { { 0, 255 }, { -128, 127 }, { -32768, 32767 } };
    for (int qi = 0; qi < 3; qi++) {
        float scale = qi == 2 ? 1e-4f : 0.0173f;
        int32_t zp = qi == 0 ? 131 : qi == 1 ? -5 : 0;
        qr_f32_fake_quant__ref(x, N, scale, zp, qr[qi][0], qr[qi][1], yr);
        QrQuantRange r = { qr[qi][0], qr[qi][1] };
        for (int i = 0; i < N; i++) {
            float want = (float)(qr_quant_quantize_f32(x[i], scale, zp, r) - zp) * scale;
            QT_CHECKF(memcmp(&want, &yr[i], 4) == 0, "ref fake-quant x=%g: %g vs %g", x[i], yr[i], want);
        }
        for (int l = 1; l < nl; l++) {
            lv[l].f32_fake_quant(x, N, scale, zp, qr[qi][0], qr[qi][1], y);
            QT_CHECKF(memcmp(y, yr, N * sizeof(float)) == 0, "%s fake-quant range %d", qr_isa_name(lv[l].isa), qi);
            memcpy(y, x, N * sizeof(float));   /* in place */
            lv[l].f32_fake_quant(y, N, scale, zp, qr[qi][0], qr[qi][1], y);
            QT_CHECK(memcmp(y, yr, N * sizeof(float)) == 0);
        }
    }
    qr_aligned_free(x);
    qr_aligned_free(y);
    qr_aligned_free(yr);
}

/* Softmax and the elementwise MLAS functions (kern/ref/f32_trans.c): every level against the
 * ref bit for bit (both Softmax variants, rows of 1..40, 100 and 197, values reaching the exp
 * clamp; NaN, infinities, signed zeros, the clamps of erf/sigmoid/tanh), and the ref against
 * the functions in double (faithful to a few float ulps). */
static bool qt__k_same_f32(const float *a, const float *b, int64_t n, int64_t *at) {
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], 4) != 0 && !(a[i] != a[i] && b[i] != b[i])) { *at = i; return false; }
    return true;
}

static void test_trans(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 29;
    enum { N = 5003, ROWS = 7 };
    float *x = qt__k_randf(N, &rng), *y = qr_aligned_alloc(N * sizeof(float)), *yr = qr_aligned_alloc(N * sizeof(float));
    for (int i = 0; i < N; i++) x[i] *= (float)(1 + i % 5) * 3.0f;
    static const int ns[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 100, 197 };
    for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++)
        for (int w = 0; w < 2; w++) {
            const int64_t n = ns[ni];
            qr_f32_softmax__ref(x, yr, ROWS, n, w, false);
            for (int64_t r = 0; r < ROWS; r++) {   /* the ref against softmax in double */
                double mx = -INFINITY, s = 0;
                for (int64_t i = 0; i < n; i++) mx = fmax(mx, x[r * n + i]);
                for (int64_t i = 0; i < n; i++) s += exp((double)x[r * n + i] - mx);
                for (int64_t i = 0; i < n; i++) {
                    double want = exp((double)x[r * n + i] - mx) / s;
                    double tol = (1e-6 + 1.2e-7 * (mx - x[r * n + i])) * want + 1e-37;   /* x - max rounds in float */
                    QT_CHECKF(fabs(yr[r * n + i] - want) <= tol, "ref softmax n=%lld wide %d: %g vs %g",
                              (long long)n, w, yr[r * n + i], want);
                }
            }
            for (int l = 1; l < nl; l++) {
                int64_t at = 0;
                lv[l].f32_softmax(x, y, ROWS, n, w, false);
                QT_CHECKF(qt__k_same_f32(y, yr, ROWS * n, &at), "%s softmax n=%lld wide %d: element %lld %a vs %a",
                          qr_isa_name(lv[l].isa), (long long)n, w, (long long)at, y[at], yr[at]);
                memcpy(y, x, (size_t)(ROWS * n) * sizeof(float));   /* in place */
                lv[l].f32_softmax(y, y, ROWS, n, w, false);
                QT_CHECK(qt__k_same_f32(y, yr, ROWS * n, &at));
            }
            qr_f32_softmax__ref(x, yr, ROWS, n, w, true);   /* LogSoftmax: the ref against log of the softmax */
            for (int64_t r = 0; r < ROWS; r++) {
                double mx = -INFINITY, s = 0;
                for (int64_t i = 0; i < n; i++) mx = fmax(mx, x[r * n + i]);
                for (int64_t i = 0; i < n; i++) s += exp((double)x[r * n + i] - mx);
                for (int64_t i = 0; i < n; i++) {
                    double want = (double)x[r * n + i] - mx - log(s);
                    QT_CHECKF(fabs(yr[r * n + i] - want) <= 1e-6 * (1 + fabs(want)), "ref log-softmax n=%lld: %g vs %g",
                              (long long)n, yr[r * n + i], want);
                }
            }
            for (int l = 1; l < nl; l++) {
                int64_t at = 0;
                lv[l].f32_softmax(x, y, ROWS, n, w, true);
                QT_CHECKF(qt__k_same_f32(y, yr, ROWS * n, &at), "%s log-softmax n=%lld wide %d: element %lld",
                          qr_isa_name(lv[l].isa), (long long)n, w, (long long)at);
                memcpy(y, x, (size_t)(ROWS * n) * sizeof(float));
                lv[l].f32_softmax(y, y, ROWS, n, w, true);
                QT_CHECK(qt__k_same_f32(y, yr, ROWS * n, &at));
            }
        }
    /* n <= 16: both variants sum alike, so they differ only where exp underflows */
    qr_f32_softmax__ref(x, y, 1, 16, false, false);
    qr_f32_softmax__ref(x, yr, 1, 16, true, false);
    int64_t at0 = 0;
    QT_CHECK(qt__k_same_f32(y, yr, 16, &at0));
    x[0] = NAN; x[1] = INFINITY; x[2] = -INFINITY; x[3] = -0.0f; x[4] = 0.0f; x[5] = 3.925f; x[6] = -3.925f;
    x[7] = 0.921875f; x[8] = 18.0f; x[9] = -18.5f; x[10] = 9.0f; x[11] = -9.5f; x[12] = 1e-30f; x[13] = -100.0f;
    x[14] = 88.75f; x[15] = -110.0f; x[16] = 95.0f; x[17] = -87.5f;   /* exp: overflow, both clamps, subnormal */
    static const QrF32MapOp ops[] = { QR_F32_MAP_ERF, QR_F32_MAP_SIGMOID, QR_F32_MAP_TANH, QR_F32_MAP_EXP,
                                      QR_F32_MAP_EXP_WIDE };
    for (int oi = 0; oi < QR_ARRAY_LEN(ops); oi++) {
        qr_f32_map__ref(ops[oi], x, yr, N);
        for (int i = 3; i < N; i++) {
            double v = x[i], want = oi == 0 ? erf(v) : oi == 1 ? 1.0 / (1.0 + exp(-v)) : oi == 2 ? tanh(v) : exp(v);
            if (want > FLT_MAX) QT_CHECKF(isinf(yr[i]), "ref map %d x=%a: %a, want inf", oi, x[i], yr[i]);
            else QT_CHECKF(fabs(yr[i] - want) <= 4e-7 * fabs(want) + 1e-7, "ref map %d x=%a: %a vs %a", oi, x[i], yr[i], want);
        }
        for (int l = 1; l < nl; l++)
            for (int64_t n = N; n >= N - 9; n -= 3) {   /* tails of every length mod 8 */
                int64_t at = 0;
                lv[l].f32_map(ops[oi], x, y, n);
                QT_CHECKF(qt__k_same_f32(y, yr, n, &at), "%s map %d n=%lld: x=%a %a vs %a", qr_isa_name(lv[l].isa), oi,
                          (long long)n, x[at], y[at], yr[at]);
            }
    }
    qr_aligned_free(x);
    qr_aligned_free(y);
    qr_aligned_free(yr);
}

/* The LayerNormalization row (QrF32LayerNormFn): every level against the ref bit for bit (rows
 * of 1..40, 100 and 768 values, with and without bias, values with an offset), and the ref
 * against the definition in double (mean, 1 / sqrt(var + eps), y). */
static void test_layernorm_kern(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 41;
    enum { N = 768 };
    float *x = qt__k_randf(N, &rng), *g = qt__k_randf(N, &rng), *b = qt__k_randf(N, &rng);
    float *y = qr_aligned_alloc(N * sizeof(float)), *yr = qr_aligned_alloc(N * sizeof(float));
    for (int i = 0; i < N; i++) { x[i] = x[i] * 2.0f + 3.0f; g[i] = 1.0f + 0.5f * g[i]; }
    static const int ns[] = { 1, 2, 3, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 23, 24, 25, 31, 33, 37, 40, 100, 768 };
    for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++)
        for (int wb = 0; wb < 2; wb++) {
            const int64_t n = ns[ni];
            float mr, ir;
            qr_f32_layernorm__ref(x, g, wb ? b : NULL, yr, n, 1e-5f, &mr, &ir);
            double m = 0, v = 0;
            for (int64_t i = 0; i < n; i++) m += x[i];
            m /= (double)n;
            for (int64_t i = 0; i < n; i++) v += ((double)x[i] - m) * ((double)x[i] - m);
            const double inv = 1.0 / sqrt(v / (double)n + 1e-5);
            QT_CHECKF(fabs(mr - m) <= 1e-6 * (fabs(m) + 1), "ref layernorm n=%lld: mean %g vs %g", (long long)n, mr, m);
            QT_CHECKF(fabs(ir - inv) <= 1e-5 * inv, "ref layernorm n=%lld: inv %g vs %g", (long long)n, ir, inv);
            for (int64_t i = 0; i < n; i++) {
                const double want = ((double)x[i] - m) * inv * g[i] + (wb ? b[i] : 0.0);
                QT_CHECKF(fabs(yr[i] - want) <= 1e-5 * (1 + fabs(want)), "ref layernorm n=%lld: y[%lld] %g vs %g",
                          (long long)n, (long long)i, yr[i], want);
            }
            for (int l = 1; l < nl; l++) {
                int64_t at = 0;
                float ml = 0, il = 0;
                lv[l].f32_layernorm(x, g, wb ? b : NULL, y, n, 1e-5f, &ml, &il);
                QT_CHECKF(qt__k_same_f32(y, yr, n, &at) && !memcmp(&ml, &mr, 4) && !memcmp(&il, &ir, 4),
                          "%s layernorm n=%lld bias %d: element %lld %a vs %a", qr_isa_name(lv[l].isa), (long long)n, wb,
                          (long long)at, y[at], yr[at]);
                lv[l].f32_layernorm(x, g, wb ? b : NULL, y, n, 1e-5f, NULL, NULL);
                QT_CHECK(qt__k_same_f32(y, yr, n, &at));
            }
        }
    qr_aligned_free(x);
    qr_aligned_free(g);
    qr_aligned_free(b);
    qr_aligned_free(y);
    qr_aligned_free(yr);
}

/* ==== operators on the kernels (paths the conformance suite does not reach) ==== */

/* Gemm's transposition of A / B (32 x 32 tiles) against its definition, on shapes with partial
 * tiles on either side, one row or column, and none. */
static void test_nn_transpose(void) {
    static const int64_t shapes[][2] = { { 70, 45 }, { 32, 64 }, { 1, 33 }, { 33, 1 }, { 31, 97 }, { 0, 5 } };
    for (int si = 0; si < QR_ARRAY_LEN(shapes); si++) {
        int64_t r = shapes[si][0], c = shapes[si][1], bad = -1;
        float *src = malloc((size_t)(r * c + 1) * sizeof(float)), *dst = malloc((size_t)(r * c + 1) * sizeof(float));
        QT_CHECK(src && dst);
        if (!src || !dst) { free(src); free(dst); return; }
        for (int64_t i = 0; i < r * c; i++) { src[i] = (float)i; dst[i] = -1.0f; }
        qr__nn_transpose(src, r, c, dst);
        for (int64_t i = 0; i < r && bad < 0; i++)
            for (int64_t j = 0; j < c && bad < 0; j++)
                if (dst[j * r + i] != src[i * c + j]) bad = i * c + j;
        QT_CHECKF(bad < 0, "%lld x %lld: element %lld", (long long)r, (long long)c, (long long)bad);
        free(src);
        free(dst);
    }
}

/* Gemm with transB and one row (a Linear layer at batch 1) runs as a GEMV on B; MaxPool
 * without Indices runs the plane kernel: both against plain loops / the generic path. */
static void test_nn_fast_paths(void) {
    enum { K = 37, N = 45 };
    uint64_t rng = 31;
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t da[2] = { 1, K }, db[2] = { N, K }, dc[1] = { N }, dy[2] = { 1, N };
    float *bw = qt__k_randf(N * K, &rng), *cw = qt__k_randf(N, &rng), *xa = qt__k_randf(K, &rng);
    qt_mb_init_raw(&mb, "b", QR_DT_F32, 2, db, bw, (size_t)(N * K) * sizeof(float));
    qt_mb_init_raw(&mb, "c", QR_DT_F32, 1, dc, cw, N * sizeof(float));
    qt_mb_input(&mb, "a", QR_DT_F32, 2, da);
    qt_mb_output(&mb, "y", QR_DT_F32, 2, dy);
    Onnx__NodeProto *gm = qt_mb_node(&mb, "Gemm", "fc", "a,b,c", "y");
    Onnx__AttributeProto *at = qt_mb_attr(&mb, gm, "transB", QR_ATTR_INT);
    at->has_i = 1;
    at->i = 1;
    at = qt_mb_attr(&mb, gm, "alpha", QR_ATTR_FLOAT);
    at->has_f = 1;
    at->f = 0.5f;
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "kern_fc.onnx", &g);
    qt_mb_free(&mb);
    QT_OK(st);
    QrTensor x = {0}, y = {0};
    qr_tensor_set_shape(&x, QR_DT_F32, 2, da);
    qr_tensor_alloc_data(&x);
    memcpy(x.data, xa, K * sizeof(float));
    st = qr_run_infer(g, &x);
    if (st == QR_OK) st = qr_run(g, &x, NULL, &y);
    for (int n = 0; st == QR_OK && n < N; n++) {
        double s = 0, a = 0;
        for (int k = 0; k < K; k++) { s += (double)xa[k] * bw[n * K + k]; a += fabs((double)xa[k] * bw[n * K + k]); }
        s = 0.5 * s + cw[n];
        float got = ((float *)y.data)[n];
        if (fabs(got - s) > QR_KERN_F32_DOT_TOL(K + 2) * (a + fabs(cw[n]))) {
            qt_fail(__FILE__, __LINE__, "Gemm y[%d] = %.9g want %.9g", n, got, s);
            break;
        }
    }
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&y);
    qr_graph_free(g);
    free(g);
    qr_aligned_free(bw);
    qr_aligned_free(cw);
    qr_aligned_free(xa);
    QT_OK(st);
    /* MaxPool without and with Indices (the generic path): the same Y, on 1-3 threads */
    static const struct { int64_t dx[4], ks[2], ss[2], ps[4], ds[2]; } mp[] = {
        { { 1, 3, 17, 20 }, { 3, 3 }, { 2, 2 }, { 1, 1, 1, 1 }, { 1, 1 } },
        { { 2, 2, 31, 23 }, { 3, 2 }, { 1, 2 }, { 2, 0, 1, 1 }, { 2, 1 } },
        { { 1, 4, 40, 9 }, { 2, 3 }, { 3, 1 }, { 0, 1, 2, 1 }, { 1, 1 } },
    };
    for (int ci = 0; ci < QR_ARRAY_LEN(mp); ci++) {
        int64_t dp[4] = { mp[ci].dx[0], mp[ci].dx[1], 0, 0 };
        for (int d = 0; d < 2; d++)
            dp[2 + d] = (mp[ci].dx[2 + d] + mp[ci].ps[d] + mp[ci].ps[2 + d] - mp[ci].ds[d] * (mp[ci].ks[d] - 1) - 1) /
                        mp[ci].ss[d] + 1;
        qt_mb_init(&mb, 12);
        qt_mb_input(&mb, "x", QR_DT_F32, 4, mp[ci].dx);
        qt_mb_output(&mb, "y1", QR_DT_F32, 4, dp);
        qt_mb_output(&mb, "y2", QR_DT_F32, 4, dp);
        qt_mb_output(&mb, "i2", QR_DT_S64, 4, dp);
        for (int v = 0; v < 2; v++) {
            Onnx__NodeProto *n = qt_mb_node(&mb, "MaxPool", v ? "mp2" : "mp1", "x", v ? "y2,i2" : "y1");
            qt_mb_attr_ints(&mb, n, "kernel_shape", 2, mp[ci].ks);
            qt_mb_attr_ints(&mb, n, "strides", 2, mp[ci].ss);
            qt_mb_attr_ints(&mb, n, "pads", 4, mp[ci].ps);
            qt_mb_attr_ints(&mb, n, "dilations", 2, mp[ci].ds);
        }
        st = qt_load_built(&mb, "kern_maxpool.onnx", &g);
        qt_mb_free(&mb);
        QT_OK(st);
        qr_tensor_set_shape(&x, QR_DT_F32, 4, mp[ci].dx);
        qr_tensor_alloc_data(&x);
        float *xv = x.data, *ref = NULL;
        const int64_t n = dp[0] * dp[1] * dp[2] * dp[3];
        st = qr_run_infer(g, &x);
        /* pass 0: normal values, Y against the generic path's; pass 1: NaNs too (where the two
         * paths' NaN rules differ: ORT's plane kernel and its loop with Indices), Y on 2 and 3
         * threads against 1 thread's */
        for (int pass = 0; st == QR_OK && pass < 2; pass++) {
            for (int64_t i = 0; i < x.numel; i++) xv[i] = pass && i % 7 == 3 ? NAN : qr_rng_normal(&rng);
            for (int threads = 1; st == QR_OK && threads <= 3; threads++) {
                QT_OK(qr_pool_init(threads));
                QrTensor outs[3];
                memset(outs, 0, sizeof outs);
                st = qr_run(g, &x, NULL, outs);
                if (st == QR_OK && outs[0].numel == n) {
                    if (threads == 1) {
                        free(ref);
                        ref = malloc((size_t)n * sizeof(float));
                        memcpy(ref, outs[0].data, (size_t)n * sizeof(float));
                    }
                    /* with dilation both are ONNX Runtime's loop (it takes MlasPool only without),
                     * NaNs included */
                    const bool dil = mp[ci].ds[0] != 1 || mp[ci].ds[1] != 1;
                    const void *want = pass && !dil ? (const void *)ref : outs[1].data;
                    QT_CHECKF(memcmp(outs[0].data, want, (size_t)n * sizeof(float)) == 0,
                              "MaxPool case %d pass %d, %d threads: Y differs from the %s", ci, pass, threads,
                              pass && !dil ? "one thread's" : "generic path's");
                } else {
                    QT_CHECKF(st != QR_OK, "MaxPool case %d: %lld outputs, want %lld", ci, (long long)outs[0].numel,
                              (long long)n);
                }
                for (int i = 0; i < 3; i++) qr_tensor_free_data(&outs[i]);
            }
        }
        free(ref);
        qr_tensor_free_data(&x);
        qr_graph_free(g);
        free(g);
        QT_OK(st);
    }
    QT_OK(qr_pool_init(0));
}

static void test_kern_dispatch(void) {
    QrIsa isa;
    QT_CHECK(qr_kern_isa_parse("avx2", &isa) && isa == QR_ISA_AVX2);
    QT_CHECK(!qr_kern_isa_parse("sse", &isa));
    QrKernels k;
    QT_OK(qr_kern_table(QR_ISA_REF, &k));
    QT_CHECK(k.f32_gemm == qr_f32_gemm__ref && k.q8_gemm == qr_q8_gemm__ref);
    QrCpu cpu;
    qr_cpu_detect(&cpu);
    QrStatus st = qr_kern_table(QR_ISA_VNNI, &k);
    QT_CHECK((st == QR_OK) == (cpu.avx2 && cpu.fma && cpu.avx512f && cpu.avx512bw && cpu.avx512vl && cpu.avx512vnni));
    if (st != QR_OK) QT_CHECK(strstr(qr_err_msg(), "lacks") != NULL);
    QT_CHECK(qr_kern_table(QR_ISA_NEON, &k) != QR_OK || cpu.neon);
    qr_err_clear();
    QT_CHECK(qr_kern.f32_gemm != NULL);
    /* QR_ISA: a level is forced, an unknown word or a level the CPU lacks is refused with a
     * message and the best level stays */
    QrKernels saved = qr_kern;
    const char *env = getenv("QR_ISA");
    char *keep = env ? strdup(env) : NULL;
    setenv("QR_ISA", "ref", 1);
    qr__k_ready = false;
    QT_OK(qr_kern_init());
    QT_CHECK(qr_kern_isa() == QR_ISA_REF && qr_kern.f32_gemm == qr_f32_gemm__ref);
    setenv("QR_ISA", "sse9", 1);
    qr__k_ready = false;
    QT_CHECK(qr_kern_init() == QR_ERR_UNSUPPORTED && strstr(qr_err_msg(), "sse9"));
    QT_CHECK(qr_kern_init() == QR_ERR_UNSUPPORTED);   /* the same answer on later calls */
    setenv("QR_ISA", cpu.neon ? "vnni" : "neon", 1);
    qr__k_ready = false;
    QT_CHECK(qr_kern_init() == QR_ERR_UNSUPPORTED && strstr(qr_err_msg(), "lacks") && qr_kern.f32_gemm != NULL);
    if (keep) setenv("QR_ISA", keep, 1);
    else unsetenv("QR_ISA");
    free(keep);
    qr_err_clear();
    qr__k_ready = true;
    qr__k_status = QR_OK;
    qr_kern = saved;
}

/* ==== 8-bit depthwise convolution, max pooling, element-wise kernels ============== */

/* Windows over one plane: H, W, KH, KW, strides, dilations, begin and end pads (odd widths
 * exercise the vector tails, 1x1 planes and windows wider than the plane the edges). */
typedef struct { int64_t H, W, KH, KW, sh, sw, dh, dw, ph, pw, pe_h, pe_w; } QtQWin;
static const QtQWin qt__k_qwins[] = {
    { 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },   { 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1 }, { 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
    { 14, 14, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1 },   { 9, 45, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2 },    { 13, 70, 3, 3, 1, 2, 2, 2, 2, 2, 2, 2 },
    { 5, 33, 3, 7, 3, 3, 1, 1, 0, 3, 0, 3 },    { 4, 4, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2 },     { 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },
    { 30, 67, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0 },   { 8, 40, 1, 9, 1, 1, 1, 3, 0, 12, 0, 12 }, { 10, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2 },
    { 11, 11, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1 },   { 28, 28, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2 },  { 3, 30, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0 },
    { 17, 99, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1 },   { 6, 129, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },  { 9, 65, 2, 4, 1, 3, 3, 2, 1, 2, 1, 1 },
    { 2, 200, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1 },
    /* 1x1 windows of 256 pixels and more (the VNNI kernel's NCHW form, qr__k_cx1_run): a last
     * block of 16 pixels, whole blocks only, a last block of 1 */
    { 20, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },   { 16, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },  { 3, 107, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },
    { 17, 17, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },
};

static int64_t qt__k_qout(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
    return (in + pb + pe - (k - 1) * d - 1) / s + 1;
}

static QrQ8Win qt__k_win(const QtQWin *q, const void *x, bool sgn, int32_t xz) {
    QrQ8Win p = { x, sgn, xz, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw,
                  qt__k_qout(q->H, q->KH, q->sh, q->dh, q->ph, q->pe_h), qt__k_qout(q->W, q->KW, q->sw, q->dw, q->pw, q->pe_w) };
    return p;
}

/* The depthwise oracle: the sum over the window of output (oh, ow) of (x - xz) * w, exact in
 * int64, for one plane x (int8 when sg, else uint8) and its weights (int8 when w8, else
 * int16); taps in the padding contribute nothing. */
static int64_t qt__k_dw_sum(const QtQWin *q, const uint8_t *x, bool sg, int32_t xz, const void *w, bool w8, int64_t oh,
                            int64_t ow) {
    int64_t s = 0;
    for (int64_t kh = 0; kh < q->KH; kh++)
        for (int64_t kw = 0; kw < q->KW; kw++) {
            int64_t ih = oh * q->sh - q->ph + kh * q->dh, iw = ow * q->sw - q->pw + kw * q->dw;
            if (ih < 0 || ih >= q->H || iw < 0 || iw >= q->W) continue;
            int64_t v = sg ? ((const int8_t *)x)[ih * q->W + iw] : x[ih * q->W + iw];
            int64_t wk = w8 ? ((const int8_t *)w)[kh * q->KW + kw] : ((const int16_t *)w)[kh * q->KW + kw];
            s += (v - xz) * wk;
        }
    return s;
}

/* Depthwise 8-bit convolution: the ref against an independent int64 loop (reduced mod 2^32),
 * every level bit-exact with the ref, both signednesses, zero points at the ends of the range
 * and weights at +-255 (|x - xz| * |w| at its largest). Kernels must not write past y. */
static void test_q8_dwconv2d(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 21;
    for (int wi = 0; wi < QR_ARRAY_LEN(qt__k_qwins); wi++)
        for (int sg = 0; sg < 2; sg++) {
            const QtQWin *q = &qt__k_qwins[wi];
            uint8_t *x = qt__k_randq(q->H * q->W, 1, sg, &rng);
            int32_t xz = sg ? (wi % 3 == 0 ? 127 : wi % 3 == 1 ? -128 : 5) : (wi % 3 == 0 ? 255 : wi % 3 == 1 ? 0 : 131);
            QrQ8Win p = qt__k_win(q, x, sg, xz);
            int16_t w[128];
            for (int64_t k = 0; k < q->KH * q->KW; k++) {
                uint64_t r = qr_rng_next(&rng);
                w[k] = (r & 7) == 0 ? 255 : (r & 7) == 1 ? -255 : (int16_t)((int64_t)(r >> 8) % 511 - 255);
            }
            const int64_t P = p.OH * p.OW;
            int32_t *want = malloc((size_t)P * sizeof *want), *y = malloc((size_t)(P + 16) * sizeof *y);
            void *scratch = qr_aligned_alloc(qr_q8_dwconv2d_scratch(&p));
            for (int64_t oh = 0; oh < p.OH; oh++)
                for (int64_t ow = 0; ow < p.OW; ow++)
                    want[oh * p.OW + ow] = (int32_t)(uint32_t)(uint64_t)qt__k_dw_sum(q, x, sg, xz, w, false, oh, ow);
            for (int l = 0; l < nl; l++) {
                for (int64_t i = 0; i < P + 16; i++) y[i] = 0x5a5a5a5a;
                lv[l].q8_dwconv2d(&p, w, y, scratch);
                QT_CHECKF(memcmp(y, want, (size_t)P * sizeof *y) == 0, "%s window %d signed %d", qr_isa_name(lv[l].isa),
                          wi, sg);
                for (int64_t i = P; i < P + 16; i++) QT_CHECKF(y[i] == 0x5a5a5a5a, "%s wrote past y", qr_isa_name(lv[l].isa));
            }
            qr_aligned_free(x);
            qr_aligned_free(scratch);
            free(want);
            free(y);
        }
}

/* 8-bit max pooling: the ref against a direct scan of the in-range taps, every level
 * bit-exact with it; qr_q8_win_covered against a brute-force count of empty windows. */
static void test_q8_maxpool2d(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 23;
    int n_uncovered = 0;
    for (int wi = 0; wi < QR_ARRAY_LEN(qt__k_qwins); wi++)
        for (int sg = 0; sg < 2; sg++) {
            const QtQWin *q = &qt__k_qwins[wi];
            uint8_t *x = qt__k_randq(q->H * q->W, 1, sg, &rng);
            QrQ8Win p = qt__k_win(q, x, sg, 0);
            const int64_t P = p.OH * p.OW;
            uint8_t *want = malloc((size_t)P), *y = malloc((size_t)P + 64);
            bool all = true;
            for (int64_t oh = 0; oh < p.OH; oh++)
                for (int64_t ow = 0; ow < p.OW; ow++) {
                    int32_t best = INT32_MIN;
                    for (int64_t kh = 0; kh < q->KH; kh++)
                        for (int64_t kw = 0; kw < q->KW; kw++) {
                            int64_t ih = oh * q->sh - q->ph + kh * q->dh, iw = ow * q->sw - q->pw + kw * q->dw;
                            if (ih < 0 || ih >= q->H || iw < 0 || iw >= q->W) continue;
                            int32_t v = sg ? ((int8_t *)x)[ih * q->W + iw] : x[ih * q->W + iw];
                            best = QR_MAX(best, v);
                        }
                    all = all && best != INT32_MIN;
                    want[oh * p.OW + ow] = (uint8_t)best;
                }
            QT_CHECKF(all == qr_q8_win_covered(&p), "window %d: covered %d", wi, all);
            n_uncovered += !all;
            if (!all) { qr_aligned_free(x); free(want); free(y); continue; }
            void *scratch = qr_aligned_alloc(qr_q8_maxpool2d_scratch(&p));
            for (int l = 0; l < nl; l++) {
                memset(y, 0xa5, (size_t)P + 64);
                lv[l].q8_maxpool2d(&p, y, scratch);
                QT_CHECKF(memcmp(y, want, (size_t)P) == 0, "%s window %d signed %d", qr_isa_name(lv[l].isa), wi, sg);
                for (int64_t i = P; i < P + 64; i++) QT_CHECKF(y[i] == 0xa5, "%s wrote past y", qr_isa_name(lv[l].isa));
            }
            qr_aligned_free(x);
            qr_aligned_free(scratch);
            free(want);
            free(y);
        }
    QT_CHECKF(n_uncovered == 0, "%d windows with empty outputs", n_uncovered);
    /* a window in the padding only: 1x1 kernel, pad 1 */
    uint8_t one = 7;
    QrQ8Win e = { &one, false, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3 };
    QT_CHECK(!qr_q8_win_covered(&e));
}

/* Quantize, dequantize and QLinearAdd: the refs against ops/qdq.c's scalar formulas
 * (qr_quant_quantize_f32, the DequantizeLinear expression, qr__ql_bin_value + qr__ql_cvt_pack),
 * every level bit-exact with its ref; lengths with tails, NaN / Inf / huge values, values at
 * rounding ties, narrowed output ranges, broadcast strides and the three QLinearAdd modes. */
static void test_q8_eltwise(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 29;
    enum { N = 301 };
    float x[N], yf[N], yr[N];
    uint8_t a[N], b[N], q[N], qr8[N];
    static const int32_t ranges[5][2] = { { 0, 255 }, { -128, 127 }, { 3, 250 }, { 0, 127 }, { -100, 90 } };
    for (int it = 0; it < 60; it++) {
        int n = N - it % 37;
        float scale = it % 4 == 0 ? 0.5f : (float)(1e-3 * (double)(1 + qr_rng_next(&rng) % 900));
        int rk = it % 5;
        int32_t lo = ranges[rk][0], hi = ranges[rk][1];
        bool sgn = lo < 0 || rk == 3;
        int32_t tlo = sgn ? -128 : 0, thi = sgn ? 127 : 255;
        int32_t zp = tlo + (int32_t)(qr_rng_next(&rng) % (uint64_t)(thi - tlo + 1));
        for (int i = 0; i < n; i++) {
            uint64_t r = qr_rng_next(&rng);
            x[i] = (r & 15) == 0 ? NAN : (r & 15) == 1 ? INFINITY : (r & 15) == 2 ? -1e30f
                 : (r & 15) == 3 ? scale * ((float)((int64_t)(r >> 20) % 300) + 0.5f)   /* ties */
                                 : qr_rng_normal(&rng) * 100.0f * scale;
            a[i] = (uint8_t)(r >> 8);
            b[i] = (uint8_t)(r >> 16);
        }
        /* quantize */
        qr_q8_quantize__ref(n, x, scale, zp, lo, hi, qr8);
        for (int i = 0; i < n; i++) {
            int32_t want = qr_quant_quantize_f32(x[i], scale, zp, (QrQuantRange){ lo, hi });
            QT_CHECKF(qr8[i] == (uint8_t)want, "quantize ref %d: x=%g got %d want %d", i, x[i], qr8[i], want);
        }
        for (int l = 1; l < nl; l++) {
            memset(q, 0, sizeof q);
            lv[l].q8_quantize(n, x, scale, zp, lo, hi, q);
            QT_CHECKF(memcmp(q, qr8, (size_t)n) == 0, "%s quantize it=%d", qr_isa_name(lv[l].isa), it);
        }
        /* dequantize */
        qr_q8_dequantize__ref(n, a, sgn, zp, scale, yr);
        for (int i = 0; i < n; i++) {
            float want = (float)((sgn ? (int32_t)(int8_t)a[i] : (int32_t)a[i]) - zp) * scale;
            QT_CHECKF(memcmp(&yr[i], &want, 4) == 0, "dequantize ref %d", i);
        }
        for (int l = 1; l < nl; l++) {
            lv[l].q8_dequantize(n, a, sgn, zp, scale, yf);
            QT_CHECKF(memcmp(yf, yr, (size_t)n * 4) == 0, "%s dequantize it=%d", qr_isa_name(lv[l].isa), it);
        }
        /* QLinearAdd */
        QrQBin bin = { .mul = false, .mode = it % 3 };
        bool as_ = it & 1, bs_ = (it >> 1) & 1;
        float sa = (float)(1e-3 * (double)(1 + qr_rng_next(&rng) % 500)), sb = (float)(1e-3 * (double)(1 + qr_rng_next(&rng) % 500));
        float sc = it % 7 == 0 ? 1e-6f : (float)(1e-3 * (double)(1 + qr_rng_next(&rng) % 500));
        bin.za = (as_ ? -128 : 0) + (int32_t)(qr_rng_next(&rng) % 256);
        bin.zb = (bs_ ? -128 : 0) + (int32_t)(qr_rng_next(&rng) % 256);
        bin.ra = sa / sc;
        bin.rb = sb / sc;
        bin.fixed = (float)zp - (qr__ql_mul_rn(bin.ra, (float)bin.za) + qr__ql_mul_rn(bin.rb, (float)bin.zb));
        int64_t ast = it % 5 == 4 ? 0 : 1, bst = it % 7 == 6 ? 0 : 1;
        QrQ8AddParams ap = { bin.ra, bin.rb, bin.fixed, bin.mode, as_, bs_, lo, hi };
        qr_q8_add__ref(n, a, ast, b, bst, &ap, qr8);
        for (int i = 0; i < n; i++) {
            int32_t av = as_ ? (int8_t)a[i * ast] : a[i * ast], bv = bs_ ? (int8_t)b[i * bst] : b[i * bst];
            int32_t want = qr__ql_cvt_pack(qr__ql_bin_value(&bin, av, bv), (QrQuantRange){ lo, hi });
            QT_CHECKF(qr8[i] == (uint8_t)want, "add ref it=%d i=%d: got %d want %d", it, i, qr8[i], want);
        }
        for (int l = 1; l < nl; l++) {
            memset(q, 0, sizeof q);
            lv[l].q8_add(n, a, ast, b, bst, &ap, q);
            QT_CHECKF(memcmp(q, qr8, (size_t)n) == 0, "%s add it=%d mode %d", qr_isa_name(lv[l].isa), it, bin.mode);
        }
    }
}

/* int64 requantization: the ref against ops/qdq.c's qr_quant_requantize_s64 (exact bias add,
 * one rounding to float), every level bit-exact with it, 8- and 16-bit outputs. */
static void test_s64_requant(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 31;
    enum { N = 157 };
    int64_t acc[N];
    int32_t bias[N];
    float mult[N];
    uint16_t yr[N], y[N];
    static const int32_t ranges[4][2] = { { 0, 255 }, { -128, 127 }, { 0, 65535 }, { -32768, 32767 } };
    for (int it = 0; it < 24; it++) {
        for (int i = 0; i < N; i++) {
            uint64_t r = qr_rng_next(&rng);
            acc[i] = (r & 7) == 0 ? INT64_MAX / 4 : (r & 7) == 1 ? -((int64_t)1 << 45) + 3 : (int64_t)(r >> 20) - ((int64_t)1 << 43);
            bias[i] = (int32_t)(r >> 40) - (1 << 23);
            mult[i] = (float)((double)((r >> 9) % 100000) * 1e-11);
        }
        int rk = it % 4, bytes = rk < 2 ? 1 : 2;
        int32_t lo = ranges[rk][0], hi = ranges[rk][1], zp = (lo + hi) / 2 + it;
        int64_t bst = it & 1, mst = (it >> 1) & 1;
        int n = N - it;
        qr_s64_requant__ref(n, acc, it % 5 ? bias : NULL, bst, mult, mst, zp, lo, hi, yr, bytes);
        for (int i = 0; i < n; i++) {
            int32_t want = qr_quant_requantize_s64(acc[i] + (it % 5 ? bias[i * bst] : 0), mult[i * mst], zp,
                                                   (QrQuantRange){ lo, hi });
            int32_t got = bytes == 1 ? ((uint8_t *)yr)[i] : yr[i];
            QT_CHECKF(got == (bytes == 1 ? (uint8_t)want : (uint16_t)want), "ref it=%d i=%d: %d vs %d", it, i, got, want);
        }
        for (int l = 1; l < nl; l++) {
            memset(y, 0, sizeof y);
            lv[l].s64_requant(n, acc, it % 5 ? bias : NULL, bst, mult, mst, zp, lo, hi, y, bytes);
            QT_CHECKF(memcmp(y, yr, (size_t)(n * bytes)) == 0, "%s s64 requant it=%d", qr_isa_name(lv[l].isa), it);
        }
    }
}

/* 8-bit convolution GEMM with implicit im2col: the ref against an explicit im2col (zero point
 * as padding) and qr_q8_gemm__ref, every level bit-exact with the ref; channels 1..17, rows
 * below / across a tile, both signednesses, per-row weight zero points and the windows above
 * (strides 1-3, dilations, asymmetric pads, widths that leave partial panels). */
static void test_q8_conv_gemm(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 37;
    static const int64_t chans[4] = { 1, 3, 17, 8 }, rows[4] = { 1, 13, 8, 70 };
    int32_t za[128];
    for (int wi = 0; wi < QR_ARRAY_LEN(qt__k_qwins); wi++) {
        const QtQWin *q = &qt__k_qwins[wi];
        const int64_t C = chans[wi % 4], M = rows[(wi / 2) % 4];
        const bool xs = wi & 1, ws = (wi >> 1) & 1;
        QrQ8Win p = qt__k_win(q, NULL, xs, 0);
        const int64_t K = C * q->KH * q->KW, P = p.OH * p.OW;
        uint8_t *x = qt__k_randq(C * q->H * q->W, 1, xs, &rng), *w = qt__k_randq(M * K, 1, ws, &rng);
        int32_t xz = xs ? (int32_t)(qr_rng_next(&rng) % 256) - 128 : (int32_t)(qr_rng_next(&rng) % 256);
        for (int64_t m = 0; m < M; m++) za[m] = ws ? (int32_t)(qr_rng_next(&rng) % 256) - 128 : (int32_t)(qr_rng_next(&rng) % 256);
        QrQOperand A = { w, K, ws, za, wi % 3 ? 1 : 0, NULL };
        QrQ8ConvB b = { x, xs, xz, C, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, p.OH, p.OW };
        /* explicit im2col, padded with the zero point */
        uint8_t *col = malloc((size_t)(K * P));
        for (int64_t c = 0; c < C; c++)
            for (int64_t kh = 0; kh < q->KH; kh++)
                for (int64_t kw = 0; kw < q->KW; kw++)
                    for (int64_t oh = 0; oh < p.OH; oh++)
                        for (int64_t ow = 0; ow < p.OW; ow++) {
                            int64_t ih = oh * q->sh - q->ph + kh * q->dh, iw = ow * q->sw - q->pw + kw * q->dw;
                            bool in = ih >= 0 && ih < q->H && iw >= 0 && iw < q->W;
                            col[((c * q->KH + kh) * q->KW + kw) * P + oh * p.OW + ow] =
                                in ? x[(c * q->H + ih) * q->W + iw] : (uint8_t)xz;
                        }
        QrQOperand B = { col, P, xs, &xz, 0, NULL };
        int32_t *want = malloc((size_t)(M * P) * sizeof *want), *y = malloc((size_t)(M * P + 8) * sizeof *y);
        qr_q8_gemm__ref(M, P, K, &A, &B, want, P, false);
        for (int l = 0; l < nl; l++) {
            for (int64_t i = 0; i < M * P + 8; i++) y[i] = 0x3c3c3c3c;
            lv[l].q8_conv_gemm(M, &A, &b, y, P);
            QT_CHECKF(memcmp(y, want, (size_t)(M * P) * sizeof *y) == 0, "%s window %d C=%lld M=%lld signed %d/%d",
                      qr_isa_name(lv[l].isa), wi, (long long)C, (long long)M, xs, ws);
            for (int64_t i = M * P; i < M * P + 8; i++) QT_CHECKF(y[i] == 0x3c3c3c3c, "%s wrote past C", qr_isa_name(lv[l].isa));
        }
        qr_aligned_free(x);
        qr_aligned_free(w);
        free(col);
        free(want);
        free(y);
    }
}

/* 8-bit GEMM with the requantization fused: the ref against qr_q8_gemm__ref (or the conv
 * GEMM) followed by qr_s32_requant__ref row by row, every level bit-exact with the ref:
 * matrix shapes with tails and K blocks, convolution windows, bias / multiplier per row or
 * per column, 8- and 16-bit outputs, narrowed ranges; y is never written past its rows. */
static void test_q8_gemm_rq(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 41;
    static const int32_t ranges[4][2] = { { 0, 255 }, { -128, 127 }, { 0, 65535 }, { 5, 200 } };
    int32_t za[256], zb[256], bias[256];
    float mult[256];
    for (int i = 0; i < 256; i++) {
        bias[i] = (int32_t)(qr_rng_next(&rng) % 20001) - 10000;
        mult[i] = (float)((double)(qr_rng_next(&rng) % 1000 + 1) * 2e-6);
    }
    for (int si = 0; si < QR_ARRAY_LEN(qt__k_qshapes) + 6; si++) {
        const bool conv = si >= QR_ARRAY_LEN(qt__k_qshapes);
        const QtQShape *s = conv ? NULL : &qt__k_qshapes[si];
        const QtQWin *q = conv ? &qt__k_qwins[(si - QR_ARRAY_LEN(qt__k_qshapes)) * 3] : NULL;
        const int sg = si % 4;
        const bool as = sg & 1, bs = sg >> 1;
        int64_t M, N, K, lda, ldb;
        QrQ8Win pw = { 0 };
        int64_t C = 5;
        if (conv) {
            pw = qt__k_win(q, NULL, bs, 0);
            M = 19; N = pw.OH * pw.OW; K = C * q->KH * q->KW; lda = K; ldb = N;
        } else {
            M = s->M; N = s->N; K = s->K; lda = K + s->pa; ldb = N + s->pb;
        }
        if (M > 256 || N > 4096) continue;
        uint8_t *A = qt__k_randq(M * lda, 1, as, &rng), *B = qt__k_randq(conv ? C * q->H * q->W : K * ldb, 1, bs, &rng);
        QrQOperand qa = { A, lda, as, NULL, 0, NULL }, qb = { B, ldb, bs, NULL, 0, NULL };
        qa.zp = qt__k_zps((si + 1) % 3, M, 1, as, za, &rng, &qa.zp_stride);
        qb.zp = qt__k_zps(conv ? 1 : si % 3, N, 1, bs, zb, &rng, &qb.zp_stride);
        int32_t xz = qb.zp ? qb.zp[0] : 0;
        QrQ8ConvB cb = { B, bs, xz, C, conv ? q->H : 0, conv ? q->W : 0, conv ? q->KH : 0, conv ? q->KW : 0, conv ? q->sh : 0,
                         conv ? q->sw : 0, conv ? q->dh : 0, conv ? q->dw : 0, conv ? q->ph : 0, conv ? q->pw : 0, pw.OH, pw.OW };
        int rk = si % 4, yb = rk == 2 ? 2 : 1;
        bool per_row = si & 1;
        QrQ8Requant rq = { si % 5 ? bias : NULL, per_row ? 1 : 0, per_row ? 0 : 1, mult, per_row ? 1 : 0, per_row ? 0 : 1,
                           ranges[rk][0] + 3, ranges[rk][0], ranges[rk][1], NULL, N + 3, yb };
        if (!per_row && N > 256) rq.bias_cs = rq.mult_cs = 0;
        int32_t *C32 = malloc((size_t)QR_MAX(1, M * N) * sizeof *C32);
        size_t ybytes = (size_t)(M * (N + 3) * yb) + 64;
        unsigned char *want = malloc(ybytes), *got = malloc(ybytes);
        memset(want, 0x77, ybytes);
        if (conv) qr_q8_conv_gemm__ref(M, &qa, &cb, C32, N);
        else qr_q8_gemm__ref(M, N, K, &qa, &qb, C32, N, false);
        for (int64_t m = 0; m < M; m++)
            qr_s32_requant__ref(N, C32 + m * N, rq.bias ? rq.bias + m * rq.bias_rs : NULL, rq.bias_cs, mult + m * rq.mult_rs,
                                rq.mult_cs, rq.zp, rq.lo, rq.hi, want + m * (N + 3) * yb, yb);
        for (int l = 0; l < nl; l++) {
            memset(got, 0x77, ybytes);
            rq.y = got;
            lv[l].q8_gemm_rq(M, N, K, &qa, conv ? NULL : &qb, conv ? &cb : NULL, &rq);
            QT_CHECKF(memcmp(got, want, ybytes) == 0, "%s case %d M=%lld N=%lld K=%lld conv %d", qr_isa_name(lv[l].isa), si,
                      (long long)M, (long long)N, (long long)K, conv);
        }
        qr_aligned_free(A);
        qr_aligned_free(B);
        free(C32);
        free(want);
        free(got);
    }
}

/* Packed A (q8_pack_a): every level with a packed form gives the unpacked GEMM's bits through
 * QrQOperand.packed (plain, requantizing and convolution GEMMs; zero points per row that need
 * the column sums, or none), and a packing that does not fit the call (another level's, other
 * dimensions, another B signedness) is ignored, not misread. */
static void test_q8_pack_a(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 61;
    int32_t za[300], zb[4096];
    float mult[300];
    for (int i = 0; i < 300; i++) mult[i] = (float)((double)(qr_rng_next(&rng) % 1000 + 1) * 3e-6);
    static const int64_t shapes[][3] = { { 1, 1, 1 }, { 7, 33, 5 }, { 8, 32, 64 }, { 19, 70, 1031 }, { 64, 300, 576 },
                                         { 130, 9, 2051 }, { 257, 40, 77 } };
    int n_used = 0;
    for (int si = 0; si < QR_ARRAY_LEN(shapes); si++)
        for (int sg = 0; sg < 4; sg++) {
            const int64_t M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
            const bool as = sg & 1, bs = sg >> 1;
            uint8_t *A = qt__k_randq(M * K, 1, as, &rng), *B = qt__k_randq(K * N, 1, bs, &rng);
            QrQOperand qa = { A, K, as, NULL, 0, NULL }, qb = { B, N, bs, NULL, 0, NULL };
            qa.zp = qt__k_zps((si + sg) % 3, M, 1, as, za, &rng, &qa.zp_stride);
            qb.zp = qt__k_zps((si + 2 * sg) % 3, N, 1, bs, zb, &rng, &qb.zp_stride);
            int32_t *want = malloc((size_t)(M * N) * sizeof *want), *got = malloc((size_t)(M * N) * sizeof *got);
            uint8_t *ywant = malloc((size_t)(M * N)), *ygot = malloc((size_t)(M * N));
            qr_q8_gemm__ref(M, N, K, &qa, &qb, want, N, false);
            QrQ8Requant rq = { NULL, 0, 0, mult, 1, 0, 100, 0, 255, ywant, N, 1 };
            qr_q8_gemm_rq__ref(M, N, K, &qa, &qb, NULL, &rq);
            void *other = NULL;   /* the previous level's packing: must not be used by this one */
            for (int l = 0; l < nl; l++) {
                if (!lv[l].q8_pack_a) continue;
                const size_t nb = lv[l].q8_pack_a(M, K, &qa, bs, NULL);
                QT_CHECKF(nb > 0, "%s: no packed size", qr_isa_name(lv[l].isa));
                void *pk = qr_aligned_alloc(nb + 64);
                memset(pk, 0xa5, nb + 64);
                QT_CHECK(lv[l].q8_pack_a(M, K, &qa, bs, pk) == nb);
                for (size_t i = nb; i < nb + 64; i++) QT_CHECKF(((uint8_t *)pk)[i] == 0xa5, "%s packed past its size", qr_isa_name(lv[l].isa));
                const void *tries[3] = { pk, other, NULL };
                for (int t = 0; t < 3; t++) {
                    QrQOperand pa = qa;
                    pa.packed = tries[t];
                    memset(got, 0x5a, (size_t)(M * N) * sizeof *got);
                    lv[l].q8_gemm(M, N, K, &pa, &qb, got, N, false);
                    QT_CHECKF(memcmp(got, want, (size_t)(M * N) * sizeof *got) == 0, "%s packed A (try %d) M=%lld N=%lld K=%lld sg=%d",
                              qr_isa_name(lv[l].isa), t, (long long)M, (long long)N, (long long)K, sg);
                    rq.y = ygot;
                    memset(ygot, 0x5a, (size_t)(M * N));
                    lv[l].q8_gemm_rq(M, N, K, &pa, &qb, NULL, &rq);
                    rq.y = ywant;
                    QT_CHECKF(memcmp(ygot, ywant, (size_t)(M * N)) == 0, "%s packed A, requantized (try %d)", qr_isa_name(lv[l].isa), t);
                }
                /* packed for the other B signedness or other dimensions: not used */
                QrQOperand pa = qa;
                const size_t nb2 = lv[l].q8_pack_a(M, K, &qa, !bs, NULL);
                void *pk2 = qr_aligned_alloc(nb2);
                lv[l].q8_pack_a(M, K, &qa, !bs, pk2);
                pa.packed = pk2;
                lv[l].q8_gemm(M, N, K, &pa, &qb, got, N, false);
                QT_CHECKF(memcmp(got, want, (size_t)(M * N) * sizeof *got) == 0, "%s: packed for the other B signedness", qr_isa_name(lv[l].isa));
                if (M > 1) {
                    pa.packed = pk;
                    lv[l].q8_gemm(M - 1, N, K, &pa, &qb, got, N, false);
                    QT_CHECKF(memcmp(got, want, (size_t)((M - 1) * N) * sizeof *got) == 0, "%s: packed for another M", qr_isa_name(lv[l].isa));
                }
                qr_aligned_free(pk2);
                qr_aligned_free(other);
                other = pk;
                n_used++;
            }
            qr_aligned_free(other);
            qr_aligned_free(A);
            qr_aligned_free(B);
            free(want);
            free(got);
            free(ywant);
            free(ygot);
        }
    /* the convolution GEMM with packed weights */
    for (int wi = 0; wi < 6; wi++) {
        const QtQWin *q = &qt__k_qwins[wi * 3];
        const int64_t C = 7, M = 21;
        QrQ8Win pw = qt__k_win(q, NULL, false, 0);
        const int64_t K = C * q->KH * q->KW, N = pw.OH * pw.OW;
        uint8_t *A = qt__k_randq(M * K, 1, true, &rng), *X = qt__k_randq(C * q->H * q->W, 1, false, &rng);
        int32_t xz = 77;
        QrQOperand qa = { A, K, true, NULL, 0, NULL };
        QrQ8ConvB cb = { X, false, xz, C, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, pw.OH, pw.OW };
        int32_t *want = malloc((size_t)(M * N) * sizeof *want), *got = malloc((size_t)(M * N) * sizeof *got);
        qr_q8_conv_gemm__ref(M, &qa, &cb, want, N);
        for (int l = 0; l < nl; l++) {
            if (!lv[l].q8_pack_a) continue;
            const size_t nb = lv[l].q8_pack_a(M, K, &qa, false, NULL);
            void *pk = qr_aligned_alloc(nb);
            lv[l].q8_pack_a(M, K, &qa, false, pk);
            QrQOperand pa = qa;
            pa.packed = pk;
            memset(got, 0x5a, (size_t)(M * N) * sizeof *got);
            lv[l].q8_conv_gemm(M, &pa, &cb, got, N);
            QT_CHECKF(memcmp(got, want, (size_t)(M * N) * sizeof *got) == 0, "%s: conv GEMM with packed weights, window %d",
                      qr_isa_name(lv[l].isa), wi * 3);
            qr_aligned_free(pk);
        }
        qr_aligned_free(A);
        qr_aligned_free(X);
        free(want);
        free(got);
    }
    QT_CHECKF(n_used > 0 || nl == 1, "no level with a packed A was tested");
}

/* Channels-last transposition (q8_to_nhwc): every level equals __ref, which equals a loop here;
 * nothing is written past Cp * HW. */
static void test_q8_to_nhwc(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 63;
    static const int64_t cs[] = { 1, 2, 3, 4, 5, 15, 16, 17, 33, 64 }, hws[] = { 1, 7, 31, 32, 33, 100, 257 };
    for (int ci = 0; ci < QR_ARRAY_LEN(cs); ci++)
        for (int hi = 0; hi < QR_ARRAY_LEN(hws); hi++)
            for (int sg = 0; sg < 2; sg++) {
                /* pixels [p0, p0 + HW) of planes ldx apart */
                const int64_t C = cs[ci], HW = hws[hi], Cp = (C + 3) / 4 * 4 + (ci % 3 == 2 ? 4 : 0);
                const int64_t p0 = (hi + sg) % 2 ? 3 : 0, ldx = HW + p0 + (ci % 2 ? 5 : 0);
                uint8_t *x = qt__k_randq(C * ldx, 1, sg, &rng), pad = (uint8_t)(17 + ci);
                size_t n = (size_t)(HW * Cp);
                uint8_t *want = malloc(n + 64), *got = malloc(n + 64);
                memset(want, 0xee, n + 64);
                for (int64_t p = 0; p < HW; p++)
                    for (int64_t c = 0; c < Cp; c++) want[p * Cp + c] = c < C ? (uint8_t)(x[c * ldx + p0 + p] ^ (sg ? 0x80 : 0)) : pad;
                for (int l = 0; l < nl; l++) {
                    memset(got, 0xee, n + 64);
                    lv[l].q8_to_nhwc(x + p0, sg, C, HW, ldx, Cp, pad, got);
                    QT_CHECKF(memcmp(got, want, n + 64) == 0, "%s: C=%lld HW=%lld Cp=%lld signed %d", qr_isa_name(lv[l].isa),
                              (long long)C, (long long)HW, (long long)Cp, sg);
                }
                qr_aligned_free(x);
                free(want);
                free(got);
            }
}

/* The requantization documented in kern.h (QrS32RequantFn), written out for one value. */
static int32_t qt__k_rq1(int64_t acc32, float mult, int32_t zp, int32_t lo, int32_t hi) {
    float v = (float)(int32_t)(uint32_t)(uint64_t)acc32 * mult;
    if (!(v >= (float)(lo - zp))) v = (float)(lo - zp);
    if (v > (float)(hi - zp)) v = (float)(hi - zp);
    return (int32_t)rintf(v) + zp;
}

/* Channels-last convolution (q8_conv_nhwc_pack / _rq): __ref against a loop over the NCHW image
 * here (int64 sums reduced mod 2^32, bias, the documented requantization), every level with the
 * kernel bit-exact with __ref, over windows, channel counts around the multiples of 4, output
 * channels around the panel widths, both signednesses of x and w, weight zero points, int8 and
 * uint8 outputs with narrowed clamps, and 1 to 3 threads; nothing written outside the rows
 * (ldy > OH*OW); weights whose w - wz leaves int8 refused; another level's packing refused. */
static void test_q8_conv_nhwc(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 67;
    static const int64_t Cs[] = { 1, 3, 4, 5, 16, 31, 64 }, Ms[] = { 1, 7, 16, 24, 32, 33, 70 };
    int n_run = 0;
    for (int wi = 0; wi < QR_ARRAY_LEN(qt__k_qwins); wi++) {
        const QtQWin *q = &qt__k_qwins[wi];
        const int64_t C = Cs[wi % QR_ARRAY_LEN(Cs)], M = Ms[(wi * 3) % QR_ARRAY_LEN(Ms)];
        const bool xs = wi & 1, ws = (wi >> 1) & 1;
        QrQ8Win pw = qt__k_win(q, NULL, xs, 0);
        const int64_t OH = pw.OH, OW = pw.OW, P = OH * OW, T = q->KH * q->KW, Cp = (C + 3) / 4 * 4, ldy = P + 5;
        uint8_t *x = qt__k_randq(C * q->H * q->W, 1, xs, &rng);
        int32_t xz = xs ? (wi % 3 == 0 ? -128 : 100) : (wi % 3 == 0 ? 255 : 9);
        /* small: x and w within 3 of their zero points and a multiplier near 1, so that a sum
         * off by one changes the output; otherwise the whole ranges (sums near their bounds) */
        const bool small = wi % 2 == 0;
        if (small)
            for (int64_t i = 0; i < C * q->H * q->W; i++) {
                int32_t v = xz + (int32_t)(qr_rng_next(&rng) % 7) - 3;
                v = QR_MAX(xs ? -128 : 0, QR_MIN(xs ? 127 : 255, v));
                x[i] = (uint8_t)v;
            }
        int32_t wz[128], bias[128];
        float mult[128];
        int8_t *w = malloc((size_t)(M * C * T));
        for (int64_t m = 0; m < M; m++) {
            wz[m] = ws ? (int32_t)(qr_rng_next(&rng) % 3) - 1 : 120 + (int32_t)(qr_rng_next(&rng) % 16);
            bias[m] = small ? (int32_t)(qr_rng_next(&rng) % 101) - 50 : (int32_t)(qr_rng_next(&rng) % 200001) - 100000;
            /* multipliers below 1 (the kernels' saturating epilogue; 0.9 on large sums saturates
             * int16 on the way) and from 1 up (the float clamp) */
            mult[m] = small ? (wi % 4 == 0 ? 0.3f + 0.1f * (float)(m % 5) : 1.0f + 0.5f * (float)(m % 3))
                            : wi % 4 == 1 ? (float)((double)(qr_rng_next(&rng) % 1000 + 1) * 1e-6) : 0.9f;
            for (int64_t k = 0; k < C * T; k++) {   /* w - wz inside int8, at its ends now and then */
                uint64_t r = qr_rng_next(&rng);
                int32_t d = small ? (int32_t)(r % 7) - 3 : (r & 7) == 0 ? -128 : (r & 7) == 1 ? 127 : (int32_t)((r >> 8) % 256) - 128;
                int32_t v = QR_MAX(ws ? -128 : 0, QR_MIN(ws ? 127 : 255, d + wz[m]));
                ((uint8_t *)w)[m * C * T + k] = (uint8_t)v;
            }
        }
        const bool out_s8 = wi % 4 == 1;
        const int32_t lo = out_s8 ? -100 : (wi % 4 == 2 ? 10 : 0), hi = out_s8 ? 127 : 250, yz = out_s8 ? -3 : 7;
        const bool per_m_mult = wi % 5 != 0, with_bias = wi % 3 != 1;
        /* the reference here */
        uint8_t *want = malloc((size_t)(M * ldy)), *got = malloc((size_t)(M * ldy));
        memset(want, 0x3c, (size_t)(M * ldy));
        for (int64_t m = 0; m < M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t acc = 0;
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t kh = 0; kh < q->KH; kh++)
                            for (int64_t kw = 0; kw < q->KW; kw++) {
                                int64_t ih = oh * q->sh - q->ph + kh * q->dh, iw = ow * q->sw - q->pw + kw * q->dw;
                                if (ih < 0 || ih >= q->H || iw < 0 || iw >= q->W) continue;
                                int64_t xv = xs ? ((int8_t *)x)[(c * q->H + ih) * q->W + iw] : x[(c * q->H + ih) * q->W + iw];
                                int64_t wv = ws ? w[(m * C + c) * T + kh * q->KW + kw] : ((uint8_t *)w)[(m * C + c) * T + kh * q->KW + kw];
                                acc += (xv - xz) * (wv - wz[m]);
                            }
                    acc = (int64_t)(int32_t)(uint32_t)(uint64_t)acc + (with_bias ? bias[m] : 0);
                    want[m * ldy + oh * OW + ow] = (uint8_t)qt__k_rq1(acc, mult[per_m_mult ? m : 0], yz, lo, hi);
                }
        uint8_t *xn = qr_aligned_alloc((size_t)(q->H * q->W * Cp) + 64);
        qr_q8_to_nhwc__ref(x, xs, C, q->H * q->W, q->H * q->W, Cp, (uint8_t)(xz + (xs ? 128 : 0)), xn);
        QrQ8ConvNhwc cx = { xn, xz + (xs ? 128 : 0), C, Cp, q->H, q->W, q->KH, q->KW, q->sh, q->sw, q->dh, q->dw, q->ph, q->pw, OH, OW,
                            NULL, false, NULL };
        /* the same, the kernel writing the channels-last image itself from the NCHW one */
        uint8_t *xf = qr_aligned_alloc((size_t)(q->H * q->W * Cp) + 64);
        QrQ8ConvNhwc cs = cx;
        cs.x = cs.fill = xf;
        cs.src = x;
        cs.src_signed = xs;
        QrQ8Requant rq = { with_bias ? bias : NULL, 1, 0, mult, per_m_mult ? 1 : 0, 0, yz, lo, hi, got, ldy, 1 };
        /* __ref against the loop */
        size_t nb = qr_q8_conv_nhwc_pack__ref(M, C, q->KH, q->KW, w, ws, wz, 1, NULL);
        QT_CHECKF(nb > 0, "ref pack refused window %d", wi);
        void *pref = qr_aligned_alloc(nb);
        qr_q8_conv_nhwc_pack__ref(M, C, q->KH, q->KW, w, ws, wz, 1, pref);
        memset(got, 0x3c, (size_t)(M * ldy));
        QT_CHECK(qr_q8_conv_nhwc_rq__ref(M, pref, &cx, &rq));
        QT_CHECKF(memcmp(got, want, (size_t)(M * ldy)) == 0, "ref: window %d C=%lld M=%lld", wi, (long long)C, (long long)M);
        memset(got, 0x3c, (size_t)(M * ldy));
        memset(xf, 0xa5, (size_t)(q->H * q->W * Cp));
        QT_CHECK(qr_q8_conv_nhwc_rq__ref(M, pref, &cs, &rq));
        QT_CHECKF(memcmp(got, want, (size_t)(M * ldy)) == 0, "ref from NCHW: window %d", wi);
        for (int l = 0; l < nl; l++) {
            if (!lv[l].q8_conv_nhwc_rq) continue;
            nb = lv[l].q8_conv_nhwc_pack(M, C, q->KH, q->KW, w, ws, wz, 1, NULL);
            void *pk = qr_aligned_alloc(nb);
            lv[l].q8_conv_nhwc_pack(M, C, q->KH, q->KW, w, ws, wz, 1, pk);
            QT_CHECKF(!lv[l].q8_conv_nhwc_rq(M, pref, &cx, &rq), "%s took the ref's packing", qr_isa_name(lv[l].isa));
            QT_CHECKF(!lv[l].q8_conv_nhwc_rq(M + 1, pk, &cx, &rq), "%s took a packing for another M", qr_isa_name(lv[l].isa));
            for (int threads = 1; threads <= 3; threads++) {
                QT_OK(qr_pool_init(threads));
                memset(got, 0x3c, (size_t)(M * ldy));
                QT_CHECK(lv[l].q8_conv_nhwc_rq(M, pk, &cx, &rq));
                QT_CHECKF(memcmp(got, want, (size_t)(M * ldy)) == 0, "%s: window %d C=%lld M=%lld x %s w %s, %d threads",
                          qr_isa_name(lv[l].isa), wi, (long long)C, (long long)M, xs ? "s8" : "u8", ws ? "s8" : "u8", threads);
                memset(got, 0x3c, (size_t)(M * ldy));
                memset(xf, 0xa5, (size_t)(q->H * q->W * Cp));
                QT_CHECK(lv[l].q8_conv_nhwc_rq(M, pk, &cs, &rq));
                QT_CHECKF(memcmp(got, want, (size_t)(M * ldy)) == 0, "%s from NCHW: window %d C=%lld M=%lld, %d threads",
                          qr_isa_name(lv[l].isa), wi, (long long)C, (long long)M, threads);
            }
            n_run++;
            qr_aligned_free(pk);
        }
        qr_aligned_free(pref);
        /* a weight whose w - wz leaves int8: refused by every packer */
        ((uint8_t *)w)[0] = ws ? 127 : 255;
        int32_t wz_far[128];
        for (int64_t m = 0; m < M; m++) wz_far[m] = ws ? -128 : 0;
        if (ws || ((uint8_t *)w)[0] - wz_far[0] > 127) {
            nb = qr_q8_conv_nhwc_pack__ref(M, C, q->KH, q->KW, w, ws, wz_far, 1, NULL);
            void *pk = qr_aligned_alloc(nb);
            QT_CHECK(nb > 0 && qr_q8_conv_nhwc_pack__ref(M, C, q->KH, q->KW, w, ws, wz_far, 1, pk) == 0);
            qr_aligned_free(pk);
            for (int l = 0; l < nl; l++) {
                if (!lv[l].q8_conv_nhwc_pack) continue;
                nb = lv[l].q8_conv_nhwc_pack(M, C, q->KH, q->KW, w, ws, wz_far, 1, NULL);
                pk = qr_aligned_alloc(nb);
                QT_CHECKF(nb > 0 && lv[l].q8_conv_nhwc_pack(M, C, q->KH, q->KW, w, ws, wz_far, 1, pk) == 0,
                          "%s packed weights that leave int8", qr_isa_name(lv[l].isa));
                qr_aligned_free(pk);
            }
        }
        qr_aligned_free(x);
        qr_aligned_free(xn);
        qr_aligned_free(xf);
        free(w);
        free(want);
        free(got);
    }
    QT_OK(qr_pool_init(0));
    QrCpu cpu;
    qr_cpu_detect(&cpu);
    QT_CHECKF(n_run > 0 || !cpu.avx512vnni, "the VNNI channels-last convolution was not tested");
}

/* Depthwise convolution with the requantization fused (q8_dwconv2d_rq): __ref against the
 * int64 loop of test_q8_dwconv2d plus the documented requantization, every level with the
 * kernel bit-exact with __ref where it takes the geometry (and writing nothing where it does
 * not), three planes a call (apart by more than a plane, each with its own weights and
 * requantization), both signednesses, zero points at the ends, weights at -128 / 127, int8 and
 * uint8 outputs with narrowed clamps; nothing written between or past the planes. */
static void test_q8_dwconv2d_rq(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 71;
    int n_run = 0;
    enum { NPL_MAX = 37 };
    for (int wi = 0; wi < QR_ARRAY_LEN(qt__k_qwins); wi++)
        for (int sg = 0; sg < 4; sg++) {
            const int64_t NPL = sg < 2 ? 3 : NPL_MAX;   /* 37: two blocks of 16 planes and a tail */
            const QtQWin *q = &qt__k_qwins[wi];
            const int64_t HW = q->H * q->W, ldx = HW + 7;
            uint8_t *x = qt__k_randq(NPL * ldx, 1, sg & 1, &rng);
            int32_t xz = (sg & 1) ? (wi % 3 == 0 ? 127 : wi % 3 == 1 ? -128 : 5) : (wi % 3 == 0 ? 255 : wi % 3 == 1 ? 0 : 131);
            const bool small = (wi + sg) % 3 == 0;   /* near the zero point, multiplier near 1: a sum off by one shows */
            if (small)
                for (int64_t i = 0; i < NPL * ldx; i++) {
                    int32_t v = QR_MAX((sg & 1) ? -128 : 0, QR_MIN((sg & 1) ? 127 : 255, xz + (int32_t)(qr_rng_next(&rng) % 9) - 4));
                    x[i] = (uint8_t)v;
                }
            QrQ8Win p = qt__k_win(q, x, sg & 1, xz);
            const int64_t T = q->KH * q->KW, P = p.OH * p.OW, ldy = P + 5;
            int8_t w[NPL_MAX * 128];
            for (int64_t k = 0; k < NPL * T; k++) {
                uint64_t r = qr_rng_next(&rng);
                w[k] = small ? (int8_t)((int64_t)(r % 9) - 4) : (r & 7) == 0 ? 127 : (r & 7) == 1 ? -128 : (int8_t)((int64_t)(r >> 8) % 256 - 128);
            }
            const bool out_s8 = (wi + sg) % 2 == 1;
            QrQ8PlaneRq rq[NPL_MAX];
            for (int k = 0; k < NPL; k++) {
                rq[k] = (QrQ8PlaneRq){ (int32_t)(qr_rng_next(&rng) % 200001) - 100000,
                                       (float)((double)(qr_rng_next(&rng) % 1000 + 1) * 4e-5), out_s8 ? 5 : 120,
                                       out_s8 ? -128 : 0, out_s8 ? 100 : 255 };
                if (sg >= 2 && k % 5 == 4) rq[k].zp = out_s8 ? -7 : 3;   /* planes with their own zero points */
                if (wi % 4 == 3) rq[k].lo = out_s8 ? -20 : 30;
                if (small) { rq[k].bias = (int32_t)(qr_rng_next(&rng) % 41) - 20; rq[k].mult = 0.45f + 0.1f * (float)k; }
            }
            const size_t ny = (size_t)(NPL * ldy) + 64;
            uint8_t *want = malloc(ny), *y = malloc(ny);
            memset(want, 0x5a, ny);
            void *scratch = qr_aligned_alloc(QR_MAX(qr_q8_dwconv2d_rq_scratch(&p), qr_q8_dwconv2d_scratch(&p)));
            for (int k = 0; k < NPL; k++)
                for (int64_t oh = 0; oh < p.OH; oh++)
                    for (int64_t ow = 0; ow < p.OW; ow++) {
                        int64_t s = qt__k_dw_sum(q, x + k * ldx, sg & 1, xz, w + k * T, true, oh, ow);
                        s = (int64_t)(int32_t)(uint32_t)(uint64_t)s + rq[k].bias;
                        want[k * ldy + oh * p.OW + ow] = (uint8_t)qt__k_rq1(s, rq[k].mult, rq[k].zp, rq[k].lo, rq[k].hi);
                    }
            memset(y, 0x5a, ny);
            QT_CHECK(qr_q8_dwconv2d_rq__ref(&p, NPL, ldx, w, rq, y, ldy, scratch));
            QT_CHECKF(memcmp(y, want, ny) == 0, "ref: window %d signed %d planes %lld", wi, sg & 1, (long long)NPL);
            for (int l = 0; l < nl; l++) {
                if (!lv[l].q8_dwconv2d_rq) continue;
                memset(y, 0x5a, ny);
                const bool takes = lv[l].q8_dwconv2d_rq(&p, 0, 0, NULL, NULL, NULL, 0, NULL);
                if (!lv[l].q8_dwconv2d_rq(&p, NPL, ldx, w, rq, y, ldy, scratch)) {
                    for (size_t i = 0; i < ny; i++) QT_CHECKF(y[i] == 0x5a, "%s wrote though it declined", qr_isa_name(lv[l].isa));
                    QT_CHECKF(!takes && (q->dw != 1 || q->sw > 2 || q->KW > 8), "%s declined window %d", qr_isa_name(lv[l].isa), wi);
                    continue;
                }
                QT_CHECKF(takes, "%s: the zero-plane probe declined window %d", qr_isa_name(lv[l].isa), wi);
                QT_CHECKF(memcmp(y, want, ny) == 0, "%s window %d signed %d planes %lld", qr_isa_name(lv[l].isa), wi, sg & 1, (long long)NPL);
                n_run++;
            }
            qr_aligned_free(x);
            qr_aligned_free(scratch);
            free(want);
            free(y);
        }
    QrCpu cpu;
    qr_cpu_detect(&cpu);
    QT_CHECKF(n_run > 0 || !cpu.avx512vnni, "the VNNI depthwise kernel was not tested");
}

static void qt_kern_all(void) {
    QT_RUN(test_pool);
    QT_RUN(test_pool_nested);
    QT_RUN(test_pool_segments);
    QT_RUN(test_kern_dispatch);
    QT_RUN(test_f32_gemm);
    QT_RUN(test_f32_gemm_ex);
    QT_RUN(test_f32_gemm_bt);
    QT_RUN(test_f32_gemm_threads);
#if defined(__x86_64__)
    QT_RUN(test_f32_gemm_prefetch);
#endif
    QT_RUN(test_q_gemm);
    QT_RUN(test_q_gemm_ref);
    QT_RUN(test_q_gemm_threads);
    QT_RUN(test_requant);
    QT_RUN(test_s64_requant);
    QT_RUN(test_q8_conv_gemm);
    QT_RUN(test_q8_gemm_rq);
    QT_RUN(test_q8_pack_a);
    QT_RUN(test_q8_to_nhwc);
    QT_RUN(test_q8_conv_nhwc);
    QT_RUN(test_q8_dwconv2d);
    QT_RUN(test_q8_dwconv2d_rq);
    QT_RUN(test_q8_maxpool2d);
    QT_RUN(test_q8_eltwise);
    QT_RUN(test_conv_m1);
    QT_RUN(test_conv_m1_planes);
    QT_RUN(test_conv_gemm);
    QT_RUN(test_maxpool);
    QT_RUN(test_pair_stats);
    QT_RUN(test_pair_stats_avx512);
    QT_RUN(test_moment_blocks);
    QT_RUN(test_rtol);
    QT_RUN(test_rtol_special);
    QT_RUN(test_kern_exp);
    QT_RUN(test_kern_kl_side);
    QT_RUN(test_kern_sqsum);
    QT_RUN(test_kern_q8_stats);
    QT_RUN(test_kern_wquant);
    QT_RUN(test_kern_tie_scan);
    QT_RUN(test_hist_fakequant);
    QT_RUN(test_trans);
    QT_RUN(test_layernorm_kern);
    QT_RUN(test_nn_fast_paths);
    QT_RUN(test_nn_transpose);
}
