/* kern/avx512/f32_conv_m1 — AVX-512F kernels of the M = 1 convolutions (depthwise channels;
 * ORT's order, see QrF32ConvM1Fn): the direct form for 3x3 and 5x5 windows with stride 1
 * or 2 (no copy of the input; kern/gemm.c "the direct form"), else the column kernel over
 * the phase planes: 16 output columns per zmm, 64 at a time in four independent sums, the
 * tail under a mask. */
#if defined(__x86_64__)

/* Whether v is -0 (the bias for which the sums keep ORT's + 0, qr__k_m1d512_try). */
static inline bool qr__k_is_neg0(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    return u == 0x80000000u;
}

/* Four products of taps k..k+3 (weights w0..w3, inputs s[0..3] + j) for 16 columns
 * under mask m, each rounded on its own, summed ((p0 + p1) + p2) + p3 and added to s. */
QR__K_AVX512 static inline __m512 qr__k_m1_quad16(__m512 acc, const float *const *s, int64_t j, __mmask16 m, __m512 w0,
                                                  __m512 w1, __m512 w2, __m512 w3) {
    __m512 p0 = _mm512_mul_ps(w0, _mm512_maskz_loadu_ps(m, s[0] + j));
    __m512 p1 = _mm512_mul_ps(w1, _mm512_maskz_loadu_ps(m, s[1] + j));
    __m512 p2 = _mm512_mul_ps(w2, _mm512_maskz_loadu_ps(m, s[2] + j));
    __m512 p3 = _mm512_mul_ps(w3, _mm512_maskz_loadu_ps(m, s[3] + j));
    QR_KERN_ROUNDED(p0);
    QR_KERN_ROUNDED(p1);
    QR_KERN_ROUNDED(p2);
    QR_KERN_ROUNDED(p3);
    return _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(p0, p1), p2), p3), acc);
}

/* The pair and single left after the groups of four (r = K % 4 taps). */
QR__K_AVX512 static inline __m512 qr__k_m1_rest16(__m512 acc, const float *const *s, int64_t j, __mmask16 m,
                                                  const float *w, int64_t r) {
    if (r >= 2) {
        __m512 p0 = _mm512_mul_ps(_mm512_set1_ps(w[0]), _mm512_maskz_loadu_ps(m, s[0] + j));
        __m512 p1 = _mm512_mul_ps(_mm512_set1_ps(w[1]), _mm512_maskz_loadu_ps(m, s[1] + j));
        QR_KERN_ROUNDED(p0);
        QR_KERN_ROUNDED(p1);
        acc = _mm512_add_ps(_mm512_add_ps(p0, p1), acc);
        s += 2;
        w += 2;
        r -= 2;
    }
    if (r) {
        __m512 p0 = _mm512_mul_ps(_mm512_set1_ps(w[0]), _mm512_maskz_loadu_ps(m, s[0] + j));
        QR_KERN_ROUNDED(p0);
        acc = _mm512_add_ps(p0, acc);
    }
    return acc;
}

/* QrKF32M1Cols on AVX-512F (no FMA: ORT's M=1 kernel rounds every product). */
QR__K_AVX512 static void qr__k_f32_m1_cols__avx512(int64_t K, int64_t n, const float *w, const float *const *src,
                                                  float bias, float *y) {
    const __m512 vb = _mm512_set1_ps(bias);
    const int64_t K4 = K & ~(int64_t)3;
    const __mmask16 all = 0xffff;
    int64_t j = 0;
    for (; j + 64 <= n; j += 64) {
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t k = 0; k < K4; k += 4) {
            const __m512 w0 = _mm512_set1_ps(w[k]), w1 = _mm512_set1_ps(w[k + 1]);
            const __m512 w2 = _mm512_set1_ps(w[k + 2]), w3 = _mm512_set1_ps(w[k + 3]);
            s0 = qr__k_m1_quad16(s0, src + k, j, all, w0, w1, w2, w3);
            s1 = qr__k_m1_quad16(s1, src + k, j + 16, all, w0, w1, w2, w3);
            s2 = qr__k_m1_quad16(s2, src + k, j + 32, all, w0, w1, w2, w3);
            s3 = qr__k_m1_quad16(s3, src + k, j + 48, all, w0, w1, w2, w3);
        }
        s0 = qr__k_m1_rest16(s0, src + K4, j, all, w + K4, K - K4);
        s1 = qr__k_m1_rest16(s1, src + K4, j + 16, all, w + K4, K - K4);
        s2 = qr__k_m1_rest16(s2, src + K4, j + 32, all, w + K4, K - K4);
        s3 = qr__k_m1_rest16(s3, src + K4, j + 48, all, w + K4, K - K4);
        _mm512_storeu_ps(y + j, _mm512_add_ps(s0, vb));
        _mm512_storeu_ps(y + j + 16, _mm512_add_ps(s1, vb));
        _mm512_storeu_ps(y + j + 32, _mm512_add_ps(s2, vb));
        _mm512_storeu_ps(y + j + 48, _mm512_add_ps(s3, vb));
    }
    for (; j < n; j += 16) {
        const __mmask16 m = n - j >= 16 ? all : (__mmask16)((1u << (n - j)) - 1);
        __m512 s0 = _mm512_setzero_ps();
        for (int64_t k = 0; k < K4; k += 4)
            s0 = qr__k_m1_quad16(s0, src + k, j, m, _mm512_set1_ps(w[k]), _mm512_set1_ps(w[k + 1]),
                                 _mm512_set1_ps(w[k + 2]), _mm512_set1_ps(w[k + 3]));
        s0 = qr__k_m1_rest16(s0, src + K4, j, m, w + K4, K - K4);
        _mm512_mask_storeu_ps(y + j, m, _mm512_add_ps(s0, vb));
    }
}

