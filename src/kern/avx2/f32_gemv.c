/* kern/avx2/f32_gemv — QrF32GemvM1tFn with AVX2: one 8-lane vector per row holds the lanes of
 * the definition (a multiply and a separate add per step, as MLAS's M=1 transposed-B kernel),
 * four rows per pass so that a's loads are shared. Bit-exact with qr_f32_gemv_m1t__ref. */
#if defined(__x86_64__)

/* s + a * b, the product rounded on its own. */
QR__K_AVX2 static inline __m256 qr__k_gemv_acc8(__m256 s, __m256 a, __m256 b) {
    __m256 p = _mm256_mul_ps(a, b);
    QR__K_ROUNDED(p);
    return _mm256_add_ps(s, p);
}

QR__K_AVX2 static void qr_f32_gemv_m1t__avx2(int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a,
                                             const float *B, int64_t ldb, float *y, bool accumulate) {
    const int64_t K8 = K & ~(int64_t)7, r = K - K8;
    /* the K tail: lanes past K load +0 from both operands (a +0 product leaves a lane as is:
     * a lane, started at +0, is never -0) */
    const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 at = _mm256_maskload_ps(a + K8, tail);
    float l[4][8];
    int64_t n = n0;
    for (; n + 4 <= n1; n += 4) {
        const float *b0 = B + n * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t k = 0; k < K8; k += 8) {
            const __m256 av = _mm256_loadu_ps(a + k);
            s0 = qr__k_gemv_acc8(s0, av, _mm256_loadu_ps(b0 + k));
            s1 = qr__k_gemv_acc8(s1, av, _mm256_loadu_ps(b1 + k));
            s2 = qr__k_gemv_acc8(s2, av, _mm256_loadu_ps(b2 + k));
            s3 = qr__k_gemv_acc8(s3, av, _mm256_loadu_ps(b3 + k));
        }
        if (r) {
            s0 = qr__k_gemv_acc8(s0, at, _mm256_maskload_ps(b0 + K8, tail));
            s1 = qr__k_gemv_acc8(s1, at, _mm256_maskload_ps(b1 + K8, tail));
            s2 = qr__k_gemv_acc8(s2, at, _mm256_maskload_ps(b2 + K8, tail));
            s3 = qr__k_gemv_acc8(s3, at, _mm256_maskload_ps(b3 + K8, tail));
        }
        _mm256_storeu_ps(l[0], s0);
        _mm256_storeu_ps(l[1], s1);
        _mm256_storeu_ps(l[2], s2);
        _mm256_storeu_ps(l[3], s3);
        for (int i = 0; i < 4; i++) {
            const float s = qr__k_gemv_reduce(l[i], n + i, N);
            y[n + i] = s + (accumulate ? y[n + i] : 0.0f);
        }
    }
    for (; n < n1; n++) {
        const float *b0 = B + n * ldb;
        __m256 s0 = _mm256_setzero_ps();
        for (int64_t k = 0; k < K8; k += 8) s0 = qr__k_gemv_acc8(s0, _mm256_loadu_ps(a + k), _mm256_loadu_ps(b0 + k));
        if (r) s0 = qr__k_gemv_acc8(s0, at, _mm256_maskload_ps(b0 + K8, tail));
        _mm256_storeu_ps(l[0], s0);
        const float s = qr__k_gemv_reduce(l[0], n, N);
        y[n] = s + (accumulate ? y[n] : 0.0f);
    }
}

/* Eight dequantized values of B row q (bytes k .. k+7; the K tail: lanes past K are +0,
 * whatever the scale): (float)(q - zp) * scale as DequantizeLinear computes them. */
QR__K_AVX2 static inline __m256 qr__k_gemv_dq8(const void *q, bool q_signed, int64_t k, __m256i zp, __m256 sc) {
    const __m128i b = _mm_loadl_epi64((const __m128i *)((const uint8_t *)q + k));
    const __m256i v = q_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, zp)), sc);
}

