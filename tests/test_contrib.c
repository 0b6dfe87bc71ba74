/* tests/contrib — ONNX Runtime's contrib operators of issue 17 (ops/contrib_*.c) on the fixtures
 * of fixtures/make_contrib.py (fixtures/contrib/): one small model per case, each run in sim
 * mode against ORT with optimizations disabled (<case>.sim.npy) and in int mode (the int-mode
 * lowering, then the run) against ORT 'all' (<case>.int.npy). Cases ORT 1.30 CPU rejects, or
 * computes differently from the operator's definition (index.tsv status "ref"), are checked
 * against references written here from the definitions, in double precision; every reference is
 * also checked against ORT on the cases ORT gets right, so it cannot drift into agreeing with
 * qreport alone. */

#define QT_CB_DIR "fixtures/contrib"

/* Largest |a - b| over max |b|: how close a float output is, relative to its range. */
static double qt_cb_rel(const QrTensor *a, const QrTensor *b, int64_t *n_exact) {
    double mx = 0, d = 0;
    *n_exact = 0;
    for (int64_t i = 0; i < b->numel; i++) {
        double x = qr_tensor_get_f64(a, i), y = qr_tensor_get_f64(b, i);
        mx = fmax(mx, fabs(y));
        d = fmax(d, fabs(x - y));
        if (x == y) (*n_exact)++;
    }
    return mx > 0 ? d / mx : d;
}

/* Loads <case>.onnx and its input, infers, and runs it in sim (int_mode false) or int mode. */
static QrStatus qt_cb_run(const char *name, bool int_mode, QrGraph **gout, QrTensor *in, QrTensor *out) {
    char path[512];
    snprintf(path, sizeof path, QT_CB_DIR "/%s.input.npy", name);
    QR_TRY(qr_npy_read(path, in));
    snprintf(path, sizeof path, QT_CB_DIR "/%s.onnx", name);
    QrGraph *g = NULL;
    QR_TRY(qr_onnx_load(path, &g));
    *gout = g;
    QR_TRY(qr_graph_infer(g, in));
    if (!int_mode) return qr_run(g, in, NULL, out);
    QrQuantTable t;
    QrLowerInfo info;
    QrGraph low;
    memset(&t, 0, sizeof t);
    memset(&info, 0, sizeof info);
    memset(&low, 0, sizeof low);
    QrStatus st = qr_quant_table_build(g, &t);
    if (st == QR_OK) st = qr_quant_lower(g, &t, &low, &info);
    if (st == QR_OK) st = qr_run(&low, in, NULL, out);
    qr_graph_free(&low);
    qr_lower_info_free(&info);
    qr_quant_table_free(&t);
    return st;
}

/* ---- references from the operator definitions -------------------------------------------- */

/* The initializer read by input i of node n (NULL: absent). */
static const QrTensor *qt_cb_init(const QrGraph *g, const QrNode *n, int i) {
    if (i >= n->n_in || n->in[i] < 0) return NULL;
    return g->values[n->in[i]].t.data ? &g->values[n->in[i]].t : NULL;
}

static const QrNode *qt_cb_node(const QrGraph *g, const char *op_type) {
    for (int i = 0; i < g->n_nodes; i++) if (!strcmp(g->nodes[i].op_type, op_type)) return &g->nodes[i];
    return NULL;
}

/* Field `bits` wide at element index e of a byte array packed low bits first. */
static int qt_cb_field(const uint8_t *p, int64_t e, int bits) {
    int per = 8 / bits;
    return (p[e / per] >> ((e % per) * bits)) & ((1 << bits) - 1);
}

/* MatMulNBits from the contrib-op definition: W[n][k] = (code(n, k) - zp(n, b)) * scale(n, b) with
 * b = g_idx[k] (or k / block_size), zp the packed code, the float value or 2^(bits-1), then
 * Y = A @ W^T + bias, everything in double. zp_override >= 0 replaces every zero point (what
 * ORT 1.30 does with g_idx). A is graph input 0, rows of K values. Y: M x N doubles. */
static void qt_cb_ref_nbits(const QrGraph *g, const QrTensor *a, int zp_override, double *Y) {
    const QrNode *n = qt_cb_node(g, "MatMulNBits");
    int64_t K = qr_attr_int(n, "K", 0), N = qr_attr_int(n, "N", 0), bits = qr_attr_int(n, "bits", 4);
    int64_t bs = qr_attr_int(n, "block_size", 0), nb = (K + bs - 1) / bs, blob = bs * bits / 8;
    int64_t zrow = (nb * bits + 7) / 8, M = a->numel / K;
    const QrTensor *B = qt_cb_init(g, n, 1), *S = qt_cb_init(g, n, 2), *Z = qt_cb_init(g, n, 3);
    const QrTensor *G = qt_cb_init(g, n, 4), *bias = qt_cb_init(g, n, 5);
    for (int64_t m = 0; m < M; m++)
        for (int64_t j = 0; j < N; j++) {
            double acc = bias ? qr_tensor_get_f64(bias, j) : 0.0;
            for (int64_t k = 0; k < K; k++) {
                int64_t b = G ? qr_tensor_get_i64(G, k) : k / bs;
                double code = qt_cb_field((const uint8_t *)B->data + j * nb * blob, k, (int)bits);
                double zp = (double)(1 << (bits - 1));
                if (Z && Z->dtype == QR_DT_U8) zp = qt_cb_field((const uint8_t *)Z->data + j * zrow, b, (int)bits);
                else if (Z) zp = qr_tensor_get_f64(Z, j * nb + b);
                if (zp_override >= 0) zp = zp_override;
                double w = (code - zp) * qr_tensor_get_f64(S, j * nb + b);
                acc += qr_tensor_get_f64(a, m * K + k) * w;
            }
            Y[m * N + j] = acc;
        }
}

