/* kern — the kernel dispatch table. Filled once from the ref kernels and upgraded
 * by CPU features (cpuid / hwcaps); QR_ISA=ref|avx2|avx512|vnni|neon|dot|i8mm forces a
 * level. Ops call kernels only through qr_kern. */
#ifndef QR_KERN_H
#define QR_KERN_H

/* Map: float kernels · integer kernels · analysis kernels · tolerances · the table.
 * Every kernel exists as qr_<dt>_<op>__ref (plain C, the oracle) and per ISA; the GEMMs
 * split their work over the thread pool (base/pool.h) and give the same bits for any
 * thread count. Integer kernels are bit-exact with __ref; float ones stay within the
 * tolerances below; fake-quant and histograms are bit-exact too. */

/* ---- float ------------------------------------------------------------------------ */

/* C (M,N) [+]= A (M,K) @ B (K,N); row-major with row strides lda/ldb/ldc.
 * accumulate=false overwrites C. A, B and C must not overlap. */
typedef void (*QrF32GemmFn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                            int64_t ldb, float *C, int64_t ldc, bool accumulate);

/* Runs over a finished block of a GEMM's C (rows [m0, m0 + rows), columns [n0, n0 + cols),
 * c pointing at element (m0, n0), row stride ldc) after every other part of the epilogue:
 * fused elementwise layers (see QrF32Step). Every element of C is passed exactly once;
 * blocks are disjoint and may run concurrently on different threads. */
typedef void (*QrF32PostFn)(void *ctx, float *c, int64_t ldc, int64_t m0, int64_t rows, int64_t n0, int64_t cols);

/* What a float GEMM does with its result before storing it (the fused epilogue of a
 * convolution or a Linear layer): C = clamp(A @ B [+ C] + bias[m], lo, hi). NaN passes
 * the clamp unchanged. */
typedef struct QrF32Epilogue {
    const float *bias;   /* M values, one per row of C; NULL: none */
    float lo, hi;        /* -INFINITY / INFINITY: no clamp (Relu: 0, INFINITY) */
} QrF32Epilogue;

/* The epilogue of a GEMM with the elementwise layers after it fused in, per element, in
 * this order:
 *   v = A @ B [+ C] + bias[m]      (ep; the bias joins the first K block's sum, or with conv_n
 *                                   comes after the last block, kern/gemm.c)
 *   v = v + res[m][n]              (res not NULL; res + v when res_first: a residual Add)
 *   v = v < lo ? lo : v;  v = v > hi ? hi : v       (ep.lo / ep.hi: Clip, NaN passes)
 *   v = v > 0 ? v : 0, NaN kept    (relu: Relu exactly, so -0 becomes +0)
 * then post (not NULL) runs over the finished blocks. Each step rounds like the separate
 * layer would, so on one level a fused Conv -> Add -> Relu gives the bits of that level's
 * QrF32ConvGemmFn (bias only) followed by the Add and the Relu run one by one. */
/* A GEMM's B operand given as the 8-bit integers of a DequantizeLinear (the sim run of a QDQ
 * model's constant weight, fused into its MatMul / Gemm by run/run.c): element (k, n) of B is
 *   (float)(q - zp[n * zps]) * scale[n * ss]
 * (zp NULL: 0; ss, zps 0: one parameter for all of B, 1: one per column n), the integer
 * difference converted and multiplied by the float scale once, as DequantizeLinear computes it,
 * so every B value has the bits of the dequantized copy. q has B's layout: (K, N) with B's row
 * stride, or (N, K) for a transposed B (QrF32GemmBtFusedFn). */
typedef struct QrF32QuantB {
    const void *q;
    bool q_signed;
    const float *scale;
    int64_t ss;
    const int32_t *zp;
    int64_t zps;
} QrF32QuantB;

typedef struct QrF32Fused {
    QrF32Epilogue ep;
    bool relu, res_first;
    /* > 0: this GEMM is (a slice of) a convolution over conv_n output pixels in all, and
     * sums like ONNX Runtime's MlasConv on one thread (see qr__k_conv_kc in kern/gemm.c):
     * K in blocks of MLAS's adapted SGEMM stride, the bias added after the last block.
     * QrF32ConvGemmFn / QrF32ConvGemmFusedFn always sum that way: over their OH*OW pixels,
     * or conv_n when given (a band of a convolution's output rows, ops/nn.c's Conv pairs). */
    int64_t conv_n;
    /* B is a MatMul's or Gemm's operand (not a convolution's image): its full-width panels are
     * packed as a plain product's are (a copy: the sums do not change) */
    bool pack_panels;
    /* not NULL: B is these integers (the B pointer is not read), dequantized panel by panel as
     * the drivers pack it: the same bits as on the dequantized B, and no float copy of it */
    const QrF32QuantB *qb;
    const float *res;    /* (M, N), row stride ldres */
    int64_t ldres;
    QrF32PostFn post;
    void *post_ctx;
    /* not NULL: a convolution's A (its weights) as QrF32ConvPackFn packed it for this shape; the
     * convolution GEMM reads it instead of packing A itself (a copy: the sums do not change).
     * Only QrF32ConvGemmFusedFn reads it, and only when QrF32ConvPackBytesFn gave bytes. */
    const float *a_pack;
} QrF32Fused;

/* QrF32GemmFn with an epilogue (ep NULL: none). */
typedef void (*QrF32GemmExFn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                              int64_t ldb, float *C, int64_t ldc, bool accumulate, const QrF32Epilogue *ep);

/* Rows [n0, n1) of the batch-1 transposed-B product y[n] = S_n + (accumulate ? y[n] : +0)
 * for the N rows of B (N, K; row stride ldb) against one row a (K values), in the order of
 * ONNX Runtime's MLAS M=1 transposed-B kernel (MlasSgemmKernelM1TransposeBAvx), which its Gemm
 * uses for a batch of one when B is not an initializer (ORT packs initializers ahead and sums
 * those like the GEMM micro-kernels): eight lanes, lane l summing the products a[k]*b[k]
 * (each rounded on its own) of k = l mod 8 in order from +0; then rows in blocks of four
 * reduce their lanes as (((l0 + l1) + l2) + l3) + (((l4 + l5) + l6) + l7), a block of two left
 * as ((l2 + l0) + (l6 + l4)) + ((l3 + l1) + (l7 + l5)), a last single row as
 * ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) (blocks counted from row 0 of N). Every
 * level gives the same bits; qr_f32_gemv_m1t (kern/ref/f32_gemv.c) splits the rows over the
 * pool. */
typedef void (*QrF32GemvM1tFn)(int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a, const float *B,
                               int64_t ldb, float *y, bool accumulate);

/* QrF32GemvM1tFn for a B that is DequantizeLinear of 8-bit integers q (N, K; row stride ldb),
 * dequantized in registers as that op does: b[n][k] = (float)(q[n][k] - zp) * scale, with
 * scale[n * ss] and zp[n * zps] (ss, zps 0: one for all rows; zp NULL: 0). The same bits as
 * QrF32GemvM1tFn on the dequantized B, from a quarter of the bytes. */
