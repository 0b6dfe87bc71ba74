/* kern/avx512/f32_stats — AVX-512 statistics: the avx2 kernel's sums bit for bit, in fewer
 * passes over a block and fewer instructions per pass (pairs), or four blocks side by side (one
 * array's moments). Rtol stays the avx2 kernel: an AVX-512 one measured no faster. */
#if defined(__x86_64__)

/* Why the bits are the avx2 kernel's: that kernel keeps every double sum in two 4-lane
 * accumulators, s0 over the low four floats of each group of 8 and s1 over the high four, and
 * ends with hsum(s0 + s1). _mm512_cvtps_pd turns a group of 8 floats into 8 doubles in order,
 * so one 8-lane accumulator holds s0 in its low half and s1 in its high half, each lane seeing
 * the same operations (add, sub, fmadd, max, |.|) on the same values in the same order; the
 * end is the same hsum of the two halves added. An add s + v is done as fmadd(v, 1, s): v·1 is
 * exact, so it is the same rounded sum (on the FMA units, which the conversions leave idle). The
 * float min/max stay 8 floats wide as in avx2. Fusing passes (x's and y's sums in one loop,
 * their m2 and the pair sums in one) and running blocks side by side change no accumulator's
 * sequence: they only run independent chains together. */

/* hsum(lo + hi) of an 8-lane accumulator: the avx2 kernel's qr__k_hsum_pd(_mm256_add_pd(s0, s1)). */
QR__K_AVX512 static inline double qr__k_hsum512(__m512d v) {
    return qr__k_hsum_pd(_mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1)));
}

/* One all-finite block (n a multiple of 8) of a pair into an empty *b; false (the caller runs
 * the ref block) when a value of x or y is not finite or n is not a multiple of 8 — exactly
 * when qr__k_pair_block_avx2 is false for it (a sum is finite exactly when its values are: see
 * qr__k_moments_group). Two passes: the sums and min/max, then the m2 and pair sums together
 * (every pass converts x and y to double: the conversions bound it). */
QR__K_AVX512 static bool qr__k_pair_block_avx512(const float *x, const float *y, int64_t n, QrF32PairStats *b) {
    if (n % 8 || n == 0) return false;
    const __m512d one = _mm512_set1_pd(1.0);
    __m256 xlo = _mm256_loadu_ps(x), xhi = xlo, ylo = _mm256_loadu_ps(y), yhi = ylo;
    __m512d sx = _mm512_setzero_pd(), sy = sx;
    for (int64_t i = 0; i < n; i += 8) {
        __m256 xv = _mm256_loadu_ps(x + i), yv = _mm256_loadu_ps(y + i);
        xlo = _mm256_min_ps(xlo, xv);
        xhi = _mm256_max_ps(xhi, xv);
        ylo = _mm256_min_ps(ylo, yv);
        yhi = _mm256_max_ps(yhi, yv);
        sx = _mm512_fmadd_pd(_mm512_cvtps_pd(xv), one, sx);   /* = sx + x (v·1 is exact): on the FMA units */
        sy = _mm512_fmadd_pd(_mm512_cvtps_pd(yv), one, sy);
    }
    const double hx = qr__k_hsum512(sx), hy = qr__k_hsum512(sy);
    if (!isfinite(hx) || !isfinite(hy)) return false;
    b->x.n = b->y.n = b->n = n;
    b->x.min = qr__k_hmin_ps(xlo);
    b->x.max = qr__k_hmax_ps(xhi);
    b->y.min = qr__k_hmin_ps(ylo);
    b->y.max = qr__k_hmax_ps(yhi);
    b->x.mean = hx / (double)n;
    b->y.mean = hy / (double)n;
    const __m512d mx = _mm512_set1_pd(b->x.mean), my = _mm512_set1_pd(b->y.mean);
    __m512d m2x = _mm512_setzero_pd(), m2y = m2x, dd = m2x, ad = m2x, am = m2x, xy = m2x, xx = m2x, yy = m2x;
    for (int64_t i = 0; i < n; i += 8) {
        __m512d xv = _mm512_cvtps_pd(_mm256_loadu_ps(x + i)), yv = _mm512_cvtps_pd(_mm256_loadu_ps(y + i));
        __m512d dx = _mm512_sub_pd(xv, mx), dy = _mm512_sub_pd(yv, my), d = _mm512_sub_pd(xv, yv);
        m2x = _mm512_fmadd_pd(dx, dx, m2x);
        m2y = _mm512_fmadd_pd(dy, dy, m2y);
        dd = _mm512_fmadd_pd(d, d, dd);
        d = _mm512_abs_pd(d);
        ad = _mm512_add_pd(ad, d);
        am = _mm512_max_pd(am, d);
        xy = _mm512_fmadd_pd(xv, yv, xy);
        xx = _mm512_fmadd_pd(xv, xv, xx);
        yy = _mm512_fmadd_pd(yv, yv, yy);
    }
    b->x.m2 = qr__k_hsum512(m2x);
    b->y.m2 = qr__k_hsum512(m2y);
    b->sdd = qr__k_hsum512(dd);
    b->sad = qr__k_hsum512(ad);
    b->maxad = qr__k_hmax_pd(_mm256_max_pd(_mm512_castpd512_pd256(am), _mm512_extractf64x4_pd(am, 1)));
    b->sxy = qr__k_hsum512(xy);
    b->sxx = qr__k_hsum512(xx);
    b->syy = qr__k_hsum512(yy);
    return true;
}

