/* runall/bundle — implementation. See bundle.h. Renders what runall/ computed: summary.json,
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
    if (!bd->ok[QR_STAGE_COMPARE]) { *level = QR_HTML_BAD; return "The per-layer comparison failed; see the failed analyses."; }
    double c = bd->cmp.out.cosine;
    *level = qr__bn_cos_level(c);
    const char *what = *level == QR_HTML_GOOD ? "close to the baseline" : *level == QR_HTML_WARN ? "noticeably degraded"
                     : "badly degraded";
    QrArena *a = (QrArena *)&bd->arena;
    if (bd->cmp.first_drop >= 0) {
        const QrMatch *m = &bd->se.m.m[bd->cmp.rows[bd->cmp.first_drop].match];
        return qr_arena_printf(a, "Model output Cosine %.6f, SQNR %.2f dB: %s. Similarity first drops below %.4g at '%s'.",
                               c, bd->cmp.out.sqnr, what, bd->run.cos_threshold, bd->se.b->nodes[m->b_node].name);
    }
    return qr_arena_printf(a, "Model output Cosine %.6f, SQNR %.2f dB: %s.", c, bd->cmp.out.sqnr, what);
}

/* The recommended action (HTML verdict and terminal summary), or NULL without sensitivity
 * rows: the what-if's measured int16 promotion when it has one, else its measured float step
 * (both only with a measured gain: whatif.c never recommends a step that gains nothing), else
 * the top sensitive node (in float when it is a weight-only node: int16 does not apply to it). */
static bool qr__bn_weight_only_op(const char *op) {
    return op && (!strcmp(op, "MatMulNBits") || !strcmp(op, "MatMulBnb4") || !strcmp(op, "GatherBlockQuantized"));
}

static const char *qr_bundle_action(const QrBundle *bd) {
    if (!bd->ok[QR_STAGE_SENS] || !bd->sens.n) return NULL;
    QrArena *a = (QrArena *)&bd->arena;
    if (bd->ok[QR_STAGE_WHATIF] && bd->wi.rec_int16 >= 0) {
        const QrWhatIfStep *w = &bd->wi.steps[bd->wi.rec_int16];
        return qr_arena_printf(a, "Recommended action: promote the top-%d sensitive node%s to int16 (output Cosine %.6f → %.6f, "
                               "measured; see " QR_BF_WHATIF " for ready-to-use node lists).", w->k, w->k == 1 ? "" : "s",
                               bd->wi.as_is.cosine, w->int16.cosine);
    }
    if (bd->ok[QR_STAGE_WHATIF] && bd->wi.rec_fp >= 0) {
        const QrWhatIfStep *w = &bd->wi.steps[bd->wi.rec_fp];
        const QrWhatIfStep *w8 = bd->wi.rec_wq8 >= 0 ? &bd->wi.steps[bd->wi.rec_wq8] : NULL,
                           *wh = bd->wi.rec_wq_half >= 0 ? &bd->wi.steps[bd->wi.rec_wq_half] : NULL;
        char alt[512] = "";
        size_t n = 0;
        if (w8) n += (size_t)snprintf(alt + n, sizeof alt - n, "; or their weights with 8-bit codes (top-%d: %.6f)", w8->k,
                                      w8->wq8.cosine);
        if (wh && n < sizeof alt)
            snprintf(alt + n, sizeof alt - n, "%s block size %d (top-%d: %.6f)", w8 ? ", or with" : "; or their weights with",
                     wh->wq_block / 2, wh->k, wh->wq_half.cosine);
        return qr_arena_printf(a, "Recommended action: keep the top-%d sensitive node%s in float (output Cosine %.6f → %.6f, "
                               "measured%s; see " QR_BF_WHATIF " for ready-to-use node lists).", w->k, w->k == 1 ? "" : "s",
                               bd->wi.as_is.cosine, w->fp.cosine, alt);
    }
    const QrSensRow *top = qr_sens_top(&bd->sens, 0);
    if (qr__bn_weight_only_op(top->op_type))
        return qr_arena_printf(a, "Recommended action: keep '%s' (a weight-only %s node) in float first, then re-check the "
                               "cumulative-error curves.", top->name, top->op_type);
    return qr_arena_printf(a, "Recommended action: keep '%s' in higher precision (int16 or float) first, then re-check the "
                           "cumulative-error curves.", top->name);
}

/* summary.json's beginning (the driver adds the stages' sections, then qr_bundle_json_end). */
static void qr_bundle_json_begin(QrBundle *bd, QrJson *j) {
    QrHtmlLevel lv;
    const char *verdict = qr_bundle_verdict(bd, &lv);
    qr_json_init(j);
    qr_json_obj_begin(j);
    qr_json_kv_int(j, "schema_version", 1);
    qr_json_key(j, "verdict");
    qr_json_obj_begin(j);
    qr_json_kv_str(j, "level", lv == QR_HTML_GOOD ? "good" : lv == QR_HTML_WARN ? "warning" : "bad");
    qr_json_kv_str(j, "text", verdict);
    if (bd->ok[QR_STAGE_COMPARE] && bd->cmp.first_drop >= 0)
        qr_json_kv_str(j, "first_drop", bd->se.b->nodes[bd->se.m.m[bd->cmp.rows[bd->cmp.first_drop].match].b_node].name);
    qr_json_obj_end(j);
    qr_json_kv_str(j, "baseline_form", qr_session_baseline_form(&bd->se));
    qr_json_kv_str(j, "baseline_form_text", qr_session_baseline_form_text(&bd->se));
    if (bd->ok[QR_STAGE_COMPARE]) { qr_json_key(j, "model_output"); qr__bn_json_metrics(j, &bd->cmp.out); }
}

static QrStatus qr_bundle_json_end(QrBundle *bd, QrJson *j) {
    qr__bn_json_failed(j, bd);
    qr_json_obj_end(j);
    return qr__bn_write_json(bd, j, QR_BF_SUMMARY);
}

static void qr_bundle_json_match(QrJson *j, QrBundle *bd) {
    if (bd->eq.max_abs) {
        qr_json_key(j, "equivalence");
        qr_json_obj_begin(j);
        qr_json_kv_bool(j, "pass", bd->eq.equivalent);
        qr_json_kv_num(j, "worst_relative_difference", bd->eq.worst_rel);
        qr_json_kv_str(j, "text", qr_match_equiv_verdict(bd->se.b, &bd->se.m, &bd->eq, &(QrVerdict){0}));
        qr_json_obj_end(j);
    }
    int matched = 0;
    for (int i = 0; i < bd->se.m.n; i++) matched += bd->se.m.m[i].a_node >= 0;
    qr_json_key(j, "match");
    qr_json_obj_begin_compact(j);
    qr_json_kv_int(j, "baseline_values", bd->se.m.n);
    qr_json_kv_int(j, "matched", matched);
    qr_json_kv_int(j, "analysis_unmatched", bd->se.m.n_unmatched_a);
    qr_json_kv_bool(j, "verification_ran", bd->se.m.verified_run);
    qr_json_kv_int(j, "verified", bd->se.m.n_verified);
    qr_json_kv_int(j, "unverified", bd->se.m.n_unverified);
    qr_json_kv_num(j, "tolerance", QR_EQUIV_TOL);
    qr_json_obj_end(j);
}

static void qr_bundle_json_sens(QrJson *j, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_SENS]) return;
    qr_json_key(j, "sensitivity");
    qr_json_obj_begin(j);
    qr_json_kv_str(j, "mode", bd->sens.opts.off_one ? "off-one" : "one-on");
    qr_json_kv_str(j, "metric", qr_metric_name(bd->sens.opts.metric));
    qr_json_kv_int(j, "node_executions", bd->sens.n_exec);
    qr_json_kv_int(j, "node_executions_full_reruns", bd->sens.n_full);
    qr_json_key(j, "top");
    qr_json_arr_begin(j);
    for (int k = 0; k < bd->sens.n && k < 10; k++) {
        const QrSensRow *row = &bd->sens.rows[k];
        qr_json_obj_begin_compact(j);
        qr_json_kv_str(j, "op_name", row->name);
        qr_json_kv_str(j, "sensitive_type", qr_sens_type_name(row->type));
        qr_json_kv_str(j, "op_type", row->op_type);
        qr_json_key(j, "metrics");
        qr__bn_json_metrics(j, &row->m);
        if (bd->sens.opts.off_one) qr_json_kv_num(j, "gain", qr_sens_gain(&bd->sens, row));
        qr_json_kv_str(j, "dtype", row->dtype);
        qr_json_obj_end(j);
    }
    qr_json_arr_end(j);
    qr_json_obj_end(j);
}

