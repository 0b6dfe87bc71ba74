/* analysis/match — implementation. See match.h. */

static bool qr_match_verified(const QrMatch *m) { return m->a_node >= 0 && m->verify == QR_MV_VERIFIED; }

static const char *qr_match_verify_name(QrMatchVerify v) {
    static const char *const names[] = { "", "verified", "UNVERIFIED" };
    return (unsigned)v < QR_ARRAY_LEN(names) ? names[v] : "?";
}

static const char *qr_match_method_name(QrMatchMethod m) {
    static const char *const names[] = { "unmatched", "input", "node_name", "tensor_name", "structure" };
    return (unsigned)m < QR_ARRAY_LEN(names) ? names[m] : "?";
}

static bool qr_match_in(const char *op, const char *const *list) {
    for (; *list; list++) if (!strcmp(op, *list)) return true;
    return false;
}

/* Nodes that carry a value unchanged as far as matching is concerned. */
static bool qr_match_transparent(const QrNode *n) {
    static const char *const ops[] = { "QuantizeLinear", "DequantizeLinear", "Identity", "Cast",
                                       "DynamicQuantizeLinear", "Dropout", NULL };
    return qr_match_in(n->op_type, ops);
}

/* The float op a (possibly quantized) node computes. */
static const char *qr_match_canon(const QrNode *n) {
    static const struct { const char *from, *to; } map[] = {
        { "QLinearConv", "Conv" }, { "ConvInteger", "Conv" }, { "QLinearMatMul", "MatMul" },
        { "MatMulInteger", "MatMul" }, { "QGemm", "Gemm" }, { "QLinearAdd", "Add" }, { "QLinearMul", "Mul" },
        { "QLinearConcat", "Concat" }, { "QLinearGlobalAveragePool", "GlobalAveragePool" },
        { "QLinearAveragePool", "AveragePool" }, { "QLinearSigmoid", "Sigmoid" }, { "QLinearLeakyRelu", "LeakyRelu" },
        { "MatMulNBits", "MatMul" }, { "MatMulBnb4", "MatMul" }, { "MatMulIntegerToFloat", "MatMul" },
        { "DynamicQuantizeMatMul", "MatMul" }, { "GatherBlockQuantized", "Gather" }, { "QLinearSoftmax", "Softmax" },
    };
    for (int i = 0; i < QR_ARRAY_LEN(map); i++) if (!strcmp(n->op_type, map[i].from)) return map[i].to;
    return n->op_type;
}

static bool qr__m_ops_compatible(const char *b, const char *a) {
    if (!strcmp(b, a)) return true;
    if ((!strcmp(b, "Gemm") && !strcmp(a, "MatMul")) || (!strcmp(b, "MatMul") && !strcmp(a, "Gemm"))) return true;
    return false;
}

static bool qr_match_is_compute(const QrGraph *g, int node) {
    const QrNode *n = &g->nodes[node];
    static const char *const skip[] = { "Constant", "Identity", "Dropout", "QuantizeLinear", "DequantizeLinear",
                                        "DynamicQuantizeLinear", "Cast", "Shape", "Size", "ConstantOfShape", NULL };
    if (qr_match_in(n->op_type, skip) || n->n_out < 1 || n->out[0] < 0) return false;
    const QrValue *v = &g->values[n->out[0]];
    if (v->is_const) return false;                  /* constants and shape arithmetic */
    return qr_dtype_is_float(v->t.dtype);
}

typedef struct QrMatchCtx {
    const QrGraph *b, *a;
    const QrQuantTable *qa;
    int *unit_of;        /* analysis node -> head node of its unit (-1 transparent) */
    int *unit_out;       /* head node -> last value of the unit */
    bool *unit_used;
    int *bmap;           /* baseline value -> visible analysis value (-1) */
    int *bmatch;         /* baseline value -> index in result.m of the node producing it (-1) */
    int *a_topo;         /* analysis node -> topological position */
} QrMatchCtx;

static bool qr_match_isconst(const QrGraph *g, int v) { return g->values[v].is_init || g->values[v].is_const; }

/* Is input k of node n a constant (initializer or folded)? */
static bool qr_match_const_in(const QrGraph *g, const QrNode *n, int k) {
    return k < n->n_in && n->in[k] >= 0 && g->values[n->in[k]].t.data != NULL &&
           (g->values[n->in[k]].is_init || g->values[n->in[k]].is_const);
}

/* Does the baseline have a node of n's name and op type? (Then n is a layer of its own there,
 * e.g. attention's MatMul -> Div by sqrt(d), not a QAT chain's scale correction.) */
static bool qr__m_base_has(const QrMatchCtx *cx, const QrNode *n) {
    for (int k = 0; n->name && cx->b && k < cx->b->n_nodes; k++) {
        const QrNode *bn = &cx->b->nodes[k];
        if (bn->name && !strcmp(bn->name, n->name) && !strcmp(bn->op_type, n->op_type)) return true;
    }
    return false;
}

/* Groups analysis nodes into units: integer-op chains (ConvInteger→Cast→Mul*→Add)
 * and QAT chains (Conv→Div/Mul by constant→Add constant) become one unit, unless the
 * baseline has the Div itself (qr__m_base_has). */
