/* analysis/dsacc — implementation. See dsacc.h.
 *
 * Map: exact sum · pooled metrics · per-sample lists and their statistics. */

/* ==== exact sum ====================================================================== */

static void qr_dsacc_xsum_norm(QrXSum *s) {
    for (int i = 0; i + 1 < QR_XSUM_LIMBS; i++) {
        int64_t c = s->l[i] >> 32;           /* floor division by 2^32 (arithmetic shift) */
        s->l[i] -= c * 4294967296LL;
        s->l[i + 1] += c;
    }
    s->pending = 0;
}

static void qr_dsacc_xsum_add(QrXSum *s, double v) {
    if (v != v) { s->n_nan++; return; }
    if (isinf(v)) { if (v > 0) s->n_pinf++; else s->n_ninf++; return; }
    if (v == 0) return;
    int e;
    double f = frexp(v, &e);                 /* v = f·2^e, 0.5 <= |f| < 1 */
    int64_t m = (int64_t)ldexp(f, 53);       /* v = m·2^(e-53), m an integer */
    int p = e - 53 + 1074;                   /* bit position of m's unit above 2^-1074 */
    if (p < 0) { m /= (int64_t)1 << -p; p = 0; }   /* subnormal: the low bits are zero, exact */
    uint64_t a = (uint64_t)(m < 0 ? -m : m);
    unsigned __int128 w = (unsigned __int128)a << (p & 31);
    int i = p >> 5;
    int64_t sg = m < 0 ? -1 : 1;
    s->l[i] += sg * (int64_t)(uint32_t)w;
    s->l[i + 1] += sg * (int64_t)(uint32_t)(w >> 32);
    s->l[i + 2] += sg * (int64_t)(w >> 64);
    if (++s->pending >= (1 << 29)) qr_dsacc_xsum_norm(s);
}

static void qr_dsacc_xsum_merge(QrXSum *a, const QrXSum *b) {
    QrXSum t = *b;
    qr_dsacc_xsum_norm(&t);
    qr_dsacc_xsum_norm(a);
    for (int i = 0; i < QR_XSUM_LIMBS; i++) a->l[i] += t.l[i];
    qr_dsacc_xsum_norm(a);
    a->n_nan += b->n_nan;
    a->n_pinf += b->n_pinf;
    a->n_ninf += b->n_ninf;
}

static long double qr_dsacc_xsum_value(const QrXSum *s) {
    if (s->n_nan || (s->n_pinf && s->n_ninf)) return NAN;
    if (s->n_pinf) return INFINITY;
    if (s->n_ninf) return -INFINITY;
    QrXSum t = *s;
    qr_dsacc_xsum_norm(&t);
    long double sign = 1;
    if (t.l[QR_XSUM_LIMBS - 1] < 0) {        /* negative: take the magnitude's canonical form */
        for (int i = 0; i < QR_XSUM_LIMBS; i++) t.l[i] = -t.l[i];
        qr_dsacc_xsum_norm(&t);
        sign = -1;
    }
    long double r = 0;
    for (int i = QR_XSUM_LIMBS - 1; i >= 0; i--)
        if (t.l[i]) r += ldexpl((long double)t.l[i], 32 * i - 1074);
    return sign * r;
}

/* ==== pooled metrics ================================================================= */

static void qr_dsacc_pool_init(QrDsPool *p) {
    memset(p, 0, sizeof *p);
    p->x_min = p->y_min = INFINITY;
    p->x_max = p->y_max = -INFINITY;
}

/* See dsacc.h. */
static void qr_dsacc_xsum_add_prod(QrXSum *s, double a, double b) {
    double p = a * b;
    qr_dsacc_xsum_add(s, p);
    qr_dsacc_xsum_add(s, fma(a, b, -p));
}

/* See dsacc.h. */
static void qr_dsacc_xsum_add_nm2(QrXSum *s, double n, double m) {
    double p = n * m, e = fma(n, m, -p);     /* n·m = p + e exactly */
    qr_dsacc_xsum_add_prod(s, p, m);
    qr_dsacc_xsum_add(s, e * m);                   /* e·m: a term 2^-53 smaller, its rounding negligible */
}

static void qr_dsacc_pool_add(QrDsPool *p, const QrMetricAcc *a) {
    p->n_samples++;
    p->n_bad += a->n_bad;
    if (!a->n) return;
    double n = (double)a->n;
    p->n += a->n;
    qr_dsacc_xsum_add(&p->sxx, a->sxx);
    qr_dsacc_xsum_add(&p->syy, a->syy);
    qr_dsacc_xsum_add(&p->sxy, a->sxy);
    qr_dsacc_xsum_add(&p->sdd, a->sdd);
    qr_dsacc_xsum_add(&p->sad, a->sad);
    qr_dsacc_xsum_add_prod(&p->sx, n, a->x_mean);
    qr_dsacc_xsum_add_prod(&p->sy, n, a->y_mean);
    qr_dsacc_xsum_add_nm2(&p->sx2, n, a->x_mean);
    qr_dsacc_xsum_add_nm2(&p->sy2, n, a->y_mean);
    qr_dsacc_xsum_add(&p->m2x, a->x_m2);
    qr_dsacc_xsum_add(&p->m2y, a->y_m2);
    if (a->amax > p->amax) p->amax = a->amax;
    if (a->rtol > p->rtol) p->rtol = a->rtol;
    p->x_min = QR_MIN(p->x_min, a->x_min); p->x_max = QR_MAX(p->x_max, a->x_max);
    p->y_min = QR_MIN(p->y_min, a->y_min); p->y_max = QR_MAX(p->y_max, a->y_max);
}

