/* tests/harden — hostile and degenerate input: absurd protobuf lengths, sizes refused before
 * anything is allocated, nodes listed before their producers, empty tensors through ops,
 * NaN/Inf everywhere, 10 000-node graphs; every fuzzer finding in tests/regress/ replayed
 * through its fuzz target's body; the NEON kernels against ref (aarch64 builds). */

#include "../fuzz/fuzz_targets.h"
#include <sys/resource.h>

#if defined(__SANITIZE_ADDRESS__)
#define QT_HD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QT_HD_ASAN 1
#endif
#endif

/* ==== helpers ====================================================================== */

/* t = new owned tensor of shape dims filled from vals (as doubles; NULL = zeros). */
static QrStatus qt_hd_tensor(QrTensor *t, QrDType dt, int rank, const int64_t *dims, const double *vals) {
    memset(t, 0, sizeof *t);
    QR_TRY(qr_tensor_set_shape(t, dt, rank, dims));
    QR_TRY(qr_tensor_alloc_data(t));
    for (int64_t i = 0; vals && i < t->numel; i++) qr_tensor_set_f64(t, i, vals[i]);
    return QR_OK;
}

/* Loads the built model, infers shapes from in[] (shapes only, as the CLI does), runs it and
 * fills out[0..graph outputs) (owned). On failure nothing is left allocated. */
static QrStatus qt_hd_run(QtModel *mb, const char *file, const QrTensor *in, QrTensor *out) {
    QrGraph *g = NULL;
    QR_TRY(qt_load_built(mb, file, &g));
    QrTensor shapes[8];
    QrStatus st = g->n_inputs <= 8 ? QR_OK : qr_errf(QR_ERR_INVALID, "too many inputs");
    for (int i = 0; st == QR_OK && i < g->n_inputs; i++) {
        memset(&shapes[i], 0, sizeof shapes[i]);
        st = qr_tensor_set_shape(&shapes[i], in[i].dtype, in[i].rank, in[i].dims);
    }
    if (st == QR_OK) st = qr_graph_infer(g, shapes);
    if (st == QR_OK) st = qr_run(g, in, NULL, out);
    qr_graph_free(g);
    free(g);
    return st;
}

static void qt_hd_free(QrTensor *t, int n) { for (int i = 0; i < n; i++) qr_tensor_free_data(&t[i]); }

/* ---- raw protobuf writer, for lengths no encoder would produce -------------------------- */

typedef struct QtHdPb { unsigned char b[512]; size_t n; } QtHdPb;

static void qt_hd_varint(QtHdPb *o, uint64_t v) {
    do { o->b[o->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)); v >>= 7; } while (v);
}
static void qt_hd_key(QtHdPb *o, int field, int wire) { qt_hd_varint(o, (uint64_t)field << 3 | (uint64_t)wire); }
static void qt_hd_bytes(QtHdPb *o, const void *p, size_t n) { memcpy(o->b + o->n, p, n); o->n += n; }
/* field (LEN) holding the bytes of `sub` */
static void qt_hd_sub(QtHdPb *o, int field, const QtHdPb *sub) {
    qt_hd_key(o, field, 2);
    qt_hd_varint(o, sub->n);
    qt_hd_bytes(o, sub->b, sub->n);
}

/* ---- "refused before allocating": address-space limit -------------------------------------
 * Outside ASan (which reserves terabytes of shadow memory) a loader runs under an RLIMIT_AS
 * of the process's current size + headroom: code that allocated a declared multi-GiB tensor
 * before checking its data fails with QR_ERR_NOMEM instead of the expected error. */
typedef struct QtHdLimit { struct rlimit old; bool set; } QtHdLimit;

static void qt_hd_limit_on(QtHdLimit *l, size_t headroom) {
    l->set = false;
#ifndef QT_HD_ASAN
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f) return;
    int ok = fscanf(f, "%lu", &pages) == 1;
    fclose(f);
    if (!ok || getrlimit(RLIMIT_AS, &l->old) != 0) return;
    struct rlimit nl = l->old;
    rlim_t want = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)headroom;
    if (nl.rlim_max != RLIM_INFINITY && want > nl.rlim_max) return;
    nl.rlim_cur = want;
    l->set = setrlimit(RLIMIT_AS, &nl) == 0;
#else
    QR_UNUSED(headroom);
#endif
}

static void qt_hd_limit_off(QtHdLimit *l) {
    if (l->set) setrlimit(RLIMIT_AS, &l->old);
    l->set = false;
}

/* ==== fuzzer findings ================================================================= */

/* Every file tests/regress/<target>-<name> goes through the body of fuzz target <target>
 * (fuzz/fuzz_targets.h); each was a crash, leak, UB or out-of-memory before its fix. The
 * readers run with 64 MB of address space to spare (not under ASan): like the fuzzers'
 * -malloc_limit_mb=64, needing more for these small files is a finding. */
static void test_harden_regress(void) {
    DIR *d = opendir("tests/regress");
    QT_CHECKF(d, "tests/regress/ is missing");
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < QR_ARRAY_LEN(names))
        if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, qt_strcmp_ptr);
    static const struct { const char *prefix; int (*fn)(const uint8_t *, size_t); } targets[] = {
        { "onnx_load-", qr__hd_fuzz_onnx_load }, { "onnx_run-", qr__hd_fuzz_onnx_run },
        { "npy-", qr__hd_fuzz_npy }, { "pb-", qr__hd_fuzz_pb },
    };
    int replayed = 0;
    for (int i = 0; i < n; i++) {
        char path[512], test[300];
        snprintf(path, sizeof path, "tests/regress/%s", names[i]);
        snprintf(test, sizeof test, "regress/%s", names[i]);
        int t = -1;
        for (int k = 0; k < QR_ARRAY_LEN(targets); k++)
            if (!strncmp(names[i], targets[k].prefix, strlen(targets[k].prefix))) t = k;
        unsigned char *buf = NULL;
        size_t len = 0;
        if (t < 0) qt_record(test, false, "no fuzz target for this file name (onnx_load-, onnx_run-, npy-, pb-)");
        else if (qr_file_read(path, 0, &buf, &len) != QR_OK) qt_record(test, false, "%s", qr_err_msg());
        else {
            QtHdLimit lim;
            bool reader = t != 1;                   /* not onnx_run: that one caps itself */
            if (reader) qt_hd_limit_on(&lim, (size_t)64 << 20);
            qr_err_clear();
            int rc = targets[t].fn(buf, len);
            if (reader) qt_hd_limit_off(&lim);
            bool oom = strstr(qr_err_msg(), "cannot allocate") || strstr(qr_err_msg(), "out of memory");
            qt_record(test, rc == 0 && !oom, "%s", rc ? "the target body reports a broken contract" : qr_err_msg());
            replayed++;
        }
        qr_aligned_free(buf);
        free(names[i]);
    }
    QT_CHECKF(replayed > 0, "no regression inputs replayed");
}

