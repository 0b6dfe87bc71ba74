/* tests/run — executor: value overrides (aliases, substitutions), taps, single-node
 * runs, fusion (bit-identical to unfused runs, cut by taps and overrides), the constant
 * cache. */

typedef struct { int n_taps; bool saw_skipped; } QtTapCount;

static QrStatus qt_count_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtTapCount *c = user;
    QR_UNUSED(g); QR_UNUSED(node); QR_UNUSED(value); QR_UNUSED(t);
    c->n_taps++;
    return QR_OK;
}

/* Nodes whose values nothing reads, returns or taps are not run (a chain of them either), and
 * run when a tap wants them; the output does not change; a run asked for no outputs does not run
 * what feeds only them. y = Relu(x); dead: n1 = Neg(x), n2 = Abs(n1). */
static void test_run_dead_nodes(void) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t d[1] = { 4 };
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d);
    qt_mb_node(&mb, "Neg", "neg", "x", "n1");
    qt_mb_node(&mb, "Relu", "relu", "x", "y");
    qt_mb_node(&mb, "Abs", "abs", "n1", "n2");
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "dead.onnx", &g);
    qt_mb_free(&mb);
    QT_OK(st);
    QrTensor x = {0}, y = {0};
    qr_tensor_set_shape(&x, QR_DT_F32, 1, d);
    qr_tensor_alloc_data(&x);
    float xs[4] = { -2, -0.5f, 0.5f, 2 };
    memcpy(x.data, xs, sizeof xs);
    int64_t n_exec = 0;
    QrRunOpts o = { .n_exec = &n_exec };
    st = qr_run_infer(g, &x);
    if (st == QR_OK) st = qr_run(g, &x, &o, &y);
    const bool plain = st == QR_OK && n_exec == 1 && ((float *)y.data)[0] == 0 && ((float *)y.data)[3] == 2;
    qr_tensor_free_data(&y);
    QtTapCount cnt = {0};
    o = (QrRunOpts){ .n_exec = &n_exec, .tap = qt_count_tap, .tap_user = &cnt };
    n_exec = 0;
    if (st == QR_OK) st = qr_run(g, &x, &o, &y);
    const bool tapped = st == QR_OK && n_exec == 3 && ((float *)y.data)[3] == 2;
    qr_tensor_free_data(&y);
    bool *only = calloc((size_t)g->n_values, sizeof *only);   /* a tap that wants n1 only: Abs stays dead */
    only[qr_graph_find(g, "n1")] = true;
    o.tap_only = only;
    n_exec = 0;
    if (st == QR_OK) st = qr_run(g, &x, &o, &y);
    const bool partial = st == QR_OK && n_exec == 2;
    qr_tensor_free_data(&y);
    /* no outputs asked for: only the tapped n1's producer runs (Relu feeds only the output y) */
    cnt = (QtTapCount){0};
    n_exec = 0;
    if (st == QR_OK) st = qr_run(g, &x, &o, NULL);
    const bool taps_only = st == QR_OK && n_exec == 1 && cnt.n_taps == 1;
    free(only);
    qr_tensor_free_data(&x);
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECKF(plain, "without taps: %lld nodes ran", (long long)n_exec);
    QT_CHECK(tapped);
    QT_CHECK(partial);
    QT_CHECKF(taps_only, "taps only, no outputs: %lld nodes ran", (long long)n_exec);
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
    st = qr_run_infer(g, &x);
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

/* ==== fusion, buffer reuse and the constant cache ================================== */

static void qt__rf_init(QtModel *mb, const char *name, int rank, const int64_t *dims, uint64_t *rng, float scale,
                        float offset) {
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    float *v = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) v[i] = offset + scale * (float)qr_rng_normal(rng);
    qt_mb_init_raw(mb, name, QR_DT_F32, rank, dims, v, (size_t)n * sizeof(float));
    free(v);
}

static void qt__rf_int_attr(QtModel *mb, Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = qt_mb_attr(mb, n, name, QR_ATTR_INT);
    a->has_i = 1;
    a->i = v;
}

/* A small network with every fusable pattern:
 *   x -> Q -> DQ (uint8)                        a Q -> DQ pair alone
 *   Conv 3x3 + bias -> Relu                      GEMM epilogue
 *   Conv 3x3 (weights W2 -> Q -> DQ per channel) -> Add(residual) -> Relu
 *   depthwise Conv stride 2 -> Clip(0, 6)
 *   MaxPool -> Mul(scalar) -> Relu               a chain after another layer
 *   Conv 1x1 -> Div(per channel) -> BatchNormalization -> Relu -> Q -> DQ (int8) = y */
static QrStatus qt__rf_model(QrGraph **g) {
    QtModel mb;
    qt_mb_init(&mb, 13);
    uint64_t rng = 2024;
    int64_t dx[4] = { 1, 4, 9, 11 }, w1[4] = { 6, 4, 3, 3 }, b6[1] = { 6 }, w2[4] = { 6, 6, 3, 3 }, wd[4] = { 6, 1, 3, 3 };
    int64_t wp[4] = { 5, 6, 1, 1 }, b5[1] = { 5 }, dv[4] = { 1, 5, 1, 1 }, dy[4] = { 1, 5, 3, 3 }, s0[1] = { 1 };
    qt_mb_input(&mb, "x", QR_DT_F32, 4, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 4, dy);
    float xs = 0.02f, ys = 0.01f, lo = 0.0f, hi = 6.0f, two = 1.75f, ws[6];
    uint8_t xz = 128;
    int8_t yz = 0, wz[6] = { 0 };
    for (int i = 0; i < 6; i++) ws[i] = 0.004f + 0.001f * (float)i;
    qt_mb_init_raw(&mb, "xs", QR_DT_F32, 0, s0, &xs, 4);
    qt_mb_init_raw(&mb, "xz", QR_DT_U8, 0, s0, &xz, 1);
    qt_mb_init_raw(&mb, "ys", QR_DT_F32, 0, s0, &ys, 4);
    qt_mb_init_raw(&mb, "yz", QR_DT_S8, 0, s0, &yz, 1);
    qt_mb_init_raw(&mb, "ws", QR_DT_F32, 1, b6, ws, sizeof ws);
    qt_mb_init_raw(&mb, "wz", QR_DT_S8, 1, b6, wz, sizeof wz);
    qt_mb_init_raw(&mb, "lo", QR_DT_F32, 0, s0, &lo, 4);
    qt_mb_init_raw(&mb, "hi", QR_DT_F32, 0, s0, &hi, 4);
    qt_mb_init_raw(&mb, "k", QR_DT_F32, 0, s0, &two, 4);
    qt__rf_init(&mb, "W1", 4, w1, &rng, 0.3f, 0.0f);
    qt__rf_init(&mb, "B1", 1, b6, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "W2", 4, w2, &rng, 0.2f, 0.0f);
    qt__rf_init(&mb, "Wd", 4, wd, &rng, 0.4f, 0.0f);
    qt__rf_init(&mb, "Bd", 1, b6, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "Wp", 4, wp, &rng, 0.3f, 0.0f);
    qt__rf_init(&mb, "Bp", 1, b5, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "dv", 4, dv, &rng, 0.1f, 1.0f);
    qt__rf_init(&mb, "bs", 1, b5, &rng, 0.2f, 1.0f);
    qt__rf_init(&mb, "bb", 1, b5, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "bm", 1, b5, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "bv", 1, b5, &rng, 0.1f, 1.0f);
    int64_t pads1[4] = { 1, 1, 1, 1 }, st2[2] = { 2, 2 }, k2[2] = { 2, 2 };
    qt_mb_node(&mb, "QuantizeLinear", "qx", "x,xs,xz", "xq8");
    qt_mb_node(&mb, "DequantizeLinear", "dqx", "xq8,xs,xz", "xq");
    Onnx__NodeProto *n = qt_mb_node(&mb, "Conv", "conv1", "xq,W1,B1", "c1");
    qt_mb_attr_ints(&mb, n, "pads", 4, pads1);
    qt_mb_node(&mb, "Relu", "relu1", "c1", "r1");
    n = qt_mb_node(&mb, "QuantizeLinear", "qw2", "W2,ws,wz", "W2q8");
    qt__rf_int_attr(&mb, n, "axis", 0);
    n = qt_mb_node(&mb, "DequantizeLinear", "dqw2", "W2q8,ws,wz", "W2q");
    qt__rf_int_attr(&mb, n, "axis", 0);
    n = qt_mb_node(&mb, "Conv", "conv2", "r1,W2q", "c2");
    qt_mb_attr_ints(&mb, n, "pads", 4, pads1);
    qt_mb_node(&mb, "Add", "add2", "r1,c2", "a2");
    qt_mb_node(&mb, "Relu", "relu2", "a2", "r2");
    n = qt_mb_node(&mb, "Conv", "dw", "r2,Wd,Bd", "d");
    qt_mb_attr_ints(&mb, n, "pads", 4, pads1);
    qt_mb_attr_ints(&mb, n, "strides", 2, st2);
    qt__rf_int_attr(&mb, n, "group", 6);
    qt_mb_node(&mb, "Clip", "clip", "d,lo,hi", "cl");
    n = qt_mb_node(&mb, "MaxPool", "pool", "cl", "mp");
    qt_mb_attr_ints(&mb, n, "kernel_shape", 2, k2);
    qt_mb_attr_ints(&mb, n, "pads", 4, pads1);
    qt_mb_node(&mb, "Mul", "mul", "k,mp", "ml");
    qt_mb_node(&mb, "Relu", "relu3", "ml", "r3");
    qt_mb_node(&mb, "Conv", "pw", "r3,Wp,Bp", "p");
    qt_mb_node(&mb, "Div", "div", "p,dv", "q1");
    n = qt_mb_node(&mb, "BatchNormalization", "bn", "q1,bs,bb,bm,bv", "bo");
    Onnx__AttributeProto *a = qt_mb_attr(&mb, n, "epsilon", QR_ATTR_FLOAT);
    a->has_f = 1;
    a->f = 1e-3f;
    qt_mb_node(&mb, "Relu", "relu4", "bo", "rr");
    qt_mb_node(&mb, "QuantizeLinear", "qy", "rr,ys,yz", "yq8");
    qt_mb_node(&mb, "DequantizeLinear", "dqy", "yq8,ys,yz", "y");
    QrStatus st = qt_load_built(&mb, "fusion.onnx", g);
    qt_mb_free(&mb);
    return st;
}

typedef struct { int n; int64_t bytes; } QtRfTaps;

static QrStatus qt__rf_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtRfTaps *c = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    QR_UNUSED(value);
    c->n++;
    c->bytes += (int64_t)qr_tensor_nbytes(t);
    return QR_OK;
}

/* One run of the fusion model; *y receives the output, *n_exec the executed nodes. */
static QrStatus qt__rf_run(const QrGraph *g, const QrTensor *x, const QrRunOpts *o, QrTensor *y, int64_t *n_exec) {
    QrRunOpts oo = o ? *o : (QrRunOpts){0};
    *n_exec = 0;
    oo.n_exec = n_exec;
    return qr_run(g, x, &oo, y);
}

/* Fused runs give the bits of unfused ones (every value tapped, so every value is
 * materialized), count the same nodes, and keep tapped, fed and aliased values. */
