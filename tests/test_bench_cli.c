/* tests/bench_cli — `qreport run` as the benchmark harness uses it: the "bench:" line of
 * --repeat N (every field present and consistent, no timing thresholds) and --mode int, whose
 * outputs must be those of the lowered graph (qr_qtable_build + qr_lower_graph, the path of
 * compare --mode int) on an input where int and sim really differ, and within 1 LSB of ONNX
 * Runtime's optimized (integer) execution on the fixture pairs. Uses qt_cli from test_cli.c. */

/* The fields of one "bench:" line; n_lines counts the lines that start with "bench:". */
typedef struct QtBhLine {
    int n_lines, n_fields;
    int runs, threads;
    double median, min, mean, load;
    char isa[32], mode[8];
} QtBhLine;

static void qt_bh_parse(const char *out, QtBhLine *l) {
    memset(l, 0, sizeof *l);
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, "bench:", 6)) continue;
        l->n_lines++;
        l->n_fields = sscanf(p, "bench: runs=%d median_ms=%lf min_ms=%lf mean_ms=%lf threads=%d isa=%31s mode=%7s load_ms=%lf",
                             &l->runs, &l->median, &l->min, &l->mean, &l->threads, l->isa, l->mode, &l->load);
    }
}

/* Two files with identical bytes (the .npy writer is deterministic). */
static bool qt_bh_same_file(const char *a, const char *b) {
    unsigned char *pa = NULL, *pb = NULL;
    size_t na = 0, nb = 0;
    bool same = qr_file_read(a, 0, &pa, &na) == QR_OK && qr_file_read(b, 0, &pb, &nb) == QR_OK && na == nb &&
                !memcmp(pa, pb, na);
    free(pa);
    free(pb);
    return same;
}

static bool qt_bh_same_tensor(const QrTensor *a, const QrTensor *b) {
    return a->dtype == b->dtype && qr_tensor_same_shape(a, b) && a->data && b->data &&
           !memcmp(a->data, b->data, qr_tensor_nbytes(a));
}

static void test_bench_cli_repeat_line(void) {
    const char *m = "fixtures/qpairs/ort_qdq/analysis.onnx", *x = "fixtures/qpairs/ort_qdq/input.npy";
    char d1[512], d2[512], p1[600], p2[600];
    snprintf(d1, sizeof d1, "%s/bh_once", qt_tmpdir());
    snprintf(d2, sizeof d2, "%s/bh_rep", qt_tmpdir());
    QtCli r;
    qt_cli(&r, "run %s -i %s -o %s --quiet", m, x, d1);
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    QtBhLine l;
    qt_bh_parse(r.out, &l);
    QT_CHECKF(l.n_lines == 0 && !r.out[0], "no --repeat, --quiet: stdout should be empty: %s", r.out);
    for (int threads = 1; threads <= 2; threads++) {
        qt_cli(&r, "run %s -i %s -o %s --repeat 5 --threads %d --quiet", m, x, d2, threads);
        QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
        qt_bh_parse(r.out, &l);
        QT_CHECKF(l.n_lines == 1 && l.n_fields == 8, "want one complete bench line: %s", r.out);
        const char *nl = strchr(r.out, '\n');
        QT_CHECKF(!strncmp(r.out, "bench:", 6) && nl && !nl[1], "--quiet: only the bench line: %s", r.out);
        QT_CHECKF(l.runs == 5 && l.threads == threads && !strcmp(l.mode, "sim"), "%s", r.out);
        QT_CHECKF(!strcmp(l.isa, qr_isa_name(qr_kern_isa())), "isa %s, this process dispatches %s", l.isa,
                  qr_isa_name(qr_kern_isa()));
        QT_CHECKF(l.min > 0 && l.min <= l.median && l.min <= l.mean && l.load > 0, "%s", r.out);
        /* the outputs are still written, and are those of a plain run */
        snprintf(p1, sizeof p1, "%s/output.npy", d1);
        snprintf(p2, sizeof p2, "%s/output.npy", d2);
        QT_CHECKF(qt_bh_same_file(p1, p2), "%s differs from %s", p2, p1);
        remove(p2);
    }
    qt_cli(&r, "run %s -i %s -o %s --repeat 3 --mode int", m, x, d2);     /* not quiet: other lines too */
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    qt_bh_parse(r.out, &l);
    QT_CHECKF(l.n_lines == 1 && l.n_fields == 8 && l.runs == 3 && !strcmp(l.mode, "int"), "%s", r.out);
    QT_CHECKF(strstr(r.out, "int mode: ") && strstr(r.out, "output: float32 [1, 10]"), "%s", r.out);
}

