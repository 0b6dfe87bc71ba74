/* tests/harden — hostile and degenerate input: absurd protobuf lengths, sizes refused before
 * anything is allocated, nodes listed before their producers, empty tensors through ops,
 * NaN/Inf everywhere, 10 000-node graphs, odd data folders, --max-memory (refusal and the
 * honesty of the estimate), full and read-only output locations; every fuzzer finding in
 * tests/regress/ replayed through its fuzz target's body; the NEON kernels against ref. */

#include "../fuzz/fuzz_targets.h"
#include <sys/resource.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <signal.h>
#include <malloc.h>

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
    if (st == QR_OK) st = qr_run_infer(g, shapes);
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
        { "npy-", qr__hd_fuzz_npy }, { "pb-", qr__hd_fuzz_pb }, { "data_dir-", qr__hm_fuzz_data_dir },
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
        if (t < 0) qt_record(test, false, "no fuzz target for this file name (onnx_load-, onnx_run-, npy-, pb-, data_dir-)");
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
        QrStatus st = qr_run_load_buffer("absurd.onnx", ".", m.b, m.n, &g);
        QT_CHECKF(st == QR_ERR_PARSE && !g && strstr(qr_err_msg(), "absurd.onnx"), "len %llu: %s: %s",
                  (unsigned long long)lens[k], qr_status_name(st), qr_err_msg());
        /* Nested: GraphProto.node (1) -> NodeProto.input (1) string of lens[k] bytes. */
        QtHdPb node = { .n = 0 }, graph = { .n = 0 }, model = { .n = 0 };
        qt_hd_key(&node, 1, 2); qt_hd_varint(&node, lens[k]); qt_hd_bytes(&node, "abc", 3);
        qt_hd_sub(&graph, 1, &node);
        qt_hd_key(&model, 1, 0); qt_hd_varint(&model, 8);
        qt_hd_sub(&model, 7, &graph);
        st = qr_run_load_buffer("nested.onnx", ".", model.b, model.n, &g);
        QT_CHECKF(st == QR_ERR_PARSE && !g, "nested len %llu: %s", (unsigned long long)lens[k], qr_err_msg());
        /* Initializer (graph field 5) whose packed dims (TensorProto field 1) claim lens[k] bytes. */
        QtHdPb tensor = { .n = 0 }, g2 = { .n = 0 }, m2 = { .n = 0 };
        qt_hd_key(&tensor, 1, 2); qt_hd_varint(&tensor, lens[k]); qt_hd_bytes(&tensor, "\x02\x03", 2);
        qt_hd_sub(&g2, 5, &tensor);
        qt_hd_sub(&m2, 7, &g2);
        st = qr_run_load_buffer("dims.onnx", ".", m2.b, m2.n, &g);
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
    QT_CHECK(qr_run_load_buffer("varint.onnx", ".", bad.b, bad.n, &g) == QR_ERR_PARSE && !g);
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
        st = qr_run_load(path, &g);
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
    st = qr_run_input_shapes_bound(g, NULL, NULL, 0, &shp);
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
        qt_fmt(q, sizeof q, "q%d", k);
        qt_fmt(dq, sizeof dq, "dq%d", k);
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
        if (st == QR_OK) st = qr_run_infer(g, &shape);
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

/* ==== data folders (--data) ================================================================ */

/* Builds the tree described in the data-folder fuzz format (fuzz_targets.h: config byte, then
 * "==> PATH <==\n" CONTENT records) and runs the bad-case search on the fuzz target's model pair.
 * The tree is removed again; *bc is filled when the search succeeds. */
static QrStatus qt_hm_search(int cfg, const char *records, size_t len, QrBadcase *bc) {
    const char *dir = qr__hd_fuzz_dir();
    if (!dir) return qr_errf(QR_ERR_IO, "no scratch folder");
    QrGraph *b, *a;
    QR_TRY(qr__hm_pair((cfg & 3) == 3 ? 0 : cfg & 3, dir, &b, &a));
    unsigned char *buf = malloc(len + 1);
    if (!buf) return qr_errf(QR_ERR_NOMEM, "out of memory");
    buf[0] = (unsigned char)cfg;
    memcpy(buf + 1, records, len);
    char root[300];
    snprintf(root, sizeof root, "%s/qt_data", dir);
    qr__hm_rmtree(root);
    QrStatus st = mkdir(root, 0755) == 0 ? QR_OK : qr_errf(QR_ERR_IO, "mkdir %s: %s", root, strerror(errno));
    if (st == QR_OK) qr__hm_make_tree(root, buf, len + 1);
    free(buf);
    if (st == QR_OK) st = qr_badcase_search(b, a, root, (cfg >> 2) & 7, QR_METRIC_L1, NULL, bc);
    qr__hm_rmtree(root);
    return st;
}
#define QT_HM_SEARCH(cfg, lit, bc) qt_hm_search(cfg, lit, sizeof(lit) - 1, bc)

/* Odd data folders: natural order, hidden files and folders named *.npy skipped, --num-steps,
 * the worst sample found, per-input folders under safe names, and clean refusals (naming the
 * file) of pipes, link loops, dangling links, missing samples and folders, wrong dtypes. */
