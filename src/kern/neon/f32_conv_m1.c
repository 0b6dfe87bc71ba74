/* kern/neon/f32_conv_m1 — AArch64 Advanced SIMD column kernel of the M = 1 convolutions
 * (depthwise channels; ORT's order, see QrF32ConvM1Fn): 4 output columns per vector, 16 at
 * a time in four independent sums; separate multiply and add (no FMA), so results are
 * bit-identical to ref. Compiled only for aarch64. */
#if defined(__aarch64__)
#include <arm_neon.h>

/* Four products of taps k..k+3 (inputs s[0..3] + j) for 4 columns, each rounded on its
 * own, summed ((p0 + p1) + p2) + p3 and added to acc. */
static inline float32x4_t qr__k_m1_quad4(float32x4_t acc, const float *const *s, int64_t j, const float *w) {
    float32x4_t p0 = vmulq_n_f32(vld1q_f32(s[0] + j), w[0]), p1 = vmulq_n_f32(vld1q_f32(s[1] + j), w[1]);
    float32x4_t p2 = vmulq_n_f32(vld1q_f32(s[2] + j), w[2]), p3 = vmulq_n_f32(vld1q_f32(s[3] + j), w[3]);
    QR_KERN_ROUNDED(p0);
    QR_KERN_ROUNDED(p1);
    QR_KERN_ROUNDED(p2);
    QR_KERN_ROUNDED(p3);
    return vaddq_f32(vaddq_f32(vaddq_f32(vaddq_f32(p0, p1), p2), p3), acc);
}

/* The pair and single left after the groups of four (r = K % 4 taps). */
static inline float32x4_t qr__k_m1_rest4(float32x4_t acc, const float *const *s, int64_t j, const float *w, int64_t r) {
    if (r >= 2) {
        float32x4_t p0 = vmulq_n_f32(vld1q_f32(s[0] + j), w[0]), p1 = vmulq_n_f32(vld1q_f32(s[1] + j), w[1]);
        QR_KERN_ROUNDED(p0);
        QR_KERN_ROUNDED(p1);
        acc = vaddq_f32(vaddq_f32(p0, p1), acc);
        s += 2;
        w += 2;
        r -= 2;
    }
    if (r) {
        float32x4_t p0 = vmulq_n_f32(vld1q_f32(s[0] + j), w[0]);
        QR_KERN_ROUNDED(p0);
        acc = vaddq_f32(p0, acc);
    }
    return acc;
}

/* QrKF32M1Cols with NEON. */
static void qr__k_f32_m1_cols__neon(int64_t K, int64_t n, const float *w, const float *const *src, float bias, float *y) {
    const float32x4_t vb = vdupq_n_f32(bias);
    const int64_t K4 = K & ~(int64_t)3;
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t k = 0; k < K4; k += 4) {
            s0 = qr__k_m1_quad4(s0, src + k, j, w + k);
            s1 = qr__k_m1_quad4(s1, src + k, j + 4, w + k);
            s2 = qr__k_m1_quad4(s2, src + k, j + 8, w + k);
            s3 = qr__k_m1_quad4(s3, src + k, j + 12, w + k);
        }
        vst1q_f32(y + j, vaddq_f32(qr__k_m1_rest4(s0, src + K4, j, w + K4, K - K4), vb));
        vst1q_f32(y + j + 4, vaddq_f32(qr__k_m1_rest4(s1, src + K4, j + 4, w + K4, K - K4), vb));
        vst1q_f32(y + j + 8, vaddq_f32(qr__k_m1_rest4(s2, src + K4, j + 8, w + K4, K - K4), vb));
        vst1q_f32(y + j + 12, vaddq_f32(qr__k_m1_rest4(s3, src + K4, j + 12, w + K4, K - K4), vb));
    }
    for (; j < n; j += 4) {   /* readable up to rup(n, 16): the last 4 columns can be loaded */
        float32x4_t s0 = vdupq_n_f32(0.0f);
        for (int64_t k = 0; k < K4; k += 4) s0 = qr__k_m1_quad4(s0, src + k, j, w + k);
        s0 = vaddq_f32(qr__k_m1_rest4(s0, src + K4, j, w + K4, K - K4), vb);
        if (j + 4 <= n) {
            vst1q_f32(y + j, s0);
        } else {
            float tmp[4];
            vst1q_f32(tmp, s0);
            memcpy(y + j, tmp, (size_t)(n - j) * sizeof(float));
        }
    }
}

/* QrF32ConvM1Fn with NEON (kern/gemm.c's band driver). */
static void qr_f32_conv_m1__neon(const QrF32ConvB *b, const float *w, float bias, float *y) {
    qr__k_f32_conv_m1(qr__k_f32_m1_cols__neon, b, w, bias, y);
}
#endif
