/* qarith/blocks — weight-only block formats: geometry and code access (see blocks.h). Map:
 * checks · MatMulNBits · MatMulBnb4 · GatherBlockQuantized · dequantized value. */

/* ==== checks ============================================================================ */

static QrStatus qr__blk_need_numel(const QrTensor *t, int64_t n, const char *what) {
    if (t->numel != n)
        return qr_errf(QR_ERR_SHAPE, "%s has %lld elements, expected %lld", what, (long long)t->numel, (long long)n);
    return QR_OK;
}

static QrStatus qr__blk_axis(int64_t axis, int rank, const char *name, int *out) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) return qr_errf(QR_ERR_INVALID, "%s %lld is out of range for rank %d", name, (long long)axis, rank);
    *out = (int)a;
    return QR_OK;
}

static inline const QrTensor *qr__blk_in(const QrTensor *const *in, int n_in, int i) { return i < n_in ? in[i] : NULL; }

/* ==== MatMulNBits ======================================================================= */

static QrStatus qr_blk_nbits_geom(const QrNode *node, const QrTensor *const *in, int n_in, QrBlkNBits *g) {
    const QrTensor *a = in[QR_BLK_NB_A], *b = in[QR_BLK_NB_B], *s = in[QR_BLK_NB_SCALES];
    const QrTensor *z = qr__blk_in(in, n_in, QR_BLK_NB_ZP), *gi = qr__blk_in(in, n_in, QR_BLK_NB_GIDX);
    const QrTensor *bias = qr__blk_in(in, n_in, QR_BLK_NB_BIAS);
    memset(g, 0, sizeof *g);
    g->K = qr_attr_int(node, "K", -1);
    g->N = qr_attr_int(node, "N", -1);
    g->bits = qr_attr_int(node, "bits", 4);
    g->bs = qr_attr_int(node, "block_size", -1);
    g->acc = qr_attr_int(node, "accuracy_level", 0);
    if (g->K < 1 || g->N < 1 || g->K > ((int64_t)1 << 40) || g->N > ((int64_t)1 << 40))
        return qr_errf(QR_ERR_INVALID, "attributes K and N are required and must be >= 1 (K=%lld, N=%lld)",
                       (long long)g->K, (long long)g->N);
    if (g->bits != 2 && g->bits != 4 && g->bits != 8)
        return qr_errf(QR_ERR_UNSUPPORTED, "bits=%lld (2, 4 or 8 are defined)", (long long)g->bits);
    if (g->bs < 16 || (g->bs & (g->bs - 1)) || g->bs > ((int64_t)1 << 20))
        return qr_errf(QR_ERR_INVALID, "block_size=%lld must be a power of 2 and >= 16", (long long)g->bs);
    if (g->acc < 0 || g->acc > 4)
        return qr_errf(QR_ERR_INVALID, "accuracy_level=%lld (0..4 are defined)", (long long)g->acc);
    g->nb = (g->K + g->bs - 1) / g->bs;
    g->blob = g->bs * g->bits / 8;
    g->zp_row = (g->nb * g->bits + 7) / 8;
    if (!qr_dtype_is_float(a->dtype) || a->dtype == QR_DT_F64)
        return qr_errf(QR_ERR_UNSUPPORTED, "A has type %s (float32, float16 or bfloat16)", qr_dtype_name(a->dtype));
    if (a->rank < 1 || a->dims[a->rank - 1] != g->K)
        return qr_errf(QR_ERR_SHAPE, "A's last dimension must be K=%lld", (long long)g->K);
    g->M = a->numel / g->K;
    if (b->dtype != QR_DT_U8) return qr_errf(QR_ERR_INVALID, "B has type %s (uint8)", qr_dtype_name(b->dtype));
    QR_TRY(qr__blk_need_numel(b, g->N * g->nb * g->blob, "B (N x k_blocks x blob_size)"));
    if (s->dtype != a->dtype)
        return qr_errf(QR_ERR_INVALID, "scales has type %s, A has %s", qr_dtype_name(s->dtype), qr_dtype_name(a->dtype));
    QR_TRY(qr__blk_need_numel(s, g->N * g->nb, "scales (N x k_blocks)"));
    if (z) {
        g->zp_float = z->dtype != QR_DT_U8;
        if (g->zp_float && z->dtype != a->dtype)
            return qr_errf(QR_ERR_INVALID, "zero_points has type %s (uint8, or A's type %s)", qr_dtype_name(z->dtype),
                           qr_dtype_name(a->dtype));
        QR_TRY(qr__blk_need_numel(z, g->zp_float ? g->N * g->nb : g->N * g->zp_row, "zero_points"));
    }
    if (gi) {
        if (gi->dtype != QR_DT_S32) return qr_errf(QR_ERR_INVALID, "g_idx has type %s (int32)", qr_dtype_name(gi->dtype));
        QR_TRY(qr__blk_need_numel(gi, g->K, "g_idx"));
    }
    if (bias) {
        if (bias->dtype != a->dtype)
            return qr_errf(QR_ERR_INVALID, "bias has type %s, A has %s", qr_dtype_name(bias->dtype), qr_dtype_name(a->dtype));
        QR_TRY(qr__blk_need_numel(bias, g->N, "bias"));
    }
    /* ORT's CPU kernel (1.30, x86-64 and arm64): accuracy_level 4 with 4- or 8-bit codes, uint8 or
     * no zero points and no g_idx quantizes A to int8 per block (MLAS's CompInt8); every other
     * case dequantizes B and multiplies in float32 (levels 0-3 all compute in float32 on CPU). */
    g->int8_act = g->acc == 4 && (g->bits == 4 || g->bits == 8) && !g->zp_float && !gi;
    return QR_OK;
}

