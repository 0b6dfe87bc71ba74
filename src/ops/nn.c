/* ops/nn — convolution, matrix products, pooling and normalization layers.
 * float32 is computed directly on the kernel table (2-D Conv as an implicit-im2col GEMM
 * with the bias in its epilogue, 1x1 stride-1 Conv as a plain GEMM, depthwise and 2-D
 * MaxPool per plane over the thread pool); float16/bfloat16/float64 (and integer MaxPool)
 * are staged through float32 by qr_op_nn_via_f32. Einsum is computed in double for every
 * numeric type. */

#define QR__NN_MAXSP (QR_MAX_RANK - 2)   /* spatial dims of Conv/Pool */
#define QR__NN_MAXIO 8                   /* inputs/outputs qr_op_nn_via_f32 can stage */
/* Largest im2col/col2im buffer per tile; bigger problems are split into column tiles
 * (tests shrink it with -DQR__NN_COL_BYTES=... to exercise the tiling). */
#ifndef QR__NN_COL_BYTES
#define QR__NN_COL_BYTES ((int64_t)32 << 20)
#endif

/* ==== float32 staging ============================================================ */

/* Runs f32_exec with float32 copies of the inputs/outputs whose bit is set in
 * in_mask/out_mask, then converts those outputs back to their real dtype. Tensors
 * that are already float32 are passed through untouched. */
static QrStatus qr_op_nn_via_f32(QrOpCtx *c, QrOpFn f32_exec, unsigned in_mask, unsigned out_mask) {
    bool need = false;
    for (int i = 0; i < c->n_in && i < 32; i++)
        if ((in_mask >> i & 1u) && c->in[i] && c->in[i]->dtype != QR_DT_F32) need = true;
    for (int i = 0; i < c->n_out && i < 32; i++)
        if ((out_mask >> i & 1u) && c->out[i] && c->out[i]->dtype != QR_DT_F32) need = true;
    if (!need) return f32_exec(c);
    if (c->n_in > QR__NN_MAXIO || c->n_out > QR__NN_MAXIO)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "too many inputs/outputs to convert to float32");
    QrTensor tin[QR__NN_MAXIO], tout[QR__NN_MAXIO];
    const QrTensor *pin[QR__NN_MAXIO];
    QrTensor *pout[QR__NN_MAXIO];
    memset(tin, 0, sizeof tin);
    memset(tout, 0, sizeof tout);
    QrStatus st = QR_OK;
    for (int i = 0; i < c->n_in; i++) {
        pin[i] = c->in[i];
        if (st == QR_OK && c->in[i] && (in_mask >> i & 1u) && c->in[i]->dtype != QR_DT_F32) {
            st = qr_tensor_to_f32(c->in[i], &tin[i]);
            pin[i] = &tin[i];
        }
    }
    for (int i = 0; i < c->n_out; i++) {
        pout[i] = c->out[i];
        if (st == QR_OK && c->out[i] && (out_mask >> i & 1u) && c->out[i]->dtype != QR_DT_F32) {
            st = qr_tensor_set_shape(&tout[i], QR_DT_F32, c->out[i]->rank, c->out[i]->dims);
            if (st == QR_OK) st = qr_tensor_alloc_data(&tout[i]);
            pout[i] = &tout[i];
        }
    }
    if (st == QR_OK) {
        QrOpCtx c2 = *c;
        c2.in = pin;
        c2.out = pout;
        st = f32_exec(&c2);
    }
    for (int i = 0; st == QR_OK && i < c->n_out; i++)
        if (pout[i] == &tout[i]) st = qr_tensor_convert(&tout[i], c->out[i]);
    for (int i = 0; i < QR__NN_MAXIO; i++) {
        qr_tensor_free_data(&tin[i]);
        qr_tensor_free_data(&tout[i]);
    }
    return st;
}

/* Requires inputs [first, last] (those present) to have input 0's dtype. */
static QrStatus qr__nn_same_dtype(const QrOpCtx *c, int first, int last) {
    for (int i = first; i <= last; i++) {
        const QrTensor *t = qr_op_in(c, i);
        if (t && t->dtype != c->in[0]->dtype)
            return qr_op_fail(c, QR_ERR_INVALID, "input %d has type %s but input 0 has %s", i,
                              qr_dtype_name(t->dtype), qr_dtype_name(c->in[0]->dtype));
    }
    return QR_OK;
}

static void *qr__nn_malloc(const QrOpCtx *c, int64_t count, size_t elem, QrStatus *st) {
    int64_t bytes;
    if (count < 0 || qr_mul_overflow_i64(count, (int64_t)elem, &bytes) || bytes > QR_MAX_TENSOR_BYTES) {
        *st = qr_op_fail(c, QR_ERR_NOMEM, "temporary buffer of %lld elements is too large", (long long)count);
        return NULL;
    }
    void *p = malloc(bytes ? (size_t)bytes : 1);
    if (!p) *st = qr_op_fail(c, QR_ERR_NOMEM, "cannot allocate %lld bytes", (long long)bytes);
    return p;
}

/* ==== sliding windows (Conv, ConvTranspose, pools) ================================ */

/* Geometry of a windowed op over nsp spatial dims: input size, kernel, strides,
 * dilations, begin/end pads and output size. */
typedef struct QrNnWindow {
    int nsp;
    int64_t in[QR__NN_MAXSP], k[QR__NN_MAXSP], s[QR__NN_MAXSP], d[QR__NN_MAXSP];
    int64_t pb[QR__NN_MAXSP], pe[QR__NN_MAXSP], out[QR__NN_MAXSP];
} QrNnWindow;

typedef enum { QR__NN_PAD_NOTSET, QR__NN_PAD_VALID, QR__NN_PAD_SAME_UPPER, QR__NN_PAD_SAME_LOWER } QrNnAutoPad;

static QrStatus qr__nn_auto_pad(const QrOpCtx *c, QrNnAutoPad *out) {
    const char *s = qr_attr_str(c->node, "auto_pad", "NOTSET");
    if (!*s || strcmp(s, "NOTSET") == 0) *out = QR__NN_PAD_NOTSET;
    else if (strcmp(s, "VALID") == 0) *out = QR__NN_PAD_VALID;
    else if (strcmp(s, "SAME_UPPER") == 0) *out = QR__NN_PAD_SAME_UPPER;
    else if (strcmp(s, "SAME_LOWER") == 0) *out = QR__NN_PAD_SAME_LOWER;
    else return qr_op_fail(c, QR_ERR_INVALID, "auto_pad '%s' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER", s);
    return QR_OK;
}

/* Reads INTS attribute `name` into out[0..n): absent or empty gives dflt; otherwise it
 * must have exactly n values within [lo, 2^31). *given tells whether it was there. */
static QrStatus qr__nn_attr_ints(const QrOpCtx *c, const char *name, int n, int64_t dflt, int64_t lo, int64_t *out,
                                 bool *given) {
    const int64_t *v;
    int cnt = qr_attr_ints(c->node, name, &v);
    if (given) *given = cnt > 0;
    if (cnt <= 0) {
        for (int i = 0; i < n; i++) out[i] = dflt;
        return QR_OK;
    }
    if (cnt != n) return qr_op_fail(c, QR_ERR_INVALID, "%s has %d values, expected %d", name, cnt, n);
    for (int i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > INT32_MAX)
            return qr_op_fail(c, QR_ERR_INVALID, "%s[%d] = %lld is out of range", name, i, (long long)v[i]);
        out[i] = v[i];
    }
    return QR_OK;
}

static inline int64_t qr__nn_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Fills w for Conv/pool over x (N, C, spatial...): kernel from kdims (Conv: W's
 * spatial dims) or the kernel_shape attribute (pools), strides, dilations, pads or
 * auto_pad, and the output size (ceil_mode drops a last window starting in the end pad). */
static QrStatus qr__nn_window(const QrOpCtx *c, const QrTensor *x, const int64_t *kdims, bool ceil_mode, bool dilations,
                              QrNnWindow *w) {
    memset(w, 0, sizeof *w);
    if (x->rank < 3 || x->rank > QR__NN_MAXSP + 2)
        return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank 3..%d (N, C, spatial...), got %d", QR__NN_MAXSP + 2,
                          x->rank);
    int n = w->nsp = x->rank - 2;
    for (int i = 0; i < n; i++) w->in[i] = x->dims[i + 2];
    bool have_k;
    QR_TRY(qr__nn_attr_ints(c, "kernel_shape", n, 0, 1, w->k, &have_k));
    if (kdims) {
        for (int i = 0; i < n; i++) {
            if (kdims[i] < 1) return qr_op_fail(c, QR_ERR_SHAPE, "weight spatial dim %d is %lld", i, (long long)kdims[i]);
            if (have_k && w->k[i] != kdims[i])
                return qr_op_fail(c, QR_ERR_SHAPE, "kernel_shape[%d] = %lld but the weights have %lld", i,
                                  (long long)w->k[i], (long long)kdims[i]);
            w->k[i] = kdims[i];
        }
    } else if (!have_k) {
        return qr_op_fail(c, QR_ERR_INVALID, "kernel_shape is required");
    }
    QR_TRY(qr__nn_attr_ints(c, "strides", n, 1, 1, w->s, NULL));
    if (dilations) QR_TRY(qr__nn_attr_ints(c, "dilations", n, 1, 1, w->d, NULL));
    else for (int i = 0; i < n; i++) w->d[i] = 1;
    int64_t pads[2 * QR__NN_MAXSP];
    QR_TRY(qr__nn_attr_ints(c, "pads", 2 * n, 0, 0, pads, NULL));
    QrNnAutoPad ap;
    QR_TRY(qr__nn_auto_pad(c, &ap));
    for (int i = 0; i < n; i++) {
        int64_t eff, in = w->in[i], s = w->s[i];
        if (qr_mul_overflow_i64(w->k[i] - 1, w->d[i], &eff) || eff > INT64_MAX / 4)
            return qr_op_fail(c, QR_ERR_SHAPE, "kernel extent overflows in spatial dim %d", i);
        eff += 1;
        if (ap == QR__NN_PAD_SAME_UPPER || ap == QR__NN_PAD_SAME_LOWER) {
            w->out[i] = (in + s - 1) / s;
            int64_t total = QR_MAX(0, (w->out[i] - 1) * s + eff - in);
            w->pb[i] = ap == QR__NN_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
            continue;
        }
        if (ap == QR__NN_PAD_NOTSET) { w->pb[i] = pads[i]; w->pe[i] = pads[i + n]; }
        int64_t span = in + w->pb[i] + w->pe[i] - eff;
        if (span < 0)
            return qr_op_fail(c, QR_ERR_SHAPE, "kernel extent %lld exceeds padded input size %lld in spatial dim %d",
                              (long long)eff, (long long)(in + w->pb[i] + w->pe[i]), i);
        if (ceil_mode) {
            w->out[i] = (span + s - 1) / s + 1;
            if ((w->out[i] - 1) * s >= in + w->pb[i]) w->out[i]--;
        } else {
            w->out[i] = span / s + 1;
        }
    }
    return QR_OK;
}

static int64_t qr__nn_prod(const int64_t *v, int n) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

/* qr_op_check_work for a windowed op: `outer` (e.g. N * M * C/group) times the output positions
 * of w times `taps` per position. */
static QrStatus qr__nn_check_work(const QrOpCtx *c, const QrNnWindow *w, double outer, double taps) {
    double pos = 1;
    for (int i = 0; i < w->nsp; i++) pos *= (double)w->out[i];
    char what[160];
    snprintf(what, sizeof what, "%.3g output positions x %.3g taps", pos * outer, taps);
    return qr_op_check_work(c, pos * outer * taps, what);
}

/* ==== Conv ========================================================================= */

/* Validates Conv's X (N,C,...), W (M, C/group, k...), optional B (M) and fills w. */
static QrStatus qr__nn_conv_check(const QrOpCtx *c, QrNnWindow *w, int64_t *group) {
    const QrTensor *x = c->in[0], *wt = c->in[1], *b = qr_op_in(c, 2);
    QR_TRY(qr_op_need_float(c, 0));
    QR_TRY(qr__nn_same_dtype(c, 1, 2));
    if (wt->rank != x->rank)
        return qr_op_fail(c, QR_ERR_SHAPE, "weights have rank %d but the input has rank %d", wt->rank, x->rank);
    int64_t g = qr_attr_int(c->node, "group", 1);
    if (g < 1) return qr_op_fail(c, QR_ERR_INVALID, "group = %lld", (long long)g);
    QR_TRY(qr__nn_window(c, x, wt->dims + 2, false, true, w));
    int64_t C = x->dims[1], M = wt->dims[0];
    if (C % g || wt->dims[1] != C / g || M % g)
        return qr_op_fail(c, QR_ERR_SHAPE, "input channels %lld, weight shape [%lld, %lld, ...] and group %lld do not fit",
                          (long long)C, (long long)M, (long long)wt->dims[1], (long long)g);
    if (b && (b->rank != 1 || b->dims[0] != M))
        return qr_op_fail(c, QR_ERR_SHAPE, "bias must have shape [%lld]", (long long)M);
    QR_TRY(qr__nn_check_work(c, w, (double)x->dims[0] * (double)M, (double)wt->numel / (double)QR_MAX(M, 1)));
    *group = g;
    return QR_OK;
}

static QrStatus qr__nn_conv_shape(QrOpCtx *c) {
    QrNnWindow w;
    int64_t g, dims[QR_MAX_RANK];
    QR_TRY(qr__nn_conv_check(c, &w, &g));
    dims[0] = c->in[0]->dims[0];
    dims[1] = c->in[1]->dims[0];
    for (int i = 0; i < w.nsp; i++) dims[i + 2] = w.out[i];
    return qr_op_set_out(c, 0, c->in[0]->dtype, w.nsp + 2, dims);
}

/* im2col for output positions [p0, p0+np):
 * col (Cg*K, np) row-major, col[(ci*K + kk)*np + j] = x[ci] at o(p0+j)*s - pb + kidx(kk)*d (0 outside),
 * where x is (Cg, in...) and K the kernel volume. */
static void qr__nn_im2col(const float *x, int64_t Cg, const QrNnWindow *w, int64_t K, int64_t p0, int64_t np,
                          float *col) {
    const int n = w->nsp, L = n - 1;
    const int64_t Pin = qr__nn_prod(w->in, n);
    int64_t kidx[QR__NN_MAXSP] = {0}, o0[QR__NN_MAXSP];
    int64_t rem = p0;
    for (int d = L; d >= 0; d--) { o0[d] = rem % w->out[d]; rem /= w->out[d]; }
    for (int64_t kk = 0; kk < K; kk++) {
        int64_t off[QR__NN_MAXSP];
        for (int d = 0; d < n; d++) off[d] = kidx[d] * w->d[d] - w->pb[d];
        const int64_t sL = w->s[L], offL = off[L], inL = w->in[L];
        for (int64_t ci = 0; ci < Cg; ci++) {
            float *dst = col + (ci * K + kk) * np;
            const float *xc = x + ci * Pin;
            int64_t o[QR__NN_MAXSP];
            memcpy(o, o0, sizeof o);
            int64_t p = 0;
            while (p < np) {
                int64_t run = QR_MIN(w->out[L] - o[L], np - p);
                bool ok = true;
                int64_t base = 0;
                for (int d = 0; d < L; d++) {
                    int64_t i = o[d] * w->s[d] + off[d];
                    if (i < 0 || i >= w->in[d]) { ok = false; break; }
                    base = base * w->in[d] + i;
                }
                float *dr = dst + p;
                if (!ok) {
                    memset(dr, 0, (size_t)run * sizeof *dr);
                } else {
                    const float *xr = xc + base * inL;
                    /* j range with 0 <= (o[L]+j)*sL + offL < inL */
                    int64_t t = o[L] * sL + offL;
                    int64_t lo = t >= 0 ? 0 : (-t + sL - 1) / sL;
                    int64_t hi = inL - 1 - t < 0 ? 0 : (inL - 1 - t) / sL + 1;
                    lo = QR_MIN(lo, run);
                    hi = QR_MAX(lo, QR_MIN(hi, run));
                    for (int64_t j = 0; j < lo; j++) dr[j] = 0;
                    if (sL == 1) memcpy(dr + lo, xr + t + lo, (size_t)(hi - lo) * sizeof *dr);
                    else for (int64_t j = lo; j < hi; j++) dr[j] = xr[t + j * sL];
                    for (int64_t j = hi; j < run; j++) dr[j] = 0;
                }
                p += run;
                o[L] += run;
                for (int d = L; d > 0 && o[d] >= w->out[d]; d--) { o[d] = 0; o[d - 1]++; }
            }
        }
        for (int d = L; d >= 0; d--) {
            if (++kidx[d] < w->k[d]) break;
            kidx[d] = 0;
        }
    }
}

