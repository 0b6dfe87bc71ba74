/* kern/gemm — the ISA-independent half of the GEMMs: per-thread packing scratch, the
 * float32 driver (cache blocking, packing, threading) that runs an ISA's micro-kernels,
 * and the integer drivers built the same way.
 *
 * Float32 scheme (BLIS-like, for 32-48 KB L1 / 0.5-2 MB L2): the output is cut into
 * tasks of (up to MC rows) x (up to NS columns); a task walks K in blocks of KC, and for
 * each NR-column micro-panel of its columns runs the micro-kernel over its MR-row panels,
 * reading A in place: its (MC, KC) block stays in L2, and the micro-kernels take any row
 * count up to MR, so A needs no packing (weights would otherwise be re-packed on every
 * call). B's (KC, NR) block is packed into the thread's buffer (L1) for a plain product
 * of 4 * MR rows or more (a Linear layer), for a B given transposed and for a narrow last
 * panel, and read in place otherwise (a 1x1 convolution's GEMM); for a convolution it is
 * gathered straight from the input image (implicit im2col), so no column matrix is ever
 * written (when a convolution's rows split into several tasks, its panels are gathered
 * once, before the tasks, rather than once per row chunk). Narrow
 * last panels run half- and quarter-width kernels where the ISA has them.
 * Every C element gets the same sequence of operations whatever the tiling and thread
 * count (panel boundaries are multiples of MR/NR from 0, K blocks from 0), so results do
 * not depend on the thread count. */

/* ==== per-thread scratch ============================================================ */

/* One growable 64-byte aligned buffer per calling thread and pool scratch level (a thread
 * that waits for the helpers of its GEMM, which read its buffer, may run other GEMMs' tasks
 * meanwhile: base/pool.h); all of them are on a list so that qr_kern_release can free them
 * (and leak checkers see them as reachable). */
typedef struct QrKScratch {
    struct QrKScratch *next;
    void *p;
    size_t cap;
} QrKScratch;

static _Thread_local QrKScratch *qr__k_tls[QR_POOL_SCRATCH_LEVELS];
static QrKScratch *qr__k_all;
static pthread_mutex_t qr__k_all_mu = PTHREAD_MUTEX_INITIALIZER;

/* The calling thread's scratch with at least `bytes` bytes, or NULL if it cannot be
 * allocated. The contents are not preserved when it grows. */
static void *qr__k_scratch(size_t bytes) {
    QrKScratch **tls = &qr__k_tls[qr_pool_scratch_level()];
    QrKScratch *s = *tls;
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s) return NULL;
        pthread_mutex_lock(&qr__k_all_mu);
        s->next = qr__k_all;
        qr__k_all = s;
        pthread_mutex_unlock(&qr__k_all_mu);
        *tls = s;
    }
    if (s->cap < bytes) {
        qr_aligned_free(s->p);
        size_t cap = QR_MAX(bytes, s->cap + s->cap / 2);
        s->p = qr_aligned_alloc(cap);
        s->cap = s->p ? cap : 0;
    }
    return s->p;
}

#ifdef QR_TESTING
/* Tests: panel pairs run by qr__k_f32_wide, convolutions run by qr__k_f32_coc_run (x86-64 kernels;
 * declared on every target: the tests read them, and they stay 0 elsewhere). */
static int64_t qr__k_wide_runs, qr__k_coc_runs;
/* Tests: coc runs that packed their weights themselves (no QrF32Fused.a_pack). */
static int64_t qr__k_coc_wpacks;
/* Tests: coc runs of a 1x1 convolution flattened into one row. */
static int64_t qr__k_coc_flat_runs;
/* Tests, bench/run_count: multiply-adds of the float GEMM drivers (M x N x K a call: dense
 * convolutions, MatMul, Gemm; not the depthwise and M = 1 kernels) of the x86-64 SIMD levels; atomic. */
QR_TESTAPI int64_t qr_kern_f32_macs;

QR_TESTAPI void qr_kern_release(void) {
    pthread_mutex_lock(&qr__k_all_mu);
    for (QrKScratch *s = qr__k_all; s; s = s->next) {
        qr_aligned_free(s->p);
        s->p = NULL;
        s->cap = 0;
    }
    pthread_mutex_unlock(&qr__k_all_mu);
}
#endif

static inline int64_t qr__k_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t qr__k_rup(int64_t a, int64_t b) { return qr__k_cdiv(a, b) * b; }
static inline size_t qr__k_rup64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Splits an (M, N) output into tasks: row chunks of mc (a multiple of mr, at most mc_max)
 * and column slices of ns (a multiple of nr, at most ns_max), with at least ~4 tasks per
 * thread when the matrix allows it (the machine is shared: small tasks balance load). */
typedef struct QrKTiles { int64_t mc, ns, n_mc, n_ns; } QrKTiles;

static QrKTiles qr__k_tiles(int64_t M, int64_t N, int mr, int nr, int64_t mc_max, int64_t ns_max, int threads) {
    QrKTiles t;
    t.n_mc = qr__k_cdiv(M, mc_max);
    t.mc = qr__k_rup(qr__k_cdiv(M, t.n_mc), mr);
    t.n_mc = qr__k_cdiv(M, t.mc);
    int64_t n_ns = qr__k_cdiv(N, ns_max);
    if (threads > 1) n_ns = QR_MAX(n_ns, qr__k_cdiv(4 * (int64_t)threads, t.n_mc));
    n_ns = QR_MIN(n_ns, qr__k_cdiv(N, nr));
    t.ns = qr__k_rup(qr__k_cdiv(N, n_ns), nr);
    t.n_ns = qr__k_cdiv(N, t.ns);
    if (threads > 1 && t.n_mc * t.n_ns < 4 * (int64_t)threads) {   /* few columns (a 7x7 layer): split the rows finer */
        int64_t n_mc = QR_MIN(qr__k_cdiv(M, mr), qr__k_cdiv(4 * (int64_t)threads, t.n_ns));
        t.mc = qr__k_rup(qr__k_cdiv(M, n_mc), mr);
        t.n_mc = qr__k_cdiv(M, t.mc);
    }
    return t;
}

/* ==== float32 ====================================================================== */

#define QR__K_MAXMR 16
#define QR__K_F32_MC 192
#define QR__K_F32_MC_PACKED 256   /* rows of a task whose B panels are packed (qr__k_f32_run) */
#define QR__K_F32_NS 512
#define QR__K_F32_NS_SWEEP 2048   /* the most columns of a one-K-block task (qr__k_f32_run) */
#define QR__K_F32_PREPACK_MAX ((size_t)4 << 20)   /* the largest convolution B packed whole (qr__k_f32_run) */

/* What a micro-kernel does with its sums s (in this order): s += bias[r] (bias not NULL:
 * first K block; after the add instead when bias_after), s += c (add), s += res[r][q] (res not NULL: last K block; res + s when
 * res_first), s = clamp(s, lo, hi) (clamp: last K block), relu (last K block), then stores. */
typedef struct QrKF32Out {
    bool add, clamp, relu, res_first;
    bool bias_after;     /* the bias is added after the add (s = (c + s) + bias): a convolution's last block */
    const float *bias;   /* the tile's rows */
    const float *res;    /* the tile's first element, row stride ldres */
    int64_t ldres;
    float lo, hi;
} QrKF32Out;

/* Micro-kernel: c (mr, nr) (+)= a (mr, kc; row stride lda) @ b (kc rows of NR floats,
 * row stride bs: NR when packed, ldb when read in place), nr <= NR columns written (masked
 * stores), finished as o says. mr is fixed per function. */
typedef void (*QrKF32Ukr)(int64_t kc, const float *a, int64_t lda, const float *b, int64_t bs, float *c, int64_t ldc,
                          int nr, const QrKF32Out *o);
/* Wide micro-kernel: c (mr, NR + nr2) (+)= a (mr, kc; row stride lda) @ [b | b2], b a full
 * packed panel (kc rows of NR floats) and b2 the narrow panel after it (kc rows NR floats
 * apart, nr2 <= NR/2 columns written), finished as o says (o->res: the tile's first column). */
typedef void (*QrKF32UkrWide)(int64_t kc, const float *a, int64_t lda, const float *b, const float *b2, float *c,
                              int64_t ldc, int nr2, const QrKF32Out *o);
/* Packs B (kc rows of nr <= NR columns, row stride ldb) into dst (kc, NR), zero past nr. */
typedef void (*QrKF32PackB)(const float *b, int64_t ldb, int64_t kc, int nr, float *dst);
/* Packs rows [k0, k0 + kc) x columns [n0, n0 + nr) of a convolution's implicit B into dst
 * (kc, NR), zero past nr. */
typedef void (*QrKF32PackConv)(const QrF32ConvB *b, int64_t k0, int64_t kc, int64_t n0, int nr, float *dst);

/* Dot products of `rows` rows of A (row stride lda) with b over kc values, each summed the
 * way the micro-kernels sum one K block, and ORT's SGEMM kernels too (the batch-1 Gemm
 * matches ONNX Runtime bit for bit through this):
 *   out[r] = fma(a[r][kc-1], b[kc-1], ... fma(a[r][1], b[1], fma(a[r][0], b[0], +0))). */
typedef void (*QrKF32DotSeq)(const float *A, int64_t lda, const float *b, int64_t kc, int64_t rows, float *out);

/* The body of every level's QrKF32DotSeq, inlined into a function compiled for the level's
 * target so that fmaf becomes one instruction: eight rows at a time, eight independent
 * chains of fused multiply-adds in flight. */
static inline __attribute__((always_inline)) void qr__k_f32_dotseq_body(const float *A, int64_t lda, const float *b,
                                                                        int64_t kc, int64_t rows, float *out) {
    int64_t r = 0;
    for (; r + 8 <= rows; r += 8) {
        const float *a = A + r * lda;
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f, s4 = 0.0f, s5 = 0.0f, s6 = 0.0f, s7 = 0.0f;
        for (int64_t k = 0; k < kc; k++) {
            const float bk = b[k];
            s0 = fmaf(a[k], bk, s0);
            s1 = fmaf(a[lda + k], bk, s1);
            s2 = fmaf(a[2 * lda + k], bk, s2);
            s3 = fmaf(a[3 * lda + k], bk, s3);
            s4 = fmaf(a[4 * lda + k], bk, s4);
            s5 = fmaf(a[5 * lda + k], bk, s5);
            s6 = fmaf(a[6 * lda + k], bk, s6);
            s7 = fmaf(a[7 * lda + k], bk, s7);
        }
        out[r] = s0;
        out[r + 1] = s1;
        out[r + 2] = s2;
        out[r + 3] = s3;
        out[r + 4] = s4;
        out[r + 5] = s5;
        out[r + 6] = s6;
        out[r + 7] = s7;
    }
    for (; r < rows; r++) {
        const float *a = A + r * lda;
        float s = 0.0f;
        for (int64_t k = 0; k < kc; k++) s = fmaf(a[k], b[k], s);
        out[r] = s;
    }
}

/* The dequantization of a quantized B (kern.h QrF32QuantB) for its panels, DequantizeLinear's
 * arithmetic: (float)(q - z) * s, the integer difference converted and multiplied once.
 *   QrKF32DeqPanel: dst (kc, NR) = rows k < kc of q (row stride ldq), columns t < nr with column
 *                   t's parameters z[t], s[t]; zero past nr (a non-transposed B's panel).
 * A transposed B's rows share one parameter each: qr_kern.q8_dequantize, the op's own kernel. */
typedef void (*QrKF32DeqPanel)(const void *q, bool sg, int64_t ldq, int64_t kc, int nr, const int32_t *z,
                               const float *s, float *dst);

/* QrKF32DeqPanel in plain C for NR-wide panels (the levels' narrow panels): element by element. */
static inline __attribute__((always_inline)) void qr__k_deq_panel_c(const void *q, bool sg, int64_t ldq, int64_t kc,
                                                                    int nr, const int32_t *z, const float *s, int NR,
                                                                    float *dst) {
    const uint8_t *qu = q;
    const int8_t *qs = q;
    for (int64_t k = 0; k < kc; k++, qu += ldq, qs += ldq, dst += NR) {
        for (int t = 0; t < nr; t++) dst[t] = (float)((sg ? (int32_t)qs[t] : (int32_t)qu[t]) - z[t]) * s[t];
        for (int t = nr; t < NR; t++) dst[t] = 0.0f;
    }
}

/* A convolution run with its output channels along the vectors (qr__k_f32_coc_run): the
 * weights packed once per call into blocks of QR__K_COC_MB channels (the ISA's QrKCocPack:
 * 16x16 transposes in registers on AVX-512), (K, QR__K_COC_MB) each
 * (zero past M), the image copied once into a zero-padded one, rows outermost, (Hp, C, Wp), so
 * that tap k of output (oh, ow) is xp[off[k] + oh*sh*C*Wp + ow*sw] (a band of rows is one run of
 * memory: see qr__k_coc_prep_task). A task is one channel block over `tiles` tiles
 * of up to QR__K_COC_MAXP pixels (row by row, each row in cdiv(OW, MAXP) tiles); the ISA's task
 * function (QrKF32Isa.coc) sums every element as the GEMM path does. A 1x1, stride 1, unpadded
 * convolution runs flat: its OH x OW pixels one output row of OH*OW (OH 1, OW N), the image read
 * in place as (C, 1, N) (no copy). */
#define QR__K_COC_MB 32
#define QR__K_COC_MAXP 14   /* output pixels per tile */
typedef struct QrKCocJob {
    const float *xp, *wt;    /* padded image (Hp, C, Wp); packed weights */
    const int32_t *off;      /* K offsets into xp */
    float *Y;                /* output (M, OH*OW), row stride ldy */
    int64_t ldy, M, K, kc, OH, OW, Wp, sh, sw, nblk;
    int64_t rp;              /* floats from one padded row to the next: C * Wp */
    int64_t tiles;           /* tiles per task, counted row by row (whole rows but for a flat run) */
    const QrF32Fused *f;     /* epilogue; NULL: none */
} QrKCocJob;
typedef void (*QrKCocTask)(void *ctx, int64_t t, int tid);
/* Packs one weight block of the coc path: dst (K, QR__K_COC_MB), dst[k][r] = a[r * lda + k] for
 * r < mv, zero for r >= mv (a copy: the sums do not change). */
typedef void (*QrKCocPack)(const float *a, int64_t lda, int64_t mv, int64_t K, float *dst);

/* An ISA's float32 GEMM: tile size, K block (measured: 256 for both 6x16 and 8x32 on
 * Zen 4), ukr[r-1] for r = 1..mr rows, the sequential dot products (N = 1) and the B
 * packers. */
typedef struct QrKF32Isa {
    int mr, nr, kc;
    QrKF32Ukr ukr[QR__K_MAXMR];
    QrKF32DotSeq dotseq;
    QrKF32PackB pack_b;
    /* Packs B's transpose (QrF32GemmBtFn): nr <= NR rows of kc floats of Bt (row stride ldb)
     * into dst (kc, NR) as B's block, dst[k][q] = b[q * ldb + k], zero past nr. */
    QrKF32PackB pack_bt;
    QrKF32PackConv pack_conv;
    /* optional narrow kernels for a last panel of few columns: up to nr/2 and nr/4 columns,
     * reading the nr-wide packed panel (NULL: the full-width kernel with masks) */
    QrKF32Ukr ukr_half[QR__K_MAXMR], ukr_quarter[QR__K_MAXMR];
    QrKF32DeqPanel deq_panel;   /* a quantized B (QrF32Fused.qb) dequantized into its panels */
    QrKCocTask coc;             /* a task of qr__k_f32_coc_run (NULL: the level has none) */
    /* a full prepacked panel and the task's narrow last panel in one pass (NULL: none) */
    QrKF32UkrWide ukr_wide[QR__K_MAXMR];
    QrKCocPack coc_pack;        /* the coc path's weight blocks (NULL: plain C) */
} QrKF32Isa;

