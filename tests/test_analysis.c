/* tests/analysis — metrics against an independent numpy reference
 * (fixtures/make_compare_ref.py → fixtures/qpairs/<pair>/compare_ref.tsv),
 * compare_per_layer on the fixture pairs, local (shadow) error, sensitivity
 * (incremental equals full re-runs, with fewer node executions) and the
 * cumulative-error settings. */

typedef struct QtRefRow {
    char name[256], btensor[256], atensor[256], bfile[64], afile[64];
    double scale;
    long long zp;
    double v[15];            /* docs/REPORT.md columns Cosine .. analy_model_var */
} QtRefRow;

static int qt_ref_load(const char *pair, QtRefRow *rows, int cap) {
    char path[512];
    snprintf(path, sizeof path, "fixtures/qpairs/%s/compare_ref.tsv", pair);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[8192];
    int n = 0;
    if (!fgets(line, sizeof line, f)) { fclose(f); return -1; }
    while (n < cap && fgets(line, sizeof line, f)) {
        QtRefRow *r = &rows[n];
        char *save = NULL, *tok = strtok_r(line, "\t\n", &save);
        int col = 0;
        for (; tok; tok = strtok_r(NULL, "\t\n", &save), col++) {
            if (col == 0) snprintf(r->name, sizeof r->name, "%s", tok);
            else if (col == 1) snprintf(r->btensor, sizeof r->btensor, "%s", tok);
            else if (col == 2) snprintf(r->atensor, sizeof r->atensor, "%s", tok);
            else if (col == 3) snprintf(r->bfile, sizeof r->bfile, "%s", tok);
            else if (col == 4) snprintf(r->afile, sizeof r->afile, "%s", tok);
            else if (col == 5) r->scale = strtod(tok, NULL);
            else if (col == 6) r->zp = strtoll(tok, NULL, 10);
            else if (col - 7 < 15) r->v[col - 7] = strtod(tok, NULL);
        }
        if (col == 22) n++;
    }
    fclose(f);
    return n;
}

static void qt_metrics_vec(const QrMetrics *m, double *v) {
    double t[15] = { m->cosine, m->mse, m->l1, m->kl, m->sqnr, m->atol, m->rtol, m->x_min, m->y_min, m->x_max, m->y_max,
                     m->x_mean, m->y_mean, m->x_var, m->y_var };
    memcpy(v, t, sizeof t);
}

static bool qt_close(double a, double b, double rel, double abs_tol) {
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= abs_tol + rel * fabs(b);
}

/* qr_metrics_compute on exactly the values ONNX Runtime produced equals numpy's
 * float64 computation: 1e-6 relative (KL 1e-4). */
static void qt_metrics_pair(const char *pair) {
    char name[128];
    snprintf(name, sizeof name, "metrics/%s", pair);
    QtRefRow rows[64];
    int n = qt_ref_load(pair, rows, 64), bad = 0;
    char msg[512] = "";
    if (n <= 0) { qt_record(name, false, "cannot read compare_ref.tsv"); return; }
    for (int i = 0; i < n; i++) {
        char p[512];
        QrTensor x = {0}, y = {0}, yf = {0}, xf = {0};
        snprintf(p, sizeof p, "fixtures/qpairs/%s/golden_base/%s", pair, rows[i].bfile);
        QrStatus st = qr_npy_read(p, &x);
        snprintf(p, sizeof p, "fixtures/qpairs/%s/golden_sim/%s", pair, rows[i].afile);
        if (st == QR_OK) st = qr_npy_read(p, &y);
        if (st == QR_OK) st = qr_tensor_to_f32(&x, &xf);
        if (st == QR_OK && !qr_dtype_is_float(y.dtype)) {
            st = qr_tensor_set_shape(&yf, QR_DT_F32, y.rank, y.dims);
            if (st == QR_OK) st = qr_tensor_alloc_data(&yf);
            for (int64_t k = 0; st == QR_OK && k < y.numel; k++)
                ((float *)yf.data)[k] = (float)((double)(qr_tensor_get_i64(&y, k) - rows[i].zp) * rows[i].scale);
        } else if (st == QR_OK) st = qr_tensor_to_f32(&y, &yf);
        if (st == QR_OK && xf.numel == yf.numel) {
            QrMetrics m;
            double v[15];
            qr_metrics_compute(xf.data, yf.data, xf.numel, &m);
            qt_metrics_vec(&m, v);
            for (int c = 0; c < 15; c++)
                if (!qt_close(v[c], rows[i].v[c], c == 3 ? 1e-4 : 1e-6, c == 3 ? 1e-9 : 1e-12)) {
                    if (!bad++) qt_fmt(msg, sizeof msg, "%s column %d: %.12g vs numpy %.12g", rows[i].name, c, v[c], rows[i].v[c]);
                }
        } else {
            if (!bad++) qt_fmt(msg, sizeof msg, "%s: %s", rows[i].name, st ? qr_err_msg() : "size mismatch");
        }
        qr_tensor_free_data(&x); qr_tensor_free_data(&y); qr_tensor_free_data(&xf); qr_tensor_free_data(&yf);
    }
    qt_record(name, bad == 0, "%d of %d rows differ; first: %s", bad, n, msg);
}

