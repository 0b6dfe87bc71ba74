/* ops/contrib_wq — ONNX Runtime's weight-only quantized contrib operators (com.microsoft):
 * MatMulNBits (what ORT's weight-only quantizer, Olive and onnxruntime-genai write for LLMs),
 * MatMulBnb4 (bitsandbytes FP4 / NF4) and GatherBlockQuantized (quantized embedding tables).
 *
 * A weight-only node holds its weight in blocks of integers with one float scale (and zero
 * point) per block; the activation stays float. qreport dequantizes the weight exactly as ORT
 * does and multiplies in float32, except where ORT's CPU kernel quantizes the activation too
 * (MatMulNBits accuracy_level 4), which it follows. The arithmetic is the same in sim and int
 * mode: ONNX Runtime runs the same kernel at every graph optimization level. Float results
 * agree with ORT within float32 rounding (the summation order of MLAS's blocked kernels is not
 * reproduced), not bit for bit; tests/test_contrib.c says how close.
 *
 * Map: MatMulNBits geometry · weight dequantization (shared with the analyses: a weight-only
 * node is the quantizer of its weight) · the float and the int8-activation products ·
 * MatMulBnb4 · GatherBlockQuantized · table. */

/* ==== MatMulNBits: geometry ========================================================== */

/* Y = A @ dequant(B)^T (+ bias): A (..., K) float; B uint8 (N, k_blocks, blob) with K split in
 * k_blocks = ceil(K / block_size) blocks of block_size codes of `bits` bits, packed low bits
 * first; scales (N, k_blocks); zero_points packed like B codes (N, ceil(k_blocks * bits / 8)
 * bytes), or float like scales (not quantized), absent = 2^(bits-1); g_idx int32 (K): the
 * block of column k (GPTQ act-order), absent = k / block_size; bias (N). */
typedef struct QrWqNBits {
    int64_t K, N, bits, bs, nb, blob, zp_row, acc;
    int64_t M;               /* rows of A (product of its leading dims) */
    bool zp_float;           /* zero points are floats (T1), not packed codes */
    bool int8_act;           /* accuracy_level 4 as ORT's CPU kernel: int8 activations */
} QrWqNBits;

enum { QR__WQ_A, QR__WQ_B, QR__WQ_SCALES, QR__WQ_ZP, QR__WQ_GIDX, QR__WQ_BIAS };

static QrStatus qr__wq_need_numel(const QrOpCtx *c, const QrTensor *t, int64_t n, const char *what) {
    if (t->numel != n)
        return qr_op_fail(c, QR_ERR_SHAPE, "%s has %lld elements, expected %lld", what, (long long)t->numel,
                          (long long)n);
    return QR_OK;
}

