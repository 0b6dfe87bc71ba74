/* ops/contrib_int — ONNX Runtime's integer contrib operators of dynamically quantized
 * (BERT-style) and QOperator transformer models (com.microsoft): MatMulIntegerToFloat,
 * DynamicQuantizeMatMul (what ORT's optimizer fuses the output of its dynamic quantizer into:
 * DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul [-> Add]) and QLinearSoftmax.
 *
 * The integers are ORT's: exact int32 dot products, A quantized by DynamicQuantizeLinear's
 * arithmetic (qr_op_dynamic_params, qr_quant_quantize_f32), float outputs formed as MLAS's
 * scale-and-bias output stage ((float)acc * (a_scale * b_scale), then + bias). QLinearSoftmax
 * builds ORT's float32 exp table and requantizes with its float operations.
 *
 * Map: integer matmul to float (geometry, run) · QLinearSoftmax · table. */

/* ==== MatMulIntegerToFloat / DynamicQuantizeMatMul =================================== */

/* A (..., M, K) [rank >= 1] times B (K, N) [rank 2]; per-tensor A parameters, per-tensor or
 * per-column (N) B parameters. */
typedef struct QrCiMM {
    int64_t M, K, N, batches;
    int a_in, b_in, as_in, bs_in, az_in, bz_in, bias_in;   /* input indices, -1: none */
    bool dynamic;           /* DynamicQuantizeMatMul: A is float, quantized here */
} QrCiMM;

static QrStatus qr__ci_param_n(const QrOpCtx *c, int i, int64_t N, const char *what, bool per_col) {
    const QrTensor *t = i >= 0 ? qr_op_in(c, i) : NULL;
    if (!t) return QR_OK;
    if (t->numel == 1) return QR_OK;
    if (per_col && t->numel == N && t->rank <= 2) return QR_OK;
    return qr_op_fail(c, QR_ERR_UNSUPPORTED, "%s has %lld elements (one%s expected)", what, (long long)t->numel,
                      per_col ? ", or one per column of B" : "");
}

