/* analysis/dist — distribution data for plots (hmct-debugger plot-distribution and
 * get-channelwise-data-distribution): histograms of baseline vs analysis values on shared
 * bins, abs-max, the quantization threshold, the error histogram and per-channel boxes. */
#ifndef QR_DIST_H
#define QR_DIST_H

#define QR_DIST_BINS 128
#define QR_DIST_TOPK 5

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
static QrStatus qr_dist_collect_axis(QrSession *s, const QrSensResult *sens, const char *const *names, int n_names,
                                     int n_bins, bool have_axis, int axis, QrDistSet *out);
static void qr_dist_free(QrDistSet *ds);

#endif
