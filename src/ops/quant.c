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
 * thread count. Large work arrays come from a per-thread buffer (qr__q_work).
 *
 * Map: core helpers (rounding, ranges, requantization, accumulator choice, per-axis/blocked
 * indexing) · parameter loading · QuantizeLinear · DequantizeLinear · DynamicQuantizeLinear ·
 * batched integer matmul (QLinearMatMul, MatMulInteger, QGemm) · integer convolution
 * (QLinearConv, ConvInteger) · com.microsoft elementwise / pooling / concat / lookup ops ·
 * internal QMaxPool / QRequantize · table. */

/* ==== core helpers (shared with integer execution paths) ========================== */

/* Rounds to the nearest integer, ties to even: ONNX's rounding for quantization and what
 * x86 cvtps2dq / ARM fcvtns / nearbyintf give in the default floating-point environment.
 * qreport never changes the rounding mode, so rintf is exact. NaN and Inf pass through. */
static inline float qr_quant_round_f32(float v) { return rintf(v); }

/* Saturation range of a quantized integer type. */
typedef struct QrQuantRange { int32_t lo, hi; } QrQuantRange;

/* Sets *r to the range of an integer type QuantizeLinear can produce (int8, uint8, int16,
 * uint16, int4, uint4, int2, uint2; sub-byte values are stored one per byte). False for any
 * other type. */
static bool qr_quant_range(QrDType dt, QrQuantRange *r) {
    switch (dt) {
    case QR_DT_U8: *r = (QrQuantRange){ 0, 255 }; return true;
    case QR_DT_S8: *r = (QrQuantRange){ -128, 127 }; return true;
    case QR_DT_U16: *r = (QrQuantRange){ 0, 65535 }; return true;
    case QR_DT_S16: *r = (QrQuantRange){ -32768, 32767 }; return true;
    case QR_DT_U4: *r = (QrQuantRange){ 0, 15 }; return true;
    case QR_DT_S4: *r = (QrQuantRange){ -8, 7 }; return true;
    case QR_DT_U2: *r = (QrQuantRange){ 0, 3 }; return true;
    case QR_DT_S2: *r = (QrQuantRange){ -2, 1 }; return true;
    default: return false;
    }
}

/* Clamps v to [r.lo - zp, r.hi - zp] in float (NaN goes to the low end), rounds half to even
 * and adds zp. This is MLAS's order (clamp, cvtps2dq, add zero point); for finite values
 * it equals saturate(round(v) + zp), and it never converts an out-of-range float to int. */
static inline int32_t qr_quant_saturate_round(float v, int32_t zp, QrQuantRange r) {
    float lo = (float)(r.lo - zp), hi = (float)(r.hi - zp);
    if (!(v >= lo)) v = lo;
    if (v > hi) v = hi;
    return (int32_t)qr_quant_round_f32(v) + zp;
}

/* One QuantizeLinear element: saturate(round_half_even(x / scale) + zp), with a true float32
 * division (not a multiplication by the reciprocal), bit-exact with ORT's MlasQuantizeLinear. */
static inline int32_t qr_quant_quantize_f32(float x, float scale, int32_t zp, QrQuantRange r) {
    return qr_quant_saturate_round(x / scale, zp, r);
}

/* Requantizes an int32 accumulator: saturate(round_half_even((float)acc * mult) + zp), the
 * arithmetic of ORT's MlasRequantizeOutput (int32 -> float32, one float32 multiply). Any bias
 * must already be in acc (ORT adds it in int32 first). */
static inline int32_t qr_quant_requantize(int32_t acc, float mult, int32_t zp, QrQuantRange r) {
    return qr_quant_saturate_round((float)acc * mult, zp, r);
}

/* The same for an int64 accumulator (16-bit operands): (float)acc rounds to nearest even, then the
 * one float32 multiply. ORT has no 16-bit integer kernels; this is MLAS's arithmetic carried over. */
static inline int32_t qr_quant_requantize_s64(int64_t acc, float mult, int32_t zp, QrQuantRange r) {
    return qr_quant_saturate_round((float)acc * mult, zp, r);
}

/* The float32 requantization multiplier (s1 * s2) / s3, in the order ORT forms it for
 * QLinearMatMul (a_scale * b_scale / y_scale) and QLinearConv (x_scale * w_scale / y_scale). */
static inline float qr_quant_multiplier(float s1, float s2, float s3) { return s1 * s2 / s3; }

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

static inline int64_t qr_quant_layout_index(const QrQuantLayout *l, int64_t o, int64_t k, int64_t n) {
    return o * l->so + (k / l->block) * l->sk + n * l->sn;
}

/* Derives the layout from x's and the scale's shapes (block_size 0 = not blocked). A scale
 * with one element is per-tensor whatever its rank (ORT and the reference agree); axis is
 * only checked when it is used. Fails with QR_ERR_SHAPE / QR_ERR_INVALID naming the problem. */
