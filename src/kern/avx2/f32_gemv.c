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

#endif
