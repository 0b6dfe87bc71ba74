/* tests/trust — issue 20: every pair is proven equivalent, or it is not a pair.
 * Pair verification on every fixture pair (incl. the PyTorch eager-mode QAT export with
 * fused ConvBn / ConvBnReLU modules, fixtures/make_qat_convbn.py), a planted mis-pairing,
 * headlines on verified pairs only, off-one ranking, shared-weight findings. */

static const char *const qt_trust_pairs[] = { "qat_convbn", "qat_fakequant", "ort_qdq", "qoperator", "int16_mixed",
                                              "integer_ops", "culprit" };

/* Loads fixtures/qpairs/<pair> and opens a session; rename (optional) edits the analysis graph first. */
static QrStatus qt_trust_open(const char *pair, QtPair *p, QrSession *se, void (*edit)(QrGraph *a)) {
    char path[512];
    memset(p, 0, sizeof *p);
    memset(se, 0, sizeof *se);
    snprintf(path, sizeof path, "fixtures/qpairs/%s/base.onnx", pair);
    QR_TRY(qr_onnx_load(path, &p->b));
    snprintf(path, sizeof path, "fixtures/qpairs/%s/analysis.onnx", pair);
    QR_TRY(qr_onnx_load(path, &p->a));
    snprintf(path, sizeof path, "fixtures/qpairs/%s/input.npy", pair);
    QR_TRY(qr_npy_read(path, &p->in));
    QR_TRY(qr_graph_infer(p->b, &p->in));
    QR_TRY(qr_graph_infer(p->a, &p->in));
    if (edit) edit(p->a);
    QR_TRY(qr_session_open(se, p->b, p->a, &p->in));
    return qr_session_run_baseline(se);
}

/* The analysis node whose output pair m uses lies after a BatchNormalization (or is one). */
static bool qt_trust_after_bn(const QrGraph *a, int v) {
    for (int hops = 0; v >= 0 && hops < 8; hops++) {
        int p = a->values[v].producer;
        if (p < 0) return false;
        if (!strcmp(a->nodes[p].op_type, "BatchNormalization")) return true;
        if (strcmp(a->nodes[p].op_type, "QuantizeLinear") && strcmp(a->nodes[p].op_type, "DequantizeLinear")) return false;
        v = a->nodes[p].in[0];
    }
    return false;
}

/* Acceptance 2: on every fixture pair every pair is verified (relative equivalence error
 * <= QR_EQUIV_TOL of the value's range) and every unmatched analysis value has a reason.
 * On the QAT ConvBn export the four convs without activation pair with their BN output. */
static void test_trust_verified(void) {
    for (int k = 0; k < QR_ARRAY_LEN(qt_trust_pairs); k++) {
        QtPair p;
        QrSession se;
        QrStatus st = qt_trust_open(qt_trust_pairs[k], &p, &se, NULL);
        char msg[512] = "";
        int n_pairs = 0, after_bn = 0;
        bool ok = st == QR_OK && se.m.verified_run && se.m.n_unverified == 0;
        if (st != QR_OK) snprintf(msg, sizeof msg, "%s", qr_err_msg());
        for (int i = 0; ok && i < se.m.n; i++) {
            const QrMatch *m = &se.m.m[i];
            if (m->a_node < 0) continue;
            n_pairs++;
            if (!qr_match_verified(m) || !(m->equiv_rel <= QR_EQUIV_TOL)) {
                ok = false;
                snprintf(msg, sizeof msg, "'%s' -> '%s': %s, rel %g", p.b->nodes[m->b_node].name, p.a->values[m->a_value].name,
                         qr_match_verify_name(m->verify), m->equiv_rel);
            }
            if (!strcmp(p.b->nodes[m->b_node].op_type, "Conv") && qt_trust_after_bn(p.a, m->a_value)) after_bn++;
        }
        for (int i = 0; ok && i < se.m.n_unmatched_a; i++)
            if (!se.m.unmatched_why[i] || !*se.m.unmatched_why[i]) ok = false, snprintf(msg, sizeof msg, "unmatched without reason");
        if (ok && !strcmp(qt_trust_pairs[k], "qat_convbn")) {
            /* 8 fused ConvBn(ReLU): the 4 with ReLU fold BN into the conv's unit, the 4 linear ones move */
            ok = after_bn == 8 && se.m.n_repaired == 4 && n_pairs == 20;
            if (!ok) snprintf(msg, sizeof msg, "%d convs paired after their BN, %d moved, %d pairs", after_bn, se.m.n_repaired, n_pairs);
        }
        char name[64];
        snprintf(name, sizeof name, "trust/verified/%s", qt_trust_pairs[k]);
        qt_record(name, ok, "%s", msg);
        qr_session_close(&se);
        qt_pair_free(&p);
    }
}

