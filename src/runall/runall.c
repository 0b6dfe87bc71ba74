/* runall/runall — implementation. See runall.h.
 *
 *   prepare session (baseline run + its statistics) ─► match [the weight comparison, then the compare
 *   run (+ analysis statistics), shadow run, equivalence: side by side]
 *   ─► check ─► profiles ─► compare ─► sensitivity rows ─► cumulative error
 *   ─► weights ─► advisor ─► what-if ─► distributions ─► fragility ─► badcase.npy ─► plots (in parallel)
 *   ─► summary/manifest/index.html ─► zip of the staging folder (atomic) [─► --keep-dir copy]
 *   ─► staging removed. The input files are hashed on a helper thread meanwhile. Stages are
 *   recorded in this order (manifest.json); a stage whose work ran early only writes.
 * The order, what each stage needs, runs, writes and shows is one table, qr__ra_stages (below);
 * qr_runall_run walks it. */

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
    /* Large buffers freed by an analysis (caches, copies) and the executor's idle value buffers (up
     * to 96 MiB, sized for this analysis's runs) go back to the system now rather than staying in
     * the heap under the next analysis's peak. */
    qr_run_release();
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
 * same run, and the shadow run), 2 the equivalence check, 3 the weight comparison. Each job's
 * status and message are kept for its stage; the jobs themselves never fail. (Sensitivity's
 * reference run is made in its stage, once the baseline values are dropped: next to them it
 * made the match stage's peak.) */
#define QR__RA_EARLY 4

typedef struct QrRaEarly {
    QrBundle *bd;
    const QrRunallOpts *o;
    QrCmpPlan *cmp;              /* the comparison's plan (NULL: its preparation failed) */
    QrStats *stats;              /* the analysis model's statistics (job 0) */
    bool *seen;
    bool merged;                 /* job 0 collected them (sim / both modes) */
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
    else st = qr_weights_compare(&bd->se, &bd->w);
    e->st[k] = st;
    if (st != QR_OK) {
        e->msg[k] = strdup(qr_err_msg());
        qr_err_clear();
    }
    return QR_OK;
}

/* Jobs 0-2 of qr__ra_early_job side by side (qr_session_jobs over 3); the weight comparison (3) runs
 * before them on its own (its own jobs side by side), with the executor's idle buffers given back
 * first: it holds a weight's dequantized float copy at a time (196 MB for a 0.5B decoder's lm_head),
 * which next to another job's run, or after them next to what they keep, made the stage's peak. */

/* The zip stage: manifest.json written last (it records the report stage too), then the staging
 * folder zipped to o->out_zip (atomic) and, with --keep-dir, copied there. */
static QrStatus qr__ra_zip(QrBundle *bd, const QrRunallOpts *o) {
    /* manifest.json last so it records the report stage too */
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
    return st;
}

/* The terminal summary of a finished run (r->summary) and its numbers (r->out, r->n_failed). */
static void qr__ra_summary(const QrBundle *bd, const QrRunallOpts *o, const QrGraph *b, const QrGraph *a, QrRunallResult *r) {
    r->have_out = bd->ok[QR_STAGE_COMPARE];
    r->emitted = bd->ok[QR_STAGE_EMIT];
    if (bd->ok[QR_STAGE_COMPARE]) r->out = bd->cmp.out;
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
    if (bd->ok[QR_STAGE_GEN] && n < sizeof r->summary) {
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Generation (%d tokens): ", bd->gen.n);
        if (bd->gen.first_divergence >= 0 && n < sizeof r->summary)
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "the models diverge at generated token %d\n",
                                  bd->gen.first_divergence);
        else if (n < sizeof r->summary) n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "the same tokens\n");
    }
    for (int j = 0; bd->ok[QR_STAGE_TOKENS] && j < b->n_outputs && n < sizeof r->summary; j++) {
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
    for (int k = 0; bd->ok[QR_STAGE_SENS] && k < bd->sens.n && k < 5 && n < sizeof r->summary; k++) {
        const QrSensRow *row = qr_sens_top(&bd->sens, k);
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "  sensitive %d: %s (%s, %s) %s %.6g", k + 1,
                              row->name, qr_sens_type_name(row->type), row->op_type,
                              qr_metric_name(bd->sens.opts.metric), qr_metric_get(&row->m, bd->sens.opts.metric));
        if (bd->sens.opts.off_one && n < sizeof r->summary)
            n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, " (gain %.6g over all on)",
                                  qr_sens_gain(&bd->sens, row));
        if (n < sizeof r->summary) n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "\n");
    }
    if (bd->ok[QR_STAGE_ADVISOR] && bd->adv.n && n < sizeof r->summary) {
        const QrFinding *f = &bd->adv.f[0];
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Advisor (%d finding%s), main: %s %s: %s\n  fix: %s\n",
                              bd->adv.n, bd->adv.n == 1 ? "" : "s", f->node && *f->node ? f->node : "model",
                              qr_adv_kind_name(f->kind), f->reason, f->fix);
    }
    if (bd->ok[QR_STAGE_FRAG] && n < sizeof r->summary) {
        QrArena fa = { 0 };
        n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "Rounding fragility: %s\n", qr_frag_verdict(&fa, &bd->frag));
        qr_arena_free(&fa);
    }
    const char *act = qr_bundle_action(bd);
    if (act && n < sizeof r->summary) n += (size_t)snprintf(r->summary + n, sizeof r->summary - n, "%s\n", act);
    if (bd->eq.max_abs && n < sizeof r->summary)
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
                               *inputs, o->have_channel_axis, o->channel_axis, o->plot_nodes, o->n_plot_nodes,
                               o->sens_samples);
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

/* ==== the stages ==========================================================================
 * What the stages share: the options, both models, the inputs the analyses run on, and what one
 * stage leaves for a later one (the baseline profile's statistics from the baseline run; the
 * early jobs' results and the analysis model's statistics from the compare run). */