typedef void (*QrF32GemvM1tQ8Fn)(int64_t n0, int64_t n1, int64_t N, int64_t K, const float *a, const void *q,
                                 bool q_signed, int64_t ldb, const float *scale, int64_t ss, const int32_t *zp,
                                 int64_t zps, float *y, bool accumulate);

/* Columns [n0, n1) of the batch-1 product y[n] = a (K) @ B (K, N; row stride ldb) [+ y[n]]
 * in the order of ONNX Runtime's MLAS M=1 kernel for a B that is not transposed
 * (MlasSgemmKernelM1Avx), which its MatMul and Gemm use for one row of A when B is not an
 * initializer (alpha 1, beta 0 or 1): K in groups of four rows of B (then two, then one),
 * each group's products a[k]*B[k][n] rounded on their own and summed left to right, each
 * group's sum then added to the running value, which starts at y[n] (accumulate) or +0.
 * Every column is independent; every level gives the same bits; qr_f32_gemv_m1
 * (kern/ref/f32_gemv.c) splits the columns over the pool. */
typedef void (*QrF32GemvM1Fn)(int64_t n0, int64_t n1, int64_t K, const float *a, const float *B, int64_t ldb,
                              float *y, bool accumulate);

/* Rows [r0, r1) (r0 a multiple of 16) of y = A (M, K) @ b (K) [+ y] summed as the SIMD levels'
 * QrF32GemmFn sums a product of one column (N = 1): K in blocks of QR_KERN_F32_KC, each
 * block's sum a chain of fused multiply-adds in k order from +0, the first block's sum then
 * y[r] + s (accumulate) or s, every later one y[r] + s. A is given packed
 * (qr_f32_gemv_pack): the rows in panels of 16, panel p holding A[16p + i][k] at
 * Ap[(p * K + k) * 16 + i], zero past M, so that the 16 rows' chains run side by side with
 * one load per k, where the unpacked rows are transposed in registers first. ONNX Runtime's
 * Gemm of a batch of one against an initializer B (a Linear layer: B packed ahead, summed as
 * its GEMM kernels) sums this way; an executor that keeps constants packs B once. */
typedef void (*QrF32GemvPackedFn)(int64_t r0, int64_t r1, int64_t K, const float *Ap, const float *b, float *y,
                                  bool accumulate);
enum {
    QR_KERN_F32_KC = 256,             /* the x86 levels' float GEMM K block (QrKF32Isa.kc), QrF32GemvPackedFn's */
    QR_KERN_POOL_MIN_MACS = 524288,   /* fewer multiply-adds (~1 MFLOP) run on one thread: the pool costs more */
};

/* Keeps v (a product, scalar or vector) from being contracted with the add that follows
 * into a fused multiply-add — GCC contracts even intrinsics under its default
 * -ffp-contract=fast — for kernels that must round every product on its own, as ONNX
 * Runtime's do: an empty asm the optimizer cannot see through, no instruction. */
#if defined(__x86_64__)
#define QR_KERN_ROUNDED(v) __asm__("" : "+v"(v))
#elif defined(__aarch64__)
#define QR_KERN_ROUNDED(v) __asm__("" : "+w"(v))
#else
#define QR_KERN_ROUNDED(v) ((void)0)
#endif

/* One image (and group) of a 2-D convolution as the B operand of a GEMM (implicit
 * im2col): B has K = C*KH*KW rows and N = OH*OW columns,
 *   B[(c*KH + kh)*KW + kw][oh*OW + ow] = x[c][oh*sh - ph + kh*dh][ow*sw - pw + kw*dw]
 * (0 where that is outside x). */
typedef struct QrF32ConvB {
    const float *x;         /* (C, H, W), contiguous */
    int64_t C, H, W, KH, KW, sh, sw, dh, dw, ph, pw, OH, OW;
} QrF32ConvB;

/* Y (M, OH*OW; row stride ldy) = epilogue(A (M, C*KH*KW; row stride lda) @ B) for the B
 * of *b, which is never materialized (ep NULL: none). All sizes >= 1. */
typedef void (*QrF32ConvGemmFn)(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b, float *Y, int64_t ldy,
                                const QrF32Epilogue *ep);

/* QrF32GemmExFn / QrF32ConvGemmFn with fused layers (f NULL: none). */
typedef void (*QrF32GemmFusedFn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                                 int64_t ldb, float *C, int64_t ldc, bool accumulate, const QrF32Fused *f);
typedef void (*QrF32ConvGemmFusedFn)(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b, float *Y,
                                     int64_t ldy, const QrF32Fused *f);
/* Bytes of the packed weights QrF32ConvGemmFusedFn makes of A (M rows of C*KH*KW) for the
 * convolution *b (b->x is not read) at this kernel level, or 0 when it packs none for it (then
 * QrF32Fused.a_pack is not read). An executor that keeps weights between runs packs them once
 * with QrF32ConvPackFn into that many bytes (64-byte aligned) and passes them as a_pack. */
typedef size_t (*QrF32ConvPackBytesFn)(int64_t M, const QrF32ConvB *b);
typedef void (*QrF32ConvPackFn)(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b, float *dst);
/* QrF32GemmFusedFn with B given as its transpose Bt (N, K; row stride ldb >= K): the product
 * A @ Bt^T, every element summed exactly as QrF32GemmFusedFn sums it on B = Bt^T (the same bits
 * at every level), without B ever being written out: the drivers pack Bt's blocks into B's
 * panels as they go (a Gemm with transB, attention's Q @ K^T). */
typedef void (*QrF32GemmBtFusedFn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bt,
                                   int64_t ldb, float *C, int64_t ldc, bool accumulate, const QrF32Fused *f);

/* One output channel of a 2-D convolution with a single filter — a depthwise channel, or a
 * group with one output channel (M = 1 in the convolution's GEMM) — summed in the order of
 * ONNX Runtime's MLAS M=1 kernel (MlasSgemmKernelM1Avx), which ORT's Conv uses for every
 * such GEMM on x86-64, so the float baseline matches it bit for bit:
 *   y[oh][ow] = S + bias, S over the taps k = (c*KH + kh)*KW + kw of the C channels of b->x,
 *   p_k = w[k] * x_k, each product rounded on its own (x_k = 0 for a tap in the padding,
 *   so an infinite weight there gives NaN, as ORT's zero-filled im2col does), S starting
 *   at +0: for each full group of four t = ((p0 + p1) + p2) + p3, S = t + S; a pair left
 *   over t = p0 + p1, S = t + S; a single one left S = p0 + S.
 * No fused multiply-add anywhere. y is (OH, OW) contiguous and only written. */
typedef void (*QrF32ConvM1Fn)(const QrF32ConvB *b, const float *w, float bias, float *y);

/* Max pooling of one plane x (H,W) into y (OH,OW) with window KH x KW, strides sh/sw,
 * dilations dh/dw and begin pads ph/pw: y[oh][ow] is the first element of the window's
 * in-range taps that no later one exceeds (v > best replaces), taking the column maxima
 * top to bottom first, then those left to right; a window without in-range taps gives 0.
 * NaN wins only where it is the window's first tap. rowbuf: W floats of scratch. */
