/* analysis/session — one baseline/analysis pair prepared for every analysis:
 * quantizer tables, the match, the float twin that toggled runs execute, the
 * baseline float weights for integer weights, and the equivalence check. */
#ifndef QR_SESSION_H
#define QR_SESSION_H

typedef struct QrSession {
    const QrGraph *b, *a;    /* baseline and analysis model as loaded (shape-inferred; owned by the caller) */
    const QrTensor *inputs;  /* one per graph input (borrowed) */
    QrQuantTable qa;         /* quantizers of the analysis model as given (structure check, match) */
    QrMatchResult m;         /* baseline node output ⇄ analysis value */
    QrTwin tw;               /* what toggled runs execute (a copy of a for QDQ models) */
    QrQuantTable qt;         /* quantizers of the twin: the ones analyses toggle */
    const QrTensor **fw;     /* per qt quantizer: the baseline float weight that replaces it when disabled */
    QrTensor *fw_owned;      /* per qt quantizer: a derived float weight (e.g. transposed) that fw points to */
    int *fw_src;             /* per qt quantizer: the baseline value fw comes from, -1 */
    int n_weight_mismatch;   /* baseline float weights that do not quantize to the integer weights */
    int *vis;                /* per match: the twin value its consumers see, -1 when unmatched */
    int *vis_quant;          /* per match: qt quantizer to dequantize vis with when it holds integers, else -1 */
    /* Baseline values (qr_session_run_baseline): float32 copies, computed once. */
    QrTensor *base;          /* per match: the baseline node's output */
    QrTensor *base_out;      /* per baseline graph output */
    int64_t n_base_exec;     /* nodes executed by the baseline run */
    QrStepHook progress;     /* set by the caller: long analyses (sensitivity, cumulative error, what-if,
                              * distributions) report their steps through it */
} QrSession;

/* Prepares the pair (b and a shape-inferred on inputs). */
static QrStatus qr_session_open(QrSession *s, const QrGraph *b, const QrGraph *a, const QrTensor *inputs);
static void qr_session_close(QrSession *s);

/* Runs the baseline once and keeps its matched values and outputs. The models
 * must have the same number of graph outputs (compared by position). */
static QrStatus qr_session_run_baseline(QrSession *s);

/* Executor overrides for a mask over s->qt (enabled[i]; NULL = all enabled).
 * The arrays are per twin value, allocated by the caller (qr_session_overrides_alloc). */
typedef struct QrOverrides {
    int *alias;
    const QrTensor **subst;
    float *clamp_lo, *clamp_hi;
} QrOverrides;
static QrStatus qr_session_overrides_alloc(const QrSession *s, QrOverrides *o);
static void qr_session_overrides_free(QrOverrides *o);
static void qr_session_overrides(const QrSession *s, const bool *enabled, QrOverrides *o);
static QrRunOpts qr_session_run_opts(const QrOverrides *o, QrTapFn tap, void *user);

/* The twin value of match i as float32 (dequantized when it holds integers). */
static QrStatus qr_session_visible_f32(const QrSession *s, int i, const QrTensor *t, QrTensor *out);

/* Equivalence check: the twin with every quantizer disabled must reproduce the
 * baseline. Per match: max |baseline - analysis|; the verdict compares the model
 * outputs relative to their range. */
typedef struct QrEquivResult {
    double *max_abs;         /* per match (NAN when unmatched/unavailable) */
    double *ref_absmax;      /* per match: max |baseline| */
    int n_not_disabled;      /* quantizers that could not be disabled */
    int n_substituted;       /* integer weights replaced by the matched baseline float weight */
    int n_no_float_weight;   /* integer weights without a float counterpart (stay quantized) */
    QrTensor *fw_owned;      /* per qt quantizer: a derived float weight (e.g. transposed) that fw points to */
    int *fw_src;             /* per qt quantizer: the baseline value fw comes from, -1 */
    int n_weight_mismatch;   /* baseline float weights that do not quantize to the integer weights */
    char *substituted;       /* "  <integer weight> <- <baseline weight>\n" lines (malloc'd), or NULL */
    double worst_rel;        /* worst max_abs / ref_absmax over graph-output matches */
    int worst_match;
    bool equivalent;
} QrEquivResult;

static QrStatus qr_session_equivalence(const QrSession *s, QrEquivResult *out);
static void qr_equiv_free(QrEquivResult *r);
/* One-paragraph verdict of the equivalence check (thread-local buffer). */
static const char *qr_equiv_verdict(const QrGraph *b, const QrMatchResult *m, const QrEquivResult *r);

#endif