typedef struct QrRaCtx {
    QrBundle *bd;
    const QrRunallOpts *o;
    const QrGraph *b, *a;
    const QrTensor *inputs;      /* --data: the worst sample once the prepare stage has made the pass */
    QrStats *base_stats;         /* the baseline's statistics from its run (NULL: out of memory) */
    bool *base_seen;
    QrStats *a_stats;            /* one input: the analysis model's statistics from the pass's run (qr__ra_one) */
    bool *a_seen;
    bool a_done;                 /* that run was the analysis model's own (sim, both) */
    QrRaEarly early;             /* the jobs run side by side in the match stage */
    QrStatus s_cmp;              /* the compare run's status (QR_OK: the compare stage only writes) */
    QrStatus s_stats;            /* the analysis model's statistics (check, profile) */
    QrFragRide *frag_ride;       /* the fragility's unperturbed run, made by the what-if's reference run (qr__ra_ref_ride) */
    QrTensor *frag_out;          /* that run's outputs */
    QrDistRide *dist_ride;       /* the distributions' activations, captured by that run too */
} QrRaCtx;

/* One input (-i, or random inputs): the pass's path over a one-sample set (analysis/dataset's
 * qr_ds_runall_one) — the baseline run with its statistics, the comparison with the analysis model's
 * statistics from its run — which the match stage takes as --data's worst sample's. Should it fail,
 * nothing is kept: a failing baseline run fails the prepare stage below as it did, a failing
 * comparison is the match stage's to run and report. */
static void qr__ra_one(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrRunallOpts *o = c->o;
    c->a_stats = calloc((size_t)c->a->n_values + 1, sizeof *c->a_stats);
    c->a_seen = calloc((size_t)c->a->n_values + 1, sizeof *c->a_seen);
    QrStatsCollect sc = { c->a_stats, c->a_seen };
    QrCmpHooks hooks = { .tap = qr_stats_tap, .user = &sc };
    const char *name = o->n_input_paths == 1 && o->input_paths && o->input_paths[0] ? o->input_paths[0] : "input";
    QrStatus st = c->base_stats && c->base_seen && c->a_stats && c->a_seen ? QR_OK : QR_ERR_NOMEM;
    if (st == QR_OK) st = qr_ds_runall_one(&bd->dsr, &bd->se, o->mode, c->inputs, name, c->base_stats, c->base_seen, &hooks);
#ifdef QR_TESTING
    if (st == QR_OK && qr__ra_faults.fail_one_pass) {
        qr_ds_runall_free(&bd->dsr);
        st = qr_errf(QR_ERR_INVALID, "injected failure (qr_runall_test_faults)");
    }
#endif
    c->a_done = st == QR_OK && hooks.tap_done;
    if (st != QR_OK) {
        free(c->a_stats);
        free(c->a_seen);
        c->a_stats = NULL;
        c->a_seen = NULL;
    }
    qr_err_clear();
}

/* prepare: the session, the data set's pass (--data; one input: the same pass over it), the baseline
 * run (with its statistics; made by that pass already unless it failed: one input's pass stays on
 * its sample, --data's keeps the worst sample's baseline values). */
static QrStatus qr__ra_prepare(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrRunallOpts *o = c->o;
    QrStatus st = qr_session_open(&bd->se, c->b, c->a, c->inputs);
    bd->se.int16_integer = o->int16_integer;
    bd->se.no_error_split = o->no_error_split;
    if (st == QR_OK && o->low_memory) qr_session_low_memory(&bd->se);
    if (st == QR_OK && o->single_model) qr_session_single_model(&bd->se);
    bd->se.progress = qr_progress_hook(&bd->prog);
    if (st == QR_OK && o->dataset) st = qr__ra_data_set(bd, o, c->b, &c->inputs);
    c->base_stats = calloc((size_t)c->b->n_values + 1, sizeof *c->base_stats);
    c->base_seen = calloc((size_t)c->b->n_values + 1, sizeof *c->base_seen);
    if (st == QR_OK && !o->dataset) qr__ra_one(c);
    /* --data: the pass kept the worst sample's baseline values and statistics (else: the run below) */
    else if (st == QR_OK && !o->dataset_merged) qr_ds_runall_take_base(&bd->dsr, &bd->se, c->base_stats, c->base_seen);
    if (st == QR_OK) st = qr_session_run_baseline_ex(&bd->se, &(QrBaseRunOpts){ .stats = c->base_stats, .seen = c->base_seen });
    /* a quantized baseline: its quantizers-off values for the match stage's equivalence check (--data: the
     * pass proved the pairs on its first sample and ran them no more) */
    if (st == QR_OK) st = qr_session_base_off_need(&bd->se);
    return st;
}

static bool qr__ra_on_dump(const QrRaCtx *c) { return c->o->deploy.has_dump; }

/* --dump: a bad dump fails the run (no bundle). */
static QrStatus qr__ra_dump(QrRaCtx *c) {
    return qr_deploy_runall_early(&c->bd->dep, &c->o->deploy, &c->bd->se, c->inputs, c->bd->dir);
}

/* match: the analyses that need only the baseline's values run side by side (qr__ra_early_job;
 * the stages below write what they found), then the match table with the equivalence verdict. */
