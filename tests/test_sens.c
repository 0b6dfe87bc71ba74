/* tests/test_sens — analysis/sens's grouped ranking (qr__sens_grouped) against brute force
 * (--all-rows): the same top 10 (names, types, metric bits) on the fixture pairs, and less work
 * than brute force where few rows matter (a chain with three coarse quantizers side by side). */

/* The fixture pairs with more than 10 one-on rows (a smaller pair ranks every row either way). */
static const char *const qt_sens_pairs[] = {
    "tpairs/static_int8", "qpairs/qat_convbn", "qpairs/qat_fakequant", "qpairs/ort_qdq", "qpairs/culprit",
};

typedef struct QtSensPair {
    QrGraph *b, *a;
    QrTensor in;
    QrSession se;
} QtSensPair;

static void qt_sens_pair_close(QtSensPair *p) {
    if (p->se.b) qr_session_close(&p->se);
    if (p->a) { qr_graph_free(p->a); free(p->a); }
    if (p->b) { qr_graph_free(p->b); free(p->b); }
    qr_tensor_free_data(&p->in);
    memset(p, 0, sizeof *p);
}

static QrStatus qt_sens_pair_open(const char *dir, QtSensPair *p) {
    char path[256];
    memset(p, 0, sizeof *p);
    snprintf(path, sizeof path, "fixtures/%s/input.npy", dir);
    QrStatus st = qr_npy_read(path, &p->in);
    snprintf(path, sizeof path, "fixtures/%s/base.onnx", dir);
    if (st == QR_OK) st = qr_run_load(path, &p->b);
    snprintf(path, sizeof path, "fixtures/%s/analysis.onnx", dir);
    if (st == QR_OK) st = qr_run_load(path, &p->a);
    if (st == QR_OK) st = qr_run_infer(p->b, &p->in);
    if (st == QR_OK) st = qr_run_infer(p->a, &p->in);
    if (st == QR_OK) st = qr_session_open(&p->se, p->b, p->a, &p->in);
    return st;
}

/* One pair: brute force and the grouped ranking (forced: the automatic one starts at
 * QR_SENS_GROUP_AUTO rows) give the same 10 most sensitive rows, the same bits. (On pairs this
 * small, 12 to 29 rows, the grouped ranking does more work than brute force: a top 10 is most
 * of them.) */
static void qt_sens_topk_pair(const char *dir) {
    char name[160], msg[512] = "";
    snprintf(name, sizeof name, "sens top 10 = brute force/%s", dir);
    QtSensPair p;
    QrStatus st = qt_sens_pair_open(dir, &p);
    QrSensOpts ob = { .metric = QR_METRIC_L1, .grouped = -1 }, og = ob;
    og.grouped = 1;
    og.group_top = 10;
    QrSensResult rb = {0}, rg = {0};
    if (st == QR_OK) st = qr_sens_run(&p.se, &ob, &rb);
    if (st == QR_OK) st = qr_sens_run(&p.se, &og, &rg);
    bool ok = st == QR_OK && rb.n > 10 && rg.grouped && rg.n_top == 10 && rg.n + rg.n_unranked == rb.n;
    if (st != QR_OK) qt_fmt(msg, sizeof msg, "%s", qr_err_msg());
    else if (!ok)
        qt_fmt(msg, sizeof msg, "%d rows by brute force; grouped %d, %d ranked, %d evaluated + %d not", rb.n, rg.grouped,
               rg.n_top, rg.n, rg.n_unranked);
    for (int k = 0; ok && k < 10; k++) {
        const QrSensRow *x = qr_sens_top(&rb, k), *y = qr_sens_top(&rg, k);
        ok = !strcmp(x->name, y->name) && x->type == y->type && !memcmp(&x->m, &y->m, sizeof x->m);
        if (!ok)
            qt_fmt(msg, sizeof msg, "rank %d: %s (%s) L1 %.9g by brute force, %s (%s) L1 %.9g grouped", k + 1, x->name,
                   qr_sens_type_name(x->type), x->m.l1, y->name, qr_sens_type_name(y->type), y->m.l1);
    }
    if (st == QR_OK && qt_verbose)
        printf("%s: %d rows; brute force %lld node executions, grouped %lld (%d groups, %d rows evaluated)\n", name, rb.n,
               (long long)rb.n_exec, (long long)rg.n_exec, rg.n_groups, rg.n);
    qr_sens_free(&rb);
    qr_sens_free(&rg);
    qt_sens_pair_close(&p);
    qt_record(name, ok, "%s", msg);
}

