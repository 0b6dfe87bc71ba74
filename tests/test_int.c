/* tests/int — the `int` execution mode (quant/lower): on every fixture pair the lowered graph is
 * compared with ONNX Runtime's optimized execution (graph optimization level 'all', which fuses
 * the same Q/DQ groups into its integer kernels) — every integer activation ORT exposes
 * (fixtures/qpairs_int/<pair>/), the graph output on the bad case and on 64 candidate inputs —
 * and with the sim mode per layer; differences may only be 1 LSB at rounding ties. Unit tests
 * build small QDQ models in C for 16-bit accumulation (int64, and the proof-based int32 path). */

static const char *const qt_int_pairs[] = { "qat_fakequant", "ort_qdq", "qoperator", "int16_mixed", "integer_ops" };

/* A fixture pair's analysis model, its int-mode version and the bad-case input. */
typedef struct QtIntModel {
    QrGraph *g;
    QrGraph low;
    QrQuantTable t;
    QrLowerInfo info;
    QrTensor in;
} QtIntModel;

static void qt_int_free(QtIntModel *m) {
    qr_graph_free(&m->low);          /* borrows from g: first */
    qr_lower_info_free(&m->info);
    qr_quant_table_free(&m->t);
    qr_tensor_free_data(&m->in);
    if (m->g) { qr_graph_free(m->g); free(m->g); }
    memset(m, 0, sizeof *m);
}

static QrStatus qt_int_load_graph(QtIntModel *m, QrGraph *g, const QrTensor *in) {
    m->g = g;
    QR_TRY(qr_graph_infer(m->g, in));
    QR_TRY(qr_quant_table_build(m->g, &m->t));
    return qr_quant_lower(m->g, &m->t, &m->low, &m->info);
}

static QrStatus qt_int_load(QtIntModel *m, const char *pair) {
    char path[512];
    memset(m, 0, sizeof *m);
    snprintf(path, sizeof path, "fixtures/qpairs/%s/input.npy", pair);
    QR_TRY(qr_npy_read(path, &m->in));
    snprintf(path, sizeof path, "fixtures/qpairs/%s/analysis.onnx", pair);
    QrGraph *g = NULL;
    QR_TRY(qr_onnx_load(path, &g));
    return qt_int_load_graph(m, g, &m->in);
}

static const QrLowerGroup *qt_int_group(const QrLowerInfo *info, const char *name) {
    for (int i = 0; i < info->n_groups; i++) if (!strcmp(info->groups[i].name, name)) return &info->groups[i];
    return NULL;
}

/* Scale of the DequantizeLinear writing graph output 0 (0: a float output without one). */
static double qt_int_out_scale(const QrGraph *g) {
    int p = g->values[g->outputs[0]].producer;
    if (p < 0 || strcmp(g->nodes[p].op_type, "DequantizeLinear")) return 0;
    return qr_tensor_get_f64(&g->values[g->nodes[p].in[1]].t, 0);
}

/* Output differences: in LSB of the output's DequantizeLinear (rounded), or, for a float output
 * without one (lsb == 0), elements beyond a relative 1e-5 count as 1 (float kernels of the two
 * runtimes may differ in the last bit, e.g. GlobalAveragePool's summation order). */
static double qt_int_max_abs;    /* largest |difference| of float outputs (reported) */
static void qt_int_cmp_float(const QrTensor *a, const float *b, double lsb, int64_t *n_diff, int64_t *max_lsb) {
    const float *pa = a->data;
    for (int64_t i = 0; i < a->numel; i++) {
        double d = fabs((double)pa[i] - b[i]);
        if (d > qt_int_max_abs) qt_int_max_abs = d;
        int64_t l = lsb > 0 ? (int64_t)llround(d / lsb) : (d > 1e-5 * fmax(1.0, fabs((double)b[i])) ? 1 : 0);
        if (l) { (*n_diff)++; if (l > *max_lsb) *max_lsb = l; }
    }
}

/* ---- every integer activation ORT exposes, against the int run ---------------------------- */

typedef struct QtIntGold {
    const char *dir;
    QrStrMap idx;
    QrArena arena;
    char **names, **files;
    int n, n_seen;
    int64_t n_elems, n_diff, max_lsb;
    char report[2048];
    char err[512];
} QtIntGold;

static QrStatus qt_int_gold_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QtIntGold *gd = user;
    QR_UNUSED(node);
    int row = qr_strmap_get(&gd->idx, g->values[value].name);
    if (row < 0) return QR_OK;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", gd->dir, gd->files[row]);
    QrTensor want = {0};
    QR_TRY(qr_npy_read(path, &want));
    gd->n_seen++;
    int64_t nd = 0, mx = 0;
    if (want.numel != t->numel || want.dtype != t->dtype) {
        snprintf(gd->err, sizeof gd->err, "'%s': %lld x %s, ORT %lld x %s", gd->names[row], (long long)t->numel,
                 qr_dtype_name(t->dtype), (long long)want.numel, qr_dtype_name(want.dtype));
    } else {
        for (int64_t i = 0; i < t->numel; i++) {
            int64_t d = llabs((long long)(qr_tensor_get_i64(t, i) - qr_tensor_get_i64(&want, i)));
            if (d) { nd++; if (d > mx) mx = d; }
        }
    }
    gd->n_elems += t->numel;
    gd->n_diff += nd;
    if (mx > gd->max_lsb) gd->max_lsb = mx;
    size_t o = strlen(gd->report);
    snprintf(gd->report + o, sizeof gd->report - o, "\n    %-52s %5lld/%-6lld differ, max %lld LSB", gd->names[row],
             (long long)nd, (long long)t->numel, (long long)mx);
    qr_tensor_free_data(&want);
    return QR_OK;
}

