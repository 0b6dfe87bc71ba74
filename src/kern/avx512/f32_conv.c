/* kern/avx512/f32_conv — AVX-512F column kernel of the M = 1 convolutions (depthwise
 * channels; ORT's order, see QrF32ConvM1Fn): 16 output columns per zmm, 64 at a time in
 * four independent sums, the tail under a mask. */
#if defined(__x86_64__)

/* Four products of taps k..k+3 (weights w0..w3, inputs s[0..3] + j) for 16 columns
 * under mask m, each rounded on its own, summed ((p0 + p1) + p2) + p3 and added to s. */
QR__K_AVX512 static inline __m512 qr__k_m1_quad16(__m512 acc, const float *const *s, int64_t j, __mmask16 m, __m512 w0,
                                                  __m512 w1, __m512 w2, __m512 w3) {
    __m512 p0 = _mm512_mul_ps(w0, _mm512_maskz_loadu_ps(m, s[0] + j));
    __m512 p1 = _mm512_mul_ps(w1, _mm512_maskz_loadu_ps(m, s[1] + j));
    __m512 p2 = _mm512_mul_ps(w2, _mm512_maskz_loadu_ps(m, s[2] + j));
    __m512 p3 = _mm512_mul_ps(w3, _mm512_maskz_loadu_ps(m, s[3] + j));
    QR__K_ROUNDED(p0);
    QR__K_ROUNDED(p1);
    QR__K_ROUNDED(p2);
    QR__K_ROUNDED(p3);
    return _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(p0, p1), p2), p3), acc);
}

/* The pair and single left after the groups of four (r = K % 4 taps). */
QR__K_AVX512 static inline __m512 qr__k_m1_rest16(__m512 acc, const float *const *s, int64_t j, __mmask16 m,
                                                  const float *w, int64_t r) {
    if (r >= 2) {
        __m512 p0 = _mm512_mul_ps(_mm512_set1_ps(w[0]), _mm512_maskz_loadu_ps(m, s[0] + j));
        __m512 p1 = _mm512_mul_ps(_mm512_set1_ps(w[1]), _mm512_maskz_loadu_ps(m, s[1] + j));
        QR__K_ROUNDED(p0);
        QR__K_ROUNDED(p1);
        acc = _mm512_add_ps(_mm512_add_ps(p0, p1), acc);
        s += 2;
        w += 2;
        r -= 2;
    }
    if (r) {
        __m512 p0 = _mm512_mul_ps(_mm512_set1_ps(w[0]), _mm512_maskz_loadu_ps(m, s[0] + j));
        QR__K_ROUNDED(p0);
        acc = _mm512_add_ps(p0, acc);
    }
    return acc;
}

/* QrKF32M1Cols on AVX-512F (no FMA: ORT's M=1 kernel rounds every product). */
QR__K_AVX512 static void qr__k_f32_m1_cols__avx512(int64_t K, int64_t n, const float *w, const float *const *src,
                                                  float bias, float *y) {
    const __m512 vb = _mm512_set1_ps(bias);
    const int64_t K4 = K & ~(int64_t)3;
    const __mmask16 all = 0xffff;
    int64_t j = 0;
    for (; j + 64 <= n; j += 64) {
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t k = 0; k < K4; k += 4) {
            const __m512 w0 = _mm512_set1_ps(w[k]), w1 = _mm512_set1_ps(w[k + 1]);
            const __m512 w2 = _mm512_set1_ps(w[k + 2]), w3 = _mm512_set1_ps(w[k + 3]);
            s0 = qr__k_m1_quad16(s0, src + k, j, all, w0, w1, w2, w3);
            s1 = qr__k_m1_quad16(s1, src + k, j + 16, all, w0, w1, w2, w3);
            s2 = qr__k_m1_quad16(s2, src + k, j + 32, all, w0, w1, w2, w3);
            s3 = qr__k_m1_quad16(s3, src + k, j + 48, all, w0, w1, w2, w3);
        }
        s0 = qr__k_m1_rest16(s0, src + K4, j, all, w + K4, K - K4);
        s1 = qr__k_m1_rest16(s1, src + K4, j + 16, all, w + K4, K - K4);
        s2 = qr__k_m1_rest16(s2, src + K4, j + 32, all, w + K4, K - K4);
        s3 = qr__k_m1_rest16(s3, src + K4, j + 48, all, w + K4, K - K4);
        _mm512_storeu_ps(y + j, _mm512_add_ps(s0, vb));
        _mm512_storeu_ps(y + j + 16, _mm512_add_ps(s1, vb));
        _mm512_storeu_ps(y + j + 32, _mm512_add_ps(s2, vb));
        _mm512_storeu_ps(y + j + 48, _mm512_add_ps(s3, vb));
    }
    for (; j < n; j += 16) {
        const __mmask16 m = n - j >= 16 ? all : (__mmask16)((1u << (n - j)) - 1);
        __m512 s0 = _mm512_setzero_ps();
        for (int64_t k = 0; k < K4; k += 4)
            s0 = qr__k_m1_quad16(s0, src + k, j, m, _mm512_set1_ps(w[k]), _mm512_set1_ps(w[k + 1]),
                                 _mm512_set1_ps(w[k + 2]), _mm512_set1_ps(w[k + 3]));
        s0 = qr__k_m1_rest16(s0, src + K4, j, m, w + K4, K - K4);
        _mm512_mask_storeu_ps(y + j, m, _mm512_add_ps(s0, vb));
    }
}

/* QrF32ConvM1Fn on AVX-512F (kern/gemm.c's band driver). */
QR__K_AVX512 static void qr_f32_conv_m1__avx512(const QrF32ConvB *b, const float *w, float bias, float *y) {
    qr__k_f32_conv_m1(qr__k_f32_m1_cols__avx512, b, w, bias, y);
}

#endif
