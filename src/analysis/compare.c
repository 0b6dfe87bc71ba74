/* analysis/compare — implementation. See compare.h.
 *
 *   full run:   exec graph (analysis as given, or its int lowering) → tap each matched value
 *   shadow run: twin graph with every matched value *fed* by the baseline's value, so each
 *               layer computes from exact inputs → tap its output = its own error only */

static const char *qr_quant_describe(QrArena *a, const QrGraph *g, const QrQuantizer *q, const char **dtype) {
    if (dtype) *dtype = qr_dtype_name(q->dtype);
    if (q->scale_value < 0 || !g->values[q->scale_value].t.data) return "dynamic";
    if (q->n_scales <= 1 || q->scale_min == q->scale_max) return qr_arena_printf(a, "%.9g", q->scale_min);
    return qr_arena_printf(a, "[%.6g, %.6g] (%lld %s)", q->scale_min, q->scale_max, (long long)q->n_scales,
                           q->block_size ? "blocks" : "channels");
}

typedef struct QrCmpTap {
    QrSession *s;
    QrCompare *c;
    const QrGraph *g;
    int *first_match;        /* per exec value: first match tapped there, -1 */
    int *next_match;         /* per match: next match sharing the value */
    int *quant_of;           /* per match: analysis quantizer to dequantize with, -1 = value is float */
    int *row_of;             /* per match: its row in c->rows */
    bool shadow;
    QrTapFn extra;           /* also called on every value of the full run (qr_compare_mode_ex) */
    void *extra_user;
    QrMetricAcc *acc;        /* data sets (qr_compare_ds_run): per match, the full run's and the shadow run's */
    QrCmpMatchFn match_fn;   /* data sets (qr_compare_ds_open's hooks): each pair of the full run */
    void *match_user;
    const uint8_t *pairs_of; /* hooks' pairs_of: only these matches, no metrics */
} QrCmpTap;

/* A float32 copy of y (t's shape) into *d (compare --save-values). */
static QrStatus qr__cmp_keep(QrTensor *d, const QrTensor *t, const float *y) {
    qr_tensor_free_data(d);
    QR_TRY(qr_tensor_set_shape(d, QR_DT_F32, t->rank, t->dims));
    QR_TRY(qr_tensor_alloc_data(d));
    memcpy(d->data, y, (size_t)t->numel * sizeof(float));
    return QR_OK;
}

static QrStatus qr__cmp_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrCmpTap *ct = user;
    if (ct->extra && !ct->shadow) QR_TRY(ct->extra(ct->extra_user, g, node, value, t));
    for (int mi = ct->first_match[value]; mi >= 0; mi = ct->next_match[mi]) {
        const QrTensor *x = &ct->s->base[mi];
        if (!x->data || (ct->pairs_of && !ct->pairs_of[mi])) continue;
        QrTensor f = {0};
        const float *y = NULL;   /* t's own data, or f's */
        QrStatus st = QR_OK;
        if (ct->shadow) st = qr_session_visible_view(ct->s, mi, t, &f, &y);
        else if (t->dtype == QR_DT_F32) y = t->data;
        else if (ct->quant_of[mi] >= 0 && !qr_dtype_is_float(t->dtype))
            st = qr_quant_dequantize_value(g, &ct->s->qa.q[ct->quant_of[mi]], t, &f);
        else if (!qr_dtype_is_float(t->dtype) && ct->s->qt.by_value[value] >= 0)
            /* an integer value without a quantizer of its own (MaxPool on uint8): the twin's re-quantizer knows its scale */
            st = qr_quant_dequantize_value(&ct->s->tw.g, &ct->s->qt.q[ct->s->qt.by_value[value]], t, &f);
        else if (!qr_dtype_is_float(t->dtype)) st = qr_errf(QR_ERR_UNSUPPORTED, "no scale for integer value");
        else st = qr_tensor_to_f32(t, &f);
        if (st != QR_OK) { qr_err_clear(); continue; }
        if (!y) y = f.data;
        if (ct->pairs_of) {      /* the hooks' pairs only */
            if (t->numel == x->numel) st = ct->match_fn(ct->match_user, mi, x->data, y, x->numel);
            qr_tensor_free_data(&f);
            QR_TRY(st);
            continue;
        }
        QrLayerRow *r = &ct->c->rows[ct->row_of[mi]];
        if (ct->s->keep_vals && t->numel == x->numel) st = qr__cmp_keep(&ct->s->keep_vals[2 * mi + ct->shadow], t, y);
        if (st != QR_OK) { qr_tensor_free_data(&f); return st; }
        if (t->numel == x->numel) {
            QrMetricAcc ma;          /* as qr_metrics_compute(_ex): KL for the full run only; */
            /* data sets (acc) keep no Rtol of the shadow run: their tables show only its Cosine and SQNR */
            qr_metric_acc_init_opts(&ma, !ct->shadow, !(ct->shadow && ct->acc));
            qr_metric_acc_add(&ma, x->data, y, x->numel);
            if (ct->shadow) { qr_metric_acc_finish(&ma, &r->local); r->has_local = true; }
            else { qr_metric_acc_finish(&ma, &r->m); r->has_m = true; }
            if (ct->acc) ct->acc[2 * mi + ct->shadow] = ma;
            if (ct->match_fn && !ct->shadow) st = ct->match_fn(ct->match_user, mi, x->data, y, x->numel);
        }
        if (st != QR_OK) { qr_tensor_free_data(&f); return st; }
        qr_tensor_free_data(&f);
    }
    return QR_OK;
}

