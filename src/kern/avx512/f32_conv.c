/* kern/avx512/f32_conv — AVX-512F depthwise 2-D convolution of one plane (NCHW): 16 output
 * columns per zmm, R output rows x Q chunks of 16 columns (R*Q = 4) accumulated together so
 * four FMA chains are in flight. 3x3 kernels read the plane directly (masked loads, kernel
 * columns by in-register shifts); others read a zero-padded copy, or use masked loads. */
#if defined(__x86_64__)

/* Per-plane tables: for chunk q (output columns 16q .. 16q+15) the output lanes, and for
 * each kernel column kw the input lanes inside [0, W) (stride 1: 16 inputs; stride 2: 32,
 * the even ones used). Input rows outside [0, H) read a row of zeros. */
typedef struct QrKDwPlane {
    const float *x, *w;
    const float *zero;
    float *y;
    int64_t H, W, KH, KW, sh, sw, dh, dw, ph, pw, OH, OW, nq;
    const __mmask16 *ym;     /* [nq] */
    const uint32_t *in;      /* [nq][KW] */
    bool init;               /* start from bias (y is only written) instead of y */
    float bias;
} QrKDwPlane;

static const uint32_t qr__k_dw_none[16];   /* the input masks of a dead tile: read nothing */

/* Chunks q .. q+Q-1 (those < nq) of every output row, R rows at a time: y += taps. R, Q and
 * (when not 0) KW are constants after inlining, so the tiles' accumulators, masks and
 * column offsets stay in registers (GCC keeps arrays of vectors in memory: named
 * variables instead). Tile t is (row t / Q, chunk t % Q). */
QR__K_AVX512 static inline __attribute__((always_inline)) void qr__k_dw_cols(const QrKDwPlane *p, const int R,
                                                                            const int Q, const int64_t KWc,
                                                                            const bool padded, int64_t q) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const bool s1 = p->sw == 1;
    const int64_t KW = KWc ? KWc : p->KW, OW = p->OW;
#define QR__K_DW_CHUNK(c)                                                                             \
    const bool cl##c = (c) < Q && q + (c) < p->nq;                                                    \
    const __mmask16 cm##c = cl##c ? p->ym[q + (c)] : 0;                                               \
    const uint32_t *ci##c = cl##c && p->in ? p->in + (q + (c)) * KW : qr__k_dw_none;                 \
    const int64_t col##c = 16 * (cl##c ? q + (c) : q) * p->sw - p->pw;                                \
    const int64_t yo##c = 16 * (cl##c ? q + (c) : q);
    QR__K_DW_CHUNK(0) QR__K_DW_CHUNK(1) QR__K_DW_CHUNK(2) QR__K_DW_CHUNK(3)
