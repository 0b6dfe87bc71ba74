/* kern/avx512/q8_dwconv2d — depthwise 2-D convolution of one 8-bit plane with AVX-512BW: as the
 * AVX2 kernel (phase planes, vpmaddwd tap pairs, even / odd accumulators) with 32 flattened
 * outputs per step; and with AVX-512 VNNI, requantized in the same pass from the bytes
 * (qr_q8_dwconv2d_rq__vnni). Bit-exact with the __ref kernels. */
#if defined(__x86_64__)

QR__K_AVX512BW static void qr_q8_dwconv2d__avx512(const QrQ8Win *p, const int16_t *w, int32_t *y, void *scratch) {
    const QrKDwLayout l = qr__k_dw_layout(p);
    QrKDwTaps t;
    if (!qr__k_dw_taps(p, &l, w, &t)) {
        qr_q8_dwconv2d__ref(p, w, y, scratch);
        return;
    }
    int16_t *planes = scratch;
    int32_t *acc = (int32_t *)((unsigned char *)scratch + (size_t)(l.plane * p->sh * p->sw) * sizeof(int16_t));
    qr__k_dw_fill(p, &l, planes, qr__k_dw_fill_row_avx2);
    const __m512i i0 = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i i1 = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const int64_t nt = p->KH * t.np, n = p->OH * l.wq;
    for (int64_t q = 0; q < n; q += 32) {
        __m512i e = _mm512_setzero_si512(), o = e;
        for (int64_t i = 0; i < nt; i++) {
            const int16_t *src = planes + t.off[i] + q;
            const __m512i wv = _mm512_set1_epi32(t.wp[i]);
            e = _mm512_add_epi32(e, _mm512_madd_epi16(_mm512_loadu_si512(src), wv));
            o = _mm512_add_epi32(o, _mm512_madd_epi16(_mm512_loadu_si512(src + 1), wv));
        }
        _mm512_storeu_si512(acc + q, _mm512_permutex2var_epi32(e, i0, o));
        _mm512_storeu_si512(acc + q + 16, _mm512_permutex2var_epi32(e, i1, o));
    }
    qr__k_dw_compact(p, &l, acc, y);
}

/* The plane into the scratch as bytes padded with the zero point (x ^ 0x80 and xz + 128 for
 * int8): row r is input row r - ph, column c input column c - pw, wp columns per row. */
QR__K_AVX512BW static void qr__k_dwrq_pad(const QrQ8Win *p, int64_t hp, int64_t wp, uint8_t pad, uint8_t *d) {
    const __m512i flip = _mm512_set1_epi8(p->x_signed ? (char)0x80 : 0), vpad = _mm512_set1_epi8((char)pad);
    const int64_t nc = QR_MIN(p->W, wp - p->pw);   /* input columns inside a padded row */
    for (int64_t r = 0; r < hp; r++, d += wp) {
        const int64_t ih = r - p->ph;
        for (int64_t c = 0; c < wp; c += 64)   /* the row's padding (and what the copy overwrites) */
            _mm512_mask_storeu_epi8(d + c, wp - c >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (wp - c)) - 1), vpad);
        if (ih < 0 || ih >= p->H || nc <= 0) continue;
        const uint8_t *xr = (const uint8_t *)p->x + ih * p->W;
        for (int64_t c = 0; c < nc; c += 64) {
            const __mmask64 m = nc - c >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (nc - c)) - 1);
            _mm512_mask_storeu_epi8(d + p->pw + c, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, xr + c), flip));
        }
    }
}

/* One output row of the padded plane (r0: its first kernel row, rows dh*wp apart): KH kernel
 * rows of G groups of 4 taps, 16 outputs per step (constants folded when KH, G are). */