static inline int64_t qr__nn_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static inline int64_t qr__nn_rup(int64_t a, int64_t b) { return qr__nn_cdiv(a, b) * b; }

/* im2col of channels [t*chans, (t+1)*chans) of one column tile (a pool task). */
typedef struct QrNnColJob {
    const float *x;
    int64_t Cg;
    const QrNnWindow *w;
    int64_t K, p0, np;
    float *col;
    int64_t Pin, chans;
} QrNnColJob;

static void qr__nn_im2col_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrNnColJob *j = ctx;
    int64_t c0 = t * j->chans, nc = QR_MIN(j->chans, j->Cg - c0);
    qr__nn_im2col(j->x + c0 * j->Pin, nc, j->w, j->K, j->p0, j->np, j->col + c0 * j->K * j->np);
}

/* Fused layers after a convolution (see qr_nn_conv_fused): steps over channel axis 1 of
 * the (N, M, P) output, element (n, m, p) at offset (n*M + m)*P + p. */
typedef struct QrNnSteps { const QrF32Step *s; int ns; } QrNnSteps;

/* QrF32PostFn of one GEMM call of a convolution: its rows are output channels ch0 + m,
 * whose column q is tensor element off0 + m*P + q. */
typedef struct QrNnPost { const QrF32Step *s; int ns; int64_t ch0, P, off0; } QrNnPost;

static void qr__nn_post(void *ctx, float *c, int64_t ldc, int64_t m0, int64_t rows, int64_t n0, int64_t cols) {
    const QrNnPost *p = ctx;
    for (int64_t r = 0; r < rows; r++) {
        float *row = c + r * ldc;
        int64_t m = m0 + r;
        qr_kern.f32_steps(p->s, p->ns, row, row, cols, p->ch0 + m, p->off0 + m * p->P + n0);
    }
}

/* The fused epilogue of the GEMM call whose output rows are channels [ch0, ch0 + Mg) of
 * image `in` (columns from p0): the leading steps the micro-kernels do in registers (a
 * residual Add, then Clip, then Relu: the order they apply them in), the rest as post. */
static void qr__nn_fused_ep(const QrNnSteps *fs, const float *bias, int64_t ch0, int64_t off0, int64_t P,
                            QrF32Fused *f, QrNnPost *post) {
    memset(f, 0, sizeof *f);
    f->ep = (QrF32Epilogue){ bias, -INFINITY, INFINITY };
    f->conv_n = P;   /* sums like ORT's MlasConv, also where the GEMM sees a slice of the columns */
    int k = 0;
    if (fs && k < fs->ns && fs->s[k].op == QR_F32_STEP_ADD_T) {
        f->res = fs->s[k].t + off0;
        f->ldres = P;
        f->res_first = fs->s[k].swap;
        k++;
    }
    if (fs && k < fs->ns && fs->s[k].op == QR_F32_STEP_CLAMP) {
        f->ep.lo = fs->s[k].lo;
        f->ep.hi = fs->s[k].hi;
        k++;
    }
    if (fs && k < fs->ns && fs->s[k].op == QR_F32_STEP_RELU) {
        f->relu = true;
        k++;
    }
    if (fs && k < fs->ns) {
        *post = (QrNnPost){ fs->s + k, fs->ns - k, ch0, P, off0 };
        f->post = qr__nn_post;
        f->post_ctx = post;
    }
}

/* Output planes [t*planes, (t+1)*planes) of the N*M planes of a convolution with one
 * output channel per group (Mg = 1: depthwise, or grouped), a pool task: each by
 * qr_kern.f32_conv_m1 (ONNX Runtime's M=1 order), then the fused steps. 1-D windows run
 * as 2-D ones of height 1. */
typedef struct QrNnM1Job {
    const float *X, *W, *B;
    float *Y;
    const QrNnWindow *w;
    int64_t C, M, Cg, CK, P, Pin, planes, nplanes;
    const QrNnSteps *fs;
} QrNnM1Job;

static void qr__nn_m1_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrNnM1Job *j = ctx;
    const QrNnWindow *w = j->w;
    const bool two = w->nsp == 2;
    const int64_t i0 = t * j->planes, i1 = QR_MIN((t + 1) * j->planes, j->nplanes);
    /* steps without per-channel parameters (pc 0: ReLU, Clip, per-tensor fake quant) run
     * once over the task's planes: a call per 7x7 plane cost more than its work */
    const int ns = j->fs ? j->fs->ns : 0;
    bool per_plane = false;
    for (int k = 0; k < ns; k++) per_plane = per_plane || j->fs->s[k].pc != 0;
    int nact = 0;   /* leading Clip / ReLU steps: the kernel's fused form when the level has one */
    while (nact < ns && (j->fs->s[nact].op == QR_F32_STEP_CLAMP || j->fs->s[nact].op == QR_F32_STEP_RELU)) nact++;
    int done = 0;   /* steps the kernel applied: the same for every plane (one window geometry) */
    /* one geometry for the task, only x changes per plane: a kernel that reads b's fields as
     * vectors then finds them in the cache, not in the store buffer (a forwarding stall) */
    QrF32ConvB b = { NULL, j->Cg, two ? w->in[0] : 1, w->in[two], two ? w->k[0] : 1, w->k[two], two ? w->s[0] : 1,
                     w->s[two], two ? w->d[0] : 1, w->d[two], two ? w->pb[0] : 0, w->pb[two], two ? w->out[0] : 1,
                     w->out[two] };
    for (int64_t i = i0; i < i1;) {
        /* a run of planes of one image: groups m .. m + e - i - 1, each Cg input planes on */
        const int64_t m = i % j->M, in = i / j->M, e = QR_MIN(i1, (in + 1) * j->M);
        b.x = j->X + (in * j->C + m * j->Cg) * j->Pin;
        float *y = j->Y + i * j->P;
        done = qr_kern.f32_conv_m1_act ? qr_kern.f32_conv_m1_act(&b, e - i, j->Cg * j->Pin, j->W + m * j->CK, j->CK,
                                                                 j->B ? j->B + m : NULL, y, j->P,
                                                                 nact ? j->fs->s : NULL, nact)
                                       : -1;
        if (done < 0) {
            for (int64_t p = 0; p < e - i; p++) {
                QrF32ConvB pb = b;
                pb.x = b.x + p * j->Cg * j->Pin;
                qr_kern.f32_conv_m1(&pb, j->W + (m + p) * j->CK, j->B ? j->B[m + p] : 0.0f, y + p * j->P);
            }
            done = 0;
        }
        if (ns > done && per_plane)
            for (int64_t p = i; p < e; p++)
                qr_kern.f32_steps(j->fs->s + done, ns - done, j->Y + p * j->P, j->Y + p * j->P, j->P, p % j->M, p * j->P);
        i = e;
    }
    if (ns > done && !per_plane && i1 > i0)
        qr_kern.f32_steps(j->fs->s + done, ns - done, j->Y + i0 * j->P, j->Y + i0 * j->P, (i1 - i0) * j->P, 0, i0 * j->P);
}

/* Conv in float32 with the fused steps fs (NULL: none) applied to its output. */
/* A convolution group's weights as the kernels pack them (QrF32ConvPackFn), for qr_op_prep. */
typedef struct QrNnPack {
    int64_t M;
    const float *A;
    int64_t lda;
    const QrF32ConvB *b;
} QrNnPack;

static void qr__nn_pack_fill(void *ctx, void *dst) {
    const QrNnPack *p = ctx;
    qr_kern.f32_conv_pack(p->M, p->A, p->lda, p->b, dst);
}

static QrStatus qr__nn_conv_f32_steps(QrOpCtx *c, const QrNnSteps *fs) {
    const QrTensor *x = c->in[0], *wt = c->in[1], *b = qr_op_in(c, 2);
    QrTensor *y = c->out[0];
    QrNnWindow w;
    int64_t G;
    QR_TRY(qr__nn_conv_check(c, &w, &G));
    const int n = w.nsp;
    const int64_t N = x->dims[0], C = x->dims[1], M = wt->dims[0], Cg = C / G, Mg = M / G;
    const int64_t K = qr__nn_prod(w.k, n), P = qr__nn_prod(w.out, n), Pin = qr__nn_prod(w.in, n), CK = Cg * K;
    const float *X = x->data, *W = wt->data, *B = b ? b->data : NULL;
    float *Y = y->data;
    if (P == 0 || N == 0 || M == 0) return QR_OK;
    if (n <= 2 && Mg == 1 && CK > 0) {   /* one output channel per group: ORT's M=1 kernel order */
        QrNnM1Job mj = { X, W, B, Y, &w, C, M, Cg, CK, P, Pin, QR_MAX(1, (1 << 14) / QR_MAX(1, P * CK)), N * M, fs };
        qr_pool_for(qr__nn_cdiv(N * M, mj.planes), qr__nn_m1_task, &mj);
        return QR_OK;
    }
    /* Y = W_g @ columns + bias, the bias (and fused layers) added by the GEMM's epilogue */
    QrF32Fused f;
    QrNnPost post;
    bool direct = true;   /* 1x1, stride 1, no padding: X itself is the column matrix */
    for (int i = 0; i < n; i++) direct = direct && w.k[i] == 1 && w.s[i] == 1 && w.pb[i] == 0 && w.pe[i] == 0;
    if (direct || CK == 0) {
        /* a 2-D one the kernels take with the output channels along the vectors (packed weights:
         * kern/gemm.c's coc path, its pixels flattened into one row) goes as a convolution */
        QrF32ConvB cb = { NULL, Cg, n == 2 ? w.in[0] : 1, w.in[n - 1], 1, 1, 1, 1, 1, 1, 0, 0, n == 2 ? w.out[0] : 1,
                          w.out[n - 1] };
        const size_t pk_b = n == 2 && CK > 0 ? qr_kern.f32_conv_pack_bytes(Mg, &cb) : 0;
        for (int64_t in = 0; in < N; in++)
            for (int64_t g = 0; g < G; g++) {
                int64_t off0 = (in * M + g * Mg) * P;
                qr__nn_fused_ep(fs, B ? B + g * Mg : NULL, g * Mg, off0, P, &f, &post);
                if (pk_b) {
                    cb.x = X + (in * C + g * Cg) * Pin;
                    QrNnPack pk = { Mg, W + g * Mg * CK, CK, &cb };
                    f.a_pack = qr_op_prep(c, 1u << 1, (uint64_t)g, pk_b, qr__nn_pack_fill, &pk);
                    qr_kern.f32_conv_gemm_fused(Mg, W + g * Mg * CK, CK, &cb, Y + off0, P, &f);
                    continue;
                }
                qr_kern.f32_gemm_fused(Mg, P, CK, W + g * Mg * CK, CK, X + (in * C + g * Cg) * Pin, Pin, Y + off0, P,
                                       false, &f);
            }
        return QR_OK;
    }
    if (n == 2) {   /* implicit im2col: the GEMM packs its B panels straight from X */
        for (int64_t in = 0; in < N; in++)
            for (int64_t g = 0; g < G; g++) {
                QrF32ConvB cb = { X + (in * C + g * Cg) * Pin, Cg, w.in[0], w.in[1], w.k[0], w.k[1], w.s[0], w.s[1],
                                  w.d[0], w.d[1], w.pb[0], w.pb[1], w.out[0], w.out[1] };
                int64_t off0 = (in * M + g * Mg) * P;
                qr__nn_fused_ep(fs, B ? B + g * Mg : NULL, g * Mg, off0, P, &f, &post);
                QrNnPack pk = { Mg, W + g * Mg * CK, CK, &cb };   /* the group's weights, packed once per model */
                f.a_pack = qr_op_prep(c, 1u << 1, (uint64_t)g, qr_kern.f32_conv_pack_bytes(Mg, &cb), qr__nn_pack_fill, &pk);
                qr_kern.f32_conv_gemm_fused(Mg, W + g * Mg * CK, CK, &cb, Y + off0, P, &f);
            }
        return QR_OK;
    }
    int64_t tile = QR_MAX(1, QR__NN_COL_BYTES / (int64_t)sizeof(float) / CK);
    tile = QR_MIN(tile, P);
    QrStatus st = QR_OK;
    float *col = qr__nn_malloc(c, CK * tile, sizeof(float), &st);
    if (!col) return st;
    for (int64_t in = 0; in < N; in++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t p0 = 0; p0 < P; p0 += tile) {
                int64_t np = QR_MIN(tile, P - p0);
                QrNnColJob cj = { X + (in * C + g * Cg) * Pin, Cg, &w, K, p0, np, col, Pin,
                                  QR_MAX(1, (1 << 15) / QR_MAX(1, K * np)) };
                qr_pool_for(qr__nn_cdiv(Cg, cj.chans), qr__nn_im2col_task, &cj);
                int64_t off0 = (in * M + g * Mg) * P + p0;
                qr__nn_fused_ep(fs, B ? B + g * Mg : NULL, g * Mg, off0, P, &f, &post);
                qr_kern.f32_gemm_fused(Mg, np, CK, W + g * Mg * CK, CK, col, np, Y + off0, P, false, &f);
            }
    free(col);
    return QR_OK;
}

static QrStatus qr__nn_conv_f32(QrOpCtx *c) { return qr__nn_conv_f32_steps(c, NULL); }

/* Conv (float32 input, weights and output) followed by the fused steps fs (over channel
 * axis 1 of its output, see QrF32Step), as run/run.c's fusion calls it: bit-identical to
 * Conv followed by the layers the steps stand for, each run on its own. */
static QrStatus qr_nn_conv_fused(QrOpCtx *c, const QrF32Step *steps, int ns) {
    QrNnSteps fs = { steps, ns };
    return qr__nn_conv_f32_steps(c, &fs);
}

/* ==== a convolution and the depthwise one that reads it, in bands of rows ================
 * MobileNet's expansion (1x1, C -> 6C channels) writes a tensor several times the size of
 * the L2 cache (MobileNetV2's features.2: 96 x 112 x 112, 4.8 MB) which the depthwise layer
 * then reads back from memory; so does its first layer (3x3/2, 3 -> 32). Run as a pair, the
 * depthwise output is made in bands of rows, and for each band the first layer's rows it reads
 * are computed just before into a per-thread buffer of a few hundred KB (the rows two bands
 * share kept, not recomputed): the first layer's output never exists whole. Every element gets
 * the operations it gets when the two run on their own: a 1x1 layer's rows by the same GEMM on
 * a slice of the columns, another window's by the same convolution GEMM on a copy of the input
 * rows they read (conv_n: the K blocks of the whole plane either way; the packed weights the
 * whole layer's), the depthwise rows by the same M=1 kernel on a window whose top padding is the
 * band's (test_run_conv_pair compares the bits). */

