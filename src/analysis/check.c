/* analysis/check — implementation. See check.h. */

/* Follows value v through Q/DQ/Identity to its first real consumer; sets *through_q when a
 * QuantizeLinear was crossed. Returns the consumer node or -1 (none or several). */
static int qr__chk_next(const QrGraph *g, int v, bool *through_q) {
    for (int hops = 0; hops < 6 && v >= 0; hops++) {
        int reader = qr_graph_single_reader(g, v);
        if (reader < 0) return -1;
        const QrNode *n = &g->nodes[reader];
        if (!strcmp(n->op_type, "QuantizeLinear") || !strcmp(n->op_type, "DequantizeLinear") ||
            !strcmp(n->op_type, "Identity")) {
            if (!strcmp(n->op_type, "QuantizeLinear")) *through_q = true;
            v = n->out[0];
            continue;
        }
        return reader;
    }
    return -1;
}

/* The initializer an Identity chain copies (torch's constant-folding dedup), else v. */
static int qr__chk_root(const QrGraph *g, int v) {
    for (int hops = 0; hops < 16 && v >= 0; hops++) {
        int p = g->values[v].producer;
        if (p < 0 || strcmp(g->nodes[p].op_type, "Identity") || g->nodes[p].n_in < 1 || g->nodes[p].in[0] < 0) break;
        v = g->nodes[p].in[0];
    }
    return v;
}

static bool qr__chk_all_equal(const QrTensor *t) {
    if (!t->data || t->numel < 1) return false;
    double x0 = qr_tensor_get_f64(t, 0);
    for (int64_t i = 1; i < t->numel; i++) if (qr_tensor_get_f64(t, i) != x0) return false;
    return true;
}

/* The distinct compute nodes that use value v as data, through Identity / Cast / Q / DQ
 * (their data input; a Q/DQ's scale and zero point are parameters, not data). Returns the
 * count; out (n_nodes entries) receives them in discovery order; *n_direct counts those
 * reached without an Identity (an exporter's deduplication gives a merged tensor back its
 * own name through an Identity). */
static int qr__chk_compute_users(const QrGraph *g, int v, int *out, int *n_direct) {
    int stack[64], sp = 0, n = 0;
    bool via_id[64];
    stack[sp] = v;
    via_id[sp++] = false;
    *n_direct = 0;
    for (int guard = 0; sp && guard < 4096; guard++) {
        sp--;
        int cur = stack[sp];
        bool id = via_id[sp];
        const QrUse *u;
        int nu = qr_graph_readers(g, cur, &u);
        for (int k = 0; k < nu; k++) {
            const QrNode *nd = &g->nodes[u[k].node];
            bool qdq = !strcmp(nd->op_type, "QuantizeLinear") || !strcmp(nd->op_type, "DequantizeLinear");
            if (qdq && u[k].input > 0) continue;
            if (qdq || !strcmp(nd->op_type, "Identity") || !strcmp(nd->op_type, "Cast")) {
                if (nd->out[0] >= 0 && sp < QR_ARRAY_LEN(stack)) {
                    via_id[sp] = id || !strcmp(nd->op_type, "Identity");
                    stack[sp++] = nd->out[0];
                }
                continue;
            }
            bool dup = false;
            for (int j = 0; j < n; j++) dup |= out[j] == u[k].node;
            if (!dup) { out[n++] = u[k].node; *n_direct += !id; }
        }
    }
    return n;
}

static bool qr__chk_is(const QrNode *n, const char *a, const char *b) {
    const char *c = qr_match_canon(n);
    return !strcmp(c, a) || (b && !strcmp(c, b));
}

static void qr__chk_scale(char *buf, size_t n, const QrQuantizer *q) {
    if (q->n_scales == 0) snprintf(buf, n, "dynamic");
    else if (q->n_scales == 1) snprintf(buf, n, "%.6g", q->scale_min);
    else snprintf(buf, n, "[%.6g, %.6g] (%lld)", q->scale_min, q->scale_max, (long long)q->n_scales);
}

/* ==== findings (qr_check_run) =========================================================== */

#define QR__CHK_NOMEM() qr_errf(QR_ERR_NOMEM, "out of memory")