/* Before the fix the linear QAT convs were paired by node name with their Div output: that
 * candidate is what the name-based matcher still proposes (qr_match alone), and verification
 * measures it as far from equivalent. */
static void test_trust_qat_bug(void) {
    QtPair p;
    QT_OK(qt_pair_load(&p, "qat_convbn", NULL));
    int div = 0;
    for (int i = 0; i < p.mr.n; i++) {
        const QrMatch *m = &p.mr.m[i];
        if (m->a_node >= 0 && strstr(p.a->values[m->a_value].name, "/Div_output_0")) div++;
    }
    qt_pair_free(&p);
    QT_CHECKF(div == 4, "name-based candidates at a Div output: %d (the fixture no longer shows the bug)", div);
    QrSession se;
    QT_OK(qt_trust_open("qat_convbn", &p, &se, NULL));
    int moved = 0;
    for (int i = 0; i < se.m.n; i++) {
        const QrMatch *m = &se.m.m[i];
        if (m->note && strstr(m->note, "/Div_output_0") && strstr(m->note, "moved from")) moved++;
        QT_CHECKF(m->a_node < 0 || !strstr(p.a->values[m->a_value].name, "/Div_output_0"), "still paired with %s",
                  p.a->values[m->a_value].name);
    }
    qr_session_close(&se);
    qt_pair_free(&p);
    QT_CHECKF(moved == 4, "%d pairs moved off a Div output", moved);
}

/* The node names of qat_convbn's /res_conv1/Conv and /res_conv2/Conv swapped: the name
 * candidates point at the wrong values (same shapes); they come out UNVERIFIED. */
static void qt_trust_swap_names(QrGraph *a) {
    int c1 = -1, c2 = -1;
    for (int i = 0; i < a->n_nodes; i++) {
        if (!strcmp(a->nodes[i].name, "/res_conv1/Conv")) c1 = i;
        if (!strcmp(a->nodes[i].name, "/res_conv2/Conv")) c2 = i;
    }
    if (c1 < 0 || c2 < 0) return;
    const char *t = a->nodes[c1].name;
    a->nodes[c1].name = a->nodes[c2].name;
    a->nodes[c2].name = t;
}

