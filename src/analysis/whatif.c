/* analysis/whatif — implementation. See whatif.h.
 *
 * Map: JSON helpers · node ranking from the sensitivity rows · parameter groups and the
 * private-parameter copy of the twin · 16-bit substitutes · runs · mixed_precision.json. */

/* ==== JSON helpers (report/json) ===================================================== */

static void qr__wi_js_metrics(QrJson *j, const char *key, const QrMetrics *m) {
    qr_json_key(j, key);
    qr_json_obj_begin(j);
    qr_json_kv_num(j, "L1", m->l1);
    qr_json_kv_num(j, "Cosine", m->cosine);
    qr_json_kv_num(j, "MSE", m->mse);
    qr_json_kv_num(j, "KL", m->kl);
    qr_json_kv_num(j, "SQNR", m->sqnr);
    qr_json_obj_end(j);
}

/* An array of strings (NULL entries written as null). */
static void qr_whatif_js_strs(QrJson *j, const char *key, const char *const *v, int n) {
    qr_json_key(j, key);
    qr_json_arr_begin(j);
    for (int k = 0; k < n; k++) qr_json_str(j, v[k]);
    qr_json_arr_end(j);
}

/* ==== ranking ======================================================================= */

/* Distinct nodes of sens in the order of their most sensitive row (qr_sens_order), each
 * with the quantizers of all its rows. Returns the count (nodes malloc'd), -1 out of memory. */
static int qr_whatif_rank(const QrSensResult *sens, QrWiNode **out) {
    QrWiNode *v = calloc((size_t)sens->n + 1, sizeof *v);
    int *idx = malloc(((size_t)sens->n + 1) * sizeof(int));
    int n = 0;
    if (!v || !idx) { free(v); free(idx); *out = NULL; return -1; }
    qr_sens_order(sens, idx);
    for (int k = 0; k < sens->n; k++) {
        const QrSensRow *row = &sens->rows[idx[k]];
        int e = -1;
        for (int j = 0; j < n && e < 0; j++)
            if (v[j].node == row->node && (row->node >= 0 || !strcmp(v[j].name, row->name))) e = j;
        if (e < 0) { e = n++; v[e].node = row->node; v[e].name = row->name; }
        for (int a = 0; a < row->n_q; a++) {
            bool dup = false;
            for (int b = 0; b < v[e].n_q; b++) dup |= v[e].q[b] == row->q[a];
            if (!dup && v[e].n_q < QR_WHATIF_NODE_MAXQ) v[e].q[v[e].n_q++] = row->q[a];
        }
    }
    free(idx);
    *out = v;
    return n;
}

/* ==== parameter groups and the private-parameter graph ================================== */

static int qr__wi_root(int *p, int i) {
    while (p[i] != i) { p[i] = p[p[i]]; i = p[i]; }
    return i;
}

static bool qr__wi_16(QrDType dt, QrDType *out, QrQuantRange *r8, QrQuantRange *r16) {
    if (!qr_quant_range(dt, r8)) return false;
    bool sgn = dt == QR_DT_S8 || dt == QR_DT_S4 || dt == QR_DT_S2;
    if (!sgn && dt != QR_DT_U8 && dt != QR_DT_U4 && dt != QR_DT_U2) return false;
    *out = sgn ? QR_DT_S16 : QR_DT_U16;
    qr_quant_range(*out, r16);
    return true;
}

/* Quantizer i is the weight of a com.microsoft weight-only node (MatMulNBits, MatMulBnb4,
 * GatherBlockQuantized; quant/twin_wq.c): no 16-bit form of such a node exists. */
static bool qr__wi_weight_only(const QrSession *s, int i) {
    const QrQuantizer *q = &s->qt.q[i];
    int src = q->kind == QR_QK_WEIGHT && q->owner >= 0 && s->tw.origin ? s->tw.origin[q->owner] : -1;
    if (src < 0) return false;
    const QrNode *n = &s->a->nodes[src];
    return !strcmp(n->domain, "com.microsoft") && (!strcmp(n->op_type, "MatMulNBits") || !strcmp(n->op_type, "MatMulBnb4")
                                                   || !strcmp(n->op_type, "GatherBlockQuantized"));
}

static bool qr__wi_const(const QrGraph *g, int v) { return v >= 0 && g->values[v].t.data != NULL; }

/* A private initializer in pg holding (borrowing) the data of value v of g (an
 * initializer or a value folded during g's shape inference). */
static QrStatus qr__wi_private(const QrGraph *g, QrGraph *pg, int v, int *out) {
    const char *name = qr_graph_fresh_name(pg, g->values[v].name);
    if (!name) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QR_TRY(qr_graph_value(pg, name, out));
    QrValue *d = &pg->values[*out];
    d->t = g->values[v].t;
    d->t.owned = false;
    d->is_init = d->is_const = true;
    return QR_OK;
}

static void qr_whatif_groups_free(QrWiGroups *gr) {
    if (gr->have_pg) qr_graph_free(&gr->pg);
    gr->have_pg = false;
}

