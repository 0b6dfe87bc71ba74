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

static bool qr__chk_is(const QrNode *n, const char *a, const char *b) {
    const char *c = qr__m_canon(n);
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

    /* 2. Call counts: weights and quantizers read by more than one compute node are shared. */
    P("\n2. Shared weights and quantizers (ONNX nodes run once; a weight or quantizer used by several nodes is shared)\n");
    for (int v = 0; v < g->n_values; v++) {
        const QrValue *val = &g->values[v];
        if (!val->is_init || !qr_dtype_is_float(val->t.dtype) || val->t.numel < 2) continue;
        const QrUse *u;
        int users = qr_graph_readers(g, v, &u);
        if (users > 1) { P("  weight '%s' is read by %d nodes\n", val->name, users); s.n_shared++; }
    }
    for (int i = 0; i < qt->n; i++) {
        const QrQuantizer *q = &qt->q[i];
        if (q->kind != QR_QK_ACTIVATION || q->out_value < 0) continue;
        int users = 0;
        for (int k = 0; k < q->n_dq; k++) {
            const QrUse *u;
            users += qr_graph_readers(g, g->nodes[q->dq_nodes[k]].out[0], &u);
        }
        if (users > 1) {
            P("  quantizer on '%s' (%s) feeds %d nodes (shared: one scale for all of them)\n", g->values[q->float_value].name,
              q->q_node >= 0 ? g->nodes[q->q_node].name : "-", users);
            s.n_shared++;
        }
    }
    if (!s.n_shared) P("  none\n");

    /* 3. Per-layer output quantization. */
    P("\n3. Output quantization of each layer\n");
    static const char *cols3[] = { "name", "op type", "input dtype", "output dtype", "axis", "scale" };
    QrTable t3;
    st = st == QR_OK ? qr_table_init(&t3, QR_ARRAY_LEN(cols3), cols3) : st;
    for (int oi = 0; st == QR_OK && oi < g->n_nodes; oi++) {
        int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        if (!qr_match_is_compute(g, ni) && qr__m_canon(n) == n->op_type) continue;
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