static void test_harden_data_dir(void) {
    QrBadcase bc;
    /* 1.npy holds 100.0 (the others 1.0): Relu passes it, the uint8 quantizer clips it at 6.35 -> the worst */
    QT_OK(QT_HM_SEARCH(0, "==> 10.npy <==\n@npy <f4 1x4\n\x00\x00\x80\x3f\n==> 2.npy <==\n@npy <f4 3x4\n\x00\x00\x80\x3f\n"
                          "==> .hidden.npy <==\ngarbage\n==> dir.npy/ <==\n==> a b.npy <==\n@npy <f4 1x4\n\x00\x00\x80\x3f\n"
                          "==> 1.npy <==\n@npy <f4 2x4\n\x00\x00\xc8\x42", &bc));
    bool ok = bc.n == 4 && bc.n_total == 4 && !strcmp(bc.samples[0].file, "1.npy") && !strcmp(bc.samples[1].file, "2.npy") &&
              !strcmp(bc.samples[2].file, "10.npy") && !strcmp(bc.samples[3].file, "a b.npy") && bc.worst == 0 &&
              bc.inputs[0].dims[0] == 2 && ((float *)bc.inputs[0].data)[0] == 100.0f;
    char got[256] = "";
    for (int i = 0; i < bc.n && strlen(got) < 200; i++) snprintf(got + strlen(got), sizeof got - strlen(got), "%s ", bc.samples[i].file);
    int worst = bc.worst;
    qr_badcase_free(&bc);
    QT_CHECKF(ok, "order/worst: %s(worst %d)", got, worst);
    /* an empty sample ([0, 4]) runs; its metrics are NaN, which counts as the worst */
    QT_OK(QT_HM_SEARCH(0, "==> 0.npy <==\n@npy <f4 1x4\n==> 1.npy <==\n@npy <f4 0x4\n", &bc));
    ok = bc.n == 2 && bc.worst == 1 && bc.inputs[0].numel == 0;
    qr_badcase_free(&bc);
    QT_CHECKF(ok, "empty sample");
    QT_OK(QT_HM_SEARCH(2 << 2, "==> 0.npy <==\n@npy <f4 1x4\n==> 1.npy <==\n@npy <f4 1x4\n==> 2.npy <==\n@npy <f4 1x4\n", &bc));
    ok = bc.n == 2 && bc.n_total == 3;
    qr_badcase_free(&bc);
    QT_CHECKF(ok, "--num-steps 2 evaluated %d of %d", bc.n, bc.n_total);
    QT_OK(QT_HM_SEARCH(1, "==> x/0.npy <==\n@npy <f4 1x4\n==> in_0_b/0.npy <==\n@npy <f4 1x4\n", &bc));
    ok = bc.folders && bc.n == 1;
    qr_badcase_free(&bc);
    QT_CHECKF(ok, "two inputs in safe-named folders");
    static const struct { int cfg; const char *tree; const char *want[2]; } bad[] = {
        { 0, "==> 0.npy <==\n@fifo\n==> 1.npy <==\n@npy <f4 1x4\n", { "0.npy", "not a regular file" } },
        { 0, "==> 0.npy <==\n@link 0.npy\n", { "0.npy", "symbolic links" } },
        { 0, "==> 0.npy <==\n@link nowhere.npy\n", { "0.npy", "No such file" } },
        { 0, "==> 0.npy <==\n\x93NUMPY\x01\n", { "0.npy", "" } },
        { 0, "==> 0.npy <==\n@npy <f4 1x5\n", { "0.npy", "must have shape" } },
        { 0, "==> sub/ <==\n==> notes.txt <==\nx\n", { "no .npy or .pb files", "" } },
        { 1, "==> x/0.npy <==\n@npy <f4 1x4\n==> x/1.npy <==\n@npy <f4 1x4\n==> in_0_b/0.npy <==\n@npy <f4 1x4\n",
          { "in_0_b/1.npy", "No such file" } },
        { 1, "==> x/0.npy <==\n@npy <f4 1x4\n", { "no folder for model input 'in:0/b'", "" } },
        { 2, "==> ids/0.npy <==\n@npy <f4 3\n", { "ids/0.npy", "must be int64" } },
    };
    for (int k = 0; k < QR_ARRAY_LEN(bad); k++) {
        QrStatus st = qt_hm_search(bad[k].cfg, bad[k].tree, strlen(bad[k].tree), &bc);
        if (st == QR_OK) qr_badcase_free(&bc);
        QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), bad[k].want[0]) && strstr(qr_err_msg(), bad[k].want[1]),
                  "case %d: %s: %s", k, qr_status_name(st), qr_err_msg());
    }
}

/* ==== --max-memory ========================================================================== */

/* Entries of dir (without . and ..) listed into buf; -1 when dir does not exist. */
static int qt_hm_entries(const char *dir, char *buf, size_t n) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int cnt = 0;
    buf[0] = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t l = strlen(buf);
        if (l + strlen(e->d_name) + 2 < n) snprintf(buf + l, n - l, "%s ", e->d_name);
        cnt++;
    }
    closedir(d);
    return cnt;
}

/* A pair loaded and inferred the way the CLI does it, with its input. */
typedef struct QtHmPair { QrGraph *b, *a; QrTensor in; } QtHmPair;

static void qt_hm_pair_free(QtHmPair *p) {
    if (p->b) { qr_graph_free(p->b); free(p->b); }
    if (p->a) { qr_graph_free(p->a); free(p->a); }
    qr_tensor_free_data(&p->in);
    memset(p, 0, sizeof *p);
}

static QrStatus qt_hm_pair_load(QtHmPair *p, const char *base, const char *analysis, const char *input) {
    memset(p, 0, sizeof *p);
    QR_TRY(qr_run_load(base, &p->b));
    QR_TRY(qr_run_load(analysis, &p->a));
    QR_TRY(qr_npy_read(input, &p->in));
    QrTensor shape = {0};
    QR_TRY(qr_tensor_set_shape(&shape, p->in.dtype, p->in.rank, p->in.dims));
    QR_TRY(qr_run_infer(p->b, &shape));
    return qr_run_infer(p->a, &p->in);       /* as qr__cli_load_second: small inputs fold */
}

/* --max-memory: refused up front (exit 1, the estimate and its parts named, nothing written)
 * when below the estimate, accepted at exactly the estimate, for each kind of command. */
