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
    qr_qtable_free(&m->t);
    qr_tensor_free_data(&m->in);
    if (m->g) { qr_graph_free(m->g); free(m->g); }
    memset(m, 0, sizeof *m);
}

/* --int16 integer for the lowering of the tests below (qt_int_pair_mode, the 16-bit unit tests). */
static bool qt_int_int16_integer;

static QrStatus qt_int_load_graph(QtIntModel *m, QrGraph *g, const QrTensor *in) {
    m->g = g;
    QR_TRY(qr_run_infer(m->g, in));
    QR_TRY(qr_qtable_build(m->g, &m->t));
    return qr_lower_graph(m->g, &m->t, qt_int_int16_integer, &m->low, &m->info);
}

static QrStatus qt_int_load(QtIntModel *m, const char *pair) {
    char path[512];
    memset(m, 0, sizeof *m);
    snprintf(path, sizeof path, "fixtures/qpairs/%s/input.npy", pair);
    QR_TRY(qr_npy_read(path, &m->in));
    snprintf(path, sizeof path, "fixtures/qpairs/%s/analysis.onnx", pair);
    QrGraph *g = NULL;
    QR_TRY(qr_run_load(path, &g));
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
    /* default (--int16 float): only the 8-bit groups; the 16-bit ones stay float as in ORT's CPU provider */
    { "int16_mixed", 5, { "/stem/Conv:QLinearConv:s32", "/stem_relu/Relu:QRequantize:none",
                          "/conv_relu/Relu:QRequantize:none", "/gap/GlobalAveragePool:QLinearGlobalAveragePool:s32",
                          "/fc/Gemm:QGemm:s32" } },
    /* --int16 integer: every group on integer kernels, as an NPU */
    { "int16_mixed --int16 integer", 11, { "/dw/Conv:QLinearConv:s32", "/pw/Conv:QLinearConv:s64", "/conv/Conv:QLinearConv:s32-proven",
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
static void qt_int_pair_mode(const char *pair, bool int16_integer) {
    char name[128], dir[256], path[512], msg[512] = "", label[128];
    snprintf(label, sizeof label, "%s%s", pair, int16_integer ? " --int16 integer" : "");
    qt_fmt(name, sizeof name, "int/%s", label);
    qt_int_int16_integer = int16_integer;
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
    else if ((bad = qt_int_check_groups(label, &m.info, msg, sizeof msg))) {}
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
    /* ORT's CPU provider runs 16-bit groups in float, so its 'all' equals 'disabled' there: by
     * default int mode must equal sim exactly on the 16-bit pair (its 8-bit groups give exact
     * sums on this model) */
    else if (!int16_integer && !strcmp(pair, "int16_mixed") && sim_diff)
        bad = qt_int_why(msg, sizeof msg, "default --int16 float: %lld elements differ between int and sim",
                         (long long)sim_diff);
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
           label, m.info.n_groups, m.info.n_skipped, gd.n_seen, (long long)gd.n_diff, (long long)gd.n_elems,
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
    for (int i = 0; i < QR_ARRAY_LEN(qt_int_pairs); i++) qt_int_pair_mode(qt_int_pairs[i], false);
    qt_int_pair_mode("int16_mixed", true);
    qt_int_int16_integer = false;
}

/* The 16-bit unit tests below build int16 groups: they test the integer kernels (--int16 integer). */
static void test_int16_s64_accumulation(void);
static void test_int16_proven_s32(void);
static void test_int_patterns(void);
static void test_int16_integer_units(void) {
    qt_int_int16_integer = true;
    QT_RUN(test_int16_s64_accumulation);
    QT_RUN(test_int16_proven_s32);
    QT_RUN(test_int_patterns);
    qt_int_int16_integer = false;
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

/* Packed weights (lower.c's input 9 of the integer convolutions): on the QAT pair (weights
 * through QuantizeLinear -> DequantizeLinear, computed when lowering) and the ORT QDQ pair (int8
 * initializers) every ungrouped 8-bit convolution gets them at a level that has a packed form;
 * the run gives the bits of the same graph lowered at the ref level (no packing); and a run on
 * other levels' kernels than the one that packed gives them too (the packing is checked, not
 * trusted). */
static void test_int_packed_weights(void) {
    static const char *pairs[] = { "qat_fakequant", "ort_qdq" };
    QrKernels saved = qr_kern;
    char bad[256] = "";
    for (int pi = 0; pi < QR_ARRAY_LEN(pairs) && !bad[0]; pi++) {
        QtIntModel m, r;
        QrStatus st = qt_int_load(&m, pairs[pi]);
        int n_conv = 0, n_packed = 0;
        for (int i = 0; st == QR_OK && i < m.low.n_nodes; i++) {
            const QrNode *n = &m.low.nodes[i];
            if (strcmp(n->op_type, "QLinearConv") || strcmp(n->domain, QR_QUANT_INT_DOMAIN)) continue;
            n_conv += qr_attr_int(n, "group", 1) == 1;
            if (n->n_in > 9 && n->in[9] >= 0) {
                const QrValue *v = &m.low.values[n->in[9]];
                if (v->t.dtype != QR_DT_U8 || v->t.rank != 1 || !v->t.data || !v->is_init) snprintf(bad, sizeof bad, "%s: input 9 of %s", pairs[pi], n->name);
                n_packed++;
            }
        }
        if (st == QR_OK && !bad[0] && qr_kern.q8_pack_a && n_packed != n_conv)
            snprintf(bad, sizeof bad, "%s: %d of %d ungrouped convolutions have packed weights", pairs[pi], n_packed, n_conv);
        if (st == QR_OK && !bad[0] && n_conv == 0) snprintf(bad, sizeof bad, "%s: no convolution", pairs[pi]);
        /* the same model lowered on the ref kernels: no packing */
        QrKernels ref;
        memset(&r, 0, sizeof r);
        if (st == QR_OK) st = qr_kern_table(QR_ISA_REF, &ref);
        if (st == QR_OK) {
            qr_kern = ref;
            st = qt_int_load(&r, pairs[pi]);
            qr_kern = saved;
        }
        for (int i = 0; st == QR_OK && !bad[0] && i < r.low.n_nodes; i++)
            if (r.low.nodes[i].n_in > 9 && r.low.nodes[i].in[9] >= 0) snprintf(bad, sizeof bad, "%s: packed at the ref level", pairs[pi]);
        QrTensor want = {0};
        if (st == QR_OK && !bad[0]) st = qr_run(&r.low, &r.in, NULL, &want);
        static const QrIsa all[] = { QR_ISA_REF, QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_VNNI, QR_ISA_NEON, QR_ISA_DOT };
        for (int l = 0; st == QR_OK && !bad[0] && l < QR_ARRAY_LEN(all); l++) {
            QrKernels k;
            if (qr_kern_table(all[l], &k) != QR_OK) { qr_err_clear(); continue; }
            qr_kern = k;
            QrTensor y = {0};
            st = qr_run(&m.low, &m.in, NULL, &y);
            qr_kern = saved;
            if (st == QR_OK && (qr_tensor_nbytes(&y) != qr_tensor_nbytes(&want) || memcmp(y.data, want.data, qr_tensor_nbytes(&y))))
                snprintf(bad, sizeof bad, "%s: the packed graph on %s differs from the unpacked one", pairs[pi], qr_isa_name(all[l]));
            qr_tensor_free_data(&y);
        }
        if (st != QR_OK && !bad[0]) snprintf(bad, sizeof bad, "%s: %s", pairs[pi], qr_err_msg());
        qr_tensor_free_data(&want);
        qt_int_free(&m);
        qt_int_free(&r);
    }
    qr_kern = saved;
    QT_CHECKF(!bad[0], "%s", bad);
}

/* ---- integer operators on every kernel level ----------------------------------------------- */

/* Runs graph g on `in` with the kernels of each level this machine has and checks that every
 * level's output equals want (bytes). */
static void qt_int_run_levels(const char *what, QrGraph *g, const QrTensor *in, const void *want, size_t nbytes,
                              char *bad, size_t badn) {
    static const QrIsa all[] = { QR_ISA_REF, QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_VNNI, QR_ISA_NEON, QR_ISA_DOT,
                                 QR_ISA_I8MM };
    QrKernels saved = qr_kern;
    for (int l = 0; l < QR_ARRAY_LEN(all) && !bad[0]; l++) {
        QrKernels k;
        if (qr_kern_table(all[l], &k) != QR_OK) { qr_err_clear(); continue; }
        qr_kern = k;
        QrTensor y = {0};
        QrStatus st = qr_run(g, in, NULL, &y);
        if (st != QR_OK) qt_fmt(bad, badn, "%s on %s: %s", what, qr_isa_name(all[l]), qr_err_msg());
        else if (qr_tensor_nbytes(&y) != nbytes || memcmp(y.data, want, nbytes)) {
            size_t i = 0;
            while (i < nbytes && ((const uint8_t *)y.data)[i] == ((const uint8_t *)want)[i]) i++;
            snprintf(bad, badn, "%s on %s: output differs from the reference at byte %zu", what, qr_isa_name(all[l]), i);
        }
        qr_tensor_free_data(&y);
    }
    qr_kern = saved;
}

static double qt_int_rand(uint64_t *rng, double lo, double hi) {
    return lo + (hi - lo) * (double)(qr_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* Random integers of type dt (extremes now and then). */
static void qt_int_fill(QrTensor *t, uint64_t *rng) {
    QrQuantRange r;
    qr_quant_range(t->dtype, &r);
    for (int64_t i = 0; i < t->numel; i++) {
        uint64_t v = qr_rng_next(rng);
        int64_t x = (v & 15) == 0 ? r.lo : (v & 15) == 1 ? r.hi : r.lo + (int64_t)((v >> 8) % (uint64_t)(r.hi - r.lo + 1));
        qr_tensor_set_i64(t, i, x);
    }
}

/* The requantization the integer ops document, written out: (float)acc * mult, clamp in
 * float to [lo - zp, hi - zp] (NaN: lo), round half to even, + zp. */
static int32_t qt_int_requant(int64_t acc, float mult, int32_t zp, int32_t lo, int32_t hi) {
    float v = (float)acc * mult;
    if (!(v >= (float)(lo - zp))) v = (float)(lo - zp);
    if (v > (float)(hi - zp)) v = (float)(hi - zp);
    return (int32_t)rintf(v) + zp;
}

typedef struct QtIntConv {
    const char *dom;                 /* "", "com.microsoft" (channels_last) or QR_QUANT_INT_DOMAIN */
    QrDType xdt, wdt, ydt;
    int64_t N, C, H, W, M, KH, KW, G, sh, sw, dh, dw, pt, pl, pb, pr;
    bool per_ch, bias, one_d;
    int32_t qmin, qmax;              /* internal op only (0, 0: none) */
} QtIntConv;

/* One QLinearConv / ConvInteger case: the op's output on every level against a reference
 * computed here with plain loops (int32 wrapping sums for 8-bit operands as ONNX Runtime,
 * exact int64 otherwise). ConvInteger when ydt is int32. */
static void qt_int_conv_case(int ci, const QtIntConv *cs, bool mid_wz, uint64_t *rng, char *bad, size_t badn) {
    const bool nhwc = !strcmp(cs->dom, "com.microsoft"), convint = cs->ydt == QR_DT_S32, internal = !strcmp(cs->dom, QR_QUANT_INT_DOMAIN);
    const int64_t N = cs->N, C = cs->C, H = cs->one_d ? 1 : cs->H, W = cs->W, M = cs->M, KH = cs->one_d ? 1 : cs->KH, KW = cs->KW;
    const int64_t Cg = C / cs->G, Mg = M / cs->G;
    const int64_t OH = (H + cs->pt + cs->pb - (KH - 1) * cs->dh - 1) / cs->sh + 1, OW = (W + cs->pl + cs->pr - (KW - 1) * cs->dw - 1) / cs->sw + 1;
    QtModel mb;
    qt_mb_init(&mb, 13);
    int64_t dx[4], dwt[4] = { M, Cg, KH, KW }, dy[4], dm[1] = { M };
    int rk = cs->one_d ? 3 : 4;
    if (cs->one_d) { dx[0] = N; dx[1] = C; dx[2] = W; dy[0] = N; dy[1] = M; dy[2] = OW; dwt[2] = KW; }
    else if (nhwc) { dx[0] = N; dx[1] = H; dx[2] = W; dx[3] = C; dy[0] = N; dy[1] = OH; dy[2] = OW; dy[3] = M; }
    else { dx[0] = N; dx[1] = C; dx[2] = H; dx[3] = W; dy[0] = N; dy[1] = M; dy[2] = OH; dy[3] = OW; }
    QrTensor x = {0}, w = {0}, wz = {0}, b = {0};
    qr_tensor_set_shape(&x, cs->xdt, rk, dx);
    qr_tensor_alloc_data(&x);
    qr_tensor_set_shape(&w, cs->wdt, rk, dwt);
    qr_tensor_alloc_data(&w);
    qr_tensor_set_shape(&wz, cs->wdt, 1, dm);
    qr_tensor_alloc_data(&wz);
    qr_tensor_set_shape(&b, QR_DT_S32, 1, dm);
    qr_tensor_alloc_data(&b);
    qt_int_fill(&x, rng);
    qt_int_fill(&w, rng);
    qt_int_fill(&wz, rng);
    if (mid_wz)   /* weights zero points in the middle of their range: every w - wz fits int8 */
        for (int64_t m = 0; m < M; m++) qr_tensor_set_i64(&wz, m, cs->wdt == QR_DT_U8 ? 128 : 0);
    for (int64_t m = 0; m < M; m++) ((int32_t *)b.data)[m] = (int32_t)qt_int_rand(rng, -40000, 40000);
    float ws[64];
    for (int64_t m = 0; m < M; m++) ws[m] = (float)qt_int_rand(rng, 0.001, 0.02);
    float xs = 0.05f, ys = (float)qt_int_rand(rng, 0.5, 4.0) * (qr_op_q_esize(cs->xdt) == 2 ? 200.0f : 1.0f);
    QrQuantRange xr, yr = { 0, 0 };
    qr_quant_range(cs->xdt, &xr);
    int32_t xz = xr.lo + (int32_t)((xr.hi - xr.lo) / 3), yz = 0;
    if (!convint) { qr_quant_range(cs->ydt, &yr); yz = yr.lo + (yr.hi - yr.lo) / 2 + 3; }
    int64_t one[1] = { 1 };
    (void)one;
    unsigned char zbuf[8];
    QrTensor zt = { .dtype = cs->xdt, .numel = 1, .data = zbuf };
    qr_tensor_set_i64(&zt, 0, xz);
    qt_mb_init_raw(&mb, "xz", cs->xdt, 0, NULL, zbuf, (size_t)qr_op_q_esize(cs->xdt));
    qt_int_scalar(&mb, "xs", QR_DT_F32, xs);
    qt_mb_init_raw(&mb, "w", cs->wdt, rk, dwt, w.data, qr_tensor_nbytes(&w));
    if (cs->per_ch) {
        qt_mb_init_raw(&mb, "ws", QR_DT_F32, 1, dm, ws, (size_t)M * sizeof(float));
        qt_mb_init_raw(&mb, "wz", cs->wdt, 1, dm, wz.data, qr_tensor_nbytes(&wz));
    } else {
        qt_int_scalar(&mb, "ws", QR_DT_F32, ws[0]);
        qt_mb_init_raw(&mb, "wz", cs->wdt, 0, NULL, wz.data, (size_t)qr_op_q_esize(cs->wdt));
    }
    if (!convint) {
        qt_int_scalar(&mb, "ys", QR_DT_F32, ys);
        unsigned char yb[8];
        QrTensor yt = { .dtype = cs->ydt, .numel = 1, .data = yb };
        qr_tensor_set_i64(&yt, 0, yz);
        qt_mb_init_raw(&mb, "yz", cs->ydt, 0, NULL, yb, (size_t)qr_op_q_esize(cs->ydt));
    }
    if (cs->bias) qt_mb_init_raw(&mb, "b", QR_DT_S32, 1, dm, b.data, (size_t)M * 4);
    qt_mb_input(&mb, "x", cs->xdt, rk, dx);
    qt_mb_output(&mb, "y", cs->ydt, rk, dy);
    char op[64];
    snprintf(op, sizeof op, "%s%s%s", cs->dom, cs->dom[0] ? "." : "", convint ? "ConvInteger" : "QLinearConv");
    Onnx__NodeProto *n = qt_mb_node(&mb, op, "conv", convint ? "x,w,xz,wz" : cs->bias ? "x,xs,xz,w,ws,wz,ys,yz,b" : "x,xs,xz,w,ws,wz,ys,yz", "y");
    int64_t st[2] = { cs->sh, cs->sw }, dl[2] = { cs->dh, cs->dw }, pads[4] = { cs->pt, cs->pl, cs->pb, cs->pr };
    int64_t st1[1] = { cs->sw }, dl1[1] = { cs->dw }, pads1[2] = { cs->pl, cs->pr };
    qt_mb_attr_ints(&mb, n, "strides", rk - 2, cs->one_d ? st1 : st);
    qt_mb_attr_ints(&mb, n, "dilations", rk - 2, cs->one_d ? dl1 : dl);
    qt_mb_attr_ints(&mb, n, "pads", 2 * (rk - 2), cs->one_d ? pads1 : pads);
    qt_int_attr_i(&mb, n, "group", cs->G);
    if (nhwc) qt_int_attr_i(&mb, n, "channels_last", 1);
    int32_t lo = yr.lo, hi = yr.hi;
    if (internal && cs->qmin < cs->qmax) { qt_int_attr_i(&mb, n, "qmin", cs->qmin); qt_int_attr_i(&mb, n, "qmax", cs->qmax); lo = cs->qmin; hi = cs->qmax; }
    QrGraph *g = NULL;
    char file[64];
    snprintf(file, sizeof file, "int_conv_%d.onnx", ci);
    QrStatus s = qt_load_built(&mb, file, &g);
    qt_mb_free(&mb);
    if (s == QR_OK) s = qr_run_infer(g, &x);
    if (s != QR_OK) qt_fmt(bad, badn, "case %d: %s", ci, qr_err_msg());
    /* the reference */
    const bool narrow = qr_op_q_esize(cs->xdt) == 1 && qr_op_q_esize(cs->wdt) == 1;
    size_t ysz = (size_t)(N * M * OH * OW) * (convint ? 4 : (size_t)qr_op_q_esize(cs->ydt));
    unsigned char *want = malloc(ysz);
    QrTensor yw = { .dtype = cs->ydt, .numel = N * M * OH * OW, .data = want };
    for (int64_t in = 0; s == QR_OK && in < N; in++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t acc = 0, gr = m / Mg;
                    int32_t wzm = (int32_t)qr_tensor_get_i64(&wz, cs->per_ch ? m : 0);
                    for (int64_t c = 0; c < Cg; c++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t ih = oh * cs->sh - (cs->one_d ? 0 : cs->pt) + kh * cs->dh, iw = ow * cs->sw - cs->pl + kw * cs->dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                int64_t ch = gr * Cg + c;
                                int64_t xi = nhwc ? ((in * H + ih) * W + iw) * C + ch : ((in * C + ch) * H + ih) * W + iw;
                                acc += (qr_tensor_get_i64(&x, xi) - xz) * (qr_tensor_get_i64(&w, ((m * Cg + c) * KH + kh) * KW + kw) - wzm);
                            }
                    if (cs->bias) acc += ((int32_t *)b.data)[m];
                    if (narrow) acc = (int32_t)(uint32_t)(uint64_t)acc;
                    int64_t yi = nhwc ? ((in * OH + oh) * OW + ow) * M + m : ((in * M + m) * OH + oh) * OW + ow;
                    if (convint) ((int32_t *)want)[yi] = (int32_t)acc;
                    else qr_tensor_set_i64(&yw, yi, qt_int_requant(acc, xs * ws[cs->per_ch ? m : 0] / ys, yz, lo, hi));
                }
    char what[64];
    snprintf(what, sizeof what, "conv case %d", ci);
    if (s == QR_OK) qt_int_run_levels(what, g, &x, want, ysz, bad, badn);
    free(want);
    if (g) { qr_graph_free(g); free(g); }
    qr_tensor_free_data(&x);
    qr_tensor_free_data(&w);
    qr_tensor_free_data(&wz);
    qr_tensor_free_data(&b);
}

/* Every convolution path of ops/qdq.c on every kernel level, against loops written here:
 * GEMM with implicit im2col (3x3, strides, dilations, asymmetric pads), 1x1 as a plain GEMM,
 * groups, depthwise (multiplier 1 and 2, strides, dilation), 1-D (explicit im2col),
 * channels_last, uint8 weights with a zero point, 16-bit activations (q16_gemm), a fused
 * clamp and ConvInteger. */
static void test_int_conv_ops(void) {
    static const QtIntConv cases[] = {
        { "", QR_DT_U8, QR_DT_S8, QR_DT_U8, 2, 5, 9, 11, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, 0, 0 },
        { "", QR_DT_U8, QR_DT_S8, QR_DT_U8, 1, 16, 13, 70, 9, 3, 3, 1, 2, 2, 1, 1, 1, 0, 1, 2, true, true, false, 0, 0 },
        { "", QR_DT_S8, QR_DT_U8, QR_DT_S8, 1, 6, 7, 40, 33, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, false, true, false, 0, 0 },
        { "", QR_DT_U8, QR_DT_S8, QR_DT_U8, 1, 8, 12, 13, 10, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, true, false, false, 0, 0 },
        { "", QR_DT_U8, QR_DT_S8, QR_DT_U8, 2, 8, 10, 9, 6, 3, 3, 2, 1, 1, 2, 2, 2, 2, 2, 2, true, true, false, 0, 0 },
        { "", QR_DT_U8, QR_DT_S8, QR_DT_U8, 1, 12, 15, 17, 12, 3, 3, 12, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, 0, 0 },
        { "", QR_DT_S8, QR_DT_S8, QR_DT_U8, 2, 6, 16, 21, 12, 3, 5, 6, 2, 2, 1, 2, 1, 4, 0, 3, true, true, false, 0, 0 },
        { "", QR_DT_U8, QR_DT_S8, QR_DT_U8, 1, 4, 1, 50, 5, 1, 4, 1, 1, 2, 1, 3, 0, 2, 0, 1, true, true, true, 0, 0 },
        { "", QR_DT_U8, QR_DT_S8, QR_DT_U8, 1, 3, 33, 31, 8, 7, 7, 1, 2, 2, 1, 1, 3, 3, 3, 3, true, true, false, 0, 0 },
        { "com.microsoft", QR_DT_U8, QR_DT_S8, QR_DT_U8, 2, 6, 8, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, 0, 0 },
        { "com.microsoft", QR_DT_U8, QR_DT_S8, QR_DT_U8, 1, 8, 9, 10, 8, 3, 3, 8, 1, 2, 1, 1, 1, 1, 1, 1, true, true, false, 0, 0 },
        { QR_QUANT_INT_DOMAIN, QR_DT_U8, QR_DT_S8, QR_DT_U8, 1, 8, 9, 10, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, 100, 200 },
        { QR_QUANT_INT_DOMAIN, QR_DT_S16, QR_DT_S8, QR_DT_S16, 1, 5, 8, 9, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, 0, 0 },
        { QR_QUANT_INT_DOMAIN, QR_DT_U16, QR_DT_S16, QR_DT_U8, 1, 4, 6, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1, true, true, false, 0, 0 },
        { QR_QUANT_INT_DOMAIN, QR_DT_S16, QR_DT_S8, QR_DT_S16, 1, 6, 9, 9, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, -1000, 30000 },
        { "", QR_DT_U8, QR_DT_S8, QR_DT_S32, 2, 5, 9, 11, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false, 0, 0 },
        { "", QR_DT_U8, QR_DT_U8, QR_DT_S32, 1, 6, 8, 8, 6, 3, 3, 6, 2, 2, 1, 1, 1, 1, 1, 1, false, false, false, 0, 0 },
    };
    uint64_t rng = 515;
    char bad[512] = "";
    for (int i = 0; i < QR_ARRAY_LEN(cases) && !bad[0]; i++) {
        qt_int_conv_case(i, &cases[i], false, &rng, bad, sizeof bad);
        /* weights zero points in the middle: the channels-last and the requantizing depthwise
         * kernels take 8-bit cases then (the others stay on the GEMM paths) */
        if (!bad[0] && qr_op_q_esize(cases[i].wdt) == 1) qt_int_conv_case(200 + i, &cases[i], true, &rng, bad, sizeof bad);
        /* the same geometry as ConvInteger: exact int32 sums, where a requantization could
         * round a small error away */
        QtIntConv ci = cases[i];
        if (bad[0] || qr_op_q_esize(ci.xdt) != 1 || qr_op_q_esize(ci.wdt) != 1 || !strcmp(ci.dom, "com.microsoft")) continue;
        ci.dom = "";
        ci.ydt = QR_DT_S32;
        ci.bias = false;
        qt_int_conv_case(100 + i, &ci, false, &rng, bad, sizeof bad);
    }
    QT_CHECKF(!bad[0], "%s", bad);
}

/* Scalar or [n] initializer of integer type dt from int values / float values. */
static void qt_int_init_ints(QtModel *mb, const char *name, QrDType dt, int64_t n, bool vec, const int32_t *v) {
    unsigned char buf[256 * 2];
    QrTensor t = { .dtype = dt, .numel = n, .data = buf };
    for (int64_t i = 0; i < n; i++) qr_tensor_set_i64(&t, i, v[i]);
    int64_t d[1] = { n };
    qt_mb_init_raw(mb, name, dt, vec ? 1 : 0, d, buf, (size_t)n * qr_dtype_size(dt));
}

/* QLinearMatMul / MatMulInteger (broadcast batches, per-row a and per-column b parameters,
 * 16-bit internal op) and QGemm (transA / transB, C, float or quantized output) on every
 * kernel level against loops written here. */
static void test_int_matmul_ops(void) {
    uint64_t rng = 616;
    char bad[512] = "";
    typedef struct { const char *op; QrDType adt, bdt, ydt; int ra; int64_t ad[4]; int rb; int64_t bd[3]; bool arow, bcol; } QtMM;
    static const QtMM mms[] = {
        { "QLinearMatMul", QR_DT_U8, QR_DT_S8, QR_DT_U8, 4, { 2, 3, 5, 37 }, 2, { 37, 19, 0 }, false, true },
        { "QLinearMatMul", QR_DT_S8, QR_DT_U8, QR_DT_S8, 2, { 4, 33, 0, 0 }, 3, { 2, 33, 7 }, true, false },
        { "qreport.int.QLinearMatMul", QR_DT_S16, QR_DT_S8, QR_DT_S16, 2, { 3, 40, 0, 0 }, 2, { 40, 9, 0 }, false, true },
        { "MatMulInteger", QR_DT_U8, QR_DT_S8, QR_DT_S32, 2, { 5, 70, 0, 0 }, 2, { 70, 33, 0 }, false, true },
        { "MatMulInteger", QR_DT_S8, QR_DT_S8, QR_DT_S32, 3, { 2, 1, 300, 0 }, 2, { 300, 65, 0 }, false, false },
    };
    for (int ci = 0; ci < QR_ARRAY_LEN(mms) && !bad[0]; ci++) {
        const QtMM *c = &mms[ci];
        const bool mmi = strstr(c->op, "MatMulInteger") != NULL;
        const int64_t M = c->ad[c->ra - 2], K = c->ad[c->ra - 1], N = c->bd[c->rb - 1];
        QrTensor a = {0}, b = {0};
        qr_tensor_set_shape(&a, c->adt, c->ra, c->ad);
        qr_tensor_alloc_data(&a);
        qr_tensor_set_shape(&b, c->bdt, c->rb, c->bd);
        qr_tensor_alloc_data(&b);
        qt_int_fill(&a, &rng);
        qt_int_fill(&b, &rng);
        QrQuantRange ar, br, yr = { 0, 0 };
        qr_quant_range(c->adt, &ar);
        qr_quant_range(c->bdt, &br);
        if (!mmi) qr_quant_range(c->ydt, &yr);
        int32_t az[64], bz[64], yz = (yr.lo + yr.hi) / 2 - 7;
        float as[64], bs[64], ys = qr_op_q_esize(c->adt) == 2 ? 900.0f : 2.5f;
        for (int i = 0; i < 64; i++) {
            az[i] = ar.lo + (int32_t)(qr_rng_next(&rng) % (uint64_t)(ar.hi - ar.lo + 1));
            bz[i] = br.lo + (int32_t)(qr_rng_next(&rng) % (uint64_t)(br.hi - br.lo + 1));
            as[i] = (float)qt_int_rand(&rng, 0.01, 0.05);
            bs[i] = (float)qt_int_rand(&rng, 0.01, 0.05);
        }
        QtModel mb;
        qt_mb_init(&mb, 13);
        int64_t na = c->arow ? M : 1, nb = c->bcol ? N : 1, dn[1];
        qt_mb_input(&mb, "a", c->adt, c->ra, c->ad);
        qt_mb_init_raw(&mb, "b", c->bdt, c->rb, c->bd, b.data, qr_tensor_nbytes(&b));
        qt_int_init_ints(&mb, "az", c->adt, na, c->arow, az);
        qt_int_init_ints(&mb, "bz", c->bdt, nb, c->bcol, bz);
        dn[0] = na;
        qt_mb_init_raw(&mb, "as", QR_DT_F32, c->arow ? 1 : 0, dn, as, (size_t)na * 4);
        dn[0] = nb;
        qt_mb_init_raw(&mb, "bs", QR_DT_F32, c->bcol ? 1 : 0, dn, bs, (size_t)nb * 4);
        qt_int_scalar(&mb, "ys", QR_DT_F32, ys);
        if (!mmi) qt_int_init_ints(&mb, "yz", c->ydt, 1, false, &yz);
        int64_t yd[4];
        int yrk = QR_MAX(c->ra, c->rb);
        for (int d = 0; d < yrk - 2; d++) {
            int da = d - (yrk - c->ra), db = d - (yrk - c->rb);
            yd[d] = QR_MAX(da >= 0 ? c->ad[da] : 1, db >= 0 ? c->bd[db] : 1);
        }
        yd[yrk - 2] = M;
        yd[yrk - 1] = N;
        qt_mb_output(&mb, "y", c->ydt, yrk, yd);
        qt_mb_node(&mb, c->op, "mm", mmi ? "a,b,az,bz" : "a,as,az,b,bs,bz,ys,yz", "y");
        QrGraph *g = NULL;
        QrStatus st = qt_load_built(&mb, "int_mm_ops.onnx", &g);
        qt_mb_free(&mb);
        if (st == QR_OK) st = qr_run_infer(g, &a);
        if (st != QR_OK) qt_fmt(bad, sizeof bad, "matmul case %d: %s", ci, qr_err_msg());
        int64_t batches = 1;
        for (int d = 0; d < yrk - 2; d++) batches *= yd[d];
        QrTensor yw = { .dtype = c->ydt, .numel = batches * M * N };
        size_t ysz = (size_t)yw.numel * qr_dtype_size(c->ydt);
        yw.data = malloc(ysz);
        const bool narrow = qr_op_q_esize(c->adt) == 1 && qr_op_q_esize(c->bdt) == 1;
        for (int64_t bt = 0; st == QR_OK && bt < batches; bt++) {
            /* batch offsets with broadcasting (the batch dims here are at most 2) */
            int64_t idx[2] = { 0, 0 }, rem = bt;
            for (int d = yrk - 3; d >= 0; d--) { idx[d] = rem % yd[d]; rem /= yd[d]; }
            int64_t ao = 0, bo = 0, sa = M * K, sb = K * N;
            for (int d = yrk - 3; d >= 0; d--) {
                int da = d - (yrk - c->ra), db = d - (yrk - c->rb);
                if (da >= 0) { ao += (c->ad[da] == 1 ? 0 : idx[d]) * sa; sa *= c->ad[da]; }
                if (db >= 0) { bo += (c->bd[db] == 1 ? 0 : idx[d]) * sb; sb *= c->bd[db]; }
            }
            for (int64_t m = 0; m < M; m++)
                for (int64_t n = 0; n < N; n++) {
                    int64_t acc = 0;
                    for (int64_t k = 0; k < K; k++)
                        acc += (qr_tensor_get_i64(&a, ao + m * K + k) - az[c->arow ? m : 0]) *
                               (qr_tensor_get_i64(&b, bo + k * N + n) - bz[c->bcol ? n : 0]);
                    if (narrow) acc = (int32_t)(uint32_t)(uint64_t)acc;
                    int64_t yi = (bt * M + m) * N + n;
                    if (mmi) ((int32_t *)yw.data)[yi] = (int32_t)acc;
                    else qr_tensor_set_i64(&yw, yi, qt_int_requant(acc, as[c->arow ? m : 0] * bs[c->bcol ? n : 0] / ys, yz, yr.lo, yr.hi));
                }
        }
        char what[64];
        snprintf(what, sizeof what, "matmul case %d (%s)", ci, c->op);
        if (st == QR_OK) qt_int_run_levels(what, g, &a, yw.data, ysz, bad, sizeof bad);
        free(yw.data);
        if (g) { qr_graph_free(g); free(g); }
        qr_tensor_free_data(&a);
        qr_tensor_free_data(&b);
    }
    /* QGemm */
    typedef struct { bool ta, tb, cbias, yq; QrDType adt, bdt; int64_t M, K, N; } QtQG;
    static const QtQG qgs[] = {
        { false, true, true, true, QR_DT_U8, QR_DT_S8, 3, 40, 20 },  { true, false, true, true, QR_DT_U8, QR_DT_S8, 5, 33, 17 },
        { true, true, false, false, QR_DT_S8, QR_DT_S8, 4, 70, 9 },  { false, true, true, true, QR_DT_U8, QR_DT_S8, 1, 512, 100 },
        { false, false, true, true, QR_DT_S16, QR_DT_S8, 2, 30, 11 }, { false, true, true, false, QR_DT_S8, QR_DT_S8, 2, 65, 33 },
    };
    for (int ci = 0; ci < QR_ARRAY_LEN(qgs) && !bad[0]; ci++) {
        const QtQG *q = &qgs[ci];
        const char *op = qr_op_q_esize(q->adt) == 2 ? "qreport.int.QGemm" : "com.microsoft.QGemm";
        int64_t ad[2] = { q->ta ? q->K : q->M, q->ta ? q->M : q->K }, bd[2] = { q->tb ? q->N : q->K, q->tb ? q->K : q->N };
        int64_t yd[2] = { q->M, q->N }, dn[1] = { q->N };
        QrTensor a = {0}, b = {0};
        qr_tensor_set_shape(&a, q->adt, 2, ad);
        qr_tensor_alloc_data(&a);
        qr_tensor_set_shape(&b, q->bdt, 2, bd);
        qr_tensor_alloc_data(&b);
        qt_int_fill(&a, &rng);
        qt_int_fill(&b, &rng);
        int32_t az = qr_op_q_esize(q->adt) == 2 ? -1234 : 17, bz[128], cb[128], yz = 100;
        float as = 0.02f, bs[128], ys = qr_op_q_esize(q->adt) == 2 ? 700.0f : 3.0f, alpha = 1.25f;
        for (int i = 0; i < 128; i++) {
            bz[i] = (int32_t)(qr_rng_next(&rng) % 256) - 128;
            bs[i] = (float)qt_int_rand(&rng, 0.005, 0.05);
            cb[i] = (int32_t)qt_int_rand(&rng, -30000, 30000);
        }
        QtModel mb;
        qt_mb_init(&mb, 13);
        qt_mb_input(&mb, "a", q->adt, 2, ad);
        qt_int_scalar(&mb, "as", QR_DT_F32, as);
        qt_int_init_ints(&mb, "az", q->adt, 1, false, &az);
        qt_mb_init_raw(&mb, "b", q->bdt, 2, bd, b.data, qr_tensor_nbytes(&b));
        qt_mb_init_raw(&mb, "bs", QR_DT_F32, 1, dn, bs, (size_t)q->N * 4);
        qt_int_init_ints(&mb, "bz", q->bdt, q->N, true, bz);
        qt_mb_init_raw(&mb, "c", QR_DT_S32, 1, dn, cb, (size_t)q->N * 4);
        qt_int_scalar(&mb, "ys", QR_DT_F32, ys);
        QrDType ydt = q->adt == QR_DT_S16 ? QR_DT_S16 : QR_DT_U8;
        qt_int_init_ints(&mb, "yz", ydt, 1, false, &yz);
        qt_mb_output(&mb, "y", q->yq ? ydt : QR_DT_F32, 2, yd);
        char ins[64];
        snprintf(ins, sizeof ins, "a,as,az,b,bs,bz,%s%s", q->cbias ? "c" : "", q->yq ? ",ys,yz" : "");
        Onnx__NodeProto *n = qt_mb_node(&mb, op, "qg", ins, "y");
        qt_int_attr_i(&mb, n, "transA", q->ta);
        qt_int_attr_i(&mb, n, "transB", q->tb);
        Onnx__AttributeProto *at = qt_mb_attr(&mb, n, "alpha", QR_ATTR_FLOAT);
        at->has_f = 1;
        at->f = alpha;
        QrGraph *g = NULL;
        QrStatus st = qt_load_built(&mb, "int_qgemm_ops.onnx", &g);
        qt_mb_free(&mb);
        if (st == QR_OK) st = qr_run_infer(g, &a);
        if (st != QR_OK) qt_fmt(bad, sizeof bad, "qgemm case %d: %s", ci, qr_err_msg());
        QrQuantRange yr;
        qr_quant_range(ydt, &yr);
        QrTensor yw = { .dtype = q->yq ? ydt : QR_DT_F32, .numel = q->M * q->N };
        size_t ysz = (size_t)yw.numel * qr_dtype_size(yw.dtype);
        yw.data = malloc(ysz);
        for (int64_t m = 0; st == QR_OK && m < q->M; m++)
            for (int64_t nn = 0; nn < q->N; nn++) {
                int64_t acc = 0;
                for (int64_t k = 0; k < q->K; k++)
                    acc += (qr_tensor_get_i64(&a, q->ta ? k * q->M + m : m * q->K + k) - az) *
                           (qr_tensor_get_i64(&b, q->tb ? nn * q->K + k : k * q->N + nn) - bz[nn]);
                if (q->cbias) acc += cb[nn];
                if (qr_op_q_esize(q->adt) == 1) acc = (int32_t)(uint32_t)(uint64_t)acc;
                float scale = alpha * as * bs[nn];
                if (q->yq) qr_tensor_set_i64(&yw, m * q->N + nn, qt_int_requant(acc, scale / ys, yz, yr.lo, yr.hi));
                else ((float *)yw.data)[m * q->N + nn] = (float)acc * scale;
            }
        char what[64];
        snprintf(what, sizeof what, "qgemm case %d", ci);
        if (st == QR_OK) qt_int_run_levels(what, g, &a, yw.data, ysz, bad, sizeof bad);
        free(yw.data);
        if (g) { qr_graph_free(g); free(g); }
        qr_tensor_free_data(&a);
        qr_tensor_free_data(&b);
    }
    QT_CHECKF(!bad[0], "%s", bad);
}

/* com.microsoft.QLinearAdd with broadcasting (the three ORT loops) and qreport.int.QMaxPool
 * (strides, dilations, pads, requantization to other parameters and a clamp) on every kernel
 * level against loops written here with ops/qdq.c's per-element formulas. */
static void test_int_eltwise_ops(void) {
    uint64_t rng = 717;
    char bad[512] = "";
    typedef struct { int ra; int64_t ad[4]; int rb; int64_t bd[4]; QrDType dt; } QtAdd;
    static const QtAdd adds[] = {
        { 4, { 2, 3, 7, 45 }, 4, { 2, 3, 7, 45 }, QR_DT_U8 }, { 4, { 2, 3, 7, 45 }, 3, { 3, 1, 45 }, QR_DT_S8 },
        { 4, { 2, 3, 7, 5 }, 3, { 3, 7, 1 }, QR_DT_U8 },      { 1, { 1, 0, 0, 0 }, 2, { 9, 70, 0, 0 }, QR_DT_U8 },
        { 2, { 9, 70, 0, 0 }, 0, { 0, 0, 0, 0 }, QR_DT_S8 }, { 4, { 1, 64, 56, 56 }, 4, { 1, 64, 56, 56 }, QR_DT_U8 },
    };
    for (int ci = 0; ci < QR_ARRAY_LEN(adds) && !bad[0]; ci++) {
        const QtAdd *c = &adds[ci];
        QrTensor a = {0}, b = {0};
        qr_tensor_set_shape(&a, c->dt, c->ra, c->ad);
        qr_tensor_alloc_data(&a);
        qr_tensor_set_shape(&b, c->dt, c->rb, c->bd);
        qr_tensor_alloc_data(&b);
        qt_int_fill(&a, &rng);
        qt_int_fill(&b, &rng);
        QrQuantRange r;
        qr_quant_range(c->dt, &r);
        int32_t za = r.lo + 77, zb = r.lo + 140, zc = r.lo + 100;
        float sa = 0.031f, sb = 0.017f, sc = 0.043f;
        QtModel mb;
        qt_mb_init(&mb, 13);
        qt_mb_input(&mb, "a", c->dt, c->ra, c->ad);
        qt_mb_init_raw(&mb, "b", c->dt, c->rb, c->bd, b.data, qr_tensor_nbytes(&b));
        qt_int_scalar(&mb, "sa", QR_DT_F32, sa);
        qt_int_scalar(&mb, "sb", QR_DT_F32, sb);
        qt_int_scalar(&mb, "sc", QR_DT_F32, sc);
        qt_int_init_ints(&mb, "za", c->dt, 1, false, &za);
        qt_int_init_ints(&mb, "zb", c->dt, 1, false, &zb);
        qt_int_init_ints(&mb, "zc", c->dt, 1, false, &zc);
        const QrTensor *ts[2] = { &a, &b };
        int yrk;
        int64_t yd[QR_MAX_RANK];
        QrOpCtx dummy = {0};
        QrStatus st = qr_op_broadcast(&dummy, 2, ts, &yrk, yd);
        qt_mb_output(&mb, "y", c->dt, yrk, yd);
        qt_mb_node(&mb, "com.microsoft.QLinearAdd", "add", "a,sa,za,b,sb,zb,sc,zc", "y");
        QrGraph *g = NULL;
        if (st == QR_OK) st = qt_load_built(&mb, "int_add_ops.onnx", &g);
        qt_mb_free(&mb);
        if (st == QR_OK) st = qr_run_infer(g, &a);
        if (st != QR_OK) { qt_fmt(bad, sizeof bad, "add case %d: %s", ci, qr_err_msg()); break; }
        QrTensor y = { .dtype = c->dt };
        qr_tensor_set_shape(&y, c->dt, yrk, yd);
        QrQBin q = { .mul = false, .za = za, .zb = zb };
        q.ra = sa / sc;
        q.rb = sb / sc;
        q.fixed = (float)zc - (qr__ql_mul_rn(q.ra, (float)za) + qr__ql_mul_rn(q.rb, (float)zb));
        q.mode = qr__ql_bin_mode(&a, &b, &y);
        unsigned char *want = malloc((size_t)y.numel);
        y.data = want;
        int64_t sta[QR_MAX_RANK], stb[QR_MAX_RANK];
        qr_broadcast_strides(&a, yrk, yd, sta);
        qr_broadcast_strides(&b, yrk, yd, stb);
        for (int64_t i = 0; i < y.numel; i++) {
            int64_t rem = i, ia = 0, ib = 0;
            for (int d = yrk - 1; d >= 0; d--) { int64_t k = rem % yd[d]; rem /= yd[d]; ia += k * sta[d]; ib += k * stb[d]; }
            qr_tensor_set_i64(&y, i, qr__ql_cvt_pack(qr__ql_bin_value(&q, (int32_t)qr_tensor_get_i64(&a, ia), (int32_t)qr_tensor_get_i64(&b, ib)), r));
        }
        char what[64];
        snprintf(what, sizeof what, "add case %d (mode %d)", ci, q.mode);
        qt_int_run_levels(what, g, &a, want, (size_t)y.numel, bad, sizeof bad);
        free(want);
        qr_graph_free(g);
        free(g);
        qr_tensor_free_data(&a);
        qr_tensor_free_data(&b);
    }
    typedef struct { QrDType dt; int64_t C, H, W, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr; int32_t qmin, qmax; bool same; } QtPool;
    static const QtPool pools[] = {
        { QR_DT_U8, 5, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, true }, { QR_DT_S8, 3, 13, 30, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, false },
        { QR_DT_U8, 4, 9, 17, 3, 2, 1, 3, 2, 1, 2, 1, 2, 1, 10, 200, false }, { QR_DT_S8, 2, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0, -100, 100, false },
    };
    for (int ci = 0; ci < QR_ARRAY_LEN(pools) && !bad[0]; ci++) {
        const QtPool *c = &pools[ci];
        int64_t xd[4] = { 2, c->C, c->H, c->W };
        const int64_t OH = (c->H + c->pt + c->pb - (c->KH - 1) * c->dh - 1) / c->sh + 1, OW = (c->W + c->pl + c->pr - (c->KW - 1) * c->dw - 1) / c->sw + 1;
        int64_t yd[4] = { 2, c->C, OH, OW };
        QrTensor x = {0};
        qr_tensor_set_shape(&x, c->dt, 4, xd);
        qr_tensor_alloc_data(&x);
        qt_int_fill(&x, &rng);
        QrQuantRange r;
        qr_quant_range(c->dt, &r);
        QrQReq q = { 0.02f, c->same ? 0.02f : 0.033f, r.lo + 9, c->same ? r.lo + 9 : r.lo + 120, r };
        if (c->qmin < c->qmax) { q.r.lo = c->qmin; q.r.hi = c->qmax; }
        QtModel mb;
        qt_mb_init(&mb, 13);
        qt_mb_input(&mb, "x", c->dt, 4, xd);
        qt_int_scalar(&mb, "xs", QR_DT_F32, q.xs);
        qt_int_scalar(&mb, "ys", QR_DT_F32, q.ys);
        qt_int_init_ints(&mb, "xz", c->dt, 1, false, &q.xz);
        qt_int_init_ints(&mb, "yz", c->dt, 1, false, &q.yz);
        qt_mb_output(&mb, "y", c->dt, 4, yd);
        Onnx__NodeProto *n = qt_mb_node(&mb, "qreport.int.QMaxPool", "pool", "x,xs,xz,ys,yz", "y");
        int64_t ks[2] = { c->KH, c->KW }, st2[2] = { c->sh, c->sw }, dl[2] = { c->dh, c->dw }, pads[4] = { c->pt, c->pl, c->pb, c->pr };
        qt_mb_attr_ints(&mb, n, "kernel_shape", 2, ks);
        qt_mb_attr_ints(&mb, n, "strides", 2, st2);
        qt_mb_attr_ints(&mb, n, "dilations", 2, dl);
        qt_mb_attr_ints(&mb, n, "pads", 4, pads);
        if (c->qmin < c->qmax) { qt_int_attr_i(&mb, n, "qmin", c->qmin); qt_int_attr_i(&mb, n, "qmax", c->qmax); }
        QrGraph *g = NULL;
        QrStatus st = qt_load_built(&mb, "int_pool_ops.onnx", &g);
        qt_mb_free(&mb);
        if (st == QR_OK) st = qr_run_infer(g, &x);
        if (st != QR_OK) { qt_fmt(bad, sizeof bad, "pool case %d: %s", ci, qr_err_msg()); break; }
        QrTensor y = { .dtype = c->dt, .numel = 2 * c->C * OH * OW };
        unsigned char *want = malloc((size_t)y.numel);
        y.data = want;
        for (int64_t pl = 0; pl < 2 * c->C; pl++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    int64_t best = INT64_MIN;
                    for (int64_t kh = 0; kh < c->KH; kh++)
                        for (int64_t kw = 0; kw < c->KW; kw++) {
                            int64_t ih = oh * c->sh - c->pt + kh * c->dh, iw = ow * c->sw - c->pl + kw * c->dw;
                            if (ih >= 0 && ih < c->H && iw >= 0 && iw < c->W) best = QR_MAX(best, qr_tensor_get_i64(&x, (pl * c->H + ih) * c->W + iw));
                        }
                    qr_tensor_set_i64(&y, (pl * OH + oh) * OW + ow, qr_quant_quantize_f32(q.xs * (float)(best - q.xz), q.ys, q.yz, q.r));
                }
        char what[64];
        snprintf(what, sizeof what, "maxpool case %d", ci);
        qt_int_run_levels(what, g, &x, want, (size_t)y.numel, bad, sizeof bad);
        free(want);
        qr_graph_free(g);
        free(g);
        qr_tensor_free_data(&x);
    }
    QT_CHECKF(!bad[0], "%s", bad);
}

/* Lowering info: what stays float and why, the node maps, and that a fused group's output keeps its
 * value index and name. */
/* A float Gemm whose weight is fake-quantized (float initializer -> QuantizeLinear ->
 * DequantizeLinear, as a QAT classifier is exported) becomes qreport.int.DqGemm in int mode,
 * with exactly the float Gemm's bits (its arithmetic does not change, only where B is read
 * from): per-row int8 scales with a bias and one row (the in-register form), per-tensor uint8
 * with a zero point and two rows, and beta 0.5 (both on the dequantize-first form). */
static void test_int_dqgemm(void) {
    enum { K = 37, N = 11 };
    uint64_t rng = 91;
    static const struct { int64_t M; bool per_row, u8, bias; float beta; } cases[] = {
        { 1, true, false, true, 1.0f }, { 2, false, true, false, 1.0f }, { 1, true, false, true, 0.5f },
    };
    for (int ci = 0; ci < QR_ARRAY_LEN(cases); ci++) {
        const int64_t M = cases[ci].M, dx[2] = { M, K }, dw[2] = { N, K }, dn[1] = { N }, dy[2] = { M, N };
        const QrDType qdt = cases[ci].u8 ? QR_DT_U8 : QR_DT_S8;
        float w[N * K], b[N], sc[N], x[2 * K];
        uint8_t zp[N];
        for (int i = 0; i < N * K; i++) w[i] = qr_rng_normal(&rng);
        for (int i = 0; i < N; i++) { b[i] = qr_rng_normal(&rng); sc[i] = 0.01f + 0.002f * (float)i; zp[i] = cases[ci].u8 ? 128 : 0; }
        for (int i = 0; i < M * K; i++) x[i] = qr_rng_normal(&rng);
        QtModel mb;
        qt_mb_init(&mb, 21);
        qt_mb_init_raw(&mb, "w", QR_DT_F32, 2, dw, w, sizeof w);
        qt_mb_init_raw(&mb, "b", QR_DT_F32, 1, dn, b, sizeof b);
        if (cases[ci].per_row) {
            qt_mb_init_raw(&mb, "ws", QR_DT_F32, 1, dn, sc, sizeof sc);
            qt_mb_init_raw(&mb, "wz", qdt, 1, dn, zp, sizeof zp);
        } else {
            qt_int_scalar(&mb, "ws", QR_DT_F32, sc[0]);
            qt_int_scalar(&mb, "wz", qdt, zp[0]);
        }
        qt_mb_input(&mb, "x", QR_DT_F32, 2, dx);
        qt_mb_output(&mb, "y", QR_DT_F32, 2, dy);
        Onnx__NodeProto *q = qt_mb_node(&mb, "QuantizeLinear", "wq", "w,ws,wz", "wi");
        Onnx__NodeProto *d = qt_mb_node(&mb, "DequantizeLinear", "wdq", "wi,ws,wz", "wd");
        qt_int_attr_i(&mb, q, "axis", 0);
        qt_int_attr_i(&mb, d, "axis", 0);
        Onnx__NodeProto *gm = qt_mb_node(&mb, "Gemm", "fc", cases[ci].bias ? "x,wd,b" : "x,wd", "y");
        qt_int_attr_i(&mb, gm, "transB", 1);
        if (cases[ci].beta != 1.0f) {
            Onnx__AttributeProto *a = qt_mb_attr(&mb, gm, "beta", QR_ATTR_FLOAT);
            a->has_f = 1;
            a->f = cases[ci].beta;
        }
        QrGraph *g = NULL;
        QtIntModel m;
        memset(&m, 0, sizeof m);
        QrStatus st = qt_load_built(&mb, "int_dqgemm.onnx", &g);
        qt_mb_free(&mb);
        if (st == QR_OK) st = qr_tensor_set_shape(&m.in, QR_DT_F32, 2, dx);
        if (st == QR_OK) st = qr_tensor_alloc_data(&m.in);
        if (st == QR_OK) { memcpy(m.in.data, x, (size_t)(M * K) * sizeof(float)); st = qt_int_load_graph(&m, g, &m.in); }
        else if (g) { qr_graph_free(g); free(g); }
        QrTensor ys = {0}, yi = {0};
        if (st == QR_OK) st = qr_run(m.g, &m.in, NULL, &ys);
        if (st == QR_OK) st = qr_run(&m.low, &m.in, NULL, &yi);
        int n_dq = 0;
        for (int i = 0; st == QR_OK && i < m.low.n_nodes; i++) n_dq += !strcmp(m.low.nodes[i].op_type, "DqGemm");
        QT_OK(st);
        QT_CHECKF(n_dq == 1, "case %d: %d DqGemm nodes in the lowered graph", ci, n_dq);
        QT_CHECKF(st == QR_OK && ys.numel == M * N && yi.numel == M * N && !memcmp(ys.data, yi.data, (size_t)(M * N) * sizeof(float)),
                  "case %d: int-mode DqGemm differs from the float Gemm", ci);
        qr_tensor_free_data(&ys);
        qr_tensor_free_data(&yi);
        qt_int_free(&m);
    }
}

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
    test_int16_integer_units();
    QT_RUN(test_int_info);
    QT_RUN(test_int_dqgemm);
    QT_RUN(test_int_conv_ops);
    QT_RUN(test_int_packed_weights);
    QT_RUN(test_int_matmul_ops);
    QT_RUN(test_int_eltwise_ops);
}
