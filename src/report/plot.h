/* report/plot — raster plots for the report: an RGB canvas with antialiased lines,
 * rectangles and bitmap text, nice-tick axes (linear/log/category), four chart kinds
 * (line, top-k bars, histogram overlay, per-channel box plot) and PNG encoding. */
#ifndef QR_PLOT_H
#define QR_PLOT_H

/* ---- canvas ------------------------------------------------------------------
 * Pixel (x, y) covers [x, x+1) x [y, y+1); coordinates are doubles so that a
 * 1-pixel line at y = 20.5 fills exactly row 20. Every primitive is clipped to
 * the clip rectangle and blends with the colour's alpha (255 = opaque). */

typedef struct QrColor { uint8_t r, g, b, a; } QrColor;

typedef struct QrCanvas {
    int w, h;
    uint8_t *px;                       /* w*h*3 bytes, RGB, row-major; malloc'd */
    int clip_x0, clip_y0, clip_x1, clip_y1;   /* drawing limited to [x0,x1) x [y0,y1) */
} QrCanvas;

#define QR_PLOT_MAX_SIDE 8192          /* largest canvas side qr_canvas_init accepts */

/* Allocates a w x h canvas filled with `bg`; fails with QR_ERR_INVALID for sizes
 * outside 1..QR_PLOT_MAX_SIDE and QR_ERR_NOMEM. Free with qr_canvas_free. */
static QrStatus qr_canvas_init(QrCanvas *c, int w, int h, QrColor bg);
static void qr_canvas_free(QrCanvas *c);
/* Sets the clip rectangle (intersected with the canvas); reset = whole canvas. */
static void qr_canvas_clip(QrCanvas *c, int x0, int y0, int x1, int y1);
static void qr_canvas_clip_reset(QrCanvas *c);
#ifdef QR_TESTING
/* Returns the colour at (x, y) (alpha 255), or transparent black outside. */
QR_TESTAPI QrColor qr_canvas_get(const QrCanvas *c, int x, int y);
#endif

/* Fills the pixels whose centres lie in [x0,x1) x [y0,y1); a non-empty rectangle
 * thinner than a pixel still fills one pixel (crisp edges, no antialiasing). */
static void qr_canvas_fill_rect(QrCanvas *c, double x0, double y0, double x1, double y1, QrColor col);
/* Outline of width `lw` pixels drawn inside [x0,x1) x [y0,y1). */
static void qr_canvas_rect(QrCanvas *c, double x0, double y0, double x1, double y1, int lw, QrColor col);
/* Antialiased line of width `lw` (round caps). Non-finite coordinates draw nothing. */
static void qr_canvas_line(QrCanvas *c, double x0, double y0, double x1, double y1, double lw, QrColor col);
/* Dashed line: `on` pixels drawn, `off` pixels skipped, starting with a dash. */
static void qr_canvas_dashed(QrCanvas *c, double x0, double y0, double x1, double y1, double lw,
                             double on, double off, QrColor col);
/* Antialiased filled disc. */
static void qr_canvas_disc(QrCanvas *c, double cx, double cy, double r, QrColor col);

/* ---- text ----------------------------------------------------------------------
 * The embedded 6x13 font (font.h), monospaced, drawn at an integer scale. Bytes of
 * UTF-8 sequences count as one character and draw as '?'. A string's box is
 * (chars * 6 - 1) * scale wide and 13 * scale tall. */

enum { QR_ALIGN_LEFT = 0, QR_ALIGN_CENTER = 1, QR_ALIGN_RIGHT = 2 };          /* horizontal */
enum { QR_VALIGN_TOP = 0, QR_VALIGN_MIDDLE = 1, QR_VALIGN_BOTTOM = 2 };       /* vertical */
enum { QR_ELLIPSIS_END = 0, QR_ELLIPSIS_MIDDLE = 1 };   /* where a too-long string is cut */