typedef void (*QrF32MaxPool2dFn)(const float *x, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh,
                                 int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, float *y, int64_t OH,
                                 int64_t OW, float *rowbuf);

/* One elementwise layer fused after another (a chain of them runs in one pass over the
 * data, see QrF32StepsFn). Each op rounds exactly like the layer it stands for:
 *   ADD/SUB/MUL/DIV  y = y op p[ch]   (swap: p[ch] op y)       Add/Sub/Mul/Div by a constant
 *   ADD_T            y = y + t[off+i] (swap: t[off+i] + y)     Add of a tensor of y's shape
 *   AFFINE           y = y * p[ch] + q[ch], two roundings      BatchNormalization (inference)
 *   CLAMP            y = y < lo ? lo : y, then y > hi ? hi : y Clip (NaN passes)
 *   RELU             y = y > 0 ? y : 0, NaN kept               Relu
 *   FQ               QuantizeLinear then DequantizeLinear with scale p[ch], zero point
 *                    zp[ch] and range [qmin, qmax], as QrF32FakeQuantFn
 * Parameters are per channel (pc = 1: p[ch], q[ch], zp[ch]) or one value (pc = 0). */
typedef enum QrF32StepOp {
    QR_F32_STEP_ADD, QR_F32_STEP_SUB, QR_F32_STEP_MUL, QR_F32_STEP_DIV, QR_F32_STEP_ADD_T,
    QR_F32_STEP_AFFINE, QR_F32_STEP_CLAMP, QR_F32_STEP_RELU, QR_F32_STEP_FQ,
} QrF32StepOp;

typedef struct QrF32Step {
    QrF32StepOp op;
    bool swap;
    int64_t pc;
    const float *p, *q;
    const int32_t *zp;
    int32_t qmin, qmax;
    float lo, hi;
    const float *t;
} QrF32Step;
#define QR_F32_MAX_STEPS 16

/* QrF32ConvM1Fn over n planes of one window geometry, each then given the first u steps of
 * act[0..nact) in order, as QrF32StepsFn does them (the activation after a depthwise layer,
 * fused while its outputs are in registers): plane p reads b->x + p*xs with the weights
 * w + p*ws and the bias bias[p] (bias NULL: 0) and writes y + p*ys. Returns u (0 <= u <=
 * nact: the leading Clip then ReLU, Clip, or ReLU it fuses), or -1, nothing written, when
 * the level has no such form for b's window. One call for a task's planes: the window's
 * tables and the activation's kind are worked out once, not per plane (a 7x7 plane's
 * outputs are 4 vectors). */
typedef int (*QrF32ConvM1ActFn)(const QrF32ConvB *b, int64_t n, int64_t xs, const float *w, int64_t ws,
                                const float *bias, float *y, int64_t ys, const QrF32Step *act, int nact);

/* y[i] = the ns steps applied in order to x[i], i in [0, n): n contiguous elements of
 * channel ch whose first one is element off of the tensor (ADD_T reads t[off + i]). y may
 * equal x. Bit-exact with __ref at every level (each step is one IEEE operation, or the
 * fake-quant sequence, per element). */
typedef void (*QrF32StepsFn)(const QrF32Step *s, int ns, const float *x, float *y, int64_t n, int64_t ch, int64_t off);

/* Softmax (log: LogSoftmax) over `rows` contiguous rows of n elements (y may equal x), in the arithmetic of
 * ONNX Runtime's MLAS on x86-64 (MlasComputeSoftmax: ReduceMaximum, ComputeSumExp, then the
 * output kernel), so a float Softmax has its bits:
 *   neg = -(max over the row, starting from -FLT_MAX); for each element v = x + neg, then
 *   v = max(v, lower) and the exponential
 *     b = fma(log2(e), v, 1.5*2^23);  m = b - 1.5*2^23;  v = fma(m, -ln2_hi, v);
 *     v = fma(m, -ln2_lo, v);  p = P0, then p = fma(p, v, c) for c = P1..P4, 1, 1;
 *     e = p * 2^m   (wide: one rounding of the exact product, as VSCALEFPS;
 *                    else the float whose bits are (bits(b) << 23) + 0x3F800000 times p)
 *   with lower = -88.3762626647949 (else) or -103.9720840454 (wide); y = e;
 *   the sum: L lanes (8, wide 16), lane l adding the e of the elements l, l + L, ... in
 *   order from +0; wide first folds lane l + 8 into lane l (a[l + 8] + a[l]); then
 *   s = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));  y = (1 / s) * y
 *   (logsm: y = (x + neg) - logf(s), the exponentials not stored).
 * `wide` picks ORT's AVX-512F kernel (MlasComputeSumExpF32KernelAvx512F, which ORT uses on a
 * CPU with AVX-512F) over its FMA3 one (any other x86-64 CPU with AVX2): QrKernels.ort_wide.
 * Every level gives the same bits for either choice. */
typedef void (*QrF32SoftmaxFn)(const float *x, float *y, int64_t rows, int64_t n, bool wide, bool logsm);

/* Elementwise functions in MLAS's FMA3 kernels (ORT uses them on every x86-64 CPU with AVX2,
 * AVX-512 included): ERF MlasErfKernelFma3 (|x| clamped to 3.925; below 0.921875 an odd
 * polynomial in x^2, above 1 - exp(-poly(|x|)) with MLAS's own exp; the sign copied back);
 * SIGMOID MlasLogisticKernelFma3 (x clamped to +-18, p(x^2) * x / q(x^2) + 0.5, then max with
 * 0); TANH the same rational form clamped to +-9 (MlasTanhKernelFma3 of ORT 1.30). The
 * constants are QR_KT_* below; every step is one rounding (fma one too). y may equal x. */
/* EXP MlasComputeExpF32KernelFma3, which ORT's Exp uses on an x86-64 CPU without AVX-512F: x
 * clamped to [-103.97, 88.78], the range reduction and polynomial of the Softmax exponential
 * above up to p = fma(p, v, 1), then the exponent m split into a normal part n (clamped to
 * [-126, 127]) and the rest o = m - n: y = fma(p, v * 2^o, 2^o) * 2^n; EXP_WIDE
 * MlasComputeExpF32KernelAvx512F (a CPU with AVX-512F): x clamped below only, at -103.97, then
 * exactly the Softmax's wide exponential (p * 2^m in one rounding). */
typedef enum QrF32MapOp { QR_F32_MAP_ERF, QR_F32_MAP_SIGMOID, QR_F32_MAP_TANH, QR_F32_MAP_EXP, QR_F32_MAP_EXP_WIDE } QrF32MapOp;
typedef void (*QrF32MapFn)(QrF32MapOp op, const float *x, float *y, int64_t n);

