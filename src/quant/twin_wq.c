/* quant/twin_wq — float twins of ONNX Runtime's weight-only quantized nodes, so that their
 * weight quantizers can be toggled like any other (a weight-only node is the quantizer of its
 * weight: disabled, the node computes with the matched baseline float weight, or with the
 * dequantized weight when the baseline has none):
 *
 *   source node                                    twin
 *   MatMulNBits(A, B, scales, [zp], [g_idx], [bias]) ->  MatMul(A, W) [+ bias]
 *   MatMulBnb4(A, B, absmax)                       ->  MatMul(A, W)
 *   GatherBlockQuantized(data, idx, scales, [zp])  ->  Gather(W, idx)
 *
 * W is the weight the node itself dequantizes, bit for bit, from a new integer initializer holding
 * the codes one per element (uint8/uint4/uint2, int4) in the float weight's layout (4-bit codes of
 * the int8-activation switch below: the node's own B, read as it is), so the
 * quantizer table sees a weight stored as integers (QR_QF_DQ_INIT), blocked, with the node's own
 * block size:
 * - a blocked DequantizeLinear ((code - zp) * scale, block_size along K or quantize_axis) for
 *   integer or absent zero points without g_idx, and for GatherBlockQuantized;
 * - qreport.int.BlockDequant (ops/contrib_wq.c) where that cannot express it: g_idx (the block of row
 *   k is g_idx[k]: a per-element scale index), float zero points (ORT's two roundings
 *   code * scale + (-(scale * zp))), MatMulBnb4's FP4/NF4 table codes (absmax per block of the
 *   flattened (N, K) weight). Scales (and zero points) are laid out [k_blocks][N] for MatMulNBits
 *   (block index kb * N + n, as the DequantizeLinear twin), absmax's own order for MatMulBnb4.
 * float16 / bfloat16 A: Cast to float32 around the float product, as the node stages it.
 * accuracy_level 4 with int8 activations (4/8-bit codes, no float zero points, no g_idx): the node
 * stays and computes the output while its quantizer is enabled (ORT's int8 arithmetic); disabled,
 * the float product of W (dequantized or matched) replaces its output (the BlockDequant's
 * select_on / select_off, quant/qtable.c); that BlockDequant has no per-element map (its codes are
 * blocked along K as the DequantizeLinear twin's: an int32 per weight element would be 4 bytes
 * more per weight than the float weight's own, 1.8 GB for a 0.5B-parameter decoder). Kept as they are (the note says why): non-constant
 * weights, scales, zero points, g_idx or bias. */

/* Input i of n is absent or a constant of the source (an initializer, or folded from constants
 * only: a small graph input shape inference knows is not one). */
static bool qr__twq_const_in(const QrGraph *s, const QrNode *n, int i) {
    if (i >= n->n_in || n->in[i] < 0) return true;
    const QrValue *v = &s->values[n->in[i]];
    return v->t.data && (v->is_init || v->is_const);
}

/* The input tensors of n (NULL: omitted), as the block geometry readers see them. */
static QrStatus qr__twq_ins(const QrGraph *s, const QrNode *n, const QrTensor **ins) {
    if (n->n_in > 8) return QR_ERR_UNSUPPORTED;
    for (int i = 0; i < n->n_in; i++) ins[i] = n->in[i] >= 0 ? &s->values[n->in[i]].t : NULL;
    return QR_OK;
}

/* The blocked DequantizeLinear of codes (data, shape dims) with scales sc / zero points zp
 * (constants of the twin) along axis; its output value in *out. The node runs at opset 21. */
static QrStatus qr__twq_block_dq(QrTwCtx *cx, const char *base, QrTensor *codes, QrTensor *sc, QrTensor *zp, int axis,
                                int64_t bs, int *out) {
    int in[3];
    QR_TRY(qr_twk_const(cx, base, codes, &in[0]));
    char nm[512];
    snprintf(nm, sizeof nm, "%s_scale", base);
    QR_TRY(qr_twk_const(cx, nm, sc, &in[1]));
    snprintf(nm, sizeof nm, "%s_zero_point", base);
    QR_TRY(qr_twk_const(cx, nm, zp, &in[2]));
    QR_TRY(qr_twk_value(cx, base, "::dq", out));
    QrAttr at[2] = { { .name = "axis", .type = QR_ATTR_INT, .i = axis }, { .name = "block_size", .type = QR_ATTR_INT, .i = bs } };
    snprintf(nm, sizeof nm, "%s::dq", base);
    QR_TRY(qr_twk_add(cx, nm, "DequantizeLinear", "", 3, in, 1, out, 2, at));
    cx->tw->g.nodes[cx->tw->g.n_nodes - 1].opset = 21;   /* blocked DequantizeLinear */
    return QR_OK;
}

