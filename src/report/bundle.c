/* report/bundle — implementation. See bundle.h. Renders what runall/ computed: summary.json,
 * manifest.json, index.html and the plots into the staging folder, and zips that folder. */

#include <dirent.h>
#include <ftw.h>

static const char *qr_bundle_path(QrBundle *bd, const char *name) { return qr_arena_printf(&bd->arena, "%s/%s", bd->dir, name); }

static int qr__bn_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    QR_UNUSED(sb); QR_UNUSED(flag); QR_UNUSED(f);
    return remove(p);
}

static void qr_bundle_rmtree(const char *dir) { nftw(dir, qr__bn_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

/* Adds every file under dir/sub to the zip (names relative to dir). */
static QrStatus qr_bundle_add_tree(QrZip *z, const char *dir, const char *sub, QrArena *a) {
    const char *path = sub[0] ? qr_arena_printf(a, "%s/%s", dir, sub) : dir;
    DIR *d = opendir(path);
    if (!d) return qr_errf(QR_ERR_IO, "cannot list %s: %s", path, strerror(errno));
    QrStatus st = QR_OK;
    struct dirent *e;
    while (st == QR_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        const char *rel = sub[0] ? qr_arena_printf(a, "%s/%s", sub, e->d_name) : qr_arena_strdup(a, e->d_name);
        const char *full = qr_arena_printf(a, "%s/%s", dir, rel);
        struct stat sb;
        if (stat(full, &sb) != 0) st = qr_errf(QR_ERR_IO, "cannot stat %s: %s", full, strerror(errno));
        else if (S_ISDIR(sb.st_mode)) st = qr_bundle_add_tree(z, dir, rel, a);
        else st = qr_zip_add_file(z, rel, full);
    }
    closedir(d);
    return st;
}

/* ==== tables for the HTML (same columns as the txt/csv files) ========================= */

static QrStatus qr__bn_sens_table(const QrSensResult *r, int max, QrTable *t) {
    static const char *const cols[] = { "rank", "op_name", "sensitive_type", "op_type", "L1", "Cosine", "MSE", "KL", "SQNR",
                                        "gain", "dtype" };
    const char *use[QR_ARRAY_LEN(cols)];
    int n = 0, dcol;
    for (int j = 0; j < QR_ARRAY_LEN(cols) - 2; j++) use[n++] = cols[j];
    if (r->opts.off_one) use[n++] = "gain";
    use[dcol = n++] = "dtype";
    QR_TRY(qr_table_init(t, n, use));
    for (int k = 0; k < r->n && k < max; k++) {
        const QrSensRow *row = &r->rows[k];
        int ri;
        QR_TRY(qr_table_add_row(t, &ri));
        qr_table_setf(t, ri, 0, "%d", k + 1);
        qr_table_set(t, ri, 1, row->name);
        qr_table_set(t, ri, 2, qr_sens_type_name(row->type));
        qr_table_set(t, ri, 3, row->op_type);
        double v[] = { row->m.l1, row->m.cosine, row->m.mse, row->m.kl, row->m.sqnr };
        for (int j = 0; j < 5; j++) qr_compare_num(t, ri, 4 + j, v[j], false);
        if (r->opts.off_one) qr_compare_num(t, ri, 9, qr_sens_gain(r, row), false);
        qr_table_set(t, ri, dcol, row->dtype);
    }
    return QR_OK;
}

static QrHtmlLevel qr__bn_cos_level(double c) {
    return c != c ? QR_HTML_NONE : c >= 0.999 ? QR_HTML_GOOD : c >= 0.99 ? QR_HTML_WARN : QR_HTML_BAD;
}

/* Colours the Cosine/local_Cosine cells of the compare table. */
static QrHtmlLevel qr__bn_cmp_cell(const QrTable *t, int row, int col, void *ctx) {
    QR_UNUSED(ctx);
    if (col != 7 && col != 24) return QR_HTML_NONE;
    const char *s = t->rows[row][col];
    return s ? qr__bn_cos_level(strtod(s, NULL)) : QR_HTML_NONE;
}

/* The error split's bar in the dominant cell of the compare table: the four parts' MSE. */
typedef struct QrBnBarCtx { const QrCompare *cmp; int col; } QrBnBarCtx;

static int qr__bn_cmp_bar(const QrTable *t, int row, int col, void *ctx, double *parts) {
    const QrBnBarCtx *b = ctx;
    QR_UNUSED(t);
    QrSplitView v;
    if (col != b->col || row < 0 || row >= b->cmp->n || !qr_compare_split(&b->cmp->rows[row].sp, &v)) return 0;
    parts[0] = v.err_w;
    parts[1] = v.err_i;
    parts[2] = v.err_round;
    parts[3] = v.err_clip;
    return 4;
}

/* ==== summary.json / manifest.json =================================================== */

static void qr__bn_json_metrics(QrJson *j, const QrMetrics *m) {
    qr_json_obj_begin_compact(j);
    qr_json_kv_num(j, "Cosine", m->cosine);
    qr_json_kv_num(j, "MSE", m->mse);
    qr_json_kv_num(j, "L1", m->l1);
    qr_json_kv_num(j, "KL", m->kl);
    qr_json_kv_num(j, "SQNR", m->sqnr);
    qr_json_kv_num(j, "Atol", m->atol);
    qr_json_obj_end(j);
}

/* Finishes j and writes it as name in the staging folder. */
static QrStatus qr__bn_write_json(QrBundle *bd, QrJson *j, const char *name) {
    char *txt = NULL;
    size_t len = 0;
    QrStatus st = qr_json_finish(j, &txt, &len);
    if (st != QR_OK) { qr_json_free(j); return st; }
    st = qr_file_write_atomic(qr_bundle_path(bd, name), txt, len);
    free(txt);
    return st;
}

/* "failed_analyses": [{analysis, error}] — in both summary.json and manifest.json. */
static void qr__bn_json_failed(QrJson *j, const QrBundle *bd) {
    qr_json_key(j, "failed_analyses");
    qr_json_arr_begin(j);
    for (int k = 0; k < bd->n_fail; k++) {
        qr_json_obj_begin_compact(j);
        qr_json_kv_str(j, "analysis", bd->fail_name[k]);
        qr_json_kv_str(j, "error", bd->fail_msg[k]);
        qr_json_obj_end(j);
    }
    qr_json_arr_end(j);
}

static const char *qr__bn_verdict_one(const QrBundle *bd, QrHtmlLevel *level);
/* --data: the single-sample verdict (of the worst sample) preceded by the data set's numbers. */
static const char *qr_bundle_verdict(const QrBundle *bd, QrHtmlLevel *level) {
    const char *v = qr__bn_verdict_one(bd, level);
    const QrDsRunall *r = &bd->dsr;
    if (!r->on || r->worst < 0) return v;
    QrArena *a = (QrArena *)&bd->arena;
    const char *pooled = "";
    if (r->dc.n_outs == 1) {
        QrMetrics m;
        qr_ds_out_metrics(&r->dc.outs[0], &m);
        pooled = qr_arena_printf(a, "; pooled model output Cosine %.6f, SQNR %.2f dB", m.cosine, m.sqnr);
    }
    const char *skipped = r->dc.n_skipped ? qr_arena_printf(a, ", %d skipped (--skip-bad-samples, listed in "
                                                               QR_BF_DATASET "/" QR_BF_DS_SAMPLES ".txt)", r->dc.n_skipped) : "";
    return qr_arena_printf(a, "Data set: %d sample%s of %d in %s%s%s. Worst sample '%s' (every per-layer analysis below uses "
                           "it): %s", r->dc.n_done, r->dc.n_done == 1 ? "" : "s", r->ds->n_found, r->ds->dir, skipped, pooled,
                           r->dc.names[r->worst], v);
}

static const char *qr__bn_verdict_one(const QrBundle *bd, QrHtmlLevel *level) {
    if (!bd->have_cmp) { *level = QR_HTML_BAD; return "The per-layer comparison failed; see the failed analyses."; }
    double c = bd->cmp.out.cosine;
    *level = qr__bn_cos_level(c);
    const char *what = *level == QR_HTML_GOOD ? "close to the baseline" : *level == QR_HTML_WARN ? "noticeably degraded"
                     : "badly degraded";
    QrArena *a = (QrArena *)&bd->arena;
    if (bd->cmp.first_drop >= 0) {
        const QrMatch *m = &bd->se.m.m[bd->cmp.rows[bd->cmp.first_drop].match];
        return qr_arena_printf(a, "Model output Cosine %.6f, SQNR %.2f dB: %s. Similarity first drops below %.4g at '%s'.",
                               c, bd->cmp.out.sqnr, what, bd->o->cos_threshold, bd->se.b->nodes[m->b_node].name);
    }
    return qr_arena_printf(a, "Model output Cosine %.6f, SQNR %.2f dB: %s.", c, bd->cmp.out.sqnr, what);
}

/* The recommended action (HTML verdict and terminal summary), or NULL without sensitivity
 * rows: the what-if's measured int16 promotion when it has one, else the top sensitive node. */
static const char *qr_bundle_action(const QrBundle *bd) {
    if (!bd->have_sens || !bd->sens.n) return NULL;
    QrArena *a = (QrArena *)&bd->arena;
    if (bd->have_wi && bd->wi.rec_int16 >= 0) {
        const QrWhatIfStep *w = &bd->wi.steps[bd->wi.rec_int16];
        return qr_arena_printf(a, "Recommended action: promote the top-%d sensitive node%s to int16 (output Cosine %.6f → %.6f, "
                               "measured; see " QR_BF_WHATIF " for ready-to-use node lists).", w->k, w->k == 1 ? "" : "s",
                               bd->wi.as_is.cosine, w->int16.cosine);
    }
    return qr_arena_printf(a, "Recommended action: keep '%s' in higher precision (int16 or float) first, then re-check the "
                           "cumulative-error curves.", qr_sens_top(&bd->sens, 0)->name);
}

static QrStatus qr_bundle_write_summary(QrBundle *bd) {
    QrJson j;
    qr_json_init(&j);
    QrHtmlLevel lv;
    const char *verdict = qr_bundle_verdict(bd, &lv);
    qr_json_obj_begin(&j);
    qr_json_kv_int(&j, "schema_version", 1);
    qr_json_key(&j, "verdict");
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "level", lv == QR_HTML_GOOD ? "good" : lv == QR_HTML_WARN ? "warning" : "bad");
    qr_json_kv_str(&j, "text", verdict);
    if (bd->have_cmp && bd->cmp.first_drop >= 0)
        qr_json_kv_str(&j, "first_drop", bd->se.b->nodes[bd->se.m.m[bd->cmp.rows[bd->cmp.first_drop].match].b_node].name);
    qr_json_obj_end(&j);
    qr_json_kv_str(&j, "baseline_form", qr_session_baseline_form(&bd->se));
    qr_json_kv_str(&j, "baseline_form_text", qr_session_baseline_form_text(&bd->se));
    if (bd->have_cmp) { qr_json_key(&j, "model_output"); qr__bn_json_metrics(&j, &bd->cmp.out); }
    if (bd->have_eq) {
        qr_json_key(&j, "equivalence");
        qr_json_obj_begin(&j);
        qr_json_kv_bool(&j, "pass", bd->eq.equivalent);
        qr_json_kv_num(&j, "worst_relative_difference", bd->eq.worst_rel);
        qr_json_kv_str(&j, "text", qr_equiv_verdict(bd->se.b, &bd->se.m, &bd->eq));
        qr_json_obj_end(&j);
    }
    int matched = 0;
    for (int i = 0; i < bd->se.m.n; i++) matched += bd->se.m.m[i].a_node >= 0;
    qr_json_key(&j, "match");
    qr_json_obj_begin_compact(&j);
    qr_json_kv_int(&j, "baseline_values", bd->se.m.n);
    qr_json_kv_int(&j, "matched", matched);
    qr_json_kv_int(&j, "analysis_unmatched", bd->se.m.n_unmatched_a);
    qr_json_kv_bool(&j, "verification_ran", bd->se.m.verified_run);
    qr_json_kv_int(&j, "verified", bd->se.m.n_verified);
    qr_json_kv_int(&j, "unverified", bd->se.m.n_unverified);
    qr_json_kv_num(&j, "tolerance", QR_EQUIV_TOL);
    qr_json_obj_end(&j);
    if (bd->have_sens) {
        qr_json_key(&j, "sensitivity");
        qr_json_obj_begin(&j);
        qr_json_kv_str(&j, "mode", bd->sens.opts.off_one ? "off-one" : "one-on");
        qr_json_kv_str(&j, "metric", qr_metric_name(bd->sens.opts.metric));
        qr_json_kv_int(&j, "node_executions", bd->sens.n_exec);
        qr_json_kv_int(&j, "node_executions_full_reruns", bd->sens.n_full);
        qr_json_key(&j, "top");
        qr_json_arr_begin(&j);
        for (int k = 0; k < bd->sens.n && k < 10; k++) {
            const QrSensRow *row = &bd->sens.rows[k];
            qr_json_obj_begin_compact(&j);
            qr_json_kv_str(&j, "op_name", row->name);
            qr_json_kv_str(&j, "sensitive_type", qr_sens_type_name(row->type));
            qr_json_kv_str(&j, "op_type", row->op_type);
            qr_json_key(&j, "metrics");
            qr__bn_json_metrics(&j, &row->m);
            if (bd->sens.opts.off_one) qr_json_kv_num(&j, "gain", qr_sens_gain(&bd->sens, row));
            qr_json_kv_str(&j, "dtype", row->dtype);
            qr_json_obj_end(&j);
        }
        qr_json_arr_end(&j);
        qr_json_obj_end(&j);
    }
    if (bd->have_cmp) {
        qr_json_key(&j, "layers");
        qr_json_arr_begin(&j);
        for (int k = 0; k < bd->cmp.n; k++) {
            const QrLayerRow *r = &bd->cmp.rows[k];
            const QrMatch *m = &bd->se.m.m[r->match];
            qr_json_obj_begin_compact(&j);
            qr_json_kv_int(&j, "Index", k);
            qr_json_kv_str(&j, "mod_name", bd->se.b->nodes[m->b_node].name);
            qr_json_kv_str(&j, "base_op_type", bd->se.b->nodes[m->b_node].op_type);
            qr_json_kv_str(&j, "analy_op_type", bd->se.a->nodes[m->a_node].op_type);
            qr_json_kv_str(&j, "base_tensor", bd->se.b->values[m->b_value].name);
            qr_json_kv_str(&j, "analy_tensor", bd->se.a->values[m->a_value].name);
            if (r->has_m) {
                qr_json_kv_num(&j, "Cosine", r->m.cosine);
                qr_json_kv_num(&j, "MSE", r->m.mse);
                qr_json_kv_num(&j, "L1", r->m.l1);
                qr_json_kv_num(&j, "KL", r->m.kl);
                qr_json_kv_num(&j, "SQNR", r->m.sqnr);
                qr_json_kv_num(&j, "Atol", r->m.atol);
                qr_json_kv_num(&j, "Rtol", r->m.rtol);
            }
            if (r->has_local) {
                qr_json_kv_num(&j, "local_Cosine", r->local.cosine);
                qr_json_kv_num(&j, "local_SQNR", r->local.sqnr);
            }
            QrSplitView sv;
            if (qr_compare_split(&r->sp, &sv)) {
                const char *const keys[] = { "err_weight", "err_input", "err_output_round", "err_output_clip", "clip_frac",
                                             "steps_rms", "noise_ratio" };
                const double vals[] = { sv.err_w, sv.err_i, sv.err_round, sv.err_clip, sv.clip_frac, sv.steps_rms, sv.noise_ratio };
                for (int q = 0; q < QR_ARRAY_LEN(vals); q++) if (vals[q] == vals[q]) qr_json_kv_num(&j, keys[q], vals[q]);
                qr_json_kv_str(&j, "dominant", sv.dominant);
                if (r->sp.w_channel >= 0) qr_json_kv_int(&j, "weight_worst_channel", r->sp.w_channel);
            }
            qr_json_obj_end(&j);
        }
        qr_json_arr_end(&j);
    }
    if (bd->have_acc) {
        qr_json_key(&j, "accumulated_error_outputs");
        qr_json_obj_begin(&j);
        for (int k = 0; k < bd->acc.n_settings; k++) { qr_json_key(&j, bd->acc.setting[k]); qr__bn_json_metrics(&j, &bd->acc.out[k]); }
        qr_json_obj_end(&j);
    }
    if (bd->have_adv) { qr_json_key(&j, "advisor"); qr_advisor_json(&j, &bd->adv); }
    if (bd->have_wi) {
        qr_json_key(&j, "what_if");
        qr_json_obj_begin(&j);
        qr_json_kv_num(&j, "target_cosine", bd->wi.target);
        qr_json_key(&j, "steps");
        qr_json_arr_begin(&j);
        for (int k = 0; k < bd->wi.n_steps; k++) {
            const QrWhatIfStep *w = &bd->wi.steps[k];
            qr_json_obj_begin_compact(&j);
            qr_json_kv_int(&j, "k", w->k);
            qr_json_key(&j, "int16");
            qr__bn_json_metrics(&j, &w->int16);
            qr_json_key(&j, "float");
            qr__bn_json_metrics(&j, &w->fp);
            qr_json_obj_end(&j);
        }
        qr_json_arr_end(&j);
        if (bd->wi.rec_int16 >= 0) qr_json_kv_int(&j, "recommended_int16_k", bd->wi.steps[bd->wi.rec_int16].k);
        if (bd->wi.rec_fp >= 0) qr_json_kv_int(&j, "recommended_float_k", bd->wi.steps[bd->wi.rec_fp].k);
        qr_json_obj_end(&j);
    }
    qr_deploy_runall_json(&j, &bd->dep);
    qr_ds_runall_json(&j, &bd->dsr, &bd->se);
    qr_sens_set_json(&j, &bd->dss);
    qr__bn_json_failed(&j, bd);
    qr_json_obj_end(&j);
    return qr__bn_write_json(bd, &j, QR_BF_SUMMARY);
}

static void *qr__bn_hash_main(void *arg) {
    QrBundle *bd = arg;
    for (int k = 0; k < bd->n_hash; k++) {
        uint8_t d[QR_SHA256_LEN];
        bd->hash[k].ok = qr_sha256_file(bd->hash[k].path, d) == QR_OK;
        if (bd->hash[k].ok) qr_sha256_hex(d, bd->hash[k].hex);
        else qr_err_clear();
    }
    return NULL;
}

/* Starts hashing the input files on a helper thread (reading 100 MB of models takes tens of
 * ms; the analyses meanwhile have serial stretches). Without a thread they are hashed when
 * the manifest is written. */
static void qr_bundle_hash_start(QrBundle *bd, const QrGraph *b, const QrGraph *a) {
    const char *paths[2] = { b->path, a->path };
    for (int k = 0; k < 2; k++) if (paths[k]) bd->hash[bd->n_hash++].path = paths[k];
    for (int i = 0; i < bd->o->n_input_paths && bd->n_hash < QR_ARRAY_LEN(bd->hash); i++)
        if (bd->o->input_paths[i]) bd->hash[bd->n_hash++].path = bd->o->input_paths[i];
    bd->hash_running = bd->n_hash && pthread_create(&bd->hash_th, NULL, qr__bn_hash_main, bd) == 0;
    if (!bd->hash_running) bd->n_hash = 0;
}

static void qr_bundle_hash_join(QrBundle *bd) {
    if (bd->hash_running) pthread_join(bd->hash_th, NULL);
    bd->hash_running = false;
}

/* The sha256 of a file as hex, computed once per path (the manifest is written twice);
 * NULL when the file cannot be read. */
static const char *qr__bn_sha(QrBundle *bd, const char *path) {
    qr_bundle_hash_join(bd);
    for (int k = 0; k < bd->n_hash; k++) if (!strcmp(bd->hash[k].path, path)) return bd->hash[k].ok ? bd->hash[k].hex : NULL;
    for (int k = 0; k < bd->n_sha; k++) if (!strcmp(bd->sha_path[k], path)) return bd->sha_hex[k];
    uint8_t d[QR_SHA256_LEN];
    char hex[2 * QR_SHA256_LEN + 1];
    const char *h = NULL;
    if (qr_sha256_file(path, d) == QR_OK) { qr_sha256_hex(d, hex); h = qr_arena_strdup(&bd->arena, hex); }
    else qr_err_clear();
    if (bd->n_sha < QR_ARRAY_LEN(bd->sha_path)) {
        bd->sha_path[bd->n_sha] = qr_arena_strdup(&bd->arena, path);
        bd->sha_hex[bd->n_sha++] = h;
    }
    return h;
}

static void qr__bn_json_file(QrBundle *bd, QrJson *j, const char *role, const char *path) {
    qr_json_obj_begin_compact(j);
    qr_json_kv_str(j, "role", role);
    qr_json_kv_str(j, "path", path);
    const char *h = path ? qr__bn_sha(bd, path) : NULL;
    if (h) qr_json_kv_str(j, "sha256", h);
    else qr_json_kv_null(j, "sha256");
    qr_json_obj_end(j);
}

static QrStatus qr_bundle_write_manifest(QrBundle *bd) {
    /* Reproducible bundles: with SOURCE_DATE_EPOCH, nothing that varies run to run. */
    bool repro = getenv("SOURCE_DATE_EPOCH") != NULL;
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "tool", "qreport");
    qr_json_kv_str(&j, "version", QR_VERSION);
    qr_json_kv_str(&j, "isa", qr_isa_name(qr_kern_isa()));
    qr_json_kv_int(&j, "threads", qr_pool_threads());
    qr_json_kv_str(&j, "build", QR_BUILD_FLAGS);
    qr_json_kv_str(&j, "command_line", bd->o->cmdline);
    qr_json_key(&j, "files");
    qr_json_arr_begin(&j);
    qr__bn_json_file(bd, &j, "baseline", bd->se.b->path);
    qr__bn_json_file(bd, &j, "analysis", bd->se.a->path);
    for (int i = 0; i < bd->o->n_input_paths; i++)
        if (bd->o->input_paths[i]) qr__bn_json_file(bd, &j, "input", bd->o->input_paths[i]);
    qr_json_arr_end(&j);
    qr_json_kv_bool(&j, "random_input", bd->o->random_input);
    qr_json_key(&j, "stages");
    qr_json_arr_begin(&j);
    for (int k = 0; k < bd->prog.n_stages; k++) {
        qr_json_obj_begin_compact(&j);
        qr_json_kv_str(&j, "name", bd->prog.stages[k].name);
        if (repro) qr_json_kv_null(&j, "seconds");
        else qr_json_kv_num(&j, "seconds", bd->prog.stages[k].seconds);
        qr_json_kv_bool(&j, "ok", bd->prog.stages[k].ok);
        qr_json_obj_end(&j);
    }
    qr_json_arr_end(&j);
    if (repro) qr_json_kv_null(&j, "peak_rss_bytes");
    else qr_json_kv_int(&j, "peak_rss_bytes", qr_progress_peak_rss());
    if (bd->have_sens) {
        qr_json_kv_int(&j, "sensitivity_node_executions", bd->sens.n_exec);
        qr_json_kv_int(&j, "sensitivity_node_executions_full_reruns", bd->sens.n_full);
    }
    qr_json_key(&j, "warnings");
    qr_json_arr_begin(&j);
    for (int k = 0; k < bd->o->n_warnings; k++) qr_json_str(&j, bd->o->warnings[k]);
    if (bd->o->random_input) qr_json_str(&j, "no input given: a deterministic random input was used");
    if (bd->se.tw.n_kept) qr_json_str(&j, bd->se.tw.note);
    qr_json_arr_end(&j);
    qr__bn_json_failed(&j, bd);
    qr_json_obj_end(&j);
    return qr__bn_write_json(bd, &j, QR_BF_MANIFEST);
}

