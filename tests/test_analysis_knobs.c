/* tests/analysis_knobs — the investigation knobs of hmct-debugger / QuantAnalysis /
 * ModelProfiler users (analysis/select, issue 21), each checked against an independent
 * computation: node-set cumulative-error curves against models that have exactly those
 * quantizers (fixtures/make_knob_models.py), per-output ranking against a model with that
 * output alone, restricted rows against the unrestricted run, profile selections against
 * the whole table, box-plot axes against plain loops over the weight. */

#define QT_KN_PAIR "fixtures/qpairs/culprit"

/* A small CSV reader for the tables the CLI writes (no commas inside fields here). */
typedef struct QtCsv { char *buf; int n_rows, n_cols; char *cell[128][64]; } QtCsv;

static bool qt_csv_load(const char *path, QtCsv *c) {
    memset(c, 0, sizeof *c);
    unsigned char *b = NULL;
    size_t len = 0;
    if (qr_file_read(path, 0, &b, &len) != QR_OK) { qr_err_clear(); return false; }
    c->buf = realloc(b, len + 1);
    if (!c->buf) { free(b); return false; }
    c->buf[len] = 0;
    char *save = NULL;
    for (char *line = strtok_r(c->buf, "\n", &save); line && c->n_rows < 128; line = strtok_r(NULL, "\n", &save)) {
        int k = 0;
        for (char *p = line; p && k < 64;) {
            char *comma = strchr(p, ',');
            if (comma) *comma = 0;
            if (*p == '"') { p++; size_t l = strlen(p); if (l && p[l - 1] == '"') p[l - 1] = 0; }
            c->cell[c->n_rows][k++] = p;
            p = comma ? comma + 1 : NULL;
        }
        if (c->n_rows == 0) c->n_cols = k;
        c->n_rows++;
    }
    return c->n_rows > 0;
}

static int qt_csv_col(const QtCsv *c, const char *name) {
    for (int k = 0; k < c->n_cols; k++) if (c->cell[0][k] && !strcmp(c->cell[0][k], name)) return k;
    return -1;
}

/* The value of column col in the row whose column key_col is key, NAN when absent. */
static double qt_csv_get(const QtCsv *c, int key_col, const char *key, int col) {
    for (int r = 1; r < c->n_rows; r++)
        if (c->cell[r][key_col] && !strcmp(c->cell[r][key_col], key) && c->cell[r][col]) return strtod(c->cell[r][col], NULL);
    return NAN;
}

static void qt_csv_free(QtCsv *c) { free(c->buf); memset(c, 0, sizeof *c); }

/* --quantize-nodes / --non-quantize-nodes: each curve equals the per-layer Cosine of a model
 * built with exactly those quantizers (compare on that model, a different code path: the model
 * as given, no toggling). */
static void test_knobs_quantize_nodes(void) {
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_qn "
               "--quantize-nodes '/conv1/Conv;/conv1/Conv,/dw/Conv' --non-quantize-nodes /conv1/Conv --quiet", d);
    QT_CHECKF(r.code == 0, "sensitivity exit %d: %s", r.code, r.err);
    static const struct { const char *col, *model; } want[] = {
        { "quantize_node[/conv1/Conv]", "only_conv1" },
        { "quantize_node[/conv1/Conv;/dw/Conv]", "only_conv1_dw" },
        { "non_quantize_node[/conv1/Conv]", "but_conv1" },
    };
    char p[512];
    QtCsv acc;
    snprintf(p, sizeof p, "%s/kn_qn/accumulated_error.csv", d);
    QT_CHECKF(qt_csv_load(p, &acc), "no %s", p);
    int compared = 0, bad = 0;
    char msg[512] = "";
    for (int w = 0; w < QR_ARRAY_LEN(want); w++) {
        qt_cli(&r, "compare " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/knobs/%s.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_%s --quiet",
               want[w].model, d, want[w].model);
        if (r.code != 0) { qt_csv_free(&acc); QT_CHECKF(false, "compare %s exit %d: %s", want[w].model, r.code, r.err); }
        QtCsv cmp;
        snprintf(p, sizeof p, "%s/kn_%s/compare_per_layer_out.csv", d, want[w].model);
        if (!qt_csv_load(p, &cmp)) { qt_csv_free(&acc); QT_CHECKF(false, "no %s", p); }
        int col = qt_csv_col(&acc, want[w].col), key = qt_csv_col(&acc, "mod_name");
        int ccos = qt_csv_col(&cmp, "Cosine"), ckey = qt_csv_col(&cmp, "mod_name");
        if (col < 0 || ccos < 0) { bad++; snprintf(msg, sizeof msg, "no column %s", want[w].col); }
        for (int row = 1; col >= 0 && ccos >= 0 && row < acc.n_rows; row++) {
            const char *layer = acc.cell[row][key];
            double ours = strtod(acc.cell[row][col], NULL), ref = qt_csv_get(&cmp, ckey, layer, ccos);
            if (ref != ref) continue;      /* a layer the stripped model does not expose */
            compared++;
            if (!(fabs(ours - ref) <= 2e-8)) {
                if (!bad++) snprintf(msg, sizeof msg, "%s at %s: %.9g, model with exactly those quantizers: %.9g", want[w].col, layer, ours, ref);
            }
        }
        qt_csv_free(&cmp);
    }
    qt_csv_free(&acc);
    QT_CHECKF(!bad && compared >= 15, "%d bad of %d compared: %s", bad, compared, msg);
    /* an unknown name: exit 1, named, with close names */
    qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_bad "
               "--quantize-nodes '/conv1/Conv;/dw/Cnv' --quiet", d);
    QT_CLI_FAILS(r, "'/dw/Cnv'", "did you mean '/dw/Conv'");
}

