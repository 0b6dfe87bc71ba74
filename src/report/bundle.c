/* report/bundle — implementation. See bundle.h.
 *
 *   prepare session (baseline run + its statistics) ─► [compare run (+ analysis statistics),
 *   shadow run, equivalence, weight comparison, sensitivity reference run: side by side]
 *   ─► match ─► check ─► profiles ─► compare ─► sensitivity rows ─► cumulative error
 *   ─► weights ─► advisor ─► what-if ─► distributions ─► badcase.npy ─► plots (in parallel)
 *   ─► summary/manifest/index.html ─► zip of the staging folder (atomic) [─► --keep-dir copy]
 *   ─► staging removed. The input files are hashed on a helper thread meanwhile. Stages are
 *   recorded in this order (manifest.json); a stage whose work ran early only writes. */

#include <dirent.h>
#include <ftw.h>
#include <malloc.h>

#define QR__BN_MAX_FAIL 32

typedef struct QrBd {
    const QrRunallOpts *o;
    QrDsRunall dsr;              /* --data: the comparison over the whole set (analysis/dataset) */
    const QrTensor *inputs;
    QrSession se;
    QrArena arena;
    char dir[4096];              /* staging folder */
    QrProgress prog;
    bool have_eq, have_cmp, have_sens, have_acc, have_chk, have_w, have_adv, have_wi, have_dist;
    QrWeightCmp w;
    QrAdvice adv;
    QrWhatIf wi;
    QrDistSet dist;
    QrEquivResult eq;
    QrCompare cmp;
    QrSensResult sens;
    QrAccum acc;
    QrAccSets acc_sets;          /* --quantize-nodes / --non-quantize-nodes (acc's column names point here) */
    QrCheckSummary chk;
    QrDeployRunall dep;          /* device dump, repro, emitted model (deploy/) */
    const char *fail_name[QR__BN_MAX_FAIL], *fail_msg[QR__BN_MAX_FAIL];
    int n_fail;
    const char *sha_path[16], *sha_hex[16];   /* manifest: file hashes computed so far */
    int n_sha;
    /* The input files' hashes, computed by a helper thread while the analyses run. */
    struct { const char *path; char hex[2 * QR_SHA256_LEN + 1]; bool ok; } hash[16];
    int n_hash;
    pthread_t hash_th;
    bool hash_running;
} QrBd;

static const char *qr__bn_path(QrBd *bd, const char *name) { return qr_arena_printf(&bd->arena, "%s/%s", bd->dir, name); }

/* Records the outcome of one analysis; a failure is kept for the manifest/HTML. */
static bool qr__bn_done(QrBd *bd, const char *stage, QrStatus st) {
    /* Fault injection for tests: QR_TEST_FAIL_STAGE=<stage> makes that analysis fail. */
    const char *inject = getenv("QR_TEST_FAIL_STAGE");
    if (st == QR_OK && inject && !strcmp(inject, stage)) st = qr_errf(QR_ERR_IO, "injected failure (QR_TEST_FAIL_STAGE)");
    /* ... and QR_TEST_STOP_STAGE=<stage> stops the process (SIGSTOP) once that analysis has
     * written its files, so a test can interrupt a run with its staging folder half full. */
    const char *stop = getenv("QR_TEST_STOP_STAGE");
    if (stop && !strcmp(stop, stage)) raise(SIGSTOP);
    qr_progress_end(&bd->prog, st);
    /* Large buffers freed by an analysis (caches, copies) go back to the system now rather
     * than staying in the heap under the next analysis's peak. */
    malloc_trim(0);
    if (st == QR_OK) return true;
    if (bd->n_fail < QR__BN_MAX_FAIL) {
        bd->fail_name[bd->n_fail] = stage;
        bd->fail_msg[bd->n_fail] = qr_arena_strdup(&bd->arena, qr_err_msg());
        bd->n_fail++;
    }
    qr_err_clear();
    return false;
}

static int qr__bn_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f) {
    QR_UNUSED(sb); QR_UNUSED(flag); QR_UNUSED(f);
    return remove(p);
}

