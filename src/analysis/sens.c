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

/* Values a reference run keeps for incremental re-runs (keep[v]): those it materializes
 * itself. A graph input is given to every run; an alias (a disabled quantizer's
 * DequantizeLinear output, unless clamped) reads another value and a substitution a given
 * tensor, so re-runs resolve them the same way and a copy (a whole float weight per
 * disabled weight quantizer) would only cost memory. */
static void qr__sens_keep(const QrGraph *g, const QrOverrides *ov, bool *keep) {
    for (int v = 0; v < g->n_values; v++) {
        bool clamped = ov->alias[v] >= 0 && (ov->clamp_lo[v] == ov->clamp_lo[v] || ov->clamp_hi[v] == ov->clamp_hi[v]);
        keep[v] = g->values[v].producer >= 0 && !ov->subst[v] && (ov->alias[v] < 0 || clamped);
    }
}

/* Nodes whose result can change when quantizers q[0..n) toggle: their DQ nodes
 * and everything downstream. Returns whether a graph output is reached. */
static bool qr__sens_cone(const QrGraph *g, const QrQuantTable *qt, const int *q, int n, int only_out, bool *live, int *stack) {
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
            if (g->values[v].is_output && (only_out < 0 || v == g->outputs[only_out])) reaches = true;
            const QrUse *u;
            int nu = qr_graph_readers(g, v, &u);
            for (int r = 0; r < nu; r++)
                if (!live[u[r].node]) { live[u[r].node] = true; stack[sp++] = u[r].node; }
        }
    }
    return reaches;
}

