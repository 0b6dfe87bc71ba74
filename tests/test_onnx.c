/* tests/onnx — the loader: encodings, external data, attributes, and hostile
 * files (truncation, byte flips, cycles, duplicates, absurd dims). */

static const char *qt_tmpdir(void) {
    static char dir[256];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "build/tmp-%ld", (long)getpid());
        qr_mkdir_p(dir);
    }
    return dir;
}

/* Loads a built model from a temp file; returns the status (graph freed). */
static QrStatus qt_load_built(QtModel *mb, const char *file, QrGraph **keep) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", qt_tmpdir(), file);
    QR_TRY(qt_mb_write(mb, path));
    QrGraph *g = NULL;
    QrStatus st = qr_run_load(path, &g);
    if (keep) *keep = g;
    else if (g) { qr_graph_free(g); free(g); }
    return st;
}

static void test_tensor_encodings(void) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t d3[1] = { 3 };
    struct { QrDType dt; double vals[3]; } cases[] = {
        { QR_DT_S8, { -128, 0, 127 } }, { QR_DT_U8, { 0, 7, 255 } }, { QR_DT_S16, { -32768, 1, 32767 } },
        { QR_DT_U16, { 0, 2, 65535 } }, { QR_DT_BOOL, { 1, 0, 1 } }, { QR_DT_S32, { -5, 6, 7 } },
    };
    char name[32];
    for (int k = 0; k < QR_ARRAY_LEN(cases); k++) {
        snprintf(name, sizeof name, "i32_%d", k);
        Onnx__TensorProto *t = qt_mb_init_raw(&mb, name, cases[k].dt, 1, d3, NULL, 0);
        t->n_int32_data = 3;
        t->int32_data = qr_arena_array(&mb.a, 3, sizeof(int32_t));
        for (int i = 0; i < 3; i++) t->int32_data[i] = (int32_t)cases[k].vals[i];
    }
    Onnx__TensorProto *tf = qt_mb_init_raw(&mb, "f32", QR_DT_F32, 1, d3, NULL, 0);
    float fv[3] = { 1.5f, -2.0f, 3.25f };
    tf->n_float_data = 3; tf->float_data = fv;
    Onnx__TensorProto *th = qt_mb_init_raw(&mb, "f16", QR_DT_F16, 1, d3, NULL, 0);
    int32_t hv[3] = { 0x3c00, 0xc000, 0x7bff };
    th->n_int32_data = 3; th->int32_data = hv;
    Onnx__TensorProto *tl = qt_mb_init_raw(&mb, "i64", QR_DT_S64, 1, d3, NULL, 0);
    int64_t lv[3] = { INT64_MIN, 0, INT64_MAX };
    tl->n_int64_data = 3; tl->int64_data = lv;
    Onnx__TensorProto *td = qt_mb_init_raw(&mb, "f64", QR_DT_F64, 1, d3, NULL, 0);
    double dv[3] = { 1e300, -0.5, 2 };
    td->n_double_data = 3; td->double_data = dv;
    Onnx__TensorProto *tu = qt_mb_init_raw(&mb, "u64", QR_DT_U64, 1, d3, NULL, 0);
    uint64_t uv[3] = { UINT64_MAX, 1, 2 };
    tu->n_uint64_data = 3; tu->uint64_data = uv;
    uint8_t packed[2] = { 0x8f, 0x07 };   /* int4: -1, -8, 7 */
    qt_mb_init_raw(&mb, "s4", QR_DT_S4, 1, d3, packed, 2);
    float rawf[3] = { 7, 8, 9 };
    qt_mb_init_raw(&mb, "raw", QR_DT_F32, 1, d3, rawf, sizeof rawf);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d3);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d3);
    qt_mb_node(&mb, "Add", "add", "x,raw", "y");
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "encodings.onnx", &g);
    qt_mb_free(&mb);
    QT_OK(st);
    for (int k = 0; k < QR_ARRAY_LEN(cases); k++) {
        snprintf(name, sizeof name, "i32_%d", k);
        const QrTensor *t = &g->values[qr_graph_find(g, name)].t;
        QT_CHECK(t->dtype == cases[k].dt && t->numel == 3);
        for (int i = 0; i < 3; i++) QT_CHECKF(qr_tensor_get_f64(t, i) == cases[k].vals[i], "%s[%d]", name, i);
    }
    const QrTensor *t = &g->values[qr_graph_find(g, "f32")].t;
    QT_CHECK(((float *)t->data)[2] == 3.25f);
    t = &g->values[qr_graph_find(g, "f16")].t;
    QT_CHECK(qr_tensor_get_f64(t, 0) == 1.0 && qr_tensor_get_f64(t, 1) == -2.0 && qr_tensor_get_f64(t, 2) == 65504.0);
    t = &g->values[qr_graph_find(g, "i64")].t;
    QT_CHECK(((int64_t *)t->data)[0] == INT64_MIN && ((int64_t *)t->data)[2] == INT64_MAX);
    t = &g->values[qr_graph_find(g, "f64")].t;
    QT_CHECK(((double *)t->data)[0] == 1e300);
    t = &g->values[qr_graph_find(g, "u64")].t;
    QT_CHECK(((uint64_t *)t->data)[0] == UINT64_MAX);
    t = &g->values[qr_graph_find(g, "s4")].t;
    QT_CHECK(((int8_t *)t->data)[0] == -1 && ((int8_t *)t->data)[1] == -8 && ((int8_t *)t->data)[2] == 7);
    qr_graph_free(g);
    free(g);
}

