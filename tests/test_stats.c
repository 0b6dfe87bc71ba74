/* tests/test_stats — analysis/stats and analysis/metrics computed side by side on the thread pool
 * (qr_stats_pair, the pooled KL / Rtol pass of qr_metric_acc_add, qr_stats_inits' task per
 * initializer) give the bits of the serial code at 1, 2 and 3 threads: sizes below and above
 * QR_STATS_PAR_MIN, partial last blocks and rounds, non-finite values; KL's sums the bits of
 * their plain definition. */

/* x ~ N(0, s) with s changing every 1000 elements (so that blocks differ in mean and spread and
 * their merge order shows in the last bits), y = x + noise; bad: NaN / +-Inf sprinkled in x and
 * y and one whole block of NaN in x. */
static void qt_st_fill(float *x, float *y, int64_t n, uint64_t seed, bool bad) {
    uint64_t rng = seed;
    for (int64_t i = 0; i < n; i++) {
        double s = 0.05 + (double)((i / 1000) % 7) * 1.3;
        x[i] = (float)(s * qr_rng_normal(&rng) + (double)((i / 3000) % 5) - 2);
        y[i] = x[i] + (float)(0.02 * s * qr_rng_normal(&rng));
    }
    if (!bad) return;
    for (int64_t i = 17; i < n; i += 40013) x[i] = NAN;
    for (int64_t i = 5001; i < n; i += 70001) y[i] = INFINITY;
    for (int64_t i = 9000; i < n; i += 90001) x[i] = -INFINITY;
    for (int64_t i = 2 * QR_KERN_STATS_BLOCK; i < QR_MIN(n, 3 * QR_KERN_STATS_BLOCK); i++) x[i] = NAN;
}

static const int64_t qt_st_sizes[] = {
    QR_STATS_PAR_MIN - 1,                               /* below the threshold: the one call */
    QR_STATS_PAR_MIN,                                   /* the smallest pooled size */
    QR_STATS_PAR_MIN + 3 * QR_KERN_STATS_BLOCK + 777,   /* a partial last block and task */
    300 * QR_KERN_STATS_BLOCK + 1001,                   /* several rounds, a partial last one */
};

/* qr_stats_pair (and qr_stats_tensor over it) against the kernel's one call, with and without y. */
static void test_stats_pair_threads(void) {
    const int64_t nmax = qt_st_sizes[QR_ARRAY_LEN(qt_st_sizes) - 1];
    float *x = malloc((size_t)nmax * sizeof *x), *y = malloc((size_t)nmax * sizeof *y);
    QT_CHECK(x && y);
    const int saved = qr_pool_threads();
    char bad[300] = "";
    int64_t pooled_tasks = 0;
    for (int b = 0; b < 2 && !bad[0]; b++)
        for (int k = 0; k < QR_ARRAY_LEN(qt_st_sizes) && !bad[0]; k++) {
            int64_t n = qt_st_sizes[k];
            qt_st_fill(x, y, n, 7 + (uint64_t)k, b);
            for (int withy = 0; withy < 2 && !bad[0]; withy++) {
                QrF32PairStats want, got;
                qr_f32_pair_stats_init(&want);
                qr_kern.f32_pair_stats(x, withy ? y : NULL, n, &want);
                for (int threads = 1; threads <= 3 && !bad[0]; threads++) {
                    qr_pool_init(threads);
                    int64_t t0 = qr__stats_par_tasks;
                    qr_f32_pair_stats_init(&got);
                    qr_stats_pair(x, withy ? y : NULL, n, &got);
                    int64_t ran = qr__stats_par_tasks - t0;
                    pooled_tasks += ran;
                    if (memcmp(&want, &got, sizeof want))
                        snprintf(bad, sizeof bad, "n %lld (%s, %s) at %d threads: the pooled pair statistics differ "
                                 "(sdd %.17g vs %.17g, x.m2 %.17g vs %.17g)", (long long)n, b ? "non-finite" : "finite",
                                 withy ? "pair" : "x only", threads, want.sdd, got.sdd, want.x.m2, got.x.m2);
                    else if ((ran > 0) != (threads > 1 && n >= QR_STATS_PAR_MIN))
                        snprintf(bad, sizeof bad, "n %lld at %d threads: %lld pooled tasks (expected %s)", (long long)n,
                                 threads, (long long)ran, threads > 1 && n >= QR_STATS_PAR_MIN ? "some" : "none");
                }
            }
        }
    qr_pool_init(saved);
    free(x);
    free(y);
    QT_CHECKF(!bad[0], "%s", bad);
    QT_CHECK(pooled_tasks > 0);
}

