/* tests/deploy — the deployment kit: device dumps against the simulation (compare-dump),
 * minimal repros (extract) and repaired models (promote / --emit-model). Dumps are written
 * here the way a device runtime writes them (channels-last raw integers with sanitized names,
 * .npy), from qreport's own int-mode run, with one layer corrupted; ONNX Runtime 'all' dumps
 * come from fixtures/qpairs_int (make_int_golden.py). */

/* An analysis model loaded on its fixture input, with its int-mode lowering. */
typedef struct QtDpModel {
    QrGraph *g;
    QrTensor in;
    QrQuantTable qt;
    QrGraph low;
    QrLowerInfo info;
} QtDpModel;

static void qt_dp_free(QtDpModel *m) {
    qr_graph_free(&m->low);
    qr_lower_info_free(&m->info);
    qr_qtable_free(&m->qt);
    qr_tensor_free_data(&m->in);
    if (m->g) { qr_graph_free(m->g); free(m->g); }
    memset(m, 0, sizeof *m);
}

static QrStatus qt_dp_load(QtDpModel *m, const char *pair) {
    char p[512];
    memset(m, 0, sizeof *m);
    snprintf(p, sizeof p, "fixtures/qpairs/%s/input.npy", pair);
    QR_TRY(qr_npy_read(p, &m->in));
    snprintf(p, sizeof p, "fixtures/qpairs/%s/analysis.onnx", pair);
    QR_TRY(qr_run_load(p, &m->g));
    QR_TRY(qr_run_infer(m->g, &m->in));
    QR_TRY(qr_qtable_build(m->g, &m->qt));
    return qr_lower_graph(m->g, &m->qt, false, &m->low, &m->info);
}

/* Activation quantizers' integer values of the int-mode run, kept per value. */
typedef struct QtDpCap { const QrQuantTable *qt; int n_values; QrTensor *vals; } QtDpCap;

static QrStatus qt_dp_cap_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QR_UNUSED(g);
    QR_UNUSED(node);
    QtDpCap *c = user;
    if (value >= c->n_values || c->vals[value].data || !t->data || qr_dtype_is_float(t->dtype)) return QR_OK;
    int q = c->qt->by_value[value];
    if (q < 0 || c->qt->q[q].kind != QR_QK_ACTIVATION || c->qt->q[q].int_value != value) return QR_OK;
    QR_TRY(qr_tensor_set_shape(&c->vals[value], t->dtype, t->rank, t->dims));
    QR_TRY(qr_tensor_alloc_data(&c->vals[value]));
    memcpy(c->vals[value].data, t->data, qr_tensor_nbytes(t));
    return QR_OK;
}

static void qt_dp_cap_free(QtDpCap *c) {
    for (int i = 0; c->vals && i < c->n_values; i++) qr_tensor_free_data(&c->vals[i]);
    free(c->vals);
}

/* A file name as a runtime would write it: every non-alphanumeric character -> '_'. */
static void qt_dp_runtime_name(char *dst, size_t n, const char *name) {
    size_t k = 0;
    for (; *name && k + 1 < n; name++) dst[k++] = isalnum((unsigned char)*name) ? *name : '_';
    dst[k] = 0;
}

/* Corrupts 3 elements of t by +-3 (integers in range). */
static void qt_dp_corrupt(QrTensor *t) {
    int64_t lo = t->dtype == QR_DT_U8 || t->dtype == QR_DT_U16 ? 0 : t->dtype == QR_DT_S8 ? -128 : -32768;
    int64_t hi = t->dtype == QR_DT_U8 ? 255 : t->dtype == QR_DT_S8 ? 127 : t->dtype == QR_DT_U16 ? 65535 : 32767;
    int64_t at[3] = { 1, t->numel / 2, t->numel - 2 };
    for (int k = 0; k < 3; k++) {
        int64_t v = qr_tensor_get_i64(t, at[k]);
        qr_tensor_set_i64(t, at[k], v + 3 <= hi ? v + 3 : v - 3 >= lo ? v - 3 : v);
    }
}

/* Writes every activation's int-mode integer value of `pair` into dir: raw channels-last files
 * ("<index>_<runtime name>.bin") when raw_nhwc, else .npy in the model's layout named
 * "tensor_<runtime name>.npy"; the value called `bad` (the k-th activation, k = which) corrupted
 * by +-3 LSB on 3 elements. Returns its name through bad. */
static QrStatus qt_dp_write_dump(QtDpModel *m, const char *dir, bool raw_nhwc, int which, const char **bad, int *n_written) {
    QtDpCap cap = { &m->qt, m->g->n_values, calloc((size_t)m->g->n_values + 1, sizeof(QrTensor)) };
    if (!cap.vals) return qr_errf(QR_ERR_NOMEM, "oom");
    QrRunOpts ro = { .tap = qt_dp_cap_tap, .tap_user = &cap };
    QrStatus st = qr_run(&m->low, &m->in, &ro, NULL);
    if (st == QR_OK) st = qr_mkdir_p(dir);
    int k = 0;
    *bad = NULL;
    for (int i = 0; st == QR_OK && i < m->g->n_nodes; i++) {
        const QrNode *nd = &m->g->nodes[m->g->order[i]];
        for (int o = 0; st == QR_OK && o < nd->n_out; o++) {
            int v = nd->out[o];
            if (v < 0 || !cap.vals[v].data) continue;
            QrTensor *t = &cap.vals[v];
            if (k == which) { qt_dp_corrupt(t); *bad = m->g->values[v].name; }
            char nm[512], path[1024];
            qt_dp_runtime_name(nm, sizeof nm, m->g->values[v].name);
            if (raw_nhwc) {
                snprintf(path, sizeof path, "%s/%04d_%s.bin", dir, k, nm);
                size_t es = qr_dtype_size(t->dtype);
                unsigned char *buf = malloc((size_t)t->numel * es + 1);
                if (!buf) { st = qr_errf(QR_ERR_NOMEM, "oom"); break; }
                for (int64_t e = 0; e < t->numel; e++) {
                    int64_t j = t->rank >= 3 ? qr__dp_cl_index(t, e) : e;
                    memcpy(buf + j * (int64_t)es, (unsigned char *)t->data + e * (int64_t)es, es);
                }
                st = qr_file_write_atomic(path, buf, (size_t)t->numel * es);
                free(buf);
            } else {
                snprintf(path, sizeof path, "%s/tensor_%s.npy", dir, nm);
                st = qr_npy_write(path, t);
            }
            k++;
        }
    }
    *n_written = k;
    qt_dp_cap_free(&cap);
    return st;
}

/* The dump test of issue 18: one fixture as NHWC raw integers with runtime names, one as .npy;
 * a corrupted layer is the first divergent value and every row before it shows 0 LSB. */
