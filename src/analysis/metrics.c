/* analysis/metrics — implementation. See metrics.h and docs/REPORT.md "Metric definitions". */

static void qr_metric_acc_init(QrMetricAcc *a) {
    memset(a, 0, sizeof *a);
    a->x_min = a->y_min = INFINITY;
    a->x_max = a->y_max = -INFINITY;
    a->kx_max = a->ky_max = -INFINITY;
}

static void qr_metric_acc_init_ex(QrMetricAcc *a, bool with_kl) {
    qr_metric_acc_init(a);
    a->no_kl = !with_kl;
}

static void qr_metric_acc_init_opts(QrMetricAcc *a, bool with_kl, bool with_rtol) {
    qr_metric_acc_init_ex(a, with_kl);
    a->no_rtol = !with_rtol;
}

/* s·e^(m_old) rescaled to a new maximum m_new. KL's exponentials are qr_f64_exp (kern/ref/f64_exp.c):
 * the same bits on every kernel level and architecture, and the kernels take 8 at a time. */
static inline double qr__mt_rescale(double s, double m_old, double m_new) {
    return m_old == -INFINITY ? 0 : s * qr_f64_exp(m_old - m_new);
}

/* Merges a chunk's count, means and m2 into the accumulator (Chan et al.). */
static void qr__mt_merge(QrMetricAcc *a, int64_t cn, double mx, double m2x, double my, double m2y) {
    double na = (double)a->n, nb = (double)cn, nt = na + nb;
    double dx = mx - a->x_mean, dy = my - a->y_mean;
    a->x_m2 += m2x + dx * dx * na * nb / nt;
    a->y_m2 += m2y + dy * dy * na * nb / nt;
    a->x_mean += dx * nb / nt;
    a->y_mean += dy * nb / nt;
    a->n += cn;
}

#ifdef QR_TESTING
/* Test-only, process-wide: the element pairs KL's softmax sums have taken (atomic). */
QR_TESTAPI int64_t qr_metric_kl_pairs;
#define QR__MT_KL_COUNT(n) __atomic_add_fetch(&qr_metric_kl_pairs, (int64_t)(n), __ATOMIC_RELAXED)
#else
#define QR__MT_KL_COUNT(n) ((void)0)
#endif

/* KL's online softmax sums over a chunk whose maxima are cmx, cmy (finite pairs only): the x side
 * (Σe^(x-m), Σe^(x-m)·(x-y)) and the y side (Σe^(y-m)), each sum in element order
 * (qr_kern.f32_kl_sides: the three sums are independent, so one pass adding all three gives the
 * bits of the two sides' passes, QrF32KlSideFn). */
static void qr__mt_kl_add(QrMetricAcc *a, const float *x, const float *y, int64_t n, double cmx, double cmy) {
    double nkx = QR_MAX(a->kx_max, cmx), nky = QR_MAX(a->ky_max, cmy);
    double ks = qr__mt_rescale(a->kx_s, a->kx_max, nkx), kt = qr__mt_rescale(a->kx_t, a->kx_max, nkx);
    double kys = qr__mt_rescale(a->ky_s, a->ky_max, nky);
    QR__MT_KL_COUNT(n);
    qr_kern_init();                            /* idempotent: callers need not have run a model */
    qr_kern.f32_kl_sides(x, y, n, nkx, nky, &ks, &kt, &kys);
    a->kx_max = nkx; a->kx_s = ks; a->kx_t = kt;
    a->ky_max = nky; a->ky_s = kys;
}

/* ==== KL and Rtol over the thread pool ============================================== */

/* Elements per round of the pooled pass (its scratch holds two rounds' two exp values per
 * element: 1 MiB) and per task. */
enum { QR__MT_ROUND = 32768, QR__MT_TASK = 4096 };

