/* tests/cli_edge — edge cases found on real-world models: bfloat16 graph outputs, a graph
 * without outputs, a contrib operator in the default domain, and models ONNX Runtime
 * rejects but qreport runs (warned about, naming the node). */

static void qt_ce_path(char *dst, size_t n, const char *file) { snprintf(dst, n, "%s/%s", qt_tmpdir(), file); }

/* run widens bfloat16 graph outputs to float32 .npy (numpy has no bfloat16), as it does
 * float8: each value is the bfloat16 rounding of the input (round to nearest even). */
static void test_cli_edge_bf16_output(void) {
    QtModel mb;
    qt_cast_model(&mb, 17, 5, QR_DT_BF16);
    int64_t d[1] = { 5 };
    char model[600], in[600], dir[600], out[700];
    qt_ce_path(model, sizeof model, "bf16.onnx");
    qt_ce_path(in, sizeof in, "bf16_in.npy");
    qt_ce_path(dir, sizeof dir, "bf16_out");
    QrStatus st = qt_mb_write(&mb, model);
    qt_mb_free(&mb);
    QT_OK(st);
    QrTensor x = {0}, y = {0};
    QT_OK(qr_tensor_set_shape(&x, QR_DT_F32, 1, d));
    QT_OK(qr_tensor_alloc_data(&x));
    /* 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even -> 1; 1 + 3*2^-8 -> 1 + 2^-6 */
    float xs[5] = { 1.0f, 1.0f + 1.0f / 256, 1.0f + 3.0f / 256, -3.14159265f, 65504.0f };
    memcpy(x.data, xs, sizeof xs);
    st = qr_npy_write(in, &x);
    qr_tensor_free_data(&x);
    QT_OK(st);
    QtCli r;
    qt_cli(&r, "run %s -i %s -o %s --quiet", model, in, dir);
    QT_CHECKF(!r.crashed && r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(out, sizeof out, "%s/y.npy", dir);
    QT_OK(qr_npy_read(out, &y));
    const float want[5] = { 1.0f, 1.0f, 1.0f + 1.0f / 64, -3.140625f, 65536.0f };
    bool ok = y.dtype == QR_DT_F32 && y.numel == 5;
    for (int i = 0; ok && i < 5; i++) ok = ((float *)y.data)[i] == want[i];
    qr_tensor_free_data(&y);
    QT_CHECK(ok);
}

/* A graph with no outputs is an error for every command (nothing would be computed or
 * written), naming the file; as baseline or as analysis model. */
static void test_cli_edge_no_outputs(void) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t d[1] = { 4 };
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d);
    qt_mb_node(&mb, "Relu", "relu", "x", "y");
    char model[600], good[600], dir[600];
    qt_ce_path(model, sizeof model, "no_outputs.onnx");
    qt_ce_path(good, sizeof good, "one_output.onnx");
    qt_ce_path(dir, sizeof dir, "no_outputs_out");
    QrStatus st = qt_mb_write(&mb, model);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d);
    if (st == QR_OK) st = qt_mb_write(&mb, good);
    qt_mb_free(&mb);
    QT_OK(st);
    static const char *const cmds[] = { "run", "profile", "check" };
    QtCli r;
    for (int i = 0; i < QR_ARRAY_LEN(cmds); i++) {
        qt_cli(&r, "%s %s -o %s", cmds[i], model, dir);
        QT_CLI_FAILS(r, "no_outputs.onnx", "has no outputs");
    }
    qt_cli(&r, "compare %s %s -o %s", good, model, dir);
    QT_CLI_FAILS(r, "no_outputs.onnx", "has no outputs");
    qt_cli(&r, "run %s -o %s --quiet", good, dir);
    QT_CHECKF(r.code == 0, "the same graph with its output: exit %d: %s", r.code, r.err);
}

/* QLinearAdd without the com.microsoft domain: unsupported, and the message says that
 * com.microsoft.QLinearAdd is supported; an op that exists in no domain gets no hint. */
static void test_cli_edge_contrib_domain_hint(void) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t d[1] = { 4 }, d0[1] = { 1 };
    qt_mb_input(&mb, "a", QR_DT_U8, 1, d);
    qt_mb_input(&mb, "b", QR_DT_U8, 1, d);
    qt_mb_output(&mb, "y", QR_DT_U8, 1, d);
    float s = 0.1f;
    uint8_t z = 128;
    qt_mb_init_raw(&mb, "s", QR_DT_F32, 1, d0, &s, sizeof s);
    qt_mb_init_raw(&mb, "z", QR_DT_U8, 1, d0, &z, 1);
    qt_mb_node(&mb, "QLinearAdd", "qadd", "a,s,z,b,s,z,s,z", "y");
    char model[600];
    qt_ce_path(model, sizeof model, "qladd_default.onnx");
    QrStatus st = qt_mb_write(&mb, model);
    qt_mb_free(&mb);
    QT_OK(st);
    QtCli r;
    qt_cli(&r, "run %s", model);
    QT_CLI_FAILS(r, "QLinearAdd (node 'qadd'", "com.microsoft.QLinearAdd is supported");
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d);
    qt_mb_node(&mb, "NoSuchOp", "nso", "x", "y");
    st = qt_mb_write(&mb, model);
    qt_mb_free(&mb);
    QT_OK(st);
    qt_cli(&r, "run %s", model);
    QT_CLI_FAILS(r, "NoSuchOp (node 'nso')");
    QT_CHECKF(!strstr(r.err, "com.microsoft"), "%s", r.err);
}

/* What ONNX Runtime rejects but qreport runs gets a warning naming the node, and the run
 * goes on: DequantizeLinear with block_size at opset 19 (block_size is opset 21), and a
 * graph output declared int8 that a Relu writes as float32. --quiet silences them. */
