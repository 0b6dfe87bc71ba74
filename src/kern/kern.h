/* kern — the kernel dispatch table. Filled once from the ref kernels and upgraded
 * by CPU features (cpuid / hwcaps); QR_ISA=ref|avx2|avx512|vnni|neon forces a
 * level. Ops call kernels only through qr_kern. */
#ifndef QR_KERN_H
#define QR_KERN_H

/* C (M,N) [+]= A (M,K) @ B (K,N); row-major with row strides lda/ldb/ldc.
 * accumulate=false overwrites C. */
typedef void (*QrF32GemmFn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                            int64_t ldb, float *C, int64_t ldc, bool accumulate);

/* One channel of a 2-D depthwise convolution; see kern/ref/f32_gemm.c. */
typedef void (*QrF32DwConv2dFn)(const float *x, int64_t H, int64_t W, const float *w, int64_t KH, int64_t KW,
                                 int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, float *y,
                                 int64_t OH, int64_t OW);

typedef struct QrKernels {
    QrIsa isa;
    QrF32GemmFn f32_gemm;
    QrF32DwConv2dFn f32_dwconv2d;
} QrKernels;

static QrKernels qr_kern;
static void qr_kern_init(void);
static QrIsa qr_kern_isa(void);

#endif