static QrStatus qr_quant_layout(const QrOpCtx *c, const QrTensor *x, const QrTensor *scale, int64_t axis,
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
static inline void qr__q_kern_ready(void) { (void)qr_kern_init(); }

/* ==== element access and parameter loading ======================================== */

/* Element i of an integer tensor as int32 (all quantized storage types; int4/int2 unpacked). */
static inline int32_t qr__q_geti(const QrTensor *t, int64_t i) {
    switch (t->dtype) {
    case QR_DT_U8: case QR_DT_U4: case QR_DT_U2: return ((const uint8_t *)t->data)[i];
    case QR_DT_S8: case QR_DT_S4: case QR_DT_S2: return ((const int8_t *)t->data)[i];
    case QR_DT_U16: return ((const uint16_t *)t->data)[i];
    case QR_DT_S16: return ((const int16_t *)t->data)[i];
    case QR_DT_S32: return ((const int32_t *)t->data)[i];
    default: return (int32_t)qr_tensor_get_i64(t, i);
    }
}

static inline void qr__q_seti(QrTensor *t, int64_t i, int32_t v) {
    switch (t->dtype) {
    case QR_DT_U8: case QR_DT_U4: case QR_DT_U2: ((uint8_t *)t->data)[i] = (uint8_t)v; return;
    case QR_DT_S8: case QR_DT_S4: case QR_DT_S2: ((int8_t *)t->data)[i] = (int8_t)v; return;
    case QR_DT_U16: ((uint16_t *)t->data)[i] = (uint16_t)v; return;
    case QR_DT_S16: ((int16_t *)t->data)[i] = (int16_t)v; return;
    case QR_DT_S32: ((int32_t *)t->data)[i] = v; return;
    default: qr_tensor_set_i64(t, i, v);
    }
}

/* Element i as float32: float types convert exactly (f16/bf16) or round (f64), int32 rounds. */
static inline float qr__q_getf(const QrTensor *t, int64_t i) {
    switch (t->dtype) {
    case QR_DT_F32: return ((const float *)t->data)[i];
    case QR_DT_F16: return qr_f16_to_f32(((const uint16_t *)t->data)[i]);
    case QR_DT_BF16: return qr_bf16_to_f32(((const uint16_t *)t->data)[i]);
    case QR_DT_S32: return (float)((const int32_t *)t->data)[i];
    default: return (float)qr_tensor_get_f64(t, i);
    }
}

/* Stores a float32 result into a float tensor, rounding to nearest even for f16/bf16. */
static inline void qr__q_setf(QrTensor *t, int64_t i, float v) {
    switch (t->dtype) {
    case QR_DT_F32: ((float *)t->data)[i] = v; return;
    case QR_DT_F16: ((uint16_t *)t->data)[i] = qr_f32_to_f16(v); return;
    case QR_DT_BF16: ((uint16_t *)t->data)[i] = qr_f32_to_bf16(v); return;
    default: qr_tensor_set_f64(t, i, v);
    }
}

static bool qr__q_is_8bit(QrDType dt) { return dt == QR_DT_U8 || dt == QR_DT_S8; }

/* ---- qreport's internal integer ops ------------------------------------------------ */

/* The integer lowering (quant/lower.c) replaces DequantizeLinear -> op -> QuantizeLinear groups
 * by nodes of this domain. They take the inputs of the matching QLinear* / com.microsoft op and
 * widen it: 8- or 16-bit operands (int4 weights), mixed operand types, and an output clamp
 * (attributes qmin / qmax, the integer image of a fused Relu / Clip). With 8-bit operands they
 * compute exactly what the ONNX Runtime op computes. */
#define QR_QUANT_INT_DOMAIN "qreport.int"

static bool qr__q_is_int_op(const QrOpCtx *c) { return strcmp(c->node->domain, QR_QUANT_INT_DOMAIN) == 0; }

/* Activation types the internal ops read and write. */
static bool qr__q_is_act(QrDType dt) { return qr__q_is_8bit(dt) || dt == QR_DT_U16 || dt == QR_DT_S16; }
static bool qr__q_is_wt(QrDType dt) { return qr__q_is_act(dt) || dt == QR_DT_U4 || dt == QR_DT_S4; }

/* Operand-type rule: the standard ops take int8/uint8 only; internal ops 8/16-bit (and 4-bit weights). */
static bool qr__q_ok_act(const QrOpCtx *c, QrDType dt) {
    return qr__q_is_int_op(c) ? qr__q_is_act(dt) : qr__q_is_8bit(dt);
}
static bool qr__q_ok_wt(const QrOpCtx *c, QrDType dt) {
    return qr__q_is_int_op(c) ? qr__q_is_wt(dt) : qr__q_is_8bit(dt);
}
static const char *qr__q_types_msg(const QrOpCtx *c) {
    return qr__q_is_int_op(c) ? "int8/uint8/int16/uint16 supported" : "int8/uint8 supported";
}

/* The output range of an op writing `dt`: the type's range, narrowed by the qmin / qmax
 * attributes of an internal op (a fused activation). Fails when they leave nothing. */
static QrStatus qr__q_out_range(const QrOpCtx *c, QrDType dt, QrQuantRange *r) {
    if (!qr_quant_range(dt, r)) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output type %s", qr_dtype_name(dt));
    if (!qr__q_is_int_op(c)) return QR_OK;
    int64_t lo = qr_attr_int(c->node, "qmin", r->lo), hi = qr_attr_int(c->node, "qmax", r->hi);
    lo = QR_MIN(QR_MAX(lo, (int64_t)r->lo), (int64_t)r->hi);
    hi = QR_MIN(QR_MAX(hi, (int64_t)r->lo), (int64_t)r->hi);
    if (lo > hi) return qr_op_fail(c, QR_ERR_INVALID, "qmin %lld > qmax %lld", (long long)lo, (long long)hi);
    r->lo = (int32_t)lo;
    r->hi = (int32_t)hi;
    return QR_OK;
}

/* Largest |v - zp| over the values of integer type dt (the operand bound of an accumulation). */
static int64_t qr_quant_absmax(QrDType dt, int32_t zp) {
    QrQuantRange r;
    if (!qr_quant_range(dt, &r)) return INT32_MAX;
    return QR_MAX((int64_t)r.hi - zp, (int64_t)zp - r.lo);
}

/* True when every v - zp of type dt fits int16 (the operand type of the s32 kernels). */
static bool qr_quant_fits_s16(QrDType dt, int32_t zp) {
    QrQuantRange r;
    return qr_quant_range(dt, &r) && (int64_t)r.lo - zp >= INT16_MIN && (int64_t)r.hi - zp <= INT16_MAX;
}

/* How sum_k a_k * b_k accumulates (see QrQuantAcc): both operands 8-bit -> s32 wrapping, as ONNX
 * Runtime; otherwise s32 when the operands fit int16 and `bound` (the caller's bound on every partial
 * sum: max over outputs of amax * sum_k |b_k| + |bias|) is at most INT32_MAX, else s64. */
static QrQuantAcc qr_quant_acc_choose(bool both_8bit, bool fit_s16, int64_t bound) {
    if (both_8bit) return QR_QACC_S32;
    return fit_s16 && bound >= 0 && bound <= INT32_MAX ? QR_QACC_S32_PROVEN : QR_QACC_S64;
}

/* a * b + c saturated to [0, INT64_MAX] (bounds only grow; overflow means "too large"). */
static int64_t qr__q_bound_madd(int64_t a, int64_t b, int64_t c) {
    int64_t p;
    if (qr_mul_overflow_i64(a, b, &p) || p > INT64_MAX - c) return INT64_MAX;
    return p + c;
}

static bool qr__q_is_scale_type(QrDType dt) {
    return dt == QR_DT_F32 || dt == QR_DT_F16 || dt == QR_DT_BF16 || dt == QR_DT_F64;
}

/* Temporary array from the node's scratch arena (zeroed); NULL-safe error on exhaustion. */
static QrStatus qr__q_alloc(QrOpCtx *c, size_t count, size_t elem, void **out) {
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
static QrStatus qr__q_need_scale(const QrOpCtx *c, int i, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (!t) return qr_op_fail(c, QR_ERR_INVALID, "input %d (%s) is required", i, what);
    if (!qr__q_is_scale_type(t->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input %d (%s) has type %s; scales must be float32, float16 "
                          "or bfloat16", i, what, qr_dtype_name(t->dtype));
    return QR_OK;
}

/* Requires input i (a per-tensor parameter) to hold exactly one element when present. */
static QrStatus qr__q_need_scalar(const QrOpCtx *c, int i, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (t && t->numel != 1) {
        char a[128];
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input %d (%s) must be a scalar (per-tensor), got shape %s", i,
                          what, qr_shape_str_brackets(a, sizeof a, t->rank, t->dims));
    }
    return QR_OK;
}

/* Requires the zero point at input i, when present, to have the type `dt`. */
static QrStatus qr__q_need_zp_type(const QrOpCtx *c, int i, QrDType dt, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (t && t->dtype != dt)
        return qr_op_fail(c, QR_ERR_INVALID, "input %d (%s) has type %s but must match the quantized type %s", i,
                          what, qr_dtype_name(t->dtype), qr_dtype_name(dt));
    return QR_OK;
}

/* Reads the scale at input i as float32 into scratch (*out has numel entries). */
static QrStatus qr__q_load_scales(QrOpCtx *c, int i, float **out) {
    const QrTensor *t = c->in[i];
    QR_TRY(qr__q_alloc(c, (size_t)t->numel, sizeof(float), (void **)out));
    for (int64_t k = 0; k < t->numel; k++) (*out)[k] = qr__q_getf(t, k);
    return QR_OK;
}

/* Reads the zero point at input i as int32 into scratch; an absent zero point gives n zeros. */
static QrStatus qr__q_load_zps(QrOpCtx *c, int i, int64_t n, int32_t **out) {
    const QrTensor *t = qr_op_in(c, i);
    int64_t cnt = t ? t->numel : n;
    QR_TRY(qr__q_alloc(c, (size_t)cnt, sizeof(int32_t), (void **)out));
    for (int64_t k = 0; t && k < cnt; k++) (*out)[k] = qr__q_geti(t, k);
    return QR_OK;
}

/* Scalar parameter helpers for the per-tensor contrib ops (absent zero point = 0). */
static float qr__q_scalar_f(const QrOpCtx *c, int i) { return qr__q_getf(c->in[i], 0); }
static int32_t qr__q_scalar_zp(const QrOpCtx *c, int i) {
    const QrTensor *t = qr_op_in(c, i);
    return t && t->numel ? qr__q_geti(t, 0) : 0;
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

static QrStatus qr__q_quantize_check(QrOpCtx *c, QrQQuant *q) {
    const QrTensor *x = c->in[0], *s = qr_op_in(c, 1), *zp = qr_op_in(c, 2);
    if (x->dtype != QR_DT_F32 && x->dtype != QR_DT_F16 && x->dtype != QR_DT_BF16 && x->dtype != QR_DT_S32)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input x has type %s (float32, float16, bfloat16 or int32 expected)",
                          qr_dtype_name(x->dtype));
    QR_TRY(qr__q_need_scale(c, 1, "y_scale"));
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
    QR_TRY(qr_quant_layout(c, x, s, qr_attr_int(c->node, "axis", 1), qr_attr_int(c->node, "block_size", 0), &q->l));
    if (zp && zp->numel != s->numel)
        return qr_op_fail(c, QR_ERR_SHAPE, "y_zero_point has %lld elements but y_scale has %lld",
                          (long long)zp->numel, (long long)s->numel);
    return QR_OK;
}

static QrStatus qr__q_quantize_shape(QrOpCtx *c) {
    QrQQuant q;
    QR_TRY(qr__q_quantize_check(c, &q));
    return qr_op_set_out(c, 0, q.out_dt, c->in[0]->rank, c->in[0]->dims);
}

/* Rounds a float32 to float16 / bfloat16 precision (precision attribute). */
static inline float qr__q_to_prec(float v, QrDType p) {
    return p == QR_DT_F16 ? qr_f16_to_f32(qr_f32_to_f16(v)) : qr_bf16_to_f32(qr_f32_to_bf16(v));
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

static void qr__q_quantize_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrQQuantJob *j = ctx;
    const int64_t i0 = t * j->chunk;
    qr_kern.q8_quantize(QR_MIN(j->chunk, j->n - i0), j->x + i0, j->s, j->zp, j->lo, j->hi, j->y + i0);
}

static void qr__q_quantize_run(const QrTensor *x, QrTensor *y, int64_t off, int64_t n, const float *s,
                               const int32_t *zp, int64_t ps, const QrQQuant *q) {
    if (q->precision == QR_DT_UNDEF && x->dtype == QR_DT_F32 && ps == 0 &&
        (y->dtype == QR_DT_U8 || y->dtype == QR_DT_S8)) {
        QrQQuantJob j = { (const float *)x->data + off, (uint8_t *)y->data + off, n, 1 << 14, s[0], zp[0], q->r.lo, q->r.hi };
        const int64_t nt = (n + j.chunk - 1) / j.chunk;   /* elementwise: any split gives the same bytes */
        if (nt > 1) qr_pool_for(nt, qr__q_quantize_task, &j);
        else if (nt == 1) qr__q_quantize_task(&j, 0, 0);
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        float xv = qr__q_getf(x, off + j), sv = s[j * ps];
        int32_t v;
        if (q->precision == QR_DT_UNDEF) v = qr_quant_quantize_f32(xv, sv, zp[j * ps], q->r);
        else {
            float d = qr__q_to_prec(qr__q_to_prec(xv, q->precision) / qr__q_to_prec(sv, q->precision), q->precision);
            v = qr_quant_saturate_round(d, zp[j * ps], q->r);
        }
        qr__q_seti(y, off + j, v);
    }
}

/* Float8 / float4 output: n consecutive elements from off with parameters s[k*ps], zp[k*ps]. */
static void qr__q_quantize_run_float(const QrTensor *x, QrTensor *y, int64_t off, int64_t n, const float *s,
                                     const float *zp, int64_t ps, const QrQQuant *q) {
    uint8_t *py = (uint8_t *)y->data + off;
    for (int64_t j = 0; j < n; j++) {
        float xv = qr__q_getf(x, off + j), sv = s[j * ps], z = zp[j * ps], v;
        if (q->precision == QR_DT_UNDEF) v = xv / sv;
        else v = qr__q_to_prec(qr__q_to_prec(xv, q->precision) / qr__q_to_prec(sv, q->precision), q->precision);
        if (z != 0 || y->dtype == QR_DT_F4E2M1) v += z;
        py[j] = qr_f64_to_f8(v, y->dtype, q->saturate);
    }
}

static QrStatus qr__q_quantize_exec(QrOpCtx *c) {
    qr__q_kern_ready();
    QrQQuant q;
    QR_TRY(qr__q_quantize_check(c, &q));
    float *s;
    int32_t *zp;
    QR_TRY(qr__q_load_scales(c, 1, &s));
    if (q.fl) {
        const QrTensor *zt = qr_op_in(c, 2);
        float *zf;
        QR_TRY(qr__q_alloc(c, (size_t)q.l.count, sizeof(float), (void **)&zf));
        for (int64_t k = 0; zt && k < q.l.count; k++) zf[k] = qr__q_getf(zt, k);
        int64_t off = 0;
        for (int64_t o = 0; o < q.l.outer; o++)
            for (int64_t k = 0; k < q.l.axis_len; k++, off += q.l.inner) {
                int64_t p = qr_quant_layout_index(&q.l, o, k, 0);
                qr__q_quantize_run_float(c->in[0], c->out[0], off, q.l.inner, s + p, zf + p, q.l.sn, &q);
            }
        return QR_OK;
    }
    QR_TRY(qr__q_load_zps(c, 2, q.l.count, &zp));
    const QrQuantLayout *l = &q.l;
    int64_t off = 0;
    for (int64_t o = 0; o < l->outer; o++)
        for (int64_t k = 0; k < l->axis_len; k++, off += l->inner) {
            int64_t p = qr_quant_layout_index(l, o, k, 0);
            qr__q_quantize_run(c->in[0], c->out[0], off, l->inner, s + p, zp + p, l->sn, &q);
        }
    return QR_OK;
}

/* ==== DequantizeLinear ============================================================= */

/* DequantizeLinear(x, x_scale, [x_zero_point]) -> y = (x - zp) * scale, opsets 10-25 and
 * com.microsoft. (x - zp) is formed in integers, converted to float32 and multiplied by the
 * float32 scale, then rounded to the output type (ORT's DequantizeLinearApply). Output type:
 * the output_dtype attribute, else the scale's. int32 inputs normally have no zero point.
 * Float8 / float4 inputs: (decode(x) - decode(zp)) in float32, times the scale. */
static QrStatus qr__q_dequantize_check(QrOpCtx *c, QrQuantLayout *l, QrDType *out_dt) {
    const QrTensor *x = c->in[0], *s = qr_op_in(c, 1), *zp = qr_op_in(c, 2);
    QrQuantRange r;
    bool fl = qr_dtype_is_minifloat(x->dtype) && x->dtype != QR_DT_F8E8M0;
    if (!fl && !qr_quant_range(x->dtype, &r) && x->dtype != QR_DT_S32)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input x has type %s (int8, uint8, int16, uint16, int32, int4, "
                          "uint4, int2, uint2, float8e4m3fn(uz), float8e5m2(fnuz), float4e2m1 are supported)",
                          qr_dtype_name(x->dtype));
    QR_TRY(qr__q_need_scale(c, 1, "x_scale"));
    QR_TRY(qr__q_need_zp_type(c, 2, x->dtype, "x_zero_point"));
    int64_t od = qr_attr_int(c->node, "output_dtype", 0);
    *out_dt = od ? (QrDType)od : s->dtype;
    if (*out_dt != QR_DT_F32 && *out_dt != QR_DT_F16 && *out_dt != QR_DT_BF16)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output type %s is not supported (float32, float16, bfloat16 are)",
                          qr_dtype_name(*out_dt));
    QR_TRY(qr_quant_layout(c, x, s, qr_attr_int(c->node, "axis", 1), qr_attr_int(c->node, "block_size", 0), l));
    if (zp && zp->numel != s->numel)
        return qr_op_fail(c, QR_ERR_SHAPE, "x_zero_point has %lld elements but x_scale has %lld",
                          (long long)zp->numel, (long long)s->numel);
    return QR_OK;
}

static QrStatus qr__q_dequantize_shape(QrOpCtx *c) {
    QrQuantLayout l;
    QrDType dt;
    QR_TRY(qr__q_dequantize_check(c, &l, &dt));
    return qr_op_set_out(c, 0, dt, c->in[0]->rank, c->in[0]->dims);
}

static QrStatus qr__q_dequantize_exec(QrOpCtx *c) {
    qr__q_kern_ready();
    QrQuantLayout l;
    QrDType dt;
    QR_TRY(qr__q_dequantize_check(c, &l, &dt));
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    float *s;
    int32_t *zp;
    QR_TRY(qr__q_load_scales(c, 1, &s));
    if (qr_dtype_is_minifloat(x->dtype)) {
        const QrTensor *zt = qr_op_in(c, 2);
        float *zf;
        QR_TRY(qr__q_alloc(c, (size_t)l.count, sizeof(float), (void **)&zf));
        for (int64_t k = 0; zt && k < l.count; k++) zf[k] = qr__q_getf(zt, k);
        int64_t off = 0;
        for (int64_t o = 0; o < l.outer; o++)
            for (int64_t k = 0; k < l.axis_len; k++, off += l.inner) {
                int64_t p = qr_quant_layout_index(&l, o, k, 0);
                for (int64_t j = 0; j < l.inner; j++)
                    qr__q_setf(y, off + j, (qr__q_getf(x, off + j) - zf[p + j * l.sn]) * s[p + j * l.sn]);
            }
        return QR_OK;
    }
    QR_TRY(qr__q_load_zps(c, 2, l.count, &zp));
    int64_t off = 0;
    for (int64_t o = 0; o < l.outer; o++)
        for (int64_t k = 0; k < l.axis_len; k++, off += l.inner) {
            int64_t p = qr_quant_layout_index(&l, o, k, 0);
            if (l.sn == 0 && y->dtype == QR_DT_F32 && (x->dtype == QR_DT_U8 || x->dtype == QR_DT_S8)) {
                qr_kern.q8_dequantize(l.inner, (const uint8_t *)x->data + off, x->dtype == QR_DT_S8, zp[p], s[p],
                                      (float *)y->data + off);
            } else {
                for (int64_t j = 0; j < l.inner; j++) {
                    int64_t q = p + j * l.sn;
                    /* int64 difference: int32 inputs with a (non-standard) zero point cannot overflow. */
                    float d = (float)((int64_t)qr__q_geti(x, off + j) - zp[q]);
                    qr__q_setf(y, off + j, d * s[q]);
                }
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
static QrStatus qr__q_dynquant_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    if (x->dtype != QR_DT_F32)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input x has type %s (float32 expected)", qr_dtype_name(x->dtype));
    QR_TRY(qr_op_set_out(c, 0, QR_DT_U8, x->rank, x->dims));
    QR_TRY(qr_op_set_out(c, 1, QR_DT_F32, 0, NULL));
    return qr_op_set_out(c, 2, QR_DT_U8, 0, NULL);
}

/* Computes DynamicQuantizeLinear's (scale, zero point) for n floats. */
static void qr_quant_dynamic_params(const float *x, int64_t n, float *scale, int32_t *zp) {
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

static QrStatus qr__q_dynquant_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    const float *px = x->data;
    float s;
    int32_t z;
    qr_quant_dynamic_params(px, x->numel, &s, &z);
    QrQuantRange r = { 0, 255 };
    if (c->n_out > 0 && c->out[0]) {
        uint8_t *py = c->out[0]->data;
        for (int64_t i = 0; i < x->numel; i++) py[i] = (uint8_t)qr_quant_quantize_f32(px[i], s, z, r);
    }
    if (c->n_out > 1 && c->out[1]) *(float *)c->out[1]->data = s;
    if (c->n_out > 2 && c->out[2]) *(uint8_t *)c->out[2]->data = (uint8_t)z;
    return QR_OK;
}

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

static QrStatus qr__q_mm_geom(const QrOpCtx *c, const QrTensor *a, const QrTensor *b, QrQMatMul *g) {
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

static QrStatus qr__q_mm_param(const QrOpCtx *c, const QrQMatMul *g, int idx, bool a_side, QrQMMParam *p) {
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

static inline int64_t qr__q_mm_param_base(const QrQMMParam *p, int nb, const int64_t *idx) {
    int64_t o = 0;
    for (int d = 0; d < nb; d++) o += idx[d] * p->bs[d];
    return o;
}

/* ---- integer operands and work memory ------------------------------------------------ */

/* Bytes per stored element of an integer operand type (int4 is stored one per byte). */
static int qr__q_esize(QrDType dt) { return dt == QR_DT_U16 || dt == QR_DT_S16 ? 2 : 1; }
static bool qr__q_is_signed(QrDType dt) {
    return dt == QR_DT_S8 || dt == QR_DT_S4 || dt == QR_DT_S2 || dt == QR_DT_S16;
}

/* Whether a product of operands of types adt and bdt accumulated as `kind` runs on the 8-bit
 * GEMM (qr_kern.q8_gemm, int32 mod 2^32): both stored in bytes and the int32 sum is what the
 * kind means (S32 wraps like ONNX Runtime, S32_PROVEN cannot overflow). Otherwise the 16-bit
 * GEMM (qr_kern.q16_gemm, exact int64) runs on operands widened to 16 bits; for S32_PROVEN
 * that exact sum is the int32 one. */
static bool qr__q_narrow(QrDType adt, QrDType bdt, QrQuantAcc kind) {
    return qr__q_esize(adt) == 1 && qr__q_esize(bdt) == 1 && (kind == QR_QACC_S32 || kind == QR_QACC_S32_PROVEN);
}

/* Large work arrays (im2col columns, accumulators, widened operands): one growable 64-byte
 * aligned buffer per calling thread, reused by every node and run. Unlike the node's scratch
 * arena it is neither zeroed nor given back after each node, so a large convolution costs no
 * memset and no page faults. One op uses it at a time (ops do not nest; kernels have their own
 * scratch); it stays reachable for leak checkers through the thread-local pointer. */
static _Thread_local unsigned char *qr__q_work_mem;
static _Thread_local size_t qr__q_work_cap;
/* Pool workers run whole model runs too (analyses run their runs as parallel jobs): a worker
 * that exits (the pool restarted with another thread count) frees its buffer. */
static pthread_key_t qr__q_work_key;
static pthread_once_t qr__q_work_once = PTHREAD_ONCE_INIT;
static void qr__q_work_exit(void *p) { qr_aligned_free(p); }
static void qr__q_work_key_init(void) { pthread_key_create(&qr__q_work_key, qr__q_work_exit); }
#ifdef QR_TESTING
/* Frees the calling thread's work buffer (tests: the next op starts from none). */
QR_TESTAPI void qr__q_work_release(void) {
    qr_aligned_free(qr__q_work_mem);
    qr__q_work_mem = NULL;
    qr__q_work_cap = 0;
    pthread_once(&qr__q_work_once, qr__q_work_key_init);
    pthread_setspecific(qr__q_work_key, NULL);
}
#endif

/* Appends an array of `count` elements of `elem` bytes to a work layout of *total bytes and
 * returns its offset (64-byte aligned); *total becomes SIZE_MAX once the layout is too large. */
static size_t qr__q_wadd(size_t *total, int64_t count, size_t elem) {
    const size_t limit = (size_t)1 << 40;
    if (*total == SIZE_MAX || count < 0 || (uint64_t)count > (uint64_t)limit / elem) { *total = SIZE_MAX; return 0; }
    size_t off = *total, b = ((size_t)count * elem + 63) & ~(size_t)63;
    if (b > limit - off) { *total = SIZE_MAX; return 0; }
    *total = off + b;
    return off;
}

/* The calling thread's work buffer with at least `bytes` bytes (contents undefined; never NULL,
 * even for 0 bytes: callers add offsets to it). Fails with QR_ERR_NOMEM naming the node. */
static QrStatus qr__q_work(const QrOpCtx *c, size_t bytes, unsigned char **out) {
    if (bytes == SIZE_MAX) return qr_op_fail(c, QR_ERR_NOMEM, "the work buffers are too large");
    if (bytes > qr__q_work_cap || !qr__q_work_mem) {
        qr_aligned_free(qr__q_work_mem);
        size_t cap = QR_MAX(QR_MAX(bytes, (size_t)QR_ALIGN), qr__q_work_cap + qr__q_work_cap / 2);
        qr__q_work_mem = qr_aligned_alloc(cap);
        qr__q_work_cap = qr__q_work_mem ? cap : 0;
        pthread_once(&qr__q_work_once, qr__q_work_key_init);
        pthread_setspecific(qr__q_work_key, qr__q_work_mem);
        if (!qr__q_work_mem) return qr_op_fail(c, QR_ERR_NOMEM, "cannot allocate %zu bytes of work memory", bytes);
    }
    *out = qr__q_work_mem;
    return QR_OK;
}

/* dst[r*cols + k] = t[off + (trans ? k*rows + r : r*cols + k)] for r < rows, k < cols, stored
 * with esize bytes per element (2: widened to int16 / uint16 by t's signedness). */
static void qr__q_copy2d(const QrTensor *t, int64_t off, bool trans, int64_t rows, int64_t cols, int esize, void *dst) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < cols; k++) {
            int32_t v = qr__q_geti(t, off + (trans ? k * rows + r : r * cols + k));
            if (esize == 1) ((uint8_t *)dst)[r * cols + k] = (uint8_t)v;
            else ((uint16_t *)dst)[r * cols + k] = (uint16_t)v;
        }
}

/* n elements of t from off widened to 16 bits (int16 / uint16 by t's signedness) into dst. */
static void qr__q_widen(const QrTensor *t, int64_t off, int64_t n, uint16_t *dst) {
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
static inline int64_t qr__q_acc_add(QrQuantAcc kind, int64_t acc, int32_t bias) {
    if (kind == QR_QACC_S32) return (int32_t)((uint32_t)acc + (uint32_t)bias);
    return acc + bias;
}

/* Shared by QLinearMatMul (quantized output) and MatMulInteger (int32 output). Inputs: a at
 * ia, b at ib, zero points at iaz / ibz (-1 = none), scales at ias / ibs / iys / iyz
 * (-1 for MatMulInteger). */
typedef struct QrQMMIo { int ia, ias, iaz, ib, ibs, ibz, iys, iyz; } QrQMMIo;

static QrStatus qr__q_mm_check(QrOpCtx *c, const QrQMMIo *io, QrQMatMul *g, QrQMMParam *pas, QrQMMParam *paz,
                               QrQMMParam *pbs, QrQMMParam *pbz) {
    const QrTensor *a = qr_op_in(c, io->ia), *b = qr_op_in(c, io->ib);
    if (!a || !b) return qr_op_fail(c, QR_ERR_INVALID, "inputs A and B are required");
    if (!qr__q_ok_act(c, a->dtype) || !qr__q_ok_wt(c, b->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "inputs have types %s and %s (%s)",
                          qr_dtype_name(a->dtype), qr_dtype_name(b->dtype), qr__q_types_msg(c));
    QR_TRY(qr__q_mm_geom(c, a, b, g));
    QR_TRY(qr__q_mm_param(c, g, io->iaz, true, paz));
    QR_TRY(qr__q_mm_param(c, g, io->ibz, false, pbz));
    QR_TRY(qr__q_need_zp_type(c, io->iaz, a->dtype, "a zero point"));
    QR_TRY(qr__q_need_zp_type(c, io->ibz, b->dtype, "b zero point"));
    if (io->ias >= 0) {
        QR_TRY(qr__q_need_scale(c, io->ias, "a_scale"));
        QR_TRY(qr__q_need_scale(c, io->ibs, "b_scale"));
        QR_TRY(qr__q_need_scale(c, io->iys, "y_scale"));
        QR_TRY(qr__q_mm_param(c, g, io->ias, true, pas));
        QR_TRY(qr__q_mm_param(c, g, io->ibs, false, pbs));
        QR_TRY(qr__q_need_scalar(c, io->iys, "y_scale"));
        QR_TRY(qr__q_need_scalar(c, io->iyz, "y_zero_point"));
        const QrTensor *yz = qr_op_in(c, io->iyz);
        if (yz && !qr__q_ok_act(c, yz->dtype))
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "y_zero_point has type %s (%s)", qr_dtype_name(yz->dtype),
                              qr__q_types_msg(c));
    }
    return QR_OK;
}

static const QrQMMIo qr__q_qlmm_io = { 0, 1, 2, 3, 4, 5, 6, 7 };
static const QrQMMIo qr__q_mmi_io = { 0, -1, 2, 1, -1, 3, -1, -1 };

static QrStatus qr__q_qlmatmul_shape(QrOpCtx *c) {
    QrQMatMul g;
    QrQMMParam p[4];
    QR_TRY(qr__q_mm_check(c, &qr__q_qlmm_io, &g, &p[0], &p[1], &p[2], &p[3]));
    const QrTensor *yz = qr_op_in(c, 7);
    return qr_op_set_out(c, 0, yz ? yz->dtype : c->in[0]->dtype, g.out_rank, g.out_dims);
}

static QrStatus qr__q_matmulint_shape(QrOpCtx *c) {
    QrQMatMul g;
    QrQMMParam p[4];
    QR_TRY(qr__q_mm_check(c, &qr__q_mmi_io, &g, &p[0], &p[1], &p[2], &p[3]));
    return qr_op_set_out(c, 0, QR_DT_S32, g.out_rank, g.out_dims);
}

/* max over columns n of sum_k |B[k][n] - bz[n * bzs]| for the (K, N) operand whose element
 * (k, n) is t[off + (trans ? n*K + k : k*N + n)] (below 2^53: K*N <= 2^36, |term| <= 65535). */
static int64_t qr__q_colsum_max(const QrTensor *t, int64_t off, bool trans, int64_t K, int64_t N, const int32_t *bz,
                                int64_t bzs) {
    int64_t best = 0;
    for (int64_t n = 0; n < N; n++) {
        int64_t s = 0;
        for (int64_t k = 0; k < K; k++) {
            int64_t v = (int64_t)qr__q_geti(t, off + (trans ? n * K + k : k * N + n)) - bz[n * bzs];
            s += v < 0 ? -v : v;
        }
        best = QR_MAX(best, s);
    }
    return best;
}

/* Accumulator of a matmul whose a zero points are az[0..naz) and b zero points bz[0..nbz): for
 * 16-bit operands the bound is amax * colsum (qr__q_colsum_max of b with its zero points). */
static QrQuantAcc qr__q_mm_acc(QrDType adt, const int32_t *az, int64_t naz, QrDType bdt, const int32_t *bz,
                               int64_t nbz, int64_t colsum) {
    if (qr__q_is_8bit(adt) && qr__q_is_8bit(bdt)) return QR_QACC_S32;
    int64_t amax = 0;
    bool fit = true;
    for (int64_t i = 0; i < naz; i++) {
        amax = QR_MAX(amax, qr_quant_absmax(adt, az[i]));
        fit = fit && qr_quant_fits_s16(adt, az[i]);
    }
    for (int64_t i = 0; i < nbz; i++) fit = fit && qr_quant_fits_s16(bdt, bz[i]);
    return qr_quant_acc_choose(false, fit, qr__q_bound_madd(colsum, amax, 0));
}

/* Runs the batched product; requantizes when io has scales (QLinearMatMul:
 * y = saturate(round(acc * (a_scale * b_scale / y_scale)) + y_zp), ORT's arithmetic),
 * else stores acc as int32 (MatMulInteger). The accumulator follows qr__q_mm_acc; 8-bit
 * operands run on qr_kern.q8_gemm (zero points handled by the kernel), others on q16_gemm. */
static QrStatus qr__q_mm_exec(QrOpCtx *c, const QrQMMIo *io) {
    qr__q_kern_ready();
    QrQMatMul g;
    QrQMMParam pas, paz, pbs, pbz;
    QR_TRY(qr__q_mm_check(c, io, &g, &pas, &paz, &pbs, &pbz));
    const QrTensor *a = c->in[io->ia], *b = c->in[io->ib];
    QrTensor *y = c->out[0];
    bool quant = io->ias >= 0;
    int32_t *az, *bz;
    float *as = NULL, *bsc = NULL, ys = 1.0f;
    int32_t yz = 0;
    QrQuantRange r = { 0, 0 };
    QR_TRY(qr__q_load_zps(c, io->iaz, 1, &az));
    QR_TRY(qr__q_load_zps(c, io->ibz, 1, &bz));
    int64_t naz = qr_op_in(c, io->iaz) ? c->in[io->iaz]->numel : 1;
    int64_t nbz = qr_op_in(c, io->ibz) ? c->in[io->ibz]->numel : 1;
    if (quant) {
        QR_TRY(qr__q_load_scales(c, io->ias, &as));
        QR_TRY(qr__q_load_scales(c, io->ibs, &bsc));
        ys = qr__q_scalar_f(c, io->iys);
        yz = qr__q_scalar_zp(c, io->iyz);
        QR_TRY(qr__q_out_range(c, y->dtype, &r));
    }
    const int64_t M = g.M, K = g.K, N = g.N;
    if (M * N == 0 || g.batches == 0) return QR_OK;
    const int ea = qr__q_esize(a->dtype), eb = qr__q_esize(b->dtype), yb = quant ? qr__q_esize(y->dtype) : 4;
    const bool both8 = qr__q_is_8bit(a->dtype) && qr__q_is_8bit(b->dtype);
    float *mult;
    const bool mult_table = quant && pas.vs && pbs.vs;   /* per-row a and per-column b scales: M x N multipliers */
    QR_TRY(qr__q_alloc(c, (size_t)(mult_table ? M * N : QR_MAX(M, N)), sizeof *mult, (void **)&mult));
    size_t tot = 0, o_acc = qr__q_wadd(&tot, M * N, 8), o_a = qr__q_wadd(&tot, M * K, 2), o_b = qr__q_wadd(&tot, K * N, 2);
    unsigned char *wk;
    QR_TRY(qr__q_work(c, tot, &wk));
    int64_t idx[QR_MAX_RANK] = { 0 };
    for (int64_t bt = 0; bt < g.batches; bt++) {
        int64_t ao = 0, bo = 0;
        for (int d = 0; d < g.nb; d++) { ao += idx[d] * g.as[d]; bo += idx[d] * g.bs[d]; }
        int64_t azb = qr__q_mm_param_base(&paz, g.nb, idx), bzb = qr__q_mm_param_base(&pbz, g.nb, idx);
        int64_t csum = both8 ? 0 : qr__q_colsum_max(b, bo, false, K, N, bz + bzb, pbz.vs);
        QrQuantAcc kind = qr__q_mm_acc(a->dtype, az, naz, b->dtype, bz, nbz, csum);
        QrQOperand A = { (const unsigned char *)a->data + ao * ea, K, qr__q_is_signed(a->dtype), az + azb, paz.vs, NULL };
        QrQOperand B = { (const unsigned char *)b->data + bo * eb, N, qr__q_is_signed(b->dtype), bz + bzb, pbz.vs, NULL };
        const bool narrow = qr__q_narrow(a->dtype, b->dtype, kind);
        const int64_t yo = bt * M * N;
        int32_t *acc32 = quant ? (int32_t *)(wk + o_acc) : (int32_t *)y->data + yo;
        int64_t *acc64 = (int64_t *)(wk + o_acc);
        if (narrow && quant) {   /* the requantization fused into the GEMM */
            int64_t asb = qr__q_mm_param_base(&pas, g.nb, idx), bsb = qr__q_mm_param_base(&pbs, g.nb, idx);
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
            if (ea == 1) { qr__q_widen(a, ao, M * K, (uint16_t *)(wk + o_a)); A.data = wk + o_a; }
            if (eb == 1) { qr__q_widen(b, bo, K * N, (uint16_t *)(wk + o_b)); B.data = wk + o_b; }
            qr_kern.q16_gemm(M, N, K, &A, &B, acc64, N, false);
            if (!quant) for (int64_t i = 0; i < M * N; i++) acc32[i] = (int32_t)acc64[i];
        }
        if (quant && !narrow) {
            int64_t asb = qr__q_mm_param_base(&pas, g.nb, idx), bsb = qr__q_mm_param_base(&pbs, g.nb, idx);
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

static QrStatus qr__q_qlmatmul_exec(QrOpCtx *c) { return qr__q_mm_exec(c, &qr__q_qlmm_io); }
static QrStatus qr__q_matmulint_exec(QrOpCtx *c) { return qr__q_mm_exec(c, &qr__q_mmi_io); }

/* com.microsoft.QGemm(A, a_scale, a_zp, B, b_scale, b_zp, [C], [y_scale], [y_zp]): 2-D
 * Gemm with transA / transB / alpha. acc = C (int32, broadcast to M x N) + sum (a - a_zp) *
 * (b - b_zp[n]); scale[n] = alpha * a_scale * b_scale[n] (/ y_scale when given). With a
 * y_zero_point the output is requantized to its type, otherwise it is float32 acc * scale
 * (ORT decides on the zero point's presence). */
typedef struct QrQGemm { int64_t M, K, N; bool ta, tb; } QrQGemm;

static QrStatus qr__q_qgemm_check(QrOpCtx *c, QrQGemm *g) {
    const QrTensor *a = qr_op_in(c, 0), *b = qr_op_in(c, 3), *cc = qr_op_in(c, 6), *yz = qr_op_in(c, 8);
    char s1[128], s2[128];
    if (!a || !b) return qr_op_fail(c, QR_ERR_INVALID, "inputs A and B are required");
    if (!qr__q_ok_act(c, a->dtype) || !qr__q_ok_wt(c, b->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "inputs have types %s and %s (%s)",
                          qr_dtype_name(a->dtype), qr_dtype_name(b->dtype), qr__q_types_msg(c));
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
    QR_TRY(qr__q_need_scale(c, 1, "a_scale"));
    QR_TRY(qr__q_need_scale(c, 4, "b_scale"));
    QR_TRY(qr__q_need_scalar(c, 1, "a_scale"));
    QR_TRY(qr__q_need_scalar(c, 2, "a_zero_point"));
    QR_TRY(qr__q_need_zp_type(c, 2, a->dtype, "a_zero_point"));
    QR_TRY(qr__q_need_zp_type(c, 5, b->dtype, "b_zero_point"));
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
        QR_TRY(qr__q_need_scale(c, 7, "y_scale"));
        QR_TRY(qr__q_need_scalar(c, 7, "y_scale"));
    }
    QR_TRY(qr__q_need_scalar(c, 8, "y_zero_point"));
    if (yz && !qr__q_ok_act(c, yz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "y_zero_point has type %s (%s)", qr_dtype_name(yz->dtype),
                          qr__q_types_msg(c));
    return QR_OK;
}

static QrStatus qr__q_qgemm_shape(QrOpCtx *c) {
    QrQGemm g;
    QR_TRY(qr__q_qgemm_check(c, &g));
    const QrTensor *yz = qr_op_in(c, 8);
    int64_t dims[2] = { g.M, g.N };
    return qr_op_set_out(c, 0, yz ? yz->dtype : QR_DT_F32, 2, dims);
}

/* Bound on |C| for the accumulator choice (0 without C). */
static int64_t qr__q_int32_absmax(const QrTensor *t) {
    int64_t m = 0;
    for (int64_t i = 0; t && i < t->numel; i++) {
        int64_t v = ((const int32_t *)t->data)[i];
        m = QR_MAX(m, v < 0 ? -v : v);
    }
    return m;
}

static QrStatus qr__q_qgemm_exec(QrOpCtx *c) {
    qr__q_kern_ready();
    QrQGemm g;
    QR_TRY(qr__q_qgemm_check(c, &g));
    const QrTensor *a = c->in[0], *b = c->in[3], *cc = qr_op_in(c, 6), *ysc = qr_op_in(c, 7), *yzt = qr_op_in(c, 8);
    QrTensor *y = c->out[0];
    const int64_t M = g.M, K = g.K, N = g.N;
    float *bsc, alpha = qr_attr_float(c->node, "alpha", 1.0f), as = qr__q_scalar_f(c, 1);
    int32_t *bz, az = qr__q_scalar_zp(c, 2);
    QR_TRY(qr__q_load_scales(c, 4, &bsc));
    QR_TRY(qr__q_load_zps(c, 5, 1, &bz));
    int64_t bzs = qr_op_in(c, 5) && qr_op_in(c, 5)->numel > 1 ? 1 : 0, bss = c->in[4]->numel > 1 ? 1 : 0;
    if (M * N == 0) return QR_OK;
    const bool both8 = qr__q_is_8bit(a->dtype) && qr__q_is_8bit(b->dtype);
    const int64_t csum = both8 ? 0 : qr__q_colsum_max(b, 0, g.tb, K, N, bz, bzs);
    QrQuantAcc kind = qr__q_mm_acc(a->dtype, &az, 1, b->dtype, bz, qr_op_in(c, 5) ? c->in[5]->numel : 1, csum);
    if (kind == QR_QACC_S32_PROVEN)      /* C joins every sum */
        kind = qr_quant_acc_choose(false, true,
                                   qr__q_bound_madd(csum, qr_quant_absmax(a->dtype, az), qr__q_int32_absmax(cc)));
    const bool narrow = qr__q_narrow(a->dtype, b->dtype, kind);
    const int es = narrow ? 1 : 2;
    size_t tot = 0, o_acc = qr__q_wadd(&tot, M * N, 8), o_a = qr__q_wadd(&tot, M * K, 2), o_b = qr__q_wadd(&tot, K * N, 2);
    unsigned char *wk;
    QR_TRY(qr__q_work(c, tot, &wk));
    const bool as_ = qr__q_is_signed(a->dtype), bs_ = qr__q_is_signed(b->dtype);
    /* transB: acc^T (N, M) = B (N, K) @ A^T (K, M); otherwise acc (M, N) = A (M, K) @ B (K, N) */
    QrQOperand L, R;
    if (g.tb) {
        L = (QrQOperand){ b->data, K, bs_, bz, bzs, NULL };
        if (!narrow) { qr__q_copy2d(b, 0, false, N, K, 2, wk + o_b); L.data = wk + o_b; }
        R = (QrQOperand){ a->data, g.ta ? M : 1, as_, &az, 0, NULL };
        if (!narrow || (!g.ta && M > 1)) { qr__q_copy2d(a, 0, !g.ta, K, M, es, wk + o_a); R.data = wk + o_a; R.ld = M; }
    } else {
        L = (QrQOperand){ a->data, K, as_, &az, 0, NULL };
        if (!narrow || g.ta) { qr__q_copy2d(a, 0, g.ta, M, K, es, wk + o_a); L.data = wk + o_a; }
        R = (QrQOperand){ b->data, N, bs_, bz, bzs, NULL };
        if (!narrow) { qr__q_copy2d(b, 0, false, K, N, 2, wk + o_b); R.data = wk + o_b; }
    }
    const int64_t rows = g.tb ? N : M, cols = g.tb ? M : N;
    int32_t *acc32 = (int32_t *)(wk + o_acc);
    int64_t *acc64 = (int64_t *)(wk + o_acc);
    if (narrow) qr_kern.q8_gemm(rows, cols, K, &L, &R, acc32, cols, false);
    else qr_kern.q16_gemm(rows, cols, K, &L, &R, acc64, cols, false);
    float *scale;
    QR_TRY(qr__q_alloc(c, (size_t)N, sizeof *scale, (void **)&scale));
    for (int64_t n = 0; n < N; n++) {
        scale[n] = alpha * as * bsc[n * bss];
        if (ysc) scale[n] /= qr__q_scalar_f(c, 7);
    }
    QrQuantRange r = { 0, 0 };
    int32_t yz = yzt ? qr__q_scalar_zp(c, 8) : 0;
    if (yzt) QR_TRY(qr__q_out_range(c, y->dtype, &r));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            int64_t at = g.tb ? n * M + m : m * N + n;
            int64_t v = narrow ? acc32[at] : acc64[at];
            if (cc) {
                int64_t ci = cc->rank == 2 ? (cc->dims[0] == 1 ? 0 : m) * cc->dims[1] + (cc->dims[1] == 1 ? 0 : n)
                           : cc->rank == 1 ? (cc->dims[0] == 1 ? 0 : n) : 0;
                v = qr__q_acc_add(kind, v, ((const int32_t *)cc->data)[ci]);
            }
            if (yzt) qr__q_seti(y, m * N + n, qr_quant_requantize_s64(v, scale[n], yz, r));
            else ((float *)y->data)[m * N + n] = (float)v * scale[n];
        }
    return QR_OK;
}

/* ==== integer convolution (QLinearConv, ConvInteger) ================================ */

/* Conv geometry in NCHW order (channels_last inputs are described the same way). */
typedef struct QrQConv {
    int nsp;                              /* spatial rank */
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[QR_MAX_RANK], out[QR_MAX_RANK], k[QR_MAX_RANK];
    int64_t st[QR_MAX_RANK], dl[QR_MAX_RANK], pb[QR_MAX_RANK];
    int64_t in_sz, out_sz, k_sz;
} QrQConv;

/* Reads an optional INTS attribute with `n` entries, each >= lo; absent gives `dflt`. */
/* Attribute values beyond this are refused so window arithmetic cannot overflow int64. */
#define QR_Q_MAX_WINDOW_ATTR ((int64_t)1 << 31)

static QrStatus qr__q_ints_attr(const QrOpCtx *c, const char *name, int n, int64_t lo, int64_t dflt, int64_t *out) {
    const int64_t *v;
    int cnt = qr_attr_ints(c->node, name, &v);
    if (cnt < 0) { for (int i = 0; i < n; i++) out[i] = dflt; return QR_OK; }
    if (cnt != n)
        return qr_op_fail(c, QR_ERR_INVALID, "attribute %s has %d values, expected %d", name, cnt, n);
    for (int i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > QR_Q_MAX_WINDOW_ATTR)
            return qr_op_fail(c, QR_ERR_INVALID, "attribute %s[%d] = %lld is out of range [%lld, %lld]", name, i,
                              (long long)v[i], (long long)lo, (long long)QR_Q_MAX_WINDOW_ATTR);
        out[i] = v[i];
    }
    return QR_OK;
}

/* Output size and begin pad of one spatial dim for explicit pads or auto_pad (ORT's
 * ConvAttributes / PoolAttributes): SAME_* pad (ceil(in/s) - 1) * s + eff_k - in in total,
 * the extra one at the end (UPPER) or start (LOWER). ceil_mode (pools) rounds the window
 * count up but drops a last window that would start in the end padding. */
static QrStatus qr__q_out_dim(const QrOpCtx *c, const char *auto_pad, int64_t in, int64_t k, int64_t s, int64_t d,
                              int64_t *pb, int64_t pe, bool ceil_mode, int64_t *out) {
    int64_t eff = (k - 1) * d + 1;
    if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
        int64_t o = (in + s - 1) / s;
        int64_t total = QR_MAX(0, (o - 1) * s + eff - in);
        *pb = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : (total + 1) / 2;
        pe = total - *pb;
    } else if (!strcmp(auto_pad, "VALID")) {
        *pb = 0;
        pe = 0;
    } else if (strcmp(auto_pad, "NOTSET") != 0) {
        return qr_op_fail(c, QR_ERR_INVALID, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                          auto_pad);
    }
    int64_t num = in + *pb + pe - eff;
    if (num < 0)
        return qr_op_fail(c, QR_ERR_SHAPE, "window of %lld (kernel %lld, dilation %lld) is larger than the padded "
                          "input %lld", (long long)eff, (long long)k, (long long)d, (long long)(in + *pb + pe));
    *out = num / s + 1;
    if (ceil_mode) {
        *out = (num + s - 1) / s + 1;
        if ((*out - 1) * s >= in + *pb) (*out)--;
    }
    return QR_OK;
}

/* x: NCHW-ordered dims (rank xrank); w: [M, C/G, k...]. */
static QrStatus qr__q_conv_geom(const QrOpCtx *c, int xrank, const int64_t *xd, const QrTensor *w, QrQConv *g) {
    char s1[128], s2[128];
    memset(g, 0, sizeof *g);
    if (xrank < 3) return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank >= 3 (N, C, spatial...), got %d", xrank);
    if (w->rank != xrank)
        return qr_op_fail(c, QR_ERR_SHAPE, "weight %s must have the input's rank %d",
                          qr_shape_str_brackets(s1, sizeof s1, w->rank, w->dims), xrank);
    g->nsp = xrank - 2;
    g->N = xd[0];
    g->C = xd[1];
    g->M = w->dims[0];
    g->G = qr_attr_int(c->node, "group", 1);
    if (g->G < 1) return qr_op_fail(c, QR_ERR_INVALID, "group %lld must be >= 1", (long long)g->G);
    if (g->C % g->G || g->M % g->G || w->dims[1] != g->C / g->G)
        return qr_op_fail(c, QR_ERR_SHAPE, "input %s, weight %s and group %lld do not fit (C = C_w * group, M %% group "
                          "== 0)", qr_shape_str_brackets(s1, sizeof s1, xrank, xd),
                          qr_shape_str_brackets(s2, sizeof s2, w->rank, w->dims), (long long)g->G);
    g->Cg = g->C / g->G;
    g->Mg = g->M / g->G;
    int64_t ks[QR_MAX_RANK], pads[2 * QR_MAX_RANK];
    QR_TRY(qr__q_ints_attr(c, "kernel_shape", g->nsp, 1, 0, ks));
    QR_TRY(qr__q_ints_attr(c, "strides", g->nsp, 1, 1, g->st));
    QR_TRY(qr__q_ints_attr(c, "dilations", g->nsp, 1, 1, g->dl));
    QR_TRY(qr__q_ints_attr(c, "pads", 2 * g->nsp, 0, 0, pads));
    const char *ap = qr_attr_str(c->node, "auto_pad", "NOTSET");
    g->in_sz = g->out_sz = g->k_sz = 1;
    for (int i = 0; i < g->nsp; i++) {
        g->in[i] = xd[2 + i];
        g->k[i] = w->dims[2 + i];
        if (g->k[i] < 1 || g->k[i] > QR_Q_MAX_WINDOW_ATTR)
            return qr_op_fail(c, QR_ERR_SHAPE, "weight kernel dim %d is %lld", i, (long long)g->k[i]);
        if (ks[i] && ks[i] != g->k[i])
            return qr_op_fail(c, QR_ERR_INVALID, "kernel_shape[%d] = %lld differs from the weight's %lld", i,
                              (long long)ks[i], (long long)g->k[i]);
        g->pb[i] = pads[i];
        QR_TRY(qr__q_out_dim(c, ap, g->in[i], g->k[i], g->st[i], g->dl[i], &g->pb[i], pads[g->nsp + i], false,
                             &g->out[i]));
        g->in_sz *= g->in[i];
        if (qr_mul_overflow_i64(g->k_sz, g->k[i], &g->k_sz))
            return qr_op_fail(c, QR_ERR_SHAPE, "the window size (kernel_shape product) overflows");
        if (qr_mul_overflow_i64(g->out_sz, g->out[i], &g->out_sz))
            return qr_op_fail(c, QR_ERR_SHAPE, "the output size overflows");
    }
    char what[160];
    const double pos = (double)g->N * (double)g->M * (double)g->out_sz, taps = (double)g->Cg * (double)g->k_sz;
    snprintf(what, sizeof what, "%.3g output positions x %.3g taps", pos, taps);
    return qr_op_check_work(c, pos * taps, what);
}

/* p[0..n) = v for elements of es bytes (1 or 2). */
static inline void qr__q_fill(unsigned char *p, int es, int64_t n, uint16_t v) {
    if (n <= 0) return;
    if (es == 1) { memset(p, (int)(uint8_t)v, (size_t)n); return; }
    uint16_t *q = (uint16_t *)p;
    for (int64_t i = 0; i < n; i++) q[i] = v;
}

/* Gathers the receptive fields of channels [c0, c1) of one image (group) x (Cg, in...) into
 * col[(ch*k_sz + kf)][out_sz] (im2col), elements of es bytes. Taps outside x get `pad`, the
 * zero point: ORT pads with it, and the GEMM subtracts it, so they contribute nothing. 2-D
 * convolutions copy whole runs of a row; other ranks go element by element. */
static void qr__q_im2col(const QrQConv *g, const void *x, int es, uint16_t pad, int64_t c0, int64_t c1, void *col) {
    const int64_t P = g->out_sz;
    unsigned char *cb = col;
    const unsigned char *xb = x;
    if (g->nsp == 2) {
        const int64_t H = g->in[0], W = g->in[1], KH = g->k[0], KW = g->k[1], OH = g->out[0], OW = g->out[1];
        const int64_t sh = g->st[0], sw = g->st[1], dh = g->dl[0], dw = g->dl[1], ph = g->pb[0], pw = g->pb[1];
        for (int64_t ch = c0; ch < c1; ch++)
            for (int64_t kh = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++) {
                    unsigned char *d = cb + ((ch * KH + kh) * KW + kw) * P * es;
                    /* output columns [lo, hi) read inside the row: 0 <= ow*sw + t < W */
                    const int64_t t = kw * dw - pw;
                    int64_t lo = t >= 0 ? 0 : (-t + sw - 1) / sw, hi = W - 1 - t < 0 ? 0 : (W - 1 - t) / sw + 1;
                    hi = QR_MIN(hi, OW);
                    lo = QR_MIN(lo, hi);
                    for (int64_t oh = 0; oh < OH; oh++, d += OW * es) {
                        const int64_t ih = oh * sh - ph + kh * dh;
                        if (ih < 0 || ih >= H) { qr__q_fill(d, es, OW, pad); continue; }
                        qr__q_fill(d, es, lo, pad);
                        const unsigned char *xr = xb + ((ch * H + ih) * W + lo * sw + t) * es;
                        if (sw == 1) memcpy(d + lo * es, xr, (size_t)((hi - lo) * es));
                        else if (es == 1) for (int64_t q = 0; q < hi - lo; q++) d[lo + q] = xr[q * sw];
                        else for (int64_t q = 0; q < hi - lo; q++) ((uint16_t *)d)[lo + q] = ((const uint16_t *)xr)[q * sw];
                        qr__q_fill(d + hi * es, es, OW - hi, pad);
                    }
                }
        return;
    }
    const int last = g->nsp - 1;
    const int64_t rows = g->out_sz / (g->out[last] ? g->out[last] : 1), ow_n = g->out[last];
    for (int64_t ci = c0; ci < c1; ci++) {
        int64_t kidx[QR_MAX_RANK] = { 0 };
        for (int64_t kf = 0; kf < g->k_sz; kf++) {
            unsigned char *dst = cb + (ci * g->k_sz + kf) * P * es;
            int64_t oidx[QR_MAX_RANK] = { 0 };
            for (int64_t r = 0; r < rows; r++, dst += ow_n * es) {
                int64_t base = 0;
                bool ok = true;
                for (int d = 0; d < last; d++) {
                    int64_t iv = oidx[d] * g->st[d] - g->pb[d] + kidx[d] * g->dl[d];
                    if (iv < 0 || iv >= g->in[d]) { ok = false; break; }
                    base = base * g->in[d] + iv;
                }
                if (!ok) {
                    qr__q_fill(dst, es, ow_n, pad);
                } else {
                    base = ci * g->in_sz + base * g->in[last];
                    int64_t off = kidx[last] * g->dl[last] - g->pb[last], s = g->st[last], w = g->in[last];
                    for (int64_t ow = 0; ow < ow_n; ow++) {
                        int64_t iw = ow * s + off;
                        uint16_t v = pad;
                        if (iw >= 0 && iw < w) v = es == 1 ? xb[base + iw] : ((const uint16_t *)xb)[base + iw];
                        if (es == 1) dst[ow] = (uint8_t)v;
                        else ((uint16_t *)dst)[ow] = v;
                    }
                }
                for (int d = last - 1; d >= 0; d--) {
                    if (++oidx[d] < g->out[d]) break;
                    oidx[d] = 0;
                }
            }
            for (int d = last; d >= 0; d--) {
                if (++kidx[d] < g->k[d]) break;
                kidx[d] = 0;
            }
        }
    }
}

/* What a convolution multiplies: x (8/16-bit; NCHW, or N, spatial..., C with nhwc), its zero
 * point, w [M][Cg*k_sz] and its zero points (wzs 0: wz[0] for all, 1: wz[m]). */
typedef struct QrQConvIn {
    const QrTensor *x, *w;
    bool nhwc;
    int32_t xz;
    const int32_t *wz;
    int64_t wzs;
    const void *w_packed;   /* w packed by q8_conv_nhwc_pack or q8_pack_a (the lowering's input 9), or NULL */
} QrQConvIn;

/* What it produces: y = requantize(acc + bias[m], mult[m]) into y's type and range (mult NULL:
 * acc itself as int32, ConvInteger), NCHW or channels last. */
typedef struct QrQConvOut {
    bool nhwc;
    QrQuantAcc kind;
    const int32_t *bias;        /* NULL = none */
    const float *mult;          /* per M (requantize), NULL = int32 output */
    int32_t yz;
    QrQuantRange r;
} QrQConvOut;

/* One pool job of a convolution: an image's im2col over channel chunks, its output rows, or
 * its depthwise planes. */
typedef struct QrQConvJob {
    QrOpCtx *c;
    const QrQConv *g;
    const QrQConvIn *in;
    const QrQConvOut *o;
    int64_t n;                  /* image */
    const void *x;              /* image (group) in NCHW, es bytes per element */
    int es;
    void *col;
    const void *acc;            /* int32 (narrow) or int64 accumulators [M][out_sz] */
    bool narrow;
    int64_t per_task;           /* channels / rows / planes per task */
    unsigned char *slots;       /* depthwise: per-thread scratch */
    size_t slot_bytes, dw_bytes;
    /* depthwise on qr_kern.q8_dwconv2d_rq (one input plane per output plane, every w - wz in
     * int8): w - wz per plane and the planes' requantizations; NULL: plane by plane */
    const int8_t *dwrq_w;
    const QrQ8PlaneRq *dwrq;
} QrQConvJob;

static void qr__q_im2col_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrQConvJob *j = ctx;
    int64_t c0 = t * j->per_task, c1 = QR_MIN(j->g->Cg, c0 + j->per_task);
    qr__q_im2col(j->g, j->x, j->es, (uint16_t)j->in->xz, c0, c1, j->col);
}

/* Output m of image n from its accumulators acc[0..out_sz): requantized (or int32), with bias. */
static void qr__q_conv_emit_row(const QrQConvJob *j, int64_t m, const void *acc) {
    const QrQConv *g = j->g;
    const QrQConvOut *o = j->o;
    QrTensor *y = j->c->out[0];
    const int64_t P = g->out_sz;
    const int32_t b = o->bias ? o->bias[m] : 0;
    if (!o->nhwc && o->mult) {
        const int yb = qr__q_esize(y->dtype);
        unsigned char *py = (unsigned char *)y->data + (j->n * g->M + m) * P * yb;
        if (j->narrow) qr_kern.s32_requant(P, acc, o->bias ? o->bias + m : NULL, 0, o->mult + m, 0, o->yz, o->r.lo, o->r.hi, py, yb);
        else qr_kern.s64_requant(P, acc, o->bias ? o->bias + m : NULL, 0, o->mult + m, 0, o->yz, o->r.lo, o->r.hi, py, yb);
        return;
    }
    for (int64_t p = 0; p < P; p++) {
        int64_t v = qr__q_acc_add(o->kind, j->narrow ? ((const int32_t *)acc)[p] : ((const int64_t *)acc)[p], b);
        int64_t yi = o->nhwc ? (j->n * P + p) * g->M + m : (j->n * g->M + m) * P + p;
        if (o->mult) qr__q_seti(y, yi, qr_quant_requantize_s64(v, o->mult[m], o->yz, o->r));
        else ((int32_t *)y->data)[yi] = (int32_t)v;
    }
}

static void qr__q_emit_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrQConvJob *j = ctx;
    const int64_t P = j->g->out_sz;
    for (int64_t m = t * j->per_task; m < QR_MIN(j->g->M, (t + 1) * j->per_task); m++)
        qr__q_conv_emit_row(j, m, j->narrow ? (const void *)((const int32_t *)j->acc + m * P)
                                            : (const void *)((const int64_t *)j->acc + m * P));
}

/* Depthwise planes [t*per_task, ...) of image n: qr_kern.q8_dwconv2d into this thread's slot
 * (or straight into an int32 output), then the plane's requantization. */
static void qr__q_dw_task(void *ctx, int64_t t, int tid) {
    const QrQConvJob *j = ctx;
    const QrQConv *g = j->g;
    const QrQConvIn *in = j->in;
    unsigned char *slot = j->slots + (size_t)tid * j->slot_bytes;
    int32_t *plane = (int32_t *)(slot + j->dw_bytes);
    int16_t *w16 = (int16_t *)(slot + j->dw_bytes + ((size_t)g->out_sz * sizeof(int32_t) + 63) / 64 * 64);
    const int64_t m0 = t * j->per_task, m1 = QR_MIN(g->M, (t + 1) * j->per_task);
    if (j->dwrq) {   /* convolution and requantization in one pass (qr__q_conv_run checked the geometry) */
        QrQ8Win p = { (const unsigned char *)j->x + m0 * g->in_sz, qr__q_is_signed(in->x->dtype), in->xz,
                      g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0], g->dl[1],
                      g->pb[0], g->pb[1], g->out[0], g->out[1] };
        if (qr_kern.q8_dwconv2d_rq(&p, m1 - m0, g->in_sz, j->dwrq_w + m0 * g->k_sz, j->dwrq + m0,
                                   (uint8_t *)j->c->out[0]->data + (j->n * g->M + m0) * g->out_sz, g->out_sz, slot))
            return;
    }
    for (int64_t m = m0; m < m1; m++) {
        const int64_t ci = m / g->Mg;
        QrQ8Win p = { (const unsigned char *)j->x + ci * g->in_sz, qr__q_is_signed(in->x->dtype), in->xz,
                         g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0], g->dl[1],
                         g->pb[0], g->pb[1], g->out[0], g->out[1] };
        const int32_t wz = in->wz[m * in->wzs];
        for (int64_t k = 0; k < g->k_sz; k++) w16[k] = (int16_t)(qr__q_geti(in->w, m * g->k_sz + k) - wz);
        const bool direct = !j->o->mult && !j->o->nhwc;
        int32_t *dst = direct ? (int32_t *)j->c->out[0]->data + (j->n * g->M + m) * g->out_sz : plane;
        qr_kern.q8_dwconv2d(&p, w16, dst, slot);
        if (!direct) qr__q_conv_emit_row(j, m, dst);
    }
}

/* Whether the padded phase planes of kern/ref/q8_dwconv2d.c for 2-D geometry g stay within a
 * few times the input plane plus the output (in double: the layout's own int64 sizes overflow
 * for absurd dilations and strides). */
static bool qr__q_dw_layout_sane(const QrQConv *g) {
    double hq = (double)g->out[0] + (double)(g->k[0] - 1) * (double)g->dl[0] / (double)g->st[0];
    double wq = (double)g->out[1] + (double)(g->k[1] - 1) * (double)g->dl[1] / (double)g->st[1];
    double planes = hq * wq * (double)g->st[0] * (double)g->st[1];
    return planes <= 8.0 * (double)g->in_sz + 4.0 * (double)g->out_sz + (double)(1 << 20);
}

/* The channels-last path of a 2-D convolution (qr_kern.q8_conv_nhwc_rq): 8-bit NCHW x, ungrouped,
 * requantized into 8-bit NCHW y. The kernel writes each image channels-last into the work buffer
 * (int8 flipped to uint8; QrQ8ConvNhwc.src: a 1x1 convolution's tasks each their own pixels), the
 * weights come packed (in->w_packed, the lowering's) or are packed here.
 * *done is false when the path does not apply (the caller runs the GEMM path). */
static QrStatus qr__q_conv_nhwc(QrOpCtx *c, const QrQConv *g, const QrQConvIn *in, const QrQConvOut *o, bool *done) {
    const QrTensor *x = in->x, *w = in->w;
    QrTensor *y = c->out[0];
    *done = false;
    if (!qr_kern.q8_conv_nhwc_rq || !qr_kern.q8_conv_nhwc_pack || in->nhwc || o->nhwc || !o->mult || g->nsp != 2 ||
        g->G != 1 || !qr__q_is_8bit(x->dtype) || !qr__q_is_8bit(w->dtype) || qr__q_esize(y->dtype) != 1)
        return QR_OK;
    const bool xs = qr__q_is_signed(x->dtype);
    const int64_t Cp = (g->C + 3) / 4 * 4, HW = g->in_sz, P = g->out_sz;
    const int32_t zp = in->xz + (xs ? 128 : 0);
    QrQ8ConvNhwc cx = { NULL, zp, g->C, Cp, g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0],
                        g->dl[1], g->pb[0], g->pb[1], g->out[0], g->out[1], NULL, false, NULL };
    const void *wp = in->w_packed;
    size_t wbytes = 0, tot = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (!wp || pass == 1) {   /* not packed by the lowering, or not for these kernels: pack now */
            wbytes = qr_kern.q8_conv_nhwc_pack(g->M, g->C, g->k[0], g->k[1], w->data, qr__q_is_signed(w->dtype), in->wz,
                                               in->wzs, NULL);
            if (!wbytes) return QR_OK;
        }
        tot = 0;
        const size_t o_w = qr__q_wadd(&tot, (int64_t)wbytes, 1), o_x = qr__q_wadd(&tot, HW * Cp, 1);
        unsigned char *wk;
        QR_TRY(qr__q_work(c, tot, &wk));
        if (wbytes) {
            if (!qr_kern.q8_conv_nhwc_pack(g->M, g->C, g->k[0], g->k[1], w->data, qr__q_is_signed(w->dtype), in->wz,
                                           in->wzs, wk + o_w))
                return QR_OK;   /* some w - wz leaves int8 */
            wp = wk + o_w;
        }
        cx.x = cx.fill = wk + o_x;
        cx.src_signed = xs;
        int64_t n = 0;
        for (; n < g->N; n++) {   /* the kernel writes the image channels-last (QrQ8ConvNhwc.src) */
            cx.src = (const uint8_t *)x->data + n * g->C * HW;
            QrQ8Requant rq = { o->bias, 1, 0, o->mult, 1, 0, o->yz, o->r.lo, o->r.hi,
                               (unsigned char *)y->data + n * g->M * P, P, 1 };
            if (!qr_kern.q8_conv_nhwc_rq(g->M, wp, &cx, &rq)) break;
        }
        if (n == g->N) { *done = true; return QR_OK; }
        if (n > 0 || wbytes) return QR_OK;   /* no scratch in the kernel: the GEMM path redoes it */
    }
    return QR_OK;
}

