/* analysis/generate — greedy decoding with both models (generate.h). */

/* One model being decoded: its current inputs, where the token, mask and cache go. */
typedef struct QrGenModel {
    QrGraph *g;
    QrTensor *in;                /* [n_inputs] owned */
    QrTensor *out;               /* [n_outputs] the last step's outputs */
    int ids, mask, logits;       /* input_ids, attention_mask (-1 none) inputs; the logits output */
    int *present_of;             /* per input: the output fed back into it (past_key_values.X <- present.X), -1 */
    bool cached;
} QrGenModel;

static void qr__gen_model_free(QrGenModel *m) {
    for (int i = 0; m->in && i < m->g->n_inputs; i++) qr_tensor_free_data(&m->in[i]);
    for (int j = 0; m->out && j < m->g->n_outputs; j++) qr_tensor_free_data(&m->out[j]);
    free(m->in);
    free(m->out);
    free(m->present_of);
    memset(m, 0, sizeof *m);
}

static QrStatus qr__gen_model_open(QrGraph *g, const QrTensor *prompt, QrGenModel *m) {
    memset(m, 0, sizeof *m);
    m->g = g;
    m->ids = m->mask = m->logits = -1;
    m->in = calloc((size_t)g->n_inputs + 1, sizeof *m->in);
    m->out = calloc((size_t)g->n_outputs + 1, sizeof *m->out);
    m->present_of = calloc((size_t)g->n_inputs + 1, sizeof *m->present_of);
    if (!m->in || !m->out || !m->present_of) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int j = 0; j < g->n_outputs; j++)
        if (m->logits < 0 && qr_metric_is_logits(g->values[g->outputs[j]].name, &g->values[g->outputs[j]].t)) m->logits = j;
    if (m->logits < 0) return qr_errf(QR_ERR_INVALID, "%s: --generate needs a logits output ([batch, sequence, vocab])", g->path);
    for (int i = 0; i < g->n_inputs; i++) {
        const char *name = g->values[g->inputs[i]].name;
        m->present_of[i] = -1;
        QR_TRY(qr_tensor_set_shape(&m->in[i], prompt[i].dtype, prompt[i].rank, prompt[i].dims));
        QR_TRY(qr_tensor_alloc_data(&m->in[i]));
        if (prompt[i].numel) memcpy(m->in[i].data, prompt[i].data, qr_tensor_nbytes(&prompt[i]));
        if (!strcmp(name, "input_ids")) { m->ids = i; continue; }
        if (!strcmp(name, "attention_mask")) { m->mask = i; continue; }
        if (!strncmp(name, "past_key_values.", 16)) {
            char want[512];
            snprintf(want, sizeof want, "present.%s", name + 16);
            for (int j = 0; j < g->n_outputs; j++) if (!strcmp(g->values[g->outputs[j]].name, want)) m->present_of[i] = j;
            if (m->present_of[i] >= 0) { m->cached = true; continue; }
        }
        return qr_errf(QR_ERR_INVALID, "%s: --generate cannot extend input '%s' (it knows input_ids, attention_mask and "
                       "past_key_values.* fed from present.*)", g->path, name);
    }
    if (m->ids < 0) return qr_errf(QR_ERR_INVALID, "%s: --generate needs an input named input_ids", g->path);
    const QrTensor *ids = &m->in[m->ids];
    if (ids->rank != 2 || ids->dims[0] != 1 || qr_dtype_is_float(ids->dtype))
        return qr_errf(QR_ERR_INVALID, "%s: --generate needs input_ids of shape [1, sequence] (integer), got rank %d", g->path,
                       ids->rank);
    return QR_OK;
}

/* Appends k (a [1, n] tensor gets [1, n + 1]; value v at the end). */
static QrStatus qr__gen_append(QrTensor *t, int64_t v) {
    QrTensor n = {0};
    int64_t dims[2] = { 1, t->dims[1] + 1 };
    QR_TRY(qr_tensor_set_shape(&n, t->dtype, 2, dims));
    QR_TRY(qr_tensor_alloc_data(&n));
    for (int64_t e = 0; e < t->numel; e++) qr_tensor_set_i64(&n, e, qr_tensor_get_i64(t, e));
    qr_tensor_set_i64(&n, t->numel, v);
    qr_tensor_free_data(t);
    *t = n;
    return QR_OK;
}

/* Runs the current inputs; row (V floats, caller's) gets the last position's logits. */
static QrStatus qr__gen_forward(QrGenModel *m, float *row, int64_t V) {
    for (int j = 0; j < m->g->n_outputs; j++) qr_tensor_free_data(&m->out[j]);
    QR_TRY(qr_run_infer(m->g, m->in));
    QR_TRY(qr_run(m->g, m->in, NULL, m->out));
    QrTensor f = {0};
    QR_TRY(qr_tensor_to_f32(&m->out[m->logits], &f));
    QrStatus st = f.rank >= 2 && f.dims[f.rank - 1] == V && f.numel >= V ? QR_OK
                : qr_errf(QR_ERR_SHAPE, "%s: logits output changed its vocabulary during --generate", m->g->path);
    if (st == QR_OK) memcpy(row, (const float *)f.data + f.numel - V, (size_t)V * sizeof *row);
    qr_tensor_free_data(&f);
    return st;
}