static QrStatus qr__ra_match(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrGraph *b = c->b, *a = c->a;
    QrRaEarly *e = &c->early;
    *e = (QrRaEarly){ .bd = bd, .o = c->o };
    if (qr_tok_any(b)) {     /* logits outputs: the compare run keeps the analysis model's outputs for the tokens */
        bd->se.keep_outs = calloc((size_t)b->n_outputs + 1, sizeof(QrTensor));
        bd->tok = calloc((size_t)b->n_outputs + 1, sizeof *bd->tok);
    }
    e->stats = c->a_stats ? c->a_stats : calloc((size_t)a->n_values + 1, sizeof *e->stats);
    e->seen = c->a_seen ? c->a_seen : calloc((size_t)a->n_values + 1, sizeof *e->seen);
    c->a_stats = NULL;
    c->a_seen = NULL;
    QrStatsCollect sc = { e->stats, e->seen };
    /* the pass (--data's, or one input's: qr__ra_one) compared the sample already (its rows, outputs, the
     * analysis model's statistics are the pass's); else its comparison runs here */
    if (!e->stats || !e->seen) c->s_cmp = qr_errf(QR_ERR_NOMEM, "out of memory");
    else if (qr_ds_runall_take_worst(&bd->dsr, &bd->se, c->o->cos_threshold, &bd->cmp, bd->se.keep_outs, e->stats, e->seen,
                                     &e->merged)) {
        c->s_cmp = QR_OK;
        e->merged |= c->a_done;     /* one input: the pass's run collected them (qr__ra_one) */
    }
    else c->s_cmp = qr_compare_prepare(&bd->se, c->o->mode, c->o->cos_threshold, qr_stats_tap, &sc, &e->merged, &bd->cmp, &e->cmp);
    qr_err_clear();
    qr_run_release();
    qr__ra_early_job(e, 3, 0);    /* the weight comparison first, on its own */
    qr_session_jobs(&bd->se, 3, qr__ra_early_job, e, NULL);
    if (c->s_cmp == QR_OK) c->s_cmp = e->st[0] != QR_OK ? e->st[0] : e->st[1];
    c->s_cmp = qr_compare_finish(e->cmp, c->s_cmp);
    qr_err_clear();
    if (e->st[2] != QR_OK) qr_match_equiv_free(&bd->eq);   /* (the check frees what it made; eq.max_abs stays NULL) */
    return qr_match_write(b, a, &bd->se.m, bd->eq.max_abs ? &bd->eq : NULL, bd->dir);
}

/* check: one run of the analysis model gives the statistics both the check and its profile use;
 * it is the per-layer comparison's run too (sim / both modes; that stage only writes then). */
static QrStatus qr__ra_check(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrGraph *a = c->a;
    QrRaEarly *e = &c->early;
    bool merged = c->s_cmp == QR_OK && e->merged;   /* else the compare stage runs it again and reports the error */
    if (!merged && e->seen) memset(e->seen, 0, (size_t)a->n_values * sizeof *e->seen);
    c->s_stats = !e->stats || !e->seen ? qr_errf(QR_ERR_NOMEM, "out of memory") : merged ? QR_OK
               : qr_stats_collect(a, c->inputs, e->stats, e->seen);
    if (merged) qr_stats_inits(a, e->stats, e->seen);
    QrStatus st = c->s_stats;
    if (st == QR_OK) st = qr_check_write(a, &bd->se.qa, e->stats, qr_bundle_path(bd, QR_BF_CHECK), &bd->chk);
    return st;
}

/* profile: both models' statistics, from the baseline run and the analysis model's run. */
static QrStatus qr__ra_profile(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    QrRaEarly *e = &c->early;
    QrStatus st = qr_profile_write(c->b, c->inputs, c->base_stats && c->base_seen ? c->base_stats : NULL, c->base_seen, bd->dir,
                                   QR_BF_PROFILE_BASE, NULL);
    qr_progress_step(&bd->prog);
    if (st == QR_OK) st = c->s_stats == QR_OK ? qr_profile_write(c->a, c->inputs, e->stats, e->seen, bd->dir, QR_BF_PROFILE_ANAL, NULL)
                                              : c->s_stats;
    free(e->stats);
    free(e->seen);
    e->stats = NULL;
    e->seen = NULL;
    return st;
}

static QrStatus qr__ra_compare(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    QR_TRY(c->s_cmp == QR_OK ? QR_OK : qr_compare_mode(&bd->se, c->o->mode, c->o->cos_threshold, &bd->cmp));
    return qr_compare_write(&bd->se, &bd->cmp, bd->dir);
}

static bool qr__ra_on_tokens(const QrRaCtx *c) { return c->bd->ok[QR_STAGE_COMPARE] && c->bd->tok; }

/* compare_outputs with the per-token columns (logits outputs). Its output metrics stay for the HTML section
 * (QrBundle.tok_m): by the report stage a --data run's later stages have dropped the baseline's outputs. */
static QrStatus qr__ra_tokens(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    QR_TRY(bd->se.keep_outs ? qr_tok_session(&bd->se, bd->se.keep_outs, c->o->labels, 0, bd->tok)
                            : qr_errf(QR_ERR_NOMEM, "out of memory"));
    bd->tok_m = calloc((size_t)c->b->n_outputs + 1, sizeof *bd->tok_m);
    QR_TRY(bd->tok_m ? qr_tok_session_metrics(&bd->se, bd->se.keep_outs, bd->tok_m) : qr_errf(QR_ERR_NOMEM, "out of memory"));
    return qr_tok_write_session(c->b, bd->tok_m, bd->tok, bd->dir);
}

static bool qr__ra_on_repro(const QrRaCtx *c) { return c->bd->ok[QR_STAGE_COMPARE] && !c->o->deploy.no_repro; }

/* repro/ of the worst layer (deploy/). */
static QrStatus qr__ra_repro(QrRaCtx *c) {
    return qr_deploy_runall_repro(&c->bd->dep, &c->o->deploy, &c->bd->se, &c->bd->cmp, c->bd->dir);
}

/* The baseline values (QrSession.base) are read by the match stage's jobs and the repro, then by
 * the cumulative error and the advisor (which come one after the other: the values stay between
 * them) and the distributions (a few rows): each brings back what it reads (qr_session_base_need)
 * and the values are dropped again after it (qr_session_base_drop), so they never sit next to
 * sensitivity's reference or the all-on one. */
static bool qr__ra_on_dataset(const QrRaCtx *c);

