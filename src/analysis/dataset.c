/* analysis/dataset — implementation. See dataset.h.
 *
 * Map: the comparison per sample into accumulators · merge ·
 * tables (per layer, per output, per sample) and the bad case. */

#include <malloc.h>   /* malloc_trim: the pass gives each sample's freed buffers back */

/* ==== the comparison ================================================================= */

static QrStatus qr__ds_keep(QrDsCompare *d, QrSession *s, int k, const QrTensor *in);
static QrStatus qr__ds_worst(QrDsCompare *d, const QrSession *s, int k, const QrTensor *outs, int64_t split_exec);

static void qr_ds_compare_end(QrDsCompare *d) {
    if (d->plan) qr_compare_ds_close(d->plan);
    d->plan = NULL;
    qr_compare_free(&d->cmp);
    if (d->cur_outs && d->s) for (int j = 0; j < d->s->a->n_outputs; j++) qr_tensor_free_data(&d->cur_outs[j]);
    free(d->cur_outs);
    free(d->acc);
    d->cur_outs = NULL;
    d->acc = NULL;
    d->s = NULL;
}

static void qr_ds_compare_free(QrDsCompare *d) {
    qr_ds_compare_end(d);
    qr_ds_kept_free(d);
    free(d->kept);
    qr_ds_worst_free(d);
    for (int r = 0; d->rows && r < d->n_rows; r++) qr_dsacc_list_free(&d->rows[r].list);
    for (int j = 0; d->outs && j < d->n_outs; j++) {
        qr_dsacc_list_free(&d->outs[j].list);
        free(d->outs[j].flips);
        qr_tok_free(&d->outs[j].tok);
    }
    free(d->rows);
    free(d->outs);
    free(d->smp);
    free(d->smp_in_bad);
    free(d->done);
    for (int k = 0; d->skip_why && k < d->n_samples; k++) free(d->skip_why[k]);
    free(d->skip_why);
    free(d->skipped);
    memset(d, 0, sizeof *d);
}

static QrStatus qr_ds_compare_init(QrDsCompare *d, const QrSession *s, int n, const char *const *names) {
    memset(d, 0, sizeof *d);
    d->n_samples = n;
    d->names = names;
    d->rank_output = -1;
    d->worst.k = -1;
    d->n_in = s->b->n_inputs;
    d->rows = calloc((size_t)s->m.n + 1, sizeof *d->rows);
    d->n_outs = s->b->n_outputs;
    d->outs = calloc((size_t)d->n_outs + 1, sizeof *d->outs);
    d->smp = calloc((size_t)n + 1, sizeof *d->smp);
    d->smp_in_bad = calloc((size_t)n + 1, sizeof *d->smp_in_bad);
    d->done = calloc((size_t)n + 1, 1);
    d->skipped = calloc((size_t)n + 1, 1);
    d->skip_why = calloc((size_t)n + 1, sizeof *d->skip_why);
    QrStatus st = d->rows && d->outs && d->smp && d->smp_in_bad && d->done && d->skipped && d->skip_why
                      ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < s->m.n; i++) {
        if (s->m.m[i].a_node < 0 || s->m.m[i].a_value < 0) continue;   /* qr_compare's rows */
        QrDsRow *r = &d->rows[d->n_rows++];
        r->match = i;
        qr_dsacc_pool_init(&r->pool);
        qr_dsacc_pool_init(&r->local);
        r->split.w_channel = r->split.w_quant = r->split.i_quant = -1;
        st = qr_dsacc_list_alloc(&r->list, n);
    }
    for (int j = 0; st == QR_OK && j < d->n_outs; j++) {
        QrDsOut *o = &d->outs[j];
        qr_dsacc_pool_init(&o->pool);
        const QrTensor *t = &s->b->values[s->b->outputs[j]].t;
        o->cls = t->rank == 2 && t->dims[1] >= 2;
        o->tok_out = qr_tok_is_logits(s->b->values[s->b->outputs[j]].name, t);
        o->flips = calloc((size_t)n + 1, sizeof *o->flips);
        st = o->flips ? qr_dsacc_list_alloc(&o->list, n) : qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (st != QR_OK) qr_ds_compare_free(d);
    return st;
}

/* Top-1 agreement and top-5 overlap of one [batch, classes] output pair. */
static void qr__ds_topk_add(QrDsOut *o, int k, const QrTensor *x, const float *y) {
    int64_t rows = x->dims[0], cls = x->dims[1];
    int kk = (int)QR_MIN(5, cls);
    int64_t ix[5], iy[5];
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = (const float *)x->data + r * cls, *yr = y + r * cls;
        qr_tok_topk(xr, cls, kk, ix);
        qr_tok_topk(yr, cls, kk, iy);
        o->rows++;
        if (ix[0] == iy[0]) o->agree++;
        else o->flips[k]++;
        for (int a = 0; a < kk; a++)
            for (int b = 0; b < kk; b++) o->top5_hits += ix[a] == iy[b];
        o->top5_den += kk;
    }
}

static int64_t qr__ds_nonfinite(const QrTensor *t) {
    if (!qr_dtype_is_float(t->dtype)) return 0;
    int64_t n = 0;
    for (int64_t e = 0; e < t->numel; e++) { double v = qr_tensor_get_f64(t, e); n += !isfinite(v); }
    return n;
}

/* ==== the error split over the set ====================================================
 * Each sample's sums (compare.c, element order) enter exact sums, so the pooled split is the
 * same in any sample order and after merging shards. */

static void qr__ds_split_add(QrDsSplit *d, const QrErrSplit *e) {
    const double v[6] = { e->sw, e->si, e->s_round, e->s_clip, e->s_noise, e->su2 };
    for (int j = 0; j < 6; j++) qr_dsacc_xsum_add(&d->s[j], v[j]);
    d->samples++;
    d->n += e->n;
    d->n_clip += e->n_clip;
    d->parts |= e->parts;
    d->per_channel |= e->steps_med == e->steps_med;
    if (d->w_channel < 0 && e->w_channel >= 0) { d->w_channel = e->w_channel; d->w_share = e->w_channel_share; }
    if (d->w_quant < 0) d->w_quant = e->w_quant;
    if (d->i_quant < 0) d->i_quant = e->i_quant;
}

static void qr__ds_split_merge(QrDsSplit *a, const QrDsSplit *b) {
    for (int j = 0; j < 6; j++) qr_dsacc_xsum_merge(&a->s[j], &b->s[j]);
    a->samples += b->samples;
    a->n += b->n;
    a->n_clip += b->n_clip;
    a->parts |= b->parts;
    a->per_channel |= b->per_channel;
    if (a->w_channel < 0 && b->w_channel >= 0) { a->w_channel = b->w_channel; a->w_share = b->w_share; }
    if (a->w_quant < 0) a->w_quant = b->w_quant;
    if (a->i_quant < 0) a->i_quant = b->i_quant;
}

static void qr__ds_split_view(const QrDsSplit *d, QrErrSplit *e) {
    memset(e, 0, sizeof *e);
    e->has = d->samples > 0;
    e->parts = d->parts;
    e->n = d->n;
    e->n_clip = d->n_clip;
    double *v[6] = { &e->sw, &e->si, &e->s_round, &e->s_clip, &e->s_noise, &e->su2 };
    for (int j = 0; j < 6; j++) *v[j] = (double)qr_dsacc_xsum_value(&d->s[j]);
    if (d->per_channel) e->su2 = NAN;    /* steps_rms: no pooled per-channel median */
    e->steps_med = NAN;
    e->w_channel = d->w_channel;
    e->w_quant = d->w_quant;
    e->i_quant = d->i_quant;
    e->w_channel_share = d->w_channel >= 0 ? d->w_share : NAN;
}

#ifdef QR_TESTING
QR_TESTAPI int64_t qr_ds_compared;
#endif