typedef struct QrMtParJob {
    const float *x, *y;        /* the chunk (every pair finite) */
    int64_t r0, m;             /* this job's round: elements [r0, r0 + m) (m = 0: none) */
    int64_t p0, pm;            /* the round before, whose KL sums task 0 adds (pm = 0: none) */
    double nkx, nky;           /* KL's maxima */
    double *ex[2], *ey[2];     /* per round parity, per element: exp(x - nkx), exp(y - nky) (NULL: no KL) */
    double *rt;                /* per exp task: the largest relative error of its elements (NULL: no Rtol) */
    double ks, kt, kys;        /* KL's running sums, carried by task 0 from job to job */
} QrMtParJob;

/* Task 0 when pm > 0: the KL sums of the round before, in element order, from the exp values
 * the last job computed (so they are added while this job's exp values are computed). Every
 * other task: its elements' Rtol maximum and KL's two exp per pair (qr_f64_exp of the arguments
 * qr__mt_kl_add's qr_kern.f32_kl_sides takes, so the same values). */
static void qr__mt_par_task(void *ctx, int64_t task, int tid) {
    QrMtParJob *j = ctx;
    QR_UNUSED(tid);
    if (j->pm > 0 && task-- == 0) {
        const int q = (int)(j->p0 / QR__MT_ROUND) & 1;
        const double *ex = j->ex[q], *ey = j->ey[q];
        const float *x = j->x + j->p0, *y = j->y + j->p0;
        double ks = j->ks, kt = j->kt, kys = j->kys;
        for (int64_t i = 0; i < j->pm; i++) {
            double xi = x[i], yi = y[i], e = ex[i];
            ks += e;
            kt += e * (xi - yi);
            kys += ey[i];
        }
        j->ks = ks; j->kt = kt; j->kys = kys;
        return;
    }
    int64_t i0 = task * QR__MT_TASK, i1 = QR_MIN(j->m, i0 + QR__MT_TASK);
    const float *x = j->x + j->r0, *y = j->y + j->r0;
    if (j->rt) j->rt[task] = qr_kern.f32_rtol(x + i0, y + i0, i1 - i0);
    if (!j->ex[0]) return;
    const int q = (int)(j->r0 / QR__MT_ROUND) & 1;
    qr_kern.f32_exp_sub(x + i0, j->nkx, j->ex[q] + i0, i1 - i0);
    qr_kern.f32_exp_sub(y + i0, j->nky, j->ey[q] + i0, i1 - i0);
}

/* qr__mt_par on 3 threads or more: job by job, the exp values and Rtol maxima of one round side by
 * side, and in the same job (task 0) the KL sums of the round before, added in element order. */
static bool qr__mt_par_rounds(QrMetricAcc *a, const float *x, const float *y, int64_t n, bool rt, bool kl, double cmx,
                       double cmy) {
    double *ex = NULL, rts[QR__MT_ROUND / QR__MT_TASK];
    if (kl && !(ex = malloc(4 * sizeof(double) * (size_t)QR__MT_ROUND))) return false;
    QrMtParJob j = { .x = x, .y = y, .nkx = QR_MAX(a->kx_max, cmx), .nky = QR_MAX(a->ky_max, cmy), .rt = rt ? rts : NULL };
    if (kl) {
        for (int q = 0; q < 2; q++) {
            j.ex[q] = ex + (2 * q) * QR__MT_ROUND;
            j.ey[q] = ex + (2 * q + 1) * QR__MT_ROUND;
        }
        j.ks = qr__mt_rescale(a->kx_s, a->kx_max, j.nkx);
        j.kt = qr__mt_rescale(a->kx_t, a->kx_max, j.nkx);
        j.kys = qr__mt_rescale(a->ky_s, a->ky_max, j.nky);
    }
    double rmax = 0;
    if (kl) QR__MT_KL_COUNT(n);
    for (int64_t r0 = 0;; r0 += QR__MT_ROUND) {
        j.p0 = j.r0;
        j.pm = kl ? j.m : 0;
        j.r0 = r0;
        j.m = r0 < n ? QR_MIN((int64_t)QR__MT_ROUND, n - r0) : 0;
        if (!j.m && !j.pm) break;
        int64_t nt = (j.m + QR__MT_TASK - 1) / QR__MT_TASK;
        qr_pool_for(nt + (j.pm > 0), qr__mt_par_task, &j);
        for (int64_t t = 0; rt && t < nt; t++) rmax = rts[t] > rmax ? rts[t] : rmax;
    }
    free(ex);
    if (rt && rmax > a->rtol) a->rtol = rmax;
    if (kl) {
        a->kx_max = j.nkx; a->kx_s = j.ks; a->kx_t = j.kt;
        a->ky_max = j.nky; a->ky_s = j.kys;
    }
    return true;
}

