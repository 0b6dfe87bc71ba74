/* quant/twin_wq — float twins of ONNX Runtime's weight-only quantized nodes, so that their
 * weight quantizers can be toggled like any other (a weight-only node is the quantizer of its
 * weight: disabled, the node computes with the matched baseline float weight, or with the
 * dequantized weight when the baseline has none):
 *
 *   source node                                    twin
 *   MatMulNBits(A, B, scales, [zp], , [bias])  ->  MatMul(A, DQ(Bq)) [+ bias]
 *   GatherBlockQuantized(data, idx, scales, [zp]) ->  Gather(DQ(Dq), idx)
 *
 * DQ is a blocked DequantizeLinear (block_size along K, axis 0, or along quantize_axis) of a new
 * integer initializer holding the codes one per element (uint8/uint4/uint2, int4) with the
 * scales and zero points rearranged to match, so the twin's weight is bit for bit the weight the
 * node dequantizes ((code - zp) * scale in float32) and the quantizer table sees a weight stored
 * as integers (QR_QF_DQ_INIT), blocked, with the node's own block size.
 * Bits 2, 4 and 8 (uint2 / uint4 / uint8 codes), any block_size, packed or absent zero points,
 * bias (MatMul then Add). Nodes kept as they are (their weight cannot be toggled; the note says
 * why): MatMulNBits with g_idx or float zero points (ORT dequantizes them as code * scale +
 * (-(scale * zp)), two roundings a DequantizeLinear does not reproduce), with int8 activations
 * (accuracy_level 4 with 4/8-bit codes, which the float twin would not reproduce) or float16
 * activations, MatMulBnb4 (table-coded weights), non-constant weights. */

static QrStatus qr__tw_ctx(const QrGraph *s, const QrNode *n, const QrTensor **ins, QrOpCtx *c) {
    if (n->n_in > 8) return QR_ERR_UNSUPPORTED;
    for (int i = 0; i < n->n_in; i++) ins[i] = n->in[i] >= 0 ? &s->values[n->in[i]].t : NULL;
    memset(c, 0, sizeof *c);
    c->g = s;
    c->node = n;
    c->n_in = n->n_in;
    c->in = ins;
    return QR_OK;
}

/* The blocked DequantizeLinear of codes (data, shape dims) with scales sc / zero points zp
 * (constants of the twin) along axis; its output value in *out. The node runs at opset 21. */
static QrStatus qr__tw_block_dq(QrTwCtx *cx, const char *base, QrTensor *codes, QrTensor *sc, QrTensor *zp, int axis,
                                int64_t bs, int *out) {
    int in[3];
    QR_TRY(qr__tw_const(cx, base, codes, &in[0]));
    char nm[512];
    snprintf(nm, sizeof nm, "%s_scale", base);
    QR_TRY(qr__tw_const(cx, nm, sc, &in[1]));
    snprintf(nm, sizeof nm, "%s_zero_point", base);
    QR_TRY(qr__tw_const(cx, nm, zp, &in[2]));
    QR_TRY(qr__tw_value(cx, base, "::dq", out));
    QrAttr at[2] = { { .name = "axis", .type = QR_ATTR_INT, .i = axis }, { .name = "block_size", .type = QR_ATTR_INT, .i = bs } };
    snprintf(nm, sizeof nm, "%s::dq", base);
    QR_TRY(qr__tw_add(cx, nm, "DequantizeLinear", "", 3, in, 1, out, 2, at));
    cx->tw->g.nodes[cx->tw->g.n_nodes - 1].opset = 21;   /* blocked DequantizeLinear */
    return QR_OK;
}