static QrStatus qr_ds_compare_sample(QrDsCompare *d, QrSession *s, const char *mode, int k, const QrTensor *in) {
#ifdef QR_TESTING
    __atomic_add_fetch(&qr_ds_compared, 1, __ATOMIC_RELAXED);
#endif
    if (k < 0 || k >= d->n_samples) return qr_errf(QR_ERR_INVALID, "sample index %d outside the set of %d", k, d->n_samples);
    if (d->done[k]) return qr_errf(QR_ERR_INVALID, "sample '%s' added twice", d->names[k]);
    if (d->s && d->s != s) return qr_errf(QR_ERR_INVALID, "one data-set pass, one session");
    int nout = s->b->n_outputs;
    qr_session_next_inputs(s, in);
    QrStatus st = QR_OK;
    if (!d->plan) {                          /* the first sample of the pass: prepare once */
        d->s = s;
        d->acc = calloc(2 * (size_t)s->m.n + 1, sizeof *d->acc);
        d->cur_outs = calloc((size_t)s->a->n_outputs + 1, sizeof *d->cur_outs);
        if (!d->acc || !d->cur_outs) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        if (s->m.verified_run) s->match_fixed = true;   /* verified already: every sample keeps that match */
        QrBaseRunOpts base = { .tap = d->base_tap, .tap_user = d->base_tap_user, .stats = d->base_stats, .seen = d->base_seen };
        if (st == QR_OK) st = qr_compare_ds_open(s, mode, d->hooks, &base, &d->cmp, &d->plan);
        if (st != QR_OK) { qr_ds_compare_end(d); return qr_err_wrap(st, "sample '%s'", d->names[k]); }
    }
    QrMetricAcc *acc = d->acc;
    QrTensor *outs = d->cur_outs;
    for (int j = 0; j < s->a->n_outputs; j++) qr_tensor_free_data(&outs[j]);
    const int64_t split0 = d->cmp.split_exec;
    st = qr_compare_ds_run(d->plan, acc, outs);
    if (st == QR_OK) s->match_fixed = true;  /* verified on this first sample: kept for the others */
    const QrCompare c = d->cmp;
    if (st == QR_OK && c.n != d->n_rows) st = qr_errf(QR_ERR_INVALID, "comparison rows changed between samples (%d vs %d)", c.n, d->n_rows);
    for (int r = 0; st == QR_OK && r < c.n; r++) {
        QrDsRow *dr = &d->rows[r];
        const QrLayerRow *lr = &c.rows[r];
        int mi = lr->match;
        if (lr->has_m) {
            qr_dsacc_pool_add(&dr->pool, &acc[2 * mi]);
            qr_dsacc_list_set(&dr->list, k, &acc[2 * mi], &lr->m);
            dr->n_m++;
        }
        if (lr->has_local) { qr_dsacc_pool_add(&dr->local, &acc[2 * mi + 1]); dr->n_local++; }
        if (lr->sp.has) qr__ds_split_add(&dr->split, &lr->sp);
        if (lr->has_lsb) {
            dr->has_lsb = true;
            dr->lsb_n += lr->lsb_n;
            dr->lsb_diff += lr->lsb_diff;
            dr->lsb_ties += lr->lsb_ties;
            if (lr->lsb_max > dr->lsb_max) dr->lsb_max = lr->lsb_max;
        }
    }
    /* graph outputs: each on its own, and all concatenated for the sample's ranking */
    QrMetricAcc all;
    qr_metric_acc_init(&all);
    for (int j = 0; st == QR_OK && j < nout; j++) {
        QrTensor f = {0};
        const QrTensor *x = &s->base_out[j];
        st = qr_tensor_to_f32(&outs[j], &f);
        if (st == QR_OK && f.numel != x->numel)
            st = qr_errf(QR_ERR_SHAPE, "output %d ('%s') has %lld elements in the analysis model but %lld in the baseline", j,
                         s->b->values[s->b->outputs[j]].name, (long long)f.numel, (long long)x->numel);
        if (st == QR_OK) {
            QrDsOut *o = &d->outs[j];
            QrMetricAcc a1;
            QrMetrics m1;
            qr_metric_acc_init(&a1);
            qr_metric_acc_add(&a1, x->data, f.data, x->numel);
            qr_metric_acc_finish(&a1, &m1);
            qr_dsacc_pool_add(&o->pool, &a1);
            qr_dsacc_list_set(&o->list, k, &a1, &m1);
            if (d->rank_output < 0 || d->rank_output == j) qr_metric_acc_add(&all, x->data, f.data, x->numel);
            if (o->cls && x->rank == 2 && x->dims[1] >= 2) qr__ds_topk_add(o, k, x, f.data);
            if (o->tok_out) {    /* labels: the sample's input_ids shifted, when the model has them */
                QrTensor lab = {0};
                bool have = false;
                st = qr_tok_labels(s->b, in, NULL, x, &lab, &have);
                if (st == QR_OK) st = qr_tok_add(&o->tok, x, &f, have ? &lab : NULL, k);
                qr_tensor_free_data(&lab);
            }
        }
        qr_tensor_free_data(&f);
    }
    if (st == QR_OK) {
        qr_metric_acc_finish(&all, &d->smp[k]);
        d->smp_in_bad[k] = 0;
        for (int i = 0; i < s->b->n_inputs; i++) d->smp_in_bad[k] += qr__ds_nonfinite(&in[i]);
        d->done[k] = 1;
        d->n_done++;
        st = qr__ds_keep(d, s, k, in);
        if (st == QR_OK) st = qr__ds_worst(d, s, k, outs, d->cmp.split_exec - split0);
        if (st == QR_OK && d->sample_done) st = d->sample_done(d->sample_done_user, s, k, in);
    }
    for (int j = 0; j < s->a->n_outputs; j++) qr_tensor_free_data(&outs[j]);
    return st == QR_OK ? st : qr_err_wrap(st, "sample '%s'", d->names[k]);
}

static QrStatus qr_ds_pass(QrDsCompare *d, QrSession *s, const QrDsSet *ds, const char *mode, int lo, int hi,
                           const QrTensor *ref, const QrStepHook *hook) {
    QrTensor *cur = calloc((size_t)ds->n_inputs + 1, sizeof *cur);
    QrStatus st = cur ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = lo; st == QR_OK && k < hi; k++) {
        if (hook) qr_step(hook, k - lo, hi - lo);
        if (ref && k == ds->held) {          /* the caller's tensors of this sample: not read again */
            st = qr_ds_compare_sample(d, s, mode, k, ref);
            continue;
        }
        st = qr_dsset_read(ds, s->b, k, ref, cur);
        if (st != QR_OK && st != QR_ERR_NOMEM && d->skip_bad && !d->skipped[k]) {
            d->skip_why[k] = strdup(qr_err_msg());
            d->skipped[k] = 1;
            d->n_skipped++;
            qr_err_clear();
            st = d->skip_why[k] ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
            continue;
        }
        if (st == QR_OK) st = qr_ds_compare_sample(d, s, mode, k, cur);
        for (int i = 0; i < ds->n_inputs; i++) qr_tensor_free_data(&cur[i]);
        /* The sample's buffers, freed, go back to the system: left in the heap, glibc's
         * fragmentation lets the peak grow with the number of samples (bench/README). */
        malloc_trim(0);
    }
    qr_ds_compare_end(d);
    free(cur);
    if (st == QR_OK && hi > lo && d->n_skipped >= hi - lo && !d->part)
        st = qr_errf(QR_ERR_INVALID, "--data %s: every sample was skipped (--skip-bad-samples); the first: %s", ds->dir,
                     d->skip_why[lo] ? d->skip_why[lo] : "?");
    return st;
}

static QrStatus qr_ds_compare_merge(QrDsCompare *a, const QrDsCompare *b) {
    if (a->n_samples != b->n_samples || a->n_rows != b->n_rows || a->n_outs != b->n_outs)
        return qr_errf(QR_ERR_INVALID, "the parts cover different sets or models (%d/%d samples, %d/%d rows, %d/%d outputs)",
                       a->n_samples, b->n_samples, a->n_rows, b->n_rows, a->n_outs, b->n_outs);
    for (int k = 0; k < a->n_samples; k++)
        if ((a->done[k] || a->skipped[k]) && (b->done[k] || b->skipped[k]))
            return qr_errf(QR_ERR_INVALID, "sample %d ('%s') appears in two parts", k, a->names[k]);
    for (int r = 0; r < a->n_rows; r++) {
        QrDsRow *x = &a->rows[r];
        const QrDsRow *y = &b->rows[r];
        if (x->match != y->match) return qr_errf(QR_ERR_INVALID, "the parts compare different layers (row %d)", r);
        qr_dsacc_pool_merge(&x->pool, &y->pool);
        qr_dsacc_pool_merge(&x->local, &y->local);
        QR_TRY(qr_dsacc_list_merge(&x->list, &y->list, a->names));
        x->n_m += y->n_m;
        x->n_local += y->n_local;
        x->has_lsb |= y->has_lsb;
        x->lsb_n += y->lsb_n; x->lsb_diff += y->lsb_diff; x->lsb_ties += y->lsb_ties;
        if (y->lsb_max > x->lsb_max) x->lsb_max = y->lsb_max;
        qr__ds_split_merge(&x->split, &y->split);
    }
    for (int j = 0; j < a->n_outs; j++) {
        QrDsOut *x = &a->outs[j];
        const QrDsOut *y = &b->outs[j];
        qr_dsacc_pool_merge(&x->pool, &y->pool);
        QR_TRY(qr_dsacc_list_merge(&x->list, &y->list, a->names));
        x->rows += y->rows; x->agree += y->agree; x->top5_hits += y->top5_hits; x->top5_den += y->top5_den;
        QR_TRY(qr_tok_merge(&x->tok, &y->tok));
        for (int k = 0; k < a->n_samples; k++) if (b->done[k]) x->flips[k] = y->flips[k];
    }
    for (int k = 0; k < a->n_samples; k++) {
        if (!b->done[k]) continue;
        a->smp[k] = b->smp[k];
        a->smp_in_bad[k] = b->smp_in_bad[k];
        a->done[k] = 1;
        a->n_done++;
    }
    for (int k = 0; k < a->n_samples; k++) {   /* --skip-bad-samples: the samples b skipped, with their errors */
        if (!b->skipped[k]) continue;
        a->skip_why[k] = strdup(b->skip_why[k] ? b->skip_why[k] : "?");
        if (!a->skip_why[k]) return qr_errf(QR_ERR_NOMEM, "out of memory");
        a->skipped[k] = 1;
        a->n_skipped++;
    }
    return QR_OK;
}

