/* kern/avx512/f32_stats — AVX-512 pair statistics: the avx2 kernel's sums bit for bit, in
 * fewer passes over a block and fewer instructions per pass (the pair case only; one array
 * runs the avx2 kernel). */
#if defined(__x86_64__)

/* Why the bits are the avx2 kernel's: that kernel keeps every double sum in two 4-lane
 * accumulators, s0 over the low four floats of each group of 8 and s1 over the high four, and
 * ends with hsum(s0 + s1). _mm512_cvtps_pd turns a group of 8 floats into 8 doubles in order,
 * so one 8-lane accumulator holds s0 in its low half and s1 in its high half, each lane seeing
 * the same operations (add, sub, fmadd, max, |.|) on the same values in the same order; the
 * end is the same hsum of the two halves added. The float min/max stay 8 floats wide as in
 * avx2. Fusing passes (x's and y's sums in one loop, their m2 in one loop, the two pair loops
 * in one) changes no accumulator's sequence: it only runs independent chains side by side. */

/* hsum(lo + hi) of an 8-lane accumulator: the avx2 kernel's qr__k_hsum_pd(_mm256_add_pd(s0, s1)). */
QR__K_AVX512 static inline double qr__k_hsum512(__m512d v) {
    return qr__k_hsum_pd(_mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1)));
}

/* One all-finite block (n a multiple of 8) of a pair into an empty *b; false (the caller runs
 * the ref block) when a value of x or y is not finite or n is not a multiple of 8 — exactly
 * when qr__k_pair_block_avx2 is false for it. */
QR__K_AVX512 static bool qr__k_pair_block_avx512(const float *x, const float *y, int64_t n, QrF32PairStats *b) {
    if (n % 8 || n == 0) return false;
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), inf = _mm256_set1_ps(INFINITY);
    __m256 xlo = _mm256_loadu_ps(x), xhi = xlo, ylo = _mm256_loadu_ps(y), yhi = ylo;
    __m256 finx = _mm256_castsi256_ps(_mm256_set1_epi32(-1)), finy = finx;
    __m512d sx = _mm512_setzero_pd(), sy = sx;
    for (int64_t i = 0; i < n; i += 8) {
        __m256 xv = _mm256_loadu_ps(x + i), yv = _mm256_loadu_ps(y + i);
        finx = _mm256_and_ps(finx, _mm256_cmp_ps(_mm256_and_ps(xv, absmask), inf, _CMP_LT_OQ));
        finy = _mm256_and_ps(finy, _mm256_cmp_ps(_mm256_and_ps(yv, absmask), inf, _CMP_LT_OQ));
        xlo = _mm256_min_ps(xlo, xv);
        xhi = _mm256_max_ps(xhi, xv);
        ylo = _mm256_min_ps(ylo, yv);
        yhi = _mm256_max_ps(yhi, yv);
        sx = _mm512_add_pd(sx, _mm512_cvtps_pd(xv));
        sy = _mm512_add_pd(sy, _mm512_cvtps_pd(yv));
    }
    if (_mm256_movemask_ps(finx) != 0xff || _mm256_movemask_ps(finy) != 0xff) return false;
    b->x.n = b->y.n = b->n = n;
    b->x.min = qr__k_hmin_ps(xlo);
    b->x.max = qr__k_hmax_ps(xhi);
    b->y.min = qr__k_hmin_ps(ylo);
    b->y.max = qr__k_hmax_ps(yhi);
    b->x.mean = qr__k_hsum512(sx) / (double)n;
    b->y.mean = qr__k_hsum512(sy) / (double)n;
    const __m512d mx = _mm512_set1_pd(b->x.mean), my = _mm512_set1_pd(b->y.mean);
    __m512d m2x = _mm512_setzero_pd(), m2y = m2x;
    for (int64_t i = 0; i < n; i += 8) {
        __m512d dx = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)), mx);
        __m512d dy = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(y + i)), my);
        m2x = _mm512_fmadd_pd(dx, dx, m2x);
        m2y = _mm512_fmadd_pd(dy, dy, m2y);
    }
    b->x.m2 = qr__k_hsum512(m2x);
    b->y.m2 = qr__k_hsum512(m2y);
    __m512d dd = _mm512_setzero_pd(), ad = dd, am = dd, xy = dd, xx = dd, yy = dd;
    for (int64_t i = 0; i < n; i += 8) {
        __m512d xv = _mm512_cvtps_pd(_mm256_loadu_ps(x + i)), yv = _mm512_cvtps_pd(_mm256_loadu_ps(y + i));
        __m512d d = _mm512_sub_pd(xv, yv);
        dd = _mm512_fmadd_pd(d, d, dd);
        d = _mm512_abs_pd(d);
        ad = _mm512_add_pd(ad, d);
        am = _mm512_max_pd(am, d);
        xy = _mm512_fmadd_pd(xv, yv, xy);
        xx = _mm512_fmadd_pd(xv, xv, xx);
        yy = _mm512_fmadd_pd(yv, yv, yy);
    }
    b->sdd = qr__k_hsum512(dd);
    b->sad = qr__k_hsum512(ad);
    b->maxad = qr__k_hmax_pd(_mm256_max_pd(_mm512_castpd512_pd256(am), _mm512_extractf64x4_pd(am, 1)));
    b->sxy = qr__k_hsum512(xy);
    b->sxx = qr__k_hsum512(xx);
    b->syy = qr__k_hsum512(yy);
    return true;
}

/* QrF32PairStatsFn on AVX-512: the blocks of the avx2 kernel with its bits (tests/test_kern.c
 * test_pair_stats_avx512); a pair's all-finite blocks by the fused block above, the others by
 * the ref block (as avx2); y == NULL by the avx2 kernel. */
QR__K_AVX512 static void qr_f32_pair_stats__avx512(const float *x, const float *y, int64_t n, QrF32PairStats *s) {
    if (!y) {
        qr_f32_pair_stats__avx2(x, NULL, n, s);
        return;
    }
    for (int64_t i0 = 0; i0 < n; i0 += QR_KERN_STATS_BLOCK) {
        int64_t len = QR_MIN(QR_KERN_STATS_BLOCK, n - i0);
        QrF32PairStats b;
        qr_f32_pair_stats_init(&b);
        if (!qr__k_pair_block_avx512(x + i0, y + i0, len, &b)) {
            qr_f32_pair_stats_init(&b);
            qr__k_pair_block_ref(x + i0, y + i0, len, &b);
        }
        qr_f32_pair_stats_merge(s, &b);
    }
}

#endif
