/* analysis/check — structure check of an analysis (quantized) model, the
 * counterpart of check_qat_model: unfused patterns, shared weights/quantizers,
 * per-layer output quantization, weight quantization and anomalies, written as
 * model_check_result.txt. Value ranges come from one run on the given input. */
#ifndef QR_CHECK_H
#define QR_CHECK_H

typedef struct QrCheckSummary {
    int n_unfused, n_shared, n_anomalies;
} QrCheckSummary;

/* stats: per value statistics from a run (NULL: range-based checks are skipped). */
static QrStatus qr_check_write(const QrGraph *g, const QrQuantTable *qt, const QrStats *stats, const char *path,
                               QrCheckSummary *sum);

#endif
