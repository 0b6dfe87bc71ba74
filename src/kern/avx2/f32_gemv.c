/* kern/avx2/f32_gemv — QrF32GemvM1tFn and QrF32GemvM1tQ8Fn with AVX2: one 8-lane vector per
 * row holds the lanes of the definition (a multiply and a separate add per step, as MLAS's M=1
 * transposed-B kernel), four rows per pass so that a's loads are shared; one body, B read as
 * floats or as 8-bit integers dequantized in registers. QrF32GemvM1Fn: eight columns a vector,
 * B's rows in the definition's groups, y updated in place after each group as MLAS's M=1
 * kernel does. Bit-exact with the __ref forms. */
#if defined(__x86_64__)

/* s + a * b, the product rounded on its own. */
QR__K_AVX2 static inline __m256 qr__k_gemv_acc8(__m256 s, __m256 a, __m256 b) {
    __m256 p = _mm256_mul_ps(a, b);
    QR_KERN_ROUNDED(p);
    return _mm256_add_ps(s, p);
}

/* Row n from its eight lanes: reduced in the definition's order (qr__k_gemv_reduce), plus
 * y[n] when accumulating. */
QR__K_AVX2 static inline void qr__k_gemv_put(__m256 s, int64_t n, int64_t N, float *y, bool accumulate) {
    float l[8];
    _mm256_storeu_ps(l, s);
    const float r = qr__k_gemv_reduce(l, n, N);
    y[n] = r + (accumulate ? y[n] : 0.0f);
}

/* Eight dequantized values of B row q (bytes k .. k+7): (float)(q - zp) * scale as
 * DequantizeLinear computes them. */
QR__K_AVX2 static inline __m256 qr__k_gemv_dq8(const uint8_t *q, bool q_signed, int64_t k, __m256i zp, __m256 sc) {
    const __m128i b = _mm_loadl_epi64((const __m128i *)(q + k));
    const __m256i v = q_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, zp)), sc);
}

/* One row of B as the kernel reads it: floats (b), or 8-bit integers (q) with the row's zero
 * point and scale. */
typedef struct QrKGemvRow { const float *b; const uint8_t *q; __m256i zp; __m256 sc; } QrKGemvRow;

/* Eight values of row w from k (Q8: dequantized); tail: only the r < 8 values left, the lanes
 * past K +0 whatever the scale (bytes copied to a zeroed buffer: never read past the row). */
QR__K_AVX2 static inline __m256 qr__k_gemv_b8(const bool Q8, const QrKGemvRow *w, bool q_signed, int64_t k, int64_t r,
                                              __m256i tail) {
    if (!Q8) return r ? _mm256_maskload_ps(w->b + k, tail) : _mm256_loadu_ps(w->b + k);
    if (!r) return qr__k_gemv_dq8(w->q, q_signed, k, w->zp, w->sc);
    uint8_t t[8] = { 0 };
    memcpy(t, w->q + k, (size_t)r);
    return _mm256_and_ps(qr__k_gemv_dq8(t, q_signed, 0, w->zp, w->sc), _mm256_castsi256_ps(tail));
}

/* Rows [n0, n1) of QrF32GemvM1tFn (Q8 false: B floats) or QrF32GemvM1tQ8Fn (Q8: B 8-bit,
 * dequantized in registers). */
QR__K_AVX2 static inline __attribute__((always_inline)) void
qr__k_gemv_rows(const bool Q8, int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a, const float *B,
                const uint8_t *q, bool q_signed, int64_t ldb, const float *scale, int64_t ss, const int32_t *zp,
                int64_t zps, float *y, bool accumulate) {
    const int64_t K8 = K & ~(int64_t)7, r = K - K8;
    /* the K tail: lanes past K load +0 from both operands (a +0 product leaves a lane as is:
     * a lane, started at +0, is never -0) */
    const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 at = _mm256_maskload_ps(a + K8, tail);
    QrKGemvRow w[4];
    int64_t n = n0;
    while (n < n1) {
        const int rows = n + 4 <= n1 ? 4 : 1;   /* four rows per pass share a's loads; then one at a time */
        for (int i = 0; i < rows; i++) {
            w[i].b = Q8 ? NULL : B + (n + i) * ldb;
            w[i].q = Q8 ? q + (n + i) * ldb : NULL;
            w[i].zp = _mm256_set1_epi32(Q8 && zp ? zp[(n + i) * zps] : 0);
            w[i].sc = _mm256_set1_ps(Q8 ? scale[(n + i) * ss] : 0.0f);
        }
        if (rows == 4) {
            __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
            for (int64_t k = 0; k < K8; k += 8) {
                const __m256 av = _mm256_loadu_ps(a + k);
                s0 = qr__k_gemv_acc8(s0, av, qr__k_gemv_b8(Q8, &w[0], q_signed, k, 0, tail));
                s1 = qr__k_gemv_acc8(s1, av, qr__k_gemv_b8(Q8, &w[1], q_signed, k, 0, tail));
                s2 = qr__k_gemv_acc8(s2, av, qr__k_gemv_b8(Q8, &w[2], q_signed, k, 0, tail));
                s3 = qr__k_gemv_acc8(s3, av, qr__k_gemv_b8(Q8, &w[3], q_signed, k, 0, tail));
            }
            if (r) {
                s0 = qr__k_gemv_acc8(s0, at, qr__k_gemv_b8(Q8, &w[0], q_signed, K8, r, tail));
                s1 = qr__k_gemv_acc8(s1, at, qr__k_gemv_b8(Q8, &w[1], q_signed, K8, r, tail));
                s2 = qr__k_gemv_acc8(s2, at, qr__k_gemv_b8(Q8, &w[2], q_signed, K8, r, tail));
                s3 = qr__k_gemv_acc8(s3, at, qr__k_gemv_b8(Q8, &w[3], q_signed, K8, r, tail));
            }
            qr__k_gemv_put(s0, n, N, y, accumulate);
            qr__k_gemv_put(s1, n + 1, N, y, accumulate);
            qr__k_gemv_put(s2, n + 2, N, y, accumulate);
            qr__k_gemv_put(s3, n + 3, N, y, accumulate);
        } else {
            __m256 s0 = _mm256_setzero_ps();
            for (int64_t k = 0; k < K8; k += 8)
                s0 = qr__k_gemv_acc8(s0, _mm256_loadu_ps(a + k), qr__k_gemv_b8(Q8, &w[0], q_signed, k, 0, tail));
            if (r) s0 = qr__k_gemv_acc8(s0, at, qr__k_gemv_b8(Q8, &w[0], q_signed, K8, r, tail));
            qr__k_gemv_put(s0, n, N, y, accumulate);
        }
        n += rows;
    }
}

