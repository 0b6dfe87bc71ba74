/* cli/main — the commands that come after the deployment kit's (cli/deploy.c adds its options to
 * runall): runall (with --shard) and merge, badcase, ops, and the dispatcher (main). The common
 * parser and the other commands: cli/cli.c. */

/* ==== runall --data --shard and the merge of runall parts =================================
 * A shard runs the comparison over its samples and records runall's arguments (those that
 * shape the bundle: not --shard, -o, --keep-dir, --quiet, --fail-if-*, --threads, --max-memory)
 * in the part. qreport merge runs runall with them on the merged comparison: the worst sample
 * comes from the merged per-sample table instead of a bad-case search (the same metrics, by
 * the same accumulation), the data-set tables from the merged accumulators. */
typedef struct QrCliMerged {
    const QrDsCompare *dc;
    const QrDsSet *ds;
    const QrDsStatRun *stat;     /* runall parts: both profiles (section "dsprof") */
} QrCliMerged;

/* runall's arguments after "runall" minus the per-process ones, '\n'-joined into buf. */
static void qr__cli_runall_args(int argc, char **argv, char *buf, size_t n) {
    static const char *const with_value[] = { "--shard", "-o", "--output", "--keep-dir", "--fail-if-cosine-below",
                                              "--fail-if-sqnr-below", "--threads", "--max-memory" };
    size_t l = 0;
    buf[0] = 0;
    for (int i = 2; i < argc; i++) {
        bool skip = !strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q");
        for (int k = 0; !skip && k < QR_ARRAY_LEN(with_value); k++)
            if (!strcmp(argv[i], with_value[k])) { skip = true; i++; }
        if (skip) continue;
        if (l < n) l += (size_t)snprintf(buf + l, n - l, "%s%s", l ? "\n" : "", argv[i]);
    }
}

