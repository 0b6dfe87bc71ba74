/* report/plot — implementation. See plot.h. Map of this file:
 *   PNG encoding ....... stb_image_write with zlib's compress2 (level 6, "up" filter) and crc32
 *   canvas ............. blend, rectangles, antialiased lines, dashes, discs, triangles
 *   text ............... the font.h glyphs, alignment, rotation, ellipsis
 *   scales and ticks ... linear/log mapping, 1-2-5 ticks, compact labels
 *   chart frame ........ title, legend, numeric/category axes with label thinning
 *   charts ............. line, bars, histogram overlay, box plot */

#include "zlib.h"
#include "src/report/font.h"

/* ==== PNG encoding ======================================================== */

/* Speed over the last bytes: a report's ~20 charts take 0.25 s at zlib level 6 with every
 * row filtered "up" (flat colours and vertical structure), against 1.2 s at level 9 with
 * stb's per-row filter search, for 13% larger files (measured on the qat_fakequant bundle). */
#define QR__PL_ZLIB_LEVEL 6
#define QR__PL_PNG_FILTER 2

/* stb's buffers (the filtered rows, the zlib stream, the PNG) are as large as the canvas:
 * blocks (base.c), reused chart after chart instead of faulted in anew. */
#define STBIW_MALLOC(sz) qr_aligned_alloc(sz)
#define STBIW_FREE(p) qr_aligned_free(p)
#define STBIW_REALLOC_SIZED(p, oldsz, newsz)                                        \
    ({ void *q_ = qr_aligned_alloc(newsz);                                         \
       if (q_ && (p)) { memcpy(q_, (p), QR_MIN((size_t)(oldsz), (size_t)(newsz))); qr_aligned_free(p); } \
       q_; })

/* stb's STBIW_ZLIB_COMPRESS contract: return a zlib stream allocated with
 * STBIW_MALLOC (stb frees it with STBIW_FREE), or NULL on failure. */
static unsigned char *qr__pl_zlib(unsigned char *data, int len, int *out_len, int quality) {
    QR_UNUSED(quality);
    uLongf cap = compressBound((uLong)len);
    unsigned char *out = STBIW_MALLOC(cap);
    if (!out) return NULL;
    if (compress2(out, &cap, data, (uLong)len, QR__PL_ZLIB_LEVEL) != Z_OK || cap > (uLongf)INT32_MAX) { STBIW_FREE(out); return NULL; }
    *out_len = (int)cap;
    return out;
}

#define STBIW_ZLIB_COMPRESS qr__pl_zlib
#define STBIW_CRC32(buf, len) ((unsigned int)crc32(0L, (const Bytef *)(buf), (uInt)(len)))
#define STB_IMAGE_WRITE_STATIC
/* static inline (the header's own suggestion): the BMP/TGA/HDR/JPEG and file writers we
 * do not call are not compiled, and the compiler does not report them as unused. (Not
 * STBI_WRITE_NO_STDIO: with it the header declares stbi_write_hdr_to_func without
 * defining it.) */
#define STBIWDEF static inline
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "stb_image_write.h"

typedef struct QrPlBuf { unsigned char *p; size_t len, cap; bool failed; } QrPlBuf;

static void qr__pl_png_sink(void *ctx, void *data, int size) {
    QrPlBuf *b = ctx;
    if (b->failed || size <= 0) return;
    if (b->len + (size_t)size > b->cap) {
        size_t nc = QR_MAX(b->cap * 2, b->len + (size_t)size + 4096);
        unsigned char *np = realloc(b->p, nc);
        if (!np) { b->failed = true; return; }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, data, (size_t)size);
    b->len += (size_t)size;
}

/* stb's settings are globals: set once. */
static pthread_once_t qr__pl_png_once = PTHREAD_ONCE_INIT;
static void qr__pl_png_setup(void) { stbi_write_force_png_filter = QR__PL_PNG_FILTER; }

static QrStatus qr_plot_png(const QrCanvas *c, unsigned char **png, size_t *len) {
    *png = NULL;
    *len = 0;
    if (!c->px || c->w <= 0 || c->h <= 0) return qr_errf(QR_ERR_INVALID, "plot: PNG of an empty canvas");
    QrPlBuf b = {0};
    pthread_once(&qr__pl_png_once, qr__pl_png_setup);   /* encoders may run in parallel */
    int ok = stbi_write_png_to_func(qr__pl_png_sink, &b, c->w, c->h, 3, c->px, c->w * 3);
    if (!ok || b.failed) {
        free(b.p);
        return qr_errf(QR_ERR_NOMEM, "plot: PNG encoding of a %dx%d image failed", c->w, c->h);
    }
    *png = b.p;
    *len = b.len;
    return QR_OK;
}

static QrStatus qr_plot_save(const QrCanvas *c, const char *path) {
    unsigned char *png;
    size_t len;
    QR_TRY(qr_plot_png(c, &png, &len));
    QrStatus st = qr_file_write_atomic(path, png, len);
    free(png);
    return st == QR_OK ? st : qr_err_wrap(st, "plot %s", path);
}

/* ==== canvas ================================================================ */

static QrStatus qr_canvas_init(QrCanvas *c, int w, int h, QrColor bg) {
    memset(c, 0, sizeof *c);
    if (w < 1 || h < 1 || w > QR_PLOT_MAX_SIDE || h > QR_PLOT_MAX_SIDE)
        return qr_errf(QR_ERR_INVALID, "plot: canvas size %dx%d outside 1..%d", w, h, QR_PLOT_MAX_SIDE);
    c->px = qr_aligned_alloc((size_t)w * (size_t)h * 3);      /* a block: reused chart after chart */
    if (!c->px) return qr_errf(QR_ERR_NOMEM, "plot: out of memory for a %dx%d canvas", w, h);
    c->w = w;
    c->h = h;
    const size_t row = (size_t)w * 3;     /* the first row, then copies of it */
    for (size_t i = 0; i < (size_t)w; i++) {
        c->px[3 * i] = bg.r;
        c->px[3 * i + 1] = bg.g;
        c->px[3 * i + 2] = bg.b;
    }
    for (int y = 1; y < h; y++) memcpy(c->px + (size_t)y * row, c->px, row);
    qr_canvas_clip_reset(c);
    return QR_OK;
}

static void qr_canvas_free(QrCanvas *c) { qr_aligned_free(c->px); memset(c, 0, sizeof *c); }

static void qr_canvas_clip(QrCanvas *c, int x0, int y0, int x1, int y1) {
    c->clip_x0 = QR_MAX(0, x0);
    c->clip_y0 = QR_MAX(0, y0);
    c->clip_x1 = QR_MIN(c->w, x1);
    c->clip_y1 = QR_MIN(c->h, y1);
}

static void qr_canvas_clip_reset(QrCanvas *c) { qr_canvas_clip(c, 0, 0, c->w, c->h); }

#ifdef QR_TESTING
QR_TESTAPI QrColor qr_canvas_get(const QrCanvas *c, int x, int y) {
    QrColor k = {0, 0, 0, 0};
    if (x < 0 || y < 0 || x >= c->w || y >= c->h) return k;
    const uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    k.r = p[0]; k.g = p[1]; k.b = p[2]; k.a = 255;
    return k;
}
#endif

/* One channel's value v blended toward k at opacity a. */
static inline uint8_t qr__pl_mix(uint8_t v, uint8_t k, float a) {
    return (uint8_t)((float)v + ((float)k - (float)v) * a + 0.5f);
}

/* Blends `col` over pixel (x, y) with coverage `cov` in [0, 1], honouring the clip. */
static inline void qr__pl_blend(QrCanvas *c, int x, int y, QrColor col, float cov) {
    if (x < c->clip_x0 || x >= c->clip_x1 || y < c->clip_y0 || y >= c->clip_y1) return;
    float a = cov * (float)col.a * (1.0f / 255.0f);
    if (!(a > 0.0f)) return;
    if (a > 1.0f) a = 1.0f;
    uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    p[0] = qr__pl_mix(p[0], col.r, a);
    p[1] = qr__pl_mix(p[1], col.g, a);
    p[2] = qr__pl_mix(p[2], col.b, a);
}

/* Pixel coordinate -> int without overflow (NaN and huge values are clamped far off-canvas). */
static int qr__pl_ifloor(double v) {
    if (!(v > -1e7)) return -10000000;
    if (v > 1e7) return 10000000;
    return (int)floor(v);
}

static QrColor qr__pl_rgba(int r, int g, int b, int a) {
    QrColor k = {(uint8_t)r, (uint8_t)g, (uint8_t)b, (uint8_t)a};
    return k;
}

static QrColor qr__pl_alpha(QrColor k, int a) { k.a = (uint8_t)a; return k; }

static void qr_canvas_fill_rect(QrCanvas *c, double x0, double y0, double x1, double y1, QrColor col) {
    if (x1 < x0) { double t = x0; x0 = x1; x1 = t; }
    if (y1 < y0) { double t = y0; y0 = y1; y1 = t; }
    if (!(x1 > x0) || !(y1 > y0)) return;                 /* empty or NaN */
    int ix0 = qr__pl_ifloor(x0 + 0.5), ix1 = qr__pl_ifloor(x1 + 0.5);
    int iy0 = qr__pl_ifloor(y0 + 0.5), iy1 = qr__pl_ifloor(y1 + 0.5);
    if (ix1 <= ix0) ix1 = ix0 + 1;
    if (iy1 <= iy0) iy1 = iy0 + 1;
    ix0 = QR_MAX(ix0, c->clip_x0); ix1 = QR_MIN(ix1, c->clip_x1);
    iy0 = QR_MAX(iy0, c->clip_y0); iy1 = QR_MIN(iy1, c->clip_y1);
    if (ix1 <= ix0 || iy1 <= iy0) return;
    /* qr__pl_blend at full coverage: per channel a function of the pixel's old value alone, so a
     * table of it (768 blends) instead of the arithmetic per pixel */
    float a = 1.0f * (float)col.a * (1.0f / 255.0f);
    if (!(a > 0.0f)) return;
    if (a > 1.0f) a = 1.0f;
    const uint8_t k[3] = { col.r, col.g, col.b };
    if ((int64_t)(ix1 - ix0) * (iy1 - iy0) < 256) {     /* (a few pixels: the table would cost more) */
        for (int y = iy0; y < iy1; y++) {
            uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)ix0) * 3;
            for (int x = ix0; x < ix1; x++, p += 3)
                for (int ch = 0; ch < 3; ch++) p[ch] = qr__pl_mix(p[ch], k[ch], a);
        }
        return;
    }
    uint8_t lut[3][256];
    for (int ch = 0; ch < 3; ch++)
        for (int v = 0; v < 256; v++) lut[ch][v] = qr__pl_mix((uint8_t)v, k[ch], a);
    for (int y = iy0; y < iy1; y++) {
        uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)ix0) * 3;
        for (int x = ix0; x < ix1; x++, p += 3) {
            p[0] = lut[0][p[0]];
            p[1] = lut[1][p[1]];
            p[2] = lut[2][p[2]];
        }
    }
}