/* The last r < 8 bytes of a row read into a zeroed 8-byte buffer (never past the row). */
QR__K_AVX2 static inline __m256 qr__k_gemv_dq8_tail(const void *q, bool q_signed, int64_t k, int64_t r, __m256i zp,
                                                    __m256 sc, __m256 keep) {
    uint8_t t[8] = { 0 };
    memcpy(t, (const uint8_t *)q + k, (size_t)r);
    return _mm256_and_ps(qr__k_gemv_dq8(t, q_signed, 0, zp, sc), keep);
}

/* QrF32GemvM1tQ8Fn with AVX2: qr_f32_gemv_m1t__avx2 with each row's eight values
 * dequantized in registers (vpmovsx/zxbd, the zero point subtracted as int32, vcvtdq2ps,
 * the scale multiplied: DequantizeLinear's one rounding). */
QR__K_AVX2 static void qr_f32_gemv_m1t_q8__avx2(int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a,
                                                const void *q, bool q_signed, int64_t ldb, const float *scale, int64_t ss,
                                                const int32_t *zp, int64_t zps, float *y, bool accumulate) {
    const int64_t K8 = K & ~(int64_t)7, r = K - K8;
    const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 at = _mm256_maskload_ps(a + K8, tail), keep = _mm256_castsi256_ps(tail);
    const uint8_t *Q = q;
    float l[4][8];
    int64_t n = n0;
#define QR__K_ZS(i) __m256i z##i = _mm256_set1_epi32(zp ? zp[(n + i) * zps] : 0); __m256 c##i = _mm256_set1_ps(scale[(n + i) * ss]);
    for (; n + 4 <= n1; n += 4) {
        const uint8_t *b0 = Q + n * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
        QR__K_ZS(0) QR__K_ZS(1) QR__K_ZS(2) QR__K_ZS(3)
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t k = 0; k < K8; k += 8) {
            const __m256 av = _mm256_loadu_ps(a + k);
            s0 = qr__k_gemv_acc8(s0, av, qr__k_gemv_dq8(b0, q_signed, k, z0, c0));
            s1 = qr__k_gemv_acc8(s1, av, qr__k_gemv_dq8(b1, q_signed, k, z1, c1));
            s2 = qr__k_gemv_acc8(s2, av, qr__k_gemv_dq8(b2, q_signed, k, z2, c2));
            s3 = qr__k_gemv_acc8(s3, av, qr__k_gemv_dq8(b3, q_signed, k, z3, c3));
        }
        if (r) {
            s0 = qr__k_gemv_acc8(s0, at, qr__k_gemv_dq8_tail(b0, q_signed, K8, r, z0, c0, keep));
            s1 = qr__k_gemv_acc8(s1, at, qr__k_gemv_dq8_tail(b1, q_signed, K8, r, z1, c1, keep));
            s2 = qr__k_gemv_acc8(s2, at, qr__k_gemv_dq8_tail(b2, q_signed, K8, r, z2, c2, keep));
            s3 = qr__k_gemv_acc8(s3, at, qr__k_gemv_dq8_tail(b3, q_signed, K8, r, z3, c3, keep));
        }
        _mm256_storeu_ps(l[0], s0);
        _mm256_storeu_ps(l[1], s1);
        _mm256_storeu_ps(l[2], s2);
        _mm256_storeu_ps(l[3], s3);
        for (int i = 0; i < 4; i++) {
            const float s = qr__k_gemv_reduce(l[i], n + i, N);
            y[n + i] = s + (accumulate ? y[n + i] : 0.0f);
        }
    }
    for (; n < n1; n++) {
        const uint8_t *b0 = Q + n * ldb;
        QR__K_ZS(0)
        __m256 s0 = _mm256_setzero_ps();
        for (int64_t k = 0; k < K8; k += 8) s0 = qr__k_gemv_acc8(s0, _mm256_loadu_ps(a + k), qr__k_gemv_dq8(b0, q_signed, k, z0, c0));
        if (r) s0 = qr__k_gemv_acc8(s0, at, qr__k_gemv_dq8_tail(b0, q_signed, K8, r, z0, c0, keep));
        _mm256_storeu_ps(l[0], s0);
        const float s = qr__k_gemv_reduce(l[0], n, N);
        y[n] = s + (accumulate ? y[n] : 0.0f);
    }
#undef QR__K_ZS
}

#endif