/* A chain of 20 Mul-by-one nodes, each output quantized (int8, zero point 0): the analysis model
 * of the pair (the baseline: the Muls alone) at dir/sens_chain_{b,a}.onnx. The quantizers of
 * stages 7, 8 and 9 are coarse (scale 0.25), the others fine (0.01, no clipping for |x| <= 1). */
#define QT_SENS_CHAIN 20
static QrStatus qt_sens_chain_models(const char *dir, QrGraph **b, QrGraph **a) {
    int64_t dx[2] = { 1, 256 }, ds[1] = { 1 };
    float one = 1.0f, s_fine = 0.01f, s_coarse = 0.25f;
    int8_t z8 = 0;
    char path[512];
    for (int k = 0; k < 2; k++) {
        QtModel mb;
        qt_mb_init(&mb, 21);
        qt_mb_input(&mb, "x", QR_DT_F32, 2, dx);
        qt_mb_output(&mb, "y", QR_DT_F32, 2, dx);
        qt_mb_init_raw(&mb, "one", QR_DT_F32, 0, ds, &one, 4);
        qt_mb_init_raw(&mb, "sf", QR_DT_F32, 0, ds, &s_fine, 4);
        qt_mb_init_raw(&mb, "sc", QR_DT_F32, 0, ds, &s_coarse, 4);
        qt_mb_init_raw(&mb, "z8", QR_DT_S8, 0, ds, &z8, 1);
        for (int i = 0; i < QT_SENS_CHAIN; i++) {
            char nm[16], ins[32], out[16], h[16], hq[16], qn[16], dn[16], qi[48], di[48];
            const char *sc = i >= 7 && i <= 9 ? "sc" : "sf";
            snprintf(nm, sizeof nm, "m%d", i);
            if (i) snprintf(ins, sizeof ins, "v%d,one", i - 1);
            else snprintf(ins, sizeof ins, "x,one");
            if (i < QT_SENS_CHAIN - 1) snprintf(out, sizeof out, "v%d", i);
            else snprintf(out, sizeof out, "y");
            snprintf(h, sizeof h, "h%d", i);
            snprintf(hq, sizeof hq, "hq%d", i);
            snprintf(qn, sizeof qn, "q%d", i);
            snprintf(dn, sizeof dn, "dq%d", i);
            snprintf(qi, sizeof qi, "%s,%s,z8", h, sc);
            snprintf(di, sizeof di, "%s,%s,z8", hq, sc);
            qt_mb_node(&mb, "Mul", nm, ins, k ? h : out);
            if (!k) continue;
            qt_mb_node(&mb, "QuantizeLinear", qn, qi, hq);
            qt_mb_node(&mb, "DequantizeLinear", dn, di, out);
        }
        qt_fmt(path, sizeof path, "%s/sens_chain_%s.onnx", dir, k ? "a" : "b");
        QrStatus st = qt_mb_write(&mb, path);
        qt_mb_free(&mb);
        QR_TRY(st);
        QR_TRY(qr_run_load(path, k ? a : b));
    }
    return QR_OK;
}

/* Where few rows matter (3 coarse quantizers of 20, side by side, a top 3), the grouped ranking
 * must do less work than brute force, counted in rows evaluated and node executions (not in
 * time: the groups without a coarse quantizer are never refined), and find the same top 3 with the
 * same bits. (With the coarse ones at stages 3, 9 and 15, three groups of four are refined row by
 * row and the grouped ranking does more work than brute force: 292 node executions against 250.) */
