/* kern/ref/f32_gemm — plain C single-precision GEMM, the oracle for SIMD variants, and the
 * scalar form of the GEMM epilogue (residual, clamp, relu, post) the drivers fall back on. */

/* The part of a fused epilogue after the bias (residual, clamp, relu) on element (m, n). */
static inline float qr__k_ep_tail(const QrF32Fused *f, float v, int64_t m, int64_t n) {
    if (f->res) {
        float r = f->res[m * f->ldres + n];
        v = f->res_first ? r + v : v + r;
    }
    v = v < f->ep.lo ? f->ep.lo : v;
    v = v > f->ep.hi ? f->ep.hi : v;
    if (f->relu) v = v > 0 ? v : (v != v ? v : 0.0f);
    return v;
}

/* Runs f's residual / clamp / relu over C (M, N) in place (the bias is in C already), then
 * its post over the whole matrix. For the ref kernels and the drivers' fallbacks. */
static void qr__k_ep_finish(const QrF32Fused *f, int64_t M, int64_t N, float *C, int64_t ldc) {
    if (!f || M <= 0 || N <= 0) return;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) C[i * ldc + j] = qr__k_ep_tail(f, C[i * ldc + j], i, j);
    if (f->post) f->post(f->post_ctx, C, ldc, 0, M, 0, N);
}

/* The fused form of a plain epilogue (ep NULL: none at all). */
static inline const QrF32Fused *qr__k_fused_of(const QrF32Epilogue *ep, QrF32Fused *tmp) {
    if (!ep) return NULL;
    memset(tmp, 0, sizeof *tmp);
    tmp->ep = *ep;
    return tmp;
}


/* C (M,N) [+]= A (M,K) @ B (K,N), row-major, row strides lda/ldb/ldc. */
static void qr_f32_gemm__ref(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                             int64_t ldb, float *C, int64_t ldc, bool accumulate) {
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        if (!accumulate) for (int64_t j = 0; j < N; j++) c[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            float a = A[i * lda + k];
            const float *b = B + k * ldb;
            for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
}

/* The bias, then the rest of f's epilogue over C (M, N): the ref GEMMs' finish. */
static void qr__k_gemm_finish_ref(const QrF32Fused *f, int64_t M, int64_t N, float *C, int64_t ldc) {
    if (!f) return;
    if (f->ep.bias)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) C[i * ldc + j] += f->ep.bias[i];
    qr__k_ep_finish(f, M, N, C, ldc);
}

/* Element (k, n) of a quantized B (kern.h QrF32QuantB; trans: q is (N, K)), row stride ldq:
 * DequantizeLinear's (float)(q - zp) * scale. */
static inline float qr__k_qb_at(const QrF32QuantB *qb, bool trans, int64_t ldq, int64_t k, int64_t n) {
    const int64_t i = trans ? n * ldq + k : k * ldq + n;
    const int32_t q = qb->q_signed ? (int32_t)((const int8_t *)qb->q)[i] : (int32_t)((const uint8_t *)qb->q)[i];
    return (float)(q - (qb->zp ? qb->zp[n * qb->zps] : 0)) * qb->scale[n * qb->ss];
}

/* qr_f32_gemm__ref (and its transposed form) on a quantized B: each row of B dequantized 256
 * columns at a time into a buffer on the stack (a kernel does not allocate), then every row of
 * C takes it as the float loop takes B's row; each element of C gets the same products in the
 * same order of k. */
static void qr__k_gemm_qb_ref(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const QrF32QuantB *qb,
                              bool trans, int64_t ldq, float *C, int64_t ldc, bool accumulate) {
    enum { CH = 256 };
    float b[CH];
    for (int64_t i = 0; i < M && !accumulate; i++)
        for (int64_t j = 0; j < N; j++) C[i * ldc + j] = 0;
    for (int64_t j0 = 0; j0 < N; j0 += CH) {
        const int64_t nj = QR_MIN((int64_t)CH, N - j0);
        for (int64_t k = 0; k < K; k++) {
            for (int64_t t = 0; t < nj; t++) b[t] = qr__k_qb_at(qb, trans, ldq, k, j0 + t);
            for (int64_t i = 0; i < M; i++) {
                float a = A[i * lda + k], *c = C + i * ldc + j0;
                for (int64_t t = 0; t < nj; t++) c[t] += a * b[t];
            }
        }
    }
}