static QrStatus qr__tw_nbits(QrTwCtx *cx, const QrNode *n) {
    const QrGraph *s = cx->s;
    const QrTensor *ins[8];
    QrOpCtx c;
    QR_TRY(qr__tw_ctx(s, n, ins, &c));
    QrWqNBits g;
    if (qr_op_wq_nbits_geom(&c, &g) != QR_OK) { qr_err_clear(); return QR_ERR_UNSUPPORTED; }
    const QrTensor *b = ins[QR__WQ_B], *sc = ins[QR__WQ_SCALES];
    const QrTensor *z = n->n_in > QR__WQ_ZP ? ins[QR__WQ_ZP] : NULL, *gi = n->n_in > QR__WQ_GIDX ? ins[QR__WQ_GIDX] : NULL;
    const QrTensor *bias = n->n_in > QR__WQ_BIAS ? ins[QR__WQ_BIAS] : NULL;
    if (g.int8_act || g.zp_float || gi || ins[0]->dtype != QR_DT_F32 || !b->data || !sc->data || (z && !z->data) ||
        (bias && !bias->data) || n->out[0] < 0)
        return QR_ERR_UNSUPPORTED;
    QrDType cd = g.bits == 8 ? QR_DT_U8 : g.bits == 4 ? QR_DT_U4 : QR_DT_U2;
    QrTensor codes = {0}, tsc = {0}, tzp = {0};
    int64_t cdims[2] = { g.K, g.N }, pdims[2] = { g.nb, g.N };
    QrStatus st = qr_tensor_set_shape(&codes, cd, 2, cdims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&codes);
    if (st == QR_OK) st = qr_tensor_set_shape(&tsc, QR_DT_F32, 2, pdims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&tsc);
    if (st == QR_OK) st = qr_tensor_set_shape(&tzp, cd, 2, pdims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&tzp);
    if (st == QR_OK) {
        uint8_t *pc = codes.data, *pz = tzp.data;
        float *ps = tsc.data;
        for (int64_t nn = 0; nn < g.N; nn++) {
            for (int64_t k = 0; k < g.K; k++) pc[k * g.N + nn] = (uint8_t)qr_wq_nbits_code(&g, b->data, nn, k);
            for (int64_t kb = 0; kb < g.nb; kb++) {
                ps[kb * g.N + nn] = (float)qr_tensor_get_f64(sc, nn * g.nb + kb);
                pz[kb * g.N + nn] = (uint8_t)qr_wq_nbits_zp(&g, z ? z->data : NULL, nn, kb);
            }
        }
    }
    int w = -1, mm_in[2] = { n->in[0], -1 };
    if (st == QR_OK) st = qr__tw_block_dq(cx, s->values[n->in[QR__WQ_B]].name, &codes, &tsc, &tzp, 0, g.bs, &w);
    qr_tensor_free_data(&codes);
    qr_tensor_free_data(&tsc);
    qr_tensor_free_data(&tzp);
    QR_TRY(st);
    mm_in[1] = w;
    if (!bias) return qr__tw_add(cx, n->name, "MatMul", "", 2, mm_in, 1, &n->out[0], 0, NULL);
    int mo;
    QR_TRY(qr__tw_value(cx, s->values[n->out[0]].name, "::matmul", &mo));
    QR_TRY(qr__tw_add(cx, n->name, "MatMul", "", 2, mm_in, 1, &mo, 0, NULL));
    char nm[512];
    snprintf(nm, sizeof nm, "%s::bias", n->name);
    int add_in[2] = { mo, n->in[QR__WQ_BIAS] };
    return qr__tw_add(cx, nm, "Add", "", 2, add_in, 1, &n->out[0], 0, NULL);
}

static QrStatus qr__tw_gbq(QrTwCtx *cx, const QrNode *n) {
    const QrGraph *s = cx->s;
    const QrTensor *ins[8];
    QrOpCtx c;
    QR_TRY(qr__tw_ctx(s, n, ins, &c));
    QrWqGbq g;
    if (qr_op_wq_gbq_geom(&c, &g) != QR_OK) { qr_err_clear(); return QR_ERR_UNSUPPORTED; }
    const QrTensor *d = ins[0], *sc = ins[2], *z = n->n_in > 3 ? ins[3] : NULL;
    if (!d->data || !sc->data || (z && !z->data) || n->out[0] < 0) return QR_ERR_UNSUPPORTED;
    bool u8 = d->dtype == QR_DT_U8;
    QrDType cd = !u8 ? d->dtype : g.bits == 8 ? QR_DT_U8 : g.bits == 4 ? QR_DT_U4 : QR_DT_U2;
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
        for (int64_t e = 0; e < n_el; e++) qr_tensor_set_i64(&codes, e, qr_op_wq_gbq_code(&g, d, e));
        memcpy(tsc.data, sc->data, qr_tensor_nbytes(sc));
        int64_t zrow = (g.nblk + g.per - 1) / g.per;
        for (int64_t si = 0; si < sc->numel; si++) {
            int32_t zp;
            if (u8) zp = z ? (((const uint8_t *)z->data)[si / g.nblk * zrow + si % g.nblk / g.per] >>
                              (si % g.nblk % g.per * g.bits)) & ((1 << g.bits) - 1)
                           : 1 << (g.bits - 1);
            else zp = z ? (int32_t)qr_tensor_get_i64(z, si) : 0;
            qr_tensor_set_i64(&tzp, si, zp);
        }
    }
    int w = -1;
    if (st == QR_OK) st = qr__tw_block_dq(cx, s->values[n->in[0]].name, &codes, &tsc, &tzp, g.qax, g.bs, &w);
    qr_tensor_free_data(&codes);
    qr_tensor_free_data(&tsc);
    qr_tensor_free_data(&tzp);
    QR_TRY(st);
    int gin[2] = { w, n->in[1] };
    QrAttr ax = { .name = "axis", .type = QR_ATTR_INT, .i = g.gax };
    return qr__tw_add(cx, n->name, "Gather", "", 2, gin, 1, &n->out[0], 1, &ax);
}

/* The twin of a weight-only node, QR_ERR_UNSUPPORTED when it has none (*why says why). */
static QrStatus qr__tw_weight_only(QrTwCtx *cx, const QrNode *n, const char **why) {
    *why = NULL;
    if (strcmp(n->domain, "com.microsoft") != 0) return QR_ERR_UNSUPPORTED;
    if (qr__tw_is(n, "MatMulNBits")) {
        *why = "g_idx, float zero points, int8 activations (accuracy_level 4), float16 activations or non-constant weights";
        return qr__tw_nbits(cx, n);
    }
    if (qr__tw_is(n, "GatherBlockQuantized")) {
        *why = "non-constant quantized data";
        return qr__tw_gbq(cx, n);
    }
    if (qr__tw_is(n, "MatMulBnb4")) *why = "FP4/NF4 codes are a table lookup, not a DequantizeLinear";
    return QR_ERR_UNSUPPORTED;
}
