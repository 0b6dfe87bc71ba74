/* tests/plot — the raster plots: every PNG is decoded by the small reader below
 * (chunk CRCs, zlib inflate, filter undo) and its pixels are checked.
 * QR_PLOT_SAMPLES=<dir> also writes one sample of every chart kind there to look at. */

/* ---- a minimal PNG reader (8-bit RGB / RGBA, no interlace) --------------------- */

typedef struct QtPng { int w, h, ch; unsigned char *px; } QtPng;   /* px: w*h*ch, malloc'd */

static uint32_t qt_be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int qt_paeth(int a, int b, int c) {
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Decodes `d`; returns NULL on success or a static reason. */
static const char *qt_png_decode(const unsigned char *d, size_t n, QtPng *out) {
    static const unsigned char sig[8] = {137, 'P', 'N', 'G', 13, 10, 26, 10};
    memset(out, 0, sizeof *out);
    if (n < 8 || memcmp(d, sig, 8)) return "bad signature";
    unsigned char *idat = NULL;
    size_t idat_len = 0, pos = 8;
    bool ihdr = false, iend = false;
    while (pos + 12 <= n && !iend) {
        uint32_t len = qt_be32(d + pos);
        if (len > n - pos - 12) { free(idat); return "chunk overruns the file"; }
        const unsigned char *type = d + pos + 4, *data = d + pos + 8;
        if (qt_be32(data + len) != (uint32_t)crc32(0L, type, len + 4)) { free(idat); return "CRC mismatch"; }
        if (!memcmp(type, "IHDR", 4)) {
            if (len != 13 || ihdr) { free(idat); return "bad IHDR"; }
            out->w = (int)qt_be32(data);
            out->h = (int)qt_be32(data + 4);
            if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[10] || data[11] || data[12]) {
                free(idat); return "unsupported IHDR";
            }
            out->ch = data[9] == 2 ? 3 : 4;
            ihdr = true;
        } else if (!memcmp(type, "IDAT", 4)) {
            unsigned char *nb = realloc(idat, idat_len + len + 1);
            if (!nb) { free(idat); return "oom"; }
            idat = nb;
            memcpy(idat + idat_len, data, len);
            idat_len += len;
        } else if (!memcmp(type, "IEND", 4)) {
            iend = true;
        } else if (!(type[0] & 0x20)) {
            free(idat); return "unknown critical chunk";
        }
        pos += 12 + len;
    }
    if (!ihdr || !iend || !idat || out->w <= 0 || out->h <= 0) { free(idat); return "missing IHDR/IDAT/IEND"; }
    size_t stride = (size_t)out->w * out->ch, raw_len = (stride + 1) * out->h;
    unsigned char *raw = malloc(raw_len + 1);
    uLongf got = raw_len + 1;
    if (!raw || uncompress(raw, &got, idat, idat_len) != Z_OK || got != raw_len) {
        free(raw); free(idat); return "inflate failed or wrong size";
    }
    free(idat);
    out->px = malloc(stride * out->h);
    if (!out->px) { free(raw); return "oom"; }
    for (int y = 0; y < out->h; y++) {
        int f = raw[y * (stride + 1)];
        const unsigned char *src = raw + y * (stride + 1) + 1;
        unsigned char *row = out->px + y * stride, *up = y ? row - stride : NULL;
        for (size_t i = 0; i < stride; i++) {
            int a = i >= (size_t)out->ch ? row[i - out->ch] : 0, b = up ? up[i] : 0;
            int c = (up && i >= (size_t)out->ch) ? up[i - out->ch] : 0, p;
            switch (f) {
            case 0: p = 0; break;
            case 1: p = a; break;
            case 2: p = b; break;
            case 3: p = (a + b) / 2; break;
            case 4: p = qt_paeth(a, b, c); break;
            default: free(raw); free(out->px); out->px = NULL; return "bad filter type";
            }
            row[i] = (unsigned char)(src[i] + p);
        }
    }
    free(raw);
    return NULL;
}

/* Encodes the canvas, decodes it again and checks size and every pixel. */
static const char *qt_png_roundtrip(const QrCanvas *c, QtPng *png, size_t *png_len) {
    unsigned char *buf;
    size_t len;
    if (qr_plot_png(c, &buf, &len) != QR_OK) return "encode failed";
    const char *err = qt_png_decode(buf, len, png);
    free(buf);
    if (png_len) *png_len = len;
    if (err) return err;
    if (png->w != c->w || png->h != c->h || png->ch != 3) return "size or channels differ";
    if (memcmp(png->px, c->px, (size_t)c->w * c->h * 3)) return "pixels differ";
    return NULL;
}

static bool qt_px_is(const QtPng *p, int x, int y, int r, int g, int b, int tol) {
    const unsigned char *q = p->px + ((size_t)y * p->w + x) * p->ch;
    return abs(q[0] - r) <= tol && abs(q[1] - g) <= tol && abs(q[2] - b) <= tol;
}

static bool qt_is_white(const QrCanvas *c, int x, int y) {
    QrColor k = qr_canvas_get(c, x, y);
    return k.r == 255 && k.g == 255 && k.b == 255;
}

static bool qt_color_eq(QrColor k, QrColor want) { return k.r == want.r && k.g == want.g && k.b == want.b; }

/* Bounding box of non-white pixels in [x0,x1) x [y0,y1); false if none. */
static bool qt_ink_box(const QrCanvas *c, int x0, int y0, int x1, int y1, int *bx0, int *by0, int *bx1, int *by1) {
    bool any = false;
    *bx0 = *by0 = INT32_MAX;
    *bx1 = *by1 = INT32_MIN;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            if (!qt_is_white(c, x, y)) {
                any = true;
                *bx0 = QR_MIN(*bx0, x); *by0 = QR_MIN(*by0, y);
                *bx1 = QR_MAX(*bx1, x + 1); *by1 = QR_MAX(*by1, y + 1);
            }
    return any;
}

static int qt_count_color(const QrCanvas *c, QrColor k, int x0, int y0, int x1, int y1) {
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) n += qt_color_eq(qr_canvas_get(c, x, y), k);
    return n;
}

static const QrColor qt_white = {255, 255, 255, 255};

/* Projects the ink of [x0,x1) x [y0,y1) onto columns (by_col) or rows and measures
 * the runs: *longest ink run, *n_runs. Labels that overlap merge into long runs. */
static void qt_ink_runs(const QrCanvas *c, int x0, int y0, int x1, int y1, bool by_col, int *longest, int *n_runs) {
    int run = 0;
    *longest = 0;
    *n_runs = 0;
    int a0 = by_col ? x0 : y0, a1 = by_col ? x1 : y1;
    for (int a = a0; a <= a1; a++) {
        bool ink = false;
        for (int b = by_col ? y0 : x0; a < a1 && b < (by_col ? y1 : x1) && !ink; b++)
            ink = !qt_is_white(c, by_col ? a : b, by_col ? b : a);
        if (ink) run++;
        else if (run) { *longest = QR_MAX(*longest, run); (*n_runs)++; run = 0; }
    }
}

/* ---- canvas primitives ----------------------------------------------------------- */