static QrStatus qr__ra_sens(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    qr_session_base_drop(&bd->se, NULL);
    /* --data: the rows' accumulators kept (when the pass runs every row): the data-set sensitivity
     * takes them for the worst sample (this one) instead of running its rows again */
    if (qr__ra_on_dataset(c) && !c->o->dataset_merged) QR_TRY(qr_sens_run_keep(&bd->se, &c->o->sens, &bd->sens));
    else QR_TRY(qr_sens_run(&bd->se, &c->o->sens, &bd->sens));
    return qr_sens_write(&bd->se, &bd->sens, bd->dir);
}

/* The cumulative error's full setting as the per-layer comparison's run measured it (per match, *pm
 * malloc'd), when that run is the same computation: the analysis model in sim (or both) mode, whose
 * twin is a plain copy (no node rewritten or kept), every matched value compared there as the cumulative
 * error's run compares it (a row for every match with a twin value, and none for another), by a metric
 * of that run (not KLD). False otherwise: the setting then runs. */
static bool qr__ra_acc_full(const QrSession *se, const QrCompare *cmp, const char *mode, QrMetricKind metric, QrAccFull *full,
                            QrMetrics **pm) {
    *pm = NULL;
    if ((mode && strcmp(mode, "sim") && strcmp(mode, "both")) || metric == QR_METRIC_KLD || se->tw.n_rewritten ||
        se->tw.n_kept || se->tw.g.n_nodes != se->a->n_nodes)
        return false;
    QrMetrics *m = calloc((size_t)se->m.n + 1, sizeof *m);
    bool *row = calloc((size_t)se->m.n + 1, sizeof *row);
    bool ok = m && row;
    for (int k = 0; ok && k < cmp->n; k++) {
        const QrLayerRow *r = &cmp->rows[k];
        row[r->match] = true;
        if (r->has_m) m[r->match] = r->m;
    }
    for (int i = 0; ok && i < se->m.n; i++) ok = row[i] == (se->vis[i] >= 0);
    for (int i = 0; ok && i < se->m.n; i++)
        if (!m[i].n) { memset(&m[i], 0, sizeof m[i]); m[i].cosine = m[i].sqnr = m[i].l1 = m[i].mse = m[i].kl = m[i].rtol = m[i].atol = NAN; }
    free(row);
    if (!ok) { free(m); return false; }
    *full = (QrAccFull){ m, cmp->out };
    *pm = m;
    return true;
}

static QrStatus qr__ra_accum(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrRunallOpts *o = c->o;
    bool sens = bd->ok[QR_STAGE_SENS];
    QR_TRY(qr__ra_acc_sets(bd, o));
    QR_TRY(qr_session_base_need(&bd->se, NULL));
    /* every setting run whole: the all-on reference an incremental run starts from would sit next to
     * every baseline value (the what-if builds it, after the drop; the same bits either way); the full
     * setting is the per-layer comparison's run when that is the same computation */
    bool no_inc = bd->se.no_incremental;
    bd->se.no_incremental = true;
    QrMetricKind metric = o->metric_given ? o->sens.metric : QR_METRIC_COSINE;
    QrAccFull full;
    QrMetrics *pm = NULL;
    bool have_full = bd->ok[QR_STAGE_COMPARE] && qr__ra_acc_full(&bd->se, &bd->cmp, o->mode, metric, &full, &pm);
    QrStatus st = qr_accum_run_full(&bd->se, sens ? &bd->sens : NULL, o->topk, sens ? o->n_topk : 0, &bd->acc_sets, metric,
                                    have_full ? &full : NULL, &bd->acc);
    free(pm);
    bd->se.no_incremental = no_inc;
    QR_TRY(st);     /* (the values stay for the advisor, which reads them all: one baseline run fewer) */
    return qr_accum_write(&bd->se, &bd->acc, bd->dir);
}

/* weight comparison: computed in the match stage's jobs. */
static QrStatus qr__ra_weights(QrRaCtx *c) {
    QrRaEarly *e = &c->early;
    QrStatus st = e->st[3] == QR_OK ? QR_OK : qr_errf(e->st[3], "%s", e->msg[3] ? e->msg[3] : "out of memory");
    for (int k = 0; k < QR__RA_EARLY; k++) { free(e->msg[k]); e->msg[k] = NULL; }
    QR_TRY(st);
    return qr_weights_write(&c->bd->se, &c->bd->w, c->bd->dir);
}

static QrStatus qr__ra_advisor(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    QrStatus st = qr_session_base_need(&bd->se, NULL);
    if (st == QR_OK)
        st = qr_advisor_run(&bd->se, bd->ok[QR_STAGE_COMPARE] ? &bd->cmp : NULL, bd->ok[QR_STAGE_SENS] ? &bd->sens : NULL,
                            bd->ok[QR_STAGE_WEIGHTS] ? &bd->w : NULL, NULL, &bd->adv);
    /* the distributions' rows stay (a few values): they would bring them back with a baseline run */
    bool *keep = calloc((size_t)bd->se.m.n + 1, sizeof *keep);
    if (keep && qr_dist_base_want(&bd->se, bd->ok[QR_STAGE_SENS] ? &bd->sens : NULL, c->o->plot_nodes, c->o->n_plot_nodes, keep) != QR_OK) {
        qr_err_clear();
        free(keep);
        keep = NULL;
    }
    qr_session_base_drop(&bd->se, keep);
    free(keep);
    QR_TRY(st);
    return qr_advisor_write(&bd->se, &bd->adv, bd->dir);
}

static void qr__ra_frag_ride_free(QrRaCtx *c) {
    qr_frag_ride_free(c->frag_ride);
    c->frag_ride = NULL;
    for (int k = 0; c->frag_out && k < c->bd->se.tw.g.n_outputs; k++) qr_tensor_free_data(&c->frag_out[k]);
    free(c->frag_out);
    c->frag_out = NULL;
}