/* Initializers of 64 KiB or more stored as raw_data become tensors without a second copy
 * (onnx.c qr__onnx_pb_adopt: protobuf-c's block is taken over): two of the same size (each gets
 * its own bytes), an int8 one, a Constant's tensor attribute and a TensorProto .pb file; a big
 * float_data array and a packed int4 one are converted as before. Every value checked, every
 * taken block counted, aligned to QR_ALIGN. */
static void test_big_initializers(void) {
    enum { N = 20000, NB = 70001 };
    float *fa = malloc(N * sizeof *fa), *fb = malloc(N * sizeof *fb), *fc = malloc(N * sizeof *fc);
    int8_t *i8 = malloc(NB);
    uint8_t *s4 = malloc(NB);
    QT_CHECK(fa && fb && fc && i8 && s4);
    if (!fa || !fb || !fc || !i8 || !s4) { free(fa); free(fb); free(fc); free(i8); free(s4); return; }
    for (int i = 0; i < N; i++) { fa[i] = (float)i * 0.5f; fb[i] = -(float)i - 0.25f; fc[i] = (float)(i % 97); }
    for (int i = 0; i < NB; i++) { i8[i] = (int8_t)(i * 7); s4[i] = (uint8_t)(i * 13); }
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t dn[1] = { N }, db[1] = { NB }, d4[1] = { 2 * NB }, d2[1] = { 2 };
    qt_mb_init_raw(&mb, "wa", QR_DT_F32, 1, dn, fa, N * sizeof *fa);
    qt_mb_init_raw(&mb, "wb", QR_DT_F32, 1, dn, fb, N * sizeof *fb);
    qt_mb_init_raw(&mb, "wd", QR_DT_S8, 1, db, i8, NB);
    qt_mb_init_raw(&mb, "w4", QR_DT_S4, 1, d4, s4, NB);
    qt_mb_init_raw(&mb, "ws", QR_DT_F32, 1, d2, fa, 2 * sizeof *fa);
    Onnx__TensorProto *tc = qt_mb_init_raw(&mb, "wc", QR_DT_F32, 1, dn, NULL, 0);
    tc->n_float_data = N;
    tc->float_data = fc;
    Onnx__NodeProto *c = qt_mb_node(&mb, "Constant", "c", "", "k");
    Onnx__AttributeProto *a = qt_mb_attr(&mb, c, "value", QR_ATTR_TENSOR);
    a->t = qt_mb_tensor(&mb, "", QR_DT_F32, 1, dn, fb, N * sizeof *fb);
    qt_mb_output(&mb, "k", QR_DT_F32, 1, dn);
    int before = qr__onnx_test_adopted;
    QrGraph *g = NULL, *g2 = NULL;
    QrStatus st = qt_load_built(&mb, "big.onnx", &g);
    int adopted = qr__onnx_test_adopted - before;
    qr_file_map_unsupported = true;           /* the file read instead of mapped: the same graph */
    if (st == QR_OK) st = qt_load_built(&mb, "big.onnx", &g2);
    qr_file_map_unsupported = false;
    qt_mb_free(&mb);
    if (st != QR_OK && g) { qr_graph_free(g); free(g); }
    QT_OK(st);
    bool same_read = g->n_values == g2->n_values && g->n_nodes == g2->n_nodes;
    for (int v = 0; same_read && v < g->n_values; v++) {
        const QrTensor *a = &g->values[v].t, *b = &g2->values[v].t;
        same_read = a->numel == b->numel && a->dtype == b->dtype && !a->data == !b->data &&
                    (!a->data || !memcmp(a->data, b->data, qr_tensor_nbytes(a)));
    }
    qr_graph_free(g2);
    free(g2);
    QT_CHECKF(same_read, "the model read (not mapped) differs from the mapped one");
    bool ok = st == QR_OK;
    const char *bad = "";
    for (int v = 0; ok && v < 6; v++) {
        static const char *const names[] = { "wa", "wb", "wd", "w4", "ws", "wc" };
        const QrTensor *t = &g->values[qr_graph_find(g, names[v])].t;
        bool same = t->owned && (uintptr_t)t->data % QR_ALIGN == 0;
        for (int64_t i = 0; same && i < t->numel; i++)
            same = v == 0 ? ((float *)t->data)[i] == fa[i] : v == 1 ? ((float *)t->data)[i] == fb[i]
                 : v == 2 ? ((int8_t *)t->data)[i] == i8[i] : v == 4 ? ((float *)t->data)[i] == fa[i]
                 : v == 5 ? ((float *)t->data)[i] == fc[i]
                 : ((int8_t *)t->data)[i] == (int8_t)((int)((s4[i / 2] >> (4 * (i % 2)) & 15) ^ 8) - 8);
        if (!same) { ok = false; bad = names[v]; }
    }
    const QrTensor *kt = ok ? qr_node_attr(&g->nodes[0], "value")->t : NULL;
    for (int i = 0; ok && i < N; i++) if (((float *)kt->data)[i] != fb[i]) { ok = false; bad = "the Constant's value"; }
    QT_CHECKF(ok, "%s: values differ from the file's", bad);
    QT_CHECKF(adopted == 4, "%d blocks taken over (wa, wb, wd, the Constant's: 4)", adopted);
    if (g) { qr_graph_free(g); free(g); }
    /* a TensorProto file */
    QrTensor w = {0}, r = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/big.pb", qt_tmpdir());
    st = qr_tensor_set_shape(&w, QR_DT_F32, 1, dn);
    if (st == QR_OK) { w.data = fa; st = qr_pb_write(path, &w, "wa"); }
    before = qr__onnx_test_adopted;
    if (st == QR_OK) st = qr_pb_read(path, &r, NULL, 0);
    QT_OK(st);
    QT_CHECKF(qr__onnx_test_adopted - before == 1 && r.owned && r.numel == N && !memcmp(r.data, fa, N * sizeof *fa),
              "the .pb: %d blocks taken over (1), %lld values", qr__onnx_test_adopted - before, (long long)r.numel);
    qr_tensor_free_data(&r);
    free(fa); free(fb); free(fc); free(i8); free(s4);
}

