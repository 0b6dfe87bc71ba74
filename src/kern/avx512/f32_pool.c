/* kern/avx512/f32_pool — AVX-512F 2-D max pooling of one plane (NCHW), vectorized along
 * the output row. */
#if defined(__x86_64__)

/* QrF32MaxPool2dFn on AVX-512F: the column maxima 16 at a time, and the window maxima of the
 * outputs whose window lies inside the row (dilation 1, stride 1 or 2) 16 at a time too —
 * stride 2 takes the even elements of two masked loads per tap — with vmaxps(v, best),
 * which picks like v > best ? v : best, NaN included; the edges by the ref's column pass.
 * Bit-exact with qr_f32_maxpool2d__ref; reads rowbuf only below W. */
QR__K_AVX512 static void qr_f32_maxpool2d__avx512(const float *x, int64_t H, int64_t W, int64_t KH, int64_t KW,
                                                  int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                                                  float *y, int64_t OH, int64_t OW, float *rowbuf) {
    /* outputs [a, b) have every tap inside the row */
    int64_t a = QR_MIN(OW, (pw + sw - 1) / sw), b = W - 1 - (KW - 1) * dw + pw >= 0 ? (W - 1 - (KW - 1) * dw + pw) / sw + 1 : 0;
    b = QR_MAX(a, QR_MIN(OW, b));
    const bool vec = dw == 1 && (sw == 1 || sw == 2) && b > a;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (int64_t oh = 0; oh < OH; oh++) {
        int64_t lo, hi;   /* the window's rows inside x only */
        qr_kern_win_taps(oh * sh - ph, KH, dh, H, &lo, &hi);
        float *yr = y + oh * OW;
        if (lo >= hi) {
            memset(yr, 0, (size_t)OW * sizeof(float));
            continue;
        }
        for (int64_t kh = lo; kh < hi; kh++) {
            const float *xr = x + (oh * sh - ph + kh * dh) * W;
            for (int64_t iw = 0; iw < W; iw += 16) {
                const __mmask16 m = W - iw >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (W - iw)) - 1);
                const __m512 v = _mm512_maskz_loadu_ps(m, xr + iw);
                _mm512_mask_storeu_ps(rowbuf + iw, m, kh == lo ? v : _mm512_max_ps(v, _mm512_maskz_loadu_ps(m, rowbuf + iw)));
            }
        }
        if (!vec) {
            qr__k_maxpool_cols(rowbuf, W, KW, sw, dw, pw, yr, OW);
            continue;
        }
        qr__k_maxpool_cols(rowbuf, W, KW, sw, dw, pw, yr, a);
        for (int64_t ow = a; ow < b; ow += 16) {
            const int64_t n = QR_MIN(16, b - ow), t = ow * sw - pw;
            const __mmask16 om = (__mmask16)((1u << n) - 1);
            __m512 best = _mm512_setzero_ps();
            for (int64_t kw = 0; kw < KW; kw++) {
                const float *r = rowbuf + t + kw;
                __m512 v;
                if (sw == 1) {
                    v = _mm512_maskz_loadu_ps(om, r);
                } else {   /* elements 0 .. 2n-2 */
                    const int64_t e = 2 * n - 1;
                    const __mmask16 m0 = e >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << e) - 1);
                    const __mmask16 m1 = e > 16 ? (__mmask16)((1u << (e - 16)) - 1) : 0;
                    v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m0, r), even, _mm512_maskz_loadu_ps(m1, r + 16));
                }
                best = kw == 0 ? v : _mm512_max_ps(v, best);
            }
            _mm512_mask_storeu_ps(yr + ow, om, best);
        }
        if (b < OW) qr__k_maxpool_cols(rowbuf, W, KW, sw, dw, pw - b * sw, yr + b, OW - b);
    }
}

#endif