/* A new zero-filled tensor of dtype dt and shape dims (a constant of the twin to be). */
static QrStatus qr__twq_new(QrTensor *t, QrDType dt, int rank, const int64_t *dims) {
    QR_TRY(qr_tensor_set_shape(t, dt, rank, dims));
    return qr_tensor_alloc_data(t);
}

/* qreport.int.BlockDequant of codes with per-element scale index map (constants of the twin; zp,
 * map and table optional: without a map, codes (K, N) are blocked along K, bs rows a block;
 * nbits_b >= 0: instead of codes, that value — a 4-bit MatMulNBits' B of K (nbits_k) rows, read as
 * the node holds it); its output value in *out. on/off (optional): the value the quantizer switches
 * (when it is disabled, readers of `on` read `off`: quant/qtable.c). */
static QrStatus qr__twq_bdq(QrTwCtx *cx, const char *base, QrTensor *codes, int nbits_b, int64_t nbits_k, QrTensor *sc,
                           QrTensor *zp, QrTensor *map, QrTensor *table, int64_t bs, const char *on, const char *off, int *out) {
    int in[5] = { -1, -1, -1, -1, -1 };
    const bool has_table = table->data != NULL;   /* qr__twq_const takes the data */
    char nm[512];
    if (nbits_b >= 0) in[0] = nbits_b;
    else QR_TRY(qr_twk_const(cx, base, codes, &in[0]));
    snprintf(nm, sizeof nm, "%s_scale", base);
    QR_TRY(qr_twk_const(cx, nm, sc, &in[1]));
    if (zp->data) {
        snprintf(nm, sizeof nm, "%s_zero_point", base);
        QR_TRY(qr_twk_const(cx, nm, zp, &in[2]));
    }
    snprintf(nm, sizeof nm, "%s_block_of", base);
    if (map->data) QR_TRY(qr_twk_const(cx, nm, map, &in[3]));
    if (has_table) {
        snprintf(nm, sizeof nm, "%s_table", base);
        QR_TRY(qr_twk_const(cx, nm, table, &in[4]));
    }
    QR_TRY(qr_twk_value(cx, base, "::dq", out));
    QrAttr at[4] = { { .name = "block_size", .type = QR_ATTR_INT, .i = bs } };
    int na = 1;
    if (nbits_b >= 0) at[na++] = (QrAttr){ .name = "k", .type = QR_ATTR_INT, .i = nbits_k };
    if (on) {
        at[na++] = (QrAttr){ .name = "select_on", .type = QR_ATTR_STRING, .s = on, .s_len = strlen(on) };
        at[na++] = (QrAttr){ .name = "select_off", .type = QR_ATTR_STRING, .s = off, .s_len = off ? strlen(off) : 0 };
    }
    snprintf(nm, sizeof nm, "%s::dq", base);
    return qr_twk_add(cx, nm, "BlockDequant", QR_QUANT_INT_DOMAIN, has_table ? 5 : 4, in, 1, out, na, at);
}

/* Node `node`: Cast of value v to dtype `to`, written to value out. */
static QrStatus qr__twq_cast(QrTwCtx *cx, const char *node, int v, QrDType to, int out) {
    QrAttr at = { .name = "to", .type = QR_ATTR_INT, .i = to };
    return qr_twk_add(cx, node, "Cast", "", 1, &v, 1, &out, 1, &at);
}

/* The float product of a weight-only node: Y = A @ W (+ bias) with A, bias and Y in float32, cast
 * from / to float16 or bfloat16 A as the node stages them; writes value y. */
