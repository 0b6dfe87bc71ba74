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
 * Map: MatMulNBits geometry (read by qarith/blocks.c, below ops/, which the twin shares) · weight dequantization (shared with the analyses: a weight-only
 * node is the quantizer of its weight) · the float and the int8-activation products ·
 * MatMulBnb4 · GatherBlockQuantized · table. */

/* ==== MatMulNBits: geometry ========================================================== */

/* The geometry and the code layout are qarith/blocks' (QrBlkNBits); the operator adds the node's
 * name to their errors and refuses nodes whose work exceeds the limit. */

static QrStatus qr__wq_fail(const QrOpCtx *c, QrStatus st) {
    char msg[2048];   /* the error buffer's size: the message is copied whole */
    snprintf(msg, sizeof msg, "%s", qr_err_msg());
    return qr_op_fail(c, st, "%s", msg);
}

static QrStatus qr__wq_check_mnk(const QrOpCtx *c, int64_t M, int64_t N, int64_t K) {
    char what[96];
    snprintf(what, sizeof what, "%lld x %lld x %lld products", (long long)M, (long long)N, (long long)K);
    return qr_op_check_work(c, (double)M * (double)N * (double)K, what);
}

static QrStatus qr__wq_nbits_geom(const QrOpCtx *c, QrBlkNBits *g) {
    QrStatus st = qr_blk_nbits_geom(c->node, c->in, c->n_in, g);
    if (st != QR_OK) return qr__wq_fail(c, st);
    return qr__wq_check_mnk(c, g->M, g->N, g->K);
}

static QrStatus qr__wq_nbits_shape(QrOpCtx *c) {
    QrBlkNBits g;
    QR_TRY(qr__wq_nbits_geom(c, &g));
    const QrTensor *a = c->in[0];
    int64_t d[QR_MAX_RANK];
    for (int i = 0; i < a->rank; i++) d[i] = a->dims[i];
    d[a->rank - 1] = g.N;
    return qr_op_set_out(c, 0, a->dtype, a->rank, d);
}

/* ==== MatMulNBits: weight dequantization ============================================== */

/* Block of column k: g_idx[k] (checked against k_blocks) or k / block_size. */
static QrStatus qr__wq_nbits_block_of(const QrOpCtx *c, const QrBlkNBits *g, const int32_t *gidx, int64_t k,
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
static QrStatus qr__wq_nbits_dequant(const QrOpCtx *c, const QrBlkNBits *g, const uint8_t *b, const float *scales,
                                    const uint8_t *zp_u8, const float *zp_f, const int32_t *gidx, float *w) {
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t k = 0; k < g->K; k++) {
            int64_t kb = 0;
            QR_TRY(qr__wq_nbits_block_of(c, g, gidx, k, &kb));
            float s = scales[n * g->nb + kb];
            int32_t q = qr_blk_nbits_code(g, b, n, k);
            float v;
            if (zp_f || gidx) {   /* ORT's DequantizeBlockwise (float zero points, or g_idx) */
                float adj = -(s * (zp_f ? zp_f[n * g->nb + kb] : (float)qr_blk_nbits_zp(g, zp_u8, n, kb)));
                v = (float)q * s;
                QR_KERN_ROUNDED(v);
                v += adj;
            } else {
                v = (float)(q - qr_blk_nbits_zp(g, zp_u8, n, kb)) * s;
            }
            w[n * g->K + k] = v;
        }
    return QR_OK;
}

/* The same weight transposed, wt[k * N + n] = W[n][k], without g_idx: one block's scale and zero
 * point at a time (the arithmetic of qr__wq_nbits_dequant, so the same bits; what every run of a
 * node pays, the weight being dequantized per run). */