/* ==== index.html: one function per section, qr_bundle_write_html calls them in order ===== */

static char *qr__bn_read_text(QrBundle *bd, const char *name) {
    unsigned char *buf = NULL;
    size_t len = 0;
    if (qr_file_read(qr_bundle_path(bd, name), 0, &buf, &len) != QR_OK) { qr_err_clear(); return NULL; }
    char *s = qr_arena_alloc(&bd->arena, len + 1);
    if (s) { memcpy(s, buf, len); s[len] = 0; }
    free(buf);
    return s;
}

static bool qr__bn_exists(QrBundle *bd, const char *name) {
    uint64_t sz;
    bool ok = qr_file_size(qr_bundle_path(bd, name), &sz) == QR_OK;
    qr_err_clear();
    return ok;
}

/* The per-layer comparison section (runall's index.html and compare's compare_per_layer.html). */
static void qr__bn_html_compare(QrHtml *h, const QrSession *se, const QrCompare *cmp, bool have_plot) {
    qr_html_section(h, "compare", "Per-layer comparison");
    qr_html_para(h, "One row per baseline node output, in graph order. The analysis value is the one its consumers see "
                 "(after the layer's QuantizeLinear→DequantizeLinear). local_* re-runs the layer on the baseline's own "
                 "inputs: a layer with a good local Cosine but a bad Cosine inherits its error from upstream.");
    if (have_plot) qr_html_image(h, QR_BF_PLOT_PER_LAYER, "Cosine and SQNR per layer", NULL, 0, 0);
    QrTable t = {0};
    if (qr_compare_table(se, cmp, false, false, &t) == QR_OK) {
        static const char *const labels[] = { "weight", "input", "output rounding", "output clipping" };
        QrBnBarCtx bc = { cmp, -1 };
        for (int j = 0; j < t.n_cols; j++) if (!strcmp(t.cols[j], "dominant")) bc.col = j;
        QrHtmlTableOpts to = { .cell_level = qr__bn_cmp_cell, .cell_bar = qr__bn_cmp_bar, .ctx = &bc, .bar_labels = labels };
        qr_html_table(h, &t, &to);
    }
    qr_table_free(&t);
    const char *files[] = { QR_BF_COMPARE ".txt", QR_BF_COMPARE ".csv" };
    qr_html_files(h, files, 2);
}

