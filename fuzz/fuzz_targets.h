/* fuzz/fuzz_targets — the bodies of the libFuzzer targets (ONNX loader, .npy reader,
 * TensorProto .pb reader, model execution), shared with tests/test_harden.c so every
 * input a fuzzer found is replayed by `make test` and `make asan`. Include after qreport.c. */
#ifndef QR_FUZZ_TARGETS_H
#define QR_FUZZ_TARGETS_H

#include <unistd.h>
#include <sys/stat.h>

/* Memory budget of one model execution (fuzz_onnx_run): graph inputs and inferred values
 * are checked against it before running; the fuzz binary also refuses aligned allocations
 * beyond it while armed (posix_memalign is wrapped at link time, see fuzz_onnx_run.c). */
#define QR_FUZZ_RUN_BUDGET ((size_t)256 << 20)
#define QR_FUZZ_MAX_INPUT_ELEMS ((int64_t)1 << 16)

static bool qr__hd_budget_armed;
static size_t qr__hd_budget_left;

/* ---- scratch folder ---------------------------------------------------------------- */

static char qr__hd_dir[200];
static char qr__hd_ext_path[240];

static void qr__hd_dir_cleanup(void) {
    char p[256];
    const char *files[] = { "weights.bin", "t.pb", "rt.pb" };
    for (int i = 0; i < QR_ARRAY_LEN(files); i++) {
        snprintf(p, sizeof p, "%s/%s", qr__hd_dir, files[i]);
        unlink(p);
    }
    rmdir(qr__hd_dir);
}

/* A private folder (removed at exit) that fuzzed models resolve external data against.
 * It holds weights.bin (4096 bytes of a pattern) so external-data paths are reachable.
 * Returns NULL if it cannot be created. */
static const char *qr__hd_fuzz_dir(void) {
    if (qr__hd_dir[0]) return qr__hd_dir;
    /* $QR_FUZZ_TMP (fuzz/run.sh makes one and removes it: a crashing fuzzer skips atexit),
     * else tmpfs (cheap fsync), else /tmp */
    const char *parent = getenv("QR_FUZZ_TMP");
    char tmpl[200], *made = NULL;
    if (parent && parent[0] && snprintf(tmpl, sizeof tmpl, "%s/qr_fuzz_XXXXXX", parent) < (int)sizeof tmpl)
        made = mkdtemp(tmpl);
    if (!made) { snprintf(tmpl, sizeof tmpl, "/dev/shm/qr_fuzz_XXXXXX"); made = mkdtemp(tmpl); }
    if (!made) { snprintf(tmpl, sizeof tmpl, "/tmp/qr_fuzz_XXXXXX"); made = mkdtemp(tmpl); }
    if (!made) return NULL;
    snprintf(qr__hd_dir, sizeof qr__hd_dir, "%s", made);
    atexit(qr__hd_dir_cleanup);
    unsigned char pat[4096];
    for (int i = 0; i < (int)sizeof pat; i++) pat[i] = (unsigned char)(i * 37 + 11);
    snprintf(qr__hd_ext_path, sizeof qr__hd_ext_path, "%s/weights.bin", qr__hd_dir);
    if (qr_file_write_atomic(qr__hd_ext_path, pat, sizeof pat) != QR_OK) return NULL;
    return qr__hd_dir;
}

/* A failure must come with a message (the CLI prints nothing else). */
static int qr__hd_failed_cleanly(void) {
    const char *m = qr_err_msg();
    if (!m[0] || !strcmp(m, "unknown error")) {
        fprintf(stderr, "fuzz: a failure without a message\n");
        return -1;
    }
    return 0;
}

static bool qr__hd_same_tensor(const QrTensor *a, const QrTensor *b) {
    return a->dtype == b->dtype && qr_tensor_same_shape(a, b) && a->numel == b->numel &&
           (qr_tensor_nbytes(a) == 0 || memcmp(a->data, b->data, qr_tensor_nbytes(a)) == 0);
}

/* ---- targets: each returns 0, or -1 when a property is violated (the fuzzer aborts) --- */

/* ONNX loader: any bytes either load (and the graph's indexes are consistent) or fail
 * with a message. */