static QrStatus qr_whatif_groups(const QrSession *s, QrArena *a, QrWiGroups *gr) {
    const QrGraph *g = &s->tw.g;
    int nq = s->qt.n;
    memset(gr, 0, sizeof *gr);
    gr->parent = qr_arena_array(a, (size_t)nq + 1, sizeof(int));
    gr->why = qr_arena_array(a, (size_t)nq + 1, sizeof(char *));
    gr->pscale = qr_arena_array(a, (size_t)nq + 1, sizeof(int));
    gr->pzp = qr_arena_array(a, (size_t)nq + 1, sizeof(int));
    gr->pint = qr_arena_array(a, (size_t)nq + 1, sizeof(int));
    int *qnode = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
    if (!gr->parent || !gr->why || !gr->pscale || !gr->pzp || !gr->pint || !qnode) {
        free(qnode);
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    for (int n = 0; n < g->n_nodes; n++) qnode[n] = -1;
    for (int i = 0; i < nq; i++) {
        const QrQuantizer *q = &s->qt.q[i];
        gr->parent[i] = i;
        gr->pscale[i] = gr->pzp[i] = gr->pint[i] = -1;
        QrDType d16;
        QrQuantRange r8, r16;
        if (q->kind == QR_QK_BIAS) gr->why[i] = "bias (int32)";
        else if (q->form != QR_QF_QDQ && q->form != QR_QF_DQ_INIT)
            gr->why[i] = qr_arena_printf(a, "%s quantizer", qr_qtable_form_name(q->form));
        else if (qr__wi_weight_only(s, i))
            gr->why[i] = qr_arena_printf(a, "weight of a weight-only %s node (2-8 bit codes: int16 does not apply; its "
                                         "what-if is the float step)", s->a->nodes[s->tw.origin[q->owner]].op_type);
        else if (q->block_op) gr->why[i] = "a weight-only node's weight (block map / table codes)";
        else if (!qr__wi_const(g, q->scale_value) || !qr__wi_const(g, q->zp_value))
            gr->why[i] = "no constant scale and zero point";
        else if (g->values[q->scale_value].t.dtype != QR_DT_F32) gr->why[i] = "scale is not float32";
        else if (!qr__wi_16(q->dtype, &d16, &r8, &r16)) gr->why[i] = qr_arena_printf(a, "already %s", qr_dtype_name(q->dtype));
        else if (q->form == QR_QF_DQ_INIT && !s->fw[i]) gr->why[i] = "integer weight without a float counterpart";
        if (gr->why[i]) continue;
        if (q->q_node >= 0) qnode[q->q_node] = i;
        for (int d = 0; d < q->n_dq; d++) qnode[q->dq_nodes[d]] = i;
        for (int j = 0; j < i; j++)
            if (!gr->why[j] && s->qt.q[j].scale_value == q->scale_value) {
                int r1 = qr__wi_root(gr->parent, i), r2 = qr__wi_root(gr->parent, j);
                if (r1 != r2) gr->parent[r1] = r2;
            }
    }
    /* The copy: same values (plus private ones) and the same nodes in the same order. */
    QrStatus st = qr_graph_clone_values(g, &gr->pg, g->n_nodes + 1);
    gr->have_pg = st == QR_OK;
    for (int i = 0; st == QR_OK && i < nq; i++) {
        if (gr->why[i]) continue;
        const QrQuantizer *q = &s->qt.q[i];
        st = qr__wi_private(g, &gr->pg, q->scale_value, &gr->pscale[i]);
        if (st == QR_OK) st = qr__wi_private(g, &gr->pg, q->zp_value, &gr->pzp[i]);
        if (st == QR_OK && q->form == QR_QF_DQ_INIT) st = qr__wi_private(g, &gr->pg, q->int_value, &gr->pint[i]);
    }
    int *in = malloc(((size_t)g->max_io + 1) * sizeof(int));
    if (st == QR_OK && !in) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int n = 0; st == QR_OK && n < g->n_nodes; n++) {
        const QrNode *nd = &g->nodes[n];
        memcpy(in, nd->in, (size_t)nd->n_in * sizeof(int));
        int i = qnode[n];
        if (i >= 0) {
            if (nd->n_in > 1) in[1] = gr->pscale[i];
            if (nd->n_in > 2) in[2] = gr->pzp[i];
            if (gr->pint[i] >= 0 && nd->n_in > 0 && in[0] == s->qt.q[i].int_value) in[0] = gr->pint[i];
        }
        st = qr_run_add_node(&gr->pg, nd->name, nd->op_type, nd->domain, nd->n_in, in, nd->n_out, nd->out, nd->n_attr,
                               nd->attr, NULL);
    }
    free(in);
    free(qnode);
    if (st == QR_OK) st = qr_graph_finalize(&gr->pg);
    if (st == QR_OK) st = qr_run_infer(&gr->pg, s->inputs);
    if (st != QR_OK) { qr_whatif_groups_free(gr); return qr_err_wrap(st, "what-if: copying the twin"); }
    return QR_OK;
}

/* ==== 16-bit substitutes ============================================================== */

static void qr_whatif_subst_free(QrWiSubst *ts) {
    for (int k = 0; k < ts->n; k++) qr_tensor_free_data(&ts->t[k]);
    free(ts->t);
    memset(ts, 0, sizeof *ts);
}

/* Tensors live in a fixed array (subst[] points into it): cap = 3 per quantizer. */
static QrStatus qr__wi_subst_new(QrWiSubst *ts, QrDType dt, const QrTensor *shape, QrTensor **out) {
    if (ts->n == ts->cap) return qr_errf(QR_ERR_NOMEM, "what-if: substitute table full");
    QrTensor *t = &ts->t[ts->n];
    memset(t, 0, sizeof *t);
    QR_TRY(qr_tensor_set_shape(t, dt, shape->rank, shape->dims));
    QR_TRY(qr_tensor_alloc_data(t));
    ts->n++;
    *out = t;
    return QR_OK;
}

/* Sets subst[] for quantizer i on the 16-bit grid (see whatif.h). Values already
 * substituted (shared parameters) are left as they are. */
