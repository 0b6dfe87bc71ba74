/* ops/shape — operators that move, copy or describe data without arithmetic:
 * Identity, Shape, Size, Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Split,
 * Slice, Gather(Elements), Expand, Tile, Pad, DepthToSpace/SpaceToDepth, NonZero,
 * Constant(OfShape), Range, Dropout (inference) and Resize/Upsample.
 * Data movers work on raw elements of qr_dtype_size bytes, so every dtype works;
 * only Range and Resize compute values (through the generic element accessors). */

/* ==== shared helpers ============================================================= */

/* Views built by these ops can have twice the tensor rank (Tile, DepthToSpace). */
#define QR__SH_MAXR (2 * QR_MAX_RANK)

/* Contiguous (row-major) element strides of a shape. */
static void qr__sh_strides(int rank, const int64_t *dims, int64_t *st) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) { st[d] = s; s *= dims[d]; }
}

static int64_t qr__sh_prod(const int64_t *dims, int from, int to) {
    int64_t p = 1;
    for (int d = from; d < to; d++) p *= dims[d];
    return p;
}

/* Copies one element of esz bytes (constant-size memcpy so compilers emit one move). */
static inline void qr__sh_elem(void *d, const void *s, size_t esz) {
    switch (esz) {
    case 1: memcpy(d, s, 1); break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    default: memcpy(d, s, esz); break;
    }
}

/* d[0..n) <- s[0], s[stride], ... (element stride may be 0 or negative). */
static void qr__sh_run(char *d, const char *s, size_t esz, int64_t n, int64_t stride) {
    if (stride == 1) { memcpy(d, s, (size_t)n * esz); return; }
    int64_t sb = stride * (int64_t)esz;
    switch (esz) {
    case 1: for (int64_t i = 0; i < n; i++) memcpy(d + i, s + i * sb, 1); break;
    case 2: for (int64_t i = 0; i < n; i++) memcpy(d + i * 2, s + i * sb, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(d + i * 4, s + i * sb, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(d + i * 8, s + i * sb, 8); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(d + i * (int64_t)esz, s + i * sb, esz); break;
    }
}

/* A strided gather after qr__sh_copy_strided merged its axes: r axes d[] with source strides
 * s[] (r >= 1), rows of d[r-1] elements; a task copies rows [o0, o1), or, with one axis,
 * elements [o0, o1) of it. */
typedef struct QrShCopyJob {
    char *dst;
    const char *src;
    size_t esz;
    int r;
    int64_t d[QR__SH_MAXR], s[QR__SH_MAXR];
    int64_t per_task, n_units;
} QrShCopyJob;

static void qr__sh_copy_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrShCopyJob *j = ctx;
    const int r = j->r;
    const int64_t o0 = t * j->per_task, o1 = QR_MIN(j->n_units, o0 + j->per_task), inner = j->d[r - 1], is = j->s[r - 1];
    const int64_t esz = (int64_t)j->esz;
    if (r == 1) {
        qr__sh_run(j->dst + o0 * esz, j->src + o0 * is * esz, j->esz, o1 - o0, is);
        return;
    }
    int64_t idx[QR__SH_MAXR] = {0}, off = 0, rem = o0;
    for (int k = r - 2; k >= 0; k--) {   /* row o0's source offset */
        idx[k] = rem % j->d[k];
        rem /= j->d[k];
        off += idx[k] * j->s[k];
    }
    char *dp = j->dst + o0 * inner * esz;
    for (int64_t o = o0; o < o1; o++) {
        qr__sh_run(dp, j->src + off * esz, j->esz, inner, is);
        dp += inner * esz;
        for (int k = r - 2; k >= 0; k--) {
            off += j->s[k];
            if (++idx[k] < j->d[k]) break;
            off -= j->s[k] * j->d[k];
            idx[k] = 0;
        }
    }
}

/* Strided gather: dst (contiguous, shape dims) <- src element soff + sum_d idx[d] * sst[d].
 * Axes of size 1 are dropped and axes that are contiguous in src are merged first, so
 * plain copies become one memcpy. rank <= QR__SH_MAXR. Copies of 256 KB or more are split
 * over the thread pool (Transpose, Slice, Reshape's copy: the bytes do not depend on it). */
static void qr__sh_copy_strided(void *dst, const void *src, size_t esz, int rank, const int64_t *dims,
                                const int64_t *sst, int64_t soff) {
    QrShCopyJob j = { .dst = dst, .src = (const char *)src + soff * (int64_t)esz, .esz = esz };
    int r = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) return;
        if (dims[i] == 1) continue;
        if (r > 0 && j.s[r - 1] == sst[i] * dims[i]) { j.d[r - 1] *= dims[i]; j.s[r - 1] = sst[i]; continue; }
        j.d[r] = dims[i];
        j.s[r] = sst[i];
        r++;
    }
    if (r == 0) { qr__sh_elem(dst, j.src, esz); return; }
    if (r == 1 && j.s[0] == 1) { qr_pool_memcpy(dst, j.src, (size_t)j.d[0] * esz); return; }   /* one contiguous run */
    j.r = r;
    const int64_t inner = j.d[r - 1], total = qr__sh_prod(j.d, 0, r), bytes = total * (int64_t)esz;
    const int64_t piece = (int64_t)65536 / (int64_t)esz;   /* elements per task */
    j.n_units = r == 1 ? inner : total / inner;
    j.per_task = r == 1 ? piece : QR_MAX(1, piece / inner);
    const int64_t tasks = bytes < ((int64_t)256 << 10) ? 1 : (j.n_units + j.per_task - 1) / j.per_task;
    if (tasks <= 1) {
        j.per_task = j.n_units;
        qr__sh_copy_task(&j, 0, 0);
    } else {
        qr_pool_for(tasks, qr__sh_copy_task, &j);
    }
}

/* Gather through per-axis maps: element (i_0..i_r-1) of y is x's element at offset
 * sum_d maps[d][i_d] when every map entry is >= 0, else *fill (one element). Map
 * entries are element offsets (index * stride) so the inner loop only adds. */
static void qr__sh_gather_maps(const QrTensor *x, QrTensor *y, int64_t *const *maps, const void *fill) {
    size_t esz = qr_dtype_size(y->dtype);
    int r = y->rank;
    if (y->numel == 0) return;
    if (r == 0) { qr__sh_elem(y->data, x->data, esz); return; }
    int64_t inner = y->dims[r - 1], outer = y->numel / inner;
    int64_t idx[QR_MAX_RANK] = {0};
    const char *xs = x->data;
    char *dp = y->data;
    const int64_t *last = maps[r - 1];
    for (int64_t o = 0; o < outer; o++) {
        int64_t base = 0;
        bool out = false;
        for (int d = 0; d < r - 1; d++) {
            int64_t m = maps[d][idx[d]];
            if (m < 0) out = true;
            base += m;
        }
        for (int64_t j = 0; j < inner; j++, dp += esz) {
            int64_t m = last[j];
            if (out || m < 0) qr__sh_elem(dp, fill, esz);
            else qr__sh_elem(dp, xs + (base + m) * (int64_t)esz, esz);
        }
        for (int d = r - 2; d >= 0; d--) {
            if (++idx[d] < y->dims[d]) break;
            idx[d] = 0;
        }
    }
}

/* Normalizes n axes against rank into out; fails on out-of-range or repeated axes. */
static QrStatus qr__sh_norm_axes(const QrOpCtx *c, const int64_t *axes, int n, int rank, int *out) {
    bool seen[QR__SH_MAXR] = {0};
    if (rank > QR__SH_MAXR) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "rank %d is too large", rank);
    for (int i = 0; i < n; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank)
            return qr_op_fail(c, QR_ERR_INVALID, "axis %lld is out of range for rank %d", (long long)axes[i], rank);
        if (seen[a]) return qr_op_fail(c, QR_ERR_INVALID, "axis %lld is repeated", (long long)axes[i]);
        seen[a] = true;
        out[i] = (int)a;
    }
    return QR_OK;
}

/* Reads a float tensor input's values (any numeric dtype) as doubles. */
static QrStatus qr__sh_floats(const QrOpCtx *c, int i, double *out, int max, int *count) {
    QR_TRY(qr_op_need_data(c, i));
    const QrTensor *t = c->in[i];
    if (t->numel > max)
        return qr_op_fail(c, QR_ERR_INVALID, "input %d has %lld values (at most %d expected)", i,
                          (long long)t->numel, max);
    for (int64_t k = 0; k < t->numel; k++) out[k] = qr_tensor_get_f64(t, k);
    *count = (int)t->numel;
    return QR_OK;
}

/* Integer values from input i with a count check (int32 or int64). */
static QrStatus qr__sh_ints_n(const QrOpCtx *c, int i, int64_t *out, int max, int *count, const char *what) {
    const QrTensor *t = qr_op_in(c, i);
    if (t && t->data && t->numel > max)
        return qr_op_fail(c, QR_ERR_INVALID, "input '%s' has %lld values (at most %d expected)", what,
                          (long long)t->numel, max);
    return qr_op_ints(c, i, out, max, count);
}

/* A scalar of dtype dt holding v, for fill values (caller's buffer of >= 8 bytes). */
static void qr__sh_scalar(QrDType dt, double v, void *buf) {
    QrTensor t = { .dtype = dt, .rank = 0, .numel = 1, .data = buf };
    memset(buf, 0, 8);
    qr_tensor_set_f64(&t, 0, v);
}

/* ==== Identity, Shape, Size ======================================================= */

static QrStatus qr__sh_copy_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    const int64_t one = 1, n = (int64_t)qr_tensor_nbytes(x);
    qr__sh_copy_strided(c->out[0]->data, x->data, 1, 1, &n, &one, 0);   /* one run, split over the pool when large */
    return QR_OK;
}

static QrStatus qr__sh_identity_shape(QrOpCtx *c) {
    return qr_op_set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
}

