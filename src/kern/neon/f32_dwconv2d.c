/* kern/neon/f32_dwconv2d — depthwise 2-D convolution of one channel plane with AArch64
 * Advanced SIMD. Same contract as qr_f32_dwconv2d__ref (QrF32DwConv2dFn); compiled only for
 * aarch64. Vectorized over output columns with the loop order of ref and separate multiply
 * and add (build with -ffp-contract=off), so results are bit-identical to ref. */
#if defined(__aarch64__)
#include <arm_neon.h>

/* y (OH,OW) += sum_{kh<KH, kw<KW} w[kh*KW + kw] * x (H,W) at (oh*sh - ph + kh*dh, ow*sw - pw + kw*dw);
 * taps outside x read as zero. Strides 1 and 2 along W are vectorized (4 outputs per step,
 * stride 2 through a de-interleaving load); x is never read outside [0,H) x [0,W). */
static void qr_f32_dwconv2d__neon(const float *x, int64_t H, int64_t W, const float *w, int64_t KH, int64_t KW,
                                  int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, float *y,
                                  int64_t OH, int64_t OW) {
    for (int64_t kw = 0; kw < KW; kw++) {
        /* ow range with 0 <= ow*sw - pw + kw*dw < W (as in ref) */
        int64_t t = kw * dw - pw;
        int64_t lo = t >= 0 ? 0 : (-t + sw - 1) / sw;
        int64_t hi = W - 1 - t < 0 ? 0 : (W - 1 - t) / sw + 1;
        if (hi > OW) hi = OW;
        if (lo >= hi) continue;
        /* stride 2: the vld2 of outputs ow..ow+3 reads x columns 2ow+t .. 2ow+t+7 */
        int64_t hi2 = hi;
        if (sw == 2) while (hi2 > lo && 2 * (hi2 - 1) + t + 1 > W - 1) hi2--;
        for (int64_t oh = 0; oh < OH; oh++) {
            float *yr = y + oh * OW;
            for (int64_t kh = 0; kh < KH; kh++) {
                int64_t ih = oh * sh - ph + kh * dh;
                if (ih < 0 || ih >= H) continue;
                const float wv = w[kh * KW + kw];
                const float32x4_t wq = vdupq_n_f32(wv);
                const float *xr = x + ih * W;
                int64_t ow = lo;
                if (sw == 1) {
                    for (; ow + 4 <= hi; ow += 4)
                        vst1q_f32(yr + ow, vaddq_f32(vld1q_f32(yr + ow), vmulq_f32(wq, vld1q_f32(xr + ow + t))));
                } else if (sw == 2) {
                    for (; ow + 4 <= hi2; ow += 4) {
                        const float32x4x2_t xv = vld2q_f32(xr + 2 * ow + t);
                        vst1q_f32(yr + ow, vaddq_f32(vld1q_f32(yr + ow), vmulq_f32(wq, xv.val[0])));
                    }
                }
                for (; ow < hi; ow++) yr[ow] += wv * xr[ow * sw + t];
            }
        }
    }
}
/* QrF32DwConv2dBiasFn with NEON: fill, then the kernel above. */
static void qr_f32_dwconv2d_bias__neon(const float *x, int64_t H, int64_t W, const float *w, int64_t KH, int64_t KW,
                                       int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, float bias,
                                       float *y, int64_t OH, int64_t OW) {
    for (int64_t i = 0; i < OH * OW; i++) y[i] = bias;
    qr_f32_dwconv2d__neon(x, H, W, w, KH, KW, sh, sw, dh, dw, ph, pw, y, OH, OW);
}
#endif