/* Reads the attributes and checks every input's type and size (no data needed). */
static QrStatus qr_op_wq_nbits_geom(const QrOpCtx *c, QrWqNBits *g) {
    const QrTensor *a = c->in[QR__WQ_A], *b = c->in[QR__WQ_B], *s = c->in[QR__WQ_SCALES];
    const QrTensor *z = qr_op_in(c, QR__WQ_ZP), *gi = qr_op_in(c, QR__WQ_GIDX), *bias = qr_op_in(c, QR__WQ_BIAS);
    memset(g, 0, sizeof *g);
    g->K = qr_attr_int(c->node, "K", -1);
    g->N = qr_attr_int(c->node, "N", -1);
    g->bits = qr_attr_int(c->node, "bits", 4);
    g->bs = qr_attr_int(c->node, "block_size", -1);
    g->acc = qr_attr_int(c->node, "accuracy_level", 0);
    if (g->K < 1 || g->N < 1 || g->K > ((int64_t)1 << 40) || g->N > ((int64_t)1 << 40))
        return qr_op_fail(c, QR_ERR_INVALID, "attributes K and N are required and must be >= 1 (K=%lld, N=%lld)",
                          (long long)g->K, (long long)g->N);
    if (g->bits != 2 && g->bits != 4 && g->bits != 8)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "bits=%lld (2, 4 or 8 are defined)", (long long)g->bits);
    if (g->bs < 16 || (g->bs & (g->bs - 1)) || g->bs > ((int64_t)1 << 20))
        return qr_op_fail(c, QR_ERR_INVALID, "block_size=%lld must be a power of 2 and >= 16", (long long)g->bs);
    if (g->acc < 0 || g->acc > 4)
        return qr_op_fail(c, QR_ERR_INVALID, "accuracy_level=%lld (0..4 are defined)", (long long)g->acc);
    g->nb = (g->K + g->bs - 1) / g->bs;
    g->blob = g->bs * g->bits / 8;
    g->zp_row = (g->nb * g->bits + 7) / 8;
    if (!qr_dtype_is_float(a->dtype) || a->dtype == QR_DT_F64)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "A has type %s (float32, float16 or bfloat16)", qr_dtype_name(a->dtype));
    if (a->rank < 1 || a->dims[a->rank - 1] != g->K)
        return qr_op_fail(c, QR_ERR_SHAPE, "A's last dimension must be K=%lld", (long long)g->K);
    g->M = a->numel / g->K;
    if (b->dtype != QR_DT_U8) return qr_op_fail(c, QR_ERR_INVALID, "B has type %s (uint8)", qr_dtype_name(b->dtype));
    QR_TRY(qr__wq_need_numel(c, b, g->N * g->nb * g->blob, "B (N x k_blocks x blob_size)"));
    if (s->dtype != a->dtype)
        return qr_op_fail(c, QR_ERR_INVALID, "scales has type %s, A has %s", qr_dtype_name(s->dtype),
                          qr_dtype_name(a->dtype));
    QR_TRY(qr__wq_need_numel(c, s, g->N * g->nb, "scales (N x k_blocks)"));
    if (z) {
        g->zp_float = z->dtype != QR_DT_U8;
        if (g->zp_float && z->dtype != a->dtype)
            return qr_op_fail(c, QR_ERR_INVALID, "zero_points has type %s (uint8, or A's type %s)",
                              qr_dtype_name(z->dtype), qr_dtype_name(a->dtype));
        QR_TRY(qr__wq_need_numel(c, z, g->zp_float ? g->N * g->nb : g->N * g->zp_row, "zero_points"));
    }
    if (gi) {
        if (gi->dtype != QR_DT_S32) return qr_op_fail(c, QR_ERR_INVALID, "g_idx has type %s (int32)", qr_dtype_name(gi->dtype));
        QR_TRY(qr__wq_need_numel(c, gi, g->K, "g_idx"));
    }
    if (bias) {
        if (bias->dtype != a->dtype)
            return qr_op_fail(c, QR_ERR_INVALID, "bias has type %s, A has %s", qr_dtype_name(bias->dtype),
                              qr_dtype_name(a->dtype));
        QR_TRY(qr__wq_need_numel(c, bias, g->N, "bias"));
    }
    /* ORT's CPU kernel (1.30, x86-64 and arm64): accuracy_level 4 with 4- or 8-bit codes, uint8 or
     * no zero points and no g_idx quantizes A to int8 per block (MLAS's CompInt8); every other
     * case dequantizes B and multiplies in float32 (levels 0-3 all compute in float32 on CPU). */
    g->int8_act = g->acc == 4 && (g->bits == 4 || g->bits == 8) && !g->zp_float && !gi;
    double work = (double)g->M * (double)g->N * (double)g->K;
    char what[96];
    snprintf(what, sizeof what, "%lld x %lld x %lld products", (long long)g->M, (long long)g->N, (long long)g->K);
    return qr_op_check_work(c, work, what);
}

static QrStatus qr__wq_nbits_shape(QrOpCtx *c) {
    QrWqNBits g;
    QR_TRY(qr_op_wq_nbits_geom(c, &g));
    const QrTensor *a = c->in[0];
    int64_t d[QR_MAX_RANK];
    for (int i = 0; i < a->rank; i++) d[i] = a->dims[i];
    d[a->rank - 1] = g.N;
    return qr_op_set_out(c, 0, a->dtype, a->rank, d);
}

/* ==== MatMulNBits: weight dequantization ============================================== */

/* Code k of row n (0 <= k < nb * bs; codes past K are padding). */
static inline int32_t qr_wq_nbits_code(const QrWqNBits *g, const uint8_t *b, int64_t n, int64_t k) {
    int64_t per = 8 / g->bits, bit = (k % per) * g->bits;
    uint8_t byte = b[n * g->nb * g->blob + k / per];
    return (byte >> bit) & ((1 << g->bits) - 1);
}

/* Integer zero point of block kb of row n (packed codes, or the default 2^(bits-1)). */
static inline int32_t qr_wq_nbits_zp(const QrWqNBits *g, const uint8_t *zp, int64_t n, int64_t kb) {
    if (!zp) return 1 << (g->bits - 1);
    int64_t per = 8 / g->bits, bit = (kb % per) * g->bits;
    return (zp[n * g->zp_row + kb / per] >> bit) & ((1 << g->bits) - 1);
}

/* Block of column k: g_idx[k] (checked against k_blocks) or k / block_size. */
static QrStatus qr__wq_nbits_block_of(const QrOpCtx *c, const QrWqNBits *g, const int32_t *gidx, int64_t k,
                                      int64_t *kb) {
    if (!gidx) { *kb = k / g->bs; return QR_OK; }
    if (gidx[k] < 0 || gidx[k] >= g->nb)
        return qr_op_fail(c, QR_ERR_INVALID, "g_idx[%lld] = %d is not a block index (0..%lld)", (long long)k, gidx[k],
                          (long long)(g->nb - 1));
    *kb = gidx[k];
    return QR_OK;
}