#ifdef QR_TESTING
/* Test-only, process-wide: the pooled passes qr__mt_par_sides ran (atomic). */
QR_TESTAPI int64_t qr__mt_side_passes;
#endif

typedef struct QrMtSideJob {
    const float *x, *y;        /* the chunk (every pair finite) */
    int64_t n;
    int n_kl;                  /* 1: task 0 is KL's two sides; 0: no KL */
    double nkx, nky;           /* KL's maxima */
    double ks, kt, kys;        /* KL's sums: the rescaled ones in, the chunk's added out */
    double *rt;                /* per Rtol task: the largest relative error of its elements (NULL: no Rtol) */
} QrMtSideJob;

/* Task 0 (with KL): both of KL's sides over the whole chunk (qr__mt_kl_add's call, the same
 * arguments, so the same bits); every other task: the Rtol maximum of QR__MT_ROUND elements. */
static void qr__mt_side_task(void *ctx, int64_t task, int tid) {
    QrMtSideJob *j = ctx;
    QR_UNUSED(tid);
    if (task < j->n_kl) {
        qr_kern.f32_kl_sides(j->x, j->y, j->n, j->nkx, j->nky, &j->ks, &j->kt, &j->kys);
        return;
    }
    task -= j->n_kl;
    int64_t i0 = task * QR__MT_ROUND, m = QR_MIN((int64_t)QR__MT_ROUND, j->n - i0);
    j->rt[task] = qr_kern.f32_rtol(j->x + i0, j->y + i0, m);
}

/* qr__mt_par on 2 threads: KL's sums in one sequential pass (qr_kern.f32_kl_sides: both sides'
 * exponentials and the three chains of additions side by side), and the Rtol tasks beside it on
 * whichever thread is free. A side per thread, as it was, took both threads for a side's time; the
 * one pass costs about 20% less CPU than the two (MobileNetV2's runall --data 16: 468 -> 372 ms) and
 * left ResNet-18's and MobileNetV2's one-input runs as fast. The rounds' sums are one serial chain
 * per element after two exponentials computed elsewhere; here the pass does its own. */
static bool qr__mt_par_sides(QrMetricAcc *a, const float *x, const float *y, int64_t n, bool rt, bool kl, double cmx,
                             double cmy) {
    const int64_t nr = rt ? (n + QR__MT_ROUND - 1) / QR__MT_ROUND : 0;
    double *rts = nr ? malloc((size_t)nr * sizeof *rts) : NULL;
    if (nr && !rts) return false;
    QrMtSideJob j = { .x = x, .y = y, .n = n, .n_kl = kl ? 1 : 0, .rt = rts };
    if (kl) {
        j.nkx = QR_MAX(a->kx_max, cmx);
        j.nky = QR_MAX(a->ky_max, cmy);
        j.ks = qr__mt_rescale(a->kx_s, a->kx_max, j.nkx);
        j.kt = qr__mt_rescale(a->kx_t, a->kx_max, j.nkx);
        j.kys = qr__mt_rescale(a->ky_s, a->ky_max, j.nky);
        QR__MT_KL_COUNT(n);
    }
#ifdef QR_TESTING
    __atomic_add_fetch(&qr__mt_side_passes, 1, __ATOMIC_RELAXED);
#endif
    qr_pool_for(j.n_kl + nr, qr__mt_side_task, &j);
    double rmax = 0;
    for (int64_t t = 0; t < nr; t++) rmax = rts[t] > rmax ? rts[t] : rmax;
    free(rts);
    if (rt && rmax > a->rtol) a->rtol = rmax;
    if (kl) {
        a->kx_max = j.nkx; a->kx_s = j.ks; a->kx_t = j.kt;
        a->ky_max = j.nky; a->ky_s = j.kys;
    }
    return true;
}