/* The what-if's all-on reference run (the model as is) is the fragility's unperturbed run and the
 * distributions' run too: built here with the fragility's record and the distributions' capture riding
 * on it (qr_session_ref_ride), the fragility stage runs only its variants and the distributions no model.
 * Without a reference (--max-memory), or should that run fail, the what-if builds the reference alone and
 * the fragility and the distributions make their own runs (the same bits either way). */
static void qr__ra_ref_ride(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrRunallOpts *o = c->o;
    if (bd->se.no_incremental || bd->se.ref) return;
    const QrGraph *g = &bd->se.tw.g;
    QrStatus st = QR_OK;
    if (!o->no_fragility) {
        QrFragOpts fo;
        qr_frag_opts_default(&fo);
        c->frag_out = calloc((size_t)g->n_outputs + 1, sizeof *c->frag_out);
        st = c->frag_out ? qr_frag_begin(g, &bd->se.qt, &fo, &bd->frag, &c->frag_ride) : qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    QrTapFn tap = NULL;
    void *user = NULL;
    const bool *only = NULL;
    if (st == QR_OK && qr_dist_ride_begin(&bd->se, bd->ok[QR_STAGE_SENS] ? &bd->sens : NULL, o->plot_nodes, o->n_plot_nodes,
                                          &c->dist_ride, &tap, &user, &only) != QR_OK)
        qr_err_clear();      /* (the distributions find out for themselves) */
    bool built = false;
    if (st == QR_OK && (c->frag_ride || c->dist_ride)) {
        QrRunOpts ride = { 0 };
        if (c->frag_ride) qr_frag_ride_opts(c->frag_ride, &ride);
        st = qr_session_ref_ride(&bd->se, tap, user, only, &ride, c->frag_ride ? c->frag_out : NULL, &built);
        if (st == QR_OK && !built) st = QR_ERR_INVALID;
    }
    if (st != QR_OK) {
        if (c->frag_ride) qr_frag_free(&bd->frag);
        qr__ra_frag_ride_free(c);
        qr_dist_ride_free(c->dist_ride);
        c->dist_ride = NULL;
    }
    qr_err_clear();
}

static QrStatus qr__ra_whatif(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    qr__ra_ref_ride(c);
    QR_TRY(qr_whatif_run(&bd->se, &bd->sens, c->o->n_topk ? c->o->topk : NULL, c->o->n_topk, 0, &bd->wi));
    return qr_whatif_write(&bd->se, &bd->wi, bd->dir);
}

static bool qr__ra_on_demote(const QrRaCtx *c) { return c->o->demote_int16; }
static QrStatus qr__ra_run_demote(QrRaCtx *c) { return qr__ra_demote(c->bd, c->o); }

static bool qr__ra_on_emit(const QrRaCtx *c) { return c->o->deploy.emit_dir != NULL; }

/* --emit-model (deploy/): the what-if's recommended promotion written out. */
static QrStatus qr__ra_emit(QrRaCtx *c) {
    return qr_deploy_runall_emit(&c->bd->dep, &c->o->deploy, &c->bd->se, &c->bd->sens, &c->bd->wi);
}

static QrStatus qr__ra_dist(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrRunallOpts *o = c->o;
    QrStatus st = qr_dist_collect_axis(&bd->se, bd->ok[QR_STAGE_SENS] ? &bd->sens : NULL, o->plot_nodes, o->n_plot_nodes, 0,
                                       o->have_channel_axis, o->channel_axis, c->dist_ride, &bd->dist);
    qr_dist_ride_free(c->dist_ride);
    c->dist_ride = NULL;
    qr_session_ref_free(&bd->se);        /* the last user of the all-on reference */
    qr_session_base_drop(&bd->se, NULL); /* and of the baseline values (its rows') */
    return st;
}

static bool qr__ra_on_frag(const QrRaCtx *c) { return !c->o->no_fragility; }

/* a handful of whole sim runs (analysis/frag) */
static QrStatus qr__ra_frag(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    QrFragOpts fo;
    qr_frag_opts_default(&fo);
    fo.serial = bd->se.low_memory;       /* --max-memory: one execution at a time (qr_session_low_memory) */
    const QrTensor *base_out = bd->se.base_out && !bd->se.base_stale ? bd->se.base_out : NULL;
    QrStatus st = QR_OK;
    if (c->frag_ride) {      /* its unperturbed run made by the what-if's reference run */
        st = qr_frag_end(c->frag_ride, bd->se.inputs, base_out, c->frag_out, &bd->frag);
        c->frag_ride = NULL;
        qr__ra_frag_ride_free(c);
    } else st = qr_frag_run(&bd->se.tw.g, &bd->se.qt, bd->se.inputs, base_out, &fo, &bd->frag);
    QR_TRY(st);
    return qr_frag_write(&bd->frag, bd->dir);
}

/* badcase.npy: the input the analyses ran on (--data: the search's list too). */
static QrStatus qr__ra_badcase(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrGraph *b = c->b;
    if (c->o->badcase) return qr_badcase_write(c->o->badcase, bd->dir);
    for (int i = 0; i < b->n_inputs; i++) {
        char safe[256];
        qr_zip_safe_component(safe, sizeof safe, b->values[b->inputs[i]].name);
        const char *name = b->n_inputs == 1 ? QR_BF_BADCASE : qr_arena_printf(&bd->arena, QR_BF_BADCASE_STEM "_%s.npy", safe);
        QR_TRY(qr_npy_write(qr_bundle_path(bd, name), &c->inputs[i]));
    }
    return QR_OK;
}

static bool qr__ra_on_dataset(const QrRaCtx *c) { return c->o->dataset != NULL; }

/* --data: the set's tables (from the prepare stage's pass, or merged from parts). */
static QrStatus qr__ra_dataset(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrRunallOpts *o = c->o;
    QrDistSet *dist = bd->ok[QR_STAGE_DIST] ? &bd->dist : NULL;
    int rank_out = -1;
    if (qr_select_output(c->b, o->sens.rank_output, &rank_out) != QR_OK) qr_err_clear();
    return o->dataset_merged ? qr_ds_runall_merged(&bd->dsr, o->dataset, o->dataset_metric, rank_out, &bd->se, o->dataset_merged,
                                                   o->dataset_merged_stat, o->mode, dist, o->dataset_worst, bd->dir)
                             : qr_ds_runall_write(&bd->dsr, &bd->se, o->mode, dist, bd->dir);
}

static QrStatus qr__ra_ds_sens(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    const QrRunallOpts *o = c->o;
    return qr_ds_runall_sens(&bd->dss, &bd->se, &bd->dsr, &o->sens, o->sens_samples, o->topk, o->n_topk, &bd->acc_sets,
                             o->metric_given ? o->sens.metric : QR_METRIC_COSINE, bd->ok[QR_STAGE_SENS] ? &bd->sens : NULL,
                             bd->dir);
}

static bool qr__ra_on_gen(const QrRaCtx *c) { return c->o->generate > 0 && c->o->gen_b && c->o->gen_a; }

/* --generate: last of the analyses, the decoding re-infers the graphs step by step. */
static QrStatus qr__ra_gen(QrRaCtx *c) {
    const QrRunallOpts *o = c->o;
    QrGenOpts go = { .n = o->generate, .kv_map = o->kv_map, .n_kv_map = o->n_kv_map, .mode = o->mode,
                     .cos_threshold = o->cos_threshold, .dir = c->bd->dir };
    QR_TRY(qr_gen_run(o->gen_b, o->gen_a, c->inputs, &go, &c->bd->gen));
    return qr_gen_write(&c->bd->gen, c->bd->dir);
}

static QrStatus qr__ra_plots(QrRaCtx *c) { return qr_bundle_write_plots(c->bd); }
static QrStatus qr__ra_graph(QrRaCtx *c) { return qr_bundle_write_graph(c->bd); }
static QrStatus qr__ra_report(QrRaCtx *c);
static QrStatus qr__ra_zip_stage(QrRaCtx *c) { return qr__ra_zip(c->bd, c->o); }

/* The sections other modules write for the bundle's pages (summary.json, index.html). */
static void qr__ra_json_tokens(QrJson *j, QrBundle *bd) {
    if (bd->ok[QR_STAGE_TOKENS]) { qr_json_key(j, "tokens"); qr_tok_json(j, bd->se.b, bd->tok); }
}
static void qr__ra_json_gen(QrJson *j, QrBundle *bd) {
    if (bd->ok[QR_STAGE_GEN]) { qr_json_key(j, "generation"); qr_gen_json(j, &bd->gen); }
}
static void qr__ra_json_advisor(QrJson *j, QrBundle *bd) {
    if (bd->ok[QR_STAGE_ADVISOR]) { qr_json_key(j, "advisor"); qr_advisor_json(j, &bd->adv); }
}
static void qr__ra_json_frag(QrJson *j, QrBundle *bd) {
    if (bd->ok[QR_STAGE_FRAG]) { qr_json_key(j, "fragility"); qr_frag_json(j, &bd->frag); }
}
/* the deployment kit's section: dump, repro and emitted model, each when it was made */
static void qr__ra_json_deploy(QrJson *j, QrBundle *bd) { qr_deploy_runall_json(j, &bd->dep); }
static void qr__ra_json_dataset(QrJson *j, QrBundle *bd) { qr_ds_runall_json(j, &bd->dsr, &bd->se); }
static void qr__ra_json_ds_sens(QrJson *j, QrBundle *bd) { qr_sens_set_json(j, &bd->dss); }
static void qr__ra_html_frag(QrHtml *h, QrBundle *bd) { if (bd->ok[QR_STAGE_FRAG]) qr_frag_html(h, &bd->frag); }
static void qr__ra_html_deploy(QrHtml *h, QrBundle *bd) { qr_deploy_runall_html(h, &bd->dep); }
static void qr__ra_html_dataset(QrHtml *h, QrBundle *bd) { qr_ds_runall_html(h, &bd->dsr, &bd->se, bd->dir); }
static void qr__ra_html_ds_sens(QrHtml *h, QrBundle *bd) { if (bd->dsr.on) qr_sens_set_html(h, &bd->dss, bd->dir); }

/* One stage of runall. The driver (qr_runall_run) walks qr__ra_stages in order: a stage that is
 * not `on` for these options is left out (no progress line, not in the manifest); one whose
 * `needs` failed fails with "needs the <what>, which failed"; otherwise `run` computes and
 * writes its files. A failing stage is recorded (manifest, summary.json, index.html) and the
 * rest go on, except a `fatal` one: then no bundle. bd->ok[stage] says it succeeded: the later
 * stages and the sections read its results only then. `json` / `html`: its sections of
 * summary.json / index.html, written by the report stage in the orders qr__ra_json_order and
 * qr__ra_html_order give (each section checks the stage's success itself). `files`: the bundle
 * files the stage writes when it succeeds (report/files.h; tests/test_runall.c checks them). */
typedef struct QrRaStage {
    const char *name;            /* progress, manifest.json "stages", failed_analyses */
    const char *what;            /* its results, in "needs the %s, which failed" */
    QrStage needs;               /* QR_STAGE_N: nothing */
    bool fatal;
    int steps;                   /* progress steps (0: none) */
    bool (*on)(const QrRaCtx *c);    /* NULL: always */
    QrStatus (*run)(QrRaCtx *c);
    const char *const *files;    /* NULL-terminated, or NULL */
    void (*json)(QrJson *j, QrBundle *bd);
    void (*html)(QrHtml *h, QrBundle *bd);
} QrRaStage;

#define QR__RA_FILES(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define QR__RA_TXT_CSV(stem) stem ".txt", stem ".csv"

static const QrRaStage qr__ra_stages[QR_STAGE_N] = {
    [QR_STAGE_PREPARE] = { "prepare", "prepared pair", QR_STAGE_N, true, 0, NULL, qr__ra_prepare, NULL, NULL, NULL },
    [QR_STAGE_DUMP] = { "device dump", "device dump comparison", QR_STAGE_N, true, 0, qr__ra_on_dump, qr__ra_dump,
                        QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_DUMP)), NULL, NULL },
    [QR_STAGE_MATCH] = { "match", "match", QR_STAGE_N, false, 0, NULL, qr__ra_match,
                         QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_MATCH)), qr_bundle_json_match, qr_bundle_html_match },
    [QR_STAGE_CHECK] = { "check", "model check", QR_STAGE_N, false, 0, NULL, qr__ra_check, QR__RA_FILES(QR_BF_CHECK),
                         NULL, qr_bundle_html_check },
    [QR_STAGE_PROFILE] = { "profile", "profiles", QR_STAGE_N, false, 2, NULL, qr__ra_profile,
                           QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_PROFILE_BASE QR_BF_STATISTIC),
                                        QR__RA_TXT_CSV(QR_BF_PROFILE_ANAL QR_BF_STATISTIC)), NULL, NULL },
    [QR_STAGE_COMPARE] = { "compare", "per-layer comparison", QR_STAGE_N, false, 0, NULL, qr__ra_compare,
                           QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_COMPARE)), qr_bundle_json_layers, qr_bundle_html_compare },
    [QR_STAGE_TOKENS] = { "tokens", "per-token comparison", QR_STAGE_N, false, 0, qr__ra_on_tokens, qr__ra_tokens,
                          QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_DS_OUTPUTS)), qr__ra_json_tokens, qr_bundle_html_tokens },
    [QR_STAGE_REPRO] = { "repro", "minimal repro", QR_STAGE_N, false, 0, qr__ra_on_repro, qr__ra_repro, NULL,
                         qr__ra_json_deploy, qr__ra_html_deploy },
    [QR_STAGE_SENS] = { "sensitivity", "sensitivity ranking", QR_STAGE_N, false, 0, NULL, qr__ra_sens,
                        QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_SENS), QR_BF_SENS ".json"), qr_bundle_json_sens,
                        qr_bundle_html_sensitivity },
    [QR_STAGE_ACCUM] = { "accumulated error", "cumulative error", QR_STAGE_N, false, 0, NULL, qr__ra_accum,
                         QR__RA_FILES(QR_BF_ACCUM), qr_bundle_json_accum, qr_bundle_html_accumulated },
    [QR_STAGE_WEIGHTS] = { "weight comparison", "weight comparison", QR_STAGE_N, false, 0, NULL, qr__ra_weights,
                           QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_WEIGHTS)), NULL, qr_bundle_html_weights },
    [QR_STAGE_ADVISOR] = { "advisor", "advisor", QR_STAGE_N, false, 0, NULL, qr__ra_advisor, QR__RA_FILES(QR_BF_ADVISOR),
                           qr__ra_json_advisor, qr_bundle_html_advisor },
    [QR_STAGE_WHATIF] = { "mixed precision", "mixed-precision what-if", QR_STAGE_SENS, false, 0, NULL, qr__ra_whatif,
                          QR__RA_FILES(QR_BF_WHATIF), qr_bundle_json_whatif, qr_bundle_html_whatif },
    [QR_STAGE_DEMOTE] = { "int16 demotion", "int16 demotion", QR_STAGE_N, false, 0, qr__ra_on_demote, qr__ra_run_demote,
                          QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_DEMOTION), QR_BF_DEMOTION ".json"), NULL,
                          qr_bundle_html_demotion },
    [QR_STAGE_EMIT] = { "emit model", "emitted model", QR_STAGE_WHATIF, false, 0, qr__ra_on_emit, qr__ra_emit, NULL, NULL,
                        NULL },
    [QR_STAGE_DIST] = { "distributions", "distributions", QR_STAGE_N, false, 0, NULL, qr__ra_dist, NULL, NULL,
                        qr_bundle_html_distributions },
    [QR_STAGE_FRAG] = { "fragility", "rounding fragility", QR_STAGE_N, false, 0, qr__ra_on_frag, qr__ra_frag,
                        QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_FRAGILITY)), qr__ra_json_frag, qr__ra_html_frag },
    [QR_STAGE_BADCASE] = { "badcase", "bad-case input", QR_STAGE_N, false, 0, NULL, qr__ra_badcase, NULL, NULL, NULL },
    [QR_STAGE_DATASET] = { "data set", "data-set comparison", QR_STAGE_N, false, 0, qr__ra_on_dataset, qr__ra_dataset,
                           QR__RA_FILES(QR_BF_DATASET "/" QR_BF_COMPARE ".txt", QR_BF_DATASET "/" QR_BF_COMPARE ".csv"),
                           qr__ra_json_dataset, qr__ra_html_dataset },
    [QR_STAGE_DS_SENS] = { "data-set sensitivity", "data-set sensitivity", QR_STAGE_N, false, 0, qr__ra_on_dataset,
                           qr__ra_ds_sens, NULL, qr__ra_json_ds_sens, qr__ra_html_ds_sens },
    [QR_STAGE_GEN] = { "generation", "generation", QR_STAGE_N, false, 0, qr__ra_on_gen, qr__ra_gen,
                       QR__RA_FILES(QR__RA_TXT_CSV(QR_BF_GENERATION)), qr__ra_json_gen, qr_bundle_html_generation },
    [QR_STAGE_PLOTS] = { "plots", "plots", QR_STAGE_N, false, 0, NULL, qr__ra_plots, NULL, NULL, NULL },
    [QR_STAGE_GRAPH] = { "graph overlays", "graph overlays", QR_STAGE_COMPARE, false, 0, NULL, qr__ra_graph,
                         QR__RA_FILES(QR_BF_GRAPH_ME, QR_BF_GRAPH_ONNX), NULL, qr_bundle_html_graph },
    [QR_STAGE_REPORT] = { "report", "report", QR_STAGE_N, true, 0, NULL, qr__ra_report,
                          QR__RA_FILES(QR_BF_SUMMARY, QR_BF_INDEX), NULL, NULL },
    [QR_STAGE_ZIP] = { "zip", "zip", QR_STAGE_N, true, 0, NULL, qr__ra_zip_stage, QR__RA_FILES(QR_BF_MANIFEST), NULL, NULL },
};

