/* analysis/badcase — implementation. See badcase.h.
 *
 * Map: per-sample runs · badcase.npy / badcase_list (the folder layouts and the listing:
 * analysis/dsset). */
/* ==== search ======================================================================== */

/* Metrics of the model outputs of a against b (all outputs concatenated; only >= 0: that one). */
static QrStatus qr__bc_out_metrics(const QrGraph *b, const QrTensor *ob, const QrTensor *oa, int only, QrMetrics *m) {
    QrMetricAcc acc;
    qr_metric_acc_init(&acc);
    for (int k = 0; k < b->n_outputs; k++) {
        if (only >= 0 && k != only) continue;
        QrTensor x = {0}, y = {0};
        QrStatus st = qr_tensor_to_f32(&ob[k], &x);
        if (st == QR_OK) st = qr_tensor_to_f32(&oa[k], &y);
        if (st == QR_OK && x.numel != y.numel)
            st = qr_errf(QR_ERR_SHAPE, "output %d ('%s') has %lld elements in the analysis model but %lld in the baseline",
                         k, b->values[b->outputs[k]].name, (long long)y.numel, (long long)x.numel);
        if (st == QR_OK) qr_metric_acc_add(&acc, x.data, y.data, x.numel);
        qr_tensor_free_data(&x);
        qr_tensor_free_data(&y);
        QR_TRY(st);
    }
    qr_metric_acc_finish(&acc, m);
    return QR_OK;
}

/* Re-infers both graphs when the inputs' shapes differ from what they were inferred for. */
static QrStatus qr__bc_fit_shapes(QrGraph *b, QrGraph *a, const QrTensor *in) {
    bool same = b->shapes_inferred && a->shapes_inferred;
    for (int k = 0; same && k < b->n_inputs; k++) {
        const QrTensor *t = &b->values[b->inputs[k]].t;
        same = t->dtype == in[k].dtype && qr_tensor_same_shape(t, &in[k]);
    }
    if (same) return QR_OK;
    QR_TRY(qr_run_infer(b, in));
    return qr_run_infer(a, in);
}