static void test_plot_canvas_pixels(void) {
    QrCanvas c;
    QT_OK(qr_canvas_init(&c, 120, 90, qt_white));
    QrColor red = {220, 20, 60, 255}, blue = {0, 0, 200, 255}, green = {0, 150, 0, 255};
    qr_canvas_fill_rect(&c, 10, 10, 30, 20, red);                     /* pixels x 10..29, y 10..19 */
    qr_canvas_line(&c, 10.5, 40.5, 100.5, 40.5, 1, blue);             /* row 40 */
    qr_canvas_line(&c, 40.5, 45.5, 80.5, 85.5, 2, green);              /* diagonal */
    qr_canvas_dashed(&c, 10, 60.5, 110, 60.5, 1, 6, 4, blue);          /* dashes [10,16) [20,26) ... */
    qr_canvas_rect(&c, 60, 5, 100, 30, 2, red);
    qr_canvas_fill_rect(&c, 90, 70, 110, 80, (QrColor){0, 0, 0, 128}); /* half-transparent black */
    qr_canvas_clip(&c, 0, 0, 50, 90);
    qr_canvas_fill_rect(&c, 45, 84, 70, 88, blue);                     /* cut at x = 50 */
    qr_canvas_clip_reset(&c);
    qr_canvas_line(&c, -1e300, 5.5, 1e300, 5.5, 1, blue);              /* far-off ends: clipped, no hang */
    qr_canvas_line(&c, NAN, 1, 5, 5, 1, blue);                         /* ignored */
    qr_canvas_fill_rect(&c, -INFINITY, 1, INFINITY, 2, blue);          /* row 1, whole width */

    QtPng p;
    const char *err = qt_png_roundtrip(&c, &p, NULL);
    QT_CHECKF(!err, "%s", err);
    QT_CHECK(qt_px_is(&p, 10, 10, 220, 20, 60, 0) && qt_px_is(&p, 29, 19, 220, 20, 60, 0));
    QT_CHECK(qt_px_is(&p, 9, 10, 255, 255, 255, 0) && qt_px_is(&p, 30, 19, 255, 255, 255, 0));
    QT_CHECK(qt_px_is(&p, 10, 20, 255, 255, 255, 0));
    QT_CHECK(qt_px_is(&p, 50, 40, 0, 0, 200, 0) && qt_px_is(&p, 50, 39, 255, 255, 255, 0));
    QT_CHECK(qt_px_is(&p, 50, 41, 255, 255, 255, 0));
    QT_CHECK(qt_px_is(&p, 60, 65, 0, 150, 0, 0));                      /* on the diagonal */
    QT_CHECK(qt_px_is(&p, 60, 75, 255, 255, 255, 0) && qt_px_is(&p, 70, 65, 255, 255, 255, 0));
    bool partial = false;                                              /* antialiased edge */
    for (int x = 50; x < 70; x++) partial |= !qt_px_is(&p, x, 66, 255, 255, 255, 0) && !qt_px_is(&p, x, 66, 0, 150, 0, 0);
    QT_CHECK(partial);
    QT_CHECK(qt_px_is(&p, 12, 60, 0, 0, 200, 0) && qt_px_is(&p, 22, 60, 0, 0, 200, 0));
    QT_CHECK(qt_px_is(&p, 18, 60, 255, 255, 255, 0) && qt_px_is(&p, 28, 60, 255, 255, 255, 0));
    QT_CHECK(qt_px_is(&p, 61, 10, 220, 20, 60, 0) && qt_px_is(&p, 62, 10, 255, 255, 255, 0));   /* 2-px outline */
    QT_CHECK(qt_px_is(&p, 80, 28, 220, 20, 60, 0) && qt_px_is(&p, 80, 27, 255, 255, 255, 0));
    QT_CHECK(qt_px_is(&p, 100, 75, 127, 127, 127, 1));                 /* 50% blend */
    QT_CHECK(qt_px_is(&p, 49, 85, 0, 0, 200, 0) && qt_px_is(&p, 50, 85, 255, 255, 255, 0));
    QT_CHECK(qt_px_is(&p, 0, 1, 0, 0, 200, 0) && qt_px_is(&p, 119, 1, 0, 0, 200, 0));
    QT_CHECK(qt_px_is(&p, 0, 5, 0, 0, 200, 0) && qt_px_is(&p, 119, 5, 0, 0, 200, 0) && qt_px_is(&p, 60, 4, 255, 255, 255, 0));
    free(p.px);
    qr_canvas_free(&c);
    QT_CHECK(qr_canvas_init(&c, 0, 10, qt_white) == QR_ERR_INVALID);
    QT_CHECK(qr_canvas_init(&c, 10, QR_PLOT_MAX_SIDE + 1, qt_white) == QR_ERR_INVALID);
}

/* The PNG reader itself must reject damage (otherwise the other checks prove nothing). */
static void test_plot_png_reader(void) {
    QrCanvas c;
    QT_OK(qr_canvas_init(&c, 31, 17, qt_white));
    qr_canvas_line(&c, 0, 0, 31, 17, 3, (QrColor){10, 200, 30, 255});
    unsigned char *buf;
    size_t len;
    QT_OK(qr_plot_png(&c, &buf, &len));
    QtPng p;
    QT_CHECK(qt_png_decode(buf, len, &p) == NULL);
    free(p.px);
    buf[len / 2] ^= 0x40;                                            /* inside IDAT: CRC fails */
    QT_CHECK(qt_png_decode(buf, len, &p) != NULL);
    buf[len / 2] ^= 0x40;
    QT_CHECK(qt_png_decode(buf, len - 5, &p) != NULL);               /* truncated */
    free(buf);
    qr_canvas_free(&c);
}

/* ---- text -------------------------------------------------------------------------- */

static void test_plot_font(void) {
    /* Every printable glyph has ink and no two look alike. */
    for (int a = 33; a <= 127; a++) {
        bool ink = false;
        for (int r = 0; r < QR_FONT_HEIGHT; r++) ink |= qr_font_rows[a - 32][r] != 0;
        QT_CHECKF(ink, "glyph %d is empty", a);
        for (int b = 33; b < a; b++)
            QT_CHECKF(memcmp(qr_font_rows[a - 32], qr_font_rows[b - 32], QR_FONT_HEIGHT), "glyphs %c and %c are equal", a, b);
        for (int r = 0; r < QR_FONT_HEIGHT; r++) QT_CHECK(qr_font_rows[a - 32][r] < 32);   /* 5 columns */
    }
    QT_CHECK(qr_text_width("abc", 1) == 17 && qr_text_width("abc", 2) == 34 && qr_text_width("", 1) == 0);
    QT_CHECK(qr_text_width("\xc3\xa9t\xc3\xa9", 1) == 17);             /* UTF-8 "été": 3 characters */
}

