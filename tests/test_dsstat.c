/* tests/dsstat — statistics over a data set (analysis/dsstat, analysis/dist's set part):
 * `profile --data` and runall --data's model0/1_statistic tables against numpy over ONNX
 * Runtime's values of every sample (fixtures/make_profile_set_ref.py); shards merged through the
 * .qrpart files (analysis/dspart sections) equal to one pass (profile bitwise, histograms exactly, box quantiles within the
 * sketches' bounds of the exact percentiles); the sample counts in summary.json and the HTML. */

/* numpy's table: model, tensor, n, min, max, mean, var. */
typedef struct QtPsRef { int n; int model[128]; char name[128][160]; double v[128][5]; } QtPsRef;

static bool qt_ps_load(const char *pair, QtPsRef *r) {
    char path[512], line[1024];
    snprintf(path, sizeof path, "fixtures/qpairs/%s/profile_set_ref.tsv", pair);
    FILE *f = fopen(path, "r");
    memset(r, 0, sizeof *r);
    if (!f) return false;
    while (fgets(line, sizeof line, f) && r->n < 128) {
        char name[160];
        int m;
        double n, a, b, c, d;
        if (sscanf(line, "%d\t%159[^\t]\t%lf\t%lf\t%lf\t%lf\t%lf", &m, name, &n, &a, &b, &c, &d) != 7) continue;
        r->model[r->n] = m;
        snprintf(r->name[r->n], sizeof r->name[0], "%s", name);
        double v[5] = { n, a, b, c, d };
        memcpy(r->v[r->n], v, sizeof v);
        r->n++;
    }
    fclose(f);
    return r->n > 0;
}

/* Checks a statistic.csv (Min, Max, Mean, Var of every row whose Tensor numpy has) against
 * numpy's values for model m: printed with 7 decimals, so within 6e-8 + tol·|numpy|. Returns
 * the rows checked (-1 and a message on a mismatch). */
static int qt_ps_check_csv(const char *csv_path, const QtPsRef *r, int m, double tol, char *msg, size_t nmsg) {
    FILE *f = fopen(csv_path, "r");
    if (!f) { snprintf(msg, nmsg, "no %s", csv_path); return -1; }
    char line[4096];
    int checked = 0;
    bool head = true;
    while (fgets(line, sizeof line, f)) {
        if (head) { head = false; continue; }
        /* Index,Op Name,Mod Name,Attr,Dtype,Scale,Min,Max,Mean,Var,Shape,Tensor,NaN,Inf — Scale and Shape may
         * hold commas inside quotes: split respecting quotes */
        char *fld[32];
        int nf = 0;
        bool q = false;
        fld[nf++] = line;
        for (char *c = line; *c && nf < 32; c++) {
            if (*c == '"') q = !q;
            else if (*c == ',' && !q) { *c = 0; fld[nf++] = c + 1; }
        }
        if (nf < 14) continue;
        const char *tensor = fld[11];
        for (int i = 0; i < r->n; i++) {
            if (r->model[i] != m || strcmp(r->name[i], tensor)) continue;
            for (int c = 0; c < 4; c++) {
                double got = strtod(fld[6 + c], NULL), want = r->v[i][1 + c];
                if (!(fabs(got - want) <= 6e-8 + tol * fabs(want))) {
                    snprintf(msg, nmsg, "%s: model%d %s column %d: %.9g vs numpy %.17g", csv_path, m, tensor, c, got, want);
                    fclose(f);
                    return -1;
                }
            }
            checked++;
            break;
        }
    }
    fclose(f);
    return checked;
}

#if defined(__x86_64__)
static const double qt_ps_tol = 1e-9;    /* qreport's kernels give ORT's x86-64 bits on these pairs (test_dataset_ref) */
#else
static const double qt_ps_tol = 1e-5;    /* NEON float sums: other rounding */
#endif