/* Appends a finding (indices -1, the rest zero). NULL when out of memory. */
static QrCheckFinding *qr__chk_add(QrCheck *c, int *cap, QrCheckKind kind) {
    if (c->n == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        QrCheckFinding *f = qr_arena_array(&c->arena, (size_t)nc, sizeof *f);
        if (!f) return NULL;
        if (c->n) memcpy(f, c->f, (size_t)c->n * sizeof *f);
        c->f = f;
        *cap = nc;
    }
    QrCheckFinding *f = &c->f[c->n++];
    *f = (QrCheckFinding){ .kind = kind, .value = -1, .node = -1, .node2 = -1, .node3 = -1, .quant = -1 };
    return f;
}

/* f->list = a copy of v[0..n) in the check's arena. */
static bool qr__chk_list(QrCheck *c, QrCheckFinding *f, const int *v, int n) {
    int *p = qr_arena_array(&c->arena, (size_t)n + 1, sizeof *p);
    if (!p) return false;
    if (n) memcpy(p, v, (size_t)n * sizeof *p);
    f->list = p;
    f->n_list = n;
    return true;
}

/* 1. Fusable patterns left unfused: a quantizer between a conv-like op and BN/activation/Add. */
static QrStatus qr__chk_find_unfused(QrCheck *c, int *cap) {
    const QrGraph *g = c->g;
    for (int oi = 0; oi < g->n_nodes; oi++) {
        int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        if (!qr__chk_is(n, "Conv", "Gemm") && strcmp(n->op_type, "MatMul")) continue;
        bool q1 = false;
        int nx = qr__chk_next(g, n->out[0], &q1);
        if (nx < 0) continue;
        const QrNode *m = &g->nodes[nx];
        bool bn = !strcmp(m->op_type, "BatchNormalization");
        if (!bn && !qr__chk_is(m, "Relu", "Clip") && !qr__chk_is(m, "Add", NULL)) continue;
        bool q2 = false;
        int nx2 = bn ? qr__chk_next(g, m->out[0], &q2) : -1;
        if (nx2 >= 0 && !qr__chk_is(&g->nodes[nx2], "Relu", "Clip")) nx2 = -1;
        if (!q1 && !q2) continue;
        QrCheckFinding *f = qr__chk_add(c, cap, QR_CHK_UNFUSED);
        if (!f) return QR__CHK_NOMEM();
        f->node = ni;
        f->node2 = nx;
        f->node3 = nx2;
        f->q1 = q1;
        f->q2 = q2;
        c->sum.n_unfused++;
    }
    return QR_OK;
}

/* 2. Sharing: one weight or one quantizer used by different compute nodes. A QuantizeLinear and
 * its own DequantizeLinear reading one scale are one quantizer, not sharing; identical
 * constants an exporter merged (zero points, constant-valued tensors) are QR_CHK_MERGED_*.
 * cn: n_nodes + 1 ints, qs: qt->n + 1 ints of scratch. */
