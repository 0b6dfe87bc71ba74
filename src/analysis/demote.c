/* analysis/demote — implementation. See demote.h.
 *
 * Each group of 16-bit quantizers that share a scale or zero point is demoted on its own:
 * its scale / zero point (and, for weights stored as integers, the integers re-quantized
 * from the matched float weight) are substituted for one run of the twin, every other
 * quantizer as given; the model-output metrics of that run are the row. */

typedef struct QrDmGroup { int n_q, q[8]; const char *why; } QrDmGroup;

static int qr__dm_root(int *p, int i) {
    while (p[i] != i) { p[i] = p[p[i]]; i = p[i]; }
    return i;
}

/* The 8-bit type of a 16-bit quantizer's type (same signedness), false for other types. */
static bool qr__dm_8(QrDType dt, QrDType *d8, QrQuantRange *r16, QrQuantRange *r8) {
    if (dt != QR_DT_S16 && dt != QR_DT_U16) return false;
    *d8 = dt == QR_DT_S16 ? QR_DT_S8 : QR_DT_U8;
    qr_quant_range(dt, r16);
    qr_quant_range(*d8, r8);
    return true;
}

/* Why quantizer i cannot be demoted on its own terms, or NULL. */
static const char *qr__dm_why(const QrSession *s, int i) {
    const QrGraph *g = &s->tw.g;
    const QrQuantizer *q = &s->qt.q[i];
    if (q->form != QR_QF_QDQ && q->form != QR_QF_DQ_INIT) return "not a QuantizeLinear/DequantizeLinear quantizer";
    if (q->block_op) return "a weight-only node's weight (block map / table codes)";
    if (q->scale_value < 0 || !g->values[q->scale_value].t.data || g->values[q->scale_value].t.dtype != QR_DT_F32)
        return "no constant float32 scale";
    if (q->zp_value < 0 || !g->values[q->zp_value].t.data) return "no constant zero point";
    if (q->form == QR_QF_DQ_INIT && !s->fw[i]) return "integer weight without a float counterpart";
    return NULL;
}

/* Whether every reader of value v is a Q/DQ node of the group's quantizers. */
static bool qr__dm_readers_in(const QrSession *s, int v, const QrDmGroup *gr) {
    const QrUse *u;
    int nu = qr_graph_readers(&s->tw.g, v, &u);
    for (int r = 0; r < nu; r++) {
        bool mine = false;
        for (int k = 0; k < gr->n_q && !mine; k++) {
            const QrQuantizer *q = &s->qt.q[gr->q[k]];
            mine = q->q_node == u[r].node;
            for (int d = 0; d < q->n_dq; d++) mine |= q->dq_nodes[d] == u[r].node;
        }
        if (!mine) return false;
    }
    return true;
}

/* ==== one group's run ================================================================== */

typedef struct QrDmJob {
    QrSession *s;
    QrDmGroup *groups;
    QrDemoteRow *rows;
} QrDmJob;

static QrStatus qr__dm_new(QrTensor *pool, int *n, QrDType dt, const QrTensor *shape, QrTensor **out) {
    QrTensor *t = &pool[(*n)++];
    QR_TRY(qr_tensor_set_shape(t, dt, shape->rank, shape->dims));
    QR_TRY(qr_tensor_alloc_data(t));
    *out = t;
    return QR_OK;
}

