/* analysis/compare — per-layer comparison of the analysis model against the
 * baseline (compare_per_layer_out), with the local (shadow) error of each layer,
 * and the model-output metrics of any quantizer configuration. */
#ifndef QR_COMPARE_H
#define QR_COMPARE_H

/* The measured parts of one row's local error. */
typedef struct QrErrSplit {
    bool has;                /* measured (float or single-model baseline, the layer's elements compared) */
    uint8_t parts;           /* quantizers the layer has: QR_SPLIT_W | QR_SPLIT_I | QR_SPLIT_O */
    int64_t n;               /* elements */
    double sw, si;           /* sum of (y - x)^2: weight-only run, input-only run (0 without such quantizers) */
    double s_round, s_clip;  /* output-only run: over the elements its quantizer does not clip / clips */
    int64_t n_clip;          /* elements whose output-quantizer input lies outside the quantizer's range */
    double s_noise;          /* sum over the elements not clipped of step^2 / 12 */
    double su2;              /* per-tensor output quantizer: sum of (input / step)^2 over the elements */
    double steps_med;        /* per-channel output quantizer: median over channels of RMS / step (NaN: none) */
    int w_quant, i_quant;    /* the layer's (first) weight quantizer, input quantizer (twin), -1 */
    int w_channel;           /* weight quantizer's output channel with the largest squared error, -1 */
    double w_channel_share;  /* its share of the weight's squared quantization error */
} QrErrSplit;
#define QR_SPLIT_W 1
#define QR_SPLIT_I 2
#define QR_SPLIT_O 4

typedef struct QrLayerRow {
    int match;               /* index in session->m */
    QrMetrics m;             /* analysis value vs baseline value (inherited + own error) */
    QrMetrics local;         /* shadow: the layer fed with the baseline's inputs (own error only) */
    bool has_m, has_local;
    /* --mode both: int-mode vs sim-mode integer values of this layer's quantizer */
    bool has_lsb;
    int64_t lsb_n, lsb_diff; /* elements, elements that differ */
    int64_t lsb_max;         /* largest difference in LSB */
    int64_t lsb_ties;        /* differing elements at a rounding tie */
    /* Error split (docs/REPORT.md "Error split"): the local error measured in parts, each by a run of
     * the twin fed like the shadow run with only that part's quantizers on. Sums over the row's
     * elements (data sets: pooled, then these hold the pooled sums). */
    QrErrSplit sp;
} QrLayerRow;

typedef struct QrCompare {
    int n;                   /* rows, one per matched baseline node output (baseline topological order) */
    QrLayerRow *rows;
    QrMetrics out;           /* model output(s), all outputs concatenated */
    int first_drop;          /* first row whose Cosine falls below the threshold given, -1 if none */
    int64_t split_exec;      /* nodes the error split's runs executed (0: no split measured; data sets: over every sample) */
} QrCompare;

#ifdef QR_TESTING
/* Runs `exec` (the analysis model as given for sim mode, or its integer lowering
 * for int mode; same value indices as session->a) and compares every matched
 * value with the baseline; then the shadow run on the twin for local errors.
 * Calls qr_session_run_baseline if needed. */
QR_TESTAPI QrStatus qr_compare_run(QrSession *s, const QrGraph *exec, double cos_threshold, QrCompare *c);
#endif
static void qr_compare_free(QrCompare *c);
/* --mode both: attaches the int-vs-sim integer differences (quant/lower) to the
 * rows whose analysis value is quantized by the compared quantizer. */
static void qr_compare_attach_lsb(QrCompare *c, const QrSession *s, const QrLowerCmp *lc);
/* Runs the chosen mode ("sim", "int" or "both"; NULL = sim) and fills c. */
static QrStatus qr_compare_mode(QrSession *s, const char *mode, double cos_threshold, QrCompare *c);
/* The same; when the mode runs the analysis model as given (sim, both), that run also calls
 * `extra` on every value it produces (runall: the analysis model's statistics from the same
 * run) and *extra_done is set. */
static QrStatus qr_compare_mode_ex(QrSession *s, const char *mode, double cos_threshold, QrTapFn extra, void *extra_user,
                                   bool *extra_done, QrCompare *c);
/* The same in steps, for a caller that runs the two model runs next to other work:
 * qr_compare_prepare fills c's rows and a plan (*out; lowering the model for int / both
 * modes); qr_compare_step(plan, 0) runs the model (then the output metrics), step 1 the
 * shadow run, in either order or at the same time, and each step then takes the error split's
 * runs still left, one at a time (so two threads stay busy to the end); qr_compare_finish(plan,
 * status of the steps) completes c (the split's rows; first drop; both mode's integer-vs-sim
 * comparison), frees the plan and
 * returns the final status (c freed on failure). On a prepare failure c is freed, no plan. */
