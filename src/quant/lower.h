/* quant/lower — the `int` execution mode: rewrites an analysis graph so that every recognised
 * DequantizeLinear -> {Conv, Gemm, MatMul, Add, Mul, Concat, GlobalAveragePool, AveragePool,
 * MaxPool, Relu/Clip} [-> Relu/Clip] -> QuantizeLinear group runs as one integer node, and
 * compares integer activations of the int and sim modes per layer (in LSB units). */
#ifndef QR_LOWER_H
#define QR_LOWER_H

/* One fused group: the nodes of the analysis graph g that one integer node replaces. A MaxPool
 * whose DequantizeLinear moved behind it is listed too: pattern "DQ-MaxPool => MaxPool-DQ",
 * q_node -1, out_value its new integer value (index >= g's n_values). */
typedef struct QrLowerGroup {
    int op_node;            /* the compute node in g (Conv, Gemm, ...) */
    const char *name;       /* its name (the integer node has the same name) */
    const char *pattern;    /* e.g. "DQ-Conv-Relu-Q", "DQ-MaxPool-Q" */
    const char *int_op;     /* the operator that runs it, e.g. "qreport.int.QLinearConv" */
    int act_node;           /* fused Relu / Clip in g, or -1 */
    int q_node;             /* the QuantizeLinear in g whose output the integer node writes, or -1 */
    int out_value;          /* that output (the same value index in g and in the lowered graph) */
    int out_quantizer;      /* its quantizer id in the table, or -1 */
    int node;               /* the integer node in the lowered graph */
    QrDType in_dtype;       /* first quantized input */
    QrDType w_dtype;        /* second operand (weight / B), QR_DT_UNDEF if none */
    QrDType out_dtype;
    QrQuantAcc acc;         /* for weights that are not constant: the choice for the worst case */
    int32_t qmin, qmax;     /* output clamp (type range narrowed by a fused Relu/Clip) */
    const char *note;       /* e.g. how the bias was formed; NULL if nothing to say */
} QrLowerGroup;

/* A node that looked like a candidate (a listed op type next to Q/DQ) but stays float. */
typedef struct QrLowerSkip {
    int node;               /* in g */
    const char *name, *op_type;
    const char *why;
} QrLowerSkip;

typedef struct QrLowerInfo {
    QrArena arena;
    int n_groups, n_skipped;
    QrLowerGroup *groups;
    QrLowerSkip *skipped;
    int n_nodes_in;         /* nodes of g */
    int *node_map;          /* per node of g: the lowered graph's node that computes it (fused: the
                               integer node; removed weight DequantizeLinear: -1) */
    int *node_origin;       /* per node of the lowered graph: its node in g (fused: the compute node) */
} QrLowerInfo;

/* Builds in *out the int-mode version of g (shape-inferred, e.g. by qr_run_infer; t is its
 * quantizer table). Value indices and names are those of g — new values (integer biases, zero
 * points, integer MaxPool outputs) are appended after them — so taps, the match table and t keep
 * working; node
 * indices differ (info->node_map / node_origin translate). Activation DequantizeLinear nodes
 * stay (their float outputs are what the baseline is matched to); DequantizeLinear nodes of
 * constants that nothing reads any more are dropped. out is finalized and shape-inferred with
 * g's input shapes, ready for qr_run.
 * Memory: out borrows g's strings, node arrays and initializer data: free out (qr_graph_free)
 * before g. info owns its arena (qr_lower_info_free). A quantizer mask cannot disable a
 * quantizer inside a fused group (the integer node has no float twin); use g for that.
 * Groups: the op's quantized inputs are DequantizeLinear outputs (per-tensor for activations;
 * weights per-tensor or per output channel; 8/16-bit, int4 weights) with constant scales and
 * zero points; its output goes, alone, through an optional Relu / Clip (constant bounds) to one
 * per-tensor QuantizeLinear. A Conv / Gemm bias is used as ONNX Runtime forms it (see lower.c).
 * A MaxPool reading a DequantizeLinear whose output is not quantized runs on the integers with
 * the DequantizeLinear moved behind it (exact), so that its readers can be lowered.
 * 8-bit weights of ungrouped convolutions computed from constants (QAT's float -> Q -> DQ) are
 * computed here, as ONNX Runtime folds them, and with every constant 8-bit weight packed for the
 * current kernel level (qr_kern.q8_conv_nhwc_pack or q8_pack_a) as the integer node's input 9:
 * runs then neither quantize nor pack weights (out owns these constants).
 * Fails only on allocation failure or an invalid g (out and info are then empty); unsupported
 * patterns are listed in info->skipped and stay float. */