static void qr_bundle_json_layers(QrJson *j, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_COMPARE]) return;
    qr_json_key(j, "layers");
    qr_json_arr_begin(j);
    for (int k = 0; k < bd->cmp.n; k++) {
        const QrLayerRow *r = &bd->cmp.rows[k];
        const QrMatch *m = &bd->se.m.m[r->match];
        qr_json_obj_begin_compact(j);
        qr_json_kv_int(j, "Index", k);
        qr_json_kv_str(j, "mod_name", bd->se.b->nodes[m->b_node].name);
        qr_json_kv_str(j, "base_op_type", bd->se.b->nodes[m->b_node].op_type);
        qr_json_kv_str(j, "analy_op_type", bd->se.a->nodes[m->a_node].op_type);
        qr_json_kv_str(j, "base_tensor", bd->se.b->values[m->b_value].name);
        qr_json_kv_str(j, "analy_tensor", bd->se.a->values[m->a_value].name);
        if (r->has_m) {
            qr_json_kv_num(j, "Cosine", r->m.cosine);
            qr_json_kv_num(j, "MSE", r->m.mse);
            qr_json_kv_num(j, "L1", r->m.l1);
            qr_json_kv_num(j, "KL", r->m.kl);
            qr_json_kv_num(j, "SQNR", r->m.sqnr);
            qr_json_kv_num(j, "Atol", r->m.atol);
            qr_json_kv_num(j, "Rtol", r->m.rtol);
        }
        if (r->has_local) {
            qr_json_kv_num(j, "local_Cosine", r->local.cosine);
            qr_json_kv_num(j, "local_SQNR", r->local.sqnr);
        }
        QrSplitView sv;
        if (qr_compare_split(&r->sp, &sv)) {
            const char *const keys[] = { "err_weight", "err_input", "err_output_round", "err_output_clip", "clip_frac",
                                         "steps_rms", "noise_ratio" };
            const double vals[] = { sv.err_w, sv.err_i, sv.err_round, sv.err_clip, sv.clip_frac, sv.steps_rms, sv.noise_ratio };
            for (int q = 0; q < QR_ARRAY_LEN(vals); q++) if (vals[q] == vals[q]) qr_json_kv_num(j, keys[q], vals[q]);
            qr_json_kv_str(j, "dominant", sv.dominant);
            if (r->sp.w_channel >= 0) qr_json_kv_int(j, "weight_worst_channel", r->sp.w_channel);
        }
        qr_json_obj_end(j);
    }
    qr_json_arr_end(j);
}

static void qr_bundle_json_accum(QrJson *j, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_ACCUM]) return;
    qr_json_key(j, "accumulated_error_outputs");
    qr_json_obj_begin(j);
    for (int k = 0; k < bd->acc.n_settings; k++) { qr_json_key(j, bd->acc.setting[k]); qr__bn_json_metrics(j, &bd->acc.out[k]); }
    qr_json_obj_end(j);
}

static void qr_bundle_json_whatif(QrJson *j, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_WHATIF]) return;
    qr_json_key(j, "what_if");
    qr_json_obj_begin(j);
    qr_json_kv_num(j, "target_cosine", bd->wi.target);
    qr_json_key(j, "steps");
    qr_json_arr_begin(j);
    for (int k = 0; k < bd->wi.n_steps; k++) {
        const QrWhatIfStep *w = &bd->wi.steps[k];
        qr_json_obj_begin_compact(j);
        qr_json_kv_int(j, "k", w->k);
        qr_json_key(j, "int16");
        qr__bn_json_metrics(j, &w->int16);
        qr_json_key(j, "float");
        qr__bn_json_metrics(j, &w->fp);
        if (w->n_wq8) { qr_json_key(j, "weight_only_int8"); qr__bn_json_metrics(j, &w->wq8); }
        if (w->n_wq_half) { qr_json_key(j, "weight_only_half_block"); qr__bn_json_metrics(j, &w->wq_half); }
        qr_json_obj_end(j);
    }
    qr_json_arr_end(j);
    if (bd->wi.rec_int16 >= 0) qr_json_kv_int(j, "recommended_int16_k", bd->wi.steps[bd->wi.rec_int16].k);
    if (bd->wi.rec_fp >= 0) qr_json_kv_int(j, "recommended_float_k", bd->wi.steps[bd->wi.rec_fp].k);
    qr_json_obj_end(j);
}