/* A run of a B panel's columns that lies in one output row of a convolution: panel
 * columns [q0, q0 + len) are output (oh, ow0 .. ow0 + len). */
typedef struct QrKConvSeg { int q0, len; int64_t oh, ow0; } QrKConvSeg;

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
/* Splits panel columns [n0, n0 + nr) into output-row runs; returns their count (<= nr). */
static int qr__k_conv_segs(const QrF32ConvB *b, int64_t n0, int nr, QrKConvSeg *seg) {
    int ns = 0;
    for (int q = 0; q < nr;) {
        int64_t p = n0 + q, oh = p / b->OW, ow = p % b->OW;
        int len = (int)QR_MIN((int64_t)(nr - q), b->OW - ow);
        seg[ns++] = (QrKConvSeg){ q, len, oh, ow };
        q += len;
    }
    return ns;
}
#endif

/* Bits i in [0, n) with lo <= base + i < hi (n <= 32). */
static inline uint32_t qr__k_bits(int64_t lo, int64_t hi, int64_t base, int n) {
    int64_t a = QR_MAX(lo - base, 0), b = QR_MIN(hi - base, (int64_t)n);
    if (b <= a) return 0;
    return (uint32_t)((((uint64_t)1 << b) - 1) & ~(((uint64_t)1 << a) - 1));
}

/* floor(a / b) for b > 0 */
static inline int64_t qr__k_fdiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
/* QrKF32PackConv in plain C (any stride): element by element. */
static void qr__k_conv_pack_c(const QrF32ConvB *b, int64_t k0, int64_t kc, int64_t n0, int nr, int NR, float *dst) {
    QrKConvSeg seg[64];
    int ns = qr__k_conv_segs(b, n0, nr, seg);
    const int64_t KK = b->KH * b->KW;
    int64_t c = k0 / KK, kh = k0 % KK / b->KW, kw = k0 % b->KW;
    for (int64_t k = 0; k < kc; k++, dst += NR) {
        for (int q = nr; q < NR; q++) dst[q] = 0.0f;
        for (int si = 0; si < ns; si++) {
            const QrKConvSeg *g = &seg[si];
            int64_t ih = g->oh * b->sh - b->ph + kh * b->dh, iw = g->ow0 * b->sw - b->pw + kw * b->dw;
            const float *row = b->x + (c * b->H + ih) * b->W;
            bool in = ih >= 0 && ih < b->H;
            for (int q = 0; q < g->len; q++, iw += b->sw) dst[g->q0 + q] = in && iw >= 0 && iw < b->W ? row[iw] : 0.0f;
        }
        if (++kw == b->KW) { kw = 0; if (++kh == b->KH) { kh = 0; c++; } }
    }
}
#endif

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
/* QrKF32Isa.pack_bt in plain C for an NR-wide panel: Bt's rows one after the other into the
 * panel's columns. Inlined into an ISA's packer, compiled for its target. */
static inline __attribute__((always_inline)) void qr__k_pack_bt_c(const float *b, int64_t ldb, int64_t kc, int nr,
                                                                  int NR, float *dst) {
    for (int q = 0; q < NR; q++) {
        const float *src = b + q * ldb;
        if (q < nr) for (int64_t k = 0; k < kc; k++) dst[k * NR + q] = src[k];
        else for (int64_t k = 0; k < kc; k++) dst[k * NR + q] = 0.0f;
    }
}
#endif

typedef struct QrKF32Job {
    const QrKF32Isa *isa;
    int64_t M, N, K, lda, ldb, ldc;
    const float *A, *B;
    const QrF32ConvB *conv;     /* not NULL: B is this convolution's implicit im2col */
    float *C;
    bool accumulate;
    bool b_trans;               /* B holds B's transpose (N, K), row stride ldb: every panel packed */
    bool pack_full;             /* pack full-width panels too (a plain product, qr__k_f32_run) */
    const QrF32Fused *f;        /* NULL: no epilogue */
    const QrF32QuantB *qb;      /* not NULL: B is these integers (f->qb), every panel dequantized as it is packed */
    int64_t kc;                 /* K block: the ISA's, or a convolution's (qr__k_conv_kc) */
    bool conv_sum;              /* sum like MlasConv: bias after the last block */
    bool sweep;                 /* one K block: row tiles sweep the panels (qr__k_f32_task) */
    unsigned char *tid_mem;     /* per thread: B panel (kc*nr), or all of a task's (sweep) */
    size_t tid_bytes;
    float *pre;                 /* not NULL: a convolution's B, every panel packed once (qr__k_f32_prepack_task) */
    bool wide_direct;           /* a 1x1 convolution's B read in place, several K blocks: the wide kernel
                                 * packs its two panels into the thread's buffer (2 panels) */
    QrKTiles tl;
} QrKF32Job;

/* One task: rows [i0, i1) x columns [j0, j1) of C, all of K. A is read in place (its
 * (MC, KC) block stays in L2 across the column panels); a plain GEMM's full-width B
 * micro-panels are read in place too (row stride ldb: the hardware prefetcher follows
 * the rows, and skipping the copy measured faster on Zen 4 for every 1x1-convolution
 * shape of ResNet-18 / MobileNetV2), while narrow last panels and convolution panels are
 * packed into this thread's buffer.
 *
 * Tile order. With several K blocks, each block sweeps the panels and, per panel, the row
 * tiles (the packed panel is reused by every row tile). With one K block (j->sweep: the
 * task's packed panels fit the thread's buffer together), each row tile sweeps all the
 * panels instead, so the tile's mr output rows are written front to back, mr streams the
 * hardware prefetcher follows; panel-major order writes 128 bytes to each of mc rows in
 * turn, more streams than it tracks, and every line of an output that is not in the cache
 * (MobileNetV2's 4.8 MB 112x112x96 expansion) then waits for memory: 2x slower measured.
 * The sums are the same either way: every element is one chain per K block. */
typedef struct QrKF32Panel {
    const float *b;
    int64_t bs;
    int w0, w1;
    QrKF32Ukr const *u0, *u1;   /* u0 NULL: no micro-kernel part (a panel of one column) */
    int col1;                   /* >= 0: this column of the panel (its last, alone) by qr__k_f32_col1 */
} QrKF32Panel;

enum { QR__K_COL1_MAXK = 2048 };

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
/* Panel jr (nr columns) of K block pc: read in place or packed into bp; the micro-kernels
 * that cover it (full width, or, a narrow last panel, half and quarter). */
/* Panel jr (nr <= NR columns) of K block [pc, pc + kc) of a quantized B (j->qb) into dst (kc, NR),
 * zero past nr: each value dequantized as DequantizeLinear computes it (the ISA's deq_row), so the
 * panel holds what pack_b / pack_bt would pack from the dequantized copy. A transposed B (N, K) is
 * dequantized 64 values of K at a time into rows on the stack, which pack_bt transposes. */
static void qr__k_f32_pack_q(const QrKF32Job *j, int64_t pc, int64_t kc, int64_t jr, int nr, float *dst) {
    enum { CK = 64, MAXNR = 32 };
    const QrF32QuantB *qb = j->qb;
    const int NR = j->isa->nr;
    const unsigned char *q = qb->q;
    int32_t z[MAXNR] = { 0 };
    float s[MAXNR] = { 0 };
    for (int t = 0; t < nr; t++) {
        z[t] = qb->zp ? qb->zp[(jr + t) * qb->zps] : 0;
        s[t] = qb->scale[(jr + t) * qb->ss];
    }
    if (!j->b_trans) {
        j->isa->deq_panel(q + pc * j->ldb + jr, qb->q_signed, j->ldb, kc, nr, z, s, dst);
        return;
    }
    float tmp[MAXNR * CK] __attribute__((aligned(64)));
    for (int64_t k0 = 0; k0 < kc; k0 += CK) {
        const int64_t ck = QR_MIN((int64_t)CK, kc - k0);
        for (int t = 0; t < nr; t++)
            qr_kern.q8_dequantize(ck, q + (jr + t) * j->ldb + pc + k0, qb->q_signed, z[t], s[t], tmp + t * CK);
        j->isa->pack_bt(tmp, CK, ck, nr, dst + k0 * NR);
    }
}

static void qr__k_f32_panel(const QrKF32Job *j, int64_t pc, int64_t kc, int64_t jr, int nr, float *bp, QrKF32Panel *p) {
    const int NR = j->isa->nr, H = NR / 2, Q = NR / 4;
    p->b = bp;
    p->bs = NR;
    if (j->qb) {
        qr__k_f32_pack_q(j, pc, kc, jr, nr, bp);
    } else if (j->pre) {
        p->b = j->pre + (pc * qr__k_cdiv(j->N, NR) + jr / NR * kc) * NR;
    } else if (j->conv) {
        j->isa->pack_conv(j->conv, pc, kc, jr, nr, bp);
    } else if (j->b_trans) {
        j->isa->pack_bt(j->B + jr * j->ldb + pc, j->ldb, kc, nr, bp);
    } else if (nr == NR && !j->pack_full) {   /* a convolution's 1x1 GEMM: measured on Zen 4, reading B in place beats packing it, even for 24 row panels */
        p->b = j->B + pc * j->ldb + jr;
        p->bs = j->ldb;
    } else {
        j->isa->pack_b(j->B + pc * j->ldb + jr, j->ldb, kc, nr, bp);
    }
    /* (A last column or two as dot products along K would be cheaper, but would not sum
     * each element as one chain of fused multiply-adds as the micro-kernels and ORT's
     * kernels do.) */
    p->w0 = nr;
    p->w1 = 0;
    p->u0 = j->isa->ukr;
    p->u1 = NULL;
    p->col1 = -1;
    if (nr <= 3 * Q && j->isa->ukr_half[0]) {
        if (nr <= Q) { p->u0 = j->isa->ukr_quarter; }
        else if (nr <= H) { p->u0 = j->isa->ukr_half; }
        else { p->u0 = j->isa->ukr_half; p->w0 = H; p->u1 = j->isa->ukr_quarter; p->w1 = nr - H; }
    }
    /* a last column alone (49 = 32 + 16 + 1: 7x7 layers) in a quarter kernel uses 1 of its
     * lanes; dot products down the rows do it 16 rows per vector */
    if (nr < NR && kc <= QR__K_COL1_MAXK && (p->u1 ? p->w1 : p->w0) == 1) {
        p->col1 = nr - 1;
        if (p->u1) p->u1 = NULL;
        else p->u0 = NULL;
    }
}

/* Column jr of C, rows [i0, i1) (<= QR__K_F32_MC_PACKED), in K block pc (the last when `last`),
 * from its B column (kc values, stride cs) by the ISA's dot products (QrKF32DotSeq: the
 * micro-kernels' chain of fused multiply-adds from +0 for each element), then finished in
 * the micro-kernels' order (QrKF32Out): the bias first (plain GEMM, first block), the add to
 * C, the bias after (a convolution's last block), then residual, clamp and ReLU. */
static void qr__k_f32_col1(const QrKF32Job *j, int64_t pc, int64_t kc, bool last, int64_t i0, int64_t i1, int64_t jr,
                           const float *colp, int64_t cs) {
    float col[QR__K_COL1_MAXK], v[QR__K_F32_MC_PACKED];   /* a packed task has up to 256 rows */
    for (int64_t k = 0; k < kc; k++) col[k] = colp[k * cs];
    j->isa->dotseq(j->A + i0 * j->lda + pc, j->lda, col, kc, i1 - i0, v);
    const QrF32Fused *f = j->f;
    const float *bias = f ? f->ep.bias : NULL;
    const bool add = j->accumulate || pc > 0;
    for (int64_t r = 0; r < i1 - i0; r++) {
        const int64_t m = i0 + r;
        float *c = j->C + m * j->ldc + jr, x = v[r];
        if (bias && !j->conv_sum && pc == 0) x = x + bias[m];
        if (add) x = *c + x;
        if (bias && j->conv_sum && last) x = x + bias[m];
        if (f && last) x = qr__k_ep_tail(f, x, m, jr);
        *c = x;
    }
}
#endif

/* Row tile ir of panel p (columns from jr) in K block pc (the last one when `last`). */
static inline void qr__k_f32_tile(const QrKF32Job *j, const QrKF32Panel *p, int64_t pc, int64_t kc, bool last,
                                  int64_t ir, int mr, int64_t jr, QrKF32Out *o) {
    const QrF32Fused *f = j->f;
    const QrF32Epilogue *ep = f ? &f->ep : NULL;
    const float *a = j->A + ir * j->lda + pc;
    float *c = j->C + ir * j->ldc + jr;
    o->bias = (j->conv_sum ? last : pc == 0) && ep && ep->bias ? ep->bias + ir : NULL;
    o->bias_after = j->conv_sum;
    o->res = f && last && f->res ? f->res + ir * f->ldres + jr : NULL;
    if (p->u0) p->u0[mr - 1](kc, a, j->lda, p->b, p->bs, c, j->ldc, p->w0, o);
    if (!p->u1) return;
    QrKF32Out o1 = *o;
    if (o1.res) o1.res += p->w0;
    p->u1[mr - 1](kc, a, j->lda, p->b + p->w0, p->bs, c + p->w0, j->ldc, p->w1, &o1);
}

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
/* The micro-kernels' finish for K block pc (the last one when `last`). */
static inline QrKF32Out qr__k_f32_out(const QrKF32Job *j, int64_t pc, bool last) {
    const QrF32Fused *f = j->f;
    QrKF32Out o = { .add = j->accumulate || pc > 0, .lo = -INFINITY, .hi = INFINITY };
    if (f && last) {
        o.clamp = f->ep.lo > -INFINITY || f->ep.hi < INFINITY;
        o.lo = f->ep.lo;
        o.hi = f->ep.hi;
        o.relu = f->relu;
        o.res_first = f->res_first;
        o.ldres = f->ldres;
    }
    return o;
}

/* ---- prefetch of the next B panel ----
 * A Linear layer's weight comes from memory (or the shared L3) on every run: a transformer's
 * weights are hundreds of MB. Its panel rows are 3-12 KB apart, each in another 4 KB page, a
 * pattern the hardware prefetcher does not follow, so packing a panel waited on its 512 cache
 * lines a few at a time (pack_b took 14% of the micro-kernels' time at ViT-B's fc1, B from L3
 * or from memory). While the row tiles of one panel run, the source rows of the next panel the
 * task packs are prefetched into L2, a share before each tile; the packer then reads them from
 * L2. Measured (Xeon AVX-512, one thread, B cold as bench/kern_bench.c's BENCH_COLD makes it,
 * with and without in alternate calls of one process, under load): ViT-B qkv, proj, fc1 and
 * BERT fc1 3-5% more GFLOP per CPU second at one thread, fc2 (K = 3072) unchanged; at two,
 * fc1 +6%, qkv, proj, BERT fc1 +1-3%, fc2 -3%. Into L1 instead, or only a row's first line,
 * measured slower; handing each tile's rows to the AVX-512 kernel to spread among its
 * multiply-adds measured no faster (2-5% slower at two threads), although the prefetches issued
 * together wait for fill buffers: in ViT-B runall's sensitivity stage the driver loop took
 * ~0.9 CPU s of the ~1.1 that pack_b gave back. Only reads of B are added: the panels and
 * every sum stay the same. */
typedef struct QrKF32Pf {
    const unsigned char *p;   /* next row's first byte; NULL: nothing (left) to prefetch */
    int64_t ld, rows, step;   /* row stride in bytes, rows left, rows per row tile */
    int64_t bytes;            /* bytes of each row the panel reads */
} QrKF32Pf;

