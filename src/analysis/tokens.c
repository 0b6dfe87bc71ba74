/* analysis/tokens — per-token judgement of logits outputs (tokens.h). */

static bool qr_tok_is_logits(const char *name, const QrTensor *t) { return qr_metric_is_logits(name, t); }

/* Indices of the k largest of v[n] (ties: the lower index first; NaN never before a number). */
static void qr_tok_topk(const float *v, int64_t n, int k, int64_t *idx) {
    for (int j = 0; j < k; j++) {
        int64_t best = -1;
        for (int64_t i = 0; i < n; i++) {
            bool taken = false;
            for (int q = 0; q < j && !taken; q++) taken = idx[q] == i;
            if (taken) continue;
            if (best < 0 || v[i] > v[best] || (v[best] != v[best] && v[i] == v[i])) best = i;
        }
        idx[j] = best;
    }
}

/* ln sum exp(v) over n finite values (max-shifted, double). */
static double qr__tok_lse(const float *v, int64_t n, double mx) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += exp((double)v[i] - mx);
    return mx + log(s);
}

/* Whether w ranks before v in the worst list: larger KL, then the lower sample, then the earlier token. */
static bool qr__tok_worse(const QrTokWorst *w, const QrTokWorst *v) {
    if (w->kld != v->kld) return w->kld > v->kld;
    if (w->sample != v->sample) return w->sample < v->sample;
    return w->batch != v->batch ? w->batch < v->batch : w->pos < v->pos;
}

static void qr__tok_worst_add(QrTokAcc *a, const QrTokWorst *w) {
    int at = a->n_worst;
    while (at > 0 && qr__tok_worse(w, &a->worst[at - 1])) at--;
    if (at >= QR_TOK_WORST) return;
    int last = a->n_worst < QR_TOK_WORST ? a->n_worst : QR_TOK_WORST - 1;
    for (int k = last; k > at; k--) a->worst[k] = a->worst[k - 1];
    a->worst[at] = *w;
    if (a->n_worst < QR_TOK_WORST) a->n_worst++;
}

/* Room for n more tokens (and n more labelled ones). */
static QrStatus qr__tok_reserve(QrTokAcc *a, int64_t n) {
    if (a->tokens + n > a->cap) {
        int64_t cap = QR_MAX(a->cap * 2, a->tokens + n);
        double *k = realloc(a->kld, (size_t)cap * sizeof *k);
        if (k) a->kld = k;
        double *d = k ? realloc(a->dp, (size_t)cap * sizeof *d) : NULL;
        if (d) a->dp = d;
        if (!k || !d) return qr_errf(QR_ERR_NOMEM, "out of memory");
        a->cap = cap;
    }
    if (a->nll_tokens + n > a->nll_cap) {
        int64_t cap = QR_MAX(a->nll_cap * 2, a->nll_tokens + n);
        double *b = realloc(a->nll_b, (size_t)cap * sizeof *b);
        if (b) a->nll_b = b;
        double *q = b ? realloc(a->nll_a, (size_t)cap * sizeof *q) : NULL;
        if (q) a->nll_a = q;
        if (!b || !q) return qr_errf(QR_ERR_NOMEM, "out of memory");
        a->nll_cap = cap;
    }
    return QR_OK;
}