/* --rank-output feat ranks exactly as sensitivity on the pair cut down to that output. */
static void test_knobs_rank_output(void) {
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_ro1 "
               "--rank-output feat --quiet", d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "sensitivity " QT_KN_PAIR "/knobs/base_feat.onnx " QT_KN_PAIR "/knobs/analysis_feat.onnx -i " QT_KN_PAIR
               "/input.npy -o %s/kn_ro2 --quiet", d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_ro3 --quiet", d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    char p1[512], p2[512], p3[512];
    snprintf(p1, sizeof p1, "%s/kn_ro1/sensitive_ops.csv", d);
    snprintf(p2, sizeof p2, "%s/kn_ro2/sensitive_ops.csv", d);
    snprintf(p3, sizeof p3, "%s/kn_ro3/sensitive_ops.csv", d);
    unsigned char *a = NULL, *b = NULL, *c = NULL;
    size_t la = 0, lb = 0, lc = 0;
    QT_OK(qr_file_read(p1, 0, &a, &la));
    QrStatus st = qr_file_read(p2, 0, &b, &lb);
    if (st == QR_OK) st = qr_file_read(p3, 0, &c, &lc);
    bool same = st == QR_OK && la == lb && !memcmp(a, b, la);
    bool differs = st == QR_OK && (la != lc || memcmp(a, c, la));   /* the knob changes something here */
    int rows = 0;
    for (size_t i = 0; i < la; i++) rows += a[i] == '\n';
    free(a);
    free(b);
    free(c);
    QT_OK(st);
    QT_CHECKF(same && differs && rows > 5, "same %d, differs from all outputs %d, %d lines", same, differs, rows);
    /* find-bad-case: the per-sample metric is that output's */
    qt_cli(&r, "find-bad-case " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx --data %s/kn_nodata --rank-output nope", d);
    QT_CHECKF(r.code != 0 && !r.crashed, "exit %d", r.code);
    qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_ro4 "
               "--rank-output nope --quiet", d);
    QT_CLI_FAILS(r, "'nope'", "'output'", "'feat'");
}

/* find-bad-case --rank-output: each sample's metric equals the metric of that output alone,
 * i.e. of the cut-down pair. */
static void test_knobs_badcase_output(void) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/kn_data", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    QrTensor in = {0};
    QT_OK(qr_npy_read(QT_KN_PAIR "/input.npy", &in));
    for (int s = 0; s < 3; s++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%d.npy", dir, s);
        QrTensor t = {0};
        QrStatus st = qr_tensor_set_shape(&t, in.dtype, in.rank, in.dims);
        if (st == QR_OK) st = qr_tensor_alloc_data(&t);
        for (int64_t e = 0; st == QR_OK && e < t.numel; e++) ((float *)t.data)[e] = ((float *)in.data)[e] * (1.0f + 0.5f * (float)s) - 0.1f * (float)s;
        if (st == QR_OK) st = qr_npy_write(p, &t);
        qr_tensor_free_data(&t);
        if (st != QR_OK) { qr_tensor_free_data(&in); QT_OK(st); }
    }
    qr_tensor_free_data(&in);
    QtCli r;
    qt_cli(&r, "find-bad-case " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx --data %s -o %s/kn_bc1 --rank-output feat --quiet",
           dir, qt_tmpdir());
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "find-bad-case " QT_KN_PAIR "/knobs/base_feat.onnx " QT_KN_PAIR "/knobs/analysis_feat.onnx --data %s -o %s/kn_bc2 --quiet",
           dir, qt_tmpdir());
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    char p1[600], p2[600];
    snprintf(p1, sizeof p1, "%s/kn_bc1/badcase_list.csv", qt_tmpdir());
    snprintf(p2, sizeof p2, "%s/kn_bc2/badcase_list.csv", qt_tmpdir());
    QtCsv a, b;
    QT_CHECKF(qt_csv_load(p1, &a), "no %s", p1);
    if (!qt_csv_load(p2, &b)) { qt_csv_free(&a); QT_CHECKF(false, "no %s", p2); }
    bool same = a.n_rows == b.n_rows && a.n_rows == 4 && a.n_cols == b.n_cols;
    for (int i = 0; same && i < a.n_rows; i++)
        for (int k = 0; same && k < a.n_cols; k++) same = a.cell[i][k] && b.cell[i][k] && !strcmp(a.cell[i][k], b.cell[i][k]);
    qt_csv_free(&a);
    qt_csv_free(&b);
    QT_CHECK(same);
}

/* --nodes / --node-type: the rows kept are exactly the unrestricted run's rows of that
 * selection, with the same numbers. */
