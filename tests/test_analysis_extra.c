/* tests/analysis_extra — weight comparison (against numpy: fixtures/qpairs/culprit/weights_ref),
 * distributions, the advisor, the mixed-precision what-if and the bad-case search; the
 * planted-culprit fixture (fixtures/make_culprit.py); edge cases (all-zero weight, NaN,
 * int16 quantizers, several outputs, hostile data folders). */

/* ==== helpers ======================================================================= */

typedef struct QtAxPair {
    QrGraph *b, *a;
    QrTensor in;
    QrSession se;
    bool open;
} QtAxPair;

static void qt_ax_close(QtAxPair *p) {
    if (p->open) qr_session_close(&p->se);
    qr_tensor_free_data(&p->in);
    if (p->b) { qr_graph_free(p->b); free(p->b); }
    if (p->a) { qr_graph_free(p->a); free(p->a); }
    memset(p, 0, sizeof *p);
}

/* Loads base/analysis from files, infers on `in` (taken over) and opens a session. */
static QrStatus qt_ax_open_files(QtAxPair *p, const char *base, const char *analysis, QrTensor *in) {
    memset(p, 0, sizeof *p);
    p->in = *in;
    memset(in, 0, sizeof *in);
    QR_TRY(qr_run_load(base, &p->b));
    QR_TRY(qr_run_load(analysis, &p->a));
    QR_TRY(qr_run_infer(p->b, &p->in));
    QR_TRY(qr_run_infer(p->a, &p->in));
    QR_TRY(qr_session_open(&p->se, p->b, p->a, &p->in));
    p->open = true;
    return QR_OK;
}

static QrStatus qt_ax_open_pair(QtAxPair *p, const char *pair) {
    char b[256], a[256], i[256];
    QrTensor in = {0};
    snprintf(b, sizeof b, "fixtures/qpairs/%s/base.onnx", pair);
    snprintf(a, sizeof a, "fixtures/qpairs/%s/analysis.onnx", pair);
    snprintf(i, sizeof i, "fixtures/qpairs/%s/input.npy", pair);
    memset(p, 0, sizeof *p);
    QR_TRY(qr_npy_read(i, &in));
    return qt_ax_open_files(p, b, a, &in);
}

static bool qt_ax_close_to(double a, double b, double rel) {
    if (isinf(a) || isinf(b) || a != a || b != b) return a == b || (a != a && b != b);
    return fabs(a - b) <= 1e-12 + rel * fabs(b);
}

static bool qt_ax_file_has(const char *path, const char *needle) {
    unsigned char *buf = NULL;
    size_t len = 0;
    if (qr_file_read(path, 0, &buf, &len) != QR_OK) { qr_err_clear(); return false; }
    bool ok = false;
    for (size_t i = 0; !ok && needle[0] && i + strlen(needle) <= len; i++) ok = !memcmp(buf + i, needle, strlen(needle));
    qr_aligned_free(buf);
    return ok;
}

static QrStatus qt_ax_tensor(QrTensor *t, QrDType dt, int rank, const int64_t *dims, const float *v) {
    memset(t, 0, sizeof *t);
    QR_TRY(qr_tensor_set_shape(t, dt, rank, dims));
    QR_TRY(qr_tensor_alloc_data(t));
    for (int64_t i = 0; v && i < t->numel; i++) qr_tensor_set_f64(t, i, v[i]);
    return QR_OK;
}

static void qt_ax_f32_init(QtModel *mb, const char *name, int rank, const int64_t *dims, const float *v) {
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= dims[k];
    qt_mb_init_raw(mb, name, QR_DT_F32, rank, dims, v, (size_t)n * sizeof(float));
}

static void qt_ax_u8_init(QtModel *mb, const char *name, uint8_t v) { qt_mb_init_raw(mb, name, QR_DT_U8, 0, NULL, &v, 1); }

/* x → QuantizeLinear(s, z) → DequantizeLinear(s, z) → y (node names q_<y>, dq_<y>). */
static void qt_ax_qdq(QtModel *mb, const char *x, const char *s, const char *z, const char *y) {
    char q[128], n1[128], n2[128], ins[512];
    snprintf(q, sizeof q, "%s_q", y);
    snprintf(n1, sizeof n1, "q_%s", y);
    snprintf(n2, sizeof n2, "dq_%s", y);
    snprintf(ins, sizeof ins, "%s,%s,%s", x, s, z);
    qt_mb_node(mb, "QuantizeLinear", n1, ins, q);
    snprintf(ins, sizeof ins, "%s,%s,%s", q, s, z);
    qt_mb_node(mb, "DequantizeLinear", n2, ins, y);
}

static QrStatus qt_ax_write(QtModel *mb, const char *file, char *path, size_t n) {
    qt_fmt(path, n, "%s/%s", qt_tmpdir(), file);
    QrStatus st = qt_mb_write(mb, path);
    qt_mb_free(mb);
    return st;
}

/* fake-quant of one float32 value on a uint8/uint16 grid, the arithmetic of QuantizeLinear
 * and DequantizeLinear written out independently. */
static float qt_ax_fq(float x, float s, int z, int lo, int hi) {
    float r = rintf(x / s) + (float)z;
    if (r < lo) r = (float)lo;
    if (r > hi) r = (float)hi;
    return (float)((int)r - z) * s;
}

/* ==== weight comparison ============================================================== */

/* Every weight row equals numpy's computation (make_culprit.py write_weight_ref). */
static void qt_ax_weights_pair(const char *pair) {
    char name[128], path[256], msg[512] = "";
    snprintf(name, sizeof name, "weights/%s", pair);
    snprintf(path, sizeof path, "fixtures/qpairs/culprit/weights_ref/%s.tsv", pair);
    QtAxPair p;
    QrWeightCmp w = {0};
    QrStatus st = qt_ax_open_pair(&p, pair);
    if (st == QR_OK) st = qr_weights_compare(&p.se, &w);
    FILE *f = st == QR_OK ? fopen(path, "r") : NULL;
    int n = 0, bad = 0;
    char line[2048];
    if (st == QR_OK && !f) snprintf(msg, sizeof msg, "cannot open %s", path), bad++;
    if (f && !fgets(line, sizeof line, f)) bad++;
    while (f && fgets(line, sizeof line, f)) {
        char wn[512];
        long long cnt, nsat, nzero;
        double sqnr, cos, atol, l1, smin, smax;
        char ssq[64];
        if (sscanf(line, "%511s\t%lld\t%63s\t%lf\t%lf\t%lf\t%lld\t%lld\t%lf\t%lf", wn, &cnt, ssq, &cos, &atol, &l1, &nsat, &nzero,
                   &smin, &smax) != 10) { bad++; continue; }
        sqnr = !strcmp(ssq, "inf") ? INFINITY : strtod(ssq, NULL);
        n++;
        const QrWeightRow *r = NULL;
        for (int k = 0; k < w.n; k++) if (!strcmp(w.rows[k].name, wn)) r = &w.rows[k];
        if (!r || !r->has_m) { if (!bad++) qt_fmt(msg, sizeof msg, "no row for weight %s", wn); continue; }
        bool ok = r->n == cnt && r->n_sat == nsat && r->n_zero == nzero && qt_ax_close_to(r->m.sqnr, sqnr, 1e-6) &&
                  qt_ax_close_to(r->m.cosine, cos, 1e-9) && qt_ax_close_to(r->m.atol, atol, 1e-6) &&
                  qt_ax_close_to(r->m.l1, l1, 1e-6) && qt_ax_close_to(r->scale_min, smin, 1e-7) &&
                  qt_ax_close_to(r->scale_max, smax, 1e-7);
        if (!ok && !bad++)
            qt_fmt(msg, sizeof msg, "%s: n %lld/%lld sat %lld/%lld zero %lld/%lld sqnr %.9g/%.9g cos %.12g/%.12g atol %.9g/%.9g "
                     "l1 %.9g/%.9g", wn, (long long)r->n, cnt, (long long)r->n_sat, nsat, (long long)r->n_zero, nzero,
                     r->m.sqnr, sqnr, r->m.cosine, cos, r->m.atol, atol, r->m.l1, l1);
    }
    if (f) fclose(f);
    if (st == QR_OK && n != w.n && !bad++) snprintf(msg, sizeof msg, "%d reference rows but %d weight rows", n, w.n);
    if (st == QR_OK) {
        char dir[256], csv[300];
        qt_fmt(dir, sizeof dir, "%s/w_%s", qt_tmpdir(), pair);
        qr_mkdir_p(dir);
        st = qr_weights_write(&p.se, &w, dir);
        snprintf(csv, sizeof csv, "%s/weight_comparison.csv", dir);
        if (st == QR_OK && !qt_ax_file_has(csv, "Index,weight,node,op_type,shape,dtype,axis,SQNR,Cosine,max_abs_err") && !bad++)
            snprintf(msg, sizeof msg, "weight_comparison.csv lacks the header");
    }
    if (st != QR_OK) qt_fmt(msg, sizeof msg, "%s", qr_err_msg());
    qr_weights_free(&w);
    qt_ax_close(&p);
    qt_record(name, st == QR_OK && bad == 0 && n > 0, "%s", msg);
}

static void test_ax_weights_ref(void) {
    static const char *const pairs[] = { "culprit", "ort_qdq", "qat_fakequant", "int16_mixed" };
    for (int i = 0; i < QR_ARRAY_LEN(pairs); i++) qt_ax_weights_pair(pairs[i]);
}

/* Parameter index of per-tensor / per-axis / blocked layouts against a brute-force walk. */
static void test_ax_param_index(void) {
    int64_t dims[3] = { 2, 5, 3 };
    /* per-axis, axis 1: the index is the coordinate along axis 1 */
    for (int64_t i = 0; i < 30; i++) QT_CHECK(qr_weights_param_index(3, dims, 1, 0, 5, i) == (i / 3) % 5);
    QT_CHECK(qr_weights_param_index(3, dims, -2, 0, 5, 7) == 2);
    QT_CHECK(qr_weights_param_index(3, dims, 1, 0, 1, 17) == 0);
    /* blocked along axis 1 with block 2: scale shape [2, 3, 3] */
    for (int64_t a = 0; a < 2; a++)
        for (int64_t k = 0; k < 5; k++)
            for (int64_t c = 0; c < 3; c++) {
                int64_t i = (a * 5 + k) * 3 + c, want = (a * 3 + k / 2) * 3 + c;
                QT_CHECKF(qr_weights_param_index(3, dims, 1, 2, 18, i) == want, "element %lld", (long long)i);
            }
}

/* ==== distributions ================================================================== */

