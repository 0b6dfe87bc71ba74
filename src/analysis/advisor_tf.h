/* analysis/advisor_tf — the advisor's transformer checks: activation outliers to migrate
 * (SmoothQuant / AWQ), Softmax inputs on a grid too coarse, and the dominant blocks of
 * block-quantized weights. Called by analysis/advisor.c's qr_advisor_run. */
#ifndef QR_ADVISOR_TF_H
#define QR_ADVISOR_TF_H

static QrStatus qr_advtf_transformer(QrAdvList *b, QrSession *s);
static QrStatus qr_advtf_blocks(QrAdvList *b, const QrSession *s, const QrWeightCmp *w);
static QrStatus qr_advtf_block_outliers(QrAdvList *b, const QrSession *s, const QrWeightCmp *w);

#endif
