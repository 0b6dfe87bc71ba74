/* analysis/dist — distribution data for plots (hmct-debugger plot-distribution and
 * get-channelwise-data-distribution): histograms of baseline vs analysis values on shared
 * bins, abs-max, the quantization threshold, the error histogram and per-channel boxes. */
#ifndef QR_DIST_H
#define QR_DIST_H

#define QR_DIST_BINS 128
#define QR_DIST_TOPK 5
_Static_assert(QR_DIST_TOPK + 1 == QR_MEM_DIST_VALUES, "quant/memest.h's QR_MEM_DIST_VALUES is QR_DIST_TOPK + 1");

typedef struct QrChannelBox {
    double min, q1, median, q3, mean, max;   /* of the baseline values of one channel (finite ones) */
    double absmax;
    bool outlier;            /* absmax > QR_OUTLIER_K × the median channel abs-max (weights.h) */
} QrChannelBox;

typedef struct QrDist {
    const char *name;        /* value shown: baseline value / weight name */
    const char *node;        /* node it belongs to (analysis node name; the quantizer's owner) */
    bool is_weight;
    int q;                   /* quantizer in session->qt, -1 if the value has none */
    int rank;
    int64_t dims[QR_MAX_RANK];
    int64_t n;               /* element pairs; values that are NaN/Inf are left out of everything below */
    int64_t n_nonfinite;
    double absmax_base, absmax_anal;
    /* Quantization: clip_lo/hi = scale·(qmin−zp), scale·(qmax−zp), the ends of the grid (per-channel:
     * the widest); threshold = the calibration threshold drawn as the dashed line: scale·(qmax−zp)
     * (= scale·qmax for zero point 0; max over channels), or −clip_lo when that is not positive.
     * NAN without a quantizer. */
    double clip_lo, clip_hi, threshold;
    /* Histograms on shared bins: edge k = lo + k·(hi−lo)/n_bins, k = 0..n_bins; the last bin is closed. */
    int n_bins;
    double lo, hi;
    int64_t *h_base, *h_anal;
    double err_lo, err_hi;   /* error y − x (analysis − baseline) */
    int64_t *h_err;
    /* Per channel (baseline values): activations along axis 1 (rank ≥ 2), weights along the
     * quantizer axis or their output-channel axis (weights.h qr_weight_channel_axis). */
    int ch_axis, n_ch, n_outlier;
    QrChannelBox *ch;
    int match;               /* activations with a baseline counterpart: the match, else -1 */
    /* Over a data set (runall --data, qr_dist_acc_finish): the samples the data cover (0: the
     * one analysed input), values outside the fixed bins (counted, not drawn), and the
     * largest rank-error bound of the channel quantiles as a fraction of a channel's values. */
    int n_samples;
    int64_t n_below, n_above, err_below, err_above;
    double rank_err;
} QrDist;

typedef struct QrDistSet {
    QrArena arena;
    QrArena *arenas;         /* per requested value (computed in parallel): its data */
    int n_arenas;
    int n;
    QrDist *d;
    int n_skipped;           /* requested values that could not be resolved to data */
    char note[512];          /* first reason for a skip */
} QrDistSet;

/* The core on two arrays (x baseline, y analysis; y may be NULL = x): histograms with
 * n_bins shared bins, abs-max, error histogram, per-channel boxes along ch_axis of dims
 * (ch_axis < 0: one channel). clip/threshold are copied in from the caller. Memory comes
 * from a (the set's arena); the strings are borrowed. */
static QrStatus qr_dist_compute(QrArena *a, const float *x, const float *y, int rank, const int64_t *dims, int ch_axis,
                                int n_bins, QrDist *d);

/* Distributions for the QR_DIST_TOPK most sensitive weights and activations of sens
 * (rows of type weight / activation first, then node rows), or for the names given
 * (baseline or analysis node names: the node's output; weight or value names), names
 * overriding sens when n_names > 0. Activations come from one run of the twin with every
 * quantizer on, baselines from session->base (runs the baseline if needed). Unknown names fail. */
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_dist_collect(QrSession *s, const QrSensResult *sens, const char *const *names, int n_names,
                                int n_bins, QrDistSet *out);
#endif
/* The same with the box plots' channel axis chosen (--channel-axis, hmct's axis; negative
 * counts from the end) for every value when have_axis; a value without that axis fails. */
/* The baseline values (per match, want[m.n]: set, never cleared) qr_dist_collect_axis with these
 * sens / names reads, so that a caller dropping the session's baseline values (qr_session_base_drop)
 * can keep them for it and spare it a baseline run (runall's advisor stage). */
static QrStatus qr_dist_base_want(const QrSession *s, const QrSensResult *sens, const char *const *names, int n_names, bool *want);
static QrStatus qr_dist_collect_axis(QrSession *s, const QrSensResult *sens, const char *const *names, int n_names,
                                     int n_bins, bool have_axis, int axis, QrDistSet *out);
