/* tests/kern_f32 — the float kernels behind fused execution, on every level the CPU has:
 * the fused-steps kernel bit-exact with __ref (and __ref against the layers it stands for),
 * fused GEMM / convolution epilogues bit-identical to the unfused sequence on the same
 * level and within tolerance of __ref, narrow tail panels, thread-count independence, and
 * the summation orders that make the float baseline ONNX Runtime's (batch-1 Gemm, conv GEMM). */

/* Levels and random data: qt__k_levels / qt__k_randf (tests/test_kern.c). */

/* Same bits, or both NaN (NaN payloads are not compared). */
static bool qt__kf_same(float a, float b) { return (a != a && b != b) || memcmp(&a, &b, sizeof a) == 0; }

/* ==== fused steps ================================================================== */

/* The ref steps against the layers they stand for: Relu's x > 0 ? x : 0 (-0 becomes +0,
 * NaN kept), Clip's compare order (-0 kept, NaN kept), QuantizeLinear -> DequantizeLinear
 * as ops/qdq.c computes it, BatchNormalization's two roundings, operand order. */
static void test_f32_steps_ref(void) {
    const float nz = -0.0f;
    float y;
    QrF32Step relu = { .op = QR_F32_STEP_RELU };
    qr_f32_steps__ref(&relu, 1, &nz, &y, 1, 0, 0);
    QT_CHECK(y == 0.0f && !signbit(y));
    float xs[4] = { -2.0f, 3.5f, NAN, -INFINITY }, ys[4];
    qr_f32_steps__ref(&relu, 1, xs, ys, 4, 0, 0);
    QT_CHECK(ys[0] == 0.0f && ys[1] == 3.5f && ys[2] != ys[2] && ys[3] == 0.0f);
    QrF32Step clip = { .op = QR_F32_STEP_CLAMP, .lo = 0.0f, .hi = 6.0f };
    qr_f32_steps__ref(&clip, 1, &nz, &y, 1, 0, 0);
    QT_CHECK(y == 0.0f && signbit(y));   /* Clip keeps -0 (it is not below 0) */
    float cs[3] = { -1.0f, 7.0f, NAN };
    qr_f32_steps__ref(&clip, 1, cs, ys, 3, 0, 0);
    QT_CHECK(ys[0] == 0.0f && ys[1] == 6.0f && ys[2] != ys[2]);
    /* operand order */
    const float p2 = 2.0f;
    QrF32Step sub = { .op = QR_F32_STEP_SUB, .p = &p2 }, div = { .op = QR_F32_STEP_DIV, .swap = true, .p = &p2 };
    float eight = 8.0f;
    qr_f32_steps__ref(&sub, 1, &eight, &y, 1, 0, 0);
    QT_CHECK(y == 6.0f);
    qr_f32_steps__ref(&div, 1, &eight, &y, 1, 0, 0);
    QT_CHECK(y == 0.25f);
    /* fake quant = QuantizeLinear (quant.c) then DequantizeLinear, per type and zero point */
    static const QrDType types[] = { QR_DT_U8, QR_DT_S8, QR_DT_U16, QR_DT_S16, QR_DT_S4, QR_DT_U4 };
    uint64_t rng = 5;
    for (int ti = 0; ti < QR_ARRAY_LEN(types); ti++) {
        QrQuantRange r;
        QT_CHECK(qr_quant_range(types[ti], &r));
        const float scale = 0.037f;
        const int32_t zp = r.lo + (r.hi - r.lo) / 3;
        QrF32Step fq = { .op = QR_F32_STEP_FQ, .p = &scale, .zp = &zp, .qmin = r.lo, .qmax = r.hi };
        for (int i = 0; i < 2000; i++) {
            float x = (float)(qr_rng_normal(&rng) * (i % 3 ? 3.0 : 3000.0));
            if (i == 0) x = NAN;
            if (i == 1) x = 0.5f * scale;   /* a tie: half to even */
            if (i == 2) x = 1.5f * scale;
            int32_t q = qr_quant_quantize_f32(x, scale, zp, r);
            float want = (float)(q - zp) * scale, got;
            qr_f32_steps__ref(&fq, 1, &x, &got, 1, 0, 0);
            QT_CHECKF(memcmp(&got, &want, 4) == 0, "%s x=%.9g: %.9g want %.9g", qr_dtype_name(types[ti]), x, got, want);
        }
    }
    /* BatchNormalization: x * m rounded, then + a rounded (not one fma) */
    int fma_differs = 0;
    for (int i = 0; i < 2000; i++) {
        float x = (float)qr_rng_normal(&rng), m = (float)qr_rng_normal(&rng), a = (float)qr_rng_normal(&rng);
        volatile float prod = x * m;
        float want = prod + a, got;
        QrF32Step aff = { .op = QR_F32_STEP_AFFINE, .p = &m, .q = &a };
        qr_f32_steps__ref(&aff, 1, &x, &got, 1, 0, 0);
        QT_CHECKF(memcmp(&got, &want, 4) == 0, "affine %.9g*%.9g+%.9g: %.9g want %.9g", x, m, a, got, want);
        fma_differs += fmaf(x, m, a) != want;
    }
    QT_CHECK(fma_differs > 0);   /* the check above can tell the two apart */
}

/* A random step for tests: per channel or per tensor, parameters in pbuf (C values). */
static QrF32Step qt__kf_step(uint64_t *rng, int64_t C, float *pbuf, float *qbuf, int32_t *zbuf, const float *t) {
    QrF32Step s = { .op = (QrF32StepOp)(qr_rng_next(rng) % 9) };
    s.swap = qr_rng_next(rng) & 1;
    s.pc = qr_rng_next(rng) & 1;
    for (int64_t c = 0; c < C; c++) {
        pbuf[c] = (float)qr_rng_normal(rng);
        qbuf[c] = (float)qr_rng_normal(rng);
        zbuf[c] = (int32_t)(qr_rng_next(rng) % 200) - 100;
    }
    s.p = pbuf;
    s.q = qbuf;
    switch (s.op) {
    case QR_F32_STEP_ADD_T: s.t = t; break;
    case QR_F32_STEP_CLAMP: s.lo = -0.7f; s.hi = (qr_rng_next(rng) & 1) ? 0.9f : INFINITY; break;
    case QR_F32_STEP_FQ:
        for (int64_t c = 0; c < C; c++) { pbuf[c] = 0.01f + fabsf(pbuf[c]) * 0.05f; zbuf[c] = zbuf[c] / 4; }
        s.zp = zbuf;
        s.qmin = -128;
        s.qmax = 127;
        break;
    default: break;
    }
    return s;
}

/* Every level's steps kernel bit-exact with ref: random chains of 1-8 steps over lengths
 * 0..130 and 1000 (tails), special values, in place and not, channels 0..2. */
static void test_f32_steps_levels(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 77;
    enum { C = 3, NMAX = 1000 };
    float pb[8][C], qb[8][C];
    int32_t zb[8][C];
    float *x = qt__k_randf(NMAX, &rng), *t = qt__k_randf(NMAX + 10, &rng);
    float *yr = qr_aligned_alloc(NMAX * sizeof(float)), *y = qr_aligned_alloc(NMAX * sizeof(float));
    const float special[] = { NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -3e38f, 0.5f };
    for (int i = 0; i < NMAX; i += 7) x[i] = special[(i / 7) % QR_ARRAY_LEN(special)];
    for (int trial = 0; trial < 400; trial++) {
        int ns = 1 + (int)(qr_rng_next(&rng) % 8);
        QrF32Step st[8];
        for (int k = 0; k < ns; k++) st[k] = qt__kf_step(&rng, C, pb[k], qb[k], zb[k], t);
        int64_t n = trial < 131 ? trial : (trial % 2 ? NMAX : (int64_t)(qr_rng_next(&rng) % NMAX));
        int64_t ch = trial % C, off = (int64_t)(qr_rng_next(&rng) % 10);
        qr_f32_steps__ref(st, ns, x, yr, n, ch, off);
        for (int l = 0; l < nl; l++) {
            for (int inplace = 0; inplace < 2; inplace++) {
                if (inplace) memcpy(y, x, (size_t)n * sizeof(float));
                lv[l].f32_steps(st, ns, inplace ? y : x, y, n, ch, off);
                for (int64_t i = 0; i < n; i++)
                    QT_CHECKF(qt__kf_same(y[i], yr[i]), "%s trial %d (%d steps, first op %d) n=%lld [%lld]: %.9g vs ref %.9g",
                              qr_isa_name(lv[l].isa), trial, ns, (int)st[0].op, (long long)n, (long long)i, y[i], yr[i]);
            }
        }
    }
    qr_aligned_free(x);
    qr_aligned_free(t);
    qr_aligned_free(yr);
    qr_aligned_free(y);
}