static QrStatus qr__twq_float_mm(QrTwCtx *cx, const QrNode *n, int w, int bias_in, int y) {
    const QrGraph *s = cx->s;
    QrDType adt = s->values[n->in[0]].t.dtype;
    bool f32 = adt == QR_DT_F32;
    const char *yname = cx->tw->g.values[y].name;   /* y may be a value of the twin only */
    char nm[512];
    int a = n->in[0], bias = bias_in, mo = y;
    if (!f32) {
        QR_TRY(qr_twk_value(cx, s->values[a].name, "::f32", &a));
        snprintf(nm, sizeof nm, "%s::cast_a", n->name);
        QR_TRY(qr__twq_cast(cx, nm, n->in[0], QR_DT_F32, a));
        if (bias_in >= 0) {
            QR_TRY(qr_twk_value(cx, s->values[bias_in].name, "::f32", &bias));
            snprintf(nm, sizeof nm, "%s::cast_bias", n->name);
            QR_TRY(qr__twq_cast(cx, nm, bias_in, QR_DT_F32, bias));
        }
    }
    if (bias >= 0 || !f32) QR_TRY(qr_twk_value(cx, yname, "::matmul", &mo));
    int mm_in[2] = { a, w };
    QR_TRY(qr_twk_add(cx, n->name, "MatMul", "", 2, mm_in, 1, &mo, 0, NULL));
    int yf = mo;
    if (bias >= 0) {
        yf = y;
        if (!f32) QR_TRY(qr_twk_value(cx, yname, "::biased", &yf));
        snprintf(nm, sizeof nm, "%s::bias", n->name);
        int add_in[2] = { mo, bias };
        QR_TRY(qr_twk_add(cx, nm, "Add", "", 2, add_in, 1, &yf, 0, NULL));
    }
    if (f32) return QR_OK;
    snprintf(nm, sizeof nm, "%s::cast_y", n->name);
    return qr__twq_cast(cx, nm, yf, adt, y);
}

/* MatMulNBits -> MatMul(A, W) (+ bias), W the weight the node dequantizes: a blocked
 * DequantizeLinear of the codes with integer zero points and no g_idx ((code - zp) * scale),
 * qreport.int.BlockDequant with g_idx (the block of row k is g_idx[k]) or float zero points (two
 * roundings). With int8 activations (accuracy_level 4) the node itself stays and computes the
 * output while its quantizer is enabled; the float product of the dequantized (or matched) weight
 * replaces it when disabled. */
static QrStatus qr__twq_nbits(QrTwCtx *cx, const QrNode *n) {
    const QrGraph *s = cx->s;
    const QrTensor *ins[8];
    QR_TRY(qr__twq_ins(s, n, ins));
    QrBlkNBits g;
    if (qr_blk_nbits_geom(n, ins, n->n_in, &g) != QR_OK) { qr_err_clear(); return QR_ERR_UNSUPPORTED; }
    const QrTensor *b = ins[QR_BLK_NB_B], *sc = ins[QR_BLK_NB_SCALES];
    const QrTensor *z = n->n_in > QR_BLK_NB_ZP ? ins[QR_BLK_NB_ZP] : NULL, *gi = n->n_in > QR_BLK_NB_GIDX ? ins[QR_BLK_NB_GIDX] : NULL;
    const QrTensor *bias = n->n_in > QR_BLK_NB_BIAS ? ins[QR_BLK_NB_BIAS] : NULL;
    for (int i = QR_BLK_NB_B; i <= QR_BLK_NB_BIAS; i++) if (!qr__twq_const_in(s, n, i)) return QR_ERR_UNSUPPORTED;
    if (n->out[0] < 0) return QR_ERR_UNSUPPORTED;
    if (gi)
        for (int64_t k = 0; k < g.K; k++)
            if (((const int32_t *)gi->data)[k] < 0 || ((const int32_t *)gi->data)[k] >= g.nb) return QR_ERR_UNSUPPORTED;
    /* a blocked DequantizeLinear reproduces (code - zp) * scale; g_idx and float zero points need
     * the block map and ORT's two roundings; int8 activations need the switch */
    bool bdq = gi || g.zp_float || g.int8_act;
    /* a per-element block index only where the block of row k is not k / bs (g_idx) or the zero
     * points are float (the analyses read those through the map); int8 activations with integer
     * zero points use the blocked form, (code - zp) * scale as a blocked DequantizeLinear (4 bytes
     * per weight element less) */
    bool need_map = gi || g.zp_float;
    /* the int8-activation switch of 4-bit codes reads the node's own B (BlockDequant's attribute k):
     * no copy of the codes at all (one byte per element before: 450 MB on a 0.5B decoder) */
    const bool packed = bdq && !need_map && g.int8_act && g.bits == 4 && b->dtype == QR_DT_U8 && b->rank == 3 &&
                        g.blob * 2 == g.bs;
    QrDType cd = g.bits == 8 ? QR_DT_U8 : g.bits == 4 ? QR_DT_U4 : QR_DT_U2;
    QrTensor codes = {0}, tsc = {0}, tzp = {0}, map = {0}, none = {0};
    int64_t cdims[2] = { g.K, g.N }, pdims[2] = { g.nb, g.N }, np = g.nb * g.N;
    QrStatus st = packed ? QR_OK : qr__twq_new(&codes, cd, 2, cdims);
    if (st == QR_OK) st = qr__twq_new(&tsc, QR_DT_F32, bdq ? 1 : 2, bdq ? &np : pdims);
    if (st == QR_OK)
        st = qr__twq_new(&tzp, bdq ? (g.int8_act ? QR_DT_U8 : QR_DT_F32) : cd, bdq ? 1 : 2, bdq ? &np : pdims);
    if (st == QR_OK && need_map) st = qr__twq_new(&map, QR_DT_S32, 2, cdims);
    if (st == QR_OK) {
        uint8_t *pc = codes.data, *pz = tzp.data;
        float *ps = tsc.data, *pzf = tzp.data;
        int32_t *pm = map.data;
        const uint8_t *zu = z && !g.zp_float ? z->data : NULL;
        for (int64_t nn = 0; nn < g.N; nn++) {
            for (int64_t k = 0; k < g.K; k++) {
                if (!packed) pc[k * g.N + nn] = (uint8_t)qr_blk_nbits_code(&g, b->data, nn, k);
                if (need_map) pm[k * g.N + nn] = (int32_t)((gi ? ((const int32_t *)gi->data)[k] : k / g.bs) * g.N + nn);
            }
            for (int64_t kb = 0; kb < g.nb; kb++) {
                int64_t p = kb * g.N + nn;
                ps[p] = (float)qr_tensor_get_f64(sc, nn * g.nb + kb);   /* float16 scales: exact in float32 */
                if (bdq && !g.int8_act)
                    pzf[p] = g.zp_float ? (float)qr_tensor_get_f64(z, nn * g.nb + kb) : (float)qr_blk_nbits_zp(&g, zu, nn, kb);
                else pz[p] = (uint8_t)qr_blk_nbits_zp(&g, zu, nn, kb);
            }
        }
    }
    const char *wname = s->values[n->in[QR_BLK_NB_B]].name;
    int w = -1, yf = n->out[0];
    if (st == QR_OK && g.int8_act) st = qr_twk_value(cx, s->values[n->out[0]].name, "::float", &yf);
    if (st == QR_OK && !bdq) st = qr__twq_block_dq(cx, wname, &codes, &tsc, &tzp, 0, g.bs, &w);
    else if (st == QR_OK)
        st = qr__twq_bdq(cx, wname, &codes, packed ? n->in[QR_BLK_NB_B] : -1, g.K, &tsc, &tzp, &map, &none, g.bs,
                        g.int8_act ? s->values[n->out[0]].name : NULL,
                        g.int8_act ? cx->tw->g.values[yf].name : NULL, &w);
    qr_tensor_free_data(&codes);
    qr_tensor_free_data(&tsc);
    qr_tensor_free_data(&tzp);
    qr_tensor_free_data(&map);
    QR_TRY(st);
    if (g.int8_act) {   /* the node as it is (its quantizer enabled) */
        char nm[512];
        snprintf(nm, sizeof nm, "%s::int8", n->name);
        QR_TRY(qr_twk_add(cx, nm, n->op_type, n->domain, n->n_in, n->in, n->n_out, n->out, n->n_attr, n->attr));
    }
    return qr__twq_float_mm(cx, n, w, bias ? n->in[QR_BLK_NB_BIAS] : -1, yf);
}

