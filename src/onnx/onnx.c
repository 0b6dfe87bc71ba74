/* onnx — implementation. See onnx.h. */

/* ==== protobuf-c's memory ===========================================================
 * Small pieces go to an arena, dropped at once. A block of QR__ONNX_BIG bytes or more (in
 * practice an initializer's raw_data) is an allocation of its own, the one qr_tensor_alloc_data
 * would make (qr_aligned_alloc; not zeroed: protobuf-c copies the bytes in), so the tensor takes
 * it over (qr__onnx_pb_adopt) instead of copying it: an initializer is copied once out of the
 * file's buffer, not twice (and not zeroed twice before that). Blocks not taken are freed with the
 * rest (qr__onnx_pb_release). The arena's limit counts both. */
enum { QR__ONNX_BIG = 1 << 16 };

typedef struct QrOnnxPb {
    QrArena arena;           /* small blocks; limit and total cover the big ones too */
    void **big;              /* [n_big] the big blocks in allocation order; NULL once adopted */
    size_t *big_n;           /* their sizes */
    int n_big, cap_big;
    int next;                /* where qr__onnx_pb_adopt looks first (initializers come in order) */
#ifdef QR_TESTING
    int adopted;             /* blocks taken over (tests/test_onnx.c) */
#endif
} QrOnnxPb;

#ifdef QR_TESTING
static _Atomic int qr__onnx_test_adopted;   /* raw_data blocks taken over by every load so far (tests) */
#endif

static void *qr__onnx_pb_alloc(void *ud, size_t size) {
    QrOnnxPb *pb = ud;
    if (size < QR__ONNX_BIG) return qr_arena_alloc(&pb->arena, size);
    QrArena *a = &pb->arena;
    if (a->limit && (size > a->limit || a->total > a->limit - size)) return NULL;
    if (pb->n_big == pb->cap_big) {
        int cap = pb->cap_big ? 2 * pb->cap_big : 64;
        void **nb = realloc(pb->big, (size_t)cap * sizeof *nb);
        if (nb) pb->big = nb;
        size_t *nn = nb ? realloc(pb->big_n, (size_t)cap * sizeof *nn) : NULL;
        if (!nn) return NULL;
        pb->big_n = nn;
        pb->cap_big = cap;
    }
    void *p = qr_aligned_alloc(size);
    if (!p) return NULL;
    pb->big[pb->n_big] = p;
    pb->big_n[pb->n_big++] = size;
    a->total += size;
    return p;
}

static void qr__onnx_pb_free(void *ud, void *p) { QR_UNUSED(ud); QR_UNUSED(p); }

/* Whether p (n bytes) is one of pb's big blocks; if so the caller owns it now (qr_aligned_free).
 * pb NULL: never. */
static bool qr__onnx_pb_adopt(QrOnnxPb *pb, const void *p, size_t n) {
    if (!pb || n < QR__ONNX_BIG) return false;
    for (int k = 0; k < pb->n_big; k++) {
        int i = (pb->next + k) % pb->n_big;
        if (pb->big[i] != p) continue;
        if (pb->big_n[i] != n) return false;
        pb->big[i] = NULL;
        pb->next = i + 1;
#ifdef QR_TESTING
        pb->adopted++;
#endif
        return true;
    }
    return false;
}

static void qr__onnx_pb_release(QrOnnxPb *pb) {
#ifdef QR_TESTING
    qr__onnx_test_adopted += pb->adopted;
    pb->adopted = 0;
#endif
    for (int k = 0; k < pb->n_big; k++) qr_aligned_free(pb->big[k]);
    free(pb->big);
    free(pb->big_n);
    pb->big = NULL;
    pb->big_n = NULL;
    pb->n_big = pb->cap_big = 0;
    qr_arena_free(&pb->arena);
}

typedef struct QrOnnxCtx {
    const char *path;   /* model file, for messages */
    const char *dir;    /* folder that external data locations are relative to */
    QrArena *arena;     /* where attribute tensors go */
    QrOnnxPb *pb;       /* the decoded message's memory: raw_data blocks to take over (NULL: copy) */
} QrOnnxCtx;