/* Shape(start, end) -> int64 [rank] (opset 15 adds start/end). */
static QrStatus qr__sh_shape_range(const QrOpCtx *c, int *s, int *e) {
    int r = c->in[0]->rank;
    int64_t start = qr_attr_int(c->node, "start", 0), end = qr_attr_int(c->node, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = QR_MAX(0, QR_MIN(start, r));
    end = QR_MAX(start, QR_MIN(end, r));
    *s = (int)start;
    *e = (int)end;
    return QR_OK;
}

static QrStatus qr__sh_shape_shape(QrOpCtx *c) {
    int s, e;
    QR_TRY(qr__sh_shape_range(c, &s, &e));
    int64_t n = e - s;
    return qr_op_set_out(c, 0, QR_DT_S64, 1, &n);
}

static QrStatus qr__sh_shape_exec(QrOpCtx *c) {
    int s, e;
    QR_TRY(qr__sh_shape_range(c, &s, &e));
    int64_t *y = c->out[0]->data;
    for (int i = s; i < e; i++) y[i - s] = c->in[0]->dims[i];
    return QR_OK;
}

static QrStatus qr__sh_size_shape(QrOpCtx *c) { return qr_op_set_out(c, 0, QR_DT_S64, 0, NULL); }

static QrStatus qr__sh_size_exec(QrOpCtx *c) {
    ((int64_t *)c->out[0]->data)[0] = c->in[0]->numel;
    return QR_OK;
}

/* ==== Reshape, Flatten, Squeeze, Unsqueeze (metadata only; exec copies) ========== */

/* Reshape(data, shape): 0 copies the input dim (unless allowzero=1), -1 is inferred. */
static QrStatus qr__sh_reshape_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t dims[QR_MAX_RANK];
    int n = 0;
    QR_TRY(qr_op_ints(c, 1, dims, QR_MAX_RANK, &n));
    int64_t allowzero = qr_attr_int(c->node, "allowzero", 0);
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < n; i++) {
        if (dims[i] == 0 && !allowzero) {
            if (i >= x->rank) return qr_op_fail(c, QR_ERR_SHAPE, "shape[%d] = 0 but the input has rank %d", i, x->rank);
            dims[i] = x->dims[i];
        }
        if (dims[i] == -1) {
            if (infer >= 0) return qr_op_fail(c, QR_ERR_SHAPE, "more than one -1 in the target shape");
            infer = i;
        } else if (dims[i] < 0) {
            return qr_op_fail(c, QR_ERR_SHAPE, "invalid target dim %lld", (long long)dims[i]);
        } else if (qr_mul_overflow_i64(known, dims[i], &known)) {
            return qr_op_fail(c, QR_ERR_SHAPE, "target shape overflows");
        }
    }
    if (infer >= 0) {
        if (known == 0 || x->numel % known != 0)
            return qr_op_fail(c, QR_ERR_SHAPE, "cannot reshape %lld elements with a -1 dim", (long long)x->numel);
        dims[infer] = x->numel / known;
        known *= dims[infer];
    }
    if (known != x->numel) {
        char a[128], b[128];
        return qr_op_fail(c, QR_ERR_SHAPE, "cannot reshape %s into %s",
                          qr_shape_str_brackets(a, sizeof a, x->rank, x->dims),
                          qr_shape_str_brackets(b, sizeof b, n, dims));
    }
    return qr_op_set_out(c, 0, x->dtype, n, dims);
}

/* Flatten(axis=1): [prod(dims[:axis]), prod(dims[axis:])], axis in [-r, r]. */
static QrStatus qr__sh_flatten_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int r = x->rank;
    int64_t axis = qr_attr_int(c->node, "axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r)
        return qr_op_fail(c, QR_ERR_INVALID, "axis %lld is out of range for rank %d",
                          (long long)qr_attr_int(c->node, "axis", 1), r);
    int64_t dims[2] = { qr__sh_prod(x->dims, 0, (int)axis), qr__sh_prod(x->dims, (int)axis, r) };
    return qr_op_set_out(c, 0, x->dtype, 2, dims);
}

/* Axes of Squeeze/Unsqueeze: attribute before opset 13, optional input 1 from 13 on.
 * *n = -1 when neither is given. */
static QrStatus qr__sh_axes_arg(const QrOpCtx *c, int64_t *axes, int *n) {
    if (qr_op_in(c, 1)) return qr__sh_ints_n(c, 1, axes, QR__SH_MAXR, n, "axes");
    const int64_t *a;
    int k = qr_attr_ints(c->node, "axes", &a);
    if (k > QR__SH_MAXR) return qr_op_fail(c, QR_ERR_INVALID, "%d axes is too many", k);
    for (int i = 0; i < k; i++) axes[i] = a[i];
    *n = k;
    return QR_OK;
}

static QrStatus qr__sh_squeeze_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t axes[QR__SH_MAXR];
    int n = -1, ax[QR__SH_MAXR];
    QR_TRY(qr__sh_axes_arg(c, axes, &n));
    bool drop[QR_MAX_RANK] = {0};
    if (n <= 0) {
        for (int d = 0; d < x->rank; d++) drop[d] = x->dims[d] == 1;
    } else {
        if (x->rank == 0) return qr_op_fail(c, QR_ERR_INVALID, "cannot squeeze a scalar");
        QR_TRY(qr__sh_norm_axes(c, axes, n, x->rank, ax));
        for (int i = 0; i < n; i++) {
            if (x->dims[ax[i]] != 1)
                return qr_op_fail(c, QR_ERR_SHAPE, "cannot squeeze axis %d of size %lld", ax[i],
                                  (long long)x->dims[ax[i]]);
            drop[ax[i]] = true;
        }
    }
    int64_t dims[QR_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) if (!drop[d]) dims[r++] = x->dims[d];
    return qr_op_set_out(c, 0, x->dtype, r, dims);
}

static QrStatus qr__sh_unsqueeze_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t axes[QR__SH_MAXR];
    int n = -1, ax[QR__SH_MAXR];
    QR_TRY(qr__sh_axes_arg(c, axes, &n));
    if (n <= 0) return qr_op_fail(c, QR_ERR_INVALID, "axes are required");
    int r = x->rank + n;
    if (r > QR_MAX_RANK) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output rank %d is over %d", r, QR_MAX_RANK);
    QR_TRY(qr__sh_norm_axes(c, axes, n, r, ax));
    bool ins[QR_MAX_RANK] = {0};
    for (int i = 0; i < n; i++) ins[ax[i]] = true;
    int64_t dims[QR_MAX_RANK];
    for (int d = 0, k = 0; d < r; d++) dims[d] = ins[d] ? 1 : x->dims[k++];
    return qr_op_set_out(c, 0, x->dtype, r, dims);
}

/* ==== Transpose ==================================================================== */

/* perm (default: reversed axes), validated as a permutation of [0, rank). */
static QrStatus qr__sh_perm(const QrOpCtx *c, int *perm) {
    int r = c->in[0]->rank;
    const int64_t *p;
    int n = qr_attr_ints(c->node, "perm", &p);
    if (n < 0) {
        for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
        return QR_OK;
    }
    if (n != r) return qr_op_fail(c, QR_ERR_INVALID, "perm has %d entries for an input of rank %d", n, r);
    bool seen[QR_MAX_RANK] = {0};
    for (int i = 0; i < r; i++) {
        int64_t v = p[i] < 0 ? p[i] + r : p[i];
        if (v < 0 || v >= r || seen[v])
            return qr_op_fail(c, QR_ERR_INVALID, "perm is not a permutation (entry %d = %lld)", i, (long long)p[i]);
        seen[v] = true;
        perm[i] = (int)v;
    }
    return QR_OK;
}

/* A Transpose whose permutation keeps the order of the input's axes longer than 1 (ViT's
 * [197, 1, 768] <-> [1, 197, 768]): its output has the input's bytes. c is bound and its
 * shape function has succeeded. */
static bool qr_op_transpose_is_copy(const QrOpCtx *c) {
    int perm[QR_MAX_RANK];
    if (qr__sh_perm(c, perm) != QR_OK) {
        qr_err_clear();
        return false;
    }
    for (int i = 0, last = -1; i < c->in[0]->rank; i++) {
        if (c->in[0]->dims[perm[i]] == 1) continue;
        if (perm[i] < last) return false;
        last = perm[i];
    }
    return true;
}

static QrStatus qr__sh_transpose_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int perm[QR_MAX_RANK];
    QR_TRY(qr__sh_perm(c, perm));
    int64_t dims[QR_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = x->dims[perm[i]];
    return qr_op_set_out(c, 0, x->dtype, x->rank, dims);
}

/* y[i_0..] = x[i_perm^-1...]: walk y contiguously, x with permuted strides. */
static QrStatus qr__sh_transpose_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    int perm[QR_MAX_RANK];
    QR_TRY(qr__sh_perm(c, perm));
    int64_t st[QR_MAX_RANK], sst[QR_MAX_RANK];
    qr__sh_strides(x->rank, x->dims, st);
    for (int i = 0; i < x->rank; i++) sst[i] = st[perm[i]];
    qr__sh_copy_strided(y->data, x->data, qr_dtype_size(x->dtype), y->rank, y->dims, sst, 0);
    return QR_OK;
}

/* ==== Concat, Split ================================================================ */

static QrStatus qr__sh_concat_axis(const QrOpCtx *c, int *axis) {
    for (int k = 0; k < c->n_in; k++)
        if (!c->in[k]) return qr_op_fail(c, QR_ERR_INVALID, "input %d is missing", k);
    if (c->n_in < 1) return qr_op_fail(c, QR_ERR_INVALID, "no inputs");
    int r = c->in[0]->rank;
    if (r == 0) return qr_op_fail(c, QR_ERR_INVALID, "cannot concatenate scalars");
    if (!qr_node_attr(c->node, "axis") && c->node->opset >= 4)
        return qr_op_fail(c, QR_ERR_INVALID, "attribute 'axis' is required");
    return qr_op_axis(c, qr_attr_int(c->node, "axis", 1), r, axis);
}

static QrStatus qr__sh_concat_shape(QrOpCtx *c) {
    int axis;
    QR_TRY(qr__sh_concat_axis(c, &axis));
    const QrTensor *x0 = c->in[0];
    int64_t dims[QR_MAX_RANK];
    for (int d = 0; d < x0->rank; d++) dims[d] = x0->dims[d];
    dims[axis] = 0;
    for (int k = 0; k < c->n_in; k++) {
        const QrTensor *t = c->in[k];
        if (t->dtype != x0->dtype)
            return qr_op_fail(c, QR_ERR_INVALID, "input %d is %s, input 0 is %s", k, qr_dtype_name(t->dtype),
                              qr_dtype_name(x0->dtype));
        bool ok = t->rank == x0->rank;
        for (int d = 0; ok && d < t->rank; d++) ok = d == axis || t->dims[d] == x0->dims[d];
        if (!ok) {
            char a[128], b[128];
            return qr_op_fail(c, QR_ERR_SHAPE, "input %d %s does not match input 0 %s outside axis %d", k,
                              qr_shape_str_brackets(a, sizeof a, t->rank, t->dims),
                              qr_shape_str_brackets(b, sizeof b, x0->rank, x0->dims), axis);
        }
        dims[axis] += t->dims[axis];
    }
    return qr_op_set_out(c, 0, x0->dtype, x0->rank, dims);
}