static QrStatus qr__dm_job(void *ctx, int k, int tid) {
    QR_UNUSED(tid);
    QrDmJob *j = ctx;
    QrSession *s = j->s;
    const QrGraph *g = &s->tw.g;
    const QrDmGroup *gr = &j->groups[k];
    const QrTensor **subst = calloc((size_t)g->n_values + 1, sizeof *subst);
    QrTensor *pool = calloc(3 * (size_t)gr->n_q + 1, sizeof *pool);
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    QrOverrides ov = {0};
    int np = 0;
    QrStatus st = subst && pool && outs ? qr_session_overrides_alloc(s, &ov) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        qr_session_overrides(s, NULL, &ov);        /* every quantizer as given */
        for (int v = 0; v < g->n_values; v++) subst[v] = ov.subst[v];
    }
    for (int m = 0; st == QR_OK && m < gr->n_q; m++) {
        const QrQuantizer *q = &s->qt.q[gr->q[m]];
        QrDType d8 = QR_DT_S8;
        QrQuantRange r16 = { 0, 1 }, r8 = { 0, 1 };
        qr__dm_8(q->dtype, &d8, &r16, &r8);
        double ratio = (double)r16.hi / (double)r8.hi;
        const QrTensor *sc = &g->values[q->scale_value].t, *zp = &g->values[q->zp_value].t;
        QrTensor *nsc = (QrTensor *)subst[q->scale_value], *nzp = (QrTensor *)subst[q->zp_value];
        bool own_sc = false;
        for (int t = 0; t < np; t++) own_sc |= nsc == &pool[t];
        if (!own_sc) {                              /* shared parameters: made once */
            st = qr__dm_new(pool, &np, QR_DT_F32, sc, &nsc);
            for (int64_t p = 0; st == QR_OK && p < sc->numel; p++) ((float *)nsc->data)[p] = (float)(qr_tensor_get_f64(sc, p) * ratio);
            if (st == QR_OK) subst[q->scale_value] = nsc;
        }
        bool own_zp = false;
        for (int t = 0; t < np; t++) own_zp |= nzp == &pool[t];
        if (st == QR_OK && !own_zp) {
            st = qr__dm_new(pool, &np, d8, zp, &nzp);
            for (int64_t p = 0; st == QR_OK && p < zp->numel; p++) {
                double z = nearbyint((double)qr_tensor_get_i64(zp, p) / ratio);
                qr_tensor_set_i64(nzp, p, (int64_t)QR_MAX((double)r8.lo, QR_MIN((double)r8.hi, z)));
            }
            if (st == QR_OK) subst[q->zp_value] = nzp;
        }
        if (st == QR_OK && q->form == QR_QF_DQ_INIT) {
            /* the integer weight re-quantized from its float weight on the 8-bit grid */
            const QrTensor *w = s->fw[gr->q[m]], *iw = &g->values[q->int_value].t;
            QrTensor *nw = NULL;
            st = w->numel == iw->numel ? qr__dm_new(pool, &np, d8, iw, &nw)
               : qr_errf(QR_ERR_SHAPE, "'%s': float weight has %lld elements, integer weight %lld", g->values[q->int_value].name,
                         (long long)w->numel, (long long)iw->numel);
            for (int64_t e = 0; st == QR_OK && e < iw->numel; e++) {
                int64_t p = qr_weights_param_index(iw->rank, iw->dims, q->axis, q->block_size, nsc->numel, e);
                int32_t z = (int32_t)qr_tensor_get_i64(nzp, nzp->numel > 1 ? p : 0);
                qr_tensor_set_i64(nw, e, qr_quant_quantize_f32((float)qr_tensor_get_f64(w, e), ((const float *)nsc->data)[p], z, r8));
            }
            if (st == QR_OK) subst[q->int_value] = nw;
        }
    }
    if (st == QR_OK) {
        QrRunOpts ro = qr_session_run_opts(&ov, NULL, NULL);
        ro.subst = subst;
        st = qr_run(g, s->inputs, &ro, outs);
        if (st == QR_OK) st = qr_session_compare_outputs(s, outs, &j->rows[k].m);
        if (st != QR_OK) st = qr_err_wrap(st, "int16 demotion of '%s'", j->rows[k].name);
    }
    for (int o = 0; outs && o < g->n_outputs; o++) qr_tensor_free_data(&outs[o]);
    for (int t = 0; t < np; t++) qr_tensor_free_data(&pool[t]);
    qr_session_overrides_free(&ov);
    free(outs);
    free(pool);
    free(subst);
    return st;
}