static QrStatus qt_session_pair(const char *pair, QtPair *p, QrSession *se) {
    QR_TRY(qt_pair_load(p, pair, NULL));
    return qr_session_open(se, p->b, p->a, &p->in);
}

/* compare_per_layer from qreport's own execution: every matched row is there and
 * agrees with the reference up to float execution noise (ONNX Runtime and
 * qreport accumulate convolutions in different orders). */
static void qt_compare_pair(const char *pair) {
    char name[128];
    snprintf(name, sizeof name, "compare/%s", pair);
    QtRefRow rows[64];
    int n = qt_ref_load(pair, rows, 64), bad = 0, found = 0;
    char msg[512] = "";
    QtPair p;
    QrSession se;
    QrCompare c = {0};
    QrStatus st = qt_session_pair(pair, &p, &se);
    if (st == QR_OK) st = qr_compare_run(&se, p.a, 0.99, &c);
    for (int i = 0; st == QR_OK && i < n; i++) {
        const QrLayerRow *r = NULL;
        for (int k = 0; k < c.n; k++)
            if (!strcmp(p.b->nodes[se.m.m[c.rows[k].match].b_node].name, rows[i].name)) r = &c.rows[k];
        if (!r || !r->has_m) { if (!bad++) qt_fmt(msg, sizeof msg, "no row for %s", rows[i].name); continue; }
        found++;
        double v[15];
        qt_metrics_vec(&r->m, v);
        for (int col = 0; col < 15; col++) {
            /* Atol/Rtol are maxima of differences: execution noise of 1e-6 of the values dominates them */
            double rel = col == 5 || col == 6 ? 1e-3 : col == 3 ? 1e-3 : 1e-4;
            if (!qt_close(v[col], rows[i].v[col], rel, 1e-6) && !bad++)
                qt_fmt(msg, sizeof msg, "%s column %d: %.9g vs reference %.9g", rows[i].name, col, v[col], rows[i].v[col]);
        }
        /* a Flatten without a quantizer of its own adds no error */
        if (!r->has_local && !bad++) qt_fmt(msg, sizeof msg, "%s: no local error", rows[i].name);
        if (!strcmp(p.b->nodes[se.m.m[r->match].b_node].op_type, "Flatten") && se.m.m[r->match].a_quant < 0 && r->has_local && r->local.mse != 0 && !bad++)
            snprintf(msg, sizeof msg, "Flatten adds error of its own: local cosine %.9g", r->local.cosine);
    }
    if (st != QR_OK) qt_fmt(msg, sizeof msg, "%s", qr_err_msg());
    qr_compare_free(&c);
    if (st == QR_OK || se.b) qr_session_close(&se);
    qt_pair_free(&p);
    qt_record(name, st == QR_OK && bad == 0 && found == n && n > 0, "%d bad, %d/%d rows: %s", bad, found, n, msg);
}

/* Incremental sensitivity equals full re-runs exactly and executes fewer nodes. */
static void qt_sens_pair(const char *pair) {
    char name[128];
    snprintf(name, sizeof name, "sensitivity/%s", pair);
    QtPair p;
    QrSession se;
    QrSensResult inc = {0}, full = {0};
    QrStatus st = qt_session_pair(pair, &p, &se);
    for (int off = 0; off < 2 && st == QR_OK; off++) {
        QrSensOpts o1 = { .off_one = off, .metric = QR_METRIC_L1 }, o2 = o1;
        o2.full_reruns = true;
        st = qr_sens_run(&se, &o1, &inc);
        if (st == QR_OK) st = qr_sens_run(&se, &o2, &full);
        bool same = st == QR_OK && inc.n == full.n && inc.n > 0;
        for (int k = 0; same && k < inc.n; k++) {
            const QrSensRow *a = &inc.rows[k], *b = &full.rows[k];
            same = !strcmp(a->name, b->name) && a->type == b->type && a->m.l1 == b->m.l1 && a->m.cosine == b->m.cosine &&
                   a->m.mse == b->m.mse && (a->m.sqnr == b->m.sqnr || (a->m.sqnr != a->m.sqnr && b->m.sqnr != b->m.sqnr));
        }
        bool fewer = st == QR_OK && inc.n_exec < full.n_exec;
        if (st == QR_OK && qt_verbose)
            printf("sensitivity %s %s: %d rows, %lld node executions incremental vs %lld full\n", pair,
                   off ? "off-one" : "one-on", inc.n, (long long)inc.n_exec, (long long)full.n_exec);
        /* sorted worst first by L1 */
        for (int k = 1; same && k < inc.n; k++)   /* most sensitive first: off-one by gain (smallest L1 first) */
            same = off ? inc.rows[k - 1].m.l1 <= inc.rows[k].m.l1 : inc.rows[k - 1].m.l1 >= inc.rows[k].m.l1;
        if (st == QR_OK && (!same || !fewer)) {
            qt_record(name, false, "%s: incremental differs from full re-runs (same=%d) or is not cheaper (%lld vs %lld)",
                      off ? "off-one" : "one-on", same, (long long)inc.n_exec, (long long)full.n_exec);
            st = QR_ERR_INVALID;
        }
        qr_sens_free(&inc);
        qr_sens_free(&full);
    }
    bool ok = st == QR_OK;
    const char *m = ok ? "" : qr_err_msg();
    if (se.b) qr_session_close(&se);
    qt_pair_free(&p);
    if (st != QR_ERR_INVALID) qt_record(name, ok, "%s", m);
}

