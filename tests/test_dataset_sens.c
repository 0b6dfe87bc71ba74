/* tests/test_dataset_sens — data-set sensitivity, cumulative-error curves over samples, the
 * .qrpart section hook and sharded sensitivity/runall merges (analysis/sens, analysis/dspart).
 * Included after test_dataset.c (uses its QtDs helpers). */

/* ---- .qrpart sections ----------------------------------------------------------------- */

typedef struct QtSec { QrXSum sum; int64_t count; int merged; } QtSec;
static void qt_sec_put(QrDsW *w, const void *acc) {
    const QtSec *s = acc;
    qr_dspart_put_xsum(w, &s->sum);
    qr_dspart_put_u64(w, (uint64_t)s->count);
}
static QrStatus qt_sec_merge(QrDsR *r, void *acc) {
    QtSec *s = acc;
    QrXSum x;
    qr_dspart_get_xsum(r, &x);
    int64_t c = (int64_t)qr_dspart_get_u64(r);
    if (qr_dspart_bad(r)) return qr_errf(QR_ERR_INVALID, "short");
    qr_dsacc_xsum_merge(&s->sum, &x);
    s->count += c;
    s->merged++;
    return QR_OK;
}

/* An extra section travels with a part: written by shards, read back and merged by name; a
 * part without it, or with one the merge does not expect, is refused naming file and section. */
static void test_dataset_sens_section(void) {
    QtDs t;
    QrStatus st = qt_ds_open(&t, "ort_qdq", NULL);
    QrDsCompare d[2], m;
    memset(d, 0, sizeof d);
    memset(&m, 0, sizeof m);
    QtSec acc[2], into;
    memset(acc, 0, sizeof acc);
    memset(&into, 0, sizeof into);
    const char *keys[] = { "command" }, *vals[] = { "compare" };
    char path[2][600];
    double want = 0;
    for (int k = 0; st == QR_OK && k < 2; k++) {
        st = qt_ds_run(&t, "sim", 2, k, &d[k]);
        for (int i = 0; i < 5; i++) { double v = 0.1 * (k + 1) + i * 1e-17; qr_dsacc_xsum_add(&acc[k].sum, v); want += v; }
        acc[k].count = 5 + k;
        snprintf(path[k], sizeof path[k], "%s/sec%d.qrpart", qt_tmpdir(), k);
        QrDsSection sec = { "qt_sec", &acc[k], qt_sec_put, qt_sec_merge };
        if (st == QR_OK) st = qr_dspart_write(path[k], "compare", &d[k], &t.ds, &t.se, keys, vals, 1, k, 2, &sec, 1);
    }
    QrDsPart p[2];
    memset(p, 0, sizeof p);
    if (st == QR_OK) st = qr_dspart_read(path[0], &p[0]);
    if (st == QR_OK) st = qr_dspart_read(path[1], &p[1]);
    if (st == QR_OK) st = qr_dspart_check(p, 2);
    if (st == QR_OK) st = qr_ds_compare_init(&m, &t.se, t.ds.n, t.ds.names);
    QrDsSection sec = { "qt_sec", &into, qt_sec_put, qt_sec_merge };
    for (int k = 1; st == QR_OK && k >= 0; k--) st = qr_dspart_load(&p[k], &t.se, &m, &sec, 1);
    QT_OK(st);
    QrXSum ref;
    memset(&ref, 0, sizeof ref);
    for (int k = 0; k < 2; k++) qr_dsacc_xsum_merge(&ref, &acc[k].sum);
    QT_CHECKF(into.merged == 2 && into.count == 11 && qr_dsacc_xsum_value(&into.sum) == qr_dsacc_xsum_value(&ref),
              "merged %d count %lld", into.merged, (long long)into.count);
    QT_CHECK(m.n_done == t.ds.n);
    /* not requested / missing */
    QrDsCompare m2 = {0};
    QT_OK(qr_ds_compare_init(&m2, &t.se, t.ds.n, t.ds.names));
    st = qr_dspart_load(&p[0], &t.se, &m2, NULL, 0);
    QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), "sec0.qrpart") && strstr(qr_err_msg(), "'qt_sec'"), "%s", qr_err_msg());
    qr_err_clear();
    QrDsSection other = { "qt_other", &into, qt_sec_put, qt_sec_merge };
    st = qr_dspart_load(&p[1], &t.se, &m2, &other, 1);
    QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), "sec1.qrpart") && strstr(qr_err_msg(), "no section 'qt_other'"), "%s",
              qr_err_msg());
    qr_err_clear();
    qr_ds_compare_free(&m2);
    (void)want;
    for (int k = 0; k < 2; k++) { qr_dspart_free(&p[k]); qr_ds_compare_free(&d[k]); }
    qr_ds_compare_free(&m);
    qt_ds_close(&t);
}