static QrStatus qr__chk_find_shared(QrCheck *c, int *cap, int *cn, int *qs) {
    const QrGraph *g = c->g;
    const QrQuantTable *qt = c->qt;
    for (int v = 0; v < g->n_values; v++) {
        const QrValue *val = &g->values[v];
        if (!val->is_init) continue;
        /* quantizers reading it as scale / zero point (through Identity copies) */
        int n_scale = 0, n_zp = 0, nq = 0;
        for (int i = 0; i < qt->n; i++) {
            const QrQuantizer *q = &qt->q[i];
            bool sc = q->scale_value >= 0 && qr__chk_root(g, q->scale_value) == v;
            bool zp = q->zp_value >= 0 && qr__chk_root(g, q->zp_value) == v;
            if (!sc && !zp) continue;
            n_scale += sc;
            n_zp += zp;
            qs[nq++] = i;
        }
        int n_direct = 0;
        int nc = nq ? 0 : qr__chk_compute_users(g, v, cn, &n_direct);   /* a quantizer's parameter: above */
        bool constant = qr__chk_all_equal(&val->t), dedup = n_direct <= 1;
        if (n_scale > 1 || n_zp > 1) {
            QrCheckFinding *f = qr__chk_add(c, cap, n_scale > 1 ? QR_CHK_SHARED_SCALE : QR_CHK_MERGED_ZERO_POINT);
            if (!f || !qr__chk_list(c, f, qs, nq)) return QR__CHK_NOMEM();
            f->value = v;
            f->constant = constant;
            f->count = n_scale > 1 ? n_scale : n_zp;
            c->sum.n_shared += n_scale > 1;
        }
        if (nc > 1) {
            QrCheckKind k = !constant && !dedup ? QR_CHK_SHARED_WEIGHT : constant ? QR_CHK_MERGED_CONSTANT : QR_CHK_MERGED_DEDUP;
            QrCheckFinding *f = qr__chk_add(c, cap, k);
            if (!f || !qr__chk_list(c, f, cn, nc)) return QR__CHK_NOMEM();
            f->value = v;
            f->constant = constant;
            f->count = nc;
            f->n_direct = n_direct;
            f->x[0] = val->t.data && val->t.numel ? qr_tensor_get_f64(&val->t, 0) : 0.0;
            c->sum.n_shared += k == QR_CHK_SHARED_WEIGHT;
        }
    }
    for (int i = 0; i < qt->n; i++) {
        const QrQuantizer *q = &qt->q[i];
        if (q->kind != QR_QK_ACTIVATION || q->out_value < 0) continue;
        int users = 0;
        for (int k = 0; k < q->n_dq; k++) {
            int nd;
            users += qr__chk_compute_users(g, g->nodes[q->dq_nodes[k]].out[0], cn, &nd);
        }
        if (users > 1) {
            QrCheckFinding *f = qr__chk_add(c, cap, QR_CHK_SHARED_QUANTIZER);
            if (!f) return QR__CHK_NOMEM();
            f->quant = i;
            f->value = q->float_value;
            f->node = q->q_node;
            f->count = users;
            c->sum.n_shared++;
        }
    }
    return QR_OK;
}

/* Input index of the weight of a weight-only node with a constant weight (the nodes quant/twin_wq.c
 * makes the quantizer of their weight), -1 for any other node. */
static int qr__chk_wonly_weight(const QrGraph *g, const QrNode *n) {
    if (strcmp(n->domain, "com.microsoft") != 0) return -1;
    int w = !strcmp(n->op_type, "GatherBlockQuantized") ? 0
            : !strcmp(n->op_type, "MatMulNBits") || !strcmp(n->op_type, "MatMulBnb4") ? 1 : -1;
    if (w < 0 || w >= n->n_in || n->in[w] < 0 || !g->values[n->in[w]].t.data) return -1;
    return w;
}

/* 3. and 4.: the layers whose output quantization is listed, and the weight quantizers. */
static QrStatus qr__chk_find_tables(QrCheck *c) {
    const QrGraph *g = c->g;
    c->layers = qr_arena_array(&c->arena, (size_t)g->n_nodes + 1, sizeof *c->layers);
    c->weights = qr_arena_array(&c->arena, (size_t)c->qt->n + 1, sizeof *c->weights);
    c->wonly = qr_arena_array(&c->arena, (size_t)g->n_nodes + 1, sizeof *c->wonly);
    if (!c->layers || !c->weights || !c->wonly) return QR__CHK_NOMEM();
    for (int oi = 0; oi < g->n_nodes; oi++) {
        int ni = g->order[oi];
        if (qr_match_is_compute(g, ni) || qr_match_canon(&g->nodes[ni]) != g->nodes[ni].op_type) c->layers[c->n_layers++] = ni;
    }
    for (int i = 0; i < c->qt->n; i++)
        if (c->qt->q[i].kind == QR_QK_WEIGHT) c->weights[c->n_weights++] = i;
    for (int oi = 0; oi < g->n_nodes; oi++)
        if (qr__chk_wonly_weight(g, &g->nodes[g->order[oi]]) >= 0) c->wonly[c->n_wonly++] = g->order[oi];
    return QR_OK;
}

/* 5. Anomalies: a low-precision model output, a range the quantizer's grid clips (needs
 * stats), input scales far apart at a Concat/Add, an input that is not normalized. */
