/* kern/avx512/f32_sqsum — the error split's sums of squares with AVX-512, the ref's bits
 * (kern/ref/f32_sqsum.c). Each sum is one serial chain of double additions in element order,
 * the floor of its cost (3 cycles an addition on Zen 4); everything else leaves the chain. The
 * elements go in blocks of B: the terms of a block (conversions, finiteness, the product, the
 * mask, the clip flags) are computed 8 at a time, and the non-zero ones packed (compress) one
 * after the other into the block's buffer, while the chain adds up the previous block's buffer 8
 * terms an iteration in the same loop: the out-of-order core runs the vector work under the
 * additions' latency, and a stretch of +0 terms (a Relu's zeros, equal pairs) costs no addition.
 * Leaving a +0 term out keeps the bits: s + (+0) == s unless s is -0 (see kern.h). The last
 * n % 8 elements run the ref. */
#if defined(__x86_64__)

/* Eight pairs at x, y (mask m1: the ones whose term goes to s[1]): the non-zero terms of the
 * finite pairs packed at d0 (for s[0]) and d1 (for s[1]); the counts added to *w0, *w1, the
 * finite pairs of each sum to *f0, *f1. */
QR__K_AVX512 static inline __attribute__((always_inline)) void qr__k_sqerr8_avx512(const float *x, const float *y, const uint8_t *mask, double *d0, int *w0,
                                                    double *d1, int *w1, int64_t *f0, int64_t *f1) {
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), inf = _mm256_set1_ps(INFINITY);
    const __m256 xv = _mm256_loadu_ps(x), yv = _mm256_loadu_ps(y);
    const __mmask8 fin = _mm256_cmp_ps_mask(_mm256_and_ps(xv, absm), inf, _CMP_LT_OQ) &
                         _mm256_cmp_ps_mask(_mm256_and_ps(yv, absm), inf, _CMP_LT_OQ);
    const __m512d d = _mm512_sub_pd(_mm512_cvtps_pd(yv), _mm512_cvtps_pd(xv));
    __m512d t = _mm512_mul_pd(d, d);
    QR_KERN_ROUNDED(t);
    const __mmask8 nz = fin & _mm512_cmp_pd_mask(t, _mm512_setzero_pd(), _CMP_NEQ_OQ);
    __mmask8 m1 = 0;
    if (mask) {
        const __m128i mb = _mm_loadl_epi64((const __m128i *)mask);
        m1 = _mm_test_epi8_mask(mb, mb);
    }
    _mm512_storeu_pd(d0 + *w0, _mm512_maskz_compress_pd(nz & (__mmask8)~m1, t));
    *w0 += qr__k_pop8(nz & (__mmask8)~m1);
    *f0 += qr__k_pop8(fin & (__mmask8)~m1);
    if (m1) {
        _mm512_storeu_pd(d1 + *w1, _mm512_maskz_compress_pd(nz & m1, t));
        *w1 += qr__k_pop8(nz & m1);
        *f1 += qr__k_pop8(fin & m1);
    }
}

/* QrF32SqErrSplitFn with AVX-512. */
QR__K_AVX512 static void qr_f32_sqerr_split__avx512(const float *x, const float *y, const uint8_t *mask, int64_t n,
                                                    double s[2]) {
    enum { B = QR__K_SQ_B, V = QR__K_SQ_B / 8 };
    double buf[4][B + 8] __attribute__((aligned(64)));
    double *c0 = buf[0], *c1 = buf[1], *n0 = buf[2], *n1 = buf[3];   /* this block's terms, the next block's */
    int w0 = 0, w1 = 0;
    int64_t f0 = 0, f1 = 0;
    double s0 = s[0], s1 = s[1];
    const int64_t nv = n / 8, nb = (nv + V - 1) / V;
    for (int64_t v = 0; v < QR_MIN(nv, (int64_t)V); v++)
        qr__k_sqerr8_avx512(x + 8 * v, y + 8 * v, mask ? mask + 8 * v : NULL, c0, &w0, c1, &w1, &f0, &f1);
    for (int64_t b = 0; b < nb; b++) {
        int64_t v = (b + 1) * V;
        const int64_t ve = QR_MIN(nv, v + V);
        int j0 = 0, j1 = 0, m0 = 0, m1 = 0;
        for (; j0 + 8 <= w0 && v < ve; j0 += 8, v++) {   /* this block's additions, the next block's terms */
            s0 = qr__k_chain8(s0, c0 + j0, 8);
            if (j1 + 8 <= w1) { s1 = qr__k_chain8(s1, c1 + j1, 8); j1 += 8; }
            qr__k_sqerr8_avx512(x + 8 * v, y + 8 * v, mask ? mask + 8 * v : NULL, n0, &m0, n1, &m1, &f0, &f1);
        }
        for (; v < ve; v++) qr__k_sqerr8_avx512(x + 8 * v, y + 8 * v, mask ? mask + 8 * v : NULL, n0, &m0, n1, &m1, &f0, &f1);
        for (; j0 + 8 <= w0; j0 += 8) s0 = qr__k_chain8(s0, c0 + j0, 8);
        s0 = qr__k_chain8(s0, c0 + j0, w0 - j0);
        for (; j1 + 8 <= w1; j1 += 8) s1 = qr__k_chain8(s1, c1 + j1, 8);
        s1 = qr__k_chain8(s1, c1 + j1, w1 - j1);
        double *t = c0; c0 = n0; n0 = t;
        t = c1; c1 = n1; n1 = t;
        w0 = m0;
        w1 = m1;
    }
    _mm256_zeroupper();
    if (f0) s0 += 0.0;   /* a sum that received terms is not -0, even when they were all +0 */
    if (f1) s1 += 0.0;
    s[0] = s0;
    s[1] = s1;
    qr_f32_sqerr_split__ref(x + 8 * nv, y + 8 * nv, mask ? mask + 8 * nv : NULL, n - 8 * nv, s);
}