/* ---- sensitivity and cumulative error over samples ----------------------------------- */

static bool qt_rel_close(double a, double b, double tol) {
    if (a != a || b != b) return a != a && b != b;
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) || a == b;
}

/* The pass over the 3 worst samples against an independent computation: each sample run on
 * its own (qr_sens_run, qr_accum_run_sets with the pooled ranking) — pooled L1/MSE are the
 * means of the per-sample values (equal element counts), each row's rank on a sample is its
 * position in that sample's own ranking, the curves' _mean columns the per-sample means and
 * their pooled MSE the mean of the per-sample MSEs (within 1e-12 relative). */
static void qt_sens_set_ref(const char *pair, bool off_one) {
    QtDs t;
    QrStatus st = qt_ds_open(&t, pair, NULL);
    QrDsCompare dc;
    memset(&dc, 0, sizeof dc);
    if (st == QR_OK) st = qt_ds_run(&t, "sim", 0, 0, &dc);
    QT_OK(st);
    int order[64], K = 3, topk[2] = { 1, 3 };
    qr_ds_rank_samples(&dc, QR_METRIC_L1, order);
    QrSensOpts so = { .off_one = off_one, .metric = QR_METRIC_L1 };
    QrSensSet ss;
    st = qr_sens_set_run(&t.se, &so, &t.ds, order, K, QR_METRIC_L1, topk, 2, NULL, QR_METRIC_MSE, NULL, 0, NULL, -1, &ss);
    QT_OK(st);
    QT_CHECK(ss.done_j == -1);
    /* the second sample's rows run ahead (qr_sens_run_keep, as runall's sensitivity stage on the worst
     * sample) and given as done: taken instead of run (one pass over the rows fewer), every number the same */
    {
        QrTensor cur2 = {0};
        QrSensFeed nf2 = {0};
        QrSensResult pre;
        QrSensSet ss2;
        st = qr_dsset_read(&t.ds, t.p.b, order[1], &t.p.in, &cur2);
        if (st == QR_OK) {
            qr__sens_use_inputs(&t.se, &cur2, &nf2, NULL);
            st = qr_sens_run_keep(&t.se, &so, &pre);
            qr__sens_use_inputs(&t.se, &t.p.in, &nf2, NULL);
        }
        QT_OK(st);
        QT_CHECK(pre.acc != NULL && !pre.grouped);
        int64_t passes0 = qr_sens_row_passes;
        if (st == QR_OK) st = qr_sens_set_run(&t.se, &so, &t.ds, order, K, QR_METRIC_L1, topk, 2, NULL, QR_METRIC_MSE, NULL, 0,
                                              &pre, order[1], &ss2);
        QT_OK(st);
        QT_CHECKF(ss2.done_j == 1 && qr_sens_row_passes - passes0 == K - 1, "done_j %d, %lld row passes for %d samples",
                  ss2.done_j, (long long)(qr_sens_row_passes - passes0), K);
        int diff = ss2.r.n != ss.r.n || memcmp(&ss2.r.reference, &ss.r.reference, sizeof ss.r.reference) ||
                   ss2.n_top5_same != ss.n_top5_same || ss2.r.n_exec != ss.r.n_exec;
        for (int p = 0; !diff && p < ss.r.n; p++)
            diff += ss2.r.rows[p].id != ss.r.rows[p].id || memcmp(&ss2.r.rows[p].m, &ss.r.rows[p].m, sizeof ss.r.rows[p].m) ||
                    strcmp(ss2.r.rows[p].name, ss.r.rows[p].name) || strcmp(ss2.r.rows[p].dtype, ss.r.rows[p].dtype);
        for (int p = 0; !diff && p < ss.r.n * K; p++) diff += ss2.rank[p] != ss.rank[p];
        QT_CHECKF(!diff, "%s: the data-set sensitivity with a sample's rows done ahead differs", pair);
        /* options that change the rows: not taken */
        QrSensOpts so2 = so;
        so2.off_one = !so.off_one;
        QrSensSet ss3;
        passes0 = qr_sens_row_passes;
        if (st == QR_OK) st = qr_sens_set_run(&t.se, &so2, &t.ds, order, K, QR_METRIC_L1, NULL, 0, NULL, QR_METRIC_MSE, NULL, 0,
                                              &pre, order[1], &ss3);
        QT_OK(st);
        QT_CHECK(ss3.done_j == -1 && qr_sens_row_passes - passes0 == K);
        /* another sort key: the same rows, taken (the ranking is this pass's own) */
        QrSensOpts so4 = so;
        so4.metric = QR_METRIC_MSE;
        QrSensSet ss4;
        if (st == QR_OK) st = qr_sens_set_run(&t.se, &so4, &t.ds, order, K, QR_METRIC_L1, NULL, 0, NULL, QR_METRIC_MSE, NULL, 0,
                                              &pre, order[1], &ss4);
        QT_OK(st);
        if (st == QR_OK) {
            QT_CHECK(ss4.done_j == 1 && ss4.r.opts.metric == QR_METRIC_MSE);
            qr_sens_set_free(&ss4);
        }
        /* a grouped pass (forced here) keeps no accumulators: nothing to take */
        QrSensOpts sog = so;
        sog.grouped = 1;
        QrSensResult preg;
        if (st == QR_OK) st = qr_sens_run_keep(&t.se, &sog, &preg);
        QT_OK(st);
        if (st == QR_OK) {
            QT_CHECKF(preg.grouped ? preg.acc == NULL : preg.acc != NULL, "grouped %d, accumulators %s", preg.grouped,
                      preg.acc ? "kept" : "not kept");
            qr_sens_free(&preg);
        }
        if (st == QR_OK) { qr_sens_set_free(&ss2); qr_sens_set_free(&ss3); qr_sens_free(&pre); }
        qr_tensor_free_data(&cur2);
    }
    QT_CHECK(t.se.inputs == &t.p.in);
    int n = ss.r.n, nm = t.se.m.n, ns = ss.acc.n_settings;
    double *l1 = calloc((size_t)n, sizeof *l1), *mse = calloc((size_t)n, sizeof *mse);
    double *cv = calloc((size_t)nm * (size_t)ns, sizeof *cv);
    int *cn = calloc((size_t)nm * (size_t)ns, sizeof *cn);
    QrTensor cur = {0};
    QrSensFeed nf = {0};                     /* (the session's baseline values are its own) */
    int bad_rank = 0, bad_l1 = 0, bad_curve = 0, bad_pool = 0, checked = 0;
    for (int j = 0; st == QR_OK && j < K; j++) {
        st = qr_dsset_read(&t.ds, t.p.b, order[j], &t.p.in, &cur);
        if (st != QR_OK) break;
        qr__sens_use_inputs(&t.se, &cur, &nf, NULL);
        QrSensResult r;
        st = qr_sens_run(&t.se, &so, &r);
        for (int p = 0; st == QR_OK && p < r.n; p++) {
            int id = r.rows[p].id;
            l1[id] += r.rows[p].m.l1 / K;
            mse[id] += r.rows[p].m.mse / K;
            bad_rank += ss.rank[(size_t)id * (size_t)K + (size_t)j] != p + 1;
        }
        if (st == QR_OK) qr_sens_free(&r);
        QrAccum a;
        if (st == QR_OK) st = qr_accum_run_sets(&t.se, &ss.r, topk, 2, NULL, QR_METRIC_MSE, &a);
        for (size_t c = 0; st == QR_OK && c < (size_t)nm * (size_t)ns; c++)
            if (a.val[c] == a.val[c]) { cv[c] += a.val[c]; cn[c]++; }
        if (st == QR_OK) qr_accum_free(&a);
        qr_tensor_free_data(&cur);
    }
    qr__sens_use_inputs(&t.se, &t.p.in, &nf, NULL);
    QT_OK(st);
    for (int p = 0; p < n; p++) {
        const QrSensRow *row = &ss.r.rows[p];
        bad_l1 += !qt_rel_close(row->m.l1, l1[row->id], 1e-12) || !qt_rel_close(row->m.mse, mse[row->id], 1e-12);
    }
    for (size_t c = 0; c < (size_t)nm * (size_t)ns; c++) {
        if (cn[c] != K) continue;
        checked++;
        bad_curve += !qt_rel_close(ss.mean[c], cv[c] / K, 1e-12);
        bad_pool += !qt_rel_close(ss.acc.val[c], cv[c] / K, 1e-12);   /* pooled MSE = mean MSE (same element count) */
        bad_curve += !(ss.p05[c] <= ss.mean[c] * (1 + 1e-12) + 1e-300 && ss.mean[c] <= ss.p95[c] * (1 + 1e-12) + 1e-300);
    }
    QT_CHECKF(n > 3 && checked > 10 && !bad_rank && !bad_l1 && !bad_curve && !bad_pool,
              "%s%s: %d rows, %d curve cells: ranks %d, pooled L1/MSE %d, curve mean/band %d, pooled curve %d wrong", pair,
              off_one ? " off-one" : "", n, checked, bad_rank, bad_l1, bad_curve, bad_pool);
    free(l1); free(mse); free(cv); free(cn);
    qr_sens_set_free(&ss);
    qr_ds_compare_free(&dc);
    qt_ds_close(&t);
}