static void test_trust_planted_mispair(void) {
    QtPair p;
    QrSession se;
    QT_OK(qt_trust_open("qat_convbn", &p, &se, qt_trust_swap_names));
    int planted = -1;
    for (int i = 0; i < se.m.n; i++)
        if (!strcmp(p.b->nodes[se.m.m[i].b_node].name, "/res_conv2/Conv")) planted = i;
    bool ok = planted >= 0 && se.m.verified_run && se.m.m[planted].method == QR_MM_NODE_NAME &&
              strstr(p.a->values[se.m.m[planted].a_value].name, "/res_conv1/") &&
              se.m.m[planted].verify == QR_MV_UNVERIFIED && se.m.m[planted].equiv_rel > 0.01;
    qr_session_close(&se);
    qt_pair_free(&p);
    QT_CHECKF(ok, "the renamed node's pair is not UNVERIFIED");
    /* a pair pointed at another value of the same shape (/sep_dw/Conv -> /down_relu/Relu's output):
     * UNVERIFIED, every other pair still verified */
    memset(&se, 0, sizeof se);
    memset(&p, 0, sizeof p);
    QT_OK(qt_pair_load(&p, "qat_convbn", NULL));
    QrStatus st = qr_session_open(&se, p.b, p.a, &p.in);
    int wrong = qr_graph_find(p.a, "/down_relu/Relu_output_0");
    planted = -1;
    for (int i = 0; st == QR_OK && i < se.m.n; i++)
        if (!strcmp(p.b->nodes[se.m.m[i].b_node].name, "/sep_dw/Conv")) planted = i;
    if (st == QR_OK && planted >= 0 && wrong >= 0) {
        se.m.m[planted].a_value = wrong;
        se.m.m[planted].a_node = p.a->values[wrong].producer;
        se.m.m[planted].a_quant = -1;
        qr__se_set_vis(&se, planted);
        st = qr_session_run_baseline(&se);
    }
    ok = st == QR_OK && planted >= 0 && wrong >= 0 && se.m.m[planted].verify == QR_MV_UNVERIFIED &&
         se.m.n_unverified == 1 && se.m.n_verified == 19;
    int nv = se.m.n_verified;
    if (st == QR_OK) qr_session_close(&se);
    qt_pair_free(&p);
    QT_CHECKF(ok, "planted pair: %d verified", nv);
    /* the match table says how many pairs are proven, with status, distance and reasons */
    QtCli r;
    char path[600];
    static char text[1 << 16];
    qt_cli(&r, "match fixtures/qpairs/qat_convbn/base.onnx fixtures/qpairs/qat_convbn/analysis.onnx "
               "-i fixtures/qpairs/qat_convbn/input.npy -o %s/trust_match --quiet", qt_tmpdir());
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(path, sizeof path, "%s/trust_match/match_table.txt", qt_tmpdir());
    qt_slurp(path, text, sizeof text);
    QT_CHECKF(strstr(text, "Pairs verified: 20 of 20") && strstr(text, "| status ") && strstr(text, "| equiv_rel ") &&
              strstr(text, "inside the pair of baseline '/res_conv2/Conv'"), "%s", text);
}

/* qreport executes the QAT ConvBn export as ONNX Runtime does (goldens of every value). */
static void test_trust_golden(void) {
    int n = 0, n_int = 0, before = qt_failed;
    qt_golden_check("trust/golden/qat_convbn", "fixtures/qpairs/qat_convbn/analysis.onnx", "fixtures/qpairs/qat_convbn/input.npy",
                    "fixtures/qpairs/qat_convbn/golden_sim", &n, &n_int);
    qt_golden_check("trust/golden/qat_convbn_base", "fixtures/qpairs/qat_convbn/base.onnx", "fixtures/qpairs/qat_convbn/input.npy",
                    "fixtures/qpairs/qat_convbn/golden_base", &n, &n_int);
    if (qt_failed == before && qt_verbose) printf("qat_convbn: %d values (%d integer) match ONNX Runtime\n", n, n_int);
}

/* Acceptance 3: runall on the QAT ConvBn export: the "first drop" names a verified layer, the
 * planted culprit (channel x48 after /down_conv1/Relu) is the advisor's main finding, and the
 * summary says how many pairs are verified. With a planted mis-pairing, nothing built on the
 * unverified rows makes a headline (first drop, advisor findings). */
