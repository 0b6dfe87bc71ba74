/* tests/run_order — the node orders exporters write. ONNX only asks for a topological
 * order, and older PyTorch exports put each Constant right before its consumer, after the
 * compute node that feeds the same consumer (Relu -> Constant -> Div). Every command must
 * run such a file the same way: the same graph written in several node orders gives the
 * same bits, in a fused run (what `run` does), a tapped (unfused) run and through the CLI,
 * and they equal a reference computed here from the operators' definitions. */

/* A Constant node writing a float32 tensor. */
static void qt_ro_const(QtModel *mb, const char *name, const char *out, int rank, const int64_t *dims, const float *v,
                        int64_t n) {
    Onnx__NodeProto *c = qt_mb_node(mb, "Constant", name, "", out);
    Onnx__AttributeProto *a = qt_mb_attr(mb, c, "value", QR_ATTR_TENSOR);
    a->t = qt_mb_tensor(mb, out, QR_DT_F32, rank, dims, v, (size_t)n * sizeof(float));
}

static void qt_ro_const_u8(QtModel *mb, const char *name, const char *out, uint8_t v) {
    Onnx__NodeProto *c = qt_mb_node(mb, "Constant", name, "", out);
    Onnx__AttributeProto *a = qt_mb_attr(mb, c, "value", QR_ATTR_TENSOR);
    a->t = qt_mb_tensor(mb, out, QR_DT_U8, 0, NULL, &v, 1);
}

enum { QT_RO_C = 4, QT_RO_H = 3, QT_RO_W = 3 };

/* The graphs, each built with its nodes in exporter order (Constants late, right before
 * their consumer). x: [1,4,3,3] -> y: [1,4,3,3]. */
typedef enum { QT_RO_DIV, QT_RO_SUB_SWAP, QT_RO_CLIP, QT_RO_QDQ, QT_RO_CONV_ADD_MUL, QT_RO_BN, QT_RO_N } QtRoCase;
static const char *const qt_ro_names[QT_RO_N] = { "relu_const_div", "relu_const_sub_swapped", "relu_const_clip",
                                                  "relu_const_qdq", "conv_const_add_mul_relu", "conv_const_bn" };

static const float qt_ro_w[QT_RO_C * QT_RO_C] = { 0.5f, -0.25f, 0.125f, 1.0f, -1.0f, 0.75f, 0.0f, 0.5f,
                                                  0.25f, 0.25f, -0.5f, 2.0f, 1.5f, 0.0f, -0.125f, -0.75f };

