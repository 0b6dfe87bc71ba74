/* kern/avx2/f32_conv — AVX2+FMA depthwise 2-D convolution and 2-D max pooling of one
 * plane (NCHW), vectorized along the output row. */
#if defined(__x86_64__)

/* Output columns [lo, hi) of a row where every one of the KW taps is inside x:
 * 0 <= ow*sw + kw*dw - pw < W for all kw. */
static void qr__k_dw_interior(int64_t W, int64_t KW, int64_t sw, int64_t dw, int64_t pw, int64_t OW, int64_t *lo,
                              int64_t *hi) {
    *lo = 0;
    *hi = OW;
    for (int64_t kw = 0; kw < KW; kw++) {
        int64_t t = kw * dw - pw;
        int64_t l = t >= 0 ? 0 : (-t + sw - 1) / sw;
        int64_t h = W - 1 - t < 0 ? 0 : (W - 1 - t) / sw + 1;
        *lo = QR_MAX(*lo, l);
        *hi = QR_MIN(*hi, h);
    }
    if (*hi < *lo) *hi = *lo;
}

/* Eight consecutive outputs' taps x[(ow+i)*2 + t], i < 8: 15 floats loaded, evens kept. */
QR__K_AVX2 static inline __m256 qr__k_load_even(const float *p) {
    __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));   /* a0 a2 b0 b2 | a4 a6 b4 b6 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* Small planes (few output columns: borders would dominate a per-row loop) with equal
 * strides 1 or 2: the plane is copied into zero-padded scratch xp of width Wp, and the
 * output is computed as one flat row of OH*Wp "virtual" columns,
 *   y'[i] = sum_t w[t] * xp[s*i + off_t],  off_t = kh*dh*Wp + kw*dw,
 * since i = oh*Wp + ow maps to xp row s*oh, column s*ow; columns ow >= OW of each virtual
 * row are computed and dropped. Returns false if the scratch cannot be had. */
QR__K_AVX2 static bool qr__k_dw_flat(const float *x, int64_t H, int64_t W, const float *w, int64_t KH, int64_t KW,
                                     int64_t s, int64_t dh, int64_t dw, int64_t ph, int64_t pw, float *y, int64_t OH,
                                     int64_t OW) {
    const int64_t Hp = (OH - 1) * s + (KH - 1) * dh + 1, Wp = (OW - 1) * s + (KW - 1) * dw + 1;
    const int64_t nv = (OH - 1) * Wp + OW;   /* virtual outputs */
    const int64_t nx = qr__k_rup(Hp * Wp + 64, 16), ny = qr__k_rup(nv + 8, 16);
    float *xp = qr__k_scratch((size_t)(nx + ny) * sizeof(float));
    if (!xp) return false;
    float *yv = xp + nx;
    memset(xp, 0, (size_t)nx * sizeof(float));
    for (int64_t r = 0; r < Hp; r++) {
        int64_t ih = r - ph;
        if (ih < 0 || ih >= H) continue;
        int64_t c0 = QR_MAX(0, pw), c1 = QR_MIN(Wp, W + pw);   /* xp columns [c0, c1) hold x columns [c0 - pw, c1 - pw) */
        if (c1 > c0) memcpy(xp + r * Wp + c0, x + ih * W + (c0 - pw), (size_t)(c1 - c0) * sizeof(float));
    }
    int64_t off[64];
    const int64_t taps = KH * KW;
    for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++) off[kh * KW + kw] = kh * dh * Wp + kw * dw;
    int64_t i = 0;
    for (; i + 32 <= nv; i += 32) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t t = 0; t < taps; t++) {
            __m256 wv = _mm256_broadcast_ss(w + t);
            const float *p = xp + s * i + off[t];
            if (s == 1) {
                a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p), a0);
                a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + 8), a1);
                a2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + 16), a2);
                a3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + 24), a3);
            } else {
                a0 = _mm256_fmadd_ps(wv, qr__k_load_even(p), a0);
                a1 = _mm256_fmadd_ps(wv, qr__k_load_even(p + 16), a1);
                a2 = _mm256_fmadd_ps(wv, qr__k_load_even(p + 32), a2);
                a3 = _mm256_fmadd_ps(wv, qr__k_load_even(p + 48), a3);
            }
        }
        _mm256_storeu_ps(yv + i, a0);
        _mm256_storeu_ps(yv + i + 8, a1);
        _mm256_storeu_ps(yv + i + 16, a2);
        _mm256_storeu_ps(yv + i + 24, a3);
    }
    for (; i < nv; i += 8) {   /* reads stay inside xp's 64 floats of zero padding */
        __m256 a0 = _mm256_setzero_ps();
        for (int64_t t = 0; t < taps; t++) {
            const float *p = xp + s * i + off[t];
            a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(w + t), s == 1 ? _mm256_loadu_ps(p) : qr__k_load_even(p), a0);
        }
        _mm256_storeu_ps(yv + i, a0);
    }
    for (int64_t oh = 0; oh < OH; oh++) {
        float *yr = y + oh * OW;
        const float *vr = yv + oh * Wp;
        int64_t ow = 0;
        for (; ow + 8 <= OW; ow += 8) _mm256_storeu_ps(yr + ow, _mm256_add_ps(_mm256_loadu_ps(yr + ow), _mm256_loadu_ps(vr + ow)));
        for (; ow < OW; ow++) yr[ow] += vr[ow];
    }
    return true;
}

