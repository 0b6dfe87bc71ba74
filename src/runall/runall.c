/* runall/runall — implementation. See runall.h.
 *
 *   prepare session (baseline run + its statistics) ─► weight comparison ─► [compare run (+ analysis
 *   statistics), shadow run, equivalence, sensitivity reference run: side by side]
 *   ─► match ─► check ─► profiles ─► compare ─► sensitivity rows ─► cumulative error
 *   ─► weights ─► advisor ─► what-if ─► distributions ─► fragility ─► badcase.npy ─► plots (in parallel)
 *   ─► summary/manifest/index.html ─► zip of the staging folder (atomic) [─► --keep-dir copy]
 *   ─► staging removed. The input files are hashed on a helper thread meanwhile. Stages are
 *   recorded in this order (manifest.json); a stage whose work ran early only writes. */

#include <malloc.h>

#ifdef QR_TESTING
static QrRunallFaults qr__ra_faults;     /* test builds only (runall.h) */
QR_TESTAPI void qr_runall_test_faults(const QrRunallFaults *f) { qr__ra_faults = f ? *f : (QrRunallFaults){ 0 }; }
#endif

/* Records the outcome of one analysis; a failure is kept for the manifest/HTML. */
static bool qr__ra_done(QrBundle *bd, const char *stage, QrStatus st) {
#ifdef QR_TESTING
    /* Fault injection: that analysis fails, or the process stops once it has written its files
     * (so a test can interrupt a run with its staging folder half full). */
    if (st == QR_OK && qr__ra_faults.fail_stage && !strcmp(qr__ra_faults.fail_stage, stage))
        st = qr_errf(QR_ERR_IO, "injected failure (qr_runall_test_faults)");
    if (qr__ra_faults.stop_stage && !strcmp(qr__ra_faults.stop_stage, stage)) raise(SIGSTOP);
#endif
    qr_progress_end(&bd->prog, st);
    /* Large buffers freed by an analysis (caches, copies) go back to the system now rather
     * than staying in the heap under the next analysis's peak. */
    malloc_trim(0);
    if (st == QR_OK) return true;
    if (bd->n_fail < QR_BUNDLE_MAX_FAIL) {
        bd->fail_name[bd->n_fail] = stage;
        bd->fail_msg[bd->n_fail] = qr_arena_strdup(&bd->arena, qr_err_msg());
        bd->n_fail++;
    }
    qr_err_clear();
    return false;
}

/* ==== the run ========================================================================== */

/* --demote-int16: int16_demotion.* ranked by the sensitivity's metric. */
static QrStatus qr__ra_demote(QrBundle *bd, const QrRunallOpts *o) {
    QrDemotion dm = {0};
    QR_TRY(qr_demote_run(&bd->se, o->sens.metric, &dm));
    QrStatus st = qr_demote_write(&bd->se, &dm, bd->dir);
    qr_demote_free(&dm);
    return st;
}

