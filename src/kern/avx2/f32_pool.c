/* kern/avx2/f32_pool — AVX2 2-D max pooling of one plane (NCHW), vectorized along the
 * output row. */
#if defined(__x86_64__)

/* QrF32MaxPool2dFn on AVX2: the column maxima (the bulk of the work) 8 at a time with
 * vmaxps(v, best), which picks like v > best ? v : best, NaN included; the row pass is
 * the ref one. Bit-exact with qr_f32_maxpool2d__ref. */
QR__K_AVX2 static void qr_f32_maxpool2d__avx2(const float *x, int64_t H, int64_t W, int64_t KH, int64_t KW,
                                              int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                                              float *y, int64_t OH, int64_t OW, float *rowbuf) {
    for (int64_t oh = 0; oh < OH; oh++) {
        int64_t lo, hi;   /* the window's rows inside x only */
        qr_kern_win_taps(oh * sh - ph, KH, dh, H, &lo, &hi);
        const bool any = lo < hi;
        for (int64_t kh = lo; kh < hi; kh++) {
            const float *xr = x + (oh * sh - ph + kh * dh) * W;
            if (kh == lo) {
                memcpy(rowbuf, xr, (size_t)W * sizeof(float));
                continue;
            }
            int64_t iw = 0;
            for (; iw + 8 <= W; iw += 8)
                _mm256_storeu_ps(rowbuf + iw, _mm256_max_ps(_mm256_loadu_ps(xr + iw), _mm256_loadu_ps(rowbuf + iw)));
            for (; iw < W; iw++) rowbuf[iw] = xr[iw] > rowbuf[iw] ? xr[iw] : rowbuf[iw];
        }
        if (!any) {
            memset(y + oh * OW, 0, (size_t)OW * sizeof(float));
            continue;
        }
        qr__k_maxpool_cols(rowbuf, W, KW, sw, dw, pw, y + oh * OW, OW);
    }
}

#endif
