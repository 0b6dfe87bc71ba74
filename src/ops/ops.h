/* ops — ONNX operator implementations and the one op table.
 * Each operator is a QrOpDef: a shape function (dtype + shape of every output from
 * the inputs' metadata and, where needed, constant input data) and an exec function. */
#ifndef QR_OPS_H
#define QR_OPS_H

/* What an operator sees. During shape inference in[i]->data may be NULL (value not
 * known yet); during execution every present input has data and every present
 * output has been allocated with the shape that shape() set. */
struct QrOpCtx;
/* Computes prepared data into dst (see qr_op_prep). */
typedef void (*QrOpPrepFill)(void *ctx, void *dst);
typedef const void *(*QrOpPrepFn)(const struct QrOpCtx *c, unsigned deps, uint64_t key, size_t bytes, QrOpPrepFill fill,
                                  void *fill_ctx);

typedef struct QrOpCtx {
    const QrGraph *g;
    const QrNode *node;
    int n_in, n_out;
    const QrTensor *const *in;   /* in[i] == NULL: optional input omitted */
    QrTensor *const *out;        /* out[i] == NULL: optional output omitted */
    QrArena *scratch;            /* temporary memory, reset after the node */
    /* The run's value aliases (QrRunOpts.alias: a disabled quantizer's DQ output reads its
     * Q input), for ops whose arithmetic depends on where an input comes from; NULL: none. */
    const int *alias;
    /* The executor's keeper of data prepared from constant inputs (NULL: none this run); ops call
     * it through qr_op_prep. prep_user is the executor's. */
    QrOpPrepFn prep;
    void *prep_user;
} QrOpCtx;

/* Data of `bytes` bytes (64-byte aligned) that fill(ctx, dst) computes from the node's inputs in
 * deps (bit i: input i) alone, kept by the executor for this node and key between runs: fill runs
 * the first time, later calls return what it wrote (a convolution's packed weights). NULL when
 * nothing is kept this run: no keeper, an input in deps not a constant of this run (computed from
 * the run's inputs, overridden, fed, edited, or a dequantized weight the executor never keeps),
 * other bytes than the kept data's, or out of memory. The op then computes without it. */
static inline const void *qr_op_prep(const QrOpCtx *c, unsigned deps, uint64_t key, size_t bytes, QrOpPrepFill fill,
                                     void *fill_ctx) {
    return c->prep && bytes ? c->prep(c, deps, key, bytes, fill, fill_ctx) : NULL;
}

typedef QrStatus (*QrOpFn)(QrOpCtx *c);

enum {
    QR_OPF_SHAPE_ONLY = 1,   /* exec reads only input shapes (Shape, Size): fold whenever shapes are known */
    QR_OPF_NO_FOLD = 2,      /* never constant-fold (random ops) */
    QR_OPF_WRITES_ALL = 4,   /* exec writes every element of every output: the executor need not zero them */
};

typedef struct QrOpDef {
    const char *domain;      /* "" (ai.onnx) or "com.microsoft" */
    const char *op_type;
    int min_in, max_in;      /* max_in = -1: variadic */
    int min_out, max_out;    /* max_out = -1: variadic */
    QrOpFn shape;
    QrOpFn exec;
    unsigned flags;
    /* Inputs below min_in that a node may still omit (bit i: input i), e.g. the zero points
     * com.microsoft's QLinear* ops list among their first inputs. Every other input below
     * min_in must be named; the loader refuses the node otherwise, so ops read them unchecked. */
    unsigned opt_in;
} QrOpDef;

static const QrOpDef *qr_op_find(const char *domain, const char *op_type);
/* Every operator, one at a time: qr_op_at(i) for 0 <= i < qr_op_count(). */
static int qr_op_count(void);
static const QrOpDef *qr_op_at(int i);

/* ---- helpers for operator implementations ---------------------------------- */

