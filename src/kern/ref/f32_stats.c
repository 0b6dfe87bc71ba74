/* kern/ref/f32_stats — plain C analysis kernels (pair statistics, histogram, fake
 * quantization), the oracles for the SIMD variants, and the statistics merge they share. */

static void qr_f32_pair_stats_init(QrF32PairStats *s) {
    memset(s, 0, sizeof *s);
    s->x.min = s->y.min = INFINITY;
    s->x.max = s->y.max = -INFINITY;
}

static void qr__k_moments_merge(QrF32Moments *a, const QrF32Moments *b) {
    a->n_nan += b->n_nan;
    a->n_posinf += b->n_posinf;
    a->n_neginf += b->n_neginf;
    if (b->n == 0) return;
    if (a->n == 0) {
        a->n = b->n;
        a->min = b->min;
        a->max = b->max;
        a->mean = b->mean;
        a->m2 = b->m2;
        return;
    }
    double n = (double)(a->n + b->n), d = b->mean - a->mean;
    a->m2 += b->m2 + d * d * (double)a->n * (double)b->n / n;
    a->mean += d * (double)b->n / n;
    a->n += b->n;
    a->min = QR_MIN(a->min, b->min);
    a->max = QR_MAX(a->max, b->max);
}

static void qr_f32_pair_stats_merge(QrF32PairStats *a, const QrF32PairStats *b) {
    qr__k_moments_merge(&a->x, &b->x);
    qr__k_moments_merge(&a->y, &b->y);
    a->n += b->n;
    a->sxx += b->sxx;
    a->syy += b->syy;
    a->sxy += b->sxy;
    a->sdd += b->sdd;
    a->sad += b->sad;
    a->maxad = QR_MAX(a->maxad, b->maxad);
}

/* Moments of v[0..n) over finite values into an empty *m: sum, then sum of squared
 * deviations from the block mean (the block is in cache for the second pass). */
static void qr__k_moments_block(const float *v, int64_t n, QrF32Moments *m) {
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        float f = v[i];
        if (f != f) { m->n_nan++; continue; }
        if (f == INFINITY) { m->n_posinf++; continue; }
        if (f == -INFINITY) { m->n_neginf++; continue; }
        m->n++;
        sum += f;
        if (f < m->min) m->min = f;
        if (f > m->max) m->max = f;
    }
    if (!m->n) return;
    m->mean = sum / (double)m->n;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(v[i])) m->m2 += ((double)v[i] - m->mean) * ((double)v[i] - m->mean);
}

/* One block of at most QR_KERN_STATS_BLOCK elements into an empty *b. */
static void qr__k_pair_block_ref(const float *x, const float *y, int64_t n, QrF32PairStats *b) {
    qr__k_moments_block(x, n, &b->x);
    if (!y) return;
    qr__k_moments_block(y, n, &b->y);
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        double xv = x[i], yv = y[i], d = xv - yv, ad = fabs(d);
        b->n++;
        b->sxx += xv * xv;
        b->syy += yv * yv;
        b->sxy += xv * yv;
        b->sdd += d * d;
        b->sad += ad;
        if (ad > b->maxad) b->maxad = ad;
    }
}

/* QrF32PairStatsFn, plain C. */
static void qr_f32_pair_stats__ref(const float *x, const float *y, int64_t n, QrF32PairStats *s) {
    for (int64_t i0 = 0; i0 < n; i0 += QR_KERN_STATS_BLOCK) {
        QrF32PairStats b;
        qr_f32_pair_stats_init(&b);
        qr__k_pair_block_ref(x + i0, y ? y + i0 : NULL, QR_MIN(QR_KERN_STATS_BLOCK, n - i0), &b);
        qr_f32_pair_stats_merge(s, &b);
    }
}

/* QrF32MomentBlocksFn, plain C: the blocks of qr_f32_pair_stats__ref(x, NULL, n). */
static void qr_f32_moment_blocks__ref(const float *x, int64_t n, QrF32Moments *m) {
    for (int64_t k = 0; k * QR_KERN_STATS_BLOCK < n; k++) {
        QrF32PairStats b;
        qr_f32_pair_stats_init(&b);
        qr__k_moments_block(x + k * QR_KERN_STATS_BLOCK, QR_MIN(QR_KERN_STATS_BLOCK, n - k * QR_KERN_STATS_BLOCK), &b.x);
        m[k] = b.x;
    }
}

/* QrF32RtolFn, plain C. The division runs only for elements that may beat the running
 * maximum rt: skipping ad < rt·ax·(1 − 1e-9) never skips one, since fl(ad/ax) > rt implies
 * ad > rt·ax·(1 − 2^-53) and the test's own rounding is far below the 1e-9 margin (rt·ax stays
 * clear of the subnormal range: a non-zero rt is at least the smallest float over the largest).
 * So the result is the exact maximum, whichever elements a level skips. */