static QrStatus qr_whatif_promote(const QrSession *s, const QrWiGroups *gr, int i, QrWiSubst *ts, const QrTensor **subst) {
    const QrGraph *g = &s->tw.g;
    const QrQuantizer *q = &s->qt.q[i];
    QrDType d16;
    QrQuantRange r8, r16;
    qr__wi_16(q->dtype, &d16, &r8, &r16);
    const QrTensor *sc = &g->values[q->scale_value].t, *zp = &g->values[q->zp_value].t;
    double ratio = (double)r8.hi / (double)r16.hi;
    QrTensor *nsc, *nzp;
    QR_TRY(qr__wi_subst_new(ts, QR_DT_F32, sc, &nsc));
    for (int64_t p = 0; p < sc->numel; p++) ((float *)nsc->data)[p] = (float)(qr_tensor_get_f64(sc, p) * ratio);
    QR_TRY(qr__wi_subst_new(ts, d16, zp, &nzp));
    for (int64_t p = 0; p < zp->numel; p++) {
        double z = nearbyint((double)qr_tensor_get_i64(zp, p) / ratio);
        qr_tensor_set_i64(nzp, p, (int64_t)QR_MAX((double)r16.lo, QR_MIN((double)r16.hi, z)));
    }
    subst[gr->pscale[i]] = nsc;
    subst[gr->pzp[i]] = nzp;
    if (q->form == QR_QF_DQ_INIT) {
        const QrTensor *w = s->fw[i], *iw = &g->values[q->int_value].t;
        QrTensor *nw;
        QR_TRY(qr__wi_subst_new(ts, d16, iw, &nw));
        for (int64_t e = 0; e < iw->numel; e++) {
            int64_t p = qr_weights_param_index(iw->rank, iw->dims, q->axis, q->block_size, nsc->numel, e);
            float s1 = ((const float *)nsc->data)[p];
            int32_t z = (int32_t)qr_tensor_get_i64(nzp, nzp->numel > 1 ? p : 0);
            qr_tensor_set_i64(nw, e, qr_quant_quantize_f32((float)qr_tensor_get_f64(w, e), s1, z, r16));
        }
        subst[gr->pint[i]] = nw;
    }
    return QR_OK;
}

/* ==== runs ============================================================================= */

/* Model-output metrics of g (the twin or its private-parameter copy) under the options;
 * only what differs from the all-on reference re-runs when the session has one. */
static QrStatus qr__wi_run_out(const QrSession *s, const QrGraph *g, const QrRunOpts *ro, QrMetrics *m) {
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof(QrTensor));
    if (!outs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrStatus st = s->ref && !s->no_incremental ? qr_session_run_inc(s, g, ro, outs, NULL) : qr_run(g, s->inputs, ro, outs);
    if (st == QR_OK) st = qr_session_compare_outputs(s, outs, m);
    for (int k = 0; k < g->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    return st;
}

/* Float-model tensor name of quantizer i (for ORT's TensorQuantOverrides). */
static const char *qr__wi_base_tensor(const QrSession *s, int i) {
    const QrQuantizer *q = &s->qt.q[i];
    const QrGraph *g = &s->tw.g;
    if (q->kind == QR_QK_WEIGHT) {
        const char *b = s->fw[i] ? qr_weights_base_name(s->b, s->fw[i]) : NULL;
        if (b) return b;
    } else {
        int mi = qr_dist_match_of_value(s, q->out_value);
        if (mi >= 0) return s->b->values[s->m.m[mi].b_value].name;
    }
    return q->float_value >= 0 ? g->values[q->float_value].name : g->values[q->int_value].name;
}

static const char *qr__wi_qname(const QrSession *s, int i) {
    const QrQuantizer *q = &s->qt.q[i];
    const QrGraph *g = &s->tw.g;
    return q->float_value >= 0 ? g->values[q->float_value].name : g->values[q->int_value].name;
}

static QrStatus qr_whatif_requant_into(const QrTensor *w, int axis, int bs, int bits, bool asym, float *y) {
    if (axis < 0) axis += w->rank;
    if (axis < 0 || axis >= w->rank || bs <= 0 || bits < 2 || bits > 8)
        return qr_errf(QR_ERR_INVALID, "what-if: cannot re-quantize a weight in blocks (axis %d, block %d, %d bits)", axis, bs,
                       bits);
    int64_t inner = 1, len = w->dims[axis];
    for (int d = axis + 1; d < w->rank; d++) inner *= w->dims[d];
    int64_t outer = len > 0 && inner > 0 ? w->numel / (len * inner) : 0;
    const float qmax = (float)((1 << bits) - 1), mid = (float)(1 << (bits - 1));
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k0 = 0; k0 < len; k0 += bs)
            for (int64_t n = 0; n < inner; n++) {
                int64_t k1 = QR_MIN(len, k0 + bs);
                float vmax = 0, lo = 0, hi = 0;
                for (int64_t k = k0; k < k1; k++) {
                    float v = (float)qr_tensor_get_f64(w, (o * len + k) * inner + n);
                    if (fabsf(v) > fabsf(vmax)) vmax = v;
                    lo = fminf(lo, v);
                    hi = fmaxf(hi, v);
                }
                float sc = asym ? (hi - lo) / qmax : vmax / -mid, zp = mid;
                if (asym) zp = sc != 0 ? fminf(fmaxf(rintf(-lo / sc), 0.0f), qmax) : 0.0f;
                for (int64_t k = k0; k < k1; k++) {
                    int64_t e = (o * len + k) * inner + n;
                    float v = (float)qr_tensor_get_f64(w, e);
                    float q = sc != 0 ? fminf(fmaxf(rintf(asym ? v / sc : v * (1.0f / sc)) + zp, 0.0f), qmax) : zp;
                    y[e] = (q - zp) * sc;
                }
            }
    return QR_OK;
}