/* The verdict box's tiles: output metrics, match coverage, baseline form, verified pairs,
 * equivalence. */
static void qr__bn_html_tiles(QrHtml *h, QrBundle *bd) {
    const QrSession *se = &bd->se;
    if (bd->have_cmp) {
        qr_html_metric(h, "Output Cosine", qr_arena_printf(&bd->arena, "%.6f", bd->cmp.out.cosine), qr__bn_cos_level(bd->cmp.out.cosine), NULL);
        qr_html_metric(h, "Output SQNR", qr_arena_printf(&bd->arena, "%.2f dB", bd->cmp.out.sqnr),
                       bd->cmp.out.sqnr >= 30 ? QR_HTML_GOOD : bd->cmp.out.sqnr >= 20 ? QR_HTML_WARN : QR_HTML_BAD, NULL);
        qr_html_metric(h, "Output L1", qr_arena_printf(&bd->arena, "%.6g", bd->cmp.out.l1), QR_HTML_NONE, NULL);
    }
    int matched = 0, fused = 0;
    for (int i = 0; i < se->m.n; i++) {
        matched += se->m.m[i].a_node >= 0;
        fused += se->m.m[i].a_node < 0 && se->m.m[i].note && !strncmp(se->m.m[i].note, "fused", 5);
    }
    qr_html_metric(h, "Match coverage", qr_arena_printf(&bd->arena, "%d / %d", matched + fused, se->m.n),
                   matched + fused == se->m.n ? QR_HTML_GOOD : QR_HTML_WARN,
                   fused ? qr_arena_printf(&bd->arena, "%d paired, %d fused into their successor", matched, fused)
                         : "baseline values paired with analysis values");
    qr_html_metric(h, "Baseline form", qr_session_baseline_form(se), QR_HTML_NONE, qr_session_baseline_form_text(se));
    qr_html_metric(h, "Verified pairs", se->m.verified_run ? qr_arena_printf(&bd->arena, "%d / %d", se->m.n_verified,
                                                                            se->m.n_verified + se->m.n_unverified) : "not checked",
                   se->m.verified_run && !se->m.n_unverified ? QR_HTML_GOOD : QR_HTML_BAD,
                   "same value with quantizers off (only these make headlines)");
    if (bd->have_eq)
        qr_html_metric(h, "Equivalence", bd->eq.equivalent ? "pass" : "FAIL", bd->eq.equivalent ? QR_HTML_GOOD : QR_HTML_BAD,
                       "quantizers off ⇒ baseline reproduced");
}