static QrStatus qt_int_gold_load(QtIntGold *gd, const char *dir) {
    char path[512];
    unsigned char *buf = NULL;
    size_t len = 0;
    memset(gd, 0, sizeof *gd);
    gd->dir = dir;
    snprintf(path, sizeof path, "%s/index.tsv", dir);
    QR_TRY(qr_file_read(path, 0, &buf, &len));
    int lines = 0;
    for (size_t i = 0; i < len; i++) lines += buf[i] == '\n';
    gd->names = qr_arena_array(&gd->arena, (size_t)lines + 1, sizeof(char *));
    gd->files = qr_arena_array(&gd->arena, (size_t)lines + 1, sizeof(char *));
    QrStatus st = gd->names && gd->files ? qr_strmap_init(&gd->idx, &gd->arena, (uint32_t)lines + 1)
                                         : qr_errf(QR_ERR_NOMEM, "oom");
    for (char *line = (char *)buf; st == QR_OK && line && *line;) {
        char *nl = strchr(line, '\n'), *tab = strchr(line, '\t');
        if (nl) *nl = 0;
        if (!tab) { st = qr_errf(QR_ERR_PARSE, "%s: bad line '%s'", path, line); break; }
        *tab = 0;
        gd->names[gd->n] = qr_arena_strdup(&gd->arena, line);
        gd->files[gd->n] = qr_arena_strdup(&gd->arena, tab + 1);
        st = qr_strmap_put(&gd->idx, &gd->arena, gd->names[gd->n], gd->n);
        gd->n++;
        line = nl ? nl + 1 : NULL;
    }
    qr_aligned_free(buf);
    return st;
}