static void test_ax_dist_core(void) {
    /* two channels (axis 1) of 5 values; channel 1 is 20x channel 0 */
    float x[10] = { 1, 2, 3, 4, 5, 20, 40, 60, 80, 100 };
    float y[10] = { 1, 2, 3, 4, 6, 20, 40, 60, 80, 90 };
    int64_t dims[2] = { 2, 5 };   /* axis 0 = channels here */
    QrArena a = {0};
    QrDist d;
    memset(&d, 0, sizeof d);
    QT_OK(qr_dist_compute(&a, x, y, 2, dims, 0, 10, &d));
    QT_CHECK(d.n == 10 && d.n_nonfinite == 0);
    QT_CHECK(d.lo == 1 && d.hi == 100);
    int64_t sb = 0, sa = 0, se = 0;
    for (int k = 0; k < 10; k++) { sb += d.h_base[k]; sa += d.h_anal[k]; se += d.h_err[k]; }
    QT_CHECK(sb == 10 && sa == 10 && se == 10);
    /* bin width 9.9: 1..5 and 6 in bin 0, 20 in bin 1, 100 and 90 in the last bins */
    QT_CHECK(d.h_base[0] == 5 && d.h_anal[0] == 5 && d.h_base[1] == 1 && d.h_base[9] == 1 && d.h_anal[8] == 1);
    /* errors: -10 in bin 0; eight zeros and the +1 in the last bin (width 1.1) */
    QT_CHECK(d.err_lo == -10 && d.err_hi == 1 && d.h_err[0] == 1 && d.h_err[9] == 9);
    QT_CHECK(d.absmax_base == 100 && d.absmax_anal == 90);
    QT_CHECK(d.n_ch == 2);
    /* numpy.percentile(linear) of 1..5: 2, 3, 4; mean 3 */
    QT_CHECK(d.ch[0].min == 1 && d.ch[0].q1 == 2 && d.ch[0].median == 3 && d.ch[0].q3 == 4 && d.ch[0].max == 5 && d.ch[0].mean == 3);
    QT_CHECK(d.ch[1].q1 == 40 && d.ch[1].median == 60 && d.ch[1].q3 == 80);
    /* two channels: the median of (5, 100) is 52.5, nobody is 8x above it */
    QT_CHECK(d.n_outlier == 0);
    /* 10 channels of 1 value: one 20x the others is an outlier; NaN is left out */
    float z[10] = { 1, 1, 1, 1, 20, 1, 1, 1, 1, NAN };
    int64_t d10[2] = { 1, 10 };
    QrDist e;
    memset(&e, 0, sizeof e);
    QT_OK(qr_dist_compute(&a, z, NULL, 2, d10, 1, 4, &e));
    QT_CHECK(e.n == 9 && e.n_nonfinite == 1 && e.n_outlier == 1 && e.ch[4].outlier && !e.ch[0].outlier);
    QT_CHECK(e.ch[9].median != e.ch[9].median);   /* an all-NaN channel has no statistics */
    /* a constant tensor gets a widened range */
    float c[3] = { 2, 2, 2 };
    int64_t d3[1] = { 3 };
    QT_OK(qr_dist_compute(&a, c, c, 1, d3, -1, 4, &e));
    QT_CHECK(e.lo < 2 && e.hi > 2 && e.h_base[2] + e.h_base[1] == 3 && e.err_lo < 0 && e.err_hi > 0);
    qr_arena_free(&a);
}

/* The per-channel boxes, computed by groups of channels on the pool (dist.c qr__dist_ch_task):
 * every channel's min (first smallest), max (last largest), numpy's linear quartiles of its
 * sorted finite values, mean (its sum in element order) and absmax, against a plain loop per
 * channel, at 1, 2 and 3 threads; layouts of several tasks each (channel axis 1 of [2, 48, 3000],
 * axis 0 of [300, 700]), with zeros of both signs, NaN / Inf, ties and one all-NaN channel. */
static int qt_ax_dcmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static bool qt_ax_box_ok(const float *x, int64_t outer, int64_t nch, int64_t inner, int64_t c, const QrChannelBox *b,
                         double *buf) {
    int64_t m = 0;
    double sum = 0, mn = NAN, mx = NAN;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double v = x[(o * nch + c) * inner + i];
            if (!isfinite(v)) continue;
            if (!m || v < mn) mn = v;
            if (!m || v >= mx) mx = v;
            buf[m++] = v;
            sum += v;
        }
    if (!m) return isnan(b->min) && isnan(b->median) && isnan(b->mean) && b->absmax == 0;
    qsort(buf, (size_t)m, sizeof *buf, qt_ax_dcmp);
    double q[3];
    for (int k = 0; k < 3; k++) {
        double pos = (k + 1) * 0.25 * (double)(m - 1);
        int64_t r = (int64_t)floor(pos);
        q[k] = r >= m - 1 ? mx : buf[r] + (buf[r + 1] - buf[r]) * (pos - (double)r);
    }
    double want[7] = { mn, mx, q[0], q[1], q[2], sum / (double)m, QR_MAX(fabs(mn), fabs(mx)) };
    double got[7] = { b->min, b->max, b->q1, b->median, b->q3, b->mean, b->absmax };
    return !memcmp(want, got, sizeof want);
}

static void test_ax_dist_channels(void) {
    static const struct { int rank; int64_t dims[3]; int axis; } cases[] = { { 3, { 2, 48, 3000 }, 1 }, { 2, { 300, 700 }, 0 } };
    const int saved = qr_pool_threads();
    for (int k = 0; k < QR_ARRAY_LEN(cases); k++) {
        int64_t n = 1, nch = cases[k].dims[cases[k].axis], inner = 1;
        for (int i = 0; i < cases[k].rank; i++) n *= cases[k].dims[i];
        for (int i = cases[k].axis + 1; i < cases[k].rank; i++) inner *= cases[k].dims[i];
        int64_t outer = n / (nch * inner);
        float *x = malloc((size_t)n * sizeof *x);
        double *buf = malloc((size_t)(n / nch) * sizeof *buf);
        QT_CHECK(x && buf);
        if (!x || !buf) { free(x); free(buf); break; }
        uint64_t rng = 55 + (uint64_t)k;
        for (int64_t i = 0; i < n; i++) {
            uint64_t r = qr_rng_next(&rng) % 100;
            x[i] = r < 5 ? 0.0f : r < 10 ? -0.0f : r < 12 ? (float)(int)(qr_rng_next(&rng) % 3) : r == 12 ? NAN
                 : r == 13 ? INFINITY : (float)qr_rng_normal(&rng) * (float)(1 + i % 5);
        }
        for (int64_t o = 0; o < outer; o++)        /* channel 3: no finite value */
            for (int64_t i = 0; i < inner; i++) x[(o * nch + 3) * inner + i] = NAN;
        QrChannelBox *first = NULL;
        for (int threads = 1; threads <= 3; threads++) {
            qr_pool_init(threads);
            QrArena a = {0};
            QrDist d;
            memset(&d, 0, sizeof d);
            QT_OK(qr_dist_compute(&a, x, NULL, cases[k].rank, cases[k].dims, cases[k].axis, 16, &d));
            int bad = -1;
            for (int64_t c = 0; c < nch && bad < 0; c++)
                if (!qt_ax_box_ok(x, outer, nch, inner, c, &d.ch[c], buf)) bad = (int)c;
            QT_CHECKF(bad < 0, "case %d at %d threads: channel %d's box is not the plain loop's", k, threads, bad);
            if (!first) {
                first = malloc((size_t)nch * sizeof *first);
                if (first) memcpy(first, d.ch, (size_t)nch * sizeof *first);
            } else {
                QT_CHECKF(!memcmp(first, d.ch, (size_t)nch * sizeof *first), "case %d: the boxes at %d threads differ from 1 thread's",
                          k, threads);
            }
            qr_arena_free(&a);
        }
        free(first);
        free(x);
        free(buf);
    }
    qr_pool_init(saved);
}

/* The histograms' two passes (dist.c qr__dist_passes: chunks of 64K elements, on the pool from
 * qr__dist_par_min on): count, ranges, abs maxima and the three histograms equal to one plain loop's
 * over the elements in order (QR_MIN / QR_MAX keep the later of equal values, so -0.0 against 0.0
 * tells the order apart: a second set has no positive value, its maximum a zero of either sign) at 1, 2
 * and 3 threads, 300 000 elements with zeros of both signs, NaN / Inf and a shared minimum. */
static int qt_ax_bin(double v, double lo, double hi, int nb) {
    int k = (int)((v - lo) / (hi - lo) * nb);
    return k < 0 ? 0 : k >= nb ? nb - 1 : k;
}