/* The grouped ranking (sens.c) finds brute force's top 10: the same rows in the same order with
 * the same bits, in one-on, on a transformer block (tpairs/static_int8: 29 rows, the block's two
 * halves as segments) and a CNN pair (qpairs/qat_convbn); grouping forced (the automatic one
 * starts at QR_SENS_GROUP_AUTO rows), brute force with --all-rows' setting. Off-one is never
 * grouped (every row evaluated even when asked). */
static void qt_sens_grouped_pair(const char *dir) {
    char name[160], path[256], msg[512] = "";
    snprintf(name, sizeof name, "sensitivity grouped/%s", dir);
    QrGraph *b = NULL, *a = NULL;
    QrTensor in = {0};
    QrSession se;
    memset(&se, 0, sizeof se);
    snprintf(path, sizeof path, "fixtures/%s/input.npy", dir);
    QrStatus st = qr_npy_read(path, &in);
    snprintf(path, sizeof path, "fixtures/%s/base.onnx", dir);
    if (st == QR_OK) st = qr_run_load(path, &b);
    snprintf(path, sizeof path, "fixtures/%s/analysis.onnx", dir);
    if (st == QR_OK) st = qr_run_load(path, &a);
    if (st == QR_OK) st = qr_run_infer(b, &in);
    if (st == QR_OK) st = qr_run_infer(a, &in);
    if (st == QR_OK) st = qr_session_open(&se, b, a, &in);
    bool ok = st == QR_OK;
    for (int off = 0; ok && off < 2; off++) {
        QrSensOpts ob = { .off_one = off, .metric = QR_METRIC_L1, .grouped = -1 }, og = ob;
        og.grouped = 1;
        og.group_top = 10;
        QrSensResult rb = {0}, rg = {0};
        st = qr_sens_run(&se, &ob, &rb);
        if (st == QR_OK) st = qr_sens_run(&se, &og, &rg);
        int top = QR_MIN(10, rb.n);
        ok = st == QR_OK && !rb.grouped && (off ? !rg.grouped && rg.n == rb.n
                                                : rg.grouped && rg.n_groups > 0 && rb.n > top && rg.n_top == top &&
                                                  rg.n + rg.n_unranked == rb.n);
        if (!ok && st == QR_OK)
            snprintf(msg, sizeof msg, "%s: grouped %d, %d groups, %d ranked of %d rows (brute force %d rows)",
                     off ? "off-one" : "one-on", rg.grouped, rg.n_groups, rg.n_top, rg.n + rg.n_unranked, rb.n);
        for (int k = 0; ok && k < top; k++) {
            const QrSensRow *x = qr_sens_top(&rb, k), *y = qr_sens_top(&rg, k);
            ok = !strcmp(x->name, y->name) && x->type == y->type && x->m.l1 == y->m.l1 && x->m.cosine == y->m.cosine;
            if (!ok)
                snprintf(msg, sizeof msg, "%s: rank %d is %s (%s) L1 %.9g by brute force, %s (%s) L1 %.9g grouped",
                         off ? "off-one" : "one-on", k + 1, x->name, qr_sens_type_name(x->type), x->m.l1, y->name,
                         qr_sens_type_name(y->type), y->m.l1);
        }
        if (st == QR_OK && qt_verbose)
            printf("%s %s: %d rows, brute force %lld node executions, grouped %lld (%d groups, %d rows evaluated, %d bound "
                   "violations)\n", name, off ? "off-one" : "one-on", rb.n, (long long)rb.n_exec, (long long)rg.n_exec,
                   rg.n_groups, rg.n, rg.n_bound_viol);
        qr_sens_free(&rb);
        qr_sens_free(&rg);
    }
    if (st != QR_OK) qt_fmt(msg, sizeof msg, "%s", qr_err_msg());
    if (se.b) qr_session_close(&se);
    if (a) { qr_graph_free(a); free(a); }
    if (b) { qr_graph_free(b); free(b); }
    qr_tensor_free_data(&in);
    qt_record(name, ok, "%s", msg);
}

/* Cumulative error: every quantizer on equals the analysis model's own per-layer
 * result for QDQ models; weight-only / activation-only each sit closer to the
 * baseline at the output than full quantization does here. */
typedef struct QtStepLog { int64_t calls, last_done, total; bool monotone; } QtStepLog;
static void qt_step_log(void *ctx, int64_t done, int64_t total) {
    QtStepLog *l = ctx;
    if (l->calls && (done < l->last_done || total != l->total)) l->monotone = false;
    l->calls++;
    l->last_done = done;
    l->total = total;
}