/* The cumulative error's user node sets (--quantize-nodes / --non-quantize-nodes). */
static QrStatus qr__ra_acc_sets(QrBundle *bd, const QrRunallOpts *o) {
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
#define QR__RA_EARLY 5

typedef struct QrRaEarly {
    QrBundle *bd;
    const QrRunallOpts *o;
    QrCmpPlan *cmp;              /* the comparison's plan (NULL: its preparation failed) */
    QrStats *stats;              /* the analysis model's statistics (job 0) */
    bool *seen;
    QrStatus st[QR__RA_EARLY];
    char *msg[QR__RA_EARLY];     /* malloc'd */
} QrRaEarly;

static QrStatus qr__ra_early_job(void *ctx, int k, int tid) {
    QR_UNUSED(tid);
    QrRaEarly *e = ctx;
    QrBundle *bd = e->bd;
    QrStatus st = QR_OK;
    if (k < 2) st = e->cmp ? qr_compare_step(e->cmp, k) : QR_OK;
    else if (k == 2) st = qr_session_equivalence(&bd->se, &bd->eq);
    else if (k == 3) st = qr_weights_compare(&bd->se, &bd->w);
    else if (!bd->se.no_incremental) st = qr_sens_reference(&bd->se, &e->o->sens);
    e->st[k] = st;
    if (st != QR_OK) {
        e->msg[k] = strdup(qr_err_msg());
        qr_err_clear();
    }
    return QR_OK;
}

/* Jobs 0-2 and 4 of qr__ra_early_job side by side; the weight comparison (3) runs before them on
 * its own (its own jobs side by side), with the executor's idle buffers given back first: it holds
 * a weight's dequantized float copy at a time (196 MB for a 0.5B decoder's lm_head), which next to
 * another job's run, or after them next to what they keep, made the stage's peak. */
static QrStatus qr__ra_early_batch(void *ctx, int k, int tid) { return qr__ra_early_job(ctx, k < 3 ? k : 4, tid); }

/* The zip stage: manifest.json written last (it records the report stage too), then the staging
 * folder zipped to o->out_zip (atomic) and, with --keep-dir, copied there. */
static QrStatus qr__ra_zip(QrBundle *bd, const QrRunallOpts *o) {
    /* manifest.json last so it records the report stage too */
    qr_progress_begin(&bd->prog, "zip", 0);
    QrStatus st = qr_bundle_write_manifest(bd);
    QrZip z;
#ifdef QR_TESTING
    /* Fault injection (SQLite style): the Nth write step of the zip fails, or the process
     * stops before the Nth (test_harden_interrupt). */
    if (qr__ra_faults.zip_fail_write) qr_zip_test_fail_write(qr__ra_faults.zip_fail_write);
    if (qr__ra_faults.zip_stop_at) qr_zip_test_stop_at(qr__ra_faults.zip_stop_at);
#endif
    if (st == QR_OK) st = qr_zip_init(&z);
    if (st == QR_OK) {
        st = qr_bundle_add_tree(&z, bd->dir, "", &bd->arena);
        if (st == QR_OK) st = qr_zip_write(&z, o->out_zip);
        if (st == QR_OK && o->keep_dir) {
#ifdef QR_TESTING
            if (qr__ra_faults.dir_stop_at) qr_zip_test_stop_at(qr__ra_faults.dir_stop_at);   /* from the folder's first step */
#endif
            st = qr_zip_write_dir(&z, o->keep_dir, QR_BF_MANIFEST);
        }
        qr_zip_free(&z);
    }
    qr_progress_end(&bd->prog, st);
    return st;
}

/* The terminal summary of a finished run (r->summary) and its numbers (r->out, r->n_failed). */
static void qr__ra_summary(const QrBundle *bd, const QrRunallOpts *o, const QrGraph *b, const QrGraph *a, QrRunallResult *r) {
    r->have_out = bd->have_cmp;
    if (bd->have_cmp) r->out = bd->cmp.out;
    r->n_failed = bd->n_fail;
    size_t n = 0;
    QrHtmlLevel lv;
    if (o->single_model)
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Single-model form: the baseline is %s with every "
                              "quantizer disabled.\n", a->path ? a->path : "the analysis model");
    else if (bd->se.base_quant)
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Baseline form: %s (the baseline keeps its own "
                              "quantizers; pairs proven with both models' quantizers off).\n", qr_session_baseline_form(&bd->se));
    n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "%s\n", qr_bundle_verdict(bd, &lv));
    if (bd->have_gen && n < sizeof r->summary) {
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Generation (%d tokens): ", bd->gen.n);
        if (bd->gen.first_divergence >= 0 && n < sizeof r->summary)
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "the models diverge at generated token %d\n",
                                  bd->gen.first_divergence);
        else if (n < sizeof r->summary) n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "the same tokens\n");
    }
    for (int j = 0; bd->have_tok && j < b->n_outputs && n < sizeof r->summary; j++) {
        if (!bd->tok[j].vocab) continue;
        QrTokStats ts;
        qr_tok_stats(&bd->tok[j], &ts);
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "%s per token: %lld tokens, top-1 agree %.4f, KL mean "
                              "%.6g p99 %.6g max %.6g", b->values[b->outputs[j]].name, (long long)ts.tokens,
                              ts.top1_agree, ts.kld_mean, ts.kld_p99, ts.kld_max);
        if (ts.nll_tokens && n < sizeof r->summary)
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, ", ln(PPL ratio) %.6g", ts.ln_ppl_ratio);
        if (n < sizeof r->summary) n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "\n");
    }
    /* most sensitive first whatever --reverse did to sensitive_ops' order */
    for (int k = 0; bd->have_sens && k < bd->sens.n && k < 5 && n < sizeof r->summary; k++) {
        const QrSensRow *row = qr_sens_top(&bd->sens, k);
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "  sensitive %d: %s (%s, %s) %s %.6g", k + 1,
                              row->name, qr_sens_type_name(row->type), row->op_type,
                              qr_metric_name(bd->sens.opts.metric), qr_metric_get(&row->m, bd->sens.opts.metric));
        if (bd->sens.opts.off_one && n < sizeof r->summary)
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, " (gain %.6g over all on)",
                                  qr_sens_gain(&bd->sens, row));
        if (n < sizeof r->summary) n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "\n");
    }
    if (bd->have_adv && bd->adv.n && n < sizeof r->summary) {
        const QrFinding *f = &bd->adv.f[0];
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Advisor (%d finding%s), main: %s %s: %s\n  fix: %s\n",
                              bd->adv.n, bd->adv.n == 1 ? "" : "s", f->node && *f->node ? f->node : "model",
                              qr_adv_kind_name(f->kind), f->reason, f->fix);
    }
    if (bd->have_frag && n < sizeof r->summary) {
        QrArena fa = { 0 };
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Rounding fragility: %s\n", qr_frag_verdict(&fa, &bd->frag));
        qr_arena_free(&fa);
    }
    const char *act = qr_bundle_action(bd);
    if (act && n < sizeof r->summary) n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "%s\n", act);
    if (bd->have_eq && n < sizeof r->summary)
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "%s\n", bd->eq.equivalent ? "Equivalence check: PASS" :
                              "Equivalence check: WARNING — the models differ beyond quantization (see " QR_BF_MATCH ".txt)");
    for (int k = 0; k < bd->n_fail && n < sizeof r->summary; k++)
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "analysis '%s' failed: %s\n", bd->fail_name[k], bd->fail_msg[k]);

}