/* Sets j->dwrq_w / j->dwrq for a depthwise convolution that qr_kern.q8_dwconv2d_rq takes: one
 * input plane per output plane, requantized 8-bit NCHW output, every w - wz in int8, a geometry
 * the level's kernel handles (asked with zero planes); leaves them NULL otherwise. */
static QrStatus qr__q_dwrq_prep(QrOpCtx *c, const QrQConv *g, const QrQConvIn *in, const QrQConvOut *o, QrQConvJob *j) {
    const QrTensor *w = in->w, *y = c->out[0];
    j->dwrq_w = NULL;
    j->dwrq = NULL;
    QrQ8Win p = { NULL, qr__q_is_signed(in->x->dtype), in->xz, g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1],
                  g->dl[0], g->dl[1], g->pb[0], g->pb[1], g->out[0], g->out[1] };
    if (!qr_kern.q8_dwconv2d_rq || !o->mult || o->nhwc || qr__q_esize(y->dtype) != 1 || g->Mg != 1 ||
        !qr_kern.q8_dwconv2d_rq(&p, 0, 0, NULL, NULL, NULL, 0, NULL))
        return QR_OK;
    QrQ8PlaneRq *rq;
    QR_TRY(qr__q_alloc(c, (size_t)g->M, sizeof *rq, (void **)&rq));
    const bool ws = qr__q_is_signed(w->dtype);   /* one byte per weight: qr__q_narrow */
    bool wz0 = w->dtype == QR_DT_S8;   /* int8 weights with zero points 0 are w - wz already */
    for (int64_t m = 0; m < g->M; m++) {
        rq[m] = (QrQ8PlaneRq){ o->bias ? o->bias[m] : 0, o->mult[m], o->yz, o->r.lo, o->r.hi };
        wz0 = wz0 && in->wz[m * in->wzs] == 0;
    }
    int8_t *w8 = wz0 ? (int8_t *)w->data : NULL;
    if (!wz0) {
        QR_TRY(qr__q_alloc(c, (size_t)(g->M * g->k_sz), 1, (void **)&w8));
        for (int64_t m = 0; m < g->M; m++) {
            const int32_t wz = in->wz[m * in->wzs];
            for (int64_t k = 0; k < g->k_sz; k++) {
                const int64_t i = m * g->k_sz + k;
                const int32_t v = (ws ? (int32_t)((const int8_t *)w->data)[i] : (int32_t)((const uint8_t *)w->data)[i]) - wz;
                if (v < -128 || v > 127) return QR_OK;
                w8[i] = (int8_t)v;
            }
        }
    }
    j->dwrq_w = w8;
    j->dwrq = rq;
    return QR_OK;
}