/* The next inputs after token tok: the cache fed back and one token, or the whole sequence again. */
static QrStatus qr__gen_advance(QrGenModel *m, int64_t tok) {
    if (m->mask >= 0) QR_TRY(qr__gen_append(&m->in[m->mask], 1));
    if (!m->cached) return qr__gen_append(&m->in[m->ids], tok);
    QrTensor *ids = &m->in[m->ids];
    QrDType dt = ids->dtype;
    qr_tensor_free_data(ids);
    int64_t one[2] = { 1, 1 };
    QR_TRY(qr_tensor_set_shape(ids, dt, 2, one));
    QR_TRY(qr_tensor_alloc_data(ids));
    qr_tensor_set_i64(ids, 0, tok);
    for (int i = 0; i < m->g->n_inputs; i++) {
        int j = m->present_of[i];
        if (j < 0) continue;
        qr_tensor_free_data(&m->in[i]);
        m->in[i] = m->out[j];               /* moved: the input owns the present's buffer now */
        memset(&m->out[j], 0, sizeof m->out[j]);
    }
    return QR_OK;
}

static int64_t qr__gen_argmax(const float *v, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; i++) if (v[i] > v[best]) best = i;
    return best;
}

static double qr__gen_prob(const float *v, int64_t n, int64_t k) {
    double mx = v[qr__gen_argmax(v, n)], s = 0;
    for (int64_t i = 0; i < n; i++) s += exp((double)v[i] - mx);
    return exp((double)v[k] - mx) / s;
}

static QrStatus qr_gen_run(QrGraph *b, QrGraph *a, const QrTensor *prompt, int n, QrGenResult *r) {
    memset(r, 0, sizeof *r);
    r->first_divergence = -1;
    if (n <= 0) return qr_errf(QR_ERR_INVALID, "--generate needs N >= 1");
    if (a->n_inputs != b->n_inputs) return qr_errf(QR_ERR_INVALID, "--generate: the models have different inputs");
    QrGenModel mb, mf, mg;       /* baseline greedy; analysis fed the baseline's tokens; analysis greedy */
    memset(&mf, 0, sizeof mf);
    memset(&mg, 0, sizeof mg);
    QrStatus st = qr__gen_model_open(b, prompt, &mb);
    if (st == QR_OK) st = qr__gen_model_open(a, prompt, &mf);
    if (st == QR_OK) st = qr__gen_model_open(a, prompt, &mg);
    const QrValue *lv = &b->values[b->outputs[mb.logits >= 0 ? mb.logits : 0]];
    int64_t V = lv->t.rank >= 1 ? lv->t.dims[lv->t.rank - 1] : 0;
    float *xb = st == QR_OK ? calloc((size_t)V + 1, sizeof *xb) : NULL, *xf = xb ? calloc((size_t)V + 1, sizeof *xf) : NULL,
          *xg = xf ? calloc((size_t)V + 1, sizeof *xg) : NULL;
    r->base_tok = calloc((size_t)n, sizeof *r->base_tok);
    r->ana_tok = calloc((size_t)n, sizeof *r->ana_tok);
    r->kld = calloc((size_t)n, sizeof *r->kld);
    r->agree = calloc((size_t)n, 1);
    r->p_base = calloc((size_t)n, sizeof *r->p_base);
    r->p_ana = calloc((size_t)n, sizeof *r->p_ana);
    if (st == QR_OK && (!xg || !r->base_tok || !r->ana_tok || !r->kld || !r->agree || !r->p_base || !r->p_ana))
        st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        r->cached = mb.cached;
        snprintf(r->logits, sizeof r->logits, "%s", lv->name);
    }
    for (int t = 0; st == QR_OK && t < n; t++) {
        st = qr__gen_forward(&mb, xb, V);
        if (st == QR_OK) st = qr__gen_forward(&mf, xf, V);
        if (st == QR_OK) st = qr__gen_forward(&mg, xg, V);
        if (st != QR_OK) { st = qr_err_wrap(st, "--generate step %d", t); break; }
        int64_t tb = qr__gen_argmax(xb, V), tf = qr__gen_argmax(xf, V), tg = qr__gen_argmax(xg, V);
        r->base_tok[t] = tb;
        r->ana_tok[t] = tg;
        r->kld[t] = qr_metric_token_kl(xb, xf, V);
        r->agree[t] = tf == tb;
        r->p_base[t] = qr__gen_prob(xb, V, tb);
        r->p_ana[t] = qr__gen_prob(xf, V, tb);
        if (r->first_divergence < 0 && tg != tb) r->first_divergence = t;
        r->n = t + 1;
        if (t + 1 < n) {
            st = qr__gen_advance(&mb, tb);
            if (st == QR_OK) st = qr__gen_advance(&mf, tb);
            if (st == QR_OK) st = qr__gen_advance(&mg, tg);
        }
    }
    free(xb);
    free(xf);
    free(xg);
    qr__gen_model_free(&mb);
    qr__gen_model_free(&mf);
    qr__gen_model_free(&mg);
    /* the graphs go back to the prompt's shapes for whatever runs next */
    if (st == QR_OK) st = qr_run_infer(b, prompt);
    if (st == QR_OK) st = qr_run_infer(a, prompt);
    if (st != QR_OK) qr_gen_free(r);
    return st;
}

