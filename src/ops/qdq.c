/* ops/quant — QuantizeLinear / DequantizeLinear and the QOperator / integer ops, in the
 * ai.onnx domain and as ONNX Runtime's com.microsoft contrib ops (what its quantizer emits).
 *
 * qreport compares a float model with its quantized twin, so the integers these ops produce
 * must be the ones ONNX Runtime produces. The arithmetic therefore mirrors ORT's CPU kernels
 * (MLAS on x86-64) step by step: float32 division / multiplication in the same order, clamp
 * in float, round half to even, then add the zero point. Where ORT's result depends on the
 * instruction set (QLinearAdd, QLinearSigmoid), the AVX2/FMA3 kernels are the reference.
 *
 * qreport's own integer ops (domain QR_QUANT_INT_DOMAIN, emitted by the int-mode lowering in
 * quant/lower.c) share these implementations: the same inputs, 8/16-bit operands, an output
 * clamp, accumulation in int32 (8-bit, or 16-bit when a bound proves it exact) or int64.
 * The integer work runs on the dispatch table (kern/kern.h): 8-bit 2-D convolutions with 8-bit
 * outputs on q8_conv_nhwc_rq where the level has it (the image written channels-last, the
 * weights packed once, by the lowering's input 9 or per call), other 8-bit products on
 * qr_kern.q8_gemm (convolutions with implicit im2col, requantization fused), depthwise
 * convolutions on q8_dwconv2d_rq (requantized in the same pass) or q8_dwconv2d, 16-bit ones on
 * q16_gemm (exact int64) and s64_requant; QuantizeLinear,
 * DequantizeLinear, QLinearAdd and QMaxPool on 8-bit data on their q8_* kernels. The kernels
 * are bit-exact with their __ref twins, so the integers do not depend on the CPU or the
 * thread count. Large work arrays come from a per-thread buffer (qr_op_q_work).
 *
 * The arithmetic itself (rounding, ranges, requantization, accumulator choice, element
 * access) is qarith/arith.c's. The quantized operators are split by family:
 *   ops/qdq.c     this file: per-axis/blocked indexing, parameter loading and checks shared
 *                   by every family, QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear;
 *   ops/q_matmul.c  QLinearMatMul, MatMulInteger, QGemm (and the integer operands and work
 *                   memory integer Conv shares);
 *   ops/q_conv.c    QLinearConv, ConvInteger;
 *   ops/qlinear.c   com.microsoft elementwise / lookup / concat / pooling ops, and the internal
 *                   DqGemm, QMaxPool, QRequantize.
 * Each file ends with the QrOpDef table of its family (ops/registry.c lists them). */

/* ==== core helpers (shared with integer execution paths) ========================== */

/* Where the scale / zero point of each element of x lives. x is viewed as
 * (outer, axis_len, inner) around the quantization axis; the parameter of element
 * (o, k, n) is at o*so + (k / block)*sk + n*sn:
 *   per-tensor  (one value):              outer = 1, axis_len = 1, inner = numel, strides 0;
 *   per-axis    (1-D of length D_axis):   so = 0, sk = 1, sn = 0, block = 1;
 *   blocked     (x's rank, axis dim ceil(D/B)): so = ceil(D/B)*inner, sk = inner, sn = 1. */
typedef struct QrQuantLayout {
    int64_t outer, axis_len, inner;
    int64_t block;
    int64_t so, sk, sn;
    int64_t count;            /* number of parameters (= scale numel) */
} QrQuantLayout;

static inline int64_t qr_op_layout_index(const QrQuantLayout *l, int64_t o, int64_t k, int64_t n) {
    return o * l->so + (k / l->block) * l->sk + n * l->sn;
}

/* Derives the layout from x's and the scale's shapes (block_size 0 = not blocked). A scale
 * with one element is per-tensor whatever its rank (ORT and the reference agree); axis is
 * only checked when it is used. Fails with QR_ERR_SHAPE / QR_ERR_INVALID naming the problem. */