/* Runs a convolution for every image: 8-bit operands (qr__q_narrow) on qr_kern.q8_dwconv2d
 * (2-D, one input channel per group) or per group on qr_kern.q8_gemm (weights as A with their
 * zero points; B the image itself for a 1x1 stride-1 convolution without padding, its im2col
 * otherwise); wider ones on qr_kern.q16_gemm with both operands widened to 16 bits. Then the
 * requantization (qr_kern.s32_requant / s64_requant per output channel) or the int32 output.
 * Work memory: qr__q_work; the pool splits im2col, output rows and depthwise planes. */
static QrStatus qr__q_conv_run(QrOpCtx *c, const QrQConv *g, const QrQConvIn *in, const QrQConvOut *o) {
    const QrTensor *x = in->x, *w = in->w;
    QrTensor *y = c->out[0];
    const int64_t kk = g->Cg * g->k_sz, P = g->out_sz, nx = g->C * g->in_sz;
    if (g->N == 0 || g->M == 0 || P == 0) return QR_OK;
    const bool narrow = qr__q_narrow(x->dtype, w->dtype, o->kind);
    const int es = narrow ? 1 : 2, xes = qr__q_esize(x->dtype);
    bool direct = true;   /* 1x1, stride 1, no padding: the image itself is the column matrix */
    for (int i = 0; i < g->nsp; i++)
        direct = direct && g->k[i] == 1 && g->st[i] == 1 && g->pb[i] == 0 && g->out[i] == g->in[i];
    /* depthwise kernels pad the plane for every tap the window declares: with a dilation of
     * 2^31 that is gigabytes of zeros, so such geometry takes the GEMM, which reads only x */
    const bool dw = narrow && g->nsp == 2 && g->Cg == 1 && qr__q_dw_layout_sane(g);
    if (narrow && !dw) {
        bool done;
        QR_TRY(qr__q_conv_nhwc(c, g, in, o, &done));
        if (done) return QR_OK;
    }
    const int threads = qr_pool_threads();
    QrQConvJob j = { .c = c, .g = g, .in = in, .o = o, .es = es, .narrow = narrow };
    size_t tot = 0, o_x = 0, o_w = 0, o_col = 0, o_acc = 0, o_dw = 0;
    const bool need_x = in->nhwc || es != xes, need_w = es != qr__q_esize(w->dtype);
    /* 8-bit NCHW requantization is fused into the GEMM; int32 outputs go straight to y */
    const bool need_acc = !dw && (o->nhwc || !narrow);
    if (need_x) o_x = qr__q_wadd(&tot, nx, (size_t)es);
    if (need_w) o_w = qr__q_wadd(&tot, g->M * kk, 2);
    const bool implicit = narrow && g->nsp == 2;   /* the GEMM gathers its B panels from the image */
    if (!dw && !direct && !implicit) o_col = qr__q_wadd(&tot, kk * P, (size_t)es);
    if (need_acc) o_acc = qr__q_wadd(&tot, g->M * P, narrow ? 4 : 8);
    if (dw) {
        QrQ8Win p = { NULL, false, 0, g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0], g->dl[1],
                         g->pb[0], g->pb[1], g->out[0], g->out[1] };
        j.dw_bytes = (QR_MAX(qr_q8_dwconv2d_scratch(&p), qr_q8_dwconv2d_rq_scratch(&p)) + 63) / 64 * 64;
        size_t s = 0;
        qr__q_wadd(&s, (int64_t)j.dw_bytes, 1);
        qr__q_wadd(&s, P, sizeof(int32_t));
        qr__q_wadd(&s, g->k_sz, sizeof(int16_t));
        j.slot_bytes = s;
        o_dw = s == SIZE_MAX ? (tot = SIZE_MAX, 0) : qr__q_wadd(&tot, (int64_t)s, (size_t)threads);
    }
    unsigned char *wk;
    QR_TRY(qr__q_work(c, tot, &wk));
    const void *wdata = w->data;
    if (need_w) { qr__q_widen(w, 0, g->M * kk, (uint16_t *)(wk + o_w)); wdata = wk + o_w; }
    j.col = wk + o_col;
    j.acc = wk + o_acc;
    j.slots = wk + o_dw;
    for (int64_t n = 0; n < g->N; n++) {
        j.n = n;
        const void *xi = (const unsigned char *)x->data + n * nx * xes;
        if (need_x) {
            void *d = wk + o_x;
            if (!in->nhwc) qr__q_widen(x, n * nx, nx, d);
            else
                for (int64_t ch = 0; ch < g->C; ch++)
                    for (int64_t p = 0; p < g->in_sz; p++) {
                        int32_t v = qr__q_geti(x, (n * g->in_sz + p) * g->C + ch);
                        if (es == 1) ((uint8_t *)d)[ch * g->in_sz + p] = (uint8_t)v;
                        else ((uint16_t *)d)[ch * g->in_sz + p] = (uint16_t)v;
                    }
            xi = d;
        }
        if (dw) {
            if (n == 0) QR_TRY(qr__q_dwrq_prep(c, g, in, o, &j));
            j.x = xi;
            j.per_task = QR_MAX(1, 16384 / QR_MAX(1, P * g->k_sz));   /* small tasks: the pool balances them */
            QrQ8Win pw = { NULL, false, 0, g->in[0], g->in[1], g->k[0], g->k[1], g->st[0], g->st[1], g->dl[0], g->dl[1],
                           g->pb[0], g->pb[1], g->out[0], g->out[1] };
            int64_t hp, wp;
            if (j.dwrq && qr__k_dwc_small(&pw, &hp, &wp))   /* whole channels-last blocks per task */
                j.per_task = (j.per_task + QR__K_DWC_CB - 1) / QR__K_DWC_CB * QR__K_DWC_CB;
            qr_pool_for((g->M + j.per_task - 1) / j.per_task, qr__q_dw_task, &j);
            continue;
        }
        for (int64_t gr = 0; gr < g->G; gr++) {
            const unsigned char *xg = (const unsigned char *)xi + gr * g->Cg * g->in_sz * es;
            QrQOperand B = { xg, g->in_sz, qr__q_is_signed(x->dtype), &in->xz, 0, NULL };
            if (!direct && !implicit) {
                j.x = xg;
                j.per_task = QR_MAX(1, 65536 / QR_MAX(1, g->k_sz * P * es));
                int64_t nt = (g->Cg + j.per_task - 1) / j.per_task;
                if (nt > 1 && kk * P * es >= 65536) qr_pool_for(nt, qr__q_im2col_task, &j);
                else qr__q_im2col(g, xg, es, (uint16_t)in->xz, 0, g->Cg, j.col);
                B.data = j.col;
                B.ld = P;
            }
            QrQOperand A = { (const unsigned char *)wdata + gr * g->Mg * kk * es, kk, qr__q_is_signed(w->dtype),
                             in->wz + gr * g->Mg * in->wzs, in->wzs, g->G == 1 && narrow ? in->w_packed : NULL };
            if (narrow) {
                QrQ8ConvB cb = { xg, qr__q_is_signed(x->dtype), in->xz, g->Cg, g->in[0], g->in[1], g->k[0], g->k[1],
                                 g->st[0], g->st[1], g->dl[0], g->dl[1], g->pb[0], g->pb[1], g->out[0], g->out[1] };
                const bool conv = implicit && !direct;
                if (!need_acc && o->mult) {
                    const int yb = qr__q_esize(y->dtype);
                    QrQ8Requant rq = { o->bias ? o->bias + gr * g->Mg : NULL, 1, 0, o->mult + gr * g->Mg, 1, 0, o->yz,
                                       o->r.lo, o->r.hi, (unsigned char *)y->data + (n * g->M + gr * g->Mg) * P * yb, P, yb };
                    qr_kern.q8_gemm_rq(g->Mg, P, kk, &A, conv ? NULL : &B, conv ? &cb : NULL, &rq);
                    continue;
                }
                int32_t *acc = need_acc ? (int32_t *)(wk + o_acc) + gr * g->Mg * P
                                        : (int32_t *)y->data + (n * g->M + gr * g->Mg) * P;
                if (conv) qr_kern.q8_conv_gemm(g->Mg, &A, &cb, acc, P);
                else qr_kern.q8_gemm(g->Mg, P, kk, &A, &B, acc, P, false);
            } else {
                qr_kern.q16_gemm(g->Mg, P, kk, &A, &B, (int64_t *)(wk + o_acc) + gr * g->Mg * P, P, false);
            }
        }
        if (need_acc) {
            j.per_task = QR_MAX(1, 65536 / P);
            int64_t nt = (g->M + j.per_task - 1) / j.per_task;
            if (nt > 1) qr_pool_for(nt, qr__q_emit_task, &j);
            else qr__q_emit_task(&j, 0, 0);
        }
    }
    return QR_OK;
}

