/* quant/qtable — implementation. See qtable.h. */

static const char *qr_qtable_form_name(QrQuantForm f) {
    static const char *const names[] = { "qdq", "dq_init", "q_only", "qop_out", "qop_weight", "dynamic" };
    return (unsigned)f < QR_ARRAY_LEN(names) ? names[f] : "?";
}

static bool qr__qt_is_op(const QrNode *n, const char *op) { return strcmp(n->op_type, op) == 0; }

/* Constant-ness: initializers and values folded during shape inference. */
static bool qr__qt_const(const QrGraph *g, int v) {
    return v >= 0 && g->values[v].t.data != NULL && (g->values[v].is_init || g->values[v].is_const);
}

static void qr__qt_scale_stats(const QrGraph *g, QrQuantizer *q) {
    q->scale_min = q->scale_max = NAN;
    q->n_scales = 0;
    if (!qr__qt_const(g, q->scale_value)) return;
    const QrTensor *s = &g->values[q->scale_value].t;
    q->n_scales = s->numel;
    for (int64_t i = 0; i < s->numel; i++) {
        double v = qr_tensor_get_f64(s, i);
        if (i == 0 || v < q->scale_min) q->scale_min = v;
        if (i == 0 || v > q->scale_max) q->scale_max = v;
    }
}

/* Integer dtype of a quantizer from its zero point, the output_dtype attribute or the default (uint8). */
static QrDType qr__qt_dtype(const QrGraph *g, const QrNode *n, int zp_value) {
    if (zp_value >= 0 && g->values[zp_value].t.dtype) return g->values[zp_value].t.dtype;
    int64_t od = qr_attr_int(n, "output_dtype", 0);
    return od ? (QrDType)od : QR_DT_U8;
}

/* First reader (in topological order) of value v; -1 if none. */
static int qr__qt_consumer(const QrGraph *g, int v, int *input_index) {
    const QrUse *u;
    if (!qr_graph_readers(g, v, &u)) return -1;
    if (input_index) *input_index = u[0].input;
    return u[0].node;
}

/* Skips value-preserving nodes (Identity, Cast, Reshape of a weight...) backwards. */
static int qr__qt_producer_through(const QrGraph *g, int v) {
    for (int hops = 0; hops < 8 && v >= 0; hops++) {
        int p = g->values[v].producer;
        if (p < 0) return -1;
        const QrNode *n = &g->nodes[p];
        if (qr__qt_is_op(n, "Identity") || qr__qt_is_op(n, "Dropout")) { v = n->in[0]; continue; }
        return p;
    }
    return -1;
}

static QrStatus qr__qt_push(QrQuantTable *t, int *cap, QrQuantizer **out) {
    if (t->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        QrQuantizer *nq = qr_arena_array(&t->arena, (size_t)*cap, sizeof *nq);
        if (!nq) return qr_errf(QR_ERR_NOMEM, "out of memory");
        if (t->n) memcpy(nq, t->q, (size_t)t->n * sizeof *nq);
        t->q = nq;
    }
    QrQuantizer *q = &t->q[t->n];
    memset(q, 0, sizeof *q);
    q->id = t->n++;
    q->axis = -1;
    q->scale_value = q->zp_value = q->q_node = q->float_value = q->int_value = q->out_value = -1;
    q->owner = q->owner_input = -1;
    q->map_value = q->sel_value = q->sel_float = -1;
    q->implied_lo = q->implied_hi = NAN;
    *out = q;
    return QR_OK;
}

/* QOperator nodes: which inputs are (x, scale, zp) triples, and where the output scale/zp are. */
typedef struct { const char *domain, *op; int w_index; int y_scale, y_zp; } QrQopInfo;
static const QrQopInfo qr__qt_qops[] = {
    { "", "QLinearConv", 3, 6, 7 },
    { "", "QLinearMatMul", 3, 6, 7 },
    { "com.microsoft", "QLinearAdd", -1, 6, 7 },
    { "com.microsoft", "QLinearMul", -1, 6, 7 },
    { "com.microsoft", "QLinearConcat", -1, 0, 1 },
    { "com.microsoft", "QLinearGlobalAveragePool", -1, 3, 4 },
    { "com.microsoft", "QLinearAveragePool", -1, 3, 4 },
    { "com.microsoft", "QLinearSigmoid", -1, 3, 4 },
    { "com.microsoft", "QLinearLeakyRelu", -1, 3, 4 },
    { "com.microsoft", "QGemm", 3, 7, 8 },
};

static const QrQopInfo *qr_qtable_qop(const QrNode *n) {
    for (int i = 0; i < QR_ARRAY_LEN(qr__qt_qops); i++)
        if (!strcmp(n->op_type, qr__qt_qops[i].op) && !strcmp(n->domain, qr__qt_qops[i].domain)) return &qr__qt_qops[i];
    return NULL;
}

