/* kern/avx2/f32_stats — AVX2 analysis kernels: fused pair statistics (sums in double),
 * histogram binning and fake quantization (both bit-exact with their __ref twins). */
#if defined(__x86_64__)

/* Sum of the four doubles of v. */
QR__K_AVX2 static inline double qr__k_hsum_pd(__m256d v) {
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
QR__K_AVX2 static inline double qr__k_hmax_pd(__m256d v) {
    __m128d h = _mm_max_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_max_sd(h, _mm_unpackhi_pd(h, h)));
}
QR__K_AVX2 static inline float qr__k_hmin_ps(__m256 v) {
    __m128 h = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_min_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_min_ss(h, _mm_movehdup_ps(h)));
}
QR__K_AVX2 static inline float qr__k_hmax_ps(__m256 v) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}
#define QR__K_LO(v) _mm256_cvtps_pd(_mm256_castps256_ps128(v))
#define QR__K_HI(v) _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))

/* Sum and min/max of one block (n a multiple of 8) if every value is finite; false
 * otherwise (the caller then runs the ref block). */
QR__K_AVX2 static bool qr__k_sum_minmax(const float *v, int64_t n, double *sum, float *mn, float *mx) {
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), inf = _mm256_set1_ps(INFINITY);
    __m256d s0 = _mm256_setzero_pd(), s1 = s0;
    __m256 lo = _mm256_loadu_ps(v), hi = lo, fin = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    for (int64_t i = 0; i < n; i += 8) {
        __m256 x = _mm256_loadu_ps(v + i);
        fin = _mm256_and_ps(fin, _mm256_cmp_ps(_mm256_and_ps(x, absmask), inf, _CMP_LT_OQ));
        lo = _mm256_min_ps(lo, x);
        hi = _mm256_max_ps(hi, x);
        s0 = _mm256_add_pd(s0, QR__K_LO(x));
        s1 = _mm256_add_pd(s1, QR__K_HI(x));
    }
    if (_mm256_movemask_ps(fin) != 0xff) return false;
    *sum = qr__k_hsum_pd(_mm256_add_pd(s0, s1));
    *mn = qr__k_hmin_ps(lo);
    *mx = qr__k_hmax_ps(hi);
    return true;
}

/* sum (v - mean)^2 over a block (n a multiple of 8). */
QR__K_AVX2 static double qr__k_m2(const float *v, int64_t n, double mean) {
    const __m256d m = _mm256_set1_pd(mean);
    __m256d s0 = _mm256_setzero_pd(), s1 = s0;
    for (int64_t i = 0; i < n; i += 8) {
        __m256 x = _mm256_loadu_ps(v + i);
        __m256d d0 = _mm256_sub_pd(QR__K_LO(x), m), d1 = _mm256_sub_pd(QR__K_HI(x), m);
        s0 = _mm256_fmadd_pd(d0, d0, s0);
        s1 = _mm256_fmadd_pd(d1, d1, s1);
    }
    return qr__k_hsum_pd(_mm256_add_pd(s0, s1));
}

/* One all-finite block into an empty *b; false when it is not all finite or not a
 * multiple of 8 long (the caller runs the ref block). Passes over the block (which
 * stays in L1) are split so that no pass needs more than ~12 ymm registers. */
