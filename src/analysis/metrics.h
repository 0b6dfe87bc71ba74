/* analysis/metrics — the comparison metrics of docs/REPORT.md (Cosine, MSE, L1, KL,
 * SQNR, Atol, Rtol, min/max/mean/var of both sides), accumulated in one pass over
 * any number of chunks (sums in double; KL by an online log-sum-exp). */
#ifndef QR_METRICS_H
#define QR_METRICS_H

/* KLD: the mean over tokens of KL(baseline || analysis) of the softmax over the vocabulary, at logits outputs
 * only (qr_session_compare_outputs_sel; analysis/tokens has the other per-token metrics); NaN elsewhere. */
typedef enum QrMetricKind { QR_METRIC_L1, QR_METRIC_COSINE, QR_METRIC_MSE, QR_METRIC_KL, QR_METRIC_SQNR, QR_METRIC_KLD,
                            QR_METRIC_COUNT } QrMetricKind;

typedef struct QrMetrics {
    double cosine, mse, l1, kl, sqnr, atol, rtol;
    double x_min, x_max, x_mean, x_var;      /* x = baseline */
    double y_min, y_max, y_mean, y_var;      /* y = analysis */
    int64_t n;                                /* elements compared (finite on both sides) */
    int64_t n_nonfinite;                      /* element pairs skipped because x or y is NaN/Inf */
    double kld;                               /* mean token KL at logits outputs (QR_METRIC_KLD), else NaN */
} QrMetrics;

typedef struct QrMetricAcc {
    int64_t n, n_bad;
    double sxx, syy, sxy, sdd, sad, amax, rtol;
    double x_min, x_max, y_min, y_max;
    double x_mean, x_m2, y_mean, y_m2;       /* Chan et al. merge of chunk moments */
    double kx_max, kx_s, kx_t, ky_max, ky_s; /* online softmax sums for KL */
    bool no_kl;                              /* KL not wanted: skips its two exp per element (kl = NaN) */
    bool no_rtol;                            /* Rtol not wanted: skips its division per element (rtol = NaN) */
} QrMetricAcc;

static void qr_metric_acc_init(QrMetricAcc *a);
/* The same, without KL when with_kl is false (the costly part: two exp per element). */
static void qr_metric_acc_init_ex(QrMetricAcc *a, bool with_kl);
#ifdef QR_TESTING
/* Test-only, process-wide: the element pairs KL's softmax sums have taken (tests count where KL is
 * computed: analysis/sens's groups take none). */
QR_TESTAPI extern int64_t qr_metric_kl_pairs;
#endif
/* The same, choosing KL and Rtol (a division per element); the others are always computed,
 * identical whatever is chosen. Metrics not chosen are NaN. */
static void qr_metric_acc_init_opts(QrMetricAcc *a, bool with_kl, bool with_rtol);
/* Adds n element pairs (x baseline, y analysis). */
static void qr_metric_acc_add(QrMetricAcc *a, const float *x, const float *y, int64_t n);
static void qr_metric_acc_finish(const QrMetricAcc *a, QrMetrics *m);
/* One-shot: metrics of two arrays (_ex: KL only when with_kl, else NaN). */
static void qr_metrics_compute_ex(const float *x, const float *y, int64_t n, bool with_kl, QrMetrics *m);
static void qr_metrics_compute(const float *x, const float *y, int64_t n, QrMetrics *m);   /* with KL */
static void qr_metrics_compute_opts(const float *x, const float *y, int64_t n, bool with_kl, bool with_rtol, QrMetrics *m);

/* Metrics without KL and Rtol of two arrays that are not in memory at once, given piece by piece in
 * order (a weight compared with its dequantized value, computed a panel at a time): every piece but the
 * last a multiple of QR_KERN_STATS_BLOCK elements long, so the pair-statistics kernel sees the blocks
 * it sees in one call. _finish gives the metrics qr_metrics_compute_opts(x, y, n, false, false) gives,
 * bit for bit, or returns false when some pair is not finite (that path needs the whole arrays: the
 * caller computes it with qr_metrics_compute_opts). */
typedef struct QrMetricStream { QrF32PairStats ps; int64_t n; } QrMetricStream;
static void qr_metric_stream_init(QrMetricStream *st);
static void qr_metric_stream_add(QrMetricStream *st, const float *x, const float *y, int64_t n);
static bool qr_metric_stream_finish(const QrMetricStream *st, QrMetrics *m);

static double qr_metric_get(const QrMetrics *m, QrMetricKind k);
/* Whether a graph output is judged per token (a logits output): rank 3 with a last dim >= 2 ([batch,
 * sequence, vocab]), or named "logits" with rank >= 2 (the vocabulary last). */
static bool qr_metric_is_logits(const char *name, const QrTensor *t);
/* KL(p || q) of one token, p = softmax(x), q = softmax(y) over V logits (natural log, double); NaN when a
 * logit is not finite. */
static double qr_metric_token_kl(const float *x, const float *y, int64_t V);
static const char *qr_metric_name(QrMetricKind k);
/* Parses "L1", "Cosine", "MSE", "KL", "SQNR" (case-insensitive) and hmct-debugger's spellings
 * ("cosine-similarity", "kl-divergence", ...). */
static QrStatus qr_metric_parse(const char *s, QrMetricKind *out);
/* true when a larger value means closer to the baseline (Cosine, SQNR). */
static bool qr_metric_higher_is_better(QrMetricKind k);
/* Sort key: larger = worse, for any metric (NaN sorts as worst). */
static double qr_metric_badness(const QrMetrics *m, QrMetricKind k);

#endif
