/* cli/deploy — the deployment kit's commands (compare-dump, extract, promote) and the options
 * they add to runall. Their options are taken out of argv here before the common parser
 * (qr__cli_parse) sees the rest, so cli.c keeps one parser for what every command shares. */

typedef struct QrDeployArgs {
    const char *dump_map;        /* --dump-map CSV */
    const char *dump_dir;        /* runall --dump DIR */
    double dump_tol;             /* --dump-tolerance (LSB) */
    const char *baseline;        /* compare-dump --baseline */
    const char *node;            /* extract --node */
    int radius;                  /* extract --radius */
    const char *nodes;           /* promote --nodes */
    const char *to;              /* promote --to */
    const char *emit_dir;        /* runall --emit-model DIR */
    bool no_repro;               /* runall --no-repro */
    bool no_fragility;           /* compare-dump --no-fragility */
} QrDeployArgs;

/* Removes the deploy options named in `which` (space-separated, e.g. "--dump-map --baseline") from
 * argv[0..*argc) and stores them in d. Returns 0, or QR_EXIT_USAGE after printing the problem. */
static int qr__cli_take(int *argc, char **argv, const char *which, QrDeployArgs *d, const char *usage) {
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        const char *a = argv[i];
        char key[64];
        snprintf(key, sizeof key, " %s ", a);
        char hay[512];
        snprintf(hay, sizeof hay, " %s ", which);
        if (a[0] != '-' || !strstr(hay, key)) { argv[n++] = argv[i]; continue; }
        if (!strcmp(a, "--no-repro")) { d->no_repro = true; continue; }
        if (!strcmp(a, "--no-fragility")) { d->no_fragility = true; continue; }
        if (i + 1 >= *argc) { fprintf(stderr, "qreport: %s needs a value\n%s", a, usage); return QR_EXIT_USAGE; }
        const char *v = argv[++i];
        char *end;
        if (!strcmp(a, "--dump-map")) d->dump_map = v;
        else if (!strcmp(a, "--dump")) d->dump_dir = v;
        else if (!strcmp(a, "--baseline")) d->baseline = v;
        else if (!strcmp(a, "--node")) d->node = v;
        else if (!strcmp(a, "--nodes")) d->nodes = v;
        else if (!strcmp(a, "--to")) d->to = v;
        else if (!strcmp(a, "--emit-model")) d->emit_dir = v;
        else if (!strcmp(a, "--dump-tolerance")) {
            d->dump_tol = strtod(v, &end);
            if (end == v || *end || !(d->dump_tol >= 0) || !isfinite(d->dump_tol)) {
                fprintf(stderr, "qreport: --dump-tolerance '%s': expected a number of LSB >= 0\n%s", v, usage);
                return QR_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--radius")) {
            if (!qr__cli_int(v, 0, 1000, &d->radius)) {
                fprintf(stderr, "qreport: --radius must be 0..1000\n%s", usage);
                return QR_EXIT_USAGE;
            }
        }
    }
    argv[n] = NULL;
    *argc = n;
    return 0;
}

static const char *qr__cli_usage_compare_dump =
    "usage: qreport compare-dump ANALYSIS.onnx DUMP_DIR [-i INPUT ...] [--baseline BASE.onnx] [--dump-map MAP.csv]\n"
    "                            [--dump-tolerance LSB] [--no-fragility] [-o DIR] [--shape NAME=...] [--seed N] [--quiet]\n"
    "  Compares per-layer tensors dumped by a deployment runtime (DUMP_DIR: .npy of any numeric dtype, raw\n"
    "  .bin/.raw in float32 or the value's quantized integer type) with qreport's int-mode run of the analysis\n"
    "  model on the same input (integer kernels, as a deployment runtime), its sim-mode run and, with --baseline,\n"
    "  the float baseline. Files are matched to values by exact name, then sanitized (/ : . - and spaces -> _,\n"
    "  case-insensitive, runtime prefixes/suffixes stripped), then by --dump-map (CSV file,value[,layout]\n"
    "  [,scale,zero_point]). Layout NCHW or NHWC from the .npy shape, the map, or else from the data. Writes\n"
    "  dump_compare.txt/.csv to DIR (default .): per value max |diff| in LSB, share of differing elements,\n"
    "  rounding ties, LSB histogram, Cosine/SQNR/max abs against int and sim mode and the baseline, and the first\n"
    "  value where the device leaves the simulation by more than --dump-tolerance LSB (default 1). A value beyond\n"
    "  it is called rounding, not divergent, when its difference is within the model's rounding-fragility spread\n"
    "  there (the sim re-run with 1-LSB rounding perturbations: 1 + 4 model runs) and a value upstream already\n"
    "  differs; --no-fragility skips those runs.\n"
    "  Exit 1 on a bad dump (wrong size, unknown dtype, no fitting layout, ambiguous name, integer data without\n"
    "  a quantizer): nothing is written.\n";