static void qr__wq_nbits_dequant_t(const QrBlkNBits *g, const uint8_t *b, const float *scales, const uint8_t *zp_u8,
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
                const int32_t z = qr_blk_nbits_zp(g, zp_u8, n, kb);
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
static void qr__wq_nbits_int8(const QrBlkNBits *g, const float *A, const uint8_t *b, const float *scales,
                              const uint8_t *zp, const float *bias, float *Y, int8_t *qa, float *sa) {
    for (int64_t m = 0; m < g->M; m++) {
        const float *a = A + m * g->K;
        for (int64_t kb = 0; kb < g->nb; kb++) {
            int64_t k0 = kb * g->bs, k1 = QR_MIN(g->K, k0 + g->bs);
            float amax = 0.0f;
            for (int64_t k = k0; k < k1; k++) amax = fmaxf(amax, fabsf(a[k]));
            float s = amax / 127.0f, inv = s != 0.0f ? 1.0f / s : 0.0f;
            sa[kb] = s;
            /* a NaN (a NaN element, or an infinite one's block: inf * 0) quantizes to 0, as MLAS's
             * cast gives on x86-64 (cvttss2si's 0x80000000, whose low byte is 0); converting a
             * NaN to int is undefined in C (found by fuzz_onnx_run under UBSan) */
            for (int64_t k = k0; k < k1; k++) {
                float r = rintf(a[k] * inv);
                qa[k] = (int8_t)(r != r ? 0 : r > 127.0f ? 127 : r < -128.0f ? -128 : (int)r);
            }
        }
        for (int64_t n = 0; n < g->N; n++) {
            float acc = 0.0f;
            for (int64_t kb = 0; kb < g->nb; kb++) {
                int64_t k0 = kb * g->bs, k1 = QR_MIN(g->K, k0 + g->bs);
                int32_t z = qr_blk_nbits_zp(g, zp, n, kb), dot = 0;
                for (int64_t k = k0; k < k1; k++) dot += (int32_t)qa[k] * (qr_blk_nbits_code(g, b, n, k) - z);
                acc += (float)dot * (sa[kb] * scales[n * g->nb + kb]);
            }
            Y[m * g->N + n] = bias ? acc + bias[n] : acc;
        }
    }
}

static QrStatus qr__wq_nbits_f32(QrOpCtx *c) {
    QrBlkNBits g;
    QR_TRY(qr__wq_nbits_geom(c, &g));
    const QrTensor *z = qr_op_in(c, QR_BLK_NB_ZP), *gi = qr_op_in(c, QR_BLK_NB_GIDX), *bt = qr_op_in(c, QR_BLK_NB_BIAS);
    const float *A = c->in[QR_BLK_NB_A]->data, *scales = c->in[QR_BLK_NB_SCALES]->data, *bias = bt ? bt->data : NULL;
    const uint8_t *b = c->in[QR_BLK_NB_B]->data;
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
        QR_TRY(qr__wq_nbits_dequant(c, &g, b, scales, zu, zf, gi->data, w));
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
    return qr_op_nn_via_f32(c, qr__wq_nbits_f32, 1u << QR_BLK_NB_A | 1u << QR_BLK_NB_SCALES | 1u << QR_BLK_NB_BIAS |
                                                   (qr_op_in(c, QR_BLK_NB_ZP) && c->in[QR_BLK_NB_ZP]->dtype != QR_DT_U8
                                                        ? 1u << QR_BLK_NB_ZP : 0u), 1u);
}

/* ==== MatMulBnb4 (bitsandbytes FP4 / NF4) =============================================== */

/* MatMulBnb4(A, B, absmax): Y = A @ W^T, W (N, K) dequantized as qarith/blocks describes
 * (QrBlkBnb4: table[code] * absmax per block, in float32; ORT dequantizes W and runs its float
 * GEMM). transB must be 1 (the only layout ORT's CPU kernel computes). */
static QrStatus qr__wq_bnb4_geom(const QrOpCtx *c, QrBlkBnb4 *g) {
    QrStatus st = qr_blk_bnb4_geom(c->node, c->in, c->n_in, g);
    if (st != QR_OK) return qr__wq_fail(c, st);
    return qr__wq_check_mnk(c, g->M, g->N, g->K);
}

static QrStatus qr__wq_bnb4_shape(QrOpCtx *c) {
    QrBlkBnb4 g;
    QR_TRY(qr__wq_bnb4_geom(c, &g));
    const QrTensor *a = c->in[0];
    int64_t d[QR_MAX_RANK];
    for (int i = 0; i < a->rank; i++) d[i] = a->dims[i];
    d[a->rank - 1] = g.N;
    return qr_op_set_out(c, 0, QR_DT_F32, a->rank, d);
}

/* The dequantized weight W (N, K) of a MatMulBnb4 node (the analyses' float twin of its weight). */
static void qr__wq_bnb4_dequant(const QrBlkBnb4 *g, const uint8_t *b, const float *absmax, float *w) {
    for (int64_t i = 0; i < g->N * g->K; i++) {
        w[i] = g->table[qr_blk_bnb4_code(b, i)] * absmax[i / g->bs];
    }
}

static QrStatus qr__wq_bnb4_exec(QrOpCtx *c) {
    QrBlkBnb4 g;
    QR_TRY(qr__wq_bnb4_geom(c, &g));
    if (g.M == 0) return QR_OK;
    float *w = qr_arena_array(c->scratch, (size_t)(g.N * g.K), sizeof(float));
    float *wt = qr_arena_array(c->scratch, (size_t)(g.N * g.K), sizeof(float));
    if (!w || !wt) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory for the dequantized %lld x %lld weight",
                                     (long long)g.N, (long long)g.K);
    qr__wq_bnb4_dequant(&g, c->in[1]->data, c->in[2]->data, w);
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
static QrStatus qr__wq_gbq_geom(const QrOpCtx *c, QrBlkGbq *g) {
    QrStatus st = qr_blk_gbq_geom(c->node, c->in, c->n_in, g);
    return st == QR_OK ? QR_OK : qr__wq_fail(c, st);
}

static QrStatus qr__wq_gbq_shape(QrOpCtx *c) {
    QrBlkGbq g;
    QR_TRY(qr__wq_gbq_geom(c, &g));
    const QrTensor *ix = c->in[1];
    int64_t d[QR_MAX_RANK];
    int r = 0;
    if (g.rank - 1 + ix->rank > QR_MAX_RANK) return qr_op_fail(c, QR_ERR_SHAPE, "output rank exceeds %d", QR_MAX_RANK);
    for (int i = 0; i < g.gax; i++) d[r++] = g.dims[i];
    for (int i = 0; i < ix->rank; i++) d[r++] = ix->dims[i];
    for (int i = g.gax + 1; i < g.rank; i++) d[r++] = g.dims[i];
    return qr_op_set_out(c, 0, c->in[2]->dtype, r, d);
}

static QrStatus qr__wq_gbq_exec(QrOpCtx *c) {
    QrBlkGbq g;
    QR_TRY(qr__wq_gbq_geom(c, &g));
    const QrTensor *data = c->in[0], *ix = c->in[1], *s = c->in[2], *z = qr_op_in(c, 3);
    QrTensor *y = c->out[0];
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
                int32_t zp = qr_blk_gbq_zp(&g, z, si);
                float sc = (float)qr_tensor_get_f64(s, si);
                float val = (float)(qr_blk_gbq_code(&g, data, e) - zp) * sc;
                qr_tensor_set_f64(y, y0 + p, val);
            }
        }
    return QR_OK;
}