static void test_plot_text(void) {
    QrCanvas c;
    QT_OK(qr_canvas_init(&c, 400, 300, qt_white));
    QrColor ink = {20, 20, 20, 255};
    QrTextStyle st = {ink, 1, QR_ALIGN_LEFT, QR_VALIGN_TOP, 0, QR_ELLIPSIS_END, false};
    int w = qr_canvas_text(&c, 10, 10, "Hello, plot 0.25", &st);
    QT_CHECK(w == qr_text_width("Hello, plot 0.25", 1));
    int x0, y0, x1, y1;
    QT_CHECK(qt_ink_box(&c, 0, 0, 400, 40, &x0, &y0, &x1, &y1));
    QT_CHECKF(x0 >= 10 && x1 <= 10 + w && y0 >= 10 && y1 <= 10 + QR_FONT_HEIGHT, "%d %d %d %d", x0, y0, x1, y1);
    QT_CHECK(x0 == 10 && x1 >= 10 + w - 2);                            /* starts at the anchor, fills the box */

    /* Centered, right-aligned and 2x text stay in their boxes. */
    st.halign = QR_ALIGN_RIGHT; st.valign = QR_VALIGN_BOTTOM; st.scale = 2;
    w = qr_canvas_text(&c, 390, 100, "Right 2x", &st);
    QT_CHECK(qt_ink_box(&c, 0, 50, 400, 110, &x0, &y0, &x1, &y1));
    QT_CHECKF(x1 <= 390 && x0 >= 390 - w && y1 <= 100 && y0 >= 100 - 26, "%d %d %d %d", x0, y0, x1, y1);

    /* Ellipsis: a long label stays within max_w, both ways, and ends in the ellipsis glyph. */
    const char *longname = "/backbone/stage3/block7/conv2/Conv_output_0_quantized";
    for (int mode = 0; mode < 2; mode++) {
        QrCanvas d;
        QT_OK(qr_canvas_init(&d, 400, 40, qt_white));
        QrTextStyle e = {ink, 1, QR_ALIGN_LEFT, QR_VALIGN_TOP, 100, mode, false};
        int ew = qr_canvas_text(&d, 20, 10, longname, &e);
        QT_CHECK(ew > 80 && ew <= 100);
        QT_CHECK(qt_ink_box(&d, 0, 0, 400, 40, &x0, &y0, &x1, &y1));
        QT_CHECKF(x0 >= 20 && x1 <= 120, "mode %d ink %d..%d", mode, x0, x1);
        qr_canvas_free(&d);
    }
    /* Vertical text: ink in the rotated box [x, x+13) x [y-w, y). */
    QrCanvas v;
    QT_OK(qr_canvas_init(&v, 100, 200, qt_white));
    QrTextStyle vs = {ink, 1, QR_ALIGN_LEFT, QR_VALIGN_TOP, 0, QR_ELLIPSIS_END, true};
    w = qr_canvas_text(&v, 30, 150, "vertical", &vs);
    QT_CHECK(qt_ink_box(&v, 0, 0, 100, 200, &x0, &y0, &x1, &y1));
    QT_CHECKF(x0 >= 30 && x1 <= 30 + QR_FONT_HEIGHT && y0 >= 150 - w && y1 <= 150 && y1 - y0 > w - 4,
              "%d %d %d %d w=%d", x0, y0, x1, y1, w);
    qr_canvas_free(&v);
    /* Too narrow for even one glyph: nothing drawn. */
    QrCanvas z;
    QT_OK(qr_canvas_init(&z, 50, 20, qt_white));
    QrTextStyle zs = {ink, 1, QR_ALIGN_LEFT, QR_VALIGN_TOP, 3, QR_ELLIPSIS_END, false};
    QT_CHECK(qr_canvas_text(&z, 0, 0, "abc", &zs) == 0 && !qt_ink_box(&z, 0, 0, 50, 20, &x0, &y0, &x1, &y1));
    qr_canvas_free(&z);
    qr_canvas_free(&c);
}

/* ---- ticks ----------------------------------------------------------------------------- */

/* Checks the contract of linear ticks on [lo, hi]. */
static const char *qt_check_linear_ticks(double lo, double hi, int max_ticks, const QrTicks *t) {
    static char msg[200];
    double m = t->step / pow(10.0, floor(log10(t->step) + 1e-9));
    if (fabs(m - 1) > 1e-9 && fabs(m - 2) > 1e-9 && fabs(m - 5) > 1e-9) { snprintf(msg, sizeof msg, "step %g", t->step); return msg; }
    if (t->n < 2 || t->n > max_ticks) { snprintf(msg, sizeof msg, "%d ticks (max %d)", t->n, max_ticks); return msg; }
    double eps = (hi - lo) * 1e-6;
    for (int i = 0; i < t->n; i++) {
        double k = t->v[i] / t->step;
        if (t->v[i] < lo - eps || t->v[i] > hi + eps || fabs(k - round(k)) > 1e-6) {
            snprintf(msg, sizeof msg, "tick %g outside [%g, %g] or off step %g", t->v[i], lo, hi, t->step); return msg;
        }
        if (i && fabs(t->v[i] - t->v[i - 1] - t->step) > t->step * 1e-6) { snprintf(msg, sizeof msg, "gap"); return msg; }
    }
    /* No room for a tick before the first or after the last (the step is used fully). */
    if (t->v[0] - t->step >= lo - eps || t->v[t->n - 1] + t->step <= hi + eps) {
        /* allowed only when the next coarser step would exceed max_ticks */
        if (t->n < max_ticks) { snprintf(msg, sizeof msg, "missing end tick"); return msg; }
    }
    return NULL;
}

