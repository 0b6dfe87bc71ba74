/* kern/ref/f32_trans — plain C transcendental and normalization kernels in ONNX Runtime's
 * arithmetic (see QrF32SoftmaxFn, QrF32MapFn, QrF32LayerNormFn): the oracle for the SIMD variants. Every step is one IEEE
 * operation on floats (fmaf: one rounding), in the order kern.h describes; integer steps act
 * on the bit patterns. */

static inline uint32_t qr__k_tr_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float qr__k_tr_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* MLAS's exp after the clamp: the rounding-bias split of *v into m * ln2 + r (*v becomes r,
 * *biased holds m in its low mantissa bits) and the polynomial up to its P4 term. */
static inline float qr__k_tr_exp_poly(float *v, float *biased) {
    *biased = fmaf(QR_KT_LOG2E, *v, QR_KT_ROUND_BIAS);
    float m = *biased - QR_KT_ROUND_BIAS;
    *v = fmaf(m, QR_KT_LN2_HI, *v);
    *v = fmaf(m, QR_KT_LN2_LO, *v);
    float p = QR_KT_EXP_P0;
    p = fmaf(p, *v, QR_KT_EXP_P1);
    p = fmaf(p, *v, QR_KT_EXP_P2);
    p = fmaf(p, *v, QR_KT_EXP_P3);
    return fmaf(p, *v, QR_KT_EXP_P4);
}

/* exp(v) of one element of a softmax row, v = x + (-max) already rounded (QrF32SoftmaxFn). */
static float qr__k_tr_sumexp(float v, bool wide) {
    float lo = wide ? QR_KT_EXP_LOWER : QR_KT_EXP_LOWER_SUMEXP;
    v = v < lo ? lo : v;    /* the clamp keeps NaN */
    float biased, p = qr__k_tr_exp_poly(&v, &biased);
    float m = biased - QR_KT_ROUND_BIAS;
    p = fmaf(p, v, 1.0f);
    p = fmaf(p, v, 1.0f);
    if (wide) {             /* p * 2^m, one rounding (exact in double, then to float) */
        if (m != m) return m;
        const float mc = m > 400.0f ? 400.0f : m < -400.0f ? -400.0f : m;   /* Exp's unclamped top: inf either way */
        return (float)ldexp((double)p, (int)mc);
    }
    return p * qr__k_tr_float((qr__k_tr_bits(biased) << 23) + 0x3F800000u);
}

