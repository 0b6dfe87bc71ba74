/* kern/ref/f64_exp — the exponential of the comparison metrics' KL (analysis/metrics): one
 * definition in IEEE double operations, so every kernel level and both architectures give the
 * same bits, and a SIMD level computes it 8 (AVX-512), 4 (AVX2) or 2 (NEON) lanes at a time.
 *
 *   x NaN: x. Otherwise x is clamped to [-746, 710] (exp underflows to 0 below -745.2 and
 *   overflows above 709.8 either way), then
 *     t  = fma(x, 1/ln2, S)               S = 0x1.8p52: t's low bits hold k = round(x / ln2)
 *     k  = bits(t) - bits(S)              (ties to even), an integer in [-1077, 1025]
 *     kd = t - S                          k as a double, exactly
 *     r  = fma(-kd, LN2_HI, x); r = fma(-kd, LN2_LO, r)      |r| <= ln2 / 2 (+ rounding)
 *     p  = Horner of e^r's Taylor series to degree 13, each step one fma:
 *          p = C13; p = fma(p, r, C12); ...; p = fma(p, r, C1); p = fma(p, r, 1)   Cn = 1 / n!
 *     e^x = (p * 2^k1) * 2^k2             k1 = floor(k / 2), k2 = k - k1 (two exact powers of
 *                                         two, so subnormal and infinite results need no branch)
 * The truncation error r^14 / 14! is below 5e-18 relative; the result is within about 1.5 ulp
 * of e^x (tests/test_kern.c `test_kern_exp` checks 2 ulp against long double). It is not
 * glibc's exp, whose bits depend on the library and its code path (FMA or not). */

#define QR__EXP_SHIFT 0x1.8p52
#define QR__EXP_INV_LN2 0x1.71547652b82fep0
#define QR__EXP_LN2_HI 0x1.62e42fefa3800p-1   /* ln 2 with its low 11 bits zero: kd * LN2_HI exact */
#define QR__EXP_LN2_LO 0x1.ef35793c7673p-45   /* ln 2 - LN2_HI */
#define QR__EXP_LO (-746.0)
#define QR__EXP_HI 710.0

/* 1 / n! for n = 2..13, each the double nearest (one correctly rounded division of exact
 * integers: n! < 2^53). */
static const double qr__exp_c[14] = {
    1.0, 1.0, 1.0 / 2.0, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0,
    1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0,
};

/* 2^e as a double for e in [-1022, 1023]. */
static inline double qr__exp_pow2(int64_t e) {
    uint64_t b = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* The definition above, one value. */
static inline double qr_f64_exp(double x) {
    if (x != x) return x;
    x = x < QR__EXP_LO ? QR__EXP_LO : x > QR__EXP_HI ? QR__EXP_HI : x;
    const double s = QR__EXP_SHIFT, t = fma(x, QR__EXP_INV_LN2, s);
    uint64_t tb, sb;
    memcpy(&tb, &t, sizeof tb);
    memcpy(&sb, &s, sizeof sb);
    const int64_t k = (int64_t)(tb - sb);
    const double kd = t - s;
    double r = fma(-kd, QR__EXP_LN2_HI, x);
    r = fma(-kd, QR__EXP_LN2_LO, r);
    double p = qr__exp_c[13];
    for (int n = 12; n >= 0; n--) p = fma(p, r, qr__exp_c[n]);
    const int64_t k1 = ((k + 2048) >> 1) - 1024;   /* floor(k / 2), no shift of a negative */
    return p * qr__exp_pow2(k1) * qr__exp_pow2(k - k1);
}

/* QrF32ExpSubFn, plain C. */
static void qr_f32_exp_sub__ref(const float *x, double sub, double *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = qr_f64_exp((double)x[i] - sub);
}

/* QrF32KlSideFn, plain C. */
static void qr_f32_kl_side__ref(const float *v, const float *w, int64_t n, double sub, double *s, double *t) {
    double ss = *s, tt = t ? *t : 0;
    for (int64_t i = 0; i < n; i++) {
        double vi = v[i], wi = w[i];
        if (!isfinite(vi) || !isfinite(wi)) continue;
        double e = qr_f64_exp(vi - sub);
        ss += e;
        if (t) {
            double p = e * (vi - wi);
            QR_KERN_ROUNDED(p);
            tt += p;
        }
    }
    *s = ss;
    if (t) *t = tt;
}

/* QrF32KlSidesFn, plain C: the two sides' calls. */
static void qr_f32_kl_sides__ref(const float *x, const float *y, int64_t n, double subx, double suby, double *sx, double *tx,
                                 double *sy) {
    qr_f32_kl_side__ref(x, y, n, subx, sx, tx);
    qr_f32_kl_side__ref(y, x, n, suby, sy, NULL);
}