static QrStatus qr_compare_outputs(const QrSession *s, const QrTensor *outs, QrMetrics *m) {
    return qr_compare_outputs_sel(s, outs, -1, m);
}

static QrStatus qr_compare_outputs_sel(const QrSession *s, const QrTensor *outs, int only, QrMetrics *m) {
    QrMetricAcc acc;
    qr_metric_acc_init(&acc);
    double kld_sum = 0;
    int64_t kld_n = 0;
    for (int k = 0; k < s->b->n_outputs; k++) {
        if (only >= 0 && k != only) continue;
        QrTensor f = {0};
        QR_TRY(qr_tensor_to_f32(&outs[k], &f));
        const QrTensor *x = &s->base_out[k];
        QrStatus st = f.numel == x->numel ? QR_OK
                    : qr_errf(QR_ERR_SHAPE, "output %d ('%s') has %lld elements in the analysis model but %lld in the "
                              "baseline", k, s->b->values[s->b->outputs[k]].name, (long long)f.numel, (long long)x->numel);
        if (st == QR_OK) qr_metric_acc_add(&acc, x->data, f.data, x->numel);
        if (st == QR_OK && qr_metric_is_logits(s->b->values[s->b->outputs[k]].name, x)) {   /* KLD: per token */
            int64_t V = x->dims[x->rank - 1];
            for (int64_t t = 0; t < x->numel / V; t++) {
                double kl = qr_metric_token_kl((const float *)x->data + t * V, (const float *)f.data + t * V, V);
                if (kl == kl) { kld_sum += kl; kld_n++; }
            }
        }
        qr_tensor_free_data(&f);
        QR_TRY(st);
    }
    qr_metric_acc_finish(&acc, m);
    m->kld = kld_n ? kld_sum / (double)kld_n : NAN;
    return QR_OK;
}

/* ==== the comparison in steps ========================================================= */

struct QrCmpPlan {
    QrSession *s;
    QrCompare *c;
    double cos_threshold;
    const QrGraph *exec;     /* the analysis model as given, or its integer lowering */
    QrGraph low;             /* int / both modes: the lowering */
    QrLowerInfo info;
    bool have_low, both;
    QrCmpTap ct, sh;         /* the full run's taps, the shadow run's */
    QrTensor *outs;
    const QrTensor **feed;
    bool *only, *sh_only;
    QrRunOpts o[2];
    QrTensor *keep_outs;     /* qr_compare_ds_run: receives the full run's outputs */
    int n_outs;              /* exec's outputs (outs) */
};