/* only: the graph output measured (--rank-output), -1 = all. */
static QrStatus qr__sens_outputs_metrics(const QrSession *s, const QrGraph *g, const QrRunOpts *o, int only, QrMetrics *m) {
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof(QrTensor));
    if (!outs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrStatus st = qr_run(g, s->inputs, o, outs);
    if (st == QR_OK) st = qr_compare_outputs_sel(s, outs, only, m);
    for (int k = 0; k < g->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    return st;
}

static int qr__sens_cmp_metric;
static bool qr__sens_cmp_reverse, qr__sens_cmp_off_one;
/* Most sensitive first: one-on, the largest badness with only the row's quantizers on; off-one,
 * the largest gain over the all-on reference, i.e. the smallest badness without the row's. */
static int qr__sens_cmp(const void *pa, const void *pb) {
    const QrSensRow *a = pa, *b = pb;
    double x = qr_metric_badness(&a->m, (QrMetricKind)qr__sens_cmp_metric);
    double y = qr_metric_badness(&b->m, (QrMetricKind)qr__sens_cmp_metric);
    if (qr__sens_cmp_off_one) { x = -x; y = -y; }
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

/* ==== the rows, in parallel ==========================================================
 * Rows are independent runs: the pool runs them (one thread each; kernels called inside a
 * pool task run serially) with per-thread work arrays; each row's result depends only on
 * the row, so any thread count gives the same bits. */

typedef struct QrSensWork {
    bool *mask, *live;
    int *stack;
    const QrTensor **feed;
    QrOverrides ov;
} QrSensWork;

typedef struct QrSensJob {
    QrSession *s;
    const QrSensOpts *o;
    QrSensResult *r;
    const QrSensCache *cache;
    QrSensWork *w;           /* per thread */
    bool *reach;             /* per row: toggling it can reach an output */
    int only_out;            /* --rank-output: the graph output measured, -1 = all */
} QrSensJob;

static void qr__sens_work_free(QrSensWork *w) {
    free(w->mask);
    free(w->live);
    free(w->stack);
    free(w->feed);
    qr_session_overrides_free(&w->ov);
}

static QrStatus qr__sens_work_alloc(const QrSession *s, QrSensWork *w) {
    const QrGraph *g = &s->tw.g;
    w->mask = malloc((size_t)s->qt.n + 1);
    w->live = malloc((size_t)g->n_nodes + 1);
    w->stack = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
    w->feed = calloc((size_t)g->n_values + 1, sizeof *w->feed);
    if (!w->mask || !w->live || !w->stack || !w->feed) return qr_errf(QR_ERR_NOMEM, "out of memory");
    return qr_session_overrides_alloc(s, &w->ov);
}

/* Row k: its cone, the run from the cached reference, the output metrics (QrSeJobFn). */
static QrStatus qr__sens_row_job(void *ctx, int k, int tid) {
    QrSensJob *j = ctx;
    QrSession *s = j->s;
    const QrGraph *g = &s->tw.g;
    const QrSensOpts *o = j->o;
    QrSensWork *w = &j->w[tid];
    QrSensRow *row = &j->r->rows[k];
    j->reach[k] = qr__sens_cone(g, &s->qt, row->q, row->n_q, j->only_out, w->live, w->stack);
    if (!j->reach[k]) return QR_OK;
    for (int i = 0; i < s->qt.n; i++) w->mask[i] = o->off_one;
    for (int q = 0; q < row->n_q; q++) w->mask[row->q[q]] = !o->off_one;
    qr_session_overrides(s, w->mask, &w->ov);
    QrRunOpts ro = qr_session_run_opts(&w->ov, NULL, NULL);
    ro.n_exec = &row->n_exec;
    if (!o->full_reruns) {
        for (int v = 0; v < g->n_values; v++) {
            int p = g->values[v].producer;
            w->feed[v] = p >= 0 && !w->live[p] && j->cache->vals[v].data ? &j->cache->vals[v] : NULL;
        }
        ro.live = w->live;
        ro.feed = w->feed;
    }
    QrStatus st = qr__sens_outputs_metrics(s, g, &ro, j->only_out, &row->m);
    if (st != QR_OK) st = qr_err_wrap(st, "sensitivity of '%s' (%s)", row->name, qr_sens_type_name(row->type));
    return st;
}

/* The reference configuration (every quantizer off for one-on, on for off-one) run once,
 * every value it computes cached for the rows. */
typedef struct QrSensRef {
    bool off_one, full_reruns;   /* the options it was made for */
    int only_out;                /* and the output measured (--rank-output; -1 all) */
    QrSensCache cache;
    QrMetrics reference;         /* model-output metrics */
    int64_t n_exec;              /* nodes it executed */
} QrSensRef;

static void qr__sens_ref_free(QrSensRef *rf, int nv) {
    if (!rf) return;
    if (rf->cache.vals) for (int v = 0; v < nv; v++) qr_tensor_free_data(&rf->cache.vals[v]);
    free(rf->cache.vals);
    free(rf);
}

static void qr_sens_reference_free(QrSession *s) {
    qr__sens_ref_free(s->sens_ref, s->tw.g.n_values);
    s->sens_ref = NULL;
}

/* The reference run into a new QrSensRef (*out; NULL on failure). */
static QrStatus qr__sens_ref_run(QrSession *s, const QrSensOpts *o, QrSensRef **out) {
    const QrGraph *g = &s->tw.g;
    int nq = s->qt.n, nv = g->n_values;
    *out = NULL;
    QrSensRef *rf = calloc(1, sizeof *rf);
    bool *mask = malloc((size_t)nq + 1), *keep = malloc((size_t)nv + 1);
    QrOverrides ov = {0};
    QrStatus st = rf && mask && keep ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        rf->off_one = o->off_one;
        rf->full_reruns = o->full_reruns;
        rf->only_out = -1;
        rf->cache.vals = calloc((size_t)nv + 1, sizeof(QrTensor));
        st = rf->cache.vals ? qr_session_overrides_alloc(s, &ov) : qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (st == QR_OK) {
        for (int i = 0; i < nq; i++) mask[i] = o->off_one;
        qr_session_overrides(s, mask, &ov);
        qr__sens_keep(g, &ov, keep);
        QrRunOpts ro = qr_session_run_opts(&ov, o->full_reruns ? NULL : qr__sens_cache_tap, &rf->cache);
        ro.tap_only = keep;
        ro.n_exec = &rf->n_exec;
        int only = -1;
        st = qr_select_output(s->b, o->rank_output, &only);
        rf->only_out = only;
        if (st == QR_OK) st = qr__sens_outputs_metrics(s, g, &ro, only, &rf->reference);
        if (st != QR_OK) st = qr_err_wrap(st, "sensitivity reference run");
    }
    qr_session_overrides_free(&ov);
    free(mask);
    free(keep);
    if (st != QR_OK) { qr__sens_ref_free(rf, nv); return st; }
    *out = rf;
    return QR_OK;
}

static QrStatus qr_sens_reference(QrSession *s, const QrSensOpts *o) {
    QR_TRY(qr_session_run_baseline(s));
    qr_sens_reference_free(s);
    return qr__sens_ref_run(s, o, &s->sens_ref);
}

static QrStatus qr_sens_run(QrSession *s, const QrSensOpts *o, QrSensResult *r) {
    memset(r, 0, sizeof *r);
    r->opts = *o;
    QR_TRY(qr_session_run_baseline(s));
    QrStatus st = qr__sens_rows(s, r);
    if (st == QR_OK && (o->nodes || o->node_type != QR_NODE_TYPE_ALL)) st = qr_select_sens_rows(s, o, r);
    int only_out = -1;
    if (st == QR_OK) st = qr_select_output(s->b, o->rank_output, &only_out);
    if (st != QR_OK) { qr_sens_free(r); return st; }
    const QrGraph *g = &s->tw.g;
    int nv = g->n_values, nt = qr_pool_threads();
    /* the reference run: done ahead for these options, else now */
    QrSensRef *rf = s->sens_ref;
    if (rf && rf->off_one == o->off_one && rf->full_reruns == o->full_reruns && rf->only_out == only_out) s->sens_ref = NULL;
    else st = qr__sens_ref_run(s, o, &rf);
    if (st == QR_OK) {
        r->reference = rf->reference;
        r->n_exec = rf->n_exec;
    }
    QrSensJob j = { .s = s, .o = o, .r = r, .cache = rf ? &rf->cache : NULL, .only_out = only_out };
    j.w = calloc((size_t)nt, sizeof *j.w);
    j.reach = calloc((size_t)r->n + 1, sizeof *j.reach);
    if (st == QR_OK && (!j.w || !j.reach)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int t = 0; st == QR_OK && t < nt; t++) st = qr__sens_work_alloc(s, &j.w[t]);
    int kept = 0;
    if (st == QR_OK) st = qr_session_jobs(r->n, qr__sens_row_job, &j, &s->progress);
    for (int k = 0; st == QR_OK && k < r->n; k++) {
        QrSensRow *row = &r->rows[k];
        if (!j.reach[k]) { r->n_skipped += row->type == QR_SENS_BOTH ? 0 : row->n_q; continue; }
        r->n_exec += row->n_exec;
        r->rows[kept++] = *row;
    }
    if (st == QR_OK) {
        r->n = kept;
        r->n_full = (int64_t)(r->n + 1) * g->n_nodes;
        qr__sens_cmp_metric = o->metric;
        qr__sens_cmp_reverse = o->reverse;
        qr__sens_cmp_off_one = o->off_one;
        qsort(r->rows, (size_t)r->n, sizeof *r->rows, qr__sens_cmp);
    }
    qr__sens_ref_free(rf, nv);
    for (int t = 0; j.w && t < nt; t++) qr__sens_work_free(&j.w[t]);
    free(j.w);
    free(j.reach);
    if (st != QR_OK) qr_sens_free(r);
    return st;
}

static double qr_sens_gain(const QrSensResult *r, const QrSensRow *row) {
    return qr_metric_badness(&r->reference, r->opts.metric) - qr_metric_badness(&row->m, r->opts.metric);
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
    static const char *const cols[] = { "op_name", "sensitive_type", "op_type", "L1", "Cosine", "MSE", "KL", "SQNR", "gain" };
    QrTable tt = {0}, tc = {0};
    char *txt = NULL, *csv = NULL, *js = NULL;
    size_t tl = 0, tcap = 0, cl = 0, ccap = 0, jl = 0;
    int ncol = r->opts.off_one ? QR_ARRAY_LEN(cols) : QR_ARRAY_LEN(cols) - 1;   /* off-one ranks by gain: printed */
    QrStatus st = qr_table_init(&tt, ncol, cols);
    if (st == QR_OK) st = qr_table_init(&tc, ncol, cols);
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
            if (r->opts.off_one) {
                char b[64];
                qr__sens_num(b, sizeof b, qr_sens_gain(r, row), pass ? "%.9g" : "%.7f");
                qr_table_set(t, ri, 8, b);
            }
        }
    }
    const char *mode = r->opts.off_one ? "off-one (every quantizer on except the row's)" : "one-on (only the row's quantizers on)";
    if (st == QR_OK && r->opts.rank_output)
        st = qr_buf_printf(&txt, &tl, &tcap, "Ranked at the graph output '%s' alone (--rank-output).\n", r->opts.rank_output);
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &tl, &tcap, "Quantization sensitivity, %s; metrics at the model output(s) against the "
                           "baseline; sorted by %s%s.\nReference (%s): L1 %.7g, Cosine %.7f, SQNR %.4f dB.\n"
                           "Node executions: %lld incremental vs %lld for full re-runs (%.1f%%); %d quantizer%s skipped.\n\n",
                           mode, qr_metric_name(r->opts.metric),
                           r->opts.off_one ? (r->opts.reverse ? " gain over the reference, smallest first (reversed)"
                                                              : " gain over the reference (gain column: how much better the "
                                                                "output gets without the row's quantizers), largest first = "
                                                                "most sensitive first")
                                           : r->opts.reverse ? " (reversed)" : ", worst first = most sensitive first",
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
    if (r->opts.rank_output) qr_json_kv_str(&j, "rank_output", r->opts.rank_output);
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
        if (r->opts.off_one) qr_json_kv_num(&j, "gain", qr_sens_gain(r, row));
        qr_json_obj_end(&j);
    }
    qr_json_arr_end(&j);
    qr_json_obj_end(&j);
    if (st == QR_OK) st = qr_json_finish(&j, &js, &jl);
    else qr_json_free(&j);
    QR_UNUSED(s);
    if (st == QR_OK) st = qr_table_write_trio(dir, "sensitive_ops", txt, tl, csv, cl, js, jl);
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
    bool *tap_only;          /* per twin value: match_of >= 0 */
    QrMetrics *per_match;
    bool kl, rtol;
} QrEvalTap;

