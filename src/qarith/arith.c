/* qarith/arith — implementation. See arith.h. */

/* Rounds to the nearest integer, ties to even: ONNX's rounding for quantization and what
 * x86 cvtps2dq / ARM fcvtns / nearbyintf give in the default floating-point environment.
 * qreport never changes the rounding mode, so rintf is exact. NaN and Inf pass through. */
static inline float qr_quant_round_f32(float v) { return rintf(v); }

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


/* Element i of an integer tensor as int32 (all quantized storage types; int4/int2 unpacked). */
static inline int32_t qr_quant_geti(const QrTensor *t, int64_t i) {
    switch (t->dtype) {
    case QR_DT_U8: case QR_DT_U4: case QR_DT_U2: return ((const uint8_t *)t->data)[i];
    case QR_DT_S8: case QR_DT_S4: case QR_DT_S2: return ((const int8_t *)t->data)[i];
    case QR_DT_U16: return ((const uint16_t *)t->data)[i];
    case QR_DT_S16: return ((const int16_t *)t->data)[i];
    case QR_DT_S32: return ((const int32_t *)t->data)[i];
    default: return (int32_t)qr_tensor_get_i64(t, i);
    }
}

static inline void qr_quant_seti(QrTensor *t, int64_t i, int32_t v) {
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
static inline float qr_quant_getf(const QrTensor *t, int64_t i) {
    switch (t->dtype) {
    case QR_DT_F32: return ((const float *)t->data)[i];
    case QR_DT_F16: return qr_f16_to_f32(((const uint16_t *)t->data)[i]);
    case QR_DT_BF16: return qr_bf16_to_f32(((const uint16_t *)t->data)[i]);
    case QR_DT_S32: return (float)((const int32_t *)t->data)[i];
    default: return (float)qr_tensor_get_f64(t, i);
    }
}

/* Stores a float32 result into a float tensor, rounding to nearest even for f16/bf16. */
static inline void qr_quant_setf(QrTensor *t, int64_t i, float v) {
    switch (t->dtype) {
    case QR_DT_F32: ((float *)t->data)[i] = v; return;
    case QR_DT_F16: ((uint16_t *)t->data)[i] = qr_tensor_f32_to_f16(v); return;
    case QR_DT_BF16: ((uint16_t *)t->data)[i] = qr_tensor_f32_to_bf16(v); return;
    default: qr_tensor_set_f64(t, i, v);
    }
}

static bool qr_quant_is_8bit(QrDType dt) { return dt == QR_DT_U8 || dt == QR_DT_S8; }

/* Activation types the internal ops read and write. */
static bool qr_quant_is_act(QrDType dt) { return qr_quant_is_8bit(dt) || dt == QR_DT_U16 || dt == QR_DT_S16; }
static bool qr_quant_is_wt(QrDType dt) { return qr_quant_is_act(dt) || dt == QR_DT_U4 || dt == QR_DT_S4; }

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
static int64_t qr_quant_bound_madd(int64_t a, int64_t b, int64_t c) {
    int64_t p;
    if (qr_mul_overflow_i64(a, b, &p) || p > INT64_MAX - c) return INT64_MAX;
    return p + c;
}


#ifdef QR_TESTING
QR_TESTAPI const char *qr_quant_acc_name(QrQuantAcc a) {
    static const char *const names[] = { "none", "s32", "s32-proven", "s64", "f32" };
    return (unsigned)a < QR_ARRAY_LEN(names) ? names[a] : "?";
}
#endif