/* Resolves an external data location inside the model's folder; refuses absolute
 * paths and any ".." component so a model cannot read files outside its folder. */
static QrStatus qr__onnx_external_path(const QrOnnxCtx *cx, const char *loc, const char *tname, char *out, size_t n) {
    if (!loc || !loc[0])
        return qr_errf(QR_ERR_INVALID, "%s: tensor '%s': external data without a location", cx->path, tname);
    if (loc[0] == '/')
        return qr_errf(QR_ERR_INVALID, "%s: tensor '%s': external data location '%s' is absolute; it must be "
                       "relative to the model's folder", cx->path, tname, loc);
    for (const char *p = loc; *p;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return qr_errf(QR_ERR_INVALID, "%s: tensor '%s': external data location '%s' points outside the "
                           "model's folder", cx->path, tname, loc);
        p += len;
        if (*p == '/') p++;
    }
    if ((size_t)snprintf(out, n, "%s/%s", cx->dir ? cx->dir : ".", loc) >= n)
        return qr_errf(QR_ERR_INVALID, "%s: tensor '%s': external data path too long", cx->path, tname);
    return QR_OK;
}

/* Element i of a sub-byte type packed low bits first (`byte` holds it), as qreport stores it
 * unpacked: int4/int2 sign-extended, uint4/uint2 and float4 codes as is. */
static uint8_t qr__onnx_unpack_elem(QrDType dt, int bits, unsigned byte, int64_t i) {
    int per = 8 / bits;
    unsigned v = (byte >> ((i % per) * bits)) & ((1u << bits) - 1), half = 1u << (bits - 1);
    if (dt == QR_DT_S4 || dt == QR_DT_S2) return (uint8_t)(int8_t)((int)(v ^ half) - (int)half);
    return (uint8_t)v;
}

/* Number of values in the typed field that holds dtype dt (packed sub-byte types: one
 * byte per int32). */
static size_t qr__onnx_typed_count(const Onnx__TensorProto *tp, QrDType dt) {
    switch (dt) {
    case QR_DT_F32: return tp->n_float_data;
    case QR_DT_F64: return tp->n_double_data;
    case QR_DT_S64: return tp->n_int64_data;
    case QR_DT_U32: case QR_DT_U64: return tp->n_uint64_data;
    default: return tp->n_int32_data;
    }
}