static QrStatus qr__chk_find_anomalies(QrCheck *c, int *cap, const QrStats *stats) {
    const QrGraph *g = c->g;
    const QrQuantTable *qt = c->qt;
    for (int i = 0; i < g->n_outputs; i++) {
        int v = g->outputs[i], p = g->values[v].producer;
        if (p < 0) continue;
        const QrNode *n = &g->nodes[p];
        if (!strcmp(n->op_type, "DequantizeLinear") && n->in[0] >= 0) {
            QrDType dt = g->values[n->in[0]].t.dtype;
            if (dt == QR_DT_S8 || dt == QR_DT_U8 || dt == QR_DT_S4 || dt == QR_DT_U4) {
                QrCheckFinding *f = qr__chk_add(c, cap, QR_CHK_OUTPUT_LOW_PRECISION);
                if (!f) return QR__CHK_NOMEM();
                f->value = v;
                f->dtype = dt;
            }
        }
    }
    for (int i = 0; i < qt->n; i++) {
        const QrQuantizer *q = &qt->q[i];
        if (q->kind != QR_QK_ACTIVATION || q->form == QR_QF_DYNAMIC || q->n_scales != 1 || !stats) continue;
        int v = q->float_value >= 0 ? q->float_value : -1;
        if (v < 0 || !stats[v].n) continue;
        const QrTensor *z = q->zp_value >= 0 ? &g->values[q->zp_value].t : NULL;
        int64_t zp = z && z->data ? qr_tensor_get_i64(z, 0) : 0;
        QrQuantRange r;
        if (!qr_quant_range(q->dtype, &r)) continue;
        double lo = q->scale_min * (double)(r.lo - zp), hi = q->scale_min * (double)(r.hi - zp);
        /* A grid starting at exactly 0 after a conv-like op implements a fused Relu
         * (ONNX Runtime removes the Relu): clipping negatives is intended there. */
        int prod = g->values[v].producer;
        bool relu_grid = lo == 0 && prod >= 0 && (qr__chk_is(&g->nodes[prod], "Conv", "Gemm") ||
                                                  qr__chk_is(&g->nodes[prod], "MatMul", "Add"));
        double over = QR_MAX(stats[v].max - hi, relu_grid ? 0 : lo - stats[v].min), span = QR_MAX(hi - lo, 1e-30);
        if (over > 0.05 * span) {
            QrCheckFinding *f = qr__chk_add(c, cap, QR_CHK_CLIPPED);
            if (!f) return QR__CHK_NOMEM();
            f->quant = i;
            f->value = v;
            f->node = q->q_node;
            f->dtype = q->dtype;
            f->x[0] = lo;
            f->x[1] = hi;
            f->x[2] = stats[v].min;
            f->x[3] = stats[v].max;
        }
    }
    for (int oi = 0; oi < g->n_nodes; oi++) {
        const QrNode *n = &g->nodes[g->order[oi]];
        if (!qr__chk_is(n, "Concat", "Add")) continue;
        double smin = INFINITY, smax = 0;
        int nq = 0;
        for (int k = 0; k < n->n_in; k++) {
            int qi = n->in[k] >= 0 ? qt->by_value[n->in[k]] : -1;
            if (qi < 0 || qt->q[qi].n_scales != 1 || qt->q[qi].kind != QR_QK_ACTIVATION) continue;
            smin = QR_MIN(smin, qt->q[qi].scale_min);
            smax = QR_MAX(smax, qt->q[qi].scale_min);
            nq++;
        }
        if (nq >= 2 && smax > 2 * smin) {
            QrCheckFinding *f = qr__chk_add(c, cap, QR_CHK_SCALE_GAP);
            if (!f) return QR__CHK_NOMEM();
            f->node = g->order[oi];
            f->x[0] = smin;
            f->x[1] = smax;
        }
    }
    for (int i = 0; stats && i < g->n_inputs; i++) {
        const QrStats *is = &stats[g->inputs[i]];
        if (!is->n) continue;
        double absmax = QR_MAX(fabs(is->min), fabs(is->max)), sd = sqrt(qr_stats_var(is));
        if (absmax > 16 || fabs(is->mean) > 4 * QR_MAX(sd, 1e-12)) {
            QrCheckFinding *f = qr__chk_add(c, cap, QR_CHK_INPUT_NOT_NORMALIZED);
            if (!f) return QR__CHK_NOMEM();
            f->value = g->inputs[i];
            f->x[0] = is->min;
            f->x[1] = is->max;
            f->x[2] = is->mean;
            f->x[3] = sd;
        }
    }
    return QR_OK;
}