static void qt_dp_corrupted(const char *pair, bool raw_nhwc, int which) {
    char name[128], dir[512];
    snprintf(name, sizeof name, "deploy/dump_%s_%s", raw_nhwc ? "raw_nhwc" : "npy", pair);
    snprintf(dir, sizeof dir, "%s/dump_%s_%d", qt_tmpdir(), pair, raw_nhwc);
    QtDpModel m;
    QrDumpResult r = { 0 };
    const char *bad = NULL, *why = NULL;
    char msg[512] = "";
    int n_written = 0;
    QrStatus st = qt_dp_load(&m, pair);
    if (st == QR_OK) st = qt_dp_write_dump(&m, dir, raw_nhwc, which, &bad, &n_written);
    QrDumpOpts o = { .dir = dir, .tol = 1, .float_rtol = 1e-4 };
    if (st == QR_OK) st = qr_dump_compare(m.g, &m.in, NULL, &o, &r);
    if (st != QR_OK) why = qr_err_msg();
    else if (!bad) why = "no activation corrupted";
    else if (r.n != n_written || r.n_unmatched) why = (snprintf(msg, sizeof msg, "%d of %d files matched, %d unmatched", r.n, n_written, r.n_unmatched), msg);
    else if (r.first_divergent < 0 || strcmp(r.rows[r.first_divergent].value, bad))
        why = (snprintf(msg, sizeof msg, "first divergent '%s', want '%s'", r.first_divergent >= 0 ? r.rows[r.first_divergent].value : "none", bad), msg);
    else if (r.rows[r.first_divergent].lsb_max != 3 || r.rows[r.first_divergent].n_diff < 1 || r.rows[r.first_divergent].n_diff > 3)
        why = (snprintf(msg, sizeof msg, "corrupted row: max %lld LSB, %lld differ", (long long)r.rows[r.first_divergent].lsb_max, (long long)r.rows[r.first_divergent].n_diff), msg);
    else if (r.n_divergent != 1) why = (snprintf(msg, sizeof msg, "%d divergent rows, want 1", r.n_divergent), msg);
    for (int i = 0; !why && i < r.first_divergent; i++)
        if (r.rows[i].lsb_max != 0 || r.rows[i].n_diff || !r.rows[i].lsb)
            why = (snprintf(msg, sizeof msg, "upstream row '%s' shows %lld LSB", r.rows[i].value, (long long)r.rows[i].lsb_max), msg);
    for (int i = 0; !why && raw_nhwc && i < r.n; i++)
        if (strcmp(r.rows[i].layout, "-") && strcmp(r.rows[i].layout, "NHWC (from data)") &&
            strcmp(r.rows[i].layout, "NCHW (NCHW and NHWC fit the data equally)"))
            why = (snprintf(msg, sizeof msg, "'%s' read as %s", r.rows[i].value, r.rows[i].layout), msg);
    for (int i = 0; !why && raw_nhwc && i < r.n; i++)
        if (strcmp(r.rows[i].how, "stripped")) why = (snprintf(msg, sizeof msg, "'%s' matched by %s", r.rows[i].file, r.rows[i].how), msg);
    if (!why) printf("deploy %s: %d values, first divergent '%s' (%lld LSB), %d upstream rows at 0 LSB\n", name, r.n,
                     bad, (long long)r.rows[r.first_divergent].lsb_max, r.first_divergent);
    qt_record(name, !why, "%s", why ? why : "");
    qr_dump_free(&r);
    qt_dp_free(&m);
}

/* ONNX Runtime 'all' (its fused integer kernels) as the device: every exposed activation of every
 * pair, named through --dump-map from index.tsv; nothing may diverge beyond 1 LSB. */
static void qt_dp_ort(const char *pair) {
    char name[128], dir[512], map[600], idx[512], msg[512] = "";
    snprintf(name, sizeof name, "deploy/dump_ort_all_%s", pair);
    snprintf(dir, sizeof dir, "fixtures/qpairs_int/%s", pair);
    qt_fmt(idx, sizeof idx, "%s/index.tsv", dir);
    snprintf(map, sizeof map, "%s/ort_%s.csv", qt_tmpdir(), pair);
    const char *why = NULL;
    QtDpModel m;
    QrDumpResult r = { 0 };
    int n_lines = 0;
    QrStatus st = qt_dp_load(&m, pair);
    FILE *in = st == QR_OK ? fopen(idx, "r") : NULL, *out = in ? fopen(map, "w") : NULL;
    if (st == QR_OK && (!in || !out)) st = qr_errf(QR_ERR_IO, "%s / %s", idx, map);
    char line[1024];
    if (out) fprintf(out, "file,value\n");
    while (st == QR_OK && fgets(line, sizeof line, in)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        tab[1 + strcspn(tab + 1, "\r\n")] = 0;
        fprintf(out, "%s,%s\n", tab + 1, line);
        n_lines++;
    }
    if (in) fclose(in);
    if (out) fclose(out);
    QrDumpOpts o = { .dir = dir, .map = map, .tol = 1, .float_rtol = 1e-4 };
    if (st == QR_OK) st = qr_dump_compare(m.g, &m.in, NULL, &o, &r);
    int64_t diff = 0, ties = 0, elems = 0, maxl = 0;
    for (int i = 0; st == QR_OK && i < r.n; i++) {
        diff += r.rows[i].n_diff;
        ties += r.rows[i].n_tie;
        elems += r.rows[i].n;
        if (r.rows[i].lsb_max > maxl) maxl = r.rows[i].lsb_max;
        if (!r.rows[i].lsb) why = (snprintf(msg, sizeof msg, "'%s' not compared in LSB", r.rows[i].value), msg);
    }
    if (st != QR_OK) why = qr_err_msg();
    else if (r.n != n_lines) why = (snprintf(msg, sizeof msg, "%d of %d ORT activations matched", r.n, n_lines), msg);
    else if (r.n_divergent) why = (snprintf(msg, sizeof msg, "%d divergent (first '%s')", r.n_divergent, r.rows[r.first_divergent].value), msg);
    if (!why) printf("deploy %s: %d activations, 0 divergent; %lld of %lld elements differ by 1 LSB (%lld at rounding ties)\n",
                     name, r.n, (long long)diff, (long long)elems, (long long)ties);
    qt_record(name, !why, "%s", why ? why : "");
    qr_dump_free(&r);
    qt_dp_free(&m);
}

