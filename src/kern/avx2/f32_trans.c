/* kern/avx2/f32_trans — transcendental and normalization kernels (QrF32SoftmaxFn, QrF32MapFn,
 * QrF32LayerNormFn) with AVX2/FMA:
 * eight elements per step, each operation the one kern/ref/f32_trans.c does (fma where it
 * calls fmaf), so the results are bit-identical; tails run the ref's element functions. */
#if defined(__x86_64__)

#define QR__K_TR_PS(c) _mm256_set1_ps(c)
#define QR__K_TR_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))

/* qr__k_tr_sumexp on eight elements. */
QR__K_AVX2 static inline __m256 qr__k_tr_sumexp_avx2(__m256 v, bool wide) {
    const __m256 bias = QR__K_TR_PS(QR_KT_ROUND_BIAS);
    v = _mm256_max_ps(QR__K_TR_PS(wide ? QR_KT_EXP_LOWER : QR_KT_EXP_LOWER_SUMEXP), v);   /* NaN: v */
    const __m256 b = QR__K_TR_FMA(QR__K_TR_PS(QR_KT_LOG2E), v, bias);
    const __m256 m = _mm256_sub_ps(b, bias);
    v = QR__K_TR_FMA(m, QR__K_TR_PS(QR_KT_LN2_HI), v);
    v = QR__K_TR_FMA(m, QR__K_TR_PS(QR_KT_LN2_LO), v);
    __m256 p = QR__K_TR_PS(QR_KT_EXP_P0);
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(QR_KT_EXP_P1));
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(QR_KT_EXP_P2));
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(QR_KT_EXP_P3));
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(QR_KT_EXP_P4));
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(1.0f));
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(1.0f));
    if (wide) {   /* p * 2^m exactly in double, one rounding to float */
        const __m256 mc = _mm256_min_ps(_mm256_max_ps(m, QR__K_TR_PS(-400.0f)), QR__K_TR_PS(400.0f));   /* as ref */
        const __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(mc), _mm256_set1_epi32(1023));
        const __m256d s0 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(e)), 52));
        const __m256d s1 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(e, 1)), 52));
        const __m128 lo = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(p)), s0));
        const __m128 hi = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(p, 1)), s1));
        const __m256 r = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
        return _mm256_blendv_ps(r, m, _mm256_cmp_ps(m, m, _CMP_UNORD_Q));
    }
    const __m256i sc = _mm256_add_epi32(_mm256_slli_epi32(_mm256_castps_si256(b), 23), _mm256_set1_epi32(0x3F800000));
    __m256 r = _mm256_mul_ps(p, _mm256_castsi256_ps(sc));
    QR_KERN_ROUNDED(r);
    return r;
}

/* QrF32SoftmaxFn with AVX2: one ymm accumulator per eight lanes of the sum (two when wide). */
QR__K_AVX2 static void qr_f32_softmax__avx2(const float *x, float *y, int64_t rows, int64_t n, bool wide, bool logsm) {
    for (int64_t r = 0; r < rows; r++, x += n, y += n) {
        __m256 vm = QR__K_TR_PS(-FLT_MAX);
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) vm = _mm256_max_ps(_mm256_loadu_ps(x + i), vm);   /* NaN: ignored, as ref */
        float mx = -FLT_MAX, lanes[8];
        _mm256_storeu_ps(lanes, vm);
        for (int l = 0; l < 8; l++) mx = lanes[l] > mx ? lanes[l] : mx;
        for (; i < n; i++) mx = x[i] > mx ? x[i] : mx;
        const __m256 neg = QR__K_TR_PS(-mx);
        __m256 acc[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() };
        int64_t j = 0;
        for (i = 0; i + 8 <= n; i += 8, j++) {
            __m256 e = qr__k_tr_sumexp_avx2(_mm256_add_ps(_mm256_loadu_ps(x + i), neg), wide);
            if (!logsm) _mm256_storeu_ps(y + i, e);
            acc[wide ? j & 1 : 0] = _mm256_add_ps(acc[wide ? j & 1 : 0], e);
        }
        if (i < n) {
            const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            __m256 e = qr__k_tr_sumexp_avx2(_mm256_add_ps(_mm256_maskload_ps(x + i, mask), neg), wide);
            e = _mm256_and_ps(e, _mm256_castsi256_ps(mask));
            if (!logsm) _mm256_maskstore_ps(y + i, mask, e);
            acc[wide ? j & 1 : 0] = _mm256_add_ps(acc[wide ? j & 1 : 0], e);
        }
        __m256 a = wide ? _mm256_add_ps(acc[1], acc[0]) : acc[0];
        a = _mm256_hadd_ps(a, a);
        a = _mm256_hadd_ps(a, a);
        const float s = _mm_cvtss_f32(_mm256_castps256_ps128(a)) + _mm_cvtss_f32(_mm256_extractf128_ps(a, 1));
        if (logsm) {   /* (x + neg) - log(s); y may be x: each element read once, before its write */
            const float lg = logf(s);
            const __m256 vl = QR__K_TR_PS(lg);
            for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_sub_ps(_mm256_add_ps(_mm256_loadu_ps(x + i), neg), vl));
            for (; i < n; i++) y[i] = (x[i] + -mx) - lg;
            continue;
        }
        const float scale = 1.0f / s;
        const __m256 vs = QR__K_TR_PS(scale);
        for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(vs, _mm256_loadu_ps(y + i)));
        for (; i < n; i++) y[i] = scale * y[i];
    }
}