#undef QR__K_DW_CHUNK
#define QR__K_DW_PICK(c, v) ((c) == 0 ? v##0 : (c) == 1 ? v##1 : (c) == 2 ? v##2 : v##3)
    for (int64_t oh = 0; oh < p->OH; oh += R) {
#define QR__K_DW_SETUP(t)                                                                             \
    const int64_t o##t = QR_MIN(oh + (t) / Q, p->OH - 1);   /* a dead tile reads a real row */       \
    const bool live##t = (t) < R * Q && oh + (t) / Q < p->OH;                                         \
    const __mmask16 ym##t = live##t ? QR__K_DW_PICK((t) % Q, cm) : 0;                                 \
    const uint32_t *in##t = live##t ? QR__K_DW_PICK((t) % Q, ci) : qr__k_dw_none;                     \
    float *yp##t = p->y + o##t * OW + QR__K_DW_PICK((t) % Q, yo);                                     \
    __m512 a##t = p->init ? _mm512_set1_ps(p->bias) : _mm512_maskz_loadu_ps(ym##t, yp##t);
        QR__K_DW_SETUP(0) QR__K_DW_SETUP(1) QR__K_DW_SETUP(2) QR__K_DW_SETUP(3)
#undef QR__K_DW_SETUP
        for (int64_t kh = 0; kh < p->KH; kh++) {
#define QR__K_DW_ROW(t)                                                                               \
    const float *r##t;                                                                                \
    {                                                                                                 \
        int64_t ih = o##t * p->sh - p->ph + kh * p->dh;                                               \
        r##t = (padded || (ih >= 0 && ih < p->H) ? p->x + ih * p->W : p->zero) + QR__K_DW_PICK((t) % Q, col); \
    }
            QR__K_DW_ROW(0) QR__K_DW_ROW(1) QR__K_DW_ROW(2) QR__K_DW_ROW(3)
#undef QR__K_DW_ROW
            const float *wr = p->w + kh * KW;
#define QR__K_DW_TAP(t, kw)                                                                           \
    if ((t) < R * Q) {                                                                                \
        const float *s = r##t + (kw) * p->dw;                                                         \
        __m512 v;                                                                                     \
        if (padded) {                                                                                 \
            v = s1 ? _mm512_loadu_ps(s) : _mm512_permutex2var_ps(_mm512_loadu_ps(s), even, _mm512_loadu_ps(s + 16)); \
        } else {                                                                                      \
            const uint32_t m = in##t[kw];                                                             \
            v = s1 ? _mm512_maskz_loadu_ps((__mmask16)m, s)                                           \
                   : _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)m, s), even,             \
                                            _mm512_maskz_loadu_ps((__mmask16)(m >> 16), s + 16));     \
        }                                                                                             \
        a##t = _mm512_fmadd_ps(wv, v, a##t);                                                          \
    }
#define QR__K_DW_KW(kw)                                                                               \
    {                                                                                                 \
        const __m512 wv = _mm512_set1_ps(wr[kw]);                                                     \
        QR__K_DW_TAP(0, kw) QR__K_DW_TAP(1, kw) QR__K_DW_TAP(2, kw) QR__K_DW_TAP(3, kw)               \
    }
            if (KWc == 3) {
                QR__K_DW_KW(0) QR__K_DW_KW(1) QR__K_DW_KW(2)
            } else {
                for (int64_t kw = 0; kw < KW; kw++) QR__K_DW_KW(kw)
            }
#undef QR__K_DW_KW
#undef QR__K_DW_TAP
        }
        _mm512_mask_storeu_ps(yp0, ym0, a0);
        _mm512_mask_storeu_ps(yp1, ym1, a1);
        _mm512_mask_storeu_ps(yp2, ym2, a2);
        _mm512_mask_storeu_ps(yp3, ym3, a3);
    }
#undef QR__K_DW_PICK
}

#define QR__K_DW_VARIANT(R, Q, KW, PAD)                                                                \
    QR__K_AVX512 static void qr__k_dw_##R##x##Q##_k##KW##_p##PAD(const QrKDwPlane *p, int64_t q) {    \
        qr__k_dw_cols(p, R, Q, KW, PAD, q);                                                            \
    }
QR__K_DW_VARIANT(1, 4, 0, 1)
QR__K_DW_VARIANT(2, 2, 0, 1)
QR__K_DW_VARIANT(4, 1, 0, 1)
QR__K_DW_VARIANT(1, 4, 0, 0)
QR__K_DW_VARIANT(2, 2, 0, 0)
QR__K_DW_VARIANT(4, 1, 0, 0)
#undef QR__K_DW_VARIANT

/* 3x3 taps (dilation 1) straight from the plane: per tile row and kernel row, the
 * consecutive input vectors of its chunks are loaded once (masked to [0, W); rows outside
 * [0, H) read the zero row) and the three kernel columns come from in-register shifts
 * (stride 1: V[j], then valignd of V[j+1]:V[j] by 1 and 2; stride 2: the even and odd
 * elements of V[2j]:V[2j+1], then valignd of V[2j+2]:evens by 1). Chunk j's last vector is
 * chunk j+1's first. Same taps, order and fma per tap as qr__k_dw_cols. */
