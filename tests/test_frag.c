/* tests/test_frag — rounding fragility (analysis/frag.c) and compare-dump's use of it
 * (deploy/dump.c). References are computed here from the definitions: half away from zero is
 * sign(v) · floor(|v| + 0.5) on x / scale in double (exact for the power-of-two scales used),
 * the injection's count is floor(share · n + 0.5). */

/* x [1, 2, 8] -> QuantizeLinear (int8, per channel on axis 1: scales 0.5 / 0.25, zero points 0 / 3)
 * -> DequantizeLinear -> Relu -> QuantizeLinear (uint8, 0.125, 0) -> DequantizeLinear -> y. */
static QrStatus qt_fr_model_n(const char *dir, int64_t n, QrGraph **g) {
    QtModel mb;
    qt_mb_init(&mb, 13);
    int64_t dx[3] = { 1, 2, n }, d2[1] = { 2 }, d0[1] = { 0 };
    /* n = 8: scales powers of two (exact references below); else scales that are not, so that
     * sums over the variants depend on their order */
    float s1[2] = { n == 8 ? 0.5f : 0.37f, n == 8 ? 0.25f : 0.29f }, s2 = n == 8 ? 0.125f : 0.1f;
    int8_t z1[2] = { 0, 3 };
    uint8_t z2 = 0;
    qt_mb_input(&mb, "x", QR_DT_F32, 3, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 3, dx);
    qt_mb_init_raw(&mb, "s1", QR_DT_F32, 1, d2, s1, sizeof s1);
    qt_mb_init_raw(&mb, "z1", QR_DT_S8, 1, d2, z1, sizeof z1);
    qt_mb_init_raw(&mb, "s2", QR_DT_F32, 0, d0, &s2, 4);
    qt_mb_init_raw(&mb, "z2", QR_DT_U8, 0, d0, &z2, 1);
    int64_t ax = 1;
    Onnx__NodeProto *q1 = qt_mb_node(&mb, "QuantizeLinear", "q1", "x,s1,z1", "xq");
    Onnx__AttributeProto *a1 = qt_mb_attr(&mb, q1, "axis", QR_ATTR_INT);
    a1->has_i = 1;
    a1->i = ax;
    Onnx__NodeProto *dq1 = qt_mb_node(&mb, "DequantizeLinear", "dq1", "xq,s1,z1", "xd");
    Onnx__AttributeProto *a2 = qt_mb_attr(&mb, dq1, "axis", QR_ATTR_INT);
    a2->has_i = 1;
    a2->i = ax;
    qt_mb_node(&mb, "Relu", "relu", "xd", "r");
    qt_mb_node(&mb, "QuantizeLinear", "q2", "r,s2,z2", "rq");
    qt_mb_node(&mb, "DequantizeLinear", "dq2", "rq,s2,z2", "y");
    char path[600];
    snprintf(path, sizeof path, "%s/frag_model_%lld.onnx", dir, (long long)n);
    QrStatus st = qt_mb_write(&mb, path);
    qt_mb_free(&mb);
    QR_TRY(st);
    return qr_run_load(path, g);
}

static QrStatus qt_fr_model(const char *dir, QrGraph **g) { return qt_fr_model_n(dir, 8, g); }

/* The input: channel 0 (scale 0.5) and 1 (0.25) each get ties (k + 0.5) · scale — three per channel
 * where half to even and half away differ (0.5, -0.5, -2.5), two where they agree (1.5, 7.5) —, one
 * beyond the int8 range (no tie after saturation) and non-ties; ties = false shifts every element
 * by 0.1 LSB: no tie at all. */
static QrStatus qt_fr_input(QrTensor *in, bool ties) {
    int64_t dx[3] = { 1, 2, 8 };
    memset(in, 0, sizeof *in);
    QR_TRY(qr_tensor_set_shape(in, QR_DT_F32, 3, dx));
    QR_TRY(qr_tensor_alloc_data(in));
    const double k[8] = { 0.5, 1.5, -0.5, -2.5, 3.3, -4.7, 200.5, 7.5 };
    float *x = in->data;
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 8; i++) x[c * 8 + i] = (float)((ties ? k[i] : k[i] + 0.1) * (c ? 0.25 : 0.5));
    return QR_OK;
}

typedef struct QtFrCap { int v; QrTensor t; } QtFrCap;

static QrStatus qt_fr_cap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QR_UNUSED(g);
    QR_UNUSED(node);
    QtFrCap *c = user;
    if (value != c->v || c->t.data) return QR_OK;
    QR_TRY(qr_tensor_set_shape(&c->t, t->dtype, t->rank, t->dims));
    QR_TRY(qr_tensor_alloc_data(&c->t));
    memcpy(c->t.data, t->data, qr_tensor_nbytes(t));
    return QR_OK;
}

static int qt_fr_value(const QrGraph *g, const char *name) {
    for (int v = 0; v < g->n_values; v++) if (!strcmp(g->values[v].name, name)) return v;
    return -1;
}

/* Half away from zero of x / scale, saturated, computed here in double. */
static int32_t qt_fr_away(double x, double s, int32_t zp, int32_t lo, int32_t hi) {
    double v = x / s;
    double r = v >= 0 ? floor(v + 0.5) : -floor(-v + 0.5);
    double q = r + zp;
    return q < lo ? lo : q > hi ? hi : (int32_t)q;
}

/* The half-away variant: its quantizer output element by element against the definition, the
 * count of elements it changes and the output MSE it causes. */