static QrStatus qr_op_layout(const QrOpCtx *c, const QrTensor *x, const QrTensor *scale, int64_t axis,
                                int64_t block_size, QrQuantLayout *l) {
    char a[128], b[128];
    memset(l, 0, sizeof *l);
    l->block = 1;
    l->count = scale->numel;
    if (block_size < 0) return qr_op_fail(c, QR_ERR_INVALID, "block_size %lld must be >= 0", (long long)block_size);
    if (block_size == 0 && scale->numel == 1) {
        l->outer = 1;
        l->axis_len = 1;
        l->inner = x->numel;
        return QR_OK;
    }
    if (x->rank == 0)
        return qr_op_fail(c, QR_ERR_SHAPE, "a scalar input needs a single scale, got shape %s",
                          qr_shape_str_brackets(a, sizeof a, scale->rank, scale->dims));
    int ax = 0;
    QR_TRY(qr_op_axis(c, axis, x->rank, &ax));
    l->outer = 1;
    l->inner = 1;
    for (int d = 0; d < ax; d++) l->outer *= x->dims[d];
    for (int d = ax + 1; d < x->rank; d++) l->inner *= x->dims[d];
    l->axis_len = x->dims[ax];
    if (block_size == 0) {
        if (scale->rank != 1 || scale->dims[0] != x->dims[ax])
            return qr_op_fail(c, QR_ERR_SHAPE, "per-axis scale must be 1-D of length %lld (axis %d of %s), got %s",
                              (long long)x->dims[ax], ax, qr_shape_str_brackets(a, sizeof a, x->rank, x->dims),
                              qr_shape_str_brackets(b, sizeof b, scale->rank, scale->dims));
        l->sk = 1;
        return QR_OK;
    }
    int64_t nblk = x->dims[ax] ? 1 + (x->dims[ax] - 1) / block_size : 0;
    bool ok = scale->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++) ok = scale->dims[d] == (d == ax ? nblk : x->dims[d]);
    if (!ok)
        return qr_op_fail(c, QR_ERR_SHAPE, "blocked scale for input %s, axis %d, block_size %lld must have shape "
                          "equal to the input's with dim %d = %lld, got %s",
                          qr_shape_str_brackets(a, sizeof a, x->rank, x->dims), ax, (long long)block_size, ax,
                          (long long)nblk, qr_shape_str_brackets(b, sizeof b, scale->rank, scale->dims));
    l->block = block_size;
    l->so = nblk * l->inner;
    l->sk = l->inner;
    l->sn = 1;
    return QR_OK;
}

/* The dispatch table is filled before an op uses it: shape inference folds constant nodes
 * (weight QuantizeLinear / DequantizeLinear) by running them before any qr_run. Idempotent. */
static inline void qr_op_q_kern_ready(void) { (void)qr_kern_init(); }

/* ==== element access and parameter loading ======================================== */


/* ---- qreport's internal integer ops ------------------------------------------------ */


static bool qr_op_q_is_int_op(const QrOpCtx *c) { return strcmp(c->node->domain, QR_QUANT_INT_DOMAIN) == 0; }


/* Operand-type rule: the standard ops take int8/uint8 only; internal ops 8/16-bit (and 4-bit weights). */
static bool qr_op_q_ok_act(const QrOpCtx *c, QrDType dt) {
    return qr_op_q_is_int_op(c) ? qr_quant_is_act(dt) : qr_quant_is_8bit(dt);
}
static bool qr_op_q_ok_wt(const QrOpCtx *c, QrDType dt) {
    return qr_op_q_is_int_op(c) ? qr_quant_is_wt(dt) : qr_quant_is_8bit(dt);
}
static const char *qr_op_q_types_msg(const QrOpCtx *c) {
    return qr_op_q_is_int_op(c) ? "int8/uint8/int16/uint16 supported" : "int8/uint8 supported";
}

/* The output range of an op writing `dt`: the type's range, narrowed by the qmin / qmax
 * attributes of an internal op (a fused activation). Fails when they leave nothing. */
static QrStatus qr_op_q_out_range(const QrOpCtx *c, QrDType dt, QrQuantRange *r) {
    if (!qr_quant_range(dt, r)) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output type %s", qr_dtype_name(dt));
    if (!qr_op_q_is_int_op(c)) return QR_OK;
    int64_t lo = qr_attr_int(c->node, "qmin", r->lo), hi = qr_attr_int(c->node, "qmax", r->hi);
    lo = QR_MIN(QR_MAX(lo, (int64_t)r->lo), (int64_t)r->hi);
    hi = QR_MIN(QR_MAX(hi, (int64_t)r->lo), (int64_t)r->hi);
    if (lo > hi) return qr_op_fail(c, QR_ERR_INVALID, "qmin %lld > qmax %lld", (long long)lo, (long long)hi);
    r->lo = (int32_t)lo;
    r->hi = (int32_t)hi;
    return QR_OK;
}

