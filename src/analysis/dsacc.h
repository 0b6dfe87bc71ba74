/* analysis/dsacc — mergeable accumulators for data-set analyses: an exact sum of doubles
 * (order-independent, so shards merge to the same bits as one process), the pooled metric
 * accumulator built on it, and per-sample metric lists (one number per sample per layer). */
#ifndef QR_DSACC_H
#define QR_DSACC_H

/* ==== exact sum =======================================================================
 * The exact value of a sum of finite doubles, held as 67 signed 32-bit-spaced limbs
 * (bit 0 of limb 0 = 2^-1074). Adding, and merging two sums, is exact integer arithmetic:
 * the result does not depend on the order of the terms, so qr_dsacc_xsum_value (a function of the
 * exact value alone) gives the same bits however the terms were grouped (shards, threads).
 * NaN/Inf terms are counted apart; the value is then NaN or +-Inf. */
#define QR_XSUM_LIMBS 67
typedef struct QrXSum {
    int64_t l[QR_XSUM_LIMBS];
    int32_t pending;         /* additions since the last carry propagation */
    int32_t n_nan, n_pinf, n_ninf;
} QrXSum;

static void qr_dsacc_xsum_add(QrXSum *s, double v);
/* a = a + b (exact). */
static void qr_dsacc_xsum_merge(QrXSum *a, const QrXSum *b);
/* The sum, rounded (a few units in the last place of long double at most): a function of the
 * exact value only. */
static long double qr_dsacc_xsum_value(const QrXSum *s);
/* Carries propagated: every limb but the top one in [0, 2^32) (the canonical form, unique for a
 * value). Serializers write this form. */
static void qr_dsacc_xsum_norm(QrXSum *s);
/* Adds a·b: the product and its rounding error (fma), so the sum holds a·b exactly. */
static void qr_dsacc_xsum_add_prod(QrXSum *s, double a, double b);
/* Adds n·m² with the rounding errors of both products (the last, 2^-53 smaller, rounded). */
static void qr_dsacc_xsum_add_nm2(QrXSum *s, double n, double m);

/* ==== pooled metrics ==================================================================
 * The REPORT.md metrics of all samples' elements together (as if the samples were
 * concatenated), built from each sample's QrMetricAcc: sums exact (QrXSum), minima/maxima
 * exact, the variance from exact sums of n·mean, n·mean² (each product carried with its
 * rounding error) and the samples' m2. KL needs each sample's log-sum-exps (QrDsList). */
typedef struct QrDsPool {
    int64_t n, n_bad;        /* finite pairs, pairs with NaN/Inf */
    int64_t n_samples;       /* samples added */
    QrXSum sxx, syy, sxy, sdd, sad, sx, sy, sx2, sy2, m2x, m2y;
    double amax, rtol, x_min, x_max, y_min, y_max;
} QrDsPool;

static void qr_dsacc_pool_init(QrDsPool *p);
static void qr_dsacc_pool_add(QrDsPool *p, const QrMetricAcc *sample);
static void qr_dsacc_pool_merge(QrDsPool *a, const QrDsPool *b);

/* ==== per-sample lists ================================================================
 * One entry per sample of the data set (indexed by its position in the set, so shards fill
 * disjoint entries and a merge just copies them): the sample's Cosine and SQNR, and what the
 * pooled KL needs (log-sum-exp of x and y, and the sample's softmax expectation of x - y). */
typedef struct QrDsList {
    int n;                   /* samples in the set */
    double *cos, *sqnr, *lse_x, *lse_y, *kl_e;
    uint8_t *has;            /* 1 when the sample was added */
} QrDsList;

static QrStatus qr_dsacc_list_alloc(QrDsList *l, int n);
static void qr_dsacc_list_free(QrDsList *l);
/* Records sample k (acc: the sample's accumulator, m: its finished metrics). */
static void qr_dsacc_list_set(QrDsList *l, int k, const QrMetricAcc *acc, const QrMetrics *m);
/* Copies b's entries into a; fails naming the first sample present in both. */
static QrStatus qr_dsacc_list_merge(QrDsList *a, const QrDsList *b, const char *const *names);

/* The pooled metrics (KL from the list when with_kl, else NaN; Rtol NaN when !with_rtol). */
static void qr_dsacc_pool_finish(const QrDsPool *p, const QrDsList *l, bool with_kl, bool with_rtol, QrMetrics *m);

/* Statistics of one per-sample column (NaN entries excluded from mean and percentile but
 * counted in n_nan; the worst is the lowest value, NaN counting as worst). p05 by linear
 * interpolation between order statistics (numpy's default percentile). */
typedef struct QrDsColStats {
    int n, n_nan;
    double mean, min, p05, p50, p95, max;
    int worst;               /* sample index of the lowest value (first such), -1 when none */
} QrDsColStats;
static void qr_dsacc_col_stats(const double *v, const uint8_t *has, int n, QrDsColStats *out);
/* Percentile q (0..100) of n sorted values, linear interpolation. */
static double qr_dsacc_percentile(const double *sorted, int n, double q);

#endif