/* QrF32GemmFusedFn, plain C: the GEMM, then the bias and the rest of the epilogue per element. */
static void qr_f32_gemm_fused__ref(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                                   int64_t ldb, float *C, int64_t ldc, bool accumulate, const QrF32Fused *f) {
    if (f && f->qb) qr__k_gemm_qb_ref(M, N, K, A, lda, f->qb, false, ldb, C, ldc, accumulate);
    else qr_f32_gemm__ref(M, N, K, A, lda, B, ldb, C, ldc, accumulate);
    qr__k_gemm_finish_ref(f, M, N, C, ldc);
}

/* QrF32GemmBtFusedFn, plain C: qr_f32_gemm_fused__ref with B read from its transpose Bt (N, K),
 * the same operations in the same order. */
static void qr_f32_gemm_bt_fused__ref(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bt,
                                      int64_t ldb, float *C, int64_t ldc, bool accumulate, const QrF32Fused *f) {
    if (f && f->qb) {
        qr__k_gemm_qb_ref(M, N, K, A, lda, f->qb, true, ldb, C, ldc, accumulate);
        qr__k_gemm_finish_ref(f, M, N, C, ldc);
        return;
    }
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        if (!accumulate) for (int64_t j = 0; j < N; j++) c[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            float a = A[i * lda + k];
            for (int64_t j = 0; j < N; j++) c[j] += a * Bt[j * ldb + k];
        }
    }
    qr__k_gemm_finish_ref(f, M, N, C, ldc);
}

/* QrF32GemmExFn, plain C: the GEMM, then bias and clamp per element. */
static void qr_f32_gemm_ex__ref(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                                int64_t ldb, float *C, int64_t ldc, bool accumulate, const QrF32Epilogue *ep) {
    QrF32Fused tmp;
    qr_f32_gemm_fused__ref(M, N, K, A, lda, B, ldb, C, ldc, accumulate, qr__k_fused_of(ep, &tmp));
}

/* QrF32ConvGemmFusedFn, plain C: every output is the sum over its in-range taps in K order
 * (k outer, so the inner loop runs along an output row), then the epilogue. */
static void qr_f32_conv_gemm_fused__ref(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b, float *Y,
                                        int64_t ldy, const QrF32Fused *f) {
    const QrF32Epilogue *ep = f ? &f->ep : NULL;
    const int64_t KK = b->KH * b->KW, K = b->C * KK, P = b->OH * b->OW;
    for (int64_t m = 0; m < M; m++) {
        float *ym = Y + m * ldy;
        for (int64_t p = 0; p < P; p++) ym[p] = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            const int64_t c = k / KK, kh = k % KK / b->KW, kw = k % b->KW;
            const float a = A[m * lda + k];
            /* ow range with 0 <= ow*sw - pw + kw*dw < W */
            const int64_t t = kw * b->dw - b->pw;
            const int64_t lo = t >= 0 ? 0 : (-t + b->sw - 1) / b->sw;
            const int64_t hi = QR_MIN(b->OW, b->W - 1 - t < 0 ? 0 : (b->W - 1 - t) / b->sw + 1);
            for (int64_t oh = 0; oh < b->OH; oh++) {
                int64_t ih = oh * b->sh - b->ph + kh * b->dh;
                if (ih < 0 || ih >= b->H) continue;
                const float *xr = b->x + (c * b->H + ih) * b->W;
                float *yr = ym + oh * b->OW;
                for (int64_t ow = lo; ow < hi; ow++) yr[ow] += a * xr[ow * b->sw + t];
            }
        }
        if (ep && ep->bias)
            for (int64_t p = 0; p < P; p++) ym[p] += ep->bias[m];
    }
    qr__k_ep_finish(f, M, P, Y, ldy);
}

/* QrF32ConvPackBytesFn, plain C: the ref reads A in place, so it packs nothing (and QrF32ConvPackFn
 * is never called for it: it writes nothing). */
static size_t qr_f32_conv_pack_bytes__ref(int64_t M, const QrF32ConvB *b) {
    QR_UNUSED(M);
    QR_UNUSED(b);
    return 0;
}
static void qr_f32_conv_pack__ref(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b, float *dst) {
    QR_UNUSED(M);
    QR_UNUSED(A);
    QR_UNUSED(lda);
    QR_UNUSED(b);
    QR_UNUSED(dst);
}

/* QrF32ConvGemmFn, plain C. */
static void qr_f32_conv_gemm__ref(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b, float *Y, int64_t ldy,
                                  const QrF32Epilogue *ep) {
    QrF32Fused tmp;
    qr_f32_conv_gemm_fused__ref(M, A, lda, b, Y, ldy, qr__k_fused_of(ep, &tmp));
}