/* Converts a TensorProto. The data is owned by the tensor (qr_tensor_free_data). */
static QrStatus qr__onnx_tensor_from_proto(const QrOnnxCtx *cx, const Onnx__TensorProto *tp, QrTensor *t) {
    const char *name = tp->name && tp->name[0] ? tp->name : "<unnamed>";
    memset(t, 0, sizeof *t);
    if (tp->n_dims > QR_MAX_RANK)
        return qr_errf(QR_ERR_UNSUPPORTED, "%s: tensor '%s' has rank %zu (max %d)", cx->path, name, tp->n_dims, QR_MAX_RANK);
    QrDType dt = (QrDType)tp->data_type;
    if (!qr_dtype_supported(dt))
        return qr_errf(QR_ERR_UNSUPPORTED, "%s: tensor '%s' has data type %d, which qreport does not support",
                       cx->path, name, (int)tp->data_type);
    QrStatus st = qr_tensor_set_shape(t, dt, (int)tp->n_dims, tp->dims);
    if (st != QR_OK) return qr_err_wrap(st, "%s: tensor '%s'", cx->path, name);
    int64_t n = t->numel;
    int bits = qr_dtype_packed_bits(dt);              /* sub-byte types are packed in files */
    bool packed = bits != 0;
    int64_t per = packed ? 8 / bits : 1;
    size_t raw_bytes = packed ? (size_t)((n + per - 1) / per) : qr_tensor_nbytes(t);
    /* The declared size is checked against the data present before anything is allocated:
     * a few bytes of protobuf must not make us allocate (and zero) gigabytes. */
    bool external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (!external && tp->has_raw_data && tp->raw_data.len != raw_bytes)
        return qr_errf(QR_ERR_INVALID, "%s: tensor '%s': raw_data has %zu bytes, but shape and type need %zu",
                       cx->path, name, tp->raw_data.len, raw_bytes);
    if (!external && !tp->has_raw_data && qr__onnx_typed_count(tp, dt) != (packed ? raw_bytes : (size_t)n))
        return qr_errf(QR_ERR_INVALID, "%s: tensor '%s': has %zu stored values, but its shape needs %lld",
                       cx->path, name, qr__onnx_typed_count(tp, dt), (long long)(packed ? (int64_t)raw_bytes : n));
    if (!external && !packed && tp->has_raw_data && qr__onnx_pb_adopt(cx->pb, tp->raw_data.data, raw_bytes)) {
        t->data = tp->raw_data.data;             /* protobuf-c's copy becomes the tensor's */
        t->owned = true;
        return QR_OK;
    }
    if (!external) QR_TRY(qr_tensor_alloc_data(t));

    const unsigned char *raw = NULL;
    unsigned char *ext = NULL;
    if (external) {
        const char *loc = NULL;
        uint64_t off = 0, len = UINT64_MAX;
        for (size_t i = 0; i < tp->n_external_data; i++) {
            const Onnx__StringStringEntryProto *kv = tp->external_data[i];
            if (!kv->key || !kv->value) continue;
            char *end;
            if (strcmp(kv->key, "location") == 0) loc = kv->value;
            else if (strcmp(kv->key, "offset") == 0 || strcmp(kv->key, "length") == 0) {
                errno = 0;
                unsigned long long v = strtoull(kv->value, &end, 10);
                if (end == kv->value || *end || errno || kv->value[0] == '-') {
                    qr_tensor_free_data(t);
                    return qr_errf(QR_ERR_INVALID, "%s: tensor '%s': external data %s '%s' is not a number",
                                   cx->path, name, kv->key, kv->value);
                }
                if (kv->key[0] == 'o') off = v; else len = v;
            }
        }
        char full[4096];
        st = qr__onnx_external_path(cx, loc, name, full, sizeof full);
        uint64_t fsize = 0;
        if (st == QR_OK) {
            st = qr_file_size(full, &fsize);
            if (st != QR_OK) st = qr_err_wrap(st, "%s: tensor '%s': external data file", cx->path, name);
        }
        if (st == QR_OK && len == UINT64_MAX) len = raw_bytes;
        if (st == QR_OK && len != raw_bytes)
            st = qr_errf(QR_ERR_INVALID, "%s: tensor '%s': external data length %llu, but shape and type need %zu bytes",
                         cx->path, name, (unsigned long long)len, raw_bytes);
        if (st == QR_OK && (off > fsize || len > fsize - off))
            st = qr_errf(QR_ERR_INVALID, "%s: tensor '%s': external data [%llu, +%llu) is past the end of '%s' (%llu bytes)",
                         cx->path, name, (unsigned long long)off, (unsigned long long)len, loc, (unsigned long long)fsize);
        if (st == QR_OK) st = qr_tensor_alloc_data(t);   /* size now backed by the file */
        if (st == QR_OK) {
            if (packed) {
                ext = malloc(raw_bytes + 1);
                if (!ext) st = qr_errf(QR_ERR_NOMEM, "out of memory");
                else st = qr_file_read_range(full, off, len, ext);
                raw = ext;
            } else {
                st = qr_file_read_range(full, off, len, t->data);
            }
        }
        if (st != QR_OK) { free(ext); qr_tensor_free_data(t); return st; }
        if (!packed) return QR_OK;
    } else if (tp->has_raw_data) {
        if (tp->raw_data.len != raw_bytes) {
            qr_tensor_free_data(t);
            return qr_errf(QR_ERR_INVALID, "%s: tensor '%s': raw_data has %zu bytes, but shape and type need %zu",
                           cx->path, name, tp->raw_data.len, raw_bytes);
        }
        raw = tp->raw_data.data;
        if (!packed) { if (raw_bytes) memcpy(t->data, raw, raw_bytes); return QR_OK; }
    }

    if (raw) {                                    /* packed sub-byte type: low bits first */
        for (int64_t i = 0; i < n; i++) ((uint8_t *)t->data)[i] = qr__onnx_unpack_elem(dt, bits, raw[i / per], i);
        free(ext);
        return QR_OK;
    }

    /* Typed fields. */
    size_t have = 0;
    switch (dt) {
    case QR_DT_F32:
        have = tp->n_float_data;
        if (have == (size_t)n && n) memcpy(t->data, tp->float_data, (size_t)n * 4);
        break;
    case QR_DT_F64:
        have = tp->n_double_data;
        if (have == (size_t)n && n) memcpy(t->data, tp->double_data, (size_t)n * 8);
        break;
    case QR_DT_S64:
        have = tp->n_int64_data;
        if (have == (size_t)n && n) memcpy(t->data, tp->int64_data, (size_t)n * 8);
        break;
    case QR_DT_U32: case QR_DT_U64:
        have = tp->n_uint64_data;
        if (have == (size_t)n) for (int64_t i = 0; i < n; i++) qr_tensor_set_i64(t, i, (int64_t)tp->uint64_data[i]);
        break;
    case QR_DT_S4: case QR_DT_U4: case QR_DT_F4E2M1: case QR_DT_S2: case QR_DT_U2:
        /* one packed byte per int32 */
        have = tp->n_int32_data;
        if (have == raw_bytes) {
            for (int64_t i = 0; i < n; i++)
                ((uint8_t *)t->data)[i] = qr__onnx_unpack_elem(dt, bits, (unsigned)tp->int32_data[i / per] & 0xff, i);
            have = (size_t)n;
        }
        break;
    case QR_DT_F8E4M3FN: case QR_DT_F8E4M3FNUZ: case QR_DT_F8E5M2: case QR_DT_F8E5M2FNUZ: case QR_DT_F8E8M0:
        have = tp->n_int32_data;                  /* one code per int32 */
        if (have == (size_t)n) for (int64_t i = 0; i < n; i++) ((uint8_t *)t->data)[i] = (uint8_t)tp->int32_data[i];
        break;
    case QR_DT_F16: case QR_DT_BF16:
        have = tp->n_int32_data;
        if (have == (size_t)n) for (int64_t i = 0; i < n; i++) ((uint16_t *)t->data)[i] = (uint16_t)tp->int32_data[i];
        break;
    default:   /* int32, int16, int8, uint16, uint8, bool */
        have = tp->n_int32_data;
        if (have == (size_t)n) for (int64_t i = 0; i < n; i++) qr_tensor_set_i64(t, i, tp->int32_data[i]);
        break;
    }
    if (have != (size_t)n) {
        qr_tensor_free_data(t);
        return qr_errf(QR_ERR_INVALID, "%s: tensor '%s': has %zu stored values, but its shape needs %lld",
                       cx->path, name, have, (long long)n);
    }
    return QR_OK;
}