/* The model-output metrics of the twin with every quantizer as given. */
static QrStatus qr__dm_as_is(QrSession *s, QrMetrics *m) {
    const QrGraph *g = &s->tw.g;
    QrOverrides ov = {0};
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    QrStatus st = outs ? qr_session_overrides_alloc(s, &ov) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        qr_session_overrides(s, NULL, &ov);
        QrRunOpts ro = qr_session_run_opts(&ov, NULL, NULL);
        st = qr_run(g, s->inputs, &ro, outs);
        if (st == QR_OK) st = qr_session_compare_outputs(s, outs, m);
    }
    for (int o = 0; outs && o < g->n_outputs; o++) qr_tensor_free_data(&outs[o]);
    free(outs);
    qr_session_overrides_free(&ov);
    return st;
}

/* ==== the ranking ====================================================================== */

static int qr__dm_cmp(const void *pa, const void *pb, void *ctx) {
    QrMetricKind metric = *(const QrMetricKind *)ctx;
    const QrDemoteRow *a = pa, *b = pb;
    double x = qr_metric_badness(&a->m, metric), y = qr_metric_badness(&b->m, metric);
    int c = x < y ? -1 : x > y ? 1 : 0;
    if (!c) c = strcmp(a->name, b->name);
    return c;
}

static QrStatus qr_demote_run(QrSession *s, QrMetricKind metric, QrDemotion *out) {
    memset(out, 0, sizeof *out);
    out->metric = metric;
    QR_TRY(qr_session_run_baseline(s));
    const QrGraph *g = &s->tw.g;
    int nq = s->qt.n;
    int *parent = malloc(((size_t)nq + 1) * sizeof(int));
    const char **why = calloc((size_t)nq + 1, sizeof *why);
    QrDmGroup *groups = calloc((size_t)nq + 1, sizeof *groups);
    QrStatus st = parent && why && groups ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    int n16 = 0;
    for (int i = 0; st == QR_OK && i < nq; i++) {
        parent[i] = i;
        const QrQuantizer *q = &s->qt.q[i];
        QrDType d8 = QR_DT_S8;
        QrQuantRange r16, r8;
        if (q->kind == QR_QK_BIAS || !qr__dm_8(q->dtype, &d8, &r16, &r8)) { why[i] = ""; continue; }
        n16++;
        why[i] = qr__dm_why(s, i);
        for (int j = 0; j < i; j++) {
            const QrQuantizer *p = &s->qt.q[j];
            if (why[j] && !*why[j]) continue;
            if ((q->scale_value >= 0 && p->scale_value == q->scale_value) || (q->zp_value >= 0 && p->zp_value == q->zp_value)) {
                int r1 = qr__dm_root(parent, i), r2 = qr__dm_root(parent, j);
                if (r1 != r2) parent[r1] = r2;
            }
        }
    }
    /* groups: one per root, members in table order */
    int ng = 0;
    int *gid = st == QR_OK ? malloc(((size_t)nq + 1) * sizeof(int)) : NULL;
    if (st == QR_OK && !gid) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < nq; i++) gid[i] = -1;
    for (int i = 0; st == QR_OK && i < nq; i++) {
        if (why[i] && !*why[i]) continue;
        int r = qr__dm_root(parent, i);
        if (gid[r] < 0) gid[r] = ng++;
        QrDmGroup *gr = &groups[gid[r]];
        if (gr->n_q < QR_ARRAY_LEN(gr->q)) gr->q[gr->n_q++] = i;
        else gr->why = "more than 8 quantizers share its parameters";
        if (why[i] && !gr->why) gr->why = why[i];
    }
    for (int k = 0; st == QR_OK && k < ng; k++) {
        QrDmGroup *gr = &groups[k];
        for (int m = 0; !gr->why && m < gr->n_q; m++) {
            const QrQuantizer *q = &s->qt.q[gr->q[m]];
            if (!qr__dm_readers_in(s, q->scale_value, gr) || !qr__dm_readers_in(s, q->zp_value, gr) ||
                (q->form == QR_QF_DQ_INIT && !qr__dm_readers_in(s, q->int_value, gr)))
                gr->why = "its parameters are read by other nodes too";
        }
    }
    /* rows of the demotable groups */
    out->rows = st == QR_OK ? qr_arena_array(&out->arena, (size_t)ng + 1, sizeof *out->rows) : NULL;
    if (st == QR_OK && !out->rows) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    QrDmGroup *run = st == QR_OK ? calloc((size_t)ng + 1, sizeof *run) : NULL;
    if (st == QR_OK && !run) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; st == QR_OK && k < ng; k++) {
        const QrDmGroup *gr = &groups[k];
        const QrQuantizer *q = &s->qt.q[gr->q[0]];
        const char *tensor = q->float_value >= 0 ? g->values[q->float_value].name : g->values[q->int_value].name;
        if (q->kind == QR_QK_WEIGHT && s->fw[gr->q[0]]) {
            for (int v = 0; v < s->b->n_values; v++)
                if (&s->b->values[v].t == s->fw[gr->q[0]]) tensor = s->b->values[v].name;
        }
        if (gr->why) {
            out->n_skipped++;
            if (!out->note[0]) snprintf(out->note, sizeof out->note, "'%s': %s", tensor, gr->why);
            continue;
        }
        QrDemoteRow *row = &out->rows[out->n];
        row->tensor = qr_arena_strdup(&out->arena, tensor);
        int src = q->owner >= 0 ? s->tw.origin[q->owner] : -1;
        row->node = q->owner < 0 ? "" : qr_arena_strdup(&out->arena, src >= 0 ? s->a->nodes[src].name : g->nodes[q->owner].name);
        row->name = q->owner >= 0 ? row->node : row->tensor;
        row->op_type = q->owner < 0 ? "Input" : src >= 0 ? s->a->nodes[src].op_type : g->nodes[q->owner].op_type;
        row->kind = q->kind == QR_QK_WEIGHT ? "weight" : "activation";
        row->dtype = qr_dtype_name(q->dtype);
        row->to = q->dtype == QR_DT_S16 ? qr_dtype_name(QR_DT_S8) : qr_dtype_name(QR_DT_U8);
        row->n_q = gr->n_q;
        memcpy(row->q, gr->q, sizeof row->q);
        row->also = NULL;
        for (int m = 1; m < gr->n_q; m++) {
            const QrQuantizer *p = &s->qt.q[gr->q[m]];
            const char *t = p->float_value >= 0 ? g->values[p->float_value].name : g->values[p->int_value].name;
            row->also = qr_arena_printf(&out->arena, "%s%s%s", row->also ? row->also : "", row->also ? " " : "", t);
        }
        run[out->n++] = *gr;
    }
    out->n_16 = n16;
    if (st == QR_OK) st = qr__dm_as_is(s, &out->as_is);
    QrDmJob job = { s, run, out->rows };
    if (st == QR_OK) st = qr_session_jobs(s, out->n, qr__dm_job, &job, &s->progress);
    if (st == QR_OK) {
        qsort_r(out->rows, (size_t)out->n, sizeof *out->rows, qr__dm_cmp, &metric);
    }
    free(run);
    free(gid);
    free(parent);
    free(why);
    free(groups);
    if (st != QR_OK) qr_demote_free(out);
    return st;
}

