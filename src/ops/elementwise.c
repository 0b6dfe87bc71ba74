/* ops/elementwise — broadcasting binary arithmetic and unary activations.
 * f32 has straight loops; other dtypes go through double (floats) or int64
 * (integers) element access, which is exact for every integer type we load. */

/* ==== broadcasting binary ops ================================================= */

typedef enum QrBinOp { QR_BIN_ADD, QR_BIN_SUB, QR_BIN_MUL, QR_BIN_DIV } QrBinOp;

static inline float qr__bin_f32(QrBinOp op, float a, float b) {
    switch (op) {
    case QR_BIN_ADD: return a + b;
    case QR_BIN_SUB: return a - b;
    case QR_BIN_MUL: return a * b;
    case QR_BIN_DIV: return a / b;
    }
    return 0;
}

static inline double qr__bin_f64(QrBinOp op, double a, double b) {
    switch (op) {
    case QR_BIN_ADD: return a + b;
    case QR_BIN_SUB: return a - b;
    case QR_BIN_MUL: return a * b;
    case QR_BIN_DIV: return a / b;
    }
    return 0;
}

/* Integer arithmetic wraps like the fixed-width C type would (done in uint64 to
 * avoid signed-overflow UB); integer division truncates, x/0 gives 0. */
static inline int64_t qr__bin_i64(QrBinOp op, int64_t a, int64_t b) {
    switch (op) {
    case QR_BIN_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case QR_BIN_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case QR_BIN_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case QR_BIN_DIV: return b == 0 ? 0 : (a == INT64_MIN && b == -1) ? a : a / b;
    }
    return 0;
}

/* Iterates the output of a 2-input broadcast: for every output row (last axis),
 * calls BODY with ia/ib/io the first offsets and sa/sb the last-axis strides. */
#define QR_BCAST2_FOR(rank, dims, stA, stB, ...)                                         \
    do {                                                                                  \
        int64_t qr_inner = (rank) ? (dims)[(rank) - 1] : 1;                               \
        int64_t qr_total = 1;                                                             \
        for (int qr_d = 0; qr_d < (rank); qr_d++) qr_total *= (dims)[qr_d];               \
        int64_t qr_outer = qr_inner ? qr_total / qr_inner : 0;                           \
        int64_t sa = (rank) ? (stA)[(rank) - 1] : 0, sb = (rank) ? (stB)[(rank) - 1] : 0; \
        int64_t qr_idx[QR_MAX_RANK] = {0}, ia = 0, ib = 0;                                \
        for (int64_t qr_o = 0; qr_o < qr_outer; qr_o++) {                                 \
            int64_t io = qr_o * qr_inner;                                                 \
            __VA_ARGS__;                                                                  \
            for (int qr_d = (rank) - 2; qr_d >= 0; qr_d--) {                              \
                ia += (stA)[qr_d]; ib += (stB)[qr_d];                                     \
                if (++qr_idx[qr_d] < (dims)[qr_d]) break;                                 \
                ia -= (stA)[qr_d] * (dims)[qr_d]; ib -= (stB)[qr_d] * (dims)[qr_d];       \
                qr_idx[qr_d] = 0;                                                         \
            }                                                                             \
        }                                                                                 \
    } while (0)

static QrStatus qr__binary_shape(QrOpCtx *c) {
    const QrTensor *a = c->in[0], *b = c->in[1];
    if (a->dtype != b->dtype)
        return qr_op_fail(c, QR_ERR_INVALID, "input types differ (%s vs %s)", qr_dtype_name(a->dtype),
                          qr_dtype_name(b->dtype));
    int rank = 0;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr_op_broadcast(c, 2, c->in, &rank, dims));
    return qr_op_set_out(c, 0, a->dtype, rank, dims);
}