static void test_run_fusion(void) {
    QrGraph *g = NULL;
    QT_OK(qt__rf_model(&g));
    QrTensor x = {0}, y0 = {0}, y1 = {0}, y2 = {0};
    int64_t dx[4] = { 1, 4, 9, 11 };
    QrStatus st = qr_tensor_set_shape(&x, QR_DT_F32, 4, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x);
    uint64_t rng = 9;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    if (st == QR_OK) ((float *)x.data)[3] = -0.0f;
    if (st == QR_OK) st = qr_run_infer(g, &x);
    QtRfTaps all = {0}, some = {0};
    QrRunOpts tapped = { .tap = qt__rf_tap, .tap_user = &all };
    int64_t n_fused = 0, n_plain = 0, n_some = 0;
    if (st == QR_OK) st = qt__rf_run(g, &x, NULL, &y0, &n_fused);
    if (st == QR_OK) st = qt__rf_run(g, &x, &tapped, &y1, &n_plain);
    bool same = st == QR_OK && memcmp(y0.data, y1.data, qr_tensor_nbytes(&y0)) == 0;
    /* a tap on two intermediates only: those are materialized (and fusion goes on around them) */
    bool *only = calloc((size_t)g->n_values, sizeof *only);
    int vc1 = qr_graph_find(g, "c1"), vq1 = qr_graph_find(g, "q1");
    if (only && vc1 >= 0 && vq1 >= 0) { only[vc1] = true; only[vq1] = true; }
    QrRunOpts part = { .tap = qt__rf_tap, .tap_user = &some, .tap_only = only };
    if (st == QR_OK) st = qt__rf_run(g, &x, &part, &y2, &n_some);
    bool same2 = st == QR_OK && memcmp(y0.data, y2.data, qr_tensor_nbytes(&y0)) == 0;
    /* a feed on a fusable intermediate (the residual sum) is what readers see */
    QrTensor a2 = {0}, yf = {0}, yfu = {0};
    int va2 = qr_graph_find(g, "a2");
    const QrTensor **feed = calloc((size_t)g->n_values, sizeof *feed);
    if (st == QR_OK) st = qr_tensor_set_shape(&a2, QR_DT_F32, 4, g->values[va2].t.dims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&a2);
    for (int64_t i = 0; st == QR_OK && i < a2.numel; i++) ((float *)a2.data)[i] = (float)(i % 5) - 1.0f;
    if (feed) feed[va2] = &a2;
    QrRunOpts fed = { .feed = feed }, fed_tapped = { .feed = feed, .tap = qt__rf_tap, .tap_user = &all };
    int64_t n1, n2;
    if (st == QR_OK) st = qt__rf_run(g, &x, &fed, &yf, &n1);
    if (st == QR_OK) st = qt__rf_run(g, &x, &fed_tapped, &yfu, &n2);
    bool same3 = st == QR_OK && memcmp(yf.data, yfu.data, qr_tensor_nbytes(&yf)) == 0 &&
                 memcmp(yf.data, y0.data, qr_tensor_nbytes(&yf)) != 0;
    /* a disabled output quantizer (DQ output aliased to the Q input): y = rr */
    int *alias = malloc((size_t)g->n_values * sizeof *alias);
    for (int v = 0; alias && v < g->n_values; v++) alias[v] = -1;
    QrTensor ya = {0}, yau = {0};
    if (alias) alias[qr_graph_find(g, "y")] = qr_graph_find(g, "rr");
    QrRunOpts al = { .alias = alias }, al_tapped = { .alias = alias, .tap = qt__rf_tap, .tap_user = &all };
    if (st == QR_OK) st = qt__rf_run(g, &x, &al, &ya, &n1);
    if (st == QR_OK) st = qt__rf_run(g, &x, &al_tapped, &yau, &n2);
    bool same4 = st == QR_OK && memcmp(ya.data, yau.data, qr_tensor_nbytes(&ya)) == 0 &&
                 memcmp(ya.data, y0.data, qr_tensor_nbytes(&ya)) != 0;
    /* one thread and three: the same bits */
    QrTensor y3 = {0};
    int64_t n3;
    if (st == QR_OK) st = qr_pool_init(3);
    if (st == QR_OK) st = qt__rf_run(g, &x, NULL, &y3, &n3);
    bool same5 = st == QR_OK && memcmp(y0.data, y3.data, qr_tensor_nbytes(&y0)) == 0;
    qr_pool_init(0);
    QrTensor *ts[] = { &x, &y0, &y1, &y2, &a2, &yf, &yfu, &ya, &yau, &y3 };
    for (int i = 0; i < QR_ARRAY_LEN(ts); i++) qr_tensor_free_data(ts[i]);
    free(only);
    free(feed);
    free(alias);
    int nn = g->n_nodes;
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECK(same);
    QT_CHECKF(n_fused == n_plain && n_fused == n_some && n_fused == nn && n3 == nn,
              "nodes executed: fused %lld, tapped %lld, partly tapped %lld", (long long)n_fused, (long long)n_plain,
              (long long)n_some);
    QT_CHECK(same2);
    QT_CHECKF(some.n == 2, "partial taps: %d values tapped", some.n);
    QT_CHECK(same3);
    QT_CHECK(same4);
    QT_CHECK(same5);
}

/* The fusion plan itself: which chains form, and that an override or a second reader
 * stops them. */
static void test_run_fusion_plan(void) {
    QrGraph *g = NULL;
    QT_OK(qt__rf_model(&g));
    QrTensor x = {0};
    int64_t dx[4] = { 1, 4, 9, 11 };
    QrStatus st = qr_tensor_set_shape(&x, QR_DT_F32, 4, dx);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    int nv = g->n_values;
    int *uses = calloc((size_t)nv + 1, sizeof *uses);
    QrRunPlan pl = {0}, pl2 = {0};
    QrRunOpts none = {0};
    for (int ni = 0; uses && ni < g->n_nodes; ni++)
        for (int k = 0; k < g->nodes[ni].n_in; k++) if (g->nodes[ni].in[k] >= 0) uses[g->nodes[ni].in[k]]++;
    for (int i = 0; uses && i < g->n_outputs; i++) uses[g->outputs[i]]++;
    if (st == QR_OK) st = qr__run_plan(g, &none, uses, NULL, &pl);
    /* node name -> chain head name */
    static const char *const expect[][2] = {
        { "dqx", "qx" }, { "relu1", "conv1" }, { "add2", "conv2" }, { "relu2", "conv2" }, { "clip", "dw" },
        { "mul", "pool" }, { "relu3", "pool" }, { "div", "pw" }, { "bn", "pw" }, { "relu4", "pw" }, { "qy", "pw" },
        { "dqy", "pw" }, { "dqw2", "qw2" },
    };
    char bad[256] = "";
    for (int i = 0; st == QR_OK && i < QR_ARRAY_LEN(expect); i++) {
        int ni = -1, hi = -1;
        for (int k = 0; k < g->n_nodes; k++) {
            if (!strcmp(g->nodes[k].name, expect[i][0])) ni = k;
            if (!strcmp(g->nodes[k].name, expect[i][1])) hi = k;
        }
        int c = ni >= 0 ? pl.chain_of[ni] : -1;
        if (c < 0 || pl.chains[c].nodes[0] != hi) snprintf(bad, sizeof bad, "%s not in %s's chain", expect[i][0], expect[i][1]);
    }
    /* relu1's output r1 has two readers (conv2 and the residual Add): conv1's chain ends
     * there; a substituted divisor and a tapped BN output cut pw's chain */
    bool *only = calloc((size_t)nv, sizeof *only);
    const QrTensor **subst = calloc((size_t)nv, sizeof *subst);
    int vdv = qr_graph_find(g, "dv"), vbo = qr_graph_find(g, "bo");
    if (only && subst) { only[vbo] = true; subst[vdv] = &g->values[vdv].t; }
    QrRunOpts o2 = { .tap = qt__rf_tap, .tap_only = only, .subst = subst };
    if (st == QR_OK) st = qr__run_plan(g, &o2, uses, NULL, &pl2);
    int pw = -1, div = -1, relu4 = -1;
    for (int k = 0; k < g->n_nodes; k++) {
        if (!strcmp(g->nodes[k].name, "pw")) pw = k;
        if (!strcmp(g->nodes[k].name, "div")) div = k;
        if (!strcmp(g->nodes[k].name, "relu4")) relu4 = k;
    }
    bool cut = st == QR_OK && pl2.chain_of[div] >= 0 && pl2.chains[pl2.chain_of[div]].nodes[0] == pw &&
               pl2.chain_of[relu4] != pl2.chain_of[pw];
    int ns_div = st == QR_OK && pl2.chain_of[div] >= 0 ? pl2.chains[pl2.chain_of[div]].ns : -1;
    qr__run_plan_free(&pl);
    qr__run_plan_free(&pl2);
    free(uses);
    free(only);
    free(subst);
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECKF(!bad[0], "%s", bad);
    QT_CHECKF(cut && ns_div == 2, "pw's chain with a tapped BN output: %d steps", ns_div);
}

/* A Linear layer's bias fused into its MatMul's GEMM (QR__HEAD_MATMUL): y = MatMul -> Add of a
 * per-column constant, as [N], as [1, 1, N] added first (bias + product), with an initializer B
 * (packed, 37 rows), a computed B (Transpose of a weight: ORT's adapted K blocks) and one column
 * (N = 1: the M=1 kernel, the bias added after), then a Relu step behind one of them. Fused and
 * unfused runs (every value tapped) give the same bits; the plan puts each Add in its MatMul's
 * chain as a MATMUL head, and a tap on a product cuts it. */
static QrStatus qt__rl_model(QrGraph **g) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    uint64_t rng = 77;
    int64_t dx[3] = { 1, 37, 40 }, w1[2] = { 40, 48 }, b1[1] = { 48 }, w2t[2] = { 40, 48 }, b2[3] = { 1, 1, 40 };
    int64_t w3[2] = { 40, 1 }, b3[1] = { 1 }, dy[3] = { 1, 37, 1 }, perm[2] = { 1, 0 };
    qt_mb_input(&mb, "x", QR_DT_F32, 3, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 3, dy);
    qt__rf_init(&mb, "W1", 2, w1, &rng, 0.2f, 0.0f);
    qt__rf_init(&mb, "B1", 1, b1, &rng, 0.5f, 0.0f);
    qt__rf_init(&mb, "W2t", 2, w2t, &rng, 0.2f, 0.0f);
    qt__rf_init(&mb, "B2", 3, b2, &rng, 0.5f, 0.0f);
    qt__rf_init(&mb, "W3", 2, w3, &rng, 0.2f, 0.0f);
    qt__rf_init(&mb, "B3", 1, b3, &rng, 0.5f, 0.0f);
    qt_mb_node(&mb, "MatMul", "mm1", "x,W1", "h1");
    qt_mb_node(&mb, "Add", "add1", "h1,B1", "a1");
    qt_mb_node(&mb, "Relu", "relu1", "a1", "r1");
    Onnx__NodeProto *n = qt_mb_node(&mb, "Transpose", "tw2", "W2t", "W2");
    qt_mb_attr_ints(&mb, n, "perm", 2, perm);
    qt_mb_node(&mb, "MatMul", "mm2", "r1,W2", "h2");
    qt_mb_node(&mb, "Add", "add2", "B2,h2", "a2");
    qt_mb_node(&mb, "MatMul", "mm3", "a2,W3", "h3");
    qt_mb_node(&mb, "Add", "add3", "h3,B3", "y");
    QrStatus st = qt_load_built(&mb, "lastb.onnx", g);
    qt_mb_free(&mb);
    return st;
}

static void test_run_fusion_lastb(void) {
    QrGraph *g = NULL;
    QT_OK(qt__rl_model(&g));
    QrTensor x = {0}, y0 = {0}, y1 = {0};
    int64_t dx[3] = { 1, 37, 40 };
    QrStatus st = qr_tensor_set_shape(&x, QR_DT_F32, 3, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x);
    uint64_t rng = 5;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    QtRfTaps all = {0};
    QrRunOpts tapped = { .tap = qt__rf_tap, .tap_user = &all };
    int64_t n_fused = 0, n_plain = 0;
    if (st == QR_OK) st = qt__rf_run(g, &x, NULL, &y0, &n_fused);
    if (st == QR_OK) st = qt__rf_run(g, &x, &tapped, &y1, &n_plain);
    const bool same = st == QR_OK && memcmp(y0.data, y1.data, qr_tensor_nbytes(&y0)) == 0;
    /* the plan: each Add in its MatMul's MATMUL chain (relu1 too); a tap on h2 cuts mm2's */
    int nv = g->n_values;
    int *uses = calloc((size_t)nv + 1, sizeof *uses);
    bool *only = calloc((size_t)nv, sizeof *only);
    for (int ni = 0; uses && ni < g->n_nodes; ni++)
        for (int k = 0; k < g->nodes[ni].n_in; k++) if (g->nodes[ni].in[k] >= 0) uses[g->nodes[ni].in[k]]++;
    for (int i = 0; uses && i < g->n_outputs; i++) uses[g->outputs[i]]++;
    QrRunPlan pl = {0}, pl2 = {0};
    QrRunOpts none = {0};
    if (st == QR_OK && (!uses || !only)) st = qr_errf(QR_ERR_NOMEM, "oom");
    if (st == QR_OK) st = qr__run_plan(g, &none, uses, NULL, &pl);
    if (st == QR_OK) only[qr_graph_find(g, "h2")] = true;
    QrRunOpts cut = { .tap = qt__rf_tap, .tap_user = &all, .tap_only = only };
    if (st == QR_OK) st = qr__run_plan(g, &cut, uses, NULL, &pl2);
    static const char *const expect[][2] = { { "add1", "mm1" }, { "relu1", "mm1" }, { "add2", "mm2" }, { "add3", "mm3" } };
    char bad[256] = "";
    for (int i = 0; st == QR_OK && i < QR_ARRAY_LEN(expect); i++) {
        int ni = -1, hi = -1;
        for (int k = 0; k < g->n_nodes; k++) {
            if (!strcmp(g->nodes[k].name, expect[i][0])) ni = k;
            if (!strcmp(g->nodes[k].name, expect[i][1])) hi = k;
        }
        const int c = ni >= 0 ? pl.chain_of[ni] : -1;
        if (c < 0 || pl.chains[c].nodes[0] != hi || pl.chains[c].kind != QR__HEAD_MATMUL)
            snprintf(bad, sizeof bad, "%s not in %s's MatMul chain", expect[i][0], expect[i][1]);
    }
    int add2 = -1;
    for (int k = 0; k < g->n_nodes; k++) if (!strcmp(g->nodes[k].name, "add2")) add2 = k;
    const bool was_cut = st == QR_OK && add2 >= 0 && pl2.chain_of[add2] < 0;
    qr__run_plan_free(&pl);
    qr__run_plan_free(&pl2);
    free(uses);
    free(only);
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&y0);
    qr_tensor_free_data(&y1);
    const int nn = g->n_nodes;
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECK(same);
    QT_CHECKF(n_fused == nn && n_plain == nn, "nodes executed: fused %lld, tapped %lld of %d", (long long)n_fused,
              (long long)n_plain, nn);
    QT_CHECKF(!bad[0], "%s", bad);
    QT_CHECK(was_cut);
}