/* Bad dumps through the command: a clear message naming the file, exit 1, no output written. */
static void test_deploy_dump_bad(void) {
    char d[512], out[600], p[700];
    QtCli r;
    const char *A = "fixtures/qpairs/ort_qdq/analysis.onnx", *I = "fixtures/qpairs/ort_qdq/input.npy";
    snprintf(out, sizeof out, "%s/dpbad_out", qt_tmpdir());
    snprintf(p, sizeof p, "%s/dump_compare.txt", out);
    /* wrong size: a raw file named after a uint8 activation of 1x8x16x16 */
    snprintf(d, sizeof d, "%s/dpbad1", qt_tmpdir());
    qr_mkdir_p(d);
    snprintf(p, sizeof p, "%s/stem_relu_Relu_output_0_QuantizeLinear_Output.bin", d);
    QT_OK(qr_file_write_atomic(p, "12345", 5));
    qt_cli(&r, "compare-dump %s %s -i %s -o %s", A, d, I, out);
    QT_CLI_FAILS(r, "stem_relu_Relu_output_0_QuantizeLinear_Output.bin", "has 5 bytes", "needs 8192 (float32) or 2048 (uint8)");
    snprintf(p, sizeof p, "%s/dump_compare.txt", out);
    QT_CHECK(access(p, F_OK) != 0);
    /* unknown dtype: a complex64 .npy */
    snprintf(d, sizeof d, "%s/dpbad2", qt_tmpdir());
    qr_mkdir_p(d);
    {
        char hdr[128];
        int hl = snprintf(hdr, sizeof hdr, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }");
        while ((hl + 10 + 1) % 64) hdr[hl++] = ' ';
        hdr[hl++] = '\n';
        unsigned char buf[256];
        memcpy(buf, "\x93NUMPY\x01\x00", 8);
        buf[8] = (unsigned char)(hl & 255);
        buf[9] = (unsigned char)(hl >> 8);
        memcpy(buf + 10, hdr, (size_t)hl);
        memset(buf + 10 + hl, 0, 16);
        snprintf(p, sizeof p, "%s/input_QuantizeLinear_Output.npy", d);
        QT_OK(qr_file_write_atomic(p, buf, (size_t)(10 + hl + 16)));
    }
    qt_cli(&r, "compare-dump %s %s -i %s -o %s", A, d, I, out);
    QT_CLI_FAILS(r, "input_QuantizeLinear_Output.npy", "<c8", "not supported");
    /* a layout fitting no permutation: 1x8x16x16 stored as 16x1x8x16 */
    snprintf(d, sizeof d, "%s/dpbad3", qt_tmpdir());
    qr_mkdir_p(d);
    snprintf(p, sizeof p, "%s/stem_relu_Relu_output_0_QuantizeLinear_Output.npy", d);
    int64_t dims3[4] = { 16, 1, 8, 16 };
    QT_OK(qt_write_npy_f(p, QR_DT_U8, 4, dims3, 1));
    qt_cli(&r, "compare-dump %s %s -i %s -o %s", A, d, I, out);
    QT_CLI_FAILS(r, "stem_relu_Relu_output_0_QuantizeLinear_Output.npy", "fits neither NCHW", "--dump-map");
    /* names matching several values: a model with values "a.b" and "a_b" */
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t dims[2] = { 1, 4 };
    qt_mb_input(&mb, "x", QR_DT_F32, 2, dims);
    qt_mb_output(&mb, "y", QR_DT_F32, 2, dims);
    qt_mb_node(&mb, "Relu", "r1", "x", "a.b");
    qt_mb_node(&mb, "Relu", "r2", "a.b", "a_b");
    qt_mb_node(&mb, "Add", "add", "a.b,a_b", "y");
    char model[600], xin[600];
    snprintf(model, sizeof model, "%s/ab.onnx", qt_tmpdir());
    QT_OK(qt_mb_write(&mb, model));
    qt_mb_free(&mb);
    snprintf(xin, sizeof xin, "%s/ab_x.npy", qt_tmpdir());
    QT_OK(qt_write_npy_f(xin, QR_DT_F32, 2, dims, 1));
    snprintf(d, sizeof d, "%s/dpbad5", qt_tmpdir());
    qr_mkdir_p(d);
    snprintf(p, sizeof p, "%s/A_B.npy", d);
    QT_OK(qt_write_npy_f(p, QR_DT_F32, 2, dims, 1));
    qt_cli(&r, "compare-dump %s %s -i %s -o %s/y", model, d, xin, out);
    QT_CLI_FAILS(r, "A_B.npy", "matches several values", "'a.b'", "'a_b'", "--dump-map");
    snprintf(p, sizeof p, "%s/y", out);
    QT_CHECK(access(p, F_OK) != 0);
    /* an integer dump of a value without quantizer (output y of the float model) */
    snprintf(d, sizeof d, "%s/dpbad4", qt_tmpdir());
    qr_mkdir_p(d);
    snprintf(p, sizeof p, "%s/Y.npy", d);
    QT_OK(qt_write_npy_f(p, QR_DT_S8, 2, dims, 1));
    qt_cli(&r, "compare-dump %s %s -i %s -o %s", model, d, xin, out);
    QT_CLI_FAILS(r, "Y.npy", "no quantizer", "scale and zero point in --dump-map");
    /* ... which a map with scale and zero point makes comparable */
    snprintf(p, sizeof p, "%s/map.csv", qt_tmpdir());
    QT_OK(qr_file_write_atomic(p, "Y.npy,y,,0.05,0\n", 16));
    qt_cli(&r, "compare-dump %s %s -i %s -o %s --dump-map %s", model, d, xin, out, p);
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    char txt[8192];
    snprintf(p, sizeof p, "%s/dump_compare.txt", out);
    qt_slurp(p, txt, sizeof txt);
    QT_CHECKF(strstr(txt, "| y ") && strstr(txt, "FIRST DIVERGENT") && strstr(txt, "| map "), "%s", txt);
    /* a map naming a value that does not exist: closest names suggested */
    snprintf(p, sizeof p, "%s/map2.csv", qt_tmpdir());
    QT_OK(qr_file_write_atomic(p, "Y.npy,a.c\n", 10));
    qt_cli(&r, "compare-dump %s %s -i %s -o %s/x --dump-map %s", model, d, xin, out, p);
    QT_CLI_FAILS(r, "map2.csv:1", "no value 'a.c'", "closest: 'a.b'");
    snprintf(p, sizeof p, "%s/x", out);
    QT_CHECK(access(p, F_OK) != 0);
}

/* Reads a bundle folder's summary.json "dump" object. */
static const QrJsonVal *qt_dp_summary(QrArena *a, const char *dir, const char *key) {
    char p[700];
    snprintf(p, sizeof p, "%s/summary.json", dir);
    unsigned char *buf;
    size_t len;
    if (qr_file_read(p, 1 << 24, &buf, &len) != QR_OK) return NULL;
    QrJsonVal *v = NULL;
    QrStatus st = qr_json_parse(a, (const char *)buf, len, &v);
    qr_aligned_free(buf);
    return st == QR_OK ? qr_json_get(v, key) : NULL;
}

/* runall --dump: the same comparison in the bundle (summary.json dump.*, HTML section, tables);
 * a bad dump fails runall with no bundle. */