QR__K_AVX512 static inline __attribute__((always_inline)) void qr__k_dw3_cols(const QrKDwPlane *p, const int R,
                                                                             const int Q, const bool s2, int64_t q) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const int64_t OW = p->OW, W = p->W, sw = s2 ? 2 : 1;
    const __m512 w00 = _mm512_set1_ps(p->w[0]), w01 = _mm512_set1_ps(p->w[1]), w02 = _mm512_set1_ps(p->w[2]);
    const __m512 w10 = _mm512_set1_ps(p->w[3]), w11 = _mm512_set1_ps(p->w[4]), w12 = _mm512_set1_ps(p->w[5]);
    const __m512 w20 = _mm512_set1_ps(p->w[6]), w21 = _mm512_set1_ps(p->w[7]), w22 = _mm512_set1_ps(p->w[8]);
    /* input vectors of a row: v = 0 .. NV-1 at column c0 + 16 v, masked to [0, W) */
    const int NV = s2 ? 2 * Q + 1 : Q + 1;
    const int64_t c0 = 16 * q * sw - p->pw;
#define QR__K_DW_VMASK(v) const __mmask16 vm##v = (v) < NV ? (__mmask16)qr__k_bits(-(c0 + 16 * (v)), W - (c0 + 16 * (v)), 0, 16) : 0;
    QR__K_DW_VMASK(0) QR__K_DW_VMASK(1) QR__K_DW_VMASK(2) QR__K_DW_VMASK(3) QR__K_DW_VMASK(4)
    QR__K_DW_VMASK(5) QR__K_DW_VMASK(6) QR__K_DW_VMASK(7) QR__K_DW_VMASK(8)
#undef QR__K_DW_VMASK
#define QR__K_DW_CHUNK(c)                                                                             \
    const __mmask16 cm##c = (c) < Q && q + (c) < p->nq ? p->ym[q + (c)] : 0;
    QR__K_DW_CHUNK(0) QR__K_DW_CHUNK(1) QR__K_DW_CHUNK(2) QR__K_DW_CHUNK(3)