static void test_harden_max_memory_cli(void) {
    QtCli r;
    const char *m = "fixtures/qpairs/ort_qdq";
    char out[512], zip[600], list[512], path[700];
    snprintf(out, sizeof out, "%s/maxmem", qt_tmpdir());
    QT_OK(qr_mkdir_p(out));
    snprintf(zip, sizeof zip, "%s/r.zip", out);
    /* the library's estimate for the same command line */
    QtHmPair p;
    char b[256], a[256], in[256];
    snprintf(b, sizeof b, "%s/base.onnx", m);
    snprintf(a, sizeof a, "%s/analysis.onnx", m);
    snprintf(in, sizeof in, "%s/input.npy", m);
    QrStatus st = qt_hm_pair_load(&p, b, a, in);
    QrMemEstimate e = {0};
    QrMemOpts mo = { .cmd = QR_MEM_RUNALL };
    if (st == QR_OK) st = qr_mem_estimate(p.b, p.a, &p.in, &mo, &e);
    qt_hm_pair_free(&p);
    QT_OK(st);
    char desc[1024];
    qr_mem_describe(&e, desc, sizeof desc);
    qt_cli(&r, "runall %s %s -i %s -o %s --keep-dir %s/keep --max-memory 3M --quiet", b, a, in, zip, out);
    QT_CLI_FAILS(r, "runall needs an estimated ", "models ", "baseline values ", "peak during ", "but --max-memory is 3.0 MiB");
    QT_CHECKF(strstr(r.err, desc), "the message is not the library's estimate %s: %s", desc, r.err);
    int n = qt_hm_entries(out, list, sizeof list);
    QT_CHECKF(n == 0, "left behind: %s", list);
    /* one byte short of the estimate: refused; the estimate itself: accepted */
    qt_cli(&r, "runall %s %s -i %s -o %s --max-memory %llu --quiet", b, a, in, zip, (unsigned long long)e.total - 1);
    QT_CLI_FAILS(r, "runall needs an estimated");
    qt_cli(&r, "runall %s %s -i %s -o %s --max-memory %llu --quiet", b, a, in, zip, (unsigned long long)e.total);
    uint64_t sz = 0;
    QT_CHECKF(r.code == 0 && qr_file_size(zip, &sz) == QR_OK && sz > 0, "exit %d: %s", r.code, r.err);
    qt_cli(&r, "runall %s %s -i %s -o %s --max-memory 4G --quiet", b, a, in, zip);
    QT_CHECKF(r.code == 0, "exit %d with 4G: %s", r.code, r.err);
    /* the other commands: refused one byte below the library's estimate for them (the same
     * text in the message), nothing written */
    static const struct { const char *cmd; QrMemCmd mc; bool two; } cmds[] = {
        { "run", QR_MEM_RUN, false }, { "profile", QR_MEM_PROFILE, false }, { "check", QR_MEM_CHECK, false },
        { "compare", QR_MEM_COMPARE, true }, { "sensitivity", QR_MEM_SENSITIVITY, true }, { "match", QR_MEM_MATCH, true },
    };
    for (int k = 0; k < QR_ARRAY_LEN(cmds); k++) {
        st = qt_hm_pair_load(&p, b, a, in);
        QrMemOpts co = { .cmd = cmds[k].mc };
        QrTensor shape = {0};
        if (st == QR_OK && !cmds[k].two) st = qr_tensor_set_shape(&shape, p.in.dtype, p.in.rank, p.in.dims);
        if (st == QR_OK && !cmds[k].two) st = qr_run_infer(p.a, &shape);     /* one model: shapes only */
        if (st == QR_OK) st = cmds[k].two ? qr_mem_estimate(p.b, p.a, &p.in, &co, &e) : qr_mem_estimate(p.a, NULL, &p.in, &co, &e);
        qt_hm_pair_free(&p);
        QT_OK(st);
        qr_mem_describe(&e, desc, sizeof desc);
        snprintf(path, sizeof path, "%s/%s_out", out, cmds[k].cmd);
        qt_cli(&r, "%s %s%s%s -i %s -o %s --max-memory %llu --quiet", cmds[k].cmd, cmds[k].two ? b : a,
               cmds[k].two ? " " : "", cmds[k].two ? a : "", in, path, (unsigned long long)e.total - 1);
        char want[256];
        qt_fmt(want, sizeof want, "%s needs an estimated %s", cmds[k].cmd, desc);
        QT_CLI_FAILS(r, want);
        QT_CHECKF(qt_hm_entries(path, list, sizeof list) <= 0, "%s left %s", cmds[k].cmd, list);
        qt_cli(&r, "%s %s%s%s -i %s -o %s --max-memory %llu --quiet", cmds[k].cmd, cmds[k].two ? b : a,
               cmds[k].two ? " " : "", cmds[k].two ? a : "", in, path, (unsigned long long)e.total);
        QT_CHECKF(r.code == 0 || (r.code == 3 && k == 5), "%s at its estimate: exit %d: %s", cmds[k].cmd, r.code, r.err);
    }
    /* find-bad-case: the search keeps the current and the worst sample */
    char data[600];
    snprintf(data, sizeof data, "%s/data", out);
    QT_OK(qr_mkdir_p(data));
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%d.npy", data, k);
        unsigned char *buf;
        size_t len;
        QT_OK(qr_file_read(in, 0, &buf, &len));
        st = qr_file_write_atomic(path, buf, len);
        qr_aligned_free(buf);
        QT_OK(st);
    }
    snprintf(path, sizeof path, "%s/bc_out", out);
    qt_cli(&r, "find-bad-case %s %s --data %s -o %s --max-memory 2100k --quiet", b, a, data, path);
    QT_CLI_FAILS(r, "find-bad-case needs an estimated", "samples ");
    QT_CHECKF(qt_hm_entries(path, list, sizeof list) <= 0, "find-bad-case left %s", list);
    qt_cli(&r, "find-bad-case %s %s --data %s -o %s --max-memory 1G --quiet", b, a, data, path);
    QT_CHECKF(r.code == 0, "find-bad-case with 1G: exit %d: %s", r.code, r.err);
    /* before loading: the model files alone (file, decoded protobuf, initializers) */
    qt_cli(&r, "compare %s %s -i %s -o %s/x --max-memory 64k --quiet", b, a, in, out);
    QT_CLI_FAILS(r, "compare needs an estimated", "peak during loading", "but --max-memory is 64 KiB");
    qt_cli(&r, "run %s --max-memory 12Q", b);
    QT_CHECKF(r.code == 2 && strstr(r.err, "--max-memory"), "malformed size: exit %d: %s", r.code, r.err);
}

/* Counts the bytes of every value a run taps, once per value (what the sensitivity cache copies). */
typedef struct QtHmTapSum { bool *seen; uint64_t bytes; } QtHmTapSum;

static QrStatus qt_hm_sum_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtHmTapSum *s = user;
    QR_UNUSED(g); QR_UNUSED(node);
    if (!s->seen[value]) { s->seen[value] = true; s->bytes += qr_tensor_nbytes(t); }
    return QR_OK;
}

/* Independently of the estimator: the bytes the session caches (baseline values after
 * qr_session_run_baseline) and those the sensitivity reference run copies (every value the
 * twin's all-off run taps), measured on real tensors. */