/* The verdict box's headlines: the three verified layers with the lowest Cosine, the most
 * sensitive quantizers with the recommended action, the advisor's main findings. */
static void qr__bn_html_headlines(QrHtml *h, QrBundle *bd) {
    const QrSession *se = &bd->se;
    if (bd->have_cmp) {
        int worst[3] = { -1, -1, -1 };
        for (int k = 0; k < bd->cmp.n; k++) {
            if (!bd->cmp.rows[k].has_m || !qr_match_verified(&se->m.m[bd->cmp.rows[k].match])) continue;   /* headline */
            double c = bd->cmp.rows[k].m.cosine;
            for (int w = 0; w < 3; w++)
                if (worst[w] < 0 || c < bd->cmp.rows[worst[w]].m.cosine) {
                    for (int s = 2; s > w; s--) worst[s] = worst[s - 1];
                    worst[w] = k;
                    break;
                }
        }
        qr_html_para(h, "Worst layers (lowest Cosine against the baseline):");
        qr_html_list_begin(h, true);
        for (int w = 0; w < 3 && worst[w] >= 0; w++) {
            const QrLayerRow *r = &bd->cmp.rows[worst[w]];
            qr_html_itemf(h, "%s (%s): Cosine %.6f, local Cosine %.6f", se->b->nodes[se->m.m[r->match].b_node].name,
                          se->b->nodes[se->m.m[r->match].b_node].op_type, r->m.cosine, r->has_local ? r->local.cosine : NAN);
        }
        qr_html_list_end(h);
    }
    if (bd->have_sens && bd->sens.n) {
        qr_html_para(h, bd->sens.opts.off_one ? "Most sensitive quantizers (metric at the model output with every "
                                                "quantizer on but them; gain over all on):"
                                              : "Most sensitive quantizers (metric at the model output with only them enabled):");
        qr_html_list_begin(h, true);
        for (int k = 0; k < bd->sens.n && k < 5; k++) {
            const QrSensRow *row = qr_sens_top(&bd->sens, k);
            if (bd->sens.opts.off_one)
                qr_html_itemf(h, "%s — %s (%s): %s %.6g, gain %.6g", row->name, qr_sens_type_name(row->type), row->op_type,
                              qr_metric_name(bd->sens.opts.metric), qr_metric_get(&row->m, bd->sens.opts.metric),
                              qr_sens_gain(&bd->sens, row));
            else
                qr_html_itemf(h, "%s — %s (%s): %s %.6g", row->name, qr_sens_type_name(row->type), row->op_type,
                              qr_metric_name(bd->sens.opts.metric), qr_metric_get(&row->m, bd->sens.opts.metric));
        }
        qr_html_list_end(h);
        qr_html_para(h, qr_bundle_action(bd));
    }
    if (bd->have_adv && bd->adv.n) {
        qr_html_para(h, "Advisor's main findings:");
        qr_html_list_begin(h, false);
        for (int k = 0; k < bd->adv.n && k < 3; k++)
            qr_html_itemf(h, "%s: %s — %s", bd->adv.f[k].node ? bd->adv.f[k].node : "model", bd->adv.f[k].reason, bd->adv.f[k].fix);
        qr_html_list_end(h);
        if (bd->adv.main_how) qr_html_paraf(h, "The first is the main finding: %s.", bd->adv.main_how);
    }
}