/* A QuantizeLinear (node ni): its quantizer, with the DequantizeLinear nodes reading it. */
static QrStatus qr__qt_add_q(const QrGraph *g, QrQuantTable *t, int *cap, int ni, const QrNode *n) {
    QrQuantizer *q;
    QR_TRY(qr__qt_push(t, cap, &q));
    q->q_node = ni;
    q->float_value = n->in[0];
    q->int_value = n->out[0];
    q->scale_value = n->in[1];
    q->zp_value = n->n_in > 2 ? n->in[2] : -1;
    q->dtype = qr__qt_dtype(g, n, q->zp_value);
    q->axis = g->values[q->scale_value].t.numel > 1 ? (int)qr_attr_int(n, "axis", 1) : -1;
    q->block_size = (int)qr_attr_int(n, "block_size", 0);
    bool weight = qr__qt_const(g, n->in[0]) || g->values[n->in[0]].is_init;
    q->kind = weight ? QR_QK_WEIGHT : QR_QK_ACTIVATION;
    const QrUse *u;
    int nu = qr_graph_readers(g, q->int_value, &u);
    for (int r = 0; r < nu; r++) {
        const QrNode *d = &g->nodes[u[r].node];
        if (qr__qt_is_op(d, "DequantizeLinear") && u[r].input == 0 && q->n_dq < QR_QUANT_MAX_DQ && d->out[0] >= 0)
            q->dq_nodes[q->n_dq++] = u[r].node;
    }
    q->form = q->n_dq ? QR_QF_QDQ : QR_QF_Q_ONLY;
    q->out_value = q->n_dq ? g->nodes[q->dq_nodes[0]].out[0] : -1;
    if (weight) {
        int k = 0;
        q->owner = q->out_value >= 0 ? qr__qt_consumer(g, q->out_value, &k) : qr__qt_consumer(g, q->int_value, &k);
        q->owner_input = k;
    } else {
        q->owner = qr__qt_producer_through(g, q->float_value);
    }
    q->can_disable = q->form == QR_QF_QDQ;
    if (!q->can_disable) q->why_not = "feeds integer/QOperator nodes directly (no DequantizeLinear)";
    return QR_OK;
}

/* A DequantizeLinear of a quantized initializer (a weight or bias stored as integers). */
static QrStatus qr__qt_add_dq_init(const QrGraph *g, QrQuantTable *t, int *cap, int ni, const QrNode *n) {
    QrQuantizer *q;
    QR_TRY(qr__qt_push(t, cap, &q));
    q->form = QR_QF_DQ_INIT;
    q->int_value = n->in[0];
    q->out_value = n->out[0];
    q->dq_nodes[q->n_dq++] = ni;
    q->scale_value = n->in[1];
    q->zp_value = n->n_in > 2 ? n->in[2] : -1;
    q->dtype = g->values[n->in[0]].t.dtype;
    q->axis = g->values[q->scale_value].t.numel > 1 ? (int)qr_attr_int(n, "axis", 1) : -1;
    q->block_size = (int)qr_attr_int(n, "block_size", 0);
    q->kind = q->dtype == QR_DT_S32 ? QR_QK_BIAS : QR_QK_WEIGHT;
    int k = 0;
    q->owner = qr__qt_consumer(g, q->out_value, &k);
    q->owner_input = k;
    q->can_disable = true;   /* with the matched float weight; otherwise a no-op (see overrides) */
    return QR_OK;
}

static void qr_qtable_codes_shape(const QrGraph *g, const QrQuantizer *q, QrTensor *shape) {
    *shape = g->values[q->int_value].t;
    shape->data = NULL;
    shape->owned = false;
    if (!q->nbits_k || shape->rank != 3) return;
    shape->dtype = q->dtype;
    shape->rank = 2;
    shape->dims[1] = shape->dims[0];
    shape->dims[0] = q->nbits_k;
    shape->dims[2] = 0;
    shape->numel = shape->dims[0] * shape->dims[1];
}

/* qreport's BlockDequant: the weight of a weight-only node (quant/twin_wq.c), element i on scale map[i]
 * (or, without a map, on the scale of its block along K). */