static void qr_ds_row_metrics(const QrDsRow *r, QrMetrics *m, QrMetrics *local) {
    if (m) qr_dsacc_pool_finish(&r->pool, &r->list, true, true, m);
    if (local) qr_dsacc_pool_finish(&r->local, NULL, false, false, local);
}

static void qr_ds_out_metrics(const QrDsOut *o, QrMetrics *m) { qr_dsacc_pool_finish(&o->pool, &o->list, true, true, m); }

typedef struct QrDsRankBy { const QrDsCompare *d; QrMetricKind metric; } QrDsRankBy;
static int qr__ds_rank_cmp(const void *pa, const void *pb, void *ctx) {
    const QrDsRankBy *by = ctx;
    int a = *(const int *)pa, b = *(const int *)pb;
    double x = qr_metric_badness(&by->d->smp[a], by->metric);
    double y = qr_metric_badness(&by->d->smp[b], by->metric);
    if (x != y) return x > y ? -1 : 1;
    return (a > b) - (a < b);
}

static void qr_ds_rank_samples(const QrDsCompare *d, QrMetricKind metric, int *order) {
    int n = 0;
    for (int k = 0; k < d->n_samples; k++) if (d->done[k]) order[n++] = k;
    QrDsRankBy by = { d, metric };
    qsort_r(order, (size_t)n, sizeof *order, qr__ds_rank_cmp, &by);
}

/* ==== the pass's keeper ===============================================================
 * The `keep` worst samples so far, with their tensors and the baseline's outputs on them: what
 * the steps after the pass take instead of reading a sample again or running its baseline. */

static void qr__ds_kept_one_free(const QrDsCompare *d, QrSensSample *p) {
    for (int i = 0; p->in && i < d->n_in; i++) qr_tensor_free_data(&p->in[i]);
    for (int i = 0; p->base_out && i < d->n_outs; i++) qr_tensor_free_data(&p->base_out[i]);
    free(p->in);
    free(p->base_out);
    memset(p, 0, sizeof *p);
}

static void qr_ds_kept_free(QrDsCompare *d) {
    for (int j = 0; d->kept && j < d->n_kept; j++) qr__ds_kept_one_free(d, &d->kept[j]);
    d->n_kept = 0;
}

static QrStatus qr_ds_compare_keep(QrDsCompare *d, int keep, QrMetricKind metric) {
    qr_ds_kept_free(d);
    free(d->kept);
    d->kept = NULL;
    d->keep = QR_MAX(0, QR_MIN(keep, d->n_samples));
    d->keep_metric = metric;
    if (d->keep && !(d->kept = calloc((size_t)d->keep + 1, sizeof *d->kept))) {
        d->keep = 0;
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    return QR_OK;
}

static const QrSensSample *qr_ds_kept(const QrDsCompare *d, int k) {
    for (int j = 0; j < d->n_kept; j++) if (d->kept[j].k == k) return &d->kept[j];
    return NULL;
}

static QrStatus qr__ds_tensor_dup(const QrTensor *t, QrTensor *out) {
    *out = *t;
    out->data = NULL;
    out->owned = false;
    if (!t->data) return QR_OK;
    QR_TRY(qr_tensor_alloc_data(out));
    memcpy(out->data, t->data, qr_tensor_nbytes(t));
    return QR_OK;
}

/* Sample k, just compared (d->smp[k] set, s on it): kept when it is among the d->keep worst so
 * far, its tensors and the baseline's outputs copied; a kept sample it displaces is freed. */
static QrStatus qr__ds_keep(QrDsCompare *d, QrSession *s, int k, const QrTensor *in) {
    if (d->keep <= 0 || !s->base_out || s->base_stale) return QR_OK;
    QrDsRankBy by = { d, d->keep_metric };
    int slot = d->n_kept;
    if (d->n_kept == d->keep) {              /* full: the kept sample that ranks last gives way, if k ranks before it */
        slot = 0;
        for (int j = 1; j < d->n_kept; j++) if (qr__ds_rank_cmp(&d->kept[j].k, &d->kept[slot].k, &by) > 0) slot = j;
        if (qr__ds_rank_cmp(&k, &d->kept[slot].k, &by) > 0) return QR_OK;
        qr__ds_kept_one_free(d, &d->kept[slot]);
    } else d->n_kept++;
    QrSensSample *p = &d->kept[slot];
    p->k = k;
    p->in = calloc((size_t)d->n_in + 1, sizeof *p->in);
    p->base_out = calloc((size_t)d->n_outs + 1, sizeof *p->base_out);
    QrStatus st = p->in && p->base_out ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < d->n_in; i++) st = qr__ds_tensor_dup(&in[i], &p->in[i]);
    for (int i = 0; st == QR_OK && i < d->n_outs; i++) st = qr__ds_tensor_dup(&s->base_out[i], &p->base_out[i]);
    if (st != QR_OK) { qr__ds_kept_one_free(d, p); d->kept[slot] = d->kept[--d->n_kept]; }
    return st;
}

/* ==== the worst sample's own comparison ===============================================
 * runall's analyses of the worst sample start from its comparison: the pass's rows of the worst
 * sample so far, its output metrics, analysis outputs and analysis-model statistics, copied when
 * a sample ranks before it (a few KB a row set; the outputs once). */

static void qr__ds_worst_clear(QrDsWorst *w, int n_outs) {
    qr_compare_free(&w->cmp);
    for (int j = 0; w->outs && j < n_outs; j++) qr_tensor_free_data(&w->outs[j]);
    free(w->outs);
    free(w->stats);
    w->outs = NULL;
    w->stats = NULL;
    w->k = -1;
}

/* The baseline values' copies and statistics (qr_ds_compare_worst_base), freed. */
static void qr__ds_worst_base_free(QrDsWorst *w, int n_outs) {
    for (int i = 0; w->base && i < w->n_base; i++) qr_tensor_free_data(&w->base[i]);
    for (int i = 0; w->base_off && i < w->n_base; i++) qr_tensor_free_data(&w->base_off[i]);
    for (int j = 0; w->base_out && j < n_outs; j++) qr_tensor_free_data(&w->base_out[j]);
    free(w->base);
    free(w->base_off);
    free(w->base_out);
    free(w->b_last);
    free(w->b_stats);
    w->base = w->base_off = w->base_out = NULL;
    w->b_last = w->b_stats = NULL;
    w->base_k = -1;
}

static void qr_ds_worst_free(QrDsCompare *d) {
    qr__ds_worst_clear(&d->worst, d->n_outs);
    qr__ds_worst_base_free(&d->worst, d->n_outs);
    free(d->worst.a_last);
    memset(&d->worst, 0, sizeof d->worst);
    d->worst.k = d->worst.base_k = -1;
}