/* Blocks whose moments qr__k_moments_group computes side by side. */
enum { QR__K_GROUP = 4 };

/* The moments of QR__K_GROUP blocks of len elements each (len > 0 a multiple of 8), block g from
 * p[g], into m[g]; ok[g] false (m[g] not to be used) when block g holds a value that is not
 * finite. Per block, the avx2 kernel's sums (qr__k_sum_minmax, qr__k_m2; one 8-lane accumulator
 * holds its two 4-lane ones, as above) and its float min/max 8 wide, so its bits. Only the
 * blocks' chains run side by side: one block's additions wait on each other (avx2's passes are
 * bound by that latency), four blocks' do not. A block is all finite exactly when its sum is:
 * a lane adds at most 512 floats, which cannot overflow a double, and a NaN or infinity leaves
 * its lane, and so the sum, NaN or infinite. */
QR__K_AVX512 static void qr__k_moments_group(const float *const *p, int64_t len, QrF32Moments *m, bool *ok) {
    __m512d s[QR__K_GROUP], q[QR__K_GROUP], mean[QR__K_GROUP];
    __m256 lo[QR__K_GROUP], hi[QR__K_GROUP];
    const __m512d one = _mm512_set1_pd(1.0);
#pragma GCC unroll 4
    for (int g = 0; g < QR__K_GROUP; g++) {
        s[g] = q[g] = _mm512_setzero_pd();
        lo[g] = hi[g] = _mm256_loadu_ps(p[g]);
    }
    for (int64_t i = 0; i < len; i += 8)
#pragma GCC unroll 4
        for (int g = 0; g < QR__K_GROUP; g++) {
            __m256 v = _mm256_loadu_ps(p[g] + i);
            lo[g] = _mm256_min_ps(lo[g], v);
            hi[g] = _mm256_max_ps(hi[g], v);
            s[g] = _mm512_fmadd_pd(_mm512_cvtps_pd(v), one, s[g]);   /* = s + v, on the FMA units */
        }
#pragma GCC unroll 4
    for (int g = 0; g < QR__K_GROUP; g++) {
        double sum = qr__k_hsum512(s[g]);
        ok[g] = isfinite(sum);
        m[g] = (QrF32Moments){ .n = len, .min = qr__k_hmin_ps(lo[g]), .max = qr__k_hmax_ps(hi[g]), .mean = sum / (double)len };
        mean[g] = _mm512_set1_pd(m[g].mean);
    }
    for (int64_t i = 0; i < len; i += 8)
#pragma GCC unroll 4
        for (int g = 0; g < QR__K_GROUP; g++) {
            __m512d d = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(p[g] + i)), mean[g]);
            q[g] = _mm512_fmadd_pd(d, d, q[g]);
        }
