/* fuzz/fuzz_targets — the bodies of the libFuzzer targets (ONNX loader, .npy reader,
 * TensorProto .pb reader, model execution, data-folder reader), shared with tests/test_harden.c
 * so every input a fuzzer found is replayed by `make test` and `make asan`. Include after qreport.c.
 * The five target bodies (qr__hd_fuzz_*, qr__hm_fuzz_data_dir) have external linkage: the fuzz
 * binary (fuzz_main.c) calls the one its name picks, and -Wunused-function is on. */
#ifndef QR_FUZZ_TARGETS_H
#define QR_FUZZ_TARGETS_H

#include <unistd.h>
#include <sys/stat.h>
#include <ftw.h>

/* Memory budget of one model execution (fuzz_onnx_run): graph inputs and inferred values
 * are checked against it before running; the fuzz binary also refuses aligned allocations
 * beyond it while armed (posix_memalign is wrapped at link time, see fuzz_main.c). */
#define QR_FUZZ_RUN_BUDGET ((size_t)256 << 20)
#define QR_FUZZ_MAX_INPUT_ELEMS ((int64_t)1 << 16)
/* Work budget of one model execution in kernel multiply-adds (qr__hm_node_work): a few hundred
 * bytes of model can ask for a conv with 65536 rows of padding, i.e. seconds of honest work in
 * the fuzz build; a run is only a finding when it is slow for its work. Elements cost more than
 * multiply-adds there: measured with clang -O1, ASan + UBSan + libFuzzer coverage, one thread,
 * ~1.5 ns per multiply-add in the conv kernels but ~45 ns per element through the generic
 * accessors (qr_tensor_get_f64 in the stats tap, integer elementwise ops, float staging), most
 * of it the coverage callbacks on their dtype switches. A QLinearConv with 65535 rows of padding
 * (2.8e8 multiply-adds, 3e7 elements) took 1.8 s of CPU per execution, and libFuzzer runs an
 * input twice (leak check): 24 s on a loaded machine. Hence QR__HM_ELEM_COST per element: the
 * budget is ~0.75 s of CPU per execution for either part. */
#ifndef QR_FUZZ_RUN_WORK
#define QR_FUZZ_RUN_WORK 5e8
#endif
#define QR__HM_ELEM_COST 32.0

static bool qr__hd_budget_armed;
static size_t qr__hd_budget_left;

/* ---- scratch folder ---------------------------------------------------------------- */

static char qr__hd_dir[200];
static char qr__hd_ext_path[240];

static int qr__hm_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    QR_UNUSED(sb); QR_UNUSED(f);
    return flag == FTW_DP ? rmdir(p) : unlink(p);
}

