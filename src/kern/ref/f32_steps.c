/* kern/ref/f32_steps — plain C fused elementwise chains (QrF32StepsFn): the oracle for the
 * SIMD variants, and the definition the fused executor paths must match bit for bit (see
 * kern.h). */

/* One element through step s (channel parameters already picked: pv, qv, zv). */
static inline float qr__k_step1(const QrF32Step *s, float v, float pv, float qv, int32_t zv, float tv) {
    switch (s->op) {
    case QR_F32_STEP_ADD: return s->swap ? pv + v : v + pv;
    case QR_F32_STEP_SUB: return s->swap ? pv - v : v - pv;
    case QR_F32_STEP_MUL: return s->swap ? pv * v : v * pv;
    case QR_F32_STEP_DIV: return s->swap ? pv / v : v / pv;
    case QR_F32_STEP_ADD_T: return s->swap ? tv + v : v + tv;
    case QR_F32_STEP_AFFINE: {
        volatile float m = v * pv;   /* never contracted into an fma: BatchNormalization rounds twice */
        return m + qv;
    }
    case QR_F32_STEP_CLAMP:
        v = v < s->lo ? s->lo : v;
        return v > s->hi ? s->hi : v;
    case QR_F32_STEP_RELU: return v > 0 ? v : (v != v ? v : 0.0f);
    case QR_F32_STEP_FQ: {
        float y;
        qr_f32_fake_quant__ref(&v, 1, pv, zv, s->qmin, s->qmax, &y);
        return y;
    }
    }
    return v;
}

/* QrF32StepsFn, plain C: element by element, the steps in order. */
static void qr_f32_steps__ref(const QrF32Step *s, int ns, const float *x, float *y, int64_t n, int64_t ch,
                              int64_t off) {
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        for (int k = 0; k < ns; k++) {
            const QrF32Step *st = &s[k];
            int64_t c = ch * st->pc;
            v = qr__k_step1(st, v, st->p ? st->p[c] : 0.0f, st->q ? st->q[c] : 0.0f, st->zp ? st->zp[c] : 0,
                            st->t ? st->t[off + i] : 0.0f);
        }
        y[i] = v;
    }
}

/* The leading steps of act[0..nact) a QrF32ConvM1ActFn fuses: a Clip then a ReLU (kind 3),
 * a Clip (2), a ReLU (1), or none (0); returns how many, *kind set. */
static int qr__k_m1_act_kind(const QrF32Step *act, int nact, int *kind) {
    *kind = 0;
    if (nact >= 1 && act[0].op == QR_F32_STEP_CLAMP) {
        *kind = nact >= 2 && act[1].op == QR_F32_STEP_RELU ? 3 : 2;
        return *kind == 3 ? 2 : 1;
    }
    if (nact >= 1 && act[0].op == QR_F32_STEP_RELU) *kind = 1;
    return *kind;
}

/* QrF32ConvM1ActFn, plain C: qr_f32_conv_m1__ref, then the fused steps by qr_f32_steps__ref,
 * plane by plane. */
static int qr_f32_conv_m1_act__ref(const QrF32ConvB *b, int64_t n, int64_t xs, const float *w, int64_t ws,
                                   const float *bias, float *y, int64_t ys, const QrF32Step *act, int nact) {
    int kind;
    const int used = qr__k_m1_act_kind(act, nact, &kind);
    QrF32ConvB pb = *b;
    for (int64_t p = 0; p < n; p++) {
        pb.x = b->x + p * xs;
        qr_f32_conv_m1__ref(&pb, w + p * ws, bias ? bias[p] : 0.0f, y + p * ys);
        if (used) qr_f32_steps__ref(act, used, y + p * ys, y + p * ys, b->OH * b->OW, 0, 0);
    }
    return used;
}