static void test_knobs_node_select(void) {
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_all --quiet", d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    static const struct { const char *args, *dir; int kind; } cases[] = {
        { "--node-type activation", "kn_act", 1 }, { "--node-type weight", "kn_wt", 2 }, { "--node-type node", "kn_node", 3 },
        { "--nodes /dw/Conv,/gap/GlobalAveragePool", "kn_nodes", 4 },
    };
    char p[512];
    QtCsv all;
    snprintf(p, sizeof p, "%s/kn_all/sensitive_ops.csv", d);
    QT_CHECKF(qt_csv_load(p, &all), "no %s", p);
    char msg[512] = "";
    int bad = 0;
    for (int c = 0; c < QR_ARRAY_LEN(cases); c++) {
        qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/%s %s --quiet",
               d, cases[c].dir, cases[c].args);
        if (r.code) { bad++; qt_fmt(msg, sizeof msg, "%s: exit %d %s", cases[c].args, r.code, r.err); continue; }
        QtCsv sub;
        snprintf(p, sizeof p, "%s/%s/sensitive_ops.csv", d, cases[c].dir);
        if (!qt_csv_load(p, &sub)) { bad++; continue; }
        /* expected: the unrestricted rows of the selection, in the same order */
        int want = 0, got = sub.n_rows - 1, j = 1;
        for (int i = 1; i < all.n_rows; i++) {
            const char *name = all.cell[i][0], *type = all.cell[i][1];
            bool keep = cases[c].kind == 1 ? !strcmp(type, "activation") : cases[c].kind == 2 ? !strcmp(type, "weight")
                      : cases[c].kind == 4 ? (!strcmp(name, "/dw/Conv") || !strcmp(name, "/gap/GlobalAveragePool")) : true;
            if (cases[c].kind == 3 && strcmp(type, "both")) {
                for (int k = 1; k < all.n_rows; k++) if (!strcmp(all.cell[k][0], name) && !strcmp(all.cell[k][1], "both")) keep = false;
            }
            if (!keep) continue;
            want++;
            bool same = j < sub.n_rows;
            for (int k = 0; same && k < all.n_cols; k++) same = sub.cell[j][k] && !strcmp(sub.cell[j][k], all.cell[i][k]);
            if (!same && !bad++) snprintf(msg, sizeof msg, "%s: row %d is not %s %s", cases[c].args, j, name, type);
            j++;
        }
        if (want != got && !bad++) snprintf(msg, sizeof msg, "%s: %d rows, want %d", cases[c].args, got, want);
        if (want == 0 && !bad++) snprintf(msg, sizeof msg, "%s: empty selection", cases[c].args);
        qt_csv_free(&sub);
    }
    qt_csv_free(&all);
    QT_CHECKF(!bad, "%s", msg);
    qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -o %s/kn_x --node-type nodes", d);
    QT_CHECK(r.code == 2 && strstr(r.err, "--node-type"));
}

/* The metric asked for is the metric used: hmct's spellings parse; runall's curves follow
 * --metric (the "full" curve equals the per-layer table's column of that metric); compare
 * --metric reports it. */
static void test_knobs_metric(void) {
    static const struct { const char *s; QrMetricKind k; } al[] = {
        { "cosine-similarity", QR_METRIC_COSINE }, { "mse", QR_METRIC_MSE }, { "SQNR", QR_METRIC_SQNR }, { "l1", QR_METRIC_L1 },
        { "kl-divergence", QR_METRIC_KL }, { "Cosine", QR_METRIC_COSINE },
    };
    for (int i = 0; i < QR_ARRAY_LEN(al); i++) {
        QrMetricKind k = QR_METRIC_COUNT;
        QT_OK(qr_metric_parse(al[i].s, &k));
        QT_CHECKF(k == al[i].k, "%s", al[i].s);
    }
    QrMetricKind k;
    QT_CHECK(qr_metric_parse("cosine-similarty", &k) != QR_OK);
    qr_err_clear();
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "runall " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_m.zip "
               "--keep-dir %s/kn_m --metric mse --quiet", d, d);
    QT_CHECKF(r.code == 0, "runall exit %d: %s", r.code, r.err);
    char p[512];
    QtCsv acc, cmp;
    snprintf(p, sizeof p, "%s/kn_m/accumulated_error.csv", d);
    QT_CHECKF(qt_csv_load(p, &acc), "no %s", p);
    snprintf(p, sizeof p, "%s/kn_m/compare_per_layer_out.csv", d);
    if (!qt_csv_load(p, &cmp)) { qt_csv_free(&acc); QT_CHECKF(false, "no %s", p); }
    int full = qt_csv_col(&acc, "full"), mcol = qt_csv_col(&acc, "metric"), key = qt_csv_col(&acc, "mod_name");
    int cm = qt_csv_col(&cmp, "MSE"), ck = qt_csv_col(&cmp, "mod_name");
    int n = 0, bad = 0;
    for (int row = 1; full >= 0 && cm >= 0 && row < acc.n_rows; row++) {
        double ours = strtod(acc.cell[row][full], NULL), ref = qt_csv_get(&cmp, ck, acc.cell[row][key], cm);
        if (ref != ref) continue;
        n++;
        bad += strcmp(acc.cell[row][mcol], "MSE") || !(fabs(ours - ref) <= 1e-6 * fabs(ref) + 1e-12);
    }
    qt_csv_free(&acc);
    qt_csv_free(&cmp);
    QT_CHECKF(n >= 5 && bad == 0, "%d rows, %d differ from the per-layer MSE", n, bad);
    qt_cli(&r, "compare " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_cm --metric sqnr", d);
    QT_CHECKF(r.code == 0 && strstr(r.out, "model output SQNR") && strstr(r.out, "worst layers by SQNR"), "%d %s", r.code, r.out);
}