static void qr__cmp_plan_free(QrCmpPlan *p) {
    if (!p) return;
    if (p->outs) for (int k = 0; k < p->n_outs; k++) qr_tensor_free_data(&p->outs[k]);
    free(p->outs);
    free(p->feed);
    free(p->only);
    free(p->sh_only);
    free(p->ct.first_match);
    free(p->ct.next_match);
    free(p->sh.first_match);
    free(p->sh.next_match);
    free(p->ct.quant_of);
    free(p->ct.row_of);
    if (p->have_low) { qr_graph_free(&p->low); qr_lower_info_free(&p->info); }
    free(p);
}

/* The shadow run's feeds: readers of each matched twin value see the baseline's (the
 * session's current baseline values; refreshed per sample by qr_compare_ds_run). */
static void qr__cmp_plan_feed(QrCmpPlan *p) {
    const QrSession *s = p->s;
    const QrCompare *c = p->c;
    for (int k = 0; k < c->n; k++) {
        int v = s->vis[c->rows[k].match];
        if (v >= 0) p->feed[v] = NULL;
    }
    for (int k = c->n - 1; k >= 0; k--) {
        int i = c->rows[k].match, v = s->vis[i];
        if (v < 0) continue;
        const QrTensor *tv = &s->tw.g.values[v].t;
        if (s->base[i].data && qr_dtype_is_float(tv->dtype) && tv->numel == s->base[i].numel) p->feed[v] = &s->base[i];
    }
}

/* Rows, taps and run options of a comparison of exec (p->exec set) into p->c. */
static QrStatus qr__cmp_plan(QrCmpPlan *p, QrTapFn extra, void *extra_user) {
    QrSession *s = p->s;
    QrCompare *c = p->c;
    const QrGraph *exec = p->exec;
    memset(c, 0, sizeof *c);
    c->first_drop = -1;
    QR_TRY(qr_session_run_baseline(s));
    c->rows = calloc((size_t)s->m.n + 1, sizeof *c->rows);
    if (!c->rows) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; i < s->m.n; i++)
        if (s->m.m[i].a_node >= 0 && s->m.m[i].a_value >= 0) c->rows[c->n++].match = i;
    int nv = QR_MAX(exec->n_values, s->tw.g.n_values);
    QrCmpTap *ct = &p->ct, *sh = &p->sh;
    *ct = (QrCmpTap){ s, c, exec, malloc(((size_t)nv + 1) * sizeof(int)), malloc(((size_t)s->m.n + 1) * sizeof(int)),
                      malloc(((size_t)s->m.n + 1) * sizeof(int)), malloc(((size_t)s->m.n + 1) * sizeof(int)), false,
                      extra, extra_user, NULL, NULL, NULL, NULL };
    *sh = *ct;               /* the shadow run's: its own value -> match lists */
    sh->first_match = malloc(((size_t)nv + 1) * sizeof(int));
    sh->next_match = malloc(((size_t)s->m.n + 1) * sizeof(int));
    sh->shadow = true;
    sh->g = &s->tw.g;
    p->n_outs = exec->n_outputs;
    p->outs = calloc((size_t)exec->n_outputs + 1, sizeof(QrTensor));
    p->feed = calloc((size_t)s->tw.g.n_values + 1, sizeof *p->feed);
    p->only = calloc((size_t)nv + 1, sizeof *p->only);
    p->sh_only = calloc((size_t)nv + 1, sizeof *p->sh_only);
    if (!ct->first_match || !ct->next_match || !ct->quant_of || !ct->row_of || !sh->first_match || !sh->next_match ||
        !p->outs || !p->feed || !p->only || !p->sh_only)
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; k < c->n; k++) ct->row_of[c->rows[k].match] = k;
    /* Full run: tap the integer value of a matched quantizer when it has one
     * (in int mode the DequantizeLinear may have been folded away). */
    for (int v = 0; v < nv; v++) ct->first_match[v] = -1;
    for (int k = c->n - 1; k >= 0; k--) {
        int i = c->rows[k].match;
        const QrMatch *mm = &s->m.m[i];
        int v = mm->a_value;
        ct->quant_of[i] = mm->a_is_int ? mm->a_quant : -1;
        if (mm->a_quant >= 0) {
            const QrQuantizer *q = &s->qa.q[mm->a_quant];
            if (q->int_value >= 0 && q->n_scales <= 1 && q->scale_value >= 0 && (q->out_value == v || q->int_value == v)) {
                v = q->int_value;
                ct->quant_of[i] = mm->a_quant;
            }
        }
        ct->next_match[i] = ct->first_match[v];
        ct->first_match[v] = i;
    }
    for (int v = 0; v < nv; v++) p->only[v] = ct->first_match[v] >= 0;
    /* Shadow run on the twin: readers of each matched value see the baseline's. */
    for (int v = 0; v < nv; v++) sh->first_match[v] = -1;
    for (int k = c->n - 1; k >= 0; k--) {
        int i = c->rows[k].match, v = s->vis[i];
        if (v < 0) continue;
        sh->next_match[i] = sh->first_match[v];
        sh->first_match[v] = i;
    }
    qr__cmp_plan_feed(p);
    for (int v = 0; v < nv; v++) p->sh_only[v] = sh->first_match[v] >= 0;
    p->o[0] = (QrRunOpts){ .tap = qr__cmp_tap, .tap_user = ct, .tap_only = extra ? NULL : p->only };
    p->o[1] = (QrRunOpts){ .tap = qr__cmp_tap, .tap_user = sh, .feed = p->feed, .tap_only = p->sh_only };
    return QR_OK;
}

