/* analysis/dsstat — implementation. See dsstat.h.
 *
 * Map: one value's accumulator · a model's set · byte form · profile --data · runall's consumer. */

/* ==== one value ====================================================================== */

/* Total order on doubles for min/max: -0.0 below +0.0 (so the result does not depend on which
 * of the two came first). */
static inline bool qr__dss_below(double a, double b) { return a < b || (a == b && signbit(a) && !signbit(b)); }

static void qr__dss_init(QrStatAcc *a) {
    memset(a, 0, sizeof *a);
    a->min = INFINITY;
    a->max = -INFINITY;
}

static void qr_statacc_add(QrStatAcc *a, const QrStats *s) {
    a->n_samples++;
    a->n_nan += s->n_nan;
    a->n_posinf += s->n_posinf;
    a->n_neginf += s->n_neginf;
    if (!s->n) return;
    double n = (double)s->n;
    a->n += s->n;
    qr_dsacc_xsum_add_prod(&a->sx, n, s->mean);
    qr_dsacc_xsum_add_nm2(&a->sx2, n, s->mean);
    qr_dsacc_xsum_add(&a->m2, s->m2);
    if (qr__dss_below(s->min, a->min)) a->min = s->min;
    if (qr__dss_below(a->max, s->max)) a->max = s->max;
}

static void qr_statacc_merge(QrStatAcc *a, const QrStatAcc *b) {
    a->n_samples += b->n_samples;
    a->n_nan += b->n_nan;
    a->n_posinf += b->n_posinf;
    a->n_neginf += b->n_neginf;
    a->n += b->n;
    qr_dsacc_xsum_merge(&a->sx, &b->sx);
    qr_dsacc_xsum_merge(&a->sx2, &b->sx2);
    qr_dsacc_xsum_merge(&a->m2, &b->m2);
    if (qr__dss_below(b->min, a->min)) a->min = b->min;
    if (qr__dss_below(a->max, b->max)) a->max = b->max;
}

static void qr_statacc_finish(const QrStatAcc *a, QrStats *o) {
    qr_stats_init(o);
    o->n = a->n;
    o->n_nan = a->n_nan;
    o->n_posinf = a->n_posinf;
    o->n_neginf = a->n_neginf;
    if (!a->n) return;
    long double n = (long double)a->n, sx = qr_dsacc_xsum_value(&a->sx);
    o->min = a->min;
    o->max = a->max;
    o->mean = (double)(sx / n);
    /* Σ(x − mean)² = Σ m2_s + Σ n_s·mean_s² − (Σ n_s·mean_s)² / N */
    long double m2 = qr_dsacc_xsum_value(&a->m2) + qr_dsacc_xsum_value(&a->sx2) - sx * sx / n;
    o->m2 = m2 > 0 ? (double)m2 : 0;
}

/* ==== a model's set ================================================================== */

static QrStatus qr_statset_init(QrStatSet *ss, const QrGraph *g) {
    memset(ss, 0, sizeof *ss);
    ss->g = g;
    ss->acc = malloc(((size_t)g->n_values + 1) * sizeof *ss->acc);
    ss->seen = calloc((size_t)g->n_values + 1, sizeof *ss->seen);
    if (!ss->acc || !ss->seen) { qr_statset_free(ss); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int v = 0; v < g->n_values; v++) qr__dss_init(&ss->acc[v]);
    return QR_OK;
}

static void qr_statset_free(QrStatSet *ss) {
    free(ss->acc);
    free(ss->seen);
    memset(ss, 0, sizeof *ss);
}

static QrStatus qr_statset_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrStatSet *ss = user;
    QR_UNUSED(node);
    if (g != ss->g || value < 0 || value >= g->n_values || g->values[value].is_init) return QR_OK;
    QrStats st;
    qr_stats_init(&st);
    qr_stats_tensor(&st, t);
    qr_statacc_add(&ss->acc[value], &st);
    ss->seen[value] = true;
    if (ss->last) ss->last[value] = st;
    return QR_OK;
}