static const char *qt_int_why(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const char *qt_int_why(char *msg, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    return msg;
}

/* int vs sim per layer, summed over runs. "origin" differences are those of a layer whose inputs
 * agreed in that run: they must all be rounding ties of 1 LSB. The others follow a difference
 * upstream (1 LSB of an 8-bit input is many LSB of a 16-bit output). */
typedef struct QtIntLayerSum {
    int64_t n, n_diff, n_tie, max_lsb, origin_diff, origin_tie, origin_max_lsb;
    double max_origin_dist;
} QtIntLayerSum;

static void qt_int_sum(QtIntLayerSum *sum, const QrLowerCmp *c) {
    for (int l = 0; l < c->n; l++) {
        const QrLowerLayerCmp *L = &c->layers[l];
        QtIntLayerSum *S = &sum[l];
        S->n += L->n;
        S->n_diff += L->n_diff;
        S->n_tie += L->n_tie;
        if (L->max_lsb > S->max_lsb) S->max_lsb = L->max_lsb;
        if (!L->upstream_differs && L->n_diff) {
            S->origin_diff += L->n_diff;
            S->origin_tie += L->n_tie;
            if (L->max_lsb > S->origin_max_lsb) S->origin_max_lsb = L->max_lsb;
            if (L->max_tie_dist > S->max_origin_dist) S->max_origin_dist = L->max_tie_dist;
        }
    }
}

/* What each pair must lower: "<name>:<int op>:<acc>" per group (the rest of the groups may be
 * anything, but these must be there), and how many groups in all. */
typedef struct QtIntExpect { const char *pair; int n_groups; const char *groups[12]; } QtIntExpect;
static const QtIntExpect qt_int_expect[] = {
    { "qat_fakequant", 5, { "/dw/Conv:QLinearConv:s32", "/pw/Conv:QLinearConv:s32", "/Add:QLinearAdd:f32",
                            "/pool/MaxPool:QMaxPool:none", "/conv/Conv:QLinearConv:s32" } },
    { "ort_qdq", 8, { "/stem/Conv:QLinearConv:s32", "/dw/Conv:QLinearConv:s32", "/pw/Conv:QLinearConv:s32",
                      "/Add:QLinearAdd:f32", "/pool/MaxPool:QMaxPool:none", "/conv/Conv:QLinearConv:s32",
                      "/gap/GlobalAveragePool:QLinearGlobalAveragePool:s32", "/fc/Gemm:QGemm:s32" } },
    { "qoperator", 0, { NULL } },
    { "int16_mixed", 11, { "/dw/Conv:QLinearConv:s32", "/pw/Conv:QLinearConv:s64", "/conv/Conv:QLinearConv:s32-proven",
                           "/dw_relu/Relu:QRequantize:none", "/pool/MaxPool:QMaxPool:none", "/Add:QLinearAdd:f32",
                           "/fc/Gemm:QGemm:s32" } },
    { "integer_ops", 0, { NULL } },
};

static const char *qt_int_check_groups(const char *pair, const QrLowerInfo *info, char *msg, size_t n) {
    for (int e = 0; e < QR_ARRAY_LEN(qt_int_expect); e++) {
        const QtIntExpect *x = &qt_int_expect[e];
        if (strcmp(x->pair, pair)) continue;
        if (info->n_groups != x->n_groups) {
            snprintf(msg, n, "%d groups lowered, expected %d", info->n_groups, x->n_groups);
            return msg;
        }
        for (int i = 0; x->groups[i]; i++) {
            char want[160], got[160] = "";
            snprintf(want, sizeof want, "%s", x->groups[i]);
            char *op = strchr(want, ':'), *acc = op ? strchr(op + 1, ':') : NULL;
            *op++ = 0;
            *acc++ = 0;
            const QrLowerGroup *G = qt_int_group(info, want);
            if (G) snprintf(got, sizeof got, "%s:%s", strchr(G->int_op, '.') ? strrchr(G->int_op, '.') + 1 : G->int_op,
                            qr_quant_acc_name(G->acc));
            char w2[160];
            snprintf(w2, sizeof w2, "%s:%s", op, acc);
            if (!G || strcmp(got, w2)) {
                snprintf(msg, n, "group '%s': want %s, got %s", want, w2, G ? got : "none");
                return msg;
            }
        }
    }
    return NULL;
}

/* Per pair: int mode vs ORT 'all' (every exposed activation and the output on the bad case, the
 * output on 64 candidates) and vs sim per layer (bad case + candidates). */
static void qt_int_pair(const char *pair) {
    char name[128], dir[256], path[512], msg[512] = "";
    snprintf(name, sizeof name, "int/%s", pair);
    QtIntModel m;
    QtIntGold gd = {0};
    QtIntLayerSum *sum = NULL;
    QrTensor out = {0}, gold = {0}, cand = {0}, cand_gold = {0}, x1 = {0}, o1 = {0};
    int n_layers = 0, runs = 0;
    snprintf(dir, sizeof dir, "fixtures/qpairs_int/%s", pair);
    QrStatus st = qt_int_load(&m, pair);
    if (st == QR_OK) st = qt_int_gold_load(&gd, dir);
    QrRunOpts opts = { .tap = qt_int_gold_tap, .tap_user = &gd };
    if (st == QR_OK) st = qr_run(&m.low, &m.in, &opts, &out);
    snprintf(path, sizeof path, "fixtures/qpairs/%s/golden_int/output_0.npy", pair);
    if (st == QR_OK) st = qr_npy_read(path, &gold);
    double lsb = qt_int_out_scale(m.g);
    qt_int_max_abs = 0;
    int64_t out_diff = 0, out_max = 0, cand_diff = 0, cand_max = 0;
    if (st == QR_OK) qt_int_cmp_float(&out, gold.data, lsb, &out_diff, &out_max);
    if (st == QR_OK) st = qr_npy_read("fixtures/qpairs_int/candidates.npy", &cand);
    snprintf(path, sizeof path, "%s/candidates_output_0.npy", dir);
    if (st == QR_OK) st = qr_npy_read(path, &cand_gold);
    if (st == QR_OK) st = qr_tensor_set_shape(&x1, cand.dtype, cand.rank - 1, cand.dims + 1);
    if (st == QR_OK) st = qr_tensor_alloc_data(&x1);
    if (st == QR_OK && !(sum = calloc((size_t)m.t.n + 1, sizeof *sum))) st = qr_errf(QR_ERR_NOMEM, "oom");
    int64_t per_out = cand_gold.rank > 0 && cand_gold.dims[0] ? cand_gold.numel / cand_gold.dims[0] : 0;
    /* run -1: the bad case; then the candidates */
    for (int64_t k = -1; st == QR_OK && k < cand.dims[0]; k++, runs++) {
        const QrTensor *xin = &m.in;
        if (k >= 0) {
            memcpy(x1.data, (const float *)cand.data + k * x1.numel, qr_tensor_nbytes(&x1));
            xin = &x1;
            st = qr_run(&m.low, xin, NULL, &o1);
            if (st == QR_OK && o1.numel != per_out) st = qr_errf(QR_ERR_SHAPE, "candidate output size");
            if (st == QR_OK)
                qt_int_cmp_float(&o1, (const float *)cand_gold.data + k * per_out, lsb, &cand_diff, &cand_max);
            qr_tensor_free_data(&o1);
        }
        QrLowerCmp cmp = {0};
        if (st == QR_OK) st = qr_lower_compare(m.g, &m.t, &m.low, xin, 0, &cmp);
        for (int l = 0; st == QR_OK && l < cmp.n; l++)
            if (!cmp.layers[l].seen_int || !cmp.layers[l].seen_sim)
                st = qr_errf(QR_ERR_INVALID, "layer '%s' not produced by both modes", cmp.layers[l].name);
        if (st == QR_OK) { qt_int_sum(sum, &cmp); n_layers = cmp.n; }
        if (st == QR_OK && k == -1 && qt_verbose) {
            printf("  %s: int vs sim on the bad case\n", pair);
            for (int l = 0; l < cmp.n; l++) {
                const QrLowerLayerCmp *L = &cmp.layers[l];
                printf("    %-52s %-24s %5lld/%-6lld differ, %lld at ties, max %lld LSB%s\n", L->name, L->layer,
                       (long long)L->n_diff, (long long)L->n, (long long)L->n_tie, (long long)L->max_lsb,
                       L->upstream_differs ? " (an input differed)" : "");
            }
        }
        qr_lower_cmp_free(&cmp);
    }
    QrLowerCmp names = {0};          /* layer names, in the order of the sums */
    if (st == QR_OK) st = qr_lower_cmp_init(&names, m.g, &m.t, 0);
    const char *bad = NULL;
    int64_t sim_n = 0, sim_diff = 0, sim_tie = 0, sim_max = 0;
    double sim_dist = -1;
    for (int l = 0; l < n_layers; l++) {
        sim_n += sum[l].n;
        sim_diff += sum[l].n_diff;
        sim_tie += sum[l].n_tie;
        if (sum[l].origin_max_lsb > sim_max) sim_max = sum[l].origin_max_lsb;
        if (sum[l].max_origin_dist > sim_dist) sim_dist = sum[l].max_origin_dist;
    }
    /* "small": at most 1% of the elements compared may differ (at ties) */
    long long ld = gd.n_diff, le = gd.n_elems, lo = out_max, lc = cand_max, lcd = cand_diff, lcn = cand_gold.numel;
    if (st != QR_OK) bad = qr_err_msg();
    else if ((bad = qt_int_check_groups(pair, &m.info, msg, sizeof msg))) {}
    else if (gd.err[0]) bad = gd.err;
    else if (gd.n_seen != gd.n) bad = qt_int_why(msg, sizeof msg, "%d of %d ORT activations produced", gd.n_seen, gd.n);
    else if (gd.max_lsb > 1) bad = qt_int_why(msg, sizeof msg, "an activation differs from ORT by %lld LSB",
                                                    (long long)gd.max_lsb);
    else if (ld * 100 > le) bad = qt_int_why(msg, sizeof msg, "%lld of %lld activations' elements differ", ld, le);
    else if (lo > 1) bad = qt_int_why(msg, sizeof msg, "the output differs from ORT by %lld LSB", lo);
    else if (lc > 1) bad = qt_int_why(msg, sizeof msg, "a candidate's output differs from ORT by %lld LSB", lc);
    else if (lcd * 100 > lcn) bad = qt_int_why(msg, sizeof msg, "%lld of %lld candidate outputs differ", lcd, lcn);
    else if (sim_max > 1) bad = qt_int_why(msg, sizeof msg, "int and sim differ by %lld LSB with equal inputs",
                                           (long long)sim_max);
    else if (sim_diff * 100 > sim_n)
        bad = qt_int_why(msg, sizeof msg, "%lld of %lld elements differ between int and sim", (long long)sim_diff,
                         (long long)sim_n);
    for (int l = 0; !bad && l < n_layers; l++)
        if (sum[l].origin_diff != sum[l].origin_tie)
            bad = qt_int_why(msg, sizeof msg, "'%s': %lld int/sim differences with equal inputs, only %lld at rounding "
                             "ties (farthest %.4f LSB from k+0.5)", names.layers[l].name, (long long)sum[l].origin_diff,
                             (long long)sum[l].origin_tie, sum[l].max_origin_dist);
    qt_record(name, !bad, "%s", bad ? bad : "");
    printf("int %s: %d groups lowered, %d nodes left float; vs ONNX Runtime 'all': %d activations %lld/%lld "
           "elements differ (max %lld LSB), output %lld/%lld, 64 candidates' outputs %lld/%lld (max %lld LSB, max "
           "|diff| %.3g); vs sim "
           "over %d runs: %lld/%lld elements differ, %lld of them at rounding ties (max %lld LSB and %.4f LSB from "
           "k+0.5 where the inputs agreed)\n",
           pair, m.info.n_groups, m.info.n_skipped, gd.n_seen, (long long)gd.n_diff, (long long)gd.n_elems,
           (long long)gd.max_lsb, (long long)out_diff, (long long)out.numel, (long long)cand_diff,
           (long long)cand_gold.numel, (long long)cand_max, qt_int_max_abs, runs, (long long)sim_diff, (long long)sim_n,
           (long long)sim_tie, (long long)sim_max, sim_dist < 0 ? 0.0 : sim_dist);
    if (qt_verbose) printf("  vs ONNX Runtime 'all' per activation (bad case):%s\n", gd.report);
    if (st == QR_OK)
        for (int l = 0; l < n_layers; l++)
            if (sum[l].n_diff || qt_verbose)
                printf("    int vs sim %-50s %-16s %4lld/%-6lld differ (max %lld LSB), %lld at ties; with equal inputs "
                       "%lld, %lld at ties\n", names.layers[l].name, names.layers[l].layer, (long long)sum[l].n_diff,
                       (long long)sum[l].n, (long long)sum[l].max_lsb, (long long)sum[l].n_tie,
                       (long long)sum[l].origin_diff, (long long)sum[l].origin_tie);
    qr_lower_cmp_free(&names);
    if (qt_verbose) {
        for (int i = 0; i < m.info.n_groups; i++) {
            const QrLowerGroup *G = &m.info.groups[i];
            printf("    group %-22s %-26s %-38s %s x %s -> %s acc %s [%d, %d]%s%s\n", G->name, G->pattern, G->int_op,
                   qr_dtype_name(G->in_dtype), G->w_dtype ? qr_dtype_name(G->w_dtype) : "-",
                   qr_dtype_name(G->out_dtype), qr_quant_acc_name(G->acc), G->qmin, G->qmax, G->note ? "; " : "",
                   G->note ? G->note : "");
        }
        for (int i = 0; i < m.info.n_skipped; i++)
            printf("    float %-22s %-18s %s\n", m.info.skipped[i].name, m.info.skipped[i].op_type,
                   m.info.skipped[i].why);
    }
    free(sum);
    qr_arena_free(&gd.arena);
    qr_tensor_free_data(&out);
    qr_tensor_free_data(&gold);
    qr_tensor_free_data(&cand);
    qr_tensor_free_data(&cand_gold);
    qr_tensor_free_data(&x1);
    qt_int_free(&m);
}

static void test_int_pairs(void) {
    for (int i = 0; i < QR_ARRAY_LEN(qt_int_pairs); i++) qt_int_pair(qt_int_pairs[i]);
}

/* ---- models built in C ------------------------------------------------------------------- */

static void qt_int_scalar(QtModel *mb, const char *name, QrDType dt, double v) {
    unsigned char buf[8] = { 0 };
    QrTensor t = { .dtype = dt, .numel = 1, .data = buf };
    qr_tensor_set_f64(&t, 0, v);
    qt_mb_init_raw(mb, name, dt, 0, NULL, buf, qr_dtype_size(dt));
}

static void qt_int_attr_i(QtModel *mb, Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = qt_mb_attr(mb, n, name, QR_ATTR_INT);
    a->has_i = 1;
    a->i = v;
}

/* y = Q(MatMul(DQ(Q(x)), DQ(w))) with scale 1 / zero point 0 for x (type xdt) and w (type wdt,
 * [K, N]), y int16 with scale ys. Loaded and lowered into m (input x: [1, K] float). */
static QrStatus qt_int_mm_model(QtIntModel *m, int64_t K, int64_t N, QrDType xdt, QrDType wdt, const void *w,
                                float ys, const float *x) {
    QtModel mb;
    memset(m, 0, sizeof *m);
    qt_mb_init(&mb, 21);
    int64_t dx[2] = { 1, K }, dw[2] = { K, N }, dy[2] = { 1, N };
    qt_int_scalar(&mb, "one", QR_DT_F32, 1.0);
    qt_int_scalar(&mb, "xz", xdt, 0);
    qt_int_scalar(&mb, "wz", wdt, 0);
    qt_int_scalar(&mb, "ys", QR_DT_F32, ys);
    qt_int_scalar(&mb, "yz", QR_DT_S16, 0);
    qt_mb_init_raw(&mb, "w", wdt, 2, dw, w, (size_t)(K * N) * qr_dtype_size(wdt));
    qt_mb_input(&mb, "x", QR_DT_F32, 2, dx);
    qt_mb_output(&mb, "yq", QR_DT_S16, 2, dy);
    qt_mb_node(&mb, "QuantizeLinear", "qx", "x,one,xz", "xq");
    qt_mb_node(&mb, "DequantizeLinear", "dqx", "xq,one,xz", "xd");
    qt_mb_node(&mb, "DequantizeLinear", "dqw", "w,one,wz", "wd");
    qt_mb_node(&mb, "MatMul", "mm", "xd,wd", "y");
    qt_mb_node(&mb, "QuantizeLinear", "qy", "y,ys,yz", "yq");
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "int_mm.onnx", &g);
    qt_mb_free(&mb);
    QR_TRY(st);
    QR_TRY(qr_tensor_set_shape(&m->in, QR_DT_F32, 2, dx));
    QR_TRY(qr_tensor_alloc_data(&m->in));
    memcpy(m->in.data, x, (size_t)K * sizeof(float));
    return qt_int_load_graph(m, g, &m->in);
}