/* Accumulator of a convolution with weights w ([M][kk]) minus their zero points wz (wzs 0: one,
 * 1: per M), input type xdt / zero point xzp and optional int32 bias: s32 for 8-bit operands,
 * else the bound max_m (amax * sum_k |w[m][k] - wz[m]| + |bias[m]|) decides (qr_quant_acc_choose). */
static QrQuantAcc qr_quant_conv_acc(QrDType xdt, int32_t xzp, const QrTensor *w, const int32_t *wz, int64_t nwz,
                                    int64_t wzs, int64_t M, int64_t kk, const int32_t *bias) {
    if (qr__q_is_8bit(xdt) && qr__q_is_8bit(w->dtype)) return QR_QACC_S32;
    bool fit = qr_quant_fits_s16(xdt, xzp);
    int64_t amax = qr_quant_absmax(xdt, xzp), bound = 0;
    for (int64_t i = 0; i < nwz; i++) fit = fit && qr_quant_fits_s16(w->dtype, wz[i]);
    for (int64_t m = 0; m < M; m++) {
        int64_t sum = 0, b = bias ? bias[m] : 0;
        for (int64_t k = 0; k < kk; k++) {
            int64_t v = (int64_t)qr__q_geti(w, m * kk + k) - wz[m * wzs];
            sum += v < 0 ? -v : v;
        }
        bound = QR_MAX(bound, qr__q_bound_madd(sum, amax, b < 0 ? -b : b));
    }
    return qr_quant_acc_choose(false, fit, bound);
}