/* ==== fused GEMM epilogues ========================================================= */

/* What the unfused layers compute after a GEMM whose output (bias included) is C: a
 * residual Add, Clip, Relu, then the post steps; applied in place with ref arithmetic. */
typedef struct QtKfPost { const QrF32Step *s; int ns; int64_t ld; } QtKfPost;

static void qt__kf_post(void *ctx, float *c, int64_t ldc, int64_t m0, int64_t rows, int64_t n0, int64_t cols) {
    const QtKfPost *p = ctx;
    for (int64_t r = 0; r < rows; r++)
        qr_f32_steps__ref(p->s, p->ns, c + r * ldc, c + r * ldc, cols, m0 + r, (m0 + r) * p->ld + n0);
}

static void qt__kf_unfused_tail(const QrF32Fused *f, float *C, int64_t M, int64_t N, int64_t ldc) {
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float v = C[m * ldc + n];
            if (f->res) {
                float r = f->res[m * f->ldres + n];
                v = f->res_first ? r + v : v + r;
            }
            v = v < f->ep.lo ? f->ep.lo : v;
            v = v > f->ep.hi ? f->ep.hi : v;
            if (f->relu) v = v > 0 ? v : (v != v ? v : 0.0f);
            C[m * ldc + n] = v;
        }
    if (f->post) f->post(f->post_ctx, C, ldc, 0, M, 0, N);
}

typedef struct { int64_t M, N, K; } QtKfShape;

/* Fused GEMM on every level: bit-identical to gemm_ex (bias) followed by the unfused
 * layers on the same level; within tolerance of ref; the same bits for 1-3 threads.
 * Shapes cover narrow last panels (N mod 32 in 1..31), several K blocks and row tails. */
static void test_f32_gemm_fused(void) {
    static const QtKfShape shapes[] = {
        { 8, 49, 320 }, { 13, 17, 40 }, { 64, 196, 96 }, { 5, 1, 30 }, { 24, 8, 300 }, { 9, 24, 7 },
        { 70, 31, 513 }, { 3, 33, 1 }, { 130, 100, 64 }, { 16, 9, 260 }, { 40, 800, 48 }, { 12, 34, 100 },
        { 20, 50, 300 },
        /* a last column alone in its panel (49 = 32 + 16 + 1, 17 = 16 + 1, 33 = 32 + 1, 81):
         * qr__k_f32_col1's dot products down the rows, more than 16 rows, several K blocks */
        { 96, 49, 160 }, { 70, 49, 520 }, { 64, 17, 24 }, { 33, 81, 40 }, { 200, 33, 300 },
    };
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 91;
    for (int si = 0; si < QR_ARRAY_LEN(shapes); si++) {
        const QtKfShape *s = &shapes[si];
        const int64_t M = s->M, N = s->N, K = s->K, ldc = N + 2;
        float *A = qt__k_randf(M * K, &rng), *B = qt__k_randf(K * N, &rng), *bias = qt__k_randf(M, &rng);
        float *R = qt__k_randf(M * ldc, &rng), *t = qt__k_randf(M * ldc, &rng);
        float *pm = qt__k_randf(M, &rng), *pa = qt__k_randf(M, &rng);
        float *C1 = qr_aligned_alloc((size_t)(M * ldc) * sizeof(float)), *C2 = qr_aligned_alloc((size_t)(M * ldc) * sizeof(float));
        float *Cr = qr_aligned_alloc((size_t)(M * ldc) * sizeof(float));
        const float scale = 0.05f;
        const int32_t zp = 3;
        QrF32Step post[3] = { { .op = QR_F32_STEP_AFFINE, .pc = 1, .p = pm, .q = pa },
                              { .op = QR_F32_STEP_ADD_T, .t = t, .swap = true },
                              { .op = QR_F32_STEP_FQ, .p = &scale, .zp = &zp, .qmin = -128, .qmax = 127 } };
        QtKfPost pc = { post, 3, ldc };
        /* v & 8: a convolution's GEMM (conv_n: the bias after the K blocks); v & 16: a MatMul's
         * summed so (conv_n) with its full panels packed (pack_panels): the bits of B read in place */
        for (int v = 0; v < 24; v++) {
            QrF32Fused f;
            memset(&f, 0, sizeof f);
            f.ep = (QrF32Epilogue){ bias, v & 2 ? -0.5f : -INFINITY, v & 2 ? 1.5f : INFINITY };
            if (v & 1) { f.res = R; f.ldres = ldc; f.res_first = v & 4; }
            f.relu = (v & 7) >= 4;
            if ((v & 7) == 3 || (v & 7) == 7) { f.post = qt__kf_post; f.post_ctx = &pc; }
            if (v & 24) f.conv_n = N;
            f.pack_panels = v & 16;
            qr_f32_gemm_fused__ref(M, N, K, A, K, B, N, Cr, ldc, false, &f);
            for (int l = 0; l < nl; l++) {
                QrF32Epilogue ep = { bias, -INFINITY, INFINITY };
                const QrF32Fused fb = { .ep = ep, .conv_n = N };   /* the bias alone, summed the same way */
                if (v & 24) lv[l].f32_gemm_fused(M, N, K, A, K, B, N, C1, ldc, false, &fb);
                else lv[l].f32_gemm_ex(M, N, K, A, K, B, N, C1, ldc, false, &ep);
                qt__kf_unfused_tail(&f, C1, M, N, ldc);
                for (int threads = 1; threads <= 3; threads++) {
                    QT_OK(qr_pool_init(threads));
                    lv[l].f32_gemm_fused(M, N, K, A, K, B, N, C2, ldc, false, &f);
                    for (int64_t m = 0; m < M; m++)
                        for (int64_t n = 0; n < N; n++) {
                            float a = C1[m * ldc + n], b = C2[m * ldc + n], r = Cr[m * ldc + n];
                            QT_CHECKF(qt__kf_same(a, b), "%s M=%lld N=%lld K=%lld v=%d %d threads: [%lld][%lld] fused %.9g unfused %.9g",
                                      qr_isa_name(lv[l].isa), (long long)M, (long long)N, (long long)K, v, threads,
                                      (long long)m, (long long)n, b, a);
                            /* vs ref: the GEMM sums round differently (a fake-quant step can then
                             * move by one step: variants with post are compared bit-wise above only) */
                            if (f.post) continue;
                            double sa = fabs(bias[m]) + (f.res ? fabs(R[m * ldc + n]) : 0.0);
                            for (int64_t k = 0; k < K; k++) sa += fabs((double)A[m * K + k] * B[k * N + n]);
                            QT_CHECKF(fabs((double)b - r) <= QR_KERN_F32_DOT_TOL(K + 2) * sa + 1e-30,
                                      "%s v=%d [%lld][%lld] %.9g vs ref %.9g", qr_isa_name(lv[l].isa), v, (long long)m,
                                      (long long)n, b, r);
                        }
                }
            }
        }
        QT_OK(qr_pool_init(0));
        float *all[] = { A, B, bias, R, t, pm, pa, C1, C2, Cr };
        for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
    }
}

/* Convolution GEMM with fused layers on every level: bit-identical to conv_gemm (bias) then
 * the unfused layers, over 3x3 / 7x7 / 1x5 windows, strides 1-3, pads, dilation. */