static void test_dataset_sens_ref(void) {
    qt_sens_set_ref("qat_fakequant", false);
    qt_sens_set_ref("ort_qdq", false);
    qt_sens_set_ref("ort_qdq", true);
}

/* sensitivity --data --shard K/N into parts, qreport merge (shuffled): the merge ranks the
 * samples on the merged table, runs the pass on the same K worst and writes the same bytes as
 * one process (sensitive_ops.*, accumulated_error.csv); off-one with --sens-samples 2 and
 * --topk-list too. Mixed commands, a missing option and a missing shard are refused. */
static void test_dataset_sens_shard(void) {
    QtCli r;
    const char *P = "fixtures/qpairs/qat_fakequant", *T = qt_tmpdir();
    const char *files[] = { "sensitive_ops.txt", "sensitive_ops.csv", "sensitive_ops.json", "accumulated_error.csv" };
    const char *opts[2] = { "", "--sensitivity off-one --sens-samples 2 --topk-list 1,2 --metric Cosine" };
    for (int v = 0; v < 2; v++) {
        qt_cli(&r, "sensitivity %s/base.onnx %s/analysis.onnx --data %s/data %s -o %s/ss_one%d --quiet", P, P, P, opts[v], T, v);
        QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
        for (int k = 0; k < 3; k++) {
            qt_cli(&r, "sensitivity %s/base.onnx %s/analysis.onnx --data %s/data %s --shard %d/3 -o %s/ss%d_%d.qrpart --quiet", P,
                   P, P, opts[v], k, T, v, k);
            QT_CHECKF(r.code == 0, "shard %d exit %d: %s", k, r.code, r.err);
        }
        qt_cli(&r, "merge %s/ss%d_2.qrpart %s/ss%d_0.qrpart %s/ss%d_1.qrpart -o %s/ss_m%d --quiet", T, v, T, v, T, v, T, v);
        QT_CHECKF(r.code == 0, "merge exit %d: %s", r.code, r.err);
        for (int f = 0; f < QR_ARRAY_LEN(files); f++) {
            char a[600], b[600];
            snprintf(a, sizeof a, "%s/ss_one%d/%s", T, v, files[f]);
            snprintf(b, sizeof b, "%s/ss_m%d/%s", T, v, files[f]);
            QT_CHECKF(qt_files_equal(a, b), "%s differs between the single run and the merge (variant %d)", files[f], v);
        }
    }
    char p[600], buf[8192];
    snprintf(p, sizeof p, "%s/ss_one1/sensitive_ops.txt", T);
    qt_slurp(p, buf, sizeof buf);
    QT_CHECKF(strstr(buf, "pooled over the 2 worst samples") && strstr(buf, "gain") && strstr(buf, "rank_median"), "%.800s", buf);
    /* refusals */
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx --data %s/data --shard 1/3 -o %s/ss_cmp.qrpart --quiet", P, P, P, T);
    QT_CHECKF(r.code == 0, "%s", r.err);
    qt_cli(&r, "merge %s/ss0_0.qrpart %s/ss_cmp.qrpart %s/ss0_2.qrpart -o %s/ss_bad --quiet", T, T, T, T);
    QT_CLI_FAILS(r, "ss_cmp.qrpart", "'compare --shard'", "'sensitivity --shard'");
    qt_cli(&r, "merge %s/ss0_0.qrpart %s/ss1_1.qrpart %s/ss0_2.qrpart -o %s/ss_bad --quiet", T, T, T, T);
    QT_CLI_FAILS(r, "ss1_1.qrpart", "different options");
    qt_cli(&r, "merge %s/ss0_0.qrpart %s/ss0_2.qrpart -o %s/ss_bad --quiet", T, T, T);
    QT_CLI_FAILS(r, "missing shard(s) 1");
    snprintf(p, sizeof p, "%s/ss_bad/sensitive_ops.txt", T);
    uint64_t sz;
    QT_CHECKF(qr_file_size(p, &sz) != QR_OK, "merge wrote tables after failing");
    qr_err_clear();
    /* usage errors */
    qt_cli(&r, "sensitivity %s/base.onnx %s/analysis.onnx --data %s/data --sens-samples 0 -o %s/ss_x --quiet", P, P, P, T);
    QT_CHECKF(r.code == 2 && strstr(r.err, "--sens-samples"), "exit %d: %s", r.code, r.err);
    qt_cli(&r, "sensitivity %s/base.onnx %s/analysis.onnx --shard 0/2 -o %s/ss_x --quiet", P, P, T);
    QT_CHECKF(r.code == 2 && strstr(r.err, "--shard needs --data"), "exit %d: %s", r.code, r.err);
}

