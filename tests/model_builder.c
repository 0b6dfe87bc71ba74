/* tests/model_builder — builds small (and deliberately broken) ONNX models in C
 * through the protobuf-c structs, so hostile-input tests need no Python. */

enum { QT_MB_MAX = 64 };

typedef struct QtModel {
    QrArena a;
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    Onnx__OperatorSetIdProto opset, opset_ms;
    Onnx__OperatorSetIdProto *opsets[2];
    Onnx__NodeProto *nodes[QT_MB_MAX];
    Onnx__TensorProto *inits[QT_MB_MAX];
    Onnx__ValueInfoProto *inputs[QT_MB_MAX], *outputs[QT_MB_MAX];
} QtModel;

static void qt_mb_init(QtModel *mb, int64_t opset) {
    memset(mb, 0, sizeof *mb);
    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, ms = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    mb->m = m;
    mb->g = g;
    mb->opset = os;
    mb->opset_ms = ms;
    mb->opset.domain = "";
    mb->opset.has_version = 1;
    mb->opset.version = opset;
    mb->opset_ms.domain = "com.microsoft";
    mb->opset_ms.has_version = 1;
    mb->opset_ms.version = 1;
    mb->opsets[0] = &mb->opset;
    mb->opsets[1] = &mb->opset_ms;
    mb->m.has_ir_version = 1;
    mb->m.ir_version = 8;
    mb->m.n_opset_import = 2;
    mb->m.opset_import = mb->opsets;
    mb->m.producer_name = "qreport-tests";
    mb->m.graph = &mb->g;
    mb->g.name = "test";
    mb->g.node = mb->nodes;
    mb->g.initializer = mb->inits;
    mb->g.input = mb->inputs;
    mb->g.output = mb->outputs;
}

static Onnx__ValueInfoProto *qt_mb_value_info(QtModel *mb, const char *name, QrDType dt, int rank, const int64_t *dims) {
    Onnx__ValueInfoProto *vi = qr_arena_alloc(&mb->a, sizeof *vi);
    Onnx__TypeProto *tp = qr_arena_alloc(&mb->a, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = qr_arena_alloc(&mb->a, sizeof *tt);
    Onnx__TensorShapeProto *sp = qr_arena_alloc(&mb->a, sizeof *sp);
    Onnx__ValueInfoProto vi0 = ONNX__VALUE_INFO_PROTO__INIT;
    Onnx__TypeProto tp0 = ONNX__TYPE_PROTO__INIT;
    Onnx__TypeProto__Tensor tt0 = ONNX__TYPE_PROTO__TENSOR__INIT;
    Onnx__TensorShapeProto sp0 = ONNX__TENSOR_SHAPE_PROTO__INIT;
    *vi = vi0; *tp = tp0; *tt = tt0; *sp = sp0;
    vi->name = qr_arena_strdup(&mb->a, name);
    vi->type = tp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)dt;
    tt->shape = sp;
    sp->n_dim = (size_t)rank;
    sp->dim = qr_arena_array(&mb->a, (size_t)rank + 1, sizeof *sp->dim);
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        Onnx__TensorShapeProto__Dimension *d = qr_arena_alloc(&mb->a, sizeof *d);
        *d = d0;
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
        sp->dim[i] = d;
    }
    return vi;
}

static void qt_mb_input(QtModel *mb, const char *name, QrDType dt, int rank, const int64_t *dims) {
    mb->inputs[mb->g.n_input++] = qt_mb_value_info(mb, name, dt, rank, dims);
}

static void qt_mb_output(QtModel *mb, const char *name, QrDType dt, int rank, const int64_t *dims) {
    mb->outputs[mb->g.n_output++] = qt_mb_value_info(mb, name, dt, rank, dims);
}

static Onnx__TensorProto *qt_mb_tensor(QtModel *mb, const char *name, QrDType dt, int rank, const int64_t *dims,
                                       const void *raw, size_t raw_len) {
    Onnx__TensorProto t0 = ONNX__TENSOR_PROTO__INIT;
    Onnx__TensorProto *t = qr_arena_alloc(&mb->a, sizeof *t);
    *t = t0;
    t->name = qr_arena_strdup(&mb->a, name);
    t->n_dims = (size_t)rank;
    t->dims = qr_arena_array(&mb->a, (size_t)rank + 1, sizeof(int64_t));
    for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
    t->has_data_type = 1;
    t->data_type = (int32_t)dt;
    if (raw) {
        t->has_raw_data = 1;
        t->raw_data.len = raw_len;
        t->raw_data.data = qr_arena_alloc(&mb->a, raw_len + 1);
        memcpy(t->raw_data.data, raw, raw_len);
    }
    return t;
}