/* Tap input of a direct vector (kern/gemm.c, "the direct form"): 16 lanes from p, lane j
 * element j (sw 1) or 2j (sw 2, two masked loads and the even elements), elements outside
 * raw's bits 0. */
QR__K_AVX512 static inline __m512 qr__k_m1d_in16(const int SW, const float *p, uint32_t raw) {
    if (SW == 1) return _mm512_maskz_loadu_ps((__mmask16)raw, p);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)raw, p), even,
                                  _mm512_maskz_loadu_ps((__mmask16)(raw >> 16), p + 16));
}

/* The activation fused at the stores (QrF32ConvM1ActFn), a constant of the instantiation:
 * ACT bit 1 a Clip to [lo, hi], then bit 0 a ReLU — QrF32StepsFn's AVX-512 forms. The
 * kernels' ACT also carries bit 2 (not an activation): their sums start without ORT's + 0,
 * which qr__k_m1d512_try picks for every bias but -0. */
QR__K_AVX512 static inline __m512 qr__k_m1d_act16(const int ACT, __m512 v, __m512 lo, __m512 hi) {
    if (ACT & 2) v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
    if (ACT & 1) v = qr__k_relu_sum512(v);
    return v;
}

/* Product of tap k (row k / KW, column k % KW of the window) of one output vector whose
 * input rows are rows[], rounded on its own (ORT's M=1 kernel has no fused multiply-add). */
QR__K_AVX512 static inline __m512 qr__k_m1d_prod(const int SW, const int KW, const float *w, int k,
                                                 const float *const *rows, const uint32_t *m) {
    __m512 p = _mm512_mul_ps(_mm512_set1_ps(w[k]), qr__k_m1d_in16(SW, rows[k / KW] + k % KW, m[k % KW]));
    QR_KERN_ROUNDED(p);
    return p;
}

/* One output channel the direct way for a KH x KW window with stride SW along both axes
 * and no dilation (constants of the instantiation): output rows four at a time in
 * independent sums, reading the (4-1)*SW + KH input rows they share (t->row,
 * QR__K_M1D_SLOTS), across the row in column blocks v of 16 outputs (column masks from
 * t->raw); each tap's product on its own, the sums in ORT's M=1 groups. t:
 * qr__k_m1d_tables(b, 16). Row bands, not column blocks down the whole plane: the rows are
 * read and written front to back, which the prefetchers follow when the plane is not in
 * L1 (a 112x112 plane is 49 KB): 10-40% faster on MobileNetV2's layers, most where the
 * input or output comes from memory. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_m1d512(const int KH, const int KW, const int SW, const int ACT, const QrF32ConvB *b, const float *w, float bias,
             float *y, const QrKM1dTab *t, float lo, float hi) {
    enum { S = QR__K_M1D_SLOTS };
    const int K = KH * KW, NR = (S - 1) * SW + KH;
    const int64_t OH = b->OH, OW = b->OW, nv = qr__k_cdiv(OW, 16);
    const __m512 vb = _mm512_set1_ps(bias), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    for (int64_t oh = 0; oh < OH; oh += S) {
        const float *r0[4 * 2 + 8];   /* the input rows of output rows oh .. oh+S-1 */
#pragma GCC unroll 16
        for (int i = 0; i < NR; i++) {
            const int32_t ih = t->row[oh * SW + i];
            r0[i] = ih >= 0 ? b->x + ih * b->W : qr__k_zero_row;
        }
        for (int64_t v = 0; v < nv; v++) {
            uint32_t m[8];
            for (int kw = 0; kw < KW; kw++) m[kw] = t->raw[v * KW + kw];
            const int64_t off = v * 16 * SW - b->pw;
            const __mmask16 sm = OW - v * 16 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (OW - v * 16)) - 1);
            float *yv = y + v * 16;
            const float *r[4 * 2 + 8];
#pragma GCC unroll 16
            for (int i = 0; i < NR; i++) r[i] = r0[i] + off;
            __m512 acc[S];
#pragma GCC unroll 4
            for (int s = 0; s < S; s++) acc[s] = _mm512_setzero_ps();
            int k = 0;
#pragma GCC unroll 8
            for (; k + 4 <= K; k += 4) {
#pragma GCC unroll 4
                for (int s = 0; s < S; s++) {
                    const float *const *rs = r + s * SW;
                    __m512 p0 = qr__k_m1d_prod(SW, KW, w, k, rs, m), p1 = qr__k_m1d_prod(SW, KW, w, k + 1, rs, m);
                    __m512 p2 = qr__k_m1d_prod(SW, KW, w, k + 2, rs, m), p3 = qr__k_m1d_prod(SW, KW, w, k + 3, rs, m);
                    const __m512 q = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(p0, p1), p2), p3);
                    acc[s] = (ACT & 4) && k == 0 ? q : _mm512_add_ps(q, acc[s]);   /* ACT & 4: no + 0 */
                }
            }
            if (K - k >= 2) {
#pragma GCC unroll 4
                for (int s = 0; s < S; s++)
                    acc[s] = _mm512_add_ps(_mm512_add_ps(qr__k_m1d_prod(SW, KW, w, k, r + s * SW, m),
                                                         qr__k_m1d_prod(SW, KW, w, k + 1, r + s * SW, m)), acc[s]);
                k += 2;
            }
            if (k < K) {
#pragma GCC unroll 4
                for (int s = 0; s < S; s++) acc[s] = _mm512_add_ps(qr__k_m1d_prod(SW, KW, w, k, r + s * SW, m), acc[s]);
            }
