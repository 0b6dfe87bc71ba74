/* analysis/values — implementation. See values.h. */

static QrStatus qr_values_keep(QrSession *s) {
    qr_values_keep_free(s);
    s->keep_vals = calloc(2 * (size_t)s->m.n + 1, sizeof(QrTensor));
    s->keep_outs = calloc((size_t)s->b->n_outputs + 1, sizeof(QrTensor));
    if (!s->keep_vals || !s->keep_outs) { qr_values_keep_free(s); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    return QR_OK;
}

static void qr_values_keep_free(QrSession *s) {
    for (int i = 0; s->keep_vals && i < 2 * s->m.n; i++) qr_tensor_free_data(&s->keep_vals[i]);
    for (int k = 0; s->keep_outs && k < s->b->n_outputs; k++) qr_tensor_free_data(&s->keep_outs[k]);
    free(s->keep_vals);
    free(s->keep_outs);
    s->keep_vals = s->keep_outs = NULL;
}

/* Tabs and newlines in names would break index.tsv: written as spaces. */
static QrStatus qr__vl_field(char **buf, size_t *l, size_t *c, const char *s) {
    for (const char *p = s ? s : ""; *p; p++) QR_TRY(qr_buf_printf(buf, l, c, "%c", *p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p));
    return QR_OK;
}

static QrStatus qr_values_save(const QrSession *s, const QrCompare *c, const char *dir) {
    if (!s->keep_vals || !s->keep_outs) return qr_errf(QR_ERR_INVALID, "--save-values: the comparison kept no values");
    QR_TRY(qr_mkdir_p(dir));
    QrArena a = {0};
    char *idx = NULL;
    size_t l = 0, cap = 0;
    QrStatus st = qr_buf_printf(&idx, &l, &cap, "kind\tindex\tname\tbaseline_file\tanalysis_file\tlocal_file\tbaseline_value\tanalysis_value\t"
                                  "verify\tequiv_rel\n");
    /* the pair verification of the saved run (it ran with the baseline; --from-values runs nothing) */
    if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "verification\t0\t%s\t\t\t\t\t\t\t\n", s->m.verified_run ? "ran" : "not_run");
    for (int k = 0; st == QR_OK && k < s->b->n_inputs; k++) {
        const char *f = qr_arena_printf(&a, "input_%d.npy", k);
        st = qr_npy_write(qr_arena_printf(&a, "%s/%s", dir, f), &s->inputs[k]);
        if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "input\t%d\t", k);
        if (st == QR_OK) st = qr__vl_field(&idx, &l, &cap, s->b->values[s->b->inputs[k]].name);
        if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "\t%s\t\t\t\t\t\t\n", f);
    }
    for (int k = 0; st == QR_OK && k < c->n; k++) {
        int i = c->rows[k].match;
        const QrMatch *m = &s->m.m[i];
        const QrTensor *t[3] = { &s->base[i], &s->keep_vals[2 * i], &s->keep_vals[2 * i + 1] };
        const char *pre[3] = { "base", "analysis", "local" }, *f[3] = { "", "", "" };
        for (int j = 0; st == QR_OK && j < 3; j++) {
            if (!t[j]->data) continue;
            f[j] = qr_arena_printf(&a, "%s_%d.npy", pre[j], k);
            st = qr_npy_write(qr_arena_printf(&a, "%s/%s", dir, f[j]), t[j]);
        }
        if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "layer\t%d\t", k);
        if (st == QR_OK) st = qr__vl_field(&idx, &l, &cap, s->b->nodes[m->b_node].name);
        if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "\t%s\t%s\t%s\t", f[0], f[1], f[2]);
        if (st == QR_OK) st = qr__vl_field(&idx, &l, &cap, s->b->values[m->b_value].name);
        if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "\t");
        if (st == QR_OK) st = qr__vl_field(&idx, &l, &cap, m->a_value >= 0 ? s->a->values[m->a_value].name : "");
        if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "\t%s\t%.17g\n", m->verify == QR_MV_VERIFIED ? "verified" :
                                             m->verify == QR_MV_UNVERIFIED ? "unverified" : "none", m->equiv_rel);
    }
    for (int k = 0; st == QR_OK && k < s->b->n_outputs; k++) {
        const char *fb = qr_arena_printf(&a, "out_base_%d.npy", k), *fa = qr_arena_printf(&a, "out_analysis_%d.npy", k);
        st = qr_npy_write(qr_arena_printf(&a, "%s/%s", dir, fb), &s->base_out[k]);
        if (st == QR_OK && !s->keep_outs[k].data) st = qr_errf(QR_ERR_INVALID, "--save-values: output %d was not kept", k);
        if (st == QR_OK) st = qr_npy_write(qr_arena_printf(&a, "%s/%s", dir, fa), &s->keep_outs[k]);
        if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "output\t%d\t", k);
        if (st == QR_OK) st = qr__vl_field(&idx, &l, &cap, s->b->values[s->b->outputs[k]].name);
        if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "\t%s\t%s\t\t\t\t\t\n", fb, fa);
    }
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/index.tsv", dir), idx, l);
    /* the error split's sums of the saved run (its part runs keep no values) */
    l = 0;
    if (st == QR_OK) st = qr_buf_printf(&idx, &l, &cap, "index\tparts\tn\tn_clip\tsw\tsi\ts_round\ts_clip\ts_noise\tsu2\tsteps_med\t"
                                         "w_channel\tw_share\tw_quant\ti_quant\n");
    for (int k = 0; st == QR_OK && k < c->n; k++) {
        const QrErrSplit *e = &c->rows[k].sp;
        if (!e->has) continue;
        st = qr_buf_printf(&idx, &l, &cap, "%d\t%d\t%lld\t%lld\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%d\t%.17g\t%d\t%d\n",
                           k, e->parts, (long long)e->n, (long long)e->n_clip, e->sw, e->si, e->s_round, e->s_clip, e->s_noise,
                           e->su2, e->steps_med, e->w_channel, e->w_channel_share, e->w_quant, e->i_quant);
    }
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&a, "%s/split.tsv", dir), idx, l);
    free(idx);
    qr_arena_free(&a);
    return st;
}