static void test_accumulated(void) {
    QtPair p;
    QrSession se;
    QT_OK(qt_session_pair("ort_qdq", &p, &se));
    QrSensOpts o = { .metric = QR_METRIC_L1 };
    QrSensResult sr = {0};
    QrAccum acc = {0};
    QrCompare c = {0};
    int topk[] = { 1, 3 };
    /* the progress hook hears every sensitivity row and every cumulative-error setting, in order */
    QtStepLog ls = { .monotone = true }, la = { .monotone = true };
    se.progress = (QrStepHook){ qt_step_log, &ls };
    QrStatus st = qr_sens_run(&se, &o, &sr);
    QT_CHECKF(st != QR_OK || (ls.monotone && ls.total == sr.n && ls.calls == sr.n && ls.last_done == sr.n - 1),
              "sens hook: %lld calls, last %lld, total %lld, rows %d", (long long)ls.calls, (long long)ls.last_done,
              (long long)ls.total, sr.n);
    se.progress = (QrStepHook){ qt_step_log, &la };
    if (st == QR_OK) st = qr_accum_run(&se, &sr, topk, 2, QR_METRIC_COSINE, &acc);
    QT_CHECKF(st != QR_OK || (la.monotone && la.calls == acc.n_settings && la.total == acc.n_settings),
              "accum hook: %lld calls, total %lld, settings %d", (long long)la.calls, (long long)la.total, acc.n_settings);
    se.progress = (QrStepHook){ 0 };
    if (st == QR_OK) st = qr_compare_run(&se, p.a, 0.99, &c);
    bool ok = st == QR_OK && acc.n_settings == 5;
    char msg[256] = "";
    for (int k = 0; ok && k < c.n; k++) {
        double full = acc.val[(size_t)c.rows[k].match * (size_t)acc.n_settings + 2];
        if (fabs(full - c.rows[k].m.cosine) > 1e-9) { ok = false; snprintf(msg, sizeof msg, "row %d: %.9g vs %.9g", k, full, c.rows[k].m.cosine); }
    }
    if (ok) ok = acc.out[0].cosine > acc.out[2].cosine && acc.out[1].cosine > acc.out[2].cosine &&
                 acc.out[3].cosine >= acc.out[2].cosine - 1e-9;
    if (st == QR_OK) st = qr_accum_write(&se, &acc, qt_tmpdir());
    /* each result owns its all_but_topK names: a later run with other k leaves them alone */
    QrAccum acc2 = {0};
    int topk2[] = { 2 };
    if (st == QR_OK) st = qr_accum_run(&se, &sr, topk2, 1, QR_METRIC_COSINE, &acc2);
    if (st == QR_OK && ok && (strcmp(acc.setting[3], "all_but_top1") || strcmp(acc.setting[4], "all_but_top3") ||
                              strcmp(acc2.setting[3], "all_but_top2"))) {
        ok = false;
        snprintf(msg, sizeof msg, "setting names after a second run: %s, %s; second run: %s", acc.setting[3], acc.setting[4],
                 acc2.setting[3]);
    }
    qr_accum_free(&acc2);
    qr_compare_free(&c);
    qr_accum_free(&acc);
    qr_sens_free(&sr);
    qr_session_close(&se);
    qt_pair_free(&p);
    QT_OK(st);
    QT_CHECKF(ok, "%s", msg);
}

