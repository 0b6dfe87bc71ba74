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

/* Values a reference run materializes itself (mat[v]): a graph input is given to every run; an
 * alias (a disabled quantizer's DequantizeLinear output, unless clamped) reads another value and a
 * substitution a given tensor, so re-runs resolve them the same way and a copy (a whole float
 * weight per disabled weight quantizer) would only cost memory. */
static void qr__sens_materialized(const QrGraph *g, const QrOverrides *ov, bool *mat) {
    for (int v = 0; v < g->n_values; v++) {
        bool clamped = ov->alias[v] >= 0 && (ov->clamp_lo[v] == ov->clamp_lo[v] || ov->clamp_hi[v] == ov->clamp_hi[v]);
        mat[v] = g->values[v].producer >= 0 && !ov->subst[v] && (ov->alias[v] < 0 || clamped);
    }
}

static bool qr__sens_cone(const QrGraph *g, const QrQuantTable *qt, const int *q, int n, int only_out, bool *live, int *stack);

/* Values the reference run keeps for the rows (keep[v]): of those it materializes, the ones a
 * row can read from outside its cone. A row's cone is the union of its quantizers' cones, so
 * with cnt[x] = the quantizers whose cone holds node x, a reader n of v runs while v's producer p
 * does not only when cnt[n] > cnt[p] (cones are closed downstream: p's quantizers are n's).
 * Readers see through aliases (a DequantizeLinear output of a disabled quantizer reads its
 * QuantizeLinear's input), in the reference's overrides or with every quantizer toggled (the
 * rows toggle some), so every value an alias chain from a read value reaches counts as read.
 * Keeps every value when out of memory. A value missed here would fail the row's run naming it
 * (the executor's feed check), never give other numbers. */
static void qr__sens_keep(const QrSession *s, const bool *ref_mask, const QrOverrides *ov, bool *keep) {
    const QrGraph *g = &s->tw.g;
    const QrQuantTable *qt = &s->qt;
    int nn = g->n_nodes, nv = g->n_values;
    qr__sens_materialized(g, ov, keep);
    int *cnt = calloc((size_t)nn + 1, sizeof *cnt), *stack = malloc(((size_t)nn + 1) * sizeof *stack);
    bool *live = malloc((size_t)nn + 1), *mask = malloc((size_t)qt->n + 1), *need = calloc((size_t)nv + 1, 1);
    QrOverrides inv = {0};
    if (!cnt || !stack || !live || !mask || !need || qr_session_overrides_alloc(s, &inv) != QR_OK) {
        qr_err_clear();
        goto done;
    }
    for (int i = 0; i < qt->n; i++) mask[i] = !ref_mask[i];
    qr_session_overrides(s, mask, &inv);
    for (int i = 0; i < qt->n; i++) {
        if (qt->q[i].kind == QR_QK_BIAS || !qt->q[i].can_disable) continue;
        qr__sens_cone(g, qt, &i, 1, -1, live, stack);
        for (int n = 0; n < nn; n++) cnt[n] += live[n];
    }
    for (int w = 0; w < nv; w++) {
        const QrUse *u;
        int nu = qr_graph_readers(g, w, &u);
        if (!nu && !g->values[w].is_output) continue;
        /* the values w's readers may see: w and what its alias chains reach (both override sets) */
        int chain[130], nc = 0;
        chain[nc++] = w;
        for (int c = 0; c < nc && nc < 128; c++) {
            int x = chain[c], t[2] = { ov->alias[x], inv.alias[x] };
            for (int k = 0; k < 2; k++) {
                bool dup = t[k] < 0;
                for (int d = 0; !dup && d < nc; d++) dup = chain[d] == t[k];
                if (!dup) chain[nc++] = t[k];
            }
        }
        for (int c = 0; c < nc; c++) {
            int x = chain[c], p = g->values[x].producer;
            if (p < 0) continue;
            bool nd = g->values[w].is_output;
            for (int k = 0; !nd && k < nu; k++) nd = cnt[u[k].node] > cnt[p];
            if (nd) need[x] = true;
        }
    }
    for (int v = 0; v < nv; v++) keep[v] = keep[v] && need[v];
done:
    qr_session_overrides_free(&inv);
    free(cnt);
    free(stack);
    free(live);
    free(mask);
    free(need);
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
        int sp_node = qq->sel_value >= 0 ? g->values[qq->sel_value].producer : -1;   /* the value it switches */
        if (sp_node >= 0 && !live[sp_node]) { live[sp_node] = true; stack[sp++] = sp_node; }
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

/* The model outputs against the baseline's into acc (unfinished; only: one output, -1 all):
 * the same additions as qr_session_compare_outputs_sel, so finishing acc gives its bits. */
static QrStatus qr__sens_outputs_acc(const QrSession *s, const QrTensor *outs, int only, QrMetricAcc *acc, bool lean) {
    if (lean) qr_metric_acc_init_opts(acc, false, false);    /* the pair sums' additions are the same either way */
    else qr_metric_acc_init(acc);
    for (int k = 0; k < s->b->n_outputs; k++) {
        if (only >= 0 && k != only) continue;
        QrTensor f = {0};
        QR_TRY(qr_tensor_to_f32(&outs[k], &f));
        const QrTensor *x = &s->base_out[k];
        QrStatus st = f.numel == x->numel ? QR_OK
                    : qr_errf(QR_ERR_SHAPE, "output %d ('%s') has %lld elements in the analysis model but %lld in the "
                              "baseline", k, s->b->values[s->b->outputs[k]].name, (long long)f.numel, (long long)x->numel);
        if (st == QR_OK) qr_metric_acc_add(acc, x->data, f.data, x->numel);
        qr_tensor_free_data(&f);
        QR_TRY(st);
    }
    return QR_OK;
}

/* What a group's evaluation measures (qr__sens_outputs_metrics' lean form): only the sums of the
 * ranking metric. A group's metrics rank it and are never reported, so with a metric of the pair
 * sums (L1, Cosine, MSE, SQNR: their bits do not depend on the rest) KL's softmax sums (two exp per
 * output element), Rtol and the per-token KL of logits outputs are left out (NaN): on a decoder
 * with a vocabulary of 8192 they were most of a group's metric work. */
static bool qr__sens_lean_metric(QrMetricKind k) {
    return k == QR_METRIC_L1 || k == QR_METRIC_COSINE || k == QR_METRIC_MSE || k == QR_METRIC_SQNR;
}

/* only: the graph output measured (--rank-output), -1 = all. acc (optional) keeps the
 * unfinished accumulator (data-set pooling). lean (no acc): the pair sums only (qr__sens_lean_metric). */
static QrStatus qr__sens_outputs_metrics(const QrSession *s, const QrGraph *g, const QrRunOpts *o, int only, QrMetrics *m,
                                         QrMetricAcc *acc, bool lean) {
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof(QrTensor));
    if (!outs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrStatus st = qr_run(g, s->inputs, o, outs);
    if (st == QR_OK && !acc && lean) {
        QrMetricAcc t;
        st = qr__sens_outputs_acc(s, outs, only, &t, true);
        if (st == QR_OK) qr_metric_acc_finish(&t, m);
        m->kld = NAN;
    } else if (st == QR_OK && !acc) st = qr_session_compare_outputs_sel(s, outs, only, m);
    if (st == QR_OK && acc) {
        st = qr__sens_outputs_acc(s, outs, only, acc, false);
        QrMetricAcc t = *acc;
        if (st == QR_OK) qr_metric_acc_finish(&t, m);
    }
    for (int k = 0; k < g->n_outputs; k++) qr_tensor_free_data(&outs[k]);
    free(outs);
    return st;
}

/* Most sensitive first: one-on, the largest badness with only the row's quantizers on; off-one,
 * the largest gain over the all-on reference, i.e. the smallest badness without the row's. */
static int qr__sens_cmp(const void *pa, const void *pb, void *ctx) {
    const QrSensOpts *o = ctx;   /* metric, reverse, off_one */
    const QrSensRow *a = pa, *b = pb;
    double x = qr_metric_badness(&a->m, o->metric);
    double y = qr_metric_badness(&b->m, o->metric);
    if (o->off_one) { x = -x; y = -y; }
    int c = x > y ? -1 : x < y ? 1 : 0;
    if (o->reverse) c = -c;
    if (!c) c = strcmp(a->name, b->name);
    if (!c) c = (int)a->type - (int)b->type;
    return c;
}

/* The distinct integer types of a row's quantizers, in order, '+'-joined ("int8", "uint8+int8"). */
static const char *qr__sens_dtypes(const QrQuantTable *qt, const QrSensRow *row, QrArena *a) {
    char buf[128] = "";
    size_t len = 0;
    for (int k = 0; k < row->n_q; k++) {
        QrDType dt = qt->q[row->q[k]].dtype;
        bool seen = false;
        for (int j = 0; j < k && !seen; j++) seen = qt->q[row->q[j]].dtype == dt;
        if (!seen) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? "+" : "", qr_dtype_name(dt));
        if (len >= sizeof buf) break;
    }
    return qr_arena_strdup(a, buf);
}

/* Row indices of sens, most sensitive first whatever the --reverse of the listing: largest
 * badness first for one-on rows, smallest first for off-one rows (keeping that node in high
 * precision helps most). Ties keep the listing order. idx has sens->n entries. */
static int qr__sens_order_cmp(const void *pa, const void *pb, void *ctx) {
    int a = *(const int *)pa, b = *(const int *)pb;
    const QrSensResult *r = ctx;
    double x = qr_metric_badness(&r->rows[a].m, r->opts.metric), y = qr_metric_badness(&r->rows[b].m, r->opts.metric);
    if (r->opts.off_one) { x = -x; y = -y; }
    return x > y ? -1 : x < y ? 1 : a - b;
}

static void qr_sens_order(const QrSensResult *sens, int *idx) {
    for (int k = 0; k < sens->n; k++) idx[k] = k;
    if (sens->n > 1) qsort_r(idx, (size_t)sens->n, sizeof *idx, qr__sens_order_cmp, (void *)sens);
}