static void test_tensor_count_mismatch(void) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t d[1] = { 4 };
    float fv[3] = { 1, 2, 3 };
    Onnx__TensorProto *tf = qt_mb_init_raw(&mb, "w", QR_DT_F32, 1, d, NULL, 0);
    tf->n_float_data = 3; tf->float_data = fv;
    qt_mb_output(&mb, "w", QR_DT_F32, 1, d);
    QrStatus st = qt_load_built(&mb, "count.onnx", NULL);
    qt_mb_free(&mb);
    QT_CHECK(st == QR_ERR_INVALID);
    QT_CHECKF(strstr(qr_err_msg(), "'w'") && strstr(qr_err_msg(), "count.onnx"), "%s", qr_err_msg());
}

static void test_dims_overflow(void) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t d[3] = { 1ll << 40, 1ll << 40, 7 };
    qt_mb_init_raw(&mb, "huge", QR_DT_F32, 3, d, "abcd", 4);
    int64_t neg[2] = { 2, -5 };
    qt_mb_output(&mb, "huge", QR_DT_F32, 3, d);
    QrStatus st = qt_load_built(&mb, "overflow.onnx", NULL);
    QT_CHECKF(st == QR_ERR_SHAPE && strstr(qr_err_msg(), "overflow") && strstr(qr_err_msg(), "'huge'"), "%s", qr_err_msg());
    mb.inits[0]->n_dims = 2;
    memcpy(mb.inits[0]->dims, neg, sizeof neg);
    st = qt_load_built(&mb, "negative.onnx", NULL);
    QT_CHECKF(st == QR_ERR_SHAPE && strstr(qr_err_msg(), "negative"), "%s", qr_err_msg());
    qt_mb_free(&mb);
}