static inline int32_t qr_blk_nbits_code(const QrBlkNBits *g, const uint8_t *b, int64_t n, int64_t k) {
    int64_t per = 8 / g->bits, bit = (k % per) * g->bits;
    uint8_t byte = b[n * g->nb * g->blob + k / per];
    return (byte >> bit) & ((1 << g->bits) - 1);
}

static inline int32_t qr_blk_nbits_zp(const QrBlkNBits *g, const uint8_t *zp, int64_t n, int64_t kb) {
    if (!zp) return 1 << (g->bits - 1);
    int64_t per = 8 / g->bits, bit = (kb % per) * g->bits;
    return (zp[n * g->zp_row + kb / per] >> bit) & ((1 << g->bits) - 1);
}

/* ==== MatMulBnb4 (bitsandbytes FP4 / NF4) ================================================ */

/* The 16 code values of bitsandbytes' 4-bit float formats (quant_type 0: FP4, 1: NF4, the normal-
 * float quantiles of QLoRA), as float32 constants; a code is scaled by its block's absmax. */
static const float qr__blk_fp4[16] = { 0.0f, 5.208333333e-03f, 0.66666667f, 1.0f, 0.33333333f, 0.5f, 0.16666667f,
                                       0.25f, -0.0f, -5.208333333e-03f, -0.66666667f, -1.0f, -0.33333333f, -0.5f,
                                       -0.16666667f, -0.25f };
static const float qr__blk_nf4[16] = { -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                                       -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                                       0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                                       0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                                       0.7229568362236023f, 1.0f };