/* MatMulBnb4 -> MatMul(A, W), W = qreport.int.BlockDequant of the codes (K, N) with the table and
 * absmax: block i / block_size of W (N, K) flattened, W[n][k] = table[code] * absmax. */
static QrStatus qr__twq_bnb4(QrTwCtx *cx, const QrNode *n) {
    const QrGraph *s = cx->s;
    const QrTensor *ins[8];
    QR_TRY(qr__twq_ins(s, n, ins));
    QrBlkBnb4 g;
    if (qr_blk_bnb4_geom(n, ins, n->n_in, &g) != QR_OK) { qr_err_clear(); return QR_ERR_UNSUPPORTED; }
    const QrTensor *b = ins[1], *am = ins[2];
    if (!qr__twq_const_in(s, n, 1) || !qr__twq_const_in(s, n, 2) || n->out[0] < 0) return QR_ERR_UNSUPPORTED;
    QrTensor codes = {0}, tsc = {0}, map = {0}, tab = {0}, none = {0};
    int64_t cdims[2] = { g.K, g.N }, n16 = 16;
    QrStatus st = qr__twq_new(&codes, QR_DT_U4, 2, cdims);
    if (st == QR_OK) st = qr__twq_new(&map, QR_DT_S32, 2, cdims);
    if (st == QR_OK) st = qr__twq_new(&tsc, QR_DT_F32, 1, &am->numel);
    if (st == QR_OK) st = qr__twq_new(&tab, QR_DT_F32, 1, &n16);
    if (st == QR_OK) {
        const uint8_t *pb = b->data;
        uint8_t *pc = codes.data;
        int32_t *pm = map.data;
        for (int64_t nn = 0; nn < g.N; nn++)
            for (int64_t k = 0; k < g.K; k++) {
                int64_t i = nn * g.K + k;
                pc[k * g.N + nn] = (uint8_t)qr_blk_bnb4_code(pb, i);
                pm[k * g.N + nn] = (int32_t)(i / g.bs);
            }
        memcpy(tsc.data, am->data, qr_tensor_nbytes(am));
        memcpy(tab.data, g.table, 16 * sizeof(float));
    }
    int w = -1;
    if (st == QR_OK) st = qr__twq_bdq(cx, s->values[n->in[1]].name, &codes, -1, 0, &tsc, &none, &map, &tab, g.bs, NULL, NULL, &w);
    qr_tensor_free_data(&codes);
    qr_tensor_free_data(&tsc);
    qr_tensor_free_data(&map);
    qr_tensor_free_data(&tab);
    QR_TRY(st);
    return qr__twq_float_mm(cx, n, w, -1, n->out[0]);
}