/* Target bytes of a thread's band buffer (all channels of the first layer's rows a band reads). */
#ifndef QR__NN_PAIR_BYTES
#define QR__NN_PAIR_BYTES ((int64_t)384 << 10)
#endif
/* The pair runs in bands only when the first layer's output per image is at least this large
 * (below, it stays in the L2 cache between the two layers anyway). */
#ifndef QR__NN_PAIR_MIN
#define QR__NN_PAIR_MIN ((int64_t)1 << 20)
#endif
/* Tests set both small (many bands on small images) and count the pairs run. */
QR_TESTAPI int64_t qr_nn_pair_bytes = QR__NN_PAIR_BYTES, qr_nn_pair_min = QR__NN_PAIR_MIN;
#ifdef QR_TESTING
QR_TESTAPI int64_t qr_nn_pairs_run;
#endif

typedef struct QrNnPairJob {
    const float *X, *WP, *BP, *WC, *BC, *a_pack;
    const QrNnSteps *fp, *fc;
    const QrNnWindow *wp, *w;   /* the first layer's window, the depthwise layer's */
    float *Y, *scr;
    bool direct;                /* the first layer is 1x1, stride 1, unpadded: its image is its B */
    bool pool;                  /* the second is a MaxPool (2-D, no Indices, no dilation), not a depthwise Conv */
    int64_t Cin, Hin, Win, M, H, W, OH, OW, in, R, ld, scr_n, xb_n, rb_n, nseg, CK;
} QrNnPairJob;

/* Input rows [*a, *b) of window w over an input of H rows that its output rows [o0, o1) read
 * (clipped). */
static void qr__nn_pair_rows(const QrNnWindow *w, int64_t H, int64_t o0, int64_t o1, int64_t *a, int64_t *b) {
    *a = QR_MAX(0, o0 * w->s[0] - w->pb[0]);
    *b = QR_MIN(H, (o1 - 1) * w->s[0] - w->pb[0] + (w->k[0] - 1) * w->d[0] + 1);
}

/* Rows [a, b) of the first layer's output, every channel, into s + (a - lo) * W (channel c at
 * c * ld on): a 1x1 layer's GEMM on columns [a*W, b*W) of the image; another's convolution GEMM
 * on the input rows they read, copied to xb; epilogue and steps as for the whole. */
static void qr__nn_pair_p(const QrNnPairJob *j, float *s, float *xb, int64_t lo, int64_t a, int64_t b) {
    const int64_t HW = j->H * j->W, HWin = j->Hin * j->Win;
    const float *x = j->X + j->in * j->Cin * HWin;
    QrF32Fused f;
    QrNnPost post;
    qr__nn_fused_ep(j->fp, j->BP, 0, j->in * j->M * HW + a * j->W, HW, &f, &post);
    if (j->direct) {
        qr_kern.f32_gemm_fused(j->M, (b - a) * j->W, j->Cin, j->WP, j->Cin, x + a * j->W, HW, s + (a - lo) * j->W, j->ld,
                               false, &f);
        return;
    }
    const QrNnWindow *wp = j->wp;
    int64_t ia, ib;
    qr__nn_pair_rows(wp, j->Hin, a, b, &ia, &ib);
    for (int64_t c = 0; c < j->Cin; c++)
        memcpy(xb + c * (ib - ia) * j->Win, x + c * HWin + ia * j->Win, (size_t)((ib - ia) * j->Win) * sizeof(float));
    const QrF32ConvB cb = { xb, j->Cin, ib - ia, j->Win, wp->k[0], wp->k[1], wp->s[0], wp->s[1], wp->d[0], wp->d[1],
                            ia - (a * wp->s[0] - wp->pb[0]), wp->pb[1], b - a, j->W };
    f.a_pack = j->a_pack;
    qr_kern.f32_conv_gemm_fused(j->M, j->WP, j->CK, &cb, s + (a - lo) * j->W, j->ld, &f);
}

/* Output rows [o0, o1) of every plane of the second layer from input rows [lo, lo + rows) in s:
 * a MaxPool's by its plane kernel, as qr__nn_maxpool_task runs whole planes (rowbuf: its row
 * scratch); a depthwise layer's, then its steps, as qr__nn_m1_task runs whole planes (the fused
 * activation where the level has it). */
static void qr__nn_pair_c(const QrNnPairJob *j, const float *s, float *rowbuf, int64_t lo, int64_t rows, int64_t o0,
                          int64_t o1) {
    const QrNnWindow *w = j->w;
    const int64_t P = j->OH * j->OW, K = w->k[0] * w->k[1], ph = lo - (o0 * w->s[0] - w->pb[0]);
    float *y = j->Y + j->in * j->M * P + o0 * j->OW;
    if (j->pool) {
        for (int64_t c = 0; c < j->M; c++)
            qr_kern.f32_maxpool2d(s + c * j->ld, rows, j->W, w->k[0], w->k[1], w->s[0], w->s[1], w->d[0], w->d[1], ph,
                                  w->pb[1], y + c * P, o1 - o0, j->OW, rowbuf);
        return;
    }
    QrF32ConvB b = { s, 1, rows, j->W, w->k[0], w->k[1], w->s[0], w->s[1], w->d[0], w->d[1], ph, w->pb[1], o1 - o0, j->OW };
    const int ns = j->fc ? j->fc->ns : 0;
    int nact = 0;
    while (nact < ns && (j->fc->s[nact].op == QR_F32_STEP_CLAMP || j->fc->s[nact].op == QR_F32_STEP_RELU)) nact++;
    int done = qr_kern.f32_conv_m1_act ? qr_kern.f32_conv_m1_act(&b, j->M, j->ld, j->WC, K, j->BC, y, P,
                                                                 nact ? j->fc->s : NULL, nact)
                                       : -1;
    if (done < 0) {
        for (int64_t c = 0; c < j->M; c++) {
            QrF32ConvB pb = b;
            pb.x = s + c * j->ld;
            qr_kern.f32_conv_m1(&pb, j->WC + c * K, j->BC ? j->BC[c] : 0.0f, y + c * P);
        }
        done = 0;
    }
    for (int64_t c = 0; ns > done && c < j->M; c++)
        qr_kern.f32_steps(j->fc->s + done, ns - done, y + c * P, y + c * P, (o1 - o0) * j->OW, c,
                          (j->in * j->M + c) * P + o0 * j->OW);
}

/* Segment t of the depthwise output's rows (a pool task), band by band on this thread's buffers. */
static void qr__nn_pair_task(void *ctx, int64_t t, int tid) {
    const QrNnPairJob *j = ctx;
    float *s = j->scr + (size_t)tid * (size_t)(j->scr_n + j->xb_n + j->rb_n), *xb = s + j->scr_n, *rb = xb + j->xb_n;
    const int64_t s0 = t * j->OH / j->nseg, s1 = (t + 1) * j->OH / j->nseg;
    int64_t lo = 0, hi = 0;   /* the first layer's rows held: [lo, hi) */
    for (int64_t o0 = s0; o0 < s1; o0 += j->R) {
        const int64_t o1 = QR_MIN(s1, o0 + j->R);
        int64_t a, b;
        qr__nn_pair_rows(j->w, j->H, o0, o1, &a, &b);
        if (a >= lo && a < hi) {   /* rows this band shares with the last: moved to the top */
            if (a > lo)
                for (int64_t c = 0; c < j->M; c++)
                    memmove(s + c * j->ld, s + c * j->ld + (a - lo) * j->W, (size_t)((hi - a) * j->W) * sizeof(float));
            lo = a;
        } else {
            lo = hi = a;
        }
        if (b > hi) qr__nn_pair_p(j, s, xb, lo, hi, b);
        hi = QR_MAX(hi, b);
        qr__nn_pair_c(j, s, rb, lo, b - lo, o0, o1);
    }
}

/* Conv cp (steps fp) and the layer cc whose input 0 is cp's output and its only reader — a
 * depthwise Conv (steps fc) or, with pool, a MaxPool whose window is w — run as a pair (above)
 * when both take 2-D images, cp has one group, and cp's output is at least qr_nn_pair_min bytes
 * per image and 16 wide. cc's output is written, cp's never (its tensor needs no data); cp's
 * packed weights come through qr_op_prep as when it runs alone. *taken false: nothing ran or
 * was written (run them one by one). With buf NULL nothing is read but shapes: *taken tells
 * whether it would run them and *bytes receives the band buffers' size, which the caller gives
 * as buf (64-byte aligned; the executor's pooled buffers, reused run after run) to run them. */
static QrStatus qr__nn_pair(QrOpCtx *cp, const QrNnSteps *fp, QrOpCtx *cc, const QrNnSteps *fc, const QrNnWindow *w,
                            bool pool, void *buf, size_t *bytes, bool *taken) {
    *taken = false;
    QrNnWindow wp;
    int64_t gp;
    QR_TRY(qr__nn_conv_check(cp, &wp, &gp));
    const QrTensor *x = cp->in[0], *wt = cp->in[1], *bp = qr_op_in(cp, 2);
    const QrTensor *wc = pool ? NULL : cc->in[1], *bc = pool ? NULL : qr_op_in(cc, 2);
    if (x->rank != 4 || wp.nsp != 2 || w->nsp != 2 || gp != 1) return QR_OK;
    bool direct = true;
    for (int i = 0; i < 2; i++) direct = direct && wp.k[i] == 1 && wp.s[i] == 1 && wp.pb[i] == 0 && wp.pe[i] == 0;
    const int64_t N = x->dims[0], Cin = x->dims[1], M = wt->dims[0], H = wp.out[0], W = wp.out[1];
    if (cc->in[0]->rank != 4 || cc->in[0]->dims[1] != M || w->in[0] != H || w->in[1] != W) return QR_OK;
    if (M * H * W < qr_nn_pair_min / (int64_t)sizeof(float) || W < 16 || N < 1 || Cin < 1) return QR_OK;
    for (int64_t o = 0; o < w->out[0]; o++) {   /* every output row of both reads some input row */
        int64_t a, b, ia, ib;
        qr__nn_pair_rows(w, H, o, o + 1, &a, &b);
        if (a >= b) return QR_OK;
        qr__nn_pair_rows(&wp, wp.in[0], a, a + 1, &ia, &ib);
        if (ia >= ib) return QR_OK;
        qr__nn_pair_rows(&wp, wp.in[0], b - 1, b, &ia, &ib);
        if (ia >= ib) return QR_OK;
    }
    const int64_t KR = (w->k[0] - 1) * w->d[0] + 1, KRp = (wp.k[0] - 1) * wp.d[0] + 1;
    const int64_t rows_fit = qr_nn_pair_bytes / (M * W * (int64_t)sizeof(float));
    const int64_t R = QR_MAX(1, (QR_MAX(rows_fit, KR) - KR) / w->s[0] + 1);
    const int64_t cap = (R - 1) * w->s[0] + KR, ld = qr__nn_rup(cap * W, 16);
    const int64_t xb_n = direct ? 0 : qr__nn_rup(Cin * ((cap - 1) * wp.s[0] + KRp) * wp.in[1], 16);
    const int threads = qr_pool_threads();
    const int64_t nb = qr__nn_cdiv(w->out[0], R), rb_n = pool ? qr__nn_rup(W, 16) : 0, per = M * ld + xb_n + rb_n;
    if (!buf) {
        *bytes = (size_t)threads * (size_t)per * sizeof(float);
        *taken = true;
        return QR_OK;
    }
    QrNnPairJob j = { .X = x->data, .WP = wt->data, .BP = bp ? bp->data : NULL, .WC = wc ? wc->data : NULL,
                      .BC = bc ? bc->data : NULL, .fp = fp, .fc = fc, .wp = &wp, .w = w, .Y = cc->out[0]->data,
                      .direct = direct, .pool = pool, .Cin = Cin, .Hin = wp.in[0], .Win = wp.in[1], .M = M, .H = H,
                      .W = W, .OH = w->out[0], .OW = w->out[1], .R = R, .ld = ld, .scr_n = M * ld, .xb_n = xb_n,
                      .rb_n = rb_n, .scr = buf, .nseg = threads > 1 ? QR_MIN(nb, 2 * (int64_t)threads) : 1,
                      .CK = Cin * wp.k[0] * wp.k[1] };
    if (!direct) {   /* the whole layer's packed weights (`qreport run`'s cache), as qr__nn_conv_f32_steps takes them */
        QrF32ConvB cb = { x->data, Cin, wp.in[0], wp.in[1], wp.k[0], wp.k[1], wp.s[0], wp.s[1], wp.d[0], wp.d[1],
                          wp.pb[0], wp.pb[1], H, W };
        QrNnPack pk = { M, wt->data, j.CK, &cb };
        j.a_pack = qr_op_prep(cp, 1u << 1, 0, qr_kern.f32_conv_pack_bytes(M, &cb), qr__nn_pack_fill, &pk);
    }
    for (j.in = 0; j.in < N; j.in++) qr_pool_for(j.nseg, qr__nn_pair_task, &j);
#ifdef QR_TESTING
    __atomic_add_fetch(&qr_nn_pairs_run, 1, __ATOMIC_RELAXED);
#endif
    *taken = true;
    return QR_OK;
}

/* qr__nn_pair of a Conv and the depthwise Conv cc (a group per channel, one output channel each). */
static QrStatus qr_nn_conv_pair(QrOpCtx *cp, const QrNnSteps *fp, QrOpCtx *cc, const QrNnSteps *fc, void *buf, size_t *bytes,
                                bool *taken) {
    *taken = false;
    QrNnWindow w;
    int64_t gc;
    QR_TRY(qr__nn_conv_check(cc, &w, &gc));
    const QrTensor *wc = cc->in[1];
    if (cc->in[0]->rank != 4 || gc != cc->in[0]->dims[1] || wc->dims[0] != gc) return QR_OK;
    return qr__nn_pair(cp, fp, cc, fc, &w, false, buf, bytes, taken);
}

/* Bytes of packed weights a run with a constant cache keeps for Conv node n when its weights are
 * a constant of the run (qr_op_prep, above; run/ decides that), from g's inferred shapes: its
 * groups' blocks when the weights are float32 and the kernels pack them for its shape at this
 * level; 0 otherwise (the memory estimate's share). */
static uint64_t qr_nn_conv_prep_bytes(const QrGraph *g, const QrNode *n) {
    if (strcmp(n->op_type, "Conv") || n->domain[0] || n->n_in < 2 || n->in[0] < 0 || n->in[1] < 0) return 0;
    const QrValue *wv = &g->values[n->in[1]];
    if (wv->is_dynamic || wv->t.dtype != QR_DT_F32 || g->values[n->in[0]].is_dynamic) return 0;
    const QrTensor *in[3] = { &g->values[n->in[0]].t, &wv->t, n->n_in > 2 && n->in[2] >= 0 ? &g->values[n->in[2]].t : NULL };
    QrArena scratch = {0};
    QrOpCtx c = { .g = g, .node = n, .n_in = n->n_in < 3 ? n->n_in : 3, .in = in, .scratch = &scratch };
    QrNnWindow w;
    int64_t G;
    if (in[0]->rank != 4 || qr__nn_conv_check(&c, &w, &G) != QR_OK) {
        qr_err_clear();
        return 0;
    }
    const int64_t Cg = in[0]->dims[1] / G, Mg = wv->t.dims[0] / G;
    QrF32ConvB cb = { NULL, Cg, w.in[0], w.in[1], w.k[0], w.k[1], w.s[0], w.s[1], w.d[0], w.d[1], w.pb[0], w.pb[1],
                      w.out[0], w.out[1] };
    /* (a 1x1, stride 1, unpadded one packs where the kernels' coc path takes it flattened, as
     * qr__nn_conv_f32_steps asks the same function) */
    if (Mg == 1 || Cg * w.k[0] * w.k[1] == 0) return 0;   /* the paths that pack no weights */
    qr_kern_init();
    return (uint64_t)G * qr_kern.f32_conv_pack_bytes(Mg, &cb);
}

