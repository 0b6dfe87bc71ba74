/* tests/match — quantizer tables, baseline<->analysis matching against the
 * expected pairs of every fixture pair (fixtures/qpairs/<pair>/expected_match.tsv),
 * the equivalence check, and sim-mode execution against ONNX Runtime. */

typedef struct QtPair {
    QrGraph *b, *a;
    QrTensor in;
    QrQuantTable qt;
    QrMatchResult mr;
} QtPair;

static void qt_pair_free(QtPair *p) {
    qr_match_free(&p->mr);
    qr_qtable_free(&p->qt);
    qr_tensor_free_data(&p->in);
    if (p->b) { qr_graph_free(p->b); free(p->b); }
    if (p->a) { qr_graph_free(p->a); free(p->a); }
    memset(p, 0, sizeof *p);
}

static QrStatus qt_pair_load(QtPair *p, const char *pair, const char *base_file) {
    char path[512];
    memset(p, 0, sizeof *p);
    snprintf(path, sizeof path, "fixtures/qpairs/%s", base_file ? base_file : pair);
    if (!base_file) snprintf(path, sizeof path, "fixtures/qpairs/%s/base.onnx", pair);
    QR_TRY(qr_run_load(path, &p->b));
    snprintf(path, sizeof path, "fixtures/qpairs/%s/analysis.onnx", pair);
    QR_TRY(qr_run_load(path, &p->a));
    snprintf(path, sizeof path, "fixtures/qpairs/%s/input.npy", pair);
    QR_TRY(qr_npy_read(path, &p->in));
    QR_TRY(qr_run_infer(p->b, &p->in));
    QR_TRY(qr_run_infer(p->a, &p->in));
    QR_TRY(qr_qtable_build(p->a, &p->qt));
    return qr_match(p->b, p->a, &p->qt, &p->mr);
}

static const char *const qt_pairs[] = { "qat_fakequant", "ort_qdq", "qoperator", "int16_mixed", "integer_ops" };

/* Every baseline compute node has a row in expected_match.tsv and qreport pairs it the same way. */
static void qt_match_pair(const char *pair) {
    char name[128], path[512], msg[1024] = "";
    snprintf(name, sizeof name, "match/%s", pair);
    QtPair p;
    QrStatus st = qt_pair_load(&p, pair, NULL);
    if (st != QR_OK) { qt_record(name, false, "%s", qr_err_msg()); qt_pair_free(&p); return; }
    snprintf(path, sizeof path, "fixtures/qpairs/%s/expected_match.tsv", pair);
    unsigned char *buf = NULL;
    size_t len = 0;
    st = qr_file_read(path, 0, &buf, &len);
    int rows = 0, bad = 0;
    for (char *line = (char *)buf; st == QR_OK && line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *f[5] = { line, NULL, NULL, NULL, NULL };
        for (int k = 1; k < 5 && f[k - 1]; k++) { char *t = strchr(f[k - 1], '\t'); if (t) { *t = 0; f[k] = t + 1; } }
        rows++;
        const QrMatch *m = NULL;
        for (int i = 0; i < p.mr.n; i++) if (!strcmp(p.b->nodes[p.mr.m[i].b_node].name, f[0])) m = &p.mr.m[i];
        const char *got_t = m && m->a_node >= 0 ? p.a->values[m->a_value].name : "-";
        const char *got_n = m && m->a_node >= 0 ? p.a->nodes[m->a_node].name : "-";
        if (!m || !f[3] || strcmp(got_t, f[2]) || strcmp(got_n, f[3])) {
            if (!bad++) snprintf(msg, sizeof msg, "baseline '%s': expected %s (%s), got %s (%s)%s", f[0], f[2] ? f[2] : "?",
                                 f[3] ? f[3] : "?", got_t, got_n, m ? "" : " [no row]");
        }
        line = nl ? nl + 1 : NULL;
    }
    qr_aligned_free(buf);
    if (st != QR_OK) qt_record(name, false, "%s", qr_err_msg());
    else if (bad) qt_record(name, false, "%d of %d rows differ; first: %s", bad, rows, msg);
    else if (rows != p.mr.n) qt_record(name, false, "%d expected rows but %d baseline compute values", rows, p.mr.n);
    else qt_record(name, true, "%s", "ok");
    qt_pair_free(&p);
}

static void test_match_pairs(void) {
    for (int i = 0; i < QR_ARRAY_LEN(qt_pairs); i++) qt_match_pair(qt_pairs[i]);
}

