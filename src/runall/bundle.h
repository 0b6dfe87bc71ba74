/* runall/bundle — renders the runall bundle (docs/REPORT.md layout) from what runall/
 * computed (a QrBundle): manifest.json (with the input files' sha256, hashed on a helper
 * thread), the plots, the graph overlays, and the pieces of summary.json and index.html that
 * show the core analyses (runall's driver puts the pages together); it runs no analysis and
 * calls no module's section writer. Also `qreport compare`'s own page. File names: report/files.h. */
#ifndef QR_BUNDLE_H
#define QR_BUNDLE_H

/* One runall's results and bookkeeping: runall/ fills it stage by stage (ok[stage] says which
 * stage succeeded — its results are valid —, fail_* why the others failed); the writers below
 * only read it. */
#define QR_BUNDLE_MAX_FAIL 32

/* runall's stages, in the order its driver runs them (runall/runall.c: the table qr__ra_stages
 * says what each needs, runs, writes and which summary.json / index.html sections it has). */
typedef enum QrStage {
    QR_STAGE_PREPARE,            /* the session, the baseline run (--data: the pass over the set) */
    QR_STAGE_DUMP,               /* --dump: the device dump comparison */
    QR_STAGE_MATCH,              /* match table; with it, side by side, the equivalence check and early runs */
    QR_STAGE_CHECK,
    QR_STAGE_PROFILE,
    QR_STAGE_COMPARE,
    QR_STAGE_TOKENS,
    QR_STAGE_REPRO,
    QR_STAGE_SENS,
    QR_STAGE_ACCUM,
    QR_STAGE_WEIGHTS,
    QR_STAGE_ADVISOR,
    QR_STAGE_WHATIF,
    QR_STAGE_DEMOTE,
    QR_STAGE_EMIT,
    QR_STAGE_DIST,
    QR_STAGE_FRAG,
    QR_STAGE_BADCASE,
    QR_STAGE_DATASET,
    QR_STAGE_DS_SENS,
    QR_STAGE_GEN,
    QR_STAGE_PLOTS,
    QR_STAGE_GRAPH,
    QR_STAGE_REPORT,
    QR_STAGE_ZIP,
    QR_STAGE_N
} QrStage;

/* What the pages say about the run itself (runall/runall.c fills it from its options). */
typedef struct QrBundleRun {
    const char *cmdline;             /* for the manifest */
    const char *const *input_paths;  /* files the inputs came from (NULL entries: random) */
    const char *const *input_sha256; /* optional, per input path: its sha256 (hex) as read (QrRunallOpts') */
    int n_input_paths;
    bool random_input;               /* no -i/--data: a deterministic random input was used */
    const char *const *warnings;     /* warnings from loading (manifest) */
    int n_warnings;
    double cos_threshold;            /* per-layer "similarity drops" threshold */
} QrBundleRun;

typedef struct QrBundle {
    QrBundleRun run;
    QrDsRunall dsr;              /* --data: the comparison over the whole set (analysis/dataset) */
    QrSensSet dss;               /* --data: sensitivity and cumulative error over the worst samples (analysis/sens) */
    const QrTensor *inputs;
    QrSession se;
    QrArena arena;
    char dir[4096];              /* staging folder */
    QrProgress prog;
    bool ok[QR_STAGE_N];         /* the stage ran and succeeded */
    QrWeightCmp w;
    QrAdvice adv;
    QrWhatIf wi;
    QrDistSet dist;
    QrEquivResult eq;            /* valid when eq.max_abs is set (the check frees it when it fails) */
    QrCompare cmp;
    QrSensResult sens;
    QrAccum acc;
    QrAccSets acc_sets;          /* --quantize-nodes / --non-quantize-nodes (acc's column names point here) */
    QrCheck chk;                 /* the structure check's findings (model_check_result.txt, the HTML section) */
    QrGenResult gen;             /* --generate N (analysis/generate) */
    QrTokAcc *tok;               /* per graph output: its tokens when it is a logits output (analysis/tokens), else NULL */
    QrMetrics *tok_m;            /* per graph output: its metrics against the baseline's, from the tokens stage (its
                                  * compare_outputs files and the HTML section's table: by the report stage a --data run's
                                  * later stages have dropped the baseline's outputs) */
    QrDeployRunall dep;          /* device dump, repro, emitted model (deploy/) */
    QrFragResult frag;           /* rounding fragility (analysis/frag) */
    const char *fail_name[QR_BUNDLE_MAX_FAIL], *fail_msg[QR_BUNDLE_MAX_FAIL];
    int n_fail;
    const char *sha_path[16], *sha_hex[16];   /* manifest: file hashes computed so far */
    int n_sha;
    /* The input files' hashes, computed by a helper thread while the analyses run. */
    struct { const char *path; char hex[2 * QR_SHA256_LEN + 1]; bool ok, known; } hash[2 + 128];   /* the models and up to 128 inputs (QrCliOpts.inputs) */
    int n_hash;
    pthread_t hash_th;
    bool hash_running;
} QrBundle;