/* --data: the pass over the set, then the analyses run on its worst sample (*inputs); after
 * qreport merge, as one process's pass (its stages too): the match verified on the first sample,
 * then the analyses on the merged set's worst sample. */
static QrStatus qr__ra_data_set(QrBundle *bd, const QrRunallOpts *o, const QrGraph *b, const QrTensor **inputs) {
    QrStatus st = QR_OK;
    if (!o->dataset_merged) {
        qr_progress_end(&bd->prog, st);
        qr_progress_begin(&bd->prog, "data set", 0);
        int only = -1;
        qr_select_output(b, o->sens.rank_output, &only);
        qr_err_clear();
        st = qr_ds_runall_pass(&bd->dsr, o->dataset, o->dataset_metric, only, o->dataset_skip_bad, &bd->se, o->mode,
                               *inputs);
        if (st == QR_OK) *inputs = bd->inputs = bd->dsr.worst_in;
        qr_progress_end(&bd->prog, st);
        qr_progress_begin(&bd->prog, "prepare", 0);
    } else if (o->dataset_worst) {
        /* as one process's pass (its stages too): the match verified on the first sample, then the
         * analyses on the merged set's worst sample */
        qr_progress_end(&bd->prog, st);
        qr_progress_begin(&bd->prog, "data set", 0);
        st = qr_session_run_baseline(&bd->se);
        if (st == QR_OK) {
            bd->se.match_fixed = true;
            qr_session_next_inputs(&bd->se, o->dataset_worst);
            *inputs = bd->inputs = o->dataset_worst;
        }
        qr_progress_end(&bd->prog, st);
        qr_progress_begin(&bd->prog, "prepare", 0);
    }
    return st;
}

