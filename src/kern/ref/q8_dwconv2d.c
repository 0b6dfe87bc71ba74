/* kern/ref/q8_dwconv2d — depthwise 2-D convolution of one 8-bit plane into int32 (the oracle),
 * and the padded plane layout the SIMD variants share.
 *
 * SIMD layout: x - xz is written once as int16 into sh * sw phase planes, zero where the
 * window leaves x: plane (a, b) holds the padded rows r = i*sh + a (input row r - ph) and
 * columns c = q*sw + b (input column c - pw), wq columns per row. Output (oh, ow) is computed
 * at the flattened position oh*wq + ow (columns ow >= OW are computed and dropped), and its tap
 * (kh, kw) sits in plane ((kh*dh) % sh, (kw*dw) % sw) at that position plus
 * ((kh*dh) / sh) * wq + (kw*dw) / sw: one contiguous run of outputs, whole rows at a time, for
 * every stride and dilation, with little waste on small planes. Taps of one plane at
 * neighbouring columns form a pair: one vpmaddwd / smlal over the int16 pairs
 * (v[e + 2j], v[e + 2j + 1]) gives two taps of output e + 2j; the load at e + 1 gives the odd
 * outputs. A tap without a neighbour pairs with weight 0. */

#define QR__K_DW_RQ_MAXT 256   /* taps of the requantizing kernels (more: they return false) */

/* y (OH*OW) = sum over the window of (x - xz) * w, taps outside x skipped (QrQ8DwConv2dFn). */
static void qr_q8_dwconv2d__ref(const QrQ8Win *p, const int16_t *w, int32_t *y, void *scratch) {
    QR_UNUSED(scratch);
    const uint8_t *xu = p->x;
    const int8_t *xs = p->x;
    for (int64_t oh = 0; oh < p->OH; oh++)
        for (int64_t ow = 0; ow < p->OW; ow++) {
            uint32_t s = 0;
            for (int64_t kh = 0; kh < p->KH; kh++) {
                int64_t ih = oh * p->sh - p->ph + kh * p->dh;
                if (ih < 0 || ih >= p->H) continue;
                for (int64_t kw = 0; kw < p->KW; kw++) {
                    int64_t iw = ow * p->sw - p->pw + kw * p->dw;
                    if (iw < 0 || iw >= p->W) continue;
                    int32_t v = p->x_signed ? xs[ih * p->W + iw] : xu[ih * p->W + iw];
                    s += (uint32_t)((v - p->xz) * (int32_t)w[kh * p->KW + kw]);
                }
            }
            y[oh * p->OW + ow] = (int32_t)s;
        }
}

#ifdef QR_TESTING
/* QrQ8DwConv2dRqFn: qr_q8_dwconv2d__ref, then qr_s32_requant__ref, a row of outputs at a time. */
QR_TESTAPI bool qr_q8_dwconv2d_rq__ref(const QrQ8Win *p, int64_t planes, int64_t ldx, const int8_t *w, const QrQ8PlaneRq *rq,
                                   void *y, int64_t ldy, void *scratch) {
    QR_UNUSED(scratch);
    const int64_t T = p->KH * p->KW;
    if (T > QR__K_DW_RQ_MAXT) return false;
    for (int64_t k = 0; k < planes; k++) {
        int16_t w16[QR__K_DW_RQ_MAXT];
        for (int64_t t = 0; t < T; t++) w16[t] = w[k * T + t];
        QrQ8Win row = *p;
        row.x = (const uint8_t *)p->x + k * ldx;
        row.OH = 1;
        for (int64_t oh = 0; oh < p->OH; oh++) {   /* output row oh: the window moved down by oh*sh */
            int32_t acc[1024];
            for (int64_t o0 = 0; o0 < p->OW; o0 += 1024) {
                QrQ8Win part = row;
                part.ph = p->ph - oh * p->sh;
                part.pw = p->pw - o0 * p->sw;
                part.OW = QR_MIN(1024, p->OW - o0);
                qr_q8_dwconv2d__ref(&part, w16, acc, NULL);
                qr_s32_requant__ref(part.OW, acc, &rq[k].bias, 0, &rq[k].mult, 0, rq[k].zp, rq[k].lo, rq[k].hi,
                                    (uint8_t *)y + k * ldy + oh * p->OW + o0, 1);
            }
        }
    }
    return true;
}
#endif

