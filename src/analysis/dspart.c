/* analysis/dspart — implementation. See dspart.h.
 *
 * Map: byte writer/reader · accumulators out and in · the file · merge checks · shards. */

/* ==== bytes ========================================================================== */

static void qr_dspart_put_bytes(QrDsW *w, const void *v, size_t n) {
    if (w->oom) return;
    if (w->len + n > w->cap) {
        size_t c = w->cap ? w->cap : 4096;
        while (c < w->len + n) c *= 2;
        uint8_t *np = realloc(w->p, c);
        if (!np) { w->oom = true; return; }
        w->p = np;
        w->cap = c;
    }
    memcpy(w->p + w->len, v, n);
    w->len += n;
}
static void qr_dspart_put_u64(QrDsW *w, uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    qr_dspart_put_bytes(w, b, 8);
}
static void qr_dspart_put_f64(QrDsW *w, double v) { uint64_t u; memcpy(&u, &v, 8); qr_dspart_put_u64(w, u); }
static void qr__dsp_sha(const void *data, size_t len, uint8_t out[QR_SHA256_LEN]) {
    QrSha256 h;
    qr_sha256_init(&h);
    qr_sha256_update(&h, data, len);
    qr_sha256_final(&h, out);
}
static void qr_dspart_put_str(QrDsW *w, const char *s) {
    size_t n = s ? strlen(s) : 0;
    qr_dspart_put_u64(w, n);
    qr_dspart_put_bytes(w, s ? s : "", n);
}

static uint64_t qr_dspart_get_u64(QrDsR *r) {
    if (r->bad || r->len - r->off < 8) { r->bad = true; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)r->p[r->off + i] << (8 * i);
    r->off += 8;
    return v;
}
static double qr_dspart_get_f64(QrDsR *r) { uint64_t u = qr_dspart_get_u64(r); double v; memcpy(&v, &u, 8); return v; }
/* A count no larger than lim (else the part is corrupt). */
static int qr_dspart_get_int(QrDsR *r, int64_t lim) {
    uint64_t v = qr_dspart_get_u64(r);
    if (v > (uint64_t)lim) { r->bad = true; return 0; }
    return (int)v;
}
static const uint8_t *qr_dspart_get_bytes(QrDsR *r, size_t n) {
    if (r->bad || n > r->len - r->off) { r->bad = true; return NULL; }
    const uint8_t *p = r->p + r->off;
    r->off += n;
    return p;
}
static bool qr_dspart_bad(const QrDsR *r) { return r->bad; }
static const char *qr__dsp_gstr(QrDsR *r, QrArena *a) {
    uint64_t n = qr_dspart_get_u64(r);
    if (r->bad || n > r->len - r->off) { r->bad = true; return ""; }
    char *s = qr_arena_alloc(a, (size_t)n + 1);
    if (!s) { r->bad = true; return ""; }
    memcpy(s, r->p + r->off, (size_t)n);
    s[n] = 0;
    r->off += (size_t)n;
    return s;
}

/* ==== accumulators =================================================================== */

static void qr_dspart_put_xsum(QrDsW *w, const QrXSum *s) {
    QrXSum t = *s;
    qr_dsacc_xsum_norm(&t);
    for (int i = 0; i < QR_XSUM_LIMBS; i++) qr_dspart_put_u64(w, (uint64_t)t.l[i]);
    qr_dspart_put_u64(w, (uint64_t)t.n_nan); qr_dspart_put_u64(w, (uint64_t)t.n_pinf); qr_dspart_put_u64(w, (uint64_t)t.n_ninf);
}
static void qr_dspart_get_xsum(QrDsR *r, QrXSum *s) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < QR_XSUM_LIMBS; i++) s->l[i] = (int64_t)qr_dspart_get_u64(r);
    s->n_nan = qr_dspart_get_int(r, INT32_MAX); s->n_pinf = qr_dspart_get_int(r, INT32_MAX); s->n_ninf = qr_dspart_get_int(r, INT32_MAX);
    for (int i = 0; i + 1 < QR_XSUM_LIMBS; i++)   /* canonical form only: the merge adds limbs without overflow */
        if (s->l[i] < 0 || s->l[i] >= 4294967296LL) r->bad = true;
}

static void qr__dsp_put_pool(QrDsW *w, const QrDsPool *p) {
    qr_dspart_put_u64(w, (uint64_t)p->n); qr_dspart_put_u64(w, (uint64_t)p->n_bad); qr_dspart_put_u64(w, (uint64_t)p->n_samples);
    const QrXSum *x[] = { &p->sxx, &p->syy, &p->sxy, &p->sdd, &p->sad, &p->sx, &p->sy, &p->sx2, &p->sy2, &p->m2x, &p->m2y };
    for (int k = 0; k < QR_ARRAY_LEN(x); k++) qr_dspart_put_xsum(w, x[k]);
    double v[] = { p->amax, p->rtol, p->x_min, p->x_max, p->y_min, p->y_max };
    for (int k = 0; k < QR_ARRAY_LEN(v); k++) qr_dspart_put_f64(w, v[k]);
}
static void qr__dsp_get_pool(QrDsR *r, QrDsPool *p) {
    p->n = (int64_t)qr_dspart_get_u64(r); p->n_bad = (int64_t)qr_dspart_get_u64(r); p->n_samples = (int64_t)qr_dspart_get_u64(r);
    QrXSum *x[] = { &p->sxx, &p->syy, &p->sxy, &p->sdd, &p->sad, &p->sx, &p->sy, &p->sx2, &p->sy2, &p->m2x, &p->m2y };
    for (int k = 0; k < QR_ARRAY_LEN(x); k++) qr_dspart_get_xsum(r, x[k]);
    double *v[] = { &p->amax, &p->rtol, &p->x_min, &p->x_max, &p->y_min, &p->y_max };
    for (int k = 0; k < QR_ARRAY_LEN(v); k++) *v[k] = qr_dspart_get_f64(r);
}