QR__K_VNNI static inline __attribute__((always_inline)) void
qr__k_dwrq_row(const int64_t KH, const int G, const uint8_t *r0, int64_t rs, int64_t s, int64_t OW, const __m512i *wv,
               __m512i idx, __m512i shuf, __m512i bias, __m512 mult, __m512 flo, __m512 fhi, __m512i vzp, uint8_t *y) {
#define QR__K_DWRQ_TAPS(p) _mm512_shuffle_epi8(_mm512_permutexvar_epi32(idx, _mm512_loadu_si512(p)), shuf)
    const __m512i w0 = wv[0], w1 = KH * G > 1 ? wv[1] : w0, w2 = KH * G > 2 ? wv[2] : w0;
    for (int64_t ow = 0; ow < OW; ow += 16) {
        __m512i acc = _mm512_setzero_si512();
        const uint8_t *src = r0 + ow * s;
        if (KH == 3 && G == 1) {   /* the common 3x3, written out (the compiler keeps the loop otherwise) */
            acc = _mm512_dpbusd_epi32(acc, QR__K_DWRQ_TAPS(src), w0);
            acc = _mm512_dpbusd_epi32(acc, QR__K_DWRQ_TAPS(src + rs), w1);
            acc = _mm512_dpbusd_epi32(acc, QR__K_DWRQ_TAPS(src + 2 * rs), w2);
        } else {
            for (int64_t kh = 0; kh < KH; kh++, src += rs)
                for (int g = 0; g < G; g++) acc = _mm512_dpbusd_epi32(acc, QR__K_DWRQ_TAPS(src + 4 * g), wv[kh * G + g]);
        }
        __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc, bias)), mult);
        f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
        const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), vzp);
        const __mmask16 m = OW - ow >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (OW - ow)) - 1);
        _mm_mask_storeu_epi8(y + ow, m, _mm512_cvtepi32_epi8(q));   /* q is in range: its low byte */
    }
#undef QR__K_DWRQ_TAPS
}

/* Two output rows of at most 8 outputs in one step (small planes): lanes 0-7 row a (first
 * kernel row at ra), lanes 8-15 row b (rb; b absent: yb NULL), the two loads joined by vpermt2d. */
QR__K_VNNI static inline __attribute__((always_inline)) void
qr__k_dwrq_row2(const int64_t KH, const int G, const uint8_t *ra, const uint8_t *rb, int64_t rs, int64_t OW,
                const __m512i *wv, __m512i idx2, __m512i shuf, __m512i bias, __m512 mult, __m512 flo, __m512 fhi,
                __m512i vzp, uint8_t *ya, uint8_t *yb) {
    __m512i acc = _mm512_setzero_si512();
#define QR__K_DWRQ_TAPS2(pa, pb) _mm512_shuffle_epi8(_mm512_permutex2var_epi32(_mm512_loadu_si512(pa), idx2, _mm512_loadu_si512(pb)), shuf)
    if (KH == 3 && G == 1) {
        acc = _mm512_dpbusd_epi32(acc, QR__K_DWRQ_TAPS2(ra, rb), wv[0]);
        acc = _mm512_dpbusd_epi32(acc, QR__K_DWRQ_TAPS2(ra + rs, rb + rs), wv[1]);
        acc = _mm512_dpbusd_epi32(acc, QR__K_DWRQ_TAPS2(ra + 2 * rs, rb + 2 * rs), wv[2]);
    } else {
        for (int64_t kh = 0; kh < KH; kh++, ra += rs, rb += rs)
            for (int g = 0; g < G; g++) acc = _mm512_dpbusd_epi32(acc, QR__K_DWRQ_TAPS2(ra + 4 * g, rb + 4 * g), wv[kh * G + g]);
    }
#undef QR__K_DWRQ_TAPS2
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc, bias)), mult);
    f = _mm512_min_ps(_mm512_max_ps(f, flo), fhi);
    const __m128i q = _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), vzp));
    const __mmask16 m = (__mmask16)((1u << OW) - 1);
    _mm_mask_storeu_epi8(ya, m, q);
    if (yb) _mm_mask_storeu_epi8(yb - 8, (__mmask16)(m << 8), q);
}

/* A 16 x 16 byte tile transposed (r[i] byte j <-> r[j] byte i): four rounds of the same perfect
 * shuffle, each turning (register i, byte b) into (i << 1 | b >> 3, b << 1 | i >> 3) (4-bit
 * indices), which rotates the 8-bit pair by one: four rounds swap the halves. Written out on
 * named registers (an array would live on the stack). */
