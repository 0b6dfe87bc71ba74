/* kern/ref/q_gemm — plain C integer GEMMs and requantization, the oracles for the SIMD
 * variants (which must match them bit for bit). */

static inline int32_t qr__k_q8_at(const QrQOperand *o, int64_t i) {
    return o->is_signed ? (int32_t)((const int8_t *)o->data)[i] : (int32_t)((const uint8_t *)o->data)[i];
}
static inline int32_t qr__k_q16_at(const QrQOperand *o, int64_t i) {
    return o->is_signed ? (int32_t)((const int16_t *)o->data)[i] : (int32_t)((const uint16_t *)o->data)[i];
}
static inline int32_t qr__k_zp_at(const QrQOperand *o, int64_t i) { return o->zp ? o->zp[i * o->zp_stride] : 0; }

/* C (M,N) [+]= sum_k (A[m,k] - za[m]) * (B[k,n] - zb[n]) mod 2^32 (QrQ8GemmFn). The
 * products are formed in int64 and summed in uint32, so wrapping is defined. */
static void qr_q8_gemm__ref(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B, int32_t *C,
                            int64_t ldc, bool accumulate) {
    for (int64_t m = 0; m < M; m++) {
        int64_t za = qr__k_zp_at(A, m);
        for (int64_t n = 0; n < N; n++) {
            int64_t zb = qr__k_zp_at(B, n);
            uint32_t s = accumulate ? (uint32_t)C[m * ldc + n] : 0u;
            for (int64_t k = 0; k < K; k++)
                s += (uint32_t)(((int64_t)qr__k_q8_at(A, m * A->ld + k) - za) *
                                ((int64_t)qr__k_q8_at(B, k * B->ld + n) - zb));
            C[m * ldc + n] = (int32_t)s;
        }
    }
}

/* Output (m, oh, ow) of A @ (implicit im2col of b - zp) mod 2^32: taps outside the image are
 * skipped (their B - zp is 0). */
static int32_t qr__k_q8_conv_elem(const QrQOperand *A, int64_t m, const QrQ8ConvB *b, int64_t oh, int64_t ow) {
    const int64_t KK = b->KH * b->KW, za = qr__k_zp_at(A, m);
    uint32_t s = 0;
    for (int64_t c = 0; c < b->C; c++)
        for (int64_t kh = 0; kh < b->KH; kh++) {
            const int64_t ih = oh * b->sh - b->ph + kh * b->dh;
            if (ih < 0 || ih >= b->H) continue;
            for (int64_t kw = 0; kw < b->KW; kw++) {
                const int64_t iw = ow * b->sw - b->pw + kw * b->dw;
                if (iw < 0 || iw >= b->W) continue;
                const int64_t xi = (c * b->H + ih) * b->W + iw;
                const int64_t xv = b->is_signed ? ((const int8_t *)b->x)[xi] : ((const uint8_t *)b->x)[xi];
                s += (uint32_t)(((int64_t)qr__k_q8_at(A, m * A->ld + c * KK + kh * b->KW + kw) - za) * (xv - b->zp));
            }
        }
    return (int32_t)s;
}

/* C (M, OH*OW) = A @ (implicit im2col of b - zp) mod 2^32 (QrQ8ConvGemmFn). */
static void qr_q8_conv_gemm__ref(int64_t M, const QrQOperand *A, const QrQ8ConvB *b, int32_t *C, int64_t ldc) {
    for (int64_t m = 0; m < M; m++)
        for (int64_t oh = 0; oh < b->OH; oh++)
            for (int64_t ow = 0; ow < b->OW; ow++) C[m * ldc + oh * b->OW + ow] = qr__k_q8_conv_elem(A, m, b, oh, ow);
}

/* Requantization of one element of a fused GEMM output (QrQ8Requant). */
static void qr__k_q8_rq_elem(const QrQ8Requant *rq, int64_t m, int64_t n, int32_t c);

/* QrQ8GemmRqFn: every sum as qr_q8_gemm__ref / qr_q8_conv_gemm__ref computes it, then
 * qr_s32_requant__ref on it. */