/* The float weight W (N, K) the node multiplies by, as ORT dequantizes it: (code - zp) * scale
 * with an integer zero point (one rounding), code * scale + (-(scale * zp)) with a float one or
 * with g_idx (ORT's DequantizeBlockwise). With g_idx ORT 1.30's CPU kernel ignores uint8 zero
 * points (it uses 8); qreport uses them, as the operator is defined (docs/OPERATORS.md). scales / float zero points are float32 here (the caller stages
 * float16 through float32). */
static QrStatus qr_wq_nbits_dequant(const QrOpCtx *c, const QrWqNBits *g, const uint8_t *b, const float *scales,
                                    const uint8_t *zp_u8, const float *zp_f, const int32_t *gidx, float *w) {
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t k = 0; k < g->K; k++) {
            int64_t kb = 0;
            QR_TRY(qr__wq_nbits_block_of(c, g, gidx, k, &kb));
            float s = scales[n * g->nb + kb];
            int32_t q = qr_wq_nbits_code(g, b, n, k);
            float v;
            if (zp_f || gidx) {   /* ORT's DequantizeBlockwise (float zero points, or g_idx) */
                float adj = -(s * (zp_f ? zp_f[n * g->nb + kb] : (float)qr_wq_nbits_zp(g, zp_u8, n, kb)));
                v = (float)q * s;
                QR_KERN_ROUNDED(v);
                v += adj;
            } else {
                v = (float)(q - qr_wq_nbits_zp(g, zp_u8, n, kb)) * s;
            }
            w[n * g->K + k] = v;
        }
    return QR_OK;
}

/* The same weight transposed, wt[k * N + n] = W[n][k], without g_idx: one block's scale and zero
 * point at a time (the arithmetic of qr_wq_nbits_dequant, so the same bits; what every run of a
 * node pays, the weight being dequantized per run). */
static void qr__wq_nbits_dequant_t(const QrWqNBits *g, const uint8_t *b, const float *scales, const uint8_t *zp_u8,
                                   const float *zp_f, float *wt) {
    const int64_t per = 8 / g->bits, N = g->N;
    const int mask = (1 << g->bits) - 1;
    for (int64_t n = 0; n < N; n++) {
        const uint8_t *row = b + n * g->nb * g->blob;
        for (int64_t kb = 0; kb < g->nb; kb++) {
            const float s = scales[n * g->nb + kb];
            const int64_t k0 = kb * g->bs, k1 = QR_MIN(g->K, k0 + g->bs);
            if (zp_f) {
                const float adj = -(s * zp_f[n * g->nb + kb]);
                for (int64_t k = k0; k < k1; k++) {
                    float v = (float)((row[k / per] >> ((k % per) * g->bits)) & mask) * s;
                    QR_KERN_ROUNDED(v);
                    wt[k * N + n] = v + adj;
                }
            } else {
                const int32_t z = qr_wq_nbits_zp(g, zp_u8, n, kb);
                for (int64_t k = k0; k < k1; k++)
                    wt[k * N + n] = (float)((int32_t)((row[k / per] >> ((k % per) * g->bits)) & mask) - z) * s;
            }
        }
    }
}

/* ==== MatMulNBits: products ============================================================ */

/* accuracy_level 4 (int8_act): per row of A and per block of K, a = scale_a * qa with
 * scale_a = max|a| / 127 and qa = round_half_even(a * (1 / scale_a)) (0 when the block is all
 * zero), as MLAS's QuantizeARow_CompInt8; then Y[m][n] = bias[n] + sum over blocks of
 * (float)(sum qa * (code - zp)) * (scale_a * scale_b), the integer dot product exact. */
static void qr__wq_nbits_int8(const QrWqNBits *g, const float *A, const uint8_t *b, const float *scales,
                              const uint8_t *zp, const float *bias, float *Y, int8_t *qa, float *sa) {
    for (int64_t m = 0; m < g->M; m++) {
        const float *a = A + m * g->K;
        for (int64_t kb = 0; kb < g->nb; kb++) {
            int64_t k0 = kb * g->bs, k1 = QR_MIN(g->K, k0 + g->bs);
            float amax = 0.0f;
            for (int64_t k = k0; k < k1; k++) amax = fmaxf(amax, fabsf(a[k]));
            float s = amax / 127.0f, inv = s != 0.0f ? 1.0f / s : 0.0f;
            sa[kb] = s;
            for (int64_t k = k0; k < k1; k++) {
                float r = rintf(a[k] * inv);
                qa[k] = (int8_t)(r > 127.0f ? 127 : r < -128.0f ? -128 : (int)r);
            }
        }
        for (int64_t n = 0; n < g->N; n++) {
            float acc = 0.0f;
            for (int64_t kb = 0; kb < g->nb; kb++) {
                int64_t k0 = kb * g->bs, k1 = QR_MIN(g->K, k0 + g->bs);
                int32_t z = qr_wq_nbits_zp(g, zp, n, kb), dot = 0;
                for (int64_t k = k0; k < k1; k++) dot += (int32_t)qa[k] * (qr_wq_nbits_code(g, b, n, k) - z);
                acc += (float)dot * (sa[kb] * scales[n * g->nb + kb]);
            }
            Y[m * g->N + n] = bias ? acc + bias[n] : acc;
        }
    }
}