static QrStatus qt_hm_cached_bytes(QtHmPair *p, uint64_t *base, uint64_t *ana, uint64_t *inits) {
    QrSession se;
    QR_TRY(qr_session_open(&se, p->b, p->a, &p->in));
    QrStatus st = qr_session_run_baseline(&se);
    *base = *ana = *inits = 0;
    for (int i = 0; st == QR_OK && i < se.m.n; i++) *base += qr_tensor_nbytes(&se.base[i]);
    for (int k = 0; st == QR_OK && k < p->b->n_outputs; k++) *base += qr_tensor_nbytes(&se.base_out[k]);
    QrOverrides ov = {0};
    QtHmTapSum ts = { calloc((size_t)se.tw.g.n_values + 1, sizeof(bool)), 0 };
    bool *mask = calloc((size_t)se.qt.n + 1, sizeof(bool));
    if (st == QR_OK) st = ts.seen && mask ? qr_session_overrides_alloc(&se, &ov) : qr_errf(QR_ERR_NOMEM, "oom");
    if (st == QR_OK) {
        qr_session_overrides(&se, mask, &ov);
        QrRunOpts ro = qr_session_run_opts(&ov, qt_hm_sum_tap, &ts);
        st = qr_run(&se.tw.g, &p->in, &ro, NULL);
        *ana = ts.bytes;
    }
    const QrGraph *gs[2] = { p->b, p->a };
    for (int k = 0; k < 2; k++)
        for (int v = 0; v < gs[k]->n_values; v++)
            if (gs[k]->values[v].is_init) *inits += qr_tensor_nbytes(&gs[k]->values[v].t);
    qr_session_overrides_free(&ov);
    free(ts.seen);
    free(mask);
    qr_session_close(&se);
    return st;
}

typedef struct QtHmRunall { QtHmPair *p; const char *zip; } QtHmRunall;

static QrStatus qt_hm_runall(void *ctx) {
    QtHmRunall *c = ctx;
    QrRunallOpts ro = { .out_zip = c->zip, .cmdline = "test", .quiet = true, .cos_threshold = 0.99, .random_input = true };
    ro.sens.metric = QR_METRIC_L1;
    ro.topk[0] = 1; ro.topk[1] = 3;
    ro.n_topk = 2;
    QrRunallResult res;
    return qr_runall_run(c->p->b, c->p->a, &c->p->in, &ro, &res);
}

/* Peak RSS growth of fn(ctx) in a child process (bytes), -1 when it cannot be measured. The
 * child first gives malloc's free pages back (malloc_trim) and resets its peak RSS to the
 * current RSS (/proc/self/clear_refs "5"), so ru_maxrss afterwards counts only what fn
 * touched. The pool runs one thread: the child has no worker threads (fork copies one). */
static int64_t qt_hm_rss_growth(QrStatus (*fn)(void *), void *ctx) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    qr_pool_init(1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        int64_t growth = -1;
        mallopt(M_MMAP_THRESHOLD, 128 << 10);     /* as the CLI with --max-memory: */
        qr_blk_keep(false);                         /* blocks the tests before kept are not reused */
        malloc_trim(0);
        int fd = open("/proc/self/clear_refs", O_WRONLY);
        struct rusage r0, r1;
        if (fd >= 0 && write(fd, "5", 1) == 1 && getrusage(RUSAGE_SELF, &r0) == 0 && fn(ctx) == QR_OK &&
            getrusage(RUSAGE_SELF, &r1) == 0)
            growth = ((int64_t)r1.ru_maxrss - (int64_t)r0.ru_maxrss) * 1024;
        if (fd >= 0) close(fd);
        if (write(fds[1], &growth, sizeof growth) != (ssize_t)sizeof growth) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    int64_t growth = -1;
    if (pid < 0 || read(fds[0], &growth, sizeof growth) != (ssize_t)sizeof growth) growth = -1;
    close(fds[0]);
    if (pid > 0) waitpid(pid, NULL, 0);
    qr_pool_init(0);
    return growth;
}

/* A QDQ pair whose values are large (float32 [1, 32, 128, 128] = 2 MiB each), so that what
 * runall keeps (not the fixed costs of plots and code) decides its peak memory. */
static QrStatus qt_hm_big_pair(QtHmPair *p) {
    char bp[512], ap[512], ip[512];
    snprintf(bp, sizeof bp, "%s/big_base.onnx", qt_tmpdir());
    snprintf(ap, sizeof ap, "%s/big_analysis.onnx", qt_tmpdir());
    snprintf(ip, sizeof ip, "%s/big_input.npy", qt_tmpdir());
    int64_t d[4] = { 1, 32, 128, 128 };
    float sx = 0.05f, s1 = 1.0f / 255, sa = 0.06f;
    uint8_t z128 = 128, z0 = 0;
    for (int q = 0; q < 2; q++) {
        QtModel mb;
        qt_mb_init(&mb, 17);
        qt_mb_input(&mb, "x", QR_DT_F32, 4, d);
        qt_mb_output(&mb, "y", QR_DT_F32, 4, d);
        if (!q) {
            qt_mb_node(&mb, "Relu", "relu", "x", "r1");
            qt_mb_node(&mb, "Sigmoid", "sig", "r1", "r2");
            qt_mb_node(&mb, "Add", "add", "r1,r2", "r3");
            qt_mb_node(&mb, "Mul", "mul", "r3,r1", "y");
        } else {
            qt_mb_init_raw(&mb, "sx", QR_DT_F32, 0, NULL, &sx, 4);
            qt_mb_init_raw(&mb, "s1", QR_DT_F32, 0, NULL, &s1, 4);
            qt_mb_init_raw(&mb, "sa", QR_DT_F32, 0, NULL, &sa, 4);
            qt_mb_init_raw(&mb, "z128", QR_DT_U8, 0, NULL, &z128, 1);
            qt_mb_init_raw(&mb, "z0", QR_DT_U8, 0, NULL, &z0, 1);
            qt_mb_node(&mb, "QuantizeLinear", "x_q", "x,sx,z128", "xq");
            qt_mb_node(&mb, "DequantizeLinear", "x_dq", "xq,sx,z128", "xd");
            qt_mb_node(&mb, "Relu", "relu", "xd", "r1");
            qt_mb_node(&mb, "QuantizeLinear", "relu_q", "r1,sa,z0", "r1q");
            qt_mb_node(&mb, "DequantizeLinear", "relu_dq", "r1q,sa,z0", "r1d");
            qt_mb_node(&mb, "Sigmoid", "sig", "r1d", "r2");
            qt_mb_node(&mb, "QuantizeLinear", "sig_q", "r2,s1,z0", "r2q");
            qt_mb_node(&mb, "DequantizeLinear", "sig_dq", "r2q,s1,z0", "r2d");
            qt_mb_node(&mb, "Add", "add", "r1d,r2d", "r3");
            qt_mb_node(&mb, "QuantizeLinear", "add_q", "r3,sa,z0", "r3q");
            qt_mb_node(&mb, "DequantizeLinear", "add_dq", "r3q,sa,z0", "r3d");
            qt_mb_node(&mb, "Mul", "mul", "r3d,r1d", "y");
        }
        QrStatus st = qt_mb_write(&mb, q ? ap : bp);
        qt_mb_free(&mb);
        QR_TRY(st);
    }
    QrTensor x = {0};
    QR_TRY(qr_tensor_set_shape(&x, QR_DT_F32, 4, d));
    QR_TRY(qr_tensor_alloc_data(&x));
    uint64_t rng = 5;
    for (int64_t i = 0; i < x.numel; i++) ((float *)x.data)[i] = qr_rng_normal(&rng);
    QrStatus st = qr_npy_write(ip, &x);
    qr_tensor_free_data(&x);
    QR_TRY(st);
    return qt_hm_pair_load(p, bp, ap, ip);
}