/* One row of LayerNormalization (n >= 1 contiguous values) in ONNX Runtime 1.30's arithmetic
 * on x86-64, so a float LayerNormalization has its bits (y = (x - mean) * inv * scale + bias;
 * bias NULL: none; mean_out / inv_out NULL: not written):
 *   n >= 8, MLAS's AVX2 kernel (MlasLayerNormKernelAvx2, which ORT's LayerNormImpl calls for
 *   such rows): the mean from a double sum — four lanes, lane l adding the elements l, l + 4,
 *   ... of the whole groups of four, reduced (l0 + l2) + (l1 + l3), then the rest in order —
 *   divided by n in double and rounded to float; the centred squares d = x - mean summed in
 *   eight float lanes by fma(d, d, s) over the whole groups of eight, reduced
 *   ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), then the t = n mod 8 left in order: the
 *   first 4 * floor(t / 4) as s + d * d (two roundings; GCC's vectorized in-order reduction of
 *   MLAS's scalar tail), the others as fma(d, d, s) (its contracted scalar epilogue); inv = 1 / sqrtf(s / n + eps); each output t = (x - mean) * inv, then
 *   fma(t, scale, bias), or t * scale without a bias;
 *   n < 8, ORT's scalar ComputeJob: Welford in float from 0 (delta = x - mean,
 *   mean += delta / k, m2 += delta * (x - mean), each step rounded), den = sqrtf(m2 / n +
 *   eps), y = (x - mean) / den * scale [+ bias], each step rounded, inv = 1 / den.
 * Every level gives the same bits. */
typedef void (*QrF32LayerNormFn)(const float *x, const float *scale, const float *bias, float *y, int64_t n, float eps,
                                 float *mean_out, float *inv_out);

/* MLAS's constants (compute.cpp, erf.cpp, logistic.cpp, tanh.cpp of ORT 1.30). */
#define QR_KT_EXP_LOWER (-103.9720840454f)
#define QR_KT_EXP_LOWER_SUMEXP (-88.3762626647949f)
#define QR_KT_EXP_UPPER 88.7762626647950f
#define QR_KT_EXP_MIN_EXP ((int32_t)0xC1000000)   /* -126 << 23 */
#define QR_KT_EXP_MAX_EXP ((int32_t)0x3F800000)   /* 127 << 23: also the exponent bias */
#define QR_KT_ROUND_BIAS 12582912.0f
#define QR_KT_LOG2E 1.44269504088896341f
#define QR_KT_LN2_HI (-6.93145752e-1f)
#define QR_KT_LN2_LO (-1.42860677e-6f)
#define QR_KT_EXP_P0 0x1.694000p-10f
#define QR_KT_EXP_P1 0x1.125edcp-7f
#define QR_KT_EXP_P2 0x1.555b5ap-5f
#define QR_KT_EXP_P3 0x1.555450p-3f
#define QR_KT_EXP_P4 0x1.fffff6p-2f
#define QR_KT_ERF_UPPER 3.925f
#define QR_KT_ERF_SPLIT 0.921875f
#define QR_KT_ERF_S0 (-5.99104969e-4f)
#define QR_KT_ERF_S1 4.99339588e-3f
#define QR_KT_ERF_S2 (-2.67667342e-2f)
#define QR_KT_ERF_S3 1.12818025e-1f
#define QR_KT_ERF_S4 (-3.76124859e-1f)
#define QR_KT_ERF_S5 1.28379151e-1f
#define QR_KT_ERF_B0 1.72948930e-5f
#define QR_KT_ERF_B1 (-3.83208680e-4f)
#define QR_KT_ERF_B2 3.88393435e-3f
#define QR_KT_ERF_B3 (-2.42545605e-2f)
#define QR_KT_ERF_B4 1.06777847e-1f
#define QR_KT_ERF_B5 6.34846687e-1f
#define QR_KT_ERF_B6 1.28717512e-1f
#define QR_KT_ERF_E0 1.38319808e-3f
#define QR_KT_ERF_E1 8.37550033e-3f
#define QR_KT_ERF_E2 4.16689515e-2f
#define QR_KT_ERF_E3 1.66664466e-1f
#define QR_KT_ERF_E4 4.99999851e-1f
#define QR_KT_SIG_RANGE 18.0f
#define QR_KT_SIG_A9 4.37031012579801e-11f
#define QR_KT_SIG_A7 1.15627324459942e-07f
#define QR_KT_SIG_A5 6.08574864600143e-05f
#define QR_KT_SIG_A3 8.51377133304701e-03f
#define QR_KT_SIG_A1 2.48287947061529e-01f
#define QR_KT_SIG_B10 6.10247389755681e-13f
#define QR_KT_SIG_B8 5.76102136993427e-09f
#define QR_KT_SIG_B6 6.29106785017040e-06f
#define QR_KT_SIG_B4 1.70198817374094e-03f
#define QR_KT_SIG_B2 1.16817656904453e-01f
#define QR_KT_SIG_B0 9.93151921023180e-01f
#define QR_KT_TANH_RANGE 9.0f
#define QR_KT_TANH_A13 (-2.76076847742355e-16f)
#define QR_KT_TANH_A11 2.00018790482477e-13f
#define QR_KT_TANH_A9 (-8.60467152213735e-11f)
#define QR_KT_TANH_A7 5.12229709037114e-08f
#define QR_KT_TANH_A5 1.48572235717979e-05f
#define QR_KT_TANH_A3 6.37261928875436e-04f
#define QR_KT_TANH_A1 4.89352455891786e-03f
#define QR_KT_TANH_B6 1.19825839466702e-06f
#define QR_KT_TANH_B4 1.18534705686654e-04f
#define QR_KT_TANH_B2 2.26843463243900e-03f
#define QR_KT_TANH_B0 4.89352518554385e-03f

/* ---- integer ---------------------------------------------------------------------- */

/* One operand of an integer GEMM: a row-major matrix of 8-bit (QrQ8GemmFn) or 16-bit
 * (QrQ16GemmFn) integers and its zero points. A's zero points run along its rows (one per
 * m, e.g. per output channel of a convolution's weights), B's along its columns (one per
 * n, e.g. per output channel of a MatMul's weights). */
typedef struct QrQOperand {
    const void *data;       /* int8/uint8 or int16/uint16 elements */
    int64_t ld;             /* row stride in elements */
    bool is_signed;         /* int8/int16 (true) or uint8/uint16 (false) */
    const int32_t *zp;      /* zero points; NULL = all zero */
    int64_t zp_stride;      /* 0: zp[0] everywhere; 1: zp[m] for A's row m, zp[n] for B's column n */
    /* A only (NULL elsewhere): data packed once by qr_kern.q8_pack_a (QrQ8PackAFn). An 8-bit GEMM
     * reads it instead of packing A on every call when it fits (same level, M, K, signedness of
     * both operands); otherwise, and on levels without a packed form, it uses data. Both must
     * hold the same matrix. */
    const void *packed;
} QrQOperand;

/* C (M,N) [+]= sum_k (A[m,k] - za[m]) * (B[k,n] - zb[n]) for 8-bit A (M,K) and B (K,N),
 * of either signedness, with zero points in the operands' own range. The int32 sum wraps
 * modulo 2^32 like ONNX Runtime's (the only overflow the spec allows); no intermediate
 * saturates. accumulate=false overwrites C. */
typedef void (*QrQ8GemmFn)(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B, int32_t *C,
                           int64_t ldc, bool accumulate);

