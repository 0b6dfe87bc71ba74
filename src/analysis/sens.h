/* analysis/sens — quantization sensitivity (one quantizer or one node's quantizers
 * toggled, metrics at the model outputs), incremental re-execution from a cached
 * run, and the cumulative-error curves of several quantization settings. */
#ifndef QR_SENS_H
#define QR_SENS_H

typedef enum QrSensType { QR_SENS_ACTIVATION, QR_SENS_WEIGHT, QR_SENS_BOTH } QrSensType;

typedef struct QrSensRow {
    int node;                /* twin node owning the quantizers (-1: a graph input) */
    const char *name;        /* op_name: the node's name, or the input's name */
    const char *op_type;     /* op type of the source node it stands for */
    const char *dtype;       /* integer type(s) of its quantizers: "int8", "uint8+int8" (distinct, '+'-joined) */
    QrSensType type;
    int n_q;
    int q[8];                /* twin quantizers toggled (session->qt) */
    QrMetrics m;             /* model output(s) vs baseline */
    int64_t n_exec;          /* nodes this row re-executed */
    int id;                  /* the row's index before sorting (the same rows in the same order for every input) */
} QrSensRow;

/* --node-type: which rows a sensitivity pass computes (hmct-debugger's node_type). */
typedef enum QrNodeType { QR_NODE_TYPE_ALL, QR_NODE_TYPE_ACTIVATION, QR_NODE_TYPE_WEIGHT, QR_NODE_TYPE_NODE } QrNodeType;

typedef struct QrSensOpts {
    bool off_one;            /* every quantizer on except the row's (default: only the row's on) */
    QrMetricKind metric;     /* sort key (default L1) */
    bool reverse;
    bool full_reruns;        /* testing: re-run the whole graph for every row */
    const char *nodes;       /* --nodes A,B: only the rows of these nodes / quantizers (NULL: all; select.h) */
    QrNodeType node_type;    /* --node-type (default: every row) */
    const char *rank_output; /* --rank-output NAME: metrics at this graph output alone (NULL: all outputs) */
    /* The grouped ranking (large models; sens.c says how): 0 = when a pass has at least
     * QR_SENS_GROUP_AUTO rows (one-on only; not with reverse, full_reruns or a data set), 1 = whenever it can,
     * -1 = never (--all-rows: every row evaluated). */
    int grouped;
    int group_top;           /* rows the grouped ranking ranks exactly (0: QR_SENS_GROUP_TOP) */
} QrSensOpts;
#define QR_SENS_GROUP_AUTO 100
#define QR_SENS_GROUP_TOP 10

typedef struct QrSensResult {
    QrArena arena;
    int n;
    QrSensRow *rows;         /* most sensitive first (reversed with --reverse): one-on by opts.metric worst first,
                              * off-one by gain over the all-on reference (qr_sens_gain) largest first */
    QrSensOpts opts;
    QrMetrics reference;     /* the configuration rows start from: all off (one-on) or all on (off-one) */
    int64_t n_exec;          /* node executions of the whole pass (reference run included) */
    int64_t n_full;          /* rows × graph nodes: what full re-runs would have cost */
    int n_skipped;           /* quantizers skipped: toggling them cannot reach an output */
    /* The grouped ranking: rows holds the n_top most sensitive rows exactly (first in ranking
     * order) and the other rows it evaluated on the way (exact metrics, but rows it did not
     * evaluate may rank between them); n_unranked rows were not evaluated. */
    bool grouped;
    int n_top, n_unranked;
    int n_groups;            /* group evaluations (not rows) */
    int n_bound_viol;        /* evaluated items more sensitive than the group holding them (the bound failed) */
    /* qr_sens_run_keep on a pass that ran every row (not grouped): each row's model-output accumulator
     * by row id ([n], malloc'd) and the reference's, which a data-set pass over a set holding this
     * sample takes instead of running the rows again (qr_sens_set_run's done). NULL: not kept. */
    QrMetricAcc *acc;
    QrMetricAcc ref_acc;
} QrSensResult;