/* The requantization the integer ops document: (float)acc * float multiplier, round half to even,
 * saturate to int16. acc comes from the test's own int64 loop. */
static int32_t qt_int_req16(int64_t acc, float ys) {
    float v = (float)acc * (1.0f * 1.0f / ys);
    v = rintf(v);
    return v < -32768.0f ? -32768 : v > 32767.0f ? 32767 : (int32_t)v;
}

/* int16 activations x int16 weights, K = 4096: sums reach ~4e12, far past int32; the lowered
 * MatMul must accumulate in int64 and give exactly the int64 sums' requantization. */
static void test_int16_s64_accumulation(void) {
    enum { K = 4096, N = 4 };
    static float x[K];
    static int16_t w[K * N];
    uint64_t rng = 77;
    for (int k = 0; k < K; k++) {
        x[k] = (float)(30000 + k % 2700);                       /* large, positive */
        w[k * N + 0] = (int16_t)(25000 + k % 7000);             /* same sign: the sum overflows int32 */
        w[k * N + 1] = (int16_t)(k % 2 ? 32767 : -32768);       /* alternating */
        w[k * N + 2] = (int16_t)((int64_t)(qr_rng_next(&rng) % 65536) - 32768);
        w[k * N + 3] = (int16_t)-(20000 + k % 9000);            /* negative */
    }
    float ys = 268435456.0f;                                    /* 2^28: outputs within int16 */
    QtIntModel m;
    QrTensor y = {0};
    QrStatus st = qt_int_mm_model(&m, K, N, QR_DT_S16, QR_DT_S16, w, ys, x);
    if (st == QR_OK) st = qr_run(&m.low, &m.in, NULL, &y);
    const QrLowerGroup *G = st == QR_OK ? qt_int_group(&m.info, "mm") : NULL;
    int64_t acc[N] = { 0 };
    uint32_t wrap[N] = { 0 };
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++) {
            acc[n] += (int64_t)x[k] * w[k * N + n];
            wrap[n] += (uint32_t)((int64_t)x[k] * w[k * N + n]);
        }
    int16_t got[N] = { 0 };
    if (st == QR_OK) memcpy(got, y.data, sizeof got);
    qr_tensor_free_data(&y);
    QrQuantAcc acc_kind = G ? G->acc : QR_QACC_NONE;
    char int_op[64];
    snprintf(int_op, sizeof int_op, "%s", G ? G->int_op : "");
    qt_int_free(&m);
    QT_OK(st);
    QT_CHECKF(G && acc_kind == QR_QACC_S64 && !strcmp(int_op, "qreport.int.QLinearMatMul"), "group %s acc %s",
              int_op, qr_quant_acc_name(acc_kind));
    QT_CHECK(acc[0] > INT32_MAX && acc[3] < INT32_MIN);       /* the case really overflows int32 */
    QT_CHECK(qt_int_req16((int32_t)wrap[0], ys) != qt_int_req16(acc[0], ys));   /* and int32 would show */
    for (int n = 0; n < N; n++)
        QT_CHECKF(got[n] == qt_int_req16(acc[n], ys), "column %d: got %d, int64 reference %d (acc %lld)", n, got[n],
                  qt_int_req16(acc[n], ys), (long long)acc[n]);
}