/* Quantizer tables: counts and kinds on the fixture pairs. */
static void test_quant_tables(void) {
    QtPair p;
    QT_OK(qt_pair_load(&p, "ort_qdq", NULL));
    int act = 0, w = 0, bias = 0, per_channel = 0;
    for (int i = 0; i < p.qt.n; i++) {
        const QrQuantizer *q = &p.qt.q[i];
        act += q->kind == QR_QK_ACTIVATION;
        w += q->kind == QR_QK_WEIGHT;
        bias += q->kind == QR_QK_BIAS;
        per_channel += q->kind == QR_QK_WEIGHT && q->axis >= 0 && q->n_scales > 1;
    }
    /* 5 weighted layers (4 conv + fc): int8 per-channel weights and int32 biases; uint8 activations. */
    bool ok = w == 5 && bias == 5 && per_channel == 5 && act >= 8;
    for (int i = 0; i < p.qt.n; i++)
        if (p.qt.q[i].kind == QR_QK_ACTIVATION && p.qt.q[i].dtype != QR_DT_U8) ok = false;
    int qw = w, qa = act, qb = bias;
    qt_pair_free(&p);
    QT_CHECKF(ok, "weights %d (per-channel %d), biases %d, activations %d", qw, per_channel, qb, qa);
    QT_OK(qt_pair_load(&p, "int16_mixed", NULL));
    int s16 = 0;
    for (int i = 0; i < p.qt.n; i++) s16 += p.qt.q[i].dtype == QR_DT_S16;
    qt_pair_free(&p);
    QT_CHECKF(s16 >= 2, "int16 quantizers: %d", s16);
}

static QrStatus qt_equiv(QtPair *p, QrEquivResult *eq, QrSession *se) {
    QR_TRY(qr_session_open(se, p->b, p->a, &p->in));
    QrStatus st = qr_session_equivalence(se, eq);
    if (st != QR_OK) qr_session_close(se);
    return st;
}

/* With every quantizer disabled (QOperator and integer-op models through their
 * float twin) the analysis model reproduces the baseline. */
static void test_equivalence(void) {
    for (int k = 0; k < QR_ARRAY_LEN(qt_pairs); k++) {
        QtPair p;
        QrEquivResult eq;
        QrSession se;
        QT_OK(qt_pair_load(&p, qt_pairs[k], NULL));
        QrStatus st = qt_equiv(&p, &eq, &se);
        bool ok = st == QR_OK && eq.equivalent && eq.n_not_disabled == 0 && se.tw.n_kept == 0;
        double rel = st == QR_OK ? eq.worst_rel : -1;
        int nd = st == QR_OK ? eq.n_not_disabled : -1, sub = st == QR_OK ? eq.n_substituted : -1;
        int rewritten = st == QR_OK ? se.tw.n_rewritten : -1;
        /* the report names each substituted weight */
        if (ok && !strcmp(qt_pairs[k], "integer_ops"))
            ok = eq.substituted && strstr(eq.substituted, "fc.weight_quantized <- fc.weight (transposed)");
        if (st == QR_OK) { qr_match_equiv_free(&eq); qr_session_close(&se); }
        qt_pair_free(&p);
        QT_CHECKF(ok, "%s: not equivalent (worst rel %g, %d not disabled) %s", qt_pairs[k], rel, nd, st ? qr_err_msg() : "");
        if (qt_verbose) printf("equivalence %s: worst rel %.3g, %d weights substituted, %d nodes twinned\n", qt_pairs[k], rel, sub, rewritten);
    }
    /* A different float model must be flagged. */
    QtPair p;
    QrEquivResult eq;
    QrSession se;
    QT_OK(qt_pair_load(&p, "ort_qdq", "mismatch/base_other.onnx"));
    QrStatus st = qt_equiv(&p, &eq, &se);
    bool flagged = st == QR_OK && !eq.equivalent && eq.worst_rel > 0.05 &&
                   strstr(qr_match_equiv_verdict(p.b, &se.m, &eq, &(QrVerdict){0}), "WARNING");
    if (st == QR_OK) { qr_match_equiv_free(&eq); qr_session_close(&se); }
    qt_pair_free(&p);
    QT_CHECK(flagged);
    QtCli r;
    qt_cli(&r, "match fixtures/qpairs/mismatch/base_other.onnx fixtures/qpairs/ort_qdq/analysis.onnx "
               "-i fixtures/qpairs/ort_qdq/input.npy -o %s/mm --quiet", qt_tmpdir());
    QT_CHECKF(r.code == 3 && strstr(r.err, "does NOT reproduce"), "exit %d: %s", r.code, r.err);
}