static int qr_cli_compare_dump(int argc, char **argv) {
    QrDeployArgs d = { .dump_tol = 1.0 };
    int rc = qr__cli_take(&argc, argv, "--dump-map --dump-tolerance --baseline --no-fragility", &d, qr__cli_usage_compare_dump);
    if (rc) return rc;
    QrCliOpts o;
    QrGraph *a = NULL, *b = NULL;
    QrTensor *in = NULL;
    rc = qr__cli_begin(argc, argv, qr__cli_usage_compare_dump, true, false, &o, &a, &in);
    if (rc >= 0) return rc;
    const char *dump_dir = o.model2;
    const char *dir = o.out_dir ? o.out_dir : ".";
    QrSession se = { 0 };
    bool have_se = false;
    QrStatus st = QR_OK;
    if (d.baseline) {
        st = qr__cli_load_second(&o, d.baseline, a, in, &b);
        if (st == QR_OK) st = qr__cli_session_open(&o, &se, b, a, in);
        have_se = st == QR_OK;
    }
    QrDumpOpts dopt = { .dir = dump_dir, .map = d.dump_map, .tol = d.dump_tol, .float_rtol = 1e-4,
                        .int16_integer = o.int16_integer, .no_fragility = d.no_fragility };
    QrDumpResult r = { 0 };
    bool have_r = false;
    if (st == QR_OK) { st = qr_dump_compare(a, in, have_se ? &se : NULL, &dopt, &r); have_r = st == QR_OK; }
    if (st == QR_OK) st = qr_mkdir_p(dir);
    if (st == QR_OK) st = qr_dump_write(&r, dir);
    if (st == QR_OK && !o.quiet) {
        QrArena ar = { 0 };
        printf("%d file%s matched, %d unmatched; %s\nwrote %s/" QR_BF_DUMP ".txt and .csv\n", r.n, r.n == 1 ? "" : "s",
               r.n_unmatched, qr_dump_verdict(&ar, &r), dir);
        qr_arena_free(&ar);
    }
    if (st == QR_OK && r.n_unmatched)
        qr__cli_warn(&o, "%d dump file%s matched no value (listed in dump_compare.txt; name them with --dump-map)",
                     r.n_unmatched, r.n_unmatched == 1 ? "" : "s");
    if (have_r) qr_dump_free(&r);
    if (have_se) qr_session_close(&se);
    if (b) { qr_graph_free(b); free(b); }
    qr__cli_release(a, in);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}

/* runall: takes --dump, --dump-map, --dump-tolerance out of a copy of argv (*argv is replaced by
 * copy, the caller's array of cap entries; the original, whole command line stays for the
 * manifest). */
static int qr_cli_deploy_runall_args(int *argc, char ***argv, char **copy, int cap, QrDeployRunallOpts *out) {
    if (*argc >= cap) { fprintf(stderr, "qreport: too many arguments\n"); return QR_EXIT_USAGE; }
    for (int i = 0; i < *argc; i++) copy[i] = (*argv)[i];
    QrDeployArgs d = { .dump_tol = 1.0 };
    int rc = qr__cli_take(argc, copy, "--dump --dump-map --dump-tolerance --no-repro --emit-model", &d, qr__cli_usage_runall);
    if (rc) return rc;
    *argv = copy;
    memset(out, 0, sizeof *out);
    out->no_repro = d.no_repro;
    out->emit_dir = d.emit_dir;
    if (d.emit_dir) {                               /* refused before anything runs */
        QrStatus st = qr_dump_outdir_check(d.emit_dir);
        if (st != QR_OK) return qr__cli_fail(st);
    }
    if ((d.dump_map || d.dump_tol != 1.0) && !d.dump_dir) {
        fprintf(stderr, "qreport: --dump-map and --dump-tolerance need --dump DIR\n%s", qr__cli_usage_runall);
        return QR_EXIT_USAGE;
    }
    if (d.dump_dir) {
        out->dump = (QrDumpOpts){ .dir = d.dump_dir, .map = d.dump_map, .tol = d.dump_tol, .float_rtol = 1e-4 };
        out->has_dump = true;
    }
    return 0;
}

