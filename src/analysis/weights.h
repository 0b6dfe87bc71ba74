/* analysis/weights — weight comparison (Numeric Suite's compare_weights): every
 * quantized weight of the analysis model against its float weight, with the
 * fake-quant error, scale range, saturation / round-to-zero shares and channel spread. */
#ifndef QR_WEIGHTS_H
#define QR_WEIGHTS_H

/* Outlier channel: abs-max above QR_OUTLIER_K × the median channel abs-max
 * (the mean of the channel abs-maxima when the median is 0). Shared with dist/advisor. */
#define QR_OUTLIER_K 8.0
/* Blocks listed per blocked weight in weight_blocks.txt/.csv. */
#define QR_WEIGHT_WORST_BLOCKS 3
/* Outlier weight: |w| above QR_WEIGHT_OUTLIER_SIGMA standard deviations of the whole float weight; in a
 * block it sets the block's scale and coarsens every other weight of the block (the advisor's
 * block_outlier_weight). */
#define QR_WEIGHT_OUTLIER_SIGMA 6.0

/* One block listed in weight_blocks (qr__wt_blocks). */
typedef struct QrWtBlk {
    int64_t p;               /* block (index of its scale) */
    double out_share;        /* share of the layer's output error: c_p / sum c, c_p = sum over the block's elements of
                              * E[x_k^2] (w - w_hat)^2 (k the element's input row; NaN without activations) */
    double err_share;        /* share of the weight's error energy sum (w - w_hat)^2 */
    double sqnr, max_err;
    int64_t set_by;          /* flat index (float weight's layout) of the block's largest |w|: the value that sets its scale */
    double set_val, set_sigma;   /* that value, and |value| / the weight's sigma */
} QrWtBlk;

typedef enum QrFloatSrc {
    QR_FW_NONE,              /* integer weight without a float counterpart: only scales are reported */
    QR_FW_BASELINE,          /* the matched baseline float weight (session->fw) */
    QR_FW_QAT,               /* the float initializer a QuantizeLinear reads (QAT / fake-quant export) */
} QrFloatSrc;

typedef struct QrWeightRow {
    int q;                   /* quantizer in session->qt */
    const char *name;        /* float weight name (baseline or QAT), else the integer initializer's */
    const char *node;        /* analysis node it feeds (source node of the twin owner) */
    const char *op_type;
    int rank;
    int64_t dims[QR_MAX_RANK];
    QrDType dtype;
    int axis;                /* quantizer axis, -1 per-tensor */
    int block_size;
    const int32_t *map;      /* scale index per element (g_idx, MatMulBnb4's flat blocks), or NULL:
                              * blocks along axis (the twin's data: valid while the session is) */
    QrFloatSrc src;
    bool has_m;              /* metrics below are valid (a float weight exists) */
    QrMetrics m;             /* x = float weight, y = dequantized quantized weight (SQNR, Cosine, Atol = max abs err) */
    double scale_min, scale_max;
    int64_t n;               /* elements */
    int64_t n_sat;           /* round(w/scale)+zp outside [qmin, qmax]: clipped */
    int64_t n_sat_far;       /* w/scale+zp more than one step outside [qmin, qmax]: clipped by more than a step
                              * (the advisor's saturation; a value clipped by less, e.g. torch's symmetric
                              * qint8 abs-max at 127.5 steps, errs by about a rounding error) */
    int64_t n_zero;          /* w != 0 but quantized to the zero point */
    int64_t n_nonfinite;     /* NaN/Inf weights or scales */
    int64_t n_requant_diff;  /* integer weights that differ from the quantization of the float weight */
    int ch_axis;             /* channel axis used for the spread (quantizer axis, else the output-channel axis) */
    int n_ch;
    double ch_absmax_max, ch_absmax_median;   /* over channels of the float weight (or the dequantized one) */
    int ch_worst;            /* channel with the largest abs-max */
    int n_outlier_ch;        /* channels above QR_OUTLIER_K × median */
    /* Blocked weights (block_size > 0, a float weight known): the blocks with the lowest SQNR,
     * worst first, by parameter index (the scale each block uses). */
    int64_t n_blocks;
    int n_worst;
    int64_t worst_blk[QR_WEIGHT_WORST_BLOCKS];
    double worst_sqnr[QR_WEIGHT_WORST_BLOCKS], worst_err[QR_WEIGHT_WORST_BLOCKS];
    /* The same blocks by error energy (sum of (x - y)^2 over the block), largest first: how much of
     * the weight's error they carry (the advisor's block_error_dominant), with what-ifs measured on
     * the largest: its SQNR re-quantized with half the block size, and with 8-bit codes (min/max
     * asymmetric, round half to even), and the weight's SQNR with the block at half size. */
    double blk_err_total, blk_err_median;   /* over every block */
    int n_dom;
    int64_t dom_blk[QR_WEIGHT_WORST_BLOCKS];
    double dom_err[QR_WEIGHT_WORST_BLOCKS], dom_sqnr[QR_WEIGHT_WORST_BLOCKS];
    double dom_lo, dom_hi;                  /* the largest block's float range */
    double dom_half_sqnr, dom_8bit_sqnr, half_layer_sqnr;
    /* weight_blocks: the QR_WEIGHT_WORST_BLOCKS largest by output-error share (by error energy without
     * activations) and the lowest by SQNR, without repeats, largest share first. */
    bool has_act;            /* the input activations' energy per row was known (baseline run, MatMul / Gemm) */
    double sigma;            /* standard deviation of the float weight (every element) */
    int n_blk;
    QrWtBlk blk[2 * QR_WEIGHT_WORST_BLOCKS];
    /* n_outlier_blk blocks whose largest |w| is above QR_WEIGHT_OUTLIER_SIGMA sigma; of them the one with the
     * largest output-error share (error energy without activations), its rank (0-based) by that share and by
     * SQNR (lowest first); ranks -1 when there is none. */
    int64_t n_outlier_blk;
    QrWtBlk outlier;
    int64_t outlier_rank, outlier_sqnr_rank;
} QrWeightRow;