/* The float twin with every quantizer enabled computes what the integer nodes
 * compute, up to rounding ties: model outputs within one output LSB. */
static void test_twin_enabled(void) {
    const char *pairs[] = { "qoperator", "integer_ops" };
    for (int k = 0; k < QR_ARRAY_LEN(pairs); k++) {
        QtPair p;
        QrSession se;
        QT_OK(qt_pair_load(&p, pairs[k], NULL));
        QrStatus st = qr_session_open(&se, p.b, p.a, &p.in);
        if (st != QR_OK) { qt_pair_free(&p); QT_OK(st); }
        QrTensor o1 = {0}, o2 = {0};
        st = qr_run(p.a, &p.in, NULL, &o1);
        if (st == QR_OK) st = qr_run(&se.tw.g, &p.in, NULL, &o2);
        double worst = -1, lsb = 0;
        if (st == QR_OK && o1.numel == o2.numel) {
            /* the output's last quantizer scale (integer_ops: dynamic, so use the data range / 255) */
            const QrTensor *sc = NULL;
            for (int i = 0; i < se.qa.n; i++)
                if (se.qa.q[i].kind == QR_QK_ACTIVATION && se.qa.q[i].scale_value >= 0 && p.a->values[se.qa.q[i].scale_value].t.data)
                    sc = &p.a->values[se.qa.q[i].scale_value].t;
            float mn = INFINITY, mx = -INFINITY;
            for (int64_t i = 0; i < o1.numel; i++) { float v = ((float *)o1.data)[i]; mn = QR_MIN(mn, v); mx = QR_MAX(mx, v); }
            lsb = !strcmp(pairs[k], "qoperator") && sc ? qr_tensor_get_f64(sc, 0) : (mx - mn) / 255.0;
            worst = 0;
            for (int64_t i = 0; i < o1.numel; i++)
                worst = QR_MAX(worst, fabs((double)((float *)o1.data)[i] - ((float *)o2.data)[i]));
        }
        qr_tensor_free_data(&o1);
        qr_tensor_free_data(&o2);
        qr_session_close(&se);
        qt_pair_free(&p);
        QT_OK(st);
        QT_CHECKF(worst >= 0 && worst <= 1.01 * lsb, "%s: twin vs integer model differ by %g (lsb %g)", pairs[k], worst, lsb);
        if (qt_verbose) printf("twin %s: all quantizers on, outputs within %.3g LSB of the integer model\n", pairs[k], worst / lsb);
    }
}

/* sim mode: every value of the analysis model equals ONNX Runtime's with graph
 * optimizations disabled; integer (QuantizeLinear) outputs element for element. */
static void qt_sim_pair(const char *pair) {
    char name[128], model[256], input[256], dir[256];
    snprintf(name, sizeof name, "sim/%s", pair);
    snprintf(model, sizeof model, "fixtures/qpairs/%s/analysis.onnx", pair);
    snprintf(input, sizeof input, "fixtures/qpairs/%s/input.npy", pair);
    snprintf(dir, sizeof dir, "fixtures/qpairs/%s/golden_sim", pair);
    int n = 0, n_int = 0, before = qt_failed;
    qt_golden_check(name, model, input, dir, &n, &n_int);
    if (qt_failed == before)
        printf("sim %s: %d values (%d integer, exact) match ONNX Runtime without optimizations\n", pair, n, n_int);
}

static void test_sim_pairs(void) {
    for (int i = 0; i < QR_ARRAY_LEN(qt_pairs); i++) qt_sim_pair(qt_pairs[i]);
}

static void test_check_ort_qdq(void);
/* qr_match_weight_consistent's typed count (qr__mt_weight_far_typed) against the element-by-element
 * definition (the accessors, the channel (i / inner) % nch), on int8 / uint8 weights per tensor and
 * per channel along the last axis (inner 1) and the first (inner > 1), with and without zero points,
 * a share of the elements far off the grid and one non-finite float, small and split over the pool
 * (211K elements: runs of 64K cut inside channels): the same count each time. */