static QrStatus qr_check_run(const QrGraph *g, const QrQuantTable *qt, const QrStats *stats, QrCheck *c) {
    *c = (QrCheck){ .g = g, .qt = qt, .have_stats = stats != NULL };
    int cap = 0;
    int *cn = malloc(((size_t)g->n_nodes + 1) * sizeof *cn), *qs = malloc(((size_t)qt->n + 1) * sizeof *qs);
    QrStatus st = cn && qs ? QR_OK : QR__CHK_NOMEM();
    if (st == QR_OK) st = qr__chk_find_unfused(c, &cap);
    if (st == QR_OK) st = qr__chk_find_shared(c, &cap, cn, qs);
    if (st == QR_OK) st = qr__chk_find_tables(c);
    int first_anomaly = c->n;
    if (st == QR_OK) st = qr__chk_find_anomalies(c, &cap, stats);
    c->sum.n_anomalies = c->n - first_anomaly;
    free(cn);
    free(qs);
    return st;
}

static void qr_check_free(QrCheck *c) {
    qr_arena_free(&c->arena);
    *c = (QrCheck){ 0 };
}

/* ==== model_check_result.txt (qr_check_format) ============================================ */

typedef struct QrChkText {
    char *b;
    size_t len, cap;
    QrStatus st;
} QrChkText;

#define QR__CHK_P(o, ...) do { if ((o)->st == QR_OK) (o)->st = qr_buf_printf(&(o)->b, &(o)->len, &(o)->cap, __VA_ARGS__); } while (0)

static const char *qr__chk_node(const QrGraph *g, int n) { return n >= 0 ? g->nodes[n].name : "-"; }

static void qr__chk_fmt_unfused(const QrCheck *c, QrChkText *o) {
    const QrGraph *g = c->g;
    QR__CHK_P(o, "1. Fusable patterns left unfused (a quantizer sits between ops a deployment compiler would fuse)\n");
    for (int i = 0; i < c->n; i++) {
        const QrCheckFinding *f = &c->f[i];
        if (f->kind != QR_CHK_UNFUSED) continue;
        const QrNode *n = &g->nodes[f->node], *m = &g->nodes[f->node2];
        char chain[512];
        snprintf(chain, sizeof chain, "%s '%s' -> %s%s '%s'", n->op_type, n->name, f->q1 ? "[Q/DQ] -> " : "", m->op_type, m->name);
        if (f->node3 >= 0) {
            size_t l = strlen(chain);
            snprintf(chain + l, sizeof chain - l, " -> %s%s '%s'", f->q2 ? "[Q/DQ] -> " : "", g->nodes[f->node3].op_type,
                     g->nodes[f->node3].name);
        }
        QR__CHK_P(o, "  %s\n", chain);
    }
    if (!c->sum.n_unfused) QR__CHK_P(o, "  none\n");
}

static void qr__chk_fmt_nodes(const QrCheck *c, const QrCheckFinding *f, QrChkText *o) {
    for (int k = 0; k < f->n_list; k++) QR__CHK_P(o, "%s '%s'", k ? "," : "", c->g->nodes[f->list[k]].name);
}