#ifdef QR_TESTING
static void (*qr__k_pf_hook)(const void *line);   /* tests: sees each line prefetched */
#endif

/* The prefetch of panel jr (nr columns) of K block [pc, pc + kc), spread over `tiles` row tiles,
 * for the panels packed from rows of memory: a Linear layer's B (pack_full) or a quantized B,
 * not transposed (a transposed B's panel is nr contiguous rows, which the hardware follows). */
static QrKF32Pf qr__k_f32_pf_init(const QrKF32Job *j, int64_t pc, int64_t kc, int64_t jr, int nr, int64_t tiles) {
    QrKF32Pf pf = { 0 };
    if (j->b_trans || j->conv || (!j->qb && !j->pack_full) || pc >= j->K) return pf;
    const int64_t el = j->qb ? 1 : (int64_t)sizeof(float);
    pf.p = (const unsigned char *)(j->qb ? j->qb->q : (const void *)j->B) + (pc * j->ldb + jr) * el;
    pf.ld = j->ldb * el;
    pf.rows = kc;
    pf.step = qr__k_cdiv(kc, QR_MAX(tiles, (int64_t)1));
    pf.bytes = nr * el;
    return pf;
}

/* Prefetches every cache line of the next pf->step rows into L2. */
static inline void qr__k_f32_pf_step(QrKF32Pf *pf) {
    if (!pf->p) return;
    const int64_t n = QR_MIN(pf->step, pf->rows);
    for (int64_t r = 0; r < n; r++, pf->p += pf->ld) {
        const uintptr_t a = (uintptr_t)pf->p & ~(uintptr_t)63, e = ((uintptr_t)pf->p + (uintptr_t)pf->bytes - 1) & ~(uintptr_t)63;
        for (uintptr_t x = a; x <= e; x += 64) {
#ifdef QR_TESTING
            if (qr__k_pf_hook) qr__k_pf_hook((const void *)x);
#endif
            __builtin_prefetch((const void *)x, 0, 2);
        }
    }
    pf->rows -= n;
    if (pf->rows == 0) pf->p = NULL;
}


/* Row tile ir (mr rows) of a full packed panel b (columns jr .. jr + NR) and the narrow packed
 * panel b2 after it (nr2 columns) in one pass of the wide kernel, finished as o0 says. */
static inline void qr__k_f32_wide_tile(const QrKF32Job *j, const float *b, const float *b2, int nr2, int64_t pc,
                                       int64_t kc, bool last, int64_t ir, int mr, int64_t jr, const QrKF32Out *o0) {
    const QrF32Fused *f = j->f;
    QrKF32Out o = *o0;
    o.bias = (j->conv_sum ? last : pc == 0) && f && f->ep.bias ? f->ep.bias + ir : NULL;
    o.bias_after = j->conv_sum;
    o.res = f && last && f->res ? f->res + ir * f->ldres + jr : NULL;
    j->isa->ukr_wide[mr - 1](kc, j->A + ir * j->lda + pc, j->lda, b, b2, j->C + ir * j->ldc + jr, j->ldc, nr2, &o);
}

/* The full panel pan (columns jr .. jr + NR) and the task's last panel after it (up to j1,
 * prepacked, or packed into bp: a 1x1 convolution's B read in place, j->wide_direct, whose
 * full panel is then packed at bp and the last one after it) in the wide kernel when that
 * panel runs in one narrow kernel (its last column perhaps by qr__k_f32_col1): the A rows are
 * broadcast once for both (the narrow kernels are bound by those loads: a 7x7 layer's
 * 49 = 32 + 16 + 1 columns). Returns false, having done nothing it would not redo, when the
 * last panel does not fit that. The sums are the same as panel by panel. */
static bool qr__k_f32_wide(const QrKF32Job *j, const QrKF32Panel *pan0, float *bp, int64_t pc, int64_t kc, bool last,
                           int64_t i0, int64_t i1, int64_t jr, int64_t j1, const QrKF32Out *o0) {
    const int NR = j->isa->nr, MR = j->isa->mr;
    QrKF32Panel p2, pf = *pan0;
    const QrKF32Panel *pan = &pf;
    qr__k_f32_panel(j, pc, kc, jr + NR, (int)(j1 - jr - NR), j->pre ? NULL : bp + kc * NR, &p2);
    if (!p2.u0 || p2.u1 || pan->u1 || pan->col1 >= 0 || pan->w0 != NR) return false;
    if (pf.bs != NR) {   /* read in place: packed for the wide kernel */
        j->isa->pack_b(j->B + pc * j->ldb + jr, j->ldb, kc, NR, bp);
        pf.b = bp;
        pf.bs = NR;
    }
    for (int64_t ir = i0; ir < i1; ir += MR)
        qr__k_f32_wide_tile(j, pan->b, p2.b, p2.w0, pc, kc, last, ir, (int)QR_MIN(MR, i1 - ir), jr, o0);
    if (p2.col1 >= 0) qr__k_f32_col1(j, pc, kc, last, i0, i1, jr + NR + p2.col1, p2.b + p2.col1, p2.bs);
#ifdef QR_TESTING
    __atomic_add_fetch(&qr__k_wide_runs, 1, __ATOMIC_RELAXED);
#endif
    return true;
}

static void qr__k_f32_task(void *ctx, int64_t t, int tid) {
    const QrKF32Job *j = ctx;
    const int MR = j->isa->mr, NR = j->isa->nr;
    const int64_t KC = j->kc;
    const int64_t mi = t % j->tl.n_mc, si = t / j->tl.n_mc;
    const int64_t i0 = mi * j->tl.mc, i1 = QR_MIN(j->M, i0 + j->tl.mc);
    /* (the last slice reaches N: it may be wider than ns, see qr__k_f32_run) */
    const int64_t j0 = si * j->tl.ns, j1 = si == j->tl.n_ns - 1 ? j->N : QR_MIN(j->N, j0 + j->tl.ns);
    float *bp = (float *)(j->tid_mem + (size_t)tid * j->tid_bytes);
    const QrF32Fused *f = j->f;
    for (int64_t pc = 0; pc < j->K; pc += KC) {
        const int64_t kc = QR_MIN(KC, j->K - pc);
        const bool last = pc + KC >= j->K;
        QrKF32Out o = qr__k_f32_out(j, pc, last);
        if (j->sweep) {   /* one K block: the panels first, then each row tile across them */
            QrKF32Panel pan[QR__K_F32_NS_SWEEP / 8];
            int np = 0;
            for (int64_t jr = j0; jr < j1; jr += NR, np++)
                qr__k_f32_panel(j, pc, kc, jr, (int)QR_MIN(NR, j1 - jr), bp + np * kc * NR, &pan[np]);
            /* a convolution's last full panel and a narrow last one (run in one narrow kernel, its
             * last column perhaps by col1) in the wide kernel, as qr__k_f32_wide does: nw panels
             * one by one, then that pair */
            int nw = np;
            if (j->conv_sum && j->isa->ukr_wide[0] && np >= 2 && pan[np - 1].u0 && !pan[np - 1].u1 &&
                pan[np - 1].w0 <= NR / 2 && pan[np - 1].bs == NR && pan[np - 2].w0 == NR && !pan[np - 2].u1 && pan[np - 2].col1 < 0) {
                nw = np - 2;
                if (pan[nw].bs != NR) {   /* read in place: packed into its place in the buffer */
                    float *d = bp + nw * kc * NR;
                    j->isa->pack_b(j->B + pc * j->ldb + j0 + nw * NR, j->ldb, kc, NR, d);
                    pan[nw].b = d;
                    pan[nw].bs = NR;
                }
#ifdef QR_TESTING
                __atomic_add_fetch(&qr__k_wide_runs, 1, __ATOMIC_RELAXED);
#endif
            }
            for (int64_t ir = i0; ir < i1; ir += MR) {
                const int mr = (int)QR_MIN(MR, i1 - ir);
                for (int k = 0; k < nw; k++) qr__k_f32_tile(j, &pan[k], pc, kc, last, ir, mr, j0 + k * NR, &o);
                if (nw < np)
                    qr__k_f32_wide_tile(j, pan[nw].b, pan[nw + 1].b, pan[nw + 1].w0, pc, kc, last, ir, mr, j0 + nw * NR, &o);
            }
            for (int k = 0; k < np; k++)
                if (pan[k].col1 >= 0)
                    qr__k_f32_col1(j, pc, kc, last, i0, i1, j0 + k * NR + pan[k].col1, pan[k].b + pan[k].col1, pan[k].bs);
            continue;
        }
        for (int64_t jr = j0; jr < j1; jr += NR) {
            QrKF32Panel pan;
            qr__k_f32_panel(j, pc, kc, jr, (int)QR_MIN(NR, j1 - jr), bp, &pan);
            if ((j->pre || j->wide_direct) && j->isa->ukr_wide[0] && j1 - jr > NR && j1 - jr <= NR + NR / 2 + 1 &&
                qr__k_f32_wide(j, &pan, bp, pc, kc, last, i0, i1, jr, j1, &o))
                break;
            /* the next panel this task packs: the next of this K block, or the first of the next block */
            const int64_t npc = jr + NR < j1 ? pc : pc + KC, njr = jr + NR < j1 ? jr + NR : j0;
            QrKF32Pf pf = qr__k_f32_pf_init(j, npc, QR_MIN(KC, j->K - npc), njr, (int)QR_MIN(NR, j1 - njr),
                                            qr__k_cdiv(i1 - i0, MR));
            for (int64_t ir = i0; ir < i1; ir += MR) {
                qr__k_f32_pf_step(&pf);
                qr__k_f32_tile(j, &pan, pc, kc, last, ir, (int)QR_MIN(MR, i1 - ir), jr, &o);
            }
            if (pan.col1 >= 0) qr__k_f32_col1(j, pc, kc, last, i0, i1, jr + pan.col1, pan.b + pan.col1, pan.bs);
        }
    }
    if (f && f->post) f->post(f->post_ctx, j->C + i0 * j->ldc + j0, j->ldc, i0, i1 - i0, j0, j1 - j0);
}
#endif

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
/* Packs panel t % NP of K block t / NP of a convolution's B into j->pre: block pc's panels
 * start at pc * NP * NR floats, panel p of a block of kc rows at p * kc * NR after that. */
static void qr__k_f32_prepack_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrKF32Job *j = ctx;
    const int NR = j->isa->nr;
    const int64_t NP = qr__k_cdiv(j->N, NR), pc = t / NP * j->kc, jr = t % NP * NR, kc = QR_MIN(j->kc, j->K - pc);
    j->isa->pack_conv(j->conv, pc, kc, jr, (int)QR_MIN(NR, j->N - jr), j->pre + (pc * NP + jr / NR * kc) * NR);
}
#endif

/* N = 1: C[m] (+)= dot(A row m, b) over row blocks; b is B's column made contiguous. */
typedef struct QrKF32Gemv {
    const QrKF32Isa *isa;
    const float *A, *b;
    int64_t M, K, lda, ldc, rows;
    float *C;
    bool acc;
    const QrF32Fused *f;
} QrKF32Gemv;

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
static void qr__k_f32_gemv_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrKF32Gemv *g = ctx;
    const int64_t m0 = t * g->rows, m1 = QR_MIN(g->M, (t + 1) * g->rows), kc = g->isa->kc;
    const float *bias = g->f ? g->f->ep.bias : NULL;
    float v[16];
    /* 16 rows at a time through all of K: 16 read streams of a whole row each, which the
     * hardware prefetcher follows (64 rows per K block, as before, were 64 streams of one
     * block each: the classifier's 5 MB of weights then came from memory at half speed) */
    for (int64_t r0 = m0; r0 < m1; r0 += 16) {
        const int64_t nr = QR_MIN((int64_t)16, m1 - r0);
        for (int64_t pc = 0; pc < g->K; pc += kc) {   /* K blocks, summed as the GEMM sums them */
            g->isa->dotseq(g->A + r0 * g->lda + pc, g->lda, g->b + pc, QR_MIN(kc, g->K - pc), nr, v);
            for (int64_t r = 0; r < nr; r++) {
                float *c = g->C + (r0 + r) * g->ldc, x = v[r];
                if (pc == 0) {
                    if (bias) x = x + bias[r0 + r];
                    if (g->acc) x = *c + x;
                } else {
                    x = *c + x;
                }
                *c = x;
            }
        }
        if (g->f)
            for (int64_t r = 0; r < nr; r++) g->C[(r0 + r) * g->ldc] = qr__k_ep_tail(g->f, g->C[(r0 + r) * g->ldc], r0 + r, 0);
    }
    if (g->f && g->f->post && m1 > m0) g->f->post(g->f->post_ctx, g->C + m0 * g->ldc, g->ldc, m0, m1 - m0, 0, 1);
}

/* Runs C = epilogue(A @ B [+ C]) with an ISA's micro-kernels (see the top of the file).
 * Falls back to the ref kernel when the packing scratch cannot be allocated. */
static void qr__k_f32_run(const QrKF32Isa *isa, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                          const float *B, int64_t ldb, bool b_trans, const QrF32ConvB *conv, float *C, int64_t ldc,
                          bool accumulate, const QrF32Fused *f);

static void qr__k_f32_gemm(const QrKF32Isa *isa, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                           const float *B, int64_t ldb, bool b_trans, float *C, int64_t ldc, bool accumulate,
                           const QrF32Fused *f) {
#ifdef QR_TESTING
    __atomic_add_fetch(&qr_kern_f32_macs, M * N * K, __ATOMIC_RELAXED);
#endif
    qr__k_f32_run(isa, M, N, K, A, lda, B, ldb, b_trans, NULL, C, ldc, accumulate, f);
}

/* The convolution GEMM (QrF32ConvGemmFusedFn) with an ISA's micro-kernels and conv packing. */
static void qr__k_f32_conv_gemm(const QrKF32Isa *isa, int64_t M, const float *A, int64_t lda, const QrF32ConvB *b,
                                float *Y, int64_t ldy, const QrF32Fused *f) {
#ifdef QR_TESTING
    __atomic_add_fetch(&qr_kern_f32_macs, M * b->OH * b->OW * b->C * b->KH * b->KW, __ATOMIC_RELAXED);
#endif
    qr__k_f32_run(isa, M, b->OH * b->OW, b->C * b->KH * b->KW, A, lda, NULL, 0, false, b, Y, ldy, false, f);
}

/* The K block ONNX Runtime's MlasConv sums a convolution's GEMM in on one thread: MLAS's
 * SGEMM stride (128), halved while half of it still covers K (N >= K), or doubled while
 * the N stride (128) can halve and still cover N (N < K). Each block is summed from zero
 * and added to the blocks before it; the bias comes after the last (MlasActivation). */
static int64_t qr__k_conv_kc(int64_t K, int64_t N) {
    int64_t sn = 128, sk = 128;
    if (N >= K) {
        while (sk / 2 >= K) {
            sn *= 2;
            sk /= 2;
        }
    } else {
        while (sn > 16 && sn / 2 >= N) {
            sk *= 2;
            sn /= 2;
        }
    }
    return sk;
}

/* ---- convolutions with the output channels along the vectors ----
 * The GEMM path gathers a convolution's B panels from the image (implicit im2col): K x N
 * floats written and read again, for a layer of many pixels and few channels far more than
 * its weights (ResNet-18's first layers: 7 MB of panels against 147 KB of weights; the gather
 * was 16-18% of their time on one thread). There the weights are packed instead, M x K once
 * per call, and the image is read in place, each tap broadcast: a tile of up to 14 pixels of
 * an output row times 32 channels is 24 accumulators, two weight vectors and 12 broadcasts per
 * tap. Every element is still one chain of fused multiply-adds per K block (MlasConv's, kc),
 * the blocks added in order and the bias after the last, so the bits are the GEMM path's. */