static QrStatus qr_statset_merge(QrStatSet *a, const QrStatSet *b) {
    if (a->g->n_values != b->g->n_values) return qr_errf(QR_ERR_INVALID, "profiles of different models cannot merge");
    for (int v = 0; v < a->g->n_values; v++) {
        if (!b->seen[v]) continue;
        qr_statacc_merge(&a->acc[v], &b->acc[v]);
        a->seen[v] = true;
    }
    return QR_OK;
}

static QrStatus qr_statset_write(const QrStatSet *ss, const char *dir, const char *prefix, const QrProfileSel *sel,
                                 const char *head, int *n_nonfinite) {
    const QrGraph *g = ss->g;
    QrStats *st = calloc((size_t)g->n_values + 1, sizeof *st);
    bool *seen = calloc((size_t)g->n_values + 1, sizeof *seen);
    if (!st || !seen) { free(st); free(seen); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int v = 0; v < g->n_values; v++)
        if (ss->seen[v]) { qr_statacc_finish(&ss->acc[v], &st[v]); seen[v] = true; }
    qr_stats_inits(g, st, seen);       /* initializers: the same in every sample */
    QrStatus s = qr_profile_write_ex(g, NULL, st, seen, dir, prefix, sel, head, n_nonfinite);
    free(st);
    free(seen);
    return s;
}

/* ==== byte form ====================================================================== */

static QrStatus qr__dss_put_xsum(const QrXSum *s, uint8_t **buf, size_t *len, size_t *cap) {
    QrXSum t = *s;
    qr_dsacc_xsum_norm(&t);
    for (int l = 0; l < QR_XSUM_LIMBS; l++) QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)t.l[l], 8));
    QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)t.n_nan, 8));
    QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)t.n_pinf, 8));
    return qr_sketch_put_le(buf, len, cap, (uint64_t)t.n_ninf, 8);
}

static void qr__dss_get_xsum(QrXSum *t, const uint8_t *p, size_t avail, size_t *off, bool *bad) {
    memset(t, 0, sizeof *t);
    for (int l = 0; l < QR_XSUM_LIMBS; l++) t->l[l] = (int64_t)qr_sketch_get_le(p, avail, off, 8, bad);
    for (int l = 0; l + 1 < QR_XSUM_LIMBS; l++) if (t->l[l] < 0 || t->l[l] >= 4294967296LL) *bad = true;
    t->n_nan = (int32_t)qr_sketch_get_le(p, avail, off, 8, bad);
    t->n_pinf = (int32_t)qr_sketch_get_le(p, avail, off, 8, bad);
    t->n_ninf = (int32_t)qr_sketch_get_le(p, avail, off, 8, bad);
}

static QrStatus qr_statset_put(const QrStatSet *ss, uint8_t **buf, size_t *len, size_t *cap) {
    int nv = ss->g->n_values, n = 0;
    for (int v = 0; v < nv; v++) n += ss->seen[v];
    QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)nv, 8));
    QR_TRY(qr_sketch_put_le(buf, len, cap, (uint64_t)n, 8));
    for (int v = 0; v < nv; v++) {
        if (!ss->seen[v]) continue;
        const QrStatAcc *a = &ss->acc[v];
        uint64_t u[7] = { (uint64_t)v, (uint64_t)a->n, (uint64_t)a->n_nan, (uint64_t)a->n_posinf, (uint64_t)a->n_neginf,
                          (uint64_t)a->n_samples, 0 };
        for (int k = 0; k < 6; k++) QR_TRY(qr_sketch_put_le(buf, len, cap, u[k], 8));
        memcpy(&u[6], &a->min, 8);
        QR_TRY(qr_sketch_put_le(buf, len, cap, u[6], 8));
        memcpy(&u[6], &a->max, 8);
        QR_TRY(qr_sketch_put_le(buf, len, cap, u[6], 8));
        QR_TRY(qr__dss_put_xsum(&a->sx, buf, len, cap));
        QR_TRY(qr__dss_put_xsum(&a->sx2, buf, len, cap));
        QR_TRY(qr__dss_put_xsum(&a->m2, buf, len, cap));
    }
    return QR_OK;
}