/* profile --data of each model of each pair against numpy. */
static void test_dsstat_profile_ref(void) {
    static const char *const pairs[] = { "ort_qdq", "qat_fakequant" };
    for (int p = 0; p < 2; p++) {
        QtPsRef r;
        QT_CHECKF(qt_ps_load(pairs[p], &r), "no reference for %s (fixtures/make_profile_set_ref.py)", pairs[p]);
        static const char *const models[2] = { "base", "analysis" };
        for (int m = 0; m < 2; m++) {
            QtCli c;
            qt_cli(&c, "profile fixtures/qpairs/%s/%s.onnx --data fixtures/qpairs/%s/data -o %s/psd_%d_%d --quiet", pairs[p],
                   models[m], pairs[p], qt_tmpdir(), p, m);
            QT_CHECKF(c.code == 0, "%s %s: exit %d: %s", pairs[p], models[m], c.code, c.err);
            char path[600], msg[1024] = "", buf[512];
            snprintf(path, sizeof path, "%s/psd_%d_%d/statistic.txt", qt_tmpdir(), p, m);
            qt_slurp(path, buf, sizeof buf);
            QT_CHECKF(strstr(buf, "Statistics over 6 samples of"), "%.200s", buf);
            snprintf(path, sizeof path, "%s/psd_%d_%d/statistic.csv", qt_tmpdir(), p, m);
            int n = qt_ps_check_csv(path, &r, m, qt_ps_tol, msg, sizeof msg);
            QT_CHECKF(n > 0, "%s", msg[0] ? msg : "no row matched numpy's tensors");
            if (qt_verbose) printf("     profile --data %s %s: %d rows equal numpy's over 6 samples\n", pairs[p], models[m], n);
        }
    }
    /* -i and --data are exclusive; a missing folder is named */
    QtCli c;
    qt_cli(&c, "profile fixtures/qpairs/ort_qdq/base.onnx -i fixtures/qpairs/ort_qdq/input.npy --data fixtures/qpairs/ort_qdq/data "
           "-o %s/psd_x --quiet", qt_tmpdir());
    QT_CHECKF(c.code == 2 && strstr(c.err, "exclusive"), "exit %d: %s", c.code, c.err);
    qt_cli(&c, "profile fixtures/qpairs/ort_qdq/base.onnx --data %s/no_such_dir -o %s/psd_y --quiet", qt_tmpdir(), qt_tmpdir());
    QT_CHECKF(c.code == 1 && strstr(c.err, "no_such_dir"), "exit %d: %s", c.code, c.err);
}

/* runall --data: model0/model1_statistic pooled over the set (numpy), and the sample counts. */
static void test_dsstat_runall(void) {
    QtPsRef r;
    QT_CHECK(qt_ps_load("ort_qdq", &r));
    QtCli c;
    qt_cli(&c, "runall fixtures/qpairs/ort_qdq/base.onnx fixtures/qpairs/ort_qdq/analysis.onnx --data fixtures/qpairs/ort_qdq/data "
           "-o %s/psr.zip --keep-dir %s/psr --quiet", qt_tmpdir(), qt_tmpdir());
    QT_CHECKF(c.code == 0 || c.code == 3, "exit %d: %s", c.code, c.err);
    char path[600], msg[1024] = "";
    for (int m = 0; m < 2; m++) {
        snprintf(path, sizeof path, "%s/psr/model%d_statistic.csv", qt_tmpdir(), m);
        int n = qt_ps_check_csv(path, &r, m, qt_ps_tol, msg, sizeof msg);
        QT_CHECKF(n > 5, "model%d: %s (%d rows)", m, msg, n);
    }
    static char buf[1 << 20];
    snprintf(path, sizeof path, "%s/psr/summary.json", qt_tmpdir());
    qt_slurp(path, buf, sizeof buf);
    QT_CHECKF(strstr(buf, "\"profile_samples\": 6") && strstr(buf, "\"distribution_samples\": 6"), "%.400s",
              strstr(buf, "\"dataset\"") ? strstr(buf, "\"dataset\"") : buf);
    snprintf(path, sizeof path, "%s/psr/index.html", qt_tmpdir());
    qt_slurp(path, buf, sizeof buf);
    QT_CHECKF(strstr(buf, "are pooled over all 6 samples") && strstr(buf, "cover all 6 samples"), "HTML without the sample counts");
    snprintf(path, sizeof path, "%s/psr/model0_statistic.txt", qt_tmpdir());
    qt_slurp(path, buf, sizeof buf);
    QT_CHECKF(!strncmp(buf, "Statistics over 6 samples of", 28), "%.100s", buf);
}

