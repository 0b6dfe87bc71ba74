/* kern/ref/q8_conv_nhwc — the channels-last 8-bit convolution (QrQ8ConvNhwcRqFn) in plain C,
 * the oracle of the SIMD variants, and what every level's packed weights share.
 *
 * Packed weights: a header (QrKCxHdr, the first QR__K_CX_HDR bytes), the column sums
 * S[m] = sum over (c, kh, kw) of w'[m] (int32, M of them, padded to 64 bytes), then the weights
 * w' = w - wz[m] as int8 in the level's layout (ref: [M][KH*KW][Cp], channels past C zero).
 * With them sum (x - zp) * w' = sum x * w' - zp * S[m] (mod 2^32): the kernels multiply the raw
 * bytes and fold -zp * S[m] into the bias; taps outside the image and the padding channels read
 * zp, whose products cancel in the same way. */

#define QR__K_CX_MAGIC 0x58505251u   /* "QRPX" */
#define QR__K_CX_HDR 64
enum { QR__K_CX_REF = 1, QR__K_CX_VNNI = 2 };   /* weight layouts */

typedef struct QrKCxHdr {
    uint32_t magic;
    int32_t layout;
    int64_t M, C, KH, KW, Cp;
    int64_t sums_bytes;         /* the column-sum block */
} QrKCxHdr;
_Static_assert(sizeof(QrKCxHdr) <= QR__K_CX_HDR, "QrKCxHdr must fit its header");

/* Channels rounded up to a multiple of 4 (the depth of one vpdpbusd / sdot step). */
static inline int64_t qr__k_cx_cp(int64_t C) { return (C + 3) / 4 * 4; }

/* Bytes of the column-sum block for M output channels. */
static inline int64_t qr__k_cx_sums_bytes(int64_t M) { return ((M + 1) * 4 + 63) / 64 * 64; }

#ifdef QR_TESTING
/* w'[m][c][t] = w[m][c][t] - wz[m] (t = kh*KW + kw) into wq (M*C*T int8 in w's order) and their
 * sums into S; false when some w' does not fit int8. */
QR_TESTAPI bool qr__k_cx_prep(int64_t M, int64_t C, int64_t T, const void *w, bool w_signed, const int32_t *wz,
                          int64_t wzs, int8_t *wq, int32_t *S) {
    for (int64_t m = 0; m < M; m++) {
        const int32_t z = wz ? wz[m * wzs] : 0;
        uint32_t s = 0;
        for (int64_t i = 0; i < C * T; i++) {
            const int64_t k = m * C * T + i;
            const int32_t v = (w_signed ? (int32_t)((const int8_t *)w)[k] : (int32_t)((const uint8_t *)w)[k]) - z;
            if (v < -128 || v > 127) return false;
            wq[k] = (int8_t)v;
            s += (uint32_t)v;
        }
        S[m] = (int32_t)s;
    }
    return true;
}
#endif

#if defined(__x86_64__) || defined(QR_TESTING)   /* the x86-64 kernels and tests */
/* Fills the header of a packed block. */
static void qr__k_cx_header(void *dst, int32_t layout, int64_t M, int64_t C, int64_t KH, int64_t KW) {
    QrKCxHdr h = { QR__K_CX_MAGIC, layout, M, C, KH, KW, qr__k_cx_cp(C), qr__k_cx_sums_bytes(M) };
    memset(dst, 0, QR__K_CX_HDR);
    memcpy(dst, &h, sizeof h);
}

/* True when p was packed in `layout` for these dimensions. */
static bool qr__k_cx_fits(const void *p, int32_t layout, int64_t M, int64_t C, int64_t KH, int64_t KW) {
    if (!p) return false;
    QrKCxHdr h;
    memcpy(&h, p, sizeof h);
    return h.magic == QR__K_CX_MAGIC && h.layout == layout && h.M == M && h.C == C && h.KH == KH && h.KW == KW;
}
#endif