/* The estimate is not a toy: for every fixture pair and a pair with large values, the parts
 * for the values the session and the sensitivity run keep are at least the bytes measured on
 * the real tensors (and not far above), the total covers models + both caches, and the total
 * (less the fixed runtime part) is within 4x of the peak RSS growth of an in-process runall. */
static void test_harden_max_memory_estimate(void) {
    for (int k = 0; k <= QR_ARRAY_LEN(qt_pairs); k++) {
        bool big = k == QR_ARRAY_LEN(qt_pairs);
        const char *name = big ? "big" : qt_pairs[k];
        QtHmPair p;
        QrStatus st;
        if (big) st = qt_hm_big_pair(&p);
        else {
            char b[256], a[256], in[256];
            snprintf(b, sizeof b, "fixtures/qpairs/%s/base.onnx", name);
            snprintf(a, sizeof a, "fixtures/qpairs/%s/analysis.onnx", name);
            snprintf(in, sizeof in, "fixtures/qpairs/%s/input.npy", name);
            st = qt_hm_pair_load(&p, b, a, in);
        }
        QrMemEstimate e = {0};
        QrMemOpts mo = { .cmd = QR_MEM_RUNALL };
        uint64_t base = 0, ana = 0, inits = 0;
        if (st == QR_OK) st = qr_mem_estimate(p.b, p.a, &p.in, &mo, &e);
        if (st == QR_OK) st = qt_hm_cached_bytes(&p, &base, &ana, &inits);
        if (st != QR_OK) { qt_hm_pair_free(&p); QT_OK(st); }
        /* allocation padding: at most 128 + 16 bytes per value */
        uint64_t slack = (uint64_t)(p.b->n_values + p.a->n_values) * 2 * 144 + 4096;
        char d[1024];
        qr_mem_describe(&e, d, sizeof d);
        int64_t growth = -1;
        const char *bin = getenv("QR_BIN");
        bool emulated = bin && strstr(bin, "qemu");         /* the emulator's own memory would count */
        bool measure = (!strcmp(name, "ort_qdq") || big) && !emulated;
#ifdef QT_HD_ASAN
        measure = false;                                    /* shadow memory and quarantine would count */
#endif
        if (measure) {
            char zip[512];
            snprintf(zip, sizeof zip, "%s/memest_%s.zip", qt_tmpdir(), name);
            QtHmRunall ctx = { &p, zip };
            growth = qt_hm_rss_growth(qt_hm_runall, &ctx);
        }
        qt_hm_pair_free(&p);
        if (qt_verbose) printf("memest %s: %s; measured: baseline values %llu, analysis values %llu, rss growth %lld\n", name,
                               d, (unsigned long long)base, (unsigned long long)ana, (long long)growth);
        QT_CHECKF(e.base_values >= base && e.base_values <= 2 * base + slack, "%s: baseline values estimated %llu, "
                  "measured %llu", name, (unsigned long long)e.base_values, (unsigned long long)base);
        QT_CHECKF(e.analysis_values >= ana && e.analysis_values <= 2 * ana + slack, "%s: analysis values estimated %llu, "
                  "measured %llu", name, (unsigned long long)e.analysis_values, (unsigned long long)ana);
        QT_CHECKF(e.total >= inits + base + ana, "%s: total %llu < initializers %llu + cached %llu + %llu", name,
                  (unsigned long long)e.total, (unsigned long long)inits, (unsigned long long)base, (unsigned long long)ana);
        if (big) QT_CHECKF(!strcmp(e.phase, "sensitivity") || !strcmp(e.phase, "equivalence check"), "big: peak during %s", e.phase);
#ifndef QT_HD_ASAN
        if (growth >= 0) {
            uint64_t est = e.total - e.part[QR_MEM_P_RUNTIME];
            QT_CHECKF(est <= 4 * (uint64_t)growth && 4 * est >= (uint64_t)growth, "%s: estimate %s vs measured peak RSS "
                      "growth %.1f MiB", name, d, (double)growth / 1048576);
        } else if (!strcmp(name, "ort_qdq")) {
            printf("harden: the estimate is not compared with a measured peak RSS here (%s)\n",
                   emulated ? "under an emulator" : "no /proc/self/clear_refs");
        }
#endif
    }
}

/* --max-memory's rule, one execution at a time: runall on the large-value pair with low_memory
 * (as --max-memory sets it) and a pool of 2 threads never has two qr_run calls in progress
 * (qr_run_count.max_active); without it some stage does run executions side by side (the
 * fragility's variants), so the count can see them. */
static void test_harden_low_memory_serial(void) {
    QtHmPair p;
    QT_OK(qt_hm_big_pair(&p));
    const int t0 = qr_pool_threads();
    if (t0 < 2) QT_OK(qr_pool_init(2));
    int64_t most[2] = { -1, -1 };
    QrStatus st = QR_OK;
    for (int k = 0; k < 2 && st == QR_OK; k++) {
        char zip[512];
        snprintf(zip, sizeof zip, "%s/lowmem_%d.zip", qt_tmpdir(), k);
        QrRunallOpts ro = { .out_zip = zip, .cmdline = "test", .quiet = true, .cos_threshold = 0.99, .random_input = true,
                            .low_memory = k == 0 };
        ro.sens.metric = QR_METRIC_L1;
        ro.topk[0] = 1; ro.topk[1] = 3;
        ro.n_topk = 2;
        QrRunallResult res;
        qr_run_count.max_active = 0;
        st = qr_runall_run(p.b, p.a, &p.in, &ro, &res);
        most[k] = qr_run_count.max_active;
    }
    if (t0 < 2) qr_pool_init(t0);
    qt_hm_pair_free(&p);
    QT_OK(st);
    QT_CHECKF(most[0] == 1 && most[1] >= 2, "executions at once: %lld with low memory (want 1), %lld without (want >= 2)",
              (long long)most[0], (long long)most[1]);
}