static void qr_canvas_rect(QrCanvas *c, double x0, double y0, double x1, double y1, int lw, QrColor col) {
    if (x1 < x0) { double t = x0; x0 = x1; x1 = t; }
    if (y1 < y0) { double t = y0; y0 = y1; y1 = t; }
    if (lw < 1) lw = 1;
    if (x1 - x0 <= 2 * lw || y1 - y0 <= 2 * lw) { qr_canvas_fill_rect(c, x0, y0, x1, y1, col); return; }
    qr_canvas_fill_rect(c, x0, y0, x1, y0 + lw, col);
    qr_canvas_fill_rect(c, x0, y1 - lw, x1, y1, col);
    qr_canvas_fill_rect(c, x0, y0 + lw, x0 + lw, y1 - lw, col);
    qr_canvas_fill_rect(c, x1 - lw, y0 + lw, x1, y1 - lw, col);
}

/* Cohen-Sutherland: clips the segment to the clip rectangle grown by m pixels;
 * false when nothing is left. Moving an endpoint onto a boundary interpolates the
 * other coordinate from that endpoint, which stays accurate for ends at +-1e300.
 * Keeps drawing loops bounded for far-off points. */
static int qr__pl_outcode(double x, double y, double x0, double y0, double x1, double y1) {
    return (x < x0) | (x > x1) << 1 | (y < y0) << 2 | (y > y1) << 3;
}

static bool qr__pl_clip_segment(const QrCanvas *c, double m, double *ax, double *ay, double *bx, double *by) {
    double X0 = c->clip_x0 - m, X1 = c->clip_x1 + m, Y0 = c->clip_y0 - m, Y1 = c->clip_y1 + m;
    for (int it = 0; it < 8; it++) {
        int ca = qr__pl_outcode(*ax, *ay, X0, Y0, X1, Y1), cb = qr__pl_outcode(*bx, *by, X0, Y0, X1, Y1);
        if (!(ca | cb)) return true;
        if (ca & cb) return false;
        bool first = ca != 0;
        int code = first ? ca : cb;
        double *px = first ? ax : bx, *py = first ? ay : by, ox = first ? *bx : *ax, oy = first ? *by : *ay;
        if (code & 3) {
            double X = code & 1 ? X0 : X1;
            *py += (oy - *py) * ((X - *px) / (ox - *px));
            *px = X;
        } else {
            double Y = code & 4 ? Y0 : Y1;
            *px += (ox - *px) * ((Y - *py) / (oy - *py));
            *py = Y;
        }
    }
    return false;
}

/* Distance from (px, py) to the segment a-b. */
static double qr__pl_seg_dist(double px, double py, double ax, double ay, double bx, double by) {
    double dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy, t = 0;
    if (l2 > 0) { t = ((px - ax) * dx + (py - ay) * dy) / l2; t = t < 0 ? 0 : t > 1 ? 1 : t; }
    double ex = ax + t * dx - px, ey = ay + t * dy - py;
    return sqrt(ex * ex + ey * ey);
}

/* Coverage = how much of a pixel a capsule of radius r around the segment covers,
 * approximated by r + 0.5 - distance of the pixel centre. Visits only a band of
 * pixels around the segment: one column (or row) per step along its major axis. */
static void qr_canvas_line(QrCanvas *c, double x0, double y0, double x1, double y1, double lw, QrColor col) {
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1) || !(lw > 0)) return;
    double r = lw * 0.5;
    if (!qr__pl_clip_segment(c, r + 2, &x0, &y0, &x1, &y1)) return;
    double dx = x1 - x0, dy = y1 - y0;
    bool steep = fabs(dy) > fabs(dx);
    /* Work in (u, v) = (major, minor) coordinates. */
    double u0 = steep ? y0 : x0, v0 = steep ? x0 : y0, u1 = steep ? y1 : x1, v1 = steep ? x1 : y1;
    if (u1 < u0) { double t = u0; u0 = u1; u1 = t; t = v0; v0 = v1; v1 = t; }
    double slope = u1 > u0 ? (v1 - v0) / (u1 - u0) : 0;
    double half = r * sqrt(1 + slope * slope) + 1.5;
    int umin = steep ? c->clip_y0 : c->clip_x0, umax = steep ? c->clip_y1 : c->clip_x1;
    int vmin = steep ? c->clip_x0 : c->clip_y0, vmax = steep ? c->clip_x1 : c->clip_y1;
    int ua = QR_MAX(qr__pl_ifloor(u0 - r - 1), umin), ub = QR_MIN(qr__pl_ifloor(u1 + r + 1), umax - 1);
    for (int u = ua; u <= ub; u++) {
        double uc = u + 0.5, ut = uc < u0 ? u0 : uc > u1 ? u1 : uc;
        double vl = v0 + (ut - u0) * slope;
        int va = QR_MAX(qr__pl_ifloor(vl - half), vmin), vb = QR_MIN(qr__pl_ifloor(vl + half), vmax - 1);
        for (int v = va; v <= vb; v++) {
            double px = steep ? v + 0.5 : uc, py = steep ? uc : v + 0.5;
            double cov = r + 0.5 - qr__pl_seg_dist(px, py, x0, y0, x1, y1);
            if (cov <= 0) continue;
            qr__pl_blend(c, steep ? v : u, steep ? u : v, col, cov > 1 ? 1.0f : (float)cov);
        }
    }
}

/* A segment of a dashed polyline; *phase carries the dash position across
 * segments (on < 0.5 draws solid). */
static void qr__pl_dash_seg(QrCanvas *c, double x0, double y0, double x1, double y1, double lw, double on,
                            double off, double *phase, QrColor col) {
    if (!(on >= 0.5)) { qr_canvas_line(c, x0, y0, x1, y1, lw, col); return; }
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1)) return;
    double ox = x0, oy = y0;
    if (!qr__pl_clip_segment(c, lw + 2, &x0, &y0, &x1, &y1)) return;
    double period = on + (off > 0 ? off : 0);
    double skipped = hypot(x0 - ox, y0 - oy);               /* keep the pattern anchored */
    double len = hypot(x1 - x0, y1 - y0);
    if (len <= 0) return;
    double ux = (x1 - x0) / len, uy = (y1 - y0) / len;
    double ph = fmod(*phase + skipped, period);
    for (double s = -ph; s < len; s += period) {             /* s: start of a dash period */
        double a = QR_MAX(s, 0.0), b = QR_MIN(s + on, len);
        if (b > a) qr_canvas_line(c, x0 + ux * a, y0 + uy * a, x0 + ux * b, y0 + uy * b, lw, col);
    }
    *phase = fmod(ph + len, period);
}

static void qr_canvas_dashed(QrCanvas *c, double x0, double y0, double x1, double y1, double lw, double on,
                             double off, QrColor col) {
    double phase = 0;
    qr__pl_dash_seg(c, x0, y0, x1, y1, lw, on, off, &phase, col);
}

static void qr_canvas_disc(QrCanvas *c, double cx, double cy, double r, QrColor col) {
    if (!isfinite(cx) || !isfinite(cy) || !(r > 0) || r > 1e4) return;
    int xa = QR_MAX(qr__pl_ifloor(cx - r - 1), c->clip_x0), xb = QR_MIN(qr__pl_ifloor(cx + r + 1), c->clip_x1 - 1);
    int ya = QR_MAX(qr__pl_ifloor(cy - r - 1), c->clip_y0), yb = QR_MIN(qr__pl_ifloor(cy + r + 1), c->clip_y1 - 1);
    for (int y = ya; y <= yb; y++)
        for (int x = xa; x <= xb; x++) {
            double cov = r + 0.5 - hypot(x + 0.5 - cx, y + 0.5 - cy);
            if (cov > 0) qr__pl_blend(c, x, y, col, cov > 1 ? 1.0f : (float)cov);
        }
}

/* A small isosceles triangle with its tip at (cx, tip_y), pointing up or down. */
static void qr__pl_triangle(QrCanvas *c, double cx, double tip_y, int size, bool up, QrColor col) {
    for (int i = 0; i < size; i++) {
        double y = up ? tip_y + i : tip_y - i - 1;
        qr_canvas_fill_rect(c, cx - i * 0.6 - 0.5, y, cx + i * 0.6 + 0.5, y + 1, col);
    }
}

/* ==== text ================================================================== */

#define QR__PL_MAX_GLYPHS 1400   /* more than fit across the widest canvas */

/* Glyph codes of `s`: UTF-8 continuation bytes are skipped, other non-ASCII and
 * control bytes become '?'. Returns the count (at most cap). */
static int qr__pl_glyphs(const char *s, unsigned char *g, int cap) {
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && n < cap; p++) {
        if ((*p & 0xc0) == 0x80) continue;
        g[n++] = (*p >= 32 && *p < 127) ? *p : '?';
    }
    return n;
}

static int qr_text_width(const char *s, int scale) {
    unsigned char g[QR__PL_MAX_GLYPHS];
    int n = qr__pl_glyphs(s, g, QR__PL_MAX_GLYPHS);
    if (scale < 1) scale = 1;
    return n ? (n * QR_FONT_ADVANCE - 1) * scale : 0;
}

