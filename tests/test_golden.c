/* tests/golden — runs each fixture model (fixtures/<name>/) on its input and
 * compares EVERY intermediate value with ONNX Runtime's (golden/index.tsv),
 * rtol 1e-4 / atol 1e-5. One test per fixture; the message names the first
 * value that differs and its worst element. */

typedef struct QtGolden {
    const char *dir;
    QrStrMap want_idx;       /* tensor name -> row in names[] */
    QrArena arena;
    char **names, **files;
    bool *checked;
    int n;
    int n_checked, n_bad, n_int;
    char first_bad[1024];
    bool exact;              /* float values must have ORT's bits (NaN: any NaN) */
    int64_t n_elems, n_diff; /* exact: float elements compared / with other bits */
} QtGolden;

/* Elements of two float32 tensors of the same shape whose bits differ (NaN vs NaN counts as
 * equal); -1 if dtype or shape differ. *first: the first such element's index. */
static int64_t qt_golden_bitdiff(const QrTensor *a, const QrTensor *b, int64_t *first) {
    if (a->dtype != QR_DT_F32 || b->dtype != QR_DT_F32 || a->numel != b->numel) return -1;
    const float *x = a->data, *y = b->data;
    int64_t n = 0;
    *first = -1;
    for (int64_t i = 0; i < a->numel; i++) {
        uint32_t u, v;
        memcpy(&u, x + i, 4);
        memcpy(&v, y + i, 4);
        if (u != v && !(x[i] != x[i] && y[i] != y[i])) {
            if (!n++) *first = i;
        }
    }
    return n;
}

static QrStatus qt_golden_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtGolden *gd = user;
    QR_UNUSED(node);
    int row = qr_strmap_get(&gd->want_idx, g->values[value].name);
    if (row < 0) return QR_OK;
    char path[4096], msg[512];
    snprintf(path, sizeof path, "%s/%s", gd->dir, gd->files[row]);
    QrTensor want = {0};
    QR_TRY(qr_npy_read(path, &want));
    gd->checked[row] = true;
    gd->n_checked++;
    gd->n_int += qr_dtype_is_int(want.dtype);
    if (gd->exact && want.dtype == QR_DT_F32) {
        int64_t first = -1, d = qt_golden_bitdiff(t, &want, &first);
        gd->n_elems += want.numel;
        if (d) {
            gd->n_diff += QR_MAX(d, 0);
            if (!gd->n_bad++)
                snprintf(gd->first_bad, sizeof gd->first_bad, "value '%s' (node '%s' %s): %lld of %lld elements differ%s",
                         g->values[value].name, node >= 0 ? g->nodes[node].name : "-",
                         node >= 0 ? g->nodes[node].op_type : "input", (long long)d, (long long)want.numel,
                         d < 0 ? " (dtype or size)" : "");
        }
    } else if (!qt_tensors_close(t, &want, 1e-4, 1e-5, msg, sizeof msg)) {
        if (!gd->n_bad++)
            snprintf(gd->first_bad, sizeof gd->first_bad, "value '%s' (node '%s' %s): %s", g->values[value].name,
                     node >= 0 ? g->nodes[node].name : "-", node >= 0 ? g->nodes[node].op_type : "input", msg);
    }
    qr_tensor_free_data(&want);
    return QR_OK;
}

/* Runs model on input and compares every value listed in golden_dir/index.tsv
 * (name<TAB>file.npy) with the recorded one; records one test called testname. */
static void qt_golden_check_ex(const char *testname, const char *model, const char *input, const char *golden_dir,
                               bool exact, int *n_values, int *n_int, int64_t *n_elems) {
    char path[2048];
    QtGolden gd = { .dir = golden_dir, .exact = exact };
    QrGraph *g = NULL;
    QrTensor in = {0}, *outs = NULL;
    unsigned char *idx = NULL;
    size_t idx_len = 0;
    snprintf(path, sizeof path, "%s/index.tsv", golden_dir);
    QrStatus st = qr_file_read(path, 0, &idx, &idx_len);
    int lines = 0;
    for (size_t i = 0; st == QR_OK && i < idx_len; i++) lines += idx[i] == '\n';
    if (st == QR_OK) {
        gd.names = qr_arena_array(&gd.arena, (size_t)lines + 1, sizeof(char *));
        gd.files = qr_arena_array(&gd.arena, (size_t)lines + 1, sizeof(char *));
        gd.checked = qr_arena_array(&gd.arena, (size_t)lines + 1, sizeof(bool));
        st = qr_strmap_init(&gd.want_idx, &gd.arena, (uint32_t)lines + 1);
    }
    for (char *line = (char *)idx; st == QR_OK && line && *line;) {
        char *nl = strchr(line, '\n'), *tab = strchr(line, '\t');
        if (nl) *nl = 0;
        if (!tab || (nl && tab > nl)) { st = qr_errf(QR_ERR_PARSE, "bad index line '%s'", line); break; }
        *tab = 0;
        gd.names[gd.n] = qr_arena_strdup(&gd.arena, line);
        gd.files[gd.n] = qr_arena_strdup(&gd.arena, tab + 1);
        st = qr_strmap_put(&gd.want_idx, &gd.arena, gd.names[gd.n], gd.n);
        gd.n++;
        line = nl ? nl + 1 : NULL;
    }
    if (st == QR_OK) st = qr_run_load(model, &g);
    if (st == QR_OK) st = qr_npy_read(input, &in);
    if (st == QR_OK) st = qr_run_infer(g, &in);
    if (st == QR_OK && !(outs = calloc((size_t)g->n_outputs + 1, sizeof *outs))) st = qr_errf(QR_ERR_NOMEM, "oom");
    QrRunOpts opts = { .tap = qt_golden_tap, .tap_user = &gd };
    if (st == QR_OK) st = qr_run(g, &in, &opts, outs);
    if (st != QR_OK) qt_record(testname, false, "%s", qr_err_msg());
    else if (gd.n_bad) qt_record(testname, false, "%d of %d values differ; first: %s", gd.n_bad, gd.n, gd.first_bad);
    else if (gd.n_checked != gd.n) {
        int miss = 0;
        while (gd.checked[miss]) miss++;
        qt_record(testname, false, "only %d of %d golden values were produced (e.g. '%s')", gd.n_checked, gd.n,
                  gd.names[miss]);
    } else qt_record(testname, true, "%s", "ok");
    if (n_values) *n_values = gd.n;
    if (n_int) *n_int = gd.n_int;
    if (n_elems) *n_elems = gd.n_elems;
    if (outs) for (int i = 0; i < g->n_outputs; i++) qr_tensor_free_data(&outs[i]);
    free(outs);
    qr_tensor_free_data(&in);
    qr_aligned_free(idx);
    if (g) { qr_graph_free(g); free(g); }
    qr_arena_free(&gd.arena);
}