/* One image (and group) of a 2-D convolution on 8-bit integers as the B operand of an 8-bit
 * GEMM (implicit im2col): B has K = C*KH*KW rows and N = OH*OW columns,
 *   B[(c*KH + kh)*KW + kw][oh*OW + ow] = x[c][oh*sh - ph + kh*dh][ow*sw - pw + kw*dw]
 * and zp where that falls outside x, so that B - zp is 0 there (ONNX Runtime pads with the
 * zero point). */
typedef struct QrQ8ConvB {
    const void *x;          /* (C, H, W), contiguous int8 / uint8 */
    bool is_signed;
    int32_t zp;
    int64_t C, H, W, KH, KW, sh, sw, dh, dw, ph, pw, OH, OW;
} QrQ8ConvB;

/* C (M, OH*OW; row stride ldc) = sum_k (A[m,k] - za[m]) * (B[k,n] - zp) mod 2^32 for the B of
 * *b, which is never materialized; A (M, C*KH*KW) as in QrQ8GemmFn. All sizes >= 1. */
typedef void (*QrQ8ConvGemmFn)(int64_t M, const QrQOperand *A, const QrQ8ConvB *b, int32_t *C, int64_t ldc);

/* What an 8-bit GEMM does with its int32 result instead of storing it (a fused
 * requantization): y[m][n] = QrS32RequantFn's arithmetic on C[m][n] with
 * bias[m*bias_rs + n*bias_cs] (bias NULL: 0) and mult[m*mult_rs + n*mult_cs] (strides 0 or 1),
 * zp, lo, hi; y rows are ldy elements of y_bytes (1 or 2) bytes apart. */
typedef struct QrQ8Requant {
    const int32_t *bias;
    int64_t bias_rs, bias_cs;
    const float *mult;
    int64_t mult_rs, mult_cs;
    int32_t zp, lo, hi;
    void *y;
    int64_t ldy;
    int y_bytes;
} QrQ8Requant;

/* An 8-bit GEMM (QrQ8GemmFn; with conv set and B NULL, QrQ8ConvGemmFn's implicit im2col B,
 * N = OH*OW and K = C*KH*KW) whose result goes through *rq straight from the cache instead of
 * being stored: no int32 C array. */
typedef void (*QrQ8GemmRqFn)(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B,
                             const QrQ8ConvB *conv, const QrQ8Requant *rq);

/* Packs the A operand of this level's 8-bit GEMMs (QrQ8GemmFn, QrQ8ConvGemmFn, QrQ8GemmRqFn):
 * A (M, K; data, ld, is_signed; zero points are not packed) for a B of signedness b_signed, in
 * the micro-kernels' layout with its row sums, so that weights are packed once (pass dst as
 * QrQOperand.packed). dst NULL: returns the bytes needed, 0 when the level has no packed form
 * (the ref); otherwise writes that many bytes to dst (the caller owns it) and
 * returns the count. dst must be 64-byte aligned. */
typedef size_t (*QrQ8PackAFn)(int64_t M, int64_t K, const QrQOperand *A, bool b_signed, void *dst);

/* One image of a 2-D convolution on 8-bit integers held channels-last, read in place through
 * row pointers (an indirect GEMM: no im2col, no packing of the activations): x is (H, W, Cp)
 * unsigned bytes, Cp = the channel count rounded up to a multiple of 4, the extra channels
 * holding zp; taps outside x count as zp. (An int8 image is stored as x ^ 0x80 with zp + 128:
 * the differences x - zp, all the convolution uses, stay the same.) */
typedef struct QrQ8ConvNhwc {
    const uint8_t *x;
    int32_t zp;             /* 0..255 */
    int64_t C, Cp, H, W, KH, KW, sh, sw, dh, dw, ph, pw, OH, OW;
    /* Optional (src not NULL): x is not written yet; the kernel writes it (fill, the same
     * buffer as x) from the NCHW image src (C planes of H*W bytes, int8 when src_signed) as
     * QrQ8ToNhwcFn does with pad zp — a task its own pixels right before it reads them where
     * that is safe (1x1 windows, stride 1, no padding, tasks split over pixels only), else
     * the whole image first. */
    const uint8_t *src;
    bool src_signed;
    uint8_t *fill;
} QrQ8ConvNhwc;

/* Packs a convolution's weights for this level's QrQ8ConvNhwcRqFn: w (M, C, KH, KW), 8-bit of
 * signedness w_signed, zero points wz (wzs 0: wz[0] for all; 1: wz[m]). dst NULL: returns the
 * bytes needed (from the dimensions alone; 0 when the level has no such kernel); otherwise
 * writes them to dst (64-byte aligned, owned by the caller) and returns the same count, or 0
 * (dst's contents then undefined) when some w - wz[m] does not fit int8. */
typedef size_t (*QrQ8ConvNhwcPackFn)(int64_t M, int64_t C, int64_t KH, int64_t KW, const void *w, bool w_signed,
                                    const int32_t *wz, int64_t wzs, void *dst);

/* y[m][p] = requantization (*rq, QrQ8Requant's arithmetic: bias per m with bias_rs 0 or 1 and
 * bias_cs 0, mult likewise, y_bytes 1) of sum over the taps of p of (x - zp) * (w[m] - wz[m])
 * mod 2^32, for output channels m < M and pixels p < OH*OW (NCHW rows of ldy bytes). Splits
 * over the thread pool. Returns false, writing nothing, when w_packed was not packed by this
 * level's QrQ8ConvNhwcPackFn for this M, C, KH, KW (the caller then packs again) or the
 * per-thread scratch cannot be allocated (the caller takes another path). */
typedef bool (*QrQ8ConvNhwcRqFn)(int64_t M, const void *w_packed, const QrQ8ConvNhwc *x, const QrQ8Requant *rq);

/* Pixels [0, n) of an 8-bit NCHW image x (C planes, ldx bytes apart) as QrQ8ConvNhwc's
 * channels-last bytes: dst[p*Cp + c] = x[c*ldx + p] (^ 0x80 when x_signed) for c < C, pad for
 * C <= c < Cp (n <= ldx: a run of pixels of a larger image). */
typedef void (*QrQ8ToNhwcFn)(const void *x, bool x_signed, int64_t C, int64_t n, int64_t ldx, int64_t Cp, uint8_t pad,
                             uint8_t *dst);

/* C (M,N) [+]= sum_k (A[m,k] - za[m]) * (B[k,n] - zb[n]) for 16-bit A and B of either
 * signedness, exact in int64 (any K < 2^29 with any zero points; int16 -32768..32767
 * and uint16 0..65535 alike). */
typedef void (*QrQ16GemmFn)(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B, int64_t *C,
                            int64_t ldc, bool accumulate);

/* Requantization, ONNX Runtime's (MlasRequantizeOutput) arithmetic, for i in [0, n):
 *   v    = (float)(acc[i] + bias[i*bias_stride]) * mult[i*mult_stride]     (int32 add wraps)
 *   y[i] = (int)rint(clamp(v, lo - zp, hi - zp)) + zp                      (NaN -> lo)
 * rint rounds half to even, so y = clamp(nearbyint(v) + zp, lo, hi) for every finite v.
 * bias NULL = 0; strides are 0 (one value) or 1 (per element). y holds y_bytes-byte
 * two's-complement integers (1: int8/uint8, 2: int16/uint16); lo <= hi give the output range
 * (the type's, or narrower: a fused Relu / Clip) and zp is in the type's range (it may lie
 * outside [lo, hi]). */