static QrStatus qr__qt_add_block(const QrGraph *g, QrQuantTable *t, int *cap, int ni, const QrNode *n) {
    QrQuantizer *q;
    QR_TRY(qr__qt_push(t, cap, &q));
    q->form = QR_QF_DQ_INIT;
    q->kind = QR_QK_WEIGHT;
    q->int_value = n->in[0];
    q->out_value = n->out[0];
    q->dq_nodes[q->n_dq++] = ni;
    q->scale_value = n->in[1];
    q->zp_value = n->n_in > 2 ? n->in[2] : -1;
    q->map_value = n->in[3];   /* -1: blocked along axis 0 (K) by block_size, as a blocked DequantizeLinear */
    q->block_op = true;
    q->nbits_k = qr_attr_int(n, "k", 0);
    q->dtype = q->nbits_k ? QR_DT_U4 : g->values[n->in[0]].t.dtype;
    q->axis = 0;
    q->block_size = (int)qr_attr_int(n, "block_size", 0);
    int k = 0;
    q->owner = qr__qt_consumer(g, q->out_value, &k);
    q->owner_input = k;
    const char *on = qr_attr_str(n, "select_on", NULL), *off = qr_attr_str(n, "select_off", NULL);
    if (on && off) {
        q->sel_value = qr_graph_find(g, on);
        q->sel_float = qr_graph_find(g, off);
    }
    q->can_disable = !on || (q->sel_value >= 0 && q->sel_float >= 0);
    if (!q->can_disable) q->why_not = "the float product it switches to is missing";
    return QR_OK;
}

/* A DynamicQuantizeLinear: its quantizer, with the DequantizeLinear nodes reading it. */
static QrStatus qr__qt_add_dynamic(const QrGraph *g, QrQuantTable *t, int *cap, int ni, const QrNode *n) {
    QrQuantizer *q;
    QR_TRY(qr__qt_push(t, cap, &q));
    q->form = QR_QF_DYNAMIC;
    q->kind = QR_QK_ACTIVATION;
    q->q_node = ni;
    q->float_value = n->in[0];
    q->int_value = n->out[0];
    q->scale_value = n->n_out > 1 ? n->out[1] : -1;
    q->zp_value = n->n_out > 2 ? n->out[2] : -1;
    q->dtype = QR_DT_U8;
    q->owner = qr__qt_producer_through(g, q->float_value);
    const QrUse *u;
    int nu = qr_graph_readers(g, q->int_value, &u);
    for (int r = 0; r < nu; r++) {
        const QrNode *d = &g->nodes[u[r].node];
        if (qr__qt_is_op(d, "DequantizeLinear") && u[r].input == 0 && q->n_dq < QR_QUANT_MAX_DQ && d->out[0] >= 0)
            q->dq_nodes[q->n_dq++] = u[r].node;
    }
    q->out_value = q->n_dq ? g->nodes[q->dq_nodes[0]].out[0] : -1;
    q->can_disable = q->n_dq == nu && nu > 0;   /* every reader dequantizes (the float twin does) */
    if (!q->can_disable) q->why_not = "dynamic quantization feeds integer ops";
    return QR_OK;
}

/* A QOperator node's output quantizer (qi: its inputs' roles) and, when constant, its weight's. */
static QrStatus qr__qt_add_qop(const QrGraph *g, QrQuantTable *t, int *cap, int ni, const QrNode *n, const QrQopInfo *qi) {
    QrQuantizer *q;
    QR_TRY(qr__qt_push(t, cap, &q));
    q->form = QR_QF_QOP_OUT;
    q->kind = QR_QK_ACTIVATION;
    q->q_node = ni;
    q->int_value = n->out[0];
    q->scale_value = qi->y_scale < n->n_in ? n->in[qi->y_scale] : -1;
    q->zp_value = qi->y_zp < n->n_in ? n->in[qi->y_zp] : -1;
    q->dtype = q->zp_value >= 0 ? g->values[q->zp_value].t.dtype : QR_DT_U8;
    q->owner = ni;
    q->why_not = "QOperator output (running it in float needs the float twin of the node)";
    if (qi->w_index >= 0 && qi->w_index < n->n_in && qr__qt_const(g, n->in[qi->w_index])) {
        QR_TRY(qr__qt_push(t, cap, &q));
        q->form = QR_QF_QOP_WEIGHT;
        q->kind = QR_QK_WEIGHT;
        q->int_value = n->in[qi->w_index];
        q->scale_value = n->in[qi->w_index + 1];
        q->zp_value = qi->w_index + 2 < n->n_in ? n->in[qi->w_index + 2] : -1;
        q->dtype = g->values[q->int_value].t.dtype;
        q->axis = g->values[q->scale_value].t.numel > 1 ? (qr__qt_is_op(n, "QLinearMatMul") ? 1 : 0) : -1;
        q->owner = ni;
        q->owner_input = qi->w_index;
        q->why_not = "QOperator weight";
    }
    return QR_OK;
}