static QrStatus qr__wq_nbits_f32(QrOpCtx *c) {
    QrWqNBits g;
    QR_TRY(qr_op_wq_nbits_geom(c, &g));
    const QrTensor *z = qr_op_in(c, QR__WQ_ZP), *gi = qr_op_in(c, QR__WQ_GIDX), *bt = qr_op_in(c, QR__WQ_BIAS);
    const float *A = c->in[QR__WQ_A]->data, *scales = c->in[QR__WQ_SCALES]->data, *bias = bt ? bt->data : NULL;
    const uint8_t *b = c->in[QR__WQ_B]->data;
    float *Y = c->out[0]->data;
    if (g.M == 0) return QR_OK;
    if (g.int8_act) {
        int8_t *qa = qr_arena_array(c->scratch, (size_t)(g.nb * g.bs), 1);
        float *sa = qr_arena_array(c->scratch, (size_t)g.nb, sizeof(float));
        if (!qa || !sa) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory for the int8 activation blocks");
        qr__wq_nbits_int8(&g, A, b, scales, z ? z->data : NULL, bias, Y, qa, sa);
        return QR_OK;
    }
    /* ORT's unpacked path: W dequantized, Y preset to the bias, then Y += A @ W^T */
    float *wt = qr_arena_array(c->scratch, (size_t)(g.N * g.K), sizeof(float));
    float *w = gi ? qr_arena_array(c->scratch, (size_t)(g.N * g.K), sizeof(float)) : wt;
    if (!w || !wt) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory for the dequantized %lld x %lld weight",
                                     (long long)g.N, (long long)g.K);
    const uint8_t *zu = z && !g.zp_float ? z->data : NULL;
    const float *zf = z && g.zp_float ? z->data : NULL;
    if (gi) {
        QR_TRY(qr_wq_nbits_dequant(c, &g, b, scales, zu, zf, gi->data, w));
        for (int64_t n = 0; n < g.N; n++)
            for (int64_t k = 0; k < g.K; k++) wt[k * g.N + n] = w[n * g.K + k];
    } else {
        qr__wq_nbits_dequant_t(&g, b, scales, zu, zf, wt);
    }
    for (int64_t m = 0; m < g.M; m++)
        for (int64_t n = 0; n < g.N; n++) Y[m * g.N + n] = bias ? bias[n] : 0.0f;
    qr_kern.f32_gemm(g.M, g.N, g.K, A, g.K, wt, g.N, Y, g.N, bias != NULL);
    return QR_OK;
}

/* float16 / bfloat16 A (scales, float zero points, bias of the same type) run in float32 and
 * the result is rounded back, as ORT's CPU kernel converts them. */
static QrStatus qr__wq_nbits_exec(QrOpCtx *c) {
    return qr_op_nn_via_f32(c, qr__wq_nbits_f32, 1u << QR__WQ_A | 1u << QR__WQ_SCALES | 1u << QR__WQ_BIAS |
                                                   (qr_op_in(c, QR__WQ_ZP) && c->in[QR__WQ_ZP]->dtype != QR_DT_U8
                                                        ? 1u << QR__WQ_ZP : 0u), 1u);
}

/* ==== MatMulBnb4 (bitsandbytes FP4 / NF4) =============================================== */

/* The 16 code values of bitsandbytes' 4-bit float formats (quant_type 0: FP4, 1: NF4, the normal-
 * float quantiles of QLoRA), as float32 constants; a code is scaled by its block's absmax. */
static const float qr__wq_fp4[16] = { 0.0f, 5.208333333e-03f, 0.66666667f, 1.0f, 0.33333333f, 0.5f, 0.16666667f,
                                      0.25f, -0.0f, -5.208333333e-03f, -0.66666667f, -1.0f, -0.33333333f, -0.5f,
                                      -0.16666667f, -0.25f };
static const float qr__wq_nf4[16] = { -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                                      -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                                      0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                                      0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                                      0.7229568362236023f, 1.0f };

/* MatMulBnb4(A, B, absmax) with K, N, block_size, quant_type: W (N, K) flattened row-major is
 * quantized in blocks of block_size values, two codes per byte of B (the first in the high
 * nibble), w = table[code] * absmax[i / block_size] in float32; Y = A @ W^T (ORT dequantizes W
 * and runs its float GEMM). transB must be 1 (the only layout ORT's CPU kernel computes). */