static void qr__dsp_put_list(QrDsW *w, const QrDsList *l) {
    for (int k = 0; k < l->n; k++) {
        qr_dspart_put_u64(w, l->has[k]);
        if (!l->has[k]) continue;
        double v[] = { l->cos[k], l->sqnr[k], l->lse_x[k], l->lse_y[k], l->kl_e[k] };
        for (int q = 0; q < 5; q++) qr_dspart_put_f64(w, v[q]);
    }
}
static void qr__dsp_get_list(QrDsR *r, QrDsList *l) {
    for (int k = 0; k < l->n && !r->bad; k++) {
        l->has[k] = (uint8_t)qr_dspart_get_int(r, 1);
        if (!l->has[k]) continue;
        double *v[] = { &l->cos[k], &l->sqnr[k], &l->lse_x[k], &l->lse_y[k], &l->kl_e[k] };
        for (int q = 0; q < 5; q++) *v[q] = qr_dspart_get_f64(r);
    }
}

static void qr__dsp_put_metrics(QrDsW *w, const QrMetrics *m) {
    double v[] = { m->cosine, m->mse, m->l1, m->kl, m->sqnr, m->atol, m->rtol, m->x_min, m->x_max, m->x_mean, m->x_var,
                   m->y_min, m->y_max, m->y_mean, m->y_var };
    for (int q = 0; q < QR_ARRAY_LEN(v); q++) qr_dspart_put_f64(w, v[q]);
    qr_dspart_put_u64(w, (uint64_t)m->n);
    qr_dspart_put_u64(w, (uint64_t)m->n_nonfinite);
}
static void qr__dsp_get_metrics(QrDsR *r, QrMetrics *m) {
    double *v[] = { &m->cosine, &m->mse, &m->l1, &m->kl, &m->sqnr, &m->atol, &m->rtol, &m->x_min, &m->x_max, &m->x_mean,
                    &m->x_var, &m->y_min, &m->y_max, &m->y_mean, &m->y_var };
    for (int q = 0; q < QR_ARRAY_LEN(v); q++) *v[q] = qr_dspart_get_f64(r);
    m->n = (int64_t)qr_dspart_get_u64(r);
    m->n_nonfinite = (int64_t)qr_dspart_get_u64(r);
}

/* A logits output's tokens (analysis/tokens): counters, the per-token values, the worst tokens. */
static void qr__dsp_put_tok(QrDsW *w, const QrTokAcc *t) {
    uint64_t v[] = { (uint64_t)t->vocab, (uint64_t)t->tokens, (uint64_t)t->nonfinite, (uint64_t)t->agree,
                     (uint64_t)t->top5_hits, (uint64_t)t->top5_den, (uint64_t)t->nll_tokens, (uint64_t)t->n_worst };
    for (int q = 0; q < QR_ARRAY_LEN(v); q++) qr_dspart_put_u64(w, v[q]);
    for (int64_t i = 0; i < t->tokens; i++) { qr_dspart_put_f64(w, t->kld[i]); qr_dspart_put_f64(w, t->dp[i]); }
    for (int64_t i = 0; i < t->nll_tokens; i++) { qr_dspart_put_f64(w, t->nll_b[i]); qr_dspart_put_f64(w, t->nll_a[i]); }
    for (int k = 0; k < t->n_worst; k++) {
        const QrTokWorst *x = &t->worst[k];
        qr_dspart_put_f64(w, x->kld);
        uint64_t u[] = { (uint64_t)x->sample, (uint64_t)x->batch, (uint64_t)x->pos, (uint64_t)x->base_top1, (uint64_t)x->ana_top1 };
        for (int q = 0; q < QR_ARRAY_LEN(u); q++) qr_dspart_put_u64(w, u[q]);
    }
}