/* runall --data: dataset/sensitive_ops.* and accumulated_error.csv equal sensitivity --data's
 * (same options: the pass does not depend on the sample the session was opened on), the plots
 * exist, summary.json and the HTML carry the rank stability. */
static void test_dataset_sens_runall(void) {
    QtCli r;
    const char *P = "fixtures/qpairs/ort_qdq", *T = qt_tmpdir();
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx --data %s/data --sens-samples 3 -o %s/dsr3.zip --keep-dir %s/dsr3 --quiet",
           P, P, P, T, T);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "sensitivity %s/base.onnx %s/analysis.onnx --data %s/data --sens-samples 3 -o %s/dsr3_sens --quiet", P, P, P, T);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    const char *files[] = { "sensitive_ops.txt", "sensitive_ops.csv", "sensitive_ops.json", "accumulated_error.csv" };
    for (int f = 0; f < QR_ARRAY_LEN(files); f++) {
        char a[600], b[600];
        snprintf(a, sizeof a, "%s/dsr3_sens/%s", T, files[f]);
        snprintf(b, sizeof b, "%s/dsr3/dataset/%s", T, files[f]);
        QT_CHECKF(qt_files_equal(a, b), "%s differs between runall --data and sensitivity --data", files[f]);
    }
    char p[600];
    static char buf[1 << 20];
    uint64_t sz = 0;
    const char *pngs[] = { "plots/dataset_samples.png", "plots/dataset_accumulated_error.png" };
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/dsr3/%s", T, pngs[i]);
        QT_CHECKF(qr_file_size(p, &sz) == QR_OK && sz > 1000, "%s missing", p);
    }
    snprintf(p, sizeof p, "%s/dsr3/summary.json", T);
    qt_slurp(p, buf, sizeof buf);
    QT_CHECKF(strstr(buf, "\"dataset_sensitivity\": {") && strstr(buf, "\"sens_samples\": 3") && strstr(buf, "\"rank_median\""),
              "%.3000s", strstr(buf, "dataset_sensitivity") ? strstr(buf, "dataset_sensitivity") : buf);
    snprintf(p, sizeof p, "%s/dsr3/index.html", T);
    qt_slurp(p, buf, sizeof buf);
    QT_CHECK(strstr(buf, "plots/dataset_accumulated_error.png") && strstr(buf, "plots/dataset_samples.png") &&
             strstr(buf, "share the pooled top 5") && strstr(buf, "dataset/sensitive_ops.csv"));
}

