/* deploy/onnxw — implementation. See onnxw.h. */

static QrStatus qr_ox_init(QrOnnxOut *x, const QrGraph *g, const char *graph_name) {
    memset(x, 0, sizeof *x);
    x->g = g;
    x->graph_name = graph_name;
    return qr_strmap_init(&x->init_names, &x->arena, 64);
}

static void qr_ox_free(QrOnnxOut *x) {
    free(x->nodes);
    free(x->inits);
    qr_arena_free(&x->arena);
    memset(x, 0, sizeof *x);
}

static QrStatus qr_ox_node(QrOnnxOut *x, const char *name, const char *op_type, const char *domain, int n_in,
                           const char *const *in, int n_out, const char *const *out, int n_attr, const QrAttr *attr) {
    if (x->n_nodes == x->cap_nodes) {
        int cap = x->cap_nodes ? 2 * x->cap_nodes : 64;
        QrOxNode *n = realloc(x->nodes, (size_t)cap * sizeof *n);
        if (!n) return qr_errf(QR_ERR_NOMEM, "out of memory");
        x->nodes = n;
        x->cap_nodes = cap;
    }
    for (int k = 0; k < n_attr; k++)
        if (attr[k].type == QR_ATTR_GRAPH || attr[k].type == QR_ATTR_GRAPHS || attr[k].type == QR_ATTR_SPARSE_TENSOR ||
            attr[k].type == QR_ATTR_SPARSE_TENSORS || attr[k].type == QR_ATTR_TYPE_PROTO || attr[k].type == QR_ATTR_TYPE_PROTOS)
            return qr_errf(QR_ERR_UNSUPPORTED, "node '%s' (%s): attribute '%s' holds a graph, sparse tensor or type, which "
                           "qreport does not write", name, op_type, attr[k].name);
    QrOxNode *n = &x->nodes[x->n_nodes];
    n->name = name;
    n->op_type = op_type;
    n->domain = domain ? domain : "";
    n->n_in = n_in;
    n->n_out = n_out;
    n->n_attr = n_attr;
    n->attr = attr;
    n->in = qr_arena_array(&x->arena, (size_t)n_in + 1, sizeof *n->in);
    n->out = qr_arena_array(&x->arena, (size_t)n_out + 1, sizeof *n->out);
    if (!n->in || !n->out) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n_in; k++) n->in[k] = in[k] ? in[k] : "";
    for (int k = 0; k < n_out; k++) n->out[k] = out[k] ? out[k] : "";
    x->n_nodes++;
    return QR_OK;
}

static QrStatus qr_ox_node_from(QrOnnxOut *x, int k, const char *const *names) {
    const QrNode *nd = &x->g->nodes[k];
    const char *in[64], *out[64];
    if (nd->n_in > 64 || nd->n_out > 64) return qr_errf(QR_ERR_UNSUPPORTED, "node '%s': too many inputs/outputs", nd->name);
    for (int i = 0; i < nd->n_in; i++) in[i] = nd->in[i] < 0 ? "" : names ? names[nd->in[i]] : x->g->values[nd->in[i]].name;
    for (int i = 0; i < nd->n_out; i++) out[i] = nd->out[i] < 0 ? "" : names ? names[nd->out[i]] : x->g->values[nd->out[i]].name;
    return qr_ox_node(x, nd->name, nd->op_type, nd->domain, nd->n_in, in, nd->n_out, out, nd->n_attr, nd->attr);
}