/* Weight block t of the coc path into dst (K, MB): dst[k][j] = A[(t*MB + j)*lda + k], zero past M. */
static void qr__k_coc_pack_block(QrKCocPack pack, const float *A, int64_t lda, int64_t M, int64_t K, int64_t t,
                                 float *dst) {
    const int64_t MB = QR__K_COC_MB, mv = QR_MIN(MB, M - t * MB);
    if (pack) {
        pack(A + t * MB * lda, lda, mv, K, dst);
        return;
    }
    for (int64_t k0 = 0; k0 < K; k0 += 64) {   /* 64 K values of every row at a time: MB read streams */
        const int64_t k1 = QR_MIN(K, k0 + 64);
        for (int64_t r = 0; r < MB; r++) {
            const float *a = A + (t * MB + r) * lda;
            for (int64_t k = k0; k < k1; k++) dst[k * MB + r] = r < mv ? a[k] : 0.0f;
        }
    }
}

typedef struct QrKCocPrep {
    const QrKCocJob *j;
    const QrF32ConvB *b;
    const float *A;
    int64_t lda, Hp, n;   /* n: tasks */
    int64_t nw;           /* weight blocks to pack (0: the caller's, QrF32Fused.a_pack) */
    float *wt, *xp;
    QrKCocPack pack;      /* NULL: plain C */
} QrKCocPrep;

/* Prep task t of n: rows [t*Hp/n, (t+1)*Hp/n) of every channel of the zero-padded image, and
 * weight blocks [t*nw/n, (t+1)*nw/n). Bands of rows, in the order of the coc tasks' rows: the
 * pool hands a thread the same share of both jobs (and of the layer before, whose output rows
 * these are), so a thread mostly reads what it wrote itself (on a machine whose two threads
 * sit on different L3 caches, copies by channel were 4-5x slower than alone). */
static void qr__k_coc_prep_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrKCocPrep *p = ctx;
    const QrKCocJob *j = p->j;
    for (int64_t w = t * p->nw / p->n; w < (t + 1) * p->nw / p->n; w++)
        qr__k_coc_pack_block(p->pack, p->A, p->lda, j->M, j->K, w, p->wt + w * j->K * QR__K_COC_MB);
    const QrF32ConvB *b = p->b;
    const int64_t Wp = j->Wp, i0 = t * p->Hp / p->n, i1 = (t + 1) * p->Hp / p->n;
    const int64_t lo = QR_MIN(Wp, b->pw), hi = QR_MAX(lo, QR_MIN(Wp, b->pw + b->W));
    for (int64_t i = i0; i < i1; i++) {   /* padded row i of every channel: one run of C * Wp floats */
        float *band = p->xp + i * b->C * Wp;
        const int64_t ih = i - b->ph;
        if (ih < 0 || ih >= b->H) {
            memset(band, 0, (size_t)(b->C * Wp) * sizeof(float));
            continue;
        }
        /* the pads a few floats each, the row one memcpy (the copy is ~4% of a 56x56 layer
         * alone either way: reading the image and writing the padded one, not the calls) */
        for (int64_t c = 0; c < b->C; c++) {
            float *row = band + c * Wp;
            for (int64_t x = 0; x < lo; x++) row[x] = 0.0f;
            memcpy(row + lo, b->x + (c * b->H + ih) * b->W + (lo - b->pw), (size_t)(hi - lo) * sizeof(float));
            for (int64_t x = hi; x < Wp; x++) row[x] = 0.0f;
        }
    }
}

/* The coc path's layout of convolution b with M output channels: padded image (Hp, C, Wp),
 * nblk weight blocks, and the bytes of the packed weights, the padded image and the tap
 * offsets. */
typedef struct QrKCocShape {
    int64_t Hp, Wp, nblk, OH, OW;   /* OH, OW: the run's rows (flat: 1 x N) */
    bool flat;                      /* 1x1, stride 1, unpadded: one row, the image read in place */
    size_t wt_b, xp_b, off_b;
} QrKCocShape;

/* Whether convolution b is a 1x1, stride 1, unpadded one: its image is its B (C, N). */
static inline bool qr__k_conv_flat(const QrF32ConvB *b) {
    return b->KH == 1 && b->KW == 1 && b->sh == 1 && b->sw == 1 && b->ph == 0 && b->pw == 0 && b->OH == b->H &&
           b->OW == b->W;
}

/* Whether the coc path takes a 1x1, stride 1, unpadded convolution (run flat, one row of N
 * pixels): only with its weights packed by the caller (`qreport run`'s cache: packed per call,
 * ~10% of a 7x7 layer's time, it was 4-9% slower than the GEMM path) and then for planes of up
 * to 256 pixels (MobileNetV2's 7x7 and 14x14 layers), where a model run reads their weights from
 * memory: the coc path prefetches its packed weights ahead (QR__K_COC_PF), the GEMM path reads
 * them in place, 8 rows a row tile. MobileNetV2's 14x14 expansion 96 -> 576 alone, one thread,
 * Zen 5: GEMM path 97 us hot, 133 with its weights cold; coc path 103 / 108. (Without the
 * prefetch, on Zen 4, the 14x14 layers with K < 2M measured 2-5% slower on the coc path and
 * stayed on the GEMM path.) 28x28 layers stay there (24 KB of weights: 42 / 50 us against
 * 43 / 47-49, no gain). */
static bool qr__k_coc_flat_takes(int64_t N, bool given) {
    return given && N <= 256;
}

/* A flat coc run's tasks: about this many per thread, as runs of tiles of one channel block
 * (MobileNetV2's 7x7 960->160 layers, 5 blocks of 4 tiles: with 2 per thread, 5 tasks of a
 * whole block, they measured 9-17% slower on 2 threads; 8 measured the same as 4) */
#define QR__K_COC_FLAT_TASKS 4

/* Whether qr__k_f32_coc_run takes the convolution: stride 1 or 2 along the row, at least 16
 * channels, at least twice as many output pixels as channels (then the packed weights are at
 * most half the size of the panels the GEMM path would gather) or, with output rows of 12
 * pixels or more, at least half as many (ResNet-18's 14x14 layers: their weights, packed per
 * call at ~10% of the layer's time, still left it 7-10% faster than the GEMM path on one thread;
 * its 7x7 layers, tiles of 7 pixels and 2.4-9.4 MB of weights packed per call, were 25-30%
 * slower on Zen 4 and stay there) — or any number of pixels when the caller packed the weights
 * (given: QrF32Fused.a_pack, `qreport run`'s cache): ResNet-18's layer4 alone on one thread, Zen 5,
 * weights cold / hot, 3x3 512 -> 512 1042 / 928 us against the GEMM path's 1229 / 1133, the 3x3/2
 * 256 -> 512 531 / 537 against 658 / 612, the 1x1/2 downsample 77 / 66 against 95 / 67 —, K >= 64
 * (below, a tile's transposes and stores cost more than the gather saves: MobileNetV2's first
 * layer, K = 27, measured 5% slower), and the copies (the weights too when they are packed here)
 * within 8 MiB of a thread's scratch. A 1x1, stride 1, unpadded convolution (flat) has its own
 * rule, above. */
static bool qr__k_coc_shape(const QrKF32Isa *isa, int64_t M, const QrF32ConvB *b, bool given, QrKCocShape *s) {
    const int64_t N = b->OH * b->OW, K = b->C * b->KH * b->KW, MB = QR__K_COC_MB;
    if (!isa->coc || (b->sw != 1 && b->sw != 2) || M < 16 || K < 64 || N <= 1) return false;
    s->flat = qr__k_conv_flat(b);
    if (s->flat) {
        if (!qr__k_coc_flat_takes(N, given)) return false;
    } else if (!given && N < 2 * M && (2 * N < M || b->OW < 12)) {
        return false;
    }
    s->OH = s->flat ? 1 : b->OH;
    s->OW = s->flat ? N : b->OW;
    s->Hp = s->flat ? 1 : (b->OH - 1) * b->sh + (b->KH - 1) * b->dh + 1;
    s->Wp = s->flat ? N : (b->OW - 1) * b->sw + (b->KW - 1) * b->dw + 1;
    s->nblk = qr__k_cdiv(M, MB);
    const int64_t xp_n = b->C * s->Hp * s->Wp;
    if (xp_n >= ((int64_t)1 << 31)) return false;
    s->wt_b = qr__k_rup64((size_t)(s->nblk * K * MB) * sizeof(float));
    s->xp_b = s->flat ? 0 : qr__k_rup64((size_t)xp_n * sizeof(float));
    s->off_b = qr__k_rup64((size_t)K * sizeof(int32_t));
    return (given ? 0 : s->wt_b) + s->xp_b + s->off_b <= ((size_t)8 << 20);
}

/* QrF32ConvPackBytesFn of an ISA: the coc path's packed weights, when it takes the convolution. */
static size_t qr__k_f32_conv_pack_bytes(const QrKF32Isa *isa, int64_t M, const QrF32ConvB *b) {
    QrKCocShape s;
    return qr__k_coc_shape(isa, M, b, true, &s) ? s.wt_b : 0;
}

/* QrF32ConvPackFn of an ISA: every weight block, on this thread. */
static void qr__k_f32_conv_pack(const QrKF32Isa *isa, int64_t M, const float *A, int64_t lda, const QrF32ConvB *b,
                                float *dst) {
    QrKCocShape s;
    if (!qr__k_coc_shape(isa, M, b, true, &s)) return;
    const int64_t K = b->C * b->KH * b->KW;
    for (int64_t t = 0; t < s.nblk; t++) qr__k_coc_pack_block(isa->coc_pack, A, lda, M, K, t, dst + t * K * QR__K_COC_MB);
}

/* Runs the convolution Y = epilogue(A @ B(b)) (QrF32ConvGemmFusedFn) by the ISA's coc tasks
 * when qr__k_coc_shape takes it, the weights from f->a_pack when the caller packed them.
 * Returns false, having written nothing, when it does not run. */
static bool qr__k_f32_coc_run(const QrKF32Isa *isa, int64_t M, const float *A, int64_t lda, const QrF32ConvB *b,
                              float *Y, int64_t ldy, const QrF32Fused *f, int threads) {
    QrKCocShape s;
    const float *given = f ? f->a_pack : NULL;
    if (!qr__k_coc_shape(isa, M, b, given != NULL, &s)) return false;
    const int64_t N = b->OH * b->OW, K = b->C * b->KH * b->KW, Hp = s.Hp, Wp = s.Wp, nblk = s.nblk;
    const size_t wt_b = given ? 0 : s.wt_b;
    unsigned char *mem = qr__k_scratch(wt_b + s.xp_b + s.off_b);
    if (!mem) return false;
    int32_t *off = (int32_t *)(mem + wt_b + s.xp_b);
    for (int64_t c = 0, k = 0; c < b->C; c++)
        for (int64_t kh = 0; kh < b->KH; kh++)
            for (int64_t kw = 0; kw < b->KW; kw++, k++) off[k] = (int32_t)((kh * b->dh * b->C + c) * Wp + kw * b->dw);
    const int64_t kc = qr__k_conv_kc(K, f && f->conv_n > 0 ? f->conv_n : N);   /* conv_n: a band of a larger output */
    QrKCocJob j = { s.flat ? b->x : (const float *)(mem + wt_b), given ? given : (const float *)mem, off, Y, ldy, M, K,
                    kc, s.OH, s.OW, Wp, b->sh, b->sw, nblk, b->C * Wp, 1, f };
    /* tasks of whole output rows, about 8 per thread when the layer has them; a flat run (one
     * row) in runs of tiles instead */
    const int64_t nt = qr__k_cdiv(s.OW, QR__K_COC_MAXP);
    if (s.flat) {
        const int64_t want = QR_MAX(1, qr__k_cdiv(QR__K_COC_FLAT_TASKS * (int64_t)threads, nblk));
        j.tiles = qr__k_cdiv(nt, QR_MIN(nt, want));
    } else {
        const int64_t want = QR_MAX(1, qr__k_cdiv(8 * (int64_t)threads, nblk));
        j.tiles = qr__k_cdiv(s.OH, QR_MIN(s.OH, want)) * nt;
    }
    /* about 64 KB of the padded image a prep task; a flat run, whose weights are always the
     * caller's (qr__k_coc_flat_takes), has nothing to prepare */
    const int64_t n_prep = s.flat ? 0 : QR_MIN(Hp, QR_MAX(1, qr__k_cdiv(b->C * Hp * Wp, (int64_t)1 << 14)));
    QrKCocPrep p = { &j, b, A, lda, Hp, QR_MAX(n_prep, 1), given ? 0 : nblk, (float *)mem, (float *)(mem + wt_b),
                     isa->coc_pack };
    const int64_t n_tasks = nblk * qr__k_cdiv(s.OH * nt, j.tiles);
    if (threads == 1) {
        for (int64_t t = 0; t < n_prep; t++) qr__k_coc_prep_task(&p, t, 0);
        for (int64_t t = 0; t < n_tasks; t++) isa->coc(&j, t, 0);
    } else {
        if (n_prep) qr_pool_for(n_prep, qr__k_coc_prep_task, &p);
        qr_pool_for(n_tasks, isa->coc, &j);
    }
#ifdef QR_TESTING
    __atomic_add_fetch(&qr__k_coc_runs, 1, __ATOMIC_RELAXED);
    if (!given) __atomic_add_fetch(&qr__k_coc_wpacks, 1, __ATOMIC_RELAXED);
    if (s.flat) __atomic_add_fetch(&qr__k_coc_flat_runs, 1, __ATOMIC_RELAXED);
#endif
    return true;
}

