/* ops/elementwise — elementwise and "row-wise" operators: broadcasting binary
 * arithmetic/comparison/logic (Add..Pow, Equal.., And..), variadic Min/Max/Sum/Mean,
 * Where, unary activations and math, Clip, Cast, Softmax family, reductions,
 * ArgMax/ArgMin and the normalization layers (BatchNorm, LayerNorm, InstanceNorm).
 * f32 has straight loops; other dtypes go through double (floats) or int64
 * (integers) element access, which is exact for every integer type we load;
 * uint64 has its own paths where signedness matters (compare, divide). */

/* ==== dtype helpers ============================================================ */

/* How an operator computes for a dtype: f32 directly, other floats through double,
 * uint64 as unsigned, every other integer type (and bool) through int64. */
typedef enum QrEwClass { QR_EW_F32, QR_EW_F64, QR_EW_I64, QR_EW_U64 } QrEwClass;

static QrEwClass qr__ew_class(QrDType dt) {
    if (dt == QR_DT_F32) return QR_EW_F32;
    if (qr_dtype_is_float(dt)) return QR_EW_F64;
    if (dt == QR_DT_U64) return QR_EW_U64;
    return QR_EW_I64;
}

/* Value range of an integer dtype as int64 (uint64's upper end is clamped to INT64_MAX;
 * callers treat uint64 separately). */
static void qr__ew_int_limits(QrDType dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case QR_DT_BOOL: *lo = 0; *hi = 1; return;
    case QR_DT_U4: *lo = 0; *hi = 15; return;
    case QR_DT_S4: *lo = -8; *hi = 7; return;
    case QR_DT_U2: *lo = 0; *hi = 3; return;
    case QR_DT_S2: *lo = -2; *hi = 1; return;
    case QR_DT_U8: *lo = 0; *hi = UINT8_MAX; return;
    case QR_DT_S8: *lo = INT8_MIN; *hi = INT8_MAX; return;
    case QR_DT_U16: *lo = 0; *hi = UINT16_MAX; return;
    case QR_DT_S16: *lo = INT16_MIN; *hi = INT16_MAX; return;
    case QR_DT_U32: *lo = 0; *hi = UINT32_MAX; return;
    case QR_DT_S32: *lo = INT32_MIN; *hi = INT32_MAX; return;
    case QR_DT_U64: *lo = 0; *hi = INT64_MAX; return;
    default: *lo = INT64_MIN; *hi = INT64_MAX; return;
    }
}

/* Product of dims[from:to]; 0 if any is 0. Cannot overflow: a non-empty tensor's
 * dims multiply to at most its element count, which set_shape bounded. */
static int64_t qr__ew_prod(const int64_t *dims, int from, int to) {
    for (int d = from; d < to; d++) if (dims[d] == 0) return 0;
    int64_t p = 1;
    for (int d = from; d < to; d++) p *= dims[d];
    return p;
}

/* Requires input i (when present) to broadcast to x's shape without growing it
 * (unidirectional broadcasting, as PRelu/LayerNorm scales need). */
static QrStatus qr__ew_check_unidir(const QrOpCtx *c, int i, const QrTensor *t, const QrTensor *x) {
    if (!t) return QR_OK;
    bool ok = t->rank <= x->rank;
    for (int d = 0; ok && d < t->rank; d++) {
        int64_t v = t->dims[d], xv = x->dims[x->rank - t->rank + d];
        ok = v == xv || v == 1;
    }
    if (ok) return QR_OK;
    char a[128], b[128];
    return qr_op_fail(c, QR_ERR_SHAPE, "input %d of shape %s does not broadcast to %s", i,
                      qr_shape_str_brackets(a, sizeof a, t->rank, t->dims),
                      qr_shape_str_brackets(b, sizeof b, x->rank, x->dims));
}

/* Fails unless inputs 0..n-1 are present (an empty name can omit any input). */
static QrStatus qr__ew_need_inputs(const QrOpCtx *c, int n) {
    for (int i = 0; i < n; i++)
        if (!qr_op_in(c, i)) return qr_op_fail(c, QR_ERR_INVALID, "input %d is required", i);
    return QR_OK;
}

/* ==== fused float32 steps over a tensor =========================================== */

/* Steps over a float32 tensor viewed as (outer, C, inner): channel c's parameters apply to
 * its inner run of elements (QrF32Step). A task covers per_task whole runs, or (flat: every
 * step per-tensor) per_task consecutive elements. */
typedef struct QrEwStepsJob {
    const QrF32Step *s;
    int ns;
    bool flat;
    const float *x;
    float *y;
    int64_t total, C, inner, per_task;
} QrEwStepsJob;

static void qr__ew_steps_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrEwStepsJob *j = ctx;
    if (j->flat) {
        int64_t off = t * j->per_task;
        qr_kern.f32_steps(j->s, j->ns, j->x + off, j->y + off, QR_MIN(j->per_task, j->total - off), 0, off);
        return;
    }
    for (int64_t r = t * j->per_task; r < QR_MIN(j->total / j->inner, (t + 1) * j->per_task); r++) {
        int64_t off = r * j->inner;
        qr_kern.f32_steps(j->s, j->ns, j->x + off, j->y + off, j->inner, r % j->C, off);
    }
}

/* A float32 operand c of a binary op with output y that is one value (*pc = 0) or one value
 * per channel along y's axis 1 (*pc = 1: c's dims, aligned to y's from the right, are 1
 * except the one on axis 1, which is y's channel count). False otherwise. */
static bool qr_ew_channel_param(const QrTensor *c, const QrTensor *y, int64_t *pc) {
    if (c->dtype != QR_DT_F32 || !c->data) return false;
    if (c->numel == 1) { *pc = 0; return true; }
    if (y->rank < 2 || c->rank > y->rank) return false;
    for (int d = 0; d < c->rank; d++) {
        int od = y->rank - c->rank + d;
        if (c->dims[d] != (od == 1 ? y->dims[1] : 1)) return false;
    }
    *pc = 1;
    return true;
}

/* y = the ns steps applied to x (y may equal x), both (outer, C, inner) float32, split over
 * the thread pool in tasks of ~16K elements. Same bits for any thread count: what an element
 * becomes does not depend on the split. */
static void qr_ew_steps_run(const QrF32Step *s, int ns, const float *x, float *y, int64_t outer, int64_t C,
                            int64_t inner) {
    const int64_t total = outer * C * inner, piece = 16384;
    if (total <= 0 || (ns == 0 && x == y)) return;   /* no steps in place: nothing to do */
    QrEwStepsJob j = { s, ns, true, x, y, total, C, inner, piece };
    for (int k = 0; k < ns; k++) j.flat = j.flat && s[k].pc == 0;
    if (!j.flat) j.per_task = QR_MAX(1, piece / inner);
    int64_t tasks = j.flat ? (total + piece - 1) / piece : (outer * C + j.per_task - 1) / j.per_task;
    if (tasks == 1) qr__ew_steps_task(&j, 0, 0);
    else qr_pool_for(tasks, qr__ew_steps_task, &j);
}

/* ==== row-parallel float32 kernels ============================================== */

/* One float32 kernel over `rows` independent rows of n values (a row's result depends on that
 * row alone: Softmax, LayerNormalization, an elementwise map or product taken as rows of
 * one), split over the thread pool in tasks of about QR__EW_PIECE values. Same bits for any
 * thread count or split. */
#define QR__EW_PIECE 16384

typedef enum QrEwRowKind { QR__EW_ROW_MAP, QR__EW_ROW_SOFTMAX, QR__EW_ROW_LAYERNORM, QR__EW_ROW_MUL, QR__EW_ROW_SUB,
                           QR__EW_ROW_DIV, QR__EW_ROW_GELU } QrEwRowKind;

typedef struct QrEwRowJob {
    QrEwRowKind kind;
    int64_t rows, n, per_task;
    const float *x, *b;        /* b: the second operand (MUL/SUB/DIV), the bias (LAYERNORM) */
    const float *scale;        /* LAYERNORM */
    float *y, *mean, *inv;     /* mean, inv: LAYERNORM's optional outputs (one per row) */
    float eps;
    QrF32MapOp op;             /* MAP */
    bool wide, logsm;          /* SOFTMAX */
    float c[3];                /* GELU: divisor, addend, factor */
} QrEwRowJob;

/* y = (x * (erf(x / c[0]) + c[1])) * c[2] over n values (y may equal x), each operation
 * rounded as the Div, Erf, Add, Mul, Mul nodes PyTorch exports for the exact GELU round it
 * when they run one by one (the Erf by QrF32MapFn's ERF), in pieces through a stack buffer. */
static void qr__ew_gelu_erf(const float *c, const float *x, float *y, int64_t n) {
    float t[256];
    for (int64_t i0 = 0; i0 < n; i0 += 256) {
        const int64_t m = QR_MIN((int64_t)256, n - i0);
        for (int64_t i = 0; i < m; i++) t[i] = x[i0 + i] / c[0];
        qr_kern.f32_map(QR_F32_MAP_ERF, t, t, m);
        for (int64_t i = 0; i < m; i++) {
            const float a = t[i] + c[1], p = x[i0 + i] * a;
            y[i0 + i] = p * c[2];
        }
    }
}

static void qr__ew_row_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrEwRowJob *j = ctx;
    const int64_t r0 = t * j->per_task, r1 = QR_MIN(j->rows, r0 + j->per_task), n = j->n;
    const float *x = j->x + r0 * n;
    float *y = j->y + r0 * n;
    switch (j->kind) {
    case QR__EW_ROW_MAP: qr_kern.f32_map(j->op, x, y, (r1 - r0) * n); break;
    case QR__EW_ROW_SOFTMAX: qr_kern.f32_softmax(x, y, r1 - r0, n, j->wide, j->logsm); break;
    case QR__EW_ROW_GELU: qr__ew_gelu_erf(j->c, x, y, (r1 - r0) * n); break;
    case QR__EW_ROW_LAYERNORM:
        for (int64_t r = r0; r < r1; r++, x += n, y += n)
            qr_kern.f32_layernorm(x, j->scale, j->b, y, n, j->eps, j->mean ? j->mean + r : NULL, j->inv ? j->inv + r : NULL);
        break;
    case QR__EW_ROW_MUL:
    case QR__EW_ROW_SUB:
    case QR__EW_ROW_DIV: {
        const float *b = j->b + r0 * n;
        const int64_t m = (r1 - r0) * n;
        if (j->kind == QR__EW_ROW_MUL) for (int64_t i = 0; i < m; i++) y[i] = x[i] * b[i];
        else if (j->kind == QR__EW_ROW_SUB) for (int64_t i = 0; i < m; i++) y[i] = x[i] - b[i];
        else for (int64_t i = 0; i < m; i++) y[i] = x[i] / b[i];
        break;
    }
    }
}

/* Runs job j (rows, n and the operands set) over the pool; serial below two pieces. */
static void qr__ew_rows_run(QrEwRowJob *j) {
    if (j->rows <= 0 || j->n <= 0) return;
    j->per_task = QR_MAX(1, QR__EW_PIECE / j->n);
    const int64_t tasks = (j->rows + j->per_task - 1) / j->per_task;
    if (tasks == 1) qr__ew_row_task(j, 0, 0);
    else qr_pool_for(tasks, qr__ew_row_task, j);
}

/* The exact GELU as PyTorch exports it, Div(x, c[0]) -> Erf -> Add(c[1]) -> Mul(x) -> Mul(c[2]),
 * over n float32 values with those nodes' bits (run/run.c fuses the five nodes into the chain
 * of the MatMul before them), threaded. y may equal x. */
static void qr_ew_gelu_erf_run(const float c[3], const float *x, float *y, int64_t n) {
    QrEwRowJob j = { .kind = QR__EW_ROW_GELU, .rows = (n + 15) / 16, .n = 16, .x = x, .y = y, .c = { c[0], c[1], c[2] } };
    if (n % 16) {
        j.rows = n / 16;
        qr__ew_gelu_erf(c, x + j.rows * 16, y + j.rows * 16, n % 16);
    }
    qr__ew_rows_run(&j);
}

/* y = op(x) elementwise over n float32 values with MLAS's map kernels (QrF32MapFn), threaded. */
static void qr_ew_map_run(QrF32MapOp op, const float *x, float *y, int64_t n) {
    QrEwRowJob j = { .kind = QR__EW_ROW_MAP, .rows = (n + 15) / 16, .n = 16, .x = x, .y = y, .op = op };
    if (n % 16) {   /* whole rows of 16 through the pool, the last few on their own */
        j.rows = n / 16;
        qr_kern.f32_map(op, x + j.rows * 16, y + j.rows * 16, n % 16);
    }
    qr__ew_rows_run(&j);
}

/* ==== broadcasting iteration =================================================== */

/* Iterates the output of a 3-input broadcast: for every output row (last axis),
 * runs BODY with io the row's first output offset, ia/ib/ic the first offsets of
 * the inputs and sa/sb/sc their last-axis strides (0 on broadcast axes);
 * qr_inner is the row length. Strides come from qr_broadcast_strides (or after
 * qr__ew_coalesce). Those names are declared by the macro: a caller variable
 * called sa..sc, ia..ic or io is shadowed inside BODY. */