#define QR__K_DWC_ROUND(a, b)                                                                                   \
    b##0 = _mm_unpacklo_epi8(a##0, a##8);  b##1 = _mm_unpackhi_epi8(a##0, a##8);                               \
    b##2 = _mm_unpacklo_epi8(a##1, a##9);  b##3 = _mm_unpackhi_epi8(a##1, a##9);                               \
    b##4 = _mm_unpacklo_epi8(a##2, a##10); b##5 = _mm_unpackhi_epi8(a##2, a##10);                              \
    b##6 = _mm_unpacklo_epi8(a##3, a##11); b##7 = _mm_unpackhi_epi8(a##3, a##11);                              \
    b##8 = _mm_unpacklo_epi8(a##4, a##12); b##9 = _mm_unpackhi_epi8(a##4, a##12);                              \
    b##10 = _mm_unpacklo_epi8(a##5, a##13); b##11 = _mm_unpackhi_epi8(a##5, a##13);                            \
    b##12 = _mm_unpacklo_epi8(a##6, a##14); b##13 = _mm_unpackhi_epi8(a##6, a##14);                            \
    b##14 = _mm_unpacklo_epi8(a##7, a##15); b##15 = _mm_unpackhi_epi8(a##7, a##15);
#define QR__K_DWC_T16(LOAD, STORE)                                                                              \
    {                                                                                                           \
        __m128i a0 = LOAD(0), a1 = LOAD(1), a2 = LOAD(2), a3 = LOAD(3), a4 = LOAD(4), a5 = LOAD(5);             \
        __m128i a6 = LOAD(6), a7 = LOAD(7), a8 = LOAD(8), a9 = LOAD(9), a10 = LOAD(10), a11 = LOAD(11);         \
        __m128i a12 = LOAD(12), a13 = LOAD(13), a14 = LOAD(14), a15 = LOAD(15);                                 \
        __m128i b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15;                           \
        QR__K_DWC_ROUND(a, b) QR__K_DWC_ROUND(b, a) QR__K_DWC_ROUND(a, b) QR__K_DWC_ROUND(b, a)                \
        STORE(0, a0) STORE(1, a1) STORE(2, a2) STORE(3, a3) STORE(4, a4) STORE(5, a5) STORE(6, a6)              \
        STORE(7, a7) STORE(8, a8) STORE(9, a9) STORE(10, a10) STORE(11, a11) STORE(12, a12)                     \
        STORE(13, a13) STORE(14, a14) STORE(15, a15)                                                            \
    }

/* The output pixels of one block (qr__k_dwc_run), T taps (a constant when inlined: the weights
 * stay in registers). */
QR__K_VNNI static inline __attribute__((always_inline)) void
qr__k_dwc_pixels(const int64_t T, const QrQ8Win *p, int64_t wp, const uint8_t *img, const int64_t *toff,
                 const int32_t (*wt)[QR_KERN_DWC_CB], __m512i vb, __m512 vm, __m512 vlo, __m512 vhi, __m512i vzp,
                 uint8_t *out) {
    enum { CB = QR_KERN_DWC_CB };
    __m512i wv[QR__K_DWC_MAXT];
    for (int64_t t = 0; t < T; t++) wv[t] = _mm512_loadu_si512(wt[t]);
#define QR__K_DWC_TAP(src, t) _mm512_madd_epi16(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)((src) + toff[t]))), wv[t])
    for (int64_t oh = 0; oh < p->OH; oh++) {
        const uint8_t *row = img + oh * p->sh * wp * CB;
        for (int64_t ow = 0; ow < p->OW; ow++) {
            const uint8_t *src = row + ow * p->sw * CB;
            __m512i a0 = vb, a1 = _mm512_setzero_si512();
            int64_t t = 0;
            for (; t + 2 <= T; t += 2) {
                a0 = _mm512_add_epi32(a0, QR__K_DWC_TAP(src, t));
                a1 = _mm512_add_epi32(a1, QR__K_DWC_TAP(src, t + 1));
            }
            if (t < T) a0 = _mm512_add_epi32(a0, QR__K_DWC_TAP(src, t));
            __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a0, a1)), vm);
            f = _mm512_min_ps(_mm512_max_ps(f, vlo), vhi);
            const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), vzp);
            _mm_storeu_si128((__m128i *)out, _mm512_cvtepi32_epi8(q));
            out += CB;
        }
    }