static void qr__k_f32_run(const QrKF32Isa *isa, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                          const float *B, int64_t ldb, bool b_trans, const QrF32ConvB *conv, float *C, int64_t ldc,
                          bool accumulate, const QrF32Fused *f) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0 || (conv && N == 1)) {   /* the refs do what an empty sum means; one output pixel: dot products */
        if (conv) qr_f32_conv_gemm_fused__ref(M, A, lda, conv, C, ldc, f);
        else qr_f32_gemm_fused__ref(M, N, 0, A, lda, B, ldb, C, ldc, accumulate, f);
        return;
    }
    const bool small = (double)M * (double)N * (double)K < QR_KERN_POOL_MIN_MACS;
    const int threads = small ? 1 : qr_pool_threads();
    QrF32Fused flat_f;
    if (conv && !accumulate) {
        if (qr__k_f32_coc_run(isa, M, A, lda, conv, C, ldc, f, threads)) return;
        if (qr__k_conv_flat(conv)) {   /* a 1x1 the coc path leaves: its image is B, read in place */
            flat_f = f ? *f : (QrF32Fused){ .ep = { NULL, -INFINITY, INFINITY } };
            flat_f.conv_n = f && f->conv_n > 0 ? f->conv_n : N;
            flat_f.a_pack = NULL;
            f = &flat_f;
            B = conv->x;
            ldb = N;
            b_trans = false;
            conv = NULL;
        }
    }
    if (N == 1 && !conv) {   /* tasks of whole 16-row groups: a partial group goes through the scalar dot products */
        QrKF32Gemv g = { isa, A, B, M, K, lda, ldc, qr__k_rup(qr__k_cdiv(M, 8 * (int64_t)threads), 16), C, accumulate, f };
        const QrF32QuantB *qb = f ? f->qb : NULL;
        if ((ldb != 1 && !b_trans) || qb) {   /* (B's one column is Bt's first row) */
            float *b = qr__k_scratch((size_t)K * sizeof(float));
            if (!b) {
                if (b_trans) qr_f32_gemm_bt_fused__ref(M, N, K, A, lda, B, ldb, C, ldc, accumulate, f);
                else qr_f32_gemm_fused__ref(M, N, K, A, lda, B, ldb, C, ldc, accumulate, f);
                return;
            }
            for (int64_t k = 0; k < K; k++) b[k] = qb ? qr__k_qb_at(qb, b_trans, ldb, k, 0) : B[k * ldb];
            g.b = b;
        }
        int64_t n_tasks = qr__k_cdiv(M, g.rows);
        if (threads == 1) for (int64_t t = 0; t < n_tasks; t++) qr__k_f32_gemv_task(&g, t, 0);
        else qr_pool_for(n_tasks, qr__k_f32_gemv_task, &g);
        return;
    }
    QrKF32Job j = { .isa = isa, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = ldc, .A = A, .B = B,
                    .conv = conv, .C = C, .accumulate = accumulate, .b_trans = b_trans, .f = f, .kc = isa->kc,
                    .qb = !conv && f ? f->qb : NULL };
    if (conv || (f && f->conv_n > 0)) {
        j.kc = qr__k_conv_kc(K, f && f->conv_n > 0 ? f->conv_n : N);
        j.conv_sum = true;
    }
    /* one K block: tasks as wide as 128 KB of packed panels allow (up to 2048 columns), so
     * that each output row is written in long runs (MobileNetV2's 112x112 expansion 5% faster
     * than with 512); several K blocks: 512 */
    int64_t ns_max = QR__K_F32_NS;
    if (K <= j.kc)
        while (ns_max < QR__K_F32_NS_SWEEP && (ns_max * 2) * j.kc * (int64_t)sizeof(float) <= ((int64_t)128 << 10))
            ns_max *= 2;
    /* A plain product (not a convolution's: a Linear layer, its B a weight) of enough rows packs
     * every B panel into the thread's buffer, and takes up to 256 rows per task: a panel read in
     * place spreads over few L1 sets when B's rows are a multiple of 1 KB apart (768 or 3072
     * floats: every transformer weight), so each row tile fetched it again from L2; packed, it
     * stays in L1 for every row tile and is fetched from memory once (ViT's 197 tokens in one
     * task). Measured under load (one thread, GFLOP/s per CPU second, Xeon AVX-512, the ViT-B/16
     * shapes of bench/kern_bench.c): 56-102 read in place, 78-132 packed. A MatMul summed as
     * MLAS's adapted SGEMM (conv_n: B not an initializer, e.g. a QDQ twin's dequantized weight)
     * packs too when it says so (pack_panels; a convolution's image does not): 4-11% faster on
     * the ViT-B/16 shapes (best of 15, one thread, Xeon AVX-512, under load), the same bits. */
    j.pack_full = !conv && (!j.conv_sum || (f && f->pack_panels)) && M >= 4 * (int64_t)isa->mr;
    j.tl = qr__k_tiles(M, N, isa->mr, isa->nr, j.pack_full ? QR__K_F32_MC_PACKED : QR__K_F32_MC, ns_max, threads);
    /* A convolution's last column slice of at most NR/2 + 1 columns (a 7x7 layer's 49 = 32 + 17
     * at two threads, a 14x14 layer's last 4 of 196) would run alone in the narrow kernels: with
     * several K blocks (its B then prepacked, below) it joins the slice before it, whose last full
     * panel takes it in the wide kernel, and the rows split finer instead (as qr__k_tiles does). */
    /* A 1x1 convolution's GEMM (B read in place, conv_n) of several K blocks runs its last two
     * panels in the wide kernel too, both packed into the thread's buffer (MobileNetV2's 7x7
     * layers: 49 columns). */
    j.wide_direct = !conv && j.conv_sum && !b_trans && !j.qb && isa->ukr_wide[0] && K > j.kc;
    if ((conv || j.wide_direct) && isa->ukr_wide[0] && K > j.kc && j.tl.n_ns > 1 &&
        N - (j.tl.n_ns - 1) * j.tl.ns <= isa->nr / 2 + 1) {
        j.tl.n_ns--;
        if (threads > 1 && j.tl.n_mc * j.tl.n_ns < 4 * (int64_t)threads) {
            const int64_t n_mc = QR_MIN(qr__k_cdiv(M, isa->mr), qr__k_cdiv(4 * (int64_t)threads, j.tl.n_ns));
            j.tl.mc = qr__k_rup(qr__k_cdiv(M, n_mc), isa->mr);
            j.tl.n_mc = qr__k_cdiv(M, j.tl.mc);
        }
    }
    j.tid_bytes = qr__k_rup64((size_t)((j.wide_direct ? 2 : 1) * j.kc * isa->nr) * sizeof(float));   /* B panel(s) */
    /* one K block whose packed panels for a task stay within 128 KB (L2): sweep order */
    const size_t sweep_bytes = qr__k_rup64((size_t)(j.kc * qr__k_rup(j.tl.ns, isa->nr)) * sizeof(float));
    j.sweep = K <= j.kc && j.tl.mc > isa->mr && sweep_bytes <= ((size_t)128 << 10) &&
              qr__k_cdiv(j.tl.ns, isa->nr) <= QR__K_F32_NS_SWEEP / 8;
    if (j.sweep) j.tid_bytes = sweep_bytes;
    /* A convolution whose rows split into several tasks packs each B panel once, all first,
     * instead of once per row chunk (ResNet-18's 7x7 layers: 3 row chunks, pack_conv 15% of
     * the time); the packed B (K x N rounded up to panels) goes after the threads' buffers. */
    const size_t pre_bytes = qr__k_rup64((size_t)(K * qr__k_rup(N, isa->nr)) * sizeof(float));
    const bool prepack = conv && j.tl.n_mc > 1 && pre_bytes <= QR__K_F32_PREPACK_MAX;
    j.tid_mem = qr__k_scratch(j.tid_bytes * (size_t)threads + (prepack ? pre_bytes : 0));
    if (j.tid_mem && prepack) {
        j.pre = (float *)(j.tid_mem + j.tid_bytes * (size_t)threads);
        const int64_t n_pack = qr__k_cdiv(K, j.kc) * qr__k_cdiv(N, isa->nr);
        if (threads == 1) for (int64_t t = 0; t < n_pack; t++) qr__k_f32_prepack_task(&j, t, 0);
        else qr_pool_for(n_pack, qr__k_f32_prepack_task, &j);
    }
    if (!j.tid_mem) {
        if (conv) qr_f32_conv_gemm_fused__ref(M, A, lda, conv, C, ldc, f);
        else if (b_trans) qr_f32_gemm_bt_fused__ref(M, N, K, A, lda, B, ldb, C, ldc, accumulate, f);
        else qr_f32_gemm_fused__ref(M, N, K, A, lda, B, ldb, C, ldc, accumulate, f);
        return;
    }
    if (threads == 1) {
        for (int64_t t = 0; t < j.tl.n_mc * j.tl.n_ns; t++) qr__k_f32_task(&j, t, 0);
        return;
    }
    qr_pool_for(j.tl.n_mc * j.tl.n_ns, qr__k_f32_task, &j);
}
#endif

/* The kernel-table entries of an ISA's float GEMM (QrF32GemmFn, QrF32GemmExFn,
 * QrF32GemmFusedFn, QrF32GemmBtFusedFn, QrF32ConvGemmFn, QrF32ConvGemmFusedFn) around these
 * drivers. */
#define QR__K_F32_ENTRIES(name, isa)                                                                               \
    static void qr_f32_gemm__##name(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,  \
                                    int64_t ldb, float *C, int64_t ldc, bool accumulate) {                         \
        qr__k_f32_gemm(&isa, M, N, K, A, lda, B, ldb, false, C, ldc, accumulate, NULL);                             \
    }                                                                                                               \
    static void qr_f32_gemm_ex__##name(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,               \
                                       const float *B, int64_t ldb, float *C, int64_t ldc, bool accumulate,         \
                                       const QrF32Epilogue *ep) {                                                   \
        QrF32Fused tmp;                                                                                             \
        qr__k_f32_gemm(&isa, M, N, K, A, lda, B, ldb, false, C, ldc, accumulate, qr__k_fused_of(ep, &tmp));         \
    }                                                                                                               \
    static void qr_f32_gemm_fused__##name(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,            \
                                          const float *B, int64_t ldb, float *C, int64_t ldc, bool accumulate,      \
                                          const QrF32Fused *f) {                                                    \
        qr__k_f32_gemm(&isa, M, N, K, A, lda, B, ldb, false, C, ldc, accumulate, f);                                \
    }                                                                                                               \
    static void qr_f32_gemm_bt_fused__##name(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,         \
                                             const float *Bt, int64_t ldb, float *C, int64_t ldc, bool accumulate,  \
                                             const QrF32Fused *f) {                                                 \
        qr__k_f32_gemm(&isa, M, N, K, A, lda, Bt, ldb, true, C, ldc, accumulate, f);                                \
    }                                                                                                               \
    static void qr_f32_conv_gemm__##name(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b, float *Y,    \
                                         int64_t ldy, const QrF32Epilogue *ep) {                                    \
        QrF32Fused tmp;                                                                                             \
        qr__k_f32_conv_gemm(&isa, M, A, lda, b, Y, ldy, qr__k_fused_of(ep, &tmp));                                  \
    }                                                                                                               \
    static void qr_f32_conv_gemm_fused__##name(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b,         \
                                               float *Y, int64_t ldy, const QrF32Fused *f) {                        \
        qr__k_f32_conv_gemm(&isa, M, A, lda, b, Y, ldy, f);                                                         \
    }                                                                                                               \
    static size_t qr_f32_conv_pack_bytes__##name(int64_t M, const QrF32ConvB *b) {                                  \
        return qr__k_f32_conv_pack_bytes(&isa, M, b);                                                               \
    }                                                                                                               \
    static void qr_f32_conv_pack__##name(int64_t M, const float *A, int64_t lda, const QrF32ConvB *b, float *dst) { \
        qr__k_f32_conv_pack(&isa, M, A, lda, b, dst);                                                               \
    }

/* ==== M = 1 convolutions (QrF32ConvM1Fn) ============================================
 * ORT's order (see QrF32ConvM1Fn) needs every product on its own and the sums in groups
 * of four along k. Instead of ORT's im2col (K copies of the input), each input channel is
 * copied once into zero-padded phase planes — plane (a, b) holds the padded rows
 * r*sh + a and columns j*sw + b — so that every tap reads one contiguous run: output
 * (oh, ow) of tap (c, kh, kw) is plane (kh*dh % sh, kw*dw % sw) of channel c at row
 * oh + kh*dh / sh, column ow + kw*dw / sw. Outputs are computed as "virtual" columns
 * v = oh*Wq + ow over the planes' row width Wq >= OW (the columns ow >= OW of each row are
 * computed and dropped), several per vector, by an ISA's column kernel. */

/* y[j] = S_j + bias for j < n, product k of output j being w[k] * src[k][j], summed as
 * QrF32ConvM1Fn says; src[k][j] is readable for j < qr__k_rup(n, 16). */
typedef void (*QrKF32M1Cols)(int64_t K, int64_t n, const float *w, const float *const *src, float bias, float *y);

/* QrF32ConvM1Fn with an ISA's column kernel over b's phase planes (above). Falls back to
 * the ref when scratch cannot be had. */