static void *qr__bn_hash_main(void *arg) {
    QrBundle *bd = arg;
    for (int k = 0; k < bd->n_hash; k++) {
        if (bd->hash[k].known) continue;     /* an input file's, from the bytes the CLI read */
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
    for (int i = 0; i < bd->run.n_input_paths && bd->n_hash < QR_ARRAY_LEN(bd->hash); i++) {
        if (!bd->run.input_paths[i]) continue;
        const char *h = bd->run.input_sha256 ? bd->run.input_sha256[i] : NULL;
        bd->hash[bd->n_hash].path = bd->run.input_paths[i];
        if (h && strlen(h) == 2 * QR_SHA256_LEN) {
            memcpy(bd->hash[bd->n_hash].hex, h, 2 * QR_SHA256_LEN + 1);
            bd->hash[bd->n_hash].ok = bd->hash[bd->n_hash].known = true;
        }
        bd->n_hash++;
    }
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
    qr_json_kv_str(&j, "command_line", bd->run.cmdline);
    qr_json_key(&j, "files");
    qr_json_arr_begin(&j);
    qr__bn_json_file(bd, &j, "baseline", bd->se.b->path);
    qr__bn_json_file(bd, &j, "analysis", bd->se.a->path);
    for (int i = 0; i < bd->run.n_input_paths; i++)
        if (bd->run.input_paths[i]) qr__bn_json_file(bd, &j, "input", bd->run.input_paths[i]);
    qr_json_arr_end(&j);
    qr_json_kv_bool(&j, "random_input", bd->run.random_input);
    qr_json_key(&j, "stages");
    qr_json_arr_begin(&j);
    for (int k = 0; k < bd->prog.n_stages; k++) {
        qr_json_obj_begin_compact(&j);
        qr_json_kv_str(&j, "name", bd->prog.stages[k].name);
        if (repro) {
            qr_json_kv_null(&j, "seconds");
            qr_json_kv_null(&j, "user_seconds");
            qr_json_kv_null(&j, "sys_seconds");
        } else {
            qr_json_kv_num(&j, "seconds", bd->prog.stages[k].seconds);
            qr_json_kv_num(&j, "user_seconds", bd->prog.stages[k].user);
            qr_json_kv_num(&j, "sys_seconds", bd->prog.stages[k].sys);
        }
        qr_json_kv_bool(&j, "ok", bd->prog.stages[k].ok);
        qr_json_obj_end(&j);
    }
    qr_json_arr_end(&j);
    if (repro) qr_json_kv_null(&j, "peak_rss_bytes");
    else qr_json_kv_int(&j, "peak_rss_bytes", qr_progress_peak_rss());
    if (bd->ok[QR_STAGE_SENS]) {
        qr_json_kv_int(&j, "sensitivity_node_executions", bd->sens.n_exec);
        qr_json_kv_int(&j, "sensitivity_node_executions_full_reruns", bd->sens.n_full);
    }
    qr_json_key(&j, "warnings");
    qr_json_arr_begin(&j);
    for (int k = 0; k < bd->run.n_warnings; k++) qr_json_str(&j, bd->run.warnings[k]);
    if (bd->run.random_input) qr_json_str(&j, "no input given: a deterministic random input was used");
    if (bd->se.tw.n_kept) qr_json_str(&j, bd->se.tw.note);
    qr_json_arr_end(&j);
    qr__bn_json_failed(&j, bd);
    qr_json_obj_end(&j);
    return qr__bn_write_json(bd, &j, QR_BF_MANIFEST);
}

/* ==== index.html: one function per section; runall's report stage calls them in page order ==== */

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

/* "Per-token output comparison" (logits outputs; tok[j] per graph output, vocab 0 for others; outs: the
 * analysis model's outputs): compare_outputs' table. */
/* The per-token section: its table from each output's metrics, computed here from outs against the
 * session's baseline outputs (which must still be there), or, when outs is NULL, taken from pre
 * (runall's tokens stage, QrBundle.tok_m). */
static void qr__bn_html_tokens(QrHtml *h, const QrSession *se, const QrTensor *outs, const QrTokAcc *tok, const QrMetrics *pre) {
    if (!tok) return;
    int n = se->b->n_outputs;
    QrMetrics *m = calloc((size_t)n + 1, sizeof *m);
    const QrTokAcc **pa = calloc((size_t)n + 1, sizeof *pa);
    bool ok = m && pa && (outs || pre);
    for (int j = 0; ok && j < n; j++) {
        if (!outs) m[j] = pre[j];
        else ok = qr_session_compare_outputs_sel(se, outs, j, &m[j]) == QR_OK;
        pa[j] = tok[j].vocab ? &tok[j] : NULL;
    }
    qr_err_clear();
    qr_html_section(h, "tokens", "Per-token output comparison");
    qr_html_para(h, "Logits outputs judged per token: KL(baseline ‖ analysis) of the softmax over the vocabulary (natural "
                 "log), the share of tokens whose top-1 agrees, the overlap of the top-5 sets, the RMS change of the "
                 "probability of the baseline's top token, the negative log-likelihood of both models on the labels "
                 "(--labels, else input_ids shifted by one) and the worst tokens (b<batch>:t<position> KL (baseline top-1 / "
                 "analysis top-1)).");
    QrTable t = {0};
    if (ok && qr_tok_table(se->b, m, pa, false, &t) == QR_OK) qr_html_table(h, &t, NULL);
    qr_table_free(&t);
    free(m);
    free(pa);
    const char *files[] = { QR_BF_DS_OUTPUTS ".txt", QR_BF_DS_OUTPUTS ".csv" };
    qr_html_files(h, files, 2);
}

/* The verdict box's tiles: output metrics, match coverage, baseline form, verified pairs,
 * equivalence. */
static void qr__bn_html_tiles(QrHtml *h, QrBundle *bd) {
    const QrSession *se = &bd->se;
    if (bd->ok[QR_STAGE_COMPARE]) {
        qr_html_metric(h, "Output Cosine", qr_arena_printf(&bd->arena, "%.6f", bd->cmp.out.cosine), qr__bn_cos_level(bd->cmp.out.cosine), NULL);
        qr_html_metric(h, "Output SQNR", qr_arena_printf(&bd->arena, "%.2f dB", bd->cmp.out.sqnr),
                       bd->cmp.out.sqnr >= 30 ? QR_HTML_GOOD : bd->cmp.out.sqnr >= 20 ? QR_HTML_WARN : QR_HTML_BAD, NULL);
        qr_html_metric(h, "Output L1", qr_arena_printf(&bd->arena, "%.6g", bd->cmp.out.l1), QR_HTML_NONE, NULL);
    }
    for (int j = 0; bd->ok[QR_STAGE_TOKENS] && j < se->b->n_outputs; j++) {
        if (!bd->tok[j].vocab) continue;
        QrTokStats ts;
        qr_tok_stats(&bd->tok[j], &ts);
        qr_html_metric(h, "Top-1 agreement", qr_arena_printf(&bd->arena, "%.4f", ts.top1_agree),
                       ts.top1_agree >= 0.99 ? QR_HTML_GOOD : ts.top1_agree >= 0.9 ? QR_HTML_WARN : QR_HTML_BAD,
                       qr_arena_printf(&bd->arena, "%s, %lld tokens", se->b->values[se->b->outputs[j]].name, (long long)ts.tokens));
        qr_html_metric(h, "Token KL mean", qr_arena_printf(&bd->arena, "%.4g", ts.kld_mean), QR_HTML_NONE,
                       qr_arena_printf(&bd->arena, "p99 %.4g, max %.4g", ts.kld_p99, ts.kld_max));
        if (ts.nll_tokens)
            qr_html_metric(h, "ln(PPL ratio)", qr_arena_printf(&bd->arena, "%.4g", ts.ln_ppl_ratio), QR_HTML_NONE,
                           qr_arena_printf(&bd->arena, "NLL %.4g → %.4g", ts.nll_base, ts.nll_analysis));
        break;
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
    if (bd->eq.max_abs)
        qr_html_metric(h, "Equivalence", bd->eq.equivalent ? "pass" : "FAIL", bd->eq.equivalent ? QR_HTML_GOOD : QR_HTML_BAD,
                       "quantizers off ⇒ baseline reproduced");
}

/* The verdict box's headlines: the three verified layers with the lowest Cosine, the most
 * sensitive quantizers with the recommended action, the advisor's main findings. */
static void qr__bn_html_headlines(QrHtml *h, QrBundle *bd) {
    const QrSession *se = &bd->se;
    if (bd->ok[QR_STAGE_COMPARE]) {
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
    if (bd->ok[QR_STAGE_SENS] && bd->sens.n) {
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
    if (bd->ok[QR_STAGE_ADVISOR] && bd->adv.n) {
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
    if (bd->ok[QR_STAGE_COMPARE] && bd->se.m.n)
        qr_html_raw(h, "<p>See where the error lives: <a href=\"#graph\">the model as a graph</a>, coloured by the per-layer "
                       "metrics.</p>\n");
    for (int k = 0; k < bd->n_fail; k++) qr_html_failed(h, bd->fail_name[k], bd->fail_msg[k]);
    qr_html_verdict_end(h);
}

/* "Quantization sensitivity": the ranking table and the top-k bars. */
static void qr_bundle_html_sensitivity(QrHtml *h, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_SENS]) return;
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
static void qr_bundle_html_accumulated(QrHtml *h, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_ACCUM]) return;
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
static void qr_bundle_html_advisor(QrHtml *h, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_ADVISOR]) return;
    qr_html_section(h, "advisor", "Abnormal layers and fixes");
    const char *t = qr__bn_read_text(bd, QR_BF_ADVISOR);
    if (t) qr_html_pre(h, t);
}

/* "int16 → int8 demotion" (--demote-int16): its text file. */
static void qr_bundle_html_demotion(QrHtml *h, QrBundle *bd) {
    if (!qr__bn_exists(bd, QR_BF_DEMOTION ".txt")) return;
    qr_html_section(h, "demotion", "int16 → int8 demotion");
    const char *t = qr__bn_read_text(bd, QR_BF_DEMOTION ".txt");
    if (t) qr_html_pre(h, t);
    const char *files[] = { QR_BF_DEMOTION ".txt", QR_BF_DEMOTION ".csv", QR_BF_DEMOTION ".json" };
    qr_html_files(h, files, 3);
}

/* "Mixed-precision what-if": one row per step of the top-k nodes at int16 and in float. */
static void qr_bundle_html_whatif(QrHtml *h, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_WHATIF]) return;
    qr_html_section(h, "whatif", "Mixed-precision what-if");
    bool na = false;
    for (int k = 0; k < bd->wi.n_steps; k++) na |= !bd->wi.steps[k].n_promoted;
    qr_html_paraf(h, "The top-k sensitive nodes re-run with their quantizers on a 16-bit grid (same threshold), and "
                  "separately in float.%s Target output Cosine %.4g; as is: %.6f.",
                  na ? " int16 n/a: none of those nodes' quantizers has a 16-bit form (weight-only nodes: float only; 8 "
                       "bits instead of 4 is not measured)." : "", bd->wi.target, bd->wi.as_is.cosine);
    QrTable t = {0};
    const char *cols[] = { "k", "int16 Cosine", "int16 SQNR", "float Cosine", "float SQNR", "nodes" };
    if (qr_table_init(&t, 6, cols) == QR_OK) {
        for (int k = 0; k < bd->wi.n_steps; k++) {
            const QrWhatIfStep *w = &bd->wi.steps[k];
            int ri;
            if (qr_table_add_row(&t, &ri) != QR_OK) break;
            qr_table_setf(&t, ri, 0, "%d", w->k);
            if (w->n_promoted) {
                qr_compare_num(&t, ri, 1, w->int16.cosine, false);
                qr_compare_num(&t, ri, 2, w->int16.sqnr, false);
            } else {   /* nothing to promote (e.g. weight-only nodes): the model as is */
                qr_table_set(&t, ri, 1, "n/a");
                qr_table_set(&t, ri, 2, "n/a");
            }
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
static void qr_bundle_html_weights(QrHtml *h, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_WEIGHTS]) return;
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
static void qr_bundle_html_distributions(QrHtml *h, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_DIST] || !bd->dist.n) return;
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
static void qr_bundle_html_check(QrHtml *h, QrBundle *bd) {
    qr_html_section(h, "check", "Model structure check");
    char *txt = NULL;
    size_t len = 0;
    if (!bd->ok[QR_STAGE_CHECK] || qr_check_format(&bd->chk, &txt, &len) != QR_OK) { qr_err_clear(); return; }
    char *t = realloc(txt, len + 1);
    if (t) { t[len] = 0; qr_html_pre(h, t); }
    free(t ? t : txt);
}

