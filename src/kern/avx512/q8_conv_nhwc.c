/* kern/avx512/q8_conv_nhwc — the channels-last 8-bit convolution (QrQ8ConvNhwcRqFn) with
 * AVX-512 VNNI: an indirect GEMM whose broadcast operand is the image itself. A tile is 8
 * output pixels x 32 output channels (16 zmm accumulators); per 4 input channels one vpdpbusd
 * multiplies the 4 bytes of each pixel's tap (u8, read through the tile's row pointers: taps
 * outside the image point at a row of zero points) by the weights of 32 channels (s8, 2 x 64
 * bytes, packed once). The requantization runs on the accumulators in registers, the packs and
 * shuffles transpose the tile, and it is stored into the NCHW output 8 bytes per channel. Bit-exact with
 * qr_q8_conv_nhwc_rq__ref (sums mod 2^32, the same float steps as qr_s32_requant__avx512).
 *
 * A 1x1 window with stride 1 and no padding over 256 pixels or more runs another way, from the
 * NCHW image and vectorized over pixels (qr__k_cx1_run below): no channels-last copy and no
 * transposed stores (MobileNetV2 int at 1 thread 3.76 -> 3.34 ms, 2 threads 2.44 -> 2.16 ms).
 *
 * Packed weights (after the header and the column sums of kern/ref/q8_conv_nhwc.c): panels
 * of 32 output channels; panel j holds for every tap t (kh*KW + kw) and every 4 channels q of
 * Cp the 32 x 4 bytes w'[32j + i][4q .. 4q + 3][t], i = 0..31 (zero past M and past C). */
#if defined(__x86_64__)

#define QR__K_CX_MR 8         /* pixels per tile */
#define QR__K_CX_NR 32        /* output channels per panel */
#define QR__K_CX_CHUNK 32     /* tiles whose pointers are worked out at once */

/* QrQ8ConvNhwcPackFn for the VNNI kernel: per output channel its weights w - wz transposed to
 * [tap][channel] in a small buffer (sums and the int8 check on the way), then copied 4 channels
 * at a time into the channel's slot of its panel. */
static size_t qr_q8_conv_nhwc_pack__vnni(int64_t M, int64_t C, int64_t KH, int64_t KW, const void *w, bool w_signed,
                                         const int32_t *wz, int64_t wzs, void *dst) {
    if (M < 1 || C < 1 || KH < 1 || KW < 1) return 0;
    const int64_t T = KH * KW, Cp = qr__k_cx_cp(C), Q = Cp / 4, np = (M + QR__K_CX_NR - 1) / QR__K_CX_NR;
    const int64_t panel = T * Cp * QR__K_CX_NR;
    const size_t total = QR__K_CX_HDR + (size_t)qr__k_cx_sums_bytes(M) + (size_t)(np * panel);
    if (!dst) return total;
    int8_t *tmp = malloc((size_t)(T * Cp));
    if (!tmp) return 0;
    unsigned char *d = dst;
    int32_t *S = (int32_t *)(d + QR__K_CX_HDR);
    int8_t *p = (int8_t *)(d + QR__K_CX_HDR + qr__k_cx_sums_bytes(M));
    qr__k_cx_header(d, QR__K_CX_VNNI, M, C, KH, KW);
    memset(S, 0, (size_t)qr__k_cx_sums_bytes(M));
    memset(p, 0, (size_t)(np * panel));
    memset(tmp, 0, (size_t)(T * Cp));   /* channels past C stay 0 */
    bool ok = true;
    for (int64_t m = 0; m < M && ok; m++) {
        const int32_t z = wz ? wz[m * wzs] : 0;
        const int8_t *ws = (const int8_t *)w + m * C * T;
        const uint8_t *wu = (const uint8_t *)w + m * C * T;
        int32_t sum = 0, lo = 0, hi = 0;
        for (int64_t c = 0; c < C; c++)
            for (int64_t t = 0; t < T; t++) {
                const int32_t v = (w_signed ? (int32_t)ws[c * T + t] : (int32_t)wu[c * T + t]) - z;
                lo = QR_MIN(lo, v);
                hi = QR_MAX(hi, v);
                tmp[t * Cp + c] = (int8_t)v;
                sum += v;   /* |sum| <= 255 * C * T: no overflow for any kernel that fits memory */
            }
        ok = lo >= -128 && hi <= 127;
        if (!ok) break;
        S[m] = sum;
        int8_t *pj = p + (m / QR__K_CX_NR) * panel + (m % QR__K_CX_NR) * 4;
        for (int64_t t = 0; t < T; t++)
            for (int64_t q = 0; q < Q; q++) memcpy(pj + (t * Q + q) * QR__K_CX_NR * 4, tmp + t * Cp + 4 * q, 4);
    }
    free(tmp);
    return ok ? total : 0;
}

QR__K_AVX512BW static void qr_q8_to_nhwc__avx512(const void *x, bool x_signed, int64_t C, int64_t HW, int64_t ldx,
                                                 int64_t Cp, uint8_t pad, uint8_t *dst);

/* Pixels [p0, p0 + n) of x->src written channels-last into x->fill (QrQ8ConvNhwc.src). */
QR__K_AVX512BW static inline void qr__k_cx_fill(const QrQ8ConvNhwc *x, int64_t p0, int64_t n) {
    qr_q8_to_nhwc__avx512(x->src + p0, x->src_signed, x->C, n, x->H * x->W, x->Cp, (uint8_t)x->zp, x->fill + p0 * x->Cp);
}

