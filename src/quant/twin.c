/* quant/twin — implementation. See twin.h.
 *
 *   source node                                 twin
 *   QLinearConv(x,xs,xz,w,ws,wz,ys,yz,B)   ->  Q(Conv(DQ(x), DQ(w), DQ(B, xs*ws)), ys, yz)
 *   QLinearMatMul / QGemm / QLinearAdd/Mul/Concat/GlobalAveragePool/AveragePool/
 *   Sigmoid/LeakyRelu                      ->  the same shape: DQ inputs, float op, Q
 *   ConvInteger(xq,wq,xz,wz)→Cast→Mul(·, xs*ws)
 *                                          ->  Conv(DQ(xq,xs,xz), DQ(wq,ws,wz)) writing the Mul's output
 *   MaxPool/Reshape/... on an integer value ->  Q(op(DQ(x)), same scale)
 *   MatMulNBits / MatMulBnb4 / GatherBlockQuantized
 *                                          ->  MatMul / Gather of the weight it dequantizes (quant/twin_wq.c)
 * Every integer value of the source is still produced in the twin (by a
 * QuantizeLinear), so value indices, names and taps keep their meaning. */


/* Ops that move or select elements without arithmetic: on an integer input
 * they keep its quantization (Pad is not one: its pad value ignores the zero point). */
static bool qr__tw_moves_only(const QrNode *n) {
    static const char *const ops[] = { "MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Identity",
                                       "Slice", "Gather", "Split", "DepthToSpace", "SpaceToDepth", "Tile", "Expand" };
    if (n->domain[0]) return false;
    for (int i = 0; i < QR_ARRAY_LEN(ops); i++) if (!strcmp(n->op_type, ops[i])) return true;
    return false;
}

static bool qr__tw_is_int(const QrGraph *g, int v) {
    QrDType d = g->values[v].t.dtype;
    return d == QR_DT_S8 || d == QR_DT_U8 || d == QR_DT_S16 || d == QR_DT_U16 || d == QR_DT_S4 || d == QR_DT_U4;
}

/* Quantization parameters (scale, zero point, axis) of integer value v of the
 * source, from its producer; false when unknown. */
static bool qr__tw_qparams(const QrGraph *s, int v, int *scale, int *zp, int *axis) {
    for (int depth = 0; depth < 64 && v >= 0; depth++) {
        int p = s->values[v].producer;
        if (p < 0) return false;
        const QrNode *n = &s->nodes[p];
        *axis = -1;
        if (qr_twk_is(n, "QuantizeLinear")) {
            *scale = n->in[1];
            *zp = n->n_in > 2 ? n->in[2] : -1;
            if (s->values[*scale].t.numel > 1) *axis = (int)qr_attr_int(n, "axis", 1);
            return true;
        }
        if (qr_twk_is(n, "DynamicQuantizeLinear")) {
            *scale = n->n_out > 1 ? n->out[1] : -1;
            *zp = n->n_out > 2 ? n->out[2] : -1;
            return *scale >= 0;
        }
        const QrQopInfo *qi = qr_qtable_qop(n);
        if (qi) {
            *scale = qi->y_scale < n->n_in ? n->in[qi->y_scale] : -1;
            *zp = qi->y_zp < n->n_in ? n->in[qi->y_zp] : -1;
            return *scale >= 0;
        }
        if (!qr__tw_moves_only(n) || n->n_in < 1) return false;
        v = n->in[0];
    }
    return false;
}

/* DequantizeLinear of source integer value v (shared by every reader that uses
 * the same scale). */
static QrStatus qr__tw_dq(QrTwCtx *cx, int v, int scale, int zp, int axis, int *out) {
    if (cx->dq_cache[v] >= 0 && cx->dq_scale[v] == scale) { *out = cx->dq_cache[v]; return QR_OK; }
    const QrGraph *s = cx->s;
    QR_TRY(qr_twk_value(cx, s->values[v].name, "::dq", out));
    int in[3] = { v, scale, zp };
    QrAttr ax = { .name = "axis", .type = QR_ATTR_INT, .i = axis };
    char name[512];
    snprintf(name, sizeof name, "%s::dq", s->values[v].name);
    QR_TRY(qr_twk_add(cx, name, "DequantizeLinear", "", zp >= 0 ? 3 : 2, in, 1, out, axis >= 0, &ax));
    if (cx->dq_cache[v] < 0) { cx->dq_cache[v] = *out; cx->dq_scale[v] = scale; }
    return QR_OK;
}