static QrStatus qr_tok_add(QrTokAcc *a, const QrTensor *x, const QrTensor *y, const QrTensor *labels, int sample) {
    if (x->dtype != QR_DT_F32 || y->dtype != QR_DT_F32 || x->numel != y->numel || x->rank < 2)
        return qr_errf(QR_ERR_INVALID, "per-token metrics: the two logits tensors differ in shape or are not float32");
    int64_t V = x->dims[x->rank - 1], T = V ? x->numel / V : 0;
    int64_t seq = x->rank >= 3 ? x->dims[x->rank - 2] : T;
    if (a->vocab && a->vocab != V)
        return qr_errf(QR_ERR_INVALID, "per-token metrics: vocabulary %lld, earlier samples had %lld", (long long)V,
                       (long long)a->vocab);
    if (labels && labels->numel != T)
        return qr_errf(QR_ERR_INVALID, "labels: %lld token ids, but the logits hold %lld tokens", (long long)labels->numel,
                       (long long)T);
    for (int64_t t = 0; labels && t < T; t++)
        if (qr_tensor_get_i64(labels, t) >= V)
            return qr_errf(QR_ERR_INVALID, "labels: token id %lld at position %lld is outside the vocabulary (%lld)",
                           (long long)qr_tensor_get_i64(labels, t), (long long)t, (long long)V);
    QR_TRY(qr__tok_reserve(a, T));
    a->vocab = V;
    int kk = (int)QR_MIN(5, V);
    for (int64_t t = 0; t < T; t++) {
        const float *xb = (const float *)x->data + t * V, *ya = (const float *)y->data + t * V;
        double kl = qr_metric_token_kl(xb, ya, V);
        if (kl != kl) { a->nonfinite++; continue; }
        double mxb = xb[0], mxa = ya[0];
        for (int64_t i = 1; i < V; i++) { mxb = fmax(mxb, xb[i]); mxa = fmax(mxa, ya[i]); }
        double lb = qr__tok_lse(xb, V, mxb), la = qr__tok_lse(ya, V, mxa);
        int64_t ib[5], ia[5];
        qr_tok_topk(xb, V, kk, ib);
        qr_tok_topk(ya, V, kk, ia);
        for (int p = 0; p < kk; p++)
            for (int q = 0; q < kk; q++) a->top5_hits += ib[p] == ia[q];
        a->top5_den += kk;
        a->agree += ib[0] == ia[0];
        a->dp[a->tokens] = exp((double)ya[ib[0]] - la) - exp((double)xb[ib[0]] - lb);
        a->kld[a->tokens++] = kl;
        QrTokWorst w = { .kld = kl, .sample = sample, .batch = t / seq, .pos = t % seq, .base_top1 = ib[0], .ana_top1 = ia[0] };
        qr__tok_worst_add(a, &w);
        int64_t lab = labels ? qr_tensor_get_i64(labels, t) : -1;
        if (lab >= 0) {
            a->nll_b[a->nll_tokens] = lb - (double)xb[lab];
            a->nll_a[a->nll_tokens++] = la - (double)ya[lab];
        }
    }
    return QR_OK;
}

static QrStatus qr_tok_merge(QrTokAcc *dst, const QrTokAcc *src) {
    if (!src->vocab) return QR_OK;
    if (dst->vocab && dst->vocab != src->vocab)
        return qr_errf(QR_ERR_INVALID, "per-token metrics: vocabulary %lld and %lld", (long long)dst->vocab, (long long)src->vocab);
    QR_TRY(qr__tok_reserve(dst, QR_MAX(src->tokens, src->nll_tokens)));
    dst->vocab = src->vocab;
    memcpy(dst->kld + dst->tokens, src->kld, (size_t)src->tokens * sizeof *dst->kld);
    memcpy(dst->dp + dst->tokens, src->dp, (size_t)src->tokens * sizeof *dst->dp);
    memcpy(dst->nll_b + dst->nll_tokens, src->nll_b, (size_t)src->nll_tokens * sizeof *dst->nll_b);
    memcpy(dst->nll_a + dst->nll_tokens, src->nll_a, (size_t)src->nll_tokens * sizeof *dst->nll_a);
    dst->tokens += src->tokens;
    dst->nll_tokens += src->nll_tokens;
    dst->nonfinite += src->nonfinite;
    dst->agree += src->agree;
    dst->top5_hits += src->top5_hits;
    dst->top5_den += src->top5_den;
    for (int k = 0; k < src->n_worst; k++) qr__tok_worst_add(dst, &src->worst[k]);
    return QR_OK;
}