static const char *qr__cli_usage_extract =
    "usage: qreport extract BASE.onnx ANALYSIS.onnx --node NAME [-i INPUT ...] [--radius K] -o DIR\n"
    "                       [--shape NAME=...] [--seed N] [--quiet]\n"
    "  A minimal reproduction of one layer for a bug report, in DIR (new or empty): base_sub.onnx and\n"
    "  analysis_sub.onnx (the node — baseline or analysis node name — with its Q/DQ or QOperator form plus K\n"
    "  upstream nodes (default 0), weights included, graph inputs at the cut), the cut inputs as .npy\n"
    "  (base_in_<k>.npy: the baseline's values; analysis_in_<k>.npy: the analysis model's values as its\n"
    "  consumers saw them), the outputs both computed (base_expected.npy, analysis_expected.npy), repro.json\n"
    "  (node, base_inputs, analysis_inputs, metrics: the node's local metrics in the full run, command) and\n"
    "  README.txt. `qreport compare base_sub.onnx analysis_sub.onnx -i base_in_0.npy ...` shows those local\n"
    "  metrics in the node's row. Written to a new sibling folder and renamed: a failure leaves nothing.\n";

static int qr_cli_extract(int argc, char **argv) {
    QrDeployArgs d = { 0 };
    int rc = qr__cli_take(&argc, argv, "--node --radius", &d, qr__cli_usage_extract);
    if (rc) return rc;
    if (!d.node) { fprintf(stderr, "qreport: extract needs --node NAME\n%s", qr__cli_usage_extract); return QR_EXIT_USAGE; }
    QrCliOpts o;
    rc = qr__cli_parse(argc, argv, &o, qr__cli_usage_extract, true);
    if (rc) return rc < 0 ? 0 : rc;
    if (!o.out_dir) { fprintf(stderr, "qreport: extract needs -o DIR\n%s", qr__cli_usage_extract); return QR_EXIT_USAGE; }
    QrStatus st = qr_dump_outdir_check(o.out_dir);
    if (st != QR_OK) return qr__cli_fail(st);
    QrGraph *b = NULL, *a = NULL;
    QrTensor *in = NULL;
    rc = qr__cli_begin(argc, argv, qr__cli_usage_extract, true, false, &o, &b, &in);
    if (rc >= 0) return rc;
    st = qr__cli_load_second(&o, o.model2, b, in, &a);
    QrSession se = { 0 };
    QrCompare c = { 0 };
    bool have_se = false, have_c = false;
    if (st == QR_OK) { st = qr__cli_session_open(&o, &se, b, a, in); have_se = st == QR_OK; }
    if (st == QR_OK) {                                  /* the name first: no runs for a typo */
        QrArena ar = { 0 };
        if (qr_extract_find(&se, d.node, &ar) < 0) st = QR_ERR_INVALID;
        qr_arena_free(&ar);
    }
    if (st == QR_OK) { st = qr_compare_mode(&se, "sim", o.cos_threshold, &c); have_c = st == QR_OK; }
    QrExtractOpts eo = { .node = d.node, .radius = d.radius };
    QrExtractInfo info;
    if (st == QR_OK) st = qr_extract_to(&se, &c, &eo, o.out_dir, &info);
    if (st == QR_OK && !o.quiet)
        printf("extracted '%s' (analysis '%s'): %d + %d nodes, %d cut input%s; local Cosine %.6f, SQNR %.2f dB\n"
               "wrote %s/{base_sub,analysis_sub}.onnx, cut inputs, expected outputs, repro.json, README.txt\n",
               info.b_node, info.a_node, info.n_base_nodes, info.n_analysis_nodes, info.n_cut, info.n_cut == 1 ? "" : "s",
               info.local.cosine, info.local.sqnr, o.out_dir);
    if (have_c) qr_compare_free(&c);
    if (have_se) qr_session_close(&se);
    if (a) { qr_graph_free(a); free(a); }
    qr__cli_release(b, in);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}

static const char *qr__cli_usage_promote =
    "usage: qreport promote BASE.onnx ANALYSIS.onnx --nodes A,B,... --to int16|float -o OUT.onnx [-i INPUT ...]\n"
    "                       [--shape NAME=...] [--seed N] [--quiet]\n"
    "  The analysis model with the named nodes (analysis or baseline names) promoted as the mixed-precision\n"
    "  what-if does it: int16 puts their quantizers on a 16-bit grid with the same clipping range (weights\n"
    "  re-quantized from the baseline's float weights, biases in float); float removes their Q/DQ (float\n"
    "  weights). Writes OUT.onnx (valid ONNX; QOperator nodes in DequantizeLinear -> op -> QuantizeLinear form)\n"
    "  and next to it OUT.promotion.json (nodes, to, predicted: model-output Cosine/SQNR/L1/MSE against the\n"
    "  baseline, which running OUT.onnx gives), OUT.nodes_to_exclude.json (ONNX Runtime's quantizer:\n"
    "  nodes_to_exclude, or TensorQuantOverrides for int16), OUT.modelopt_exclude.json (TensorRT Model\n"
    "  Optimizer style) and OUT.exclude_nodes.txt. Existing files are never overwritten (exit 1).\n";

