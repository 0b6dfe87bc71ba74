/* analysis/whatif — mixed-precision what-if: the analysis model re-run with its top-k
 * sensitive nodes promoted to a 16-bit grid (same clipping range) or kept in float, the
 * model-output metrics for each k, and ready-to-use node / tensor lists (mixed_precision.json). */
#ifndef QR_WHATIF_H
#define QR_WHATIF_H

#define QR_WHATIF_TARGET_COSINE 0.999

/* Promotion of one quantizer: 8-bit (or 4/2-bit) → 16-bit of the same signedness with the
 * same clipping threshold: scale' = scale · qmax / qmax16, zp' = round(zp · qmax16 / qmax)
 * (uint8 → uint16 maps the range exactly: scale/257, zp·257; int8 → int16 keeps
 * scale·127 = scale'·32767, losing 1/255 of a step at the negative end). Weights stored
 * as integers are re-quantized from the matched float weight. Scale / zero-point values
 * that several quantizers read (ORT ties MaxPool's output to its input) are promoted for
 * all of them ("also promoted"); a quantizer whose parameters something else reads, or
 * whose weight has no float counterpart, is left as it was ("not promoted"). The int32
 * biases of promoted nodes take their float values (requantized on 16-bit scales they are
 * exact to ~1e-9); nodes kept in float have their weights, outputs and biases unquantized. */
typedef struct QrWhatIfStep {
    int k;                       /* top-k nodes */
    const char **nodes;          /* [k] analysis node names (graph-input rows: the input's name) */
    const char **base_nodes;     /* [k] matched baseline node names, NULL when unmatched */
    QrMetrics int16;             /* model output with their quantizers on the 16-bit grid */
    QrMetrics fp;                /* model output with their quantizers disabled (float) */
    bool int16_meets, fp_meets;  /* Cosine >= target */
    int n_promoted, n_also, n_not;
    const char **promoted;       /* tensors (twin value names) promoted to 16 bits */
    const char **also;           /* promoted because they share parameters with the above */
    const char **not_promoted;   /* "<tensor>: <reason>" */
    int n_not_disabled;          /* float run: quantizers that cannot be disabled */
    const char **ort_overrides;  /* baseline tensor names for ORT TensorQuantOverrides, one per promoted tensor */
    const char **ort_types;      /* "QInt16" / "QUInt16" */
    int n_ort;
    /* The selected weight-only nodes' weights (MatMulNBits without g_idx, its float weight known), every other
     * quantizer as is: re-quantized from the float weight with 8-bit codes (same block size; only weights of
     * fewer bits) and with half the block size (same bits; only blocks of 32 or more), each by the node's rule
     * (qr_whatif_requant_into), the node computing A @ W_requantized in float (as when it is disabled:
     * accuracy_level 4's int8 activations are not applied). Each run re-quantizes a weight in place of its
     * dequantized copy as the run computes it (no re-quantized weight is kept), and these runs go one at a
     * time, after the other runs, their kernels on every thread. */
    int n_wq8, n_wq_half;        /* weights changed by each run (0: that run measured nothing, metrics NaN) */
    int wq_bits, wq_block;       /* the first such weight's bits and block size */
    const char **wq_names;       /* [n_wq8 or n_wq_half, whichever is larger] their weights */
    int n_wq_names;
    QrMetrics wq8, wq_half;
    bool wq8_meets, wq_half_meets;
} QrWhatIfStep;

typedef struct QrWhatIf {
    QrArena arena;
    double target;               /* Cosine the recommendation aims for */
    QrMetrics as_is;             /* the analysis model with every quantizer on (the twin) */
    bool as_is_meets;
    int n_rank;                  /* ranked nodes available */
    int n_steps;
    QrWhatIfStep *steps;         /* one per k (ks clipped to n_rank, duplicates dropped) */
    int rec_int16, rec_fp;       /* recommended step (-1: the model as is already meets the target, or no
                                  * step promotes anything / measures a Cosine above the model as is) */
    bool rec_int16_meets, rec_fp_meets;
    int rec_wq8, rec_wq_half;    /* the same for the weight-only runs (-1: none changes a weight with a gain) */
    bool rec_wq8_meets, rec_wq_half_meets;
} QrWhatIf;