/* "Baseline ⇄ analysis match": the equivalence verdict and the match table's text file. */
static void qr_bundle_html_match(QrHtml *h, QrBundle *bd) {
    qr_html_section(h, "match", "Baseline ⇄ analysis match");
    if (bd->eq.max_abs) qr_html_para(h, qr_match_equiv_verdict(bd->se.b, &bd->se.m, &bd->eq, &(QrVerdict){0}));
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

/* ==== the graph view (index.html) and its overlays ====================================== */

/* The baseline model as report/graph's input: one box per compute node (a match row of the
 * session; Q/DQ, Identity, Cast and constants folded into the edges), groups by name prefix,
 * and the per-layer metrics the view colours by. Everything in bd->arena. */
typedef struct QrBnGraph {
    QrGlInput in;
    QrGlViewNode *nodes;         /* [in.n]: node i is match i */
    const char **group_name;     /* [in.n_groups] */
    QrGlMetric *metrics;
    int n_metrics, def_metric;
    int *row_of_match;           /* [se.m.n]: compare row, -1 */
    int n_rows;
} QrBnGraph;

static bool qr__bn_numeric(const char *s) {
    char *end;
    strtod(s, &end);
    return end != s && !*end;
}

/* The metrics: every numeric column of the per-layer table (so columns added later appear),
 * pooled over the data set, and the sensitivity of each row's node. */
static QrStatus qr__bn_graph_metrics(QrBundle *bd, QrBnGraph *gr) {
    const QrSession *se = &bd->se;
    QrArena *a = &bd->arena;
    bool with_lsb = false;
    for (int k = 0; k < bd->cmp.n; k++) with_lsb |= bd->cmp.rows[k].has_lsb;
    QrTable t = {0};
    QrStatus st = qr_compare_table(se, &bd->cmp, true, with_lsb, &t);
    int cap = t.n_cols + 8, nr = bd->cmp.n;
    gr->metrics = qr_arena_array(a, (size_t)cap, sizeof *gr->metrics);
    if (st == QR_OK && !gr->metrics) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int c = 0; st == QR_OK && c < t.n_cols; c++) {
        if (!strcmp(t.cols[c], "Index")) continue;
        bool any = false, all = true;
        for (int r = 0; r < t.n_rows && all; r++) {
            const char *s = t.rows[r][c];
            if (s && *s) { any = true; all = qr__bn_numeric(s); }
        }
        if (!any || !all) continue;
        double *v = qr_arena_array(a, (size_t)nr + 1, sizeof *v);
        if (!v) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
        for (int r = 0; r < nr; r++) v[r] = t.rows[r][c] && *t.rows[r][c] ? strtod(t.rows[r][c], NULL) : NAN;
        bool hb = strcasestr(t.cols[c], "cosine") || strcasestr(t.cols[c], "sqnr");
        if (!strcmp(t.cols[c], "Cosine")) gr->def_metric = gr->n_metrics;
        gr->metrics[gr->n_metrics++] = (QrGlMetric){ qr_arena_strdup(a, t.cols[c]), v, hb };
    }
    qr_table_free(&t);
    QR_TRY(st);
    if (with_lsb) {   /* --mode both: the share of elements whose int result differs from the sim's (lsb_diff's a/b) */
        double *v = qr_arena_array(a, (size_t)nr + 1, sizeof *v);
        if (!v) return qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int r = 0; r < nr; r++) {
            const QrLayerRow *lr = &bd->cmp.rows[r];
            v[r] = lr->has_lsb && lr->lsb_n > 0 ? (double)lr->lsb_diff / (double)lr->lsb_n : NAN;
        }
        gr->metrics[gr->n_metrics++] = (QrGlMetric){ "lsb_diff share", v, false };
    }
    if (bd->dsr.on && bd->dsr.dc.n_rows) {
        static const char *const names[] = { "pooled Cosine", "pooled SQNR", "pooled local_Cosine", "pooled local_SQNR" };
        double *v[4];
        for (int j = 0; j < 4; j++) {
            if (!(v[j] = qr_arena_array(a, (size_t)nr + 1, sizeof(double)))) return qr_errf(QR_ERR_NOMEM, "out of memory");
            for (int r = 0; r < nr; r++) v[j][r] = NAN;
        }
        for (int k = 0; k < bd->dsr.dc.n_rows; k++) {
            int i = bd->dsr.dc.rows[k].match, r = i >= 0 && i < se->m.n ? gr->row_of_match[i] : -1;
            if (r < 0) continue;
            QrMetrics m, l;
            qr_ds_row_metrics(&bd->dsr.dc.rows[k], &m, &l);
            if (bd->dsr.dc.rows[k].n_m) { v[0][r] = m.cosine; v[1][r] = m.sqnr; }
            if (bd->dsr.dc.rows[k].n_local) { v[2][r] = l.cosine; v[3][r] = l.sqnr; }
        }
        gr->def_metric = gr->n_metrics;
        for (int j = 0; j < 4; j++) gr->metrics[gr->n_metrics++] = (QrGlMetric){ names[j], v[j], true };
    }
    if (bd->ok[QR_STAGE_SENS] && bd->sens.n) {
        double *v = qr_arena_array(a, (size_t)nr + 1, sizeof *v);
        if (!v) return qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int r = 0; r < nr; r++) v[r] = NAN;
        QrMetricKind mk = bd->sens.opts.metric;
        for (int i = 0; i < se->m.n; i++) {
            int r = gr->row_of_match[i], rank = gr->nodes[i].sens_rank;
            if (r >= 0 && rank > 0) v[r] = qr_metric_get(&bd->sens.rows[rank - 1].m, mk);
        }
        gr->metrics[gr->n_metrics++] = (QrGlMetric){
            qr_arena_printf(a, "%s sensitivity (%s at the output)", bd->sens.opts.off_one ? "off-one" : "one-on", qr_metric_name(mk)),
            v, bd->sens.opts.off_one ? !(mk == QR_METRIC_COSINE || mk == QR_METRIC_SQNR) : (mk == QR_METRIC_COSINE || mk == QR_METRIC_SQNR) };
    }
    return QR_OK;
}

/* The group of every name prefix ("/layer2/layer2.1" of "/layer2/layer2.1/conv1/Conv") that
 * holds at least two nodes but not all of them; a group whose only member is one group is
 * left out (its member takes its place). */
static QrStatus qr__bn_graph_groups(QrBundle *bd, QrBnGraph *gr) {
    const QrSession *se = &bd->se;
    QrArena *a = &bd->arena;
    int n = gr->in.n;
    QrArena tmp = {0};
    QrStrMap map;
    QrStatus st = qr_strmap_init(&map, &tmp, (uint32_t)n * 2 + 16);
    int cap = 16, ng = 0;
    const char **pname = malloc((size_t)cap * sizeof *pname);
    int *ppar = malloc((size_t)cap * sizeof *ppar), *pcount = malloc((size_t)cap * sizeof *pcount);
    int *deepest = malloc(((size_t)n + 1) * sizeof *deepest);
    if (st == QR_OK && (!pname || !ppar || !pcount || !deepest)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < n; i++) {
        const char *nm = gr->nodes[i].name;
        int parent = -1;
        deepest[i] = -1;
        /* every prefix that ends before a '/' followed by more text */
        for (const char *p = nm + 1; st == QR_OK && *p; p++) {
            if (*p != '/' || p[-1] == '/' || !p[1]) continue;
            char *key = qr_arena_strndup(&tmp, nm, (size_t)(p - nm));
            if (!key) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
            int g = qr_strmap_get(&map, key);
            if (g < 0) {
                if (ng == cap) {
                    cap *= 2;
                    const char **n1 = realloc(pname, (size_t)cap * sizeof *pname);
                    if (n1) pname = n1;
                    int *n2 = realloc(ppar, (size_t)cap * sizeof *ppar);
                    if (n2) ppar = n2;
                    int *n3 = realloc(pcount, (size_t)cap * sizeof *pcount);
                    if (n3) pcount = n3;
                    if (!n1 || !n2 || !n3) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
                }
                g = ng++;
                pname[g] = key;
                ppar[g] = parent;
                pcount[g] = 0;
                st = qr_strmap_put(&map, &tmp, key, g);
            }
            if (st == QR_OK) pcount[g]++;
            parent = g;
        }
        deepest[i] = parent;
        QR_UNUSED(se);
    }
    bool *keep = st == QR_OK ? calloc((size_t)ng + 1, sizeof *keep) : NULL;
    int *items = st == QR_OK ? calloc((size_t)ng + 1, sizeof *items) : NULL, *only = st == QR_OK ? calloc((size_t)ng + 1, sizeof *only) : NULL;
    if (st == QR_OK && (!keep || !items || !only)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        for (int g = 0; g < ng; g++) keep[g] = pcount[g] >= 2 && pcount[g] < n;
        for (bool changed = true; changed;) {
            changed = false;
            memset(items, 0, (size_t)ng * sizeof *items);
            for (int g = 0; g < ng; g++) only[g] = -1;
            for (int i = 0; i < n; i++) {
                int g = deepest[i];
                while (g >= 0 && !keep[g]) g = ppar[g];
                if (g >= 0) items[g]++;
            }
            for (int g = 0; g < ng; g++) {
                if (!keep[g]) continue;
                int p = ppar[g];
                while (p >= 0 && !keep[p]) p = ppar[p];
                if (p >= 0) { items[p]++; only[p] = g; }
            }
            for (int g = 0; g < ng; g++)
                if (keep[g] && items[g] == 1 && only[g] >= 0) { keep[g] = false; changed = true; }
        }
        int *id = malloc(((size_t)ng + 1) * sizeof *id), nk = 0;
        if (!id) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int g = 0; st == QR_OK && g < ng; g++) id[g] = keep[g] ? nk++ : -1;
        int *gpar = st == QR_OK ? qr_arena_array(a, (size_t)nk + 1, sizeof *gpar) : NULL;
        int *ngrp = st == QR_OK ? qr_arena_array(a, (size_t)n + 1, sizeof *ngrp) : NULL;
        gr->group_name = st == QR_OK ? qr_arena_array(a, (size_t)nk + 1, sizeof *gr->group_name) : NULL;
        if (st == QR_OK && (!gpar || !ngrp || !gr->group_name)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int g = 0; st == QR_OK && g < ng; g++) {
            if (!keep[g]) continue;
            int p = ppar[g];
            while (p >= 0 && !keep[p]) p = ppar[p];
            gpar[id[g]] = p >= 0 ? id[p] : -1;
            gr->group_name[id[g]] = qr_arena_strdup(a, pname[g]);
        }
        for (int i = 0; st == QR_OK && i < n; i++) {
            int g = deepest[i];
            while (g >= 0 && !keep[g]) g = ppar[g];
            ngrp[i] = g >= 0 ? id[g] : -1;
            if (g >= 0) gr->nodes[i].label = gr->nodes[i].name + strlen(pname[g]) + 1;
        }
        if (st == QR_OK) { gr->in.n_groups = nk; gr->in.group_parent = gpar; gr->in.node_group = ngrp; }
        free(id);
    }
    free(keep); free(items); free(only);
    free(pname); free(ppar); free(pcount); free(deepest);
    qr_arena_free(&tmp);
    return st;
}