/* The band of a line chart: a column through it has the band's tint over the p05..p95 span
 * (about half the plot height here) and none without it. */
static void test_dataset_sens_band(void) {
    double y[10], lo[10], hi[10];
    for (int i = 0; i < 10; i++) { y[i] = 0.5; lo[i] = 0.25; hi[i] = 0.75; }
    y[0] = 0; y[9] = 1;                        /* the range 0..1 */
    const double *l[1] = { lo }, *h[1] = { hi };
    QrSeries s = { "mean", y, false };
    int tinted[2] = { 0, 0 };
    for (int b = 0; b < 2; b++) {
        QrLineChart lc = { .title = "band", .n_x = 10, .n_panels = 1, .width = 400, .height = 300 };
        lc.panels[0] = (QrLinePanel){ .series = &s, .n_series = 1, .y_scale = QR_SCALE_LINEAR, .band_lo = b ? l : NULL,
                                      .band_hi = b ? h : NULL };
        QrCanvas c;
        QT_OK(qr_plot_line(&lc, &c));
        for (int yy = 0; yy < c.h; yy++) {
            QrColor k = qr_canvas_get(&c, 200, yy);
            tinted[b] += k.b > k.r + 20 && k.r > 120;   /* a light blue (palette 0 at low alpha on white) */
        }
        qr_canvas_free(&c);
    }
    QT_CHECKF(tinted[0] == 0 && tinted[1] > 60, "tinted pixels in a column: %d without the band, %d with", tinted[0], tinted[1]);
}

/* Two unzipped bundles (a single runall --data and a merge of its shards) equal file by file:
 * manifest.json but for its command line; every other file byte for byte — the profiles over the
 * set (model{0,1}_statistic.*, merged from the parts' "dsprof" sections), the distributions over
 * the set (accumulated by the merge), index.html and summary.json included. */