static QrStatus qr_ds_compare_worst(QrDsCompare *d, const QrSession *s, QrMetricKind metric, bool want_outs, bool a_stats,
                                    const bool *a_seen) {
    qr_ds_worst_free(d);
    QrDsWorst *w = &d->worst;
    *w = (QrDsWorst){ .on = true, .k = -1, .metric = metric, .want_outs = want_outs, .a_seen = a_seen, .base_k = -1 };
    if (a_stats && !(w->a_last = calloc((size_t)s->a->n_values + 1, sizeof *w->a_last))) {
        w->on = false;
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    return QR_OK;
}

static QrStatus qr_ds_compare_worst_base(QrDsCompare *d, const QrSession *s, const bool *b_seen) {
    QrDsWorst *w = &d->worst;
    qr__ds_worst_base_free(w, d->n_outs);
    if (!w->on) return QR_OK;
    w->n_base = s->m.n;
    w->b_seen = b_seen;
    w->base = calloc((size_t)s->m.n + 1, sizeof *w->base);
    w->base_out = calloc((size_t)d->n_outs + 1, sizeof *w->base_out);
    w->b_last = calloc((size_t)s->b->n_values + 1, sizeof *w->b_last);
    w->b_stats = calloc((size_t)s->b->n_values + 1, sizeof *w->b_stats);
    if (w->base && w->base_out && w->b_last && w->b_stats) return QR_OK;
    qr__ds_worst_base_free(w, d->n_outs);
    return qr_errf(QR_ERR_NOMEM, "out of memory");
}

/* *out = a copy of t, into out's buffer when it has the same size (the next worst sample's values:
 * the same shapes, no new allocation). */
static QrStatus qr__ds_tensor_copy_into(const QrTensor *t, QrTensor *out) {
    if (t->data && out->data && out->owned && qr_tensor_nbytes(out) == qr_tensor_nbytes(t)) {
        void *p = out->data;
        *out = *t;
        out->data = p;
        out->owned = true;
        memcpy(p, t->data, qr_tensor_nbytes(t));
        return QR_OK;
    }
    qr_tensor_free_data(out);
    return qr__ds_tensor_dup(t, out);
}

/* Sample k, the worst so far, the session still on it: its baseline values and statistics copied
 * into d->worst (qr_ds_compare_worst_base). */
static QrStatus qr__ds_worst_base(QrDsCompare *d, const QrSession *s, int k) {
    QrDsWorst *w = &d->worst;
    w->base_k = -1;
    if (!s->base || !s->base_out || s->base_stale || !d->base_tap) return QR_OK;   /* the prepare stage runs it then */
    QrStatus st = QR_OK;
    for (int i = 0; st == QR_OK && i < w->n_base; i++) st = qr__ds_tensor_copy_into(&s->base[i], &w->base[i]);
    for (int j = 0; st == QR_OK && j < d->n_outs; j++) st = qr__ds_tensor_copy_into(&s->base_out[j], &w->base_out[j]);
    const bool off = s->base_off && !s->base_off_stale;   /* (computed for the first sample only: the pairs' proof) */
    if (st == QR_OK && off && !w->base_off && !(w->base_off = calloc((size_t)w->n_base + 1, sizeof *w->base_off)))
        st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && off && i < w->n_base; i++) st = qr__ds_tensor_copy_into(&s->base_off[i], &w->base_off[i]);
    if (st == QR_OK && !off && w->base_off) {
        for (int i = 0; i < w->n_base; i++) qr_tensor_free_data(&w->base_off[i]);
        free(w->base_off);
        w->base_off = NULL;
    }
    if (st == QR_OK) {
        memcpy(w->b_stats, w->b_last, (size_t)s->b->n_values * sizeof *w->b_stats);
        w->base_k = k;
    }
    return st;
}

/* Sample k, just compared (d->cmp its rows, outs its analysis outputs): its comparison kept when
 * it ranks before the worst so far (the one it replaces freed). */
static QrStatus qr__ds_worst(QrDsCompare *d, const QrSession *s, int k, const QrTensor *outs, int64_t split_exec) {
    QrDsWorst *w = &d->worst;
    if (!w->on) return QR_OK;
    QrDsRankBy by = { d, w->metric };
    if (w->k >= 0 && qr__ds_rank_cmp(&k, &w->k, &by) > 0) return QR_OK;
    qr__ds_worst_clear(w, d->n_outs);
    w->k = k;
    w->cmp = d->cmp;
    w->cmp.rows = malloc(((size_t)d->cmp.n + 1) * sizeof *w->cmp.rows);
    w->cmp.first_drop = -1;
    w->cmp.split_exec = split_exec;
    QrStatus st = w->cmp.rows ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) memcpy(w->cmp.rows, d->cmp.rows, (size_t)d->cmp.n * sizeof *w->cmp.rows);
    if (st == QR_OK && w->want_outs) {       /* as qr_compare_step keeps them (QrSession.keep_outs) */
        int n = QR_MIN(s->b->n_outputs, s->a->n_outputs);
        w->outs = calloc((size_t)s->b->n_outputs + 1, sizeof *w->outs);
        if (!w->outs) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int j = 0; st == QR_OK && j < n; j++) st = qr_tensor_to_f32(&outs[j], &w->outs[j]);
    }
    if (st == QR_OK && w->a_last && d->hooks && d->hooks->tap_done) {
        w->stats = malloc(((size_t)s->a->n_values + 1) * sizeof *w->stats);
        if (w->stats) memcpy(w->stats, w->a_last, (size_t)s->a->n_values * sizeof *w->stats);
        else st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (st == QR_OK && w->base) st = qr__ds_worst_base(d, s, k);
    if (st != QR_OK) qr__ds_worst_clear(w, d->n_outs);
    return st;
}

/* ==== tables ========================================================================= */

/* The compare table of REPORT.md, pooled, with the data-set columns after it. */
static QrStatus qr__ds_layer_table(const QrDsCompare *d, const QrSession *s, bool csv, QrTable *t) {
    QrCompare c = {0};
    c.n = d->n_rows;
    c.first_drop = -1;
    c.rows = calloc((size_t)d->n_rows + 1, sizeof *c.rows);
    if (!c.rows) return qr_errf(QR_ERR_NOMEM, "out of memory");
    bool with_lsb = false;
    for (int r = 0; r < d->n_rows; r++) {
        const QrDsRow *dr = &d->rows[r];
        QrLayerRow *lr = &c.rows[r];
        lr->match = dr->match;
        lr->has_m = dr->n_m > 0;
        lr->has_local = dr->n_local > 0;
        qr_ds_row_metrics(dr, &lr->m, &lr->local);
        lr->has_lsb = dr->has_lsb;
        lr->lsb_n = dr->lsb_n; lr->lsb_diff = dr->lsb_diff; lr->lsb_max = dr->lsb_max; lr->lsb_ties = dr->lsb_ties;
        with_lsb |= dr->has_lsb;
        qr__ds_split_view(&dr->split, &lr->sp);
    }
    QrTable base = {0};
    QrStatus st = qr_compare_table(s, &c, csv, with_lsb, &base);
    static const char *const extra[] = { "samples", "mean_Cosine", "worst_Cosine", "worst_sample", "p05_Cosine", "mean_SQNR",
                                         "p05_SQNR" };
    const char *cols[64];
    int nb = base.n_cols, ne = QR_ARRAY_LEN(extra);
    for (int j = 0; j < nb && j < 64; j++) cols[j] = base.cols[j];
    for (int j = 0; j < ne && nb + j < 64; j++) cols[nb + j] = extra[j];
    if (st == QR_OK) st = qr_table_init(t, nb + ne, cols);
    for (int r = 0; st == QR_OK && r < d->n_rows; r++) {
        int row;
        st = qr_table_add_row(t, &row);
        for (int j = 0; st == QR_OK && j < nb; j++) if (base.rows[r][j]) st = qr_table_set(t, row, j, base.rows[r][j]);
        const QrDsRow *dr = &d->rows[r];
        QrDsColStats cs, ss;
        qr_dsacc_col_stats(dr->list.cos, dr->list.has, d->n_samples, &cs);
        qr_dsacc_col_stats(dr->list.sqnr, dr->list.has, d->n_samples, &ss);
        if (st == QR_OK) st = qr_table_setf(t, row, nb, "%lld", (long long)dr->n_m);
        if (st != QR_OK || !dr->n_m) continue;
        qr_compare_num(t, row, nb + 1, cs.mean, csv);
        qr_compare_num(t, row, nb + 2, cs.worst >= 0 ? dr->list.cos[cs.worst] : NAN, csv);
        if (cs.worst >= 0) qr_table_set(t, row, nb + 3, d->names[cs.worst]);
        qr_compare_num(t, row, nb + 4, cs.p05, csv);
        qr_compare_num(t, row, nb + 5, ss.mean, csv);
        qr_compare_num(t, row, nb + 6, ss.p05, csv);
    }
    qr_table_free(&base);
    free(c.rows);
    return st;
}