/* ---- the shared SIMD layout ------------------------------------------------------------ */

#define QR__K_DW_VMAX 32   /* outputs per vector step of the widest level (AVX-512: 2 x 16) */
#define QR__K_DW_MAXKW 64  /* wider kernels run the ref */

typedef struct QrKDwLayout {
    int64_t hq, wq;        /* rows and columns of a phase plane */
    int64_t nq;            /* flattened outputs computed: OH * wq, rounded up to QR__K_DW_VMAX */
    int64_t plane;         /* int16 elements per phase plane, with zeroed slack for the last step */
} QrKDwLayout;

static QrKDwLayout qr__k_dw_layout(const QrQ8Win *p) {
    QrKDwLayout l;
    l.hq = p->OH + (p->KH - 1) * p->dh / p->sh;
    l.wq = p->OW + (p->KW - 1) * p->dw / p->sw;
    l.nq = (p->OH * l.wq + QR__K_DW_VMAX - 1) / QR__K_DW_VMAX * QR__K_DW_VMAX;
    /* the steps past the last output read up to (wq - OW) + QR__K_DW_VMAX + 1 past hq*wq */
    l.plane = (l.hq * l.wq + (l.wq - p->OW) + QR__K_DW_VMAX + 2 + 15) / 16 * 16;
    return l;
}

static size_t qr_q8_dwconv2d_scratch(const QrQ8Win *p) {
    QrKDwLayout l = qr__k_dw_layout(p);
    return (size_t)(l.plane * p->sh * p->sw) * sizeof(int16_t) + (size_t)(l.nq + QR__K_DW_VMAX) * sizeof(int32_t) + 64;
}

/* Small planes (at most QR__K_DWC_MAXP outputs, QR__K_DWC_MAXT taps, a padded plane of at
 * most QR__K_DWC_MAXPAD bytes, as the input plane) go channels-last through the requantizing kernel of
 * kern/avx512/q8_dwconv2d.c: blocks of QR_KERN_DWC_CB planes, one vector lane per plane. */
#define QR_KERN_DWC_CB 16
#define QR__K_DWC_MAXP 256
#define QR__K_DWC_MAXT 25
#define QR__K_DWC_MAXPAD 4096

/* The padded plane of the requantizing kernels: hp rows of wp bytes (input row r - ph, column
 * c - pw); true when p is a small plane for the channels-last path. */
static bool qr_kern_dwc_small(const QrQ8Win *p, int64_t *hp, int64_t *wp) {
    *hp = (p->OH - 1) * p->sh + (p->KH - 1) * p->dh + 1;
    *wp = QR_MAX((p->OW - 1) * p->sw + (p->KW - 1) * p->dw + 1, p->pw + p->W);
    return p->OH * p->OW <= QR__K_DWC_MAXP && p->KH * p->KW <= QR__K_DWC_MAXT && p->H * p->W <= QR__K_DWC_MAXPAD &&
           *hp <= QR__K_DWC_MAXPAD &&
           *wp <= QR__K_DWC_MAXPAD && *hp * *wp <= QR__K_DWC_MAXPAD;
}

/* The requantizing kernels' scratch: the plane padded with its zero point (kern/avx512/
 * q8_dwconv2d.c), rows of (OW - 1)*sw + KW bytes (at least W + pw), plus vector slack; for a
 * small plane (qr_kern_dwc_small) also the channels-last block: the padded planes of
 * QR_KERN_DWC_CB channels, their outputs pixel by pixel (rounded up to 16 pixels) and an int64
 * offset per input pixel. */
static size_t qr_q8_dwconv2d_rq_scratch(const QrQ8Win *p) {
    int64_t hp, wp;
    const bool small = qr_kern_dwc_small(p, &hp, &wp);
    const size_t plane = (size_t)(hp * wp + 256);
    if (!small) return plane;
    const size_t blk = (size_t)(hp * wp * QR_KERN_DWC_CB + 64) + (size_t)((p->OH * p->OW + 15) / 16 * 16 * QR_KERN_DWC_CB) +
                       (size_t)(p->H * p->W) * sizeof(int64_t);   /* + each input pixel's place */
    return QR_MAX(plane, blk + 64);
}