static const char *const qr__cli_companions[] = { "promotion.json", "nodes_to_exclude.json", "modelopt_exclude.json",
                                                 "exclude_nodes.txt" };

static int qr_cli_promote(int argc, char **argv) {
    QrDeployArgs d = { 0 };
    int rc = qr__cli_take(&argc, argv, "--nodes --to", &d, qr__cli_usage_promote);
    if (rc) return rc;
    if (!d.nodes || !d.to || (strcmp(d.to, "int16") && strcmp(d.to, "float"))) {
        fprintf(stderr, "qreport: promote needs --nodes A,B and --to int16|float\n%s", qr__cli_usage_promote);
        return QR_EXIT_USAGE;
    }
    QrCliOpts o;
    rc = qr__cli_parse(argc, argv, &o, qr__cli_usage_promote, true);
    if (rc) return rc < 0 ? 0 : rc;
    if (!o.out_dir) { fprintf(stderr, "qreport: promote needs -o OUT.onnx\n%s", qr__cli_usage_promote); return QR_EXIT_USAGE; }
    /* OUT.onnx and its companions: none may exist */
    char out[4096], dir[4096], prefix[1024], paths[5][4096];
    snprintf(out, sizeof out, "%s", o.out_dir);
    QrArena ar = { 0 };
    snprintf(dir, sizeof dir, "%s", qr_path_dirname(&ar, out));
    const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
    size_t bl = strlen(base);
    snprintf(prefix, sizeof prefix, "%.*s.", (int)(bl > 5 && !strcmp(base + bl - 5, ".onnx") ? bl - 5 : bl), base);
    snprintf(paths[0], sizeof paths[0], "%s", out);
    for (int k = 0; k < 4; k++)
        if (snprintf(paths[k + 1], sizeof paths[k + 1], "%s/%s%s", dir, prefix, qr__cli_companions[k]) >= (int)sizeof paths[k + 1]) {
            qr_arena_free(&ar);
            return qr__cli_fail(qr_errf(QR_ERR_INVALID, "-o %s: path too long", out));
        }
    for (int k = 0; k < 5; k++)
        if (access(paths[k], F_OK) == 0) {
            qr_arena_free(&ar);
            return qr__cli_fail(qr_errf(QR_ERR_INVALID, "%s exists; promote never overwrites (give a new -o)", paths[k]));
        }
    QrGraph *b = NULL, *a = NULL;
    QrTensor *in = NULL;
    rc = qr__cli_begin(argc, argv, qr__cli_usage_promote, true, false, &o, &b, &in);
    if (rc >= 0) { qr_arena_free(&ar); return rc; }
    QrStatus st = qr__cli_load_second(&o, o.model2, b, in, &a);
    QrSession se = { 0 };
    bool have_se = false;
    int *nodes = NULL, n = 0;
    if (st == QR_OK) { st = qr__cli_session_open(&o, &se, b, a, in); have_se = st == QR_OK; }
    if (st == QR_OK) st = qr_promote_nodes(&se, d.nodes, &ar, &nodes, &n);
    if (st == QR_OK) st = qr_mkdir_p(dir);
    QrPromoteResult r = { 0 };
    if (st == QR_OK) st = qr_promote_model(&se, nodes, n, !strcmp(d.to, "float"), out, &r);
    if (st == QR_OK) st = qr_promote_write_lists(&r, dir, prefix, base);
    if (st != QR_OK) for (int k = 0; k < 5; k++) remove(paths[k]);    /* nothing half-written */
    if (st == QR_OK && !o.quiet) {
        printf("promoted %d node%s to %s: predicted output Cosine %.6f, SQNR %.2f dB, L1 %.6g", n, n == 1 ? "" : "s", d.to,
               r.predicted.cosine, r.predicted.sqnr, r.predicted.l1);
        if (r.n_not) printf(" (%d quantizer%s not promoted, see %s%s)", r.n_not, r.n_not == 1 ? "" : "s", prefix, "promotion.json");
        printf("\nwrote %s and %s/%s{promotion,nodes_to_exclude,modelopt_exclude}.json, %sexclude_nodes.txt\n", out, dir,
               prefix, prefix);
    }
    qr_promote_free(&r);
    if (have_se) qr_session_close(&se);
    if (a) { qr_graph_free(a); free(a); }
    qr__cli_release(b, in);
    qr_arena_free(&ar);
    return st == QR_OK ? QR_EXIT_OK : qr__cli_fail(st);
}