/* ---- the exact GELU fused into its MatMul's chain -----------------------------------------------
 * MatMul + bias -> Div(1.4142135) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5) -> MatMul, as PyTorch exports
 * a Linear layer and its GELU: the five GELU nodes join the first MatMul's chain (qr__run_gelu), and
 * the fused run has the bits of the nodes run one by one (a tap on every value), at 1 and 2 threads
 * (25,216 values: two tasks). A Div reading x as its divisor is no GELU and does not fuse. */
static QrStatus qt__rg_model(QrGraph **g, bool swapped_div) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    uint64_t rng = 88;
    int64_t dx[3] = { 1, 197, 64 }, w1[2] = { 64, 128 }, b1[1] = { 128 }, w2[2] = { 128, 32 }, dy[3] = { 1, 197, 32 };
    int64_t s0[1] = { 1 };
    float c0 = 1.4142135f, c1 = 1.0f, c2 = 0.5f;
    qt_mb_input(&mb, "x", QR_DT_F32, 3, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 3, dy);
    qt__rf_init(&mb, "W1", 2, w1, &rng, 0.3f, 0.0f);
    qt__rf_init(&mb, "B1", 1, b1, &rng, 0.5f, 0.0f);
    qt__rf_init(&mb, "W2", 2, w2, &rng, 0.2f, 0.0f);
    qt_mb_init_raw(&mb, "c0", QR_DT_F32, 0, s0, &c0, 4);
    qt_mb_init_raw(&mb, "c1", QR_DT_F32, 0, s0, &c1, 4);
    qt_mb_init_raw(&mb, "c2", QR_DT_F32, 0, s0, &c2, 4);
    qt_mb_node(&mb, "MatMul", "mm1", "x,W1", "h");
    qt_mb_node(&mb, "Add", "bias1", "B1,h", "hb");
    qt_mb_node(&mb, "Div", "div", swapped_div ? "c0,hb" : "hb,c0", "d");
    qt_mb_node(&mb, "Erf", "erf", "d", "e");
    qt_mb_node(&mb, "Add", "add", "e,c1", "a");
    qt_mb_node(&mb, "Mul", "mul", "hb,a", "m");
    qt_mb_node(&mb, "Mul", "half", "m,c2", "gl");
    qt_mb_node(&mb, "MatMul", "mm2", "gl,W2", "y");
    QrStatus st = qt_load_built(&mb, "gelu_chain.onnx", g);
    qt_mb_free(&mb);
    return st;
}

/* Runs the GELU model fused and tapped at 1 and 2 threads; *fused: the GELU nodes are in mm1's
 * chain with gelu_at set; *same: every run has the tapped one-thread run's bits. */
static QrStatus qt__rg_check(bool swapped_div, bool *fused, bool *same, int64_t *n_exec, int *n_nodes) {
    QrGraph *g = NULL;
    QR_TRY(qt__rg_model(&g, swapped_div));
    QrTensor x = {0}, ref = {0}, y = {0};
    int64_t dx[3] = { 1, 197, 64 };
    QrStatus st = qr_tensor_set_shape(&x, QR_DT_F32, 3, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x);
    uint64_t rng = 3;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    int *uses = calloc((size_t)g->n_values + 1, sizeof *uses);
    for (int ni = 0; uses && ni < g->n_nodes; ni++)
        for (int k = 0; k < g->nodes[ni].n_in; k++) if (g->nodes[ni].in[k] >= 0) uses[g->nodes[ni].in[k]]++;
    for (int i = 0; uses && i < g->n_outputs; i++) uses[g->outputs[i]]++;
    QrRunPlan pl = {0};
    QrRunOpts none = {0};
    if (st == QR_OK && !uses) st = qr_errf(QR_ERR_NOMEM, "oom");
    if (st == QR_OK) st = qr__run_plan(g, &none, uses, NULL, &pl);
    *fused = st == QR_OK;
    for (int k = 0; st == QR_OK && k < g->n_nodes; k++) {
        const char *nm = g->nodes[k].name;
        const int c = pl.chain_of[k];
        if (strcmp(nm, "mm2") && (c < 0 || strcmp(g->nodes[pl.chains[c].nodes[0]].name, "mm1") || pl.chains[c].gelu_at < 0))
            *fused = false;
    }
    qr__run_plan_free(&pl);
    free(uses);
    QtRfTaps all = {0};
    QrRunOpts tapped = { .tap = qt__rf_tap, .tap_user = &all };
    const int saved = qr_pool_threads();
    int64_t n_ref = 0;
    qr_pool_init(1);
    if (st == QR_OK) st = qt__rf_run(g, &x, &tapped, &ref, &n_ref);
    *same = st == QR_OK;
    for (int threads = 1; st == QR_OK && threads <= 2; threads++) {
        qr_pool_init(threads);
        st = qt__rf_run(g, &x, NULL, &y, n_exec);
        *same = *same && st == QR_OK && !memcmp(y.data, ref.data, qr_tensor_nbytes(&ref)) && *n_exec == n_ref;
        qr_tensor_free_data(&y);
    }
    qr_pool_init(saved);
    *n_nodes = g->n_nodes;
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&ref);
    qr_graph_free(g);
    free(g);
    return st;
}

static void test_run_fusion_gelu(void) {
    bool fused = false, same = false, fused_sw = true, same_sw = false;
    int64_t n_exec = 0, n_exec_sw = 0;
    int nn = 0, nn_sw = 0;
    QT_OK(qt__rg_check(false, &fused, &same, &n_exec, &nn));
    QT_OK(qt__rg_check(true, &fused_sw, &same_sw, &n_exec_sw, &nn_sw));
    QT_CHECKF(fused, "the GELU nodes are not in the first MatMul's chain");
    QT_CHECKF(same, "the fused GELU differs from the nodes run one by one");
    QT_CHECKF(n_exec == nn, "nodes executed: %lld of %d", (long long)n_exec, nn);
    QT_CHECKF(!fused_sw, "Div(c, x) was fused as a GELU");
    QT_CHECK(same_sw);
}

/* ---- a Reshape (or a Transpose that moves no byte) takes its input's buffer -------------------
 * x -> Mul(2) -> t -> Reshape -> r -> Relu -> y: the Reshape is t's last reader and takes t's buffer
 * (the tap on r sees t's data pointer: no copy). Not when t is read again after it (second model:
 * z = t + y reshaped back). A Transpose of [64, 1, 48] by (1, 0, 2) moves no byte and takes it too;
 * one by (2, 1, 0) does not. Outputs equal what the test computes in every case. */
typedef struct QtStealTaps { const void *t, *r; } QtStealTaps;

static QrStatus qt__st_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtStealTaps *c = user;
    QR_UNUSED(node);
    if (!strcmp(g->values[value].name, "t")) c->t = t->data;
    if (!strcmp(g->values[value].name, "r")) c->r = t->data;
    return QR_OK;
}

/* mode 0: Reshape, 1: Reshape and a later reader of t, 2: Transpose (1, 0, 2), 3: Transpose (2, 1, 0). */
static QrGraph *qt__st_model(int mode) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    static const int64_t dx[3] = { 64, 1, 48 }, dr[3][3] = { { 8, 8, 48 }, { 1, 64, 48 }, { 48, 1, 64 } };
    static const int64_t p1[3] = { 1, 0, 2 }, p2[3] = { 2, 1, 0 }, d3[1] = { 3 }, s0[1] = { 1 };
    const int64_t *dy = dr[mode < 2 ? 0 : mode - 1];
    float two = 2.0f;
    qt_mb_input(&mb, "x", QR_DT_F32, 3, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 3, dy);
    qt_mb_init_raw(&mb, "two", QR_DT_F32, 0, s0, &two, 4);
    qt_mb_node(&mb, "Mul", "mul", "x,two", "t");
    if (mode < 2) {
        qt_mb_init_raw(&mb, "shape", QR_DT_S64, 1, d3, dy, 3 * sizeof(int64_t));
        qt_mb_node(&mb, "Reshape", "reshape", "t,shape", "r");
    } else {
        qt_mb_attr_ints(&mb, qt_mb_node(&mb, "Transpose", "tr", "t", "r"), "perm", 3, mode == 2 ? p1 : p2);
    }
    qt_mb_node(&mb, "Relu", "relu", "r", "y");
    if (mode == 1) {
        qt_mb_output(&mb, "z", QR_DT_F32, 3, dx);
        qt_mb_init_raw(&mb, "shape2", QR_DT_S64, 1, d3, dx, sizeof dx);
        qt_mb_node(&mb, "Reshape", "back", "y,shape2", "yb");
        qt_mb_node(&mb, "Add", "add", "t,yb", "z");
    }
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "steal.onnx", &g);
    qt_mb_free(&mb);
    return st == QR_OK ? g : NULL;
}

static QrStatus qt__st_run(int mode, bool *took, bool *right) {
    QrGraph *g = qt__st_model(mode);
    if (!g) return qr_errf(QR_ERR_INVALID, "steal model %d", mode);
    QrTensor x = {0}, y[2];
    memset(y, 0, sizeof y);
    const int64_t dx[3] = { 64, 1, 48 };
    QrStatus st = qr_tensor_set_shape(&x, QR_DT_F32, 3, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x);
    uint64_t rng = 4;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    bool *only = calloc((size_t)g->n_values, sizeof *only);
    if (st == QR_OK && !only) st = qr_errf(QR_ERR_NOMEM, "oom");
    QtStealTaps taps = {0};
    if (st == QR_OK) {
        only[qr_graph_find(g, "t")] = only[qr_graph_find(g, "r")] = true;
        QrRunOpts o = { .tap = qt__st_tap, .tap_user = &taps, .tap_only = only };
        st = qr_run(g, &x, &o, y);
    }
    *took = st == QR_OK && taps.t && taps.t == taps.r;
    *right = st == QR_OK;
    const float *px = x.data;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) {
        const int64_t at = mode == 3 ? (i % 48) * 64 + i / 48 : i;   /* (2, 1, 0): y[k][0][m] = f(x[m][0][k]) */
        const float m = px[i] * 2.0f, r = m > 0 ? m : 0.0f;
        *right = *right && ((const float *)y[0].data)[at] == r;
        if (mode == 1) *right = *right && ((const float *)y[1].data)[i] == m + r;
    }
    free(only);
    for (int k = 0; k < 2; k++) qr_tensor_free_data(&y[k]);
    qr_tensor_free_data(&x);
    qr_graph_free(g);
    free(g);
    return st;
}

static void test_run_reshape_steal(void) {
    static const bool want[4] = { true, false, true, false };
    for (int mode = 0; mode < 4; mode++) {
        bool took = !want[mode], right = false;
        QT_OK(qt__st_run(mode, &took, &right));
        QT_CHECKF(took == want[mode], "case %d: the %s %s its input's buffer", mode, mode < 2 ? "Reshape" : "Transpose",
                  took ? "took" : "did not take");
        QT_CHECKF(right, "case %d: wrong output", mode);
    }
}

/* ---- batched MatMul heads side by side ----------------------------------------------------------
 * A MatMul of two computed tensors with batch dims (attention's Q.K^T: [2, 3, 97, 40] x [3, 40, 90],
 * B broadcast over the first dim) runs its per-matrix GEMMs as pool tasks (ops/nn.c
 * qr__nn_batch_task). Each output matrix must have the bits of qr_kern.f32_gemm_fused called on
 * that matrix alone with MLAS's adapted K blocks (QrF32Fused.conv_n = N), at 1 and 2 threads. */
static void test_run_matmul_batches(void) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    const int64_t da[4] = { 2, 3, 97, 40 }, db[3] = { 3, 40, 90 }, dy[4] = { 2, 3, 97, 90 };
    qt_mb_input(&mb, "a", QR_DT_F32, 4, da);
    qt_mb_input(&mb, "b", QR_DT_F32, 3, db);
    qt_mb_output(&mb, "y", QR_DT_F32, 4, dy);
    qt_mb_node(&mb, "MatMul", "mm", "a,b", "y");
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "batches.onnx", &g);
    qt_mb_free(&mb);
    QT_OK(st);
    QrTensor in[2] = { {0}, {0} }, y = {0};
    st = qr_tensor_set_shape(&in[0], QR_DT_F32, 4, da);
    if (st == QR_OK) st = qr_tensor_set_shape(&in[1], QR_DT_F32, 3, db);
    for (int k = 0; st == QR_OK && k < 2; k++) st = qr_tensor_alloc_data(&in[k]);
    uint64_t rng = 21;
    for (int k = 0; st == QR_OK && k < 2; k++)
        for (int64_t i = 0; i < in[k].numel; i++) ((float *)in[k].data)[i] = (float)qr_rng_normal(&rng);
    const int64_t M = 97, N = 90, K = 40, nout = 2 * 3 * M * N;
    float *want = malloc((size_t)nout * sizeof(float));
    if (st == QR_OK && !want) st = qr_errf(QR_ERR_NOMEM, "oom");
    const QrF32Fused adapted = { .ep = { NULL, -INFINITY, INFINITY }, .conv_n = N };
    for (int64_t i = 0; st == QR_OK && i < 6; i++)   /* batch (i / 3, i % 3) reads A's matrix i and B's i % 3 */
        qr_kern.f32_gemm_fused(M, N, K, (const float *)in[0].data + i * M * K, K, (const float *)in[1].data + (i % 3) * K * N,
                               N, want + i * M * N, N, false, &adapted);
    const int saved = qr_pool_threads();
    bool same = true;
    for (int threads = 1; st == QR_OK && threads <= 2; threads++) {
        qr_pool_init(threads);
        st = qr_run(g, in, NULL, &y);
        same = same && st == QR_OK && !memcmp(y.data, want, (size_t)nout * sizeof(float));
        qr_tensor_free_data(&y);
    }
    qr_pool_init(saved);
    free(want);
    for (int k = 0; k < 2; k++) qr_tensor_free_data(&in[k]);
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECKF(same, "a batched MatMul differs from its matrices' GEMMs run one by one");
}