static const QrSensRow *qr_sens_top(const QrSensResult *r, int k) {
    if (k < 0 || k >= r->n) return NULL;
    int *idx = malloc((size_t)r->n * sizeof(int));
    if (!idx) return &r->rows[k];   /* out of memory: the listing's order */
    qr_sens_order(r, idx);
    const QrSensRow *row = &r->rows[idx[k]];
    free(idx);
    return row;
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
            rows[k]->dtype = qr__sens_dtypes(qt, rows[k], &r->arena);
            if (!rows[k]->dtype) { free(done); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
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
    QrMetricAcc *acc;        /* per row, optional: the unfinished output accumulator (data-set pooling) */
    bool *ranked;            /* per row, the grouped ranking: evaluated (NULL: every row is) */
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

/* The quantizers q[0..n) toggled against the reference: their cone, the run from the cached
 * reference, the output metrics into *m (executions added to *n_exec; acc optional). Returns
 * in *reach whether the toggle can reach a measured output (nothing runs when not). */
static QrStatus qr__sens_eval_set(QrSensJob *j, int tid, const int *q, int n, QrMetrics *m, int64_t *n_exec,
                                  QrMetricAcc *acc, bool lean, bool *reach) {
    QrSession *s = j->s;
    const QrGraph *g = &s->tw.g;
    const QrSensOpts *o = j->o;
    QrSensWork *w = &j->w[tid];
    *reach = qr__sens_cone(g, &s->qt, q, n, j->only_out, w->live, w->stack);
    if (!*reach) return QR_OK;

    for (int i = 0; i < s->qt.n; i++) w->mask[i] = o->off_one;
    for (int k = 0; k < n; k++) w->mask[q[k]] = !o->off_one;
    qr_session_overrides(s, w->mask, &w->ov);
    QrRunOpts ro = qr_session_run_opts(&w->ov, NULL, NULL);
    ro.n_exec = n_exec;
    if (!o->full_reruns) {
        for (int v = 0; v < g->n_values; v++) {
            int p = g->values[v].producer;
            w->feed[v] = p >= 0 && !w->live[p] && j->cache->vals[v].data ? &j->cache->vals[v] : NULL;
        }
        ro.live = w->live;
        ro.feed = w->feed;
    }
    return qr__sens_outputs_metrics(s, g, &ro, j->only_out, m, acc, lean);
}

/* Row k (QrSeJobFn). */
static QrStatus qr__sens_row_job(void *ctx, int k, int tid) {
    QrSensJob *j = ctx;
    QrSensRow *row = &j->r->rows[k];
    QrStatus st = qr__sens_eval_set(j, tid, row->q, row->n_q, &row->m, &row->n_exec, j->acc ? &j->acc[k] : NULL, false,
                                    &j->reach[k]);
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
    QrMetricAcc ref_acc;         /* their unfinished accumulator */
    int64_t n_exec;              /* nodes it executed */
} QrSensRef;

static void qr__sens_ref_free(QrSensRef *rf, int nv) {
    if (!rf) return;
    if (rf->cache.vals) for (int v = 0; v < nv; v++) qr_tensor_free_data(&rf->cache.vals[v]);
    free(rf->cache.vals);
    free(rf);
}

/* The session's input cache (QrSession.input_cache) when it holds sensitivity's reference run. */
static void qr__sens_ref_free_cache(void *rf, int nv) { qr__sens_ref_free(rf, nv); }
static QrSensRef *qr__sens_ref_of(const QrSession *s) {
    return s->input_cache_free == qr__sens_ref_free_cache ? s->input_cache : NULL;
}

static void qr_sens_reference_free(QrSession *s) {
    if (!qr__sens_ref_of(s)) return;
    qr__sens_ref_free(s->input_cache, s->tw.g.n_values);
    s->input_cache = NULL;
    s->input_cache_free = NULL;
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
        qr__sens_keep(s, mask, &ov, keep);
        QrRunOpts ro = qr_session_run_opts(&ov, o->full_reruns ? NULL : qr__sens_cache_tap, &rf->cache);
        ro.tap_only = keep;
        ro.n_exec = &rf->n_exec;
        int only = -1;
        st = qr_select_output(s->b, o->rank_output, &only);
        rf->only_out = only;
        if (st == QR_OK) st = qr__sens_outputs_metrics(s, g, &ro, only, &rf->reference, &rf->ref_acc, false);
        if (st != QR_OK) st = qr_err_wrap(st, "sensitivity reference run");
    }
    qr_session_overrides_free(&ov);
    free(mask);
    free(keep);
    if (st != QR_OK) { qr__sens_ref_free(rf, nv); return st; }
    *out = rf;
    return QR_OK;
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_sens_reference(QrSession *s, const QrSensOpts *o) {
    QR_TRY(qr_session_run_baseline(s));
    if (s->input_cache_free) s->input_cache_free(s->input_cache, s->tw.g.n_values);   /* the cache is for one */
    s->input_cache = NULL;
    s->input_cache_free = NULL;
    QrSensRef *rf;
    QR_TRY(qr__sens_ref_run(s, o, &rf));
    s->input_cache = rf;
    s->input_cache_free = qr__sens_ref_free_cache;
    return QR_OK;
}
#endif

/* Sorts r's rows most sensitive first (opts order). */
static void qr__sens_sort(QrSensRow *rows, int n, const QrSensOpts *o) {
    qsort_r(rows, (size_t)n, sizeof *rows, qr__sens_cmp, (void *)o);
}

/* ==== the rows --nodes / --node-type keep (names resolved by analysis/select) ============== */

static QrStatus qr_sens_node_type_parse(const char *s, QrNodeType *out) {
    if (!strcmp(s, "activation")) *out = QR_NODE_TYPE_ACTIVATION;
    else if (!strcmp(s, "weight")) *out = QR_NODE_TYPE_WEIGHT;
    else if (!strcmp(s, "node")) *out = QR_NODE_TYPE_NODE;
    else if (!strcmp(s, "all")) *out = QR_NODE_TYPE_ALL;
    else return qr_errf(QR_ERR_INVALID, "--node-type '%s': expected activation, weight, node or all", s);
    return QR_OK;
}

/* Keeps the rows of r (before they run) that --nodes (o->nodes: comma-separated names, NULL =
 * all) and --node-type (o->node_type) select: a row is kept when one of its quantizers is one
 * a name stands for (qr_select_quantizers); activation / weight keep rows of that type, node one
 * row per node (its "both" row, else its only row). Fails on an unknown name. */
static QrStatus qr__sens_select_rows(const QrSession *s, const QrSensOpts *o, QrSensResult *r) {
    bool *want = NULL;
    if (o->nodes) {
        want = calloc((size_t)s->qt.n + 1, sizeof *want);
        char *list = strdup(o->nodes);
        QrStatus st = want && list ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
        char *save = NULL;
        for (char *tok = list ? strtok_r(list, ",", &save) : NULL; st == QR_OK && tok; tok = strtok_r(NULL, ",", &save))
            if (*tok) st = qr_select_quantizers(s, tok, want);
        free(list);
        if (st != QR_OK) { free(want); return qr_err_wrap(st, "--nodes"); }
    }
    int kept = 0;
    for (int k = 0; k < r->n; k++) {
        const QrSensRow *row = &r->rows[k];
        bool keep = true;
        if (want) {
            keep = false;
            for (int j = 0; j < row->n_q; j++) keep |= want[row->q[j]];
        }
        if (o->node_type == QR_NODE_TYPE_ACTIVATION) keep &= row->type == QR_SENS_ACTIVATION;
        else if (o->node_type == QR_NODE_TYPE_WEIGHT) keep &= row->type == QR_SENS_WEIGHT;
        else if (o->node_type == QR_NODE_TYPE_NODE && row->type != QR_SENS_BOTH) {
            /* the node's only row stands for the node when it has no "both" row */
            for (int j = 0; j < r->n; j++)
                if (r->rows[j].type == QR_SENS_BOTH && r->rows[j].node == row->node && row->node >= 0) keep = false;
        }
        if (keep) r->rows[kept++] = *row;
    }
    r->n = kept;
    free(want);
    return QR_OK;
}

/* ==== the grouped ranking ===========================================================
 * Brute force evaluates every row; on a large model (a transformer: 150-250 rows, most of
 * them re-running most of the graph) the top of the ranking is found with fewer runs. Rows are
 * grouped as the graph is: per node (its 'both' row holds its activation and weight rows), per
 * segment (the nodes between two cut points of the topological order, where one activation
 * alone is live: a transformer's residual stream between the halves of its blocks; a longer run
 * is cut in chunks of about sqrt(nodes) nodes) as a tree of thirds of its nodes, and
 * consecutive segments merged into groups of about sqrt(nodes) nodes; a group toggles all its
 * quantizers at once. Best first: every group is evaluated; then the most sensitive item not
 * yet taken is taken: a row is the next of the ranking, a group (or a 'both' row) has its
 * children evaluated and added. This is brute force's ranking of the first group_top rows when
 * no quantizer set is less sensitive than a subset of it (one-on: quantizing more never makes
 * the output better); n_bound_viol counts the children found more sensitive than their group,
 * where that did not hold. One-on only: in off-one (every other quantizer on) the gains of a
 * group and of its rows are far from that order (tpairs/static_int8's 9th row was missed). */

typedef struct QrSensItem {
    int *q, n_q;             /* quantizers */
    int row;                 /* the row it is (-1: a group of rows) */
    int *kid, n_kid;         /* children (item indices) */
    int pos;                 /* first position of its DequantizeLinear nodes in the topological order */
    QrMetrics m;
    int64_t n_exec;
    double key;              /* larger = more sensitive */
    bool reach;
} QrSensItem;

typedef struct QrSensTree {
    QrArena ar;
    QrSensItem *it;
    int n, cap;
} QrSensTree;

static int qr__sens_item_new(QrSensTree *t) {
    if (t->n == t->cap) return -1;
    QrSensItem *x = &t->it[t->n];
    memset(x, 0, sizeof *x);
    x->row = -1;
    return t->n++;
}

/* A group of items kids[0..nk) (the item itself when nk is 1); -1 when out of memory. */
static int qr__sens_item_group(QrSensTree *t, const int *kids, int nk) {
    if (nk == 1) return kids[0];
    int id = qr__sens_item_new(t);
    if (id < 0) return -1;
    QrSensItem *x = &t->it[id];
    int nq = 0;
    for (int k = 0; k < nk; k++) nq += t->it[kids[k]].n_q;
    x->q = qr_arena_array(&t->ar, (size_t)nq + 1, sizeof(int));
    x->kid = qr_arena_array(&t->ar, (size_t)nk, sizeof(int));
    if (!x->q || !x->kid) return -1;
    x->pos = INT_MAX;
    for (int k = 0; k < nk; k++) {
        const QrSensItem *c = &t->it[kids[k]];
        memcpy(x->q + x->n_q, c->q, (size_t)c->n_q * sizeof(int));
        x->n_q += c->n_q;
        x->kid[x->n_kid++] = kids[k];
        x->pos = QR_MIN(x->pos, c->pos);
    }
    return id;
}

/* A group of items ids[0..n) (consecutive in the order) as a tree of thirds: more than
 * QR__SENS_SPLIT items are split into that many runs, each grouped the same way. Refining a
 * group then evaluates its thirds, not every item: on ViT-B/16 the grouped ranking ran 19385
 * node executions instead of 27101 with flat groups (halves: 21832, quarters: 19996), the same
 * top 10 as brute force. -1 when out of memory. */
#define QR__SENS_SPLIT 3
static int qr__sens_item_split(QrSensTree *t, const int *ids, int n) {
    if (n <= QR__SENS_SPLIT) return qr__sens_item_group(t, ids, n);
    int parts[QR__SENS_SPLIT];
    for (int i = 0; i < QR__SENS_SPLIT; i++) {
        int lo = i * n / QR__SENS_SPLIT, hi = (i + 1) * n / QR__SENS_SPLIT;
        parts[i] = qr__sens_item_split(t, ids + lo, hi - lo);
        if (parts[i] < 0) return -1;
    }
    return qr__sens_item_group(t, parts, QR__SENS_SPLIT);
}

static int qr__sens_pos_cmp(const void *pa, const void *pb, void *ctx) {
    const QrSensItem *items = ctx;
    const QrSensItem *a = &items[*(const int *)pa], *b = &items[*(const int *)pb];
    if (a->pos != b->pos) return a->pos < b->pos ? -1 : 1;
    return *(const int *)pa - *(const int *)pb;
}

/* Cut points: cut[i] when at most one activation (a computed or input value, neither constant
 * nor an int64 / bool shape value) is live between positions i and i + 1 of the order. */
static QrStatus qr__sens_cuts(const QrGraph *g, const int *pos, bool *cut) {
    int nn = g->n_nodes;
    int *diff = calloc((size_t)nn + 2, sizeof *diff);
    if (!diff) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int v = 0; v < g->n_values; v++) {
        const QrValue *val = &g->values[v];
        if (val->is_init || val->is_const || (val->producer < 0 && !val->is_input)) continue;
        if (val->t.dtype == QR_DT_S64 || val->t.dtype == QR_DT_BOOL || val->t.dtype == QR_DT_UNDEF) continue;
        int birth = val->producer >= 0 ? pos[val->producer] : 0, death = val->is_output ? nn : birth;
        const QrUse *u;
        int nu = qr_graph_readers(g, v, &u);
        for (int k = 0; k < nu; k++) death = QR_MAX(death, pos[u[k].node]);
        if (death <= birth) continue;
        diff[birth]++;
        diff[death]--;
    }
    int live = 0;
    for (int i = 0; i < nn; i++) {
        live += diff[i];
        cut[i] = live <= 1;
    }
    free(diff);
    return QR_OK;
}

/* The tree over r's rows: roots in *roots (n_roots). */
static QrStatus qr__sens_tree(const QrSession *s, const QrSensResult *r, QrSensTree *t, int **roots, int *n_roots) {
    const QrGraph *g = &s->tw.g;
    const QrQuantTable *qt = &s->qt;
    int nn = g->n_nodes, n = r->n;
    *roots = NULL;
    *n_roots = 0;
    t->cap = 5 * n + 8;
    t->it = qr_arena_array(&t->ar, (size_t)t->cap, sizeof *t->it);
    int *pos = malloc(((size_t)nn + 1) * sizeof *pos), *nodes = malloc(((size_t)n + 1) * sizeof *nodes);
    int *seg = malloc(((size_t)nn + 1) * sizeof *seg), *segs = malloc(((size_t)n + 1) * sizeof *segs);
    int *leaf = malloc(((size_t)n + 1) * sizeof *leaf), *top = malloc(((size_t)n + 1) * sizeof *top);
    bool *cut = malloc((size_t)nn + 1);
    QrStatus st = t->it && pos && nodes && seg && segs && leaf && top && cut ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < nn; i++) pos[g->order[i]] = i;
    if (st == QR_OK) st = qr__sens_cuts(g, pos, cut);
    for (int i = 0, sg = 0; st == QR_OK && i < nn; i++) {
        seg[i] = sg;
        if (cut[i]) sg++;
    }
    /* a leaf per row; per node, its rows under its 'both' row (or a group) */
    int nnode = 0;
    for (int k = 0; st == QR_OK && k < n;) {
        const QrSensRow *row = &r->rows[k];
        int e = k + 1;
        while (row->node >= 0 && e < n && r->rows[e].node == row->node) e++;
        int both = -1;
        for (int i = k; i < e; i++) {
            int id = qr__sens_item_new(t);
            if (id < 0) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
            QrSensItem *x = &t->it[id];
            x->row = i;
            x->n_q = r->rows[i].n_q;
            x->q = (int *)r->rows[i].q;
            x->pos = INT_MAX;
            for (int a = 0; a < x->n_q; a++) {
                const QrQuantizer *qq = &qt->q[x->q[a]];
                for (int d = 0; d < qq->n_dq; d++) x->pos = QR_MIN(x->pos, pos[qq->dq_nodes[d]]);
            }
            if (x->pos == INT_MAX) x->pos = row->node >= 0 ? pos[row->node] : 0;
            leaf[i - k] = id;
            if (r->rows[i].type == QR_SENS_BOTH) both = id;
        }
        if (st != QR_OK) break;
        int id;
        if (both >= 0 && e - k > 1) {
            QrSensItem *x = &t->it[both];
            x->kid = qr_arena_array(&t->ar, (size_t)(e - k), sizeof(int));
            if (!x->kid) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
            for (int i = 0; i < e - k; i++)
                if (leaf[i] != both) {
                    x->kid[x->n_kid++] = leaf[i];
                    x->pos = QR_MIN(x->pos, t->it[leaf[i]].pos);
                }
            id = both;
        } else id = qr__sens_item_group(t, leaf, e - k);
        if (id < 0) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
        nodes[nnode++] = id;
        k = e;
    }
    if (st == QR_OK) {
        qsort_r(nodes, (size_t)nnode, sizeof *nodes, qr__sens_pos_cmp, t->it);
    }
    /* segments (at most 2 G nodes each: longer ones cut in G), merged into groups of >= G nodes */
    int G = 2;
    while (G * G < nnode) G++;
    int nseg = 0, ntop = 0;
    for (int k = 0; st == QR_OK && k < nnode;) {
        int sg = seg[QR_MIN(QR_MAX(t->it[nodes[k]].pos, 0), nn - 1)], e = k + 1;
        while (e < nnode && seg[QR_MIN(QR_MAX(t->it[nodes[e]].pos, 0), nn - 1)] == sg) e++;
        int len = e - k, chunk = len > 2 * G ? G : len;
        for (int c = k; c < e; c += chunk) {
            int id = qr__sens_item_split(t, nodes + c, QR_MIN(chunk, e - c));
            if (id < 0) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
            segs[nseg] = id;
            leaf[nseg++] = QR_MIN(chunk, e - c);     /* nodes in it */
        }
        k = e;
    }
    for (int k = 0; st == QR_OK && k < nseg;) {
        int e = k, cnt = 0;
        while (e < nseg && cnt < G) cnt += leaf[e++];
        int id = qr__sens_item_group(t, segs + k, e - k);
        if (id < 0) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
        top[ntop++] = id;
        k = e;
    }
    free(pos);
    free(nodes);
    free(seg);
    free(segs);
    free(leaf);
    free(cut);
    if (st != QR_OK) { free(top); return st; }
    *roots = top;
    *n_roots = ntop;
    return QR_OK;
}