static QrStatus qr_compare_prepare(QrSession *s, const char *mode, double cos_threshold, QrTapFn extra, void *extra_user,
                                   bool *extra_done, QrCompare *c, QrCmpPlan **out) {
    *out = NULL;
    if (extra_done) *extra_done = false;
    memset(c, 0, sizeof *c);
    QrCmpPlan *p = calloc(1, sizeof *p);
    if (!p) return qr_errf(QR_ERR_NOMEM, "out of memory");
    p->s = s;
    p->c = c;
    p->cos_threshold = cos_threshold;
    p->exec = s->a;
    QrStatus st = QR_OK;
    if (mode && strcmp(mode, "sim")) {
        st = qr_quant_lower(s->a, &s->qa, &p->low, &p->info);
        p->have_low = st == QR_OK;
        if (st != QR_OK) st = qr_err_wrap(st, "--mode %s: lowering to integer kernels", mode);
        p->both = !strcmp(mode, "both");
        if (!p->both) p->exec = &p->low;
    }
    if (p->exec != s->a) extra = NULL;   /* int mode: the lowering's values are not the analysis model's */
    if (st == QR_OK) st = qr__cmp_plan(p, extra, extra_user);
    if (st != QR_OK) { qr__cmp_plan_free(p); qr_compare_free(c); return st; }
    if (extra_done) *extra_done = extra != NULL;
    *out = p;
    return QR_OK;
}

static QrStatus qr_compare_step(QrCmpPlan *p, int k) {
    if (k == 0) {
        QR_TRY(qr_run(p->exec, p->s->inputs, &p->o[0], p->outs));
        for (int o = 0; p->s->keep_outs && o < p->s->b->n_outputs && o < p->exec->n_outputs; o++) {
            qr_tensor_free_data(&p->s->keep_outs[o]);
            QR_TRY(qr_tensor_to_f32(&p->outs[o], &p->s->keep_outs[o]));
        }
        QR_TRY(qr_compare_outputs(p->s, p->outs, &p->c->out));
        for (int j = 0; p->keep_outs && j < p->exec->n_outputs; j++) {
            p->keep_outs[j] = p->outs[j];
            memset(&p->outs[j], 0, sizeof p->outs[j]);
        }
        return QR_OK;
    }
    QrStatus st = qr_run(&p->s->tw.g, p->s->inputs, &p->o[1], NULL);
    return st == QR_OK ? st : qr_err_wrap(st, "shadow run (local error)");
}