static void qr__m_units(QrMatchCtx *cx) {
    const QrGraph *a = cx->a;
    for (int ni = 0; ni < a->n_nodes; ni++) {
        cx->unit_of[ni] = qr_match_transparent(&a->nodes[ni]) ? -1 : ni;
        cx->unit_out[ni] = a->nodes[ni].n_out ? a->nodes[ni].out[0] : -1;
    }
    for (int oi = 0; oi < a->n_nodes; oi++) {
        int head = a->order[oi];
        const QrNode *h = &a->nodes[head];
        bool integer = !strcmp(h->op_type, "ConvInteger") || !strcmp(h->op_type, "MatMulInteger");
        bool qat = !strcmp(h->op_type, "Conv") || !strcmp(h->op_type, "Gemm") || !strcmp(h->op_type, "MatMul");
        if (cx->unit_of[head] != head || (!integer && !qat) || h->out[0] < 0) continue;
        int v = h->out[0], stage = 0;
        for (;;) {
            int r = qr_graph_single_reader(a, v);
            if (r < 0) break;
            const QrNode *n = &a->nodes[r];
            bool take = false;
            if (integer) {
                take = (stage == 0 && !strcmp(n->op_type, "Cast")) || !strcmp(n->op_type, "Mul") ||
                       (!strcmp(n->op_type, "Add") && (qr_match_const_in(a, n, 0) || qr_match_const_in(a, n, 1)));
            } else {
                take = (!strcmp(n->op_type, "Div") && qr_match_const_in(a, n, 1) && !qr__m_base_has(cx, n)) ||
                       (stage > 0 && !strcmp(n->op_type, "Add") && (qr_match_const_in(a, n, 0) || qr_match_const_in(a, n, 1)));
            }
            if (!take || n->out[0] < 0) break;
            cx->unit_of[r] = head;
            v = cx->unit_out[head] = n->out[0];
            stage++;
            if (!strcmp(n->op_type, "Add")) break;
        }
    }
}

/* The value consumers of analysis value v see (after its Q→DQ, if any). */
/* q's scale (and zero point) are per-tensor constants: its integer value can be dequantized for comparison. */
static bool qr__m_const_qparams(const QrGraph *a, const QrQuantizer *q) {
    const QrTensor *s = q->scale_value >= 0 ? &a->values[q->scale_value].t : NULL;
    const QrTensor *z = q->zp_value >= 0 ? &a->values[q->zp_value].t : NULL;
    return s && s->data && s->numel == 1 && (!z || (z->data && z->numel == 1));
}

static int qr_match_visible_in(const QrGraph *a, const QrQuantTable *t, int v, int *quant, bool *is_int) {
    *quant = -1;
    *is_int = false;
    int i = t->by_float[v];
    if (i >= 0 && t->q[i].form == QR_QF_QDQ) {
        *quant = i;
        return t->q[i].out_value;
    }
    /* A float value quantized for integer consumers (QuantizeLinear -> QOperator / integer-op
     * node, no DequantizeLinear): they see the quantized value, so that is the pair's value (its
     * quantizer's error belongs to this row, as in the QDQ form). */
    if (i >= 0 && t->q[i].form == QR_QF_Q_ONLY && t->q[i].int_value >= 0 && qr__m_const_qparams(a, &t->q[i])) {
        *quant = i;
        *is_int = true;
        return t->q[i].int_value;
    }
    i = t->by_value[v];
    if (i >= 0 && t->q[i].form == QR_QF_QOP_OUT) {
        *quant = i;
        /* An integer output dequantized for float consumers: they see the DQ output. */
        const QrUse *u;
        int nu = qr_graph_readers(a, v, &u);
        for (int k = 0; k < nu; k++) {
            const QrNode *n = &a->nodes[u[k].node];
            if (!strcmp(n->op_type, "DequantizeLinear") && u[k].input == 0 && n->out[0] >= 0) return n->out[0];
        }
        *is_int = true;
        return v;
    }
    return v;
}

static int qr__m_visible(const QrMatchCtx *cx, int v, int *quant, bool *is_int) {
    return qr_match_visible_in(cx->a, cx->qa, v, quant, is_int);
}

/* Collects the unit heads that read analysis value v, looking through transparent nodes. */
static int qr__m_readers(const QrMatchCtx *cx, int v, int *out, int max) {
    const QrGraph *a = cx->a;
    int stack[64], sp = 0, n = 0;
    stack[sp++] = v;
    int guard = 0;
    while (sp && guard++ < 4096) {
        int cur = stack[--sp];
        const QrUse *u;
        int nu = qr_graph_readers(a, cur, &u);
        for (int r = 0; r < nu; r++) {
            int ni = u[r].node;
            const QrNode *nd = &a->nodes[ni];
            if (cx->unit_of[ni] < 0) {
                if (nd->out[0] >= 0 && sp < QR_ARRAY_LEN(stack)) stack[sp++] = nd->out[0];
                continue;
            }
            int head = cx->unit_of[ni];
            if (head != ni) continue;       /* inside another unit's chain */
            bool dup = false;
            for (int i = 0; i < n; i++) dup |= out[i] == head;
            if (!dup && n < max) out[n++] = head;
        }
    }
    return n;
}

static bool qr__m_absorbable(const QrMatchCtx *cx, int head) {
    const QrNode *n = &cx->a->nodes[head];
    if (!strcmp(n->op_type, "BatchNormalization")) return true;
    static const char *const arith[] = { "Mul", "Div", "Add", "Sub", NULL };
    return qr_match_in(n->op_type, arith) && (qr_match_const_in(cx->a, n, 0) || qr_match_const_in(cx->a, n, 1));
}