typedef struct QrSensItemJob {
    QrSensJob *j;
    QrSensTree *t;
    const int *ids;
} QrSensItemJob;

static QrStatus qr__sens_item_job(void *ctx, int k, int tid) {
    QrSensItemJob *ij = ctx;
    QrSensItem *x = &ij->t->it[ij->ids[k]];
    /* a group (no row of its own) only ranks: the ranking metric's sums alone when they suffice */
    QrStatus st = qr__sens_eval_set(ij->j, tid, x->q, x->n_q, &x->m, &x->n_exec, NULL,
                                    x->row < 0 && qr__sens_lean_metric(ij->j->o->metric), &x->reach);
    if (st != QR_OK && x->row >= 0) {
        const QrSensRow *row = &ij->j->r->rows[x->row];
        st = qr_err_wrap(st, "sensitivity of '%s' (%s)", row->name, qr_sens_type_name(row->type));
    } else if (st != QR_OK) st = qr_err_wrap(st, "sensitivity of a group of %d quantizers", x->n_q);
    return st;
}

/* Marks item id's rows evaluated and unreachable. */
static void qr__sens_item_unreached(QrSensJob *j, QrSensTree *t, int id) {
    QrSensItem *x = &t->it[id];
    if (x->row >= 0) { j->ranked[x->row] = true; j->reach[x->row] = false; }
    for (int k = 0; k < x->n_kid; k++) qr__sens_item_unreached(j, t, x->kid[k]);
}