/* Runs "$QR_BIN args" (through /bin/sh, exec'd) in a child with optional RLIMIT_FSIZE (0 = none;
 * SIGXFSZ ignored, so oversized writes fail with EFBIG); captures stderr; returns the exit code
 * (-1 when it did not exit) and the child's peak RSS in bytes. */
static int qt_hm_exec(const char *args, rlim_t fsize, char *err, size_t n_err, int64_t *maxrss) {
    const char *bin = getenv("QR_BIN");
    char cmd[4096], errf[512];
    snprintf(errf, sizeof errf, "%s/hm_exec.err", qt_tmpdir());
    snprintf(cmd, sizeof cmd, "exec %s %s >/dev/null 2>'%s' </dev/null", bin ? bin : "./qreport", args, errf);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (fsize) {
            struct rlimit rl = { fsize, fsize };
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(97);
        }
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(98);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) return -1;
    if (maxrss) *maxrss = (int64_t)ru.ru_maxrss * 1024;
    qt_slurp(errf, err, n_err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The real process stays under its estimate: `qreport runall` on the large-value pair with
 * --max-memory set to exactly the library's estimate runs, and its peak RSS (wait4) is at most
 * that estimate and at least half of it. */
static void test_harden_max_memory_process(void) {
    QtHmPair p;
    QT_OK(qt_hm_big_pair(&p));
    QrMemEstimate e = {0};
    QrMemOpts mo = { .cmd = QR_MEM_RUNALL };
    QrStatus st = qr_mem_estimate(p.b, p.a, &p.in, &mo, &e);
    qt_hm_pair_free(&p);
    QT_OK(st);
    char args[2048], err[4096], d[1024];
    const char *t = qt_tmpdir();
    snprintf(args, sizeof args, "runall %s/big_base.onnx %s/big_analysis.onnx -i %s/big_input.npy -o %s/big.zip --quiet "
             "--keep-dir %s/big_keep --max-memory %llu", t, t, t, t, t, (unsigned long long)e.total);
    int64_t rss = 0;
    int code = qt_hm_exec(args, 0, err, sizeof err, NULL);
    /* qreport's own peak (manifest.json: VmHWM). wait4's ru_maxrss would also count the
     * copy-on-write image of this large test process that the child held before exec. */
    char mpath[1024], mtxt[65536];
    snprintf(mpath, sizeof mpath, "%s/big_keep/manifest.json", t);
    mtxt[0] = 0;
    qt_slurp(mpath, mtxt, sizeof mtxt);
    const char *pk = strstr(mtxt, "\"peak_rss_bytes\":");
    if (pk) rss = strtoll(pk + strlen("\"peak_rss_bytes\":"), NULL, 10);
    qr_mem_describe(&e, d, sizeof d);
    QT_CHECKF(code == 0, "exit %d with --max-memory at the estimate %s: %s", code, d, err);
    const char *bin = getenv("QR_BIN");
#ifndef QT_HD_ASAN
    if (!bin || !strstr(bin, "qemu")) {             /* under qemu the emulator's memory counts too */
        if (qt_verbose) printf("memest process: peak RSS %.1f MiB, estimate %s\n", (double)rss / 1048576, d);
        QT_CHECKF(rss > 0 && (uint64_t)rss <= e.total && (uint64_t)rss * 2 >= e.total,
                  "peak RSS %.1f MiB against the estimate %s", (double)rss / 1048576, d);
    } else {
        qt_record_skip("memest peak RSS", "under qemu the emulator's memory counts too");
    }
#else
    qt_record_skip("memest peak RSS", "ASan's shadow memory and quarantine count too");
    QR_UNUSED(bin);
    QR_UNUSED(rss);
#endif
}

/* ==== full and unwritable output locations ================================================ */

/* Mounts a tmpfs of `size` at dir (read-only when ro); false when mount(2) is not allowed. */
static bool qt_hm_tmpfs(const char *dir, const char *size, bool ro) {
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s,mode=0755", size);
    return mount("qreport-test", dir, "tmpfs", MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0), opts) == 0;
}