static QrStatus qr__ds_out_table(const QrDsCompare *d, const QrSession *s, bool csv, QrTable *t) {
    /* logits outputs add the per-token columns (analysis/tokens; top1_agree / top5_overlap then count tokens) */
    static const char *const cols[] = { "output", "shape", "samples", "Cosine", "MSE", "L1", "KL", "SQNR", "Atol", "Rtol",
                                        "nonfinite", "mean_Cosine", "worst_Cosine", "worst_sample", "p05_Cosine",
                                        "mean_SQNR", "p05_SQNR", "top1_agree", "top5_overlap", "top1_flipped_samples",
                                        "tokens", "kld_mean", "kld_p90", "kld_p99", "kld_max", "dp_rms", "nll_tokens",
                                        "nll_base", "nll_analysis", "ln_ppl_ratio", "worst_tokens" };
    bool any_tok = false;
    for (int j = 0; j < d->n_outs; j++) any_tok |= d->outs[j].tok_out;
    QR_TRY(qr_table_init(t, any_tok ? QR_ARRAY_LEN(cols) : 20, cols));
    for (int j = 0; j < d->n_outs; j++) {
        const QrDsOut *o = &d->outs[j];
        int row;
        QR_TRY(qr_table_add_row(t, &row));
        const QrValue *v = &s->b->values[s->b->outputs[j]];
        char shape[128];
        qr_table_set(t, row, 0, v->name);
        qr_table_set(t, row, 1, qr_shape_str_brackets(shape, sizeof shape, v->t.rank, v->t.dims));
        qr_table_setf(t, row, 2, "%lld", (long long)o->pool.n_samples);
        QrMetrics m;
        qr_ds_out_metrics(o, &m);
        double mv[] = { m.cosine, m.mse, m.l1, m.kl, m.sqnr, m.atol, m.rtol };
        for (int q = 0; q < QR_ARRAY_LEN(mv); q++) qr_compare_num(t, row, 3 + q, mv[q], csv);
        qr_table_setf(t, row, 10, "%lld", (long long)m.n_nonfinite);
        QrDsColStats cs, ss;
        qr_dsacc_col_stats(o->list.cos, o->list.has, d->n_samples, &cs);
        qr_dsacc_col_stats(o->list.sqnr, o->list.has, d->n_samples, &ss);
        qr_compare_num(t, row, 11, cs.mean, csv);
        qr_compare_num(t, row, 12, cs.worst >= 0 ? o->list.cos[cs.worst] : NAN, csv);
        if (cs.worst >= 0) qr_table_set(t, row, 13, d->names[cs.worst]);
        qr_compare_num(t, row, 14, cs.p05, csv);
        qr_compare_num(t, row, 15, ss.mean, csv);
        qr_compare_num(t, row, 16, ss.p05, csv);
        if (o->cls && o->rows) {
            qr_compare_num(t, row, 17, (double)o->agree / (double)o->rows, csv);
            qr_compare_num(t, row, 18, (double)o->top5_hits / (double)o->top5_den, csv);
            char *list = NULL;
            size_t ll = 0, lc = 0;
            int nf = 0;
            for (int k = 0; k < d->n_samples; k++)
                if (d->done[k] && o->flips[k]) QR_TRY(qr_buf_printf(&list, &ll, &lc, "%s%s", nf++ ? ";" : "", d->names[k]));
            qr_table_set(t, row, 19, nf ? list : "-");
            free(list);
        }
        if (o->tok_out && o->tok.vocab) {
            QrTokStats ts;
            qr_tok_stats(&o->tok, &ts);
            qr_compare_num(t, row, 17, ts.top1_agree, csv);
            qr_compare_num(t, row, 18, ts.top5_overlap, csv);
            qr_tok_cells(t, row, 20, &o->tok, d->names, false, csv);
        }
    }
    return QR_OK;
}

static QrStatus qr__ds_samples_table(const QrDsCompare *d, const int *order, bool csv, QrTable *t) {
    static const char *const cols[] = { "rank", "index", "sample", "L1", "Cosine", "MSE", "KL", "SQNR", "nonfinite_out",
                                        "nonfinite_in", "top1_flips" };
    QR_TRY(qr_table_init(t, QR_ARRAY_LEN(cols), cols));
    for (int i = 0; i < d->n_done; i++) {
        int k = order[i], row;
        const QrMetrics *m = &d->smp[k];
        QR_TRY(qr_table_add_row(t, &row));
        qr_table_setf(t, row, 0, "%d", i + 1);
        qr_table_setf(t, row, 1, "%d", k);
        qr_table_set(t, row, 2, d->names[k]);
        double v[] = { m->l1, m->cosine, m->mse, m->kl, m->sqnr };
        for (int q = 0; q < 5; q++) qr_compare_num(t, row, 3 + q, v[q], csv);
        qr_table_setf(t, row, 8, "%lld", (long long)m->n_nonfinite);
        qr_table_setf(t, row, 9, "%lld", (long long)d->smp_in_bad[k]);
        int64_t fl = 0;
        for (int j = 0; j < d->n_outs; j++) fl += d->outs[j].flips[k];
        qr_table_setf(t, row, 10, "%lld", (long long)fl);
    }
    return QR_OK;
}

static QrStatus qr__ds_write_pair(QrTable *tt, QrTable *tc, const char *head, const char *foot, const char *dir,
                                  const char *stem) {
    QrStatus st = qr_weights_write_tables(tt, tc, head, foot, dir, stem);
    qr_table_free(tt);
    qr_table_free(tc);
    return st;
}

static QrStatus qr_ds_compare_write(const QrDsCompare *d, const QrSession *s, const QrDsSet *ds, QrMetricKind metric,
                                    const char *dir) {
    if (!d->n_done) return qr_errf(QR_ERR_INVALID, "no sample was compared");
    if (d->n_done + d->n_skipped != d->n_samples) {
        for (int k = 0; k < d->n_samples; k++)
            if (!d->done[k] && !(d->skipped && d->skipped[k]))
                return qr_errf(QR_ERR_INVALID, "%d of %d samples are missing, the first '%s' (index %d)",
                               d->n_samples - d->n_done - d->n_skipped, d->n_samples, d->names[k], k);
    }
    QrArena a = {0};
    int *order = calloc((size_t)d->n_samples + 1, sizeof *order);
    if (!order) return qr_errf(QR_ERR_NOMEM, "out of memory");
    qr_ds_rank_samples(d, metric, order);
    int64_t bad_in = 0, n_bad_smp = 0;
    for (int k = 0; k < d->n_samples; k++) { bad_in += d->smp_in_bad[k]; n_bad_smp += d->smp_in_bad[k] > 0; }
    /* the model outputs concatenated, pooled: the header line compare writes for one input */
    QrDsPool pool;
    qr_dsacc_pool_init(&pool);
    QrMetrics mo = {0};
    const char *ohead = "";
    if (d->n_outs == 1) {
        qr_ds_out_metrics(&d->outs[0], &mo);
        ohead = qr_arena_printf(&a, "Model output (pooled): Cosine %.7f, SQNR %.4f dB, L1 %.7g, MSE %.7g, KL %.7g\n", mo.cosine,
                                mo.sqnr, mo.l1, mo.mse, mo.kl);
    } else ohead = qr_arena_printf(&a, "Model outputs: %d, one row each in " QR_BF_DS_OUTPUTS ".txt\n", d->n_outs);
    const char *skipped = "";
    for (int k = 0; d->n_skipped && k < d->n_samples; k++)
        if (d->skipped[k]) skipped = qr_arena_printf(&a, "%s  skipped %s: %s\n", skipped, d->names[k], d->skip_why[k]);
    if (d->n_skipped)
        skipped = qr_arena_printf(&a, "%d sample%s skipped (--skip-bad-samples), in no table:\n%s", d->n_skipped,
                                  d->n_skipped == 1 ? "" : "s", skipped);
    const char *dhead = qr_arena_printf(
        &a, "Data set: %s (%s layout), %d sample%s of %d found; worst sample by %s: '%s'.\n%s%s",
        ds ? ds->dir : "?", ds && ds->folders ? "one folder per input" : "flat", d->n_done, d->n_done == 1 ? "" : "s",
        ds ? ds->n_found : d->n_samples, qr_metric_name(metric), d->names[order[0]],
        n_bad_smp ? qr_arena_printf(&a, "%lld sample%s hold %lld NaN/Inf input values (" QR_BF_DS_SAMPLES ".txt, nonfinite_in); their "
                                        "pairs are counted in nonfinite, never averaged.\n",
                                    (long long)n_bad_smp, n_bad_smp == 1 ? "" : "s", (long long)bad_in) : "",
        skipped ? skipped : "");
    const char *head = qr_arena_printf(&a, "Baseline: %s\nAnalysis: %s\n%s%s\n", s->b->path, s->a->path, dhead, ohead);
    const char *foot = "\nPooled: every column before 'samples' is the metric of all samples' elements together (as if "
                       "the samples were concatenated); local_* likewise.\nsamples .. p05_SQNR: over the per-sample values "
                       "(mean, lowest with its sample, 5th percentile by linear interpolation).\nlocal_*: each layer re-run "
                       "on the baseline's inputs (its own error, without what it inherits from upstream layers).\n";
    QrTable tt = {0}, tc = {0};
    QrStatus st = head && dhead && ohead ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr__ds_layer_table(d, s, false, &tt);
    if (st == QR_OK) st = qr__ds_layer_table(d, s, true, &tc);
    if (st == QR_OK) st = qr__ds_write_pair(&tt, &tc, head, foot, dir, QR_BF_COMPARE);
    if (st == QR_OK) st = qr__ds_out_table(d, s, false, &tt);
    if (st == QR_OK) st = qr__ds_out_table(d, s, true, &tc);
    if (st == QR_OK)
        st = qr__ds_write_pair(&tt, &tc, qr_arena_printf(&a, "Model outputs over %d samples, one row per graph output "
                                                             "(pooled, then per-sample statistics; top-k for [batch, classes] "
                                                             "outputs).\n\n", d->n_samples), NULL, dir, QR_BF_DS_OUTPUTS);
    if (st == QR_OK) st = qr__ds_samples_table(d, order, false, &tt);
    if (st == QR_OK) st = qr__ds_samples_table(d, order, true, &tc);
    if (st == QR_OK)
        st = qr__ds_write_pair(&tt, &tc, qr_arena_printf(&a, "Samples ranked worst first by %s at %s; the first is written as "
                                                             "%s.\n%s\n", qr_metric_name(metric),
                                                         d->rank_output < 0 ? "the model outputs (all outputs concatenated)"
                                                         : qr_arena_printf(&a, "model output '%s' (--rank-output)",
                                                                           s->b->values[s->b->outputs[d->rank_output]].name),
                                                         s->b->n_inputs == 1 ? QR_BF_BADCASE : QR_BF_BADCASE_STEM "_<input>.npy",
                                                         skipped),
                               NULL, dir, QR_BF_DS_SAMPLES);
    qr_table_free(&tt);
    qr_table_free(&tc);
    /* the worst sample: kept by the pass, else (a merged comparison) read again */
    if (st == QR_OK && ds) {
        const QrSensSample *w = qr_ds_kept(d, order[0]);
        QrTensor *in = w ? NULL : calloc((size_t)ds->n_inputs + 1, sizeof *in);
        st = w ? QR_OK : in ? qr_dsset_read(ds, s->b, order[0], NULL, in) : qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int i = 0; st == QR_OK && i < ds->n_inputs; i++) {
            char safe[512];
            qr_safe_filename(safe, sizeof safe, ds->input_names[i]);
            const char *p = ds->n_inputs == 1 ? qr_arena_printf(&a, "%s/" QR_BF_BADCASE, dir)
                                              : qr_arena_printf(&a, "%s/" QR_BF_BADCASE_STEM "_%s.npy", dir, safe);
            st = p ? qr_npy_write(p, w ? &w->in[i] : &in[i]) : qr_errf(QR_ERR_NOMEM, "out of memory");
        }
        for (int i = 0; in && i < ds->n_inputs; i++) qr_tensor_free_data(&in[i]);
        free(in);
    }
    free(order);
    qr_arena_free(&a);
    return st;
}