static QrStatus qr__sh_concat_exec(QrOpCtx *c) {
    int axis;
    QR_TRY(qr__sh_concat_axis(c, &axis));
    QrTensor *y = c->out[0];
    size_t esz = qr_dtype_size(y->dtype);
    int64_t outer = qr__sh_prod(y->dims, 0, axis), inner = qr__sh_prod(y->dims, axis + 1, y->rank);
    char *dp = y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int k = 0; k < c->n_in; k++) {
            size_t chunk = (size_t)(c->in[k]->dims[axis] * inner) * esz;
            memcpy(dp, (const char *)c->in[k]->data + (size_t)o * chunk, chunk);
            dp += chunk;
        }
    return QR_OK;
}

/* Split sizes along *axis for the n_out outputs: `split` attribute (< 13) or input 1
 * (>= 13), else num_outputs (18: the last part may be smaller), else equal parts. */
static QrStatus qr__sh_split_plan(QrOpCtx *c, int *axis, int64_t **sizes) {
    const QrTensor *x = c->in[0];
    int n = c->n_out;
    if (x->rank == 0) return qr_op_fail(c, QR_ERR_INVALID, "cannot split a scalar");
    QR_TRY(qr_op_axis(c, qr_attr_int(c->node, "axis", 0), x->rank, axis));
    int64_t dim = x->dims[*axis];
    int64_t *s = qr_arena_array(c->scratch, (size_t)n + 1, sizeof(int64_t));
    if (!s) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory");
    const int64_t *sa;
    int ns = qr_attr_ints(c->node, "split", &sa);
    const QrTensor *st = qr_op_in(c, 1);
    int64_t num = qr_attr_int(c->node, "num_outputs", 0);
    if (st && st->numel > 0) {
        QR_TRY(qr_op_need_data(c, 1));
        if (st->numel != n)
            return qr_op_fail(c, QR_ERR_INVALID, "split has %lld entries for %d outputs", (long long)st->numel, n);
        if (!qr_dtype_is_int(st->dtype)) return qr_op_fail(c, QR_ERR_INVALID, "split must be an integer tensor");
        for (int i = 0; i < n; i++) s[i] = qr_tensor_get_i64(st, i);
    } else if (ns >= 0) {
        if (ns != n) return qr_op_fail(c, QR_ERR_INVALID, "split has %d entries for %d outputs", ns, n);
        for (int i = 0; i < n; i++) s[i] = sa[i];
    } else {
        if (num && num != n)
            return qr_op_fail(c, QR_ERR_INVALID, "num_outputs is %lld but the node has %d outputs", (long long)num, n);
        int64_t chunk = (dim + n - 1) / n;
        if (dim % n != 0 && !num)
            return qr_op_fail(c, QR_ERR_SHAPE, "axis of size %lld cannot be split into %d equal parts",
                              (long long)dim, n);
        for (int i = 0; i < n; i++) s[i] = i < n - 1 ? chunk : dim - chunk * (n - 1);
    }
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < 0 || s[i] > dim)
            return qr_op_fail(c, QR_ERR_SHAPE, "split size %lld is invalid for an axis of size %lld",
                              (long long)s[i], (long long)dim);
        sum += s[i];
    }
    if (sum != dim)
        return qr_op_fail(c, QR_ERR_SHAPE, "split sizes sum to %lld, the axis has %lld", (long long)sum, (long long)dim);
    *sizes = s;
    return QR_OK;
}

static QrStatus qr__sh_split_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int axis;
    int64_t *s;
    QR_TRY(qr__sh_split_plan(c, &axis, &s));
    int64_t dims[QR_MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = x->dims[d];
    for (int i = 0; i < c->n_out; i++) {
        dims[axis] = s[i];
        QR_TRY(qr_op_set_out(c, i, x->dtype, x->rank, dims));
    }
    return QR_OK;
}

static QrStatus qr__sh_split_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int axis;
    int64_t *s;
    QR_TRY(qr__sh_split_plan(c, &axis, &s));
    size_t esz = qr_dtype_size(x->dtype);
    int64_t outer = qr__sh_prod(x->dims, 0, axis), inner = qr__sh_prod(x->dims, axis + 1, x->rank);
    const char *sp = x->data;
    for (int64_t o = 0; o < outer; o++)
        for (int i = 0; i < c->n_out; i++) {
            size_t chunk = (size_t)(s[i] * inner) * esz;
            if (c->out[i]) memcpy((char *)c->out[i]->data + (size_t)o * chunk, sp, chunk);
            sp += chunk;
        }
    return QR_OK;
}

/* ==== Slice ======================================================================== */

/* A strided view of input 0: output dims, source element strides and start offset. */
typedef struct QrShView {
    int64_t dims[QR_MAX_RANK];
    int64_t sst[QR_MAX_RANK];
    int64_t off;
} QrShView;

/* Slice: starts/ends/axes attributes (opset 1) or inputs starts, ends, axes, steps
 * (opset 10+). Starts/ends are clamped per the spec: [0, dim] for positive steps,
 * [0, dim-1] / [-1, dim-1] for negative ones; INT64_MAX/MIN mean "to the end". */
static QrStatus qr__sh_slice_plan(QrOpCtx *c, QrShView *v) {
    const QrTensor *x = c->in[0];
    int r = x->rank;
    int64_t starts[QR_MAX_RANK], ends[QR_MAX_RANK], axes[QR_MAX_RANK], steps[QR_MAX_RANK];
    int ns = 0, ne = 0, na = -1, nst = -1;
    if (c->node->opset < 10) {
        const int64_t *a;
        ns = qr_attr_ints(c->node, "starts", &a);
        if (ns < 0 || ns > QR_MAX_RANK) return qr_op_fail(c, QR_ERR_INVALID, "attribute 'starts' is missing or too long");
        for (int i = 0; i < ns; i++) starts[i] = a[i];
        ne = qr_attr_ints(c->node, "ends", &a);
        if (ne < 0 || ne > QR_MAX_RANK) return qr_op_fail(c, QR_ERR_INVALID, "attribute 'ends' is missing or too long");
        for (int i = 0; i < ne; i++) ends[i] = a[i];
        na = qr_attr_ints(c->node, "axes", &a);
        if (na > QR_MAX_RANK) return qr_op_fail(c, QR_ERR_INVALID, "attribute 'axes' is too long");
        for (int i = 0; i < na; i++) axes[i] = a[i];
    } else {
        if (!qr_op_in(c, 1) || !qr_op_in(c, 2)) return qr_op_fail(c, QR_ERR_INVALID, "inputs starts and ends are required");
        QR_TRY(qr__sh_ints_n(c, 1, starts, QR_MAX_RANK, &ns, "starts"));
        QR_TRY(qr__sh_ints_n(c, 2, ends, QR_MAX_RANK, &ne, "ends"));
        if (qr_op_in(c, 3)) QR_TRY(qr__sh_ints_n(c, 3, axes, QR_MAX_RANK, &na, "axes"));
        if (qr_op_in(c, 4)) QR_TRY(qr__sh_ints_n(c, 4, steps, QR_MAX_RANK, &nst, "steps"));
    }
    if (ne != ns) return qr_op_fail(c, QR_ERR_INVALID, "starts has %d entries, ends %d", ns, ne);
    if (na < 0) { na = ns; for (int i = 0; i < ns; i++) axes[i] = i; }
    if (nst < 0) { nst = ns; for (int i = 0; i < ns; i++) steps[i] = 1; }
    if (na != ns || nst != ns)
        return qr_op_fail(c, QR_ERR_INVALID, "starts, ends, axes and steps have %d, %d, %d and %d entries", ns, ne, na, nst);
    int ax[QR_MAX_RANK];
    QR_TRY(qr__sh_norm_axes(c, axes, na, r, ax));
    int64_t st[QR_MAX_RANK];
    qr__sh_strides(r, x->dims, st);
    for (int d = 0; d < r; d++) { v->dims[d] = x->dims[d]; v->sst[d] = st[d]; }
    v->off = 0;
    for (int i = 0; i < ns; i++) {
        int d = ax[i];
        int64_t dim = x->dims[d], s = starts[i], e = ends[i], step = steps[i], len;
        if (step == 0) return qr_op_fail(c, QR_ERR_INVALID, "step for axis %d is 0", d);
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (step > 0) {
            s = QR_MAX(0, QR_MIN(s, dim));
            e = QR_MAX(0, QR_MIN(e, dim));
            len = e > s ? (e - s - 1) / step + 1 : 0;
        } else {
            if (step == INT64_MIN) step = -INT64_MAX;
            s = QR_MAX(0, QR_MIN(s, dim - 1));
            e = QR_MAX(-1, QR_MIN(e, dim - 1));
            len = s > e ? (s - e - 1) / -step + 1 : 0;
        }
        if (dim == 0) len = 0;
        v->dims[d] = len;
        if (len > 0) {
            v->off += s * st[d];
            v->sst[d] = step * st[d];
        }
    }
    return QR_OK;
}

static QrStatus qr__sh_slice_shape(QrOpCtx *c) {
    QrShView v;
    QR_TRY(qr__sh_slice_plan(c, &v));
    return qr_op_set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, v.dims);
}

static QrStatus qr__sh_slice_exec(QrOpCtx *c) {
    QrShView v;
    QR_TRY(qr__sh_slice_plan(c, &v));
    const QrTensor *x = c->in[0];
    qr__sh_copy_strided(c->out[0]->data, x->data, qr_dtype_size(x->dtype), x->rank, v.dims, v.sst, v.off);
    return QR_OK;
}

/* ==== Gather, GatherElements ========================================================= */