/* Writes `len` bytes of pattern at `off` in a (sparse) file. */
static QrStatus qt_write_at(const char *path, uint64_t off, const void *data, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0) return qr_errf(QR_ERR_IO, "%s: %s", path, strerror(errno));
    ssize_t w = pwrite(fd, data, len, (off_t)off);
    close(fd);
    return w == (ssize_t)len ? QR_OK : qr_errf(QR_ERR_IO, "short write");
}

static void test_external_data(void) {
    char path[512], sub[512];
    snprintf(sub, sizeof sub, "%s/ext", qt_tmpdir());
    QT_OK(qr_mkdir_p(sub));
    qt_fmt(path, sizeof path, "%s/weights.bin", sub);
    remove(path);
    float w1[4] = { 1, 2, 3, 4 }, w2[2] = { -7, 8 };
    QT_OK(qt_write_at(path, 16, w1, sizeof w1));
    /* The second tensor lives past 4 GiB in a sparse file: offsets are 64-bit,
     * so the external data of a > 2 GB model is reachable. */
    uint64_t far = (5ull << 30) + 12;
    QT_OK(qt_write_at(path, far, w2, sizeof w2));
    char far_s[32];
    snprintf(far_s, sizeof far_s, "%llu", (unsigned long long)far);
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t d4[1] = { 4 }, d2[1] = { 2 };
    qt_mb_init_external(&mb, "w1", QR_DT_F32, 1, d4, "weights.bin", "16", "16");
    qt_mb_init_external(&mb, "w2", QR_DT_F32, 1, d2, "weights.bin", far_s, NULL);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d4);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d4);
    qt_mb_node(&mb, "Add", "add", "x,w1", "y");
    qt_fmt(path, sizeof path, "%s/model.onnx", sub);
    QT_OK(qt_mb_write(&mb, path));
    QrGraph *g = NULL;
    QT_OK(qr_run_load(path, &g));
    const float *p1 = g->values[qr_graph_find(g, "w1")].t.data, *p2 = g->values[qr_graph_find(g, "w2")].t.data;
    bool ok = p1[3] == 4 && p2[0] == -7 && p2[1] == 8;
    qr_graph_free(g);
    free(g);
    QT_CHECK(ok);

    /* Failures: missing file, outside the folder, absolute, past the end, bad length. */
    struct { const char *loc, *off, *len, *expect; } bad[] = {
        { "missing.bin", "0", "16", "missing.bin" },
        { "../weights.bin", "0", "16", "outside" },
        { "/etc/passwd", "0", "16", "absolute" },
        { "weights.bin", "99999999999", "16", "past the end" },
        { "weights.bin", "16", "12", "length 12" },
        { "weights.bin", "-4", "16", "not a number" },
    };
    for (int k = 0; k < QR_ARRAY_LEN(bad); k++) {
        Onnx__TensorProto *t = mb.inits[0];
        t->n_external_data = 0;
        const char *vals[3] = { bad[k].loc, bad[k].off, bad[k].len };
        const char *keys[3] = { "location", "offset", "length" };
        for (int i = 0; i < 3; i++) {
            Onnx__StringStringEntryProto *e = qr_arena_alloc(&mb.a, sizeof *e);
            Onnx__StringStringEntryProto e0 = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
            *e = e0;
            e->key = (char *)keys[i];
            e->value = (char *)vals[i];
            t->external_data[t->n_external_data++] = e;
        }
        QT_OK(qt_mb_write(&mb, path));
        g = NULL;
        QrStatus st = qr_run_load(path, &g);
        if (g) { qr_graph_free(g); free(g); }
        QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), bad[k].expect) && strstr(qr_err_msg(), "'w1'"),
                  "case %d: %s", k, qr_err_msg());
    }
    qt_mb_free(&mb);
    qt_fmt(path, sizeof path, "%s/weights.bin", sub);
    remove(path);
}

