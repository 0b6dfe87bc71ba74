/* ops/shape — operators that move, copy or describe data without arithmetic:
 * Shape, Reshape, Identity, Constant, ... */

static QrStatus qr_op_copy_exec(QrOpCtx *c) {
    memcpy(c->out[0]->data, c->in[0]->data, qr_tensor_nbytes(c->in[0]));
    return QR_OK;
}

static QrStatus qr_op_identity_shape(QrOpCtx *c) {
    return qr_op_set_out(c, 0, c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
}

/* Shape(start, end) -> int64 [rank] (opset 15 adds start/end). */
static QrStatus qr__shape_range(const QrOpCtx *c, int *s, int *e) {
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

static QrStatus qr_op_shape_shape(QrOpCtx *c) {
    int s, e;
    QR_TRY(qr__shape_range(c, &s, &e));
    int64_t n = e - s;
    return qr_op_set_out(c, 0, QR_DT_S64, 1, &n);
}

static QrStatus qr_op_shape_exec(QrOpCtx *c) {
    int s, e;
    QR_TRY(qr__shape_range(c, &s, &e));
    int64_t *y = c->out[0]->data;
    for (int i = s; i < e; i++) y[i - s] = c->in[0]->dims[i];
    return QR_OK;
}

/* Reshape(data, shape): 0 copies the input dim (unless allowzero=1), -1 is inferred. */
static QrStatus qr_op_reshape_shape(QrOpCtx *c) {
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

/* Constant: exactly one of value, value_float(s), value_int(s) (strings unsupported). */
static QrStatus qr_op_constant_shape(QrOpCtx *c) {
    const QrNode *n = c->node;
    const QrAttr *a;
    if ((a = qr_node_attr(n, "value")) && a->type == QR_ATTR_TENSOR)
        return qr_op_set_out(c, 0, a->t->dtype, a->t->rank, a->t->dims);
    if ((a = qr_node_attr(n, "value_float"))) return qr_op_set_out(c, 0, QR_DT_F32, 0, NULL);
    if ((a = qr_node_attr(n, "value_int"))) return qr_op_set_out(c, 0, QR_DT_S64, 0, NULL);
    if ((a = qr_node_attr(n, "value_floats"))) { int64_t d = a->n; return qr_op_set_out(c, 0, QR_DT_F32, 1, &d); }
    if ((a = qr_node_attr(n, "value_ints"))) { int64_t d = a->n; return qr_op_set_out(c, 0, QR_DT_S64, 1, &d); }
    return qr_op_fail(c, QR_ERR_UNSUPPORTED, "no supported value attribute (value, value_float(s), value_int(s))");
}

static QrStatus qr_op_constant_exec(QrOpCtx *c) {
    const QrNode *n = c->node;
    QrTensor *y = c->out[0];
    const QrAttr *a;
    if ((a = qr_node_attr(n, "value")) && a->type == QR_ATTR_TENSOR) memcpy(y->data, a->t->data, qr_tensor_nbytes(y));
    else if ((a = qr_node_attr(n, "value_float"))) ((float *)y->data)[0] = a->f;
    else if ((a = qr_node_attr(n, "value_int"))) ((int64_t *)y->data)[0] = a->i;
    else if ((a = qr_node_attr(n, "value_floats"))) memcpy(y->data, a->floats, (size_t)a->n * sizeof(float));
    else if ((a = qr_node_attr(n, "value_ints"))) memcpy(y->data, a->ints, (size_t)a->n * sizeof(int64_t));
    return QR_OK;
}

static const QrOpDef qr_ops_shape[] = {
    { "", "Identity", 1, 1, 1, 1, qr_op_identity_shape, qr_op_copy_exec, 0 },
    { "", "Shape", 1, 1, 1, 1, qr_op_shape_shape, qr_op_shape_exec, QR_OPF_SHAPE_ONLY },
    { "", "Reshape", 2, 2, 1, 1, qr_op_reshape_shape, qr_op_copy_exec, 0 },
    { "", "Constant", 0, 0, 1, 1, qr_op_constant_shape, qr_op_constant_exec, 0 },
};