static void test_cli_edge_ort_rejects(void) {
    QtModel mb;
    qt_mb_init(&mb, 19);
    int64_t dw[2] = { 2, 4 }, ds[2] = { 2, 2 }, dx[2] = { 4, 3 }, dy[2] = { 2, 3 };
    int8_t w[8] = { 1, -2, 3, -4, 5, -6, 7, -8 };
    float sc[4] = { 0.5f, 0.25f, 2.0f, 1.0f };
    qt_mb_input(&mb, "x", QR_DT_F32, 2, dx);
    qt_mb_output(&mb, "y", QR_DT_S8, 2, dy);
    qt_mb_init_raw(&mb, "w", QR_DT_S8, 2, dw, w, sizeof w);
    qt_mb_init_raw(&mb, "ws", QR_DT_F32, 2, ds, sc, sizeof sc);
    Onnx__NodeProto *n = qt_mb_node(&mb, "DequantizeLinear", "dq_blocked", "w,ws", "wf");
    Onnx__AttributeProto *a = qt_mb_attr(&mb, n, "axis", QR_ATTR_INT);
    a->has_i = 1;
    a->i = 1;
    a = qt_mb_attr(&mb, n, "block_size", QR_ATTR_INT);
    a->has_i = 1;
    a->i = 2;
    qt_mb_node(&mb, "MatMul", "mm", "wf,x", "m");
    qt_mb_node(&mb, "Relu", "relu_out", "m", "y");
    char model[600], dir[600], out[700];
    qt_ce_path(model, sizeof model, "ort_rejects.onnx");
    qt_ce_path(dir, sizeof dir, "ort_rejects_out");
    QrStatus st = qt_mb_write(&mb, model);
    qt_mb_free(&mb);
    QT_OK(st);
    QtCli r;
    qt_cli(&r, "run %s -o %s", model, dir);
    QT_CHECKF(!r.crashed && r.code == 0, "exit %d: %s", r.code, r.err);
    QT_CHECKF(strstr(r.err, "node 'dq_blocked' (DequantizeLinear) has block_size=2, which needs opset 21") &&
              strstr(r.err, "imports opset 19"), "%s", r.err);
    QT_CHECKF(strstr(r.err, "node 'relu_out' (Relu) writes 'y' as float32, but the model declares it int8 (graph output)"),
              "%s", r.err);
    /* y is written by the inferred type (float32) */
    snprintf(out, sizeof out, "%s/y.npy", dir);
    QrTensor y = {0};
    QT_OK(qr_npy_read(out, &y));
    bool shape_ok = y.dtype == QR_DT_F32 && y.numel == 6;
    qr_tensor_free_data(&y);
    QT_CHECK(shape_ok);
    qt_cli(&r, "check %s -o %s --quiet", model, dir);
    QT_CHECKF(r.code == 0 && !strstr(r.err, "warning"), "--quiet: exit %d: %s", r.code, r.err);
}

/* --int16: by default run --mode int leaves int16_mixed's 16-bit groups in float (5 of its 11
 * groups lowered) and writes exactly what sim writes, as ONNX Runtime's CPU provider ('all' ==
 * 'disabled' on 16-bit QDQ); --int16 integer lowers all 11 (an NPU); anything else is a usage
 * error. */
static void test_cli_edge_int16_choice(void) {
    const char *m = "fixtures/qpairs/int16_mixed/analysis.onnx", *x = "fixtures/qpairs/int16_mixed/input.npy";
    char d_sim[600], d_int[600], d_npu[600], p[700];
    qt_ce_path(d_sim, sizeof d_sim, "i16_sim");
    qt_ce_path(d_int, sizeof d_int, "i16_int");
    qt_ce_path(d_npu, sizeof d_npu, "i16_npu");
    QtCli r;
    qt_cli(&r, "run %s -i %s -o %s --quiet", m, x, d_sim);
    QT_CHECKF(r.code == 0, "sim: exit %d: %s", r.code, r.err);
    qt_cli(&r, "run %s -i %s -o %s --mode int", m, x, d_int);
    QT_CHECKF(r.code == 0 && strstr(r.out, "int mode: 5 groups on integer kernels, 6 candidates left in float"),
              "default int: exit %d: %s%s", r.code, r.out, r.err);
    qt_cli(&r, "run %s -i %s -o %s --mode int --int16 integer", m, x, d_npu);
    QT_CHECKF(r.code == 0 && strstr(r.out, "int mode: 11 groups on integer kernels, 0 candidates left in float"),
              "--int16 integer: exit %d: %s%s", r.code, r.out, r.err);
    qt_cli(&r, "run %s -i %s -o %s --mode int --int16 npu", m, x, d_npu);
    QT_CHECKF(r.code == 2 && strstr(r.err, "--int16 must be float or integer"), "exit %d: %s", r.code, r.err);
    QrTensor a = {0}, b = {0};
    snprintf(p, sizeof p, "%s/output.npy", d_sim);
    QT_OK(qr_npy_read(p, &a));
    snprintf(p, sizeof p, "%s/output.npy", d_int);
    QrStatus st = qr_npy_read(p, &b);
    bool same = st == QR_OK && a.numel == b.numel && !memcmp(a.data, b.data, qr_tensor_nbytes(&a));
    qr_tensor_free_data(&a);
    qr_tensor_free_data(&b);
    QT_OK(st);
    QT_CHECKF(same, "default int mode differs from sim on a 16-bit model");
}

static void qt_cli_edge_all(void) {
    QT_RUN(test_cli_edge_int16_choice);
    QT_RUN(test_cli_edge_bf16_output);
    QT_RUN(test_cli_edge_no_outputs);
    QT_RUN(test_cli_edge_contrib_domain_hint);
    QT_RUN(test_cli_edge_ort_rejects);
}