/* The CLI commands write their files. */
static void test_analysis_cli(void) {
    QtCli r;
    qt_cli(&r, "compare fixtures/qpairs/qoperator/base.onnx fixtures/qpairs/qoperator/analysis.onnx "
               "-i fixtures/qpairs/qoperator/input.npy -o %s/cmp --quiet", qt_tmpdir());
    QT_CHECKF(r.code == 0, "compare exit %d: %s", r.code, r.err);
    qt_cli(&r, "sensitivity fixtures/qpairs/integer_ops/base.onnx fixtures/qpairs/integer_ops/analysis.onnx "
               "-i fixtures/qpairs/integer_ops/input.npy -o %s/sens --metric Cosine --quiet", qt_tmpdir());
    QT_CHECKF(r.code == 0, "sensitivity exit %d: %s", r.code, r.err);
    const char *files[] = { "cmp/compare_per_layer_out.txt", "cmp/compare_per_layer_out.csv", "sens/sensitive_ops.txt",
                            "sens/sensitive_ops.csv", "sens/sensitive_ops.json", "sens/accumulated_error.csv" };
    for (int i = 0; i < QR_ARRAY_LEN(files); i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", qt_tmpdir(), files[i]);
        uint64_t sz = 0;
        QT_CHECKF(qr_file_size(p, &sz) == QR_OK && sz > 100, "%s missing or empty", files[i]);
    }
    /* the csv header is the docs/REPORT.md contract */
    char p[512];
    snprintf(p, sizeof p, "%s/cmp/compare_per_layer_out.csv", qt_tmpdir());
    unsigned char *buf = NULL;
    size_t len = 0;
    QT_OK(qr_file_read(p, 0, &buf, &len));
    bool hdr = !strncmp((char *)buf, "Index,mod_name,base_op_type,analy_op_type,shape,quant_dtype,qscale,Cosine,MSE,L1,KL,"
                        "SQNR,Atol,Rtol,base_model_min,analy_model_min,base_model_max,analy_model_max,base_model_mean,"
                        "analy_model_mean,base_model_var,analy_model_var,base_tensor,analy_tensor,local_Cosine,local_SQNR", 200);
    free(buf);
    QT_CHECK(hdr);
    /* --mode both: int-vs-sim differences per layer, all 1 LSB rounding ties on the QAT pair */
    qt_cli(&r, "compare fixtures/qpairs/qat_fakequant/base.onnx fixtures/qpairs/qat_fakequant/analysis.onnx "
               "-i fixtures/qpairs/qat_fakequant/input.npy -o %s/both --mode both --quiet", qt_tmpdir());
    QT_CHECKF(r.code == 0, "compare --mode both exit %d: %s", r.code, r.err);
    snprintf(p, sizeof p, "%s/both/compare_per_layer_out.csv", qt_tmpdir());
    QT_OK(qr_file_read(p, 0, &buf, &len));
    char *txt = realloc(buf, len + 1);
    QT_CHECK(txt);
    txt[len] = 0;
    int lsb_rows = 0, diffs = 0, bad = 0;
    bool hdr_ok = strstr(txt, ",lsb_max,lsb_diff,lsb_ties\n") != NULL;
    for (char *line = strchr(txt, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        /* last three fields: lsb_max, diff/n, ties */
        char *end = strchr(line + 1, '\n');
        if (!end) break;
        char *f3 = end;
        int commas = 0;
        while (f3 > line && commas < 3) if (*--f3 == ',') commas++;
        long long mx = -1, d = -1, n = -1, ties = -1;
        if (sscanf(f3, ",%lld,%lld/%lld,%lld", &mx, &d, &n, &ties) == 4) {
            lsb_rows++;
            diffs += (int)d;
            if (mx > 1 || ties > d) bad++;
        }
    }
    free(txt);
    QT_CHECKF(hdr_ok && lsb_rows >= 5 && diffs > 0 && bad == 0, "hdr %d, %d rows with LSB columns, %d diffs, %d bad", hdr_ok, lsb_rows, diffs, bad);
    qt_cli(&r, "sensitivity fixtures/qpairs/ort_qdq/base.onnx fixtures/qpairs/ort_qdq/analysis.onnx --metric bogus");
    QT_CHECK(r.code == 2);
}

/* Metric definitions on hand-made edge cases. */
static void test_metric_edges(void) {
    float z[4] = { 0, 0, 0, 0 }, y[4] = { 0, 1, 0, 0 }, a[4] = { 1, -2, 3, 4 };
    QrMetrics m;
    qr_metrics_compute(z, z, 4, &m);
    QT_CHECK(m.cosine == 1 && isinf(m.sqnr) && m.rtol == 0 && m.kl == 0);
    qr_metrics_compute(z, y, 4, &m);
    QT_CHECK(m.cosine == 0 && m.rtol == FLT_MAX && m.atol == 1);
    qr_metrics_compute(a, a, 4, &m);
    QT_CHECK(fabs(m.cosine - 1) < 1e-12 && isinf(m.sqnr) && m.x_var == m.y_var && fabs(m.x_mean - 1.5) < 1e-12);
    float nan_y[4] = { 1, NAN, 3, INFINITY };
    qr_metrics_compute(a, nan_y, 4, &m);
    QT_CHECK(m.n == 2 && m.n_nonfinite == 2);
    /* chunked accumulation equals one shot */
    float big_x[1000], big_y[1000];
    for (int i = 0; i < 1000; i++) { big_x[i] = sinf((float)i) * 3; big_y[i] = big_x[i] + 0.01f * cosf((float)i * 7); }
    QrMetrics one, chunked;
    qr_metrics_compute(big_x, big_y, 1000, &one);
    QrMetricAcc acc;
    qr_metric_acc_init(&acc);
    qr_metric_acc_add(&acc, big_x, big_y, 333);
    qr_metric_acc_add(&acc, big_x + 333, big_y + 333, 667);
    qr_metric_acc_finish(&acc, &chunked);
    QT_CHECK(fabs(one.kl - chunked.kl) < 1e-12 && fabs(one.x_var - chunked.x_var) < 1e-12 && fabs(one.cosine - chunked.cosine) < 1e-14);
}


/* The ranking against a brute-force reference made outside qreport
 * (fixtures/make_sens_ref.py: one ONNX Runtime run per model variant): the same top 5, and
 * every metric of each within 1e-5 relative (KL: 1e-9 absolute near 0). On x86-64 the float
 * baseline has ONNX Runtime's bits at every value (test golden exact), so what is left is
 * the metric arithmetic. aarch64 sums its convolutions in NEON order without the x86-64
 * reference's fused multiply-adds: 2e-4 there (measured 4.5e-5 under qemu, KL). */
#if defined(__aarch64__)
#define QT_SENS_TOL 2e-4
#else
#define QT_SENS_TOL 1e-5
#endif
static void test_sens_reference(void) {
    FILE *f = fopen("fixtures/qpairs/qat_fakequant/sens_ref.tsv", "r");
    QT_CHECK(f);
    char line[1024], names[32][256], types[32][32];
    double vals[32][5];
    int n = 0;
    if (!fgets(line, sizeof line, f)) n = -1;
    while (n >= 0 && n < 32 && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%255[^\t]\t%31[^\t]\t%lf\t%lf\t%lf\t%lf\t%lf", names[n], types[n], &vals[n][0], &vals[n][1],
                   &vals[n][2], &vals[n][3], &vals[n][4]) == 7) n++;
    }
    fclose(f);
    QT_CHECK(n >= 5);
    QtPair p;
    QrSession se;
    QT_OK(qt_session_pair("qat_fakequant", &p, &se));
    QrSensOpts o = { .metric = QR_METRIC_L1 };
    QrSensResult sr = {0};
    QrStatus st = qr_sens_run(&se, &o, &sr);
    char msg[512] = "";
    bool ok = st == QR_OK && sr.n == n;
    double worst[5] = { 0, 0, 0, 0, 0 };
    if (st == QR_OK && sr.n != n) snprintf(msg, sizeof msg, "%d rows, reference %d", sr.n, n);
    for (int k = 0; ok && k < 5; k++) {
        const QrSensRow *r = &sr.rows[k];
        if (strcmp(r->name, names[k]) || strcmp(qr_sens_type_name(r->type), types[k])) {
            ok = false;
            qt_fmt(msg, sizeof msg, "rank %d: %s/%s, reference %s/%s", k + 1, r->name, qr_sens_type_name(r->type), names[k], types[k]);
        }
        double v[5] = { r->m.l1, r->m.cosine, r->m.mse, r->m.kl, r->m.sqnr };
        for (int j = 0; ok && j < 5; j++) {
            if (vals[k][j] != 0) worst[j] = QR_MAX(worst[j], fabs(v[j] - vals[k][j]) / fabs(vals[k][j]));
            if (!qt_close(v[j], vals[k][j], QT_SENS_TOL, j == 3 ? 1e-9 : 0)) {
                ok = false;
                snprintf(msg, sizeof msg, "rank %d %s metric %d: %.9g, reference %.9g", k + 1, r->name, j, v[j], vals[k][j]);
            }
        }
    }
    if (ok)
        printf("sensitivity vs brute-force ORT reference, top 5: largest relative gap L1 %.2g, Cosine %.2g, MSE %.2g, "
               "KL %.2g, SQNR %.2g (tolerance %.0e)\n", worst[0], worst[1], worst[2], worst[3], worst[4], QT_SENS_TOL);
    qr_sens_free(&sr);
    qr_session_close(&se);
    qt_pair_free(&p);
    QT_OK(st);
    QT_CHECKF(ok, "%s", msg);
}