QR__K_AVX2 static void qr_f32_gemv_m1t__avx2(int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a,
                                             const float *B, int64_t ldb, float *y, bool accumulate) {
    qr__k_gemv_rows(false, n0, n1, N, K, a, B, NULL, false, ldb, NULL, 0, NULL, 0, y, accumulate);
}

/* QrF32GemvM1tQ8Fn with AVX2: the same with each row's eight values dequantized in registers
 * (vpmovsx/zxbd, the zero point subtracted as int32, vcvtdq2ps, the scale multiplied:
 * DequantizeLinear's one rounding). */
QR__K_AVX2 static void qr_f32_gemv_m1t_q8__avx2(int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a,
                                                const void *q, bool q_signed, int64_t ldb, const float *scale, int64_t ss,
                                                const int32_t *zp, int64_t zps, float *y, bool accumulate) {
    qr__k_gemv_rows(true, n0, n1, N, K, a, NULL, q, q_signed, ldb, scale, ss, zp, zps, y, accumulate);
}

/* QrF32GemvM1Fn with AVX2: for each group of four (two, one) rows of B, eight columns a
 * vector and a masked tail: the group's products summed left
 * to right, each rounded on its own, then added to y (or to +0 for the first group when not
 * accumulating) — MlasSgemmKernelM1Avx's steps. */
QR__K_AVX2 static void qr_f32_gemv_m1__avx2(int64_t n0, int64_t n1, int64_t K, const float *a, const float *B,
                                            int64_t ldb, float *y, bool accumulate) {
    if (n1 <= n0) return;
    const int64_t W = n1 - n0, W8 = W & ~(int64_t)7, r = W - W8;
    const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    float *yc = y + n0;
    bool acc = accumulate;
    for (int64_t k = 0; k < K;) {
        const int g = K - k >= 4 ? 4 : K - k >= 2 ? 2 : 1;
        __m256 av[4];
        const float *b[4];
        for (int i = 0; i < g; i++) {
            av[i] = _mm256_set1_ps(a[k + i]);
            b[i] = B + (k + i) * ldb + n0;
        }
        int64_t n = 0;
        for (; n < W8; n += 8) {
            __m256 s = _mm256_mul_ps(av[0], _mm256_loadu_ps(b[0] + n));
            QR_KERN_ROUNDED(s);
            for (int i = 1; i < g; i++) {
                __m256 p = _mm256_mul_ps(av[i], _mm256_loadu_ps(b[i] + n));
                QR_KERN_ROUNDED(p);
                s = _mm256_add_ps(s, p);
            }
            const __m256 c = acc ? _mm256_loadu_ps(yc + n) : _mm256_setzero_ps();
            _mm256_storeu_ps(yc + n, _mm256_add_ps(s, c));
        }
        if (r) {
            __m256 s = _mm256_mul_ps(av[0], _mm256_maskload_ps(b[0] + n, tail));
            QR_KERN_ROUNDED(s);
            for (int i = 1; i < g; i++) {
                __m256 p = _mm256_mul_ps(av[i], _mm256_maskload_ps(b[i] + n, tail));
                QR_KERN_ROUNDED(p);
                s = _mm256_add_ps(s, p);
            }
            const __m256 c = acc ? _mm256_maskload_ps(yc + n, tail) : _mm256_setzero_ps();
            _mm256_maskstore_ps(yc + n, tail, _mm256_add_ps(s, c));
        }
        acc = true;
        k += g;
    }
    if (K <= 0 && !accumulate)
        for (int64_t n = 0; n < W; n++) yc[n] = 0.0f;
}

#endif
