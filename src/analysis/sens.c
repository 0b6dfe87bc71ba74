/* analysis/sens — implementation. See sens.h.
 *
 * Incremental re-execution: the reference configuration (all quantizers off for
 * one-on, all on for off-one) runs once and every value it produces is cached.
 * A row toggles a few quantizers; only the nodes downstream of their
 * DequantizeLinear nodes (the cone) can change, so only those run, reading
 * everything else from the cache through the executor's feed. */

static const char *qr_sens_type_name(QrSensType t) {
    return t == QR_SENS_ACTIVATION ? "activation" : t == QR_SENS_WEIGHT ? "weight" : "both";
}

typedef struct QrSensCache {
    QrTensor *vals;          /* per twin value: copy from the reference run */
} QrSensCache;

static QrStatus qr__sens_cache_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrSensCache *c = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    QrTensor *d = &c->vals[value];
    if (d->data) return QR_OK;
    QR_TRY(qr_tensor_set_shape(d, t->dtype, t->rank, t->dims));
    QR_TRY(qr_tensor_alloc_data(d));
    memcpy(d->data, t->data, qr_tensor_nbytes(t));
    return QR_OK;
}

/* Nodes whose result can change when quantizers q[0..n) toggle: their DQ nodes
 * and everything downstream. Returns whether a graph output is reached. */
static bool qr__sens_cone(const QrGraph *g, const QrQuantTable *qt, const int *q, int n, bool *live, int *stack) {
    memset(live, 0, (size_t)g->n_nodes * sizeof(bool));
    int sp = 0;
    for (int k = 0; k < n; k++) {
        const QrQuantizer *qq = &qt->q[q[k]];
        for (int d = 0; d < qq->n_dq; d++)
            if (!live[qq->dq_nodes[d]]) { live[qq->dq_nodes[d]] = true; stack[sp++] = qq->dq_nodes[d]; }
    }
    bool reaches = false;
    while (sp) {
        const QrNode *nd = &g->nodes[stack[--sp]];
        for (int o = 0; o < nd->n_out; o++) {
            int v = nd->out[o];
            if (v < 0) continue;
            if (g->values[v].is_output) reaches = true;
            const QrUse *u;
            int nu = qr_graph_readers(g, v, &u);
            for (int r = 0; r < nu; r++)
                if (!live[u[r].node]) { live[u[r].node] = true; stack[sp++] = u[r].node; }
        }
    }
    return reaches;
}

