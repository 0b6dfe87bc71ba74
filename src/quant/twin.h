/* quant/twin — the float twin of an analysis model: QOperator nodes (QLinearConv,
 * QLinearAdd, QGemm, ...) and integer-op chains (ConvInteger → Cast → Mul) become
 * DequantizeLinear → float op → QuantizeLinear, so every quantizer can be toggled. */
#ifndef QR_TWIN_H
#define QR_TWIN_H

/* QrTwin: quant/twkit.h. */

/* Builds the twin of src (which must be shape-inferred) and infers its shapes on
 * the same inputs. The twin borrows src's initializers: src must outlive it. */
static QrStatus qr_twin_build(const QrGraph *src, const QrTensor *inputs, QrTwin *tw);
static void qr_twin_free(QrTwin *tw);

#endif