#undef QR__K_DWC_TAP
}

/* The channels-last path of qr_q8_dwconv2d_rq__vnni for small planes (qr_kern_dwc_small): blocks of
 * up to 16 planes, one int32 lane per plane. Each block's planes are transposed (16 x 16 byte
 * tiles) into a padded [hp][wp][16] image of bytes (x ^ 0x80 for int8; the border holds the
 * zero point xz'), then for every output pixel each tap adds vpmaddwd(zero-extended taps, w)
 * (the high int16 halves of the taps are 0: one product per lane) to the bias less xz' * sum w
 * (mod 2^32, as the plane path); requantized as qr_s32_requant__avx512 into [pixel][16] bytes,
 * transposed back into the block's NCHW planes. */
QR__K_VNNI static void qr__k_dwc_run(const QrQ8Win *p, int64_t hp, int64_t wp, int64_t planes, int64_t ldx,
                                     const int8_t *w, const QrQ8PlaneRq *rq, uint8_t *y, int64_t ldy, void *scratch) {
    enum { CB = QR_KERN_DWC_CB };
    const int64_t T = p->KH * p->KW, P = p->OH * p->OW, HW = p->H * p->W;
    const int32_t xz = p->xz + (p->x_signed ? 128 : 0);
    uint8_t *img = scratch;                                             /* [hp][wp][CB] */
    uint8_t *out = img + (hp * wp * CB + 63) / 64 * 64;                 /* [P rounded to 16][CB] */
    const __m128i flip = _mm_set1_epi8(p->x_signed ? (char)0x80 : 0);
    int64_t toff[QR__K_DWC_MAXT];
    for (int64_t kh = 0, t = 0; kh < p->KH; kh++)
        for (int64_t kw = 0; kw < p->KW; kw++, t++) toff[t] = (kh * p->dh * wp + kw * p->dw) * CB;
    /* where each input pixel goes in the padded image (the same for every block) */
    int64_t *dst = (int64_t *)(out + (P + 15) / 16 * 16 * CB);
    for (int64_t ih = 0, i = 0; ih < p->H; ih++)
        for (int64_t iw = 0; iw < p->W; iw++, i++)
            dst[i] = ih + p->ph < hp ? ((ih + p->ph) * wp + iw + p->pw) * CB : -1;
    for (int64_t k0 = 0; k0 < planes; k0 += CB) {
        const int cb = (int)QR_MIN(CB, planes - k0);
        /* weights [t][lane] (int16 in the low half), the lanes' requantization */
        int32_t wt[QR__K_DWC_MAXT][CB], bias[CB], zp[CB];
        float mult[CB], flo[CB], fhi[CB];
        for (int c = 0; c < CB; c++) {
            const int64_t k = k0 + QR_MIN(c, cb - 1);   /* lanes past the block repeat its last plane */
            uint32_t sw = 0;
            for (int64_t t = 0; t < T; t++) {
                const int8_t v = w[k * T + t];
                wt[t][c] = (int32_t)(uint16_t)(int16_t)v;
                sw += (uint32_t)(int32_t)v;
            }
            const QrQ8PlaneRq *r = &rq[k];
            bias[c] = (int32_t)((uint32_t)r->bias - (uint32_t)xz * sw);
            mult[c] = r->mult;
            flo[c] = (float)(r->lo - r->zp);
            fhi[c] = (float)(r->hi - r->zp);
            zp[c] = r->zp;
        }
        /* the padded image: the border first, then 16 pixels x 16 planes at a time */
        const __m512i vpad = _mm512_set1_epi8((char)xz);
        for (int64_t i = 0; i < hp * wp * CB; i += 64) _mm512_storeu_si512(img + i, vpad);
        const uint8_t *xs[CB];
        for (int c = 0; c < CB; c++) xs[c] = (const uint8_t *)p->x + (k0 + QR_MIN(c, cb - 1)) * ldx;
        for (int64_t p0 = 0; p0 < HW; p0 += 16) {
            const int64_t n = QR_MIN(16, HW - p0);
            const __mmask16 m = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
            const int64_t *d = dst + p0;
#define QR__K_DWC_LD(c) _mm_xor_si128(_mm_maskz_loadu_epi8(m, xs[c] + p0), flip)
#define QR__K_DWC_ST(i, v) if ((i) < n && d[i] >= 0) _mm_storeu_si128((__m128i *)(img + d[i]), v);
            QR__K_DWC_T16(QR__K_DWC_LD, QR__K_DWC_ST)   /* row i: pixel p0 + i, 16 planes */
#undef QR__K_DWC_LD
#undef QR__K_DWC_ST
        }
        const __m512i vb = _mm512_loadu_si512(bias), vzp = _mm512_loadu_si512(zp);
        const __m512 vm = _mm512_loadu_ps(mult), vlo = _mm512_loadu_ps(flo), vhi = _mm512_loadu_ps(fhi);
        if (T == 9) qr__k_dwc_pixels(9, p, wp, img, toff, (const int32_t (*)[CB])wt, vb, vm, vlo, vhi, vzp, out);
        else qr__k_dwc_pixels(T, p, wp, img, toff, (const int32_t (*)[CB])wt, vb, vm, vlo, vhi, vzp, out);
        /* back to the planes: 16 pixels x 16 planes at a time */
        for (int64_t p0 = 0; p0 < P; p0 += 16) {
            const int64_t n = QR_MIN(16, P - p0);
            const __mmask16 m = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
            uint8_t *yb = y + k0 * ldy + p0;
#define QR__K_DWC_LD(i) _mm_loadu_si128((const __m128i *)(out + (p0 + (i)) * CB))
#define QR__K_DWC_ST(c, v) if ((c) < cb) _mm_mask_storeu_epi8(yb + (c) * ldy, m, v);
            QR__K_DWC_T16(QR__K_DWC_LD, QR__K_DWC_ST)   /* row c: plane k0 + c, pixels p0 .. p0 + 15 */
#undef QR__K_DWC_LD
#undef QR__K_DWC_ST
        }
    }
}
#undef QR__K_DWC_T16
#undef QR__K_DWC_ROUND