#define QR_BCAST3_FOR(rank, dims, stA, stB, stC, ...)                                    \
    do {                                                                                  \
        int64_t qr_inner = (rank) ? (dims)[(rank) - 1] : 1;                               \
        int64_t qr_total = 1;                                                             \
        for (int qr_d = 0; qr_d < (rank); qr_d++) qr_total *= (dims)[qr_d];               \
        int64_t qr_outer = qr_inner ? qr_total / qr_inner : 0;                           \
        int64_t sa = (rank) ? (stA)[(rank) - 1] : 0, sb = (rank) ? (stB)[(rank) - 1] : 0; \
        int64_t sc = (rank) ? (stC)[(rank) - 1] : 0;                                      \
        int64_t qr_idx[QR_MAX_RANK] = {0}, ia = 0, ib = 0, ic = 0;                        \
        for (int64_t qr_o = 0; qr_o < qr_outer; qr_o++) {                                 \
            int64_t io = qr_o * qr_inner;                                                 \
            (void)io; (void)ia; (void)ib; (void)ic; (void)sa; (void)sb; (void)sc;         \
            __VA_ARGS__;                                                                  \
            for (int qr_d = (rank) - 2; qr_d >= 0; qr_d--) {                              \
                ia += (stA)[qr_d]; ib += (stB)[qr_d]; ic += (stC)[qr_d];                  \
                if (++qr_idx[qr_d] < (dims)[qr_d]) break;                                 \
                ia -= (stA)[qr_d] * (dims)[qr_d]; ib -= (stB)[qr_d] * (dims)[qr_d];       \
                ic -= (stC)[qr_d] * (dims)[qr_d];                                         \
                qr_idx[qr_d] = 0;                                                         \
            }                                                                             \
        }                                                                                 \
    } while (0)

/* 2-input form: BODY sees io, ia/ib, sa/sb and qr_inner. */
#define QR_BCAST2_FOR(rank, dims, stA, stB, ...) QR_BCAST3_FOR(rank, dims, stA, stB, stB, __VA_ARGS__)

/* ==== broadcasting binary ops ================================================= */

typedef enum QrBinOp {
    QR_BIN_ADD, QR_BIN_SUB, QR_BIN_MUL, QR_BIN_DIV, QR_BIN_POW, QR_BIN_MIN, QR_BIN_MAX, QR_BIN_PRELU,
    /* comparisons: bool output */
    QR_BIN_EQ, QR_BIN_LT, QR_BIN_GT, QR_BIN_LE, QR_BIN_GE,
    /* logic: bool inputs and output */
    QR_BIN_AND, QR_BIN_OR, QR_BIN_XOR,
} QrBinOp;

static inline bool qr__ew_is_cmp(QrBinOp op) { return op >= QR_BIN_EQ && op <= QR_BIN_GE; }
static inline bool qr__ew_is_logic(QrBinOp op) { return op >= QR_BIN_AND; }

static inline float qr__ew_bin_f32(QrBinOp op, float a, float b) {
    switch (op) {
    case QR_BIN_ADD: return a + b;
    case QR_BIN_SUB: return a - b;
    case QR_BIN_MUL: return a * b;
    case QR_BIN_DIV: return a / b;
    case QR_BIN_POW: return powf(a, b);
    case QR_BIN_MIN: return a != a ? a : b != b ? b : a < b ? a : b;   /* NaN propagates like np.minimum */
    case QR_BIN_MAX: return a != a ? a : b != b ? b : a > b ? a : b;
    case QR_BIN_PRELU: return a < 0 ? a * b : a;
    default: return 0;
    }
}

static inline double qr__ew_bin_f64(QrBinOp op, double a, double b) {
    switch (op) {
    case QR_BIN_ADD: return a + b;
    case QR_BIN_SUB: return a - b;
    case QR_BIN_MUL: return a * b;
    case QR_BIN_DIV: return a / b;
    case QR_BIN_POW: return pow(a, b);
    case QR_BIN_MIN: return a != a ? a : b != b ? b : a < b ? a : b;
    case QR_BIN_MAX: return a != a ? a : b != b ? b : a > b ? a : b;
    case QR_BIN_PRELU: return a < 0 ? a * b : a;
    default: return 0;
    }
}

/* Integer power by squaring, wrapping like the fixed-width type; negative
 * exponents give the truncated real result (0 unless |a| == 1). */
static inline uint64_t qr__ew_ipow(uint64_t a, uint64_t e) {
    uint64_t r = 1;
    while (e) {
        if (e & 1) r *= a;
        a *= a;
        e >>= 1;
    }
    return r;
}

/* Integer arithmetic wraps like the fixed-width C type would (done in uint64 to
 * avoid signed-overflow UB); integer division truncates, x/0 gives 0. */
static inline int64_t qr__ew_bin_i64(QrBinOp op, int64_t a, int64_t b) {
    switch (op) {
    case QR_BIN_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case QR_BIN_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case QR_BIN_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case QR_BIN_DIV: return b == 0 ? 0 : (a == INT64_MIN && b == -1) ? a : a / b;
    case QR_BIN_POW:
        if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
        return (int64_t)qr__ew_ipow((uint64_t)a, (uint64_t)b);
    case QR_BIN_MIN: return a < b ? a : b;
    case QR_BIN_MAX: return a > b ? a : b;
    case QR_BIN_PRELU: return a < 0 ? (int64_t)((uint64_t)a * (uint64_t)b) : a;
    default: return 0;
    }
}

static inline uint64_t qr__ew_bin_u64(QrBinOp op, uint64_t a, uint64_t b) {
    switch (op) {
    case QR_BIN_ADD: return a + b;
    case QR_BIN_SUB: return a - b;
    case QR_BIN_MUL: return a * b;
    case QR_BIN_DIV: return b ? a / b : 0;
    case QR_BIN_POW: return qr__ew_ipow(a, b);
    case QR_BIN_MIN: return a < b ? a : b;
    case QR_BIN_MAX: return a > b ? a : b;
    default: return a;   /* PRELU: never negative */
    }
}

#define QR__EW_CMP(op, a, b) \
    ((op) == QR_BIN_EQ ? (a) == (b) : (op) == QR_BIN_LT ? (a) < (b) : (op) == QR_BIN_GT ? (a) > (b) \
     : (op) == QR_BIN_LE ? (a) <= (b) : (a) >= (b))

/* Merges adjacent output dims that every input walks contiguously (or not at all),
 * so same-shape and trailing-broadcast cases become long rows. st[k] are the
 * broadcast strides of input k; dims/st are rewritten; returns the new rank. */
static int qr__ew_coalesce(int rank, int64_t *dims, int nin, int64_t (*st)[QR_MAX_RANK]) {
    int r = 0;
    for (int d = 0; d < rank; d++) {          /* size-1 dims contribute nothing */
        if (dims[d] == 1) continue;
        dims[r] = dims[d];
        for (int k = 0; k < nin; k++) st[k][r] = st[k][d];
        r++;
    }
    if (r <= 1) return r;
    int out = 0;
    for (int d = 1; d < r; d++) {
        bool ok = true;
        for (int k = 0; k < nin && ok; k++) ok = st[k][out] == st[k][d] * dims[d];
        if (ok) {
            dims[out] *= dims[d];
            for (int k = 0; k < nin; k++) st[k][out] = st[k][d];
        } else {
            out++;
            dims[out] = dims[d];
            for (int k = 0; k < nin; k++) st[k][out] = st[k][d];
        }
    }
    return out + 1;
}

/* One f32 row loop per expression of u (from a) and v (from b), with the
 * contiguous and scalar-operand cases spelled out so they vectorize. */
#define QR__EW_F32_BIN(EXPR)                                                                  \
    QR_BCAST2_FOR(rank, dims, st[0], st[1], {                                                 \
        const float *qa = pa + ia, *qb = pb + ib;                                             \
        float *qy = py + io;                                                                  \
        if (sa == 1 && sb == 1) {                                                             \
            for (int64_t j = 0; j < qr_inner; j++) { float u = qa[j], v = qb[j]; qy[j] = (EXPR); } \
        } else if (sa == 1 && sb == 0) {                                                      \
            float v = qb[0];                                                                  \
            for (int64_t j = 0; j < qr_inner; j++) { float u = qa[j]; qy[j] = (EXPR); }       \
        } else if (sa == 0 && sb == 1) {                                                      \
            float u = qa[0];                                                                  \
            for (int64_t j = 0; j < qr_inner; j++) { float v = qb[j]; qy[j] = (EXPR); }       \
        } else {                                                                              \
            for (int64_t j = 0; j < qr_inner; j++) {                                          \
                float u = qa[j * sa], v = qb[j * sb];                                         \
                qy[j] = (EXPR);                                                               \
            }                                                                                 \
        }                                                                                     \
    })

/* y = a (op) b with numpy broadcasting of a and b to y's shape (already set).
 * y may alias a when a already has y's shape (the variadic ops fold that way).
 * Comparisons and logic write bool; Pow's exponent b may have another dtype. */
static void qr__ew_binary_run(QrBinOp op, const QrTensor *a, const QrTensor *b, QrTensor *y) {
    int64_t st[2][QR_MAX_RANK], dims[QR_MAX_RANK];
    qr_broadcast_strides(a, y->rank, y->dims, st[0]);
    qr_broadcast_strides(b, y->rank, y->dims, st[1]);
    for (int d = 0; d < y->rank; d++) dims[d] = y->dims[d];
    int rank = qr__ew_coalesce(y->rank, dims, 2, st);
    if (qr__ew_is_logic(op)) {
        const uint8_t *pa = a->data, *pb = b->data;
        uint8_t *py = y->data;
        QR_BCAST2_FOR(rank, dims, st[0], st[1], {
            for (int64_t j = 0; j < qr_inner; j++) {
                bool u = pa[ia + j * sa] != 0, v = pb[ib + j * sb] != 0;
                py[io + j] = op == QR_BIN_AND ? (u && v) : op == QR_BIN_OR ? (u || v) : (u != v);
            }
        });
        return;
    }
    if (qr__ew_is_cmp(op)) {
        uint8_t *py = y->data;
        QrEwClass k = qr__ew_class(a->dtype);
        if (k == QR_EW_F32 && b->dtype == QR_DT_F32) {
            const float *pa = a->data, *pb = b->data;
            QR_BCAST2_FOR(rank, dims, st[0], st[1], {
                for (int64_t j = 0; j < qr_inner; j++) py[io + j] = QR__EW_CMP(op, pa[ia + j * sa], pb[ib + j * sb]);
            });
        } else if (k == QR_EW_F32 || k == QR_EW_F64) {
            QR_BCAST2_FOR(rank, dims, st[0], st[1], {
                for (int64_t j = 0; j < qr_inner; j++) {
                    double u = qr_tensor_get_f64(a, ia + j * sa), v = qr_tensor_get_f64(b, ib + j * sb);
                    py[io + j] = QR__EW_CMP(op, u, v);
                }
            });
        } else if (k == QR_EW_U64) {
            QR_BCAST2_FOR(rank, dims, st[0], st[1], {
                for (int64_t j = 0; j < qr_inner; j++) {
                    uint64_t u = (uint64_t)qr_tensor_get_i64(a, ia + j * sa);
                    uint64_t v = (uint64_t)qr_tensor_get_i64(b, ib + j * sb);
                    py[io + j] = QR__EW_CMP(op, u, v);
                }
            });
        } else {
            QR_BCAST2_FOR(rank, dims, st[0], st[1], {
                for (int64_t j = 0; j < qr_inner; j++) {
                    int64_t u = qr_tensor_get_i64(a, ia + j * sa), v = qr_tensor_get_i64(b, ib + j * sb);
                    py[io + j] = QR__EW_CMP(op, u, v);
                }
            });
        }
        return;
    }
    QrEwClass k = qr__ew_class(y->dtype);
    if (k == QR_EW_F32 && a->dtype == QR_DT_F32 && b->dtype == QR_DT_F32) {
        const float *pa = a->data, *pb = b->data;
        float *py = y->data;
        if (op == QR_BIN_ADD && a->numel == y->numel && b->numel == y->numel) {   /* same shapes: u + v, threaded */
            const QrF32Step add = { .op = QR_F32_STEP_ADD_T, .t = pb };
            qr_ew_steps_run(&add, 1, pa, py, 1, 1, y->numel);
            return;
        }
        if ((op == QR_BIN_MUL || op == QR_BIN_SUB || op == QR_BIN_DIV) && a->numel == y->numel && b->numel == y->numel) {
            QrEwRowJob j = { .kind = op == QR_BIN_MUL ? QR__EW_ROW_MUL : op == QR_BIN_SUB ? QR__EW_ROW_SUB : QR__EW_ROW_DIV,
                             .rows = (y->numel + 15) / 16, .n = 16, .x = pa, .b = pb, .y = py };
            if (y->numel % 16) {   /* the rows of 16 threaded (same shapes: u op v), the last few here */
                j.rows = y->numel / 16;
                for (int64_t i = j.rows * 16; i < y->numel; i++)
                    py[i] = op == QR_BIN_MUL ? pa[i] * pb[i] : op == QR_BIN_SUB ? pa[i] - pb[i] : pa[i] / pb[i];
            }
            qr__ew_rows_run(&j);
            return;
        }
        /* one operand per channel (axis 1) or a scalar: the steps kernel (vectorized, threaded) */
        QrF32Step cs = { .op = op == QR_BIN_ADD ? QR_F32_STEP_ADD : op == QR_BIN_SUB ? QR_F32_STEP_SUB
                              : op == QR_BIN_MUL ? QR_F32_STEP_MUL : QR_F32_STEP_DIV };
        bool arith = op == QR_BIN_ADD || op == QR_BIN_SUB || op == QR_BIN_MUL || op == QR_BIN_DIV;
        if (arith && (a->numel == y->numel || b->numel == y->numel)) {
            const bool full_a = a->numel == y->numel;
            const QrTensor *full = full_a ? a : b, *par = full_a ? b : a;
            if (qr_ew_channel_param(par, y, &cs.pc)) {
                cs.swap = !full_a;
                cs.p = par->data;
                int64_t C = y->rank >= 2 ? y->dims[1] : 1, outer = y->rank >= 2 ? y->dims[0] : 1;
                qr_ew_steps_run(&cs, 1, full->data, py, outer, C, y->numel / QR_MAX(1, outer * C));
                return;
            }
        }
        switch (op) {
        case QR_BIN_ADD: QR__EW_F32_BIN(u + v); break;
        case QR_BIN_SUB: QR__EW_F32_BIN(u - v); break;
        case QR_BIN_MUL: QR__EW_F32_BIN(u * v); break;
        case QR_BIN_DIV: QR__EW_F32_BIN(u / v); break;
        case QR_BIN_PRELU: QR__EW_F32_BIN(u < 0 ? u * v : u); break;
        default: QR__EW_F32_BIN(qr__ew_bin_f32(op, u, v)); break;
        }
    } else if (k == QR_EW_F32 || k == QR_EW_F64 || qr_dtype_is_float(b->dtype)) {
        /* floats, or an integer base with a float exponent (Pow): the result is
         * converted back to y's type, truncating toward zero like numpy's astype. */
        QR_BCAST2_FOR(rank, dims, st[0], st[1], {
            for (int64_t j = 0; j < qr_inner; j++)
                qr_tensor_set_f64(y, io + j, qr__ew_bin_f64(op, qr_tensor_get_f64(a, ia + j * sa),
                                                            qr_tensor_get_f64(b, ib + j * sb)));
        });
    } else if (k == QR_EW_U64) {
        uint64_t *py = y->data;
        QR_BCAST2_FOR(rank, dims, st[0], st[1], {
            for (int64_t j = 0; j < qr_inner; j++)
                py[io + j] = qr__ew_bin_u64(op, (uint64_t)qr_tensor_get_i64(a, ia + j * sa),
                                            (uint64_t)qr_tensor_get_i64(b, ib + j * sb));
        });
    } else {
        QR_BCAST2_FOR(rank, dims, st[0], st[1], {
            for (int64_t j = 0; j < qr_inner; j++)
                qr_tensor_set_i64(y, io + j, qr__ew_bin_i64(op, qr_tensor_get_i64(a, ia + j * sa),
                                                            qr_tensor_get_i64(b, ib + j * sb)));
        });
    }
}