/* --node-type activation|weight|node. */
static QrStatus qr_sens_node_type_parse(const char *s, QrNodeType *out);
static QrStatus qr_sens_run(QrSession *s, const QrSensOpts *o, QrSensResult *r);
/* qr_sens_run, and when it runs every row (not grouped: fewer than QR_SENS_GROUP_AUTO rows, or
 * o->grouped < 0) their accumulators kept in r (r->acc) for a data-set pass over samples that
 * include this one. A grouped pass keeps none: on MobileNetV2 (135 rows) running every row here
 * cost as much as the data-set pass then saved. */
static QrStatus qr_sens_run_keep(QrSession *s, const QrSensOpts *o, QrSensResult *r);
#ifdef QR_TESTING
/* The reference run of qr_sens_run ahead of time (tests: the result is the same as qr_sens_run's own):
 * kept in the session (its input cache, s->input_cache) until a qr_sens_run with the same mode takes it, or
 * qr_sens_reference_free / qr_session_close. Fails on run errors / out of memory. */
QR_TESTAPI QrStatus qr_sens_reference(QrSession *s, const QrSensOpts *o);
#endif
static void qr_sens_reference_free(QrSession *s);
static void qr_sens_free(QrSensResult *r);
/* Off-one: how much better the model output gets (in opts.metric) with the row's quantizers off
 * than with every quantizer on; rows rank by it, largest first. */
static double qr_sens_gain(const QrSensResult *r, const QrSensRow *row);
static const char *qr_sens_type_name(QrSensType t);
/* Row indices of r, most sensitive first whatever --reverse did to the listing (one-on: largest
 * badness first; off-one: largest gain first); ties keep the listing order. idx has r->n entries. */
static void qr_sens_order(const QrSensResult *r, int *idx);
/* The k-th most sensitive row (k from 0; qr_sens_order), NULL past the end. */
static const QrSensRow *qr_sens_top(const QrSensResult *r, int k);
/* sensitive_ops.txt/.csv/.json into dir. */
static QrStatus qr_sens_write(const QrSession *s, const QrSensResult *r, const char *dir);

#ifdef QR_TESTING
/* Runs the twin under a mask (NULL = all on) and returns the model-output
 * metrics; per_match (optional, per session match) receives the metrics of
 * every matched value under the mask (KL only when per_match_kl: it costs two exp
 * per element, more than the rest together). */
QR_TESTAPI QrStatus qr_sens_eval_mask(QrSession *s, const bool *enabled, QrMetrics *out, QrMetrics *per_match,
                                  bool per_match_kl);
#endif

/* Cumulative error: per matched value, the similarity under weight-only,
 * activation-only, full quantization and "all but the top-k sensitive nodes"
 * for each k of topk (sens gives the ranking; may be NULL). */
typedef struct QrAccum {
    int n_settings;
    const char *setting[32];     /* column names */
    char *topk_names;            /* owned, malloc'd: the all_but_topK names setting[3..] point into (a copy by
                                  * value moves it with the struct; qr_accum_free frees it) */
    double *val;                 /* [match][setting], the chosen metric; NAN when not comparable */
    QrMetrics out[32];           /* model output per setting */
    QrMetricKind metric;
} QrAccum;
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_accum_run(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk, QrMetricKind metric,
                             QrAccum *a);
#endif
/* The same plus one setting per user node set (--quantize-nodes / --non-quantize-nodes;
 * select.h), after the all-but-top-k ones; sets may be NULL. */
struct QrAccSets;
static QrStatus qr_accum_run_sets(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk,
                                  const struct QrAccSets *sets, QrMetricKind metric, QrAccum *a);
/* The same with the full setting (every quantizer on) measured by another run of the same
 * computation — runall's per-layer comparison of a model whose twin is a plain copy, in sim mode:
 * per match its metrics (per_match[m.n], as the cumulative error's whole run measures them; n = 0:
 * not measured) and the model-output metrics — instead of a run of its own when the settings run whole
 * (s->no_incremental; the incremental form measures it with the all-on reference's run). */
typedef struct QrAccFull {
    const QrMetrics *per_match;
    QrMetrics out;
} QrAccFull;
static QrStatus qr_accum_run_full(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk,
                                  const struct QrAccSets *sets, QrMetricKind metric, const QrAccFull *full, QrAccum *a);
static void qr_accum_free(QrAccum *a);
static QrStatus qr_accum_write(const QrSession *s, const QrAccum *a, const char *dir);