QR__K_AVX2 static bool qr__k_pair_block_avx2(const float *x, const float *y, int64_t n, QrF32PairStats *b) {
    if (n % 8) return false;
    double sx, sy = 0;
    float xmn, xmx, ymn = 0, ymx = 0;
    if (!qr__k_sum_minmax(x, n, &sx, &xmn, &xmx)) return false;
    if (y && !qr__k_sum_minmax(y, n, &sy, &ymn, &ymx)) return false;
    b->x.n = n;
    b->x.min = xmn;
    b->x.max = xmx;
    b->x.mean = sx / (double)n;
    b->x.m2 = qr__k_m2(x, n, b->x.mean);
    if (!y) return true;
    b->y.n = n;
    b->y.min = ymn;
    b->y.max = ymx;
    b->y.mean = sy / (double)n;
    b->y.m2 = qr__k_m2(y, n, b->y.mean);
    const __m256d absd = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    __m256d dd0 = _mm256_setzero_pd(), dd1 = dd0, ad0 = dd0, ad1 = dd0, mx0 = dd0, mx1 = dd0, xy0 = dd0, xy1 = dd0;
    for (int64_t i = 0; i < n; i += 8) {
        __m256 xv = _mm256_loadu_ps(x + i), yv = _mm256_loadu_ps(y + i);
        __m256d x0 = QR__K_LO(xv), x1 = QR__K_HI(xv), y0 = QR__K_LO(yv), y1 = QR__K_HI(yv);
        __m256d d0 = _mm256_sub_pd(x0, y0), d1 = _mm256_sub_pd(x1, y1);
        dd0 = _mm256_fmadd_pd(d0, d0, dd0);
        dd1 = _mm256_fmadd_pd(d1, d1, dd1);
        d0 = _mm256_and_pd(d0, absd);
        d1 = _mm256_and_pd(d1, absd);
        ad0 = _mm256_add_pd(ad0, d0);
        ad1 = _mm256_add_pd(ad1, d1);
        mx0 = _mm256_max_pd(mx0, d0);
        mx1 = _mm256_max_pd(mx1, d1);
        xy0 = _mm256_fmadd_pd(x0, y0, xy0);
        xy1 = _mm256_fmadd_pd(x1, y1, xy1);
    }
    __m256d xx0 = _mm256_setzero_pd(), xx1 = xx0, yy0 = xx0, yy1 = xx0;
    for (int64_t i = 0; i < n; i += 8) {
        __m256 xv = _mm256_loadu_ps(x + i), yv = _mm256_loadu_ps(y + i);
        __m256d x0 = QR__K_LO(xv), x1 = QR__K_HI(xv), y0 = QR__K_LO(yv), y1 = QR__K_HI(yv);
        xx0 = _mm256_fmadd_pd(x0, x0, xx0);
        xx1 = _mm256_fmadd_pd(x1, x1, xx1);
        yy0 = _mm256_fmadd_pd(y0, y0, yy0);
        yy1 = _mm256_fmadd_pd(y1, y1, yy1);
    }
    b->n = n;
    b->sdd = qr__k_hsum_pd(_mm256_add_pd(dd0, dd1));
    b->sad = qr__k_hsum_pd(_mm256_add_pd(ad0, ad1));
    b->maxad = qr__k_hmax_pd(_mm256_max_pd(mx0, mx1));
    b->sxy = qr__k_hsum_pd(_mm256_add_pd(xy0, xy1));
    b->sxx = qr__k_hsum_pd(_mm256_add_pd(xx0, xx1));
    b->syy = qr__k_hsum_pd(_mm256_add_pd(yy0, yy1));
    return true;
}
#undef QR__K_LO
#undef QR__K_HI

/* QrF32PairStatsFn on AVX2: the blocks of the ref kernel, all-finite ones vectorized
 * (products of floats are exact in double; only the summation order differs from ref),
 * the others (non-finite values, a short last block) by the ref block code. */
QR__K_AVX2 static void qr_f32_pair_stats__avx2(const float *x, const float *y, int64_t n, QrF32PairStats *s) {
    for (int64_t i0 = 0; i0 < n; i0 += QR_KERN_STATS_BLOCK) {
        int64_t len = QR_MIN(QR_KERN_STATS_BLOCK, n - i0);
        QrF32PairStats b;
        qr_f32_pair_stats_init(&b);
        if (!qr__k_pair_block_avx2(x + i0, y ? y + i0 : NULL, len, &b)) {
            qr_f32_pair_stats_init(&b);
            qr__k_pair_block_ref(x + i0, y ? y + i0 : NULL, len, &b);
        }
        qr_f32_pair_stats_merge(s, &b);
    }
}

/* QrF32MomentBlocksFn on AVX2: the blocks of qr_f32_pair_stats__avx2(x, NULL, n). */
QR__K_AVX2 static void qr_f32_moment_blocks__avx2(const float *x, int64_t n, QrF32Moments *m) {
    for (int64_t k = 0; k * QR_KERN_STATS_BLOCK < n; k++) {
        const float *v = x + k * QR_KERN_STATS_BLOCK;
        int64_t len = QR_MIN(QR_KERN_STATS_BLOCK, n - k * QR_KERN_STATS_BLOCK);
        QrF32PairStats b;
        qr_f32_pair_stats_init(&b);
        if (!qr__k_pair_block_avx2(v, NULL, len, &b)) {
            qr_f32_pair_stats_init(&b);
            qr__k_pair_block_ref(v, NULL, len, &b);
        }
        m[k] = b.x;
    }
}

/* QrF32RtolFn on AVX2: the ref's skip test (the same double operations) on 8 pairs at a
 * time against the maximum so far, pairs with x == y (their quotient 0 never raises the
 * maximum) and, once the maximum is FLT_MAX or more, pairs with x == 0 (their quotient is
 * FLT_MAX or 0: after one 0 in x against a non-zero y, ReLU's zeros would otherwise all run the
 * division); only the pairs it cannot skip run the ref's exact division, in order. Skipping
 * against a smaller (earlier) maximum skips less, never wrongly, so the result is the ref's bit
 * for bit. */