typedef struct QrKCxJob {
    const QrQ8ConvNhwc *x;
    const QrQ8Requant *rq;
    const unsigned char *w;     /* the panels */
    int64_t M, T, Q, P, np, n_pt, panel;
    const int32_t *bias;        /* per m: bias[m] - zp * S[m] (mod 2^32) */
    const uint8_t *zrow;        /* Cp bytes of zp: the taps outside the image */
    /* a tile whose 8 pixels have every tap inside the image reads from base[r] + seg_off[s],
     * nseg runs of seg_q quads (dw = 1: one run per kernel row, KW * Cp bytes; else per tap) */
    int nseg;
    int64_t seg_q;
    const int64_t *seg_off;
    int64_t pt_per_task, np_per_task, n_ptask;
    bool fill;                  /* each chunk writes its own pixels of x from x->src first */
    bool sat;                   /* every multiplier in [0, 1): QrKCxEpi.sat */
    unsigned char *tid_mem;     /* per thread: the row pointers of a chunk of tiles */
    size_t tid_bytes;
} QrKCxJob;

/* What a chunk keeps per tile: 8 base pointers and whether every tap is inside; border tiles
 * also get their T x 8 tap pointers (ptr[t*8 + r], zrow outside the image). Pixels past P
 * repeat the last one. */
typedef struct QrKCxTile { bool inside; const uint8_t *base[QR__K_CX_MR]; const uint8_t **ptr; } QrKCxTile;

static void qr__k_cx_tile_prep(const QrKCxJob *j, int64_t tile, QrKCxTile *tt, const uint8_t **ptr) {
    const QrQ8ConvNhwc *x = j->x;
    const int64_t OW = x->OW, Cp = x->Cp, eh = (x->KH - 1) * x->dh, ew = (x->KW - 1) * x->dw;
    int64_t ohs[QR__K_CX_MR], ows[QR__K_CX_MR];
    const int64_t p0 = tile * QR__K_CX_MR;
    int64_t oh = p0 / OW, ow = p0 % OW;
    for (int r = 0; r < QR__K_CX_MR; r++) {   /* pixels past P repeat the last one */
        ohs[r] = oh;
        ows[r] = ow;
        if (p0 + r + 1 < j->P && ++ow == OW) { ow = 0; oh++; }
    }
    tt->inside = true;
    tt->ptr = NULL;
    for (int r = 0; r < QR__K_CX_MR; r++) {
        const int64_t ih = ohs[r] * x->sh - x->ph, iw = ows[r] * x->sw - x->pw;
        tt->inside = tt->inside && ih >= 0 && ih + eh < x->H && iw >= 0 && iw + ew < x->W;
        tt->base[r] = x->x + (ih * x->W + iw) * Cp;   /* an address only when inside */
    }
    if (tt->inside) return;
    tt->ptr = ptr;
    for (int r = 0; r < QR__K_CX_MR; r++) {
        const int64_t oh = ohs[r], ow = ows[r];
        const uint8_t **d = ptr + r;
        for (int64_t kh = 0; kh < x->KH; kh++) {
            const int64_t ih = oh * x->sh - x->ph + kh * x->dh;
            const bool row_in = ih >= 0 && ih < x->H;
            for (int64_t kw = 0; kw < x->KW; kw++, d += QR__K_CX_MR) {
                const int64_t iw = ow * x->sw - x->pw + kw * x->dw;
                *d = row_in && iw >= 0 && iw < x->W ? x->x + (ih * x->W + iw) * Cp : j->zrow;
            }
        }
    }
}

/* The requantization constants of one panel. The 8-bit results are packed with signed
 * saturation; for uint8 outputs zp is lowered by 128 and the bytes flipped back (xv). */
typedef struct QrKCxEpi {
    __m512i b0, b1, vzp, xv;
    __m512 m0, m1, flo, fhi;
    /* sat: every multiplier is below 1, so |v| < 2^31 and the clamp can follow the rounding:
     * vcvtps2dq, then the saturating packs with the zero point added in int16 (vpaddsw), then the
     * clamp on the bytes (lo8, hi8: lo, hi less the 128 of uint8 outputs). The same bits:
     * clamp(rint(v) + zp, lo, hi) = rint(clamp(v, lo - zp, hi - zp)) + zp for integer bounds,
     * and a saturation in between only happens to values the clamp takes to lo or hi anyway. */
    bool sat;
    __m512i vzp16, lo8, hi8;
} QrKCxEpi;

/* The requantization constants of j shared by its panels (the bias and multiplier vectors
 * b0, b1, m0, m1 are set per panel). */
QR__K_AVX512BW static inline void qr__k_cx_epi(const QrKCxJob *j, QrKCxEpi *e) {
    const QrQ8Requant *rq = j->rq;
    memset(e, 0, sizeof *e);
    e->flo = _mm512_set1_ps((float)(rq->lo - rq->zp));
    e->fhi = _mm512_set1_ps((float)(rq->hi - rq->zp));
    const int32_t off = rq->lo < 0 ? 0 : 128;   /* uint8: packed as int8 less 128, flipped back */
    e->vzp = _mm512_set1_epi32(rq->zp - off);
    e->xv = _mm512_set1_epi8((char)off);
    e->sat = j->sat;
    e->vzp16 = _mm512_set1_epi16((short)(rq->zp - off));
    e->lo8 = _mm512_set1_epi8((char)(rq->lo - off));
    e->hi8 = _mm512_set1_epi8((char)(rq->hi - off));
}

/* Four accumulator vectors (bias b, multipliers mu) requantized to bytes, still packed as
 * int8 less the 128 of uint8 outputs (the caller flips them with xv): lane-wise packs, so
 * 128-bit lane L holds lanes 4L..4L+3 of a0, then of a1, a2, a3. */