#pragma GCC unroll 4
    for (int g = 0; g < QR__K_GROUP; g++) m[g].m2 = qr__k_hsum512(q[g]);
}

/* QrF32MomentBlocksFn on AVX-512: the avx2 kernel's bits (test_pair_stats_avx512). Full blocks
 * four at a time by qr__k_moments_group (fewer than four: the last one again in the spare
 * places), a short last block and blocks with a non-finite value as avx2 does them. */
QR__K_AVX512 static void qr_f32_moment_blocks__avx512(const float *x, int64_t n, QrF32Moments *m) {
    const int64_t nb = (n + QR_KERN_STATS_BLOCK - 1) / QR_KERN_STATS_BLOCK, nfull = n / QR_KERN_STATS_BLOCK;
    for (int64_t k = 0; k < nfull; k += QR__K_GROUP) {
        const float *p[QR__K_GROUP];
        QrF32Moments g[QR__K_GROUP];
        bool ok[QR__K_GROUP];
        const int64_t ng = QR_MIN((int64_t)QR__K_GROUP, nfull - k);
        for (int64_t j = 0; j < QR__K_GROUP; j++) p[j] = x + (k + QR_MIN(j, ng - 1)) * QR_KERN_STATS_BLOCK;
        qr__k_moments_group(p, QR_KERN_STATS_BLOCK, g, ok);
        for (int64_t j = 0; j < ng; j++) {
            if (ok[j]) m[k + j] = g[j];
            else qr_f32_moment_blocks__avx2(p[j], QR_KERN_STATS_BLOCK, &m[k + j]);
        }
    }
    if (nb > nfull) qr_f32_moment_blocks__avx2(x + nfull * QR_KERN_STATS_BLOCK, n - nfull * QR_KERN_STATS_BLOCK, &m[nfull]);
}

/* QrF32PairStatsFn on AVX-512: the blocks of the avx2 kernel with its bits (tests/test_kern.c
 * test_pair_stats_avx512); a pair's all-finite blocks by the fused block above, the others by
 * the ref block (as avx2); y == NULL by qr_f32_moment_blocks__avx512, merged block by block. */