/* qr__k_tr_erf on eight elements. */
QR__K_AVX2 static inline __m256 qr__k_tr_erf_avx2(__m256 x) {
    const __m256 nz = QR__K_TR_PS(-0.0f), bias = QR__K_TR_PS(QR_KT_ROUND_BIAS);
    const __m256 sign = _mm256_and_ps(x, nz);
    __m256 a = _mm256_andnot_ps(nz, x);
    a = _mm256_min_ps(a, QR__K_TR_PS(QR_KT_ERF_UPPER));   /* NaN: the bound */
    const __m256 s = _mm256_mul_ps(a, a);
    __m256 p = QR__K_TR_PS(QR_KT_ERF_S0);
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_ERF_S1));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_ERF_S2));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_ERF_S3));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_ERF_S4));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_ERF_S5));
    p = QR__K_TR_FMA(p, a, a);
    const __m256 big = _mm256_cmp_ps(QR__K_TR_PS(QR_KT_ERF_SPLIT), a, _CMP_LE_OS);
    const __m256 small = _mm256_andnot_ps(big, p), b = _mm256_and_ps(big, a);
    __m256 q = QR__K_TR_PS(QR_KT_ERF_B0);
    q = QR__K_TR_FMA(q, b, QR__K_TR_PS(QR_KT_ERF_B1));
    q = QR__K_TR_FMA(q, b, QR__K_TR_PS(QR_KT_ERF_B2));
    q = QR__K_TR_FMA(q, b, QR__K_TR_PS(QR_KT_ERF_B3));
    q = QR__K_TR_FMA(q, b, QR__K_TR_PS(QR_KT_ERF_B4));
    q = QR__K_TR_FMA(q, b, QR__K_TR_PS(QR_KT_ERF_B5));
    q = QR__K_TR_FMA(q, b, QR__K_TR_PS(QR_KT_ERF_B6));
    q = QR__K_TR_FMA(q, b, b);
    q = _mm256_xor_ps(q, nz);
    q = _mm256_max_ps(q, QR__K_TR_PS(QR_KT_EXP_LOWER_SUMEXP));   /* NaN: the bound */
    __m256 r = QR__K_TR_FMA(QR__K_TR_PS(QR_KT_LOG2E), q, bias);
    r = _mm256_sub_ps(r, bias);
    __m256 f = QR__K_TR_FMA(QR__K_TR_PS(QR_KT_LN2_HI), r, q);
    f = QR__K_TR_FMA(r, QR__K_TR_PS(QR_KT_LN2_LO), f);
    __m256 e = QR__K_TR_PS(QR_KT_ERF_E0);
    e = QR__K_TR_FMA(e, f, QR__K_TR_PS(QR_KT_ERF_E1));
    e = QR__K_TR_FMA(e, f, QR__K_TR_PS(QR_KT_ERF_E2));
    e = QR__K_TR_FMA(e, f, QR__K_TR_PS(QR_KT_ERF_E3));
    e = QR__K_TR_FMA(e, f, QR__K_TR_PS(QR_KT_ERF_E4));
    e = QR__K_TR_FMA(e, f, QR__K_TR_PS(1.0f));
    e = QR__K_TR_FMA(e, f, QR__K_TR_PS(1.0f));
    const __m256i sc = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(r), _mm256_set1_epi32(127)), 23);
    e = _mm256_mul_ps(e, _mm256_castsi256_ps(sc));
    QR_KERN_ROUNDED(e);
    e = _mm256_sub_ps(QR__K_TR_PS(1.0f), e);
    return _mm256_or_ps(_mm256_or_ps(e, small), sign);
}