static void qt_ro_build(QtModel *mb, QtRoCase k) {
    int64_t d[4] = { 1, QT_RO_C, QT_RO_H, QT_RO_W }, dc[4] = { 1, QT_RO_C, 1, 1 }, dw[4] = { QT_RO_C, QT_RO_C, 1, 1 };
    int64_t dv[1] = { QT_RO_C };
    qt_mb_init(mb, 13);
    qt_mb_input(mb, "x", QR_DT_F32, 4, d);
    qt_mb_output(mb, "y", QR_DT_F32, 4, d);
    static const float two = 2.0f, three = 3.0f, lo = 0.1f, hi = 0.7f, s = 0.02f, half = 0.5f;
    static const float bias[QT_RO_C] = { 0.5f, -1.0f, 0.25f, 2.0f };
    static const float bn_s[QT_RO_C] = { 1.5f, 0.5f, -1.0f, 2.0f }, bn_b[QT_RO_C] = { 0.1f, -0.2f, 0.3f, 0.0f };
    static const float bn_m[QT_RO_C] = { 0.2f, 0.0f, -0.5f, 1.0f }, bn_v[QT_RO_C] = { 1.0f, 4.0f, 0.25f, 2.0f };
    switch (k) {
    case QT_RO_DIV:
        qt_mb_node(mb, "Relu", "Relu_0", "x", "r");
        qt_ro_const(mb, "Constant_1", "c", 0, NULL, &two, 1);
        qt_mb_node(mb, "Div", "Div_6", "r,c", "y");
        break;
    case QT_RO_SUB_SWAP:
        qt_mb_node(mb, "Relu", "Relu_0", "x", "r");
        qt_ro_const(mb, "Constant_1", "c", 0, NULL, &three, 1);
        qt_mb_node(mb, "Sub", "Sub_2", "c,r", "y");
        break;
    case QT_RO_CLIP:
        qt_mb_node(mb, "Relu", "Relu_0", "x", "r");
        qt_ro_const(mb, "Constant_1", "lo", 0, NULL, &lo, 1);
        qt_ro_const(mb, "Constant_2", "hi", 0, NULL, &hi, 1);
        qt_mb_node(mb, "Clip", "Clip_3", "r,lo,hi", "y");
        break;
    case QT_RO_QDQ:
        qt_mb_node(mb, "Relu", "Relu_0", "x", "r");
        qt_ro_const(mb, "Constant_1", "s", 0, NULL, &s, 1);
        qt_ro_const_u8(mb, "Constant_2", "z", 128);
        qt_mb_node(mb, "QuantizeLinear", "QuantizeLinear_3", "r,s,z", "q");
        qt_ro_const(mb, "Constant_4", "s2", 0, NULL, &s, 1);
        qt_ro_const_u8(mb, "Constant_5", "z2", 128);
        qt_mb_node(mb, "DequantizeLinear", "DequantizeLinear_6", "q,s2,z2", "y");
        break;
    case QT_RO_CONV_ADD_MUL:
        qt_mb_init_raw(mb, "W", QR_DT_F32, 4, dw, qt_ro_w, sizeof qt_ro_w);
        qt_mb_node(mb, "Conv", "Conv_0", "x,W", "cv");
        qt_ro_const(mb, "Constant_1", "b", 4, dc, bias, QT_RO_C);
        qt_mb_node(mb, "Add", "Add_2", "cv,b", "a");
        qt_ro_const(mb, "Constant_3", "h", 0, NULL, &half, 1);
        qt_mb_node(mb, "Mul", "Mul_4", "a,h", "m");
        qt_mb_node(mb, "Relu", "Relu_5", "m", "y");
        break;
    case QT_RO_BN:
        qt_mb_init_raw(mb, "W", QR_DT_F32, 4, dw, qt_ro_w, sizeof qt_ro_w);
        qt_mb_node(mb, "Conv", "Conv_0", "x,W", "cv");
        qt_ro_const(mb, "Constant_1", "bs", 1, dv, bn_s, QT_RO_C);
        qt_ro_const(mb, "Constant_2", "bb", 1, dv, bn_b, QT_RO_C);
        qt_ro_const(mb, "Constant_3", "bm", 1, dv, bn_m, QT_RO_C);
        qt_ro_const(mb, "Constant_4", "bv", 1, dv, bn_v, QT_RO_C);
        qt_mb_node(mb, "BatchNormalization", "BatchNormalization_5", "cv,bs,bb,bm,bv", "y");
        break;
    case QT_RO_N:
        break;
    }
}