/* The graph view's edges: for each visited node (visit[k], or node k when visit is NULL) whose
 * box is box[node], every input traced back through the nodes without a box to the boxes that
 * feed it; one edge per (feeding box, box), in visiting order. Arrays in the arena. */
static QrStatus qr__bn_edges(QrArena *a, const QrGraph *g, const int *box, const int *visit, int n_visit, int n_boxes,
                             int *n_edges, const int **src_out, const int **dst_out) {
    int ne = 0, cap = n_boxes * 2 + 16;
    int *src = malloc((size_t)cap * sizeof *src), *dst = malloc((size_t)cap * sizeof *dst);
    int *seen = calloc((size_t)n_boxes + 1, sizeof *seen), *stamp = calloc((size_t)g->n_nodes + 1, sizeof *stamp);
    int *stack = malloc(((size_t)g->n_nodes + 1) * sizeof *stack);
    QrStatus st = src && dst && seen && stamp && stack ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; st == QR_OK && k < n_visit; k++) {
        int v = visit ? visit[k] : k, i = box[v];
        if (i < 0) continue;
        int sp = 0;
        const QrNode *nd = &g->nodes[v];
        for (int j = 0; j < nd->n_in; j++) {
            int val = nd->in[j], p = val >= 0 ? g->values[val].producer : -1;
            if (p >= 0 && stamp[p] != k + 1) { stamp[p] = k + 1; stack[sp++] = p; }
        }
        while (sp && st == QR_OK) {
            int p = stack[--sp];
            if (box[p] >= 0) {
                int s = box[p];
                if (s == i || seen[s] == i + 1) continue;
                seen[s] = i + 1;
                if (ne == cap) {
                    cap *= 2;
                    int *s1 = realloc(src, (size_t)cap * sizeof *src);
                    if (s1) src = s1;
                    int *d1 = realloc(dst, (size_t)cap * sizeof *dst);
                    if (d1) dst = d1;
                    if (!s1 || !d1) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
                }
                src[ne] = s; dst[ne++] = i;
                continue;
            }
            const QrNode *pn = &g->nodes[p];
            for (int j = 0; j < pn->n_in; j++) {
                int val = pn->in[j], q = val >= 0 ? g->values[val].producer : -1;
                if (q >= 0 && stamp[q] != k + 1) { stamp[q] = k + 1; stack[sp++] = q; }
            }
        }
    }
    free(seen); free(stamp); free(stack);
    int *es = st == QR_OK ? qr_arena_array(a, (size_t)ne + 1, sizeof *es) : NULL;
    int *ed = st == QR_OK ? qr_arena_array(a, (size_t)ne + 1, sizeof *ed) : NULL;
    if (st == QR_OK && (!es || !ed)) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        memcpy(es, src, (size_t)ne * sizeof *es); memcpy(ed, dst, (size_t)ne * sizeof *ed);
        *n_edges = ne; *src_out = es; *dst_out = ed;
    }
    free(src); free(dst);
    return st;
}

static QrStatus qr__bn_graph_build(QrBundle *bd, QrBnGraph *gr) {
    const QrSession *se = &bd->se;
    const QrGraph *b = se->b, *an = se->a;
    QrArena *a = &bd->arena;
    memset(gr, 0, sizeof *gr);
    int n = se->m.n;
    gr->in.n = n;
    gr->n_rows = bd->cmp.n;
    gr->nodes = qr_arena_array(a, (size_t)n + 1, sizeof *gr->nodes);
    gr->row_of_match = qr_arena_array(a, (size_t)n + 1, sizeof *gr->row_of_match);
    float *w = qr_arena_array(a, (size_t)n + 1, sizeof *w), *hh = qr_arena_array(a, (size_t)n + 1, sizeof *hh);
    int *view = malloc(((size_t)b->n_nodes + 1) * sizeof *view);
    if (!gr->nodes || !gr->row_of_match || !w || !hh || !view) {
        free(view);
        return qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) gr->row_of_match[i] = -1;
    for (int k = 0; k < bd->cmp.n; k++) gr->row_of_match[bd->cmp.rows[k].match] = k;
    for (int v = 0; v < b->n_nodes; v++) view[v] = -1;
    for (int i = 0; i < n; i++) view[se->m.m[i].b_node] = i;
    /* the analysis model's quantizers of each analysis node: activation (its output) and weights */
    char **qtxt = calloc((size_t)an->n_nodes + 1, sizeof *qtxt);
    if (!qtxt) { free(view); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int q = 0; q < se->qa.n; q++) {
        const QrQuantizer *Q = &se->qa.q[q];
        if (Q->owner < 0 || Q->kind == QR_QK_BIAS) continue;
        const char *old = qtxt[Q->owner];
        qtxt[Q->owner] = qr_arena_printf(a, "%s%s%s %s", old ? old : "", old ? " \xc2\xb7 " : "", Q->kind == QR_QK_WEIGHT ? "W" : "out",
                                         qr_dtype_name(Q->dtype));
    }
    for (int i = 0; i < n; i++) {
        const QrMatch *m = &se->m.m[i];
        QrGlViewNode *nd = &gr->nodes[i];
        nd->name = b->nodes[m->b_node].name;
        nd->op_type = b->nodes[m->b_node].op_type;
        nd->row = gr->row_of_match[i];
        QrSplitView sv;
        if (nd->row >= 0 && qr_compare_split(&bd->cmp.rows[nd->row].sp, &sv)) {
            nd->has_split = true;
            nd->split[0] = sv.err_w; nd->split[1] = sv.err_i; nd->split[2] = sv.err_round; nd->split[3] = sv.err_clip;
        }
        int an_node = m->a_op >= 0 ? m->a_op : m->a_node;
        if (an_node >= 0) nd->quant = qtxt[an_node];
        if (m->a_quant >= 0 && an_node >= 0 && !nd->quant)
            nd->quant = qr_arena_printf(a, "out %s", qr_dtype_name(se->qa.q[m->a_quant].dtype));
    }
    free(qtxt);
    int *visit = malloc(((size_t)n + 1) * sizeof *visit);
    QrStatus st = visit ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < n; i++) visit[i] = se->m.m[i].b_node;
    if (st == QR_OK) st = qr__bn_edges(a, b, view, visit, n, n, &gr->in.n_edges, &gr->in.src, &gr->in.dst);
    free(visit); free(view);
    QR_TRY(st);
    QR_TRY(qr__bn_graph_groups(bd, gr));
    for (int i = 0; i < n; i++) qr_gl_box_size(gr->nodes[i].label ? gr->nodes[i].label : gr->nodes[i].name, gr->nodes[i].op_type, &w[i], &hh[i]);
    gr->in.w = w; gr->in.h = hh;
    /* sensitivity ranks, advisor findings, what-if: matched by analysis or baseline node name */
    QrStrMap byname;
    QrArena tmp = {0};
    st = qr_strmap_init(&byname, &tmp, (uint32_t)n * 3 + 16);
    for (int i = 0; st == QR_OK && i < n; i++) {
        const QrMatch *m = &se->m.m[i];
        const char *names[3] = { b->nodes[m->b_node].name, m->a_node >= 0 ? an->nodes[m->a_node].name : NULL,
                                 m->a_op >= 0 ? an->nodes[m->a_op].name : NULL };
        for (int k = 0; k < 3 && st == QR_OK; k++)
            if (names[k] && qr_strmap_get(&byname, names[k]) < 0) st = qr_strmap_put(&byname, &tmp, names[k], i);
    }
    if (st == QR_OK && bd->ok[QR_STAGE_SENS])
        for (int k = 0; k < bd->sens.n; k++) {
            int i = qr_strmap_get(&byname, bd->sens.rows[k].name);
            if (i >= 0 && !gr->nodes[i].sens_rank) gr->nodes[i].sens_rank = k + 1;
        }
    if (st == QR_OK && bd->ok[QR_STAGE_ADVISOR])
        for (int k = 0; k < bd->adv.n; k++) {
            const QrFinding *f = &bd->adv.f[k];
            int i = f->match >= 0 && f->match < n ? f->match : f->node && *f->node ? qr_strmap_get(&byname, f->node) : -1;
            if (i < 0) continue;
            const char *old = gr->nodes[i].find;
            gr->nodes[i].find = qr_arena_printf(a, "%s%s%s (%s): %s Fix: %s", old ? old : "", old ? "\n" : "",
                                                qr_adv_kind_name(f->kind), qr_severity_name(f->sev), f->reason, f->fix);
        }
    if (st == QR_OK && bd->ok[QR_STAGE_WHATIF])
        for (int i = 0; i < n; i++) {
            int r = gr->nodes[i].sens_rank;
            for (int s = 0; r > 0 && s < bd->wi.n_steps; s++) {
                const QrWhatIfStep *w2 = &bd->wi.steps[s];
                if (w2->k < r) continue;
                if (!w2->n_promoted)   /* nothing of them has a 16-bit form (e.g. weight-only nodes) */
                    gr->nodes[i].whatif = qr_arena_printf(a, "the top-%d sensitive nodes (this one included) in float: output "
                                                          "Cosine %.6f \xe2\x86\x92 %.6f (measured; int16 does not apply to "
                                                          "them).", w2->k, bd->wi.as_is.cosine, w2->fp.cosine);
                else
                    gr->nodes[i].whatif = qr_arena_printf(a, "the top-%d sensitive nodes (this one included) in int16: output "
                                                          "Cosine %.6f \xe2\x86\x92 %.6f; in float: %.6f (measured).", w2->k,
                                                          bd->wi.as_is.cosine, w2->int16.cosine, w2->fp.cosine);
                break;
            }
        }
    /* the node's plots (value histograms and per-channel boxes, as qr__bn_plot_job names them) */
    for (int k = 0; st == QR_OK && bd->ok[QR_STAGE_DIST] && k < bd->dist.n; k++) {
        const QrDist *d = &bd->dist.d[k];
        int i = d->node ? qr_strmap_get(&byname, d->node) : -1;
        if (i < 0) continue;
        char safe[200];
        qr_zip_safe_component(safe, sizeof safe, d->name);
        const char *files[2] = { qr_arena_printf(a, QR_BF_PLOT_DIST "/%s_%d.png", safe, k),
                                 qr_arena_printf(a, QR_BF_PLOT_CHANNEL "/%s_%d.png", safe, k) };
        for (int j = 0; j < 2; j++) {
            if (!files[j] || !qr__bn_exists(bd, files[j])) continue;
            const char *old = gr->nodes[i].plots;
            gr->nodes[i].plots = old ? qr_arena_printf(a, "%s\n%s", old, files[j]) : files[j];
        }
    }
    qr_arena_free(&tmp);
    QR_TRY(st);
    return qr__bn_graph_metrics(bd, gr);
}