static QrStatus qr__sh_gather_check(const QrOpCtx *c, int *axis) {
    const QrTensor *x = c->in[0], *ind = c->in[1];
    if (x->rank == 0) return qr_op_fail(c, QR_ERR_INVALID, "data must have rank >= 1");
    if (ind->dtype != QR_DT_S32 && ind->dtype != QR_DT_S64)
        return qr_op_fail(c, QR_ERR_INVALID, "indices must be int32 or int64, not %s", qr_dtype_name(ind->dtype));
    return qr_op_axis(c, qr_attr_int(c->node, "axis", 0), x->rank, axis);
}

/* Gather(data, indices, axis): data[:axis] + indices.shape + data[axis+1:]. */
static QrStatus qr__sh_gather_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0], *ind = c->in[1];
    int axis;
    QR_TRY(qr__sh_gather_check(c, &axis));
    int r = x->rank - 1 + ind->rank;
    if (r > QR_MAX_RANK) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output rank %d is over %d", r, QR_MAX_RANK);
    int64_t dims[QR_MAX_RANK];
    int k = 0;
    for (int d = 0; d < axis; d++) dims[k++] = x->dims[d];
    for (int d = 0; d < ind->rank; d++) dims[k++] = ind->dims[d];
    for (int d = axis + 1; d < x->rank; d++) dims[k++] = x->dims[d];
    return qr_op_set_out(c, 0, x->dtype, r, dims);
}

static QrStatus qr__sh_gather_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0], *ind = c->in[1];
    int axis;
    QR_TRY(qr__sh_gather_check(c, &axis));
    size_t esz = qr_dtype_size(x->dtype);
    int64_t dim = x->dims[axis], outer = qr__sh_prod(x->dims, 0, axis);
    int64_t inner = qr__sh_prod(x->dims, axis + 1, x->rank), n = ind->numel;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = qr_tensor_get_i64(ind, k);
        if (i < -dim || i >= dim)
            return qr_op_fail(c, QR_ERR_INVALID, "index %lld is out of range for an axis of size %lld",
                              (long long)i, (long long)dim);
    }
    size_t row = (size_t)inner * esz;
    const char *sp = x->data;
    char *dp = c->out[0]->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < n; k++, dp += row) {
            int64_t i = qr_tensor_get_i64(ind, k);
            if (i < 0) i += dim;
            memcpy(dp, sp + (size_t)((o * dim + i) * inner) * esz, row);
        }
    return QR_OK;
}

/* GatherElements(data, indices, axis): output has indices' shape; out[i] = data[i with
 * i[axis] = indices[i]]. */
static QrStatus qr__sh_gather_el_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0], *ind = c->in[1];
    int axis;
    QR_TRY(qr__sh_gather_check(c, &axis));
    if (ind->rank != x->rank)
        return qr_op_fail(c, QR_ERR_SHAPE, "indices rank %d differs from data rank %d", ind->rank, x->rank);
    for (int d = 0; d < x->rank; d++)
        if (d != axis && ind->dims[d] > x->dims[d])
            return qr_op_fail(c, QR_ERR_SHAPE, "indices dim %d (%lld) is larger than data's (%lld)", d,
                              (long long)ind->dims[d], (long long)x->dims[d]);
    return qr_op_set_out(c, 0, x->dtype, ind->rank, ind->dims);
}

static QrStatus qr__sh_gather_el_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0], *ind = c->in[1];
    QrTensor *y = c->out[0];
    int axis;
    QR_TRY(qr__sh_gather_check(c, &axis));
    size_t esz = qr_dtype_size(x->dtype);
    int r = x->rank;
    int64_t st[QR_MAX_RANK], idx[QR_MAX_RANK] = {0}, dim = x->dims[axis], base = 0;
    qr__sh_strides(r, x->dims, st);
    const char *sp = x->data;
    char *dp = y->data;
    for (int64_t k = 0; k < y->numel; k++, dp += esz) {
        int64_t i = qr_tensor_get_i64(ind, k);
        if (i < -dim || i >= dim)
            return qr_op_fail(c, QR_ERR_INVALID, "index %lld is out of range for an axis of size %lld",
                              (long long)i, (long long)dim);
        if (i < 0) i += dim;
        qr__sh_elem(dp, sp + (base + i * st[axis]) * (int64_t)esz, esz);
        for (int d = r - 1; d >= 0; d--) {
            if (d != axis) base += st[d];
            if (++idx[d] < y->dims[d]) break;
            if (d != axis) base -= st[d] * y->dims[d];
            idx[d] = 0;
        }
    }
    return QR_OK;
}

/* ==== Expand, Tile ================================================================= */

/* Expand(input, shape): bidirectional numpy broadcast of input's shape and `shape`. */
static QrStatus qr__sh_expand_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t s[QR_MAX_RANK], dims[QR_MAX_RANK];
    int n = 0;
    QR_TRY(qr__sh_ints_n(c, 1, s, QR_MAX_RANK, &n, "shape"));
    int r = QR_MAX(n, x->rank);
    for (int d = 0; d < r; d++) {
        int id = d - (r - x->rank), sd = d - (r - n);
        int64_t a = id >= 0 ? x->dims[id] : 1, b = sd >= 0 ? s[sd] : 1;
        if (b < 0) return qr_op_fail(c, QR_ERR_SHAPE, "shape has a negative entry %lld", (long long)b);
        if (a == b || b == 1) dims[d] = a;
        else if (a == 1) dims[d] = b;
        else {
            char t1[128], t2[128];
            return qr_op_fail(c, QR_ERR_SHAPE, "input %s cannot be expanded to %s",
                              qr_shape_str_brackets(t1, sizeof t1, x->rank, x->dims),
                              qr_shape_str_brackets(t2, sizeof t2, n, s));
        }
    }
    return qr_op_set_out(c, 0, x->dtype, r, dims);
}

static QrStatus qr__sh_expand_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    int64_t sst[QR_MAX_RANK];
    qr_broadcast_strides(x, y->rank, y->dims, sst);
    qr__sh_copy_strided(y->data, x->data, qr_dtype_size(x->dtype), y->rank, y->dims, sst, 0);
    return QR_OK;
}

static QrStatus qr__sh_tile_repeats(const QrOpCtx *c, int64_t *rep) {
    const QrTensor *x = c->in[0];
    int n = 0;
    QR_TRY(qr__sh_ints_n(c, 1, rep, QR_MAX_RANK, &n, "repeats"));
    if (n != x->rank) return qr_op_fail(c, QR_ERR_INVALID, "repeats has %d entries for rank %d", n, x->rank);
    for (int d = 0; d < n; d++)
        if (rep[d] < 0) return qr_op_fail(c, QR_ERR_INVALID, "repeats[%d] = %lld is negative", d, (long long)rep[d]);
    return QR_OK;
}

static QrStatus qr__sh_tile_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t rep[QR_MAX_RANK], dims[QR_MAX_RANK];
    QR_TRY(qr__sh_tile_repeats(c, rep));
    for (int d = 0; d < x->rank; d++)
        if (qr_mul_overflow_i64(x->dims[d], rep[d], &dims[d])) return qr_op_fail(c, QR_ERR_SHAPE, "output shape overflows");
    return qr_op_set_out(c, 0, x->dtype, x->rank, dims);
}

/* The output seen as [rep_0, dim_0, rep_1, dim_1, ...] reads x with stride 0 on the
 * repeat axes. */
static QrStatus qr__sh_tile_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t rep[QR_MAX_RANK], st[QR_MAX_RANK], vd[QR__SH_MAXR], vs[QR__SH_MAXR];
    QR_TRY(qr__sh_tile_repeats(c, rep));
    qr__sh_strides(x->rank, x->dims, st);
    for (int d = 0; d < x->rank; d++) {
        vd[2 * d] = rep[d]; vs[2 * d] = 0;
        vd[2 * d + 1] = x->dims[d]; vs[2 * d + 1] = st[d];
    }
    qr__sh_copy_strided(c->out[0]->data, x->data, qr_dtype_size(x->dtype), 2 * x->rank, vd, vs, 0);
    return QR_OK;
}

/* ==== Constant, ConstantOfShape, Range ============================================= */

/* Constant: exactly one of value, value_float(s), value_int(s); strings and sparse
 * tensors are not supported. */
static QrStatus qr__sh_constant_shape(QrOpCtx *c) {
    const QrNode *n = c->node;
    const QrAttr *a;
    if ((a = qr_node_attr(n, "value")) && a->type == QR_ATTR_TENSOR && a->t)
        return qr_op_set_out(c, 0, a->t->dtype, a->t->rank, a->t->dims);
    if ((a = qr_node_attr(n, "value_float"))) return qr_op_set_out(c, 0, QR_DT_F32, 0, NULL);
    if ((a = qr_node_attr(n, "value_int"))) return qr_op_set_out(c, 0, QR_DT_S64, 0, NULL);
    if ((a = qr_node_attr(n, "value_floats"))) { int64_t d = a->n; return qr_op_set_out(c, 0, QR_DT_F32, 1, &d); }
    if ((a = qr_node_attr(n, "value_ints"))) { int64_t d = a->n; return qr_op_set_out(c, 0, QR_DT_S64, 1, &d); }
    if (qr_node_attr(n, "value_string") || qr_node_attr(n, "value_strings"))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "string constants are not supported");
    if (qr_node_attr(n, "sparse_value"))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "sparse constants are not supported");
    return qr_op_fail(c, QR_ERR_UNSUPPORTED, "no supported value attribute (value, value_float(s), value_int(s))");
}

static QrStatus qr__sh_constant_exec(QrOpCtx *c) {
    const QrNode *n = c->node;
    QrTensor *y = c->out[0];
    const QrAttr *a;
    if ((a = qr_node_attr(n, "value")) && a->type == QR_ATTR_TENSOR && a->t) {
        if (qr_tensor_nbytes(y) && !a->t->data) return qr_op_fail(c, QR_ERR_INVALID, "value tensor has no data");
        if (qr_tensor_nbytes(y)) memcpy(y->data, a->t->data, qr_tensor_nbytes(y));
    }
    else if ((a = qr_node_attr(n, "value_float"))) ((float *)y->data)[0] = a->f;
    else if ((a = qr_node_attr(n, "value_int"))) ((int64_t *)y->data)[0] = a->i;
    else if ((a = qr_node_attr(n, "value_floats"))) memcpy(y->data, a->floats, (size_t)a->n * sizeof(float));
    else if ((a = qr_node_attr(n, "value_ints"))) memcpy(y->data, a->ints, (size_t)a->n * sizeof(int64_t));
    return QR_OK;
}