#pragma GCC unroll 4
            for (int s = 0; s < S; s++)
                if (oh + s < OH)
                    _mm512_mask_storeu_ps(yv + (oh + s) * OW, sm, qr__k_m1d_act16(ACT, _mm512_add_ps(acc[s], vb), vlo, vhi));
        }
    }
}

/* Tap row kh (0-2, a constant) of one output vector of a 3x3 window, its inputs x0..x2 the
 * taps kw = 0..2: the products rounded on their own, the output's sum built across its rows
 * in ORT's M=1 groups — row 0: g = (p0 + p1) + p2; row 1: g = g + p3 (then + 0 unless
 * ACT & 4), h = p4 + p5; row 2: the sum p8 + (((h + p6) + p7) + g), returned (rows 0 and 1
 * return g). */
QR__K_AVX512 static inline __attribute__((always_inline)) __m512
qr__k_m1d_row3(const int ACT, const int kh, const __m512 *wv, __m512 x0, __m512 x1, __m512 x2, __m512 *g, __m512 *h) {
    __m512 p0 = _mm512_mul_ps(wv[kh * 3], x0), p1 = _mm512_mul_ps(wv[kh * 3 + 1], x1);
    __m512 p2 = _mm512_mul_ps(wv[kh * 3 + 2], x2);
    QR_KERN_ROUNDED(p0);
    QR_KERN_ROUNDED(p1);
    QR_KERN_ROUNDED(p2);
    if (kh == 0) {
        *g = _mm512_add_ps(_mm512_add_ps(p0, p1), p2);
    } else if (kh == 1) {
        *g = _mm512_add_ps(*g, p0);
        if (!(ACT & 4)) *g = _mm512_add_ps(*g, _mm512_setzero_ps());
        *h = _mm512_add_ps(p1, p2);
    } else {
        return _mm512_add_ps(p2, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(*h, p0), p1), *g));
    }
    return *g;
}

/* The 3x3 window with stride 2 (see qr__k_m1d512): the 2S + 1 input rows of a band are
 * walked once per column block, each loaded once as 33 elements (three masked loads of the
 * span of the kw = 0 tap; elements outside the row 0) and its three taps taken from it —
 * the even elements, the odd ones, and the even ones one lane on (valignd with element 32)
 * — for the one or two slots that read the row (an even row is tap row 2 of one slot and
 * tap row 0 of the next). Every slot's sum is built in the row order of its taps, in ORT's
 * M=1 groups as in qr__k_m1d512_3x3_s1x. Per output vector (S = 4: nine rows for four)
 * 6.75 loads and 4.5 vpermt2ps, where taking each slot's rows on their own needs 9 and 6. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_m1d512_3x3_s2x(const int ACT, const QrF32ConvB *b, const float *w, float bias, float *y, const QrKM1dTab *t,
                     float lo, float hi) {
    enum { S = QR__K_M1D_SLOTS, NR = (S - 1) * 2 + 3 };
    const int64_t OH = b->OH, OW = b->OW, nv = qr__k_cdiv(OW, 16);
    const __m512 vb = _mm512_set1_ps(bias), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    __m512 wv[9];
#pragma GCC unroll 9
    for (int k = 0; k < 9; k++) wv[k] = _mm512_set1_ps(w[k]);
    for (int64_t oh = 0; oh < OH; oh += S) {
        const float *r0[NR];
#pragma GCC unroll 9
        for (int i = 0; i < NR; i++) {
            const int32_t ih = t->row[oh * 2 + i];
            r0[i] = ih >= 0 ? b->x + ih * b->W : qr__k_zero_row;
        }
        for (int64_t v = 0; v < nv; v++) {
            /* elements 0-31 of the span: the kw = 0 tap's bits; element 32: the kw = 2 tap's bit 30 */
            const __mmask16 m0 = (__mmask16)t->raw[v * 3], m1 = (__mmask16)(t->raw[v * 3] >> 16);
            const __mmask16 m2 = (__mmask16)(t->raw[v * 3 + 2] >> 30 & 1);
            const int64_t off = v * 32 - b->pw;
            const __mmask16 sm = OW - v * 16 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (OW - v * 16)) - 1);
            float *yv = y + v * 16;
            __m512 g[S], h[S];
#pragma GCC unroll 9
            for (int i = 0; i < NR; i++) {
                const float *q = r0[i] + off;
                const __m512 l0 = _mm512_maskz_loadu_ps(m0, q), l1 = _mm512_maskz_loadu_ps(m1, q + 16);
                const __m512 l2 = _mm512_maskz_loadu_ps(m2, q + 32);
                const __m512 x0 = _mm512_permutex2var_ps(l0, even, l1);
                const __m512 x1 = _mm512_permutex2var_ps(l0, odd, l1);
                const __m512 x2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(l2), _mm512_castps_si512(x0), 1));
#pragma GCC unroll 3
                for (int kh = 2; kh >= 0; kh--) {
                    if ((i - kh) % 2) continue;
                    const int s = (i - kh) / 2;
                    if (s < 0 || s >= S) continue;
                    const __m512 acc = qr__k_m1d_row3(ACT, kh, wv, x0, x1, x2, &g[s], &h[s]);
                    if (kh == 2 && oh + s < OH)
                        _mm512_mask_storeu_ps(yv + (oh + s) * OW, sm, qr__k_m1d_act16(ACT, _mm512_add_ps(acc, vb), vlo, vhi));
                }
            }
        }
    }
}