/* Edge cases: two model outputs, an all-zero layer, an int16 quantizer,
 * quantizers on the model input and output, NaN in an activation. */
static QrStatus qt_edge_models(const char *dir, QrGraph **b, QrGraph **a) {
    int64_t dx[2] = { 1, 4 }, dw[2] = { 4, 3 }, dy[2] = { 1, 3 }, ds[1] = { 1 };
    float w[12], zero3[3] = { 0, 0, 0 };
    int8_t wq[12];
    for (int i = 0; i < 12; i++) { w[i] = (float)((i * 7) % 11 - 5) * 0.1f; wq[i] = (int8_t)lrintf(w[i] / 0.01f); }
    float sx = 0.02f, sh = 0.001f, sw = 0.01f, so = 0.05f;
    int8_t z8 = 0;
    int16_t z16 = 0;
    char path[512];
    for (int k = 0; k < 2; k++) {
        QtModel mb;
        qt_mb_init(&mb, 21);
        qt_mb_input(&mb, "x", QR_DT_F32, 2, dx);
        qt_mb_output(&mb, "y1", QR_DT_F32, 2, dy);
        qt_mb_output(&mb, "y2", QR_DT_F32, 2, dy);
        qt_mb_init_raw(&mb, "zeros", QR_DT_F32, 2, dy, zero3, sizeof zero3);
        if (k == 0) {
            qt_mb_init_raw(&mb, "W", QR_DT_F32, 2, dw, w, sizeof w);
            qt_mb_node(&mb, "MatMul", "mm", "x,W", "h");
            qt_mb_node(&mb, "Relu", "relu", "h", "y1");
            qt_mb_node(&mb, "Mul", "zero", "h,zeros", "y2");
        } else {
            qt_mb_init_raw(&mb, "Wq", QR_DT_S8, 2, dw, wq, sizeof wq);
            qt_mb_init_raw(&mb, "sw", QR_DT_F32, 0, ds, &sw, 4);
            qt_mb_init_raw(&mb, "sx", QR_DT_F32, 0, ds, &sx, 4);
            qt_mb_init_raw(&mb, "sh", QR_DT_F32, 0, ds, &sh, 4);
            qt_mb_init_raw(&mb, "so", QR_DT_F32, 0, ds, &so, 4);
            qt_mb_init_raw(&mb, "z8", QR_DT_S8, 0, ds, &z8, 1);
            qt_mb_init_raw(&mb, "z16", QR_DT_S16, 0, ds, &z16, 2);
            qt_mb_node(&mb, "QuantizeLinear", "qx", "x,sx,z8", "xq");
            qt_mb_node(&mb, "DequantizeLinear", "dqx", "xq,sx,z8", "xd");
            qt_mb_node(&mb, "DequantizeLinear", "dqw", "Wq,sw,z8", "Wd");
            qt_mb_node(&mb, "MatMul", "mm", "xd,Wd", "h0");
            qt_mb_node(&mb, "QuantizeLinear", "qh", "h0,sh,z16", "hq");
            qt_mb_node(&mb, "DequantizeLinear", "dqh", "hq,sh,z16", "h");
            qt_mb_node(&mb, "Relu", "relu", "h", "r");
            qt_mb_node(&mb, "QuantizeLinear", "qo", "r,so,z8", "rq");
            qt_mb_node(&mb, "DequantizeLinear", "dqo", "rq,so,z8", "y1");
            qt_mb_node(&mb, "Mul", "zero", "h,zeros", "y2");
        }
        qt_fmt(path, sizeof path, "%s/%s.onnx", dir, k ? "edge_a" : "edge_b");
        QrStatus st = qt_mb_write(&mb, path);
        qt_mb_free(&mb);
        QR_TRY(st);
        QR_TRY(qr_run_load(path, k ? a : b));
    }
    return QR_OK;
}