static void qr__m_assign(QrMatchCtx *cx, QrMatchResult *r, int mi, int head, QrMatchMethod method) {
    QrMatch *m = &r->m[mi];
    m->a_node = head;
    if (m->a_op < 0) m->a_op = head;     /* an absorbed BN / constant op keeps the op's node */
    m->b_twin = m->b_node;
    m->a_value = qr__m_visible(cx, cx->unit_out[head], &m->a_quant, &m->a_is_int);
    m->method = method;
    cx->unit_used[head] = true;
    cx->bmap[m->b_value] = m->a_value;
}

/* Structural candidates for baseline node bn: unused units with a compatible op
 * that read the analysis counterparts of all of bn's mapped data inputs. */
static int qr__m_structural(QrMatchCtx *cx, const QrNode *bn) {
    int best = -1;
    int first_in = -1;
    for (int k = 0; k < bn->n_in; k++) {
        int v = bn->in[k];
        if (v >= 0 && !qr_match_isconst(cx->b, v) && cx->bmap[v] >= 0) { first_in = v; break; }
    }
    if (first_in < 0) return -1;
    int cand[64];
    int nc = qr__m_readers(cx, cx->bmap[first_in], cand, QR_ARRAY_LEN(cand));
    for (int i = 0; i < nc; i++) {
        int h = cand[i];
        if (cx->unit_used[h] || !qr__m_ops_compatible(bn->op_type, qr_match_canon(&cx->a->nodes[h]))) continue;
        bool all = true;
        for (int k = 0; k < bn->n_in && all; k++) {
            int v = bn->in[k];
            if (v < 0 || v == first_in || qr_match_isconst(cx->b, v) || cx->bmap[v] < 0) continue;
            int c2[64], n2 = qr__m_readers(cx, cx->bmap[v], c2, QR_ARRAY_LEN(c2));
            bool found = false;
            for (int j = 0; j < n2; j++) found |= c2[j] == h;
            all = found;
        }
        if (all && (best < 0 || cx->a_topo[h] < cx->a_topo[best])) best = h;
    }
    return best;
}

/* Clip bounds of a baseline Clip/Relu node (constants or attributes). */
static void qr__m_act_bounds(const QrGraph *b, const QrNode *n, float *lo, float *hi) {
    *lo = NAN;
    *hi = NAN;
    if (!strcmp(n->op_type, "Relu")) { *lo = 0; return; }
    *lo = qr_attr_float(n, "min", NAN);
    *hi = qr_attr_float(n, "max", NAN);
    if (n->n_in > 1 && n->in[1] >= 0 && b->values[n->in[1]].t.data) *lo = (float)qr_tensor_get_f64(&b->values[n->in[1]].t, 0);
    if (n->n_in > 2 && n->in[2] >= 0 && b->values[n->in[2]].t.data) *hi = (float)qr_tensor_get_f64(&b->values[n->in[2]].t, 0);
}

/* The same graph on both sides (single-model form: the baseline is the analysis model with its
 * quantizers disabled): every compute node pairs with itself, at the value its consumers see. */
static void qr__m_same_graph(QrMatchCtx *cx, QrMatchResult *out) {
    const QrGraph *b = cx->b;
    for (int oi = 0; oi < b->n_nodes; oi++) {
        int bi = b->order[oi];
        if (!qr_match_is_compute(b, bi)) continue;
        QrMatch *m = &out->m[out->n++];
        m->b_node = m->b_twin = m->a_node = m->a_op = bi;
        m->b_value = b->nodes[bi].out[0];
        m->a_value = qr__m_visible(cx, m->b_value, &m->a_quant, &m->a_is_int);
        m->method = QR_MM_NODE_NAME;
        m->equiv_rel = NAN;
    }
}

/* Step 2 of qr_match: baseline node bn (row mi) by its output tensor's name, incl. ONNX Runtime's
 * QDQ renames. */
static void qr__m_by_tensor_name(QrMatchCtx *cx, QrMatchResult *out, int mi, const QrNode *bn) {
    const QrGraph *b = cx->b, *a = cx->a;
    QrMatch *m = &out->m[mi];
    const char *bname = b->values[m->b_value].name;
    char alt[1024];
    const char *suffixes[] = { "", "_QuantizeLinear_Output", "_DequantizeLinear_Output" };
    for (int s = 0; s < QR_ARRAY_LEN(suffixes) && m->a_node < 0; s++) {
        snprintf(alt, sizeof alt, "%s%s", bname, suffixes[s]);
        int av = qr_graph_find(a, alt);
        while (av >= 0 && a->values[av].producer >= 0 && cx->unit_of[a->values[av].producer] < 0) {
            const QrNode *p = &a->nodes[a->values[av].producer];
            av = p->n_in ? p->in[0] : -1;
        }
        int p = av >= 0 ? a->values[av].producer : -1;
        /* a quantized baseline whose Relu ONNX Runtime removed (its Conv writes the Relu's output name) against
         * an analysis model that keeps it: the Conv before the Relu (verification then moves the pair past it) */
        if (p >= 0 && cx->unit_of[p] == p && !strcmp(a->nodes[p].op_type, "Relu") && strcmp(bn->op_type, "Relu") &&
            a->nodes[p].n_in && a->nodes[p].in[0] >= 0) {
            int u = a->values[a->nodes[p].in[0]].producer;
            while (u >= 0 && cx->unit_of[u] < 0 && a->nodes[u].n_in && a->nodes[u].in[0] >= 0)
                u = a->values[a->nodes[u].in[0]].producer;
            if (u >= 0 && cx->unit_of[u] >= 0) p = u;
        }
        if (p >= 0 && cx->unit_of[p] >= 0) {
            int head = cx->unit_of[p];
            if (!cx->unit_used[head] && qr__m_ops_compatible(bn->op_type, qr_match_canon(&a->nodes[head])))
                qr__m_assign(cx, out, mi, head, QR_MM_TENSOR_NAME);
        }
    }
}

