/* kern/neon/f64_exp — QrF32ExpSubFn with AArch64 Advanced SIMD: the ref's definition
 * (kern/ref/f64_exp.c) on 2 doubles at a time, every operation the ref's, so the bits are the
 * ref's; an odd last value runs the ref. */
#if defined(__aarch64__)

static inline float64x2_t qr__k_exp128(float64x2_t x) {
    const float64x2_t s = vdupq_n_f64(QR__EXP_SHIFT);
    const uint64x2_t num = vceqq_f64(x, x);   /* all ones where x is not NaN */
    float64x2_t c = vminq_f64(vmaxq_f64(x, vdupq_n_f64(QR__EXP_LO)), vdupq_n_f64(QR__EXP_HI));
    float64x2_t t = vfmaq_f64(s, c, vdupq_n_f64(QR__EXP_INV_LN2));    /* s + c * 1/ln2, one rounding */
    int64x2_t k = vsubq_s64(vreinterpretq_s64_f64(t), vreinterpretq_s64_f64(s));
    float64x2_t kd = vsubq_f64(t, s);
    float64x2_t r = vfmsq_f64(c, kd, vdupq_n_f64(QR__EXP_LN2_HI));     /* c - kd * HI, one rounding */
    r = vfmsq_f64(r, kd, vdupq_n_f64(QR__EXP_LN2_LO));
    float64x2_t p = vdupq_n_f64(qr__exp_c[13]);
    for (int n = 12; n >= 0; n--) p = vfmaq_f64(vdupq_n_f64(qr__exp_c[n]), p, r);
    int64x2_t k1 = vsubq_s64(vreinterpretq_s64_u64(vshrq_n_u64(vreinterpretq_u64_s64(vaddq_s64(k, vdupq_n_s64(2048))), 1)),
                             vdupq_n_s64(1024));
    int64x2_t k2 = vsubq_s64(k, k1);
    float64x2_t p1 = vreinterpretq_f64_s64(vshlq_n_s64(vaddq_s64(k1, vdupq_n_s64(1023)), 52));
    float64x2_t p2 = vreinterpretq_f64_s64(vshlq_n_s64(vaddq_s64(k2, vdupq_n_s64(1023)), 52));
    float64x2_t e = vmulq_f64(vmulq_f64(p, p1), p2);
    return vbslq_f64(num, e, x);
}

static void qr_f32_exp_sub__neon(const float *x, double sub, double *out, int64_t n) {
    const float64x2_t sv = vdupq_n_f64(sub);
    int64_t i = 0;
    for (; i + 2 <= n; i += 2) vst1q_f64(out + i, qr__k_exp128(vsubq_f64(vcvt_f64_f32(vld1_f32(x + i)), sv)));
    qr_f32_exp_sub__ref(x + i, sub, out + i, n - i);
}

/* QrF32KlSideFn with NEON: the exponentials of a block 2 at a time (qr_f32_exp_sub__neon), then
 * the ref's additions over the block in element order. */
static void qr_f32_kl_side__neon(const float *v, const float *w, int64_t n, double sub, double *s, double *t) {
    enum { B = 256 };
    double e[B], ss = *s, tt = t ? *t : 0;
    for (int64_t i0 = 0; i0 < n; i0 += B) {
        const int64_t m = QR_MIN((int64_t)B, n - i0);
        qr_f32_exp_sub__neon(v + i0, sub, e, m);
        for (int64_t i = 0; i < m; i++) {
            double vi = v[i0 + i], wi = w[i0 + i];
            if (!isfinite(vi) || !isfinite(wi)) continue;
            ss += e[i];
            if (t) tt += e[i] * (vi - wi);
        }
    }
    *s = ss;
    if (t) *t = tt;
}

/* QrF32KlSidesFn with NEON: the two sides' passes (qr_f32_kl_side__neon). */
static void qr_f32_kl_sides__neon(const float *x, const float *y, int64_t n, double subx, double suby, double *sx, double *tx,
                                  double *sy) {
    qr_f32_kl_side__neon(x, y, n, subx, sx, tx);
    qr_f32_kl_side__neon(y, x, n, suby, sy, NULL);
}

#endif