/* ==== absurd lengths and sizes ========================================================== */

/* Protobuf length prefixes far beyond the data: a parse error naming the file, not a huge
 * allocation or a read past the buffer. */
static void test_harden_absurd_lengths(void) {
    static const uint64_t lens[] = { 0xffffffffull, (1ull << 40), 0x7fffffffffffffffull, 0xfffffffffffffff0ull };
    for (int k = 0; k < QR_ARRAY_LEN(lens); k++) {
        /* ModelProto.graph (7) declares lens[k] bytes; 12 follow. */
        QtHdPb m = { .n = 0 };
        qt_hd_key(&m, 1, 0); qt_hd_varint(&m, 8);                      /* ir_version */
        qt_hd_key(&m, 7, 2); qt_hd_varint(&m, lens[k]);
        qt_hd_bytes(&m, "\x0a\x02nn\x12\x01x\x22\x01y\x2a\x00", 12);
        QrGraph *g = NULL;
        QrStatus st = qr_onnx_load_buffer("absurd.onnx", ".", m.b, m.n, &g);
        QT_CHECKF(st == QR_ERR_PARSE && !g && strstr(qr_err_msg(), "absurd.onnx"), "len %llu: %s: %s",
                  (unsigned long long)lens[k], qr_status_name(st), qr_err_msg());
        /* Nested: GraphProto.node (1) -> NodeProto.input (1) string of lens[k] bytes. */
        QtHdPb node = { .n = 0 }, graph = { .n = 0 }, model = { .n = 0 };
        qt_hd_key(&node, 1, 2); qt_hd_varint(&node, lens[k]); qt_hd_bytes(&node, "abc", 3);
        qt_hd_sub(&graph, 1, &node);
        qt_hd_key(&model, 1, 0); qt_hd_varint(&model, 8);
        qt_hd_sub(&model, 7, &graph);
        st = qr_onnx_load_buffer("nested.onnx", ".", model.b, model.n, &g);
        QT_CHECKF(st == QR_ERR_PARSE && !g, "nested len %llu: %s", (unsigned long long)lens[k], qr_err_msg());
        /* Initializer (graph field 5) whose packed dims (TensorProto field 1) claim lens[k] bytes. */
        QtHdPb tensor = { .n = 0 }, g2 = { .n = 0 }, m2 = { .n = 0 };
        qt_hd_key(&tensor, 1, 2); qt_hd_varint(&tensor, lens[k]); qt_hd_bytes(&tensor, "\x02\x03", 2);
        qt_hd_sub(&g2, 5, &tensor);
        qt_hd_sub(&m2, 7, &g2);
        st = qr_onnx_load_buffer("dims.onnx", ".", m2.b, m2.n, &g);
        QT_CHECKF(st == QR_ERR_PARSE && !g, "dims len %llu: %s", (unsigned long long)lens[k], qr_err_msg());
        /* A bare TensorProto .pb whose raw_data (9) claims lens[k] bytes. */
        QtHdPb pb = { .n = 0 };
        qt_hd_key(&pb, 1, 0); qt_hd_varint(&pb, 4);                      /* dims: [4] */
        qt_hd_key(&pb, 2, 0); qt_hd_varint(&pb, QR_DT_F32);             /* data_type */
        qt_hd_key(&pb, 9, 2); qt_hd_varint(&pb, lens[k]); qt_hd_bytes(&pb, "abcd", 4);
        char path[512];
        snprintf(path, sizeof path, "%s/absurd.pb", qt_tmpdir());
        QT_OK(qr_file_write_atomic(path, pb.b, pb.n));
        QrTensor t = {0};
        st = qr_pb_read(path, &t, NULL, 0);
        QT_CHECKF(st == QR_ERR_PARSE && !t.data && strstr(qr_err_msg(), "absurd.pb"), "pb len %llu: %s",
                  (unsigned long long)lens[k], qr_err_msg());
    }
    /* A varint longer than 10 bytes is malformed. */
    QtHdPb bad = { .n = 0 };
    qt_hd_key(&bad, 1, 0);
    qt_hd_bytes(&bad, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
    QrGraph *g = NULL;
    QT_CHECK(qr_onnx_load_buffer("varint.onnx", ".", bad.b, bad.n, &g) == QR_ERR_PARSE && !g);
    /* .npy: a version-2 header claiming 4 GiB. */
    unsigned char npy[64] = "\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr': '<f4'";
    QrTensor t = {0};
    QT_CHECK(qr_npy_parse(npy, sizeof npy, &t) == QR_ERR_PARSE && !t.data && strstr(qr_err_msg(), "header"));
}

/* A declared size far beyond the data present is refused before the tensor is allocated:
 * initializer (raw_data, typed field, external data), .pb file and .npy file. */
static void test_harden_size_before_alloc(void) {
    int64_t big[1] = { (int64_t)1 << 33 };          /* 32 GiB of float32: under QR_MAX_TENSOR_BYTES */
    QtModel mb;
    struct { const char *what, *expect; } cases[] = {
        { "raw", "raw_data has 4 bytes" }, { "typed", "has 3 stored values" }, { "external", "external data" },
    };
    char dir[512], wpath[600];
    snprintf(dir, sizeof dir, "%s/sizes", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    snprintf(wpath, sizeof wpath, "%s/w.bin", dir);
    QT_OK(qr_file_write_atomic(wpath, "0123456789abcdef", 16));
    for (int k = 0; k < QR_ARRAY_LEN(cases); k++) {
        qt_mb_init(&mb, 17);
        if (k == 0) qt_mb_init_raw(&mb, "huge", QR_DT_F32, 1, big, "abcd", 4);
        if (k == 1) {
            Onnx__TensorProto *tp = qt_mb_init_raw(&mb, "huge", QR_DT_F32, 1, big, NULL, 0);
            static float three[3] = { 1, 2, 3 };
            tp->n_float_data = 3;
            tp->float_data = three;
        }
        if (k == 2) qt_mb_init_external(&mb, "huge", QR_DT_F32, 1, big, "w.bin", "0", NULL);
        qt_mb_output(&mb, "huge", QR_DT_F32, 1, big);
        char path[700];
        snprintf(path, sizeof path, "%s/%s.onnx", dir, cases[k].what);
        QrStatus st = qt_mb_write(&mb, path);
        qt_mb_free(&mb);
        QT_OK(st);
        QtHdLimit lim;
        QrGraph *g = NULL;
        qt_hd_limit_on(&lim, (size_t)1 << 30);
        st = qr_onnx_load(path, &g);
        qt_hd_limit_off(&lim);
        if (g) { qr_graph_free(g); free(g); }
        QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), cases[k].expect) && strstr(qr_err_msg(), "'huge'"),
                  "%s: %s: %s", cases[k].what, qr_status_name(st), qr_err_msg());
    }
    /* Beyond QR_MAX_TENSOR_BYTES: refused from the shape alone. */
    int64_t over[2] = { (int64_t)1 << 20, (int64_t)1 << 20 };    /* 4 TiB of float32 */
    qt_mb_init(&mb, 17);
    qt_mb_init_raw(&mb, "over", QR_DT_F32, 2, over, "abcd", 4);
    qt_mb_output(&mb, "over", QR_DT_F32, 2, over);
    QrStatus st = qt_load_built(&mb, "over.onnx", NULL);
    qt_mb_free(&mb);
    QT_CHECKF(st == QR_ERR_NOMEM && strstr(qr_err_msg(), "larger than the limit") && strstr(qr_err_msg(), "'over'"),
              "%s", qr_err_msg());
    /* The same through the .pb reader. */
    QtHdPb pb = { .n = 0 };
    qt_hd_key(&pb, 1, 0); qt_hd_varint(&pb, (uint64_t)1 << 33);
    qt_hd_key(&pb, 2, 0); qt_hd_varint(&pb, QR_DT_F32);
    qt_hd_key(&pb, 9, 2); qt_hd_varint(&pb, 4); qt_hd_bytes(&pb, "abcd", 4);
    char path[600];
    snprintf(path, sizeof path, "%s/big.pb", dir);
    QT_OK(qr_file_write_atomic(path, pb.b, pb.n));
    QrTensor t = {0};
    QtHdLimit lim;
    qt_hd_limit_on(&lim, (size_t)1 << 30);
    st = qr_pb_read(path, &t, NULL, 0);
    qt_hd_limit_off(&lim);
    qr_tensor_free_data(&t);
    QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "raw_data has 4 bytes"), "%s", qr_err_msg());
    /* .npy: a 32 GiB shape with 16 bytes of data; an overflowing shape; one over the limit. */
    const char *hdrs[] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (8589934592,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (34359738368,), }",
    };
    QrStatus want[] = { QR_ERR_PARSE, QR_ERR_SHAPE, QR_ERR_NOMEM };
    for (int k = 0; k < QR_ARRAY_LEN(hdrs); k++) {
        unsigned char buf[256] = "\x93NUMPY\x01\x00";
        size_t hl = strlen(hdrs[k]);
        buf[8] = (unsigned char)hl;
        memcpy(buf + 10, hdrs[k], hl);
        qt_hd_limit_on(&lim, (size_t)1 << 30);
        st = qr_npy_parse(buf, 10 + hl + 16, &t);
        qt_hd_limit_off(&lim);
        qr_tensor_free_data(&t);
        QT_CHECKF(st == want[k], "npy %d: %s: %s", k, qr_status_name(st), qr_err_msg());
    }
}