static QrStatus qr__nn_conv_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_conv_f32, 7u, 1u); }

/* ==== ConvTranspose ================================================================ */

/* Validates X (N,C,in...), W (C, M/group, k...), optional B (M); fills w (in = X's
 * spatial dims, out = Y's) with pads from pads / auto_pad / output_shape. */
static QrStatus qr__nn_convt_check(const QrOpCtx *c, QrNnWindow *w, int64_t *group) {
    const QrTensor *x = c->in[0], *wt = c->in[1], *b = qr_op_in(c, 2);
    QR_TRY(qr_op_need_float(c, 0));
    QR_TRY(qr__nn_same_dtype(c, 1, 2));
    memset(w, 0, sizeof *w);
    if (x->rank < 3 || x->rank > QR__NN_MAXSP + 2)
        return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank 3..%d (N, C, spatial...), got %d", QR__NN_MAXSP + 2,
                          x->rank);
    if (wt->rank != x->rank)
        return qr_op_fail(c, QR_ERR_SHAPE, "weights have rank %d but the input has rank %d", wt->rank, x->rank);
    int64_t g = qr_attr_int(c->node, "group", 1);
    if (g < 1) return qr_op_fail(c, QR_ERR_INVALID, "group = %lld", (long long)g);
    int64_t C = x->dims[1];
    if (wt->dims[0] != C || C % g)
        return qr_op_fail(c, QR_ERR_SHAPE, "weights must have shape [%lld, M/group, ...] with %lld divisible by group %lld",
                          (long long)C, (long long)C, (long long)g);
    int64_t M;
    if (qr_mul_overflow_i64(wt->dims[1], g, &M)) return qr_op_fail(c, QR_ERR_SHAPE, "output channels overflow");
    if (b && (b->rank != 1 || b->dims[0] != M))
        return qr_op_fail(c, QR_ERR_SHAPE, "bias must have shape [%lld]", (long long)M);
    int n = w->nsp = x->rank - 2;
    bool have_k, have_pads;
    QR_TRY(qr__nn_attr_ints(c, "kernel_shape", n, 0, 1, w->k, &have_k));
    for (int i = 0; i < n; i++) {
        w->in[i] = x->dims[i + 2];
        if (wt->dims[i + 2] < 1) return qr_op_fail(c, QR_ERR_SHAPE, "weight spatial dim %d is 0", i);
        if (have_k && w->k[i] != wt->dims[i + 2])
            return qr_op_fail(c, QR_ERR_SHAPE, "kernel_shape[%d] = %lld but the weights have %lld", i,
                              (long long)w->k[i], (long long)wt->dims[i + 2]);
        w->k[i] = wt->dims[i + 2];
    }
    QR_TRY(qr__nn_attr_ints(c, "strides", n, 1, 1, w->s, NULL));
    QR_TRY(qr__nn_attr_ints(c, "dilations", n, 1, 1, w->d, NULL));
    int64_t pads[2 * QR__NN_MAXSP], opad[QR__NN_MAXSP], oshape[QR__NN_MAXSP];
    QR_TRY(qr__nn_attr_ints(c, "pads", 2 * n, 0, 0, pads, &have_pads));
    const int64_t *v;
    int cnt = qr_attr_ints(c->node, "output_padding", &v);
    for (int i = 0; i < n; i++) opad[i] = 0;
    if (cnt > 0) {
        if (cnt != n && cnt != 2 * n) return qr_op_fail(c, QR_ERR_INVALID, "output_padding has %d values, expected %d", cnt, n);
        for (int i = 0; i < n; i++) {
            if (v[i] < 0 || v[i] > INT32_MAX) return qr_op_fail(c, QR_ERR_INVALID, "output_padding[%d] is out of range", i);
            opad[i] = v[i];
        }
    }
    cnt = qr_attr_ints(c->node, "output_shape", &v);
    bool have_oshape = cnt > 0;
    if (have_oshape) {
        if (cnt != n && cnt != n + 2) return qr_op_fail(c, QR_ERR_INVALID, "output_shape has %d values, expected %d", cnt, n);
        for (int i = 0; i < n; i++) {
            oshape[i] = v[cnt - n + i];
            if (oshape[i] < 0 || oshape[i] > INT32_MAX)
                return qr_op_fail(c, QR_ERR_INVALID, "output_shape[%d] is out of range", i);
        }
    }
    QrNnAutoPad ap;
    QR_TRY(qr__nn_auto_pad(c, &ap));
    bool same = ap == QR__NN_PAD_SAME_UPPER || ap == QR__NN_PAD_SAME_LOWER;
    for (int i = 0; i < n; i++) {
        int64_t full = 0, eff;
        if (qr_mul_overflow_i64(w->k[i] - 1, w->d[i], &eff) || eff > INT64_MAX / 4 ||
            (w->in[i] > 0 && (qr_mul_overflow_i64(w->s[i], w->in[i] - 1, &full) ||
                              __builtin_add_overflow(full, opad[i] + eff + 1, &full))))
            return qr_op_fail(c, QR_ERR_SHAPE, "output size overflows in spatial dim %d", i);
        if (have_oshape || same) {
            if (have_oshape) w->out[i] = oshape[i];
            else if (qr_mul_overflow_i64(w->in[i], w->s[i], &w->out[i]))
                return qr_op_fail(c, QR_ERR_SHAPE, "output size overflows in spatial dim %d", i);
            if (have_pads && !same) {
                w->pb[i] = pads[i];
                w->pe[i] = pads[i + n];
            } else {
                int64_t total = full - w->out[i], half = qr__nn_floordiv(total, 2);
                w->pb[i] = ap == QR__NN_PAD_SAME_UPPER ? half : total - half;
                w->pe[i] = total - w->pb[i];
            }
        } else {
            if (ap == QR__NN_PAD_NOTSET) { w->pb[i] = pads[i]; w->pe[i] = pads[i + n]; }
            w->out[i] = full - w->pb[i] - w->pe[i];
            if (w->out[i] < 0)
                return qr_op_fail(c, QR_ERR_SHAPE, "pads exceed the output size in spatial dim %d", i);
        }
    }
    /* every input position times the weights of its group, then the output */
    double pin = (double)x->dims[0] * (double)C, taps = (double)wt->numel / (double)QR_MAX(C, 1), pos = 1;
    for (int i = 0; i < n; i++) { pin *= (double)w->in[i]; pos *= (double)w->out[i]; }
    char what[160];
    snprintf(what, sizeof what, "%.3g input positions x %.3g weights", pin, taps);
    QR_TRY(qr_op_check_work(c, pin * taps + pos * (double)x->dims[0] * (double)M, what));
    *group = g;
    return QR_OK;
}

static QrStatus qr__nn_convt_shape(QrOpCtx *c) {
    QrNnWindow w;
    int64_t g, dims[QR_MAX_RANK];
    QR_TRY(qr__nn_convt_check(c, &w, &g));
    dims[0] = c->in[0]->dims[0];
    dims[1] = c->in[1]->dims[1] * g;
    for (int i = 0; i < w.nsp; i++) dims[i + 2] = w.out[i];
    return qr_op_set_out(c, 0, c->in[0]->dtype, w.nsp + 2, dims);
}

/* col2im for input positions [p0, p0+np): adds col (Mg*K, np) into y (Mg, out...)
 * at o = i*s - pb + kidx*d for every in-range o. */
static void qr__nn_col2im(const float *col, int64_t Mg, const QrNnWindow *w, int64_t K, int64_t p0, int64_t np,
                          float *y) {
    const int n = w->nsp, L = n - 1;
    const int64_t P = qr__nn_prod(w->out, n);
    int64_t kidx[QR__NN_MAXSP] = {0}, i0[QR__NN_MAXSP];
    int64_t rem = p0;
    for (int d = L; d >= 0; d--) { i0[d] = rem % w->in[d]; rem /= w->in[d]; }
    for (int64_t kk = 0; kk < K; kk++) {
        int64_t off[QR__NN_MAXSP];
        for (int d = 0; d < n; d++) off[d] = kidx[d] * w->d[d] - w->pb[d];
        const int64_t sL = w->s[L], offL = off[L], outL = w->out[L];
        for (int64_t m = 0; m < Mg; m++) {
            const float *src = col + (m * K + kk) * np;
            float *ym = y + m * P;
            int64_t ii[QR__NN_MAXSP];
            memcpy(ii, i0, sizeof ii);
            int64_t p = 0;
            while (p < np) {
                int64_t run = QR_MIN(w->in[L] - ii[L], np - p);
                bool ok = true;
                int64_t base = 0;
                for (int d = 0; d < L; d++) {
                    int64_t o = ii[d] * w->s[d] + off[d];
                    if (o < 0 || o >= w->out[d]) { ok = false; break; }
                    base = base * w->out[d] + o;
                }
                if (ok) {
                    float *yr = ym + base * outL;
                    int64_t t = ii[L] * sL + offL;
                    int64_t lo = t >= 0 ? 0 : (-t + sL - 1) / sL;
                    int64_t hi = outL - 1 - t < 0 ? 0 : (outL - 1 - t) / sL + 1;
                    hi = QR_MIN(hi, run);
                    for (int64_t j = lo; j < hi; j++) yr[t + j * sL] += src[p + j];
                }
                p += run;
                ii[L] += run;
                for (int d = L; d > 0 && ii[d] >= w->in[d]; d--) { ii[d] = 0; ii[d - 1]++; }
            }
        }
        for (int d = L; d >= 0; d--) {
            if (++kidx[d] < w->k[d]) break;
            kidx[d] = 0;
        }
    }
}

static QrStatus qr__nn_convt_f32(QrOpCtx *c) {
    const QrTensor *x = c->in[0], *wt = c->in[1], *b = qr_op_in(c, 2);
    QrTensor *y = c->out[0];
    QrNnWindow w;
    int64_t G;
    QR_TRY(qr__nn_convt_check(c, &w, &G));
    const int n = w.nsp;
    const int64_t N = x->dims[0], C = x->dims[1], Mg = wt->dims[1], M = Mg * G, Cg = C / G;
    const int64_t K = qr__nn_prod(w.k, n), P = qr__nn_prod(w.out, n), Pin = qr__nn_prod(w.in, n), MK = Mg * K;
    const float *X = x->data, *W = wt->data, *B = b ? b->data : NULL;
    float *Y = y->data;
    for (int64_t i = 0; i < N * M; i++) {
        float bv = B ? B[i % M] : 0.0f;
        float *yp = Y + i * P;
        for (int64_t p = 0; p < P; p++) yp[p] = bv;
    }
    if (P == 0 || Pin == 0 || N == 0 || MK == 0 || Cg == 0) return QR_OK;
    int64_t tile = QR_MAX(1, QR__NN_COL_BYTES / (int64_t)sizeof(float) / MK);
    tile = QR_MIN(tile, Pin);
    QrStatus st = QR_OK;
    float *wtr = qr__nn_malloc(c, MK * Cg, sizeof(float), &st);
    float *col = wtr ? qr__nn_malloc(c, MK * tile, sizeof(float), &st) : NULL;
    if (!col) { free(wtr); return st; }
    for (int64_t g = 0; g < G; g++) {
        /* W_g (Cg, MK) -> wtr (MK, Cg) so that col = wtr @ X_g */
        const float *wg = W + g * Cg * MK;
        for (int64_t ci = 0; ci < Cg; ci++)
            for (int64_t r = 0; r < MK; r++) wtr[r * Cg + ci] = wg[ci * MK + r];
        for (int64_t in = 0; in < N; in++)
            for (int64_t p0 = 0; p0 < Pin; p0 += tile) {
                int64_t np = QR_MIN(tile, Pin - p0);
                qr_kern.f32_gemm(MK, np, Cg, wtr, Cg, X + (in * C + g * Cg) * Pin + p0, Pin, col, np, false);
                qr__nn_col2im(col, Mg, &w, K, p0, np, Y + (in * M + g * Mg) * P);
            }
    }
    free(col);
    free(wtr);
    return QR_OK;
}

static QrStatus qr__nn_convt_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_convt_f32, 7u, 1u); }

/* ==== Gemm ========================================================================= */

/* Y (M,N) = alpha * A' @ B' + beta * C, A' = transA ? A^T : A, B' likewise; C broadcasts to (M,N). */
static QrStatus qr__nn_gemm_dims(const QrOpCtx *c, int64_t *M, int64_t *N, int64_t *K) {
    const QrTensor *a = c->in[0], *b = c->in[1], *cc = qr_op_in(c, 2);
    QR_TRY(qr_op_need_float(c, 0));
    QR_TRY(qr__nn_same_dtype(c, 1, 2));
    if (a->rank != 2 || b->rank != 2)
        return qr_op_fail(c, QR_ERR_SHAPE, "A and B must be matrices, got ranks %d and %d", a->rank, b->rank);
    bool ta = qr_attr_int(c->node, "transA", 0) != 0, tb = qr_attr_int(c->node, "transB", 0) != 0;
    *M = ta ? a->dims[1] : a->dims[0];
    *K = ta ? a->dims[0] : a->dims[1];
    int64_t kb = tb ? b->dims[1] : b->dims[0];
    *N = tb ? b->dims[0] : b->dims[1];
    if (kb != *K)
        return qr_op_fail(c, QR_ERR_SHAPE, "inner dimensions differ: A' is [%lld, %lld], B' is [%lld, %lld]",
                          (long long)*M, (long long)*K, (long long)kb, (long long)*N);
    if (cc) {
        int64_t want[2] = { *M, *N };
        bool ok = cc->rank <= 2;
        for (int d = 0; ok && d < cc->rank; d++) {
            int64_t v = cc->dims[d], t = want[2 - cc->rank + d];
            ok = v == t || v == 1;
        }
        if (!ok) {
            char s[128];
            return qr_op_fail(c, QR_ERR_SHAPE, "C of shape %s does not broadcast to [%lld, %lld]",
                              qr_shape_str_brackets(s, sizeof s, cc->rank, cc->dims), (long long)*M, (long long)*N);
        }
    }
    return QR_OK;
}

static QrStatus qr__nn_gemm_shape(QrOpCtx *c) {
    int64_t M, N, K;
    QR_TRY(qr__nn_gemm_dims(c, &M, &N, &K));
    int64_t dims[2] = { M, N };
    return qr_op_set_out(c, 0, c->in[0]->dtype, 2, dims);
}

/* dst (cols, rows) = src (rows, cols)^T, in 32 x 32 tiles: a weight transposed element by element
 * writes one cache line (and, past 4 KiB rows, one page) per element, several times slower. */
static void qr__nn_transpose(const float *src, int64_t rows, int64_t cols, float *dst) {
    enum { T = 32 };
    for (int64_t i0 = 0; i0 < rows; i0 += T)
        for (int64_t j0 = 0; j0 < cols; j0 += T) {
            int64_t i1 = QR_MIN(i0 + T, rows), j1 = QR_MIN(j0 + T, cols);
            for (int64_t j = j0; j < j1; j++)
                for (int64_t i = i0; i < i1; i++) dst[j * rows + i] = src[i * cols + j];
        }
}

/* Whether input i is, in this run, what ONNX Runtime would see as an initializer (which
 * it packs ahead, changing how it sums): an initializer or a Constant's output, directly
 * or through the run's aliases (a disabled quantizer's DequantizeLinear output reads the
 * weight itself, as the model with that Q/DQ pair cut out would). True when the graph is
 * not known. */
