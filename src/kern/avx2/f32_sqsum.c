/* kern/avx2/f32_sqsum — the error split's sums of squares with AVX2, the ref's bits
 * (kern/ref/f32_sqsum.c), in the blocks of the AVX-512 kernels (kern/avx512/f32_sqsum.c, whose
 * comment says why): the terms of 8 elements at a time as two vectors of 4 doubles, each half's
 * non-zero terms packed to the front by a permutation from a table (AVX2 has no compress) and
 * stored one after the other; the last n % 8 run the ref. */
#if defined(__x86_64__)

/* For a 4-bit mask of double lanes: the 32-bit lane indices that move those lanes, in order, to
 * the front (the rest of the vector is not read). */
static const int32_t qr__k_pack4[16][8] __attribute__((aligned(32))) = {
    { 0, 0, 0, 0, 0, 0, 0, 0 }, { 0, 1, 0, 0, 0, 0, 0, 0 }, { 2, 3, 0, 0, 0, 0, 0, 0 }, { 0, 1, 2, 3, 0, 0, 0, 0 },
    { 4, 5, 0, 0, 0, 0, 0, 0 }, { 0, 1, 4, 5, 0, 0, 0, 0 }, { 2, 3, 4, 5, 0, 0, 0, 0 }, { 0, 1, 2, 3, 4, 5, 0, 0 },
    { 6, 7, 0, 0, 0, 0, 0, 0 }, { 0, 1, 6, 7, 0, 0, 0, 0 }, { 2, 3, 6, 7, 0, 0, 0, 0 }, { 0, 1, 2, 3, 6, 7, 0, 0 },
    { 4, 5, 6, 7, 0, 0, 0, 0 }, { 0, 1, 4, 5, 6, 7, 0, 0 }, { 2, 3, 4, 5, 6, 7, 0, 0 }, { 0, 1, 2, 3, 4, 5, 6, 7 },
};

/* The lanes of m (4 bits) of t stored from dst on, in order; returns how many. */
QR__K_AVX2 static inline __attribute__((always_inline)) int qr__k_pack_store4(double *dst, __m256d t, int m) {
    const __m256i idx = _mm256_load_si256((const __m256i *)qr__k_pack4[m]);
    _mm256_storeu_pd(dst, _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(t), idx)));
    return qr__k_pop8((unsigned)m);
}

/* Bit i set where byte i of the 8 at p is not 0. */
QR__K_AVX2 static inline int qr__k_nonzero8(const uint8_t *p) {
    const __m128i b = _mm_loadl_epi64((const __m128i *)p);
    return ~_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_setzero_si128())) & 0xff;
}

/* Bit i set where float i of v is finite. */
QR__K_AVX2 static inline int qr__k_finite8(__m256 v) {
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    return _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(v, absm), _mm256_set1_ps(INFINITY), _CMP_LT_OQ));
}

/* Eight pairs at x, y (mask: the ones whose term goes to s[1]) as qr__k_sqerr8_avx512 does them:
 * the non-zero terms packed at d0 / d1, counts to *w0, *w1, the finite pairs to *f0, *f1. */
QR__K_AVX2 static inline __attribute__((always_inline)) void qr__k_sqerr8_avx2(const float *x, const float *y, const uint8_t *mask, double *d0, int *w0,
                                                double *d1, int *w1, int64_t *f0, int64_t *f1) {
    const __m256 xv = _mm256_loadu_ps(x), yv = _mm256_loadu_ps(y);
    const int fin = qr__k_finite8(xv) & qr__k_finite8(yv), m1 = mask ? qr__k_nonzero8(mask) : 0;
    const __m256d dl = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(yv)), _mm256_cvtps_pd(_mm256_castps256_ps128(xv)));
    const __m256d dh = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(yv, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(xv, 1)));
    __m256d tl = _mm256_mul_pd(dl, dl), th = _mm256_mul_pd(dh, dh);
    QR_KERN_ROUNDED(tl);
    QR_KERN_ROUNDED(th);
    const __m256d z = _mm256_setzero_pd();
    const int nz = fin & (_mm256_movemask_pd(_mm256_cmp_pd(tl, z, _CMP_NEQ_OQ)) | _mm256_movemask_pd(_mm256_cmp_pd(th, z, _CMP_NEQ_OQ)) << 4);
    const int k0 = nz & ~m1;
    *w0 += qr__k_pack_store4(d0 + *w0, tl, k0 & 15);
    *w0 += qr__k_pack_store4(d0 + *w0, th, k0 >> 4);
    *f0 += qr__k_pop8((unsigned)(fin & ~m1));
    if (m1) {
        const int k1 = nz & m1;
        *w1 += qr__k_pack_store4(d1 + *w1, tl, k1 & 15);
        *w1 += qr__k_pack_store4(d1 + *w1, th, k1 >> 4);
        *f1 += qr__k_pop8((unsigned)(fin & m1));
    }
}

