/* analysis/generate — greedy decoding with both models (generate.h). */

/* One model being decoded: its current inputs, where the token, mask, positions and cache go. */
typedef struct QrGenModel {
    QrGraph *g;
    QrTensor *in;                /* [n_inputs] owned */
    QrTensor *out;               /* [n_outputs] the last step's outputs */
    int ids, mask, pos, logits;  /* input_ids, attention_mask, position_ids (-1 none) inputs; the logits output */
    int *present_of;             /* per input: the output fed back into it (past_key_values.X <- present.X), -1 */
    int n_kv;
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

static bool qr_gen_kv_map_ok(const char *arg) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1] || strchr(eq + 1, '=')) return false;
    int si = 0, so = 0;
    for (const char *c = arg; c < eq; c++) si += *c == '*';
    for (const char *c = eq + 1; *c; c++) so += *c == '*';
    return si == so && si <= 1;
}

/* The output name the cache input `name` is fed from under map "IN=OUT" (false: the map does not apply). */
static bool qr__gen_kv_apply(const char *map, const char *name, char *out, size_t n) {
    const char *eq = strchr(map, '='), *star = memchr(map, '*', (size_t)(eq - map));
    if (!star) {
        if (strlen(name) != (size_t)(eq - map) || strncmp(name, map, (size_t)(eq - map))) return false;
        snprintf(out, n, "%s", eq + 1);
        return true;
    }
    size_t pre = (size_t)(star - map), suf = (size_t)(eq - star - 1), len = strlen(name);
    if (len < pre + suf || strncmp(name, map, pre) || strncmp(name + len - suf, star + 1, suf)) return false;
    const char *ostar = strchr(eq + 1, '*');
    snprintf(out, n, "%.*s%.*s%s", (int)(ostar - eq - 1), eq + 1, (int)(len - pre - suf), name + pre, ostar + 1);
    return true;
}

static QrStatus qr__gen_model_open(QrGraph *g, const QrTensor *prompt, const QrGenOpts *o, QrGenModel *m) {
    static const char *const dflt = "past_key_values.*=present.*";
    memset(m, 0, sizeof *m);
    m->g = g;
    m->ids = m->mask = m->pos = m->logits = -1;
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
        if (!strcmp(name, "position_ids")) { m->pos = i; continue; }
        char want[512] = "";
        bool mapped = false;
        for (int k = 0; k <= o->n_kv_map && !mapped; k++)
            mapped = qr__gen_kv_apply(k < o->n_kv_map ? o->kv_map[k] : dflt, name, want, sizeof want);
        for (int j = 0; mapped && j < g->n_outputs; j++) if (!strcmp(g->values[g->outputs[j]].name, want)) m->present_of[i] = j;
        if (m->present_of[i] >= 0) { m->cached = true; m->n_kv++; continue; }
        if (mapped)
            return qr_errf(QR_ERR_INVALID, "%s: --generate: cache input '%s' is fed from output '%s', which the model does not "
                           "have (--kv-map IN=OUT names the output)", g->path, name, want);
        return qr_errf(QR_ERR_INVALID, "%s: --generate cannot extend input '%s' (it knows input_ids, attention_mask, "
                       "position_ids and cache inputs fed from outputs: past_key_values.* from present.*, others with "
                       "--kv-map IN=OUT, e.g. --kv-map 'past.*=present_out.*')", g->path, name);
    }
    if (m->ids < 0) return qr_errf(QR_ERR_INVALID, "%s: --generate needs an input named input_ids", g->path);
    const QrTensor *ids = &m->in[m->ids];
    if (ids->rank != 2 || qr_dtype_is_float(ids->dtype))
        return qr_errf(QR_ERR_INVALID, "%s: --generate needs input_ids of shape [1, sequence] (integer), got rank %d", g->path,
                       ids->rank);
    if (ids->dims[0] != 1)
        return qr_errf(QR_ERR_INVALID, "%s: --generate needs input_ids of shape [1, sequence]: it decodes one sequence, and "
                       "input_ids has batch %lld (give one row of the prompt; every input with batch 1)", g->path,
                       (long long)ids->dims[0]);
    if (m->pos >= 0 && (m->in[m->pos].rank != 2 || m->in[m->pos].dims[0] != 1 || qr_dtype_is_float(m->in[m->pos].dtype)))
        return qr_errf(QR_ERR_INVALID, "%s: --generate needs position_ids of shape [1, sequence] (integer)", g->path);
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

/* The next position: one after the last of position_ids. */
static int64_t qr__gen_next_pos(const QrTensor *p) {
    return p->numel ? qr_tensor_get_i64(p, p->numel - 1) + 1 : 0;
}

