/* kern — the kernel dispatch table. Filled once from the ref kernels and upgraded
 * by CPU features (cpuid / hwcaps); QR_ISA=ref|avx2|avx512|vnni|neon forces a
 * level. Ops call kernels only through qr_kern. */
#ifndef QR_KERN_H
#define QR_KERN_H

typedef struct QrKernels {
    QrIsa isa;
    /* Kernel entry points are added here as the SIMD work lands. */
    int reserved;
} QrKernels;

static QrKernels qr_kern;
static void qr_kern_init(void);
static QrIsa qr_kern_isa(void);

#endif