static QrStatus qr_blk_bnb4_geom(const QrNode *node, const QrTensor *const *in, int n_in, QrBlkBnb4 *g) {
    (void)n_in;   /* three inputs, all required (the loader checks) */
    const QrTensor *a = in[0], *b = in[1], *am = in[2];
    g->K = qr_attr_int(node, "K", -1);
    g->N = qr_attr_int(node, "N", -1);
    g->bs = qr_attr_int(node, "block_size", -1);
    int64_t qt = qr_attr_int(node, "quant_type", -1);
    if (g->K < 1 || g->N < 1 || g->K > ((int64_t)1 << 40) || g->N > ((int64_t)1 << 40))
        return qr_errf(QR_ERR_INVALID, "attributes K and N are required and must be >= 1");
    if (g->bs < 16 || (g->bs & (g->bs - 1)) || g->bs > ((int64_t)1 << 20))
        return qr_errf(QR_ERR_INVALID, "block_size=%lld must be a power of 2 and >= 16", (long long)g->bs);
    if (qt != 0 && qt != 1) return qr_errf(QR_ERR_INVALID, "quant_type=%lld (0: FP4, 1: NF4)", (long long)qt);
    if (qr_attr_int(node, "transB", 1) != 1)
        return qr_errf(QR_ERR_UNSUPPORTED, "transB=0 (ONNX Runtime computes only transB=1)");
    g->table = qt ? qr__blk_nf4 : qr__blk_fp4;
    if (a->dtype != QR_DT_F32) return qr_errf(QR_ERR_UNSUPPORTED, "A has type %s (float32)", qr_dtype_name(a->dtype));
    if (a->rank < 1 || a->dims[a->rank - 1] != g->K)
        return qr_errf(QR_ERR_SHAPE, "A's last dimension must be K=%lld", (long long)g->K);
    g->M = a->numel / g->K;
    if (b->dtype != QR_DT_U8) return qr_errf(QR_ERR_INVALID, "B has type %s (uint8)", qr_dtype_name(b->dtype));
    QR_TRY(qr__blk_need_numel(b, (g->N * g->K + 1) / 2, "B (ceil(N * K / 2) bytes)"));
    if (am->dtype != QR_DT_F32) return qr_errf(QR_ERR_INVALID, "absmax has type %s (float32)", qr_dtype_name(am->dtype));
    return qr__blk_need_numel(am, (g->N * g->K + g->bs - 1) / g->bs, "absmax");
}

/* ==== GatherBlockQuantized (quantized embeddings) ========================================= */