static int64_t qt_mt_far_ref(const QrTensor *qi, const QrTensor *s, const QrTensor *z, const QrTensor *w, int64_t nch,
                             int64_t inner) {
    int64_t far = 0;
    for (int64_t i = 0; i < qi->numel; i++) {
        int64_t c = nch > 1 ? (i / inner) % nch : 0;
        double sc = qr_tensor_get_f64(s, c), zp = z && z->data ? (double)qr_tensor_get_i64(z, z->numel > 1 ? c : 0) : 0;
        double dq = ((double)qr_tensor_get_i64(qi, i) - zp) * sc;
        if (fabs(qr_tensor_get_f64(w, i) - dq) > 1.01 * sc + 1e-12) far++;
    }
    return far;
}

static void test_match_weight_far_typed(void) {
    uint64_t rs = 12345;
    for (int cfg = 0; cfg < 24; cfg++) {
        bool sg = cfg & 1, with_z = cfg & 2;
        int layout = (cfg >> 2) % 3;              /* 0 per tensor, 1 channels on the last axis, 2 on the first */
        /* small, and large enough for several of the pool's runs of 64K elements, cut inside channels */
        int64_t dims[2] = { cfg < 12 ? 37 : 301, cfg < 12 ? 29 : 701 }, nch = layout == 0 ? 1 : layout == 1 ? dims[1] : dims[0];
        int64_t inner = layout == 2 ? dims[1] : 1, d1[1] = { nch };
        QrTensor qi = {0}, sc = {0}, zp = {0}, w = {0};
        QT_OK(qr_tensor_set_shape(&qi, sg ? QR_DT_S8 : QR_DT_U8, 2, dims));
        QT_OK(qr_tensor_alloc_data(&qi));
        QT_OK(qr_tensor_set_shape(&w, QR_DT_F32, 2, dims));
        QT_OK(qr_tensor_alloc_data(&w));
        QT_OK(qr_tensor_set_shape(&sc, QR_DT_F32, 1, d1));
        QT_OK(qr_tensor_alloc_data(&sc));
        QT_OK(qr_tensor_set_shape(&zp, sg ? QR_DT_S8 : QR_DT_U8, 1, d1));
        QT_OK(qr_tensor_alloc_data(&zp));
        for (int64_t c = 0; c < nch; c++) {
            rs = rs * 6364136223846793005ull + 1442695040888963407ull;
            ((float *)sc.data)[c] = 0.001f + (float)((rs >> 40) & 1023) * 1e-4f;
            int32_t zv = with_z ? (int32_t)((rs >> 20) & 15) - (sg ? 8 : 0) : 0;
            qr_tensor_set_i64(&zp, c, sg ? zv : zv + 100);
        }
        for (int64_t i = 0; i < qi.numel; i++) {
            rs = rs * 6364136223846793005ull + 1442695040888963407ull;
            int64_t c = nch > 1 ? (i / inner) % nch : 0;
            int32_t q = (int32_t)((rs >> 33) & 255) - (sg ? 128 : 0);
            qr_tensor_set_i64(&qi, i, q);
            double s1 = ((float *)sc.data)[c], z1 = with_z ? (double)qr_tensor_get_i64(&zp, c) : 0;
            /* on the grid, half a step off, far off (a few percent), or near the limit of 1.01 steps */
            int kind = (int)((rs >> 12) % 100);
            double off = kind < 3 ? 2.5 : kind < 50 ? 0.5 : kind >= 96 ? 1.0 + 0.005 * (kind - 96) : 0.0;
            ((float *)w.data)[i] = (float)(((double)q - z1 + off) * s1);
        }
        ((float *)w.data)[qi.numel / 2] = NAN;
        const QrTensor *zarg = with_z ? &zp : NULL;
        int64_t far = -1;
        QT_CHECKF(qr__mt_weight_far_typed(&qi, &sc, zarg, &w, nch, inner, &far), "config %d: not the typed path", cfg);
        int64_t want = qt_mt_far_ref(&qi, &sc, zarg, &w, nch, inner);
        QT_CHECKF(far == want && want > 0, "config %d: %lld far, the definition %lld", cfg, (long long)far, (long long)want);
        qr_tensor_free_data(&qi);
        qr_tensor_free_data(&sc);
        qr_tensor_free_data(&zp);
        qr_tensor_free_data(&w);
    }
}

/* qr__se_maxdiff (the verification run's comparison) against its definition — max |x - y| in double
 * over the elements that differ, NaN when exactly one of a pair is NaN, equal infinities and two NaNs
 * the same — on finite arrays (the statistics kernel's path, lengths around its blocks and vector
 * tails) and with NaN / infinities planted (the element loop), and the largest magnitude
 * (qr__se_scan without y), whole and in the pool's runs of 64K elements (200003): the same bits. */
