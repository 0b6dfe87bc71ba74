/* kern/avx512/f32_steps — fused elementwise chains (QrF32StepsFn) with AVX-512F: 64 elements
 * per pass through the steps (four zmm), masked loads and stores for the tail. Every step is
 * the same IEEE operation as in kern/ref/f32_steps.c, so the results are bit-identical. */
#if defined(__x86_64__)

/* Applies step s (parameters broadcast in pv, qv; fq limits flo/fhi; zero point as float
 * difference dz) to v; t: the ADD_T operand of these lanes. */
QR__K_AVX512 static inline __m512 qr__k_step_avx512(const QrF32Step *s, __m512 v, __m512 pv, __m512 qv, __m512 flo,
                                                     __m512 fhi, __m512 t) {
    switch (s->op) {
    case QR_F32_STEP_ADD: return s->swap ? _mm512_add_ps(pv, v) : _mm512_add_ps(v, pv);
    case QR_F32_STEP_SUB: return s->swap ? _mm512_sub_ps(pv, v) : _mm512_sub_ps(v, pv);
    case QR_F32_STEP_MUL: return s->swap ? _mm512_mul_ps(pv, v) : _mm512_mul_ps(v, pv);
    case QR_F32_STEP_DIV: return s->swap ? _mm512_div_ps(pv, v) : _mm512_div_ps(v, pv);
    case QR_F32_STEP_ADD_T: return s->swap ? _mm512_add_ps(t, v) : _mm512_add_ps(v, t);
    case QR_F32_STEP_AFFINE: {
        __m512 m = _mm512_mul_ps(v, pv);
        QR_KERN_ROUNDED(m);
        return _mm512_add_ps(m, qv);
    }
    case QR_F32_STEP_CLAMP:   /* max(lo, v) = lo > v ? lo : v and min(hi, v) = hi < v ? hi : v keep NaN */
        return _mm512_min_ps(qv, _mm512_max_ps(pv, v));
    case QR_F32_STEP_RELU: {
        __mmask16 keep = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        return _mm512_maskz_mov_ps(keep, v);
    }
    case QR_F32_STEP_FQ: {   /* max(v, lo) gives lo for NaN; cvtps2dq rounds half to even */
        __m512 d = _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(v, pv), flo), fhi);
        return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtps_epi32(d)), pv);
    }
    }
    return v;
}

/* QrF32StepsFn on AVX-512F. */
QR__K_AVX512 static void qr_f32_steps__avx512(const QrF32Step *s, int ns, const float *x, float *y, int64_t n,
                                              int64_t ch, int64_t off) {
    if (ns > QR_F32_MAX_STEPS) {
        qr_f32_steps__ref(s, ns, x, y, n, ch, off);
        return;
    }
    __m512 pv[QR_F32_MAX_STEPS], qv[QR_F32_MAX_STEPS], flo[QR_F32_MAX_STEPS], fhi[QR_F32_MAX_STEPS];
    for (int k = 0; k < ns; k++) {
        const QrF32Step *st = &s[k];
        int64_t c = ch * st->pc;
        float p = st->p ? st->p[c] : 0.0f, q = st->q ? st->q[c] : 0.0f;
        if (st->op == QR_F32_STEP_CLAMP) { p = st->lo; q = st->hi; }
        pv[k] = _mm512_set1_ps(p);
        qv[k] = _mm512_set1_ps(q);
        int32_t z = st->zp ? st->zp[c] : 0;
        flo[k] = _mm512_set1_ps((float)(st->qmin - z));
        fhi[k] = _mm512_set1_ps((float)(st->qmax - z));
    }
    const __m512 zero = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16), v2 = _mm512_loadu_ps(x + i + 32),
               v3 = _mm512_loadu_ps(x + i + 48);
        for (int k = 0; k < ns; k++) {
            const QrF32Step *st = &s[k];
            const float *t = st->t ? st->t + off + i : NULL;
            v0 = qr__k_step_avx512(st, v0, pv[k], qv[k], flo[k], fhi[k], t ? _mm512_loadu_ps(t) : zero);
            v1 = qr__k_step_avx512(st, v1, pv[k], qv[k], flo[k], fhi[k], t ? _mm512_loadu_ps(t + 16) : zero);
            v2 = qr__k_step_avx512(st, v2, pv[k], qv[k], flo[k], fhi[k], t ? _mm512_loadu_ps(t + 32) : zero);
            v3 = qr__k_step_avx512(st, v3, pv[k], qv[k], flo[k], fhi[k], t ? _mm512_loadu_ps(t + 48) : zero);
        }
        _mm512_storeu_ps(y + i, v0);
        _mm512_storeu_ps(y + i + 16, v1);
        _mm512_storeu_ps(y + i + 32, v2);
        _mm512_storeu_ps(y + i + 48, v3);
    }
    for (; i < n; i += 16) {   /* masked-off lanes are neither read nor written */
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        for (int k = 0; k < ns; k++) {
            const QrF32Step *st = &s[k];
            __m512 t = st->t ? _mm512_maskz_loadu_ps(m, st->t + off + i) : zero;
            v = qr__k_step_avx512(st, v, pv[k], qv[k], flo[k], fhi[k], t);
        }
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}

#endif
