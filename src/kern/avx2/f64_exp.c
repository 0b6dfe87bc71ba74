/* kern/avx2/f64_exp — QrF32ExpSubFn with AVX2 + FMA: the ref's definition (kern/ref/f64_exp.c)
 * on 4 doubles at a time, every operation the ref's, so the bits are the ref's; the last
 * n % 4 values run the ref. */
#if defined(__x86_64__)

QR__K_AVX2 static inline __m256d qr__k_exp256(__m256d x) {
    const __m256d s = _mm256_set1_pd(QR__EXP_SHIFT);
    const __m256d nan = _mm256_cmp_pd(x, x, _CMP_UNORD_Q);
    /* max / min return their second operand for a NaN lane: it is blended back at the end */
    __m256d c = _mm256_min_pd(_mm256_max_pd(x, _mm256_set1_pd(QR__EXP_LO)), _mm256_set1_pd(QR__EXP_HI));
    __m256d t = _mm256_fmadd_pd(c, _mm256_set1_pd(QR__EXP_INV_LN2), s);
    __m256i k = _mm256_sub_epi64(_mm256_castpd_si256(t), _mm256_castpd_si256(s));
    __m256d kd = _mm256_sub_pd(t, s);
    __m256d r = _mm256_fnmadd_pd(kd, _mm256_set1_pd(QR__EXP_LN2_HI), c);
    r = _mm256_fnmadd_pd(kd, _mm256_set1_pd(QR__EXP_LN2_LO), r);
    __m256d p = _mm256_set1_pd(qr__exp_c[13]);
    for (int n = 12; n >= 0; n--) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(qr__exp_c[n]));
    const __m256i bias = _mm256_set1_epi64x(1023);
    __m256i k1 = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_add_epi64(k, _mm256_set1_epi64x(2048)), 1),
                                  _mm256_set1_epi64x(1024));
    __m256i k2 = _mm256_sub_epi64(k, k1);
    __m256d p1 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(k1, bias), 52));
    __m256d p2 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(k2, bias), 52));
    __m256d e = _mm256_mul_pd(_mm256_mul_pd(p, p1), p2);
    return _mm256_blendv_pd(e, x, nan);
}

QR__K_AVX2 static void qr_f32_exp_sub__avx2(const float *x, double sub, double *out, int64_t n) {
    const __m256d sv = _mm256_set1_pd(sub);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(out + i, qr__k_exp256(_mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), sv)));
    _mm256_zeroupper();
    qr_f32_exp_sub__ref(x + i, sub, out + i, n - i);
}

#endif