typedef void (*QrS32RequantFn)(int64_t n, const int32_t *acc, const int32_t *bias, int64_t bias_stride,
                               const float *mult, int64_t mult_stride, int32_t zp, int32_t lo, int32_t hi, void *y,
                               int y_bytes);

/* The same for int64 accumulators (16-bit operands): v = (float)(acc[i] + bias[..]) * mult[..]
 * with an exact int64 add and one int64 -> float32 rounding (to nearest even), then as above. */
typedef void (*QrS64RequantFn)(int64_t n, const int64_t *acc, const int32_t *bias, int64_t bias_stride,
                               const float *mult, int64_t mult_stride, int32_t zp, int32_t lo, int32_t hi, void *y,
                               int y_bytes);

/* One 8-bit plane x (H, W; contiguous, int8 or uint8) with its zero point, and a 2-D window
 * over it: output (oh, ow) reads the taps (ih, iw) = (oh*sh - ph + kh*dh, ow*sw - pw + kw*dw),
 * kh < KH, kw < KW. All sizes >= 1. */
typedef struct QrQ8Win {
    const void *x;
    bool x_signed;
    int32_t xz;
    int64_t H, W, KH, KW, sh, sw, dh, dw, ph, pw, OH, OW;
} QrQ8Win;

/* Depthwise convolution of one plane into int32 y (OH*OW):
 *   y[oh*OW + ow] = sum over the taps inside x of (x[ih][iw] - xz) * w[kh*KW + kw]  (mod 2^32)
 * (taps outside x contribute 0, as ONNX Runtime's padding with the zero point does). w holds
 * the weights minus their zero point, |w| <= 255. scratch: qr_q8_dwconv2d_scratch(p) bytes,
 * 64-byte aligned, owned by the caller (one per thread). */
typedef void (*QrQ8DwConv2dFn)(const QrQ8Win *p, const int16_t *w, int32_t *y, void *scratch);
/* Scratch bytes a QrQ8DwConv2dFn of any level needs for p. */
static size_t qr_q8_dwconv2d_scratch(const QrQ8Win *p);

/* The requantization of one output plane: QrS32RequantFn's arithmetic with one bias and one
 * multiplier, into bytes (lo < 0: int8, else uint8). */
typedef struct QrQ8PlaneRq {
    int32_t bias;
    float mult;
    int32_t zp, lo, hi;
} QrQ8PlaneRq;

/* Depthwise convolution of `planes` planes requantized into bytes: plane k is p's window over
 * p->x + k*ldx, with weights w + k*KH*KW (minus their zero point, each in [-128, 127]) and the
 * requantization rq[k]; y + k*ldy (OH*OW bytes) = rq[k] applied to QrQ8DwConv2dFn's sums (mod
 * 2^32). scratch: qr_q8_dwconv2d_rq_scratch(p) bytes, 64-byte aligned. Returns false, writing
 * nothing, when this level has no kernel for p's geometry (the caller then runs
 * QrQ8DwConv2dFn and QrS32RequantFn); with planes 0 it only answers that (nothing is read). */
typedef bool (*QrQ8DwConv2dRqFn)(const QrQ8Win *p, int64_t planes, int64_t ldx, const int8_t *w, const QrQ8PlaneRq *rq,
                                 void *y, int64_t ldy, void *scratch);
static size_t qr_q8_dwconv2d_rq_scratch(const QrQ8Win *p);

/* Max pooling of one plane into y (OH*OW bytes of x's type): the largest x over each window's
 * taps inside x (xz is not used). Every window must have a tap inside x (qr_q8_win_covered).
 * scratch: qr_q8_maxpool2d_scratch(p) bytes, 64-byte aligned. */
typedef void (*QrQ8MaxPool2dFn)(const QrQ8Win *p, void *y, void *scratch);
static size_t qr_q8_maxpool2d_scratch(const QrQ8Win *p);
/* True when every window of p has at least one tap inside x. */
static bool qr_q8_win_covered(const QrQ8Win *p);

/* QuantizeLinear into 8-bit integers with one scale and zero point, for i in [0, n):
 *   y[i] = (int)rint(clamp(x[i] / scale, lo - zp, hi - zp)) + zp    (true float32 division; NaN -> lo)
 * lo <= hi: the output range (int8 or uint8; lo < 0 only for int8), zp in the type's range. */
typedef void (*QrQ8QuantizeFn)(int64_t n, const float *x, float scale, int32_t zp, int32_t lo, int32_t hi, void *y);

/* DequantizeLinear of 8-bit integers: y[i] = (float)(x[i] - zp) * scale. */
typedef void (*QrQ8DequantizeFn)(int64_t n, const void *x, bool x_signed, int32_t zp, float scale, float *y);

/* ONNX Runtime's QLinearAdd arithmetic (its AVX2 kernel; see ops/qdq.c) on 8-bit operands:
 * with a_i = a[i*as], b_i = b[i*bs] as float (strides 0 or 1) and fused multiply-adds,
 *   mode 0 (both spans): v = fma(a_i, ra, fma(b_i, rb, fixed))
 *   mode 1 (A scalar):   v = fma(b_i, rb, fixed + a_i*ra)      (the product rounded on its own)
 *   mode 2 (B scalar):   v = fma(a_i, ra, fixed + b_i*rb)
 *   y[i] = clamp(rint(v), lo, hi), lo for NaN and |v| >= 2^31 (cvtps2dq's integer indefinite);
 * lo <= hi an 8-bit range (lo < 0 only for int8 y). */
typedef struct QrQ8AddParams {
    float ra, rb, fixed;
    int mode;
    bool a_signed, b_signed;
    int32_t lo, hi;
} QrQ8AddParams;
typedef void (*QrQ8AddFn)(int64_t n, const void *a, int64_t as, const void *b, int64_t bs, const QrQ8AddParams *p,
                          void *y);

/* ---- analysis --------------------------------------------------------------------- */

/* Moments of one array over its finite values (NaN/+Inf/-Inf only counted): the same
 * fields and meaning as analysis/stats.h's QrStats. m2 = sum (x - mean)^2. */
typedef struct QrF32Moments {
    int64_t n, n_nan, n_posinf, n_neginf;
    double min, max, mean, m2;
} QrF32Moments;

/* Fused one-pass statistics of a pair of arrays (x = float reference, y = quantized):
 * moments of each, and sums over the pairs where both x[i] and y[i] are finite, all in
 * double: sxx = sum x^2, syy = sum y^2, sxy = sum xy, sdd = sum (x-y)^2, sad = sum |x-y|,
 * maxad = max |x-y| (0 for no pairs). Arrays are processed in blocks of QR_KERN_STATS_BLOCK
 * elements counted from the start of each call, merged with Chan's formula. */
typedef struct QrF32PairStats {
    QrF32Moments x, y;
    int64_t n;
    double sxx, syy, sxy, sdd, sad, maxad;
} QrF32PairStats;
#define QR_KERN_STATS_BLOCK 4096