/* ==== runall --data ================================================================== */

static QrStatus qr_ds_runall_pass(QrDsRunall *r, const QrDsSet *ds, QrMetricKind metric, int rank_output, bool skip_bad,
                                  QrSession *s, const char *mode, const QrTensor *ref, bool have_axis, int axis,
                                  const char *const *names, int n_names, int keep) {
    memset(r, 0, sizeof *r);
    r->on = true;
    r->ds = ds;
    r->metric = metric;
    r->worst = -1;
    QrStatus st = qr_ds_compare_init(&r->dc, s, ds->n, ds->names);
    r->dc.rank_output = rank_output;
    r->dc.skip_bad = skip_bad;
    if (st == QR_OK) st = qr_ds_compare_keep(&r->dc, keep > 0 ? keep : QR_SENS_SAMPLES_DEFAULT, metric);
    if (st == QR_OK) st = qr_dsstat_run_init(&r->x, s, NULL);
    /* the distributions over the set of the activations --plot-nodes names too (known before the
     * pass; those chosen by the worst sample's analyses are accumulated after it: dataset.h) */
    if (st == QR_OK && n_names > 0) st = qr_dsstat_dist_all(&r->x, s, have_axis, axis, names, n_names);
    /* the worst sample's own comparison, outputs and analysis-model statistics: its analyses start from them */
    if (st == QR_OK) st = qr_ds_compare_worst(&r->dc, s, metric, qr_tok_any(s->b), true, r->x.prof[1].seen);
    if (st == QR_OK) r->x.prof[1].last = r->dc.worst.a_last;
    /* and its baseline values and statistics: the prepare stage runs no baseline on it again (not with
     * --max-memory, where one more baseline run costs less than a second set of its values) */
    if (st == QR_OK && !s->low_memory) st = qr_ds_compare_worst_base(&r->dc, s, r->x.prof[0].seen);
    if (st == QR_OK) r->x.prof[0].last = r->dc.worst.b_last;
    if (st == QR_OK) {                       /* the profiles read the comparison's runs */
        r->dc.base_tap = qr_dsstat_base_tap;
        r->dc.base_tap_user = &r->x;
        r->dc.hooks = &r->x.hooks;
    }
    if (st == QR_OK) st = qr_ds_pass(&r->dc, s, ds, mode, 0, ds->n, ref, &s->progress);
    r->x.n_samples = r->dc.n_done;
    int *order = st == QR_OK ? calloc((size_t)ds->n + 1, sizeof *order) : NULL;
    r->worst_in = st == QR_OK ? calloc((size_t)ds->n_inputs + 1, sizeof *r->worst_in) : NULL;
    if (st == QR_OK && (!order || !r->worst_in)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        qr_ds_rank_samples(&r->dc, metric, order);
        r->worst = order[0];
        const QrSensSample *w = qr_ds_kept(&r->dc, r->worst);   /* kept by the pass: not read again */
        if (w) for (int i = 0; st == QR_OK && i < ds->n_inputs; i++) st = qr__ds_tensor_dup(&w->in[i], &r->worst_in[i]);
        else st = qr_dsset_read(ds, s->b, r->worst, ref, r->worst_in);
    }
    free(order);
    r->x.prof[0].last = r->x.prof[1].last = NULL;
    if (r->dc.worst.k != r->worst) qr__ds_worst_clear(&r->dc.worst, r->dc.n_outs);   /* (ranked alike: never) */
    if (st == QR_OK) qr_session_next_inputs(s, r->worst_in);
    else qr_session_next_inputs(s, ref);
    return st;
}

static bool qr_ds_runall_take_base(QrDsRunall *r, QrSession *s, QrStats *stats, bool *seen) {
    QrDsWorst *w = &r->dc.worst;
    bool ok = w->base && w->base_k >= 0 && w->base_k == r->worst && w->b_seen &&
              qr_session_base_swap(s, w->base, w->base_out, w->base_off);
    for (int v = 0; ok && stats && seen && v < s->b->n_values; v++)
        if (w->b_seen[v]) { stats[v] = w->b_stats[v]; seen[v] = true; }
    if (ok && stats && seen) qr_stats_inits(s->b, stats, seen);
    qr__ds_worst_base_free(w, r->dc.n_outs);  /* (after a swap: the session's stale values) */
    return ok;
}

static bool qr_ds_runall_take_worst(QrDsRunall *r, const QrSession *s, double cos_threshold, QrCompare *c,
                                    QrTensor *keep_outs, QrStats *stats, bool *seen, bool *stats_done) {
    QrDsWorst *w = &r->dc.worst;
    *stats_done = false;
    if (!w->on || w->k < 0 || w->k != r->worst || !w->cmp.rows || (keep_outs && !w->outs)) return false;
    *c = w->cmp;
    memset(&w->cmp, 0, sizeof w->cmp);
    qr_compare_first_drop(s, c, cos_threshold);
    for (int j = 0; keep_outs && j < s->b->n_outputs; j++) {
        qr_tensor_free_data(&keep_outs[j]);
        keep_outs[j] = w->outs[j];
        memset(&w->outs[j], 0, sizeof w->outs[j]);
    }
    if (w->stats && stats && seen) {
        for (int v = 0; v < s->a->n_values; v++)
            if (w->a_seen[v]) { stats[v] = w->stats[v]; seen[v] = true; }
        *stats_done = true;
    }
    qr__ds_worst_clear(w, r->dc.n_outs);
    free(w->a_last);
    w->a_last = NULL;
    w->on = false;
    if (!r->on) qr_ds_runall_free(r);        /* a one-input runall's set: nothing else is read */
    return true;
}