static QrStatus qr_blk_gbq_geom(const QrNode *node, const QrTensor *const *in, int n_in, QrBlkGbq *g) {
    const QrTensor *d = in[0], *ix = in[1], *s = in[2], *z = qr__blk_in(in, n_in, 3);
    memset(g, 0, sizeof *g);
    g->rank = d->rank;
    if (d->rank < 1) return qr_errf(QR_ERR_SHAPE, "data must have rank >= 1");
    QR_TRY(qr__blk_axis(qr_attr_int(node, "gather_axis", 0), d->rank, "gather_axis", &g->gax));
    QR_TRY(qr__blk_axis(qr_attr_int(node, "quantize_axis", 1), d->rank, "quantize_axis", &g->qax));
    g->bs = qr_attr_int(node, "block_size", 128);
    g->bits = qr_attr_int(node, "bits", 4);
    if (g->bs < 16 || (g->bs & (g->bs - 1)) || g->bs > ((int64_t)1 << 30))
        return qr_errf(QR_ERR_INVALID, "block_size=%lld must be a power of 2 and >= 16", (long long)g->bs);
    g->per = 1;
    g->u8 = d->dtype == QR_DT_U8;
    if (g->u8) {
        if (g->bits != 2 && g->bits != 4 && g->bits != 8)
            return qr_errf(QR_ERR_INVALID, "bits=%lld (2, 4 or 8 for uint8 data)", (long long)g->bits);
        if (g->gax != 0 || g->qax != d->rank - 1)
            return qr_errf(QR_ERR_UNSUPPORTED, "uint8 data needs gather_axis 0 and quantize_axis last");
        g->per = 8 / g->bits;
    } else if (d->dtype == QR_DT_U4 || d->dtype == QR_DT_S4) {
        if (g->bits != 4) return qr_errf(QR_ERR_INVALID, "bits=%lld with 4-bit data", (long long)g->bits);
    } else {
        return qr_errf(QR_ERR_UNSUPPORTED, "data has type %s (uint8, uint4 or int4)", qr_dtype_name(d->dtype));
    }
    if (g->gax == g->qax) return qr_errf(QR_ERR_INVALID, "gather_axis and quantize_axis must differ");
    for (int i = 0; i < d->rank; i++)
        if (qr_mul_overflow_i64(d->dims[i], i == d->rank - 1 ? g->per : 1, &g->dims[i]))
            return qr_errf(QR_ERR_SHAPE, "data dim %d (%lld) overflows", i, (long long)d->dims[i]);
    if (ix->dtype != QR_DT_S32 && ix->dtype != QR_DT_S64)
        return qr_errf(QR_ERR_INVALID, "indices has type %s (int32 or int64)", qr_dtype_name(ix->dtype));
    if (s->dtype != QR_DT_F32 && s->dtype != QR_DT_F16)
        return qr_errf(QR_ERR_UNSUPPORTED, "scales has type %s (float32 or float16)", qr_dtype_name(s->dtype));
    g->gM = g->gblock = g->qN = 1;
    bool ovf = false;   /* dims with a 0 elsewhere can still multiply past int64 */
    for (int i = 0; i < g->gax; i++) ovf |= qr_mul_overflow_i64(g->gM, g->dims[i], &g->gM);
    for (int i = g->gax + 1; i < d->rank; i++) ovf |= qr_mul_overflow_i64(g->gblock, g->dims[i], &g->gblock);
    for (int i = g->qax + 1; i < d->rank; i++) ovf |= qr_mul_overflow_i64(g->qN, g->dims[i], &g->qN);
    if (ovf) return qr_errf(QR_ERR_SHAPE, "data's shape overflows");
    g->gdim = g->dims[g->gax];
    g->qdim = g->dims[g->qax];
    g->nblk = (g->qdim + g->bs - 1) / g->bs;
    g->nidx = ix->numel;
    if (s->rank != d->rank) return qr_errf(QR_ERR_SHAPE, "scales must have data's rank %d", d->rank);
    for (int i = 0; i < d->rank; i++)
        if (s->dims[i] != (i == g->qax ? g->nblk : g->dims[i]))
            return qr_errf(QR_ERR_SHAPE, "scales dim %d is %lld, expected %lld", i, (long long)s->dims[i],
                           (long long)(i == g->qax ? g->nblk : g->dims[i]));
    if (z) {
        if (z->dtype != d->dtype)
            return qr_errf(QR_ERR_INVALID, "zero_points has type %s, data has %s", qr_dtype_name(z->dtype),
                           qr_dtype_name(d->dtype));
        if (z->rank != d->rank) return qr_errf(QR_ERR_SHAPE, "zero_points must have data's rank %d", d->rank);
        for (int i = 0; i < d->rank; i++) {
            int64_t want = i == g->qax ? (g->nblk + g->per - 1) / g->per : s->dims[i];
            if (z->dims[i] != want)
                return qr_errf(QR_ERR_SHAPE, "zero_points dim %d is %lld, expected %lld", i, (long long)z->dims[i],
                               (long long)want);
        }
    }
    return QR_OK;
}

static inline int32_t qr_blk_gbq_code(const QrBlkGbq *g, const QrTensor *t, int64_t e) {
    if (g->per == 1 && t->dtype != QR_DT_U8) return (int32_t)qr_tensor_get_i64(t, e);
    const uint8_t *p = t->data;
    return (p[e / g->per] >> ((e % g->per) * g->bits)) & ((1 << g->bits) - 1);
}

static inline int32_t qr_blk_gbq_zp(const QrBlkGbq *g, const QrTensor *z, int64_t si) {
    if (!g->u8) return z ? (int32_t)qr_tensor_get_i64(z, si) : 0;
    if (!z) return 1 << (g->bits - 1);
    int64_t zrow = (g->nblk + g->per - 1) / g->per;   /* packed zero points per row of blocks */
    return (((const uint8_t *)z->data)[si / g->nblk * zrow + si % g->nblk / g->per] >> (si % g->nblk % g->per * g->bits)) &
           ((1 << g->bits) - 1);
}

/* ==== dequantized value ================================================================= */

static inline float qr_blk_value(int32_t q, float s, const uint8_t *zu, const float *zf, int64_t p, const float *table) {
    if (table) return table[q & 15] * s;
    if (zu) return (float)(q - (int32_t)zu[p]) * s;
    float v = (float)q * s;
    QR_KERN_ROUNDED(v);
    return v + -(s * (zf ? zf[p] : 0.0f));
}