/* profile --prefixes / --types: exactly the whole table's rows of the selected nodes. */
static void test_knobs_profile_select(void) {
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "profile " QT_KN_PAIR "/base.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_pf_all --quiet", d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "profile " QT_KN_PAIR "/base.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_pf --prefixes conv1,/dw,relu3 --types conv,Relu --quiet", d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    char p[512];
    QtCsv all, sub;
    snprintf(p, sizeof p, "%s/kn_pf_all/statistic.csv", d);
    QT_CHECKF(qt_csv_load(p, &all), "no %s", p);
    snprintf(p, sizeof p, "%s/kn_pf/statistic.csv", d);
    if (!qt_csv_load(p, &sub)) { qt_csv_free(&all); QT_CHECKF(false, "no %s", p); }
    /* first half of each file: topological rows (the range-sorted copy follows) */
    int want = 0, j = 1, bad = 0;
    for (int i = 1; i < all.n_rows && all.cell[i][0] && isdigit((unsigned char)all.cell[i][0][0]); i++) {
        const char *op = all.cell[i][1], *name = all.cell[i][2];
        bool keep = (!strcmp(op, "Conv") || !strcmp(op, "Relu")) &&
                    (!strncmp(name, "conv1", 5) || !strncmp(name, "/conv1", 6) || !strncmp(name, "/dw", 3) || !strncmp(name, "/relu3", 6));
        if (!keep) continue;
        want++;
        bool same = j < sub.n_rows;
        for (int k = 0; same && k < all.n_cols; k++) same = sub.cell[j][k] && !strcmp(sub.cell[j][k], all.cell[i][k]);
        bad += !same;
        j++;
    }
    bool count_ok = want >= 8 && sub.n_rows >= 1 + want;
    /* the row after the selection is no longer a selected topological row */
    qt_csv_free(&all);
    qt_csv_free(&sub);
    QT_CHECKF(count_ok && !bad, "want %d rows, %d differ", want, bad);
    qt_cli(&r, "profile " QT_KN_PAIR "/base.onnx -o %s/kn_pf2 --types Conv,Rleu --quiet", d);
    QT_CLI_FAILS(r, "'Rleu'", "did you mean 'Relu'");
    qt_cli(&r, "profile " QT_KN_PAIR "/base.onnx -o %s/kn_pf2 --prefixes /bogus --quiet", d);
    QT_CLI_FAILS(r, "'/bogus'");
}

/* --plot-nodes with an unknown name fails up front, naming it; --channel-axis picks the
 * box plots' axis (per-channel ranges equal plain loops over the weight); weights with
 * constant-folded names are named after their node. */
static void test_knobs_plots(void) {
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "runall " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_pn.zip "
               "--plot-nodes /conv1/Conv,/relu2/Relus --quiet", d);
    QT_CLI_FAILS(r, "'/relu2/Relus'", "did you mean '/relu2/Relu'");
    char p[512];
    snprintf(p, sizeof p, "%s/kn_pn.zip", d);
    uint64_t sz = 0;
    QT_CHECKF(qr_file_size(p, &sz) != QR_OK, "a bundle was written");
    qr_err_clear();
    qt_cli(&r, "runall " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -o %s/kn_pn.zip --channel-axis x", d);
    QT_CHECK(r.code == 2);

    QtPair pr;
    QrSession se;
    QT_OK(qt_session_pair("culprit", &pr, &se));
    const char *names[] = { "conv1.weight" };
    QrDistSet ds = {0}, dd = {0};
    QrStatus st = qr_dist_collect_axis(&se, NULL, names, 1, 0, true, 1, NULL, &ds);
    if (st == QR_OK) st = qr_dist_collect_axis(&se, NULL, names, 1, 0, true, -3, NULL, &dd);   /* -3 of rank 4 = 1 */
    int v = qr_graph_find(pr.b, "conv1.weight");
    bool ok = st == QR_OK && ds.n == 1 && dd.n == 1 && v >= 0 && ds.d[0].n_ch == 3 && ds.d[0].ch_axis == 1 && dd.d[0].n_ch == 3;
    char msg[256] = "";
    for (int c = 0; ok && c < 3; c++) {
        const QrTensor *w = &pr.b->values[v].t;    /* [8, 3, 3, 3]: channel c of axis 1 */
        double lo = INFINITY, hi = -INFINITY;
        for (int o = 0; o < 8; o++)
            for (int e = 0; e < 9; e++) {
                double x = ((const float *)w->data)[(o * 3 + c) * 9 + e];
                lo = fmin(lo, x);
                hi = fmax(hi, x);
            }
        if (ds.d[0].ch[c].min != lo || ds.d[0].ch[c].max != hi || dd.d[0].ch[c].max != hi) {
            ok = false;
            snprintf(msg, sizeof msg, "channel %d: %g..%g, loops %g..%g", c, ds.d[0].ch[c].min, ds.d[0].ch[c].max, lo, hi);
        }
    }
    if (st == QR_OK) qr_dist_free(&ds);
    if (st == QR_OK) qr_dist_free(&dd);
    QrDistSet de = {0};
    QrStatus st2 = st == QR_OK ? qr_dist_collect_axis(&se, NULL, names, 1, 0, true, 4, NULL, &de) : st;
    bool axis_err = st == QR_OK && st2 != QR_OK && strstr(qr_err_msg(), "--channel-axis 4") && strstr(qr_err_msg(), "rank 4");
    qr_err_clear();
    qr_session_close(&se);
    qt_pair_free(&pr);
    QT_OK(st);
    QT_CHECKF(ok, "%s", msg);
    QT_CHECK(axis_err);

    /* ort_qdq's stem weight is the constant-folded 'onnx::Conv_29': its plot is named after
     * the node that reads it */
    QT_OK(qt_session_pair("ort_qdq", &pr, &se));
    const char *wn[] = { "onnx::Conv_29" };
    st = qr_dist_collect(&se, NULL, wn, 1, 0, &ds);
    const char *got = st == QR_OK && ds.n == 1 ? ds.d[0].name : "";
    char want[300] = "?";
    /* independently: the analysis node whose weight input dequantizes onnx::Conv_29's integers */
    for (int n = 0; n < pr.a->n_nodes; n++) {
        const QrNode *nd = &pr.a->nodes[n];
        if (strcmp(nd->op_type, "Conv") || nd->n_in < 2 || nd->in[1] < 0) continue;
        int pdq = pr.a->values[nd->in[1]].producer;
        if (pdq >= 0 && pr.a->nodes[pdq].in[0] >= 0 && !strcmp(pr.a->values[pr.a->nodes[pdq].in[0]].name, "onnx::Conv_29_quantized"))
            snprintf(want, sizeof want, "%s.weight", nd->name);
    }
    bool named = st == QR_OK && !strcmp(got, want);
    char gotc[300];
    snprintf(gotc, sizeof gotc, "%s", got);
    if (st == QR_OK) qr_dist_free(&ds);
    qr_session_close(&se);
    qt_pair_free(&pr);
    QT_OK(st);
    QT_CHECKF(named, "plot named '%s', want '%s'", gotc, want);
}

