/* tests/sketch — analysis/sketch: the streaming quantile sketch's quantiles against exact
 * percentiles (sorting every value) on several distributions, within the rank-error bound the
 * sketch reports and the documented worst case; merges of shards within their bound; exact
 * results while the sketch holds every value; NaN/Inf counted apart; the byte form. */

static int qt_sk_cmp_f(const void *pa, const void *pb) {
    float x = *(const float *)pa, y = *(const float *)pb;
    return (x > y) - (x < y);
}

/* Values of x[0..n) (sorted) below v / at most v. */
static int64_t qt_sk_count_less(const float *x, int64_t n, double v) {
    int64_t lo = 0, hi = n;
    while (lo < hi) { int64_t m = (lo + hi) / 2; if ((double)x[m] < v) lo = m + 1; else hi = m; }
    return lo;
}
static int64_t qt_sk_count_leq(const float *x, int64_t n, double v) {
    int64_t lo = 0, hi = n;
    while (lo < hi) { int64_t m = (lo + hi) / 2; if ((double)x[m] <= v) lo = m + 1; else hi = m; }
    return lo;
}

static const double qt_sk_q[] = { 0, 0.001, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1 };

/* Checks the sketch's quantiles against the sorted finite values x[0..n): each lies between
 * the exact order statistics err ranks around it, q = 0 / 1 are the exact min / max, and err
 * is within the documented worst case. *obs: the largest rank distance seen. */
static bool qt_sk_within(const QrSketch *s, const float *x, int64_t n, int64_t *obs, char *why, size_t nwhy) {
    *obs = 0;
    if (s->n != n) { snprintf(why, nwhy, "n %lld vs %lld", (long long)s->n, (long long)n); return false; }
    if (s->err > qr_sketch_bound_max(n, s->k)) {
        snprintf(why, nwhy, "err %lld above the documented bound %lld", (long long)s->err,
                 (long long)qr_sketch_bound_max(n, s->k));
        return false;
    }
    double out[QR_ARRAY_LEN(qt_sk_q)];
    if (qr_sketch_quantiles(s, qt_sk_q, QR_ARRAY_LEN(qt_sk_q), out) != QR_OK) { qt_fmt(why, nwhy, "%s", qr_err_msg()); return false; }
    int64_t E = s->err;
    for (int i = 0; i < QR_ARRAY_LEN(qt_sk_q); i++) {
        double pos = qt_sk_q[i] * (double)(n - 1);
        int64_t j = (int64_t)floor(pos);
        double lo = x[j - E < 0 ? 0 : j - E], hi = x[j + 1 + E > n - 1 ? n - 1 : j + 1 + E];
        if (!(out[i] >= lo && out[i] <= hi)) {
            snprintf(why, nwhy, "q %g: %.9g outside [%.9g, %.9g] (exact ranks %lld..%lld, err %lld)", qt_sk_q[i], out[i], lo,
                     hi, (long long)(j - E), (long long)(j + 1 + E), (long long)E);
            return false;
        }
        if ((qt_sk_q[i] == 0 && out[i] != x[0]) || (qt_sk_q[i] == 1 && out[i] != x[n - 1])) {
            snprintf(why, nwhy, "min/max %.9g vs %.9g / %.9g", out[i], x[0], x[n - 1]);
            return false;
        }
        /* the rank distance actually seen: from pos to the ranks v occupies */
        int64_t cl = qt_sk_count_less(x, n, out[i]), ce = qt_sk_count_leq(x, n, out[i]);
        int64_t d = (double)cl > pos ? (int64_t)ceil((double)cl - pos) : pos > (double)(ce - 1) ? (int64_t)ceil(pos - (double)(ce - 1)) : 0;
        if (d > *obs) *obs = d;
    }
    return true;
}

/* Sketches v[0..n) in one pass and as 4 shards merged in two orders; checks all three
 * against the exact percentiles of v's finite values. */