static QrStatus qr_compare_finish(QrCmpPlan *p, QrStatus st) {
    if (!p) return st;
    QrCompare *c = p->c;
    QrSession *s = p->s;
    for (int k = 0; st == QR_OK && k < c->n; k++)
        if (c->rows[k].has_m && c->rows[k].m.cosine < p->cos_threshold && qr_match_verified(&s->m.m[c->rows[k].match])) {
            c->first_drop = k;   /* a headline: verified pairs only */
            break;
        }
    if (st == QR_OK && p->both) {
        QrLowerCmp lc = {0};
        st = qr_lower_compare(s->a, &s->qa, &p->low, s->inputs, 0, &lc);
        if (st == QR_OK) qr_compare_attach_lsb(c, s, &lc);
        qr_lower_cmp_free(&lc);
    }
    qr__cmp_plan_free(p);
    if (st != QR_OK) qr_compare_free(c);
    return st;
}

static QrStatus qr__cmp_job(void *ctx, int k, int tid) {
    QR_UNUSED(tid);
    return qr_compare_step(ctx, k);
}

/* ==== data sets: one plan, many inputs ================================================ */

static QrStatus qr_compare_ds_open(QrSession *s, const char *mode, QrCmpHooks *hooks, QrCompare *c, QrCmpPlan **out) {
    QR_TRY(qr_compare_prepare(s, mode, 0.0, hooks ? hooks->tap : NULL, hooks ? hooks->user : NULL,
                              hooks ? &hooks->tap_done : NULL, c, out));
    QrCmpPlan *p = *out;
    if (hooks && hooks->match) { p->ct.match_fn = hooks->match; p->ct.match_user = hooks->user; }
    if (hooks && hooks->match && hooks->pairs_of && !hooks->tap) {   /* tap only the wanted matches' values */
        p->ct.pairs_of = hooks->pairs_of;
        int nv = QR_MAX(p->exec->n_values, s->tw.g.n_values);
        for (int v = 0; v < nv; v++) {
            p->only[v] = false;
            for (int mi = p->ct.first_match[v]; mi >= 0 && !p->only[v]; mi = p->ct.next_match[mi]) p->only[v] = hooks->pairs_of[mi];
        }
    }
    return QR_OK;
}

static QrStatus qr__cmp_ds_run(QrCmpPlan *p, QrMetricAcc *acc, QrTensor *outs, bool shadow) {
    QrSession *s = p->s;
    QrCompare *c = p->c;
    QR_TRY(qr_session_run_baseline(s));      /* this sample's (refilled in place) */
    qr__cmp_plan_feed(p);
    for (int k = 0; k < c->n; k++) {
        QrLayerRow *r = &c->rows[k];
        int match = r->match;
        memset(r, 0, sizeof *r);
        r->match = match;
    }
    memset(&c->out, 0, sizeof c->out);
    c->first_drop = -1;
    for (int j = 0; j < p->n_outs; j++) qr_tensor_free_data(&p->outs[j]);
    p->ct.acc = p->sh.acc = acc;
    p->keep_outs = outs;
    QrStatus st = shadow ? qr_session_jobs(2, qr__cmp_job, p, NULL) : qr_compare_step(p, 0);
    p->keep_outs = NULL;
    if (st == QR_OK && shadow && p->both) {
        QrLowerCmp lc = {0};
        st = qr_lower_compare(s->a, &s->qa, &p->low, s->inputs, 0, &lc);
        if (st == QR_OK) qr_compare_attach_lsb(c, s, &lc);
        qr_lower_cmp_free(&lc);
    }
    return st;
}

static QrStatus qr_compare_ds_run(QrCmpPlan *p, QrMetricAcc *acc, QrTensor *outs) { return qr__cmp_ds_run(p, acc, outs, true); }

static QrStatus qr_compare_ds_run_full(QrCmpPlan *p, QrMetricAcc *acc, QrTensor *outs) {
    return qr__cmp_ds_run(p, acc, outs, false);
}