/* ConstantOfShape(shape) filled with the one-element `value` tensor (default float 0). */
static QrStatus qr__sh_cos_value(const QrOpCtx *c, const QrTensor **v) {
    const QrAttr *a = qr_node_attr(c->node, "value");
    *v = NULL;
    if (!a) return QR_OK;
    if (a->type != QR_ATTR_TENSOR || !a->t) return qr_op_fail(c, QR_ERR_INVALID, "attribute 'value' must be a tensor");
    if (a->t->numel != 1 || !a->t->data)
        return qr_op_fail(c, QR_ERR_INVALID, "attribute 'value' must hold one element, not %lld", (long long)a->t->numel);
    *v = a->t;
    return QR_OK;
}

static QrStatus qr__sh_cos_shape(QrOpCtx *c) {
    const QrTensor *v;
    QR_TRY(qr__sh_cos_value(c, &v));
    int64_t dims[QR_MAX_RANK];
    int n = 0;
    const QrTensor *s = c->in[0];
    if (s->data && s->numel > QR_MAX_RANK)
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "output rank %lld is over %d", (long long)s->numel, QR_MAX_RANK);
    QR_TRY(qr_op_ints(c, 0, dims, QR_MAX_RANK, &n));
    for (int d = 0; d < n; d++)
        if (dims[d] < 0) return qr_op_fail(c, QR_ERR_SHAPE, "shape[%d] = %lld is negative", d, (long long)dims[d]);
    return qr_op_set_out(c, 0, v ? v->dtype : QR_DT_F32, n, dims);
}

static QrStatus qr__sh_cos_exec(QrOpCtx *c) {
    const QrTensor *v;
    QR_TRY(qr__sh_cos_value(c, &v));
    QrTensor *y = c->out[0];
    size_t esz = qr_dtype_size(y->dtype);
    if (!v) return QR_OK;   /* float zeros: outputs are allocated zeroed */
    char *dp = y->data;
    for (int64_t i = 0; i < y->numel; i++, dp += esz) qr__sh_elem(dp, v->data, esz);
    return QR_OK;
}

/* Range(start, limit, delta) -> max(ceil((limit - start) / delta), 0) elements. Integer
 * types are computed exactly in int64, float types in double. */
static QrStatus qr__sh_range_count(const QrOpCtx *c, int64_t *n) {
    for (int i = 0; i < 3; i++) {
        QR_TRY(qr_op_need_data(c, i));
        if (c->in[i]->numel != 1) return qr_op_fail(c, QR_ERR_INVALID, "input %d must be a scalar", i);
        if (c->in[i]->dtype != c->in[0]->dtype) return qr_op_fail(c, QR_ERR_INVALID, "inputs have different types");
    }
    if (qr_dtype_is_float(c->in[0]->dtype)) {
        double s = qr_tensor_get_f64(c->in[0], 0), l = qr_tensor_get_f64(c->in[1], 0), d = qr_tensor_get_f64(c->in[2], 0);
        if (d == 0) return qr_op_fail(c, QR_ERR_INVALID, "delta is 0");
        double k = ceil((l - s) / d);
        if (!(k == k) || k > 1e15) return qr_op_fail(c, QR_ERR_INVALID, "range has an invalid or huge length");
        *n = k > 0 ? (int64_t)k : 0;
        return QR_OK;
    }
    int64_t s = qr_tensor_get_i64(c->in[0], 0), l = qr_tensor_get_i64(c->in[1], 0), d = qr_tensor_get_i64(c->in[2], 0);
    if (d == 0) return qr_op_fail(c, QR_ERR_INVALID, "delta is 0");
    int64_t diff;
    if (__builtin_sub_overflow(l, s, &diff)) return qr_op_fail(c, QR_ERR_INVALID, "limit - start overflows");
    int64_t q = d == -1 ? (diff == INT64_MIN ? INT64_MAX : -diff) : diff / d, rem = d == -1 ? 0 : diff % d;
    if (rem != 0 && (rem > 0) == (d > 0)) q++;
    *n = q > 0 ? q : 0;
    return QR_OK;
}

static QrStatus qr__sh_range_shape(QrOpCtx *c) {
    int64_t n;
    QR_TRY(qr__sh_range_count(c, &n));
    return qr_op_set_out(c, 0, c->in[0]->dtype, 1, &n);
}

static QrStatus qr__sh_range_exec(QrOpCtx *c) {
    QrTensor *y = c->out[0];
    if (qr_dtype_is_float(y->dtype)) {
        double s = qr_tensor_get_f64(c->in[0], 0), d = qr_tensor_get_f64(c->in[2], 0);
        for (int64_t i = 0; i < y->numel; i++) qr_tensor_set_f64(y, i, s + (double)i * d);
    } else {
        uint64_t s = (uint64_t)qr_tensor_get_i64(c->in[0], 0), d = (uint64_t)qr_tensor_get_i64(c->in[2], 0);
        for (int64_t i = 0; i < y->numel; i++) qr_tensor_set_i64(y, i, (int64_t)(s + (uint64_t)i * d));
    }
    return QR_OK;
}

/* ==== Dropout (inference) ========================================================== */

/* Identity at inference; the optional mask is all true (bool from opset 10, T before).
 * Training mode with a non-zero ratio is random, hence unsupported. */
static QrStatus qr__sh_dropout_check(const QrOpCtx *c) {
    const QrTensor *tm = qr_op_in(c, 2);
    if (!tm || !tm->data || tm->numel < 1 || qr_tensor_get_f64(tm, 0) == 0) return QR_OK;
    double ratio = qr_attr_float(c->node, "ratio", 0.5f);
    const QrTensor *rt = qr_op_in(c, 1);
    if (rt && rt->data && rt->numel >= 1) ratio = qr_tensor_get_f64(rt, 0);
    if (ratio != 0) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "training_mode with ratio %g is random", ratio);
    return QR_OK;
}

static QrStatus qr__sh_dropout_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QR_TRY(qr__sh_dropout_check(c));
    QR_TRY(qr_op_set_out(c, 0, x->dtype, x->rank, x->dims));
    return qr_op_set_out(c, 1, c->node->opset >= 10 ? QR_DT_BOOL : x->dtype, x->rank, x->dims);
}

static QrStatus qr__sh_dropout_exec(QrOpCtx *c) {
    QR_TRY(qr__sh_dropout_check(c));
    if (c->out[0]) memcpy(c->out[0]->data, c->in[0]->data, qr_tensor_nbytes(c->in[0]));
    QrTensor *m = c->n_out > 1 ? c->out[1] : NULL;
    for (int64_t i = 0; m && i < m->numel; i++) qr_tensor_set_f64(m, i, 1);
    return QR_OK;
}

/* ==== Pad ========================================================================== */

enum { QR__SH_PAD_CONSTANT, QR__SH_PAD_REFLECT, QR__SH_PAD_EDGE, QR__SH_PAD_WRAP };

typedef struct QrShPad {
    int mode;
    int64_t pb[QR_MAX_RANK], pe[QR_MAX_RANK];   /* begin/end pads per axis; negative crops */
    unsigned char fill[16];                       /* constant value as one element of the dtype */
} QrShPad;

/* Pads from attribute `paddings` (opset 1) / `pads` (2..10) or inputs pads, constant_value
 * and axes (11+, axes from 18). fill is only resolved when the value is known. */