static void test_trust_headlines(void) {
    QtCli r;
    char dir[600], path[700];
    static char text[1 << 17];
    const char *m = "fixtures/qpairs/qat_convbn";
    snprintf(dir, sizeof dir, "%s/trust_ra", qt_tmpdir());
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s.zip --keep-dir %s", m, m, m, dir, dir);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    QT_CHECKF(strstr(r.out, "main: /down_conv1/Relu "), "%s", r.out);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    qt_slurp(path, text, sizeof text);
    QT_CHECKF(strstr(text, "\"verified\": 20") && strstr(text, "\"unverified\": 0"), "summary.json: %.400s", text);
    const char *fd = strstr(text, "\"first_drop\": \"");
    char first[128] = "";
    if (fd) sscanf(fd + 15, "%127[^\"]", first);
    snprintf(path, sizeof path, "%s/abnormal_layer_advisor.txt", dir);
    qt_slurp(path, text, sizeof text);
    QT_CHECKF(strstr(text, "Main finding (the first below): the most severe finding on '/down_conv1/Relu', #1 in quantization "
                           "sensitivity"), "%.600s", text);
    const char *f1 = strstr(text, "\n[");
    QT_CHECKF(f1 && !strncmp(strchr(f1, ']') + 2, "/down_conv1/Relu", 16), "first finding: %.200s", f1 ? f1 : "none");
    snprintf(path, sizeof path, "%s/index.html", dir);
    qt_slurp(path, text, sizeof text);
    QT_CHECKF(strstr(text, "Verified pairs") && strstr(text, "The first is the main finding"), "html");
    /* the first drop (if any) is a verified pair */
    QtPair p;
    QrSession se;
    QT_OK(qt_trust_open("qat_convbn", &p, &se, NULL));
    bool ok = true;
    for (int i = 0; first[0] && i < se.m.n; i++)
        if (!strcmp(p.b->nodes[se.m.m[i].b_node].name, first)) ok = qr_match_verified(&se.m.m[i]);
    qr_session_close(&se);
    qt_pair_free(&p);
    QT_CHECKF(ok, "first drop '%s' is not a verified pair", first);
    /* mis-paired rows (swapped names): per-layer rows exist for them, marked, but no headline uses them */
    QT_OK(qt_trust_open("qat_convbn", &p, &se, qt_trust_swap_names));
    QrCompare c = {0};
    QrAdvice adv = {0};
    QrStatus st = qr_compare_run(&se, p.a, 0.99, &c);
    int unver_rows = 0, bad = 0;
    for (int k = 0; st == QR_OK && k < c.n; k++) unver_rows += !qr_match_verified(&se.m.m[c.rows[k].match]);
    if (st == QR_OK && c.first_drop >= 0 && !qr_match_verified(&se.m.m[c.rows[c.first_drop].match])) bad++;
    if (st == QR_OK) st = qr_advisor_run(&se, &c, NULL, NULL, NULL, &adv);
    for (int k = 0; st == QR_OK && k < adv.n; k++)
        if (adv.f[k].match >= 0 && !qr_match_verified(&se.m.m[adv.f[k].match])) bad++;
    QrTable t = {0};
    if (st == QR_OK) st = qr_compare_table(&se, &c, false, false, &t);
    int marked = 0;
    for (int k = 0; st == QR_OK && k < t.n_rows; k++) marked += strstr(t.rows[k][1], "[UNVERIFIED pair]") != NULL;
    qr_table_free(&t);
    qr_advice_free(&adv);
    qr_compare_free(&c);
    qr_session_close(&se);
    qt_pair_free(&p);
    QT_OK(st);
    QT_CHECKF(unver_rows > 0 && bad == 0 && marked == unver_rows, "%d unverified rows, %d marked, %d headlines built on them",
              unver_rows, marked, bad);
}

/* Acceptance 6: off-one ranks by gain over the all-on reference. The planted quantizer
 * (/down_conv1/Relu's output) dominates: removing it alone takes L1 from 0.67 to 0.12. It is
 * first in the file, the JSON, the terminal summary and the what-if; gains never increase. */