/* Overflowing dims declared on a graph input, and shapes computed inside the graph
 * (ConstantOfShape, Expand, Tile, Reshape) that are absurd: clean errors from inference. */
static void test_harden_dims_in_graph(void) {
    QtModel mb;
    int64_t huge[3] = { (int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40 };
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 3, huge);
    qt_mb_output(&mb, "y", QR_DT_F32, 3, huge);
    qt_mb_node(&mb, "Relu", "r", "x", "y");
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "huge_input.onnx", &g);
    qt_mb_free(&mb);
    QT_OK(st);
    QrTensor shp = {0};
    st = qr_graph_input_shapes(g, NULL, &shp);
    qr_graph_free(g);
    free(g);
    QT_CHECKF(st == QR_ERR_SHAPE && strstr(qr_err_msg(), "overflow") && strstr(qr_err_msg(), "'x'"), "%s", qr_err_msg());

    /* op, its shape-like second input, and the error class expected */
    struct { const char *op; int64_t vals[3]; int n; } cases[] = {
        { "ConstantOfShape", { (int64_t)1 << 40, (int64_t)1 << 40, 4 }, 3 },
        { "ConstantOfShape", { 4, -1, 2 }, 3 },
        { "Expand", { (int64_t)1 << 62, 2, 1 }, 2 },
        { "Tile", { (int64_t)1 << 40, (int64_t)1 << 40, 1 }, 2 },
        { "Reshape", { -2, 2, 1 }, 2 },
        { "Reshape", { -1, -1, 1 }, 2 },
        { "Reshape", { 3, 3, 1 }, 2 },
    };
    int64_t d2[2] = { 2, 2 };
    for (int k = 0; k < QR_ARRAY_LEN(cases); k++) {
        qt_mb_init(&mb, 17);
        int64_t n1[1] = { cases[k].n };
        qt_mb_init_raw(&mb, "s", QR_DT_S64, 1, n1, cases[k].vals, (size_t)cases[k].n * 8);
        qt_mb_input(&mb, "x", QR_DT_F32, 2, d2);
        qt_mb_output(&mb, "y", QR_DT_F32, 2, d2);
        if (!strcmp(cases[k].op, "ConstantOfShape")) {
            qt_mb_node(&mb, "ConstantOfShape", "c", "s", "c_out");
            qt_mb_node(&mb, "Add", "a", "x,c_out", "y");
        } else {
            qt_mb_node(&mb, cases[k].op, "op", "x,s", "y");
        }
        QrTensor x = {0}, y = {0};
        QT_OK(qt_hd_tensor(&x, QR_DT_F32, 2, d2, NULL));
        char file[64];
        snprintf(file, sizeof file, "dims_%d.onnx", k);
        st = qt_hd_run(&mb, file, &x, &y);
        qt_mb_free(&mb);
        qr_tensor_free_data(&x);
        qr_tensor_free_data(&y);
        QT_CHECKF(st != QR_OK && strlen(qr_err_msg()) > 10 && strstr(qr_err_msg(), cases[k].op),
                  "case %d (%s): %s: %s", k, cases[k].op, qr_status_name(st), qr_err_msg());
    }
}