/* ---- row-parallel operators and outputs that are not zeroed --------------------------------
 * Erf, Mul / Div / Sub of two same-shape tensors, Transpose, Softmax, Reshape, LayerNormalization
 * and Slice split their rows over the thread pool once a tensor is large enough (ops/elementwise.c
 * qr__ew_rows_run, ops/shape.c qr__sh_copy_strided), and their outputs are no longer zeroed before
 * they run (QR_OPF_WRITES_ALL). Every value (each a graph output, so none is fused) must have the
 * bits of the kernels run once over the whole tensor in the test, at 1 and 2 threads, with the
 * executor's unzeroed buffers filled with NaN bytes first (qr_run_test_poison). */
enum { QT_RP_B = 8, QT_RP_T = 197, QT_RP_C = 96, QT_RP_S = 64 };

static QrStatus qt__rp_model(QrGraph **g) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    uint64_t rng = 31;
    int64_t dx[3] = { QT_RP_B, QT_RP_T, QT_RP_C }, dt[3] = { QT_RP_B, QT_RP_C, QT_RP_T }, dc[1] = { QT_RP_C };
    int64_t dsl[3] = { QT_RP_B, QT_RP_T, QT_RP_S }, perm[3] = { 0, 2, 1 }, one[1] = { 1 };
    int64_t shape[3] = { QT_RP_B, QT_RP_T, QT_RP_C }, d3[1] = { 3 }, st[1] = { 0 }, en[1] = { QT_RP_S }, ax[1] = { 2 };
    qt_mb_input(&mb, "x", QR_DT_F32, 3, dx);
    static const char *const outs[] = { "e", "m", "d", "s", "t", "sm", "r", "ln", "sl" };
    for (int i = 0; i < QR_ARRAY_LEN(outs); i++)
        qt_mb_output(&mb, outs[i], QR_DT_F32, 3, i == 4 || i == 5 ? dt : i == 8 ? dsl : dx);
    qt__rf_init(&mb, "g", 1, dc, &rng, 0.5f, 1.0f);
    qt__rf_init(&mb, "b", 1, dc, &rng, 0.5f, 0.0f);
    qt_mb_init_raw(&mb, "shape", QR_DT_S64, 1, d3, shape, sizeof shape);
    qt_mb_init_raw(&mb, "st", QR_DT_S64, 1, one, st, sizeof st);
    qt_mb_init_raw(&mb, "en", QR_DT_S64, 1, one, en, sizeof en);
    qt_mb_init_raw(&mb, "ax", QR_DT_S64, 1, one, ax, sizeof ax);
    qt_mb_node(&mb, "Erf", "erf", "x", "e");
    qt_mb_node(&mb, "Mul", "mul", "x,e", "m");
    qt_mb_node(&mb, "Div", "div", "m,x", "d");
    qt_mb_node(&mb, "Sub", "sub", "d,x", "s");
    qt_mb_attr_ints(&mb, qt_mb_node(&mb, "Transpose", "tr", "s", "t"), "perm", 3, perm);
    qt_mb_node(&mb, "Softmax", "softmax", "t", "sm");
    qt_mb_node(&mb, "Reshape", "reshape", "sm,shape", "r");
    qt_mb_node(&mb, "LayerNormalization", "ln", "r,g,b", "ln");
    qt_mb_node(&mb, "Slice", "slice", "ln,st,en,ax", "sl");
    QrStatus status = qt_load_built(&mb, "rows_par.onnx", g);
    qt_mb_free(&mb);
    return status;
}

/* The nine values computed in the test: each kernel once over the whole tensor, element loops
 * for the rest. want[k] holds as many floats as output k. */
static void qt__rp_expect(const QrGraph *g, const float *x, float **want) {
    const int64_t n = (int64_t)QT_RP_B * QT_RP_T * QT_RP_C;
    const QrTensor *gm = &g->values[qr_graph_find(g, "g")].t, *bt = &g->values[qr_graph_find(g, "b")].t;
    qr_kern.f32_map(QR_F32_MAP_ERF, x, want[0], n);
    for (int64_t i = 0; i < n; i++) want[1][i] = x[i] * want[0][i];
    for (int64_t i = 0; i < n; i++) want[2][i] = want[1][i] / x[i];
    for (int64_t i = 0; i < n; i++) want[3][i] = want[2][i] - x[i];
    for (int b = 0; b < QT_RP_B; b++)
        for (int c = 0; c < QT_RP_C; c++)
            for (int t = 0; t < QT_RP_T; t++)
                want[4][((int64_t)b * QT_RP_C + c) * QT_RP_T + t] = want[3][((int64_t)b * QT_RP_T + t) * QT_RP_C + c];
    qr_kern.f32_softmax(want[4], want[5], (int64_t)QT_RP_B * QT_RP_C, QT_RP_T, qr_kern.ort_wide, false);
    memcpy(want[6], want[5], (size_t)n * sizeof(float));
    for (int64_t r = 0; r < (int64_t)QT_RP_B * QT_RP_T; r++)
        qr_kern.f32_layernorm(want[6] + r * QT_RP_C, gm->data, bt->data, want[7] + r * QT_RP_C, QT_RP_C, 1e-5f, NULL, NULL);
    for (int64_t r = 0; r < (int64_t)QT_RP_B * QT_RP_T; r++)
        memcpy(want[8] + r * QT_RP_S, want[7] + r * QT_RP_C, QT_RP_S * sizeof(float));
}

static void test_run_rows_threaded(void) {
    QrGraph *g = NULL;
    QT_OK(qt__rp_model(&g));
    QrTensor x = {0}, y[9];
    memset(y, 0, sizeof y);
    int64_t dx[3] = { QT_RP_B, QT_RP_T, QT_RP_C };
    QrStatus st = qr_tensor_set_shape(&x, QR_DT_F32, 3, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x);
    uint64_t rng = 12;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    float *want[9] = {0};
    for (int k = 0; k < 9; k++) want[k] = malloc((size_t)x.numel * sizeof(float));
    for (int k = 0; k < 9; k++) if (!want[k] && st == QR_OK) st = qr_errf(QR_ERR_NOMEM, "oom");
    if (st == QR_OK) qt__rp_expect(g, x.data, want);
    const int saved = qr_pool_threads();
    char bad[256] = "";
    for (int threads = 1; st == QR_OK && threads <= 2 && !bad[0]; threads++) {
        qr_pool_init(threads);
        qr_run_test_poison = true;
        st = qr_run(g, &x, NULL, y);
        qr_run_test_poison = false;
        for (int k = 0; st == QR_OK && k < 9 && !bad[0]; k++) {
            if (memcmp(y[k].data, want[k], qr_tensor_nbytes(&y[k])))
                snprintf(bad, sizeof bad, "%s at %d threads differs from the kernels run once", g->values[g->outputs[k]].name,
                         threads);
        }
        for (int k = 0; k < 9; k++) qr_tensor_free_data(&y[k]);
    }
    qr_pool_init(saved);
    for (int k = 0; k < 9; k++) free(want[k]);
    qr_tensor_free_data(&x);
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECKF(!bad[0], "%s", bad);
}

/* The constant cache: weights through Q -> DQ computed once, reused (fewer nodes run, same
 * bits), never used when an override changes what they depend on. */
/* ---- weights dequantized when their reader runs, not all at the start ------------------------
 * In Kahn's order every DequantizeLinear of a weight initializer comes first; the executor defers
 * such input-independent nodes to their first reader (qr__run_deferrable), so at most the weights of
 * one node are alive at a time, not every weight's float copy at once. Tracked with a tap on a
 * quantized CNN (fixtures/qpairs/ort_qdq/analysis.onnx): a weight's float copy is alive from its tap
 * until every reader's output is tapped; the most alive at once must not exceed the most weight
 * inputs one node has (the tap on every value: nothing fused, every node's output tapped). */
typedef struct QtRunLive { const QrGraph *g; int *left; bool *wdq; int alive, max_alive, n_w; } QtRunLive;

static QrStatus qt_run_live_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtRunLive *c = user;
    QR_UNUSED(t);
    if (node < 0) return QR_OK;
    const QrNode *n = &g->nodes[node];
    if (value != n->out[0]) return QR_OK;   /* once per node */
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        if (v >= 0 && c->wdq[v] && c->left[v] > 0 && --c->left[v] == 0) c->alive--;
    }
    if (c->wdq[value]) {
        const QrUse *u;
        c->left[value] = qr_graph_readers(g, value, &u);
        c->alive++;
        c->n_w++;
        if (c->alive > c->max_alive) c->max_alive = c->alive;
    }
    return QR_OK;
}

static void test_run_deferred_weights(void) {
    QrGraph *g = NULL;
    QrTensor x = {0}, y = {0};
    QT_OK(qr_run_load("fixtures/qpairs/ort_qdq/analysis.onnx", &g));
    QrStatus st = qr_npy_read("fixtures/qpairs/ort_qdq/input.npy", &x);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    QtRunLive c = { g, calloc((size_t)g->n_values + 1, sizeof(int)), calloc((size_t)g->n_values + 1, 1), 0, 0, 0 };
    int most = 0, n_wdq = 0;   /* the most weight-DequantizeLinear inputs one node reads */
    if (st == QR_OK && (!c.left || !c.wdq)) st = qr_errf(QR_ERR_NOMEM, "oom");
    for (int ni = 0; st == QR_OK && ni < g->n_nodes; ni++) {
        const QrNode *n = &g->nodes[ni];
        if (!strcmp(n->op_type, "DequantizeLinear") && n->in[0] >= 0 && g->values[n->in[0]].is_init && n->out[0] >= 0) {
            c.wdq[n->out[0]] = true;
            n_wdq++;
        }
    }
    for (int ni = 0; st == QR_OK && ni < g->n_nodes; ni++) {
        const QrNode *n = &g->nodes[ni];
        int w = 0;
        for (int k = 0; k < n->n_in; k++) w += n->in[k] >= 0 && c.wdq[n->in[k]];
        most = QR_MAX(most, w);
    }
    QrRunOpts o = { .tap = qt_run_live_tap, .tap_user = &c };
    if (st == QR_OK) st = qr_run(g, &x, &o, &y);
    free(c.left);
    free(c.wdq);
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&y);
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECKF(n_wdq > 4 && c.n_w == n_wdq && c.max_alive <= most, "%d weight DequantizeLinear nodes (%d tapped): %d float "
              "weights alive at once (a node reads at most %d)", n_wdq, c.n_w, c.max_alive, most);
}

static void test_run_cache(void) {
    QrGraph *g = NULL;
    QT_OK(qt__rf_model(&g));
    QrTensor x = {0}, y0 = {0}, y1 = {0}, y2 = {0}, ys = {0}, ysu = {0}, y3 = {0}, w2 = {0};
    int64_t dx[4] = { 1, 4, 9, 11 };
    QrStatus st = qr_tensor_set_shape(&x, QR_DT_F32, 4, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x);
    uint64_t rng = 10;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    QrRunCache *cache = qr_run_cache_new(g);
    QrRunOpts oc = { .cache = cache };
    int64_t n0 = 0, n1 = 0, n2 = 0, ns = 0, nsu = 0, n3 = 0;
    if (st == QR_OK && !cache) st = qr_errf(QR_ERR_NOMEM, "cache");
    if (st == QR_OK) st = qt__rf_run(g, &x, NULL, &y0, &n0);
    if (st == QR_OK) st = qt__rf_run(g, &x, &oc, &y1, &n1);      /* fills the cache */
    size_t bytes = qr_run_cache_bytes(cache);
    if (st == QR_OK) st = qt__rf_run(g, &x, &oc, &y2, &n2);      /* uses it */
    /* another W2: the cached W2q must not be used */
    int vw2 = qr_graph_find(g, "W2");
    if (st == QR_OK) st = qr_tensor_set_shape(&w2, QR_DT_F32, 4, g->values[vw2].t.dims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&w2);
    for (int64_t i = 0; st == QR_OK && i < w2.numel; i++) ((float *)w2.data)[i] = 0.5f * ((float *)g->values[vw2].t.data)[i];
    const QrTensor **subst = calloc((size_t)g->n_values, sizeof *subst);
    if (subst) subst[vw2] = &w2;
    QrRunOpts os = { .cache = cache, .subst = subst }, osu = { .subst = subst };
    if (st == QR_OK) st = qt__rf_run(g, &x, &os, &ys, &ns);
    if (st == QR_OK) st = qt__rf_run(g, &x, &osu, &ysu, &nsu);
    if (st == QR_OK) st = qt__rf_run(g, &x, &oc, &y3, &n3);      /* and the cached value again */
    size_t nb = qr_tensor_nbytes(&y0);
    bool same = st == QR_OK && !memcmp(y0.data, y1.data, nb) && !memcmp(y0.data, y2.data, nb) && !memcmp(y0.data, y3.data, nb);
    bool subst_ok = st == QR_OK && !memcmp(ys.data, ysu.data, nb) && memcmp(ys.data, y0.data, nb);
    QrTensor *ts[] = { &x, &y0, &y1, &y2, &ys, &ysu, &y3, &w2 };
    for (int i = 0; i < QR_ARRAY_LEN(ts); i++) qr_tensor_free_data(ts[i]);
    qr_run_cache_free(cache);
    free(subst);
    int nn = g->n_nodes;
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECK(same);
    QT_CHECK(subst_ok);
    /* W2's Q and DQ (6*6*3*3 int8 + float) are what the cache holds; they are skipped */
    QT_CHECKF(bytes == 6 * 6 * 3 * 3 * 5, "cache holds %zu bytes", bytes);
    QT_CHECKF(n0 == nn && n1 == nn && n2 == nn - 2 && ns == nn && nsu == nn && n3 == nn - 2,
              "nodes run: %lld %lld %lld %lld %lld %lld of %d", (long long)n0, (long long)n1, (long long)n2, (long long)ns,
              (long long)nsu, (long long)n3, nn);
}

