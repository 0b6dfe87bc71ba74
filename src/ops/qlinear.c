/* ops/qlinear — com.microsoft QLinear* ops (Add, Mul, Sigmoid, LeakyRelu, Concat, GlobalAveragePool,
 * AveragePool) and the internal DqGemm, QMaxPool and QRequantize. Shared helpers: ops/qdq.c (see its map). */

/* ==== com.microsoft elementwise: QLinearAdd, QLinearMul ============================== */

/* QLinearAdd / QLinearMul(A, A_scale, [A_zp], B, B_scale, [B_zp], C_scale, [C_zp]) with numpy
 * broadcasting; all parameters per-tensor, A and B of one 8-bit type. The internal ops take any
 * mix of 8/16-bit A, B and C (C's type is C_zero_point's). */
static QrStatus qr__ql_qlbin_shape(QrOpCtx *c) {
    const QrTensor *a = c->in[0], *b = qr_op_in(c, 3), *cz = qr_op_in(c, 7);
    bool wide = qr_op_q_is_int_op(c);
    if (!b) return qr_op_fail(c, QR_ERR_INVALID, "input B is required");
    if (wide ? !qr_quant_is_act(a->dtype) || !qr_quant_is_act(b->dtype) : !qr_quant_is_8bit(a->dtype) || a->dtype != b->dtype)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "A and B have types %s and %s (%s)", qr_dtype_name(a->dtype),
                          qr_dtype_name(b->dtype),
                          wide ? "int8/uint8/int16/uint16 expected" : "both int8 or both uint8 expected");
    static const char *const names[8] = { "A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale",
                                          "C_zero_point" };
    for (int i = 1; i < 8; i++) {
        if (i == 3) continue;
        if (i == 1 || i == 4 || i == 6) QR_TRY(qr_op_q_need_scale(c, i, names[i]));
        else if (i != 7 || !wide) QR_TRY(qr_op_q_need_zp_type(c, i, i == 5 ? b->dtype : a->dtype, names[i]));
        QR_TRY(qr_op_q_need_scalar(c, i, names[i]));
    }
    if (wide && cz && !qr_quant_is_act(cz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "C_zero_point has type %s", qr_dtype_name(cz->dtype));
    const QrTensor *ts[2] = { a, b };
    int rank;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr_op_broadcast(c, 2, ts, &rank, dims));
    return qr_op_set_out(c, 0, wide && cz ? cz->dtype : a->dtype, rank, dims);
}

/* Rounds half to even and saturates like cvtps2dq followed by packs/packus: out-of-range
 * and NaN floats become INT32_MIN first, i.e. the low end. */
static inline int32_t qr__ql_cvt_pack(float v, QrQuantRange r) {
    if (!(v >= -2147483648.0f && v < 2147483648.0f)) return r.lo;
    int32_t i = (int32_t)qr_quant_round_f32(v);
    return i < r.lo ? r.lo : i > r.hi ? r.hi : i;
}

enum { QR_QBIN_GENERAL, QR_QBIN_A_SCALAR, QR_QBIN_B_SCALAR };

/* Which of ORT's three broadcast loops (both spans, scalar A, scalar B) computes the output;
 * QLinearAdd rounds differently in them. A scalar input wins (A first); otherwise the innermost
 * output dim longer than 1 decides. */
static int qr__ql_bin_mode(const QrTensor *a, const QrTensor *b, const QrTensor *y) {
    if (a->numel == 1) return QR_QBIN_A_SCALAR;
    if (b->numel == 1) return QR_QBIN_B_SCALAR;
    for (int d = y->rank - 1; d >= 0; d--) {
        if (y->dims[d] == 1) continue;
        int da = d - (y->rank - a->rank), db = d - (y->rank - b->rank);
        if (da < 0 || a->dims[da] == 1) return QR_QBIN_A_SCALAR;
        if (db < 0 || b->dims[db] == 1) return QR_QBIN_B_SCALAR;
        return QR_QBIN_GENERAL;
    }
    return QR_QBIN_GENERAL;
}

/* The per-element float results of ORT's kernels (see qr__ql_qlbin_exec). */
typedef struct QrQBin {
    bool mul;
    int mode;
    float ra, rb, fixed;        /* add: ratios A/C, B/C and the folded constant */
    float ratio, zc;            /* mul: A*B/C and C's zero point */
    int32_t za, zb;
} QrQBin;

/* a * b rounded to float32 on its own: never contracted into an FMA with the following add,
 * whatever -ffp-contract and the target say, because ORT's SSE kernels round it separately. */
static inline float qr__ql_mul_rn(float a, float b) {
    float p = a * b;
    QR_KERN_ROUNDED(p);
    return p;
}

static inline float qr__ql_bin_value(const QrQBin *q, int32_t a, int32_t b) {
    if (q->mul) return qr__ql_mul_rn((float)((int64_t)(a - q->za) * (b - q->zb)), q->ratio) + q->zc;
    switch (q->mode) {
    case QR_QBIN_A_SCALAR: return fmaf((float)b, q->rb, q->fixed + qr__ql_mul_rn((float)a, q->ra));
    case QR_QBIN_B_SCALAR: return fmaf((float)a, q->ra, q->fixed + qr__ql_mul_rn((float)b, q->rb));
    default: return fmaf((float)a, q->ra, fmaf((float)b, q->rb, q->fixed));
    }
}

/* A QLinearAdd over same-shaped 8-bit tensors on qr_kern.q8_add, in chunks of `chunk` elements. */
typedef struct QrQBinJob {
    const QrTensor *a, *b;
    QrTensor *y;
    QrQ8AddParams p;
    int64_t chunk;
} QrQBinJob;

static void qr__ql_add_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrQBinJob *j = ctx;
    int64_t i0 = t * j->chunk, n = QR_MIN(j->chunk, j->y->numel - i0);
    qr_kern.q8_add(n, (const uint8_t *)j->a->data + i0, 1, (const uint8_t *)j->b->data + i0, 1, &j->p,
                   (uint8_t *)j->y->data + i0);
}

/* QLinearAdd follows MLAS's AVX2 kernel (qladd_avx2.cpp): ra = sA / sC, rb = sB / sC,
 * fixed = zC - (ra*zA + rb*zB); general: fma(a, ra, fma(b, rb, fixed)); a scalar operand s is
 * folded first (fixed + s*r) and the other added with one fma. QLinearMul follows qlmul.cpp:
 * (float)((a - zA)*(b - zB)) * (sA*sB/sC) + zC. Both then round half to even and saturate. */