/* ==== graph structure =================================================================== */

/* Nodes listed before the nodes producing their inputs run in dependency order; a node
 * reading its own output and a graph output nobody produces are refused by name. */
static void test_harden_use_before_produce(void) {
    QtModel mb;
    int64_t d3[1] = { 3 };
    double one = 1, two = 2;
    float onef = (float)one, twof = (float)two;
    int64_t scalar[1] = { 1 };
    qt_mb_init(&mb, 17);
    qt_mb_init_raw(&mb, "one", QR_DT_F32, 1, scalar, &onef, 4);
    qt_mb_init_raw(&mb, "two", QR_DT_F32, 1, scalar, &twof, 4);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d3);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d3);
    qt_mb_node(&mb, "Relu", "C", "b", "y");          /* reads b, produced two nodes later */
    qt_mb_node(&mb, "Mul", "B", "a,two", "b");
    qt_mb_node(&mb, "Add", "A", "x,one", "a");
    double xv[3] = { -3, 0.5, 2 };
    QrTensor x, y = {0};
    QT_OK(qt_hd_tensor(&x, QR_DT_F32, 1, d3, xv));
    QrStatus st = qt_hd_run(&mb, "reversed.onnx", &x, &y);
    qt_mb_free(&mb);
    qr_tensor_free_data(&x);
    QT_OK(st);
    bool ok = y.numel == 3;
    for (int i = 0; ok && i < 3; i++) ok = ((float *)y.data)[i] == (float)fmax(0.0, (xv[i] + one) * two);
    qr_tensor_free_data(&y);
    QT_CHECK(ok);

    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d3);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d3);
    qt_mb_node(&mb, "Add", "selfish", "x,y", "y");
    st = qt_load_built(&mb, "self.onnx", NULL);
    qt_mb_free(&mb);
    QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "cycle") && strstr(qr_err_msg(), "selfish"), "%s",
              qr_err_msg());

    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d3);
    qt_mb_output(&mb, "nowhere", QR_DT_F32, 1, d3);
    qt_mb_node(&mb, "Relu", "r", "x", "y");
    st = qt_load_built(&mb, "unproduced.onnx", NULL);
    qt_mb_free(&mb);
    QT_CHECKF(st == QR_ERR_INVALID && strstr(qr_err_msg(), "'nowhere'") && strstr(qr_err_msg(), "never produced"),
              "%s", qr_err_msg());
}

/* ==== empty tensors ========================================================================= */

/* Zero-size dims through MatMul (K = 0 gives zeros, M = 0 gives an empty result), Conv (an
 * empty batch runs; an empty spatial dim is refused by name, as ONNX Runtime refuses it),
 * Concat (an empty part), reductions over an empty axis
 * (ReduceSum 0, ReduceProd 1: the identities) and elementwise ops. */