/* The constant weight of a ConvInteger / MatMulInteger (its scale is applied by a later Mul). */
static QrStatus qr__qt_add_intop(const QrGraph *g, QrQuantTable *t, int *cap, int ni, const QrNode *n) {
    QrQuantizer *q;
    QR_TRY(qr__qt_push(t, cap, &q));
    q->form = QR_QF_QOP_WEIGHT;
    q->kind = QR_QK_WEIGHT;
    q->int_value = n->in[1];
    q->zp_value = n->n_in > 3 ? n->in[3] : -1;
    q->dtype = g->values[q->int_value].t.dtype;
    q->owner = ni;
    q->owner_input = 1;
    q->why_not = "integer-op weight (its scale is applied by a later Mul)";
    return QR_OK;
}

static QrStatus qr_qtable_build(const QrGraph *g, QrQuantTable *t) {
    memset(t, 0, sizeof *t);
    int cap = 0;
    t->by_value = qr_arena_array(&t->arena, (size_t)g->n_values + 1, sizeof(int));
    t->by_float = qr_arena_array(&t->arena, (size_t)g->n_values + 1, sizeof(int));
    if (!t->by_value || !t->by_float) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int v = 0; v < g->n_values; v++) t->by_value[v] = t->by_float[v] = -1;
    for (int oi = 0; oi < g->n_nodes; oi++) {
        int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        if (qr__qt_is_op(n, "QuantizeLinear") && n->n_in >= 2 && n->out[0] >= 0) QR_TRY(qr__qt_add_q(g, t, &cap, ni, n));
        else if (qr__qt_is_op(n, "DequantizeLinear") && n->n_in >= 2 && n->out[0] >= 0 &&
                 g->values[n->in[0]].producer < 0 && qr__qt_const(g, n->in[0]))
            QR_TRY(qr__qt_add_dq_init(g, t, &cap, ni, n));
        else if (qr__qt_is_op(n, "BlockDequant") && !strcmp(n->domain, QR_QUANT_INT_DOMAIN) && n->n_in >= 4 && n->out[0] >= 0 &&
                 qr__qt_const(g, n->in[0]) && (n->in[3] < 0 || qr__qt_const(g, n->in[3])))
            QR_TRY(qr__qt_add_block(g, t, &cap, ni, n));
        else if (qr__qt_is_op(n, "DynamicQuantizeLinear") && n->out[0] >= 0) QR_TRY(qr__qt_add_dynamic(g, t, &cap, ni, n));
        const QrQopInfo *qi = qr_qtable_qop(n);
        if (qi && n->out[0] >= 0) QR_TRY(qr__qt_add_qop(g, t, &cap, ni, n, qi));
        if ((qr__qt_is_op(n, "ConvInteger") || qr__qt_is_op(n, "MatMulInteger")) && n->n_in >= 2 && qr__qt_const(g, n->in[1]))
            QR_TRY(qr__qt_add_intop(g, t, &cap, ni, n));
    }
    for (int i = 0; i < t->n; i++) {
        QrQuantizer *q = &t->q[i];
        qr__qt_scale_stats(g, q);
        if (q->out_value >= 0) t->by_value[q->out_value] = i;
        if (q->int_value >= 0 && t->by_value[q->int_value] < 0) t->by_value[q->int_value] = i;
        if (q->float_value >= 0 && q->kind == QR_QK_ACTIVATION && t->by_float[q->float_value] < 0)
            t->by_float[q->float_value] = i;
    }
    return QR_OK;
}

static void qr_qtable_free(QrQuantTable *t) { qr_arena_free(&t->arena); memset(t, 0, sizeof *t); }

static void qr_qtable_overrides(const QrGraph *g, const QrQuantTable *t, const bool *enabled,
                               const QrTensor *const *float_weights, int *alias, const QrTensor **subst,
                               float *clamp_lo, float *clamp_hi) {
    for (int v = 0; v < g->n_values; v++) { alias[v] = -1; subst[v] = NULL; }
    if (clamp_lo) for (int v = 0; v < g->n_values; v++) clamp_lo[v] = clamp_hi[v] = NAN;
    if (!enabled) return;
    for (int i = 0; i < t->n; i++) {
        const QrQuantizer *q = &t->q[i];
        if (enabled[i] || !q->can_disable) continue;
        if (q->form == QR_QF_QDQ || q->form == QR_QF_DYNAMIC) {
            for (int k = 0; k < q->n_dq; k++) {
                int dv = g->nodes[q->dq_nodes[k]].out[0];
                alias[dv] = q->float_value;
                if (clamp_lo) { clamp_lo[dv] = q->implied_lo; clamp_hi[dv] = q->implied_hi; }
            }
        } else if (q->form == QR_QF_DQ_INIT) {
            if (float_weights && float_weights[i]) subst[q->out_value] = float_weights[i];
            if (q->sel_value >= 0) alias[q->sel_value] = q->sel_float;   /* int8 activations off: the float product */
        }
    }
}