static QrStatus qr__ql_qlbin_exec(QrOpCtx *c, bool mul) {
    qr_op_q_kern_ready();
    const QrTensor *a = c->in[0], *b = c->in[3];
    QrTensor *y = c->out[0];
    QrQBin q = { 0 };
    q.mul = mul;
    float sa = qr_op_q_scalar_f(c, 1), sb = qr_op_q_scalar_f(c, 4), sc = qr_op_q_scalar_f(c, 6);
    q.za = qr_op_q_scalar_zp(c, 2);
    q.zb = qr_op_q_scalar_zp(c, 5);
    int32_t zc = qr_op_q_scalar_zp(c, 7);
    q.ra = sa / sc;
    q.rb = sb / sc;
    q.fixed = (float)zc - (qr__ql_mul_rn(q.ra, (float)q.za) + qr__ql_mul_rn(q.rb, (float)q.zb));
    q.ratio = sa * sb / sc;
    q.zc = (float)zc;
    q.mode = qr__ql_bin_mode(a, b, y);
    QrQuantRange r;
    QR_TRY(qr_op_q_out_range(c, y->dtype, &r));
    int rank = y->rank;
    int64_t sta[QR_MAX_RANK], stb[QR_MAX_RANK], idx[QR_MAX_RANK] = { 0 };
    qr_broadcast_strides(a, rank, y->dims, sta);
    qr_broadcast_strides(b, rank, y->dims, stb);
    int64_t inner = rank ? y->dims[rank - 1] : 1, rows = inner ? y->numel / inner : 0;
    int64_t sa_in = rank ? sta[rank - 1] : 0, sb_in = rank ? stb[rank - 1] : 0, ia = 0, ib = 0;
    const bool k8 = !mul && qr_quant_is_8bit(a->dtype) && qr_quant_is_8bit(b->dtype) && qr_quant_is_8bit(y->dtype);
    QrQBinJob job = { .a = a, .b = b, .y = y };
    if (k8) job.p = (QrQ8AddParams){ q.ra, q.rb, q.fixed, q.mode, a->dtype == QR_DT_S8, b->dtype == QR_DT_S8, r.lo, r.hi };
    if (k8 && a->numel == y->numel && b->numel == y->numel) {   /* no broadcasting: one span, split over the pool */
        job.chunk = 1 << 13;
        int64_t nt = (y->numel + job.chunk - 1) / job.chunk;
        if (nt > 1) qr_pool_for(nt, qr__ql_add_task, &job);
        else qr__ql_add_task(&job, 0, 0);
        return QR_OK;
    }
    for (int64_t row = 0; k8 && row < rows; row++) {
        qr_kern.q8_add(inner, (const uint8_t *)a->data + ia, sa_in, (const uint8_t *)b->data + ib, sb_in, &job.p,
                       (uint8_t *)y->data + row * inner);
        for (int d = rank - 2; d >= 0; d--) {
            ia += sta[d];
            ib += stb[d];
            if (++idx[d] < y->dims[d]) break;
            ia -= sta[d] * y->dims[d];
            ib -= stb[d] * y->dims[d];
            idx[d] = 0;
        }
    }
    if (k8) return QR_OK;
    for (int64_t row = 0; row < rows; row++) {
        for (int64_t j = 0; j < inner; j++) {
            float v = qr__ql_bin_value(&q, qr_quant_geti(a, ia + j * sa_in), qr_quant_geti(b, ib + j * sb_in));
            qr_quant_seti(y, row * inner + j, qr__ql_cvt_pack(v, r));
        }
        for (int d = rank - 2; d >= 0; d--) {
            ia += sta[d];
            ib += stb[d];
            if (++idx[d] < y->dims[d]) break;
            ia -= sta[d] * y->dims[d];
            ib -= stb[d] * y->dims[d];
            idx[d] = 0;
        }
    }
    return QR_OK;
}

static QrStatus qr__ql_qladd_exec(QrOpCtx *c) { return qr__ql_qlbin_exec(c, false); }
static QrStatus qr__ql_qlmul_exec(QrOpCtx *c) { return qr__ql_qlbin_exec(c, true); }

/* ==== com.microsoft lookup-table ops: QLinearSigmoid, QLinearLeakyRelu ================ */

/* ORT builds a 256-entry table: dequantize every byte (x_scale * (x - x_zp)), apply f in
 * float32, quantize with MlasQuantizeLinear; the op is then a table lookup. */
typedef float (*QrQUnaryFn)(float v, float arg);

static void qr_op_build_table(uint8_t table[256], QrDType dt, float xs, int32_t xz, float ys, int32_t yz,
                                 QrQUnaryFn fn, float arg) {
    QrQuantRange r;
    qr_quant_range(dt, &r);
    for (int i = 0; i < 256; i++) {
        int32_t v = dt == QR_DT_S8 ? (int32_t)(int8_t)(uint8_t)i : i;
        float d = xs * (float)(v - xz);
        table[i] = (uint8_t)qr_quant_quantize_f32(fn ? fn(d, arg) : d, ys, yz, r);
    }
}

/* MLAS's logistic (MlasComputeLogisticF32KernelFma3): Eigen's rational approximation on
 * x clamped to [-18, 18], evaluated with fused multiply-adds, result clamped at 0. */
