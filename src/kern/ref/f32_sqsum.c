/* kern/ref/f32_sqsum — plain C sums of squares for the error split (analysis/compare.c): the
 * definitions the SIMD levels reproduce bit for bit. Each sum is one chain of double additions
 * in element order, so a level can only compute the terms ahead; the additions stay serial. */

/* QrF32SqErrSplitFn, plain C. */
static void qr_f32_sqerr_split__ref(const float *x, const float *y, const uint8_t *mask, int64_t n, double s[2]) {
    double s0 = s[0], s1 = s[1];
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        double d = (double)y[i] - (double)x[i], t = d * d;
        QR_KERN_ROUNDED(t);
        if (mask && mask[i]) s1 += t;
        else s0 += t;
    }
    s[0] = s0;
    s[1] = s1;
}

/* QrF32ClipSqFn, plain C. */
static void qr_f32_clip_sq__ref(const float *u, int64_t n, float ilo, float ihi, double lo, double hi, double st, bool scaled,
                                uint8_t *mask, QrF32ClipSq *r) {
    double s = r->s;
    int64_t n_fin = 0, n_clip = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = u[i];
        if (ilo == ilo && v < ilo) v = ilo;     /* the activation the quantizer implements (removed Relu) */
        if (ihi == ihi && v > ihi) v = ihi;
        mask[i] = 0;
        if (!isfinite(v)) continue;
        n_fin++;
        if (v < lo || v > hi) { mask[i] = 1; n_clip++; }
        double q = scaled ? v / st : v, t = q * q;
        QR_KERN_ROUNDED(t);
        s += t;
    }
    r->n_fin += n_fin;
    r->n_clip += n_clip;
    r->n_in += n_fin - n_clip;
    r->s = s;
}

/* The SIMD levels' blocks: elements a block (a multiple of 8), 2 KB of terms a buffer. */
enum { QR__K_SQ_B = 256 };

/* The SIMD levels' additions: s + t[0] + t[1] + ... + t[c - 1], one at a time in order (c <= 8;
 * a full group of 8, the usual case, as straight-line code). */
static inline double qr__k_chain8(double s, const double *t, int c) {
    if (c == 8) return s + t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
    for (int j = 0; j < c; j++) s += t[j];
    return s;
}

/* The number of set bits of an 8-bit mask (the SIMD levels' term counts), from a table: no
 * popcnt instruction needed. */
#define QR__K_P2(n) n, n + 1, n + 1, n + 2
#define QR__K_P4(n) QR__K_P2(n), QR__K_P2(n + 1), QR__K_P2(n + 1), QR__K_P2(n + 2)
#define QR__K_P6(n) QR__K_P4(n), QR__K_P4(n + 1), QR__K_P4(n + 1), QR__K_P4(n + 2)
static const uint8_t qr__k_pop8_table[256] = { QR__K_P6(0), QR__K_P6(1), QR__K_P6(1), QR__K_P6(2) };
#undef QR__K_P2
#undef QR__K_P4
#undef QR__K_P6
static inline int qr__k_pop8(unsigned m) { return qr__k_pop8_table[m & 0xffu]; }