static void test_sens_grouped_work(void) {
    char dir[512];
    qt_fmt(dir, sizeof dir, "%s/sens", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    QrGraph *b = NULL, *a = NULL;
    QrStatus st = qt_sens_chain_models(dir, &b, &a);
    QrTensor in = {0};
    int64_t dx[2] = { 1, 256 };
    if (st == QR_OK) st = qr_tensor_set_shape(&in, QR_DT_F32, 2, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&in);
    for (int i = 0; st == QR_OK && i < 256; i++) ((float *)in.data)[i] = sinf(0.37f * (float)i) * 0.95f;
    QrSession se;
    memset(&se, 0, sizeof se);
    if (st == QR_OK) st = qr_run_infer(b, &in);
    if (st == QR_OK) st = qr_run_infer(a, &in);
    if (st == QR_OK) st = qr_session_open(&se, b, a, &in);
    QrSensOpts ob = { .metric = QR_METRIC_L1, .grouped = -1, .group_top = 3 }, og = ob;
    og.grouped = 1;
    QrSensResult rb = {0}, rg = {0};
    if (st == QR_OK) st = qr_sens_run(&se, &ob, &rb);
    int64_t kl0 = qr_metric_kl_pairs;
    if (st == QR_OK) st = qr_sens_run(&se, &og, &rg);
    int64_t kl_pairs = qr_metric_kl_pairs - kl0;
    char msg[512] = "";
    bool ok = st == QR_OK && rb.n == QT_SENS_CHAIN && rg.grouped && rg.n_top == 3;
    if (st != QR_OK) qt_fmt(msg, sizeof msg, "%s", qr_err_msg());
    else if (!ok) qt_fmt(msg, sizeof msg, "%d rows by brute force, grouped %d with %d ranked", rb.n, rg.grouped, rg.n_top);
    /* KL's softmax sums only for what is reported, the reference and the rows evaluated (256 outputs
     * each); a group only ranks, by L1 (before: every group's too) */
    if (ok && kl_pairs != (int64_t)(rg.n + 1) * 256) {
        ok = false;
        qt_fmt(msg, sizeof msg, "grouped ranking: KL over %lld output pairs; %d rows + the reference = %d (and %d groups)",
               (long long)kl_pairs, rg.n, (rg.n + 1) * 256, rg.n_groups);
    }
    for (int k = 0; ok && k < 3; k++) {
        const QrSensRow *x = qr_sens_top(&rb, k), *y = qr_sens_top(&rg, k);
        ok = !strcmp(x->name, y->name) && !memcmp(&x->m, &y->m, sizeof x->m) && x->name[0] == 'm' && atoi(x->name + 1) >= 7 &&
             atoi(x->name + 1) <= 9;
        if (!ok) qt_fmt(msg, sizeof msg, "rank %d: %s by brute force, %s grouped (a coarse stage expected)", k + 1, x->name, y->name);
    }
    if (ok) {
        ok = rg.n < rb.n && rg.n_unranked > 0 && rg.n_exec < rb.n_exec;
        if (!ok)
            qt_fmt(msg, sizeof msg, "grouped evaluated %d rows (%d groups), %lld node executions; brute force %d rows, %lld",
                   rg.n, rg.n_groups, (long long)rg.n_exec, rb.n, (long long)rb.n_exec);
    }
    if (qt_verbose && st == QR_OK)
        printf("sens chain: brute force %d rows, %lld node executions; grouped %d rows + %d groups, %lld\n", rb.n,
               (long long)rb.n_exec, rg.n, rg.n_groups, (long long)rg.n_exec);
    qr_sens_free(&rb);
    qr_sens_free(&rg);
    if (se.b) qr_session_close(&se);
    if (a) { qr_graph_free(a); free(a); }
    if (b) { qr_graph_free(b); free(b); }
    qr_tensor_free_data(&in);
    QT_CHECKF(ok, "%s", msg);
}

static void qt_sens_all(void) {
    for (int i = 0; i < QR_ARRAY_LEN(qt_sens_pairs); i++) qt_sens_topk_pair(qt_sens_pairs[i]);
    QT_RUN(test_sens_grouped_work);
}
