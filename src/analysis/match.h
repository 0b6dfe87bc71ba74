/* analysis/match — pairs each baseline compute node's output with the analysis
 * value its consumers see (after the node's Q→DQ). Methods, in priority order:
 * node name, tensor name (incl. ONNX Runtime's _QuantizeLinear_Output /
 * _DequantizeLinear_Output renames), structure (data-flow propagation from the
 * graph inputs that skips Q/DQ/Identity/Cast and folds exporter patterns:
 * QLinear ops and ConvInteger chains, QAT Conv→Div→Add(→BN), fused Conv+Relu). */
#ifndef QR_MATCH_H
#define QR_MATCH_H

typedef enum QrMatchMethod { QR_MM_NONE, QR_MM_INPUT, QR_MM_NODE_NAME, QR_MM_TENSOR_NAME, QR_MM_STRUCTURE } QrMatchMethod;

typedef struct QrMatch {
    int b_node, b_value;     /* baseline node and its output value */
    int a_node, a_value;     /* analysis node computing the op, and the value consumers see (-1: unmatched) */
    int b_twin;              /* baseline node computing a_node's op (differs from b_node when an activation was fused) */
    int a_quant;             /* quantizer on a_value (index in the analysis quant table) or -1 */
    bool a_is_int;           /* a_value holds integers: dequantize with a_quant to compare */
    QrMatchMethod method;
    const char *note;        /* e.g. "fused into <node>" for a baseline node without counterpart */
} QrMatch;

typedef struct QrMatchResult {
    QrArena arena;
    int n;                   /* one per baseline compute node, baseline topological order */
    QrMatch *m;
    int n_unmatched_a;       /* analysis compute values no baseline node maps to */
    int *unmatched_a;        /* analysis node indices */
} QrMatchResult;

/* Also records on qa the activations that quantizers implement (fused Relu/Clip). */
static QrStatus qr_match(const QrGraph *b, const QrGraph *a, QrQuantTable *qa, QrMatchResult *out);
static void qr_match_free(QrMatchResult *r);
static const char *qr_match_method_name(QrMatchMethod m);
struct QrEquivResult;   /* analysis/session.h */
/* Writes match_table.txt and .csv into dir (with the equivalence column when eq != NULL). */
static QrStatus qr_match_write(const QrGraph *b, const QrGraph *a, const QrMatchResult *r,
                               const struct QrEquivResult *eq, const char *dir);
/* Is this baseline node a "compute" node that gets a row (not Constant/Identity/shape arithmetic)? */
static bool qr_match_is_compute(const QrGraph *g, int node);


/* Dequantizes a value of the analysis model (int -> float) with quantizer q. */
static QrStatus qr_quant_dequantize_value(const QrGraph *a, const QrQuantizer *q, const QrTensor *x, QrTensor *out);

#endif