/* QrQ8DwConv2dRqFn with AVX-512 VNNI for dilation 1 along rows, column stride 1 or 2 and KW <= 8,
 * plane by plane: the plane padded with its zero point (qr__k_dwrq_pad), then 16 outputs of a
 * row per step (two rows of up to 8 when OW <= 8); for each kernel row and each group of 4 taps
 * one 64-byte load of the padded row, a vpermd that gives 128-bit lane L the 8 (stride 1) or 12
 * (stride 2) bytes its 4 outputs read, a vpshufb that lays out each output's 4 tap bytes in its
 * int32 lane, and one vpdpbusd (u8 x s8) against the 4 weights. The zero point's share,
 * xz * sum w (the padding holds xz), joins the bias; the requantization is
 * qr_s32_requant__avx512's (its result fits the output type: the low byte is stored). */
QR__K_VNNI static bool qr_q8_dwconv2d_rq__vnni(const QrQ8Win *p, int64_t planes, int64_t ldx, const int8_t *w,
                                               const QrQ8PlaneRq *rq, void *y, int64_t ldy, void *scratch) {
    const int64_t s = p->sw, KW = p->KW, KH = p->KH, OW = p->OW, T = KH * KW;
    if (p->dw != 1 || s > 2 || KW > 8 || T > QR__K_DW_RQ_MAXT) return false;
    const int64_t hp = (p->OH - 1) * p->sh + (KH - 1) * p->dh + 1;
    const int64_t wp = QR_MAX((OW - 1) * s + KW, p->pw + p->W);
    const int32_t xz = p->xz + (p->x_signed ? 128 : 0);
    const int G = KW > 4 ? 2 : 1;
    const __m512i idx = s == 1 ? _mm512_setr_epi32(0, 1, 0, 0, 1, 2, 0, 0, 2, 3, 0, 0, 3, 4, 0, 0)
                               : _mm512_setr_epi32(0, 1, 2, 0, 2, 3, 4, 0, 4, 5, 6, 0, 6, 7, 8, 0);
    const __m512i idx2 = s == 1 ? _mm512_setr_epi32(0, 1, 0, 0, 1, 2, 0, 0, 16, 17, 0, 0, 17, 18, 0, 0)
                                : _mm512_setr_epi32(0, 1, 2, 0, 2, 3, 4, 0, 16, 17, 18, 0, 18, 19, 20, 0);
    const __m512i shuf = s == 1 ? _mm512_set4_epi32(0x06050403, 0x05040302, 0x04030201, 0x03020100)
                                : _mm512_set4_epi32(0x09080706, 0x07060504, 0x05040302, 0x03020100);
    int64_t hs, ws;
    if (qr_kern_dwc_small(p, &hs, &ws)) {
        if (planes > 0) qr__k_dwc_run(p, hs, ws, planes, ldx, w, rq, y, ldy, scratch);
        return true;
    }
    const int64_t rs = p->dh * wp;
    uint8_t *pad = scratch;
    QrQ8Win pl = *p;
    for (int64_t k = 0; k < planes; k++) {
        pl.x = (const uint8_t *)p->x + k * ldx;
        qr__k_dwrq_pad(&pl, hp, wp, (uint8_t)xz, pad);
        const int8_t *wk = w + k * T;
        __m512i wv[QR__K_DW_RQ_MAXT / 4 * 2];
        uint32_t sw = 0;
        for (int64_t kh = 0; kh < KH; kh++)
            for (int g = 0; g < G; g++) {
                uint32_t q = 0;
                for (int j = 0; j < 4; j++) {
                    const int64_t kw = 4 * g + j;
                    const int8_t v = kw < KW ? wk[kh * KW + kw] : 0;
                    q |= (uint32_t)(uint8_t)v << (8 * j);
                    sw += (uint32_t)(int32_t)v;
                }
                wv[kh * G + g] = _mm512_set1_epi32((int32_t)q);
            }
        const QrQ8PlaneRq *r = &rq[k];
        const __m512i bias = _mm512_set1_epi32((int32_t)((uint32_t)r->bias - (uint32_t)xz * sw));
        const __m512 mult = _mm512_set1_ps(r->mult);
        const __m512 flo = _mm512_set1_ps((float)(r->lo - r->zp)), fhi = _mm512_set1_ps((float)(r->hi - r->zp));
        const __m512i vzp = _mm512_set1_epi32(r->zp);
        uint8_t *yb = (uint8_t *)y + k * ldy;
        if (OW <= 8) {   /* two rows per step */
            for (int64_t oh = 0; oh < p->OH; oh += 2) {
                const uint8_t *ra = pad + oh * p->sh * wp;
                const bool two = oh + 1 < p->OH;
                const uint8_t *rb = two ? ra + p->sh * wp : ra;
                uint8_t *y2 = two ? yb + (oh + 1) * OW : NULL;
                if (KH == 3 && G == 1)
                    qr__k_dwrq_row2(3, 1, ra, rb, rs, OW, wv, idx2, shuf, bias, mult, flo, fhi, vzp, yb + oh * OW, y2);
                else
                    qr__k_dwrq_row2(KH, G, ra, rb, rs, OW, wv, idx2, shuf, bias, mult, flo, fhi, vzp, yb + oh * OW, y2);
            }
            continue;
        }
        for (int64_t oh = 0; oh < p->OH; oh++) {
            const uint8_t *r0 = pad + oh * p->sh * wp;
            if (KH == 3 && G == 1)   /* the common 3x3: kernel rows unrolled */
                qr__k_dwrq_row(3, 1, r0, rs, s, OW, wv, idx, shuf, bias, mult, flo, fhi, vzp, yb + oh * OW);
            else
                qr__k_dwrq_row(KH, G, r0, rs, s, OW, wv, idx, shuf, bias, mult, flo, fhi, vzp, yb + oh * OW);
        }
    }
    return true;
}

#endif