/* runall --data --shard K/N -o PART.qrpart: the comparison over shard K's samples. */
static int qr__cli_runall_shard(QrCliOpts *o, QrGraph *b, QrGraph *a, QrTensor *in, int argc, char **argv) {
    QrSession se = {0};
    QrDsSet ds = {0};
    QrDsCompare dc = {0};
    bool open = false;
    int shard = 0, n_shards = 1, lo = 0, hi = 0;
    QrStatus st = o->data_dir ? QR_OK : qr_errf(QR_ERR_INVALID, "--shard needs --data DIR");
    if (st == QR_OK && o->single) st = qr_errf(QR_ERR_INVALID, "--shard needs both models (BASE.onnx ANALYSIS.onnx)");
    if (st == QR_OK) st = qr_dspart_shard_parse(o->shard, &shard, &n_shards);
    if (st == QR_OK && !o->out_dir) st = qr_errf(QR_ERR_INVALID, "--shard needs -o PART.qrpart");
    if (st == QR_OK) { st = qr__cli_session_open(o, &se, b, a, in); open = st == QR_OK; }
    if (st == QR_OK) st = qr__cli_take_set(o, b, o->samples ? o->samples : o->num_steps, &ds);
    if (st == QR_OK) st = qr_ds_compare_init(&dc, &se, ds.n, ds.names);
    dc.skip_bad = o->skip_bad;               /* the part lists the samples it skipped; merge checks the set */
    dc.part = true;
    if (st == QR_OK) st = qr_select_output(b, o->rank_output, &dc.rank_output);   /* as one process ranks its samples */
    QrDsStatRun xs = {0};                    /* both profiles over the shard, from the pass's runs (section "dsprof") */
    if (st == QR_OK) st = qr_dsstat_run_init(&xs, &se, NULL);
    if (st == QR_OK) {
        dc.base_tap = qr_dsstat_base_tap;
        dc.base_tap_user = &xs;
        dc.hooks = &xs.hooks;
    }
    if (st == QR_OK) qr_dspart_shard_range(ds.n, shard, n_shards, &lo, &hi);
    QrProgress pr;
    qr_progress_init(&pr, stderr, o->quiet);
    QrStepHook hook = qr_progress_hook(&pr);
    qr_progress_begin(&pr, "compare over the data set", 0);
    /* the match verified on the first sample, as in one process's pass (each shard's rows alike) */
    if (st == QR_OK && lo > 0 && lo < hi) st = qr_session_run_baseline(&se);
    if (st == QR_OK) st = qr_ds_pass(&dc, &se, &ds, o->mode, lo, hi, in, &hook);
    xs.n_samples = dc.n_done;
    qr_progress_end(&pr, st);
    if (open) qr_session_next_inputs(&se, in);
    char args[8192];
    char kbuf[32], nbuf[32];
    QrCliSensSpec sp;
    qr__cli_sens_spec(o, kbuf, sizeof kbuf, &sp);
    qr__cli_runall_args(argc, argv, args, sizeof args);
    if (st == QR_OK) {
        snprintf(nbuf, sizeof nbuf, "%d", ds.n);
        const char *keys[16] = { "command", "mode", "samples", "args", "skip_bad_samples" },
                   *vals[16] = { "runall", o->mode ? o->mode : "sim", nbuf, args, o->skip_bad ? "yes" : "no" };
        int n = 5 + qr__cli_sens_spec_opts(&sp, keys + 5, vals + 5);
        const QrDsSection sec = { "dsprof", &xs, qr_dspart_dsprof_put, qr_dspart_dsprof_merge };
        st = qr_dspart_write(o->out_dir, "runall", &dc, &ds, &se, keys, vals, n, shard, n_shards, &sec, 1);
        if (st == QR_OK && !o->quiet)
            printf("shard %d/%d: samples %d..%d of %d; wrote %s (qreport merge writes the runall bundle)\n", shard, n_shards,
                   lo, hi - 1, ds.n, o->out_dir);
    }
    qr_ds_compare_free(&dc);
    qr_dsstat_run_free(&xs);
    qr_dsset_free(&ds);
    qr__cli_drop_set(o);                     /* not taken (an error before the pass) */
    if (open) qr_session_close(&se);
    qr_graph_free(a);
    free(a);
    qr__cli_release(b, in);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}

/* The bad case of a merged comparison: every sample's output metrics (as the search measures
 * them) and the worst by metric, its inputs read again. */
static QrStatus qr__cli_badcase_merged(const QrCliMerged *m, const QrGraph *b, QrMetricKind metric, QrBadcase *bc) {
    memset(bc, 0, sizeof *bc);
    const QrDsCompare *dc = m->dc;
    const QrDsSet *ds = m->ds;
    bc->dir = qr_arena_strdup(&bc->arena, ds->dir);
    bc->folders = ds->folders;
    bc->metric = metric;
    bc->n_inputs = ds->n_inputs;
    bc->input_names = qr_arena_array(&bc->arena, (size_t)ds->n_inputs + 1, sizeof(char *));
    bc->samples = qr_arena_array(&bc->arena, (size_t)dc->n_samples + 1, sizeof *bc->samples);
    bc->inputs = calloc((size_t)ds->n_inputs + 1, sizeof *bc->inputs);
    int *order = malloc(((size_t)dc->n_samples + 1) * sizeof *order);
    QrStatus st = bc->dir && bc->input_names && bc->samples && bc->inputs && order ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < ds->n_inputs; i++) bc->input_names[i] = qr_arena_strdup(&bc->arena, ds->input_names[i]);
    for (int k = 0; st == QR_OK && k < dc->n_samples; k++)
        bc->samples[k] = (QrBadcaseSample){ qr_arena_strdup(&bc->arena, dc->names[k]), dc->smp[k] };
    bc->n = dc->n_samples;
    bc->n_total = ds->n_found;
    if (st == QR_OK) {
        qr_ds_rank_samples(dc, metric, order);
        bc->worst = order[0];
        st = qr_dsset_read(ds, b, bc->worst, NULL, bc->inputs);
    }
    free(order);
    if (st != QR_OK) qr_badcase_free(bc);
    return st;
}