/* Evaluates items ids[0..n) side by side and records their rows. */
static QrStatus qr__sens_items_eval(QrSensJob *j, QrSensTree *t, const int *ids, int n) {
    QrSensItemJob ij = { j, t, ids };
    QR_TRY(qr_session_jobs(j->s, n, qr__sens_item_job, &ij, NULL));
    QrSensResult *r = j->r;
    for (int k = 0; k < n; k++) {
        QrSensItem *x = &t->it[ids[k]];
        double b = qr_metric_badness(&x->m, j->o->metric);
        x->key = !x->reach ? -INFINITY : b;
        r->n_exec += x->n_exec;
        if (!x->reach) { qr__sens_item_unreached(j, t, ids[k]); continue; }
        if (x->row < 0) { r->n_groups++; continue; }
        QrSensRow *row = &r->rows[x->row];
        row->m = x->m;
        row->n_exec = 0;                 /* counted above */
        j->ranked[x->row] = true;
        j->reach[x->row] = true;
    }
    return QR_OK;
}

/* The grouped ranking over r's rows (j->ranked: rows evaluated). */
static QrStatus qr__sens_grouped(QrSensJob *j) {
    QrSensResult *r = j->r;
    int top = j->o->group_top > 0 ? j->o->group_top : QR_SENS_GROUP_TOP;
    QrSensTree t = {0};
    int *roots = NULL, n_roots = 0;
    QrStatus st = qr__sens_tree(j->s, r, &t, &roots, &n_roots);
    int *front = st == QR_OK ? malloc(((size_t)t.n + 1) * sizeof *front) : NULL;
    if (st == QR_OK && !front) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    int nf = 0;
    if (st == QR_OK) st = qr__sens_items_eval(j, &t, roots, n_roots);
    if (st == QR_OK) for (int k = 0; k < n_roots; k++) front[nf++] = roots[k];
    r->grouped = true;
    while (st == QR_OK && r->n_top < top && nf > 0) {
        int b = 0;
        for (int k = 1; k < nf; k++)
            if (t.it[front[k]].key > t.it[front[b]].key) b = k;
        const QrSensItem *x = &t.it[front[b]];
        front[b] = front[--nf];
        if (x->key == -INFINITY) break;
        if (x->row >= 0) r->n_top++;
        if (!x->n_kid) continue;
        st = qr__sens_items_eval(j, &t, x->kid, x->n_kid);
        for (int k = 0; st == QR_OK && k < x->n_kid; k++) {
            if (t.it[x->kid[k]].key > x->key) r->n_bound_viol++;
            front[nf++] = x->kid[k];
        }
    }
    free(front);
    free(roots);
    qr_arena_free(&t.ar);
    return st;
}

#ifdef QR_TESTING
QR_TESTAPI int64_t qr_sens_row_passes;    /* tests: passes over the rows (qr__sens_run_rows calls) */
#endif

/* The rows of a pass, unsorted (in qr__sens_rows' order, unreachable ones dropped; row.id = its
 * index); acc_out (optional) receives a malloc'd per-row array of unfinished output accumulators
 * (every row run: never grouped; with soft, only when the pass is not grouped anyway, else NULL)
 * and ref_acc the reference's. */
static QrStatus qr__sens_run_rows(QrSession *s, const QrSensOpts *o, QrSensResult *r, QrMetricAcc **acc_out,
                                  QrMetricAcc *ref_acc, bool soft) {
#ifdef QR_TESTING
    __atomic_add_fetch(&qr_sens_row_passes, 1, __ATOMIC_RELAXED);
#endif
    memset(r, 0, sizeof *r);
    r->opts = *o;
    if (acc_out) *acc_out = NULL;
    /* the rows measure the model outputs only: a sample the data-set pass kept brings its
     * baseline outputs without baseline values (qr__sens_use_inputs), and needs no baseline run */
    if (s->base || !s->base_out || s->base_stale) QR_TRY(qr_session_run_baseline(s));
    QrStatus st = qr__sens_rows(s, r);
    if (st == QR_OK && (o->nodes || o->node_type != QR_NODE_TYPE_ALL)) st = qr__sens_select_rows(s, o, r);
    int only_out = -1;
    if (st == QR_OK) st = qr_select_output(s->b, o->rank_output, &only_out);
    if (st != QR_OK) { qr_sens_free(r); return st; }
    const QrGraph *g = &s->tw.g;
    int nv = g->n_values, nt = qr_pool_threads();
    /* the reference run: done ahead for these options, else now */
    QrSensRef *rf = qr__sens_ref_of(s);
    if (rf && rf->off_one == o->off_one && rf->full_reruns == o->full_reruns && rf->only_out == only_out) {
        s->input_cache = NULL;
        s->input_cache_free = NULL;
    }
    else st = qr__sens_ref_run(s, o, &rf);
    if (st == QR_OK) {
        r->reference = rf->reference;
        r->n_exec = rf->n_exec;
        if (ref_acc) *ref_acc = rf->ref_acc;
    }
    QrSensJob j = { .s = s, .o = o, .r = r, .cache = rf ? &rf->cache : NULL, .only_out = only_out };
    int top = o->group_top > 0 ? o->group_top : QR_SENS_GROUP_TOP;
    bool grouped = (!acc_out || soft) && !o->full_reruns && !o->reverse && !o->off_one && j.cache && o->grouped >= 0 &&
                   (o->grouped > 0 || r->n >= QR_SENS_GROUP_AUTO) && r->n > top;
    j.w = calloc((size_t)nt, sizeof *j.w);
    j.reach = calloc((size_t)r->n + 1, sizeof *j.reach);
    if (grouped) j.ranked = calloc((size_t)r->n + 1, sizeof *j.ranked);
    if (acc_out && !grouped) j.acc = calloc((size_t)r->n + 1, sizeof *j.acc);
    if (st == QR_OK && (!j.w || !j.reach || (acc_out && !grouped && !j.acc) || (grouped && !j.ranked)))
        st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int t = 0; st == QR_OK && t < nt; t++) st = qr__sens_work_alloc(s, &j.w[t]);
    int kept = 0;
    if (st == QR_OK) st = grouped ? qr__sens_grouped(&j) : qr_session_jobs(s, r->n, qr__sens_row_job, &j, &s->progress);
    for (int k = 0; st == QR_OK && k < r->n; k++) {
        QrSensRow *row = &r->rows[k];
        if (j.ranked && !j.ranked[k]) { r->n_unranked++; continue; }
        if (!j.reach[k]) { r->n_skipped += row->type == QR_SENS_BOTH ? 0 : row->n_q; continue; }
        r->n_exec += row->n_exec;
        row->id = kept;
        if (j.acc) j.acc[kept] = j.acc[k];
        r->rows[kept++] = *row;
    }
    if (st == QR_OK) {
        r->n = kept;
        r->n_full = (int64_t)(r->n + r->n_unranked + 1) * g->n_nodes;
    }
    qr__sens_ref_free(rf, nv);
    for (int t = 0; j.w && t < nt; t++) qr__sens_work_free(&j.w[t]);
    free(j.w);
    free(j.reach);
    free(j.ranked);
    if (st != QR_OK) { qr_sens_free(r); free(j.acc); }
    else if (acc_out) *acc_out = j.acc;
    return st;
}

static QrStatus qr_sens_run(QrSession *s, const QrSensOpts *o, QrSensResult *r) {
    QR_TRY(qr__sens_run_rows(s, o, r, NULL, NULL, false));
    qr__sens_sort(r->rows, r->n, o);
    return QR_OK;
}

static QrStatus qr_sens_run_keep(QrSession *s, const QrSensOpts *o, QrSensResult *r) {
    QrMetricAcc *acc = NULL, racc;
    QR_TRY(qr__sens_run_rows(s, o, r, &acc, &racc, true));
    r->acc = acc;
    r->ref_acc = racc;
    qr__sens_sort(r->rows, r->n, o);
    return QR_OK;
}

/* Whether passes with options a and b compute the same rows with the same numbers (the sort
 * key, the order and the grouping knobs of a pass that ran every row do not change them). */
static bool qr__sens_same_rows(const QrSensOpts *a, const QrSensOpts *b) {
    return a->off_one == b->off_one && a->full_reruns == b->full_reruns && a->node_type == b->node_type &&
           !a->nodes == !b->nodes && (!a->nodes || !strcmp(a->nodes, b->nodes)) && !a->rank_output == !b->rank_output &&
           (!a->rank_output || !strcmp(a->rank_output, b->rank_output));
}

/* r: a pass with options o made of done's rows, in id order (the order qr__sens_run_rows leaves
 * them), their strings in r's arena; *acc their accumulators (malloc'd), *racc the reference's. */
static QrStatus qr__sens_take_done(const QrSensResult *done, const QrSensOpts *o, QrSensResult *r, QrMetricAcc **acc,
                                   QrMetricAcc *racc) {
    memset(r, 0, sizeof *r);
    r->opts = *o;
    r->reference = done->reference;
    r->n_exec = done->n_exec;
    r->n_full = done->n_full;
    r->n_skipped = done->n_skipped;
    r->n = done->n;
    r->rows = qr_arena_alloc(&r->arena, ((size_t)done->n + 1) * sizeof *r->rows);
    *acc = malloc(((size_t)done->n + 1) * sizeof **acc);
    QrStatus st = r->rows && *acc ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; st == QR_OK && k < done->n; k++) {
        const QrSensRow *x = &done->rows[k];
        if (x->id < 0 || x->id >= done->n) { st = qr_errf(QR_ERR_INVALID, "sensitivity row id %d out of range", x->id); break; }
        QrSensRow *y = &r->rows[x->id];
        *y = *x;
        y->name = x->name ? qr_arena_strdup(&r->arena, x->name) : NULL;
        y->op_type = x->op_type ? qr_arena_strdup(&r->arena, x->op_type) : NULL;
        y->dtype = x->dtype ? qr_arena_strdup(&r->arena, x->dtype) : NULL;
        if ((x->name && !y->name) || (x->op_type && !y->op_type) || (x->dtype && !y->dtype)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        (*acc)[x->id] = done->acc[x->id];
    }
    *racc = done->ref_acc;
    if (st != QR_OK) { qr_sens_free(r); free(*acc); *acc = NULL; }
    return st;
}