static QrStatus qr__sens_outputs_metrics(const QrSession *s, const QrGraph *g, const QrRunOpts *o, QrMetrics *m) {
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof(QrTensor));
    if (!outs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrStatus st = qr_run(g, s->inputs, o, outs);
    if (st == QR_OK) st = qr_compare_outputs(s, outs, m);
    for (int k = 0; k < g->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    return st;
}

static int qr__sens_cmp_metric;
static bool qr__sens_cmp_reverse;
static int qr__sens_cmp(const void *pa, const void *pb) {
    const QrSensRow *a = pa, *b = pb;
    double x = qr_metric_badness(&a->m, (QrMetricKind)qr__sens_cmp_metric);
    double y = qr_metric_badness(&b->m, (QrMetricKind)qr__sens_cmp_metric);
    int c = x > y ? -1 : x < y ? 1 : 0;
    if (qr__sens_cmp_reverse) c = -c;
    if (!c) c = strcmp(a->name, b->name);
    if (!c) c = (int)a->type - (int)b->type;
    return c;
}

/* Rows: per owner node, its activation quantizers, its weight quantizers, both. */
static QrStatus qr__sens_rows(QrSession *s, QrSensResult *r) {
    const QrGraph *g = &s->tw.g;
    const QrQuantTable *qt = &s->qt;
    int cap = qt->n * 3 + 4;
    r->rows = qr_arena_array(&r->arena, (size_t)cap, sizeof(QrSensRow));
    bool *done = calloc((size_t)qt->n + 1, sizeof(bool));
    if (!r->rows || !done) { free(done); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int i = 0; i < qt->n; i++) {
        const QrQuantizer *q = &qt->q[i];
        if (done[i] || q->kind == QR_QK_BIAS) continue;
        if (!q->can_disable) { done[i] = true; r->n_skipped++; continue; }
        int owner = q->owner;
        QrSensRow act = { .node = owner, .type = QR_SENS_ACTIVATION }, wt = { .node = owner, .type = QR_SENS_WEIGHT };
        for (int j = i; j < qt->n; j++) {
            const QrQuantizer *p = &qt->q[j];
            if (done[j] || p->kind == QR_QK_BIAS || !p->can_disable || p->owner != owner) continue;
            /* graph-input quantizers (owner -1) are one row each */
            if (owner < 0 && j != i) continue;
            QrSensRow *row = p->kind == QR_QK_ACTIVATION ? &act : &wt;
            if (row->n_q < QR_ARRAY_LEN(row->q)) { row->q[row->n_q++] = j; done[j] = true; }
        }
        const char *name, *op;
        if (owner >= 0) {
            name = g->nodes[owner].name;
            int src = s->tw.origin[owner];
            op = src >= 0 ? s->a->nodes[src].op_type : g->nodes[owner].op_type;
        } else {
            name = q->float_value >= 0 ? g->values[q->float_value].name : g->values[q->int_value].name;
            op = "Input";
        }
        QrSensRow *rows[3] = { act.n_q ? &act : NULL, wt.n_q ? &wt : NULL, NULL };
        QrSensRow both = { .node = owner, .type = QR_SENS_BOTH };
        if (act.n_q && wt.n_q) {
            for (int k = 0; k < act.n_q && both.n_q < QR_ARRAY_LEN(both.q); k++) both.q[both.n_q++] = act.q[k];
            for (int k = 0; k < wt.n_q && both.n_q < QR_ARRAY_LEN(both.q); k++) both.q[both.n_q++] = wt.q[k];
            rows[2] = &both;
        }
        for (int k = 0; k < 3; k++) {
            if (!rows[k] || r->n == cap) continue;
            rows[k]->name = name;
            rows[k]->op_type = op;
            r->rows[r->n++] = *rows[k];
        }
    }
    free(done);
    return QR_OK;
}

static QrStatus qr_sens_run(QrSession *s, const QrSensOpts *o, QrSensResult *r) {
    memset(r, 0, sizeof *r);
    r->opts = *o;
    QR_TRY(qr_session_run_baseline(s));
    QrStatus st = qr__sens_rows(s, r);
    if (st != QR_OK) { qr_sens_free(r); return st; }
    const QrGraph *g = &s->tw.g;
    int nq = s->qt.n, nv = g->n_values;
    bool *mask = malloc((size_t)nq + 1);
    bool *live = malloc((size_t)g->n_nodes + 1);
    int *stack = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
    const QrTensor **feed = calloc((size_t)nv + 1, sizeof *feed);
    QrSensCache cache = { calloc((size_t)nv + 1, sizeof(QrTensor)) };
    QrOverrides ov = {0};
    st = mask && live && stack && feed && cache.vals ? qr_session_overrides_alloc(s, &ov) : qr_errf(QR_ERR_NOMEM, "out of memory");
    /* Reference run, every value cached. */
    if (st == QR_OK) {
        for (int i = 0; i < nq; i++) mask[i] = o->off_one;
        qr_session_overrides(s, mask, &ov);
        QrRunOpts ro = qr_session_run_opts(&ov, o->full_reruns ? NULL : qr__sens_cache_tap, &cache);
        ro.n_exec = &r->n_exec;
        st = qr__sens_outputs_metrics(s, g, &ro, &r->reference);
        if (st != QR_OK) st = qr_err_wrap(st, "sensitivity reference run");
    }
    int kept = 0;
    for (int k = 0; st == QR_OK && k < r->n; k++) {
        qr_step(&s->progress, k, r->n);
        QrSensRow *row = &r->rows[k];
        bool reaches = qr__sens_cone(g, &s->qt, row->q, row->n_q, live, stack);
        if (!reaches) { r->n_skipped += row->type == QR_SENS_BOTH ? 0 : row->n_q; continue; }
        for (int i = 0; i < nq; i++) mask[i] = o->off_one;
        for (int j = 0; j < row->n_q; j++) mask[row->q[j]] = !o->off_one;
        qr_session_overrides(s, mask, &ov);
        QrRunOpts ro = qr_session_run_opts(&ov, NULL, NULL);
        ro.n_exec = &row->n_exec;
        if (!o->full_reruns) {
            for (int v = 0; v < nv; v++) {
                int p = g->values[v].producer;
                feed[v] = p >= 0 && !live[p] && cache.vals[v].data ? &cache.vals[v] : NULL;
            }
            ro.live = live;
            ro.feed = feed;
        }
        st = qr__sens_outputs_metrics(s, g, &ro, &row->m);
        if (st != QR_OK) st = qr_err_wrap(st, "sensitivity of '%s' (%s)", row->name, qr_sens_type_name(row->type));
        r->n_exec += row->n_exec;
        r->rows[kept++] = *row;
    }
    if (st == QR_OK) {
        r->n = kept;
        r->n_full = (int64_t)(r->n + 1) * g->n_nodes;
        qr__sens_cmp_metric = o->metric;
        qr__sens_cmp_reverse = o->reverse;
        qsort(r->rows, (size_t)r->n, sizeof *r->rows, qr__sens_cmp);
    }
    if (cache.vals) for (int v = 0; v < nv; v++) qr_tensor_free_data(&cache.vals[v]);
    free(cache.vals);
    free(mask);
    free(live);
    free(stack);
    free(feed);
    qr_session_overrides_free(&ov);
    if (st != QR_OK) qr_sens_free(r);
    return st;
}

static void qr_sens_free(QrSensResult *r) {
    qr_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}

static void qr__sens_num(char *buf, size_t n, double v, const char *fmt) {
    if (v != v) snprintf(buf, n, "nan");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else snprintf(buf, n, fmt, v);
}

static QrStatus qr_sens_write(const QrSession *s, const QrSensResult *r, const char *dir) {
    static const char *const cols[] = { "op_name", "sensitive_type", "op_type", "L1", "Cosine", "MSE", "KL", "SQNR" };
    QrTable tt = {0}, tc = {0};
    char *txt = NULL, *csv = NULL, *js = NULL;
    size_t tl = 0, tcap = 0, cl = 0, ccap = 0, jl = 0;
    QrStatus st = qr_table_init(&tt, QR_ARRAY_LEN(cols), cols);
    if (st == QR_OK) st = qr_table_init(&tc, QR_ARRAY_LEN(cols), cols);
    for (int k = 0; st == QR_OK && k < r->n; k++) {
        const QrSensRow *row = &r->rows[k];
        double v[] = { row->m.l1, row->m.cosine, row->m.mse, row->m.kl, row->m.sqnr };
        for (int pass = 0; pass < 2 && st == QR_OK; pass++) {
            QrTable *t = pass ? &tc : &tt;
            int ri;
            st = qr_table_add_row(t, &ri);
            if (st != QR_OK) break;
            qr_table_set(t, ri, 0, row->name);
            qr_table_set(t, ri, 1, qr_sens_type_name(row->type));
            qr_table_set(t, ri, 2, row->op_type);
            for (int j = 0; j < 5; j++) {
                char b[64];
                qr__sens_num(b, sizeof b, v[j], pass ? "%.9g" : "%.7f");
                qr_table_set(t, ri, 3 + j, b);
            }
        }
    }
    const char *mode = r->opts.off_one ? "off-one (every quantizer on except the row's)" : "one-on (only the row's quantizers on)";
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &tl, &tcap, "Quantization sensitivity, %s; metrics at the model output(s) against the "
                           "baseline; sorted by %s%s.\nReference (%s): L1 %.7g, Cosine %.7f, SQNR %.4f dB.\n"
                           "Node executions: %lld incremental vs %lld for full re-runs (%.1f%%); %d quantizer%s skipped.\n\n",
                           mode, qr_metric_name(r->opts.metric), r->opts.reverse ? " (reversed)" : ", worst first",
                           r->opts.off_one ? "all on" : "all off", r->reference.l1, r->reference.cosine, r->reference.sqnr,
                           (long long)r->n_exec, (long long)r->n_full,
                           r->n_full ? 100.0 * (double)r->n_exec / (double)r->n_full : 0.0, r->n_skipped,
                           r->n_skipped == 1 ? "" : "s");
    if (st == QR_OK) st = qr_table_render_txt(&tt, NULL, NULL, &txt, &tl, &tcap);
    if (st == QR_OK) st = qr_table_render_csv(&tc, NULL, &csv, &cl, &ccap);
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "mode", r->opts.off_one ? "off-one" : "one-on");
    qr_json_kv_str(&j, "metric", qr_metric_name(r->opts.metric));
    qr_json_kv_bool(&j, "reverse", r->opts.reverse);
    qr_json_kv_int(&j, "node_executions", r->n_exec);
    qr_json_kv_int(&j, "node_executions_full_reruns", r->n_full);
    qr_json_key(&j, "ops");
    qr_json_arr_begin(&j);
    for (int k = 0; k < r->n; k++) {
        const QrSensRow *row = &r->rows[k];
        qr_json_obj_begin_compact(&j);
        qr_json_kv_str(&j, "op_name", row->name);
        qr_json_kv_str(&j, "sensitive_type", qr_sens_type_name(row->type));
        qr_json_kv_str(&j, "op_type", row->op_type);
        qr_json_kv_num(&j, "L1", row->m.l1);
        qr_json_kv_num(&j, "Cosine", row->m.cosine);
        qr_json_kv_num(&j, "MSE", row->m.mse);
        qr_json_kv_num(&j, "KL", row->m.kl);
        qr_json_kv_num(&j, "SQNR", row->m.sqnr);     /* inf (identical) is written as null */
        qr_json_obj_end(&j);
    }
    qr_json_arr_end(&j);
    qr_json_obj_end(&j);
    if (st == QR_OK) st = qr_json_finish(&j, &js, &jl);
    else qr_json_free(&j);
    QR_UNUSED(s);
    if (st == QR_OK) {
        QrArena a = {0};
        st = qr_file_write_atomic(qr_arena_printf(&a, "%s/sensitive_ops.txt", dir), txt, tl);
        if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/sensitive_ops.csv", dir), csv, cl);
        if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/sensitive_ops.json", dir), js, jl);
        qr_arena_free(&a);
    }
    qr_table_free(&tt);
    qr_table_free(&tc);
    free(txt);
    free(csv);
    free(js);
    return st;
}