/* Removes a tree (not following symbolic links); a missing path is fine. */
static void qr__hm_rmtree(const char *path) { nftw(path, qr__hm_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

static void qr__hd_dir_cleanup(void) { qr__hm_rmtree(qr__hd_dir); }

/* A private folder (removed at exit with everything in it) that fuzzed models resolve external
 * data against and the data-folder target builds its trees in. It holds weights.bin (4096
 * bytes of a pattern) so external-data paths are reachable.
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
int qr__hd_fuzz_onnx_load(const uint8_t *data, size_t size) {
    const char *dir = qr__hd_fuzz_dir();
    if (!dir) return 0;
    QrGraph *g = NULL;
    qr_err_clear();
    QrStatus st = qr_run_load_buffer("fuzz.onnx", dir, data, size, &g);
    if (st != QR_OK) return g ? -1 : qr__hd_failed_cleanly();
    int bad = 0;
    char list[256];
    qr_run_unsupported(g, list, sizeof list);
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
int qr__hd_fuzz_npy(const uint8_t *data, size_t size) {
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
int qr__hd_fuzz_pb(const uint8_t *data, size_t size) {
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

/* Work of one node from its inferred shapes, in kernel multiply-adds: each output element times
 * the reduction it needs (conv window, matmul inner dim, the taps of a pool window inside the
 * input; ConvTranspose: each input element times its weights), plus QR__HM_ELEM_COST per input
 * and output element (see QR_FUZZ_RUN_WORK). Values of data-dependent shape count as empty. */
static double qr__hm_node_work(const QrGraph *g, const QrNode *n) {
    double in = 0, out = 0, red = 1;
    for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && !g->values[n->in[k]].is_dynamic) in += (double)g->values[n->in[k]].t.numel;
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && !g->values[n->out[k]].is_dynamic) out += (double)g->values[n->out[k]].t.numel;
    const char *op = n->op_type;
    int w = !strcmp(op, "QLinearConv") ? 3 : strstr(op, "Conv") ? 1 : -1;   /* the weight input */
    bool transpose = strstr(op, "Transpose") != NULL;
    if (w >= 0 && w < n->n_in && n->in[w] >= 0) {
        const QrTensor *t = &g->values[n->in[w]].t;
        if (t->rank >= 1 && t->dims[0] > 0) red = (double)t->numel / (double)t->dims[0];   /* C/group x kernel */
        if (transpose) return in * red + QR__HM_ELEM_COST * (in + out);
    } else if ((strstr(op, "MatMul") || !strcmp(op, "Gemm")) && n->n_in > 0 && n->in[0] >= 0) {
        const QrTensor *a = &g->values[n->in[0]].t;
        if (a->rank >= 1) red = (double)a->dims[!strcmp(op, "Gemm") && qr_attr_int(n, "transA", 0) ? 0 : a->rank - 1];
    } else if (strstr(op, "Pool") && !strstr(op, "Global")) {
        /* the pools visit only the taps inside the input: min(kernel, input) per axis */
        const int64_t *k;
        int nk = qr_attr_ints(n, "kernel_shape", &k);
        const QrTensor *x = n->n_in > 0 && n->in[0] >= 0 ? &g->values[n->in[0]].t : NULL;
        int sp0 = qr_attr_int(n, "channels_last", 0) ? 1 : 2;
        for (int i = 0; i < nk; i++) {
            double ki = (double)QR_MAX(k[i], 1);
            if (x && sp0 + i < x->rank) ki = QR_MIN(ki, (double)QR_MAX(x->dims[sp0 + i], 1));
            red *= ki;
        }
    }
    return (red > 1 ? out * red : 0) + QR__HM_ELEM_COST * (in + out);
}

/* Model execution: a model that loads and passes shape inference runs on small zero inputs
 * (unknown dims = 1) within QR_FUZZ_RUN_BUDGET bytes and QR_FUZZ_RUN_WORK (models beyond them
 * are not run), or fails with a message. */