/* The metrics (every field, KL and Rtol chosen or not) of one chunk and of two chunks accumulated
 * (KL's rescale to a new maximum) at 2 and 3 threads against 1 thread (the serial code). */
static void qt_st_metrics(const float *x, const float *y, int64_t n, int opts, QrMetrics *one, QrMetrics *two) {
    bool kl = opts & 1, rt = opts & 2;
    qr_metrics_compute_opts(x, y, n, kl, rt, one);
    QrMetricAcc a;
    qr_metric_acc_init_opts(&a, kl, rt);
    int64_t h = n / 3;
    qr_metric_acc_add(&a, x, y, h);
    qr_metric_acc_add(&a, x + h, y + h, n - h);
    qr_metric_acc_finish(&a, two);
}

static void test_stats_metrics_threads(void) {
    const int64_t nmax = qt_st_sizes[QR_ARRAY_LEN(qt_st_sizes) - 1];
    float *x = malloc((size_t)nmax * sizeof *x), *y = malloc((size_t)nmax * sizeof *y);
    QT_CHECK(x && y);
    const int saved = qr_pool_threads();
    char bad[300] = "";
    for (int b = 0; b < 2 && !bad[0]; b++)
        for (int k = 0; k < QR_ARRAY_LEN(qt_st_sizes) && !bad[0]; k++) {
            int64_t n = qt_st_sizes[k];
            qt_st_fill(x, y, n, 100 + (uint64_t)k, b);
            if (!b) {
                for (int64_t i = n / 2; i < n; i++) x[i] += 4;   /* the second chunk raises KL's maximum */
                x[n - 3] = 1e-30f;                              /* Rtol's largest in the last (partial) task */
            }
            for (int opts = 0; opts < 4 && !bad[0]; opts++) {
                QrMetrics want1, want2, got1, got2;
                qr_pool_init(1);
                qt_st_metrics(x, y, n, opts, &want1, &want2);
                for (int threads = 2; threads <= 3 && !bad[0]; threads++) {
                    qr_pool_init(threads);
                    qt_st_metrics(x, y, n, opts, &got1, &got2);
                    if (memcmp(&want1, &got1, sizeof want1) || memcmp(&want2, &got2, sizeof want2))
                    {
                        bool c1 = memcmp(&want1, &got1, sizeof want1) != 0;
                        const QrMetrics *w = c1 ? &want1 : &want2, *g = c1 ? &got1 : &got2;
                        snprintf(bad, sizeof bad, "n %lld (%s, KL %d, Rtol %d, %s) at %d threads: the metrics differ from 1 "
                                 "thread's (KL %.17g vs %.17g, Rtol %.17g vs %.17g, MSE %.17g vs %.17g)", (long long)n,
                                 b ? "non-finite" : "finite", opts & 1, opts >> 1, c1 ? "one chunk" : "two chunks", threads,
                                 w->kl, g->kl, w->rtol, g->rtol, w->mse, g->mse);
                    }
                }
                if (!b && opts == 3 && !(want1.kl > 0 && want1.rtol > 0 && want1.n == n))
                    snprintf(bad, sizeof bad, "n %lld: KL %g, Rtol %g over %lld pairs: not a real case", (long long)n,
                             want1.kl, want1.rtol, (long long)want1.n);
            }
        }
    qr_pool_init(saved);
    free(x);
    free(y);
    QT_CHECKF(!bad[0], "%s", bad);
}