/* Validates a per-output-channel parameter: one element or 1-D of length M. */
static QrStatus qr__q_need_per_m(const QrOpCtx *c, int i, int64_t M, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (t && t->numel != 1 && !(t->rank == 1 && t->dims[0] == M)) {
        char a[128];
        return qr_op_fail(c, QR_ERR_SHAPE, "input %d (%s) must be a scalar or 1-D of length M=%lld, got %s", i, what,
                          (long long)M, qr_shape_str_brackets(a, sizeof a, t->rank, t->dims));
    }
    return QR_OK;
}

/* Conv input dims in NCHW order (from NHWC when channels_last). */
static void qr__q_nchw_dims(const QrTensor *x, bool nhwc, int64_t *d) {
    for (int i = 0; i < x->rank; i++) d[i] = x->dims[i];
    if (nhwc && x->rank >= 3) {
        d[1] = x->dims[x->rank - 1];
        for (int i = 2; i < x->rank; i++) d[i] = x->dims[i - 1];
    }
}

/* Output dims N, M, out... (or N, out..., M when channels_last). */
static void qr__q_conv_out_dims(const QrQConv *g, bool nhwc, int64_t *d) {
    d[0] = g->N;
    for (int i = 0; i < g->nsp; i++) d[(nhwc ? 1 : 2) + i] = g->out[i];
    d[nhwc ? 1 + g->nsp : 1] = g->M;
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]) (ai.onnx 10 and
 * com.microsoft with channels_last): y = saturate(round((acc + B[m]) * (x_scale * w_scale[m]
 * / y_scale)) + y_zp), per-tensor or per-output-channel w parameters. */