static void test_deploy_dump_runall(void) {
    char d[512], keep[600], zip[600], p[700];
    QtDpModel m;
    const char *bad = NULL;
    int n = 0;
    snprintf(d, sizeof d, "%s/dump_runall", qt_tmpdir());
    QT_OK(qt_dp_load(&m, "ort_qdq"));
    QrStatus st = qt_dp_write_dump(&m, d, true, 5, &bad, &n);
    char badname[256];
    snprintf(badname, sizeof badname, "%s", bad ? bad : "");
    qt_dp_free(&m);
    QT_OK(st);
    snprintf(keep, sizeof keep, "%s/dump_runall_keep", qt_tmpdir());
    snprintf(zip, sizeof zip, "%s/dump_runall.zip", qt_tmpdir());
    QtCli r;
    qt_cli(&r, "runall fixtures/qpairs/ort_qdq/base.onnx fixtures/qpairs/ort_qdq/analysis.onnx -i fixtures/qpairs/ort_qdq/input.npy "
           "-o %s --keep-dir %s --dump %s --quiet", zip, keep, d);
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    QrArena a = { 0 };
    const QrJsonVal *j = qt_dp_summary(&a, keep, "dump");
    const QrJsonVal *fd = qr_json_get(j, "first_divergent"), *mt = qr_json_get(j, "matched"), *dv = qr_json_get(j, "divergent");
    bool ok = fd && fd->type == QR_JSON_STR && !strcmp(fd->str, badname) && mt && mt->num == n && dv && dv->num == 1;
    qr_arena_free(&a);
    QT_CHECKF(ok, "summary.json dump: want first_divergent '%s', %d matched, 1 divergent", badname, n);
    snprintf(p, sizeof p, "%s/index.html", keep);
    char *html = qt_ra_read(p, NULL);   /* the whole page (the graph view made it longer than 64 KiB) */
    bool dump_shown = html && strstr(html, "Device dump vs simulation") && strstr(html, "FIRST DIVERGENT");
    bool repro_shown = html && strstr(html, "Minimal repro of the worst layer");
    free(html);
    QT_CHECK(dump_shown);
    snprintf(p, sizeof p, "%s/dump_compare.csv", keep);
    QT_CHECK(access(p, F_OK) == 0);
    /* repro/ of the worst verified layer by local error, on by default */
    QrArena a2 = { 0 };
    const QrJsonVal *rp = qt_dp_summary(&a2, keep, "repro"), *rn = qr_json_get(rp, "node");
    char node[256] = "";
    if (rn && rn->type == QR_JSON_STR) snprintf(node, sizeof node, "%s", rn->str);
    qr_arena_free(&a2);
    QT_CHECKF(!strcmp(node, "/gap/GlobalAveragePool"), "summary.json repro.node '%s'", node);
    snprintf(p, sizeof p, "%s/repro/repro.json", keep);
    QT_CHECK(access(p, F_OK) == 0);
    snprintf(p, sizeof p, "%s/repro/analysis_sub.onnx", keep);
    QT_CHECK(access(p, F_OK) == 0);
    QT_CHECK(repro_shown);
    snprintf(keep, sizeof keep, "%s/dump_runall_norepro", qt_tmpdir());
    qt_cli(&r, "runall fixtures/qpairs/ort_qdq/base.onnx fixtures/qpairs/ort_qdq/analysis.onnx -i fixtures/qpairs/ort_qdq/input.npy "
           "-o %s --keep-dir %s --no-repro --quiet", zip, keep);
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    snprintf(p, sizeof p, "%s/repro", keep);
    QT_CHECK(access(p, F_OK) != 0);
    snprintf(p, sizeof p, "%s/summary.json", keep);
    QT_CHECK(access(p, F_OK) == 0);
    /* a bad dump: exit 1, no zip */
    snprintf(p, sizeof p, "%s/0000_input_QuantizeLinear_Output.bin", d);
    QT_OK(qr_file_write_atomic(p, "xyz", 3));
    snprintf(zip, sizeof zip, "%s/dump_runall_bad.zip", qt_tmpdir());
    qt_cli(&r, "runall fixtures/qpairs/ort_qdq/base.onnx fixtures/qpairs/ort_qdq/analysis.onnx -i fixtures/qpairs/ort_qdq/input.npy "
           "-o %s --dump %s --quiet", zip, d);
    QT_CLI_FAILS(r, "0000_input_QuantizeLinear_Output.bin", "has 3 bytes");
    QT_CHECK(access(zip, F_OK) != 0);
    qt_cli(&r, "runall a.onnx b.onnx --dump-map x.csv");
    QT_CHECKF(r.code == 2 && strstr(r.err, "need --dump"), "%d %s", r.code, r.err);
}

/* ---- extract ---------------------------------------------------------------------------- */

/* ONNX Runtime through node (a development tool): available, or the test says skipped. */
static bool qt_dp_have_ort(void) {
    const char *dir = getenv("ORT_NODE_MODULES");
    char p[600];
    snprintf(p, sizeof p, "%s/onnxruntime-node", dir ? dir : "/tmp/ort/node_modules");   /* test_main sets it to third_party/ort */
    return access(p, F_OK) == 0 && system("node -e 0 >/dev/null 2>&1") == 0;
}

/* Whether ONNX Runtime's u8s8 integer GEMM (QLinearConv / QLinearMatMul with uint8 activations and
 * int8 weights) computes exact int32 sums on this CPU: with AVX-512 VNNI or AVX-VNNI it does; on
 * plain AVX2 MLAS multiplies with vpmaddubsw, which saturates each pair of products to int16
 * (255 x 127 x 2 > 32767), so some outputs differ from the operator's definition (and from
 * qreport) by a few LSB. Read from /proc/cpuinfo's flags, as the kernel reports them. */
static bool qt_dp_ort_u8s8_exact(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return true;
    char line[8192];
    bool vnni = false, x86 = false;
    while (!vnni && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            x86 = true;
            vnni = strstr(line, " avx512_vnni") || strstr(line, " avx_vnni");
        }
    fclose(f);
    return vnni || !x86;
}

/* Runs MODEL with ORT (level) on dir/<prefix>_<k>.npy, k < n; output 0 -> out_dir/output_0.npy. */
static QrStatus qt_dp_ort_run(const char *model, const char *out_dir, const char *level, const char *dir, const char *prefix,
                              int n) {
    char cmd[8192];
    size_t l = (size_t)snprintf(cmd, sizeof cmd, "node tests/ort_run.js '%s' '%s' %s", model, out_dir, level);
    for (int k = 0; k < n && l < sizeof cmd; k++) l += (size_t)snprintf(cmd + l, sizeof cmd - l, " '%s/%s_%d.npy'", dir, prefix, k);
    if (l < sizeof cmd) snprintf(cmd + l, sizeof cmd - l, " 2>%s/ort.err", out_dir);
    qr_mkdir_p(out_dir);
    if (system(cmd) != 0) {
        char err[2048], p[700];
        qt_fmt(p, sizeof p, "%s/ort.err", out_dir);
        qt_slurp(p, err, sizeof err);
        return qr_errf(QR_ERR_IO, "ONNX Runtime failed on %s: %s", model, err);
    }
    return QR_OK;
}

/* Elements of got differing from want by more than tol (and the largest difference). */
static int64_t qt_dp_ndiff(const QrTensor *got, const QrTensor *want, double tol, double *maxd) {
    int64_t n = 0;
    *maxd = 0;
    if (got->numel != want->numel) return -1;
    for (int64_t i = 0; i < got->numel; i++) {
        double d = fabs(qr_tensor_get_f64(got, i) - qr_tensor_get_f64(want, i));
        if (d > *maxd) *maxd = d;
        n += !(d <= tol);
    }
    return n;
}