static void qr__bn_rmtree(const char *dir) { nftw(dir, qr__bn_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

/* Adds every file under dir/sub to the zip (names relative to dir). */
static QrStatus qr__bn_add_tree(QrZip *z, const char *dir, const char *sub, QrArena *a) {
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
        else if (S_ISDIR(sb.st_mode)) st = qr__bn_add_tree(z, dir, rel, a);
        else st = qr_zip_add_file(z, rel, full);
    }
    closedir(d);
    return st;
}

/* ==== tables for the HTML (same columns as the txt/csv files) ========================= */

static QrStatus qr__bn_sens_table(const QrSensResult *r, int max, QrTable *t) {
    static const char *const cols[] = { "rank", "op_name", "sensitive_type", "op_type", "L1", "Cosine", "MSE", "KL", "SQNR",
                                        "gain" };
    QR_TRY(qr_table_init(t, r->opts.off_one ? QR_ARRAY_LEN(cols) : QR_ARRAY_LEN(cols) - 1, cols));
    for (int k = 0; k < r->n && k < max; k++) {
        const QrSensRow *row = &r->rows[k];
        int ri;
        QR_TRY(qr_table_add_row(t, &ri));
        qr_table_setf(t, ri, 0, "%d", k + 1);
        qr_table_set(t, ri, 1, row->name);
        qr_table_set(t, ri, 2, qr_sens_type_name(row->type));
        qr_table_set(t, ri, 3, row->op_type);
        double v[] = { row->m.l1, row->m.cosine, row->m.mse, row->m.kl, row->m.sqnr };
        for (int j = 0; j < 5; j++) qr__cmp_num(t, ri, 4 + j, v[j], false);
        if (r->opts.off_one) qr__cmp_num(t, ri, 9, qr_sens_gain(r, row), false);
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
static QrStatus qr__bn_write_json(QrBd *bd, QrJson *j, const char *name) {
    char *txt = NULL;
    size_t len = 0;
    QrStatus st = qr_json_finish(j, &txt, &len);
    if (st != QR_OK) { qr_json_free(j); return st; }
    st = qr_file_write_atomic(qr__bn_path(bd, name), txt, len);
    free(txt);
    return st;
}

/* "failed_analyses": [{analysis, error}] — in both summary.json and manifest.json. */
static void qr__bn_json_failed(QrJson *j, const QrBd *bd) {
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

static const char *qr__bn_verdict_one(const QrBd *bd, QrHtmlLevel *level);
/* --data: the single-sample verdict (of the worst sample) preceded by the data set's numbers. */
static const char *qr__bn_verdict(const QrBd *bd, QrHtmlLevel *level) {
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
    return qr_arena_printf(a, "Data set: %d sample%s of %d in %s%s. Worst sample '%s' (every per-layer analysis below uses "
                           "it): %s", r->dc.n_done, r->dc.n_done == 1 ? "" : "s", r->ds->n_found, r->ds->dir, pooled,
                           r->dc.names[r->worst], v);
}

static const char *qr__bn_verdict_one(const QrBd *bd, QrHtmlLevel *level) {
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
static const char *qr__bn_action(const QrBd *bd) {
    if (!bd->have_sens || !bd->sens.n) return NULL;
    QrArena *a = (QrArena *)&bd->arena;
    if (bd->have_wi && bd->wi.rec_int16 >= 0) {
        const QrWhatIfStep *w = &bd->wi.steps[bd->wi.rec_int16];
        return qr_arena_printf(a, "Recommended action: promote the top-%d sensitive node%s to int16 (output Cosine %.6f → %.6f, "
                               "measured; see mixed_precision.json for ready-to-use node lists).", w->k, w->k == 1 ? "" : "s",
                               bd->wi.as_is.cosine, w->int16.cosine);
    }
    return qr_arena_printf(a, "Recommended action: keep '%s' in higher precision (int16 or float) first, then re-check the "
                           "cumulative-error curves.", bd->sens.rows[0].name);
}

static QrStatus qr__bn_summary(QrBd *bd) {
    QrJson j;
    qr_json_init(&j);
    QrHtmlLevel lv;
    const char *verdict = qr__bn_verdict(bd, &lv);
    qr_json_obj_begin(&j);
    qr_json_kv_int(&j, "schema_version", 1);
    qr_json_key(&j, "verdict");
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "level", lv == QR_HTML_GOOD ? "good" : lv == QR_HTML_WARN ? "warning" : "bad");
    qr_json_kv_str(&j, "text", verdict);
    if (bd->have_cmp && bd->cmp.first_drop >= 0)
        qr_json_kv_str(&j, "first_drop", bd->se.b->nodes[bd->se.m.m[bd->cmp.rows[bd->cmp.first_drop].match].b_node].name);
    qr_json_obj_end(&j);
    if (bd->o->single_model)
        qr_json_kv_str(&j, "baseline_form", "single model: the baseline is the analysis model itself with every quantizer "
                       "disabled (integer weights without a float counterpart stay at their dequantized values)");
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
    qr__bn_json_failed(&j, bd);
    qr_json_obj_end(&j);
    return qr__bn_write_json(bd, &j, "summary.json");
}

static void *qr__bn_hash_main(void *arg) {
    QrBd *bd = arg;
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
static void qr__bn_hash_start(QrBd *bd, const QrGraph *b, const QrGraph *a) {
    const char *paths[2] = { b->path, a->path };
    for (int k = 0; k < 2; k++) if (paths[k]) bd->hash[bd->n_hash++].path = paths[k];
    for (int i = 0; i < bd->o->n_input_paths && bd->n_hash < QR_ARRAY_LEN(bd->hash); i++)
        if (bd->o->input_paths[i]) bd->hash[bd->n_hash++].path = bd->o->input_paths[i];
    bd->hash_running = bd->n_hash && pthread_create(&bd->hash_th, NULL, qr__bn_hash_main, bd) == 0;
    if (!bd->hash_running) bd->n_hash = 0;
}

static void qr__bn_hash_join(QrBd *bd) {
    if (bd->hash_running) pthread_join(bd->hash_th, NULL);
    bd->hash_running = false;
}

/* The sha256 of a file as hex, computed once per path (the manifest is written twice);
 * NULL when the file cannot be read. */
static const char *qr__bn_sha(QrBd *bd, const char *path) {
    qr__bn_hash_join(bd);
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

static void qr__bn_json_file(QrBd *bd, QrJson *j, const char *role, const char *path) {
    qr_json_obj_begin_compact(j);
    qr_json_kv_str(j, "role", role);
    qr_json_kv_str(j, "path", path);
    const char *h = path ? qr__bn_sha(bd, path) : NULL;
    if (h) qr_json_kv_str(j, "sha256", h);
    else qr_json_kv_null(j, "sha256");
    qr_json_obj_end(j);
}

static QrStatus qr__bn_manifest(QrBd *bd) {
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
    return qr__bn_write_json(bd, &j, "manifest.json");
}

/* ==== index.html ======================================================================= */

static char *qr__bn_read_text(QrBd *bd, const char *name) {
    unsigned char *buf = NULL;
    size_t len = 0;
    if (qr_file_read(qr__bn_path(bd, name), 0, &buf, &len) != QR_OK) { qr_err_clear(); return NULL; }
    char *s = qr_arena_alloc(&bd->arena, len + 1);
    if (s) { memcpy(s, buf, len); s[len] = 0; }
    free(buf);
    return s;
}

static bool qr__bn_exists(QrBd *bd, const char *name) {
    uint64_t sz;
    bool ok = qr_file_size(qr__bn_path(bd, name), &sz) == QR_OK;
    qr_err_clear();
    return ok;
}

/* The per-layer comparison section (runall's index.html and compare's compare_per_layer.html). */
static void qr__bn_html_compare(QrHtml *h, const QrSession *se, const QrCompare *cmp, bool have_plot) {
    qr_html_section(h, "compare", "Per-layer comparison");
    qr_html_para(h, "One row per baseline node output, in graph order. The analysis value is the one its consumers see "
                 "(after the layer's QuantizeLinear→DequantizeLinear). local_* re-runs the layer on the baseline's own "
                 "inputs: a layer with a good local Cosine but a bad Cosine inherits its error from upstream.");
    if (have_plot) qr_html_image(h, "plots/per_layer_metrics.png", "Cosine and SQNR per layer", NULL, 0, 0);
    QrTable t = {0};
    if (qr__cmp_table(se, cmp, false, false, &t) == QR_OK) {
        QrHtmlTableOpts to = { .cell_level = qr__bn_cmp_cell };
        qr_html_table(h, &t, &to);
    }
    qr_table_free(&t);
    const char *files[] = { "compare_per_layer_out.txt", "compare_per_layer_out.csv" };
    qr_html_files(h, files, 2);
}

static QrStatus qr__bn_html(QrBd *bd) {
    QrHtml h;
    qr_html_init(&h, "qreport — quantization accuracy report");
    const QrSession *se = &bd->se;
    qr_html_subtitle(&h, qr_arena_printf(&bd->arena, "baseline %s · analysis %s · qreport %s", se->b->path, se->a->path,
                                         QR_VERSION));
    QrHtmlLevel lv;
    const char *verdict = qr__bn_verdict(bd, &lv);
    qr_html_verdict_begin(&h, lv, verdict);
    if (bd->have_cmp) {
        qr_html_metric(&h, "Output Cosine", qr_arena_printf(&bd->arena, "%.6f", bd->cmp.out.cosine), qr__bn_cos_level(bd->cmp.out.cosine), NULL);
        qr_html_metric(&h, "Output SQNR", qr_arena_printf(&bd->arena, "%.2f dB", bd->cmp.out.sqnr),
                       bd->cmp.out.sqnr >= 30 ? QR_HTML_GOOD : bd->cmp.out.sqnr >= 20 ? QR_HTML_WARN : QR_HTML_BAD, NULL);
        qr_html_metric(&h, "Output L1", qr_arena_printf(&bd->arena, "%.6g", bd->cmp.out.l1), QR_HTML_NONE, NULL);
    }
    int matched = 0, fused = 0;
    for (int i = 0; i < se->m.n; i++) {
        matched += se->m.m[i].a_node >= 0;
        fused += se->m.m[i].a_node < 0 && se->m.m[i].note && !strncmp(se->m.m[i].note, "fused", 5);
    }
    qr_html_metric(&h, "Match coverage", qr_arena_printf(&bd->arena, "%d / %d", matched + fused, se->m.n),
                   matched + fused == se->m.n ? QR_HTML_GOOD : QR_HTML_WARN,
                   fused ? qr_arena_printf(&bd->arena, "%d paired, %d fused into their successor", matched, fused)
                         : "baseline values paired with analysis values");
    if (bd->o->single_model)
        qr_html_para(&h, "Single-model form: the baseline is the analysis model itself with every quantizer disabled "
                     "(integer weights without a float counterpart stay at their dequantized values).");
    qr_html_metric(&h, "Verified pairs", se->m.verified_run ? qr_arena_printf(&bd->arena, "%d / %d", se->m.n_verified,
                                                                             se->m.n_verified + se->m.n_unverified) : "not checked",
                   se->m.verified_run && !se->m.n_unverified ? QR_HTML_GOOD : QR_HTML_BAD,
                   "same value with quantizers off (only these make headlines)");
    if (bd->have_eq)
        qr_html_metric(&h, "Equivalence", bd->eq.equivalent ? "pass" : "FAIL", bd->eq.equivalent ? QR_HTML_GOOD : QR_HTML_BAD,
                       "quantizers off ⇒ baseline reproduced");
    if (bd->have_cmp) {
        /* the three layers with the lowest Cosine */
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
        qr_html_para(&h, "Worst layers (lowest Cosine against the baseline):");
        qr_html_list_begin(&h, true);
        for (int w = 0; w < 3 && worst[w] >= 0; w++) {
            const QrLayerRow *r = &bd->cmp.rows[worst[w]];
            qr_html_itemf(&h, "%s (%s): Cosine %.6f, local Cosine %.6f", se->b->nodes[se->m.m[r->match].b_node].name,
                          se->b->nodes[se->m.m[r->match].b_node].op_type, r->m.cosine, r->has_local ? r->local.cosine : NAN);
        }
        qr_html_list_end(&h);
    }
    if (bd->have_sens && bd->sens.n) {
        qr_html_para(&h, "Most sensitive quantizers (metric at the model output with only them enabled):");
        qr_html_list_begin(&h, true);
        for (int k = 0; k < bd->sens.n && k < 5; k++)
            qr_html_itemf(&h, "%s — %s (%s): %s %.6g", bd->sens.rows[k].name, qr_sens_type_name(bd->sens.rows[k].type),
                          bd->sens.rows[k].op_type, qr_metric_name(bd->sens.opts.metric),
                          qr_metric_get(&bd->sens.rows[k].m, bd->sens.opts.metric));
        qr_html_list_end(&h);
        qr_html_para(&h, qr__bn_action(bd));
    }
    if (bd->have_adv && bd->adv.n) {
        qr_html_para(&h, "Advisor's main findings:");
        qr_html_list_begin(&h, false);
        for (int k = 0; k < bd->adv.n && k < 3; k++)
            qr_html_itemf(&h, "%s: %s — %s", bd->adv.f[k].node ? bd->adv.f[k].node : "model", bd->adv.f[k].reason, bd->adv.f[k].fix);
        qr_html_list_end(&h);
        if (bd->adv.main_how) qr_html_paraf(&h, "The first is the main finding: %s.", bd->adv.main_how);
    }
    for (int k = 0; k < bd->n_fail; k++) qr_html_failed(&h, bd->fail_name[k], bd->fail_msg[k]);
    qr_html_verdict_end(&h);

    if (bd->have_cmp) qr__bn_html_compare(&h, se, &bd->cmp, qr__bn_exists(bd, "plots/per_layer_metrics.png"));
    if (bd->have_sens) {
        qr_html_section(&h, "sensitivity", "Quantization sensitivity");
        qr_html_paraf(&h, "%s; sorted by %s%s, most sensitive first. %lld node executions (incremental) instead of %lld for "
                      "full re-runs.", bd->sens.opts.off_one ? "Every quantizer on except the row's" : "Only the row's quantizers on",
                      bd->sens.opts.off_one ? "the gain in " : "", qr_metric_name(bd->sens.opts.metric), (long long)bd->sens.n_exec, (long long)bd->sens.n_full);
        if (qr__bn_exists(bd, "plots/sensitivity_topk.png"))
            qr_html_image(&h, "plots/sensitivity_topk.png", "Top-k sensitive ops", NULL, 0, 0);
        QrTable t = {0};
        if (qr__bn_sens_table(&bd->sens, bd->sens.n, &t) == QR_OK) qr_html_table(&h, &t, NULL);
        qr_table_free(&t);
        const char *files[] = { "sensitive_ops.txt", "sensitive_ops.csv", "sensitive_ops.json" };
        qr_html_files(&h, files, 3);
    }
    if (bd->have_acc) {
        qr_html_section(&h, "accumulated", "Cumulative error");
        qr_html_paraf(&h, "%s of every matched value along the graph for each quantization setting.", qr_metric_name(bd->acc.metric));
        if (qr__bn_exists(bd, "plots/accumulated_error.png"))
            qr_html_image(&h, "plots/accumulated_error.png", "Cumulative error curves", NULL, 0, 0);
        QrTable t = {0};
        const char *cols[20] = { "setting", "output Cosine", "output SQNR", "output L1" };
        if (qr_table_init(&t, 4, cols) == QR_OK) {
            for (int k = 0; k < bd->acc.n_settings; k++) {
                int ri;
                if (qr_table_add_row(&t, &ri) != QR_OK) break;
                qr_table_set(&t, ri, 0, bd->acc.setting[k]);
                qr__cmp_num(&t, ri, 1, bd->acc.out[k].cosine, false);
                qr__cmp_num(&t, ri, 2, bd->acc.out[k].sqnr, false);
                qr__cmp_num(&t, ri, 3, bd->acc.out[k].l1, false);
            }
            qr_html_table(&h, &t, NULL);
        }
        qr_table_free(&t);
        const char *files[] = { "accumulated_error.csv" };
        qr_html_files(&h, files, 1);
    }
    if (bd->have_adv) {
        qr_html_section(&h, "advisor", "Abnormal layers and fixes");
        const char *t = qr__bn_read_text(bd, "abnormal_layer_advisor.txt");
        if (t) qr_html_pre(&h, t);
    }
    if (qr__bn_exists(bd, "int16_demotion.txt")) {     /* --demote-int16 */
        qr_html_section(&h, "demotion", "int16 → int8 demotion");
        const char *t = qr__bn_read_text(bd, "int16_demotion.txt");
        if (t) qr_html_pre(&h, t);
        const char *files[] = { "int16_demotion.txt", "int16_demotion.csv", "int16_demotion.json" };
        qr_html_files(&h, files, 3);
    }
    if (bd->have_wi) {
        qr_html_section(&h, "whatif", "Mixed-precision what-if");
        qr_html_paraf(&h, "The top-k sensitive nodes re-run with their quantizers on a 16-bit grid (same threshold), and "
                      "separately in float. Target output Cosine %.4g; as is: %.6f.", bd->wi.target, bd->wi.as_is.cosine);
        QrTable t = {0};
        const char *cols[] = { "k", "int16 Cosine", "int16 SQNR", "float Cosine", "float SQNR", "nodes" };
        if (qr_table_init(&t, 6, cols) == QR_OK) {
            for (int k = 0; k < bd->wi.n_steps; k++) {
                const QrWhatIfStep *w = &bd->wi.steps[k];
                int ri;
                if (qr_table_add_row(&t, &ri) != QR_OK) break;
                qr_table_setf(&t, ri, 0, "%d", w->k);
                qr__cmp_num(&t, ri, 1, w->int16.cosine, false);
                qr__cmp_num(&t, ri, 2, w->int16.sqnr, false);
                qr__cmp_num(&t, ri, 3, w->fp.cosine, false);
                qr__cmp_num(&t, ri, 4, w->fp.sqnr, false);
                char buf[1024] = "";
                size_t o2 = 0;
                for (int n2 = 0; n2 < w->k && o2 < sizeof buf; n2++)
                    o2 += (size_t)snprintf(buf + o2, sizeof buf - o2, "%s%s", n2 ? ", " : "", w->nodes[n2]);
                qr_table_set(&t, ri, 5, buf);
            }
            qr_html_table(&h, &t, NULL);
        }
        qr_table_free(&t);
        const char *files[] = { "mixed_precision.json" };
        qr_html_files(&h, files, 1);
    }
    if (bd->have_w) {
        qr_html_section(&h, "weights", "Weight comparison");
        const char *t = qr__bn_read_text(bd, "weight_comparison.txt");
        if (t) qr_html_pre(&h, t);
        const char *wb = qr__bn_exists(bd, "weight_blocks.txt") ? qr__bn_read_text(bd, "weight_blocks.txt") : NULL;
        if (wb) qr_html_pre(&h, wb);   /* blocked (weight-only) weights only */
    }
    if (bd->have_dist && bd->dist.n) {
        qr_html_section(&h, "distribution", "Value distributions");
        qr_html_para(&h, "Top sensitive weights and activations: histogram of the baseline (float) values and of the "
                     "analysis (quantized) values on the same bins, the abs-max (solid line), the quantization threshold "
                     "scale·qmax (dashed) and, below, the histogram of the error analysis − baseline. Mass beyond the "
                     "threshold is clipped; a threshold far beyond the data wastes resolution.");
        qr_html_gallery_begin(&h);
        for (int i = 0; i < bd->dist.n; i++) {
            char safe[200];
            qr_zip_safe_component(safe, sizeof safe, bd->dist.d[i].name);
            const char *png = qr_arena_printf(&bd->arena, "plots/distribution/%s_%d.png", safe, i);
            if (qr__bn_exists(bd, png)) qr_html_image(&h, png, bd->dist.d[i].name, bd->dist.d[i].name, 0, 0);
        }
        qr_html_gallery_end(&h);
        qr_html_section(&h, "channelwise", "Per-channel distributions");
        qr_html_para(&h, "Top sensitive weights and activations: per-channel min, quartiles, median, mean and max of the "
                     "baseline values; outlier channels (abs-max far above the median channel's) are highlighted — they "
                     "call for per-channel quantization.");
        qr_html_gallery_begin(&h);
        for (int i = 0; i < bd->dist.n; i++) {
            char safe[200];
            qr_zip_safe_component(safe, sizeof safe, bd->dist.d[i].name);
            const char *png = qr_arena_printf(&bd->arena, "plots/channelwise/%s_%d.png", safe, i);
            if (qr__bn_exists(bd, png)) qr_html_image(&h, png, bd->dist.d[i].name, bd->dist.d[i].name, 0, 0);
        }
        qr_html_gallery_end(&h);
    }
    qr_deploy_runall_html(&h, &bd->dep);
    qr_ds_runall_html(&h, &bd->dsr, &bd->se, bd->dir);
    qr_html_section(&h, "check", "Model structure check");
    const char *chk = qr__bn_read_text(bd, "model_check_result.txt");
    if (chk) qr_html_pre(&h, chk);
    qr_html_section(&h, "match", "Baseline ⇄ analysis match");
    if (bd->have_eq) qr_html_para(&h, qr_equiv_verdict(se->b, &se->m, &bd->eq));
    const char *mt = qr__bn_read_text(bd, "match_table.txt");
    if (mt) qr_html_pre(&h, mt);
    qr_html_section(&h, "files", "Files");
    const char *all[] = { "summary.json", "manifest.json", "model_check_result.txt", "match_table.txt", "match_table.csv",
                          "model0_statistic.txt", "model0_statistic.csv", "model1_statistic.txt", "model1_statistic.csv",
                          "compare_per_layer_out.txt", "compare_per_layer_out.csv", "sensitive_ops.txt",
                          "sensitive_ops.csv", "sensitive_ops.json", "accumulated_error.csv", "badcase.npy",
                          "weight_comparison.txt", "weight_comparison.csv", "weight_blocks.txt", "weight_blocks.csv",
                          "abnormal_layer_advisor.txt",
                          "mixed_precision.json", "badcase_list.txt", "badcase_list.csv", "dataset/compare_per_layer_out.txt",
                          "dataset/compare_per_layer_out.csv", "dataset/compare_outputs.txt", "dataset/compare_outputs.csv",
                          "dataset/samples.txt", "dataset/samples.csv", "dataset/badcase.npy", "int16_demotion.txt",
                          "int16_demotion.csv", "int16_demotion.json" };
    const char *present[QR_ARRAY_LEN(all)];
    int np = 0;
    for (int i = 0; i < QR_ARRAY_LEN(all); i++) if (!strcmp(all[i], "summary.json") || !strcmp(all[i], "manifest.json") || qr__bn_exists(bd, all[i])) present[np++] = all[i];
    qr_html_files(&h, present, np);
    char *txt = NULL;
    size_t len = 0;
    QrStatus st = qr_html_finish(&h, &txt, &len);
    if (st != QR_OK) { qr_html_free(&h); return st; }
    st = qr_file_write_atomic(qr__bn_path(bd, "index.html"), txt, len);
    free(txt);
    return st;
}


/* ==== plots ============================================================================ */

/* The plots, one job each, rendered and encoded in parallel (qr__bn_plots): job 0 the
 * per-layer metrics, 1 the cumulative error, then a histogram per distribution, a box plot
 * per distribution, and last the sensitivity bars. Titles go to the job's own arena. */
static int qr__bn_plot_jobs(const QrBd *bd) { return 3 + 2 * (bd->have_dist ? bd->dist.n : 0); }

static QrStatus qr__bn_save(const QrBd *bd, QrCanvas *c, const char *name) {
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
    const QrBd *bd = ctx;
    const QrSession *se = &bd->se;
    int nd = bd->have_dist ? bd->dist.n : 0;
    QrArena ar = {0};
    QrStatus st = QR_OK;
    if (job == 0 && bd->have_cmp && bd->cmp.n) {
        char path[4400];
        snprintf(path, sizeof path, "%s/plots/per_layer_metrics.png", bd->dir);
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
        if (st == QR_OK && n) st = qr__bn_save(bd, &c, "plots/accumulated_error.png");
        free(y);
        free(names);
    } else if (job >= 2 && job < 2 + nd) {
        int i = job - 2;
        const QrDist *d = &bd->dist.d[i];
        char safe[200];
        qr_zip_safe_component(safe, sizeof safe, d->name);
        QrHistChart hc = { .title = qr_arena_printf(&ar, "Distribution of %s %s%s%s", d->is_weight ? "weight" : "activation",
                                                    d->name, d->node && strcmp(d->node, d->name) ? " at " : "",
                                                    d->node && strcmp(d->node, d->name) ? d->node : ""),
                           .base_name = "baseline (float)", .anal_name = "analysis (quantized)",
                           .threshold = d->threshold, .have_clip_lo = isfinite(d->clip_lo) && d->clip_lo != -d->threshold,
                           .clip_lo = d->clip_lo, .y_scale = QR_SCALE_AUTO, .error_panel = true,
                           .h_base = d->h_base, .h_anal = d->h_anal, .h_err = d->h_err, .n_bins = d->n_bins,
                           .lo = d->lo, .hi = d->hi, .err_lo = d->err_lo, .err_hi = d->err_hi,
                           .absmax = d->n ? d->absmax_base : -1, .n_nonfinite = d->n_nonfinite };
        QrCanvas c;
        st = qr_plot_hist(&hc, &c);
        if (st == QR_OK) {
            st = qr__bn_save(bd, &c, qr_arena_printf(&ar, "plots/distribution/%s_%d.png", safe, i));
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
        QrBoxChart bc = { .title = qr_arena_printf(&ar, "Per-channel distribution of %s %s (%d outlier channel%s)",
                                                   d->is_weight ? "weight" : "activation", d->name, d->n_outlier,
                                                   d->n_outlier == 1 ? "" : "s"),
                          .x_label = qr_arena_printf(&ar, "channel (axis %d)", d->ch_axis), .y_label = "value",
                          .boxes = bx, .n = d->n_ch, .outlier = ol };
        QrCanvas c;
        st = qr_plot_box(&bc, &c);
        if (st == QR_OK) {
            st = qr__bn_save(bd, &c, qr_arena_printf(&ar, "plots/channelwise/%s_%d.png", safe, i));
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
        if (st == QR_OK) st = qr__bn_save(bd, &c, "plots/sensitivity_topk.png");
        free(v);
        free(names);
    }
done:
    qr_arena_free(&ar);
    return st;
}

static QrStatus qr__bn_plots(QrBd *bd) {
    QR_TRY(qr_mkdir_p(qr__bn_path(bd, "plots")));
    if (bd->have_dist && bd->dist.n) {
        QR_TRY(qr_mkdir_p(qr__bn_path(bd, "plots/distribution")));
        bool box = false;
        for (int i = 0; i < bd->dist.n; i++) box |= bd->dist.d[i].n_ch && bd->dist.d[i].ch;
        if (box) QR_TRY(qr_mkdir_p(qr__bn_path(bd, "plots/channelwise")));
    }
    return qr_session_jobs(qr__bn_plot_jobs(bd), qr__bn_plot_job, bd, NULL);
}

/* ==== the run ========================================================================== */

/* --demote-int16: int16_demotion.* ranked by the sensitivity's metric. */
static QrStatus qr__bn_demote(QrBd *bd) {
    QrDemotion dm = {0};
    QR_TRY(qr_demote_run(&bd->se, bd->o->sens.metric, &dm));
    QrStatus st = qr_demote_write(&bd->se, &dm, bd->dir);
    qr_demote_free(&dm);
    return st;
}

/* The cumulative error's user node sets (--quantize-nodes / --non-quantize-nodes). */
static QrStatus qr__bn_acc_sets(QrBd *bd) {
    const QrRunallOpts *o = bd->o;
    QrStatus st = QR_OK;
    if (o->quantize_nodes) st = qr_select_acc_sets(&bd->se, o->quantize_nodes, true, &bd->acc_sets);
    if (st == QR_OK && o->non_quantize_nodes) st = qr_select_acc_sets(&bd->se, o->non_quantize_nodes, false, &bd->acc_sets);
    return st;
}

/* What runall computes right after the baseline run, as independent jobs (QrSeJobFn): 0 and
 * 1 the per-layer comparison's two runs (the analysis model, with its statistics from the
 * same run, and the shadow run), 2 the equivalence check, 3 the weight comparison, 4 the
 * sensitivity reference run (kept in the session; not with --max-memory, whose estimate has
 * no room for it before the sensitivity stage). Each job's status and message are kept for
 * its stage; the jobs themselves never fail. */
#define QR__BN_EARLY 5

typedef struct QrBdEarly {
    QrBd *bd;
    QrCmpPlan *cmp;              /* the comparison's plan (NULL: its preparation failed) */
    QrStats *stats;              /* the analysis model's statistics (job 0) */
    bool *seen;
    QrStatus st[QR__BN_EARLY];
    char *msg[QR__BN_EARLY];     /* malloc'd */
} QrBdEarly;

static QrStatus qr__bn_early_job(void *ctx, int k, int tid) {
    QR_UNUSED(tid);
    QrBdEarly *e = ctx;
    QrBd *bd = e->bd;
    QrStatus st = QR_OK;
    if (k < 2) st = e->cmp ? qr_compare_step(e->cmp, k) : QR_OK;
    else if (k == 2) st = qr_session_equivalence(&bd->se, &bd->eq);
    else if (k == 3) st = qr_weights_compare(&bd->se, &bd->w);
    else if (!bd->se.no_incremental) st = qr_sens_reference(&bd->se, &bd->o->sens);
    e->st[k] = st;
    if (st != QR_OK) {
        e->msg[k] = strdup(qr_err_msg());
        qr_err_clear();
    }
    return QR_OK;
}

static QrStatus qr_bundle_runall(const QrGraph *b, const QrGraph *a, const QrTensor *inputs, const QrRunallOpts *o,
                                 QrRunallResult *r) {
    memset(r, 0, sizeof *r);
    QrBd *bd = calloc(1, sizeof *bd);
    if (!bd) return qr_errf(QR_ERR_NOMEM, "out of memory");
    bd->o = o;
    bd->inputs = inputs;
    qr_progress_init(&bd->prog, stderr, o->quiet);
    /* Staging folder next to the bundle, so the final rename stays on one file system. */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", o->out_zip);
    char *slash = strrchr(parent, '/');
    if (slash) *slash = 0; else snprintf(parent, sizeof parent, ".");
    QrStatus st = qr_mkdir_p(parent);
    if (st == QR_OK) {
        snprintf(bd->dir, sizeof bd->dir, "%s/.qreport-staging-XXXXXX", parent);
        if (!mkdtemp(bd->dir)) st = qr_errf(QR_ERR_IO, "cannot create a staging folder in %s: %s", parent, strerror(errno));
    }
    bool staged = st == QR_OK;
    const int staged_slot = staged ? qr_cleanup_add(bd->dir, true) : -1;   /* removed on SIGINT/SIGTERM */
    QrStats *base_stats = NULL;
    bool *base_seen = NULL;
    if (st == QR_OK) qr__bn_hash_start(bd, b, a);
    if (st == QR_OK) {
        qr_progress_begin(&bd->prog, "prepare", 0);
        st = qr_session_open(&bd->se, b, a, inputs);
        if (st == QR_OK && o->single_model) qr_session_single_model(&bd->se);
        bd->se.progress = qr_progress_hook(&bd->prog);
        if (st == QR_OK && o->dataset) {     /* --data: the pass over the set, then the analyses on its worst sample */
            qr_progress_end(&bd->prog, st);
            qr_progress_begin(&bd->prog, "data set", 0);
            int only = -1;
            qr_select_output(b, o->sens.rank_output, &only);
            qr_err_clear();
            st = qr_ds_runall_pass(&bd->dsr, o->dataset, o->dataset_metric, only, &bd->se, o->mode, inputs);
            if (st == QR_OK) inputs = bd->inputs = bd->dsr.worst_in;
            qr_progress_end(&bd->prog, st);
            qr_progress_begin(&bd->prog, "prepare", 0);
        }
        /* the baseline run also gives the baseline profile's statistics */
        base_stats = calloc((size_t)b->n_values + 1, sizeof *base_stats);
        base_seen = calloc((size_t)b->n_values + 1, sizeof *base_seen);
        bd->se.base_stats = base_stats && base_seen ? base_stats : NULL;
        bd->se.base_seen = base_stats && base_seen ? base_seen : NULL;
        if (st == QR_OK) st = qr_session_run_baseline(&bd->se);
        bd->se.base_stats = NULL;
        bd->se.base_seen = NULL;
        qr_progress_end(&bd->prog, st);
    }
    if (st == QR_OK && o->deploy.dump) {     /* a bad dump fails the run: no bundle */
        qr_progress_begin(&bd->prog, "device dump", 0);
        st = qr_deploy_runall_early(&bd->dep, &o->deploy, &bd->se, inputs, bd->dir);
        qr_progress_end(&bd->prog, st);
    }
    if (st == QR_OK) {
        qr_progress_begin(&bd->prog, "match", 0);
        /* The analyses that need only the baseline's values run side by side (see qr__bn_early_job);
         * their stages below write what they found. */
        QrBdEarly early = { .bd = bd };
        early.stats = calloc((size_t)a->n_values + 1, sizeof *early.stats);
        early.seen = calloc((size_t)a->n_values + 1, sizeof *early.seen);
        bool merged = false;
        QrStatsCollect sc = { early.stats, early.seen };
        QrStatus s_cmp = early.stats && early.seen ? qr_compare_prepare(&bd->se, o->mode, o->cos_threshold, qr_stats_tap, &sc,
                                                                        &merged, &bd->cmp, &early.cmp)
                                                   : qr_errf(QR_ERR_NOMEM, "out of memory");
        qr_err_clear();
        qr_session_jobs(QR__BN_EARLY, qr__bn_early_job, &early, NULL);
        if (s_cmp == QR_OK) s_cmp = early.st[0] != QR_OK ? early.st[0] : early.st[1];
        s_cmp = qr_compare_finish(early.cmp, s_cmp);
        qr_err_clear();
        bd->have_eq = early.st[2] == QR_OK;
        QrStatus s2 = qr_match_write(b, a, &bd->se.m, bd->have_eq ? &bd->eq : NULL, bd->dir);
        qr__bn_done(bd, "match", s2);
        qr_progress_begin(&bd->prog, "check", 0);
        /* One run of the analysis model gives the statistics both the check and its profile use;
         * it is the per-layer comparison's run too (sim / both modes; that stage only writes then). */
        QrStats *stats = early.stats;
        bool *seen = early.seen;
        bool cmp_done = s_cmp == QR_OK;   /* else the compare stage runs it again and reports the error */
        merged = cmp_done && merged;
        if (!merged && seen) memset(seen, 0, (size_t)a->n_values * sizeof *seen);
        QrStatus s_stats = !stats || !seen ? qr_errf(QR_ERR_NOMEM, "out of memory") : merged ? QR_OK
                         : qr_stats_collect(a, inputs, stats, seen);
        if (merged) qr_stats_inits(a, stats, seen);
        s2 = s_stats;
        if (s2 == QR_OK) s2 = qr_check_write(a, &bd->se.qa, stats, qr__bn_path(bd, "model_check_result.txt"), &bd->chk);
        bd->have_chk = qr__bn_done(bd, "check", s2);
        qr_progress_begin(&bd->prog, "profile", 2);
        s2 = qr_profile_write(b, inputs, base_stats && base_seen ? base_stats : NULL, base_seen, bd->dir, "model0_", NULL);
        qr_progress_step(&bd->prog);
        if (s2 == QR_OK) s2 = s_stats == QR_OK ? qr_profile_write(a, inputs, stats, seen, bd->dir, "model1_", NULL) : s_stats;
        qr__bn_done(bd, "profile", s2);
        free(stats);
        free(seen);
        qr_progress_begin(&bd->prog, "compare", 0);
        s2 = cmp_done ? QR_OK : qr_compare_mode(&bd->se, o->mode, o->cos_threshold, &bd->cmp);
        bd->have_cmp = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_compare_write(&bd->se, &bd->cmp, bd->dir);
        qr__bn_done(bd, "compare", s2);
        if (bd->have_cmp && !o->deploy.no_repro) {     /* repro/ of the worst layer (deploy/) */
            qr_progress_begin(&bd->prog, "repro", 0);
            qr__bn_done(bd, "repro", qr_deploy_runall_repro(&bd->dep, &o->deploy, &bd->se, &bd->cmp, bd->dir));
        }
        qr_progress_begin(&bd->prog, "sensitivity", 0);
        s2 = qr_sens_run(&bd->se, &o->sens, &bd->sens);
        bd->have_sens = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_sens_write(&bd->se, &bd->sens, bd->dir);
        qr__bn_done(bd, "sensitivity", s2);
        qr_progress_begin(&bd->prog, "accumulated error", 0);
        s2 = qr__bn_acc_sets(bd);
        if (s2 == QR_OK)
            s2 = qr_accum_run_sets(&bd->se, bd->have_sens ? &bd->sens : NULL, o->topk, bd->have_sens ? o->n_topk : 0,
                                   &bd->acc_sets, o->metric_given ? o->sens.metric : QR_METRIC_COSINE, &bd->acc);
        bd->have_acc = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_accum_write(&bd->se, &bd->acc, bd->dir);
        qr__bn_done(bd, "accumulated error", s2);
        qr_progress_begin(&bd->prog, "weight comparison", 0);
        s2 = early.st[3] == QR_OK ? QR_OK : qr_errf(early.st[3], "%s", early.msg[3] ? early.msg[3] : "out of memory");
        bd->have_w = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_weights_write(&bd->se, &bd->w, bd->dir);
        qr__bn_done(bd, "weight comparison", s2);
        for (int k = 0; k < QR__BN_EARLY; k++) free(early.msg[k]);
        qr_progress_begin(&bd->prog, "advisor", 0);
        s2 = qr_advisor_run(&bd->se, bd->have_cmp ? &bd->cmp : NULL, bd->have_sens ? &bd->sens : NULL,
                            bd->have_w ? &bd->w : NULL, NULL, &bd->adv);
        bd->have_adv = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_advisor_write(&bd->se, &bd->adv, bd->dir);
        qr__bn_done(bd, "advisor", s2);
        qr_progress_begin(&bd->prog, "mixed precision", 0);
        s2 = bd->have_sens ? qr_whatif_run(&bd->se, &bd->sens, o->n_topk ? o->topk : NULL, o->n_topk, 0, &bd->wi)
                           : qr_errf(QR_ERR_INVALID, "needs the sensitivity ranking, which failed");
        bd->have_wi = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_whatif_write(&bd->se, &bd->wi, bd->dir);
        qr__bn_done(bd, "mixed precision", s2);
        if (o->demote_int16) {
            qr_progress_begin(&bd->prog, "int16 demotion", 0);
            qr__bn_done(bd, "int16 demotion", qr__bn_demote(bd));
        }
        if (o->deploy.emit_dir) {                       /* --emit-model (deploy/) */
            qr_progress_begin(&bd->prog, "emit model", 0);
            s2 = bd->have_wi ? qr_deploy_runall_emit(&bd->dep, &o->deploy, &bd->se, &bd->sens, &bd->wi)
                             : qr_errf(QR_ERR_INVALID, "needs the mixed-precision what-if, which failed");
            qr__bn_done(bd, "emit model", s2);
        }
        qr_progress_begin(&bd->prog, "distributions", 0);
        s2 = qr_dist_collect_axis(&bd->se, bd->have_sens ? &bd->sens : NULL, o->plot_nodes, o->n_plot_nodes, 0,
                                  o->have_channel_axis, o->channel_axis, &bd->dist);
        bd->have_dist = s2 == QR_OK;
        qr_session_ref_free(&bd->se);        /* the last user of the all-on reference */
        qr__bn_done(bd, "distributions", s2);
        qr_progress_begin(&bd->prog, "badcase", 0);
        s2 = QR_OK;
        if (o->badcase) s2 = qr_badcase_write(o->badcase, bd->dir);
        for (int i = 0; !o->badcase && s2 == QR_OK && i < b->n_inputs; i++) {
            char safe[256];
            qr_zip_safe_component(safe, sizeof safe, b->values[b->inputs[i]].name);
            const char *name = b->n_inputs == 1 ? "badcase.npy" : qr_arena_printf(&bd->arena, "badcase_%s.npy", safe);
            s2 = qr_npy_write(qr__bn_path(bd, name), &inputs[i]);
        }
        qr__bn_done(bd, "badcase", s2);
        if (o->dataset) {
            qr_progress_begin(&bd->prog, "data set", 0);
            qr__bn_done(bd, "data set", qr_ds_runall_write(&bd->dsr, &bd->se, bd->dir));
        }
        qr_progress_begin(&bd->prog, "plots", 0);
        qr__bn_done(bd, "plots", qr__bn_plots(bd));
        qr_progress_begin(&bd->prog, "report", 0);
        s2 = qr__bn_summary(bd);
        if (s2 == QR_OK) s2 = qr__bn_manifest(bd);
        if (s2 == QR_OK) s2 = qr__bn_html(bd);
        qr_progress_end(&bd->prog, s2);
        st = s2;
    }
    if (st == QR_OK) {
        /* manifest.json last so it records the report stage too */
        qr_progress_begin(&bd->prog, "zip", 0);
        st = qr__bn_manifest(bd);
        QrZip z;
        /* Fault injection for tests (SQLite style): the Nth write step of the zip fails. */
        const char *fail = getenv("QR_TEST_ZIP_FAIL_WRITE");
        if (fail) qr_zip_test_fail_write(atoi(fail));
        const char *stop = getenv("QR_TEST_ZIP_STOP_AT");   /* and stops before the Nth (test_harden_interrupt) */
        if (stop) qr_zip_test_stop_at(atoi(stop));
        if (st == QR_OK) st = qr_zip_init(&z);
        if (st == QR_OK) {
            st = qr__bn_add_tree(&z, bd->dir, "", &bd->arena);
            if (st == QR_OK) st = qr_zip_write(&z, o->out_zip);
            if (st == QR_OK && o->keep_dir) {
                const char *dstop = getenv("QR_TEST_DIR_STOP_AT");   /* steps counted from the folder's first */
                if (dstop) qr_zip_test_stop_at(atoi(dstop));
                st = qr_zip_write_dir(&z, o->keep_dir, "manifest.json");
            }
            qr_zip_free(&z);
        }
        qr_progress_end(&bd->prog, st);
    }
    if (st == QR_OK) {
        r->have_out = bd->have_cmp;
        if (bd->have_cmp) r->out = bd->cmp.out;
        r->n_failed = bd->n_fail;
        size_t n = 0;
        QrHtmlLevel lv;
        if (o->single_model)
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Single-model form: the baseline is %s with every "
                                  "quantizer disabled.\n", a->path ? a->path : "the analysis model");
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "%s\n", qr__bn_verdict(bd, &lv));
        for (int k = 0; bd->have_sens && k < bd->sens.n && k < 5 && n < sizeof r->summary; k++) {
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "  sensitive %d: %s (%s, %s) %s %.6g", k + 1,
                                  bd->sens.rows[k].name, qr_sens_type_name(bd->sens.rows[k].type), bd->sens.rows[k].op_type,
                                  qr_metric_name(bd->sens.opts.metric), qr_metric_get(&bd->sens.rows[k].m, bd->sens.opts.metric));
            if (bd->sens.opts.off_one && n < sizeof r->summary)
                n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, " (gain %.6g over all on)",
                                      qr_sens_gain(&bd->sens, &bd->sens.rows[k]));
            if (n < sizeof r->summary) n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "\n");
        }
        if (bd->have_adv && bd->adv.n && n < sizeof r->summary) {
            const QrFinding *f = &bd->adv.f[0];
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Advisor (%d finding%s), main: %s %s: %s\n  fix: %s\n",
                                  bd->adv.n, bd->adv.n == 1 ? "" : "s", f->node && *f->node ? f->node : "model",
                                  qr_adv_kind_name(f->kind), f->reason, f->fix);
        }
        const char *act = qr__bn_action(bd);
        if (act && n < sizeof r->summary) n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "%s\n", act);
        if (bd->have_eq && n < sizeof r->summary)
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "%s\n", bd->eq.equivalent ? "Equivalence check: PASS" :
                                  "Equivalence check: WARNING — the models differ beyond quantization (see match_table.txt)");
        for (int k = 0; k < bd->n_fail && n < sizeof r->summary; k++)
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "analysis '%s' failed: %s\n", bd->fail_name[k], bd->fail_msg[k]);
    }
    qr__bn_hash_join(bd);
    free(base_stats);
    free(base_seen);
    if (staged) qr__bn_rmtree(bd->dir);
    qr_cleanup_drop(staged_slot);
    if (bd->have_eq) qr_equiv_free(&bd->eq);
    qr_compare_free(&bd->cmp);
    qr_sens_free(&bd->sens);
    qr_accum_free(&bd->acc);
    qr_select_acc_sets_free(&bd->acc_sets);
    if (bd->have_w) qr_weights_free(&bd->w);
    if (bd->have_adv) qr_advice_free(&bd->adv);
    if (bd->have_wi) qr_whatif_free(&bd->wi);
    if (bd->have_dist) qr_dist_free(&bd->dist);
    qr_deploy_runall_free(&bd->dep);
    qr_ds_runall_free(&bd->dsr);
    if (bd->se.b) qr_session_close(&bd->se);
    qr_arena_free(&bd->arena);
    free(bd);
    return st;
}

/* ==== compare's own page ================================================================ */

static QrStatus qr_bundle_compare_page(const QrSession *se, const QrCompare *cmp, const char *advisor_txt, const char *dir) {
    QrArena ar = {0};
    QrStatus st = qr_mkdir_p(qr_arena_printf(&ar, "%s/plots", dir));
    bool plot = false;
    if (st == QR_OK && cmp->n) {
        st = qr__bn_plot_per_layer(se, cmp, qr_arena_printf(&ar, "%s/plots/per_layer_metrics.png", dir));
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
        const char *files[] = { "abnormal_layer_advisor.txt" };
        qr_html_files(&h, files, 1);
    }
    char *txt = NULL;
    size_t len = 0;
    if (st == QR_OK) st = qr_html_finish(&h, &txt, &len);
    else qr_html_free(&h);
    if (st == QR_OK) st = qr_file_write_atomic(qr_arena_printf(&ar, "%s/compare_per_layer.html", dir), txt, len);
    free(txt);
    qr_arena_free(&ar);
    return st;
}