static void test_frag_half_away(void) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/frag", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    QrGraph *g = NULL;
    QrTensor in;
    QT_OK(qt_fr_model(dir, &g));
    QT_OK(qt_fr_input(&in, true));
    QT_OK(qr_run_infer(g, &in));
    QrQuantTable qt = { 0 };
    QT_OK(qr_qtable_build(g, &qt));
    int vq = qt_fr_value(g, "xq");
    QT_CHECK(vq >= 0 && qt.by_value[vq] >= 0);
    /* 1. the element-wise rounding on the operator's own output */
    QtFrCap cap = { vq, { 0 } };
    QrRunOpts ro = { .tap = qt_fr_cap, .tap_user = &cap };
    QT_OK(qr_run(g, &in, &ro, NULL));
    QT_CHECK(cap.t.data && cap.t.dtype == QR_DT_S8);
    QrFrGrid grid;
    QT_CHECK(qr__fr_grid(g, &qt.q[qt.by_value[vq]], &grid));
    const float *x = in.data;
    const double sc[2] = { 0.5, 0.25 };
    const int32_t zp[2] = { 0, 3 };
    int64_t ties = 0;
    for (int64_t i = 0; i < 16; i++) {
        int c = (int)(i / 8);
        double v = (double)x[i] / sc[c];
        int32_t even = (int32_t)qr_quant_geti(&cap.t, i);
        int32_t away = qt_fr_away(x[i], sc[c], zp[c], -128, 127);
        if (away != even) { ties++; QT_CHECKF(fabs(v - floor(v) - 0.5) == 0, "element %lld: not a tie", (long long)i); }
    }
    QT_CHECKF(ties >= 6, "only %lld ties that round differently in the input", (long long)ties);
    int64_t changed = qr__fr_half_away(&cap.t, x, &grid, NULL);
    QT_CHECKF(changed == ties, "changed %lld, ties %lld", (long long)changed, (long long)ties);
    for (int64_t i = 0; i < 16; i++) {
        int c = (int)(i / 8);
        int32_t want = qt_fr_away(x[i], sc[c], zp[c], -128, 127);
        QT_CHECKF(qr_quant_geti(&cap.t, i) == want, "element %lld: %d, want %d", (long long)i, qr_quant_geti(&cap.t, i), want);
    }
    /* 2. the variant through the runs: its count and the first quantizer's share of the output MSE
     * (the second quantizer, scale 0.125, carries a Relu'd change of 0.5 / 0.25 exactly) */
    QrFragOpts fo;
    qr_frag_opts_default(&fo);
    fo.n_seeds = 0;
    QrFragResult r;
    QT_OK(qr_frag_run(g, &qt, &in, NULL, &fo, &r));
    bool ok = r.n_var == 1 && r.var[0].kind == QR_FRAG_HALF_AWAY && r.n_layers == 2 && r.n_runs == 2;
    int64_t n_changed = r.var[0].n_changed, n_ties = r.n_ties;
    /* output change: the first quantizer's ties, Relu'd (negative ones stay 0), plus any tie at the second */
    double want = 0;
    int64_t ties2 = 0;
    for (int64_t i = 0; i < 16; i++) {
        int c = (int)(i / 8);
        int32_t e = (int32_t)nearbyint((double)x[i] / sc[c]) + zp[c], a = qt_fr_away(x[i], sc[c], zp[c], -128, 127);
        if (e > 127) e = 127;
        if (e < -128) e = -128;
        double re = fmax(0, (e - zp[c]) * sc[c]), ra = fmax(0, (a - zp[c]) * sc[c]);
        int32_t q2e = qt_fr_away(re, 0.125, 0, 0, 255), q2a = qt_fr_away(ra, 0.125, 0, 0, 255);   /* multiples of 0.125: no tie */
        ties2 += fabs(re / 0.125 - floor(re / 0.125) - 0.5) == 0;
        double d = (q2a - q2e) * 0.125;
        want += d * d;
    }
    want /= 16;
    double got = r.var[0].out.mse;
    qr_frag_free(&r);
    qr_tensor_free_data(&cap.t);
    qr_qtable_free(&qt);
    qr_tensor_free_data(&in);
    qr_graph_free(g);
    free(g);
    QT_CHECK(ok);
    QT_CHECKF(n_changed == ties && n_ties == ties && ties2 == 0, "variant changed %lld, ties %lld (want %lld)", (long long)n_changed,
              (long long)n_ties, (long long)ties);
    QT_CHECKF(fabs(got - want) <= 1e-12 * fmax(1, want) && want > 0, "output MSE %.9g, want %.9g", got, want);
}

/* ±1 LSB injection: exactly floor(share · n + 0.5) elements, each by one LSB inside the range,
 * the same ones for the same seed, others for another seed; none at share 0. */
static void test_frag_inject(void) {
    const int64_t n = 1000;
    QrTensor a = { 0 }, b = { 0 }, o = { 0 };
    QT_OK(qr_tensor_set_shape(&o, QR_DT_S8, 1, &n));
    QT_OK(qr_tensor_alloc_data(&o));
    for (int64_t i = 0; i < n; i++) qr_quant_seti(&o, i, i % 3 == 0 ? -128 : i % 3 == 1 ? 127 : (int32_t)(i % 200) - 100);
    QrQuantRange rg = { -128, 127 };
    const double shares[4] = { 0.013, 0.5, 1.0, 0.0 };
    for (int s = 0; s < 4; s++) {
        for (int k = 0; k < 3; k++) {
            QrTensor *t = k == 2 ? &b : &a;
            qr_tensor_free_data(t);
            QT_OK(qr_tensor_set_shape(t, QR_DT_S8, 1, &n));
            QT_OK(qr_tensor_alloc_data(t));
            memcpy(t->data, o.data, (size_t)n);
            int64_t got = qr__fr_inject(t, shares[s], k == 2 ? 8 : 7, rg, NULL, NULL);
            int64_t want = (int64_t)floor(shares[s] * (double)n + 0.5), changed = 0;
            for (int64_t i = 0; i < n; i++) {
                int32_t d = qr_quant_geti(t, i) - qr_quant_geti(&o, i);
                changed += d != 0;
                QT_CHECKF(d >= -1 && d <= 1, "share %g: element %lld moved by %d", shares[s], (long long)i, d);
            }
            QT_CHECKF(got == want && changed == want, "share %g seed %d: %lld reported, %lld changed, want %lld", shares[s],
                      k == 2 ? 8 : 7, (long long)got, (long long)changed, (long long)want);
            if (k == 1) {   /* same seed as k == 0: the same tensor, recomputed here from o */
                QrTensor c = { 0 };
                QT_OK(qr_tensor_set_shape(&c, QR_DT_S8, 1, &n));
                QT_OK(qr_tensor_alloc_data(&c));
                memcpy(c.data, o.data, (size_t)n);
                qr__fr_inject(&c, shares[s], 7, rg, NULL, NULL);
                bool same = !memcmp(c.data, a.data, (size_t)n);
                qr_tensor_free_data(&c);
                QT_CHECKF(same, "share %g: seed 7 twice gives different elements", shares[s]);
            }
        }
        if (shares[s] > 0.01 && shares[s] < 1) QT_CHECKF(memcmp(a.data, b.data, (size_t)n), "share %g: seeds 7 and 8 agree", shares[s]);
    }
    qr_tensor_free_data(&a);
    qr_tensor_free_data(&b);
    qr_tensor_free_data(&o);
}

