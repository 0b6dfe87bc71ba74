/* quant/twin_wq — the float twin of weight-only quantized nodes: MatMul / Gather of a blocked
 * DequantizeLinear or of a qreport.int.BlockDequant (the weight each MatMulNBits / MatMulBnb4 /
 * GatherBlockQuantized node dequantizes), so each is a toggleable weight quantizer. */
#ifndef QR_TWIN_WQ_H
#define QR_TWIN_WQ_H

/* The twin of weight-only node n (quant/twin.c calls it for every node it has no pattern for):
 * QR_OK when rewritten, QR_ERR_UNSUPPORTED (no message) when n has none (*why says why, when
 * it is a weight-only node that stays). */
static QrStatus qr_twq_rewrite(QrTwCtx *cx, const QrNode *n, const char **why);

#endif
