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
    QrSensType type;
    int n_q;
    int q[8];                /* twin quantizers toggled (session->qt) */
    QrMetrics m;             /* model output(s) vs baseline */
    int64_t n_exec;          /* nodes this row re-executed */
} QrSensRow;

typedef struct QrSensOpts {
    bool off_one;            /* every quantizer on except the row's (default: only the row's on) */
    QrMetricKind metric;     /* sort key (default L1) */
    bool reverse;
    bool full_reruns;        /* testing: re-run the whole graph for every row */
} QrSensOpts;

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
} QrSensResult;

static QrStatus qr_sens_run(QrSession *s, const QrSensOpts *o, QrSensResult *r);
/* The reference run of qr_sens_run ahead of time (runall runs it next to other analyses):
 * kept in the session (s->sens_ref) until a qr_sens_run with the same mode takes it, or
 * qr_sens_reference_free / qr_session_close. Fails on run errors / out of memory. */
static QrStatus qr_sens_reference(QrSession *s, const QrSensOpts *o);
static void qr_sens_reference_free(QrSession *s);
static void qr_sens_free(QrSensResult *r);
/* Off-one: how much better the model output gets (in opts.metric) with the row's quantizers off
 * than with every quantizer on; rows rank by it, largest first. */
static double qr_sens_gain(const QrSensResult *r, const QrSensRow *row);
static const char *qr_sens_type_name(QrSensType t);
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
    const char *setting[16];     /* column names */
    double *val;                 /* [match][setting], the chosen metric; NAN when not comparable */
    QrMetrics out[16];           /* model output per setting */
    QrMetricKind metric;
} QrAccum;
static QrStatus qr_accum_run(QrSession *s, const QrSensResult *sens, const int *topk, int n_topk, QrMetricKind metric,
                             QrAccum *a);
static void qr_accum_free(QrAccum *a);
static QrStatus qr_accum_write(const QrSession *s, const QrAccum *a, const char *dir);

#endif
