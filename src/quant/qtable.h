/* quant/qtable — the quantizer table of an analysis model: every Q→DQ pair, every DQ
 * of a quantized initializer and every quantized input/output/weight of a
 * QOperator or integer-op node, with dtype, scales, zero points and owner node.
 * A quantizer mask turns into executor overrides (run.h) that make a disabled
 * quantizer the identity. */
#ifndef QR_QUANT_H
#define QR_QUANT_H

typedef enum QrQuantKind { QR_QK_ACTIVATION, QR_QK_WEIGHT, QR_QK_BIAS } QrQuantKind;

typedef enum QrQuantForm {
    QR_QF_QDQ,        /* QuantizeLinear -> DequantizeLinear on a computed value (or a float weight, QAT) */
    QR_QF_DQ_INIT,    /* DequantizeLinear of an integer initializer (weight stored quantized) */
    QR_QF_Q_ONLY,     /* QuantizeLinear feeding integer ops / QOperator nodes (no DQ) */
    QR_QF_QOP_OUT,    /* output of a QOperator node (QLinearConv, QLinearAdd, ...) */
    QR_QF_QOP_WEIGHT, /* integer weight input of a QOperator / integer-op node */
    QR_QF_DYNAMIC,    /* DynamicQuantizeLinear (scale computed at run time) */
} QrQuantForm;

#define QR_QUANT_MAX_DQ 8

typedef struct QrQuantizer {
    int id;
    QrQuantKind kind;
    QrQuantForm form;
    QrDType dtype;           /* integer type of the quantized values */
    int axis;                /* -1 per-tensor */
    int block_size;          /* 0 unless blocked */
    int scale_value, zp_value;   /* value indices (-1 if absent) */
    int64_t n_scales;
    double scale_min, scale_max; /* over all scales (NaN if not constant) */
    int q_node;              /* QuantizeLinear (or the QOperator node for QOP_OUT), -1 if none */
    int n_dq;
    int dq_nodes[QR_QUANT_MAX_DQ];
    int float_value;         /* the float value quantized (Q input / float weight), -1 if none */
    int int_value;           /* the integer value (Q output / integer initializer) */
    int out_value;           /* what float consumers read (first DQ output), -1 for QOperator forms */
    int owner;               /* compute node whose output or weight this quantizes, -1 for graph inputs */
    int owner_input;         /* for weights: input index on the owner */
    bool can_disable;        /* the executor can make it the identity */
    /* qreport.int.BlockDequant (quant/twin_wq.c: weight-only nodes the blocked DequantizeLinear cannot
     * express): map_value = the int32 scale index of every weight element (g_idx, MatMulBnb4's
     * flat blocks), -1 otherwise; sel_value / sel_float: when disabled, readers of sel_value (the
     * int8-activation node's output) read sel_float (the float product) instead, -1 if none. */
    int map_value, sel_value, sel_float;
    bool block_op;           /* the weight of a qreport.int.BlockDequant (with or without a map) */
    int64_t nbits_k;         /* its codes are a 4-bit MatMulNBits' B, uint8 (N, blocks, block_size / 2), as the
                              * node holds them: K (the weight is (K, N): qr_qtable_codes_shape /
                              * qr_qtable_nbits_code), else 0 */
    float implied_lo, implied_hi; /* activation the quantizer implements (fused Relu/Clip): NaN = none */
    const char *why_not;     /* reason when !can_disable */
} QrQuantizer;

typedef struct QrQuantTable {
    QrArena arena;
    int n;
    QrQuantizer *q;
    int *by_value;           /* per value: quantizer whose out_value or int_value it is, or -1 */
    int *by_float;           /* per value: activation quantizer whose float_value it is, or -1 */
} QrQuantTable;

/* Builds the table; the graph must have been shape-inferred (constant scales). */
static QrStatus qr_qtable_build(const QrGraph *g, QrQuantTable *t);
/* The integer weight of quantizer q (an integer initializer) as one code per element: its shape and
 * dtype (data NULL) in *shape — (K, N) when q's codes are a MatMulNBits B (q->nbits_k). */
static void qr_qtable_codes_shape(const QrGraph *g, const QrQuantizer *q, QrTensor *shape);
/* Code i (= k * N + n of the (K, N) weight) of a 4-bit MatMulNBits B (N, blocks, block_size / 2):
 * byte k / 2 of row n, low nibble for even k. */
static inline int32_t qr_qtable_nbits_code(const QrTensor *b, int64_t i) {
    const int64_t N = b->dims[0], k = i / N, n = i % N;
    return (((const uint8_t *)b->data)[n * b->dims[1] * b->dims[2] + k / 2] >> ((k & 1) * 4)) & 15;
}
static void qr_qtable_free(QrQuantTable *t);
static const char *qr_qtable_form_name(QrQuantForm f);
/* Turns a mask (enabled[i] per quantizer; NULL = all enabled) into overrides.
 * alias/subst are per value (caller-allocated, n_values). float_weights[i]
 * (optional) is the baseline's float tensor for an integer weight quantizer. */
static void qr_qtable_overrides(const QrGraph *g, const QrQuantTable *t, const bool *enabled,
                               const QrTensor *const *float_weights, int *alias, const QrTensor **subst,
                               float *clamp_lo, float *clamp_hi);

/* The quantization arithmetic itself (rounding, saturation, requantization,
 * per-axis/blocked layouts) lives with the operators in ops/qdq.c. */

#endif