static void test_trust_off_one(void) {
    QtCli r;
    char dir[600], path[700];
    static char text[1 << 17];
    const char *m = "fixtures/qpairs/qat_convbn";
    snprintf(dir, sizeof dir, "%s/trust_off", qt_tmpdir());
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s.zip --keep-dir %s --sensitivity off-one", m, m, m,
           dir, dir);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    QT_CHECKF(strstr(r.out, "sensitive 1: /down_conv1/Relu (activation, Relu) L1 ") && strstr(r.out, "over all on"), "%s", r.out);
    snprintf(path, sizeof path, "%s/sensitive_ops.txt", dir);
    qt_slurp(path, text, sizeof text);
    const char *row = strstr(text, "|----");
    row = row ? strchr(row, '\n') : NULL;
    QT_CHECKF(row && !strncmp(row + 1, "| /down_conv1/Relu ", 19) && strstr(text, "| gain "), "%.800s", text);
    /* gains: non-increasing down the table */
    double prev = INFINITY;
    int n = 0;
    for (const char *l = row; l && l[1] == '|'; l = strchr(l + 1, '\n')) {
        const char *q = l + 1;
        for (int cells = 0; q && cells < 9; cells++) q = strchr(q + 1, '|');   /* the 9th column's bar: gain follows */
        if (!q) break;
        double g = strtod(q + 1, NULL);
        QT_CHECKF(g <= prev + 1e-12, "gain %g after %g", g, prev);
        prev = g;
        n++;
    }
    QT_CHECKF(n >= 10, "%d gain rows", n);
    snprintf(path, sizeof path, "%s/sensitive_ops.json", dir);
    qt_slurp(path, text, sizeof text);
    const char *ops = strstr(text, "\"ops\"");
    QT_CHECKF(ops && strstr(ops, "\"op_name\": \"/down_conv1/Relu\"") == strstr(ops, "\"op_name\""), "json %.300s", ops ? ops : text);
    QT_CHECKF(strstr(text, "\"gain\": 0.548"), "json gain");
    snprintf(path, sizeof path, "%s/mixed_precision.json", dir);
    qt_slurp(path, text, sizeof text);
    const char *k1 = strstr(text, "\"nodes\": [");
    QT_CHECKF(k1 && strstr(k1, "\"/down_conv1/Relu\"") && strstr(k1, "\"/down_conv1/Relu\"") < strstr(k1, "]"), "what-if %.400s",
              k1 ? k1 : text);
    /* one-on mode: the same quantizer first (the two modes read the ranking the same way) */
    QtPair p;
    QrSession se;
    QT_OK(qt_trust_open("qat_convbn", &p, &se, NULL));
    QrSensOpts so = { .off_one = false, .metric = QR_METRIC_L1 };
    QrSensResult sr = {0};
    QrStatus st = qr_sens_run(&se, &so, &sr);
    bool first = st == QR_OK && sr.n && !strcmp(sr.rows[0].name, "/down_conv1/Relu");
    qr_sens_free(&sr);
    qr_session_close(&se);
    qt_pair_free(&p);
    QT_OK(st);
    QT_CHECK(first);
}

/* Acceptance 4: sharing is one weight or quantizer used by different compute nodes. A model
 * with a weight truly shared by two convolutions (through its Q/DQ), an input quantizer feeding
 * two branches and one scalar scale read by two quantizers: all three reported; the per-channel
 * weight scale its own Q and DQ read is not. On the QAT export no Q/DQ pair is listed. */