/* ---- packed convolution weights kept with the constants (QrOpCtx.prep) ----------------------
 * x [1, 32, 20, 20] -> Conv W1 [48, 32, 3, 3] + B1, pads 1 -> Relu -> Conv W2 [64, 24, 3, 3] group 2
 * (two groups of 32 channels), pads 1 -> Conv DQ(W3 int8 [32, 64, 3, 3]), pads 1 -> Conv DQ(Q(W4 float
 * [32, 32, 3, 3])), pads 1 -> Conv W5 [64, 32, 4, 4] stride 4 (5x5: the GEMM path, nothing packed)
 * -> Conv W6 [48, 64, 1, 1] + B6 = y [1, 48, 5, 5], a 1x1 the kernels' coc path takes flat only with
 * its weights packed (kern/gemm.c qr__k_coc_flat_takes). W1, W2 and W6 are float initializers and W4
 * a constant the cache holds (W4's fake-quantized copy): with a cache, their weights are packed once
 * (five kept blocks) and every later run reads them (conv6 on the coc path only then); W3's dequantized copy is never kept (qr_run_uncached), so
 * its convolution packs its own every run, as does a run whose W1 is substituted — and the kept W1
 * is still the one read afterwards. A cache not asked to keep prepared data (qr_run_cache_keep_prep:
 * the analyses' caches) keeps none. Every run's output has the bits of a run without a cache, and
 * qr_run_prep_bytes (the memory estimate's share for `run`) is what the cache comes to hold for them. */
static QrStatus qt__wp_model(QrGraph **g) {
    QtModel mb;
    qt_mb_init(&mb, 13);
    uint64_t rng = 77;
    int64_t dx[4] = { 1, 32, 20, 20 }, dy[4] = { 1, 48, 5, 5 }, w1[4] = { 48, 32, 3, 3 }, b1[1] = { 48 };
    int64_t w5[4] = { 64, 32, 4, 4 }, w6[4] = { 48, 64, 1, 1 }, b6[1] = { 48 }, st4[2] = { 4, 4 };
    int64_t w2[4] = { 64, 24, 3, 3 }, w3[4] = { 32, 64, 3, 3 }, w4[4] = { 32, 32, 3, 3 }, s0[1] = { 1 };
    int64_t pads[4] = { 1, 1, 1, 1 };
    qt_mb_input(&mb, "x", QR_DT_F32, 4, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 4, dy);
    qt__rf_init(&mb, "W1", 4, w1, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "B1", 1, b1, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "W2", 4, w2, &rng, 0.1f, 0.0f);
    int8_t *q3 = malloc(32 * 64 * 9);
    for (int i = 0; q3 && i < 32 * 64 * 9; i++) q3[i] = (int8_t)(qr_rng_next(&rng) % 255 - 127);
    float ws = 0.002f;
    int8_t wz = 0;
    if (q3) qt_mb_init_raw(&mb, "W3q", QR_DT_S8, 4, w3, q3, 32 * 64 * 9);
    free(q3);
    qt_mb_init_raw(&mb, "ws", QR_DT_F32, 0, s0, &ws, 4);
    qt_mb_init_raw(&mb, "wz", QR_DT_S8, 0, s0, &wz, 1);
    Onnx__NodeProto *n = qt_mb_node(&mb, "Conv", "conv1", "x,W1,B1", "c1");
    qt_mb_attr_ints(&mb, n, "pads", 4, pads);
    qt_mb_node(&mb, "Relu", "relu1", "c1", "r1");
    n = qt_mb_node(&mb, "Conv", "conv2", "r1,W2", "c2");
    qt_mb_attr_ints(&mb, n, "pads", 4, pads);
    qt__rf_int_attr(&mb, n, "group", 2);
    qt_mb_node(&mb, "DequantizeLinear", "dq3", "W3q,ws,wz", "W3");
    n = qt_mb_node(&mb, "Conv", "conv3", "c2,W3", "c3");
    qt_mb_attr_ints(&mb, n, "pads", 4, pads);
    qt__rf_init(&mb, "W4", 4, w4, &rng, 0.1f, 0.0f);
    qt_mb_node(&mb, "QuantizeLinear", "q4", "W4,ws,wz", "W4q");
    qt_mb_node(&mb, "DequantizeLinear", "dq4", "W4q,ws,wz", "W4d");
    n = qt_mb_node(&mb, "Conv", "conv4", "c3,W4d", "c4");
    qt_mb_attr_ints(&mb, n, "pads", 4, pads);
    qt__rf_init(&mb, "W5", 4, w5, &rng, 0.1f, 0.0f);
    n = qt_mb_node(&mb, "Conv", "conv5", "c4,W5", "c5");
    qt_mb_attr_ints(&mb, n, "strides", 2, st4);
    qt__rf_init(&mb, "W6", 4, w6, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "B6", 1, b6, &rng, 0.1f, 0.0f);
    qt_mb_node(&mb, "Conv", "conv6", "c5,W6,B6", "y");
    QrStatus st = qt_load_built(&mb, "conv_pack.onnx", g);
    qt_mb_free(&mb);
    return st;
}

static void test_run_conv_pack(void) {
    QrF32ConvB b1 = { NULL, 32, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 20, 20 }, b2 = b1;
    const QrF32ConvB b5 = { NULL, 32, 20, 20, 4, 4, 4, 4, 1, 1, 0, 0, 5, 5 }, b6 = { NULL, 64, 5, 5, 1, 1, 1, 1, 1, 1, 0, 0, 5, 5 };
    b2.C = 24;
    const size_t p6 = qr_kern.f32_conv_pack_bytes(48, &b6);
    const size_t p1 = qr_kern.f32_conv_pack_bytes(48, &b1), p2 = qr_kern.f32_conv_pack_bytes(32, &b2);
    const size_t p4 = qr_kern.f32_conv_pack_bytes(32, &b1), w4 = 32 * 32 * 9 * 5;   /* W4's int8 and float copies */
    if (!p1 || !p2 || !p4 || !p6) QT_SKIP("kernel level %s packs no convolution weights", qr_isa_name(qr_kern.isa));
    QT_CHECK(qr_kern.f32_conv_pack_bytes(64, &b5) == 0);
    QrGraph *g = NULL;
    QT_OK(qt__wp_model(&g));
    QrTensor x = {0}, y[8] = {{0}}, w1 = {0};
    const int64_t dx[4] = { 1, 32, 20, 20 };
    QrStatus st = qr_tensor_set_shape(&x, QR_DT_F32, 4, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x);
    uint64_t rng = 5;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    const int vw1 = qr_graph_find(g, "W1");
    if (st == QR_OK) st = qr_tensor_set_shape(&w1, QR_DT_F32, 4, g->values[vw1].t.dims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&w1);
    for (int64_t i = 0; st == QR_OK && i < w1.numel; i++) ((float *)w1.data)[i] = 0.5f * ((float *)g->values[vw1].t.data)[i];
    const QrTensor **subst = calloc((size_t)g->n_values, sizeof *subst);
    if (subst) subst[vw1] = &w1;
    QrRunCache *cache = qr_run_cache_new(g), *plain = qr_run_cache_new(g);   /* plain: an analysis's, keeps no packs */
    qr_run_cache_keep_prep(cache);
    if (st == QR_OK && (!cache || !plain || !subst)) st = qr_errf(QR_ERR_NOMEM, "oom");
    /* runs: 0 no cache, 1 fills it, 2 reads it, 3 W1 substituted (cache), 4 the same without, 5 cache again,
     * 6 and 7 the plain cache */
    const uint64_t est = st == QR_OK ? qr_run_prep_bytes(g) : 0;   /* the memory estimate's share, from shapes */
    const QrRunOpts opts[8] = { {0}, { .cache = cache }, { .cache = cache }, { .cache = cache, .subst = subst },
                                { .subst = subst }, { .cache = cache }, { .cache = plain }, { .cache = plain } };
    int64_t packs[8] = {0}, coc[8] = {0};
    size_t bytes[8] = {0};
    for (int r = 0; r < 8 && st == QR_OK; r++) {
        const int64_t p0 = qr__k_coc_wpacks, c0 = qr__k_coc_runs;
        st = qr_run(g, &x, &opts[r], &y[r]);
        packs[r] = qr__k_coc_wpacks - p0;
        coc[r] = qr__k_coc_runs - c0;
        bytes[r] = qr_run_cache_bytes(r < 6 ? cache : plain);
    }
    const size_t nb = st == QR_OK ? qr_tensor_nbytes(&y[0]) : 0;
    bool same = st == QR_OK;
    for (int r = 1; same && r < 8; r++)
        if (r != 3 && r != 4) same = !memcmp(y[0].data, y[r].data, nb);
    const bool subst_ok = st == QR_OK && !memcmp(y[3].data, y[4].data, nb) && memcmp(y[3].data, y[0].data, nb);
    for (int r = 0; r < 8; r++) qr_tensor_free_data(&y[r]);
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&w1);
    qr_run_cache_free(cache);
    qr_run_cache_free(plain);
    free(subst);
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECK(same);
    QT_CHECK(subst_ok);
    for (int r = 0; r < 8; r++) {   /* conv1, conv2's two groups, conv3 and conv4 take the coc path every run, */
        static const int64_t want[8] = { 5, 1, 1, 2, 5, 1, 5, 5 };   /* conv6 with the kept packs only */
        const int64_t want_coc = r == 0 || r == 4 || r >= 6 ? 5 : 6;
        QT_CHECKF(coc[r] == want_coc && packs[r] == want[r], "run %d: %lld coc runs, %lld packed their weights (want %lld, %lld)",
                  r, (long long)coc[r], (long long)packs[r], (long long)want_coc, (long long)want[r]);
    }
    const size_t kept = p1 + 2 * p2 + p4 + p6;
    QT_CHECKF(bytes[1] == kept + w4 && bytes[5] == bytes[1] && est == kept && bytes[7] == w4,
              "cache holds %zu then %zu bytes, want %zu (+ %zu of W4's copies; estimated %llu); the plain one %zu", bytes[1],
              bytes[5], kept, w4, (unsigned long long)est, bytes[7]);
}

/* ---- a weight's DequantizeLinear fused into its MatMul / Gemm ---------------------------------
 * The sim run of a QDQ model dequantizes each 8-bit weight as the GEMM packs B's panels
 * (qr__run_plan_dq): no float copy, the same bits. Models (W: K x N = 96 x 80 bytes, more than
 * QR_FOLD_MAX_ELEMS, so never cached; uint8 or int8, one scale or one per column of B):
 *   0  MatMul([1, M, K], DQ(W [K, N], axis 1)) + bias  (a lastb chain head)
 *   1  Gemm(x [M, K], DQ(W [N, K], axis 0), C), transB
 *   2  MatMul([2, M, K], DQ(W [2, K, N], axis 2))      (B batched: a B per batch)
 *   3  Gemm(x [M, K], DQ(W [K, N], axis 1))            (no transB, no C)
 *   4  the DQ's output read twice (two MatMuls, added): never fused
 * Each fused run (1 to 3 threads, M = 40 and M = 1: the batch-1 kernels; a batch-1 MatMul and Gemm
 * without transB read B as floats and are not fused) has the bits and node count of the run with a
 * tap on every value (nothing fused). Not fused but right: a tap on the DQ
 * output alone, an alias of it (a disabled quantizer: B is the float weight Wf) and a substitution
 * of it; a substitution of the integers themselves is fused, reading the substitute. */