/* QrF32SoftmaxFn, plain C. */
static void qr_f32_softmax__ref(const float *x, float *y, int64_t rows, int64_t n, bool wide, bool logsm) {
    const int lanes = wide ? 16 : 8;
    for (int64_t r = 0; r < rows; r++, x += n, y += n) {
        float mx = -FLT_MAX;
        for (int64_t i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
        const float neg = -mx;
        float acc[16] = {0};
        for (int64_t i = 0; i < n; i++) {
            float e = qr__k_tr_sumexp(x[i] + neg, wide);
            if (!logsm) y[i] = e;
            acc[i % lanes] = acc[i % lanes] + e;
        }
        if (wide)
            for (int l = 0; l < 8; l++) acc[l] = acc[l + 8] + acc[l];
        float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        if (logsm) {
            const float lg = logf(s);
            for (int64_t i = 0; i < n; i++) y[i] = (x[i] + neg) - lg;
            continue;
        }
        const float scale = 1.0f / s;
        for (int64_t i = 0; i < n; i++) y[i] = scale * y[i];
    }
}

/* erf of one element (QrF32MapFn, QR_F32_MAP_ERF). */
static float qr__k_tr_erf(float x) {
    const uint32_t sign = qr__k_tr_bits(x) & 0x80000000u;
    float a = qr__k_tr_float(qr__k_tr_bits(x) & 0x7fffffffu);
    a = a < QR_KT_ERF_UPPER ? a : QR_KT_ERF_UPPER;     /* NaN becomes the bound */
    float s = a * a;
    float p = QR_KT_ERF_S0;
    p = fmaf(p, s, QR_KT_ERF_S1);
    p = fmaf(p, s, QR_KT_ERF_S2);
    p = fmaf(p, s, QR_KT_ERF_S3);
    p = fmaf(p, s, QR_KT_ERF_S4);
    p = fmaf(p, s, QR_KT_ERF_S5);
    p = fmaf(p, a, a);
    const bool big = QR_KT_ERF_SPLIT <= a;
    const uint32_t small = big ? 0 : qr__k_tr_bits(p);
    const float b = big ? a : 0.0f;
    float q = QR_KT_ERF_B0;
    q = fmaf(q, b, QR_KT_ERF_B1);
    q = fmaf(q, b, QR_KT_ERF_B2);
    q = fmaf(q, b, QR_KT_ERF_B3);
    q = fmaf(q, b, QR_KT_ERF_B4);
    q = fmaf(q, b, QR_KT_ERF_B5);
    q = fmaf(q, b, QR_KT_ERF_B6);
    q = fmaf(q, b, b);
    q = -q;
    q = q > QR_KT_EXP_LOWER_SUMEXP ? q : QR_KT_EXP_LOWER_SUMEXP;   /* NaN becomes the bound */
    float r = fmaf(QR_KT_LOG2E, q, QR_KT_ROUND_BIAS);
    r = r - QR_KT_ROUND_BIAS;
    float f = fmaf(QR_KT_LN2_HI, r, q);
    f = fmaf(r, QR_KT_LN2_LO, f);
    float e = QR_KT_ERF_E0;
    e = fmaf(e, f, QR_KT_ERF_E1);
    e = fmaf(e, f, QR_KT_ERF_E2);
    e = fmaf(e, f, QR_KT_ERF_E3);
    e = fmaf(e, f, QR_KT_ERF_E4);
    e = fmaf(e, f, 1.0f);
    e = fmaf(e, f, 1.0f);
    e = e * qr__k_tr_float((uint32_t)((int32_t)r + 127) << 23);
    QR_KERN_ROUNDED(e);
    e = 1.0f - e;
    return qr__k_tr_float(qr__k_tr_bits(e) | small | sign);
}

/* The logistic function of one element (QR_F32_MAP_SIGMOID). */
static float qr__k_tr_logistic(float x) {
    x = x < -QR_KT_SIG_RANGE ? -QR_KT_SIG_RANGE : x;   /* max(-18, x), min(18, x): NaN stays */
    x = x > QR_KT_SIG_RANGE ? QR_KT_SIG_RANGE : x;
    const float s = x * x;
    float p = fmaf(s, QR_KT_SIG_A9, QR_KT_SIG_A7);
    p = fmaf(p, s, QR_KT_SIG_A5);
    p = fmaf(p, s, QR_KT_SIG_A3);
    p = fmaf(p, s, QR_KT_SIG_A1);
    float q = fmaf(s, QR_KT_SIG_B10, QR_KT_SIG_B8);
    q = fmaf(q, s, QR_KT_SIG_B6);
    q = fmaf(q, s, QR_KT_SIG_B4);
    q = fmaf(q, s, QR_KT_SIG_B2);
    q = fmaf(q, s, QR_KT_SIG_B0);
    p = x * p;
    float r = p / q + 0.5f;
    return r < 0.0f ? 0.0f : r;   /* max(0, r): NaN and -0 stay */
}

/* tanh of one element (QR_F32_MAP_TANH). */
static float qr__k_tr_tanh(float x) {
    x = x < -QR_KT_TANH_RANGE ? -QR_KT_TANH_RANGE : x;
    x = x > QR_KT_TANH_RANGE ? QR_KT_TANH_RANGE : x;
    const float s = x * x;
    float p = fmaf(s, QR_KT_TANH_A13, QR_KT_TANH_A11);
    p = fmaf(p, s, QR_KT_TANH_A9);
    p = fmaf(p, s, QR_KT_TANH_A7);
    p = fmaf(p, s, QR_KT_TANH_A5);
    p = fmaf(p, s, QR_KT_TANH_A3);
    p = fmaf(p, s, QR_KT_TANH_A1);
    p = x * p;
    float q = fmaf(s, QR_KT_TANH_B6, QR_KT_TANH_B4);
    q = fmaf(q, s, QR_KT_TANH_B2);
    q = fmaf(q, s, QR_KT_TANH_B0);
    return p / q;
}

/* exp(x) as MLAS's FMA3 kernel for the whole range (QR_F32_MAP_EXP). */
static float qr__k_tr_exp(float x) {
    float v = QR_KT_EXP_LOWER > x ? QR_KT_EXP_LOWER : x;   /* vmaxps / vminps: a NaN x passes */
    v = QR_KT_EXP_UPPER < v ? QR_KT_EXP_UPPER : v;
    float biased, p = qr__k_tr_exp_poly(&v, &biased);
    const int32_t e = (int32_t)(qr__k_tr_bits(biased) << 23);
    int32_t nrm = e < QR_KT_EXP_MAX_EXP ? e : QR_KT_EXP_MAX_EXP;
    nrm = nrm > QR_KT_EXP_MIN_EXP ? nrm : QR_KT_EXP_MIN_EXP;
    const float over = qr__k_tr_float((uint32_t)(e - nrm) + (uint32_t)QR_KT_EXP_MAX_EXP);
    const float scale = qr__k_tr_float((uint32_t)nrm + (uint32_t)QR_KT_EXP_MAX_EXP);
    p = fmaf(p, v, 1.0f);
    v = v * over;
    p = fmaf(p, v, over);
    return p * scale;
}

/* exp(x) as MLAS's AVX-512F kernel (QR_F32_MAP_EXP_WIDE). */
static float qr__k_tr_exp_wide(float x) { return qr__k_tr_sumexp(x, true); }

/* QrF32MapFn, plain C. */
static void qr_f32_map__ref(QrF32MapOp op, const float *x, float *y, int64_t n) {
    switch (op) {
    case QR_F32_MAP_ERF: for (int64_t i = 0; i < n; i++) y[i] = qr__k_tr_erf(x[i]); break;
    case QR_F32_MAP_SIGMOID: for (int64_t i = 0; i < n; i++) y[i] = qr__k_tr_logistic(x[i]); break;
    case QR_F32_MAP_TANH: for (int64_t i = 0; i < n; i++) y[i] = qr__k_tr_tanh(x[i]); break;
    case QR_F32_MAP_EXP: for (int64_t i = 0; i < n; i++) y[i] = qr__k_tr_exp(x[i]); break;
    case QR_F32_MAP_EXP_WIDE: for (int64_t i = 0; i < n; i++) y[i] = qr__k_tr_exp_wide(x[i]); break;
    }
}

/* QrF32LayerNormFn, plain C: the lanes of MLAS's AVX2 kernel as arrays (n >= 8), ORT's
 * scalar Welford row below that. */
static void qr_f32_layernorm__ref(const float *x, const float *scale, const float *bias, float *y, int64_t n, float eps,
                                  float *mean_out, float *inv_out) {
    float mean, inv;
    if (n >= 8) {
        double dl[4] = { 0, 0, 0, 0 };
        int64_t i = 0;
        for (; i + 4 <= n; i += 4)
            for (int l = 0; l < 4; l++) dl[l] = dl[l] + (double)x[i + l];
        double ds = (dl[0] + dl[2]) + (dl[1] + dl[3]);
        for (; i < n; i++) ds = ds + (double)x[i];
        mean = (float)(ds / (double)n);
        float fl[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
        for (i = 0; i + 8 <= n; i += 8)
            for (int l = 0; l < 8; l++) {
                const float d = x[i + l] - mean;
                fl[l] = fmaf(d, d, fl[l]);
            }
        float s = ((fl[0] + fl[4]) + (fl[2] + fl[6])) + ((fl[1] + fl[5]) + (fl[3] + fl[7]));
        for (const int64_t i4 = i + (n - i) / 4 * 4; i < n; i++) {   /* the tail: see kern.h */
            const float d = x[i] - mean;
            float p = d * d;
            QR_KERN_ROUNDED(p);
            s = i < i4 ? s + p : fmaf(d, d, s);
        }
        inv = 1.0f / sqrtf(s / (float)n + eps);
        for (i = 0; i < n; i++) {
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
    } else {
        float m2 = 0.0f;
        mean = 0.0f;
        for (int64_t i = 0; i < n; i++) {
            const float delta = x[i] - mean;
            mean = mean + delta / (float)(i + 1);
            float p = delta * (x[i] - mean);
            QR_KERN_ROUNDED(p);
            m2 = m2 + p;
        }
        const float den = sqrtf(m2 / (float)n + eps);
        inv = 1.0f / den;
        for (int64_t i = 0; i < n; i++) {
            float t = (x[i] - mean) / den * scale[i];
            QR_KERN_ROUNDED(t);
            y[i] = bias ? t + bias[i] : t;
        }
    }
    if (mean_out) *mean_out = mean;
    if (inv_out) *inv_out = inv;
}