static QrStatus qr__dsp_get_tok(QrDsR *r, QrTokAcc *t, int n_samples) {
    const uint64_t lim = (uint64_t)1 << 40;
    uint64_t v[8];
    for (int q = 0; q < 8; q++) v[q] = qr_dspart_get_u64(r);
    /* each value takes 16 bytes in the file: counts beyond what is left are malformed, not allocated */
    uint64_t left = r->len - r->off;
    if (r->bad || v[0] > lim || v[1] > left / 16 || v[6] > left / 16 || v[7] > QR_TOK_WORST || v[3] > v[1] || v[4] > v[5])
        return qr_errf(QR_ERR_INVALID, "its per-token accumulators are malformed");
    QrTokAcc x = { .vocab = (int64_t)v[0], .nonfinite = (int64_t)v[2], .agree = (int64_t)v[3], .top5_hits = (int64_t)v[4],
                   .top5_den = (int64_t)v[5] };
    x.kld = malloc((size_t)v[1] * sizeof(double) + 8);
    x.dp = malloc((size_t)v[1] * sizeof(double) + 8);
    x.nll_b = malloc((size_t)v[6] * sizeof(double) + 8);
    x.nll_a = malloc((size_t)v[6] * sizeof(double) + 8);
    x.cap = (int64_t)v[1];
    x.nll_cap = (int64_t)v[6];
    if (!x.kld || !x.dp || !x.nll_b || !x.nll_a) { qr_tok_free(&x); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (uint64_t i = 0; i < v[1]; i++) { x.kld[i] = qr_dspart_get_f64(r); x.dp[i] = qr_dspart_get_f64(r); }
    for (uint64_t i = 0; i < v[6]; i++) { x.nll_b[i] = qr_dspart_get_f64(r); x.nll_a[i] = qr_dspart_get_f64(r); }
    x.tokens = (int64_t)v[1];
    x.nll_tokens = (int64_t)v[6];
    for (int k = 0; k < (int)v[7]; k++) {
        QrTokWorst *w = &x.worst[k];
        w->kld = qr_dspart_get_f64(r);
        w->sample = qr_dspart_get_int(r, n_samples > 0 ? n_samples - 1 : 0);
        w->batch = (int64_t)qr_dspart_get_u64(r);
        w->pos = (int64_t)qr_dspart_get_u64(r);
        w->base_top1 = (int64_t)qr_dspart_get_u64(r);
        w->ana_top1 = (int64_t)qr_dspart_get_u64(r);
    }
    x.n_worst = (int)v[7];
    QrStatus st = r->bad ? qr_errf(QR_ERR_INVALID, "its per-token accumulators are malformed") : qr_tok_merge(t, &x);
    qr_tok_free(&x);
    return st;
}

static void qr__dsp_put_compare(QrDsW *w, const QrDsCompare *d) {
    qr_dspart_put_u64(w, (uint64_t)d->n_samples); qr_dspart_put_u64(w, (uint64_t)d->n_rows); qr_dspart_put_u64(w, (uint64_t)d->n_outs);
    for (int i = 0; i < d->n_rows; i++) {
        const QrDsRow *x = &d->rows[i];
        qr_dspart_put_u64(w, (uint64_t)x->match);
        qr__dsp_put_pool(w, &x->pool);
        qr__dsp_put_pool(w, &x->local);
        qr__dsp_put_list(w, &x->list);
        uint64_t v[] = { (uint64_t)x->n_m, (uint64_t)x->n_local, x->has_lsb, (uint64_t)x->lsb_n, (uint64_t)x->lsb_diff,
                         (uint64_t)x->lsb_max, (uint64_t)x->lsb_ties };
        for (int q = 0; q < QR_ARRAY_LEN(v); q++) qr_dspart_put_u64(w, v[q]);
        const QrDsSplit *sp = &x->split;
        uint64_t u[] = { (uint64_t)sp->samples, (uint64_t)sp->n, (uint64_t)sp->n_clip, sp->parts, sp->per_channel,
                         (uint64_t)(int64_t)sp->w_channel, (uint64_t)(int64_t)sp->w_quant, (uint64_t)(int64_t)sp->i_quant };
        for (int q = 0; q < QR_ARRAY_LEN(u); q++) qr_dspart_put_u64(w, u[q]);
        qr_dspart_put_f64(w, sp->w_share);
        for (int q = 0; q < 6; q++) qr_dspart_put_xsum(w, &sp->s[q]);
    }
    for (int j = 0; j < d->n_outs; j++) {
        const QrDsOut *o = &d->outs[j];
        qr__dsp_put_pool(w, &o->pool);
        qr__dsp_put_list(w, &o->list);
        uint64_t v[] = { o->cls, (uint64_t)o->rows, (uint64_t)o->agree, (uint64_t)o->top5_hits, (uint64_t)o->top5_den };
        for (int q = 0; q < QR_ARRAY_LEN(v); q++) qr_dspart_put_u64(w, v[q]);
        for (int k = 0; k < d->n_samples; k++) qr_dspart_put_u64(w, (uint64_t)o->flips[k]);
        if (o->tok_out) qr__dsp_put_tok(w, &o->tok);   /* logits outputs only: other parts keep their bytes */
    }
    for (int k = 0; k < d->n_samples; k++) {
        bool skipped = !d->done[k] && d->skipped && d->skipped[k];
        qr_dspart_put_u64(w, d->done[k] ? 1 : skipped ? 2 : 0);
        if (skipped) qr_dspart_put_str(w, d->skip_why[k] ? d->skip_why[k] : "?");
        if (!d->done[k]) continue;
        qr__dsp_put_metrics(w, &d->smp[k]);
        qr_dspart_put_u64(w, (uint64_t)d->smp_in_bad[k]);
    }
}

static QrStatus qr__dsp_get_compare(QrDsR *r, QrDsCompare *d) {
    int ns = qr_dspart_get_int(r, INT32_MAX), nr = qr_dspart_get_int(r, INT32_MAX), no = qr_dspart_get_int(r, INT32_MAX);
    if (r->bad || ns != d->n_samples || nr != d->n_rows || no != d->n_outs)
        return qr_errf(QR_ERR_INVALID, "its tables (%d samples, %d layers, %d outputs) do not fit the models (%d, %d, %d)", ns,
                       nr, no, d->n_samples, d->n_rows, d->n_outs);
    for (int i = 0; i < d->n_rows && !r->bad; i++) {
        QrDsRow *x = &d->rows[i];
        if (qr_dspart_get_int(r, INT32_MAX) != x->match)
            return qr_errf(QR_ERR_INVALID, "layer %d is another pair than the models give", i);
        qr__dsp_get_pool(r, &x->pool);
        qr__dsp_get_pool(r, &x->local);
        qr__dsp_get_list(r, &x->list);
        x->n_m = (int64_t)qr_dspart_get_u64(r); x->n_local = (int64_t)qr_dspart_get_u64(r); x->has_lsb = qr_dspart_get_int(r, 1);
        x->lsb_n = (int64_t)qr_dspart_get_u64(r); x->lsb_diff = (int64_t)qr_dspart_get_u64(r);
        x->lsb_max = (int64_t)qr_dspart_get_u64(r); x->lsb_ties = (int64_t)qr_dspart_get_u64(r);
        QrDsSplit *sp = &x->split;
        sp->samples = (int64_t)qr_dspart_get_u64(r); sp->n = (int64_t)qr_dspart_get_u64(r);
        sp->n_clip = (int64_t)qr_dspart_get_u64(r); sp->parts = (uint8_t)qr_dspart_get_int(r, 7);
        sp->per_channel = qr_dspart_get_int(r, 1);
        sp->w_channel = (int)(int64_t)qr_dspart_get_u64(r);
        sp->w_quant = (int)(int64_t)qr_dspart_get_u64(r);
        sp->i_quant = (int)(int64_t)qr_dspart_get_u64(r);
        sp->w_share = qr_dspart_get_f64(r);
        for (int q = 0; q < 6; q++) qr_dspart_get_xsum(r, &sp->s[q]);
    }
    for (int j = 0; j < d->n_outs && !r->bad; j++) {
        QrDsOut *o = &d->outs[j];
        qr__dsp_get_pool(r, &o->pool);
        qr__dsp_get_list(r, &o->list);
        o->cls = qr_dspart_get_int(r, 1);
        o->rows = (int64_t)qr_dspart_get_u64(r); o->agree = (int64_t)qr_dspart_get_u64(r);
        o->top5_hits = (int64_t)qr_dspart_get_u64(r); o->top5_den = (int64_t)qr_dspart_get_u64(r);
        for (int k = 0; k < d->n_samples; k++) o->flips[k] = qr_dspart_get_int(r, INT32_MAX);
        if (o->tok_out && !r->bad) QR_TRY(qr__dsp_get_tok(r, &o->tok, d->n_samples));
    }
    for (int k = 0; k < d->n_samples && !r->bad; k++) {
        int state = qr_dspart_get_int(r, 2);
        if (state == 2) {                    /* skipped (--skip-bad-samples): the error naming it */
            uint64_t n = qr_dspart_get_u64(r);
            const uint8_t *why = r->bad ? NULL : qr_dspart_get_bytes(r, (size_t)n);
            if (!why) break;
            d->skip_why[k] = malloc((size_t)n + 1);
            if (!d->skip_why[k]) return qr_errf(QR_ERR_NOMEM, "out of memory");
            memcpy(d->skip_why[k], why, (size_t)n);
            d->skip_why[k][n] = 0;
            d->skipped[k] = 1;
            d->n_skipped++;
            continue;
        }
        d->done[k] = (uint8_t)state;
        if (!d->done[k]) continue;
        d->n_done++;
        qr__dsp_get_metrics(r, &d->smp[k]);
        d->smp_in_bad[k] = (int64_t)qr_dspart_get_u64(r);
    }
    if (r->bad || r->off != r->len) return qr_errf(QR_ERR_INVALID, "its accumulators are malformed");
    return QR_OK;
}

/* ==== the file ======================================================================= */

static const char qr__dsp_magic[8] = { 'Q', 'R', 'P', 'A', 'R', 'T', '\n', 0 };

static void qr__dsp_put_compare_sec(QrDsW *w, const void *d) { qr__dsp_put_compare(w, d); }

static bool qr__dsp_kind_ok(const char *k) { return !strcmp(k, "compare") || !strcmp(k, "sensitivity") || !strcmp(k, "runall"); }

static QrStatus qr_dspart_write(const char *path, const char *kind, const QrDsCompare *d, const QrDsSet *ds,
                                const QrSession *s, const char *const *opt_key, const char *const *opt_val, int n_opts,
                                int shard, int n_shards, const QrDsSection *sec, int n_sec) {
    if (n_opts > 16 || n_sec > 31 || !qr__dsp_kind_ok(kind))
        return qr_errf(QR_ERR_INVALID, "part '%s': %d options / %d sections / kind '%s' (internal limit)", path, n_opts, n_sec,
                       kind);
    QrDsW w = {0};
    const char *mp[2] = { s->b->path, s->a->path };
    char hex[2][2 * QR_SHA256_LEN + 1];
    for (int i = 0; i < 2; i++) {
        uint8_t dg[QR_SHA256_LEN];
        QR_TRY(qr_sha256_file(mp[i], dg));
        qr_sha256_hex(dg, hex[i]);
    }
    qr_dspart_put_str(&w, kind);
    for (int i = 0; i < 2; i++) { qr_dspart_put_str(&w, mp[i]); qr_dspart_put_str(&w, hex[i]); }
    qr_dspart_put_u64(&w, (uint64_t)n_opts);
    for (int i = 0; i < n_opts; i++) { qr_dspart_put_str(&w, opt_key[i]); qr_dspart_put_str(&w, opt_val[i]); }
    qr_dspart_put_u64(&w, (uint64_t)shard);
    qr_dspart_put_u64(&w, (uint64_t)n_shards);
    qr_dspart_put_str(&w, ds->dir);
    qr_dspart_put_u64(&w, ds->folders);
    qr_dspart_put_u64(&w, (uint64_t)ds->n_found);
    qr_dspart_put_u64(&w, (uint64_t)ds->n_inputs);
    for (int i = 0; i < ds->n_inputs; i++) { qr_dspart_put_str(&w, ds->input_names[i]); qr_dspart_put_str(&w, ds->folder[i]); }
    qr_dspart_put_u64(&w, (uint64_t)ds->n);
    for (int k = 0; k < ds->n; k++) qr_dspart_put_str(&w, ds->names[k]);
    /* sections: name, length (patched after), bytes */
    qr_dspart_put_u64(&w, (uint64_t)n_sec + 1);
    for (int i = -1; i < n_sec; i++) {
        qr_dspart_put_str(&w, i < 0 ? "compare" : sec[i].name);
        size_t at = w.len;
        qr_dspart_put_u64(&w, 0);
        if (i < 0) qr__dsp_put_compare_sec(&w, d);
        else sec[i].put(&w, sec[i].acc);
        if (w.oom) break;
        uint64_t n = w.len - at - 8;
        for (int b = 0; b < 8; b++) w.p[at + (size_t)b] = (uint8_t)(n >> (8 * b));
    }
    if (w.oom) { free(w.p); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    QrDsW f = {0};
    qr_dspart_put_bytes(&f, qr__dsp_magic, 8);
    uint8_t hdr[8];
    uint32_t ver = QR_DSPART_VERSION;
    uint64_t len = w.len;
    for (int i = 0; i < 4; i++) hdr[i] = (uint8_t)(ver >> (8 * i));
    qr_dspart_put_bytes(&f, hdr, 4);
    qr_dspart_put_u64(&f, len);
    qr_dspart_put_bytes(&f, w.p, w.len);
    free(w.p);
    uint8_t dg[QR_SHA256_LEN];
    if (!f.oom) qr__dsp_sha(f.p, f.len, dg);
    qr_dspart_put_bytes(&f, dg, sizeof dg);
    QrStatus st = f.oom ? qr_errf(QR_ERR_NOMEM, "out of memory") : qr_file_write_atomic(path, f.p, f.len);
    free(f.p);
    return st;
}

static void qr_dspart_free(QrDsPart *p) {
    free(p->data);
    qr_arena_free(&p->arena);
    memset(p, 0, sizeof *p);
}

static QrStatus qr_dspart_read(const char *path, QrDsPart *p) {
    memset(p, 0, sizeof *p);
    size_t len = 0;
    QrStatus st = qr_file_read(path, 0, &p->data, &len);
    if (st != QR_OK) return qr_err_wrap(st, "part '%s'", path);
    p->path = qr_arena_strdup(&p->arena, path);
    const size_t head = 8 + 4 + 8;
    if (len < head + QR_SHA256_LEN || memcmp(p->data, qr__dsp_magic, 8)) {
        qr_dspart_free(p);
        return qr_errf(QR_ERR_INVALID, "'%s' is not a qreport part file (.qrpart)", path);
    }
    uint32_t ver = 0;
    for (int i = 0; i < 4; i++) ver |= (uint32_t)p->data[8 + i] << (8 * i);
    if (ver != QR_DSPART_VERSION) {
        qr_dspart_free(p);
        return qr_errf(QR_ERR_INVALID, "part '%s' has format version %u; this qreport reads version %d (write the parts "
                       "and merge them with the same qreport)", path, ver, QR_DSPART_VERSION);
    }
    uint64_t plen = 0;
    for (int i = 0; i < 8; i++) plen |= (uint64_t)p->data[12 + i] << (8 * i);
    uint8_t dg[QR_SHA256_LEN];
    if (plen != len - head - QR_SHA256_LEN) {
        qr_dspart_free(p);
        return qr_errf(QR_ERR_INVALID, "part '%s' is truncated or has trailing bytes (%zu bytes, the header says %llu + %zu)",
                       path, len, (unsigned long long)plen, head + QR_SHA256_LEN);
    }
    qr__dsp_sha(p->data, len - QR_SHA256_LEN, dg);
    if (memcmp(dg, p->data + len - QR_SHA256_LEN, QR_SHA256_LEN)) {
        qr_dspart_free(p);
        return qr_errf(QR_ERR_INVALID, "part '%s' fails its checksum (modified or damaged)", path);
    }
    QrDsR r = { p->data + head, (size_t)plen, 0, false };
    QrArena *a = &p->arena;
    p->kind = qr__dsp_gstr(&r, a);
    for (int i = 0; i < 2; i++) { p->model_path[i] = qr__dsp_gstr(&r, a); p->model_sha[i] = qr__dsp_gstr(&r, a); }
    p->n_opts = qr_dspart_get_int(&r, 16);
    for (int i = 0; i < p->n_opts; i++) { p->opt_key[i] = qr__dsp_gstr(&r, a); p->opt_val[i] = qr__dsp_gstr(&r, a); }
    p->shard = qr_dspart_get_int(&r, INT32_MAX);
    p->n_shards = qr_dspart_get_int(&r, INT32_MAX);
    p->dir = qr__dsp_gstr(&r, a);
    p->folders = qr_dspart_get_int(&r, 1);
    p->n_found = qr_dspart_get_int(&r, INT32_MAX);
    p->n_inputs = qr_dspart_get_int(&r, 4096);
    p->input_names = qr_arena_array(a, (size_t)p->n_inputs + 1, sizeof(char *));
    p->folder = qr_arena_array(a, (size_t)p->n_inputs + 1, sizeof(char *));
    for (int i = 0; p->input_names && p->folder && i < p->n_inputs; i++) {
        p->input_names[i] = qr__dsp_gstr(&r, a);
        p->folder[i] = qr__dsp_gstr(&r, a);
    }
    p->n_samples = qr_dspart_get_int(&r, (int64_t)(r.len / 8));
    p->names = qr_arena_array(a, (size_t)p->n_samples + 1, sizeof(char *));
    for (int k = 0; p->names && k < p->n_samples; k++) p->names[k] = qr__dsp_gstr(&r, a);
    p->n_sec = qr_dspart_get_int(&r, QR_ARRAY_LEN(p->sec));
    for (int i = 0; i < p->n_sec && !r.bad; i++) {
        p->sec_name[i] = qr__dsp_gstr(&r, a);
        p->sec_len[i] = (size_t)qr_dspart_get_u64(&r);
        p->sec[i] = qr_dspart_get_bytes(&r, p->sec_len[i]);
        for (int j = 0; j < i; j++) if (!strcmp(p->sec_name[i], p->sec_name[j])) r.bad = true;
    }
    if (r.bad || r.off != r.len || !p->input_names || !p->folder || !p->names || !qr__dsp_kind_ok(p->kind) ||
        p->n_shards < 1 || p->shard >= p->n_shards || p->n_sec < 1 || strcmp(p->sec_name[0], "compare")) {
        qr_dspart_free(p);
        return qr_errf(QR_ERR_INVALID, "part '%s' is malformed", path);
    }
    return QR_OK;
}

static const char *qr_dspart_opt(const QrDsPart *p, const char *key) {
    for (int i = 0; i < p->n_opts; i++) if (!strcmp(p->opt_key[i], key)) return p->opt_val[i];
    return NULL;
}

static QrStatus qr_dspart_load(const QrDsPart *p, const QrSession *s, QrDsCompare *d, const QrDsSection *sec, int n_sec) {
    if (p->n_sec != n_sec + 1) {
        char have[512] = "";
        size_t l = 0;
        for (int i = 1; i < p->n_sec && l < sizeof have - 64; i++)
            l += (size_t)snprintf(have + l, sizeof have - l, "%s'%s'", i > 1 ? ", " : "", p->sec_name[i]);
        return qr_errf(QR_ERR_INVALID, "part '%s' holds %d extra section%s (%s) where this merge expects %d", p->path,
                       p->n_sec - 1, p->n_sec == 2 ? "" : "s", l ? have : "none", n_sec);
    }
    QrDsCompare t;
    QR_TRY(qr_ds_compare_init(&t, s, d->n_samples, d->names));
    QrDsR r = { p->sec[0], p->sec_len[0], 0, false };
    QrStatus st = qr__dsp_get_compare(&r, &t);
    if (st == QR_OK) st = qr_ds_compare_merge(d, &t);
    qr_ds_compare_free(&t);
    for (int i = 0; st == QR_OK && i < n_sec; i++) {
        int at = -1;
        for (int j = 1; j < p->n_sec; j++) if (!strcmp(p->sec_name[j], sec[i].name)) at = j;
        if (at < 0) { st = qr_errf(QR_ERR_INVALID, "it has no section '%s'", sec[i].name); break; }
        QrDsR rs = { p->sec[at], p->sec_len[at], 0, false };
        st = sec[i].merge(&rs, sec[i].acc);
        if (st == QR_OK && (qr_dspart_bad(&rs) || rs.off != rs.len)) st = qr_errf(QR_ERR_INVALID, "its section '%s' is malformed", sec[i].name);
        else if (st != QR_OK) st = qr_err_wrap(st, "section '%s'", sec[i].name);
    }
    return st == QR_OK ? st : qr_err_wrap(st, "part '%s'", p->path);
}

/* ==== merge checks =================================================================== */

static QrStatus qr_dspart_check(const QrDsPart *parts, int n) {
    if (n < 1) return qr_errf(QR_ERR_INVALID, "no part to merge");
    const QrDsPart *a = &parts[0];
    static const char *const what[2] = { "baseline", "analysis model" };
    for (int i = 1; i < n; i++) {
        const QrDsPart *b = &parts[i];
        if (strcmp(a->kind, b->kind))
            return qr_errf(QR_ERR_INVALID, "'%s' was written by '%s --shard' but '%s' by '%s --shard'", a->path, a->kind, b->path,
                           b->kind);
        for (int m = 0; m < 2; m++)
            if (strcmp(a->model_sha[m], b->model_sha[m]))
                return qr_errf(QR_ERR_INVALID, "'%s' and '%s' come from different %s files (%s sha256 %.12s..., %s sha256 "
                               "%.12s...)", a->path, b->path, what[m], a->model_path[m], a->model_sha[m], b->model_path[m],
                               b->model_sha[m]);
        for (int k = 0; k < a->n_opts || k < b->n_opts; k++) {
            const char *key = k < a->n_opts ? a->opt_key[k] : b->opt_key[k];
            const char *va = NULL, *vb = NULL;
            for (int q = 0; q < a->n_opts; q++) if (!strcmp(a->opt_key[q], key)) va = a->opt_val[q];
            for (int q = 0; q < b->n_opts; q++) if (!strcmp(b->opt_key[q], key)) vb = b->opt_val[q];
            if (!va || !vb || strcmp(va, vb))
                return qr_errf(QR_ERR_INVALID, "'%s' and '%s' were made with different options: %s '%s' vs '%s'", a->path,
                               b->path, key, va ? va : "(none)", vb ? vb : "(none)");
        }
        if (a->n_shards != b->n_shards)
            return qr_errf(QR_ERR_INVALID, "'%s' is shard %d/%d but '%s' is shard %d/%d (different shard counts)", a->path,
                           a->shard, a->n_shards, b->path, b->shard, b->n_shards);
        bool same = a->n_samples == b->n_samples;
        for (int k = 0; same && k < a->n_samples; k++) same = !strcmp(a->names[k], b->names[k]);
        if (!same)
            return qr_errf(QR_ERR_INVALID, "'%s' and '%s' list different samples (%d vs %d in the set)", a->path, b->path,
                           a->n_samples, b->n_samples);
    }
    int N = a->n_shards;
    int *count = calloc((size_t)N + 1, sizeof *count);
    if (!count) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) count[parts[i].shard]++;
    char miss[1024] = "", dup[1024] = "";
    size_t lm = 0, ld = 0;
    int n_miss = 0, n_dup = 0;
    for (int k = 0; k < N; k++) {
        if (!count[k] && lm < sizeof miss - 16) { lm += (size_t)snprintf(miss + lm, sizeof miss - lm, "%s%d", n_miss ? ", " : "", k); n_miss++; }
        if (count[k] > 1 && ld < sizeof dup - 16) {
            ld += (size_t)snprintf(dup + ld, sizeof dup - ld, "%s%d", n_dup ? ", " : "", k);
            for (int i = 0; i < n && ld < sizeof dup - 64; i++)
                if (parts[i].shard == k) ld += (size_t)snprintf(dup + ld, sizeof dup - ld, " %s", parts[i].path);
            n_dup++;
        }
    }
    free(count);
    if (n_miss || n_dup)
        return qr_errf(QR_ERR_INVALID, "the parts do not cover shards 0..%d of %d exactly once:%s%s%s%s", N - 1, N,
                       n_miss ? " missing shard(s) " : "", miss, n_dup ? "; duplicated shard(s) " : "", dup);
    return QR_OK;
}

/* ==== shards ========================================================================= */

static void qr_dspart_shard_range(int n_samples, int k, int n, int *lo, int *hi) {
    *lo = (int)((int64_t)k * n_samples / n);
    *hi = (int)((int64_t)(k + 1) * n_samples / n);
}

static bool qr__dsp_int(const char *s, long *out) {
    if (!s || !*s) return false;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 1000000) return false;
    *out = v;
    return true;
}