static bool qr__nn_ort_initializer(const QrOpCtx *c, int i) {
    if (!c->g || !c->node || c->node->n_in <= i || c->node->in[i] < 0) return true;
    int v = c->node->in[i];
    for (int hops = 0; c->alias && c->alias[v] >= 0 && hops < 64; hops++) v = c->alias[v];
    const QrValue *val = &c->g->values[v];
    return val->is_init || (val->producer >= 0 && !strcmp(c->g->nodes[val->producer].op_type, "Constant"));
}

/* A quantized B (kern.h QrF32QuantB) of `rows` x `cols` stored values dequantized into a new
 * float32 array (*out, free() it), for the products that read B as floats (one row or one column
 * of output): DequantizeLinear's (float)(q - zp) * scale, the parameters indexed by B's column n,
 * which is the stored row when trans (B given transposed, (N, K)). */
static QrStatus qr__nn_qb_floats(QrOpCtx *c, const QrF32QuantB *qb, int64_t rows, int64_t cols, bool trans,
                                 float **out) {
    QrStatus st = QR_OK;
    float *f = qr__nn_malloc(c, QR_MAX(rows * cols, 1), sizeof(float), &st);
    if (!f) return st;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < cols; k++) {
            const int64_t i = r * cols + k, n = trans ? r : k;
            const int32_t q = qb->q_signed ? (int32_t)((const int8_t *)qb->q)[i] : (int32_t)((const uint8_t *)qb->q)[i];
            f[i] = (float)(q - (qb->zp ? qb->zp[n * qb->zps] : 0)) * qb->scale[n * qb->ss];
        }
    *out = f;
    return QR_OK;
}

/* B (N, K), an initializer, packed for qr_f32_gemv_packed (qr_op_prep). */
typedef struct QrNnGemvPack {
    int64_t N, K;
    const float *B;
} QrNnGemvPack;

static void qr__nn_gemv_pack_fill(void *ctx, void *dst) {
    const QrNnGemvPack *p = ctx;
    qr_f32_gemv_pack(p->N, p->K, p->B, p->K, dst);
}

/* Y^T = B (N, K) @ A^T for one row A, as qr_kern.f32_gemm(N, 1, K, B, K, A, 1, Y, 1, acc) sums it,
 * from B packed once per model (the executor's kept constants) where the level has a packed
 * kernel; false when it ran nothing (no such kernel, B not kept this run): the caller runs the
 * GEMM. The same bits (kern.h QrF32GemvPackedFn). */
static bool qr__nn_gemv_packed(const QrOpCtx *c, int64_t N, int64_t K, const float *B, const float *A, float *Y,
                               bool acc) {
    if (!qr_kern.f32_gemv_packed) return false;
    QrNnGemvPack pk = { N, K, B };
    const float *bp = qr_op_prep(c, 1u << 1, 0, qr_f32_gemv_pack_bytes(N, K), qr__nn_gemv_pack_fill, &pk);
    if (!bp) return false;
    qr_f32_gemv_packed(N, K, bp, A, Y, acc);
    return true;
}

/* Gemm in float32; b_init: whether ONNX Runtime sees B as an initializer (it packs those
 * ahead, which changes how it sums: see qr__nn_ort_initializer); qb not NULL: B is
 * DequantizeLinear of these integers (c->in[1] gives its shape only; see qr_nn_gemm_qb). */
static QrStatus qr__nn_gemm_f32_q(QrOpCtx *c, bool b_init, const QrF32QuantB *qb) {
    const QrTensor *a = c->in[0], *b = c->in[1], *cc = qr_op_in(c, 2);
    float *Y = c->out[0]->data;
    int64_t M, N, K;
    QR_TRY(qr__nn_gemm_dims(c, &M, &N, &K));
    bool ta = qr_attr_int(c->node, "transA", 0) != 0, tb = qr_attr_int(c->node, "transB", 0) != 0;
    float alpha = qr_attr_float(c->node, "alpha", 1.0f), beta = qr_attr_float(c->node, "beta", 1.0f);
    QrStatus st = QR_OK;
    float *at = NULL, *bf = NULL;
    const float *A = a->data, *B = b->data;
    bool done = false;
    /* alpha 1, beta 1: Y starts as C and the product is added block by block, as ORT's Gemm
     * (C copied into Y, then MLAS's SGEMM with beta 1) sums it */
    const bool c_first = cc && alpha == 1.0f && beta == 1.0f;
    const float *Cp = cc ? cc->data : NULL;   /* C[i][j] = Cp[i*sm + j*sn] (broadcast) */
    const int64_t sm = cc && cc->rank == 2 && cc->dims[0] != 1 ? cc->dims[1] : 0;
    const int64_t sn = cc && cc->rank >= 1 && cc->dims[cc->rank - 1] != 1 ? 1 : 0;
    if (c_first) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) Y[i * N + j] = Cp[i * sm + j * sn];
    }
    /* ORT packs an initializer B ahead and sums like a GEMM (K blocks of 256); any other B (a
     * DequantizeLinear's output in a QDQ model) goes through MLAS's SGEMM unpacked: one row
     * of A (alpha 1, beta 0 or 1) in its M=1 kernels, else in K blocks adapted to N and K */
    const bool m1 = M == 1 && !ta && !b_init && (!cc || c_first) && alpha == 1.0f;
    /* a quantized B that a batch-1 or one-column kernel below reads as floats: dequantized first */
    if (qb && !(tb && m1) && (m1 || (!tb && N == 1 && (!cc || c_first) && alpha == 1.0f))) {
        QR_TRY(qr__nn_qb_floats(c, qb, tb ? N : K, tb ? K : N, tb, &bf));
        B = bf;
        qb = NULL;
    }
    if (tb && M == 1 && (m1 || b_init)) {   /* one row (batch 1, a Linear layer): Y^T = B (N,K) @ A^T */
        if (N > 0 && m1 && qb)   /* the weight dequantized in registers: the same bits */
            qr_f32_gemv_m1t_q8(N, K, A, qb->q, qb->q_signed, K, qb->scale, qb->ss, qb->zp, qb->zps, Y, c_first);
        else if (N > 0 && m1) qr_f32_gemv_m1t(N, K, A, B, K, Y, c_first);
        else if (N > 0 && !qr__nn_gemv_packed(c, N, K, B, A, Y, c_first))
            qr_kern.f32_gemm(N, 1, K, B, K, A, 1, Y, 1, c_first);
        done = true;
    } else if (!tb && m1) {
        if (N > 0) qr_f32_gemv_m1(N, K, A, B, N, Y, c_first);
        done = true;
    } else if (!tb && N == 1 && !b_init && (!cc || c_first) && alpha == 1.0f) {
        /* one column of B (contiguous): MLAS flips the product, Y^T = B^T @ A^T, into its M=1
         * kernels — transposed for A as stored [M, K], plain for A^T stored [K, M] */
        if (M > 0 && !ta) qr_f32_gemv_m1t(M, K, B, A, K, Y, c_first);
        else if (M > 0) qr_f32_gemv_m1(M, K, B, A, M, Y, c_first);
        done = true;
    }
    if (done) ta = tb = false;
    if (ta && M > 0 && K > 0) {
        if (!(at = qr__nn_malloc(c, M * K, sizeof(float), &st))) {
            free(bf);
            return st;
        }
        qr__nn_transpose(A, K, M, at);
        A = at;
    }
    /* a transposed B (N, K) is read as it is stored: the GEMM packs its blocks (the same sums) */
    const QrF32Fused adapted = { .ep = { NULL, -INFINITY, INFINITY }, .conv_n = N, .pack_panels = true, .qb = qb };
    if (M > 0 && N > 0 && !done) {
        if (tb) qr_kern.f32_gemm_bt_fused(M, N, K, A, K, B, K, Y, N, c_first, b_init ? NULL : &adapted);
        else if (b_init) qr_kern.f32_gemm(M, N, K, A, K, B, N, Y, N, c_first);
        else qr_kern.f32_gemm_fused(M, N, K, A, K, B, N, Y, N, c_first, &adapted);
    }
    free(at);
    free(bf);
    if (alpha != 1.0f) for (int64_t i = 0; i < M * N; i++) Y[i] *= alpha;
    if (cc && beta != 0.0f && !c_first) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) Y[i * N + j] += beta * Cp[i * sm + j * sn];
    }
    return QR_OK;
}

static QrStatus qr_op_nn_gemm_f32_as(QrOpCtx *c, bool b_init) { return qr__nn_gemm_f32_q(c, b_init, NULL); }

static QrStatus qr__nn_gemm_f32(QrOpCtx *c) { return qr_op_nn_gemm_f32_as(c, qr__nn_ort_initializer(c, 1)); }

/* Gemm (float32 A, C and output) whose B is DequantizeLinear of the integers qb (run/run.c's
 * fusion: c->in[1] has B's shape and no data): the bits of the Gemm on the dequantized B, which
 * ONNX Runtime does not see as an initializer, without a float copy of it (the GEMM dequantizes
 * B's panels as it packs them; a batch of one dequantizes in registers). */
static QrStatus qr_nn_gemm_qb(QrOpCtx *c, const QrF32QuantB *qb) { return qr__nn_gemm_f32_q(c, false, qb); }

static QrStatus qr__nn_gemm_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_gemm_f32, 7u, 1u); }

/* ==== MatMul ======================================================================= */

/* numpy matmul: 1-D A is (1,K) and 1-D B is (K,1) with that dim dropped from the
 * result; leading (batch) dims broadcast. Fills M, N, K, the batch shape and output. */
typedef struct QrNnMatMul {
    int64_t M, N, K;
    int brank;
    int64_t bdims[QR_MAX_RANK];
    int orank;
    int64_t odims[QR_MAX_RANK];
} QrNnMatMul;

static QrStatus qr__nn_matmul_dims(const QrOpCtx *c, QrNnMatMul *mm) {
    const QrTensor *a = c->in[0], *b = c->in[1];
    QR_TRY(qr_op_need_float(c, 0));
    QR_TRY(qr__nn_same_dtype(c, 1, 1));
    if (a->rank < 1 || b->rank < 1)
        return qr_op_fail(c, QR_ERR_SHAPE, "inputs must have rank >= 1, got %d and %d", a->rank, b->rank);
    mm->M = a->rank == 1 ? 1 : a->dims[a->rank - 2];
    mm->K = a->dims[a->rank - 1];
    int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    mm->N = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    char s1[128], s2[128];
    if (kb != mm->K)
        return qr_op_fail(c, QR_ERR_SHAPE, "shapes %s and %s do not fit (inner dims %lld vs %lld)",
                          qr_shape_str_brackets(s1, sizeof s1, a->rank, a->dims),
                          qr_shape_str_brackets(s2, sizeof s2, b->rank, b->dims), (long long)mm->K, (long long)kb);
    int ra = QR_MAX(0, a->rank - 2), rb = QR_MAX(0, b->rank - 2);
    mm->brank = QR_MAX(ra, rb);
    for (int d = 0; d < mm->brank; d++) {
        int da = d - (mm->brank - ra), db = d - (mm->brank - rb);
        int64_t va = da >= 0 ? a->dims[da] : 1, vb = db >= 0 ? b->dims[db] : 1;
        if (va != vb && va != 1 && vb != 1)
            return qr_op_fail(c, QR_ERR_SHAPE, "batch dims of %s and %s cannot be broadcast",
                              qr_shape_str_brackets(s1, sizeof s1, a->rank, a->dims),
                              qr_shape_str_brackets(s2, sizeof s2, b->rank, b->dims));
        mm->bdims[d] = va == 1 ? vb : va;
    }
    mm->orank = 0;
    for (int d = 0; d < mm->brank; d++) mm->odims[mm->orank++] = mm->bdims[d];
    if (a->rank > 1) mm->odims[mm->orank++] = mm->M;
    if (b->rank > 1) mm->odims[mm->orank++] = mm->N;
    return QR_OK;
}

static QrStatus qr__nn_matmul_shape(QrOpCtx *c) {
    QrNnMatMul mm;
    QR_TRY(qr__nn_matmul_dims(c, &mm));
    return qr_op_set_out(c, 0, c->in[0]->dtype, mm.orank, mm.odims);
}

/* Matrix strides (in units of whole matrices) of t's batch dims against bdims. */
static void qr__nn_batch_strides(const QrTensor *t, int brank, int64_t *st) {
    int tr = QR_MAX(0, t->rank - 2);
    int64_t s = 1;
    for (int d = brank - 1; d >= 0; d--) {
        int td = d - (brank - tr);
        if (td < 0 || t->dims[td] == 1) st[d] = 0;
        else { st[d] = s; s *= t->dims[td]; }
    }
}

/* y = swap ? b[n] + y : y + b[n] over `rows` rows of N values: a last-axis bias the GEMM did
 * not take (qr__nn_matmul_f32_bias's paths without an epilogue). */
static void qr__nn_add_lastb(float *Y, int64_t rows, int64_t N, const float *b, bool swap) {
    for (int64_t i = 0; i < rows; i++, Y += N)
        for (int64_t n = 0; n < N; n++) Y[n] = swap ? b[n] + Y[n] : Y[n] + b[n];
}

/* The per-matrix products of a batched MatMul whose B is not an initializer (attention's Q.K^T
 * and .V, one matrix per head), each through MLAS's adapted SGEMM path as one batch alone: a task
 * runs whole batches (the GEMM inside runs on the task's thread: the pool does not nest), so the
 * heads run side by side instead of each GEMM being split over the threads. A product's bits do
 * not depend on where it runs. */
typedef struct QrNnBatchJob {
    const float *A, *B;
    float *Y;
    int64_t M, N, K, per_task, nb;
    int brank;
    const int64_t *bdims, *sa, *sb;
    const QrF32Fused *f;
} QrNnBatchJob;

/* B's matrix at offset off (elements) and the epilogue that goes with it: f itself, or, when B
 * is quantized (f->qb), a copy in *tf whose integers start at that matrix (one byte each). */
static const QrF32Fused *qr__nn_b_at(const float *B, int64_t off, const QrF32Fused *f, const float **b, QrF32Fused *tf,
                                     QrF32QuantB *tq) {
    *b = B ? B + off : NULL;
    if (!f || !f->qb) return f;
    *tq = *f->qb;
    tq->q = (const unsigned char *)tq->q + off;
    *tf = *f;
    tf->qb = tq;
    return tf;
}

static void qr__nn_batch_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrNnBatchJob *j = ctx;
    for (int64_t i = t * j->per_task; i < QR_MIN(j->nb, (t + 1) * j->per_task); i++) {
        int64_t oa = 0, ob = 0, rem = i;
        for (int d = j->brank - 1; d >= 0; d--) {   /* batch i's matrices, as the serial loop steps them */
            const int64_t x = rem % j->bdims[d];
            rem /= j->bdims[d];
            oa += x * j->sa[d];
            ob += x * j->sb[d];
        }
        const float *b;
        QrF32Fused tf;
        QrF32QuantB tq;
        const QrF32Fused *f = qr__nn_b_at(j->B, ob * j->K * j->N, j->f, &b, &tf, &tq);
        qr_kern.f32_gemm_fused(j->M, j->N, j->K, j->A + oa * j->M * j->K, j->K, b, j->N, j->Y + i * j->M * j->N, j->N,
                               false, f);
    }
}

/* qr__nn_matmul_f32_bias's products on B (float, or quantized: qb, B NULL) for the dims mm;
 * b_shared: one B for every batch, A not broadcast (see there). */