static void test_edge_cases(void) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/edge", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    QrGraph *b = NULL, *a = NULL;
    QT_OK(qt_edge_models(dir, &b, &a));
    for (int pass = 0; pass < 2; pass++) {
        int64_t dx[2] = { 1, 4 };
        QrTensor in = {0};
        QT_OK(qr_tensor_set_shape(&in, QR_DT_F32, 2, dx));
        QT_OK(qr_tensor_alloc_data(&in));
        float *px = in.data;
        for (int i = 0; i < 4; i++) px[i] = 0.3f * (float)(i + 1) - 0.5f;
        if (pass) px[2] = NAN;
        QrSession se;
        QrCompare c = {0};
        QrSensResult sr = {0};
        QrSensOpts so = { .metric = QR_METRIC_L1 };
        QrStatus st = qr_run_infer(b, &in);
        if (st == QR_OK) st = qr_run_infer(a, &in);
        if (st == QR_OK) st = qr_session_open(&se, b, a, &in);
        if (st == QR_OK) st = qr_compare_run(&se, a, 0.99, &c);
        if (st == QR_OK) st = qr_sens_run(&se, &so, &sr);
        bool ok = st == QR_OK;
        char msg[256] = "";
        int has_input = 0, has_int16 = 0, zero_row = 0, nonfinite = 0;
        for (int i = 0; ok && i < se.qt.n; i++) {
            has_int16 += se.qt.q[i].dtype == QR_DT_S16;
            has_input += se.qt.q[i].kind == QR_QK_ACTIVATION && se.qt.q[i].owner < 0;
        }
        for (int k = 0; ok && k < c.n; k++) {
            const QrLayerRow *r = &c.rows[k];
            if (!strcmp(b->nodes[se.m.m[r->match].b_node].name, "zero") && r->has_m && r->m.cosine == 1 && r->m.mse == 0) zero_row++;
            nonfinite += r->has_m && r->m.n_nonfinite > 0;
        }
        int input_row = 0;
        for (int k = 0; ok && k < sr.n; k++) input_row += !strcmp(sr.rows[k].op_type, "Input");
        if (ok && !pass) {
            ok = c.n >= 3 && has_input == 1 && has_int16 == 1 && zero_row == 1 && input_row == 1 && c.out.n == 6 &&
                 c.out.cosine > 0.99 && c.out.cosine <= 1 + 1e-12;
            snprintf(msg, sizeof msg, "rows %d, input q %d, int16 q %d, zero row %d, input row %d, out n %lld cos %.6f", c.n,
                     has_input, has_int16, zero_row, input_row, (long long)c.out.n, c.out.cosine);
        } else if (ok) {
            /* NaN flows through MatMul into every output element: counted, never a crash */
            ok = nonfinite > 0 && c.out.n_nonfinite > 0;
            snprintf(msg, sizeof msg, "NaN: %d rows with non-finite values, outputs %lld", nonfinite, (long long)c.out.n_nonfinite);
        }
        if (st != QR_OK) qt_fmt(msg, sizeof msg, "%s", qr_err_msg());
        qr_sens_free(&sr);
        qr_compare_free(&c);
        if (st == QR_OK || se.b) qr_session_close(&se);
        qr_tensor_free_data(&in);
        if (!ok) { qr_graph_free(a); free(a); qr_graph_free(b); free(b); }
        QT_CHECKF(ok, "pass %d: %s", pass, msg);
    }
    qr_graph_free(a); free(a); qr_graph_free(b); free(b);
}

/* The comparison's integer values are dequantized into one buffer per run's taps, reused from value
 * to value and sample to sample (compare.c qr__cmp_deq): a data-set plan over samples of different
 * content gives, sample by sample, the rows (full-run and shadow metrics, error split) of a fresh
 * one-sample comparison, whose own buffer starts empty; the buffer both grew and was reused. A
 * buffer returned without the current value written, or one kept too small, fails it (the latter
 * under make asan). */