static int qr_canvas_text(QrCanvas *c, int x, int y, const char *s, const QrTextStyle *st) {
    unsigned char g[QR__PL_MAX_GLYPHS];
    int n = qr__pl_glyphs(s, g, QR__PL_MAX_GLYPHS), sc = st->scale < 1 ? 1 : st->scale;
    if (st->max_w > 0 && (n * QR_FONT_ADVANCE - 1) * sc > st->max_w) {
        int m = (st->max_w / sc + 1) / QR_FONT_ADVANCE;          /* glyphs that fit */
        if (m <= 0) return 0;
        if (st->ellipsis == QR_ELLIPSIS_MIDDLE && m >= 4) {
            int head = (m - 1) * 2 / 5, tail = m - 1 - head;    /* node names: the tail says most */
            memmove(g + head + 1, g + n - tail, (size_t)tail);
            g[head] = QR_FONT_ELLIPSIS;
        } else {
            g[m - 1] = QR_FONT_ELLIPSIS;
        }
        n = m;
    }
    if (n == 0) return 0;
    int len = (n * QR_FONT_ADVANCE - 1) * sc, th = QR_FONT_HEIGHT * sc;
    int along = st->halign == QR_ALIGN_CENTER ? len / 2 : st->halign == QR_ALIGN_RIGHT ? len : 0;
    int across = st->valign == QR_VALIGN_MIDDLE ? th / 2 : st->valign == QR_VALIGN_BOTTOM ? th : 0;
    /* Origin of the glyph box: horizontal text runs right from (ox, oy); vertical
     * text runs up from its bottom end (ox = glyph tops, oy = start). */
    int ox = st->vertical ? x - across : x - along;
    int oy = st->vertical ? y + along : y - across;
    for (int i = 0; i < n; i++) {
        const unsigned char *rows = qr_font_rows[g[i] - QR_FONT_FIRST];
        for (int gy = 0; gy < QR_FONT_HEIGHT; gy++) {
            if (!rows[gy]) continue;
            for (int gx = 0; gx < 5; gx++) {
                if (!(rows[gy] & (0x10 >> gx))) continue;
                int u = (i * QR_FONT_ADVANCE + gx) * sc, v = gy * sc;
                for (int a = 0; a < sc; a++)
                    for (int b = 0; b < sc; b++) {
                        if (st->vertical) qr__pl_blend(c, ox + v + b, oy - 1 - (u + a), st->col, 1.0f);
                        else qr__pl_blend(c, ox + u + a, oy + v + b, st->col, 1.0f);
                    }
            }
        }
    }
    return len;
}

/* ==== scales and ticks ======================================================== */

typedef struct QrPlScale {
    bool log;
    double lo, hi;      /* domain (lo > 0 when log) */
    double p0, p1;      /* pixel positions of lo and hi */
} QrPlScale;

/* Domain value -> pixel; NaN for NaN (and for v <= 0 on a log scale), +-inf kept. */
static double qr__pl_map(const QrPlScale *s, double v) {
    double t;
    if (s->log) {
        if (!(v > 0)) return v == 0 || v == -INFINITY ? -INFINITY * (s->p1 - s->p0) : NAN;
        t = (log10(v) - log10(s->lo)) / (log10(s->hi) - log10(s->lo));
    } else {
        t = (v - s->lo) / (s->hi - s->lo);
    }
    return s->p0 + t * (s->p1 - s->p0);
}

/* 1, 2 or 5 x 10^k: the k-th step of the sequence ..., 0.5, 1, 2, 5, 10, ... */
static double qr__pl_step125(int k) {
    static const double m[3] = {1, 2, 5};
    int e = k >= 0 ? k / 3 : -((-k + 2) / 3);
    return m[k - 3 * e] * pow(10.0, e);
}

/* Widens a degenerate or non-finite range to something drawable. */
static void qr__pl_fix_range(double *lo, double *hi) {
    if (!isfinite(*lo) && !isfinite(*hi)) { *lo = 0; *hi = 1; }
    else if (!isfinite(*lo)) *lo = *hi - 1;
    else if (!isfinite(*hi)) *hi = *lo + 1;
    *lo = QR_MAX(*lo, -1e300);
    *hi = QR_MIN(*hi, 1e300);
    if (*hi < *lo) { double t = *lo; *lo = *hi; *hi = t; }
    if (!(*hi - *lo > fabs(*hi) * 1e-12)) {
        double d = *lo == 0 ? 1 : fmax(fabs(*lo) * 0.1, 1e-290);
        *lo -= d;
        *hi += d;
    }
}

static void qr_plot_ticks_linear(double lo, double hi, int max_ticks, QrTicks *t) {
    memset(t, 0, sizeof *t);
    max_ticks = QR_MAX(2, QR_MIN(max_ticks, QR_PLOT_MAX_TICKS));
    qr__pl_fix_range(&lo, &hi);
    double range = hi - lo, eps = range * 1e-9;
    int k = 3 * (int)floor(log10(range / max_ticks)) - 3;
    double step = qr__pl_step125(k);
    for (int guard = 0; guard < 40; guard++, step = qr__pl_step125(++k)) {
        double a = ceil((lo - eps) / step), b = floor((hi + eps) / step);
        if (b - a + 1 <= max_ticks) break;
    }
    t->step = step;
    double a = ceil((lo - eps) / step), b = floor((hi + eps) / step);
    for (double i = a; i <= b && t->n < QR_PLOT_MAX_TICKS; i++) {
        double v = i * step;
        t->v[t->n++] = fabs(v) < step * 1e-6 ? 0 : v;
    }
}

static void qr_plot_ticks_log(double lo, double hi, int max_ticks, QrTicks *t) {
    max_ticks = QR_MAX(2, QR_MIN(max_ticks, QR_PLOT_MAX_TICKS));
    if (!(lo > 0) || !(hi > lo) || !isfinite(hi) || lo < 1e-300) { qr_plot_ticks_linear(lo, hi, max_ticks, t); return; }
    memset(t, 0, sizeof *t);
    t->log = true;
    double llo = log10(lo), lhi = log10(hi);
    int d0 = (int)ceil(llo - 1e-9), d1 = (int)floor(lhi + 1e-9);
    if (d1 - d0 + 1 >= 2) {                                /* powers of ten */
        int stride = (d1 - d0 + max_ticks) / max_ticks;
        int first = (int)(ceil((double)d0 / stride) * stride);
        t->step = stride;
        for (int d = first; d <= d1 && t->n < QR_PLOT_MAX_TICKS; d += stride) t->v[t->n++] = pow(10.0, d);
        return;
    }
    static const double m[3] = {1, 2, 5};                  /* a narrow range: 1-2-5 */
    for (int d = d0 - 1; d <= d1 && t->n < QR_PLOT_MAX_TICKS; d++)
        for (int j = 0; j < 3; j++) {
            double v = m[j] * pow(10.0, d);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9) && t->n < QR_PLOT_MAX_TICKS) t->v[t->n++] = v;
        }
    if (t->n >= 2 && t->n <= max_ticks) return;
    qr_plot_ticks_linear(lo, hi, max_ticks, t);              /* less than a decade */
}

/* "1.50e+06" -> "1.5e6": drops mantissa zeros, the '+' and exponent zeros. */
static void qr__pl_compact_exp(char *s) {
    char *e = strchr(s, 'e');
    if (!e) return;
    char exp[16], *p = e + 1, *w = exp;
    if (*p == '+') p++;
    else if (*p == '-') *w++ = *p++;
    while (*p == '0' && p[1]) p++;
    while (*p && w < exp + sizeof exp - 1) *w++ = *p++;
    *w = 0;
    char *m = e;                                            /* strip mantissa zeros */
    if (memchr(s, '.', (size_t)(e - s))) {
        while (m > s && m[-1] == '0') m--;
        if (m > s && m[-1] == '.') m--;
    }
    snprintf(m, 18, "e%s", exp);
}

static void qr_plot_tick_label(const QrTicks *t, double v, char *buf, size_t cap) {
    if (!isfinite(v)) { snprintf(buf, cap, "%s", v > 0 ? "inf" : v < 0 ? "-inf" : "nan"); return; }
    v += 0.0;                                               /* -0 -> 0 */
    if (t->log || !(t->step > 0)) {
        if (v == 0) { snprintf(buf, cap, "0"); return; }
        int e = (int)floor(log10(fabs(v)) + 1e-9);
        if (e >= -3 && e <= 4) snprintf(buf, cap, "%.*f", QR_MAX(0, -e), v);   /* one significant digit */
        else { snprintf(buf, cap, "%.2e", v); qr__pl_compact_exp(buf); }
        return;
    }
    double maxabs = 0;
    for (int i = 0; i < t->n; i++) maxabs = QR_MAX(maxabs, fabs(t->v[i]));
    if (maxabs == 0) maxabs = fabs(v);
    int se = (int)floor(log10(t->step) + 1e-9);
    if (maxabs >= 1e6 || maxabs < 1e-4) {
        if (v == 0) { snprintf(buf, cap, "0"); return; }
        int digits = (int)floor(log10(fabs(v)) + 1e-9) - se;
        snprintf(buf, cap, "%.*e", QR_MAX(0, QR_MIN(digits, 12)), v);
        qr__pl_compact_exp(buf);
    } else {
        snprintf(buf, cap, "%.*f", QR_MAX(0, QR_MIN(-se, 12)), v);
    }
}

/* ==== chart frame: palette, layout, legend, axes ================================= */

typedef struct QrPlRect { int x0, y0, x1, y1; } QrPlRect;