/* ---- shards: the accumulators through their byte form, merged ------------------------ */

/* Every baseline value of each channel of the tracked activations (the exact reference). */
typedef struct QtPsCap {
    QrDsStatRun *run;
    int match;
    int64_t n_ch, inner;
    float *vals[64];
    int64_t n[64], cap[64];
} QtPsCap;

static QrStatus qt_ps_match(void *user, int match, const float *x, const float *y, int64_t n) {
    QtPsCap *c = user;
    if (c->run) QR_TRY(qr_dist_acc_pair(&c->run->dist, match, x, y, n));
    if (match != c->match) return QR_OK;
    for (int64_t o = 0; o < n / (c->n_ch * c->inner); o++)
        for (int64_t ch = 0; ch < c->n_ch && ch < 64; ch++)
            for (int64_t j = 0; j < c->inner; j++) {
                if (c->n[ch] == c->cap[ch]) {
                    c->cap[ch] = c->cap[ch] ? 2 * c->cap[ch] : 1024;
                    c->vals[ch] = realloc(c->vals[ch], (size_t)c->cap[ch] * sizeof(float));
                }
                c->vals[ch][c->n[ch]++] = x[(o * c->n_ch + ch) * c->inner + j];
            }
    return QR_OK;
}

static QrStatus qt_ps_anal_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtPsCap *c = user;
    return qr_statset_tap(&c->run->prof[1], g, node, value, t);
}

/* Runs shard `shard` of n_shards (n_shards 0: every sample) through a QrDsStatRun and, when part
 * is given, writes the shard's .qrpart with the run's section (analysis/dspart). */
static QrStatus qt_ps_run(QtDs *t, QrDistSet *dset, int shard, int n_shards, QrDsStatRun *run, QtPsCap *cap,
                          const char *part) {
    QR_TRY(qr_dsstat_run_init(run, &t->se, dset));
    cap->run = run;
    QrCmpHooks hk = { .tap = qt_ps_anal_tap, .match = qt_ps_match, .user = cap };
    QrDsCompare d;
    QR_TRY(qr_ds_compare_init(&d, &t->se, t->ds.n, t->ds.names));
    d.base_tap = qr_dsstat_base_tap;
    d.base_tap_user = run;
    d.hooks = &hk;
    int lo = 0, hi = t->ds.n;
    if (n_shards) qr_dspart_shard_range(t->ds.n, shard, n_shards, &lo, &hi);
    QrTensor cur = {0};
    QrStatus st = QR_OK;
    for (int k = lo; st == QR_OK && k < hi; k++) {
        st = qr_dsset_read(&t->ds, t->p.b, k, &t->p.in, &cur);
        if (st == QR_OK) st = qr_ds_compare_sample(&d, &t->se, "sim", k, &cur);
        if (st == QR_OK) run->n_samples++;
        qr_tensor_free_data(&cur);
    }
    run->hooks.tap_done = hk.tap_done;
    t->se.inputs = &t->p.in;
    if (st == QR_OK && part) {
        static const char *const key[] = { "command" }, *const val[] = { "runall" };
        QrDsSection sec = { "dsstat", run, qr_dspart_dsstat_put, qr_dspart_dsstat_merge };
        st = qr_dspart_write(part, "runall", &d, &t->ds, &t->se, key, val, 1, shard, n_shards, &sec, 1);
    }
    qr_ds_compare_free(&d);
    return st;
}

static int qt_ps_cmpf(const void *pa, const void *pb) {
    float x = *(const float *)pa, y = *(const float *)pb;
    return (x > y) - (x < y);
}