/* qr__k_tr_logistic on eight elements. */
QR__K_AVX2 static inline __m256 qr__k_tr_logistic_avx2(__m256 x) {
    x = _mm256_max_ps(QR__K_TR_PS(-QR_KT_SIG_RANGE), x);   /* NaN: x */
    x = _mm256_min_ps(QR__K_TR_PS(QR_KT_SIG_RANGE), x);
    const __m256 s = _mm256_mul_ps(x, x);
    __m256 p = QR__K_TR_FMA(s, QR__K_TR_PS(QR_KT_SIG_A9), QR__K_TR_PS(QR_KT_SIG_A7));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_SIG_A5));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_SIG_A3));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_SIG_A1));
    __m256 q = QR__K_TR_FMA(s, QR__K_TR_PS(QR_KT_SIG_B10), QR__K_TR_PS(QR_KT_SIG_B8));
    q = QR__K_TR_FMA(q, s, QR__K_TR_PS(QR_KT_SIG_B6));
    q = QR__K_TR_FMA(q, s, QR__K_TR_PS(QR_KT_SIG_B4));
    q = QR__K_TR_FMA(q, s, QR__K_TR_PS(QR_KT_SIG_B2));
    q = QR__K_TR_FMA(q, s, QR__K_TR_PS(QR_KT_SIG_B0));
    p = _mm256_mul_ps(x, p);
    const __m256 r = _mm256_add_ps(_mm256_div_ps(p, q), QR__K_TR_PS(0.5f));
    return _mm256_max_ps(_mm256_setzero_ps(), r);   /* NaN: r */
}

/* qr__k_tr_tanh on eight elements. */
QR__K_AVX2 static inline __m256 qr__k_tr_tanh_avx2(__m256 x) {
    x = _mm256_max_ps(QR__K_TR_PS(-QR_KT_TANH_RANGE), x);   /* NaN: x */
    x = _mm256_min_ps(QR__K_TR_PS(QR_KT_TANH_RANGE), x);
    const __m256 s = _mm256_mul_ps(x, x);
    __m256 p = QR__K_TR_FMA(s, QR__K_TR_PS(QR_KT_TANH_A13), QR__K_TR_PS(QR_KT_TANH_A11));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_TANH_A9));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_TANH_A7));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_TANH_A5));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_TANH_A3));
    p = QR__K_TR_FMA(p, s, QR__K_TR_PS(QR_KT_TANH_A1));
    p = _mm256_mul_ps(x, p);
    __m256 q = QR__K_TR_FMA(s, QR__K_TR_PS(QR_KT_TANH_B6), QR__K_TR_PS(QR_KT_TANH_B4));
    q = QR__K_TR_FMA(q, s, QR__K_TR_PS(QR_KT_TANH_B2));
    q = QR__K_TR_FMA(q, s, QR__K_TR_PS(QR_KT_TANH_B0));
    return _mm256_div_ps(p, q);
}

/* qr__k_tr_exp on eight elements. */
QR__K_AVX2 static inline __m256 qr__k_tr_exp_avx2(__m256 x) {
    const __m256 bias = QR__K_TR_PS(QR_KT_ROUND_BIAS);
    __m256 v = _mm256_max_ps(QR__K_TR_PS(QR_KT_EXP_LOWER), x);   /* NaN: x */
    v = _mm256_min_ps(QR__K_TR_PS(QR_KT_EXP_UPPER), v);
    const __m256 b = QR__K_TR_FMA(QR__K_TR_PS(QR_KT_LOG2E), v, bias);
    const __m256 m = _mm256_sub_ps(b, bias);
    v = QR__K_TR_FMA(m, QR__K_TR_PS(QR_KT_LN2_HI), v);
    v = QR__K_TR_FMA(m, QR__K_TR_PS(QR_KT_LN2_LO), v);
    __m256 p = QR__K_TR_PS(QR_KT_EXP_P0);
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(QR_KT_EXP_P1));
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(QR_KT_EXP_P2));
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(QR_KT_EXP_P3));
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(QR_KT_EXP_P4));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(b), 23);
    __m256i nrm = _mm256_min_epi32(e, _mm256_set1_epi32(QR_KT_EXP_MAX_EXP));
    nrm = _mm256_max_epi32(nrm, _mm256_set1_epi32(QR_KT_EXP_MIN_EXP));
    const __m256 over = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_sub_epi32(e, nrm), _mm256_set1_epi32(QR_KT_EXP_MAX_EXP)));
    const __m256 scale = _mm256_castsi256_ps(_mm256_add_epi32(nrm, _mm256_set1_epi32(QR_KT_EXP_MAX_EXP)));
    p = QR__K_TR_FMA(p, v, QR__K_TR_PS(1.0f));
    v = _mm256_mul_ps(v, over);
    QR_KERN_ROUNDED(v);
    p = QR__K_TR_FMA(p, v, over);
    __m256 r = _mm256_mul_ps(p, scale);
    QR_KERN_ROUNDED(r);
    return r;
}