static void test_constant_and_attrs(void) {
    QtModel mb;
    qt_mb_init(&mb, 17);
    int64_t d2[1] = { 2 };
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d2);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d2);
    Onnx__NodeProto *c1 = qt_mb_node(&mb, "Constant", "c1", "", "k1");
    Onnx__AttributeProto *a = qt_mb_attr(&mb, c1, "value_float", QR_ATTR_FLOAT);
    a->has_f = 1; a->f = 0.5f;
    Onnx__NodeProto *c2 = qt_mb_node(&mb, "Constant", "c2", "", "k2");
    float tv[2] = { 10, 20 };
    a = qt_mb_attr(&mb, c2, "value", QR_ATTR_TENSOR);
    a->t = qt_mb_tensor(&mb, "", QR_DT_F32, 1, d2, tv, sizeof tv);
    qt_mb_node(&mb, "Add", "a1", "x,k1", "t");
    Onnx__NodeProto *add = qt_mb_node(&mb, "Add", "a2", "t,k2", "y");
    /* Attributes of every kind survive loading (Add ignores them). */
    a = qt_mb_attr(&mb, add, "s", QR_ATTR_STRING);
    a->has_s = 1; a->s.data = (uint8_t *)"hello"; a->s.len = 5;
    int64_t iv[3] = { 1, -2, 3 };
    qt_mb_attr_ints(&mb, add, "ints", 3, iv);
    a = qt_mb_attr(&mb, add, "floats", QR_ATTR_FLOATS);
    a->n_floats = 2; a->floats = tv;
    a = qt_mb_attr(&mb, add, "strs", QR_ATTR_STRINGS);
    ProtobufCBinaryData sv[2] = { { 1, (uint8_t *)"a" }, { 2, (uint8_t *)"bc" } };
    a->n_strings = 2; a->strings = sv;
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "constant.onnx", &g);
    qt_mb_free(&mb);
    QT_OK(st);
    const QrNode *n = &g->nodes[3];
    const int64_t *ints;
    const float *fl;
    bool attrs_ok = !strcmp(qr_attr_str(n, "s", ""), "hello") && qr_attr_ints(n, "ints", &ints) == 3 && ints[1] == -2 &&
                    qr_attr_floats(n, "floats", &fl) == 2 && fl[1] == 20 && qr_node_attr(n, "strs")->n == 2 &&
                    !strcmp(qr_node_attr(n, "strs")->strings[1], "bc");
    QrTensor in = {0}, out = {0};
    st = qr_tensor_set_shape(&in, QR_DT_F32, 1, d2);
    if (st == QR_OK) st = qr_tensor_alloc_data(&in);
    if (st == QR_OK) { ((float *)in.data)[0] = 1; ((float *)in.data)[1] = 2; st = qr_run_infer(g, &in); }
    if (st == QR_OK) st = qr_run(g, &in, NULL, &out);
    bool vals_ok = st == QR_OK && ((float *)out.data)[0] == 11.5f && ((float *)out.data)[1] == 22.5f;
    qr_tensor_free_data(&in);
    qr_tensor_free_data(&out);
    qr_graph_free(g);
    free(g);
    QT_OK(st);
    QT_CHECK(attrs_ok);
    QT_CHECK(vals_ok);
}