static QrStatus qr__ci_mm_geom(const QrOpCtx *c, bool dynamic, QrCiMM *g) {
    memset(g, 0, sizeof *g);
    g->dynamic = dynamic;
    g->a_in = 0;
    g->b_in = 1;
    if (dynamic) { g->as_in = -1; g->bs_in = 2; g->az_in = -1; g->bz_in = 3; g->bias_in = 4; }
    else { g->as_in = 2; g->bs_in = 3; g->az_in = 4; g->bz_in = 5; g->bias_in = 6; }
    const QrTensor *a = c->in[0], *b = c->in[1];
    if (dynamic ? a->dtype != QR_DT_F32 : !qr_quant_is_8bit(a->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "A has type %s (%s)", qr_dtype_name(a->dtype),
                          dynamic ? "float32" : "uint8 or int8");
    if (!qr_quant_is_8bit(b->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "B has type %s (uint8 or int8)", qr_dtype_name(b->dtype));
    if (a->rank < 1 || b->rank != 2)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "A must have rank >= 1 and B rank 2, got %d and %d", a->rank, b->rank);
    g->K = a->dims[a->rank - 1];
    g->M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    g->N = b->dims[1];
    if (b->dims[0] != g->K)
        return qr_op_fail(c, QR_ERR_SHAPE, "A has %lld columns but B has %lld rows", (long long)g->K,
                          (long long)b->dims[0]);
    g->batches = 1;
    for (int i = 0; i < a->rank - 2; i++) g->batches *= a->dims[i];
    const int scale_ins[2] = { g->as_in, g->bs_in };
    const char *scale_names[2] = { "a_scale", "b_scale" };
    for (int s = 0; s < 2; s++) {
        if (scale_ins[s] < 0) continue;
        const QrTensor *t = qr_op_in(c, scale_ins[s]);
        if (!t || t->dtype != QR_DT_F32)
            return qr_op_fail(c, QR_ERR_INVALID, "%s must be a float32 tensor", scale_names[s]);
    }
    QR_TRY(qr__ci_param_n(c, g->as_in, g->N, "a_scale", false));
    QR_TRY(qr__ci_param_n(c, g->bs_in, g->N, "b_scale", true));
    if (g->az_in >= 0) QR_TRY(qr__ci_param_n(c, g->az_in, g->N, "a_zero_point", false));
    QR_TRY(qr__ci_param_n(c, g->bz_in, g->N, "b_zero_point", true));
    const QrTensor *az = g->az_in >= 0 ? qr_op_in(c, g->az_in) : NULL, *bz = qr_op_in(c, g->bz_in);
    if (az && az->dtype != a->dtype)
        return qr_op_fail(c, QR_ERR_INVALID, "a_zero_point has type %s, A has %s", qr_dtype_name(az->dtype),
                          qr_dtype_name(a->dtype));
    if (bz && bz->dtype != b->dtype)
        return qr_op_fail(c, QR_ERR_INVALID, "b_zero_point has type %s, B has %s", qr_dtype_name(bz->dtype),
                          qr_dtype_name(b->dtype));
    const QrTensor *bias = qr_op_in(c, g->bias_in);
    if (bias && (bias->dtype != QR_DT_F32 || bias->numel != g->N))
        return qr_op_fail(c, QR_ERR_INVALID, "bias must be %lld float32 values", (long long)g->N);
    char what[96];
    snprintf(what, sizeof what, "%lld x %lld x %lld products", (long long)(g->batches * g->M), (long long)g->N,
             (long long)g->K);
    return qr_op_check_work(c, (double)g->batches * (double)g->M * (double)g->N * (double)g->K, what);
}

static QrStatus qr__ci_mm_shape_as(QrOpCtx *c, bool dynamic) {
    QrCiMM g;
    QR_TRY(qr__ci_mm_geom(c, dynamic, &g));
    const QrTensor *a = c->in[0];
    int64_t d[QR_MAX_RANK];
    for (int i = 0; i < a->rank; i++) d[i] = a->dims[i];
    d[a->rank - 1] = g.N;
    return qr_op_set_out(c, 0, QR_DT_F32, a->rank, d);
}
static QrStatus qr__ci_mmitf_shape(QrOpCtx *c) { return qr__ci_mm_shape_as(c, false); }
static QrStatus qr__ci_dqmm_shape(QrOpCtx *c) { return qr__ci_mm_shape_as(c, true); }

/* Y[m][n] = (float)(sum_k (a - a_zp) * (b[k][n] - b_zp[n])) * (a_scale * b_scale[n]) (+ bias[n]):
 * MLAS's QGEMM with its scale-and-bias output processor (the product of the two scales formed
 * in float32 first, as ORT's kernel does). */
static QrStatus qr__ci_mm_exec_as(QrOpCtx *c, bool dynamic) {
    QrCiMM g;
    QR_TRY(qr__ci_mm_geom(c, dynamic, &g));
    const QrTensor *a = c->in[0], *b = c->in[1], *bs = c->in[g.bs_in], *bz = qr_op_in(c, g.bz_in);
    const QrTensor *bias_t = qr_op_in(c, g.bias_in);
    const float *bias = bias_t ? bias_t->data : NULL;
    float *Y = c->out[0]->data;
    int64_t total = g.batches * g.M * g.K;
    int32_t *qa = qr_arena_array(c->scratch, (size_t)QR_MAX(total, 1), sizeof(int32_t));
    float *mult = qr_arena_array(c->scratch, (size_t)QR_MAX(g.N, 1), sizeof(float));
    int32_t *zb = qr_arena_array(c->scratch, (size_t)QR_MAX(g.N, 1), sizeof(int32_t));
    if (!qa || !mult || !zb) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory for the quantized operands");
    float a_scale;
    int32_t a_zp = 0;
    if (dynamic) {   /* DynamicQuantizeLinear of the whole of A (uint8) */
        const float *pa = a->data;
        qr_op_dynamic_params(pa, a->numel, &a_scale, &a_zp);
        QrQuantRange r = { 0, 255 };
        for (int64_t i = 0; i < total; i++) qa[i] = qr_quant_quantize_f32(pa[i], a_scale, a_zp, r) - a_zp;
    } else {
        a_scale = qr_quant_getf(c->in[g.as_in], 0);
        const QrTensor *az = qr_op_in(c, g.az_in);
        a_zp = az ? qr_quant_geti(az, 0) : 0;
        for (int64_t i = 0; i < total; i++) qa[i] = qr_quant_geti(a, i) - a_zp;
    }
    for (int64_t n = 0; n < g.N; n++) {
        mult[n] = a_scale * qr_quant_getf(bs, bs->numel == 1 ? 0 : n);
        zb[n] = bz ? qr_quant_geti(bz, bz->numel == 1 ? 0 : n) : 0;
    }
    for (int64_t r = 0; r < g.batches * g.M; r++)
        for (int64_t n = 0; n < g.N; n++) {
            int64_t acc = 0;
            for (int64_t k = 0; k < g.K; k++) acc += (int64_t)qa[r * g.K + k] * (qr_quant_geti(b, k * g.N + n) - zb[n]);
            float v = (float)(int32_t)(uint32_t)(uint64_t)acc * mult[n];   /* int32 as MLAS accumulates */
            QR_KERN_ROUNDED(v);
            Y[r * g.N + n] = bias ? v + bias[n] : v;
        }
    return QR_OK;
}
static QrStatus qr__ci_mmitf_exec(QrOpCtx *c) { return qr__ci_mm_exec_as(c, false); }
static QrStatus qr__ci_dqmm_exec(QrOpCtx *c) { return qr__ci_mm_exec_as(c, true); }

/* ==== QLinearSoftmax =================================================================== */

/* QLinearSoftmax(X, X_scale, [x_zp], y_scale, [y_zp]) with `opset` (that of the Softmax it
 * replaced) and `axis`: opset < 13 flattens X to (N, D) at axis, opset >= 13 takes
 * the softmax along axis alone; axis defaults to -1 for both (the contrib schema's default, which
 * ORT applies, unlike Softmax-11's 1). ORT's CPU kernel: a 256-entry float32 table
 *   t[i] = (float)exp((i - 255 + shift) * x_scale),  shift = max(0, ln(FLT_MAX / D) - 5) / x_scale
 * in double (x_zero_point never enters: softmax is shift invariant), the row's codes re-based so
 * the largest reads t[255], the sum of t over the row in float32 from 0, then
 *   y = nearbyintf((t * floorf(1 / y_scale)) / sum) + y_zp,
 * kept <= 255 and cast to the output type (an int8 result above 127 wraps, as ORT's does). */
typedef struct QrCiSoftmax { int64_t outer, D, inner; } QrCiSoftmax;

static QrStatus qr__ci_softmax_geom(const QrOpCtx *c, QrCiSoftmax *s) {
    const QrTensor *x = c->in[0], *ys = qr_op_in(c, 3);
    if (!qr_quant_is_8bit(x->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "X has type %s (uint8 or int8)", qr_dtype_name(x->dtype));
    if (!ys) return qr_op_fail(c, QR_ERR_INVALID, "y_scale is required");
    QR_TRY(qr_op_q_need_scale(c, 1, "X_scale"));
    QR_TRY(qr_op_q_need_scale(c, 3, "y_scale"));
    static const char *const names[5] = { "X", "X_scale", "x_zero_point", "y_scale", "y_zero_point" };
    for (int i = 1; i < 5; i++) QR_TRY(qr_op_q_need_scalar(c, i, names[i]));
    QR_TRY(qr_op_q_need_zp_type(c, 2, x->dtype, "x_zero_point"));
    QR_TRY(qr_op_q_need_zp_type(c, 4, x->dtype, "y_zero_point"));
    int64_t opset = qr_attr_int(c->node, "opset", -1);
    if (opset < 1) return qr_op_fail(c, QR_ERR_INVALID, "attribute 'opset' is required");
    if (x->rank < 1) return qr_op_fail(c, QR_ERR_SHAPE, "X must have rank >= 1");
    int axis = 0;
    /* the schema's default -1 (ORT fills it in, so an opset < 13 node without axis flattens at the last dim) */
    QR_TRY(qr_op_axis(c, qr_attr_int(c->node, "axis", -1), x->rank, &axis));
    s->outer = s->D = s->inner = 1;
    bool ovf = false;   /* a 0 dim elsewhere lets the others multiply past int64 */
    for (int i = 0; i < axis; i++) ovf |= qr_mul_overflow_i64(s->outer, x->dims[i], &s->outer);
    if (opset < 13) {
        for (int i = axis; i < x->rank; i++) ovf |= qr_mul_overflow_i64(s->D, x->dims[i], &s->D);
    } else {
        s->D = x->dims[axis];
        for (int i = axis + 1; i < x->rank; i++) ovf |= qr_mul_overflow_i64(s->inner, x->dims[i], &s->inner);
    }
    if (ovf) return qr_op_fail(c, QR_ERR_SHAPE, "X's shape overflows");
    return QR_OK;
}

static QrStatus qr__ci_softmax_shape(QrOpCtx *c) {
    QrCiSoftmax s;
    QR_TRY(qr__ci_softmax_geom(c, &s));
    return qr_op_set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
}

static QrStatus qr__ci_softmax_exec(QrOpCtx *c) {
    QrCiSoftmax s;
    QR_TRY(qr__ci_softmax_geom(c, &s));
    const QrTensor *x = c->in[0], *yz = qr_op_in(c, 4);
    QrTensor *y = c->out[0];
    bool sgn = x->dtype == QR_DT_S8;
    if (x->numel == 0 || s.D == 0) return QR_OK;
    double xs = (double)qr_quant_getf(c->in[1], 0), ysc = (double)qr_quant_getf(c->in[3], 0);
    /* the table and 1 / y_scale need positive finite scales (else exp(inf), inf / inf: no integer) */
    if (!(xs > 0 && xs <= DBL_MAX) || !(ysc > 0 && 1.0 / ysc <= FLT_MAX))
        return qr_op_fail(c, QR_ERR_INVALID, "X_scale %g and y_scale %g must be positive and finite (1 / y_scale too)",
                          xs, ysc);
    double shift = fmax(0.0, log((double)FLT_MAX / (double)s.D) - 5.0) / xs;
    float table[256];   /* indexed by the re-based code: 255 (uint8) / 127 (int8) is the row's maximum */
    for (int i = 0; i < 256; i++) table[(uint8_t)(sgn ? i - 128 : i)] = (float)exp(((double)i - 255.0 + shift) * xs);
    float ys = floorf(1.0f / qr_quant_getf(c->in[3], 0));
    int32_t zp = yz ? qr_quant_geti(yz, 0) : 0;
    for (int64_t o = 0; o < s.outer; o++)
        for (int64_t in = 0; in < s.inner; in++) {
            int64_t base = o * s.D * s.inner + in;
            int32_t xmax = INT32_MIN;
            for (int64_t d = 0; d < s.D; d++) xmax = QR_MAX(xmax, qr_quant_geti(x, base + d * s.inner));
            int32_t adj = (sgn ? 127 : 255) - xmax;
            float sum = 0.0f;
            for (int64_t d = 0; d < s.D; d++) sum += table[(uint8_t)(adj + qr_quant_geti(x, base + d * s.inner))];
            for (int64_t d = 0; d < s.D; d++) {
                float t = table[(uint8_t)(adj + qr_quant_geti(x, base + d * s.inner))];
                float v = t * ys;
                QR_KERN_ROUNDED(v);
                float r = nearbyintf(v / sum);   /* >= 0; past 512 saturates to 255 below for any zero point */
                int32_t q = (int32_t)(r < 512.0f ? r : 512.0f) + zp;
                if (q > 255) q = 255;
                qr_quant_seti(y, base + d * s.inner, sgn ? (int8_t)(uint8_t)q : q);
            }
        }
    return QR_OK;
}

/* ==== table ============================================================================ */

static const QrOpDef qr_ops_contrib_int[] = {
    { "com.microsoft", "MatMulIntegerToFloat", 4, 7, 1, 1, qr__ci_mmitf_shape, qr__ci_mmitf_exec, QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "DynamicQuantizeMatMul", 3, 5, 1, 1, qr__ci_dqmm_shape, qr__ci_dqmm_exec, QR_OPF_WRITES_ALL, 0 },
    { "com.microsoft", "QLinearSoftmax", 4, 5, 1, 1, qr__ci_softmax_shape, qr__ci_softmax_exec, QR_OPF_WRITES_ALL, 1u << 2 },
};