QR__K_AVX2 static double qr_f32_rtol__avx2(const float *x, const float *y, int64_t n) {
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
    const __m256d margin = _mm256_set1_pd(1 - 1e-9);
    double rt = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 xv = _mm256_loadu_ps(x + i), yv = _mm256_loadu_ps(y + i);
        __m256d rv = _mm256_set1_pd(rt);
        __m256d x0 = _mm256_cvtps_pd(_mm256_castps256_ps128(xv)), x1 = _mm256_cvtps_pd(_mm256_extractf128_ps(xv, 1));
        __m256d ad0 = _mm256_and_pd(_mm256_sub_pd(x0, _mm256_cvtps_pd(_mm256_castps256_ps128(yv))), absmask);
        __m256d ad1 = _mm256_and_pd(_mm256_sub_pd(x1, _mm256_cvtps_pd(_mm256_extractf128_ps(yv, 1))), absmask);
        __m256d t0 = _mm256_mul_pd(_mm256_mul_pd(rv, _mm256_and_pd(x0, absmask)), margin);
        __m256d t1 = _mm256_mul_pd(_mm256_mul_pd(rv, _mm256_and_pd(x1, absmask)), margin);
        __m256d z = _mm256_setzero_pd();   /* ad == 0 (ReLU's zeros in both): r = 0 never raises rt */
        __m256d k0 = _mm256_and_pd(_mm256_cmp_pd(ad0, t0, _CMP_NLT_UQ), _mm256_cmp_pd(ad0, z, _CMP_GT_OQ));
        __m256d k1 = _mm256_and_pd(_mm256_cmp_pd(ad1, t1, _CMP_NLT_UQ), _mm256_cmp_pd(ad1, z, _CMP_GT_OQ));
        int keep = _mm256_movemask_pd(k0) | _mm256_movemask_pd(k1) << 4;
        if (keep && rt >= FLT_MAX)
            keep &= ~_mm256_movemask_ps(_mm256_cmp_ps(xv, _mm256_setzero_ps(), _CMP_EQ_OQ));
        for (; keep; keep &= keep - 1) {
            int j = __builtin_ctz((unsigned)keep);
            double ad = fabs((double)x[i + j] - (double)y[i + j]), ax = fabs((double)x[i + j]);
            if (ad < rt * ax * (1 - 1e-9)) continue;
            double r = ax > 0 ? ad / ax : (ad > 0 ? FLT_MAX : 0);
            rt = r > rt ? r : rt;
        }
    }
    _mm256_zeroupper();   /* GCC does not insert it here (the call below): legacy-SSE code after a
                           * dirty upper state ran glibc's exp ~3x slower in the caller's KL loop */
    double tail = qr_f32_rtol__ref(x + i, y + i, n - i);
    return tail > rt ? tail : rt;
}

/* QrF32HistFn on AVX2: bin indices 8 at a time with the ref's float operations
 * ((x - lo) * scale, min with nbins - 1, truncation), counts added per set mask bit. */
QR__K_AVX2 static void qr_f32_hist__avx2(const float *x, int64_t n, float lo, float hi, int32_t nbins, int64_t *counts) {
    if (!(hi > lo)) {
        qr_f32_hist__ref(x, n, lo, hi, nbins, counts);
        return;
    }
    const float scale = (float)nbins / (hi - lo), cap = (float)(nbins - 1);
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi), vs = _mm256_set1_ps(scale), vc = _mm256_set1_ps(cap);
    int32_t idx[8];
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 in = _mm256_and_ps(_mm256_cmp_ps(v, vlo, _CMP_GE_OQ), _mm256_cmp_ps(v, vhi, _CMP_LE_OQ));
        unsigned mask = (unsigned)_mm256_movemask_ps(in);
        if (!mask) continue;
        __m256 f = _mm256_min_ps(_mm256_mul_ps(_mm256_sub_ps(v, vlo), vs), vc);   /* NaN -> cap, as in ref */
        _mm256_storeu_si256((__m256i *)idx, _mm256_cvttps_epi32(f));
        while (mask) {
            int b = __builtin_ctz(mask);
            counts[idx[b]]++;
            mask &= mask - 1;
        }
    }
    qr_f32_hist__ref(x + i, n - i, lo, hi, nbins, counts);
}

/* QrF32FakeQuantFn on AVX2: vdivps, clamp (max first: NaN -> qmin), vcvtps2dq (half to
 * even), back to float and times scale — bit-exact with ref (q - zp is the rounded value). */
QR__K_AVX2 static void qr_f32_fake_quant__avx2(const float *x, int64_t n, float scale, int32_t zp, int32_t qmin,
                                               int32_t qmax, float *y) {
    const __m256 vs = _mm256_set1_ps(scale), flo = _mm256_set1_ps((float)(qmin - zp)), fhi = _mm256_set1_ps((float)(qmax - zp));
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), vs);
        v = _mm256_min_ps(_mm256_max_ps(v, flo), fhi);
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtps_epi32(v)), vs));
    }
    qr_f32_fake_quant__ref(x + i, n - i, scale, zp, qmin, qmax, y + i);
}

#endif