typedef struct QrTextStyle {
    QrColor col;
    int scale;          /* 0 = 1 */
    int halign, valign; /* QR_ALIGN_*, QR_VALIGN_* */
    int max_w;          /* > 0: shortened with an ellipsis to fit this many pixels */
    int ellipsis;       /* QR_ELLIPSIS_* */
    bool vertical;      /* rotated 90 degrees, reading bottom to top; halign then
                           applies along the text (LEFT = starts at y, RIGHT = ends at y) */
} QrTextStyle;

/* Pixel width of `s` at `scale` (0 if empty). */
static int qr_text_width(const char *s, int scale);
/* Draws `s` anchored at (x, y); returns the drawn length in pixels along the text
 * (never more than max_w when max_w > 0). */
static int qr_canvas_text(QrCanvas *c, int x, int y, const char *s, const QrTextStyle *st);

/* ---- scales and ticks ------------------------------------------------------------ */

enum { QR_SCALE_LINEAR = 0, QR_SCALE_LOG = 1, QR_SCALE_AUTO = 2 };

#define QR_PLOT_MAX_TICKS 64
typedef struct QrTicks {
    int n;
    double v[QR_PLOT_MAX_TICKS];
    double step;        /* linear: 1, 2 or 5 x 10^k; log: decades between ticks (0 = 1-2-5 ticks) */
    bool log;
} QrTicks;

/* Ticks at multiples of a 1/2/5 x 10^k step inside [lo, hi] (both included within
 * rounding): the smallest such step giving at most max_ticks (2..64) ticks, which
 * means at least 2 ticks when max_ticks >= 5. A degenerate or non-finite range is
 * widened first. */
static void qr_plot_ticks_linear(double lo, double hi, int max_ticks, QrTicks *t);
/* Log ticks inside [lo, hi] (lo > 0): powers of ten (every k-th decade when there
 * are more than max_ticks), 1-2-5 within a narrow range, linear ticks as a last resort. */
static void qr_plot_ticks_log(double lo, double hi, int max_ticks, QrTicks *t);
/* Compact label for tick v: "0", "0.25", "-3", "1e-6", "2.5e4" (no trailing zeros,
 * precision from the step so that neighbours differ). */
static void qr_plot_tick_label(const QrTicks *t, double v, char *buf, size_t cap);

/* ---- charts --------------------------------------------------------------------
 * Each chart is one call from a plain-data spec; width/height 0 pick a default
 * (900 x 500). NaN values are gaps, +-inf are drawn at the plot edge (line chart:
 * a triangle marker; bars: a bar to the edge labelled "inf"), never a crash.
 * Strings are borrowed for the call; long names are shortened with an ellipsis. */

typedef struct QrSeries {
    const char *name;          /* legend entry (16 per panel at most); NULL = not in the legend */
    const double *y;           /* n_x values (the chart's n_x); NaN = gap */
    bool dashed;
} QrSeries;

typedef struct QrLinePanel {
    const char *y_label;
    const QrSeries *series;
    int n_series;
    int y_scale;               /* QR_SCALE_LINEAR / LOG / AUTO (log when all > 0 and spanning >= 3 decades) */
    bool y_fixed;              /* use [y_min, y_max] instead of the data range */
    double y_min, y_max;
    /* Optional bands (data-set p05-p95): per series k, band_lo[k] / band_hi[k] (n_x values each, or
     * NULL) shade the area between them in the series' colour, behind the lines; NaN = gap. */
    const double *const *band_lo, *const *band_hi;
} QrLinePanel;

typedef struct QrLineChart {
    int width, height;         /* 0 = 900 x 500 (x 700 with two panels) */
    const char *title;
    const char *x_label;
    int n_x;                   /* points per series */
    const char *const *x_names;/* n_x category names (node names) or NULL: x = index 0..n_x-1 */
    QrLinePanel panels[2];     /* stacked top to bottom, sharing the x axis */
    int n_panels;              /* 1 or 2 */
} QrLineChart;