static void test_dsstat_shards(void) {
    QtDs t;
    QT_OK(qt_ds_open(&t, "ort_qdq", NULL));
    QrDistSet dset[4];
    memset(dset, 0, sizeof dset);
    const char *names[] = { "/dw_relu/Relu_output_0" };
    QrStatus st = QR_OK;
    for (int i = 0; st == QR_OK && i < 4; i++) st = qr_dist_collect(&t.se, NULL, names, 1, 0, &dset[i]);
    if (st != QR_OK || dset[0].n != 1 || dset[0].d[0].match < 0) {
        qt_ds_close(&t);
        QT_CHECKF(false, "distribution request: %s (n %d)", qr_err_msg(), dset[0].n);
    }
    const QrDist *d0 = &dset[0].d[0];
    QtPsCap cap = { .match = d0->match, .n_ch = d0->n_ch, .inner = 1 };
    for (int k = d0->ch_axis + 1; k < d0->rank; k++) cap.inner *= d0->dims[k];
    QtPsCap none = { .match = -2 };
    QrDsStatRun one, part[3], m0;
    memset(part, 0, sizeof part);
    memset(&m0, 0, sizeof m0);
    QrDsStatRun *m = &m0;
    char pp[3][512];
    st = qt_ps_run(&t, &dset[0], 0, 0, &one, &cap, NULL);
    for (int r = 0; st == QR_OK && r < 3; r++) {
        snprintf(pp[r], sizeof pp[r], "%s/pss_%d.qrpart", qt_tmpdir(), r);
        st = qt_ps_run(&t, &dset[1], r, 3, &part[r], &none, pp[r]);
    }
    /* qreport merge's path: read the parts, check them, load them in the order 2, 0, 1 into fresh accumulators */
    QrDsPart parts[3];
    memset(parts, 0, sizeof parts);
    QrDsCompare dm = {0};
    static const int order[3] = { 2, 0, 1 };
    for (int r = 0; st == QR_OK && r < 3; r++) st = qr_dspart_read(pp[order[r]], &parts[r]);
    if (st == QR_OK) st = qr_dspart_check(parts, 3);
    if (st == QR_OK) st = qr_dsstat_run_init(m, &t.se, &dset[1]);
    if (st == QR_OK) st = qr_ds_compare_init(&dm, &t.se, t.ds.n, t.ds.names);
    QrDsSection sec = { "dsstat", m, qr_dspart_dsstat_put, qr_dspart_dsstat_merge };
    for (int r = 0; st == QR_OK && r < 3; r++) st = qr_dspart_load(&parts[r], &t.se, &dm, &sec, 1);
    for (int r = 0; r < 3; r++) qr_dspart_free(&parts[r]);
    qr_ds_compare_free(&dm);
    /* the profiles: the same bytes */
    char d1[512], d2[512];
    snprintf(d1, sizeof d1, "%s/pss_one", qt_tmpdir());
    snprintf(d2, sizeof d2, "%s/pss_merged", qt_tmpdir());
    if (st == QR_OK) st = qr_mkdir_p(d1);
    if (st == QR_OK) st = qr_mkdir_p(d2);
    if (st == QR_OK) st = qr_dsstat_run_finish(&one, &t.se, "data", d1);
    if (st == QR_OK) st = qr_dsstat_run_finish(m, &t.se, "data", d2);
    bool same = true;
    static const char *const files[] = { "model0_statistic.txt", "model0_statistic.csv", "model1_statistic.txt", "model1_statistic.csv" };
    for (int f = 0; st == QR_OK && f < 4; f++) {
        char a[600], b[600];
        snprintf(a, sizeof a, "%s/%s", d1, files[f]);
        snprintf(b, sizeof b, "%s/%s", d2, files[f]);
        same &= qt_files_equal(a, b);
    }
    /* histograms exact; box quantiles of both within their sketch's bound of the exact ones */
    char msg[512] = "";
    const QrDist *x = &dset[0].d[0], *y = &dset[1].d[0];
    if (st == QR_OK && (x->n_samples != 6 || y->n_samples != 6 || x->n != y->n || x->n_bins != y->n_bins ||
                        memcmp(x->h_base, y->h_base, (size_t)x->n_bins * sizeof(int64_t)) ||
                        memcmp(x->h_anal, y->h_anal, (size_t)x->n_bins * sizeof(int64_t)) ||
                        memcmp(x->h_err, y->h_err, (size_t)x->n_bins * sizeof(int64_t)) || x->n_below != y->n_below ||
                        x->n_above != y->n_above))
        snprintf(msg, sizeof msg, "histograms differ after merging (%d/%d samples)", x->n_samples, y->n_samples);
    int64_t worst_seen = 0, worst_bound = 0, nvals = 0;
    for (int c = 0; st == QR_OK && !msg[0] && c < x->n_ch && c < 64; c++) {
        int64_t n = cap.n[c];
        float *v = cap.vals[c];
        qsort(v, (size_t)n, sizeof *v, qt_ps_cmpf);
        nvals = n;
        const QrSketch *sk[2] = { &one.dist.a[0].sk[c], &m->dist.a[0].sk[c] };
        const QrChannelBox *bx[2] = { &x->ch[c], &y->ch[c] };
        for (int w = 0; w < 2 && !msg[0]; w++) {
            int64_t E = sk[w]->err;
            if (E > worst_bound) worst_bound = E;
            double qv[3] = { bx[w]->q1, bx[w]->median, bx[w]->q3 }, qs[3] = { 0.25, 0.5, 0.75 };
            if (sk[w]->n != n || bx[w]->min != v[0] || bx[w]->max != v[n - 1])
                snprintf(msg, sizeof msg, "channel %d (%s): n %lld vs %lld or min/max differ", c, w ? "merged" : "one pass",
                         (long long)sk[w]->n, (long long)n);
            for (int k = 0; k < 3 && !msg[0]; k++) {
                double pos = qs[k] * (double)(n - 1);
                int64_t j = (int64_t)floor(pos);
                double lo = v[j - E < 0 ? 0 : j - E], hi = v[j + 1 + E > n - 1 ? n - 1 : j + 1 + E];
                if (!(qv[k] >= lo && qv[k] <= hi))
                    snprintf(msg, sizeof msg, "channel %d (%s) q%.2f: %.9g outside [%.9g, %.9g] (err %lld of %lld)", c,
                             w ? "merged" : "one pass", qs[k], qv[k], lo, hi, (long long)E, (long long)n);
                int64_t cl = qt_sk_count_less(v, n, qv[k]), ce = qt_sk_count_leq(v, n, qv[k]);
                int64_t dd = (double)cl > pos ? (int64_t)ceil((double)cl - pos) : pos > (double)(ce - 1) ? (int64_t)ceil(pos - (double)(ce - 1)) : 0;
                if (dd > worst_seen) worst_seen = dd;
            }
        }
    }
    if (qt_verbose && st == QR_OK)
        printf("     shards: %d channels x %lld values; quartile rank error seen %lld, bound up to %lld\n", x->n_ch,
               (long long)nvals, (long long)worst_seen, (long long)worst_bound);
    for (int c = 0; c < 64; c++) free(cap.vals[c]);
    qr_dsstat_run_free(&one);
    for (int r = 0; r < 3; r++) qr_dsstat_run_free(&part[r]);
    qr_dsstat_run_free(&m0);
    for (int i = 0; i < 4; i++) qr_dist_free(&dset[i]);
    qt_ds_close(&t);
    QT_OK(st);
    QT_CHECKF(same, "the merged profiles differ from one pass");
    QT_CHECKF(!msg[0], "%s", msg);
    QT_CHECKF(worst_bound > 0, "no compaction: the sketch bound was not exercised");
}

static void qt_dsstat_all(void) {
    QT_RUN(test_dsstat_profile_ref);
    QT_RUN(test_dsstat_runall);
    QT_RUN(test_dsstat_shards);
}
