/* tests/run — executor: value overrides (aliases, substitutions), taps,
 * single-node runs. */

typedef struct { int n_taps; bool saw_skipped; } QtTapCount;

static QrStatus qt_count_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtTapCount *c = user;
    QR_UNUSED(g); QR_UNUSED(node); QR_UNUSED(value); QR_UNUSED(t);
    c->n_taps++;
    return QR_OK;
}

static void test_run_overrides(void) {
    /* y = Relu(x + w) ; overrides: a := x (skip the Add), w := w2 */
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t d[1] = { 4 };
    float w[4] = { 1, 1, 1, 1 };
    qt_mb_init_raw(&mb, "w", QR_DT_F32, 1, d, w, sizeof w);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d);
    qt_mb_node(&mb, "Add", "add", "x,w", "a");
    qt_mb_node(&mb, "Relu", "relu", "a", "y");
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "overrides.onnx", &g);
    qt_mb_free(&mb);
    QT_OK(st);
    QrTensor x = {0}, y = {0}, w2 = {0};
    qr_tensor_set_shape(&x, QR_DT_F32, 1, d);
    qr_tensor_alloc_data(&x);
    qr_tensor_set_shape(&w2, QR_DT_F32, 1, d);
    qr_tensor_alloc_data(&w2);
    float xs[4] = { -2, -0.5f, 0.5f, 2 }, w2s[4] = { 10, 10, 10, 10 };
    memcpy(x.data, xs, sizeof xs);
    memcpy(w2.data, w2s, sizeof w2s);
    int *alias = malloc((size_t)g->n_values * sizeof *alias);
    const QrTensor **subst = calloc((size_t)g->n_values, sizeof *subst);
    for (int v = 0; v < g->n_values; v++) alias[v] = -1;
    QtTapCount cnt = {0};
    QrRunOpts o = { .tap = qt_count_tap, .tap_user = &cnt, .alias = alias, .subst = subst };
    float got[3][4];
    st = qr_graph_infer(g, &x);
    if (st == QR_OK) st = qr_run(g, &x, &o, &y);             /* plain */
    if (st == QR_OK) { memcpy(got[0], y.data, 16); qr_tensor_free_data(&y); }
    alias[qr_graph_find(g, "a")] = qr_graph_find(g, "x");
    if (st == QR_OK) st = qr_run(g, &x, &o, &y);             /* Add skipped */
    if (st == QR_OK) { memcpy(got[1], y.data, 16); qr_tensor_free_data(&y); }
    alias[qr_graph_find(g, "a")] = -1;
    subst[qr_graph_find(g, "w")] = &w2;
    if (st == QR_OK) st = qr_run(g, &x, &o, &y);             /* weight substituted */
    if (st == QR_OK) { memcpy(got[2], y.data, 16); qr_tensor_free_data(&y); }
    /* single node: Relu on x */
    QrTensor one[1];
    const QrTensor *ins[1] = { &x };
    if (st == QR_OK) st = qr_run_node(g, 1, ins, one);
    bool single_ok = st == QR_OK && ((float *)one[0].data)[0] == 0 && ((float *)one[0].data)[3] == 2;
    if (st == QR_OK) qr_tensor_free_data(&one[0]);
    free(alias);
    free(subst);
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&w2);
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    float want[3][4] = { { 0, 0.5f, 1.5f, 3 }, { 0, 0, 0.5f, 2 }, { 8, 9.5f, 10.5f, 12 } };
    for (int r = 0; r < 3; r++) for (int i = 0; i < 4; i++) QT_CHECKF(got[r][i] == want[r][i], "run %d [%d] = %g", r, i, got[r][i]);
    QT_CHECK(cnt.n_taps == 3 * 3);    /* input + 2 node outputs per run */
    QT_CHECK(single_ok);
}

static void qt_run_all(void) {
    QT_RUN(test_run_overrides);
}