typedef struct QrWqBnb4 { int64_t K, N, bs, M; const float *table; } QrWqBnb4;

static QrStatus qr__wq_bnb4_geom(const QrOpCtx *c, QrWqBnb4 *g) {
    const QrTensor *a = c->in[0], *b = c->in[1], *am = c->in[2];
    g->K = qr_attr_int(c->node, "K", -1);
    g->N = qr_attr_int(c->node, "N", -1);
    g->bs = qr_attr_int(c->node, "block_size", -1);
    int64_t qt = qr_attr_int(c->node, "quant_type", -1);
    if (g->K < 1 || g->N < 1 || g->K > ((int64_t)1 << 40) || g->N > ((int64_t)1 << 40))
        return qr_op_fail(c, QR_ERR_INVALID, "attributes K and N are required and must be >= 1");
    if (g->bs < 16 || (g->bs & (g->bs - 1)) || g->bs > ((int64_t)1 << 20))
        return qr_op_fail(c, QR_ERR_INVALID, "block_size=%lld must be a power of 2 and >= 16", (long long)g->bs);
    if (qt != 0 && qt != 1)
        return qr_op_fail(c, QR_ERR_INVALID, "quant_type=%lld (0: FP4, 1: NF4)", (long long)qt);
    if (qr_attr_int(c->node, "transB", 1) != 1)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "transB=0 (ONNX Runtime computes only transB=1)");
    g->table = qt ? qr__wq_nf4 : qr__wq_fp4;
    if (a->dtype != QR_DT_F32) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "A has type %s (float32)", qr_dtype_name(a->dtype));
    if (a->rank < 1 || a->dims[a->rank - 1] != g->K)
        return qr_op_fail(c, QR_ERR_SHAPE, "A's last dimension must be K=%lld", (long long)g->K);
    g->M = a->numel / g->K;
    if (b->dtype != QR_DT_U8) return qr_op_fail(c, QR_ERR_INVALID, "B has type %s (uint8)", qr_dtype_name(b->dtype));
    QR_TRY(qr__wq_need_numel(c, b, (g->N * g->K + 1) / 2, "B (ceil(N * K / 2) bytes)"));
    if (am->dtype != QR_DT_F32) return qr_op_fail(c, QR_ERR_INVALID, "absmax has type %s (float32)", qr_dtype_name(am->dtype));
    QR_TRY(qr__wq_need_numel(c, am, (g->N * g->K + g->bs - 1) / g->bs, "absmax"));
    char what[96];
    snprintf(what, sizeof what, "%lld x %lld x %lld products", (long long)g->M, (long long)g->N, (long long)g->K);
    return qr_op_check_work(c, (double)g->M * (double)g->N * (double)g->K, what);
}

static QrStatus qr__wq_bnb4_shape(QrOpCtx *c) {
    QrWqBnb4 g;
    QR_TRY(qr__wq_bnb4_geom(c, &g));
    const QrTensor *a = c->in[0];
    int64_t d[QR_MAX_RANK];
    for (int i = 0; i < a->rank; i++) d[i] = a->dims[i];
    d[a->rank - 1] = g.N;
    return qr_op_set_out(c, 0, QR_DT_F32, a->rank, d);
}

/* The dequantized weight W (N, K) of a MatMulBnb4 node (the analyses' float twin of its weight). */
static void qr_wq_bnb4_dequant(const QrWqBnb4 *g, const uint8_t *b, const float *absmax, float *w) {
    for (int64_t i = 0; i < g->N * g->K; i++) {
        int code = i & 1 ? b[i / 2] & 0xf : b[i / 2] >> 4;
        w[i] = g->table[code] * absmax[i / g->bs];
    }
}

static QrStatus qr__wq_bnb4_exec(QrOpCtx *c) {
    QrWqBnb4 g;
    QR_TRY(qr__wq_bnb4_geom(c, &g));
    if (g.M == 0) return QR_OK;
    float *w = qr_arena_array(c->scratch, (size_t)(g.N * g.K), sizeof(float));
    float *wt = qr_arena_array(c->scratch, (size_t)(g.N * g.K), sizeof(float));
    if (!w || !wt) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory for the dequantized %lld x %lld weight",
                                     (long long)g.N, (long long)g.K);
    qr_wq_bnb4_dequant(&g, c->in[1]->data, c->in[2]->data, w);
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t k = 0; k < g.K; k++) wt[k * g.N + n] = w[n * g.K + k];
    qr_kern.f32_gemm(g.M, g.N, g.K, c->in[0]->data, g.K, wt, g.N, c->out[0]->data, g.N, false);
    return QR_OK;
}

/* ==== GatherBlockQuantized (quantized embeddings) ========================================== */