static float qr_op_logistic_f32(float x, float unused) {
    QR_UNUSED(unused);
    if (!(x >= -18.0f)) x = -18.0f;   /* vmaxps(lower, x): NaN takes the bound */
    if (x > 18.0f) x = 18.0f;
    float x2 = x * x;
    float p = fmaf(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
    p = fmaf(x2, p, 6.08574864600143e-05f);
    p = fmaf(x2, p, 8.51377133304701e-03f);
    p = fmaf(x2, p, 2.48287947061529e-01f);
    float q = fmaf(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
    q = fmaf(x2, q, 6.29106785017040e-06f);
    q = fmaf(x2, q, 1.70198817374094e-03f);
    q = fmaf(x2, q, 1.16817656904453e-01f);
    q = fmaf(x2, q, 9.93151921023180e-01f);
    p = x * p;
    float r = p / q + 0.5f;
    return r > 0.0f ? r : 0.0f;
}

static float qr__ql_leaky(float v, float alpha) { return v >= 0.0f ? v : alpha * v; }

static QrStatus qr__ql_qlunary_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    if (!qr_quant_is_8bit(x->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "X has type %s (int8/uint8 supported)", qr_dtype_name(x->dtype));
    QR_TRY(qr_op_q_need_scale(c, 1, "X_scale"));
    QR_TRY(qr_op_q_need_scale(c, 3, "Y_scale"));
    static const char *const names[5] = { "X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point" };
    for (int i = 1; i < 5; i++) QR_TRY(qr_op_q_need_scalar(c, i, names[i]));
    QR_TRY(qr_op_q_need_zp_type(c, 2, x->dtype, "X_zero_point"));
    QR_TRY(qr_op_q_need_zp_type(c, 4, x->dtype, "Y_zero_point"));
    return qr_op_set_out(c, 0, x->dtype, x->rank, x->dims);
}

static QrStatus qr__ql_qlunary_exec(QrOpCtx *c, QrQUnaryFn fn, float arg) {
    const QrTensor *x = c->in[0];
    uint8_t table[256];
    qr_op_build_table(table, x->dtype, qr_op_q_scalar_f(c, 1), qr_op_q_scalar_zp(c, 2), qr_op_q_scalar_f(c, 3),
                         qr_op_q_scalar_zp(c, 4), fn, arg);
    const uint8_t *px = x->data;
    uint8_t *py = c->out[0]->data;
    for (int64_t i = 0; i < x->numel; i++) py[i] = table[px[i]];
    return QR_OK;
}

static QrStatus qr__ql_qlsigmoid_exec(QrOpCtx *c) { return qr__ql_qlunary_exec(c, qr_op_logistic_f32, 0.0f); }
static QrStatus qr__ql_qlleaky_exec(QrOpCtx *c) {
    return qr__ql_qlunary_exec(c, qr__ql_leaky, qr_attr_float(c->node, "alpha", 0.01f));
}

/* ==== com.microsoft QLinearConcat =================================================== */

/* QLinearConcat(Y_scale, Y_zp, (X, X_scale, X_zp)...) with `axis`: inputs whose scale and
 * zero point equal Y's are copied, the others requantized through a 256-entry table. The internal
 * op takes 8/16-bit inputs of any mix and requantizes element by element with the table's formula
 * (quantize(x_scale * (x - x_zp)) with Y's parameters, clamped to the output range). */
static QrStatus qr__ql_qlconcat_check(QrOpCtx *c, int *axis, int64_t *dims) {
    if (c->n_in < 5 || (c->n_in - 2) % 3)
        return qr_op_fail(c, QR_ERR_INVALID, "expected Y_scale, Y_zero_point and (tensor, scale, zero point) triples, "
                          "got %d inputs", c->n_in);
    const QrTensor *yz = qr_op_in(c, 1);
    bool wide = qr_op_q_is_int_op(c);
    if (!yz) return qr_op_fail(c, QR_ERR_INVALID, "Y_zero_point is required");
    if (!qr_op_q_ok_act(c, yz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "Y_zero_point has type %s (%s)", qr_dtype_name(yz->dtype),
                          qr_op_q_types_msg(c));
    QR_TRY(qr_op_q_need_scale(c, 0, "Y_scale"));
    QR_TRY(qr_op_q_need_scalar(c, 0, "Y_scale"));
    QR_TRY(qr_op_q_need_scalar(c, 1, "Y_zero_point"));
    if (!qr_node_attr(c->node, "axis")) return qr_op_fail(c, QR_ERR_INVALID, "attribute axis is required");
    const QrTensor *first = NULL;
    for (int i = 2; i < c->n_in; i += 3) {
        const QrTensor *t = qr_op_in(c, i);
        if (!t) return qr_op_fail(c, QR_ERR_INVALID, "input %d (tensor) is required", i);
        if (wide ? !qr_quant_is_act(t->dtype) : t->dtype != yz->dtype)
            return qr_op_fail(c, QR_ERR_INVALID, "input %d has type %s, expected %s", i, qr_dtype_name(t->dtype),
                              wide ? "int8/uint8/int16/uint16" : qr_dtype_name(yz->dtype));
        QR_TRY(qr_op_q_need_scale(c, i + 1, "scale"));
        QR_TRY(qr_op_q_need_scalar(c, i + 1, "scale"));
        QR_TRY(qr_op_q_need_scalar(c, i + 2, "zero point"));
        QR_TRY(qr_op_q_need_zp_type(c, i + 2, t->dtype, "zero point"));
        if (!first) {
            first = t;
            QR_TRY(qr_op_axis(c, qr_attr_int(c->node, "axis", 0), t->rank, axis));
            if (t->rank == 0) return qr_op_fail(c, QR_ERR_SHAPE, "cannot concatenate scalars");
            for (int d = 0; d < t->rank; d++) dims[d] = t->dims[d];
            continue;
        }
        bool ok = t->rank == first->rank;
        for (int d = 0; ok && d < t->rank; d++) ok = d == *axis || t->dims[d] == first->dims[d];
        if (!ok) {
            char s1[128], s2[128];
            return qr_op_fail(c, QR_ERR_SHAPE, "input %d has shape %s, not concatenable with %s on axis %d", i,
                              qr_shape_str_brackets(s1, sizeof s1, t->rank, t->dims),
                              qr_shape_str_brackets(s2, sizeof s2, first->rank, first->dims), *axis);
        }
        dims[*axis] += t->dims[*axis];
    }
    return QR_OK;
}

static QrStatus qr__ql_qlconcat_shape(QrOpCtx *c) {
    int axis;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr__ql_qlconcat_check(c, &axis, dims));
    return qr_op_set_out(c, 0, c->in[1]->dtype, c->in[2]->rank, dims);
}

static QrStatus qr__ql_qlconcat_exec(QrOpCtx *c) {
    int axis;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr__ql_qlconcat_check(c, &axis, dims));
    QrTensor *y = c->out[0];
    int rank = y->rank;
    int64_t outer = 1, after = 1;
    for (int d = 0; d < axis; d++) outer *= y->dims[d];
    for (int d = axis + 1; d < rank; d++) after *= y->dims[d];
    int64_t ypitch = y->dims[axis] * after, yoff = 0;
    float ys = qr_op_q_scalar_f(c, 0);
    int32_t yz = qr_op_q_scalar_zp(c, 1);
    if (qr_op_q_is_int_op(c)) {
        QrQuantRange r;
        QR_TRY(qr_op_q_out_range(c, y->dtype, &r));
        for (int i = 2; i < c->n_in; i += 3) {
            const QrTensor *t = c->in[i];
            float xs = qr_op_q_scalar_f(c, i + 1);
            int32_t xz = qr_op_q_scalar_zp(c, i + 2);
            int64_t pitch = t->dims[axis] * after;
            for (int64_t o = 0; o < outer; o++)
                for (int64_t j = 0; j < pitch; j++) {
                    float d = xs * (float)(qr_quant_geti(t, o * pitch + j) - xz);
                    qr_quant_seti(y, o * ypitch + yoff + j, qr_quant_quantize_f32(d, ys, yz, r));
                }
            yoff += pitch;
        }
        return QR_OK;
    }
    uint8_t table[256];
    for (int i = 2; i < c->n_in; i += 3) {
        const QrTensor *t = c->in[i];
        float xs = qr_op_q_scalar_f(c, i + 1);
        int32_t xz = qr_op_q_scalar_zp(c, i + 2);
        bool copy = xs == ys && xz == yz;
        if (!copy) qr_op_build_table(table, t->dtype, xs, xz, ys, yz, NULL, 0.0f);
        int64_t pitch = t->dims[axis] * after;
        const uint8_t *src = t->data;
        uint8_t *dst = (uint8_t *)y->data + yoff;
        for (int64_t o = 0; o < outer; o++, src += pitch, dst += ypitch) {
            if (copy) memcpy(dst, src, (size_t)pitch);
            else for (int64_t j = 0; j < pitch; j++) dst[j] = table[src[j]];
        }
        yoff += pitch;
    }
    return QR_OK;
}

/* ==== com.microsoft pooling: QLinearGlobalAveragePool, QLinearAveragePool ============= */

/* Shared checks of the 5 per-tensor pool inputs (X, x_scale, [x_zp], y_scale, [y_zp]); `spatial`
 * requires rank >= 3. Standard ops: X and Y of one 8-bit type; internal ops: any 8/16-bit types. */
static QrStatus qr__ql_pool_params(const QrOpCtx *c, bool spatial) {
    const QrTensor *x = c->in[0], *yz = qr_op_in(c, 4);
    bool wide = qr_op_q_is_int_op(c);
    if (!qr_op_q_ok_act(c, x->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "X has type %s (%s)", qr_dtype_name(x->dtype), qr_op_q_types_msg(c));
    if (spatial && x->rank < 3)
        return qr_op_fail(c, QR_ERR_SHAPE, "X must have rank >= 3 (N, C, spatial...), got %d", x->rank);
    QR_TRY(qr_op_q_need_scale(c, 1, "x_scale"));
    QR_TRY(qr_op_q_need_scale(c, 3, "y_scale"));
    static const char *const names[5] = { "X", "x_scale", "x_zero_point", "y_scale", "y_zero_point" };
    for (int i = 1; i < 5; i++) QR_TRY(qr_op_q_need_scalar(c, i, names[i]));
    QR_TRY(qr_op_q_need_zp_type(c, 2, x->dtype, "x_zero_point"));
    if (wide && yz && !qr_quant_is_act(yz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "y_zero_point has type %s", qr_dtype_name(yz->dtype));
    return wide ? QR_OK : qr_op_q_need_zp_type(c, 4, x->dtype, "y_zero_point");
}

/* Output type of a pool-like op: X's, or y_zero_point's for the internal ops. */
static QrDType qr__ql_pool_out_type(const QrOpCtx *c) {
    const QrTensor *yz = qr_op_in(c, 4);
    return qr_op_q_is_int_op(c) && yz ? yz->dtype : c->in[0]->dtype;
}

/* QLinearGlobalAveragePool (channels_last): per (n, c), acc = sum(x) - x_zp * image_size
 * (int32) requantized with x_scale / (y_scale * image_size), as MLAS does. 16-bit inputs
 * (internal op) sum in int64. */
static QrStatus qr__ql_qlgap_shape(QrOpCtx *c) {
    QR_TRY(qr__ql_pool_params(c, true));
    const QrTensor *x = c->in[0];
    bool nhwc = qr_attr_int(c->node, "channels_last", 0) != 0;
    int64_t d[QR_MAX_RANK];
    for (int i = 0; i < x->rank; i++) d[i] = x->dims[i];
    for (int i = nhwc ? 1 : 2; i < (nhwc ? x->rank - 1 : x->rank); i++) d[i] = 1;
    return qr_op_set_out(c, 0, qr__ql_pool_out_type(c), x->rank, d);
}

static QrStatus qr__ql_qlgap_exec(QrOpCtx *c) {
    QR_TRY(qr__ql_pool_params(c, true));
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    bool nhwc = qr_attr_int(c->node, "channels_last", 0) != 0;
    int64_t N = x->dims[0], C = nhwc ? x->dims[x->rank - 1] : x->dims[1], img = 1;
    for (int i = nhwc ? 1 : 2; i < (nhwc ? x->rank - 1 : x->rank); i++) img *= x->dims[i];
    if (img == 0 && N * C != 0) return qr_op_fail(c, QR_ERR_SHAPE, "cannot average over an empty spatial extent");
    if (img >= ((int64_t)1 << 24))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "image size %lld is too large (ORT's limit is 2^24)", (long long)img);
    float mult = qr_op_q_scalar_f(c, 1) / (qr_op_q_scalar_f(c, 3) * (float)img);
    int32_t xz = qr_op_q_scalar_zp(c, 2), yz = qr_op_q_scalar_zp(c, 4);
    QrQuantRange r;
    QR_TRY(qr_op_q_out_range(c, y->dtype, &r));
    bool wide = !qr_quant_is_8bit(x->dtype);
    uint32_t bias = (uint32_t)-(int64_t)xz * (uint32_t)img;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            int64_t x0 = nhwc ? n * img * C + ch : (n * C + ch) * img, xs = nhwc ? C : 1;
            if (wide) {     /* sum of (x - x_zp) in int64: 65535 * 2^24 does not fit int32 */
                int64_t acc = 0;
                for (int64_t p = 0; p < img; p++) acc += qr_quant_geti(x, x0 + p * xs) - xz;
                qr_quant_seti(y, n * C + ch, qr_quant_requantize_s64(acc, mult, yz, r));
                continue;
            }
            uint32_t acc = bias;
            for (int64_t p = 0; p < img; p++) acc += (uint32_t)qr_quant_geti(x, x0 + p * xs);
            qr_quant_seti(y, n * C + ch, qr_quant_requantize((int32_t)acc, mult, yz, r));
        }
    return QR_OK;
}

/* Pool geometry in NCHW order (channels_last inputs are described the same way). */
typedef struct QrQPool {
    int nsp;
    int64_t N, C;
    int64_t in[QR_MAX_RANK], out[QR_MAX_RANK], k[QR_MAX_RANK], st[QR_MAX_RANK], dl[QR_MAX_RANK], pb[QR_MAX_RANK];
    int64_t pe[QR_MAX_RANK];   /* end pads (explicit, or what auto_pad adds) */
    int64_t in_sz, out_sz, k_sz;
    bool nhwc, include_pad, dilated;
} QrQPool;

/* Reads the pool attributes (kernel_shape required; strides, pads, dilations, auto_pad,
 * ceil_mode, channels_last, count_include_pad) as ORT's PoolAttributes does. */
static QrStatus qr__ql_pool_geom(QrOpCtx *c, bool allow_dilation, QrQPool *g) {
    QR_TRY(qr__ql_pool_params(c, true));
    const QrTensor *x = c->in[0];
    memset(g, 0, sizeof *g);
    g->nhwc = qr_attr_int(c->node, "channels_last", 0) != 0;
    g->include_pad = qr_attr_int(c->node, "count_include_pad", 0) != 0;
    int64_t xd[QR_MAX_RANK], pads[2 * QR_MAX_RANK];
    qr_op_q_nchw_dims(x, g->nhwc, xd);
    g->nsp = x->rank - 2;
    g->N = xd[0];
    g->C = xd[1];
    const int64_t *ks;
    if (qr_attr_ints(c->node, "kernel_shape", &ks) != g->nsp)
        return qr_op_fail(c, QR_ERR_INVALID, "kernel_shape must have %d values", g->nsp);
    QR_TRY(qr_op_q_ints_attr(c, "kernel_shape", g->nsp, 1, 1, g->k));
    QR_TRY(qr_op_q_ints_attr(c, "strides", g->nsp, 1, 1, g->st));
    QR_TRY(qr_op_q_ints_attr(c, "pads", 2 * g->nsp, 0, 0, pads));
    QR_TRY(qr_op_q_ints_attr(c, "dilations", g->nsp, 1, 1, g->dl));
    for (int i = 0; i < g->nsp && !allow_dilation; i++)
        if (g->dl[i] != 1) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "dilations other than 1 are not supported");
    bool ceil_mode = qr_attr_int(c->node, "ceil_mode", 0) != 0;
    const char *ap = qr_attr_str(c->node, "auto_pad", "NOTSET");
    g->in_sz = g->out_sz = g->k_sz = 1;
    for (int i = 0; i < g->nsp; i++) {
        g->in[i] = xd[2 + i];
        g->pb[i] = pads[i];
        QR_TRY(qr_op_q_out_dim(c, ap, g->in[i], g->k[i], g->st[i], g->dl[i], &g->pb[i], pads[g->nsp + i], ceil_mode,
                             &g->out[i]));
        g->pe[i] = pads[g->nsp + i];
        if (strcmp(ap, "NOTSET") != 0)   /* auto_pad: the padded extent is in + total pad */
            g->pe[i] = QR_MAX(0, ((g->in[i] + g->st[i] - 1) / g->st[i] - 1) * g->st[i] + (g->k[i] - 1) * g->dl[i] + 1 -
                                     g->in[i]) - g->pb[i];
        if (!strcmp(ap, "VALID")) g->pe[i] = 0;
        g->dilated = g->dilated || g->dl[i] != 1;
        g->in_sz *= g->in[i];
        if (qr_mul_overflow_i64(g->out_sz, g->out[i], &g->out_sz) || qr_mul_overflow_i64(g->k_sz, g->k[i], &g->k_sz))
            return qr_op_fail(c, QR_ERR_SHAPE, "the output or kernel size overflows");
    }
    /* only the taps inside x are visited (qr__ql_pool_taps, the q8 kernels) */
    double taps = 1, pos = (double)g->N * (double)g->C * (double)g->out_sz;
    for (int i = 0; i < g->nsp; i++) taps *= (double)QR_MIN(g->k[i], g->in[i]);
    char what[160];
    snprintf(what, sizeof what, "%.3g output positions x %.3g taps inside the input", pos, taps);
    return qr_op_check_work(c, pos * taps, what);
}

