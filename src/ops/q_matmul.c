/* ops/q_matmul — batched integer matmul: QLinearMatMul, MatMulInteger, com.microsoft QGemm and qreport's internal
 * forms (QR_QUANT_INT_DOMAIN), with the integer operands and work memory integer Conv shares. Shared helpers: ops/qdq.c (see its map). */

/* ==== batched integer matmul (QLinearMatMul, MatMulInteger, QGemm) =================== */

/* numpy.matmul geometry: a [..., M, K] (or [K]) times b [..., K, N] (or [K]) with the batch
 * dims broadcast. Batch b of the output reads a at sum(idx_d * as[d]) and b likewise. */
typedef struct QrQMatMul {
    int64_t M, K, N, batches;
    int nb;                               /* output batch rank */
    int64_t bdims[QR_MAX_RANK];
    int64_t as[QR_MAX_RANK], bs[QR_MAX_RANK];
    int out_rank;
    int64_t out_dims[QR_MAX_RANK];
} QrQMatMul;

static QrStatus qr__qmm_mm_geom(const QrOpCtx *c, const QrTensor *a, const QrTensor *b, QrQMatMul *g) {
    char s1[128], s2[128];
    memset(g, 0, sizeof *g);
    if (a->rank < 1 || b->rank < 1) return qr_op_fail(c, QR_ERR_SHAPE, "matmul inputs must have rank >= 1");
    g->M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    g->K = a->dims[a->rank - 1];
    int64_t kb = b->rank >= 2 ? b->dims[b->rank - 2] : b->dims[0];
    g->N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    if (kb != g->K)
        return qr_op_fail(c, QR_ERR_SHAPE, "cannot multiply %s by %s (inner dims %lld and %lld differ)",
                          qr_shape_str_brackets(s1, sizeof s1, a->rank, a->dims),
                          qr_shape_str_brackets(s2, sizeof s2, b->rank, b->dims), (long long)g->K, (long long)kb);
    int na = a->rank >= 2 ? a->rank - 2 : 0, nbb = b->rank >= 2 ? b->rank - 2 : 0;
    g->nb = QR_MAX(na, nbb);
    int64_t sa = a->rank >= 2 ? g->M * g->K : g->K, sb = b->rank >= 2 ? g->K * g->N : g->K;
    for (int d = g->nb - 1; d >= 0; d--) {
        int da = d - (g->nb - na), db = d - (g->nb - nbb);
        int64_t va = da >= 0 ? a->dims[da] : 1, vb = db >= 0 ? b->dims[db] : 1;
        if (va != vb && va != 1 && vb != 1)
            return qr_op_fail(c, QR_ERR_SHAPE, "batch dims of %s and %s cannot be broadcast together",
                              qr_shape_str_brackets(s1, sizeof s1, a->rank, a->dims),
                              qr_shape_str_brackets(s2, sizeof s2, b->rank, b->dims));
        g->bdims[d] = va == 1 ? vb : va;
        g->as[d] = va == 1 ? 0 : sa;
        g->bs[d] = vb == 1 ? 0 : sb;
        sa *= va;
        sb *= vb;
    }
    g->batches = 1;
    for (int d = 0; d < g->nb; d++)
        if (qr_mul_overflow_i64(g->batches, g->bdims[d], &g->batches))
            return qr_op_fail(c, QR_ERR_SHAPE, "the output's batch size overflows");
    for (int d = 0; d < g->nb; d++) g->out_dims[g->out_rank++] = g->bdims[d];
    if (a->rank >= 2) g->out_dims[g->out_rank++] = g->M;
    if (b->rank >= 2) g->out_dims[g->out_rank++] = g->N;
    return QR_OK;
}

/* A matmul quantization parameter (scale or zero point) that is per-tensor, per-row of a
 * ([M] or [..., M, 1]) or per-column of b ([N] or [..., 1, N]): its element for output batch
 * index i and row m / column j is at sum(i_d * bs[d]) + m_or_j * vs. */
typedef struct QrQMMParam { int64_t bs[QR_MAX_RANK]; int64_t vs; } QrQMMParam;