/* Moves an owned tensor's data into the arena (attribute tensors live as long as the graph). */
static QrStatus qr__onnx_tensor_to_arena(QrTensor *t, QrArena *a) {
    void *d = qr_arena_alloc(a, qr_tensor_nbytes(t) + QR_ALIGN);
    if (!d) { qr_tensor_free_data(t); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    memcpy(d, t->data, qr_tensor_nbytes(t));
    qr_tensor_free_data(t);
    t->data = d;
    return QR_OK;
}

static QrStatus qr__onnx_attr_from_proto(const QrOnnxCtx *cx, const char *node, const Onnx__AttributeProto *ap, QrAttr *a) {
    QrArena *ar = cx->arena;
    a->name = qr_arena_strdup(ar, ap->name ? ap->name : "");
    a->type = (QrAttrType)ap->type;
    a->f = ap->f;
    a->i = ap->i;
    if (!a->name) return qr_errf(QR_ERR_NOMEM, "out of memory");
    if (ap->has_s || a->type == QR_ATTR_STRING) {
        a->s = qr_arena_strndup(ar, ap->s.data ? (const char *)ap->s.data : "", ap->s.len);
        a->s_len = ap->s.len;
        if (!a->s) return qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (ap->t) {
        a->t = qr_arena_alloc(ar, sizeof *a->t);
        if (!a->t) return qr_errf(QR_ERR_NOMEM, "out of memory");
        QrStatus st = qr__onnx_tensor_from_proto(cx, ap->t, a->t);
        if (st != QR_OK) return qr_err_wrap(st, "node '%s' attribute '%s'", node, a->name);
        QR_TRY(qr__onnx_tensor_to_arena(a->t, ar));
    }
    switch (a->type) {
    case QR_ATTR_FLOATS:
        a->n = (int)ap->n_floats;
        a->floats = qr_arena_array(ar, ap->n_floats + 1, sizeof(float));
        if (!a->floats) return qr_errf(QR_ERR_NOMEM, "out of memory");
        if (ap->n_floats) memcpy(a->floats, ap->floats, ap->n_floats * sizeof(float));
        break;
    case QR_ATTR_INTS:
        a->n = (int)ap->n_ints;
        a->ints = qr_arena_array(ar, ap->n_ints + 1, sizeof(int64_t));
        if (!a->ints) return qr_errf(QR_ERR_NOMEM, "out of memory");
        if (ap->n_ints) memcpy(a->ints, ap->ints, ap->n_ints * sizeof(int64_t));
        break;
    case QR_ATTR_STRINGS:
        a->n = (int)ap->n_strings;
        a->strings = qr_arena_array(ar, ap->n_strings + 1, sizeof(char *));
        if (!a->strings) return qr_errf(QR_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < ap->n_strings; k++) {
            a->strings[k] = qr_arena_strndup(ar, (const char *)ap->strings[k].data, ap->strings[k].len);
            if (!a->strings[k]) return qr_errf(QR_ERR_NOMEM, "out of memory");
        }
        break;
    case QR_ATTR_TENSORS:
        a->n = (int)ap->n_tensors;
        a->tensors = qr_arena_array(ar, ap->n_tensors + 1, sizeof(QrTensor));
        if (!a->tensors) return qr_errf(QR_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < ap->n_tensors; k++) {
            QrStatus st = qr__onnx_tensor_from_proto(cx, ap->tensors[k], &a->tensors[k]);
            if (st != QR_OK) return qr_err_wrap(st, "node '%s' attribute '%s'", node, a->name);
            QR_TRY(qr__onnx_tensor_to_arena(&a->tensors[k], ar));
        }
        break;
    case QR_ATTR_GRAPHS: a->n = (int)ap->n_graphs; break;
    default: break;
    }
    /* Some exporters omit `type`; infer it from the populated field. */
    if (a->type == QR_ATTR_UNDEF) {
        if (ap->n_ints) a->type = QR_ATTR_INTS;
        else if (ap->n_floats) a->type = QR_ATTR_FLOATS;
        else if (ap->t) a->type = QR_ATTR_TENSOR;
        else if (ap->has_s) a->type = QR_ATTR_STRING;
        else if (ap->has_f) a->type = QR_ATTR_FLOAT;
        else if (ap->has_i) a->type = QR_ATTR_INT;
    }
    return QR_OK;
}

/* Records a ValueInfoProto's declared tensor type on value v. */
static void qr__onnx_decl_from_proto(QrGraph *g, int v, const Onnx__ValueInfoProto *vi) {
    QrValue *val = &g->values[v];
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) return;
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    val->has_decl = true;
    val->decl_dtype = (QrDType)tt->elem_type;
    val->decl_rank = -1;                               /* unknown rank */
    if (!tt->shape || tt->shape->n_dim > QR_MAX_RANK) return;
    val->decl_rank = (int)tt->shape->n_dim;
    for (size_t d = 0; d < tt->shape->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
        val->decl_dims[d] = -1;
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0)
            val->decl_dims[d] = dim->dim_value;
        else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param)
            val->decl_dim_names[d] = qr_arena_strdup(&g->arena, dim->dim_param);
    }
}