/* qr__k_m1d512_3x3_s1x on planes of at most QR__K_M1D_ROLLV column blocks (OW <= 32:
 * MobileNetV2's 14x14 and 28x28 planes), column block v: the input rows walked once top to
 * bottom, each loaded once (its kw = 0 span, its 16 columns, the next 16) and its three
 * taps given to the three output rows that read it — tap row 2 of row R - 2, which it
 * completes and stores, tap row 1 of row R - 1, tap row 0 of row R — the partial sums of
 * two rows carried from one input row to the next. The same products, sums and order as
 * the bands, which reload two rows per band of four and compute a last band's rows past
 * OH. One thread, a call per task's planes as ops/nn.c makes them: 384 planes of 14x14
 * 30.9 -> 22.6 us warm, 37.5 -> 31.6 cold; 192 of 28x28 49.7 -> 42.6 warm, 55.6 -> 49.2
 * cold. Wider planes keep the bands: walking a column block down a 56x56 plane that comes
 * from memory measured 35% slower (the prefetchers follow rows read front to back). */
enum { QR__K_M1D_ROLLV = 2 };
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_m1d512_3x3_s1r(const int ACT, const QrF32ConvB *b, const __m512 *wv, float *y, const QrKM1dTab *t, int64_t v,
                     __m512 vb, __m512 vlo, __m512 vhi) {
    const int64_t OH = b->OH, OW = b->OW, W = b->W;
    const __mmask16 m0 = (__mmask16)t->raw[v * 3], m1 = (__mmask16)t->raw[v * 3 + 1];
    const int64_t rest = W - (v + 1) * 16;
    const __mmask16 mn = rest >= 16 ? (__mmask16)0xffff : rest > 0 ? (__mmask16)((1u << rest) - 1) : 0;
    const __mmask16 sm = OW - v * 16 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (OW - v * 16)) - 1);
    y += v * 16;
    __m512 ga = _mm512_setzero_ps(), ha = ga, gb = ga;   /* row R - 2 after tap row 1; row R - 1 after tap row 0 */
    for (int64_t R = 0; R < OH + 2; R++) {
        const int32_t ih = t->row[R];
        const float *q = (ih >= 0 ? b->x + ih * W : qr__k_zero_row) + v * 16;
        const __m512 x0 = _mm512_maskz_loadu_ps(m0, q - 1), x1 = _mm512_maskz_loadu_ps(m1, q);
        const __m512 x2 = _mm512_castsi512_ps(
            _mm512_alignr_epi32(_mm512_castps_si512(_mm512_maskz_loadu_ps(mn, q + 16)), _mm512_castps_si512(x1), 1));
        if (R >= 2) {
            const __m512 acc = qr__k_m1d_row3(ACT, 2, wv, x0, x1, x2, &ga, &ha);
            _mm512_mask_storeu_ps(y + (R - 2) * OW, sm, qr__k_m1d_act16(ACT, _mm512_add_ps(acc, vb), vlo, vhi));
        }
        if (R >= 1 && R - 1 < OH) {
            ga = gb;
            qr__k_m1d_row3(ACT, 1, wv, x0, x1, x2, &ga, &ha);
        }
        if (R < OH) qr__k_m1d_row3(ACT, 0, wv, x0, x1, x2, &gb, &ha);
    }
}

/* The 3x3 window with stride 1 and one column of left padding (see qr__k_m1d512): the
 * S + 2 input rows of a band are walked once per column block, each giving its three taps
 * from two loads — the kw = 0 span, and the next block's 16 columns (kept for the next
 * block as its kw = 1 tap) — and one valignd for kw = 2; every slot's sum is built in the
 * row order of the taps, in ORT's M=1 groups: g = (((p0 + p1) + p2) + p3) + 0, then
 * (((p4 + p5) + p6) + p7) + g, then p8 + that, then the bias. 12 loads instead of 36 per
 * block of four output vectors. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_m1d512_3x3_s1x(const int ACT, const QrF32ConvB *b, const float *w, float bias, float *y, const QrKM1dTab *t,
                     float lo, float hi) {
    enum { S = QR__K_M1D_SLOTS, NR = S + 2 };
    const int64_t OH = b->OH, OW = b->OW, W = b->W, nv = qr__k_cdiv(OW, 16);
    const __m512 vb = _mm512_set1_ps(bias), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    __m512 wv[9];
    #pragma GCC unroll 9
    for (int k = 0; k < 9; k++) wv[k] = _mm512_set1_ps(w[k]);
    if (nv <= QR__K_M1D_ROLLV) {
        for (int64_t v = 0; v < nv; v++) qr__k_m1d512_3x3_s1r(ACT, b, wv, y, t, v, vb, vlo, vhi);
        return;
    }
    for (int64_t oh = 0; oh < OH; oh += S) {
        const float *r0[NR];
        __m512 cur[NR];   /* row i's columns v*16 .. v*16+15 (the kw = 1 tap of block v) */
        const __mmask16 m1 = (__mmask16)t->raw[1];
        #pragma GCC unroll 6
        for (int i = 0; i < NR; i++) {
            const int32_t ih = t->row[oh + i];
            r0[i] = ih >= 0 ? b->x + ih * W : qr__k_zero_row;
            cur[i] = _mm512_maskz_loadu_ps(m1, r0[i]);
        }
        for (int64_t v = 0; v < nv; v++) {
            const __mmask16 m0 = (__mmask16)t->raw[v * 3];
            const int64_t rest = W - (v + 1) * 16;
            const __mmask16 mn = rest >= 16 ? (__mmask16)0xffff : rest > 0 ? (__mmask16)((1u << rest) - 1) : 0;
            const __mmask16 sm = OW - v * 16 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (OW - v * 16)) - 1);
            float *yv = y + v * 16;
            __m512 g[S], h[S];