static void test_harden_empty_tensors(void) {
    QtModel mb;
    QrTensor in[2], out[4];
    memset(out, 0, sizeof out);
    /* MatMul [2,0] x [0,3] -> [2,3] of zeros; [0,4] x [4,3] -> [0,3] */
    int64_t a20[2] = { 2, 0 }, b03[2] = { 0, 3 }, y23[2] = { 2, 3 }, a04[2] = { 0, 4 }, b43[2] = { 4, 3 }, y03[2] = { 0, 3 };
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "a", QR_DT_F32, 2, a20);
    qt_mb_input(&mb, "b", QR_DT_F32, 2, b03);
    qt_mb_output(&mb, "y", QR_DT_F32, 2, y23);
    qt_mb_node(&mb, "MatMul", "mm", "a,b", "y");
    QT_OK(qt_hd_tensor(&in[0], QR_DT_F32, 2, a20, NULL));
    QT_OK(qt_hd_tensor(&in[1], QR_DT_F32, 2, b03, NULL));
    QrStatus st = qt_hd_run(&mb, "mm_k0.onnx", in, out);
    qt_mb_free(&mb);
    qt_hd_free(in, 2);
    QT_OK(st);
    bool ok = out[0].rank == 2 && out[0].dims[0] == 2 && out[0].dims[1] == 3;
    for (int i = 0; ok && i < 6; i++) ok = ((float *)out[0].data)[i] == 0.0f;
    qt_hd_free(out, 1);
    QT_CHECKF(ok, "MatMul with K = 0 must give zeros of shape [2, 3]");
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "a", QR_DT_F32, 2, a04);
    qt_mb_input(&mb, "b", QR_DT_F32, 2, b43);
    qt_mb_output(&mb, "y", QR_DT_F32, 2, y03);
    qt_mb_node(&mb, "MatMul", "mm", "a,b", "y");
    QT_OK(qt_hd_tensor(&in[0], QR_DT_F32, 2, a04, NULL));
    QT_OK(qt_hd_tensor(&in[1], QR_DT_F32, 2, b43, NULL));
    st = qt_hd_run(&mb, "mm_m0.onnx", in, out);
    qt_mb_free(&mb);
    qt_hd_free(in, 2);
    QT_OK(st);
    ok = out[0].rank == 2 && out[0].dims[0] == 0 && out[0].dims[1] == 3 && out[0].numel == 0;
    qt_hd_free(out, 1);
    QT_CHECK(ok);

    /* Conv: x [0,2,5,5] -> [0,3,3,3]; x [1,2,0,5] with a 1x1 kernel: a shape error. */
    for (int k = 0; k < 2; k++) {
        int64_t xd[4] = { k ? 1 : 0, 2, k ? 0 : 5, 5 }, wd[4] = { 3, 2, k ? 1 : 3, k ? 1 : 3 };
        int64_t yd[4] = { k ? 1 : 0, 3, k ? 0 : 3, k ? 5 : 3 };
        float w[54];
        for (int i = 0; i < 54; i++) w[i] = 0.1f * (float)i;
        qt_mb_init(&mb, 17);
        qt_mb_init_raw(&mb, "w", QR_DT_F32, 4, wd, w, (size_t)(3 * 2 * wd[2] * wd[3]) * 4);
        qt_mb_input(&mb, "x", QR_DT_F32, 4, xd);
        qt_mb_output(&mb, "y", QR_DT_F32, 4, yd);
        qt_mb_node(&mb, "Conv", "conv", "x,w", "y");
        QT_OK(qt_hd_tensor(&in[0], QR_DT_F32, 4, xd, NULL));
        st = qt_hd_run(&mb, "conv_empty.onnx", in, out);
        qt_mb_free(&mb);
        qt_hd_free(in, 1);
        if (k == 1) {                               /* ONNX Runtime refuses it too ("Invalid input shape") */
            QT_CHECKF(st == QR_ERR_SHAPE && strstr(qr_err_msg(), "'conv'"), "conv %d: %s", k, qr_err_msg());
            continue;
        }
        QT_CHECKF(st == QR_OK, "conv %d: %s", k, qr_err_msg());
        ok = out[0].rank == 4 && out[0].numel == 0;
        for (int d = 0; ok && d < 4; d++) ok = out[0].dims[d] == yd[d];
        qt_hd_free(out, 1);
        QT_CHECKF(ok, "conv %d: wrong output shape", k);
    }

    /* Concat axis 0 of [2,3] and [0,3] is the first input; Relu/Add keep empty shapes. */
    int64_t c0[2] = { 0, 3 };
    double vals[6] = { 1, -2, 3, -4, 5, -6 };
    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "a", QR_DT_F32, 2, y23);
    qt_mb_input(&mb, "b", QR_DT_F32, 2, c0);
    qt_mb_output(&mb, "cat", QR_DT_F32, 2, y23);
    qt_mb_output(&mb, "r", QR_DT_F32, 2, c0);
    qt_mb_output(&mb, "s", QR_DT_F32, 2, c0);
    Onnx__NodeProto *n = qt_mb_node(&mb, "Concat", "cat", "a,b", "cat");
    Onnx__AttributeProto *at = qt_mb_attr(&mb, n, "axis", QR_ATTR_INT);
    at->has_i = 1;
    at->i = 0;
    qt_mb_node(&mb, "Relu", "relu", "b", "r");
    qt_mb_node(&mb, "Add", "add", "b,r", "s");
    QT_OK(qt_hd_tensor(&in[0], QR_DT_F32, 2, y23, vals));
    QT_OK(qt_hd_tensor(&in[1], QR_DT_F32, 2, c0, NULL));
    st = qt_hd_run(&mb, "concat_empty.onnx", in, out);
    qt_mb_free(&mb);
    qt_hd_free(in, 2);
    QT_OK(st);
    ok = out[0].numel == 6 && out[0].dims[0] == 2 && out[1].numel == 0 && out[2].numel == 0 && out[2].dims[1] == 3;
    for (int i = 0; ok && i < 6; i++) ok = ((float *)out[0].data)[i] == (float)vals[i];
    qt_hd_free(out, 3);
    QT_CHECK(ok);

    /* ReduceSum / ReduceProd over an empty axis: [2,0] -> [2] of 0 and of 1. */
    int64_t e20[2] = { 2, 0 }, r2[1] = { 2 }, ax1[1] = { 1 }, one[1] = { 1 };
    qt_mb_init(&mb, 18);
    qt_mb_init_raw(&mb, "axes", QR_DT_S64, 1, one, ax1, 8);
    qt_mb_input(&mb, "x", QR_DT_F32, 2, e20);
    qt_mb_output(&mb, "sum", QR_DT_F32, 1, r2);
    qt_mb_output(&mb, "prod", QR_DT_F32, 1, r2);
    const char *ops[2] = { "ReduceSum", "ReduceProd" }, *outs[2] = { "sum", "prod" };
    for (int k = 0; k < 2; k++) {
        n = qt_mb_node(&mb, ops[k], ops[k], "x,axes", outs[k]);
        at = qt_mb_attr(&mb, n, "keepdims", QR_ATTR_INT);
        at->has_i = 1;
        at->i = 0;
    }
    QT_OK(qt_hd_tensor(&in[0], QR_DT_F32, 2, e20, NULL));
    st = qt_hd_run(&mb, "reduce_empty.onnx", in, out);
    qt_mb_free(&mb);
    qt_hd_free(in, 1);
    QT_OK(st);
    ok = out[0].rank == 1 && out[0].dims[0] == 2 && out[1].rank == 1 && out[1].dims[0] == 2;
    for (int i = 0; ok && i < 2; i++) ok = ((float *)out[0].data)[i] == 0.0f && ((float *)out[1].data)[i] == 1.0f;
    qt_hd_free(out, 2);
    QT_CHECKF(ok, "reductions over an empty axis must give their identity");
}

/* ==== NaN / Inf everywhere =============================================================== */

/* Special values in the input and in the weights, through Conv, pooling, Softmax, Q/DQ with
 * zero, infinite and NaN scales, Cast to integers: the run succeeds (or fails with a
 * message), IEEE results hold where they are defined, and statistics count the specials.
 * Under `make asan` (UBSan) no float->int conversion may overflow. */