/* Opset < 7 binary ops broadcast only with broadcast=1, aligning B with A starting
 * at `axis` (default: B's dims are A's trailing dims). *view is b with trailing 1s
 * appended so numpy broadcasting gives the same result; data is shared. Opset < 7
 * PRelu's 1-D slope is viewed as (C, 1, ..., 1) the same way. */
static QrStatus qr__ew_legacy_view(const QrOpCtx *c, const QrTensor *a, const QrTensor *b, QrTensor *view) {
    *view = *b;
    view->owned = false;
    if (c->node->opset >= 7) return QR_OK;
    if (strcmp(c->node->op_type, "PRelu") == 0) {
        /* PRelu-6 and older: a 1-D slope of length C is per channel (axis 1). */
        if (b->rank == 1 && a->rank >= 2 && b->dims[0] == a->dims[1] && b->dims[0] != 1) {
            for (int d = 1; d < a->rank - 1; d++) view->dims[d] = 1;
            view->rank = a->rank - 1;
        }
        return QR_OK;
    }
    if (!qr_attr_int(c->node, "broadcast", 0) || !qr_node_attr(c->node, "axis")) return QR_OK;
    int64_t axis = qr_attr_int(c->node, "axis", 0);
    if (axis < 0) axis += a->rank;
    if (axis < 0 || axis + b->rank > a->rank)
        return qr_op_fail(c, QR_ERR_SHAPE, "legacy broadcast axis %lld does not fit ranks %d and %d",
                          (long long)qr_attr_int(c->node, "axis", 0), a->rank, b->rank);
    for (int d = b->rank; d < a->rank - axis; d++) view->dims[d] = 1;
    view->rank = (int)(a->rank - axis);
    return QR_OK;
}

typedef enum QrEwBinKind { QR_EW_ARITH, QR_EW_POWK, QR_EW_CMPK, QR_EW_LOGICK, QR_EW_PRELUK } QrEwBinKind;

static QrStatus qr__ew_binary_shape_kind(QrOpCtx *c, QrEwBinKind kind) {
    const QrTensor *a = c->in[0], *b0 = c->in[1];
    if (!a || !b0) return qr_op_fail(c, QR_ERR_INVALID, "both inputs are required");
    QrTensor b;
    QR_TRY(qr__ew_legacy_view(c, a, b0, &b));
    if (kind == QR_EW_LOGICK) {
        if (a->dtype != QR_DT_BOOL || b.dtype != QR_DT_BOOL)
            return qr_op_fail(c, QR_ERR_INVALID, "inputs must be bool (got %s and %s)", qr_dtype_name(a->dtype),
                              qr_dtype_name(b.dtype));
    } else if (kind != QR_EW_POWK && a->dtype != b.dtype) {
        return qr_op_fail(c, QR_ERR_INVALID, "input types differ (%s vs %s)", qr_dtype_name(a->dtype),
                          qr_dtype_name(b.dtype));
    }
    if (kind == QR_EW_PRELUK) {
        QR_TRY(qr__ew_check_unidir(c, 1, &b, a));
        return qr_op_set_out(c, 0, a->dtype, a->rank, a->dims);
    }
    const QrTensor *ts[2] = { a, &b };
    int rank = 0;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr_op_broadcast(c, 2, ts, &rank, dims));
    QrDType dt = kind == QR_EW_CMPK || kind == QR_EW_LOGICK ? QR_DT_BOOL : a->dtype;
    return qr_op_set_out(c, 0, dt, rank, dims);
}

static QrStatus qr__ew_arith_shape(QrOpCtx *c) { return qr__ew_binary_shape_kind(c, QR_EW_ARITH); }
static QrStatus qr__ew_pow_shape(QrOpCtx *c) {
    QR_TRY(qr__ew_binary_shape_kind(c, QR_EW_POWK));
    if (c->in[0]->dtype == QR_DT_BOOL || c->in[1]->dtype == QR_DT_BOOL)
        return qr_op_fail(c, QR_ERR_INVALID, "Pow does not take bool inputs");
    return QR_OK;
}
static QrStatus qr__ew_cmp_shape(QrOpCtx *c) { return qr__ew_binary_shape_kind(c, QR_EW_CMPK); }
static QrStatus qr__ew_logic_shape(QrOpCtx *c) { return qr__ew_binary_shape_kind(c, QR_EW_LOGICK); }
static QrStatus qr__ew_prelu_shape(QrOpCtx *c) { return qr__ew_binary_shape_kind(c, QR_EW_PRELUK); }

static QrStatus qr__ew_binary_exec(QrOpCtx *c, QrBinOp op) {
    QrTensor b;
    QR_TRY(qr__ew_legacy_view(c, c->in[0], c->in[1], &b));
    qr__ew_binary_run(op, c->in[0], &b, c->out[0]);
    return QR_OK;
}

static QrStatus qr__ew_add_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_ADD); }
static QrStatus qr__ew_sub_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_SUB); }
static QrStatus qr__ew_mul_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_MUL); }
static QrStatus qr__ew_div_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_DIV); }
/* ONNX Runtime's Pow with one float exponent of 2 or 3 multiplies (x * x, (x * x) * x), one
 * rounding per product, where powf rounds the power once; other exponents go through powf. */
static QrStatus qr__ew_pow_exec(QrOpCtx *c) {
    const QrTensor *a = c->in[0], *e = c->in[1];
    QrTensor *y = c->out[0];
    if (a->dtype == QR_DT_F32 && e->numel == 1 && qr_dtype_is_float(e->dtype) && y->numel == a->numel) {
        const double ev = qr_tensor_get_f64(e, 0);
        const float *px = a->data;
        float *py = y->data;
        if (ev == 2.0) {
            for (int64_t i = 0; i < a->numel; i++) py[i] = px[i] * px[i];
            return QR_OK;
        }
        if (ev == 3.0) {
            for (int64_t i = 0; i < a->numel; i++) {
                float sq = px[i] * px[i];
                py[i] = sq * px[i];
            }
            return QR_OK;
        }
    }
    return qr__ew_binary_exec(c, QR_BIN_POW);
}
static QrStatus qr__ew_prelu_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_PRELU); }
static QrStatus qr__ew_equal_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_EQ); }
static QrStatus qr__ew_less_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_LT); }
static QrStatus qr__ew_greater_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_GT); }
static QrStatus qr__ew_less_equal_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_LE); }
static QrStatus qr__ew_greater_equal_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_GE); }
static QrStatus qr__ew_and_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_AND); }
static QrStatus qr__ew_or_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_OR); }
static QrStatus qr__ew_xor_exec(QrOpCtx *c) { return qr__ew_binary_exec(c, QR_BIN_XOR); }

/* ==== variadic Min / Max / Sum / Mean ============================================ */

/* All inputs (1..N) share a dtype and broadcast together. */
static QrStatus qr__ew_variadic_shape(QrOpCtx *c) {
    if (c->n_in < 1) return qr_op_fail(c, QR_ERR_INVALID, "at least one input is required");
    for (int k = 0; k < c->n_in; k++) {
        if (!c->in[k]) return qr_op_fail(c, QR_ERR_INVALID, "input %d is missing", k);
        if (c->in[k]->dtype != c->in[0]->dtype)
            return qr_op_fail(c, QR_ERR_INVALID, "input %d has type %s, input 0 has %s", k,
                              qr_dtype_name(c->in[k]->dtype), qr_dtype_name(c->in[0]->dtype));
    }
    if (c->in[0]->dtype == QR_DT_BOOL) return qr_op_fail(c, QR_ERR_INVALID, "bool inputs are not allowed");
    int rank = 0;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr_op_broadcast(c, c->n_in, c->in, &rank, dims));
    return qr_op_set_out(c, 0, c->in[0]->dtype, rank, dims);
}

/* Folds the inputs pairwise into the output: y = in0 op in1, then y = y op in_k.
 * Integer Mean sums into an int64/uint64 scratch first so the sum cannot wrap. */
static QrStatus qr__ew_variadic_exec(QrOpCtx *c, QrBinOp op, bool mean) {
    QrTensor *y = c->out[0];
    if (mean && c->n_in > 1 && qr_dtype_is_int(y->dtype)) {
        QrTensor acc = *y;
        acc.dtype = y->dtype == QR_DT_U64 ? QR_DT_U64 : QR_DT_S64;
        acc.owned = false;
        acc.data = qr_arena_array(c->scratch, (size_t)(y->numel ? y->numel : 1), sizeof(int64_t));
        if (!acc.data) return qr_op_fail(c, QR_ERR_NOMEM, "no scratch memory for %lld elements", (long long)y->numel);
        qr__ew_binary_run(QR_BIN_ADD, c->in[0], c->in[1], &acc);
        for (int k = 2; k < c->n_in; k++) qr__ew_binary_run(QR_BIN_ADD, &acc, c->in[k], &acc);
        const int64_t *pa = acc.data;
        for (int64_t i = 0; i < y->numel; i++) {
            if (acc.dtype == QR_DT_U64) ((uint64_t *)y->data)[i] = (uint64_t)pa[i] / (uint64_t)c->n_in;
            else qr_tensor_set_i64(y, i, pa[i] / c->n_in);
        }
        return QR_OK;
    }
    if (c->n_in == 1) memcpy(y->data, c->in[0]->data, qr_tensor_nbytes(y));
    else {
        qr__ew_binary_run(op, c->in[0], c->in[1], y);
        for (int k = 2; k < c->n_in; k++) qr__ew_binary_run(op, y, c->in[k], y);
    }
    if (!mean || c->n_in == 1) return QR_OK;
    if (y->dtype == QR_DT_F32) {
        float *py = y->data;
        for (int64_t i = 0; i < y->numel; i++) py[i] /= (float)c->n_in;
    } else {
        for (int64_t i = 0; i < y->numel; i++) qr_tensor_set_f64(y, i, qr_tensor_get_f64(y, i) / c->n_in);
    }
    return QR_OK;
}

static QrStatus qr__ew_min_exec(QrOpCtx *c) { return qr__ew_variadic_exec(c, QR_BIN_MIN, false); }
static QrStatus qr__ew_max_exec(QrOpCtx *c) { return qr__ew_variadic_exec(c, QR_BIN_MAX, false); }
static QrStatus qr__ew_sum_exec(QrOpCtx *c) { return qr__ew_variadic_exec(c, QR_BIN_ADD, false); }
static QrStatus qr__ew_mean_exec(QrOpCtx *c) { return qr__ew_variadic_exec(c, QR_BIN_ADD, true); }

/* ==== Where ======================================================================== */

/* Where(cond: bool, X, Y) -> X's type, all three broadcast together. */
static QrStatus qr__ew_where_shape(QrOpCtx *c) {
    const QrTensor *cd = c->in[0], *x = c->in[1], *y = c->in[2];
    if (!cd || !x || !y) return qr_op_fail(c, QR_ERR_INVALID, "all three inputs are required");
    if (cd->dtype != QR_DT_BOOL)
        return qr_op_fail(c, QR_ERR_INVALID, "condition must be bool, not %s", qr_dtype_name(cd->dtype));
    if (x->dtype != y->dtype)
        return qr_op_fail(c, QR_ERR_INVALID, "X and Y types differ (%s vs %s)", qr_dtype_name(x->dtype),
                          qr_dtype_name(y->dtype));
    int rank = 0;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr_op_broadcast(c, 3, c->in, &rank, dims));
    return qr_op_set_out(c, 0, x->dtype, rank, dims);
}