static void qr__chk_fmt_shared(const QrCheck *c, QrChkText *o) {
    const QrGraph *g = c->g;
    QR__CHK_P(o, "\n2. Shared weights and quantizers (a weight or quantizer used by different compute nodes)\n");
    int n_merged = 0;
    for (int i = 0; i < c->n; i++) {
        const QrCheckFinding *f = &c->f[i];
        const char *name = f->value >= 0 ? g->values[f->value].name : "";
        if (f->kind == QR_CHK_SHARED_SCALE) {
            char who[512] = "";
            size_t wl = 0;
            for (int k = 0; k < f->n_list && wl < sizeof who - 1; k++) {
                const QrQuantizer *q = &c->qt->q[f->list[k]];
                int on = q->float_value >= 0 ? q->float_value : q->int_value;
                wl += (size_t)snprintf(who + wl, sizeof who - wl, "%s'%s'", wl ? ", " : "", on >= 0 ? g->values[on].name : "?");
            }
            QR__CHK_P(o, "  quantizer scale '%s' is used by %d quantizers (one observer shared by %s)\n", name, f->count, who);
        } else if (f->kind == QR_CHK_SHARED_WEIGHT) {
            QR__CHK_P(o, "  weight '%s' is used by %d compute nodes:", name, f->count);
            qr__chk_fmt_nodes(c, f, o);
            QR__CHK_P(o, "\n");
        } else if (f->kind == QR_CHK_SHARED_QUANTIZER) {
            QR__CHK_P(o, "  quantizer on '%s' (%s) feeds %d compute nodes (shared: one scale for all of them)\n", name,
                      qr__chk_node(g, f->node), f->count);
        } else n_merged += f->kind == QR_CHK_MERGED_ZERO_POINT || f->kind == QR_CHK_MERGED_CONSTANT ||
                           f->kind == QR_CHK_MERGED_DEDUP;
    }
    if (!c->sum.n_shared) QR__CHK_P(o, "  none\n");
    if (!n_merged) return;
    QR__CHK_P(o, "  Identical constants merged by the exporter (not sharing: separate tensors of equal value stored once):\n");
    for (int i = 0; i < c->n; i++) {
        const QrCheckFinding *f = &c->f[i];
        const char *name = f->value >= 0 ? g->values[f->value].name : "";
        if (f->kind == QR_CHK_MERGED_ZERO_POINT)
            QR__CHK_P(o, "  zero point '%s' (%s) read by %d quantizers\n", name, f->constant ? "identical values" : "per-channel",
                      f->count);
        else if (f->kind == QR_CHK_MERGED_CONSTANT)
            QR__CHK_P(o, "  constant '%s' (every element %g) read by %d compute nodes\n", name, f->x[0], f->count);
        else if (f->kind == QR_CHK_MERGED_DEDUP) {
            QR__CHK_P(o, "  '%s' read by %d compute nodes, %d of them through an Identity (the exporter merged tensors of "
                      "equal value):", name, f->count, f->count - f->n_direct);
            qr__chk_fmt_nodes(c, f, o);
            QR__CHK_P(o, "\n");
        }
    }
}

static void qr__chk_fmt_layers(const QrCheck *c, QrChkText *o) {
    const QrGraph *g = c->g;
    const QrQuantTable *qt = c->qt;
    QR__CHK_P(o, "\n3. Output quantization of each layer\n");
    static const char *const cols[] = { "name", "op type", "input dtype", "output dtype", "axis", "scale" };
    QrTable t;
    if (o->st == QR_OK) o->st = qr_table_init(&t, QR_ARRAY_LEN(cols), cols);
    if (o->st != QR_OK) return;
    for (int i = 0; o->st == QR_OK && i < c->n_layers; i++) {
        const QrNode *n = &g->nodes[c->layers[i]];
        int in_q = n->n_in && n->in[0] >= 0 ? qt->by_value[n->in[0]] : -1;
        int out_q = qt->by_float[n->out[0]];
        if (out_q < 0 && qt->by_value[n->out[0]] >= 0 && qt->q[qt->by_value[n->out[0]]].form == QR_QF_QOP_OUT)
            out_q = qt->by_value[n->out[0]];
        int row;
        char sc[96] = "";
        o->st = qr_table_add_row(&t, &row);
        if (o->st != QR_OK) break;
        qr_table_set(&t, row, 0, n->name);
        qr_table_set(&t, row, 1, n->op_type);
        qr_table_set(&t, row, 2, in_q >= 0 ? qr_dtype_name(qt->q[in_q].dtype)
                                 : n->n_in && n->in[0] >= 0 ? qr_dtype_name(g->values[n->in[0]].t.dtype) : "");
        if (out_q >= 0) {
            qr__chk_scale(sc, sizeof sc, &qt->q[out_q]);
            qr_table_set(&t, row, 3, qr_dtype_name(qt->q[out_q].dtype));
            qr_table_setf(&t, row, 4, "%d", qt->q[out_q].axis);
            o->st = qr_table_set(&t, row, 5, sc);
        } else {
            qr_table_setf(&t, row, 3, "%s (not quantized)", qr_dtype_name(g->values[n->out[0]].t.dtype));
        }
    }
    if (o->st == QR_OK) o->st = qr_table_render_txt(&t, NULL, NULL, &o->b, &o->len, &o->cap);
    qr_table_free(&t);
}