static void test_ax_dist_passes(void) {
    enum { N = 300000, NB = 32 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    QT_CHECK(x && y);
    if (!x || !y) { free(x); free(y); return; }
    const int saved = qr_pool_threads();
    for (int var = 0; var < 2; var++) {     /* 1: no positive value, so the maximum is a zero of either sign */
        uint64_t rng = 91 + (uint64_t)var;
        for (int64_t i = 0; i < N; i++) {
            uint64_t r = qr_rng_next(&rng) % 100;
            x[i] = r < 4 ? 0.0f : r < 8 ? -0.0f : r == 8 ? NAN : r == 9 ? -INFINITY : (float)qr_rng_normal(&rng);
            r = qr_rng_next(&rng) % 100;
            y[i] = r < 4 ? -0.0f : r < 8 ? 0.0f : r == 8 ? INFINITY : x[i] + 0.01f * (float)qr_rng_normal(&rng);
            if (var && x[i] != 0) x[i] = -fabsf(x[i]);      /* (zeros keep their signs) */
            if (var && y[i] != 0) y[i] = -fabsf(y[i]);
        }
        if (var) {                          /* the first 64K's last zero +0.0, the very last -0.0 */
            x[65535] = y[65535] = 0.0f;
            x[N - 1] = y[N - 1] = -0.0f;
        }
        x[1000] = y[200000] = -8.0f;       /* the minimum twice, far apart */
        x[250000] = -8.0f;
        double lo = INFINITY, hi = -INFINITY, elo = INFINITY, ehi = -INFINITY, amx = 0, amy = 0;
        int64_t n = 0, nn = 0, hb[NB] = {0}, ha[NB] = {0}, he[NB] = {0};
        for (int64_t i = 0; i < N; i++) {
            double xv = x[i], yv = y[i];
            if (!isfinite(xv) || !isfinite(yv)) { nn++; continue; }
            n++;
            lo = QR_MIN(lo, QR_MIN(xv, yv));
            hi = QR_MAX(hi, QR_MAX(xv, yv));
            elo = QR_MIN(elo, yv - xv);
            ehi = QR_MAX(ehi, yv - xv);
            amx = QR_MAX(amx, fabs(xv));
            amy = QR_MAX(amy, fabs(yv));
        }
        if (!(lo < hi)) { QT_CHECK(lo < hi); break; }
        for (int64_t i = 0; i < N; i++) {
            double xv = x[i], yv = y[i];
            if (!isfinite(xv) || !isfinite(yv)) continue;
            hb[qt_ax_bin(xv, lo, hi, NB)]++;
            ha[qt_ax_bin(yv, lo, hi, NB)]++;
            he[qt_ax_bin(yv - xv, elo, ehi, NB)]++;
        }
        const int64_t dims[2] = { 3, N / 3 };
        for (int threads = 1; threads <= 3; threads++) {
            qr_pool_init(threads);
            QrArena a = {0};
            QrDist d;
            memset(&d, 0, sizeof d);
            QT_OK(qr_dist_compute(&a, x, y, 2, dims, -1, NB, &d));
            bool same = d.n == n && d.n_nonfinite == nn && !memcmp(&d.lo, &lo, sizeof lo) && !memcmp(&d.hi, &hi, sizeof hi) &&
                        !memcmp(&d.err_lo, &elo, sizeof elo) && !memcmp(&d.err_hi, &ehi, sizeof ehi) &&
                        d.absmax_base == amx && d.absmax_anal == amy && !memcmp(d.h_base, hb, sizeof hb) &&
                        !memcmp(d.h_anal, ha, sizeof ha) && !memcmp(d.h_err, he, sizeof he);
            QT_CHECKF(same, "values %d, %d threads: the passes differ from one loop's (n %lld / %lld, hi %g / %g)", var,
                      threads, (long long)d.n, (long long)n, d.hi, hi);
            qr_arena_free(&a);
        }
    }
    qr_pool_init(saved);
    free(x);
    free(y);
}

/* ==== the planted culprit ============================================================= */

static void test_ax_culprit(void) {
    QtAxPair p;
    QrSensResult sr = {0};
    QrAdvice adv = {0};
    QrCompare c = {0};
    QrDistSet ds = {0};
    QrTensor outs[2] = { {0}, {0} }, g = {0};
    QrStatus st = qt_ax_open_pair(&p, "culprit");
    /* the fixture runs as ONNX Runtime ran it */
    if (st == QR_OK) st = qr_run(p.a, &p.in, NULL, outs);
    for (int k = 0; st == QR_OK && k < 2; k++) {
        char path[256];
        snprintf(path, sizeof path, "fixtures/qpairs/culprit/golden_out/output_%d.npy", k);
        st = qr_npy_read(path, &g);
        if (st == QR_OK && g.numel != outs[k].numel) st = qr_errf(QR_ERR_SHAPE, "output %d size", k);
        for (int64_t i = 0; st == QR_OK && i < g.numel; i++)
            if (fabs(qr_tensor_get_f64(&g, i) - qr_tensor_get_f64(&outs[k], i)) > 1e-4 * (1 + fabs(qr_tensor_get_f64(&g, i))))
                st = qr_errf(QR_ERR_NUMERIC, "output %d element %lld differs from ONNX Runtime", k, (long long)i);
        qr_tensor_free_data(&g);
    }
    QrSensOpts so = { .metric = QR_METRIC_L1 };
    if (st == QR_OK) st = qr_sens_run(&p.se, &so, &sr);
    if (st == QR_OK) st = qr_compare_run(&p.se, p.a, 0.99, &c);
    if (st == QR_OK) st = qr_advisor_run(&p.se, &c, &sr, NULL, NULL, &adv);
    if (st == QR_OK) st = qr_dist_collect(&p.se, &sr, NULL, 0, 0, &ds);
    char dir[256], txt[300];
    qt_fmt(dir, sizeof dir, "%s/culprit", qt_tmpdir());
    qr_mkdir_p(dir);
    if (st == QR_OK) st = qr_advisor_write(&p.se, &adv, dir);
    bool ok = st == QR_OK;
    const char *why = ok ? "" : qr_err_msg();
    if (ok) {
        /* the culprit layer ranks first */
        ok = sr.n > 0 && !strcmp(sr.rows[0].name, "/conv1/Conv");
        if (!ok) why = sr.n ? sr.rows[0].name : "no rows";
    }
    bool named = false, act_named = false;
    for (int k = 0; ok && k < adv.n; k++) {
        const QrFinding *f = &adv.f[k];
        if (f->kind == QR_ADV_OUTLIER_CHANNELS && !strcmp(f->node, "/conv1/Conv") && f->value && !strcmp(f->value, "conv1.weight")) {
            named = f->sev == QR_SEV_WARNING && f->n_ev >= 2 && f->ev[1] == 5;   /* channel 5 was planted */
        }
        if (f->kind == QR_ADV_OUTLIER_CHANNELS && !strcmp(f->node, "/conv1/Conv") && f->value && strstr(f->value, "relu1"))
            act_named = true;
    }
    if (ok && !named) { ok = false; why = "advisor does not name /conv1/Conv's weight with outlier channels (channel 5)"; }
    if (ok && !act_named) { ok = false; why = "advisor does not name the conv1 output's outlier channel"; }
    snprintf(txt, sizeof txt, "%s/abnormal_layer_advisor.txt", dir);
    if (ok && !(qt_ax_file_has(txt, "outlier_channels") && qt_ax_file_has(txt, "conv1.weight"))) { ok = false; why = "advisor file"; }
    /* distributions: conv1.weight among the top weights, channel 5 flagged, threshold = scale * qmax (127) */
    bool dist_ok = false;
    for (int k = 0; ok && k < ds.n; k++) {
        const QrDist *d = &ds.d[k];
        if (d->is_weight && !strcmp(d->name, "conv1.weight"))
            dist_ok = d->n_ch == 8 && d->ch[5].outlier && d->n_outlier == 1 &&
                      qt_ax_close_to(d->threshold, 0.36834380030632019 * 127, 1e-6) && d->n == 216;
    }
    if (ok && !dist_ok) { ok = false; why = "distribution of conv1.weight"; }
    qt_record("culprit/ranking+advisor", ok, "%s", why);
    qr_dist_free(&ds);
    qr_compare_free(&c);
    qr_advice_free(&adv);
    qr_sens_free(&sr);
    for (int k = 0; k < 2; k++) qr_tensor_free_data(&outs[k]);
    qt_ax_close(&p);
}

/* ==== what-if ========================================================================== */

/* base: o1 = Relu(x), o2 = Abs(x). analysis: the same with a uint8 Q/DQ (scale s, zero
 * point z) on each output, both reading the same scale/zero-point initializers (tied). */
static QrStatus qt_ax_tied_model(const float *xv, float s, uint8_t z, QtAxPair *p) {
    int64_t d[2] = { 1, 8 };
    char bp[300], ap[300];
    QtModel mb;
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "o1", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "o2", QR_DT_F32, 2, d);
    qt_mb_node(&mb, "Relu", "r1", "x", "o1");
    qt_mb_node(&mb, "Abs", "a2", "x", "o2");
    QR_TRY(qt_ax_write(&mb, "tied_base.onnx", bp, sizeof bp));
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "o1", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "o2", QR_DT_F32, 2, d);
    qt_ax_f32_init(&mb, "s", 0, NULL, &s);
    qt_ax_u8_init(&mb, "z", z);
    qt_mb_node(&mb, "Relu", "r1", "x", "t1");
    qt_mb_node(&mb, "Abs", "a2", "x", "t2");
    qt_ax_qdq(&mb, "t1", "s", "z", "o1");
    qt_ax_qdq(&mb, "t2", "s", "z", "o2");
    QR_TRY(qt_ax_write(&mb, "tied_analysis.onnx", ap, sizeof ap));
    QrTensor in;
    QR_TRY(qt_ax_tensor(&in, QR_DT_F32, 2, d, xv));
    return qt_ax_open_files(p, bp, ap, &in);
}

/* A ranking with one row per twin node named `names` (in that order). */
static QrStatus qt_ax_fake_sens(const QrSession *s, const char *const *names, int n, QrSensResult *r) {
    memset(r, 0, sizeof *r);
    r->rows = qr_arena_array(&r->arena, (size_t)n, sizeof *r->rows);
    if (!r->rows) return qr_errf(QR_ERR_NOMEM, "oom");
    for (int k = 0; k < n; k++) {
        QrSensRow *row = &r->rows[r->n++];
        row->node = -1;
        for (int i = 0; i < s->tw.g.n_nodes; i++) if (!strcmp(s->tw.g.nodes[i].name, names[k])) row->node = i;
        if (row->node < 0) return qr_errf(QR_ERR_INVALID, "no node %s", names[k]);
        row->name = names[k];
        row->op_type = s->tw.g.nodes[row->node].op_type;
        row->type = QR_SENS_ACTIVATION;
        row->m.l1 = (double)(n - k);       /* worst first */
        for (int q = 0; q < s->qt.n; q++) if (s->qt.q[q].owner == row->node) row->q[row->n_q++] = q;
    }
    r->opts.metric = QR_METRIC_L1;
    return QR_OK;
}

/* 16-bit promotion with the same threshold, against the arithmetic written out here; the
 * tied quantizer follows; float promotion reproduces the baseline for that node. */
static void test_ax_whatif_hand(void) {
    const float xv[8] = { -1.0f, 0.5f, 2.0f, 0.013f, 3.3f, 0.01f, 1.7f, -2.6f };
    const float s = 0.0137f;
    const uint8_t z = 3;
    QtAxPair p;
    QrSensResult sr = {0};
    QrWhatIf w = {0};
    const char *names[] = { "r1" };
    QT_OK(qt_ax_tied_model(xv, s, z, &p));
    QrStatus st = qt_ax_fake_sens(&p.se, names, 1, &sr);
    int ks[] = { 1, 5 };
    if (st == QR_OK) st = qr_whatif_run(&p.se, &sr, ks, 2, 0.9999999, &w);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); qr_sens_free(&sr); qt_ax_close(&p); return; }
    /* expected outputs */
    float base[16], y16[16], y8[16], yf[16];
    float s16 = (float)((double)s / 257.0);
    int z16 = 257 * z;
    for (int i = 0; i < 8; i++) {
        float r = xv[i] > 0 ? xv[i] : 0, a = fabsf(xv[i]);
        base[i] = r;
        base[8 + i] = a;
        y8[i] = qt_ax_fq(r, s, z, 0, 255);
        y8[8 + i] = qt_ax_fq(a, s, z, 0, 255);
        y16[i] = qt_ax_fq(r, s16, z16, 0, 65535);
        y16[8 + i] = qt_ax_fq(a, s16, z16, 0, 65535);   /* tied: promoted too */
        yf[i] = r;
        yf[8 + i] = y8[8 + i];                             /* float run: only r1's quantizer off */
    }
    QrMetrics m8, m16, mf;
    qr_metrics_compute(base, y8, 16, &m8);
    qr_metrics_compute(base, y16, 16, &m16);
    qr_metrics_compute(base, yf, 16, &mf);
    QT_CHECK(w.n_steps == 1 && w.steps[0].k == 1);   /* k = 5 clipped to the one ranked node */
    const QrWhatIfStep *x = &w.steps[0];
    QT_CHECKF(qt_ax_close_to(w.as_is.l1, m8.l1, 1e-6), "as is %.9g vs %.9g", w.as_is.l1, m8.l1);
    QT_CHECKF(qt_ax_close_to(x->int16.l1, m16.l1, 1e-6) && qt_ax_close_to(x->int16.cosine, m16.cosine, 1e-9),
              "int16 L1 %.9g vs %.9g", x->int16.l1, m16.l1);
    QT_CHECKF(qt_ax_close_to(x->fp.l1, mf.l1, 1e-6), "float L1 %.9g vs %.9g", x->fp.l1, mf.l1);
    QT_CHECK(x->n_promoted == 1 && x->n_also == 1 && !strcmp(x->promoted[0], "t1") && !strcmp(x->also[0], "t2"));
    QT_CHECK(x->n_ort == 2 && !strcmp(x->ort_types[0], "QUInt16"));
    QT_CHECK(!strcmp(x->nodes[0], "r1") && x->base_nodes[0] && !strcmp(x->base_nodes[0], "r1"));
    /* one step: recommended whether or not it reaches the target (else it is the best) */
    QT_CHECK(w.rec_int16 == 0 && w.rec_fp == 0);
    char dir[256], js[300];
    qt_fmt(dir, sizeof dir, "%s/whatif_hand", qt_tmpdir());
    qr_mkdir_p(dir);
    QT_OK(qr_whatif_write(&p.se, &w, dir));
    snprintf(js, sizeof js, "%s/mixed_precision.json", dir);
    {
        unsigned char *buf = NULL;
        size_t len = 0;
        QrArena ja = {0};
        QrJsonVal *root = NULL;
        QT_OK(qr_file_read(js, 0, &buf, &len));
        QrStatus pst = qr_json_parse(&ja, (const char *)buf, len, &root);
        qr_aligned_free(buf);
        const QrJsonVal *st16 = pst == QR_OK ? qr_json_at(qr_json_get(root, "int16"), 0) : NULL;
        const QrJsonVal *rec = pst == QR_OK ? qr_json_get(qr_json_get(root, "recommended"), "int16") : NULL;
        const QrJsonVal *ov = rec ? qr_json_get(qr_json_get(rec, "ort_tensor_quant_overrides"), "o2") : NULL;
        const QrJsonVal *also = st16 ? qr_json_at(qr_json_get(st16, "also_promoted"), 0) : NULL;
        const QrJsonVal *ex = pst == QR_OK ? qr_json_at(qr_json_get(qr_json_get(qr_json_get(root, "recommended"), "float"),
                                                                    "ort_nodes_to_exclude"), 0) : NULL;
        bool ok = pst == QR_OK && also && also->type == QR_JSON_STR && !strcmp(also->str, "t2") && ov &&
                  !strcmp(qr_json_get(qr_json_at(ov, 0), "quant_type")->str, "QUInt16") && ex && !strcmp(ex->str, "r1") &&
                  qt_ax_close_to(qr_json_get(qr_json_get(st16, "output"), "L1")->num, m16.l1, 1e-6);
        qr_arena_free(&ja);
        QT_CHECKF(ok, "mixed_precision.json content (%s)", pst == QR_OK ? "parsed" : qr_err_msg());
    }
    qr_whatif_free(&w);
    qr_sens_free(&sr);
    qt_ax_close(&p);
}