static void qt_golden_check(const char *testname, const char *model, const char *input, const char *golden_dir,
                            int *n_values, int *n_int) {
    qt_golden_check_ex(testname, model, input, golden_dir, false, n_values, n_int, NULL);
}

/* The float models of the quantized pairs and the CNN fixture, on every x86-64 SIMD level
 * this CPU has: every intermediate value has exactly ONNX Runtime's bits (its goldens are
 * single-threaded with graph optimizations disabled), run with 1 and 2 threads. The ops
 * that made this hold: Conv sums K in MlasConv's blocks with the bias last, one-filter
 * convolutions (depthwise) in MLAS's M=1 order, the batch-1 Gemm starting from C,
 * BatchNormalization's coefficients and GlobalAveragePool's lanes as ORT rounds them.
 * Elsewhere (aarch64, the ref level, whose sums are plain loops) the 1e-4 goldens above
 * and the analysis references apply. */
static void qt_golden_exact(void) {
#if defined(__x86_64__)
    static const char *models[][3] = {
        { "fixtures/cnn_residual/model.onnx", "fixtures/cnn_residual/input.npy", "fixtures/cnn_residual/golden" },
        { "fixtures/qpairs/qat_fakequant/base.onnx", "fixtures/qpairs/qat_fakequant/input.npy", "fixtures/qpairs/qat_fakequant/golden_base" },
        { "fixtures/qpairs/ort_qdq/base.onnx", "fixtures/qpairs/ort_qdq/input.npy", "fixtures/qpairs/ort_qdq/golden_base" },
        { "fixtures/qpairs/qoperator/base.onnx", "fixtures/qpairs/qoperator/input.npy", "fixtures/qpairs/qoperator/golden_base" },
        { "fixtures/qpairs/integer_ops/base.onnx", "fixtures/qpairs/integer_ops/input.npy", "fixtures/qpairs/integer_ops/golden_base" },
        { "fixtures/qpairs/int16_mixed/base.onnx", "fixtures/qpairs/int16_mixed/input.npy", "fixtures/qpairs/int16_mixed/golden_base" },
    };
    static const QrIsa levels[] = { QR_ISA_AVX2, QR_ISA_AVX512 };
    const QrKernels saved = qr_kern;
    const int saved_threads = qr_pool_threads();
    int ran = 0;
    for (int l = 0; l < QR_ARRAY_LEN(levels); l++) {
        if (qr_kern_table(levels[l], &qr_kern) != QR_OK) {
            qr_err_clear();
            continue;
        }
        for (int threads = 1; threads <= 2; threads++) {
            qr_pool_init(threads);
            for (int i = 0; i < QR_ARRAY_LEN(models); i++) {
                char testname[512];
                snprintf(testname, sizeof testname, "golden exact %s %s %dT", qr_isa_name(levels[l]), models[i][2], threads);
                int n = 0, before = qt_failed;
                int64_t elems = 0;
                qt_golden_check_ex(testname, models[i][0], models[i][1], models[i][2], true, &n, NULL, &elems);
                if (qt_failed == before && threads == 1)
                    printf("golden exact (%s): %s: %d values, %lld float elements, all with ORT's bits\n",
                           qr_isa_name(levels[l]), models[i][2], n, (long long)elems);
            }
        }
        ran++;
    }
    qr_kern = saved;
    qr_pool_init(saved_threads);
    if (!ran) qt_record_skip("golden exact", "no x86-64 SIMD level on this CPU");
#else
    qt_record_skip("golden exact", "ONNX Runtime's bits are x86-64's: not an x86-64 build");
#endif
}

static void qt_golden_one(const char *name) {
    char model[256], input[256], dir[256], testname[256];
    snprintf(model, sizeof model, "fixtures/%s/model.onnx", name);
    snprintf(input, sizeof input, "fixtures/%s/input.npy", name);
    snprintf(dir, sizeof dir, "fixtures/%s/golden", name);
    snprintf(testname, sizeof testname, "golden/%s", name);
    int n = 0, before = qt_failed;
    qt_golden_check(testname, model, input, dir, &n, NULL);
    if (qt_failed == before) printf("golden %s: %d values match ONNX Runtime (rtol 1e-4, atol 1e-5)\n", name, n);
}

static void qt_golden_all(void) {
    static const char *fixtures[] = { "cnn_residual", "resize_concat", "transformer" };
    for (int i = 0; i < QR_ARRAY_LEN(fixtures); i++) qt_golden_one(fixtures[i]);
    qt_golden_exact();
}