static Onnx__TensorProto *qt_mb_init_raw(QtModel *mb, const char *name, QrDType dt, int rank, const int64_t *dims,
                                         const void *raw, size_t raw_len) {
    Onnx__TensorProto *t = qt_mb_tensor(mb, name, dt, rank, dims, raw, raw_len);
    mb->inits[mb->g.n_initializer++] = t;
    return t;
}

/* Initializer stored in an external file: location/offset/length as given (NULL = omit). */
static Onnx__TensorProto *qt_mb_init_external(QtModel *mb, const char *name, QrDType dt, int rank,
                                              const int64_t *dims, const char *loc, const char *off, const char *len) {
    Onnx__TensorProto *t = qt_mb_init_raw(mb, name, dt, rank, dims, NULL, 0);
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->external_data = qr_arena_array(&mb->a, 3, sizeof *t->external_data);
    const char *keys[3] = { "location", "offset", "length" }, *vals[3] = { loc, off, len };
    for (int i = 0; i < 3; i++) {
        if (!vals[i]) continue;
        Onnx__StringStringEntryProto e0 = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
        Onnx__StringStringEntryProto *e = qr_arena_alloc(&mb->a, sizeof *e);
        *e = e0;
        e->key = (char *)keys[i];
        e->value = qr_arena_strdup(&mb->a, vals[i]);
        t->external_data[t->n_external_data++] = e;
    }
    return t;
}

static Onnx__NodeProto *qt_mb_node(QtModel *mb, const char *op, const char *name, const char *ins, const char *outs) {
    /* ins/outs: comma-separated value names ("" entries allowed for omitted inputs) */
    Onnx__NodeProto n0 = ONNX__NODE_PROTO__INIT;
    Onnx__NodeProto *n = qr_arena_alloc(&mb->a, sizeof *n);
    *n = n0;
    const char *dot = strrchr(op, '.');
    if (dot) { n->domain = qr_arena_strndup(&mb->a, op, (size_t)(dot - op)); n->op_type = qr_arena_strdup(&mb->a, dot + 1); }
    else n->op_type = qr_arena_strdup(&mb->a, op);
    n->name = qr_arena_strdup(&mb->a, name);
    for (int pass = 0; pass < 2; pass++) {
        const char *s = pass ? outs : ins;
        size_t cnt = s[0] ? 1 : 0;
        for (const char *p = s; *p; p++) cnt += *p == ',';
        char **arr = qr_arena_array(&mb->a, cnt + 1, sizeof(char *));
        const char *p = s;
        for (size_t k = 0; k < cnt; k++) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            arr[k] = qr_arena_strndup(&mb->a, p, len);
            p = e ? e + 1 : p + len;
        }
        if (pass) { n->n_output = cnt; n->output = arr; } else { n->n_input = cnt; n->input = arr; }
    }
    n->attribute = qr_arena_array(&mb->a, 16, sizeof *n->attribute);
    mb->nodes[mb->g.n_node++] = n;
    return n;
}

static Onnx__AttributeProto *qt_mb_attr(QtModel *mb, Onnx__NodeProto *n, const char *name, QrAttrType type) {
    Onnx__AttributeProto a0 = ONNX__ATTRIBUTE_PROTO__INIT;
    Onnx__AttributeProto *a = qr_arena_alloc(&mb->a, sizeof *a);
    *a = a0;
    a->name = qr_arena_strdup(&mb->a, name);
    a->has_type = 1;
    a->type = (Onnx__AttributeProto__AttributeType)type;
    n->attribute[n->n_attribute++] = a;
    return a;
}

static void qt_mb_attr_ints(QtModel *mb, Onnx__NodeProto *n, const char *name, int cnt, const int64_t *v) {
    Onnx__AttributeProto *a = qt_mb_attr(mb, n, name, QR_ATTR_INTS);
    a->n_ints = (size_t)cnt;
    a->ints = qr_arena_array(&mb->a, (size_t)cnt + 1, sizeof(int64_t));
    memcpy(a->ints, v, (size_t)cnt * sizeof(int64_t));
}

static QrStatus qt_mb_pack(QtModel *mb, unsigned char **buf, size_t *len) {
    *len = onnx__model_proto__get_packed_size(&mb->m);
    *buf = malloc(*len + 1);
    if (!*buf) return qr_errf(QR_ERR_NOMEM, "oom");
    onnx__model_proto__pack(&mb->m, *buf);
    return QR_OK;
}

static QrStatus qt_mb_write(QtModel *mb, const char *path) {
    unsigned char *buf;
    size_t len;
    QR_TRY(qt_mb_pack(mb, &buf, &len));
    QrStatus st = qr_file_write_atomic(path, buf, len);
    free(buf);
    return st;
}

static void qt_mb_free(QtModel *mb) { qr_arena_free(&mb->a); }