static void qt_sk_case(const char *name, const float *v, int64_t n, int k) {
    float *x = malloc((size_t)n * sizeof *x + 1);
    int64_t m = 0, nan = 0, pinf = 0, ninf = 0;
    for (int64_t i = 0; i < n; i++) {
        if (v[i] != v[i]) nan++;
        else if (v[i] == INFINITY) pinf++;
        else if (v[i] == -INFINITY) ninf++;
        else x[m++] = v[i];
    }
    qsort(x, (size_t)m, sizeof *x, qt_sk_cmp_f);
    QrSketch one, sh[4], m1, m2;
    qr_sketch_init(&one, k);
    bool ok = qr_sketch_add_f32(&one, v, n) == QR_OK;
    for (int p = 0; p < 4; p++) {
        qr_sketch_init(&sh[p], k);
        int64_t lo = p * n / 4, hi = (p + 1) * n / 4;
        ok &= qr_sketch_add_f32(&sh[p], v + lo, hi - lo) == QR_OK;
    }
    qr_sketch_init(&m1, k);
    qr_sketch_init(&m2, k);
    static const int o1[4] = { 0, 1, 2, 3 }, o2[4] = { 3, 1, 0, 2 };
    for (int p = 0; p < 4; p++) {
        ok &= qr_sketch_merge(&m1, &sh[o1[p]]) == QR_OK;
        ok &= qr_sketch_merge(&m2, &sh[o2[p]]) == QR_OK;
    }
    char why[512] = "", tn[128];
    int64_t obs[3] = { 0, 0, 0 };
    const QrSketch *all[3] = { &one, &m1, &m2 };
    static const char *const what[3] = { "one pass", "merged 0123", "merged 3102" };
    for (int t = 0; t < 3; t++) {
        snprintf(tn, sizeof tn, "sketch %s (%s)", name, what[t]);
        bool good = ok && qt_sk_within(all[t], x, m, &obs[t], why, sizeof why) && all[t]->n_nan == nan &&
                    all[t]->n_pinf == pinf && all[t]->n_ninf == ninf;
        qt_record(tn, good, "%s%s", ok ? "" : "add/merge failed; ", why);
        if (qt_verbose)
            printf("     %s: n %lld, k %d, err bound %lld (%.3g%% of n; documented worst %lld), seen %lld, %zu bytes\n", tn,
                   (long long)m, k, (long long)all[t]->err, m ? 100.0 * (double)all[t]->err / (double)m : 0.0,
                   (long long)qr_sketch_bound_max(m, k), (long long)obs[t], qr_sketch_bytes(all[t]));
    }
    /* order-independent parts of a merge: counts and extremes equal one pass */
    snprintf(tn, sizeof tn, "sketch %s merge exact parts", name);
    qt_record(tn, one.n == m1.n && one.n == m2.n && one.min_key == m1.min_key && one.max_key == m2.max_key &&
              one.n_nan == m2.n_nan, "n/min/max/NaN differ after merging");
    qr_sketch_free(&one);
    qr_sketch_free(&m1);
    qr_sketch_free(&m2);
    for (int p = 0; p < 4; p++) qr_sketch_free(&sh[p]);
    free(x);
}

static void test_sketch_distributions(void) {
    enum { N = 400000 };
    float *v = malloc(N * sizeof *v);
    QT_CHECK(v);
    uint64_t rng = 2026;
    for (int i = 0; i < N; i++) v[i] = (float)((double)(qr_rng_next(&rng) >> 11) / 9007199254740992.0 * 2 - 1);
    qt_sk_case("uniform", v, N, QR_SKETCH_K);
    for (int i = 0; i < N; i++) {   /* Cauchy: a ratio of normals, tails to 1e6 and beyond */
        float a = qr_rng_normal(&rng), b = qr_rng_normal(&rng);
        v[i] = b != 0 ? a / b : a;
    }
    qt_sk_case("heavy-tailed", v, N, QR_SKETCH_K);
    for (int i = 0; i < N; i++) v[i] = 3.25f;
    qt_sk_case("constant", v, N, QR_SKETCH_K);
    for (int i = 0; i < N; i++) v[i] = (float)(qr_rng_next(&rng) % 7) - 2.0f;   /* 7 values, each ~57000 times */
    qt_sk_case("duplicates", v, N, QR_SKETCH_K);
    for (int i = 0; i < N; i++) v[i] = (float)i;   /* sorted input: the compactor's adversary */
    qt_sk_case("ascending", v, N, QR_SKETCH_K);
    for (int i = 0; i < N; i++) v[i] = (float)(N - i) * 1e-3f;
    qt_sk_case("descending", v, N, 64);
    for (int i = 0; i < N; i++) {
        v[i] = qr_rng_normal(&rng);
        if (i % 13 == 0) v[i] = NAN;
        else if (i % 101 == 0) v[i] = INFINITY;
        else if (i % 103 == 0) v[i] = -INFINITY;
    }
    qt_sk_case("nan-inf", v, N, QR_SKETCH_K);
    for (int i = 0; i < N; i++) v[i] = i % 2 ? -0.0f : 0.0f;
    qt_sk_case("signed zeros", v, N, 16);
    free(v);
}