/* One row of section 4 for weight-only node n (weight input wi): codes' type, block size, scales. */
static void qr__chk_wonly_row(const QrGraph *g, const QrNode *n, int wi, QrTable *t, int row) {
    const QrAttr *bits = qr_node_attr(n, "bits"), *bs = qr_node_attr(n, "block_size");
    const QrAttr *qa = qr_node_attr(n, "quantize_axis"), *qtype = qr_node_attr(n, "quant_type");
    int nb = bits ? (int)bits->i : 4;
    const QrValue *w = &g->values[n->in[wi]];
    bool gbq = !strcmp(n->op_type, "GatherBlockQuantized");
    int si = 2;   /* scales (absmax for MatMulBnb4) */
    char sc[96] = "-";
    const char *dt;
    if (!strcmp(n->op_type, "MatMulBnb4")) dt = qtype && qtype->i == 1 ? "NF4" : "FP4";
    else if (gbq && w->t.dtype != QR_DT_U8) dt = qr_dtype_name(w->t.dtype);
    else dt = nb == 8 ? "uint8" : nb == 2 ? "uint2" : "uint4";
    if (si < n->n_in && n->in[si] >= 0 && g->values[n->in[si]].t.data && g->values[n->in[si]].t.numel > 0) {
        const QrTensor *s = &g->values[n->in[si]].t;
        double lo = fabs(qr_tensor_get_f64(s, 0)), hi = lo;
        for (int64_t e = 1; e < s->numel; e++) { double v = fabs(qr_tensor_get_f64(s, e)); lo = QR_MIN(lo, v); hi = QR_MAX(hi, v); }
        snprintf(sc, sizeof sc, "[%.6g, %.6g] (%lld)", lo, hi, (long long)s->numel);
    }
    qr_table_set(t, row, 0, w->name);
    qr_table_set(t, row, 1, n->name);
    qr_table_setf(t, row, 2, "%s (weight-only)", n->op_type);
    qr_table_set(t, row, 3, dt);
    if (qa || gbq) qr_table_setf(t, row, 4, "%lld", (long long)(qa ? qa->i : 1));   /* ORT's default quantize_axis */
    else qr_table_set(t, row, 4, "-");
    qr_table_setf(t, row, 5, "blocked (%lld)", (long long)(bs ? bs->i : gbq ? 128 : 0));
    qr_table_set(t, row, 6, sc);
}

static void qr__chk_fmt_weights(const QrCheck *c, QrChkText *o) {
    const QrGraph *g = c->g;
    QR__CHK_P(o, "\n4. Weight quantization\n");
    static const char *const cols[] = { "weight", "node", "op type", "dtype", "axis", "granularity", "scale" };
    QrTable t;
    if (o->st == QR_OK) o->st = qr_table_init(&t, QR_ARRAY_LEN(cols), cols);
    if (o->st != QR_OK) return;
    for (int i = 0; o->st == QR_OK && i < c->n_weights; i++) {
        const QrQuantizer *q = &c->qt->q[c->weights[i]];
        int row;
        char sc[96];
        o->st = qr_table_add_row(&t, &row);
        if (o->st != QR_OK) break;
        qr__chk_scale(sc, sizeof sc, q);
        qr_table_set(&t, row, 0, g->values[q->float_value >= 0 ? q->float_value : q->int_value].name);
        qr_table_set(&t, row, 1, q->owner >= 0 ? g->nodes[q->owner].name : "-");
        qr_table_set(&t, row, 2, q->owner >= 0 ? g->nodes[q->owner].op_type : "-");
        qr_table_set(&t, row, 3, qr_dtype_name(q->dtype));
        qr_table_setf(&t, row, 4, "%d", q->axis);
        qr_table_set(&t, row, 5, q->block_size ? "blocked" : q->n_scales > 1 ? "per-channel" : "per-tensor");
        o->st = qr_table_set(&t, row, 6, sc);
    }
    for (int i = 0; o->st == QR_OK && i < c->n_wonly; i++) {
        const QrNode *n = &g->nodes[c->wonly[i]];
        int wi = qr__chk_wonly_weight(g, n), row;
        o->st = qr_table_add_row(&t, &row);
        if (o->st != QR_OK) break;
        qr__chk_wonly_row(g, n, wi, &t, row);
    }
    if (o->st == QR_OK) o->st = qr_table_render_txt(&t, NULL, NULL, &o->b, &o->len, &o->cap);
    qr_table_free(&t);
    if (c->n_wonly)
        QR__CHK_P(o, "  (%d weight-only node%s: each is the quantizer of its weight, toggled as one by the analyses; "
                  "int16 does not apply to %s)\n", c->n_wonly, c->n_wonly == 1 ? "" : "s", c->n_wonly == 1 ? "it" : "them");
}