/* Fills the file system of dir: a file grows until ENOSPC (or 64 MiB). */
static void qt_hm_fill(const char *dir) {
    char p[600];
    snprintf(p, sizeof p, "%s/filler", dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    char blk[4096];
    memset(blk, 'f', sizeof blk);
    for (int i = 0; i < 16384 && write(fd, blk, sizeof blk) == (ssize_t)sizeof blk; i++) {}
    while (write(fd, blk, 1) == 1) {}
    close(fd);
}

/* A location that runs out of space and one that cannot be written: exit code 1, a message
 * naming the file or folder and the reason, no zip (partial or whole), no temporary file or
 * staging folder left behind. With a 64 KiB tmpfs when mount(2) is allowed (root, not in
 * most CI containers), and always with RLIMIT_FSIZE (writes past 192 KiB fail with EFBIG).
 * --keep-dir: the folder is written after the zip; when it cannot be, the exit code is 1,
 * no partial folder is left, and the zip (complete, already renamed into place) stays. */
static void test_harden_full_output(void) {
    const char *m = "fixtures/qpairs/ort_qdq";
    char pair[512], list[512], err[4096], args[2048], out[512];
    snprintf(pair, sizeof pair, "%s/base.onnx %s/analysis.onnx -i %s/input.npy", m, m, m);
    /* RLIMIT_FSIZE: every staging file fits (the largest, index.html with the graph view's two drawings and the
     * fragility section, is ~130 KiB), the zip (~370 KiB) does not */
    snprintf(out, sizeof out, "%s/fsize", qt_tmpdir());
    QT_OK(qr_mkdir_p(out));
    snprintf(args, sizeof args, "runall %s -o %s/r.zip --quiet", pair, out);
    int code = qt_hm_exec(args, 192 << 10, err, sizeof err, NULL);
    QT_CHECKF(code == 1 && strstr(err, "r.zip") && strstr(err, "File too large"), "RLIMIT_FSIZE: exit %d: %s", code, err);
    int n = qt_hm_entries(out, list, sizeof list);
    QT_CHECKF(n == 0, "RLIMIT_FSIZE: left behind: %s", list);
    snprintf(args, sizeof args, "compare %s -o %s/cmp --quiet", pair, out);
    code = qt_hm_exec(args, 4 << 10, err, sizeof err, NULL);
    QT_CHECKF(code == 1 && strstr(err, "compare_per_layer_out.txt") && strstr(err, "File too large"),
              "RLIMIT_FSIZE compare: exit %d: %s", code, err);
    qt_fmt(list, sizeof list, "%s/cmp", out);
    QT_CHECKF(qt_hm_entries(list, list, sizeof list) <= 0, "RLIMIT_FSIZE compare: left behind: %s", list);

    /* a path below a regular file: nothing can be created there, root or not */
    char file[512];
    snprintf(file, sizeof file, "%s/plain", qt_tmpdir());
    QT_OK(qr_file_write_atomic(file, "x", 1));
    static const char *const below[] = { "compare %s -o %s/sub --quiet", "sensitivity %s -o %s/sub --quiet",
                                         "runall %s -o %s/sub/r.zip --keep-dir %s/keep --quiet" };
    for (int k = 0; k < QR_ARRAY_LEN(below); k++) {
        snprintf(args, sizeof args, below[k], pair, file, file);
        code = qt_hm_exec(args, 0, err, sizeof err, NULL);
        QT_CHECKF(code == 1 && strstr(err, "plain"), "below a file (%s): exit %d: %s", below[k], code, err);
    }

    /* a real full file system */
    char mnt[] = "/tmp/qr_hm_tmpfs_XXXXXX";
    if (!mkdtemp(mnt)) { qt_record_skip("full-disk tmpfs", "mkdtemp: %s", strerror(errno)); return; }
    if (!qt_hm_tmpfs(mnt, "64k", false)) {
        qt_record_skip("full-disk tmpfs", "mount: %s (needs root or CAP_SYS_ADMIN); the RLIMIT_FSIZE variant ran",
                       strerror(errno));
        rmdir(mnt);
        return;
    }
    int failed_before = qt_cur_failed;
    bool ok = true;
    char why[4200] = "";
    /* the bundle does not fit in 64 KiB */
    snprintf(args, sizeof args, "runall %s -o %s/r.zip --quiet", pair, mnt);
    code = qt_hm_exec(args, 0, err, sizeof err, NULL);
    n = qt_hm_entries(mnt, list, sizeof list);
    if (code != 1 || !strstr(err, mnt) || !strstr(err, "No space left") || n != 0) {
        ok = false;
        qt_fmt(why, sizeof why, "full tmpfs runall: exit %d, left [%s]: %s", code, list, err);
    }
    /* --keep-dir on the full file system, the zip elsewhere */
    char zip[512];
    snprintf(zip, sizeof zip, "%s/keep_ok.zip", qt_tmpdir());
    unlink(zip);
    snprintf(args, sizeof args, "runall %s -o %s --keep-dir %s/keep --quiet", pair, zip, mnt);
    code = qt_hm_exec(args, 0, err, sizeof err, NULL);
    n = qt_hm_entries(mnt, list, sizeof list);
    unsigned char *zb = NULL;
    size_t zl = 0;
    bool zip_whole = qr_file_read(zip, 0, &zb, &zl) == QR_OK && zl > 22 && !memcmp(zb + zl - 22, "PK\x05\x06", 4);
    qr_err_clear();
    qr_aligned_free(zb);
    if (ok && (code != 1 || !strstr(err, "keep") || !strstr(err, "No space left") || n != 0 || !zip_whole)) {
        ok = false;
        qt_fmt(why, sizeof why, "--keep-dir on a full tmpfs: exit %d, left [%s], zip %s: %s", code, list,
                 zip_whole ? "complete" : "missing or partial", err);
    }
    /* filled to the last block: per-command outputs fail at their first file */
    qt_hm_fill(mnt);
    static const struct { const char *fmt, *file; } cmds[] = {
        { "compare %s -o %s/cmp --quiet", "compare_per_layer_out.txt" },
        { "sensitivity %s -o %s/sens --quiet", "sensitive_ops" },
        { "run %.0s%s -o %s/run --quiet", "output" },
    };
    for (int k = 0; ok && k < QR_ARRAY_LEN(cmds); k++) {
        char model[300];
        snprintf(model, sizeof model, "%s/base.onnx -i %s/input.npy", m, m);
        if (k == 2) snprintf(args, sizeof args, cmds[k].fmt, "", model, mnt);
        else snprintf(args, sizeof args, cmds[k].fmt, pair, mnt);
        code = qt_hm_exec(args, 0, err, sizeof err, NULL);
        char sub[600];
        snprintf(sub, sizeof sub, "%s/%s", mnt, k == 0 ? "cmp" : k == 1 ? "sens" : "run");
        n = qt_hm_entries(sub, list, sizeof list);
        if (code != 1 || !strstr(err, cmds[k].file) || !strstr(err, "No space left") || n > 0) {
            ok = false;
            qt_fmt(why, sizeof why, "full tmpfs (%s): exit %d, left [%s]: %s", args, code, list, err);
        }
    }
    /* read-only */
    umount2(mnt, MNT_DETACH);
    if (ok && qt_hm_tmpfs(mnt, "1m", true)) {
        snprintf(args, sizeof args, "runall %s -o %s/r.zip --quiet", pair, mnt);
        code = qt_hm_exec(args, 0, err, sizeof err, NULL);
        if (code != 1 || !strstr(err, mnt) || !strstr(err, "Read-only")) {
            ok = false;
            snprintf(why, sizeof why, "read-only tmpfs runall: exit %d: %s", code, err);
        }
        snprintf(args, sizeof args, "compare %s -o %s/cmp --quiet", pair, mnt);
        code = qt_hm_exec(args, 0, err, sizeof err, NULL);
        if (ok && (code != 1 || !strstr(err, "cmp") || !strstr(err, "Read-only"))) {
            ok = false;
            snprintf(why, sizeof why, "read-only tmpfs compare: exit %d: %s", code, err);
        }
        umount2(mnt, MNT_DETACH);
    }
    rmdir(mnt);
    QT_CHECKF(ok && qt_cur_failed == failed_before, "%s", why);
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

/* qr_f32_conv_m1__neon equals ref bit for bit over strides 1-3, dilations, paddings, 1-2
 * input channels and tails, and never writes past the output plane. */
static void test_harden_neon_conv_m1(void) {
    uint64_t rng = 11;
    int cases = 0;
    static const int HWs[] = { 1, 2, 3, 5, 8, 9, 16, 17 }, Ks[] = { 1, 2, 3, 5 };
    for (int hi = 0; hi < QR_ARRAY_LEN(HWs); hi++)
        for (int ki = 0; ki < QR_ARRAY_LEN(Ks); ki++)
            for (int s = 1; s <= 3; s++)
                for (int d = 1; d <= 2; d++)
                    for (int p = 0; p <= 2; p++) {
                        int64_t H = HWs[hi], W = HWs[(hi + 3) % QR_ARRAY_LEN(HWs)], KH = Ks[ki], KW = Ks[(ki + 1) % 4];
                        int64_t C = 1 + (p & 1);
                        int64_t OH = (H + 2 * p - d * (KH - 1) - 1) / s + 1, OW = (W + 2 * p - d * (KW - 1) - 1) / s + 1;
                        if (H + 2 * p - d * (KH - 1) - 1 < 0 || W + 2 * p - d * (KW - 1) - 1 < 0) continue;
                        float x[2 * 17 * 17], w[2 * 25], y1[24 * 24], y2[24 * 24];
                        for (int i = 0; i < C * H * W; i++) x[i] = qt_hd_rand(&rng);
                        for (int i = 0; i < C * KH * KW; i++) w[i] = qt_hd_rand(&rng);
                        for (size_t i = 0; i < sizeof y1 / 4; i++) y1[i] = y2[i] = qt_hd_rand(&rng);
                        QrF32ConvB b = { x, C, H, W, KH, KW, s, s, d, d, p, p, OH, OW };
                        qr_f32_conv_m1__ref(&b, w, 0.5f, y1);
                        qr_f32_conv_m1__neon(&b, w, 0.5f, y2);
                        QT_CHECKF(!memcmp(y1, y2, sizeof y1), "C=%lld H=%lld W=%lld K=%lldx%lld s=%d d=%d p=%d differs",
                                  (long long)C, (long long)H, (long long)W, (long long)KH, (long long)KW, s, d, p);
                        cases++;
                    }
    QT_CHECKF(cases >= 400, "only %d cases", cases);
}

/* The float fixtures with the NEON kernels swapped into the dispatch table still match
 * ONNX Runtime at every value (golden, rtol 1e-4). */
static void test_harden_neon_golden(void) {
    QrKernels saved = qr_kern;
    qr_kern.f32_gemm = qr_f32_gemm__neon;
    qr_kern.f32_conv_m1 = qr_f32_conv_m1__neon;
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

/* ==== interrupted runs ====================================================================== */

/* Starts `qreport ARGS` with the environment variable env=val (the stop hooks of runall.c and
 * zip.c: the process stops itself at a known point), waits until it is stopped, sends it sig
 * and SIGCONT, and returns its wait status (-1 when it did not stop: it finished or failed
 * first; *stopped false then). */
static int qt_hm_interrupt(const char *args, const QrRunallFaults *f, int sig, bool *stopped) {
    pid_t pid = qt_cli_faults_start(f, NULL, NULL, args);
    *stopped = false;
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, WUNTRACED) != pid) return -1;
    if (!WIFSTOPPED(status)) return -1;
    *stopped = true;
    kill(pid, sig);
    kill(pid, SIGCONT);
    if (waitpid(pid, &status, 0) != pid) return -1;
    return status;
}

/* SIGINT / SIGTERM during `runall` (the handler of qr_cleanup_install): stopped once its
 * staging folder holds the compare tables, once in the middle of writing the zip (its
 * temporary file half written), once in the middle of writing --keep-dir's folder, the
 * process dies of the signal (non-zero exit), leaves nothing in the output folder (no
 * staging folder, no temporary zip or folder, no bundle), and an earlier bundle there is
 * untouched — except when the signal comes while --keep-dir's folder is written: the zip
 * is complete and in place by then, and stays. */
static void test_harden_interrupt(void) {
    const char *m = "fixtures/qpairs/ort_qdq";
    static const struct { const char *what; QrRunallFaults f; int sig; bool keep; } cases[] = {
        { "stop after compare", { .stop_stage = "compare" }, SIGINT, false },
        { "stop after sensitivity", { .stop_stage = "sensitivity" }, SIGTERM, true },
        { "stop at zip step 3", { .zip_stop_at = 3 }, SIGINT, false },
        { "stop at zip step 3", { .zip_stop_at = 3 }, SIGTERM, true },
        { "stop at folder step 4", { .dir_stop_at = 4 }, SIGINT, true },      /* the zip is in place by then */
    };
    static const char old_zip[] = "an earlier bundle";
    for (int k = 0; k < QR_ARRAY_LEN(cases); k++) {
        char dir[512], args[2048], list[1024], path[600];
        snprintf(dir, sizeof dir, "%s/intr%d", qt_tmpdir(), k);
        QT_OK(qr_mkdir_p(dir));
        snprintf(path, sizeof path, "%s/r.zip", dir);
        QT_OK(qr_file_write_atomic(path, old_zip, sizeof old_zip));
        snprintf(args, sizeof args, "runall %s/base.onnx %s/analysis.onnx -i %s/input.npy -o %s/r.zip --quiet%s%s%s", m, m,
                 m, dir, cases[k].keep ? " --keep-dir " : "", cases[k].keep ? dir : "", cases[k].keep ? "/keep" : "");
        bool stopped;
        int status = qt_hm_interrupt(args, &cases[k].f, cases[k].sig, &stopped);
        QT_CHECKF(stopped, "%s: the run did not stop there", cases[k].what);
        QT_CHECKF(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == cases[k].sig,
                  "%s, signal %d: wait status %#x (want death by the signal)", cases[k].what, cases[k].sig,
                  (unsigned)status);
        int n = qt_hm_entries(dir, list, sizeof list);
        QT_CHECKF(n == 1 && !strcmp(list, "r.zip "), "%s: left in the output folder: [%s]", cases[k].what, list);
        unsigned char *got = NULL;
        size_t len = 0;
        QT_OK(qr_file_read(path, 0, &got, &len));
        const bool zip_done = cases[k].f.dir_stop_at != 0;
        bool ok = zip_done ? len > 22 && !memcmp(got + len - 22, "PK\x05\x06", 4)
                           : len == sizeof old_zip && !memcmp(got, old_zip, len);
        qr_aligned_free(got);
        QT_CHECKF(ok, "%s: %s", cases[k].what, zip_done ? "r.zip is not a whole zip" : "the earlier r.zip changed");
    }
}

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
    QT_RUN(test_harden_data_dir);
    QT_RUN(test_harden_max_memory_cli);
    QT_RUN(test_harden_max_memory_estimate);
    QT_RUN(test_harden_max_memory_process);
    QT_RUN(test_harden_low_memory_serial);
    QT_RUN(test_harden_full_output);
    QT_RUN(test_harden_interrupt);
#if defined(__aarch64__)
    QT_RUN(test_harden_neon_gemm);
    QT_RUN(test_harden_neon_conv_m1);
    QT_RUN(test_harden_neon_golden);
#else
    qt_record_skip("harden NEON kernels", "need an aarch64 build (make test-aarch64)");
#endif
}