static double qr_sens_gain(const QrSensResult *r, const QrSensRow *row) {
    return qr_metric_badness(&r->reference, r->opts.metric) - qr_metric_badness(&row->m, r->opts.metric);
}

static void qr_sens_free(QrSensResult *r) {
    free(r->acc);
    qr_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}

static void qr_sens_num(char *buf, size_t n, double v, const char *fmt) {
    if (v != v) snprintf(buf, n, "nan");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else snprintf(buf, n, fmt, v);
}

typedef struct QrSensRank { int min, max, top5; double median; } QrSensRank;

/* Rank statistics of row id over the samples of a data-set pass. */
static void qr__sens_rank_stats(const QrSensSet *ss, int id, QrSensRank *out) {
    int v[256], n = QR_MIN(ss->k, 256);
    for (int j = 0; j < n; j++) v[j] = ss->rank[(size_t)id * (size_t)ss->k + (size_t)j];
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) { int t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
    out->top5 = 0;
    for (int j = 0; j < n; j++) out->top5 += v[j] <= 5;
    out->min = n ? v[0] : 0;
    out->max = n ? v[n - 1] : 0;
    out->median = !n ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The rows as tables: tt for the txt (7 decimals), tc for the csv (9 significant digits). */
static QrStatus qr__sens_tables(const QrSensResult *r, const QrSensSet *ss, QrTable *tt, QrTable *tc) {
    /* the seed's columns first (op_name .. SQNR, off-one's gain), then the quantizers' dtype */
    static const char *const cols[] = { "op_name", "sensitive_type", "op_type", "L1", "Cosine", "MSE", "KL", "SQNR", "gain" };
    static const char *const scols[] = { "samples", "rank_min", "rank_median", "rank_max", "top5_samples" };
    const char *all[16];
    int ncol = r->opts.off_one ? QR_ARRAY_LEN(cols) : QR_ARRAY_LEN(cols) - 1;   /* off-one ranks by gain: printed */
    for (int j = 0; j < ncol; j++) all[j] = cols[j];
    int kcol = -1;                           /* --metric KLD: the mean token KL the rows are ranked by */
    if (r->opts.metric == QR_METRIC_KLD) all[kcol = ncol++] = "KLD";
    int dcol = ncol;
    all[ncol++] = "dtype";
    int nb = ncol;
    if (ss) for (int j = 0; j < QR_ARRAY_LEN(scols); j++) all[ncol++] = scols[j];
    QrStatus st = qr_table_init(tt, ncol, all);
    if (st == QR_OK) st = qr_table_init(tc, ncol, all);
    for (int k = 0; st == QR_OK && k < r->n; k++) {
        const QrSensRow *row = &r->rows[k];
        double v[] = { row->m.l1, row->m.cosine, row->m.mse, row->m.kl, row->m.sqnr };
        for (int pass = 0; pass < 2 && st == QR_OK; pass++) {
            QrTable *t = pass ? tc : tt;
            int ri;
            st = qr_table_add_row(t, &ri);
            if (st != QR_OK) break;
            qr_table_set(t, ri, 0, row->name);
            qr_table_set(t, ri, 1, qr_sens_type_name(row->type));
            qr_table_set(t, ri, 2, row->op_type);
            for (int j = 0; j < 5; j++) {
                char b[64];
                qr_sens_num(b, sizeof b, v[j], pass ? "%.9g" : "%.7f");
                qr_table_set(t, ri, 3 + j, b);
            }
            if (r->opts.off_one) {
                char b[64];
                qr_sens_num(b, sizeof b, qr_sens_gain(r, row), pass ? "%.9g" : "%.7f");
                qr_table_set(t, ri, 8, b);
            }
            if (kcol >= 0) {
                char b[64];
                qr_sens_num(b, sizeof b, row->m.kld, pass ? "%.9g" : "%.7f");
                qr_table_set(t, ri, kcol, b);
            }
            qr_table_set(t, ri, dcol, row->dtype);
            if (ss) {
                QrSensRank rk;
                qr__sens_rank_stats(ss, row->id, &rk);
                qr_table_setf(t, ri, nb, "%d", ss->k);
                qr_table_setf(t, ri, nb + 1, "%d", rk.min);
                qr_table_setf(t, ri, nb + 2, "%g", rk.median);
                qr_table_setf(t, ri, nb + 3, "%d", rk.max);
                qr_table_setf(t, ri, nb + 4, "%d", rk.top5);
            }
        }
    }
    return st;
}

/* The txt's header lines: the data-set pass (ss, optional), the mode, the reference, the grouping. */
static QrStatus qr__sens_header(const QrSensResult *r, const QrSensSet *ss, char **txt, size_t *tl, size_t *tcap) {
    QrStatus st = QR_OK;
    const char *mode = r->opts.off_one ? "off-one (every quantizer on except the row's)" : "one-on (only the row's quantizers on)";
    if (ss) {
        st = qr_buf_printf(txt, tl, tcap, "Over the data set: metrics pooled over the %d worst sample%s by %s at the model "
                           "outputs (as if concatenated):", ss->k, ss->k == 1 ? "" : "s", qr_metric_name(ss->smp_metric));
        for (int j = 0; st == QR_OK && j < ss->k; j++) st = qr_buf_printf(txt, tl, tcap, " %s", ss->names[ss->smp[j]]);
        if (st == QR_OK)
            st = qr_buf_printf(txt, tl, tcap, ".\nRank stability: rank_min/median/max = the row's rank on each of those "
                               "samples alone; top5_samples = samples where it is in the top 5. %d of %d sample%s share the "
                               "pooled top 5 (the same rows).\n", ss->n_top5_same, ss->k, ss->k == 1 ? "" : "s");
    }
    if (st == QR_OK && r->opts.rank_output)
        st = qr_buf_printf(txt, tl, tcap, "Ranked at the graph output '%s' alone (--rank-output).\n", r->opts.rank_output);
    if (st == QR_OK)
        st = qr_buf_printf(txt, tl, tcap, "Quantization sensitivity, %s; metrics at the model output(s) against the "
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
    if (st == QR_OK && r->grouped)
        st = qr_buf_printf(txt, tl, tcap, "Grouped ranking (%d rows): the first %d rows are the most sensitive, in order, "
                           "found by evaluating groups of rows first (%d group evaluations; %d rows evaluated, %d not); exact "
                           "when no group is less sensitive than a part of it (%d evaluated item%s more sensitive than its "
                           "group). The rows after them were evaluated on the way: rows not evaluated may rank between "
                           "them. --all-rows evaluates every row.\n\n", r->n + r->n_unranked, r->n_top, r->n_groups, r->n,
                           r->n_unranked, r->n_bound_viol, r->n_bound_viol == 1 ? " was" : "s were");
    return st;
}

/* sensitivity.json: the settings and one object per row. */
static QrStatus qr__sens_json(const QrSensResult *r, const QrSensSet *ss, char **js, size_t *jl) {
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "mode", r->opts.off_one ? "off-one" : "one-on");
    qr_json_kv_str(&j, "metric", qr_metric_name(r->opts.metric));
    qr_json_kv_bool(&j, "reverse", r->opts.reverse);
    if (r->opts.rank_output) qr_json_kv_str(&j, "rank_output", r->opts.rank_output);
    if (ss) {
        qr_json_key(&j, "samples");
        qr_json_arr_begin(&j);
        for (int q = 0; q < ss->k; q++) qr_json_str(&j, ss->names[ss->smp[q]]);
        qr_json_arr_end(&j);
        qr_json_kv_int(&j, "samples_sharing_top5", ss->n_top5_same);
    }
    qr_json_kv_int(&j, "node_executions", r->n_exec);
    qr_json_kv_int(&j, "node_executions_full_reruns", r->n_full);
    if (r->grouped) {
        qr_json_key(&j, "grouped");
        qr_json_obj_begin(&j);
        qr_json_kv_int(&j, "rows", r->n + r->n_unranked);
        qr_json_kv_int(&j, "ranked_exactly", r->n_top);
        qr_json_kv_int(&j, "rows_evaluated", r->n);
        qr_json_kv_int(&j, "group_evaluations", r->n_groups);
        qr_json_kv_int(&j, "bound_violations", r->n_bound_viol);
        qr_json_obj_end(&j);
    }
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
        if (r->opts.metric == QR_METRIC_KLD) qr_json_kv_num(&j, "KLD", row->m.kld);
        qr_json_kv_str(&j, "dtype", row->dtype);
        if (ss) {
            QrSensRank rk;
            qr__sens_rank_stats(ss, row->id, &rk);
            qr_json_kv_int(&j, "rank_min", rk.min);
            qr_json_kv_num(&j, "rank_median", rk.median);
            qr_json_kv_int(&j, "rank_max", rk.max);
            qr_json_kv_int(&j, "top5_samples", rk.top5);
        }
        qr_json_obj_end(&j);
    }
    qr_json_arr_end(&j);
    qr_json_obj_end(&j);
    return qr_json_finish(&j, js, jl);
}

/* ss (optional): the pass over a data set — the rank-stability columns and header lines. */
static QrStatus qr__sens_write(const QrSensResult *r, const QrSensSet *ss, const char *dir) {
    QrTable tt = {0}, tc = {0};
    char *txt = NULL, *csv = NULL, *js = NULL;
    size_t tl = 0, tcap = 0, cl = 0, ccap = 0, jl = 0;
    QrStatus st = qr__sens_tables(r, ss, &tt, &tc);
    if (st == QR_OK) st = qr__sens_header(r, ss, &txt, &tl, &tcap);
    if (st == QR_OK) st = qr_table_render_txt(&tt, NULL, NULL, &txt, &tl, &tcap);
    if (st == QR_OK) st = qr_table_render_csv(&tc, NULL, &csv, &cl, &ccap);
    if (st == QR_OK) st = qr__sens_json(r, ss, &js, &jl);
    if (st == QR_OK) st = qr_table_write_trio(dir, QR_BF_SENS, txt, tl, csv, cl, js, jl);
    qr_table_free(&tt);
    qr_table_free(&tc);
    free(txt);
    free(csv);
    free(js);
    return st;
}