static QrStatus qr_ox_init_tensor(QrOnnxOut *x, const char *name, const QrTensor *t) {
    if (qr_strmap_get(&x->init_names, name) >= 0) return QR_OK;
    if (!t->data) return qr_errf(QR_ERR_INVALID, "initializer '%s' has no data", name);
    if (x->n_inits == x->cap_inits) {
        int cap = x->cap_inits ? 2 * x->cap_inits : 64;
        QrOxTensor *n = realloc(x->inits, (size_t)cap * sizeof *n);
        if (!n) return qr_errf(QR_ERR_NOMEM, "out of memory");
        x->inits = n;
        x->cap_inits = cap;
    }
    const char *key = qr_arena_strdup(&x->arena, name);
    if (!key) return qr_errf(QR_ERR_NOMEM, "out of memory");
    x->inits[x->n_inits] = (QrOxTensor){ key, t };
    QR_TRY(qr_strmap_put(&x->init_names, &x->arena, key, x->n_inits));
    x->n_inits++;
    return QR_OK;
}

static QrStatus qr_ox_used_inits(QrOnnxOut *x) {
    for (int n = 0; n < x->n_nodes; n++)
        for (int k = 0; k < x->nodes[n].n_in; k++) {
            const char *nm = x->nodes[n].in[k];
            if (!nm[0]) continue;
            int v = qr_graph_find(x->g, nm);
            if (v >= 0 && x->g->values[v].is_init) QR_TRY(qr_ox_init_tensor(x, nm, &x->g->values[v].t));
        }
    return QR_OK;
}

static QrStatus qr__ow_io(QrOxIo *io, int *n, const char *name, QrDType dt, int rank, const int64_t *dims) {
    if (*n >= 64) return qr_errf(QR_ERR_UNSUPPORTED, "more than 64 graph inputs/outputs");
    QrOxIo *o = &io[(*n)++];
    o->name = name;
    o->dt = dt;
    o->rank = rank;
    for (int d = 0; d < rank && d < QR_MAX_RANK; d++) o->dims[d] = dims[d];
    return QR_OK;
}

static QrStatus qr_ox_input(QrOnnxOut *x, const char *name, QrDType dt, int rank, const int64_t *dims) {
    return qr__ow_io(x->ins, &x->n_in, name, dt, rank, dims);
}

static QrStatus qr_ox_output(QrOnnxOut *x, const char *name, QrDType dt, int rank, const int64_t *dims) {
    return qr__ow_io(x->outs, &x->n_out, name, dt, rank, dims);
}

/* ---- proto building (everything in x->arena) ---- */

static void *qr__ow_new(QrOnnxOut *x, size_t size, const void *init) {
    void *p = qr_arena_alloc(&x->arena, size);
    if (p) memcpy(p, init, size);
    return p;
}

static Onnx__TensorProto *qr__ow_tensor(QrOnnxOut *x, const char *name, const QrTensor *t) {
    static const Onnx__TensorProto init = ONNX__TENSOR_PROTO__INIT;
    Onnx__TensorProto *tp = qr__ow_new(x, sizeof *tp, &init);
    if (!tp) return NULL;
    tp->name = (char *)(name ? name : "");
    tp->n_dims = (size_t)t->rank;
    tp->dims = qr_arena_array(&x->arena, (size_t)t->rank + 1, sizeof(int64_t));
    if (!tp->dims) return NULL;
    for (int d = 0; d < t->rank; d++) tp->dims[d] = t->dims[d];
    tp->has_data_type = 1;
    tp->data_type = (int32_t)t->dtype;
    size_t nbytes = qr_tensor_nbytes(t);
    int bits = qr_dtype_packed_bits(t->dtype);
    unsigned char *data;
    if (bits) {                                   /* sub-byte types: packed low bits first */
        int64_t per = 8 / bits;
        nbytes = (size_t)((t->numel + per - 1) / per);
        data = qr_arena_alloc(&x->arena, nbytes + 1);
        if (!data) return NULL;
        for (int64_t i = 0; i < t->numel; i++)
            data[i / per] |= (unsigned char)((((const uint8_t *)t->data)[i] & ((1u << bits) - 1)) << ((i % per) * bits));
    } else data = t->data;
    if (t->dtype == QR_DT_STRING) return NULL;
    tp->has_raw_data = 1;
    tp->raw_data.len = nbytes;
    tp->raw_data.data = data;
    return tp;
}