static bool qr__qdq_is_scale_type(QrDType dt) {
    return dt == QR_DT_F32 || dt == QR_DT_F16 || dt == QR_DT_BF16 || dt == QR_DT_F64;
}

/* Temporary array from the node's scratch arena (zeroed); NULL-safe error on exhaustion. */
static QrStatus qr_op_q_alloc(QrOpCtx *c, size_t count, size_t elem, void **out) {
    *out = NULL;
    if (count > (size_t)QR_MAX_TENSOR_BYTES / elem)
        return qr_op_fail(c, QR_ERR_NOMEM, "needs %zu x %zu bytes of scratch memory, more than the tensor size limit",
                          count, elem);
    *out = qr_arena_array(c->scratch, count ? count : 1, elem);
    if (!*out)
        return qr_op_fail(c, QR_ERR_NOMEM, "cannot allocate %zu x %zu bytes of scratch memory", count, elem);
    return QR_OK;
}

/* Requires input i (a scale) to be present and of a float type. */
static QrStatus qr_op_q_need_scale(const QrOpCtx *c, int i, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (!t) return qr_op_fail(c, QR_ERR_INVALID, "input %d (%s) is required", i, what);
    if (!qr__qdq_is_scale_type(t->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input %d (%s) has type %s; scales must be float32, float16 "
                          "or bfloat16", i, what, qr_dtype_name(t->dtype));
    return QR_OK;
}

/* Requires input i (a per-tensor parameter) to hold exactly one element when present. */
static QrStatus qr_op_q_need_scalar(const QrOpCtx *c, int i, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (t && t->numel != 1) {
        char a[128];
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input %d (%s) must be a scalar (per-tensor), got shape %s", i,
                          what, qr_shape_str_brackets(a, sizeof a, t->rank, t->dims));
    }
    return QR_OK;
}

/* Requires the zero point at input i, when present, to have the type `dt`. */
static QrStatus qr_op_q_need_zp_type(const QrOpCtx *c, int i, QrDType dt, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (t && t->dtype != dt)
        return qr_op_fail(c, QR_ERR_INVALID, "input %d (%s) has type %s but must match the quantized type %s", i,
                          what, qr_dtype_name(t->dtype), qr_dtype_name(dt));
    return QR_OK;
}

/* Reads the scale at input i as float32 into scratch (*out has numel entries). */
static QrStatus qr_op_q_load_scales(QrOpCtx *c, int i, float **out) {
    const QrTensor *t = c->in[i];
    QR_TRY(qr_op_q_alloc(c, (size_t)t->numel, sizeof(float), (void **)out));
    for (int64_t k = 0; k < t->numel; k++) (*out)[k] = qr_quant_getf(t, k);
    return QR_OK;
}

/* Reads the zero point at input i as int32 into scratch; an absent zero point gives n zeros. */
static QrStatus qr_op_q_load_zps(QrOpCtx *c, int i, int64_t n, int32_t **out) {
    const QrTensor *t = qr_op_in(c, i);
    int64_t cnt = t ? t->numel : n;
    QR_TRY(qr_op_q_alloc(c, (size_t)cnt, sizeof(int32_t), (void **)out));
    for (int64_t k = 0; t && k < cnt; k++) (*out)[k] = qr_quant_geti(t, k);
    return QR_OK;
}

/* Scalar parameter helpers for the per-tensor contrib ops (absent zero point = 0). */
static float qr_op_q_scalar_f(const QrOpCtx *c, int i) { return qr_quant_getf(c->in[i], 0); }
static int32_t qr_op_q_scalar_zp(const QrOpCtx *c, int i) {
    const QrTensor *t = qr_op_in(c, i);
    return t && t->numel ? qr_quant_geti(t, 0) : 0;
}

/* ==== QuantizeLinear =============================================================== */

/* QuantizeLinear(x, y_scale, [y_zero_point]) -> y, opsets 10-25 and com.microsoft.
 * Output type: y_zero_point's, else the output_dtype attribute (21+), else uint8.
 * `precision` (23+): 0 / float32 divide in float32 (what ORT does for every input type);
 * float16 / bfloat16 round x, the scale and the quotient to that type.
 * Float8 / float4 outputs: y = cast(x / scale + zp) with no rounding to an integer; float8
 * honours `saturate` (19+, default 1) and adds zp only when it is nonzero (it is 0 in practice;
 * ORT and the reference ignore it, so -0 survives), float4 always adds it and saturates. */