static QrStatus qr__qmm_mm_param(const QrOpCtx *c, const QrQMatMul *g, int idx, bool a_side, QrQMMParam *p) {
    memset(p, 0, sizeof *p);
    const QrTensor *t = qr_op_in(c, idx);
    if (!t || t->numel == 1) return QR_OK;
    int64_t len = a_side ? g->M : g->N;
    if (t->rank == 1 && t->dims[0] == len) { p->vs = 1; return QR_OK; }
    bool ok = t->rank >= 2 && t->rank - 2 <= g->nb;
    if (ok) {
        int64_t dr = t->dims[t->rank - 2], dc = t->dims[t->rank - 1];
        ok = a_side ? (dc == 1 && (dr == len || dr == 1)) : (dr == 1 && (dc == len || dc == 1));
        p->vs = (a_side ? dr : dc) == 1 ? 0 : 1;
        int64_t s = dr * dc;
        for (int d = t->rank - 3, od = g->nb - 1; ok && d >= 0; d--, od--) {
            ok = t->dims[d] == 1 || t->dims[d] == g->bdims[od];
            p->bs[od] = t->dims[d] == 1 ? 0 : s;
            s *= t->dims[d];
        }
    }
    if (!ok) {
        char a[128];
        return qr_op_fail(c, QR_ERR_SHAPE, "input %d has shape %s; expected one element, [%lld] or [..., %s] for "
                          "per-%s quantization", idx, qr_shape_str_brackets(a, sizeof a, t->rank, t->dims),
                          (long long)len, a_side ? "M, 1" : "1, N", a_side ? "row" : "column");
    }
    return QR_OK;
}

static inline int64_t qr__qmm_mm_param_base(const QrQMMParam *p, int nb, const int64_t *idx) {
    int64_t o = 0;
    for (int d = 0; d < nb; d++) o += idx[d] * p->bs[d];
    return o;
}

/* ---- integer operands and work memory ------------------------------------------------ */

/* Bytes per stored element of an integer operand type (int4 is stored one per byte). */
static int qr_op_q_esize(QrDType dt) { return dt == QR_DT_U16 || dt == QR_DT_S16 ? 2 : 1; }
static bool qr_op_q_is_signed(QrDType dt) {
    return dt == QR_DT_S8 || dt == QR_DT_S4 || dt == QR_DT_S2 || dt == QR_DT_S16;
}

/* Whether a product of operands of types adt and bdt accumulated as `kind` runs on the 8-bit
 * GEMM (qr_kern.q8_gemm, int32 mod 2^32): both stored in bytes and the int32 sum is what the
 * kind means (S32 wraps like ONNX Runtime, S32_PROVEN cannot overflow). Otherwise the 16-bit
 * GEMM (qr_kern.q16_gemm, exact int64) runs on operands widened to 16 bits; for S32_PROVEN
 * that exact sum is the int32 one. */
static bool qr_op_q_narrow(QrDType adt, QrDType bdt, QrQuantAcc kind) {
    return qr_op_q_esize(adt) == 1 && qr_op_q_esize(bdt) == 1 && (kind == QR_QACC_S32 || kind == QR_QACC_S32_PROVEN);
}

/* Large work arrays (im2col columns, accumulators, widened operands): one growable 64-byte
 * aligned buffer per calling thread, reused by every node and run. Unlike the node's scratch
 * arena it is neither zeroed nor given back after each node, so a large convolution costs no
 * memset and no page faults. One op uses it at a time (ops do not nest; kernels have their own
 * scratch); it stays reachable for leak checkers through the thread-local pointer. */
static _Thread_local unsigned char *qr__qmm_work_mem;
static _Thread_local size_t qr__qmm_work_cap;
/* Pool workers run whole model runs too (analyses run their runs as parallel jobs): a worker
 * that exits (the pool restarted with another thread count) frees its buffer. */
static pthread_key_t qr__qmm_work_key;
static pthread_once_t qr__qmm_work_once = PTHREAD_ONCE_INIT;
static void qr__qmm_work_exit(void *p) { qr_aligned_free(p); }
static void qr__qmm_work_key_init(void) { pthread_key_create(&qr__qmm_work_key, qr__qmm_work_exit); }
#ifdef QR_TESTING
/* Frees the calling thread's work buffer (tests: the next op starts from none). */
QR_TESTAPI void qr__qmm_work_release(void) {
    qr_aligned_free(qr__qmm_work_mem);
    qr__qmm_work_mem = NULL;
    qr__qmm_work_cap = 0;
    pthread_once(&qr__qmm_work_once, qr__qmm_work_key_init);
    pthread_setspecific(qr__qmm_work_key, NULL);
}
#endif

/* Appends an array of `count` elements of `elem` bytes to a work layout of *total bytes and
 * returns its offset (64-byte aligned); *total becomes SIZE_MAX once the layout is too large. */
static size_t qr_op_q_wadd(size_t *total, int64_t count, size_t elem) {
    const size_t limit = (size_t)1 << 40;
    if (*total == SIZE_MAX || count < 0 || (uint64_t)count > (uint64_t)limit / elem) { *total = SIZE_MAX; return 0; }
    size_t off = *total, b = ((size_t)count * elem + 63) & ~(size_t)63;
    if (b > limit - off) { *total = SIZE_MAX; return 0; }
    *total = off + b;
    return off;
}