/* argv is the whole command line (for the manifest); merged: qreport merge's accumulators (the
 * comparison and profiles over the set, merged from parts), NULL for runall itself. */
static int qr__cli_runall_merged(int argc, char **argv, const QrCliMerged *merged) {
    QrCliOpts o;
    QrGraph *b = NULL, *a = NULL;
    QrTensor *in = NULL;
    QrDeployRunallOpts dep;
    int pargc = argc;
    char **pargv = argv, *pargv_copy[1024];
    int rc = qr_cli_deploy_runall_args(&pargc, &pargv, pargv_copy, QR_ARRAY_LEN(pargv_copy), &dep);
    if (rc) return rc;
    /* --data: the graphs are inferred on its first sample */
    rc = qr__cli_begin(pargc - 2, pargv + 2, qr__cli_usage_runall, true, true, &o, &b, &in);
    if (rc >= 0) return rc;
    QrStatus st = qr__cli_load_second(&o, o.model2, b, in, &a);
    if (st != QR_OK) { qr__cli_drop_set(&o); qr__cli_release(b, in); return qr__cli_fail(st); }
    char cmdline[8192];
    size_t n = 0;
    for (int i = 0; i < argc && n < sizeof cmdline; i++)
        n += (size_t)snprintf(cmdline + n, sizeof cmdline - n, "%s%s", i ? " " : "", argv[i]);
    /* the input files and their sha256 as the baseline's preparation read them (not read again) */
    const char *paths[QR_ARRAY_LEN(o.inputs)] = { 0 }, *shas[QR_ARRAY_LEN(o.inputs)] = { 0 };
    for (int i = 0; i < o.n_inputs && !o.input_dir; i++) {      /* -i DIR: no file to hash */
        const char *eq = strchr(o.inputs[i], '=');
        paths[i] = eq ? eq + 1 : o.inputs[i];
        shas[i] = o.input_sha[i][0] ? o.input_sha[i] : NULL;
    }
    QrSensOpts knobs = {0};
    st = qr__cli_sens_knobs(&o, b, a, &knobs);
    if (st == QR_OK) st = qr__cli_names_check(o.plot_nodes, ",", b, a, "--plot-nodes");
    if (st != QR_OK) { qr__cli_drop_set(&o); qr_graph_free(a); free(a); qr__cli_release(b, in); return qr__cli_fail(st); }
    if (o.shard) return qr__cli_runall_shard(&o, b, a, in, pargc, pargv);
    QrBadcase bc = {0};
    bool have_bc = false;
    if (o.data_dir && merged) {      /* qreport merge: the worst sample of the merged table */
        QrMetricKind mk = QR_METRIC_L1;
        if (o.metric) qr_metric_parse(o.metric, &mk);
        st = qr__cli_badcase_merged(merged, b, mk, &bc);
        have_bc = st == QR_OK;
        if (st != QR_OK) { qr__cli_drop_set(&o); qr_graph_free(a); free(a); qr__cli_release(b, in); return qr__cli_fail(st); }
    }
    const char *pn[64];
    int n_pn = 0;
    char pnbuf[4096];
    if (o.plot_nodes) {
        snprintf(pnbuf, sizeof pnbuf, "%s", o.plot_nodes);
        for (char *sv = NULL, *tok = strtok_r(pnbuf, ",", &sv); tok && n_pn < 64; tok = strtok_r(NULL, ",", &sv)) pn[n_pn++] = tok;
    }
    QrRunallOpts ro = { .out_zip = o.out_dir ? o.out_dir : "qreport_report.zip", .keep_dir = o.keep_dir, .cmdline = cmdline,
                        .input_paths = paths, .input_sha256 = shas, .labels = o.labels, .n_input_paths = o.n_inputs, .random_input = o.n_inputs == 0,
                        .quiet = o.quiet, .cos_threshold = o.cos_threshold, .mode = o.mode,
                        .plot_nodes = n_pn ? pn : NULL, .n_plot_nodes = n_pn };
    ro.sens = knobs;
    ro.single_model = o.single;
    QrDsSet ds = {0};
    if (o.data_dir && st == QR_OK) {         /* one pass over the set; the analyses on its worst sample */
        ro.random_input = false;
        st = qr__cli_take_set(&o, b, o.samples ? o.samples : o.num_steps, &ds);   /* listed while loading b */
        ro.dataset = st == QR_OK ? &ds : NULL;
        ro.dataset_skip_bad = o.skip_bad;
        ro.dataset_metric = QR_METRIC_L1;
        if (o.metric) qr_metric_parse(o.metric, &ro.dataset_metric);
        ro.sens_samples = o.sens_samples;
        if (merged) { ro.dataset_merged = merged->dc; ro.dataset_merged_stat = merged->stat; }
    }
    if (o.no_fragility) dep.dump.no_fragility = true;   /* the dump comparison makes no fragility runs either */
    ro.deploy = dep;
    ro.no_fragility = o.no_fragility;
    ro.no_error_split = o.no_error_split;
    ro.sens.off_one = o.sens_mode && !strcmp(o.sens_mode, "off-one");
    ro.sens.metric = QR_METRIC_L1;
    ro.sens.reverse = o.reverse;
    ro.sens.grouped = o.all_rows ? -1 : 0;
    if (o.metric) qr_metric_parse(o.metric, &ro.sens.metric);
    ro.metric_given = o.metric != NULL && ro.sens.metric != QR_METRIC_KLD;   /* the curves are per layer: no token KL */
    ro.generate = o.generate;
    ro.kv_map = o.kv_map;
    ro.n_kv_map = o.n_kv_map;
    ro.gen_b = b;
    ro.gen_a = a;

    ro.quantize_nodes = o.quantize_nodes;
    ro.non_quantize_nodes = o.non_quantize_nodes;
    ro.have_channel_axis = o.have_channel_axis;
    ro.demote_int16 = o.demote_int16;
    ro.int16_integer = o.int16_integer;
    ro.low_memory = o.max_memory > 0;
    ro.channel_axis = o.channel_axis;
    if (!qr__cli_ints(o.topk_list ? o.topk_list : "1,3,5,10", ro.topk, 12, &ro.n_topk))
        st = qr_errf(QR_ERR_INVALID, "--topk-list '%s': expected positive integers separated by commas", o.topk_list);
    for (int k = 0; k < ro.n_topk; k++) ro.sens.group_top = QR_MAX(ro.sens.group_top, QR_MAX(ro.topk[k], QR_SENS_GROUP_TOP));
    QrRunallResult res;
    if (have_bc) ro.dataset_worst = bc.inputs;
    if (st == QR_OK) st = qr_runall_run(b, a, in, &ro, &res);
    int code = st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
    if (st == QR_OK && dep.emit_dir) {               /* the model asked for must be there */
        if (!res.emitted) {
            fprintf(stderr, "qreport: error: --emit-model %s was not written (see the failed analyses in the bundle)\n", dep.emit_dir);
            code = QR_EXIT_FAIL;
        } else if (!o.quiet) printf("wrote %s/analysis_promoted.onnx (the what-if's recommended promotion)\n", dep.emit_dir);
    }
    if (st == QR_OK) {
        if (!o.quiet) printf("%swrote %s\n", res.summary, ro.out_zip);
        bool gate = (o.fail_cos == o.fail_cos && (!res.have_out || !(res.out.cosine >= o.fail_cos))) ||
                    (o.fail_sqnr == o.fail_sqnr && (!res.have_out || !(res.out.sqnr >= o.fail_sqnr)));
        if (gate) {
            fprintf(stderr, "qreport: model output below the gate (Cosine %.6f, SQNR %.2f dB)\n", res.out.cosine, res.out.sqnr);
            code = 10;
        }
    }
    if (have_bc) qr_badcase_free(&bc);
    qr_dsset_free(&ds);
    qr_graph_free(a);
    free(a);
    qr__cli_release(b, in);
    return code;
}