static int qr__hd_fuzz_onnx_load(const uint8_t *data, size_t size) {
    const char *dir = qr__hd_fuzz_dir();
    if (!dir) return 0;
    QrGraph *g = NULL;
    qr_err_clear();
    QrStatus st = qr_onnx_load_buffer("fuzz.onnx", dir, data, size, &g);
    if (st != QR_OK) return g ? -1 : qr__hd_failed_cleanly();
    int bad = 0;
    char list[256];
    qr_graph_unsupported(g, list, sizeof list);
    for (int oi = 0; oi < g->n_nodes && !bad; oi++) {          /* the order is a permutation... */
        int ni = g->order[oi];
        if (ni < 0 || ni >= g->n_nodes) bad = 1;
    }
    for (int v = 0; v < g->n_values && !bad; v++) {            /* ...and every reader comes after the producer */
        const QrUse *u;
        int n = qr_graph_readers(g, v, &u);
        for (int k = 0; k < n; k++)
            if (u[k].node < 0 || u[k].node >= g->n_nodes || g->nodes[u[k].node].in[u[k].input] != v) bad = 1;
        if (g->values[v].producer >= g->n_nodes) bad = 1;
    }
    if (!bad) {
        int *pos = calloc((size_t)g->n_nodes + 1, sizeof *pos);
        for (int oi = 0; pos && oi < g->n_nodes; oi++) pos[g->order[oi]] = oi;
        for (int ni = 0; pos && ni < g->n_nodes && !bad; ni++)
            for (int k = 0; k < g->nodes[ni].n_in; k++) {
                int v = g->nodes[ni].in[k];
                if (v >= 0 && g->values[v].producer >= 0 && pos[g->values[v].producer] >= pos[ni]) bad = 1;
            }
        free(pos);
    }
    if (bad) fprintf(stderr, "fuzz: inconsistent graph indexes\n");
    qr_graph_free(g);
    free(g);
    return bad ? -1 : 0;
}

/* .npy reader: parse; what parses re-encodes to a file that parses to the same tensor. */
static int qr__hd_fuzz_npy(const uint8_t *data, size_t size) {
    QrTensor t = {0}, back = {0};
    qr_err_clear();
    if (qr_npy_parse(data, size, &t) != QR_OK) return qr__hd_failed_cleanly();
    unsigned char *buf = NULL;
    size_t len = 0;
    int bad = 0;
    if (qr_npy_encode(&t, &buf, &len) == QR_OK) {
        if (qr_npy_parse(buf, len, &back) != QR_OK || !qr__hd_same_tensor(&t, &back)) bad = 1;
        free(buf);
    } else bad = 1;                                 /* every dtype the reader accepts can be written */
    if (bad) fprintf(stderr, "fuzz: .npy round trip failed: %s\n", qr_err_msg());
    qr_tensor_free_data(&t);
    qr_tensor_free_data(&back);
    return bad ? -1 : 0;
}

/* TensorProto .pb reader (read from a file, as the conformance runner and `-i x.pb` do):
 * what reads writes back to a .pb that reads to the same tensor. */
static int qr__hd_fuzz_pb(const uint8_t *data, size_t size) {
    const char *dir = qr__hd_fuzz_dir();
    if (!dir) return 0;
    char path[256], rt[256], name[64];
    snprintf(path, sizeof path, "%s/t.pb", dir);
    snprintf(rt, sizeof rt, "%s/rt.pb", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    bool wrote = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !wrote) return 0;
    QrTensor t = {0}, back = {0};
    qr_err_clear();
    if (qr_pb_read(path, &t, name, sizeof name) != QR_OK) return qr__hd_failed_cleanly();
    int bad = 0;
    if (qr_pb_write(rt, &t, name) != QR_OK || qr_pb_read(rt, &back, NULL, 0) != QR_OK || !qr__hd_same_tensor(&t, &back))
        bad = 1;
    if (bad) fprintf(stderr, "fuzz: .pb round trip failed: %s\n", qr_err_msg());
    qr_tensor_free_data(&t);
    qr_tensor_free_data(&back);
    return bad ? -1 : 0;
}