/* Where the stages' sections go: summary.json after its beginning (schema, verdict, baseline form,
 * model output), index.html after the verdict box. */
static const QrStage qr__ra_json_order[] = { QR_STAGE_TOKENS, QR_STAGE_GEN, QR_STAGE_MATCH, QR_STAGE_SENS, QR_STAGE_COMPARE,
                                             QR_STAGE_ACCUM, QR_STAGE_ADVISOR, QR_STAGE_WHATIF, QR_STAGE_FRAG, QR_STAGE_REPRO,
                                             QR_STAGE_DATASET, QR_STAGE_DS_SENS };
static const QrStage qr__ra_html_order[] = { QR_STAGE_TOKENS, QR_STAGE_GEN, QR_STAGE_COMPARE, QR_STAGE_GRAPH, QR_STAGE_SENS,
                                             QR_STAGE_ACCUM, QR_STAGE_ADVISOR, QR_STAGE_DEMOTE, QR_STAGE_WHATIF,
                                             QR_STAGE_WEIGHTS, QR_STAGE_DIST, QR_STAGE_FRAG, QR_STAGE_REPRO, QR_STAGE_DATASET,
                                             QR_STAGE_DS_SENS, QR_STAGE_CHECK, QR_STAGE_MATCH };

/* report: summary.json, manifest.json and index.html, the pages put together from the stages'
 * sections. */