#define QR__EW_WHERE_LOOP(T)                                                                     \
    do {                                                                                        \
        const T *px = x->data, *py = yv->data;                                                  \
        T *po = out->data;                                                                      \
        QR_BCAST3_FOR(rank, dims, st[0], st[1], st[2], {                                    \
            for (int64_t j = 0; j < qr_inner; j++)                                              \
                po[io + j] = pc[ia + j * sa] ? px[ib + j * sb] : py[ic + j * sc];               \
        });                                                                                     \
    } while (0)

static QrStatus qr__ew_where_exec(QrOpCtx *c) {
    const QrTensor *cd = c->in[0], *x = c->in[1], *yv = c->in[2];
    QrTensor *out = c->out[0];
    int64_t st[3][QR_MAX_RANK], dims[QR_MAX_RANK];
    qr_broadcast_strides(cd, out->rank, out->dims, st[0]);
    qr_broadcast_strides(x, out->rank, out->dims, st[1]);
    qr_broadcast_strides(yv, out->rank, out->dims, st[2]);
    for (int d = 0; d < out->rank; d++) dims[d] = out->dims[d];
    int rank = qr__ew_coalesce(out->rank, dims, 3, st);
    const uint8_t *pc = cd->data;
    switch (qr_dtype_size(out->dtype)) {
    case 1: QR__EW_WHERE_LOOP(uint8_t); break;
    case 2: QR__EW_WHERE_LOOP(uint16_t); break;
    case 4: QR__EW_WHERE_LOOP(uint32_t); break;
    case 8: QR__EW_WHERE_LOOP(uint64_t); break;
    default: return qr_op_fail(c, QR_ERR_UNSUPPORTED, "type %s", qr_dtype_name(out->dtype));
    }
    return QR_OK;
}

/* ==== unary ops ================================================================= */

/* Attribute values an elementwise function needs, read once per node. */
typedef struct QrEwParams {
    double alpha, beta, gamma;
    int mode;        /* Gelu: 0 = exact (erf), 1 = tanh approximation */
    bool uns;        /* integer input is uint64 */
} QrEwParams;

typedef double (*QrEwFnF)(double, const QrEwParams *);
typedef int64_t (*QrEwFnI)(int64_t, const QrEwParams *);

static double qr__ew_relu(double v, const QrEwParams *p) { QR_UNUSED(p); return v > 0 ? v : (v != v ? v : 0); }
static double qr__ew_leakyrelu(double v, const QrEwParams *p) { return v < 0 ? v * p->alpha : v; }
static double qr__ew_sigmoid(double v, const QrEwParams *p) {
    QR_UNUSED(p);
    if (v >= 0) return 1.0 / (1.0 + exp(-v));
    double e = exp(v);
    return e / (1.0 + e);
}
static double qr__ew_hardsigmoid(double v, const QrEwParams *p) {
    float t = (float)p->alpha * (float)v;      /* float32, multiply then add, as ONNX Runtime */
    t = t + (float)p->beta;
    return t < 0 ? 0 : t > 1 ? 1 : t;
}
static double qr__ew_hardswish(double v, const QrEwParams *p) {
    QR_UNUSED(p);
    float t = (1.0f / 6.0f) * (float)v;          /* ONNX's function body: HardSigmoid(1/6, 0.5) then Mul, float32 */
    t = t + 0.5f;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return (float)v * t;
}
static double qr__ew_tanh(double v, const QrEwParams *p) { QR_UNUSED(p); return tanh(v); }
static double qr__ew_elu(double v, const QrEwParams *p) { return v < 0 ? p->alpha * expm1(v) : v; }
static double qr__ew_selu(double v, const QrEwParams *p) { return p->gamma * (v > 0 ? v : p->alpha * expm1(v)); }
static double qr__ew_gelu(double v, const QrEwParams *p) {
    if (p->mode == 1) return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    return 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
}
static double qr__ew_erf(double v, const QrEwParams *p) { QR_UNUSED(p); return erf(v); }
static double qr__ew_exp(double v, const QrEwParams *p) { QR_UNUSED(p); return exp(v); }
static double qr__ew_log(double v, const QrEwParams *p) { QR_UNUSED(p); return log(v); }
static double qr__ew_sqrt(double v, const QrEwParams *p) { QR_UNUSED(p); return sqrt(v); }
static double qr__ew_neg(double v, const QrEwParams *p) { QR_UNUSED(p); return -v; }
static double qr__ew_abs(double v, const QrEwParams *p) { QR_UNUSED(p); return fabs(v); }
static double qr__ew_reciprocal(double v, const QrEwParams *p) { QR_UNUSED(p); return 1.0 / v; }
/* log(1 + e^v) without overflow for large v. */
static double qr__ew_softplus(double v, const QrEwParams *p) {
    QR_UNUSED(p);
    return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
}
static double qr__ew_softsign(double v, const QrEwParams *p) { QR_UNUSED(p); return v / (1.0 + fabs(v)); }
static double qr__ew_mish(double v, const QrEwParams *p) { return v * tanh(qr__ew_softplus(v, p)); }
static double qr__ew_swish(double v, const QrEwParams *p) { return v * qr__ew_sigmoid(p->alpha * v, p); }
static double qr__ew_sin(double v, const QrEwParams *p) { QR_UNUSED(p); return sin(v); }
static double qr__ew_cos(double v, const QrEwParams *p) { QR_UNUSED(p); return cos(v); }
static double qr__ew_floor(double v, const QrEwParams *p) { QR_UNUSED(p); return floor(v); }
static double qr__ew_ceil(double v, const QrEwParams *p) { QR_UNUSED(p); return ceil(v); }
/* rint rounds half to even under the default rounding mode, as ONNX Round requires. */
static double qr__ew_round(double v, const QrEwParams *p) { QR_UNUSED(p); return rint(v); }
static double qr__ew_sign(double v, const QrEwParams *p) { QR_UNUSED(p); return v > 0 ? 1 : v < 0 ? -1 : v; }

static int64_t qr__ew_relu_i(int64_t v, const QrEwParams *p) { return p->uns || v > 0 ? v : 0; }
static int64_t qr__ew_neg_i(int64_t v, const QrEwParams *p) { QR_UNUSED(p); return (int64_t)(0 - (uint64_t)v); }
static int64_t qr__ew_abs_i(int64_t v, const QrEwParams *p) {
    return p->uns || v >= 0 ? v : (int64_t)(0 - (uint64_t)v);
}
static int64_t qr__ew_sign_i(int64_t v, const QrEwParams *p) { return p->uns ? v != 0 : v > 0 ? 1 : v < 0 ? -1 : 0; }

/* One unary operator: its float function, optional integer function (NULL: float
 * inputs only) and attribute defaults. */
typedef struct QrEwUnaryDef {
    const char *op_type;
    QrEwFnF f;
    QrEwFnI fi;
    double alpha, beta, gamma;
} QrEwUnaryDef;

static const QrEwUnaryDef qr__ew_unary_defs[] = {
    { "Relu", qr__ew_relu, qr__ew_relu_i, 0, 0, 0 },
    { "LeakyRelu", qr__ew_leakyrelu, NULL, 0.01, 0, 0 },
    { "Sigmoid", qr__ew_sigmoid, NULL, 0, 0, 0 },
    { "HardSigmoid", qr__ew_hardsigmoid, NULL, 0.2, 0.5, 0 },
    { "HardSwish", qr__ew_hardswish, NULL, 0, 0, 0 },
    { "Tanh", qr__ew_tanh, NULL, 0, 0, 0 },
    { "Elu", qr__ew_elu, NULL, 1.0, 0, 0 },
    { "Selu", qr__ew_selu, NULL, 1.67326319217681884765625, 0, 1.05070102214813232421875 },
    { "Gelu", qr__ew_gelu, NULL, 0, 0, 0 },
    { "Erf", qr__ew_erf, NULL, 0, 0, 0 },
    { "Exp", qr__ew_exp, NULL, 0, 0, 0 },
    { "Log", qr__ew_log, NULL, 0, 0, 0 },
    { "Sqrt", qr__ew_sqrt, NULL, 0, 0, 0 },
    { "Neg", qr__ew_neg, qr__ew_neg_i, 0, 0, 0 },
    { "Abs", qr__ew_abs, qr__ew_abs_i, 0, 0, 0 },
    { "Reciprocal", qr__ew_reciprocal, NULL, 0, 0, 0 },
    { "Softplus", qr__ew_softplus, NULL, 0, 0, 0 },
    { "Softsign", qr__ew_softsign, NULL, 0, 0, 0 },
    { "Mish", qr__ew_mish, NULL, 0, 0, 0 },
    { "Swish", qr__ew_swish, NULL, 1.0, 0, 0 },
    { "Sin", qr__ew_sin, NULL, 0, 0, 0 },
    { "Cos", qr__ew_cos, NULL, 0, 0, 0 },
    { "Floor", qr__ew_floor, NULL, 0, 0, 0 },
    { "Ceil", qr__ew_ceil, NULL, 0, 0, 0 },
    { "Round", qr__ew_round, NULL, 0, 0, 0 },
    { "Sign", qr__ew_sign, qr__ew_sign_i, 0, 0, 0 },
};

static const QrEwUnaryDef *qr__ew_unary_find(const QrOpCtx *c) {
    for (int i = 0; i < QR_ARRAY_LEN(qr__ew_unary_defs); i++)
        if (strcmp(qr__ew_unary_defs[i].op_type, c->node->op_type) == 0) return &qr__ew_unary_defs[i];
    return NULL;
}

/* Reads the node's alpha/beta/gamma (defaults from d) and Gelu's approximate mode. */
static QrStatus qr__ew_unary_params(const QrOpCtx *c, const QrEwUnaryDef *d, QrEwParams *p) {
    p->alpha = qr_node_attr(c->node, "alpha") ? qr_attr_float(c->node, "alpha", 0) : d->alpha;
    p->beta = qr_node_attr(c->node, "beta") ? qr_attr_float(c->node, "beta", 0) : d->beta;
    p->gamma = qr_node_attr(c->node, "gamma") ? qr_attr_float(c->node, "gamma", 0) : d->gamma;
    p->mode = 0;
    p->uns = c->in[0] && c->in[0]->dtype == QR_DT_U64;
    if (d->f == qr__ew_gelu) {
        const char *ap = qr_attr_str(c->node, "approximate", "none");
        if (strcmp(ap, "tanh") == 0) p->mode = 1;
        else if (strcmp(ap, "none") != 0)
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "approximate='%s' (supported: none, tanh)", ap);
    }
    return QR_OK;
}

static QrStatus qr__ew_unary_shape(QrOpCtx *c) {
    const QrEwUnaryDef *d = qr__ew_unary_find(c);
    const QrTensor *x = c->in[0];
    if (!d) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "no unary definition");
    if (!x) return qr_op_fail(c, QR_ERR_INVALID, "input 0 is required");
    if (!qr_dtype_is_float(x->dtype) && (!d->fi || x->dtype == QR_DT_BOOL))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input has type %s; only %s types are supported",
                          qr_dtype_name(x->dtype), d->fi ? "float and integer" : "float");
    QrEwParams p;
    QR_TRY(qr__ew_unary_params(c, d, &p));
    return qr_op_set_out(c, 0, x->dtype, x->rank, x->dims);
}

static QrStatus qr__ew_unary_exec(QrOpCtx *c) {
    const QrEwUnaryDef *d = qr__ew_unary_find(c);
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    QrEwParams p;
    QR_TRY(qr__ew_unary_params(c, d, &p));
    QrEwFnF f = d->f;
    if (x->dtype == QR_DT_F32) {
        const float *px = x->data;
        float *py = y->data;
        if (f == qr__ew_relu) {
            const QrF32Step relu = { .op = QR_F32_STEP_RELU };
            qr_ew_steps_run(&relu, 1, px, py, 1, 1, x->numel);
        } else if (f == qr__ew_gelu && p.mode == 0) {   /* ORT: 0.5x * (1 + erf(x / sqrt 2)), MLAS's erf */
            for (int64_t i = 0; i < x->numel; i++) py[i] = px[i] * (float)M_SQRT1_2;
            qr_kern.f32_map(QR_F32_MAP_ERF, py, py, x->numel);
            for (int64_t i = 0; i < x->numel; i++) {
                float h = 0.5f * px[i];
                py[i] = h * (py[i] + 1.0f);
            }
        } else if (f == qr__ew_gelu && p.mode == 1) {   /* ORT: t = x * ((C*x)*x + B), MLAS's tanh, 0.5x * (t + 1) */
            const float B = 0.7978845608028654f, C = 0.035677408136300125f;   /* sqrt(2/pi), 0.044715 sqrt(2/pi) */
            for (int64_t i = 0; i < x->numel; i++) {
                float v = px[i], q = (C * v) * v;
                QR_KERN_ROUNDED(q);   /* not contracted: ORT's loop is plain C++ built without FMA */
                py[i] = v * (q + B);
            }
            qr_kern.f32_map(QR_F32_MAP_TANH, py, py, x->numel);
            for (int64_t i = 0; i < x->numel; i++) {
                float h = 0.5f * px[i];
                py[i] = h * (py[i] + 1.0f);
            }
        } else if (f == qr__ew_exp) {   /* MLAS's exp kernel, its AVX-512F form on a CPU with AVX-512F (ORT's pick) */
            qr_ew_map_run(qr_kern.ort_wide ? QR_F32_MAP_EXP_WIDE : QR_F32_MAP_EXP, px, py, x->numel);
        } else if (f == qr__ew_erf || f == qr__ew_sigmoid || f == qr__ew_tanh) {   /* MLAS's kernels */
            qr_ew_map_run(f == qr__ew_erf ? QR_F32_MAP_ERF : f == qr__ew_sigmoid ? QR_F32_MAP_SIGMOID : QR_F32_MAP_TANH,
                          px, py, x->numel);
        } else {
            for (int64_t i = 0; i < x->numel; i++) py[i] = (float)f(px[i], &p);
        }
    } else if (qr_dtype_is_float(x->dtype)) {
        for (int64_t i = 0; i < x->numel; i++) qr_tensor_set_f64(y, i, f(qr_tensor_get_f64(x, i), &p));
    } else {
        for (int64_t i = 0; i < x->numel; i++) qr_tensor_set_i64(y, i, d->fi(qr_tensor_get_i64(x, i), &p));
    }
    return QR_OK;
}