/* split.tsv of dir (absent in folders saved before the split existed: no split). */
static QrStatus qr__vl_split(const char *dir, QrCompare *c) {
    QrArena a = {0};
    unsigned char *buf = NULL;
    size_t len = 0;
    const char *path = qr_arena_printf(&a, "%s/split.tsv", dir);
    uint64_t sz;
    if (qr_file_size(path, &sz) != QR_OK) { qr_err_clear(); qr_arena_free(&a); return QR_OK; }
    QrStatus st = qr_file_read(path, 1 << 26, &buf, &len);
    char *txt = st == QR_OK ? realloc(buf, len + 1) : NULL;
    if (st == QR_OK && !txt) { free(buf); st = qr_errf(QR_ERR_NOMEM, "out of memory"); }
    if (txt) txt[len] = 0;
    for (char *line = txt ? strchr(txt, '\n') : NULL; st == QR_OK && line && line[1]; line = strchr(line + 1, '\n')) {
        int k, parts, wch, wq, iq;
        long long n, nc;
        QrErrSplit e = {0};
        if (sscanf(line + 1, "%d\t%d\t%lld\t%lld\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%lf\t%d\t%lf\t%d\t%d", &k, &parts, &n, &nc, &e.sw,
                   &e.si, &e.s_round, &e.s_clip, &e.s_noise, &e.su2, &e.steps_med, &wch, &e.w_channel_share, &wq, &iq) != 15 ||
            k < 0 || k >= c->n) {
            st = qr_errf(QR_ERR_INVALID, "--from-values %s: split.tsv has a malformed line", path);
            break;
        }
        e.has = true;
        e.parts = (uint8_t)parts;
        e.n = n;
        e.n_clip = nc;
        e.w_channel = wch;
        e.w_quant = wq;
        e.i_quant = iq;
        c->rows[k].sp = e;
    }
    free(txt);
    qr_arena_free(&a);
    return st;
}

/* index.tsv of dir, split into lines and fields (fields[line][0..7]; malloc'd text in *buf). */
typedef struct QrVlIndex { char *buf; int n; char *(*f)[10]; } QrVlIndex;

static void qr__vl_index_free(QrVlIndex *x) { free(x->buf); free(x->f); memset(x, 0, sizeof *x); }