/* ==== over a data set (sensitivity --data, runall --data) ===============================
 * Sensitivity and the cumulative-error curves run on k samples of a data set (the k worst by
 * the comparison pass; docs/DATASET.md): every row's output metrics are pooled over them (as if
 * the samples' outputs were concatenated: exact sums, analysis/dsacc), rows rank by the pooled
 * metrics, and each row's rank on every sample alone is kept (rank stability). The curves hold
 * per matched value and setting the pooled metric and the mean, 5th and 95th percentiles of the
 * per-sample values (hmct's average_mode). The all_but_topK settings use the pooled ranking. */
struct QrDsSet;
typedef struct QrSensSet {
    QrSensResult r;          /* rows, metrics pooled, sorted by them (reference pooled too) */
    int k;                   /* samples the pass ran on */
    int *smp;                /* [k] their indices in the set, worst first */
    const char *const *names;    /* the set's sample names (borrowed) */
    QrMetricKind smp_metric; /* how the samples were ranked */
    int *rank;               /* [row id * k + j]: the row's rank (1 = most sensitive) on sample j alone */
    int n_top5_same;         /* samples whose top 5 rows (as a set) are the pooled top 5 */
    int done_j;              /* the sample (smp[done_j]) whose rows came from qr_sens_set_run's done (-1: none) */
    bool have_acc;
    QrAccum acc;             /* settings; val = the pooled metric [match][setting] */
    double *mean, *p05, *p95;    /* [match][setting] over the k samples (NaN when a sample has no value) */
} QrSensSet;

/* A sample of the set as the pass over it left it (runall --data keeps the k worst): its
 * tensors and the baseline's outputs on them (s->base_out's layout), so that sensitivity does not
 * read it again, and its rows, which measure only the model outputs, need no baseline run. Owned
 * by the pass; qr_sens_set_run borrows them. */
typedef struct QrSensSample {
    int k;                       /* its index in the set */
    QrTensor *in;                /* [the set's n_inputs] */
    QrTensor *base_out;          /* [s->b->n_outputs] */
} QrSensSample;

/* Runs sensitivity (o) and, when topk is given, the cumulative error (acc_metric; sets
 * optional) on samples smp[k] of ds (ref: the first sample's inputs, for the shape check).
 * A sample among kept[n_kept] (optional) is taken from there: not read, and its rows run only
 * their variants (the reference configuration and the rows) against the kept outputs; the curves,
 * which compare every matched value, run its baseline. The session's inputs are restored to
 * ref's owner's (s->inputs on entry) at the end and its baseline values dropped (kept ones are
 * left to their owner). done (optional): sample done_k's rows as qr_sens_run_keep left them with
 * the same options o (runall's sensitivity stage on the worst sample): taken, the same numbers as
 * running them (tests/test_dataset_sens.c `test_dataset_sens_runall`); ignored without its
 * accumulators or with other options. */
static QrStatus qr_sens_set_run(QrSession *s, const QrSensOpts *o, const struct QrDsSet *ds, const int *smp, int k,
                                QrMetricKind smp_metric, const int *topk, int n_topk, const struct QrAccSets *sets,
                                QrMetricKind acc_metric, const QrSensSample *kept, int n_kept, const QrSensResult *done,
                                int done_k, QrSensSet *out);
/* sensitive_ops.txt/.csv/.json (with the rank-stability columns) and accumulated_error.csv
 * (pooled, then _mean/_p05/_p95 per setting) into dir. */
static QrStatus qr_sens_set_write(const QrSession *s, const QrSensSet *ss, const char *dir);
static void qr_sens_set_free(QrSensSet *ss);
/* --sens-samples' default (docs/DATASET.md says why). */
#define QR_SENS_SAMPLES_DEFAULT 4

/* runall --data: the per-sample mean of the curves with the p05-p95 band, as a PNG at path
 * (analysis/dataset's qr_ds_runall_sens runs the pass and writes it). */
static QrStatus qr_sens_set_plot_curves(const QrSession *s, const QrSensSet *ss, const char *path);
static void qr_sens_set_json(QrJson *j, const QrSensSet *ss);
static void qr_sens_set_html(QrHtml *h, const QrSensSet *ss, const char *dir);

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
static void qr_sens_num(char *buf, size_t n, double v, const char *fmt);
#endif