static QrStatus qr__ra_report(QrRaCtx *c) {
    QrBundle *bd = c->bd;
    QrJson j;
    qr_bundle_json_begin(bd, &j);
    for (int k = 0; k < QR_ARRAY_LEN(qr__ra_json_order); k++) qr__ra_stages[qr__ra_json_order[k]].json(&j, bd);
    QR_TRY(qr_bundle_json_end(bd, &j));
    QR_TRY(qr_bundle_write_manifest(bd));
    QrHtml h;
    qr_bundle_html_begin(bd, &h);
    for (int k = 0; k < QR_ARRAY_LEN(qr__ra_html_order); k++) qr__ra_stages[qr__ra_html_order[k]].html(&h, bd);
    return qr_bundle_html_end(bd, &h);
}

/* ==== the driver ========================================================================== */

static QrStatus qr_runall_run(const QrGraph *b, const QrGraph *a, const QrTensor *inputs, const QrRunallOpts *o,
                              QrRunallResult *r) {
    memset(r, 0, sizeof *r);
    QrBundle *bd = calloc(1, sizeof *bd);
    if (!bd) return qr_errf(QR_ERR_NOMEM, "out of memory");
    bd->run = (QrBundleRun){ .cmdline = o->cmdline, .input_paths = o->input_paths, .input_sha256 = o->input_sha256,
                             .n_input_paths = o->n_input_paths,
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
    QrRaCtx c = { .bd = bd, .o = o, .b = b, .a = a, .inputs = inputs };
    if (st == QR_OK) qr_bundle_hash_start(bd, b, a);
    for (int k = 0; k < QR_STAGE_N && st == QR_OK; k++) {
        const QrRaStage *g = &qr__ra_stages[k];
        if (g->on && !g->on(&c)) continue;
        qr_progress_begin(&bd->prog, g->name, g->steps);
        QrStatus s = g->needs != QR_STAGE_N && !bd->ok[g->needs]
                   ? qr_errf(QR_ERR_INVALID, "needs the %s, which failed", qr__ra_stages[g->needs].what) : g->run(&c);
        if (g->fatal) {
            qr_progress_end(&bd->prog, s);
            st = s;
            bd->ok[k] = s == QR_OK;
        } else bd->ok[k] = qr__ra_done(bd, g->name, s);
    }
    if (st == QR_OK) qr__ra_summary(bd, o, b, a, r);
    qr_bundle_hash_join(bd);
    free(c.base_stats);
    free(c.base_seen);
    free(c.a_stats);
    free(c.a_seen);
    free(c.early.stats);
    free(c.early.seen);
    qr__ra_frag_ride_free(&c);
    qr_dist_ride_free(c.dist_ride);
    for (int k = 0; k < QR__RA_EARLY; k++) free(c.early.msg[k]);
    if (staged) qr_bundle_rmtree(bd->dir);
    qr_cleanup_drop(staged_slot);
    qr_match_equiv_free(&bd->eq);
    qr_compare_free(&bd->cmp);
    qr_gen_free(&bd->gen);
    for (int j = 0; bd->tok && j < b->n_outputs; j++) qr_tok_free(&bd->tok[j]);
    free(bd->tok);
    free(bd->tok_m);
    qr_values_keep_free(&bd->se);
    qr_sens_free(&bd->sens);
    qr_accum_free(&bd->acc);
    qr_select_acc_sets_free(&bd->acc_sets);
    qr_check_free(&bd->chk);
    qr_weights_free(&bd->w);
    qr_advice_free(&bd->adv);
    qr_whatif_free(&bd->wi);
    qr_dist_free(&bd->dist);
    qr_frag_free(&bd->frag);
    qr_deploy_runall_free(&bd->dep);
    qr_ds_runall_free(&bd->dsr);
    qr_sens_set_free(&bd->dss);
    if (bd->se.b) qr_session_close(&bd->se);
    qr_arena_free(&bd->arena);
    free(bd);
    return st;
}