static void test_harden_nonfinite(void) {
    const double sp[8] = { NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-45, 3.4e38, -3.4e38 };
    int64_t xd[4] = { 1, 2, 4, 4 }, wd[4] = { 2, 2, 3, 3 }, s1[1] = { 1 };
    float w[36];
    for (int i = 0; i < 36; i++) w[i] = (float)sp[i % 8];
    float scales[3] = { 0.0f, INFINITY, NAN };
    uint8_t zp = 0;
    QtModel mb;
    qt_mb_init(&mb, 19);
    qt_mb_init_raw(&mb, "w", QR_DT_F32, 4, wd, w, sizeof w);
    char name[32];
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "scale%d", k);
        qt_mb_init_raw(&mb, name, QR_DT_F32, 0, s1, &scales[k], 4);
    }
    qt_mb_init_raw(&mb, "zp", QR_DT_U8, 0, s1, &zp, 1);
    int64_t flat[1] = { 32 };
    qt_mb_init_raw(&mb, "flat", QR_DT_S64, 1, s1, flat, 8);
    qt_mb_input(&mb, "x", QR_DT_F32, 4, xd);
    const char *outs[] = { "conv", "pool", "soft", "q0", "dq0", "q1", "dq1", "q2", "dq2", "i8", "i32", "sig", "relu",
                           "sum", "prod" };
    int64_t od[1] = { 32 }, pd[4] = { 1, 2, 3, 3 };
    qt_mb_output(&mb, outs[0], QR_DT_F32, 4, xd);          /* 3x3 conv, pads 1 */
    qt_mb_output(&mb, outs[1], QR_DT_F32, 4, pd);          /* 2x2 max pool, stride 1 */
    for (int k = 2; k < QR_ARRAY_LEN(outs); k++) {
        bool q = k == 3 || k == 5 || k == 7, cast = k == 9 || k == 10;
        qt_mb_output(&mb, outs[k], q ? QR_DT_U8 : cast ? (k == 9 ? QR_DT_S8 : QR_DT_S32) : QR_DT_F32, 1, od);
    }
    Onnx__NodeProto *n = qt_mb_node(&mb, "Conv", "conv", "x,w", "conv");
    int64_t pads[4] = { 1, 1, 1, 1 };
    qt_mb_attr_ints(&mb, n, "pads", 4, pads);
    n = qt_mb_node(&mb, "MaxPool", "pool", "x", "pool");
    int64_t k2[2] = { 2, 2 };
    qt_mb_attr_ints(&mb, n, "kernel_shape", 2, k2);
    qt_mb_node(&mb, "Reshape", "flatten", "x,flat", "xf");
    qt_mb_node(&mb, "Softmax", "soft", "xf", "soft");
    for (int k = 0; k < 3; k++) {
        char ins[64], q[8], dq[8];
        snprintf(ins, sizeof ins, "xf,scale%d,zp", k);
        snprintf(q, sizeof q, "q%d", k);
        snprintf(dq, sizeof dq, "dq%d", k);
        qt_mb_node(&mb, "QuantizeLinear", q, ins, q);
        snprintf(ins, sizeof ins, "%s,scale%d,zp", q, k);
        qt_mb_node(&mb, "DequantizeLinear", dq, ins, dq);
    }
    n = qt_mb_node(&mb, "Cast", "i8", "xf", "i8");
    Onnx__AttributeProto *a = qt_mb_attr(&mb, n, "to", QR_ATTR_INT);
    a->has_i = 1; a->i = QR_DT_S8;
    n = qt_mb_node(&mb, "Cast", "i32", "xf", "i32");
    a = qt_mb_attr(&mb, n, "to", QR_ATTR_INT);
    a->has_i = 1; a->i = QR_DT_S32;
    qt_mb_node(&mb, "Sigmoid", "sig", "xf", "sig");
    qt_mb_node(&mb, "Relu", "relu", "xf", "relu");
    qt_mb_node(&mb, "Add", "sum", "xf,xf", "sum");
    qt_mb_node(&mb, "Mul", "prod", "xf,relu", "prod");
    double xv[32];
    for (int i = 0; i < 32; i++) xv[i] = sp[i % 8];
    QrTensor x, out[QR_ARRAY_LEN(outs)];
    memset(out, 0, sizeof out);
    QT_OK(qt_hd_tensor(&x, QR_DT_F32, 4, xd, xv));
    QrStatus st = qt_hd_run(&mb, "nonfinite.onnx", &x, out);
    qt_mb_free(&mb);
    qr_tensor_free_data(&x);
    QT_OK(st);
    const float *sig = out[11].data, *relu = out[12].data, *sum = out[13].data, *prod = out[14].data;
    bool ok = true;
    char why[160] = "";
    for (int i = 0; ok && i < 32; i++) {
        double v = xv[i];
        if (v != v) ok = sig[i] != sig[i] && sum[i] != sum[i] && prod[i] != prod[i];
        else if (isinf(v)) ok = sig[i] == (v > 0 ? 1.0f : 0.0f) && relu[i] == (v > 0 ? (float)v : 0.0f) &&
                                sum[i] == (float)v && (v > 0 ? prod[i] == (float)v : prod[i] != prod[i]);
        if (!ok) snprintf(why, sizeof why, "element %d (%g): sigmoid %g relu %g sum %g prod %g", i, v, sig[i], relu[i],
                          sum[i], prod[i]);
    }
    /* quantized outputs stay in uint8 range, and statistics see every special input */
    for (int k = 0; ok && k < 3; k++) ok = out[3 + 2 * k].dtype == QR_DT_U8 && out[3 + 2 * k].numel == 32;
    QrStats s;
    qr_stats_init(&s);
    qr_stats_tensor(&s, &out[13]);
    qt_hd_free(out, QR_ARRAY_LEN(outs));
    QT_CHECKF(ok, "%s", why[0] ? why : "quantized outputs have the wrong type");
    int64_t want[4] = { 0, 0, 0, 0 };             /* NaN, +Inf, -Inf, finite of float x + x */
    for (int i = 0; i < 32; i++) {
        float v = (float)xv[i] + (float)xv[i];
        want[v != v ? 0 : isinf(v) ? (v > 0 ? 1 : 2) : 3]++;
    }
    QT_CHECKF(s.n_nan == want[0] && s.n_posinf == want[1] && s.n_neginf == want[2] && s.n == want[3],
              "stats of x+x: %lld NaN %lld +Inf %lld -Inf %lld finite", (long long)s.n_nan, (long long)s.n_posinf,
              (long long)s.n_neginf, (long long)s.n);
}

/* ==== deep and wide graphs ================================================================= */

/* A graph of n nodes built directly (model_builder holds 64): n_chain Add nodes
 * v{i+1} = v{i} + one, listed in reverse order (every node before its producer). */
typedef struct QtHdBig { QtModel mb; Onnx__NodeProto **nodes; } QtHdBig;

static Onnx__NodeProto *qt_hd_node(QrArena *a, const char *op, const char *in0, const char *in1, const char *out) {
    Onnx__NodeProto n0 = ONNX__NODE_PROTO__INIT;
    Onnx__NodeProto *n = qr_arena_alloc(a, sizeof *n);
    *n = n0;
    n->op_type = (char *)op;
    n->n_input = in1 ? 2 : 1;
    n->input = qr_arena_array(a, 2, sizeof(char *));
    n->input[0] = qr_arena_strdup(a, in0);
    if (in1) n->input[1] = qr_arena_strdup(a, in1);
    n->n_output = 1;
    n->output = qr_arena_array(a, 1, sizeof(char *));
    n->output[0] = qr_arena_strdup(a, out);
    return n;
}