static void test_trust_check_shared(void) {
    QtModel mb;
    char path[600], out[700];
    static char text[1 << 16];
    const int64_t dx[4] = { 1, 2, 4, 4 }, dw[4] = { 2, 2, 3, 3 }, d2[1] = { 2 };
    float w[36], ws[2] = { 0.01f, 0.02f }, sx = 0.05f, sh = 0.1f;
    for (int i = 0; i < 36; i++) w[i] = (float)((i * 7) % 11 - 5) * 0.02f;
    int8_t wz[2] = { 0, 0 };
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 4, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 4, dx);
    qt_ax_f32_init(&mb, "W", 4, dw, w);
    qt_ax_f32_init(&mb, "W_scale", 1, d2, ws);
    qt_mb_init_raw(&mb, "W_zp", QR_DT_S8, 1, d2, wz, 2);
    qt_ax_f32_init(&mb, "x_scale", 0, NULL, &sx);
    qt_ax_u8_init(&mb, "x_zp", 128);
    qt_ax_f32_init(&mb, "s_shared", 0, NULL, &sh);
    qt_ax_u8_init(&mb, "z_a", 128);
    qt_ax_u8_init(&mb, "z_b", 128);
    qt_ax_qdq(&mb, "W", "W_scale", "W_zp", "W_dq");
    qt_ax_qdq(&mb, "x", "x_scale", "x_zp", "x_dq");
    Onnx__NodeProto *ca = qt_mb_node(&mb, "Conv", "conv_a", "x_dq,W_dq", "a");
    qt_mb_node(&mb, "Relu", "relu_b", "x_dq", "r");
    Onnx__NodeProto *cb = qt_mb_node(&mb, "Conv", "conv_b", "r,W_dq", "b");
    const int64_t pads[4] = { 1, 1, 1, 1 };
    qt_mb_attr_ints(&mb, ca, "pads", 4, pads);
    qt_mb_attr_ints(&mb, cb, "pads", 4, pads);
    qt_ax_qdq(&mb, "a", "s_shared", "z_a", "a_dq");
    qt_ax_qdq(&mb, "b", "s_shared", "z_b", "b_dq");
    qt_mb_node(&mb, "Add", "add", "a_dq,b_dq", "y");
    QT_OK(qt_ax_write(&mb, "trust_shared.onnx", path, sizeof path));
    QtCli r;
    qt_cli(&r, "check %s -o %s/trust_chk --quiet", path, qt_tmpdir());
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(out, sizeof out, "%s/trust_chk/model_check_result.txt", qt_tmpdir());
    qt_slurp(out, text, sizeof text);
    char *sec = strstr(text, "\n2. "), *end = sec ? strstr(sec, "\n3. ") : NULL;
    QT_CHECKF(sec && end, "%s", text);
    *end = 0;
    QT_CHECKF(strstr(sec, "weight 'W' is used by 2 compute nodes: 'conv_a', 'conv_b'") &&
              strstr(sec, "quantizer on 'x' (q_x_dq) feeds 2 compute nodes") &&
              strstr(sec, "quantizer scale 's_shared' is used by 2 quantizers") && !strstr(sec, "W_scale") &&
              !strstr(sec, "x_scale"), "%s", sec);
    /* the QAT export: no Q/DQ pair (a quantizer reading its own scale) is sharing */
    qt_cli(&r, "check fixtures/qpairs/qat_convbn/analysis.onnx -i fixtures/qpairs/qat_convbn/input.npy -o %s/trust_chk2 --quiet",
           qt_tmpdir());
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(out, sizeof out, "%s/trust_chk2/model_check_result.txt", qt_tmpdir());
    qt_slurp(out, text, sizeof text);
    sec = strstr(text, "\n2. ");
    end = sec ? strstr(sec, "\n3. ") : NULL;
    QT_CHECKF(sec && end, "%s", text);
    *end = 0;
    char *merged = strstr(sec, "Identical constants merged");
    QT_CHECKF(merged && !strstr(sec, "scale_") && !strstr(sec, "weight '") &&
              strstr(merged, "'down_conv2.bn.bias' read by 2 compute nodes, 1 of them through an Identity"), "%s", sec);
}

/* Acceptance 5 (single-model part): runall ANALYSIS.onnx alone uses the same graph with every
 * quantizer disabled as its baseline and says so; on the QAT export, whose float twin exists,
 * it gives the pair's sensitivity table (same rows, same order, L1 within 1e-4 relative: the two baselines differ by float rounding, BN folded or not) and
 * the same per-layer metrics for every analysis value both tables compare. A QOperator model
 * (quantizers that cannot be disabled) is refused with a message. */