static QrStatus qr_dspart_shard_parse(const char *spec, int *k, int *n) {
    long a, b;
    if (!strncmp(spec, "auto", 4) && (spec[4] == 0 || spec[4] == '/')) {
        const char *id = getenv("SLURM_ARRAY_TASK_ID"), *cnt = getenv("SLURM_ARRAY_TASK_COUNT"), *mn = getenv("SLURM_ARRAY_TASK_MIN");
        long lo = 0;
        if (id) {
            if (!qr__dsp_int(id, &a) || !qr__dsp_int(cnt, &b) || (mn && !qr__dsp_int(mn, &lo)))
                return qr_errf(QR_ERR_INVALID, "--shard auto: SLURM_ARRAY_TASK_ID '%s' / SLURM_ARRAY_TASK_COUNT '%s' / "
                               "SLURM_ARRAY_TASK_MIN '%s' are not counts", id, cnt ? cnt : "(unset)", mn ? mn : "(unset)");
            a -= lo;
        } else if ((id = getenv("JOB_COMPLETION_INDEX"))) {
            cnt = spec[4] == '/' ? spec + 5 : getenv("QR_SHARD_COUNT");
            if (!qr__dsp_int(id, &a) || !qr__dsp_int(cnt, &b))
                return qr_errf(QR_ERR_INVALID, "--shard auto: JOB_COMPLETION_INDEX '%s' needs a count ('--shard auto/N' or "
                               "QR_SHARD_COUNT; got '%s')", id, cnt ? cnt : "(unset)");
        } else
            return qr_errf(QR_ERR_INVALID, "--shard auto: neither SLURM_ARRAY_TASK_ID (Slurm job array) nor "
                           "JOB_COMPLETION_INDEX (Kubernetes Indexed Job) is set");
    } else {
        const char *sl = strchr(spec, '/');
        char first[32];
        if (!sl || (size_t)(sl - spec) >= sizeof first) return qr_errf(QR_ERR_INVALID, "--shard '%s': expected K/N or auto", spec);
        snprintf(first, sizeof first, "%.*s", (int)(sl - spec), spec);
        if (!qr__dsp_int(first, &a) || !qr__dsp_int(sl + 1, &b))
            return qr_errf(QR_ERR_INVALID, "--shard '%s': expected K/N (0 <= K < N) or auto", spec);
    }
    if (b < 1 || a >= b) return qr_errf(QR_ERR_INVALID, "--shard %s: shard %ld is out of range 0..%ld", spec, a, b - 1);
    *k = (int)a;
    *n = (int)b;
    return QR_OK;
}