/* The definition of KL's sums in QrMetricAcc, one plain loop over the chunk's finite pairs (both
 * exponentials and all three sums per pair, in element order), for test_stats_kl_fields. */
static void qt_st_kl_plain(QrMetricAcc *a, const float *x, const float *y, int64_t n) {
    double cmx = -INFINITY, cmy = -INFINITY;
    int64_t cn = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        cn++;
        cmx = QR_MAX(cmx, (double)x[i]);
        cmy = QR_MAX(cmy, (double)y[i]);
    }
    if (!cn) return;
    double nkx = QR_MAX(a->kx_max, cmx), nky = QR_MAX(a->ky_max, cmy);
    double rx = a->kx_max == -INFINITY ? 0 : qr_f64_exp(a->kx_max - nkx);
    double ks = a->kx_max == -INFINITY ? 0 : a->kx_s * rx, kt = a->kx_max == -INFINITY ? 0 : a->kx_t * rx;
    double kys = a->ky_max == -INFINITY ? 0 : a->ky_s * qr_f64_exp(a->ky_max - nky);
    for (int64_t i = 0; i < n; i++) {
        double xi = x[i], yi = y[i];
        if (!isfinite(xi) || !isfinite(yi)) continue;
        double ex = qr_f64_exp(xi - nkx), ey = qr_f64_exp(yi - nky), p = ex * (xi - yi);
        QR_KERN_ROUNDED(p);
        ks += ex;
        kt += p;
        kys += ey;
    }
    a->kx_max = nkx; a->kx_s = ks; a->kx_t = kt;
    a->ky_max = nky; a->ky_s = kys;
}

/* Every field of two accumulators bit for bit; the first that differs into why. */
static bool qt_st_acc_same(const QrMetricAcc *a, const QrMetricAcc *b, char *why, size_t nwhy) {
    const struct { const char *name; double u, v; } f[] = {
        { "sxx", a->sxx, b->sxx }, { "syy", a->syy, b->syy }, { "sxy", a->sxy, b->sxy }, { "sdd", a->sdd, b->sdd },
        { "sad", a->sad, b->sad }, { "amax", a->amax, b->amax }, { "rtol", a->rtol, b->rtol },
        { "x_min", a->x_min, b->x_min }, { "x_max", a->x_max, b->x_max }, { "y_min", a->y_min, b->y_min },
        { "y_max", a->y_max, b->y_max }, { "x_mean", a->x_mean, b->x_mean }, { "x_m2", a->x_m2, b->x_m2 },
        { "y_mean", a->y_mean, b->y_mean }, { "y_m2", a->y_m2, b->y_m2 }, { "kx_max", a->kx_max, b->kx_max },
        { "kx_s", a->kx_s, b->kx_s }, { "kx_t", a->kx_t, b->kx_t }, { "ky_max", a->ky_max, b->ky_max },
        { "ky_s", a->ky_s, b->ky_s },
    };
    for (int k = 0; k < QR_ARRAY_LEN(f); k++)
        if (memcmp(&f[k].u, &f[k].v, sizeof(double))) {
            snprintf(why, nwhy, "%s %.17g vs %.17g", f[k].name, f[k].u, f[k].v);
            return false;
        }
    if (a->n != b->n || a->n_bad != b->n_bad || a->no_kl != b->no_kl || a->no_rtol != b->no_rtol) {
        snprintf(why, nwhy, "n %lld/%lld n_bad %lld/%lld flags %d%d/%d%d", (long long)a->n, (long long)b->n,
                 (long long)a->n_bad, (long long)b->n_bad, a->no_kl, a->no_rtol, b->no_kl, b->no_rtol);
        return false;
    }
    return true;
}