/* GatherBlockQuantized(data, indices, scales, [zero_points]) with gather_axis (0), quantize_axis
 * (1), block_size (128) and bits (4): Gather along gather_axis of the block-dequantized data,
 * out = (float)(q - zp) * scale in float32, converted to the scales' type. data is uint4 / int4
 * (any axes; zero point default 0), or uint8 holding 8 / bits codes per byte low bits first
 * (bits 2, 4 or 8; gather_axis 0 and quantize_axis last, as ORT requires; the last dimension
 * counts bytes, the output counts codes; zero points packed the same way per row of blocks,
 * default 2^(bits-1)). scales (and zero points) have data's shape with ceil(dim / block_size)
 * blocks along quantize_axis. An index outside [-dim, dim) is an error (ORT writes zeros). */
typedef struct QrWqGbq {
    int rank, gax, qax;
    int64_t bits, per, bs;
    int64_t dims[QR_MAX_RANK];    /* logical data dims (codes) */
    int64_t gM, gdim, gblock, nidx, qdim, qN, nblk;
} QrWqGbq;

static QrStatus qr_op_wq_gbq_geom(const QrOpCtx *c, QrWqGbq *g) {
    const QrTensor *d = c->in[0], *ix = c->in[1], *s = c->in[2], *z = qr_op_in(c, 3);
    memset(g, 0, sizeof *g);
    g->rank = d->rank;
    if (d->rank < 1) return qr_op_fail(c, QR_ERR_SHAPE, "data must have rank >= 1");
    QR_TRY(qr_op_axis(c, qr_attr_int(c->node, "gather_axis", 0), d->rank, &g->gax));
    QR_TRY(qr_op_axis(c, qr_attr_int(c->node, "quantize_axis", 1), d->rank, &g->qax));
    g->bs = qr_attr_int(c->node, "block_size", 128);
    g->bits = qr_attr_int(c->node, "bits", 4);
    if (g->bs < 16 || (g->bs & (g->bs - 1)) || g->bs > ((int64_t)1 << 30))
        return qr_op_fail(c, QR_ERR_INVALID, "block_size=%lld must be a power of 2 and >= 16", (long long)g->bs);
    g->per = 1;
    if (d->dtype == QR_DT_U8) {
        if (g->bits != 2 && g->bits != 4 && g->bits != 8)
            return qr_op_fail(c, QR_ERR_INVALID, "bits=%lld (2, 4 or 8 for uint8 data)", (long long)g->bits);
        if (g->gax != 0 || g->qax != d->rank - 1)
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "uint8 data needs gather_axis 0 and quantize_axis last");
        g->per = 8 / g->bits;
    } else if (d->dtype == QR_DT_U4 || d->dtype == QR_DT_S4) {
        if (g->bits != 4) return qr_op_fail(c, QR_ERR_INVALID, "bits=%lld with 4-bit data", (long long)g->bits);
    } else {
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "data has type %s (uint8, uint4 or int4)", qr_dtype_name(d->dtype));
    }
    if (g->gax == g->qax) return qr_op_fail(c, QR_ERR_INVALID, "gather_axis and quantize_axis must differ");
    for (int i = 0; i < d->rank; i++)
        if (qr_mul_overflow_i64(d->dims[i], i == d->rank - 1 ? g->per : 1, &g->dims[i]))
            return qr_op_fail(c, QR_ERR_SHAPE, "data dim %d (%lld) overflows", i, (long long)d->dims[i]);
    if (ix->dtype != QR_DT_S32 && ix->dtype != QR_DT_S64)
        return qr_op_fail(c, QR_ERR_INVALID, "indices has type %s (int32 or int64)", qr_dtype_name(ix->dtype));
    if (s->dtype != QR_DT_F32 && s->dtype != QR_DT_F16)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "scales has type %s (float32 or float16)", qr_dtype_name(s->dtype));
    g->gM = g->gblock = g->qN = 1;
    bool ovf = false;   /* dims with a 0 elsewhere can still multiply past int64 */
    for (int i = 0; i < g->gax; i++) ovf |= qr_mul_overflow_i64(g->gM, g->dims[i], &g->gM);
    for (int i = g->gax + 1; i < d->rank; i++) ovf |= qr_mul_overflow_i64(g->gblock, g->dims[i], &g->gblock);
    for (int i = g->qax + 1; i < d->rank; i++) ovf |= qr_mul_overflow_i64(g->qN, g->dims[i], &g->qN);
    if (ovf) return qr_op_fail(c, QR_ERR_SHAPE, "data's shape overflows");
    g->gdim = g->dims[g->gax];
    g->qdim = g->dims[g->qax];
    g->nblk = (g->qdim + g->bs - 1) / g->bs;
    g->nidx = ix->numel;
    if (s->rank != d->rank) return qr_op_fail(c, QR_ERR_SHAPE, "scales must have data's rank %d", d->rank);
    for (int i = 0; i < d->rank; i++)
        if (s->dims[i] != (i == g->qax ? g->nblk : g->dims[i]))
            return qr_op_fail(c, QR_ERR_SHAPE, "scales dim %d is %lld, expected %lld", i, (long long)s->dims[i],
                              (long long)(i == g->qax ? g->nblk : g->dims[i]));
    if (z) {
        if (z->dtype != d->dtype)
            return qr_op_fail(c, QR_ERR_INVALID, "zero_points has type %s, data has %s", qr_dtype_name(z->dtype),
                              qr_dtype_name(d->dtype));
        if (z->rank != d->rank) return qr_op_fail(c, QR_ERR_SHAPE, "zero_points must have data's rank %d", d->rank);
        for (int i = 0; i < d->rank; i++) {
            int64_t want = i == g->qax ? (g->nblk + g->per - 1) / g->per : s->dims[i];
            if (z->dims[i] != want)
                return qr_op_fail(c, QR_ERR_SHAPE, "zero_points dim %d is %lld, expected %lld", i,
                                  (long long)z->dims[i], (long long)want);
        }
    }
    return QR_OK;
}