#undef QR__K_DW_CHUNK
#define QR__K_DW_PICK(c, v) ((c) == 0 ? v##0 : (c) == 1 ? v##1 : (c) == 2 ? v##2 : v##3)
    for (int64_t oh = 0; oh < p->OH; oh += R) {
#define QR__K_DW_SETUP(t)                                                                             \
    const int64_t o##t = QR_MIN(oh + (t) / Q, p->OH - 1);                                             \
    const __mmask16 ym##t = (t) < R * Q && oh + (t) / Q < p->OH ? QR__K_DW_PICK((t) % Q, cm) : 0;     \
    float *yp##t = p->y + o##t * OW + 16 * (q + (t) % Q);                                             \
    __m512 a##t = p->init ? _mm512_set1_ps(p->bias) : _mm512_maskz_loadu_ps(ym##t, yp##t);
        QR__K_DW_SETUP(0) QR__K_DW_SETUP(1) QR__K_DW_SETUP(2) QR__K_DW_SETUP(3)
#undef QR__K_DW_SETUP
        /* one input row (kernel row kh) for output row `row` of the tiles: tiles tb .. tb+Q-1 */
#define QR__K_DW_LD(v, r) const __m512 V##v = (v) < NV ? _mm512_maskz_loadu_ps(vm##v, (r) + 16 * (v)) : _mm512_setzero_ps();
#define QR__K_DW_SHIFT(hi, lo, n) _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), n))
#define QR__K_DW_USE(t, j, wa, wb, wc)                                                                \
    if ((t) < R * Q) {                                                                                \
        __m512 x0, x1, x2;                                                                            \
        if (!s2) {                                                                                    \
            x0 = QR__K_DW_PICK9(j, V);                                                                \
            x1 = QR__K_DW_SHIFT(QR__K_DW_PICK9((j) + 1, V), x0, 1);                                   \
            x2 = QR__K_DW_SHIFT(QR__K_DW_PICK9((j) + 1, V), x0, 2);                                   \
        } else {                                                                                      \
            x0 = _mm512_permutex2var_ps(QR__K_DW_PICK9(2 * (j), V), even, QR__K_DW_PICK9(2 * (j) + 1, V)); \
            x1 = _mm512_permutex2var_ps(QR__K_DW_PICK9(2 * (j), V), odd, QR__K_DW_PICK9(2 * (j) + 1, V)); \
            x2 = QR__K_DW_SHIFT(QR__K_DW_PICK9(2 * (j) + 2, V), x0, 1);                               \
        }                                                                                             \
        a##t = _mm512_fmadd_ps(wa, x0, a##t);                                                         \
        a##t = _mm512_fmadd_ps(wb, x1, a##t);                                                         \
        a##t = _mm512_fmadd_ps(wc, x2, a##t);                                                         \
    }
#define QR__K_DW_PICK9(v, n)                                                                          \
    ((v) == 0 ? n##0 : (v) == 1 ? n##1 : (v) == 2 ? n##2 : (v) == 3 ? n##3 : (v) == 4 ? n##4 :        \
     (v) == 5 ? n##5 : (v) == 6 ? n##6 : (v) == 7 ? n##7 : n##8)
#define QR__K_DW_ROWTAPS(row, kh, ...)                                                                \
    {                                                                                                 \
        int64_t ih = QR__K_DW_PICK((row) * Q, o) * p->sh - p->ph + (kh);                              \
        const float *r = (ih >= 0 && ih < p->H ? p->x + ih * W : p->zero) + c0;                       \
        QR__K_DW_LD(0, r) QR__K_DW_LD(1, r) QR__K_DW_LD(2, r) QR__K_DW_LD(3, r) QR__K_DW_LD(4, r)     \
        QR__K_DW_LD(5, r) QR__K_DW_LD(6, r) QR__K_DW_LD(7, r) QR__K_DW_LD(8, r)                       \
        __VA_ARGS__                                                                                   \
    }
#define QR__K_DW_KH(kh, wa, wb, wc)                                                                   \
    if (Q == 1) {                                                                                     \
        QR__K_DW_ROWTAPS(0, kh, QR__K_DW_USE(0, 0, wa, wb, wc))                                       \
        QR__K_DW_ROWTAPS(1, kh, QR__K_DW_USE(1, 0, wa, wb, wc))                                       \
        QR__K_DW_ROWTAPS(2, kh, QR__K_DW_USE(2, 0, wa, wb, wc))                                       \
        QR__K_DW_ROWTAPS(3, kh, QR__K_DW_USE(3, 0, wa, wb, wc))                                       \
    } else if (Q == 2) {                                                                              \
        QR__K_DW_ROWTAPS(0, kh, QR__K_DW_USE(0, 0, wa, wb, wc) QR__K_DW_USE(1, 1, wa, wb, wc))        \
        QR__K_DW_ROWTAPS(1, kh, QR__K_DW_USE(2, 0, wa, wb, wc) QR__K_DW_USE(3, 1, wa, wb, wc))        \
    } else {                                                                                          \
        QR__K_DW_ROWTAPS(0, kh, QR__K_DW_USE(0, 0, wa, wb, wc) QR__K_DW_USE(1, 1, wa, wb, wc)         \
                                QR__K_DW_USE(2, 2, wa, wb, wc) QR__K_DW_USE(3, 3, wa, wb, wc))        \
    }
        QR__K_DW_KH(0, w00, w01, w02)
        QR__K_DW_KH(1, w10, w11, w12)
        QR__K_DW_KH(2, w20, w21, w22)
#undef QR__K_DW_KH
#undef QR__K_DW_ROWTAPS
#undef QR__K_DW_PICK9
#undef QR__K_DW_USE
#undef QR__K_DW_SHIFT
#undef QR__K_DW_LD
        _mm512_mask_storeu_ps(yp0, ym0, a0);
        _mm512_mask_storeu_ps(yp1, ym1, a1);
        _mm512_mask_storeu_ps(yp2, ym2, a2);
        _mm512_mask_storeu_ps(yp3, ym3, a3);
    }
#undef QR__K_DW_PICK
}