/* QrF32SqErrSplitFn with AVX2: the blocks of qr_f32_sqerr_split__avx512 (its comment). */
QR__K_AVX2 static void qr_f32_sqerr_split__avx2(const float *x, const float *y, const uint8_t *mask, int64_t n, double s[2]) {
    enum { B = QR__K_SQ_B, V = QR__K_SQ_B / 8 };
    double buf[4][B + 8] __attribute__((aligned(32)));
    double *c0 = buf[0], *c1 = buf[1], *n0 = buf[2], *n1 = buf[3];   /* this block's terms, the next block's */
    int w0 = 0, w1 = 0;
    int64_t f0 = 0, f1 = 0;
    double s0 = s[0], s1 = s[1];
    const int64_t nv = n / 8, nb = (nv + V - 1) / V;
    for (int64_t v = 0; v < QR_MIN(nv, (int64_t)V); v++)
        qr__k_sqerr8_avx2(x + 8 * v, y + 8 * v, mask ? mask + 8 * v : NULL, c0, &w0, c1, &w1, &f0, &f1);
    for (int64_t b = 0; b < nb; b++) {
        int64_t v = (b + 1) * V;
        const int64_t ve = QR_MIN(nv, v + V);
        int j0 = 0, j1 = 0, m0 = 0, m1 = 0;
        for (; j0 + 8 <= w0 && v < ve; j0 += 8, v++) {   /* this block's additions, the next block's terms */
            s0 = qr__k_chain8(s0, c0 + j0, 8);
            if (j1 + 8 <= w1) { s1 = qr__k_chain8(s1, c1 + j1, 8); j1 += 8; }
            qr__k_sqerr8_avx2(x + 8 * v, y + 8 * v, mask ? mask + 8 * v : NULL, n0, &m0, n1, &m1, &f0, &f1);
        }
        for (; v < ve; v++) qr__k_sqerr8_avx2(x + 8 * v, y + 8 * v, mask ? mask + 8 * v : NULL, n0, &m0, n1, &m1, &f0, &f1);
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
typedef struct QrKClip256 {
    __m256 lo, hi;
    __m256d qlo, qhi, st;
    bool clo, chi, scaled;
} QrKClip256;

/* Eight elements of u as qr__k_clip8_avx512 does them. */
QR__K_AVX2 static inline __attribute__((always_inline)) void qr__k_clip8_avx2(const QrKClip256 *p, const float *u, uint8_t *mask, double *d, int *w,
                                               int64_t *n_fin, int64_t *n_clip) {
    __m256 v = _mm256_loadu_ps(u);
    if (p->clo) v = _mm256_blendv_ps(v, p->lo, _mm256_cmp_ps(v, p->lo, _CMP_LT_OQ));
    if (p->chi) v = _mm256_blendv_ps(v, p->hi, _mm256_cmp_ps(v, p->hi, _CMP_GT_OQ));
    const int fin = qr__k_finite8(v);
    const __m256d vl = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), vh = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    const int out = _mm256_movemask_pd(_mm256_or_pd(_mm256_cmp_pd(vl, p->qlo, _CMP_LT_OQ), _mm256_cmp_pd(vl, p->qhi, _CMP_GT_OQ))) |
                    _mm256_movemask_pd(_mm256_or_pd(_mm256_cmp_pd(vh, p->qlo, _CMP_LT_OQ), _mm256_cmp_pd(vh, p->qhi, _CMP_GT_OQ))) << 4;
    const int clip = fin & out;
    /* byte i = bit i of clip: the 8 bits spread over 8 bytes, each byte keeping its own */
    const __m128i bits = _mm_and_si128(_mm_set1_epi8((char)clip), _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0));
    _mm_storel_epi64((__m128i *)mask, _mm_min_epu8(bits, _mm_set1_epi8(1)));
    const __m256d ql = p->scaled ? _mm256_div_pd(vl, p->st) : vl, qh = p->scaled ? _mm256_div_pd(vh, p->st) : vh;
    __m256d tl = _mm256_mul_pd(ql, ql), th = _mm256_mul_pd(qh, qh);
    QR_KERN_ROUNDED(tl);
    QR_KERN_ROUNDED(th);
    const __m256d z = _mm256_setzero_pd();
    const int nz = fin & (_mm256_movemask_pd(_mm256_cmp_pd(tl, z, _CMP_NEQ_OQ)) | _mm256_movemask_pd(_mm256_cmp_pd(th, z, _CMP_NEQ_OQ)) << 4);
    *w += qr__k_pack_store4(d + *w, tl, nz & 15);
    *w += qr__k_pack_store4(d + *w, th, nz >> 4);
    *n_fin += qr__k_pop8((unsigned)fin);
    *n_clip += qr__k_pop8((unsigned)clip);
}