static QrStatus qr__vl_index(const char *dir, QrVlIndex *x) {
    memset(x, 0, sizeof *x);
    char path[4200];
    snprintf(path, sizeof path, "%s/index.tsv", dir);
    unsigned char *b = NULL;
    size_t len = 0;
    QrStatus st = qr_file_read(path, 0, &b, &len);
    if (st != QR_OK) return qr_err_wrap(st, "--from-values %s: no index.tsv (written by compare --save-values)", dir);
    x->buf = realloc(b, len + 1);
    if (!x->buf) { free(b); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    x->buf[len] = 0;
    int lines = 0;
    for (size_t i = 0; i < len; i++) lines += x->buf[i] == '\n';
    x->f = calloc((size_t)lines + 1, sizeof *x->f);
    if (!x->f) { qr__vl_index_free(x); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    char *line = x->buf;
    bool header = true;
    while (line && *line) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (!header) {
            int k = 0;
            for (char *p = line; p && k < 10; k++) {
                x->f[x->n][k] = p;
                char *tab = strchr(p, '\t');
                if (tab) *tab = 0;
                p = tab ? tab + 1 : NULL;
            }
            if (k < 6) { qr__vl_index_free(x); return qr_errf(QR_ERR_INVALID, "%s: malformed line %d", path, x->n + 2); }
            for (; k < 10; k++) x->f[x->n][k] = "";
            x->n++;
        }
        header = false;
        line = nl ? nl + 1 : NULL;
    }
    return QR_OK;
}

static QrStatus qr_values_inputs(const char *dir, QrArena *a, const char **paths, int cap, int *n) {
    QrVlIndex x;
    QR_TRY(qr__vl_index(dir, &x));
    *n = 0;
    QrStatus st = QR_OK;
    for (int r = 0; r < x.n && st == QR_OK; r++) {
        if (strcmp(x.f[r][0], "input")) continue;
        if (atoi(x.f[r][1]) != *n || *n == cap) st = qr_errf(QR_ERR_INVALID, "--from-values %s: index.tsv: unexpected input line %d", dir, r + 2);
        else paths[(*n)++] = qr_arena_printf(a, "%s/%s", dir, x.f[r][3]);
    }
    if (st == QR_OK && !*n) st = qr_errf(QR_ERR_INVALID, "--from-values %s: index.tsv lists no input", dir);
    qr__vl_index_free(&x);
    return st;
}

/* Reads dir/file as float32 of n elements into t (empty file name: t stays empty). */
static QrStatus qr__vl_read(const char *dir, const char *file, int64_t n, QrTensor *t) {
    if (!*file) return QR_OK;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    QrTensor raw = {0};
    QR_TRY(qr_npy_read(path, &raw));
    QrStatus st = raw.dtype == QR_DT_F32 ? QR_OK : qr_errf(QR_ERR_INVALID, "%s: expected float32, found %s", path, qr_dtype_name(raw.dtype));
    if (st == QR_OK && n >= 0 && raw.numel != n)
        st = qr_errf(QR_ERR_SHAPE, "%s: %lld elements, expected %lld", path, (long long)raw.numel, (long long)n);
    if (st == QR_OK) *t = raw;
    else qr_tensor_free_data(&raw);
    return st;
}

static QrStatus qr_values_load_compare(QrSession *s, const char *dir, double cos_threshold, QrCompare *c) {
    memset(c, 0, sizeof *c);
    c->first_drop = -1;
    QrVlIndex x;
    QR_TRY(qr__vl_index(dir, &x));
    c->rows = calloc((size_t)s->m.n + 1, sizeof *c->rows);
    /* the saved baseline values stand for the session's baseline run (the advisor reads them) */
    bool fill = !s->base;
    if (fill) {
        s->base = calloc((size_t)s->m.n + 1, sizeof(QrTensor));
        s->base_out = calloc((size_t)s->b->n_outputs + 1, sizeof(QrTensor));
    }
    QrStatus st = c->rows && s->base && s->base_out ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < s->m.n; i++)
        if (s->m.m[i].a_node >= 0 && s->m.m[i].a_value >= 0) c->rows[c->n++].match = i;
    int layers = 0, outs = 0;
    s->m.n_verified = s->m.n_unverified = 0;
    QrMetricAcc acc;
    qr_metric_acc_init(&acc);
    for (int r = 0; st == QR_OK && r < x.n; r++) {
        char **f = x.f[r];
        int k = atoi(f[1]);
        if (!strcmp(f[0], "layer")) {
            if (k != layers || k >= c->n || strcmp(f[2], s->b->nodes[s->m.m[c->rows[k].match].b_node].name)) {
                st = qr_errf(QR_ERR_INVALID, "--from-values %s: layer %d is '%s' there but '%s' for these models (saved for "
                             "other models?)", dir, k, f[2], k < c->n ? s->b->nodes[s->m.m[c->rows[k].match].b_node].name : "-");
                break;
            }
            layers++;
            QrLayerRow *row = &c->rows[k];
            QrMatch *mm = &s->m.m[row->match];
            if (strcmp(f[7], mm->a_value >= 0 ? s->a->values[mm->a_value].name : "")) {
                st = qr_errf(QR_ERR_INVALID, "--from-values %s: layer %d ('%s') was paired with '%s' in the saved run, here with "
                             "'%s' (the saved run's verification moved the pair; compare the models directly)", dir, k, f[2],
                             f[7], mm->a_value >= 0 ? s->a->values[mm->a_value].name : "-");
                break;
            }
            /* the saved run's verification of the pair (headlines use verified pairs only) */
            mm->verify = !strcmp(f[8], "verified") ? QR_MV_VERIFIED : !strcmp(f[8], "unverified") ? QR_MV_UNVERIFIED : QR_MV_NONE;
            mm->equiv_rel = *f[9] ? strtod(f[9], NULL) : NAN;
            s->m.n_verified += mm->verify == QR_MV_VERIFIED;
            s->m.n_unverified += mm->verify == QR_MV_UNVERIFIED;
            QrTensor xb = {0}, ya = {0}, yl = {0};
            st = qr__vl_read(dir, f[3], -1, &xb);
            if (st == QR_OK) st = qr__vl_read(dir, f[4], xb.numel, &ya);
            if (st == QR_OK) st = qr__vl_read(dir, f[5], xb.numel, &yl);
            if (st == QR_OK && xb.data && ya.data) { qr_metrics_compute(xb.data, ya.data, xb.numel, &row->m); row->has_m = true; }
            if (st == QR_OK && xb.data && yl.data) { qr_metrics_compute_ex(xb.data, yl.data, xb.numel, false, &row->local); row->has_local = true; }
            if (st == QR_OK && fill) { s->base[row->match] = xb; memset(&xb, 0, sizeof xb); }
            qr_tensor_free_data(&xb);
            qr_tensor_free_data(&ya);
            qr_tensor_free_data(&yl);
        } else if (!strcmp(f[0], "verification")) {
            s->m.verified_run = !strcmp(f[2], "ran");
        } else if (!strcmp(f[0], "output")) {
            if (k != outs || k >= s->b->n_outputs) {
                st = qr_errf(QR_ERR_INVALID, "--from-values %s: output %d is not output %d of these models", dir, k, outs);
                break;
            }
            outs++;
            QrTensor xb = {0}, ya = {0};
            st = qr__vl_read(dir, f[3], -1, &xb);
            if (st == QR_OK) st = qr__vl_read(dir, f[4], xb.numel, &ya);
            if (st == QR_OK && (!xb.data || !ya.data)) st = qr_errf(QR_ERR_INVALID, "--from-values %s: output %d has no files", dir, k);
            if (st == QR_OK) qr_metric_acc_add(&acc, xb.data, ya.data, xb.numel);
            if (st == QR_OK && fill) { s->base_out[k] = xb; memset(&xb, 0, sizeof xb); }
            qr_tensor_free_data(&xb);
            qr_tensor_free_data(&ya);
        }
    }
    if (st == QR_OK && (layers != c->n || outs != s->b->n_outputs))
        st = qr_errf(QR_ERR_INVALID, "--from-values %s: %d layers and %d outputs saved, these models have %d and %d", dir, layers,
                     outs, c->n, s->b->n_outputs);
    if (st == QR_OK) {
        qr_metric_acc_finish(&acc, &c->out);
        for (int k = 0; k < c->n; k++)
            if (c->rows[k].has_m && c->rows[k].m.cosine < cos_threshold) { c->first_drop = k; break; }
    }
    if (st == QR_OK) st = qr__vl_split(dir, c);
    qr__vl_index_free(&x);
    if (st != QR_OK) qr_compare_free(c);
    return st;
}