/* On the fixture pairs: promoting everything to float reproduces the baseline; the
 * culprit gains from int16 on its top node; int16 quantizers stay as they are. */
static void qt_ax_whatif_pair(const char *pair) {
    char name[128], msg[512] = "";
    snprintf(name, sizeof name, "whatif/%s", pair);
    QtAxPair p;
    QrSensResult sr = {0};
    QrWhatIf w = {0};
    QrStatus st = qt_ax_open_pair(&p, pair);
    QrSensOpts so = { .metric = QR_METRIC_L1 };
    if (st == QR_OK) st = qr_sens_run(&p.se, &so, &sr);
    int ks[] = { 1, 3, 1000 };
    if (st == QR_OK) st = qr_whatif_run(&p.se, &sr, ks, 3, 0.99999, &w);
    bool ok = st == QR_OK && w.n_steps >= 2;
    if (st != QR_OK) qt_fmt(msg, sizeof msg, "%s", qr_err_msg());
    if (ok) {
        const QrWhatIfStep *all = &w.steps[w.n_steps - 1];
        ok = all->k == w.n_rank && all->n_not_disabled == 0 && all->fp.cosine > 1 - 1e-7 && all->fp.l1 < 1e-3 * (1 + w.as_is.l1);
        if (!ok) snprintf(msg, sizeof msg, "all %d nodes in float: cosine %.12g, L1 %.9g", all->k, all->fp.cosine, all->fp.l1);
    }
    if (ok && !strcmp(pair, "culprit")) {
        /* off-one ranking (keeping conv1 in float helps most) leads to the same node */
        QrSensResult off = {0};
        QrWhatIf w2 = {0};
        QrSensOpts oo = { .metric = QR_METRIC_L1, .off_one = true, .reverse = true };
        int k1 = 1;
        st = qr_sens_run(&p.se, &oo, &off);
        if (st == QR_OK) st = qr_whatif_run(&p.se, &off, &k1, 1, 0, &w2);
        ok = st == QR_OK && w2.n_steps == 1 && !strcmp(w2.steps[0].nodes[0], "/conv1/Conv");
        if (!ok) qt_fmt(msg, sizeof msg, "off-one ranking: %s", st == QR_OK ? w2.steps[0].nodes[0] : qr_err_msg());
        qr_whatif_free(&w2);
        qr_sens_free(&off);
    }
    if (ok && !strcmp(pair, "culprit")) {
        const QrWhatIfStep *one = &w.steps[0];
        ok = !strcmp(one->nodes[0], "/conv1/Conv") && one->int16.l1 < 0.5 * w.as_is.l1 && one->fp.l1 < 0.5 * w.as_is.l1 &&
             one->n_promoted == 2 && w.rec_int16 >= 0;
        if (!ok) snprintf(msg, sizeof msg, "top-1 %s: int16 L1 %.6g, float %.6g vs as is %.6g (%d promoted)", one->nodes[0],
                          one->int16.l1, one->fp.l1, w.as_is.l1, one->n_promoted);
    }
    if (ok && !strcmp(pair, "int16_mixed")) {
        const QrWhatIfStep *all = &w.steps[w.n_steps - 1];
        int already = 0;
        for (int k = 0; k < all->n_not; k++) already += strstr(all->not_promoted[k], "already int16") != NULL;
        /* notes.md: four int16 activations (dw conv, dw relu, Add, MaxPool) and pw.weight */
        ok = already == 5;
        if (!ok) snprintf(msg, sizeof msg, "%d int16 quantizers reported as not promoted (want 5)", already);
    }
    if (ok) {
        char dir[256];
        qt_fmt(dir, sizeof dir, "%s/wi_%s", qt_tmpdir(), pair);
        qr_mkdir_p(dir);
        st = qr_whatif_write(&p.se, &w, dir);
        char js[300];
        unsigned char *buf = NULL;
        size_t len = 0;
        QrArena ja = {0};
        QrJsonVal *root = NULL;
        snprintf(js, sizeof js, "%s/mixed_precision.json", dir);
        if (st == QR_OK) st = qr_file_read(js, 0, &buf, &len);
        if (st == QR_OK) st = qr_json_parse(&ja, (const char *)buf, len, &root);
        qr_aligned_free(buf);
        ok = st == QR_OK && qr_json_get(root, "int16") && qr_json_get(root, "int16")->n == w.n_steps &&
             qr_json_get(qr_json_get(root, "recommended"), "float");
        if (!ok) qt_fmt(msg, sizeof msg, "mixed_precision.json: %s", st == QR_OK ? "missing members" : qr_err_msg());
        qr_arena_free(&ja);
    }
    qr_whatif_free(&w);
    qr_sens_free(&sr);
    qt_ax_close(&p);
    qt_record(name, ok, "%s", msg);
}

static void test_ax_whatif_pairs(void) {
    static const char *const pairs[] = { "culprit", "ort_qdq", "qat_fakequant", "qoperator", "int16_mixed", "integer_ops" };
    for (int i = 0; i < QR_ARRAY_LEN(pairs); i++) qt_ax_whatif_pair(pairs[i]);
}

/* Sensitivity order: one-on worst first, off-one best first, whatever the listing order. */
static void test_ax_sens_order(void) {
    QrSensRow rows[4];
    memset(rows, 0, sizeof rows);
    double l1[4] = { 0.5, 2.0, NAN, 1.0 };
    for (int k = 0; k < 4; k++) rows[k].m.l1 = l1[k];
    QrSensResult r;
    memset(&r, 0, sizeof r);
    r.rows = rows;
    r.n = 4;
    r.opts.metric = QR_METRIC_L1;
    int idx[4];
    qr_sens_order(&r, idx);
    QT_CHECK(idx[0] == 2 && idx[1] == 1 && idx[2] == 3 && idx[3] == 0);   /* NaN counts as worst */
    r.opts.off_one = true;
    qr_sens_order(&r, idx);
    QT_CHECK(idx[0] == 0 && idx[1] == 3 && idx[2] == 1 && idx[3] == 2);
    r.opts.off_one = false;
    r.opts.metric = QR_METRIC_COSINE;
    double cs[4] = { 0.9, 0.99, 0.5, 0.999 };
    for (int k = 0; k < 4; k++) rows[k].m.cosine = cs[k];
    qr_sens_order(&r, idx);
    QT_CHECK(idx[0] == 2 && idx[1] == 0 && idx[2] == 1 && idx[3] == 3);
}

/* ==== advisor ============================================================================ */

static const QrFinding *qt_ax_finding(const QrAdvice *a, QrAdvKind k, const char *node) {
    for (int i = 0; i < a->n; i++)
        if (a->f[i].kind == k && (!node || !strcmp(a->f[i].node, node))) return &a->f[i];
    return NULL;
}

static double qt_ax_ev(const QrFinding *f, const char *name) {
    for (int i = 0; f && i < f->n_ev; i++) if (!strcmp(f->ev_name[i], name)) return f->ev[i];
    return NAN;
}

/* The advisor's activation statistics, made side by side before its checks (qr__adv_acts_make):
 * on three fixtures, every match the checks read (verified, its baseline value kept, an activation
 * quantizer on its analysis value) has its entry, bit for bit what qr__adv_act_stats gives for it
 * alone, and no other match has one. */