/* The reference of case `name` (by its operator) into y (same numel as qreport's output). */
static bool qt_cb_reference(const char *name, const QrGraph *g, const QrTensor *in, int zp_override, double *y) {
    if (!strncmp(name, "mmnb_", 5)) { qt_cb_ref_nbits(g, in, zp_override, y); return true; }
    return false;
}

static double qt_cb_rel_ref(const QrTensor *a, const double *ref, int64_t n) {
    double mx = 0, d = 0;
    for (int64_t i = 0; i < n; i++) {
        mx = fmax(mx, fabs(ref[i]));
        d = fmax(d, fabs(qr_tensor_get_f64(a, i) - ref[i]));
    }
    return mx > 0 ? d / mx : d;
}

/* ---- the cases ------------------------------------------------------------------------------ */

/* Tolerances, relative to the output's largest magnitude. ORT: qreport dequantizes exactly as
 * ORT and sums in float32, ORT's blocked kernels sum in another order (most float cases come out
 * bit-identical; the int8-activation path differs by a few float32 roundings). Reference: a
 * float32 computation against a double one. */
#define QT_CB_TOL_ORT 4e-6
#define QT_CB_TOL_REF 2e-5

static void qt_cb_case(const char *name, const char *status) {
    char what[160];
    bool ort = !strcmp(status, "ort");
    for (int mode = 0; mode < 2; mode++) {
        snprintf(what, sizeof what, "contrib %s (%s)", name, mode ? "int" : "sim");
        QrGraph *g = NULL;
        QrTensor in = {0}, out = {0}, gold = {0};
        double *ref = NULL;
        QrStatus st = qt_cb_run(name, mode == 1, &g, &in, &out);
        char msg[400] = "";
        bool ok = st == QR_OK;
        if (!ok) snprintf(msg, sizeof msg, "run: %s: %s", qr_status_name(st), qr_err_msg());
        char path[512];
        snprintf(path, sizeof path, QT_CB_DIR "/%s.%s.npy", name, mode ? "int" : "sim");
        bool have_gold = ok && qr_npy_read(path, &gold) == QR_OK;
        if (ok && ort && !have_gold) { ok = false; snprintf(msg, sizeof msg, "missing golden %s", path); }
        if (ok && have_gold && gold.numel != out.numel) {
            ok = false;
            snprintf(msg, sizeof msg, "%lld values, ORT %lld", (long long)out.numel, (long long)gold.numel);
        }
        int64_t exact = 0;
        if (ok && ort) {
            double r = qt_cb_rel(&out, &gold, &exact);
            if (!(r <= QT_CB_TOL_ORT)) { ok = false; snprintf(msg, sizeof msg, "vs ORT: max rel %.3g", r); }
            else if (qt_verbose)
                printf("     %s: vs ORT max rel %.3g, %lld/%lld bit-identical\n", what, r, (long long)exact,
                       (long long)out.numel);
        }
        if (ok && (ref = calloc((size_t)out.numel, sizeof(double))) && qt_cb_reference(name, g, &in, -1, ref)) {
            double r = qt_cb_rel_ref(&out, ref, out.numel);
            /* the int8-activation MatMulNBits cases differ from the float definition by design */
            bool int8_act = ort && strstr(name, "acc4") && !strstr(name, "b2_") && !strstr(name, "floatzp");
            double tol = strstr(name, "fp16") ? 2e-3 : QT_CB_TOL_REF;   /* A and Y rounded to float16 */
            if (!int8_act && !(r <= tol)) {
                ok = false;
                snprintf(msg, sizeof msg, "vs the reference from the definition: max rel %.3g", r);
            }
            if (ok && !ort && have_gold) {   /* ORT runs it but deviates: the deviation must be the documented one */
                if (!strcmp(name, "mmnb_b4_bs16_gidx")) {
                    qt_cb_ref_nbits(g, &in, 8, ref);
                    double rg = qt_cb_rel_ref(&gold, ref, gold.numel);
                    if (!(rg <= QT_CB_TOL_REF)) {
                        ok = false;
                        snprintf(msg, sizeof msg, "ORT's output is not the definition with zero points 8: %.3g", rg);
                    }
                }
            }
        } else if (ok && !ort) {
            ok = false;
            snprintf(msg, sizeof msg, "no reference implementation for a case ORT cannot check");
        }
        qt_record(what, ok, "%s", msg);
        free(ref);
        qr_tensor_free_data(&in);
        qr_tensor_free_data(&out);
        qr_tensor_free_data(&gold);
        if (g) { qr_graph_free(g); free(g); }
    }
}

static void qt_contrib_all(void) {
    unsigned char *buf = NULL;
    size_t len = 0;
    if (qr_file_read(QT_CB_DIR "/index.tsv", 1 << 20, &buf, &len) != QR_OK) {
        qt_record("contrib index", false, "cannot read " QT_CB_DIR "/index.tsv: %s", qr_err_msg());
        return;
    }
    char *s = (char *)buf, *save = NULL;
    int n = 0;
    for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        char *status = tab + 1, *t2 = strchr(status, '\t');
        if (t2) *t2 = 0;
        qt_cb_case(line, status);
        n++;
    }
    qt_record("contrib index", n > 0, "no cases in " QT_CB_DIR "/index.tsv");
    free(buf);
}