/* Rtol (when rt) and KL's sums (when kl) of a chunk of at least QR_STATS_PAR_MIN elements whose
 * pairs are all finite (qr__mt_add_fast checked), on the pool (2 threads: qr__mt_par_sides, more:
 * qr__mt_par_rounds). The bits of qr_kern.f32_rtol (a maximum: the same over any split) and of
 * qr__mt_kl_add. false (nothing done) when the scratch cannot be had. */
static bool qr__mt_par(QrMetricAcc *a, const float *x, const float *y, int64_t n, bool rt, bool kl, double cmx,
                       double cmy) {
    qr_kern_init();
    if (qr_pool_threads() == 2) return qr__mt_par_sides(a, x, y, n, rt, kl, cmx, cmy);
    return qr__mt_par_rounds(a, x, y, n, rt, kl, cmx, cmy);
}

/* An all-finite chunk's pair statistics into the accumulator (the sums, extremes and moments). */
static void qr__mt_add_ps(QrMetricAcc *a, const QrF32PairStats *ps) {
    a->sxx += ps->sxx;
    a->syy += ps->syy;
    a->sxy += ps->sxy;
    a->sdd += ps->sdd;
    a->sad += ps->sad;
    if (ps->maxad > a->amax) a->amax = ps->maxad;
    a->x_min = QR_MIN(a->x_min, ps->x.min); a->x_max = QR_MAX(a->x_max, ps->x.max);
    a->y_min = QR_MIN(a->y_min, ps->y.min); a->y_max = QR_MAX(a->y_max, ps->y.max);
    qr__mt_merge(a, ps->n, ps->x.mean, ps->x.m2, ps->y.mean, ps->y.m2);
}

/* All-finite chunks: the sums and moments from the SIMD pair-statistics kernel, then one
 * light pass for the largest relative error (and KL's pass when wanted). false when the
 * chunk holds NaN/Inf (the scalar path below handles those). */
static bool qr__mt_add_fast(QrMetricAcc *a, const float *x, const float *y, int64_t n) {
    QrF32PairStats ps;
    qr_f32_pair_stats_init(&ps);
    qr_stats_pair(x, y, n, &ps);               /* side by side above QR_STATS_PAR_MIN elements, same bits */
    if (ps.n != n || ps.x.n != n || ps.y.n != n) return false;
    qr__mt_add_ps(a, &ps);
    if ((!a->no_rtol || !a->no_kl) && n >= QR_STATS_PAR_MIN && qr_pool_threads() > 1 &&
        qr__mt_par(a, x, y, n, !a->no_rtol, !a->no_kl, ps.x.max, ps.y.max))
        return true;
    if (!a->no_rtol) {
        double rt = qr_kern.f32_rtol(x, y, n);
        if (rt > a->rtol) a->rtol = rt;
    }
    if (!a->no_kl) qr__mt_kl_add(a, x, y, n, ps.x.max, ps.y.max);
    return true;
}

static void qr_metric_stream_init(QrMetricStream *st) {
    qr_f32_pair_stats_init(&st->ps);
    st->n = 0;
    qr_kern_init();
}

static void qr_metric_stream_add(QrMetricStream *st, const float *x, const float *y, int64_t n) {
    if (n <= 0) return;
    qr_kern.f32_pair_stats(x, y, n, &st->ps);   /* merges block by block into st->ps, as one call would */
    st->n += n;
}

static bool qr_metric_stream_finish(const QrMetricStream *st, QrMetrics *m) {
    const QrF32PairStats *ps = &st->ps;
    if (st->n <= 0 || ps->n != st->n || ps->x.n != st->n || ps->y.n != st->n) return false;
    QrMetricAcc a;
    qr_metric_acc_init_opts(&a, false, false);
    qr__mt_add_ps(&a, ps);
    qr_metric_acc_finish(&a, m);
    return true;
}