static QrStatus qr__sh_pad_plan(QrOpCtx *c, QrShPad *p) {
    const QrTensor *x = c->in[0];
    const QrNode *n = c->node;
    int r = x->rank;
    const char *mode = qr_attr_str(n, "mode", "constant");
    if (!strcmp(mode, "constant")) p->mode = QR__SH_PAD_CONSTANT;
    else if (!strcmp(mode, "reflect")) p->mode = QR__SH_PAD_REFLECT;
    else if (!strcmp(mode, "edge")) p->mode = QR__SH_PAD_EDGE;
    else if (!strcmp(mode, "wrap")) p->mode = QR__SH_PAD_WRAP;
    else return qr_op_fail(c, QR_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    int64_t pads[2 * QR_MAX_RANK], axes[QR_MAX_RANK];
    int np = 0, na = -1;
    double value = 0;
    bool have_fill = false;
    if (n->opset < 11) {
        const int64_t *a;
        np = qr_attr_ints(n, n->opset < 2 ? "paddings" : "pads", &a);
        if (np < 0) return qr_op_fail(c, QR_ERR_INVALID, "attribute 'pads' is required");
        if (np > 2 * QR_MAX_RANK) return qr_op_fail(c, QR_ERR_INVALID, "pads has %d entries for rank %d", np, r);
        for (int i = 0; i < np; i++) pads[i] = a[i];
        value = qr_attr_float(n, "value", 0.0f);
    } else {
        if (!qr_op_in(c, 1)) return qr_op_fail(c, QR_ERR_INVALID, "input 'pads' is required");
        QR_TRY(qr__sh_ints_n(c, 1, pads, 2 * QR_MAX_RANK, &np, "pads"));
        const QrTensor *cv = qr_op_in(c, 2);
        if (cv && cv->numel > 0 && cv->data) {
            if (cv->dtype == x->dtype) { qr__sh_elem(p->fill, cv->data, qr_dtype_size(x->dtype)); have_fill = true; }
            else value = qr_tensor_get_f64(cv, 0);
        }
        if (qr_op_in(c, 3)) QR_TRY(qr__sh_ints_n(c, 3, axes, QR_MAX_RANK, &na, "axes"));
    }
    if (!have_fill) qr__sh_scalar(x->dtype, value, p->fill);
    int ax[QR_MAX_RANK];
    if (na < 0) { na = r; for (int i = 0; i < r; i++) ax[i] = i; }
    else QR_TRY(qr__sh_norm_axes(c, axes, na, r, ax));
    if (np != 2 * na) return qr_op_fail(c, QR_ERR_INVALID, "pads has %d entries for %d axes", np, na);
    for (int d = 0; d < r; d++) p->pb[d] = p->pe[d] = 0;
    for (int i = 0; i < na; i++) { p->pb[ax[i]] = pads[i]; p->pe[ax[i]] = pads[na + i]; }
    for (int d = 0; d < r; d++) {
        const int64_t lim = (int64_t)1 << 40;   /* bounds first: -INT64_MIN overflows */
        bool huge = p->pb[d] > lim || p->pe[d] > lim || p->pb[d] < -lim || p->pe[d] < -lim;
        int64_t keep = huge ? -1 : x->dims[d] - QR_MAX(0, -p->pb[d]) - QR_MAX(0, -p->pe[d]);
        if (keep < 0)
            return qr_op_fail(c, QR_ERR_SHAPE, "pads %lld, %lld are invalid for axis %d of size %lld",
                              (long long)p->pb[d], (long long)p->pe[d], d, (long long)x->dims[d]);
        if (keep == 0 && p->mode != QR__SH_PAD_CONSTANT && (p->pb[d] > 0 || p->pe[d] > 0))
            return qr_op_fail(c, QR_ERR_SHAPE, "cannot pad an empty axis %d in mode '%s'", d, mode);
    }
    return QR_OK;
}

static QrStatus qr__sh_pad_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrShPad p;
    QR_TRY(qr__sh_pad_plan(c, &p));
    int64_t dims[QR_MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = x->dims[d] + p.pb[d] + p.pe[d];
    return qr_op_set_out(c, 0, x->dtype, x->rank, dims);
}

static inline int64_t qr__sh_mod(int64_t a, int64_t m) { int64_t r = a % m; return r < 0 ? r + m : r; }

/* Per-axis maps from output index to input offset (-1: constant): crop first (negative
 * pads), then pad the kept range [lo, lo + keep) in the chosen mode. */
static QrStatus qr__sh_pad_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    QrShPad p;
    QR_TRY(qr__sh_pad_plan(c, &p));
    int64_t st[QR_MAX_RANK], *maps[QR_MAX_RANK];
    qr__sh_strides(x->rank, x->dims, st);
    for (int d = 0; d < x->rank; d++) {
        maps[d] = qr_arena_array(c->scratch, (size_t)y->dims[d] + 1, sizeof(int64_t));
        if (!maps[d]) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory");
        int64_t lo = QR_MAX(0, -p.pb[d]), keep = x->dims[d] - lo - QR_MAX(0, -p.pe[d]), before = QR_MAX(0, p.pb[d]);
        for (int64_t o = 0; o < y->dims[d]; o++) {
            int64_t j = o - before, m;
            if (j >= 0 && j < keep) m = j;
            else if (p.mode == QR__SH_PAD_CONSTANT) { maps[d][o] = -1; continue; }
            else if (p.mode == QR__SH_PAD_EDGE) m = j < 0 ? 0 : keep - 1;
            else if (p.mode == QR__SH_PAD_WRAP) m = qr__sh_mod(j, keep);
            else if (keep == 1) m = 0;
            else { m = qr__sh_mod(j, 2 * (keep - 1)); if (m >= keep) m = 2 * (keep - 1) - m; }
            maps[d][o] = (lo + m) * st[d];
        }
    }
    qr__sh_gather_maps(x, y, maps, p.fill);
    return QR_OK;
}

/* ==== DepthToSpace, SpaceToDepth =================================================== */

static QrStatus qr__sh_d2s_check(const QrOpCtx *c, bool to_space, int64_t *b) {
    const QrTensor *x = c->in[0];
    if (x->rank != 4) return qr_op_fail(c, QR_ERR_INVALID, "input must be 4-D (NCHW), not rank %d", x->rank);
    *b = qr_attr_int(c->node, "blocksize", 0);
    if (*b <= 0 || *b > ((int64_t)1 << 20))
        return qr_op_fail(c, QR_ERR_INVALID, "blocksize %lld is invalid", (long long)*b);
    if (to_space) {
        if (x->dims[1] % (*b * *b))
            return qr_op_fail(c, QR_ERR_SHAPE, "channels %lld are not divisible by blocksize^2 = %lld",
                              (long long)x->dims[1], (long long)(*b * *b));
        const char *mode = qr_attr_str(c->node, "mode", "DCR");
        if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    } else if (x->dims[2] % *b || x->dims[3] % *b) {
        return qr_op_fail(c, QR_ERR_SHAPE, "height %lld and width %lld must be divisible by blocksize %lld",
                          (long long)x->dims[2], (long long)x->dims[3], (long long)*b);
    }
    return QR_OK;
}

static QrStatus qr__sh_d2s_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t b;
    QR_TRY(qr__sh_d2s_check(c, true, &b));
    int64_t dims[4] = { x->dims[0], x->dims[1] / (b * b), x->dims[2] * b, x->dims[3] * b };
    return qr_op_set_out(c, 0, x->dtype, 4, dims);
}

/* Output viewed as [N, C', H, b, W, b]; input channel = (i*b + j)*C' + c (DCR) or
 * c*b*b + i*b + j (CRD). */
static QrStatus qr__sh_d2s_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t b;
    QR_TRY(qr__sh_d2s_check(c, true, &b));
    bool crd = !strcmp(qr_attr_str(c->node, "mode", "DCR"), "CRD");
    int64_t st[4], cp = x->dims[1] / (b * b);
    qr__sh_strides(4, x->dims, st);
    int64_t vd[6] = { x->dims[0], cp, x->dims[2], b, x->dims[3], b };
    int64_t vs[6] = { st[0], crd ? b * b * st[1] : st[1], st[2], crd ? b * st[1] : b * cp * st[1], st[3],
                      crd ? st[1] : cp * st[1] };
    qr__sh_copy_strided(c->out[0]->data, x->data, qr_dtype_size(x->dtype), 6, vd, vs, 0);
    return QR_OK;
}

static QrStatus qr__sh_s2d_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t b;
    QR_TRY(qr__sh_d2s_check(c, false, &b));
    int64_t dims[4] = { x->dims[0], x->dims[1] * b * b, x->dims[2] / b, x->dims[3] / b };
    return qr_op_set_out(c, 0, x->dtype, 4, dims);
}

/* Output viewed as [N, b, b, C, H/b, W/b]: channel (i*b + j)*C + c reads x[n, c, h*b+i, w*b+j]. */
static QrStatus qr__sh_s2d_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    int64_t b;
    QR_TRY(qr__sh_d2s_check(c, false, &b));
    int64_t st[4];
    qr__sh_strides(4, x->dims, st);
    int64_t vd[6] = { x->dims[0], b, b, x->dims[1], x->dims[2] / b, x->dims[3] / b };
    int64_t vs[6] = { st[0], st[2], st[3], st[1], b * st[2], b * st[3] };
    qr__sh_copy_strided(c->out[0]->data, x->data, qr_dtype_size(x->dtype), 6, vd, vs, 0);
    return QR_OK;
}

/* ==== NonZero ====================================================================== */

static bool qr__sh_nonzero_at(const QrTensor *t, int64_t i) {
    if (qr_dtype_is_float(t->dtype)) return qr_tensor_get_f64(t, i) != 0;   /* NaN counts, -0 does not */
    return qr_tensor_get_i64(t, i) != 0;
}

/* NonZero(x) -> int64 [rank, count]; the count depends on x's values, so the shape is
 * only known when x is (a scalar is treated as rank 1, like numpy). */
static QrStatus qr__sh_nonzero_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QR_TRY(qr_op_need_data(c, 0));
    int64_t n = 0;
    for (int64_t i = 0; i < x->numel; i++) n += qr__sh_nonzero_at(x, i);
    int64_t dims[2] = { x->rank ? x->rank : 1, n };
    return qr_op_set_out(c, 0, QR_DT_S64, 2, dims);
}

static QrStatus qr__sh_nonzero_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    int r = x->rank, k = 0;
    int64_t n = y->dims[1], idx[QR_MAX_RANK] = {0};
    int64_t *out = y->data;
    for (int64_t i = 0; i < x->numel; i++) {
        if (qr__sh_nonzero_at(x, i)) {
            if (k >= n) return qr_op_fail(c, QR_ERR_INVALID, "input changed between shape and exec");
            if (r == 0) out[k] = 0;
            for (int d = 0; d < r; d++) out[d * n + k] = idx[d];
            k++;
        }
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < x->dims[d]) break;
            idx[d] = 0;
        }
    }
    return QR_OK;
}

/* ==== Resize, Upsample ============================================================= */

enum { QR__SH_RS_NEAREST, QR__SH_RS_LINEAR, QR__SH_RS_CUBIC };
enum { QR__SH_CT_HALF_PIXEL, QR__SH_CT_HALF_PIXEL_SYM, QR__SH_CT_PYTORCH, QR__SH_CT_ALIGN, QR__SH_CT_ASYM,
       QR__SH_CT_TF_CROP };
enum { QR__SH_NR_PREFER_FLOOR, QR__SH_NR_PREFER_CEIL, QR__SH_NR_FLOOR, QR__SH_NR_CEIL,
       QR__SH_NR_LEGACY };   /* legacy (Upsample, Resize-10): floor when upsampling, ceil when downsampling */

typedef struct QrShResize {
    int mode, ctm, nearest;
    bool exclude_outside, antialias;
    double cubic_a, extrap;
    int64_t out[QR_MAX_RANK];
    double scale[QR_MAX_RANK];      /* per axis, 1 on axes not resized */
    double out_f[QR_MAX_RANK];      /* the reference's "output width": scale * in, or the size given */
    double roi0[QR_MAX_RANK], roi1[QR_MAX_RANK];
} QrShResize;

static QrStatus qr__sh_str_enum(const QrOpCtx *c, const char *attr, const char *dflt, const char *const *names,
                                int n, int *out) {
    const char *s = qr_attr_str(c->node, attr, dflt);
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) { *out = i; return QR_OK; }
    return qr_op_fail(c, QR_ERR_UNSUPPORTED, "%s '%s' is not supported", attr, s);
}

/* Everything Resize/Upsample needs: modes, output size, per-axis scale and roi.
 * Upsample-7 takes scales as an attribute, Upsample-9 and Resize-10 as input 1;
 * Resize-11+ has inputs roi, scales, sizes (empty or omitted = absent), and from 18
 * axes, antialias and keep_aspect_ratio_policy. The roi is read only with_roi (it
 * matters only for tf_crop_and_resize and is not needed for the output shape). */