static QrStatus qr_runall_run(const QrGraph *b, const QrGraph *a, const QrTensor *inputs, const QrRunallOpts *o,
                                 QrRunallResult *r) {
    memset(r, 0, sizeof *r);
    QrBundle *bd = calloc(1, sizeof *bd);
    if (!bd) return qr_errf(QR_ERR_NOMEM, "out of memory");
    bd->run = (QrBundleRun){ .cmdline = o->cmdline, .input_paths = o->input_paths, .n_input_paths = o->n_input_paths,
                             .random_input = o->random_input, .warnings = o->warnings, .n_warnings = o->n_warnings,
                             .cos_threshold = o->cos_threshold };
    bd->inputs = inputs;
    qr_progress_init(&bd->prog, stderr, o->quiet);
    /* Staging folder next to the bundle, so the final rename stays on one file system. */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", o->out_zip);
    char *slash = strrchr(parent, '/');
    if (slash) *slash = 0; else snprintf(parent, sizeof parent, ".");
    QrStatus st = qr_mkdir_p(parent);
    if (st == QR_OK) {
        if (snprintf(bd->dir, sizeof bd->dir, "%s/.qreport-staging-XXXXXX", parent) >= (int)sizeof bd->dir)
            st = qr_errf(QR_ERR_IO, "%s: path too long for a staging folder", parent);
        else if (!mkdtemp(bd->dir)) st = qr_errf(QR_ERR_IO, "cannot create a staging folder in %s: %s", parent, strerror(errno));
    }
    bool staged = st == QR_OK;
    const int staged_slot = staged ? qr_cleanup_add(bd->dir, true) : -1;   /* removed on SIGINT/SIGTERM */
    QrStats *base_stats = NULL;
    bool *base_seen = NULL;
    if (st == QR_OK) qr_bundle_hash_start(bd, b, a);
    if (st == QR_OK) {
        qr_progress_begin(&bd->prog, "prepare", 0);
        st = qr_session_open(&bd->se, b, a, inputs);
        bd->se.int16_integer = o->int16_integer;
        bd->se.no_error_split = o->no_error_split;
        if (st == QR_OK && o->low_memory) qr_session_low_memory(&bd->se);
        if (st == QR_OK && o->single_model) qr_session_single_model(&bd->se);
        bd->se.progress = qr_progress_hook(&bd->prog);
        if (st == QR_OK && o->dataset) st = qr__ra_data_set(bd, o, b, &inputs);
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
    if (st == QR_OK && o->deploy.has_dump) {     /* a bad dump fails the run: no bundle */
        qr_progress_begin(&bd->prog, "device dump", 0);
        st = qr_deploy_runall_early(&bd->dep, &o->deploy, &bd->se, inputs, bd->dir);
        qr_progress_end(&bd->prog, st);
    }
    if (st == QR_OK) {
        qr_progress_begin(&bd->prog, "match", 0);
        /* The analyses that need only the baseline's values run side by side (see qr__ra_early_job);
         * their stages below write what they found. */
        QrRaEarly early = { .bd = bd, .o = o };
        if (qr_tok_any(b)) {     /* logits outputs: the compare run keeps the analysis model's outputs for the tokens */
            bd->se.keep_outs = calloc((size_t)b->n_outputs + 1, sizeof(QrTensor));
            bd->tok = calloc((size_t)b->n_outputs + 1, sizeof *bd->tok);
        }
        early.stats = calloc((size_t)a->n_values + 1, sizeof *early.stats);
        early.seen = calloc((size_t)a->n_values + 1, sizeof *early.seen);
        bool merged = false;
        QrStatsCollect sc = { early.stats, early.seen };
        QrStatus s_cmp = early.stats && early.seen ? qr_compare_prepare(&bd->se, o->mode, o->cos_threshold, qr_stats_tap, &sc,
                                                                        &merged, &bd->cmp, &early.cmp)
                                                   : qr_errf(QR_ERR_NOMEM, "out of memory");
        qr_err_clear();
        qr_run_release();
        qr__ra_early_job(&early, 3, 0);
        qr_session_jobs(&bd->se, QR__RA_EARLY - 1, qr__ra_early_batch, &early, NULL);
        if (s_cmp == QR_OK) s_cmp = early.st[0] != QR_OK ? early.st[0] : early.st[1];
        s_cmp = qr_compare_finish(early.cmp, s_cmp);
        qr_err_clear();
        bd->have_eq = early.st[2] == QR_OK;
        QrStatus s2 = qr_match_write(b, a, &bd->se.m, bd->have_eq ? &bd->eq : NULL, bd->dir);
        qr__ra_done(bd, "match", s2);
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
        if (s2 == QR_OK) s2 = qr_check_write(a, &bd->se.qa, stats, qr_bundle_path(bd, QR_BF_CHECK), &bd->chk);
        bd->have_chk = qr__ra_done(bd, "check", s2);
        qr_progress_begin(&bd->prog, "profile", 2);
        s2 = qr_profile_write(b, inputs, base_stats && base_seen ? base_stats : NULL, base_seen, bd->dir, QR_BF_PROFILE_BASE, NULL);
        qr_progress_step(&bd->prog);
        if (s2 == QR_OK) s2 = s_stats == QR_OK ? qr_profile_write(a, inputs, stats, seen, bd->dir, QR_BF_PROFILE_ANAL, NULL) : s_stats;
        qr__ra_done(bd, "profile", s2);
        free(stats);
        free(seen);
        qr_progress_begin(&bd->prog, "compare", 0);
        s2 = cmp_done ? QR_OK : qr_compare_mode(&bd->se, o->mode, o->cos_threshold, &bd->cmp);
        bd->have_cmp = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_compare_write(&bd->se, &bd->cmp, bd->dir);
        qr__ra_done(bd, "compare", s2);
        if (bd->have_cmp && bd->tok) {    /* compare_outputs with the per-token columns */
            qr_progress_begin(&bd->prog, "tokens", 0);
            s2 = bd->se.keep_outs ? qr_tok_session(&bd->se, bd->se.keep_outs, o->labels, 0, bd->tok)
                                  : qr_errf(QR_ERR_NOMEM, "out of memory");
            if (s2 == QR_OK) s2 = qr_tok_session_write(&bd->se, bd->se.keep_outs, bd->tok, bd->dir);
            bd->have_tok = qr__ra_done(bd, "tokens", s2);
        }
        if (bd->have_cmp && !o->deploy.no_repro) {     /* repro/ of the worst layer (deploy/) */
            qr_progress_begin(&bd->prog, "repro", 0);
            qr__ra_done(bd, "repro", qr_deploy_runall_repro(&bd->dep, &o->deploy, &bd->se, &bd->cmp, bd->dir));
        }
        qr_progress_begin(&bd->prog, "sensitivity", 0);
        s2 = qr_sens_run(&bd->se, &o->sens, &bd->sens);
        bd->have_sens = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_sens_write(&bd->se, &bd->sens, bd->dir);
        qr__ra_done(bd, "sensitivity", s2);
        qr_progress_begin(&bd->prog, "accumulated error", 0);
        s2 = qr__ra_acc_sets(bd, o);
        if (s2 == QR_OK)
            s2 = qr_accum_run_sets(&bd->se, bd->have_sens ? &bd->sens : NULL, o->topk, bd->have_sens ? o->n_topk : 0,
                                   &bd->acc_sets, o->metric_given ? o->sens.metric : QR_METRIC_COSINE, &bd->acc);
        bd->have_acc = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_accum_write(&bd->se, &bd->acc, bd->dir);
        qr__ra_done(bd, "accumulated error", s2);
        qr_progress_begin(&bd->prog, "weight comparison", 0);
        s2 = early.st[3] == QR_OK ? QR_OK : qr_errf(early.st[3], "%s", early.msg[3] ? early.msg[3] : "out of memory");
        bd->have_w = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_weights_write(&bd->se, &bd->w, bd->dir);
        qr__ra_done(bd, "weight comparison", s2);
        for (int k = 0; k < QR__RA_EARLY; k++) free(early.msg[k]);
        qr_progress_begin(&bd->prog, "advisor", 0);
        s2 = qr_advisor_run(&bd->se, bd->have_cmp ? &bd->cmp : NULL, bd->have_sens ? &bd->sens : NULL,
                            bd->have_w ? &bd->w : NULL, NULL, &bd->adv);
        bd->have_adv = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_advisor_write(&bd->se, &bd->adv, bd->dir);
        qr__ra_done(bd, "advisor", s2);
        qr_progress_begin(&bd->prog, "mixed precision", 0);
        s2 = bd->have_sens ? qr_whatif_run(&bd->se, &bd->sens, o->n_topk ? o->topk : NULL, o->n_topk, 0, &bd->wi)
                           : qr_errf(QR_ERR_INVALID, "needs the sensitivity ranking, which failed");
        bd->have_wi = s2 == QR_OK;
        if (s2 == QR_OK) s2 = qr_whatif_write(&bd->se, &bd->wi, bd->dir);
        qr__ra_done(bd, "mixed precision", s2);
        if (o->demote_int16) {
            qr_progress_begin(&bd->prog, "int16 demotion", 0);
            qr__ra_done(bd, "int16 demotion", qr__ra_demote(bd, o));
        }
        if (o->deploy.emit_dir) {                       /* --emit-model (deploy/) */
            qr_progress_begin(&bd->prog, "emit model", 0);
            s2 = bd->have_wi ? qr_deploy_runall_emit(&bd->dep, &o->deploy, &bd->se, &bd->sens, &bd->wi)
                             : qr_errf(QR_ERR_INVALID, "needs the mixed-precision what-if, which failed");
            qr__ra_done(bd, "emit model", s2);
        }
        qr_progress_begin(&bd->prog, "distributions", 0);
        s2 = qr_dist_collect_axis(&bd->se, bd->have_sens ? &bd->sens : NULL, o->plot_nodes, o->n_plot_nodes, 0,
                                  o->have_channel_axis, o->channel_axis, &bd->dist);
        bd->have_dist = s2 == QR_OK;
        qr_session_ref_free(&bd->se);        /* the last user of the all-on reference */
        qr__ra_done(bd, "distributions", s2);
        if (!o->no_fragility) {      /* a handful of whole sim runs (analysis/frag) */
            qr_progress_begin(&bd->prog, "fragility", 0);
            QrFragOpts fo;
            qr_frag_opts_default(&fo);
            s2 = qr_frag_run(&bd->se.tw.g, &bd->se.qt, bd->se.inputs, bd->se.base_out && !bd->se.base_stale ? bd->se.base_out : NULL,
                             &fo, &bd->frag);
            bd->have_frag = s2 == QR_OK;
            if (s2 == QR_OK) s2 = qr_frag_write(&bd->frag, bd->dir);
            qr__ra_done(bd, "fragility", s2);
        }
        qr_progress_begin(&bd->prog, "badcase", 0);
        s2 = QR_OK;
        if (o->badcase) s2 = qr_badcase_write(o->badcase, bd->dir);
        for (int i = 0; !o->badcase && s2 == QR_OK && i < b->n_inputs; i++) {
            char safe[256];
            qr_zip_safe_component(safe, sizeof safe, b->values[b->inputs[i]].name);
            const char *name = b->n_inputs == 1 ? QR_BF_BADCASE : qr_arena_printf(&bd->arena, QR_BF_BADCASE_STEM "_%s.npy", safe);
            s2 = qr_npy_write(qr_bundle_path(bd, name), &inputs[i]);
        }
        qr__ra_done(bd, "badcase", s2);
        if (o->dataset) {
            qr_progress_begin(&bd->prog, "data set", 0);
            int rank_out = -1;
            if (qr_select_output(b, o->sens.rank_output, &rank_out) != QR_OK) qr_err_clear();
            qr__ra_done(bd, "data set",
                        o->dataset_merged
                            ? qr_ds_runall_merged(&bd->dsr, o->dataset, o->dataset_metric, rank_out, &bd->se, o->dataset_merged,
                                                  o->dataset_merged_stat, o->mode, bd->have_dist ? &bd->dist : NULL,
                                                  o->dataset_worst, bd->dir)
                            : qr_ds_runall_write(&bd->dsr, &bd->se, o->mode, bd->have_dist ? &bd->dist : NULL, bd->dir));
            qr_progress_begin(&bd->prog, "data-set sensitivity", 0);
            qr__ra_done(bd, "data-set sensitivity",
                        qr_ds_runall_sens(&bd->dss, &bd->se, &bd->dsr, &o->sens, o->sens_samples, o->topk, o->n_topk,
                                           &bd->acc_sets, o->metric_given ? o->sens.metric : QR_METRIC_COSINE, bd->dir));
        }
        if (o->generate > 0 && o->gen_b && o->gen_a) {   /* last: the decoding re-infers the graphs step by step */
            qr_progress_begin(&bd->prog, "generation", 0);
            QrGenOpts go = { .n = o->generate, .kv_map = o->kv_map, .n_kv_map = o->n_kv_map, .mode = o->mode,
                             .cos_threshold = o->cos_threshold, .dir = bd->dir };
            s2 = qr_gen_run(o->gen_b, o->gen_a, inputs, &go, &bd->gen);
            if (s2 == QR_OK) s2 = qr_gen_write(&bd->gen, bd->dir);
            bd->have_gen = qr__ra_done(bd, "generation", s2);
        }
        qr_progress_begin(&bd->prog, "plots", 0);
        qr__ra_done(bd, "plots", qr_bundle_write_plots(bd));
        qr_progress_begin(&bd->prog, "graph overlays", 0);
        qr__ra_done(bd, "graph overlays", qr_bundle_write_graph(bd));
        qr_progress_begin(&bd->prog, "report", 0);
        s2 = qr_bundle_write_summary(bd);
        if (s2 == QR_OK) s2 = qr_bundle_write_manifest(bd);
        if (s2 == QR_OK) s2 = qr_bundle_write_html(bd);
        qr_progress_end(&bd->prog, s2);
        st = s2;
    }
    if (st == QR_OK) st = qr__ra_zip(bd, o);
    if (st == QR_OK) qr__ra_summary(bd, o, b, a, r);
    qr_bundle_hash_join(bd);
    free(base_stats);
    free(base_seen);
    if (staged) qr_bundle_rmtree(bd->dir);
    qr_cleanup_drop(staged_slot);
    if (bd->have_eq) qr_match_equiv_free(&bd->eq);
    qr_compare_free(&bd->cmp);
    qr_gen_free(&bd->gen);
    for (int j = 0; bd->tok && j < b->n_outputs; j++) qr_tok_free(&bd->tok[j]);
    free(bd->tok);
    qr_values_keep_free(&bd->se);
    qr_sens_free(&bd->sens);
    qr_accum_free(&bd->acc);
    qr_select_acc_sets_free(&bd->acc_sets);
    qr_check_free(&bd->chk);
    if (bd->have_w) qr_weights_free(&bd->w);
    if (bd->have_adv) qr_advice_free(&bd->adv);
    if (bd->have_wi) qr_whatif_free(&bd->wi);
    if (bd->have_dist) qr_dist_free(&bd->dist);
    if (bd->have_frag) qr_frag_free(&bd->frag);
    qr_deploy_runall_free(&bd->dep);
    qr_ds_runall_free(&bd->dsr);
    qr_sens_set_free(&bd->dss);
    if (bd->se.b) qr_session_close(&bd->se);
    qr_arena_free(&bd->arena);
    free(bd);
    return st;
}