static void qr_metric_acc_add(QrMetricAcc *a, const float *x, const float *y, int64_t n) {
    if (n > 0 && qr__mt_add_fast(a, x, y, n)) return;
    /* Chunk moments first (two passes over the chunk), then merged. */
    double sx = 0, sy = 0, cmx = -INFINITY, cmy = -INFINITY;
    int64_t cn = 0;
    for (int64_t i = 0; i < n; i++) {
        double xi = x[i], yi = y[i];
        if (!isfinite(xi) || !isfinite(yi)) { a->n_bad++; continue; }
        cn++;
        sx += xi;
        sy += yi;
        double d = xi - yi, ad = fabs(d);
        a->sxx += xi * xi;
        a->syy += yi * yi;
        a->sxy += xi * yi;
        a->sdd += d * d;
        a->sad += ad;
        if (ad > a->amax) a->amax = ad;
        double r = xi == 0 ? (yi == 0 ? 0 : FLT_MAX) : ad / fabs(xi);
        if (r > a->rtol) a->rtol = r;
        if (xi < a->x_min) a->x_min = xi;
        if (xi > a->x_max) a->x_max = xi;
        if (yi < a->y_min) a->y_min = yi;
        if (yi > a->y_max) a->y_max = yi;
        if (xi > cmx) cmx = xi;
        if (yi > cmy) cmy = yi;
    }
    if (!cn) return;
    double mx = sx / (double)cn, my = sy / (double)cn, m2x = 0, m2y = 0;
    for (int64_t i = 0; i < n; i++) {
        double xi = x[i], yi = y[i];
        if (!isfinite(xi) || !isfinite(yi)) continue;
        m2x += (xi - mx) * (xi - mx);
        m2y += (yi - my) * (yi - my);
    }
    if (!a->no_kl) qr__mt_kl_add(a, x, y, n, cmx, cmy);
    qr__mt_merge(a, cn, mx, m2x, my, m2y);
}

static void qr_metric_acc_finish(const QrMetricAcc *a, QrMetrics *m) {
    memset(m, 0, sizeof *m);
    m->kld = NAN;
    m->n = a->n;
    m->n_nonfinite = a->n_bad;
    if (!a->n) {
        m->cosine = m->mse = m->l1 = m->kl = m->sqnr = m->atol = m->rtol = NAN;
        m->x_min = m->x_max = m->x_mean = m->x_var = m->y_min = m->y_max = m->y_mean = m->y_var = NAN;
        return;
    }
    double n = (double)a->n;
    if (a->sxx == 0 && a->syy == 0) m->cosine = 1;
    else if (a->sxx == 0 || a->syy == 0) m->cosine = 0;
    else m->cosine = a->sxy / (sqrt(a->sxx) * sqrt(a->syy));
    m->mse = a->sdd / n;
    m->l1 = a->sad / n;
    m->atol = a->amax;
    m->rtol = a->no_rtol ? NAN : a->rtol;
    m->sqnr = a->sdd == 0 ? INFINITY : 10.0 * log10(a->sxx / a->sdd);
    /* KL(p||q) = Σp(x-y) - LSE(x) + LSE(y), p = softmax(x), q = softmax(y). */
    double lse_x = a->kx_max + log(a->kx_s), lse_y = a->ky_max + log(a->ky_s);
    m->kl = a->no_kl ? NAN : a->kx_t / a->kx_s - lse_x + lse_y;
    if (m->kl < 0 && m->kl > -1e-12) m->kl = 0;
    m->x_min = a->x_min; m->x_max = a->x_max; m->x_mean = a->x_mean; m->x_var = a->x_m2 / n;
    m->y_min = a->y_min; m->y_max = a->y_max; m->y_mean = a->y_mean; m->y_var = a->y_m2 / n;
}


static void qr_metrics_compute_opts(const float *x, const float *y, int64_t n, bool with_kl, bool with_rtol, QrMetrics *m) {
    QrMetricAcc a;
    qr_metric_acc_init_opts(&a, with_kl, with_rtol);
    qr_metric_acc_add(&a, x, y, n);
    qr_metric_acc_finish(&a, m);
}