static void test_trust_single_model(void) {
    QtCli r;
    char d1[600], d2[600], path[700];
    static char t1[1 << 17], t2[1 << 17];
    const char *m = "fixtures/qpairs/qat_convbn";
    snprintf(d1, sizeof d1, "%s/trust_single", qt_tmpdir());
    snprintf(d2, sizeof d2, "%s/trust_pair", qt_tmpdir());
    qt_cli(&r, "runall %s/analysis.onnx -i %s/input.npy -o %s.zip --keep-dir %s", m, m, d1, d1);
    QT_CHECKF(r.code == 0 && strstr(r.out, "Single-model form: the baseline is"), "exit %d: %s %s", r.code, r.err, r.out);
    qt_cli(&r, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s.zip --keep-dir %s --quiet", m, m, m, d2, d2);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(path, sizeof path, "%s/summary.json", d1);
    qt_slurp(path, t1, sizeof t1);
    QT_CHECKF(strstr(t1, "\"baseline_form\": \"single model") && strstr(t1, "\"unverified\": 0"), "%.300s", t1);
    snprintf(path, sizeof path, "%s/sensitive_ops.csv", d1);
    qt_slurp(path, t1, sizeof t1);
    snprintf(path, sizeof path, "%s/sensitive_ops.csv", d2);
    qt_slurp(path, t2, sizeof t2);
    int rows = 0;
    for (char *a = strchr(t1, '\n'), *b = strchr(t2, '\n'); a && b && a[1] && b[1]; a = strchr(a + 1, '\n'), b = strchr(b + 1, '\n')) {
        char na[256], nb[256], ta[64], tb[64];
        double la, lb;
        QT_CHECK(sscanf(a + 1, "%255[^,],%63[^,],%*[^,],%lf", na, ta, &la) == 3 && sscanf(b + 1, "%255[^,],%63[^,],%*[^,],%lf", nb, tb, &lb) == 3);
        QT_CHECKF(!strcmp(na, nb) && !strcmp(ta, tb) && fabs(la - lb) <= 1e-4 * fabs(lb) + 1e-6, "row %d: %s %s %g vs %s %s %g",
                  rows, na, ta, la, nb, tb, lb);
        rows++;
    }
    QT_CHECKF(rows >= 20, "%d sensitivity rows", rows);
    /* per-layer: rows comparing the same analysis value agree */
    snprintf(path, sizeof path, "%s/compare_per_layer_out.csv", d1);
    qt_slurp(path, t1, sizeof t1);
    snprintf(path, sizeof path, "%s/compare_per_layer_out.csv", d2);
    qt_slurp(path, t2, sizeof t2);
    int common = 0;
    for (char *b = strchr(t2, '\n'); b && b[1]; b = strchr(b + 1, '\n')) {
        char line[4096], *f[32];
        int nf = 0;
        snprintf(line, sizeof line, "%.*s", (int)strcspn(b + 1, "\n"), b + 1);
        for (char *sv = line, *c; nf < 32 && (c = strsep(&sv, ",")); ) f[nf++] = c;
        if (nf < 24) continue;
        char key[300];
        snprintf(key, sizeof key, ",%s,", f[23]);    /* analy_tensor */
        char *hit = strstr(t1, key);
        if (!hit) continue;
        char *ls = hit;
        while (ls > t1 && ls[-1] != '\n') ls--;
        char l1[4096], *g[32];
        int ng = 0;
        snprintf(l1, sizeof l1, "%.*s", (int)strcspn(ls, "\n"), ls);
        for (char *sv = l1, *c; ng < 32 && (c = strsep(&sv, ",")); ) g[ng++] = c;
        if (ng < 24 || strcmp(g[23], f[23])) continue;
        double ca = strtod(g[7], NULL), cb = strtod(f[7], NULL);
        QT_CHECKF(fabs(ca - cb) <= 1e-5, "%s: Cosine %g (single) vs %g (pair)", f[23], ca, cb);
        common++;
    }
    QT_CHECKF(common >= 15, "%d per-layer rows in common", common);
    qt_cli(&r, "runall fixtures/qpairs/qoperator/analysis.onnx -i fixtures/qpairs/qoperator/input.npy -o %s/trust_qop.zip --quiet",
           qt_tmpdir());
    QT_CHECKF(r.code == 1 && strstr(r.err, "cannot be disabled"), "exit %d: %s", r.code, r.err);
}

static void qt_trust_all(void) {
    test_trust_verified();
    QT_RUN(test_trust_qat_bug);
    QT_RUN(test_trust_planted_mispair);
    test_trust_golden();
    QT_RUN(test_trust_headlines);
    QT_RUN(test_trust_off_one);
    QT_RUN(test_trust_check_shared);
    QT_RUN(test_trust_single_model);
}