/* y from the operators' definitions (float arithmetic as the ops do it elementwise). */
static float qt_ro_ref(QtRoCase k, const float *x, int64_t i) {
    const int64_t hw = QT_RO_H * QT_RO_W, c = i / hw, p = i % hw;
    float r = x[i] > 0 ? x[i] : 0.0f;
    switch (k) {
    case QT_RO_DIV: return r / 2.0f;
    case QT_RO_SUB_SWAP: return 3.0f - r;
    case QT_RO_CLIP: return r < 0.1f ? 0.1f : r > 0.7f ? 0.7f : r;
    case QT_RO_QDQ: {
        float q = nearbyintf(r / 0.02f) + 128.0f;
        q = q < 0 ? 0 : q > 255 ? 255 : q;
        return (float)((int32_t)q - 128) * 0.02f;
    }
    default: break;
    }
    double cv = 0;   /* the 1x1 Conv, for the tolerance cases */
    for (int j = 0; j < QT_RO_C; j++) cv += (double)qt_ro_w[c * QT_RO_C + j] * x[j * hw + p];
    static const double bias[QT_RO_C] = { 0.5, -1.0, 0.25, 2.0 };
    static const double bn_s[QT_RO_C] = { 1.5, 0.5, -1.0, 2.0 }, bn_b[QT_RO_C] = { 0.1, -0.2, 0.3, 0.0 };
    static const double bn_m[QT_RO_C] = { 0.2, 0.0, -0.5, 1.0 }, bn_v[QT_RO_C] = { 1.0, 4.0, 0.25, 2.0 };
    if (k == QT_RO_CONV_ADD_MUL) { double m = (cv + bias[c]) * 0.5; return (float)(m > 0 ? m : 0); }
    return (float)((cv - bn_m[c]) / sqrt(bn_v[c] + 1e-5) * bn_s[c] + bn_b[c]);
}

/* Permutes the built nodes: 0 as built (each Constant late, right before its reader),
 * 1 every Constant first (newer exporters), 2 the list backwards (an unsorted file, which
 * qreport sorts topologically as ONNX Runtime does). */
static void qt_ro_order(QtModel *mb, int order) {
    Onnx__NodeProto *tmp[QT_MB_MAX];
    int n = (int)mb->g.n_node, j = 0;
    if (order == 1) {
        for (int i = 0; i < n; i++) if (!strcmp(mb->nodes[i]->op_type, "Constant")) tmp[j++] = mb->nodes[i];
        for (int i = 0; i < n; i++) if (strcmp(mb->nodes[i]->op_type, "Constant")) tmp[j++] = mb->nodes[i];
    } else if (order == 2) {
        for (int i = n - 1; i >= 0; i--) tmp[j++] = mb->nodes[i];
    } else {
        return;
    }
    memcpy(mb->nodes, tmp, (size_t)n * sizeof *tmp);
}

typedef struct { int n; } QtRoTaps;
static QrStatus qt_ro_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QR_UNUSED(g); QR_UNUSED(node); QR_UNUSED(value); QR_UNUSED(t);
    ((QtRoTaps *)user)->n++;
    return QR_OK;
}

/* Every case in every order: fused (with the constant cache, as `run`) == tapped == the
 * first order's bits; exact cases equal the reference bit for bit, Conv cases within 1e-5. */
