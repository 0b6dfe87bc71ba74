/* kern/ref/f32_conv_m1 — plain C M = 1 convolution (one filter: depthwise channels), the
 * oracle for the SIMD variants (ORT's order, see QrF32ConvM1Fn). */

/* The k-th product of output (oh, ow) of a QrF32ConvM1Fn: w[k] times the tap's input, 0
 * for a tap in the padding. */
static inline float qr__k_m1_tap(const QrF32ConvB *b, const float *w, int64_t k, int64_t oh, int64_t ow) {
    const int64_t kw = k % b->KW, kh = (k / b->KW) % b->KH, c = k / (b->KW * b->KH);
    const int64_t ih = oh * b->sh - b->ph + kh * b->dh, iw = ow * b->sw - b->pw + kw * b->dw;
    const float xv = ih >= 0 && ih < b->H && iw >= 0 && iw < b->W ? b->x[(c * b->H + ih) * b->W + iw] : 0.0f;
    float p = w[k] * xv;
    QR_KERN_ROUNDED(p);
    return p;
}

/* QrF32ConvM1Fn, plain C, output by output: the definition, read straight from x. */
static void qr_f32_conv_m1__ref(const QrF32ConvB *b, const float *w, float bias, float *y) {
    const int64_t K = b->C * b->KH * b->KW;
    for (int64_t oh = 0; oh < b->OH; oh++)
        for (int64_t ow = 0; ow < b->OW; ow++) {
            float s = 0.0f;
            int64_t k = 0;
            for (; k + 4 <= K; k += 4) {
                float t = qr__k_m1_tap(b, w, k, oh, ow) + qr__k_m1_tap(b, w, k + 1, oh, ow);
                t = t + qr__k_m1_tap(b, w, k + 2, oh, ow);
                t = t + qr__k_m1_tap(b, w, k + 3, oh, ow);
                s = t + s;
            }
            if (k + 2 <= K) {
                float t = qr__k_m1_tap(b, w, k, oh, ow) + qr__k_m1_tap(b, w, k + 1, oh, ow);
                s = t + s;
                k += 2;
            }
            if (k < K) s = qr__k_m1_tap(b, w, k, oh, ow) + s;
            y[oh * b->OW + ow] = s + bias;
        }
}