static QrStatus qr__sh_resize_plan(QrOpCtx *c, QrShResize *p, bool with_roi) {
    static const char *const modes[] = { "nearest", "linear", "cubic" };
    static const char *const ctms[] = { "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                        "asymmetric", "tf_crop_and_resize" };
    static const char *const nearests[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil" };
    const QrTensor *x = c->in[0];
    const QrNode *n = c->node;
    int r = x->rank;
    bool legacy = !strcmp(n->op_type, "Upsample") || n->opset < 11;
    memset(p, 0, sizeof *p);
    if (legacy && !strcmp(qr_attr_str(n, "mode", "nearest"), "bilinear")) p->mode = QR__SH_RS_LINEAR;
    else QR_TRY(qr__sh_str_enum(c, "mode", "nearest", modes, legacy ? 2 : 3, &p->mode));
    if (legacy) {
        p->ctm = QR__SH_CT_ASYM;
        p->nearest = QR__SH_NR_LEGACY;
    } else {
        QR_TRY(qr__sh_str_enum(c, "coordinate_transformation_mode", "half_pixel", ctms, 6, &p->ctm));
        QR_TRY(qr__sh_str_enum(c, "nearest_mode", "round_prefer_floor", nearests, 4, &p->nearest));
        p->cubic_a = qr_attr_float(n, "cubic_coeff_a", -0.75f);
        p->exclude_outside = qr_attr_int(n, "exclude_outside", 0) != 0;
        p->extrap = qr_attr_float(n, "extrapolation_value", 0.0f);
        p->antialias = qr_attr_int(n, "antialias", 0) != 0;
        if (p->antialias && p->mode == QR__SH_RS_NEAREST)
            return qr_op_fail(c, QR_ERR_INVALID, "antialias is not defined for mode 'nearest'");
    }
    /* axes */
    int ax[QR_MAX_RANK], na = r;
    const int64_t *axa;
    int nax = qr_attr_ints(n, "axes", &axa);
    if (nax >= 0 && !legacy) {
        if (nax > r) return qr_op_fail(c, QR_ERR_INVALID, "axes has %d entries for rank %d", nax, r);
        QR_TRY(qr__sh_norm_axes(c, axa, nax, r, ax));
        na = nax;
    } else {
        for (int d = 0; d < r; d++) ax[d] = d;
    }
    for (int d = 0; d < r; d++) {
        p->scale[d] = 1;
        p->out[d] = x->dims[d];
        p->out_f[d] = (double)x->dims[d];
        p->roi0[d] = 0;
        p->roi1[d] = 1;
    }
    /* scales or sizes */
    double sc[QR_MAX_RANK];
    int64_t sz[QR_MAX_RANK];
    int nsc = -1, nsz = -1;
    int si = legacy ? 1 : 2;
    if (legacy && !strcmp(n->op_type, "Upsample") && n->opset < 9) {
        const float *f;
        nsc = qr_attr_floats(n, "scales", &f);
        if (nsc < 0) return qr_op_fail(c, QR_ERR_INVALID, "attribute 'scales' is required");
        if (nsc > QR_MAX_RANK) return qr_op_fail(c, QR_ERR_INVALID, "scales has %d entries for rank %d", nsc, r);
        for (int i = 0; i < nsc; i++) sc[i] = f[i];
    } else {
        const QrTensor *ts = qr_op_in(c, si), *tz = legacy ? NULL : qr_op_in(c, 3);
        if (ts && ts->numel > 0) QR_TRY(qr__sh_floats(c, si, sc, QR_MAX_RANK, &nsc));
        if (tz && tz->numel > 0) QR_TRY(qr__sh_ints_n(c, 3, sz, QR_MAX_RANK, &nsz, "sizes"));
    }
    if ((nsc >= 0) == (nsz >= 0)) return qr_op_fail(c, QR_ERR_INVALID, "exactly one of scales and sizes must be given");
    if (nsc >= 0) {
        if (nsc != na) return qr_op_fail(c, QR_ERR_INVALID, "scales has %d entries for %d axes", nsc, na);
        for (int i = 0; i < na; i++) {
            int d = ax[i];
            if (!(sc[i] > 0) || sc[i] > 1e6)
                return qr_op_fail(c, QR_ERR_INVALID, "scale %g for axis %d is invalid", sc[i], d);
            p->scale[d] = sc[i];
            p->out_f[d] = sc[i] * (double)x->dims[d];
            p->out[d] = (int64_t)floor(p->out_f[d]);
        }
    } else {
        if (nsz != na) return qr_op_fail(c, QR_ERR_INVALID, "sizes has %d entries for %d axes", nsz, na);
        const char *pol = legacy ? "stretch" : qr_attr_str(n, "keep_aspect_ratio_policy", "stretch");
        bool stretch = !strcmp(pol, "stretch"), not_larger = !strcmp(pol, "not_larger");
        if (!stretch && !not_larger && strcmp(pol, "not_smaller"))
            return qr_op_fail(c, QR_ERR_UNSUPPORTED, "keep_aspect_ratio_policy '%s' is not supported", pol);
        double common = not_larger ? INFINITY : 0;
        for (int i = 0; i < na; i++) {
            int d = ax[i];
            if (sz[i] < 0) return qr_op_fail(c, QR_ERR_INVALID, "size %lld for axis %d is negative", (long long)sz[i], d);
            if (x->dims[d] == 0) return qr_op_fail(c, QR_ERR_SHAPE, "cannot resize axis %d of size 0", d);
            double s = (double)sz[i] / (double)x->dims[d];
            p->scale[d] = s;
            p->out[d] = sz[i];
            p->out_f[d] = (double)sz[i];
            common = not_larger ? QR_MIN(common, s) : QR_MAX(common, s);
        }
        if (!stretch)
            for (int i = 0; i < na; i++) {
                int d = ax[i];
                p->scale[d] = common;
                p->out_f[d] = common * (double)x->dims[d];
                p->out[d] = (int64_t)(p->out_f[d] + 0.5);
            }
        for (int i = 0; i < na; i++)
            if (p->out[ax[i]] > 0 && !(p->scale[ax[i]] > 0))
                return qr_op_fail(c, QR_ERR_INVALID, "scale for axis %d is 0", ax[i]);
    }
    if (p->ctm == QR__SH_CT_TF_CROP && with_roi) {
        double roi[2 * QR_MAX_RANK];
        int nr = 0;
        if (!qr_op_in(c, 1) || c->in[1]->numel == 0)
            return qr_op_fail(c, QR_ERR_INVALID, "tf_crop_and_resize needs the roi input");
        QR_TRY(qr__sh_floats(c, 1, roi, 2 * QR_MAX_RANK, &nr));
        if (nr != 2 * na) return qr_op_fail(c, QR_ERR_INVALID, "roi has %d entries for %d axes", nr, na);
        for (int i = 0; i < na; i++) { p->roi0[ax[i]] = roi[i]; p->roi1[ax[i]] = roi[na + i]; }
    }
    return QR_OK;
}

static QrStatus qr__sh_resize_shape(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrShResize p;
    QR_TRY(qr__sh_resize_plan(c, &p, false));
    return qr_op_set_out(c, 0, x->dtype, x->rank, p.out);
}

/* Input coordinate of output index xo along axis d; *ext when tf_crop_and_resize
 * maps it outside the input (the output is then extrapolation_value). */
static double qr__sh_resize_coord(const QrShResize *p, int d, int64_t in, int64_t xo, bool *ext) {
    double x = (double)xo, s = p->scale[d], lin = (double)in, lo = p->out_f[d], v;
    *ext = false;
    switch (p->ctm) {
    case QR__SH_CT_HALF_PIXEL: return (x + 0.5) / s - 0.5;
    case QR__SH_CT_HALF_PIXEL_SYM: {
        double adj = (double)p->out[d] / lo, center = lin / 2, off = center * (1 - adj);
        return off + (x + 0.5) / s - 0.5;
    }
    case QR__SH_CT_PYTORCH: return lo == 1 ? -0.5 : (x + 0.5) / s - 0.5;
    case QR__SH_CT_ALIGN: return lo == 1 ? 0 : x * (lin - 1) / (lo - 1);
    case QR__SH_CT_ASYM: return x / s;
    default:
        v = lo == 1 ? (p->roi1[d] - p->roi0[d]) * (lin - 1) / 2 : x * (p->roi1[d] - p->roi0[d]) * (lin - 1) / (lo - 1);
        v += p->roi0[d] * (lin - 1);
        if (v < 0 || v > lin - 1) *ext = true;
        return v;
    }
}

/* Taps per output index along axis d: 1 (nearest), 2 (linear), 4 (cubic) or the
 * widened antialias footprint when downsampling. */
static int qr__sh_resize_ntaps(const QrShResize *p, int d) {
    if (p->mode == QR__SH_RS_NEAREST) return 1;
    if (!p->antialias) return p->mode == QR__SH_RS_LINEAR ? 2 : 4;
    double s = QR_MIN(p->scale[d], 1.0);
    int64_t start = (int64_t)floor((p->mode == QR__SH_RS_LINEAR ? -1.0 : -2.0) / s) + 1;
    return (int)QR_MIN(2 - 2 * start, 1 << 20);
}

static double qr__sh_cubic(double x, double a) {
    x = fabs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0;
}

/* Fills nt taps (clamped input index, weight) and the extrapolation flag for every
 * output index along axis d. Taps sit at base + k for k in [1 - nt/2, nt/2], where
 * base = floor(x) (x - 1 when x is integral, so the ratio is in (0, 1]). */
static void qr__sh_resize_taps(const QrShResize *p, int d, int64_t in, int nt, int64_t *idx, double *w, uint8_t *ext) {
    double s = p->scale[d], sa = QR_MIN(s, 1.0), lim = (double)in + nt + 2;
    for (int64_t o = 0; o < p->out[d]; o++) {
        bool e;
        double xo = qr__sh_resize_coord(p, d, in, o, &e);
        int64_t *ti = idx + o * nt;
        double *tw = w + o * nt;
        ext[o] = e;
        if (!(xo == xo)) xo = 0;
        xo = QR_MAX(-lim, QR_MIN(xo, lim));
        double fl = floor(xo), ratio = xo - fl;
        int64_t base = (int64_t)fl;
        if (ratio == 0) { base -= 1; ratio = 1; }
        if (p->mode == QR__SH_RS_NEAREST) {
            int64_t i;
            switch (p->nearest) {
            case QR__SH_NR_LEGACY: i = (int64_t)(s < 1 ? ceil(xo) : floor(xo)); break;
            case QR__SH_NR_PREFER_FLOOR: i = ratio == 1 || ratio > 0.5 ? base + 1 : base; break;
            case QR__SH_NR_PREFER_CEIL: i = ratio == 1 || ratio >= 0.5 ? base + 1 : base; break;
            case QR__SH_NR_FLOOR: i = ratio == 1 ? base + 1 : base; break;
            default: i = base + 1; break;
            }
            ti[0] = QR_MAX(0, QR_MIN(i, in - 1));
            tw[0] = 1;
            continue;
        }
        int start = 1 - nt / 2;
        double sum = 0;
        for (int k = 0; k < nt; k++) {
            double dist = (double)(start + k) - ratio, c;
            if (!p->antialias) {
                if (p->mode == QR__SH_RS_LINEAR) c = k == 0 ? 1 - ratio : ratio;
                else c = qr__sh_cubic(dist, p->cubic_a);
            } else if (p->mode == QR__SH_RS_LINEAR) {
                c = QR_MAX(0.0, 1 - fabs(dist * sa));
            } else {
                c = qr__sh_cubic(dist * sa, p->cubic_a);
            }
            int64_t i = base + start + k;
            if (p->exclude_outside && (i < 0 || i >= in)) c = 0;
            ti[k] = QR_MAX(0, QR_MIN(i, in - 1));
            tw[k] = c;
            sum += c;
        }
        if ((p->antialias || p->exclude_outside) && sum != 0)
            for (int k = 0; k < nt; k++) tw[k] /= sum;
    }
}

/* One separable pass along an axis: src [outer, lin, inner] -> dst [outer, lout, inner]. */
static void qr__sh_resize_pass(const double *src, double *dst, int64_t outer, int64_t lin, int64_t lout, int64_t inner,
                               int nt, const int64_t *idx, const double *w, const uint8_t *ext, double extrap) {
    for (int64_t o = 0; o < outer; o++) {
        const double *s = src + o * lin * inner;
        double *dr = dst + o * lout * inner;
        for (int64_t y = 0; y < lout; y++, dr += inner) {
            if (ext[y]) { for (int64_t k = 0; k < inner; k++) dr[k] = extrap; continue; }
            const int64_t *ti = idx + y * nt;
            const double *tw = w + y * nt;
            const double *s0 = s + ti[0] * inner;
            for (int64_t k = 0; k < inner; k++) dr[k] = tw[0] * s0[k];
            for (int t = 1; t < nt; t++) {
                const double *st = s + ti[t] * inner;
                double wt = tw[t];
                for (int64_t k = 0; k < inner; k++) dr[k] += wt * st[k];
            }
        }
    }
}

/* Nearest: a pure gather through per-axis index maps (exact for every dtype).
 * Linear/cubic: separable passes in double from the last axis to the first — the
 * order in which the ONNX reference applies its 1-D interpolations, which matters
 * for tf_crop_and_resize extrapolation — then one conversion to the output dtype. */
static QrStatus qr__sh_resize_exec(QrOpCtx *c) {
    const QrTensor *x = c->in[0];
    QrTensor *y = c->out[0];
    QrShResize p;
    QR_TRY(qr__sh_resize_plan(c, &p, true));
    int r = x->rank;
    if (y->numel == 0) return QR_OK;
    if (x->numel == 0) return qr_op_fail(c, QR_ERR_SHAPE, "cannot resize an empty tensor to a non-empty one");
    int64_t *tidx[QR_MAX_RANK];
    double *tw[QR_MAX_RANK];
    uint8_t *text[QR_MAX_RANK];
    int nt[QR_MAX_RANK];
    for (int d = 0; d < r; d++) {
        nt[d] = qr__sh_resize_ntaps(&p, d);
        size_t m = (size_t)p.out[d] * (size_t)nt[d];
        if (m > ((size_t)1 << 28)) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "resize filter on axis %d is too large", d);
        tidx[d] = qr_arena_array(c->scratch, m + 1, sizeof(int64_t));
        tw[d] = qr_arena_array(c->scratch, m + 1, sizeof(double));
        text[d] = qr_arena_array(c->scratch, (size_t)p.out[d] + 1, 1);
        if (!tidx[d] || !tw[d] || !text[d]) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory");
        qr__sh_resize_taps(&p, d, x->dims[d], nt[d], tidx[d], tw[d], text[d]);
    }
    if (p.mode == QR__SH_RS_NEAREST) {
        int64_t st[QR_MAX_RANK];
        unsigned char fill[16];
        qr__sh_strides(r, x->dims, st);
        qr__sh_scalar(x->dtype, p.extrap, fill);
        for (int d = 0; d < r; d++)
            for (int64_t o = 0; o < p.out[d]; o++) tidx[d][o] = text[d][o] ? -1 : tidx[d][o] * st[d];
        qr__sh_gather_maps(x, y, tidx, fill);
        return QR_OK;
    }
    /* Largest intermediate: axes are resized last to first. */
    int64_t cur[QR_MAX_RANK], maxn = x->numel;
    for (int d = 0; d < r; d++) cur[d] = x->dims[d];
    for (int d = r - 1; d >= 0; d--) {
        cur[d] = p.out[d];
        maxn = QR_MAX(maxn, qr__sh_prod(cur, 0, r));
    }
    double *a = qr_arena_array(c->scratch, (size_t)maxn, sizeof(double));
    double *b = qr_arena_array(c->scratch, (size_t)maxn, sizeof(double));
    if (!a || !b) return qr_op_fail(c, QR_ERR_NOMEM, "out of memory");
    if (x->dtype == QR_DT_F32) { const float *px = x->data; for (int64_t i = 0; i < x->numel; i++) a[i] = px[i]; }
    else for (int64_t i = 0; i < x->numel; i++) a[i] = qr_tensor_get_f64(x, i);
    for (int d = 0; d < r; d++) cur[d] = x->dims[d];
    for (int d = r - 1; d >= 0; d--) {
        bool same = p.out[d] == x->dims[d];
        for (int64_t o = 0; same && o < p.out[d]; o++) {
            double on = 0, off = 0;
            if (text[d][o]) same = false;
            for (int k = 0; k < nt[d]; k++) {
                if (tidx[d][o * nt[d] + k] == o) on += tw[d][o * nt[d] + k];
                else off += fabs(tw[d][o * nt[d] + k]);
            }
            same = same && on == 1 && off == 0;
        }
        if (same) continue;
        int64_t outer = qr__sh_prod(cur, 0, d), inner = qr__sh_prod(cur, d + 1, r);
        qr__sh_resize_pass(a, b, outer, x->dims[d], p.out[d], inner, nt[d], tidx[d], tw[d], text[d], p.extrap);
        cur[d] = p.out[d];
        double *t = a; a = b; b = t;
    }
    if (y->dtype == QR_DT_F32) { float *py = y->data; for (int64_t i = 0; i < y->numel; i++) py[i] = (float)a[i]; }
    else for (int64_t i = 0; i < y->numel; i++) qr_tensor_set_f64(y, i, a[i]);
    return QR_OK;
}

/* ==== table ========================================================================= */

static const QrOpDef qr_ops_shape[] = {
    { "", "Identity", 1, 1, 1, 1, qr__sh_identity_shape, qr__sh_copy_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "Shape", 1, 1, 1, 1, qr__sh_shape_shape, qr__sh_shape_exec, QR_OPF_SHAPE_ONLY, 0 },
    { "", "Size", 1, 1, 1, 1, qr__sh_size_shape, qr__sh_size_exec, QR_OPF_SHAPE_ONLY, 0 },
    { "", "Reshape", 2, 2, 1, 1, qr__sh_reshape_shape, qr__sh_copy_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "Constant", 0, 0, 1, 1, qr__sh_constant_shape, qr__sh_constant_exec, 0, 0 },
    { "", "ConstantOfShape", 1, 1, 1, 1, qr__sh_cos_shape, qr__sh_cos_exec, 0, 0 },
    { "", "Range", 3, 3, 1, 1, qr__sh_range_shape, qr__sh_range_exec, 0, 0 },
    { "", "Flatten", 1, 1, 1, 1, qr__sh_flatten_shape, qr__sh_copy_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "Squeeze", 1, 2, 1, 1, qr__sh_squeeze_shape, qr__sh_copy_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "Unsqueeze", 1, 2, 1, 1, qr__sh_unsqueeze_shape, qr__sh_copy_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "Transpose", 1, 1, 1, 1, qr__sh_transpose_shape, qr__sh_transpose_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "Concat", 1, -1, 1, 1, qr__sh_concat_shape, qr__sh_concat_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "Split", 1, 2, 1, -1, qr__sh_split_shape, qr__sh_split_exec, 0, 0 },
    { "", "Slice", 1, 5, 1, 1, qr__sh_slice_shape, qr__sh_slice_exec, QR_OPF_WRITES_ALL, 0 },
    { "", "Gather", 2, 2, 1, 1, qr__sh_gather_shape, qr__sh_gather_exec, 0, 0 },
    { "", "GatherElements", 2, 2, 1, 1, qr__sh_gather_el_shape, qr__sh_gather_el_exec, 0, 0 },
    { "", "Expand", 2, 2, 1, 1, qr__sh_expand_shape, qr__sh_expand_exec, 0, 0 },
    { "", "Tile", 2, 2, 1, 1, qr__sh_tile_shape, qr__sh_tile_exec, 0, 0 },
    { "", "Pad", 1, 4, 1, 1, qr__sh_pad_shape, qr__sh_pad_exec, 0, 0 },
    { "", "DepthToSpace", 1, 1, 1, 1, qr__sh_d2s_shape, qr__sh_d2s_exec, 0, 0 },
    { "", "SpaceToDepth", 1, 1, 1, 1, qr__sh_s2d_shape, qr__sh_s2d_exec, 0, 0 },
    { "", "NonZero", 1, 1, 1, 1, qr__sh_nonzero_shape, qr__sh_nonzero_exec, 0, 0 },
    { "", "Dropout", 1, 3, 1, 2, qr__sh_dropout_shape, qr__sh_dropout_exec, 0, 0 },
    { "", "Resize", 1, 4, 1, 1, qr__sh_resize_shape, qr__sh_resize_exec, 0, 0 },
    { "", "Upsample", 1, 2, 1, 1, qr__sh_resize_shape, qr__sh_resize_exec, 0, 0 },
};