QR__K_VNNI static inline __attribute__((always_inline)) __m512i
qr__k_cx_pack4(const QrKCxEpi *e, __m512i b, __m512 mu, __m512i a0, __m512i a1, __m512i a2, __m512i a3) {
    if (e->sat) {
#define QR__K_CX_RQ(c) _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32((c), b)), mu))
        const __m512i p01 = _mm512_adds_epi16(_mm512_packs_epi32(QR__K_CX_RQ(a0), QR__K_CX_RQ(a1)), e->vzp16);
        const __m512i p23 = _mm512_adds_epi16(_mm512_packs_epi32(QR__K_CX_RQ(a2), QR__K_CX_RQ(a3)), e->vzp16);
#undef QR__K_CX_RQ
        return _mm512_min_epi8(_mm512_max_epi8(_mm512_packs_epi16(p01, p23), e->lo8), e->hi8);
    }
#define QR__K_CX_RQ(c) _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(                      \
        _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32((c), b)), mu), e->flo), e->fhi)), e->vzp)
    return _mm512_packs_epi16(_mm512_packs_epi32(QR__K_CX_RQ(a0), QR__K_CX_RQ(a1)),
                              _mm512_packs_epi32(QR__K_CX_RQ(a2), QR__K_CX_RQ(a3)));
#undef QR__K_CX_RQ
}

/* Requantized accumulators of rows 0..7 for 16 channels (bias b, multipliers mu) stored
 * transposed: channel i's 8 bytes (pixels 0..7) to d[i] (8 bytes each, i < 16). The packs leave
 * each 128-bit lane with 4 rows x 4 channels; a byte shuffle makes that 4 channels x 4 rows and
 * the dword unpacks join rows 0-3 and 4-7 into one qword per channel. */
QR__K_VNNI static inline __attribute__((always_inline)) void
qr__k_cx_rq16(const QrKCxEpi *e, __m512i b, __m512 mu, __m512i a0, __m512i a1, __m512i a2, __m512i a3, __m512i a4,
              __m512i a5, __m512i a6, __m512i a7, __m512i *lo, __m512i *hi) {
    const __m512i b03 = qr__k_cx_pack4(e, b, mu, a0, a1, a2, a3), b47 = qr__k_cx_pack4(e, b, mu, a4, a5, a6, a7);
    const __m512i sh = _mm512_set4_epi32(0x0f0b0703, 0x0e0a0602, 0x0d090501, 0x0c080400);
    const __m512i r03 = _mm512_shuffle_epi8(_mm512_xor_si512(b03, e->xv), sh);
    const __m512i r47 = _mm512_shuffle_epi8(_mm512_xor_si512(b47, e->xv), sh);
    *lo = _mm512_unpacklo_epi32(r03, r47);   /* lane L: channels 4L, 4L+1 */
    *hi = _mm512_unpackhi_epi32(r03, r47);   /* lane L: channels 4L+2, 4L+3 */
}

/* The high qword of v to p (any alignment: vpextrq). */
QR__K_VNNI static inline __attribute__((always_inline)) void qr__k_cx_storeh(uint8_t *p, __m128i v) {
    const uint64_t q = (uint64_t)_mm_extract_epi64(v, 1);
    memcpy(p, &q, 8);
}

/* The 16 qwords of lo / hi (qr__k_cx_rq16) to rows y + c*ldy, c < 16. */
QR__K_VNNI static inline __attribute__((always_inline)) void qr__k_cx_put16(__m512i lo, __m512i hi, uint8_t *y,
                                                                          int64_t ldy) {
#define QR__K_CX_PUT(L)                                                                              \
    {                                                                                                \
        const __m128i l = _mm512_extracti32x4_epi32(lo, L), h = _mm512_extracti32x4_epi32(hi, L);    \
        uint8_t *d = y + 4 * (L) * ldy;                                                              \
        _mm_storel_epi64((__m128i *)d, l);                                                           \
        qr__k_cx_storeh(d + ldy, l);                                                                 \
        _mm_storel_epi64((__m128i *)(d + 2 * ldy), h);                                               \
        qr__k_cx_storeh(d + 3 * ldy, h);                                                             \
    }
    QR__K_CX_PUT(0) QR__K_CX_PUT(1) QR__K_CX_PUT(2) QR__K_CX_PUT(3)
#undef QR__K_CX_PUT
}

/* One tile: pixels 8*tile .. (mr of them) x the panel's nr channels (NV vectors of 16). DIRECT:
 * the rows read base[r] + seg_off[s] for nseg runs of nq quads; else T taps of nq quads through
 * ptr[t*8 + r]. w: the panel. */