static void qr_dsacc_pool_merge(QrDsPool *a, const QrDsPool *b) {
    a->n += b->n;
    a->n_bad += b->n_bad;
    a->n_samples += b->n_samples;
    QrXSum *da[] = { &a->sxx, &a->syy, &a->sxy, &a->sdd, &a->sad, &a->sx, &a->sy, &a->sx2, &a->sy2, &a->m2x, &a->m2y };
    const QrXSum *db[] = { &b->sxx, &b->syy, &b->sxy, &b->sdd, &b->sad, &b->sx, &b->sy, &b->sx2, &b->sy2, &b->m2x, &b->m2y };
    for (int k = 0; k < QR_ARRAY_LEN(da); k++) qr_dsacc_xsum_merge(da[k], db[k]);
    if (b->amax > a->amax) a->amax = b->amax;
    if (b->rtol > a->rtol) a->rtol = b->rtol;
    a->x_min = QR_MIN(a->x_min, b->x_min); a->x_max = QR_MAX(a->x_max, b->x_max);
    a->y_min = QR_MIN(a->y_min, b->y_min); a->y_max = QR_MAX(a->y_max, b->y_max);
}

/* Pooled log-sum-exp over the samples' (lse) and the weighted mean of e: order-independent
 * (maximum first, then exact sums). */
static void qr__dsa_pooled_lse(const QrDsList *l, const double *lse, const double *e, double *out_lse, double *out_mean_e) {
    double mx = -INFINITY;
    for (int k = 0; k < l->n; k++) if (l->has[k] && lse[k] > mx) mx = lse[k];
    QrXSum w = {0}, t = {0};
    for (int k = 0; k < l->n; k++) {
        if (!l->has[k] || !(lse[k] > -INFINITY)) continue;
        double wk = exp(lse[k] - mx);
        qr_dsacc_xsum_add(&w, wk);
        if (e) qr_dsacc_xsum_add(&t, wk * e[k]);
    }
    double W = (double)qr_dsacc_xsum_value(&w);
    *out_lse = mx + log(W);
    if (out_mean_e) *out_mean_e = (double)qr_dsacc_xsum_value(&t) / W;
}

static void qr_dsacc_pool_finish(const QrDsPool *p, const QrDsList *l, bool with_kl, bool with_rtol, QrMetrics *m) {
    memset(m, 0, sizeof *m);
    m->n = p->n;
    m->n_nonfinite = p->n_bad;
    if (!p->n) {
        m->cosine = m->mse = m->l1 = m->kl = m->sqnr = m->atol = m->rtol = NAN;
        m->x_min = m->x_max = m->x_mean = m->x_var = m->y_min = m->y_max = m->y_mean = m->y_var = NAN;
        return;
    }
    long double n = (long double)p->n;
    double sxx = (double)qr_dsacc_xsum_value(&p->sxx), syy = (double)qr_dsacc_xsum_value(&p->syy);
    double sxy = (double)qr_dsacc_xsum_value(&p->sxy), sdd = (double)qr_dsacc_xsum_value(&p->sdd);
    if (sxx == 0 && syy == 0) m->cosine = 1;
    else if (sxx == 0 || syy == 0) m->cosine = 0;
    else m->cosine = sxy / (sqrt(sxx) * sqrt(syy));
    m->mse = (double)(qr_dsacc_xsum_value(&p->sdd) / n);
    m->l1 = (double)(qr_dsacc_xsum_value(&p->sad) / n);
    m->atol = p->amax;
    m->rtol = with_rtol ? p->rtol : NAN;
    m->sqnr = sdd == 0 ? INFINITY : 10.0 * log10(sxx / sdd);
    m->kl = NAN;
    if (with_kl && l) {
        double lx, ly, ex;
        qr__dsa_pooled_lse(l, l->lse_x, l->kl_e, &lx, &ex);
        qr__dsa_pooled_lse(l, l->lse_y, NULL, &ly, NULL);
        m->kl = ex - lx + ly;
        if (m->kl < 0 && m->kl > -1e-12) m->kl = 0;
    }
    long double sx = qr_dsacc_xsum_value(&p->sx), sy = qr_dsacc_xsum_value(&p->sy);
    m->x_mean = (double)(sx / n);
    m->y_mean = (double)(sy / n);
    /* Σ(x - mean)² = Σ m2_s + Σ n_s·mean_s² - (Σ n_s·mean_s)² / N */
    long double vx = (qr_dsacc_xsum_value(&p->m2x) + qr_dsacc_xsum_value(&p->sx2) - sx * sx / n) / n;
    long double vy = (qr_dsacc_xsum_value(&p->m2y) + qr_dsacc_xsum_value(&p->sy2) - sy * sy / n) / n;
    m->x_var = vx > 0 ? (double)vx : 0;
    m->y_var = vy > 0 ? (double)vy : 0;
    m->x_min = p->x_min; m->x_max = p->x_max;
    m->y_min = p->y_min; m->y_max = p->y_max;
}