static QrStatus qr__ql_pool_shape(QrOpCtx *c, bool allow_dilation) {
    QrQPool g;
    QR_TRY(qr__ql_pool_geom(c, allow_dilation, &g));
    int64_t d[QR_MAX_RANK];
    d[0] = g.N;
    d[g.nhwc ? g.nsp + 1 : 1] = g.C;
    for (int i = 0; i < g.nsp; i++) d[(g.nhwc ? 1 : 2) + i] = g.out[i];
    return qr_op_set_out(c, 0, qr__ql_pool_out_type(c), g.nsp + 2, d);
}

static QrStatus qr__ql_qlavgpool_shape(QrOpCtx *c) { return qr__ql_pool_shape(c, true); }
static QrStatus qr__ql_qmaxpool_shape(QrOpCtx *c) { return qr__ql_pool_shape(c, true); }

/* Visits the taps of output position oidx (row-major over the window, dilation d, taps outside
 * the input skipped) and returns their count; fn(user, flat spatial input index) per tap. */
typedef void (*QrQTapFn)(void *user, int64_t sp);
static int64_t qr__ql_pool_taps(const QrQPool *g, const int64_t *oidx, QrQTapFn fn, void *user) {
    int ns = g->nsp;
    int64_t lo[QR_MAX_RANK], hi[QR_MAX_RANK], s0[QR_MAX_RANK], cnt = 1;
    for (int d = 0; d < ns; d++) {   /* window taps j in [lo, hi): input index s0 + j * dl inside [0, in) */
        s0[d] = oidx[d] * g->st[d] - g->pb[d];
        int64_t dl = g->dl[d];
        lo[d] = s0[d] >= 0 ? 0 : (-s0[d] + dl - 1) / dl;
        hi[d] = g->in[d] - 1 - s0[d] < 0 ? 0 : QR_MIN(g->k[d], (g->in[d] - 1 - s0[d]) / dl + 1);
        cnt *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
    }
    if (cnt <= 0) return 0;
    int64_t t[QR_MAX_RANK];
    for (int d = 0; d < ns; d++) t[d] = lo[d];
    for (int64_t k = 0; k < cnt; k++) {
        int64_t sp = 0;
        for (int d = 0; d < ns; d++) sp = sp * g->in[d] + s0[d] + t[d] * g->dl[d];
        fn(user, sp);
        for (int d = ns - 1; d >= 0; d--) {
            if (++t[d] < hi[d]) break;
            t[d] = lo[d];
        }
    }
    return cnt;
}