static QrStatus qt__rdq_model(QrGraph **g, int kind, bool sgn, bool per_ch, int64_t M) {
    QtModel mb;
    qt_mb_init(&mb, 13);
    const int64_t K = 96, N = 80;
    const bool gemm = kind == 1 || kind == 3, tb = kind == 1, bat = kind == 2;
    int64_t dx[3] = { bat ? 2 : 1, M, K }, dy[3] = { bat ? 2 : 1, M, N }, dw[3] = { 2, K, N };
    int64_t *wd = bat ? dw : dw + 1, wr = bat ? 3 : 2, nd[1] = { N }, s0[1] = { 1 };
    if (tb) { dw[1] = N; dw[2] = K; }
    const int64_t nw = bat ? 2 * K * N : K * N;
    uint64_t rng = 77 + (uint64_t)kind;
    uint8_t *w = malloc((size_t)nw), zp[80];
    float sc[80];
    for (int64_t i = 0; i < nw; i++) w[i] = (uint8_t)qr_rng_next(&rng);
    for (int i = 0; i < 80; i++) {
        sc[i] = 0.002f + 0.0005f * (float)(qr_rng_next(&rng) % 40);
        zp[i] = sgn ? (uint8_t)(int8_t)((int)(qr_rng_next(&rng) % 9) - 4) : (uint8_t)(120 + qr_rng_next(&rng) % 16);
    }
    const QrDType qt = sgn ? QR_DT_S8 : QR_DT_U8;
    qt_mb_input(&mb, "x", QR_DT_F32, gemm ? 2 : 3, gemm ? dx + 1 : dx);
    qt_mb_output(&mb, "y", QR_DT_F32, gemm ? 2 : 3, gemm ? dy + 1 : dy);
    qt_mb_init_raw(&mb, "Wq", qt, (int)wr, wd, w, (size_t)nw);
    qt_mb_init_raw(&mb, "ws", QR_DT_F32, per_ch ? 1 : 0, per_ch ? nd : s0, sc, per_ch ? sizeof sc : 4);
    qt_mb_init_raw(&mb, "wz", qt, per_ch ? 1 : 0, per_ch ? nd : s0, zp, per_ch ? sizeof zp : 1);
    qt__rf_init(&mb, "Wf", (int)wr, wd, &rng, 0.05f, 0.0f);
    qt__rf_init(&mb, "bias", 1, nd, &rng, 0.5f, 0.0f);
    Onnx__NodeProto *n = qt_mb_node(&mb, "DequantizeLinear", "dqw", "Wq,ws,wz", "W");
    qt__rf_int_attr(&mb, n, "axis", tb ? 0 : wr - 1);
    if (kind == 0) {
        qt_mb_node(&mb, "MatMul", "mm", "x,W", "h");
        qt_mb_node(&mb, "Add", "add", "h,bias", "y");
    } else if (gemm) {
        n = qt_mb_node(&mb, "Gemm", "gemm", tb ? "x,W,bias" : "x,W", "y");
        if (tb) qt__rf_int_attr(&mb, n, "transB", 1);
    } else if (kind == 2) {
        qt_mb_node(&mb, "MatMul", "mm", "x,W", "y");
    } else {
        qt_mb_node(&mb, "MatMul", "mm", "x,W", "h");
        qt_mb_node(&mb, "MatMul", "mm2", "x,W", "h2");
        qt_mb_node(&mb, "Add", "add", "h,h2", "y");
    }
    free(w);
    QrStatus st = qt_load_built(&mb, "dq_fuse.onnx", g);
    qt_mb_free(&mb);
    return st;
}

/* Pairs qr__run_plan_dq fuses in a run of g with options o. */
static int qt__rdq_planned(const QrGraph *g, const QrRunOpts *o) {
    int *uses = calloc((size_t)g->n_values + 1, sizeof *uses);
    if (!uses) return -1;
    for (int ni = 0; ni < g->n_nodes; ni++)
        for (int k = 0; k < g->nodes[ni].n_in; k++)
            if (g->nodes[ni].in[k] >= 0) uses[qr__run_resolve(o, g->nodes[ni].in[k])]++;
    for (int i = 0; i < g->n_outputs; i++) uses[qr__run_resolve(o, g->outputs[i])]++;
    QrRunPlan pl = {0};
    QrStatus st = qr__run_plan(g, o, uses, NULL, &pl);
    if (st == QR_OK) st = qr__run_plan_dq(g, o, uses, NULL, NULL, &pl);
    const int n = st == QR_OK ? pl.n_dqf : -1;
    qr__run_plan_free(&pl);
    free(uses);
    return n;
}

/* y of a run with options o (tapped: every value tapped too) at `threads` threads; bits in *y. */
static QrStatus qt__rdq_run(const QrGraph *g, const QrTensor *x, const QrRunOpts *o, bool tapped, int threads,
                            QrTensor *y, int64_t *n_exec) {
    QtRfTaps all = {0};
    QrRunOpts oo = o ? *o : (QrRunOpts){0};
    if (tapped) {
        oo.tap = qt__rf_tap;
        oo.tap_user = &all;
        oo.tap_only = NULL;
    }
    qr_pool_init(threads);
    return qt__rf_run(g, x, &oo, y, n_exec);
}

static bool qt__rdq_same(const QrTensor *a, const QrTensor *b) {
    return a->data && b->data && qr_tensor_nbytes(a) == qr_tensor_nbytes(b) && !memcmp(a->data, b->data, qr_tensor_nbytes(a));
}

/* The batch-1 MatMul (kind 0) / Gemm without transB (kind 3) called directly with B as integers
 * (what the plan does not fuse: ops/nn.c dequantizes B first for their float kernels) has the bits
 * of the node run on the dequantized B. */
static QrStatus qt__rdq_direct(const QrGraph *g, int kind, const QrTensor *x, char *bad, size_t nbad) {
    int mi = -1, di = -1;
    for (int k = 0; k < g->n_nodes; k++) {
        if (!strcmp(g->nodes[k].name, kind == 3 ? "gemm" : "mm")) mi = k;
        if (!strcmp(g->nodes[k].name, "dqw")) di = k;
    }
    const QrTensor *wq = &g->values[qr_graph_find(g, "Wq")].t, *ws = &g->values[qr_graph_find(g, "ws")].t;
    const QrTensor *wz = &g->values[qr_graph_find(g, "wz")].t;
    QrTensor wf = {0}, ref = {0}, bshape = {0}, out = {0};
    const QrTensor *din[3] = { wq, ws, wz };
    QrStatus st = mi >= 0 && di >= 0 ? qr_run_node(g, di, din, &wf) : qr_errf(QR_ERR_INVALID, "nodes");
    const QrTensor *rin[2] = { x, &wf }, *qin[2] = { x, &bshape };
    if (st == QR_OK) st = qr_run_node(g, mi, rin, &ref);
    if (st == QR_OK) st = qr_tensor_set_shape(&bshape, QR_DT_F32, wq->rank, wq->dims);
    if (st == QR_OK) st = qr_tensor_set_shape(&out, QR_DT_F32, ref.rank, ref.dims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&out);
    int32_t z[80];
    for (int64_t k = 0; k < wz->numel && k < 80; k++) z[k] = (int32_t)qr_tensor_get_i64(wz, k);
    const QrF32QuantB qb = { wq->data, wq->dtype == QR_DT_S8, ws->data, ws->numel > 1, z, ws->numel > 1 };
    QrTensor *outp[1] = { &out };
    QrArena ar = {0};
    QrOpCtx c = { g, mi >= 0 ? &g->nodes[mi] : NULL, 2, 1, qin, outp, &ar, NULL, NULL, NULL };
    if (st == QR_OK) st = kind == 3 ? qr_nn_gemm_qb(&c, &qb) : qr_nn_matmul_bias(&c, NULL, false, &qb);
    if (st == QR_OK && !qt__rdq_same(&out, &ref)) snprintf(bad, nbad, "kind %d called with B as integers: output differs", kind);
    qr_arena_free(&ar);
    QrTensor *all[] = { &wf, &ref, &out };
    for (int i = 0; i < 3; i++) qr_tensor_free_data(all[i]);
    return st;
}

/* One model: fused vs tapped at 1..3 threads, and the runs that must not fuse; failures into bad. */
static QrStatus qt__rdq_check(int kind, bool sgn, bool per_ch, int64_t M, char *bad, size_t nbad) {
    QrGraph *g = NULL;
    QR_TRY(qt__rdq_model(&g, kind, sgn, per_ch, M));
    QrTensor x = {0}, ref = {0}, y = {0};
    const int gemm = kind == 1 || kind == 3;
    int64_t dx[3] = { kind == 2 ? 2 : 1, M, 96 };
    QrStatus st = qr_tensor_set_shape(&x, QR_DT_F32, gemm ? 2 : 3, gemm ? dx + 1 : dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x);
    uint64_t rng = 5;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    const int vw = qr_graph_find(g, "W"), vq = qr_graph_find(g, "Wq"), vf = qr_graph_find(g, "Wf");
    const char *what = kind == 4 ? "read twice" : "plain";
    QrRunOpts none = {0};
    /* a batch-1 MatMul or Gemm without transB reads B as floats (its kernels' order): not fused */
    const int fusable = kind == 4 || (M == 1 && (kind == 0 || kind == 3)) ? 0 : 1;
    const int planned = st == QR_OK ? qt__rdq_planned(g, &none) : -1;
    if (st == QR_OK && planned != fusable)
        snprintf(bad, nbad, "kind %d M %lld: %d pairs planned", kind, (long long)M, planned);
    int64_t n_ref = 0, n = 0;
    if (st == QR_OK && M == 1 && (kind == 0 || kind == 3)) st = qt__rdq_direct(g, kind, &x, bad, nbad);
    if (st == QR_OK) st = qt__rdq_run(g, &x, NULL, true, 1, &ref, &n_ref);
    for (int th = 1; st == QR_OK && th <= 3; th++) {
        st = qt__rdq_run(g, &x, NULL, false, th, &y, &n);
        if (st == QR_OK && (!qt__rdq_same(&y, &ref) || n != n_ref))
            snprintf(bad, nbad, "kind %d %s sgn %d per_ch %d M %lld, %d threads: output or node count (%lld, %lld) differs",
                     kind, what, sgn, per_ch, (long long)M, th, (long long)n, (long long)n_ref);
        qr_tensor_free_data(&y);
    }
    /* a tap on W alone, an alias of W (B = Wf), a substitution of W: not fused; of Wq: fused */
    bool *only = calloc((size_t)g->n_values, sizeof *only);
    int *alias = malloc((size_t)g->n_values * sizeof *alias);
    const QrTensor **sub = calloc((size_t)g->n_values, sizeof *sub), **subq = calloc((size_t)g->n_values, sizeof *subq);
    QrTensor wq2 = {0};
    if (st == QR_OK && (!only || !alias || !sub || !subq)) st = qr_errf(QR_ERR_NOMEM, "oom");
    if (st == QR_OK) st = qr_tensor_set_shape(&wq2, g->values[vq].t.dtype, g->values[vq].t.rank, g->values[vq].t.dims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&wq2);
    if (st == QR_OK) {
        for (int64_t i = 0; i < wq2.numel; i++) ((uint8_t *)wq2.data)[i] = ((const uint8_t *)g->values[vq].t.data)[i] ^ 0x15;
        for (int v = 0; v < g->n_values; v++) alias[v] = -1;
        only[vw] = true;
        alias[vw] = vf;
        sub[vw] = &g->values[vf].t;
        subq[vq] = &wq2;
    }
    QrTensor r2 = {0};
    QtRfTaps some = {0};
    const QrRunOpts ov[4] = { { .tap = qt__rf_tap, .tap_user = &some, .tap_only = only }, { .alias = alias },
                              { .subst = sub }, { .subst = subq } };
    static const char *const ovn[4] = { "tap on W", "alias of W", "substitute of W", "substitute of Wq" };
    for (int k = 0; st == QR_OK && k < 4; k++) {
        const int want = k == 3 ? fusable : 0, got = qt__rdq_planned(g, &ov[k]);
        st = qt__rdq_run(g, &x, &ov[k], true, 1, &r2, &n_ref);
        for (int th = 1; st == QR_OK && th <= 3; th += 2) {
            st = qt__rdq_run(g, &x, &ov[k], false, th, &y, &n);
            if (st == QR_OK && (got != want || !qt__rdq_same(&y, &r2) || (k > 0 && qt__rdq_same(&y, &ref))))
                snprintf(bad, nbad, "kind %d %s, %s, %d threads: %d pairs planned (want %d), output %s", kind, what, ovn[k],
                         th, got, want, qt__rdq_same(&y, &r2) ? "the unchanged model's" : "differs");
            qr_tensor_free_data(&y);
        }
        qr_tensor_free_data(&r2);
    }
    free(only);
    free(alias);
    free(sub);
    free(subq);
    qr_tensor_free_data(&wq2);
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&ref);
    qr_graph_free(g);
    free(g);
    return st;
}

static void test_run_fusion_dq(void) {
    const int saved = qr_pool_threads();
    char bad[512] = "";
    QrStatus st = QR_OK;
    for (int kind = 0; kind < 5 && st == QR_OK; kind++)
        for (int v = 0; v < 4 && st == QR_OK; v++)
            for (int mi = 0; mi < 2 && st == QR_OK; mi++) {
                if (mi == 1 && (kind == 2 || v % 2)) continue;   /* batch 1: enough with two variants */
                st = qt__rdq_check(kind, v & 1, v & 2, mi ? 1 : 40, bad, sizeof bad);
            }
    qr_pool_init(saved);
    QT_OK(st);
    QT_CHECKF(!bad[0], "%s", bad);
}

/* ==== leading rows (a class-token head) ============================================= */

/* An int8 weight [r, c] quantized per output channel (axis ax) into initializers <name>q/s/z and
 * its DequantizeLinear -> <name>. */