/* ==== per-sample lists =============================================================== */

static QrStatus qr_dsacc_list_alloc(QrDsList *l, int n) {
    memset(l, 0, sizeof *l);
    l->n = n;
    size_t c = (size_t)n + 1;
    l->cos = calloc(c, sizeof(double));
    l->sqnr = calloc(c, sizeof(double));
    l->lse_x = calloc(c, sizeof(double));
    l->lse_y = calloc(c, sizeof(double));
    l->kl_e = calloc(c, sizeof(double));
    l->has = calloc(c, 1);
    if (l->cos && l->sqnr && l->lse_x && l->lse_y && l->kl_e && l->has) return QR_OK;
    qr_dsacc_list_free(l);
    return qr_errf(QR_ERR_NOMEM, "out of memory");
}

static void qr_dsacc_list_free(QrDsList *l) {
    free(l->cos); free(l->sqnr); free(l->lse_x); free(l->lse_y); free(l->kl_e); free(l->has);
    memset(l, 0, sizeof *l);
}

static void qr_dsacc_list_set(QrDsList *l, int k, const QrMetricAcc *a, const QrMetrics *m) {
    l->has[k] = 1;
    l->cos[k] = m->cosine;
    l->sqnr[k] = m->sqnr;
    bool kl = !a->no_kl && a->n > 0 && a->kx_s > 0 && a->ky_s > 0;
    l->lse_x[k] = kl ? a->kx_max + log(a->kx_s) : -INFINITY;
    l->lse_y[k] = kl ? a->ky_max + log(a->ky_s) : -INFINITY;
    l->kl_e[k] = kl ? a->kx_t / a->kx_s : 0;
}

static QrStatus qr_dsacc_list_merge(QrDsList *a, const QrDsList *b, const char *const *names) {
    if (a->n != b->n) return qr_errf(QR_ERR_INVALID, "per-sample lists of %d and %d samples", a->n, b->n);
    for (int k = 0; k < b->n; k++) {
        if (!b->has[k]) continue;
        if (a->has[k]) return qr_errf(QR_ERR_INVALID, "sample %d ('%s') appears twice", k, names ? names[k] : "?");
        a->has[k] = 1;
        a->cos[k] = b->cos[k]; a->sqnr[k] = b->sqnr[k];
        a->lse_x[k] = b->lse_x[k]; a->lse_y[k] = b->lse_y[k]; a->kl_e[k] = b->kl_e[k];
    }
    return QR_OK;
}

static int qr__dsa_cmp(const void *pa, const void *pb) {
    double x = *(const double *)pa, y = *(const double *)pb;
    return (x > y) - (x < y);
}

static double qr_dsacc_percentile(const double *v, int n, double q) {
    if (n <= 0) return NAN;
    double r = q / 100.0 * (n - 1);
    int lo = (int)floor(r);
    if (lo >= n - 1) return v[n - 1];
    double f = r - lo;
    if (f == 0 || v[lo] == v[lo + 1]) return v[lo];
    if (isinf(v[lo])) return v[lo];          /* -inf below a finite value */
    if (isinf(v[lo + 1])) return v[lo + 1];  /* +inf above one */
    return v[lo] + (v[lo + 1] - v[lo]) * f;
}

static void qr_dsacc_col_stats(const double *v, const uint8_t *has, int n, QrDsColStats *o) {
    memset(o, 0, sizeof *o);
    o->worst = -1;
    o->mean = o->min = o->p05 = o->p50 = o->p95 = o->max = NAN;
    double *s = malloc(((size_t)n + 1) * sizeof *s);
    if (!s) return;
    double sum = 0, lo = INFINITY;
    int m = 0, first_nan = -1, first_lo = -1;
    for (int k = 0; k < n; k++) {
        if (has && !has[k]) continue;
        if (v[k] != v[k]) { if (o->n_nan++ == 0) first_nan = k; continue; }
        if (first_lo < 0 || v[k] < lo) { lo = v[k]; first_lo = k; }
        s[m++] = v[k];
        sum += v[k];
    }
    o->worst = first_nan >= 0 ? first_nan : first_lo;   /* NaN counts as worst */
    o->n = m;
    if (m) {
        qsort(s, (size_t)m, sizeof *s, qr__dsa_cmp);
        o->mean = sum / m;
        o->min = s[0];
        o->max = s[m - 1];
        o->p05 = qr_dsacc_percentile(s, m, 5);
        o->p50 = qr_dsacc_percentile(s, m, 50);
        o->p95 = qr_dsacc_percentile(s, m, 95);
    }
    free(s);
}