/* The calling thread's work buffer with at least `bytes` bytes (contents undefined; never NULL,
 * even for 0 bytes: callers add offsets to it). Fails with QR_ERR_NOMEM naming the node. */
static QrStatus qr_op_q_work(const QrOpCtx *c, size_t bytes, unsigned char **out) {
    if (bytes == SIZE_MAX) return qr_op_fail(c, QR_ERR_NOMEM, "the work buffers are too large");
    if (bytes > qr__qmm_work_cap || !qr__qmm_work_mem) {
        qr_aligned_free(qr__qmm_work_mem);
        size_t cap = QR_MAX(QR_MAX(bytes, (size_t)QR_ALIGN), qr__qmm_work_cap + qr__qmm_work_cap / 2);
        qr__qmm_work_mem = qr_aligned_alloc(cap);
        qr__qmm_work_cap = qr__qmm_work_mem ? cap : 0;
        pthread_once(&qr__qmm_work_once, qr__qmm_work_key_init);
        pthread_setspecific(qr__qmm_work_key, qr__qmm_work_mem);
        if (!qr__qmm_work_mem) return qr_op_fail(c, QR_ERR_NOMEM, "cannot allocate %zu bytes of work memory", bytes);
    }
    *out = qr__qmm_work_mem;
    return QR_OK;
}

/* dst[r*cols + k] = t[off + (trans ? k*rows + r : r*cols + k)] for r < rows, k < cols, stored
 * with esize bytes per element (2: widened to int16 / uint16 by t's signedness). */
static void qr__qmm_copy2d(const QrTensor *t, int64_t off, bool trans, int64_t rows, int64_t cols, int esize, void *dst) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < cols; k++) {
            int32_t v = qr_quant_geti(t, off + (trans ? k * rows + r : r * cols + k));
            if (esize == 1) ((uint8_t *)dst)[r * cols + k] = (uint8_t)v;
            else ((uint16_t *)dst)[r * cols + k] = (uint16_t)v;
        }
}