/* QrMetricAcc's KL sums (qr_kern.f32_kl_sides, both sides in one pass; on 2 threads beside the Rtol tasks) give
 * every field the bits of the plain definition (qt_st_kl_plain over the serial code's other
 * fields) at 1, 2 and 3 threads: one chunk and chunks accumulated (the second raising KL's maxima),
 * sizes below and above QR_STATS_PAR_MIN, with and without Rtol, finite chunks and chunks with NaN
 * / Inf (the scalar path). The pooled two-side pass runs exactly for a finite chunk of
 * QR_STATS_PAR_MIN pairs or more at 2 threads. */
static void test_stats_kl_fields(void) {
    const int64_t nmax = qt_st_sizes[QR_ARRAY_LEN(qt_st_sizes) - 1];
    float *x = malloc((size_t)nmax * sizeof *x), *y = malloc((size_t)nmax * sizeof *y);
    QT_CHECK(x && y);
    const int saved = qr_pool_threads();
    char bad[400] = "", why[160];
    int64_t sides = 0;
    for (int b = 0; b < 2 && !bad[0]; b++)
        for (int k = 0; k < QR_ARRAY_LEN(qt_st_sizes) && !bad[0]; k++) {
            const int64_t n = qt_st_sizes[k];
            qt_st_fill(x, y, n, 300 + (uint64_t)k, b);
            for (int64_t i = n / 2; i < n; i++) x[i] += 4;   /* a later chunk raises KL's maxima */
            /* chunks: one; three (the first third, then the rest in two) */
            const int64_t cuts[2][4] = { { 0, n, n, n }, { 0, n / 3, n / 3 + (n - n / 3) / 2, n } };
            for (int c = 0; c < 2 && !bad[0]; c++)
                for (int rt = 0; rt < 2 && !bad[0]; rt++) {
                    QrMetricAcc want;
                    qr_pool_init(1);
                    qr_metric_acc_init_opts(&want, false, rt);
                    for (int p = 0; p < 3; p++) {
                        QrMetricAcc w0 = want;
                        qr_metric_acc_add(&want, x + cuts[c][p], y + cuts[c][p], cuts[c][p + 1] - cuts[c][p]);
                        QrMetricAcc kl = w0;   /* KL's fields from the definition, on the state before the chunk */
                        qt_st_kl_plain(&kl, x + cuts[c][p], y + cuts[c][p], cuts[c][p + 1] - cuts[c][p]);
                        want.kx_max = kl.kx_max; want.kx_s = kl.kx_s; want.kx_t = kl.kx_t;
                        want.ky_max = kl.ky_max; want.ky_s = kl.ky_s;
                    }
                    want.no_kl = false;
                    for (int threads = 1; threads <= 3 && !bad[0]; threads++) {
                        qr_pool_init(threads);
                        QrMetricAcc got;
                        qr_metric_acc_init_opts(&got, true, rt);
                        int64_t s0 = qr__mt_side_passes, expect = 0;
                        for (int p = 0; p < 3; p++) {
                            int64_t m = cuts[c][p + 1] - cuts[c][p];
                            bool finite = true;
                            for (int64_t i = cuts[c][p]; i < cuts[c][p + 1] && finite; i++) finite = isfinite(x[i]) && isfinite(y[i]);
                            expect += threads == 2 && m >= QR_STATS_PAR_MIN && finite;
                            qr_metric_acc_add(&got, x + cuts[c][p], y + cuts[c][p], m);
                        }
                        sides += qr__mt_side_passes - s0;
                        if (!qt_st_acc_same(&want, &got, why, sizeof why))
                            snprintf(bad, sizeof bad, "n %lld (%s, %s, Rtol %d) at %d threads: %s", (long long)n,
                                     b ? "non-finite" : "finite", c ? "three chunks" : "one chunk", rt, threads, why);
                        else if (qr__mt_side_passes - s0 != expect)
                            snprintf(bad, sizeof bad, "n %lld (%s, %s) at %d threads: %lld two-side passes, want %lld",
                                     (long long)n, b ? "non-finite" : "finite", c ? "three chunks" : "one chunk", threads,
                                     (long long)(qr__mt_side_passes - s0), (long long)expect);
                    }
                    if (!bad[0] && !b && !(want.kx_s > 0 && want.kx_t != 0 && want.ky_s > 0 && want.n == n))
                        snprintf(bad, sizeof bad, "n %lld: KL sums %g %g %g over %lld pairs: not a real case", (long long)n,
                                 want.kx_s, want.kx_t, want.ky_s, (long long)want.n);
                }
        }
    qr_pool_init(saved);
    free(x);
    free(y);
    QT_CHECKF(!bad[0], "%s", bad);
    QT_CHECK(sides > 0);
}