static void qr__nn_matmul_run(QrOpCtx *c, const QrNnMatMul *mm, bool b_shared, const float *lastb, bool swap,
                              const float *B, const QrF32QuantB *qb) {
    const QrTensor *a = c->in[0], *b = c->in[1];
    const float *A = a->data;
    float *Y = c->out[0]->data;
    const int64_t M = mm->M, N = mm->N, K = mm->K, nb = qr__nn_prod(mm->bdims, mm->brank);
    int64_t sa[QR_MAX_RANK], sb[QR_MAX_RANK], idx[QR_MAX_RANK] = {0}, oa = 0, ob = 0;
    qr__nn_batch_strides(a, mm->brank, sa);
    qr__nn_batch_strides(b, mm->brank, sb);
    /* ORT packs an initializer B ahead (K blocks of 256); any other B (a DequantizeLinear's
     * output in a QDQ model, attention's K and V) goes through MLAS's SGEMM with the strides it
     * adapts to N and K, as its convolutions do (conv_n: K blocks of qr__k_conv_kc) */
    const QrF32Fused adapted = { .ep = { NULL, -INFINITY, INFINITY }, .conv_n = N, .pack_panels = true, .qb = qb,
                                 .res = lastb, .res_first = swap };
    const QrF32Fused plain = { .ep = { NULL, -INFINITY, INFINITY }, .res = lastb, .res_first = swap };
    const bool b_init = qr__nn_ort_initializer(c, 1);
    const int64_t rows = nb * M;   /* of Y, N values each */
    if (!b_init && b->rank == 1 && K > 0) {   /* a 1-D B: ORT takes every row of A as a product of its own (M 1, N 1) */
        for (int64_t r = 0; r < a->numel / K; r++) qr_f32_gemv_m1(1, K, A + r * K, B, 1, Y + r, false);
        if (lastb) qr__nn_add_lastb(Y, a->numel / K, 1, lastb, swap);
        return;
    }
    /* and one column of B (N 1, B not an initializer): MLAS flips the product into its M=1
     * transposed-B kernel, Y^T = B^T @ A^T */
    if (b_shared) {
        if (b_init && lastb) qr_kern.f32_gemm_fused(nb * M, N, K, A, K, B, N, Y, N, false, &plain);
        else if (b_init) qr_kern.f32_gemm(nb * M, N, K, A, K, B, N, Y, N, false);
        else if (N == 1) qr_f32_gemv_m1t(nb * M, K, B, A, K, Y, false);
        else qr_kern.f32_gemm_fused(nb * M, N, K, A, K, B, N, Y, N, false, &adapted);
        if (lastb && !b_init && N == 1) qr__nn_add_lastb(Y, rows, N, lastb, swap);
        return;
    }
    if (!b_init && M > 1 && N > 1 && nb >= 2 && qr_pool_threads() > 1) {   /* per head, side by side */
        QrNnBatchJob j = { A, B, Y, M, N, K, 1, nb, mm->brank, mm->bdims, sa, sb, &adapted };
        j.per_task = QR_MAX(1, nb / (8 * qr_pool_threads()));
        qr_pool_for((nb + j.per_task - 1) / j.per_task, qr__nn_batch_task, &j);
        return;
    }
    for (int64_t i = 0; i < nb; i++) {
        const float *bi;
        QrF32Fused tf;
        QrF32QuantB tq;
        const QrF32Fused *fi = qr__nn_b_at(B, ob * K * N, &adapted, &bi, &tf, &tq);
        if (b_init && lastb)
            qr_kern.f32_gemm_fused(M, N, K, A + oa * M * K, K, bi, N, Y + i * M * N, N, false, &plain);
        else if (b_init) qr_kern.f32_gemm(M, N, K, A + oa * M * K, K, bi, N, Y + i * M * N, N, false);
        else if (M == 1) qr_f32_gemv_m1(N, K, A + oa * K, bi, N, Y + i * N, false);
        else if (N == 1) qr_f32_gemv_m1t(M, K, bi, A + oa * M * K, K, Y + i * M, false);
        else qr_kern.f32_gemm_fused(M, N, K, A + oa * M * K, K, bi, N, Y + i * M * N, N, false, fi);
        for (int d = mm->brank - 1; d >= 0; d--) {
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < mm->bdims[d]) break;
            oa -= sa[d] * mm->bdims[d];
            ob -= sb[d] * mm->bdims[d];
            idx[d] = 0;
        }
    }
    if (lastb && !b_init && (M == 1 || N == 1)) qr__nn_add_lastb(Y, rows, N, lastb, swap);   /* the M=1 kernels' */
}

/* MatMul in float32, then (lastb not NULL) the Add of lastb, one value per column (N) of the
 * output (lastb + y when swap): in the GEMM's epilogue (QrF32Fused.res with row stride 0), which
 * rounds the product, then the sum, as the two nodes run one by one do. qb not NULL: B is
 * DequantizeLinear of these integers (c->in[1] gives B's shape only; never an initializer to
 * ONNX Runtime), dequantized by the GEMM as it packs B's panels, or first, into a float copy,
 * where a batch-1 or one-column kernel reads B as floats. */
static QrStatus qr__nn_matmul_f32_bias(QrOpCtx *c, const float *lastb, bool swap, const QrF32QuantB *qb) {
    const QrTensor *a = c->in[0], *b = c->in[1];
    QrNnMatMul mm;
    QR_TRY(qr__nn_matmul_dims(c, &mm));
    const int64_t M = mm.M, N = mm.N, nb = qr__nn_prod(mm.bdims, mm.brank);
    if (M == 0 || N == 0 || nb == 0) return QR_OK;
    const bool b_init = !qb && qr__nn_ort_initializer(c, 1);
    /* One B for every batch and A not broadcast (a Linear layer on [L, batch, E]: torchvision's
     * ViT-B in-projection is [197, 1, 768] x [768, 2304]): A's matrices are one [nb*M, K]
     * matrix and Y's one [nb*M, N], so one GEMM instead of nb GEMMs of M rows that each pack B
     * again. The same kernel as the per-batch loop, and every element is the same K-ordered
     * sum, so the bits do not change — except for one row of A against a B that is not an
     * initializer, which ORT runs in MLAS's M=1 kernel: a single GEMM there only when ORT
     * makes one too (A of rank >= B's, B's batch dims all 1: MatMulComputeHelper's fold). */
    int64_t sb[QR_MAX_RANK];
    qr__nn_batch_strides(b, mm.brank, sb);
    bool b_shared = nb > 1 && a->rank >= 2 && qr__nn_prod(a->dims, a->rank - 2) == nb;
    for (int d = 0; d < mm.brank; d++) b_shared &= sb[d] == 0;
    if (b_shared && M == 1 && !b_init) b_shared = a->rank >= b->rank;
    if (qb && (b->rank == 1 || N == 1 || (M == 1 && !b_shared))) {   /* a kernel that reads B as floats */
        const int64_t cols = b->rank == 1 ? 1 : N;
        float *bf = NULL;
        QR_TRY(qr__nn_qb_floats(c, qb, b->numel / cols, cols, false, &bf));
        qr__nn_matmul_run(c, &mm, b_shared, lastb, swap, bf, NULL);
        free(bf);
        return QR_OK;
    }
    qr__nn_matmul_run(c, &mm, b_shared, lastb, swap, b->data, qb);
    return QR_OK;
}

static QrStatus qr__nn_matmul_f32(QrOpCtx *c) { return qr__nn_matmul_f32_bias(c, NULL, false, NULL); }

/* MatMul (float32 inputs and output) followed by an Add of bias (NULL: none), one value per
 * column of its output (bias + MatMul when swap), as run/run.c's fusion calls it: bit-identical
 * to the two nodes run one by one. qb not NULL: B is DequantizeLinear of these integers (the
 * fused weight's DequantizeLinear; c->in[1] gives B's shape only), with the bits of the MatMul on
 * the dequantized B (see qr__nn_matmul_f32_bias). */
static QrStatus qr_nn_matmul_bias(QrOpCtx *c, const float *bias, bool swap, const QrF32QuantB *qb) {
    const QrTensor *y = c->out[0];
    if (!bias) return qr__nn_matmul_f32_bias(c, NULL, false, qb);
    if (c->in[0]->rank >= 2 && c->in[1]->rank >= 2) return qr__nn_matmul_f32_bias(c, bias, swap, qb);
    QR_TRY(qr__nn_matmul_f32_bias(c, NULL, false, qb));   /* a 1-D operand: its dim dropped from y */
    const int64_t last = y->rank ? y->dims[y->rank - 1] : 1;
    if (last > 0) qr__nn_add_lastb(y->data, y->numel / last, last, bias, swap);
    return QR_OK;
}


static QrStatus qr__nn_matmul_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_matmul_f32, 3u, 1u); }

/* ==== pooling ====================================================================== */

typedef enum { QR__NN_POOL_MAX, QR__NN_POOL_AVG, QR__NN_POOL_LP } QrNnPoolKind;

static QrStatus qr__nn_pool_check(const QrOpCtx *c, QrNnPoolKind kind, QrNnWindow *w) {
    const QrTensor *x = c->in[0];
    if (kind == QR__NN_POOL_MAX) {
        if (!qr_dtype_is_float(x->dtype) && x->dtype != QR_DT_U8 && x->dtype != QR_DT_S8)
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input type %s is not supported", qr_dtype_name(x->dtype));
        int64_t so = qr_attr_int(c->node, "storage_order", 0);
        if (so != 0 && so != 1) return qr_op_fail(c, QR_ERR_INVALID, "storage_order = %lld", (long long)so);
    } else {
        QR_TRY(qr_op_need_float(c, 0));
    }
    bool ceil_mode = qr_attr_int(c->node, "ceil_mode", 0) != 0;
    QR_TRY(qr__nn_window(c, x, NULL, kind != QR__NN_POOL_LP && ceil_mode, true, w));
    /* the kernels visit only the taps inside x: at most min(k, in) per axis (plus the 2-D max
     * pool's row pass over whole input rows) */
    double taps = 1, rows = (double)w->out[0] * (double)QR_MIN(w->k[0], w->in[0]);
    for (int i = 0; i < w->nsp; i++) {
        taps *= (double)QR_MIN(w->k[i], w->in[i]);
        if (i > 0) rows *= (double)w->in[i];
    }
    double pos = 1;
    for (int i = 0; i < w->nsp; i++) pos *= (double)w->out[i];
    double nc = (double)x->dims[0] * (double)x->dims[1];
    char what[160];
    snprintf(what, sizeof what, "%.3g output positions x %.3g taps inside the input", nc * pos, taps);
    return qr_op_check_work(c, nc * (pos * taps + rows), what);
}

static QrStatus qr__nn_pool_shape(QrOpCtx *c, QrNnPoolKind kind) {
    QrNnWindow w;
    QR_TRY(qr__nn_pool_check(c, kind, &w));
    int64_t dims[QR_MAX_RANK];
    dims[0] = c->in[0]->dims[0];
    dims[1] = c->in[0]->dims[1];
    for (int i = 0; i < w.nsp; i++) dims[i + 2] = w.out[i];
    QR_TRY(qr_op_set_out(c, 0, c->in[0]->dtype, w.nsp + 2, dims));
    if (kind == QR__NN_POOL_MAX) QR_TRY(qr_op_set_out(c, 1, QR_DT_S64, w.nsp + 2, dims));
    return QR_OK;
}

static QrStatus qr__nn_maxpool_shape(QrOpCtx *c) { return qr__nn_pool_shape(c, QR__NN_POOL_MAX); }
static QrStatus qr__nn_avgpool_shape(QrOpCtx *c) { return qr__nn_pool_shape(c, QR__NN_POOL_AVG); }
static QrStatus qr__nn_lppool_shape(QrOpCtx *c) { return qr__nn_pool_shape(c, QR__NN_POOL_LP); }

/* Pools x (NC planes of in...) into y (NC planes of out...). Only taps inside x are
 * read; AVG divides by the taps inside x, or with count_pad by the taps inside the
 * padded extent [-pb, in+pe). MAX writes the flat input index of the maximum to idx
 * (row-major, or column-major over the spatial dims with storage_order 1). */
static void qr__nn_pool_f32(const float *x, int64_t NC, const QrNnWindow *w, QrNnPoolKind kind, bool count_pad,
                            float p, float *y, int64_t *idx, bool col_major) {
    const int n = w->nsp, L = n - 1;
    const int64_t Pin = qr__nn_prod(w->in, n), P = qr__nn_prod(w->out, n);
    int64_t cstride[QR__NN_MAXSP];   /* index weights for idx */
    int64_t s = 1;
    if (col_major) for (int d = 0; d < n; d++) { cstride[d] = s; s *= w->in[d]; }
    else for (int d = L; d >= 0; d--) { cstride[d] = s; s *= w->in[d]; }
    for (int64_t nc = 0; nc < NC; nc++) {
        const float *xp = x + nc * Pin;
        float *yp = y + nc * P;
        int64_t o[QR__NN_MAXSP] = {0};
        for (int64_t op = 0; op < P; op++) {
            int64_t st[QR__NN_MAXSP], lo[QR__NN_MAXSP], hi[QR__NN_MAXSP];
            double padcnt = 1;   /* double: kernel_shape may be huge */
            bool empty = false;
            for (int d = 0; d < n; d++) {
                int64_t t = o[d] * w->s[d] - w->pb[d], dd = w->d[d];
                st[d] = t;
                lo[d] = t >= 0 ? 0 : (-t + dd - 1) / dd;
                hi[d] = w->in[d] - 1 - t < 0 ? 0 : QR_MIN(w->k[d], (w->in[d] - 1 - t) / dd + 1);
                if (lo[d] >= hi[d]) empty = true;
                int64_t lim = w->in[d] + w->pe[d] - 1 - t;
                padcnt *= lim < 0 ? 0 : (double)QR_MIN(w->k[d], lim / dd + 1);
            }
            double acc = 0;
            float best = -INFINITY;
            int64_t besti = -1, cnt = 0;
            if (!empty) {
                int64_t j[QR__NN_MAXSP];
                for (int d = 0; d < n; d++) j[d] = lo[d];
                for (;;) {
                    int64_t base = 0, cbase = 0;
                    for (int d = 0; d < L; d++) {
                        int64_t i = st[d] + j[d] * w->d[d];
                        base = base * w->in[d] + i;
                        cbase += i * cstride[d];
                    }
                    const float *xr = xp + base * w->in[L];
                    const int64_t dL = w->d[L], tL = st[L];
                    if (kind == QR__NN_POOL_MAX) {
                        for (int64_t jj = lo[L]; jj < hi[L]; jj++) {
                            float v = xr[tL + jj * dL];
                            if (v > best || besti < 0) {
                                best = v;
                                besti = cbase + (tL + jj * dL) * cstride[L];
                            }
                        }
                    } else if (kind == QR__NN_POOL_AVG) {
                        for (int64_t jj = lo[L]; jj < hi[L]; jj++) acc += xr[tL + jj * dL];
                    } else {
                        for (int64_t jj = lo[L]; jj < hi[L]; jj++) acc += pow(fabs((double)xr[tL + jj * dL]), p);
                    }
                    cnt += hi[L] - lo[L];
                    int d = L - 1;
                    for (; d >= 0; d--) {
                        if (++j[d] < hi[d]) break;
                        j[d] = lo[d];
                    }
                    if (d < 0) break;
                }
            }
            if (kind == QR__NN_POOL_MAX) {
                yp[op] = empty ? 0.0f : best;
                if (idx) idx[nc * P + op] = besti < 0 ? -1 : nc * Pin + besti;
            } else if (kind == QR__NN_POOL_AVG) {
                double div = count_pad ? padcnt : (double)cnt;
                yp[op] = div > 0 ? (float)(acc / div) : 0.0f;
            } else {
                yp[op] = (float)pow(acc, 1.0 / p);
            }
            for (int d = L; d >= 0; d--) {
                if (++o[d] < w->out[d]) break;
                o[d] = 0;
            }
        }
    }
}

/* The global average of n floats in ONNX Runtime's order (MLAS global pooling): four
 * interleaved partial sums over the multiple-of-4 prefix, combined as (s0 + s2) + (s1 + s3),
 * then the tail in order, then one division by the element count. */