/* ==== analysis/dsstat's sections. runall --shard's: both profiles ===============================
 * (the distributions are chosen by the worst sample's analyses, which only the merge knows: the
 * merge accumulates them itself, as one process's second pass does) */

static void qr_dspart_dsprof_put(QrDsW *w, const void *acc) {
    const QrDsStatRun *r = acc;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    QrStatus st = qr_statset_put(&r->prof[0], &buf, &len, &cap);
    if (st == QR_OK) st = qr_statset_put(&r->prof[1], &buf, &len, &cap);
    if (st != QR_OK) { qr_err_clear(); w->oom = true; }
    qr_dspart_put_u64(w, (uint64_t)r->n_samples);
    qr_dspart_put_u64(w, r->hooks.tap_done);
    qr_dspart_put_u64(w, len);
    qr_dspart_put_bytes(w, buf, len);
    free(buf);
}

static QrStatus qr_dspart_dsprof_merge(QrDsR *rd, void *acc) {
    QrDsStatRun *r = acc;
    int ns = qr_dspart_get_int(rd, INT32_MAX), done = qr_dspart_get_int(rd, 1);
    uint64_t len = qr_dspart_get_u64(rd);
    const uint8_t *p = qr_dspart_bad(rd) || len > rd->len ? NULL : qr_dspart_get_bytes(rd, (size_t)len);
    if (!p || qr_dspart_bad(rd)) return qr_errf(QR_ERR_INVALID, "profile section is malformed");
    QrStatSet t0 = {0}, t1 = {0};
    size_t off = 0, used = 0;
    QrStatus st = qr_statset_init(&t0, r->prof[0].g);
    if (st == QR_OK) st = qr_statset_init(&t1, r->prof[1].g);
    if (st == QR_OK) { st = qr_statset_get(&t0, p, (size_t)len, &used); off += used; }
    if (st == QR_OK) { st = qr_statset_get(&t1, p + off, (size_t)len - off, &used); off += used; }
    if (st == QR_OK && off != len) st = qr_errf(QR_ERR_INVALID, "profile section: %zu of %llu bytes read", off,
                                               (unsigned long long)len);
    if (st == QR_OK) st = qr_statset_merge(&r->prof[0], &t0);
    if (st == QR_OK) st = qr_statset_merge(&r->prof[1], &t1);
    if (st == QR_OK && ns) {                 /* a part without samples (all skipped) saw no run: no say */
        r->hooks.tap_done = r->n_samples ? r->hooks.tap_done && done : done;
        r->n_samples += ns;
    }
    qr_statset_free(&t0);
    qr_statset_free(&t1);
    return st;
}