static void qr_compare_ds_close(QrCmpPlan *p) { qr__cmp_plan_free(p); }

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_compare_run(QrSession *s, const QrGraph *exec, double cos_threshold, QrCompare *c) {
    QrCmpPlan *p = calloc(1, sizeof *p);
    if (!p) return qr_errf(QR_ERR_NOMEM, "out of memory");
    *p = (QrCmpPlan){ .s = s, .c = c, .cos_threshold = cos_threshold, .exec = exec };
    QrStatus st = qr__cmp_plan(p, NULL, NULL);
    if (st == QR_OK) st = qr_session_jobs(2, qr__cmp_job, p, NULL);   /* the two runs at once */
    return qr_compare_finish(p, st);
}
#endif

static void qr_compare_free(QrCompare *c) {
    free(c->rows);
    memset(c, 0, sizeof *c);
}

/* %.7f in .txt, %.9g in .csv (docs/REPORT.md); inf/nan spelled out. */
static void qr_compare_num(QrTable *t, int row, int col, double v, bool csv) {
    if (v != v) qr_table_set(t, row, col, "nan");
    else if (isinf(v)) qr_table_set(t, row, col, v > 0 ? "inf" : "-inf");
    else if (csv) qr_table_setf(t, row, col, "%.9g", v);
    else qr_table_setf(t, row, col, "%.7f", v);
}

static QrStatus qr_compare_table(const QrSession *s, const QrCompare *c, bool csv, bool with_lsb, QrTable *t) {
    static const char *const cols[] = {
        "Index", "mod_name", "base_op_type", "analy_op_type", "shape", "quant_dtype", "qscale", "Cosine", "MSE", "L1", "KL",
        "SQNR", "Atol", "Rtol", "base_model_min", "analy_model_min", "base_model_max", "analy_model_max", "base_model_mean",
        "analy_model_mean", "base_model_var", "analy_model_var", "base_tensor", "analy_tensor", "local_Cosine", "local_SQNR",
        "nonfinite", "lsb_max", "lsb_diff", "lsb_ties" };
    QR_TRY(qr_table_init(t, with_lsb ? QR_ARRAY_LEN(cols) : QR_ARRAY_LEN(cols) - 3, cols));
    for (int k = 0; k < c->n; k++) {
        const QrLayerRow *r = &c->rows[k];
        const QrMatch *mm = &s->m.m[r->match];
        int row;
        QR_TRY(qr_table_add_row(t, &row));
        const QrTensor *bt = &s->b->values[mm->b_value].t;
        char shape[128] = "";
        size_t o = 0;
        for (int d = 0; d < bt->rank && o < sizeof shape; d++)
            o += (size_t)snprintf(shape + o, sizeof shape - o, "%s%lld", d ? "x" : "", (long long)bt->dims[d]);
        qr_table_setf(t, row, 0, "%d", k);
        if (s->m.verified_run && !qr_match_verified(mm))     /* marked in every table that uses it */
            qr_table_setf(t, row, 1, "%s [UNVERIFIED pair]", s->b->nodes[mm->b_node].name);
        else qr_table_set(t, row, 1, s->b->nodes[mm->b_node].name);
        qr_table_set(t, row, 2, s->b->nodes[mm->b_node].op_type);
        qr_table_set(t, row, 3, s->a->nodes[mm->a_node].op_type);
        qr_table_set(t, row, 4, shape);
        if (mm->a_quant >= 0) {
            const char *dt;
            const char *sc = qr_quant_describe(&t->arena, s->a, &s->qa.q[mm->a_quant], &dt);
            qr_table_set(t, row, 5, dt);
            qr_table_set(t, row, 6, sc);
        }
        const QrMetrics *m = &r->m;
        if (r->has_m) {
            double v[] = { m->cosine, m->mse, m->l1, m->kl, m->sqnr, m->atol, m->rtol, m->x_min, m->y_min, m->x_max,
                           m->y_max, m->x_mean, m->y_mean, m->x_var, m->y_var };
            for (int j = 0; j < QR_ARRAY_LEN(v); j++) qr_compare_num(t, row, 7 + j, v[j], csv);
        }
        qr_table_set(t, row, 22, s->b->values[mm->b_value].name);
        qr_table_set(t, row, 23, s->a->values[mm->a_value].name);
        if (r->has_local) {
            qr_compare_num(t, row, 24, r->local.cosine, csv);
            qr_compare_num(t, row, 25, r->local.sqnr, csv);
        }
        if (r->has_m) qr_table_setf(t, row, 26, "%lld", (long long)m->n_nonfinite);
        if (with_lsb && r->has_lsb) {
            qr_table_setf(t, row, 27, "%lld", (long long)r->lsb_max);
            qr_table_setf(t, row, 28, "%lld/%lld", (long long)r->lsb_diff, (long long)r->lsb_n);
            qr_table_setf(t, row, 29, "%lld", (long long)r->lsb_ties);
        }
    }
    return QR_OK;
}