static float qr__nn_gavg_f32(const float *xp, int64_t S) {
    float s4[4] = { 0, 0, 0, 0 };
    int64_t k = 0;
    for (; k + 4 <= S; k += 4)
        for (int l = 0; l < 4; l++) s4[l] += xp[k + l];
    float acc = (s4[0] + s4[2]) + (s4[1] + s4[3]);
    for (; k < S; k++) acc += xp[k];
    return S ? acc / (float)S : 0.0f;
}

/* AveragePool without dilations in float and in the order ONNX Runtime's MlasPool sums
 * (so the float baseline matches it bit for bit); the divisor is ONNX's count (in-range
 * taps, or with count_include_pad the window clipped to input + pads), which is MLAS's too
 * except where ceil_mode runs a window past the end pads (MLAS then divides by the full
 * kernel size; the ONNX definition is kept). MLAS picks, as here:
 *   - a window covering the whole unpadded plane with strides 1: the global order;
 *   - 2-D, last stride <= 2, every kernel dim <= 32, padded width <= 2045: its vector
 *     kernel — per output row the columns summed over the window's rows first (first row,
 *     then + each next), then ((c[0] + c[1]) + ...) along the window's KW columns with
 *     zeros for padded columns;
 *   - otherwise the plain kernel: from +0, + each in-range tap, rows outer.
 * Planes nc of x (NC planes of w's input shape) into y. */
static void qr__nn_avgpool_mlas(const float *x, int64_t NC, const QrNnWindow *w, bool count_pad, float *y) {
    const int n = w->nsp, L = n - 1;
    const int64_t Pin = qr__nn_prod(w->in, n), P = qr__nn_prod(w->out, n);
    bool global = true, small = true;
    for (int d = 0; d < n; d++) {
        global = global && w->k[d] == w->in[d] && w->s[d] == 1 && w->pb[d] == 0 && w->pe[d] == 0;
        small = small && w->k[d] <= 32;
    }
    const bool vec = !global && n == 2 && w->s[1] <= 2 && small && w->pb[1] + w->pe[1] + w->in[1] <= 2045;
    float buf[2048 + 32];
    for (int64_t nc = 0; nc < NC; nc++) {
        const float *xp = x + nc * Pin;
        float *yp = y + nc * P;
        if (global) {
            yp[0] = qr__nn_gavg_f32(xp, Pin);
            for (int64_t op = 1; op < P; op++) yp[op] = yp[0];
            continue;
        }
        int64_t o[QR__NN_MAXSP] = {0};
        for (int64_t op = 0; op < P; op++) {
            int64_t lo[QR__NN_MAXSP], hi[QR__NN_MAXSP], st[QR__NN_MAXSP];
            double padcnt = 1, cnt = 1;
            for (int d = 0; d < n; d++) {
                int64_t t = o[d] * w->s[d] - w->pb[d];
                st[d] = t;
                lo[d] = QR_MAX(t, (int64_t)0);
                hi[d] = QR_MIN(t + w->k[d], w->in[d]);
                if (hi[d] < lo[d]) hi[d] = lo[d];
                cnt *= (double)(hi[d] - lo[d]);
                padcnt *= (double)(QR_MIN(t + w->k[d], w->in[d] + w->pe[d]) - QR_MAX(t, -w->pb[d]));
            }
            const double div = count_pad ? padcnt : cnt;
            float m;
            if (vec) {
                if (o[1] == 0) {   /* a new output row: its column sums, zeros for the padding */
                    const int64_t pl = w->pb[1], W = w->in[1];
                    for (int64_t i = 0; i < pl; i++) buf[i] = 0.0f;
                    for (int64_t c = 0; c < W; c++) {
                        float r = hi[0] > lo[0] ? xp[lo[0] * W + c] : 0.0f;
                        for (int64_t h = lo[0] + 1; h < hi[0]; h++) r = r + xp[h * W + c];
                        buf[pl + c] = r;
                    }
                    for (int64_t i = pl + W; i < pl + W + w->pe[1] + w->k[1]; i++) buf[i] = 0.0f;
                }
                const int64_t b0 = st[1] + w->pb[1];
                m = buf[b0];
                for (int64_t i = 1; i < w->k[1]; i++) m = m + buf[b0 + i];
            } else {
                m = 0.0f;
                int64_t j[QR__NN_MAXSP];
                bool empty = false;
                for (int d = 0; d < n; d++) {
                    j[d] = lo[d];
                    empty = empty || lo[d] >= hi[d];
                }
                while (!empty) {
                    int64_t base = 0;
                    for (int d = 0; d < L; d++) base = base * w->in[d] + j[d];
                    const float *xr = xp + base * w->in[L];
                    for (int64_t jj = lo[L]; jj < hi[L]; jj++) m = m + xr[jj];
                    int d = L - 1;
                    for (; d >= 0; d--) {
                        if (++j[d] < hi[d]) break;
                        j[d] = lo[d];
                    }
                    if (d < 0) break;
                }
            }
            yp[op] = div > 0 ? m / (float)div : 0.0f;
            for (int d = L; d >= 0; d--) {
                if (++o[d] < w->out[d]) break;
                o[d] = 0;
            }
        }
    }
}

/* 2-D max pooling of planes [t*planes, (t+1)*planes) (a pool task); rowbuf has one row
 * of rowstride floats per thread. */
typedef struct QrNnMaxPoolJob {
    const float *x;
    float *y;
    const QrNnWindow *w;
    int64_t Pin, P, NC, planes;
    float *rowbuf;
    int64_t rowstride;
} QrNnMaxPoolJob;

static void qr__nn_maxpool_task(void *ctx, int64_t t, int tid) {
    const QrNnMaxPoolJob *j = ctx;
    const QrNnWindow *w = j->w;
    for (int64_t i = t * j->planes; i < QR_MIN((t + 1) * j->planes, j->NC); i++)
        qr_kern.f32_maxpool2d(j->x + i * j->Pin, w->in[0], w->in[1], w->k[0], w->k[1], w->s[0], w->s[1], w->d[0],
                              w->d[1], w->pb[0], w->pb[1], j->y + i * j->P, w->out[0], w->out[1],
                              j->rowbuf + (size_t)tid * (size_t)j->rowstride);
}

static QrStatus qr__nn_pool_exec_f32(QrOpCtx *c, QrNnPoolKind kind) {
    const QrTensor *x = c->in[0];
    QrNnWindow w;
    QR_TRY(qr__nn_pool_check(c, kind, &w));
    bool count_pad = qr_attr_int(c->node, "count_include_pad", 0) != 0;
    float p = 2.0f;
    if (kind == QR__NN_POOL_LP) {
        int64_t pi = qr_attr_int(c->node, "p", 2);
        if (pi < 1) return qr_op_fail(c, QR_ERR_INVALID, "p = %lld", (long long)pi);
        p = (float)pi;
        const QrAttr *pa = qr_node_attr(c->node, "p");   /* LpPool-1 had a float p */
        if (pa && pa->type == QR_ATTR_FLOAT) p = pa->f;
    }
    QrTensor *ind = c->n_out > 1 ? c->out[1] : NULL;
    /* the common case, one kernel call per plane: ONNX Runtime's MlasPool, which it takes only
     * without Indices and without dilation; otherwise its loop (if (x > y) y = x from the lowest
     * float), the generic path below, whose NaN rule differs */
    if (kind == QR__NN_POOL_MAX && w.nsp == 2 && !ind && w.d[0] == 1 && w.d[1] == 1) {
        int threads = qr_pool_threads();
        QrNnMaxPoolJob j = { x->data, c->out[0]->data, &w, w.in[0] * w.in[1], w.out[0] * w.out[1],
                             x->dims[0] * x->dims[1], 0, NULL, qr__nn_rup(w.in[1], 16) };
        j.planes = QR_MAX(1, (1 << 16) / QR_MAX(1, j.Pin));
        j.rowbuf = qr_arena_array(c->scratch, (size_t)threads * (size_t)j.rowstride, sizeof(float));
        if (!j.rowbuf) return qr_op_fail(c, QR_ERR_NOMEM, "cannot allocate %lld row buffers", (long long)threads);
        qr_pool_for(qr__nn_cdiv(j.NC, j.planes), qr__nn_maxpool_task, &j);
        return QR_OK;
    }
    bool dil1 = true;
    for (int d = 0; d < w.nsp; d++) dil1 = dil1 && w.d[d] == 1;
    if (kind == QR__NN_POOL_AVG && dil1 && w.nsp <= 3) {
        qr__nn_avgpool_mlas(x->data, x->dims[0] * x->dims[1], &w, count_pad, c->out[0]->data);
        return QR_OK;
    }
    qr__nn_pool_f32(x->data, x->dims[0] * x->dims[1], &w, kind, count_pad, p, c->out[0]->data,
                    ind ? ind->data : NULL, qr_attr_int(c->node, "storage_order", 0) == 1);
    return QR_OK;
}

static QrStatus qr__nn_maxpool_f32(QrOpCtx *c) { return qr__nn_pool_exec_f32(c, QR__NN_POOL_MAX); }

/* qr__nn_pair of a Conv and the MaxPool node cc: float32, 2-D, no Indices output, no dilation —
 * the plane kernel's case (qr__nn_pool_exec_f32), whose taps are only those inside the rows. */
static QrStatus qr_nn_conv_pool_pair(QrOpCtx *cp, const QrNnSteps *fp, QrOpCtx *cc, void *buf, size_t *bytes, bool *taken) {
    *taken = false;
    QrNnWindow w;
    QR_TRY(qr__nn_pool_check(cc, QR__NN_POOL_MAX, &w));
    if (cc->in[0]->dtype != QR_DT_F32 || cc->in[0]->rank != 4 || w.nsp != 2 || (cc->n_out > 1 && cc->out[1]) ||
        w.d[0] != 1 || w.d[1] != 1)
        return QR_OK;
    return qr__nn_pair(cp, fp, cc, NULL, &w, true, buf, bytes, taken);
}
static QrStatus qr__nn_avgpool_f32(QrOpCtx *c) { return qr__nn_pool_exec_f32(c, QR__NN_POOL_AVG); }
static QrStatus qr__nn_lppool_f32(QrOpCtx *c) { return qr__nn_pool_exec_f32(c, QR__NN_POOL_LP); }
static QrStatus qr__nn_maxpool_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_maxpool_f32, 1u, 1u); }
static QrStatus qr__nn_avgpool_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_avgpool_f32, 1u, 1u); }
static QrStatus qr__nn_lppool_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_lppool_f32, 1u, 1u); }

/* ---- global pools: (N, C, spatial...) -> (N, C, 1, ...) -------------------------- */

static QrStatus qr__nn_gpool_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QR_TRY(qr_op_need_float(c, 0));
    if (x->rank < 2) return qr_op_fail(c, QR_ERR_SHAPE, "input must have rank >= 2 (N, C, ...), got %d", x->rank);
    int64_t dims[QR_MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = d < 2 ? x->dims[d] : 1;
    return qr_op_set_out(c, 0, x->dtype, x->rank, dims);
}

static QrStatus qr__nn_gpool_f32(QrOpCtx *c, QrNnPoolKind kind) {
    const QrTensor *x = c->in[0];
    const float *X = x->data;
    float *Y = c->out[0]->data;
    int64_t NC = x->dims[0] * x->dims[1], S = qr__nn_prod(x->dims + 2, x->rank - 2);
    double p = 2.0;
    if (kind == QR__NN_POOL_LP) {
        int64_t pi = qr_attr_int(c->node, "p", 2);
        if (pi < 1) return qr_op_fail(c, QR_ERR_INVALID, "p = %lld", (long long)pi);
        p = (double)pi;
        const QrAttr *pa = qr_node_attr(c->node, "p");
        if (pa && pa->type == QR_ATTR_FLOAT) p = pa->f;
    }
    for (int64_t i = 0; i < NC; i++) {
        const float *xp = X + i * S;
        if (kind == QR__NN_POOL_MAX) {
            float m = S ? xp[0] : 0.0f;
            for (int64_t k = 1; k < S; k++) if (xp[k] > m || m != m) m = xp[k];
            Y[i] = m;
        } else if (kind == QR__NN_POOL_AVG) {
            Y[i] = qr__nn_gavg_f32(xp, S);   /* ONNX Runtime's order, bit for bit */
        } else {
            double acc = 0;
            for (int64_t k = 0; k < S; k++) acc += pow(fabs((double)xp[k]), p);
            Y[i] = (float)pow(acc, 1.0 / p);
        }
    }
    return QR_OK;
}

static QrStatus qr__nn_gmaxpool_f32(QrOpCtx *c) { return qr__nn_gpool_f32(c, QR__NN_POOL_MAX); }
static QrStatus qr__nn_gavgpool_f32(QrOpCtx *c) { return qr__nn_gpool_f32(c, QR__NN_POOL_AVG); }
static QrStatus qr__nn_glppool_f32(QrOpCtx *c) { return qr__nn_gpool_f32(c, QR__NN_POOL_LP); }
static QrStatus qr__nn_gmaxpool_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_gmaxpool_f32, 1u, 1u); }
static QrStatus qr__nn_gavgpool_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_gavgpool_f32, 1u, 1u); }
static QrStatus qr__nn_glppool_exec(QrOpCtx *c) { return qr_op_nn_via_f32(c, qr__nn_glppool_f32, 1u, 1u); }

/* ==== Einsum ======================================================================= */

/* Labels: 'a'-'z' are 0-25, 'A'-'Z' 26-51, broadcast ("...") dims 52.. right-aligned. */
#define QR__NN_EIN_LABELS (52 + QR_MAX_RANK)

typedef struct QrNnEinsum {
    int n_in;
    int axes[QR__NN_MAXIO][QR_MAX_RANK];   /* label of every input axis */
    int64_t size[QR__NN_EIN_LABELS];        /* -1: label unused */
    int n_out, out[QR_MAX_RANK];            /* output labels */
    int n_sum, sum[QR__NN_EIN_LABELS];      /* contracted labels */
} QrNnEinsum;

static int qr__nn_ein_label(char ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
    return -1;
}

/* Parses one term (letters and at most one "...") of an input with `rank` axes, or of
 * the output when rank < 0; ell is the broadcast rank. Returns the axis count or -1. */
static int qr__nn_ein_term(const char *s, size_t len, int rank, int ell, int *labels, int *n_ell_out) {
    int letters = 0, n_ell = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || n_ell) return -1;
            n_ell = 1;
            i += 2;
        } else if (qr__nn_ein_label(s[i]) >= 0) {
            letters++;
        } else {
            return -1;
        }
    }
    int ne = rank >= 0 ? rank - letters : ell;
    if (ne < 0 || (!n_ell && rank >= 0 && ne != 0) || letters + (n_ell ? ne : 0) > QR_MAX_RANK) return -1;
    if (!n_ell) ne = 0;
    if (n_ell_out) *n_ell_out = ne;
    int k = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            for (int e = 0; e < ne; e++) labels[k++] = 52 + ell - ne + e;
            i += 2;
        } else {
            labels[k++] = qr__nn_ein_label(s[i]);
        }
    }
    return k;
}