static void qt__rrow_qweight(QtModel *mb, const char *name, int64_t r, int64_t c, int ax, uint64_t *rng) {
    const int64_t d[2] = { r, c }, nc[1] = { d[ax] };
    int8_t *q = malloc((size_t)(r * c));
    float *s = malloc((size_t)d[ax] * sizeof *s);
    for (int64_t i = 0; i < r * c; i++) q[i] = (int8_t)(qr_rng_next(rng) % 255 - 127);
    for (int64_t k = 0; k < d[ax]; k++) s[k] = 0.002f + 0.0005f * (float)(k % 7);
    char qn[32], sn[32], zn[32], ins[100];
    snprintf(qn, sizeof qn, "%sq", name);
    snprintf(sn, sizeof sn, "%ss", name);
    snprintf(zn, sizeof zn, "%sz", name);
    snprintf(ins, sizeof ins, "%s,%s,%s", qn, sn, zn);
    int8_t *z = calloc((size_t)d[ax], 1);
    qt_mb_init_raw(mb, qn, QR_DT_S8, 2, d, q, (size_t)(r * c));
    qt_mb_init_raw(mb, sn, QR_DT_F32, 1, nc, s, (size_t)d[ax] * sizeof *s);
    qt_mb_init_raw(mb, zn, QR_DT_S8, 1, nc, z, (size_t)d[ax]);
    qt__rf_int_attr(mb, qt_mb_node(mb, "DequantizeLinear", name, ins, name), "axis", ax);
    free(q);
    free(s);
    free(z);
}

/* QuantizeLinear -> DequantizeLinear of x (uint8, per tensor) into y. */
static void qt__rrow_qdq(QtModel *mb, const char *x, const char *y) {
    char a[96], b[96], q[48];
    snprintf(q, sizeof q, "%s_q", y);
    snprintf(a, sizeof a, "%s,as,az", x);
    snprintf(b, sizeof b, "%s,as,az", q);
    qt_mb_node(mb, "QuantizeLinear", q, a, q);
    qt_mb_node(mb, "DequantizeLinear", y, b, y);
}

/* The last block of a ViT (tokens T = 24, width 64, MLP 128) and its class-token head, with QDQ
 * activations and int8 per-channel weights: x -> QDQ = x0; the attention's stand-in reads every
 * row of x0 (ReduceMean over the tokens, added back); its output goes [1,T,64] -> Transpose ->
 * [T,1,64] -> Reshape [T,64] -> QDQ -> Gemm (transB, int8 weight) -> Reshape -> Transpose -> + x0 = r1;
 * LayerNorm -> QDQ -> MatMul (int8 weight, fused) + bias -> exact GELU -> QDQ -> MatMul + bias ->
 * + r1 -> LayerNorm -> Gather token 0 -> Gemm head [1,10] = y. */
static QrStatus qt__rrow_model(QrGraph **g) {
    enum { T = 24, D = 64, F = 128 };
    QtModel mb;
    qt_mb_init(&mb, 17);
    uint64_t rng = 27;
    const int64_t dx[3] = { 1, T, D }, dy[2] = { 1, 10 }, s0[1] = { 0 }, dd[1] = { D }, df[1] = { F };
    const int64_t dh[2] = { 10, D }, dhb[1] = { 10 }, r2[1] = { 2 }, r3[1] = { 3 };
    qt_mb_input(&mb, "x", QR_DT_F32, 3, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 2, dy);
    const float as = 0.04f, c[3] = { 1.4142135f, 1.0f, 0.5f };
    const uint8_t az = 128;
    const int64_t idx = 0, shp2[2] = { T, D }, shp3[3] = { T, 1, D }, ax1 = 1;
    qt_mb_init_raw(&mb, "as", QR_DT_F32, 0, s0, &as, 4);
    qt_mb_init_raw(&mb, "az", QR_DT_U8, 0, s0, &az, 1);
    qt_mb_init_raw(&mb, "c0", QR_DT_F32, 0, s0, &c[0], 4);
    qt_mb_init_raw(&mb, "c1", QR_DT_F32, 0, s0, &c[1], 4);
    qt_mb_init_raw(&mb, "c2", QR_DT_F32, 0, s0, &c[2], 4);
    qt_mb_init_raw(&mb, "tok", QR_DT_S64, 0, s0, &idx, 8);
    qt_mb_init_raw(&mb, "shp2", QR_DT_S64, 1, r2, shp2, sizeof shp2);
    qt_mb_init_raw(&mb, "shp3", QR_DT_S64, 1, r3, shp3, sizeof shp3);
    qt__rf_init(&mb, "bo", 1, dd, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "b1", 1, df, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "b2", 1, dd, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "g1", 1, dd, &rng, 0.2f, 1.0f);
    qt__rf_init(&mb, "be1", 1, dd, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "g2", 1, dd, &rng, 0.2f, 1.0f);
    qt__rf_init(&mb, "be2", 1, dd, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "wh", 2, dh, &rng, 0.1f, 0.0f);
    qt__rf_init(&mb, "bh", 1, dhb, &rng, 0.1f, 0.0f);
    qt__rrow_qweight(&mb, "wo", D, D, 0, &rng);
    qt__rrow_qweight(&mb, "w1", D, F, 1, &rng);
    qt__rrow_qweight(&mb, "w2", F, D, 1, &rng);
    const int64_t perm[3] = { 1, 0, 2 };
    qt__rrow_qdq(&mb, "x", "x0");
    qt_mb_attr_ints(&mb, qt_mb_node(&mb, "ReduceMean", "mix", "x0", "m"), "axes", 1, &ax1);
    qt_mb_node(&mb, "Add", "h", "x0,m", "h");
    qt_mb_attr_ints(&mb, qt_mb_node(&mb, "Transpose", "t1", "h", "t1"), "perm", 3, perm);
    qt_mb_node(&mb, "Reshape", "rs1", "t1,shp2", "rs1");
    qt__rrow_qdq(&mb, "rs1", "rs1d");   /* a chain headed by the Reshape */
    qt__rf_int_attr(&mb, qt_mb_node(&mb, "Gemm", "proj", "rs1d,wo,bo", "proj"), "transB", 1);
    qt_mb_node(&mb, "Reshape", "rs2", "proj,shp3", "rs2");
    qt_mb_attr_ints(&mb, qt_mb_node(&mb, "Transpose", "t2", "rs2", "t2"), "perm", 3, perm);
    qt_mb_node(&mb, "Add", "r1", "t2,x0", "r1");
    qt_mb_node(&mb, "LayerNormalization", "ln1", "r1,g1,be1", "ln1");
    qt__rrow_qdq(&mb, "ln1", "ln1d");
    qt_mb_node(&mb, "MatMul", "fc1", "ln1d,w1", "fc1");
    qt_mb_node(&mb, "Add", "fc1b", "fc1,b1", "fc1b");
    qt_mb_node(&mb, "Div", "gdiv", "fc1b,c0", "gdiv");
    qt_mb_node(&mb, "Erf", "gerf", "gdiv", "gerf");
    qt_mb_node(&mb, "Add", "gadd", "gerf,c1", "gadd");
    qt_mb_node(&mb, "Mul", "gmul", "fc1b,gadd", "gmul");
    qt_mb_node(&mb, "Mul", "gelu", "gmul,c2", "gelu");
    qt__rrow_qdq(&mb, "gelu", "gelud");
    qt_mb_node(&mb, "MatMul", "fc2", "gelud,w2", "fc2");
    qt_mb_node(&mb, "Add", "fc2b", "fc2,b2", "fc2b");
    qt_mb_node(&mb, "Add", "r2", "r1,fc2b", "r2");
    qt_mb_node(&mb, "LayerNormalization", "lnf", "r2,g2,be2", "lnf");
    qt__rf_int_attr(&mb, qt_mb_node(&mb, "Gather", "cls", "lnf,tok", "cls"), "axis", 1);
    qt__rf_int_attr(&mb, qt_mb_node(&mb, "Gemm", "head", "cls,wh,bh", "y"), "transB", 1);
    QrStatus st = qt_load_built(&mb, "cls_rows.onnx", g);
    qt_mb_free(&mb);
    return st;
}

/* Records the element count of one value (the tap's). */
typedef struct QtRrowTap { int v; int64_t numel; } QtRrowTap;
static QrStatus qt__rrow_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtRrowTap *tp = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    if (value == tp->v) tp->numel = t->numel;
    return QR_OK;
}

/* The class-token model's runs: computing the last block on its leading rows (the default) gives
 * the output of the run that computes every row (no_row_cut) bit for bit at 1 and 2 threads, executes
 * the same nodes, and cuts some (qr_run_count.row_cut); a tapped value in the cut region is whole. */
static void test_run_leading_rows(void) {
    const int saved = qr_pool_threads();
    QrGraph *g = NULL;
    QrTensor x = {0}, y[2] = { {0}, {0} }, yt = {0};
    const int64_t dx[3] = { 1, 24, 64 };
    QrStatus st = qt__rrow_model(&g);
    if (st == QR_OK) st = qr_tensor_set_shape(&x, QR_DT_F32, 3, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x);
    uint64_t rng = 11;
    for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    if (st == QR_OK) st = qr_run_infer(g, &x);
    char bad[256] = "";
    int64_t cut_rows = 0;
    for (int th = 1; st == QR_OK && th <= 2 && !bad[0]; th++) {
        qr_pool_init(th);
        int64_t n[2] = { 0, 0 }, cut[2];
        for (int k = 0; k < 2 && st == QR_OK; k++) {
            const QrRunOpts o = { .n_exec = &n[k], .no_row_cut = k == 1 };
            const int64_t before = qr_run_count.row_cut;
            qr_tensor_free_data(&y[k]);
            st = qr_run(g, &x, &o, &y[k]);
            cut[k] = qr_run_count.row_cut - before;
        }
        if (st == QR_OK && (!qt__rdq_same(&y[0], &y[1]) || n[0] != n[1] || cut[0] != 25 || cut[1] != 0))
            snprintf(bad, sizeof bad, "%d threads: outputs %s, nodes %lld / %lld, cut %lld / %lld", th,
                     qt__rdq_same(&y[0], &y[1]) ? "same" : "differ", (long long)n[0], (long long)n[1],
                     (long long)cut[0], (long long)cut[1]);
        cut_rows = cut[0];
    }
    /* a tap on the MLP's hidden value: it is whole, and the output the same */
    QtRrowTap tp = { st == QR_OK ? qr_graph_find(g, "gelu") : -1, 0 };
    bool *only = g ? calloc((size_t)g->n_values + 1, 1) : NULL;
    if (st == QR_OK && (!only || tp.v < 0)) st = qr_errf(QR_ERR_INVALID, "no value 'gelu'");
    if (st == QR_OK) {
        only[tp.v] = true;
        const QrRunOpts o = { .tap = qt__rrow_tap, .tap_user = &tp, .tap_only = only };
        st = qr_run(g, &x, &o, &yt);
    }
    qr_pool_init(saved);
    const bool same_t = qt__rdq_same(&yt, &y[1]);
    free(only);
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&y[0]);
    qr_tensor_free_data(&y[1]);
    qr_tensor_free_data(&yt);
    if (g) qr_graph_free(g);
    free(g);
    QT_OK(st);
    if (qt_verbose) printf("     class-token model: %lld node executions on leading rows\n", (long long)cut_rows);
    QT_CHECKF(!bad[0], "%s", bad);
    QT_CHECKF(tp.numel == 24 * 128, "tapped value has %lld elements", (long long)tp.numel);
    QT_CHECK(same_t);
}

/* ==== Conv pairs (ops/nn.c qr_nn_conv_pair) ========================================= */

/* x (N, Cin, H, W) -> Conv pk x pk, strides ps, pads pp (+ bias when bp; pk 0: 1x1) -> act_p
 * -> depthwise Conv k x k (strides s,
 * dilations d, pads, + bias when bc) -> act_c = y, where an act is 1 Relu, 2 Clip(0, 6), 3 a
 * uint8 QuantizeLinear -> DequantizeLinear, 4 Mul by a scalar then Relu (a step the depthwise
 * kernel does not fuse); with p_out the 1x1 chain's output is a graph output too (no pair). */
typedef struct QtPairCase {
    int64_t N, Cin, M, H, W, k, s, d, pads[4];
    int act_p, act_c;
    bool bp, bc, p_out;
    int64_t pk, ps, pp;
    int pool;   /* 1: a MaxPool k x k (strides s, pads) reads the first layer instead; 2: with ceil_mode */
} QtPairCase;

static void qt__pair_act(QtModel *mb, int act, const char *in, const char *out, const char *tag) {
    char a[64], b[64];
    snprintf(a, sizeof a, "%s_t", tag);
    snprintf(b, sizeof b, "%s_u", tag);
    if (act == 1) qt_mb_node(mb, "Relu", a, in, out);
    else if (act == 2) {
        snprintf(a, sizeof a, "%s,lo,hi", in);
        qt_mb_node(mb, "Clip", tag, a, out);
    } else if (act == 3) {
        char q[64], io[128];
        snprintf(q, sizeof q, "%s_q8", tag);
        snprintf(io, sizeof io, "%s,qs,qz", in);
        qt_mb_node(mb, "QuantizeLinear", a, io, q);
        snprintf(io, sizeof io, "%s,qs,qz", q);
        qt_mb_node(mb, "DequantizeLinear", b, io, out);
    } else {
        char m[64], io[128];
        snprintf(m, sizeof m, "%s_m", tag);
        snprintf(io, sizeof io, "k,%s", in);
        qt_mb_node(mb, "Mul", a, io, m);
        qt_mb_node(mb, "Relu", b, m, out);
    }
}