QR__K_AVX512 static void qr_f32_pair_stats__avx512(const float *x, const float *y, int64_t n, QrF32PairStats *s) {
    if (!y) {
        for (int64_t i0 = 0; i0 < n; i0 += QR__K_GROUP * QR_KERN_STATS_BLOCK) {
            const int64_t len = QR_MIN((int64_t)QR__K_GROUP * QR_KERN_STATS_BLOCK, n - i0);
            QrF32Moments m[QR__K_GROUP];
            qr_f32_moment_blocks__avx512(x + i0, len, m);
            for (int64_t k = 0; k * QR_KERN_STATS_BLOCK < len; k++) {
                QrF32PairStats b;
                qr_f32_pair_stats_init(&b);
                b.x = m[k];
                qr_f32_pair_stats_merge(s, &b);
            }
        }
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


/* QrF32WquantFn with AVX-512: 16 elements a step, each lane the ref's IEEE operations (a true
 * division, rint as roundscale to nearest, the saturation's compares with the ref's NaN outcomes:
 * a NaN fails >= and so goes to lo - z; x != 0 is unordered-true, as C's), the counts as popcounts
 * of the masks; the tail runs the ref. */
QR__K_AVX512 static void qr_f32_wquant__avx512(const float *x, const void *stored, bool sgn, const float *s,
                                               const int32_t *z, int64_t ss, int32_t lo, int32_t hi, int64_t n, float *y,
                                               QrWqCounts *c) {
    const __m512 flo = _mm512_set1_ps((float)lo), fhi = _mm512_set1_ps((float)hi), one = _mm512_set1_ps(1.0f);
    const __m512i vlo_i = _mm512_set1_epi32(lo), vhi_i = _mm512_set1_epi32(hi), absm = _mm512_set1_epi32(0x7fffffff),
                  inf = _mm512_set1_epi32(0x7f800000);
    __m512 s1 = _mm512_set1_ps(s[0]);
    __m512i zi = _mm512_set1_epi32(z[0]);
    int64_t sat = 0, far = 0, zero = 0, nonfinite = 0, diff = 0, i = 0;
    const int64_t n16 = n & ~(int64_t)15;
    for (; i < n16; i += 16) {
        if (ss) { s1 = _mm512_loadu_ps(s + i); zi = _mm512_loadu_si512((const void *)(z + i)); }
        const __m512 fz = _mm512_cvtepi32_ps(zi);
        __m512i q = _mm512_setzero_si512();
        if (x) {
            const __m512 xv = _mm512_loadu_ps(x + i), dv = _mm512_div_ps(xv, s1);
            const __mmask16 fin = _mm512_cmplt_epi32_mask(_mm512_and_si512(_mm512_castps_si512(xv), absm), inf) &
                                  _mm512_cmplt_epi32_mask(_mm512_and_si512(_mm512_castps_si512(dv), absm), inf);
            nonfinite += 16 - __builtin_popcount(fin);
            const __m512 a = _mm512_add_ps(_mm512_roundscale_ps(dv, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), fz);
            const __m512 b = _mm512_add_ps(dv, fz);
            sat += __builtin_popcount(fin & (_mm512_cmp_ps_mask(a, flo, _CMP_LT_OQ) | _mm512_cmp_ps_mask(a, fhi, _CMP_GT_OQ)));
            far += __builtin_popcount(fin & (_mm512_cmp_ps_mask(b, _mm512_sub_ps(flo, one), _CMP_LT_OQ) |
                                             _mm512_cmp_ps_mask(b, _mm512_add_ps(fhi, one), _CMP_GT_OQ)));
            const __m512 vlo = _mm512_cvtepi32_ps(_mm512_sub_epi32(vlo_i, zi)), vhi = _mm512_cvtepi32_ps(_mm512_sub_epi32(vhi_i, zi));
            __m512 v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(dv, vlo, _CMP_GE_OQ), vlo, dv);
            v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, vhi, _CMP_GT_OQ), v, vhi);
            q = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)), zi);
            zero += __builtin_popcount(_mm512_cmp_ps_mask(xv, _mm512_setzero_ps(), _CMP_NEQ_UQ) & _mm512_cmpeq_epi32_mask(q, zi));
        }
        if (stored) {
            const __m128i b8 = _mm_loadu_si128((const __m128i *)((const uint8_t *)stored + i));
            const __m512i st = sgn ? _mm512_cvtepi8_epi32(b8) : _mm512_cvtepu8_epi32(b8);
            if (x) diff += __builtin_popcount(_mm512_cmpneq_epi32_mask(st, q));
            q = st;
        }
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(q, zi)), s1));
    }
    c->sat += sat;
    c->far += far;
    c->zero += zero;
    c->nonfinite += nonfinite;
    c->diff += diff;
    if (i < n)
        qr_f32_wquant__ref(x ? x + i : NULL, stored ? (const uint8_t *)stored + i : NULL, sgn, s + i * ss, z + i * ss, ss, lo,
                           hi, n - i, y + i, c);
}

/* QrF32TieScanFn with AVX-512: a block per step, the ref's lane operations (vdivps; the
 * saturation as two compare-and-blend steps with the ref's NaN outcome; cvttps2dq of 2v, back to
 * float, compared, and its low bit). */
QR__K_AVX512 static int64_t qr_f32_tie_scan__avx512(const float *x, int64_t nblk, float sc, float lo, float hi) {
    const __m512 vsc = _mm512_set1_ps(sc), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const __m512i one = _mm512_set1_epi32(1);
    for (int64_t b = 0; b < nblk; b++) {
        __m512 v = _mm512_div_ps(_mm512_loadu_ps(x + 16 * b), vsc);
        v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, vlo, _CMP_GE_OQ), vlo, v);
        v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, vhi, _CMP_GT_OQ), v, vhi);
        const __m512 w = _mm512_add_ps(v, v);
        const __m512i wi = _mm512_cvttps_epi32(w);
        if (_mm512_cmp_ps_mask(_mm512_cvtepi32_ps(wi), w, _CMP_EQ_OQ) & _mm512_test_epi32_mask(wi, one)) return b;
    }
    return nblk;
}

#endif