static bool qt_bundles_same(const char *d0, const char *d1, char *msg, size_t n) {
    static const char *const skip = "--exclude=manifest.json";
    static const char *const keys = "\"command_line\"";
    char cmd[3000], full[700], script[600];          /* run from a script file: no nested quoting */
    snprintf(cmd, sizeof cmd, "diff -r %s %s %s >/dev/null 2>&1 && "
             "diff <(grep -v '%s' %s/manifest.json) <(grep -v '%s' %s/manifest.json) >/dev/null",
             skip, d0, d1, keys, d0, keys, d1);
    snprintf(script, sizeof script, "%s/qt_same.sh", qt_tmpdir());
    FILE *f = fopen(script, "w");
    if (!f) { snprintf(msg, n, "cannot write %s", script); return false; }
    fprintf(f, "%s\n", cmd);
    fclose(f);
    snprintf(full, sizeof full, "bash %s", script);
    int rc = system(full);
    if (rc != 0) {
        snprintf(cmd, sizeof cmd, "diff -rq %s %s %s 2>&1 | head -5", skip, d0, d1);
        FILE *p = popen(cmd, "r");
        size_t l = p ? fread(msg, 1, n - 1, p) : 0;
        msg[l] = 0;
        if (p) pclose(p);
        if (!l) snprintf(msg, n, "manifest.json differs beyond the command line");
    }
    return rc == 0;
}

/* --skip-bad-samples with --shard: each shard skips its bad samples and lists them (with the
 * error naming each) in its part; the merge lists them too and writes what one process with the
 * flag writes, byte for byte (runall's bundle, compare's tables). Bad samples: 0.npy and 1.npy
 * (shard 0/3 has no good sample left: no error for a shard; the merge infers the graphs on the
 * first sample that reads, as the shards do) and 3.npy. Parts made with and without the flag do
 * not merge; without it a shard fails naming its bad sample. */
static void test_dataset_sens_shard_skip(void) {
    QtCli r;
    const char *P = "fixtures/qpairs/qat_fakequant", *T = qt_tmpdir();
    char d[512], cmd[1400];
    snprintf(d, sizeof d, "%s/skipdata", T);
    qt_fmt(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && cp %s/data/*.npy %s/ && for f in 0 1 3; do head -c 300 %s/data/$f.npy "
             "> %s/$f.npy; done", d, d, P, d, P, d);
    QT_CHECK(system(cmd) == 0);
    setenv("SOURCE_DATE_EPOCH", "1", 1);
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx --data %s --sens-samples 2 --skip-bad-samples -o %s/rsk_one.zip "
           "--keep-dir %s/rsk_one --quiet", P, P, d, T, T);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    for (int k = 0; k < 3; k++) {
        qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx --data %s --sens-samples 2 --skip-bad-samples --shard %d/3 "
               "-o %s/rsk%d.qrpart --quiet", P, P, d, k, T, k);
        QT_CHECKF(r.code == 0, "shard %d exit %d: %s", k, r.code, r.err);
    }
    qt_cli(&r, "merge %s/rsk2.qrpart %s/rsk0.qrpart %s/rsk1.qrpart -o %s/rsk_m.zip --keep-dir %s/rsk_m --quiet", T, T, T, T, T);
    QT_CHECKF(r.code == 0, "merge exit %d: %s", r.code, r.err);
    char d0[600], d1[600], msg[2048] = "";
    snprintf(d0, sizeof d0, "%s/rsk_one", T);
    snprintf(d1, sizeof d1, "%s/rsk_m", T);
    QT_CHECKF(qt_bundles_same(d0, d1, msg, sizeof msg), "merged bundle differs: %s", msg);
    static char sb[1 << 16];
    snprintf(d1, sizeof d1, "%s/rsk_m/dataset/samples.txt", T);
    qt_slurp(d1, sb, sizeof sb);
    QT_CHECKF(strstr(sb, "3 samples skipped (--skip-bad-samples), in no table:\n  skipped 0.npy: ") &&
              strstr(sb, "\n  skipped 1.npy: ") && strstr(sb, "\n  skipped 3.npy: "), "%s", sb);
    /* compare: the merged tables are one process's */
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx --data %s --skip-bad-samples -o %s/csk_one --quiet", P, P, d, T);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    for (int k = 0; k < 2; k++) {
        qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx --data %s --skip-bad-samples --shard %d/2 -o %s/csk%d.qrpart --quiet",
               P, P, d, k, T, k);
        QT_CHECKF(r.code == 0, "compare shard %d exit %d: %s", k, r.code, r.err);
    }
    qt_cli(&r, "merge %s/csk1.qrpart %s/csk0.qrpart -o %s/csk_m --quiet", T, T, T);
    QT_CHECKF(r.code == 0, "merge exit %d: %s", r.code, r.err);
    bool ok = true;
    snprintf(d0, sizeof d0, "%s/csk_one", T);
    snprintf(d1, sizeof d1, "%s/csk_m", T);
    qt_ds_files_same(d0, d1, &ok, msg, sizeof msg);
    QT_CHECKF(ok, "%s", msg);
    /* without the flag: the shard fails naming its bad sample, writes no part; mixed parts do not merge */
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx --data %s --shard 1/2 -o %s/csk_x.qrpart --quiet", P, P, d, T);
    QT_CLI_FAILS(r, "0.npy");                /* the graphs are inferred on the set's first sample */
    uint64_t sz;
    snprintf(d1, sizeof d1, "%s/csk_x.qrpart", T);
    QT_CHECKF(qr_file_size(d1, &sz) != QR_OK, "a part after a failed shard");
    qr_err_clear();
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx --data %s/data --shard 1/2 -o %s/csk_y.qrpart --quiet", P, P, P, T);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "compare %s/base.onnx %s/analysis.onnx --data %s/data --skip-bad-samples --shard 0/2 -o %s/csk_z.qrpart --quiet",
           P, P, P, T);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "merge %s/csk_z.qrpart %s/csk_y.qrpart -o %s/csk_mx --quiet", T, T, T);
    QT_CLI_FAILS(r, "different options", "skip_bad_samples");
}