/* dir/name inside the staging folder (in the bundle's arena). */
static const char *qr_bundle_path(QrBundle *bd, const char *name);
/* The verdict line (HTML, summary.json, terminal) and its level. */
static const char *qr_bundle_verdict(const QrBundle *bd, QrHtmlLevel *level);
/* The recommended action (HTML verdict and terminal summary), or NULL without sensitivity rows. */
static const char *qr_bundle_action(const QrBundle *bd);
/* The writers: each writes one file (or the plots/ folder) into the staging folder. */
static QrStatus qr_bundle_write_manifest(QrBundle *bd);   /* manifest.json (written again last, for the zip stage) */
static QrStatus qr_bundle_write_plots(QrBundle *bd);      /* the PNGs under plots/, rendered in parallel */
static QrStatus qr_bundle_write_graph(QrBundle *bd);      /* graph/: Model Explorer node data, annotated.onnx */
/* summary.json and index.html are written by runall's driver, which walks its stages' sections
 * between a page's beginning and end: qr_bundle_json_begin opens summary.json in j (schema,
 * verdict, baseline form, model output), qr_bundle_json_end adds failed_analyses and writes it;
 * qr_bundle_html_begin opens index.html in h (title, verdict box), qr_bundle_html_end adds the
 * "Files" section and writes it (reads the txt files the analyses wrote). Each section below
 * writes nothing when the stage it shows did not succeed. */
static void qr_bundle_json_begin(QrBundle *bd, QrJson *j);
static QrStatus qr_bundle_json_end(QrBundle *bd, QrJson *j);
static void qr_bundle_json_match(QrJson *j, QrBundle *bd);      /* "equivalence", "match" */
static void qr_bundle_json_sens(QrJson *j, QrBundle *bd);       /* "sensitivity" */
static void qr_bundle_json_layers(QrJson *j, QrBundle *bd);     /* "layers" (the per-layer comparison) */
static void qr_bundle_json_accum(QrJson *j, QrBundle *bd);      /* "accumulated_error_outputs" */
static void qr_bundle_json_whatif(QrJson *j, QrBundle *bd);     /* "what_if" */
static void qr_bundle_html_begin(QrBundle *bd, QrHtml *h);
static QrStatus qr_bundle_html_end(QrBundle *bd, QrHtml *h);
static void qr_bundle_html_tokens(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_generation(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_compare(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_graph(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_sensitivity(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_accumulated(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_advisor(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_demotion(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_whatif(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_weights(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_distributions(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_check(QrHtml *h, QrBundle *bd);
static void qr_bundle_html_match(QrHtml *h, QrBundle *bd);
/* The input files' hashes for the manifest: started on a helper thread, joined before use. */
static void qr_bundle_hash_start(QrBundle *bd, const QrGraph *b, const QrGraph *a);
static void qr_bundle_hash_join(QrBundle *bd);
/* Adds every file under dir/sub to the zip (names relative to dir). */
static QrStatus qr_bundle_add_tree(QrZip *z, const char *dir, const char *sub, QrArena *a);
/* Removes the staging folder and everything in it. */
static void qr_bundle_rmtree(const char *dir);

/* `qreport compare`'s page: compare_per_layer.html in dir (with plots/per_layer_metrics.png) —
 * the output verdict, the per-token section when tok is given (per graph output, logits outputs
 * with vocab != 0; the analysis outputs in se->keep_outs), runall's per-layer section and, when
 * advisor_txt is given, the advisor's findings (Horizon's compare_per_layer profiler.html). */
static QrStatus qr_bundle_compare_page(const QrSession *se, const QrCompare *cmp, const QrTokAcc *tok, const char *advisor_txt,
                                       const char *dir);

#endif