static bool qt_ax_bits(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static bool qt_ax_act_same(const QrAdvAct *a, const QrAdvAct *b) {
    return a->n == b->n && a->n_sat == b->n_sat && a->n_zero == b->n_zero && a->n_nonzero == b->n_nonzero &&
           a->n_nonfinite == b->n_nonfinite && qt_ax_bits(a->xmin, b->xmin) && qt_ax_bits(a->xmax, b->xmax) &&
           qt_ax_bits(a->rms, b->rms) && qt_ax_bits(a->scale, b->scale) && qt_ax_bits(a->levels, b->levels) &&
           a->sp.n_ch == b->sp.n_ch && qt_ax_bits(a->sp.max, b->sp.max) && qt_ax_bits(a->sp.median, b->sp.median) &&
           a->sp.worst == b->sp.worst && a->sp.n_outlier == b->sp.n_outlier;
}

static void test_ax_advisor_acts(void) {
    const char *pairs[3] = { "culprit", "ort_qdq", "int16_mixed" };
    for (int k = 0; k < 3; k++) {
        QtAxPair p;
        QrStatus st = qt_ax_open_pair(&p, pairs[k]);
        if (st == QR_OK) st = qr_session_run_baseline(&p.se);
        QrAdvActs acts = {0};
        if (st == QR_OK) st = qr__adv_acts_make(&p.se, QR_OUTLIER_K, &acts);
        int n_want = 0, bad = 0;
        for (int i = 0; st == QR_OK && i < p.se.m.n; i++) {
            int qi = qr_match_verified(&p.se.m.m[i]) && p.se.base[i].data ? qr_dist_act_quant_of(&p.se, p.se.vis[i]) : -1;
            const QrAdvAct *pre = NULL;
            QrStatus sg = qr__adv_acts_get(&acts, i, &pre);
            if (qi < 0) { bad += sg != QR_OK || pre != NULL; continue; }
            n_want++;
            QrAdvAct one;
            memset(&one, 0, sizeof one);
            QrStatus s1 = qr__adv_act_stats(&p.se.tw.g, &p.se.qt.q[qi], &p.se.base[i], QR_OUTLIER_K, &one);
            bad += sg != QR_OK || s1 != QR_OK || !pre || !qt_ax_act_same(pre, &one);
        }
        if (acts.s) qr__adv_acts_free(&acts);
        qt_ax_close(&p);
        QT_OK(st);
        QT_CHECKF(n_want > 0 && bad == 0, "%s: %d of the statistics differ or are missing (%d wanted)", pairs[k], bad, n_want);
    }
}

/* Clipping counted on the baseline values: 3 of 8 values beyond the grid. */
static void test_ax_advisor_saturation(void) {
    const float xv[8] = { -1.0f, 0.5f, 2.0f, 13.0f, 20.0f, 0.01f, 5.0f, 30.0f };
    QtAxPair p;
    QrAdvice adv = {0};
    QT_OK(qt_ax_tied_model(xv, 0.05f, 0, &p));   /* grid [0, 12.75] */
    QrStatus st = qr_advisor_run(&p.se, NULL, NULL, NULL, NULL, &adv);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); qt_ax_close(&p); return; }
    const QrFinding *f1 = qt_ax_finding(&adv, QR_ADV_SATURATION, "r1"), *f2 = qt_ax_finding(&adv, QR_ADV_SATURATION, "a2");
    QT_CHECK(f1 && f2);
    QT_CHECK(qt_ax_ev(f1, "clipped_share") == 3.0 / 8 && qt_ax_ev(f2, "clipped_share") == 3.0 / 8);
    QT_CHECK(qt_ax_close_to(qt_ax_ev(f1, "grid_hi"), 0.05 * 255, 1e-6));
    /* 0.01 / 0.05 rounds to 0: 1 of 7 non-zero values, below the 0.5 threshold */
    QT_CHECK(!qt_ax_finding(&adv, QR_ADV_ZERO, NULL));
    /* the outputs are float-consumed DQ outputs of uint8 quantizers: not high precision */
    QT_CHECK(qt_ax_finding(&adv, QR_ADV_OUTPUT_LOW_PRECISION, "r1"));
    QT_CHECK(!qt_ax_finding(&adv, QR_ADV_INPUT_NOT_NORMALIZED, NULL));
    qr_advice_free(&adv);
    /* with a threshold above 3/8 the finding disappears */
    QrAdvisorOpts o;
    qr_advisor_defaults(&o);
    o.sat_threshold = 0.4;
    QT_OK(qr_advisor_run(&p.se, NULL, NULL, NULL, &o, &adv));
    QT_CHECK(!qt_ax_finding(&adv, QR_ADV_SATURATION, NULL));
    qr_advice_free(&adv);
    qt_ax_close(&p);
}

/* A layer whose output is all zeros (Relu of negative inputs): similarity 1, nothing abnormal. */
static void test_ax_zero_activation(void) {
    const float xv[8] = { -1, -2, -3, -0.5f, -4, -0.01f, -7, -8 };
    QtAxPair p;
    QrCompare c = {0};
    QrAdvice adv = {0};
    QrDistSet ds = {0};
    QT_OK(qt_ax_tied_model(xv, 0.05f, 0, &p));
    QrStatus st = qr_compare_run(&p.se, p.a, 0.99, &c);
    if (st == QR_OK) st = qr_advisor_run(&p.se, &c, NULL, NULL, NULL, &adv);
    const char *names[] = { "r1" };
    if (st == QR_OK) st = qr_dist_collect(&p.se, NULL, names, 1, 16, &ds);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); goto done; }
    const QrLayerRow *r = NULL;
    for (int k = 0; k < c.n; k++) if (!strcmp(p.b->nodes[p.se.m.m[c.rows[k].match].b_node].name, "r1")) r = &c.rows[k];
    QT_CHECK(r && r->has_m && r->m.cosine == 1 && isinf(r->m.sqnr));
    for (int k = 0; k < adv.n; k++)
        QT_CHECKF(strcmp(adv.f[k].node, "r1") || adv.f[k].kind == QR_ADV_OUTPUT_LOW_PRECISION, "finding %s on r1",
                  qr_adv_kind_name(adv.f[k].kind));
    QT_CHECK(ds.n == 1 && ds.d[0].n == 8 && ds.d[0].absmax_base == 0 && ds.d[0].lo < 0 && ds.d[0].hi > 0 &&
             ds.d[0].n_outlier == 0 && qt_ax_close_to(ds.d[0].threshold, 0.05 * 255, 1e-6));
done:
    qr_dist_free(&ds);
    qr_advice_free(&adv);
    qr_compare_free(&c);
    qt_ax_close(&p);
}

/* int16_mixed: the uint8 Q/DQ after /stem/Conv and /conv/Conv clamp at 0 by design (their
 * Relu follows; expected_match.tsv "clamped:" rows) — not low similarity, not saturation. */
static void test_ax_advisor_clamped(void) {
    QtAxPair p;
    QrCompare c = {0};
    QrAdvice adv = {0};
    QT_OK(qt_ax_open_pair(&p, "int16_mixed"));
    QrStatus st = qr_compare_run(&p.se, p.a, 0.99, &c);
    if (st == QR_OK) st = qr_advisor_run(&p.se, &c, NULL, NULL, NULL, &adv);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); goto done; }
    static const char *const clamped[] = { "/stem/Conv", "/conv/Conv" };
    for (int i = 0; i < 2; i++) {
        const QrFinding *f = qt_ax_finding(&adv, QR_ADV_LOW_SIMILARITY, clamped[i]);
        const QrFinding *g = qt_ax_finding(&adv, QR_ADV_SATURATION, clamped[i]);
        QT_CHECKF(!f && !g, "%s: %s", clamped[i], (f ? f : g)->reason);
    }
    /* the model output is uint8 (fixture notes): reported */
    QT_CHECK(qt_ax_finding(&adv, QR_ADV_OUTPUT_LOW_PRECISION, "/fc/Gemm"));
done:
    qr_advice_free(&adv);
    qr_compare_free(&c);
    qt_ax_close(&p);
}

/* Concat of two branches quantized with scales 10x apart; an input in [0, 100]. */
static void test_ax_advisor_concat(void) {
    int64_t d[2] = { 1, 4 }, d8[2] = { 1, 8 };
    char bp[300], ap[300];
    QtModel mb;
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "out", QR_DT_F32, 2, d8);
    qt_mb_node(&mb, "Relu", "ra", "x", "ra_o");
    qt_mb_node(&mb, "Abs", "rb", "x", "rb_o");
    Onnx__NodeProto *n = qt_mb_node(&mb, "Concat", "cat", "ra_o,rb_o", "out");
    Onnx__AttributeProto *at = qt_mb_attr(&mb, n, "axis", QR_ATTR_INT);
    at->has_i = 1;
    at->i = 1;
    QT_OK(qt_ax_write(&mb, "cat_base.onnx", bp, sizeof bp));
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "out", QR_DT_F32, 2, d8);
    float sa = 0.4f, sb = 0.04f;
    qt_ax_f32_init(&mb, "sa", 0, NULL, &sa);
    qt_ax_f32_init(&mb, "sb", 0, NULL, &sb);
    qt_ax_u8_init(&mb, "z0", 0);
    qt_mb_node(&mb, "Relu", "ra", "x", "ta");
    qt_mb_node(&mb, "Abs", "rb", "x", "tb");
    qt_ax_qdq(&mb, "ta", "sa", "z0", "ra_o");
    qt_ax_qdq(&mb, "tb", "sb", "z0", "rb_o");
    n = qt_mb_node(&mb, "Concat", "cat", "ra_o,rb_o", "out");
    at = qt_mb_attr(&mb, n, "axis", QR_ATTR_INT);
    at->has_i = 1;
    at->i = 1;
    QT_OK(qt_ax_write(&mb, "cat_analysis.onnx", ap, sizeof ap));
    const float xv[4] = { 0.0f, 100.0f, 3.0f, 7.0f };
    QrTensor in;
    QT_OK(qt_ax_tensor(&in, QR_DT_F32, 2, d, xv));
    QtAxPair p;
    QrAdvice adv = {0};
    QT_OK(qt_ax_open_files(&p, bp, ap, &in));
    QrStatus st = qr_advisor_run(&p.se, NULL, NULL, NULL, NULL, &adv);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); qt_ax_close(&p); return; }
    const QrFinding *f = qt_ax_finding(&adv, QR_ADV_SCALE_MISMATCH, "cat");
    QT_CHECK(f && f->sev == QR_SEV_WARNING && qt_ax_close_to(qt_ax_ev(f, "ratio"), 10, 1e-6));
    const QrFinding *g = qt_ax_finding(&adv, QR_ADV_INPUT_NOT_NORMALIZED, NULL);
    QT_CHECK(g && qt_ax_ev(g, "max") == 100 && g->value && !strcmp(g->value, "x"));
    /* 100 / 0.04 is far beyond uint8: the rb branch clips 1 of 4 values */
    const QrFinding *h = qt_ax_finding(&adv, QR_ADV_SATURATION, "rb");
    QT_CHECK(h && qt_ax_ev(h, "clipped_share") == 0.25);
    char dir[256], txt[300];
    qt_fmt(dir, sizeof dir, "%s/adv_cat", qt_tmpdir());
    qr_mkdir_p(dir);
    QT_OK(qr_advisor_write(&p.se, &adv, dir));
    snprintf(txt, sizeof txt, "%s/abnormal_layer_advisor.txt", dir);
    QT_CHECK(qt_ax_file_has(txt, "[warning] cat (Concat): scale_mismatch") && qt_ax_file_has(txt, "model input 'x'"));
    /* the same findings as JSON (summary.json) */
    QrJson j;
    qr_json_init(&j);
    qr_advisor_json(&j, &adv);
    char *text = NULL;
    size_t len = 0;
    QrArena ja = {0};
    QrJsonVal *root = NULL;
    QrStatus jst = qr_json_finish(&j, &text, &len);
    if (jst == QR_OK) jst = qr_json_parse(&ja, text, len, &root);
    bool jok = jst == QR_OK && root->type == QR_JSON_ARR && root->n == adv.n;
    for (int k = 0; jok && k < adv.n; k++) {
        const QrJsonVal *e = qr_json_at(root, k), *kind = qr_json_get(e, "kind"), *ev = qr_json_get(e, "evidence");
        jok = kind && !strcmp(kind->str, qr_adv_kind_name(adv.f[k].kind)) && ev && ev->n == adv.f[k].n_ev;
    }
    qr_json_free(&j);
    free(text);
    qr_arena_free(&ja);
    QT_CHECKF(jok, "advisor JSON (%s)", jst == QR_OK ? "content" : qr_err_msg());
    qr_advice_free(&adv);
    qt_ax_close(&p);
}