/* runall --data --shard K/N parts merged (out of order) give the bundle one process writes
 * (qt_bundles_same: every file but the manifest's command line, byte for byte; SOURCE_DATE_EPOCH
 * set) — the root analyses of the worst sample, dataset/ tables, the profiles over the set
 * (exact sums: the merge order does not matter), the distributions over the set, the data-set
 * sensitivity and its plots. The merge takes
 * runall's output options (--fail-if-cosine-below: exit 10, the bundle still written). */
static void test_dataset_sens_runall_shard(void) {
    QtCli r;
    const char *P = "fixtures/qpairs/qat_fakequant", *T = qt_tmpdir();
    setenv("SOURCE_DATE_EPOCH", "1", 1);
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx --data %s/data --sens-samples 3 -o %s/ras_one.zip --keep-dir %s/ras_one "
           "--quiet", P, P, P, T, T);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    for (int k = 0; k < 3; k++) {
        qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx --data %s/data --sens-samples 3 --shard %d/3 -o %s/ras%d.qrpart --quiet",
               P, P, P, k, T, k);
        QT_CHECKF(r.code == 0, "shard %d exit %d: %s", k, r.code, r.err);
    }
    qt_cli(&r, "merge %s/ras1.qrpart %s/ras2.qrpart %s/ras0.qrpart -o %s/ras_m.zip --keep-dir %s/ras_m --quiet", T, T, T, T, T);
    QT_CHECKF(r.code == 0, "merge exit %d: %s", r.code, r.err);
    char d0[600], d1[600], msg[2048] = "";
    snprintf(d0, sizeof d0, "%s/ras_one", T);
    snprintf(d1, sizeof d1, "%s/ras_m", T);
    QT_CHECKF(qt_bundles_same(d0, d1, msg, sizeof msg), "merged bundle differs: %s", msg);
    char cmd[1400];                               /* the comparison can fail: one changed byte is seen */
    snprintf(cmd, sizeof cmd, "rm -rf %s/ras_m2 && cp -r %s/ras_m %s/ras_m2 && printf x >> %s/ras_m2/dataset/samples.txt", T, T,
             T, T);
    QT_CHECK(system(cmd) == 0);
    snprintf(d1, sizeof d1, "%s/ras_m2", T);
    QT_CHECK(!qt_bundles_same(d0, d1, msg, sizeof msg) && strstr(msg, "samples.txt"));
    static char js[1 << 20];                      /* the merged profiles and distributions cover all 6 samples */
    snprintf(d1, sizeof d1, "%s/ras_m/summary.json", T);
    qt_slurp(d1, js, sizeof js);
    QT_CHECKF(strstr(js, "\"profile_samples\": 6,") && strstr(js, "\"profile_analysis_over_set\": true") &&
              strstr(js, "\"distribution_samples\": 6") && !strstr(js, "\"distributions_over_set\": 0,"), "%.300s",
              strstr(js, "profile_samples") ? strstr(js, "profile_samples") : "");
    snprintf(cmd, sizeof cmd, "grep -q 'Statistics over 6 samples' %s/ras_m/model0_statistic.txt && "
             "grep -q 'Statistics over 6 samples' %s/ras_m/model1_statistic.txt", T, T);
    QT_CHECKF(system(cmd) == 0, "the merged model0/1_statistic.txt are not the set's");
    snprintf(d1, sizeof d1, "%s/ras_m/dataset/sensitive_ops.txt", T);
    uint64_t sz = 0;
    QT_CHECK(qr_file_size(d1, &sz) == QR_OK && sz > 200);
    qt_cli(&r, "merge %s/ras1.qrpart %s/ras2.qrpart %s/ras0.qrpart -o %s/ras_g.zip --fail-if-cosine-below 1.5 --quiet", T, T, T, T);
    QT_CHECKF(r.code == 10, "gate: exit %d: %s", r.code, r.err);
    snprintf(d1, sizeof d1, "%s/ras_g.zip", T);
    QT_CHECK(qr_file_size(d1, &sz) == QR_OK && sz > 1000);
    qt_cli(&r, "merge %s/ras1.qrpart %s/ras0.qrpart -o %s/ras_x.zip --quiet", T, T, T);
    QT_CLI_FAILS(r, "missing shard(s) 2");
    snprintf(d1, sizeof d1, "%s/ras_x.zip", T);
    QT_CHECKF(qr_file_size(d1, &sz) != QR_OK, "a zip after a refused merge");
    qr_err_clear();
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx --shard 0/2 -o %s/ras_y.qrpart --quiet", P, P, T);
    QT_CLI_FAILS(r, "--shard needs --data");
    unsetenv("SOURCE_DATE_EPOCH");
}