QR__K_VNNI static inline __attribute__((always_inline)) void
qr__k_cx_tile(const int NV, const bool DIRECT, int64_t nseg, int64_t nq, const uint8_t *const *base,
              const int64_t *seg_off, const uint8_t *const *ptr, const unsigned char *w, const QrKCxEpi *e, int mr,
              int nr, uint8_t *y, int64_t ldy) {
    __m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    __m512i c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
    for (int64_t s = 0; s < nseg; s++) {
        const uint8_t *p0, *p1, *p2, *p3, *p4, *p5, *p6, *p7;
        if (DIRECT) {
            const int64_t o = seg_off[s];
            p0 = base[0] + o; p1 = base[1] + o; p2 = base[2] + o; p3 = base[3] + o;
            p4 = base[4] + o; p5 = base[5] + o; p6 = base[6] + o; p7 = base[7] + o;
        } else {
            p0 = ptr[0]; p1 = ptr[1]; p2 = ptr[2]; p3 = ptr[3]; p4 = ptr[4]; p5 = ptr[5]; p6 = ptr[6]; p7 = ptr[7];
            ptr += QR__K_CX_MR;
        }
#define QR__K_CX_ROW(r)                                                              \
        {                                                                            \
            int32_t v;                                                               \
            memcpy(&v, p##r + 4 * q, 4);                                             \
            const __m512i a = _mm512_set1_epi32(v);                                  \
            c##r##0 = _mm512_dpbusd_epi32(c##r##0, a, b0);                           \
            if (NV == 2) c##r##1 = _mm512_dpbusd_epi32(c##r##1, a, b1);              \
        }
        for (int64_t q = 0; q < nq; q++, w += 4 * QR__K_CX_NR) {
            const __m512i b0 = _mm512_loadu_si512(w);
            const __m512i b1 = NV == 2 ? _mm512_loadu_si512(w + 64) : b0;
            QR__K_CX_ROW(0) QR__K_CX_ROW(1) QR__K_CX_ROW(2) QR__K_CX_ROW(3)
            QR__K_CX_ROW(4) QR__K_CX_ROW(5) QR__K_CX_ROW(6) QR__K_CX_ROW(7)
        }
#undef QR__K_CX_ROW
    }
    /* requantize: v = (float)(acc + bias') * mult, clamped, rounded half to even, + zp */
    __m512i lo0, hi0, lo1 = _mm512_setzero_si512(), hi1 = lo1;
    qr__k_cx_rq16(e, e->b0, e->m0, c00, c10, c20, c30, c40, c50, c60, c70, &lo0, &hi0);
    if (NV == 2) qr__k_cx_rq16(e, e->b1, e->m1, c01, c11, c21, c31, c41, c51, c61, c71, &lo1, &hi1);
    int i0 = 0;   /* channels before i0 are stored */
    if (mr == QR__K_CX_MR && nr >= 16) {
        qr__k_cx_put16(lo0, hi0, y, ldy);
        i0 = 16;
        if (NV == 2 && nr == 32) {
            qr__k_cx_put16(lo1, hi1, y + 16 * ldy, ldy);
            return;
        }
    }
    if (i0 >= nr) return;
    uint8_t tb[32][8];   /* channel i: pixels 0..7 */
    qr__k_cx_put16(lo0, hi0, tb[0], 8);
    if (NV == 2) qr__k_cx_put16(lo1, hi1, tb[16], 8);
    for (int i = i0; i < nr; i++) memcpy(y + i * ldy, tb[i], (size_t)mr);
}

#define QR__K_CX_TILE_FN(name, NV, DIRECT)                                                                        \
    QR__K_VNNI static void name(int64_t nseg, int64_t nq, const uint8_t *const *base, const int64_t *seg_off,     \
                                const uint8_t *const *ptr, const unsigned char *w, const QrKCxEpi *e, int mr, int nr, \
                                uint8_t *y, int64_t ldy) {                                                        \
        qr__k_cx_tile(NV, DIRECT, nseg, nq, base, seg_off, ptr, w, e, mr, nr, y, ldy);                           \
    }
QR__K_CX_TILE_FN(qr__k_cx_tile_d1, 1, true)
QR__K_CX_TILE_FN(qr__k_cx_tile_d2, 2, true)
QR__K_CX_TILE_FN(qr__k_cx_tile_i1, 1, false)
QR__K_CX_TILE_FN(qr__k_cx_tile_i2, 2, false)
#undef QR__K_CX_TILE_FN

/* Task t: pixel tiles [pi*pt_per_task, ...) x panels [ci*np_per_task, ...), chunk by chunk of
 * tiles (their pointers worked out once), every panel of the task over the chunk. */
QR__K_VNNI static void qr__k_cx_task(void *ctx, int64_t t, int tid) {
    const QrKCxJob *j = ctx;
    const QrQ8Requant *rq = j->rq;
    const int64_t pi = t % j->n_ptask, ci = t / j->n_ptask;
    const int64_t tl0 = pi * j->pt_per_task, tl1 = QR_MIN(j->n_pt, tl0 + j->pt_per_task);
    const int64_t pj0 = ci * j->np_per_task, pj1 = QR_MIN(j->np, pj0 + j->np_per_task);
    QrKCxTile *tiles = (QrKCxTile *)(j->tid_mem + (size_t)tid * j->tid_bytes);
    uint8_t *lb = (uint8_t *)(tiles + QR__K_CX_CHUNK);   /* 32 x 64 bytes: a group of 8 tiles */
    const uint8_t **ptrs = (const uint8_t **)(lb + QR__K_CX_NR * 64);
    QrKCxEpi e;
    qr__k_cx_epi(j, &e);
    for (int64_t c0 = tl0; c0 < tl1; c0 += QR__K_CX_CHUNK) {
        const int64_t c1 = QR_MIN(tl1, c0 + QR__K_CX_CHUNK);
        if (j->fill)   /* a 1x1 window: the chunk's pixels are exactly the ones it reads */
            qr__k_cx_fill(j->x, c0 * QR__K_CX_MR, QR_MIN(c1 * QR__K_CX_MR, j->P) - c0 * QR__K_CX_MR);
        for (int64_t tile = c0; tile < c1; tile++)
            qr__k_cx_tile_prep(j, tile, &tiles[tile - c0], ptrs + (tile - c0) * j->T * QR__K_CX_MR);
        for (int64_t pj = pj0; pj < pj1; pj++) {
            const int64_t m0 = pj * QR__K_CX_NR;
            const int nr = (int)QR_MIN(QR__K_CX_NR, j->M - m0);
            const __mmask16 k0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1);
            const __mmask16 k1 = nr >= 32 ? (__mmask16)0xffff : nr <= 16 ? 0 : (__mmask16)((1u << (nr - 16)) - 1);
            e.b0 = _mm512_maskz_loadu_epi32(k0, j->bias + m0);
            e.b1 = _mm512_maskz_loadu_epi32(k1, j->bias + m0 + 16);
            if (rq->mult_rs) {
                e.m0 = _mm512_maskz_loadu_ps(k0, rq->mult + m0);
                e.m1 = _mm512_maskz_loadu_ps(k1, rq->mult + m0 + 16);
            } else {
                e.m0 = e.m1 = _mm512_set1_ps(rq->mult[0]);
            }
            const unsigned char *w = j->w + pj * j->panel;
            for (int64_t tile = c0; tile < c1; tile++) {
                const QrKCxTile *tt = &tiles[tile - c0];
                const int mr = (int)QR_MIN(QR__K_CX_MR, j->P - tile * QR__K_CX_MR);
                uint8_t *yt = (uint8_t *)rq->y + m0 * rq->ldy + tile * QR__K_CX_MR;
                /* a whole group of 8 tiles (64 pixels) goes through lb: whole lines to y, not eight
                 * 8-byte pieces of each (the tasks start at multiples of 8 tiles) */
                const bool grouped = ((tile >> 3) + 1) * 64 <= j->P;
                uint8_t *y = grouped ? lb + (tile & 7) * QR__K_CX_MR : yt;
                const int64_t ldy = grouped ? 64 : rq->ldy;
                if (tt->inside) {
                    if (nr > 16) qr__k_cx_tile_d2(j->nseg, j->seg_q, tt->base, j->seg_off, NULL, w, &e, mr, nr, y, ldy);
                    else qr__k_cx_tile_d1(j->nseg, j->seg_q, tt->base, j->seg_off, NULL, w, &e, mr, nr, y, ldy);
                } else {
                    if (nr > 16) qr__k_cx_tile_i2(j->T, j->Q, NULL, NULL, tt->ptr, w, &e, mr, nr, y, ldy);
                    else qr__k_cx_tile_i1(j->T, j->Q, NULL, NULL, tt->ptr, w, &e, mr, nr, y, ldy);
                }
                if (grouped && (tile & 7) == 7) {
                    uint8_t *yg = yt - 7 * QR__K_CX_MR;
                    for (int i = 0; i < nr; i++) _mm512_storeu_si512(yg + i * rq->ldy, _mm512_loadu_si512(lb + i * 64));
                }
            }
        }
    }
}

