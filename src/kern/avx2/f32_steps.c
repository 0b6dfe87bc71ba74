/* kern/avx2/f32_steps — fused elementwise chains (QrF32StepsFn) with AVX2: 32 elements per
 * pass through the steps (four ymm), vmaskmovps for the tail. Every step is the same IEEE
 * operation as in kern/ref/f32_steps.c, so the results are bit-identical. */
#if defined(__x86_64__)

/* Applies step s to v (see qr__k_step_avx512). */
QR__K_AVX2 static inline __m256 qr__k_step_avx2(const QrF32Step *s, __m256 v, __m256 pv, __m256 qv, __m256 flo,
                                                 __m256 fhi, __m256 t) {
    switch (s->op) {
    case QR_F32_STEP_ADD: return s->swap ? _mm256_add_ps(pv, v) : _mm256_add_ps(v, pv);
    case QR_F32_STEP_SUB: return s->swap ? _mm256_sub_ps(pv, v) : _mm256_sub_ps(v, pv);
    case QR_F32_STEP_MUL: return s->swap ? _mm256_mul_ps(pv, v) : _mm256_mul_ps(v, pv);
    case QR_F32_STEP_DIV: return s->swap ? _mm256_div_ps(pv, v) : _mm256_div_ps(v, pv);
    case QR_F32_STEP_ADD_T: return s->swap ? _mm256_add_ps(t, v) : _mm256_add_ps(v, t);
    case QR_F32_STEP_AFFINE: {
        __m256 m = _mm256_mul_ps(v, pv);
        QR_KERN_ROUNDED(m);
        return _mm256_add_ps(m, qv);
    }
    case QR_F32_STEP_CLAMP: return _mm256_min_ps(qv, _mm256_max_ps(pv, v));
    case QR_F32_STEP_RELU: {
        __m256 keep = _mm256_or_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        return _mm256_and_ps(v, keep);
    }
    case QR_F32_STEP_FQ: {
        __m256 d = _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(v, pv), flo), fhi);
        return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtps_epi32(d)), pv);
    }
    }
    return v;
}

/* QrF32StepsFn on AVX2. */
QR__K_AVX2 static void qr_f32_steps__avx2(const QrF32Step *s, int ns, const float *x, float *y, int64_t n, int64_t ch,
                                          int64_t off) {
    if (ns > QR_F32_MAX_STEPS) {
        qr_f32_steps__ref(s, ns, x, y, n, ch, off);
        return;
    }
    __m256 pv[QR_F32_MAX_STEPS], qv[QR_F32_MAX_STEPS], flo[QR_F32_MAX_STEPS], fhi[QR_F32_MAX_STEPS];
    for (int k = 0; k < ns; k++) {
        const QrF32Step *st = &s[k];
        int64_t c = ch * st->pc;
        float p = st->p ? st->p[c] : 0.0f, q = st->q ? st->q[c] : 0.0f;
        if (st->op == QR_F32_STEP_CLAMP) { p = st->lo; q = st->hi; }
        pv[k] = _mm256_set1_ps(p);
        qv[k] = _mm256_set1_ps(q);
        int32_t z = st->zp ? st->zp[c] : 0;
        flo[k] = _mm256_set1_ps((float)(st->qmin - z));
        fhi[k] = _mm256_set1_ps((float)(st->qmax - z));
    }
    const __m256 zero = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8), v2 = _mm256_loadu_ps(x + i + 16),
               v3 = _mm256_loadu_ps(x + i + 24);
        for (int k = 0; k < ns; k++) {
            const QrF32Step *st = &s[k];
            const float *t = st->t ? st->t + off + i : NULL;
            v0 = qr__k_step_avx2(st, v0, pv[k], qv[k], flo[k], fhi[k], t ? _mm256_loadu_ps(t) : zero);
            v1 = qr__k_step_avx2(st, v1, pv[k], qv[k], flo[k], fhi[k], t ? _mm256_loadu_ps(t + 8) : zero);
            v2 = qr__k_step_avx2(st, v2, pv[k], qv[k], flo[k], fhi[k], t ? _mm256_loadu_ps(t + 16) : zero);
            v3 = qr__k_step_avx2(st, v3, pv[k], qv[k], flo[k], fhi[k], t ? _mm256_loadu_ps(t + 24) : zero);
        }
        _mm256_storeu_ps(y + i, v0);
        _mm256_storeu_ps(y + i + 8, v1);
        _mm256_storeu_ps(y + i + 16, v2);
        _mm256_storeu_ps(y + i + 24, v3);
    }
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (; i < n; i += 8) {   /* vmaskmovps neither reads nor writes masked-off lanes */
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)QR_MIN(n - i, 8)), idx);
        __m256 v = _mm256_maskload_ps(x + i, m);
        for (int k = 0; k < ns; k++) {
            const QrF32Step *st = &s[k];
            __m256 t = st->t ? _mm256_maskload_ps(st->t + off + i, m) : zero;
            v = qr__k_step_avx2(st, v, pv[k], qv[k], flo[k], fhi[k], t);
        }
        _mm256_maskstore_ps(y + i, m, v);
    }
}

#endif