static void qt_hd_chain(QtHdBig *b, int n) {
    int64_t d4[1] = { 4 }, s1[1] = { 1 };
    float one = 1.0f;
    qt_mb_init(&b->mb, 17);
    qt_mb_init_raw(&b->mb, "one", QR_DT_F32, 1, s1, &one, 4);
    qt_mb_input(&b->mb, "v0", QR_DT_F32, 1, d4);
    char out[32], in[32];
    snprintf(out, sizeof out, "v%d", n);
    qt_mb_output(&b->mb, out, QR_DT_F32, 1, d4);
    b->nodes = qr_arena_array(&b->mb.a, (size_t)n, sizeof *b->nodes);
    for (int i = 0; i < n; i++) {
        snprintf(in, sizeof in, "v%d", i);
        snprintf(out, sizeof out, "v%d", i + 1);
        b->nodes[n - 1 - i] = qt_hd_node(&b->mb.a, "Add", in, "one", out);
    }
    b->mb.g.node = b->nodes;
    b->mb.g.n_node = (size_t)n;
}

typedef struct QtHdCount { int calls, out_of_order; int *seen_at; } QtHdCount;

/* Counts tap calls and checks that each node's inputs were produced before it ran. */
static QrStatus qt_hd_count_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtHdCount *c = user;
    QR_UNUSED(t);
    c->seen_at[value] = c->calls++;
    if (node >= 0)
        for (int k = 0; k < g->nodes[node].n_in; k++) {
            int v = g->nodes[node].in[k];
            if (v >= 0 && !g->values[v].is_init && c->seen_at[v] < 0) c->out_of_order++;
        }
    return QR_OK;
}

/* 10 000 Add nodes in reverse file order: they load (iterative toposort: no recursion however
 * deep), infer and run once each in dependency order, giving x + 10000 exactly. Work is
 * counted, not timed: one tap call per value, graph memory linear in the node count
 * (bytes per node of the 10 000-node graph within 1.5x of the 1 000-node one). */
static void test_harden_deep_chain(void) {
    size_t per_node[2] = { 0, 0 };
    const int sizes[2] = { 1000, 10000 };
    for (int s = 0; s < 2; s++) {
        int n = sizes[s];
        QtHdBig b;
        qt_hd_chain(&b, n);
        QrGraph *g = NULL;
        QrStatus st = qt_load_built(&b.mb, "chain.onnx", &g);
        qt_mb_free(&b.mb);
        QT_OK(st);
        per_node[s] = g->arena.total / (size_t)n;
        int64_t d4[1] = { 4 };
        double xv[4] = { -2.5, 0, 1, 1e3 };
        QrTensor x, y = {0};
        QtHdCount cnt = { 0, 0, calloc((size_t)g->n_values, sizeof(int)) };
        for (int v = 0; v < g->n_values; v++) cnt.seen_at[v] = -1;
        QrTensor shape = {0};                       /* shapes only, as the CLI infers */
        st = qt_hd_tensor(&x, QR_DT_F32, 1, d4, xv);
        if (st == QR_OK) st = qr_tensor_set_shape(&shape, QR_DT_F32, 1, d4);
        if (st == QR_OK) st = qr_graph_infer(g, &shape);
        QrRunOpts opts = { .tap = qt_hd_count_tap, .tap_user = &cnt };
        if (st == QR_OK) st = qr_run(g, &x, &opts, &y);
        bool ok = st == QR_OK && y.numel == 4;
        for (int i = 0; ok && i < 4; i++) ok = ((float *)y.data)[i] == (float)(xv[i] + n);
        int n_nodes = g->n_nodes, first = g->order[0];
        const char *first_name = g->nodes[first].name;
        bool first_ok = !strcmp(g->values[g->nodes[first].in[0]].name, "v0");
        free(cnt.seen_at);
        qr_tensor_free_data(&x);
        qr_tensor_free_data(&y);
        qr_graph_free(g);
        free(g);
        QT_OK(st);
        QT_CHECKF(ok, "chain of %d: wrong result", n);
        QT_CHECKF(n_nodes == n && first_ok, "chain of %d: the order starts at node '%s'", n, first_name);
        QT_CHECKF(cnt.calls == n + 1 && cnt.out_of_order == 0, "chain of %d: %d tap calls, %d out of order", n,
                  cnt.calls, cnt.out_of_order);
    }
    QT_CHECKF(per_node[1] * 2 <= per_node[0] * 3, "graph bytes per node: %zu at 1000 nodes, %zu at 10000",
              per_node[0], per_node[1]);
}

/* One input read by 10 000 nodes whose outputs one Concat gathers (a node with 10 000
 * inputs): loads, runs, and every element is right. */
static void test_harden_wide_graph(void) {
    const int n = 10000;
    QtHdBig b;
    int64_t d1[1] = { 1 }, dn[1] = { n };
    qt_mb_init(&b.mb, 17);
    qt_mb_input(&b.mb, "x", QR_DT_F32, 1, d1);
    qt_mb_output(&b.mb, "cat", QR_DT_F32, 1, dn);
    b.nodes = qr_arena_array(&b.mb.a, (size_t)n + 1, sizeof *b.nodes);
    char out[32];
    for (int i = 0; i < n; i++) {
        snprintf(out, sizeof out, "r%d", i);
        b.nodes[i] = qt_hd_node(&b.mb.a, i % 2 ? "Neg" : "Relu", "x", NULL, out);
    }
    Onnx__NodeProto *cat = qt_hd_node(&b.mb.a, "Concat", "r0", NULL, "cat");
    cat->input = qr_arena_array(&b.mb.a, (size_t)n, sizeof(char *));
    cat->n_input = (size_t)n;
    for (int i = 0; i < n; i++) cat->input[i] = b.nodes[i]->output[0];
    cat->attribute = qr_arena_array(&b.mb.a, 1, sizeof *cat->attribute);
    Onnx__AttributeProto a0 = ONNX__ATTRIBUTE_PROTO__INIT;
    Onnx__AttributeProto *ax = qr_arena_alloc(&b.mb.a, sizeof *ax);
    *ax = a0;
    ax->name = "axis"; ax->has_type = 1; ax->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT; ax->has_i = 1; ax->i = 0;
    cat->attribute[0] = ax;
    cat->n_attribute = 1;
    b.nodes[n] = cat;
    b.mb.g.node = b.nodes;
    b.mb.g.n_node = (size_t)n + 1;
    double xv = 2.5;
    QrTensor x, y = {0};
    QT_OK(qt_hd_tensor(&x, QR_DT_F32, 1, d1, &xv));
    QrStatus st = qt_hd_run(&b.mb, "wide.onnx", &x, &y);
    qt_mb_free(&b.mb);
    qr_tensor_free_data(&x);
    QT_OK(st);
    bool ok = y.numel == n;
    for (int i = 0; ok && i < n; i++) ok = ((float *)y.data)[i] == (i % 2 ? -2.5f : 2.5f);
    qr_tensor_free_data(&y);
    QT_CHECK(ok);
}