static void test_graph_errors(void) {
    int64_t d2[1] = { 2 };
    QtModel mb;
    /* cycle */
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d2);
    qt_mb_output(&mb, "b", QR_DT_F32, 1, d2);
    qt_mb_node(&mb, "Add", "A", "x,b", "a");
    qt_mb_node(&mb, "Relu", "B", "a", "b");
    QrStatus st = qt_load_built(&mb, "cycle.onnx", NULL);
    qt_mb_free(&mb);
    QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "cycle"), "%s", qr_err_msg());
    /* produced twice */
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d2);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d2);
    qt_mb_node(&mb, "Relu", "A", "x", "y");
    qt_mb_node(&mb, "Relu", "B", "x", "y");
    st = qt_load_built(&mb, "dup.onnx", NULL);
    qt_mb_free(&mb);
    QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "produced twice"), "%s", qr_err_msg());
    /* read but never produced */
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d2);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d2);
    qt_mb_node(&mb, "Add", "A", "x,ghost", "y");
    st = qt_load_built(&mb, "ghost.onnx", NULL);
    qt_mb_free(&mb);
    QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "'ghost'") && strstr(qr_err_msg(), "'A'"), "%s", qr_err_msg());
    /* unsupported operators: all listed in one error, with node names */
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d2);
    qt_mb_output(&mb, "z", QR_DT_F32, 1, d2);
    qt_mb_node(&mb, "FancyOp", "first_bad", "x", "y");
    qt_mb_node(&mb, "com.example.Other", "second_bad", "y", "z");
    QrGraph *g = NULL;
    st = qt_load_built(&mb, "unsupported.onnx", &g);
    qt_mb_free(&mb);
    QT_OK(st);
    QrTensor shp = {0};
    qr_tensor_set_shape(&shp, QR_DT_F32, 1, d2);
    st = qr_run_infer(g, &shp);
    qr_graph_free(g);
    free(g);
    QT_CHECKF(st == QR_ERR_UNSUPPORTED && strstr(qr_err_msg(), "FancyOp (node 'first_bad')") &&
              strstr(qr_err_msg(), "com.example.Other (node 'second_bad')") && strstr(qr_err_msg(), "2 nodes"),
              "%s", qr_err_msg());
}

/* Every prefix of a real model and many random byte flips: the loader either
 * succeeds or fails with a message, never crashes (ASan checks the rest). */
static void test_hostile_bytes(void) {
    unsigned char *buf;
    size_t len;
    QT_OK(qr_file_read("fixtures/cnn_residual/model.onnx", 0, &buf, &len));
    int failures = 0, loaded = 0;
    size_t step = len / 1500 + 1;
    for (size_t cut = 0; cut < len; cut += step) {
        QrGraph *g = NULL;
        QrStatus st = qr_run_load_buffer("trunc.onnx", ".", buf, cut, &g);
        if (st == QR_OK) { loaded++; qr_graph_free(g); free(g); }
        else { failures++; if (strlen(qr_err_msg()) < 10) { qr_aligned_free(buf); QT_CHECKF(0, "empty message at cut %zu", cut); } }
    }
    QT_CHECKF(failures > 0, "no truncation failed");
    unsigned char *mut = malloc(len);
    uint64_t rng = 12345;
    for (int iter = 0; iter < 400; iter++) {
        memcpy(mut, buf, len);
        int flips = 1 + (int)(qr_rng_next(&rng) % 8);
        for (int f = 0; f < flips; f++) mut[qr_rng_next(&rng) % len] ^= (unsigned char)(1u << (qr_rng_next(&rng) % 8));
        QrGraph *g = NULL;
        if (qr_run_load_buffer("flip.onnx", ".", mut, len, &g) == QR_OK) {
            /* A model that still loads must also infer/run or fail cleanly. */
            QrTensor in = {0};
            int64_t d[4] = { 1, 3, 32, 32 };
            qr_tensor_set_shape(&in, QR_DT_F32, 4, d);
            if (qr_tensor_alloc_data(&in) == QR_OK && g->n_inputs == 1 && qr_run_infer(g, &in) == QR_OK) {
                QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
                if (qr_run(g, &in, NULL, outs) == QR_OK)
                    for (int i = 0; i < g->n_outputs; i++) qr_tensor_free_data(&outs[i]);
                free(outs);
            }
            qr_tensor_free_data(&in);
            qr_graph_free(g);
            free(g);
        }
    }
    free(mut);
    qr_aligned_free(buf);
}