/* Per (image, channel) state of a pool: where the plane starts, its element stride, and the
 * running float sum (average) or integer maximum (max). */
typedef struct QrQPoolAcc {
    const QrTensor *x;
    int64_t x0, xs;
    float xscale, sum;
    int32_t xz, best;
    bool any;
} QrQPoolAcc;

static void qr__ql_pool_tap_sum(void *user, int64_t sp) {
    QrQPoolAcc *a = user;
    a->sum += a->xscale * (float)(qr_quant_geti(a->x, a->x0 + sp * a->xs) - a->xz);
}

static void qr__ql_pool_tap_max(void *user, int64_t sp) {
    QrQPoolAcc *a = user;
    int32_t v = qr_quant_geti(a->x, a->x0 + sp * a->xs);
    if (!a->any || v > a->best) a->best = v;
    a->any = true;
}

/* Calls emit(y index, accumulator) for every output of a pool. */
typedef void (*QrQPoolEmit)(QrOpCtx *c, int64_t yi, const QrQPoolAcc *a, int64_t taps, const void *user);
static void qr__ql_pool_run(QrOpCtx *c, const QrQPool *g, QrQTapFn tap, QrQPoolEmit emit, const void *user) {
    QrQPoolAcc a = { .x = c->in[0], .xscale = qr_op_q_scalar_f(c, 1), .xz = qr_op_q_scalar_zp(c, 2) };
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t ch = 0; ch < g->C; ch++) {
            a.x0 = g->nhwc ? n * g->in_sz * g->C + ch : (n * g->C + ch) * g->in_sz;
            a.xs = g->nhwc ? g->C : 1;
            int64_t oidx[QR_MAX_RANK] = { 0 };
            for (int64_t op = 0; op < g->out_sz; op++) {
                a.sum = 0.0f;
                a.any = false;
                int64_t taps = qr__ql_pool_taps(g, oidx, tap, &a);
                emit(c, g->nhwc ? (n * g->out_sz + op) * g->C + ch : (n * g->C + ch) * g->out_sz + op, &a, taps, user);
                for (int d = g->nsp - 1; d >= 0; d--) {
                    if (++oidx[d] < g->out[d]) break;
                    oidx[d] = 0;
                }
            }
        }
}

