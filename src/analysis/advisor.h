/* analysis/advisor — abnormal layers with a reason and a concrete fix
 * (QuantAnalysis' abnormal_layer_advisor.txt): low similarity, inherited error, outlier
 * channels, saturation, round-to-zero, ranges too large, Concat/Add scale mismatch, etc. */
#ifndef QR_ADVISOR_H
#define QR_ADVISOR_H

/* The findings (QrFinding, QrAdvice, QrAdvisorOpts): analysis/advkit.h. */

static void qr_advisor_defaults(QrAdvisorOpts *o);
/* Examines the pair: cmp (optional) gives similarity / inherited / non-finite findings,
 * sens (optional) the top sensitive nodes, w (optional; computed when NULL) the weight
 * findings; activation findings use session->base (the baseline is run if needed). */
static QrStatus qr_advisor_run(QrSession *s, const QrCompare *cmp, const QrSensResult *sens, const QrWeightCmp *w,
                               const QrAdvisorOpts *o, QrAdvice *out);
static void qr_advice_free(QrAdvice *a);
static const char *qr_adv_kind_name(QrAdvKind k);       /* "outlier_channels", ... */
static const char *qr_severity_name(QrSeverity s);      /* "info", "warning", "error" */
/* The findings as one JSON array value at the writer's position (summary.json / HTML):
 * [{"severity", "kind", "node", "baseline_node", "op_type", "value", "reason", "fix",
 *   "evidence": {name: number}}], in the order of a->f. */
static void qr_advisor_json(QrJson *j, const QrAdvice *a);
/* abnormal_layer_advisor.txt into dir. */
static QrStatus qr_advisor_write(const QrSession *s, const QrAdvice *a, const char *dir);
#endif
