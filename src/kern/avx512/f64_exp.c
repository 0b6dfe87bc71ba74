/* kern/avx512/f64_exp — QrF32ExpSubFn with AVX-512: the ref's definition (kern/ref/f64_exp.c)
 * on 8 doubles at a time, every operation the ref's (the same fma, subtractions, integer
 * steps and two multiplies in the same order), so the bits are the ref's; the tail is masked. */
#if defined(__x86_64__)

QR__K_AVX512 static inline __m512d qr__k_exp512(__m512d x) {
    const __m512d s = _mm512_set1_pd(QR__EXP_SHIFT);
    const __mmask8 nan = _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q);
    __m512d c = _mm512_min_pd(_mm512_max_pd(x, _mm512_set1_pd(QR__EXP_LO)), _mm512_set1_pd(QR__EXP_HI));
    __m512d t = _mm512_fmadd_pd(c, _mm512_set1_pd(QR__EXP_INV_LN2), s);
    __m512i k = _mm512_sub_epi64(_mm512_castpd_si512(t), _mm512_castpd_si512(s));
    __m512d kd = _mm512_sub_pd(t, s);
    __m512d r = _mm512_fnmadd_pd(kd, _mm512_set1_pd(QR__EXP_LN2_HI), c);   /* fma(-kd, HI, c) */
    r = _mm512_fnmadd_pd(kd, _mm512_set1_pd(QR__EXP_LN2_LO), r);
    __m512d p = _mm512_set1_pd(qr__exp_c[13]);
    for (int n = 12; n >= 0; n--) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(qr__exp_c[n]));
    const __m512i bias = _mm512_set1_epi64(1023);
    __m512i k1 = _mm512_sub_epi64(_mm512_srli_epi64(_mm512_add_epi64(k, _mm512_set1_epi64(2048)), 1),
                                  _mm512_set1_epi64(1024));
    __m512i k2 = _mm512_sub_epi64(k, k1);
    __m512d p1 = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(k1, bias), 52));
    __m512d p2 = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(k2, bias), 52));
    __m512d e = _mm512_mul_pd(_mm512_mul_pd(p, p1), p2);
    return _mm512_mask_blend_pd(nan, e, x);
}

QR__K_AVX512 static void qr_f32_exp_sub__avx512(const float *x, double sub, double *out, int64_t n) {
    const __m512d sv = _mm512_set1_pd(sub);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(out + i, qr__k_exp512(_mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)), sv)));
    if (i < n) {
        const __mmask8 m = (__mmask8)((1u << (n - i)) - 1);
        __m512d v = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + i));
        _mm512_mask_storeu_pd(out + i, m, qr__k_exp512(_mm512_sub_pd(v, sv)));
    }
}

/* QrF32KlSidesFn with AVX-512: both sides' exponentials 8 pairs at a time (qr__k_exp512 of v - sub
 * and of w - sub2, the ref's bits) and the products e * (v - w) as vectors (one rounding each, as the
 * ref's), kept in a ring of R slots; the three chains of additions — *s, *t, *s2, each one at a time
 * in element order as the ref's — run D vectors behind, side by side, so they wait on no exponential
 * and the out-of-order core overlaps both (the pass costs about what one side's did). A pair with v
 * or w not finite is skipped (its lane's bit is clear in fin); the last n % 8 pairs run the ref. */
QR__K_AVX512 static void qr_f32_kl_sides__avx512(const float *v, const float *w, int64_t n, double sub, double sub2,
                                                 double *s, double *t, double *s2) {
    enum { R = 8, D = 6 };
    const __m512d sv = _mm512_set1_pd(sub), sv2 = _mm512_set1_pd(sub2);
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), inf = _mm256_set1_ps(INFINITY);
    double e[R][8] __attribute__((aligned(64))), e2[R][8] __attribute__((aligned(64))), p[R][8] __attribute__((aligned(64)));
    unsigned fin[R];
    double ss = *s, tt = *t, ss2 = *s2;
    const int64_t nv = n / 8;
    for (int64_t k = 0; k < nv + D; k++) {
        if (k < nv) {
            const int q = (int)(k & (R - 1));
            const __m256 vf = _mm256_loadu_ps(v + 8 * k), wf = _mm256_loadu_ps(w + 8 * k);
            const __m512d vd = _mm512_cvtps_pd(vf), wd = _mm512_cvtps_pd(wf);
            const __m512d ev = qr__k_exp512(_mm512_sub_pd(vd, sv));
            _mm512_store_pd(e[q], ev);
            _mm512_store_pd(e2[q], qr__k_exp512(_mm512_sub_pd(wd, sv2)));
            __m512d pv = _mm512_mul_pd(ev, _mm512_sub_pd(vd, wd));
            QR_KERN_ROUNDED(pv);
            _mm512_store_pd(p[q], pv);
            fin[q] = (unsigned)(_mm256_cmp_ps_mask(_mm256_and_ps(vf, absm), inf, _CMP_LT_OQ) &
                                _mm256_cmp_ps_mask(_mm256_and_ps(wf, absm), inf, _CMP_LT_OQ));
        }
        if (k >= D) {
            const int q = (int)((k - D) & (R - 1));
            const double *eq = e[q], *e2q = e2[q], *pq = p[q];
            const unsigned f = fin[q];
            if (f == 0xff) {
                for (int j = 0; j < 8; j++) { ss += eq[j]; tt += pq[j]; ss2 += e2q[j]; }
            } else {
                for (int j = 0; j < 8; j++)
                    if (f >> j & 1) { ss += eq[j]; tt += pq[j]; ss2 += e2q[j]; }
            }
        }
    }
    _mm256_zeroupper();
    *s = ss;
    *t = tt;
    *s2 = ss2;
    qr_f32_kl_sides__ref(v + 8 * nv, w + 8 * nv, n - 8 * nv, sub, sub2, s, t, s2);
}

#endif