/* The clip run's parameters (QrF32ClipSqFn) as vectors. */
typedef struct QrKClip512 {
    __m256 lo, hi;
    __m512d qlo, qhi, st;
    bool clo, chi, scaled;
} QrKClip512;

/* Eight elements of u: their mask bytes, the non-zero terms of the finite ones packed at d (count
 * added to *w), the finite and the clipped ones counted. */
QR__K_AVX512 static inline __attribute__((always_inline)) void qr__k_clip8_avx512(const QrKClip512 *p, const float *u, uint8_t *mask, double *d, int *w,
                                                   int64_t *n_fin, int64_t *n_clip) {
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), inf = _mm256_set1_ps(INFINITY);
    __m256 v = _mm256_loadu_ps(u);
    if (p->clo) v = _mm256_mask_blend_ps(_mm256_cmp_ps_mask(v, p->lo, _CMP_LT_OQ), v, p->lo);
    if (p->chi) v = _mm256_mask_blend_ps(_mm256_cmp_ps_mask(v, p->hi, _CMP_GT_OQ), v, p->hi);
    const __mmask8 fin = _mm256_cmp_ps_mask(_mm256_and_ps(v, absm), inf, _CMP_LT_OQ);
    const __m512d vd = _mm512_cvtps_pd(v);
    const __mmask8 clip = fin & (_mm512_cmp_pd_mask(vd, p->qlo, _CMP_LT_OQ) | _mm512_cmp_pd_mask(vd, p->qhi, _CMP_GT_OQ));
    _mm_storel_epi64((__m128i *)mask, _mm_maskz_mov_epi8(clip, _mm_set1_epi8(1)));
    const __m512d q = p->scaled ? _mm512_div_pd(vd, p->st) : vd;
    __m512d t = _mm512_mul_pd(q, q);
    QR_KERN_ROUNDED(t);
    const __mmask8 nz = fin & _mm512_cmp_pd_mask(t, _mm512_setzero_pd(), _CMP_NEQ_OQ);
    _mm512_storeu_pd(d + *w, _mm512_maskz_compress_pd(nz, t));
    *w += qr__k_pop8(nz);
    *n_fin += qr__k_pop8(fin);
    *n_clip += qr__k_pop8(clip);
}

/* QrF32ClipSqFn with AVX-512: blocks as in qr_f32_sqerr_split__avx512, one sum. */
QR__K_AVX512 static void qr_f32_clip_sq__avx512(const float *u, int64_t n, float ilo, float ihi, double lo, double hi,
                                                double st, bool scaled, uint8_t *mask, QrF32ClipSq *r) {
    enum { B = QR__K_SQ_B, V = QR__K_SQ_B / 8 };
    const QrKClip512 p = { _mm256_set1_ps(ilo), _mm256_set1_ps(ihi), _mm512_set1_pd(lo), _mm512_set1_pd(hi),
                           _mm512_set1_pd(st), ilo == ilo, ihi == ihi, scaled };
    double buf[2][B + 8] __attribute__((aligned(64)));
    double *c = buf[0], *nx = buf[1];   /* this block's terms, the next block's */
    int w = 0;
    double s = r->s;
    int64_t n_fin = 0, n_clip = 0;
    const int64_t nv = n / 8, nb = (nv + V - 1) / V;
    for (int64_t v = 0; v < QR_MIN(nv, (int64_t)V); v++) qr__k_clip8_avx512(&p, u + 8 * v, mask + 8 * v, c, &w, &n_fin, &n_clip);
    for (int64_t b = 0; b < nb; b++) {
        int64_t v = (b + 1) * V;
        const int64_t ve = QR_MIN(nv, v + V);
        int j = 0, m = 0;
        for (; j + 8 <= w && v < ve; j += 8, v++) {   /* this block's additions, the next block's terms */
            s = qr__k_chain8(s, c + j, 8);
            qr__k_clip8_avx512(&p, u + 8 * v, mask + 8 * v, nx, &m, &n_fin, &n_clip);
        }
        for (; v < ve; v++) qr__k_clip8_avx512(&p, u + 8 * v, mask + 8 * v, nx, &m, &n_fin, &n_clip);
        for (; j + 8 <= w; j += 8) s = qr__k_chain8(s, c + j, 8);
        s = qr__k_chain8(s, c + j, w - j);
        double *t = c;
        c = nx;
        nx = t;
        w = m;
    }
    _mm256_zeroupper();
    if (n_fin) s += 0.0;   /* as in qr_f32_sqerr_split__avx512 */
    r->s = s;
    r->n_fin += n_fin;
    r->n_clip += n_clip;
    r->n_in += n_fin - n_clip;
    qr_f32_clip_sq__ref(u + 8 * nv, n - 8 * nv, ilo, ihi, lo, hi, st, scaled, mask + 8 * nv, r);
}

#endif