static void qr_dist_free(QrDistSet *ds);

/* ==== over a data set ==================================================================
 * The distributions of the requested activations (those with a quantizer and a baseline
 * counterpart) accumulated over every sample from the pairs the comparison reads, in bounded
 * memory: histograms on fixed bins from the quantizer grid — values over [clip_lo − w/8,
 * clip_hi + w/8] (w = clip_hi − clip_lo) and errors over ±4 steps of the grid (its largest
 * scale), QR_DIST_BINS bins each, values beyond counted below/above — exact counts, so merges
 * are exact; per-channel boxes of the baseline values from quantile sketches (analysis/sketch:
 * within each sketch's rank-error bound) with exact min/max and means (exact sums of each
 * sample's channel sums). Weights, graph inputs and values without a quantizer keep the
 * analysed input's distributions (n_samples 0). */
typedef struct QrDistAcc1 {
    int d;                   /* its distribution in the QrDistSet (-1: a candidate, qr_dist_acc_init_all) */
    int match;
    bool filled;             /* its data came from the candidates (qr_dist_acc_take): qr_dist_acc_pair skips it */
    bool geo;                /* ch_axis .. numel set (a candidate: at its first pair) */
    int n_bins;
    double lo, hi, err_lo, err_hi;
    int64_t *h;              /* 3 x (n_bins + 2): base, anal, err; [0] below lo, [n_bins + 1] above hi */
    int64_t n, n_nonfinite;
    double absmax_base, absmax_anal;
    int ch_axis, n_ch;
    int64_t inner, numel;
    QrSketch *sk;            /* per channel: the baseline values */
    QrXSum *ch_sum;          /* per channel: Σ over samples of the sample's channel sum */
} QrDistAcc1;

typedef struct QrDistAcc {
    int n;
    QrDistAcc1 *a;
    int n_samples;
    bool have_axis;          /* candidates: --channel-axis (negative: from the end) */
    int axis;
} QrDistAcc;

static QrStatus qr_dist_acc_init(QrDistAcc *acc, const QrSession *s, const QrDistSet *ds);
static void qr_dist_acc_free(QrDistAcc *acc);
#ifdef QR_TESTING
/* An empty accumulator for the same requests and bins as like (to read a part into). */
QR_TESTAPI QrStatus qr_dist_acc_init_like(QrDistAcc *acc, const QrDistAcc *like);
#endif
/* One compared pair of a sample (x baseline, y analysis, n values) for match. */
static QrStatus qr_dist_acc_pair(QrDistAcc *acc, int match, const float *x, const float *y, int64_t n);
/* runall --data's pass: when --plot-nodes names the values to plot (names[n_names]), the pass
 * accumulates the activations among them that qr_dist_acc_init would accept (candidates: a value
 * with an activation quantizer, a grid and a baseline counterpart, resolved as
 * qr_dist_collect_axis resolves names; names that resolve to nothing are left to it), each fed the
 * same pairs in the same sample order as an accumulator made after the pass would be: the same
 * bits. A candidate's geometry (channel axis: 1 for rank >= 2, or --channel-axis when have_axis)
 * comes from the baseline value at its first pair (s->base[match]: the same shape in every
 * sample). Without names the distributions are chosen by the worst sample's analyses, after the
 * pass: accumulating every activation in it instead costs more than the second pass it saves
 * (docs/DATASET.md). */
static QrStatus qr_dist_acc_init_all(QrDistAcc *acc, const QrSession *s, bool have_axis, int axis, const char *const *names,
                                     int n_names);
static QrStatus qr_dist_acc_pair_all(QrDistAcc *acc, const QrSession *s, int match, const float *x, const float *y, int64_t n);
/* Moves into want's accumulators (qr_dist_acc_init's) the data of all's candidates for the same
 * value with the same bins and geometry (all's samples: want->n_samples), marking them filled;
 * returns how many of want's are left to fill (a second pass, qr_dist_acc_pair, fills only those). */
static int qr_dist_acc_take(QrDistAcc *want, QrDistAcc *all);
/* a += b (same requests). */
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_dist_acc_merge(QrDistAcc *a, const QrDistAcc *b);
#endif
/* Replaces the data of ds's accumulated distributions by the set's (memory from ds's arena). */
static QrStatus qr_dist_acc_finish(const QrDistAcc *acc, QrDistSet *ds);
/* Byte form (for .qrpart), as analysis/sketch's. */
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_dist_acc_put(const QrDistAcc *acc, uint8_t **buf, size_t *len, size_t *cap);
#endif
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_dist_acc_get(QrDistAcc *acc, const uint8_t *p, size_t avail, size_t *used);
#endif

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
static int qr_dist_act_quant_of(const QrSession *s, int v);
static int qr_dist_match_of_value(const QrSession *s, int v);
static const char *qr_dist_node_name(const QrSession *s, int twin_node);
#endif