/* qr__fr_inject against selection sampling as written down (u · (n - i) >= k - done skips element i,
 * both sides converted from integers at every element): the same elements moved the same way and
 * the same Σ scale², bit for bit, on 1 to 200003 elements, shares 0.001 to 1, several seeds, values
 * at both edges of the range. */
static void test_frag_inject_definition(void) {
    const int64_t ns[5] = { 1, 63, 1000, 65537, 200003 };
    const double shares[4] = { 0.001, 0.01, 0.37, 1.0 };
    QrQuantRange rg = { 0, 255 };
    QrFrGrid p = { .C = 1, .inner = 1, .s0 = 0.0371f, .z0 = 0, .rg = rg };
    int bad = 0;
    int64_t moved = 0;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 4; b++)
            for (uint64_t seed = 1; seed < 4; seed++) {
                const int64_t n = ns[a];
                QrTensor t = { 0 };
                QT_OK(qr_tensor_set_shape(&t, QR_DT_U8, 1, &n));
                QT_OK(qr_tensor_alloc_data(&t));
                uint8_t *want = malloc((size_t)n);
                QT_CHECK(want != NULL);
                if (!want) return;
                for (int64_t i = 0; i < n; i++) want[i] = ((uint8_t *)t.data)[i] = (uint8_t)(i % 5 == 0 ? 0 : i % 5 == 1 ? 255 : i * 7);
                const uint64_t sd = seed * 0x9E3779B97F4A7C15ull;
                int64_t k = (int64_t)floor(shares[b] * (double)n + 0.5), done = 0;
                if (k > n) k = n;
                uint64_t s = sd;
                double wsum = 0;
                for (int64_t i = 0; i < n && done < k; i++) {
                    double u = (double)(qr__fr_next(&s) >> 11) * 0x1.0p-53;
                    if (u * (double)(n - i) >= (double)(k - done)) continue;
                    int32_t d = (qr__fr_next(&s) >> 63) ? 1 : -1;
                    if (want[i] + d > rg.hi || want[i] + d < rg.lo) d = -d;
                    want[i] = (uint8_t)(want[i] + d);
                    done++;
                    wsum += (double)p.s0 * (double)p.s0;
                }
                double inj = 0;
                int64_t got = qr__fr_inject(&t, shares[b], sd, rg, &p, &inj);
                bad += got != done || memcmp(t.data, want, (size_t)n) != 0 || memcmp(&inj, &wsum, sizeof inj) != 0;
                moved += got;
                free(want);
                qr_tensor_free_data(&t);
            }
    QT_CHECKF(bad == 0, "%d of 60 injections differ from selection sampling as written", bad);
    QT_CHECKF(moved > 100000, "only %lld elements moved", (long long)moved);
}

/* No perturbation, no spread: share 0 changes nothing and an input without ties leaves the
 * half-away variant equal to the simulation, exactly. */
static void test_frag_zero(void) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/frag0", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    QrGraph *g = NULL;
    QrTensor in;
    QT_OK(qt_fr_model(dir, &g));
    QT_OK(qt_fr_input(&in, false));
    QT_OK(qr_run_infer(g, &in));
    QrQuantTable qt = { 0 };
    QT_OK(qr_qtable_build(g, &qt));
    QrFragOpts fo;
    qr_frag_opts_default(&fo);
    fo.share = 0;
    fo.n_seeds = 2;
    QrFragResult r;
    QT_OK(qr_frag_run(g, &qt, &in, NULL, &fo, &r));
    bool ok = r.n_var == 3 && r.n_ties == 0 && r.n_layers == 2;
    for (int k = 0; ok && k < r.n_var; k++) ok = r.var[k].n_changed == 0 && r.var[k].out.mse == 0 && r.var[k].out.l1 == 0;
    for (int l = 0; ok && l < r.n_layers; l++) ok = r.layers[l].lsb.n_tot == 0 && r.layers[l].ha.n_tot == 0 && r.layers[l].lsb.tot == 0;
    QrFragSpread sp;
    ok = ok && qr_frag_spread(&r, qt_fr_value(g, "rq"), &sp) && sp.mse_lsb == 0 && sp.lsb_max == 0 && sp.changed == 0;
    qr_frag_free(&r);
    qr_qtable_free(&qt);
    qr_tensor_free_data(&in);
    qr_graph_free(g);
    free(g);
    QT_CHECK(ok);
}

/* compare-dump's classification on a constructed case: the model above, the device differing at
 * 'rq' by more than the tolerance; the fragility spread set by hand. */