static QrStatus qr_compare_write(const QrSession *s, const QrCompare *c, const char *dir) {
    bool with_lsb = false;
    for (int k = 0; k < c->n; k++) with_lsb |= c->rows[k].has_lsb;
    char *txt = NULL, *csv = NULL;
    size_t tl = 0, tc = 0, cl = 0, cc = 0;
    QrTable tt = {0}, tcsv = {0};
    QrStatus st = qr_compare_table(s, c, false, with_lsb, &tt);
    if (st == QR_OK) st = qr_compare_table(s, c, true, with_lsb, &tcsv);
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &tl, &tc, "Baseline: %s\nAnalysis: %s\nBaseline form: %s\nModel output: Cosine %.7f, SQNR "
                           "%.4f dB, L1 %.7g, MSE %.7g, KL %.7g\n\n", s->b->path, s->a->path, qr_session_baseline_form(s),
                           c->out.cosine, c->out.sqnr, c->out.l1, c->out.mse, c->out.kl);
    if (st == QR_OK) st = qr_table_render_txt(&tt, NULL, NULL, &txt, &tl, &tc);
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &tl, &tc, "\nlocal_*: each layer re-run on the baseline's inputs (its own error, without "
                           "what it inherits from upstream layers).\n");
    if (st == QR_OK) st = qr_table_render_csv(&tcsv, NULL, &csv, &cl, &cc);
    if (st == QR_OK) {
        QrArena a = {0};
        st = qr_file_write_atomic(qr_arena_printf(&a, "%s/" QR_BF_COMPARE ".txt", dir), txt, tl);
        if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/" QR_BF_COMPARE ".csv", dir), csv, cl);
        qr_arena_free(&a);
    }
    qr_table_free(&tt);
    qr_table_free(&tcsv);
    free(txt);
    free(csv);
    return st;
}

static void qr_compare_attach_lsb(QrCompare *c, const QrSession *s, const QrLowerCmp *lc) {
    for (int k = 0; k < c->n; k++) {
        const QrMatch *mm = &s->m.m[c->rows[k].match];
        if (mm->a_quant < 0) continue;
        int iv = s->qa.q[mm->a_quant].int_value;
        for (int l = 0; l < lc->n; l++) {
            const QrLowerLayerCmp *L = &lc->layers[l];
            if (L->value != iv || !L->seen_int || !L->seen_sim) continue;
            QrLayerRow *r = &c->rows[k];
            r->has_lsb = true;
            r->lsb_n = L->n;
            r->lsb_diff = L->n_diff;
            r->lsb_max = L->max_lsb;
            r->lsb_ties = L->n_tie;
        }
    }
}

static QrStatus qr_compare_mode(QrSession *s, const char *mode, double cos_threshold, QrCompare *c) {
    return qr_compare_mode_ex(s, mode, cos_threshold, NULL, NULL, NULL, c);
}

static QrStatus qr_compare_mode_ex(QrSession *s, const char *mode, double cos_threshold, QrTapFn extra, void *extra_user,
                                   bool *extra_done, QrCompare *c) {
    QrCmpPlan *p;
    QR_TRY(qr_compare_prepare(s, mode, cos_threshold, extra, extra_user, extra_done, c, &p));
    return qr_compare_finish(p, qr_session_jobs(2, qr__cmp_job, p, NULL));
}