/* n elements of t from off widened to 16 bits (int16 / uint16 by t's signedness) into dst. */
static void qr_op_q_widen(const QrTensor *t, int64_t off, int64_t n, uint16_t *dst) {
    if (t->dtype == QR_DT_U8 || t->dtype == QR_DT_U4) {
        const uint8_t *p = (const uint8_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = p[i];
    } else if (t->dtype == QR_DT_S8 || t->dtype == QR_DT_S4) {
        const int8_t *p = (const int8_t *)t->data + off;
        for (int64_t i = 0; i < n; i++) dst[i] = (uint16_t)(int16_t)p[i];
    } else {
        memcpy(dst, (const uint16_t *)t->data + off, (size_t)n * sizeof *dst);
    }
}

/* acc + bias as the accumulator kind adds it: int32 wrapping (ORT) for S32, exact otherwise. */
static inline int64_t qr_op_q_acc_add(QrQuantAcc kind, int64_t acc, int32_t bias) {
    if (kind == QR_QACC_S32) return (int32_t)((uint32_t)acc + (uint32_t)bias);
    return acc + bias;
}

/* Shared by QLinearMatMul (quantized output) and MatMulInteger (int32 output). Inputs: a at
 * ia, b at ib, zero points at iaz / ibz (-1 = none), scales at ias / ibs / iys / iyz
 * (-1 for MatMulInteger). */
typedef struct QrQMMIo { int ia, ias, iaz, ib, ibs, ibz, iys, iyz; } QrQMMIo;

static QrStatus qr__qmm_mm_check(QrOpCtx *c, const QrQMMIo *io, QrQMatMul *g, QrQMMParam *pas, QrQMMParam *paz,
                               QrQMMParam *pbs, QrQMMParam *pbz) {
    const QrTensor *a = qr_op_in(c, io->ia), *b = qr_op_in(c, io->ib);
    if (!a || !b) return qr_op_fail(c, QR_ERR_INVALID, "inputs A and B are required");
    if (!qr_op_q_ok_act(c, a->dtype) || !qr_op_q_ok_wt(c, b->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "inputs have types %s and %s (%s)",
                          qr_dtype_name(a->dtype), qr_dtype_name(b->dtype), qr_op_q_types_msg(c));
    QR_TRY(qr__qmm_mm_geom(c, a, b, g));
    QR_TRY(qr__qmm_mm_param(c, g, io->iaz, true, paz));
    QR_TRY(qr__qmm_mm_param(c, g, io->ibz, false, pbz));
    QR_TRY(qr_op_q_need_zp_type(c, io->iaz, a->dtype, "a zero point"));
    QR_TRY(qr_op_q_need_zp_type(c, io->ibz, b->dtype, "b zero point"));
    if (io->ias >= 0) {
        QR_TRY(qr_op_q_need_scale(c, io->ias, "a_scale"));
        QR_TRY(qr_op_q_need_scale(c, io->ibs, "b_scale"));
        QR_TRY(qr_op_q_need_scale(c, io->iys, "y_scale"));
        QR_TRY(qr__qmm_mm_param(c, g, io->ias, true, pas));
        QR_TRY(qr__qmm_mm_param(c, g, io->ibs, false, pbs));
        QR_TRY(qr_op_q_need_scalar(c, io->iys, "y_scale"));
        QR_TRY(qr_op_q_need_scalar(c, io->iyz, "y_zero_point"));
        const QrTensor *yz = qr_op_in(c, io->iyz);
        if (yz && !qr_op_q_ok_act(c, yz->dtype))
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "y_zero_point has type %s (%s)", qr_dtype_name(yz->dtype),
                              qr_op_q_types_msg(c));
    }
    return QR_OK;
}

static const QrQMMIo qr__qmm_qlmm_io = { 0, 1, 2, 3, 4, 5, 6, 7 };
static const QrQMMIo qr__qmm_mmi_io = { 0, -1, 2, 1, -1, 3, -1, -1 };

static QrStatus qr__qmm_qlmatmul_shape(QrOpCtx *c) {
    QrQMatMul g;
    QrQMMParam p[4];
    QR_TRY(qr__qmm_mm_check(c, &qr__qmm_qlmm_io, &g, &p[0], &p[1], &p[2], &p[3]));
    const QrTensor *yz = qr_op_in(c, 7);
    return qr_op_set_out(c, 0, yz ? yz->dtype : c->in[0]->dtype, g.out_rank, g.out_dims);
}

static QrStatus qr__qmm_matmulint_shape(QrOpCtx *c) {
    QrQMatMul g;
    QrQMMParam p[4];
    QR_TRY(qr__qmm_mm_check(c, &qr__qmm_mmi_io, &g, &p[0], &p[1], &p[2], &p[3]));
    return qr_op_set_out(c, 0, QR_DT_S32, g.out_rank, g.out_dims);
}

/* max over columns n of sum_k |B[k][n] - bz[n * bzs]| for the (K, N) operand whose element
 * (k, n) is t[off + (trans ? n*K + k : k*N + n)] (below 2^53: K*N <= 2^36, |term| <= 65535). */
static int64_t qr__qmm_colsum_max(const QrTensor *t, int64_t off, bool trans, int64_t K, int64_t N, const int32_t *bz,
                                int64_t bzs) {
    int64_t best = 0;
    for (int64_t n = 0; n < N; n++) {
        int64_t s = 0;
        for (int64_t k = 0; k < K; k++) {
            int64_t v = (int64_t)qr_quant_geti(t, off + (trans ? n * K + k : k * N + n)) - bz[n * bzs];
            s += v < 0 ? -v : v;
        }
        best = QR_MAX(best, s);
    }
    return best;
}

/* Accumulator of a matmul whose a zero points are az[0..naz) and b zero points bz[0..nbz): for
 * 16-bit operands the bound is amax * colsum (qr__qmm_colsum_max of b with its zero points). */
static QrQuantAcc qr__qmm_mm_acc(QrDType adt, const int32_t *az, int64_t naz, QrDType bdt, const int32_t *bz,
                               int64_t nbz, int64_t colsum) {
    if (qr_quant_is_8bit(adt) && qr_quant_is_8bit(bdt)) return QR_QACC_S32;
    int64_t amax = 0;
    bool fit = true;
    for (int64_t i = 0; i < naz; i++) {
        amax = QR_MAX(amax, qr_quant_absmax(adt, az[i]));
        fit = fit && qr_quant_fits_s16(adt, az[i]);
    }
    for (int64_t i = 0; i < nbz; i++) fit = fit && qr_quant_fits_s16(bdt, bz[i]);
    return qr_quant_acc_choose(false, fit, qr_quant_bound_madd(colsum, amax, 0));
}

/* Runs the batched product; requantizes when io has scales (QLinearMatMul:
 * y = saturate(round(acc * (a_scale * b_scale / y_scale)) + y_zp), ORT's arithmetic),
 * else stores acc as int32 (MatMulInteger). The accumulator follows qr__qmm_mm_acc; 8-bit
 * operands run on qr_kern.q8_gemm (zero points handled by the kernel), others on q16_gemm. */
static QrStatus qr__qmm_mm_exec(QrOpCtx *c, const QrQMMIo *io) {
    qr_op_q_kern_ready();
    QrQMatMul g;
    QrQMMParam pas, paz, pbs, pbz;
    QR_TRY(qr__qmm_mm_check(c, io, &g, &pas, &paz, &pbs, &pbz));
    const QrTensor *a = c->in[io->ia], *b = c->in[io->ib];
    QrTensor *y = c->out[0];
    bool quant = io->ias >= 0;
    int32_t *az, *bz;
    float *as = NULL, *bsc = NULL, ys = 1.0f;
    int32_t yz = 0;
    QrQuantRange r = { 0, 0 };
    QR_TRY(qr_op_q_load_zps(c, io->iaz, 1, &az));
    QR_TRY(qr_op_q_load_zps(c, io->ibz, 1, &bz));
    int64_t naz = qr_op_in(c, io->iaz) ? c->in[io->iaz]->numel : 1;
    int64_t nbz = qr_op_in(c, io->ibz) ? c->in[io->ibz]->numel : 1;
    if (quant) {
        QR_TRY(qr_op_q_load_scales(c, io->ias, &as));
        QR_TRY(qr_op_q_load_scales(c, io->ibs, &bsc));
        ys = qr_op_q_scalar_f(c, io->iys);
        yz = qr_op_q_scalar_zp(c, io->iyz);
        QR_TRY(qr_op_q_out_range(c, y->dtype, &r));
    }
    const int64_t M = g.M, K = g.K, N = g.N;
    if (M * N == 0 || g.batches == 0) return QR_OK;
    const int ea = qr_op_q_esize(a->dtype), eb = qr_op_q_esize(b->dtype), yb = quant ? qr_op_q_esize(y->dtype) : 4;
    const bool both8 = qr_quant_is_8bit(a->dtype) && qr_quant_is_8bit(b->dtype);
    float *mult;
    const bool mult_table = quant && pas.vs && pbs.vs;   /* per-row a and per-column b scales: M x N multipliers */
    QR_TRY(qr_op_q_alloc(c, (size_t)(mult_table ? M * N : QR_MAX(M, N)), sizeof *mult, (void **)&mult));
    size_t tot = 0, o_acc = qr_op_q_wadd(&tot, M * N, 8), o_a = qr_op_q_wadd(&tot, M * K, 2), o_b = qr_op_q_wadd(&tot, K * N, 2);
    unsigned char *wk;
    QR_TRY(qr_op_q_work(c, tot, &wk));
    int64_t idx[QR_MAX_RANK] = { 0 };
    for (int64_t bt = 0; bt < g.batches; bt++) {
        int64_t ao = 0, bo = 0;
        for (int d = 0; d < g.nb; d++) { ao += idx[d] * g.as[d]; bo += idx[d] * g.bs[d]; }
        int64_t azb = qr__qmm_mm_param_base(&paz, g.nb, idx), bzb = qr__qmm_mm_param_base(&pbz, g.nb, idx);
        int64_t csum = both8 ? 0 : qr__qmm_colsum_max(b, bo, false, K, N, bz + bzb, pbz.vs);
        QrQuantAcc kind = qr__qmm_mm_acc(a->dtype, az, naz, b->dtype, bz, nbz, csum);
        QrQOperand A = { (const unsigned char *)a->data + ao * ea, K, qr_op_q_is_signed(a->dtype), az + azb, paz.vs, NULL };
        QrQOperand B = { (const unsigned char *)b->data + bo * eb, N, qr_op_q_is_signed(b->dtype), bz + bzb, pbz.vs, NULL };
        const bool narrow = qr_op_q_narrow(a->dtype, b->dtype, kind);
        const int64_t yo = bt * M * N;
        int32_t *acc32 = quant ? (int32_t *)(wk + o_acc) : (int32_t *)y->data + yo;
        int64_t *acc64 = (int64_t *)(wk + o_acc);
        if (narrow && quant) {   /* the requantization fused into the GEMM */
            int64_t asb = qr__qmm_mm_param_base(&pas, g.nb, idx), bsb = qr__qmm_mm_param_base(&pbs, g.nb, idx);
            QrQ8Requant rq = { NULL, 0, 0, mult, 0, 0, yz, r.lo, r.hi, (unsigned char *)y->data + yo * yb, N, yb };
            if (pas.vs && pbs.vs) {
                for (int64_t m = 0; m < M; m++)
                    for (int64_t n = 0; n < N; n++) mult[m * N + n] = qr_quant_multiplier(as[asb + m], bsc[bsb + n], ys);
                rq.mult_rs = N;
                rq.mult_cs = 1;
            } else {
                for (int64_t i = 0; i < (pas.vs ? M : pbs.vs ? N : 1); i++)
                    mult[i] = qr_quant_multiplier(as[asb + (pas.vs ? i : 0)], bsc[bsb + (pbs.vs ? i : 0)], ys);
                rq.mult_rs = pas.vs ? 1 : 0;
                rq.mult_cs = pbs.vs ? 1 : 0;
            }
            qr_kern.q8_gemm_rq(M, N, K, &A, &B, NULL, &rq);
        } else if (narrow) {
            qr_kern.q8_gemm(M, N, K, &A, &B, acc32, N, false);
        } else {
            if (ea == 1) { qr_op_q_widen(a, ao, M * K, (uint16_t *)(wk + o_a)); A.data = wk + o_a; }
            if (eb == 1) { qr_op_q_widen(b, bo, K * N, (uint16_t *)(wk + o_b)); B.data = wk + o_b; }
            qr_kern.q16_gemm(M, N, K, &A, &B, acc64, N, false);
            if (!quant) for (int64_t i = 0; i < M * N; i++) acc32[i] = (int32_t)acc64[i];
        }
        if (quant && !narrow) {
            int64_t asb = qr__qmm_mm_param_base(&pas, g.nb, idx), bsb = qr__qmm_mm_param_base(&pbs, g.nb, idx);
            unsigned char *py = (unsigned char *)y->data + yo * yb;
            for (int64_t m = 0; m < M; m++) {
                float av = as[asb + m * pas.vs];
                if (m == 0 || pas.vs)
                    for (int64_t n = 0; n < (pbs.vs ? N : 1); n++) mult[n] = qr_quant_multiplier(av, bsc[bsb + n * pbs.vs], ys);
                if (narrow)
                    qr_kern.s32_requant(N, acc32 + m * N, NULL, 0, mult, pbs.vs, yz, r.lo, r.hi, py + m * N * yb, yb);
                else
                    qr_kern.s64_requant(N, acc64 + m * N, NULL, 0, mult, pbs.vs, yz, r.lo, r.hi, py + m * N * yb, yb);
            }
        }
        for (int d = g.nb - 1; d >= 0; d--) {
            if (++idx[d] < g.bdims[d]) break;
            idx[d] = 0;
        }
    }
    return QR_OK;
}

static QrStatus qr__qmm_qlmatmul_exec(QrOpCtx *c) { return qr__qmm_mm_exec(c, &qr__qmm_qlmm_io); }
static QrStatus qr__qmm_matmulint_exec(QrOpCtx *c) { return qr__qmm_mm_exec(c, &qr__qmm_mmi_io); }

/* com.microsoft.QGemm(A, a_scale, a_zp, B, b_scale, b_zp, [C], [y_scale], [y_zp]): 2-D
 * Gemm with transA / transB / alpha. acc = C (int32, broadcast to M x N) + sum (a - a_zp) *
 * (b - b_zp[n]); scale[n] = alpha * a_scale * b_scale[n] (/ y_scale when given). With a
 * y_zero_point the output is requantized to its type, otherwise it is float32 acc * scale
 * (ORT decides on the zero point's presence). */
typedef struct QrQGemm { int64_t M, K, N; bool ta, tb; } QrQGemm;

static QrStatus qr__qmm_qgemm_check(QrOpCtx *c, QrQGemm *g) {
    const QrTensor *a = qr_op_in(c, 0), *b = qr_op_in(c, 3), *cc = qr_op_in(c, 6), *yz = qr_op_in(c, 8);
    char s1[128], s2[128];
    if (!a || !b) return qr_op_fail(c, QR_ERR_INVALID, "inputs A and B are required");
    if (!qr_op_q_ok_act(c, a->dtype) || !qr_op_q_ok_wt(c, b->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "inputs have types %s and %s (%s)",
                          qr_dtype_name(a->dtype), qr_dtype_name(b->dtype), qr_op_q_types_msg(c));
    if (a->rank != 2 || b->rank != 2)
        return qr_op_fail(c, QR_ERR_SHAPE, "A and B must be 2-D, got %s and %s",
                          qr_shape_str_brackets(s1, sizeof s1, a->rank, a->dims),
                          qr_shape_str_brackets(s2, sizeof s2, b->rank, b->dims));
    g->ta = qr_attr_int(c->node, "transA", 0) != 0;
    g->tb = qr_attr_int(c->node, "transB", 0) != 0;
    g->M = g->ta ? a->dims[1] : a->dims[0];
    g->K = g->ta ? a->dims[0] : a->dims[1];
    int64_t kb = g->tb ? b->dims[1] : b->dims[0];
    g->N = g->tb ? b->dims[0] : b->dims[1];
    if (kb != g->K)
        return qr_op_fail(c, QR_ERR_SHAPE, "inner dims differ: A %s (transA=%d), B %s (transB=%d)",
                          qr_shape_str_brackets(s1, sizeof s1, a->rank, a->dims), g->ta,
                          qr_shape_str_brackets(s2, sizeof s2, b->rank, b->dims), g->tb);
    QR_TRY(qr_op_q_need_scale(c, 1, "a_scale"));
    QR_TRY(qr_op_q_need_scale(c, 4, "b_scale"));
    QR_TRY(qr_op_q_need_scalar(c, 1, "a_scale"));
    QR_TRY(qr_op_q_need_scalar(c, 2, "a_zero_point"));
    QR_TRY(qr_op_q_need_zp_type(c, 2, a->dtype, "a_zero_point"));
    QR_TRY(qr_op_q_need_zp_type(c, 5, b->dtype, "b_zero_point"));
    for (int i = 4; i <= 5; i++) {
        const QrTensor *t = qr_op_in(c, i);
        if (t && t->numel != 1 && !(t->rank == 1 && t->dims[0] == g->N))
            return qr_op_fail(c, QR_ERR_SHAPE, "input %d must be a scalar or 1-D of length N=%lld, got %s", i,
                              (long long)g->N, qr_shape_str_brackets(s1, sizeof s1, t->rank, t->dims));
    }
    if (cc) {
        if (cc->dtype != QR_DT_S32)
            return qr_op_fail(c, QR_ERR_INVALID, "C has type %s (int32 expected)", qr_dtype_name(cc->dtype));
        bool ok = cc->rank <= 2;
        for (int d = 0; ok && d < cc->rank; d++) {
            int64_t want = d == cc->rank - 1 ? g->N : g->M;
            ok = cc->dims[d] == 1 || cc->dims[d] == want;
        }
        if (!ok)
            return qr_op_fail(c, QR_ERR_SHAPE, "C with shape %s cannot be broadcast to [%lld, %lld]",
                              qr_shape_str_brackets(s1, sizeof s1, cc->rank, cc->dims), (long long)g->M,
                              (long long)g->N);
    }
    if (qr_op_in(c, 7)) {
        QR_TRY(qr_op_q_need_scale(c, 7, "y_scale"));
        QR_TRY(qr_op_q_need_scalar(c, 7, "y_scale"));
    }
    QR_TRY(qr_op_q_need_scalar(c, 8, "y_zero_point"));
    if (yz && !qr_op_q_ok_act(c, yz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "y_zero_point has type %s (%s)", qr_dtype_name(yz->dtype),
                          qr_op_q_types_msg(c));
    return QR_OK;
}

static QrStatus qr__qmm_qgemm_shape(QrOpCtx *c) {
    QrQGemm g;
    QR_TRY(qr__qmm_qgemm_check(c, &g));
    const QrTensor *yz = qr_op_in(c, 8);
    int64_t dims[2] = { g.M, g.N };
    return qr_op_set_out(c, 0, yz ? yz->dtype : QR_DT_F32, 2, dims);
}

/* Bound on |C| for the accumulator choice (0 without C). */
static int64_t qr__qmm_int32_absmax(const QrTensor *t) {
    int64_t m = 0;
    for (int64_t i = 0; t && i < t->numel; i++) {
        int64_t v = ((const int32_t *)t->data)[i];
        m = QR_MAX(m, v < 0 ? -v : v);
    }
    return m;
}

static QrStatus qr__qmm_qgemm_exec(QrOpCtx *c) {
    qr_op_q_kern_ready();
    QrQGemm g;
    QR_TRY(qr__qmm_qgemm_check(c, &g));
    const QrTensor *a = c->in[0], *b = c->in[3], *cc = qr_op_in(c, 6), *ysc = qr_op_in(c, 7), *yzt = qr_op_in(c, 8);
    QrTensor *y = c->out[0];
    const int64_t M = g.M, K = g.K, N = g.N;
    float *bsc, alpha = qr_attr_float(c->node, "alpha", 1.0f), as = qr_op_q_scalar_f(c, 1);
    int32_t *bz, az = qr_op_q_scalar_zp(c, 2);
    QR_TRY(qr_op_q_load_scales(c, 4, &bsc));
    QR_TRY(qr_op_q_load_zps(c, 5, 1, &bz));
    int64_t bzs = qr_op_in(c, 5) && qr_op_in(c, 5)->numel > 1 ? 1 : 0, bss = c->in[4]->numel > 1 ? 1 : 0;
    if (M * N == 0) return QR_OK;
    const bool both8 = qr_quant_is_8bit(a->dtype) && qr_quant_is_8bit(b->dtype);
    const int64_t csum = both8 ? 0 : qr__qmm_colsum_max(b, 0, g.tb, K, N, bz, bzs);
    QrQuantAcc kind = qr__qmm_mm_acc(a->dtype, &az, 1, b->dtype, bz, qr_op_in(c, 5) ? c->in[5]->numel : 1, csum);
    if (kind == QR_QACC_S32_PROVEN)      /* C joins every sum */
        kind = qr_quant_acc_choose(false, true,
                                   qr_quant_bound_madd(csum, qr_quant_absmax(a->dtype, az), qr__qmm_int32_absmax(cc)));
    const bool narrow = qr_op_q_narrow(a->dtype, b->dtype, kind);
    const int es = narrow ? 1 : 2;
    size_t tot = 0, o_acc = qr_op_q_wadd(&tot, M * N, 8), o_a = qr_op_q_wadd(&tot, M * K, 2), o_b = qr_op_q_wadd(&tot, K * N, 2);
    unsigned char *wk;
    QR_TRY(qr_op_q_work(c, tot, &wk));
    const bool as_ = qr_op_q_is_signed(a->dtype), bs_ = qr_op_q_is_signed(b->dtype);
    /* transB: acc^T (N, M) = B (N, K) @ A^T (K, M); otherwise acc (M, N) = A (M, K) @ B (K, N) */
    QrQOperand L, R;
    if (g.tb) {
        L = (QrQOperand){ b->data, K, bs_, bz, bzs, NULL };
        if (!narrow) { qr__qmm_copy2d(b, 0, false, N, K, 2, wk + o_b); L.data = wk + o_b; }
        R = (QrQOperand){ a->data, g.ta ? M : 1, as_, &az, 0, NULL };
        if (!narrow || (!g.ta && M > 1)) { qr__qmm_copy2d(a, 0, !g.ta, K, M, es, wk + o_a); R.data = wk + o_a; R.ld = M; }
    } else {
        L = (QrQOperand){ a->data, K, as_, &az, 0, NULL };
        if (!narrow || g.ta) { qr__qmm_copy2d(a, 0, g.ta, M, K, es, wk + o_a); L.data = wk + o_a; }
        R = (QrQOperand){ b->data, N, bs_, bz, bzs, NULL };
        if (!narrow) { qr__qmm_copy2d(b, 0, false, K, N, 2, wk + o_b); R.data = wk + o_b; }
    }
    const int64_t rows = g.tb ? N : M, cols = g.tb ? M : N;
    int32_t *acc32 = (int32_t *)(wk + o_acc);
    int64_t *acc64 = (int64_t *)(wk + o_acc);
    if (narrow) qr_kern.q8_gemm(rows, cols, K, &L, &R, acc32, cols, false);
    else qr_kern.q16_gemm(rows, cols, K, &L, &R, acc64, cols, false);
    float *scale;
    QR_TRY(qr_op_q_alloc(c, (size_t)N, sizeof *scale, (void **)&scale));
    for (int64_t n = 0; n < N; n++) {
        scale[n] = alpha * as * bsc[n * bss];
        if (ysc) scale[n] /= qr_op_q_scalar_f(c, 7);
    }
    QrQuantRange r = { 0, 0 };
    int32_t yz = yzt ? qr_op_q_scalar_zp(c, 8) : 0;
    if (yzt) QR_TRY(qr_op_q_out_range(c, y->dtype, &r));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t at = g.tb ? n * M + m : m * N + n;
            int64_t v = narrow ? acc32[at] : acc64[at];
            if (cc) {
                int64_t ci = cc->rank == 2 ? (cc->dims[0] == 1 ? 0 : m) * cc->dims[1] + (cc->dims[1] == 1 ? 0 : n)
                           : cc->rank == 1 ? (cc->dims[0] == 1 ? 0 : n) : 0;
                v = qr_op_q_acc_add(kind, v, ((const int32_t *)cc->data)[ci]);
            }
            if (yzt) qr_quant_seti(y, m * N + n, qr_quant_requantize_s64(v, scale[n], yz, r));
            else ((float *)y->data)[m * N + n] = (float)v * scale[n];
        }
    return QR_OK;
}

/* ==== table ======================================================================= */

static const QrOpDef qr_ops_qmatmul[] = {
    { "", "QLinearMatMul", 8, 8, 1, 1, qr__qmm_qlmatmul_shape, qr__qmm_qlmatmul_exec, 0, 0 },
    { "", "MatMulInteger", 2, 4, 1, 1, qr__qmm_matmulint_shape, qr__qmm_matmulint_exec, 0, 0 },
    { "com.microsoft", "QGemm", 6, 9, 1, 1, qr__qmm_qgemm_shape, qr__qmm_qgemm_exec, 0, 1u << 2 | 1u << 5 },
    { QR_QUANT_INT_DOMAIN, "QLinearMatMul", 8, 8, 1, 1, qr__qmm_qlmatmul_shape, qr__qmm_qlmatmul_exec, 0, 0 },
    { QR_QUANT_INT_DOMAIN, "QGemm", 6, 9, 1, 1, qr__qmm_qgemm_shape, qr__qmm_qgemm_exec, 0, 1u << 2 | 1u << 5 },
};