static QrStatus qr_sens_write(const QrSession *s, const QrSensResult *r, const char *dir) {
    QR_UNUSED(s);
    return qr__sens_write(r, NULL, dir);
}

/* ==== whole-graph evaluation of a mask, cumulative error ============================ */

typedef struct QrEvalTap {
    QrSession *s;
    int *match_of;           /* per twin value: first match whose vis it is */
    int *next;               /* per match */
    bool *tap_only;          /* per twin value: match_of >= 0 */
    QrMetrics *per_match;
    bool kl, rtol;
    QrMetricAcc *acc;        /* per match, optional: the unfinished accumulator behind per_match (data-set pooling) */
    uint8_t *acc_set;        /* per match: acc holds this run's value */
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
        if (t->numel == x->numel && e->acc) {
            qr_metric_acc_init_opts(&e->acc[mi], e->kl, e->rtol);
            qr_metric_acc_add(&e->acc[mi], x->data, y, x->numel);
            qr_metric_acc_finish(&e->acc[mi], &e->per_match[mi]);
            e->acc_set[mi] = 1;
        } else if (t->numel == x->numel) qr_metrics_compute_opts(x->data, y, x->numel, e->kl, e->rtol, &e->per_match[mi]);
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
    *e = (QrEvalTap){ s, NULL, NULL, NULL, per_match, kl, rtol, NULL, NULL };
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
    QrStatus st = qr__sens_outputs_metrics(s, &s->tw.g, &ro, -1, out, NULL, false);
    if (st == QR_OK) qr_session_memo_put(s, &ov, out);   /* (what-if's float runs may repeat it) */
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
    if (st == QR_OK) st = qr_session_compare_outputs(s, outs, out);
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
    QrMetricAcc *acc;        /* optional, [setting][match]: their accumulators */
    uint8_t *acc_set;        /* [setting][match] */
    const QrAccFull *full;   /* whole runs: the full setting measured by another run (NULL: run it) */
} QrAccumJob;

/* What qr__sens_eval_full would remember of a run under mask whose output metrics are out. */
static QrStatus qr__sens_memo_full(QrSession *s, const bool *mask, const QrMetrics *out) {
    QrOverrides ov = {0};
    QR_TRY(qr_session_overrides_alloc(s, &ov));
    qr_session_overrides(s, mask, &ov);
    qr_session_memo_put(s, &ov, out);
    qr_session_overrides_free(&ov);
    return QR_OK;
}