static Onnx__ValueInfoProto *qr__ow_vi(QrOnnxOut *x, const QrOxIo *io) {
    static const Onnx__ValueInfoProto vi0 = ONNX__VALUE_INFO_PROTO__INIT;
    static const Onnx__TypeProto tp0 = ONNX__TYPE_PROTO__INIT;
    static const Onnx__TypeProto__Tensor tt0 = ONNX__TYPE_PROTO__TENSOR__INIT;
    static const Onnx__TensorShapeProto sh0 = ONNX__TENSOR_SHAPE_PROTO__INIT;
    static const Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    Onnx__ValueInfoProto *vi = qr__ow_new(x, sizeof *vi, &vi0);
    Onnx__TypeProto *tp = qr__ow_new(x, sizeof *tp, &tp0);
    Onnx__TypeProto__Tensor *tt = qr__ow_new(x, sizeof *tt, &tt0);
    Onnx__TensorShapeProto *sh = qr__ow_new(x, sizeof *sh, &sh0);
    Onnx__TensorShapeProto__Dimension **dims = qr_arena_array(&x->arena, (size_t)io->rank + 1, sizeof *dims);
    if (!vi || !tp || !tt || !sh || !dims) return NULL;
    for (int d = 0; d < io->rank; d++) {
        dims[d] = qr__ow_new(x, sizeof **dims, &d0);
        if (!dims[d]) return NULL;
        dims[d]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dims[d]->dim_value = io->dims[d];
    }
    sh->n_dim = (size_t)io->rank;
    sh->dim = dims;
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)io->dt;
    tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->name = (char *)io->name;
    vi->type = tp;
    return vi;
}

static Onnx__AttributeProto *qr__ow_attr(QrOnnxOut *x, const QrAttr *a) {
    static const Onnx__AttributeProto a0 = ONNX__ATTRIBUTE_PROTO__INIT;
    Onnx__AttributeProto *p = qr__ow_new(x, sizeof *p, &a0);
    if (!p) return NULL;
    p->name = (char *)a->name;
    p->has_type = 1;
    p->type = (Onnx__AttributeProto__AttributeType)a->type;
    switch (a->type) {
    case QR_ATTR_FLOAT: p->has_f = 1; p->f = a->f; break;
    case QR_ATTR_INT: p->has_i = 1; p->i = a->i; break;
    case QR_ATTR_STRING: p->has_s = 1; p->s.len = a->s_len; p->s.data = (uint8_t *)a->s; break;
    case QR_ATTR_TENSOR: if (!(p->t = qr__ow_tensor(x, "", a->t))) return NULL; break;
    case QR_ATTR_FLOATS: p->n_floats = (size_t)a->n; p->floats = a->floats; break;
    case QR_ATTR_INTS: p->n_ints = (size_t)a->n; p->ints = a->ints; break;
    case QR_ATTR_STRINGS:
        p->n_strings = (size_t)a->n;
        p->strings = qr_arena_array(&x->arena, (size_t)a->n + 1, sizeof *p->strings);
        if (!p->strings) return NULL;
        for (int k = 0; k < a->n; k++) { p->strings[k].len = strlen(a->strings[k]); p->strings[k].data = (uint8_t *)a->strings[k]; }
        break;
    case QR_ATTR_TENSORS:
        p->n_tensors = (size_t)a->n;
        p->tensors = qr_arena_array(&x->arena, (size_t)a->n + 1, sizeof *p->tensors);
        if (!p->tensors) return NULL;
        for (int k = 0; k < a->n; k++) if (!(p->tensors[k] = qr__ow_tensor(x, "", &a->tensors[k]))) return NULL;
        break;
    default: break;
    }
    return p;
}