/* int16_integer: 16-bit groups (a uint16/int16 DequantizeLinear input or QuantizeLinear output)
 * stay float when false, as ONNX Runtime's CPU provider runs them (its 'all' output equals
 * 'disabled' on 16-bit QDQ models; listed in info->skipped); when true they are lowered onto
 * the integer kernels like an NPU (Qualcomm HTP) runs them (`--int16 float|integer`);
 * MaxPool's DequantizeLinear move follows the same choice. */
static QrStatus qr_lower_graph(const QrGraph *g, const QrQuantTable *t, bool int16_integer, QrGraph *out,
                               QrLowerInfo *info);
static void qr_lower_info_free(QrLowerInfo *info);

/* ---- int vs sim per layer ---------------------------------------------------------------- */

/* Default tie tolerance (LSB): a differing element counts as a rounding tie when the sim mode's
 * value before rounding (x / scale of its QuantizeLinear) lies within this of k + 0.5. */
#define QR_LOWER_TIE_TOL 0.01

/* One integer activation (a quantizer's integer value) compared between the two modes. */
typedef struct QrLowerLayerCmp {
    int value;              /* the integer value (same index in g and the lowered graph) */
    int quantizer;          /* its id in the quantizer table */
    const char *name;       /* the value's name */
    const char *layer;      /* name of the node whose output it quantizes ("-" for a graph input) */
    QrDType dtype;
    int64_t n;              /* elements compared */
    int64_t n_diff;         /* elements where int != sim */
    int64_t n_tie;          /* differing elements at a rounding tie (needs the sim tap of the float input) */
    int64_t max_lsb;        /* largest |int - sim| in LSB (integer units) */
    double max_tie_dist;    /* largest distance of a differing element's sim value to k + 0.5, LSB (-1: none) */
    bool upstream_differs;  /* an integer activation this one is computed from already differed */
    bool seen_int, seen_sim;
} QrLowerLayerCmp;

/* Streaming comparison: run the lowered graph with qr_lower_cmp_tap_int as its tap, then g with
 * qr_lower_cmp_tap_sim (user = the QrLowerCmp); or call the taps from your own taps. The int run
 * keeps a copy of every integer activation until the sim run has compared it (1-2 bytes per
 * element of the model's quantized activations). */
typedef struct QrLowerCmp {
    QrArena arena;
    const QrGraph *g;
    const QrQuantTable *t;
    double tie_tol;
    int n;                  /* layers, in g's topological order */
    QrLowerLayerCmp *layers;
    int *layer_of;          /* per value of g: layer index, or -1 */
    QrTensor *kept;         /* per layer: the int run's tensor until compared */
    float **tie_dist;       /* per layer: sim run's |frac(x/scale) - 0.5| per element, until compared */
} QrLowerCmp;

/* Prepares the comparison of every activation quantizer's integer value of g (t: g's table).
 * tie_tol <= 0 selects QR_LOWER_TIE_TOL. */
static QrStatus qr_lower_cmp_init(QrLowerCmp *c, const QrGraph *g, const QrQuantTable *t, double tie_tol);
static QrStatus qr_lower_cmp_tap_int(void *user, const QrGraph *lowered, int node, int value, const QrTensor *v);
static QrStatus qr_lower_cmp_tap_sim(void *user, const QrGraph *g, int node, int value, const QrTensor *v);
/* Sets upstream_differs; call after both runs. */
static void qr_lower_cmp_finish(QrLowerCmp *c);
static void qr_lower_cmp_free(QrLowerCmp *c);

/* Runs both modes on one input set and compares (outputs discarded): init, int run, sim run, finish. */
static QrStatus qr_lower_compare(const QrGraph *g, const QrQuantTable *t, const QrGraph *lowered,
                                 const QrTensor *inputs, double tie_tol, QrLowerCmp *out);

#endif