static double qr_f32_rtol__ref(const float *x, const float *y, int64_t n) {
    double rt = 0;
    for (int64_t i = 0; i < n; i++) {
        double ad = fabs((double)x[i] - (double)y[i]), ax = fabs((double)x[i]);
        if (ad < rt * ax * (1 - 1e-9)) continue;
        double r = ax > 0 ? ad / ax : (ad > 0 ? FLT_MAX : 0);
        rt = r > rt ? r : rt;
    }
    return rt;
}

/* QrF32HistFn, plain C. The bin index is clamped in float before the conversion, so an
 * overflowing (x - lo) * scale can never reach an out-of-range integer conversion. */
static void qr_f32_hist__ref(const float *x, int64_t n, float lo, float hi, int32_t nbins, int64_t *counts) {
    if (!(hi > lo)) {
        for (int64_t i = 0; i < n; i++) counts[0] += x[i] == lo;
        return;
    }
    const float scale = (float)nbins / (hi - lo), cap = (float)(nbins - 1);
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        if (!(v >= lo && v <= hi)) continue;
        float f = (v - lo) * scale;
        if (!(f < cap)) f = cap;
        counts[(int32_t)f]++;
    }
}

/* QrF32FakeQuantFn, plain C: QuantizeLinear (ops/qdq.c's qr_quant_saturate_round on
 * x / scale) followed by DequantizeLinear ((float)(q - zp) * scale). */
static void qr_f32_fake_quant__ref(const float *x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax,
                                   float *y) {
    const float flo = (float)(qmin - zp), fhi = (float)(qmax - zp);
    for (int64_t i = 0; i < n; i++) {
        float v = x[i] / scale;
        if (!(v >= flo)) v = flo;
        if (v > fhi) v = fhi;
        int32_t q = (int32_t)rintf(v) + zp;
        y[i] = (float)(q - zp) * scale;
    }
}

/* QrF32WquantFn, plain C: analysis/weights.c's per-element loop, the oracle of every level. */
static void qr_f32_wquant__ref(const float *x, const void *stored, bool sgn, const float *s, const int32_t *z, int64_t ss,
                               int32_t lo, int32_t hi, int64_t n, float *y, QrWqCounts *c) {
    const float flo = (float)lo, fhi = (float)hi;
    int64_t sat = 0, far = 0, zero = 0, nonfinite = 0, diff = 0;
    for (int64_t i = 0; i < n; i++) {
        const float s1 = s[i * ss];
        const int32_t zi = z[i * ss];
        const float fz = (float)zi;
        int32_t q = 0;
        if (x) {
            const float xv = x[i], dv = xv / s1;
            if (!isfinite(xv) || !isfinite(dv)) nonfinite++;
            else {
                const float rd = rintf(dv);
                if (rd + fz < flo || rd + fz > fhi) sat++;
                if (dv + fz < flo - 1.0f || dv + fz > fhi + 1.0f) far++;
            }
            float v = dv;
            const float vlo = (float)(lo - zi), vhi = (float)(hi - zi);
            if (!(v >= vlo)) v = vlo;
            if (v > vhi) v = vhi;
            q = (int32_t)rintf(v) + zi;
            if (xv != 0 && q == zi) zero++;
        }
        if (stored) {
            const int32_t st = sgn ? ((const int8_t *)stored)[i] : ((const uint8_t *)stored)[i];
            if (x && st != q) diff++;
            q = st;
        }
        y[i] = (float)(q - zi) * s1;
    }
    c->sat += sat;
    c->far += far;
    c->zero += zero;
    c->nonfinite += nonfinite;
    c->diff += diff;
}

/* QrF32TieScanFn in plain C: sixteen lanes at a time in the compiler's vector types (what the
 * fragility's loop was; the avx2 and neon levels run this), each lane the definition's operations:
 * the division, the saturation's compares (a NaN fails v >= lo and takes lo), 2v to int32 and back
 * equal to itself and odd. */
typedef float QrKTieV16f __attribute__((vector_size(64)));
typedef int32_t QrKTieV16i __attribute__((vector_size(64)));
static int64_t qr_f32_tie_scan__ref(const float *x, int64_t nblk, float sc, float lo, float hi) {
    const QrKTieV16f zero = { 0 }, vsc = zero + sc, vlo = zero + lo, vhi = zero + hi;
    for (int64_t b = 0; b < nblk; b++) {
        QrKTieV16f v;
        memcpy(&v, x + 16 * b, sizeof v);
        v = v / vsc;
        QrKTieV16i in = v >= vlo;
        v = (QrKTieV16f)(((QrKTieV16i)v & in) | ((QrKTieV16i)vlo & ~in));
        QrKTieV16i over = v > vhi;
        v = (QrKTieV16f)(((QrKTieV16i)vhi & over) | ((QrKTieV16i)v & ~over));
        QrKTieV16f w = v + v;
        QrKTieV16i wi = __builtin_convertvector(w, QrKTieV16i);
        QrKTieV16i tie = (__builtin_convertvector(wi, QrKTieV16f) == w) & (wi & 1);
        int32_t any = 0;
        for (int j = 0; j < 16; j++) any |= tie[j];
        if (any) return b;
    }
    return nblk;
}