#pragma GCC unroll 6
            for (int i = 0; i < NR; i++) {
                const float *q = r0[i] + v * 16;
                const __m512 x0 = _mm512_maskz_loadu_ps(m0, q - 1), x1 = cur[i];
                const __m512 nx = _mm512_maskz_loadu_ps(mn, q + 16);
                const __m512 x2 = _mm512_castsi512_ps(
                    _mm512_alignr_epi32(_mm512_castps_si512(nx), _mm512_castps_si512(x1), 1));
                cur[i] = nx;
#pragma GCC unroll 3
                for (int kh = 2; kh >= 0; kh--) {
                    const int s = i - kh;
                    if (s < 0 || s >= S) continue;
                    const __m512 acc = qr__k_m1d_row3(ACT, kh, wv, x0, x1, x2, &g[s], &h[s]);
                    if (kh == 2 && oh + s < OH)
                        _mm512_mask_storeu_ps(yv + (oh + s) * OW, sm, qr__k_m1d_act16(ACT, _mm512_add_ps(acc, vb), vlo, vhi));
                }
            }
        }
    }
}

/* NV (1-4) vectors v0 .. v0+NV-1 of the flat form (qr__k_m1f512) in independent sums. Row
 * kh of the window: the elements at xr[kh] + v*16 .. + 17 come from cur[kh] (loaded by the
 * vector before) and the next 16 (loaded here, kept in cur[kh] for the vector after); tap
 * kw is lane kw of that span (valignd). A lane whose column ow + kw - pw is outside the row
 * takes wz[k] = w[k] * 0, the product of its zero input (NaN for an infinite weight, as in
 * the planes); rows outside x are zero from the loads' masks (t->fe). Every product rounded
 * on its own, the sums in qr__k_m1d512's order with the same operands; stored for the n
 * outputs of the plane. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_m1f512_vecs(const int ACT, const int NV, const float *const *xr, const __m512 *wv, const __m512 *wz,
                  __m512 *cur, const QrKM1dTab *t, int64_t v0, int64_t n, float *y, __m512 vb, __m512 vlo, __m512 vhi) {
    __m512 p[4][9];
#pragma GCC unroll 4
    for (int s = 0; s < NV; s++) {
        const int64_t v = v0 + s;
        const __mmask16 c0 = t->fc[v * 3], c1 = t->fc[v * 3 + 1], c2 = t->fc[v * 3 + 2];
#pragma GCC unroll 3
        for (int kh = 0; kh < 3; kh++) {
            const __m512 x0 = cur[kh];
            const __m512 nx = _mm512_maskz_loadu_ps(t->fe[(v + 1) * 3 + kh], xr[kh] + (v + 1) * 16);
            const __m512 x1 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(nx), _mm512_castps_si512(x0), 1));
            const __m512 x2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(nx), _mm512_castps_si512(x0), 2));
            cur[kh] = nx;
            p[s][kh * 3] = _mm512_mask_mul_ps(wz[kh * 3], c0, wv[kh * 3], x0);
            p[s][kh * 3 + 1] = _mm512_mask_mul_ps(wz[kh * 3 + 1], c1, wv[kh * 3 + 1], x1);
            p[s][kh * 3 + 2] = _mm512_mask_mul_ps(wz[kh * 3 + 2], c2, wv[kh * 3 + 2], x2);
            QR_KERN_ROUNDED(p[s][kh * 3]);
            QR_KERN_ROUNDED(p[s][kh * 3 + 1]);
            QR_KERN_ROUNDED(p[s][kh * 3 + 2]);
        }
        __m512 acc = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(p[s][0], p[s][1]), p[s][2]), p[s][3]);
        if (!(ACT & 4)) acc = _mm512_add_ps(acc, _mm512_setzero_ps());
        acc = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(p[s][4], p[s][5]), p[s][6]), p[s][7]), acc);
        acc = _mm512_add_ps(p[s][8], acc);
        const int64_t r = n - v * 16;
        const __mmask16 sm = r >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << r) - 1);
        _mm512_mask_storeu_ps(y + v * 16, sm, qr__k_m1d_act16(ACT, _mm512_add_ps(acc, vb), vlo, vhi));
    }
}

/* The flat form of the 3x3 window with stride 1 on small planes (kern/gemm.c
 * qr__k_m1f_tables, t->nflat > 0: OW == W, OH*OW <= 256): the output plane as one array,
 * 16 consecutive outputs per vector whatever rows they span (a 7x7 plane: 4 vectors, where
 * the row form computes 8 row slots of 7 of 16 lanes), four vectors at a time; tap (kh, kw)
 * of output L reads x[L + (kh - ph)*W + kw - pw]. Three loads per vector. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_m1f512(const int ACT, const QrF32ConvB *b, const float *w, float bias, float *y, const QrKM1dTab *t, float lo,
             float hi) {
    const int64_t n = b->OH * b->OW, nv = t->nflat;
    const __m512 vb = _mm512_set1_ps(bias), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    __m512 wv[9], wz[9], cur[3];
#pragma GCC unroll 9
    for (int k = 0; k < 9; k++) {
        wv[k] = _mm512_set1_ps(w[k]);
        wz[k] = _mm512_mul_ps(wv[k], _mm512_setzero_ps());   /* the product of a padded tap */
    }
    const float *xr[3];