/* ---- 1x1 windows from the NCHW image: no channels-last copy, no transposed stores ----
 * A 1x1 convolution with stride 1 and no padding is a GEMM whose B is the NCHW image itself
 * (C rows of P pixels): y[m][p] = rq(sum_c w'[m][c] * x[c][p]). Vectorized over pixels
 * instead of channels, its outputs land in y's rows as they are: a tile is 6 output channels
 * x 64 pixels (24 zmm accumulators); per 4 input channels one vpdpbusd multiplies each pixel's
 * 4 bytes (the block's quads: 4 image rows interleaved once per 64 pixels into the thread's
 * buffer, ^0x80 for int8 images) by the channel's 4 weights (broadcast straight from the
 * panels of qr_q8_conv_nhwc_pack__vnni: [q][32 channels][4]). The interleave leaves lane L of
 * quad vector i with pixels 16L + 4i .. 16L + 4i + 3, which the requantization's
 * lane-wise packs (32 -> 16 -> 8 bits) put back in pixel order: 64 bytes per channel, stored
 * whole. Same sums mod 2^32 and requantization as the tile kernel above (qr__k_cx_rq16). */
#define QR__K_CX1_MR 6    /* output channels per tile */
#define QR__K_CX1_NP 64   /* pixels per block */
#define QR__K_CX1_MIN_P 256   /* the fewest pixels it runs on (MobileNetV2 int: 49, 128, 1024 measured slower or no better) */

typedef struct QrKCx1Job {
    const QrKCxJob *j;            /* its tid_mem: per thread the block's quads, Q x 256 bytes */
    int64_t blocks_per_task, n_blocks;
} QrKCx1Job;

/* The block's quads: pixels [p0, p0 + n) of channels 4q .. 4q + 3 interleaved into
 * d[q][64][4] (lanes as above); channels past C 0 (their weights are 0), pixels past n
 * anything (their outputs are not stored). */
QR__K_AVX512BW static inline void qr__k_cx1_quads(const QrQ8ConvNhwc *x, int64_t Q, int64_t p0, int64_t n, uint8_t *d) {
    const int64_t HW = x->H * x->W;
    const __mmask64 mk = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
    const __m512i flip = _mm512_set1_epi8(x->src_signed ? (char)0x80 : 0);
    const uint8_t *src = x->src + p0;
    for (int64_t q = 0; q < Q; q++, d += 256) {
        __m512i r[4];
        for (int i = 0; i < 4; i++) {
            const int64_t c = 4 * q + i;
            r[i] = c < x->C ? _mm512_xor_si512(_mm512_maskz_loadu_epi8(mk, src + c * HW), flip) : _mm512_setzero_si512();
        }
        const __m512i t0 = _mm512_unpacklo_epi8(r[0], r[1]), t1 = _mm512_unpackhi_epi8(r[0], r[1]);
        const __m512i t2 = _mm512_unpacklo_epi8(r[2], r[3]), t3 = _mm512_unpackhi_epi8(r[2], r[3]);
        _mm512_store_si512(d, _mm512_unpacklo_epi16(t0, t2));
        _mm512_store_si512(d + 64, _mm512_unpackhi_epi16(t0, t2));
        _mm512_store_si512(d + 128, _mm512_unpacklo_epi16(t1, t3));
        _mm512_store_si512(d + 192, _mm512_unpackhi_epi16(t1, t3));
    }
}