static void test_f32_conv_gemm_fused(void) {
    typedef struct { int64_t C, H, W, KH, KW, s, d, p, M; } QtConv;
    static const QtConv cs[] = {
        { 3, 23, 23, 7, 7, 2, 1, 3, 16 }, { 8, 14, 14, 3, 3, 1, 1, 1, 24 }, { 5, 7, 7, 3, 3, 1, 1, 1, 40 },
        { 4, 17, 9, 1, 5, 1, 1, 2, 9 },   { 6, 15, 15, 3, 3, 2, 1, 1, 17 }, { 2, 11, 40, 3, 3, 3, 2, 2, 8 },
        { 16, 28, 28, 3, 3, 1, 1, 1, 33 },
        /* rows in several tasks, B prepacked, the last panel in the wide kernel (17 and 4 columns) */
        { 64, 7, 7, 3, 3, 1, 1, 1, 200 }, { 24, 14, 14, 3, 3, 1, 1, 1, 264 },
    };
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8);
    uint64_t rng = 123;
    for (int ci = 0; ci < QR_ARRAY_LEN(cs); ci++) {
        const QtConv *q = &cs[ci];
        QrF32ConvB b = { NULL, q->C, q->H, q->W, q->KH, q->KW, q->s, q->s, q->d, q->d, q->p, q->p,
                         (q->H + 2 * q->p - q->d * (q->KH - 1) - 1) / q->s + 1, (q->W + 2 * q->p - q->d * (q->KW - 1) - 1) / q->s + 1 };
        const int64_t P = b.OH * b.OW, K = q->C * q->KH * q->KW, M = q->M;
        float *x = qt__k_randf(q->C * q->H * q->W, &rng), *A = qt__k_randf(M * K, &rng), *bias = qt__k_randf(M, &rng);
        float *R = qt__k_randf(M * P, &rng), *pm = qt__k_randf(M, &rng), *pa = qt__k_randf(M, &rng);
        float *Y1 = qr_aligned_alloc((size_t)(M * P) * sizeof(float)), *Y2 = qr_aligned_alloc((size_t)(M * P) * sizeof(float));
        b.x = x;
        QrF32Step post[2] = { { .op = QR_F32_STEP_DIV, .pc = 1, .p = pm }, { .op = QR_F32_STEP_AFFINE, .pc = 1, .p = pm, .q = pa } };
        QtKfPost pc = { post, 2, P };
        for (int v = 0; v < 4; v++) {
            QrF32Fused f;
            memset(&f, 0, sizeof f);
            f.ep = (QrF32Epilogue){ bias, v == 2 ? 0.0f : -INFINITY, v == 2 ? 6.0f : INFINITY };
            if (v & 1) { f.res = R; f.ldres = P; }
            f.relu = v == 1;
            if (v == 3) { f.post = qt__kf_post; f.post_ctx = &pc; }
            for (int l = 0; l < nl; l++) {
                QrF32Epilogue ep = { bias, -INFINITY, INFINITY };
                lv[l].f32_conv_gemm(M, A, K, &b, Y1, P, &ep);
                qt__kf_unfused_tail(&f, Y1, M, P, P);
                lv[l].f32_conv_gemm_fused(M, A, K, &b, Y2, P, &f);
                for (int64_t i = 0; i < M * P; i++)
                    QT_CHECKF(qt__kf_same(Y1[i], Y2[i]), "%s conv %d v=%d: [%lld] fused %.9g unfused %.9g",
                              qr_isa_name(lv[l].isa), ci, v, (long long)i, Y2[i], Y1[i]);
            }
        }
        float *all[] = { x, A, bias, R, pm, pa, Y1, Y2 };
        for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
    }
}

/* ==== ONNX Runtime's summation orders =============================================== */

/* sum_k a[k] * b[k*bs] over [k0, k1), one fused multiply-add after another from +0. */
static float qt__kf_fma_chain(const float *a, const float *b, int64_t bs, int64_t k0, int64_t k1) {
    float s = 0.0f;
    for (int64_t k = k0; k < k1; k++) s = fmaf(a[k], b[k * bs], s);
    return s;
}

/* A convolution output's sum as MlasConv makes it: one chain per K block of kc, the blocks added in order. */
static float qt__kf_conv_sum(const float *a, const float *b, int64_t bs, int64_t K, int64_t kc) {
    float v = 0.0f;
    for (int64_t k0 = 0; k0 < K; k0 += kc) {
        float blk = qt__kf_fma_chain(a, b, bs, k0, QR_MIN(K, k0 + kc));
        v = k0 ? v + blk : blk;
    }
    return v;
}

/* The batch-1 Gemm (N = 1 GEMM): on every SIMD level, C[m] = C0[m] + chain(block 0),
 * then + chain(block i) for each further block of 256 — ORT's packed SGEMM with beta 1 —
 * exactly, for K below, at and across the block size, and without accumulate (C0 = +0,
 * no add). The ref level sums a plain loop (QR_KERN_F32_DOT_TOL, test_kern). */