/* Quantizer i's weight-only what-if data: the weight of a MatMulNBits node without g_idx whose float weight
 * is known ([K, N], blocks of *bs along K), its bits and whether it has zero points; false otherwise. */
static bool qr__wi_wq_of(const QrSession *s, int i, int *bits, bool *asym, int *bs) {
    const QrQuantizer *q = &s->qt.q[i];
    if (!qr__wi_weight_only(s, i) || !s->fw || !s->fw[i] || q->out_value < 0 || !q->can_disable) return false;
    const QrNode *n = &s->a->nodes[s->tw.origin[q->owner]];
    if (strcmp(n->op_type, "MatMulNBits") || (n->n_in > 4 && n->in[4] >= 0)) return false;
    const QrTensor *w = s->fw[i];
    int64_t K = qr_attr_int(n, "K", 0), N = qr_attr_int(n, "N", 0);
    *bits = (int)qr_attr_int(n, "bits", 4);
    *bs = (int)qr_attr_int(n, "block_size", 0);
    *asym = n->n_in > 3 && n->in[3] >= 0;
    return w->rank == 2 && w->dims[0] == K && w->dims[1] == N && *bs > 0 && *bits >= 2 && *bits <= 8;
}

/* The weight-only runs' edit (QrRunOpts.edit): the dequantized weight of quantizer q_of[value] (its
 * DequantizeLinear's or BlockDequant's output, computed in the run from the node's own codes) overwritten
 * with the float weight re-quantized, in place. The weight exists only as long as any dequantized weight of
 * a run does (from its reader's turn to its last reader, run.c): no re-quantized copy is kept. */
typedef struct QrWiWqEdit {
    const QrSession *s;
    const int *q_of;             /* per twin value: the quantizer whose weight it is, or -1 */
    int kind;                    /* 0: 8 bits, 1: half the block */
} QrWiWqEdit;

static QrStatus qr__wi_wq_edit(void *user, const QrGraph *g, int node, int value, QrTensor *t, const QrTensor *const *in) {
    QR_UNUSED(node);
    QR_UNUSED(in);
    const QrWiWqEdit *e = user;
    int i = e->q_of[value], bits, bs;
    bool asym;
    if (i < 0 || !qr__wi_wq_of(e->s, i, &bits, &asym, &bs)) return QR_OK;
    const QrTensor *w = e->s->fw[i];
    if (t->dtype != QR_DT_F32 || t->numel != w->numel)
        return qr_errf(QR_ERR_INVALID, "what-if: weight '%s' has %lld elements (%s), its float weight %lld",
                       g->values[value].name, (long long)t->numel, qr_dtype_name(t->dtype), (long long)w->numel);
    return qr_whatif_requant_into(w, 0, e->kind == 0 ? bs : bs / 2, e->kind == 0 ? 8 : bits, asym, t->data);
}

/* The twin with the step's weight-only weights re-quantized (kind 0: 8 bits, 1: half block) and their nodes
 * computing the float product with them (as when disabled: MatMul(A, W); accuracy_level 4's int8
 * activations are not applied), every other quantizer on: the model-output metrics into *m (NaN when no
 * weight changes). The nodes' weights are not substituted: their dequantization runs and qr__wi_wq_edit
 * re-quantizes its output in place (the same float32 weight the product reads, one weight at a time). */
static QrStatus qr__wi_wq_run(QrSession *s, const QrWiStepPlan *p, int kind, QrMetrics *m) {
    int nq = s->qt.n, nv = s->tw.g.n_values;
    int *q_of = malloc(((size_t)nv + 1) * sizeof *q_of);
    bool *mask = malloc((size_t)nq + 1), *on = calloc((size_t)nv + 1, 1);
    QrOverrides ov = {0};
    QrStatus rc = q_of && mask && on ? qr_session_overrides_alloc(s, &ov) : qr_errf(QR_ERR_NOMEM, "out of memory");
    int changed = 0;
    for (int v = 0; q_of && v < nv; v++) q_of[v] = -1;
    for (int i = 0; rc == QR_OK && i < nq; i++) {
        int bits, bs, v = s->qt.q[i].out_value;
        bool asym;
        mask[i] = true;
        if (p->state[i] != 1 || !qr__wi_wq_of(s, i, &bits, &asym, &bs)) continue;
        if (kind == 0 ? bits >= 8 : bs < 32) continue;
        mask[i] = false;
        q_of[v] = i;
        on[v] = true;
        changed++;
    }
    memset(m, 0, sizeof *m);
    m->cosine = m->mse = m->l1 = m->kl = m->sqnr = m->atol = m->rtol = m->kld = NAN;
    if (rc == QR_OK && changed) {
        qr_session_overrides(s, mask, &ov);
        for (int v = 0; v < nv; v++) if (on[v]) ov.subst[v] = NULL;   /* computed, then edited */
        QrRunOpts ro = qr_session_run_opts(&ov, NULL, NULL);
        QrWiWqEdit ed = { s, q_of, kind };
        ro.edit = qr__wi_wq_edit;
        ro.edit_user = &ed;
        ro.edit_on = on;
        rc = qr__wi_run_out(s, &s->tw.g, &ro, m);
    }
    free(q_of);
    free(mask);
    free(on);
    qr_session_overrides_free(&ov);
    return rc;
}

/* Everything of step st but its two runs: the selected nodes, the promotions and their
 * lists, the float run's mask. p->state and p->mask have qt.n entries. */