static void qr__k_f32_conv_m1(QrKF32M1Cols cols, const QrF32ConvB *b, const float *w, float bias, float *y) {
    const int64_t K = b->C * b->KH * b->KW, OH = b->OH, OW = b->OW, sh = b->sh, sw = b->sw;
    if (OH <= 0 || OW <= 0) return;
    const int64_t Hp = (OH - 1) * sh + (b->KH - 1) * b->dh + 1, Wp = (OW - 1) * sw + (b->KW - 1) * b->dw + 1;
    const int64_t Hq = qr__k_cdiv(Hp, sh), Wq = qr__k_cdiv(Wp, sw);
    const int64_t plane = qr__k_rup(Hq * Wq + 32, 16);   /* + over-read room of the last vector */
    const int64_t nplanes = b->C * sh * sw, nv = (OH - 1) * Wq + OW;
    const bool direct = Wq == OW;                         /* no dropped columns: straight into y */
    const double want = ((double)(nplanes * plane) + (direct ? 0.0 : (double)qr__k_rup(nv, 16)) + (double)K * 2.0) * 4.0;
    unsigned char *mem = K > 0 && want < (double)((size_t)1 << 40) ? qr__k_scratch((size_t)want + 64) : NULL;
    if (!mem) {
        qr_f32_conv_m1__ref(b, w, bias, y);
        return;
    }
    float *planes = (float *)mem, *tmp = planes + nplanes * plane;
    const float **src = (const float **)qr__k_rup64((size_t)(tmp + (direct ? 0 : qr__k_rup(nv, 16))));
    /* the planes: padded row R = r*sh + a is input row R - ph, column J = j*sw + bb input
     * column J - pw; zero first, then each input row once into its row of every column phase */
    memset(planes, 0, (size_t)(nplanes * plane) * sizeof(float));
    const int64_t ih0 = QR_MAX((int64_t)0, -b->ph), ih1 = QR_MIN(b->H, Hq * sh - b->ph);
    for (int64_t c = 0; c < b->C; c++)
        for (int64_t ih = ih0, a = (ih0 + b->ph) % sh, r = (ih0 + b->ph) / sh; ih < ih1; ih++) {
            const float *xr = b->x + (c * b->H + ih) * b->W;
            float *row0 = planes + (c * sh + a) * sw * plane + r * Wq;   /* column phase 0 */
            /* input columns iw with 0 <= iw + pw < Wq*sw: [iw0, iw1) */
            const int64_t iw0 = QR_MAX((int64_t)0, -b->pw), iw1 = QR_MIN(b->W, Wq * sw - b->pw);
            if (sw == 1) {
                if (iw1 > iw0) memcpy(row0 + iw0 + b->pw, xr + iw0, (size_t)(iw1 - iw0) * sizeof(float));
            } else if (sw == 2) {   /* even padded columns to phase 0, odd ones to phase 1, in pairs */
                float *row1 = row0 + plane;
                int64_t iw = iw0;
                if (iw < iw1 && ((iw + b->pw) & 1)) {
                    row1[(iw + b->pw) >> 1] = xr[iw];
                    iw++;
                }
                float *d0 = row0 + ((iw + b->pw) >> 1), *d1 = row1 + ((iw + b->pw) >> 1);
                const float *sx = xr + iw;
                const int64_t np = (iw1 - iw) / 2;
                int64_t i = 0;
#if defined(__x86_64__)
                for (; i + 4 <= np; i += 4) {   /* SSE2 (baseline): 8 inputs, evens and odds */
                    __m128 lo = _mm_loadu_ps(sx + 2 * i), hi = _mm_loadu_ps(sx + 2 * i + 4);
                    _mm_storeu_ps(d0 + i, _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
                    _mm_storeu_ps(d1 + i, _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
                }
#endif
                for (; i < np; i++) {
                    d0[i] = sx[2 * i];
                    d1[i] = sx[2 * i + 1];
                }
                if (iw + 2 * np < iw1) d0[np] = sx[2 * np];
            } else {
                for (int64_t iw = iw0; iw < iw1; iw++) {
                    const int64_t J = iw + b->pw;
                    row0[(J % sw) * plane + J / sw] = xr[iw];
                }
            }
            if (++a == sh) {
                a = 0;
                r++;
            }
        }
    int64_t k = 0;
    for (int64_t c = 0; c < b->C; c++)
        for (int64_t kh = 0; kh < b->KH; kh++)
            for (int64_t kw = 0; kw < b->KW; kw++, k++) {
                const int64_t ro = kh * b->dh, co = kw * b->dw;
                src[k] = planes + ((c * sh + ro % sh) * sw + co % sw) * plane + (ro / sh) * Wq + co / sw;
            }
    if (direct) {
        cols(K, OH * OW, w, src, bias, y);
        return;
    }
    cols(K, nv, w, src, bias, tmp);
    for (int64_t oh = 0; oh < OH; oh++) memcpy(y + oh * OW, tmp + oh * Wq, (size_t)OW * sizeof(float));
}

/* ---- the direct form -----------------------------------------------------------------
 * SIMD levels with a direct kernel (qr__k_m1d_*) skip the planes for the common windows
 * (column stride 1 or 2, the row x column shapes they instantiate): lane j of output vector
 * v (L = 16 or 8 columns of one output row) of tap (r = c*KH + kh, kw) reads element
 * (v*L + j)*sw - pw + kw*dw of its input row straight from x, under the mask of the
 * elements inside [0, W) (outside: a zero input, as in the planes); a row outside x is read
 * from qr__k_zero_row. Every product is still w * x, so an infinite weight meets a zero
 * and gives NaN there, and the sums are the column kernels' (ORT's M=1 order). On small
 * planes, where an output row fills few lanes, the AVX-512 level packs several rows into a
 * vector instead: 3x3 stride 1 with OW == W <= 12 the flat form (qr__k_m1f_tables), 3x3
 * stride 2 with OW <= 7 two output rows per vector (kern/avx512/f32_conv_m1.c). */
enum { QR__K_M1D_MAXW = 4096, QR__K_M1D_MAXV = 64, QR__K_M1D_MAXR = 2048, QR__K_M1D_SLOTS = 4, QR__K_M1D_FLATV = 16 };
static const float qr__k_zero_row[QR__K_M1D_MAXW] __attribute__((aligned(64)));

/* The tables of the direct form for one window geometry (every channel of a layer has the
 * same), kept per thread: raw[v*KW + kw] (v < cdiv(OW, L)): bit e set when element e of
 * the L*sw elements tap column kw of vector v reads lies inside the row; row[R]
 * (R < (OH-1+QR__K_M1D_SLOTS)*sh + (KH-1)*dh + 1): the input row of row R of the padded
 * input (R - ph), -1 outside x (also for the rows of the output rows past OH that a
 * kernel's last group of slots computes and drops); output row oh's tap row kh is
 * row[oh*sh + kh*dh]. */
typedef struct QrKM1dTab {
    int64_t geo[12];   /* H, W, KH, KW, sh, sw, dh, dw, ph, pw, OH, OW of the tables */
    int L;             /* lanes per vector they are for; 0: none yet */
    bool ok;           /* the geometry fits the tables */
    uint32_t raw[QR__K_M1D_MAXV * 8];
    int32_t row[QR__K_M1D_MAXR];
    /* the flat form (qr__k_m1f_tables): nflat vectors (0: the geometry has none); fe[v*3 + kh]:
     * the elements inside x of the 16 that window row kh's load for vector v reads (v up to
     * nflat: the next vector's load is carried); fc[v*3 + kw]: vector v's lanes whose column
     * ow + kw - pw lies inside the row */
    int nflat;
    uint16_t fe[(QR__K_M1D_FLATV + 1) * 3], fc[QR__K_M1D_FLATV * 3];
} QrKM1dTab;
#if defined(__x86_64__)   /* called by the x86-64 kernels only */
static __thread QrKM1dTab qr__k_m1d_tls;

/* The flat form's tables (t->nflat, fe, fc) for b with L = 16 lanes: a 3x3 window, stride 1
 * and no dilation along both axes, as many output columns as input ones (OW == W) and
 * OH*OW <= 16 * QR__K_M1D_FLATV; else nflat 0. The output plane is then one flat array: lane j
 * of vector v is output L = v*16 + j = oh*OW + ow, and tap (kh, kw) reads x[L + (kh - ph)*W +
 * (kw - pw)]: one masked load per window row and vector (fe: the elements inside x), its kw
 * shifts taken from it and the next vector's load, the lanes whose column falls outside the
 * row multiplying a zero (fc; the padding reads a zero, as in the planes). */
static void qr__k_m1f_tables(const QrF32ConvB *b, int L, QrKM1dTab *t) {
    const int64_t n = b->OH * b->OW;
    t->nflat = 0;
    if (L != 16 || b->KH != 3 || b->KW != 3 || b->sh != 1 || b->sw != 1 || b->dh != 1 || b->dw != 1 ||
        b->OW != b->W || n > 16 * QR__K_M1D_FLATV)
        return;
    t->nflat = (int)qr__k_cdiv(n, 16);
    for (int v = 0; v <= t->nflat; v++)
        for (int kh = 0; kh < 3; kh++) {
            const int64_t e0 = v * 16 + (kh - b->ph) * b->W - b->pw;
            t->fe[v * 3 + kh] = (uint16_t)qr__k_bits(-e0, b->H * b->W - e0, 0, 16);
        }
    for (int v = 0; v < t->nflat; v++)
        for (int kw = 0; kw < 3; kw++) {
            uint16_t m = 0;
            for (int j = 0; j < 16; j++) {
                const int64_t iw = (v * 16 + j) % b->OW + kw - b->pw;
                if (iw >= 0 && iw < b->W) m |= (uint16_t)(1u << j);
            }
            t->fc[v * 3 + kw] = m;
        }
}

/* The tables for b with L lanes per vector (the thread's, rebuilt when the geometry
 * changes), or NULL when b is not a direct window: more vectors, rows or a wider row than
 * they hold, a column stride above 2, a window wider than 8. */
static const QrKM1dTab *qr__k_m1d_tables(const QrF32ConvB *b, int L) {
    QrKM1dTab *t = &qr__k_m1d_tls;
    const int64_t geo[12] = { b->H, b->W, b->KH, b->KW, b->sh, b->sw, b->dh, b->dw, b->ph, b->pw, b->OH, b->OW };
    if (t->L == L && !memcmp(t->geo, geo, sizeof geo)) return t->ok ? t : NULL;
    memcpy(t->geo, geo, sizeof geo);
    t->L = L;
    const int64_t nv = qr__k_cdiv(b->OW, L), R = (b->OH - 1 + QR__K_M1D_SLOTS) * b->sh + (b->KH - 1) * b->dh + 1;
    t->ok = (b->sw == 1 || b->sw == 2) && nv <= QR__K_M1D_MAXV && b->W <= QR__K_M1D_MAXW && b->KW <= 8 &&
            R <= QR__K_M1D_MAXR && b->H <= INT32_MAX;
    if (!t->ok) return NULL;
    for (int64_t v = 0; v < nv; v++)
        for (int64_t kw = 0; kw < b->KW; kw++) {
            const int64_t col0 = v * L * b->sw - b->pw + kw * b->dw;
            t->raw[v * b->KW + kw] = qr__k_bits(-col0, b->W - col0, 0, (int)(L * b->sw));
        }
    for (int64_t r = 0; r < R; r++) t->row[r] = r - b->ph >= 0 && r - b->ph < b->H ? (int32_t)(r - b->ph) : -1;
    qr__k_m1f_tables(b, L, t);
    return t;
}
#endif

/* ==== 8-bit integers =================================================================
 * C = sum (A - za)(B - zb) mod 2^32 (B a matrix, or a convolution's implicit im2col gathered
 * by the B packing), stored, or requantized panel by panel while it is in the cache
 * (QrQ8Requant). Packed formats:
 *   s16  — (value - zero point) widened to int16 in the packing, K in pairs: A [K/2][MR][2],
 *          B [K/2][NR][2]; the micro-kernel multiplies with vpmaddwd (int16 x int16 summed
 *          in pairs into int32: |pair| <= 2 * 255 * 255, nothing saturates). Zero points
 *          cost nothing at run time.
 *   vnni — raw bytes, K in quads: A [K/4][MR][4], B [K/4][NR][4], for vpdpbusd (u8 x s8,
 *          4 products summed into int32, no saturation). One side must be unsigned, the
 *          other signed: mode AU makes A unsigned (int8 A + 128) and B signed (uint8 B -
 *          128); mode BU (int8 A, uint8 B, the convolution case) needs no shift. With
 *          a = a' + alpha and b = b' + beta the result is
 *            sum a'b' + u[m] * CB[n] + v[n] * RA[m] + K * u[m] * v[n],
 *          u = alpha - za, v = beta - zb, RA / CB the row / column sums of a' / b' that
 *          the packing computes; all mod 2^32, so the compensation is exact.
 *   ss   — the vnni layout for signed x signed products (AArch64 SDOT), see below. */

/* Packed formats (QrKQ8Isa.fmt) and the modes they run in. The third format, ss, is the
 * vnni one for signed x signed dot products (AArch64 SDOT): both operands made signed (uint8
 * - 128), compensated the same way. The fourth, mm, runs in the ss mode with K in groups of 8
 * for matrix-multiply instructions (AArch64 SMMLA); its layout belongs to the ISA's own packers
 * (kern/neon/q_gemm_i8mm.c). */
enum { QR__K_Q8_FMT_S16, QR__K_Q8_FMT_VNNI, QR__K_Q8_FMT_SS, QR__K_Q8_FMT_MM };
enum { QR__K_Q8_S16, QR__K_Q8_AU, QR__K_Q8_BU, QR__K_Q8_SS };

/* c (MR, NR) = or += packed a (ng groups) @ packed b (ng groups). */
typedef void (*QrKQ8Ukr)(int64_t ng, const void *a, const void *b, int32_t *c, int64_t ldc, bool add);
struct QrKQ8Job;
/* Packs a (ng groups, NR columns) panel of B from row k0, columns [n0, n0 + nr) (zero past
 * nr; nr <= NR), from the matrix or, for a convolution, gathered from its image; adds column
 * sums of b' to cb[0..nr) when cb is not NULL (vnni). */
typedef void (*QrKQ8PackB)(const struct QrKQ8Job *j, int64_t k0, int64_t ng, int64_t n0, int nr, void *dst,
                           int32_t *cb);
/* Packs A panel p from K position 0 up to a position it returns (a multiple of the K
 * group); in the vnni formats adds the rows' sums of a' over them to ra (zeroed before).
 * The rest is packed in plain C. */
typedef int64_t (*QrKQ8PackA)(const struct QrKQ8Job *j, int64_t p, void *dst);
/* Zero-point compensation of one row (vnni): c[n] += v[n] * ra + u * w[n] mod 2^32. */
typedef void (*QrKQ8Comp)(int32_t *c, int64_t n, int32_t ra, int32_t u, const int32_t *v, const int32_t *w);

typedef struct QrKQ8Isa {
    int mr, nr, kc;        /* kc: K block, a multiple of the K group (8); nr <= 64 */
    int fmt;               /* packing format, QR__K_Q8_FMT_* */
    QrKQ8Ukr ukr;          /* s16, ss, or vnni mode AU (broadcast A is the unsigned side) */
    QrKQ8Ukr ukr_bu;       /* vnni mode BU (B is the unsigned side) */
    QrKQ8PackB pack_b;     /* NULL: plain C */
    QrKQ8PackA pack_a;     /* NULL: plain C */
    QrKQ8Comp comp;        /* vnni and ss formats */
    QrS32RequantFn requant;   /* the level's, for a fused requantization */
    /* The end of a column panel (qr__k_q8_panel_end) in one call over its rows; NULL: per row
     * through comp and requant. */
    void (*panel_end)(const struct QrKQ8Job *j, int64_t i0, int64_t i1, int64_t jr, int nr, int32_t *c0, int64_t ldc,
                      const int32_t *vv, const int32_t *ww);
} QrKQ8Isa;

typedef struct QrKQ8Job {
    const QrKQ8Isa *isa;
    int64_t M, N, K, ldc;
    const QrQOperand *A, *B;
    const QrQ8ConvB *conv;      /* not NULL: B is this convolution's implicit im2col */
    const QrQ8Requant *rq;      /* not NULL: C is requantized into rq->y, not stored */
    int32_t *C;
    bool accumulate;
    int mode, kg;               /* format/mode, K group (2 or 4) */
    int32_t alpha, beta;        /* a = a' + alpha, b = b' + beta (vnni) */
    bool need_cb;               /* some u[m] != 0: column sums of B are needed */
    /* vnni / ss with every u[m] == 0 and one zero point for all of B's columns (v[n] = v0): the
     * compensation of row m is the constant v0 * RA[m] (mod 2^32) */
    bool comp_row;
    int32_t v0;
    unsigned char *ap;          /* packed A */
    size_t ap_panel;            /* bytes per A panel */
    int64_t n_ap, ap_per_task, kp;   /* panels, panels per packing task, K padded to kg */
    int32_t *ra;                /* row sums of a' (vnni) */
    unsigned char *tid_mem;     /* per thread: B panel, edge tile, column sums (3 x ns), C block (rq) */
    size_t tid_bytes;
    QrKTiles tl;
} QrKQ8Job;

/* Row m of an 8-bit operand as int32 values v[k] - sub for k < n, 0 up to np. */
static void qr__k_q8_row(const QrQOperand *o, int64_t off, int64_t n, int64_t np, int32_t sub, int32_t *v) {
    if (o->is_signed) {
        const int8_t *p = (const int8_t *)o->data + off;
        for (int64_t k = 0; k < n; k++) v[k] = p[k] - sub;
    } else {
        const uint8_t *p = (const uint8_t *)o->data + off;
        for (int64_t k = 0; k < n; k++) v[k] = p[k] - sub;
    }
    for (int64_t k = n; k < np; k++) v[k] = 0;
}

/* Columns [n0, n0 + nr) of row k of a convolution's implicit B as bytes (the zero point where
 * a tap falls outside the image), stored to dst[0..nr). */
static void qr__k_q8_conv_row(const QrQ8ConvB *b, int64_t k, int64_t n0, int nr, uint8_t *dst) {
    const int64_t KK = b->KH * b->KW, c = k / KK, kh = k % KK / b->KW, kw = k % b->KW;
    const uint8_t pad = (uint8_t)b->zp;
    const uint8_t *xc = (const uint8_t *)b->x + c * b->H * b->W;
    for (int q = 0; q < nr;) {
        const int64_t p = n0 + q, oh = p / b->OW, ow = p % b->OW;
        const int len = (int)QR_MIN((int64_t)(nr - q), b->OW - ow);
        const int64_t ih = oh * b->sh - b->ph + kh * b->dh;
        if (ih < 0 || ih >= b->H) {
            memset(dst + q, pad, (size_t)len);
        } else {
            const uint8_t *xr = xc + ih * b->W;
            int64_t iw = ow * b->sw - b->pw + kw * b->dw;
            for (int i = 0; i < len; i++, iw += b->sw) dst[q + i] = iw >= 0 && iw < b->W ? xr[iw] : pad;
        }
        q += len;
    }
}

/* Row k, columns [n0, n0 + nr) of the job's B as int32 values (0 from nr to np). */
static void qr__k_q8_brow(const QrKQ8Job *j, int64_t k, int64_t n0, int nr, int np, int32_t *v) {
    if (!j->conv) {
        qr__k_q8_row(j->B, k * j->B->ld + n0, nr, np, 0, v);
        return;
    }
    uint8_t t[64];
    qr__k_q8_conv_row(j->conv, k, n0, nr, t);
    for (int q = 0; q < nr; q++) v[q] = j->conv->is_signed ? (int32_t)(int8_t)t[q] : (int32_t)t[q];
    for (int q = nr; q < np; q++) v[q] = 0;
}

/* Packs K positions [k0, kp) of A panel p (all MR rows) in plain C; in the vnni formats
 * adds each row's sum of a' over them to ra. v: kp int32 of scratch. */
static void qr__k_q8_pack_a_c(const QrKQ8Job *j, int64_t p, int64_t k0, unsigned char *dst, int32_t *v) {
    const int MR = j->isa->mr;
    for (int r = 0; r < MR; r++) {
        int64_t m = p * MR + r, n = j->kp - k0;
        if (m < j->M) {
            int32_t sub = j->mode == QR__K_Q8_S16 ? qr__k_zp_at(j->A, m) : j->alpha;
            qr__k_q8_row(j->A, m * j->A->ld + k0, QR_MAX(0, j->K - k0), n, sub, v);
        } else {
            memset(v, 0, (size_t)n * sizeof *v);
        }
        if (j->mode == QR__K_Q8_S16) {
            int16_t *d = (int16_t *)dst + k0 * MR + 2 * r;
            for (int64_t k = 0; k < n; k += 2, d += 2 * MR) { d[0] = (int16_t)v[k]; d[1] = (int16_t)v[k + 1]; }
        } else {
            unsigned char *d = dst + k0 * MR + 4 * r;
            int32_t sum = 0;
            for (int64_t k = 0; k < n; k += 4, d += 4 * MR) {
                d[0] = (unsigned char)v[k]; d[1] = (unsigned char)v[k + 1];
                d[2] = (unsigned char)v[k + 2]; d[3] = (unsigned char)v[k + 3];
                sum += v[k] + v[k + 1] + v[k + 2] + v[k + 3];
            }
            j->ra[m] += sum;
        }
    }
}

static void qr__k_q8_pack_a_task(void *ctx, int64_t t, int tid) {
    const QrKQ8Job *j = ctx;
    int32_t *v = (int32_t *)(j->tid_mem + (size_t)tid * j->tid_bytes);   /* kp values (the B panel area) */
    for (int64_t p = t * j->ap_per_task; p < QR_MIN(j->n_ap, (t + 1) * j->ap_per_task); p++) {
        unsigned char *dst = j->ap + (size_t)p * j->ap_panel;
        for (int r = 0; r < j->isa->mr; r++) j->ra[p * j->isa->mr + r] = 0;
        int64_t k0 = j->isa->pack_a ? j->isa->pack_a(j, p, dst) : 0;
        if (k0 < j->kp) qr__k_q8_pack_a_c(j, p, k0, dst, v);
    }
}

/* Packs B rows [k0, k0 + ng*kg) (zero past K) x columns [n0, n0 + nr) (zero past nr) in
 * the job's format with plain C; in vnni formats adds each column's sum of b' to
 * cb[0..nr). (QrKQ8PackB for ISAs without their own.) */
static void qr__k_q8_pack_b_c(const QrKQ8Job *j, int64_t k0, int64_t ng, int64_t n0, int nr, void *dst, int32_t *cb) {
    const int NR = j->isa->nr, kg = j->kg;
    const QrQOperand *B = j->B;
    const int64_t kn = QR_MIN(j->K, k0 + ng * kg) - k0;
    int32_t zb[64], v[64];
    for (int q = 0; q < NR; q++) zb[q] = j->mode == QR__K_Q8_S16 ? (q < nr ? qr__k_zp_at(B, n0 + q) : 0) : j->beta;
    for (int64_t k = 0; k < ng * kg; k++) {
        if (k < kn) {
            qr__k_q8_brow(j, k0 + k, n0, nr, NR, v);
            for (int q = 0; q < nr; q++) v[q] -= zb[q];
        } else {
            memset(v, 0, sizeof v);
        }
        if (j->mode == QR__K_Q8_S16) {
            int16_t *d = (int16_t *)dst + (k / 2) * 2 * NR + (k & 1);
            for (int q = 0; q < NR; q++) d[2 * q] = (int16_t)v[q];
        } else {
            unsigned char *d = (unsigned char *)dst + (k / 4) * 4 * NR + (k & 3);
            for (int q = 0; q < NR; q++) d[4 * q] = (unsigned char)v[q];
            if (cb) for (int q = 0; q < nr; q++) cb[q] += v[q];
        }
    }
}

/* The end of one column panel [jr, jr + nr) of a task's rows [i0, i1) after its last K block:
 * the zero-point compensation (vnni, ss: C += v[n] * RA[m] + u[m] * (K * v[n] + CB[n]),
 * mod 2^32; cb: the panel's column sums of b') and, with rq, the requantization. */
static void qr__k_q8_panel_end(const QrKQ8Job *j, int64_t i0, int64_t i1, int64_t jr, int nr, int32_t *c0,
                               int64_t ldc, const int32_t *cb) {
    if (j->comp_row && !j->isa->panel_end) {
        for (int64_t m = i0; m < i1; m++) {
            const uint32_t r = (uint32_t)j->ra[m] * (uint32_t)j->v0;
            int32_t *c = c0 + (m - i0) * ldc;
            for (int q = 0; q < nr; q++) c[q] = (int32_t)((uint32_t)c[q] + r);
        }
    } else if (j->mode != QR__K_Q8_S16) {
        int32_t vv[64], ww[64];
        for (int q = 0; q < nr; q++) {
            uint32_t v = (uint32_t)(j->beta - qr__k_zp_at(j->B, jr + q));
            vv[q] = (int32_t)v;
            ww[q] = (int32_t)(v * (uint32_t)j->K + (j->need_cb ? (uint32_t)cb[q] : 0u));
        }
        if (j->isa->panel_end) {
            j->isa->panel_end(j, i0, i1, jr, nr, c0, ldc, vv, ww);
            return;
        }
        for (int64_t m = i0; m < i1; m++)
            j->isa->comp(c0 + (m - i0) * ldc, nr, j->ra[m], j->alpha - qr__k_zp_at(j->A, m), vv, ww);
    }
    const QrQ8Requant *rq = j->rq;
    if (!rq) return;
    for (int64_t m = i0; m < i1; m++)
        j->isa->requant(nr, c0 + (m - i0) * ldc, rq->bias ? rq->bias + m * rq->bias_rs + jr * rq->bias_cs : NULL,
                        rq->bias_cs, rq->mult + m * rq->mult_rs + jr * rq->mult_cs, rq->mult_cs, rq->zp, rq->lo, rq->hi,
                        (unsigned char *)rq->y + (m * rq->ldy + jr) * rq->y_bytes, rq->y_bytes);
}

static void qr__k_q8_task(void *ctx, int64_t t, int tid) {
    const QrKQ8Job *j = ctx;
    const int MR = j->isa->mr, NR = j->isa->nr, KC = j->isa->kc, kg = j->kg;
    const size_t esz = j->mode == QR__K_Q8_S16 ? 2 : 1;
    const int64_t mi = t % j->tl.n_mc, si = t / j->tl.n_mc;
    const int64_t i0 = mi * j->tl.mc, i1 = QR_MIN(j->M, i0 + j->tl.mc);
    const int64_t j0 = si * j->tl.ns, j1 = QR_MIN(j->N, j0 + j->tl.ns);
    unsigned char *bp = j->tid_mem + (size_t)tid * j->tid_bytes;
    int32_t *tile = (int32_t *)(bp + qr__k_rup64((size_t)KC * NR * esz));
    int32_t *cb = tile + MR * NR;
    /* with rq the task's C block lives in this thread's scratch */
    int32_t *cblk = j->rq ? (int32_t *)((unsigned char *)cb + qr__k_rup64((size_t)(3 * j->tl.ns) * sizeof(int32_t))) : NULL;
    const int64_t ldc = j->rq ? j->tl.ns : j->ldc;
    const bool vnni = j->mode != QR__K_Q8_S16;
    if (vnni && j->need_cb) memset(cb, 0, (size_t)(j1 - j0) * sizeof *cb);
    const QrKQ8Ukr ukr = j->mode == QR__K_Q8_BU ? j->isa->ukr_bu : j->isa->ukr;
    for (int64_t pc = 0; pc < j->K; pc += KC) {
        const int64_t ng = qr__k_cdiv(QR_MIN(KC, j->K - pc), kg);
        const bool add = j->accumulate || pc > 0, last = pc + KC >= j->K;
        for (int64_t jr = j0; jr < j1; jr += NR) {
            const int nr = (int)QR_MIN(NR, j1 - jr);
            int32_t *cbp = vnni && j->need_cb ? cb + (jr - j0) : NULL;
            if (j->isa->pack_b) j->isa->pack_b(j, pc, ng, jr, nr, bp, cbp);
            else qr__k_q8_pack_b_c(j, pc, ng, jr, nr, bp, cbp);
            int32_t *cp = j->rq ? cblk + (jr - j0) : j->C + i0 * ldc + jr;   /* row i0 of the panel */
            for (int64_t ir = i0; ir < i1; ir += MR) {
                const int mr = (int)QR_MIN(MR, i1 - ir);
                const unsigned char *a = j->ap + (size_t)(ir / MR) * j->ap_panel + (size_t)(pc * MR) * esz;
                int32_t *c = cp + (ir - i0) * ldc;
                if (mr == MR && nr == NR) {
                    ukr(ng, a, bp, c, ldc, add);
                    continue;
                }
                ukr(ng, a, bp, tile, NR, false);
                for (int r = 0; r < mr; r++)
                    for (int q = 0; q < nr; q++)
                        c[r * ldc + q] = add ? (int32_t)((uint32_t)c[r * ldc + q] + (uint32_t)tile[r * NR + q])
                                             : tile[r * NR + q];
            }
            if (last) qr__k_q8_panel_end(j, i0, i1, jr, nr, cp, ldc, cb + (jr - j0));
        }
    }
}

/* The job's format for A and B of the given signedness: mode, K group, shifts, panel sizes. */
static void qr__k_q8_setup(QrKQ8Job *j, bool a_signed, bool b_signed) {
    const QrKQ8Isa *isa = j->isa;
    j->mode = isa->fmt == QR__K_Q8_FMT_S16 ? QR__K_Q8_S16
            : isa->fmt == QR__K_Q8_FMT_SS || isa->fmt == QR__K_Q8_FMT_MM ? QR__K_Q8_SS
            : (a_signed && !b_signed) ? QR__K_Q8_BU : QR__K_Q8_AU;
    j->kg = isa->fmt == QR__K_Q8_FMT_S16 ? 2 : isa->fmt == QR__K_Q8_FMT_MM ? 8 : 4;
    if (j->mode == QR__K_Q8_SS) {
        j->alpha = a_signed ? 0 : 128;
        j->beta = b_signed ? 0 : 128;
    } else {
        j->alpha = j->mode == QR__K_Q8_AU && a_signed ? -128 : 0;
        j->beta = j->mode == QR__K_Q8_AU && !b_signed ? 128 : 0;
    }
    j->n_ap = qr__k_cdiv(j->M, isa->mr);
    j->kp = qr__k_rup(j->K, j->kg);
    j->ap_panel = qr__k_rup64((size_t)(j->kp * isa->mr) * (j->mode == QR__K_Q8_S16 ? 2 : 1));
}

/* An A operand packed once (QrQ8PackAFn): this header in the first QR__K_Q8_PACKED_HDR bytes,
 * the row sums RA (ra_bytes: n_ap * mr int32, padded), then the n_ap panels of ap_panel bytes,
 * exactly as qr__k_q8_run packs them for a job of the same ISA, M, K and mode. */
typedef struct QrKQ8Packed {
    uint32_t magic;
    int32_t mode, alpha;
    bool a_signed, b_signed;
    const QrKQ8Isa *isa;        /* who packed it: identifies the layout within this process */
    int64_t M, K;
    size_t ra_bytes;
} QrKQ8Packed;
#define QR__K_Q8_PACKED_MAGIC 0x41505251u   /* "QRPA" */
#define QR__K_Q8_PACKED_HDR 64

_Static_assert(sizeof(QrKQ8Packed) <= QR__K_Q8_PACKED_HDR, "QrKQ8Packed must fit its header");

/* True when p (not NULL) was packed for this job (its ISA, M, K, mode and both signednesses);
 * *ra_bytes then receives the size of its row-sum block. */
static bool qr__k_q8_packed_fit(const QrKQ8Job *j, const void *p, size_t *ra_bytes) {
    if (!p) return false;
    QrKQ8Packed h;
    memcpy(&h, p, sizeof h);
    if (h.magic != QR__K_Q8_PACKED_MAGIC || h.isa != j->isa || h.M != j->M || h.K != j->K || h.mode != j->mode ||
        h.alpha != j->alpha || h.a_signed != j->A->is_signed || h.b_signed != j->B->is_signed)
        return false;
    *ra_bytes = h.ra_bytes;
    return true;
}

/* Runs an 8-bit GEMM (QrQ8GemmFn, or QrQ8ConvGemmFn when conv is set: B is then its implicit
 * im2col, described to the zero-point logic by B's signedness and zero point) with an ISA's
 * micro-kernel; the ref kernel when the scratch cannot be allocated. */
static void qr__k_q8_run(const QrKQ8Isa *isa, int64_t M, int64_t N, int64_t K, const QrQOperand *A,
                         const QrQOperand *B, const QrQ8ConvB *conv, const QrQ8Requant *rq, int32_t *C, int64_t ldc,
                         bool accumulate) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (rq) {
            qr_q8_gemm_rq__ref(M, N, K, A, B, conv, rq);
            return;
        }
        if (!accumulate)
            for (int64_t i = 0; i < M; i++) memset(C + i * ldc, 0, (size_t)N * sizeof(int32_t));
        return;
    }
    QrKQ8Job j = { .isa = isa, .M = M, .N = N, .K = K, .ldc = ldc, .A = A, .B = B, .conv = conv, .rq = rq, .C = C,
                   .accumulate = accumulate && !rq };
    qr__k_q8_setup(&j, A->is_signed, B->is_signed);
    j.need_cb = false;
    if (j.mode != QR__K_Q8_S16)
        for (int64_t m = 0; m < M && !j.need_cb; m++) j.need_cb = j.alpha != qr__k_zp_at(A, m);
    j.comp_row = j.mode != QR__K_Q8_S16 && !j.need_cb && (!B->zp || B->zp_stride == 0);
    j.v0 = j.beta - qr__k_zp_at(B, 0);
    const bool small = (double)M * (double)N * (double)K < QR_KERN_POOL_MIN_MACS;
    const int threads = small ? 1 : qr_pool_threads();
    const size_t esz = j.mode == QR__K_Q8_S16 ? 2 : 1;
    j.tl = qr__k_tiles(M, N, isa->mr, isa->nr, 256, 512, threads);
    size_t pk_ra = 0;
    const bool pk = qr__k_q8_packed_fit(&j, A->packed, &pk_ra);
    size_t ap_bytes = pk ? 0 : j.ap_panel * (size_t)j.n_ap;
    size_t ra_bytes = pk ? 0 : qr__k_rup64((size_t)(j.n_ap * isa->mr) * sizeof(int32_t));
    j.tid_bytes = qr__k_rup64((size_t)isa->kc * (size_t)isa->nr * esz) +
                  qr__k_rup64((size_t)(isa->mr * isa->nr + 3 * j.tl.ns) * sizeof(int32_t));
    if (rq) j.tid_bytes += qr__k_rup64((size_t)(j.tl.mc * j.tl.ns) * sizeof(int32_t));
    j.tid_bytes = QR_MAX(j.tid_bytes, qr__k_rup64((size_t)(j.kp + 4) * sizeof(int32_t)));
    unsigned char *mem = qr__k_scratch(ap_bytes + ra_bytes + j.tid_bytes * (size_t)threads);
    if (!mem) {
        if (rq) qr_q8_gemm_rq__ref(M, N, K, A, B, conv, rq);
        else if (conv) qr_q8_conv_gemm__ref(M, A, conv, C, ldc);
        else qr_q8_gemm__ref(M, N, K, A, B, C, ldc, accumulate);
        return;
    }
    if (pk) {   /* read only from here on (the packing tasks, which write ra, do not run) */
        j.ra = (int32_t *)((uintptr_t)A->packed + QR__K_Q8_PACKED_HDR);
        j.ap = (unsigned char *)((uintptr_t)A->packed + QR__K_Q8_PACKED_HDR + pk_ra);
    } else {
        j.ap = mem;
        j.ra = (int32_t *)(mem + ap_bytes);
    }
    j.tid_mem = mem + ap_bytes + ra_bytes;
    j.ap_per_task = QR_MAX(1, 65536 / (j.kp * isa->mr));
    int64_t n_pack = pk ? 0 : qr__k_cdiv(j.n_ap, j.ap_per_task), n_tasks = j.tl.n_mc * j.tl.n_ns;
    if (threads == 1) {
        for (int64_t t = 0; t < n_pack; t++) qr__k_q8_pack_a_task(&j, t, 0);
        for (int64_t t = 0; t < n_tasks; t++) qr__k_q8_task(&j, t, 0);
        return;
    }
    if (n_pack) qr_pool_for(n_pack, qr__k_q8_pack_a_task, &j);
    qr_pool_for(n_tasks, qr__k_q8_task, &j);
}