static void test_plot_ticks(void) {
    QrTicks t;
    char buf[48];
    qr_plot_ticks_linear(0, 1, 6, &t);
    QT_CHECK(!qt_check_linear_ticks(0, 1, 6, &t));
    QT_CHECKF(t.n == 6 && t.step == 0.2 && t.v[0] == 0 && fabs(t.v[5] - 1) < 1e-12, "n=%d step=%g", t.n, t.step);
    const char *want01[6] = {"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"};
    for (int i = 0; i < 6; i++) {
        qr_plot_tick_label(&t, t.v[i], buf, sizeof buf);
        QT_CHECKF(!strcmp(buf, want01[i]), "label %d = %s", i, buf);
    }
    qr_plot_ticks_linear(-3.7, 12.2, 8, &t);
    const char *e = qt_check_linear_ticks(-3.7, 12.2, 8, &t);
    QT_CHECKF(!e, "%s", e);
    QT_CHECKF(t.step == 2 && t.v[0] == -2 && t.v[t.n - 1] == 12, "step %g first %g", t.step, t.v[0]);
    qr_plot_tick_label(&t, t.v[0], buf, sizeof buf);
    QT_CHECK(!strcmp(buf, "-2"));
    /* Huge and tiny magnitudes use compact exponents. */
    qr_plot_ticks_linear(0, 3e6, 7, &t);
    QT_CHECK(!qt_check_linear_ticks(0, 3e6, 7, &t) && t.step == 5e5);
    qr_plot_tick_label(&t, 1.5e6, buf, sizeof buf);
    QT_CHECKF(!strcmp(buf, "1.5e6"), "%s", buf);
    qr_plot_tick_label(&t, 1e6, buf, sizeof buf);
    QT_CHECKF(!strcmp(buf, "1e6"), "%s", buf);
    qr_plot_tick_label(&t, 0, buf, sizeof buf);
    QT_CHECK(!strcmp(buf, "0"));
    qr_plot_ticks_linear(-2e-5, 4e-5, 7, &t);
    qr_plot_tick_label(&t, -1e-5, buf, sizeof buf);
    QT_CHECKF(!strcmp(buf, "-1e-5"), "%s", buf);
    /* Neighbouring labels differ even on a narrow range far from zero. */
    qr_plot_ticks_linear(0.99991, 0.99999, 6, &t);
    QT_CHECK(!qt_check_linear_ticks(0.99991, 0.99999, 6, &t));
    for (int i = 1; i < t.n; i++) {
        char a[48], b[48];
        qr_plot_tick_label(&t, t.v[i - 1], a, sizeof a);
        qr_plot_tick_label(&t, t.v[i], b, sizeof b);
        QT_CHECKF(strcmp(a, b), "equal labels %s", a);
    }
    /* Random ranges, including degenerate and non-finite ones. */
    uint64_t rng = 7;
    for (int it = 0; it < 2000; it++) {
        double a = (double)(qr_rng_next(&rng) % 2000001) - 1e6, scale = pow(10.0, (double)(qr_rng_next(&rng) % 25) - 12);
        double b = a + (double)(qr_rng_next(&rng) % 100000) / 7.0;
        int mt = 2 + (int)(qr_rng_next(&rng) % 14);
        qr_plot_ticks_linear(a * scale, b * scale, mt, &t);
        if (b > a && mt >= 5) { e = qt_check_linear_ticks(a * scale, b * scale, mt, &t); QT_CHECKF(!e, "[%g %g] %d: %s", a * scale, b * scale, mt, e); }
        else QT_CHECK(t.n >= 1 && t.n <= mt);               /* 2 ticks are promised from max_ticks 5 */
    }
    qr_plot_ticks_linear(NAN, INFINITY, 5, &t);
    QT_CHECK(t.n >= 2 && t.n <= 5);
    qr_plot_ticks_linear(-1e308, 1e308, 5, &t);
    QT_CHECK(t.n >= 2 && t.n <= 5 && isfinite(t.step));

    /* Log: every decade of [1e-6, 1e3], labelled compactly. */
    qr_plot_ticks_log(1e-6, 1e3, 12, &t);
    QT_CHECKF(t.n == 10 && t.log, "n=%d", t.n);
    for (int i = 0; i < t.n; i++) QT_CHECK(fabs(t.v[i] / pow(10.0, i - 6) - 1) < 1e-12);
    qr_plot_tick_label(&t, t.v[0], buf, sizeof buf);
    QT_CHECKF(!strcmp(buf, "1e-6"), "%s", buf);
    qr_plot_tick_label(&t, t.v[4], buf, sizeof buf);
    QT_CHECKF(!strcmp(buf, "0.01"), "%s", buf);
    qr_plot_tick_label(&t, t.v[9], buf, sizeof buf);
    QT_CHECKF(!strcmp(buf, "1000"), "%s", buf);
    qr_plot_ticks_log(1e-6, 1e3, 4, &t);                                 /* every k-th decade */
    QT_CHECK(t.n >= 2 && t.n <= 4);
    for (int i = 0; i < t.n; i++) {
        double d = log10(t.v[i]);
        QT_CHECK(fabs(d - round(d)) < 1e-9 && t.v[i] >= 1e-6 * 0.999 && t.v[i] <= 1e3 * 1.001);
    }
    qr_plot_ticks_log(3, 40, 8, &t);                                     /* narrow: 1-2-5 */
    QT_CHECK(t.n >= 2);
    for (int i = 0; i < t.n; i++) {
        double m = t.v[i] / pow(10.0, floor(log10(t.v[i]) + 1e-9));
        QT_CHECK(t.v[i] >= 3 && t.v[i] <= 40 && (fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9));
    }
    qr_plot_ticks_log(1.1, 1.3, 6, &t);                                  /* no 1-2-5 inside: linear */
    QT_CHECK(!t.log && t.n >= 2 && t.v[0] >= 1.1 - 1e-9 && t.v[t.n - 1] <= 1.3 + 1e-9);
}

/* ---- charts ---------------------------------------------------------------------------- */

/* Encodes, decodes and checks the size of a rendered chart. */
#define QT_PNG_OK(canvas, W, H) do { \
    QtPng qt__p; const char *qt__e = qt_png_roundtrip(&(canvas), &qt__p, NULL); \
    QT_CHECKF(!qt__e, "%s", qt__e); free(qt__p.px); \
    QT_CHECKF((canvas).w == (W) && (canvas).h == (H), "size %dx%d", (canvas).w, (canvas).h); } while (0)

/* Rows (in [y0,y1)) where a colour appears: number of bands and each band's run
 * length of that colour on its middle row. */
static int qt_bands(const QrCanvas *c, QrColor k, int *run, int cap) {
    int n = 0, start = -1;
    for (int y = 0; y <= c->h; y++) {
        bool has = y < c->h && qt_count_color(c, k, 0, y, c->w, y + 1) > 0;
        if (has && start < 0) start = y;
        if (!has && start >= 0) {
            if (n < cap) run[n] = qt_count_color(c, k, 0, (start + y) / 2, c->w, (start + y) / 2 + 1);
            n++;
            start = -1;
        }
    }
    return n;
}

static void test_plot_bars(void) {
    const char *names[3] = {"a", "b", "c"};
    double v[3] = {4, 2, 1};
    QrBarChart b = {0};
    b.title = "bars";
    b.names = names;
    b.values = v;
    b.n = 3;
    b.height = 300;
    QrCanvas c;
    QT_OK(qr_plot_bars(&b, &c));
    QT_PNG_OK(c, 900, 300);
    int run[8];
    QT_CHECKF(qt_bands(&c, qr__pl_palette[0], run, 8) == 3, "bands");
    QT_CHECKF(abs(run[0] - 2 * run[1]) <= 3 && abs(run[1] - 2 * run[2]) <= 3 && run[2] > 30, "%d %d %d", run[0], run[1], run[2]);
    qr_canvas_free(&c);

    /* Awkward: negative, NaN, inf, long and NULL names, empty, top_k, log, 1000 items. */
    static char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    const char *nm[6] = {longname, NULL, "neg", "inf", "nan", "zero"};
    double vv[6] = {3.5, 1e-3, -2, INFINITY, NAN, 0};
    QrBarChart a = {0};
    a.names = nm; a.values = vv; a.n = 6; a.x_label = "L1";
    for (int scale = 0; scale < 3; scale++) {
        a.x_scale = scale;
        QT_OK(qr_plot_bars(&a, &c));
        QT_PNG_OK(c, 900, 300);
        qr_canvas_free(&c);
    }
    a.n = 0;
    QT_OK(qr_plot_bars(&a, &c));
    QT_PNG_OK(c, 900, 300);
    qr_canvas_free(&c);
    static double many[1000];
    static const char *mn[1000];
    for (int i = 0; i < 1000; i++) { many[i] = pow(10.0, (i % 9) - 4); mn[i] = "some/node/name"; }
    QrBarChart m = {0};
    m.names = mn; m.values = many; m.n = 1000; m.x_scale = QR_SCALE_AUTO; m.height = 600;
    QT_OK(qr_plot_bars(&m, &c));
    QT_PNG_OK(c, 900, 600);
    int longest, runs;                                       /* names: separate rows of text */
    qt_ink_runs(&c, 0, 50, 80, 560, false, &longest, &runs);
    QT_CHECKF(longest <= QR_FONT_HEIGHT && runs >= 15, "longest %d runs %d", longest, runs);
    qr_canvas_free(&c);
    m.top_k = 20; m.height = 0;
    QT_OK(qr_plot_bars(&m, &c));
    QT_CHECK(c.h >= 300 && c.h < 600);
    qr_canvas_free(&c);
}