/* QrF32ClipSqFn with AVX2: the blocks of qr_f32_clip_sq__avx512. */
QR__K_AVX2 static void qr_f32_clip_sq__avx2(const float *u, int64_t n, float ilo, float ihi, double lo, double hi, double st,
                                            bool scaled, uint8_t *mask, QrF32ClipSq *r) {
    enum { B = QR__K_SQ_B, V = QR__K_SQ_B / 8 };
    const QrKClip256 p = { _mm256_set1_ps(ilo), _mm256_set1_ps(ihi), _mm256_set1_pd(lo), _mm256_set1_pd(hi), _mm256_set1_pd(st),
                           ilo == ilo, ihi == ihi, scaled };
    double buf[2][B + 8] __attribute__((aligned(32)));
    double *c = buf[0], *nx = buf[1];   /* this block's terms, the next block's */
    int w = 0;
    double s = r->s;
    int64_t n_fin = 0, n_clip = 0;
    const int64_t nv = n / 8, nb = (nv + V - 1) / V;
    for (int64_t v = 0; v < QR_MIN(nv, (int64_t)V); v++) qr__k_clip8_avx2(&p, u + 8 * v, mask + 8 * v, c, &w, &n_fin, &n_clip);
    for (int64_t b = 0; b < nb; b++) {
        int64_t v = (b + 1) * V;
        const int64_t ve = QR_MIN(nv, v + V);
        int j = 0, m = 0;
        for (; j + 8 <= w && v < ve; j += 8, v++) {   /* this block's additions, the next block's terms */
            s = qr__k_chain8(s, c + j, 8);
            qr__k_clip8_avx2(&p, u + 8 * v, mask + 8 * v, nx, &m, &n_fin, &n_clip);
        }
        for (; v < ve; v++) qr__k_clip8_avx2(&p, u + 8 * v, mask + 8 * v, nx, &m, &n_fin, &n_clip);
        for (; j + 8 <= w; j += 8) s = qr__k_chain8(s, c + j, 8);
        s = qr__k_chain8(s, c + j, w - j);
        double *t = c;
        c = nx;
        nx = t;
        w = m;
    }
    _mm256_zeroupper();
    if (n_fin) s += 0.0;   /* as in qr_f32_sqerr_split__avx2 */
    r->s = s;
    r->n_fin += n_fin;
    r->n_clip += n_clip;
    r->n_in += n_fin - n_clip;
    qr_f32_clip_sq__ref(u + 8 * nv, n - 8 * nv, ilo, ihi, lo, hi, st, scaled, mask + 8 * nv, r);
}

#endif
