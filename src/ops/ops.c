/* ops — shared helpers for operator implementations. The table is in registry.c. */

static QrStatus qr_op_fail(const QrOpCtx *c, QrStatus st, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return qr_errf(st, "node '%s' (%s): %s", c->node->name, c->node->op_type, msg);
}

static QrStatus qr_op_set_out(QrOpCtx *c, int i, QrDType dt, int rank, const int64_t *dims) {
    if (i >= c->n_out || !c->out[i]) return QR_OK;
    QrStatus st = qr_tensor_set_shape(c->out[i], dt, rank, dims);
    if (st != QR_OK) return qr_err_wrap(st, "node '%s' (%s): output %d", c->node->name, c->node->op_type, i);
    return QR_OK;
}

static QrStatus qr_op_need_data(const QrOpCtx *c, int i) {
    const QrTensor *t = qr_op_in(c, i);
    if (!t) return qr_op_fail(c, QR_ERR_INVALID, "input %d is required", i);
    if (!t->data)
        return qr_op_fail(c, QR_ERR_DYNAMIC, "input %d ('%s') determines the output shape and is only known "
                          "when the graph runs", i,
                          c->g->values[c->node->in[i]].name);
    return QR_OK;
}

static QrStatus qr_op_ints(const QrOpCtx *c, int i, int64_t *out, int max, int *count) {
    QR_TRY(qr_op_need_data(c, i));
    const QrTensor *t = c->in[i];
    if (!qr_dtype_is_int(t->dtype))
        return qr_op_fail(c, QR_ERR_INVALID, "input %d must be an integer tensor, not %s", i, qr_dtype_name(t->dtype));
    if (t->numel > max) return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input %d has %lld values (max %d)", i,
                                          (long long)t->numel, max);
    for (int64_t k = 0; k < t->numel; k++) out[k] = qr_tensor_get_i64(t, k);
    *count = (int)t->numel;
    return QR_OK;
}

static QrStatus qr_op_axis(const QrOpCtx *c, int64_t axis, int rank, int *out) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= (rank ? rank : 1))
        return qr_op_fail(c, QR_ERR_INVALID, "axis %lld is out of range for rank %d", (long long)axis, rank);
    *out = (int)a;
    return QR_OK;
}

static QrStatus qr_op_broadcast(const QrOpCtx *c, int n, const QrTensor *const *ts, int *rank, int64_t *dims) {
    int r = 0;
    for (int k = 0; k < n; k++) if (ts[k] && ts[k]->rank > r) r = ts[k]->rank;
    for (int d = 0; d < r; d++) dims[d] = 1;
    for (int k = 0; k < n; k++) {
        const QrTensor *t = ts[k];
        if (!t) continue;
        for (int d = 0; d < t->rank; d++) {
            int64_t od = r - t->rank + d, v = t->dims[d];
            if (v == dims[od] || v == 1) continue;
            if (dims[od] == 1) { dims[od] = v; continue; }
            char a[128], b[128];
            return qr_op_fail(c, QR_ERR_SHAPE, "shapes %s and %s cannot be broadcast together",
                              qr_shape_str_brackets(a, sizeof a, ts[0]->rank, ts[0]->dims),
                              qr_shape_str_brackets(b, sizeof b, t->rank, t->dims));
        }
    }
    *rank = r;
    return QR_OK;
}

static void qr_broadcast_strides(const QrTensor *t, int rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        int td = d - (rank - t->rank);
        if (td < 0 || t->dims[td] == 1) strides[d] = 0;
        else { strides[d] = s; s *= t->dims[td]; }
        QR_UNUSED(dims);
    }
}

static QrStatus qr_op_need_float(const QrOpCtx *c, int i) {
    const QrTensor *t = qr_op_in(c, i);
    if (t && !qr_dtype_is_float(t->dtype))
        return qr_op_fail(c, QR_ERR_UNSUPPORTED, "input %d has type %s; only float types are supported",
                          i, qr_dtype_name(t->dtype));
    return QR_OK;
}

static QrStatus qr_op_check_work(const QrOpCtx *c, double work, const char *what) {
    double limit = QR_OP_MAX_WORK;
    const char *env = getenv("QR_MAX_NODE_WORK");
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        if (*end == 0 && v > 0) limit = v;
    }
    if (!(work > limit)) return QR_OK;
    return qr_op_fail(c, QR_ERR_NOMEM,
                      "%.3g multiply-adds (%s) exceed the limit of %.3g per node: its kernel_shape, pads, dilations or "
                      "strides make the arithmetic far larger than any real layer's (QR_MAX_NODE_WORK=N raises the limit)",
                      work, what, limit);
}