/* int16 activations x int8 weights: with sum |w| = 65532 the bound 32768 * 65532 <= INT32_MAX
 * proves int32 exact (K = 516); one more weight (K = 517) breaks the proof and the sum of the
 * worst-case input really leaves int32: the op must switch to int64. Both exact. */
static void test_int16_proven_s32(void) {
    for (int K = 516; K <= 517; K++) {
        static float x[517];
        static int8_t w[517 * 2];
        for (int k = 0; k < K; k++) {
            x[k] = -32768.0f;
            w[k * 2] = 127;
            w[k * 2 + 1] = (int8_t)(k % 2 ? 127 : -127);
        }
        float ys = 131072.0f;
        QtIntModel m;
        QrTensor y = {0};
        QrStatus st = qt_int_mm_model(&m, K, 2, QR_DT_S16, QR_DT_S8, w, ys, x);
        if (st == QR_OK) st = qr_run(&m.low, &m.in, NULL, &y);
        const QrLowerGroup *G = st == QR_OK ? qt_int_group(&m.info, "mm") : NULL;
        QrQuantAcc kind = G ? G->acc : QR_QACC_NONE;
        int16_t got[2] = { 0 };
        if (st == QR_OK) memcpy(got, y.data, sizeof got);
        qr_tensor_free_data(&y);
        qt_int_free(&m);
        QT_OK(st);
        int64_t acc[2] = { 0 };
        for (int k = 0; k < K; k++) { acc[0] += (int64_t)x[k] * w[k * 2]; acc[1] += (int64_t)x[k] * w[k * 2 + 1]; }
        QT_CHECKF(kind == (K == 516 ? QR_QACC_S32_PROVEN : QR_QACC_S64), "K=%d: acc %s", K, qr_quant_acc_name(kind));
        QT_CHECK((K == 516) == (acc[0] >= INT32_MIN));
        for (int n = 0; n < 2; n++)
            QT_CHECKF(got[n] == qt_int_req16(acc[n], ys), "K=%d column %d: got %d, want %d", K, n, got[n],
                      qt_int_req16(acc[n], ys));
    }
    /* the rule itself */
    QT_CHECK(qr_quant_acc_choose(true, true, INT64_MAX) == QR_QACC_S32);
    QT_CHECK(qr_quant_acc_choose(false, true, INT32_MAX) == QR_QACC_S32_PROVEN);
    QT_CHECK(qr_quant_acc_choose(false, true, (int64_t)INT32_MAX + 1) == QR_QACC_S64);
    QT_CHECK(qr_quant_acc_choose(false, false, 1) == QR_QACC_S64);    /* uint16 with zero point 0: not int16 */
    QT_CHECK(!qr_quant_fits_s16(QR_DT_U16, 0) && qr_quant_fits_s16(QR_DT_U16, 32768));
    QT_CHECK(qr_quant_fits_s16(QR_DT_S16, 0));
    QT_CHECK(qr_quant_absmax(QR_DT_S16, 0) == 32768 && qr_quant_absmax(QR_DT_U8, 128) == 128);
}