static QrStatus qr_ds_runall_one(QrDsRunall *r, QrSession *s, const char *mode, const QrTensor *in, const char *name,
                                 QrStats *base_stats, bool *base_seen, QrCmpHooks *hooks) {
    memset(r, 0, sizeof *r);
    r->worst = -1;
    r->one_name = name;
    const bool fixed = s->match_fixed;       /* one input: its match is verified on it, as ever */
    QrStatus st = qr_ds_compare_init(&r->dc, s, 1, &r->one_name);
    if (st == QR_OK) st = qr_ds_compare_worst(&r->dc, s, QR_METRIC_L1, qr_tok_any(s->b), false, NULL);
    if (st == QR_OK) {
        r->dc.base_stats = base_stats;
        r->dc.base_seen = base_seen;
        r->dc.hooks = hooks;
        st = qr_ds_compare_sample(&r->dc, s, mode, 0, in);
    }
    qr_ds_compare_end(&r->dc);
    s->match_fixed = fixed;
    if (st == QR_OK) r->worst = 0;
    else qr_ds_runall_free(r);
    return st;
}

/* The distributions over the set that the pass's candidates could not fill (r->x.dist set up;
 * qr_ds_runall_merged: all of them): every compared sample's baseline and full runs again, the
 * pairs of those activations into their accumulators (no shadow run, no metrics kept). */
static QrStatus qr__ds_dist_pass(QrDsRunall *r, QrSession *s, const char *mode, const QrTensor *ref) {
    const QrDsSet *ds = r->ds;
    QrTensor *cur = calloc((size_t)ds->n_inputs + 1, sizeof *cur);
    QrTensor *outs = calloc((size_t)s->a->n_outputs + 1, sizeof *outs);
    QrMetricAcc *acc = calloc(2 * (size_t)s->m.n + 1, sizeof *acc);
    uint8_t *want = calloc((size_t)s->m.n + 1, 1);   /* only the pairs of the activations still without data */
    for (int i = 0; want && i < r->x.dist.n; i++)
        if (r->x.dist.a[i].match >= 0 && !r->x.dist.a[i].filled) want[r->x.dist.a[i].match] = 1;
    QrCmpHooks hooks = { .match = r->x.hooks.match, .user = r->x.hooks.user, .pairs_of = want };
    QrCompare c = {0};
    QrCmpPlan *plan = NULL;
    QrStatus st = cur && outs && acc && want ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    int seen = 0;
    for (int k = 0; st == QR_OK && k < ds->n; k++) {
        if (!r->dc.done[k]) continue;        /* skipped (--skip-bad-samples) */
        qr_step(&s->progress, seen++, r->dc.n_done);
        st = qr_dsset_read(ds, s->b, k, ref, cur);
        if (st == QR_OK) {
            qr_session_next_inputs(s, cur);
            if (!plan) st = qr_compare_ds_open(s, mode, &hooks, NULL, &c, &plan);
            if (st == QR_OK) st = qr_compare_ds_run_full(plan, acc, outs);
            for (int j = 0; j < s->a->n_outputs; j++) qr_tensor_free_data(&outs[j]);
            if (st != QR_OK) st = qr_err_wrap(st, "sample '%s'", ds->names[k]);
        }
        for (int i = 0; i < ds->n_inputs; i++) qr_tensor_free_data(&cur[i]);
    }
    if (plan) qr_compare_ds_close(plan);
    qr_compare_free(&c);
    qr_session_next_inputs(s, ref);          /* the worst sample's again */
    free(want);
    free(cur);
    free(outs);
    free(acc);
    return st;
}

/* The distributions over the set (those of dist that can be accumulated: from the pass's
 * candidates, a second pass for those left; ref: the worst sample's tensors, the session's inputs
 * again afterwards), then both profiles and the distributions written over runall's worst-sample
 * ones. */
static QrStatus qr__ds_runall_stats(QrDsRunall *r, QrSession *s, const char *mode, QrDistSet *dist, const QrTensor *ref,
                                    const char *dir) {
    QrStatus st = QR_OK;
    int pending = 0;
    if (dist && ref) st = qr_dsstat_dist_begin(&r->x, s, dist, &pending);
    else qr_dist_acc_free(&r->x.all);        /* no distributions: the pass's candidates are not wanted */
    if (st == QR_OK && pending) st = qr__ds_dist_pass(r, s, mode, ref);
    if (st == QR_OK) st = qr_dsstat_run_finish(&r->x, s, r->ds->dir, dir);
    return st;
}

static QrStatus qr_ds_runall_write(QrDsRunall *r, QrSession *s, const char *mode, QrDistSet *dist, const char *dir) {
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/" QR_BF_DATASET, dir);
    QrStatus st = qr_mkdir_p(sub);
    if (st == QR_OK) st = qr_ds_compare_write(&r->dc, s, r->ds, r->metric, sub);
    if (st == QR_OK) st = qr__ds_runall_stats(r, s, mode, dist, r->worst_in, dir);
    r->ok = st == QR_OK;
    return st;
}

/* qr_ds_runall_write with the comparison already done (qreport merge of runall parts): merged's
 * accumulators are copied (same rows) and written as one process writes its own. */
static QrStatus qr_ds_runall_merged(QrDsRunall *r, const QrDsSet *ds, QrMetricKind metric, int rank_output, QrSession *s,
                                    const QrDsCompare *merged, const QrDsStatRun *stat, const char *mode, QrDistSet *dist,
                                    const QrTensor *worst, const char *dir) {
    memset(r, 0, sizeof *r);
    r->on = true;
    r->ds = ds;
    r->metric = metric;
    r->worst = -1;
    QrStatus st = qr_ds_compare_init(&r->dc, s, ds->n, ds->names);
    if (st == QR_OK) {
        r->dc.rank_output = rank_output;
        st = qr_ds_compare_merge(&r->dc, merged);
    }
    int *order = st == QR_OK ? calloc((size_t)ds->n + 1, sizeof *order) : NULL;
    if (st == QR_OK && !order) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK && r->dc.n_done) {
        qr_ds_rank_samples(&r->dc, metric, order);
        r->worst = order[0];
    }
    free(order);
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/" QR_BF_DATASET, dir);
    if (st == QR_OK) st = qr_mkdir_p(sub);
    if (st == QR_OK) st = qr_ds_compare_write(&r->dc, s, ds, metric, sub);
    if (st == QR_OK && stat) {               /* the parts' profiles; the distributions over the set made here */
        st = qr_dsstat_run_init(&r->x, s, NULL);
        if (st == QR_OK) st = qr_dsstat_prof_add(&r->x, stat);
        if (st == QR_OK) st = qr__ds_runall_stats(r, s, mode, dist, worst, dir);
    }
    r->ok = st == QR_OK;
    return st;
}

/* Sensitivity and the cumulative error over the k worst samples (analysis/sens's pass over a
 * set): dataset/sensitive_ops.*, dataset/accumulated_error.csv, and two plots: the samples ranked
 * (plots/dataset_samples.png) and the cumulative error's per-sample mean with its p05-p95 band
 * (plots/dataset_accumulated_error.png). */
static QrStatus qr__ds_sens_plot_samples(const QrDsCompare *dc, QrMetricKind metric, const char *path) {
    int n = dc->n_done;
    int *order = malloc(((size_t)dc->n_samples + 1) * sizeof *order);
    double *v = malloc(((size_t)n + 1) * sizeof *v);
    const char **names = malloc(((size_t)n + 1) * sizeof *names);
    QrStatus st = order && v && names ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        qr_ds_rank_samples(dc, metric, order);
        for (int i = 0; i < n; i++) { names[i] = dc->names[order[i]]; v[i] = qr_metric_get(&dc->smp[order[i]], metric); }
        char title[160];
        snprintf(title, sizeof title, "Samples ranked worst first (%s at the model outputs; top %d of %d)", qr_metric_name(metric),
                 QR_MIN(n, 40), n);
        QrBarChart bc = { .title = title, .x_label = qr_metric_name(metric), .names = names, .values = v, .n = n, .top_k = 40 };
        QrCanvas c;
        st = qr_plot_bars(&bc, &c);
        if (st == QR_OK) { st = qr_plot_save(&c, path); qr_canvas_free(&c); }
    }
    free(order);
    free(v);
    free(names);
    return st;
}