/* Tap for the execution target: statistics over every produced value (NaN/Inf paths). */
static QrStatus qr__hd_stats_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QR_UNUSED(g); QR_UNUSED(node); QR_UNUSED(value);
    QrStats s;
    qr_stats_init(&s);
    if (t->data) qr_stats_tensor(&s, t);
    *(int64_t *)user += s.n_nan;
    return QR_OK;
}

/* Model execution: a model that loads and passes shape inference runs on small zero inputs
 * (unknown dims = 1) within QR_FUZZ_RUN_BUDGET, or fails with a message. */
static int qr__hd_fuzz_onnx_run(const uint8_t *data, size_t size) {
    const char *dir = qr__hd_fuzz_dir();
    if (!dir) return 0;
    QrGraph *g = NULL;
    if (qr_onnx_load_buffer("fuzz.onnx", dir, data, size, &g) != QR_OK) return 0;
    int ni = g->n_inputs, no = g->n_outputs, bad = 0;
    QrTensor *shapes = calloc((size_t)ni + 1, sizeof *shapes), *in = calloc((size_t)ni + 1, sizeof *in);
    QrTensor *outs = calloc((size_t)no + 1, sizeof *outs);
    QrStatus st = shapes && in && outs && ni <= 16 ? QR_OK : QR_ERR_NOMEM;
    if (st == QR_OK) st = qr_graph_check_supported(g);
    size_t need = 0;
    for (int i = 0; st == QR_OK && i < ni; i++) {
        const QrValue *v = &g->values[g->inputs[i]];
        int64_t dims[QR_MAX_RANK];
        int rank = v->has_decl && v->decl_rank >= 0 ? v->decl_rank : 0;
        for (int d = 0; d < rank; d++) dims[d] = v->decl_dims[d] < 0 ? 1 : v->decl_dims[d];
        QrDType dt = v->has_decl && qr_dtype_supported(v->decl_dtype) ? v->decl_dtype : QR_DT_F32;
        st = qr_tensor_set_shape(&in[i], dt, rank, dims);
        if (st == QR_OK && in[i].numel > QR_FUZZ_MAX_INPUT_ELEMS) st = QR_ERR_NOMEM;
        if (st == QR_OK) st = qr_tensor_set_shape(&shapes[i], dt, rank, dims);
        if (st == QR_OK) st = qr_tensor_alloc_data(&in[i]);           /* zeros */
    }
    qr__hd_budget_left = QR_FUZZ_RUN_BUDGET;
    qr__hd_budget_armed = true;
    qr_err_clear();
    if (st == QR_OK) {
        st = qr_graph_infer(g, shapes);
        if (st != QR_OK && qr__hd_failed_cleanly()) bad = 1;
    }
    /* Up-front estimate: every statically known value alive at once. */
    for (int v = 0; st == QR_OK && v < g->n_values; v++)
        if (!g->values[v].is_dynamic && !g->values[v].is_init) {
            size_t b = qr_tensor_nbytes(&g->values[v].t);
            need = b > QR_FUZZ_RUN_BUDGET || need + b > QR_FUZZ_RUN_BUDGET ? QR_FUZZ_RUN_BUDGET + 1 : need + b;
        }
    if (st == QR_OK && need <= QR_FUZZ_RUN_BUDGET) {
        int64_t n_nan = 0;
        QrRunOpts opts = { .tap = qr__hd_stats_tap, .tap_user = &n_nan };
        qr_err_clear();
        st = qr_run(g, in, &opts, outs);
        if (st != QR_OK && qr__hd_failed_cleanly()) bad = 1;
        for (int i = 0; st == QR_OK && i < no; i++) {
            const QrTensor *o = &outs[i];
            if (!o->data || !qr_dtype_supported(o->dtype) || o->rank < 0 || o->rank > QR_MAX_RANK) bad = 1;
        }
        if (st == QR_OK) for (int i = 0; i < no; i++) qr_tensor_free_data(&outs[i]);
    }
    qr__hd_budget_armed = false;
    if (bad) fprintf(stderr, "fuzz: execution broke a contract: %s\n", qr_err_msg());
    for (int i = 0; in && i < ni; i++) qr_tensor_free_data(&in[i]);
    free(in);
    free(shapes);
    free(outs);
    qr_graph_free(g);
    free(g);
    return bad ? -1 : 0;
}

#endif