/* ==== qreport.int.BlockDequant (the analyses' float twin of a weight-only node's weight) ======= */

/* BlockDequant(codes, scales, [zero_points], [map], [table]), block_size (the source node's, for
 * the reports): internal to qreport (quant/twin_wq.c writes it in domain qreport.int, QR_QUANT_INT_DOMAIN, where a blocked
 * DequantizeLinear cannot reproduce the weight a weight-only node computes with): element i of
 * codes (uint2 / uint4 / uint8, any shape) uses scale s = scales[p] (scales float32, rank 1) with
 * p = map[i] (map int32, codes' shape) or, without a map, the scale of codes (K, N) blocked along K
 * as a MatMulNBits weight is: p = (k / block_size) * N + n for element i = k * N + n (no per-element
 * index: for a 0.5B-parameter decoder the map alone was 1.8 GB). With attribute k (= K) the codes
 * are a 4-bit MatMulNBits B itself: uint8 (N, ceil(K / block_size), block_size / 2), code (k, n) in
 * byte k / 2 of row n, low nibble for even k (the twin reads the node's own packed weight: no copy;
 * map-less, no table; y is (K, N)), and
 *   with table (float32, 16 values): y = table[code] * s              (MatMulBnb4 FP4 / NF4)
 *   with uint8 zero points:          y = (float)(code - zp) * s       (one rounding)
 *   else (float zero points, or 0):  y = fl(code * s) + (-(s * zp))   (ORT's DequantizeBlockwise)
 * in float32, exactly the arithmetic of MatMulNBits / MatMulBnb4 above; y float32, codes' shape. */
static QrStatus qr__wq_bdq_check(const QrOpCtx *c) {
    const QrTensor *q = c->in[0], *s = c->in[1], *z = qr_op_in(c, 2), *m = qr_op_in(c, 3), *t = qr_op_in(c, 4);
    if (q->dtype != QR_DT_U8 && q->dtype != QR_DT_U4 && q->dtype != QR_DT_U2)
        return qr_op_fail(c, QR_ERR_INVALID, "codes have type %s (uint2, uint4 or uint8)", qr_dtype_name(q->dtype));
    if (s->dtype != QR_DT_F32 || s->rank != 1 || s->numel < 1)
        return qr_op_fail(c, QR_ERR_INVALID, "scales must be a non-empty float32 vector");
    if (m && (m->dtype != QR_DT_S32 || m->numel != q->numel))
        return qr_op_fail(c, QR_ERR_INVALID, "map must be int32 with one block index per code");
    const int64_t pk = qr_attr_int(c->node, "k", 0), bs = qr_attr_int(c->node, "block_size", 0);
    if (pk && (q->dtype != QR_DT_U8 || q->rank != 3 || pk < 1 || bs < 2 || bs % 2 || q->dims[1] != 1 + (pk - 1) / bs ||
               q->dims[2] != bs / 2 || s->numel != q->dims[0] * q->dims[1] || m || t))
        return qr_op_fail(c, QR_ERR_INVALID, "MatMulNBits codes (k = %lld) must be uint8 (N, ceil(k / block_size), "
                          "block_size / 2) with a scale per block, without map or table", (long long)pk);
    if (!m && !pk) {
        if (q->rank != 2 || bs < 1 || s->numel != (1 + (q->dims[0] - 1) / bs) * q->dims[1])
            return qr_op_fail(c, QR_ERR_INVALID, "without a map, codes must be (K, N) and scales ceil(K / block_size) * N "
                              "with block_size >= 1");
    }
    if (z && ((z->dtype != QR_DT_F32 && z->dtype != QR_DT_U8) || z->numel != s->numel))
        return qr_op_fail(c, QR_ERR_INVALID, "zero_points must be float32 or uint8, one per scale");
    if (t && (t->dtype != QR_DT_F32 || t->numel != 16 || z))
        return qr_op_fail(c, QR_ERR_INVALID, "table must be 16 float32 values, without zero points");
    return QR_OK;
}