static QrStatus qr__twq_gbq(QrTwCtx *cx, const QrNode *n) {
    const QrGraph *s = cx->s;
    const QrTensor *ins[8];
    QR_TRY(qr__twq_ins(s, n, ins));
    QrBlkGbq g;
    if (qr_blk_gbq_geom(n, ins, n->n_in, &g) != QR_OK) { qr_err_clear(); return QR_ERR_UNSUPPORTED; }
    const QrTensor *d = ins[0], *sc = ins[2], *z = n->n_in > 3 ? ins[3] : NULL;
    if (!qr__twq_const_in(s, n, 0) || !qr__twq_const_in(s, n, 2) || !qr__twq_const_in(s, n, 3) || n->out[0] < 0)
        return QR_ERR_UNSUPPORTED;
    QrDType cd = !g.u8 ? d->dtype : g.bits == 8 ? QR_DT_U8 : g.bits == 4 ? QR_DT_U4 : QR_DT_U2;
    QrTensor codes = {0}, tsc = {0}, tzp = {0};
    int64_t n_el = 1;
    for (int i = 0; i < g.rank; i++) n_el *= g.dims[i];
    QrStatus st = qr_tensor_set_shape(&codes, cd, g.rank, g.dims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&codes);
    if (st == QR_OK) st = qr_tensor_set_shape(&tsc, sc->dtype, sc->rank, sc->dims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&tsc);
    if (st == QR_OK) st = qr_tensor_set_shape(&tzp, cd, sc->rank, sc->dims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&tzp);
    if (st == QR_OK) {
        for (int64_t e = 0; e < n_el; e++) qr_tensor_set_i64(&codes, e, qr_blk_gbq_code(&g, d, e));
        memcpy(tsc.data, sc->data, qr_tensor_nbytes(sc));
        for (int64_t si = 0; si < sc->numel; si++) qr_tensor_set_i64(&tzp, si, qr_blk_gbq_zp(&g, z, si));
    }
    int w = -1;
    if (st == QR_OK) st = qr__twq_block_dq(cx, s->values[n->in[0]].name, &codes, &tsc, &tzp, g.qax, g.bs, &w);
    qr_tensor_free_data(&codes);
    qr_tensor_free_data(&tsc);
    qr_tensor_free_data(&tzp);
    QR_TRY(st);
    int gin[2] = { w, n->in[1] };
    QrAttr ax = { .name = "axis", .type = QR_ATTR_INT, .i = g.gax };
    return qr_twk_add(cx, n->name, "Gather", "", 2, gin, 1, &n->out[0], 1, &ax);
}

/* The twin of a weight-only node, QR_ERR_UNSUPPORTED when it has none (*why says why). */
static QrStatus qr_twq_rewrite(QrTwCtx *cx, const QrNode *n, const char **why) {
    *why = NULL;
    if (strcmp(n->domain, "com.microsoft") != 0) return QR_ERR_UNSUPPORTED;
    if (qr_twk_is(n, "MatMulNBits")) {
        *why = "non-constant weights, scales, zero points, g_idx or bias (or g_idx values outside the blocks)";
        return qr__twq_nbits(cx, n);
    }
    if (qr_twk_is(n, "GatherBlockQuantized")) {
        *why = "non-constant quantized data";
        return qr__twq_gbq(cx, n);
    }
    if (qr_twk_is(n, "MatMulBnb4")) {
        *why = "non-constant weights or absmax";
        return qr__twq_bnb4(cx, n);
    }
    return QR_ERR_UNSUPPORTED;
}