/* Row i of phase plane (a, b) for input row ih (outside x: zeros) into d[0..wq), scalar. */
static void qr__k_dw_fill_row(const QrQ8Win *p, const QrKDwLayout *l, int64_t ih, int64_t b, int16_t *d) {
    const int64_t s = p->sw;
    if (ih < 0 || ih >= p->H) {
        memset(d, 0, (size_t)l->wq * sizeof *d);
        return;
    }
    /* columns q with 0 <= q*s + b - pw < W */
    const int64_t t = b - p->pw;
    int64_t q0 = t >= 0 ? 0 : (-t + s - 1) / s;
    int64_t q1 = p->W - 1 - t < 0 ? 0 : (p->W - 1 - t) / s + 1;
    q1 = QR_MIN(QR_MAX(q1, q0), l->wq);
    q0 = QR_MIN(q0, q1);
    for (int64_t q = 0; q < q0; q++) d[q] = 0;
    const int16_t z = (int16_t)p->xz;
    const int64_t c0 = q0 * s + t;   /* input column of q0 (>= 0) */
    if (p->x_signed) {
        const int8_t *xr = (const int8_t *)p->x + ih * p->W + c0;
        for (int64_t q = 0; q < q1 - q0; q++) d[q0 + q] = (int16_t)(xr[q * s] - z);
    } else {
        const uint8_t *xr = (const uint8_t *)p->x + ih * p->W + c0;
        for (int64_t q = 0; q < q1 - q0; q++) d[q0 + q] = (int16_t)(xr[q * s] - z);
    }
    for (int64_t q = q1; q < l->wq; q++) d[q] = 0;
}

/* Writes the phase planes of p into dst (see the top of the file), rows by fill_row. */
typedef void (*QrKDwFillRow)(const QrQ8Win *p, const QrKDwLayout *l, int64_t ih, int64_t b, int16_t *d);
static void qr__k_dw_fill(const QrQ8Win *p, const QrKDwLayout *l, int16_t *dst, QrKDwFillRow fill_row) {
    for (int64_t a = 0; a < p->sh; a++)
        for (int64_t b = 0; b < p->sw; b++) {
            int16_t *pl = dst + (a * p->sw + b) * l->plane;
            for (int64_t i = 0; i < l->hq; i++) fill_row(p, l, i * p->sh + a - p->ph, b, pl + i * l->wq);
            memset(pl + l->hq * l->wq, 0, (size_t)(l->plane - l->hq * l->wq) * sizeof *pl);
        }
}

/* The taps of one kernel row grouped into pairs: pair i reads plane phase[i] at column offset
 * off[i] (plus the output column) and multiplies (v[off], v[off + 1]) by (w[a[i]], w[b[i]]);
 * b[i] < 0: the second weight is 0. Returns the pair count. */
typedef struct QrKDwPairs { int n; int phase[QR__K_DW_MAXKW]; int64_t off[QR__K_DW_MAXKW]; int a[QR__K_DW_MAXKW], b[QR__K_DW_MAXKW]; } QrKDwPairs;

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
static void qr__k_dw_pairs(const QrQ8Win *p, QrKDwPairs *pr) {
    bool used[QR__K_DW_MAXKW] = { false };
    pr->n = 0;
    for (int kw = 0; kw < p->KW; kw++) {
        if (used[kw]) continue;
        int64_t c = kw * p->dw;
        int i = pr->n++;
        pr->phase[i] = (int)(c % p->sw);
        pr->off[i] = c / p->sw;
        pr->a[i] = kw;
        pr->b[i] = -1;
        used[kw] = true;
        /* the tap at the next column of the same plane: c + sw = kw2 * dw */
        if ((c + p->sw) % p->dw == 0) {
            int64_t kw2 = (c + p->sw) / p->dw;
            if (kw2 < p->KW && !used[kw2]) { pr->b[i] = (int)kw2; used[kw2] = true; }
        }
    }
}
#endif

/* (w[a], w[b]) as the int32 a vpmaddwd / smlal pair multiplies by. */
static inline int32_t qr__k_dw_wpair(const int16_t *w, int a, int b) {
    return (int32_t)((uint32_t)(uint16_t)w[a] | ((uint32_t)(uint16_t)(b >= 0 ? w[b] : 0) << 16));
}