typedef struct QrQQuant {
    QrQuantLayout l;
    QrQuantRange r;      /* integer outputs */
    QrDType out_dt;
    QrDType precision;   /* QR_DT_UNDEF = float32 */
    bool fl;             /* float8 / float4 output */
    bool saturate;
} QrQQuant;

static QrStatus qr__qdq_quantize_check(QrOpCtx *c, QrQQuant *q) {
    const QrTensor *x = c->in[0], *s = qr_op_in(c, 1), *zp = qr_op_in(c, 2);
    if (x->dtype != QR_DT_F32 && x->dtype != QR_DT_F16 && x->dtype != QR_DT_BF16 && x->dtype != QR_DT_S32)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input x has type %s (float32, float16, bfloat16 or int32 expected)",
                          qr_dtype_name(x->dtype));
    QR_TRY(qr_op_q_need_scale(c, 1, "y_scale"));
    int64_t od = qr_attr_int(c->node, "output_dtype", 0);
    if (zp) {
        if (od && od != (int64_t)zp->dtype)
            return qr_op_fail(c, QR_ERR_INVALID, "output_dtype %lld does not match y_zero_point's type %s",
                              (long long)od, qr_dtype_name(zp->dtype));
        q->out_dt = zp->dtype;
    } else {
        q->out_dt = od ? (QrDType)od : QR_DT_U8;
    }
    q->fl = qr_dtype_is_minifloat(q->out_dt) && q->out_dt != QR_DT_F8E8M0;
    q->saturate = qr_attr_int(c->node, "saturate", 1) != 0;
    if (!q->fl && !qr_quant_range(q->out_dt, &q->r))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output type %s is not supported (int8, uint8, int16, uint16, int4, "
                          "uint4, int2, uint2, float8e4m3fn(uz), float8e5m2(fnuz), float4e2m1 are)",
                          qr_dtype_name(q->out_dt));
    int64_t prec = qr_attr_int(c->node, "precision", 0);
    if (prec == 0 || prec == QR_DT_F32) q->precision = QR_DT_UNDEF;
    else if (prec == QR_DT_F16 || prec == QR_DT_BF16) q->precision = (QrDType)prec;
    else return qr_op_fail(c, QR_ERR_UNSUPPORTED, "precision %lld is not supported (float, float16, bfloat16 are)",
                           (long long)prec);
    QR_TRY(qr_op_layout(c, x, s, qr_attr_int(c->node, "axis", 1), qr_attr_int(c->node, "block_size", 0), &q->l));
    if (zp && zp->numel != s->numel)
        return qr_op_fail(c, QR_ERR_SHAPE, "y_zero_point has %lld elements but y_scale has %lld",
                          (long long)zp->numel, (long long)s->numel);
    return QR_OK;
}

static QrStatus qr__qdq_quantize_shape(QrOpCtx *c) {
    QrQQuant q;
    QR_TRY(qr__qdq_quantize_check(c, &q));
    return qr_op_set_out(c, 0, q.out_dt, c->in[0]->rank, c->in[0]->dims);
}

/* Rounds a float32 to float16 / bfloat16 precision (precision attribute). */
static inline float qr__qdq_to_prec(float v, QrDType p) {
    return p == QR_DT_F16 ? qr_f16_to_f32(qr_tensor_f32_to_f16(v)) : qr_bf16_to_f32(qr_tensor_f32_to_bf16(v));
}

/* Quantizes n consecutive elements of x from xoff with parameters s[k*ps], zp[k*ps]. */
/* A per-tensor float32 -> 8-bit QuantizeLinear on qr_kern.q8_quantize, in chunks over the pool. */
typedef struct QrQQuantJob {
    const float *x;
    uint8_t *y;
    int64_t n, chunk;
    float s;
    int32_t zp, lo, hi;
} QrQQuantJob;

static void qr__qdq_quantize_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrQQuantJob *j = ctx;
    const int64_t i0 = t * j->chunk;
    qr_kern.q8_quantize(QR_MIN(j->chunk, j->n - i0), j->x + i0, j->s, j->zp, j->lo, j->hi, j->y + i0);
}