/* NaN in an activation (Sqrt of a negative input, in both models) and an all-zero weight. */
static void test_ax_nan_and_zero_weight(void) {
    int64_t d[2] = { 1, 4 }, dw[2] = { 4, 2 }, d2[2] = { 1, 2 };
    char bp[300], ap[300];
    float wz[8] = { 0 };
    int8_t wq[8] = { 0 };
    float one = 1.0f, so = 0.01f;
    QtModel mb;
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "o1", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "o2", QR_DT_F32, 2, d2);
    qt_ax_f32_init(&mb, "W", 2, dw, wz);
    qt_mb_node(&mb, "Sqrt", "sq", "x", "o1");
    qt_mb_node(&mb, "MatMul", "mm", "x,W", "o2");
    QT_OK(qt_ax_write(&mb, "nan_base.onnx", bp, sizeof bp));
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "o1", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "o2", QR_DT_F32, 2, d2);
    qt_mb_init_raw(&mb, "W_quantized", QR_DT_S8, 2, dw, wq, sizeof wq);
    qt_ax_f32_init(&mb, "W_scale", 0, NULL, &one);
    int8_t zz = 0;
    qt_mb_init_raw(&mb, "W_zero_point", QR_DT_S8, 0, NULL, &zz, 1);
    qt_ax_f32_init(&mb, "so", 0, NULL, &so);
    qt_ax_u8_init(&mb, "zo", 0);
    qt_mb_node(&mb, "DequantizeLinear", "W_DequantizeLinear", "W_quantized,W_scale,W_zero_point", "W_dq");
    qt_mb_node(&mb, "Sqrt", "sq", "x", "t1");
    qt_ax_qdq(&mb, "t1", "so", "zo", "o1");
    qt_mb_node(&mb, "MatMul", "mm", "x,W_dq", "o2");
    QT_OK(qt_ax_write(&mb, "nan_analysis.onnx", ap, sizeof ap));
    const float xv[4] = { 4.0f, -1.0f, 0.25f, 1.0f };
    QrTensor in;
    QT_OK(qt_ax_tensor(&in, QR_DT_F32, 2, d, xv));
    QtAxPair p;
    QrCompare c = {0};
    QrAdvice adv = {0};
    QrWeightCmp w = {0};
    QrDistSet ds = {0};
    QT_OK(qt_ax_open_files(&p, bp, ap, &in));
    QrStatus st = qr_compare_run(&p.se, p.a, 0.99, &c);
    if (st == QR_OK) st = qr_weights_compare(&p.se, &w);
    if (st == QR_OK) st = qr_advisor_run(&p.se, &c, NULL, &w, NULL, &adv);
    const char *names[] = { "sq", "W" };
    if (st == QR_OK) st = qr_dist_collect(&p.se, NULL, names, 2, 8, &ds);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); goto done; }
    /* the all-zero weight: matched, exact, nothing clipped or zeroed, SQNR inf */
    QT_CHECK(w.n == 1 && w.rows[0].src == QR_FW_BASELINE && w.rows[0].has_m && w.rows[0].m.cosine == 1 &&
             isinf(w.rows[0].m.sqnr) && w.rows[0].n_sat == 0 && w.rows[0].n_zero == 0 && w.rows[0].m.atol == 0);
    QT_CHECK(!qt_ax_finding(&adv, QR_ADV_LOW_SIMILARITY, "mm") && !qt_ax_finding(&adv, QR_ADV_OUTLIER_CHANNELS, "mm"));
    /* NaN in the Sqrt output, in the baseline too */
    const QrFinding *f = qt_ax_finding(&adv, QR_ADV_NONFINITE, "sq");
    QT_CHECK(f && f->sev == QR_SEV_ERROR && qt_ax_ev(f, "nonfinite") == 1 && qt_ax_ev(f, "in_baseline") == 1);
    QT_CHECK(adv.n > 0 && adv.f[0].sev == QR_SEV_ERROR);   /* errors sort first */
    /* distributions: NaN left out; the all-zero weight has a widened range */
    QT_CHECK(ds.n == 2 && !ds.d[0].is_weight && ds.d[0].n == 3 && ds.d[0].n_nonfinite == 1);
    QT_CHECK(ds.d[1].is_weight && ds.d[1].n == 8 && ds.d[1].lo < 0 && ds.d[1].hi > 0 && ds.d[1].absmax_base == 0);
    qr_dist_free(&ds);
    QT_CHECK(qr_dist_collect(&p.se, NULL, (const char *[]){ "no_such_node" }, 1, 8, &ds) == QR_ERR_INVALID &&
             strstr(qr_err_msg(), "no_such_node"));
done:
    qr_dist_free(&ds);
    qr_weights_free(&w);
    qr_advice_free(&adv);
    qr_compare_free(&c);
    qt_ax_close(&p);
}

/* Weight saturation counts values clipped by more than one step (issue 20 trust check: torch's
 * per-channel symmetric qint8 puts each channel's positive abs-max at 127.5 steps, which rounds
 * to 128 and clips to 127 -- an error of about a rounding step, reported as "saturation" on every
 * healthy QAT conv of MobileNetV2 before). W (scale 0.01, int8, zero point 0): case 0 has two
 * values clipped by 0.55 and 0.68 steps (no finding; weight_comparison still counts them), case 1
 * adds one clipped by 1.5 steps (a finding: clipped_share 1/8, clipped_any_share 3/8). */
static void test_ax_weight_saturation_step(void) {
    int64_t d[2] = { 1, 4 }, dw[2] = { 4, 2 }, d2[2] = { 1, 2 };
    const float wv[2][8] = { { 1.2755f, -1.28f, 0.5f, 1.2768f, -0.3f, 0.01f, 1.2f, -1.0f },
                             { 1.2755f, -1.28f, 0.5f, 1.2768f, -0.3f, 0.01f, 1.295f, -1.0f } };
    for (int c = 0; c < 2; c++) {
        char bp[300], ap[300], fb[64], fa[64];
        float ws = 0.01f;
        int8_t wz = 0;
        QtModel mb;
        snprintf(fb, sizeof fb, "wsat%d_base.onnx", c);
        snprintf(fa, sizeof fa, "wsat%d_analysis.onnx", c);
        qt_mb_init(&mb, 17);
        qt_mb_input(&mb, "x", QR_DT_F32, 2, d);
        qt_mb_output(&mb, "o", QR_DT_F32, 2, d2);
        qt_ax_f32_init(&mb, "W", 2, dw, wv[c]);
        qt_mb_node(&mb, "MatMul", "mm", "x,W", "o");
        QT_OK(qt_ax_write(&mb, fb, bp, sizeof bp));
        qt_mb_init(&mb, 17);
        qt_mb_input(&mb, "x", QR_DT_F32, 2, d);
        qt_mb_output(&mb, "o", QR_DT_F32, 2, d2);
        qt_ax_f32_init(&mb, "W", 2, dw, wv[c]);
        qt_ax_f32_init(&mb, "ws", 0, NULL, &ws);
        qt_mb_init_raw(&mb, "wz", QR_DT_S8, 0, NULL, &wz, 1);
        qt_ax_qdq(&mb, "W", "ws", "wz", "W_dq");
        qt_mb_node(&mb, "MatMul", "mm", "x,W_dq", "o");
        QT_OK(qt_ax_write(&mb, fa, ap, sizeof ap));
        const float xv[4] = { 1.0f, -0.5f, 0.25f, 2.0f };
        QrTensor in;
        QT_OK(qt_ax_tensor(&in, QR_DT_F32, 2, d, xv));
        QtAxPair p;
        QrAdvice adv = {0};
        QrWeightCmp w = {0};
        QT_OK(qt_ax_open_files(&p, bp, ap, &in));
        QrStatus st = qr_weights_compare(&p.se, &w);
        if (st == QR_OK) st = qr_advisor_run(&p.se, NULL, NULL, &w, NULL, &adv);
        if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); goto next; }
        QT_CHECK(w.n == 1 && w.rows[0].has_m && w.rows[0].n == 8 && w.rows[0].n_sat == 2 + c && w.rows[0].n_sat_far == c);
        const QrFinding *f = qt_ax_finding(&adv, QR_ADV_SATURATION, NULL);
        if (c == 0) QT_CHECK(!f);
        else QT_CHECK(f && qt_ax_ev(f, "clipped_share") == 1.0 / 8 && qt_ax_ev(f, "clipped_any_share") == 3.0 / 8 &&
                      strstr(f->reason, "more than one step"));
    next:
        qr_weights_free(&w);
        qr_advice_free(&adv);
        qt_ax_close(&p);
    }
}

/* ==== bad-case search ========================================================================= */

static QrStatus qt_ax_save(const char *dir, const char *file, const QrTensor *t) {
    char path[512];
    QR_TRY(qr_mkdir_p(dir));
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return qr_npy_write(path, t);
}

/* Flat layout on the culprit (two outputs): sample metrics equal ONNX Runtime's outputs,
 * the worst is the argmax, --num-steps limits, badcase.npy is the worst sample. */