#pragma GCC unroll 3
    for (int kh = 0; kh < 3; kh++) {
        xr[kh] = b->x + (kh - b->ph) * b->W - b->pw;
        cur[kh] = _mm512_maskz_loadu_ps(t->fe[kh], xr[kh]);
    }
    int64_t v = 0;
    for (; v + 4 <= nv; v += 4) qr__k_m1f512_vecs(ACT, 4, xr, wv, wz, cur, t, v, n, y, vb, vlo, vhi);
    switch (nv - v) {
    case 3: qr__k_m1f512_vecs(ACT, 3, xr, wv, wz, cur, t, v, n, y, vb, vlo, vhi); break;
    case 2: qr__k_m1f512_vecs(ACT, 2, xr, wv, wz, cur, t, v, n, y, vb, vlo, vhi); break;
    case 1: qr__k_m1f512_vecs(ACT, 1, xr, wv, wz, cur, t, v, n, y, vb, vlo, vhi); break;
    default: break;
    }
}

/* The 3x3 window with stride 2 on planes at most 7 outputs wide (qr__k_m1d512_try): two
 * output rows per vector, lanes 0-7 row oh and 8-15 row oh + 1 (a 7x7 plane: 4 vectors,
 * where the row form computes 8 row slots of 7 of 16 lanes). Input row ih is one masked
 * load of the 16 elements from column -pw (those outside the row and rows outside x 0);
 * tap (kh, kw) of lane ow (+ 8) is element 2*ow + kw of input row 2*oh - ph + kh (+ 2),
 * one vpermt2ps of the two rows. Four output rows at a time from nine input rows; the
 * products and sums are qr__k_m1d512's. */
QR__K_AVX512 static inline __attribute__((always_inline)) void
qr__k_m1p512_3x3_s2(const int ACT, const QrF32ConvB *b, const float *w, float bias, float *y, const QrKM1dTab *t,
                    float lo, float hi) {
    QR_UNUSED(t);
    const int64_t OH = b->OH, OW = b->OW, H = b->H, W = b->W;
    const __m512 vb = _mm512_set1_ps(bias), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const __mmask16 cm = (__mmask16)qr__k_bits(b->pw, b->pw + W, 0, 16);
    const __mmask16 row = (__mmask16)((1u << OW) - 1), two = (__mmask16)(row | row << 8);
    const float *x0 = b->x - b->pw;
    __m512i idx[3];
#pragma GCC unroll 3
    for (int kw = 0; kw < 3; kw++)
        idx[kw] = _mm512_add_epi32(_mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
                                   _mm512_set1_epi32(kw));
    __m512 wv[9];
#pragma GCC unroll 9
    for (int k = 0; k < 9; k++) wv[k] = _mm512_set1_ps(w[k]);
    for (int64_t oh = 0; oh < OH; oh += 4) {
        __m512 r[9];   /* input rows 2*oh - ph .. + 8 */
#pragma GCC unroll 9
        for (int i = 0; i < 9; i++) {
            const int64_t ih = 2 * oh - b->ph + i;
            const bool in = ih >= 0 && ih < H;
            r[i] = _mm512_maskz_loadu_ps(in ? cm : 0, x0 + (in ? ih * W : 0));
        }
#pragma GCC unroll 2
        for (int s = 0; s < 2; s++) {
            const int64_t o = oh + 2 * s;
            __m512 p[9];
#pragma GCC unroll 3
            for (int kh = 0; kh < 3; kh++)
#pragma GCC unroll 3
                for (int kw = 0; kw < 3; kw++) {
                    p[kh * 3 + kw] = _mm512_mul_ps(wv[kh * 3 + kw], _mm512_permutex2var_ps(r[4 * s + kh], idx[kw], r[4 * s + kh + 2]));
                    QR_KERN_ROUNDED(p[kh * 3 + kw]);
                }
            __m512 acc = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(p[0], p[1]), p[2]), p[3]);
            if (!(ACT & 4)) acc = _mm512_add_ps(acc, _mm512_setzero_ps());
            acc = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(p[4], p[5]), p[6]), p[7]), acc);
            acc = _mm512_add_ps(p[8], acc);
            if (o < OH) {
                const __m512 out = qr__k_m1d_act16(ACT, _mm512_add_ps(acc, vb), vlo, vhi);
                const int64_t nr = OH - o >= 2 ? 2 : 1;
                _mm512_mask_storeu_ps(y + o * OW, (__mmask16)((1u << (nr * OW)) - 1), _mm512_maskz_compress_ps(two, out));
            }
        }
    }
}

/* The instantiations: [window][activation], windows 3x3 stride 1, 3x3 stride 2, 5x5
 * stride 1, 5x5 stride 2, 3x3 stride 1 with one column of left padding (the carried-row
 * form; bench_kern --dw: MobileNetV2's stride-1 layers 8-14% faster than the general one),
 * 3x3 stride 1 on a small plane (the flat form, qr__k_m1f512), 3x3 stride 2 at most 7
 * outputs wide (two rows per vector, qr__k_m1p512_3x3_s2); activations none, ReLU, Clip, Clip then ReLU; with (0-3) or without (4-7) the + 0 that
 * starts ORT's sums (qr__k_m1d512_try). */