static void test_bench_cli_usage(void) {
    QtCli r;
    qt_cli(&r, "run fixtures/qpairs/ort_qdq/analysis.onnx --mode both");
    QT_CHECKF(r.code == 2 && strstr(r.err, "sim or int") && !strstr(r.err, "no input file"), "exit %d: %s", r.code, r.err);
    qt_cli(&r, "run fixtures/qpairs/ort_qdq/analysis.onnx --repeat 0");
    QT_CHECKF(r.code == 2 && strstr(r.err, "--repeat"), "exit %d: %s", r.code, r.err);
    qt_cli(&r, "run --help");
    QT_CHECKF(r.code == 0 && strstr(r.out, "--repeat N") && strstr(r.out, "--mode sim|int") && strstr(r.out, "median_ms"),
              "%s", r.out);
    /* int mode on a float model: nothing to lower, a warning, the plain run's outputs */
    char d1[512], d2[512], p1[600], p2[600];
    snprintf(d1, sizeof d1, "%s/bh_fsim", qt_tmpdir());
    snprintf(d2, sizeof d2, "%s/bh_fint", qt_tmpdir());
    qt_cli(&r, "run fixtures/cnn_residual/model.onnx -i fixtures/cnn_residual/input.npy -o %s --quiet", d1);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "run fixtures/cnn_residual/model.onnx -i fixtures/cnn_residual/input.npy -o %s --mode int --repeat 2", d2);
    QT_CHECKF(r.code == 0 && strstr(r.err, "no DequantizeLinear") && strstr(r.out, "mode=int"), "exit %d: %s %s", r.code,
              r.err, r.out);
    snprintf(p1, sizeof p1, "%s/output.npy", d1);
    snprintf(p2, sizeof p2, "%s/output.npy", d2);
    QT_CHECK(qt_bh_same_file(p1, p2));
}

/* The analysis model of a fixture pair with its quantizer table and int-mode graph, built as
 * compare --mode int builds them (load, shape inference on the input, table, lowering). */
typedef struct QtBhInt {
    QrGraph *g;
    QrQuantTable t;
    QrGraph low;
    QrLowerInfo info;
} QtBhInt;

static void qt_bh_int_free(QtBhInt *m) {
    qr_graph_free(&m->low);            /* borrows from g: first */
    qr_lower_info_free(&m->info);
    qr_qtable_free(&m->t);
    if (m->g) { qr_graph_free(m->g); free(m->g); }
    memset(m, 0, sizeof *m);
}

static QrStatus qt_bh_int_load(QtBhInt *m, const char *path, const QrTensor *in) {
    memset(m, 0, sizeof *m);
    QR_TRY(qr_run_load(path, &m->g));
    QR_TRY(qr_run_infer(m->g, in));
    QR_TRY(qr_qtable_build(m->g, &m->t));
    return qr_lower_graph(m->g, &m->t, false, &m->low, &m->info);
}

/* Runs `run MODEL -i input -o dir` (+ extra) and reads output.npy. */
static QrStatus qt_bh_cli_output(const char *model, const char *input, const char *dir, const char *extra, QtCli *r,
                                 QrTensor *out) {
    qt_cli(r, "run %s -i %s -o %s %s", model, input, dir, extra);
    if (r->code != 0 || r->crashed) return qr_errf(QR_ERR_INVALID, "run %s exited %d: %s", extra, r->code, r->err);
    char p[600];
    snprintf(p, sizeof p, "%s/output.npy", dir);
    return qr_npy_read(p, out);
}

/* On the first of 512 seeded random inputs (normal, sd 0.6 / 1.0 / 1.4) where the lowered graph's output differs from the
 * plain (sim) run, `run --mode int` must write exactly the lowered output and `run` (sim) the
 * plain one; so a CLI that ignored --mode int would fail here. */