static QrStatus qr__binary_exec(QrOpCtx *c, QrBinOp op) {
    const QrTensor *a = c->in[0], *b = c->in[1];
    QrTensor *y = c->out[0];
    int64_t stA[QR_MAX_RANK], stB[QR_MAX_RANK];
    qr_broadcast_strides(a, y->rank, y->dims, stA);
    qr_broadcast_strides(b, y->rank, y->dims, stB);
    if (y->dtype == QR_DT_F32) {
        const float *pa = a->data, *pb = b->data;
        float *py = y->data;
        QR_BCAST2_FOR(y->rank, y->dims, stA, stB, {
            for (int64_t j = 0; j < qr_inner; j++) py[io + j] = qr__bin_f32(op, pa[ia + j * sa], pb[ib + j * sb]);
        });
    } else if (qr_dtype_is_float(y->dtype)) {
        QR_BCAST2_FOR(y->rank, y->dims, stA, stB, {
            for (int64_t j = 0; j < qr_inner; j++)
                qr_tensor_set_f64(y, io + j, qr__bin_f64(op, qr_tensor_get_f64(a, ia + j * sa),
                                                         qr_tensor_get_f64(b, ib + j * sb)));
        });
    } else if (y->dtype == QR_DT_U64) {
        const uint64_t *pa = a->data, *pb = b->data;
        uint64_t *py = y->data;
        QR_BCAST2_FOR(y->rank, y->dims, stA, stB, {
            for (int64_t j = 0; j < qr_inner; j++) {
                uint64_t u = pa[ia + j * sa], v = pb[ib + j * sb];
                py[io + j] = op == QR_BIN_ADD ? u + v : op == QR_BIN_SUB ? u - v : op == QR_BIN_MUL ? u * v
                           : v ? u / v : 0;
            }
        });
    } else {
        QR_BCAST2_FOR(y->rank, y->dims, stA, stB, {
            for (int64_t j = 0; j < qr_inner; j++)
                qr_tensor_set_i64(y, io + j, qr__bin_i64(op, qr_tensor_get_i64(a, ia + j * sa),
                                                         qr_tensor_get_i64(b, ib + j * sb)));
        });
    }
    return QR_OK;
}

static QrStatus qr_op_add_exec(QrOpCtx *c) { return qr__binary_exec(c, QR_BIN_ADD); }
static QrStatus qr_op_sub_exec(QrOpCtx *c) { return qr__binary_exec(c, QR_BIN_SUB); }
static QrStatus qr_op_mul_exec(QrOpCtx *c) { return qr__binary_exec(c, QR_BIN_MUL); }
static QrStatus qr_op_div_exec(QrOpCtx *c) { return qr__binary_exec(c, QR_BIN_DIV); }

/* ==== unary ops ================================================================= */

static QrStatus qr__same_shape(QrOpCtx *c) {
    return qr_op_set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
}

static QrStatus qr__float_same_shape(QrOpCtx *c) {
    QR_TRY(qr_op_need_float(c, 0));
    return qr__same_shape(c);
}

/* Applies f elementwise; non-f32 float types round-trip through double. */
static QrStatus qr__unary_apply(QrOpCtx *c, double (*f)(double, const QrOpCtx *)) {
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    if (x->dtype == QR_DT_F32) {
        const float *px = x->data;
        float *py = y->data;
        for (int64_t i = 0; i < x->numel; i++) py[i] = (float)f(px[i], c);
    } else {
        for (int64_t i = 0; i < x->numel; i++) qr_tensor_set_f64(y, i, f(qr_tensor_get_f64(x, i), c));
    }
    return QR_OK;
}

static double qr__relu(double v, const QrOpCtx *c) { QR_UNUSED(c); return v > 0 ? v : 0; }
static QrStatus qr_op_relu_exec(QrOpCtx *c) { return qr__unary_apply(c, qr__relu); }

/* ==== table ======================================================================= */

static const QrOpDef qr_ops_elementwise[] = {
    { "", "Add", 2, 2, 1, 1, qr__binary_shape, qr_op_add_exec, 0 },
    { "", "Sub", 2, 2, 1, 1, qr__binary_shape, qr_op_sub_exec, 0 },
    { "", "Mul", 2, 2, 1, 1, qr__binary_shape, qr_op_mul_exec, 0 },
    { "", "Div", 2, 2, 1, 1, qr__binary_shape, qr_op_div_exec, 0 },
    { "", "Relu", 1, 1, 1, 1, qr__float_same_shape, qr_op_relu_exec, 0 },
};