/* Okabe-Ito: distinguishable with the common colour-vision deficiencies. */
static const QrColor qr__pl_palette[8] = {
    {0, 114, 178, 255}, {230, 159, 0, 255}, {0, 158, 115, 255}, {213, 94, 0, 255},
    {204, 121, 167, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {136, 136, 136, 255},
};
#define QR__PL_BG     ((QrColor){255, 255, 255, 255})
#define QR__PL_INK    ((QrColor){34, 34, 34, 255})
#define QR__PL_MUTED  ((QrColor){96, 96, 96, 255})
#define QR__PL_AXIS   ((QrColor){70, 70, 70, 255})
#define QR__PL_GRID   ((QrColor){228, 228, 228, 255})
#define QR__PL_HILITE ((QrColor){213, 94, 0, 255})
#define QR__PL_LINE_H 13                /* one text line */

static QrTextStyle qr__pl_style(QrColor col, int halign, int valign, int max_w) {
    QrTextStyle st = {col, 1, halign, valign, max_w, QR_ELLIPSIS_MIDDLE, false};
    return st;
}

/* Creates the canvas and draws the title; *top = first free row below it. */
static QrStatus qr__pl_begin(QrCanvas *c, int w, int h, const char *title, int *top) {
    if (w < 200 || h < 150 || w > QR_PLOT_MAX_SIDE || h > QR_PLOT_MAX_SIDE)
        return qr_errf(QR_ERR_INVALID, "plot: chart size %dx%d outside 200x150..%d", w, h, QR_PLOT_MAX_SIDE);
    QR_TRY(qr_canvas_init(c, w, h, QR__PL_BG));
    *top = 12;
    if (title && *title) {
        QrTextStyle st = {QR__PL_INK, 2, QR_ALIGN_CENTER, QR_VALIGN_TOP, w - 24, QR_ELLIPSIS_END, false};
        qr_canvas_text(c, w / 2, 10, title, &st);
        *top = 10 + 2 * QR__PL_LINE_H + 10;
    }
    return QR_OK;
}

enum { QR__PL_SW_LINE, QR__PL_SW_DASH, QR__PL_SW_BOX, QR__PL_SW_DOT, QR__PL_SW_NONE };
typedef struct QrPlLegend { const char *name; QrColor col; int swatch; } QrPlLegend;
#define QR__PL_LEGEND_ROW 18
#define QR__PL_LEGEND_NAME_W 260        /* longer names are shortened */

static int qr__pl_legend_item_w(const QrPlLegend *it) {
    int tw = QR_MIN(qr_text_width(it->name, 1), QR__PL_LEGEND_NAME_W);
    return (it->swatch == QR__PL_SW_NONE ? 0 : 28) + tw;
}

/* Lays out legend items left to right in rows of at most `width` pixels; draws
 * them when c != NULL. Returns the number of rows. */
static int qr__pl_legend(QrCanvas *c, const QrPlLegend *it, int n, int x0, int y0, int width) {
    int rows = 0, x = 0;
    for (int i = 0; i < n; i++) {
        if (!it[i].name) continue;
        int w = QR_MIN(qr__pl_legend_item_w(&it[i]), width);
        if (rows == 0 || (x > 0 && x + w > width)) { rows++; x = 0; }
        if (c) {
            int sx = x0 + x, cy = y0 + (rows - 1) * QR__PL_LEGEND_ROW + QR__PL_LINE_H / 2;
            QrColor k = it[i].col;
            if (it[i].swatch == QR__PL_SW_LINE) qr_canvas_line(c, sx, cy, sx + 22, cy, 2, k);
            else if (it[i].swatch == QR__PL_SW_DASH) qr_canvas_dashed(c, sx, cy, sx + 22, cy, 2, 5, 3, k);
            else if (it[i].swatch == QR__PL_SW_BOX) {
                qr_canvas_fill_rect(c, sx + 3, cy - 5, sx + 19, cy + 6, qr__pl_alpha(k, 110));
                qr_canvas_rect(c, sx + 3, cy - 5, sx + 19, cy + 6, 1, k);
            } else if (it[i].swatch == QR__PL_SW_DOT) qr_canvas_disc(c, sx + 11, cy + 0.5, 3.5, k);
            int tx = sx + (it[i].swatch == QR__PL_SW_NONE ? 0 : 28);
            QrTextStyle st = qr__pl_style(it[i].swatch == QR__PL_SW_NONE ? QR__PL_MUTED : QR__PL_INK,
                                          QR_ALIGN_LEFT, QR_VALIGN_MIDDLE,
                                          QR_MAX(1, QR_MIN(QR__PL_LEGEND_NAME_W, x0 + width - tx)));
            qr_canvas_text(c, tx, cy, it[i].name, &st);
        }
        x += w + 20;
    }
    return rows;
}

/* Range accumulation over finite values (positive only for a log scale). */
typedef struct QrPlRange { double lo, hi; bool have; } QrPlRange;

static void qr__pl_range_add(QrPlRange *r, double v, bool log) {
    if (!isfinite(v) || (log && !(v > 0))) return;
    if (!r->have) { r->lo = r->hi = v; r->have = true; return; }
    if (v < r->lo) r->lo = v;
    if (v > r->hi) r->hi = v;
}

/* Builds a scale over the data range `r` (padded by `pad` of the span on both
 * sides; log scales pad in decades) mapped to pixels p0 -> p1, and its ticks:
 * about one per px_per_tick pixels, between 5 and 12. */
static void qr__pl_scale(QrPlRange r, bool log, double pad, double p0, double p1, int px_per_tick, QrPlScale *s,
                         QrTicks *t) {
    int max_ticks = QR_MAX(5, QR_MIN(12, (int)(fabs(p1 - p0) / px_per_tick)));
    double lo = r.have ? r.lo : log ? 1 : 0, hi = r.have ? r.hi : log ? 10 : 1;
    s->log = log;
    if (log) {
        double a = log10(QR_MAX(lo, 1e-300)), b = log10(QR_MIN(hi, 1e300));
        if (!(b - a > 1e-9)) { a -= 0.5; b += 0.5; }
        double d = (b - a) * pad;
        s->lo = pow(10.0, a - d);
        s->hi = pow(10.0, b + d);
        qr_plot_ticks_log(s->lo, s->hi, max_ticks, t);
    } else {
        qr__pl_fix_range(&lo, &hi);
        double d = (hi - lo) * pad;
        s->lo = lo - d;
        s->hi = hi + d;
        qr_plot_ticks_linear(s->lo, s->hi, max_ticks, t);
    }
    s->p0 = p0;
    s->p1 = p1;
}

/* Width of the widest tick label. */
static int qr__pl_tick_labels_w(const QrTicks *t) {
    int w = 0;
    char buf[48];
    for (int i = 0; i < t->n; i++) {
        qr_plot_tick_label(t, t->v[i], buf, sizeof buf);
        w = QR_MAX(w, qr_text_width(buf, 1));
    }
    return w;
}

/* Smallest label stride so that labels needing `need` pixels each do not collide
 * when items are `spacing` pixels apart. */
static int qr__pl_stride(double spacing, int need) {
    if (!(spacing > 0)) return INT32_MAX;
    double s = ceil(need / spacing);
    return s < 1 ? 1 : s > 1e9 ? 1000000000 : (int)s;
}

/* Smallest distance between neighbouring positions (1e9 for fewer than two). */
static double qr__pl_min_gap(const double *p, int n) {
    double g = 1e9;
    for (int i = 1; i < n; i++) g = fmin(g, fabs(p[i] - p[i - 1]));
    return g;
}

/* Vertical axis on the left of `r`: grid lines across r, tick marks, labels
 * thinned so that neighbours are at least one line apart, rotated title. */
static void qr__pl_yaxis(QrCanvas *c, QrPlRect r, const QrPlScale *s, const QrTicks *t, const char *title,
                         int title_x) {
    double py[QR_PLOT_MAX_TICKS] = {0};
    for (int i = 0; i < t->n; i++) py[i] = floor(qr__pl_map(s, t->v[i])) + 0.5;
    int stride = qr__pl_stride(qr__pl_min_gap(py, t->n), QR__PL_LINE_H + 3);
    char buf[48];
    for (int i = 0; i < t->n; i++) {
        if (!(py[i] >= r.y0 - 0.5 && py[i] <= r.y1 + 0.5)) continue;
        qr_canvas_line(c, r.x0, py[i], r.x1, py[i], 1, QR__PL_GRID);
        qr_canvas_line(c, r.x0 - 5, py[i], r.x0, py[i], 1, QR__PL_AXIS);
        if (i % stride) continue;
        qr_plot_tick_label(t, t->v[i], buf, sizeof buf);
        QrTextStyle st = qr__pl_style(QR__PL_INK, QR_ALIGN_RIGHT, QR_VALIGN_MIDDLE, 0);
        qr_canvas_text(c, r.x0 - 8, (int)py[i], buf, &st);
    }
    if (title && *title) {
        QrTextStyle st = qr__pl_style(QR__PL_INK, QR_ALIGN_CENTER, QR_VALIGN_TOP, r.y1 - r.y0);
        st.vertical = true;
        qr_canvas_text(c, title_x, (r.y0 + r.y1) / 2, title, &st);
    }
}

/* Horizontal numeric axis below `r` (labels only when `labels`). */
static void qr__pl_xaxis(QrCanvas *c, QrPlRect r, const QrPlScale *s, const QrTicks *t, bool grid, bool labels) {
    double px[QR_PLOT_MAX_TICKS] = {0};
    char buf[QR_PLOT_MAX_TICKS][48];
    int maxw = 0;
    for (int i = 0; i < t->n; i++) {
        px[i] = floor(qr__pl_map(s, t->v[i])) + 0.5;
        qr_plot_tick_label(t, t->v[i], buf[i], sizeof buf[i]);
        maxw = QR_MAX(maxw, qr_text_width(buf[i], 1));
    }
    int stride = qr__pl_stride(qr__pl_min_gap(px, t->n), maxw + 12);
    for (int i = 0; i < t->n; i++) {
        if (!(px[i] >= r.x0 - 0.5 && px[i] <= r.x1 + 0.5)) continue;
        if (grid) qr_canvas_line(c, px[i], r.y0, px[i], r.y1, 1, QR__PL_GRID);
        qr_canvas_line(c, px[i], r.y1, px[i], r.y1 + 5, 1, QR__PL_AXIS);
        if (!labels || i % stride) continue;
        int w = qr_text_width(buf[i], 1), x = (int)px[i] - w / 2;
        x = QR_MAX(2, QR_MIN(x, c->w - 2 - w));              /* never cut by the canvas edge */
        QrTextStyle st = qr__pl_style(QR__PL_INK, QR_ALIGN_LEFT, QR_VALIGN_TOP, 0);
        qr_canvas_text(c, x, r.y1 + 7, buf[i], &st);
    }
}

/* Category axis below `r`: n slots; names drawn rotated (reading upwards, ending
 * at the axis), shortened to label_h pixels, every stride-th so they never touch. */
static void qr__pl_xcats(QrCanvas *c, QrPlRect r, int n, const char *const *names, size_t skip, int label_h,
                         bool labels) {
    if (n <= 0) return;
    double slot = (double)(r.x1 - r.x0) / n;
    int stride = qr__pl_stride(slot, QR__PL_LINE_H + 3);
    for (int i = 0; i < n; i += stride) {
        double cx = floor(r.x0 + (i + 0.5) * slot) + 0.5;
        qr_canvas_line(c, cx, r.y1, cx, r.y1 + 4, 1, QR__PL_AXIS);
        if (!labels) continue;
        QrTextStyle st = qr__pl_style(QR__PL_INK, QR_ALIGN_RIGHT, QR_VALIGN_MIDDLE, label_h);
        st.vertical = true;
        qr_canvas_text(c, (int)cx, r.y1 + 7, names[i] ? names[i] + skip : "", &st);
    }
}

/* Integer quantities (indices, counts): a step below 1 becomes 1. */
static void qr__pl_int_ticks(QrTicks *t, double lo, double hi) {
    if (t->log || t->step >= 1) return;
    t->step = 1;
    t->n = 0;
    for (double v = ceil(lo); v <= hi && t->n < QR_PLOT_MAX_TICKS; v++) t->v[t->n++] = v;
}

/* Ticks at integer positions 0..n-1 (index axes) mapped over [-0.5, n-0.5]. */
static void qr__pl_index_axis(int n, QrPlRect r, QrPlScale *s, QrTicks *t) {
    s->log = false;
    s->lo = -0.5;
    s->hi = n - 0.5;
    s->p0 = r.x0;
    s->p1 = r.x1;
    int max_ticks = QR_MAX(5, QR_MIN(16, (r.x1 - r.x0) / 70));
    qr_plot_ticks_linear(0, QR_MAX(n - 1, 1), max_ticks, t);
    qr__pl_int_ticks(t, 0, n - 1);
}

/* Left and bottom spines. */
static void qr__pl_spines(QrCanvas *c, QrPlRect r) {
    qr_canvas_fill_rect(c, r.x0 - 1, r.y0, r.x0, r.y1 + 1, QR__PL_AXIS);
    qr_canvas_fill_rect(c, r.x0 - 1, r.y1, r.x1, r.y1 + 1, QR__PL_AXIS);
}

/* A note in the empty plot area ("no finite values"). */
static void qr__pl_note(QrCanvas *c, QrPlRect r, const char *msg) {
    QrTextStyle st = qr__pl_style(QR__PL_MUTED, QR_ALIGN_CENTER, QR_VALIGN_MIDDLE, r.x1 - r.x0 - 8);
    qr_canvas_text(c, (r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2, msg, &st);
}

static bool qr__pl_rect_ok(QrPlRect r) { return r.x1 - r.x0 >= 20 && r.y1 - r.y0 >= 20; }

/* ==== line chart ================================================================= */

/* Length of the prefix shared by all names, up to and including its last '/'
 * ("/model/" of "/model/layer1/Conv", "/model/layer2/Relu"): category labels drop
 * it so that the shortened labels keep the part that differs. 0 when none. */
static size_t qr__pl_common_prefix(const char *const *names, int n) {
    if (n < 2 || !names[0]) return 0;
    size_t p = strlen(names[0]);
    for (int i = 1; i < n && p; i++) {
        if (!names[i]) return 0;
        size_t k = 0;
        while (k < p && names[i][k] && names[i][k] == names[0][k]) k++;
        p = k;
    }
    while (p > 0 && names[0][p - 1] != '/') p--;
    for (int i = 0; i < n && p; i++) if (!names[i][p]) return 0;    /* a name would vanish */
    return p >= 2 ? p : 0;
}

static bool qr__pl_panel_log(const QrLinePanel *p, int n) {
    if (p->y_scale == QR_SCALE_LINEAR) return false;
    QrPlRange pos = {0}, all = {0};
    for (int s = 0; s < p->n_series; s++)
        for (int i = 0; p->series[s].y && i < n; i++) {
            qr__pl_range_add(&pos, p->series[s].y[i], true);
            qr__pl_range_add(&all, p->series[s].y[i], false);
        }
    if (!pos.have) return false;                              /* nothing to put on a log axis */
    if (p->y_scale == QR_SCALE_LOG) return true;
    return all.lo > 0 && pos.hi >= pos.lo * 1000;
}

static void qr__pl_panel_scale(const QrLinePanel *p, int n, QrPlRect r, QrPlScale *s, QrTicks *t) {
    bool log = qr__pl_panel_log(p, n);
    QrPlRange rg = {0};
    if (p->y_fixed && isfinite(p->y_min) && isfinite(p->y_max) && p->y_max > p->y_min && (!log || p->y_min > 0)) {
        rg.lo = p->y_min; rg.hi = p->y_max; rg.have = true;
        qr__pl_scale(rg, log, 0, r.y1, r.y0, 40, s, t);
        return;
    }
    for (int k = 0; k < p->n_series; k++)
        for (int i = 0; p->series[k].y && i < n; i++) qr__pl_range_add(&rg, p->series[k].y[i], log);
    for (int k = 0; p->band_lo && p->band_hi && k < p->n_series; k++)
        for (int i = 0; p->band_lo[k] && p->band_hi[k] && i < n; i++) {
            qr__pl_range_add(&rg, p->band_lo[k][i], log);
            qr__pl_range_add(&rg, p->band_hi[k][i], log);
        }
    qr__pl_scale(rg, log, 0.05, r.y1, r.y0, 40, s, t);
}

/* A band between lo and hi (n slots as qr__pl_series places them): per pixel column between two
 * finite neighbours, the span between the interpolated edges; a lone finite slot gets a short
 * bar. Non-finite or unmappable edges leave a gap. */
static void qr__pl_band(QrCanvas *c, QrPlRect r, const QrPlScale *ys, const double *lo, const double *hi, int n, QrColor col) {
    double slot = (double)(r.x1 - r.x0) / n;
    QrColor fill = qr__pl_alpha(col, 56);
    for (int i = 0; i < n; i++) {
        double a0 = qr__pl_map(ys, lo[i]), b0 = qr__pl_map(ys, hi[i]), x0 = r.x0 + (i + 0.5) * slot;
        if (!isfinite(a0) || !isfinite(b0)) continue;
        double a1 = i + 1 < n ? qr__pl_map(ys, lo[i + 1]) : NAN, b1 = i + 1 < n ? qr__pl_map(ys, hi[i + 1]) : NAN;
        bool next = isfinite(a1) && isfinite(b1);
        bool prev = i > 0 && isfinite(qr__pl_map(ys, lo[i - 1])) && isfinite(qr__pl_map(ys, hi[i - 1]));
        if (!next) {
            if (!prev) qr_canvas_fill_rect(c, x0 - QR_MIN(4, slot / 3), QR_MIN(a0, b0), x0 + QR_MIN(4, slot / 3), QR_MAX(a0, b0) + 1, fill);
            continue;
        }
        int p0 = qr__pl_ifloor(x0), p1 = qr__pl_ifloor(x0 + slot);
        for (int px = p0; px < p1; px++) {
            double t = (px + 0.5 - x0) / slot, ya = a0 + t * (a1 - a0), yb = b0 + t * (b1 - b0);
            qr_canvas_fill_rect(c, px, QR_MIN(ya, yb), px + 1, QR_MAX(ya, yb) + 1, fill);
        }
    }
}

/* Draws one series: polylines through finite points, NaN = gap, +-inf (and <= 0 on
 * a log axis) = a triangle at the top/bottom edge; discs when points are few or isolated. */
static void qr__pl_series(QrCanvas *c, QrPlRect r, const QrPlScale *ys, const double *y, int n, QrColor col,
                          bool dashed) {
    double slot = (double)(r.x1 - r.x0) / n, phase = 0;
    bool markers = slot >= 12;
    double px = 0, py = 0;
    bool prev = false;
    for (int i = 0; i < n; i++) {
        double x = r.x0 + (i + 0.5) * slot, v = y[i], m = qr__pl_map(ys, v);
        if (isnan(m)) { prev = false; continue; }
        if (isinf(m) || m < r.y0 - 1e6 || m > r.y1 + 1e6) {
            bool top = m < r.y0;
            qr__pl_triangle(c, x, top ? r.y0 + 1 : r.y1 - 1, 7, top, col);
            prev = false;
            continue;
        }
        bool next = i + 1 < n && isfinite(qr__pl_map(ys, y[i + 1]));
        if (prev) qr__pl_dash_seg(c, px, py, x, m, 2, dashed ? 6 : 0, 4, &phase, col);
        else phase = 0;
        if (markers || (!prev && !next)) qr_canvas_disc(c, x, m, 3, col);
        px = x; py = m; prev = true;
    }
}

static QrStatus qr_plot_line(const QrLineChart *spec, QrCanvas *c) {
    QrLineChart copy = *spec, *sp = &copy;                   /* NULL series arrays = no series */
    for (int p = 0; p < 2; p++) if (!sp->panels[p].series || sp->panels[p].n_series < 0) sp->panels[p].n_series = 0;
    int np = sp->n_panels == 2 ? 2 : 1, n = QR_MAX(sp->n_x, 0);
    int W = sp->width ? sp->width : 900, H = sp->height ? sp->height : (np == 2 ? 700 : 500), top;
    QR_TRY(qr__pl_begin(c, W, H, sp->title, &top));
    bool cats = sp->x_names && n > 0;
    int cat_h = 0;
    size_t skip = cats ? qr__pl_common_prefix(sp->x_names, n) : 0;
    char xlab[256];
    snprintf(xlab, sizeof xlab, "%s", sp->x_label ? sp->x_label : "");
    if (skip) snprintf(xlab, sizeof xlab, "%s%s(names after %.*s)", sp->x_label ? sp->x_label : "",
                       sp->x_label ? "  " : "", (int)QR_MIN(skip, 120), sp->x_names[0]);
    if (cats) {
        for (int i = 0; i < n; i++) cat_h = QR_MAX(cat_h, qr_text_width(sp->x_names[i] ? sp->x_names[i] + skip : "", 1));
        cat_h = QR_MAX(24, QR_MIN(cat_h, H / 5));
    }
    int bottom = 10 + (xlab[0] ? QR__PL_LINE_H + 6 : 0) + 7 + (cats ? cat_h : QR__PL_LINE_H);
    bool ytitle = false;
    for (int p = 0; p < np; p++) ytitle |= sp->panels[p].y_label && *sp->panels[p].y_label;
    int title_x = 10, gap = 18;

    /* Legends (at most 16 named series per panel are listed). */
    QrPlLegend leg[2][16];
    int nleg[2] = {0, 0}, lrows[2] = {0, 0};
    for (int p = 0; p < np; p++)
        for (int k = 0; k < sp->panels[p].n_series && nleg[p] < 16; k++)
            if (sp->panels[p].series[k].name) {
                QrPlLegend it = {sp->panels[p].series[k].name, qr__pl_palette[k % 8],
                                 sp->panels[p].series[k].dashed ? QR__PL_SW_DASH : QR__PL_SW_LINE};
                leg[p][nleg[p]++] = it;
            }

    /* Two passes: tick label widths set the left margin, which sets the legend
     * rows, which set the panel heights, which set the ticks. */
    QrPlRect pr[2];
    QrPlScale ys[2];
    QrTicks yt[2];
    int left = 60;
    for (int pass = 0; pass < 2; pass++) {
        int pw = W - left - 24, avail = H - top - bottom - (np - 1) * gap;
        for (int p = 0; p < np; p++) {
            lrows[p] = qr__pl_legend(NULL, leg[p], nleg[p], 0, 0, QR_MAX(pw, 40));
            avail -= lrows[p] * QR__PL_LEGEND_ROW + (lrows[p] ? 4 : 0);
        }
        int ph = avail / np, y = top, lw = 0;
        for (int p = 0; p < np; p++) {
            y += lrows[p] * QR__PL_LEGEND_ROW + (lrows[p] ? 4 : 0);
            pr[p].x0 = left; pr[p].x1 = W - 24; pr[p].y0 = y; pr[p].y1 = y + ph;
            y += ph + gap;
            qr__pl_panel_scale(&sp->panels[p], n, pr[p], &ys[p], &yt[p]);
            lw = QR_MAX(lw, qr__pl_tick_labels_w(&yt[p]));
        }
        int need = 10 + (ytitle ? QR__PL_LINE_H + 10 : 0) + lw + 9;
        if (pass == 1 && need <= left) break;
        left = pass == 0 ? need : QR_MAX(left, need);
        if (pass == 1) for (int p = 0; p < np; p++) pr[p].x0 = left;   /* labels grew: keep them clear */
    }
    if (!qr__pl_rect_ok(pr[np - 1]) || !qr__pl_rect_ok(pr[0])) return QR_OK;

    for (int p = 0; p < np; p++) {
        const QrLinePanel *pn = &sp->panels[p];
        QrPlRect r = pr[p];
        bool last = p == np - 1;
        if (lrows[p]) qr__pl_legend(c, leg[p], nleg[p], r.x0, r.y0 - lrows[p] * QR__PL_LEGEND_ROW - 4, r.x1 - r.x0);
        qr__pl_yaxis(c, r, &ys[p], &yt[p], pn->y_label, title_x);
        QrPlScale xs;
        QrTicks xt;
        if (cats) qr__pl_xcats(c, r, n, sp->x_names, skip, cat_h, last);
        else { qr__pl_index_axis(QR_MAX(n, 1), r, &xs, &xt); qr__pl_xaxis(c, r, &xs, &xt, true, last); }
        qr__pl_spines(c, r);
        bool any = false;
        qr_canvas_clip(c, r.x0, r.y0, r.x1, r.y1);
        for (int k = 0; pn->band_lo && pn->band_hi && k < pn->n_series && n > 0; k++)
            if (pn->band_lo[k] && pn->band_hi[k]) qr__pl_band(c, r, &ys[p], pn->band_lo[k], pn->band_hi[k], n, qr__pl_palette[k % 8]);
        for (int k = 0; k < pn->n_series && n > 0; k++) {
            if (!pn->series[k].y) continue;
            qr__pl_series(c, r, &ys[p], pn->series[k].y, n, qr__pl_palette[k % 8], pn->series[k].dashed);
            for (int i = 0; i < n && !any; i++) any = !isnan(pn->series[k].y[i]);
        }
        qr_canvas_clip_reset(c);
        if (!any) qr__pl_note(c, r, "no data");
        if (last && xlab[0]) {
            QrTextStyle st = qr__pl_style(QR__PL_INK, QR_ALIGN_CENTER, QR_VALIGN_BOTTOM, r.x1 - r.x0);
            qr_canvas_text(c, (r.x0 + r.x1) / 2, H - 8, xlab, &st);
        }
    }
    return QR_OK;
}

/* ==== horizontal bar chart ========================================================= */

static QrStatus qr_plot_bars(const QrBarChart *sp, QrCanvas *c) {
    int n = QR_MAX(sp->n, 0);
    if (sp->top_k > 0) n = QR_MIN(n, sp->top_k);
    if (!sp->values || !sp->names) n = 0;
    int tb = (sp->title && *sp->title) ? 46 : 12, bottom = 10 + (sp->x_label ? QR__PL_LINE_H + 6 : 0) + 7 + QR__PL_LINE_H;
    int W = sp->width ? sp->width : 900;
    int H = sp->height ? sp->height : QR_MAX(300, QR_MIN(QR_PLOT_MAX_SIDE, tb + bottom + 22 * n + 8));
    int top;
    QR_TRY(qr__pl_begin(c, W, H, sp->title, &top));
    const char *fmt = sp->value_fmt ? sp->value_fmt : "%.4g";

    /* Value range, scale kind, label widths. */
    QrPlRange rg = {0}, pos = {0};
    int name_w = 0, lab_pos = 0, lab_neg = 0;
    char buf[64];
    for (int i = 0; i < n; i++) {
        double v = sp->values[i];
        qr__pl_range_add(&rg, v, false);
        qr__pl_range_add(&pos, v, true);
        name_w = QR_MAX(name_w, qr_text_width(sp->names[i], 1));
    }
    bool log = sp->x_scale == QR_SCALE_LOG ? pos.have
             : sp->x_scale == QR_SCALE_AUTO ? (rg.have && rg.lo > 0 && rg.hi >= rg.lo * 1000) : false;
    for (int i = 0; i < n; i++) {
        double v = sp->values[i];
        if (isfinite(v)) snprintf(buf, sizeof buf, fmt, v);
        else snprintf(buf, sizeof buf, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        int w = qr_text_width(buf, 1);
        if (v < 0 && !log) lab_neg = QR_MAX(lab_neg, w); else lab_pos = QR_MAX(lab_pos, w);
    }
    name_w = QR_MIN(name_w, W * 2 / 5);
    QrPlRect r = {10 + name_w + 10, top, W - 16, H - bottom};
    if (!qr__pl_rect_ok(r)) return QR_OK;
    int ax0 = r.x0 + (lab_neg ? lab_neg + 8 : 0), ax1 = r.x1 - lab_pos - 8;
    if (ax1 - ax0 < 20) { ax0 = r.x0; ax1 = r.x1; }

    QrPlScale xs;
    QrTicks xt;
    if (log) {
        qr__pl_scale(pos, true, 0.02, ax0, ax1, 80, &xs, &xt);
        /* Bars start at the decade below the smallest value. */
        double a = pow(10.0, floor(log10(pos.lo))) ;
        if (a < xs.lo) { xs.lo = a; qr_plot_ticks_log(xs.lo, xs.hi, QR_MAX(5, QR_MIN(12, (ax1 - ax0) / 80)), &xt); }
    } else {
        QrPlRange z = rg;
        qr__pl_range_add(&z, 0, false);
        if (!z.have) { z.lo = 0; z.hi = 1; z.have = true; }
        if (z.hi == z.lo) z.hi = z.lo + 1;
        qr__pl_scale(z, false, 0, ax0, ax1, 80, &xs, &xt);
    }
    QrPlRect ar = {ax0, r.y0, ax1, r.y1};
    qr__pl_xaxis(c, ar, &xs, &xt, true, true);
    if (sp->x_label) {
        QrTextStyle st = qr__pl_style(QR__PL_INK, QR_ALIGN_CENTER, QR_VALIGN_BOTTOM, r.x1 - r.x0);
        qr_canvas_text(c, (r.x0 + r.x1) / 2, H - 8, sp->x_label, &st);
    }
    if (n == 0) { qr__pl_spines(c, r); qr__pl_note(c, r, "no data"); return QR_OK; }

    double slot = (double)(r.y1 - r.y0) / n, base = log ? xs.p0 : qr__pl_map(&xs, 0);
    int stride = qr__pl_stride(slot, QR__PL_LINE_H + 1);
    double bh = QR_MAX(1.0, slot * 0.72);
    for (int i = 0; i < n; i++) {
        double v = sp->values[i], cy = r.y0 + (i + 0.5) * slot, end;
        if (isnan(v) || (log && !(v > 0))) end = base;
        else if (isinf(v)) end = v > 0 ? ax1 : ax0;
        else end = QR_MAX((double)ax0, QR_MIN((double)ax1, qr__pl_map(&xs, v)));
        qr_canvas_fill_rect(c, QR_MIN(base, end), cy - bh / 2, QR_MAX(base, end), cy + bh / 2, qr__pl_palette[0]);
        if (i % stride) continue;
        QrTextStyle ns = qr__pl_style(QR__PL_INK, QR_ALIGN_RIGHT, QR_VALIGN_MIDDLE, name_w);
        qr_canvas_text(c, r.x0 - 8, (int)cy, sp->names[i] ? sp->names[i] : "", &ns);
        if (isfinite(v)) snprintf(buf, sizeof buf, fmt, v);
        else snprintf(buf, sizeof buf, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        bool neg = end < base;
        QrTextStyle vs = qr__pl_style(QR__PL_INK, neg ? QR_ALIGN_RIGHT : QR_ALIGN_LEFT, QR_VALIGN_MIDDLE, 0);
        qr_canvas_text(c, neg ? (int)end - 5 : (int)end + 5, (int)cy, buf, &vs);
    }
    if (!log && xs.lo < 0) qr_canvas_fill_rect(c, base - 0.5, r.y0, base + 0.5, r.y1, QR__PL_AXIS);
    qr__pl_spines(c, r);
    return QR_OK;
}

/* ==== histogram overlay ============================================================ */

/* Counts finite values of x into h->bins bins over [lo, hi]; returns the number skipped. */
static size_t qr__pl_count(const float *x, const float *sub, size_t n, double lo, double hi, int bins, double *cnt) {
    size_t skipped = 0;
    double k = bins / (hi - lo);
    for (size_t i = 0; i < n; i++) {
        double v = sub ? (double)x[i] - (double)sub[i] : (double)x[i];
        if (!isfinite(v)) { skipped++; continue; }
        double b = (v - lo) * k;
        int j = b >= bins ? bins - 1 : b > 0 ? (int)b : 0;   /* NaN -> 0, never a bad cast */
        cnt[j] += 1;
    }
    return skipped;
}

/* Draws counts as a step outline (and a translucent fill when fill_a > 0). */
static void qr__pl_steps(QrCanvas *c, QrPlRect r, const QrPlScale *xs, const QrPlScale *ys, const double *cnt,
                         int bins, double lo, double hi, QrColor col, int fill_a) {
    double prev_y = r.y1;
    for (int j = 0; j < bins; j++) {
        double xa = qr__pl_map(xs, lo + (hi - lo) * j / bins), xb = qr__pl_map(xs, lo + (hi - lo) * (j + 1) / bins);
        double y = cnt[j] > 0 ? qr__pl_map(ys, cnt[j]) : r.y1;
        if (!isfinite(y) || y > r.y1) y = r.y1;
        y = floor(y) + 0.5;
        if (fill_a && y < r.y1) qr_canvas_fill_rect(c, xa, y, xb, r.y1, qr__pl_alpha(col, fill_a));
        qr_canvas_line(c, floor(xa) + 0.5, prev_y, floor(xa) + 0.5, y, 1.5, col);
        qr_canvas_line(c, floor(xa) + 0.5, y, floor(xb) + 0.5, y, 1.5, col);
        prev_y = y;
    }
    double xe = floor(qr__pl_map(xs, hi)) + 0.5;
    qr_canvas_line(c, xe, prev_y, xe, r.y1, 1.5, col);
}

/* Scale over counts: linear from 0, or log from 0.7 (so that a count of 1 shows). */
static void qr__pl_count_scale(const double *a, const double *b, int bins, int kind, QrPlRect r, QrPlScale *s,
                               QrTicks *t) {
    double maxc = 0, minc = INFINITY;
    for (int j = 0; j < bins; j++) {
        double v[2] = {a[j], b ? b[j] : 0};
        for (int q = 0; q < 2; q++) { maxc = QR_MAX(maxc, v[q]); if (v[q] > 0) minc = QR_MIN(minc, v[q]); }
    }
    bool log = kind == QR_SCALE_LOG ? maxc > 0 : kind == QR_SCALE_AUTO ? (maxc > 0 && maxc >= 1000 * minc) : false;
    QrPlRange rg = {0, QR_MAX(maxc, 1), true};
    if (log) { rg.lo = 0.7; rg.hi = QR_MAX(maxc * 1.6, 10); qr__pl_scale(rg, true, 0, r.y1, r.y0, 40, s, t); }
    else {
        rg.hi = QR_MAX(maxc * 1.06, 1.06);
        qr__pl_scale(rg, false, 0, r.y1, r.y0, 40, s, t);
        qr__pl_int_ticks(t, 0, rg.hi);
    }
}

/* Bins of a histogram chart, from raw values or copied from precomputed counts: the
 * drawn range of the value panel (xlo..xhi, which also holds the markers), the bins'
 * own range (lo..hi), counts (cb/ca/ce: 3 x bins doubles, caller frees) and the error
 * panel's range. */
typedef struct QrPlHistData {
    int bins;
    double lo, hi, xlo, xhi, elo, ehi, absmax;
    bool have, have_abs, have_err, anal, err_panel, abs_neg;
    size_t skipped;
    double *cnt;
} QrPlHistData;

static QrStatus qr__pl_hist_data(const QrHistChart *sp, QrPlHistData *hd) {
    memset(hd, 0, sizeof *hd);
    bool pre = !sp->base && sp->h_base && sp->n_bins > 0;
    hd->bins = pre ? sp->n_bins : sp->bins > 0 ? QR_MIN(sp->bins, 4096) : 100;
    hd->cnt = calloc((size_t)hd->bins * 3, sizeof *hd->cnt);
    if (!hd->cnt) return qr_errf(QR_ERR_NOMEM, "plot: out of memory for %d histogram bins", hd->bins);
    double *cb = hd->cnt, *ca = cb + hd->bins, *ce = ca + hd->bins;
    bool thr = isfinite(sp->threshold) && sp->threshold > 0;
    QrPlRange rg = {0}, er = {0};
    if (pre) {
        int64_t total = 0, etotal = 0;
        hd->anal = sp->h_anal != NULL;
        hd->err_panel = sp->error_panel && sp->h_err;
        for (int k = 0; k < hd->bins; k++) {
            cb[k] = (double)sp->h_base[k];
            total += sp->h_base[k];
            if (hd->anal) ca[k] = (double)sp->h_anal[k];
            if (hd->err_panel) { ce[k] = (double)sp->h_err[k]; etotal += sp->h_err[k]; }
        }
        hd->have = total > 0 && isfinite(sp->lo) && isfinite(sp->hi);
        hd->lo = hd->have ? sp->lo : 0;
        hd->hi = hd->have ? sp->hi : 1;
        qr__pl_fix_range(&hd->lo, &hd->hi);
        hd->have_abs = hd->have && isfinite(sp->absmax) && sp->absmax >= 0;
        hd->absmax = hd->have_abs ? sp->absmax : 0;
        hd->skipped = sp->n_nonfinite > 0 ? (size_t)sp->n_nonfinite : 0;
        hd->have_err = hd->err_panel && etotal > 0 && isfinite(sp->err_lo) && isfinite(sp->err_hi);
        hd->elo = hd->have_err ? sp->err_lo : -1;
        hd->ehi = hd->have_err ? sp->err_hi : 1;
        qr__pl_fix_range(&hd->elo, &hd->ehi);
        rg = (QrPlRange){hd->lo, hd->hi, hd->have};
    } else {
        size_t n = sp->base ? sp->n : 0;
        const float *anal = n ? sp->anal : NULL;
        hd->anal = anal != NULL;
        hd->err_panel = sp->error_panel && anal;
        for (size_t i = 0; i < n; i++) {
            double b = sp->base[i];
            qr__pl_range_add(&rg, b, false);
            if (isfinite(b)) { hd->absmax = QR_MAX(hd->absmax, fabs(b)); hd->have_abs = true; }
            if (anal) {
                qr__pl_range_add(&rg, anal[i], false);
                if (hd->err_panel) qr__pl_range_add(&er, (double)anal[i] - b, false);
            }
        }
        hd->have = rg.have;
    }
    /* The abs-max is marked where it is reached: on the side of the data's larger magnitude. */
    hd->abs_neg = rg.have && -rg.lo > rg.hi;
    /* The value panel shows the threshold too: + side always, - side when the data has
     * negative values (or the grid's lower end for asymmetric grids). */
    if (rg.have) {
        if (thr) qr__pl_range_add(&rg, sp->threshold, false);
        if (thr && sp->have_clip_lo) qr__pl_range_add(&rg, sp->clip_lo, false);
        else if (thr && rg.lo < 0) qr__pl_range_add(&rg, -sp->threshold, false);
    }
    hd->xlo = rg.have ? rg.lo : 0;
    hd->xhi = rg.have ? rg.hi : 1;
    qr__pl_fix_range(&hd->xlo, &hd->xhi);
    if (!pre) {
        size_t n = sp->base ? sp->n : 0;
        hd->lo = hd->xlo;      /* raw values are binned over the whole drawn range */
        hd->hi = hd->xhi;
        hd->skipped = qr__pl_count(sp->base, NULL, n, hd->lo, hd->hi, hd->bins, cb);
        if (hd->anal) hd->skipped += qr__pl_count(sp->anal, NULL, n, hd->lo, hd->hi, hd->bins, ca);
        if (hd->err_panel) {
            double m = er.have ? QR_MAX(fabs(er.lo), fabs(er.hi)) : 0;
            if (!(m > 0)) m = 1;
            hd->elo = -m;
            hd->ehi = m;
            hd->have_err = er.have;
            qr__pl_count(sp->anal, sp->base, n, hd->elo, hd->ehi, hd->bins, ce);
        }
    }
    return QR_OK;
}

static QrStatus qr_plot_hist(const QrHistChart *sp, QrCanvas *c) {
    QrPlHistData hd;
    QR_TRY(qr__pl_hist_data(sp, &hd));
    bool err_panel = hd.err_panel, anal = hd.anal, have_abs = hd.have_abs;
    int W = sp->width ? sp->width : 900, H = sp->height ? sp->height : (err_panel ? 700 : 500), top;
    QrStatus bs = qr__pl_begin(c, W, H, sp->title, &top);
    if (bs != QR_OK) { free(hd.cnt); return bs; }
    int bins = hd.bins;
    double lo = hd.lo, hi = hd.hi, elo = hd.elo, ehi = hd.ehi, absmax = hd.absmax;
    double *cnt = hd.cnt, *cb = cnt, *ca = cnt + bins, *ce = cnt + 2 * bins;
    size_t skipped = hd.skipped;
    bool thr = isfinite(sp->threshold) && sp->threshold > 0;

    /* Legend. */
    char abs_s[64], thr_s[64], skip_s[64];
    snprintf(abs_s, sizeof abs_s, "abs-max %.4g", absmax);
    if (sp->have_clip_lo) snprintf(thr_s, sizeof thr_s, "quantization grid [%.4g, %.4g]", sp->clip_lo, sp->threshold);
    else snprintf(thr_s, sizeof thr_s, "threshold scale*qmax %.4g", sp->threshold);
    snprintf(skip_s, sizeof skip_s, "%zu non-finite values skipped", skipped);
    QrColor cbase = qr__pl_palette[0], canal = qr__pl_palette[1], cmark = QR__PL_INK, cthr = QR__PL_HILITE;
    QrPlLegend leg[5];
    int nl = 0;
    leg[nl++] = (QrPlLegend){sp->base_name ? sp->base_name : "baseline", cbase, QR__PL_SW_BOX};
    if (anal) leg[nl++] = (QrPlLegend){sp->anal_name ? sp->anal_name : "analysis", canal, QR__PL_SW_LINE};
    if (have_abs) leg[nl++] = (QrPlLegend){abs_s, cmark, QR__PL_SW_LINE};
    if (thr) leg[nl++] = (QrPlLegend){thr_s, cthr, QR__PL_SW_DASH};
    if (skipped) leg[nl++] = (QrPlLegend){skip_s, cmark, QR__PL_SW_NONE};

    /* Layout: legend rows (for an estimated width), panel heights, count ticks,
     * then the left margin from the widest count label. */
    int title_x = 10, gap = 26, xlab_h = QR__PL_LINE_H + 6, bottom = 10 + xlab_h + 7 + QR__PL_LINE_H;
    int lrows = qr__pl_legend(NULL, leg, nl, 0, 0, W - 110);
    int y0 = top + lrows * QR__PL_LEGEND_ROW + 4;
    int avail = H - y0 - bottom - (err_panel ? gap + xlab_h + 7 + QR__PL_LINE_H : 0);
    int ph = err_panel ? avail * 3 / 5 : avail;
    QrPlRect r1 = {0, y0, W - 24, y0 + ph};
    QrPlRect r2 = {0, r1.y1 + 7 + QR__PL_LINE_H + xlab_h + gap, W - 24, H - bottom};
    QrPlScale ys, eys;
    QrTicks yt, eyt;
    qr__pl_count_scale(cb, anal ? ca : NULL, bins, sp->y_scale, r1, &ys, &yt);
    qr__pl_count_scale(ce, NULL, bins, sp->y_scale, r2, &eys, &eyt);
    int lw = qr__pl_tick_labels_w(&yt);
    if (err_panel) lw = QR_MAX(lw, qr__pl_tick_labels_w(&eyt));
    r1.x0 = r2.x0 = 10 + QR__PL_LINE_H + 10 + lw + 9;
    if (!qr__pl_rect_ok(r1) || (err_panel && !qr__pl_rect_ok(r2))) { free(cnt); return QR_OK; }

    /* x: the binned range plus 2% so that edge bins and markers stay visible. */
    qr__pl_legend(c, leg, nl, r1.x0, top, r1.x1 - r1.x0);
    double pad = (hd.xhi - hd.xlo) * 0.02;
    QrPlScale xs = {false, hd.xlo - pad, hd.xhi + pad, r1.x0, r1.x1};
    QrTicks xt;
    qr_plot_ticks_linear(xs.lo, xs.hi, QR_MAX(5, (r1.x1 - r1.x0) / 80), &xt);
    qr__pl_yaxis(c, r1, &ys, &yt, "count", title_x);
    qr__pl_xaxis(c, r1, &xs, &xt, true, true);
    qr_canvas_clip(c, r1.x0, r1.y0, r1.x1, r1.y1);
    if (hd.have) {
        qr__pl_steps(c, r1, &xs, &ys, cb, bins, lo, hi, cbase, 70);
        if (anal) qr__pl_steps(c, r1, &xs, &ys, ca, bins, lo, hi, canal, 0);
    }
    for (int s = -1; s <= 1; s += 2) {
        double m = qr__pl_map(&xs, s * absmax), t = qr__pl_map(&xs, s * sp->threshold);
        if (have_abs && (s < 0) == hd.abs_neg) qr_canvas_line(c, floor(m) + 0.5, r1.y0, floor(m) + 0.5, r1.y1, 1.5, cmark);
        if (thr && s < 0 && sp->have_clip_lo && isfinite(sp->clip_lo)) t = qr__pl_map(&xs, sp->clip_lo);
        if (thr && (s > 0 || hd.xlo < 0 || sp->have_clip_lo))
            qr_canvas_dashed(c, floor(t) + 0.5, r1.y0, floor(t) + 0.5, r1.y1, 2, 7, 4, cthr);
    }
    qr_canvas_clip_reset(c);
    qr__pl_spines(c, r1);
    if (!hd.have) qr__pl_note(c, r1, "no finite values");
    QrTextStyle st = qr__pl_style(QR__PL_INK, QR_ALIGN_CENTER, QR_VALIGN_TOP, r1.x1 - r1.x0);
    qr_canvas_text(c, (r1.x0 + r1.x1) / 2, r1.y1 + 7 + QR__PL_LINE_H + 6, sp->x_label ? sp->x_label : "value", &st);

    if (err_panel) {
        double epad = (ehi - elo) * 0.02;
        QrPlScale es = {false, elo - epad, ehi + epad, r2.x0, r2.x1};
        QrTicks et;
        qr_plot_ticks_linear(es.lo, es.hi, QR_MAX(5, (r2.x1 - r2.x0) / 80), &et);
        qr__pl_yaxis(c, r2, &eys, &eyt, "count", title_x);
        qr__pl_xaxis(c, r2, &es, &et, true, true);
        qr_canvas_clip(c, r2.x0, r2.y0, r2.x1, r2.y1);
        if (hd.have_err) qr__pl_steps(c, r2, &es, &eys, ce, bins, elo, ehi, qr__pl_palette[2], 70);
        double z = floor(qr__pl_map(&es, 0)) + 0.5;
        qr_canvas_line(c, z, r2.y0, z, r2.y1, 1, QR__PL_MUTED);
        qr_canvas_clip_reset(c);
        qr__pl_spines(c, r2);
        if (!hd.have_err) qr__pl_note(c, r2, "no finite differences");
        char lab[160];
        snprintf(lab, sizeof lab, "error: %s - %s", sp->anal_name ? sp->anal_name : "analysis",
                 sp->base_name ? sp->base_name : "baseline");
        qr_canvas_text(c, (r2.x0 + r2.x1) / 2, H - 8 - QR__PL_LINE_H, lab, &st);
    }
    free(cnt);
    return QR_OK;
}

/* ==== per-channel box plot ========================================================== */

#ifdef QR_TESTING
QR_TESTAPI int qr__pl_cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Quantile p of sorted v[0..m) with linear interpolation (numpy's default). */
QR_TESTAPI double qr__pl_quantile(const float *v, size_t m, double p) {
    double h = (double)(m - 1) * p;
    size_t i = (size_t)h;
    if (i + 1 >= m) return v[m - 1];
    return v[i] + (h - (double)i) * ((double)v[i + 1] - (double)v[i]);
}

QR_TESTAPI QrStatus qr_plot_box_stats(const float *data, int64_t outer, int64_t channels, int64_t inner,
                                  QrBoxStats *out) {
    if (outer < 0 || channels < 0 || inner < 0) return qr_errf(QR_ERR_INVALID, "plot: negative box-stats shape");
    int64_t per;
    if (qr_mul_overflow_i64(outer, inner, &per) || (uint64_t)per > SIZE_MAX / sizeof(float))
        return qr_errf(QR_ERR_NOMEM, "plot: box-stats channel too large");
    float *tmp = malloc((size_t)QR_MAX(per, 1) * sizeof *tmp);
    if (!tmp) return qr_errf(QR_ERR_NOMEM, "plot: out of memory for box stats");
    for (int64_t ch = 0; ch < channels; ch++) {
        size_t m = 0;
        double sum = 0;
        for (int64_t o = 0; o < outer; o++) {
            const float *p = data + (o * channels + ch) * inner;
            for (int64_t i = 0; i < inner; i++)
                if (!isnan(p[i])) { tmp[m++] = p[i]; sum += p[i]; }
        }
        QrBoxStats *b = &out[ch];
        if (m == 0) { b->min = b->q1 = b->median = b->q3 = b->max = b->mean = NAN; continue; }
        qsort(tmp, m, sizeof *tmp, qr__pl_cmp_float);
        b->min = tmp[0];
        b->max = tmp[m - 1];
        b->q1 = qr__pl_quantile(tmp, m, 0.25);
        b->median = qr__pl_quantile(tmp, m, 0.5);
        b->q3 = qr__pl_quantile(tmp, m, 0.75);
        b->mean = sum / (double)m;
    }
    free(tmp);
    return QR_OK;
}
#endif

/* Lightened colour (towards white by t in [0, 1]). */
static QrColor qr__pl_tint(QrColor k, double t) {
    return qr__pl_rgba((int)(k.r + (255 - k.r) * t), (int)(k.g + (255 - k.g) * t), (int)(k.b + (255 - k.b) * t), 255);
}

static QrStatus qr_plot_box(const QrBoxChart *sp, QrCanvas *c) {
    int W = sp->width ? sp->width : 900, H = sp->height ? sp->height : 500, top;
    QR_TRY(qr__pl_begin(c, W, H, sp->title, &top));
    int n = sp->boxes ? QR_MAX(sp->n, 0) : 0, n_out = 0;
    QrPlRange rg = {0};
    for (int i = 0; i < n; i++) {
        const QrBoxStats *b = &sp->boxes[i];
        double v[6] = {b->min, b->q1, b->median, b->q3, b->max, b->mean};
        for (int k = 0; k < 6; k++) qr__pl_range_add(&rg, v[k], false);
        n_out += sp->outlier && sp->outlier[i];
    }
    QrColor cn = qr__pl_palette[0], co = QR__PL_HILITE;
    char out_s[64];
    snprintf(out_s, sizeof out_s, "outlier channel (%d)", n_out);
    QrPlLegend leg[4] = {
        {"channel: min-max, q1-q3 box, median", cn, QR__PL_SW_BOX},
        {out_s, co, QR__PL_SW_BOX},
        {"mean", QR__PL_INK, QR__PL_SW_DOT},
    };
    int nl = n_out ? 3 : 2;
    if (!n_out) leg[1] = leg[2];

    int bottom = 10 + QR__PL_LINE_H + 6 + 7 + QR__PL_LINE_H, left = 60, title_x = 10;
    QrPlRect r = {left, top, W - 24, H - bottom};
    QrPlScale ys, xs;
    QrTicks yt, xt;
    int lrows = qr__pl_legend(NULL, leg, nl, 0, 0, W - left - 24);
    r.y0 = top + lrows * QR__PL_LEGEND_ROW + 4;
    qr__pl_scale(rg, false, 0.05, r.y1, r.y0, 40, &ys, &yt);
    r.x0 = 10 + QR__PL_LINE_H + 10 + qr__pl_tick_labels_w(&yt) + 9;
    if (!qr__pl_rect_ok(r)) return QR_OK;
    qr__pl_legend(c, leg, nl, r.x0, top, r.x1 - r.x0);
    qr__pl_yaxis(c, r, &ys, &yt, sp->y_label ? sp->y_label : "value", title_x);
    qr__pl_index_axis(QR_MAX(n, 1), r, &xs, &xt);
    qr__pl_xaxis(c, r, &xs, &xt, false, true);
    QrTextStyle st = qr__pl_style(QR__PL_INK, QR_ALIGN_CENTER, QR_VALIGN_BOTTOM, r.x1 - r.x0);
    qr_canvas_text(c, (r.x0 + r.x1) / 2, H - 8, sp->x_label ? sp->x_label : "channel", &st);

    qr_canvas_clip(c, r.x0, r.y0, r.x1, r.y1);
    double slot = (double)(r.x1 - r.x0) / QR_MAX(n, 1), bw = QR_MAX(1.0, floor(slot * 0.7));
    for (int i = 0; i < n; i++) {
        const QrBoxStats *b = &sp->boxes[i];
        bool hl = sp->outlier && sp->outlier[i];
        QrColor k = hl ? co : cn;
        double cx = r.x0 + (i + 0.5) * slot, xa = floor(cx - bw / 2), xb = xa + bw;
        double ymin = qr__pl_map(&ys, b->min), ymax = qr__pl_map(&ys, b->max);
        double yq1 = qr__pl_map(&ys, b->q1), yq3 = qr__pl_map(&ys, b->q3), ymed = qr__pl_map(&ys, b->median);
        double clampa = r.y0 - 2, clampb = r.y1 + 2;             /* +-inf stats end at the edge */
        ymin = isnan(ymin) ? NAN : QR_MAX(clampa, QR_MIN(clampb, ymin));
        ymax = isnan(ymax) ? NAN : QR_MAX(clampa, QR_MIN(clampb, ymax));
        yq1 = isnan(yq1) ? NAN : QR_MAX(clampa, QR_MIN(clampb, yq1));
        yq3 = isnan(yq3) ? NAN : QR_MAX(clampa, QR_MIN(clampb, yq3));
        double wx = floor(cx);
        qr_canvas_fill_rect(c, wx, ymax, wx + 1, ymin, hl ? k : qr__pl_tint(k, bw >= 3 ? 0 : 0.45));
        if (bw >= 5) {
            qr_canvas_fill_rect(c, xa + bw / 4, ymin - 0.5, xb - bw / 4, ymin + 0.5, k);
            qr_canvas_fill_rect(c, xa + bw / 4, ymax - 0.5, xb - bw / 4, ymax + 0.5, k);
        }
        if (bw >= 3) {
            qr_canvas_fill_rect(c, xa, yq3, xb, yq1, qr__pl_tint(k, 0.55));
            qr_canvas_rect(c, xa, QR_MIN(yq3, yq1 - 1), xb, QR_MAX(yq1, yq3 + 1), 1, k);
        } else {
            qr_canvas_fill_rect(c, xa, yq3, xb, yq1, k);
        }
        if (isfinite(ymed)) qr_canvas_fill_rect(c, xa, floor(ymed), xb, floor(ymed) + (bw >= 3 ? 2 : 1), QR__PL_INK);
        if (slot >= 6) qr_canvas_disc(c, cx, qr__pl_map(&ys, b->mean), QR_MIN(3.0, slot * 0.18), QR__PL_INK);
        if (hl) qr__pl_triangle(c, cx, r.y0 + 6, 6, false, co);   /* findable even when 1 px wide */
    }
    qr_canvas_clip_reset(c);
    qr__pl_spines(c, r);
    if (!rg.have) qr__pl_note(c, r, n ? "no finite values" : "no channels");
    return QR_OK;
}