typedef void (*QrKM1d512Fn)(const QrF32ConvB *b, int64_t n, int64_t xs, const float *w, int64_t ws,
                            const float *bias, float *y, int64_t ys, const QrKM1dTab *t, float lo, float hi);
/* An instantiation runs n planes of one geometry (QrF32ConvM1ActFn's strides), the body once
 * per plane with its own x, weights, bias and y. */
#define QR__K_M1D512(name, call)                                                                                 \
    QR__K_AVX512 static void qr__k_m1d512_##name(const QrF32ConvB *b0, int64_t n, int64_t xs, const float *w0,   \
                                                 int64_t ws, const float *bias0, float *y0, int64_t ys,          \
                                                 const QrKM1dTab *t, float lo, float hi) {                        \
        QrF32ConvB pb = *b0;                                                                                      \
        const QrF32ConvB *b = &pb;                                                                                \
        for (int64_t p = 0; p < n; p++) {                                                                         \
            pb.x = b0->x + p * xs;                                                                                \
            const float *w = w0 + p * ws, bias = bias0 ? bias0[p] : 0.0f;                                         \
            float *y = y0 + p * ys;                                                                               \
            call;                                                                                                 \
        }                                                                                                         \
    }
#define QR__K_M1D512_ACTS(name, kh, kw, sw)                                                                      \
    QR__K_M1D512(name##_a0, qr__k_m1d512(kh, kw, sw, 0, b, w, bias, y, t, lo, hi))                                \
    QR__K_M1D512(name##_a1, qr__k_m1d512(kh, kw, sw, 1, b, w, bias, y, t, lo, hi))                                \
    QR__K_M1D512(name##_a2, qr__k_m1d512(kh, kw, sw, 2, b, w, bias, y, t, lo, hi))                                \
    QR__K_M1D512(name##_a3, qr__k_m1d512(kh, kw, sw, 3, b, w, bias, y, t, lo, hi))                                \
    QR__K_M1D512(name##_a4, qr__k_m1d512(kh, kw, sw, 4, b, w, bias, y, t, lo, hi))                                \
    QR__K_M1D512(name##_a5, qr__k_m1d512(kh, kw, sw, 5, b, w, bias, y, t, lo, hi))                                \
    QR__K_M1D512(name##_a6, qr__k_m1d512(kh, kw, sw, 6, b, w, bias, y, t, lo, hi))                                \
    QR__K_M1D512(name##_a7, qr__k_m1d512(kh, kw, sw, 7, b, w, bias, y, t, lo, hi))
#define QR__K_M1D512_ACTS_FN(name, fn)                                                                           \
    QR__K_M1D512(name##_a0, fn(0, b, w, bias, y, t, lo, hi)) QR__K_M1D512(name##_a1, fn(1, b, w, bias, y, t, lo, hi)) \
    QR__K_M1D512(name##_a2, fn(2, b, w, bias, y, t, lo, hi)) QR__K_M1D512(name##_a3, fn(3, b, w, bias, y, t, lo, hi)) \
    QR__K_M1D512(name##_a4, fn(4, b, w, bias, y, t, lo, hi)) QR__K_M1D512(name##_a5, fn(5, b, w, bias, y, t, lo, hi)) \
    QR__K_M1D512(name##_a6, fn(6, b, w, bias, y, t, lo, hi)) QR__K_M1D512(name##_a7, fn(7, b, w, bias, y, t, lo, hi))
/* Generates qr__k_m1d512_{3x3_s1,3x3_s2,5x5_s1,5x5_s2,3x3_s1p,3x3_f,3x3_s2p}_a0 .. _a7 (listed in the table below). */
QR__K_M1D512_ACTS(3x3_s1, 3, 3, 1)
QR__K_M1D512_ACTS(5x5_s1, 5, 5, 1)
QR__K_M1D512_ACTS(5x5_s2, 5, 5, 2)
QR__K_M1D512_ACTS_FN(3x3_s2, qr__k_m1d512_3x3_s2x)
QR__K_M1D512_ACTS_FN(3x3_s1p, qr__k_m1d512_3x3_s1x)
QR__K_M1D512_ACTS_FN(3x3_f, qr__k_m1f512)
QR__K_M1D512_ACTS_FN(3x3_s2p, qr__k_m1p512_3x3_s2)
#undef QR__K_M1D512_ACTS_FN
#undef QR__K_M1D512_ACTS
#undef QR__K_M1D512
static const QrKM1d512Fn qr__k_m1d512_fns[7][8] = {
    { qr__k_m1d512_3x3_s1_a0, qr__k_m1d512_3x3_s1_a1, qr__k_m1d512_3x3_s1_a2, qr__k_m1d512_3x3_s1_a3,
      qr__k_m1d512_3x3_s1_a4, qr__k_m1d512_3x3_s1_a5, qr__k_m1d512_3x3_s1_a6, qr__k_m1d512_3x3_s1_a7 },
    { qr__k_m1d512_3x3_s2_a0, qr__k_m1d512_3x3_s2_a1, qr__k_m1d512_3x3_s2_a2, qr__k_m1d512_3x3_s2_a3,
      qr__k_m1d512_3x3_s2_a4, qr__k_m1d512_3x3_s2_a5, qr__k_m1d512_3x3_s2_a6, qr__k_m1d512_3x3_s2_a7 },
    { qr__k_m1d512_5x5_s1_a0, qr__k_m1d512_5x5_s1_a1, qr__k_m1d512_5x5_s1_a2, qr__k_m1d512_5x5_s1_a3,
      qr__k_m1d512_5x5_s1_a4, qr__k_m1d512_5x5_s1_a5, qr__k_m1d512_5x5_s1_a6, qr__k_m1d512_5x5_s1_a7 },
    { qr__k_m1d512_5x5_s2_a0, qr__k_m1d512_5x5_s2_a1, qr__k_m1d512_5x5_s2_a2, qr__k_m1d512_5x5_s2_a3,
      qr__k_m1d512_5x5_s2_a4, qr__k_m1d512_5x5_s2_a5, qr__k_m1d512_5x5_s2_a6, qr__k_m1d512_5x5_s2_a7 },
    { qr__k_m1d512_3x3_s1p_a0, qr__k_m1d512_3x3_s1p_a1, qr__k_m1d512_3x3_s1p_a2, qr__k_m1d512_3x3_s1p_a3,
      qr__k_m1d512_3x3_s1p_a4, qr__k_m1d512_3x3_s1p_a5, qr__k_m1d512_3x3_s1p_a6, qr__k_m1d512_3x3_s1p_a7 },
    { qr__k_m1d512_3x3_f_a0, qr__k_m1d512_3x3_f_a1, qr__k_m1d512_3x3_f_a2, qr__k_m1d512_3x3_f_a3,
      qr__k_m1d512_3x3_f_a4, qr__k_m1d512_3x3_f_a5, qr__k_m1d512_3x3_f_a6, qr__k_m1d512_3x3_f_a7 },
    { qr__k_m1d512_3x3_s2p_a0, qr__k_m1d512_3x3_s2p_a1, qr__k_m1d512_3x3_s2p_a2, qr__k_m1d512_3x3_s2p_a3,
      qr__k_m1d512_3x3_s2p_a4, qr__k_m1d512_3x3_s2p_a5, qr__k_m1d512_3x3_s2p_a6, qr__k_m1d512_3x3_s2p_a7 },
};

/* The direct form when it has an instantiation for b's window (3x3 and 5x5, one input
 * channel, the same stride 1 or 2 along both axes, no dilation), with the leading steps of
 * act[0..nact) it fuses (a Clip then a ReLU, a Clip, or a ReLU), over n planes
 * (QrF32ConvM1ActFn). Returns how many steps it applied, or -1 (nothing written) without
 * an instantiation. */
QR__K_AVX512 static int qr__k_m1d512_try(const QrF32ConvB *b, int64_t n, int64_t xs, const float *w, int64_t ws,
                                        const float *bias, float *y, int64_t ys, const QrF32Step *act, int nact) {
    if (b->C != 1 || !((b->KH == 3 && b->KW == 3) || (b->KH == 5 && b->KW == 5)) || b->sh != b->sw || b->dh != 1 ||
        b->dw != 1)
        return -1;
    const QrKM1dTab *t = qr__k_m1d_tables(b, 16);
    if (!t) return -1;
    int kind;
    const int used = qr__k_m1_act_kind(act, nact, &kind);
    const float lo = kind & 2 ? act[0].lo : -INFINITY, hi = kind & 2 ? act[0].hi : INFINITY;
    /* the small-plane forms where they pay (time per channel against the row forms, stride
     * 1: 7x7 -31%, 12 columns -12%, 14 even, 16 +20%; stride 2, 14x14 -> 7x7: -54%;
     * bench/RESULTS_CNN.md) */
    const int flat = t->nflat > 0 && b->OW <= 12, pair = b->KH == 3 && b->sw == 2 && b->OW <= 7;
    const int win = flat ? 5 : pair ? 6 : b->KH == 3 && b->sw == 1 && b->pw == 1 ? 4 : (b->KH == 5) * 2 + (b->sw == 2);
    /* the + 0 that starts ORT's sums only turns a -0 into +0, which shows in the output only
     * when every later partial sum is -0 too and the bias is -0: the forms without it (kind
     * + 4) serve every other bias, runs of planes by that */
    for (int64_t p = 0; p < n;) {
        const bool neg0 = bias && qr__k_is_neg0(bias[p]);
        int64_t e = p + 1;
        while (e < n && (bias && qr__k_is_neg0(bias[e])) == neg0) e++;
        QrF32ConvB rb = *b;
        rb.x = b->x + p * xs;
        qr__k_m1d512_fns[win][kind + (neg0 ? 0 : 4)](&rb, e - p, xs, w + p * ws, ws, bias ? bias + p : NULL, y + p * ys, ys,
                                                     t, lo, hi);
        p = e;
    }
    return used;
}

/* QrF32ConvM1Fn on AVX-512F (kern/gemm.c's band driver). */
QR__K_AVX512 static void qr_f32_conv_m1__avx512(const QrF32ConvB *b, const float *w, float bias, float *y) {
    if (b->OH > 0 && b->OW > 0 && qr__k_m1d512_try(b, 1, 0, w, 0, &bias, y, 0, NULL, 0) >= 0) return;
    qr__k_f32_conv_m1(qr__k_f32_m1_cols__avx512, b, w, bias, y);
}

/* QrF32ConvM1ActFn on AVX-512F: the direct form only. */
QR__K_AVX512 static int qr_f32_conv_m1_act__avx512(const QrF32ConvB *b, int64_t n, int64_t xs, const float *w,
                                                  int64_t ws, const float *bias, float *y, int64_t ys,
                                                  const QrF32Step *act, int nact) {
    return b->OH > 0 && b->OW > 0 ? qr__k_m1d512_try(b, n, xs, w, ws, bias, y, ys, act, nact) : -1;
}

#endif