static QrStatus qr_ox_write(QrOnnxOut *x, const char *path) {
    static const Onnx__ModelProto m0 = ONNX__MODEL_PROTO__INIT;
    static const Onnx__GraphProto g0 = ONNX__GRAPH_PROTO__INIT;
    static const Onnx__NodeProto n0 = ONNX__NODE_PROTO__INIT;
    static const Onnx__OperatorSetIdProto o0 = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    QrArenaMark mark = qr_arena_mark(&x->arena);
    Onnx__ModelProto *m = qr__ow_new(x, sizeof *m, &m0);
    Onnx__GraphProto *g = qr__ow_new(x, sizeof *g, &g0);
    QrStatus st = m && g ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    /* opsets: the default domain, com.microsoft when used, any other domain at version 1 */
    const char *doms[16];
    int64_t vers[16];
    int nd = 0;
    doms[nd] = "";
    vers[nd++] = x->g->opset;
    for (int i = 0; st == QR_OK && i < x->n_nodes; i++) {
        const char *d = x->nodes[i].domain;
        bool seen = false;
        for (int k = 0; k < nd; k++) seen |= !strcmp(doms[k], d);
        if (seen) continue;
        if (nd == 16) { st = qr_errf(QR_ERR_UNSUPPORTED, "more than 16 operator domains"); break; }
        doms[nd] = d;
        vers[nd++] = !strcmp(d, "com.microsoft") && x->g->opset_ms ? x->g->opset_ms : 1;
    }
    if (st == QR_OK) {
        m->has_ir_version = 1;
        m->ir_version = x->g->ir_version > 0 ? x->g->ir_version : 8;
        m->producer_name = "qreport";
        m->producer_version = QR_VERSION;
        m->n_opset_import = (size_t)nd;
        m->opset_import = qr_arena_array(&x->arena, (size_t)nd, sizeof *m->opset_import);
        if (!m->opset_import) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int k = 0; st == QR_OK && k < nd; k++) {
            Onnx__OperatorSetIdProto *o = qr__ow_new(x, sizeof *o, &o0);
            if (!o) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
            o->domain = (char *)doms[k];
            o->has_version = 1;
            o->version = vers[k];
            m->opset_import[k] = o;
        }
        m->graph = g;
        g->name = (char *)(x->graph_name ? x->graph_name : "qreport");
    }
    if (st == QR_OK) {
        g->n_node = (size_t)x->n_nodes;
        g->node = qr_arena_array(&x->arena, (size_t)x->n_nodes + 1, sizeof *g->node);
        g->n_initializer = (size_t)x->n_inits;
        g->initializer = qr_arena_array(&x->arena, (size_t)x->n_inits + 1, sizeof *g->initializer);
        g->n_input = (size_t)x->n_in;
        g->input = qr_arena_array(&x->arena, (size_t)x->n_in + 1, sizeof *g->input);
        g->n_output = (size_t)x->n_out;
        g->output = qr_arena_array(&x->arena, (size_t)x->n_out + 1, sizeof *g->output);
        if (!g->node || !g->initializer || !g->input || !g->output) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; st == QR_OK && i < x->n_nodes; i++) {
        const QrOxNode *s = &x->nodes[i];
        Onnx__NodeProto *n = qr__ow_new(x, sizeof *n, &n0);
        if (!n) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
        n->name = (char *)s->name;
        n->op_type = (char *)s->op_type;
        n->domain = (char *)s->domain;
        n->n_input = (size_t)s->n_in;
        n->input = (char **)s->in;
        n->n_output = (size_t)s->n_out;
        n->output = (char **)s->out;
        n->n_attribute = (size_t)s->n_attr;
        n->attribute = qr_arena_array(&x->arena, (size_t)s->n_attr + 1, sizeof *n->attribute);
        if (!n->attribute) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
        for (int k = 0; st == QR_OK && k < s->n_attr; k++)
            if (!(n->attribute[k] = qr__ow_attr(x, &s->attr[k]))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        g->node[i] = n;
    }
    for (int i = 0; st == QR_OK && i < x->n_inits; i++)
        if (!(g->initializer[i] = qr__ow_tensor(x, x->inits[i].name, x->inits[i].t)))
            st = qr_errf(QR_ERR_UNSUPPORTED, "initializer '%s' (%s) cannot be written", x->inits[i].name,
                         qr_dtype_name(x->inits[i].t->dtype));
    for (int i = 0; st == QR_OK && i < x->n_in; i++)
        if (!(g->input[i] = qr__ow_vi(x, &x->ins[i]))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; st == QR_OK && i < x->n_out; i++)
        if (!(g->output[i] = qr__ow_vi(x, &x->outs[i]))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    unsigned char *buf = NULL;
    size_t len = 0;
    if (st == QR_OK) {
        len = onnx__model_proto__get_packed_size(m);
        if (len > QR_ONNX_MAX_PROTO) st = qr_errf(QR_ERR_UNSUPPORTED, "%s would be %zu bytes (more than protobuf's 2 GiB)", path, len);
        else if (!(buf = malloc(len + 1))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    }
    if (st == QR_OK) {
        onnx__model_proto__pack(m, buf);
        st = qr_file_write_atomic(path, buf, len);
    }
    free(buf);
    qr_arena_reset(&x->arena, mark);
    return st;
}

/* ==== annotated copies (runall's graph/annotated.onnx) ==================================== */

static bool qr__ow_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *v) {
    *v = 0;
    for (int s = 0; s < 64 && *pos < n; s += 7) {
        uint8_t b = p[(*pos)++];
        *v |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) return true;
    }
    return false;
}

