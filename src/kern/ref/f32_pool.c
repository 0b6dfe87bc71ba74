/* kern/ref/f32_pool — plain C 2-D max pooling of one plane, the oracle for the SIMD
 * variant (bit-exact: max is exact, and both pick among ties and NaN the same way). */

/* rowbuf[iw] = max over the in-range rows of the window of output row oh, top to bottom
 * (v > best replaces). Returns false when no row of the window is in range. Only the rows
 * inside x are visited (qr_kern_win_taps), whatever KH and dh declare. */
static bool qr__k_maxpool_rows_ref(const float *x, int64_t H, int64_t W, int64_t KH, int64_t sh, int64_t dh,
                                   int64_t ph, int64_t oh, float *rowbuf) {
    int64_t lo, hi;
    qr_kern_win_taps(oh * sh - ph, KH, dh, H, &lo, &hi);
    for (int64_t kh = lo; kh < hi; kh++) {
        const float *xr = x + (oh * sh - ph + kh * dh) * W;
        if (kh == lo) memcpy(rowbuf, xr, (size_t)W * sizeof(float));
        else
            for (int64_t iw = 0; iw < W; iw++) rowbuf[iw] = xr[iw] > rowbuf[iw] ? xr[iw] : rowbuf[iw];
    }
    return lo < hi;
}

/* y row = window maxima of the column maxima in rowbuf, left to right. */
static void qr__k_maxpool_cols(const float *rowbuf, int64_t W, int64_t KW, int64_t sw, int64_t dw, int64_t pw,
                               float *yr, int64_t OW) {
    for (int64_t ow = 0; ow < OW; ow++) {
        int64_t t = ow * sw - pw, lo, hi;
        qr_kern_win_taps(t, KW, dw, W, &lo, &hi);
        if (lo >= hi) { yr[ow] = 0.0f; continue; }
        float best = rowbuf[t + lo * dw];
        for (int64_t kw = lo + 1; kw < hi; kw++) {
            float v = rowbuf[t + kw * dw];
            best = v > best ? v : best;
        }
        yr[ow] = best;
    }
}

/* QrF32MaxPool2dFn, plain C. */
static void qr_f32_maxpool2d__ref(const float *x, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh,
                                  int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, float *y, int64_t OH,
                                  int64_t OW, float *rowbuf) {
    for (int64_t oh = 0; oh < OH; oh++) {
        if (!qr__k_maxpool_rows_ref(x, H, W, KH, sh, dh, ph, oh, rowbuf)) {
            memset(y + oh * OW, 0, (size_t)OW * sizeof(float));
            continue;
        }
        qr__k_maxpool_cols(rowbuf, W, KW, sw, dw, pw, y + oh * OW, OW);
    }
}