/* Scale of the DequantizeLinear writing g's output 0 (0 when none). */
static double qt_dp_out_lsb(const QrGraph *g) {
    int p = g->values[g->outputs[0]].producer;
    if (p < 0 || strcmp(g->nodes[p].op_type, "DequantizeLinear")) return 0;
    return qr_tensor_get_f64(&g->values[g->nodes[p].in[1]].t, 0);
}

/* Whether g has an integer GEMM/convolution of uint8 activations and int8 weights (QLinearConv,
 * QLinearMatMul, com.microsoft QGemm: input 0 uint8, input 3 int8). */
static bool qt_dp_has_u8s8(const QrGraph *g) {
    for (int i = 0; i < g->n_nodes; i++) {
        const QrNode *n = &g->nodes[i];
        if (strcmp(n->op_type, "QLinearConv") && strcmp(n->op_type, "QLinearMatMul") && strcmp(n->op_type, "QGemm")) continue;
        if (n->n_in > 3 && n->in[0] >= 0 && n->in[3] >= 0 && g->values[n->in[0]].t.dtype == QR_DT_U8 &&
            g->values[n->in[3]].t.dtype == QR_DT_S8)
            return true;
    }
    return false;
}

/* Opens a pair on inputs, runs compare (sim). */
typedef struct QtDpPair { QrGraph *b, *a; QrTensor in[8]; int n_in; QrSession se; QrCompare c; bool open, cmp; } QtDpPair;

static void qt_dp_pair_free(QtDpPair *p) {
    if (p->cmp) qr_compare_free(&p->c);
    if (p->open) qr_session_close(&p->se);
    for (int i = 0; i < p->n_in; i++) qr_tensor_free_data(&p->in[i]);
    if (p->a) { qr_graph_free(p->a); free(p->a); }
    if (p->b) { qr_graph_free(p->b); free(p->b); }
    memset(p, 0, sizeof *p);
}

static QrStatus qt_dp_pair_open(QtDpPair *p, const char *base, const char *analysis, const char *dir, const char *prefix, int n) {
    memset(p, 0, sizeof *p);
    char path[700];
    for (int k = 0; k < n; k++) {
        snprintf(path, sizeof path, "%s/%s%s%d.npy", dir, prefix, n == 1 && !strcmp(prefix, "input") ? "" : "_", k);
        if (n == 1 && !strcmp(prefix, "input")) snprintf(path, sizeof path, "%s/input.npy", dir);
        QR_TRY(qr_npy_read(path, &p->in[k]));
        p->n_in++;
    }
    QR_TRY(qr_run_load(base, &p->b));
    QR_TRY(qr_run_load(analysis, &p->a));
    QR_TRY(qr_run_infer(p->b, p->in));
    QR_TRY(qr_run_infer(p->a, p->in));
    QR_TRY(qr_session_open(&p->se, p->b, p->a, p->in));
    p->open = true;
    QR_TRY(qr_compare_mode(&p->se, "sim", 0.99, &p->c));
    p->cmp = true;
    return QR_OK;
}

/* Extract round trip: the worst layer by local error of a fixture pair, with `radius` upstream
 * nodes; compare on the extracted pair gives the full run's local metrics bit for bit, and ONNX
 * Runtime runs both extracted models to the expected outputs. */