/* QrF32MapFn with AVX2. */
QR__K_AVX2 static void qr_f32_map__avx2(QrF32MapOp op, const float *x, float *y, int64_t n) {
    int64_t i = 0;
    switch (op) {
    case QR_F32_MAP_ERF:
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, qr__k_tr_erf_avx2(_mm256_loadu_ps(x + i)));
        break;
    case QR_F32_MAP_SIGMOID:
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, qr__k_tr_logistic_avx2(_mm256_loadu_ps(x + i)));
        break;
    case QR_F32_MAP_TANH:
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, qr__k_tr_tanh_avx2(_mm256_loadu_ps(x + i)));
        break;
    case QR_F32_MAP_EXP:
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, qr__k_tr_exp_avx2(_mm256_loadu_ps(x + i)));
        break;
    case QR_F32_MAP_EXP_WIDE:
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, qr__k_tr_sumexp_avx2(_mm256_loadu_ps(x + i), true));
        break;
    }
    if (i < n) qr_f32_map__ref(op, x + i, y + i, n - i);
}

/* QrF32LayerNormFn with AVX2 (the lanes of MLAS's kernel in registers); rows of fewer than
 * eight values run the ref's scalar row. */
QR__K_AVX2 static void qr_f32_layernorm__avx2(const float *x, const float *scale, const float *bias, float *y, int64_t n,
                                              float eps, float *mean_out, float *inv_out) {
    if (n < 8) {
        qr_f32_layernorm__ref(x, scale, bias, y, n, eps, mean_out, inv_out);
        return;
    }
    __m256d vd = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vd = _mm256_add_pd(vd, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
    __m128d rd = _mm_add_pd(_mm256_castpd256_pd128(vd), _mm256_extractf128_pd(vd, 1));
    rd = _mm_add_sd(rd, _mm_unpackhi_pd(rd, rd));
    double ds = _mm_cvtsd_f64(rd);
    for (; i < n; i++) ds = ds + (double)x[i];
    const float mean = (float)(ds / (double)n);
    const __m256 vm = QR__K_TR_PS(mean);
    __m256 vs = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
        const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), vm);
        vs = QR__K_TR_FMA(d, d, vs);
    }
    __m128 r = _mm_add_ps(_mm256_castps256_ps128(vs), _mm256_extractf128_ps(vs, 1));
    r = _mm_add_ps(r, _mm_movehl_ps(r, r));
    r = _mm_add_ss(r, _mm_movehdup_ps(r));
    float s = _mm_cvtss_f32(r);
    for (const int64_t i4 = i + (n - i) / 4 * 4; i < n; i++) {   /* the tail: see kern.h */
        const float d = x[i] - mean;
        float p = d * d;
        QR_KERN_ROUNDED(p);
        s = i < i4 ? s + p : fmaf(d, d, s);
    }
    const float inv = 1.0f / sqrtf(s / (float)n + eps);
    const __m256 vi = QR__K_TR_PS(inv);
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vi);
        QR_KERN_ROUNDED(t);
        if (bias) {
            t = QR__K_TR_FMA(t, _mm256_loadu_ps(scale + i), _mm256_loadu_ps(bias + i));
        } else {
            t = _mm256_mul_ps(t, _mm256_loadu_ps(scale + i));
            QR_KERN_ROUNDED(t);
        }
        _mm256_storeu_ps(y + i, t);
    }
    for (; i < n; i++) {
        float t = (x[i] - mean) * inv;
        QR_KERN_ROUNDED(t);
        if (bias) {
            y[i] = fmaf(t, scale[i], bias[i]);
        } else {
            float u = t * scale[i];
            QR_KERN_ROUNDED(u);
            y[i] = u;
        }
    }
    if (mean_out) *mean_out = mean;
    if (inv_out) *inv_out = inv;
}

#undef QR__K_TR_PS
#undef QR__K_TR_FMA
#endif