typedef struct QrCmpPlan QrCmpPlan;
static QrStatus qr_compare_prepare(QrSession *s, const char *mode, double cos_threshold, QrTapFn extra, void *extra_user,
                                   bool *extra_done, QrCompare *c, QrCmpPlan **out);
static QrStatus qr_compare_step(QrCmpPlan *plan, int k);
static QrStatus qr_compare_finish(QrCmpPlan *plan, QrStatus st);
#ifdef QR_TESTING
/* Test-only, process-wide: qr_compare_step calls, [0] the full runs (the model compared), [1]
 * the shadow runs (with their error split), atomic. Tests count how often a command compares each
 * sample (issue 30: once). */
QR_TESTAPI extern int64_t qr_compare_steps[2];
#endif
/* c->first_drop: the first row of a verified pair whose Cosine is below cos_threshold, -1. */
static void qr_compare_first_drop(const QrSession *s, QrCompare *c, double cos_threshold);
/* Per-sample consumers of a data-set comparison (analysis/dataset's taps): tap sees every value
 * of the full run (sim mode only: in int / both modes the run's values are the lowering's, and
 * *tap_done stays false); match sees each compared pair of the full run as float32: the
 * baseline's x and the analysis model's y (dequantized as the comparison reads it), n values. */
typedef QrStatus (*QrCmpMatchFn)(void *user, int match, const float *x, const float *y, int64_t n);
typedef struct QrCmpHooks {
    QrTapFn tap;
    QrCmpMatchFn match;
    void *user;
    bool tap_done;               /* set: the tap saw the full run */
    /* Optional, per match (qr_compare_ds_run_full only): the matches whose pairs match wants; the
     * full run then taps only their values and computes no row or output metrics, and both it and
     * the baseline run compute the graph only up to those values (QrBaseRunOpts.want). */
    const uint8_t *pairs_of;
} QrCmpHooks;
/* Data sets: one plan for many inputs. qr_compare_ds_open prepares the comparison once (rows,
 * taps, the integer lowering of int / both modes; hooks optional, NULL for none; base optional: what
 * every sample's baseline run feeds, qr_session_run_baseline_ex);
 * qr_compare_ds_run compares the session's current inputs (point it at each sample with
 * qr_session_next_inputs): the baseline run, the full and shadow runs, c's rows refilled, acc and
 * outs handed out (acc[2·match] of the full run, acc[2·match + 1] of the shadow run, written only
 * for rows that get metrics; outs: the full run's n_outputs graph outputs, owned by the
 * caller); qr_compare_ds_close frees the plan (c stays the caller's). Per sample only the model
 * runs (and both mode's integer-vs-sim runs) happen. */
static QrStatus qr_compare_ds_open(QrSession *s, const char *mode, QrCmpHooks *hooks, const QrBaseRunOpts *base, QrCompare *c,
                                   QrCmpPlan **out);
static QrStatus qr_compare_ds_run(QrCmpPlan *p, QrMetricAcc *acc, QrTensor *outs);
/* The same without the shadow run (and without both mode's integer-vs-sim runs): the baseline
 * and the full run only, for consumers of the full run's pairs (hooks). Rows get no local_*. */
static QrStatus qr_compare_ds_run_full(QrCmpPlan *p, QrMetricAcc *acc, QrTensor *outs);
static void qr_compare_ds_close(QrCmpPlan *p);
/* Error split of a row, derived from its sums: the four parts (MSE), clip_frac, steps_rms,
 * noise_ratio (NaN where undefined) and the dominant part's name ("" when none: no error). */
typedef struct QrSplitView {
    double err_w, err_i, err_round, err_clip, clip_frac, steps_rms, noise_ratio;
    const char *dominant;    /* "weight", "input", "output_round", "output_clip", or "" */
    int dom;                 /* 0..3 in that order, -1 */
} QrSplitView;
static bool qr_compare_split(const QrErrSplit *sp, QrSplitView *v);
/* compare_per_layer_out.txt/.csv into dir. */
static QrStatus qr_compare_write(const QrSession *s, const QrCompare *c, const char *dir);


/* A quantizer's settings in words: "int8 per-tensor 0.0123" etc. (arena copy). */
static const char *qr_compare_describe_quantizer(QrArena *a, const QrGraph *g, const QrQuantizer *q, const char **dtype);

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
static void qr_compare_num(QrTable *t, int row, int col, double v, bool csv);
static QrStatus qr_compare_table(const QrSession *s, const QrCompare *c, bool csv, bool with_lsb, QrTable *t);
#endif
