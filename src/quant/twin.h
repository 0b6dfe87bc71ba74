/* quant/twin — the float twin of an analysis model: QOperator nodes (QLinearConv,
 * QLinearAdd, QGemm, ...) and integer-op chains (ConvInteger → Cast → Mul) become
 * DequantizeLinear → float op → QuantizeLinear, so every quantizer can be toggled. */
#ifndef QR_TWIN_H
#define QR_TWIN_H

/* Why a twin: a QOperator node carries its quantizers inside integer arithmetic,
 * so "disable this quantizer" has no meaning for it. Its twin does the same
 * computation on dequantized values in float and quantizes the result with the
 * node's own output scale; with every quantizer enabled it equals the integer
 * node up to rounding ties, and disabling a quantizer makes it the identity.
 * QDQ models have nothing to rewrite: their twin is a plain copy. */
typedef struct QrTwin {
    QrGraph g;               /* the twin graph; values of the source keep their indices */
    int *origin;             /* per twin node: the source node it stands for */
    int n_rewritten;         /* source nodes replaced by a float twin */
    int n_kept;              /* integer nodes kept as they are (no twin pattern) */
    char note[512];          /* the first reason a node was kept */
} QrTwin;

/* Builds the twin of src (which must be shape-inferred) and infers its shapes on
 * the same inputs. The twin borrows src's initializers: src must outlive it. */
static QrStatus qr_quant_twin_build(const QrGraph *src, const QrTensor *inputs, QrTwin *tw);
static void qr_quant_twin_free(QrTwin *tw);

#endif