/* Not: bool -> bool. */
static QrStatus qr__ew_not_shape(QrOpCtx *c) {
    QR_TRY(qr__ew_need_inputs(c, 1));
    if (c->in[0]->dtype != QR_DT_BOOL)
        return qr_op_fail(c, QR_ERR_INVALID, "input must be bool, not %s", qr_dtype_name(c->in[0]->dtype));
    return qr_op_set_out(c, 0, QR_DT_BOOL, c->in[0]->rank, c->in[0]->dims);
}

static QrStatus qr__ew_not_exec(QrOpCtx *c) {
    const uint8_t *px = c->in[0]->data;
    uint8_t *py = c->out[0]->data;
    for (int64_t i = 0; i < c->in[0]->numel; i++) py[i] = !px[i];
    return QR_OK;
}

/* ==== Clip ========================================================================= */

/* Clip(x[, min][, max]): bounds are attributes before opset 11, optional scalar
 * inputs from 11 (either may be omitted or empty-named). y = min(max(x, lo), hi). */
static QrStatus qr__ew_clip_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    if (!x) return qr_op_fail(c, QR_ERR_INVALID, "input 0 is required");
    if (x->dtype == QR_DT_BOOL || (c->node->opset < 11 && !qr_dtype_is_float(x->dtype)))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input has type %s", qr_dtype_name(x->dtype));
    for (int k = 1; k < 3; k++) {
        const QrTensor *t = qr_op_in(c, k);
        if (!t) continue;
        if (t->numel != 1)
            return qr_op_fail(c, QR_ERR_INVALID, "input %d (%s bound) must be a scalar, has %lld elements", k,
                              k == 1 ? "min" : "max", (long long)t->numel);
        if (qr_dtype_is_float(t->dtype) != qr_dtype_is_float(x->dtype))
            return qr_op_fail(c, QR_ERR_INVALID, "input %d has type %s, input 0 has %s", k, qr_dtype_name(t->dtype),
                              qr_dtype_name(x->dtype));
    }
    return qr_op_set_out(c, 0, x->dtype, x->rank, x->dims);
}

static QrStatus qr__ew_clip_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0], *tlo = qr_op_in(c, 1), *thi = qr_op_in(c, 2);
    QrTensor *y = c->out[0];
    QrEwClass k = qr__ew_class(x->dtype);
    if (k == QR_EW_F32 || k == QR_EW_F64) {
        double lo = -INFINITY, hi = INFINITY;
        if (c->node->opset < 11) {
            lo = qr_attr_float(c->node, "min", -INFINITY);
            hi = qr_attr_float(c->node, "max", INFINITY);
        } else {
            if (tlo) lo = qr_tensor_get_f64(tlo, 0);
            if (thi) hi = qr_tensor_get_f64(thi, 0);
        }
        if (k == QR_EW_F32) {
            const QrF32Step clip = { .op = QR_F32_STEP_CLAMP, .lo = (float)lo, .hi = (float)hi };
            qr_ew_steps_run(&clip, 1, x->data, y->data, 1, 1, x->numel);
        } else {
            for (int64_t i = 0; i < x->numel; i++) {
                double v = qr_tensor_get_f64(x, i);
                v = v < lo ? lo : v;
                qr_tensor_set_f64(y, i, v > hi ? hi : v);
            }
        }
    } else if (k == QR_EW_U64) {
        uint64_t lo = tlo ? (uint64_t)qr_tensor_get_i64(tlo, 0) : 0;
        uint64_t hi = thi ? (uint64_t)qr_tensor_get_i64(thi, 0) : UINT64_MAX;
        const uint64_t *px = x->data;
        uint64_t *py = y->data;
        for (int64_t i = 0; i < x->numel; i++) {
            uint64_t v = px[i] < lo ? lo : px[i];
            py[i] = v > hi ? hi : v;
        }
    } else {
        int64_t lo, hi;
        qr__ew_int_limits(x->dtype, &lo, &hi);
        if (tlo) lo = qr_tensor_get_i64(tlo, 0);
        if (thi) hi = qr_tensor_get_i64(thi, 0);
        for (int64_t i = 0; i < x->numel; i++) {
            int64_t v = qr_tensor_get_i64(x, i);
            v = v < lo ? lo : v;
            qr_tensor_set_i64(y, i, v > hi ? hi : v);
        }
    }
    return QR_OK;
}

/* ==== Cast, CastLike ================================================================ */

/* Cast(to): every supported dtype both ways; float -> int truncates toward zero, integers
 * wrap into narrower integer types. `saturate` (19+, default 1) only concerns float8 targets;
 * float4 always saturates. `round_mode` (24+: up, down, nearest) only concerns float8e8m0. */
static QrStatus qr__ew_cast_round_mode(QrOpCtx *c, QrE8m0Round *mode) {
    const char *rm = qr_attr_str(c->node, "round_mode", "up");
    if (!strcmp(rm, "up")) *mode = QR_E8M0_UP;
    else if (!strcmp(rm, "down")) *mode = QR_E8M0_DOWN;
    else if (!strcmp(rm, "nearest")) *mode = QR_E8M0_NEAREST;
    else return qr_op_fail(c, QR_ERR_UNSUPPORTED, "round_mode '%s' is not supported (up, down, nearest are)", rm);
    return QR_OK;
}

static QrStatus qr__ew_cast_to(QrOpCtx *c, int64_t to) {
    QR_TRY(qr__ew_need_inputs(c, 1));
    const QrTensor *x = c->in[0];
    if (to <= 0 || to > 64 || !qr_dtype_supported((QrDType)to))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "cast to type %lld is not supported", (long long)to);
    if (!qr_dtype_supported(x->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "cast from %s is not supported", qr_dtype_name(x->dtype));
    QrE8m0Round rm;
    QR_TRY(qr__ew_cast_round_mode(c, &rm));
    return qr_op_set_out(c, 0, (QrDType)to, x->rank, x->dims);
}

static QrStatus qr__ew_cast_shape(QrOpCtx *c) {
    const QrAttr *a = qr_node_attr(c->node, "to");
    if (!a || a->type != QR_ATTR_INT) return qr_op_fail(c, QR_ERR_INVALID, "attribute 'to' is required");
    return qr__ew_cast_to(c, a->i);
}

static QrStatus qr__ew_castlike_shape(QrOpCtx *c) {
    QR_TRY(qr__ew_need_inputs(c, 2));
    return qr__ew_cast_to(c, c->in[1]->dtype);
}

static QrStatus qr__ew_cast_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    bool sat = qr_attr_int(c->node, "saturate", 1) != 0;
    QrE8m0Round rm;
    QR_TRY(qr__ew_cast_round_mode(c, &rm));
    /* qr_tensor_convert saturates (and rounds e8m0 up); other float8 conversions go here. */
    if (qr_dtype_is_minifloat(y->dtype) && x->dtype != y->dtype &&
        (!sat || (y->dtype == QR_DT_F8E8M0 && rm != QR_E8M0_UP))) {
        uint8_t *py = y->data;
        for (int64_t i = 0; i < x->numel; i++) {
            double v = qr_tensor_get_f64(x, i);
            py[i] = y->dtype == QR_DT_F8E8M0 ? qr_tensor_f32_to_e8m0((float)v, sat, rm) : qr_f64_to_f8(v, y->dtype, sat);
        }
        return QR_OK;
    }
    QrStatus st = qr_tensor_convert(x, y);
    if (st != QR_OK) return qr_op_fail(c, st, "%s", qr_err_msg());
    return QR_OK;
}

/* ==== Softmax, LogSoftmax, Hardmax ==================================================== */

typedef enum QrEwSoftmaxMode { QR_EW_SOFTMAX, QR_EW_LOGSOFTMAX, QR_EW_HARDMAX } QrEwSoftmaxMode;

/* Splits x into (outer, n, inner): the op runs over n elements at stride inner.
 * Before opset 13 the input is coerced to 2-D at `axis` (default 1), so n is the
 * product of dims[axis:] and inner = 1; from 13 it runs along `axis` (default -1). */
static QrStatus qr__ew_softmax_dims(const QrOpCtx *c, int64_t *outer, int64_t *n, int64_t *inner) {
    const QrTensor *x = c->in[0];
    int r = x->rank;
    bool legacy = c->node->opset < 13;
    int64_t axis = qr_attr_int(c->node, "axis", legacy ? 1 : -1);
    int a = 0;
    if (legacy) {
        int64_t aa = axis < 0 ? axis + r : axis;
        if (aa < 0 || aa > r)
            return qr_op_fail(c, QR_ERR_INVALID, "axis %lld is out of range for rank %d", (long long)axis, r);
        a = (int)aa;
        *outer = qr__ew_prod(x->dims, 0, a);
        *n = qr__ew_prod(x->dims, a, r);
        *inner = 1;
        return QR_OK;
    }
    if (r == 0) { *outer = *n = *inner = 1; return QR_OK; }
    QR_TRY(qr_op_axis(c, axis, r, &a));
    *outer = qr__ew_prod(x->dims, 0, a);
    *n = x->dims[a];
    *inner = qr__ew_prod(x->dims, a + 1, r);
    return QR_OK;
}

static QrStatus qr__ew_softmax_shape(QrOpCtx *c) {
    QR_TRY(qr__ew_need_inputs(c, 1));
    QR_TRY(qr_op_need_float(c, 0));
    int64_t o, n, i;
    QR_TRY(qr__ew_softmax_dims(c, &o, &n, &i));
    return qr_op_set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
}

/* Numerically stable: exponentials of (x - max) only. */
static QrStatus qr__ew_softmax_run(QrOpCtx *c, QrEwSoftmaxMode mode) {
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    int64_t outer, n, inner;
    QR_TRY(qr__ew_softmax_dims(c, &outer, &n, &inner));
    if (n == 0) return QR_OK;
    bool f32 = x->dtype == QR_DT_F32;
    const float *px = x->data;
    float *py = y->data;
    if (f32 && mode != QR_EW_HARDMAX) {   /* ONNX Runtime's MLAS arithmetic (QrF32SoftmaxFn) */
        const bool lg = mode == QR_EW_LOGSOFTMAX;
        if (inner == 1) {   /* rows of the last axis, threaded */
            QrEwRowJob j = { .kind = QR__EW_ROW_SOFTMAX, .rows = outer, .n = n, .x = px, .y = py, .wide = qr_kern.ort_wide,
                             .logsm = lg };
            qr__ew_rows_run(&j);
            return QR_OK;
        }
        /* ORT moves the axis last (a transpose), runs the rows, and moves it back */
        float *row = qr_arena_array(c->scratch, (size_t)n, sizeof(float));
        if (!row) return qr_op_fail(c, QR_ERR_NOMEM, "no scratch memory for a row of %lld", (long long)n);
        for (int64_t o = 0; o < outer; o++)
            for (int64_t in = 0; in < inner; in++) {
                const int64_t base = o * n * inner + in;
                for (int64_t k = 0; k < n; k++) row[k] = px[base + k * inner];
                qr_kern.f32_softmax(row, row, 1, n, qr_kern.ort_wide, lg);
                for (int64_t k = 0; k < n; k++) py[base + k * inner] = row[k];
            }
        return QR_OK;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * n * inner + in;
#define QR__EW_X(k) (f32 ? (double)px[base + (k) * inner] : qr_tensor_get_f64(x, base + (k) * inner))
#define QR__EW_SETY(k, v)                                                    \
    do {                                                                     \
        if (f32) py[base + (k) * inner] = (float)(v);                        \
        else qr_tensor_set_f64(y, base + (k) * inner, (v));                  \
    } while (0)
            double mx = QR__EW_X(0);
            int64_t arg = 0;
            for (int64_t k = 1; k < n; k++) {
                double v = QR__EW_X(k);
                if (v > mx) { mx = v; arg = k; }
            }
            if (mode == QR_EW_HARDMAX) {
                for (int64_t k = 0; k < n; k++) QR__EW_SETY(k, k == arg ? 1.0 : 0.0);
                continue;
            }
            if (isinf(mx) && mx < 0) mx = 0;   /* all -inf: avoid inf - inf */
            double sum = 0;
            if (mode == QR_EW_SOFTMAX) {
                for (int64_t k = 0; k < n; k++) {
                    double e = exp(QR__EW_X(k) - mx);
                    sum += e;
                    QR__EW_SETY(k, e);
                }
                double inv = 1.0 / sum;
                if (f32) for (int64_t k = 0; k < n; k++) py[base + k * inner] = (float)(py[base + k * inner] * inv);
                else for (int64_t k = 0; k < n; k++)
                    qr_tensor_set_f64(y, base + k * inner, qr_tensor_get_f64(y, base + k * inner) * inv);
            } else {
                for (int64_t k = 0; k < n; k++) sum += exp(QR__EW_X(k) - mx);
                double ls = log(sum) + mx;
                for (int64_t k = 0; k < n; k++) QR__EW_SETY(k, QR__EW_X(k) - ls);
            }
#undef QR__EW_X
#undef QR__EW_SETY
        }
    return QR_OK;
}