static void test_f32_gemv_order(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8), cases = 0;
    uint64_t rng = 91;
    static const int64_t Ks[] = { 1, 7, 255, 256, 257, 512, 1280 }, Ms[] = { 1, 9, 1000 };
    for (int ki = 0; ki < QR_ARRAY_LEN(Ks); ki++)
        for (int mi = 0; mi < QR_ARRAY_LEN(Ms); mi++)
            for (int acc = 0; acc <= 1; acc++) {
                const int64_t K = Ks[ki], M = Ms[mi];
                float *A = qt__k_randf(M * K, &rng), *b = qt__k_randf(K, &rng), *c0 = qt__k_randf(M, &rng);
                float *want = qr_aligned_alloc((size_t)M * sizeof(float)), *y = qr_aligned_alloc((size_t)M * sizeof(float));
                for (int64_t m = 0; m < M; m++) {
                    float v = qt__kf_fma_chain(A + m * K, b, 1, 0, QR_MIN(K, 256));
                    if (acc) v = c0[m] + v;
                    for (int64_t k0 = 256; k0 < K; k0 += 256) v = v + qt__kf_fma_chain(A + m * K, b, 1, k0, QR_MIN(K, k0 + 256));
                    want[m] = v;
                }
                for (int l = 0; l < nl; l++) {
                    if (lv[l].isa != QR_ISA_AVX2 && lv[l].isa != QR_ISA_AVX512 && lv[l].isa != QR_ISA_VNNI) continue;   /* x86-64 SIMD levels: ORT order */
                    memcpy(y, c0, (size_t)M * sizeof(float));
                    lv[l].f32_gemm(M, 1, K, A, K, b, 1, y, 1, acc);
                    int64_t bad = -1;
                    for (int64_t m = 0; m < M && bad < 0; m++)
                        if (!qt__kf_same(y[m], want[m])) bad = m;
                    QT_CHECKF(bad < 0, "%s M=%lld K=%lld acc=%d: C[%lld] = %.9g want %.9g", qr_isa_name(lv[l].isa),
                              (long long)M, (long long)K, acc, (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                    cases++;
                }
                float *all[] = { A, b, c0, want, y };
                for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
            }
    if (!cases) QT_SKIP("no x86-64 SIMD level on this CPU (ONNX Runtime's order is x86-64's)");
    printf("gemv order: %d level x shape cases exact\n", cases);
}

/* The batch-1 transposed-B product (QrF32GemvM1tFn) from its definition in the test's own
 * words: lane l of row n sums products k = l mod 8 from +0, then the position of n in its
 * block of four picks the reduction. */
static float qt__kf_gemv_row(int64_t n, int64_t N, int64_t K, const float *a, const float *b) {
    float l[8] = { 0 };
    for (int64_t k = 0; k < K; k++) {
        volatile float p = a[k] * b[k];
        l[k % 8] = l[k % 8] + p;
    }
    if (n < N / 4 * 4) return (((l[0] + l[1]) + l[2]) + l[3]) + (((l[4] + l[5]) + l[6]) + l[7]);
    if (N % 4 >= 2 && n < N / 4 * 4 + 2) return ((l[2] + l[0]) + (l[6] + l[4])) + ((l[3] + l[1]) + (l[7] + l[5]));
    return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* f32_gemm_fused / f32_gemm_bt_fused with B given as 8-bit integers (QrF32Fused.qb) on every
 * level bit-exact with the same call on B dequantized first as DequantizeLinear does ((float)(q -
 * zp) * scale): int8 and uint8, one scale or one per column of B (N), zero points or none, B plain
 * (K, N) or transposed (N, K), MatMul's adapted K blocks (conv_n, pack_panels) and the plain
 * ones, a per-column residual, accumulate; shapes with several K blocks, narrow last panels (N =
 * 72: 64 + 8) and a last column alone (65), few rows (5: nothing packed for a float B), one
 * column (N = 1: the dot products), at 1 to 3 threads. */
static void test_f32_gemm_qb(void) {
    QrKernels lv[8];
    const int nl = qt__k_levels(lv, 8), saved = qr_pool_threads();
    int cases = 0;
    uint64_t rng = 4711;
    static const int64_t shapes[][3] = { { 40, 72, 300 }, { 5, 65, 70 }, { 33, 1, 50 }, { 70, 130, 513 } };
    for (int si = 0; si < QR_ARRAY_LEN(shapes); si++)
        for (int v = 0; v < 16; v++) {
            const int64_t M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
            const bool trans = v & 1, sgn = v & 2, per_col = v & 4, with_zp = v & 8;
            const bool adapted = (v + si) % 3 != 0, acc = (v + si) % 5 == 0, res = (v + si) % 4 == 1;
            uint8_t *q = qr_aligned_alloc((size_t)(N * K));
            for (int64_t i = 0; i < N * K; i++) q[i] = (uint8_t)qr_rng_next(&rng);
            float *sc = qr_aligned_alloc((size_t)N * sizeof(float));
            int32_t *zp = qr_aligned_alloc((size_t)N * sizeof(int32_t));
            for (int64_t n = 0; n < N; n++) {
                sc[n] = 0.0005f + 0.001f * (float)(qr_rng_next(&rng) % 100);
                zp[n] = sgn ? (int32_t)(qr_rng_next(&rng) % 21) - 10 : (int32_t)(qr_rng_next(&rng) % 256);
            }
            const int64_t ss = per_col ? 1 : 0;
            const QrF32QuantB qb = { q, sgn, sc, ss, with_zp ? zp : NULL, ss };
            float *B = qr_aligned_alloc((size_t)(N * K) * sizeof(float));
            for (int64_t i = 0; i < N * K; i++) {   /* element i of q's layout; its column n of B */
                const int64_t n = trans ? i / K : i % N;
                const int32_t x = sgn ? (int32_t)(int8_t)q[i] : (int32_t)q[i];
                B[i] = (float)(x - (with_zp ? zp[n * ss] : 0)) * sc[n * ss];
            }
            float *A = qt__k_randf(M * K, &rng), *C0 = qt__k_randf(M * N, &rng), *rb = qt__k_randf(N, &rng);
            float *want = qr_aligned_alloc((size_t)(M * N) * sizeof(float)), *got = qr_aligned_alloc((size_t)(M * N) * sizeof(float));
            QrF32Fused f = { .ep = { NULL, -INFINITY, INFINITY }, .conv_n = adapted ? N : 0, .pack_panels = adapted,
                             .res = res ? rb : NULL, .ldres = 0 };
            QrF32Fused fq = f;
            fq.qb = &qb;
            for (int l = 0; l < nl; l++)
                for (int th = 1; th <= 3; th++) {
                    qr_pool_init(th);
                    memcpy(want, C0, (size_t)(M * N) * sizeof(float));
                    memcpy(got, C0, (size_t)(M * N) * sizeof(float));
                    if (trans) {
                        lv[l].f32_gemm_bt_fused(M, N, K, A, K, B, K, want, N, acc, &f);
                        lv[l].f32_gemm_bt_fused(M, N, K, A, K, NULL, K, got, N, acc, &fq);
                    } else {
                        lv[l].f32_gemm_fused(M, N, K, A, K, B, N, want, N, acc, &f);
                        lv[l].f32_gemm_fused(M, N, K, A, K, NULL, N, got, N, acc, &fq);
                    }
                    int64_t bad = -1;
                    for (int64_t i = 0; i < M * N && bad < 0; i++)
                        if (!qt__kf_same(got[i], want[i])) bad = i;
                    QT_CHECKF(bad < 0, "%s %d threads M=%lld N=%lld K=%lld v=%d: C[%lld] = %.9g want %.9g",
                              qr_isa_name(lv[l].isa), th, (long long)M, (long long)N, (long long)K, v, (long long)bad,
                              bad < 0 ? 0.0 : got[bad], bad < 0 ? 0.0 : want[bad]);
                    cases++;
                }
            void *all[] = { q, sc, zp, B, A, C0, rb, want, got };
            for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
        }
    qr_pool_init(saved);
    printf("f32_gemm_qb: %d level cases exact\n", cases);
}

/* f32_gemv_m1t_q8 on every level bit-exact with f32_gemv_m1t's definition on B dequantized
 * first as DequantizeLinear does: int8 and uint8, one or per-row scales and zero points (or
 * none), K tails 1..17 and 1280, a row range, a padded row stride, accumulate; then the pool
 * driver qr_f32_gemv_m1t_q8 with 1 and 2 threads. */
static void test_f32_gemv_m1t_q8(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8), cases = 0;
    uint64_t rng = 321;
    static const int64_t Ns[] = { 1, 2, 3, 5, 6, 9, 1000 }, Ks[] = { 1, 7, 8, 9, 17, 1280 };
    for (int ni = 0; ni < QR_ARRAY_LEN(Ns); ni++)
        for (int ki = 0; ki < QR_ARRAY_LEN(Ks); ki++)
            for (int v = 0; v < 4; v++) {
                const int64_t N = Ns[ni], K = Ks[ki], ldb = K + (v == 1 ? 5 : 0);
                const int64_t n0 = v == 2 ? N / 3 : 0, n1 = v == 2 ? N - N / 4 : N;
                const bool acc = v & 1, sgn = v != 3, per_row = v >= 2;
                uint8_t *q = qr_aligned_alloc((size_t)(N * ldb));
                for (int64_t i = 0; i < N * ldb; i++) q[i] = (uint8_t)qr_rng_next(&rng);
                float *sc = qr_aligned_alloc((size_t)N * sizeof(float));
                int32_t *zp = qr_aligned_alloc((size_t)N * sizeof(int32_t));
                for (int64_t n = 0; n < N; n++) {
                    sc[n] = 0.001f + 0.01f * (float)(qr_rng_next(&rng) % 100);
                    zp[n] = sgn ? (int32_t)(qr_rng_next(&rng) % 21) - 10 : (int32_t)(qr_rng_next(&rng) % 256);
                }
                const int32_t *zpp = v == 0 ? NULL : zp;
                const int64_t ss = per_row ? 1 : 0;
                float *a = qt__k_randf(K, &rng), *y0 = qt__k_randf(N, &rng), *B = qr_aligned_alloc((size_t)(N * K) * sizeof(float));
                float *want = qr_aligned_alloc((size_t)N * sizeof(float)), *y = qr_aligned_alloc((size_t)N * sizeof(float));
                for (int64_t n = 0; n < N; n++) {
                    qr_q8_dequantize__ref(K, q + n * ldb, sgn, zpp ? zpp[n * ss] : 0, sc[n * ss], B + n * K);
                    want[n] = n < n0 || n >= n1 ? y0[n] : qt__kf_gemv_row(n, N, K, a, B + n * K) + (acc ? y0[n] : 0.0f);
                }
                for (int l = 0; l < nl; l++) {
                    memcpy(y, y0, (size_t)N * sizeof(float));
                    lv[l].f32_gemv_m1t_q8(n0, n1, N, K, a, q, sgn, ldb, sc, ss, zpp, ss, y, acc);
                    int64_t bad = -1;
                    for (int64_t n = 0; n < N && bad < 0; n++)
                        if (!qt__kf_same(y[n], want[n])) bad = n;
                    QT_CHECKF(bad < 0, "%s N=%lld K=%lld v=%d: y[%lld] = %.9g want %.9g", qr_isa_name(lv[l].isa), (long long)N,
                              (long long)K, v, (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                    cases++;
                }
                if (v != 2)
                    for (int th = 1; th <= 2; th++) {
                        qr_pool_init(th);
                        memcpy(y, y0, (size_t)N * sizeof(float));
                        qr_f32_gemv_m1t_q8(N, K, a, q, sgn, ldb, sc, ss, zpp, ss, y, acc);
                        int64_t bad = -1;
                        for (int64_t n = 0; n < N && bad < 0; n++)
                            if (!qt__kf_same(y[n], want[n])) bad = n;
                        QT_CHECKF(bad < 0, "qr_f32_gemv_m1t_q8 %d threads N=%lld K=%lld v=%d: y[%lld] differs", th,
                                  (long long)N, (long long)K, v, (long long)bad);
                    }
                void *all[] = { q, sc, zp, a, y0, B, want, y };
                for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
            }
    qr_pool_init(0);
    printf("f32_gemv_m1t_q8: %d level cases exact\n", cases);
}

/* f32_gemv_m1t on every level bit-exact with the definition: N in every block position
 * (1..9, 1000), K tails 1..17 and 1280/1283, a row range inside N, a padded row stride,
 * accumulate, special values (NaN, Inf, -0 products); then qr_f32_gemv_m1t (the pool driver)
 * the same with 1 and 2 threads. */
static void test_f32_gemv_m1t(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8), cases = 0;
    uint64_t rng = 123;
    static const int64_t Ns[] = { 1, 2, 3, 4, 5, 6, 7, 9, 1000 }, Ks[] = { 1, 3, 7, 8, 9, 15, 16, 17, 1280, 1283 };
    for (int ni = 0; ni < QR_ARRAY_LEN(Ns); ni++)
        for (int ki = 0; ki < QR_ARRAY_LEN(Ks); ki++)
            for (int v = 0; v < 3; v++) {
                const int64_t N = Ns[ni], K = Ks[ki], ldb = K + (v == 1 ? 5 : 0);
                const int64_t n0 = v == 2 ? N / 3 : 0, n1 = v == 2 ? N - N / 4 : N;
                const bool acc = v != 0;
                float *a = qt__k_randf(K, &rng), *B = qt__k_randf(N * ldb, &rng), *y0 = qt__k_randf(N, &rng);
                float *want = qr_aligned_alloc((size_t)N * sizeof(float)), *y = qr_aligned_alloc((size_t)N * sizeof(float));
                if (v == 1 && K > 9) {   /* specials: a NaN row, an Inf product, -0 products */
                    B[0] = NAN;
                    if (N > 1) B[ldb + 2] = INFINITY;
                    if (N > 2) { a[5] = -0.0f; B[2 * ldb + 6] = -0.0f; }
                }
                for (int64_t n = 0; n < N; n++)
                    want[n] = n < n0 || n >= n1 ? y0[n] : qt__kf_gemv_row(n, N, K, a, B + n * ldb) + (acc ? y0[n] : 0.0f);
                for (int l = 0; l < nl; l++) {
                    memcpy(y, y0, (size_t)N * sizeof(float));
                    lv[l].f32_gemv_m1t(n0, n1, N, K, a, B, ldb, y, acc);
                    int64_t bad = -1;
                    for (int64_t n = 0; n < N && bad < 0; n++)
                        if (!qt__kf_same(y[n], want[n])) bad = n;
                    QT_CHECKF(bad < 0, "%s N=%lld K=%lld rows %lld..%lld ldb %lld acc %d: y[%lld] = %.9g want %.9g",
                              qr_isa_name(lv[l].isa), (long long)N, (long long)K, (long long)n0, (long long)n1,
                              (long long)ldb, acc, (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                    cases++;
                }
                if (v != 2)
                    for (int th = 1; th <= 2; th++) {   /* the pool driver on the current level */
                        qr_pool_init(th);
                        memcpy(y, y0, (size_t)N * sizeof(float));
                        qr_f32_gemv_m1t(N, K, a, B, ldb, y, acc);
                        int64_t bad = -1;
                        for (int64_t n = 0; n < N && bad < 0; n++)
                            if (!qt__kf_same(y[n], want[n])) bad = n;
                        QT_CHECKF(bad < 0, "qr_f32_gemv_m1t %d threads N=%lld K=%lld: y[%lld] differs", th, (long long)N,
                                  (long long)K, (long long)bad);
                    }
                float *all[] = { a, B, y0, want, y };
                for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
            }
    qr_pool_init(0);
    printf("gemv m1t: %d level x shape cases exact\n", cases);
}

/* Row r of the packed batch-1 product (QrF32GemvPackedFn) from its definition in the test's
 * own words, on the unpacked row: K in blocks of 256, each a chain of fmaf from +0, the first
 * block's sum y + s (acc) or s, every later one y + s. */
static float qt__kf_gemv_packed_row(int64_t K, const float *a, const float *b, float y, bool acc) {
    for (int64_t k0 = 0; k0 < K; k0 += 256) {
        const float s = qt__kf_fma_chain(a, b, 1, k0, QR_MIN(K, k0 + 256));
        y = k0 == 0 && !acc ? s : y + s;
    }
    return y;
}

/* The first i < n where y[i] and want[i] differ in bits (NaNs alike), or -1. */
static int64_t qt__kf_first_diff(const float *y, const float *want, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (!qt__kf_same(y[i], want[i])) return i;
    return -1;
}

/* f32_gemv_packed on every level that has it, and qr_f32_gemv_packed__ref, bit-exact with the
 * definition and with the level's own f32_gemm of one column (what ops/nn.c's Gemm of a batch
 * of one ran before, and still runs where B is not kept): M across the panels' tails (1, 15, 16,
 * 17, 63-65, 130, 1000), K across the 256-blocks (1, 7, 255, 256, 257, 1280, 1283), a row range
 * from a panel boundary, accumulate, specials (a NaN weight, an Inf product, -0 products and a
 * -0 y); then qr_f32_gemv_packed (the pool driver) with 1 and 2 threads. */
static void test_f32_gemv_packed(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8), cases = 0, levels = 0;
    uint64_t rng = 321;
    static const int64_t Ms[] = { 1, 15, 16, 17, 63, 64, 65, 130, 1000 }, Ks[] = { 1, 7, 255, 256, 257, 1280, 1283 };
    for (int mi = 0; mi < QR_ARRAY_LEN(Ms); mi++)
        for (int ki = 0; ki < QR_ARRAY_LEN(Ks); ki++)
            for (int v = 0; v < 3; v++) {
                const int64_t M = Ms[mi], K = Ks[ki];
                const int64_t r0 = v == 2 ? M / 32 * 16 : 0, r1 = v == 2 ? M - M / 5 : M;
                const bool acc = v != 0;
                float *A = qt__k_randf(M * K, &rng), *b = qt__k_randf(K, &rng), *y0 = qt__k_randf(M, &rng);
                float *want = qr_aligned_alloc((size_t)M * sizeof(float));
                float *y = qr_aligned_alloc((size_t)M * sizeof(float));
                float *Ap = qr_aligned_alloc(qr_f32_gemv_pack_bytes(M, K));
                if (v == 1 && K > 9) {   /* specials */
                    A[3] = NAN;
                    if (M > 1) A[K + 2] = INFINITY;
                    if (M > 2) { b[5] = -0.0f; A[2 * K + 6] = -0.0f; }
                    y0[M - 1] = -0.0f;
                }
                qr_f32_gemv_pack(M, K, A, K, Ap);
                for (int64_t r = 0; r < M; r++)
                    want[r] = r < r0 || r >= r1 ? y0[r] : qt__kf_gemv_packed_row(K, A + r * K, b, y0[r], acc);
                for (int l = -1; l < nl; l++) {
                    QrF32GemvPackedFn fn = l < 0 ? qr_f32_gemv_packed__ref : lv[l].f32_gemv_packed;
                    if (!fn) continue;
                    memcpy(y, y0, (size_t)M * sizeof(float));
                    fn(r0, r1, K, Ap, b, y, acc);
                    int64_t bad = qt__kf_first_diff(y, want, M);
                    QT_CHECKF(bad < 0, "%s M=%lld K=%lld rows %lld..%lld acc %d: y[%lld] = %.9g want %.9g",
                              l < 0 ? "ref" : qr_isa_name(lv[l].isa), (long long)M, (long long)K, (long long)r0,
                              (long long)r1, acc, (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                    cases++;
                    if (l < 0 || v == 2) continue;
                    /* the level's GEMM of one column, which the packed form replaces */
                    memcpy(y, y0, (size_t)M * sizeof(float));
                    lv[l].f32_gemm(M, 1, K, A, K, b, 1, y, 1, acc);
                    bad = qt__kf_first_diff(y, want, M);
                    QT_CHECKF(bad < 0, "%s f32_gemm M=%lld K=%lld acc %d: y[%lld] = %.9g, packed %.9g",
                              qr_isa_name(lv[l].isa), (long long)M, (long long)K, acc, (long long)bad,
                              bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                    if (mi == 0 && ki == 0 && v == 0) levels++;
                }
                if (v != 2 && qr_kern.f32_gemv_packed)
                    for (int th = 1; th <= 2; th++) {   /* the pool driver on the current level */
                        qr_pool_init(th);
                        memcpy(y, y0, (size_t)M * sizeof(float));
                        qr_f32_gemv_packed(M, K, Ap, b, y, acc);
                        const int64_t bad = qt__kf_first_diff(y, want, M);
                        QT_CHECKF(bad < 0, "qr_f32_gemv_packed %d threads M=%lld K=%lld: y[%lld] differs", th,
                                  (long long)M, (long long)K, (long long)bad);
                    }
                float *all[] = { A, b, y0, want, y, Ap };
                for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
            }
    qr_pool_init(0);
    printf("gemv packed: %d level x shape cases exact (%d levels with the packed kernel)\n", cases, levels);
}

/* One column of the batch-1 plain-B product (QrF32GemvM1Fn) from its definition in the
 * test's own words: K in groups of four rows (then two, then one), each group's rounded
 * products summed left to right, the group's sum added to the running value c. */
static float qt__kf_gemv_m1_col(int64_t n, int64_t K, const float *a, const float *B, int64_t ldb, float c) {
    for (int64_t k = 0; k < K;) {
        const int64_t g = K - k >= 4 ? 4 : K - k >= 2 ? 2 : 1;
        volatile float s = a[k] * B[k * ldb + n];
        for (int64_t i = 1; i < g; i++) {
            volatile float p = a[k + i] * B[(k + i) * ldb + n];
            s = s + p;
        }
        c = s + c;
        k += g;
    }
    return c;
}

/* f32_gemv_m1 on every level bit-exact with the definition: N across the vector tail (1..9,
 * 17, 203), K in every group remainder (1..9, 299), a column range inside N, a padded row
 * stride, accumulate, special values (NaN, Inf, -0 products: a first group of -0 products
 * gives +0, not -0); then qr_f32_gemv_m1 (the pool driver) with 1 and 2 threads. */
static void test_f32_gemv_m1(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8), cases = 0;
    uint64_t rng = 127;
    static const int64_t Ns[] = { 1, 2, 3, 5, 7, 8, 9, 17, 203, 1100 }, Ks[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 299 };
    for (int ni = 0; ni < QR_ARRAY_LEN(Ns); ni++)
        for (int ki = 0; ki < QR_ARRAY_LEN(Ks); ki++)
            for (int v = 0; v < 3; v++) {
                const int64_t N = Ns[ni], K = Ks[ki], ldb = N + (v == 1 ? 5 : 0);
                const int64_t n0 = v == 2 ? N / 3 : 0, n1 = v == 2 ? N - N / 4 : N;
                const bool acc = v != 0;
                float *a = qt__k_randf(K, &rng), *B = qt__k_randf(K * ldb, &rng), *y0 = qt__k_randf(N, &rng);
                float *want = qr_aligned_alloc((size_t)N * sizeof(float)), *y = qr_aligned_alloc((size_t)N * sizeof(float));
                if (v == 0 && K > 4 && N > 2) {   /* specials: a NaN column, an Inf product, a -0 first group */
                    B[0] = NAN;
                    B[ldb + 1] = INFINITY;
                    for (int i = 0; i < 4; i++) { a[i] = i % 2 ? -0.0f : 0.0f; B[i * ldb + 2] = i % 2 ? 1.0f : -1.0f; }
                }
                for (int64_t n = 0; n < N; n++)
                    want[n] = n < n0 || n >= n1 ? y0[n] : qt__kf_gemv_m1_col(n, K, a, B, ldb, acc ? y0[n] : 0.0f);
                for (int l = 0; l < nl; l++) {
                    memcpy(y, y0, (size_t)N * sizeof(float));
                    lv[l].f32_gemv_m1(n0, n1, K, a, B, ldb, y, acc);
                    int64_t bad = -1;
                    for (int64_t n = 0; n < N && bad < 0; n++)
                        if (!qt__kf_same(y[n], want[n])) bad = n;
                    QT_CHECKF(bad < 0, "%s N=%lld K=%lld cols %lld..%lld ldb %lld acc %d: y[%lld] = %.9g want %.9g",
                              qr_isa_name(lv[l].isa), (long long)N, (long long)K, (long long)n0, (long long)n1,
                              (long long)ldb, acc, (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                    cases++;
                }
                if (v != 2)
                    for (int th = 1; th <= 2; th++) {   /* the pool driver on the current level */
                        qr_pool_init(th);
                        memcpy(y, y0, (size_t)N * sizeof(float));
                        qr_f32_gemv_m1(N, K, a, B, ldb, y, acc);
                        int64_t bad = -1;
                        for (int64_t n = 0; n < N && bad < 0; n++)
                            if (!qt__kf_same(y[n], want[n])) bad = n;
                        QT_CHECKF(bad < 0, "qr_f32_gemv_m1 %d threads N=%lld K=%lld: y[%lld] differs", th, (long long)N,
                                  (long long)K, (long long)bad);
                    }
                float *all[] = { a, B, y0, want, y };
                for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
            }
    qr_pool_init(0);
    printf("gemv m1: %d level x shape cases exact\n", cases);
}

/* MlasConv's K block on one thread, from its definition: SGEMM strides 128 x 128; N >= K
 * halves the K stride while half of it still covers K, N < K doubles it while the N
 * stride (> 16) halved still covers N. */
static int64_t qt__kf_mlas_conv_kc(int64_t K, int64_t N) {
    int64_t sn = 128, sk = 128;
    while (N >= K && sk / 2 >= K) sk /= 2, sn *= 2;
    while (N < K && sn > 16 && sn / 2 >= N) sk *= 2, sn /= 2;
    return sk;
}

/* A convolution's GEMM (implicit im2col, and the plain GEMM with conv_n for 1x1 ones) on
 * every SIMD level sums exactly as ORT's MlasConv: per K block a chain of fused
 * multiply-adds from +0, each block added to the ones before, then the bias, then Relu —
 * over K from 27 to 1152, output planes whose column count leaves every tail (49, 196,
 * 3136 ...) and row counts up to 264 (B packed once for several row chunks). */
static void test_f32_conv_order(void) {
    QrKernels lv[8];
    int nl = qt__k_levels(lv, 8), cases = 0;
    uint64_t rng = 93;
    static const struct { int64_t C, HW, KHW, M, s, d, p; } sh[] = {   /* p: padding past KHW / 2 */
        { 3, 56, 3, 8, 1, 1, 0 }, { 16, 14, 3, 20, 1, 1, 0 }, { 64, 7, 3, 16, 1, 1, 0 }, { 128, 7, 3, 9, 1, 1, 0 }, { 144, 14, 1, 24, 1, 1, 0 },
        { 320, 7, 1, 17, 1, 1, 0 }, { 40, 13, 3, 33, 1, 1, 0 }, { 200, 2, 1, 5, 1, 1, 0 },
        /* more rows than one task takes (192): B packed once for all row chunks (kern/gemm.c
         * qr__k_f32_prepack_task), a short last K block and a 17-column last panel */
        { 64, 7, 3, 200, 1, 1, 0 }, { 24, 14, 3, 264, 1, 1, 0 },
        /* many pixels, few channels: the channels along the vectors on AVX-512 (kern/gemm.c
         * qr__k_f32_coc_run): rows of 1-12 pixels (13, 25, 29 wide), strides 1 and 2, a 7x7
         * window, 16-64 channels with a partial last block of 32 (40, 33, 17), three K blocks
         * (K = 288 of 128), and enough work for the pool's threads */
        { 3, 29, 7, 64, 2, 1, 0 }, { 32, 25, 3, 40, 1, 1, 0 }, { 16, 26, 3, 17, 2, 1, 0 }, { 32, 56, 3, 40, 1, 1, 0 }, { 8, 13, 5, 64, 1, 1, 0 },
        { 3, 30, 3, 32, 2, 1, 0 },   /* K = 27: the GEMM path */
        /* fewer pixels than twice the channels (layer3's 14x14: N >= M/2) in rows of 12-14 pixels:
         * the coc path, one tile per row, two K blocks, partial channel blocks (232 = 7 x 32 + 8,
         * 150); 11-pixel rows: the GEMM path */
        { 24, 14, 3, 232, 1, 1, 0 }, { 16, 27, 3, 150, 2, 1, 0 }, { 40, 12, 3, 100, 1, 1, 0 }, { 40, 11, 3, 100, 1, 1, 0 },
        /* one K block (K = 160 of 256), 49 = 32 + 17 columns, 40 rows: the panels swept by the row
         * tiles, the last two in the wide kernel (MobileNetV2's 960<-160 7x7 1x1) */
        { 160, 7, 1, 40, 1, 1, 0 },
        /* dilation 2 on the coc path (its padded image copied band by band inside the row tasks:
         * a task reads (KH - 1) * dh rows past its own) */
        { 32, 25, 3, 40, 1, 2, 0 }, { 16, 26, 3, 17, 2, 2, 0 },
        /* 1x1 with stride 2 (ResNet's downsampling) on the coc path: even and odd sizes, a partial
         * channel block (48), padding 1 (zeros in the padded image) */
        { 64, 28, 1, 32, 2, 1, 0 }, { 80, 27, 1, 48, 2, 1, 0 }, { 64, 26, 1, 32, 2, 1, 1 },
        /* few pixels, many channels (ResNet's layer4): the GEMM path, but the coc path with the
         * weights packed by the caller (form 3) — 9.4 MB of them, past the 8 MiB the path's own
         * copies may take; a 1x1/2 with a partial channel block (520 = 16 x 32 + 8) */
        { 512, 7, 3, 512, 1, 1, 0 }, { 256, 14, 1, 520, 2, 1, 0 },
    };
    for (int si = 0; si < QR_ARRAY_LEN(sh); si++) {
        const int64_t C = sh[si].C, H = sh[si].HW, KS = sh[si].KHW, M = sh[si].M, pad = KS / 2 + sh[si].p, st = sh[si].s;
        const int64_t dl = sh[si].d, OH = (H + 2 * pad - (dl * (KS - 1) + 1)) / st + 1, OW = OH, N = OH * OW, K = C * KS * KS;
        float *x = qt__k_randf(C * H * H, &rng), *A = qt__k_randf(M * K, &rng), *bias = qt__k_randf(M, &rng);
        float *col = qr_aligned_alloc((size_t)(K * N) * sizeof(float)), *want = qr_aligned_alloc((size_t)(M * N) * sizeof(float));
        float *y = qr_aligned_alloc((size_t)(M * N) * sizeof(float));
        for (int64_t c = 0, k = 0; c < C; c++)
            for (int64_t kh = 0; kh < KS; kh++)
                for (int64_t kw = 0; kw < KS; kw++, k++)
                    for (int64_t p = 0; p < N; p++) {
                        int64_t ih = p / OW * st - pad + kh * dl, iw = p % OW * st - pad + kw * dl;
                        col[k * N + p] = ih >= 0 && ih < H && iw >= 0 && iw < H ? x[(c * H + ih) * H + iw] : 0.0f;
                    }
        const int64_t kc = qt__kf_mlas_conv_kc(K, N);
        for (int64_t m = 0; m < M; m++)
            for (int64_t p = 0; p < N; p++) {
                float v = qt__kf_conv_sum(A + m * K, col + p, N, K, kc);
                v = v + bias[m];
                want[m * N + p] = v > 0 ? v : 0.0f;
            }
        QrF32ConvB cb = { x, C, H, H, KS, KS, st, st, dl, dl, pad, pad, OH, OW }, cbn = cb;
        /* an image of NaNs run first on the same threads: whatever a path copies into its scratch
         * (the coc path's padded image) must be copied again, every row the run reads */
        float *xn = qr_aligned_alloc((size_t)(C * H * H) * sizeof(float));
        for (int64_t i = 0; i < C * H * H; i++) xn[i] = NAN;
        cbn.x = xn;
        QrF32Fused f = { .ep = { bias, -INFINITY, INFINITY }, .relu = true, .conv_n = N };
        /* the AVX-512 levels take the channels-along-vectors path exactly where it applies (a 1x1,
         * stride 1, unpadded one only flat and with its weights packed: test_f32_conv_flat); with
         * the weights packed by the caller, whatever the pixel count (a 1x1 flat one: up to 256) */
        const bool flat = KS == 1 && st == 1 && !pad;
        const bool coc_given = M >= 16 && K >= 64 && (!flat || N <= 256);
        const bool coc = !flat && coc_given && (N >= 2 * M || (2 * N >= M && OW >= 12));
        for (int l = 0; l < nl; l++) {
            if (lv[l].isa != QR_ISA_AVX2 && lv[l].isa != QR_ISA_AVX512 && lv[l].isa != QR_ISA_VNNI) continue;   /* x86-64 SIMD levels: ORT order */
            const size_t pb = lv[l].f32_conv_pack_bytes(M, &cb);
            QT_CHECKF((pb > 0) == (coc_given && lv[l].isa != QR_ISA_AVX2), "%s C=%lld %lldx%lld k%lld s%lld M=%lld: pack bytes %zu",
                      qr_isa_name(lv[l].isa), (long long)C, (long long)H, (long long)H, (long long)KS, (long long)st,
                      (long long)M, pb);
            float *pk = pb ? qr_aligned_alloc(pb) : NULL;
            if (pk) lv[l].f32_conv_pack(M, A, K, &cb, pk);
            for (int form = 0; form < 4; form++) {   /* 2: the convolution on one thread; 3: its weights packed by the caller */
                if (form == 3 && !pk) continue;
                f.a_pack = form == 3 ? pk : NULL;
                QT_OK(qr_pool_init(form == 2 ? 1 : 0));
                if (form != 1) lv[l].f32_conv_gemm_fused(M, A, K, &cbn, y, N, &f);
                for (int64_t i = 0; i < M * N; i++) y[i] = NAN;
                const int64_t runs0 = qr__k_coc_runs, wide0 = qr__k_wide_runs;
                if (form != 1) lv[l].f32_conv_gemm_fused(M, A, K, &cb, y, N, &f);
                else lv[l].f32_gemm_fused(M, N, K, A, K, col, N, y, N, false, &f);   /* as the 1x1 path calls it */
                QT_OK(qr_pool_init(0));
                /* 49 = 32 + 17 columns, B prepacked (200 rows) or, as the 1x1 path calls it (form 1),
                 * read in place over 3 K blocks, or one K block swept (40 rows, 1x1): the last two
                 * panels in one pass (form 3: the coc path) */
                if ((M == 200 || (M == 40 && KS == 1)) && lv[l].isa != QR_ISA_AVX2 && form != 3)
                    QT_CHECKF(qr__k_wide_runs > wide0, "%s form %d: the wide kernel did not run", qr_isa_name(lv[l].isa), form);
                const bool want_coc = form != 1 && (form == 3 ? coc_given : coc) && lv[l].isa != QR_ISA_AVX2;
                QT_CHECKF((qr__k_coc_runs > runs0) == want_coc, "%s form %d C=%lld %lldx%lld k%lld s%lld M=%lld: coc path %s",
                          qr_isa_name(lv[l].isa), form, (long long)C, (long long)H, (long long)H, (long long)KS,
                          (long long)st, (long long)M, want_coc ? "not taken" : "taken");
                int64_t bad = -1;
                for (int64_t i = 0; i < M * N && bad < 0; i++)
                    if (!qt__kf_same(y[i], want[i])) bad = i;
                QT_CHECKF(bad < 0, "%s %s C=%lld %lldx%lld k%lld s%lld M=%lld (kc %lld): y[%lld] = %.9g want %.9g",
                          qr_isa_name(lv[l].isa), form == 1 ? "gemm+conv_n" : form ? "conv gemm 1 thread" : "conv gemm", (long long)C, (long long)H,
                          (long long)H, (long long)KS, (long long)st, (long long)M, (long long)kc, (long long)bad,
                          bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                cases++;
            }
            f.a_pack = NULL;
            qr_aligned_free(pk);
        }
        float *all[] = { x, xn, A, bias, col, want, y };
        for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
    }
    if (!cases) QT_SKIP("no x86-64 SIMD level on this CPU (ONNX Runtime's order is x86-64's)");
    printf("conv order: %d level x shape cases exact\n", cases);
}

/* A 1x1, stride 1, unpadded convolution as qr__nn_conv_f32_steps hands it over (QrF32ConvB of
 * the plane's geometry; its packed weights when the kernels ask for them): on every x86-64 SIMD
 * level, with and without the packed weights, on one and two threads, it sums as ORT's MlasConv
 * (per K block a chain of fused multiply-adds, the blocks in order, the bias, then the residual,
 * Clip, Relu and the post steps, from their plain definitions), NaN and Inf in the image and a
 * -Inf weight included. The AVX-512 levels run it flat on the coc path (kern/gemm.c: the plane
 * one row of N pixels, tiles of up to 14 across the plane's rows) exactly where
 * qr__k_coc_flat_takes says (packed weights; N <= 256): 7x7 and 14x14 planes (K >= 2M and
 * K < 2M), odd ones (5x3, 1x37, 3x5), M not a multiple of 16 or 32, K from 64 to 1100 (1 to 5
 * K blocks); the rest (28x28, K < 64) on the GEMM path, the same bits. */
static void test_f32_conv_flat(void) {
    QrKernels lv[8];
    const int nl = qt__k_levels(lv, 8);
    int cases = 0, flat_cases = 0;
    uint64_t rng = 1717;
    static const struct { int64_t C, H, W, M; } sh[] = {
        { 960, 7, 7, 160 }, { 160, 7, 7, 200 }, { 320, 7, 7, 72 }, { 1100, 7, 7, 48 }, { 384, 14, 14, 72 },
        { 96, 5, 3, 17 },   { 600, 1, 37, 33 }, { 64, 3, 5, 16 },   { 200, 2, 1, 24 },  { 64, 14, 14, 384 },
        { 192, 28, 28, 40 }, { 48, 7, 7, 40 },  { 96, 7, 7, 15 },
    };
    for (int si = 0; si < QR_ARRAY_LEN(sh); si++) {
        const int64_t C = sh[si].C, H = sh[si].H, W = sh[si].W, M = sh[si].M, N = H * W, K = C;
        float *x = qt__k_randf(C * N, &rng), *A = qt__k_randf(M * K, &rng), *bias = qt__k_randf(M, &rng);
        float *R = qt__k_randf(M * N, &rng), *want = qr_aligned_alloc((size_t)(M * N) * sizeof(float));
        float *y = qr_aligned_alloc((size_t)(M * N) * sizeof(float)), *pk = qr_aligned_alloc((size_t)8 << 20);
        x[1 * N + N / 2] = NAN;          /* channel 1: a NaN pixel */
        x[2 * N + N - 1] = INFINITY;     /* channel 2: +Inf in the last pixel (the last tile's) */
        A[3 * K + 2] = 0.0f;             /* 0 x Inf: NaN in row 3 */
        A[5 * K + K - 1] = -INFINITY;    /* -Inf weight in the last K block */
        const int64_t kc = qt__kf_mlas_conv_kc(K, N);
        QrF32ConvB cb = { x, C, H, W, 1, 1, 1, 1, 1, 1, 0, 0, H, W };
        QrF32Step relu_step = { .op = QR_F32_STEP_RELU };
        for (int v = 0; v < 3; v++) {   /* 0 bias + Relu; 1 residual + Clip; 2 bias, residual first, Clip, post Relu */
            QtKfPost pp = { &relu_step, 1, N };
            QrF32Fused f = { .ep = { v != 1 ? bias : NULL, -INFINITY, INFINITY }, .relu = v == 0, .conv_n = N };
            if (v) { f.res = R; f.ldres = N; f.res_first = v == 2; f.ep.lo = -1.0f; f.ep.hi = 1.5f; }
            if (v == 2) { f.post = qt__kf_post; f.post_ctx = &pp; }
            for (int64_t m = 0; m < M; m++)
                for (int64_t p = 0; p < N; p++) {
                    float s = qt__kf_conv_sum(A + m * K, x + p, N, K, kc);
                    want[m * N + p] = f.ep.bias ? s + bias[m] : s;
                }
            QrF32Fused fw = f;
            fw.post = NULL;
            qt__kf_unfused_tail(&fw, want, M, N, N);
            if (v == 2) qt__kf_post(&pp, want, N, 0, M, 0, N);
            for (int l = 0; l < nl; l++) {
                const QrIsa isa = lv[l].isa;
                if (isa != QR_ISA_AVX2 && isa != QR_ISA_AVX512 && isa != QR_ISA_VNNI) continue;   /* ORT's order: x86-64 */
                const size_t pb = lv[l].f32_conv_pack_bytes(M, &cb);
                const bool coc = isa != QR_ISA_AVX2 && M >= 16 && K >= 64 && N <= 256;
                QT_CHECKF((pb > 0) == coc, "%s C=%lld %lldx%lld M=%lld: pack bytes %zu", qr_isa_name(isa), (long long)C,
                          (long long)H, (long long)W, (long long)M, pb);
                if (pb > (size_t)8 << 20) continue;
                if (pb) lv[l].f32_conv_pack(M, A, K, &cb, pk);
                for (int form = 0; form < 4; form++) {   /* bit 0: packed weights given; bit 1: one thread */
                    if ((form & 1) && !pb) continue;
                    QT_OK(qr_pool_init(form & 2 ? 1 : 2));
                    f.a_pack = form & 1 ? pk : NULL;
                    for (int64_t i = 0; i < M * N; i++) y[i] = NAN;
                    const int64_t flat0 = qr__k_coc_flat_runs;
                    lv[l].f32_conv_gemm_fused(M, A, K, &cb, y, N, &f);
                    const bool flat = qr__k_coc_flat_runs > flat0, want_flat = coc && (form & 1);
                    QT_CHECKF(flat == want_flat, "%s C=%lld %lldx%lld M=%lld form %d: flat coc %s", qr_isa_name(isa),
                              (long long)C, (long long)H, (long long)W, (long long)M, form, flat ? "taken" : "not taken");
                    int64_t bad = -1;
                    for (int64_t i = 0; i < M * N && bad < 0; i++)
                        if (!qt__kf_same(y[i], want[i])) bad = i;
                    QT_CHECKF(bad < 0, "%s C=%lld %lldx%lld M=%lld ep %d form %d (kc %lld): y[%lld] = %.9g want %.9g",
                              qr_isa_name(isa), (long long)C, (long long)H, (long long)W, (long long)M, v, form,
                              (long long)kc, (long long)bad, bad < 0 ? 0.0 : y[bad], bad < 0 ? 0.0 : want[bad]);
                    cases++;
                    flat_cases += flat;
                }
            }
        }
        float *all[] = { x, A, bias, R, want, y, pk };
        for (int i = 0; i < QR_ARRAY_LEN(all); i++) qr_aligned_free(all[i]);
    }
    QT_OK(qr_pool_init(0));
    if (!cases) QT_SKIP("no x86-64 SIMD level on this CPU (ONNX Runtime's order is x86-64's)");
    printf("conv flat: %d level x shape cases exact, %d of them flat on the coc path\n", cases, flat_cases);
}

static void qt_kern_f32_all(void) {
    QT_RUN(test_f32_steps_ref);
    QT_RUN(test_f32_steps_levels);
    QT_RUN(test_f32_gemm_fused);
    QT_RUN(test_f32_conv_gemm_fused);
    QT_RUN(test_f32_gemv_order);
    QT_RUN(test_f32_gemv_m1t);
    QT_RUN(test_f32_gemv_m1t_q8);
    QT_RUN(test_f32_gemv_packed);
    QT_RUN(test_f32_gemm_qb);
    QT_RUN(test_f32_gemv_m1);
    QT_RUN(test_f32_conv_order);
    QT_RUN(test_f32_conv_flat);
}