/* The patterns the fixtures do not have — Conv with a float bias and a fused Clip, AveragePool,
 * Concat, Mul with a 16-bit output, a Relu on its own, GlobalAveragePool and MatMul on int16,
 * per-column int16 weights — against the sim mode on random inputs: every difference must be a
 * 1-LSB rounding tie where the layer's inputs agree. */
static void test_int_patterns(void) {
    QtModel mb;
    qt_mb_init(&mb, 21);
    int64_t dx[4] = { 1, 4, 6, 6 }, dw1[4] = { 4, 4, 3, 3 }, d4[1] = { 4 }, dw2[2] = { 8, 5 }, d5[1] = { 5 };
    int64_t dy[2] = { 1, 5 };
    uint64_t rng = 4242;
    int8_t w1[144], zw1[4] = { 0 };
    int16_t w2[40], zw2[5] = { 0 };
    float sw1[4] = { 0.004f, 0.006f, 0.005f, 0.003f }, b1[4] = { 0.3f, -0.2f, 0.05f, 1.1f };
    float sw2[5] = { 1e-4f, 2e-4f, 1.5e-4f, 1e-4f, 3e-4f };
    for (int i = 0; i < 144; i++) w1[i] = (int8_t)((int)(qr_rng_next(&rng) % 255) - 127);
    for (int i = 0; i < 40; i++) w2[i] = (int16_t)((int)(qr_rng_next(&rng) % 40001) - 20000);
    struct { const char *n; QrDType dt; double v; } sc[] = {
        { "sx", QR_DT_F32, 0.03 }, { "zx", QR_DT_U8, 128 }, { "lo", QR_DT_F32, 0 }, { "hi", QR_DT_F32, 3 },
        { "sa", QR_DT_F32, 3.0 / 255 }, { "za", QR_DT_U8, 0 }, { "sb", QR_DT_F32, 0.025 }, { "zb", QR_DT_U8, 128 },
        { "sc", QR_DT_F32, 0.03 }, { "zc", QR_DT_U8, 110 }, { "sd", QR_DT_F32, 16.0 / 32767 }, { "zd", QR_DT_S16, 0 },
        { "se", QR_DT_F32, 0.0002 }, { "ze", QR_DT_S16, 0 }, { "sy", QR_DT_F32, 0.002 }, { "zy", QR_DT_S16, 0 },
    };
    for (int i = 0; i < QR_ARRAY_LEN(sc); i++) qt_int_scalar(&mb, sc[i].n, sc[i].dt, sc[i].v);
    qt_mb_init_raw(&mb, "w1", QR_DT_S8, 4, dw1, w1, sizeof w1);
    qt_mb_init_raw(&mb, "sw1", QR_DT_F32, 1, d4, sw1, sizeof sw1);
    qt_mb_init_raw(&mb, "zw1", QR_DT_S8, 1, d4, zw1, sizeof zw1);
    qt_mb_init_raw(&mb, "b1", QR_DT_F32, 1, d4, b1, sizeof b1);
    qt_mb_init_raw(&mb, "w2", QR_DT_S16, 2, dw2, w2, sizeof w2);
    qt_mb_init_raw(&mb, "sw2", QR_DT_F32, 1, d5, sw2, sizeof sw2);
    qt_mb_init_raw(&mb, "zw2", QR_DT_S16, 1, d5, zw2, sizeof zw2);
    qt_mb_input(&mb, "x", QR_DT_F32, 4, dx);
    qt_mb_output(&mb, "y", QR_DT_F32, 2, dy);
    int64_t k3[2] = { 3, 3 }, p1[4] = { 1, 1, 1, 1 };
    qt_mb_node(&mb, "QuantizeLinear", "qx", "x,sx,zx", "xq");
    qt_mb_node(&mb, "DequantizeLinear", "dqx", "xq,sx,zx", "xd");
    Onnx__NodeProto *n = qt_mb_node(&mb, "DequantizeLinear", "dqw1", "w1,sw1,zw1", "w1d");
    qt_int_attr_i(&mb, n, "axis", 0);
    n = qt_mb_node(&mb, "Conv", "conv", "xd,w1d,b1", "c1");
    qt_mb_attr_ints(&mb, n, "pads", 4, p1);
    qt_mb_node(&mb, "Clip", "clip", "c1,lo,hi", "c1r");
    qt_mb_node(&mb, "QuantizeLinear", "qa", "c1r,sa,za", "aq");
    qt_mb_node(&mb, "DequantizeLinear", "dqa", "aq,sa,za", "ad");
    n = qt_mb_node(&mb, "AveragePool", "pool", "xd", "p");
    qt_mb_attr_ints(&mb, n, "kernel_shape", 2, k3);
    qt_mb_attr_ints(&mb, n, "pads", 4, p1);
    qt_mb_node(&mb, "QuantizeLinear", "qb", "p,sb,zb", "bq");
    qt_mb_node(&mb, "DequantizeLinear", "dqb", "bq,sb,zb", "bd");
    n = qt_mb_node(&mb, "Concat", "cat", "ad,bd", "cc");
    qt_int_attr_i(&mb, n, "axis", 1);
    qt_mb_node(&mb, "QuantizeLinear", "qc", "cc,sc,zc", "cq");
    qt_mb_node(&mb, "DequantizeLinear", "dqc", "cq,sc,zc", "cd");
    qt_mb_node(&mb, "Mul", "mul", "cd,cd", "m");
    qt_mb_node(&mb, "QuantizeLinear", "qd", "m,sd,zd", "mq");
    qt_mb_node(&mb, "DequantizeLinear", "dqd", "mq,sd,zd", "md");
    qt_mb_node(&mb, "Relu", "relu", "md", "r");
    qt_mb_node(&mb, "QuantizeLinear", "qr", "r,sd,zd", "rq");
    qt_mb_node(&mb, "DequantizeLinear", "dqr", "rq,sd,zd", "rd");
    qt_mb_node(&mb, "GlobalAveragePool", "gap", "rd", "gp");
    qt_mb_node(&mb, "QuantizeLinear", "qe", "gp,se,ze", "gq");
    qt_mb_node(&mb, "DequantizeLinear", "dqe", "gq,se,ze", "gd");
    qt_mb_node(&mb, "Flatten", "flat", "gd", "fl");
    qt_mb_node(&mb, "QuantizeLinear", "qf", "fl,se,ze", "fq");
    qt_mb_node(&mb, "DequantizeLinear", "dqf", "fq,se,ze", "fd");
    qt_mb_node(&mb, "DequantizeLinear", "dqw2", "w2,sw2,zw2", "w2d");   /* axis 1: per column */
    qt_mb_node(&mb, "MatMul", "matmul", "fd,w2d", "mm");
    qt_mb_node(&mb, "QuantizeLinear", "qy", "mm,sy,zy", "yq");
    qt_mb_node(&mb, "DequantizeLinear", "dqy", "yq,sy,zy", "y");
    QrGraph *g = NULL;
    QrStatus st = qt_load_built(&mb, "int_patterns.onnx", &g);
    qt_mb_free(&mb);
    QT_OK(st);
    QtIntModel m;
    memset(&m, 0, sizeof m);
    st = qr_tensor_set_shape(&m.in, QR_DT_F32, 4, dx);
    if (st == QR_OK) st = qr_tensor_alloc_data(&m.in);
    if (st == QR_OK) st = qt_int_load_graph(&m, g, &m.in);
    else { qr_graph_free(g); free(g); }
    static const char *const want[] = { "conv:DQ-Conv-Clip-Q:s32", "pool:DQ-AveragePool-Q:f32", "cat:DQ-Concat-Q:none",
                                        "mul:DQ-Mul-Q:f32", "relu:DQ-Relu-Q:none", "gap:DQ-GlobalAveragePool-Q:s64",
                                        "matmul:DQ-MatMul-Q:s64" };
    char bad[512] = "";
    for (int i = 0; st == QR_OK && !bad[0] && i < QR_ARRAY_LEN(want); i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s", want[i]);
        *strchr(nm, ':') = 0;
        const QrLowerGroup *G = qt_int_group(&m.info, nm);
        char got[128] = "none";
        if (G) snprintf(got, sizeof got, "%s:%s:%s", G->name, G->pattern, qr_quant_acc_name(G->acc));
        if (strcmp(got, want[i])) snprintf(bad, sizeof bad, "want %s, got %s", want[i], got);
    }
    if (st == QR_OK && !bad[0] && m.info.n_groups != QR_ARRAY_LEN(want))
        snprintf(bad, sizeof bad, "%d groups", m.info.n_groups);
    const QrLowerGroup *cg = st == QR_OK ? qt_int_group(&m.info, "conv") : NULL;
    if (!bad[0] && cg && (cg->qmin != 0 || cg->qmax != 255 || !cg->note))   /* Clip(0, 3) = [0, 255] at 3/255 */
        snprintf(bad, sizeof bad, "conv clamp [%d, %d], note %s", cg->qmin, cg->qmax, cg->note ? cg->note : "none");
    int64_t n_all = 0, n_diff = 0;
    for (int r = 0; st == QR_OK && !bad[0] && r < 16; r++) {
        float *px = m.in.data;
        for (int64_t i = 0; i < m.in.numel; i++) px[i] = 1.2f * qr_rng_normal(&rng);
        QrLowerCmp c = {0};
        st = qr_lower_compare(m.g, &m.t, &m.low, &m.in, 0, &c);
        for (int l = 0; st == QR_OK && !bad[0] && l < c.n; l++) {
            const QrLowerLayerCmp *L = &c.layers[l];
            n_all += L->n;
            n_diff += L->n_diff;
            if (!L->seen_int || !L->seen_sim) snprintf(bad, sizeof bad, "'%s' not compared", L->name);
            else if (!L->upstream_differs && (L->max_lsb > 1 || L->n_tie != L->n_diff))
                snprintf(bad, sizeof bad, "run %d '%s': %lld differences (max %lld LSB), %lld at ties", r, L->name,
                         (long long)L->n_diff, (long long)L->max_lsb, (long long)L->n_tie);
        }
        qr_lower_cmp_free(&c);
    }
    qt_int_free(&m);
    QT_OK(st);
    QT_CHECKF(!bad[0], "%s", bad);
    QT_CHECKF(n_all > 16 * 400 && n_diff * 100 <= n_all, "%lld of %lld differ", (long long)n_diff, (long long)n_all);
}