typedef struct QtCapture { int want; QrTensor t; } QtCapture;
static QrStatus qt_capture_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtCapture *c = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    if (value != c->want || c->t.data) return QR_OK;
    return qr_tensor_to_f32(t, &c->t);
}

/* compare --save-values then --from-values: the tables, the advisor and the page are the
 * direct run's, byte for byte; every saved value is the matched value (the baseline's equals
 * a plain run of the baseline model's node output). */
static void test_knobs_values(void) {
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "compare " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_v1 "
               "--save-values %s/kn_vals --quiet", d, d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "compare " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -o %s/kn_v2 --from-values %s/kn_vals --quiet", d, d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    QT_CHECKF(!strstr(r.err, "random"), "used a random input: %s", r.err);
    const char *files[] = { "compare_per_layer_out.txt", "compare_per_layer_out.csv", "abnormal_layer_advisor.txt",
                            "compare_per_layer.html", "plots/per_layer_metrics.png" };
    for (int i = 0; i < QR_ARRAY_LEN(files); i++) {
        char p1[512], p2[512];
        snprintf(p1, sizeof p1, "%s/kn_v1/%s", d, files[i]);
        snprintf(p2, sizeof p2, "%s/kn_v2/%s", d, files[i]);
        unsigned char *a = NULL, *b = NULL;
        size_t la = 0, lb = 0;
        QT_OK(qr_file_read(p1, 0, &a, &la));
        QrStatus st = qr_file_read(p2, 0, &b, &lb);
        bool same = st == QR_OK && la == lb && la > 100 && !memcmp(a, b, la);
        free(a);
        free(b);
        QT_OK(st);
        QT_CHECKF(same, "%s differs between the direct run and --from-values", files[i]);
    }
    /* the index maps each layer to its files; the baseline file holds the baseline model's value */
    char p[512];
    snprintf(p, sizeof p, "%s/kn_vals/index.tsv", d);
    unsigned char *idx = NULL;
    size_t li = 0;
    QT_OK(qr_file_read(p, 0, &idx, &li));
    char *txt = realloc(idx, li + 1);
    QT_CHECK(txt);
    txt[li] = 0;
    char *line = strstr(txt, "\nlayer\t0\t");
    char nm[256] = "", bf[64] = "", af[64] = "", lf[64] = "", bv[256] = "";
    bool parsed = line && sscanf(line, "\nlayer\t0\t%255[^\t]\t%63[^\t]\t%63[^\t]\t%63[^\t]\t%255[^\t]\t", nm, bf, af, lf, bv) == 5;
    int layers = 0;
    for (char *q = txt; (q = strstr(q, "\nlayer\t")); q++) layers++;
    free(txt);
    QT_CHECKF(parsed && layers >= 6, "index.tsv: layer 0 parsed %d, %d layers", parsed, layers);
    QrGraph *g = NULL;
    QT_OK(qr_run_load(QT_KN_PAIR "/base.onnx", &g));
    QrTensor in = {0}, saved = {0};
    QrStatus st = qr_npy_read(QT_KN_PAIR "/input.npy", &in);
    if (st == QR_OK) st = qr_run_infer(g, &in);
    snprintf(p, sizeof p, "%s/kn_vals/%s", d, bf);
    if (st == QR_OK) st = qr_npy_read(p, &saved);
    /* a plain run of the baseline, the value layer 0 names (a separate tap) */
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    QtCapture cap = { .want = qr_graph_find(g, bv) };
    QrRunOpts ro = { .tap = qt_capture_tap, .tap_user = &cap };
    if (st == QR_OK) st = outs ? qr_run(g, &in, &ro, outs) : QR_ERR_NOMEM;
    bool same = st == QR_OK && cap.want >= 0 && cap.t.data && saved.numel == cap.t.numel && saved.dtype == QR_DT_F32 &&
                !memcmp(saved.data, cap.t.data, (size_t)saved.numel * sizeof(float));
    for (int k = 0; outs && k < g->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    qr_tensor_free_data(&cap.t);
    qr_tensor_free_data(&saved);
    qr_tensor_free_data(&in);
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECK(same);
    /* the other fixture pairs (QOperator, integer ops, QAT, int16): identical files too */
    static const char *const pairs[] = { "ort_qdq", "qat_fakequant", "qoperator", "integer_ops", "int16_mixed" };
    for (int k = 0; k < QR_ARRAY_LEN(pairs); k++) {
        qt_cli(&r, "compare fixtures/qpairs/%s/base.onnx fixtures/qpairs/%s/analysis.onnx -i fixtures/qpairs/%s/input.npy "
                   "-o %s/kn_w1_%s --save-values %s/kn_wv_%s --quiet", pairs[k], pairs[k], pairs[k], d, pairs[k], d, pairs[k]);
        QT_CHECKF(r.code == 0, "%s: exit %d: %s", pairs[k], r.code, r.err);
        qt_cli(&r, "compare fixtures/qpairs/%s/base.onnx fixtures/qpairs/%s/analysis.onnx -o %s/kn_w2_%s --from-values %s/kn_wv_%s --quiet",
               pairs[k], pairs[k], d, pairs[k], d, pairs[k]);
        QT_CHECKF(r.code == 0, "%s --from-values: exit %d: %s", pairs[k], r.code, r.err);
        for (int i = 0; i < 4; i++) {
            char p1[512], p2[512];
            snprintf(p1, sizeof p1, "%s/kn_w1_%s/%s", d, pairs[k], files[i]);
            snprintf(p2, sizeof p2, "%s/kn_w2_%s/%s", d, pairs[k], files[i]);
            unsigned char *a = NULL, *b = NULL;
            size_t la = 0, lb = 0;
            QT_OK(qr_file_read(p1, 0, &a, &la));
            QrStatus s2 = qr_file_read(p2, 0, &b, &lb);
            bool eq = s2 == QR_OK && la == lb && !memcmp(a, b, la);
            free(a);
            free(b);
            QT_OK(s2);
            QT_CHECKF(eq, "%s: %s differs between the direct run and --from-values", pairs[k], files[i]);
        }
    }
    /* values of another pair: refused, naming the layer */
    qt_cli(&r, "compare fixtures/qpairs/ort_qdq/base.onnx fixtures/qpairs/ort_qdq/analysis.onnx -o %s/kn_v3 --from-values %s/kn_vals", d, d);
    QT_CHECKF(r.code == 1 && !r.crashed && strstr(r.err, "other models"), "exit %d: %s", r.code, r.err);
    qt_cli(&r, "compare " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -o %s/kn_v3 --from-values %s/nothing_here", d, d);
    QT_CLI_FAILS(r, "index.tsv");
}

/* compare writes the advisor and its page (runall's per-layer section and the findings). */
static void test_knobs_compare_page(void) {
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "compare " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_cp --quiet", d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    char p[512];
    snprintf(p, sizeof p, "%s/kn_cp/compare_per_layer.html", d);
    unsigned char *h = NULL;
    size_t lh = 0;
    QT_OK(qr_file_read(p, 0, &h, &lh));
    char *html = realloc(h, lh + 1);
    QT_CHECK(html);
    html[lh] = 0;
    bool ok = strstr(html, "Per-layer comparison") && strstr(html, "/relu2/Relu") && strstr(html, "plots/per_layer_metrics.png") &&
              strstr(html, "Abnormal layers and fixes");
    free(html);
    QT_CHECK(ok);
    snprintf(p, sizeof p, "%s/kn_cp/abnormal_layer_advisor.txt", d);
    uint64_t sz = 0;
    QT_OK(qr_file_size(p, &sz));
    QT_CHECK(sz > 50);
}

/* --demote-int16: each row's output metrics equal those of a model with exactly that group of
 * int16 quantizers on the 8-bit grid (fixtures/make_knob_models.py demote()). */
static void test_knobs_demote_int16(void) {
    QtCli r;
    const char *d = qt_tmpdir();
#define QT_KN16 "fixtures/qpairs/int16_mixed"
    qt_cli(&r, "sensitivity " QT_KN16 "/base.onnx " QT_KN16 "/analysis.onnx -i " QT_KN16 "/input.npy -o %s/kn_dm --demote-int16 --quiet", d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    char p[512];
    QtCsv dm;
    snprintf(p, sizeof p, "%s/kn_dm/int16_demotion.csv", d);
    QT_CHECKF(qt_csv_load(p, &dm), "no %s", p);
    static const struct { const char *tensor, *model; } want[] = {
        { "/dw/Conv_output_0", "dw" }, { "pw.weight", "pw_weight" }, { "/Add_output_0", "add" },
    };
    int tcol = qt_csv_col(&dm, "tensor"), dcol = qt_csv_col(&dm, "dtype");
    int cols[3] = { qt_csv_col(&dm, "L1"), qt_csv_col(&dm, "Cosine"), qt_csv_col(&dm, "MSE") };
    int bad = 0, checked = 0;
    char msg[512] = "";
    double l1[3] = { NAN, NAN, NAN };
    for (int w = 0; w < QR_ARRAY_LEN(want) && tcol >= 0 && dcol >= 0; w++) {
        qt_cli(&r, "compare " QT_KN16 "/base.onnx " QT_KN16 "/knobs/demote_%s.onnx -i " QT_KN16 "/input.npy -o %s/kn_dmc_%s --quiet",
               want[w].model, d, want[w].model);
        QtCsv cmp;
        snprintf(p, sizeof p, "%s/kn_dmc_%s/compare_per_layer_out.csv", d, want[w].model);
        if (r.code || !qt_csv_load(p, &cmp)) { bad++; qt_fmt(msg, sizeof msg, "compare %s: %d %s", want[w].model, r.code, r.err); continue; }
        /* the graph output is the last layer, /fc/Gemm */
        int last = cmp.n_rows - 1;
        int ccols[3] = { qt_csv_col(&cmp, "L1"), qt_csv_col(&cmp, "Cosine"), qt_csv_col(&cmp, "MSE") };
        bool found = false;
        for (int row = 1; row < dm.n_rows; row++) {
            if (strcmp(dm.cell[row][tcol], want[w].tensor)) continue;
            found = true;
            if (strcmp(dm.cell[row][dcol], "int16") && !bad++) snprintf(msg, sizeof msg, "%s: dtype %s", want[w].tensor, dm.cell[row][dcol]);
            for (int c = 0; c < 3; c++) {
                double ours = strtod(dm.cell[row][cols[c]], NULL), ref = strtod(cmp.cell[last][ccols[c]], NULL);
                checked++;
                if (!(fabs(ours - ref) <= 1e-8 * fabs(ref) + 1e-12) && !bad++)
                    snprintf(msg, sizeof msg, "%s: %s %.9g, demoted model %.9g", want[w].tensor, cmp.cell[0][ccols[c]], ours, ref);
            }
            l1[w] = strtod(dm.cell[row][cols[0]], NULL);
        }
        if (!found && !bad++) snprintf(msg, sizeof msg, "no row for %s", want[w].tensor);
        qt_csv_free(&cmp);
    }
    qt_csv_free(&dm);
    QT_CHECKF(!bad && checked == 9, "%s", msg);
    QT_CHECKF(l1[2] != l1[0], "the add group's demotion changes nothing (%.9g)", l1[2]);   /* the check can fail */
    /* runall --demote-int16: the same table in the bundle */
    qt_cli(&r, "runall " QT_KN16 "/base.onnx " QT_KN16 "/analysis.onnx -i " QT_KN16 "/input.npy -o %s/kn_dmr.zip --keep-dir %s/kn_dmr "
               "--demote-int16 --quiet", d, d);
    QT_CHECKF(r.code == 0, "runall exit %d: %s", r.code, r.err);
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/kn_dm/int16_demotion.csv", d);
    snprintf(p2, sizeof p2, "%s/kn_dmr/int16_demotion.csv", d);
    unsigned char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    QT_OK(qr_file_read(p1, 0, &a, &la));
    QrStatus st = qr_file_read(p2, 0, &b, &lb);
    bool same = st == QR_OK && la == lb && !memcmp(a, b, la);
    free(a);
    free(b);
    QT_OK(st);
    QT_CHECK(same);
    /* a model without 16-bit quantizers: no rows, a warning */
    qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_dm8 --demote-int16", d);
    QT_CHECKF(r.code == 0 && strstr(r.err, "no 16-bit quantizer"), "exit %d: %s", r.code, r.err);
    qt_cli(&r, "compare " QT_KN16 "/base.onnx " QT_KN16 "/analysis.onnx -o %s/kn_dm9 --demote-int16", d);
    QT_CHECK(r.code == 2);
}

/* sensitive_ops' dtype column (QuantAnalysis reserve: which rows are 16-bit) equals what the analysis
 * model says, read here straight from its Q/DQ nodes: an activation row's QuantizeLinear reading the
 * node's output (its zero point's type), a weight row's DequantizeLinear feeding the node (its
 * integer initializer's type; int32 biases are not rows); both = activation types then weight types,
 * distinct, '+'-joined. */
static void qt_kn_add_dtype(char *buf, size_t cap, QrDType dt) {
    const char *nm = qr_dtype_name(dt);
    for (const char *p = buf; *p;) {   /* distinct */
        size_t l = strcspn(p, "+");
        if (l == strlen(nm) && !strncmp(p, nm, l)) return;
        p += l + (p[l] == '+');
    }
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", buf[0] ? "+" : "", nm);
}

static void test_knobs_sens_dtype(void) {
    QtCli r;
    const char *d = qt_tmpdir();
    qt_cli(&r, "sensitivity " QT_KN16 "/base.onnx " QT_KN16 "/analysis.onnx -i " QT_KN16 "/input.npy -o %s/kn_dt --quiet", d);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    char p[512];
    QtCsv c;
    snprintf(p, sizeof p, "%s/kn_dt/sensitive_ops.csv", d);
    QT_CHECKF(qt_csv_load(p, &c), "no %s", p);
    QrGraph *g = NULL;
    QT_OK(qr_run_load(QT_KN16 "/analysis.onnx", &g));
    int cn = qt_csv_col(&c, "op_name"), ct = qt_csv_col(&c, "sensitive_type"), cd = qt_csv_col(&c, "dtype");
    int checked = 0, s16 = 0;
    for (int row = 1; cn >= 0 && ct >= 0 && cd >= 0 && row < c.n_rows; row++) {
        const char *name = c.cell[row][cn], *type = c.cell[row][ct];
        int node = -1;
        for (int n = 0; n < g->n_nodes && node < 0; n++) if (!strcmp(g->nodes[n].name, name)) node = n;
        int out = node >= 0 ? g->nodes[node].out[0] : qr_graph_find(g, name);   /* a graph input's row: its name */
        char act[64] = "", wt[64] = "", want[128];
        QrDType wdt[8];
        int nw = 0;
        for (int n = 0; n < g->n_nodes; n++) {
            const QrNode *q = &g->nodes[n];
            if (!strcmp(q->op_type, "QuantizeLinear") && q->in[0] == out && q->n_in > 2 && q->in[2] >= 0)
                qt_kn_add_dtype(act, sizeof act, g->values[q->in[2]].t.dtype);
        }
        for (int k = 1; node >= 0 && k < g->nodes[node].n_in; k++) {
            int v = g->nodes[node].in[k], pn = v >= 0 ? g->values[v].producer : -1;
            if (pn < 0 || strcmp(g->nodes[pn].op_type, "DequantizeLinear")) continue;
            QrDType dt = g->values[g->nodes[pn].in[0]].t.dtype;
            if (!g->values[g->nodes[pn].in[0]].is_init || dt == QR_DT_S32) continue;
            qt_kn_add_dtype(wt, sizeof wt, dt);
            if (nw < 8) wdt[nw++] = dt;
        }
        snprintf(want, sizeof want, "%s", !strcmp(type, "weight") ? wt : act);
        if (!strcmp(type, "both")) for (int k = 0; k < nw; k++) qt_kn_add_dtype(want, sizeof want, wdt[k]);
        QT_CHECKF(!strcmp(c.cell[row][cd], want), "%s %s: dtype %s, the model says %s", name, type, c.cell[row][cd], want);
        checked++;
        s16 += strstr(want, "int16") != NULL;
    }
    qr_graph_free(g);
    free(g);
    qt_csv_free(&c);
    /* the fixture's notes: 4 int16 activations (dw, dw_relu, Add, MaxPool) and pw's int16 weight */
    QT_CHECKF(checked >= 10 && s16 >= 5, "%d rows checked, %d with int16", checked, s16);
}

/* --reverse reverses sensitive_ops' listing only: the all-but-top-k curves, the terminal's
 * "sensitive k" lines and the recommended action still name the most sensitive rows (they named
 * the least sensitive ones before). */
static char *qt_kn_lines(const char *text, const char *prefix) {
    static char out[4096];
    out[0] = 0;
    for (const char *p = text; (p = strstr(p, prefix)); p++) {
        size_t l = strcspn(p, "\n");
        snprintf(out + strlen(out), sizeof out - strlen(out), "%.*s\n", (int)l, p);
    }
    return out;
}

static void test_knobs_reverse(void) {
    QtCli r;
    const char *d = qt_tmpdir();
    char p[512], fwd[4096], fwd_act[1024];
    for (int rev = 0; rev < 2; rev++) {
        qt_cli(&r, "sensitivity " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_rv%d "
                   "--topk-list 1,3 %s --quiet", d, rev, rev ? "--reverse" : "");
        QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    }
    unsigned char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    snprintf(p, sizeof p, "%s/kn_rv0/accumulated_error.csv", d);
    QT_OK(qr_file_read(p, 0, &a, &la));
    snprintf(p, sizeof p, "%s/kn_rv1/accumulated_error.csv", d);
    QrStatus st = qr_file_read(p, 0, &b, &lb);
    bool same = st == QR_OK && la == lb && !memcmp(a, b, la);
    free(a);
    free(b);
    QT_CHECKF(same, "accumulated_error.csv differs with --reverse");
    QtCsv c0, c1;
    snprintf(p, sizeof p, "%s/kn_rv0/sensitive_ops.csv", d);
    QT_CHECK(qt_csv_load(p, &c0));
    snprintf(p, sizeof p, "%s/kn_rv1/sensitive_ops.csv", d);
    QT_CHECK(qt_csv_load(p, &c1));
    QT_CHECKF(c0.n_rows == c1.n_rows && c0.n_rows > 3 && !strcmp(c0.cell[1][0], c1.cell[c1.n_rows - 1][0]) &&
              !strcmp(c0.cell[1][1], c1.cell[c1.n_rows - 1][1]), "--reverse: first row %s, reversed last %s",
              c0.cell[1][0], c1.cell[c1.n_rows - 1][0]);
    qt_csv_free(&c0);
    qt_csv_free(&c1);
    for (int rev = 0; rev < 2; rev++) {
        qt_cli(&r, "runall " QT_KN_PAIR "/base.onnx " QT_KN_PAIR "/analysis.onnx -i " QT_KN_PAIR "/input.npy -o %s/kn_rv%d.zip "
                   "%s", d, rev, rev ? "--reverse" : "");
        QT_CHECKF(r.code == 0, "runall exit %d: %s", r.code, r.err);
        if (!rev) {
            snprintf(fwd, sizeof fwd, "%s", qt_kn_lines(r.out, "  sensitive "));
            snprintf(fwd_act, sizeof fwd_act, "%s", qt_kn_lines(r.out, "Recommended action"));
            QT_CHECKF(strstr(fwd, "sensitive 1: /conv1/Conv") && fwd_act[0], "%s%s", fwd, fwd_act);
        } else {
            QT_CHECKF(!strcmp(fwd, qt_kn_lines(r.out, "  sensitive ")), "--reverse:\n%svs\n%s", qt_kn_lines(r.out, "  sensitive "), fwd);
            QT_CHECKF(!strcmp(fwd_act, qt_kn_lines(r.out, "Recommended action")), "--reverse: %s", r.out);
        }
    }
}

static void qt_analysis_knobs_all(void) {
    QT_RUN(test_knobs_quantize_nodes);
    QT_RUN(test_knobs_rank_output);
    QT_RUN(test_knobs_badcase_output);
    QT_RUN(test_knobs_node_select);
    QT_RUN(test_knobs_metric);
    QT_RUN(test_knobs_profile_select);
    QT_RUN(test_knobs_plots);
    QT_RUN(test_knobs_values);
    QT_RUN(test_knobs_compare_page);
    QT_RUN(test_knobs_demote_int16);
    QT_RUN(test_knobs_sens_dtype);
    QT_RUN(test_knobs_reverse);
}