static QrStatus qr__wq_bdq_shape(QrOpCtx *c) {
    QR_TRY(qr__wq_bdq_check(c));
    const int64_t pk = qr_attr_int(c->node, "k", 0);
    if (!pk) return qr_op_set_out(c, 0, QR_DT_F32, c->in[0]->rank, c->in[0]->dims);
    int64_t d[2] = { pk, c->in[0]->dims[0] };
    return qr_op_set_out(c, 0, QR_DT_F32, 2, d);
}

static QrStatus qr__wq_bdq_exec(QrOpCtx *c) {
    QR_TRY(qr__wq_bdq_check(c));
    const QrTensor *z = qr_op_in(c, 2), *mt = qr_op_in(c, 3), *t = qr_op_in(c, 4);
    const uint8_t *q = c->in[0]->data, *zu = z && z->dtype == QR_DT_U8 ? z->data : NULL;
    const float *s = c->in[1]->data, *zf = z && z->dtype == QR_DT_F32 ? z->data : NULL, *tab = t ? t->data : NULL;
    const int64_t np = c->in[1]->numel;
    float *y = c->out[0]->data;
    const int64_t pk = qr_attr_int(c->node, "k", 0), bs = qr_attr_int(c->node, "block_size", 0);
    if (pk) {   /* MatMulNBits' B: row n holds W[:, n], two codes a byte, low nibble first; block by block */
        const int64_t N = c->in[0]->dims[0], row = c->in[0]->dims[1] * c->in[0]->dims[2];
        for (int64_t n = 0; n < N; n++) {
            const uint8_t *qn = q + n * row;
            for (int64_t k0 = 0; k0 < pk; k0 += bs) {
                const int64_t p = (k0 / bs) * N + n, k1 = QR_MIN(pk, k0 + bs);
                for (int64_t k = k0; k < k1; k++) y[k * N + n] = qr_blk_value((qn[k >> 1] >> ((k & 1) * 4)) & 15, s[p], zu, zf, p, tab);
            }
        }
        return QR_OK;
    }
    if (!mt) {   /* blocked along K: one block's scale (and zero point) per run of bs rows */
        const int64_t K = c->in[0]->dims[0], N = c->in[0]->dims[1];
        for (int64_t k = 0; k < K; k++) {
            const int64_t p0 = (k / bs) * N;
            for (int64_t n = 0; n < N; n++) y[k * N + n] = qr_blk_value(q[k * N + n], s[p0 + n], zu, zf, p0 + n, tab);
        }
        return QR_OK;
    }
    const int32_t *m = mt->data;
    for (int64_t i = 0; i < c->in[0]->numel; i++) {
        if (m[i] < 0 || m[i] >= np)
            return qr_op_fail(c, QR_ERR_INVALID, "map[%lld] = %d is not a scale index (0..%lld)", (long long)i, m[i],
                              (long long)(np - 1));
        y[i] = qr_blk_value(q[i], s[m[i]], zu, zf, m[i], tab);
    }
    return QR_OK;
}

/* ==== table ========================================================================== */

static const QrOpDef qr_ops_contrib_wq[] = {
    { "com.microsoft", "MatMulNBits", 3, 6, 1, 1, qr__wq_nbits_shape, qr__wq_nbits_exec, QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "MatMulBnb4", 3, 3, 1, 1, qr__wq_bnb4_shape, qr__wq_bnb4_exec, QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "GatherBlockQuantized", 3, 4, 1, 1, qr__wq_gbq_shape, qr__wq_gbq_exec, QR_OPF_WRITES_ALL, 0 },
    { QR_QUANT_INT_DOMAIN, "BlockDequant", 4, 5, 1, 1, qr__wq_bdq_shape, qr__wq_bdq_exec, QR_OPF_WRITES_ALL, (1u << 2) | (1u << 3) },
};