/* ==== whole-graph evaluation of a mask, cumulative error ============================ */

typedef struct QrEvalTap {
    QrSession *s;
    int *match_of;           /* per twin value: first match whose vis it is */
    int *next;               /* per match */
    QrMetrics *per_match;
    bool kl;
} QrEvalTap;

static QrStatus qr__sens_eval_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrEvalTap *e = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    for (int mi = e->match_of[value]; mi >= 0; mi = e->next[mi]) {
        const QrTensor *x = &e->s->base[mi];
        if (!x->data) continue;
        QrTensor f = {0};
        if (qr_session_visible_f32(e->s, mi, t, &f) != QR_OK) { qr_err_clear(); continue; }
        if (f.numel == x->numel) qr_metrics_compute_ex(x->data, f.data, x->numel, e->kl, &e->per_match[mi]);
        qr_tensor_free_data(&f);
    }
    return QR_OK;
}

static QrStatus qr_sens_eval_mask(QrSession *s, const bool *enabled, QrMetrics *out, QrMetrics *per_match,
                                  bool per_match_kl) {
    QR_TRY(qr_session_run_baseline(s));
    const QrGraph *g = &s->tw.g;
    QrOverrides ov = {0};
    QR_TRY(qr_session_overrides_alloc(s, &ov));
    QrEvalTap e = { s, NULL, NULL, per_match, per_match_kl };
    QrStatus st = QR_OK;
    if (per_match) {
        e.match_of = malloc(((size_t)g->n_values + 1) * sizeof(int));
        e.next = malloc(((size_t)s->m.n + 1) * sizeof(int));
        if (!e.match_of || !e.next) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int v = 0; st == QR_OK && v < g->n_values; v++) e.match_of[v] = -1;
        for (int i = s->m.n - 1; st == QR_OK && i >= 0; i--) {
            per_match[i].n = 0;
            per_match[i].cosine = per_match[i].sqnr = per_match[i].l1 = per_match[i].mse = per_match[i].kl = NAN;
            if (s->vis[i] < 0) continue;
            e.next[i] = e.match_of[s->vis[i]];
            e.match_of[s->vis[i]] = i;
        }
    }
    if (st == QR_OK) {
        qr_session_overrides(s, enabled, &ov);
        QrRunOpts ro = qr_session_run_opts(&ov, per_match ? qr__sens_eval_tap : NULL, &e);
        st = qr__sens_outputs_metrics(s, g, &ro, out);
    }
    free(e.match_of);
    free(e.next);
    qr_session_overrides_free(&ov);
    return st;
}