static void qr_metrics_compute_ex(const float *x, const float *y, int64_t n, bool with_kl, QrMetrics *m) {
    QrMetricAcc a;
    qr_metric_acc_init_ex(&a, with_kl);
    qr_metric_acc_add(&a, x, y, n);
    qr_metric_acc_finish(&a, m);
}

static void qr_metrics_compute(const float *x, const float *y, int64_t n, QrMetrics *m) {
    qr_metrics_compute_ex(x, y, n, true, m);
}

static const char *const qr__mt_names[QR_METRIC_COUNT] = { "L1", "Cosine", "MSE", "KL", "SQNR", "KLD" };

static const char *qr_metric_name(QrMetricKind k) { return k < QR_METRIC_COUNT ? qr__mt_names[k] : "?"; }

static double qr_metric_get(const QrMetrics *m, QrMetricKind k) {
    switch (k) {
    case QR_METRIC_L1: return m->l1;
    case QR_METRIC_COSINE: return m->cosine;
    case QR_METRIC_MSE: return m->mse;
    case QR_METRIC_KL: return m->kl;
    case QR_METRIC_SQNR: return m->sqnr;
    case QR_METRIC_KLD: return m->kld;
    default: return NAN;
    }
}

static QrStatus qr_metric_parse(const char *s, QrMetricKind *out) {
    for (int k = 0; k < QR_METRIC_COUNT; k++)
        if (!strcasecmp(s, qr__mt_names[k])) { *out = (QrMetricKind)k; return QR_OK; }
    /* hmct-debugger's spellings (its metrics='cosine-similarity', 'mse', ...) */
    static const struct { const char *alias; QrMetricKind k; } aliases[] = {
        { "cosine-similarity", QR_METRIC_COSINE }, { "cosine_similarity", QR_METRIC_COSINE }, { "cos", QR_METRIC_COSINE },
        { "l1-distance", QR_METRIC_L1 }, { "l1_distance", QR_METRIC_L1 }, { "kl-divergence", QR_METRIC_KL },
        { "kl_divergence", QR_METRIC_KL }, { "mean-squared-error", QR_METRIC_MSE },
    };
    for (int k = 0; k < QR_ARRAY_LEN(aliases); k++)
        if (!strcasecmp(s, aliases[k].alias)) { *out = aliases[k].k; return QR_OK; }
    return qr_errf(QR_ERR_INVALID, "unknown metric '%s' (expected L1, Cosine, MSE, KL, SQNR or KLD; hmct's cosine-similarity, "
                   "mse, sqnr, kl-divergence are accepted too)", s);
}

static bool qr_metric_is_logits(const char *name, const QrTensor *t) {
    if (!t || t->rank < 2 || t->dims[t->rank - 1] < 2) return false;
    return t->rank == 3 || (name && !strcmp(name, "logits"));
}

static double qr_metric_token_kl(const float *x, const float *y, int64_t V) {
    double mx = -INFINITY, my = -INFINITY;
    for (int64_t i = 0; i < V; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) return NAN;
        if (x[i] > mx) mx = x[i];
        if (y[i] > my) my = y[i];
    }
    double sx = 0, sy = 0;
    for (int64_t i = 0; i < V; i++) { sx += exp((double)x[i] - mx); sy += exp((double)y[i] - my); }
    double lx = mx + log(sx), ly = my + log(sy), kl = 0;
    for (int64_t i = 0; i < V; i++) {
        double gx = (double)x[i] - lx, gy = (double)y[i] - ly;
        kl += exp(gx) * (gx - gy);
    }
    return kl < 0 ? 0 : kl;                  /* rounding of two equal distributions */
}

static bool qr_metric_higher_is_better(QrMetricKind k) { return k == QR_METRIC_COSINE || k == QR_METRIC_SQNR; }

static double qr_metric_badness(const QrMetrics *m, QrMetricKind k) {
    double v = qr_metric_get(m, k);
    if (v != v) return INFINITY;
    return qr_metric_higher_is_better(k) ? -v : v;
}