/* qr_stats_inits: the initializers' statistics, one pool task each, give every value the bits of
 * its own qr_stats_tensor at 1, 2 and 3 threads (f32 ones large and small, with NaN / Inf, int8,
 * uint8 and f64 ones); seen marks exactly the initializers not seen before. */
static void test_stats_inits_threads(void) {
    enum { NV = 12 };
    static const QrDType dts[NV] = { QR_DT_F32, QR_DT_S8, QR_DT_F32, QR_DT_U8, QR_DT_F64, QR_DT_F32,
                                     QR_DT_F32, QR_DT_S8, QR_DT_F32, QR_DT_F32, QR_DT_U8, QR_DT_F32 };
    static const int64_t sizes[NV] = { 70000, 300000, 5, 4097, 9000, 131072 + 333, 1, 12, 4096, 200000, 0, 77 };
    QrValue vals[NV];
    memset(vals, 0, sizeof vals);
    QrGraph g;
    memset(&g, 0, sizeof g);
    g.values = vals;
    g.n_values = NV;
    QrStatus st = QR_OK;
    uint64_t rng = 3;
    for (int v = 0; v < NV && st == QR_OK; v++) {
        vals[v].is_init = v != 6;                      /* one value is not an initializer */
        int64_t d = sizes[v];
        st = qr_tensor_set_shape(&vals[v].t, dts[v], 1, &d);
        if (st == QR_OK) st = qr_tensor_alloc_data(&vals[v].t);
        for (int64_t i = 0; st == QR_OK && i < d; i++) {
            double r = (1 + v % 3) * qr_rng_normal(&rng) + v;
            if (dts[v] == QR_DT_F32) ((float *)vals[v].t.data)[i] = i % 50021 == 7 ? NAN : i % 70001 == 9 ? -INFINITY : (float)r;
            else if (dts[v] == QR_DT_F64) ((double *)vals[v].t.data)[i] = r;
            else if (dts[v] == QR_DT_S8) ((int8_t *)vals[v].t.data)[i] = (int8_t)(qr_rng_next(&rng) & 0xff);
            else ((uint8_t *)vals[v].t.data)[i] = (uint8_t)(qr_rng_next(&rng) & 0xff);
        }
    }
    QrStats want[NV], got[NV];
    bool seen[NV];
    for (int v = 0; v < NV; v++) {
        qr_stats_init(&want[v]);
        if (st == QR_OK && vals[v].is_init && v != 9) qr_stats_tensor(&want[v], &vals[v].t);
    }
    const int saved = qr_pool_threads();
    char bad[200] = "";
    for (int threads = 1; threads <= 3 && st == QR_OK && !bad[0]; threads++) {
        qr_pool_init(threads);
        memset(seen, 0, sizeof seen);
        memset(got, 0xa5, sizeof got);                 /* an entry it should not touch keeps this */
        seen[9] = true;                                /* seen before: left alone */
        QrStats keep = got[9];
        qr_stats_inits(&g, got, seen);
        for (int v = 0; v < NV && !bad[0]; v++) {
            bool want_seen = vals[v].is_init;
            if (seen[v] != want_seen) snprintf(bad, sizeof bad, "value %d at %d threads: seen %d", v, threads, seen[v]);
            else if (v == 9 ? memcmp(&got[v], &keep, sizeof keep) : vals[v].is_init && memcmp(&got[v], &want[v], sizeof want[v]))
                snprintf(bad, sizeof bad, "value %d at %d threads: statistics differ from qr_stats_tensor's (mean %.17g vs %.17g)",
                         v, threads, got[v].mean, want[v].mean);
        }
    }
    qr_pool_init(saved);
    for (int v = 0; v < NV; v++) qr_tensor_free_data(&vals[v].t);
    QT_OK(st);
    QT_CHECKF(!bad[0], "%s", bad);
}