/* QrF32DwConv2dFn on AVX2+FMA. Per output row: columns whose taps are all in range run
 * 32 / 8 at a time (stride 1 contiguous, stride 2 deinterleaved; four independent
 * accumulators hide the FMA latency), the rest (borders, other strides) per element. */
QR__K_AVX2 static void qr_f32_dwconv2d__avx2(const float *x, int64_t H, int64_t W, const float *w, int64_t KH,
                                             int64_t KW, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
                                             int64_t pw, float *y, int64_t OH, int64_t OW) {
    if (OW < 32 && sh == sw && (sw == 1 || sw == 2) && KH * KW <= 64 &&
        qr__k_dw_flat(x, H, W, w, KH, KW, sw, dh, dw, ph, pw, y, OH, OW))
        return;
    int64_t lo, hi;
    qr__k_dw_interior(W, KW, sw, dw, pw, OW, &lo, &hi);
    int64_t vhi = lo;   /* vector columns [lo, vhi) */
    if (sw == 1) vhi = hi;
    else if (sw == 2) vhi = QR_MAX(lo, hi - 1);   /* the last interior column is scalar: no read past x's row */
    for (int64_t oh = 0; oh < OH; oh++) {
        float *yr = y + oh * OW;
        int64_t kh0 = 0, kh1 = KH;   /* rows in range: kh in [kh0, kh1) */
        {
            int64_t t = oh * sh - ph;
            kh0 = t >= 0 ? 0 : (-t + dh - 1) / dh;
            kh1 = H - 1 - t < 0 ? 0 : QR_MIN(KH, (H - 1 - t) / dh + 1);
        }
        if (kh0 >= kh1) continue;
        const int64_t ih0 = oh * sh - ph;   /* input row of kh = 0 (maybe outside x) */
        int64_t ow = lo;
        if (sw == 1 || sw == 2) {
            for (; ow + 32 <= vhi; ow += 32) {
                float *yp = yr + ow;
                __m256 a0 = _mm256_loadu_ps(yp), a1 = _mm256_loadu_ps(yp + 8), a2 = _mm256_loadu_ps(yp + 16),
                       a3 = _mm256_loadu_ps(yp + 24);
                for (int64_t kh = kh0; kh < kh1; kh++) {
                    const float *xr = x + (ih0 + kh * dh) * W + ow * sw - pw;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        __m256 wv = _mm256_broadcast_ss(w + kh * KW + kw);
                        const float *p = xr + kw * dw;
                        if (sw == 1) {
                            a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p), a0);
                            a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + 8), a1);
                            a2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + 16), a2);
                            a3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + 24), a3);
                        } else {
                            a0 = _mm256_fmadd_ps(wv, qr__k_load_even(p), a0);
                            a1 = _mm256_fmadd_ps(wv, qr__k_load_even(p + 16), a1);
                            a2 = _mm256_fmadd_ps(wv, qr__k_load_even(p + 32), a2);
                            a3 = _mm256_fmadd_ps(wv, qr__k_load_even(p + 48), a3);
                        }
                    }
                }
                _mm256_storeu_ps(yp, a0);
                _mm256_storeu_ps(yp + 8, a1);
                _mm256_storeu_ps(yp + 16, a2);
                _mm256_storeu_ps(yp + 24, a3);
            }
            for (; ow + 8 <= vhi; ow += 8) {
                __m256 a0 = _mm256_loadu_ps(yr + ow);
                for (int64_t kh = kh0; kh < kh1; kh++) {
                    const float *xr = x + (ih0 + kh * dh) * W + ow * sw - pw;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        __m256 wv = _mm256_broadcast_ss(w + kh * KW + kw);
                        __m256 xv = sw == 1 ? _mm256_loadu_ps(xr + kw * dw) : qr__k_load_even(xr + kw * dw);
                        a0 = _mm256_fmadd_ps(wv, xv, a0);
                    }
                }
                _mm256_storeu_ps(yr + ow, a0);
            }
            if (sw == 1 && ow < vhi) {   /* 1..7 columns left: masked loads read only in-range taps */
                const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
                __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(vhi - ow)), idx);
                __m256 a0 = _mm256_maskload_ps(yr + ow, mask);
                for (int64_t kh = kh0; kh < kh1; kh++) {
                    const float *xr = x + (ih0 + kh * dh) * W + ow - pw;
                    for (int64_t kw = 0; kw < KW; kw++)
                        a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(w + kh * KW + kw), _mm256_maskload_ps(xr + kw * dw, mask), a0);
                }
                _mm256_maskstore_ps(yr + ow, mask, a0);
                ow = vhi;
            }
        }
        /* every other column: per element, taps checked against the row */
        for (int64_t o = 0; o < OW; o++) {
            if (o == lo) o = ow;   /* [lo, ow) is done */
            if (o >= OW) break;
            float acc = yr[o];
            for (int64_t kh = kh0; kh < kh1; kh++) {
                const float *xr = x + (ih0 + kh * dh) * W;
                for (int64_t kw = 0; kw < KW; kw++) {
                    int64_t iw = o * sw + kw * dw - pw;
                    if (iw >= 0 && iw < W) acc = fmaf(w[kh * KW + kw], xr[iw], acc);
                }
            }
            yr[o] = acc;
        }
    }
}