static void test_run_order_exporters(void) {
    int64_t d[4] = { 1, QT_RO_C, QT_RO_H, QT_RO_W };
    QrTensor x = {0};
    QT_OK(qr_tensor_set_shape(&x, QR_DT_F32, 4, d));
    QT_OK(qr_tensor_alloc_data(&x));
    uint64_t rng = 1717;
    for (int64_t i = 0; i < x.numel; i++) ((float *)x.data)[i] = (float)qr_rng_normal(&rng);
    char bad[512] = "";
    for (int k = 0; k < QT_RO_N && !bad[0]; k++) {
        QrTensor first = {0};
        for (int order = 0; order < 3 && !bad[0]; order++) {
            QtModel mb;
            qt_ro_build(&mb, (QtRoCase)k);
            qt_ro_order(&mb, order);
            char file[128];
            snprintf(file, sizeof file, "order_%s_%d.onnx", qt_ro_names[k], order);
            QrGraph *g = NULL;
            QrStatus st = qt_load_built(&mb, file, &g);
            qt_mb_free(&mb);
            QrTensor yf = {0}, yt = {0};
            QrRunCache *cache = NULL;
            QtRoTaps taps = {0};
            if (st == QR_OK) st = qr_run_infer(g, &x);
            if (st == QR_OK) cache = qr_run_cache_new(g);
            QrRunOpts of = { .cache = cache }, ot = { .tap = qt_ro_tap, .tap_user = &taps };
            if (st == QR_OK) st = qr_run(g, &x, &of, &yf);
            if (st == QR_OK) { qr_tensor_free_data(&yf); st = qr_run(g, &x, &of, &yf); }   /* from the cache */
            if (st == QR_OK) st = qr_run(g, &x, &ot, &yt);
            if (st != QR_OK) qt_fmt(bad, sizeof bad, "%s order %d: %s", qt_ro_names[k], order, qr_err_msg());
            else if (memcmp(yf.data, yt.data, qr_tensor_nbytes(&yf)))
                snprintf(bad, sizeof bad, "%s order %d: fused and unfused runs differ", qt_ro_names[k], order);
            else if (first.data && memcmp(first.data, yf.data, qr_tensor_nbytes(&yf)))
                snprintf(bad, sizeof bad, "%s order %d: other bits than order 0", qt_ro_names[k], order);
            for (int64_t i = 0; !bad[0] && i < yf.numel; i++) {
                float got = ((float *)yf.data)[i], want = qt_ro_ref((QtRoCase)k, x.data, i);
                bool exact = k < QT_RO_CONV_ADD_MUL;
                if (exact ? got != want : fabsf(got - want) > 1e-5f * (1.0f + fabsf(want)))
                    snprintf(bad, sizeof bad, "%s order %d: y[%lld] = %.9g, reference %.9g", qt_ro_names[k], order,
                             (long long)i, got, want);
            }
            if (!first.data) { first = yf; yf.data = NULL; yf.owned = false; }
            qr_tensor_free_data(&yf);
            qr_tensor_free_data(&yt);
            qr_run_cache_free(cache);
            if (g) { qr_graph_free(g); free(g); }
        }
        qr_tensor_free_data(&first);
    }
    qr_tensor_free_data(&x);
    QT_CHECKF(!bad[0], "%s", bad);
}

/* The file through the CLI: run (sim and int), profile, check and compare all
 * accept Relu -> Constant -> Div, and run writes max(x, 0) / 2. */
static void test_run_order_cli(void) {
    char model[600], in[600], dir[600], out[700];
    snprintf(model, sizeof model, "%s/order_cli.onnx", qt_tmpdir());
    snprintf(in, sizeof in, "%s/order_cli_in.npy", qt_tmpdir());
    snprintf(dir, sizeof dir, "%s/order_cli_out", qt_tmpdir());
    QtModel mb;
    qt_ro_build(&mb, QT_RO_DIV);
    QrStatus st = qt_mb_write(&mb, model);
    qt_mb_free(&mb);
    QT_OK(st);
    int64_t d[4] = { 1, QT_RO_C, QT_RO_H, QT_RO_W };
    QT_OK(qt_write_npy_f(in, QR_DT_F32, 4, d, 0.37));
    static const char *const cmds[] = { "run", "run --mode int", "profile", "check" };
    QtCli r;
    for (int i = 0; i < QR_ARRAY_LEN(cmds); i++) {
        qt_cli(&r, "%s %s -i %s -o %s --quiet", cmds[i], model, in, dir);
        QT_CHECKF(!r.crashed && r.code == 0, "%s: exit %d: %s", cmds[i], r.code, r.err);
    }
    qt_cli(&r, "compare %s %s -i %s -o %s --quiet", model, model, in, dir);
    QT_CHECKF(!r.crashed && r.code == 0, "compare: exit %d: %s", r.code, r.err);
    qt_cli(&r, "run %s -i %s -o %s --quiet", model, in, dir);
    snprintf(out, sizeof out, "%s/y.npy", dir);
    QrTensor x = {0}, y = {0};
    QT_OK(qr_npy_read(in, &x));
    st = qr_npy_read(out, &y);
    bool ok = st == QR_OK && y.numel == x.numel;
    for (int64_t i = 0; ok && i < y.numel; i++) ok = ((float *)y.data)[i] == qt_ro_ref(QT_RO_DIV, x.data, i);
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&y);
    QT_OK(st);
    QT_CHECK(ok);
}

static void qt_run_order_all(void) {
    QT_RUN(test_run_order_exporters);
    QT_RUN(test_run_order_cli);
}