static void test_bench_cli_int_equals_lowered(void) {
    const char *model = "fixtures/qpairs/qat_fakequant/analysis.onnx";
    QrTensor in = {0}, y_low = {0}, y_sim = {0}, c_int = {0}, c_sim = {0};
    QtBhInt m = {0};
    QrStatus st = qr_npy_read("fixtures/qpairs/qat_fakequant/input.npy", &in);
    if (st == QR_OK) st = qt_bh_int_load(&m, model, &in);
    int found = -1;
    for (int c = 0; st == QR_OK && c < 512 && found < 0; c++) {     /* about 1 in 20 differs */
        uint64_t rng = 0xb5ad4eceda1ce2a9ull + (uint64_t)c;
        float sd = 0.6f + 0.4f * (float)(c % 3);
        for (int64_t e = 0; e < in.numel; e++) ((float *)in.data)[e] = sd * qr_rng_normal(&rng);
        qr_tensor_free_data(&y_low);
        qr_tensor_free_data(&y_sim);
        st = qr_run(&m.low, &in, NULL, &y_low);
        if (st == QR_OK) st = qr_run(m.g, &in, NULL, &y_sim);
        if (st == QR_OK && !qt_bh_same_tensor(&y_low, &y_sim)) found = c;
    }
    char inpath[512], d_int[512], d_sim[512];
    snprintf(inpath, sizeof inpath, "%s/bh_int_input.npy", qt_tmpdir());
    snprintf(d_int, sizeof d_int, "%s/bh_int", qt_tmpdir());
    snprintf(d_sim, sizeof d_sim, "%s/bh_sim", qt_tmpdir());
    QtCli r = {0};
    if (st == QR_OK && found >= 0) st = qr_npy_write(inpath, &in);
    if (st == QR_OK && found >= 0) st = qt_bh_cli_output(model, inpath, d_int, "--mode int --repeat 2", &r, &c_int);
    char groups[64];
    snprintf(groups, sizeof groups, "int mode: %d group", m.info.n_groups);
    bool groups_ok = strstr(r.out, groups) != NULL;
    if (st == QR_OK && found >= 0) st = qt_bh_cli_output(model, inpath, d_sim, "--mode sim --quiet", &r, &c_sim);
    bool int_ok = qt_bh_same_tensor(&c_int, &y_low), sim_ok = qt_bh_same_tensor(&c_sim, &y_sim);
    int n_groups = m.info.n_groups;
    qr_tensor_free_data(&in);
    qr_tensor_free_data(&y_low);
    qr_tensor_free_data(&y_sim);
    qr_tensor_free_data(&c_int);
    qr_tensor_free_data(&c_sim);
    qt_bh_int_free(&m);
    QT_OK(st);
    QT_CHECKF(found >= 0, "none of 512 random inputs gives an int output different from sim: the test cannot tell them apart");
    QT_CHECKF(n_groups > 0 && groups_ok, "the CLI should report %d lowered groups", n_groups);
    QT_CHECKF(int_ok, "run --mode int output differs from the lowered graph's (input candidate %d)", found);
    QT_CHECKF(sim_ok, "run --mode sim output differs from the plain run's (input candidate %d)", found);
}

/* Independent oracle: on each fixture pair's bad-case input, run --mode int is within 1 LSB (of
 * the output's DequantizeLinear) of ONNX Runtime with all optimizations (golden_int/, generated
 * offline by fixtures/make_quant_pairs.py). */
static void test_bench_cli_int_vs_ort(void) {
    static const char *const pairs[] = { "qat_fakequant", "ort_qdq", "int16_mixed", "qoperator" };
    for (int k = 0; k < QR_ARRAY_LEN(pairs); k++) {
        char model[256], input[256], gold[256], dir[512];
        snprintf(model, sizeof model, "fixtures/qpairs/%s/analysis.onnx", pairs[k]);
        snprintf(input, sizeof input, "fixtures/qpairs/%s/input.npy", pairs[k]);
        snprintf(gold, sizeof gold, "fixtures/qpairs/%s/golden_int/output_0.npy", pairs[k]);
        snprintf(dir, sizeof dir, "%s/bh_ort_%s", qt_tmpdir(), pairs[k]);
        QrTensor got = {0}, want = {0}, in = {0};
        QrGraph *g = NULL;
        QtCli r;
        QrStatus st = qt_bh_cli_output(model, input, dir, "--mode int --quiet", &r, &got);
        if (st == QR_OK) st = qr_npy_read(gold, &want);
        if (st == QR_OK) st = qr_npy_read(input, &in);
        if (st == QR_OK) st = qr_run_load(model, &g);
        if (st == QR_OK) st = qr_run_infer(g, &in);
        double lsb = 0;
        if (st == QR_OK) {            /* scale of the DequantizeLinear writing the output, if any */
            int p = g->values[g->outputs[0]].producer;
            if (p >= 0 && !strcmp(g->nodes[p].op_type, "DequantizeLinear"))
                lsb = qr_tensor_get_f64(&g->values[g->nodes[p].in[1]].t, 0);
        }
        double worst = 0;
        bool shape_ok = st == QR_OK && qr_tensor_same_shape(&got, &want) && got.dtype == want.dtype;
        for (int64_t e = 0; shape_ok && e < got.numel; e++) {
            double a = qr_tensor_get_f64(&got, e), b = qr_tensor_get_f64(&want, e);
            double tol = lsb > 0 ? 1.001 * lsb : 1e-5 * fmax(1.0, fabs(b));
            if (fabs(a - b) / tol > worst) worst = fabs(a - b) / tol;
        }
        qr_tensor_free_data(&got);
        qr_tensor_free_data(&want);
        qr_tensor_free_data(&in);
        if (g) { qr_graph_free(g); free(g); }
        QT_OK(st);
        QT_CHECKF(shape_ok, "%s: output shape/dtype differs from ORT's", pairs[k]);
        QT_CHECKF(worst <= 1.0, "%s: run --mode int differs from ORT (all optimizations) by %.3g x the tolerance",
                  pairs[k], worst);
    }
}

static void qt_bench_cli_all(void) {
    QT_RUN(test_bench_cli_repeat_line);
    QT_RUN(test_bench_cli_usage);
    QT_RUN(test_bench_cli_int_equals_lowered);
    QT_RUN(test_bench_cli_int_vs_ort);
}
