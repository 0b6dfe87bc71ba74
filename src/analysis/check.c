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

static QrStatus qr_check_write(const QrGraph *g, const QrQuantTable *qt, const QrStats *stats, const char *path,
                               QrCheckSummary *sum) {
    char *b = NULL;
    size_t len = 0, cap = 0;
    QrStatus st = QR_OK;
    QrCheckSummary s = { 0, 0, 0 };
#define P(...) do { if (st == QR_OK) st = qr_buf_printf(&b, &len, &cap, __VA_ARGS__); } while (0)
    P("Model check of %s\n%d nodes, %d quantizers\n\n", g->path, g->n_nodes, qt->n);

    /* 1. Fusable patterns left unfused: a quantizer between a conv-like op and BN/activation/Add. */
    P("1. Fusable patterns left unfused (a quantizer sits between ops a deployment compiler would fuse)\n");
    for (int oi = 0; oi < g->n_nodes; oi++) {
        int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        if (!qr__chk_is(n, "Conv", "Gemm") && strcmp(n->op_type, "MatMul")) continue;
        bool q1 = false;
        int nx = qr__chk_next(g, n->out[0], &q1);
        if (nx < 0) continue;
        const QrNode *m = &g->nodes[nx];
        bool bn = !strcmp(m->op_type, "BatchNormalization");
        bool act = qr__chk_is(m, "Relu", "Clip");
        bool add = qr__chk_is(m, "Add", NULL);
        if (!bn && !act && !add) continue;
        char chain[512];
        snprintf(chain, sizeof chain, "%s '%s' -> %s%s '%s'", n->op_type, n->name, q1 ? "[Q/DQ] -> " : "", m->op_type, m->name);
        bool q2 = false;
        if (bn) {
            int nx2 = qr__chk_next(g, m->out[0], &q2);
            if (nx2 >= 0 && qr__chk_is(&g->nodes[nx2], "Relu", "Clip")) {
                size_t l = strlen(chain);
                snprintf(chain + l, sizeof chain - l, " -> %s%s '%s'", q2 ? "[Q/DQ] -> " : "", g->nodes[nx2].op_type,
                         g->nodes[nx2].name);
            }
        }
        if (q1 || q2) { P("  %s\n", chain); s.n_unfused++; }
    }
    if (!s.n_unfused) P("  none\n");

    /* 2. Sharing: one weight or one quantizer used by different compute nodes. A QuantizeLinear and
     * its own DequantizeLinear reading one scale are one quantizer, not sharing; identical
     * constants an exporter merged (zero points, constant-valued tensors) are listed apart. */
    P("\n2. Shared weights and quantizers (a weight or quantizer used by different compute nodes)\n");
    int n_merged = 0;
    char *merged = NULL;
    size_t ml = 0, mc = 0;
    int *cn = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
    if (!cn && st == QR_OK) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int v = 0; st == QR_OK && v < g->n_values; v++) {
        const QrValue *val = &g->values[v];
        if (!val->is_init) continue;
        /* quantizers reading it as scale / zero point (through Identity copies) */
        int n_scale = 0, n_zp = 0;
        char who[512] = "";
        size_t wl = 0;
        for (int i = 0; i < qt->n; i++) {
            const QrQuantizer *q = &qt->q[i];
            bool sc = q->scale_value >= 0 && qr__chk_root(g, q->scale_value) == v;
            bool zp = q->zp_value >= 0 && qr__chk_root(g, q->zp_value) == v;
            if (!sc && !zp) continue;
            n_scale += sc;
            n_zp += zp;
            int on = q->float_value >= 0 ? q->float_value : q->int_value;
            if (wl < sizeof who - 1)
                wl += (size_t)snprintf(who + wl, sizeof who - wl, "%s'%s'", wl ? ", " : "", on >= 0 ? g->values[on].name : "?");
        }
        int n_direct = 0;
        int nc = n_scale + n_zp ? 0 : qr__chk_compute_users(g, v, cn, &n_direct);   /* a quantizer's parameter: above */
        bool constant = qr__chk_all_equal(&val->t), dedup = n_direct <= 1;
        if (n_scale > 1) {
            P("  quantizer scale '%s' is used by %d quantizers (one observer shared by %s)\n", val->name, n_scale, who);
            s.n_shared++;
        } else if (n_zp > 1 && st == QR_OK) {
            st = qr_buf_printf(&merged, &ml, &mc, "  zero point '%s' (%s) read by %d quantizers\n", val->name,
                               constant ? "identical values" : "per-channel", n_zp);
            n_merged++;
        }
        if (nc > 1 && !constant && !dedup) {
            P("  weight '%s' is used by %d compute nodes:", val->name, nc);
            for (int k = 0; k < nc; k++) P("%s '%s'", k ? "," : "", g->nodes[cn[k]].name);
            P("\n");
            s.n_shared++;
        } else if (nc > 1 && st == QR_OK) {
            if (constant)
                st = qr_buf_printf(&merged, &ml, &mc, "  constant '%s' (every element %g) read by %d compute nodes\n", val->name,
                                   val->t.data && val->t.numel ? qr_tensor_get_f64(&val->t, 0) : 0.0, nc);
            else {
                st = qr_buf_printf(&merged, &ml, &mc, "  '%s' read by %d compute nodes, %d of them through an Identity (the "
                                   "exporter merged tensors of equal value):", val->name, nc, nc - n_direct);
                for (int k = 0; st == QR_OK && k < nc; k++)
                    st = qr_buf_printf(&merged, &ml, &mc, "%s '%s'", k ? "," : "", g->nodes[cn[k]].name);
                if (st == QR_OK) st = qr_buf_printf(&merged, &ml, &mc, "\n");
            }
            n_merged++;
        }
    }
    for (int i = 0; st == QR_OK && i < qt->n; i++) {
        const QrQuantizer *q = &qt->q[i];
        if (q->kind != QR_QK_ACTIVATION || q->out_value < 0) continue;
        int users = 0;
        for (int k = 0; k < q->n_dq; k++) {
            int nd;
            users += qr__chk_compute_users(g, g->nodes[q->dq_nodes[k]].out[0], cn, &nd);
        }
        if (users > 1) {
            P("  quantizer on '%s' (%s) feeds %d compute nodes (shared: one scale for all of them)\n",
              g->values[q->float_value].name, q->q_node >= 0 ? g->nodes[q->q_node].name : "-", users);
            s.n_shared++;
        }
    }
    free(cn);
    if (!s.n_shared) P("  none\n");
    if (n_merged) P("  Identical constants merged by the exporter (not sharing: separate tensors of equal value stored once):\n%s", merged);
    free(merged);

    /* 3. Per-layer output quantization. */
    P("\n3. Output quantization of each layer\n");
    static const char *cols3[] = { "name", "op type", "input dtype", "output dtype", "axis", "scale" };
    QrTable t3;
    st = st == QR_OK ? qr_table_init(&t3, QR_ARRAY_LEN(cols3), cols3) : st;
    for (int oi = 0; st == QR_OK && oi < g->n_nodes; oi++) {
        int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        if (!qr_match_is_compute(g, ni) && qr_match_canon(n) == n->op_type) continue;
        int in_q = n->n_in && n->in[0] >= 0 ? qt->by_value[n->in[0]] : -1;
        int out_q = qt->by_float[n->out[0]];
        if (out_q < 0 && qt->by_value[n->out[0]] >= 0 && qt->q[qt->by_value[n->out[0]]].form == QR_QF_QOP_OUT)
            out_q = qt->by_value[n->out[0]];
        int row;
        char sc[96] = "";
        st = qr_table_add_row(&t3, &row);
        if (st != QR_OK) break;
        qr_table_set(&t3, row, 0, n->name);
        qr_table_set(&t3, row, 1, n->op_type);
        qr_table_set(&t3, row, 2, in_q >= 0 ? qr_dtype_name(qt->q[in_q].dtype)
                                  : n->n_in && n->in[0] >= 0 ? qr_dtype_name(g->values[n->in[0]].t.dtype) : "");
        if (out_q >= 0) {
            qr__chk_scale(sc, sizeof sc, &qt->q[out_q]);
            qr_table_set(&t3, row, 3, qr_dtype_name(qt->q[out_q].dtype));
            qr_table_setf(&t3, row, 4, "%d", qt->q[out_q].axis);
            st = qr_table_set(&t3, row, 5, sc);
        } else {
            qr_table_setf(&t3, row, 3, "%s (not quantized)", qr_dtype_name(g->values[n->out[0]].t.dtype));
        }
    }
    if (st == QR_OK) st = qr_table_render_txt(&t3, NULL, NULL, &b, &len, &cap);
    qr_table_free(&t3);

    /* 4. Weight quantization. */
    P("\n4. Weight quantization\n");
    static const char *cols4[] = { "weight", "node", "op type", "dtype", "axis", "granularity", "scale" };
    QrTable t4;
    st = st == QR_OK ? qr_table_init(&t4, QR_ARRAY_LEN(cols4), cols4) : st;
    int n_weights = 0;
    for (int i = 0; st == QR_OK && i < qt->n; i++) {
        const QrQuantizer *q = &qt->q[i];
        if (q->kind != QR_QK_WEIGHT) continue;
        int row;
        char sc[96];
        st = qr_table_add_row(&t4, &row);
        if (st != QR_OK) break;
        n_weights++;
        qr__chk_scale(sc, sizeof sc, q);
        qr_table_set(&t4, row, 0, g->values[q->float_value >= 0 ? q->float_value : q->int_value].name);
        qr_table_set(&t4, row, 1, q->owner >= 0 ? g->nodes[q->owner].name : "-");
        qr_table_set(&t4, row, 2, q->owner >= 0 ? g->nodes[q->owner].op_type : "-");
        qr_table_set(&t4, row, 3, qr_dtype_name(q->dtype));
        qr_table_setf(&t4, row, 4, "%d", q->axis);
        qr_table_set(&t4, row, 5, q->block_size ? "blocked" : q->n_scales > 1 ? "per-channel" : "per-tensor");
        st = qr_table_set(&t4, row, 6, sc);
    }
    if (st == QR_OK) st = qr_table_render_txt(&t4, NULL, NULL, &b, &len, &cap);
    qr_table_free(&t4);

    /* 5. Anomalies. */
    P("\n5. Anomalies\n");
    for (int i = 0; i < g->n_outputs; i++) {
        int v = g->outputs[i], p = g->values[v].producer;
        if (p < 0) continue;
        const QrNode *n = &g->nodes[p];
        if (!strcmp(n->op_type, "DequantizeLinear") && n->in[0] >= 0) {
            QrDType dt = g->values[n->in[0]].t.dtype;
            if (dt == QR_DT_S8 || dt == QR_DT_U8 || dt == QR_DT_S4 || dt == QR_DT_U4) {
                P("  model output '%s' is not high precision: it is quantized to %s before the output; keep the last "
                  "layer in float or int16 (high-precision output)\n", g->values[v].name, qr_dtype_name(dt));
                s.n_anomalies++;
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
            P("  quantizer on '%s' (%s): its %s grid holds [%.6g, %.6g] but the value spans [%.6g, %.6g] on this input "
              "(clipped); recalibrate or use int16\n", g->values[v].name, qr_dtype_name(q->dtype),
              q->q_node >= 0 ? g->nodes[q->q_node].name : "", lo, hi, stats[v].min, stats[v].max);
            s.n_anomalies++;
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
            P("  %s '%s': input scales differ by %.1fx (%.6g .. %.6g); the coarser input dominates the error — align "
              "the input scales or quantize this op in int16\n", n->op_type, n->name, smax / smin, smin, smax);
            s.n_anomalies++;
        }
    }
    for (int i = 0; stats && i < g->n_inputs; i++) {
        const QrStats *is = &stats[g->inputs[i]];
        if (!is->n) continue;
        double absmax = QR_MAX(fabs(is->min), fabs(is->max)), sd = sqrt(qr_stats_var(is));
        if (absmax > 16 || fabs(is->mean) > 4 * QR_MAX(sd, 1e-12)) {
            P("  input '%s' is not normalized (min %.6g, max %.6g, mean %.6g, std %.6g): normalize it (e.g. to [-1, 1] or "
              "zero mean, unit variance) before quantization\n", g->values[g->inputs[i]].name, is->min, is->max,
              is->mean, sd);
            s.n_anomalies++;
        }
    }
    if (!stats) P("  (range checks skipped: no input given)\n");
    if (!s.n_anomalies) P("  none\n");
    P("\nSummary: %d unfused pattern%s, %d shared weight%s/quantizer%s, %d weight quantizer%s, %d anomal%s\n",
      s.n_unfused, s.n_unfused == 1 ? "" : "s", s.n_shared, s.n_shared == 1 ? "" : "s", s.n_shared == 1 ? "" : "s",
      n_weights, n_weights == 1 ? "" : "s", s.n_anomalies, s.n_anomalies == 1 ? "y" : "ies");
#undef P
    if (st == QR_OK) st = qr_file_write_atomic(path, b, len);
    free(b);
    if (sum) *sum = s;
    return st;
}