static void qr__chk_fmt_anomalies(const QrCheck *c, QrChkText *o) {
    const QrGraph *g = c->g;
    QR__CHK_P(o, "\n5. Anomalies\n");
    for (int i = 0; i < c->n; i++) {
        const QrCheckFinding *f = &c->f[i];
        const char *name = f->value >= 0 ? g->values[f->value].name : "";
        switch (f->kind) {
        case QR_CHK_OUTPUT_LOW_PRECISION:
            QR__CHK_P(o, "  model output '%s' is not high precision: it is quantized to %s before the output; keep the last "
                      "layer in float or int16 (high-precision output)\n", name, qr_dtype_name(f->dtype));
            break;
        case QR_CHK_CLIPPED:
            QR__CHK_P(o, "  quantizer on '%s' (%s): its %s grid holds [%.6g, %.6g] but the value spans [%.6g, %.6g] on this "
                      "input (clipped); recalibrate or use int16\n", name, qr_dtype_name(f->dtype),
                      f->node >= 0 ? g->nodes[f->node].name : "", f->x[0], f->x[1], f->x[2], f->x[3]);
            break;
        case QR_CHK_SCALE_GAP:
            QR__CHK_P(o, "  %s '%s': input scales differ by %.1fx (%.6g .. %.6g); the coarser input dominates the error — "
                      "align the input scales or quantize this op in int16\n", g->nodes[f->node].op_type,
                      g->nodes[f->node].name, f->x[1] / f->x[0], f->x[0], f->x[1]);
            break;
        case QR_CHK_INPUT_NOT_NORMALIZED:
            QR__CHK_P(o, "  input '%s' is not normalized (min %.6g, max %.6g, mean %.6g, std %.6g): normalize it (e.g. to "
                      "[-1, 1] or zero mean, unit variance) before quantization\n", name, f->x[0], f->x[1], f->x[2], f->x[3]);
            break;
        default:
            break;
        }
    }
    if (!c->have_stats) QR__CHK_P(o, "  (range checks skipped: no input given)\n");
    if (!c->sum.n_anomalies) QR__CHK_P(o, "  none\n");
}

static QrStatus qr_check_format(const QrCheck *c, char **txt, size_t *len) {
    QrChkText o = { 0 };
    const QrCheckSummary *s = &c->sum;
    if (c->n_wonly)
        QR__CHK_P(&o, "Model check of %s\n%d nodes, %d quantizers (%d of them weight-only nodes)\n\n", c->g->path,
                  c->g->n_nodes, c->qt->n + c->n_wonly, c->n_wonly);
    else QR__CHK_P(&o, "Model check of %s\n%d nodes, %d quantizers\n\n", c->g->path, c->g->n_nodes, c->qt->n);
    qr__chk_fmt_unfused(c, &o);
    qr__chk_fmt_shared(c, &o);
    qr__chk_fmt_layers(c, &o);
    qr__chk_fmt_weights(c, &o);
    qr__chk_fmt_anomalies(c, &o);
    QR__CHK_P(&o, "\nSummary: %d unfused pattern%s, %d shared weight%s/quantizer%s, %d weight quantizer%s, %d anomal%s\n",
              s->n_unfused, s->n_unfused == 1 ? "" : "s", s->n_shared, s->n_shared == 1 ? "" : "s",
              s->n_shared == 1 ? "" : "s", c->n_weights + c->n_wonly, c->n_weights + c->n_wonly == 1 ? "" : "s", s->n_anomalies,
              s->n_anomalies == 1 ? "y" : "ies");
    if (o.st != QR_OK) { free(o.b); return o.st; }
    *txt = o.b;
    *len = o.len;
    return QR_OK;
}

static QrStatus qr_check_write(const QrGraph *g, const QrQuantTable *qt, const QrStats *stats, const char *path,
                               QrCheck *c) {
    char *txt = NULL;
    size_t len = 0;
    QrStatus st = qr_check_run(g, qt, stats, c);
    if (st == QR_OK) st = qr_check_format(c, &txt, &len);
    if (st == QR_OK) st = qr_file_write_atomic(path, txt, len);
    free(txt);
    return st;
}