static QrStatus qr__ew_softmax_exec(QrOpCtx *c) { return qr__ew_softmax_run(c, QR_EW_SOFTMAX); }
static QrStatus qr__ew_logsoftmax_exec(QrOpCtx *c) { return qr__ew_softmax_run(c, QR_EW_LOGSOFTMAX); }
static QrStatus qr__ew_hardmax_exec(QrOpCtx *c) { return qr__ew_softmax_run(c, QR_EW_HARDMAX); }

/* ==== reductions ===================================================================== */

typedef enum QrRedOp {
    QR_RED_SUM, QR_RED_MEAN, QR_RED_MAX, QR_RED_MIN, QR_RED_PROD, QR_RED_SUMSQ, QR_RED_L1, QR_RED_L2,
    QR_RED_LOGSUM, QR_RED_LOGSUMEXP,
} QrRedOp;

static const struct { const char *op_type; QrRedOp op; } qr__ew_reduce_names[] = {
    { "ReduceSum", QR_RED_SUM }, { "ReduceMean", QR_RED_MEAN }, { "ReduceMax", QR_RED_MAX },
    { "ReduceMin", QR_RED_MIN }, { "ReduceProd", QR_RED_PROD }, { "ReduceSumSquare", QR_RED_SUMSQ },
    { "ReduceL1", QR_RED_L1 }, { "ReduceL2", QR_RED_L2 }, { "ReduceLogSum", QR_RED_LOGSUM },
    { "ReduceLogSumExp", QR_RED_LOGSUMEXP },
};

static QrRedOp qr__ew_reduce_op(const QrOpCtx *c) {
    for (int i = 0; i < QR_ARRAY_LEN(qr__ew_reduce_names); i++)
        if (strcmp(qr__ew_reduce_names[i].op_type, c->node->op_type) == 0) return qr__ew_reduce_names[i].op;
    return QR_RED_SUM;
}

/* Which axes are reduced. `axes` is an attribute before opset 13 (ReduceSum) or 18
 * (the others), an optional int64 input after. Absent/empty axes reduce everything,
 * unless noop_with_empty_axes = 1: then nothing is reduced (every element is its
 * own set, so e.g. ReduceSumSquare still squares). */
static QrStatus qr__ew_reduce_plan(const QrOpCtx *c, bool *mask, int *out_rank, int64_t *out_dims) {
    const QrTensor *x = c->in[0];
    int r = x->rank;
    int64_t axes[64];
    int n = -1;
    int input_opset = qr__ew_reduce_op(c) == QR_RED_SUM ? 13 : 18;
    if (c->node->opset >= input_opset) {
        if (qr_op_in(c, 1)) QR_TRY(qr_op_ints(c, 1, axes, QR_ARRAY_LEN(axes), &n));
    } else {
        const int64_t *a;
        n = qr_attr_ints(c->node, "axes", &a);
        if (n > QR_ARRAY_LEN(axes)) return qr_op_fail(c, QR_ERR_INVALID, "%d axes for rank %d", n, r);
        for (int i = 0; i < n; i++) axes[i] = a[i];
    }
    bool noop = qr_attr_int(c->node, "noop_with_empty_axes", 0) != 0;
    bool keep = qr_attr_int(c->node, "keepdims", 1) != 0;
    for (int d = 0; d < QR_MAX_RANK; d++) mask[d] = n <= 0 && !noop;
    for (int i = 0; i < n; i++) {
        int a = 0;
        QR_TRY(qr_op_axis(c, axes[i], r, &a));
        mask[a] = true;
    }
    int k = 0;
    for (int d = 0; d < r; d++) {
        if (!mask[d]) out_dims[k++] = x->dims[d];
        else if (keep) out_dims[k++] = 1;
    }
    *out_rank = k;
    return QR_OK;
}

static QrStatus qr__ew_reduce_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrRedOp op = qr__ew_reduce_op(c);
    if (!x) return qr_op_fail(c, QR_ERR_INVALID, "input 0 is required");
    if (x->dtype == QR_DT_BOOL && op != QR_RED_MAX && op != QR_RED_MIN)
        return qr_op_fail(c, QR_ERR_INVALID, "bool input is only allowed for ReduceMax/ReduceMin");
    bool mask[QR_MAX_RANK];
    int rank;
    int64_t dims[QR_MAX_RANK];
    QR_TRY(qr__ew_reduce_plan(c, mask, &rank, dims));
    return qr_op_set_out(c, 0, x->dtype, rank, dims);
}

/* Walks the R elements of one reduced set: `off` is each element's offset in x,
 * starting at `base`, stepping through the reduced dims rd/rs (nr of them). */
#define QR__EW_RED_WALK(...)                                                       \
    do {                                                                           \
        int64_t ridx[QR_MAX_RANK] = {0}, off = base;                               \
        for (int64_t qr_i = 0; qr_i < R; qr_i++) {                                 \
            __VA_ARGS__;                                                           \
            for (int d = nr - 1; d >= 0; d--) {                                    \
                off += rs[d];                                                      \
                if (++ridx[d] < rd[d]) break;                                      \
                off -= rs[d] * rd[d];                                              \
                ridx[d] = 0;                                                       \
            }                                                                      \
        }                                                                          \
    } while (0)

/* Sum of p[0..n) in the order of Eigen's vectorized sum() with SSE packets of four, which
 * ONNX Runtime's ReduceMean uses when the reduced axes are the trailing ones (its "KR" fast
 * reduction): the packets start at the first 16-byte aligned element (off: p's element offset
 * in its 64-byte aligned tensor); two packet accumulators over pairs of packets, added, a last
 * lone packet added, reduced as (a0 + a2) + (a1 + a3); then the elements before the first
 * packet and after the last, in order. Fewer than four aligned elements: a plain sum. */
static float qr__ew_sum_eigen(const float *p, int64_t n, int64_t off) {
    int64_t start = (4 - off % 4) % 4;
    if (start > n) start = n;
    const int64_t end2 = start + (n - start) / 8 * 8, end = start + (n - start) / 4 * 4;
    if (end == start) {
        float s = p[0];
        for (int64_t i = 1; i < n; i++) s = s + p[i];
        return s;
    }
    float a[4], b[4];
    for (int l = 0; l < 4; l++) a[l] = p[start + l];
    if (end - start > 4) {
        for (int l = 0; l < 4; l++) b[l] = p[start + 4 + l];
        for (int64_t i = start + 8; i < end2; i += 8)
            for (int l = 0; l < 4; l++) { a[l] = a[l] + p[i + l]; b[l] = b[l] + p[i + 4 + l]; }
        for (int l = 0; l < 4; l++) a[l] = a[l] + b[l];
        if (end > end2)
            for (int l = 0; l < 4; l++) a[l] = a[l] + p[end2 + l];
    }
    float s = (a[0] + a[2]) + (a[1] + a[3]);
    for (int64_t i = 0; i < start; i++) s = s + p[i];
    for (int64_t i = end; i < n; i++) s = s + p[i];
    return s;
}

/* Streams over x once per output element (twice for LogSumExp: max first).
 * Floats accumulate in double (float ReduceMean over leading or trailing axes: ONNX Runtime's
 * float sums, see below); integer Sum/Prod/Max/Min/SumSquare/L1 are exact
 * and wrap like the type, the other integer reductions go through double.
 * Empty sets give 0 (sums), 1 (Prod), -inf/+inf or the type's range (Max/Min),
 * NaN (Mean) and -inf (LogSum, LogSumExp). */
static QrStatus qr__ew_reduce_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    QrRedOp op = qr__ew_reduce_op(c);
    bool mask[QR_MAX_RANK];
    int orank;
    int64_t odims[QR_MAX_RANK];
    QR_TRY(qr__ew_reduce_plan(c, mask, &orank, odims));
    int r = x->rank, nk = 0, nr = 0;
    int64_t st[QR_MAX_RANK], kd[QR_MAX_RANK], ks[QR_MAX_RANK], rd[QR_MAX_RANK], rs[QR_MAX_RANK];
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) { st[d] = s; s *= x->dims[d]; }
    for (int d = 0; d < r; d++) {
        if (mask[d]) { rd[nr] = x->dims[d]; rs[nr++] = st[d]; }
        else { kd[nk] = x->dims[d]; ks[nk++] = st[d]; }
    }
    int64_t O = y->numel;
    if (O == 0) return QR_OK;
    int64_t R = qr__ew_prod(rd, 0, nr);   /* O > 0, so a zero dim among rd makes R = 0 */
    /* Float ReduceMean as ONNX Runtime's fast reductions compute it when, dims of 1 aside, the
     * reduced axes all come after the kept ones (KR: each row by qr__ew_sum_eigen), all before
     * them (RK: the rows added one after another into the first, column by column), or form one
     * run with kept axes on both sides (KRK: for each of the kb leading positions, the R rows of
     * ka values summed by MLAS's M=1 SGEMM against a row of ones, qr_f32_gemv_m1); then / R. */
    bool kr = true, rk = true, krk = true;
    int64_t kb = 1, ka = 1;
    for (int d = 0, seen_r = 0, seen_k = 0, phase = 0; d < r; d++) {
        if (x->dims[d] == 1) continue;
        if (mask[d]) { seen_r = 1; if (seen_k) rk = false; }
        else { seen_k = 1; if (seen_r) kr = false; }
        if (phase == 0 && !mask[d]) kb *= x->dims[d];
        else if (phase == 0) phase = 1;
        else if (phase == 1 && !mask[d]) { phase = 2; ka *= x->dims[d]; }
        else if (phase == 2 && !mask[d]) ka *= x->dims[d];
        else if (phase == 2) krk = false;
    }
    krk = krk && !kr && !rk && kb * ka == O;
    if (op == QR_RED_MEAN && x->dtype == QR_DT_F32 && R > 0 && krk) {
        float *ones = malloc((size_t)R * sizeof(float));
        if (!ones) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory (%lld floats)", (long long)R);
        for (int64_t k = 0; k < R; k++) ones[k] = 1.0f;
        const float *pxr = x->data;
        float *py = y->data;
        for (int64_t o = 0; o < kb; o++) qr_f32_gemv_m1(ka, R, ones, pxr + o * R * ka, ka, py + o * ka, false);
        for (int64_t o = 0; o < O; o++) py[o] = py[o] / (float)R;
        free(ones);
        return QR_OK;
    }
    if (op == QR_RED_MEAN && x->dtype == QR_DT_F32 && R > 0 && (kr || rk)) {
        const float *pxr = x->data;
        float *py = y->data;
        if (kr) {
            for (int64_t o = 0; o < O; o++) py[o] = qr__ew_sum_eigen(pxr + o * R, R, o * R) / (float)R;
        } else {
            for (int64_t o = 0; o < O; o++) py[o] = pxr[o];
            for (int64_t k = 1; k < R; k++)
                for (int64_t o = 0; o < O; o++) py[o] = py[o] + pxr[k * O + o];
            for (int64_t o = 0; o < O; o++) py[o] = py[o] / (float)R;
        }
        return QR_OK;
    }
    bool int_path = !qr_dtype_is_float(x->dtype) && op != QR_RED_MEAN && op != QR_RED_L2 && op != QR_RED_LOGSUM &&
                    op != QR_RED_LOGSUMEXP;
    int64_t lo, hi;
    qr__ew_int_limits(x->dtype, &lo, &hi);
    bool uns = x->dtype == QR_DT_U64, f32 = x->dtype == QR_DT_F32;
    const float *px = x->data;
    int64_t kidx[QR_MAX_RANK] = {0}, base = 0;
    for (int64_t o = 0; o < O; o++) {
        if (int_path) {
            uint64_t acc = op == QR_RED_PROD ? 1 : op == QR_RED_MAX ? (uns ? 0 : (uint64_t)lo)
                         : op == QR_RED_MIN ? (uns ? UINT64_MAX : (uint64_t)hi) : 0;
            QR__EW_RED_WALK({
                int64_t v = qr_tensor_get_i64(x, off);
                uint64_t u = (uint64_t)v;
                switch (op) {
                case QR_RED_PROD: acc *= u; break;
                case QR_RED_SUMSQ: acc += u * u; break;
                case QR_RED_L1: acc += uns || v >= 0 ? u : 0 - u; break;
                case QR_RED_MAX: if (uns ? u > acc : v > (int64_t)acc) acc = u; break;
                case QR_RED_MIN: if (uns ? u < acc : v < (int64_t)acc) acc = u; break;
                default: acc += u; break;
                }
            });
            if (uns) ((uint64_t *)y->data)[o] = acc;
            else qr_tensor_set_i64(y, o, (int64_t)acc);
        } else {
            double mx = 0;
            double acc = op == QR_RED_PROD ? 1 : op == QR_RED_MAX ? -INFINITY : op == QR_RED_MIN ? INFINITY : 0;
            if (op == QR_RED_LOGSUMEXP) {
                mx = -INFINITY;
                QR__EW_RED_WALK({
                    double v = f32 ? (double)px[off] : qr_tensor_get_f64(x, off);
                    if (v > mx) mx = v;
                });
                if (isinf(mx)) mx = 0;   /* all -inf (or +inf present): no shift */
            }
            QR__EW_RED_WALK({
                double v = f32 ? (double)px[off] : qr_tensor_get_f64(x, off);
                switch (op) {
                case QR_RED_PROD: acc *= v; break;
                case QR_RED_SUMSQ: case QR_RED_L2: acc += v * v; break;
                case QR_RED_L1: acc += fabs(v); break;
                case QR_RED_MAX: if (v > acc || v != v) acc = v; break;   /* NaN sticks */
                case QR_RED_MIN: if (v < acc || v != v) acc = v; break;
                case QR_RED_LOGSUMEXP: acc += exp(v - mx); break;
                default: acc += v; break;
                }
                if (acc != acc && (op == QR_RED_MAX || op == QR_RED_MIN)) break;
            });
            if (op == QR_RED_MEAN) acc = R ? acc / (double)R : NAN;
            else if (op == QR_RED_L2) acc = sqrt(acc);
            else if (op == QR_RED_LOGSUM) acc = log(acc);
            else if (op == QR_RED_LOGSUMEXP) acc = R ? log(acc) + mx : -INFINITY;
            if (y->dtype == QR_DT_F32) ((float *)y->data)[o] = (float)acc;
            else qr_tensor_set_f64(y, o, acc);
        }
        for (int d = nk - 1; d >= 0; d--) {
            base += ks[d];
            if (++kidx[d] < kd[d]) break;
            base -= ks[d] * kd[d];
            kidx[d] = 0;
        }
    }
    return QR_OK;
}