static QrStatus qr__tw_q(QrTwCtx *cx, const char *node, int fv, int scale, int zp, int out) {
    int in[3] = { fv, scale, zp };
    char name[512];
    if (snprintf(name, sizeof name, "%s::q", node) >= (int)sizeof name)
        return qr_errf(QR_ERR_UNSUPPORTED, "node '%.64s...': name longer than %d bytes", node, (int)sizeof name - 4);
    return qr_twk_add(cx, name, "QuantizeLinear", "", zp >= 0 ? 3 : 2, in, 1, &out, 0, NULL);
}

/* Constant float scale tensor a*b (scalar a, per-channel or scalar b). */
static QrStatus qr__tw_scale_product(QrTwCtx *cx, int a, int b, const char *base, int *out) {
    const QrTensor *ta = &cx->s->values[a].t, *tb = &cx->s->values[b].t;
    if (!ta->data || !tb->data || ta->numel != 1) return QR_ERR_UNSUPPORTED;
    QrTensor t = {0};
    int64_t n = tb->numel;
    QR_TRY(qr_tensor_set_shape(&t, QR_DT_F32, n > 1 ? 1 : 0, &n));
    QR_TRY(qr_tensor_alloc_data(&t));
    float *p = t.data;
    for (int64_t i = 0; i < n; i++) p[i] = (float)(qr_tensor_get_f64(ta, 0) * qr_tensor_get_f64(tb, i));
    return qr_twk_const(cx, base, &t, out);
}

/* Attributes of n except the named ones (arena copy in the twin). */
static int qr__tw_attrs(const QrNode *n, const char *const *drop, int n_drop, QrAttr *out, int cap) {
    int k = 0;
    for (int i = 0; i < n->n_attr && k < cap; i++) {
        bool skip = false;
        for (int d = 0; d < n_drop; d++) if (!strcmp(n->attr[i].name, drop[d])) skip = true;
        if (!skip) out[k++] = n->attr[i];
    }
    return k;
}

typedef struct QrTwQop {
    const char *op, *float_op;
    int n_pairs;             /* (x, scale, zp) input triples starting at 0; -1: QLinearConcat layout */
    int bias;                /* int32 bias input (dequantized with x_scale*w_scale), -1 if none */
} QrTwQop;

static const QrTwQop qr__tw_qops[] = {
    { "QLinearConv", "Conv", 2, 8 },
    { "QLinearMatMul", "MatMul", 2, -1 },
    { "QGemm", "Gemm", 2, 6 },
    { "QLinearAdd", "Add", 2, -1 },
    { "QLinearMul", "Mul", 2, -1 },
    { "QLinearConcat", "Concat", -1, -1 },
    { "QLinearGlobalAveragePool", "GlobalAveragePool", 1, -1 },
    { "QLinearAveragePool", "AveragePool", 1, -1 },
    { "QLinearSigmoid", "Sigmoid", 1, -1 },
    { "QLinearLeakyRelu", "LeakyRelu", 1, -1 },
};

/* Rewrites one QOperator node; QR_ERR_UNSUPPORTED (no message) = keep it. */
static QrStatus qr__tw_qop(QrTwCtx *cx, const QrNode *n, const QrQopInfo *qi) {
    const QrTwQop *tq = NULL;
    for (int i = 0; i < QR_ARRAY_LEN(qr__tw_qops); i++) if (qr_twk_is(n, qr__tw_qops[i].op)) tq = &qr__tw_qops[i];
    if (!tq || n->out[0] < 0) return QR_ERR_UNSUPPORTED;
    if (qr_attr_int(n, "channels_last", 0)) return QR_ERR_UNSUPPORTED;
    int fin[64], nf = 0;
    if (tq->n_pairs < 0) {                     /* QLinearConcat: y_scale, y_zp, then (x, s, z)... */
        if ((n->n_in - 2) % 3 || n->n_in - 2 > 3 * 64) return QR_ERR_UNSUPPORTED;
        for (int k = 2; k + 2 < n->n_in; k += 3) QR_TRY(qr__tw_dq(cx, n->in[k], n->in[k + 1], n->in[k + 2], -1, &fin[nf++]));
    } else {
        for (int p = 0; p < tq->n_pairs; p++) {
            int x = n->in[3 * p], sc = n->in[3 * p + 1], zp = n->in[3 * p + 2];
            if (x < 0 || sc < 0) return QR_ERR_UNSUPPORTED;
            int axis = -1;
            if (cx->s->values[sc].t.numel > 1) {
                if (p == 1 && qr_twk_is(n, "QLinearConv")) axis = 0;
                else if (p == 1 && qr_twk_is(n, "QGemm")) axis = qr_attr_int(n, "transB", 0) ? 0 : 1;
                else if (p == 1 && qr_twk_is(n, "QLinearMatMul")) axis = cx->s->values[x].t.rank - 1;
                else return QR_ERR_UNSUPPORTED;
            }
            QR_TRY(qr__tw_dq(cx, x, sc, zp, axis, &fin[nf++]));
        }
        if (tq->bias >= 0 && tq->bias < n->n_in && n->in[tq->bias] >= 0) {
            int b = n->in[tq->bias];
            if (cx->s->values[b].t.dtype == QR_DT_S32) {
                int prod, bdq;
                QrStatus st = qr__tw_scale_product(cx, n->in[1], n->in[4], cx->s->values[b].name, &prod);
                if (st != QR_OK) return st;
                QR_TRY(qr_twk_value(cx, cx->s->values[b].name, "::dq", &bdq));
                int in[2] = { b, prod };
                QrAttr ax = { .name = "axis", .type = QR_ATTR_INT, .i = 0 };
                char name[512];
                snprintf(name, sizeof name, "%s::dq", cx->s->values[b].name);
                QR_TRY(qr_twk_add(cx, name, "DequantizeLinear", "", 2, in, 1, &bdq, 1, &ax));
                fin[nf++] = bdq;
            } else {
                fin[nf++] = b;
            }
        }
    }
    static const char *const drop[] = { "channels_last" };
    QrAttr attrs[32];
    int na = qr__tw_attrs(n, drop, 1, attrs, 32);
    bool has_q = qi->y_scale < n->n_in && n->in[qi->y_scale] >= 0;
    int fout = n->out[0];
    if (has_q) QR_TRY(qr_twk_value(cx, cx->s->values[n->out[0]].name, "::float", &fout));
    QR_TRY(qr_twk_add(cx, n->name, tq->float_op, "", nf, fin, 1, &fout, na, attrs));
    if (has_q) QR_TRY(qr__tw_q(cx, n->name, fout, n->in[qi->y_scale], qi->y_zp < n->n_in ? n->in[qi->y_zp] : -1, n->out[0]));
    return QR_OK;
}