/* Step 3 of qr_match: baseline node bn (row mi) by structure, absorbing BatchNormalization /
 * constant arithmetic the baseline folded away. True when it matched. */
static bool qr__m_by_structure(QrMatchCtx *cx, QrMatchResult *out, int mi, const QrNode *bn) {
    const QrGraph *b = cx->b, *a = cx->a;
    QrArena *ar = &out->arena;
    int h = qr__m_structural(cx, bn);
    for (int tries = 0; h < 0 && tries < 4; tries++) {
        bool moved = false;
        for (int k = 0; k < bn->n_in && !moved; k++) {
            int v = bn->in[k];
            if (v < 0 || qr_match_isconst(b, v) || cx->bmatch[v] < 0) continue;
            QrMatch *pm = &out->m[cx->bmatch[v]];
            if (pm->a_node < 0) continue;
            int rd[8], nr = qr__m_readers(cx, pm->a_value, rd, QR_ARRAY_LEN(rd));
            if (nr == 1 && !cx->unit_used[rd[0]] && qr__m_absorbable(cx, rd[0]) &&
                !qr__m_ops_compatible(bn->op_type, qr_match_canon(&a->nodes[rd[0]]))) {
                QrMatchMethod meth = pm->method;
                qr__m_assign(cx, out, cx->bmatch[v], rd[0], meth);
                pm->note = qr_arena_printf(ar, "absorbs %s '%s'", a->nodes[rd[0]].op_type, a->nodes[rd[0]].name);
                moved = true;
            }
        }
        if (!moved) break;
        h = qr__m_structural(cx, bn);
    }
    if (h >= 0) qr__m_assign(cx, out, mi, h, QR_MM_STRUCTURE);
    return h >= 0;
}

/* Step 4 of qr_match: a Relu / Clip baseline node bn (node bi, row mi) fused into its producer's
 * analysis node (QLinearConv with the Relu folded in): the producer's row moves to it (and its
 * quantizer's implied bounds in qa). */
static void qr__m_fused_act(QrMatchCtx *cx, QrQuantTable *qa, QrMatchResult *out, int mi, int bi, const QrNode *bn) {
    const QrGraph *b = cx->b, *a = cx->a;
    QrArena *ar = &out->arena;
    QrMatch *m = &out->m[mi];
    static const char *const acts[] = { "Relu", "Clip", NULL };
    int din = bn->n_in && bn->in[0] >= 0 ? bn->in[0] : -1;
    if (qr_match_in(bn->op_type, acts) && din >= 0 && cx->bmatch[din] >= 0) {
        QrMatch *pm = &out->m[cx->bmatch[din]];
        if (pm->a_node >= 0) {
            *m = *pm;
            m->b_twin = pm->b_twin;
            m->b_node = bi;
            m->b_value = bn->out[0];
            m->note = NULL;
            cx->bmap[m->b_value] = m->a_value;
            pm->a_node = pm->a_value = pm->a_quant = pm->a_op = -1;
            pm->a_is_int = false;
            pm->method = QR_MM_NONE;
            pm->note = qr_arena_printf(ar, "fused:%s into '%s'", bn->op_type, a->nodes[m->a_node].name);
            if (m->a_quant >= 0 && (qa->q[m->a_quant].form == QR_QF_QDQ || qa->q[m->a_quant].form == QR_QF_QOP_OUT))
                qr__m_act_bounds(b, bn, &qa->q[m->a_quant].implied_lo, &qa->q[m->a_quant].implied_hi);
            cx->bmap[pm->b_value] = m->a_value;
        }
    }
}