static int qr__tok_cmp_double(const void *p, const void *q) {
    double x = *(const double *)p, y = *(const double *)q;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics of sorted v[n] at q in [0, 1]. */
static double qr__tok_pctl(const double *v, int64_t n, double q) {
    if (n <= 0) return NAN;
    double r = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(r);
    if (lo >= n - 1) return v[n - 1];
    return v[lo] + (v[lo + 1] - v[lo]) * (r - (double)lo);
}

/* The sum of f(v[i]) over a sorted copy of v (ascending): the same bits in any order of v. f: 0 = v, 1 = v². */
static double qr__tok_sorted_sum(const double *v, int64_t n, int f, double *sorted) {
    for (int64_t i = 0; i < n; i++) sorted[i] = f ? v[i] * v[i] : v[i];
    qsort(sorted, (size_t)n, sizeof *sorted, qr__tok_cmp_double);
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += sorted[i];
    return s;
}

static void qr_tok_stats(const QrTokAcc *a, QrTokStats *s) {
    int64_t n = a->tokens, m = a->nll_tokens;
    *s = (QrTokStats){ .tokens = n, .nonfinite = a->nonfinite, .top1_agree = NAN, .top5_overlap = NAN, .kld_mean = NAN,
                       .kld_p90 = NAN, .kld_p99 = NAN, .kld_max = NAN, .dp_rms = NAN, .nll_tokens = m,
                       .nll_base = NAN, .nll_analysis = NAN, .ln_ppl_ratio = NAN };
    double *v = malloc((size_t)QR_MAX(QR_MAX(n, m), 1) * sizeof *v);
    if (!v) return;                           /* out of memory: the statistics stay NaN */
    if (n > 0) {
        s->top1_agree = (double)a->agree / (double)n;
        s->top5_overlap = (double)a->top5_hits / (double)a->top5_den;
        s->dp_rms = sqrt(qr__tok_sorted_sum(a->dp, n, 1, v) / (double)n);
        s->kld_mean = qr__tok_sorted_sum(a->kld, n, 0, v) / (double)n;   /* v: the KL sorted */
        s->kld_p90 = qr__tok_pctl(v, n, 0.90);
        s->kld_p99 = qr__tok_pctl(v, n, 0.99);
        s->kld_max = v[n - 1];
    }
    if (m > 0) {
        s->nll_base = qr__tok_sorted_sum(a->nll_b, m, 0, v) / (double)m;
        s->nll_analysis = qr__tok_sorted_sum(a->nll_a, m, 0, v) / (double)m;
        s->ln_ppl_ratio = s->nll_analysis - s->nll_base;
    }
    free(v);
}

static void qr_tok_free(QrTokAcc *a) {
    free(a->kld);
    free(a->dp);
    free(a->nll_b);
    free(a->nll_a);
    memset(a, 0, sizeof *a);
}

static QrStatus qr_tok_labels(const QrGraph *g, const QrTensor *inputs, const char *file, const QrTensor *logits,
                              QrTensor *out, bool *have) {
    *have = false;
    int64_t T = logits->rank >= 2 ? logits->numel / QR_MAX(1, logits->dims[logits->rank - 1]) : 0;
    if (file) {
        QrTensor t = {0};
        size_t n = strlen(file);
        QR_TRY(n > 3 && !strcmp(file + n - 3, ".pb") ? qr_pb_read(file, &t, NULL, 0) : qr_npy_read(file, &t));
        QrStatus st = QR_OK;
        if (qr_dtype_is_float(t.dtype))
            st = qr_errf(QR_ERR_INVALID, "--labels %s: token ids must be integers, got %s", file, qr_dtype_name(t.dtype));
        else if (t.numel != T)
            st = qr_errf(QR_ERR_INVALID, "--labels %s: %lld token ids, but the logits hold %lld tokens (batch x sequence)",
                         file, (long long)t.numel, (long long)T);
        int64_t dims[1] = { T };
        if (st == QR_OK) st = qr_tensor_set_shape(out, QR_DT_S64, 1, dims);
        if (st == QR_OK) st = qr_tensor_alloc_data(out);
        for (int64_t e = 0; st == QR_OK && e < T; e++) qr_tensor_set_i64(out, e, qr_tensor_get_i64(&t, e));
        qr_tensor_free_data(&t);
        if (st == QR_OK) *have = true;
        return st;
    }
    if (logits->rank != 3) return QR_OK;
    for (int i = 0; i < g->n_inputs; i++) {
        const QrTensor *id = &inputs[i];
        if (strcmp(g->values[g->inputs[i]].name, "input_ids") || qr_dtype_is_float(id->dtype) || id->rank != 2 ||
            id->dims[0] != logits->dims[0] || id->dims[1] != logits->dims[1])
            continue;
        int64_t B = id->dims[0], S = id->dims[1], dims[1] = { B * S };
        QR_TRY(qr_tensor_set_shape(out, QR_DT_S64, 1, dims));
        QR_TRY(qr_tensor_alloc_data(out));
        for (int64_t b = 0; b < B; b++)
            for (int64_t s = 0; s < S; s++)
                qr_tensor_set_i64(out, b * S + s, s + 1 < S ? qr_tensor_get_i64(id, b * S + s + 1) : -1);
        *have = true;
        return QR_OK;
    }
    return QR_OK;
}

static const char *qr_tok_where(const QrTokWorst *w, char *buf, size_t n) {
    snprintf(buf, n, "b%lld:t%lld", (long long)w->batch, (long long)w->pos);
    return buf;
}

static int qr_tok_cells(QrTable *t, int row, int col, const QrTokAcc *a, const char *const *names, bool with_top, bool csv) {
    QrTokStats s;
    qr_tok_stats(a, &s);
    qr_table_setf(t, row, col++, "%lld", (long long)s.tokens);
    if (with_top) {
        qr_compare_num(t, row, col++, s.top1_agree, csv);
        qr_compare_num(t, row, col++, s.top5_overlap, csv);
    }
    double tv[] = { s.kld_mean, s.kld_p90, s.kld_p99, s.kld_max, s.dp_rms };
    for (int q = 0; q < QR_ARRAY_LEN(tv); q++) qr_compare_num(t, row, col++, tv[q], csv);
    qr_table_setf(t, row, col++, "%lld", (long long)s.nll_tokens);
    if (s.nll_tokens) {
        qr_compare_num(t, row, col, s.nll_base, csv);
        qr_compare_num(t, row, col + 1, s.nll_analysis, csv);
        qr_compare_num(t, row, col + 2, s.ln_ppl_ratio, csv);
    }
    col += 3;
    char list[1024] = "";
    size_t ll = 0;
    for (int k = 0; k < a->n_worst && ll < sizeof list; k++) {
        char wb[64];
        const QrTokWorst *w = &a->worst[k];
        ll += (size_t)snprintf(list + ll, sizeof list - ll, "%s%s%s%s %.6g (%lld/%lld)", k ? ";" : "", names ? names[w->sample] : "",
                               names ? ":" : "", qr_tok_where(w, wb, sizeof wb), w->kld, (long long)w->base_top1,
                               (long long)w->ana_top1);
    }
    qr_table_set(t, row, col, ll ? list : "-");
    return col + 1;
}

static QrStatus qr_tok_table(const QrGraph *b, const QrMetrics *m, const QrTokAcc *const *acc, bool csv, QrTable *t) {
    static const char *const cols[] = { "output", "shape", "Cosine", "MSE", "L1", "KL", "SQNR", "Atol", "Rtol", "nonfinite",
                                        "tokens", "top1_agree", "top5_overlap", "kld_mean", "kld_p90", "kld_p99", "kld_max",
                                        "dp_rms", "nll_tokens", "nll_base", "nll_analysis", "ln_ppl_ratio", "worst_tokens" };
    QR_TRY(qr_table_init(t, QR_ARRAY_LEN(cols), cols));
    for (int j = 0; j < b->n_outputs; j++) {
        const QrValue *v = &b->values[b->outputs[j]];
        int row;
        char shape[128];
        QR_TRY(qr_table_add_row(t, &row));
        qr_table_set(t, row, 0, v->name);
        qr_table_set(t, row, 1, qr_shape_str_brackets(shape, sizeof shape, v->t.rank, v->t.dims));
        double mv[] = { m[j].cosine, m[j].mse, m[j].l1, m[j].kl, m[j].sqnr, m[j].atol, m[j].rtol };
        for (int q = 0; q < QR_ARRAY_LEN(mv); q++) qr_compare_num(t, row, 2 + q, mv[q], csv);
        qr_table_setf(t, row, 9, "%lld", (long long)m[j].n_nonfinite);
        if (acc[j]) qr_tok_cells(t, row, 10, acc[j], NULL, true, csv);
    }
    return QR_OK;
}

static QrStatus qr_tok_write_outputs(const QrGraph *b, const QrMetrics *m, const QrTokAcc *const *acc, const char *dir) {
    QrTable tt = {0}, tc = {0};
    QrStatus st = qr_tok_table(b, m, acc, false, &tt);
    if (st == QR_OK) st = qr_tok_table(b, m, acc, true, &tc);
    if (st == QR_OK)
        st = qr_weights_write_tables(&tt, &tc, "Model outputs: the metrics of each graph output; for logits outputs "
                                     "([batch, sequence, vocab]) the per-token columns (docs/REPORT.md).\n",
                                     "tokens: positions scored; kld_*: KL(baseline || analysis) of the softmax over the "
                                     "vocabulary per token (natural log); top1_agree: share of tokens whose arg-max agrees; "
                                     "top5_overlap: mean share of the two top-5 sets; dp_rms: RMS change of the probability of "
                                     "the baseline's top token; nll_*: mean -ln p(label) of each model over nll_tokens labelled "
                                     "tokens, ln_ppl_ratio = ln(PPL_analysis / PPL_baseline); worst_tokens: b<batch>:t<position> "
                                     "KL (baseline top-1 / analysis top-1), worst first.\n",
                                     dir, QR_BF_DS_OUTPUTS);
    qr_table_free(&tt);
    qr_table_free(&tc);
    return st;
}

static bool qr_tok_any(const QrGraph *b) {
    for (int j = 0; j < b->n_outputs; j++)
        if (qr_tok_is_logits(b->values[b->outputs[j]].name, &b->values[b->outputs[j]].t)) return true;
    return false;
}

static QrStatus qr_tok_session(const QrSession *s, const QrTensor *outs, const char *labels, int sample, QrTokAcc *acc) {
    for (int j = 0; j < s->b->n_outputs; j++) {
        const QrValue *v = &s->b->values[s->b->outputs[j]];
        const QrTensor *x = &s->base_out[j];
        if (!qr_tok_is_logits(v->name, x)) continue;
        QrTensor y = {0}, lab = {0};
        bool have = false;
        QrStatus st = qr_tensor_to_f32(&outs[j], &y);
        if (st == QR_OK && y.numel != x->numel)
            st = qr_errf(QR_ERR_SHAPE, "output '%s' has %lld elements in the analysis model but %lld in the baseline",
                         v->name, (long long)y.numel, (long long)x->numel);
        if (st == QR_OK) st = qr_tok_labels(s->b, s->inputs, labels, x, &lab, &have);
        if (st == QR_OK) st = qr_tok_add(&acc[j], x, &y, have ? &lab : NULL, sample);
        qr_tensor_free_data(&y);
        qr_tensor_free_data(&lab);
        if (st != QR_OK) return qr_err_wrap(st, "output '%s'", v->name);
    }
    return QR_OK;
}

static QrStatus qr_tok_session_metrics(const QrSession *s, const QrTensor *outs, QrMetrics *m) {
    for (int j = 0; j < s->b->n_outputs; j++) QR_TRY(qr_session_compare_outputs_sel(s, outs, j, &m[j]));
    return QR_OK;
}

static QrStatus qr_tok_write_session(const QrGraph *b, const QrMetrics *m, const QrTokAcc *acc, const char *dir) {
    const QrTokAcc **pa = calloc((size_t)b->n_outputs + 1, sizeof *pa);
    if (!pa) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int j = 0; j < b->n_outputs; j++) pa[j] = acc[j].vocab ? &acc[j] : NULL;
    QrStatus st = qr_tok_write_outputs(b, m, pa, dir);
    free(pa);
    return st;
}