/* Output channels m0 .. m0 + mr - 1 (mr <= 6; the rest of the tile repeats channel m0 and is
 * not stored) of one block of n pixels from its quads xq. */
QR__K_VNNI static inline __attribute__((always_inline)) void
qr__k_cx1_tile(const QrKCxJob *j, const QrKCxEpi *e, const uint8_t *xq, int64_t m0, int mr, int64_t p0, int64_t n) {
    const QrQ8Requant *rq = j->rq;
    const unsigned char *wr[QR__K_CX1_MR];
    for (int r = 0; r < QR__K_CX1_MR; r++) {
        const int64_t m = m0 + (r < mr ? r : 0);
        wr[r] = j->w + (m / QR__K_CX_NR) * j->panel + (m % QR__K_CX_NR) * 4;
    }
    __m512i c[QR__K_CX1_MR][4];
#pragma GCC unroll 6
    for (int r = 0; r < QR__K_CX1_MR; r++)
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) c[r][i] = _mm512_setzero_si512();
    for (int64_t q = 0; q < j->Q; q++, xq += 256) {
        const __m512i x0 = _mm512_load_si512(xq), x1 = _mm512_load_si512(xq + 64);
        const __m512i x2 = _mm512_load_si512(xq + 128), x3 = _mm512_load_si512(xq + 192);
#pragma GCC unroll 6
        for (int r = 0; r < QR__K_CX1_MR; r++) {
            int32_t v;
            memcpy(&v, wr[r] + q * 4 * QR__K_CX_NR, 4);
            const __m512i wv = _mm512_set1_epi32(v);
            c[r][0] = _mm512_dpbusd_epi32(c[r][0], x0, wv);
            c[r][1] = _mm512_dpbusd_epi32(c[r][1], x1, wv);
            c[r][2] = _mm512_dpbusd_epi32(c[r][2], x2, wv);
            c[r][3] = _mm512_dpbusd_epi32(c[r][3], x3, wv);
        }
    }
    const __mmask64 sm = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
#pragma GCC unroll 6
    for (int r = 0; r < QR__K_CX1_MR; r++) {
        if (r >= mr) break;
        const int64_t m = m0 + r;
        const __m512i b = _mm512_set1_epi32(j->bias[m]);
        const __m512 mu = _mm512_set1_ps(rq->mult[rq->mult_rs ? m : 0]);
        /* the lane-wise packs put the quads' pixel order (above) back in order */
        const __m512i v = _mm512_xor_si512(qr__k_cx_pack4(e, b, mu, c[r][0], c[r][1], c[r][2], c[r][3]), e->xv);
        _mm512_mask_storeu_epi8((uint8_t *)rq->y + m * rq->ldy + p0, sm, v);
    }
}

/* Task t: its blocks of 64 pixels, each interleaved once and run through every output channel. */
QR__K_VNNI static void qr__k_cx1_task(void *ctx, int64_t t, int tid) {
    const QrKCx1Job *k = ctx;
    const QrKCxJob *j = k->j;
    uint8_t *xq = j->tid_mem + (size_t)tid * j->tid_bytes;
    QrKCxEpi e;
    qr__k_cx_epi(j, &e);
    const int64_t b0 = t * k->blocks_per_task, b1 = QR_MIN(k->n_blocks, b0 + k->blocks_per_task);
    for (int64_t blk = b0; blk < b1; blk++) {
        const int64_t p0 = blk * QR__K_CX1_NP, n = QR_MIN((int64_t)QR__K_CX1_NP, j->P - p0);
        qr__k_cx1_quads(j->x, j->Q, p0, n, xq);
        for (int64_t m0 = 0; m0 < j->M; m0 += QR__K_CX1_MR)
            qr__k_cx1_tile(j, &e, xq, m0, (int)QR_MIN((int64_t)QR__K_CX1_MR, j->M - m0), p0, n);
    }
}

/* Runs j (bias, panels, sat, tid_mem set; a 1x1 window, stride 1, no padding, x->src) the
 * NCHW way: tasks of whole blocks, about four per thread. */
static void qr__k_cx1_run(const QrKCxJob *j, int threads) {
    QrKCx1Job k = { .j = j, .n_blocks = qr__k_cdiv(j->P, QR__K_CX1_NP) };
    const int64_t n_tasks = threads > 1 ? QR_MIN(k.n_blocks, 4 * (int64_t)threads) : 1;
    k.blocks_per_task = qr__k_cdiv(k.n_blocks, n_tasks);
    const int64_t nt = qr__k_cdiv(k.n_blocks, k.blocks_per_task);
    if (threads == 1) for (int64_t t = 0; t < nt; t++) qr__k_cx1_task(&k, t, 0);
    else qr_pool_for(nt, qr__k_cx1_task, &k);
}

/* x->src written channels-last into x->fill, pixel runs of ~16 KB over the pool. */
typedef struct QrKCxFill { const QrQ8ConvNhwc *x; int64_t per_task; } QrKCxFill;

static void qr__k_cx_fill_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrKCxFill *f = ctx;
    const int64_t p0 = t * f->per_task;
    qr__k_cx_fill(f->x, p0, QR_MIN(f->per_task, f->x->H * f->x->W - p0));
}

