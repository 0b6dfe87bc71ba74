/* runall/bundle — renders the runall bundle (docs/REPORT.md layout) from what runall/
 * computed (a QrBundle): summary.json, manifest.json (with the input files' sha256, hashed
 * on a helper thread), index.html, the plots, and the zip of the staging folder. It runs no
 * analysis. Also `qreport compare`'s own page. File names: report/files.h. */
#ifndef QR_BUNDLE_H
#define QR_BUNDLE_H

/* One runall's results and bookkeeping: runall/ fills it stage by stage (have_* says which
 * analysis succeeded, fail_* why the others failed); the writers below only read it. */
#define QR_BUNDLE_MAX_FAIL 32

/* What the pages say about the run itself (runall/runall.c fills it from its options). */
typedef struct QrBundleRun {
    const char *cmdline;             /* for the manifest */
    const char *const *input_paths;  /* files the inputs came from (NULL entries: random) */
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
    QrCheck chk;                 /* the structure check's findings (model_check_result.txt, the HTML section) */
    QrGenResult gen;             /* --generate N (analysis/generate) */
    bool have_gen;
    QrTokAcc *tok;               /* per graph output: its tokens when it is a logits output (analysis/tokens), else NULL */
    bool have_tok;
    QrDeployRunall dep;          /* device dump, repro, emitted model (deploy/) */
    QrFragResult frag;           /* rounding fragility (analysis/frag) */
    bool have_frag;
    const char *fail_name[QR_BUNDLE_MAX_FAIL], *fail_msg[QR_BUNDLE_MAX_FAIL];
    int n_fail;
    const char *sha_path[16], *sha_hex[16];   /* manifest: file hashes computed so far */
    int n_sha;
    /* The input files' hashes, computed by a helper thread while the analyses run. */
    struct { const char *path; char hex[2 * QR_SHA256_LEN + 1]; bool ok; } hash[2 + 128];   /* the models and up to 128 inputs (QrCliOpts.inputs) */
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
static QrStatus qr_bundle_write_summary(QrBundle *bd);    /* summary.json */
static QrStatus qr_bundle_write_manifest(QrBundle *bd);   /* manifest.json (written again last, for the zip stage) */
static QrStatus qr_bundle_write_html(QrBundle *bd);       /* index.html: reads the txt files the analyses wrote */
static QrStatus qr_bundle_write_plots(QrBundle *bd);      /* the PNGs under plots/, rendered in parallel */
static QrStatus qr_bundle_write_graph(QrBundle *bd);      /* graph/: Model Explorer node data, annotated.onnx */
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