/* ==== ArgMax, ArgMin ==================================================================== */

static QrStatus qr__ew_arg_dims(const QrOpCtx *c, int *axis, int64_t *outer, int64_t *n, int64_t *inner) {
    const QrTensor *x = c->in[0];
    if (x->rank == 0) return qr_op_fail(c, QR_ERR_INVALID, "input must have rank >= 1");
    QR_TRY(qr_op_axis(c, qr_attr_int(c->node, "axis", 0), x->rank, axis));
    *outer = qr__ew_prod(x->dims, 0, *axis);
    *n = x->dims[*axis];
    *inner = qr__ew_prod(x->dims, *axis + 1, x->rank);
    if (*n == 0 && *outer > 0 && *inner > 0) return qr_op_fail(c, QR_ERR_INVALID, "reduced axis %d is empty", *axis);
    return QR_OK;
}

static QrStatus qr__ew_arg_shape(QrOpCtx *c) {
    QR_TRY(qr__ew_need_inputs(c, 1));
    const QrTensor *x = c->in[0];
    int axis;
    int64_t o, n, i, dims[QR_MAX_RANK];
    QR_TRY(qr__ew_arg_dims(c, &axis, &o, &n, &i));
    bool keep = qr_attr_int(c->node, "keepdims", 1) != 0;
    int k = 0;
    for (int d = 0; d < x->rank; d++) {
        if (d != axis) dims[k++] = x->dims[d];
        else if (keep) dims[k++] = 1;
    }
    return qr_op_set_out(c, 0, QR_DT_S64, k, dims);
}

/* First (or, with select_last_index, last) index of the max/min along axis. */
static QrStatus qr__ew_arg_run(QrOpCtx *c, bool is_max) {
    const QrTensor *x = c->in[0];
    int axis;
    int64_t outer, n, inner;
    QR_TRY(qr__ew_arg_dims(c, &axis, &outer, &n, &inner));
    bool last = qr_attr_int(c->node, "select_last_index", 0) != 0;
    int64_t *py = c->out[0]->data;
    QrEwClass k = qr__ew_class(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * n * inner + in, best = 0;
            if (k == QR_EW_F32 || k == QR_EW_F64) {
                double bv = qr_tensor_get_f64(x, base);
                for (int64_t j = 1; j < n; j++) {
                    double v = qr_tensor_get_f64(x, base + j * inner);
                    bool better = is_max ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv);
                    if (bv != bv) better = false;          /* NaN wins, like numpy */
                    else if (v != v) better = true;
                    if (better) { bv = v; best = j; }
                }
            } else if (k == QR_EW_U64) {
                const uint64_t *p = x->data;
                uint64_t bv = p[base];
                for (int64_t j = 1; j < n; j++) {
                    uint64_t v = p[base + j * inner];
                    if (is_max ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv)) { bv = v; best = j; }
                }
            } else {
                int64_t bv = qr_tensor_get_i64(x, base);
                for (int64_t j = 1; j < n; j++) {
                    int64_t v = qr_tensor_get_i64(x, base + j * inner);
                    if (is_max ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv)) { bv = v; best = j; }
                }
            }
            py[o * inner + in] = best;
        }
    return QR_OK;
}

static QrStatus qr__ew_argmax_exec(QrOpCtx *c) { return qr__ew_arg_run(c, true); }
static QrStatus qr__ew_argmin_exec(QrOpCtx *c) { return qr__ew_arg_run(c, false); }

/* ==== normalization ======================================================================= */

/* BatchNormalization (inference): y = (x - mean) / sqrt(var + eps) * scale + B over
 * channel dim 1 of an (N, C, ...) input. Before opset 9 `spatial = 0` gives every
 * (C, D1, ...) feature its own statistics. training_mode = 1 is not supported. */
static QrStatus qr__ew_batchnorm_params(const QrOpCtx *c, int64_t *C, int64_t *inner, bool *per_feature) {
    const QrTensor *x = c->in[0];
    if (x->rank < 2) return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank >= 2, has %d", x->rank);
    *C = x->dims[1];
    *inner = qr__ew_prod(x->dims, 2, x->rank);
    *per_feature = c->node->opset < 9 && qr_attr_int(c->node, "spatial", 1) == 0;
    int64_t want = *per_feature ? *C * *inner : *C;
    static const char *const names[] = { "", "scale", "B", "mean", "var" };
    for (int k = 1; k < 5; k++) {
        const QrTensor *t = qr_op_in(c, k);
        if (!t) return qr_op_fail(c, QR_ERR_INVALID, "input %d (%s) is required", k, names[k]);
        if (!qr_dtype_is_float(t->dtype))
            return qr_op_fail(c, QR_ERR_INVALID, "input %d (%s) has type %s", k, names[k], qr_dtype_name(t->dtype));
        if (t->numel != want)
            return qr_op_fail(c, QR_ERR_SHAPE, "input %d (%s) has %lld elements, expected %lld", k, names[k],
                              (long long)t->numel, (long long)want);
    }
    return QR_OK;
}

/* BatchNormalization's per-parameter multiplier and offset in double, for np parameters:
 * mul = scale / sqrt(var + eps), add = B - mean * mul (non-float32 and per-feature paths). */
static void qr_ew_batchnorm_coeffs(const QrTensor *sc, const QrTensor *bi, const QrTensor *mu, const QrTensor *va,
                                   double eps, int64_t np, double *mul, double *add) {
    for (int64_t p = 0; p < np; p++) {
        mul[p] = qr_tensor_get_f64(sc, p) / sqrt(qr_tensor_get_f64(va, p) + eps);
        add[p] = qr_tensor_get_f64(bi, p) - qr_tensor_get_f64(mu, p) * mul[p];
    }
}

/* The float32 path's per-channel multiplier m and offset a (y = x * m + a, two roundings),
 * shared with the fused AFFINE step (run/run.c) so both give the same bits. All-float32
 * parameters: ONNX Runtime's arithmetic, m = (1 / sqrt(var + eps)) * scale and
 * a = B - mean * m with every step rounded to float (separate statements, no fused
 * multiply-add: x86-64's baseline has none, the aarch64 build passes -ffp-contract=off),
 * so the float baseline matches it bit for bit. Other types: the double coefficients
 * above rounded once. */
static void qr_ew_batchnorm_coeffs_f32(const QrTensor *sc, const QrTensor *bi, const QrTensor *mu, const QrTensor *va,
                                       double eps, int64_t C, float *m, float *a) {
    if (sc->dtype == QR_DT_F32 && bi->dtype == QR_DT_F32 && mu->dtype == QR_DT_F32 && va->dtype == QR_DT_F32) {
        const float *fs = sc->data, *fb = bi->data, *fm = mu->data, *fv = va->data;
        float feps = (float)eps;
        for (int64_t ch = 0; ch < C; ch++) {
            float v = fv[ch] + feps;
            float inv = 1.0f / sqrtf(v);
            m[ch] = inv * fs[ch];
            float mm = fm[ch] * m[ch];
            a[ch] = fb[ch] - mm;
        }
        return;
    }
    for (int64_t ch = 0; ch < C; ch++) {
        double md = qr_tensor_get_f64(sc, ch) / sqrt(qr_tensor_get_f64(va, ch) + eps);
        m[ch] = (float)md;
        a[ch] = (float)(qr_tensor_get_f64(bi, ch) - qr_tensor_get_f64(mu, ch) * md);
    }
}

static QrStatus qr__ew_batchnorm_shape(QrOpCtx *c) {
    QR_TRY(qr__ew_need_inputs(c, 1));
    QR_TRY(qr_op_need_float(c, 0));
    if (qr_attr_int(c->node, "training_mode", 0) != 0)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "training_mode=1 is not supported (inference only)");
    for (int k = 1; k < c->n_out; k++)
        if (c->out[k])
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output %d (training statistics) is not supported", k);
    int64_t C, inner;
    bool pf;
    QR_TRY(qr__ew_batchnorm_params(c, &C, &inner, &pf));
    return qr_op_set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
}

static QrStatus qr__ew_batchnorm_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0], *sc = c->in[1], *bi = c->in[2], *mu = c->in[3], *va = c->in[4];
    QrTensor *y = c->out[0];
    int64_t C, inner;
    bool pf;
    QR_TRY(qr__ew_batchnorm_params(c, &C, &inner, &pf));
    double eps = qr_attr_float(c->node, "epsilon", 1e-5f);
    int64_t np = pf ? C * inner : C, N = x->dims[0];
    bool f32 = x->dtype == QR_DT_F32;
    const float *px = x->data;
    float *py = y->data;
    if (!pf && f32) {   /* y = x * m + a per channel, two roundings (the fused path's AFFINE step) */
        float *fm = qr_arena_array(c->scratch, (size_t)(C ? C : 1), 2 * sizeof(float));
        if (!fm) return qr_op_fail(c, QR_ERR_NOMEM, "no scratch memory");
        qr_ew_batchnorm_coeffs_f32(sc, bi, mu, va, eps, C, fm, fm + C);
        const QrF32Step aff = { .op = QR_F32_STEP_AFFINE, .pc = 1, .p = fm, .q = fm + C };
        qr_ew_steps_run(&aff, 1, px, py, N, C, inner);
        return QR_OK;
    }
    double *mul = qr_arena_array(c->scratch, (size_t)(np ? np : 1), 2 * sizeof(double));
    if (!mul) return qr_op_fail(c, QR_ERR_NOMEM, "no scratch memory");
    double *add = mul + np;
    qr_ew_batchnorm_coeffs(sc, bi, mu, va, eps, np, mul, add);
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            int64_t base = (n * C + ch) * inner;
            for (int64_t i = 0; i < inner; i++) {
                int64_t p = pf ? ch * inner + i : ch;
                qr_tensor_set_f64(y, base + i, qr_tensor_get_f64(x, base + i) * mul[p] + add[p]);
            }
        }
    return QR_OK;
}

/* Mean and 1/sqrt(var + eps) of n elements starting at x[off] (population variance). */
static void qr__ew_moments(const QrTensor *x, int64_t off, int64_t n, double eps, double *mean, double *inv) {
    double s = 0, ss = 0;
    if (x->dtype == QR_DT_F32) {
        const float *p = (const float *)x->data + off;
        for (int64_t i = 0; i < n; i++) s += p[i];
        double m = n ? s / (double)n : 0;
        for (int64_t i = 0; i < n; i++) { double d = p[i] - m; ss += d * d; }
        *mean = m;
    } else {
        for (int64_t i = 0; i < n; i++) s += qr_tensor_get_f64(x, off + i);
        double m = n ? s / (double)n : 0;
        for (int64_t i = 0; i < n; i++) { double d = qr_tensor_get_f64(x, off + i) - m; ss += d * d; }
        *mean = m;
    }
    *inv = 1.0 / sqrt((n ? ss / (double)n : 0) + eps);
}

/* LayerNormalization(X, Scale[, B]) over dims[axis:]; optional outputs Mean and
 * InvStdDev have shape dims[:axis] + 1s and type stash_type (default float). */
static QrStatus qr__ew_layernorm_shape(QrOpCtx *c) {
    QR_TRY(qr__ew_need_inputs(c, 1));
    const QrTensor *x = c->in[0];
    QR_TRY(qr_op_need_float(c, 0));
    if (!qr_op_in(c, 1)) return qr_op_fail(c, QR_ERR_INVALID, "input 1 (Scale) is required");
    if (x->rank == 0) return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank >= 1");
    int a = 0;
    QR_TRY(qr_op_axis(c, qr_attr_int(c->node, "axis", -1), x->rank, &a));
    QR_TRY(qr__ew_check_unidir(c, 1, c->in[1], x));
    QR_TRY(qr__ew_check_unidir(c, 2, qr_op_in(c, 2), x));
    int64_t stash = qr_attr_int(c->node, "stash_type", QR_DT_F32);
    if (stash <= 0 || stash > 64 || !qr_dtype_is_float((QrDType)stash))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "stash_type %lld is not a supported float type", (long long)stash);
    QrDType u = (QrDType)stash;
    int64_t sdims[QR_MAX_RANK];
    for (int d = 0; d < x->rank; d++) sdims[d] = d < a ? x->dims[d] : 1;
    QR_TRY(qr_op_set_out(c, 0, x->dtype, x->rank, x->dims));
    QR_TRY(qr_op_set_out(c, 1, u, x->rank, sdims));
    return qr_op_set_out(c, 2, u, x->rank, sdims);
}