static QrStatus qr_accum_run(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk, QrMetricKind metric,
                             QrAccum *a) {
    memset(a, 0, sizeof *a);
    a->metric = metric;
    int nq = s->qt.n;
    bool *mask = malloc((size_t)nq + 1);
    QrMetrics *pm = calloc((size_t)s->m.n + 1, sizeof *pm);
    if (!mask || !pm) { free(mask); free(pm); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    static const char *const base_names[] = { "weight_only", "activation_only", "full" };
    static char topk_names[12][32];
    a->n_settings = 3;
    for (int i = 0; i < n_topk && a->n_settings < 15 && sens && i < 12; i++) {
        snprintf(topk_names[i], sizeof topk_names[i], "all_but_top%d", topk[i]);
        a->setting[a->n_settings++] = topk_names[i];
    }
    for (int k = 0; k < 3; k++) a->setting[k] = base_names[k];
    a->val = malloc(((size_t)s->m.n * (size_t)a->n_settings + 1) * sizeof(double));
    QrStatus st = a->val ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; st == QR_OK && k < a->n_settings; k++) {
        qr_step(&s->progress, k, a->n_settings);
        for (int i = 0; i < nq; i++) {
            QrQuantKind kind = s->qt.q[i].kind;
            mask[i] = k == 0 ? kind != QR_QK_ACTIVATION : k == 1 ? kind == QR_QK_ACTIVATION : true;
        }
        if (k >= 3) {
            /* all on except every quantizer of the top-k distinct sensitive nodes */
            int want = topk[k - 3], seen = 0;
            const char *names[256];
            for (int r = 0; r < sens->n && seen < want && seen < 256; r++) {
                bool dup = false;
                for (int j = 0; j < seen; j++) if (!strcmp(names[j], sens->rows[r].name)) dup = true;
                if (dup) continue;
                names[seen++] = sens->rows[r].name;
                for (int j = 0; j < sens->rows[r].n_q; j++) mask[sens->rows[r].q[j]] = false;
            }
            /* also the node's other quantizers (a "both" row may not exist) */
            for (int i = 0; i < nq; i++) {
                int ow = s->qt.q[i].owner;
                for (int j = 0; ow >= 0 && j < seen; j++) if (!strcmp(s->tw.g.nodes[ow].name, names[j])) mask[i] = false;
            }
        }
        st = qr_sens_eval_mask(s, mask, &a->out[k], pm, metric == QR_METRIC_KL);
        for (int i = 0; st == QR_OK && i < s->m.n; i++)
            a->val[(size_t)i * (size_t)a->n_settings + (size_t)k] = pm[i].n ? qr_metric_get(&pm[i], metric) : NAN;
    }
    free(mask);
    free(pm);
    if (st != QR_OK) qr_accum_free(a);
    return st;
}