static const char *qr__cli_usage_badcase =
    "usage: qreport find-bad-case BASE.onnx ANALYSIS.onnx --data DIR [--num-steps N] [--metric L1|Cosine|MSE|KL|SQNR]\n"
    "                             [--rank-output NAME] [-o DIR] [--quiet]\n"
    "  Runs both models on every sample of DIR (hmct layout: one folder per model input named after it,\n"
    "  files 0.npy, 1.npy, ...; a flat folder of .npy for single-input models), measures --metric at the\n"
    "  model outputs and writes the worst sample as badcase.npy plus the per-sample list badcase_list.txt/.csv.\n"
    "  --rank-output NAME: the metric at that graph output alone (a multi-head model's bad head).\n";

static int qr_cli_badcase(int argc, char **argv) {
    QrCliOpts o;
    QrGraph *b = NULL, *a = NULL;
    QrTensor *in = NULL;
    int rc = qr__cli_parse(argc, argv, &o, qr__cli_usage_badcase, true);
    if (rc) return rc < 0 ? 0 : rc;
    if (!o.data_dir) { fprintf(stderr, "qreport: find-bad-case needs --data DIR\n%s", qr__cli_usage_badcase); return QR_EXIT_USAGE; }
    /* the graphs are inferred on --data's first sample, as runall --data */
    rc = qr__cli_begin(argc, argv, qr__cli_usage_badcase, true, true, &o, &b, &in);
    if (rc >= 0) return rc;
    qr__cli_drop_set(&o);                    /* analysis/badcase lists the folder itself (--num-steps) */
    QrStatus st = qr__cli_load_second(&o, o.model2, b, in, &a);
    QrMetricKind mk = QR_METRIC_L1;
    if (o.metric) qr_metric_parse(o.metric, &mk);
    QrBadcase bc = {0};
    const char *dir = o.out_dir ? o.out_dir : ".";
    QrProgress pr;
    qr_progress_init(&pr, stderr, o.quiet);
    qr_progress_begin(&pr, "bad-case search", 0);
    QrStepHook hook = qr_progress_hook(&pr);
    int only = -1;
    if (st == QR_OK) st = qr_select_output(b, o.rank_output, &only);
    if (st == QR_OK) st = qr_badcase_search_at(b, a, o.data_dir, o.num_steps, mk, only, &hook, &bc);
    qr_progress_end(&pr, st);
    if (st == QR_OK) st = qr_mkdir_p(dir);
    if (st == QR_OK) st = qr_badcase_write(&bc, dir);
    if (st == QR_OK && !o.quiet)
        printf("%d of %d samples evaluated; worst: %s (%s %.6g); wrote %s/" QR_BF_BADCASE " and "
               QR_BF_BADCASE_LIST ".txt/.csv\n", bc.n, bc.n_total, bc.samples[bc.worst].file, qr_metric_name(mk), qr_metric_get(&bc.samples[bc.worst].m, mk), dir);
    qr_badcase_free(&bc);
    if (a) { qr_graph_free(a); free(a); }
    qr__cli_release(b, in);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}