static void test_frag_dump_classify(void) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/frag_dump", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    QrGraph *g = NULL;
    QrTensor in;
    QT_OK(qt_fr_model(dir, &g));
    QT_OK(qt_fr_input(&in, true));
    QT_OK(qr_run_infer(g, &in));
    QrQuantTable qt = { 0 };
    QT_OK(qr_qtable_build(g, &qt));
    QrFragOpts fo;
    qr_frag_opts_default(&fo);
    fo.n_seeds = 1;
    fo.no_half_away = true;
    QrFragResult fr;
    QT_OK(qr_frag_run(g, &qt, &in, NULL, &fo, &fr));
    int v1 = qt_fr_value(g, "xq"), v2 = qt_fr_value(g, "rq");
    /* spread at rq: 1 LSB² mean (16 over 16 elements), 3 LSB at most */
    QrFragLayer *l2 = &fr.layers[fr.by_value[v2]];
    l2->lsb.lsb2_max = 16;
    l2->lsb.n_tot_max = 8;
    l2->lsb.lsb_max = 3;
    /* case: upstream differs (n_diff), rq's mean, max: rounding? */
    struct { int64_t up_diff, lsb_max; double mse; bool rounding; } cases[] = {
        { 2, 2, 0.5, true },     /* within the spread, downstream of a difference */
        { 0, 2, 0.5, false },    /* nothing differs upstream: a device problem */
        { 2, 2, 2.0, false },    /* mean squared beyond the spread */
        { 2, 4, 0.5, false },    /* largest |Δ| beyond the spread */
    };
    for (int c = 0; c < QR_ARRAY_LEN(cases); c++) {
        QrDumpRow rows[2];
        memset(rows, 0, sizeof rows);
        rows[0] = (QrDumpRow){ .value = "xq", .v = v1, .q = qt.by_value[v1], .lsb = true, .n = 16, .n_diff = cases[c].up_diff,
                               .lsb_max = cases[c].up_diff ? 1 : 0, .mse_lsb = (double)cases[c].up_diff / 16 };
        rows[1] = (QrDumpRow){ .value = "rq", .v = v2, .q = qt.by_value[v2], .lsb = true, .n = 16, .n_diff = 4,
                               .lsb_max = cases[c].lsb_max, .mse_lsb = cases[c].mse, .divergent = true };
        QrDumpResult dr = { .tol = 1, .n = 2, .rows = rows, .first_divergent = -1 };
        QT_OK(qr__dp_classify(g, &qt, &fr, &dr));
        QT_CHECKF(rows[1].has_spread && rows[1].spread.lsb_max == 3 && fabs(rows[1].spread.mse_lsb - 1.0) < 1e-12,
                  "case %d: spread %lld LSB, %.6g LSB²", c, (long long)rows[1].spread.lsb_max, rows[1].spread.mse_lsb);
        QT_CHECKF(rows[1].rounding == cases[c].rounding && rows[1].divergent == !cases[c].rounding && dr.n_rounding == (cases[c].rounding ? 1 : 0),
                  "case %d: rounding %d divergent %d, want rounding %d", c, rows[1].rounding, rows[1].divergent, cases[c].rounding);
        QT_CHECK(!rows[0].rounding && !rows[0].divergent);
        QrArena a = { 0 };
        dr.n_divergent = rows[1].divergent;
        dr.first_divergent = rows[1].divergent ? 1 : -1;
        const char *vd = qr_dump_verdict(&a, &dr);
        bool said = cases[c].rounding ? strstr(vd, "no device problem") != NULL : strstr(vd, "leaves the simulation first at 'rq'") != NULL;
        qr_arena_free(&a);
        QT_CHECKF(said, "case %d: verdict '%s'", c, vd);
    }
    qr_frag_free(&fr);
    qr_qtable_free(&qt);
    qr_tensor_free_data(&in);
    qr_graph_free(g);
    free(g);
}

/* The verdict on real pairs: the CNN fixture is not rounding-fragile; the small transformer twin's
 * spread is a larger share of its quantization error. */
static void test_frag_verdict(void) {
    const char *pairs[2][3] = { { "fixtures/qpairs/ort_qdq/base.onnx", "fixtures/qpairs/ort_qdq/analysis.onnx", "fixtures/qpairs/ort_qdq/input.npy" },
                                { "fixtures/tpairs/static_int8/base.onnx", "fixtures/tpairs/static_int8/analysis.onnx",
                                  "fixtures/tpairs/static_int8/input.npy" } };
    double ratio[2] = { NAN, NAN };
    bool fragile[2] = { false, false };
    for (int p = 0; p < 2; p++) {
        QrGraph *b = NULL, *a = NULL;
        QrTensor in = { 0 };
        QrSession se;
        memset(&se, 0, sizeof se);
        QT_OK(qr_npy_read(pairs[p][2], &in));
        QT_OK(qr_run_load(pairs[p][0], &b));
        QT_OK(qr_run_load(pairs[p][1], &a));
        QT_OK(qr_run_infer(b, &in));
        QT_OK(qr_run_infer(a, &in));
        QT_OK(qr_session_open(&se, b, a, &in));
        QrFragResult r;
        QrStatus st = qr_session_run_baseline(&se);
        if (st == QR_OK) st = qr_frag_run(&se.tw.g, &se.qt, se.inputs, se.base_out, NULL, &r);
        if (st == QR_OK) {
            ratio[p] = r.ratio_lsb;
            fragile[p] = r.fragile;
            QrArena ar = { 0 };
            printf("frag %s: %d of %d quantizers perturbed, ratio %.4g, %s\n", pairs[p][1], r.n_layers, r.n_act, r.ratio_lsb,
                   qr_frag_verdict(&ar, &r));
            qr_arena_free(&ar);
            qr_frag_free(&r);
        }
        qr_session_close(&se);
        qr_tensor_free_data(&in);
        qr_graph_free(b);
        free(b);
        qr_graph_free(a);
        free(a);
        QT_OK(st);
    }
    QT_CHECKF(!fragile[0] && ratio[0] < QR_FRAG_FRAGILE_RATIO, "CNN: ratio %.4g", ratio[0]);
    QT_CHECKF(ratio[1] > 2 * ratio[0], "transformer ratio %.4g, CNN %.4g", ratio[1], ratio[0]);
}