static QrStatus qr__onnx_graph_from_proto(QrGraph *g, const QrOnnxCtx *cx, const Onnx__ModelProto *mp) {
    const Onnx__GraphProto *gp = mp->graph;
    if (!gp) return qr_errf(QR_ERR_INVALID, "%s: the model has no graph", cx->path);
    g->ir_version = mp->ir_version;
    g->producer = qr_arena_strdup(&g->arena, mp->producer_name ? mp->producer_name : "");
    g->name = qr_arena_strdup(&g->arena, gp->name ? gp->name : "");
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        const char *d = os->domain ? os->domain : "";
        if (!d[0] || strcmp(d, "ai.onnx") == 0) g->opset = os->version;
        else if (strcmp(d, "com.microsoft") == 0) g->opset_ms = os->version;
    }
    if (!g->opset) g->opset = mp->n_opset_import ? 1 : 11;   /* absent opset_import: assume a modern default */

    size_t expected = gp->n_initializer + gp->n_input + gp->n_output + gp->n_value_info;
    for (size_t i = 0; i < gp->n_node; i++) expected += gp->node[i]->n_output;
    if (expected > (1u << 28)) return qr_errf(QR_ERR_NOMEM, "%s: graph too large", cx->path);
    QR_TRY(qr_strmap_init(&g->names, &g->arena, (uint32_t)expected));

    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !tp->name[0]) return qr_errf(QR_ERR_INVALID, "%s: initializer %zu has no name", cx->path, i);
        int v;
        QR_TRY(qr_graph_value(g, tp->name, &v));
        if (g->values[v].is_init)
            return qr_errf(QR_ERR_INVALID, "%s: initializer '%s' is defined twice", cx->path, tp->name);
        QR_TRY(qr__onnx_tensor_from_proto(cx, tp, &g->values[v].t));
        g->values[v].is_init = true;
    }
    if (gp->n_sparse_initializer)
        return qr_errf(QR_ERR_UNSUPPORTED, "%s: sparse initializers are not supported", cx->path);

    g->inputs = qr_arena_array(&g->arena, gp->n_input + 1, sizeof(int));
    g->outputs = qr_arena_array(&g->arena, gp->n_output + 1, sizeof(int));
    if (!g->inputs || !g->outputs) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !vi->name[0]) return qr_errf(QR_ERR_INVALID, "%s: graph input %zu has no name", cx->path, i);
        int v;
        QR_TRY(qr_graph_value(g, vi->name, &v));
        qr__onnx_decl_from_proto(g, v, vi);
        if (g->values[v].is_init) continue;            /* IR < 4 lists initializers as inputs */
        if (g->values[v].is_input) return qr_errf(QR_ERR_INVALID, "%s: graph input '%s' is listed twice", cx->path, vi->name);
        g->values[v].is_input = true;
        g->inputs[g->n_inputs++] = v;
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        if (!vi->name || !vi->name[0]) return qr_errf(QR_ERR_INVALID, "%s: graph output %zu has no name", cx->path, i);
        int v;
        QR_TRY(qr_graph_value(g, vi->name, &v));
        qr__onnx_decl_from_proto(g, v, vi);
        g->values[v].is_output = true;
        g->outputs[g->n_outputs++] = v;
    }

    g->nodes = qr_arena_array(&g->arena, gp->n_node + 1, sizeof(QrNode));
    g->cap_nodes = (int)gp->n_node + 1;
    if (!g->nodes) return qr_errf(QR_ERR_NOMEM, "out of memory");
    QrStrMap node_names;
    QR_TRY(qr_strmap_init(&node_names, &g->arena, (uint32_t)gp->n_node + 1));
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        QrNode *n = &g->nodes[g->n_nodes++];
        n->op_type = qr_arena_strdup(&g->arena, np->op_type ? np->op_type : "");
        n->domain = qr_arena_strdup(&g->arena, np->domain && strcmp(np->domain, "ai.onnx") ? np->domain : "");
        if (!n->op_type || !n->domain) return qr_errf(QR_ERR_NOMEM, "out of memory");
        if (!n->op_type[0]) return qr_errf(QR_ERR_INVALID, "%s: node %zu has no op_type", cx->path, i);
        const char *nm = np->name && np->name[0] ? np->name : NULL;
        n->name = nm && qr_strmap_get(&node_names, nm) < 0 ? qr_arena_strdup(&g->arena, nm)
                : qr_arena_printf(&g->arena, "%s_%zu", nm ? nm : n->op_type, i);
        if (!n->name) return qr_errf(QR_ERR_NOMEM, "out of memory");
        QR_TRY(qr_strmap_put(&node_names, &g->arena, n->name, (int)i));
        n->opset = n->domain[0] == 0 ? g->opset : strcmp(n->domain, "com.microsoft") == 0 ? g->opset_ms : 1;
        n->n_in = (int)np->n_input;
        n->n_out = (int)np->n_output;
        n->in = qr_arena_array(&g->arena, np->n_input + 1, sizeof(int));
        n->out = qr_arena_array(&g->arena, np->n_output + 1, sizeof(int));
        if (!n->in || !n->out) return qr_errf(QR_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < np->n_input; k++) {
            n->in[k] = -1;
            if (np->input[k] && np->input[k][0]) QR_TRY(qr_graph_value(g, np->input[k], &n->in[k]));
        }
        for (size_t k = 0; k < np->n_output; k++) {
            n->out[k] = -1;
            if (np->output[k] && np->output[k][0]) QR_TRY(qr_graph_value(g, np->output[k], &n->out[k]));
        }
        n->n_attr = (int)np->n_attribute;
        n->attr = qr_arena_array(&g->arena, np->n_attribute + 1, sizeof(QrAttr));
        if (!n->attr) return qr_errf(QR_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < np->n_attribute; k++)
            QR_TRY(qr__onnx_attr_from_proto(cx, n->name, np->attribute[k], &n->attr[k]));
    }
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        int v = vi->name ? qr_graph_find(g, vi->name) : -1;
        if (v >= 0 && !g->values[v].has_decl) qr__onnx_decl_from_proto(g, v, vi);
    }
    QrStatus st = qr_graph_finalize(g);
    if (st != QR_OK) return qr_err_wrap(st, "%s", cx->path);
    return QR_OK;
}