static QrStatus qr_whatif_plan(QrSession *s, const QrWiNode *rank, const QrWiGroups *gr, QrWhatIf *w, QrWhatIfStep *st,
                            QrWiStepPlan *p) {
    QrArena *a = &w->arena;
    int nq = s->qt.n, k = st->k;
    int *state = p->state;
    st->nodes = qr_arena_array(a, (size_t)k + 1, sizeof(char *));
    st->base_nodes = qr_arena_array(a, (size_t)k + 1, sizeof(char *));
    st->promoted = qr_arena_array(a, (size_t)nq + 1, sizeof(char *));
    st->also = qr_arena_array(a, (size_t)nq + 1, sizeof(char *));
    st->not_promoted = qr_arena_array(a, (size_t)nq + 1, sizeof(char *));
    st->ort_overrides = qr_arena_array(a, (size_t)nq + 1, sizeof(char *));
    st->ort_types = qr_arena_array(a, (size_t)nq + 1, sizeof(char *));
    if (!st->nodes || !st->base_nodes || !st->promoted || !st->also || !st->not_promoted || !st->ort_overrides || !st->ort_types)
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    memset(state, 0, (size_t)nq * sizeof(int));
    for (int j = 0; j < k; j++) {
        const QrWiNode *n = &rank[j];
        st->nodes[j] = n->node >= 0 ? qr_dist_node_name(s, n->node) : n->name;
        st->base_nodes[j] = n->node >= 0 ? qr_advk_base_node_of(s, n->node) : NULL;
        for (int t = 0; t < n->n_q; t++) if (s->qt.q[n->q[t]].kind != QR_QK_BIAS) state[n->q[t]] = 1;
        for (int i = 0; n->node >= 0 && i < nq; i++)
            if (s->qt.q[i].kind == QR_QK_BIAS && s->qt.q[i].owner == n->node) state[i] = 4;
    }
    /* int16: promote whole parameter groups of the selected quantizers. */
    for (int i = 0; i < nq; i++) {
        if (state[i] != 1) continue;
        int r = qr__wi_root(gr->parent, i);
        if (gr->why[i]) {
            st->not_promoted[st->n_not++] = qr_arena_printf(a, "%s: %s", qr__wi_qname(s, i), gr->why[i]);
            continue;
        }
        for (int j = 0; j < nq; j++)
            if (qr__wi_root(gr->parent, j) == r && state[j] < 2) state[j] = state[j] == 1 ? 2 : 3;
    }
    for (int i = 0; i < nq; i++) {
        if (state[i] < 2 || state[i] == 4) continue;
        if (state[i] == 2) st->promoted[st->n_promoted++] = qr__wi_qname(s, i);
        else st->also[st->n_also++] = qr__wi_qname(s, i);
        st->ort_overrides[st->n_ort] = qr__wi_base_tensor(s, i);
        st->ort_types[st->n_ort++] = qr_dtype_is_signed(s->qt.q[i].dtype) ? "QInt16" : "QUInt16";
    }
    /* weight-only: the selected weights the 8-bit and half-block runs change (qr__wi_wq_run) */
    st->wq_names = qr_arena_array(a, (size_t)nq + 1, sizeof(char *));
    if (!st->wq_names) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; i < nq; i++) {
        int bits, bs;
        bool asym;
        if (state[i] != 1 || !qr__wi_wq_of(s, i, &bits, &asym, &bs)) continue;
        bool b8 = bits < 8, bh = bs >= 32;
        if (!b8 && !bh) continue;
        if (!st->n_wq_names) { st->wq_bits = bits; st->wq_block = bs; }
        st->n_wq8 += b8;
        st->n_wq_half += bh;
        st->wq_names[st->n_wq_names++] = qr__wi_base_tensor(s, i);
    }
    /* float: the selected quantizers disabled. */
    for (int i = 0; i < nq; i++) {
        p->mask[i] = true;
        if (state[i] == 0 || state[i] == 3) continue;   /* untouched, or only tied to a selected one */
        const QrQuantizer *q = &s->qt.q[i];
        if (!q->can_disable || (q->form == QR_QF_DQ_INIT && !s->fw[i])) st->n_not_disabled++;
        else p->mask[i] = false;
    }
    return QR_OK;
}

/* The 16-bit and float runs of the steps, as independent jobs: job 2t = step t in 16 bits, 2t + 1 = in
 * float (the weight-only runs: qr__wi_wq_runs). */
typedef struct QrWiRunJob {
    QrSession *s;
    const QrWiGroups *gr;
    QrWhatIfStep *steps;
    const QrWiStepPlan *plans;
} QrWiRunJob;