static QrStatus qr_tok_session_write(const QrSession *s, const QrTensor *outs, const QrTokAcc *acc, const char *dir) {
    QrMetrics *m = calloc((size_t)s->b->n_outputs + 1, sizeof *m);
    QrStatus st = m ? qr_tok_session_metrics(s, outs, m) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_tok_write_session(s->b, m, acc, dir);
    free(m);
    return st;
}

static void qr_tok_json(QrJson *j, const QrGraph *b, const QrTokAcc *acc) {
    qr_json_arr_begin(j);
    for (int o = 0; o < b->n_outputs; o++) {
        if (!acc[o].vocab) continue;
        QrTokStats s;
        qr_tok_stats(&acc[o], &s);
        qr_json_obj_begin(j);
        qr_json_kv_str(j, "output", b->values[b->outputs[o]].name);
        qr_json_kv_int(j, "tokens", s.tokens);
        qr_json_kv_int(j, "nonfinite_tokens", s.nonfinite);
        qr_json_kv_num(j, "top1_agree", s.top1_agree);
        qr_json_kv_num(j, "top5_overlap", s.top5_overlap);
        qr_json_kv_num(j, "kld_mean", s.kld_mean);
        qr_json_kv_num(j, "kld_p90", s.kld_p90);
        qr_json_kv_num(j, "kld_p99", s.kld_p99);
        qr_json_kv_num(j, "kld_max", s.kld_max);
        qr_json_kv_num(j, "dp_rms", s.dp_rms);
        qr_json_kv_int(j, "nll_tokens", s.nll_tokens);
        if (s.nll_tokens) {
            qr_json_kv_num(j, "nll_base", s.nll_base);
            qr_json_kv_num(j, "nll_analysis", s.nll_analysis);
            qr_json_kv_num(j, "ln_ppl_ratio", s.ln_ppl_ratio);
        } else {
            qr_json_kv_null(j, "nll_base");
            qr_json_kv_null(j, "nll_analysis");
            qr_json_kv_null(j, "ln_ppl_ratio");
        }
        qr_json_key(j, "worst_tokens");
        qr_json_arr_begin(j);
        for (int k = 0; k < acc[o].n_worst; k++) {
            const QrTokWorst *w = &acc[o].worst[k];
            qr_json_obj_begin_compact(j);
            qr_json_kv_int(j, "sample", w->sample);
            qr_json_kv_int(j, "batch", w->batch);
            qr_json_kv_int(j, "position", w->pos);
            qr_json_kv_num(j, "kld", w->kld);
            qr_json_kv_int(j, "baseline_top1", w->base_top1);
            qr_json_kv_int(j, "analysis_top1", w->ana_top1);
            qr_json_obj_end(j);
        }
        qr_json_arr_end(j);
        qr_json_obj_end(j);
    }
    qr_json_arr_end(j);
}