static QrStatus qr_ds_runall_sens(QrSensSet *ss, QrSession *s, QrDsRunall *dsr, const QrSensOpts *o, int k,
                                  const int *topk, int n_topk, const QrAccSets *sets, QrMetricKind acc_metric,
                                  const QrSensResult *worst_rows, const char *dir) {
    memset(ss, 0, sizeof *ss);
    if (!dsr->ok) return qr_errf(QR_ERR_INVALID, "needs the comparison over the data set, which failed");
    const QrDsCompare *dc = &dsr->dc;
    int K = QR_MIN(k > 0 ? k : QR_SENS_SAMPLES_DEFAULT, dc->n_done);
    int *order = malloc(((size_t)dc->n_samples + 1) * sizeof *order);
    if (!order) return qr_errf(QR_ERR_NOMEM, "out of memory");
    qr_ds_rank_samples(dc, dsr->metric, order);
    QrStatus st = qr_sens_set_run(s, o, dsr->ds, order, K, dsr->metric, topk, n_topk, sets, acc_metric, dsr->dc.kept,
                                  dsr->dc.n_kept, worst_rows, dsr->worst, ss);
    free(order);
    qr_ds_kept_free(&dsr->dc);
    char sub[4300], p[4400];
    snprintf(sub, sizeof sub, "%s/" QR_BF_DATASET, dir);
    if (st == QR_OK) st = qr_mkdir_p(sub);
    if (st == QR_OK) st = qr_sens_set_write(s, ss, sub);
    snprintf(sub, sizeof sub, "%s/plots", dir);
    if (st == QR_OK) st = qr_mkdir_p(sub);
    snprintf(p, sizeof p, "%s/" QR_BF_DS_PLOT_SAMPLES, dir);
    if (st == QR_OK) st = qr__ds_sens_plot_samples(dc, dsr->metric, p);
    snprintf(p, sizeof p, "%s/" QR_BF_DS_PLOT_ACCUM, dir);
    if (st == QR_OK && ss->have_acc) st = qr_sens_set_plot_curves(s, ss, p);
    return st;
}

static void qr_ds_runall_free(QrDsRunall *r) {
    qr_ds_compare_free(&r->dc);
    qr_dsstat_run_free(&r->x);
    for (int i = 0; r->worst_in && r->ds && i < r->ds->n_inputs; i++) qr_tensor_free_data(&r->worst_in[i]);
    free(r->worst_in);
    memset(r, 0, sizeof *r);
    r->worst = r->dc.worst.k = -1;           /* nothing for qr_ds_runall_take_worst */
}

/* The pooled metrics of the outputs concatenated are not kept; output 0's stand for the model
 * when there is one output, and each output has its entry. */
static void qr_ds_runall_json(QrJson *j, const QrDsRunall *r, const QrSession *s) {
    if (!r->on || !r->ok) return;
    const QrDsCompare *d = &r->dc;
    int *order = calloc((size_t)d->n_samples + 1, sizeof *order);
    if (!order) return;
    qr_ds_rank_samples(d, r->metric, order);
    qr_json_key(j, "dataset");
    qr_json_obj_begin(j);
    qr_json_kv_str(j, "dir", r->ds->dir);
    qr_json_kv_int(j, "samples", d->n_done);
    qr_json_kv_int(j, "samples_found", r->ds->n_found);
    qr_json_kv_int(j, "skipped", d->n_skipped);
    if (d->n_skipped) {
        qr_json_key(j, "skipped_samples");
        qr_json_arr_begin(j);
        for (int k = 0; k < d->n_samples; k++)
            if (d->skipped[k]) {
                qr_json_obj_begin(j);
                qr_json_kv_str(j, "sample", d->names[k]);
                qr_json_kv_str(j, "error", d->skip_why[k]);
                qr_json_obj_end(j);
            }
        qr_json_arr_end(j);
    }
    qr_json_kv_str(j, "worst_sample", d->names[order[0]]);
    qr_json_kv_str(j, "rank_metric", qr_metric_name(r->metric));
    int64_t bad = 0;
    for (int k = 0; k < d->n_samples; k++) bad += d->smp_in_bad[k] > 0;
    qr_json_kv_int(j, "samples_with_nonfinite_input", bad);
    /* the profiles (model0/1_statistic) and distributions over the set: how many samples they cover */
    qr_json_kv_int(j, "profile_samples", r->x.n_samples);
    qr_json_kv_bool(j, "profile_analysis_over_set", r->x.hooks.tap_done);
    int nd = 0;
    for (int i = 0; r->x.dset && i < r->x.dset->n; i++) nd += r->x.dset->d[i].n_samples > 0;
    qr_json_kv_int(j, "distributions_over_set", nd);
    qr_json_kv_int(j, "distribution_samples", nd ? r->x.n_samples : 0);
    qr_json_key(j, "outputs");
    qr_json_arr_begin(j);
    for (int o = 0; o < d->n_outs; o++) {
        const QrDsOut *x = &d->outs[o];
        QrMetrics m;
        qr_ds_out_metrics(x, &m);
        QrDsColStats cs, ss;
        qr_dsacc_col_stats(x->list.cos, x->list.has, d->n_samples, &cs);
        qr_dsacc_col_stats(x->list.sqnr, x->list.has, d->n_samples, &ss);
        qr_json_obj_begin(j);
        qr_json_kv_str(j, "name", s->b->values[s->b->outputs[o]].name);
        qr_json_kv_num(j, "pooled_cosine", m.cosine);
        qr_json_kv_num(j, "pooled_sqnr", m.sqnr);
        qr_json_kv_num(j, "mean_cosine", cs.mean);
        qr_json_kv_num(j, "p05_cosine", cs.p05);
        qr_json_kv_num(j, "worst_cosine", cs.min);
        qr_json_kv_num(j, "mean_sqnr", ss.mean);
        qr_json_kv_num(j, "p05_sqnr", ss.p05);
        if (x->cls && x->rows) {
            qr_json_kv_num(j, "top1_agree", (double)x->agree / (double)x->rows);
            qr_json_kv_num(j, "top5_overlap", (double)x->top5_hits / (double)x->top5_den);
        }
        if (x->tok_out && x->tok.vocab) {     /* per token, over every sample's tokens */
            QrTokStats ts;
            qr_tok_stats(&x->tok, &ts);
            qr_json_kv_int(j, "tokens", ts.tokens);
            qr_json_kv_num(j, "top1_agree", ts.top1_agree);
            qr_json_kv_num(j, "top5_overlap", ts.top5_overlap);
            qr_json_kv_num(j, "kld_mean", ts.kld_mean);
            qr_json_kv_num(j, "kld_p90", ts.kld_p90);
            qr_json_kv_num(j, "kld_p99", ts.kld_p99);
            qr_json_kv_num(j, "kld_max", ts.kld_max);
            qr_json_kv_num(j, "dp_rms", ts.dp_rms);
            if (ts.nll_tokens) qr_json_kv_num(j, "ln_ppl_ratio", ts.ln_ppl_ratio);
        }
        qr_json_obj_end(j);
    }
    qr_json_arr_end(j);
    qr_json_obj_end(j);
    free(order);
}

static void qr_ds_runall_html(QrHtml *h, const QrDsRunall *r, const QrSession *s, const char *dir) {
    (void)s;
    if (!r->on) return;
    qr_html_section(h, "dataset", "Data set");
    if (!r->ok) { qr_html_para(h, "The comparison over the data set failed (see the manifest)."); return; }
    qr_html_paraf(h, "Every other section analyses the worst sample; this one pools the per-layer comparison over all %d "
                  "samples of %s (" QR_BF_DATASET "/" QR_BF_COMPARE ".txt: pooled columns, then mean, worst and 5th-percentile "
                  "Cosine/SQNR over the samples), with one row per graph output and every sample ranked worst first.",
                  r->dc.n_samples, r->ds->dir);
    int nd = 0;
    for (int i = 0; r->x.dset && i < r->x.dset->n; i++) nd += r->x.dset->d[i].n_samples > 0;
    qr_html_paraf(h, QR_BF_PROFILE_BASE QR_BF_STATISTIC " and %s are pooled over all %d samples (min/max/mean/var of every "
                  "value over all samples' elements). %d of the distribution plots (histograms and per-channel box plots "
                  "of activations with a quantizer) cover all %d samples; the others show the worst sample.",
                  r->x.hooks.tap_done ? QR_BF_PROFILE_ANAL QR_BF_STATISTIC
                                      : "(in --mode int/both, the worst sample's) " QR_BF_PROFILE_ANAL QR_BF_STATISTIC,
                  r->x.n_samples, nd, r->x.n_samples);
    const char *files[] = { QR_BF_DS_OUTPUTS ".txt", QR_BF_DS_SAMPLES ".txt" };
    for (int i = 0; i < 2; i++) {
        char p[4300];
        snprintf(p, sizeof p, "%s/" QR_BF_DATASET "/%s", dir, files[i]);
        unsigned char *buf = NULL;
        size_t len = 0;
        if (qr_file_read(p, 1 << 20, &buf, &len) == QR_OK) {
            char *t = realloc(buf, len + 1);
            if (t) { t[len] = 0; qr_html_pre(h, t); buf = (unsigned char *)t; }
        }
        qr_err_clear();
        free(buf);
    }
}