static void qr__qdq_quantize_run(const QrTensor *x, QrTensor *y, int64_t off, int64_t n, const float *s,
                               const int32_t *zp, int64_t ps, const QrQQuant *q) {
    if (q->precision == QR_DT_UNDEF && x->dtype == QR_DT_F32 && ps == 0 &&
        (y->dtype == QR_DT_U8 || y->dtype == QR_DT_S8)) {
        QrQQuantJob j = { (const float *)x->data + off, (uint8_t *)y->data + off, n, 1 << 14, s[0], zp[0], q->r.lo, q->r.hi };
        const int64_t nt = (n + j.chunk - 1) / j.chunk;   /* elementwise: any split gives the same bytes */
        if (nt > 1) qr_pool_for(nt, qr__qdq_quantize_task, &j);
        else if (nt == 1) qr__qdq_quantize_task(&j, 0, 0);
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        float xv = qr_quant_getf(x, off + j), sv = s[j * ps];
        int32_t v;
        if (q->precision == QR_DT_UNDEF) v = qr_quant_quantize_f32(xv, sv, zp[j * ps], q->r);
        else {
            float d = qr__qdq_to_prec(qr__qdq_to_prec(xv, q->precision) / qr__qdq_to_prec(sv, q->precision), q->precision);
            v = qr_quant_saturate_round(d, zp[j * ps], q->r);
        }
        qr_quant_seti(y, off + j, v);
    }
}

/* Float8 / float4 output: n consecutive elements from off with parameters s[k*ps], zp[k*ps]. */
static void qr__qdq_quantize_run_float(const QrTensor *x, QrTensor *y, int64_t off, int64_t n, const float *s,
                                     const float *zp, int64_t ps, const QrQQuant *q) {
    uint8_t *py = (uint8_t *)y->data + off;
    for (int64_t j = 0; j < n; j++) {
        float xv = qr_quant_getf(x, off + j), sv = s[j * ps], z = zp[j * ps], v;
        if (q->precision == QR_DT_UNDEF) v = xv / sv;
        else v = qr__qdq_to_prec(qr__qdq_to_prec(xv, q->precision) / qr__qdq_to_prec(sv, q->precision), q->precision);
        if (z != 0 || y->dtype == QR_DT_F4E2M1) v += z;
        py[j] = qr_f64_to_f8(v, y->dtype, q->saturate);
    }
}

static QrStatus qr__qdq_quantize_exec(QrOpCtx *c) {
    qr_op_q_kern_ready();
    QrQQuant q;
    QR_TRY(qr__qdq_quantize_check(c, &q));
    float *s;
    int32_t *zp;
    QR_TRY(qr_op_q_load_scales(c, 1, &s));
    if (q.fl) {
        const QrTensor *zt = qr_op_in(c, 2);
        float *zf;
        QR_TRY(qr_op_q_alloc(c, (size_t)q.l.count, sizeof(float), (void **)&zf));
        for (int64_t k = 0; zt && k < q.l.count; k++) zf[k] = qr_quant_getf(zt, k);
        int64_t off = 0;
        for (int64_t o = 0; o < q.l.outer; o++)
            for (int64_t k = 0; k < q.l.axis_len; k++, off += q.l.inner) {
                int64_t p = qr_op_layout_index(&q.l, o, k, 0);
                qr__qdq_quantize_run_float(c->in[0], c->out[0], off, q.l.inner, s + p, zf + p, q.l.sn, &q);
            }
        return QR_OK;
    }
    QR_TRY(qr_op_q_load_zps(c, 2, q.l.count, &zp));
    const QrQuantLayout *l = &q.l;
    int64_t off = 0;
    for (int64_t o = 0; o < l->outer; o++)
        for (int64_t k = 0; k < l->axis_len; k++, off += l->inner) {
            int64_t p = qr_op_layout_index(l, o, k, 0);
            qr__qdq_quantize_run(c->in[0], c->out[0], off, l->inner, s + p, zp + p, l->sn, &q);
        }
    return QR_OK;
}

/* ==== DequantizeLinear ============================================================= */