/* Accumulates x[0..n) and y[0..n) into *s (y == NULL: only s->x). */
typedef void (*QrF32PairStatsFn)(const float *x, const float *y, int64_t n, QrF32PairStats *s);

/* The moments of each block of x[0..n) on its own: m[k] for k < ceil(n / QR_KERN_STATS_BLOCK),
 * block k being x[k·QR_KERN_STATS_BLOCK ..) (the last may be short) — the bits the same level's
 * QrF32PairStatsFn(block, NULL) merges into an empty accumulator, so merging m[0], m[1], ... in
 * order gives that function's bits over x[0..n). */
typedef void (*QrF32MomentBlocksFn)(const float *x, int64_t n, QrF32Moments *m);

/* Largest relative error of finite pairs: max over i of fl(|x[i] - y[i]| / |x[i]|) in double
 * (0/0 = 0, d/0 = FLT_MAX); 0 for no pairs. Every level returns the same bits (the maximum of
 * the same exact quotients; levels differ only in which elements they prove cannot win). */
typedef double (*QrF32RtolFn)(const float *x, const float *y, int64_t n);

/* A weight's quantization checked element by element (analysis/weights.c): element i's scale and
 * zero point are s[i * ss], z[i * ss] (ss 0: one pair for the run, 1: one per element), its integer
 * q_i the stored one, stored[i] (8-bit: int8 when sgn, else uint8) when stored is given, else
 * QuantizeLinear's of the float weight x[i] (saturate(rint(x[i] / s) — a true division — within
 * [lo - z, hi - z], a NaN to lo - z) + z); y[i] = (float)(q_i - z) * s. With x given, adds to *c: x or
 * x / s not finite (nonfinite), else rint(x / s) + z outside [lo, hi] (sat) and x / s + z outside
 * [lo - 1, hi + 1] (far); x != 0 quantized to z (zero); stored integers other than QuantizeLinear's
 * (diff). Every level gives the ref's bits and counts. */
/* Rounding fragility's tie scan (analysis/frag.c): the first of the nblk blocks of 16 floats x[16 b ..
 * 16 b + 16) in which some element may sit at a tie of QuantizeLinear's rounding on scale sc — v = x / sc
 * (a true division) saturated to [lo, hi] (a NaN to lo), 2v an odd integer — or nblk when none does.
 * |lo|, |hi| < 2^22, so 2v converts to int32 exactly. Every level returns the ref's block. */
typedef int64_t (*QrF32TieScanFn)(const float *x, int64_t nblk, float sc, float lo, float hi);
typedef struct QrWqCounts { int64_t sat, far, zero, nonfinite, diff; } QrWqCounts;
typedef void (*QrF32WquantFn)(const float *x, const void *stored, bool sgn, const float *s, const int32_t *z, int64_t ss,
                              int32_t lo, int32_t hi, int64_t n, float *y, QrWqCounts *c);

/* The exact integer sums of n 8-bit values (int8 when sgn, else uint8): Σx, Σx², min, max
 * (n = 0: zeros). Every level returns the same integers. */
typedef struct QrQ8Stats { int64_t s1, s2; int32_t mn, mx; } QrQ8Stats;
typedef void (*QrQ8StatsFn)(const void *p, bool sgn, int64_t n, QrQ8Stats *s);

/* out[i] = qr_f64_exp((double)x[i] - sub), the exponential of the metrics' KL defined in
 * kern/ref/f64_exp.c in IEEE double operations: every level gives the same bits. */
typedef void (*QrF32ExpSubFn)(const float *x, double sub, double *out, int64_t n);

/* One side of the metrics' KL sums (analysis/metrics), the piece each level's QrF32KlSidesFn is made
 * of (the ref, avx2 and neon levels call it twice; not in the table): over the n pairs (v[i], w[i]) in order,
 * skipping a pair where v or w is not finite, e = qr_f64_exp((double)v[i] - sub), then
 * *s += e and, when t is not NULL, *t += e * ((double)v[i] - (double)w[i]) (the product rounded
 * on its own). Each sum adds its terms one at a time in element order, so every level gives the
 * bits of that plain loop; the SIMD levels overlap the exponentials of later elements with the
 * additions of earlier ones. */
typedef void (*QrF32KlSideFn)(const float *v, const float *w, int64_t n, double sub, double *s, double *t);

/* Both sides of the metrics' KL sums over the same n pairs in one pass: what QrF32KlSideFn's
 * (x, y, subx, sx, tx) and then (y, x, suby, sy, NULL) add. The three sums are independent, each in
 * element order, so every level gives the bits of those two calls; a level with a kernel of its own
 * (avx512) keeps the three chains of additions in flight together (one side's pass is bound by its
 * chain's latency, not by its exponentials). */
typedef void (*QrF32KlSidesFn)(const float *x, const float *y, int64_t n, double subx, double suby, double *sx, double *tx,
                               double *sy);

/* The error split's squared errors (analysis/compare.c): over the pairs i in [0, n) where x[i]
 * and y[i] are both finite, d = (double)y[i] - (double)x[i] and d * d (rounded on its own) is
 * added to s[1] when mask is not NULL and mask[i] != 0, else to s[0]; each sum adds its terms one
 * at a time in element order, from the value s[] holds. Every level gives the bits of that plain
 * loop. The SIMD levels compute the terms vectors ahead of the additions and leave out the terms
 * that are +0: a term is never -0 or NaN, and s + (+0) == s bit for bit unless s is -0, which a
 * sum with a term added never is (a sum that received only +0 terms is set to s + 0 at the end). */
typedef void (*QrF32SqErrSplitFn)(const float *x, const float *y, const uint8_t *mask, int64_t n, double s[2]);

/* One run of the error split's output-quantizer input under one quantization parameter
 * (analysis/compare.c): for i in [0, n)
 *   v = u[i]; v = ilo where ilo is not NaN and v < ilo; v = ihi where ihi is not NaN and v > ihi;
 *   v not finite: skipped (mask[i] = 0); otherwise r->n_fin++ and, with v as a double,
 *   v < lo or v > hi (clipped): mask[i] = 1, r->n_clip++; else mask[i] = 0, r->n_in++;
 *   r->s += q * q with q = v / st (scaled) or q = v (the quotient and the product rounded on
 *   their own), one addition at a time in element order from the value r->s holds.
 * mask[0..n) is written whole. Every level gives the ref's bits (zero terms left out as in
 * QrF32SqErrSplitFn). */
typedef struct QrF32ClipSq { int64_t n_fin, n_clip, n_in; double s; } QrF32ClipSq;
typedef void (*QrF32ClipSqFn)(const float *u, int64_t n, float ilo, float ihi, double lo, double hi, double st, bool scaled,
                              uint8_t *mask, QrF32ClipSq *r);

/* Histogram: for every x[i] with lo <= x[i] <= hi (NaN never), counts[b] += 1 with
 * b = min(nbins - 1, (int)((x[i] - lo) * scale)), scale = (float)nbins / (hi - lo) in
 * float32 (so x == hi lands in the last bin). hi == lo puts x == lo in bin 0. Values
 * outside [lo, hi] are not counted. Requires nbins >= 1 and lo <= hi, both finite. */