static QrStatus qr_match(const QrGraph *b, const QrGraph *a, QrQuantTable *qa, QrMatchResult *out) {
    memset(out, 0, sizeof *out);
    QrArena *ar = &out->arena;
    QrMatchCtx cx = { b, a, qa, NULL, NULL, NULL, NULL, NULL, NULL };
    cx.unit_of = qr_arena_array(ar, (size_t)a->n_nodes + 1, sizeof(int));
    cx.unit_out = qr_arena_array(ar, (size_t)a->n_nodes + 1, sizeof(int));
    cx.unit_used = qr_arena_array(ar, (size_t)a->n_nodes + 1, sizeof(bool));
    cx.a_topo = qr_arena_array(ar, (size_t)a->n_nodes + 1, sizeof(int));
    cx.bmap = qr_arena_array(ar, (size_t)b->n_values + 1, sizeof(int));
    cx.bmatch = qr_arena_array(ar, (size_t)b->n_values + 1, sizeof(int));
    out->m = qr_arena_array(ar, (size_t)b->n_nodes + 1, sizeof(QrMatch));
    out->unmatched_a = qr_arena_array(ar, (size_t)a->n_nodes + 1, sizeof(int));
    out->unmatched_why = qr_arena_array(ar, (size_t)a->n_nodes + 1, sizeof(char *));
    if (!out->unmatched_why || !cx.unit_of || !cx.unit_out || !cx.unit_used || !cx.a_topo || !cx.bmap || !cx.bmatch || !out->m || !out->unmatched_a)
        return qr_errf(QR_ERR_NOMEM, "out of memory matching the models");
    for (int i = 0; i < a->n_nodes; i++) cx.a_topo[a->order[i]] = i;
    QrStrMap a_names;                                   /* analysis node name -> node */
    QR_TRY(qr_strmap_init(&a_names, ar, (uint32_t)a->n_nodes + 1));
    for (int i = 0; i < a->n_nodes; i++) QR_TRY(qr_strmap_put(&a_names, ar, a->nodes[i].name, i));
    for (int v = 0; v < b->n_values; v++) cx.bmap[v] = cx.bmatch[v] = -1;
    /* The same graph on both sides (single-model form: the baseline is the analysis model with its
     * quantizers disabled): every compute node pairs with itself, at the value its consumers see. */
    bool same = b->n_nodes == a->n_nodes && b->n_values == a->n_values;
    for (int i = 0; same && i < b->n_nodes; i++)
        same = !strcmp(b->nodes[i].name, a->nodes[i].name) && !strcmp(b->nodes[i].op_type, a->nodes[i].op_type) &&
               b->nodes[i].n_out == a->nodes[i].n_out && (!b->nodes[i].n_out || b->nodes[i].out[0] == a->nodes[i].out[0]);
    if (same) {
        qr__m_same_graph(&cx, out);
        return QR_OK;
    }
    qr__m_units(&cx);
    /* Graph inputs: by name, else by position. */
    for (int i = 0; i < b->n_inputs; i++) {
        int bv = b->inputs[i], av = qr_graph_find(a, b->values[bv].name);
        bool is_input = false;
        for (int j = 0; av >= 0 && j < a->n_inputs; j++) is_input |= a->inputs[j] == av;
        if (!is_input) av = i < a->n_inputs ? a->inputs[i] : -1;
        cx.bmap[bv] = av;
    }
    for (int oi = 0; oi < b->n_nodes; oi++) {
        int bi = b->order[oi];
        if (!qr_match_is_compute(b, bi)) {
            /* Non-compute nodes (Identity, Cast...) pass their input's mapping through. */
            const QrNode *bn = &b->nodes[bi];
            if (bn->n_in && bn->in[0] >= 0 && bn->out[0] >= 0 && cx.bmap[bn->in[0]] >= 0) cx.bmap[bn->out[0]] = cx.bmap[bn->in[0]];
            /* a quantized baseline's own Q -> DQ: the value after it is still its producer's (a Relu reading it
             * may be fused into the analysis producer, step 4) */
            if (bn->n_in && bn->in[0] >= 0 && bn->out[0] >= 0 && cx.bmatch[bn->in[0]] >= 0 &&
                (!strcmp(bn->op_type, "QuantizeLinear") || !strcmp(bn->op_type, "DequantizeLinear")))
                cx.bmatch[bn->out[0]] = cx.bmatch[bn->in[0]];
            continue;
        }
        const QrNode *bn = &b->nodes[bi];
        int mi = out->n++;
        QrMatch *m = &out->m[mi];
        m->b_node = bi;
        m->b_value = bn->out[0];
        m->a_node = m->a_value = m->a_quant = m->a_op = -1;
        m->equiv_rel = NAN;
        cx.bmatch[m->b_value] = mi;
        /* 1. node name */
        int ai = qr_strmap_get(&a_names, bn->name);
        if (ai >= 0 && cx.unit_of[ai] == ai && !cx.unit_used[ai] && qr__m_ops_compatible(bn->op_type, qr_match_canon(&a->nodes[ai])))
            qr__m_assign(&cx, out, mi, ai, QR_MM_NODE_NAME);
        if (m->a_node >= 0) continue;
        qr__m_by_tensor_name(&cx, out, mi, bn);
        if (m->a_node >= 0) continue;
        if (qr__m_by_structure(&cx, out, mi, bn)) continue;
        qr__m_fused_act(&cx, qa, out, mi, bi, bn);
    }
    for (int oi = 0; oi < a->n_nodes; oi++) {
        int ai = a->order[oi];
        if (cx.unit_of[ai] == ai && !cx.unit_used[ai] && qr_match_is_compute(a, ai) && a->nodes[ai].n_in > 0)
            out->unmatched_a[out->n_unmatched_a++] = ai;
        else if (cx.unit_of[ai] == ai && !cx.unit_used[ai] && strcmp(qr_match_canon(&a->nodes[ai]), a->nodes[ai].op_type))
            out->unmatched_a[out->n_unmatched_a++] = ai;     /* QOperator nodes have integer outputs */
    }
    for (int i = 0; i < out->n_unmatched_a; i++) out->unmatched_why[i] = "no baseline counterpart";
    return QR_OK;
}

static void qr_match_free(QrMatchResult *r) { qr_arena_free(&r->arena); memset(r, 0, sizeof *r); }