/* DequantizeLinear(x, x_scale, [x_zero_point]) -> y = (x - zp) * scale, opsets 10-25 and
 * com.microsoft. (x - zp) is formed in integers, converted to float32 and multiplied by the
 * float32 scale, then rounded to the output type (ORT's DequantizeLinearApply). Output type:
 * the output_dtype attribute, else the scale's. int32 inputs normally have no zero point.
 * Float8 / float4 inputs: (decode(x) - decode(zp)) in float32, times the scale. */
static QrStatus qr__qdq_dequantize_check(QrOpCtx *c, QrQuantLayout *l, QrDType *out_dt) {
    const QrTensor *x = c->in[0], *s = qr_op_in(c, 1), *zp = qr_op_in(c, 2);
    QrQuantRange r;
    bool fl = qr_dtype_is_minifloat(x->dtype) && x->dtype != QR_DT_F8E8M0;
    if (!fl && !qr_quant_range(x->dtype, &r) && x->dtype != QR_DT_S32)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input x has type %s (int8, uint8, int16, uint16, int32, int4, "
                          "uint4, int2, uint2, float8e4m3fn(uz), float8e5m2(fnuz), float4e2m1 are supported)",
                          qr_dtype_name(x->dtype));
    QR_TRY(qr_op_q_need_scale(c, 1, "x_scale"));
    QR_TRY(qr_op_q_need_zp_type(c, 2, x->dtype, "x_zero_point"));
    int64_t od = qr_attr_int(c->node, "output_dtype", 0);
    *out_dt = od ? (QrDType)od : s->dtype;
    if (*out_dt != QR_DT_F32 && *out_dt != QR_DT_F16 && *out_dt != QR_DT_BF16)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output type %s is not supported (float32, float16, bfloat16 are)",
                          qr_dtype_name(*out_dt));
    QR_TRY(qr_op_layout(c, x, s, qr_attr_int(c->node, "axis", 1), qr_attr_int(c->node, "block_size", 0), l));
    if (zp && zp->numel != s->numel)
        return qr_op_fail(c, QR_ERR_SHAPE, "x_zero_point has %lld elements but x_scale has %lld",
                          (long long)zp->numel, (long long)s->numel);
    return QR_OK;
}

static QrStatus qr__qdq_dequantize_shape(QrOpCtx *c) {
    QrQuantLayout l;
    QrDType dt;
    QR_TRY(qr__qdq_dequantize_check(c, &l, &dt));
    return qr_op_set_out(c, 0, dt, c->in[0]->rank, c->in[0]->dims);
}

/* y[k] = (float)(x[k] - z[k]) * s[k] for k < n (8-bit x, signed when sg): one parameter per
 * element, a weight's row dequantized along its last axis. Sixteen elements at a time in
 * vector types of the compiler's (the loop gcc -O2 leaves scalar was most of a transformer twin's
 * dequantization), then one at a time: the same integer difference, conversion and single
 * multiply for every element, so the same bits. */
typedef int8_t QrQdqV16s8 __attribute__((vector_size(16)));
typedef uint8_t QrQdqV16u8 __attribute__((vector_size(16)));
typedef int32_t QrQdqV16s32 __attribute__((vector_size(64)));
typedef float QrQdqV16f __attribute__((vector_size(64)));
static void qr__qdq_dq_row8(const void *x, bool sg, const int32_t *z, const float *s, int64_t n, float *y) {
    const int8_t *xs = x;
    const uint8_t *xu = x;
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        QrQdqV16s32 d, zv;
        QrQdqV16f sv, yv;
        if (sg) {
            QrQdqV16s8 v;
            memcpy(&v, xs + k, sizeof v);
            d = __builtin_convertvector(v, QrQdqV16s32);
        } else {
            QrQdqV16u8 v;
            memcpy(&v, xu + k, sizeof v);
            d = __builtin_convertvector(v, QrQdqV16s32);
        }
        memcpy(&zv, z + k, sizeof zv);
        memcpy(&sv, s + k, sizeof sv);
        yv = __builtin_convertvector(d - zv, QrQdqV16f) * sv;
        memcpy(y + k, &yv, sizeof yv);
    }
    for (; k < n; k++) y[k] = (float)((sg ? (int32_t)xs[k] : (int32_t)xu[k]) - z[k]) * s[k];
}

/* An 8-bit -> float32 DequantizeLinear over the pool: task t dequantizes elements
 * [t * per_task, ...) of x, each with its own parameters as the layout gives them, by the same
 * arithmetic the serial loops use (qr_kern.q8_dequantize on a run sharing one parameter,
 * qr__qdq_dq_row8 on a run along a per-channel last axis, one element at a time in a block), so
 * the bits do not depend on the split: a weight of a Conv (per output channel) or of a layer whose
 * MatMul the executor did not fuse is spread over the threads instead of one. */