/* runall: fragility.txt/.csv and summary.json "fragility" by default; --no-fragility leaves them out. */
static void test_frag_runall_option(void) {
    char keep[600], zip[600], p[700];
    for (int off = 0; off < 2; off++) {
        snprintf(keep, sizeof keep, "%s/frag_runall_%d", qt_tmpdir(), off);
        snprintf(zip, sizeof zip, "%s/frag_runall_%d.zip", qt_tmpdir(), off);
        QtCli r;
        qt_cli(&r, "runall fixtures/qpairs/ort_qdq/base.onnx fixtures/qpairs/ort_qdq/analysis.onnx -i fixtures/qpairs/ort_qdq/input.npy "
               "-o %s --keep-dir %s --quiet%s", zip, keep, off ? " --no-fragility" : "");
        QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
        snprintf(p, sizeof p, "%s/" QR_BF_FRAGILITY ".csv", keep);
        bool have = access(p, F_OK) == 0;
        snprintf(p, sizeof p, "%s/summary.json", keep);
        char *js = qt_ra_read(p, NULL);
        bool key = js && strstr(js, "\"fragility\":") != NULL;
        free(js);
        QT_CHECKF(have == !off && key == !off, "--no-fragility %d: fragility.csv %d, summary key %d", off, have, key);
    }
}

/* The sums a perturbed run adds per layer (qr__fr_arrived, qr__fr_total; their 8-bit per-tensor
 * loops) against the element-by-element definition they replaced, continuing from earlier runs'
 * sums: int8 and uint8 on one scale, uint16 and a per-channel grid (the general loop); the same
 * bits every time. */
static void test_frag_fast_sums(void) {
    uint64_t rs = 99;
    /* 4-6: 8-bit on one scale with whole blocks of 64 equal elements (one in 500 differs; none;
     * every element), 7: an infinite scale (the general loop), 8: every other element by up to
     * ±100 (several differing bytes in most words, at the first and last byte of a word too);
     * 3000, 3001 and 3002 elements: the 8-byte words and a tail of 0, 1 or 2 elements */
    const QrDType dts[9] = { QR_DT_U8, QR_DT_S8, QR_DT_U16, QR_DT_U8, QR_DT_S8, QR_DT_U8, QR_DT_S8, QR_DT_S8, QR_DT_U8 };
    const int every[9] = { 4, 4, 4, 4, 500, 0, 1, 4, 2 };
    for (int cfg = 0; cfg < 9; cfg++) {
        int64_t dims[2] = { 3, 1000 + cfg % 3 };
        QrTensor t = {0}, sm = {0}, sc = {0};
        QT_OK(qr_tensor_set_shape(&t, dts[cfg], 2, dims));
        QT_OK(qr_tensor_alloc_data(&t));
        QT_OK(qr_tensor_set_shape(&sm, dts[cfg], 2, dims));
        QT_OK(qr_tensor_alloc_data(&sm));
        QrFrGrid p = { .C = 1, .inner = 1, .s0 = cfg == 7 ? INFINITY : 0.0371f, .z0 = 3 };
        QT_CHECK(qr_quant_range(dts[cfg], &p.rg));
        if (cfg == 3) {          /* three channels on axis 0 */
            int64_t d1[1] = { 3 };
            QT_OK(qr_tensor_set_shape(&sc, QR_DT_F32, 1, d1));
            QT_OK(qr_tensor_alloc_data(&sc));
            for (int c = 0; c < 3; c++) ((float *)sc.data)[c] = 0.01f * (float)(c + 1) + 0.003f;
            p.scale = &sc;
            p.C = 3;
            p.inner = dims[1];
        }
        for (int64_t i = 0; i < t.numel; i++) {
            rs = rs * 6364136223846793005ull + 1442695040888963407ull;
            int32_t v = (int32_t)((rs >> 33) % 120) + (dts[cfg] == QR_DT_S8 ? -60 : 0);
            int32_t d = every[cfg] && (rs >> 20) % (uint64_t)every[cfg] == 0 ? (int32_t)((rs >> 24) % 9) - 4 : 0;   /* by up to 4 */
            if (every[cfg] == 1 && d == 0) d = 1;
            if (cfg == 8 && i % 2 == 0) d = (int32_t)((rs >> 24) % 201) - 100;
            qr_quant_seti(&sm, i, v);
            qr_quant_seti(&t, i, v + d);
        }
        /* the definition, continuing from earlier sums */
        int64_t n_arr = 7, want_arr_n = 7, mx = 1, want_mx = 1, n_tot = 0, want_tot_n = 0;
        double arr = 0.25, want_arr = 0.25, tot = 0.5, want_tot = 0.5, l2 = 0, want_l2 = 0;
        for (int64_t i = 0; i < t.numel; i++) {
            int32_t d = qr_quant_geti(&t, i) - qr_quant_geti(&sm, i);
            if (!d) continue;
            double s1 = qr__fr_scale(&p, qr__fr_chan(&p, i));
            want_arr_n++;
            want_arr += (double)d * d * s1 * s1;
            want_tot_n++;
            want_tot += (double)d * d * s1 * s1;
            want_l2 += (double)d * d;
            int64_t ad = d < 0 ? -(int64_t)d : d;
            if (ad > want_mx) want_mx = ad;
        }
        qr__fr_arrived(&t, &sm, &p, &n_arr, &arr);
        qr__fr_total(&t, &sm, &p, &n_tot, &tot, &l2, &mx);
        QT_CHECKF(n_arr == want_arr_n && !memcmp(&arr, &want_arr, sizeof arr), "config %d: arrived %lld %.17g, definition %lld %.17g",
                  cfg, (long long)n_arr, arr, (long long)want_arr_n, want_arr);
        QT_CHECKF(n_tot == want_tot_n && !memcmp(&tot, &want_tot, sizeof tot) && !memcmp(&l2, &want_l2, sizeof l2) && mx == want_mx,
                  "config %d: total %lld %.17g %.17g %lld, definition %lld %.17g %.17g %lld", cfg, (long long)n_tot, tot, l2,
                  (long long)mx, (long long)want_tot_n, want_tot, want_l2, (long long)want_mx);
        qr_tensor_free_data(&t);
        qr_tensor_free_data(&sm);
        qr_tensor_free_data(&sc);
    }
}