typedef struct QrWeightCmp {
    QrArena arena;
    int n;
    QrWeightRow *rows;       /* in quantizer (topological) order */
} QrWeightCmp;

/* Compares every WEIGHT quantizer of session->qt. The quantized side is the stored
 * integer weight dequantized when there is one (what the model computes with), else
 * the fake-quant of the float weight (round half to even, saturate, float32 arithmetic
 * as QuantizeLinear). Needs no model run. Rows live in out->arena. */
static QrStatus qr_weights_compare(const QrSession *s, QrWeightCmp *out);
static void qr_weights_free(QrWeightCmp *w);
/* weight_comparison.txt/.csv into dir. */
static QrStatus qr_weights_write(const QrSession *s, const QrWeightCmp *w, const char *dir);

/* Fake-quant helpers shared by the analyses of this group (weights, dist, advisor, what-if).
 * Parameter index of element i of a tensor with dims, per-tensor (n_params 1), per-axis
 * or blocked (block_size > 0) along axis. */
static int64_t qr_weights_param_index(int rank, const int64_t *dims, int axis, int block_size, int64_t n_params, int64_t i);
/* Channel axis for a weight's spread: the quantizer axis when per-axis, else the output
 * channels of its consumer (axis 1 for a MatMul / Gemm(transB=0) right operand, else 0). */
static int qr_weight_channel_axis(const QrGraph *g, const QrQuantizer *q, int rank);

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
static void qr_weights_block_where(const QrWeightRow *r, int axis, int64_t p, char *buf, size_t n);
/* A weight quantizer's data as float arrays: x = the float weight (the dequantized
 * weight when there is none), y = the dequantized quantized weight (the stored integers
 * when there are, else the fake-quant of x), with the saturation / zero counts. x and y
 * are malloc'd (free with qr_weights_wdata_free); ok = false when the quantizer cannot be
 * evaluated (no data, dynamic scale, float8). */
typedef struct QrWtData {
    const QrTensor *w, *iw, *shape;
    QrFloatSrc src;
    bool ok;
    float *x, *y;                /* x: the float weight (borrowed when it is float32: x_borrowed), y: dequantized */
    bool x_borrowed;
    int64_t n, n_sat, n_sat_far, n_zero, n_nonfinite, n_requant_diff;
    double clip_lo, clip_hi;     /* widest real range of the quantization grid */
    const int32_t *map;          /* scale index per element (qreport.int.BlockDequant weights), or NULL */
    bool iw_nbits;               /* iw is a 4-bit MatMulNBits B (read with qr_qtable_nbits_code), of shape shape_own */
    QrTensor shape_own;
    int64_t ny, y0;              /* y holds elements [y0, y0 + ny): the whole weight, or a panel (qr_weights_wdata_fill) */
    /* what qr_weights_wdata_fill reads: the parameters (scale, zero point), the elements on one parameter */
    float *ps;
    int32_t *pz;
    int64_t np, run;
    QrQuantRange range;
    const QrGraph *g;
    const QrQuantizer *q;
} QrWtData;

/* Channel abs-maxima of a weight (qr_weights_spread). */
typedef struct QrWtSpread { int n_ch; double max, median; int worst, n_outlier; } QrWtSpread;

static const char *qr_weights_base_name(const QrGraph *b, const QrTensor *t);
static void qr_weights_clip_range(const QrGraph *g, const QrQuantizer *q, double *lo_out, double *hi_out);
static double qr_weights_median(double *v, int64_t n);
static QrStatus qr_weights_num(QrTable *t, int row, int col, double v, bool csv);
static double qr_weights_outlier_limit(const double *absmax, int64_t n, double median, double k);
static QrStatus qr_weights_spread(const float *x, int rank, const int64_t *dims, int axis, double k, double *absmax_out, QrWtSpread *sp);
/* y is a panel of `panel` elements when the weight has a float weight and more elements (else the whole
 * weight, panel 0 too, filled here): y is then filled by qr_weights_wdata_fill, panel by panel, and
 * the counts (n_sat ...) are complete once every element has been filled once. An LLM's lm_head (49M
 * elements) needs no 196 MB float copy of its dequantized weight. */
static QrStatus qr_weights_wdata_panel(const QrSession *s, int qi, int64_t panel, QrWtData *d);
/* y[0 .. len) = the dequantized elements [i0, i0 + len) (len <= d->ny), adding to the counts. */
static void qr_weights_wdata_fill(QrWtData *d, int64_t i0, int64_t len);
static void qr_weights_wdata_free(QrWtData *d);
static QrStatus qr_weights_write_tables(const QrTable *txt_t, const QrTable *csv_t, const char *header, const char *footer, const char *dir, const char *stem);
#endif