/* The page head: subtitle, then the verdict box (tiles, headlines, failed analyses). */
static void qr__bn_html_verdict(QrHtml *h, QrBundle *bd) {
    const QrSession *se = &bd->se;
    qr_html_subtitle(h, qr_arena_printf(&bd->arena, "baseline %s · analysis %s · qreport %s", se->b->path, se->a->path,
                                        QR_VERSION));
    QrHtmlLevel lv;
    const char *verdict = qr_bundle_verdict(bd, &lv);
    qr_html_verdict_begin(h, lv, verdict);
    qr__bn_html_tiles(h, bd);
    qr__bn_html_headlines(h, bd);
    for (int k = 0; k < bd->n_fail; k++) qr_html_failed(h, bd->fail_name[k], bd->fail_msg[k]);
    qr_html_verdict_end(h);
}

/* "Quantization sensitivity": the ranking table and the top-k bars. */
static void qr__bn_html_sensitivity(QrHtml *h, QrBundle *bd) {
    if (!bd->have_sens) return;
    qr_html_section(h, "sensitivity", "Quantization sensitivity");
    qr_html_paraf(h, "%s; sorted by %s%s, most sensitive first. %lld node executions (incremental) instead of %lld for "
                  "full re-runs.", bd->sens.opts.off_one ? "Every quantizer on except the row's" : "Only the row's quantizers on",
                  bd->sens.opts.off_one ? "the gain in " : "", qr_metric_name(bd->sens.opts.metric), (long long)bd->sens.n_exec, (long long)bd->sens.n_full);
    if (qr__bn_exists(bd, QR_BF_PLOT_SENS))
        qr_html_image(h, QR_BF_PLOT_SENS, "Top-k sensitive ops", NULL, 0, 0);
    QrTable t = {0};
    if (qr__bn_sens_table(&bd->sens, bd->sens.n, &t) == QR_OK) qr_html_table(h, &t, NULL);
    qr_table_free(&t);
    const char *files[] = { QR_BF_SENS ".txt", QR_BF_SENS ".csv", QR_BF_SENS ".json" };
    qr_html_files(h, files, 3);
}

/* "Cumulative error": the curves and the output metrics of every setting. */
static void qr__bn_html_accumulated(QrHtml *h, QrBundle *bd) {
    if (!bd->have_acc) return;
    qr_html_section(h, "accumulated", "Cumulative error");
    qr_html_paraf(h, "%s of every matched value along the graph for each quantization setting.", qr_metric_name(bd->acc.metric));
    if (qr__bn_exists(bd, QR_BF_PLOT_ACCUM))
        qr_html_image(h, QR_BF_PLOT_ACCUM, "Cumulative error curves", NULL, 0, 0);
    QrTable t = {0};
    const char *cols[20] = { "setting", "output Cosine", "output SQNR", "output L1" };
    if (qr_table_init(&t, 4, cols) == QR_OK) {
        for (int k = 0; k < bd->acc.n_settings; k++) {
            int ri;
            if (qr_table_add_row(&t, &ri) != QR_OK) break;
            qr_table_set(&t, ri, 0, bd->acc.setting[k]);
            qr_compare_num(&t, ri, 1, bd->acc.out[k].cosine, false);
            qr_compare_num(&t, ri, 2, bd->acc.out[k].sqnr, false);
            qr_compare_num(&t, ri, 3, bd->acc.out[k].l1, false);
        }
        qr_html_table(h, &t, NULL);
    }
    qr_table_free(&t);
    const char *files[] = { QR_BF_ACCUM };
    qr_html_files(h, files, 1);
}

/* "Abnormal layers and fixes": the advisor's text file. */
static void qr__bn_html_advisor(QrHtml *h, QrBundle *bd) {
    if (!bd->have_adv) return;
    qr_html_section(h, "advisor", "Abnormal layers and fixes");
    const char *t = qr__bn_read_text(bd, QR_BF_ADVISOR);
    if (t) qr_html_pre(h, t);
}