static const char *qr__cli_usage_merge =
    "usage: qreport merge PART.qrpart... -o DIR|report.zip [--keep-dir DIR] [--fail-if-cosine-below X]\n"
    "                     [--fail-if-sqnr-below X] [--threads N] [--quiet]\n"
    "  Merges the parts written by 'compare --data DIR --shard K/N -o PART.qrpart' into the tables one\n"
    "  'compare --data' writes (byte-identical), or those of 'sensitivity --data ... --shard' into what one\n"
    "  'sensitivity --data' writes (byte-identical: the merge ranks the samples on the merged table and runs\n"
    "  sensitivity and the cumulative error on the K worst itself). The parts must come from the same models\n"
    "  (sha256), command, options and sample list, and cover shards 0..N-1 exactly once. The models and the\n"
    "  data folder named in the parts must be readable and unchanged (sha256, sample names).\n"
    "  Parts of 'runall --data ... --shard': runall runs with the parts' arguments on the merged comparison and\n"
    "  writes report.zip (the worst sample from the merged table); --keep-dir, --fail-if-* as for runall.\n";

static int qr_cli_merge(int argc, char **argv) {
    const char *out = NULL, *paths[4096], *pass[16];
    int np = 0, npass = 0;
    bool quiet = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { fputs(qr__cli_usage_merge, stdout); return 0; }
        if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) quiet = true;
        else if ((!strcmp(argv[i], "--keep-dir") || !strcmp(argv[i], "--fail-if-cosine-below") ||
                  !strcmp(argv[i], "--fail-if-sqnr-below") || !strcmp(argv[i], "--threads")) && i + 1 < argc && npass < 14) {
            pass[npass++] = argv[i];
            pass[npass++] = argv[++i];
        }
        else if (argv[i][0] == '-') { fprintf(stderr, "qreport: unknown option '%s'\n%s", argv[i], qr__cli_usage_merge); return QR_EXIT_USAGE; }
        else if (np < QR_ARRAY_LEN(paths)) paths[np++] = argv[i];
    }
    if (!np || !out) { fprintf(stderr, "qreport: merge needs parts and -o DIR\n%s", qr__cli_usage_merge); return QR_EXIT_USAGE; }
    QrDsPart *parts = calloc((size_t)np, sizeof *parts);
    QrGraph *g[2] = { NULL, NULL };
    QrTensor *in = NULL;
    QrDsSet ds = {0};
    QrSession se = {0};
    QrDsCompare dc = {0};
    bool open = false;
    int nread = 0;
    QrStatus st = parts ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (; st == QR_OK && nread < np; nread++) st = qr_dspart_read(paths[nread], &parts[nread]);
    if (st != QR_OK) nread--;
    if (st == QR_OK) st = qr_dspart_check(parts, np);
    const QrDsPart *p0 = parts ? &parts[0] : NULL;
    for (int m = 0; st == QR_OK && m < 2; m++) {
        uint8_t dg[QR_SHA256_LEN];
        char hex[2 * QR_SHA256_LEN + 1];
        st = qr_sha256_file(p0->model_path[m], dg);
        qr_sha256_hex(dg, hex);
        if (st == QR_OK && strcmp(hex, p0->model_sha[m]))
            st = qr_errf(QR_ERR_INVALID, "%s changed since the parts were written (sha256 %.12s..., the parts say %.12s...)",
                         p0->model_path[m], hex, p0->model_sha[m]);
        if (st == QR_OK) st = qr_run_load(p0->model_path[m], &g[m]);
    }
    int n_samples = 0;
    if (st == QR_OK && qr_dspart_opt(p0, "samples")) n_samples = atoi(qr_dspart_opt(p0, "samples"));
    if (st == QR_OK) st = qr_dsset_list(g[0], p0->dir, n_samples, &ds);
    if (st == QR_OK && ds.n != p0->n_samples) st = qr_errf(QR_ERR_INVALID, "data folder %s changed since the parts were written", p0->dir);
    for (int k = 0; st == QR_OK && k < ds.n; k++)
        if (strcmp(ds.names[k], p0->names[k])) st = qr_errf(QR_ERR_INVALID, "data folder %s changed since the parts were written", p0->dir);
    if (st == QR_OK) in = calloc((size_t)g[0]->n_inputs + 1, sizeof *in);
    if (st == QR_OK && !in) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_dsset_read(&ds, g[0], 0, NULL, in);
    /* --skip-bad-samples parts: the graphs are inferred on the first sample that reads, as the shards did */
    const bool skip_bad = p0 && qr_dspart_opt(p0, "skip_bad_samples") && !strcmp(qr_dspart_opt(p0, "skip_bad_samples"), "yes");
    for (int k = 1; st != QR_OK && st != QR_ERR_NOMEM && skip_bad && k < ds.n; k++) {
        qr_err_clear();
        st = qr_dsset_read(&ds, g[0], k, NULL, in);
    }
    if (st == QR_OK) st = qr_run_infer(g[0], in);
    for (int i = 0; st == QR_OK && i < g[1]->n_inputs; i++) st = qr_run_check_input(g[1], i, &in[i]);
    if (st == QR_OK) st = qr_run_infer(g[1], in);
    if (st == QR_OK) { st = qr_session_open(&se, g[0], g[1], in); open = st == QR_OK; }
    if (st == QR_OK) st = qr_ds_compare_init(&dc, &se, ds.n, ds.names);
    QrDsStatRun xs = {0};                    /* runall parts: both profiles */
    const bool ra_parts = st == QR_OK && !strcmp(p0->kind, "runall");
    if (ra_parts) st = qr_dsstat_run_init(&xs, &se, NULL);
    const QrDsSection sec = { "dsprof", &xs, qr_dspart_dsprof_put, qr_dspart_dsprof_merge };
    for (int i = 0; st == QR_OK && i < np; i++) st = qr_dspart_load(&parts[i], &se, &dc, ra_parts ? &sec : NULL, ra_parts);
    if (st == QR_OK && !dc.n_done)
        st = qr_errf(QR_ERR_INVALID, "--data %s: every sample was skipped (--skip-bad-samples) in every part; the first: %s", ds.dir,
                     dc.skip_why[0] ? dc.skip_why[0] : "?");
    QrMetricKind mk = QR_METRIC_L1;
    if (st == QR_OK && qr_dspart_opt(p0, "metric")) qr_metric_parse(qr_dspart_opt(p0, "metric"), &mk);
    bool sens = st == QR_OK && !strcmp(p0->kind, "sensitivity"), runall = st == QR_OK && !strcmp(p0->kind, "runall");
    if (runall) {                            /* runall with the part's arguments on the merged comparison */
        char args[8192];
        const char *av[512];
        int ac = 0;
        snprintf(args, sizeof args, "%s", qr_dspart_opt(p0, "args") ? qr_dspart_opt(p0, "args") : "");
        av[ac++] = "qreport";
        av[ac++] = "runall";
        for (char *sv = NULL, *tok = strtok_r(args, "\n", &sv); tok && ac < 480; tok = strtok_r(NULL, "\n", &sv)) av[ac++] = tok;
        av[ac++] = "-o";
        av[ac++] = out;
        for (int i = 0; i < npass; i++) av[ac++] = pass[i];
        if (quiet) av[ac++] = "--quiet";
        av[ac] = NULL;
        QrCliMerged mg = { &dc, &ds, &xs };
        int code = qr__cli_runall_merged(ac, (char **)av, &mg);
        qr_ds_compare_free(&dc);
        qr_dsstat_run_free(&xs);
        if (open) qr_session_close(&se);
        if (in && g[0]) for (int i = 0; i < g[0]->n_inputs; i++) qr_tensor_free_data(&in[i]);
        free(in);
        qr_dsset_free(&ds);
        for (int m = 0; m < 2; m++) if (g[m]) { qr_graph_free(g[m]); free(g[m]); }
        for (int i = 0; i < nread; i++) qr_dspart_free(&parts[i]);
        free(parts);
        return code;
    }
    QrCliSensSpec sp;
    if (sens) st = qr__cli_sens_spec_from_part(p0, &sp);
    if (st == QR_OK && sens) st = qr__cli_sens_over(&se, &ds, &dc, &sp, quiet, out);
    if (st == QR_OK && !sens) st = qr_mkdir_p(out);
    if (st == QR_OK && !sens) st = qr_ds_compare_write(&dc, &se, &ds, mk, out);
    if (st == QR_OK && !quiet)
        printf("merged %d parts (%d samples); wrote %s/%s ...\n", np, ds.n, out, sens ? QR_BF_SENS ".txt" : QR_BF_COMPARE ".txt");
    int code = st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
    qr_ds_compare_free(&dc);
    qr_dsstat_run_free(&xs);
    if (open) qr_session_close(&se);
    if (in && g[0]) for (int i = 0; i < g[0]->n_inputs; i++) qr_tensor_free_data(&in[i]);
    free(in);
    qr_dsset_free(&ds);
    for (int m = 0; m < 2; m++) if (g[m]) { qr_graph_free(g[m]); free(g[m]); }
    for (int i = 0; i < nread; i++) qr_dspart_free(&parts[i]);
    free(parts);
    return code;
}