static QrStatus qr__wq_gbq_shape(QrOpCtx *c) {
    QrWqGbq g;
    QR_TRY(qr_op_wq_gbq_geom(c, &g));
    const QrTensor *ix = c->in[1];
    int64_t d[QR_MAX_RANK];
    int r = 0;
    if (g.rank - 1 + ix->rank > QR_MAX_RANK) return qr_op_fail(c, QR_ERR_SHAPE, "output rank exceeds %d", QR_MAX_RANK);
    for (int i = 0; i < g.gax; i++) d[r++] = g.dims[i];
    for (int i = 0; i < ix->rank; i++) d[r++] = ix->dims[i];
    for (int i = g.gax + 1; i < g.rank; i++) d[r++] = g.dims[i];
    return qr_op_set_out(c, 0, c->in[2]->dtype, r, d);
}

/* Code and zero point of logical element e (row-major over the logical dims). */
static inline int32_t qr_op_wq_gbq_code(const QrWqGbq *g, const QrTensor *t, int64_t e) {
    if (g->per == 1 && t->dtype != QR_DT_U8) return (int32_t)qr_tensor_get_i64(t, e);
    const uint8_t *p = t->data;
    return (p[e / g->per] >> ((e % g->per) * g->bits)) & ((1 << g->bits) - 1);
}

static QrStatus qr__wq_gbq_exec(QrOpCtx *c) {
    QrWqGbq g;
    QR_TRY(qr_op_wq_gbq_geom(c, &g));
    const QrTensor *data = c->in[0], *ix = c->in[1], *s = c->in[2], *z = qr_op_in(c, 3);
    QrTensor *y = c->out[0];
    bool u8 = data->dtype == QR_DT_U8;
    int64_t zrow = (g.nblk + g.per - 1) / g.per;   /* packed zero points per row of blocks (uint8) */
    for (int64_t i = 0; i < g.nidx; i++) {
        int64_t v = qr_tensor_get_i64(ix, i);
        if (v < -g.gdim || v >= g.gdim)
            return qr_op_fail(c, QR_ERR_INVALID, "indices[%lld] = %lld is outside [-%lld, %lld)", (long long)i,
                              (long long)v, (long long)g.gdim, (long long)g.gdim);
    }
    for (int64_t m = 0; m < g.gM; m++)
        for (int64_t i = 0; i < g.nidx; i++) {
            int64_t v = qr_tensor_get_i64(ix, i);
            if (v < 0) v += g.gdim;
            int64_t d0 = (m * g.gdim + v) * g.gblock, y0 = (m * g.nidx + i) * g.gblock;
            for (int64_t p = 0; p < g.gblock; p++) {
                int64_t e = d0 + p;
                int64_t x = e / (g.qdim * g.qN), q = e / g.qN % g.qdim, zz = e % g.qN;
                int64_t si = (x * g.nblk + q / g.bs) * g.qN + zz;
                int32_t zp;
                if (u8) zp = z ? (((const uint8_t *)z->data)[si / g.nblk * zrow + si % g.nblk / g.per] >>
                                  (si % g.nblk % g.per * g.bits)) & ((1 << g.bits) - 1)
                               : 1 << (g.bits - 1);
                else zp = z ? (int32_t)qr_tensor_get_i64(z, si) : 0;
                float sc = (float)qr_tensor_get_f64(s, si);
                float val = (float)(qr_op_wq_gbq_code(&g, data, e) - zp) * sc;
                qr_tensor_set_f64(y, y0 + p, val);
            }
        }
    return QR_OK;
}

/* ==== qreport.int.BlockDequant (the analyses' float twin of a weight-only node's weight) ======= */