static QrStatus qr__bc_run_sample(QrGraph *b, QrGraph *a, const QrTensor *in, int only, QrMetrics *m) {
    QrTensor *ob = calloc((size_t)b->n_outputs + 1, sizeof(QrTensor)), *oa = calloc((size_t)a->n_outputs + 1, sizeof(QrTensor));
    QrStatus st = ob && oa ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr__bc_fit_shapes(b, a, in);
    if (st == QR_OK) st = qr_run(b, in, NULL, ob);
    if (st == QR_OK) st = qr_run(a, in, NULL, oa);
    if (st == QR_OK) st = qr__bc_out_metrics(b, ob, oa, only, m);
    for (int k = 0; ob && k < b->n_outputs; k++) qr_tensor_free_data(&ob[k]);
    for (int k = 0; oa && k < a->n_outputs; k++) qr_tensor_free_data(&oa[k]);
    free(ob);
    free(oa);
    return st;
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_badcase_search(QrGraph *b, QrGraph *a, const char *dir, int num_steps, QrMetricKind metric,
                                  const QrStepHook *progress, QrBadcase *out) {
    return qr_badcase_search_at(b, a, dir, num_steps, metric, -1, progress, out);
}
#endif

static QrStatus qr_badcase_search_at(QrGraph *b, QrGraph *a, const char *dir, int num_steps, QrMetricKind metric, int only,
                                     const QrStepHook *progress, QrBadcase *out) {
    memset(out, 0, sizeof *out);
    out->worst = -1;
    out->metric = metric;
    QrArena *ar = &out->arena;
    int ni = b->n_inputs;
    if (a->n_inputs != ni)
        return qr_errf(QR_ERR_INVALID, "the baseline has %d inputs but the analysis model has %d", ni, a->n_inputs);
    if (a->n_outputs != b->n_outputs)
        return qr_errf(QR_ERR_INVALID, "the baseline has %d outputs but the analysis model has %d", b->n_outputs, a->n_outputs);
    if (!qr_dsset_is_dir(dir)) return qr_errf(QR_ERR_IO, "--data '%s' is not a folder", dir);
    out->dir = qr_arena_strdup(ar, dir);
    out->n_inputs = ni;
    out->input_names = qr_arena_array(ar, (size_t)ni + 1, sizeof(char *));
    const char **folder = qr_arena_array(ar, (size_t)ni + 1, sizeof(char *));
    out->inputs = calloc((size_t)ni + 1, sizeof(QrTensor));
    QrTensor *cur = calloc((size_t)ni + 1, sizeof(QrTensor));
    if (!out->input_names || !folder || !out->inputs || !cur) { free(cur); qr_badcase_free(out); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    /* Layout: a folder per input, else (one input) the .npy files of dir itself. */
    int have = 0;
    for (int k = 0; k < ni; k++) {
        const char *name = b->values[b->inputs[k]].name;
        char safe[512];
        qr_safe_filename(safe, sizeof safe, name);
        out->input_names[k] = name;
        const char *p1 = qr_arena_printf(ar, "%s/%s", dir, name), *p2 = qr_arena_printf(ar, "%s/%s", dir, safe);
        folder[k] = qr_dsset_is_dir(p1) ? p1 : qr_dsset_is_dir(p2) ? p2 : NULL;
        have += folder[k] != NULL;
    }
    QrStatus st = QR_OK;
    out->folders = have > 0;
    if (have > 0 && have < ni) {
        for (int k = 0; k < ni; k++)
            if (!folder[k]) { st = qr_errf(QR_ERR_INVALID, "--data %s: no folder for model input '%s' (hmct layout: one folder per "
                                           "input, named after it, holding 0.npy, 1.npy, ...)", dir, out->input_names[k]); break; }
    } else if (have == 0) {
        if (ni != 1) st = qr_errf(QR_ERR_INVALID, "--data %s: the model has %d inputs, so the folder needs one sub-folder per input "
                                  "named after it (hmct layout: %s/%s/0.npy, ...)", dir, ni, dir, ni ? out->input_names[0] : "?");
        else folder[0] = out->dir;
    }
    const char **files = NULL;
    int nf = 0;
    if (st == QR_OK) st = qr_dsset_list_npy(ar, folder[0], &files, &nf);
    if (st == QR_OK && nf == 0) st = qr_errf(QR_ERR_INVALID, "--data %s: no .npy or .pb files in '%s'", dir, folder[0]);
    out->n_total = nf;
    int n = num_steps > 0 ? QR_MIN(num_steps, nf) : nf;
    out->samples = st == QR_OK ? qr_arena_array(ar, (size_t)n + 1, sizeof *out->samples) : NULL;
    if (st == QR_OK && !out->samples) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    double worst_bad = -INFINITY;
    for (int s = 0; st == QR_OK && s < n; s++) {
        qr_step(progress, s, n);
        const char *path = NULL;
        for (int k = 0; st == QR_OK && k < ni; k++) {
            path = qr_arena_printf(ar, "%s/%s", folder[k], files[s]);
            st = qr_dsset_sample_read(path, &cur[k]);
            if (st == QR_OK) st = qr_run_check_input(b, k, &cur[k]);
            if (st != QR_OK) st = qr_err_wrap(st, "bad-case search: %s", path ? path : files[s]);
        }
        if (st != QR_OK) break;
        QrBadcaseSample *smp = &out->samples[out->n];
        smp->file = files[s];
        st = qr__bc_run_sample(b, a, cur, only, &smp->m);
        if (st != QR_OK) { st = qr_err_wrap(st, "bad-case search: sample '%s'", files[s]); break; }
        double bad = qr_metric_badness(&smp->m, metric);
        if (out->worst < 0 || bad > worst_bad) {
            worst_bad = bad;
            out->worst = out->n;
            for (int k = 0; k < ni; k++) { qr_tensor_free_data(&out->inputs[k]); out->inputs[k] = cur[k]; memset(&cur[k], 0, sizeof cur[k]); }
        }
        for (int k = 0; k < ni; k++) qr_tensor_free_data(&cur[k]);
        out->n++;
    }
    if (st == QR_OK && out->worst >= 0) st = qr__bc_fit_shapes(b, a, out->inputs);
    if (cur) for (int k = 0; k < ni; k++) qr_tensor_free_data(&cur[k]);
    free(cur);
    if (st != QR_OK) qr_badcase_free(out);
    return st;
}

static void qr_badcase_free(QrBadcase *bc) {
    if (bc->inputs) for (int k = 0; k < bc->n_inputs; k++) qr_tensor_free_data(&bc->inputs[k]);
    free(bc->inputs);
    qr_arena_free(&bc->arena);
    memset(bc, 0, sizeof *bc);
}

/* ==== output ======================================================================== */

static QrStatus qr__bc_badcase_table(const QrBadcase *bc, bool csv, QrTable *t) {
    static const char *const cols[] = { "index", "sample", "L1", "Cosine", "MSE", "KL", "SQNR", "nonfinite", "worst" };
    QR_TRY(qr_table_init(t, QR_ARRAY_LEN(cols), cols));
    for (int k = 0; k < bc->n; k++) {
        const QrBadcaseSample *s = &bc->samples[k];
        int row;
        QR_TRY(qr_table_add_row(t, &row));
        qr_table_setf(t, row, 0, "%d", k);
        qr_table_set(t, row, 1, s->file);
        double v[] = { s->m.l1, s->m.cosine, s->m.mse, s->m.kl, s->m.sqnr };
        for (int j = 0; j < 5; j++) QR_TRY(qr_weights_num(t, row, 2 + j, v[j], csv));
        qr_table_setf(t, row, 7, "%lld", (long long)s->m.n_nonfinite);
        qr_table_set(t, row, 8, k == bc->worst ? "yes" : "");
    }
    return QR_OK;
}

static QrStatus qr_badcase_write(const QrBadcase *bc, const char *dir) {
    QrArena a = {0};
    QrStatus st = QR_OK;
    if (bc->worst < 0) return qr_errf(QR_ERR_INVALID, "bad-case search evaluated no sample");
    for (int k = 0; st == QR_OK && k < bc->n_inputs; k++) {
        char safe[512];
        qr_safe_filename(safe, sizeof safe, bc->input_names[k]);
        const char *p = bc->n_inputs == 1 ? qr_arena_printf(&a, "%s/" QR_BF_BADCASE, dir)
                                          : qr_arena_printf(&a, "%s/" QR_BF_BADCASE_STEM "_%s.npy", dir, safe);
        st = p ? qr_npy_write(p, &bc->inputs[k]) : qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    QrTable tt = {0}, tc = {0};
    if (st == QR_OK) st = qr__bc_badcase_table(bc, false, &tt);
    if (st == QR_OK) st = qr__bc_badcase_table(bc, true, &tc);
    if (st == QR_OK) {
        const QrBadcaseSample *w = &bc->samples[bc->worst];
        char *head = qr_arena_printf(&a, "Bad-case search over %s (%s layout): %d of %d sample%s, metric %s at the model "
                                     "output(s), baseline vs analysis.\nWorst: sample %d ('%s'), %s %.7g, Cosine %.7f -> %s.\n\n",
                                     bc->dir, bc->folders ? "one folder per input" : "flat", bc->n, bc->n_total,
                                     bc->n_total == 1 ? "" : "s", qr_metric_name(bc->metric), bc->worst, w->file,
                                     qr_metric_name(bc->metric), qr_metric_get(&w->m, bc->metric), w->m.cosine,
                                     bc->n_inputs == 1 ? QR_BF_BADCASE : QR_BF_BADCASE_STEM "_<input>.npy");
        st = head ? qr_weights_write_tables(&tt, &tc, head, NULL, dir, QR_BF_BADCASE_LIST) : qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    qr_table_free(&tt);
    qr_table_free(&tc);
    qr_arena_free(&a);
    return st;
}
