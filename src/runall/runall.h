/* runall/runall — `qreport runall`: every analysis in one pass over one prepared session
 * (analysis/, deploy/, the data set's hooks), each analysis's outcome recorded without stopping
 * the others, results kept in a QrBundle that runall/bundle renders into the staging folder,
 * zipped atomically (docs/REPORT.md layout). Not to be confused with deploy/hooks.c, the
 * deployment kit's stages that this driver calls. */
#ifndef QR_RUNALL_H
#define QR_RUNALL_H

typedef struct QrRunallOpts {
    const char *out_zip;         /* the bundle to write */
    const char *keep_dir;        /* also leave the unzipped bundle here (NULL: no) */
    const char *cmdline;         /* for the manifest */
    const char *const *input_paths;  /* files the inputs came from (NULL entries: random) */
    const char *const *input_sha256; /* optional, per input path: its sha256 (hex) from the bytes the CLI read (NULL entries:
                                      * the manifest hashes the file) */
    int n_input_paths;
    bool random_input;           /* no -i/--data: a deterministic random input was used */
    bool quiet;
    QrSensOpts sens;
    int topk[12], n_topk;
    double cos_threshold;        /* per-layer "similarity drops" threshold */
    const char *mode;            /* sim | int | both (NULL = sim) */
    const QrBadcase *badcase;    /* --data: the search whose worst sample `inputs` is (NULL: -i / random) */
    const char *const *plot_nodes;   /* --plot-nodes (NULL: top-5 sensitive weights and activations) */
    int n_plot_nodes;
    const char *const *warnings; /* warnings from loading (manifest) */
    QrDeployRunallOpts deploy;   /* --dump ... (deploy/) */
    const QrDsSet *dataset;      /* --data: also the comparison pooled over the whole set (dataset/; analysis/dataset) */
    QrMetricKind dataset_metric; /* its sample ranking */
    int sens_samples;            /* --sens-samples: sensitivity / cumulative error over that many worst samples (0: default) */
    const struct QrDsCompare *dataset_merged;   /* qreport merge: the comparison over the set, merged from parts */
    const QrTensor *dataset_worst;   /* with dataset_merged: the worst sample's tensors (inputs: the first sample's) */
    const struct QrDsStatRun *dataset_merged_stat;   /* with dataset_merged: both profiles merged from the parts */
    bool dataset_skip_bad;       /* --skip-bad-samples */
    int n_warnings;
    bool single_model;           /* b is a copy of a, run with every quantizer disabled (runall ANALYSIS.onnx) */
    /* knobs (README "Coming from hmct-debugger / QuantAnalysis"); zero = the default bundle */
    bool metric_given;           /* --metric given: the cumulative-error curves use sens.metric (else Cosine) */
    const char *quantize_nodes;      /* --quantize-nodes 'A;A,B': one curve per set, only those quantized */
    const char *non_quantize_nodes;  /* --non-quantize-nodes: one curve per set, all but those quantized */
    bool demote_int16;           /* --demote-int16: int16_demotion.* (analysis/demote) */
    bool no_fragility;           /* --no-fragility: no rounding-fragility stage (analysis/frag) */
    bool no_error_split;         /* --no-error-split: the comparisons measure no error split (analysis/compare) */
    bool have_channel_axis;      /* --channel-axis: the box plots' channel axis */
    int channel_axis;
    const char *labels;          /* --labels FILE: token ids for the logits outputs' NLL (analysis/tokens) */
    int generate;                /* --generate N: greedy decoding of N tokens with both models (analysis/generate) */
    QrGraph *gen_b, *gen_a;      /* with generate: b and a, which the decoding re-infers step by step (then back) */
    bool int16_integer;          /* --int16 integer: the session's int mode lowers 16-bit groups too */
    bool low_memory;             /* --max-memory: the session runs one execution at a time (qr_session_low_memory) */
    const char *const *kv_map;   /* --kv-map IN=OUT (analysis/generate) */
    int n_kv_map;
} QrRunallOpts;

typedef struct QrRunallResult {
    QrMetrics out;               /* model output metrics (analysis as given vs baseline) */
    bool have_out;
    bool emitted;                /* --emit-model: its stage succeeded (the folder holds analysis_promoted.onnx) */
    int n_failed;                /* analyses that failed (recorded in the manifest and HTML) */
    char summary[4096];          /* the terminal summary */
} QrRunallResult;

/* Runs everything on b/a (shape-inferred on inputs) and writes the bundle.
 * Fails (and leaves no bundle) only when the pair cannot be prepared or the
 * bundle cannot be written; a failing analysis is recorded and the rest go on. */
static QrStatus qr_runall_run(const QrGraph *b, const QrGraph *a, const QrTensor *inputs, const QrRunallOpts *o,
                              QrRunallResult *r);

#ifdef QR_TESTING
/* Fault injection, in test builds only (tests run runall in a child process: tests/test_cli.c's
 * qt_cli_faults): fail_stage, that analysis fails ("injected failure"); stop_stage, the process
 * stops (SIGSTOP) once that analysis has written its files; zip_fail_write, the Nth write step of
 * the zip fails; zip_stop_at / dir_stop_at, the process stops before the Nth write step of the
 * zip / of --keep-dir's folder (report/zip's hooks); fail_one_pass, a one-input runall's pass
 * (qr__ra_one) fails after its runs. NULL / 0: off; f NULL: all off. */
typedef struct QrRunallFaults {
    const char *fail_stage, *stop_stage;
    int zip_fail_write, zip_stop_at, dir_stop_at;
    bool fail_one_pass;          /* one input: its pass over the one-sample set fails once it has run */
} QrRunallFaults;
QR_TESTAPI void qr_runall_test_faults(const QrRunallFaults *f);
#endif

#endif