/* The weight-only what-if's rule: w (float, any layout) quantized in blocks of bs along axis with `bits`-bit
 * codes and dequantized (float32 arithmetic, round half to even): symmetric as MLAS quantizes MatMulNBits
 * without zero points (scale = the block's signed abs-max / -2^(bits-1), code = round(w / scale) + 2^(bits-1)
 * clipped to [0, 2^bits - 1], value (code - 2^(bits-1)) * scale) or, asym, min/max with a zero point (range
 * widened to include 0, scale = (max - min) / (2^bits - 1), zero point round(-min / scale) clipped, value
 * (code - zp) * scale), into y (w's element count, float32). */
static QrStatus qr_whatif_requant_into(const QrTensor *w, int axis, int bs, int bits, bool asym, float *y);

/* ks: the k values (NULL → 1, 3, 5, 10); target: Cosine to reach (<= 0 → QR_WHATIF_TARGET_COSINE).
 * The ranking is sens (worst first for one-on, best first for off-one, whatever its --reverse),
 * one entry per node (all of its rows' quantizers). */
static QrStatus qr_whatif_run(QrSession *s, const QrSensResult *sens, const int *ks, int n_ks, double target, QrWhatIf *out);
static void qr_whatif_free(QrWhatIf *w);
/* mixed_precision.json into dir. */
static QrStatus qr_whatif_write(const QrSession *s, const QrWhatIf *w, const char *dir);

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
/* One node of the sensitivity ranking with its quantizers (qr_whatif_rank). */
#define QR_WHATIF_NODE_MAXQ 24

typedef struct QrWiNode {
    int node;                    /* twin node, -1 for a graph-input row */
    const char *name;
    int n_q;
    int q[QR_WHATIF_NODE_MAXQ];
} QrWiNode;

/* Promotions substitute scale / zero-point / integer-weight values. So that one quantizer can
 * change without touching others that happen to read the same value (torch's deduplicated
 * zero points, a scale also read by an integer-op Mul), the what-if runs a copy of the twin in
 * which each promotable quantizer's Q/DQ nodes read private copies of these values (same data,
 * borrowed). Quantizers whose Q/DQ nodes read the same *scale* value are tied, as ONNX
 * Runtime ties MaxPool's output to its input, and are promoted together. */
typedef struct QrWiGroups {
    QrGraph pg;                  /* the twin with private parameter values (value/node indices of the twin kept) */
    bool have_pg;
    int *parent;                 /* union-find over quantizers (shared scale value) */
    const char **why;            /* per quantizer: why it cannot be promoted (NULL = it can; such
                                  * quantizers are never in a group with promotable ones) */
    int *pscale, *pzp, *pint;    /* per quantizer: private values in pg (-1 = none) */
} QrWiGroups;

typedef struct QrWiSubst {
    QrTensor *t;                 /* created tensors (fixed capacity: subst[] points into it) */
    int n, cap;
} QrWiSubst;

/* A step's plan (qr_whatif_plan) for its two runs. */
typedef struct QrWiStepPlan {
    int *state;                  /* per quantizer: 0 untouched, 1 selected, 2 promoted, 3 also promoted, 4 bias of a selected node */
    bool *mask;                  /* the float run: quantizers on */
} QrWiStepPlan;

static QrStatus qr_whatif_groups(const QrSession *s, QrArena *a, QrWiGroups *gr);
static void qr_whatif_groups_free(QrWiGroups *gr);
static void qr_whatif_js_strs(QrJson *j, const char *key, const char *const *v, int n);
static QrStatus qr_whatif_plan(QrSession *s, const QrWiNode *rank, const QrWiGroups *gr, QrWhatIf *w, QrWhatIfStep *st, QrWiStepPlan *p);
static QrStatus qr_whatif_promote(const QrSession *s, const QrWiGroups *gr, int i, QrWiSubst *ts, const QrTensor **subst);
static int qr_whatif_rank(const QrSensResult *sens, QrWiNode **out);
static QrStatus qr_whatif_run_job(void *ctx, int job, int tid);
static void qr_whatif_subst_free(QrWiSubst *ts);
#endif