/* Lowering info: what stays float and why, the node maps, and that a fused group's output keeps its
 * value index and name. */
static void test_int_info(void) {
    QtIntModel m;
    QrStatus st = qt_int_load(&m, "qat_fakequant");
    const char *why = NULL;
    bool maps_ok = st == QR_OK;
    for (int i = 0; st == QR_OK && i < m.info.n_skipped; i++)
        if (!strcmp(m.info.skipped[i].name, "/stem/Conv")) why = m.info.skipped[i].why;
    for (int i = 0; maps_ok && i < m.info.n_groups; i++) {
        const QrLowerGroup *G = &m.info.groups[i];
        int node = G->node;
        maps_ok = m.info.node_map[G->op_node] == node && m.info.node_origin[node] == G->op_node &&
                  !strcmp(m.low.nodes[node].name, G->name) && m.low.nodes[node].out[0] == G->out_value &&
                  (G->out_value >= m.g->n_values ||
                   !strcmp(m.low.values[G->out_value].name, m.g->values[G->out_value].name));
    }
    int n_low = m.low.n_nodes, n_g = st == QR_OK ? m.g->n_nodes : 0;
    qt_int_free(&m);
    QT_OK(st);
    QT_CHECKF(why && strstr(why, "not quantized"), "/stem/Conv: %s", why ? why : "not listed");   /* Conv -> Div */
    QT_CHECK(maps_ok);
    QT_CHECKF(n_low < n_g, "%d nodes lowered from %d", n_low, n_g);
}

static void qt_int_all(void) {
    test_int_pairs();
    QT_RUN(test_int16_s64_accumulation);
    QT_RUN(test_int16_proven_s32);
    QT_RUN(test_int_patterns);
    QT_RUN(test_int_info);
}
