/* analysis/advkit — the advisor's findings and the list they are built in, shared by the
 * advisor's checks (analysis/advisor_tf.c: the transformer checks; analysis/advisor.c: the
 * others and the driver). */
#ifndef QR_ADVKIT_H
#define QR_ADVKIT_H

typedef enum QrAdvKind {
    QR_ADV_NONFINITE,            /* NaN/Inf in a layer's values */
    QR_ADV_LOW_SIMILARITY,       /* the layer's own (local) error is large */
    QR_ADV_INHERITED,            /* local error small, full error large: the cause is upstream */
    QR_ADV_OUTLIER_CHANNELS,     /* per-tensor quantization of a value with outlier channels */
    QR_ADV_SATURATION,           /* share of values clipped at qmin/qmax */
    QR_ADV_ZERO,                 /* share of non-zero values quantized to the zero point */
    QR_ADV_RANGE,                /* range too large for the dtype: few steps per standard deviation */
    QR_ADV_SCALE_MISMATCH,       /* Concat/Add/Sum inputs with very different scales */
    QR_ADV_INPUT_NOT_NORMALIZED, /* a model input with a large raw range */
    QR_ADV_OUTPUT_LOW_PRECISION, /* a model output quantized to 8 bits or fewer */
    QR_ADV_SENSITIVE,            /* among the top sensitive nodes */
    QR_ADV_ACT_OUTLIER_MIGRATE,  /* LayerNorm/residual output with outlier channels feeding quantized MatMuls
                                  * (SmoothQuant / AWQ case; advisor_tf.c) */
    QR_ADV_SOFTMAX_GRID,         /* Softmax input (attention logits) on a grid too coarse for the probabilities */
    QR_ADV_BLOCK_DOMINANT,       /* a few blocks of a block-quantized (int4 weight-only) weight carry most of its error */
    QR_ADV_WEIGHT_ERROR,         /* the layer's weight quantization is the largest part of its own error (error split) */
    QR_ADV_INPUT_ERROR,          /* the quantizers on the layer's inputs are the largest part (error split) */
    QR_ADV_ROUNDING,             /* plain rounding of a well-fitted output range is the largest part (error split) */
    QR_ADV_BLOCK_OUTLIER,        /* an outlier weight (> QR_WEIGHT_OUTLIER_SIGMA sigma) sets a block's scale and
                                  * coarsens the block's other weights (advisor_tf.c) */
    QR_ADV_COUNT
} QrAdvKind;

typedef enum QrSeverity { QR_SEV_INFO, QR_SEV_WARNING, QR_SEV_ERROR } QrSeverity;

#define QR_ADV_MAX_EV 6

typedef struct QrFinding {
    QrAdvKind kind;
    QrSeverity sev;
    const char *node;            /* analysis model node ("" for model inputs) */
    const char *base_node;       /* matched baseline node, or NULL */
    const char *op_type;
    const char *value;           /* the tensor concerned (weight / activation name), or NULL */
    int match;                   /* session match index or -1 */
    int q;                       /* session->qt quantizer or -1 */
    const char *reason;          /* one sentence with the numbers */
    const char *fix;             /* what to do */
    int n_ev;
    const char *ev_name[QR_ADV_MAX_EV];   /* evidence, e.g. "ratio", "sqnr_db" */
    double ev[QR_ADV_MAX_EV];
    int seq;                     /* order of discovery (graph order) */
    int cause;                   /* the layer's cause from its error split: 1 + the dominant part (QrSplitView.dom), 0 none */
    double share;                /* cause: the dominant part's share of the layer's measured parts */
} QrFinding;

/* Thresholds (qr_advisor_defaults gives the documented defaults). */
typedef struct QrAdvisorOpts {
    double cos_threshold;        /* 0.99: Cosine below it is low similarity */
    double sqnr_threshold;       /* 20 dB: SQNR below it is low similarity */
    double sat_threshold;        /* 0.01: share of values clipped at qmin/qmax (weights: by more than one step) */
    double zero_threshold;       /* 0.5: share of non-zero values quantized to the zero point */
    double min_levels;           /* 2: RMS / scale below it = range too large for the dtype */
    double outlier_k;            /* QR_OUTLIER_K (8): channel abs-max above k × median */
    double scale_ratio;          /* 2: largest / smallest input scale at Concat (warning) and Add/Sum
                                  * (info; warning beyond 4 × scale_ratio: residual branches differ by design) */
    double input_absmax;         /* 32: a model input beyond ±32 is not normalized */
    int top_sensitive;           /* 5 sensitive nodes listed */
    double softmax_rel;          /* 0.05: rounding the Softmax input may change a probability >= 1/L by this much */
    double block_k;              /* QR_OUTLIER_K (8): a block's error energy above k x the median block's is named */
    double block_share;          /* 0.25: the named blocks (at most 3) carry this share of the weight's error energy */
} QrAdvisorOpts;

typedef struct QrAdvice {
    QrArena arena;
    int n;
    QrFinding *f;                /* f[0] the main finding (main_how says why); then errors, warnings, info, graph order within each */
    const char *main_how;        /* how the main finding was chosen */
    QrAdvisorOpts opts;
    int n_by_sev[3];
} QrAdvice;

/* The list a check adds findings to (qr_advisor_run's). */
typedef struct QrAdvList {
    QrAdvice *a;
    int cap;
    int *cause_kind;             /* per match: the kind of the layer's cause finding (error split), -1 */
    int skip;                    /* advisor.c's activation check: a kind not to report again (the cause says it), -1 */
} QrAdvList;

/* A new finding in b (arena copies of node and op_type; match, q = -1), or NULL out of memory. */
static QrFinding *qr_advk_find(QrAdvList *b, QrAdvKind kind, QrSeverity sev, const char *node, const char *op_type);
/* Adds evidence name = v to f (at most QR_ADV_MAX_EV). */
static void qr_advk_ev(QrFinding *f, const char *name, double v);
/* A finding's text field, printf-formatted into the advice's arena. */
#define QR_ADVK_TEXT(a, field, ...) ((field) = qr_arena_printf(&(a)->arena, __VA_ARGS__))
/* Baseline node matched to the source node of twin node n, or NULL. */
static const char *qr_advk_base_node_of(const QrSession *s, int n);

#endif