static QrStatus qr__q_qlconv_check(QrOpCtx *c, QrQConv *g, bool *nhwc) {
    const QrTensor *x = c->in[0], *w = qr_op_in(c, 3), *bias = qr_op_in(c, 8), *yz = qr_op_in(c, 7);
    if (!w) return qr_op_fail(c, QR_ERR_INVALID, "input w is required");
    if (!qr__q_ok_act(c, x->dtype) || !qr__q_ok_wt(c, w->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "x and w have types %s and %s (%s)",
                          qr_dtype_name(x->dtype), qr_dtype_name(w->dtype), qr__q_types_msg(c));
    *nhwc = qr_attr_int(c->node, "channels_last", 0) != 0;
    int64_t xd[QR_MAX_RANK];
    qr__q_nchw_dims(x, *nhwc, xd);
    QR_TRY(qr__q_conv_geom(c, x->rank, xd, w, g));
    QR_TRY(qr__q_need_scale(c, 1, "x_scale"));
    QR_TRY(qr__q_need_scale(c, 4, "w_scale"));
    QR_TRY(qr__q_need_scale(c, 6, "y_scale"));
    QR_TRY(qr__q_need_scalar(c, 1, "x_scale"));
    QR_TRY(qr__q_need_scalar(c, 2, "x_zero_point"));
    QR_TRY(qr__q_need_scalar(c, 6, "y_scale"));
    QR_TRY(qr__q_need_scalar(c, 7, "y_zero_point"));
    QR_TRY(qr__q_need_per_m(c, 4, g->M, "w_scale"));
    QR_TRY(qr__q_need_per_m(c, 5, g->M, "w_zero_point"));
    QR_TRY(qr__q_need_zp_type(c, 2, x->dtype, "x_zero_point"));
    QR_TRY(qr__q_need_zp_type(c, 5, w->dtype, "w_zero_point"));
    if (yz && !qr__q_ok_act(c, yz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "y_zero_point has type %s (%s)", qr_dtype_name(yz->dtype),
                          qr__q_types_msg(c));
    if (bias) {
        if (bias->dtype != QR_DT_S32) return qr_op_fail(c, QR_ERR_INVALID, "B has type %s (int32 expected)",
                                                        qr_dtype_name(bias->dtype));
        if (bias->numel != g->M)
            return qr_op_fail(c, QR_ERR_SHAPE, "B has %lld elements, expected M=%lld", (long long)bias->numel,
                              (long long)g->M);
    }
    return QR_OK;
}

static QrStatus qr__q_qlconv_shape(QrOpCtx *c) {
    QrQConv g;
    bool nhwc;
    QR_TRY(qr__q_qlconv_check(c, &g, &nhwc));
    int64_t d[QR_MAX_RANK];
    qr__q_conv_out_dims(&g, nhwc, d);
    const QrTensor *yz = qr_op_in(c, 7);
    return qr_op_set_out(c, 0, yz ? yz->dtype : c->in[0]->dtype, g.nsp + 2, d);
}

static QrStatus qr__q_qlconv_exec(QrOpCtx *c) {
    qr__q_kern_ready();
    QrQConv g;
    QrQConvOut o = { 0 };
    QR_TRY(qr__q_qlconv_check(c, &g, &o.nhwc));
    int32_t *wz;
    float *ws, *mult;
    QR_TRY(qr__q_load_scales(c, 4, &ws));
    QR_TRY(qr__q_load_zps(c, 5, 1, &wz));
    QR_TRY(qr__q_alloc(c, (size_t)g.M, sizeof *mult, (void **)&mult));
    float xs = qr__q_scalar_f(c, 1), ys = qr__q_scalar_f(c, 6);
    int64_t wss = c->in[4]->numel > 1 ? 1 : 0, nwz = qr_op_in(c, 5) ? c->in[5]->numel : 1;
    for (int64_t m = 0; m < g.M; m++) mult[m] = qr_quant_multiplier(xs, ws[m * wss], ys);
    o.mult = mult;
    o.bias = qr_op_in(c, 8) ? (const int32_t *)c->in[8]->data : NULL;
    o.yz = qr__q_scalar_zp(c, 7);
    QrQConvIn in = { c->in[0], c->in[3], o.nhwc, qr__q_scalar_zp(c, 2), wz, nwz > 1 ? 1 : 0, NULL };
    const QrTensor *pk = qr__q_is_int_op(c) ? qr_op_in(c, 9) : NULL;
    if (pk && pk->dtype == QR_DT_U8 && pk->rank == 1) in.w_packed = pk->data;
    o.kind = qr_quant_conv_acc(in.x->dtype, in.xz, in.w, wz, nwz, in.wzs, g.M, g.Cg * g.k_sz, o.bias);
    QR_TRY(qr__q_out_range(c, c->out[0]->dtype, &o.r));
    return qr__q_conv_run(c, &g, &in, &o);
}

/* ConvInteger(x, w, [x_zero_point], [w_zero_point]) -> int32: the convolution of (x - x_zp)
 * with (w - w_zp[m]); x_zero_point per-tensor, w_zero_point per-tensor or per output channel. */
static QrStatus qr__q_convint_check(QrOpCtx *c, QrQConv *g) {
    const QrTensor *x = c->in[0], *w = qr_op_in(c, 1);
    if (!w) return qr_op_fail(c, QR_ERR_INVALID, "input w is required");
    if (!qr__q_is_8bit(x->dtype) || !qr__q_is_8bit(w->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "x and w have types %s and %s (int8/uint8 supported)",
                          qr_dtype_name(x->dtype), qr_dtype_name(w->dtype));
    QR_TRY(qr__q_conv_geom(c, x->rank, x->dims, w, g));
    QR_TRY(qr__q_need_scalar(c, 2, "x_zero_point"));
    QR_TRY(qr__q_need_per_m(c, 3, g->M, "w_zero_point"));
    QR_TRY(qr__q_need_zp_type(c, 2, x->dtype, "x_zero_point"));
    return qr__q_need_zp_type(c, 3, w->dtype, "w_zero_point");
}

static QrStatus qr__q_convint_shape(QrOpCtx *c) {
    QrQConv g;
    QR_TRY(qr__q_convint_check(c, &g));
    int64_t d[QR_MAX_RANK];
    qr__q_conv_out_dims(&g, false, d);
    return qr_op_set_out(c, 0, QR_DT_S32, g.nsp + 2, d);
}

static QrStatus qr__q_convint_exec(QrOpCtx *c) {
    qr__q_kern_ready();
    QrQConv g;
    QR_TRY(qr__q_convint_check(c, &g));
    int32_t *wz;
    QR_TRY(qr__q_load_zps(c, 3, 1, &wz));
    int64_t nwz = qr_op_in(c, 3) ? c->in[3]->numel : 1;
    QrQConvIn in = { c->in[0], c->in[1], false, qr__q_scalar_zp(c, 2), wz, nwz > 1 ? 1 : 0, NULL };
    QrQConvOut o = { .kind = QR_QACC_S32 };
    return qr__q_conv_run(c, &g, &in, &o);
}

/* ==== com.microsoft elementwise: QLinearAdd, QLinearMul ============================== */

/* QLinearAdd / QLinearMul(A, A_scale, [A_zp], B, B_scale, [B_zp], C_scale, [C_zp]) with numpy
 * broadcasting; all parameters per-tensor, A and B of one 8-bit type. The internal ops take any
 * mix of 8/16-bit A, B and C (C's type is C_zero_point's). */
static QrStatus qr__q_qlbin_shape(QrOpCtx *c) {
    const QrTensor *a = c->in[0], *b = qr_op_in(c, 3), *cz = qr_op_in(c, 7);
    bool wide = qr__q_is_int_op(c);
    if (!b) return qr_op_fail(c, QR_ERR_INVALID, "input B is required");
    if (wide ? !qr__q_is_act(a->dtype) || !qr__q_is_act(b->dtype) : !qr__q_is_8bit(a->dtype) || a->dtype != b->dtype)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "A and B have types %s and %s (%s)", qr_dtype_name(a->dtype),
                          qr_dtype_name(b->dtype),
                          wide ? "int8/uint8/int16/uint16 expected" : "both int8 or both uint8 expected");
    static const char *const names[8] = { "A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale",
                                          "C_zero_point" };
    for (int i = 1; i < 8; i++) {
        if (i == 3) continue;
        if (i == 1 || i == 4 || i == 6) QR_TRY(qr__q_need_scale(c, i, names[i]));
        else if (i != 7 || !wide) QR_TRY(qr__q_need_zp_type(c, i, i == 5 ? b->dtype : a->dtype, names[i]));
        QR_TRY(qr__q_need_scalar(c, i, names[i]));
    }
    if (wide && cz && !qr__q_is_act(cz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "C_zero_point has type %s", qr_dtype_name(cz->dtype));
    const QrTensor *ts[2] = { a, b };
    int rank;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr_op_broadcast(c, 2, ts, &rank, dims));
    return qr_op_set_out(c, 0, wide && cz ? cz->dtype : a->dtype, rank, dims);
}

/* Rounds half to even and saturates like cvtps2dq followed by packs/packus: out-of-range
 * and NaN floats become INT32_MIN first, i.e. the low end. */
static inline int32_t qr__q_cvt_pack(float v, QrQuantRange r) {
    if (!(v >= -2147483648.0f && v < 2147483648.0f)) return r.lo;
    int32_t i = (int32_t)qr_quant_round_f32(v);
    return i < r.lo ? r.lo : i > r.hi ? r.hi : i;
}

enum { QR_QBIN_GENERAL, QR_QBIN_A_SCALAR, QR_QBIN_B_SCALAR };

/* Which of ORT's three broadcast loops (both spans, scalar A, scalar B) computes the output;
 * QLinearAdd rounds differently in them. A scalar input wins (A first); otherwise the innermost
 * output dim longer than 1 decides. */
static int qr__q_bin_mode(const QrTensor *a, const QrTensor *b, const QrTensor *y) {
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

/* The per-element float results of ORT's kernels (see qr__q_qlbin_exec). */
typedef struct QrQBin {
    bool mul;
    int mode;
    float ra, rb, fixed;        /* add: ratios A/C, B/C and the folded constant */
    float ratio, zc;            /* mul: A*B/C and C's zero point */
    int32_t za, zb;
} QrQBin;

/* a * b rounded to float32 on its own: never contracted into an FMA with the following add,
 * whatever -ffp-contract and the target say, because ORT's SSE kernels round it separately. */
static inline float qr__q_mul_rn(float a, float b) {
    float p = a * b;
    QR__K_ROUNDED(p);
    return p;
}

static inline float qr__q_bin_value(const QrQBin *q, int32_t a, int32_t b) {
    if (q->mul) return qr__q_mul_rn((float)((int64_t)(a - q->za) * (b - q->zb)), q->ratio) + q->zc;
    switch (q->mode) {
    case QR_QBIN_A_SCALAR: return fmaf((float)b, q->rb, q->fixed + qr__q_mul_rn((float)a, q->ra));
    case QR_QBIN_B_SCALAR: return fmaf((float)a, q->ra, q->fixed + qr__q_mul_rn((float)b, q->rb));
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

static void qr__q_add_task(void *ctx, int64_t t, int tid) {
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
static QrStatus qr__q_qlbin_exec(QrOpCtx *c, bool mul) {
    qr__q_kern_ready();
    const QrTensor *a = c->in[0], *b = c->in[3];
    QrTensor *y = c->out[0];
    QrQBin q = { 0 };
    q.mul = mul;
    float sa = qr__q_scalar_f(c, 1), sb = qr__q_scalar_f(c, 4), sc = qr__q_scalar_f(c, 6);
    q.za = qr__q_scalar_zp(c, 2);
    q.zb = qr__q_scalar_zp(c, 5);
    int32_t zc = qr__q_scalar_zp(c, 7);
    q.ra = sa / sc;
    q.rb = sb / sc;
    q.fixed = (float)zc - (qr__q_mul_rn(q.ra, (float)q.za) + qr__q_mul_rn(q.rb, (float)q.zb));
    q.ratio = sa * sb / sc;
    q.zc = (float)zc;
    q.mode = qr__q_bin_mode(a, b, y);
    QrQuantRange r;
    QR_TRY(qr__q_out_range(c, y->dtype, &r));
    int rank = y->rank;
    int64_t sta[QR_MAX_RANK], stb[QR_MAX_RANK], idx[QR_MAX_RANK] = { 0 };
    qr_broadcast_strides(a, rank, y->dims, sta);
    qr_broadcast_strides(b, rank, y->dims, stb);
    int64_t inner = rank ? y->dims[rank - 1] : 1, rows = inner ? y->numel / inner : 0;
    int64_t sa_in = rank ? sta[rank - 1] : 0, sb_in = rank ? stb[rank - 1] : 0, ia = 0, ib = 0;
    const bool k8 = !mul && qr__q_is_8bit(a->dtype) && qr__q_is_8bit(b->dtype) && qr__q_is_8bit(y->dtype);
    QrQBinJob job = { .a = a, .b = b, .y = y };
    if (k8) job.p = (QrQ8AddParams){ q.ra, q.rb, q.fixed, q.mode, a->dtype == QR_DT_S8, b->dtype == QR_DT_S8, r.lo, r.hi };
    if (k8 && a->numel == y->numel && b->numel == y->numel) {   /* no broadcasting: one span, split over the pool */
        job.chunk = 1 << 13;
        int64_t nt = (y->numel + job.chunk - 1) / job.chunk;
        if (nt > 1) qr_pool_for(nt, qr__q_add_task, &job);
        else qr__q_add_task(&job, 0, 0);
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
            float v = qr__q_bin_value(&q, qr__q_geti(a, ia + j * sa_in), qr__q_geti(b, ib + j * sb_in));
            qr__q_seti(y, row * inner + j, qr__q_cvt_pack(v, r));
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

static QrStatus qr__q_qladd_exec(QrOpCtx *c) { return qr__q_qlbin_exec(c, false); }
static QrStatus qr__q_qlmul_exec(QrOpCtx *c) { return qr__q_qlbin_exec(c, true); }

/* ==== com.microsoft lookup-table ops: QLinearSigmoid, QLinearLeakyRelu ================ */

/* ORT builds a 256-entry table: dequantize every byte (x_scale * (x - x_zp)), apply f in
 * float32, quantize with MlasQuantizeLinear; the op is then a table lookup. */
typedef float (*QrQUnaryFn)(float v, float arg);

static void qr_quant_build_table(uint8_t table[256], QrDType dt, float xs, int32_t xz, float ys, int32_t yz,
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
static float qr_quant_logistic_f32(float x, float unused) {
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

static float qr__q_leaky(float v, float alpha) { return v >= 0.0f ? v : alpha * v; }

static QrStatus qr__q_qlunary_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    if (!qr__q_is_8bit(x->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "X has type %s (int8/uint8 supported)", qr_dtype_name(x->dtype));
    QR_TRY(qr__q_need_scale(c, 1, "X_scale"));
    QR_TRY(qr__q_need_scale(c, 3, "Y_scale"));
    static const char *const names[5] = { "X", "X_scale", "X_zero_point", "Y_scale", "Y_zero_point" };
    for (int i = 1; i < 5; i++) QR_TRY(qr__q_need_scalar(c, i, names[i]));
    QR_TRY(qr__q_need_zp_type(c, 2, x->dtype, "X_zero_point"));
    QR_TRY(qr__q_need_zp_type(c, 4, x->dtype, "Y_zero_point"));
    return qr_op_set_out(c, 0, x->dtype, x->rank, x->dims);
}

static QrStatus qr__q_qlunary_exec(QrOpCtx *c, QrQUnaryFn fn, float arg) {
    const QrTensor *x = c->in[0];
    uint8_t table[256];
    qr_quant_build_table(table, x->dtype, qr__q_scalar_f(c, 1), qr__q_scalar_zp(c, 2), qr__q_scalar_f(c, 3),
                         qr__q_scalar_zp(c, 4), fn, arg);
    const uint8_t *px = x->data;
    uint8_t *py = c->out[0]->data;
    for (int64_t i = 0; i < x->numel; i++) py[i] = table[px[i]];
    return QR_OK;
}

static QrStatus qr__q_qlsigmoid_exec(QrOpCtx *c) { return qr__q_qlunary_exec(c, qr_quant_logistic_f32, 0.0f); }
static QrStatus qr__q_qlleaky_exec(QrOpCtx *c) {
    return qr__q_qlunary_exec(c, qr__q_leaky, qr_attr_float(c->node, "alpha", 0.01f));
}

/* ==== com.microsoft QLinearConcat =================================================== */

/* QLinearConcat(Y_scale, Y_zp, (X, X_scale, X_zp)...) with `axis`: inputs whose scale and
 * zero point equal Y's are copied, the others requantized through a 256-entry table. The internal
 * op takes 8/16-bit inputs of any mix and requantizes element by element with the table's formula
 * (quantize(x_scale * (x - x_zp)) with Y's parameters, clamped to the output range). */
static QrStatus qr__q_qlconcat_check(QrOpCtx *c, int *axis, int64_t *dims) {
    if (c->n_in < 5 || (c->n_in - 2) % 3)
        return qr_op_fail(c, QR_ERR_INVALID, "expected Y_scale, Y_zero_point and (tensor, scale, zero point) triples, "
                          "got %d inputs", c->n_in);
    const QrTensor *yz = qr_op_in(c, 1);
    bool wide = qr__q_is_int_op(c);
    if (!yz) return qr_op_fail(c, QR_ERR_INVALID, "Y_zero_point is required");
    if (!qr__q_ok_act(c, yz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "Y_zero_point has type %s (%s)", qr_dtype_name(yz->dtype),
                          qr__q_types_msg(c));
    QR_TRY(qr__q_need_scale(c, 0, "Y_scale"));
    QR_TRY(qr__q_need_scalar(c, 0, "Y_scale"));
    QR_TRY(qr__q_need_scalar(c, 1, "Y_zero_point"));
    if (!qr_node_attr(c->node, "axis")) return qr_op_fail(c, QR_ERR_INVALID, "attribute axis is required");
    const QrTensor *first = NULL;
    for (int i = 2; i < c->n_in; i += 3) {
        const QrTensor *t = qr_op_in(c, i);
        if (!t) return qr_op_fail(c, QR_ERR_INVALID, "input %d (tensor) is required", i);
        if (wide ? !qr__q_is_act(t->dtype) : t->dtype != yz->dtype)
            return qr_op_fail(c, QR_ERR_INVALID, "input %d has type %s, expected %s", i, qr_dtype_name(t->dtype),
                              wide ? "int8/uint8/int16/uint16" : qr_dtype_name(yz->dtype));
        QR_TRY(qr__q_need_scale(c, i + 1, "scale"));
        QR_TRY(qr__q_need_scalar(c, i + 1, "scale"));
        QR_TRY(qr__q_need_scalar(c, i + 2, "zero point"));
        QR_TRY(qr__q_need_zp_type(c, i + 2, t->dtype, "zero point"));
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

static QrStatus qr__q_qlconcat_shape(QrOpCtx *c) {
    int axis;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr__q_qlconcat_check(c, &axis, dims));
    return qr_op_set_out(c, 0, c->in[1]->dtype, c->in[2]->rank, dims);
}

static QrStatus qr__q_qlconcat_exec(QrOpCtx *c) {
    int axis;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr__q_qlconcat_check(c, &axis, dims));
    QrTensor *y = c->out[0];
    int rank = y->rank;
    int64_t outer = 1, after = 1;
    for (int d = 0; d < axis; d++) outer *= y->dims[d];
    for (int d = axis + 1; d < rank; d++) after *= y->dims[d];
    int64_t ypitch = y->dims[axis] * after, yoff = 0;
    float ys = qr__q_scalar_f(c, 0);
    int32_t yz = qr__q_scalar_zp(c, 1);
    if (qr__q_is_int_op(c)) {
        QrQuantRange r;
        QR_TRY(qr__q_out_range(c, y->dtype, &r));
        for (int i = 2; i < c->n_in; i += 3) {
            const QrTensor *t = c->in[i];
            float xs = qr__q_scalar_f(c, i + 1);
            int32_t xz = qr__q_scalar_zp(c, i + 2);
            int64_t pitch = t->dims[axis] * after;
            for (int64_t o = 0; o < outer; o++)
                for (int64_t j = 0; j < pitch; j++) {
                    float d = xs * (float)(qr__q_geti(t, o * pitch + j) - xz);
                    qr__q_seti(y, o * ypitch + yoff + j, qr_quant_quantize_f32(d, ys, yz, r));
                }
            yoff += pitch;
        }
        return QR_OK;
    }
    uint8_t table[256];
    for (int i = 2; i < c->n_in; i += 3) {
        const QrTensor *t = c->in[i];
        float xs = qr__q_scalar_f(c, i + 1);
        int32_t xz = qr__q_scalar_zp(c, i + 2);
        bool copy = xs == ys && xz == yz;
        if (!copy) qr_quant_build_table(table, t->dtype, xs, xz, ys, yz, NULL, 0.0f);
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
static QrStatus qr__q_pool_params(const QrOpCtx *c, bool spatial) {
    const QrTensor *x = c->in[0], *yz = qr_op_in(c, 4);
    bool wide = qr__q_is_int_op(c);
    if (!qr__q_ok_act(c, x->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "X has type %s (%s)", qr_dtype_name(x->dtype), qr__q_types_msg(c));
    if (spatial && x->rank < 3)
        return qr_op_fail(c, QR_ERR_SHAPE, "X must have rank >= 3 (N, C, spatial...), got %d", x->rank);
    QR_TRY(qr__q_need_scale(c, 1, "x_scale"));
    QR_TRY(qr__q_need_scale(c, 3, "y_scale"));
    static const char *const names[5] = { "X", "x_scale", "x_zero_point", "y_scale", "y_zero_point" };
    for (int i = 1; i < 5; i++) QR_TRY(qr__q_need_scalar(c, i, names[i]));
    QR_TRY(qr__q_need_zp_type(c, 2, x->dtype, "x_zero_point"));
    if (wide && yz && !qr__q_is_act(yz->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "y_zero_point has type %s", qr_dtype_name(yz->dtype));
    return wide ? QR_OK : qr__q_need_zp_type(c, 4, x->dtype, "y_zero_point");
}

/* Output type of a pool-like op: X's, or y_zero_point's for the internal ops. */
static QrDType qr__q_pool_out_type(const QrOpCtx *c) {
    const QrTensor *yz = qr_op_in(c, 4);
    return qr__q_is_int_op(c) && yz ? yz->dtype : c->in[0]->dtype;
}

/* QLinearGlobalAveragePool (channels_last): per (n, c), acc = sum(x) - x_zp * image_size
 * (int32) requantized with x_scale / (y_scale * image_size), as MLAS does. 16-bit inputs
 * (internal op) sum in int64. */
static QrStatus qr__q_qlgap_shape(QrOpCtx *c) {
    QR_TRY(qr__q_pool_params(c, true));
    const QrTensor *x = c->in[0];
    bool nhwc = qr_attr_int(c->node, "channels_last", 0) != 0;
    int64_t d[QR_MAX_RANK];
    for (int i = 0; i < x->rank; i++) d[i] = x->dims[i];
    for (int i = nhwc ? 1 : 2; i < (nhwc ? x->rank - 1 : x->rank); i++) d[i] = 1;
    return qr_op_set_out(c, 0, qr__q_pool_out_type(c), x->rank, d);
}

static QrStatus qr__q_qlgap_exec(QrOpCtx *c) {
    QR_TRY(qr__q_pool_params(c, true));
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    bool nhwc = qr_attr_int(c->node, "channels_last", 0) != 0;
    int64_t N = x->dims[0], C = nhwc ? x->dims[x->rank - 1] : x->dims[1], img = 1;
    for (int i = nhwc ? 1 : 2; i < (nhwc ? x->rank - 1 : x->rank); i++) img *= x->dims[i];
    if (img == 0 && N * C != 0) return qr_op_fail(c, QR_ERR_SHAPE, "cannot average over an empty spatial extent");
    if (img >= ((int64_t)1 << 24))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "image size %lld is too large (ORT's limit is 2^24)", (long long)img);
    float mult = qr__q_scalar_f(c, 1) / (qr__q_scalar_f(c, 3) * (float)img);
    int32_t xz = qr__q_scalar_zp(c, 2), yz = qr__q_scalar_zp(c, 4);
    QrQuantRange r;
    QR_TRY(qr__q_out_range(c, y->dtype, &r));
    bool wide = !qr__q_is_8bit(x->dtype);
    uint32_t bias = (uint32_t)-(int64_t)xz * (uint32_t)img;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            int64_t x0 = nhwc ? n * img * C + ch : (n * C + ch) * img, xs = nhwc ? C : 1;
            if (wide) {     /* sum of (x - x_zp) in int64: 65535 * 2^24 does not fit int32 */
                int64_t acc = 0;
                for (int64_t p = 0; p < img; p++) acc += qr__q_geti(x, x0 + p * xs) - xz;
                qr__q_seti(y, n * C + ch, qr_quant_requantize_s64(acc, mult, yz, r));
                continue;
            }
            uint32_t acc = bias;
            for (int64_t p = 0; p < img; p++) acc += (uint32_t)qr__q_geti(x, x0 + p * xs);
            qr__q_seti(y, n * C + ch, qr_quant_requantize((int32_t)acc, mult, yz, r));
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
static QrStatus qr__q_pool_geom(QrOpCtx *c, bool allow_dilation, QrQPool *g) {
    QR_TRY(qr__q_pool_params(c, true));
    const QrTensor *x = c->in[0];
    memset(g, 0, sizeof *g);
    g->nhwc = qr_attr_int(c->node, "channels_last", 0) != 0;
    g->include_pad = qr_attr_int(c->node, "count_include_pad", 0) != 0;
    int64_t xd[QR_MAX_RANK], pads[2 * QR_MAX_RANK];
    qr__q_nchw_dims(x, g->nhwc, xd);
    g->nsp = x->rank - 2;
    g->N = xd[0];
    g->C = xd[1];
    const int64_t *ks;
    if (qr_attr_ints(c->node, "kernel_shape", &ks) != g->nsp)
        return qr_op_fail(c, QR_ERR_INVALID, "kernel_shape must have %d values", g->nsp);
    QR_TRY(qr__q_ints_attr(c, "kernel_shape", g->nsp, 1, 1, g->k));
    QR_TRY(qr__q_ints_attr(c, "strides", g->nsp, 1, 1, g->st));
    QR_TRY(qr__q_ints_attr(c, "pads", 2 * g->nsp, 0, 0, pads));
    QR_TRY(qr__q_ints_attr(c, "dilations", g->nsp, 1, 1, g->dl));
    for (int i = 0; i < g->nsp && !allow_dilation; i++)
        if (g->dl[i] != 1) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "dilations other than 1 are not supported");
    bool ceil_mode = qr_attr_int(c->node, "ceil_mode", 0) != 0;
    const char *ap = qr_attr_str(c->node, "auto_pad", "NOTSET");
    g->in_sz = g->out_sz = g->k_sz = 1;
    for (int i = 0; i < g->nsp; i++) {
        g->in[i] = xd[2 + i];
        g->pb[i] = pads[i];
        QR_TRY(qr__q_out_dim(c, ap, g->in[i], g->k[i], g->st[i], g->dl[i], &g->pb[i], pads[g->nsp + i], ceil_mode,
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
    /* only the taps inside x are visited (qr__q_pool_taps, the q8 kernels) */
    double taps = 1, pos = (double)g->N * (double)g->C * (double)g->out_sz;
    for (int i = 0; i < g->nsp; i++) taps *= (double)QR_MIN(g->k[i], g->in[i]);
    char what[160];
    snprintf(what, sizeof what, "%.3g output positions x %.3g taps inside the input", pos, taps);
    return qr_op_check_work(c, pos * taps, what);
}

static QrStatus qr__q_pool_shape(QrOpCtx *c, bool allow_dilation) {
    QrQPool g;
    QR_TRY(qr__q_pool_geom(c, allow_dilation, &g));
    int64_t d[QR_MAX_RANK];
    d[0] = g.N;
    d[g.nhwc ? g.nsp + 1 : 1] = g.C;
    for (int i = 0; i < g.nsp; i++) d[(g.nhwc ? 1 : 2) + i] = g.out[i];
    return qr_op_set_out(c, 0, qr__q_pool_out_type(c), g.nsp + 2, d);
}

static QrStatus qr__q_qlavgpool_shape(QrOpCtx *c) { return qr__q_pool_shape(c, true); }
static QrStatus qr__q_qmaxpool_shape(QrOpCtx *c) { return qr__q_pool_shape(c, true); }

/* Visits the taps of output position oidx (row-major over the window, dilation d, taps outside
 * the input skipped) and returns their count; fn(user, flat spatial input index) per tap. */
typedef void (*QrQTapFn)(void *user, int64_t sp);
static int64_t qr__q_pool_taps(const QrQPool *g, const int64_t *oidx, QrQTapFn fn, void *user) {
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

static void qr__q_pool_tap_sum(void *user, int64_t sp) {
    QrQPoolAcc *a = user;
    a->sum += a->xscale * (float)(qr__q_geti(a->x, a->x0 + sp * a->xs) - a->xz);
}

static void qr__q_pool_tap_max(void *user, int64_t sp) {
    QrQPoolAcc *a = user;
    int32_t v = qr__q_geti(a->x, a->x0 + sp * a->xs);
    if (!a->any || v > a->best) a->best = v;
    a->any = true;
}

/* Calls emit(y index, accumulator) for every output of a pool. */
typedef void (*QrQPoolEmit)(QrOpCtx *c, int64_t yi, const QrQPoolAcc *a, int64_t taps, const void *user);
static void qr__q_pool_run(QrOpCtx *c, const QrQPool *g, QrQTapFn tap, QrQPoolEmit emit, const void *user) {
    QrQPoolAcc a = { .x = c->in[0], .xscale = qr__q_scalar_f(c, 1), .xz = qr__q_scalar_zp(c, 2) };
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t ch = 0; ch < g->C; ch++) {
            a.x0 = g->nhwc ? n * g->in_sz * g->C + ch : (n * g->C + ch) * g->in_sz;
            a.xs = g->nhwc ? g->C : 1;
            int64_t oidx[QR_MAX_RANK] = { 0 };
            for (int64_t op = 0; op < g->out_sz; op++) {
                a.sum = 0.0f;
                a.any = false;
                int64_t taps = qr__q_pool_taps(g, oidx, tap, &a);
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
static int64_t qr__q_pool_padded_taps(const QrQPool *g, int64_t yi) {
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

static void qr__q_avgpool_emit(QrOpCtx *c, int64_t yi, const QrQPoolAcc *a, int64_t taps, const void *user) {
    const QrQAvgOut *o = user;
    int64_t div = !o->include_pad ? taps : o->g->dilated ? qr__q_pool_padded_taps(o->g, yi) : o->k_sz;
    float avg = a->sum / (float)div;
    qr__q_seti(c->out[0], yi, qr__q_cvt_pack(avg / o->ys + (float)o->yz, o->r));
}

static QrStatus qr__q_qlavgpool_exec(QrOpCtx *c) {
    QrQPool g;
    QR_TRY(qr__q_pool_geom(c, true, &g));
    QrQAvgOut o = { qr__q_scalar_f(c, 3), qr__q_scalar_zp(c, 4), g.k_sz, g.include_pad, { 0, 0 }, &g };
    QR_TRY(qr__q_out_range(c, c->out[0]->dtype, &o.r));
    qr__q_pool_run(c, &g, qr__q_pool_tap_sum, qr__q_avgpool_emit, &o);
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
static QrStatus qr__q_dqgemm_check(QrOpCtx *c, QrQDqGemm *g) {
    const QrTensor *a = c->in[0], *b = c->in[1], *s = c->in[2], *z = qr_op_in(c, 3), *cc = qr_op_in(c, 4);
    if (!a || !b || !s) return qr_op_fail(c, QR_ERR_INVALID, "A, Bq and b_scale are required");
    if (!qr__q_is_8bit(b->dtype) || b->rank != 2) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "Bq must be an 8-bit matrix");
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

static QrStatus qr__q_dqgemm_shape(QrOpCtx *c) {
    QrQDqGemm g;
    QR_TRY(qr__q_dqgemm_check(c, &g));
    int64_t dims[2] = { g.M, g.N };
    return qr_op_set_out(c, 0, QR_DT_F32, 2, dims);
}

static QrStatus qr__q_dqgemm_exec(QrOpCtx *c) {
    QrQDqGemm g;
    QR_TRY(qr__q_dqgemm_check(c, &g));
    const QrTensor *a = c->in[0], *bq = c->in[1], *cc = qr_op_in(c, 4);
    const int64_t M = g.M, K = g.K, N = g.N, ss = c->in[2]->numel > 1 ? 1 : 0;
    const float *sc = c->in[2]->data;
    int32_t *zp;   /* the zero points as int32 (one 0 when absent: then per-tensor) */
    QR_TRY(qr__q_load_zps(c, 3, 1, &zp));
    const int64_t zs = qr_op_in(c, 3) ? ss : 0;
    const bool bs = qr__q_is_signed(bq->dtype);
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
    if (st == QR_OK) st = qr__nn_gemm_f32_as(&fc, false);
    qr_tensor_free_data(&bf);
    return st;
}

/* qreport.int.QMaxPool(X, x_scale, [x_zp], y_scale, [y_zp]) with MaxPool's attributes: the
 * integer maximum of each window, requantized as DequantizeLinear -> QuantizeLinear would
 * (quantize(x_scale * (m - x_zp)) with y's parameters; an identity when they are equal) and
 * clamped to [qmin, qmax]. Quantization is monotone, so this equals DQ -> MaxPool -> Q exactly. */
typedef struct QrQReq { float xs, ys; int32_t xz, yz; QrQuantRange r; } QrQReq;

static inline int32_t qr__q_requant1(const QrQReq *q, int32_t v) {
    return qr_quant_quantize_f32(q->xs * (float)(v - q->xz), q->ys, q->yz, q->r);
}

static QrStatus qr__q_req_params(QrOpCtx *c, QrQReq *q) {
    q->xs = qr__q_scalar_f(c, 1);
    q->xz = qr__q_scalar_zp(c, 2);
    q->ys = qr__q_scalar_f(c, 3);
    q->yz = qr__q_scalar_zp(c, 4);
    return qr__q_out_range(c, c->out[0]->dtype, &q->r);
}

static void qr__q_maxpool_emit(QrOpCtx *c, int64_t yi, const QrQPoolAcc *a, int64_t taps, const void *user) {
    const QrQReq *q = user;
    QR_UNUSED(taps);
    qr__q_seti(c->out[0], yi, a->any ? qr__q_requant1(q, a->best) : q->r.lo);
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

static void qr__q_maxpool_task(void *ctx, int64_t t, int tid) {
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

static QrStatus qr__q_qmaxpool_exec(QrOpCtx *c) {
    qr__q_kern_ready();
    QrQPool g;
    QrQReq q;
    QR_TRY(qr__q_pool_geom(c, true, &g));
    QR_TRY(qr__q_req_params(c, &q));
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    if (g.nsp == 2 && !g.nhwc && qr__q_is_8bit(x->dtype) && qr__q_is_8bit(y->dtype) && g.out_sz > 0) {
        QrQ8Win p = { NULL, x->dtype == QR_DT_S8, 0, g.in[0], g.in[1], g.k[0], g.k[1], g.st[0], g.st[1], g.dl[0],
                      g.dl[1], g.pb[0], g.pb[1], g.out[0], g.out[1] };
        if (qr_q8_win_covered(&p)) {
            QrQMaxJob *j;
            QR_TRY(qr__q_alloc(c, 1, sizeof *j, (void **)&j));
            *j = (QrQMaxJob){ .g = &g, .x = x, .y = y };
            j->identity = true;
            for (int v = 0; v < 256; v++) {
                j->table[v] = (uint8_t)qr__q_requant1(&q, p.x_signed ? (int8_t)v : v);
                j->identity = j->identity && j->table[v] == v;
            }
            const int threads = qr_pool_threads();
            size_t tot = 0;
            qr__q_wadd(&tot, (int64_t)qr_q8_maxpool2d_scratch(&p), 1);
            j->slot_bytes = tot;
            size_t all = 0;
            if (tot != SIZE_MAX) qr__q_wadd(&all, (int64_t)tot, (size_t)threads);
            else all = SIZE_MAX;
            QR_TRY(qr__q_work(c, all, &j->slots));
            j->per_task = QR_MAX(1, (int64_t)(65536.0 / QR_MAX(1.0, (double)g.out_sz * (double)g.k_sz)));   /* k_sz may be ~2^62 */
            int64_t nt = (g.N * g.C + j->per_task - 1) / j->per_task;
            if (nt > 1) qr_pool_for(nt, qr__q_maxpool_task, j);
            else if (nt == 1) qr__q_maxpool_task(j, 0, 0);
            return QR_OK;
        }
    }
    qr__q_pool_run(c, &g, qr__q_pool_tap_max, qr__q_maxpool_emit, &q);
    return QR_OK;
}

/* qreport.int.QRequantize(X, x_scale, [x_zp], y_scale, [y_zp]): y = clamp(quantize(x_scale *
 * (x - x_zp)), qmin, qmax) element by element: DQ -> Relu/Clip -> Q (the clamp is the activation)
 * or a plain change of quantization parameters. */
static QrStatus qr__q_qrequant_shape(QrOpCtx *c) {
    QR_TRY(qr__q_pool_params(c, false));
    return qr_op_set_out(c, 0, qr__q_pool_out_type(c), c->in[0]->rank, c->in[0]->dims);
}

static QrStatus qr__q_qrequant_exec(QrOpCtx *c) {
    QrQReq q;
    QR_TRY(qr__q_pool_params(c, false));
    QR_TRY(qr__q_req_params(c, &q));
    const QrTensor *x = c->in[0];
    for (int64_t i = 0; i < x->numel; i++) qr__q_seti(c->out[0], i, qr__q_requant1(&q, qr__q_geti(x, i)));
    return QR_OK;
}

/* ==== table ======================================================================= */

static const QrOpDef qr_ops_quant[] = {
    { "", "QuantizeLinear", 2, 3, 1, 1, qr__q_quantize_shape, qr__q_quantize_exec, 0 },
    { "", "DequantizeLinear", 2, 3, 1, 1, qr__q_dequantize_shape, qr__q_dequantize_exec, 0 },
    { "", "DynamicQuantizeLinear", 1, 1, 1, 3, qr__q_dynquant_shape, qr__q_dynquant_exec, 0 },
    { "", "QLinearMatMul", 8, 8, 1, 1, qr__q_qlmatmul_shape, qr__q_qlmatmul_exec, 0 },
    { "", "MatMulInteger", 2, 4, 1, 1, qr__q_matmulint_shape, qr__q_matmulint_exec, 0 },
    { "", "QLinearConv", 8, 9, 1, 1, qr__q_qlconv_shape, qr__q_qlconv_exec, 0 },
    { "", "ConvInteger", 2, 4, 1, 1, qr__q_convint_shape, qr__q_convint_exec, 0 },
    { "com.microsoft", "QuantizeLinear", 2, 3, 1, 1, qr__q_quantize_shape, qr__q_quantize_exec, 0 },
    { "com.microsoft", "DequantizeLinear", 2, 3, 1, 1, qr__q_dequantize_shape, qr__q_dequantize_exec, 0 },
    { "com.microsoft", "QLinearConv", 8, 9, 1, 1, qr__q_qlconv_shape, qr__q_qlconv_exec, 0 },
    { "com.microsoft", "QLinearAdd", 7, 8, 1, 1, qr__q_qlbin_shape, qr__q_qladd_exec, 0 },
    { "com.microsoft", "QLinearMul", 7, 8, 1, 1, qr__q_qlbin_shape, qr__q_qlmul_exec, 0 },
    { "com.microsoft", "QLinearConcat", 5, -1, 1, 1, qr__q_qlconcat_shape, qr__q_qlconcat_exec, 0 },
    { "com.microsoft", "QLinearGlobalAveragePool", 5, 5, 1, 1, qr__q_qlgap_shape, qr__q_qlgap_exec, 0 },
    { "com.microsoft", "QLinearAveragePool", 4, 5, 1, 1, qr__q_qlavgpool_shape, qr__q_qlavgpool_exec, 0 },
    { "com.microsoft", "QLinearSigmoid", 4, 5, 1, 1, qr__q_qlunary_shape, qr__q_qlsigmoid_exec, 0 },
    { "com.microsoft", "QLinearLeakyRelu", 4, 5, 1, 1, qr__q_qlunary_shape, qr__q_qlleaky_exec, 0 },
    { "com.microsoft", "QGemm", 6, 9, 1, 1, qr__q_qgemm_shape, qr__q_qgemm_exec, 0 },
    /* qreport's integer lowering (QR_QUANT_INT_DOMAIN): the same layouts, 8/16-bit, output clamp */
    /* QLinearConv's input 9 (optional): its weights packed by the lowering for this level's
     * channels-last convolution or 8-bit GEMM; checked, not trusted (packed again if it does not fit) */
    { QR_QUANT_INT_DOMAIN, "QLinearConv", 8, 10, 1, 1, qr__q_qlconv_shape, qr__q_qlconv_exec, QR_OPF_WRITES_ALL },
    { QR_QUANT_INT_DOMAIN, "QLinearMatMul", 8, 8, 1, 1, qr__q_qlmatmul_shape, qr__q_qlmatmul_exec, 0 },
    { QR_QUANT_INT_DOMAIN, "QGemm", 6, 9, 1, 1, qr__q_qgemm_shape, qr__q_qgemm_exec, 0 },
    { QR_QUANT_INT_DOMAIN, "QLinearAdd", 7, 8, 1, 1, qr__q_qlbin_shape, qr__q_qladd_exec, QR_OPF_WRITES_ALL },
    { QR_QUANT_INT_DOMAIN, "QLinearMul", 7, 8, 1, 1, qr__q_qlbin_shape, qr__q_qlmul_exec, QR_OPF_WRITES_ALL },
    { QR_QUANT_INT_DOMAIN, "QLinearConcat", 5, -1, 1, 1, qr__q_qlconcat_shape, qr__q_qlconcat_exec, 0 },
    { QR_QUANT_INT_DOMAIN, "QLinearGlobalAveragePool", 5, 5, 1, 1, qr__q_qlgap_shape, qr__q_qlgap_exec, 0 },
    { QR_QUANT_INT_DOMAIN, "QLinearAveragePool", 4, 5, 1, 1, qr__q_qlavgpool_shape, qr__q_qlavgpool_exec, 0 },
    { QR_QUANT_INT_DOMAIN, "QMaxPool", 4, 5, 1, 1, qr__q_qmaxpool_shape, qr__q_qmaxpool_exec, QR_OPF_WRITES_ALL },
    { QR_QUANT_INT_DOMAIN, "DqGemm", 3, 5, 1, 1, qr__q_dqgemm_shape, qr__q_dqgemm_exec, QR_OPF_WRITES_ALL },
    { QR_QUANT_INT_DOMAIN, "QRequantize", 4, 5, 1, 1, qr__q_qrequant_shape, qr__q_qrequant_exec, 0 },
};