/* "int16 → int8 demotion" (--demote-int16): its text file. */
static void qr__bn_html_demotion(QrHtml *h, QrBundle *bd) {
    if (!qr__bn_exists(bd, QR_BF_DEMOTION ".txt")) return;
    qr_html_section(h, "demotion", "int16 → int8 demotion");
    const char *t = qr__bn_read_text(bd, QR_BF_DEMOTION ".txt");
    if (t) qr_html_pre(h, t);
    const char *files[] = { QR_BF_DEMOTION ".txt", QR_BF_DEMOTION ".csv", QR_BF_DEMOTION ".json" };
    qr_html_files(h, files, 3);
}

/* "Mixed-precision what-if": one row per step of the top-k nodes at int16 and in float. */
static void qr__bn_html_whatif(QrHtml *h, QrBundle *bd) {
    if (!bd->have_wi) return;
    qr_html_section(h, "whatif", "Mixed-precision what-if");
    qr_html_paraf(h, "The top-k sensitive nodes re-run with their quantizers on a 16-bit grid (same threshold), and "
                  "separately in float. Target output Cosine %.4g; as is: %.6f.", bd->wi.target, bd->wi.as_is.cosine);
    QrTable t = {0};
    const char *cols[] = { "k", "int16 Cosine", "int16 SQNR", "float Cosine", "float SQNR", "nodes" };
    if (qr_table_init(&t, 6, cols) == QR_OK) {
        for (int k = 0; k < bd->wi.n_steps; k++) {
            const QrWhatIfStep *w = &bd->wi.steps[k];
            int ri;
            if (qr_table_add_row(&t, &ri) != QR_OK) break;
            qr_table_setf(&t, ri, 0, "%d", w->k);
            qr_compare_num(&t, ri, 1, w->int16.cosine, false);
            qr_compare_num(&t, ri, 2, w->int16.sqnr, false);
            qr_compare_num(&t, ri, 3, w->fp.cosine, false);
            qr_compare_num(&t, ri, 4, w->fp.sqnr, false);
            char buf[1024] = "";
            size_t o2 = 0;
            for (int n2 = 0; n2 < w->k && o2 < sizeof buf; n2++)
                o2 += (size_t)snprintf(buf + o2, sizeof buf - o2, "%s%s", n2 ? ", " : "", w->nodes[n2]);
            qr_table_set(&t, ri, 5, buf);
        }
        qr_html_table(h, &t, NULL);
    }
    qr_table_free(&t);
    const char *files[] = { QR_BF_WHATIF };
    qr_html_files(h, files, 1);
}

/* "Weight comparison": the weights' text file and, for block-quantized weights, the blocks'. */
static void qr__bn_html_weights(QrHtml *h, QrBundle *bd) {
    if (!bd->have_w) return;
    qr_html_section(h, "weights", "Weight comparison");
    const char *t = qr__bn_read_text(bd, QR_BF_WEIGHTS ".txt");
    if (t) qr_html_pre(h, t);
    const char *wb = qr__bn_exists(bd, QR_BF_WEIGHT_BLOCKS ".txt") ? qr__bn_read_text(bd, QR_BF_WEIGHT_BLOCKS ".txt") : NULL;
    if (wb) qr_html_pre(h, wb);   /* blocked (weight-only) weights only */
}

/* A gallery of the distribution plots PREFIX/<tensor>_<i>.png that were written. */
static void qr__bn_html_gallery(QrHtml *h, QrBundle *bd, const char *prefix) {
    qr_html_gallery_begin(h);
    for (int i = 0; i < bd->dist.n; i++) {
        char safe[200];
        qr_zip_safe_component(safe, sizeof safe, bd->dist.d[i].name);
        const char *png = qr_arena_printf(&bd->arena, "%s/%s_%d.png", prefix, safe, i);
        if (qr__bn_exists(bd, png)) qr_html_image(h, png, bd->dist.d[i].name, bd->dist.d[i].name, 0, 0);
    }
    qr_html_gallery_end(h);
}

/* "Value distributions" and "Per-channel distributions": the histograms and box plots. */
static void qr__bn_html_distributions(QrHtml *h, QrBundle *bd) {
    if (!bd->have_dist || !bd->dist.n) return;
    qr_html_section(h, "distribution", "Value distributions");
    qr_html_para(h, "Top sensitive weights and activations: histogram of the baseline (float) values and of the "
                 "analysis (quantized) values on the same bins, the abs-max (solid line), the quantization threshold "
                 "scale·qmax (dashed) and, below, the histogram of the error analysis − baseline. Mass beyond the "
                 "threshold is clipped; a threshold far beyond the data wastes resolution.");
    qr__bn_html_gallery(h, bd, QR_BF_PLOT_DIST);
    qr_html_section(h, "channelwise", "Per-channel distributions");
    qr_html_para(h, "Top sensitive weights and activations: per-channel min, quartiles, median, mean and max of the "
                 "baseline values; outlier channels (abs-max far above the median channel's) are highlighted — they "
                 "call for per-channel quantization.");
    qr__bn_html_gallery(h, bd, QR_BF_PLOT_CHANNEL);
}

/* "Model structure check": the check's findings, formatted as model_check_result.txt. */
static void qr__bn_html_check(QrHtml *h, QrBundle *bd) {
    qr_html_section(h, "check", "Model structure check");
    char *txt = NULL;
    size_t len = 0;
    if (!bd->have_chk || qr_check_format(&bd->chk, &txt, &len) != QR_OK) { qr_err_clear(); return; }
    char *t = realloc(txt, len + 1);
    if (t) { t[len] = 0; qr_html_pre(h, t); }
    free(t ? t : txt);
}

/* "Baseline ⇄ analysis match": the equivalence verdict and the match table's text file. */
static void qr__bn_html_match(QrHtml *h, QrBundle *bd) {
    qr_html_section(h, "match", "Baseline ⇄ analysis match");
    if (bd->have_eq) qr_html_para(h, qr_equiv_verdict(bd->se.b, &bd->se.m, &bd->eq));
    const char *mt = qr__bn_read_text(bd, QR_BF_MATCH ".txt");
    if (mt) qr_html_pre(h, mt);
}

/* "Files": every listed file of qr_bundle_files this bundle holds (summary.json and
 * manifest.json are written after index.html). */
static void qr__bn_html_files(QrHtml *h, QrBundle *bd) {
    qr_html_section(h, "files", "Files");
    const char *present[QR_ARRAY_LEN(qr_bundle_files)];
    int np = 0;
    for (int i = 0; i < QR_ARRAY_LEN(qr_bundle_files); i++) {
        const char *f = qr_bundle_files[i].name;
        if (qr_bundle_files[i].listed && (!strcmp(f, QR_BF_SUMMARY) || !strcmp(f, QR_BF_MANIFEST) || qr__bn_exists(bd, f)))
            present[np++] = f;
    }
    qr_html_files(h, present, np);
}

/* index.html: the sections in page order. The deployment kit's (dump, repro) and the data
 * set's sections are rendered by their own modules (deploy/hooks.c, analysis/dataset.c,
 * analysis/sens.c). */