#ifdef QR_TESTING
/* QrQ8ConvNhwcPackFn, ref layout [M][KH*KW][Cp]. */
QR_TESTAPI size_t qr_q8_conv_nhwc_pack__ref(int64_t M, int64_t C, int64_t KH, int64_t KW, const void *w, bool w_signed,
                                        const int32_t *wz, int64_t wzs, void *dst) {
    if (M < 1 || C < 1 || KH < 1 || KW < 1) return 0;
    const int64_t T = KH * KW, Cp = qr__k_cx_cp(C);
    const size_t total = QR__K_CX_HDR + (size_t)qr__k_cx_sums_bytes(M) + (size_t)(M * T * Cp);
    if (!dst) return total;
    int8_t *wq = malloc((size_t)(M * C * T));
    int32_t *S = malloc((size_t)M * sizeof *S);
    bool ok = wq && S && qr__k_cx_prep(M, C, T, w, w_signed, wz, wzs, wq, S);
    if (ok) {
        unsigned char *d = dst;
        qr__k_cx_header(d, QR__K_CX_REF, M, C, KH, KW);
        memset(d + QR__K_CX_HDR, 0, (size_t)qr__k_cx_sums_bytes(M));
        memcpy(d + QR__K_CX_HDR, S, (size_t)M * sizeof *S);
        int8_t *p = (int8_t *)(d + QR__K_CX_HDR + qr__k_cx_sums_bytes(M));
        memset(p, 0, (size_t)(M * T * Cp));
        for (int64_t m = 0; m < M; m++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t t = 0; t < T; t++) p[(m * T + t) * Cp + c] = wq[(m * C + c) * T + t];
    }
    free(wq);
    free(S);
    return ok ? total : 0;
}
#endif

/* QrQ8ConvNhwcRqFn in plain C: each sum tap by tap, then qr__k_q8_rq_elem. */
static void qr_q8_to_nhwc__ref(const void *x, bool x_signed, int64_t C, int64_t n, int64_t ldx, int64_t Cp, uint8_t pad,
                               uint8_t *dst);

#ifdef QR_TESTING
QR_TESTAPI bool qr_q8_conv_nhwc_rq__ref(int64_t M, const void *w_packed, const QrQ8ConvNhwc *x, const QrQ8Requant *rq) {
    if (!qr__k_cx_fits(w_packed, QR__K_CX_REF, M, x->C, x->KH, x->KW)) return false;
    const int64_t T = x->KH * x->KW, Cp = x->Cp;
    if (x->src) qr_q8_to_nhwc__ref(x->src, x->src_signed, x->C, x->H * x->W, x->H * x->W, Cp, (uint8_t)x->zp, x->fill);
    const int32_t *S = (const int32_t *)((const unsigned char *)w_packed + QR__K_CX_HDR);
    const int8_t *wp = (const int8_t *)((const unsigned char *)w_packed + QR__K_CX_HDR + qr__k_cx_sums_bytes(M));
    for (int64_t m = 0; m < M; m++)
        for (int64_t oh = 0; oh < x->OH; oh++)
            for (int64_t ow = 0; ow < x->OW; ow++) {
                uint32_t s = 0;
                for (int64_t kh = 0; kh < x->KH; kh++)
                    for (int64_t kw = 0; kw < x->KW; kw++) {
                        const int64_t ih = oh * x->sh - x->ph + kh * x->dh, iw = ow * x->sw - x->pw + kw * x->dw;
                        const bool in = ih >= 0 && ih < x->H && iw >= 0 && iw < x->W;
                        const uint8_t *xp = in ? x->x + (ih * x->W + iw) * Cp : NULL;
                        const int8_t *wt = wp + (m * T + kh * x->KW + kw) * Cp;
                        for (int64_t c = 0; c < Cp; c++) s += (uint32_t)((in ? xp[c] : x->zp) * (int32_t)wt[c]);
                    }
                s -= (uint32_t)x->zp * (uint32_t)S[m];
                qr__k_q8_rq_elem(rq, m, oh * x->OW + ow, (int32_t)s);
            }
    return true;
}
#endif

/* QrQ8ToNhwcFn in plain C. */
static void qr_q8_to_nhwc__ref(const void *x, bool x_signed, int64_t C, int64_t n, int64_t ldx, int64_t Cp, uint8_t pad,
                               uint8_t *dst) {
    const uint8_t *xb = x, flip = x_signed ? 0x80 : 0;
    for (int64_t p = 0; p < n; p++) {
        for (int64_t c = 0; c < C; c++) dst[p * Cp + c] = (uint8_t)(xb[c * ldx + p] ^ flip);
        for (int64_t c = C; c < Cp; c++) dst[p * Cp + c] = pad;
    }
}