/* `qreport ops`: one line per operator the op table holds, as the loader checks nodes against it. */
static int qr__cli_ops(void) {
    int n = qr_op_count();
    for (int i = 0; i < n; i++) {
        const QrOpDef *d = qr_op_at(i);
        if (!d->op_type) continue;
        printf("%-14s %-28s inputs %d..", d->domain[0] ? d->domain : "ai.onnx", d->op_type, d->min_in);
        if (d->max_in < 0) printf("n");
        else printf("%d", d->max_in);
        for (int k = 0; k < d->min_in && k < 32; k++)
            if (d->opt_in >> k & 1u) printf(" [%d]", k);
        printf("\n");
    }
    printf("%d operators\n", n);
    return QR_EXIT_OK;
}

QR_TESTAPI int qr_cli_main(int argc, char **argv) {
    qr_cleanup_install();   /* before any thread: SIGINT/SIGTERM remove temporaries */
    qr_kern_init();
    if (argc < 2) { qr__cli_print_usage(stderr); return QR_EXIT_USAGE; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        QrCpu cpu;
        qr_cpu_detect(&cpu);
        printf("qreport %s\nisa: %s (cpu: avx2=%d fma=%d avx512f=%d avx512bw=%d avx512vnni=%d neon=%d, %d cpus)\n"
               "build: %s\n", QR_VERSION, qr_isa_name(qr_kern_isa()), cpu.avx2, cpu.fma, cpu.avx512f, cpu.avx512bw,
               cpu.avx512vnni, cpu.neon, cpu.n_cpus, QR_BUILD_FLAGS);
        return QR_EXIT_OK;
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) { qr__cli_print_usage(stdout); return 0; }
    if (!strcmp(cmd, "run")) return qr_cli_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "profile")) return qr_cli_profile(argc - 2, argv + 2);
    if (!strcmp(cmd, "match")) return qr_cli_match(argc - 2, argv + 2);
    if (!strcmp(cmd, "check")) return qr_cli_check(argc - 2, argv + 2);
    if (!strcmp(cmd, "compare")) return qr_cli_compare(argc - 2, argv + 2);
    if (!strcmp(cmd, "sensitivity")) return qr_cli_sensitivity(argc - 2, argv + 2);
    if (!strcmp(cmd, "runall")) return qr__cli_runall_merged(argc, argv, NULL);
    if (!strcmp(cmd, "find-bad-case")) return qr_cli_badcase(argc - 2, argv + 2);
    if (!strcmp(cmd, "compare-dump")) return qr_cli_compare_dump(argc - 2, argv + 2);
    if (!strcmp(cmd, "extract")) return qr_cli_extract(argc - 2, argv + 2);
    if (!strcmp(cmd, "promote")) return qr_cli_promote(argc - 2, argv + 2);
    if (!strcmp(cmd, "merge")) return qr_cli_merge(argc - 2, argv + 2);
    if (!strcmp(cmd, "ops")) return qr__cli_ops();
    fprintf(stderr, "qreport: unknown command '%s'\n", cmd);
    qr__cli_print_usage(stderr);
    return QR_EXIT_USAGE;
}

#ifndef QR_TESTING
int main(int argc, char **argv) { return qr_cli_main(argc, argv); }
#endif
