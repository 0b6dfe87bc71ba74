/* analysis/match — pairs each baseline compute node's output with the analysis
 * value its consumers see (after the node's Q→DQ). Methods, in priority order:
 * node name, tensor name (incl. ONNX Runtime's _QuantizeLinear_Output /
 * _DequantizeLinear_Output renames), structure (data-flow propagation from the
 * graph inputs that skips Q/DQ/Identity/Cast and folds exporter patterns:
 * QLinear ops and ConvInteger chains, QAT Conv→Div→Add(→BN), fused Conv+Relu). */
#ifndef QR_MATCH_H
#define QR_MATCH_H

typedef enum QrMatchMethod { QR_MM_NONE, QR_MM_INPUT, QR_MM_NODE_NAME, QR_MM_TENSOR_NAME, QR_MM_STRUCTURE } QrMatchMethod;

/* Whether a pair is proven: with every quantizer of the analysis model disabled, its value
 * must reproduce the baseline value within QR_EQUIV_TOL of the baseline value's range
 * (analysis/session.c, qr_session_run_baseline). Only verified pairs make headlines. */
typedef enum QrMatchVerify { QR_MV_NONE, QR_MV_VERIFIED, QR_MV_UNVERIFIED } QrMatchVerify;
#define QR_EQUIV_TOL 1e-5

typedef struct QrMatch {
    int b_node, b_value;     /* baseline node and its output value */
    int a_node, a_value;     /* analysis node computing the op, and the value consumers see (-1: unmatched) */
    int b_twin;              /* baseline node computing a_node's op (differs from b_node when an activation was fused) */
    int a_op;                /* analysis node computing the baseline node's op (e.g. the Conv when the pair's value
                              * is after its BatchNormalization), -1 */
    int a_quant;             /* quantizer on a_value (index in the analysis quant table) or -1 */
    bool a_is_int;           /* a_value holds integers: dequantize with a_quant to compare */
    QrMatchMethod method;
    const char *note;        /* e.g. "fused into <node>" for a baseline node without counterpart */
    QrMatchVerify verify;    /* NONE: no pair, or not checked (no equivalence run) */
    double equiv_rel;        /* max |baseline - analysis| / range(baseline) with every quantizer off (NAN: not checked) */
} QrMatch;

typedef struct QrMatchResult {
    QrArena arena;
    int n;                   /* one per baseline compute node, baseline topological order */
    QrMatch *m;
    int n_unmatched_a;       /* analysis compute values no baseline node maps to */
    int *unmatched_a;        /* analysis node indices */
    const char **unmatched_why;  /* per unmatched_a: why it has no row of its own */
    bool verified_run;       /* the equivalence verification ran (statuses are meaningful) */
    int n_verified, n_unverified, n_repaired;  /* pairs proven / not proven / moved to their equivalent value */
    const char *form;        /* the baseline form (qr_session_baseline_form), set by the session; NULL: not known */
} QrMatchResult;

/* Also records on qa the activations that quantizers implement (fused Relu/Clip). */
static QrStatus qr_match(const QrGraph *b, const QrGraph *a, QrQuantTable *qa, QrMatchResult *out);
static void qr_match_free(QrMatchResult *r);
static const char *qr_match_method_name(QrMatchMethod m);
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
/* Frees what the check allocated. */
static void qr_match_equiv_free(QrEquivResult *r);
/* One-paragraph verdict of the equivalence check, written into out (returns out->text; a caller
 * may pass a compound literal, &(QrVerdict){0}, that lives as long as its enclosing block). */
typedef struct QrVerdict { char text[1024]; } QrVerdict;
static const char *qr_match_equiv_verdict(const QrGraph *b, const QrMatchResult *m, const QrEquivResult *r, QrVerdict *out);
/* Writes match_table.txt and .csv into dir (with the equivalence column when eq != NULL). */
static QrStatus qr_match_write(const QrGraph *b, const QrGraph *a, const QrMatchResult *r,
                               const QrEquivResult *eq, const char *dir);
/* Is this baseline node a "compute" node that gets a row (not Constant/Identity/shape arithmetic)? */
static bool qr_match_is_compute(const QrGraph *g, int node);
/* A pair headlines may use: matched and proven equivalent. */
static bool qr_match_verified(const QrMatch *m);
static const char *qr_match_verify_name(QrMatchVerify v);


/* Dequantizes a value of the analysis model (int -> float) with quantizer q: into a new tensor
 * (out), or into y (x->numel floats, every one written; the comparison's taps reuse one buffer). */
static QrStatus qr_match_dequantize_value(const QrGraph *a, const QrQuantizer *q, const QrTensor *x, QrTensor *out);
static QrStatus qr_match_dequantize_into(const QrGraph *a, const QrQuantizer *q, const QrTensor *x, float *y);

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
static const char *qr_match_canon(const QrNode *n);
static bool qr_match_const_in(const QrGraph *g, const QrNode *n, int k);
static bool qr_match_isconst(const QrGraph *g, int v);
static bool qr_match_transparent(const QrNode *n);
static int qr_match_visible_in(const QrGraph *a, const QrQuantTable *t, int v, int *quant, bool *is_int);
static bool qr_match_weight_consistent(const QrGraph *a, const QrQuantizer *q, const QrTensor *w);
static bool qr_match_in(const char *op, const char *const *list);
#endif