/* BlockDequant(codes, scales, [zero_points], map, [table]), block_size (the source node's, for
 * the reports): internal to qreport (quant/twin_wq.c writes it in domain qreport.int, QR_QUANT_INT_DOMAIN, where a blocked
 * DequantizeLinear cannot reproduce the weight a weight-only node computes with): element i of
 * codes (uint2 / uint4 / uint8, any shape) uses scale s = scales[map[i]] (map int32, codes'
 * shape; scales float32, rank 1) and
 *   with table (float32, 16 values): y = table[code] * s              (MatMulBnb4 FP4 / NF4)
 *   with uint8 zero points:          y = (float)(code - zp) * s       (one rounding)
 *   else (float zero points, or 0):  y = fl(code * s) + (-(s * zp))   (ORT's DequantizeBlockwise)
 * in float32, exactly the arithmetic of MatMulNBits / MatMulBnb4 above; y float32, codes' shape. */
static inline float qr_wq_bdq_value(int32_t q, float s, const uint8_t *zu, const float *zf, int64_t p,
                                    const float *table) {
    if (table) return table[q & 15] * s;
    if (zu) return (float)(q - (int32_t)zu[p]) * s;
    float v = (float)q * s;
    QR_KERN_ROUNDED(v);
    return v + -(s * (zf ? zf[p] : 0.0f));
}

static QrStatus qr__wq_bdq_check(const QrOpCtx *c) {
    const QrTensor *q = c->in[0], *s = c->in[1], *z = qr_op_in(c, 2), *m = c->in[3], *t = qr_op_in(c, 4);
    if (q->dtype != QR_DT_U8 && q->dtype != QR_DT_U4 && q->dtype != QR_DT_U2)
        return qr_op_fail(c, QR_ERR_INVALID, "codes have type %s (uint2, uint4 or uint8)", qr_dtype_name(q->dtype));
    if (s->dtype != QR_DT_F32 || s->rank != 1 || s->numel < 1)
        return qr_op_fail(c, QR_ERR_INVALID, "scales must be a non-empty float32 vector");
    if (m->dtype != QR_DT_S32 || m->numel != q->numel)
        return qr_op_fail(c, QR_ERR_INVALID, "map must be int32 with one block index per code");
    if (z && ((z->dtype != QR_DT_F32 && z->dtype != QR_DT_U8) || z->numel != s->numel))
        return qr_op_fail(c, QR_ERR_INVALID, "zero_points must be float32 or uint8, one per scale");
    if (t && (t->dtype != QR_DT_F32 || t->numel != 16 || z))
        return qr_op_fail(c, QR_ERR_INVALID, "table must be 16 float32 values, without zero points");
    return QR_OK;
}

static QrStatus qr__wq_bdq_shape(QrOpCtx *c) {
    QR_TRY(qr__wq_bdq_check(c));
    return qr_op_set_out(c, 0, QR_DT_F32, c->in[0]->rank, c->in[0]->dims);
}

static QrStatus qr__wq_bdq_exec(QrOpCtx *c) {
    QR_TRY(qr__wq_bdq_check(c));
    const QrTensor *z = qr_op_in(c, 2), *t = qr_op_in(c, 4);
    const uint8_t *q = c->in[0]->data, *zu = z && z->dtype == QR_DT_U8 ? z->data : NULL;
    const float *s = c->in[1]->data, *zf = z && z->dtype == QR_DT_F32 ? z->data : NULL, *tab = t ? t->data : NULL;
    const int32_t *m = c->in[3]->data;
    const int64_t np = c->in[1]->numel;
    float *y = c->out[0]->data;
    for (int64_t i = 0; i < c->in[0]->numel; i++) {
        if (m[i] < 0 || m[i] >= np)
            return qr_op_fail(c, QR_ERR_INVALID, "map[%lld] = %d is not a scale index (0..%lld)", (long long)i, m[i],
                              (long long)(np - 1));
        y[i] = qr_wq_bdq_value(q[i], s[m[i]], zu, zf, m[i], tab);
    }
    return QR_OK;
}

/* ==== table ========================================================================== */

static const QrOpDef qr_ops_contrib_wq[] = {
    { "com.microsoft", "MatMulNBits", 3, 6, 1, 1, qr__wq_nbits_shape, qr__wq_nbits_exec, QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "MatMulBnb4", 3, 3, 1, 1, qr__wq_bnb4_shape, qr__wq_bnb4_exec, QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "GatherBlockQuantized", 3, 4, 1, 1, qr__wq_gbq_shape, qr__wq_gbq_exec, QR_OPF_WRITES_ALL, 0 },
    { QR_QUANT_INT_DOMAIN, "BlockDequant", 4, 5, 1, 1, qr__wq_bdq_shape, qr__wq_bdq_exec, QR_OPF_WRITES_ALL, 1u << 2 },
};