static QrStatus qr_whatif_run_job(void *ctx, int job, int tid) {
    QR_UNUSED(tid);
    QrWiRunJob *j = ctx;
    QrSession *s = j->s;
    const QrWiGroups *gr = j->gr;
    QrWhatIfStep *st = &j->steps[job / 2];
    const QrWiStepPlan *p = &j->plans[job / 2];
    int nq = s->qt.n;
    QrStatus rc = QR_OK;
    if (job % 2 == 0) {
        int npv = gr->pg.n_values;
        const QrTensor **subst = calloc((size_t)npv + 1, sizeof *subst);
        QrWiSubst ts = { calloc((size_t)nq * 3 + 3, sizeof(QrTensor)), 0, nq * 3 + 3 };
        rc = ts.t && subst ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int i = 0; rc == QR_OK && i < nq; i++) {
            /* A promoted node's int32 bias would be requantized on its 16-bit scales, exact to ~1e-9:
             * the float bias stands for it (when the baseline has one). */
            if (p->state[i] == 4 && s->fw[i] && s->qt.q[i].out_value >= 0) subst[s->qt.q[i].out_value] = s->fw[i];
            if (p->state[i] < 2 || p->state[i] == 4) continue;
            rc = qr_whatif_promote(s, gr, i, &ts, subst);
        }
        QrRunOpts pro = { .subst = subst };
        if (rc == QR_OK) rc = qr__wi_run_out(s, &gr->pg, &pro, &st->int16);
        qr_whatif_subst_free(&ts);
        free(subst);
        if (rc != QR_OK) return qr_err_wrap(rc, "what-if: top-%d nodes in 16 bits", st->k);
        return QR_OK;
    }
    QrOverrides ov = {0};
    rc = qr_session_overrides_alloc(s, &ov);
    if (rc == QR_OK) {
        qr_session_overrides(s, p->mask, &ov);
        QrRunOpts fro = qr_session_run_opts(&ov, NULL, NULL);
        /* the same overrides as a cumulative-error setting: that run's output metrics */
        if (s->no_incremental || !qr_session_memo_get(s, &ov, &st->fp)) rc = qr__wi_run_out(s, &s->tw.g, &fro, &st->fp);
    }
    qr_session_overrides_free(&ov);
    if (rc != QR_OK) return qr_err_wrap(rc, "what-if: top-%d nodes in float", st->k);
    return QR_OK;
}

/* Progress over the 4 runs a step: the jobs' 2 per step first, then the weight-only runs. */
typedef struct QrWiProgress {
    const QrStepHook *h;
    int64_t total;
} QrWiProgress;

static void qr__wi_progress(void *ctx, int64_t done, int64_t total) {
    const QrWiProgress *p = ctx;
    QR_UNUSED(total);
    qr_step(p->h, done, p->total);
}

/* The weight-only runs of every step (8 bits, then half the block), one at a time on this thread: each
 * re-quantized weight exists only while its product runs, never two runs' at once (two side by side held
 * two sets of up to 10 float weights: +0.6 GiB on a 0.5B decoder), and the run's kernels use every thread. */
static QrStatus qr__wi_wq_runs(QrSession *s, QrWhatIf *out, const QrWiStepPlan *plans, const QrWiProgress *pr) {
    for (int t = 0; t < out->n_steps; t++)
        for (int kind = 0; kind < 2; kind++) {
            QrWhatIfStep *st = &out->steps[t];
            qr_step(pr->h, 2 * out->n_steps + 2 * t + kind, pr->total);
            QrStatus rc = qr__wi_wq_run(s, &plans[t], kind, kind == 0 ? &st->wq8 : &st->wq_half);
            if (rc != QR_OK) return qr_err_wrap(rc, "what-if: top-%d nodes' weight-only weights %s", st->k,
                                                kind == 0 ? "in 8 bits" : "with half the block size");
        }
    return QR_OK;
}