/* QLinearAveragePool: ORT dequantizes (x_scale * (x - x_zp)), sums each window in float32 in
 * row-major order (taps clipped to the input), divides by the tap count (kernel size with
 * count_include_pad) and quantizes with round_half_even(avg / y_scale + y_zp). */
typedef struct QrQAvgOut { float ys; int32_t yz; int64_t k_sz; bool include_pad; QrQuantRange r; const QrQPool *g; } QrQAvgOut;

/* With dilations (which ORT 1.30's QLinearAveragePool does not accept; ONNX AveragePool-19 has
 * them) count_include_pad counts the taps inside the input plus its pads, as AveragePool
 * defines it: the window clipped to [-pad_begin, in + pad_end) per dim. */
static int64_t qr__ql_pool_padded_taps(const QrQPool *g, int64_t yi) {
    int64_t op = g->nhwc ? (yi / g->C) % g->out_sz : yi % g->out_sz, cnt = 1;
    for (int d = g->nsp - 1; d >= 0; d--) {
        int64_t o = op % g->out[d], s0 = o * g->st[d] - g->pb[d], n = 0;
        op /= g->out[d];
        for (int64_t j = 0; j < g->k[d]; j++) {
            int64_t p = s0 + j * g->dl[d];
            n += p >= -g->pb[d] && p < g->in[d] + g->pe[d];
        }
        cnt *= n;
    }
    return cnt;
}

static void qr__ql_avgpool_emit(QrOpCtx *c, int64_t yi, const QrQPoolAcc *a, int64_t taps, const void *user) {
    const QrQAvgOut *o = user;
    int64_t div = !o->include_pad ? taps : o->g->dilated ? qr__ql_pool_padded_taps(o->g, yi) : o->k_sz;
    float avg = a->sum / (float)div;
    qr_quant_seti(c->out[0], yi, qr__ql_cvt_pack(avg / o->ys + (float)o->yz, o->r));
}

static QrStatus qr__ql_qlavgpool_exec(QrOpCtx *c) {
    QrQPool g;
    QR_TRY(qr__ql_pool_geom(c, true, &g));
    QrQAvgOut o = { qr_op_q_scalar_f(c, 3), qr_op_q_scalar_zp(c, 4), g.k_sz, g.include_pad, { 0, 0 }, &g };
    QR_TRY(qr_op_q_out_range(c, c->out[0]->dtype, &o.r));
    qr__ql_pool_run(c, &g, qr__ql_pool_tap_sum, qr__ql_avgpool_emit, &o);
    return QR_OK;
}

/* qreport.int.DqGemm(A, Bq, b_scale, [b_zp], [C]) with Gemm's attributes: Gemm(A,
 * DequantizeLinear(Bq, b_scale, b_zp), C) in float32 for an 8-bit Bq with one scale and zero
 * point, or one per row of Bq (N rows: transB, per-axis along axis 0) — a float layer whose
 * weight is quantized (a classifier after the last quantized activation), as the int-mode
 * lowering rewrites it. The bits are the float Gemm's on the dequantized weight: a batch of
 * one goes through qr_f32_gemv_m1t_q8 (the weight dequantized in registers: a quarter of the
 * bytes read), anything else dequantizes Bq first and runs the float Gemm, B counted as
 * ONNX Runtime counts a DequantizeLinear output (not an initializer). */
typedef struct QrQDqGemm { int64_t M, K, N; } QrQDqGemm;

/* The inputs' checks (no allocation): shared by the shape and the exec functions. */
static QrStatus qr__ql_dqgemm_check(QrOpCtx *c, QrQDqGemm *g) {
    const QrTensor *a = c->in[0], *b = c->in[1], *s = c->in[2], *z = qr_op_in(c, 3), *cc = qr_op_in(c, 4);
    if (!a || !b || !s) return qr_op_fail(c, QR_ERR_INVALID, "A, Bq and b_scale are required");
    if (!qr_quant_is_8bit(b->dtype) || b->rank != 2) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "Bq must be an 8-bit matrix");
    if (s->dtype != QR_DT_F32 || (s->numel != 1 && s->numel != b->dims[0]))
        return qr_op_fail(c, QR_ERR_SHAPE, "b_scale must be float32 with 1 or %lld values", (long long)b->dims[0]);
    if (z && (z->dtype != b->dtype || z->numel != s->numel))
        return qr_op_fail(c, QR_ERR_SHAPE, "b_zp must match Bq's type and b_scale's size");
    if (a->dtype != QR_DT_F32 || a->rank != 2) return qr_op_fail(c, QR_ERR_SHAPE, "A must be a float32 matrix");
    if (qr_attr_int(c->node, "transA", 0) || !qr_attr_int(c->node, "transB", 0) || b->dims[1] != a->dims[1])
        return qr_op_fail(c, QR_ERR_SHAPE, "A [M, K] times Bq [N, K] transposed expected");
    *g = (QrQDqGemm){ a->dims[0], a->dims[1], b->dims[0] };
    if (cc && (cc->dtype != QR_DT_F32 || cc->rank > 2 || (cc->numel != 1 && cc->numel != g->N && cc->numel != g->M * g->N)))
        return qr_op_fail(c, QR_ERR_SHAPE, "C does not broadcast to [M, N]");
    return QR_OK;
}