#define QR_OP_FAIL(c, st, ...) qr_op_fail((c), (st), __VA_ARGS__)
/* Sets an error message prefixed by the node's op type and name. */
static QrStatus qr_op_fail(const QrOpCtx *c, QrStatus st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Sets out[i]'s dtype and shape (no allocation). Omitted outputs are ignored. */
static QrStatus qr_op_set_out(QrOpCtx *c, int i, QrDType dt, int rank, const int64_t *dims);
/* Input i or NULL when absent (index past n_in or omitted). */
static inline const QrTensor *qr_op_in(const QrOpCtx *c, int i) { return i < c->n_in ? c->in[i] : NULL; }
/* Requires input i to have constant data (for shape-determining inputs). */
static QrStatus qr_op_need_data(const QrOpCtx *c, int i);
/* Reads an integer tensor (int32/int64) input's values into out (at most max). */
static QrStatus qr_op_ints(const QrOpCtx *c, int i, int64_t *out, int max, int *count);
/* Normalizes a possibly negative axis against rank; error when out of range. */
static QrStatus qr_op_axis(const QrOpCtx *c, int64_t axis, int rank, int *out);
/* Numpy broadcasting of n shapes into (rank, dims). */
static QrStatus qr_op_broadcast(const QrOpCtx *c, int n, const QrTensor *const *ts, int *rank, int64_t *dims);
/* Element strides of t when broadcast to an output of (rank, dims): 0 on broadcast axes. */
static void qr_broadcast_strides(const QrTensor *t, int rank, const int64_t *dims, int64_t *strides);
/* Requires input i to be one of the float dtypes (f32/f16/f64/bf16). */
static QrStatus qr_op_need_float(const QrOpCtx *c, int i);

/* The most multiply-adds (or window taps) one node may cost. A few hundred bytes of model can
 * declare a convolution whose output is billions of padding positions with millions of taps
 * each: days of arithmetic. Conv, ConvTranspose, QLinearConv, ConvInteger and the pools refuse
 * such a node in their shape function, i.e. before anything runs. 2^40 is minutes on one core,
 * ~10x the largest convolution of vision models at 4K resolution; QR_MAX_NODE_WORK=N (in the
 * environment) sets another limit. */
#define QR_OP_MAX_WORK 1099511627776.0
/* Fails with QR_ERR_NOMEM naming the node when `work` (multiply-adds or taps, described by
 * `what`, e.g. "output [1, 8, 65550, 7] x 27 taps") exceeds the limit. */
static QrStatus qr_op_check_work(const QrOpCtx *c, double work, const char *what);

/* ---- used by other modules (issue 19: private names used across modules became public) ---- */
static QrStatus qr_op_nn_gemm_f32_as(QrOpCtx *c, bool b_init);
static QrStatus qr_op_nn_via_f32(QrOpCtx *c, QrOpFn f32_exec, unsigned in_mask, unsigned out_mask);
static inline int64_t qr_op_q_acc_add(QrQuantAcc kind, int64_t acc, int32_t bias);
static QrStatus qr_op_q_alloc(QrOpCtx *c, size_t count, size_t elem, void **out);
static int qr_op_q_esize(QrDType dt);
static QrStatus qr_op_q_ints_attr(const QrOpCtx *c, const char *name, int n, int64_t lo, int64_t dflt, int64_t *out);
static bool qr_op_q_is_int_op(const QrOpCtx *c);
static bool qr_op_q_is_signed(QrDType dt);
static inline void qr_op_q_kern_ready(void);
static QrStatus qr_op_q_load_scales(QrOpCtx *c, int i, float **out);
static QrStatus qr_op_q_load_zps(QrOpCtx *c, int i, int64_t n, int32_t **out);
static bool qr_op_q_narrow(QrDType adt, QrDType bdt, QrQuantAcc kind);
static void qr_op_q_nchw_dims(const QrTensor *x, bool nhwc, int64_t *d);
static QrStatus qr_op_q_need_scalar(const QrOpCtx *c, int i, const char *what);
static QrStatus qr_op_q_need_scale(const QrOpCtx *c, int i, const char *what);
static QrStatus qr_op_q_need_zp_type(const QrOpCtx *c, int i, QrDType dt, const char *what);
static bool qr_op_q_ok_act(const QrOpCtx *c, QrDType dt);
static bool qr_op_q_ok_wt(const QrOpCtx *c, QrDType dt);
static QrStatus qr_op_q_out_dim(const QrOpCtx *c, const char *auto_pad, int64_t in, int64_t k, int64_t s, int64_t d, int64_t *pb, int64_t pe, bool ceil_mode, int64_t *out);
static QrStatus qr_op_q_out_range(const QrOpCtx *c, QrDType dt, QrQuantRange *r);
static float qr_op_q_scalar_f(const QrOpCtx *c, int i);
static int32_t qr_op_q_scalar_zp(const QrOpCtx *c, int i);
static const char *qr_op_q_types_msg(const QrOpCtx *c);
static size_t qr_op_q_wadd(size_t *total, int64_t count, size_t elem);
static void qr_op_q_widen(const QrTensor *t, int64_t off, int64_t n, uint16_t *dst);
static QrStatus qr_op_q_work(const QrOpCtx *c, size_t bytes, unsigned char **out);
/* ops/shape.c: a Transpose (c bound, shape function run) that moves no byte: the permutation keeps
 * the order of the input's axes longer than 1. */
static bool qr_op_transpose_is_copy(const QrOpCtx *c);

#endif