static void qt_dp_extract(const char *pair, int radius) {
    char name[128], fdir[256], base[300], analysis[300], dir[512], msg[600] = "";
    snprintf(name, sizeof name, "deploy/extract_%s_r%d", pair, radius);
    snprintf(fdir, sizeof fdir, "fixtures/qpairs/%s", pair);
    snprintf(base, sizeof base, "%s/base.onnx", fdir);
    snprintf(analysis, sizeof analysis, "%s/analysis.onnx", fdir);
    snprintf(dir, sizeof dir, "%s/extract_%s_%d", qt_tmpdir(), pair, radius);
    const char *why = NULL;
    QtDpPair full, sub;
    memset(&sub, 0, sizeof sub);
    QrExtractInfo info = { 0 };
    QrStatus st = qt_dp_pair_open(&full, base, analysis, fdir, "input", 1);
    int worst = -1;
    for (int k = 0; st == QR_OK && k < full.c.n; k++) {
        const QrLayerRow *r = &full.c.rows[k];
        if (!r->has_local || full.se.m.m[r->match].a_node < 0) continue;
        if (worst < 0 || r->local.cosine < full.c.rows[worst].local.cosine) worst = k;
    }
    if (st == QR_OK && worst < 0) st = qr_errf(QR_ERR_INVALID, "no layer with local metrics");
    QrExtractOpts eo = { .radius = radius };
    if (st == QR_OK) {
        eo.node = full.b->nodes[full.se.m.m[full.c.rows[worst].match].b_node].name;
        st = qr_extract_to(&full.se, &full.c, &eo, dir, &info);
    }
    char sb[600], sa[600];
    snprintf(sb, sizeof sb, "%s/base_sub.onnx", dir);
    snprintf(sa, sizeof sa, "%s/analysis_sub.onnx", dir);
    if (st == QR_OK) st = qt_dp_pair_open(&sub, sb, sa, dir, "base_in", info.n_cut);
    const QrLayerRow *row = NULL;
    for (int k = 0; st == QR_OK && k < sub.c.n; k++)
        if (!strcmp(sub.b->nodes[sub.se.m.m[sub.c.rows[k].match].b_node].name, info.b_node)) row = &sub.c.rows[k];
    const QrMetrics *L = &full.c.rows[worst < 0 ? 0 : worst].local;
    if (st != QR_OK) why = qr_err_msg();
    else if (!row || !row->has_local) why = "the node has no row with local metrics in the extracted pair";
    else if (!(row->local.cosine == L->cosine && row->local.sqnr == L->sqnr && row->local.l1 == L->l1 && row->local.mse == L->mse))
        why = (snprintf(msg, sizeof msg, "local metrics differ: Cosine %.17g vs %.17g, SQNR %.17g vs %.17g", row->local.cosine,
                        L->cosine, row->local.sqnr, L->sqnr), msg);
    /* qreport itself runs the analysis sub-model on what the layer saw to the expected output */
    if (!why) {
        QrTensor ins[8] = { 0 }, out = { 0 }, want = { 0 };
        char p[700];
        for (int k = 0; st == QR_OK && k < info.n_cut; k++) {
            snprintf(p, sizeof p, "%s/analysis_in_%d.npy", dir, k);
            st = qr_npy_read(p, &ins[k]);
        }
        if (st == QR_OK) st = qr_run_infer(sub.a, ins);
        if (st == QR_OK) st = qr_run(sub.a, ins, NULL, &out);
        snprintf(p, sizeof p, "%s/analysis_expected.npy", dir);
        if (st == QR_OK) st = qr_npy_read(p, &want);
        double md;
        if (st != QR_OK) why = qr_err_msg();
        else if (qt_dp_ndiff(&out, &want, 0, &md) != 0)
            why = (snprintf(msg, sizeof msg, "analysis_sub on analysis_in differs from analysis_expected (max %g)", md), msg);
        for (int k = 0; k < info.n_cut; k++) qr_tensor_free_data(&ins[k]);
        qr_tensor_free_data(&out);
        qr_tensor_free_data(&want);
    }
    bool ort = qt_dp_have_ort();
    for (int m = 0; !why && ort && m < 2; m++) {       /* ONNX Runtime on both extracted models */
        char od[700], p[800];
        snprintf(od, sizeof od, "%s/ort_%d", dir, m);
        QrTensor got = { 0 }, want = { 0 };
        st = qt_dp_ort_run(m ? sa : sb, od, "disabled", dir, m ? "analysis_in" : "base_in", info.n_cut);
        snprintf(p, sizeof p, "%s/output_0.npy", od);
        if (st == QR_OK) st = qr_npy_read(p, &got);
        snprintf(p, sizeof p, "%s/%s_expected.npy", dir, m ? "analysis" : "base");
        if (st == QR_OK) st = qr_npy_read(p, &want);
        double amax = 0, md = 0;
        for (int64_t i = 0; st == QR_OK && i < want.numel; i++) amax = fmax(amax, fabs(qr_tensor_get_f64(&want, i)));
        double lsb = m ? qt_dp_out_lsb(sub.a) : 0, tol = fmax(1e-5 * amax, 1.001 * lsb);
        if (m && !qr_dtype_is_float(want.dtype)) tol = 1;            /* integer outputs: 1 at a rounding tie */
        int64_t nd = st == QR_OK ? qt_dp_ndiff(&got, &want, tol, &md) : 0;
        int64_t nz = st == QR_OK ? qt_dp_ndiff(&got, &want, 1e-6 * amax, &md) : 0;
        /* ORT's saturating u8s8 kernel (no VNNI): outputs of an integer-op analysis model may
         * differ from the definition by a few LSB (at most 8 here); they are counted in the line
         * below. On a VNNI CPU ORT's sums are exact and this check is the plain one. */
        int64_t nsat = 0;
        if (m && nd != 0 && !qt_dp_ort_u8s8_exact() && qt_dp_has_u8s8(sub.a) && md <= 8 * lsb) {
            nsat = nz;   /* every differing output, 1 LSB ones included */
            nd = 0;
            printf("deploy %s: ONNX Runtime's u8s8 kernel on this CPU (AVX2 without VNNI) saturates int16 pair sums: "
                   "%lld of %lld outputs differ from the definition, by at most %g (%.1f LSB)\n", name, (long long)nsat,
                   (long long)want.numel, md, md / lsb);
        }
        if (st != QR_OK) why = qr_err_msg();
        else if (nd != 0 || (nz - nsat) * 100 > want.numel)
            why = (snprintf(msg, sizeof msg, "ONNX Runtime's output of the %s sub-model: %lld elements beyond %g, %lld beyond "
                            "float rounding (max %g)", m ? "analysis" : "base", (long long)nd, tol, (long long)nz, md), msg);
        qr_tensor_free_data(&got);
        qr_tensor_free_data(&want);
    }
    if (!why)
        printf("deploy %s: '%s' (%d + %d nodes, %d cut input%s): local Cosine %.9f SQNR %.4f dB reproduced exactly; "
               "ONNX Runtime %s\n", name, info.b_node, info.n_base_nodes, info.n_analysis_nodes, info.n_cut,
               info.n_cut == 1 ? "" : "s", L->cosine, L->sqnr, ort ? "runs both to the expected outputs" : "not available (not checked)");
    if (!why && !ort) qt_record_skip(name, "onnxruntime-node not found (tests/tools.sh installs it): the ORT half of the check did not run (qreport's half passed)");
    else qt_record(name, !why, "%s", why ? why : "");
    qt_dp_pair_free(&sub);
    qt_dp_pair_free(&full);
}

/* Bad extract requests: unknown node (closest names), non-empty output folder. Nothing written. */
static void test_deploy_extract_bad(void) {
    char out[600], p[700];
    QtCli r;
    const char *P = "fixtures/qpairs/ort_qdq/base.onnx fixtures/qpairs/ort_qdq/analysis.onnx -i fixtures/qpairs/ort_qdq/input.npy";
    snprintf(out, sizeof out, "%s/exbad", qt_tmpdir());
    qt_cli(&r, "extract %s --node /pw/Cnv -o %s", P, out);
    QT_CLI_FAILS(r, "no compute node '/pw/Cnv'", "closest: '/pw/Conv'");
    QT_CHECK(access(out, F_OK) != 0);
    qr_mkdir_p(out);
    snprintf(p, sizeof p, "%s/keep.txt", out);
    QT_OK(qr_file_write_atomic(p, "x", 1));
    qt_cli(&r, "extract %s --node /pw/Conv -o %s", P, out);
    QT_CLI_FAILS(r, "exists and is not empty");
    qt_cli(&r, "extract %s -o %s/new", P, out);
    QT_CHECKF(r.code == 2 && strstr(r.err, "--node"), "%d %s", r.code, r.err);
    snprintf(p, sizeof p, "%s/new", out);
    QT_CHECK(access(p, F_OK) != 0);
    /* a good one through the command, into an empty folder */
    qt_cli(&r, "extract %s --node /pw/Conv --radius 1 -o %s/good", P, out);
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    snprintf(p, sizeof p, "%s/good/repro.json", out);
    QT_CHECK(access(p, F_OK) == 0);
}

/* ---- promote / --emit-model -------------------------------------------------------------- */

/* Runs an emitted model on the pair's input: its output metrics against the baseline (as the
 * what-if measures them) and its output 0. */
static QrStatus qt_dp_measure(QtDpPair *full, const char *model, QrMetrics *m, QrTensor *out0) {
    QrGraph *g = NULL;
    QR_TRY(qr_run_load(model, &g));
    QrTensor outs[8] = { 0 };
    QrStatus st = g->n_outputs <= 8 ? QR_OK : qr_errf(QR_ERR_INVALID, "outputs");
    if (st == QR_OK) st = qr_run_infer(g, full->in);
    if (st == QR_OK) st = qr_run(g, full->in, NULL, outs);
    if (st == QR_OK) st = qr_session_compare_outputs(&full->se, outs, m);
    if (st == QR_OK) { *out0 = outs[0]; outs[0] = (QrTensor){ 0 }; }
    for (int k = 0; k < 8; k++) qr_tensor_free_data(&outs[k]);
    qr_graph_free(g);
    free(g);
    return st;
}

/* promote: the emitted model, run by qreport, gives the predicted metrics bit for bit; ONNX Runtime
 * loads and runs it to the same output within float rounding (1 LSB of the output's quantizer). */