static QrStatus qr__sens_eval_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrEvalTap *e = user;
    QR_UNUSED(g);
    QR_UNUSED(node);
    for (int mi = e->match_of[value]; mi >= 0; mi = e->next[mi]) {
        const QrTensor *x = &e->s->base[mi];
        if (!x->data) continue;
        QrTensor tmp;
        const float *y;
        if (qr_session_visible_view(e->s, mi, t, &tmp, &y) != QR_OK) { qr_err_clear(); continue; }
        if (t->numel == x->numel) qr_metrics_compute_opts(x->data, y, x->numel, e->kl, e->rtol, &e->per_match[mi]);
        qr_tensor_free_data(&tmp);
    }
    return QR_OK;
}

static void qr__sens_eval_free(QrEvalTap *e) {
    free(e->match_of);
    free(e->next);
    free(e->tap_only);
    memset(e, 0, sizeof *e);
}

/* The per-value index of the matches (for qr__sens_eval_tap). */
static QrStatus qr__sens_eval_init(QrSession *s, QrMetrics *per_match, bool kl, bool rtol, QrEvalTap *e) {
    const QrGraph *g = &s->tw.g;
    *e = (QrEvalTap){ s, NULL, NULL, NULL, per_match, kl, rtol };
    e->match_of = malloc(((size_t)g->n_values + 1) * sizeof(int));
    e->next = malloc(((size_t)s->m.n + 1) * sizeof(int));
    e->tap_only = calloc((size_t)g->n_values + 1, sizeof(bool));
    if (!e->match_of || !e->next || !e->tap_only) { qr__sens_eval_free(e); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int v = 0; v < g->n_values; v++) e->match_of[v] = -1;
    for (int i = s->m.n - 1; i >= 0; i--) {
        if (s->vis[i] < 0) continue;
        e->next[i] = e->match_of[s->vis[i]];
        e->match_of[s->vis[i]] = i;
        e->tap_only[s->vis[i]] = true;
    }
    return QR_OK;
}