static QrStatus qr_statset_get(QrStatSet *ss, const uint8_t *p, size_t avail, size_t *used) {
    size_t off = 0;
    bool bad = false;
    int nv = ss->g->n_values;
    uint64_t pv = qr_sketch_get_le(p, avail, &off, 8, &bad), n = qr_sketch_get_le(p, avail, &off, 8, &bad);
    if (bad || pv != (uint64_t)nv || n > (uint64_t)nv)
        return qr_errf(QR_ERR_INVALID, "profile: %llu values in the part, the model has %d", (unsigned long long)pv, nv);
    for (uint64_t i = 0; i < n && !bad; i++) {
        uint64_t v = qr_sketch_get_le(p, avail, &off, 8, &bad);
        if (bad || v >= (uint64_t)nv) { bad = true; break; }
        QrStatAcc *a = &ss->acc[v];
        a->n = (int64_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
        a->n_nan = (int64_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
        a->n_posinf = (int64_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
        a->n_neginf = (int64_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
        a->n_samples = (int64_t)qr_sketch_get_le(p, avail, &off, 8, &bad);
        uint64_t u = qr_sketch_get_le(p, avail, &off, 8, &bad);
        memcpy(&a->min, &u, 8);
        u = qr_sketch_get_le(p, avail, &off, 8, &bad);
        memcpy(&a->max, &u, 8);
        qr__dss_get_xsum(&a->sx, p, avail, &off, &bad);
        qr__dss_get_xsum(&a->sx2, p, avail, &off, &bad);
        qr__dss_get_xsum(&a->m2, p, avail, &off, &bad);
        ss->seen[v] = true;
    }
    if (bad) return qr_errf(QR_ERR_INVALID, "profile: malformed accumulators");
    *used = off;
    return QR_OK;
}

/* ==== profile --data ================================================================= */

static QrStatus qr_dsstat_profile_data(const QrGraph *g, const QrDsSet *ds, const QrProfileSel *sel, const char *dir,
                                QrStepHook *progress, int *n_nonfinite) {
    QrStatSet ss;
    QR_TRY(qr_statset_init(&ss, g));
    QrTensor *first = calloc((size_t)ds->n_inputs + 1, sizeof *first), *cur = calloc((size_t)ds->n_inputs + 1, sizeof *cur);
    QrTensor *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    QrStatus st = first && cur && outs ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    QrRunOpts o = { .tap = qr_statset_tap, .tap_user = &ss };
    for (int k = 0; st == QR_OK && k < ds->n; k++) {
        if (progress) qr_step(progress, k, ds->n);
        QrTensor *in = k ? cur : first;
        st = qr_dsset_read(ds, g, k, k ? first : NULL, in);
        if (st == QR_OK) {
            st = qr_run(g, in, &o, outs);
            if (st != QR_OK) st = qr_err_wrap(st, "sample '%s'", ds->names[k]);
        }
        for (int i = 0; i < g->n_outputs; i++) qr_tensor_free_data(&outs[i]);
        for (int i = 0; k && i < ds->n_inputs; i++) qr_tensor_free_data(&cur[i]);
    }
    char head[4600];
    snprintf(head, sizeof head, "Statistics over %d sample%s of %s (%s layout): every column pooled over all samples' "
             "elements; weights are the same in every sample.\n\n", ds->n, ds->n == 1 ? "" : "s", ds->dir,
             ds->folders ? "one folder per input" : "flat");
    if (st == QR_OK) st = qr_statset_write(&ss, dir, "", sel, head, n_nonfinite);
    for (int i = 0; first && i < ds->n_inputs; i++) qr_tensor_free_data(&first[i]);
    free(first);
    free(cur);
    free(outs);
    qr_statset_free(&ss);
    return st;
}

/* ==== runall's consumer ============================================================== */

static QrStatus qr__dss_anal_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrDsStatRun *r = user;
    return qr_statset_tap(&r->prof[1], g, node, value, t);
}

static QrStatus qr__dss_match(void *user, int match, const float *x, const float *y, int64_t n) {
    QrDsStatRun *r = user;
    if (r->all.a) return qr_dist_acc_pair_all(&r->all, r->s, match, x, y, n);
    return qr_dist_acc_pair(&r->dist, match, x, y, n);
}

static QrStatus qr_dsstat_base_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t) {
    QrDsStatRun *r = user;
    return qr_statset_tap(&r->prof[0], g, node, value, t);
}

static QrStatus qr_dsstat_run_init(QrDsStatRun *r, const QrSession *s, QrDistSet *dset) {
    memset(r, 0, sizeof *r);
    r->on = true;
    r->dset = dset;
    QrStatus st = qr_statset_init(&r->prof[0], s->b);
    if (st == QR_OK) st = qr_statset_init(&r->prof[1], s->a);
    if (st == QR_OK && dset) st = qr_dist_acc_init(&r->dist, s, dset);
    r->hooks = (QrCmpHooks){ .tap = qr__dss_anal_tap, .match = r->dist.n ? qr__dss_match : NULL, .user = r };
    if (st != QR_OK) qr_dsstat_run_free(r);
    return st;
}

static QrStatus qr_dsstat_dist_all(QrDsStatRun *r, const QrSession *s, bool have_axis, int axis, const char *const *names,
                                   int n_names) {
    qr_dist_acc_free(&r->all);
    QR_TRY(qr_dist_acc_init_all(&r->all, s, have_axis, axis, names, n_names));
    r->s = s;
    r->hooks.match = r->all.n ? qr__dss_match : NULL;
    if (!r->all.n) qr_dist_acc_free(&r->all);
    return QR_OK;
}

static QrStatus qr_dsstat_dist_begin(QrDsStatRun *r, const QrSession *s, QrDistSet *dset, int *pending) {
    qr_dist_acc_free(&r->dist);
    r->dset = dset;
    QrStatus st = qr_dist_acc_init(&r->dist, s, dset);
    *pending = st == QR_OK ? r->dist.n : 0;
    if (st == QR_OK && r->all.a) *pending = qr_dist_acc_take(&r->dist, &r->all);
    qr_dist_acc_free(&r->all);
    r->hooks.match = *pending ? qr__dss_match : NULL;
    return st;
}

static void qr_dsstat_run_free(QrDsStatRun *r) {
    qr_statset_free(&r->prof[0]);
    qr_statset_free(&r->prof[1]);
    qr_dist_acc_free(&r->dist);
    qr_dist_acc_free(&r->all);
    memset(r, 0, sizeof *r);
}

static QrStatus qr_dsstat_run_finish(QrDsStatRun *r, const QrSession *s, const char *data_dir, const char *dir) {
    char head[4600];
    QrStatus st = QR_OK;
    for (int m = 0; st == QR_OK && m < 2; m++) {
        if (m == 1 && !r->hooks.tap_done) break;   /* int modes: the analysis model's values were not seen */
        snprintf(head, sizeof head, "Statistics over %d sample%s of %s: every column pooled over all samples' elements "
                 "(the analysis sections use the worst sample); weights are the same in every sample.\n\n", r->n_samples,
                 r->n_samples == 1 ? "" : "s", data_dir);
        st = qr_statset_write(&r->prof[m], dir, m ? "model1_" : "model0_", NULL, head, NULL);
    }
    QR_UNUSED(s);
    if (st == QR_OK && r->dset && r->dist.n) {
        r->dist.n_samples = r->n_samples;
        st = qr_dist_acc_finish(&r->dist, r->dset);
    }
    return st;
}

static QrStatus qr_dsstat_prof_add(QrDsStatRun *r, const QrDsStatRun *b) {
    QR_TRY(qr_statset_merge(&r->prof[0], &b->prof[0]));
    QR_TRY(qr_statset_merge(&r->prof[1], &b->prof[1]));
    if (!b->n_samples) return QR_OK;         /* no run seen (every sample skipped): no say */
    r->hooks.tap_done = r->n_samples ? r->hooks.tap_done && b->hooks.tap_done : b->hooks.tap_done;
    r->n_samples += b->n_samples;
    return QR_OK;
}