static void test_compare_deq_buffer(void) {
    static const char *const pairs[] = { "qoperator", "ort_qdq" };
    enum { NS = 3 };
    for (int pi = 0; pi < QR_ARRAY_LEN(pairs); pi++) {
        QtPair p;
        QrSession se;
        QrCompare c = {0}, one = {0};
        QrCmpPlan *plan = NULL;
        QrTensor in = {0}, in0 = {0};
        bool open = false;
        int diff = 0, rows = -1;
        int64_t calls = 0, grows = 0;
        char msg[300] = "";
        QrStatus st = qt_session_pair(pairs[pi], &p, &se);
        open = st == QR_OK;
        if (st == QR_OK) st = qr_tensor_to_f32(&p.in, &in0);
        if (st == QR_OK) st = qr_tensor_to_f32(&p.in, &in);
        QrLayerRow *got = NULL;
        for (int j = 0; j < NS && st == QR_OK; j++) {
            for (int64_t i = 0; i < in.numel; i++)
                ((float *)in.data)[i] = ((const float *)in0.data)[(i + 7 * j) % in.numel] * (1.0f - 0.25f * (float)j);
            qr_session_next_inputs(&se, &in);
            if (!plan) {
                __atomic_store_n(&qr__cmp_deq_calls, 0, __ATOMIC_RELAXED);
                __atomic_store_n(&qr__cmp_deq_grows, 0, __ATOMIC_RELAXED);
                st = qr_compare_ds_open(&se, NULL, NULL, NULL, &c, &plan);
                rows = st == QR_OK ? c.n : -1;
                got = st == QR_OK ? calloc((size_t)NS * (size_t)c.n + 1, sizeof *got) : NULL;
            }
            if (st == QR_OK) st = qr_compare_ds_run(plan, NULL, NULL);
            for (int k = 0; st == QR_OK && got && k < c.n; k++) got[j * c.n + k] = c.rows[k];
        }
        calls = __atomic_load_n(&qr__cmp_deq_calls, __ATOMIC_RELAXED);
        grows = __atomic_load_n(&qr__cmp_deq_grows, __ATOMIC_RELAXED);
        if (plan) { qr_compare_ds_close(plan); qr_compare_free(&c); }
        for (int j = 0; j < NS && st == QR_OK && got; j++) {
            for (int64_t i = 0; i < in.numel; i++)
                ((float *)in.data)[i] = ((const float *)in0.data)[(i + 7 * j) % in.numel] * (1.0f - 0.25f * (float)j);
            qr_session_next_inputs(&se, &in);
            st = qr_compare_run(&se, p.a, 0.99, &one);
            for (int k = 0; st == QR_OK && k < one.n && one.n == rows; k++) {
                const QrLayerRow *a = &got[j * rows + k], *b = &one.rows[k];
                if (a->match != b->match || a->has_m != b->has_m || a->has_local != b->has_local ||
                    memcmp(&a->m, &b->m, sizeof a->m) || memcmp(&a->local, &b->local, sizeof a->local) ||
                    memcmp(&a->sp, &b->sp, sizeof a->sp)) {
                    if (!diff++) snprintf(msg, sizeof msg, "sample %d row %d: cosine %.9g / %.9g, local %.9g / %.9g", j, k,
                                          a->m.cosine, b->m.cosine, a->local.cosine, b->local.cosine);
                }
            }
            if (st == QR_OK && one.n != rows) { diff++; snprintf(msg, sizeof msg, "rows %d vs %d", rows, one.n); }
            qr_compare_free(&one);
        }
        free(got);
        if (open) qr_session_close(&se);
        qr_tensor_free_data(&in);
        qr_tensor_free_data(&in0);
        qt_pair_free(&p);
        QT_CHECKF(st == QR_OK && rows > 0, "%s: %s", pairs[pi], st == QR_OK ? "no rows" : qr_err_msg());
        QT_CHECKF(diff == 0, "%s: %d rows differ from a fresh comparison; first: %s", pairs[pi], diff, msg);
        QT_CHECKF(calls > grows && grows >= 1 && calls >= 2 * NS, "%s: %lld values dequantized into %lld buffer allocations",
                  pairs[pi], (long long)calls, (long long)grows);
    }
}

static void qt_analysis_all(void) {
    for (int i = 0; i < QR_ARRAY_LEN(qt_pairs); i++) qt_metrics_pair(qt_pairs[i]);
    for (int i = 0; i < QR_ARRAY_LEN(qt_pairs); i++) qt_compare_pair(qt_pairs[i]);
    for (int i = 0; i < QR_ARRAY_LEN(qt_pairs); i++) qt_sens_pair(qt_pairs[i]);
    qt_sens_grouped_pair("tpairs/static_int8");
    qt_sens_grouped_pair("qpairs/qat_convbn");
    QT_RUN(test_accumulated);
    QT_RUN(test_sens_reference);
    QT_RUN(test_metric_edges);
    QT_RUN(test_edge_cases);
    QT_RUN(test_analysis_cli);
    QT_RUN(test_compare_deq_buffer);
}
