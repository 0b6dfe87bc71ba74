/* deploy/onnxw — implementation. See onnxw.h. */

static QrStatus qr_onnxw_init(QrOnnxOut *x, const QrGraph *g, const char *graph_name) {
    memset(x, 0, sizeof *x);
    x->g = g;
    x->graph_name = graph_name;
    return qr_strmap_init(&x->init_names, &x->arena, 64);
}

static void qr_onnxw_free(QrOnnxOut *x) {
    free(x->nodes);
    free(x->inits);
    qr_arena_free(&x->arena);
    memset(x, 0, sizeof *x);
}

static QrStatus qr_onnxw_node(QrOnnxOut *x, const char *name, const char *op_type, const char *domain, int n_in,
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

static QrStatus qr_onnxw_node_from(QrOnnxOut *x, int k, const char *const *names) {
    const QrNode *nd = &x->g->nodes[k];
    const char *in[64], *out[64];
    if (nd->n_in > 64 || nd->n_out > 64) return qr_errf(QR_ERR_UNSUPPORTED, "node '%s': too many inputs/outputs", nd->name);
    for (int i = 0; i < nd->n_in; i++) in[i] = nd->in[i] < 0 ? "" : names ? names[nd->in[i]] : x->g->values[nd->in[i]].name;
    for (int i = 0; i < nd->n_out; i++) out[i] = nd->out[i] < 0 ? "" : names ? names[nd->out[i]] : x->g->values[nd->out[i]].name;
    return qr_onnxw_node(x, nd->name, nd->op_type, nd->domain, nd->n_in, in, nd->n_out, out, nd->n_attr, nd->attr);
}

static QrStatus qr_onnxw_init_tensor(QrOnnxOut *x, const char *name, const QrTensor *t) {
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

static QrStatus qr_onnxw_used_inits(QrOnnxOut *x) {
    for (int n = 0; n < x->n_nodes; n++)
        for (int k = 0; k < x->nodes[n].n_in; k++) {
            const char *nm = x->nodes[n].in[k];
            if (!nm[0]) continue;
            int v = qr_graph_find(x->g, nm);
            if (v >= 0 && x->g->values[v].is_init) QR_TRY(qr_onnxw_init_tensor(x, nm, &x->g->values[v].t));
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

static QrStatus qr_onnxw_input(QrOnnxOut *x, const char *name, QrDType dt, int rank, const int64_t *dims) {
    return qr__ow_io(x->ins, &x->n_in, name, dt, rank, dims);
}

static QrStatus qr_onnxw_output(QrOnnxOut *x, const char *name, QrDType dt, int rank, const int64_t *dims) {
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

static QrStatus qr_onnxw_write(QrOnnxOut *x, const char *path) {
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

/* ==== annotated copies (runall's graph/annotated.onnx) ====================================
 * A rewrite of the wire format, field by field: the model file is mapped (not read into the
 * heap, not unpacked: a multi-GB model costs no memory here), every field is copied as it is
 * except the ones changed — an initializer's raw_data (dropped, replaced by its external-data
 * entries), a noted node's doc_string and its metadata_props (added) — and the model's
 * metadata_props (appended). Field numbers: ModelProto graph 7, metadata_props 14; GraphProto
 * node 1, initializer 5; NodeProto name 3, doc_string 6, metadata_props 9 (IR 10); TensorProto
 * raw_data 9, external_data 13, data_location 14; StringStringEntryProto key 1, value 2. */

#include <sys/mman.h>

typedef struct QrOwBuf { uint8_t *p; size_t n, cap; bool oom; } QrOwBuf;

static void qr__ow_put(QrOwBuf *b, const void *d, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t nc = QR_MAX(b->cap * 2, b->n + n + 4096);
        uint8_t *np = realloc(b->p, nc);
        if (!np) { b->oom = true; return; }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void qr__ow_put_varint(QrOwBuf *b, uint64_t v) {
    uint8_t t[10];
    size_t n = 0;
    for (; v >= 0x80; v >>= 7) t[n++] = (uint8_t)((v & 0x7f) | 0x80);
    t[n++] = (uint8_t)v;
    qr__ow_put(b, t, n);
}

/* A length-delimited field: tag, length, payload. */
static void qr__ow_put_len(QrOwBuf *b, int field, const void *d, size_t n) {
    qr__ow_put_varint(b, (uint64_t)field << 3 | 2);
    qr__ow_put_varint(b, n);
    qr__ow_put(b, d, n);
}

/* A StringStringEntryProto as field `field` of the enclosing message. */
static void qr__ow_put_entry(QrOwBuf *b, int field, const char *key, const char *val) {
    QrOwBuf e = {0};
    qr__ow_put_len(&e, 1, key, strlen(key));
    qr__ow_put_len(&e, 2, val, strlen(val));
    if (e.oom) b->oom = true;
    else qr__ow_put_len(b, field, e.p, e.n);
    free(e.p);
}

static bool qr__ow_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *v) {
    *v = 0;
    for (int s = 0; s < 64 && *pos < n; s += 7) {
        uint8_t c = p[(*pos)++];
        *v |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80)) return true;
    }
    return false;
}

/* The next field of p[*pos, end): its number, wire type, payload (length-delimited fields) and
 * the whole field's bytes [*start, *pos). False on a malformed field or a group. */
static bool qr__ow_field(const uint8_t *p, size_t end, size_t *pos, int *field, int *wt, size_t *ps, size_t *pl, size_t *start) {
    uint64_t tag, v;
    *start = *pos;
    if (!qr__ow_varint(p, end, pos, &tag)) return false;
    *field = (int)(tag >> 3);
    *wt = (int)(tag & 7);
    switch (*wt) {
    case 0: return qr__ow_varint(p, end, pos, &v);
    case 1: if (end - *pos < 8) return false; *pos += 8; return true;
    case 5: if (end - *pos < 4) return false; *pos += 4; return true;
    case 2:
        if (!qr__ow_varint(p, end, pos, &v) || v > end - *pos) return false;
        *ps = *pos; *pl = (size_t)v; *pos += (size_t)v;
        return true;
    default: return false;
    }
}

typedef struct QrOwCtx {
    const uint8_t *p;
    const char *src, *ext;
    size_t min_external;
    const QrOxNote *notes;
    QrStrMap *byname;
    QrArena *a;
    int n_moved, n_noted;
} QrOwCtx;

/* TensorProto p[s, s+l) into b: large raw_data becomes external data at its offset in src. */
static bool qr__ow_wire_tensor(QrOwCtx *c, size_t s, size_t l, QrOwBuf *b) {
    size_t pos = s, ps = 0, pl = 0, st, raw_s = 0, raw_l = 0;
    int f, wt;
    bool raw = false, located = false;
    while (pos < s + l) {
        if (!qr__ow_field(c->p, s + l, &pos, &f, &wt, &ps, &pl, &st)) return false;
        if (f == 9 && wt == 2) { raw = true; raw_s = ps; raw_l = pl; }
        if (f == 14 || f == 13) located = true;
    }
    if (!raw || located || raw_l < c->min_external) { qr__ow_put_len(b, 5, c->p + s, l); return true; }
    QrOwBuf t = {0};
    for (pos = s; pos < s + l;) {
        qr__ow_field(c->p, s + l, &pos, &f, &wt, &ps, &pl, &st);
        if (!(f == 9 && wt == 2)) qr__ow_put(&t, c->p + st, pos - st);
    }
    char num[32];
    qr__ow_put_entry(&t, 13, "location", c->ext);
    snprintf(num, sizeof num, "%zu", raw_s);
    qr__ow_put_entry(&t, 13, "offset", num);
    snprintf(num, sizeof num, "%zu", raw_l);
    qr__ow_put_entry(&t, 13, "length", num);
    qr__ow_put_varint(&t, 14 << 3 | 0);
    qr__ow_put_varint(&t, 1);                                  /* data_location = EXTERNAL */
    if (t.oom) b->oom = true;
    else qr__ow_put_len(b, 5, t.p, t.n);
    free(t.p);
    c->n_moved++;
    return true;
}

/* NodeProto p[s, s+l) into b: a noted node's doc_string replaced and its metadata_props added. */
static bool qr__ow_wire_node(QrOwCtx *c, size_t s, size_t l, QrOwBuf *b) {
    size_t pos = s, ps = 0, pl = 0, st;
    int f, wt, k = -1;
    while (pos < s + l) {
        if (!qr__ow_field(c->p, s + l, &pos, &f, &wt, &ps, &pl, &st)) return false;
        if (f == 3 && wt == 2 && pl) {
            char *name = qr_arena_strndup(c->a, (const char *)c->p + ps, pl);
            k = name ? qr_strmap_get(c->byname, name) : -1;
        }
    }
    if (k < 0) { qr__ow_put_len(b, 1, c->p + s, l); return true; }
    const QrOxNote *q = &c->notes[k];
    QrOwBuf t = {0};
    for (pos = s; pos < s + l;) {
        qr__ow_field(c->p, s + l, &pos, &f, &wt, &ps, &pl, &st);
        if (f != 6) qr__ow_put(&t, c->p + st, pos - st);
    }
    if (q->doc) qr__ow_put_len(&t, 6, q->doc, strlen(q->doc));
    for (int j = 0; j < q->n_kv; j++) qr__ow_put_entry(&t, 9, q->keys[j], q->vals[j]);
    if (t.oom) b->oom = true;
    else qr__ow_put_len(b, 1, t.p, t.n);
    free(t.p);
    c->n_noted++;
    return true;
}

static bool qr__ow_wire_graph(QrOwCtx *c, size_t s, size_t l, QrOwBuf *b) {
    size_t pos = s, ps = 0, pl = 0, st;
    int f, wt;
    while (pos < s + l) {
        if (!qr__ow_field(c->p, s + l, &pos, &f, &wt, &ps, &pl, &st)) return false;
        bool ok = true;
        if (f == 1 && wt == 2) ok = qr__ow_wire_node(c, ps, pl, b);
        else if (f == 5 && wt == 2) ok = qr__ow_wire_tensor(c, ps, pl, b);
        else qr__ow_put(b, c->p + st, pos - st);
        if (!ok) return false;
    }
    return true;
}

static QrStatus qr_onnxw_annotate(const char *src, const char *dst, const char *ext_location, size_t min_external,
                               const QrOxNote *notes, int n_notes, int n_model_kv, const char *const *model_keys,
                               const char *const *model_vals) {
    int fd = open(src, O_RDONLY);
    if (fd < 0) return qr_errf(QR_ERR_IO, "cannot open %s: %s", src, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size <= 0) { close(fd); return qr_errf(QR_ERR_IO, "%s: empty or unreadable", src); }
    size_t n = (size_t)sb.st_size;
    const uint8_t *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return qr_errf(QR_ERR_IO, "cannot map %s: %s", src, strerror(errno));
    QrArena a = {0};
    QrStrMap byname;
    QrStatus st = qr_strmap_init(&byname, &a, (uint32_t)n_notes * 2 + 8);
    for (int k = 0; st == QR_OK && k < n_notes; k++)
        if (notes[k].node && *notes[k].node && qr_strmap_get(&byname, notes[k].node) < 0) st = qr_strmap_put(&byname, &a, notes[k].node, k);
    QrOwCtx c = { .p = p, .src = src, .ext = ext_location, .min_external = min_external, .notes = notes, .byname = &byname, .a = &a };
    QrOwBuf out = {0};
    bool ok = true, graph = false;
    for (size_t pos = 0; st == QR_OK && ok && pos < n;) {
        size_t ps = 0, pl = 0, fs;
        int f, wt;
        if (!qr__ow_field(p, n, &pos, &f, &wt, &ps, &pl, &fs)) { ok = false; break; }
        if (f == 7 && wt == 2) {
            QrOwBuf g = {0};
            ok = qr__ow_wire_graph(&c, ps, pl, &g);
            if (g.oom) out.oom = true;
            else qr__ow_put_len(&out, 7, g.p, g.n);
            free(g.p);
            graph = true;
        } else qr__ow_put(&out, p + fs, pos - fs);
    }
    for (int j = 0; st == QR_OK && j < n_model_kv; j++) qr__ow_put_entry(&out, 14, model_keys[j], model_vals[j]);
    munmap((void *)p, n);
    if (st == QR_OK && (!ok || !graph)) st = qr_errf(QR_ERR_PARSE, "%s: not a readable ONNX model (malformed protobuf or no graph)", src);
    if (st == QR_OK && out.oom) st = qr_errf(QR_ERR_NOMEM, "out of memory writing %s", dst);
    if (st == QR_OK) st = qr_file_write_atomic(dst, out.p, out.n);
    free(out.p);
    qr_arena_free(&a);
    return st;
}