int qr__hd_fuzz_onnx_run(const uint8_t *data, size_t size) {
    const char *dir = qr__hd_fuzz_dir();
    if (!dir) return 0;
    QrGraph *g = NULL;
    if (qr_run_load_buffer("fuzz.onnx", dir, data, size, &g) != QR_OK) return 0;
    int ni = g->n_inputs, no = g->n_outputs, bad = 0;
    QrTensor *shapes = calloc((size_t)ni + 1, sizeof *shapes), *in = calloc((size_t)ni + 1, sizeof *in);
    QrTensor *outs = calloc((size_t)no + 1, sizeof *outs);
    QrStatus st = shapes && in && outs && ni <= 16 ? QR_OK : QR_ERR_NOMEM;
    if (st == QR_OK) st = qr_run_check_supported(g);
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
        st = qr_run_infer(g, shapes);
        if (st != QR_OK && qr__hd_failed_cleanly()) bad = 1;
    }
    /* Up-front estimate: every statically known value alive at once, and the work. */
    for (int v = 0; st == QR_OK && v < g->n_values; v++)
        if (!g->values[v].is_dynamic && !g->values[v].is_init) {
            size_t b = qr_tensor_nbytes(&g->values[v].t);
            need = b > QR_FUZZ_RUN_BUDGET || need + b > QR_FUZZ_RUN_BUDGET ? QR_FUZZ_RUN_BUDGET + 1 : need + b;
        }
    double work = 0;
    for (int k = 0; st == QR_OK && k < g->n_nodes; k++) work += qr__hm_node_work(g, &g->nodes[k]);
    if (st == QR_OK && need <= QR_FUZZ_RUN_BUDGET && work <= QR_FUZZ_RUN_WORK) {
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

/* ---- data-folder reader (--data DIR: find-bad-case, runall) ------------------------------
 * The input describes a folder tree that is built in a fresh folder, searched with
 * qr_badcase_search on a tiny model pair, written with qr_badcase_write and removed:
 *
 *   byte 0           cfg & 3: the model pair: 0 and 3: x f32[N,4] -> Relu; 1: x f32[N,4] and
 *                    "in:0/b" f32[N,4] -> Add (that input's folder is its safe name "in_0_b");
 *                    2: ids int64[N] -> Cast(float). (cfg >> 2) & 7: --num-steps (0 = all);
 *                    cfg >> 5: the metric (mod 5). The analysis model adds a uint8 Q/DQ pair.
 *   then records     "==> PATH <==\n" CONTENT, CONTENT running to the next "\n==> " or the end.
 *   PATH             relative, '/'-separated; empty and "." components are dropped; a ".."
 *                    component, a component over 200 bytes or more than 6 levels drop the
 *                    record (the tree never leaves its folder); a trailing '/' makes a folder.
 *   CONTENT          the file's bytes, or a directive line:
 *                    "@npy DESCR DIMS" a valid .npy of dtype DESCR ("<f4", "i8", "|b1", ...) and
 *                      shape DIMS ("3x4"; empty = a scalar; at most 4096 elements) whose data are
 *                      the bytes after the line, repeated (a pattern when there are none);
 *                    "@link TARGET" a symbolic link (TARGET relative without ".."; may dangle
 *                      or loop); "@fifo" a named pipe (must be refused, never opened).
 * Properties: no crash, hang or leak; a failure has a message; a success evaluated 1..n_total
 * samples (at most --num-steps), its worst sample fits the model, and badcase.npy reads back
 * as that sample. */

#define QR__HM_MAX_RECORDS 24
#define QR__HM_MAX_ELEMS 4096

typedef struct QrHmPb {
    QrArena a;
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto os, *osp[1];
    Onnx__NodeProto *nodes[4];
    Onnx__TensorProto *inits[2];
    Onnx__ValueInfoProto *in[2], *out[1];
} QrHmPb;

/* A tensor value info; dims < 0 are the symbolic dim "N". */
static Onnx__ValueInfoProto *qr__hm_vi(QrArena *a, const char *name, QrDType dt, int rank, const int64_t *dims) {
    Onnx__ValueInfoProto vi0 = ONNX__VALUE_INFO_PROTO__INIT, *vi = qr_arena_alloc(a, sizeof *vi);
    Onnx__TypeProto tp0 = ONNX__TYPE_PROTO__INIT, *tp = qr_arena_alloc(a, sizeof *tp);
    Onnx__TypeProto__Tensor tt0 = ONNX__TYPE_PROTO__TENSOR__INIT, *tt = qr_arena_alloc(a, sizeof *tt);
    Onnx__TensorShapeProto sp0 = ONNX__TENSOR_SHAPE_PROTO__INIT, *sp = qr_arena_alloc(a, sizeof *sp);
    Onnx__TensorShapeProto__Dimension **dv = qr_arena_array(a, (size_t)rank + 1, sizeof *dv);
    if (!vi || !tp || !tt || !sp || !dv) return NULL;
    *vi = vi0; *tp = tp0; *tt = tt0; *sp = sp0;
    vi->name = (char *)name;
    vi->type = tp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)dt;
    tt->shape = sp;
    sp->n_dim = (size_t)rank;
    sp->dim = dv;
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        if (!(dv[i] = qr_arena_alloc(a, sizeof *dv[i]))) return NULL;
        *dv[i] = d0;
        if (dims[i] < 0) { dv[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM; dv[i]->dim_param = "N"; }
        else { dv[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE; dv[i]->dim_value = dims[i]; }
    }
    return vi;
}

static Onnx__NodeProto *qr__hm_node(QrHmPb *p, const char *op, int n_in, const char *const *in, const char *out) {
    Onnx__NodeProto n0 = ONNX__NODE_PROTO__INIT, *n = qr_arena_alloc(&p->a, sizeof *n);
    char **ins = qr_arena_array(&p->a, (size_t)n_in + 1, sizeof *ins), **outs = qr_arena_array(&p->a, 1, sizeof *outs);
    if (!n || !ins || !outs) return NULL;
    *n = n0;
    n->op_type = (char *)op;
    n->name = (char *)out;
    for (int k = 0; k < n_in; k++) ins[k] = (char *)in[k];
    n->n_input = (size_t)n_in;
    n->input = ins;
    outs[0] = (char *)out;
    n->n_output = 1;
    n->output = outs;
    p->nodes[p->g.n_node++] = n;
    return n;
}

static Onnx__TensorProto *qr__hm_scalar(QrHmPb *p, const char *name, QrDType dt, const void *v, size_t n) {
    Onnx__TensorProto t0 = ONNX__TENSOR_PROTO__INIT, *t = qr_arena_alloc(&p->a, sizeof *t);
    void *raw = qr_arena_alloc(&p->a, n);
    if (!t || !raw) return NULL;
    *t = t0;
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = (int32_t)dt;
    t->has_raw_data = 1;
    memcpy(raw, v, n);
    t->raw_data.data = raw;
    t->raw_data.len = n;
    p->inits[p->g.n_initializer++] = t;
    return t;
}

/* Model `kind` of the pair (see above); quant: the analysis twin with a uint8 Q/DQ on the output. */
static QrStatus qr__hm_build_model(int kind, bool quant, const char *dir, QrGraph **out) {
    QrHmPb p;
    memset(&p, 0, sizeof p);
    Onnx__ModelProto m0 = ONNX__MODEL_PROTO__INIT;
    Onnx__GraphProto g0 = ONNX__GRAPH_PROTO__INIT;
    Onnx__OperatorSetIdProto os0 = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    p.m = m0; p.g = g0; p.os = os0;
    p.os.domain = "";
    p.os.has_version = 1;
    p.os.version = 17;
    p.osp[0] = &p.os;
    p.m.has_ir_version = 1;
    p.m.ir_version = 8;
    p.m.n_opset_import = 1;
    p.m.opset_import = p.osp;
    p.m.graph = &p.g;
    p.g.name = "datadir";
    p.g.node = p.nodes;
    p.g.initializer = p.inits;
    p.g.input = p.in;
    p.g.output = p.out;
    int64_t d2[2] = { -1, 4 }, d1[1] = { -1 };
    int rank = kind == 2 ? 1 : 2;
    const int64_t *dims = kind == 2 ? d1 : d2;
    const char *y = quant ? "r" : "y";
    bool ok = true;
    if (kind == 1) {
        static const char *const ins[2] = { "x", "in:0/b" };
        ok = (p.in[0] = qr__hm_vi(&p.a, "x", QR_DT_F32, 2, d2)) && (p.in[1] = qr__hm_vi(&p.a, "in:0/b", QR_DT_F32, 2, d2));
        p.g.n_input = 2;
        ok = ok && qr__hm_node(&p, "Add", 2, ins, y);
    } else if (kind == 2) {
        static const char *const ins[1] = { "ids" };
        ok = (p.in[0] = qr__hm_vi(&p.a, "ids", QR_DT_S64, 1, d1)) != NULL;
        p.g.n_input = 1;
        Onnx__NodeProto *n = ok ? qr__hm_node(&p, "Cast", 1, ins, y) : NULL;
        Onnx__AttributeProto a0 = ONNX__ATTRIBUTE_PROTO__INIT, *at = qr_arena_alloc(&p.a, sizeof *at);
        Onnx__AttributeProto **ats = qr_arena_array(&p.a, 1, sizeof *ats);
        ok = n && at && ats;
        if (ok) {
            *at = a0;
            at->name = "to";
            at->has_type = 1;
            at->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
            at->has_i = 1;
            at->i = QR_DT_F32;
            ats[0] = at;
            n->attribute = ats;
            n->n_attribute = 1;
        }
    } else {
        static const char *const ins[1] = { "x" };
        ok = (p.in[0] = qr__hm_vi(&p.a, "x", QR_DT_F32, 2, d2)) && qr__hm_node(&p, "Relu", 1, ins, y);
        p.g.n_input = 1;
    }
    if (ok && quant) {
        float scale = 0.05f;
        uint8_t zp = 128;
        static const char *const qin[3] = { "r", "s", "zp" }, *const dqin[3] = { "q", "s", "zp" };
        ok = qr__hm_scalar(&p, "s", QR_DT_F32, &scale, 4) && qr__hm_scalar(&p, "zp", QR_DT_U8, &zp, 1) &&
             qr__hm_node(&p, "QuantizeLinear", 3, qin, "q") && qr__hm_node(&p, "DequantizeLinear", 3, dqin, "y");
    }
    ok = ok && (p.out[0] = qr__hm_vi(&p.a, "y", QR_DT_F32, rank, dims));
    p.g.n_output = 1;
    QrStatus st = ok ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    unsigned char *buf = NULL;
    size_t len = 0;
    if (st == QR_OK) {
        len = onnx__model_proto__get_packed_size(&p.m);
        buf = malloc(len + 1);
        if (!buf) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        else onnx__model_proto__pack(&p.m, buf);
    }
    if (st == QR_OK) st = qr_run_load_buffer(quant ? "datadir_analysis.onnx" : "datadir_base.onnx", dir, buf, len, out);
    free(buf);
    qr_arena_free(&p.a);
    return st;
}

/* The pair of `kind`, built once, re-inferred on one-sample shapes ([1,4] or [1]) each call. */
static QrStatus qr__hm_pair(int kind, const char *dir, QrGraph **b, QrGraph **a) {
    static QrGraph *models[3][2];
    for (int q = 0; q < 2; q++)
        if (!models[kind][q]) QR_TRY(qr__hm_build_model(kind, q == 1, dir, &models[kind][q]));
    *b = models[kind][0];
    *a = models[kind][1];
    QrTensor shapes[2];
    memset(shapes, 0, sizeof shapes);
    int64_t d[2] = { 1, 4 };
    for (int i = 0; i < (*b)->n_inputs; i++)
        QR_TRY(qr_tensor_set_shape(&shapes[i], kind == 2 ? QR_DT_S64 : QR_DT_F32, kind == 2 ? 1 : 2, d));
    QR_TRY(qr_run_infer(*b, shapes));
    return qr_run_infer(*a, shapes);
}

/* "@npy DESCR DIMS\n" + fill bytes -> .npy bytes (malloc'd); false when the line is not usable. */
static bool qr__hm_npy_directive(const uint8_t *c, size_t n, unsigned char **out, size_t *out_len) {
    static const struct { const char *code; QrDType dt; } types[] = {
        { "f4", QR_DT_F32 }, { "f8", QR_DT_F64 }, { "f2", QR_DT_F16 }, { "i1", QR_DT_S8 }, { "u1", QR_DT_U8 },
        { "i2", QR_DT_S16 }, { "u2", QR_DT_U16 }, { "i4", QR_DT_S32 }, { "u4", QR_DT_U32 }, { "i8", QR_DT_S64 },
        { "u8", QR_DT_U64 }, { "b1", QR_DT_BOOL },
    };
    char line[96];
    size_t ll = 0;
    while (ll < n && c[ll] != '\n' && ll + 1 < sizeof line) { line[ll] = (char)c[ll]; ll++; }
    line[ll] = 0;
    const uint8_t *fill = ll < n ? c + ll + 1 : NULL;
    size_t n_fill = ll < n ? n - ll - 1 : 0;
    char descr[16] = "", dims[64] = "";
    if (sscanf(line, "@npy %15s %63s", descr, dims) < 1) return false;
    const char *code = descr + (descr[0] == '<' || descr[0] == '|' || descr[0] == '=');
    QrDType dt = QR_DT_UNDEF;
    for (int i = 0; i < QR_ARRAY_LEN(types); i++) if (!strcmp(code, types[i].code)) dt = types[i].dt;
    int rank = 0;
    int64_t d[QR_MAX_RANK];
    if (dt == QR_DT_UNDEF || (dims[0] && qr_shape_parse(dims, &rank, d) != QR_OK)) { qr_err_clear(); return false; }
    QrTensor t = {0};
    if (qr_tensor_set_shape(&t, dt, rank, d) != QR_OK || t.numel > QR__HM_MAX_ELEMS || qr_tensor_alloc_data(&t) != QR_OK) {
        qr_err_clear();
        qr_tensor_free_data(&t);
        return false;
    }
    size_t nb = qr_tensor_nbytes(&t);
    uint8_t *px = t.data;
    for (size_t i = 0; i < nb; i++) px[i] = n_fill ? fill[i % n_fill] : (uint8_t)(i * 7 + 3);
    if (dt == QR_DT_BOOL) for (size_t i = 0; i < nb; i++) px[i] &= 1;     /* numpy bools are 0/1 */
    bool ok = qr_npy_encode(&t, out, out_len) == QR_OK;
    if (!ok) qr_err_clear();
    qr_tensor_free_data(&t);
    return ok;
}

/* Creates one record under root (see the format above); anything unusable is skipped. */
static void qr__hm_make_entry(const char *root, const uint8_t *path, size_t path_len, const uint8_t *c, size_t n) {
    char rel[512], full[1024];
    size_t rl = QR_MIN(path_len, sizeof rel - 1);
    memcpy(rel, path, rl);
    rel[rl] = 0;                                   /* a NUL in the path ends it */
    size_t len = strlen(rel);
    bool is_dir = len > 0 && rel[len - 1] == '/';
    size_t fl = (size_t)snprintf(full, sizeof full, "%s", root);
    int depth = 0;
    char *save = NULL, *comp[8];
    int nc = 0;
    for (char *tok = strtok_r(rel, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (!tok[0] || !strcmp(tok, ".")) continue;
        if (!strcmp(tok, "..") || strlen(tok) > 200 || ++depth > 6) return;
        comp[nc++] = tok;
    }
    if (!nc) return;
    for (int k = 0; k < nc; k++) {
        fl += (size_t)snprintf(full + fl, sizeof full - fl, "/%s", comp[k]);
        if (fl >= sizeof full) return;
        if (k + 1 < nc || is_dir) { if (mkdir(full, 0755) != 0 && errno != EEXIST) return; }
    }
    if (is_dir) return;
    if (n >= 5 && !memcmp(c, "@fifo", 5)) { mkfifo(full, 0644); return; }
    if (n >= 6 && !memcmp(c, "@link ", 6)) {
        char target[256];
        size_t tl = 0;
        for (size_t i = 6; i < n && c[i] != '\n' && c[i] && tl + 1 < sizeof target; i++) target[tl++] = (char)c[i];
        target[tl] = 0;
        if (tl && target[0] != '/' && !strstr(target, "..")) { if (symlink(target, full) != 0) { /* exists: skip */ } }
        return;
    }
    unsigned char *gen = NULL;
    size_t gen_len = 0;
    if (n >= 5 && !memcmp(c, "@npy ", 5) && qr__hm_npy_directive(c, n, &gen, &gen_len)) { c = gen; n = gen_len; }
    int fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
        size_t done = 0;
        while (done < n) {
            ssize_t w = write(fd, c + done, n - done);
            if (w <= 0) break;
            done += (size_t)w;
        }
        close(fd);
    }
    free(gen);
}

/* Builds the tree of the records of data[1..size) under root. */
static void qr__hm_make_tree(const char *root, const uint8_t *data, size_t size) {
    static const char mark[] = "\n==> ", close_mark[] = " <==\n";
    const uint8_t *end = data + size, *r = data + 1;
    if (size < 5 || memcmp(r, mark + 1, 4)) {                   /* the first record may start the input */
        r = size > 1 ? memmem(data + 1, size - 1, mark, 5) : NULL;
        if (r) r++;
    }
    for (int k = 0; r && k < QR__HM_MAX_RECORDS; k++) {
        const uint8_t *path = r + 4;
        if (path > end) break;
        const uint8_t *pe = memmem(path, (size_t)(end - path), close_mark, 5);
        if (!pe) break;
        /* from the close mark's newline: an empty content is followed by "==> " at once */
        const uint8_t *c = pe + 5, *ce = memmem(pe + 4, (size_t)(end - pe - 4), mark, 5);
        if (!ce) ce = end;
        qr__hm_make_entry(root, path, (size_t)(pe - path), c, ce > c ? (size_t)(ce - c) : 0);
        r = ce < end ? ce + 1 : NULL;
    }
}

int qr__hm_fuzz_data_dir(const uint8_t *data, size_t size) {
    const char *dir = qr__hd_fuzz_dir();
    if (!dir || size < 1) return 0;
    int cfg = data[0], kind = (cfg & 3) == 3 ? 0 : cfg & 3, steps = (cfg >> 2) & 7;
    QrMetricKind metric = (QrMetricKind)((cfg >> 5) % QR_METRIC_COUNT);
    QrGraph *b = NULL, *a = NULL;
    if (qr__hm_pair(kind, dir, &b, &a) != QR_OK) {
        fprintf(stderr, "fuzz: the data-folder model pair does not build: %s\n", qr_err_msg());
        return -1;
    }
    char root[256], outd[256];
    snprintf(root, sizeof root, "%s/data", dir);
    snprintf(outd, sizeof outd, "%s/out", dir);
    qr__hm_rmtree(root);
    qr__hm_rmtree(outd);
    if (mkdir(root, 0755) != 0) return 0;
    qr__hm_make_tree(root, data, size);
    QrBadcase bc;
    qr_err_clear();
    QrStatus st = qr_badcase_search(b, a, root, steps, metric, NULL, &bc);
    int bad = 0;
    if (st != QR_OK) bad = qr__hd_failed_cleanly();
    else {
        if (bc.n < 1 || bc.n > bc.n_total || (steps > 0 && bc.n > steps) || bc.worst < 0 || bc.worst >= bc.n) {
            fprintf(stderr, "fuzz: bad-case search: %d of %d samples, worst %d (--num-steps %d)\n", bc.n, bc.n_total,
                    bc.worst, steps);
            bad = -1;
        }
        for (int k = 0; !bad && k < bc.n_inputs; k++)
            if (qr_run_check_input(b, k, &bc.inputs[k]) != QR_OK || qr_run_check_input(a, k, &bc.inputs[k]) != QR_OK) {
                fprintf(stderr, "fuzz: the worst sample does not fit the model: %s\n", qr_err_msg());
                bad = -1;
            }
        if (!bad && mkdir(outd, 0755) == 0) {
            qr_err_clear();
            if (qr_badcase_write(&bc, outd) != QR_OK) bad = qr__hd_failed_cleanly();
            else if (bc.n_inputs == 1) {
                char p[300];
                QrTensor back = {0};
                snprintf(p, sizeof p, "%s/badcase.npy", outd);
                if (qr_npy_read(p, &back) != QR_OK || !qr__hd_same_tensor(&back, &bc.inputs[0])) {
                    fprintf(stderr, "fuzz: badcase.npy does not read back as the worst sample: %s\n", qr_err_msg());
                    bad = -1;
                }
                qr_tensor_free_data(&back);
            }
        }
        qr_badcase_free(&bc);
    }
    qr__hm_rmtree(root);
    qr__hm_rmtree(outd);
    return bad;
}

#endif
