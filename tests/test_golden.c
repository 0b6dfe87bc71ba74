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
} QtGolden;

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
    if (!qt_tensors_close(t, &want, 1e-4, 1e-5, msg, sizeof msg)) {
        if (!gd->n_bad++)
            snprintf(gd->first_bad, sizeof gd->first_bad, "value '%s' (node '%s' %s): %s", g->values[value].name,
                     node >= 0 ? g->nodes[node].name : "-", node >= 0 ? g->nodes[node].op_type : "input", msg);
    }
    qr_tensor_free_data(&want);
    return QR_OK;
}

/* Runs model on input and compares every value listed in golden_dir/index.tsv
 * (name<TAB>file.npy) with the recorded one; records one test called testname. */
static void qt_golden_check(const char *testname, const char *model, const char *input, const char *golden_dir,
                            int *n_values, int *n_int) {
    char path[2048];
    QtGolden gd = { .dir = golden_dir };
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
    if (st == QR_OK) st = qr_onnx_load(model, &g);
    if (st == QR_OK) st = qr_npy_read(input, &in);
    if (st == QR_OK) st = qr_graph_infer(g, &in);
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
    if (outs) for (int i = 0; i < g->n_outputs; i++) qr_tensor_free_data(&outs[i]);
    free(outs);
    qr_tensor_free_data(&in);
    qr_aligned_free(idx);
    if (g) { qr_graph_free(g); free(g); }
    qr_arena_free(&gd.arena);
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
}