/* Steps over one field at *pos (tag already read); for a length-delimited field returns its
 * payload's start and length. */
static bool qr__ow_skip(const uint8_t *p, size_t n, size_t *pos, int wt, size_t *start, size_t *len) {
    uint64_t v;
    switch (wt) {
    case 0: return qr__ow_varint(p, n, pos, &v);
    case 1: if (n - *pos < 8) return false; *pos += 8; return true;
    case 5: if (n - *pos < 4) return false; *pos += 4; return true;
    case 2:
        if (!qr__ow_varint(p, n, pos, &v) || v > n - *pos) return false;
        *start = *pos; *len = (size_t)v; *pos += (size_t)v;
        return true;
    default: return false;
    }
}

/* The file offset and length of the raw_data of every initializer of ModelProto.graph, in
 * order (-1: none), found by walking the wire format (protobuf-c copies the bytes). */
static int qr__ow_raw_offsets(const uint8_t *p, size_t n, int64_t *off, int64_t *len, int cap) {
    int k = 0;
    size_t pos = 0;
    while (pos < n) {
        uint64_t tag;
        size_t gs = 0, gl = 0;
        if (!qr__ow_varint(p, n, &pos, &tag) || !qr__ow_skip(p, n, &pos, (int)(tag & 7), &gs, &gl)) return -1;
        if (tag >> 3 != 7 || (tag & 7) != 2) continue;            /* ModelProto.graph */
        for (size_t q = gs; q < gs + gl;) {
            size_t ts = 0, tl = 0;
            if (!qr__ow_varint(p, gs + gl, &q, &tag) || !qr__ow_skip(p, gs + gl, &q, (int)(tag & 7), &ts, &tl)) return -1;
            if (tag >> 3 != 5 || (tag & 7) != 2) continue;        /* GraphProto.initializer */
            if (k >= cap) return -1;
            off[k] = -1; len[k] = 0;
            for (size_t r = ts; r < ts + tl;) {
                size_t ds = 0, dl = 0;
                if (!qr__ow_varint(p, ts + tl, &r, &tag) || !qr__ow_skip(p, ts + tl, &r, (int)(tag & 7), &ds, &dl)) return -1;
                if (tag >> 3 == 9 && (tag & 7) == 2) { off[k] = (int64_t)ds; len[k] = (int64_t)dl; }   /* raw_data */
            }
            k++;
        }
    }
    return k;
}