static QrStatus qr_match_write(const QrGraph *b, const QrGraph *a, const QrMatchResult *r,
                               const QrEquivResult *eq, const char *dir) {
    static const char *const cols[] = { "baseline_node", "baseline_op", "baseline_tensor", "analysis_node", "analysis_op",
                                  "analysis_tensor", "method", "note", "status", "equiv_rel", "equiv_max_abs" };
    QrTable t;
    QR_TRY(qr_table_init(&t, eq ? QR_ARRAY_LEN(cols) : QR_ARRAY_LEN(cols) - 1, cols));
    QrStatus st = QR_OK;
    int n_unmatched_b = 0;
    for (int i = 0; st == QR_OK && i < r->n; i++) {
        const QrMatch *m = &r->m[i];
        int row;
        st = qr_table_add_row(&t, &row);
        if (st != QR_OK) break;
        qr_table_set(&t, row, 0, b->nodes[m->b_node].name);
        qr_table_set(&t, row, 1, b->nodes[m->b_node].op_type);
        qr_table_set(&t, row, 2, b->values[m->b_value].name);
        if (m->a_node >= 0) {
            qr_table_set(&t, row, 3, a->nodes[m->a_node].name);
            qr_table_set(&t, row, 4, a->nodes[m->a_node].op_type);
            qr_table_set(&t, row, 5, a->values[m->a_value].name);
        } else n_unmatched_b++;
        qr_table_set(&t, row, 6, qr_match_method_name(m->method));
        st = qr_table_set(&t, row, 7, m->note ? m->note : "");
        if (st == QR_OK && m->a_node >= 0) st = qr_table_set(&t, row, 8, r->verified_run ? qr_match_verify_name(m->verify) : "not checked");
        if (st == QR_OK && m->equiv_rel == m->equiv_rel) st = qr_table_setf(&t, row, 9, "%.3g", m->equiv_rel);
        if (st == QR_OK && eq && eq->max_abs[i] == eq->max_abs[i]) st = qr_table_setf(&t, row, 10, "%.9g", eq->max_abs[i]);
    }
    for (int i = 0; st == QR_OK && i < r->n_unmatched_a; i++) {
        const QrNode *n = &a->nodes[r->unmatched_a[i]];
        int row;
        st = qr_table_add_row(&t, &row);
        if (st != QR_OK) break;
        qr_table_set(&t, row, 3, n->name);
        qr_table_set(&t, row, 4, n->op_type);
        qr_table_set(&t, row, 5, n->n_out && n->out[0] >= 0 ? a->values[n->out[0]].name : "");
        qr_table_set(&t, row, 6, "unmatched");
        st = qr_table_set(&t, row, 7, r->unmatched_why[i] ? r->unmatched_why[i] : "no baseline counterpart");
    }
    char *txt = NULL, *csv = NULL;
    size_t tl = 0, tc = 0, cl = 0, cc = 0;
    if (st == QR_OK) st = qr_buf_printf(&txt, &tl, &tc, "Baseline: %s\nAnalysis: %s\n%d baseline compute values, "
                                        "%d matched, %d without counterpart; %d analysis values without counterpart\n\n",
                                        b->path, a->path, r->n, r->n - n_unmatched_b, n_unmatched_b, r->n_unmatched_a);
    if (st == QR_OK && r->form) st = qr_buf_printf(&txt, &tl, &tc, "Baseline form: %s\n", r->form);
    if (st == QR_OK && r->verified_run)
        st = qr_buf_printf(&txt, &tl, &tc, "Pairs verified: %d of %d (with every quantizer disabled the analysis value reproduces "
                           "the baseline value within %g of its range; status/equiv_rel columns); %d UNVERIFIED (not used for "
                           "headlines); %d moved to their equivalent value.\n", r->n_verified, r->n_verified + r->n_unverified,
                           QR_EQUIV_TOL, r->n_unverified, r->n_repaired);
    else if (st == QR_OK) st = qr_buf_printf(&txt, &tl, &tc, "Pairs not verified: the equivalence run did not happen.\n");
    if (st == QR_OK && eq) st = qr_buf_printf(&txt, &tl, &tc, "%s\n\n", qr_match_equiv_verdict(b, r, eq, &(QrVerdict){0}));
    else if (st == QR_OK) st = qr_buf_printf(&txt, &tl, &tc, "\n");
    if (st == QR_OK && eq && eq->substituted)
        st = qr_buf_printf(&txt, &tl, &tc, "Integer weights replaced by the baseline's float weight when their quantizer is "
                           "disabled:\n%s\n", eq->substituted);
    if (st == QR_OK) st = qr_table_render_txt(&t, NULL, NULL, &txt, &tl, &tc);
    if (st == QR_OK) st = qr_table_render_csv(&t, NULL, &csv, &cl, &cc);
    QrArena pa = {0};
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&pa, "%s/" QR_BF_MATCH ".txt", dir), txt, tl);
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&pa, "%s/" QR_BF_MATCH ".csv", dir), csv, cl);
    qr_arena_free(&pa);
    free(txt);
    free(csv);
    qr_table_free(&t);
    return st;
}

/* ==== equivalence ================================================================ */

/* qr__mt_weight_far_typed's work: elements [i0, i1) of one typed weight, element i on channel (i / run) % C,
 * whose scale, zero point and limit 1.01 * scale + 1e-12 (as doubles) are sc[c], zp[c], lim[c]. */
typedef struct QrMtFar {
    const int8_t *q8;
    const uint8_t *qu;
    const float *wf;
    const double *sc, *zp, *lim;
    bool qs8;
    int64_t C, run, n, per_task;
    int64_t *far;            /* per task */
} QrMtFar;