/* qr__fr_round2 (the half-away variant's two roundings, the ties of the unperturbed run) against
 * its definition, rintf and roundf of the saturated x / scale: at exact ties (k + 0.5) · scale of
 * both signs, next to them, at the range's edges and beyond, and at random values. */
static void test_frag_round2(void) {
    const float scales[3] = { 0.5f, 0.0371f, 3.0f };
    const int32_t zps[2] = { 0, 7 };
    QrQuantRange rg = { -128, 127 };
    uint64_t rs = 5;
    int bad = 0, ties = 0;
    for (int si = 0; si < 3; si++)
        for (int zi = 0; zi < 2; zi++)
            for (int k = -300; k < 300; k++)
                for (int j = 0; j < 4; j++) {
                    rs = rs * 6364136223846793005ull + 1442695040888963407ull;
                    float sc = scales[si], x = j == 0 ? ((float)k + 0.5f) * sc : j == 1 ? nextafterf(((float)k + 0.5f) * sc, 0.0f)
                                                     : j == 2 ? (float)k * sc : ((float)(rs >> 40) / (float)(1 << 24) - 0.5f) * 600.0f * sc;
                    int32_t e, a;
                    qr__fr_round2(x, sc, zps[zi], rg, &e, &a);
                    float v = x / sc, lo = (float)(rg.lo - zps[zi]), hi = (float)(rg.hi - zps[zi]);
                    if (!(v >= lo)) v = lo;
                    if (v > hi) v = hi;
                    int32_t we = (int32_t)rintf(v) + zps[zi], wa = (int32_t)roundf(v) + zps[zi];
                    bad += e != we || a != wa;
                    ties += we != wa;
                }
    QT_CHECKF(bad == 0, "%d of the roundings differ from rintf / roundf", bad);
    QT_CHECKF(ties > 100, "only %d ties tried", ties);
}

/* The unperturbed run's sums (qr__fr_sig_ties) and the half-away variant (qr__fr_half_away), whose
 * one-scale 8-bit paths look for ties only in the blocks of 16 qr__fr_next_tie stops at, against their
 * per-element definitions (qr__fr_round2 at every element): the signal's sum, the ties, the elements
 * moved and Σ scale², bit for bit. Exact ties of both signs, even and odd, at the first and last
 * element of a block and in the 5-element tail, NaN, ±inf, values beyond the range, on three scales,
 * two zero points, u8 and s8, and a per-channel grid (the general loop). */
static void test_frag_tie_blocks(void) {
    const float scales[3] = { 0.5f, 0.0371f, 3.0f };
    const int64_t n = 16 * 40 + 5;
    uint64_t rs = 17;
    int64_t ties_all = 0;
    for (int cfg = 0; cfg < 13; cfg++) {
        const bool sg = cfg % 2 == 1, chan = cfg == 12;
        const float sc = scales[(cfg / 2) % 3];
        const int32_t zp = cfg / 6 == 0 ? 0 : sg ? -3 : 7;
        QrTensor t = { 0 }, w = { 0 }, scv = { 0 }, zpv = { 0 };
        int64_t dims[2] = { 1, n };
        QT_OK(qr_tensor_set_shape(&t, sg ? QR_DT_S8 : QR_DT_U8, 2, dims));
        QT_OK(qr_tensor_alloc_data(&t));
        QT_OK(qr_tensor_set_shape(&w, t.dtype, 2, dims));
        QT_OK(qr_tensor_alloc_data(&w));
        QrFrGrid p = { .C = 1, .inner = 1, .s0 = sc, .z0 = zp };
        QT_CHECK(qr_quant_range(t.dtype, &p.rg));
        if (chan) {              /* five channels on the last axis, one scale: the general loop */
            int64_t d5[1] = { 5 };
            QT_OK(qr_tensor_set_shape(&scv, QR_DT_F32, 1, d5));
            QT_OK(qr_tensor_alloc_data(&scv));
            QT_OK(qr_tensor_set_shape(&zpv, QR_DT_S32, 1, d5));
            QT_OK(qr_tensor_alloc_data(&zpv));
            for (int c = 0; c < 5; c++) ((float *)scv.data)[c] = sc;
            for (int c = 0; c < 5; c++) ((int32_t *)zpv.data)[c] = zp;
            p.scale = &scv;
            p.zp = &zpv;
            p.C = 5;
            dims[0] = n / 5;
            dims[1] = 5;
            QT_OK(qr_tensor_set_shape(&t, t.dtype, 2, dims));
            QT_OK(qr_tensor_set_shape(&w, t.dtype, 2, dims));
        }
        float *x = malloc((size_t)n * sizeof *x);
        QT_CHECK(x != NULL);
        if (!x) return;
        for (int64_t i = 0; i < n; i++) {
            rs = rs * 6364136223846793005ull + 1442695040888963407ull;
            int k = (int)((rs >> 33) % 301) - 150;
            int j = (int)((rs >> 20) % 8);
            if (i % 16 == 0 || i % 16 == 15 || i >= n - 5) j = (int)(i % 3);   /* a block's edges, the tail: ties */
            x[i] = j <= 2 ? ((float)k + 0.5f) * sc : j == 3 ? (float)k * sc : j == 4 ? nextafterf(((float)k + 0.5f) * sc, 0.0f)
                 : ((float)(rs >> 40) / (float)(1 << 24) - 0.5f) * 700.0f * sc;
            if (i == 37) x[i] = NAN;
            if (i == 38) x[i] = INFINITY;
            if (i == 39) x[i] = -INFINITY;
        }
        /* the definitions, one element at a time */
        double want_sig = 0, want_inj = 0;
        int64_t want_ties = 7, want_k = 0;
        for (int64_t i = 0; i < n; i++) {
            int32_t e, a;
            qr__fr_round2(x[i], sc, zp, p.rg, &e, &a);
            qr_quant_seti(&t, i, e);
            qr_quant_seti(&w, i, a);
            double d = (double)(e - zp) * (double)sc;
            want_sig += d * d;
            want_ties += e != a;
            want_k += e != a;
            if (e != a) want_inj += (double)sc * sc;
        }
        double sig = -1, inj = 0;
        int64_t ties = 7;
        qr__fr_sig_ties(&t, x, &p, &sig, &ties);
        int64_t k = qr__fr_half_away(&t, x, &p, &inj);
        bool ok = !memcmp(&sig, &want_sig, sizeof sig) && ties == want_ties && k == want_k &&
                  !memcmp(&inj, &want_inj, sizeof inj) && !memcmp(t.data, w.data, (size_t)n);
        QT_CHECKF(ok, "config %d: sig %.17g ties %lld moved %lld inj %.17g, definition %.17g %lld %lld %.17g", cfg, sig,
                  (long long)ties, (long long)k, inj, want_sig, (long long)want_ties, (long long)want_k, want_inj);
        ties_all += want_k;
        free(x);
        qr_tensor_free_data(&t);
        qr_tensor_free_data(&w);
        qr_tensor_free_data(&scv);
        qr_tensor_free_data(&zpv);
    }
    QT_CHECKF(ties_all > 13 * 40, "only %lld ties tried", (long long)ties_all);
}