/* QrQ8ConvNhwcRqFn on AVX-512 VNNI. Tasks: with one thread the whole output (chunks of pixels,
 * every panel over each); otherwise about four per thread, split over pixels first (groups of 8
 * tiles), then, where there are too few of them, over output channels. With x->src, a 1x1
 * convolution split over pixels only transposes each chunk's pixels in the task, right before
 * it reads them (no pass of its own, no wait for it, the bytes still in the core's cache);
 * otherwise the image is transposed first. */
static bool qr_q8_conv_nhwc_rq__vnni(int64_t M, const void *w_packed, const QrQ8ConvNhwc *x, const QrQ8Requant *rq) {
    if (!qr__k_cx_fits(w_packed, QR__K_CX_VNNI, M, x->C, x->KH, x->KW)) return false;
    QrKCxJob j = { .x = x, .rq = rq, .M = M, .T = x->KH * x->KW, .Q = x->Cp / 4, .P = x->OH * x->OW };
    if (M <= 0 || j.P <= 0) return true;
    const unsigned char *wp = w_packed;
    const int32_t *S = (const int32_t *)(wp + QR__K_CX_HDR);
    j.w = wp + QR__K_CX_HDR + qr__k_cx_sums_bytes(M);
    j.np = (M + QR__K_CX_NR - 1) / QR__K_CX_NR;
    j.panel = j.T * x->Cp * QR__K_CX_NR;
    j.n_pt = (j.P + QR__K_CX_MR - 1) / QR__K_CX_MR;
    const double work = (double)M * (double)j.P * (double)(j.T * x->Cp);
    const int threads = work < QR_KERN_POOL_MIN_MACS ? 1 : qr_pool_threads();
    int64_t n_ctask = 1, n_ptask = 1;
    if (threads > 1) {   /* pixels first (a task's tiles serve all its panels), then channels */
        const int64_t target = 4 * (int64_t)threads;
        n_ptask = QR_MIN((j.n_pt + 7) / 8, target);
        n_ctask = QR_MIN(j.np, (target + n_ptask - 1) / n_ptask);
    }
    j.np_per_task = (j.np + n_ctask - 1) / n_ctask;
    j.pt_per_task = ((j.n_pt + n_ptask - 1) / n_ptask + 7) / 8 * 8;   /* groups of 8 tiles stay in one task */
    j.n_ptask = (j.n_pt + j.pt_per_task - 1) / j.pt_per_task;
    const int64_t n_tasks = j.n_ptask * ((j.np + j.np_per_task - 1) / j.np_per_task);
    const bool pointwise = x->src && x->KH == 1 && x->KW == 1 && x->sh == 1 && x->sw == 1 && x->ph == 0 &&
                           x->pw == 0 && x->OH == x->H && x->OW == x->W;
    j.fill = pointwise && n_ctask == 1;
    const bool nchw = pointwise && j.P >= QR__K_CX1_MIN_P;   /* qr__k_cx1_run */
    j.nseg = (int)(x->dw == 1 ? x->KH : j.T);
    j.seg_q = x->dw == 1 ? x->KW * j.Q : j.Q;
    const size_t bias_bytes = qr__k_rup64((size_t)(j.np * QR__K_CX_NR) * sizeof(int32_t));
    const size_t seg_bytes = qr__k_rup64((size_t)j.nseg * sizeof(int64_t));
    const size_t zrow_bytes = qr__k_rup64((size_t)x->Cp + 64);
    j.tid_bytes = nchw ? qr__k_rup64((size_t)j.Q * 256)
                       : qr__k_rup64(QR__K_CX_CHUNK * sizeof(QrKCxTile) + QR__K_CX_NR * 64 +
                                     (size_t)(QR__K_CX_CHUNK * j.T * QR__K_CX_MR) * sizeof(const uint8_t *));
    unsigned char *mem = qr__k_scratch(bias_bytes + seg_bytes + zrow_bytes + j.tid_bytes * (size_t)threads);
    if (!mem) return false;
    j.sat = true;
    for (int64_t m = 0; m < (rq->mult_rs ? M : 1) && j.sat; m++) j.sat = rq->mult[m] >= 0.0f && rq->mult[m] < 1.0f;
    int32_t *bias = (int32_t *)mem;
    for (int64_t m = 0; m < j.np * QR__K_CX_NR; m++) {
        const uint32_t b = m < M && rq->bias ? (uint32_t)rq->bias[m * rq->bias_rs] : 0u;
        bias[m] = m < M ? (int32_t)(b - (uint32_t)x->zp * (uint32_t)S[m]) : 0;
    }
    int64_t *seg = (int64_t *)(mem + bias_bytes);
    for (int s = 0; s < j.nseg; s++)
        seg[s] = x->dw == 1 ? s * x->dh * x->W * x->Cp : ((s / x->KW) * x->dh * x->W + (s % x->KW) * x->dw) * x->Cp;
    uint8_t *zrow = mem + bias_bytes + seg_bytes;
    memset(zrow, x->zp, zrow_bytes);
    j.bias = bias;
    j.seg_off = seg;
    j.zrow = zrow;
    j.tid_mem = mem + bias_bytes + seg_bytes + zrow_bytes;
    if (nchw) {
        qr__k_cx1_run(&j, threads);
        return true;
    }
    if (x->src && !j.fill) {
        QrKCxFill f = { x, QR_MAX(256, 16384 / x->C) };
        const int64_t nf = (x->H * x->W + f.per_task - 1) / f.per_task;
        if (threads > 1 && nf > 1) qr_pool_for(nf, qr__k_cx_fill_task, &f);
        else for (int64_t t = 0; t < nf; t++) qr__k_cx_fill_task(&f, t, 0);
    }
    if (threads == 1) for (int64_t t = 0; t < n_tasks; t++) qr__k_cx_task(&j, t, 0);
    else qr_pool_for(n_tasks, qr__k_cx_task, &j);
    return true;
}