/* Replaces a [1, n] tensor by [1, 1] holding v. */
static QrStatus qr__gen_one(QrTensor *t, int64_t v) {
    QrDType dt = t->dtype;
    qr_tensor_free_data(t);
    int64_t one[2] = { 1, 1 };
    QR_TRY(qr_tensor_set_shape(t, dt, 2, one));
    QR_TRY(qr_tensor_alloc_data(t));
    qr_tensor_set_i64(t, 0, v);
    return QR_OK;
}

/* The next inputs after token tok: the cache fed back and one token, or the whole sequence again. */
static QrStatus qr__gen_advance(QrGenModel *m, int64_t tok) {
    if (m->mask >= 0) QR_TRY(qr__gen_append(&m->in[m->mask], 1));
    int64_t np = m->pos >= 0 ? qr__gen_next_pos(&m->in[m->pos]) : 0;
    if (!m->cached) {
        if (m->pos >= 0) QR_TRY(qr__gen_append(&m->in[m->pos], np));
        return qr__gen_append(&m->in[m->ids], tok);
    }
    QR_TRY(qr__gen_one(&m->in[m->ids], tok));
    if (m->pos >= 0) QR_TRY(qr__gen_one(&m->in[m->pos], np));
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

static QrStatus qr__gen_divergence(QrGraph *b, QrGraph *a, const QrTensor *prompt, const QrGenOpts *o, QrGenResult *r);

static QrStatus qr_gen_run(QrGraph *b, QrGraph *a, const QrTensor *prompt, const QrGenOpts *o, QrGenResult *r) {
    int n = o->n;
    memset(r, 0, sizeof *r);
    r->first_divergence = -1;
    if (n <= 0) return qr_errf(QR_ERR_INVALID, "--generate needs N >= 1");
    if (a->n_inputs != b->n_inputs) return qr_errf(QR_ERR_INVALID, "--generate: the models have different inputs");
    QrGenModel mb, mf, mg;       /* baseline greedy; analysis fed the baseline's tokens; analysis greedy */
    memset(&mf, 0, sizeof mf);
    memset(&mg, 0, sizeof mg);
    QrStatus st = qr__gen_model_open(b, prompt, o, &mb);
    if (st == QR_OK) st = qr__gen_model_open(a, prompt, o, &mf);
    if (st == QR_OK) st = qr__gen_model_open(a, prompt, o, &mg);
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
        r->n_kv = mb.n_kv;
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
    if (st == QR_OK && o->dir && r->first_divergence >= 0 && qr__gen_divergence(b, a, prompt, o, r) != QR_OK) {
        /* the generation stands without it: generation.txt says why it is missing */
        snprintf(r->div_err, sizeof r->div_err, "%.511s", qr_err_msg());   /* a display line: its first 511 bytes */
        qr_err_clear();
    }
    /* the graphs go back to the prompt's shapes for whatever runs next */
    QrStatus sb = qr_run_infer(b, prompt), sa = sb == QR_OK ? qr_run_infer(a, prompt) : sb;
    if (st == QR_OK) st = sa;
    if (st != QR_OK) qr_gen_free(r);
    return st;
}

/* The baseline's context at step t as one input set: prompt's input_ids + the first t baseline tokens,
 * attention_mask + t ones, position_ids + the next t positions, the rest (the prompt's past) as given. */
static QrStatus qr__gen_prefix(const QrGraph *g, const QrTensor *prompt, const int64_t *tok, int t, QrTensor *pre) {
    for (int i = 0; i < g->n_inputs; i++) {
        const char *name = g->values[g->inputs[i]].name;
        QR_TRY(qr_tensor_set_shape(&pre[i], prompt[i].dtype, prompt[i].rank, prompt[i].dims));
        QR_TRY(qr_tensor_alloc_data(&pre[i]));
        if (prompt[i].numel) memcpy(pre[i].data, prompt[i].data, qr_tensor_nbytes(&prompt[i]));
        for (int k = 0; k < t; k++) {
            if (!strcmp(name, "input_ids")) QR_TRY(qr__gen_append(&pre[i], tok[k]));
            else if (!strcmp(name, "attention_mask")) QR_TRY(qr__gen_append(&pre[i], 1));
            else if (!strcmp(name, "position_ids")) QR_TRY(qr__gen_append(&pre[i], qr__gen_next_pos(&pre[i])));
        }
    }
    return QR_OK;
}

/* Both models on the baseline's context at the first divergent step: the per-layer table and the
 * prefix's inputs into o->dir/QR_BF_GEN_DIV/. */
static QrStatus qr__gen_divergence(QrGraph *b, QrGraph *a, const QrTensor *prompt, const QrGenOpts *o, QrGenResult *r) {
    int t = r->first_divergence, ni = b->n_inputs;
    QrTensor *pre = calloc((size_t)ni + 1, sizeof *pre);
    QrArena ar = {0};
    const char *dir = qr_arena_printf(&ar, "%s/" QR_BF_GEN_DIV, o->dir);
    QrStatus st = pre && dir ? qr__gen_prefix(b, prompt, r->base_tok, t, pre) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_mkdir_p(dir);
    for (int i = 0; st == QR_OK && i < ni; i++) {
        char safe[256];
        qr_zip_safe_component(safe, sizeof safe, b->values[b->inputs[i]].name);
        st = qr_npy_write(qr_arena_printf(&ar, "%s/%s.npy", dir, safe), &pre[i]);
    }
    if (st == QR_OK) st = qr_run_infer(b, pre);
    if (st == QR_OK) st = qr_run_infer(a, pre);
    QrSession se;
    QrCompare c = {0};
    bool open = false;
    if (st == QR_OK) { st = qr_session_open(&se, b, a, pre); open = st == QR_OK; }
    if (st == QR_OK) st = qr_compare_mode(&se, o->mode, o->cos_threshold, &c);
    if (st == QR_OK) st = qr_compare_write(&se, &c, dir);
    if (st == QR_OK) {
        r->have_div = true;
        r->div_prefix = 0;
        for (int i = 0; i < ni; i++) if (!strcmp(b->values[b->inputs[i]].name, "input_ids")) r->div_prefix = pre[i].dims[1];
        r->div_rows = c.n;
        r->div_out = c.out;
        r->div_worst_cos = NAN;
        for (int k = 0; k < c.n; k++) {
            double cs = c.rows[k].m.cosine;
            if (isfinite(cs) && !(cs >= r->div_worst_cos)) {
                r->div_worst_cos = cs;
                snprintf(r->div_worst, sizeof r->div_worst, "%s", b->nodes[se.m.m[c.rows[k].match].b_node].name);
            }
        }
        if (c.first_drop >= 0)
            snprintf(r->div_first_drop, sizeof r->div_first_drop, "%s", b->nodes[se.m.m[c.rows[c.first_drop].match].b_node].name);
    }
    qr_compare_free(&c);
    if (open) qr_session_close(&se);
    for (int i = 0; pre && i < ni; i++) qr_tensor_free_data(&pre[i]);
    free(pre);
    qr_arena_free(&ar);
    return st == QR_OK ? QR_OK : qr_err_wrap(st, "--generate: the per-layer comparison at step %d", t);
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
    char head[2048];
    const char *how = r->cached ? "past_key_values fed from present" : "full re-runs";
    size_t hn;
    if (r->first_divergence >= 0)
        hn = (size_t)snprintf(head, sizeof head, "Greedy generation of %d tokens from the prompt (%s, %s): the models diverge "
                              "at generated token %d.\n", r->n, r->logits, how, r->first_divergence);
    else
        hn = (size_t)snprintf(head, sizeof head, "Greedy generation of %d tokens from the prompt (%s, %s): the same tokens.\n",
                              r->n, r->logits, how);
    if (r->have_div && hn < sizeof head)
        hn += (size_t)snprintf(head + hn, sizeof head - hn,
                               "Per-layer comparison at that step: " QR_BF_GEN_DIV "/" QR_BF_COMPARE ".txt/.csv — both models "
                               "run on the baseline's context there (the prompt and its first %d tokens: %lld tokens, inputs "
                               "in " QR_BF_GEN_DIV "/<input>.npy): %d layers, output Cosine %.6f, lowest layer Cosine %.6f "
                               "(%s)%s%s.\n", r->first_divergence, (long long)r->div_prefix, r->div_rows, r->div_out.cosine,
                               r->div_worst_cos, r->div_worst, r->div_first_drop[0] ? ", first layer below the threshold: " : "",
                               r->div_first_drop);
    else if (r->div_err[0] && hn < sizeof head)
        snprintf(head + hn, sizeof head - hn, "No per-layer comparison at that step: %s\n", r->div_err);
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
    qr_json_key(j, "divergence");
    if (!r->have_div) qr_json_null(j);
    else {
        qr_json_obj_begin(j);
        qr_json_kv_int(j, "step", r->first_divergence);
        qr_json_kv_int(j, "prefix_tokens", r->div_prefix);
        qr_json_kv_str(j, "table", QR_BF_GEN_DIV "/" QR_BF_COMPARE ".csv");
        qr_json_kv_int(j, "layers", r->div_rows);
        qr_json_kv_num(j, "output_cosine", r->div_out.cosine);
        qr_json_kv_str(j, "lowest_layer", r->div_worst);
        qr_json_kv_num(j, "lowest_layer_cosine", r->div_worst_cos);
        if (r->div_first_drop[0]) qr_json_kv_str(j, "first_drop", r->div_first_drop);
        else qr_json_kv_null(j, "first_drop");
        qr_json_obj_end(j);
    }
    qr_json_obj_end(j);
}