/* QrF32DwConv2dBiasFn on AVX2: fill, then the kernel above. */
QR__K_AVX2 static void qr_f32_dwconv2d_bias__avx2(const float *x, int64_t H, int64_t W, const float *w, int64_t KH,
                                                  int64_t KW, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
                                                  int64_t pw, float bias, float *y, int64_t OH, int64_t OW) {
    const __m256 b = _mm256_set1_ps(bias);
    int64_t i = 0, n = OH * OW;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, b);
    for (; i < n; i++) y[i] = bias;
    qr_f32_dwconv2d__avx2(x, H, W, w, KH, KW, sh, sw, dh, dw, ph, pw, y, OH, OW);
}

/* QrF32MaxPool2dFn on AVX2: the column maxima (the bulk of the work) 8 at a time with
 * vmaxps(v, best), which picks like v > best ? v : best, NaN included; the row pass is
 * the ref one. Bit-exact with qr_f32_maxpool2d__ref. */
QR__K_AVX2 static void qr_f32_maxpool2d__avx2(const float *x, int64_t H, int64_t W, int64_t KH, int64_t KW,
                                              int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                                              float *y, int64_t OH, int64_t OW, float *rowbuf) {
    for (int64_t oh = 0; oh < OH; oh++) {
        bool any = false;
        for (int64_t kh = 0; kh < KH; kh++) {
            int64_t ih = oh * sh - ph + kh * dh;
            if (ih < 0 || ih >= H) continue;
            const float *xr = x + ih * W;
            if (!any) {
                memcpy(rowbuf, xr, (size_t)W * sizeof(float));
                any = true;
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