static void qr_gen_free(QrGenResult *r) {
    free(r->base_tok);
    free(r->ana_tok);
    free(r->kld);
    free(r->agree);
    free(r->p_base);
    free(r->p_ana);
    memset(r, 0, sizeof *r);
    r->first_divergence = -1;
}

static QrStatus qr__gen_table(const QrGenResult *r, bool csv, QrTable *t) {
    static const char *const cols[] = { "step", "baseline_token", "analysis_token", "diverged", "kld", "top1_agree",
                                        "p_baseline", "p_analysis" };
    QR_TRY(qr_table_init(t, QR_ARRAY_LEN(cols), cols));
    for (int k = 0; k < r->n; k++) {
        int row;
        QR_TRY(qr_table_add_row(t, &row));
        qr_table_setf(t, row, 0, "%d", k);
        qr_table_setf(t, row, 1, "%lld", (long long)r->base_tok[k]);
        qr_table_setf(t, row, 2, "%lld", (long long)r->ana_tok[k]);
        qr_table_set(t, row, 3, r->first_divergence >= 0 && k >= r->first_divergence ? "yes" : "no");
        qr_compare_num(t, row, 4, r->kld[k], csv);
        qr_table_setf(t, row, 5, "%d", r->agree[k]);
        qr_compare_num(t, row, 6, r->p_base[k], csv);
        qr_compare_num(t, row, 7, r->p_ana[k], csv);
    }
    return QR_OK;
}

static QrStatus qr_gen_write(const QrGenResult *r, const char *dir) {
    QrTable tt = {0}, tc = {0};
    char head[1024];
    if (r->first_divergence >= 0)
        snprintf(head, sizeof head, "Greedy generation of %d tokens from the prompt (%s, %s): the models diverge at generated "
                 "token %d.\n", r->n, r->logits, r->cached ? "past_key_values fed from present" : "full re-runs",
                 r->first_divergence);
    else
        snprintf(head, sizeof head, "Greedy generation of %d tokens from the prompt (%s, %s): the same tokens.\n", r->n,
                 r->logits, r->cached ? "past_key_values fed from present" : "full re-runs");
    QrStatus st = qr__gen_table(r, false, &tt);
    if (st == QR_OK) st = qr__gen_table(r, true, &tc);
    if (st == QR_OK)
        st = qr_weights_write_tables(&tt, &tc, head,
                                     "baseline_token / analysis_token: each model's greedy token on its own context; "
                                     "kld, top1_agree, p_*: the analysis model fed the baseline's tokens (the same context): "
                                     "KL(baseline || analysis) of the next-token distribution (natural log), whether its "
                                     "arg-max is the baseline's token, and that token's probability under each model.\n",
                                     dir, QR_BF_GENERATION);
    qr_table_free(&tt);
    qr_table_free(&tc);
    return st;
}

static void qr_gen_json(QrJson *j, const QrGenResult *r) {
    qr_json_obj_begin(j);
    qr_json_kv_int(j, "steps", r->n);
    qr_json_kv_str(j, "logits", r->logits);
    qr_json_kv_bool(j, "cached", r->cached);
    qr_json_key(j, "baseline_tokens");
    qr_json_arr_begin_compact(j);
    for (int k = 0; k < r->n; k++) qr_json_int(j, r->base_tok[k]);
    qr_json_arr_end(j);
    qr_json_key(j, "analysis_tokens");
    qr_json_arr_begin_compact(j);
    for (int k = 0; k < r->n; k++) qr_json_int(j, r->ana_tok[k]);
    qr_json_arr_end(j);
    if (r->first_divergence >= 0) qr_json_kv_int(j, "first_divergence", r->first_divergence);
    else qr_json_kv_null(j, "first_divergence");
    qr_json_key(j, "kld");
    qr_json_arr_begin_compact(j);
    for (int k = 0; k < r->n; k++) qr_json_num(j, r->kld[k]);
    qr_json_arr_end(j);
    qr_json_key(j, "top1_agree");
    qr_json_arr_begin_compact(j);
    for (int k = 0; k < r->n; k++) qr_json_bool(j, r->agree[k]);
    qr_json_arr_end(j);
    qr_json_obj_end(j);
}