/* The variants side by side (the default: in a group, the first variant of each kind adding up as it
 * runs, the others' edits recorded, then replayed into the sums in the variants' order), all four at
 * once and, with records allowed for only one variant (qr__fr_side_max), two at a time, against one
 * after another (QrFragOpts.serial): every layer's sums and counts, the ties, the variants' counts and
 * output metrics, bit for bit, on the model with 2 × 4096 elements a quantizer, scales that are not
 * powers of two (sums in another order round otherwise) and the default half-away variant and three
 * seeds. */
static void test_frag_side(void) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/frag_side", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    const int64_t n = 4096;
    QrGraph *g = NULL;
    QT_OK(qt_fr_model_n(dir, n, &g));
    QrTensor in = { 0 };
    int64_t dx[3] = { 1, 2, n };
    QT_OK(qr_tensor_set_shape(&in, QR_DT_F32, 3, dx));
    QT_OK(qr_tensor_alloc_data(&in));
    uint64_t rs = 11;
    for (int64_t i = 0; i < 2 * n; i++) {
        rs = rs * 6364136223846793005ull + 1442695040888963407ull;
        ((float *)in.data)[i] = (float)((double)(rs >> 11) * 0x1.0p-53 * 70.0 - 20.0);
        if (i % 7 == 0) ((float *)in.data)[i] = (float)(((double)(i % 41) - 20.5) * (i < n ? 0.37f : 0.29f));   /* near ties */
    }
    QT_OK(qr_run_infer(g, &in));
    QrQuantTable qt = { 0 };
    QT_OK(qr_qtable_build(g, &qt));
    const int t0 = qr_pool_threads();
    if (t0 < 2) QT_OK(qr_pool_init(2));
    QrFragResult r[3];
    const double side_max = qr__fr_side_max;
    double rec1 = 0;             /* one variant's records: two copies of every perturbed value */
    for (int x = 1; x < 4; x++) {
        const int k = x % 3;     /* serial first */
        QrFragOpts fo;
        qr_frag_opts_default(&fo);
        fo.serial = k == 1;
        qr__fr_side_max = k == 2 ? 1.5 * rec1 : side_max;   /* one variant's records, not two */
        QT_OK(qr_frag_run(g, &qt, &in, NULL, &fo, &r[k]));
        for (int l = 0; k == 1 && l < r[1].n_layers; l++)
            rec1 += 2.0 * (double)r[1].layers[l].n * (double)qr_dtype_size(g->values[r[1].layers[l].value].t.dtype);
    }
    qr__fr_side_max = side_max;
    if (t0 < 2) QT_OK(qr_pool_init(t0));
    int bad = 0, idle = 0;
    bool shape = r[0].n_side == 4 && r[0].n_direct == 2 && r[1].n_side == 0 && r[2].n_side == 4 && r[2].n_direct == 3;
    for (int x = 0; x < 3; x++)
        shape = shape && r[x].n_var == 4 && r[x].n_runs == 5 && r[x].n_layers == 2 && r[x].n_ties == r[1].n_ties;
    for (int x = 0; x < 3; x += 2) {
        for (int l = 0; shape && l < 2; l++) {
            const QrFragLayer *a = &r[x].layers[l], *b = &r[1].layers[l];
            bad += memcmp(&a->lsb, &b->lsb, sizeof a->lsb) != 0;
            bad += memcmp(&a->ha, &b->ha, sizeof a->ha) != 0;
            bad += memcmp(&a->growth, &b->growth, sizeof a->growth) != 0 || memcmp(&a->gain, &b->gain, sizeof a->gain) != 0;
            idle += a->lsb.n_arr == 0 && l == 1;    /* the second quantizer sees the first one's changes */
        }
        for (int k = 0; shape && k < 4; k++) {
            const QrFragVariant *a = &r[x].var[k], *b = &r[1].var[k];
            bad += a->kind != b->kind || a->seed != b->seed || a->n_changed != b->n_changed;
            idle += a->n_changed == 0;
            bad += memcmp(&a->out.mse, &b->out.mse, sizeof(double)) != 0 || memcmp(&a->out.cosine, &b->out.cosine, sizeof(double)) != 0;
            bad += memcmp(&a->out.sqnr, &b->out.sqnr, sizeof(double)) != 0 || memcmp(&a->ratio, &b->ratio, sizeof(double)) != 0;
        }
    }
    QT_CHECKF(shape, "side by side: %d / %d variants side by side (%d / %d adding up as they ran), %d / %d runs", r[0].n_side,
              r[2].n_side, r[0].n_direct, r[2].n_direct, r[0].n_runs, r[2].n_runs);
    for (int x = 0; x < 3; x++) qr_frag_free(&r[x]);
    qr_qtable_free(&qt);
    qr_tensor_free_data(&in);
    qr_graph_free(g);
    free(g);
    QT_CHECKF(bad == 0, "%d sums or metrics differ between the variants side by side and one after another", bad);
    QT_CHECKF(idle == 0, "%d variants or layers saw no change: the comparison proves little", idle);
}