static QrStatus qr__ql_dqgemm_shape(QrOpCtx *c) {
    QrQDqGemm g;
    QR_TRY(qr__ql_dqgemm_check(c, &g));
    int64_t dims[2] = { g.M, g.N };
    return qr_op_set_out(c, 0, QR_DT_F32, 2, dims);
}

static QrStatus qr__ql_dqgemm_exec(QrOpCtx *c) {
    QrQDqGemm g;
    QR_TRY(qr__ql_dqgemm_check(c, &g));
    const QrTensor *a = c->in[0], *bq = c->in[1], *cc = qr_op_in(c, 4);
    const int64_t M = g.M, K = g.K, N = g.N, ss = c->in[2]->numel > 1 ? 1 : 0;
    const float *sc = c->in[2]->data;
    int32_t *zp;   /* the zero points as int32 (one 0 when absent: then per-tensor) */
    QR_TRY(qr_op_q_load_zps(c, 3, 1, &zp));
    const int64_t zs = qr_op_in(c, 3) ? ss : 0;
    const bool bs = qr_op_q_is_signed(bq->dtype);
    const float alpha = qr_attr_float(c->node, "alpha", 1.0f), beta = qr_attr_float(c->node, "beta", 1.0f);
    const bool c_first = cc && alpha == 1.0f && beta == 1.0f;
    float *Y = c->out[0]->data;
    if (M == 1 && (!cc || c_first)) {   /* the float Gemm's M=1 transposed-B path, B dequantized in registers */
        for (int64_t j = 0; c_first && j < N; j++) Y[j] = ((const float *)cc->data)[cc->numel == 1 ? 0 : j];
        if (N > 0) qr_f32_gemv_m1t_q8(N, K, a->data, bq->data, bs, K, sc, ss, zp, zs, Y, c_first);
        return QR_OK;
    }
    QrTensor bf = {0};   /* otherwise: B dequantized, then the float Gemm */
    QrStatus st = qr_tensor_set_shape(&bf, QR_DT_F32, 2, bq->dims);
    if (st == QR_OK) st = qr_tensor_alloc_data(&bf);
    for (int64_t n = 0; st == QR_OK && n < N; n++)
        qr_kern.q8_dequantize(K, (const unsigned char *)bq->data + n * K, bs, zp[n * zs], sc[n * ss], (float *)bf.data + n * K);
    const QrTensor *in[3] = { a, &bf, cc };
    QrOpCtx fc = *c;
    fc.in = in;
    fc.n_in = cc ? 3 : 2;
    if (st == QR_OK) st = qr_op_nn_gemm_f32_as(&fc, false);
    qr_tensor_free_data(&bf);
    return st;
}

/* qreport.int.QMaxPool(X, x_scale, [x_zp], y_scale, [y_zp]) with MaxPool's attributes: the
 * integer maximum of each window, requantized as DequantizeLinear -> QuantizeLinear would
 * (quantize(x_scale * (m - x_zp)) with y's parameters; an identity when they are equal) and
 * clamped to [qmin, qmax]. Quantization is monotone, so this equals DQ -> MaxPool -> Q exactly. */
typedef struct QrQReq { float xs, ys; int32_t xz, yz; QrQuantRange r; } QrQReq;

static inline int32_t qr__ql_requant1(const QrQReq *q, int32_t v) {
    return qr_quant_quantize_f32(q->xs * (float)(v - q->xz), q->ys, q->yz, q->r);
}

static QrStatus qr__ql_req_params(QrOpCtx *c, QrQReq *q) {
    q->xs = qr_op_q_scalar_f(c, 1);
    q->xz = qr_op_q_scalar_zp(c, 2);
    q->ys = qr_op_q_scalar_f(c, 3);
    q->yz = qr_op_q_scalar_zp(c, 4);
    return qr_op_q_out_range(c, c->out[0]->dtype, &q->r);
}

static void qr__ql_maxpool_emit(QrOpCtx *c, int64_t yi, const QrQPoolAcc *a, int64_t taps, const void *user) {
    const QrQReq *q = user;
    QR_UNUSED(taps);
    qr_quant_seti(c->out[0], yi, a->any ? qr__ql_requant1(q, a->best) : q->r.lo);
}

/* 2-D QMaxPool of 8-bit NCHW planes: qr_kern.q8_maxpool2d per plane into y, then the
 * requantization as a 256-entry table (quantization is a function of the byte). */
typedef struct QrQMaxJob {
    const QrQPool *g;
    const QrTensor *x;
    QrTensor *y;
    uint8_t table[256];
    bool identity;              /* table[v] == v: nothing to map (same parameters in and out) */
    int64_t per_task;
    unsigned char *slots;
    size_t slot_bytes;
} QrQMaxJob;

static void qr__ql_maxpool_task(void *ctx, int64_t t, int tid) {
    const QrQMaxJob *j = ctx;
    const QrQPool *g = j->g;
    const bool sgn = j->x->dtype == QR_DT_S8;
    for (int64_t i = t * j->per_task; i < QR_MIN(g->N * g->C, (t + 1) * j->per_task); i++) {
        QrQ8Win p = { (const uint8_t *)j->x->data + i * g->in_sz, sgn, 0, g->in[0], g->in[1], g->k[0], g->k[1],
                      g->st[0], g->st[1], g->dl[0], g->dl[1], g->pb[0], g->pb[1], g->out[0], g->out[1] };
        uint8_t *yp = (uint8_t *)j->y->data + i * g->out_sz;
        qr_kern.q8_maxpool2d(&p, yp, j->slots + (size_t)tid * j->slot_bytes);
        if (!j->identity) for (int64_t k = 0; k < g->out_sz; k++) yp[k] = j->table[yp[k]];
    }
}