static double qt_mt_maxdiff_ref(const float *px, const float *py, int64_t n) {
    double mx = 0;
    for (int64_t i = 0; i < n; i++) {
        if (px[i] == py[i] || (px[i] != px[i] && py[i] != py[i])) continue;
        double d = fabs((double)px[i] - (double)py[i]);
        if (d > mx || d != d) mx = d;
    }
    return mx;
}

static void test_match_maxdiff(void) {
    const int64_t lens[] = { 1, 7, 8, 9, 4095, 4096, 4097, 10001, 65536, 200003 };
    float *x = malloc(200003 * sizeof(float)), *y = malloc(200003 * sizeof(float));
    QT_CHECK(x && y);
    uint64_t rs = 3;
    for (int k = 0; k < QR_ARRAY_LEN(lens); k++)
        for (int plant = 0; plant < 4; plant++) {
            int64_t n = lens[k];
            for (int64_t i = 0; i < n; i++) {
                rs = rs * 6364136223846793005ull + 1442695040888963407ull;
                x[i] = (float)((double)((rs >> 33) & 0xffff) * 1e-3 - 30.0);
                y[i] = (rs >> 20) % 3 ? x[i] : x[i] + (float)((double)((rs >> 40) & 255) * 1e-7 * (1 + (double)(i % 97)));
            }
            if (plant == 1) { x[n / 2] = INFINITY; y[n / 2] = INFINITY; }
            if (plant == 2) { x[n - 1] = NAN; y[n - 1] = NAN; y[0] = -INFINITY; }
            if (plant == 3) y[n / 3] = NAN;
            double got = qr__se_maxdiff(x, y, n), want = qt_mt_maxdiff_ref(x, y, n);
            QT_CHECKF(!memcmp(&got, &want, sizeof got) || (got != got && want != want),
                      "n %lld plant %d: %.17g, the definition %.17g", (long long)n, plant, got, want);
            double amax = 0;                      /* the pair's reference magnitude: NaN skipped, infinities counted */
            for (int64_t i = 0; i < n; i++)
                if (fabs(y[i]) > amax) amax = fabs(y[i]);
            got = qr__se_scan(y, NULL, n);
            QT_CHECKF(!memcmp(&got, &amax, sizeof got), "n %lld plant %d: largest magnitude %.17g, the definition %.17g",
                      (long long)n, plant, got, amax);
        }
    free(x);
    free(y);
}

/* qr_match_dequantize_value (the comparison's integer values, in every sample's taps) against
 * its definition (float)((int64)q - zp) * scale at every kernel level: int8 and uint8, zero
 * points 0, in range, at the ends, beyond 8 bits (int32) and beyond the kernel's guard (the loop),
 * scales small, odd, tiny (denormal products) and large (overflow to inf), lengths 0..70 and
 * around the vector widths; an int16 value (the loop) too. */