typedef struct QrQdqDqJob {
    const QrQuantLayout *l;
    const unsigned char *x;
    bool sg;
    const int32_t *zp;
    const float *s;
    float *y;
    int64_t n, per_task;
} QrQdqDqJob;

static void qr__qdq_dq_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrQdqDqJob *j = ctx;
    const QrQuantLayout *l = j->l;
    for (int64_t e = t * j->per_task, e1 = QR_MIN(j->n, e + j->per_task); e < e1;) {
        if (l->inner == 1) {   /* along the last axis: a run within row o */
            const int64_t o = e / l->axis_len, k = e % l->axis_len, len = QR_MIN(e1 - e, l->axis_len - k);
            const float *so = j->s + o * l->so;
            const int32_t *zo = j->zp + o * l->so;
            if (l->block == 1 && l->sk == 1) {
                qr__qdq_dq_row8(j->x + e, j->sg, zo + k, so + k, len, j->y + e);
            } else {
                for (int64_t i = 0; i < len; i++) {
                    const int64_t p = ((k + i) / l->block) * l->sk;
                    const int32_t q = j->sg ? (int32_t)((const int8_t *)j->x)[e + i] : (int32_t)j->x[e + i];
                    j->y[e + i] = (float)(q - zo[p]) * so[p];
                }
            }
            e += len;
            continue;
        }
        const int64_t row = e / l->inner, len = QR_MIN(e1 - e, (row + 1) * l->inner - e);   /* sn == 0 */
        const int64_t p = qr_op_layout_index(l, row / l->axis_len, row % l->axis_len, 0);
        qr_kern.q8_dequantize(len, j->x + e, j->sg, j->zp[p], j->s[p], j->y + e);
        e += len;
    }
}

/* Runs the job over the pool when it is large enough to be worth the hand-off (64K elements a
 * task), else in this thread. */
static void qr__qdq_dq_run(QrQdqDqJob *j) {
    const int64_t chunk = 65536;
    j->per_task = chunk;
    const int64_t n_tasks = (j->n + chunk - 1) / chunk;
    if (n_tasks < 2 || qr_pool_threads() < 2) {
        j->per_task = QR_MAX(j->n, 1);
        qr__qdq_dq_task(j, 0, 0);
        return;
    }
    qr_pool_for(n_tasks, qr__qdq_dq_task, j);
}

static QrStatus qr__qdq_dequantize_exec(QrOpCtx *c) {
    qr_op_q_kern_ready();
    QrQuantLayout l;
    QrDType dt;
    QR_TRY(qr__qdq_dequantize_check(c, &l, &dt));
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    float *s;
    int32_t *zp;
    QR_TRY(qr_op_q_load_scales(c, 1, &s));
    if (qr_dtype_is_minifloat(x->dtype)) {
        const QrTensor *zt = qr_op_in(c, 2);
        float *zf;
        QR_TRY(qr_op_q_alloc(c, (size_t)l.count, sizeof(float), (void **)&zf));
        for (int64_t k = 0; zt && k < l.count; k++) zf[k] = qr_quant_getf(zt, k);
        int64_t off = 0;
        for (int64_t o = 0; o < l.outer; o++)
            for (int64_t k = 0; k < l.axis_len; k++, off += l.inner) {
                int64_t p = qr_op_layout_index(&l, o, k, 0);
                for (int64_t j = 0; j < l.inner; j++)
                    qr_quant_setf(y, off + j, (qr_quant_getf(x, off + j) - zf[p + j * l.sn]) * s[p + j * l.sn]);
            }
        return QR_OK;
    }
    QR_TRY(qr_op_q_load_zps(c, 2, l.count, &zp));
    if (y->dtype == QR_DT_F32 && (x->dtype == QR_DT_U8 || x->dtype == QR_DT_S8) && (l.inner == 1 || l.sn == 0)) {
        /* per channel along the last axis (a MatMul weight [K, N], axis 1: one parameter per element,
         * a row at a time rather than the kernel on one element), or a run of elements sharing one
         * parameter (per tensor, a Conv's output channel): the same arithmetic as q8_dequantize ((x -
         * zp) in integers, converted, one multiply), over the pool */
        QrQdqDqJob j = { &l, x->data, x->dtype == QR_DT_S8, zp, s, y->data, x->numel, 0 };
        if (x->numel > 0) qr__qdq_dq_run(&j);
        return QR_OK;
    }
    int64_t off = 0;
    for (int64_t o = 0; o < l.outer; o++)
        for (int64_t k = 0; k < l.axis_len; k++, off += l.inner) {
            int64_t p = qr_op_layout_index(&l, o, k, 0);
            for (int64_t j = 0; j < l.inner; j++) {
                int64_t q = p + j * l.sn;
                /* int64 difference: int32 inputs with a (non-standard) zero point cannot overflow. */
                float d = (float)((int64_t)qr_quant_geti(x, off + j) - zp[q]);
                qr_quant_setf(y, off + j, d * s[q]);
            }
        }
    return QR_OK;
}