static QrStatus qt__pair_model(const QtPairCase *pc, QrGraph **g) {
    QtModel mb;
    qt_mb_init(&mb, 13);
    uint64_t rng = 77 + (uint64_t)pc->H * 3 + (uint64_t)pc->k;
    const int64_t pk = pc->pk ? pc->pk : 1, ps = pc->pk ? pc->ps : 1, pp = pc->pk ? pc->pp : 0;
    const int64_t H = (pc->H + 2 * pp - pk) / ps + 1, W = (pc->W + 2 * pp - pk) / ps + 1;   /* the depthwise input */
    const int64_t cl = pc->pool == 2 ? pc->s - 1 : 0;   /* ceil_mode */
    const int64_t OH = (H + pc->pads[0] + pc->pads[2] - pc->d * (pc->k - 1) - 1 + cl) / pc->s + 1;
    const int64_t OW = (W + pc->pads[1] + pc->pads[3] - pc->d * (pc->k - 1) - 1 + cl) / pc->s + 1;
    int64_t dx[4] = { pc->N, pc->Cin, pc->H, pc->W }, dy[4] = { pc->N, pc->M, OH, OW }, dp[4] = { pc->N, pc->M, H, W };
    int64_t wp[4] = { pc->M, pc->Cin, pk, pk }, wd[4] = { pc->M, 1, pc->k, pc->k }, bm[1] = { pc->M }, s0[1] = { 1 };
    qt_mb_input(&mb, "x", QR_DT_F32, 4, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 4, dy);
    if (pc->p_out) qt_mb_output(&mb, "pa", QR_DT_F32, 4, dp);
    float lo = 0.0f, hi = 6.0f, qs = 0.05f, kk = 1.25f;
    uint8_t qz = 128;
    qt_mb_init_raw(&mb, "lo", QR_DT_F32, 0, s0, &lo, 4);
    qt_mb_init_raw(&mb, "hi", QR_DT_F32, 0, s0, &hi, 4);
    qt_mb_init_raw(&mb, "qs", QR_DT_F32, 0, s0, &qs, 4);
    qt_mb_init_raw(&mb, "qz", QR_DT_U8, 0, s0, &qz, 1);
    qt_mb_init_raw(&mb, "k", QR_DT_F32, 0, s0, &kk, 4);
    qt__rf_init(&mb, "Wp", 4, wp, &rng, 0.5f, 0.0f);
    qt__rf_init(&mb, "Bp", 1, bm, &rng, 0.2f, 0.0f);
    qt__rf_init(&mb, "Wd", 4, wd, &rng, 0.4f, 0.0f);
    qt__rf_init(&mb, "Bd", 1, bm, &rng, 0.2f, 0.0f);
    Onnx__NodeProto *n = qt_mb_node(&mb, "Conv", "pc", pc->bp ? "x,Wp,Bp" : "x,Wp", "p0");
    int64_t pst[2] = { ps, ps }, ppad[4] = { pp, pp, pp, pp };
    qt_mb_attr_ints(&mb, n, "pads", 4, ppad);
    qt_mb_attr_ints(&mb, n, "strides", 2, pst);
    qt__pair_act(&mb, pc->act_p, "p0", "pa", "ap");
    int64_t st[2] = { pc->s, pc->s }, dl[2] = { pc->d, pc->d }, pads[4], ks[2] = { pc->k, pc->k };
    memcpy(pads, pc->pads, sizeof pads);
    if (pc->pool) {
        n = qt_mb_node(&mb, "MaxPool", "mp", "pa", "y");
        qt_mb_attr_ints(&mb, n, "kernel_shape", 2, ks);
        qt_mb_attr_ints(&mb, n, "pads", 4, pads);
        qt_mb_attr_ints(&mb, n, "strides", 2, st);
        if (pc->pool == 2) qt__rf_int_attr(&mb, n, "ceil_mode", 1);
        QrStatus s = qt_load_built(&mb, "pair.onnx", g);
        qt_mb_free(&mb);
        return s;
    }
    n = qt_mb_node(&mb, "Conv", "dc", pc->bc ? "pa,Wd,Bd" : "pa,Wd", "d0");
    qt_mb_attr_ints(&mb, n, "pads", 4, pads);
    qt_mb_attr_ints(&mb, n, "strides", 2, st);
    qt_mb_attr_ints(&mb, n, "dilations", 2, dl);
    qt__rf_int_attr(&mb, n, "group", pc->M);
    qt__pair_act(&mb, pc->act_c, "d0", "y", "ac");
    QrStatus s = qt_load_built(&mb, "pair.onnx", g);
    qt_mb_free(&mb);
    return s;
}

/* A Conv chain and the depthwise chain reading it run as a pair (bands of rows, the first
 * layer's rows computed per band into a buffer, the rows two bands share kept): the bits of
 * the unfused run (every value tapped), on 1-3 threads and band buffers of one row to whole
 * images, the same nodes counted; 1x1 first layers and 3x3, 5x5 and 7x7 ones with strides
 * (their input rows copied per band), depthwise strides 1 and 2, 3x3 and 5x5 windows,
 * dilation 2, uneven pads, odd sizes, two images, the activations the depthwise kernel fuses
 * and one it does not, fake quantization on both sides; a MaxPool instead of the depthwise
 * layer (ResNet's 7x7/2 layer and 3x3/2 pool; 2x2/2 with ceil_mode, uneven pads). A second
 * reader of the first layer's output (a graph output) keeps them apart; a pair declined by
 * ops/nn.c at run time (below its size) runs the first chain at the second layer's turn, with
 * the same bits. */
static void test_run_conv_pair(void) {
    static const QtPairCase cases[] = {
        { 1, 3, 8, 20, 20, 3, 1, 1, { 1, 1, 1, 1 }, 1, 1, true, true, false, 0, 0, 0, 0 },
        { 2, 5, 6, 21, 19, 3, 2, 1, { 1, 1, 1, 1 }, 2, 2, true, false, false, 0, 0, 0, 0 },
        { 1, 4, 7, 17, 23, 5, 2, 1, { 2, 2, 2, 2 }, 3, 3, false, true, false, 0, 0, 0, 0 },
        { 1, 6, 5, 18, 17, 3, 1, 2, { 2, 0, 1, 2 }, 1, 4, true, true, false, 0, 0, 0, 0 },
        { 1, 3, 4, 16, 16, 3, 2, 1, { 0, 1, 1, 0 }, 3, 1, true, true, false, 0, 0, 0, 0 },
        { 1, 3, 8, 20, 20, 3, 1, 1, { 1, 1, 1, 1 }, 1, 1, true, true, true, 0, 0, 0, 0 },
        { 1, 3, 8, 41, 39, 3, 1, 1, { 1, 1, 1, 1 }, 2, 1, true, true, false, 3, 2, 1, 0 },   /* MobileNet's first layer */
        { 2, 3, 16, 44, 40, 3, 2, 1, { 1, 1, 1, 1 }, 1, 2, true, false, false, 7, 2, 3, 0 }, /* a 7x7/2 layer (K 147) */
        { 1, 5, 6, 19, 21, 5, 1, 1, { 2, 2, 2, 2 }, 3, 4, false, true, false, 3, 1, 1, 0 },
        { 1, 3, 16, 44, 40, 3, 2, 1, { 1, 1, 1, 1 }, 1, 0, true, false, false, 7, 2, 3, 1 },  /* ResNet's stem */
        { 2, 4, 6, 21, 19, 2, 2, 1, { 0, 0, 0, 0 }, 3, 0, false, false, false, 0, 0, 0, 2 },  /* 2x2/2, ceil_mode */
        { 1, 3, 5, 18, 20, 3, 1, 1, { 1, 0, 1, 2 }, 2, 0, true, false, true, 0, 0, 0, 1 },   /* pool; 2 readers */
    };
    static const int64_t band_bytes[] = { 4, 3 * 8 * 24 * 4, (int64_t)1 << 20 };
    const int saved = qr_pool_threads();
    const int64_t saved_bytes = qr_nn_pair_bytes, saved_min = qr_nn_pair_min;
    /* every kernel level this machine has (the depthwise kernels' fused activation is AVX-512's) */
    static const QrIsa isas[] = { QR_ISA_REF, QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_VNNI, QR_ISA_NEON, QR_ISA_DOT, QR_ISA_I8MM };
    QrKernels lv[QR_ARRAY_LEN(isas)];
    const QrKernels saved_k = qr_kern;
    int nl = 0;
    for (int i = 0; i < QR_ARRAY_LEN(isas); i++)
        if (qr_kern_table(isas[i], &lv[nl]) == QR_OK) nl++;
    qr_err_clear();
    char bad[256] = "";
    int n_runs = 0;
    for (int ci = 0; ci < QR_ARRAY_LEN(cases) && !bad[0]; ci++) {
        const QtPairCase *pc = &cases[ci];
        QrGraph *g = NULL;
        QrTensor x = {0}, ref[2] = { {0}, {0} };
        int64_t dx[4] = { pc->N, pc->Cin, pc->H, pc->W }, n_ref = 0;
        QrStatus st = qt__pair_model(pc, &g);
        if (st == QR_OK) st = qr_tensor_set_shape(&x, QR_DT_F32, 4, dx);
        if (st == QR_OK) st = qr_tensor_alloc_data(&x);
        uint64_t rng = 5 + (uint64_t)ci;
        for (int64_t i = 0; st == QR_OK && i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
        if (st == QR_OK) st = qr_run_infer(g, &x);
        for (int l = 0; l < nl && st == QR_OK && !bad[0]; l++) {
            qr_kern = lv[l];
            QtRfTaps all = {0};
            QrRunOpts tapped = { .tap = qt__rf_tap, .tap_user = &all, .n_exec = &n_ref };
            qr_nn_pair_min = 0;
            n_ref = 0;
            for (int i = 0; i < 2; i++) qr_tensor_free_data(&ref[i]);
            if (st == QR_OK) st = qr_run(g, &x, &tapped, ref);
            for (int t = 1; t <= 3 && st == QR_OK && !bad[0]; t++) {
                st = qr_pool_init(t);
                for (int bi = 0; bi < 4 && st == QR_OK && !bad[0]; bi++) {
                    /* bi 3: declined at run time (the first layer's output below the minimum) */
                    qr_nn_pair_bytes = bi < 3 ? band_bytes[bi] : saved_bytes;
                    qr_nn_pair_min = bi < 3 ? 0 : (int64_t)1 << 40;
                    QrTensor y[2] = { {0}, {0} };
                    int64_t n_exec = 0, pairs0 = qr_nn_pairs_run;
                    QrRunOpts o = { .n_exec = &n_exec };
                    st = qr_run(g, &x, &o, y);
                    const bool paired = qr_nn_pairs_run > pairs0, want = bi < 3 && !pc->p_out;
                    for (int i = 0; st == QR_OK && i < g->n_outputs && !bad[0]; i++)
                        if (memcmp(y[i].data, ref[i].data, qr_tensor_nbytes(&ref[i])) != 0)
                            snprintf(bad, sizeof bad, "level %s, case %d, %d threads, band case %d: output %d differs from the "
                                     "unfused run", qr_isa_name(lv[l].isa), ci, t, bi, i);
                    if (st == QR_OK && !bad[0] && paired != want)
                        snprintf(bad, sizeof bad, "level %s, case %d, %d threads, band case %d: paired %d, expected %d",
                                 qr_isa_name(lv[l].isa), ci, t, bi, paired, want);
                    if (st == QR_OK && !bad[0] && n_exec != n_ref)
                        snprintf(bad, sizeof bad, "case %d: %lld nodes executed, unfused %lld", ci, (long long)n_exec,
                                 (long long)n_ref);
                    n_runs += paired;
                    for (int i = 0; i < 2; i++) qr_tensor_free_data(&y[i]);
                }
            }
        }
        for (int i = 0; i < 2; i++) qr_tensor_free_data(&ref[i]);
        qr_tensor_free_data(&x);
        if (g) qr_graph_free(g);
        free(g);
        if (st != QR_OK && !bad[0]) snprintf(bad, sizeof bad, "case %d: %s", ci, qr_err_msg());
    }
    qr_kern = saved_k;
    qr_nn_pair_bytes = saved_bytes;
    qr_nn_pair_min = saved_min;
    qr_pool_init(saved);
    if (qt_verbose) printf("     %d paired runs over %d kernel levels\n", n_runs, nl);
    QT_CHECKF(!bad[0], "%s", bad);
    QT_CHECKF(nl >= 2 && n_runs == 10 * 3 * 3 * nl, "%d paired runs over %d levels", n_runs, nl);
}

static void qt_run_all(void) {
    QT_RUN(test_run_overrides);
    QT_RUN(test_run_dead_nodes);
    QT_RUN(test_run_fusion);
    QT_RUN(test_run_fusion_plan);
    QT_RUN(test_run_fusion_lastb);
    QT_RUN(test_run_rows_threaded);
    QT_RUN(test_run_fusion_gelu);
    QT_RUN(test_run_fusion_dq);
    QT_RUN(test_run_leading_rows);
    QT_RUN(test_run_reshape_steal);
    QT_RUN(test_run_matmul_batches);
    QT_RUN(test_run_cache);
    QT_RUN(test_run_conv_pack);
    QT_RUN(test_run_deferred_weights);
    QT_RUN(test_run_conv_pair);
}
