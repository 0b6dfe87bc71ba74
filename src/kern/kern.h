/* kern — the kernel dispatch table. Filled once from the ref kernels and upgraded
 * by CPU features (cpuid / hwcaps); QR_ISA=ref|avx2|avx512|vnni|neon forces a
 * level. Ops call kernels only through qr_kern. */
#ifndef QR_KERN_H
#define QR_KERN_H

/* C (M,N) [+]= A (M,K) @ B (K,N); row-major with row strides lda/ldb/ldc.
 * accumulate=false overwrites C. */
typedef void (*QrF32GemmFn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                            int64_t ldb, float *C, int64_t ldc, bool accumulate);

typedef struct QrKernels {
    QrIsa isa;
    QrF32GemmFn f32_gemm;
} QrKernels;

static QrKernels qr_kern;
static void qr_kern_init(void);
static QrIsa qr_kern_isa(void);

#endif