typedef void (*QrF32HistFn)(const float *x, int64_t n, float lo, float hi, int32_t nbins, int64_t *counts);

/* Fake quantization (QuantizeLinear then DequantizeLinear in float32):
 *   q    = saturate(rint(x / scale) + zp) into [qmin, qmax] (clamp first, in float; NaN -> qmin)
 *   y[i] = (float)(q - zp) * scale
 * with a true division, bit-exact with ops/qdq.c. y may equal x. */
typedef void (*QrF32FakeQuantFn)(const float *x, int64_t n, float scale, int32_t zp, int32_t qmin, int32_t qmax,
                                 float *y);

/* ---- tolerances (kernels vs their __ref twin) -------------------------------------- */

/* A float GEMM element may differ from ref by at most this times sum_k |a_mk * b_kn|
 * (two different summation orders of K float products: K units in the last place
 * each way, plus slack). */
#define QR_KERN_F32_DOT_TOL(K) ((double)((K) + 4) * (double)FLT_EPSILON)
/* (with an epilogue or accumulate, |C| and |bias| join the sum of absolute terms) */
/* Pair statistics: sums relative to the sum of the absolute terms, m2 relative to m2 + n*mean^2. */
#define QR_KERN_STATS_RTOL 1e-12

/* ---- window geometry -------------------------------------------------------------- */

/* The taps j in [*lo, *hi) of one window axis that land inside the input: 0 <= t + j*d < in,
 * j < k, for the input index t of tap 0 and dilation d >= 1 (*lo == *hi: none). O(1): window
 * loops run over these only, so a declared kernel of 2^31 taps costs no more than the input
 * it covers (a pool's kernel_shape is an attribute, not weights that must exist). */
static inline void qr_kern_win_taps(int64_t t, int64_t k, int64_t d, int64_t in, int64_t *lo, int64_t *hi) {
    int64_t l = t >= 0 ? 0 : (-t + d - 1) / d;
    int64_t h = in - 1 - t < 0 ? 0 : (in - 1 - t) / d + 1;
    h = h < k ? h : k;
    *lo = l < h ? l : h;
    *hi = h;
}

/* ---- the table ------------------------------------------------------------------- */

typedef struct QrKernels {
    QrIsa isa;
    QrF32GemmFn f32_gemm;
    QrF32GemmExFn f32_gemm_ex;
    QrF32ConvGemmFn f32_conv_gemm;
    QrF32GemmFusedFn f32_gemm_fused;
    QrF32GemmBtFusedFn f32_gemm_bt_fused;
    QrF32ConvGemmFusedFn f32_conv_gemm_fused;
    QrF32ConvPackBytesFn f32_conv_pack_bytes;
    QrF32ConvPackFn f32_conv_pack;
    QrF32ConvM1Fn f32_conv_m1;
    QrF32ConvM1ActFn f32_conv_m1_act;   /* NULL: none at this level (avx2, neon: the steps run after) */
    QrF32GemvM1tFn f32_gemv_m1t;
    QrF32GemvM1tQ8Fn f32_gemv_m1t_q8;
    QrF32GemvM1Fn f32_gemv_m1;
    QrF32GemvPackedFn f32_gemv_packed;   /* NULL: none at this level (ref, avx2, neon: f32_gemm) */
    QrF32MaxPool2dFn f32_maxpool2d;
    QrQ8GemmFn q8_gemm;
    QrQ8ConvGemmFn q8_conv_gemm;
    QrQ8GemmRqFn q8_gemm_rq;
    QrQ8PackAFn q8_pack_a;      /* NULL: no packed form (ref) */
    QrQ8ConvNhwcPackFn q8_conv_nhwc_pack;   /* NULL (both): no channels-last convolution */
    QrQ8ConvNhwcRqFn q8_conv_nhwc_rq;
    QrQ8ToNhwcFn q8_to_nhwc;
    QrQ16GemmFn q16_gemm;
    QrS32RequantFn s32_requant;
    QrS64RequantFn s64_requant;
    QrQ8DwConv2dFn q8_dwconv2d;
    QrQ8DwConv2dRqFn q8_dwconv2d_rq;   /* NULL: none (the ref, AVX2, NEON levels) */
    QrQ8MaxPool2dFn q8_maxpool2d;
    QrQ8QuantizeFn q8_quantize;
    QrQ8DequantizeFn q8_dequantize;
    QrQ8AddFn q8_add;
    QrF32PairStatsFn f32_pair_stats;
    QrF32MomentBlocksFn f32_moment_blocks;
    QrF32RtolFn f32_rtol;
    QrF32ExpSubFn f32_exp_sub;
    QrF32KlSidesFn f32_kl_sides;
    QrF32SqErrSplitFn f32_sqerr_split;
    QrF32ClipSqFn f32_clip_sq;
    QrQ8StatsFn q8_stats;
    QrF32WquantFn f32_wquant;   /* NULL: analysis/weights.c's four-lane loop (the avx2 and neon levels) */
    QrF32TieScanFn f32_tie_scan;
    QrF32HistFn f32_hist;
    QrF32FakeQuantFn f32_fake_quant;
    QrF32StepsFn f32_steps;
    QrF32SoftmaxFn f32_softmax;
    QrF32MapFn f32_map;
    QrF32LayerNormFn f32_layernorm;
    /* The Softmax and Exp to emulate (QrF32SoftmaxFn's `wide`, QR_F32_MAP_EXP_WIDE): ONNX
     * Runtime's AVX-512F kernels when this CPU has AVX-512F, as ORT dispatches, whatever the
     * level; QR_ORT_SOFTMAX=wide|narrow overrides (the ORT of another CPU). Not a kernel: every
     * level computes both. */
    bool ort_wide;
} QrKernels;

static QrKernels qr_kern;
/* Fills qr_kern once: the best level the CPU has, or the level QR_ISA names. A QR_ISA
 * this CPU lacks (or an unknown word) leaves the best level in place and returns
 * QR_ERR_UNSUPPORTED with a message naming what is missing; later calls return the same
 * status. Also reads QR_THREADS through the pool the first time a GEMM runs. */
static QrStatus qr_kern_init(void);
static QrIsa qr_kern_isa(void);
/* Fills *out with the kernels of one level; QR_ERR_UNSUPPORTED if the CPU lacks it. */
static QrStatus qr_kern_table(QrIsa isa, QrKernels *out);
/* Parses "ref", "avx2", "avx512", "vnni", "neon", "dot", "i8mm". False for anything else. */
static bool qr_kern_isa_parse(const char *s, QrIsa *out);
#ifdef QR_TESTING
/* Frees the packing scratch of every thread. No kernel may be running. */
QR_TESTAPI void qr_kern_release(void);
#endif

/* Empty statistics (min = +Inf, max = -Inf). */
static void qr_f32_pair_stats_init(QrF32PairStats *s);
/* a += b: counts and sums add, min/max combine, mean/m2 by Chan's parallel formula. */
static void qr_f32_pair_stats_merge(QrF32PairStats *a, const QrF32PairStats *b);

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
static bool qr_kern_dwc_small(const QrQ8Win *p, int64_t *hp, int64_t *wp);
#endif