static QrStatus qr__nn_einsum_parse(const QrOpCtx *c, QrNnEinsum *e) {
    const char *eq = qr_attr_str(c->node, "equation", NULL);
    if (!eq) return qr_op_fail(c, QR_ERR_INVALID, "equation attribute is required");
    char buf[512];
    size_t n = 0;
    for (const char *p = eq; *p; p++) {
        if (*p == ' ' || *p == '\t') continue;
        if (n + 1 >= sizeof buf) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "equation is too long");
        buf[n++] = *p;
    }
    buf[n] = 0;
    if (c->n_in > QR__NN_MAXIO) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "more than %d inputs", QR__NN_MAXIO);
    memset(e, 0, sizeof *e);
    e->n_in = c->n_in;
    for (int l = 0; l < QR__NN_EIN_LABELS; l++) e->size[l] = -1;
    const char *arrow = strstr(buf, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - buf) : n;
    /* broadcast rank: the largest "..." span over the inputs */
    int ell = 0, term = 0, counts[QR__NN_EIN_LABELS] = {0};
    size_t start = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i < lhs_len && buf[i] != ',') continue;
        if (term >= c->n_in)
            return qr_op_fail(c, QR_ERR_INVALID, "equation '%s' has more terms than the %d inputs", eq, c->n_in);
        const QrTensor *t = c->in[term];
        if (!t) return qr_op_fail(c, QR_ERR_INVALID, "input %d is missing", term);
        int tmp[QR_MAX_RANK], ne = 0;
        if (qr__nn_ein_term(buf + start, i - start, t->rank, QR_MAX_RANK, tmp, &ne) != t->rank)
            return qr_op_fail(c, QR_ERR_INVALID, "term %d of equation '%s' does not fit input rank %d", term, eq, t->rank);
        ell = QR_MAX(ell, ne);
        term++;
        start = i + 1;
    }
    if (term != c->n_in)
        return qr_op_fail(c, QR_ERR_INVALID, "equation '%s' has %d terms for %d inputs", eq, term, c->n_in);
    term = 0;
    start = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i < lhs_len && buf[i] != ',') continue;
        const QrTensor *t = c->in[term];
        qr__nn_ein_term(buf + start, i - start, t->rank, ell, e->axes[term], NULL);
        for (int a = 0; a < t->rank; a++) {
            int l = e->axes[term][a];
            int64_t v = t->dims[a];
            counts[l]++;
            /* only broadcast ("...") dims may stretch a size-1 dim */
            bool fits = e->size[l] < 0 || v == e->size[l] || (l >= 52 && (v == 1 || e->size[l] == 1));
            if (fits) {
                if (e->size[l] < 0 || e->size[l] == 1) e->size[l] = v;
            } else {
                return qr_op_fail(c, QR_ERR_SHAPE, "%s '%c' has sizes %lld and %lld in equation '%s'",
                                  l < 52 ? "label" : "broadcast dim of", l < 26 ? 'a' + l : l < 52 ? 'A' + l - 26 : '.',
                                  (long long)e->size[l], (long long)v, eq);
            }
        }
        term++;
        start = i + 1;
    }
    bool in_out[QR__NN_EIN_LABELS] = {0};
    if (arrow) {
        const char *rhs = arrow + 2;
        int k = qr__nn_ein_term(rhs, strlen(rhs), -1, ell, e->out, NULL);
        if (k < 0) return qr_op_fail(c, QR_ERR_INVALID, "cannot parse the output of equation '%s'", eq);
        e->n_out = k;
        for (int i = 0; i < k; i++) {
            int l = e->out[i];
            if (e->size[l] < 0 || in_out[l])
                return qr_op_fail(c, QR_ERR_INVALID, "output label %d of '%s' is repeated or not in any input", i, eq);
            in_out[l] = true;
        }
    } else {
        for (int l = 52; l < 52 + ell; l++) { e->out[e->n_out++] = l; in_out[l] = true; }
        for (int l = 26; l < 52; l++) if (counts[l] == 1) { e->out[e->n_out++] = l; in_out[l] = true; }
        for (int l = 0; l < 26; l++) if (counts[l] == 1) { e->out[e->n_out++] = l; in_out[l] = true; }
        if (e->n_out > QR_MAX_RANK) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output rank exceeds %d", QR_MAX_RANK);
    }
    for (int l = 0; l < QR__NN_EIN_LABELS; l++)
        if (e->size[l] >= 0 && !in_out[l]) e->sum[e->n_sum++] = l;
    return QR_OK;
}

static QrStatus qr__nn_einsum_shape(QrOpCtx *c) {
    if (c->n_in < 1) return qr_op_fail(c, QR_ERR_INVALID, "needs at least one input");
    for (int i = 0; i < c->n_in; i++) {
        const QrTensor *t = c->in[i];
        if (t && (t->dtype == QR_DT_STRING || t->dtype == QR_DT_BOOL))
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input %d has type %s", i, qr_dtype_name(t->dtype));
    }
    QR_TRY(qr__nn_same_dtype(c, 1, c->n_in - 1));
    QrNnEinsum e;
    QR_TRY(qr__nn_einsum_parse(c, &e));
    int64_t dims[QR_MAX_RANK];
    for (int i = 0; i < e.n_out; i++) dims[i] = e.size[e.out[i]];
    double pos = 1, sum = 1;   /* every output element sums over every combination of the other labels */
    for (int i = 0; i < e.n_out; i++) pos *= (double)dims[i];
    for (int k = 0; k < e.n_sum; k++) sum *= (double)e.size[e.sum[k]];
    char what[160];
    snprintf(what, sizeof what, "%.3g output elements x %.3g terms x %d inputs", pos, sum, e.n_in);
    QR_TRY(qr_op_check_work(c, pos * sum * (double)e.n_in, what));
    return qr_op_set_out(c, 0, c->in[0]->dtype, e.n_out, dims);
}

/* Element strides of every label in input i: repeated labels add up (diagonals),
 * size-1 dims stretched by broadcasting get 0. */
static void qr__nn_einsum_strides(const QrOpCtx *c, const QrNnEinsum *e, int i, int64_t *st) {
    const QrTensor *t = c->in[i];
    for (int l = 0; l < QR__NN_EIN_LABELS; l++) st[l] = 0;
    int64_t s = 1;
    for (int a = t->rank - 1; a >= 0; a--) {
        int l = e->axes[i][a];
        if (!(t->dims[a] == 1 && e->size[l] != 1)) st[l] += s;
        s *= t->dims[a];
    }
}

/* dst (contiguous, dims[0..n)) = src read with element strides st per axis. */
static void qr__nn_gather_f32(const float *src, int n, const int64_t *dims, const int64_t *st, float *dst) {
    int64_t total = qr__nn_prod(dims, n);
    if (total == 0) return;
    if (n == 0) { dst[0] = src[0]; return; }
    int64_t idx[QR__NN_EIN_LABELS] = {0}, off = 0, inner = dims[n - 1], sL = st[n - 1];
    for (int64_t o = 0; o < total; o += inner) {
        for (int64_t j = 0; j < inner; j++) dst[o + j] = src[off + j * sL];
        for (int d = n - 2; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < dims[d]) break;
            off -= st[d] * dims[d];
            idx[d] = 0;
        }
    }
}

/* Two float32 operands whose every label is in the output or in both inputs: gathers
 * A into (batch, m, k) and B into (batch, k, n), runs one GEMM per batch and gathers
 * the (batch, m, n) result into the output order. *done = false leaves it to the
 * generic loop. */
static QrStatus qr__nn_einsum_gemm(QrOpCtx *c, const QrNnEinsum *e, bool *done) {
    *done = false;
    if (e->n_in != 2 || c->in[0]->dtype != QR_DT_F32 || c->in[1]->dtype != QR_DT_F32) return QR_OK;
    bool used[2][QR__NN_EIN_LABELS] = {{0}}, in_out[QR__NN_EIN_LABELS] = {0};
    for (int i = 0; i < 2; i++)
        for (int a = 0; a < c->in[i]->rank; a++) used[i][e->axes[i][a]] = true;
    for (int k = 0; k < e->n_out; k++) in_out[e->out[k]] = true;
    int lb[QR__NN_EIN_LABELS], lm[QR__NN_EIN_LABELS], ln[QR__NN_EIN_LABELS], lk[QR__NN_EIN_LABELS];
    int nb = 0, nm = 0, nn = 0, nk = 0;
    for (int k = 0; k < e->n_out; k++) {
        int l = e->out[k];
        if (used[0][l] && used[1][l]) lb[nb++] = l;
        else if (used[0][l]) lm[nm++] = l;
        else if (used[1][l]) ln[nn++] = l;
    }
    for (int l = 0; l < QR__NN_EIN_LABELS; l++) {
        if (in_out[l] || (!used[0][l] && !used[1][l])) continue;
        if (!used[0][l] || !used[1][l]) return QR_OK;   /* summed within one input */
        lk[nk++] = l;
    }
    int64_t sa[QR__NN_EIN_LABELS], sb[QR__NN_EIN_LABELS];
    qr__nn_einsum_strides(c, e, 0, sa);
    qr__nn_einsum_strides(c, e, 1, sb);
    int64_t B = 1, M = 1, N = 1, K = 1;
    for (int i = 0; i < nb; i++) B *= e->size[lb[i]];
    for (int i = 0; i < nm; i++) M *= e->size[lm[i]];
    for (int i = 0; i < nn; i++) N *= e->size[ln[i]];
    for (int i = 0; i < nk; i++) K *= e->size[lk[i]];
    QrStatus st = QR_OK;
    float *a = qr__nn_malloc(c, B * M * K, sizeof(float), &st);
    float *b = a ? qr__nn_malloc(c, B * K * N, sizeof(float), &st) : NULL;
    float *z = b ? qr__nn_malloc(c, B * M * N, sizeof(float), &st) : NULL;
    if (z) {
        int64_t dims[QR__NN_EIN_LABELS], strd[QR__NN_EIN_LABELS];
        int n = 0;
        for (int i = 0; i < nb; i++, n++) { dims[n] = e->size[lb[i]]; strd[n] = sa[lb[i]]; }
        for (int i = 0; i < nm; i++, n++) { dims[n] = e->size[lm[i]]; strd[n] = sa[lm[i]]; }
        for (int i = 0; i < nk; i++, n++) { dims[n] = e->size[lk[i]]; strd[n] = sa[lk[i]]; }
        qr__nn_gather_f32(c->in[0]->data, n, dims, strd, a);
        n = 0;
        for (int i = 0; i < nb; i++, n++) { dims[n] = e->size[lb[i]]; strd[n] = sb[lb[i]]; }
        for (int i = 0; i < nk; i++, n++) { dims[n] = e->size[lk[i]]; strd[n] = sb[lk[i]]; }
        for (int i = 0; i < nn; i++, n++) { dims[n] = e->size[ln[i]]; strd[n] = sb[ln[i]]; }
        qr__nn_gather_f32(c->in[1]->data, n, dims, strd, b);
        if (M > 0 && N > 0)
            for (int64_t i = 0; i < B; i++)
                qr_kern.f32_gemm(M, N, K, a + i * M * K, K, b + i * K * N, N, z + i * M * N, N, false);
        /* element strides of every label in z (batch, m, n) */
        int64_t zs[QR__NN_EIN_LABELS], s = 1;
        for (int i = nn - 1; i >= 0; i--) { zs[ln[i]] = s; s *= e->size[ln[i]]; }
        for (int i = nm - 1; i >= 0; i--) { zs[lm[i]] = s; s *= e->size[lm[i]]; }
        for (int i = nb - 1; i >= 0; i--) { zs[lb[i]] = s; s *= e->size[lb[i]]; }
        for (int k = 0; k < e->n_out; k++) { dims[k] = e->size[e->out[k]]; strd[k] = zs[e->out[k]]; }
        qr__nn_gather_f32(z, e->n_out, dims, strd, c->out[0]->data);
        *done = true;
    }
    free(a);
    free(b);
    free(z);
    return st;
}

/* Sums the product of the inputs over every contracted label, in double. */
static QrStatus qr__nn_einsum_exec(QrOpCtx *c) {
    QrNnEinsum e;
    QR_TRY(qr__nn_einsum_parse(c, &e));
    bool done;
    QR_TRY(qr__nn_einsum_gemm(c, &e, &done));
    if (done) return QR_OK;
    QrTensor *y = c->out[0];
    int ni = e.n_in;
    double *data[QR__NN_MAXIO] = {0};
    int64_t st[QR__NN_MAXIO][QR__NN_EIN_LABELS];
    QrStatus status = QR_OK;
    for (int i = 0; i < ni; i++) {
        const QrTensor *t = c->in[i];
        data[i] = qr__nn_malloc(c, t->numel, sizeof(double), &status);
        if (!data[i]) goto done;
        for (int64_t k = 0; k < t->numel; k++) data[i][k] = qr_tensor_get_f64(t, k);
        qr__nn_einsum_strides(c, &e, i, st[i]);
    }
    int64_t nsum = 1, work;
    for (int k = 0; k < e.n_sum; k++)
        if (qr_mul_overflow_i64(nsum, e.size[e.sum[k]], &nsum)) nsum = INT64_MAX;
    if (nsum == INT64_MAX || qr_mul_overflow_i64(nsum, y->numel, &work)) {
        status = qr_op_fail(c, QR_ERR_UNSUPPORTED, "the contraction is too large");
        goto done;
    }
    int64_t oi[QR_MAX_RANK] = {0}, base[QR__NN_MAXIO] = {0};
    for (int64_t o = 0; o < y->numel; o++) {
        int64_t off[QR__NN_MAXIO], si[QR__NN_EIN_LABELS] = {0};
        memcpy(off, base, sizeof off);
        double acc = 0;
        for (int64_t s = 0; s < nsum; s++) {
            double prod = 1;
            for (int i = 0; i < ni; i++) prod *= data[i][off[i]];
            acc += prod;
            for (int k = e.n_sum - 1; k >= 0; k--) {
                int l = e.sum[k];
                for (int i = 0; i < ni; i++) off[i] += st[i][l];
                if (++si[k] < e.size[l]) break;
                for (int i = 0; i < ni; i++) off[i] -= st[i][l] * e.size[l];
                si[k] = 0;
            }
        }
        if (y->dtype == QR_DT_F32) ((float *)y->data)[o] = (float)acc;
        else qr_tensor_set_f64(y, o, acc);
        for (int k = e.n_out - 1; k >= 0; k--) {
            int l = e.out[k];
            for (int i = 0; i < ni; i++) base[i] += st[i][l];
            if (++oi[k] < e.size[l]) break;
            for (int i = 0; i < ni; i++) base[i] -= st[i][l] * e.size[l];
            oi[k] = 0;
        }
    }
done:
    for (int i = 0; i < ni; i++) free(data[i]);
    return status;
}

/* ==== table ======================================================================== */

static const QrOpDef qr_ops_nn[] = {
    { "", "Conv", 2, 3, 1, 1, qr__nn_conv_shape, qr__nn_conv_exec, 0, 0 },
    { "", "ConvTranspose", 2, 3, 1, 1, qr__nn_convt_shape, qr__nn_convt_exec, 0, 0 },
    { "", "Gemm", 2, 3, 1, 1, qr__nn_gemm_shape, qr__nn_gemm_exec, 0, 0 },
    { "", "MatMul", 2, 2, 1, 1, qr__nn_matmul_shape, qr__nn_matmul_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "MaxPool", 1, 1, 1, 2, qr__nn_maxpool_shape, qr__nn_maxpool_exec, 0, 0 },
    { "", "AveragePool", 1, 1, 1, 1, qr__nn_avgpool_shape, qr__nn_avgpool_exec, 0, 0 },
    { "", "LpPool", 1, 1, 1, 1, qr__nn_lppool_shape, qr__nn_lppool_exec, 0, 0 },
    { "", "GlobalMaxPool", 1, 1, 1, 1, qr__nn_gpool_shape, qr__nn_gmaxpool_exec, 0, 0 },
    { "", "GlobalAveragePool", 1, 1, 1, 1, qr__nn_gpool_shape, qr__nn_gavgpool_exec, 0, 0 },
    { "", "GlobalLpPool", 1, 1, 1, 1, qr__nn_gpool_shape, qr__nn_glppool_exec, 0, 0 },
    { "", "Einsum", 1, -1, 1, 1, qr__nn_einsum_shape, qr__nn_einsum_exec, 0, 0 },
};