static void qr_demote_free(QrDemotion *d) {
    qr_arena_free(&d->arena);
    memset(d, 0, sizeof *d);
}

static QrStatus qr_demote_write(const QrSession *s, const QrDemotion *d, const char *dir) {
    QR_UNUSED(s);
    static const char *const cols[] = { "op_name", "sensitive_type", "op_type", "dtype", "demoted_to", "tensor", "L1", "Cosine",
                                        "MSE", "KL", "SQNR", "shares_parameters_with" };
    QrTable tt = {0}, tc = {0};
    char *txt = NULL, *csv = NULL, *js = NULL;
    size_t tl = 0, tcap = 0, cl = 0, ccap = 0, jl = 0;
    QrStatus st = qr_table_init(&tt, QR_ARRAY_LEN(cols), cols);
    if (st == QR_OK) st = qr_table_init(&tc, QR_ARRAY_LEN(cols), cols);
    for (int k = 0; st == QR_OK && k < d->n; k++) {
        const QrDemoteRow *row = &d->rows[k];
        double v[] = { row->m.l1, row->m.cosine, row->m.mse, row->m.kl, row->m.sqnr };
        for (int pass = 0; pass < 2 && st == QR_OK; pass++) {
            QrTable *t = pass ? &tc : &tt;
            int ri;
            st = qr_table_add_row(t, &ri);
            if (st != QR_OK) break;
            const char *text[] = { row->name, row->kind, row->op_type, row->dtype, row->to, row->tensor };
            for (int c = 0; c < 6; c++) qr_table_set(t, ri, c, text[c]);
            for (int c = 0; c < 5; c++) {
                char b[64];
                qr_sens_num(b, sizeof b, v[c], pass ? "%.9g" : "%.7f");
                qr_table_set(t, ri, 6 + c, b);
            }
            qr_table_set(t, ri, 11, row->also ? row->also : "");
        }
    }
    if (st == QR_OK)
        st = qr_buf_printf(&txt, &tl, &tcap, "int16 -> int8 demotion (QuantAnalysis sensitivity reserve): each group of 16-bit "
                           "quantizers put on the 8-bit grid of the same signedness and clipping threshold (scale' = "
                           "scale*qmax16/qmax8, zero_point' = round(zero_point*qmax8/qmax16); integer weights re-quantized from the "
                           "float weight), every other quantizer as given; metrics at the model output(s) against the baseline; "
                           "cheapest first by %s.\nAs given: L1 %.7g, Cosine %.7f, SQNR %.4f dB. %d 16-bit quantizer%s; %d group%s "
                           "not demotable%s%s.\n\n", qr_metric_name(d->metric), d->as_is.l1, d->as_is.cosine, d->as_is.sqnr, d->n_16,
                           d->n_16 == 1 ? "" : "s", d->n_skipped, d->n_skipped == 1 ? "" : "s", d->note[0] ? ", first: " : "", d->note);
    if (st == QR_OK) st = qr_table_render_txt(&tt, NULL, NULL, &txt, &tl, &tcap);
    if (st == QR_OK) st = qr_table_render_csv(&tc, NULL, &csv, &cl, &ccap);
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "metric", qr_metric_name(d->metric));
    qr_json_key(&j, "as_given");
    qr_json_obj_begin_compact(&j);
    qr_json_kv_num(&j, "L1", d->as_is.l1);
    qr_json_kv_num(&j, "Cosine", d->as_is.cosine);
    qr_json_kv_num(&j, "SQNR", d->as_is.sqnr);
    qr_json_obj_end(&j);
    qr_json_key(&j, "ops");
    qr_json_arr_begin(&j);
    for (int k = 0; k < d->n; k++) {
        const QrDemoteRow *row = &d->rows[k];
        qr_json_obj_begin_compact(&j);
        qr_json_kv_str(&j, "op_name", row->name);
        qr_json_kv_str(&j, "sensitive_type", row->kind);
        qr_json_kv_str(&j, "op_type", row->op_type);
        qr_json_kv_str(&j, "dtype", row->dtype);
        qr_json_kv_str(&j, "demoted_to", row->to);
        qr_json_kv_str(&j, "tensor", row->tensor);
        qr_json_kv_num(&j, "L1", row->m.l1);
        qr_json_kv_num(&j, "Cosine", row->m.cosine);
        qr_json_kv_num(&j, "MSE", row->m.mse);
        qr_json_kv_num(&j, "KL", row->m.kl);
        qr_json_kv_num(&j, "SQNR", row->m.sqnr);
        qr_json_obj_end(&j);
    }
    qr_json_arr_end(&j);
    qr_json_obj_end(&j);
    if (st == QR_OK) st = qr_json_finish(&j, &js, &jl);
    else qr_json_free(&j);
    if (st == QR_OK) st = qr_table_write_trio(dir, QR_BF_DEMOTION, txt, tl, csv, cl, js, jl);
    qr_table_free(&tt);
    qr_table_free(&tc);
    free(txt);
    free(csv);
    free(js);
    return st;
}
