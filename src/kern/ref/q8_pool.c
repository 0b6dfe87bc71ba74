/* kern/ref/q8_pool — max pooling of one 8-bit plane (the oracle) and the padded byte layout the
 * SIMD variants share: the plane's rows are written once, their column padding filled with the
 * type's smallest value (which never wins over a real tap: every window has one,
 * qr_q8_win_covered), split by column phase as in kern/ref/q8_dwconv2d.c, so that every tap of a
 * row of outputs is one contiguous load and the window maximum is one vector maximum per tap.
 * Rows are not padded: every level visits only the window rows inside x (qr_kern_win_taps). */

/* Whether some tap t < k of every output o < n lands in [0, in): o*s - p + t*d. O(n). */
static bool qr__k_axis_covered(int64_t n, int64_t in, int64_t k, int64_t s, int64_t d, int64_t p) {
    for (int64_t o = 0; o < n; o++) {
        int64_t lo, hi;
        qr_kern_win_taps(o * s - p, k, d, in, &lo, &hi);
        if (lo >= hi) return false;
    }
    return true;
}

static bool qr_q8_win_covered(const QrQ8Win *p) {
    return qr__k_axis_covered(p->OH, p->H, p->KH, p->sh, p->dh, p->ph) &&
           qr__k_axis_covered(p->OW, p->W, p->KW, p->sw, p->dw, p->pw);
}

/* y (OH*OW) = max over the taps inside x (QrQ8MaxPool2dFn); only those taps are visited. */
static void qr_q8_maxpool2d__ref(const QrQ8Win *p, void *y, void *scratch) {
    QR_UNUSED(scratch);
    for (int64_t oh = 0; oh < p->OH; oh++) {
        int64_t h0, h1;
        qr_kern_win_taps(oh * p->sh - p->ph, p->KH, p->dh, p->H, &h0, &h1);
        for (int64_t ow = 0; ow < p->OW; ow++) {
            int64_t w0, w1;
            qr_kern_win_taps(ow * p->sw - p->pw, p->KW, p->dw, p->W, &w0, &w1);
            int32_t best = 0;
            bool any = false;
            for (int64_t kh = h0; kh < h1; kh++) {
                const int64_t row = (oh * p->sh - p->ph + kh * p->dh) * p->W;
                for (int64_t kw = w0; kw < w1; kw++) {
                    int64_t i = row + ow * p->sw - p->pw + kw * p->dw;
                    int32_t v = p->x_signed ? ((const int8_t *)p->x)[i] : ((const uint8_t *)p->x)[i];
                    if (!any || v > best) best = v;
                    any = true;
                }
            }
            ((uint8_t *)y)[oh * p->OW + ow] = (uint8_t)best;
        }
    }
}

/* ---- the shared SIMD layout ------------------------------------------------------------ */

#define QR__K_MP_V 64   /* outputs per vector step of the widest level */
#define QR__K_MP_MAXKW 64

/* sw phase planes of H rows of wq bytes: phase b, row ih, column q holds x[ih][q*sw + b - pw]
 * (the smallest value outside x); output column ow's tap kw is column ow + (kw*dw)/sw of phase
 * (kw*dw) % sw. ok: the SIMD levels use this layout (KW <= QR__K_MP_MAXKW, every window covered,
 * and the planes at most a few times the input: a huge dilation, stride or padding would make
 * them gigabytes of padding, and the ref kernel visits only the taps inside x). */
typedef struct QrKMpLayout { bool ok; int64_t owp, wq, plane; } QrKMpLayout;

static QrKMpLayout qr__k_mp_layout(const QrQ8Win *p) {
    QrKMpLayout l = { false, 0, 0, 0 };
    if (p->KW > QR__K_MP_MAXKW || !qr_q8_win_covered(p)) return l;
    l.owp = (p->OW + QR__K_MP_V - 1) / QR__K_MP_V * QR__K_MP_V;
    double wq = (double)(p->KW - 1) * (double)p->dw / (double)p->sw + (double)l.owp + 63.0;
    double bytes = wq * (double)p->H * (double)p->sw;
    if (bytes > 8.0 * (double)p->H * (double)p->W + (double)(1 << 20)) return l;
    l.wq = ((p->KW - 1) * p->dw / p->sw + l.owp + 63) / 64 * 64;
    l.plane = p->H * l.wq;
    l.ok = true;
    return l;
}

static size_t qr_q8_maxpool2d_scratch(const QrQ8Win *p) {
    QrKMpLayout l = qr__k_mp_layout(p);
    return l.ok ? (size_t)(l.plane * p->sw) + 2 * QR__K_MP_V : 2 * QR__K_MP_V;
}

/* d[q] = s[2q] for q < n (a stride-2 phase row), reading nothing past s[2n-2]. */
typedef void (*QrKMpEvenFn)(const uint8_t *s, int64_t n, uint8_t *d);

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
/* Writes the phase planes of p (bytes, padding = the type's smallest value) into dst; the
 * stride-2 phase rows through even (a SIMD level's) when not NULL, else byte by byte. */
static void qr__k_mp_fill(const QrQ8Win *p, const QrKMpLayout *l, uint8_t *dst, QrKMpEvenFn even) {
    const int64_t s = p->sw;
    const uint8_t lowest = p->x_signed ? 0x80 : 0x00;
    for (int64_t ph = 0; ph < s; ph++)
        for (int64_t ih = 0; ih < p->H; ih++) {
            uint8_t *d = dst + ph * l->plane + ih * l->wq;
            int64_t t = ph - p->pw;
            int64_t q0 = t >= 0 ? 0 : (-t + s - 1) / s;
            int64_t q1 = p->W - 1 - t < 0 ? 0 : (p->W - 1 - t) / s + 1;
            q1 = QR_MIN(QR_MAX(q1, q0), l->wq);
            q0 = QR_MIN(q0, q1);
            memset(d, lowest, (size_t)q0);
            const uint8_t *xr = (const uint8_t *)p->x + ih * p->W + q0 * s + t;
            if (s == 1) memcpy(d + q0, xr, (size_t)(q1 - q0));
            else if (s == 2 && even) even(xr, q1 - q0, d + q0);
            else for (int64_t q = 0; q < q1 - q0; q++) d[q0 + q] = xr[q * s];
            memset(d + q1, lowest, (size_t)(l->wq - q1));
        }
}
#endif