static void qr_q8_gemm_rq__ref(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B,
                               const QrQ8ConvB *conv, const QrQ8Requant *rq) {
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int32_t c;
            if (conv) {
                c = qr__k_q8_conv_elem(A, m, conv, n / conv->OW, n % conv->OW);
            } else {
                QrQOperand a = *A, b = *B;
                a.data = (const unsigned char *)A->data + m * A->ld;
                if (A->zp) a.zp = A->zp + m * A->zp_stride;
                b.data = (const unsigned char *)B->data + n;
                if (B->zp) b.zp = B->zp + n * B->zp_stride;
                qr_q8_gemm__ref(1, 1, K, &a, &b, &c, 1, false);
            }
            qr__k_q8_rq_elem(rq, m, n, c);
        }
}

/* C (M,N) [+]= sum_k (A[m,k] - za[m]) * (B[k,n] - zb[n]) exactly in int64 (QrQ16GemmFn). */
static void qr_q16_gemm__ref(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B, int64_t *C,
                             int64_t ldc, bool accumulate) {
    for (int64_t m = 0; m < M; m++) {
        int64_t za = qr__k_zp_at(A, m);
        for (int64_t n = 0; n < N; n++) {
            int64_t zb = qr__k_zp_at(B, n);
            int64_t s = accumulate ? C[m * ldc + n] : 0;
            for (int64_t k = 0; k < K; k++)
                s += ((int64_t)qr__k_q16_at(A, m * A->ld + k) - za) * ((int64_t)qr__k_q16_at(B, k * B->ld + n) - zb);
            C[m * ldc + n] = s;
        }
    }
}

/* Requantization (QrS32RequantFn): float multiply, clamp in float, round half to even,
 * add the zero point — the order of ops/qdq.c's qr_quant_requantize. */
static void qr_s32_requant__ref(int64_t n, const int32_t *acc, const int32_t *bias, int64_t bias_stride,
                                const float *mult, int64_t mult_stride, int32_t zp, int32_t lo, int32_t hi, void *y,
                                int y_bytes) {
    const float flo = (float)(lo - zp), fhi = (float)(hi - zp);
    for (int64_t i = 0; i < n; i++) {
        int32_t a = (int32_t)((uint32_t)acc[i] + (uint32_t)(bias ? bias[i * bias_stride] : 0));
        float v = (float)a * mult[i * mult_stride];
        if (!(v >= flo)) v = flo;
        if (v > fhi) v = fhi;
        int32_t q = (int32_t)rintf(v) + zp;
        if (y_bytes == 1) ((uint8_t *)y)[i] = (uint8_t)q;
        else ((uint16_t *)y)[i] = (uint16_t)q;
    }
}

/* Requantization of int64 accumulators (QrS64RequantFn): exact int64 bias add, one rounding
 * to float32, then as qr_s32_requant__ref. */
static void qr_s64_requant__ref(int64_t n, const int64_t *acc, const int32_t *bias, int64_t bias_stride,
                                const float *mult, int64_t mult_stride, int32_t zp, int32_t lo, int32_t hi, void *y,
                                int y_bytes) {
    const float flo = (float)(lo - zp), fhi = (float)(hi - zp);
    for (int64_t i = 0; i < n; i++) {
        float v = (float)(acc[i] + (bias ? bias[i * bias_stride] : 0)) * mult[i * mult_stride];
        if (!(v >= flo)) v = flo;
        if (v > fhi) v = fhi;
        int32_t q = (int32_t)rintf(v) + zp;
        if (y_bytes == 1) ((uint8_t *)y)[i] = (uint8_t)q;
        else ((uint16_t *)y)[i] = (uint16_t)q;
    }
}

static void qr__k_q8_rq_elem(const QrQ8Requant *rq, int64_t m, int64_t n, int32_t c) {
    const int32_t *bias = rq->bias ? rq->bias + m * rq->bias_rs + n * rq->bias_cs : NULL;
    qr_s32_requant__ref(1, &c, bias, 0, rq->mult + m * rq->mult_rs + n * rq->mult_cs, 0, rq->zp, rq->lo, rq->hi,
                        (unsigned char *)rq->y + (m * rq->ldy + n) * rq->y_bytes, rq->y_bytes);
}