/* The analysis model with its quantizer nodes, for the view's "Q/DQ nodes" toggle: a box per
 * matched compute node (its row's box: the baseline name, the row's findings and split) and one
 * per QuantizeLinear / DequantizeLinear of the analysis model (and every other node of its
 * quantizers); constants, Identity, Cast and shape arithmetic folded into the edges as in the
 * main view; groups by the analysis names' prefixes. Everything in bd->arena. Returns false
 * (no toggle) above QR__BN_QVIEW_MAX boxes. */
#define QR__BN_QVIEW_MAX 6000

static bool qr__bn_is_qdq(const char *op) {
    return !strcmp(op, "QuantizeLinear") || !strcmp(op, "DequantizeLinear") || !strcmp(op, "DynamicQuantizeLinear");
}

/* The Q/DQ drawing's quantizer boxes that no name prefix put in a group (a weight's DequantizeLinear
 * named after its initializer, "onnx::MatMul_105_DequantizeLinear"; the model input's Q/DQ) join the
 * lowest group holding every box they feed (a box with no reader: every box feeding it), resolved
 * from the readers up so a Q -> DQ -> op chain follows its op. Left at the root when a reader is at
 * the root. Without this they share the root's layers: one row as wide as the model has weights. */
static QrStatus qr__bn_qview_adopt(QrArena *a, QrBnGraph *qv, const bool *is_quant) {
    int n = qv->in.n, ne = qv->in.n_edges, G = qv->in.n_groups;
    const int *gpar = qv->in.group_parent;
    int *ng = qr_arena_array(a, (size_t)n + 1, sizeof *ng);
    char *pend = calloc((size_t)n + 1, 1);
    int *depth = calloc((size_t)G + 1, sizeof *depth);
    int *off = calloc(2 * ((size_t)n + 1), sizeof *off), *adj = malloc(2 * ((size_t)ne + 1) * sizeof *adj);
    int *fill = calloc(2 * ((size_t)n + 1), sizeof *fill);
    QrStatus st = ng && pend && depth && off && adj && fill ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    int *roff = off + n + 1, *rfill = fill + n + 1, *radj = adj + ne;   /* readers: off/adj; feeders: roff/radj */
    for (int e = 0; st == QR_OK && e < ne; e++) { off[qv->in.src[e] + 1]++; roff[qv->in.dst[e] + 1]++; }
    for (int k = 0; st == QR_OK && k < n; k++) { off[k + 1] += off[k]; roff[k + 1] += roff[k]; }
    for (int e = 0; st == QR_OK && e < ne; e++) {
        int s = qv->in.src[e], d = qv->in.dst[e];
        adj[off[s] + fill[s]++] = d;
        radj[roff[d] + rfill[d]++] = s;
    }
    int left = 0;
    for (int g = 0; st == QR_OK && g < G; g++) for (int x = g; x >= 0; x = gpar[x]) depth[g]++;
    for (int k = 0; st == QR_OK && k < n; k++) {
        ng[k] = qv->in.node_group ? qv->in.node_group[k] : -1;
        pend[k] = is_quant[k] && ng[k] < 0;
        left += pend[k];
    }
    /* a pass settles every pending box whose readers are settled; the graph is acyclic, so a pass
     * settles at least one while any is left */
    for (bool moved = true; st == QR_OK && left && moved;) {
        moved = false;
        for (int k = 0; k < n; k++) {
            if (!pend[k]) continue;
            bool feeders = off[k + 1] == off[k], wait = false;   /* no reader: the boxes feeding it */
            const int *nb = feeders ? radj + roff[k] : adj + off[k];
            int cnt = feeders ? roff[k + 1] - roff[k] : off[k + 1] - off[k], lca = -2;
            for (int j = 0; j < cnt && !wait; j++) {
                int o = nb[j];
                if (o == k) continue;
                if (pend[o] && !feeders) { wait = true; break; }
                int g = pend[o] ? -1 : ng[o];
                if (lca == -2) { lca = g; continue; }
                int x = lca, y = g;
                while (x >= 0 && y >= 0 && x != y) { if (depth[x] >= depth[y]) x = gpar[x]; else y = gpar[y]; }
                lca = x == y ? x : -1;
            }
            if (wait) continue;
            ng[k] = lca >= 0 ? lca : -1;
            pend[k] = 0;
            left--;
            moved = true;
        }
    }
    free(pend); free(depth); free(off); free(adj); free(fill);
    if (st == QR_OK) qv->in.node_group = ng;
    return st;
}

