/* kern/avx2/f32_conv_m1 — AVX2 column kernel of the M = 1 convolutions (depthwise channels;
 * ORT's order, see QrF32ConvM1Fn). */
#if defined(__x86_64__)

/* Four products of taps k..k+3 (weights w0..w3, inputs s[0..3] + j) for 8 columns, each
 * rounded on its own, summed ((p0 + p1) + p2) + p3 and added to acc (QrF32ConvM1Fn). */
QR__K_AVX2 static inline __m256 qr__k_m1_quad8(__m256 acc, const float *const *s, int64_t j, __m256 w0, __m256 w1,
                                               __m256 w2, __m256 w3) {
    __m256 p0 = _mm256_mul_ps(w0, _mm256_loadu_ps(s[0] + j)), p1 = _mm256_mul_ps(w1, _mm256_loadu_ps(s[1] + j));
    __m256 p2 = _mm256_mul_ps(w2, _mm256_loadu_ps(s[2] + j)), p3 = _mm256_mul_ps(w3, _mm256_loadu_ps(s[3] + j));
    QR_KERN_ROUNDED(p0);
    QR_KERN_ROUNDED(p1);
    QR_KERN_ROUNDED(p2);
    QR_KERN_ROUNDED(p3);
    return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(p0, p1), p2), p3), acc);
}

/* The pair and single left after the groups of four (r = K % 4 taps from s, w). */
QR__K_AVX2 static inline __m256 qr__k_m1_rest8(__m256 acc, const float *const *s, int64_t j, const float *w, int64_t r) {
    if (r >= 2) {
        __m256 p0 = _mm256_mul_ps(_mm256_broadcast_ss(w), _mm256_loadu_ps(s[0] + j));
        __m256 p1 = _mm256_mul_ps(_mm256_broadcast_ss(w + 1), _mm256_loadu_ps(s[1] + j));
        QR_KERN_ROUNDED(p0);
        QR_KERN_ROUNDED(p1);
        acc = _mm256_add_ps(_mm256_add_ps(p0, p1), acc);
        s += 2;
        w += 2;
        r -= 2;
    }
    if (r) {
        __m256 p0 = _mm256_mul_ps(_mm256_broadcast_ss(w), _mm256_loadu_ps(s[0] + j));
        QR_KERN_ROUNDED(p0);
        acc = _mm256_add_ps(p0, acc);
    }
    return acc;
}

/* QrKF32M1Cols on AVX2 (no FMA: ORT's M=1 kernel rounds every product): 32 columns at a
 * time in four independent sums, then 8, the last partial 8 through a buffer. */
QR__K_AVX2 static void qr__k_f32_m1_cols__avx2(int64_t K, int64_t n, const float *w, const float *const *src, float bias,
                                              float *y) {
    const __m256 vb = _mm256_set1_ps(bias);
    const int64_t K4 = K & ~(int64_t)3;
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) {
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t k = 0; k < K4; k += 4) {
            const __m256 w0 = _mm256_broadcast_ss(w + k), w1 = _mm256_broadcast_ss(w + k + 1);
            const __m256 w2 = _mm256_broadcast_ss(w + k + 2), w3 = _mm256_broadcast_ss(w + k + 3);
            s0 = qr__k_m1_quad8(s0, src + k, j, w0, w1, w2, w3);
            s1 = qr__k_m1_quad8(s1, src + k, j + 8, w0, w1, w2, w3);
            s2 = qr__k_m1_quad8(s2, src + k, j + 16, w0, w1, w2, w3);
            s3 = qr__k_m1_quad8(s3, src + k, j + 24, w0, w1, w2, w3);
        }
        s0 = qr__k_m1_rest8(s0, src + K4, j, w + K4, K - K4);
        s1 = qr__k_m1_rest8(s1, src + K4, j + 8, w + K4, K - K4);
        s2 = qr__k_m1_rest8(s2, src + K4, j + 16, w + K4, K - K4);
        s3 = qr__k_m1_rest8(s3, src + K4, j + 24, w + K4, K - K4);
        _mm256_storeu_ps(y + j, _mm256_add_ps(s0, vb));
        _mm256_storeu_ps(y + j + 8, _mm256_add_ps(s1, vb));
        _mm256_storeu_ps(y + j + 16, _mm256_add_ps(s2, vb));
        _mm256_storeu_ps(y + j + 24, _mm256_add_ps(s3, vb));
    }
    for (; j < n; j += 8) {   /* readable up to rup(n, 16): the last 8 columns can be loaded */
        __m256 s0 = _mm256_setzero_ps();
        for (int64_t k = 0; k < K4; k += 4)
            s0 = qr__k_m1_quad8(s0, src + k, j, _mm256_broadcast_ss(w + k), _mm256_broadcast_ss(w + k + 1),
                                _mm256_broadcast_ss(w + k + 2), _mm256_broadcast_ss(w + k + 3));
        s0 = _mm256_add_ps(qr__k_m1_rest8(s0, src + K4, j, w + K4, K - K4), vb);
        if (j + 8 <= n) {
            _mm256_storeu_ps(y + j, s0);
        } else {
            float tmp[8];
            _mm256_storeu_ps(tmp, s0);
            memcpy(y + j, tmp, (size_t)(n - j) * sizeof(float));
        }
    }
}

/* QrF32ConvM1Fn on AVX2 (kern/gemm.c's band driver). */
QR__K_AVX2 static void qr_f32_conv_m1__avx2(const QrF32ConvB *b, const float *w, float bias, float *y) {
    qr__k_f32_conv_m1(qr__k_f32_m1_cols__avx2, b, w, bias, y);
}

#endif
