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

/* QrF32KlSideFn with AVX2: as the AVX-512 one (kern/avx512/f64_exp.c), 4 pairs per vector
 * (qr__k_exp256, the ref's bits), the additions in element order D vectors behind; the last
 * n % 4 pairs run the ref. */
QR__K_AVX2 static void qr_f32_kl_side__avx2(const float *v, const float *w, int64_t n, double sub, double *s, double *t) {
    enum { R = 16, D = 10 };
    const __m256d sv = _mm256_set1_pd(sub);
    const __m128 absm = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)), inf = _mm_set1_ps(INFINITY);
    double e[R][4] __attribute__((aligned(32))), p[R][4] __attribute__((aligned(32)));
    unsigned fin[R];
    double ss = *s, tt = t ? *t : 0;
    const int64_t nv = n / 4;
    for (int64_t k = 0; k < nv + D; k++) {
        if (k < nv) {
            const int q = (int)(k & (R - 1));
            const __m128 vf = _mm_loadu_ps(v + 4 * k), wf = _mm_loadu_ps(w + 4 * k);
            const __m256d vd = _mm256_cvtps_pd(vf);
            const __m256d ev = qr__k_exp256(_mm256_sub_pd(vd, sv));
            _mm256_store_pd(e[q], ev);
            if (t) {
                __m256d pv = _mm256_mul_pd(ev, _mm256_sub_pd(vd, _mm256_cvtps_pd(wf)));
                QR_KERN_ROUNDED(pv);
                _mm256_store_pd(p[q], pv);
            }
            fin[q] = (unsigned)_mm_movemask_ps(_mm_and_ps(_mm_cmp_ps(_mm_and_ps(vf, absm), inf, _CMP_LT_OQ),
                                                          _mm_cmp_ps(_mm_and_ps(wf, absm), inf, _CMP_LT_OQ)));
        }
        if (k >= D) {
            const int q = (int)((k - D) & (R - 1));
            const double *eq = e[q], *pq = p[q];
            const unsigned f = fin[q];
            if (f == 0xf && t)
                for (int j = 0; j < 4; j++) { ss += eq[j]; tt += pq[j]; }
            else if (f == 0xf)
                for (int j = 0; j < 4; j++) ss += eq[j];
            else
                for (int j = 0; j < 4; j++)
                    if (f >> j & 1) {
                        ss += eq[j];
                        if (t) tt += pq[j];
                    }
        }
    }
    _mm256_zeroupper();
    *s = ss;
    if (t) *t = tt;
    qr_f32_kl_side__ref(v + 4 * nv, w + 4 * nv, n - 4 * nv, sub, s, t);
}

/* QrF32KlSidesFn with AVX2: the two sides' passes (qr_f32_kl_side__avx2). */
QR__K_AVX2 static void qr_f32_kl_sides__avx2(const float *x, const float *y, int64_t n, double subx, double suby, double *sx,
                                             double *tx, double *sy) {
    qr_f32_kl_side__avx2(x, y, n, subx, sx, tx);
    qr_f32_kl_side__avx2(y, x, n, suby, sy, NULL);
}

#endif
