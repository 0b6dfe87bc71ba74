/* kern/avx512/f32_pool — AVX-512F 2-D max pooling of one plane (NCHW), vectorized along
 * the output row, read straight from the input rows. */
#if defined(__x86_64__)

/* Output ow of row window rows [lo, hi) (input rows oh*sh - ph + kh*dh), in the ref's order:
 * each column's maximum top to bottom, then the columns left to right, v > best replacing. */
static inline float qr__k_maxpool_one(const float *x, int64_t W, int64_t r0, int64_t lo, int64_t hi, int64_t dh,
                                      int64_t KW, int64_t sw, int64_t dw, int64_t pw, int64_t ow) {
    const int64_t t = ow * sw - pw;
    int64_t wl, wh;
    qr_kern_win_taps(t, KW, dw, W, &wl, &wh);
    if (wl >= wh) return 0.0f;
    float best = 0.0f;
    for (int64_t kw = wl; kw < wh; kw++) {
        const int64_t c = t + kw * dw;
        float m = x[(r0 + lo * dh) * W + c];
        for (int64_t kh = lo + 1; kh < hi; kh++) {
            const float v = x[(r0 + kh * dh) * W + c];
            m = v > m ? v : m;
        }
        best = kw == wl || m > best ? m : best;
    }
    return best;
}

/* QrF32MaxPool2dFn on AVX-512F. The outputs whose window lies inside the row (stride 1 or 2
 * along it, any dilation) 16 at a time: per tap column kw the column maxima of the window's
 * rows, loaded from x (stride 2 takes the even elements of two masked loads), then across
 * kw, all with vmaxps(v, best), which picks like v > best ? v : best, NaN and signed zeros
 * included; the other outputs one at a time in the same order. Nothing goes through rowbuf
 * (not read): writing the column maxima there and reading them back at other offsets cost
 * a store-forwarding stall per load (ResNet-18's 3x3/2 MaxPool: 0.64 ms at two threads,
 * against ONNX Runtime's 0.08). A 3x3 window with stride 2 takes the column maxima of the
 * span of its 16 outputs once and its three taps from them (9 loads instead of 18; with one
 * column of padding output 0 joins the first vector): ResNet-18's MaxPool, 64 planes on one
 * thread, 188 -> 117 us (Zen 4). Bit-exact with qr_f32_maxpool2d__ref; x is read only at
 * taps and between them. */