static void test_plot_lines(void) {
    /* A step from 0 to 1: blue sits low on the left and high on the right. */
    double y[40];
    for (int i = 0; i < 40; i++) y[i] = i < 20 ? 0 : 1;
    QrSeries s = {"step", y, false};
    QrLineChart lc = {0};
    lc.title = "step"; lc.n_x = 40; lc.n_panels = 1;
    lc.panels[0].series = &s; lc.panels[0].n_series = 1; lc.panels[0].y_label = "y";
    QrCanvas c;
    QT_OK(qr_plot_line(&lc, &c));
    QT_PNG_OK(c, 900, 500);
    double sy[2] = {0, 0};
    int cnt[2] = {0, 0};
    for (int yy = 60; yy < c.h; yy++)
        for (int x = 0; x < c.w; x++)
            if (qt_color_eq(qr_canvas_get(&c, x, yy), qr__pl_palette[0]) && (x < 300 || x > 600)) {
                sy[x > 600] += yy; cnt[x > 600]++;
            }
    QT_CHECK(cnt[0] > 50 && cnt[1] > 50);
    QT_CHECKF(sy[0] / cnt[0] > sy[1] / cnt[1] + 150, "left %g right %g", sy[0] / cnt[0], sy[1] / cnt[1]);
    qr_canvas_free(&c);

    /* Awkward series over two panels, with category names and log axes. */
    static double a[1000], b[1000], nan_s[1000], cst[1000], inf_s[1000], one[1000];
    static const char *names[1000];
    static char namebuf[1000][48];
    for (int i = 0; i < 1000; i++) {
        a[i] = 1 - 1e-3 * pow(1.01, i % 300);
        b[i] = i % 50 == 7 ? NAN : pow(10.0, (i % 200) / 20.0 - 6);
        nan_s[i] = NAN;
        cst[i] = 0.5;
        inf_s[i] = i % 3 == 0 ? INFINITY : i % 3 == 1 ? -INFINITY : 40 + i % 7;
        one[i] = i == 500 ? 3 : NAN;
        snprintf(namebuf[i], sizeof namebuf[i], "/model/layer%d/conv/Conv_output_0", i);
        names[i] = namebuf[i];
    }
    QrSeries s1[4] = {{"cosine", a, false}, {"all nan", nan_s, true}, {"constant", cst, false}, {"one point", one, false}};
    QrSeries s2[2] = {{"sqnr", inf_s, false}, {"decades", b, true}};
    int sizes[5] = {0, 1, 2, 37, 1000};
    for (int k = 0; k < 5; k++)
        for (int ys = 0; ys < 3; ys++) {
            QrLineChart m = {0};
            m.title = "per layer"; m.x_label = "node"; m.n_x = sizes[k]; m.x_names = k == 2 ? NULL : names;
            m.n_panels = 2;
            m.panels[0] = (QrLinePanel){"Cosine", s1, 4, ys, false, 0, 0, NULL, NULL};
            m.panels[1] = (QrLinePanel){"SQNR", s2, 2, ys, false, 0, 0, NULL, NULL};
            QT_OK(qr_plot_line(&m, &c));
            QT_PNG_OK(c, 900, 700);
            if (sizes[k] == 1000) {
                /* Rotated labels are thinned: separate columns of ink, each at most a
                 * text line (13 px) wide, and a few dozen of them. */
                int longest, runs;
                qt_ink_runs(&c, 0, 560, c.w, 650, true, &longest, &runs);
                QT_CHECKF(longest <= QR_FONT_HEIGHT && runs >= 20 && runs <= 80, "longest %d runs %d", longest, runs);
            }
            qr_canvas_free(&c);
        }
    QrLineChart f = {0};
    f.n_x = 10; f.n_panels = 1; f.width = 200; f.height = 150;
    f.panels[0] = (QrLinePanel){"y", s1, 1, QR_SCALE_LINEAR, true, 0.999, 0.9999, NULL, NULL};
    QT_OK(qr_plot_line(&f, &c));                                        /* smallest chart, fixed range */
    QT_PNG_OK(c, 200, 150);
    qr_canvas_free(&c);
    f.panels[0].series = NULL;                                         /* no series array: empty panel */
    QT_OK(qr_plot_line(&f, &c));
    qr_canvas_free(&c);
    f.width = 100;
    QT_CHECK(qr_plot_line(&f, &c) == QR_ERR_INVALID);
}

static void test_plot_hist(void) {
    /* Baseline near -1, analysis near +1: blue fill left of the middle, orange right. */
    enum { N = 4000 };
    static float base[N], anal[N];
    uint64_t rng = 11;
    for (int i = 0; i < N; i++) {
        base[i] = -1 + 0.1f * qr_rng_normal(&rng);
        anal[i] = 1 + 0.1f * qr_rng_normal(&rng);
    }
    QrHistChart h = {0};
    h.title = "dist"; h.base = base; h.anal = anal; h.n = N; h.threshold = 1.6;
    QrCanvas c;
    QT_OK(qr_plot_hist(&h, &c));
    QT_PNG_OK(c, 900, 500);
    double sx[2] = {0, 0};
    int cnt[2] = {0, 0};
    for (int y = 80; y < c.h - 40; y++)
        for (int x = 0; x < c.w; x++) {
            QrColor k = qr_canvas_get(&c, x, y);
            if (qt_color_eq(k, qr__pl_palette[0])) { sx[0] += x; cnt[0]++; }
            if (qt_color_eq(k, qr__pl_palette[1])) { sx[1] += x; cnt[1]++; }
        }
    QT_CHECK(cnt[0] > 100 && cnt[1] > 100);
    QT_CHECKF(sx[0] / cnt[0] < 450 && sx[1] / cnt[1] > 450, "%g %g", sx[0] / cnt[0], sx[1] / cnt[1]);
    /* The threshold (+-1.6, outside the data) is dashed: on the right half, a column
     * with highlight pixels and gaps. */
    int best = -1, best_n = 0;
    for (int x = c.w / 2; x < c.w; x++) {
        int k = qt_count_color(&c, QR__PL_HILITE, x, 80, x + 1, c.h - 60);
        if (k > best_n) { best_n = k; best = x; }
    }
    QT_CHECKF(best > 600 && best_n > 100, "column %d: %d", best, best_n);
    int gaps = 0;
    for (int y = 100; y < c.h - 80; y++) gaps += qt_is_white(&c, best, y);
    QT_CHECKF(gaps > 30, "gaps %d", gaps);
    qr_canvas_free(&c);

    /* Awkward inputs. */
    static float nan_v[100], cst[100], inf_v[100];
    for (int i = 0; i < 100; i++) { nan_v[i] = NAN; cst[i] = 2.5f; inf_v[i] = i % 2 ? INFINITY : (float)i; }
    const float *sets[4] = {nan_v, cst, inf_v, base};
    size_t ns[4] = {100, 100, 100, 1};
    for (int s = 0; s < 4; s++)
        for (int ys = 0; ys < 3; ys++) {
            QrHistChart a = {0};
            a.base = sets[s]; a.anal = sets[(s + 1) % 4]; a.n = ns[s]; a.y_scale = ys; a.error_panel = true;
            a.threshold = s == 0 ? NAN : 3; a.bins = s == 2 ? 100000 : 0;
            QT_OK(qr_plot_hist(&a, &c));
            QT_PNG_OK(c, 900, 700);
            qr_canvas_free(&c);
        }
    QrHistChart e = {0};
    QT_OK(qr_plot_hist(&e, &c));                                       /* no data at all */
    QT_PNG_OK(c, 900, 500);
    qr_canvas_free(&c);
}