static QrStatus qr__bn_qview(QrBundle *bd, const QrBnGraph *gr, QrBnGraph *qv, bool **is_quant, bool *made) {
    const QrSession *se = &bd->se;
    const QrGraph *an = se->a;
    QrArena *a = &bd->arena;
    int nn = an->n_nodes;
    *made = false;
    memset(qv, 0, sizeof *qv);
    int *box = malloc(((size_t)nn + 1) * sizeof *box), *qof = malloc(((size_t)nn + 1) * sizeof *qof);
    int *row_match = NULL;
    if (!box || !qof) { free(box); free(qof); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int v = 0; v < nn; v++) box[v] = qof[v] = -1;
    for (int q = 0; q < se->qa.n; q++) {
        const QrQuantizer *Q = &se->qa.q[q];
        if (Q->q_node >= 0) qof[Q->q_node] = q;
        for (int k = 0; k < Q->n_dq; k++) if (Q->dq_nodes[k] >= 0) qof[Q->dq_nodes[k]] = q;
    }
    int n = 0;
    for (int i = 0; i < se->m.n; i++) {
        int c = se->m.m[i].a_op >= 0 ? se->m.m[i].a_op : se->m.m[i].a_node;
        if (c >= 0 && box[c] < 0) box[c] = n++;
    }
    int n_compute = n;
    for (int v = 0; v < nn; v++) if (box[v] < 0 && (qof[v] >= 0 || qr__bn_is_qdq(an->nodes[v].op_type))) box[v] = n++;
    QrStatus st = QR_OK;
    if (n > QR__BN_QVIEW_MAX || n == n_compute) goto done;      /* too big, or nothing to show */
    qv->in.n = n;
    qv->n_rows = gr->n_rows;
    qv->nodes = qr_arena_array(a, (size_t)n, sizeof *qv->nodes);
    *is_quant = qr_arena_array(a, (size_t)n, sizeof **is_quant);
    float *w = qr_arena_array(a, (size_t)n, sizeof *w), *hh = qr_arena_array(a, (size_t)n, sizeof *hh);
    row_match = malloc((size_t)n * sizeof *row_match);
    if (!qv->nodes || !*is_quant || !w || !hh || !row_match) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); goto done; }
    memset(qv->nodes, 0, (size_t)n * sizeof *qv->nodes);
    for (int k = 0; k < n; k++) row_match[k] = -1;
    for (int i = 0; i < se->m.n; i++) {
        int c = se->m.m[i].a_op >= 0 ? se->m.m[i].a_op : se->m.m[i].a_node;
        if (c >= 0 && row_match[box[c]] < 0) row_match[box[c]] = i;
    }
    for (int v = 0; v < nn; v++) {
        int k = box[v];
        if (k < 0) continue;
        QrGlViewNode *nd = &qv->nodes[k];
        nd->name = an->nodes[v].name && *an->nodes[v].name ? an->nodes[v].name : qr_arena_printf(a, "(node %d)", v);
        nd->op_type = an->nodes[v].op_type;
        nd->row = -1;
        if (k >= n_compute) {
            (*is_quant)[k] = true;
            int q = qof[v];
            if (q >= 0) {
                const QrQuantizer *Q = &se->qa.q[q];
                nd->quant = qr_arena_printf(a, "%s %s%s", qr_dtype_name(Q->dtype), Q->n_scales > 1 ? "per-channel" : "per-tensor",
                                            Q->kind == QR_QK_WEIGHT ? " weight" : Q->kind == QR_QK_BIAS ? " bias" : "");
            }
        }
    }
    st = qr__bn_edges(a, an, box, NULL, nn, n, &qv->in.n_edges, &qv->in.src, &qv->in.dst);
    if (st != QR_OK) goto done;
    st = qr__bn_graph_groups(bd, qv);
    if (st == QR_OK) st = qr__bn_qview_adopt(a, qv, *is_quant);
    if (st != QR_OK) goto done;
    /* the rows' boxes: named, coloured and clickable like the main view's */
    for (int k = 0; k < n; k++) {
        int i = row_match[k];
        if (i < 0) continue;
        QrGlViewNode *nd = &qv->nodes[k];
        const QrGlViewNode *m = &gr->nodes[i];
        const char *label = nd->label ? nd->label : nd->name, *op = nd->op_type;
        *nd = *m;
        nd->label = label;
        nd->op_type = op;
    }
    for (int k = 0; k < n; k++)
        qr_gl_box_size(qv->nodes[k].label ? qv->nodes[k].label : qv->nodes[k].name, qv->nodes[k].op_type, &w[k], &hh[k]);
    qv->in.w = w; qv->in.h = hh;
    *made = true;
done:
    free(box); free(qof); free(row_match);
    return st;
}

/* graph/model_explorer*.json: one Model Explorer node-data file per metric, in the form its
 * node-data builder writes a GraphNodeData (model_explorer/node_data_builder.py,
 * GraphNodeData.to_json_string: its fields in declaration order, None fields left out):
 * "results" keyed by node name (Model Explorer's ONNX adapter uses the node name as the node
 * id) with {"value": v}, "name", "thresholds" (empty: the gradient takes precedence), a
 * three-stop "gradient" (stop 0 = the smallest value; red where it is the bad end) and the
 * four display flags at their defaults. */
static QrStatus qr__bn_me_write(QrBundle *bd, const QrBnGraph *gr, const QrGlMetric *m, const char *file) {
    const QrSession *se = &bd->se;
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_key(&j, "results");
    qr_json_obj_begin(&j);
    for (int i = 0; i < gr->in.n; i++) {
        int r = gr->nodes[i].row;
        if (r < 0 || !isfinite(m->values[r])) continue;
        const QrMatch *mm = &se->m.m[i];
        const char *keys[3] = { gr->nodes[i].name, mm->a_node >= 0 ? se->a->nodes[mm->a_node].name : NULL,
                                mm->a_op >= 0 ? se->a->nodes[mm->a_op].name : NULL };
        for (int k = 0; k < 3; k++) {
            bool dup = !keys[k] || !*keys[k];
            for (int q = 0; q < k && !dup; q++) dup = keys[q] && !strcmp(keys[q], keys[k]);
            if (dup) continue;
            qr_json_key(&j, keys[k]);
            qr_json_obj_begin_compact(&j);
            qr_json_kv_num(&j, "value", m->values[r]);
            qr_json_obj_end(&j);
        }
    }
    qr_json_obj_end(&j);
    qr_json_kv_str(&j, "name", qr_arena_printf(&bd->arena, "qreport %s", m->name));
    qr_json_key(&j, "thresholds");
    qr_json_arr_begin_compact(&j);
    qr_json_arr_end(&j);
    static const char *const col[3] = { "#dc2626", "#facc15", "#16a34a" };
    qr_json_key(&j, "gradient");
    qr_json_arr_begin(&j);
    for (int s = 0; s < 3; s++) {
        qr_json_obj_begin_compact(&j);
        qr_json_kv_num(&j, "stop", s * 0.5);
        qr_json_kv_str(&j, "bgColor", col[m->higher_better ? s : 2 - s]);
        qr_json_obj_end(&j);
    }
    qr_json_arr_end(&j);
    qr_json_kv_bool(&j, "hideInAggregatedStatsTable", false);
    qr_json_kv_bool(&j, "hideInChildrenStatsTable", false);
    qr_json_kv_bool(&j, "showExpandedSummaryOnGroupNode", false);
    qr_json_kv_bool(&j, "showLabelCountColumnsInChildrenStatsTable", false);
    qr_json_obj_end(&j);
    return qr__bn_write_json(bd, &j, file);
}

/* graph/annotated.onnx: the analysis model with each matched node's metrics in its doc_string
 * and metadata_props; its weights stay in the original file (external data). */
static QrStatus qr__bn_annotated(QrBundle *bd, const QrBnGraph *gr) {
    const QrSession *se = &bd->se;
    QrArena *a = &bd->arena;
    int n = gr->in.n, nn = 0;
    QrOxNote *notes = qr_arena_array(a, (size_t)n * 2 + 1, sizeof *notes);
    if (!notes) return qr_errf(QR_ERR_NOMEM, "out of memory");
    static const char *const want[] = { "Cosine", "local_Cosine", "SQNR", "local_SQNR", "MSE", "L1" };
    int col[QR_ARRAY_LEN(want)];
    for (int k = 0; k < QR_ARRAY_LEN(want); k++) {
        col[k] = -1;
        for (int c = 0; c < gr->n_metrics; c++) if (!strcmp(gr->metrics[c].name, want[k])) col[k] = c;
    }
    for (int i = 0; i < n; i++) {
        const QrGlViewNode *v = &gr->nodes[i];
        const QrMatch *mm = &se->m.m[i];
        if (v->row < 0 || mm->a_node < 0) continue;
        const char **keys = qr_arena_array(a, 12, sizeof *keys), **vals = qr_arena_array(a, 12, sizeof *vals);
        if (!keys || !vals) return qr_errf(QR_ERR_NOMEM, "out of memory");
        int kv = 0;
        const char *doc = qr_arena_printf(a, "qreport (row %d of " QR_BF_COMPARE ".csv, baseline node %s):", v->row, v->name);
        keys[kv] = "qreport.baseline_node"; vals[kv++] = v->name;
        keys[kv] = "qreport.row"; vals[kv++] = qr_arena_printf(a, "%d", v->row);
        for (int k = 0; k < QR_ARRAY_LEN(want); k++) {
            if (col[k] < 0 || !isfinite(gr->metrics[col[k]].values[v->row])) continue;
            double x = gr->metrics[col[k]].values[v->row];
            keys[kv] = qr_arena_printf(a, "qreport.%s", want[k]);
            vals[kv++] = qr_arena_printf(a, "%.9g", x);
            doc = qr_arena_printf(a, "%s %s %.6g;", doc, want[k], x);
        }
        if (v->sens_rank > 0) {
            keys[kv] = "qreport.sensitivity_rank"; vals[kv++] = qr_arena_printf(a, "%d", v->sens_rank);
            doc = qr_arena_printf(a, "%s sensitivity rank %d;", doc, v->sens_rank);
        }
        if (v->find) {
            keys[kv] = "qreport.advisor"; vals[kv++] = v->find;
            doc = qr_arena_printf(a, "%s\nAdvisor: %s", doc, v->find);
        }
        if (!doc) return qr_errf(QR_ERR_NOMEM, "out of memory");
        int nodes[2] = { mm->a_node, mm->a_op >= 0 && mm->a_op != mm->a_node ? mm->a_op : -1 };
        for (int k = 0; k < 2; k++)
            if (nodes[k] >= 0) notes[nn++] = (QrOxNote){ se->a->nodes[nodes[k]].name, doc, kv, keys, vals };
    }
    const char *base = strrchr(se->a->path, '/');
    base = base ? base + 1 : se->a->path;
    const char *mk[2] = { "qreport.annotated", "qreport.weights" };
    const char *mv[2] = { "every matched node's metrics are in its doc_string and metadata_props (keys qreport.*)",
                          qr_arena_printf(a, "initializers of 1 KiB or more are external data in '%s' (the analysis model "
                                          "itself): copy this file next to it to load the weights", base) };
    return qr_onnxw_annotate(se->a->path, qr_bundle_path(bd, QR_BF_GRAPH_ONNX), base, 1024, notes, nn, 2, mk, mv);
}