/* ==== NEON kernels (aarch64) ============================================================== */

#if defined(__aarch64__)
static float qt_hd_rand(uint64_t *s) { return qr_rng_normal(s); }

/* qr_f32_gemm__neon equals ref bit for bit over tails (M, N, K remainders), strided rows and
 * accumulate, and writes nothing outside the M x N block (guard columns and rows). */
static void test_harden_neon_gemm(void) {
    static const int Ms[] = { 1, 2, 3, 4, 5, 7, 8, 9 }, Ns[] = { 1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 33 };
    static const int Ks[] = { 0, 1, 2, 3, 8, 17 };
    uint64_t rng = 7;
    int cases = 0;
    for (int mi = 0; mi < QR_ARRAY_LEN(Ms); mi++)
        for (int ni = 0; ni < QR_ARRAY_LEN(Ns); ni++)
            for (int ki = 0; ki < QR_ARRAY_LEN(Ks); ki++)
                for (int acc = 0; acc < 2; acc++) {
                    int64_t M = Ms[mi], N = Ns[ni], K = Ks[ki], lda = K + 3, ldb = N + 5, ldc = N + 2;
                    float A[9 * 20], B[17 * 38], C1[10 * 35], C2[10 * 35];
                    for (size_t i = 0; i < sizeof A / 4; i++) A[i] = qt_hd_rand(&rng);
                    for (size_t i = 0; i < sizeof B / 4; i++) B[i] = qt_hd_rand(&rng);
                    for (size_t i = 0; i < sizeof C1 / 4; i++) C1[i] = C2[i] = qt_hd_rand(&rng);
                    qr_f32_gemm__ref(M, N, K, A, lda, B, ldb, C1, ldc, acc);
                    qr_f32_gemm__neon(M, N, K, A, lda, B, ldb, C2, ldc, acc);
                    QT_CHECKF(!memcmp(C1, C2, sizeof C1), "M=%lld N=%lld K=%lld acc=%d differs from ref",
                              (long long)M, (long long)N, (long long)K, acc);
                    cases++;
                }
    QT_CHECK(cases == 8 * 12 * 6 * 2);
}

/* qr_f32_dwconv2d__neon equals ref bit for bit over strides 1-3 (1 and 2 vectorized),
 * dilations, paddings and tails, and never writes past the output plane. */
static void test_harden_neon_dwconv(void) {
    uint64_t rng = 11;
    int cases = 0;
    static const int HWs[] = { 1, 2, 3, 5, 8, 9, 16, 17 }, Ks[] = { 1, 2, 3, 5 };
    for (int hi = 0; hi < QR_ARRAY_LEN(HWs); hi++)
        for (int ki = 0; ki < QR_ARRAY_LEN(Ks); ki++)
            for (int s = 1; s <= 3; s++)
                for (int d = 1; d <= 2; d++)
                    for (int p = 0; p <= 2; p++) {
                        int64_t H = HWs[hi], W = HWs[(hi + 3) % QR_ARRAY_LEN(HWs)], KH = Ks[ki], KW = Ks[(ki + 1) % 4];
                        int64_t OH = (H + 2 * p - d * (KH - 1) - 1) / s + 1, OW = (W + 2 * p - d * (KW - 1) - 1) / s + 1;
                        if (H + 2 * p - d * (KH - 1) - 1 < 0 || W + 2 * p - d * (KW - 1) - 1 < 0) continue;
                        float x[17 * 17], w[25], y1[24 * 24], y2[24 * 24];
                        for (int i = 0; i < H * W; i++) x[i] = qt_hd_rand(&rng);
                        for (int i = 0; i < KH * KW; i++) w[i] = qt_hd_rand(&rng);
                        for (size_t i = 0; i < sizeof y1 / 4; i++) y1[i] = y2[i] = qt_hd_rand(&rng);
                        qr_f32_dwconv2d__ref(x, H, W, w, KH, KW, s, s, d, d, p, p, y1, OH, OW);
                        qr_f32_dwconv2d__neon(x, H, W, w, KH, KW, s, s, d, d, p, p, y2, OH, OW);
                        QT_CHECKF(!memcmp(y1, y2, sizeof y1), "H=%lld W=%lld K=%lldx%lld s=%d d=%d p=%d differs",
                                  (long long)H, (long long)W, (long long)KH, (long long)KW, s, d, p);
                        cases++;
                    }
    QT_CHECKF(cases >= 400, "only %d cases", cases);
}

/* The float fixtures with the NEON kernels swapped into the dispatch table still match
 * ONNX Runtime at every value (golden, rtol 1e-4). */
static void test_harden_neon_golden(void) {
    QrKernels saved = qr_kern;
    qr_kern.f32_gemm = qr_f32_gemm__neon;
    qr_kern.f32_dwconv2d = qr_f32_dwconv2d__neon;
    qr_kern.isa = QR_ISA_NEON;
    int before = qt_failed;
    static const char *fx[] = { "cnn_residual", "resize_concat", "transformer" };
    for (int i = 0; i < QR_ARRAY_LEN(fx); i++) {
        char model[256], input[256], dir[256], name[256];
        snprintf(model, sizeof model, "fixtures/%s/model.onnx", fx[i]);
        snprintf(input, sizeof input, "fixtures/%s/input.npy", fx[i]);
        snprintf(dir, sizeof dir, "fixtures/%s/golden", fx[i]);
        snprintf(name, sizeof name, "golden-neon/%s", fx[i]);
        qt_golden_check(name, model, input, dir, NULL, NULL);
    }
    qr_kern = saved;
    QT_CHECK(qt_failed == before);
}
#endif

static void qt_harden_all(void) {
    QT_RUN(test_harden_regress);
    QT_RUN(test_harden_absurd_lengths);
    QT_RUN(test_harden_size_before_alloc);
    QT_RUN(test_harden_dims_in_graph);
    QT_RUN(test_harden_use_before_produce);
    QT_RUN(test_harden_empty_tensors);
    QT_RUN(test_harden_nonfinite);
    QT_RUN(test_harden_deep_chain);
    QT_RUN(test_harden_wide_graph);
#if defined(__aarch64__)
    QT_RUN(test_harden_neon_gemm);
    QT_RUN(test_harden_neon_dwconv);
    QT_RUN(test_harden_neon_golden);
#else
    printf("harden: NEON kernel tests need an aarch64 build (make test-aarch64)\n");
#endif
}