/* ==== dsstat's section: both profiles and the distributions ================================================================ */

#ifdef QR_TESTING   /* release: once sharded runall writes parts */
/* The profile section (qr_dspart_dsprof_put) followed by the distribution accumulators. */
QR_TESTAPI void qr_dspart_dsstat_put(QrDsW *w, const void *acc) {
    const QrDsStatRun *r = acc;
    qr_dspart_dsprof_put(w, acc);
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    if (qr_dist_acc_put(&r->dist, &buf, &len, &cap) != QR_OK) { qr_err_clear(); w->oom = true; }
    qr_dspart_put_u64(w, len);
    qr_dspart_put_bytes(w, buf, len);
    free(buf);
}

QR_TESTAPI QrStatus qr_dspart_dsstat_merge(QrDsR *rd, void *acc) {
    QrDsStatRun *r = acc;
    QR_TRY(qr_dspart_dsprof_merge(rd, acc));
    uint64_t len = qr_dspart_get_u64(rd);
    const uint8_t *p = qr_dspart_bad(rd) || len > rd->len ? NULL : qr_dspart_get_bytes(rd, (size_t)len);
    if (!p || qr_dspart_bad(rd)) return qr_errf(QR_ERR_INVALID, "distribution section is malformed");
    QrDistAcc td = {0};
    size_t used = 0;
    QrStatus st = qr_dist_acc_init_like(&td, &r->dist);
    if (st == QR_OK) st = qr_dist_acc_get(&td, p, (size_t)len, &used);
    if (st == QR_OK && used != len)
        st = qr_errf(QR_ERR_INVALID, "distribution section: %zu of %llu bytes read", used, (unsigned long long)len);
    if (st == QR_OK) st = qr_dist_acc_merge(&r->dist, &td);
    qr_dist_acc_free(&td);
    return st;
}
#endif
