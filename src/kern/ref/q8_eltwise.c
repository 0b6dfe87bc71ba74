/* kern/ref/q8_eltwise — element-wise 8-bit kernels (the oracles): QuantizeLinear,
 * DequantizeLinear and ONNX Runtime's QLinearAdd arithmetic. Same float operations in the same
 * order as ops/qdq.c's scalar code. */

/* QrQ8QuantizeFn: true division, clamp in float, round half to even, add the zero point. */
static void qr_q8_quantize__ref(int64_t n, const float *x, float scale, int32_t zp, int32_t lo, int32_t hi, void *y) {
    const float flo = (float)(lo - zp), fhi = (float)(hi - zp);
    for (int64_t i = 0; i < n; i++) {
        float v = x[i] / scale;
        if (!(v >= flo)) v = flo;
        if (v > fhi) v = fhi;
        ((uint8_t *)y)[i] = (uint8_t)((int32_t)rintf(v) + zp);
    }
}

/* QrQ8DequantizeFn: (x - zp) exactly in int32, one conversion, one multiply. */
static void qr_q8_dequantize__ref(int64_t n, const void *x, bool x_signed, int32_t zp, float scale, float *y) {
    if (x_signed) for (int64_t i = 0; i < n; i++) y[i] = (float)((int32_t)((const int8_t *)x)[i] - zp) * scale;
    else for (int64_t i = 0; i < n; i++) y[i] = (float)((int32_t)((const uint8_t *)x)[i] - zp) * scale;
}

/* a * b rounded on its own (never contracted into a following add). */
static inline float qr__k_mul_rn(float a, float b) {
    float p = a * b;
    QR_KERN_ROUNDED(p);
    return p;
}

/* QrQ8AddFn in scalar code; fmaf is the fused multiply-add the AVX2 kernel uses. */
static void qr_q8_add__ref(int64_t n, const void *a, int64_t as, const void *b, int64_t bs, const QrQ8AddParams *p,
                           void *y) {
    for (int64_t i = 0; i < n; i++) {
        float av = (float)(p->a_signed ? ((const int8_t *)a)[i * as] : ((const uint8_t *)a)[i * as]);
        float bv = (float)(p->b_signed ? ((const int8_t *)b)[i * bs] : ((const uint8_t *)b)[i * bs]);
        float v = p->mode == 1 ? fmaf(bv, p->rb, p->fixed + qr__k_mul_rn(av, p->ra))
                : p->mode == 2 ? fmaf(av, p->ra, p->fixed + qr__k_mul_rn(bv, p->rb))
                               : fmaf(av, p->ra, fmaf(bv, p->rb, p->fixed));
        int32_t q = p->lo;
        if (v >= -2147483648.0f && v < 2147483648.0f) {
            q = (int32_t)rintf(v);
            q = q < p->lo ? p->lo : q > p->hi ? p->hi : q;
        }
        ((uint8_t *)y)[i] = (uint8_t)q;
    }
}