/* While n <= k nothing is compacted: the quantiles are numpy's, bit for bit. */
static void test_sketch_exact_small(void) {
    enum { N = 500 };
    float v[N], x[N];
    uint64_t rng = 7;
    for (int i = 0; i < N; i++) x[i] = v[i] = qr_rng_normal(&rng) * 10;
    qsort(x, N, sizeof *x, qt_sk_cmp_f);
    QrSketch s;
    qr_sketch_init(&s, 512);
    QT_OK(qr_sketch_add_f32(&s, v, N));
    QT_CHECK(s.err == 0);
    double out[QR_ARRAY_LEN(qt_sk_q)];
    QT_OK(qr_sketch_quantiles(&s, qt_sk_q, QR_ARRAY_LEN(qt_sk_q), out));
    for (int i = 0; i < QR_ARRAY_LEN(qt_sk_q); i++) {
        double pos = qt_sk_q[i] * (N - 1);
        int j = (int)floor(pos);
        double want = j >= N - 1 ? x[N - 1] : (double)x[j] + ((double)x[j + 1] - (double)x[j]) * (pos - j);
        QT_CHECKF(out[i] == want, "q %g: %.17g vs %.17g", qt_sk_q[i], out[i], want);
    }
    /* empty: NaN quantiles; all-NaN input counts only */
    QrSketch e;
    qr_sketch_init(&e, 0);
    float nans[3] = { NAN, NAN, INFINITY };
    QT_OK(qr_sketch_add_f32(&e, nans, 3));
    QT_OK(qr_sketch_quantiles(&e, qt_sk_q, 2, out));
    QT_CHECK(e.n == 0 && e.n_nan == 2 && e.n_pinf == 1 && out[0] != out[0] && out[1] != out[1]);
    QT_CHECK(e.k == QR_SKETCH_K);
    qr_sketch_free(&s);
    qr_sketch_free(&e);
}

/* The byte form reads back to the same sketch (same bytes, same quantiles); damaged forms fail. */
static void test_sketch_bytes(void) {
    enum { N = 50000 };
    float *v = malloc(N * sizeof *v);
    QT_CHECK(v);
    uint64_t rng = 99;
    for (int i = 0; i < N; i++) v[i] = i % 17 ? qr_rng_normal(&rng) : NAN;
    QrSketch s, t;
    qr_sketch_init(&s, 128);
    QT_OK(qr_sketch_add_f32(&s, v, N));
    free(v);
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t l1 = 0, c1 = 0, l2 = 0, c2 = 0, used = 0;
    QT_OK(qr_sketch_write(&s, &b1, &l1, &c1));
    QT_OK(qr_sketch_read(&t, b1, l1, &used));
    QT_CHECK(used == l1);
    QT_OK(qr_sketch_write(&t, &b2, &l2, &c2));
    QT_CHECK(l1 == l2 && !memcmp(b1, b2, l1));
    double qa[QR_ARRAY_LEN(qt_sk_q)], qb[QR_ARRAY_LEN(qt_sk_q)];
    QT_OK(qr_sketch_quantiles(&s, qt_sk_q, QR_ARRAY_LEN(qt_sk_q), qa));
    QT_OK(qr_sketch_quantiles(&t, qt_sk_q, QR_ARRAY_LEN(qt_sk_q), qb));
    QT_CHECK(!memcmp(qa, qb, sizeof qa));
    QrSketch u;
    QT_CHECK(qr_sketch_read(&u, b1, l1 - 3, &used) == QR_ERR_INVALID);   /* truncated */
    b1[l1 - 2] ^= 0x80;                                                /* an item out of [min, max] or NaN */
    QrStatus st = qr_sketch_read(&u, b1, l1, &used);
    if (st == QR_OK) qr_sketch_free(&u);
    b1[l1 - 2] ^= 0x80;
    b1[16] ^= 1;                                                       /* n no longer the items' weight */
    QT_CHECK(qr_sketch_read(&u, b1, l1, &used) == QR_ERR_INVALID);
    QT_CHECK(st == QR_ERR_INVALID);
    qr_err_clear();
    free(b1);
    free(b2);
    qr_sketch_free(&s);
    qr_sketch_free(&t);
}

static void qt_sketch_all(void) {
    QT_RUN(test_sketch_distributions);
    QT_RUN(test_sketch_exact_small);
    QT_RUN(test_sketch_bytes);
}