/* Precomputed histograms (analysis/dist's bins): the baseline's mass sits in the left
 * quarter of the bins and the analysis' in the right quarter, so their colours land there;
 * an asymmetric grid draws its lower end (not -threshold) dashed; empty counts say so. */
static void test_plot_hist_counts(void) {
    enum { B = 64 };
    static int64_t hb[B], ha[B], he[B];
    for (int k = 0; k < B; k++) {
        hb[k] = k < B / 4 ? 10 + k : 0;
        ha[k] = k >= 3 * B / 4 ? 10 + (B - k) : 0;
        he[k] = 20 - abs(k - B / 2) / 2;
    }
    QrHistChart h = {0};
    h.title = "counts"; h.h_base = hb; h.h_anal = ha; h.h_err = he; h.n_bins = B;
    h.lo = -2; h.hi = 2; h.err_lo = -0.5; h.err_hi = 0.5; h.absmax = 2; h.error_panel = true;
    h.threshold = 1.5; h.have_clip_lo = true; h.clip_lo = -1.0;
    QrCanvas c;
    QT_OK(qr_plot_hist(&h, &c));
    QT_PNG_OK(c, 900, 700);
    /* value panel: rows 80..380 */
    double sx[2] = {0, 0};
    int cnt[2] = {0, 0};
    for (int y = 80; y < 380; y++)
        for (int x = 0; x < c.w; x++) {
            QrColor k = qr_canvas_get(&c, x, y);
            if (qt_color_eq(k, qr__pl_palette[0])) { sx[0] += x; cnt[0]++; }
            if (qt_color_eq(k, qr__pl_palette[1])) { sx[1] += x; cnt[1]++; }
        }
    QT_CHECKF(cnt[0] > 100 && cnt[1] > 100, "%d %d", cnt[0], cnt[1]);
    QT_CHECKF(sx[0] / cnt[0] < 330 && sx[1] / cnt[1] > 600, "%g %g", sx[0] / cnt[0], sx[1] / cnt[1]);
    /* dashed columns: one right of centre (+1.5) and one left of centre near -1.0, none near -1.5 */
    int right = -1, left = -1, rn = 0, ln = 0;
    for (int x = 0; x < c.w; x++) {
        int k = qt_count_color(&c, QR__PL_HILITE, x, 80, x + 1, 380);
        if (x > c.w / 2 && k > rn) { rn = k; right = x; }
        if (x < c.w / 2 && k > ln) { ln = k; left = x; }
    }
    QT_CHECKF(rn > 50 && ln > 50, "%d %d", rn, ln);
    /* x maps [-2, 2] (+2% pad) linearly: -1.0 sits halfway between the left edge and the centre, -1.5 near the edge */
    QT_CHECKF(right - c.w / 2 > 2 * (c.w / 2 - left) - 60 && left > 200, "left %d right %d", left, right);
    qr_canvas_free(&c);

    QrHistChart e = {0};
    static int64_t zero[8];
    e.h_base = zero; e.n_bins = 8; e.lo = NAN; e.hi = NAN; e.error_panel = true; e.h_err = zero;
    QT_OK(qr_plot_hist(&e, &c));
    QT_PNG_OK(c, 900, 700);
    qr_canvas_free(&c);
}