static QrStatus qr_whatif_run(QrSession *s, const QrSensResult *sens, const int *ks, int n_ks, double target, QrWhatIf *out) {
    static const int dflt[] = { 1, 3, 5, 10 };
    memset(out, 0, sizeof *out);
    out->target = target > 0 ? target : QR_WHATIF_TARGET_COSINE;
    out->rec_int16 = out->rec_fp = -1;
    if (!ks || n_ks <= 0) { ks = dflt; n_ks = QR_ARRAY_LEN(dflt); }
    QR_TRY(qr_session_run_baseline(s));
    QrWiNode *rank = NULL;
    int nr = qr_whatif_rank(sens, &rank);
    if (nr < 0) return qr_errf(QR_ERR_NOMEM, "out of memory");
    out->n_rank = nr;
    QrWiGroups gr = {0};
    QrOverrides ov = {0};
    int nq = s->qt.n;
    out->steps = qr_arena_array(&out->arena, (size_t)n_ks + 1, sizeof *out->steps);
    QrWiStepPlan *plans = calloc((size_t)n_ks + 1, sizeof *plans);
    QrStatus st = out->steps && plans ? qr_whatif_groups(s, &out->arena, &gr) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_session_overrides_alloc(s, &ov);
    if (st == QR_OK && !s->no_incremental) {
        /* the model as is: the all-on reference (built here unless the cumulative error did) */
        st = qr_session_ref(s, NULL, NULL, NULL, NULL);
        if (st == QR_OK) out->as_is = s->ref->out;
        out->as_is_meets = out->as_is.cosine >= out->target;
    } else if (st == QR_OK) {
        qr_session_overrides(s, NULL, &ov);
        QrRunOpts ro = qr_session_run_opts(&ov, NULL, NULL);
        st = qr__wi_run_out(s, &s->tw.g, &ro, &out->as_is);
        out->as_is_meets = out->as_is.cosine >= out->target;
    }
    for (int t = 0; st == QR_OK && t < n_ks; t++) {
        int k = QR_MIN(ks[t], nr);
        bool dup = k <= 0;
        for (int j = 0; j < out->n_steps; j++) dup |= out->steps[j].k == k;
        if (dup) continue;
        QrWhatIfStep *step = &out->steps[out->n_steps];
        QrWiStepPlan *p = &plans[out->n_steps];
        memset(step, 0, sizeof *step);
        step->k = k;
        p->state = malloc(((size_t)nq + 1) * sizeof(int));
        p->mask = malloc((size_t)nq + 1);
        st = p->state && p->mask ? qr_whatif_plan(s, rank, &gr, out, step, p) : qr_errf(QR_ERR_NOMEM, "out of memory");
        out->n_steps++;
    }
    QrWiRunJob job = { s, &gr, out->steps, plans };
    QrWiProgress pr = { &s->progress, 4 * out->n_steps };
    QrStepHook hook = { qr__wi_progress, &pr };
    if (st == QR_OK) st = qr_session_jobs(s, 2 * out->n_steps, qr_whatif_run_job, &job, s->progress.fn ? &hook : NULL);
    if (st == QR_OK) st = qr__wi_wq_runs(s, out, plans, &pr);
    for (int t = 0; st == QR_OK && t < out->n_steps; t++) {
        QrWhatIfStep *x = &out->steps[t];
        x->int16_meets = x->int16.cosine >= out->target;
        x->fp_meets = x->fp.cosine >= out->target;
        x->wq8_meets = x->n_wq8 && x->wq8.cosine >= out->target;
        x->wq_half_meets = x->n_wq_half && x->wq_half.cosine >= out->target;
    }
    out->rec_wq8 = out->rec_wq_half = -1;
    for (int pass = 0; st == QR_OK && !out->as_is_meets && pass < 2; pass++) {
        /* as the float step: the smallest k meeting the target, else the best Cosine above the model as is */
        int *rec = pass ? &out->rec_wq_half : &out->rec_wq8;
        bool *meets = pass ? &out->rec_wq_half_meets : &out->rec_wq8_meets;
        for (int j = 0; j < out->n_steps; j++) {
            const QrWhatIfStep *x = &out->steps[j];
            bool m = pass ? x->wq_half_meets : x->wq8_meets;
            double c = pass ? x->wq_half.cosine : x->wq8.cosine;
            if (!(pass ? x->n_wq_half : x->n_wq8) || !(c > out->as_is.cosine)) continue;
            if (m && (!*meets || x->k < out->steps[*rec].k)) { *rec = j; *meets = true; }
            else if (!*meets && (*rec < 0 || c > (pass ? out->steps[*rec].wq_half.cosine : out->steps[*rec].wq8.cosine))) *rec = j;
        }
    }
    if (st == QR_OK && !out->as_is_meets) {
        /* Smallest k reaching the target, else the best Cosine; never a step that changes nothing
         * (no quantizer promoted) or whose measured Cosine is not above the model as is. */
        for (int pass = 0; pass < 2; pass++) {
            int *rec = pass ? &out->rec_fp : &out->rec_int16;
            bool *meets = pass ? &out->rec_fp_meets : &out->rec_int16_meets;
            for (int j = 0; j < out->n_steps; j++) {
                const QrWhatIfStep *x = &out->steps[j];
                bool m = pass ? x->fp_meets : x->int16_meets;
                double c = pass ? x->fp.cosine : x->int16.cosine;
                if ((!pass && x->n_promoted == 0) || !(c > out->as_is.cosine)) continue;
                if (m && (!*meets || x->k < out->steps[*rec].k)) { *rec = j; *meets = true; }
                else if (!*meets && (*rec < 0 || c > (pass ? out->steps[*rec].fp.cosine : out->steps[*rec].int16.cosine))) *rec = j;
            }
        }
    } else if (st == QR_OK) {
        out->rec_int16_meets = out->rec_fp_meets = true;
    }
    for (int t = 0; plans && t < n_ks; t++) { free(plans[t].state); free(plans[t].mask); }
    free(plans);
    qr_whatif_groups_free(&gr);
    free(rank);
    qr_session_overrides_free(&ov);
    if (st != QR_OK) qr_whatif_free(out);
    return st;
}

static void qr_whatif_free(QrWhatIf *w) {
    qr_arena_free(&w->arena);
    memset(w, 0, sizeof *w);
}

/* ==== mixed_precision.json ================================================================ */

static void qr__wi_js_rec(QrJson *j, const char *key, const QrWhatIf *w, int rec, bool meets, bool int16) {
    const QrWhatIfStep *x = rec >= 0 ? &w->steps[rec] : NULL;
    qr_json_key(j, key);
    qr_json_obj_begin(j);
    qr_json_kv_int(j, "k", x ? x->k : 0);
    qr_json_kv_bool(j, "meets_target", meets);
    qr_whatif_js_strs(j, "nodes", x ? x->nodes : NULL, x ? x->k : 0);
    qr_whatif_js_strs(j, "baseline_nodes", x ? x->base_nodes : NULL, x ? x->k : 0);
    qr__wi_js_metrics(j, "output", x ? (int16 ? &x->int16 : &x->fp) : &w->as_is);
    if (int16) {
        /* ONNX Runtime quantizer: extra_options={"TensorQuantOverrides": ...} (float-model tensor names). */
        qr_json_key(j, "ort_tensor_quant_overrides");
        qr_json_obj_begin(j);
        for (int t = 0; x && t < x->n_ort; t++) {
            bool dup = false;
            for (int u = 0; u < t; u++) dup |= !strcmp(x->ort_overrides[u], x->ort_overrides[t]);
            if (dup) continue;
            qr_json_key(j, x->ort_overrides[t]);
            qr_json_arr_begin_compact(j);
            qr_json_obj_begin_compact(j);
            qr_json_kv_str(j, "quant_type", x->ort_types[t]);
            qr_json_obj_end(j);
            qr_json_arr_end(j);
        }
        qr_json_obj_end(j);
    } else {
        /* ONNX Runtime quantizer: nodes_to_exclude (float-model node names). */
        qr_json_key(j, "ort_nodes_to_exclude");
        qr_json_arr_begin(j);
        for (int n = 0; x && n < x->k; n++) qr_json_str(j, x->base_nodes[n] ? x->base_nodes[n] : x->nodes[n]);
        qr_json_arr_end(j);
    }
    qr_json_obj_end(j);
}