/* Far elements among [i, i + len) on channels c, c + 1, ... (run 1: a MatMul weight along its last axis). */
static int64_t qr__mt_far_cols(const QrMtFar *f, int64_t i, int64_t c, int64_t len) {
    const double *sc = f->sc + c, *zp = f->zp + c, *lim = f->lim + c;
    const float *w = f->wf + i;
    int64_t far = 0;
    if (f->qs8) {
        const int8_t *q = f->q8 + i;
        for (int64_t k = 0; k < len; k++) far += fabs((double)w[k] - ((double)q[k] - zp[k]) * sc[k]) > lim[k];
    } else {
        const uint8_t *q = f->qu + i;
        for (int64_t k = 0; k < len; k++) far += fabs((double)w[k] - ((double)q[k] - zp[k]) * sc[k]) > lim[k];
    }
    return far;
}

static void qr__mt_far_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrMtFar *f = ctx;
    int64_t i = t * f->per_task, i1 = QR_MIN(f->n, i + f->per_task), far = 0;
    int64_t c = (i / f->run) % f->C, j = i % f->run;
    while (i < i1) {
        if (f->run == 1) {                          /* rows of C channels, a row's channels in one loop */
            int64_t len = QR_MIN(f->C - c, i1 - i);
            far += qr__mt_far_cols(f, i, c, len);
            i += len;
            c = 0;
            continue;
        }
        const double sc = f->sc[c], zp = f->zp[c], lim = f->lim[c];
        for (int64_t e = i + QR_MIN(f->run - j, i1 - i); i < e; i++) {
            double dq = ((double)(f->qs8 ? (int64_t)f->q8[i] : (int64_t)f->qu[i]) - zp) * sc;
            far += fabs((double)f->wf[i] - dq) > lim;
        }
        j = 0;
        c = c + 1 == f->C ? 0 : c + 1;
    }
    f->far[t] = far;
}

/* qr_match_weight_consistent's count of far elements for the common types (8-bit integers, float32
 * scales and weight, 8-bit or no zero points) in typed loops over channel runs: the same doubles
 * as the element-by-element accessors give (a ViT-B/16's 85M weights took 1.7 s through them, one
 * integer division per element for the channel), the same count; split over the pool in runs of 64K
 * elements (a count: any split gives it). False (nothing counted) for other types. nch and inner: as the
 * caller computed them (nch 1: per tensor). */
static bool qr__mt_weight_far_typed(const QrTensor *qi, const QrTensor *s, const QrTensor *z, const QrTensor *w, int64_t nch,
                                    int64_t inner, int64_t *far_out) {
    const bool qs8 = qi->dtype == QR_DT_S8, zs8 = z && z->data && z->dtype == QR_DT_S8;
    if ((!qs8 && qi->dtype != QR_DT_U8) || s->dtype != QR_DT_F32 || w->dtype != QR_DT_F32 || !w->data || w->numel < qi->numel ||
        (z && z->data && ((z->dtype != QR_DT_S8 && z->dtype != QR_DT_U8) || (z->numel > 1 && z->numel < nch))))
        return false;
    /* element i = (o * C + c) * run + j: channel c (the caller's (i / inner) % nch) */
    const int64_t n = qi->numel, C = nch > 1 ? nch : 1, run = nch > 1 ? inner : n;
    if (run < 1 || n % (C * run)) return false;
    const int64_t chunk = 65536, n_tasks = (n + chunk - 1) / chunk;
    int64_t one = 0, *far = n_tasks > 1 ? malloc((size_t)n_tasks * sizeof *far) : &one;
    double *pc = malloc(3 * (size_t)C * sizeof *pc);
    if (!far || !pc) { if (far != &one) free(far); free(pc); return false; }
    const float *sf = s->data;
    for (int64_t c = 0; c < C; c++) {
        int64_t zc = z && z->data ? (z->numel > 1 ? c : 0) : -1;
        pc[c] = sf[c];
        pc[C + c] = zc < 0 ? 0 : zs8 ? (double)((const int8_t *)z->data)[zc] : (double)((const uint8_t *)z->data)[zc];
        pc[2 * C + c] = 1.01 * pc[c] + 1e-12;
    }
    QrMtFar f = { qi->data, qi->data, w->data, pc, pc + C, pc + 2 * C, qs8, C, run, n, n_tasks > 1 ? chunk : n, far };
    if (n_tasks > 1) qr_pool_for(n_tasks, qr__mt_far_task, &f);
    else if (n > 0) qr__mt_far_task(&f, 0, 0);
    *far_out = 0;
    for (int64_t t = 0; t < n_tasks; t++) *far_out += far[t];
    if (far != &one) free(far);
    free(pc);
    return true;
}

/* Does float weight w quantize to the integer weight of q? At most 1% of the
 * elements may be more than one quantization step away (clipping). */
static bool qr_match_weight_consistent(const QrGraph *a, const QrQuantizer *q, const QrTensor *w) {
    const QrTensor *qi = &a->values[q->int_value].t;
    const QrTensor *s = q->scale_value >= 0 ? &a->values[q->scale_value].t : NULL;
    const QrTensor *z = q->zp_value >= 0 ? &a->values[q->zp_value].t : NULL;
    if (!s || !s->data || !qi->data || q->block_size) return true;        /* cannot check: trust the match */
    int64_t inner = 1, nch = s->numel;
    if (nch > 1) {
        int axis = q->axis < 0 ? q->axis + qi->rank : q->axis;
        if (axis < 0 || axis >= qi->rank || qi->dims[axis] != nch) return true;
        for (int d = axis + 1; d < qi->rank; d++) inner *= qi->dims[d];
    }
    int64_t far = 0;
    if (qr__mt_weight_far_typed(qi, s, z, w, nch, inner, &far)) return far * 100 <= qi->numel;
    for (int64_t i = 0; i < qi->numel; i++) {
        int64_t c = nch > 1 ? (i / inner) % nch : 0;
        double sc = qr_tensor_get_f64(s, c), zp = z && z->data ? (double)qr_tensor_get_i64(z, z->numel > 1 ? c : 0) : 0;
        double dq = ((double)qr_tensor_get_i64(qi, i) - zp) * sc;
        if (fabs(qr_tensor_get_f64(w, i) - dq) > 1.01 * sc + 1e-12) far++;
    }
    return far * 100 <= qi->numel;
}