static QrStatus qr_bundle_write_html(QrBundle *bd) {
    QrHtml h;
    qr_html_init(&h, "qreport — quantization accuracy report");
    qr__bn_html_verdict(&h, bd);
    if (bd->have_cmp) qr__bn_html_compare(&h, &bd->se, &bd->cmp, qr__bn_exists(bd, QR_BF_PLOT_PER_LAYER));
    qr__bn_html_sensitivity(&h, bd);
    qr__bn_html_accumulated(&h, bd);
    qr__bn_html_advisor(&h, bd);
    qr__bn_html_demotion(&h, bd);
    qr__bn_html_whatif(&h, bd);
    qr__bn_html_weights(&h, bd);
    qr__bn_html_distributions(&h, bd);
    qr_deploy_runall_html(&h, &bd->dep);
    qr_ds_runall_html(&h, &bd->dsr, &bd->se, bd->dir);
    if (bd->dsr.on) qr_sens_set_html(&h, &bd->dss, bd->dir);
    qr__bn_html_check(&h, bd);
    qr__bn_html_match(&h, bd);
    qr__bn_html_files(&h, bd);
    char *txt = NULL;
    size_t len = 0;
    QrStatus st = qr_html_finish(&h, &txt, &len);
    if (st != QR_OK) { qr_html_free(&h); return st; }
    st = qr_file_write_atomic(qr_bundle_path(bd, QR_BF_INDEX), txt, len);
    free(txt);
    return st;
}


/* ==== plots ============================================================================ */

/* The plots, one job each, rendered and encoded in parallel (qr_bundle_write_plots): job 0 the
 * per-layer metrics, 1 the cumulative error, then a histogram per distribution, a box plot
 * per distribution, and last the sensitivity bars. Titles go to the job's own arena. */
static int qr__bn_plot_jobs(const QrBundle *bd) { return 3 + 2 * (bd->have_dist ? bd->dist.n : 0); }

static QrStatus qr__bn_save(const QrBundle *bd, QrCanvas *c, const char *name) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", bd->dir, name);
    QrStatus st = qr_plot_save(c, path);
    qr_canvas_free(c);
    return st;
}