/* QrQ8ToNhwcFn with AVX-512BW: blocks of 32 pixels x 16 channels transposed in registers (four
 * unpack stages per 128-bit lane), channel rows past C read as pad, partial blocks under masks
 * (masked-off bytes are neither read nor written); C <= 4 interleaves 4 rows of 16 pixels. */
QR__K_AVX512BW static void qr_q8_to_nhwc__avx512(const void *x, bool x_signed, int64_t C, int64_t HW, int64_t ldx,
                                                 int64_t Cp, uint8_t pad, uint8_t *dst) {
    const uint8_t *xb = x;
    const __m256i flip = _mm256_set1_epi8(x_signed ? (char)0x80 : 0), vpad = _mm256_set1_epi8((char)pad);
    if (Cp == 4) {
        for (int64_t p0 = 0; p0 < HW; p0 += 32) {
            const int64_t n = QR_MIN(32, HW - p0);
            const __mmask32 lm = n >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << n) - 1);
            __m256i r[4];
            for (int i = 0; i < 4; i++)
                r[i] = i < C ? _mm256_xor_si256(_mm256_maskz_loadu_epi8(lm, xb + i * ldx + p0), flip) : vpad;
            const __m256i a0 = _mm256_unpacklo_epi8(r[0], r[1]), a1 = _mm256_unpackhi_epi8(r[0], r[1]);
            const __m256i a2 = _mm256_unpacklo_epi8(r[2], r[3]), a3 = _mm256_unpackhi_epi8(r[2], r[3]);
            /* per lane: pixels 0-3, 4-7 (from a0, a2), 8-11, 12-15 (a1, a3) */
            const __m256i q0 = _mm256_unpacklo_epi16(a0, a2), q1 = _mm256_unpackhi_epi16(a0, a2);
            const __m256i q2 = _mm256_unpacklo_epi16(a1, a3), q3 = _mm256_unpackhi_epi16(a1, a3);
            __m256i o[4] = { _mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q2, q3, 0x20),
                             _mm256_permute2x128_si256(q0, q1, 0x31), _mm256_permute2x128_si256(q2, q3, 0x31) };
            for (int i = 0; i < 4; i++) {   /* o[i]: pixels 8i .. 8i+7 */
                const int64_t k = n - 8 * i;
                if (k <= 0) break;
                const __mmask8 sm = k >= 8 ? (__mmask8)0xff : (__mmask8)((1u << k) - 1);
                _mm256_mask_storeu_epi32(dst + (p0 + 8 * i) * 4, sm, o[i]);
            }
        }
        return;
    }
    for (int64_t p0 = 0; p0 < HW; p0 += 32) {
        const int64_t n = QR_MIN(32, HW - p0);
        const __mmask32 lm = n >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << n) - 1);
        for (int64_t c0 = 0; c0 < Cp; c0 += 16) {
            __m256i r[16], a[16], b[16], c[16];
            for (int i = 0; i < 16; i++)
                r[i] = c0 + i < C ? _mm256_xor_si256(_mm256_maskz_loadu_epi8(lm, xb + (c0 + i) * ldx + p0), flip) : vpad;
            for (int i = 0; i < 8; i++) {   /* channel pair (2i, 2i+1): pixels 0-7, 8-15 */
                a[2 * i] = _mm256_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
                a[2 * i + 1] = _mm256_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
            }
            for (int k = 0; k < 4; k++) {   /* channels 4k..4k+3: pixels 0-3, 4-7, 8-11, 12-15 */
                b[4 * k + 0] = _mm256_unpacklo_epi16(a[4 * k], a[4 * k + 2]);
                b[4 * k + 1] = _mm256_unpackhi_epi16(a[4 * k], a[4 * k + 2]);
                b[4 * k + 2] = _mm256_unpacklo_epi16(a[4 * k + 1], a[4 * k + 3]);
                b[4 * k + 3] = _mm256_unpackhi_epi16(a[4 * k + 1], a[4 * k + 3]);
            }
            for (int o = 0; o < 2; o++)     /* channels 8o..8o+7: pixel pairs (0,1), (2,3), ... */
                for (int g = 0; g < 4; g++) {
                    c[8 * o + 2 * g] = _mm256_unpacklo_epi32(b[8 * o + g], b[8 * o + 4 + g]);
                    c[8 * o + 2 * g + 1] = _mm256_unpackhi_epi32(b[8 * o + g], b[8 * o + 4 + g]);
                }
            const int64_t nc = QR_MIN(16, Cp - c0);
            const __mmask16 sm = nc >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nc) - 1);
            for (int h = 0; h < 8; h++) {   /* pixels 2h, 2h+1 (and 16 more in the high lane) */
                const __m256i d0 = _mm256_unpacklo_epi64(c[h], c[8 + h]), d1 = _mm256_unpackhi_epi64(c[h], c[8 + h]);
                uint8_t *q = dst + (p0 + 2 * h) * Cp + c0;
                if (2 * h < n) _mm_mask_storeu_epi8(q, sm, _mm256_castsi256_si128(d0));
                if (2 * h + 1 < n) _mm_mask_storeu_epi8(q + Cp, sm, _mm256_castsi256_si128(d1));
                if (2 * h + 16 < n) _mm_mask_storeu_epi8(q + 16 * Cp, sm, _mm256_extracti128_si256(d0, 1));
                if (2 * h + 17 < n) _mm_mask_storeu_epi8(q + 17 * Cp, sm, _mm256_extracti128_si256(d1, 1));
            }
        }
    }
}

#endif