static QrStatus qr__sens_accum_job(void *ctx, int k, int tid) {
    QR_UNUSED(tid);
    QrAccumJob *j = ctx;
    QrSession *s = j->s;
    QrEvalTap e = *j->e;
    e.per_match = j->pm[k];
    if (j->acc) {
        e.acc = j->acc + (size_t)k * (size_t)s->m.n;
        e.acc_set = j->acc_set + (size_t)k * (size_t)s->m.n;
    }
    if (j->inc && k == 2) {      /* every quantizer on: the reference itself */
        j->a->out[k] = s->ref->out;
        memcpy(e.per_match, s->ref->per_match, (size_t)s->m.n * sizeof *e.per_match);
        return QR_OK;
    }
    if (!j->inc && j->full && k == 2) {  /* every quantizer on: measured by another run of the same computation */
        j->a->out[k] = j->full->out;
        memcpy(e.per_match, j->full->per_match, (size_t)s->m.n * sizeof *e.per_match);
        return qr__sens_memo_full(s, j->mask[k], &j->a->out[k]);
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

/* qr_accum_run_sets; acc_out (optional) receives malloc'd [setting][match] accumulators of the
 * per-match values (unset entries: n = 0 and n_bad = -1) for data-set pooling; it needs the
 * all-on reference built here (the caller frees s->ref first). */
static QrStatus qr__sens_accum_run(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk, const QrAccSets *sets,
                              QrMetricKind metric, QrAccum *a, QrMetricAcc **acc_out, const QrAccFull *full) {
    memset(a, 0, sizeof *a);
    a->metric = metric;
    QR_TRY(qr_session_run_baseline(s));
    int nq = s->qt.n, nm = s->m.n;
    bool kl = metric == QR_METRIC_KL;
    static const char *const base_names[] = { "weight_only", "activation_only", "full" };
    enum { NAME_LEN = 32 };
    int n_names = sens && n_topk > 0 ? (n_topk < 12 ? n_topk : 12) : 0;
    a->topk_names = n_names ? malloc((size_t)n_names * NAME_LEN) : NULL;
    if (n_names && !a->topk_names) return qr_errf(QR_ERR_NOMEM, "out of memory");
    a->n_settings = 3;
    for (int i = 0; i < n_names; i++) {
        char *name = a->topk_names + (size_t)i * NAME_LEN;
        snprintf(name, NAME_LEN, "all_but_top%d", topk[i]);
        a->setting[a->n_settings++] = name;
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
    /* the top-k of all_but_topK are the most sensitive rows whatever --reverse did to the listing */
    int *order = sens ? malloc(((size_t)sens->n + 1) * sizeof(int)) : NULL;
    if (sens && !order && st == QR_OK) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (order) qr_sens_order(sens, order);
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
                const QrSensRow *row = &sens->rows[order[r]];
                bool dup = false;
                for (int j = 0; j < seen; j++) if (!strcmp(names[j], row->name)) dup = true;
                if (dup) continue;
                names[seen++] = row->name;
                for (int j = 0; j < row->n_q; j++) mask[row->q[j]] = false;
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
    QrAccumJob job = { s, a, &e, inc, masks, pms, NULL, NULL, acc_out ? NULL : full };
    if (st == QR_OK && acc_out) {
        job.acc = calloc((size_t)ns * (size_t)nm + 1, sizeof *job.acc);
        job.acc_set = calloc((size_t)ns * (size_t)nm + 1, 1);
        if (!job.acc || !job.acc_set) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (st == QR_OK && inc) {
        bool built;
        QrEvalTap er = e;
        er.per_match = pms[2];
        if (job.acc) { er.acc = job.acc + 2 * (size_t)nm; er.acc_set = job.acc_set + 2 * (size_t)nm; }
        qr__sens_pm_reset(pms[2], nm);
        st = qr_session_ref(s, qr__sens_eval_tap, &er, e.tap_only, &built);
        if (st == QR_OK && built) {
            s->ref->per_match = malloc(((size_t)nm + 1) * sizeof(QrMetrics));
            if (s->ref->per_match) memcpy(s->ref->per_match, pms[2], (size_t)nm * sizeof(QrMetrics));
            s->ref->per_match_kl = kl;
        }
        if (st == QR_OK) inc = s->ref->per_match && s->ref->per_match_kl == kl;
        if (st == QR_OK && job.acc && !built) st = qr_errf(QR_ERR_INVALID, "cumulative error over samples: stale reference");
    }
    job.inc = inc;
    if (st == QR_OK) st = qr_session_jobs(s, ns, qr__sens_accum_job, &job, &s->progress);
    /* incremental settings kept the reference's (full) values outside their cone */
    for (int k = 0; st == QR_OK && job.acc && k < ns; k++)
        for (int i = 0; i < nm; i++) {
            size_t at = (size_t)k * (size_t)nm + (size_t)i, full = 2 * (size_t)nm + (size_t)i;
            if (!job.acc_set[at] && pms[k][i].n && job.acc_set[full]) { job.acc[at] = job.acc[full]; job.acc_set[at] = 1; }
            if (!job.acc_set[at]) { memset(&job.acc[at], 0, sizeof job.acc[at]); job.acc[at].n_bad = -1; }
        }
    for (int k = 0; st == QR_OK && k < ns; k++)
        for (int i = 0; i < nm; i++)
            a->val[(size_t)i * (size_t)ns + (size_t)k] = pms[k][i].n ? qr_metric_get(&pms[k][i], metric) : NAN;
    for (int k = 0; k < ns; k++) { free(masks[k]); free(pms[k]); }
    free(order);
    qr__sens_eval_free(&e);
    free(job.acc_set);
    if (st == QR_OK && acc_out) *acc_out = job.acc;
    else free(job.acc);
    if (st != QR_OK) qr_accum_free(a);
    return st;
}

static QrStatus qr_accum_run_sets(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk,
                                  const QrAccSets *sets, QrMetricKind metric, QrAccum *a) {
    return qr__sens_accum_run(s, sens, topk, n_topk, sets, metric, a, NULL, NULL);
}

static QrStatus qr_accum_run_full(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk, const QrAccSets *sets,
                                  QrMetricKind metric, const QrAccFull *full, QrAccum *a) {
    return qr__sens_accum_run(s, sens, topk, n_topk, sets, metric, a, NULL, full);
}

static void qr_accum_free(QrAccum *a) {
    free(a->val);
    free(a->topk_names);
    memset(a, 0, sizeof *a);
}

/* extra[n_extra] (optional): more [match][setting] tables, written after a's values as
 * <setting>_<suffix> columns (suffix by suffix). */
static QrStatus qr__sens_accum_write(const QrSession *s, const QrAccum *a, const double *const *extra, const char *const *suffix,
                                int n_extra, const char *dir) {
    char *csv = NULL;
    size_t l = 0, c = 0;
    QrStatus st = qr_buf_printf(&csv, &l, &c, "Index,mod_name,base_tensor,metric");
    for (int k = 0; st == QR_OK && k < a->n_settings; k++) st = qr_buf_printf(&csv, &l, &c, ",%s", a->setting[k]);
    for (int x = 0; x < n_extra; x++)
        for (int k = 0; st == QR_OK && k < a->n_settings; k++) st = qr_buf_printf(&csv, &l, &c, ",%s_%s", a->setting[k], suffix[x]);
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
        for (int k = 0; st == QR_OK && k < a->n_settings * (1 + n_extra); k++) {
            int x = k / a->n_settings;
            const double *tab = x ? extra[x - 1] : a->val;
            double v = tab[(size_t)i * (size_t)a->n_settings + (size_t)(k % a->n_settings)];
            if (v != v) st = qr_buf_printf(&csv, &l, &c, ",");
            else if (isinf(v)) st = qr_buf_printf(&csv, &l, &c, ",%s", v > 0 ? "inf" : "-inf");
            else st = qr_buf_printf(&csv, &l, &c, ",%.9g", v);
        }
        if (st == QR_OK) st = qr_buf_printf(&csv, &l, &c, "\n");
    }
    if (st == QR_OK) {
        QrArena ar = {0};
        st = qr_file_write_atomic(qr_arena_printf(&ar, "%s/" QR_BF_ACCUM, dir), csv, l);
        qr_arena_free(&ar);
    }
    free(csv);
    return st;
}

static QrStatus qr_accum_write(const QrSession *s, const QrAccum *a, const char *dir) {
    return qr__sens_accum_write(s, a, NULL, NULL, 0, dir);
}

/* ==== over a data set ================================================================ */

static void qr_sens_set_free(QrSensSet *ss) {
    qr_sens_free(&ss->r);
    if (ss->have_acc) qr_accum_free(&ss->acc);
    free(ss->smp);
    free(ss->rank);
    free(ss->mean);
    free(ss->p05);
    free(ss->p95);
    memset(ss, 0, sizeof *ss);
}

/* Where qr_sens_set_run's samples come from: read from ds into cur (checked against ref), or a
 * sample the pass kept (kept[n_kept]); borrowed: the session's base_out is a kept one's. */
typedef struct QrSensFeed {
    const QrDsSet *ds;
    const QrTensor *ref;
    QrTensor *cur;
    const QrSensSample *kept;
    int n_kept;
    const QrSensResult *done;    /* sample done_k's rows, already run (NULL: none) */
    int done_k;
    bool borrowed;
} QrSensFeed;

/* The session on another input: its baseline values and references belong to the previous one
 * (freed; a borrowed base_out is left to its owner); out (optional): that input's baseline
 * outputs, kept by the pass, which become the session's (borrowed) with no baseline values: only
 * the rows run then (qr__sens_run_rows needs no baseline run for them). */
static void qr__sens_use_inputs(QrSession *s, const QrTensor *in, QrSensFeed *f, QrTensor *out) {
    s->inputs = in;
    if (s->base) for (int i = 0; i < s->m.n; i++) qr_tensor_free_data(&s->base[i]);
    if (s->base_out && !f->borrowed) for (int i = 0; i < s->b->n_outputs; i++) qr_tensor_free_data(&s->base_out[i]);
    free(s->base);
    if (!f->borrowed) free(s->base_out);
    s->base = NULL;
    s->base_out = out;
    s->base_stale = false;
    f->borrowed = out != NULL;
    qr_session_ref_free(s);
    qr_sens_reference_free(s);
}

/* Sample smp of the set onto the session: a kept one (with its outputs when rows: the rows'
 * phase), else read from ds into cur (freed first). */
static QrStatus qr__sens_load_sample(QrSession *s, QrSensFeed *f, int smp, bool rows) {
    for (int j = 0; j < f->n_kept; j++)
        if (f->kept[j].k == smp) {
            qr__sens_use_inputs(s, f->kept[j].in, f, rows ? f->kept[j].base_out : NULL);
            return QR_OK;
        }
    for (int i = 0; i < f->ds->n_inputs; i++) qr_tensor_free_data(&f->cur[i]);
    QR_TRY(qr_dsset_read(f->ds, s->b, smp, f->ref, f->cur));
    qr__sens_use_inputs(s, f->cur, f, NULL);
    return QR_OK;
}

static QrStatus qr__sens_set_rows(QrSession *s, const QrSensOpts *o, QrSensFeed *f, QrSensSet *ss) {
    int K = ss->k, n = 0;
    QrDsPool *pool = NULL, rpool;
    QrDsList *list = NULL, rlist = {0};
    QrSensRow *tmp = NULL;
    QrStatus st = QR_OK;
    qr_dsacc_pool_init(&rpool);
    for (int j = 0; st == QR_OK && j < K; j++) {
        QrSensResult r = {0};
        QrMetricAcc *acc = NULL, racc;
        if (f->done && ss->smp[j] == f->done_k) {
            st = qr__sens_take_done(f->done, o, &r, &acc, &racc);
            ss->done_j = j;
        } else {
            st = qr__sens_load_sample(s, f, ss->smp[j], true);
            if (st == QR_OK) st = qr__sens_run_rows(s, o, &r, &acc, &racc, false);
        }
        if (st == QR_OK && j == 0) {
            n = r.n;
            pool = calloc((size_t)n + 1, sizeof *pool);
            list = calloc((size_t)n + 1, sizeof *list);
            ss->rank = calloc((size_t)n * (size_t)K + 1, sizeof *ss->rank);
            tmp = calloc((size_t)n + 1, sizeof *tmp);
            st = pool && list && ss->rank && tmp ? qr_dsacc_list_alloc(&rlist, K) : qr_errf(QR_ERR_NOMEM, "out of memory");
            for (int i = 0; st == QR_OK && i < n; i++) { qr_dsacc_pool_init(&pool[i]); st = qr_dsacc_list_alloc(&list[i], K); }
        }
        if (st == QR_OK && r.n != n)
            st = qr_errf(QR_ERR_INVALID, "sensitivity rows changed between samples (%d vs %d)", r.n, n);
        for (int i = 0; st == QR_OK && i < n; i++) {
            const QrSensRow *x = &r.rows[i], *y = j ? &ss->r.rows[i] : x;
            if (x->n_q != y->n_q || x->q[0] != y->q[0] || x->type != y->type)
                st = qr_errf(QR_ERR_INVALID, "sensitivity row %d changed between samples", i);
            qr_dsacc_pool_add(&pool[i], &acc[i]);
            qr_dsacc_list_set(&list[i], j, &acc[i], &x->m);
            tmp[i] = *x;
        }
        if (st == QR_OK) {
            qr_dsacc_pool_add(&rpool, &racc);
            qr_dsacc_list_set(&rlist, j, &racc, &r.reference);
            qr__sens_sort(tmp, n, o);            /* this sample's ranking */
            for (int p = 0; p < n; p++) ss->rank[(size_t)tmp[p].id * (size_t)K + (size_t)j] = p + 1;
        }
        free(acc);
        if (st == QR_OK && j == 0) ss->r = r;    /* its rows stand for all (names, quantizers) */
        else {
            if (st == QR_OK) ss->r.n_exec += r.n_exec, ss->r.n_full += r.n_full;
            qr_sens_free(&r);
        }
    }
    if (st == QR_OK) {
        for (int i = 0; i < n; i++) qr_dsacc_pool_finish(&pool[i], &list[i], true, true, &ss->r.rows[i].m);
        qr_dsacc_pool_finish(&rpool, &rlist, true, true, &ss->r.reference);
        qr__sens_sort(ss->r.rows, n, o);
        /* samples whose top 5 are the pooled top 5 */
        int top = QR_MIN(5, n);
        for (int j = 0; j < K; j++) {
            bool same = true;
            for (int p = 0; p < top; p++) same = same && ss->rank[(size_t)ss->r.rows[p].id * (size_t)K + (size_t)j] <= top;
            ss->n_top5_same += same;
        }
    }
    for (int i = 0; list && i < n; i++) qr_dsacc_list_free(&list[i]);
    qr_dsacc_list_free(&rlist);
    free(pool);
    free(list);
    free(tmp);
    return st;
}

static QrStatus qr__sens_set_curves(QrSession *s, QrSensFeed *f, const int *topk, int n_topk, const QrAccSets *sets,
                                    QrMetricKind metric, QrSensSet *ss) {
    int K = ss->k, nm = s->m.n, ns = 0;
    QrDsPool *pool = NULL;
    double *val = NULL;
    QrStatus st = QR_OK;
    for (int j = 0; st == QR_OK && j < K; j++) {
        QrAccum a = {0};
        QrMetricAcc *acc = NULL;
        st = qr__sens_load_sample(s, f, ss->smp[j], false);
        if (st == QR_OK) st = qr__sens_accum_run(s, &ss->r, topk, n_topk, sets, metric, &a, &acc, NULL);
        if (st == QR_OK && j == 0) {
            ns = a.n_settings;
            size_t cells = (size_t)nm * (size_t)ns;
            pool = calloc(cells + 1, sizeof *pool);
            val = calloc(cells * (size_t)K + 1, sizeof *val);
            ss->mean = calloc(cells + 1, sizeof(double));
            ss->p05 = calloc(cells + 1, sizeof(double));
            ss->p95 = calloc(cells + 1, sizeof(double));
            if (!pool || !val || !ss->mean || !ss->p05 || !ss->p95) st = qr_errf(QR_ERR_NOMEM, "out of memory");
            for (size_t c = 0; st == QR_OK && c < cells; c++) qr_dsacc_pool_init(&pool[c]);
        }
        if (st == QR_OK && a.n_settings != ns) st = qr_errf(QR_ERR_INVALID, "cumulative-error settings changed between samples");
        for (int i = 0; st == QR_OK && i < nm; i++)
            for (int k = 0; k < ns; k++) {
                size_t c = (size_t)i * (size_t)ns + (size_t)k;
                const QrMetricAcc *x = &acc[(size_t)k * (size_t)nm + (size_t)i];
                if (x->n_bad >= 0) qr_dsacc_pool_add(&pool[c], x);
                val[c * (size_t)K + (size_t)j] = a.val[c];
            }
        free(acc);
        if (st == QR_OK && j == 0) { ss->acc = a; ss->have_acc = true; }
        else qr_accum_free(&a);
    }
    if (st == QR_OK) {
        for (int i = 0; i < nm; i++)
            for (int k = 0; k < ns; k++) {
                size_t c = (size_t)i * (size_t)ns + (size_t)k;
                QrMetrics m;
                qr_dsacc_pool_finish(&pool[c], NULL, false, false, &m);
                ss->acc.val[c] = pool[c].n_samples == K && s->vis[i] >= 0 ? qr_metric_get(&m, metric) : NAN;
                QrDsColStats cs;
                const double *v = &val[c * (size_t)K];
                bool all = true;
                for (int j = 0; j < K; j++) all = all && v[j] == v[j];
                qr_dsacc_col_stats(v, NULL, K, &cs);
                ss->mean[c] = all ? cs.mean : NAN;
                ss->p05[c] = all ? cs.p05 : NAN;
                ss->p95[c] = all ? cs.p95 : NAN;
            }
    }
    free(pool);
    free(val);
    return st;
}

static QrStatus qr_sens_set_run(QrSession *s, const QrSensOpts *o, const QrDsSet *ds, const int *smp, int k,
                                QrMetricKind smp_metric, const int *topk, int n_topk, const QrAccSets *sets,
                                QrMetricKind acc_metric, const QrSensSample *kept, int n_kept, const QrSensResult *done,
                                int done_k, QrSensSet *out) {
    memset(out, 0, sizeof *out);
    out->done_j = -1;
    if (k < 1) return qr_errf(QR_ERR_INVALID, "no sample for sensitivity");
    /* the rows done ahead stand for that sample's only when they are what this pass would compute */
    bool same = done && done->acc && !done->grouped && !done->n_unranked && qr__sens_same_rows(&done->opts, o);
    const QrTensor *orig = s->inputs;
    out->k = k;
    out->names = ds->names;
    out->smp_metric = smp_metric;
    out->smp = malloc(((size_t)k + 1) * sizeof *out->smp);
    QrSensFeed f = { .ds = ds, .ref = orig, .cur = calloc((size_t)ds->n_inputs + 1, sizeof(QrTensor)), .kept = kept,
                     .n_kept = kept ? n_kept : 0, .done = same ? done : NULL, .done_k = done_k };
    QrStatus st = out->smp && f.cur ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) memcpy(out->smp, smp, (size_t)k * sizeof *smp);
    if (st == QR_OK) st = qr__sens_set_rows(s, o, &f, out);
    if (st == QR_OK && topk) st = qr__sens_set_curves(s, &f, topk, n_topk, sets, acc_metric, out);
    qr__sens_use_inputs(s, orig, &f, NULL);
    for (int i = 0; f.cur && i < ds->n_inputs; i++) qr_tensor_free_data(&f.cur[i]);
    free(f.cur);
    if (st != QR_OK) qr_sens_set_free(out);
    return st;
}

static QrStatus qr_sens_set_write(const QrSession *s, const QrSensSet *ss, const char *dir) {
    QR_TRY(qr__sens_write(&ss->r, ss, dir));
    if (!ss->have_acc) return QR_OK;
    const QrAccum *a = &ss->acc;
    const double *extra[3] = { ss->mean, ss->p05, ss->p95 };
    static const char *const suffix[3] = { "mean", "p05", "p95" };
    return qr__sens_accum_write(s, a, extra, suffix, 3, dir);
}

/* ==== runall --data: the plot of the curves (the pass itself: analysis/dataset's
 * qr_ds_runall_sens) ====================================================================== */

static QrStatus qr_sens_set_plot_curves(const QrSession *s, const QrSensSet *ss, const char *path) {
    const QrAccum *a = &ss->acc;
    int ns = a->n_settings, n = 0, nm = s->m.n;
    double *y = malloc(((size_t)nm * (size_t)ns * 3 + 1) * sizeof *y);
    const char **names = malloc(((size_t)nm + 1) * sizeof *names);
    if (!y || !names) { free(y); free(names); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int i = 0; i < nm; i++) if (s->vis[i] >= 0) names[n++] = s->b->nodes[s->m.m[i].b_node].name;
    QrSeries ser[32];
    const double *lo[32], *hi[32];
    char *lab[32];
    for (int k = 0; k < ns && k < 32; k++) {
        double *ym = y + (size_t)(3 * k) * (size_t)n, *yl = ym + n, *yh = yl + n;
        int j = 0;
        for (int i = 0; i < nm; i++) {
            if (s->vis[i] < 0) continue;
            size_t c = (size_t)i * (size_t)ns + (size_t)k;
            ym[j] = ss->mean[c]; yl[j] = ss->p05[c]; yh[j] = ss->p95[c];
            j++;
        }
        lab[k] = malloc(80);
        if (lab[k]) snprintf(lab[k], 80, "%s (mean)", a->setting[k]);
        ser[k] = (QrSeries){ lab[k] ? lab[k] : a->setting[k], ym, k >= 3 };
        lo[k] = k < 3 ? yl : NULL;           /* bands for weight_only / activation_only / full (more would blur) */
        hi[k] = k < 3 ? yh : NULL;
    }
    char title[200];
    snprintf(title, sizeof title, "Cumulative error over %d samples: mean, p05-p95 band", ss->k);
    QrLineChart lc = { .title = title, .x_label = "layer (baseline order)", .n_x = n, .x_names = names, .n_panels = 1 };
    lc.panels[0] = (QrLinePanel){ .y_label = qr_metric_name(a->metric), .series = ser, .n_series = QR_MIN(ns, 32),
                                  .y_scale = QR_SCALE_LINEAR, .band_lo = lo, .band_hi = hi };
    QrCanvas c;
    QrStatus st = n ? qr_plot_line(&lc, &c) : QR_OK;
    if (st == QR_OK && n) { st = qr_plot_save(&c, path); qr_canvas_free(&c); }
    for (int k = 0; k < ns && k < 32; k++) free(lab[k]);
    free(y);
    free(names);
    return st;
}

static void qr_sens_set_json(QrJson *j, const QrSensSet *ss) {
    if (!ss->k) return;
    qr_json_key(j, "dataset_sensitivity");
    qr_json_obj_begin(j);
    qr_json_kv_str(j, "mode", ss->r.opts.off_one ? "off-one" : "one-on");
    qr_json_kv_str(j, "metric", qr_metric_name(ss->r.opts.metric));
    qr_json_kv_int(j, "sens_samples", ss->k);
    qr_json_key(j, "samples");
    qr_json_arr_begin(j);
    for (int q = 0; q < ss->k; q++) qr_json_str(j, ss->names[ss->smp[q]]);
    qr_json_arr_end(j);
    qr_json_kv_int(j, "samples_sharing_top5", ss->n_top5_same);
    qr_json_key(j, "top");
    qr_json_arr_begin(j);
    for (int k = 0; k < ss->r.n && k < 10; k++) {
        const QrSensRow *row = &ss->r.rows[k];
        QrSensRank rk;
        qr__sens_rank_stats(ss, row->id, &rk);
        qr_json_obj_begin_compact(j);
        qr_json_kv_str(j, "op_name", row->name);
        qr_json_kv_str(j, "sensitive_type", qr_sens_type_name(row->type));
        qr_json_kv_num(j, "pooled", qr_metric_get(&row->m, ss->r.opts.metric));
        if (ss->r.opts.off_one) qr_json_kv_num(j, "gain", qr_sens_gain(&ss->r, row));
        qr_json_kv_int(j, "rank_min", rk.min);
        qr_json_kv_num(j, "rank_median", rk.median);
        qr_json_kv_int(j, "rank_max", rk.max);
        qr_json_kv_int(j, "top5_samples", rk.top5);
        qr_json_obj_end(j);
    }
    qr_json_arr_end(j);
    qr_json_obj_end(j);
}

/* The rank-stability table (top 10) and the plots, for the HTML data-set section. */
static void qr_sens_set_html(QrHtml *h, const QrSensSet *ss, const char *dir) {
    char p[4400];
    snprintf(p, sizeof p, "%s/" QR_BF_DS_PLOT_SAMPLES, dir);
    bool samples_png = access(p, F_OK) == 0;
    snprintf(p, sizeof p, "%s/" QR_BF_DS_PLOT_ACCUM, dir);
    bool acc_png = access(p, F_OK) == 0;
    if (samples_png || acc_png) {
        qr_html_gallery_begin(h);
        if (samples_png) qr_html_image(h, QR_BF_DS_PLOT_SAMPLES, "Samples ranked worst first", "Samples ranked", 0, 0);
        if (acc_png)
            qr_html_image(h, QR_BF_DS_PLOT_ACCUM, "Cumulative error: mean and p05-p95 band over the samples",
                          "Cumulative error over the sensitivity samples", 0, 0);
        qr_html_gallery_end(h);
    }
    if (!ss->k) return;
    qr_html_paraf(h, "Sensitivity over the %d worst sample%s (pooled %s; %s): %d of %d share the pooled top 5. rank_* = the "
                  "row's rank on each sample alone (" QR_BF_DATASET "/" QR_BF_SENS ".txt).", ss->k, ss->k == 1 ? "" : "s",
                  qr_metric_name(ss->r.opts.metric), ss->r.opts.off_one ? "off-one" : "one-on", ss->n_top5_same, ss->k);
    static const char *const cols[] = { "rank", "op_name", "sensitive_type", "pooled", "rank_min", "rank_median", "rank_max",
                                        "top5_samples" };
    QrTable t = {0};
    if (qr_table_init(&t, QR_ARRAY_LEN(cols), cols) != QR_OK) { qr_err_clear(); return; }
    for (int k = 0; k < ss->r.n && k < 10; k++) {
        const QrSensRow *row = &ss->r.rows[k];
        QrSensRank rk;
        qr__sens_rank_stats(ss, row->id, &rk);
        int ri;
        if (qr_table_add_row(&t, &ri) != QR_OK) break;
        qr_table_setf(&t, ri, 0, "%d", k + 1);
        qr_table_set(&t, ri, 1, row->name);
        qr_table_set(&t, ri, 2, qr_sens_type_name(row->type));
        qr_table_setf(&t, ri, 3, "%.7g", qr_metric_get(&row->m, ss->r.opts.metric));
        qr_table_setf(&t, ri, 4, "%d", rk.min);
        qr_table_setf(&t, ri, 5, "%g", rk.median);
        qr_table_setf(&t, ri, 6, "%d", rk.max);
        qr_table_setf(&t, ri, 7, "%d", rk.top5);
    }
    qr_html_table(h, &t, NULL);
    qr_table_free(&t);
    qr_err_clear();
}