#define QR__K_DW3_VARIANT(R, Q, S2)                                                                    \
    QR__K_AVX512 static void qr__k_dw3_##R##x##Q##_s##S2(const QrKDwPlane *p, int64_t q) {            \
        qr__k_dw3_cols(p, R, Q, S2, q);                                                                \
    }
QR__K_DW3_VARIANT(1, 4, 0)
QR__K_DW3_VARIANT(2, 2, 0)
QR__K_DW3_VARIANT(4, 1, 0)
QR__K_DW3_VARIANT(1, 4, 1)
QR__K_DW3_VARIANT(2, 2, 1)
QR__K_DW3_VARIANT(4, 1, 1)
#undef QR__K_DW3_VARIANT

/* A row of zeros that input rows outside the plane read (masked loads never go past W). */
static const float qr__k_dw_zeros[4096 + 64];

/* QrF32DwConv2dFn on AVX-512F for strides sw 1 or 2, kernels up to 16 columns and output
 * rows up to 1024 columns (else the AVX2 kernel). 3x3 kernels (dilation 1) read the plane
 * directly (qr__k_dw3_cols); other kernels read a zero-padded copy when it fits in 1 MB,
 * else use masked loads. Taps in (kh, kw) order, one fma each. */
QR__K_AVX512 static void qr__k_dw_avx512(const float *x, int64_t H, int64_t W, const float *w, int64_t KH, int64_t KW,
                                         int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, float *y,
                                         int64_t OH, int64_t OW, bool init, float bias) {
    enum { MAXKW = 16, MAXQ = 64 };
    const int64_t nq = (OW + 15) / 16;
    const size_t zbytes = (size_t)(W + 64) * sizeof(float);
    if (KH == 3 && KW == 3 && dh == 1 && dw == 1 && (sw == 1 || sw == 2) && nq <= MAXQ) {
        float *zr = zbytes <= sizeof qr__k_dw_zeros ? NULL : qr__k_scratch(zbytes);
        if (zr) memset(zr, 0, zbytes);
        if (zr || zbytes <= sizeof qr__k_dw_zeros) {
            __mmask16 ym[MAXQ];
            for (int64_t q = 0; q < nq; q++) ym[q] = (__mmask16)qr__k_bits(0, OW - 16 * q, 0, 16);
            const QrKDwPlane pp = { x, w, zr ? zr : qr__k_dw_zeros, y, H, W, KH, KW, sh, sw, dh, dw, ph, pw, OH, OW,
                                    nq, ym, NULL, init, bias };
            const bool s2 = sw == 2;
            if (nq >= 3) {
                for (int64_t q = 0; q < nq; q += 4) s2 ? qr__k_dw3_1x4_s1(&pp, q) : qr__k_dw3_1x4_s0(&pp, q);
            } else if (nq == 2) {
                s2 ? qr__k_dw3_2x2_s1(&pp, 0) : qr__k_dw3_2x2_s0(&pp, 0);
            } else {
                s2 ? qr__k_dw3_4x1_s1(&pp, 0) : qr__k_dw3_4x1_s0(&pp, 0);
            }
            return;
        }
    }
    /* padded plane: row r = input row r - ph, column j = input column j - pw, with room for
     * the widest read */
    const int64_t Hp = (OH - 1) * sh + (KH - 1) * dh + 1;
    const int64_t Wp = qr__k_rup(16 * nq * sw + (KW - 1) * dw + 32, 16);
    const bool pad = (sw == 1 || sw == 2) && nq <= MAXQ && ph >= 0 && pw >= 0 && Hp * Wp <= (1 << 18);
    float *zero = (sw == 1 || sw == 2) && KW <= MAXKW && nq <= MAXQ
                      ? qr__k_scratch(pad ? (size_t)(Hp * Wp) * sizeof(float) : zbytes) : NULL;
    if (!zero) {
        if (init) qr_f32_dwconv2d_bias__avx2(x, H, W, w, KH, KW, sh, sw, dh, dw, ph, pw, bias, y, OH, OW);
        else qr_f32_dwconv2d__avx2(x, H, W, w, KH, KW, sh, sw, dh, dw, ph, pw, y, OH, OW);
        return;
    }
    if (pad) {
        float *xp = zero;
        const __m512 z = _mm512_setzero_ps();
        const int64_t c1 = QR_MIN(Wp, W + pw);   /* row elements [pw, c1) come from x */
        for (int64_t r = 0; r < Hp; r++) {
            float *d = xp + r * Wp;
            for (int64_t j = 0; j < Wp; j += 16) _mm512_store_ps(d + j, z);
            int64_t ih = r - ph;
            if (ih < 0 || ih >= H || c1 <= pw) continue;
            const float *sr = x + ih * W;
            for (int64_t j = 0; j < c1 - pw; j += 16) {
                __mmask16 m = (__mmask16)qr__k_bits(0, c1 - pw - j, 0, 16);
                _mm512_mask_storeu_ps(d + pw + j, m, _mm512_maskz_loadu_ps(m, sr + j));
            }
        }
        __mmask16 ym[MAXQ];
        for (int64_t q = 0; q < nq; q++) ym[q] = (__mmask16)qr__k_bits(0, OW - 16 * q, 0, 16);
        const QrKDwPlane pp = { xp, w, NULL, y, Hp, Wp, KH, KW, sh, sw, dh, dw, 0, 0, OH, OW, nq, ym, NULL, init, bias };
        if (nq >= 3) {
            for (int64_t q = 0; q < nq; q += 4) qr__k_dw_1x4_k0_p1(&pp, q);
        } else if (nq == 2) {
            qr__k_dw_2x2_k0_p1(&pp, 0);
        } else {
            qr__k_dw_4x1_k0_p1(&pp, 0);
        }
        return;
    }
    memset(zero, 0, zbytes);
    uint32_t in[MAXQ * MAXKW];
    __mmask16 ym[MAXQ];
    for (int64_t q = 0; q < nq; q++) {
        ym[q] = (__mmask16)qr__k_bits(0, OW - 16 * q, 0, 16);
        for (int64_t kw = 0; kw < KW; kw++) {
            int64_t t = 16 * q * sw - pw + kw * dw;   /* input column of lane 0 */
            in[q * KW + kw] = qr__k_bits(-t, W - t, 0, sw == 1 ? 16 : 32);
        }
    }
    const QrKDwPlane p = { x, w, zero, y, H, W, KH, KW, sh, sw, dh, dw, ph, pw, OH, OW, nq, ym, in, init, bias };
    if (nq >= 3) {
        for (int64_t q = 0; q < nq; q += 4) qr__k_dw_1x4_k0_p0(&p, q);
    } else if (nq == 2) {
        qr__k_dw_2x2_k0_p0(&p, 0);
    } else {
        qr__k_dw_4x1_k0_p0(&p, 0);
    }
}

/* QrF32DwConv2dFn / QrF32DwConv2dBiasFn on AVX-512F (see qr__k_dw_avx512). */
QR__K_AVX512 static void qr_f32_dwconv2d__avx512(const float *x, int64_t H, int64_t W, const float *w, int64_t KH,
                                                 int64_t KW, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
                                                 int64_t pw, float *y, int64_t OH, int64_t OW) {
    qr__k_dw_avx512(x, H, W, w, KH, KW, sh, sw, dh, dw, ph, pw, y, OH, OW, false, 0.0f);
}
QR__K_AVX512 static void qr_f32_dwconv2d_bias__avx512(const float *x, int64_t H, int64_t W, const float *w, int64_t KH,
                                                      int64_t KW, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                                                      int64_t ph, int64_t pw, float bias, float *y, int64_t OH,
                                                      int64_t OW) {
    qr__k_dw_avx512(x, H, W, w, KH, KW, sh, sw, dh, dw, ph, pw, y, OH, OW, true, bias);
}

#endif
