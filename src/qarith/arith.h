/* qarith/arith — the quantization arithmetic ONNX defines and ONNX Runtime computes:
 * rounding, saturation ranges, QuantizeLinear of one element, requantization of int32 /
 * int64 accumulators, the accumulator choice, integer/float element access of quantized
 * tensors. Depends on base/ and tensor/ only; ops/ and quant/'s graph passes build on it. */
#ifndef QR_QUANT_ARITH_H
#define QR_QUANT_ARITH_H

/* Saturation range of a quantized integer type. */
typedef struct QrQuantRange { int32_t lo, hi; } QrQuantRange;

/* The integer lowering (quant/lower.c) replaces DequantizeLinear -> op -> QuantizeLinear groups
 * by nodes of this domain. They take the inputs of the matching QLinear* / com.microsoft op and
 * widen it: 8- or 16-bit operands (int4 weights), mixed operand types, and an output clamp
 * (attributes qmin / qmax, the integer image of a fused Relu / Clip). With 8-bit operands they
 * compute exactly what the ONNX Runtime op computes. */
#define QR_QUANT_INT_DOMAIN "qreport.int"

/* How an integer product accumulates (chosen per node by the integer ops; reported by the lowering). */
typedef enum QrQuantAcc {
    QR_QACC_NONE = 0,       /* no sum of products: requantization, max, concatenation */
    QR_QACC_S32,            /* 8-bit operands in int32, wrapping on overflow exactly as ONNX Runtime / MLAS */
    QR_QACC_S32_PROVEN,     /* 16-bit operands in int32: a bound on every partial sum proves it exact */
    QR_QACC_S64,            /* 16-bit operands in int64: exact (also GlobalAveragePool's 16-bit sums) */
    QR_QACC_F32,            /* float32 arithmetic on integers, as ONNX Runtime's kernel (Add, Mul, AveragePool) */
} QrQuantAcc;

#ifdef QR_TESTING
QR_TESTAPI const char *qr_quant_acc_name(QrQuantAcc a);   /* "none" "s32" "s32-proven" "s64" "f32" */
#endif

static inline float qr_quant_round_f32(float v);
static bool qr_quant_range(QrDType dt, QrQuantRange *r);
static inline int32_t qr_quant_saturate_round(float v, int32_t zp, QrQuantRange r);
static inline int32_t qr_quant_quantize_f32(float x, float scale, int32_t zp, QrQuantRange r);
static inline int32_t qr_quant_requantize(int32_t acc, float mult, int32_t zp, QrQuantRange r);
static inline int32_t qr_quant_requantize_s64(int64_t acc, float mult, int32_t zp, QrQuantRange r);
static inline float qr_quant_multiplier(float s1, float s2, float s3);
static inline int32_t qr_quant_geti(const QrTensor *t, int64_t i);
static inline void qr_quant_seti(QrTensor *t, int64_t i, int32_t v);
static inline float qr_quant_getf(const QrTensor *t, int64_t i);
static inline void qr_quant_setf(QrTensor *t, int64_t i, float v);
static bool qr_quant_is_8bit(QrDType dt);
static bool qr_quant_is_act(QrDType dt);
static bool qr_quant_is_wt(QrDType dt);
static int64_t qr_quant_absmax(QrDType dt, int32_t zp);
static bool qr_quant_fits_s16(QrDType dt, int32_t zp);
static QrQuantAcc qr_quant_acc_choose(bool both_8bit, bool fit_s16, int64_t bound);
static int64_t qr_quant_bound_madd(int64_t a, int64_t b, int64_t c);

#endif