/* 8-bit tensors' statistics (qr__stats_bytes per 4096-value block, merged): min, max and mean
 * exact, m2 within a correctly rounded half ulp of the exact Σ(v − mean)² for one block (long
 * double), and within 1e-14 relative over several merged blocks. */
static void test_stats_bytes(void) {
    uint64_t rng = 91;
    static const int64_t ns[] = { 1, 2, 7, 64, 4095, 4096, 4097, 12289, 100000 };
    int bad = 0;
    char msg[300] = "";
    for (int sg = 0; sg < 2; sg++)
        for (int ni = 0; ni < QR_ARRAY_LEN(ns); ni++)
            for (int shape = 0; shape < 3; shape++) {
                int64_t n = ns[ni];
                QrTensor t = {0};
                QT_OK(qr_tensor_set_shape(&t, sg ? QR_DT_S8 : QR_DT_U8, 1, &n));
                QT_OK(qr_tensor_alloc_data(&t));
                int8_t *s8 = t.data;
                uint8_t *u8 = t.data;
                for (int64_t i = 0; i < n; i++) {
                    uint32_t r = (uint32_t)qr_rng_next(&rng);
                    int v = shape == 0 ? (int)(r & 0xff) : shape == 1 ? 250 + (int)(r % 6) : (int)(r % 3);   /* wide, near the top, tiny */
                    if (sg) s8[i] = (int8_t)(v - 128); else u8[i] = (uint8_t)v;
                }
                long double s1 = 0, mn = 1e9, mx = -1e9;
                for (int64_t i = 0; i < n; i++) {
                    long double v = sg ? s8[i] : u8[i];
                    s1 += v;
                    mn = v < mn ? v : mn;
                    mx = v > mx ? v : mx;
                }
                long double mean = s1 / n, m2 = 0;
                for (int64_t i = 0; i < n; i++) {
                    long double d = (sg ? s8[i] : u8[i]) - mean;
                    m2 += d * d;
                }
                QrStats st;
                qr_stats_init(&st);
                qr_stats_tensor(&st, &t);
                double ulp = m2 > 0 ? ldexp(1.0, ilogb((double)m2) - 52) : 0x1p-1074;
                bool ok = st.n == n && st.min == (double)mn && st.max == (double)mx &&
                          fabsl(st.mean - mean) <= fabsl(mean) * 1e-15L + 1e-300L &&
                          (n <= 4096 ? fabsl(st.m2 - m2) <= 0.5001L * ulp : fabsl(st.m2 - m2) <= 1e-14L * m2 + 1e-300L);
                if (!ok && !bad++)
                    snprintf(msg, sizeof msg, "%s n=%lld shape %d: min %g max %g mean %.17g (%.17Lg) m2 %.17g (%.17Lg)",
                             sg ? "int8" : "uint8", (long long)n, shape, st.min, st.max, st.mean, mean, st.m2, m2);
                qr_tensor_free_data(&t);
            }
    QT_CHECKF(!bad, "%d cases wrong; first: %s", bad, msg);
}

static void qt_stats_all(void) {
    QT_RUN(test_stats_bytes);
    QT_RUN(test_stats_pair_threads);
    QT_RUN(test_stats_metrics_threads);
    QT_RUN(test_stats_kl_fields);
    QT_RUN(test_stats_inits_threads);
}