QR__K_AVX512 static void qr_f32_maxpool2d__avx512(const float *x, int64_t H, int64_t W, int64_t KH, int64_t KW,
                                                  int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                                                  float *y, int64_t OH, int64_t OW, float *rowbuf) {
    QR_UNUSED(rowbuf);
    /* outputs [a, b) have every tap inside the row */
    int64_t a = QR_MIN(OW, (pw + sw - 1) / sw), b = W - 1 - (KW - 1) * dw + pw >= 0 ? (W - 1 - (KW - 1) * dw + pw) / sw + 1 : 0;
    b = QR_MAX(a, QR_MIN(OW, b));
    if (sw != 1 && sw != 2) b = a;
    /* 3x3/2 with one column of padding (ResNet's MaxPool): output 0, whose first tap is the
     * padding, joins the first vector as its lane 0 (its kw = 0 element masked off and its
     * maximum taken from kw = 1 on, as the ref does) */
    const bool s2x3 = sw == 2 && KW == 3 && dw == 1, edge0 = s2x3 && pw == 1 && a == 1 && b > a;
    const int64_t a0 = edge0 ? 0 : a;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    for (int64_t oh = 0; oh < OH; oh++) {
        int64_t lo, hi;   /* the window's rows inside x only */
        const int64_t r0 = oh * sh - ph;
        qr_kern_win_taps(r0, KH, dh, H, &lo, &hi);
        float *yr = y + oh * OW;
        if (lo >= hi) {
            memset(yr, 0, (size_t)OW * sizeof(float));
            continue;
        }
        for (int64_t ow = 0; ow < a0; ow++) yr[ow] = qr__k_maxpool_one(x, W, r0, lo, hi, dh, KW, sw, dw, pw, ow);
        const float *xr0 = x + (r0 + lo * dh) * W;
        const int64_t rs = dh * W;
        for (int64_t ow = a0; ow < b; ow += 16) {
            const int64_t n = QR_MIN(16, b - ow), t = ow * sw - pw;
            const __mmask16 om = (__mmask16)((1u << n) - 1);
            __m512 best = _mm512_setzero_ps();
            if (sw == 1) {
                for (int64_t kw = 0; kw < KW; kw++) {
                    const float *r = xr0 + t + kw * dw;
                    __m512 m = _mm512_maskz_loadu_ps(om, r);
                    for (int64_t kh = lo + 1; kh < hi; kh++) m = _mm512_max_ps(_mm512_maskz_loadu_ps(om, r + (kh - lo) * rs), m);
                    best = kw == 0 ? m : _mm512_max_ps(m, best);
                }
            } else if (s2x3) {
                /* elements 0 .. 2n of the row from the window's first column, each column's
                 * maximum over the rows once, then the three taps taken from them: the even
                 * elements, the odd ones, the even ones one on (ResNet's 3x3/2: half the loads) */
                const int64_t e = 2 * n + 1;
                const bool pad0 = ow == 0 && edge0;   /* element 0 is the padding */
                const __mmask16 m0 = (__mmask16)((e >= 16 ? 0xffffu : (1u << e) - 1) & (pad0 ? ~1u : ~0u));
                const __mmask16 m1 = e >= 32 ? (__mmask16)0xffff : e > 16 ? (__mmask16)((1u << (e - 16)) - 1) : 0;
                const __mmask16 m2 = e > 32 ? (__mmask16)1 : 0;
                const float *r = xr0 + t;
                __m512 u = _mm512_maskz_loadu_ps(m0, r), v = _mm512_maskz_loadu_ps(m1, r + 16);
                __m512 z = _mm512_maskz_loadu_ps(m2, r + 32);
                for (int64_t kh = lo + 1; kh < hi; kh++) {
                    const float *q = r + (kh - lo) * rs;
                    u = _mm512_max_ps(_mm512_maskz_loadu_ps(m0, q), u);
                    v = _mm512_max_ps(_mm512_maskz_loadu_ps(m1, q + 16), v);
                    z = _mm512_max_ps(_mm512_maskz_loadu_ps(m2, q + 32), z);
                }
                const __m512 c0 = _mm512_permutex2var_ps(u, even, v), c1 = _mm512_permutex2var_ps(u, odd, v);
                const __m512 c2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(z), _mm512_castps_si512(c0), 1));
                best = _mm512_max_ps(c1, c0);
                if (pad0) best = _mm512_mask_mov_ps(best, 1, c1);
                best = _mm512_max_ps(c2, best);
            } else {   /* elements 0 .. 2n-2 of the row from the tap's first column */
                const int64_t e = 2 * n - 1;
                const __mmask16 m0 = e >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << e) - 1);
                const __mmask16 m1 = e > 16 ? (__mmask16)((1u << (e - 16)) - 1) : 0;
                for (int64_t kw = 0; kw < KW; kw++) {
                    const float *r = xr0 + t + kw * dw;
                    __m512 u = _mm512_maskz_loadu_ps(m0, r), v = _mm512_maskz_loadu_ps(m1, r + 16);
                    for (int64_t kh = lo + 1; kh < hi; kh++) {
                        const float *q = r + (kh - lo) * rs;
                        u = _mm512_max_ps(_mm512_maskz_loadu_ps(m0, q), u);
                        v = _mm512_max_ps(_mm512_maskz_loadu_ps(m1, q + 16), v);
                    }
                    const __m512 m = _mm512_permutex2var_ps(u, even, v);
                    best = kw == 0 ? m : _mm512_max_ps(m, best);
                }
            }
            _mm512_mask_storeu_ps(yr + ow, om, best);
        }
        for (int64_t ow = b; ow < OW; ow++) yr[ow] = qr__k_maxpool_one(x, W, r0, lo, hi, dh, KW, sw, dw, pw, ow);
    }
}

#endif