static void qt_dp_promote(const char *pair, const char *nodes, bool to_float) {
    char name[160], fdir[256], base[300], analysis[300], path[600], msg[700] = "";
    snprintf(name, sizeof name, "deploy/promote_%s_%s_%s", pair, to_float ? "float" : "int16", nodes);
    snprintf(fdir, sizeof fdir, "fixtures/qpairs/%s", pair);
    snprintf(base, sizeof base, "%s/base.onnx", fdir);
    snprintf(analysis, sizeof analysis, "%s/analysis.onnx", fdir);
    snprintf(path, sizeof path, "%s/promote_%s_%d.onnx", qt_tmpdir(), pair, to_float);
    const char *why = NULL;
    QtDpPair full;
    QrArena ar = { 0 };
    int *tn = NULL, n = 0;
    QrPromoteResult r = { 0 };
    QrMetrics m = { 0 };
    QrTensor out0 = { 0 }, ort0 = { 0 };
    QrStatus st = qt_dp_pair_open(&full, base, analysis, fdir, "input", 1);
    if (st == QR_OK) st = qr_promote_nodes(&full.se, nodes, &ar, &tn, &n);
    if (st == QR_OK) st = qr_promote_model(&full.se, tn, n, to_float, path, &r);
    if (st == QR_OK) st = qt_dp_measure(&full, path, &m, &out0);
    if (st != QR_OK) why = qr_err_msg();
    else if (!(m.cosine == r.predicted.cosine && m.sqnr == r.predicted.sqnr && m.l1 == r.predicted.l1 && m.mse == r.predicted.mse))
        why = (snprintf(msg, sizeof msg, "measured Cosine %.17g SQNR %.17g L1 %.17g, predicted %.17g %.17g %.17g", m.cosine,
                        m.sqnr, m.l1, r.predicted.cosine, r.predicted.sqnr, r.predicted.l1), msg);
    else if (m.cosine == full.c.out.cosine && m.l1 == full.c.out.l1) why = "the emitted model's output is the model's as is";
    else if (r.n_not || r.n_not_disabled) why = "some quantizers were not promoted";
    bool ort = qt_dp_have_ort();
    if (!why && ort) {
        char od[700], p[800], in[700];
        snprintf(od, sizeof od, "%s/promote_ort_%s_%d", qt_tmpdir(), pair, to_float);
        snprintf(in, sizeof in, "%s", fdir);
        qr_mkdir_p(od);
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "node tests/ort_run.js '%s' '%s' disabled '%s/input.npy' 2>'%s/ort.err'", path, od, in, od);
        snprintf(p, sizeof p, "%s/output_0.npy", od);
        if (system(cmd) != 0 || qr_npy_read(p, &ort0) != QR_OK) {
            snprintf(p, sizeof p, "%s/ort.err", od);
            char err[1024];
            qt_slurp(p, err, sizeof err);
            why = (qt_fmt(msg, sizeof msg, "ONNX Runtime cannot run %s: %s", path, err), msg);
        } else {
            double amax = 0, md = 0;
            for (int64_t i = 0; i < out0.numel; i++) amax = fmax(amax, fabs(qr_tensor_get_f64(&out0, i)));
            QrGraph *g = NULL;
            double lsb = qr_run_load(path, &g) == QR_OK ? qt_dp_out_lsb(g) : 0;
            if (g) { qr_graph_free(g); free(g); }
            double tol = fmax(1e-5 * amax, 1.001 * lsb);
            int64_t nd = qt_dp_ndiff(&ort0, &out0, tol, &md);
            if (nd != 0) why = (snprintf(msg, sizeof msg, "ONNX Runtime's output: %lld elements beyond %g (max %g)", (long long)nd, tol, md), msg);
        }
    }
    if (!why)
        printf("deploy %s: predicted = measured (Cosine %.9f, SQNR %.4f dB; as is %.9f); ONNX Runtime %s\n", name,
               m.cosine, m.sqnr, full.c.out.cosine, ort ? "loads and runs it" : "not available (not checked)");
    if (!why && !ort) qt_record_skip(name, "onnxruntime-node not found (tests/tools.sh installs it): the ORT half of the check did not run (qreport's half passed)");
    else qt_record(name, !why, "%s", why ? why : "");
    qr_tensor_free_data(&out0);
    qr_tensor_free_data(&ort0);
    qr_promote_free(&r);
    qr_arena_free(&ar);
    qt_dp_pair_free(&full);
}

/* --emit-model: the what-if's recommended promotion (a target no fixture meets as is, so it
 * recommends nodes) written by runall's emit stage; its prediction is the what-if's step exactly,
 * and running the model measures it. */