static QrStatus qr__ql_qmaxpool_exec(QrOpCtx *c) {
    qr_op_q_kern_ready();
    QrQPool g;
    QrQReq q;
    QR_TRY(qr__ql_pool_geom(c, true, &g));
    QR_TRY(qr__ql_req_params(c, &q));
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    if (g.nsp == 2 && !g.nhwc && qr_quant_is_8bit(x->dtype) && qr_quant_is_8bit(y->dtype) && g.out_sz > 0) {
        QrQ8Win p = { NULL, x->dtype == QR_DT_S8, 0, g.in[0], g.in[1], g.k[0], g.k[1], g.st[0], g.st[1], g.dl[0],
                      g.dl[1], g.pb[0], g.pb[1], g.out[0], g.out[1] };
        if (qr_q8_win_covered(&p)) {
            QrQMaxJob *j;
            QR_TRY(qr_op_q_alloc(c, 1, sizeof *j, (void **)&j));
            *j = (QrQMaxJob){ .g = &g, .x = x, .y = y };
            j->identity = true;
            for (int v = 0; v < 256; v++) {
                j->table[v] = (uint8_t)qr__ql_requant1(&q, p.x_signed ? (int8_t)v : v);
                j->identity = j->identity && j->table[v] == v;
            }
            const int threads = qr_pool_threads();
            size_t tot = 0;
            qr_op_q_wadd(&tot, (int64_t)qr_q8_maxpool2d_scratch(&p), 1);
            j->slot_bytes = tot;
            size_t all = 0;
            if (tot != SIZE_MAX) qr_op_q_wadd(&all, (int64_t)tot, (size_t)threads);
            else all = SIZE_MAX;
            QR_TRY(qr_op_q_work(c, all, &j->slots));
            j->per_task = QR_MAX(1, (int64_t)(65536.0 / QR_MAX(1.0, (double)g.out_sz * (double)g.k_sz)));   /* k_sz may be ~2^62 */
            int64_t nt = (g.N * g.C + j->per_task - 1) / j->per_task;
            if (nt > 1) qr_pool_for(nt, qr__ql_maxpool_task, j);
            else if (nt == 1) qr__ql_maxpool_task(j, 0, 0);
            return QR_OK;
        }
    }
    qr__ql_pool_run(c, &g, qr__ql_pool_tap_max, qr__ql_maxpool_emit, &q);
    return QR_OK;
}

/* qreport.int.QRequantize(X, x_scale, [x_zp], y_scale, [y_zp]): y = clamp(quantize(x_scale *
 * (x - x_zp)), qmin, qmax) element by element: DQ -> Relu/Clip -> Q (the clamp is the activation)
 * or a plain change of quantization parameters. */
static QrStatus qr__ql_qrequant_shape(QrOpCtx *c) {
    QR_TRY(qr__ql_pool_params(c, false));
    return qr_op_set_out(c, 0, qr__ql_pool_out_type(c), c->in[0]->rank, c->in[0]->dims);
}

static QrStatus qr__ql_qrequant_exec(QrOpCtx *c) {
    QrQReq q;
    QR_TRY(qr__ql_pool_params(c, false));
    QR_TRY(qr__ql_req_params(c, &q));
    const QrTensor *x = c->in[0];
    for (int64_t i = 0; i < x->numel; i++) qr_quant_seti(c->out[0], i, qr__ql_requant1(&q, qr_quant_geti(x, i)));
    return QR_OK;
}

/* ==== table ======================================================================= */

static const QrOpDef qr_ops_qlinear[] = {
    { "com.microsoft", "QLinearAdd", 7, 8, 1, 1, qr__ql_qlbin_shape, qr__ql_qladd_exec, 0, 1u << 2 | 1u << 5 },
    { "com.microsoft", "QLinearMul", 7, 8, 1, 1, qr__ql_qlbin_shape, qr__ql_qlmul_exec, 0, 1u << 2 | 1u << 5 },
    { "com.microsoft", "QLinearConcat", 5, -1, 1, 1, qr__ql_qlconcat_shape, qr__ql_qlconcat_exec, 0, 1u << 4 },
    { "com.microsoft", "QLinearGlobalAveragePool", 5, 5, 1, 1, qr__ql_qlgap_shape, qr__ql_qlgap_exec, 0, 1u << 2 | 1u << 4 },
    { "com.microsoft", "QLinearAveragePool", 4, 5, 1, 1, qr__ql_qlavgpool_shape, qr__ql_qlavgpool_exec, 0, 1u << 2 },
    { "com.microsoft", "QLinearSigmoid", 4, 5, 1, 1, qr__ql_qlunary_shape, qr__ql_qlsigmoid_exec, 0, 1u << 2 },
    { "com.microsoft", "QLinearLeakyRelu", 4, 5, 1, 1, qr__ql_qlunary_shape, qr__ql_qlleaky_exec, 0, 1u << 2 },
    { QR_QUANT_INT_DOMAIN, "QLinearAdd", 7, 8, 1, 1, qr__ql_qlbin_shape, qr__ql_qladd_exec, QR_OPF_WRITES_ALL, 0 },
    { QR_QUANT_INT_DOMAIN, "QLinearMul", 7, 8, 1, 1, qr__ql_qlbin_shape, qr__ql_qlmul_exec, QR_OPF_WRITES_ALL, 0 },
    { QR_QUANT_INT_DOMAIN, "QLinearConcat", 5, -1, 1, 1, qr__ql_qlconcat_shape, qr__ql_qlconcat_exec, 0, 0 },
    { QR_QUANT_INT_DOMAIN, "QLinearGlobalAveragePool", 5, 5, 1, 1, qr__ql_qlgap_shape, qr__ql_qlgap_exec, 0, 0 },
    { QR_QUANT_INT_DOMAIN, "QLinearAveragePool", 4, 5, 1, 1, qr__ql_qlavgpool_shape, qr__ql_qlavgpool_exec, 0, 0 },
    { QR_QUANT_INT_DOMAIN, "QMaxPool", 4, 5, 1, 1, qr__ql_qmaxpool_shape, qr__ql_qmaxpool_exec, QR_OPF_WRITES_ALL, 0 },
    { QR_QUANT_INT_DOMAIN, "DqGemm", 3, 5, 1, 1, qr__ql_dqgemm_shape, qr__ql_dqgemm_exec, QR_OPF_WRITES_ALL, 0 },
    { QR_QUANT_INT_DOMAIN, "QRequantize", 4, 5, 1, 1, qr__ql_qrequant_shape, qr__ql_qrequant_exec, 0, 0 },
};