/* A float32 LayerNormalization as ONNX Runtime 1.30's LayerNormImpl computes it. When neither
 * Scale nor B varies over the dims before `axis` and both hold the whole normalized block
 * (the usual [hidden] or dims[axis:] shape), every row runs MLAS's row kernel or ORT's scalar
 * row (qr_kern.f32_layernorm, kern.h). Any other broadcast takes ORT's generic path
 * (ComputeJobGenericShared), in double: mean and mean of squares summed in order from 0,
 * den = sqrt(sq / n - mean * mean + eps), y = (x - mean) / den * scale + bias (0 without B),
 * each rounded to float once; Mean and InvStdDev are mean and 1 / den rounded. */
static QrStatus qr__ew_layernorm_f32(QrOpCtx *c, int a, int64_t rows, int64_t N, float eps) {
    const QrTensor *x = c->in[0], *scale = c->in[1], *bias = qr_op_in(c, 2);
    float *mo = c->n_out > 1 && c->out[1] ? c->out[1]->data : NULL;
    float *iv = c->n_out > 2 && c->out[2] ? c->out[2]->data : NULL;
    float *py = c->out[0] ? c->out[0]->data : qr_arena_array(c->scratch, (size_t)(N ? N : 1), sizeof(float));
    if (!py) return qr_op_fail(c, QR_ERR_NOMEM, "no scratch memory for a row of %lld values", (long long)N);
    const int64_t ystep = c->out[0] ? N : 0;   /* no Y: the rows go to one scratch row */
    int64_t stS[QR_MAX_RANK], stB[QR_MAX_RANK];
    qr_broadcast_strides(scale, x->rank, x->dims, stS);
    qr_broadcast_strides(bias ? bias : scale, x->rank, x->dims, stB);
    bool row_kernel = scale->numel == N && (!bias || bias->numel == N);
    for (int d = 0; d < a; d++) row_kernel = row_kernel && stS[d] == 0 && stB[d] == 0;
    const float *px = x->data, *ps = scale->data, *pb = bias ? bias->data : NULL;
    if (row_kernel && ystep) {   /* threaded by rows */
        QrEwRowJob j = { .kind = QR__EW_ROW_LAYERNORM, .rows = rows, .n = N, .x = px, .b = pb, .scale = ps, .y = py,
                         .mean = mo, .inv = iv, .eps = eps };
        qr__ew_rows_run(&j);
        return QR_OK;
    }
    if (row_kernel) {
        for (int64_t r = 0; r < rows; r++)
            qr_kern.f32_layernorm(px + r * N, ps, pb, py + r * ystep, N, eps, mo ? mo + r : NULL, iv ? iv + r : NULL);
        return QR_OK;
    }
    double *st = qr_arena_array(c->scratch, (size_t)(rows ? rows : 1), 2 * sizeof(double));
    if (!st) return qr_op_fail(c, QR_ERR_NOMEM, "no scratch memory");
    for (int64_t r = 0; r < rows; r++) {
        double m = 0.0, sq = 0.0;
        for (int64_t i = 0; i < N; i++) {
            const double v = px[r * N + i];
            m = m + v;
            sq = sq + v * v;
        }
        m = m / (double)N;
        st[2 * r] = m;
        st[2 * r + 1] = sqrt(sq / (double)N - m * m + (double)eps);
        if (mo) mo[r] = (float)m;
        if (iv) iv[r] = (float)(1.0 / st[2 * r + 1]);
    }
    if (!ystep) return QR_OK;
    QR_BCAST2_FOR(x->rank, x->dims, stS, stB, {
        int64_t r = N ? io / N : 0;
        const double m = st[2 * r], den = st[2 * r + 1];
        for (int64_t j = 0; j < qr_inner; j++) {
            const double b = pb ? (double)pb[ib + j * sb] : 0.0;
            py[io + j] = (float)((((double)px[io + j] - m) / den) * (double)ps[ia + j * sa] + b);
        }
    });
    return QR_OK;
}

static QrStatus qr__ew_layernorm_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0], *scale = c->in[1], *bias = qr_op_in(c, 2);
    QrTensor *y = c->out[0];
    int a = 0;
    QR_TRY(qr_op_axis(c, qr_attr_int(c->node, "axis", -1), x->rank, &a));
    double eps = qr_attr_float(c->node, "epsilon", 1e-5f);
    int64_t rows = qr__ew_prod(x->dims, 0, a), N = qr__ew_prod(x->dims, a, x->rank);
    bool f32 = x->dtype == QR_DT_F32 && scale->dtype == QR_DT_F32 && (!bias || bias->dtype == QR_DT_F32) &&
               (c->n_out < 2 || !c->out[1] || c->out[1]->dtype == QR_DT_F32) &&
               (c->n_out < 3 || !c->out[2] || c->out[2]->dtype == QR_DT_F32);
    if (f32) return qr__ew_layernorm_f32(c, a, rows, N, (float)eps);
    double *st = qr_arena_array(c->scratch, (size_t)(rows ? rows : 1), 2 * sizeof(double));
    if (!st) return qr_op_fail(c, QR_ERR_NOMEM, "no scratch memory");
    for (int64_t r = 0; r < rows; r++) {
        qr__ew_moments(x, r * N, N, eps, &st[2 * r], &st[2 * r + 1]);
        if (c->n_out > 1 && c->out[1]) qr_tensor_set_f64(c->out[1], r, st[2 * r]);
        if (c->n_out > 2 && c->out[2]) qr_tensor_set_f64(c->out[2], r, st[2 * r + 1]);
    }
    if (!y) return QR_OK;
    int64_t stS[QR_MAX_RANK], stB[QR_MAX_RANK];
    qr_broadcast_strides(scale, x->rank, x->dims, stS);
    qr_broadcast_strides(bias ? bias : scale, x->rank, x->dims, stB);
    QR_BCAST2_FOR(x->rank, x->dims, stS, stB, {
        int64_t r = N ? io / N : 0;
        double m = st[2 * r], inv = st[2 * r + 1];
        for (int64_t j = 0; j < qr_inner; j++) {
            double v = (qr_tensor_get_f64(x, io + j) - m) * inv * qr_tensor_get_f64(scale, ia + j * sa);
            if (bias) v += qr_tensor_get_f64(bias, ib + j * sb);
            qr_tensor_set_f64(y, io + j, v);
        }
    });
    return QR_OK;
}

/* InstanceNormalization(X, scale, B): per (n, c) statistics over the spatial dims. */
static QrStatus qr__ew_instancenorm_shape(QrOpCtx *c) {
    QR_TRY(qr__ew_need_inputs(c, 1));
    const QrTensor *x = c->in[0];
    QR_TRY(qr_op_need_float(c, 0));
    if (x->rank < 2) return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank >= 2, has %d", x->rank);
    for (int k = 1; k < 3; k++) {
        const QrTensor *t = qr_op_in(c, k);
        if (!t) return qr_op_fail(c, QR_ERR_INVALID, "input %d is required", k);
        if (!qr_dtype_is_float(t->dtype))
            return qr_op_fail(c, QR_ERR_INVALID, "input %d has type %s", k, qr_dtype_name(t->dtype));
        if (t->numel != x->dims[1])
            return qr_op_fail(c, QR_ERR_SHAPE, "input %d has %lld elements for %lld channels", k, (long long)t->numel,
                              (long long)x->dims[1]);
    }
    return qr_op_set_out(c, 0, x->dtype, x->rank, x->dims);
}

static QrStatus qr__ew_instancenorm_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0], *sc = c->in[1], *bi = c->in[2];
    QrTensor *y = c->out[0];
    double eps = qr_attr_float(c->node, "epsilon", 1e-5f);
    int64_t N = x->dims[0], C = x->dims[1], inner = qr__ew_prod(x->dims, 2, x->rank);
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            int64_t base = (n * C + ch) * inner;
            double m, inv;
            qr__ew_moments(x, base, inner, eps, &m, &inv);
            double mul = qr_tensor_get_f64(sc, ch) * inv, add = qr_tensor_get_f64(bi, ch) - m * mul;
            if (x->dtype == QR_DT_F32) {
                const float *px = (const float *)x->data + base;
                float *py = (float *)y->data + base, fm = (float)mul, fa = (float)add;
                for (int64_t i = 0; i < inner; i++) py[i] = px[i] * fm + fa;
            } else {
                for (int64_t i = 0; i < inner; i++)
                    qr_tensor_set_f64(y, base + i, qr_tensor_get_f64(x, base + i) * mul + add);
            }
        }
    return QR_OK;
}

/* ==== table ======================================================================= */

static const QrOpDef qr_ops_elementwise[] = {
    /* broadcasting binary */
    { "", "Add", 2, 2, 1, 1, qr__ew_arith_shape, qr__ew_add_exec, 0, 0 },
    { "", "Sub", 2, 2, 1, 1, qr__ew_arith_shape, qr__ew_sub_exec, 0, 0 },
    { "", "Mul", 2, 2, 1, 1, qr__ew_arith_shape, qr__ew_mul_exec, 0, 0 },
    { "", "Div", 2, 2, 1, 1, qr__ew_arith_shape, qr__ew_div_exec, 0, 0 },
    { "", "Pow", 2, 2, 1, 1, qr__ew_pow_shape, qr__ew_pow_exec, 0, 0 },
    { "", "PRelu", 2, 2, 1, 1, qr__ew_prelu_shape, qr__ew_prelu_exec, 0, 0 },
    { "", "Equal", 2, 2, 1, 1, qr__ew_cmp_shape, qr__ew_equal_exec, 0, 0 },
    { "", "Less", 2, 2, 1, 1, qr__ew_cmp_shape, qr__ew_less_exec, 0, 0 },
    { "", "Greater", 2, 2, 1, 1, qr__ew_cmp_shape, qr__ew_greater_exec, 0, 0 },
    { "", "LessOrEqual", 2, 2, 1, 1, qr__ew_cmp_shape, qr__ew_less_equal_exec, 0, 0 },
    { "", "GreaterOrEqual", 2, 2, 1, 1, qr__ew_cmp_shape, qr__ew_greater_equal_exec, 0, 0 },
    { "", "And", 2, 2, 1, 1, qr__ew_logic_shape, qr__ew_and_exec, 0, 0 },
    { "", "Or", 2, 2, 1, 1, qr__ew_logic_shape, qr__ew_or_exec, 0, 0 },
    { "", "Xor", 2, 2, 1, 1, qr__ew_logic_shape, qr__ew_xor_exec, 0, 0 },
    { "", "Not", 1, 1, 1, 1, qr__ew_not_shape, qr__ew_not_exec, 0, 0 },
    /* variadic */
    { "", "Min", 1, -1, 1, 1, qr__ew_variadic_shape, qr__ew_min_exec, 0, 0 },
    { "", "Max", 1, -1, 1, 1, qr__ew_variadic_shape, qr__ew_max_exec, 0, 0 },
    { "", "Sum", 1, -1, 1, 1, qr__ew_variadic_shape, qr__ew_sum_exec, 0, 0 },
    { "", "Mean", 1, -1, 1, 1, qr__ew_variadic_shape, qr__ew_mean_exec, 0, 0 },
    { "", "Where", 3, 3, 1, 1, qr__ew_where_shape, qr__ew_where_exec, 0, 0 },
    /* unary (see qr__ew_unary_defs) */
    { "", "Relu", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "LeakyRelu", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Sigmoid", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "HardSigmoid", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "HardSwish", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Tanh", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Elu", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Selu", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Gelu", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Erf", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "Exp", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Log", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Sqrt", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Neg", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Abs", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Reciprocal", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Softplus", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Softsign", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Mish", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Swish", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Sin", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Cos", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Floor", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Ceil", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Round", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Sign", 1, 1, 1, 1, qr__ew_unary_shape, qr__ew_unary_exec, 0, 0 },
    { "", "Clip", 1, 3, 1, 1, qr__ew_clip_shape, qr__ew_clip_exec, 0, 0 },
    /* type conversion */
    { "", "Cast", 1, 1, 1, 1, qr__ew_cast_shape, qr__ew_cast_exec, 0, 0 },
    { "", "CastLike", 2, 2, 1, 1, qr__ew_castlike_shape, qr__ew_cast_exec, 0, 0 },
    /* softmax family */
    { "", "Softmax", 1, 1, 1, 1, qr__ew_softmax_shape, qr__ew_softmax_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "LogSoftmax", 1, 1, 1, 1, qr__ew_softmax_shape, qr__ew_logsoftmax_exec, 0, 0 },
    { "", "Hardmax", 1, 1, 1, 1, qr__ew_softmax_shape, qr__ew_hardmax_exec, 0, 0 },
    /* reductions */
    { "", "ReduceSum", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ReduceMean", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ReduceMax", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ReduceMin", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ReduceProd", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ReduceSumSquare", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ReduceL1", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ReduceL2", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ReduceLogSum", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ReduceLogSumExp", 1, 2, 1, 1, qr__ew_reduce_shape, qr__ew_reduce_exec, 0, 0 },
    { "", "ArgMax", 1, 1, 1, 1, qr__ew_arg_shape, qr__ew_argmax_exec, 0, 0 },
    { "", "ArgMin", 1, 1, 1, 1, qr__ew_arg_shape, qr__ew_argmin_exec, 0, 0 },
    /* normalization */
    { "", "BatchNormalization", 5, 5, 1, 5, qr__ew_batchnorm_shape, qr__ew_batchnorm_exec, 0, 0 },
    { "", "LayerNormalization", 2, 3, 1, 3, qr__ew_layernorm_shape, qr__ew_layernorm_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "InstanceNormalization", 3, 3, 1, 1, qr__ew_instancenorm_shape, qr__ew_instancenorm_exec, 0, 0 },
};