static void test_match_dequantize_value(void) {
    QrKernels lv[8];
    static const QrIsa all[] = { QR_ISA_REF, QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_VNNI, QR_ISA_NEON, QR_ISA_DOT, QR_ISA_I8MM };
    int nl = 0;
    for (int i = 0; i < QR_ARRAY_LEN(all); i++)
        if (qr_kern_table(all[i], &lv[nl]) == QR_OK) nl++;
    qr_err_clear();
    QT_OK(qr_kern_init());
    const QrKernels saved = qr_kern;
    QrValue vals[3];
    memset(vals, 0, sizeof vals);
    QrGraph g = {0};
    g.values = vals;
    g.n_values = 3;
    vals[2].name = "q";
    QT_OK(qr_tensor_set_shape(&vals[0].t, QR_DT_F32, 0, NULL));
    QT_OK(qr_tensor_alloc_data(&vals[0].t));
    QT_OK(qr_tensor_set_shape(&vals[1].t, QR_DT_S32, 0, NULL));
    QT_OK(qr_tensor_alloc_data(&vals[1].t));
    QrQuantizer q = { .scale_value = 0, .zp_value = 1, .int_value = 2 };
    static const float scales[] = { 0.0173f, 1.0f, 3e-3f, 1e-43f, 3e37f };
    static const int64_t zps[] = { 0, 3, -128, 127, 255, 70000, -70000, (1 << 24) + 5 };
    const int64_t lens[] = { 0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 70, 1000, 4099 };
    uint8_t *raw = malloc(4099 * 2);
    QT_CHECK(raw != NULL);
    uint64_t rs = 77;
    for (int i = 0; i < 4099 * 2; i++) { rs = rs * 6364136223846793005ull + 1442695040888963407ull; raw[i] = (uint8_t)(rs >> 40); }
    char bad[256] = "";
    int cases = 0;
    for (int dt = 0; dt < 3 && !bad[0]; dt++)
        for (int si = 0; si < QR_ARRAY_LEN(scales) && !bad[0]; si++)
            for (int zi = 0; zi < QR_ARRAY_LEN(zps) && !bad[0]; zi++)
                for (int li = 0; li < QR_ARRAY_LEN(lens) && !bad[0]; li++) {
                    const QrDType xt = dt == 0 ? QR_DT_S8 : dt == 1 ? QR_DT_U8 : QR_DT_S16;
                    ((float *)vals[0].t.data)[0] = scales[si];
                    qr_tensor_set_i64(&vals[1].t, 0, zps[zi]);
                    int64_t n = lens[li];
                    QrTensor x = { .dtype = xt, .rank = 1, .dims = { n }, .numel = n, .data = raw };
                    for (int l = 0; l < nl && !bad[0]; l++) {
                        qr_kern = lv[l];
                        QrTensor out;
                        QrStatus st = qr_match_dequantize_value(&g, &q, &x, &out);
                        qr_kern = saved;
                        if (st != QR_OK) { snprintf(bad, sizeof bad, "status %d", (int)st); break; }
                        cases++;
                        for (int64_t i = 0; i < n && !bad[0]; i++) {
                            int64_t v = xt == QR_DT_S8 ? (int64_t)((const int8_t *)raw)[i] : xt == QR_DT_U8 ? (int64_t)raw[i]
                                      : (int64_t)((const int16_t *)(const void *)raw)[i];
                            float want = (float)(v - zps[zi]) * scales[si], got = ((const float *)out.data)[i];
                            if (memcmp(&want, &got, sizeof got))
                                snprintf(bad, sizeof bad, "%s dtype %d scale %g zp %lld n %lld element %lld: %.9g, the "
                                         "definition %.9g", qr_isa_name(lv[l].isa), (int)xt, (double)scales[si],
                                         (long long)zps[zi], (long long)n, (long long)i, (double)got, (double)want);
                        }
                        qr_tensor_free_data(&out);
                    }
                }
    qr_kern = saved;
    free(raw);
    qr_tensor_free_data(&vals[0].t);
    qr_tensor_free_data(&vals[1].t);
    QT_CHECKF(!bad[0], "%s", bad);
    QT_CHECK(cases > 1000);
}

static void qt_match_all(void) {
    test_match_pairs();
    QT_RUN(test_check_ort_qdq);
    QT_RUN(test_match_dequantize_value);
    QT_RUN(test_quant_tables);
    QT_RUN(test_equivalence);
    QT_RUN(test_twin_enabled);
    QT_RUN(test_match_weight_far_typed);
    QT_RUN(test_match_maxdiff);
    test_sim_pairs();
}

static void test_check_ort_qdq(void) {
    QtCli r;
    char path[600];
    static char text[1 << 16];
    qt_cli(&r, "check fixtures/qpairs/ort_qdq/analysis.onnx -i fixtures/qpairs/ort_qdq/input.npy -o %s/chk --quiet",
           qt_tmpdir());
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(path, sizeof path, "%s/chk/model_check_result.txt", qt_tmpdir());
    qt_slurp(path, text, sizeof text);
    const char *want[] = {
        "1. Fusable patterns", "Conv '/pw/Conv' -> [Q/DQ] -> Add '/Add'", "2. Shared", "3. Output quantization",
        "| /stem/Conv ", "4. Weight quantization", "per-channel", "5. Anomalies",
        "model output 'output' is not high precision", "quantizer on '/gap/GlobalAveragePool_output_0'",
        "Add '/Add': input scales differ",
    };
    for (int i = 0; i < QR_ARRAY_LEN(want); i++) QT_CHECKF(strstr(text, want[i]), "missing '%s'", want[i]);
    /* Relu removed by ORT: the uint8 grid clamps at 0 on purpose, not an anomaly. */
    QT_CHECK(!strstr(text, "quantizer on '/stem_relu/Relu_output_0' (uint8)"));
}