/* A real Slurm job array (tests/slurm/run_array.sh: a single-node cluster of Debian's slurm-wlm
 * and munge) runs 4 runall --shard auto tasks; merging their parts gives the single-process
 * bundle (qt_bundles_same). Skipped, with the reason,
 * where that cluster cannot start. */
static void test_dataset_sens_slurm(void) {
    if (access("tests/slurm/run_array.sh", X_OK) != 0)
        QT_SKIP("the single-node Slurm harness (tests/slurm/run_array.sh) is not in this tree");
    const char *P = "fixtures/qpairs/ort_qdq";
    char bin[4096], tmp[4096], cmd[16384], log[8192], one[4200], m[4200], msg[2048] = "";
    const char *b = getenv("QR_BIN") ? getenv("QR_BIN") : "./qreport";
    if (strchr(b, ' ')) QT_SKIP("QR_BIN is a command line (%s, an emulator): the Slurm tasks need a binary path", b);
    QT_CHECKF(realpath(b, bin) && realpath(qt_tmpdir(), tmp), "cannot resolve %s or %s", b, qt_tmpdir());
    setenv("SOURCE_DATE_EPOCH", "1", 1);
    snprintf(cmd, sizeof cmd, "tests/slurm/run_array.sh 4 '%s runall %s/base.onnx %s/analysis.onnx --data %s/data "
             "--shard auto -o %s/slurm_ra$SLURM_ARRAY_TASK_ID.qrpart --quiet' >%s/slurm_ra.log 2>&1", bin, P, P, P, tmp, tmp);
    int rc = system(cmd);
    int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    snprintf(one, sizeof one, "%s/slurm_ra.log", tmp);
    qt_slurp(one, log, sizeof log);
    if (code == 77) {
        unsetenv("SOURCE_DATE_EPOCH");
        const char *why = strstr(log, "skip: ");
        QT_SKIP("Slurm cannot start here: %.300s", why ? why + 6 : log);
    }
    QtCli r;
    if (code == 0) {
        qt_cli(&r, "merge %s/slurm_ra3.qrpart %s/slurm_ra1.qrpart %s/slurm_ra0.qrpart %s/slurm_ra2.qrpart -o %s/slurm_ra_m.zip "
               "--keep-dir %s/slurm_ra_m --quiet", tmp, tmp, tmp, tmp, tmp, tmp);
        if (r.code == 0)
            qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx --data %s/data -o %s/slurm_ra_one.zip --keep-dir %s/slurm_ra_one "
                   "--quiet", P, P, P, tmp, tmp);
    }
    unsetenv("SOURCE_DATE_EPOCH");
    QT_CHECKF(code == 0, "run_array.sh exit %d:\n%s", code, log);
    QT_CHECKF(r.code == 0, "merge/runall exit %d: %s", r.code, r.err);
    snprintf(one, sizeof one, "%s/slurm_ra_one", tmp);
    snprintf(m, sizeof m, "%s/slurm_ra_m", tmp);
    QT_CHECKF(qt_bundles_same(one, m, msg, sizeof msg), "the Slurm-merged bundle differs: %s", msg);
}

static void qt_dataset_sens_all(void) {
    QT_RUN(test_dataset_sens_runall_shard);
    QT_RUN(test_dataset_sens_shard_skip);
    QT_RUN(test_dataset_sens_slurm);
    QT_RUN(test_dataset_sens_band);
    QT_RUN(test_dataset_sens_runall);
    QT_RUN(test_dataset_sens_shard);
    QT_RUN(test_dataset_sens_ref);
    QT_RUN(test_dataset_sens_section);
}