static void qr_accum_free(QrAccum *a) {
    free(a->val);
    memset(a, 0, sizeof *a);
}

static QrStatus qr_accum_write(const QrSession *s, const QrAccum *a, const char *dir) {
    char *csv = NULL;
    size_t l = 0, c = 0;
    QrStatus st = qr_buf_printf(&csv, &l, &c, "Index,mod_name,base_tensor,metric");
    for (int k = 0; st == QR_OK && k < a->n_settings; k++) st = qr_buf_printf(&csv, &l, &c, ",%s", a->setting[k]);
    if (st == QR_OK) st = qr_buf_printf(&csv, &l, &c, "\n");
    int idx = 0;
    for (int i = 0; st == QR_OK && i < s->m.n; i++) {
        if (s->vis[i] < 0) continue;
        const QrMatch *m = &s->m.m[i];
        st = qr_buf_printf(&csv, &l, &c, "%d,", idx++);
        const char *fields[2] = { s->b->nodes[m->b_node].name, s->b->values[m->b_value].name };
        for (int f = 0; st == QR_OK && f < 2; f++) {   /* RFC 4180 quoting */
            st = qr_buf_printf(&csv, &l, &c, "\"");
            for (const char *p = fields[f]; st == QR_OK && *p; p++)
                st = *p == '"' ? qr_buf_printf(&csv, &l, &c, "\"\"") : qr_buf_printf(&csv, &l, &c, "%c", *p);
            if (st == QR_OK) st = qr_buf_printf(&csv, &l, &c, "\",");
        }
        if (st == QR_OK) st = qr_buf_printf(&csv, &l, &c, "%s", qr_metric_name(a->metric));
        for (int k = 0; st == QR_OK && k < a->n_settings; k++) {
            double v = a->val[(size_t)i * (size_t)a->n_settings + (size_t)k];
            if (v != v) st = qr_buf_printf(&csv, &l, &c, ",");
            else if (isinf(v)) st = qr_buf_printf(&csv, &l, &c, ",%s", v > 0 ? "inf" : "-inf");
            else st = qr_buf_printf(&csv, &l, &c, ",%.9g", v);
        }
        if (st == QR_OK) st = qr_buf_printf(&csv, &l, &c, "\n");
    }
    if (st == QR_OK) {
        QrArena ar = {0};
        st = qr_file_write_atomic(qr_arena_printf(&ar, "%s/accumulated_error.csv", dir), csv, l);
        qr_arena_free(&ar);
    }
    free(csv);
    return st;
}