/* One StringStringEntryProto {key = 1, value = 2} with its length prefix, as protobuf-c packs
 * an unknown length-delimited field's data (for NodeProto.metadata_props). */
static size_t qr__ow_put_varint(uint8_t *b, size_t v) {
    size_t n = 0;
    for (; v >= 0x80; v >>= 7) b[n++] = (uint8_t)((v & 0x7f) | 0x80);
    b[n++] = (uint8_t)v;
    return n;
}

static uint8_t *qr__ow_entry(QrArena *a, const char *key, const char *val, size_t *len) {
    size_t kl = strlen(key), vl = strlen(val);
    uint8_t *b = qr_arena_alloc(a, kl + vl + 40);
    if (!b) return NULL;
    uint8_t hk[12], hv[12];
    size_t nk = qr__ow_put_varint(hk, kl), nv = qr__ow_put_varint(hv, vl), body = 1 + nk + kl + 1 + nv + vl, n = 0;
    n += qr__ow_put_varint(b, body);
    b[n++] = 0x0a;
    memcpy(b + n, hk, nk); n += nk;
    memcpy(b + n, key, kl); n += kl;
    b[n++] = 0x12;
    memcpy(b + n, hv, nv); n += nv;
    memcpy(b + n, val, vl); n += vl;
    *len = n;
    return b;
}