/* Decodes buf and builds the graph. mapped: buf is the file mapped (qr_file_map); it is unmapped
 * as soon as protobuf-c has decoded it (the decoded message copies every string and bytes field),
 * so the file, its decoded copy and the graph's tensors are never in memory all three at once: the
 * load peaks at twice the file, not three times (a 344 MB ViT-B base.onnx: ~1.0 GB -> ~0.7 GB). */
static QrStatus qr__onnx_load_decoded(const char *path, const char *dir, const unsigned char *buf, size_t len,
                                      bool mapped, QrGraph **out) {
    *out = NULL;
    QrOnnxPb pb = {0};
    ProtobufCAllocator alloc = { qr__onnx_pb_alloc, qr__onnx_pb_free, &pb };
    pb.arena.limit = len * 8 + ((size_t)64 << 20);     /* decoded size is bounded by the input size */
    Onnx__ModelProto *mp = onnx__model_proto__unpack(&alloc, len, buf);
    if (mapped) {
        qr_file_unmap(buf, len);
        buf = NULL;
    }
    if (!mp) {
        qr__onnx_pb_release(&pb);
        return qr_errf(QR_ERR_PARSE, "%s: not a valid ONNX model (protobuf decoding failed: truncated or corrupt file)",
                       path);
    }
    QrGraph *g = calloc(1, sizeof *g);
    if (!g) { qr__onnx_pb_release(&pb); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    g->path = qr_arena_strdup(&g->arena, path);
    g->dir = qr_arena_strdup(&g->arena, dir);
    QrOnnxCtx cx = { path, dir, &g->arena, &pb };
    QrStatus st = qr__onnx_graph_from_proto(g, &cx, mp);
    qr__onnx_pb_release(&pb);
    if (st != QR_OK) { qr_graph_free(g); free(g); return st; }
    *out = g;
    return QR_OK;
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_onnx_read_buffer(const char *path, const char *dir, const unsigned char *buf, size_t len,
                                        QrGraph **out) {
    return qr__onnx_load_decoded(path, dir, buf, len, false, out);
}
#endif

static QrStatus qr_onnx_read(const char *path, QrGraph **out) {
    const unsigned char *buf = NULL;
    unsigned char *heap = NULL;      /* a file system that cannot map it: read */
    size_t len = 0;
    QrStatus st = qr_file_map(path, QR_ONNX_MAX_PROTO, &buf, &len);
    if (st == QR_ERR_UNSUPPORTED) {
        qr_err_clear();
        st = qr_file_read(path, QR_ONNX_MAX_PROTO, &heap, &len);
        buf = heap;
    }
    if (st != QR_OK) return st;
    QrArena tmp = {0};
    char *dir = qr_path_dirname(&tmp, path);
    st = dir ? qr__onnx_load_decoded(path, dir, buf, len, !heap, out) : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (!dir && !heap) qr_file_unmap(buf, len);
    free(heap);
    qr_arena_free(&tmp);
    return st;
}

static QrStatus qr_pb_read(const char *path, QrTensor *out, char *name, size_t name_len) {
    return qr_pb_read_sha(path, out, name, name_len, NULL);
}

static QrStatus qr_pb_read_sha(const char *path, QrTensor *out, char *name, size_t name_len, uint8_t *sha) {
    unsigned char *buf;
    size_t len;
    QR_TRY(qr_file_read(path, QR_ONNX_MAX_PROTO, &buf, &len));
    if (sha) qr_sha256(buf, len, sha);
    QrOnnxPb pb = {0};
    QrArena tmp = {0};
    pb.arena.limit = len * 8 + ((size_t)64 << 20);
    ProtobufCAllocator alloc = { qr__onnx_pb_alloc, qr__onnx_pb_free, &pb };
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&alloc, len, buf);
    QrStatus st;
    if (!tp) st = qr_errf(QR_ERR_PARSE, "%s: not a valid TensorProto (truncated or corrupt)", path);
    else {
        QrOnnxCtx cx = { path, qr_path_dirname(&tmp, path), &tmp, &pb };
        st = qr__onnx_tensor_from_proto(&cx, tp, out);
        if (name && name_len) snprintf(name, name_len, "%s", tp->name ? tp->name : "");
    }
    qr__onnx_pb_release(&pb);
    qr_arena_free(&tmp);
    qr_aligned_free(buf);
    return st;
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_pb_write(const char *path, const QrTensor *t, const char *name) {
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[QR_MAX_RANK];
    for (int i = 0; i < t->rank; i++) dims[i] = t->dims[i];
    tp.n_dims = (size_t)t->rank;
    tp.dims = dims;
    tp.has_data_type = 1;
    tp.data_type = (int32_t)t->dtype;
    tp.name = (char *)(name ? name : "");
    size_t nbytes = qr_tensor_nbytes(t);
    unsigned char *packed = NULL;
    int bits = qr_dtype_packed_bits(t->dtype);
    if (bits) {                                   /* sub-byte types: packed low bits first */
        int64_t per = 8 / bits;
        nbytes = (size_t)((t->numel + per - 1) / per);
        packed = calloc(nbytes + 1, 1);
        if (!packed) return qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < t->numel; i++)
            packed[i / per] |= (unsigned char)((((const uint8_t *)t->data)[i] & ((1u << bits) - 1)) << ((i % per) * bits));
    }
    tp.has_raw_data = 1;
    tp.raw_data.len = nbytes;
    tp.raw_data.data = packed ? packed : t->data;
    size_t len = onnx__tensor_proto__get_packed_size(&tp);
    unsigned char *buf = malloc(len + 1);
    if (!buf) { free(packed); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    onnx__tensor_proto__pack(&tp, buf);
    QrStatus st = qr_file_write_atomic(path, buf, len);
    free(buf);
    free(packed);
    return st;
}
#endif