static QrStatus qr_match_dequantize_into(const QrGraph *a, const QrQuantizer *q, const QrTensor *x, float *y) {
    const QrTensor *s = q->scale_value >= 0 ? &a->values[q->scale_value].t : NULL;
    const QrTensor *z = q->zp_value >= 0 ? &a->values[q->zp_value].t : NULL;
    if (!s || !s->data || s->numel != 1 || (z && (!z->data || z->numel != 1)))
        return qr_errf(QR_ERR_UNSUPPORTED, "value '%s': only per-tensor constant scales can be dequantized for comparison",
                       a->values[q->int_value].name);
    float scale = (float)qr_tensor_get_f64(s, 0);
    int64_t zp = z ? qr_tensor_get_i64(z, 0) : 0;
    if ((x->dtype == QR_DT_S8 || x->dtype == QR_DT_U8) && zp >= -(1 << 24) && zp <= 1 << 24) {
        /* the kernel's (float)(q - zp) * scale: the same integer q - zp (it fits an int32 here),
         * so the same float and product as the loop below */
        qr_kern_init();                        /* idempotent: callers need not have run a model */
        qr_kern.q8_dequantize(x->numel, x->data, x->dtype == QR_DT_S8, (int32_t)zp, scale, y);
        return QR_OK;
    }
    for (int64_t i = 0; i < x->numel; i++) y[i] = (float)(qr_tensor_get_i64(x, i) - zp) * scale;
    return QR_OK;
}

static QrStatus qr_match_dequantize_value(const QrGraph *a, const QrQuantizer *q, const QrTensor *x, QrTensor *out) {
    memset(out, 0, sizeof *out);
    QR_TRY(qr_tensor_set_shape(out, QR_DT_F32, x->rank, x->dims));
    QR_TRY(qr_tensor_alloc_data(out));
    QrStatus st = qr_match_dequantize_into(a, q, x, out->data);
    if (st != QR_OK) qr_tensor_free_data(out);
    return st;
}

/* ==== the equivalence check's verdict (computed by analysis/session) ==== */

static void qr_match_equiv_free(QrEquivResult *r) {
    free(r->substituted);
    r->substituted = NULL;
    free(r->max_abs);
    free(r->ref_absmax);
    r->max_abs = r->ref_absmax = NULL;
}

static const char *qr_match_equiv_verdict(const QrGraph *b, const QrMatchResult *m, const QrEquivResult *r, QrVerdict *out) {
    char *buf = out->text;
    const size_t cap = sizeof out->text;
    size_t o = 0;
    if (r->worst_match < 0) {
        o += (size_t)snprintf(buf + o, cap - o, "Equivalence check: no model output could be compared.");
    } else if (r->equivalent || (r->n_weight_mismatch == 0 && r->worst_rel <= 1e-3)) {
        o += (size_t)snprintf(buf + o, cap - o, "Equivalence check: PASS — with every quantizer disabled the analysis "
                              "model reproduces the baseline outputs (worst relative difference %.3g at '%s').",
                              r->worst_rel, b->values[m->m[r->worst_match].b_value].name);
    } else {
        o += (size_t)snprintf(buf + o, cap - o, "Equivalence check: WARNING — with every quantizer disabled the "
                              "analysis model does NOT reproduce the baseline: output '%s' differs by %.3g of its range. "
                              "The two models differ beyond quantization; check that the right float model was given.",
                              b->values[m->m[r->worst_match].b_value].name, r->worst_rel);
    }
    if (r->n_weight_mismatch && o < cap)
        o += (size_t)snprintf(buf + o, cap - o, " %d baseline float weight%s do%s not quantize to the analysis "
                              "model's integer weights: the float model is not the one that was quantized.",
                              r->n_weight_mismatch, r->n_weight_mismatch == 1 ? "" : "s", r->n_weight_mismatch == 1 ? "es" : "");
    if (r->n_not_disabled && o < cap)
        o += (size_t)snprintf(buf + o, cap - o, " %d quantizer%s could not be disabled (integer nodes without a float twin), "
                              "so the check includes their quantization error.", r->n_not_disabled, r->n_not_disabled == 1 ? "" : "s");
    if (r->n_substituted && o < cap)
        o += (size_t)snprintf(buf + o, cap - o, " %d integer weight%s replaced by the matched baseline float weight.",
                              r->n_substituted, r->n_substituted == 1 ? " was" : "s were");
    if (r->n_no_float_weight && o < cap)
        snprintf(buf + o, cap - o, " %d integer weight%s no float counterpart and stay%s quantized.",
                 r->n_no_float_weight, r->n_no_float_weight == 1 ? " has" : "s have", r->n_no_float_weight == 1 ? "s" : "");
    return buf;
}