static QrStatus qr_ox_annotate(const char *src, const char *dst, const char *ext_location, size_t min_external,
                               const QrOxNote *notes, int n_notes, int n_model_kv, const char *const *model_keys,
                               const char *const *model_vals) {
    unsigned char *buf = NULL;
    size_t n = 0;
    QR_TRY(qr_file_read(src, 0, &buf, &n));
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    if (!m || !m->graph) {
        if (m) onnx__model_proto__free_unpacked(m, NULL);
        free(buf);
        return qr_errf(QR_ERR_PARSE, "%s: not a readable ONNX model", src);
    }
    Onnx__GraphProto *g = m->graph;
    QrArena a = {0};
    QrStatus st = QR_OK;
    int ni = (int)g->n_initializer;
    int64_t *off = qr_arena_array(&a, (size_t)ni + 1, sizeof *off), *len = qr_arena_array(&a, (size_t)ni + 1, sizeof *len);
    /* what is changed, to be put back before protobuf-c frees the message */
    Onnx__TensorProto *saved_t = qr_arena_array(&a, (size_t)ni + 1, sizeof *saved_t);
    bool *moved = qr_arena_array(&a, (size_t)ni + 1, sizeof *moved);
    Onnx__NodeProto *saved_n = qr_arena_array(&a, g->n_node + 1, sizeof *saved_n);
    bool *noted = qr_arena_array(&a, g->n_node + 1, sizeof *noted);
    size_t saved_nmeta = m->n_metadata_props;
    Onnx__StringStringEntryProto **saved_meta = m->metadata_props;
    QrStrMap byname;
    if (!off || !len || !saved_t || !moved || !saved_n || !noted) st = qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_strmap_init(&byname, &a, (uint32_t)n_notes * 2 + 8);
    for (int k = 0; st == QR_OK && k < n_notes; k++)
        if (notes[k].node && *notes[k].node && qr_strmap_get(&byname, notes[k].node) < 0) st = qr_strmap_put(&byname, &a, notes[k].node, k);
    int found = st == QR_OK ? qr__ow_raw_offsets(buf, n, off, len, ni) : 0;
    if (st == QR_OK && found != ni) st = qr_errf(QR_ERR_PARSE, "%s: cannot locate the initializers' data (%d of %d)", src, found, ni);
    if (st == QR_OK) memset(moved, 0, (size_t)ni * sizeof *moved);
    for (int k = 0; st == QR_OK && k < ni; k++) {
        Onnx__TensorProto *t = g->initializer[k];
        if (!t->has_raw_data || off[k] < 0 || (size_t)len[k] != t->raw_data.len || t->raw_data.len < min_external) continue;
        Onnx__StringStringEntryProto *e = qr_arena_array(&a, 3, sizeof *e);
        Onnx__StringStringEntryProto **ep = qr_arena_array(&a, 3, sizeof *ep);
        if (!e || !ep) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
        const char *kv[3][2] = { { "location", ext_location }, { "offset", qr_arena_printf(&a, "%lld", (long long)off[k]) },
                                 { "length", qr_arena_printf(&a, "%lld", (long long)len[k]) } };
        for (int j = 0; j < 3; j++) {
            e[j] = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
            e[j].key = (char *)kv[j][0];
            e[j].value = (char *)kv[j][1];
            ep[j] = &e[j];
        }
        saved_t[k] = *t;
        moved[k] = true;
        t->has_raw_data = 0;
        t->raw_data.len = 0;
        t->n_external_data = 3;
        t->external_data = ep;
        t->has_data_location = 1;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    }
    for (size_t k = 0; st == QR_OK && k < g->n_node; k++) {
        Onnx__NodeProto *nd = g->node[k];
        noted[k] = false;
        int i = nd->name && *nd->name ? qr_strmap_get(&byname, nd->name) : -1;
        if (i < 0) continue;
        const QrOxNote *q = &notes[i];
        size_t nu = nd->base.n_unknown_fields;
        ProtobufCMessageUnknownField *uf = qr_arena_array(&a, nu + (size_t)q->n_kv + 1, sizeof *uf);
        if (!uf) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
        if (nu) memcpy(uf, nd->base.unknown_fields, nu * sizeof *uf);
        for (int j = 0; j < q->n_kv; j++) {
            size_t el = 0;
            uint8_t *eb = qr__ow_entry(&a, q->keys[j], q->vals[j], &el);
            if (!eb) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
            uf[nu + (size_t)j] = (ProtobufCMessageUnknownField){ .tag = 9, .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED,
                                                                  .len = el, .data = eb };
        }
        saved_n[k] = *nd;
        noted[k] = true;
        nd->doc_string = (char *)q->doc;
        nd->base.n_unknown_fields = nu + (size_t)q->n_kv;
        nd->base.unknown_fields = uf;
    }
    if (st == QR_OK && n_model_kv > 0) {
        Onnx__StringStringEntryProto **mp = qr_arena_array(&a, saved_nmeta + (size_t)n_model_kv, sizeof *mp);
        Onnx__StringStringEntryProto *e = qr_arena_array(&a, (size_t)n_model_kv, sizeof *e);
        if (!mp || !e) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        for (size_t j = 0; st == QR_OK && j < saved_nmeta; j++) mp[j] = saved_meta[j];
        for (int j = 0; st == QR_OK && j < n_model_kv; j++) {
            e[j] = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
            e[j].key = (char *)model_keys[j];
            e[j].value = (char *)model_vals[j];
            mp[saved_nmeta + (size_t)j] = &e[j];
        }
        if (st == QR_OK) { m->metadata_props = mp; m->n_metadata_props = saved_nmeta + (size_t)n_model_kv; }
    }
    if (st == QR_OK) {
        size_t sz = onnx__model_proto__get_packed_size(m);
        uint8_t *out = malloc(sz ? sz : 1);
        if (!out) st = qr_errf(QR_ERR_NOMEM, "out of memory packing %s", dst);
        else {
            onnx__model_proto__pack(m, out);
            st = qr_file_write_atomic(dst, out, sz);
            free(out);
        }
    }
    /* put back what protobuf-c owns */
    for (int k = 0; moved && k < ni; k++) if (moved[k]) *g->initializer[k] = saved_t[k];
    for (size_t k = 0; noted && k < g->n_node; k++) if (noted[k]) *g->node[k] = saved_n[k];
    m->metadata_props = saved_meta;
    m->n_metadata_props = saved_nmeta;
    onnx__model_proto__free_unpacked(m, NULL);
    qr_arena_free(&a);
    free(buf);
    return st;
}