static void qt_dp_emit(const char *pair, double target) {
    char name[160], fdir[256], base[300], analysis[300], dir[600], path[700], msg[700] = "";
    snprintf(name, sizeof name, "deploy/emit_%s", pair);
    snprintf(fdir, sizeof fdir, "fixtures/qpairs/%s", pair);
    snprintf(base, sizeof base, "%s/base.onnx", fdir);
    snprintf(analysis, sizeof analysis, "%s/analysis.onnx", fdir);
    snprintf(dir, sizeof dir, "%s/emit_%s", qt_tmpdir(), pair);
    const char *why = NULL;
    QtDpPair full;
    QrSensResult sens = { 0 };
    QrWhatIf wi = { 0 };
    QrDeployRunall d = { 0 };
    QrMetrics m = { 0 };
    QrTensor out0 = { 0 };
    QrSensOpts so = { .metric = QR_METRIC_L1 };
    QrStatus st = qt_dp_pair_open(&full, base, analysis, fdir, "input", 1);
    if (st == QR_OK) st = qr_sens_run(&full.se, &so, &sens);
    static const int ks[] = { 1, 2, 3 };
    if (st == QR_OK) st = qr_whatif_run(&full.se, &sens, ks, 3, target, &wi);
    QrDeployRunallOpts o = { .emit_dir = dir };
    if (st == QR_OK) st = qr_deploy_runall_emit(&d, &o, &full.se, &sens, &wi);
    snprintf(path, sizeof path, "%s/analysis_promoted.onnx", dir);
    if (st == QR_OK) st = qt_dp_measure(&full, path, &m, &out0);
    const QrWhatIfStep *rec = NULL;
    if (st == QR_OK && d.have_emit) {
        int r = !strcmp(d.emit_to, "float") ? wi.rec_fp : wi.rec_int16;
        rec = r >= 0 ? &wi.steps[r] : NULL;
    }
    const QrMetrics *want = rec ? (!strcmp(d.emit_to, "float") ? &rec->fp : &rec->int16) : NULL;
    if (st != QR_OK) why = qr_err_msg();
    else if (!rec || d.emit_k < 1) why = "no promotion recommended";
    else if (!(d.emit_predicted.cosine == want->cosine && d.emit_predicted.l1 == want->l1 && d.emit_predicted.sqnr == want->sqnr))
        why = (snprintf(msg, sizeof msg, "promotion.json's prediction %.17g is not the what-if's %.17g", d.emit_predicted.cosine, want->cosine), msg);
    else if (!(m.cosine == want->cosine && m.l1 == want->l1 && m.sqnr == want->sqnr && m.mse == want->mse))
        why = (snprintf(msg, sizeof msg, "measured Cosine %.17g L1 %.17g, predicted %.17g %.17g (%s: %s%s)", m.cosine, m.l1,
                        want->cosine, want->l1, d.emit_to, rec->nodes[0], rec->k > 1 ? ", ..." : ""), msg);
    char pj[8192];
    snprintf(path, sizeof path, "%s/promotion.json", dir);
    qt_slurp(path, pj, sizeof pj);
    if (!why && (!strstr(pj, "\"predicted\"") || !strstr(pj, rec->nodes[0]))) why = "promotion.json lacks the prediction or the nodes";
    for (int k = 0; !why && k < 3; k++) {
        static const char *const f[] = { "nodes_to_exclude.json", "modelopt_exclude.json", "exclude_nodes.txt" };
        snprintf(path, sizeof path, "%s/%s", dir, f[k]);
        if (access(path, F_OK) != 0) why = f[k];
    }
    bool ort = qt_dp_have_ort();
    if (!why && ort) {
        char od[700];
        snprintf(od, sizeof od, "%s_ort", dir);
        snprintf(path, sizeof path, "%s/analysis_promoted.onnx", dir);
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "node tests/ort_run.js '%s' '%s' disabled '%s/input.npy' >/dev/null 2>&1", path, od, fdir);
        if (system(cmd) != 0) why = "ONNX Runtime cannot load or run analysis_promoted.onnx";
    }
    if (!why)
        printf("deploy %s: target Cosine %g, the what-if recommends %d node%s in %s: predicted = what-if = measured (Cosine %.9f, "
               "as is %.9f); ONNX Runtime %s\n", name, target, d.emit_k, d.emit_k == 1 ? "" : "s", d.emit_to, m.cosine,
               wi.as_is.cosine, ort ? "runs it" : "not available (not checked)");
    if (!why && !ort) qt_record_skip(name, "onnxruntime-node not found (tests/tools.sh installs it): the ORT half of the check did not run (qreport's half passed)");
    else qt_record(name, !why, "%s", why ? why : "");
    qr_tensor_free_data(&out0);
    qr_deploy_runall_free(&d);
    if (wi.steps || wi.arena.cur) qr_whatif_free(&wi);
    qr_sens_free(&sens);
    qt_dp_pair_free(&full);
}

/* runall --emit-model and promote through the commands: files, refusals, nothing half-written. */
static void test_deploy_emit_cli(void) {
    char t[600], p[700];
    QtCli r;
    const char *P = "fixtures/qpairs/culprit/base.onnx fixtures/qpairs/culprit/analysis.onnx -i fixtures/qpairs/culprit/input.npy";
    snprintf(t, sizeof t, "%s/emitcli", qt_tmpdir());
    qr_mkdir_p(t);
    qt_cli(&r, "runall %s -o %s/r.zip --emit-model %s/em --no-repro --quiet", P, t, t);
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    static const char *const f[] = { "analysis_promoted.onnx", "promotion.json", "nodes_to_exclude.json", "modelopt_exclude.json", "exclude_nodes.txt" };
    for (int k = 0; k < 5; k++) {
        snprintf(p, sizeof p, "%s/em/%s", t, f[k]);
        QT_CHECKF(access(p, F_OK) == 0, "%s missing", p);
    }
    /* an existing, non-empty folder: refused before anything runs, no zip */
    qt_cli(&r, "runall %s -o %s/r2.zip --emit-model %s/em --quiet", P, t, t);
    QT_CLI_FAILS(r, "exists and is not empty");
    snprintf(p, sizeof p, "%s/r2.zip", t);
    QT_CHECK(access(p, F_OK) != 0);
    /* promote: unknown node (closest names), existing output, bad --to */
    qt_cli(&r, "promote %s --nodes /conv1/Conv,/dw/Cnv --to int16 -o %s/p.onnx", P, t);
    QT_CLI_FAILS(r, "no node '/dw/Cnv'", "closest: '/dw/Conv'");
    snprintf(p, sizeof p, "%s/p.onnx", t);
    QT_CHECK(access(p, F_OK) != 0);
    snprintf(p, sizeof p, "%s/p.promotion.json", t);
    QT_CHECK(access(p, F_OK) != 0);
    qt_cli(&r, "promote %s --nodes /conv1/Conv --to int8 -o %s/p.onnx", P, t);
    QT_CHECKF(r.code == 2, "exit %d", r.code);
    qt_cli(&r, "promote %s --nodes /conv1/Conv --to float -o %s/p.onnx", P, t);
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    QT_CHECK(access(p, F_OK) == 0);
    qt_cli(&r, "promote %s --nodes /conv1/Conv --to int16 -o %s/p.onnx", P, t);
    QT_CLI_FAILS(r, "p.onnx exists");
}

static void qt_deploy_all(void) {
    qt_dp_corrupted("ort_qdq", true, 2);
    qt_dp_corrupted("int16_mixed", false, 3);
    qt_dp_corrupted("qat_fakequant", true, 4);
    qt_dp_corrupted("qoperator", false, 2);
    static const char *const pairs[] = { "qat_fakequant", "ort_qdq", "qoperator", "int16_mixed", "integer_ops" };
    for (int i = 0; i < QR_ARRAY_LEN(pairs); i++) qt_dp_ort(pairs[i]);
    QT_RUN(test_deploy_dump_bad);
    QT_RUN(test_deploy_dump_runall);
    static const char *const xpairs[] = { "qat_fakequant", "ort_qdq", "qoperator", "int16_mixed", "integer_ops", "culprit" };
    for (int i = 0; i < QR_ARRAY_LEN(xpairs); i++) { qt_dp_extract(xpairs[i], 0); qt_dp_extract(xpairs[i], 1); }
    QT_RUN(test_deploy_extract_bad);
    qt_dp_promote("culprit", "/conv1/Conv", false);
    qt_dp_promote("culprit", "/conv1/Conv,/dw/Conv", false);
    qt_dp_promote("culprit", "/conv1/Conv,/dw/Conv", true);
    qt_dp_promote("ort_qdq", "/gap/GlobalAveragePool,/fc/Gemm", false);
    qt_dp_promote("ort_qdq", "/stem/Conv,/pw/Conv", true);
    qt_dp_promote("qat_fakequant", "/stem/Conv", false);
    qt_dp_promote("qat_fakequant", "/fc/Gemm", true);
    qt_dp_promote("qoperator", "/stem/Conv", true);
    qt_dp_promote("qoperator", "/conv/Conv", false);
    qt_dp_promote("integer_ops", "/stem/Conv", false);
    qt_dp_emit("culprit", 0.9999999);
    qt_dp_emit("ort_qdq", 0.99999);
    qt_dp_emit("qoperator", 0.9999);
    QT_RUN(test_deploy_emit_cli);
}