/* ConvInteger / MatMulInteger → Cast(float) → Mul(·, x_scale*w_scale). */
static QrStatus qr__tw_intop(QrTwCtx *cx, const QrNode *n) {
    const QrGraph *s = cx->s;
    if (n->n_in < 2 || n->out[0] < 0) return QR_ERR_UNSUPPORTED;
    int cast = qr_graph_single_reader(s, n->out[0]);
    if (cast < 0 || !qr_twk_is(&s->nodes[cast], "Cast") || qr_attr_int(&s->nodes[cast], "to", 0) != QR_DT_F32)
        return QR_ERR_UNSUPPORTED;
    int mul = qr_graph_single_reader(s, s->nodes[cast].out[0]);
    if (mul < 0 || !qr_twk_is(&s->nodes[mul], "Mul") || s->nodes[mul].n_in != 2) return QR_ERR_UNSUPPORTED;
    const QrNode *m = &s->nodes[mul];
    int sp = m->in[0] == s->nodes[cast].out[0] ? m->in[1] : m->in[0];
    int xs, xz, xaxis, ws = -1;
    if (!qr__tw_qparams(s, n->in[0], &xs, &xz, &xaxis) || xaxis >= 0) return QR_ERR_UNSUPPORTED;
    int spp = s->values[sp].producer;
    if (spp >= 0 && qr_twk_is(&s->nodes[spp], "Mul")) {
        const QrNode *pm = &s->nodes[spp];
        if (pm->in[0] == xs && s->values[pm->in[1]].is_const) ws = pm->in[1];
        else if (pm->in[1] == xs && s->values[pm->in[0]].is_const) ws = pm->in[0];
    }
    if (ws < 0) return QR_ERR_UNSUPPORTED;
    int wz = n->n_in > 3 ? n->in[3] : -1;
    if (wz >= 0 && s->values[wz].t.numel != 1 && s->values[wz].t.numel != s->values[ws].t.numel) return QR_ERR_UNSUPPORTED;
    bool conv = qr_twk_is(n, "ConvInteger");
    int waxis = -1;
    if (s->values[ws].t.numel > 1) waxis = conv ? 0 : s->values[n->in[1]].t.rank - 1;
    int fin[2];
    QR_TRY(qr__tw_dq(cx, n->in[0], xs, xz, -1, &fin[0]));
    QR_TRY(qr__tw_dq(cx, n->in[1], ws, wz, waxis, &fin[1]));
    QrAttr attrs[32];
    int na = qr__tw_attrs(n, NULL, 0, attrs, 32);
    QR_TRY(qr_twk_add(cx, n->name, conv ? "Conv" : "MatMul", "", 2, fin, 1, &m->out[0], na, attrs));
    cx->consumed[cast] = cx->consumed[mul] = true;
    return QR_OK;
}

/* An op that only moves/selects values, applied to an integer value: it runs on
 * the dequantized value and its result is quantized back with the same scale. */