static void test_plot_box(void) {
    /* Box statistics: [outer=2, C=2, inner=3]; channel 1 holds 4..6 and 10..12. */
    float d[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    QrBoxStats st[2];
    QT_OK(qr_plot_box_stats(d, 2, 2, 3, st));
    QT_CHECK(st[0].min == 1 && st[0].max == 9 && st[0].mean == 5);
    QT_CHECK(st[1].min == 4 && st[1].max == 12 && st[1].mean == 8);
    /* numpy: quantile([4,5,6,10,11,12], .25) = 5.25, median 8, .75 -> 10.75 */
    QT_CHECKF(fabs(st[1].q1 - 5.25) < 1e-9 && st[1].median == 8 && fabs(st[1].q3 - 10.75) < 1e-9, "%g %g %g",
              st[1].q1, st[1].median, st[1].q3);
    float nan3[3] = {NAN, NAN, NAN};
    QT_OK(qr_plot_box_stats(nan3, 1, 1, 3, st));
    QT_CHECK(isnan(st[0].median));

    /* 512 channels, a few outliers: drawn in the highlight colour only when flagged. */
    enum { C = 512 };
    static QrBoxStats bx[C];
    static bool out[C];
    for (int i = 0; i < C; i++) {
        double s = 1 + (i % 17) * 0.1;
        bx[i] = (QrBoxStats){-3 * s, -s, 0.1 * s, s, 3 * s, 0.05};
        out[i] = i == 100 || i == 400;
    }
    bx[400].max = 40;
    QrBoxChart b = {0};
    b.title = "channels"; b.boxes = bx; b.n = C; b.outlier = out;
    QrCanvas c;
    QT_OK(qr_plot_box(&b, &c));
    QT_PNG_OK(c, 900, 500);
    int hi = qt_count_color(&c, QR__PL_HILITE, 0, 60, c.w, c.h);
    QT_CHECK(hi > 50);
    qr_canvas_free(&c);
    b.outlier = NULL;
    QT_OK(qr_plot_box(&b, &c));
    QT_CHECK(qt_count_color(&c, QR__PL_HILITE, 0, 0, c.w, c.h) == 0);
    qr_canvas_free(&c);

    /* Awkward: none, one, NaN stats, inf stats, constant. */
    QrBoxStats odd[4] = {{NAN, NAN, NAN, NAN, NAN, NAN}, {-INFINITY, 0, 1, 2, INFINITY, NAN}, {1, 1, 1, 1, 1, 1},
                         {0, 1, 2, 3, 4, 2}};
    int counts[4] = {0, 1, 2, 4};
    for (int k = 0; k < 4; k++) {
        QrBoxChart a = {0};
        a.boxes = odd; a.n = counts[k]; a.outlier = out;
        QT_OK(qr_plot_box(&a, &c));
        QT_PNG_OK(c, 900, 500);
        qr_canvas_free(&c);
    }
}

/* Extreme magnitudes (DBL_MAX, denormals, mixed signs) render without a crash
 * or an undefined cast (the sanitizer build runs this too). */
static void test_plot_extremes(void) {
    double v[8] = {DBL_MAX, -DBL_MAX, 1e-320, -1e-320, 1e300, -1e-300, 0, 5};
    float f[8] = {FLT_MAX, -FLT_MAX, 1e-45f, -1e-45f, 1e30f, -1e-30f, 0, 5};
    const char *nm[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    QrCanvas c;
    for (int k = 1; k <= 8; k++)
        for (int sc = 0; sc < 3; sc++) {
            QrSeries s = {"x", v + 8 - k, sc == 1};
            QrLineChart lc = {0};
            lc.n_x = k; lc.n_panels = 1; lc.panels[0] = (QrLinePanel){"y", &s, 1, sc, false, 0, 0, NULL, NULL};
            QT_OK(qr_plot_line(&lc, &c));
            QT_PNG_OK(c, 900, 500);
            qr_canvas_free(&c);
            QrBarChart b = {0};
            b.names = nm; b.values = v + 8 - k; b.n = k; b.x_scale = sc;
            QT_OK(qr_plot_bars(&b, &c));
            qr_canvas_free(&c);
            QrHistChart h = {0};
            h.base = f + 8 - k; h.anal = f; h.n = (size_t)k; h.y_scale = sc; h.error_panel = true; h.threshold = 1e30;
            QT_OK(qr_plot_hist(&h, &c));
            qr_canvas_free(&c);
            QrBoxStats bs[2] = {{v[1], v[3], v[6], v[2], v[0], v[4]}, {v[5], v[6], v[6], v[7], v[4], v[7]}};
            QrBoxChart bc = {0};
            bc.boxes = bs; bc.n = k % 3;
            QT_OK(qr_plot_box(&bc, &c));
            qr_canvas_free(&c);
        }
}

/* A mostly white chart compresses to a few tens of KB; qr_plot_save writes it. */
static void test_plot_png_size(void) {
    double y[3][60];
    for (int i = 0; i < 60; i++) {
        y[0][i] = 1 - 0.001 * i;
        y[1][i] = 1 - 0.002 * i + 0.0005 * sin(i);
        y[2][i] = 1 - 0.004 * i;
    }
    QrSeries s[3] = {{"weight only", y[0], false}, {"activation only", y[1], false}, {"full", y[2], true}};
    QrLineChart lc = {0};
    lc.title = "accumulated error"; lc.x_label = "node"; lc.n_x = 60; lc.n_panels = 1; lc.width = 800;
    lc.panels[0] = (QrLinePanel){"Cosine", s, 3, QR_SCALE_LINEAR, false, 0, 0, NULL, NULL};
    QrCanvas c;
    QT_OK(qr_plot_line(&lc, &c));
    QtPng p;
    size_t len = 0;
    const char *err = qt_png_roundtrip(&c, &p, &len);
    QT_CHECKF(!err, "%s", err);
    free(p.px);
    QT_CHECKF(len < 40000 && len > 1000, "%zu bytes", len);
    char path[300];
    snprintf(path, sizeof path, "%s/plot.png", qt_tmpdir());
    QT_OK(qr_plot_save(&c, path));
    static unsigned char buf[100000];
    FILE *f = fopen(path, "rb");
    QT_CHECK(f != NULL);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    QT_CHECK(n == len && qt_png_decode(buf, n, &p) == NULL && p.w == 800 && p.h == 500);
    free(p.px);
    qr_canvas_free(&c);
}

/* ---- samples to look at (QR_PLOT_SAMPLES=<dir>) ----------------------------------------------- */

static void qt_plot_samples(const char *dir) {
    char path[512];
    QrCanvas c;
    qr_mkdir_p(dir);
    uint64_t rng = 3;
    enum { N = 120 };
    static double w[N], act[N], full[N], cosv[N], sq[N];
    static char nb[N][64];
    static const char *names[N];
    const char *ops[5] = {"Conv", "Relu", "Add", "MaxPool", "Gemm"};
    double accw = 1, acca = 1;
    for (int i = 0; i < N; i++) {
        accw -= 0.0004 * (1 + 0.5 * sin(i * 0.3));
        acca -= 0.0009 * (1 + 0.8 * fabs(sin(i * 0.17)));
        w[i] = accw; act[i] = acca; full[i] = accw + acca - 1 - 0.0001 * i;
        cosv[i] = 1 - 0.004 * fabs(qr_rng_normal(&rng)) * (i % 13 == 5 ? 8 : 1);
        sq[i] = i == 0 ? INFINITY : 42 - 0.1 * i + 3 * qr_rng_normal(&rng);
        snprintf(nb[i], sizeof nb[i], "/backbone/stage%d/block%d/%s_%d", i / 30, (i / 5) % 6, ops[i % 5], i);
        names[i] = nb[i];
    }
    full[60] = NAN;
    QrSeries s[3] = {{"weight only", w, false}, {"activation only", act, false}, {"full quantization", full, false}};
    QrLineChart lc = {0};
    lc.title = "Accumulated error (Cosine to the float model)"; lc.x_label = "node (topological order)";
    lc.n_x = N; lc.x_names = names; lc.n_panels = 1;
    lc.panels[0] = (QrLinePanel){"Cosine", s, 3, QR_SCALE_LINEAR, false, 0, 0, NULL, NULL};
    if (qr_plot_line(&lc, &c) == QR_OK) { snprintf(path, sizeof path, "%s/accumulated_error.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }

    QrSeries s1 = {"Cosine", cosv, false}, s2 = {"SQNR (dB)", sq, false};
    QrLineChart pm = {0};
    pm.title = "Per-layer metrics"; pm.x_label = "node"; pm.n_x = N; pm.x_names = names; pm.n_panels = 2;
    pm.panels[0] = (QrLinePanel){"Cosine", &s1, 1, QR_SCALE_LINEAR, false, 0, 0, NULL, NULL};
    pm.panels[1] = (QrLinePanel){"SQNR (dB)", &s2, 1, QR_SCALE_LINEAR, false, 0, 0, NULL, NULL};
    if (qr_plot_line(&pm, &c) == QR_OK) { snprintf(path, sizeof path, "%s/per_layer_metrics.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }

    static double lg[N];
    for (int i = 0; i < N; i++) lg[i] = pow(10.0, -6 + 9.0 * i / N) * (1 + 0.3 * sin(i));
    QrSeries sl = {"MSE", lg, false};
    QrLineChart ll = {0};
    ll.title = "Log scale, index axis"; ll.x_label = "node index"; ll.n_x = N; ll.n_panels = 1;
    ll.panels[0] = (QrLinePanel){"MSE", &sl, 1, QR_SCALE_AUTO, false, 0, 0, NULL, NULL};
    if (qr_plot_line(&ll, &c) == QR_OK) { snprintf(path, sizeof path, "%s/line_log.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }

    double bv[15];
    const char *bn[15];
    for (int i = 0; i < 15; i++) { bv[i] = 0.8 / (1 + i * i * 0.3); bn[i] = names[(i * 37) % N]; }
    bn[2] = "/a/very/long/path/to/some/deeply/nested/module/in/the/network/that/goes/on/and/on/Conv_output_0";
    QrBarChart bc = {0};
    bc.title = "Sensitivity top-15 (L1 at the model output)"; bc.x_label = "L1"; bc.names = bn; bc.values = bv; bc.n = 15;
    if (qr_plot_bars(&bc, &c) == QR_OK) { snprintf(path, sizeof path, "%s/sensitivity_topk.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }
    double bv2[6] = {12.5, 3.1, -4.2, INFINITY, NAN, 0.02};
    const char *bn2[6] = {"a", "b", "negative", "infinite", "not a number", "small"};
    QrBarChart b2 = {0};
    b2.title = "Bars with awkward values"; b2.x_label = "SQNR (dB)"; b2.names = bn2; b2.values = bv2; b2.n = 6;
    if (qr_plot_bars(&b2, &c) == QR_OK) { snprintf(path, sizeof path, "%s/bars_awkward.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }

    enum { M = 20000 };
    static float base[M], anal[M];
    double scale = 3.2 / 127;
    for (int i = 0; i < M; i++) {
        base[i] = (float)(0.6 * qr_rng_normal(&rng) * (i % 50 == 0 ? 3 : 1));
        double q = round(base[i] / scale);
        q = q > 127 ? 127 : q < -128 ? -128 : q;
        anal[i] = (float)(q * scale);
    }
    QrHistChart hc = {0};
    hc.title = "/backbone/stage2/block3/Conv_12: values"; hc.base = base; hc.anal = anal; hc.n = M;
    hc.threshold = scale * 127; hc.y_scale = QR_SCALE_AUTO; hc.error_panel = true;
    if (qr_plot_hist(&hc, &c) == QR_OK) { snprintf(path, sizeof path, "%s/distribution.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }
    hc.error_panel = false; hc.y_scale = QR_SCALE_LINEAR;
    if (qr_plot_hist(&hc, &c) == QR_OK) { snprintf(path, sizeof path, "%s/distribution_linear.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }

    for (int k = 0; k < 2; k++) {
        int C = k ? 512 : 32;
        static QrBoxStats bx[512];
        static bool out[512];
        static float data[512 * 64];
        for (int ch = 0; ch < C; ch++) {
            double sd = 0.2 + 0.15 * fabs(qr_rng_normal(&rng)), mu = 0.05 * qr_rng_normal(&rng);
            out[ch] = ch % 97 == 13;
            for (int j = 0; j < 64; j++) data[ch * 64 + j] = (float)(mu + sd * qr_rng_normal(&rng) * (out[ch] ? 6 : 1));
        }
        qr_plot_box_stats(data, 1, C, 64, bx);
        QrBoxChart bc2 = {0};
        bc2.title = k ? "Per-channel weights, 512 channels" : "Per-channel weights, 32 channels";
        bc2.boxes = bx; bc2.n = C; bc2.outlier = out;
        if (qr_plot_box(&bc2, &c) == QR_OK) {
            snprintf(path, sizeof path, "%s/channelwise_%d.png", dir, C);
            qr_plot_save(&c, path);
            qr_canvas_free(&c);
        }
    }
    /* Awkward data: 1000 categories, NaN/inf/constant/single-point series, log axes. */
    enum { K = 1000 };
    static double a[K], b[K], cst[K], inf_s[K], one[K];
    static char kn[K][48];
    static const char *knames[K];
    for (int i = 0; i < K; i++) {
        a[i] = 1 - 1e-3 * pow(1.01, i % 300);
        b[i] = i % 50 == 7 ? NAN : pow(10.0, (i % 200) / 20.0 - 6);
        cst[i] = 0.5;
        inf_s[i] = i % 97 == 0 ? INFINITY : i % 89 == 1 ? -INFINITY : 40 + i % 7;
        one[i] = i == 500 ? 0.7 : NAN;
        snprintf(kn[i], sizeof kn[i], "/model/layer%d/conv/Conv_output_0", i);
        knames[i] = kn[i];
    }
    QrSeries k1[3] = {{"cosine", a, false}, {"constant", cst, true}, {"one point", one, false}};
    QrSeries k2[2] = {{"sqnr with +-inf", inf_s, false}, {"decades (log)", b, true}};
    QrLineChart aw = {0};
    aw.title = "1000 categories, inf, NaN, one point"; aw.x_label = "node"; aw.n_x = K; aw.x_names = knames; aw.n_panels = 2;
    aw.panels[0] = (QrLinePanel){"Cosine", k1, 3, QR_SCALE_LINEAR, false, 0, 0, NULL, NULL};
    aw.panels[1] = (QrLinePanel){"value", k2, 2, QR_SCALE_LOG, false, 0, 0, NULL, NULL};
    if (qr_plot_line(&aw, &c) == QR_OK) { snprintf(path, sizeof path, "%s/awkward_lines.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }
    QrLineChart sm = {0};
    sm.title = "A small chart with a long title that will not fit"; sm.n_x = 5; sm.n_panels = 1; sm.width = 240; sm.height = 160;
    sm.panels[0] = (QrLinePanel){"y", k1, 1, QR_SCALE_LINEAR, false, 0, 0, NULL, NULL};
    if (qr_plot_line(&sm, &c) == QR_OK) { snprintf(path, sizeof path, "%s/small.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }
    static float nanv[100], infv[100];
    for (int i = 0; i < 100; i++) { nanv[i] = i % 3 ? NAN : (float)i * 0.01f; infv[i] = i % 2 ? INFINITY : 1.0f; }
    QrHistChart ah = {0};
    ah.title = "Histogram with NaN / inf / constant"; ah.base = nanv; ah.anal = infv; ah.n = 100; ah.error_panel = true;
    ah.threshold = 0.5;
    if (qr_plot_hist(&ah, &c) == QR_OK) { snprintf(path, sizeof path, "%s/awkward_hist.png", dir); qr_plot_save(&c, path); qr_canvas_free(&c); }

    /* The font, all glyphs at 1x and 2x. */
    if (qr_canvas_init(&c, 620, 120, qt_white) == QR_OK) {
        char line[100];
        QrTextStyle st = {{20, 20, 20, 255}, 1, QR_ALIGN_LEFT, QR_VALIGN_TOP, 0, 0, false};
        for (int r = 0; r < 3; r++) {
            int k = 0;
            for (int ch = 32 + r * 32; ch < 64 + r * 32 && ch < 127; ch++) line[k++] = (char)ch;
            line[k] = 0;
            qr_canvas_text(&c, 10, 8 + r * 16, line, &st);
        }
        st.scale = 2;
        qr_canvas_text(&c, 10, 60, "Sensitivity 0.125 -3e-6 gjpqy", &st);
        snprintf(path, sizeof path, "%s/font.png", dir);
        qr_plot_save(&c, path);
        qr_canvas_free(&c);
    }
}

static void qt_plot_all(void) {
    QT_RUN(test_plot_canvas_pixels);
    QT_RUN(test_plot_png_reader);
    QT_RUN(test_plot_font);
    QT_RUN(test_plot_text);
    QT_RUN(test_plot_ticks);
    QT_RUN(test_plot_bars);
    QT_RUN(test_plot_lines);
    QT_RUN(test_plot_hist);
    QT_RUN(test_plot_hist_counts);
    QT_RUN(test_plot_box);
    QT_RUN(test_plot_extremes);
    QT_RUN(test_plot_png_size);
    const char *dir = getenv("QR_PLOT_SAMPLES");
    if (dir && *dir) qt_plot_samples(dir);
}