/* runall's fragility: its unperturbed run made by the what-if's all-on reference run (qr_frag_begin,
 * qr_session_ref_ride, qr_frag_end) gives qr_frag_run's results bit for bit — every layer's sums, the
 * ties, the variants' outputs, the quantization error — and the reference and the fragility together
 * make the runs (qr_run_count) the fragility alone makes: the unperturbed run is that reference run. */
static void test_frag_ride(void) {
    QrGraph *b = NULL, *a = NULL;
    QrTensor in = { 0 };
    QrSession se;
    memset(&se, 0, sizeof se);
    const char *d = "fixtures/tpairs/static_int8/";
    char pb[256], pa[256], pi[256];
    snprintf(pb, sizeof pb, "%sbase.onnx", d);
    snprintf(pa, sizeof pa, "%sanalysis.onnx", d);
    snprintf(pi, sizeof pi, "%sinput.npy", d);
    QT_OK(qr_npy_read(pi, &in));
    QT_OK(qr_run_load(pb, &b));
    QT_OK(qr_run_load(pa, &a));
    QT_OK(qr_run_infer(b, &in));
    QT_OK(qr_run_infer(a, &in));
    QT_OK(qr_session_open(&se, b, a, &in));
    QrFragResult r[2];
    memset(r, 0, sizeof r);
    int64_t runs[2] = { 0, 0 };
    QrStatus st = qr_session_run_baseline(&se);
    int64_t r0 = qr_run_count.graphs;
    if (st == QR_OK) st = qr_frag_run(&se.tw.g, &se.qt, se.inputs, se.base_out, NULL, &r[0]);
    runs[0] = qr_run_count.graphs - r0;
    QrFragRide *ride = NULL;
    QrTensor *outs = calloc((size_t)se.tw.g.n_outputs + 1, sizeof *outs);
    bool built = false;
    r0 = qr_run_count.graphs;
    if (st == QR_OK) st = qr_frag_begin(&se.tw.g, &se.qt, NULL, &r[1], &ride);
    if (st == QR_OK) {
        QrRunOpts ro = { 0 };
        qr_frag_ride_opts(ride, &ro);
        st = qr_session_ref_ride(&se, NULL, NULL, NULL, &ro, outs, &built);
    }
    if (st == QR_OK) st = qr_frag_end(ride, se.inputs, se.base_out, outs, &r[1]);
    else qr_frag_ride_free(ride);
    runs[1] = qr_run_count.graphs - r0;
    int bad = 0;
    bool shape = st == QR_OK && built && r[0].n_layers == r[1].n_layers && r[0].n_layers > 1 && r[0].n_var == r[1].n_var &&
                 r[0].n_var == 4 && r[0].n_runs == r[1].n_runs && r[0].n_ties == r[1].n_ties;
    for (int l = 0; shape && l < r[0].n_layers; l++) {
        const QrFragLayer *x = &r[0].layers[l], *y = &r[1].layers[l];
        bad += memcmp(&x->lsb, &y->lsb, sizeof x->lsb) != 0 || memcmp(&x->ha, &y->ha, sizeof x->ha) != 0;
        bad += memcmp(&x->sig, &y->sig, sizeof x->sig) != 0 || memcmp(&x->growth, &y->growth, sizeof x->growth) != 0;
        bad += memcmp(&x->gain, &y->gain, sizeof x->gain) != 0;
    }
    for (int k = 0; shape && k < r[0].n_var; k++)
        bad += memcmp(&r[0].var[k], &r[1].var[k], sizeof r[0].var[k]) != 0;
    if (shape) bad += memcmp(&r[0].quant, &r[1].quant, sizeof r[0].quant) != 0 || r[0].worst != r[1].worst ||
                      r[0].first_growth != r[1].first_growth || r[0].fragile != r[1].fragile;
    const char *msg = st == QR_OK ? "" : qr_err_msg();
    QT_CHECKF(shape, "ride: %s (built %d, layers %d/%d, variants %d/%d, runs %d/%d)", msg, built, r[0].n_layers, r[1].n_layers,
              r[0].n_var, r[1].n_var, r[0].n_runs, r[1].n_runs);
    QT_CHECKF(bad == 0, "%d sums or metrics differ between the ride and qr_frag_run", bad);
    QT_CHECKF(runs[1] == runs[0] && runs[0] == 5, "model runs: %lld for the fragility alone, %lld for the reference and the "
              "fragility riding on it", (long long)runs[0], (long long)runs[1]);
    for (int k = 0; k < se.tw.g.n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    qr_frag_free(&r[0]);
    qr_frag_free(&r[1]);
    qr_session_close(&se);
    qr_tensor_free_data(&in);
    qr_graph_free(b);
    free(b);
    qr_graph_free(a);
    free(a);
}

static void qt_frag_all(void) {
    QT_RUN(test_frag_half_away);
    QT_RUN(test_frag_inject);
    QT_RUN(test_frag_inject_definition);
    QT_RUN(test_frag_zero);
    QT_RUN(test_frag_dump_classify);
    QT_RUN(test_frag_verdict);
    QT_RUN(test_frag_runall_option);
    QT_RUN(test_frag_fast_sums);
    QT_RUN(test_frag_round2);
    QT_RUN(test_frag_tie_blocks);
    QT_RUN(test_frag_side);
    QT_RUN(test_frag_ride);
}