/* The graph/ overlays: Model Explorer node data and the annotated model. */
static QrStatus qr_bundle_write_graph(QrBundle *bd) {
    if (!bd->ok[QR_STAGE_COMPARE]) return qr_errf(QR_ERR_INVALID, "needs the per-layer comparison, which failed");
    QR_TRY(qr_mkdir_p(qr_bundle_path(bd, QR_BF_GRAPH)));
    QrBnGraph gr;
    QR_TRY(qr__bn_graph_build(bd, &gr));
    for (int c = 0; c < gr.n_metrics; c++) {
        const char *nm = gr.metrics[c].name, *file = NULL;
        if (!strcmp(nm, "Cosine")) file = QR_BF_GRAPH_ME;
        else if (!strcmp(nm, "local_Cosine") || !strcmp(nm, "SQNR") || !strcmp(nm, "local_SQNR"))
            file = qr_arena_printf(&bd->arena, QR_BF_GRAPH_ME_STEM "%s.json", nm);
        else if (!strcmp(nm, "pooled Cosine")) file = QR_BF_GRAPH_ME_STEM "pooled_Cosine.json";
        else if (!strcmp(nm, "pooled SQNR")) file = QR_BF_GRAPH_ME_STEM "pooled_SQNR.json";
        else if (strstr(nm, "sensitivity")) file = QR_BF_GRAPH_ME_STEM "sensitivity.json";
        if (file) QR_TRY(qr__bn_me_write(bd, &gr, &gr.metrics[c], file));
    }
    return qr__bn_annotated(bd, &gr);
}

/* "Graph view": the baseline's graph laid out by report/graph, coloured by the per-layer metrics. */
static void qr_bundle_html_graph(QrHtml *h, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_COMPARE] || !bd->se.m.n) return;
    qr_html_section(h, "graph", "Graph view");
    qr_html_para(h, "The baseline model as a graph, top to bottom: one box per compute node (QuantizeLinear/DequantizeLinear, "
                 "Identity and Cast are folded into the edges; \"Q/DQ nodes\" shows the analysis model with its quantizer "
                 "nodes), grouped by name prefix; the bar along a box's bottom is its error split (weight, input, output "
                 "rounding, output clipping). Colour by any per-layer metric; click a box for its per-layer row, advisor "
                 "findings and what-if; click a group's title to collapse it, a collapsed group (coloured by its worst member) "
                 "to open it; a large graph opens in an overview of collapsed groups; drag to pan, the wheel to zoom.");
    QrBnGraph gr;
    QrGlLayout l = {0};
    QrStatus st = qr__bn_graph_build(bd, &gr);
    if (st == QR_OK) st = qr_gl_layout(&gr.in, &l);
    if (st != QR_OK) { qr_html_failed(h, "graph view", qr_err_msg()); qr_err_clear(); return; }
    int worst[5], nw = 0;
    /* the worst layers: the lowest Cosine among verified rows */
    for (int pick = 0; pick < 5; pick++) {
        int best = -1;
        for (int k = 0; k < bd->cmp.n; k++) {
            const QrLayerRow *r = &bd->cmp.rows[k];
            if (!r->has_m || r->m.cosine != r->m.cosine || r->m.cosine >= 0.99999) continue;
            if (bd->se.m.verified_run && !qr_match_verified(&bd->se.m.m[r->match])) continue;
            bool used = false;
            for (int j = 0; j < nw; j++) used |= worst[j] == k;
            if (!used && (best < 0 || r->m.cosine < bd->cmp.rows[best].m.cosine)) best = k;
        }
        if (best >= 0) worst[nw++] = best;
    }
    QrGlView v = { .nodes = gr.nodes, .group_name = gr.group_name, .n_rows = gr.n_rows, .metrics = gr.metrics,
                   .n_metrics = gr.n_metrics, .default_metric = gr.def_metric, .first_drop_row = bd->cmp.first_drop,
                   .worst_rows = worst, .n_worst = nw, .open_depth = -2, .table_id = "compare" };
    /* the toggle's view with the quantizer nodes (left out, with a note, when it cannot be made) */
    QrBnGraph qg;
    QrGlLayout ql = {0};
    bool *isq = NULL, made = false;
    st = qr__bn_qview(bd, &gr, &qg, &isq, &made);
    if (st == QR_OK && made) st = qr_gl_layout(&qg.in, &ql);
    QrGlAlt alt = { &ql, &qg.in, qg.nodes, isq, qg.group_name };
    if (st == QR_OK && made) v.alt = &alt;
    if (st != QR_OK) {
        qr_html_para(h, qr_arena_printf(&bd->arena, "The view with the quantizer nodes could not be made: %s", qr_err_msg()));
        qr_err_clear();
    }
    qr_gl_html(h, &l, &gr.in, &v);
    qr_gl_free(&l);
    qr_gl_free(&ql);
}

/* index.html's beginning: the title and the verdict box (the driver adds the stages' sections,
 * then qr_bundle_html_end). */
static void qr_bundle_html_begin(QrBundle *bd, QrHtml *h) {
    qr_html_init(h, "qreport — quantization accuracy report");
    qr__bn_html_verdict(h, bd);
}

/* "Files", then index.html written. */
static QrStatus qr_bundle_html_end(QrBundle *bd, QrHtml *h) {
    qr__bn_html_files(h, bd);
    char *txt = NULL;
    size_t len = 0;
    QrStatus st = qr_html_finish(h, &txt, &len);
    if (st != QR_OK) { qr_html_free(h); return st; }
    st = qr_file_write_atomic(qr_bundle_path(bd, QR_BF_INDEX), txt, len);
    free(txt);
    return st;
}

static void qr_bundle_html_tokens(QrHtml *h, QrBundle *bd) {
    if (bd->ok[QR_STAGE_TOKENS]) qr__bn_html_tokens(h, &bd->se, NULL, bd->tok, bd->tok_m);
}

/* "Generation" (--generate): its text file. */
static void qr_bundle_html_generation(QrHtml *h, QrBundle *bd) {
    if (!bd->ok[QR_STAGE_GEN]) return;
    qr_html_section(h, "generation", "Generation");
    const char *t = qr__bn_read_text(bd, QR_BF_GENERATION ".txt");
    if (t) qr_html_pre(h, t);
    const char *files[] = { QR_BF_GENERATION ".txt", QR_BF_GENERATION ".csv", QR_BF_GEN_DIV "/" QR_BF_COMPARE ".txt",
                            QR_BF_GEN_DIV "/" QR_BF_COMPARE ".csv" };
    qr_html_files(h, files, bd->gen.have_div ? 4 : 2);
}

static void qr_bundle_html_compare(QrHtml *h, QrBundle *bd) {
    if (bd->ok[QR_STAGE_COMPARE]) qr__bn_html_compare(h, &bd->se, &bd->cmp, qr__bn_exists(bd, QR_BF_PLOT_PER_LAYER));
}


/* ==== plots ============================================================================ */

/* The plots, one job each, rendered and encoded in parallel (qr_bundle_write_plots): job 0 the
 * per-layer metrics, 1 the cumulative error, then a histogram per distribution, a box plot
 * per distribution, and last the sensitivity bars. Titles go to the job's own arena. */
static int qr__bn_plot_jobs(const QrBundle *bd) { return 3 + 2 * (bd->ok[QR_STAGE_DIST] ? bd->dist.n : 0); }

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
    int nd = bd->ok[QR_STAGE_DIST] ? bd->dist.n : 0;
    QrArena ar = {0};
    QrStatus st = QR_OK;
    if (job == 0 && bd->ok[QR_STAGE_COMPARE] && bd->cmp.n) {
        char path[4400];
        snprintf(path, sizeof path, "%s/" QR_BF_PLOT_PER_LAYER, bd->dir);
        st = qr__bn_plot_per_layer(se, &bd->cmp, path);
    } else if (job == 1 && bd->ok[QR_STAGE_ACCUM] && se->m.n) {
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
    } else if (job == 2 + 2 * nd && bd->ok[QR_STAGE_SENS] && bd->sens.n) {
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
    if (bd->ok[QR_STAGE_DIST] && bd->dist.n) {
        QR_TRY(qr_mkdir_p(qr_bundle_path(bd, QR_BF_PLOT_DIST)));
        bool box = false;
        for (int i = 0; i < bd->dist.n; i++) box |= bd->dist.d[i].n_ch && bd->dist.d[i].ch;
        if (box) QR_TRY(qr_mkdir_p(qr_bundle_path(bd, QR_BF_PLOT_CHANNEL)));
    }
    return qr_session_jobs(&bd->se, qr__bn_plot_jobs(bd), qr__bn_plot_job, bd, NULL);
}


/* ==== compare's own page ================================================================ */

static QrStatus qr_bundle_compare_page(const QrSession *se, const QrCompare *cmp, const QrTokAcc *tok, const char *advisor_txt,
                                       const char *dir) {
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
    qr__bn_html_tokens(&h, se, se->keep_outs, tok, NULL);
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
