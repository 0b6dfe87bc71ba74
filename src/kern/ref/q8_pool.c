/* kern/ref/q8_pool — max pooling of one 8-bit plane (the oracle) and the padded byte layout the
 * SIMD variants share: the plane is written once, its padding filled with the type's smallest
 * value (which never wins over a real tap: every window has one, qr_q8_win_covered), split by
 * column phase as in kern/ref/q8_dwconv2d.c, so that every tap of a row of outputs is one
 * contiguous load and the window maximum is KH*KW vector maxima. */

/* Whether some tap t < k of every output o < n lands in [0, in): o*s - p + t*d. */
static bool qr__k_axis_covered(int64_t n, int64_t in, int64_t k, int64_t s, int64_t d, int64_t p) {
    for (int64_t o = 0; o < n; o++) {
        bool any = false;
        for (int64_t t = 0; t < k && !any; t++) {
            int64_t i = o * s - p + t * d;
            any = i >= 0 && i < in;
        }
        if (!any) return false;
    }
    return true;
}

static bool qr_q8_win_covered(const QrQ8Win *p) {
    return qr__k_axis_covered(p->OH, p->H, p->KH, p->sh, p->dh, p->ph) &&
           qr__k_axis_covered(p->OW, p->W, p->KW, p->sw, p->dw, p->pw);
}

/* y (OH*OW) = max over the taps inside x (QrQ8MaxPool2dFn). */
static void qr_q8_maxpool2d__ref(const QrQ8Win *p, void *y, void *scratch) {
    QR_UNUSED(scratch);
    for (int64_t oh = 0; oh < p->OH; oh++)
        for (int64_t ow = 0; ow < p->OW; ow++) {
            int32_t best = 0;
            bool any = false;
            for (int64_t kh = 0; kh < p->KH; kh++) {
                int64_t ih = oh * p->sh - p->ph + kh * p->dh;
                if (ih < 0 || ih >= p->H) continue;
                for (int64_t kw = 0; kw < p->KW; kw++) {
                    int64_t iw = ow * p->sw - p->pw + kw * p->dw;
                    if (iw < 0 || iw >= p->W) continue;
                    int32_t v = p->x_signed ? ((const int8_t *)p->x)[ih * p->W + iw] : ((const uint8_t *)p->x)[ih * p->W + iw];
                    if (!any || v > best) best = v;
                    any = true;
                }
            }
            ((uint8_t *)y)[oh * p->OW + ow] = (uint8_t)best;
        }
}

/* ---- the shared SIMD layout ------------------------------------------------------------ */

#define QR__K_MP_V 64   /* outputs per vector step of the widest level */

typedef struct QrKMpLayout { int64_t hp, wq, owp, plane; } QrKMpLayout;

static QrKMpLayout qr__k_mp_layout(const QrQ8Win *p) {
    QrKMpLayout l;
    l.hp = (p->OH - 1) * p->sh + (p->KH - 1) * p->dh + 1;
    l.owp = (p->OW + QR__K_MP_V - 1) / QR__K_MP_V * QR__K_MP_V;
    l.wq = ((p->KW - 1) * p->dw / p->sw + l.owp + 63) / 64 * 64;
    l.plane = l.hp * l.wq;
    return l;
}

static size_t qr_q8_maxpool2d_scratch(const QrQ8Win *p) {
    QrKMpLayout l = qr__k_mp_layout(p);
    return (size_t)(l.plane * p->sw) + 2 * QR__K_MP_V;
}

/* Writes the phase planes of p (bytes, padding = the type's smallest value) into dst. */
static void qr__k_mp_fill(const QrQ8Win *p, const QrKMpLayout *l, uint8_t *dst) {
    const int64_t s = p->sw;
    const uint8_t lowest = p->x_signed ? 0x80 : 0x00;
    for (int64_t ph = 0; ph < s; ph++)
        for (int64_t r = 0; r < l->hp; r++) {
            uint8_t *d = dst + ph * l->plane + r * l->wq;
            int64_t ih = r - p->ph;
            if (ih < 0 || ih >= p->H) {
                memset(d, lowest, (size_t)l->wq);
                continue;
            }
            int64_t t = ph - p->pw;
            int64_t q0 = t >= 0 ? 0 : (-t + s - 1) / s;
            int64_t q1 = p->W - 1 - t < 0 ? 0 : (p->W - 1 - t) / s + 1;
            q1 = QR_MIN(QR_MAX(q1, q0), l->wq);
            q0 = QR_MIN(q0, q1);
            memset(d, lowest, (size_t)q0);
            const uint8_t *xr = (const uint8_t *)p->x + ih * p->W + q0 * s + t;
            if (s == 1) memcpy(d + q0, xr, (size_t)(q1 - q0));
            else for (int64_t q = 0; q < q1 - q0; q++) d[q0 + q] = xr[q * s];
            memset(d + q1, lowest, (size_t)(l->wq - q1));
        }
}