static void test_ax_badcase_flat(void) {
    QrGraph *b = NULL, *a = NULL;
    QrTensor in = {0}, t = {0};
    QrBadcase bc = {0};
    char dir[256], out[256];
    qt_fmt(dir, sizeof dir, "%s/bc_flat", qt_tmpdir());
    qt_fmt(out, sizeof out, "%s/bc_flat_out", qt_tmpdir());
    qr_mkdir_p(out);
    QT_OK(qr_npy_read("fixtures/qpairs/culprit/input.npy", &in));
    QT_OK(qr_tensor_to_f32(&in, &t));
    QT_OK(qt_ax_save(dir, "0.npy", &in));
    for (int64_t i = 0; i < t.numel; i++) ((float *)t.data)[i] *= 0.25f;
    QT_OK(qt_ax_save(dir, "1.npy", &t));
    for (int64_t i = 0; i < t.numel; i++) ((float *)t.data)[i] = 0;
    QT_OK(qt_ax_save(dir, "2.npy", &t));
    QT_OK(qt_ax_save(dir, "notes.txt.npy.bak", &t));   /* not a .npy: ignored */
    QT_OK(qr_run_load("fixtures/qpairs/culprit/base.onnx", &b));
    QT_OK(qr_run_load("fixtures/qpairs/culprit/analysis.onnx", &a));
    QrStatus st = qr_badcase_search(b, a, dir, 0, QR_METRIC_L1, NULL, &bc);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); goto done; }
    QT_CHECK(bc.n == 3 && bc.n_total == 3 && !bc.folders && !strcmp(bc.samples[2].file, "2.npy"));
    /* sample 0 against ONNX Runtime's outputs (golden_base / golden_out), both outputs */
    {
        QrMetricAcc acc;
        qr_metric_acc_init(&acc);
        for (int k = 0; k < 2; k++) {
            char p1[256], p2[256];
            QrTensor x = {0}, y = {0};
            snprintf(p1, sizeof p1, "fixtures/qpairs/culprit/golden_base/output_%d.npy", k);
            snprintf(p2, sizeof p2, "fixtures/qpairs/culprit/golden_out/output_%d.npy", k);
            QT_OK(qr_npy_read(p1, &x));
            QT_OK(qr_npy_read(p2, &y));
            qr_metric_acc_add(&acc, x.data, y.data, x.numel);
            qr_tensor_free_data(&x);
            qr_tensor_free_data(&y);
        }
        QrMetrics m;
        qr_metric_acc_finish(&acc, &m);
        QT_CHECKF(qt_ax_close_to(bc.samples[0].m.l1, m.l1, 1e-3) && m.n == 26, "L1 %.9g vs ORT %.9g", bc.samples[0].m.l1, m.l1);
    }
    int worst = 0;
    for (int k = 1; k < bc.n; k++) if (bc.samples[k].m.l1 > bc.samples[worst].m.l1) worst = k;
    QT_CHECK(bc.worst == worst);
    QT_OK(qr_badcase_write(&bc, out));
    {
        char p[300];
        QrTensor w = {0};
        snprintf(p, sizeof p, "%s/badcase.npy", out);
        QT_OK(qr_npy_read(p, &w));
        bool same = w.numel == bc.inputs[0].numel && !memcmp(w.data, bc.inputs[0].data, qr_tensor_nbytes(&w));
        qr_tensor_free_data(&w);
        QT_CHECK(same);
        snprintf(p, sizeof p, "%s/badcase_list.csv", out);
        QT_CHECK(qt_ax_file_has(p, "index,sample,L1,Cosine,MSE,KL,SQNR,nonfinite,worst\n0,0.npy,"));
    }
    qr_badcase_free(&bc);
    QT_OK(qr_badcase_search(b, a, dir, 2, QR_METRIC_COSINE, NULL, &bc));
    QT_CHECK(bc.n == 2 && bc.n_total == 3 && bc.metric == QR_METRIC_COSINE);
    QT_CHECK(bc.worst == (bc.samples[0].m.cosine <= bc.samples[1].m.cosine ? 0 : 1));
done:
    qr_badcase_free(&bc);
    qr_tensor_free_data(&in);
    qr_tensor_free_data(&t);
    if (b) { qr_graph_free(b); free(b); }
    if (a) { qr_graph_free(a); free(a); }
}

/* Folder layout for a two-input model (one input name needs a file-safe folder name),
 * numeric order, the planted worst sample, and clear errors for bad folders/files. */
static void test_ax_badcase_folders(void) {
    int64_t d[2] = { 1, 4 };
    char bp[300], ap[300], dir[256], out[256];
    QtModel mb;
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "a", QR_DT_F32, 2, d);
    qt_mb_input(&mb, "b/c", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "y", QR_DT_F32, 2, d);
    qt_mb_node(&mb, "Add", "add", "a,b/c", "y");
    QT_OK(qt_ax_write(&mb, "bc2_base.onnx", bp, sizeof bp));
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "a", QR_DT_F32, 2, d);
    qt_mb_input(&mb, "b/c", QR_DT_F32, 2, d);
    qt_mb_output(&mb, "y", QR_DT_F32, 2, d);
    float s = 0.1f;
    qt_ax_f32_init(&mb, "s", 0, NULL, &s);
    qt_ax_u8_init(&mb, "z", 128);
    qt_mb_node(&mb, "Add", "add", "a,b/c", "t");
    qt_ax_qdq(&mb, "t", "s", "z", "y");
    QT_OK(qt_ax_write(&mb, "bc2_analysis.onnx", ap, sizeof ap));
    QrGraph *b = NULL, *a = NULL;
    QrBadcase bc = {0};
    QT_OK(qr_run_load(bp, &b));
    QT_OK(qr_run_load(ap, &a));
    qt_fmt(dir, sizeof dir, "%s/bc_dirs", qt_tmpdir());
    qt_fmt(out, sizeof out, "%s/bc_dirs_out", qt_tmpdir());
    qr_mkdir_p(out);
    char da[300], db[300];
    snprintf(da, sizeof da, "%s/a", dir);
    snprintf(db, sizeof db, "%s/b_c", dir);
    const char *files[] = { "0.npy", "1.npy", "10.npy", "2.npy" };
    QrTensor t;
    QrStatus st = QR_OK;
    for (int k = 0; k < 4 && st == QR_OK; k++) {
        /* sample "10.npy" leaves the uint8 grid [-12.8, 12.7]: the worst by construction */
        float v = k == 2 ? 50.0f : 0.3f * (float)k + 0.01f;
        float av[4] = { v, v, v, v }, bv[4] = { 0.02f, 0.04f, 0.06f, 0.08f };
        st = qt_ax_tensor(&t, QR_DT_F32, 2, d, av);
        if (st == QR_OK) st = qt_ax_save(da, files[k], &t);
        qr_tensor_free_data(&t);
        if (st == QR_OK) st = qt_ax_tensor(&t, QR_DT_F32, 2, d, bv);
        if (st == QR_OK) st = qt_ax_save(db, files[k], &t);
        qr_tensor_free_data(&t);
    }
    QT_OK(st);
    st = qr_badcase_search(b, a, dir, 0, QR_METRIC_L1, NULL, &bc);
    if (st != QR_OK) { qt_fail(__FILE__, __LINE__, "%s", qr_err_msg()); goto done; }
    QT_CHECK(bc.folders && bc.n == 4 && !strcmp(bc.samples[2].file, "2.npy") && !strcmp(bc.samples[3].file, "10.npy"));
    QT_CHECK(bc.worst == 3 && ((float *)bc.inputs[0].data)[0] == 50.0f);
    QT_OK(qr_badcase_write(&bc, out));
    {
        char p[300];
        QrTensor w = {0};
        snprintf(p, sizeof p, "%s/badcase_b_c.npy", out);
        QT_OK(qr_npy_read(p, &w));
        QT_CHECK(w.numel == 4 && ((float *)w.data)[3] == 0.08f);
        qr_tensor_free_data(&w);
        snprintf(p, sizeof p, "%s/badcase_a.npy", out);
        QT_OK(qr_npy_read(p, &w));
        QT_CHECK(((float *)w.data)[0] == 50.0f);
        qr_tensor_free_data(&w);
    }
    qr_badcase_free(&bc);
    /* a sample file that is not .npy data */
    {
        char p[300];
        qt_fmt(p, sizeof p, "%s/1.npy", db);
        QT_OK(qr_file_write_atomic(p, "garbage", 7));
        st = qr_badcase_search(b, a, dir, 0, QR_METRIC_L1, NULL, &bc);
        QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), "b_c/1.npy"), "%s", qr_err_msg());
        /* a sample of the wrong shape */
        float v5[5] = { 1, 2, 3, 4, 5 };
        int64_t d5[2] = { 1, 5 };
        QT_OK(qt_ax_tensor(&t, QR_DT_F32, 2, d5, v5));
        QT_OK(qt_ax_save(db, "1.npy", &t));
        qr_tensor_free_data(&t);
        st = qr_badcase_search(b, a, dir, 0, QR_METRIC_L1, NULL, &bc);
        QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), "b_c/1.npy") && strstr(qr_err_msg(), "shape"), "%s", qr_err_msg());
        /* the same file missing for one input */
        QT_CHECK(remove(p) == 0);
        st = qr_badcase_search(b, a, dir, 0, QR_METRIC_L1, NULL, &bc);
        QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), "b_c/1.npy"), "%s", qr_err_msg());
        /* no folder for input 'b/c' */
        char empty[300];
        snprintf(empty, sizeof empty, "%s/bc_half", qt_tmpdir());
        qt_fmt(p, sizeof p, "%s/a", empty);
        QT_OK(qr_mkdir_p(p));
        st = qr_badcase_search(b, a, empty, 0, QR_METRIC_L1, NULL, &bc);
        QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "'b/c'"), "%s", qr_err_msg());
        /* an empty input folder, and a folder that does not exist */
        qt_fmt(p, sizeof p, "%s/b_c", empty);
        QT_OK(qr_mkdir_p(p));
        st = qr_badcase_search(b, a, empty, 0, QR_METRIC_L1, NULL, &bc);
        QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "no .npy"), "%s", qr_err_msg());
        snprintf(p, sizeof p, "%s/does_not_exist", qt_tmpdir());
        QT_CHECK(qr_badcase_search(b, a, p, 0, QR_METRIC_L1, NULL, &bc) == QR_ERR_IO && strstr(qr_err_msg(), "does_not_exist"));
    }
done:
    qr_badcase_free(&bc);
    if (b) { qr_graph_free(b); free(b); }
    if (a) { qr_graph_free(a); free(a); }
}

/* The weight comparison's rows of a weight quantized along its last axis (qr_weights_wdata's loop
 * with a parameter per element) against the loop it replaced there (one call per element on its
 * parameter qr_weights_param_index gives), with a float weight and its stored int8 codes: the same
 * dequantized values and counts (saturated, far, zeroed, re-quantized differently, non-finite). */
static void test_weights_wdata_rows(void) {
    int64_t dims[2] = { 23, 17 }, np = 17, n = 23 * 17;
    QrTensor w = {0}, iw = {0};
    QT_OK(qr_tensor_set_shape(&w, QR_DT_F32, 2, dims));
    QT_OK(qr_tensor_alloc_data(&w));
    QT_OK(qr_tensor_set_shape(&iw, QR_DT_S8, 2, dims));
    QT_OK(qr_tensor_alloc_data(&iw));
    float ps[17];
    int32_t pz[17];
    uint64_t rs = 7;
    for (int64_t c = 0; c < np; c++) { ps[c] = 0.002f * (float)(c + 1); pz[c] = (int32_t)(c % 5) - 2; }
    for (int64_t i = 0; i < n; i++) {
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        int64_t c = i % np;
        double v = ((double)((rs >> 33) % 400) - 200.0) * ps[c] * 0.9;     /* some beyond the int8 grid */
        ((float *)w.data)[i] = (rs >> 20) % 50 == 0 ? 0.0004f : (float)v;  /* a few that round to the zero point */
        ((int8_t *)iw.data)[i] = (int8_t)((rs >> 24) % 256 - 128);
    }
    ((float *)w.data)[5] = INFINITY;
    QrQuantRange range;
    QT_CHECK(qr_quant_range(QR_DT_S8, &range));
    QrWtData d[2];
    for (int k = 0; k < 2; k++) {
        memset(&d[k], 0, sizeof d[k]);
        d[k].w = &w;
        d[k].iw = &iw;
        d[k].x = w.data;
        d[k].x_borrowed = true;
        d[k].n = n;
        d[k].y = malloc((size_t)n * sizeof(float));
        QT_CHECK(d[k].y);
    }
    for (int64_t i0 = 0; i0 < n; i0 += np) qr__wt_wdata_run(&d[0], i0, np, ps, pz, 1, range);
    for (int64_t i = 0; i < n; i++) {
        int64_t p = qr_weights_param_index(2, dims, 1, 0, np, i);
        qr__wt_wdata_run(&d[1], i, 1, ps + p, pz + p, 0, range);
    }
    bool same = !memcmp(d[0].y, d[1].y, (size_t)n * sizeof(float));
    QT_CHECKF(same && d[0].n_sat == d[1].n_sat && d[0].n_sat_far == d[1].n_sat_far && d[0].n_zero == d[1].n_zero &&
              d[0].n_requant_diff == d[1].n_requant_diff && d[0].n_nonfinite == d[1].n_nonfinite,
              "rows: y %s, sat %lld/%lld far %lld/%lld zero %lld/%lld diff %lld/%lld nonfinite %lld/%lld", same ? "same" : "differ",
              (long long)d[0].n_sat, (long long)d[1].n_sat, (long long)d[0].n_sat_far, (long long)d[1].n_sat_far,
              (long long)d[0].n_zero, (long long)d[1].n_zero, (long long)d[0].n_requant_diff, (long long)d[1].n_requant_diff,
              (long long)d[0].n_nonfinite, (long long)d[1].n_nonfinite);
    QT_CHECKF(d[0].n_sat > 0 && d[0].n_zero > 0 && d[0].n_requant_diff > 0 && d[0].n_nonfinite == 1, "the data lacks a case");
    for (int k = 0; k < 2; k++) qr_weights_wdata_free(&d[k]);
    qr_tensor_free_data(&w);
    qr_tensor_free_data(&iw);
}