/* Every operator's required inputs (the first min_in but those its opt_in lists) must be named:
 * ops read them unchecked, so the loader refuses a node that omits one, naming node and input
 * (fuzz_onnx_run found GatherBlockQuantized with its scales omitted reading NULL). An input the
 * table lists as optional loads. */
static void test_required_inputs(void) {
    int refused = 0, optional = 0;
    for (int i = 0; i < qr_op_count(); i++) {
        const QrOpDef *d = qr_op_at(i);
        if (!d->op_type || d->min_in > 16) continue;
        for (int k = 0; k < d->min_in; k++) {
            QtModel mb;
            qt_mb_init(&mb, 21);
            int64_t d1[1] = { 1 };
            char ins[256] = "", op[96], name[16];
            for (int j = 0; j < d->min_in; j++) {
                snprintf(name, sizeof name, "x%d", j);
                if (j != k) qt_mb_input(&mb, name, QR_DT_F32, 1, d1);
                snprintf(ins + strlen(ins), sizeof ins - strlen(ins), "%s%s", j ? "," : "", j == k ? "" : name);
            }
            qt_mb_output(&mb, "y", QR_DT_F32, 1, d1);
            snprintf(op, sizeof op, "%s%s%s", d->domain, d->domain[0] ? "." : "", d->op_type);
            char outs[64] = "y";
            for (int j = 1; j < d->min_out; j++) snprintf(outs + strlen(outs), sizeof outs - strlen(outs), ",y%d", j);
            qt_mb_node(&mb, op, "n", ins, outs);
            qr_err_clear();
            QrStatus st = qt_load_built(&mb, "required.onnx", NULL);
            qt_mb_free(&mb);
            bool opt = d->opt_in >> k & 1u;
            char want[64];
            /* a lone omitted input cannot be spelled in the builder's list: 0 inputs, refused too */
            if (d->min_in == 1) snprintf(want, sizeof want, "has 0 inputs");
            else snprintf(want, sizeof want, "required input %d has no name", k);
            if (opt) {
                optional++;
                QT_CHECKF(!strstr(qr_err_msg(), "required input"), "%s input %d is optional: %s", op, k, qr_err_msg());
            } else {
                refused += st == QR_ERR_INVALID && strstr(qr_err_msg(), want) && strstr(qr_err_msg(), "'n'");
                QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), want) && strstr(qr_err_msg(), "'n'"),
                          "%s without input %d: %s", op, k, st == QR_OK ? "loaded" : qr_err_msg());
            }
        }
    }
    QT_CHECKF(refused > 200 && optional >= 10, "refused %d, optional %d", refused, optional);
}

static void qt_onnx_all(void) {
    QT_RUN(test_tensor_encodings);
    QT_RUN(test_big_initializers);
    QT_RUN(test_tensor_count_mismatch);
    QT_RUN(test_dims_overflow);
    QT_RUN(test_external_data);
    QT_RUN(test_constant_and_attrs);
    QT_RUN(test_graph_errors);
    QT_RUN(test_hostile_bytes);
    QT_RUN(test_required_inputs);
}