static QrStatus qr_whatif_write(const QrSession *s, const QrWhatIf *w, const char *dir) {
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_kv_int(&j, "schema_version", 1);
    qr_json_kv_str(&j, "baseline", s->b->path);
    qr_json_kv_str(&j, "analysis", s->a->path);
    qr_json_kv_str(&j, "int16_rule", "16-bit grid of the same signedness with the same clipping threshold: "
                   "scale' = scale*qmax/qmax16, zero_point' = round(zero_point*qmax16/qmax); integer weights re-quantized "
                   "from the float weight; quantizers sharing a scale value are promoted together; biases of promoted "
                   "nodes in float");
    qr_json_key(&j, "target");
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "metric", "Cosine");
    qr_json_kv_num(&j, "min", w->target);
    qr_json_obj_end(&j);
    qr__wi_js_metrics(&j, "as_is", &w->as_is);
    qr_json_kv_bool(&j, "as_is_meets_target", w->as_is_meets);
    qr_json_kv_int(&j, "ranked_nodes", w->n_rank);
    for (int pass = 0; pass < 2; pass++) {
        qr_json_key(&j, pass ? "float" : "int16");
        qr_json_arr_begin(&j);
        for (int t = 0; t < w->n_steps; t++) {
            const QrWhatIfStep *x = &w->steps[t];
            qr_json_obj_begin(&j);
            qr_json_kv_int(&j, "k", x->k);
            qr_whatif_js_strs(&j, "nodes", x->nodes, x->k);
            qr_whatif_js_strs(&j, "baseline_nodes", x->base_nodes, x->k);
            qr__wi_js_metrics(&j, "output", pass ? &x->fp : &x->int16);
            qr_json_kv_bool(&j, "meets_target", pass ? x->fp_meets : x->int16_meets);
            if (pass) qr_json_kv_int(&j, "quantizers_not_disabled", x->n_not_disabled);
            else {
                qr_whatif_js_strs(&j, "promoted_tensors", x->promoted, x->n_promoted);
                qr_whatif_js_strs(&j, "also_promoted", x->also, x->n_also);
                qr_whatif_js_strs(&j, "not_promoted", x->not_promoted, x->n_not);
            }
            qr_json_obj_end(&j);
        }
        qr_json_arr_end(&j);
    }
    /* weight-only nodes: 8-bit codes and half the block size, measured */
    qr_json_key(&j, "weight_only");
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "rule", "the selected MatMulNBits nodes' weights (no g_idx) re-quantized from the float weight, "
                   "every other quantizer as is: int8 = 8-bit codes, same blocks; half_block = half the block size (blocks "
                   "of 32 or more), same bits; symmetric as MLAS (scale = block's signed abs-max / -2^(bits-1)) without "
                   "zero points, min/max with them; round half to even, float32; the node's product A @ W in float "
                   "(accuracy_level 4's int8 activations not applied)");
    for (int pass = 0; pass < 2; pass++) {
        qr_json_key(&j, pass ? "half_block" : "int8");
        qr_json_arr_begin(&j);
        for (int t = 0; t < w->n_steps; t++) {
            const QrWhatIfStep *x = &w->steps[t];
            if (!(pass ? x->n_wq_half : x->n_wq8)) continue;
            qr_json_obj_begin(&j);
            qr_json_kv_int(&j, "k", x->k);
            qr_whatif_js_strs(&j, "nodes", x->nodes, x->k);
            qr_whatif_js_strs(&j, "weights", x->wq_names, x->n_wq_names);
            qr_json_kv_int(&j, "bits", pass ? x->wq_bits : 8);
            qr_json_kv_int(&j, "block_size", pass ? x->wq_block / 2 : x->wq_block);
            qr__wi_js_metrics(&j, "output", pass ? &x->wq_half : &x->wq8);
            qr_json_kv_bool(&j, "meets_target", pass ? x->wq_half_meets : x->wq8_meets);
            qr_json_obj_end(&j);
        }
        qr_json_arr_end(&j);
    }
    qr_json_obj_end(&j);
    qr_json_key(&j, "recommended");
    qr_json_obj_begin(&j);
    qr__wi_js_rec(&j, "int16", w, w->rec_int16, w->rec_int16_meets, true);
    qr__wi_js_rec(&j, "float", w, w->rec_fp, w->rec_fp_meets, false);
    for (int pass = 0; pass < 2; pass++) {
        int rec = pass ? w->rec_wq_half : w->rec_wq8;
        const QrWhatIfStep *x = rec >= 0 ? &w->steps[rec] : NULL;
        qr_json_key(&j, pass ? "weight_only_half_block" : "weight_only_int8");
        if (!x) { qr_json_null(&j); continue; }
        qr_json_obj_begin(&j);
        qr_json_kv_int(&j, "k", x->k);
        qr_json_kv_bool(&j, "meets_target", pass ? w->rec_wq_half_meets : w->rec_wq8_meets);
        qr_whatif_js_strs(&j, "weights", x->wq_names, x->n_wq_names);
        qr__wi_js_metrics(&j, "output", pass ? &x->wq_half : &x->wq8);
        qr_json_obj_end(&j);
    }
    qr_json_obj_end(&j);
    qr_json_obj_end(&j);
    char *text = NULL;
    size_t len = 0;
    QrStatus st = qr_json_finish(&j, &text, &len);
    if (st == QR_OK) {
        QrArena a = {0};
        st = qr_file_write_atomic(qr_arena_printf(&a, "%s/" QR_BF_WHATIF, dir), text, len);
        qr_arena_free(&a);
    }
    qr_json_free(&j);
    free(text);
    return st;
}