/* QrQ8PackAFn with an ISA's packing: the header, the row sums, the panels (see QrKQ8Packed). */
static size_t qr__k_q8_pack_a(const QrKQ8Isa *isa, int64_t M, int64_t K, const QrQOperand *A, bool b_signed,
                              void *dst) {
    if (M <= 0 || K <= 0) return 0;
    QrKQ8Job j = { .isa = isa, .M = M, .N = 1, .K = K, .A = A };
    qr__k_q8_setup(&j, A->is_signed, b_signed);
    const size_t ra_bytes = qr__k_rup64((size_t)(j.n_ap * isa->mr) * sizeof(int32_t));
    const size_t total = QR__K_Q8_PACKED_HDR + ra_bytes + j.ap_panel * (size_t)j.n_ap;
    if (!dst) return total;
    j.tid_bytes = qr__k_rup64((size_t)(j.kp + 4) * sizeof(int32_t));
    j.tid_mem = qr__k_scratch(j.tid_bytes);
    unsigned char *d = dst;
    if (!j.tid_mem) return 0;
    QrKQ8Packed h = { QR__K_Q8_PACKED_MAGIC, j.mode, j.alpha, A->is_signed, b_signed, isa, M, K, ra_bytes };
    memcpy(d, &h, sizeof h);
    j.ra = (int32_t *)(d + QR__K_Q8_PACKED_HDR);
    j.ap = d + QR__K_Q8_PACKED_HDR + ra_bytes;
    j.ap_per_task = 1;
    for (int64_t t = 0; t < j.n_ap; t++) qr__k_q8_pack_a_task(&j, t, 0);
    return total;
}