/* Per-match metrics not measured yet (NaN, n = 0). */
static void qr__sens_pm_reset(QrMetrics *pm, int n) {
    for (int i = 0; i < n; i++) {
        memset(&pm[i], 0, sizeof pm[i]);
        pm[i].cosine = pm[i].sqnr = pm[i].l1 = pm[i].mse = pm[i].kl = pm[i].rtol = pm[i].atol = NAN;
    }
}

/* The twin under a mask, whole graph (qr_sens_eval_mask; e NULL: outputs only). */
static QrStatus qr__sens_eval_full(QrSession *s, const bool *enabled, QrMetrics *out, QrEvalTap *e) {
    QrOverrides ov = {0};
    QR_TRY(qr_session_overrides_alloc(s, &ov));
    qr_session_overrides(s, enabled, &ov);
    QrRunOpts ro = qr_session_run_opts(&ov, e ? qr__sens_eval_tap : NULL, e);
    if (e) ro.tap_only = e->tap_only;
    QrStatus st = qr__sens_outputs_metrics(s, &s->tw.g, &ro, -1, out);
    qr_session_overrides_free(&ov);
    return st;
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_sens_eval_mask(QrSession *s, const bool *enabled, QrMetrics *out, QrMetrics *per_match,
                                  bool per_match_kl) {
    QR_TRY(qr_session_run_baseline(s));
    QrEvalTap e = {0};
    if (per_match) {
        QR_TRY(qr__sens_eval_init(s, per_match, per_match_kl, true, &e));
        qr__sens_pm_reset(per_match, s->m.n);
    }
    QrStatus st = qr__sens_eval_full(s, enabled, out, per_match ? &e : NULL);
    qr__sens_eval_free(&e);
    return st;
}
#endif

/* One cumulative-error setting from the all-on reference: only the cone of the quantizers
 * the mask disables re-runs; matches outside it keep the reference's metrics. */
static QrStatus qr__sens_eval_inc(QrSession *s, const bool *enabled, QrOverrides *ov, bool *live, QrMetrics *out,
                                  QrEvalTap *e) {
    const QrGraph *g = &s->tw.g;
    qr_session_overrides(s, enabled, ov);
    QrRunOpts ro = qr_session_run_opts(ov, qr__sens_eval_tap, e);
    ro.tap_only = e->tap_only;
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    if (!outs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    qr__sens_pm_reset(e->per_match, s->m.n);
    QrStatus st = qr_session_run_inc(s, g, &ro, outs, live);
    if (st == QR_OK) st = qr_compare_outputs(s, outs, out);
    for (int k = 0; k < g->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    for (int i = 0; st == QR_OK && i < s->m.n; i++) {
        int v = s->vis[i], p = v >= 0 ? g->values[v].producer : -1;
        if (v >= 0 && (p < 0 || !live[p])) e->per_match[i] = s->ref->per_match[i];
    }
    return st;
}

/* The settings of a cumulative-error pass, run as independent jobs. */
typedef struct QrAccumJob {
    QrSession *s;
    QrAccum *a;
    const QrEvalTap *e;      /* the shared value -> match index (per_match unset) */
    bool inc;                /* from the all-on reference */
    bool **mask;             /* per setting */
    QrMetrics **pm;          /* per setting: per-match metrics */
} QrAccumJob;

static QrStatus qr__sens_accum_job(void *ctx, int k, int tid) {
    QR_UNUSED(tid);
    QrAccumJob *j = ctx;
    QrSession *s = j->s;
    QrEvalTap e = *j->e;
    e.per_match = j->pm[k];
    if (j->inc && k == 2) {      /* every quantizer on: the reference itself */
        j->a->out[k] = s->ref->out;
        memcpy(e.per_match, s->ref->per_match, (size_t)s->m.n * sizeof *e.per_match);
        return QR_OK;
    }
    if (!j->inc) {
        qr__sens_pm_reset(e.per_match, s->m.n);
        return qr__sens_eval_full(s, j->mask[k], &j->a->out[k], &e);
    }
    QrOverrides ov = {0};
    bool *live = malloc((size_t)s->tw.g.n_nodes + 1);
    QrStatus st = live ? qr_session_overrides_alloc(s, &ov) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr__sens_eval_inc(s, j->mask[k], &ov, live, &j->a->out[k], &e);
    if (st == QR_OK) qr_session_memo_put(s, &ov, &j->a->out[k]);
    qr_session_overrides_free(&ov);
    free(live);
    return st;
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_accum_run(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk, QrMetricKind metric,
                             QrAccum *a) {
    return qr_accum_run_sets(s, sens, topk, n_topk, NULL, metric, a);
}
#endif

static QrStatus qr_accum_run_sets(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk,
                                  const QrAccSets *sets, QrMetricKind metric, QrAccum *a) {
    memset(a, 0, sizeof *a);
    a->metric = metric;
    QR_TRY(qr_session_run_baseline(s));
    int nq = s->qt.n, nm = s->m.n;
    bool kl = metric == QR_METRIC_KL;
    static const char *const base_names[] = { "weight_only", "activation_only", "full" };
    static char topk_names[12][32];
    a->n_settings = 3;
    for (int i = 0; i < n_topk && a->n_settings < 15 && sens && i < 12; i++) {
        snprintf(topk_names[i], sizeof topk_names[i], "all_but_top%d", topk[i]);
        a->setting[a->n_settings++] = topk_names[i];
    }
    for (int k = 0; k < 3; k++) a->setting[k] = base_names[k];
    int n_top = a->n_settings;               /* settings before the user's node sets */
    for (int k = 0; sets && k < sets->n && a->n_settings < QR_ARRAY_LEN(a->setting); k++)
        a->setting[a->n_settings++] = sets->set[k].name;
    int ns = a->n_settings;
    QrEvalTap e = {0};
    bool *masks[QR_ARRAY_LEN(a->setting)] = {0};
    QrMetrics *pms[QR_ARRAY_LEN(a->setting)] = {0};
    a->val = malloc(((size_t)nm * (size_t)ns + 1) * sizeof(double));
    QrStatus st = a->val ? qr__sens_eval_init(s, NULL, kl, false, &e) : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; st == QR_OK && k < ns; k++) {
        masks[k] = malloc((size_t)nq + 1);
        pms[k] = calloc((size_t)nm + 1, sizeof(QrMetrics));
        if (!masks[k] || !pms[k]) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; st == QR_OK && k < ns; k++) {
        bool *mask = masks[k];
        for (int i = 0; i < nq; i++) {
            QrQuantKind kind = s->qt.q[i].kind;
            mask[i] = k == 0 ? kind != QR_QK_ACTIVATION : k == 1 ? kind == QR_QK_ACTIVATION : true;
        }
        if (k >= n_top) {
            memcpy(mask, sets->set[k - n_top].mask, (size_t)nq * sizeof *mask);
        } else if (k >= 3) {
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
    }
    /* The all-on reference, built here with the per-match metrics of the "full" setting. */
    bool inc = !s->no_incremental;
    if (st == QR_OK && inc) {
        bool built;
        QrEvalTap er = e;
        er.per_match = pms[2];
        qr__sens_pm_reset(pms[2], nm);
        st = qr_session_ref(s, qr__sens_eval_tap, &er, e.tap_only, &built);
        if (st == QR_OK && built) {
            s->ref->per_match = malloc(((size_t)nm + 1) * sizeof(QrMetrics));
            if (s->ref->per_match) memcpy(s->ref->per_match, pms[2], (size_t)nm * sizeof(QrMetrics));
            s->ref->per_match_kl = kl;
        }
        if (st == QR_OK) inc = s->ref->per_match && s->ref->per_match_kl == kl;
    }
    QrAccumJob job = { s, a, &e, inc, masks, pms };
    if (st == QR_OK) st = qr_session_jobs(ns, qr__sens_accum_job, &job, &s->progress);
    for (int k = 0; st == QR_OK && k < ns; k++)
        for (int i = 0; i < nm; i++)
            a->val[(size_t)i * (size_t)ns + (size_t)k] = pms[k][i].n ? qr_metric_get(&pms[k][i], metric) : NAN;
    for (int k = 0; k < ns; k++) { free(masks[k]); free(pms[k]); }
    qr__sens_eval_free(&e);
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