/* qr__wt_wdata_run's four lanes against the scalar loop (qr__wt_wdata_run1) over one array: int8, uint8
 * and no stored integers, with and without a float weight, one parameter for the run and one per element;
 * the data has NaN, infinities, a zero scale, quotients past 2^23, exact ties (x at k + 0.5 steps, -0.5
 * steps), values beyond the grid and on the zero point, and a length that leaves a tail: the same y (and x
 * without a float weight) bits and the same counts. */
static void test_weights_wdata_lanes(void) {
    enum { N = 1003 };
    static float ps[N], w0[N];
    static int32_t pz[N];
    static int8_t q8[N];
    int64_t dims[1] = { N };
    uint64_t rs = 99;
    int bad = 0;
    char msg[512] = "";
    /* both paths of qr__wt_wdata_run where the level has a kernel (qr_kern.f32_wquant, AVX-512): it, and
     * the four-lane loop the other levels run */
    const QrF32WquantFn kern = qr_kern.f32_wquant;
    for (int cfg = 0; cfg < 24 && !bad; cfg++) {
        if (cfg == 12 && !kern) break;
        qr_kern.f32_wquant = cfg < 12 ? kern : NULL;
        int kind = cfg % 3, pstep = (cfg / 3) & 1;      /* kind 0: int8, 1: uint8, 2: none */
        bool with_w = kind == 2 || (cfg % 12) / 6;
        QrDType dt = kind == 1 ? QR_DT_U8 : QR_DT_S8;
        QrQuantRange range;
        QT_CHECK(qr_quant_range(dt, &range));
        for (int i = 0; i < N; i++) {
            rs = rs * 6364136223846793005ull + 1442695040888963407ull;
            ps[i] = i % 211 == 3 ? 0.0f : 0.001f * (float)(1 + (rs >> 58));
            pz[i] = kind == 1 ? (int32_t)((rs >> 30) % 256) : (int32_t)((rs >> 30) % 21) - 10;
            float s1 = pstep ? ps[i] : ps[0];
            int r = (int)((rs >> 12) % 16);
            double k = (double)((int64_t)((rs >> 20) % 600) - 300);
            float v = r < 4 ? (float)((k + 0.5) * s1) : r == 4 ? (float)(-0.5 * s1) : r == 5 ? 0.0f : r == 6 ? 3e9f * s1
                    : (float)((k + (double)((rs >> 40) % 1000) * 1e-3) * s1);
            if (i % 97 == 11) v = NAN;
            if (i % 131 == 17) v = i & 1 ? INFINITY : -INFINITY;
            w0[i] = v;
            q8[i] = (int8_t)(((rs >> 44) % 256) - (kind == 1 ? 0 : 128));
        }
        QrTensor w = { 0 }, iw = { 0 };
        QT_OK(qr_tensor_set_shape(&w, QR_DT_F32, 1, dims));
        w.data = w0;
        QT_OK(qr_tensor_set_shape(&iw, dt, 1, dims));
        iw.data = q8;
        QrWtData d[2];
        float *y[2] = { malloc(N * sizeof(float)), malloc(N * sizeof(float)) };
        float *x[2] = { with_w ? w0 : malloc(N * sizeof(float)), with_w ? w0 : malloc(N * sizeof(float)) };
        QT_CHECK(y[0] && y[1] && x[0] && x[1]);
        for (int v = 0; v < 2; v++) {
            memset(&d[v], 0, sizeof d[v]);
            d[v].w = with_w ? &w : NULL;
            d[v].iw = kind == 2 ? NULL : &iw;
            d[v].x = x[v];
            d[v].y = y[v];
            d[v].n = N;
        }
        qr__wt_wdata_run(&d[0], 0, N, ps, pz, pstep, range);
        qr__wt_wdata_run1(&d[1], 0, N, ps, pz, pstep, range);
        bool same = !memcmp(y[0], y[1], N * sizeof(float)) && !memcmp(x[0], x[1], N * sizeof(float));
        if (!same || d[0].n_sat != d[1].n_sat || d[0].n_sat_far != d[1].n_sat_far || d[0].n_zero != d[1].n_zero ||
            d[0].n_requant_diff != d[1].n_requant_diff || d[0].n_nonfinite != d[1].n_nonfinite) {
            bad = 1;
            snprintf(msg, sizeof msg, "config %d (%s): values %s, sat %lld/%lld far %lld/%lld zero %lld/%lld diff %lld/%lld "
                     "nonfinite %lld/%lld", cfg, qr_kern.f32_wquant ? "kernel" : "four lanes", same ? "same" : "differ", (long long)d[0].n_sat, (long long)d[1].n_sat,
                     (long long)d[0].n_sat_far, (long long)d[1].n_sat_far, (long long)d[0].n_zero, (long long)d[1].n_zero,
                     (long long)d[0].n_requant_diff, (long long)d[1].n_requant_diff, (long long)d[0].n_nonfinite,
                     (long long)d[1].n_nonfinite);
        } else if (with_w && (d[0].n_sat == 0 || d[0].n_sat_far == 0 || d[0].n_zero == 0 || d[0].n_nonfinite == 0 ||
                              (kind != 2 && d[0].n_requant_diff == 0))) {
            bad = 1;
            snprintf(msg, sizeof msg, "config %d: the data lacks a case", cfg);
        }
        free(y[0]);
        free(y[1]);
        if (!with_w) { free(x[0]); free(x[1]); }
    }
    qr_kern.f32_wquant = kern;
    QT_CHECKF(!bad, "%s", msg);
}

/* qr_weights_spread's channel maxima (its four-lane bit maxima) against the definition — per channel
 * the largest fabs((double)x) of the finite elements, 0 for none — for channels along the last axis
 * (rows of channels, some rows wider than the lanes, some not), the first and a middle one, with NaN,
 * infinities, -0 and an all-NaN channel: the same doubles, and the same largest, median and worst. */
static void test_weights_spread_lanes(void) {
    static const int64_t shapes[][3] = { { 37, 29, 1 }, { 5, 3, 7 }, { 64, 17, 9 }, { 2, 8, 8 } };
    uint64_t rs = 5;
    int bad = 0;
    char msg[256] = "";
    for (int sh = 0; sh < 4 && !bad; sh++)
        for (int axis = 0; axis < 3 && !bad; axis++) {
            const int64_t *dims = shapes[sh];
            int64_t n = dims[0] * dims[1] * dims[2], nch = dims[axis], inner = 1;
            for (int k = axis + 1; k < 3; k++) inner *= dims[k];
            float *x = malloc((size_t)n * sizeof *x);
            double *got = malloc((size_t)nch * sizeof *got), *want = calloc((size_t)nch, sizeof *want);
            QT_CHECK(x && got && want);
            for (int64_t i = 0; i < n; i++) {
                rs = rs * 6364136223846793005ull + 1442695040888963407ull;
                x[i] = (float)((double)((int64_t)(rs >> 40) - (1 << 23)) * 1e-5);
                if (i % 13 == 4) x[i] = NAN;
                if (i % 29 == 7) x[i] = i & 1 ? INFINITY : -INFINITY;
                if (i % 31 == 9) x[i] = -0.0f;
                if ((i / inner) % nch == 1) x[i] = NAN;      /* channel 1: nothing finite */
            }
            for (int64_t i = 0; i < n; i++) {
                double a = fabs((double)x[i]);
                int64_t c = (i / inner) % nch;
                if (a > want[c] && isfinite(a)) want[c] = a;
            }
            QrWtSpread sp;
            QT_OK(qr_weights_spread(x, 3, dims, axis, 3.0, got, &sp));
            if (memcmp(got, want, (size_t)nch * sizeof *got)) {
                bad = 1;
                snprintf(msg, sizeof msg, "dims %lld,%lld,%lld axis %d: the channel maxima differ", (long long)dims[0],
                         (long long)dims[1], (long long)dims[2], axis);
            }
            int worst = 0;
            for (int64_t c = 1; c < nch; c++) if (want[c] > want[worst]) worst = (int)c;
            if (!bad && (sp.worst != worst || sp.max != want[worst])) {
                bad = 1;
                snprintf(msg, sizeof msg, "axis %d: worst %d (max %.9g), the definition %d (%.9g)", axis, sp.worst, sp.max, worst,
                         want[worst]);
            }
            free(x);
            free(got);
            free(want);
        }
    QT_CHECKF(!bad, "%s", msg);
}

static void qt_analysis_extra_all(void) {
    test_ax_weights_ref();
    QT_RUN(test_ax_param_index);
    QT_RUN(test_weights_wdata_rows);
    QT_RUN(test_weights_wdata_lanes);
    QT_RUN(test_weights_spread_lanes);
    QT_RUN(test_ax_dist_core);
    QT_RUN(test_ax_dist_channels);
    QT_RUN(test_ax_dist_passes);
    QT_RUN(test_ax_sens_order);
    test_ax_culprit();
    QT_RUN(test_ax_whatif_hand);
    test_ax_whatif_pairs();
    QT_RUN(test_ax_advisor_saturation);
    QT_RUN(test_ax_advisor_acts);
    QT_RUN(test_ax_advisor_concat);
    QT_RUN(test_ax_zero_activation);
    QT_RUN(test_ax_advisor_clamped);
    QT_RUN(test_ax_nan_and_zero_weight);
    QT_RUN(test_ax_weight_saturation_step);
    QT_RUN(test_ax_badcase_flat);
    QT_RUN(test_ax_badcase_folders);
}