/* Cosine and SQNR per layer (with the local ones) of a comparison, as a PNG at path. */
static QrStatus qr__bn_plot_per_layer(const QrSession *se, const QrCompare *cmp, const char *path) {
    int n = cmp->n;
    double *cos = malloc((size_t)n * sizeof(double) * 4 + 1);
    const char **names = malloc((size_t)n * sizeof *names + 1);
    if (!cos || !names) { free(cos); free(names); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    double *sq = cos + n, *lcos = cos + 2 * n, *lsq = cos + 3 * n;
    for (int k = 0; k < n; k++) {
        const QrLayerRow *r = &cmp->rows[k];
        names[k] = se->b->nodes[se->m.m[r->match].b_node].name;
        cos[k] = r->has_m ? r->m.cosine : NAN;
        sq[k] = r->has_m ? r->m.sqnr : NAN;
        lcos[k] = r->has_local ? r->local.cosine : NAN;
        lsq[k] = r->has_local ? r->local.sqnr : NAN;
    }
    QrSeries s_cos[2] = { { "Cosine", cos, false }, { "local Cosine", lcos, true } };
    QrSeries s_sq[2] = { { "SQNR", sq, false }, { "local SQNR", lsq, true } };
    QrLineChart lc = { .title = "Per-layer similarity to the baseline", .x_label = "layer (baseline order)", .n_x = n,
                       .x_names = names, .n_panels = 2 };
    lc.panels[0] = (QrLinePanel){ .y_label = "Cosine", .series = s_cos, .n_series = 2, .y_scale = QR_SCALE_LINEAR };
    lc.panels[1] = (QrLinePanel){ .y_label = "SQNR (dB)", .series = s_sq, .n_series = 2, .y_scale = QR_SCALE_LINEAR };
    QrCanvas c;
    QrStatus st = qr_plot_line(&lc, &c);
    if (st == QR_OK) { st = qr_plot_save(&c, path); qr_canvas_free(&c); }
    free(cos);
    free(names);
    return st;
}

static QrStatus qr__bn_plot_job(void *ctx, int job, int tid) {
    QR_UNUSED(tid);
    const QrBundle *bd = ctx;
    const QrSession *se = &bd->se;
    int nd = bd->have_dist ? bd->dist.n : 0;
    QrArena ar = {0};
    QrStatus st = QR_OK;
    if (job == 0 && bd->have_cmp && bd->cmp.n) {
        char path[4400];
        snprintf(path, sizeof path, "%s/" QR_BF_PLOT_PER_LAYER, bd->dir);
        st = qr__bn_plot_per_layer(se, &bd->cmp, path);
    } else if (job == 1 && bd->have_acc && se->m.n) {
        int n = 0, ns = bd->acc.n_settings;
        double *y = malloc(((size_t)se->m.n * (size_t)ns + 1) * sizeof(double));
        const char **names = malloc(((size_t)se->m.n + 1) * sizeof *names);
        QrSeries ser[QR_ARRAY_LEN(bd->acc.setting)];
        if (!y || !names) { free(y); free(names); st = qr_errf(QR_ERR_NOMEM, "out of memory"); goto done; }
        for (int i = 0; i < se->m.n; i++) if (se->vis[i] >= 0) names[n++] = se->b->nodes[se->m.m[i].b_node].name;
        for (int k = 0; k < ns; k++) {
            int j = 0;
            for (int i = 0; i < se->m.n; i++)
                if (se->vis[i] >= 0) y[(size_t)k * (size_t)n + (size_t)j++] = bd->acc.val[(size_t)i * (size_t)ns + (size_t)k];
            ser[k] = (QrSeries){ bd->acc.setting[k], y + (size_t)k * (size_t)n, k >= 3 };
        }
        QrLineChart lc = { .title = "Cumulative error along the graph", .x_label = "layer (baseline order)", .n_x = n,
                           .x_names = names, .n_panels = 1 };
        lc.panels[0] = (QrLinePanel){ .y_label = qr_metric_name(bd->acc.metric), .series = ser, .n_series = ns,
                                      .y_scale = QR_SCALE_LINEAR };
        QrCanvas c;
        st = n ? qr_plot_line(&lc, &c) : QR_OK;
        if (st == QR_OK && n) st = qr__bn_save(bd, &c, QR_BF_PLOT_ACCUM);
        free(y);
        free(names);
    } else if (job >= 2 && job < 2 + nd) {
        int i = job - 2;
        const QrDist *d = &bd->dist.d[i];
        char safe[200];
        qr_zip_safe_component(safe, sizeof safe, d->name);
        /* over a data set: the node is left out of the title for the number of samples (and values past the bins) */
        const char *title = d->n_samples <= 0
            ? qr_arena_printf(&ar, "Distribution of %s %s%s%s", d->is_weight ? "weight" : "activation", d->name,
                              d->node && strcmp(d->node, d->name) ? " at " : "", d->node && strcmp(d->node, d->name) ? d->node : "")
            : d->n_below || d->n_above
                ? qr_arena_printf(&ar, "%s over %d samples (%lld outside the bins)", d->name, d->n_samples,
                                  (long long)(d->n_below + d->n_above))
                : qr_arena_printf(&ar, "%s over %d samples", d->name, d->n_samples);
        QrHistChart hc = { .title = title,
                           .base_name = "baseline (float)", .anal_name = "analysis (quantized)",
                           .threshold = d->threshold, .have_clip_lo = isfinite(d->clip_lo) && d->clip_lo != -d->threshold,
                           .clip_lo = d->clip_lo, .y_scale = QR_SCALE_AUTO, .error_panel = true,
                           .h_base = d->h_base, .h_anal = d->h_anal, .h_err = d->h_err, .n_bins = d->n_bins,
                           .lo = d->lo, .hi = d->hi, .err_lo = d->err_lo, .err_hi = d->err_hi,
                           .absmax = d->n ? d->absmax_base : -1, .n_nonfinite = d->n_nonfinite };
        QrCanvas c;
        st = qr_plot_hist(&hc, &c);
        if (st == QR_OK) {
            st = qr__bn_save(bd, &c, qr_arena_printf(&ar, QR_BF_PLOT_DIST "/%s_%d.png", safe, i));
        }
    } else if (job >= 2 + nd && job < 2 + 2 * nd) {
        int i = job - 2 - nd;
        const QrDist *d = &bd->dist.d[i];
        if (!d->n_ch || !d->ch) goto done;
        QrBoxStats *bx = malloc((size_t)d->n_ch * sizeof *bx);
        bool *ol = malloc((size_t)d->n_ch * sizeof *ol);
        if (!bx || !ol) { free(bx); free(ol); st = qr_errf(QR_ERR_NOMEM, "out of memory"); goto done; }
        for (int c2 = 0; c2 < d->n_ch; c2++) {
            bx[c2] = (QrBoxStats){ d->ch[c2].min, d->ch[c2].q1, d->ch[c2].median, d->ch[c2].q3, d->ch[c2].max, d->ch[c2].mean };
            ol[c2] = d->ch[c2].outlier;
        }
        char safe[200];
        qr_zip_safe_component(safe, sizeof safe, d->name);
        const char *title = d->n_samples <= 0
            ? qr_arena_printf(&ar, "Per-channel distribution of %s %s (%d outlier channel%s)", d->is_weight ? "weight" : "activation",
                              d->name, d->n_outlier, d->n_outlier == 1 ? "" : "s")
            : qr_arena_printf(&ar, "%s per channel, %d samples (%d outlier%s)", d->name, d->n_samples, d->n_outlier,
                              d->n_outlier == 1 ? "" : "s");
        QrBoxChart bc = { .title = title,
                          .y_label = d->n_samples > 0 && d->rank_err > 0
                              ? qr_arena_printf(&ar, "value (quartiles within %.2g%% rank)", 100 * d->rank_err) : "value",
                          .x_label = qr_arena_printf(&ar, "channel (axis %d)", d->ch_axis),
                          .boxes = bx, .n = d->n_ch, .outlier = ol };
        QrCanvas c;
        st = qr_plot_box(&bc, &c);
        if (st == QR_OK) {
            st = qr__bn_save(bd, &c, qr_arena_printf(&ar, QR_BF_PLOT_CHANNEL "/%s_%d.png", safe, i));
        }
        free(bx);
        free(ol);
    } else if (job == 2 + 2 * nd && bd->have_sens && bd->sens.n) {
        int n = QR_MIN(bd->sens.n, 15);
        double *v = malloc((size_t)n * sizeof(double));
        const char **names = malloc((size_t)n * sizeof *names);
        if (!v || !names) { free(v); free(names); st = qr_errf(QR_ERR_NOMEM, "out of memory"); goto done; }
        for (int k = 0; k < n; k++) {
            names[k] = qr_arena_printf(&ar, "%s (%s)", bd->sens.rows[k].name, qr_sens_type_name(bd->sens.rows[k].type));
            v[k] = qr_metric_get(&bd->sens.rows[k].m, bd->sens.opts.metric);
        }
        QrBarChart bc = { .title = qr_arena_printf(&ar, "Top-%d sensitive quantizers (%s at the output, only them on)",
                                                   n, qr_metric_name(bd->sens.opts.metric)),
                          .x_label = qr_metric_name(bd->sens.opts.metric), .names = names, .values = v, .n = n, .top_k = n,
                          .x_scale = QR_SCALE_LINEAR };
        QrCanvas c;
        st = qr_plot_bars(&bc, &c);
        if (st == QR_OK) st = qr__bn_save(bd, &c, QR_BF_PLOT_SENS);
        free(v);
        free(names);
    }
done:
    qr_arena_free(&ar);
    return st;
}

static QrStatus qr_bundle_write_plots(QrBundle *bd) {
    QR_TRY(qr_mkdir_p(qr_bundle_path(bd, QR_BF_PLOTS)));
    if (bd->have_dist && bd->dist.n) {
        QR_TRY(qr_mkdir_p(qr_bundle_path(bd, QR_BF_PLOT_DIST)));
        bool box = false;
        for (int i = 0; i < bd->dist.n; i++) box |= bd->dist.d[i].n_ch && bd->dist.d[i].ch;
        if (box) QR_TRY(qr_mkdir_p(qr_bundle_path(bd, QR_BF_PLOT_CHANNEL)));
    }
    return qr_session_jobs(qr__bn_plot_jobs(bd), qr__bn_plot_job, bd, NULL);
}


/* ==== compare's own page ================================================================ */

static QrStatus qr_bundle_compare_page(const QrSession *se, const QrCompare *cmp, const char *advisor_txt, const char *dir) {
    QrArena ar = {0};
    QrStatus st = qr_mkdir_p(qr_arena_printf(&ar, "%s/" QR_BF_PLOTS, dir));
    bool plot = false;
    if (st == QR_OK && cmp->n) {
        st = qr__bn_plot_per_layer(se, cmp, qr_arena_printf(&ar, "%s/" QR_BF_PLOT_PER_LAYER, dir));
        plot = st == QR_OK;
    }
    QrHtml h;
    qr_html_init(&h, "qreport — per-layer comparison");
    qr_html_subtitle(&h, qr_arena_printf(&ar, "baseline %s · analysis %s · qreport %s", se->b->path, se->a->path, QR_VERSION));
    QrHtmlLevel lv = qr__bn_cos_level(cmp->out.cosine);
    qr_html_verdict_begin(&h, lv, qr_arena_printf(&ar, "Model output Cosine %.6f, SQNR %.2f dB", cmp->out.cosine, cmp->out.sqnr));
    qr_html_metric(&h, "Output Cosine", qr_arena_printf(&ar, "%.6f", cmp->out.cosine), lv, NULL);
    qr_html_metric(&h, "Output SQNR", qr_arena_printf(&ar, "%.2f dB", cmp->out.sqnr),
                   cmp->out.sqnr >= 30 ? QR_HTML_GOOD : cmp->out.sqnr >= 20 ? QR_HTML_WARN : QR_HTML_BAD, NULL);
    qr_html_metric(&h, "Output L1", qr_arena_printf(&ar, "%.6g", cmp->out.l1), QR_HTML_NONE, NULL);
    qr_html_verdict_end(&h);
    qr__bn_html_compare(&h, se, cmp, plot);
    if (advisor_txt) {
        qr_html_section(&h, "advisor", "Abnormal layers and fixes");
        qr_html_pre(&h, advisor_txt);
        const char *files[] = { QR_BF_ADVISOR };
        qr_html_files(&h, files, 1);
    }
    char *txt = NULL;
    size_t len = 0;
    if (st == QR_OK) st = qr_html_finish(&h, &txt, &len);
    else qr_html_free(&h);
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&ar, "%s/" QR_BF_COMPARE_HTML, dir), txt, len);
    free(txt);
    qr_arena_free(&ar);
    return st;
}