static QrStatus qr__tw_passthrough(QrTwCtx *cx, const QrNode *n) {
    const QrGraph *s = cx->s;
    int sc, zp, axis;
    if (n->n_in < 1 || n->in[0] < 0 || !qr__tw_is_int(s, n->in[0]) || !qr__tw_qparams(s, n->in[0], &sc, &zp, &axis) ||
        axis >= 0 || n->n_out > 16)
        return QR_ERR_UNSUPPORTED;
    int in[64], out[16];
    if (n->n_in > 64) return QR_ERR_UNSUPPORTED;
    memcpy(in, n->in, (size_t)n->n_in * sizeof(int));
    QR_TRY(qr__tw_dq(cx, n->in[0], sc, zp, -1, &in[0]));
    for (int k = 0; k < n->n_out; k++) {
        out[k] = n->out[k];
        if (out[k] >= 0) QR_TRY(qr_twk_value(cx, s->values[n->out[k]].name, "::float", &out[k]));
    }
    QR_TRY(qr_twk_add(cx, n->name, n->op_type, n->domain, n->n_in, in, n->n_out, out, n->n_attr, n->attr));
    for (int k = 0; k < n->n_out; k++) {
        if (out[k] < 0) continue;
        char name[512];
        snprintf(name, sizeof name, "%s#%d", n->name, k);
        QR_TRY(qr__tw_q(cx, name, out[k], sc, zp, n->out[k]));
    }
    return QR_OK;
}

static void qr__tw_keep_note(QrTwCtx *cx, const QrNode *n, const char *why) {
    if (cx->tw->n_kept++ == 0)
        snprintf(cx->tw->note, sizeof cx->tw->note, "node '%s' (%s) has no float twin: %s", n->name, n->op_type, why);
}

static QrStatus qr_twin_build(const QrGraph *s, const QrTensor *inputs, QrTwin *tw) {
    memset(tw, 0, sizeof *tw);
    QrTwCtx cx = { .s = s, .tw = tw };
    cx.dq_cache = malloc(((size_t)s->n_values + 1) * sizeof(int));
    cx.dq_scale = malloc(((size_t)s->n_values + 1) * sizeof(int));
    cx.consumed = calloc((size_t)s->n_nodes + 1, sizeof(bool));
    QrStatus st = cx.dq_cache && cx.dq_scale && cx.consumed ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_graph_clone_values(s, &tw->g, s->n_nodes * 3 + 16);
    for (int v = 0; st == QR_OK && v < s->n_values; v++) cx.dq_cache[v] = cx.dq_scale[v] = -1;
    /* Pattern heads first (in topological order), so absorbed nodes are known. */
    for (int oi = 0; st == QR_OK && oi < s->n_nodes; oi++) {
        int ni = s->order[oi];
        const QrNode *n = &s->nodes[ni];
        if (cx.consumed[ni]) continue;
        cx.origin = ni;
        const QrQopInfo *qi = qr_qtable_qop(n);
        QrStatus r = QR_ERR_UNSUPPORTED;
        if (qi) r = qr__tw_qop(&cx, n, qi);
        else if (qr_twk_is(n, "ConvInteger") || qr_twk_is(n, "MatMulInteger")) r = qr__tw_intop(&cx, n);
        else if (qr__tw_moves_only(n)) r = qr__tw_passthrough(&cx, n);
        const char *wo_why = NULL;
        if (r == QR_ERR_UNSUPPORTED && !qi) r = qr_twq_rewrite(&cx, n, &wo_why);
        if (r == QR_OK) { tw->n_rewritten++; continue; }
        if (r != QR_ERR_UNSUPPORTED) { st = r; break; }
        if (wo_why) qr__tw_keep_note(&cx, n, wo_why);
        if (qi || qr_twk_is(n, "ConvInteger") || qr_twk_is(n, "MatMulInteger"))
            qr__tw_keep_note(&cx, n, qi ? "unsupported attributes or non-constant scales"
                                        : "not followed by Cast(float) and a Mul by input_scale*weight_scale");
        st = qr_twk_add(&cx, n->name, n->op_type, n->domain, n->n_in, n->in, n->n_out, n->out, n->n_attr, n->attr);
    }
    if (st == QR_OK) st = qr_graph_finalize(&tw->g);
    if (st == QR_OK) st = qr_run_infer(&tw->g, inputs);
    if (st != QR_OK) {
        st = qr_err_wrap(st, "building the float twin of %s", s->path ? s->path : "the analysis model");
        qr_twin_free(tw);
    }
    free(cx.dq_cache);
    free(cx.dq_scale);
    free(cx.consumed);
    return st;
}

static void qr_twin_free(QrTwin *tw) {
    qr_graph_free(&tw->g);
    free(tw->origin);
    memset(tw, 0, sizeof *tw);
}