static void qr__k_q8_gemm(const QrKQ8Isa *isa, int64_t M, int64_t N, int64_t K, const QrQOperand *A,
                          const QrQOperand *B, int32_t *C, int64_t ldc, bool accumulate) {
    qr__k_q8_run(isa, M, N, K, A, B, NULL, NULL, C, ldc, accumulate);
}

/* The convolution GEMM (QrQ8ConvGemmFn) with an ISA's micro-kernel and implicit im2col. */
static void qr__k_q8_conv_gemm(const QrKQ8Isa *isa, int64_t M, const QrQOperand *A, const QrQ8ConvB *b, int32_t *C,
                               int64_t ldc) {
    QrQOperand B = { NULL, 0, b->is_signed, &b->zp, 0, NULL };
    qr__k_q8_run(isa, M, b->OH * b->OW, b->C * b->KH * b->KW, A, &B, b, NULL, C, ldc, false);
}

/* QrQ8GemmRqFn with an ISA's micro-kernel. */
static void qr__k_q8_gemm_rq(const QrKQ8Isa *isa, int64_t M, int64_t N, int64_t K, const QrQOperand *A,
                             const QrQOperand *B, const QrQ8ConvB *conv, const QrQ8Requant *rq) {
    QrQOperand cb = { NULL, 0, conv && conv->is_signed, conv ? &conv->zp : NULL, 0, NULL };
    qr__k_q8_run(isa, M, N, K, A, conv ? &cb : B, conv, rq, NULL, 0, false);
}

/* The kernel-table entries of an ISA's 8-bit GEMM (QrQ8GemmFn, QrQ8GemmRqFn, QrQ8ConvGemmFn)
 * around these drivers. */
#define QR__K_Q8_ENTRIES(name, isa)                                                                                \
    static void qr_q8_gemm__##name(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B,     \
                                   int32_t *C, int64_t ldc, bool accumulate) {                                    \
        qr__k_q8_gemm(&isa, M, N, K, A, B, C, ldc, accumulate);                                                   \
    }                                                                                                             \
    static void qr_q8_gemm_rq__##name(int64_t M, int64_t N, int64_t K, const QrQOperand *A, const QrQOperand *B,  \
                                      const QrQ8ConvB *conv, const QrQ8Requant *rq) {                             \
        qr__k_q8_gemm_rq(&isa, M, N, K, A, B, conv, rq);                                                          \
    }                                                                                                             \
    static void qr_q8_conv_gemm__##name(int64_t M, const QrQOperand *A, const QrQ8ConvB *b, int32_t *C,           \
                                        int64_t ldc) {                                                            \
        qr__k_q8_conv_gemm(&isa, M, A, b, C, ldc);                                                                \
    }

/* ==== 16-bit integers ================================================================
 * Exact int64 result with int32 SIMD arithmetic. Operands are made signed (uint16 -
 * 32768, so a = a' + alpha, b = b' + beta) and B is split into bytes, b' = 256 * hi + lo
 * with lo in [0, 255] and hi in [-128, 127]. The micro-kernel sums a' * lo and a' * hi
 * with vpmaddwd into int32 over K blocks of QR__K_Q16_KC = 256 (128 pairs):
 *   |sum a' lo| <= 256 * 32768 * 255 = 2139095040 < 2^31,  |sum a' hi| <= 256 * 32768 * 128 = 2^30,
 * so nothing can overflow; then it adds 256 * hi + lo into the int64 output. Zero points
 * and shifts are compensated as in the vnni 8-bit format, in int64:
 *   C = sum a'b' + u[m] * CB[n] + v[n] * RA[m] + K * u[m] * v[n],  u = alpha - za, v = beta - zb. */

#define QR__K_Q16_KC 256

/* c (MR, NR) int64 = or += packed a (np pairs) @ packed split b (np pairs), np <= 128. */
typedef void (*QrKQ16Ukr)(int64_t np, const int16_t *a, const int16_t *b, int64_t *c, int64_t ldc, bool add);

struct QrKQ16Job;
/* Packs a full panel (np pairs, NR columns) of B from row k0, column n0, split into bytes;
 * adds column sums of b' to cb when not NULL. */
typedef void (*QrKQ16PackB)(const struct QrKQ16Job *j, int64_t k0, int64_t np, int64_t n0, int16_t *dst, int64_t *cb);

typedef struct QrKQ16Isa {
    int mr, nr;
    QrKQ16Ukr ukr;
    QrKQ16PackB pack_b;   /* full panels; NULL: plain C */
} QrKQ16Isa;

typedef struct QrKQ16Job {
    const QrKQ16Isa *isa;
    int64_t M, N, K, ldc;
    const QrQOperand *A, *B;
    int64_t *C;
    bool accumulate, need_cb;
    int32_t alpha, beta;
    int16_t *ap;
    int64_t n_ap, ap_per_task, kp, ap_panel;   /* ap_panel in int16 elements */
    int64_t *ra;
    unsigned char *tid_mem;
    size_t tid_bytes;
    QrKTiles tl;
} QrKQ16Job;

static inline int32_t qr__k_q16_signed(const QrQOperand *o, int64_t i) {
    return qr__k_q16_at(o, i) - (o->is_signed ? 0 : 32768);
}

#if defined(__x86_64__)   /* called by the x86-64 kernels only */
static void qr__k_q16_pack_a_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrKQ16Job *j = ctx;
    const int MR = j->isa->mr;
    for (int64_t p = t * j->ap_per_task; p < QR_MIN(j->n_ap, (t + 1) * j->ap_per_task); p++) {
        int16_t *dst = j->ap + p * j->ap_panel;
        for (int r = 0; r < MR; r++) {
            int64_t m = p * MR + r, sum = 0;
            for (int64_t k = 0; k < j->kp; k++) {
                int32_t v = m < j->M && k < j->K ? qr__k_q16_signed(j->A, m * j->A->ld + k) : 0;
                dst[((k / 2) * MR + r) * 2 + (k & 1)] = (int16_t)v;
                sum += v;
            }
            j->ra[p * MR + r] = sum;
        }
    }
}

/* Packs B rows [k0, k0 + 2*np) x columns [n0, n0 + nr) split into lo/hi bytes:
 * [pair][lo, hi][NR][2]; adds column sums of b' to cb (when not NULL). */
static void qr__k_q16_pack_b(const QrKQ16Job *j, int64_t k0, int64_t np, int64_t n0, int nr, int16_t *d, int64_t *cb) {
    const int NR = j->isa->nr;
    const int64_t k1 = QR_MIN(j->K, k0 + 2 * np);
    for (int q = 0; q < NR; q++) {
        int64_t sum = 0;
        for (int64_t k = k0; k < k0 + 2 * np; k++) {
            int32_t v = q < nr && k < k1 ? qr__k_q16_signed(j->B, k * j->B->ld + n0 + q) : 0;
            int64_t at = ((k - k0) / 2) * 4 * NR + q * 2 + (k & 1);
            d[at] = (int16_t)(v & 0xff);
            d[at + 2 * NR] = (int16_t)(v >> 8);   /* arithmetic shift: floor(v / 256) */
            sum += v;
        }
        if (q < nr && cb) cb[q] += sum;
    }
}

static void qr__k_q16_task(void *ctx, int64_t t, int tid) {
    const QrKQ16Job *j = ctx;
    const int MR = j->isa->mr, NR = j->isa->nr;
    const int64_t mi = t % j->tl.n_mc, si = t / j->tl.n_mc;
    const int64_t i0 = mi * j->tl.mc, i1 = QR_MIN(j->M, i0 + j->tl.mc);
    const int64_t j0 = si * j->tl.ns, j1 = QR_MIN(j->N, j0 + j->tl.ns);
    int16_t *bp = (int16_t *)(j->tid_mem + (size_t)tid * j->tid_bytes);
    int64_t *tile = (int64_t *)((unsigned char *)bp + qr__k_rup64((size_t)QR__K_Q16_KC * 2 * NR * sizeof(int16_t)));
    int64_t *cb = tile + MR * NR;
    if (j->need_cb) memset(cb, 0, (size_t)(j1 - j0) * sizeof *cb);
    for (int64_t pc = 0; pc < j->K; pc += QR__K_Q16_KC) {
        const int64_t np = qr__k_cdiv(QR_MIN(QR__K_Q16_KC, j->K - pc), 2);
        const bool add = j->accumulate || pc > 0;
        for (int64_t jr = j0; jr < j1; jr += NR) {
            const int nr = (int)QR_MIN(NR, j1 - jr);
            int64_t *cbp = j->need_cb ? cb + (jr - j0) : NULL;
            if (nr == NR && j->isa->pack_b) j->isa->pack_b(j, pc, np, jr, bp, cbp);
            else qr__k_q16_pack_b(j, pc, np, jr, nr, bp, cbp);
            for (int64_t ir = i0; ir < i1; ir += MR) {
                const int mr = (int)QR_MIN(MR, i1 - ir);
                const int16_t *a = j->ap + (ir / MR) * j->ap_panel + pc * MR;
                int64_t *c = j->C + ir * j->ldc + jr;
                if (mr == MR && nr == NR) {
                    j->isa->ukr(np, a, bp, c, j->ldc, add);
                    continue;
                }
                j->isa->ukr(np, a, bp, tile, NR, false);
                for (int r = 0; r < mr; r++)
                    for (int q = 0; q < nr; q++)
                        c[r * j->ldc + q] = add ? c[r * j->ldc + q] + tile[r * NR + q] : tile[r * NR + q];
            }
        }
    }
    for (int64_t m = i0; m < i1; m++) {
        int64_t u = (int64_t)j->alpha - qr__k_zp_at(j->A, m), ra = j->ra[m];
        int64_t *c = j->C + m * j->ldc;
        for (int64_t n = j0; n < j1; n++) {
            int64_t v = (int64_t)j->beta - qr__k_zp_at(j->B, n);
            c[n] += v * ra + u * v * j->K + (j->need_cb ? u * cb[n - j0] : 0);
        }
    }
}

/* Runs a 16-bit GEMM (QrQ16GemmFn) with an ISA's micro-kernel; the ref kernel when the
 * scratch cannot be allocated. */
static void qr__k_q16_gemm(const QrKQ16Isa *isa, int64_t M, int64_t N, int64_t K, const QrQOperand *A,
                           const QrQOperand *B, int64_t *C, int64_t ldc, bool accumulate) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate)
            for (int64_t i = 0; i < M; i++) memset(C + i * ldc, 0, (size_t)N * sizeof(int64_t));
        return;
    }
    QrKQ16Job j = { .isa = isa, .M = M, .N = N, .K = K, .ldc = ldc, .A = A, .B = B, .C = C, .accumulate = accumulate };
    j.alpha = A->is_signed ? 0 : 32768;
    j.beta = B->is_signed ? 0 : 32768;
    j.need_cb = false;
    for (int64_t m = 0; m < M && !j.need_cb; m++) j.need_cb = j.alpha != qr__k_zp_at(A, m);
    const bool small = (double)M * (double)N * (double)K < QR_KERN_POOL_MIN_MACS;
    const int threads = small ? 1 : qr_pool_threads();
    j.tl = qr__k_tiles(M, N, isa->mr, isa->nr, 128, 512, threads);
    j.n_ap = qr__k_cdiv(M, isa->mr);
    j.kp = qr__k_rup(K, 2);
    j.ap_panel = qr__k_rup(j.kp * isa->mr, 32);
    size_t ap_bytes = (size_t)(j.ap_panel * j.n_ap) * sizeof(int16_t);
    size_t ra_bytes = qr__k_rup64((size_t)(j.n_ap * isa->mr) * sizeof(int64_t));
    j.tid_bytes = qr__k_rup64((size_t)QR__K_Q16_KC * 2 * (size_t)isa->nr * sizeof(int16_t)) +
                  qr__k_rup64((size_t)(isa->mr * isa->nr + j.tl.ns) * sizeof(int64_t));
    unsigned char *mem = qr__k_scratch(ap_bytes + ra_bytes + j.tid_bytes * (size_t)threads);
    if (!mem) {
        qr_q16_gemm__ref(M, N, K, A, B, C, ldc, accumulate);
        return;
    }
    j.ap = (int16_t *)mem;
    j.ra = (int64_t *)(mem + ap_bytes);
    j.tid_mem = mem + ap_bytes + ra_bytes;
    j.ap_per_task = QR_MAX(1, 65536 / (j.kp * isa->mr));
    int64_t n_pack = qr__k_cdiv(j.n_ap, j.ap_per_task), n_tasks = j.tl.n_mc * j.tl.n_ns;
    if (threads == 1) {
        for (int64_t t = 0; t < n_pack; t++) qr__k_q16_pack_a_task(&j, t, 0);
        for (int64_t t = 0; t < n_tasks; t++) qr__k_q16_task(&j, t, 0);
        return;
    }
    qr_pool_for(n_pack, qr__k_q16_pack_a_task, &j);
    qr_pool_for(n_tasks, qr__k_q16_task, &j);
}
#endif