typedef struct QrBarChart {
    int width, height;         /* 0 = 900 wide; 22 px per bar plus margins, at least 300 tall */
    const char *title;
    const char *x_label;       /* the value axis */
    const char *const *names;  /* n names, drawn top to bottom in the given order */
    const double *values;
    int n;
    int top_k;                 /* > 0: only the first top_k items */
    int x_scale;               /* QR_SCALE_LINEAR / LOG / AUTO */
    const char *value_fmt;     /* printf format with one double conversion, NULL = "%.4g" */
} QrBarChart;

typedef struct QrHistChart {
    int width, height;         /* 0 = 900 x 500 (x 700 with the error panel) */
    const char *title;
    const char *x_label;       /* NULL = "value" */
    const float *base, *anal;  /* n values each; anal may be NULL */
    size_t n;
    const char *base_name, *anal_name;   /* legend; NULL = "baseline" / "analysis" */
    int bins;                  /* 0 = 100 */
    double threshold;          /* quantization threshold scale*qmax, drawn dashed at +-; <= 0 or NaN = none */
    bool have_clip_lo;         /* asymmetric grid: draw its lower end clip_lo = scale*(qmin-zp) dashed */
    double clip_lo;            /* instead of -threshold */
    int y_scale;               /* counts: QR_SCALE_LINEAR / LOG / AUTO */
    bool error_panel;          /* second panel: histogram of anal - base (needs anal) */
    /* Precomputed histograms instead of values (used when base is NULL and h_base is set;
     * analysis/dist.h computes them in one pass): counts of n_bins equal bins over [lo, hi],
     * h_anal on the same bins (NULL: none), the error histogram h_err over [err_lo, err_hi]
     * (drawn when error_panel), the baseline abs-max (< 0: none) and the non-finite values
     * that were left out. */
    const int64_t *h_base, *h_anal, *h_err;
    int n_bins;
    double lo, hi, err_lo, err_hi, absmax;
    int64_t n_nonfinite;
} QrHistChart;

typedef struct QrBoxStats { double min, q1, median, q3, max, mean; } QrBoxStats;

typedef struct QrBoxChart {
    int width, height;         /* 0 = 900 x 500 */
    const char *title;
    const char *x_label;       /* NULL = "channel" */
    const char *y_label;       /* NULL = "value" */
    const QrBoxStats *boxes;   /* n channels */
    int n;
    const bool *outlier;       /* n flags (highlighted) or NULL */
} QrBoxChart;

/* Render a chart into a fresh canvas (caller frees with qr_canvas_free). Fails only
 * on bad sizes (QR_ERR_INVALID: below 200x150 or above QR_PLOT_MAX_SIDE) or memory
 * (QR_ERR_NOMEM); then there is nothing to free. Bad data never fails. */
static QrStatus qr_plot_line(const QrLineChart *spec, QrCanvas *out);
static QrStatus qr_plot_bars(const QrBarChart *spec, QrCanvas *out);
static QrStatus qr_plot_hist(const QrHistChart *spec, QrCanvas *out);
static QrStatus qr_plot_box(const QrBoxChart *spec, QrCanvas *out);

#ifdef QR_TESTING
/* Per-channel statistics of data viewed as [outer, channels, inner] (the channel
 * axis in the middle, e.g. NCHW with outer = N, inner = H*W; OIHW weights: outer = 1,
 * inner = I*H*W). NaNs are skipped (infs count); a channel of only NaNs gets NaN
 * stats. Quartiles interpolate linearly (numpy's default). Allocates scratch. */
QR_TESTAPI QrStatus qr_plot_box_stats(const float *data, int64_t outer, int64_t channels, int64_t inner,
                                  QrBoxStats *out);
#endif

/* ---- PNG ---------------------------------------------------------------------------- */

/* Encodes the canvas as an RGB PNG (zlib level 9) into malloc'd memory (*png, *len;
 * caller frees). QR_ERR_NOMEM on failure. */
static QrStatus qr_plot_png(const QrCanvas *c, unsigned char **png, size_t *len);
/* Encodes and writes the PNG to `path` atomically (temp file + rename). */
static QrStatus qr_plot_save(const QrCanvas *c, const char *path);

#endif