/* ==== DynamicQuantizeLinear ======================================================== */

/* DynamicQuantizeLinear(x: float32) -> (y: uint8, y_scale: float32 scalar, y_zero_point: uint8
 * scalar), as ORT computes it (GetQuantizationParameter): the range [min(0, min x), max(0, max x)]
 * gives scale = (max - min) / 255 (1.0 when the range is empty) and
 * zero_point = round_half_even(clamp(0 - min / scale, 0, 255)); y = QuantizeLinear(x).
 * NaNs are ignored by min/max. */
static QrStatus qr__qdq_dynquant_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    if (x->dtype != QR_DT_F32)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input x has type %s (float32 expected)", qr_dtype_name(x->dtype));
    QR_TRY(qr_op_set_out(c, 0, QR_DT_U8, x->rank, x->dims));
    QR_TRY(qr_op_set_out(c, 1, QR_DT_F32, 0, NULL));
    return qr_op_set_out(c, 2, QR_DT_U8, 0, NULL);
}

/* Computes DynamicQuantizeLinear's (scale, zero point) for n floats. */
static void qr_op_dynamic_params(const float *x, int64_t n, float *scale, int32_t *zp) {
    float mn = FLT_MAX, mx = -FLT_MAX;
    for (int64_t i = 0; i < n; i++) {
        if (x[i] < mn) mn = x[i];
        if (x[i] > mx) mx = x[i];
    }
    if (mn > 0.0f) mn = 0.0f;
    if (mx < 0.0f) mx = 0.0f;
    float s = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    float z = 0.0f - mn / s;
    if (!(z >= 0.0f)) z = 0.0f;
    if (z > 255.0f) z = 255.0f;
    *scale = s;
    *zp = (int32_t)qr_quant_round_f32(z);
}

static QrStatus qr__qdq_dynquant_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    const float *px = x->data;
    float s;
    int32_t z;
    qr_op_dynamic_params(px, x->numel, &s, &z);
    QrQuantRange r = { 0, 255 };
    if (c->n_out > 0 && c->out[0]) {
        uint8_t *py = c->out[0]->data;
        for (int64_t i = 0; i < x->numel; i++) py[i] = (uint8_t)qr_quant_quantize_f32(px[i], s, z, r);
    }
    if (c->n_out > 1 && c->out[1]) *(float *)c->out[1]->data = s;
    if (c->n_out > 2 && c->out[2]) *(uint8_t *)c->out[2]->data = (uint8_t)z;
    return QR_OK;
}

/* ==== table ======================================================================= */

static const QrOpDef qr_ops_qdq[] = {
    { "", "QuantizeLinear", 2, 3, 1, 1, qr__qdq_quantize_shape, qr__qdq_quantize_exec, 0, 0 },
    { "", "DequantizeLinear", 2, 3, 1, 1, qr__qdq_dequantize_shape, qr__qdq_dequantize_exec, 0, 0 },
    { "", "DynamicQuantizeLinear", 1, 1, 1, 3, qr__qdq_dynquant_shape, qr__qdq_dynquant_exec, 0, 0 },
    { "com.microsoft", "QuantizeLinear", 2, 3, 1, 1, qr__qdq_quantize_shape, qr__qdq_quantize_exec, 0, 0 },
    { "com.microsoft", "DequantizeLinear", 2, 3, 1, 1, qr__qdq_dequantize_shape, qr__qdq_dequantize_exec, 0, 0 },
};
