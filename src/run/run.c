/* run — implementation. See run.h. */

/* ---- binding nodes to operators (ops/'s table) ---- */

/* Binds node n to its operator (NULL when qreport does not implement it) and checks a bound
 * node's input / output counts against the operator's (the loader's check: ops read required
 * inputs unchecked). */
static QrStatus qr__run_bind_node(const QrGraph *g, QrNode *n) {
    n->def = qr_op_find(n->domain, n->op_type);
    if (n->def) {
        const QrOpDef *d = n->def;
        if (n->n_in < d->min_in || (d->max_in >= 0 && n->n_in > d->max_in) || n->n_out < d->min_out ||
            (d->max_out >= 0 && n->n_out > d->max_out))
            return qr_errf(QR_ERR_INVALID, "%s: node '%s' (%s) has %d inputs and %d outputs; expected %d..%d "
                           "inputs and %d..%d outputs", g->path, n->name, n->op_type, n->n_in, n->n_out,
                           d->min_in, d->max_in, d->min_out, d->max_out);
        /* Ops read required inputs unchecked: the first min_in inputs are required but for
         * those the op lists as optional (com.microsoft's QLinear* zero points). */
        for (int k = 0; k < d->min_in; k++)
            if (n->in[k] < 0 && !(k < 32 && (d->opt_in >> k & 1u)))
                return qr_errf(QR_ERR_INVALID, "%s: node '%s' (%s): required input %d has no name", g->path,
                               n->name, n->op_type, k);
        if (n->n_out > 0 && n->out[0] < 0)   /* output 0 is required in every operator */
            return qr_errf(QR_ERR_INVALID, "%s: node '%s' (%s): required output 0 has no name", g->path,
                           n->name, n->op_type);
    }
    return QR_OK;
}

static QrStatus qr_run_bind(QrGraph *g) {
    for (int ni = 0; ni < g->n_nodes; ni++) QR_TRY(qr__run_bind_node(g, &g->nodes[ni]));
    return QR_OK;
}

static QrStatus qr_run_load(const char *path, QrGraph **out) {
    QR_TRY(qr_onnx_read(path, out));
    QrStatus st = qr_run_bind(*out);
    if (st != QR_OK) { qr_graph_free(*out); free(*out); *out = NULL; }
    return st;
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_run_load_buffer(const char *path, const char *dir, const unsigned char *buf, size_t len,
                                       QrGraph **out) {
    QR_TRY(qr_onnx_read_buffer(path, dir, buf, len, out));
    QrStatus st = qr_run_bind(*out);
    if (st != QR_OK) { qr_graph_free(*out); free(*out); *out = NULL; }
    return st;
}
#endif

static QrStatus qr_run_add_node(QrGraph *g, const char *name, const char *op_type, const char *domain, int n_in,
                                const int *in, int n_out, const int *out, int n_attr, const QrAttr *attr, int *idx) {
    const QrOpDef *d = qr_op_find(domain ? domain : "", op_type);
    if (!d) return qr_errf(QR_ERR_UNSUPPORTED, "node '%s': operator %s is not implemented", name, op_type);
    int at;
    QR_TRY(qr_graph_add_node(g, name, op_type, domain, n_in, in, n_out, out, n_attr, attr, &at));
    g->nodes[at].def = d;
    if (idx) *idx = at;
    return QR_OK;
}

static int qr_run_unsupported(const QrGraph *g, char *buf, size_t n) {
    int count = 0;
    size_t o = 0;
    if (n) buf[0] = 0;
    for (int ni = 0; ni < g->n_nodes; ni++) {
        const QrNode *nd = &g->nodes[ni];
        if (nd->def) continue;
        count++;
        /* A contrib operator written in the default domain (QLinearAdd without com.microsoft):
         * say which domain qreport (and ONNX Runtime) know it under. */
        bool ms = !nd->domain[0] && qr_op_find("com.microsoft", nd->op_type);
        if (o < n)
            o += (size_t)snprintf(buf + o, n - o, "%s%s%s%s (node '%s'%s%s%s)", count > 1 ? ", " : "",
                                  nd->domain[0] ? nd->domain : "", nd->domain[0] ? "." : "", nd->op_type, nd->name,
                                  ms ? "; it is in the default domain, com.microsoft." : "", ms ? nd->op_type : "",
                                  ms ? " is supported: set the node's domain to com.microsoft" : "");
    }
    return count;
}

static QrStatus qr_run_check_supported(const QrGraph *g) {
    char list[1536];
    int n = qr_run_unsupported(g, list, sizeof list);
    if (n == 0) return QR_OK;
    return qr_errf(QR_ERR_UNSUPPORTED, "%s: %d node%s use%s operators qreport does not support: %s", g->path, n,
                   n == 1 ? "" : "s", n == 1 ? "s" : "", list);
}

/* The symbolic dims every command binds (qr_run_input_shapes_bound). A name the user bound wins;
 * one that inputs bind to different sizes is kept with both to name them in the error. */
typedef struct QrRunDims {
    const char *name[64];
    int64_t value[64];
    const char *from[64];       /* the input that bound it, NULL: --dim or derived */
    const char *clash[64];      /* another input binding it to another size (unusable) */
    int64_t clash_value[64];
    int n;
} QrRunDims;

static int qr__run_dim_find(const QrRunDims *d, const char *name) {
    for (int k = 0; k < d->n; k++) if (!strcmp(d->name[k], name)) return k;
    return -1;
}

static void qr__run_dim_add(QrRunDims *d, const char *name, int64_t v, const char *from) {
    int k = qr__run_dim_find(d, name);
    if (k < 0 && d->n < QR_ARRAY_LEN(d->name)) {
        k = d->n++;
        d->name[k] = name;
        d->value[k] = v;
        d->from[k] = from;
        d->clash[k] = NULL;
        return;
    }
    if (k >= 0 && from && d->from[k] && d->value[k] != v && !d->clash[k]) { d->clash[k] = from; d->clash_value[k] = v; }
}

/* The value of a bound, unambiguous dim, or -1. */
static int64_t qr__run_dim_get(const QrRunDims *d, const char *name) {
    int k = qr__run_dim_find(d, name);
    return k >= 0 && !d->clash[k] ? d->value[k] : -1;
}

/* "--dim a=N --dim b=N ...": every named dynamic dim of the inputs not given that d does not bind (the
 * builder's total_sequence_length noted as derived from past_sequence_length + sequence_length). */
static void qr__run_dims_unbound(const QrGraph *g, const QrTensor *const *given, const QrRunDims *d, char *buf, size_t n) {
    const char *seen[64];
    int ns = 0;
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        const QrValue *v = &g->values[g->inputs[i]];
        if ((given && given[i]) || !v->has_decl) continue;
        for (int k = 0; k < v->decl_rank; k++) {
            const char *dn = v->decl_dims[k] < 0 ? v->decl_dim_names[k] : NULL;
            if (!dn || !dn[0] || qr__run_dim_find(d, dn) >= 0) continue;
            bool dup = false;
            for (int j = 0; j < ns; j++) dup |= !strcmp(seen[j], dn);
            if (dup || ns == QR_ARRAY_LEN(seen)) continue;
            seen[ns++] = dn;
        }
    }
    bool past = false, seq = false;
    for (int j = 0; j < ns; j++) { past |= !strcmp(seen[j], "past_sequence_length"); seq |= !strcmp(seen[j], "sequence_length"); }
    for (int j = 0; j < ns && o < n; j++) {
        if (past && seq && !strcmp(seen[j], "total_sequence_length")) continue;   /* derived */
        o += (size_t)snprintf(buf + o, n - o, "%s--dim %s=N", o ? " " : "", seen[j]);
    }
    if (past && seq && o < n) snprintf(buf + o, n - o, "; total_sequence_length = past_sequence_length + sequence_length");
}

static QrStatus qr_run_input_shapes_bound(const QrGraph *g, const QrTensor *const *given, const QrDimBind *dims,
                                            int n_dims, QrTensor *out) {
    QrRunDims d;
    d.n = 0;
    for (int k = 0; k < n_dims; k++) qr__run_dim_add(&d, dims[k].name, dims[k].value, NULL);
    for (int i = 0; given && i < g->n_inputs; i++) {
        const QrValue *v = &g->values[g->inputs[i]];
        if (!given[i] || !v->has_decl || v->decl_rank != given[i]->rank) continue;
        for (int k = 0; k < v->decl_rank; k++)
            if (v->decl_dims[k] < 0 && v->decl_dim_names[k] && v->decl_dim_names[k][0])
                qr__run_dim_add(&d, v->decl_dim_names[k], given[i]->dims[k], v->name);
    }
    /* onnxruntime-genai's builder: total_sequence_length = past_sequence_length + sequence_length */
    int64_t past = qr__run_dim_get(&d, "past_sequence_length"), seq = qr__run_dim_get(&d, "sequence_length"),
            tot = qr__run_dim_get(&d, "total_sequence_length");
    if (past < 0 && seq >= 0 && tot >= seq && qr__run_dim_find(&d, "past_sequence_length") < 0)
        qr__run_dim_add(&d, "past_sequence_length", tot - seq, NULL);
    if (tot < 0 && seq >= 0 && past >= 0 && qr__run_dim_find(&d, "total_sequence_length") < 0)
        qr__run_dim_add(&d, "total_sequence_length", past + seq, NULL);
    if (seq < 0 && past >= 0 && tot >= past && qr__run_dim_find(&d, "sequence_length") < 0)
        qr__run_dim_add(&d, "sequence_length", tot - past, NULL);
    for (int i = 0; i < g->n_inputs; i++) {
        const QrValue *v = &g->values[g->inputs[i]];
        memset(&out[i], 0, sizeof out[i]);
        if (given && given[i]) {
            QR_TRY(qr_tensor_set_shape(&out[i], given[i]->dtype, given[i]->rank, given[i]->dims));
            continue;
        }
        if (!v->has_decl || v->decl_rank < 0)
            return qr_errf(QR_ERR_INVALID, "%s: input '%s' has no declared shape; give one with --shape %s=1x3x224x224",
                           g->path, v->name, v->name);
        int64_t shape[QR_MAX_RANK];
        for (int k = 0; k < v->decl_rank; k++) {
            shape[k] = v->decl_dims[k];
            if (shape[k] >= 0) continue;
            const char *dn = v->decl_dim_names[k] && v->decl_dim_names[k][0] ? v->decl_dim_names[k] : NULL;
            int j = dn ? qr__run_dim_find(&d, dn) : -1;
            if (j >= 0 && d.clash[j])
                return qr_errf(QR_ERR_INVALID, "%s: input '%s' dimension %d ('%s') cannot be bound: input '%s' has it %lld "
                               "and input '%s' %lld; give it with --dim %s=N or the input with -i %s=FILE", g->path,
                               v->name, k, dn, d.from[j], (long long)d.value[j], d.clash[j], (long long)d.clash_value[j],
                               dn, v->name);
            if (j >= 0) { shape[k] = d.value[j]; continue; }
            if (dn) {
                char all[512];
                qr__run_dims_unbound(g, given, &d, all, sizeof all);
                return qr_errf(QR_ERR_INVALID, "%s: input '%s' has a dynamic dimension %d ('%s') that no input given binds; "
                               "give the input with -i %s=FILE, its shape with --shape %s=..., or the dimension with "
                               "--dim %s=N (every dimension the inputs given leave unbound: %s)", g->path, v->name, k, dn,
                               v->name, v->name, dn, all);
            }
            return qr_errf(QR_ERR_INVALID, "%s: input '%s' has a dynamic dimension %d (unnamed); give the input with "
                           "-i %s=FILE or its shape with --shape %s=...", g->path, v->name, k, v->name, v->name);
        }
        QrStatus st = qr_tensor_set_shape(&out[i], v->decl_dtype, v->decl_rank, shape);
        if (st != QR_OK) return qr_err_wrap(st, "%s: input '%s'", g->path, v->name);
    }
    return QR_OK;
}

static QrStatus qr_run_check_input(const QrGraph *g, int i, const QrTensor *t) {
    const QrValue *v = &g->values[g->inputs[i]];
    char a[128], b[128];
    if (!v->has_decl) return QR_OK;
    if (v->decl_dtype != t->dtype)
        return qr_errf(QR_ERR_INVALID, "%s: input '%s' must be %s, got %s", g->path, v->name,
                       qr_dtype_name(v->decl_dtype), qr_dtype_name(t->dtype));
    if (v->decl_rank < 0) return QR_OK;
    bool ok = v->decl_rank == t->rank;
    for (int d = 0; ok && d < t->rank; d++) ok = v->decl_dims[d] < 0 || v->decl_dims[d] == t->dims[d];
    if (!ok) {
        int64_t dd[QR_MAX_RANK];
        for (int d = 0; d < v->decl_rank; d++) dd[d] = v->decl_dims[d];
        return qr_errf(QR_ERR_SHAPE, "%s: input '%s' must have shape %s (-1 = any), got %s", g->path, v->name,
                       qr_shape_str_brackets(a, sizeof a, v->decl_rank, dd),
                       qr_shape_str_brackets(b, sizeof b, t->rank, t->dims));
    }
    return QR_OK;
}

/* Builds the op context for node n over the tensors in vals (one per value). */
static QrStatus qr__run_ctx_init(QrOpCtx *c, const QrGraph *g, const QrNode *n, QrTensor *vals, QrArena *scratch,
                             const QrTensor **in, QrTensor **out) {
    c->g = g;
    c->node = n;
    c->n_in = n->n_in;
    c->n_out = n->n_out;
    c->scratch = scratch;
    c->alias = NULL;
    c->prep = NULL;
    c->prep_user = NULL;
    for (int k = 0; k < n->n_in; k++) in[k] = n->in[k] >= 0 ? &vals[n->in[k]] : NULL;
    for (int k = 0; k < n->n_out; k++) out[k] = n->out[k] >= 0 ? &vals[n->out[k]] : NULL;
    c->in = in;
    c->out = out;
    return QR_OK;
}

static QrStatus qr_run_infer(QrGraph *g, const QrTensor *inputs) {
    QR_TRY(qr_run_check_supported(g));
    for (int i = 0; i < g->n_values; i++) {
        QrValue *v = &g->values[i];
        if (v->is_folded) { qr_tensor_free_data(&v->t); v->is_folded = false; }
        v->is_dynamic = false;
        v->is_const = v->is_init;
        if (!v->is_init) memset(&v->t, 0, sizeof v->t);
    }
    for (int i = 0; i < g->n_inputs; i++) {
        QrValue *v = &g->values[g->inputs[i]];
        QR_TRY(qr_tensor_set_shape(&v->t, inputs[i].dtype, inputs[i].rank, inputs[i].dims));
        /* Small inputs given with data (e.g. a shape tensor) are known values. */
        if (inputs[i].data && inputs[i].numel <= QR_FOLD_MAX_ELEMS) {
            QR_TRY(qr_tensor_alloc_data(&v->t));
            memcpy(v->t.data, inputs[i].data, qr_tensor_nbytes(&v->t));
            v->is_folded = true;
        }
    }
    QrTensor *vals = malloc((size_t)(g->n_values + 1) * sizeof *vals);
    const QrTensor **in = malloc((size_t)g->max_io * sizeof *in);
    QrTensor **out = malloc((size_t)g->max_io * sizeof *out);
    QrArena scratch = {0};
    QrStatus st = vals && in && out ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int oi = 0; st == QR_OK && oi < g->n_nodes; oi++) {
        const QrNode *n = &g->nodes[g->order[oi]];
        for (int k = 0; k < n->n_in; k++) if (n->in[k] >= 0) vals[n->in[k]] = g->values[n->in[k]].t;
        for (int k = 0; k < n->n_out; k++) if (n->out[k] >= 0) memset(&vals[n->out[k]], 0, sizeof(QrTensor));
        QrOpCtx c;
        qr__run_ctx_init(&c, g, n, vals, &scratch, in, out);
        bool dynamic = false;
        for (int k = 0; k < n->n_in; k++) if (n->in[k] >= 0 && g->values[n->in[k]].is_dynamic) dynamic = true;
        for (int k = 0; k < n->n_in && st == QR_OK && !dynamic; k++)
            if (in[k] && !qr_dtype_supported(in[k]->dtype))
                st = qr_op_fail(&c, QR_ERR_INVALID, "input %d ('%s') has no known type", k, g->values[n->in[k]].name);
        if (st != QR_OK) break;
        if (!dynamic) {
            st = n->def->shape(&c);
            if (st == QR_ERR_DYNAMIC) { dynamic = true; st = QR_OK; qr_err_clear(); }
        }
        if (dynamic) {
            /* Data-dependent: shapes downstream are computed when the graph runs. */
            for (int k = 0; k < n->n_out; k++)
                if (n->out[k] >= 0) { memset(&g->values[n->out[k]].t, 0, sizeof(QrTensor)); g->values[n->out[k]].is_dynamic = true; }
            continue;
        }
        if (st != QR_OK) break;
        bool foldable = !(n->def->flags & QR_OPF_NO_FOLD);
        if (!(n->def->flags & QR_OPF_SHAPE_ONLY))
            for (int k = 0; k < n->n_in; k++) if (in[k] && !in[k]->data) foldable = false;
        for (int k = 0; k < n->n_out; k++) {
            if (!out[k]) continue;
            if (!qr_dtype_supported(out[k]->dtype))
                st = qr_op_fail(&c, QR_ERR_INVALID, "shape inference gave output %d no type", k);
            if (out[k]->numel > QR_FOLD_MAX_ELEMS) foldable = false;
        }
        for (int k = 0; st == QR_OK && foldable && k < n->n_out; k++) if (out[k]) st = qr_tensor_alloc_data(out[k]);
        if (st == QR_OK && foldable) st = n->def->exec(&c);
        /* Constant-ness ignores input data: Shape-like ops only read shapes. */
        bool is_const = foldable;
        if (!(n->def->flags & QR_OPF_SHAPE_ONLY))
            for (int k = 0; k < n->n_in; k++) if (n->in[k] >= 0 && !g->values[n->in[k]].is_const) is_const = false;
        for (int k = 0; k < n->n_out; k++) {
            if (!out[k]) continue;
            QrValue *v = &g->values[n->out[k]];
            v->t = *out[k];
            v->is_folded = foldable && st == QR_OK;
            v->is_const = v->is_folded && is_const;
            if (!v->is_folded && v->t.data) qr_tensor_free_data(&v->t);
        }
        qr_arena_clear(&scratch);
    }
    qr_arena_free(&scratch);
    free(vals);
    free(in);
    free(out);
    if (st == QR_OK) g->shapes_inferred = true;
    return st;
}

/* ==== executor ==================================================================== */

static bool qr__run_clamped(const QrRunOpts *o, int v) {
    return o->clamp_lo && o->alias && o->alias[v] >= 0 && (o->clamp_lo[v] == o->clamp_lo[v] || o->clamp_hi[v] == o->clamp_hi[v]);
}

/* Follows alias chains; returns the value whose data v takes (itself if none).
 * Clamped aliases are materialized values of their own. */
static int qr__run_resolve(const QrRunOpts *o, int v) {
    for (int hops = 0; o->alias && o->alias[v] >= 0 && !qr__run_clamped(o, v) && hops < 64; hops++) v = o->alias[v];
    return v;
}

static bool qr__run_overridden(const QrRunOpts *o, int v) {
    return (o->alias && o->alias[v] >= 0) || (o->subst && o->subst[v]);
}

/* Value v is changed in place by opts->edit after its node runs. */
static bool qr__run_edited(const QrRunOpts *o, int v) { return o->edit && o->edit_on && o->edit_on[v]; }

/* The tensor a reader of value v sees. */
static const QrTensor *qr__run_read(const QrRunOpts *o, QrTensor *vals, int v) {
    if (o->subst && o->subst[v]) return o->subst[v];
    if (o->feed && o->feed[v]) return o->feed[v];
    if (qr__run_clamped(o, v)) return &vals[v];
    int r = qr__run_resolve(o, v);
    if (r != v && o->subst && o->subst[r]) return o->subst[r];
    if (r != v && o->feed && o->feed[r]) return o->feed[r];
    return &vals[r];
}

/* What a tap sees for value v: the value as computed (feeds are for readers only). */
static const QrTensor *qr__run_tap_view(const QrRunOpts *o, QrTensor *vals, int v) {
    if (o->feed && o->feed[v] && !(o->subst && o->subst[v]) && vals[v].data) return &vals[v];
    return qr__run_read(o, vals, v);
}

/* ==== value buffers =================================================================
 * Node outputs come from a pool of buffers that outlives a run: a model's values have the
 * same sizes run after run, so after the first run nothing is allocated and no page is
 * faulted in. A request takes the smallest idle buffer that fits without wasting more
 * than half of it. A run recycles its own buffers, so what stays idle afterwards is about
 * its peak of live values (a few MB to tens of MB for 224x224 CNNs); idle buffers are
 * capped at QR__RUN_POOL_IDLE bytes in total, beyond which they go back to the system. */

#define QR__RUN_POOL_IDLE ((size_t)96 << 20)

/* The idle cap in force (qr_run_pool_set_idle; --max-memory sets 0 so that the memory
 * estimate, which counts live values only, bounds the process). */
static size_t qr__run_pool_idle = QR__RUN_POOL_IDLE;

typedef struct QrRunBlk { void *p; size_t cap; } QrRunBlk;

static struct {
    pthread_mutex_t mu;
    QrRunBlk *b;
    int n, cap;
    size_t bytes;
} qr__run_pool = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* A buffer of at least `bytes` bytes (plus qr_aligned_alloc's readable padding); its
 * capacity goes to *cap. NULL when memory is exhausted. */
static void *qr__run_buf_get(size_t bytes, size_t *cap) {
    bytes = bytes ? bytes : 1;
    pthread_mutex_lock(&qr__run_pool.mu);
    int best = -1;
    for (int i = 0; i < qr__run_pool.n; i++) {
        size_t c = qr__run_pool.b[i].cap;
        if (c >= bytes && c / 2 <= bytes + 4096 && (best < 0 || c < qr__run_pool.b[best].cap)) best = i;
    }
    if (best >= 0) {
        void *p = qr__run_pool.b[best].p;
        *cap = qr__run_pool.b[best].cap;
        qr__run_pool.bytes -= *cap;
        qr__run_pool.b[best] = qr__run_pool.b[--qr__run_pool.n];
        pthread_mutex_unlock(&qr__run_pool.mu);
        return p;
    }
    pthread_mutex_unlock(&qr__run_pool.mu);
    size_t c = bytes > SIZE_MAX - 4096 ? bytes : (bytes + 4095) & ~(size_t)4095;
    void *p = qr_aligned_alloc(c);
    *cap = p ? c : 0;
    return p;
}

/* Returns a buffer to the pool (frees it when the pool is full). */
static void qr__run_buf_put(void *p, size_t cap) {
    pthread_mutex_lock(&qr__run_pool.mu);
    if (qr__run_pool.bytes + cap <= qr__run_pool_idle) {
        if (qr__run_pool.n == qr__run_pool.cap) {
            int nc = qr__run_pool.cap ? 2 * qr__run_pool.cap : 64;
            QrRunBlk *nb = realloc(qr__run_pool.b, (size_t)nc * sizeof *nb);
            if (nb) { qr__run_pool.b = nb; qr__run_pool.cap = nc; }
        }
        if (qr__run_pool.n < qr__run_pool.cap) {
            qr__run_pool.b[qr__run_pool.n++] = (QrRunBlk){ p, cap };
            qr__run_pool.bytes += cap;
            p = NULL;
        }
    }
    pthread_mutex_unlock(&qr__run_pool.mu);
    qr_aligned_free(p);
}

static void qr_run_pool_set_idle(size_t bytes) {
    pthread_mutex_lock(&qr__run_pool.mu);
    qr__run_pool_idle = bytes;
    pthread_mutex_unlock(&qr__run_pool.mu);
    if (!bytes) qr_run_release();
}

static void qr_run_release(void) {
    pthread_mutex_lock(&qr__run_pool.mu);
    for (int i = 0; i < qr__run_pool.n; i++) qr_aligned_free(qr__run_pool.b[i].p);
    free(qr__run_pool.b);
    qr__run_pool.b = NULL;
    qr__run_pool.n = qr__run_pool.cap = 0;
    qr__run_pool.bytes = 0;
    pthread_mutex_unlock(&qr__run_pool.mu);
}

/* Operators whose float32 kernels write every output element: their outputs need no
 * zeroing (the others get zeroed buffers, as qr_tensor_alloc_data gives). */
static bool qr__run_writes_all(const QrNode *n) {
    static const char *const ops[] = { "Conv", "Relu", "Clip", "Add", "Sub", "Mul", "Div", "BatchNormalization",
                                       "QuantizeLinear", "DequantizeLinear", "MaxPool", "GlobalAveragePool" };
    if (n->def && (n->def->flags & QR_OPF_WRITES_ALL)) return true;
    if (n->domain[0]) return false;
    for (int i = 0; i < QR_ARRAY_LEN(ops); i++) if (!strcmp(n->op_type, ops[i])) return true;
    return false;
}

#ifdef QR_TESTING
/* Tests: the buffers of outputs that are not zeroed (their operators write every element,
 * qr__run_writes_all) are filled with 0xff bytes (a NaN in every float) first, so that an
 * element such an operator leaves unwritten shows in its output. */
QR_TESTAPI bool qr_run_test_poison;
#endif

/* Gives t (shape set) a pooled buffer, zeroed when `zero`; *cap records it for qr__run_drop. */
static QrStatus qr__run_alloc(QrTensor *t, size_t *cap, bool zero) {
    size_t n = qr_tensor_nbytes(t);
    t->data = qr__run_buf_get(n, cap);
    if (!t->data) return qr_errf(QR_ERR_NOMEM, "cannot allocate %zu bytes for a tensor", n);
#ifdef QR_TESTING
    if (!zero && qr_run_test_poison) memset(t->data, 0xff, n);
#endif
    if (zero) memset(t->data, 0, n);
    t->owned = false;
    return QR_OK;
}

/* Releases value v's data: back to the pool, or freed when owned. */
static void qr__run_drop(QrTensor *vals, size_t *cap, int v) {
    if (cap[v]) {
        qr__run_buf_put(vals[v].data, cap[v]);
        cap[v] = 0;
        vals[v].data = NULL;
    } else if (vals[v].owned) {
        qr_tensor_free_data(&vals[v]);
    }
}

/* ==== constant cache ================================================================= */

/* Data an op prepared for node `node` and its key (QrOpCtx.prep), kept with the constants. */
typedef struct QrRunPrep {
    int node;
    uint64_t key;
    size_t bytes;
    void *data;
} QrRunPrep;

struct QrRunCache {
    const QrGraph *g;
    QrTensor *t;          /* per value: data when cached (set once, then read-only) */
    QrRunPrep *prep;      /* prepared data, n_prep of cap_prep (set once each, then read-only) */
    int n_prep, cap_prep;
    bool keep_prep;       /* qr_run_cache_keep_prep: ops' prepared data is kept (else none is) */
    size_t bytes;
    pthread_mutex_t mu;   /* runs sharing the cache may run concurrently */
};

static QrRunCache *qr_run_cache_new(const QrGraph *g) {
    QrRunCache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->g = g;
    pthread_mutex_init(&c->mu, NULL);
    c->t = calloc((size_t)g->n_values + 1, sizeof *c->t);
    if (!c->t) { free(c); return NULL; }
    return c;
}

static void qr_run_cache_keep_prep(QrRunCache *c) {
    if (c) c->keep_prep = true;
}

static void qr_run_cache_free(QrRunCache *c) {
    if (!c) return;
    for (int v = 0; v < c->g->n_values; v++) qr_aligned_free(c->t[v].data);
    for (int i = 0; i < c->n_prep; i++) qr_aligned_free(c->prep[i].data);
    free(c->prep);
    pthread_mutex_destroy(&c->mu);
    free(c->t);
    free(c);
}

#ifdef QR_TESTING
QR_TESTAPI size_t qr_run_cache_bytes(const QrRunCache *c) { return c ? c->bytes : 0; }
#endif

static const QrTensor *qr_run_cache_get(const QrRunCache *c, int v) {
    if (!c || v < 0 || v >= c->g->n_values) return NULL;
    pthread_mutex_lock((pthread_mutex_t *)&c->mu);
    const QrTensor *t = c->t[v].data ? &c->t[v] : NULL;
    pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
    return t;
}

static bool qr_run_uncached(const QrGraph *g, int v) {
    int p = v >= 0 && v < g->n_values ? g->values[v].producer : -1;
    if (p < 0) return false;
    const QrNode *n = &g->nodes[p];
    /* the twin's BlockDequant (quant/twin_wq.c) is a weight-only node's dequantized weight: cached,
     * every MatMulNBits weight of an LLM in float32 (1.8 GB for 0.5B parameters) */
    bool dq = !strcmp(n->op_type, "DequantizeLinear") || (!strcmp(n->op_type, "BlockDequant") && !strcmp(n->domain, QR_QUANT_INT_DOMAIN));
    if (!dq || n->n_in < 1 || n->in[0] < 0) return false;
    const QrValue *x = &g->values[n->in[0]];
    return x->is_init && x->t.numel > QR_FOLD_MAX_ELEMS;
}

/* Per value of this run: true when it depends only on initializers and constants, with no
 * override on the way (so the cache's copy, if any, is what this run would compute). */
static void qr__run_statics(const QrGraph *g, const QrRunOpts *o, bool *st) {
    for (int v = 0; v < g->n_values; v++)
        st[v] = g->values[v].is_init && !qr__run_overridden(o, v) && !(o->feed && o->feed[v]) && !qr__run_clamped(o, v) &&
                !qr__run_edited(o, v);
    for (int oi = 0; oi < g->n_nodes; oi++) {
        const QrNode *n = &g->nodes[g->order[oi]];
        bool ok = n->def && !(n->def->flags & QR_OPF_NO_FOLD) && (!o->live || o->live[g->order[oi]]);
        for (int k = 0; ok && k < n->n_in; k++) ok = n->in[k] < 0 || st[n->in[k]];
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v >= 0)
                st[v] = ok && !qr__run_overridden(o, v) && !(o->feed && o->feed[v]) && !g->values[v].is_dynamic &&
                        !qr__run_edited(o, v);
        }
    }
}

static void qr_run_statics(const QrGraph *g, const QrRunOpts *o, bool *st) { qr__run_statics(g, o, st); }

static uint64_t qr_run_prep_bytes(const QrGraph *g) {
    bool *st = malloc((size_t)g->n_values + 1);
    if (!st) return 0;
    const QrRunOpts none = {0};
    qr__run_statics(g, &none, st);   /* the constants of a run without overrides: what qr__run_prep accepts */
    uint64_t s = 0;
    for (int ni = 0; ni < g->n_nodes; ni++) {
        const QrNode *n = &g->nodes[ni];
        if (n->n_in > 1 && n->in[1] >= 0 && st[n->in[1]] && !qr_run_uncached(g, n->in[1])) s += qr_nn_conv_prep_bytes(g, n);
    }
    free(st);
    return s;
}

/* ==== fusion ========================================================================
 * A chain is a head node and the elementwise nodes that follow it, each reading the
 * previous one's output as its only reader (see qr_run in run.h). The plan is made per run
 * from the graph's inferred shapes and the run's options; the steps' parameters are the
 * tensors the layers would read (initializers, substitutions, feeds, folded Constants,
 * through Identity nodes), so they are known before the run starts. */

#define QR__RUN_CHAIN_MAX 32

/* MATMUL: a MatMul whose Add of a per-column constant is done in its GEMM's epilogue (lastb). */
typedef enum QrRunHeadKind { QR__HEAD_GENERIC, QR__HEAD_CONV, QR__HEAD_FQ, QR__HEAD_MATMUL } QrRunHeadKind;

typedef struct QrRunChain {
    QrRunHeadKind kind;
    int n;                              /* nodes, head first, in execution order */
    int nodes[QR__RUN_CHAIN_MAX];
    int ns;
    QrF32Step steps[QR_F32_MAX_STEPS];
    int t_value[QR_F32_MAX_STEPS];      /* ADD_T: the value it adds (data bound when the chain runs) */
    int axis;                           /* channel axis of the per-channel steps (-1: none yet) */
    int x;                              /* FQ head: the value its QuantizeLinear reads */
    const float *lastb;                 /* MATMUL head: one value per column of its output, added */
    int gelu_at;                        /* >= 0: the exact GELU (qr_ew_gelu_erf_run) runs before steps[gelu_at] */
    float gelu_c[3];                    /* its divisor, addend and factor */
    bool lastb_swap;                    /* lastb + product (the Add's first input is the constant) */
    int out;                            /* the value the chain produces */
    int pair_c;                         /* >= 0: the depthwise Conv chain it runs with (qr__run_plan_pairs) */
    int pair_node;                      /* >= 0: the MaxPool node it runs with */
    int pair_p;                         /* >= 0: the Conv chain it runs with (first), as a pair */
} QrRunChain;

/* A weight's DequantizeLinear fused into the MatMul / Gemm that reads its output as B
 * (qr__run_plan_dq): the DequantizeLinear computes only its output's shape, the reader gets the
 * integers (qb) and the GEMM dequantizes B's panels as it packs them: no float copy of the weight. */
typedef struct QrRunDqFuse {
    int dq, reader, out;                /* the DequantizeLinear, its reader, its output value */
    bool off;                           /* the run's shapes or tensors were not the plan's: both ran as nodes */
    QrF32QuantB qb;
} QrRunDqFuse;

typedef struct QrRunPlan {
    QrRunChain *chains;
    int n, cap;
    int *chain_of;                      /* per node: its chain, or -1 */
    int *pos;                           /* per node: position in the topological order */
    QrArena mem;                        /* converted parameters (zero points, BN coefficients) */
    QrRunDqFuse *dqf;                   /* fused DequantizeLinear -> MatMul / Gemm pairs */
    int n_dqf;
    int *dqf_of;                        /* per node (NULL: none fused): its pair in dqf (both nodes), or -1 */
    int *pool_pair;                     /* per node (NULL: none): the Conv chain a MaxPool runs with, or -1 */
} QrRunPlan;

static void qr__run_plan_free(QrRunPlan *pl) {
    free(pl->chains);
    free(pl->chain_of);
    free(pl->pos);
    free(pl->dqf);
    free(pl->dqf_of);
    free(pl->pool_pair);
    qr_arena_free(&pl->mem);
    memset(pl, 0, sizeof *pl);
}

/* The tensor every reader of v sees during the whole run when it does not depend on the
 * run's inputs: a substitution or feed, an initializer, a folded Constant, or one of those
 * through aliases and Identity nodes. NULL otherwise. */
static const QrTensor *qr__run_static(const QrGraph *g, const QrRunOpts *o, int v) {
    for (int hops = 0; v >= 0 && hops < 16; hops++) {
        if (o->subst && o->subst[v]) return o->subst[v];
        if (o->feed && o->feed[v]) return o->feed[v];
        if (qr__run_clamped(o, v)) return NULL;
        if (o->alias && o->alias[v] >= 0) { v = o->alias[v]; continue; }
        const QrValue *val = &g->values[v];
        if (val->is_init) return val->t.data ? &val->t : NULL;
        if (val->producer < 0) return NULL;
        const QrNode *p = &g->nodes[val->producer];
        if (p->domain[0]) return NULL;
        if (!strcmp(p->op_type, "Identity") && p->n_in >= 1) { v = p->in[0]; continue; }
        if (!strcmp(p->op_type, "Constant") && val->is_folded && val->t.data) return &val->t;
        return NULL;
    }
    return NULL;
}

/* Node ni runs in this run with every output computed (not skipped, none overridden). */
static bool qr__run_node_runs(const QrGraph *g, const QrRunOpts *o, int ni) {
    const QrNode *n = &g->nodes[ni];
    if (!n->def || (o->live && !o->live[ni])) return false;
    for (int k = 0; k < n->n_out; k++) if (n->out[k] >= 0 && qr__run_overridden(o, n->out[k])) return false;
    return true;
}

/* Marks in dead[] the nodes none of whose outputs is needed: a graph output, tapped (or the
 * source of a tapped alias), or read by a node that is not dead itself (walked in reverse
 * topological order, so whole chains go, e.g. the activation DequantizeLinear nodes the int-mode
 * lowering keeps for taps, in a run without taps). Dead nodes are skipped like nodes that are not live. uses: reader counts after
 * overrides as qr_run keeps them (the graph outputs count as readers: their values stay to the
 * end); outputs: whether the run returns the graph outputs (else they are not needed);
 * need: g->n_values ints of scratch. */
static void qr__run_dead(const QrGraph *g, const QrRunOpts *o, const int *uses, bool outputs, int *need, bool *dead) {
    memcpy(need, uses, (size_t)g->n_values * sizeof *need);
    /* a run without outputs (taps only) needs no node that feeds only the graph outputs */
    for (int i = 0; !outputs && i < g->n_outputs; i++) need[qr__run_resolve(o, g->outputs[i])]--;
    /* a tapped value that takes another's data (an alias) needs that one */
    for (int v = 0; o->tap && o->alias && v < g->n_values; v++)
        if (!o->tap_only || o->tap_only[v]) {
            const int src = qr__run_resolve(o, v);
            if (src != v) need[src]++;
        }
    for (int oi = g->n_nodes - 1; oi >= 0; oi--) {
        const int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        bool any = false, used = false;
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0) continue;
            any = true;
            if (need[v] > 0 || (o->tap && (!o->tap_only || o->tap_only[v]))) used = true;
        }
        dead[ni] = any && !used;
        for (int k = 0; dead[ni] && k < n->n_in; k++)
            if (n->in[k] >= 0) need[qr__run_resolve(o, n->in[k])]--;
    }
}

/* The one output of node n (its other outputs omitted), or -1. */
static int qr__run_single_out(const QrNode *n) {
    int v = -1;
    for (int k = 0; k < n->n_out; k++) {
        if (n->out[k] < 0) continue;
        if (v >= 0 || k > 0) return -1;
        v = n->out[k];
    }
    return v;
}

/* Value v may stay unmaterialized but for being read `readers` times: no output, tap, feed,
 * substitution or alias on it. */
static bool qr__run_hidden(const QrGraph *g, const QrRunOpts *o, const int *uses, int v, int readers) {
    if (v < 0 || g->values[v].is_output || g->values[v].is_dynamic || uses[v] != readers) return false;
    if (qr__run_overridden(o, v) || (o->feed && o->feed[v]) || qr__run_edited(o, v)) return false;
    return !(o->tap && !(o->tap_only && !o->tap_only[v]));
}

/* Value v may stay unmaterialized: one reader slot, which *reader / *slot receive, and
 * no output, tap, feed, substitution or alias on it. */
static bool qr__run_internal(const QrGraph *g, const QrRunOpts *o, const int *uses, int v, int *reader, int *slot) {
    if (!qr__run_hidden(g, o, uses, v, 1)) return false;
    const QrUse *u;
    if (qr_graph_readers(g, v, &u) != 1) return false;
    *reader = u[0].node;
    *slot = u[0].input;
    return true;
}

static bool qr__run_is(const QrNode *n, const char *op) { return !n->domain[0] && !strcmp(n->op_type, op); }

/* A float32 tensor of exactly shape t (metadata only). */
static bool qr__run_same_f32(const QrTensor *a, const QrTensor *t) {
    return a->dtype == QR_DT_F32 && t->dtype == QR_DT_F32 && qr_tensor_same_shape(a, t);
}

/* Q (node qi, reading a float32 value of shape y) and the DequantizeLinear reading its
 * output as one fake-quant step; *dq receives the DQ node. Sets or checks ch->axis. */
static bool qr__run_fq(const QrGraph *g, const QrRunOpts *o, const int *uses, QrRunPlan *pl, QrRunChain *ch, int qi,
                       const QrTensor *y, int *dq) {
    const QrNode *q = &g->nodes[qi];
    bool ms = !strcmp(q->domain, "com.microsoft");
    if ((q->domain[0] && !ms) || strcmp(q->op_type, "QuantizeLinear") || q->n_in < 2 || q->in[0] < 0 || q->in[1] < 0)
        return false;
    if (qr_attr_int(q, "block_size", 0) != 0 || qr_attr_int(q, "precision", 0) > 1) return false;
    if (y->dtype != QR_DT_F32 || ch->ns >= QR_F32_MAX_STEPS) return false;
    int qv = qr__run_single_out(q), di, ds;
    if (qv < 0 || !qr__run_internal(g, o, uses, qv, &di, &ds) || ds != 0 || !qr__run_node_runs(g, o, di)) return false;
    const QrNode *d = &g->nodes[di];
    if (strcmp(d->domain, q->domain) || strcmp(d->op_type, "DequantizeLinear") || d->n_in < 2 || d->in[1] < 0 ||
        qr__run_single_out(d) < 0)
        return false;
    if (qr_attr_int(d, "block_size", 0) != 0 || (qr_attr_int(d, "output_dtype", 0) != 0 && qr_attr_int(d, "output_dtype", 0) != QR_DT_F32))
        return false;
    const QrTensor *qs = qr__run_static(g, o, q->in[1]), *dsc = qr__run_static(g, o, d->in[1]);
    const QrTensor *qz = q->n_in > 2 && q->in[2] >= 0 ? qr__run_static(g, o, q->in[2]) : NULL;
    const QrTensor *dz = d->n_in > 2 && d->in[2] >= 0 ? qr__run_static(g, o, d->in[2]) : NULL;
    if (!qs || !dsc || qs->dtype != QR_DT_F32 || dsc->dtype != QR_DT_F32 || qs->numel < 1 || qs->numel != dsc->numel ||
        memcmp(qs->data, dsc->data, (size_t)qs->numel * sizeof(float)))
        return false;
    if ((q->n_in > 2 && q->in[2] >= 0 && !qz) || (d->n_in > 2 && d->in[2] >= 0 && !dz) || !qz != !dz) return false;
    int64_t od = qr_attr_int(q, "output_dtype", 0);
    QrDType qdt = qz ? qz->dtype : od ? (QrDType)od : QR_DT_U8;
    if (od && od != (int64_t)qdt) return false;
    QrQuantRange r;
    if (qr_dtype_is_minifloat(qdt) || !qr_quant_range(qdt, &r)) return false;
    if (qz && (qz->dtype != dz->dtype || qz->numel != qs->numel || qr_tensor_nbytes(qz) != qr_tensor_nbytes(dz) ||
               memcmp(qz->data, dz->data, qr_tensor_nbytes(qz))))
        return false;
    int64_t pc = 0;
    if (qs->numel > 1) {   /* per axis: a 1-D scale along the (same) axis of both */
        int64_t ax = qr_attr_int(q, "axis", 1), axd = qr_attr_int(d, "axis", 1);
        if (ax < 0) ax += y->rank;
        if (axd < 0) axd += y->rank;
        if (ax != axd || ax < 0 || ax >= y->rank || qs->rank != 1 || qs->dims[0] != y->dims[ax]) return false;
        if (ch->axis >= 0 && ch->axis != ax) return false;
        ch->axis = (int)ax;
        pc = 1;
    }
    int32_t *zp = NULL;
    if (qz) {
        zp = qr_arena_array(&pl->mem, (size_t)qz->numel, sizeof *zp);
        if (!zp) return false;
        for (int64_t k = 0; k < qz->numel; k++) zp[k] = (int32_t)qr_tensor_get_i64(qz, k);
    }
    ch->t_value[ch->ns] = -1;
    ch->steps[ch->ns++] = (QrF32Step){ .op = QR_F32_STEP_FQ, .pc = pc, .p = qs->data, .zp = zp, .qmin = r.lo, .qmax = r.hi };
    *dq = di;
    return true;
}

/* Adds node bi (reading the chain's value v of shape y through input `slot`) to chain ch
 * as steps; a QuantizeLinear brings its DequantizeLinear along. False when it cannot be
 * fused (ch unchanged then). */
static bool qr__run_member(const QrGraph *g, const QrRunOpts *o, const int *uses, QrRunPlan *pl, QrRunChain *ch,
                           int head_pos, int bi, int slot, const QrTensor *y) {
    const QrNode *b = &g->nodes[bi];
    int bo = qr__run_single_out(b);
    if (bo < 0 || !qr__run_node_runs(g, o, bi) || ch->n + 2 > QR__RUN_CHAIN_MAX || ch->ns >= QR_F32_MAX_STEPS) return false;
    if (!qr__run_same_f32(&g->values[bo].t, y)) {
        /* only a Q -> DQ pair may pass through a non-float value */
        int dq, ns = ch->ns, axis = ch->axis;
        if (strcmp(b->op_type, "QuantizeLinear") || slot != 0 || !qr__run_fq(g, o, uses, pl, ch, bi, y, &dq)) return false;
        if (!qr__run_same_f32(&g->values[qr__run_single_out(&g->nodes[dq])].t, y)) {
            ch->ns = ns;
            ch->axis = axis;
            return false;
        }
        ch->nodes[ch->n++] = bi;
        ch->nodes[ch->n++] = dq;
        ch->out = qr__run_single_out(&g->nodes[dq]);
        return true;
    }
    QrF32Step st = { .op = QR_F32_STEP_RELU };
    int tv = -1;
    if (qr__run_is(b, "Relu")) {
        /* st is Relu already */
    } else if (qr__run_is(b, "Clip")) {
        double lo = -INFINITY, hi = INFINITY;
        if (b->opset < 11) {
            lo = qr_attr_float(b, "min", -INFINITY);
            hi = qr_attr_float(b, "max", INFINITY);
        } else {
            for (int k = 1; k < 3; k++) {
                if (k >= b->n_in || b->in[k] < 0) continue;
                const QrTensor *t = qr__run_static(g, o, b->in[k]);
                if (!t || t->numel != 1 || !qr_dtype_is_float(t->dtype)) return false;
                if (k == 1) lo = qr_tensor_get_f64(t, 0);
                else hi = qr_tensor_get_f64(t, 0);
            }
        }
        st = (QrF32Step){ .op = QR_F32_STEP_CLAMP, .lo = (float)lo, .hi = (float)hi };
    } else if ((qr__run_is(b, "Add") || qr__run_is(b, "Sub") || qr__run_is(b, "Mul") || qr__run_is(b, "Div")) &&
               b->opset >= 7 && b->n_in == 2 && b->in[0] != b->in[1]) {
        int other = b->in[1 - slot];
        const QrTensor *c = qr__run_static(g, o, other);
        const char *t = b->op_type;
        st.op = t[0] == 'A' ? QR_F32_STEP_ADD : t[0] == 'S' ? QR_F32_STEP_SUB : t[0] == 'M' ? QR_F32_STEP_MUL : QR_F32_STEP_DIV;
        st.swap = slot == 1;
        if (c && qr_ew_channel_param(c, y, &st.pc)) {
            if (st.pc && ch->axis >= 0 && ch->axis != 1) return false;
            if (st.pc) ch->axis = 1;
            st.p = c->data;
        } else if (st.op == QR_F32_STEP_ADD && qr__run_same_f32(c ? c : &g->values[other].t, y)) {
            /* a tensor of y's shape: constant, given, or computed before the head runs */
            int r = qr__run_resolve(o, other);
            bool given = (o->subst && (o->subst[other] || o->subst[r])) || (o->feed && (o->feed[other] || o->feed[r]));
            int p = qr__run_clamped(o, other) ? g->values[other].producer : g->values[r].producer;
            if (!given && p >= 0 && pl->pos[p] >= head_pos) return false;
            st.op = QR_F32_STEP_ADD_T;
            tv = other;
        } else {
            return false;
        }
    } else if (qr__run_is(b, "BatchNormalization") && slot == 0 && b->n_in == 5 && y->rank >= 2 &&
               (b->opset >= 9 || qr_attr_int(b, "spatial", 1) != 0) && qr_attr_int(b, "training_mode", 0) == 0) {
        const QrTensor *pt[4];
        int64_t C = y->dims[1];
        for (int k = 0; k < 4; k++) {
            pt[k] = b->in[k + 1] >= 0 ? qr__run_static(g, o, b->in[k + 1]) : NULL;
            if (!pt[k] || !qr_dtype_is_float(pt[k]->dtype) || pt[k]->numel != C) return false;
        }
        if (ch->axis >= 0 && ch->axis != 1) return false;
        float *fm = qr_arena_array(&pl->mem, (size_t)QR_MAX(C, 1), 2 * sizeof(float));
        if (!fm) return false;
        qr_ew_batchnorm_coeffs_f32(pt[0], pt[1], pt[2], pt[3], qr_attr_float(b, "epsilon", 1e-5f), C, fm, fm + C);
        ch->axis = 1;
        st = (QrF32Step){ .op = QR_F32_STEP_AFFINE, .pc = 1, .p = fm, .q = fm + C };
    } else {
        return false;
    }
    ch->t_value[ch->ns] = tv;
    ch->steps[ch->ns++] = st;
    ch->nodes[ch->n++] = bi;
    ch->out = bo;
    return true;
}

/* A MatMul head (ch, output y of rank >= 2, both inputs of rank >= 2) whose only reader is an
 * Add of a float32 constant with one value per column of y ([N] or [1, .., 1, N]: a Linear
 * layer's bias): the Add joins the chain as its lastb, added by the GEMM's epilogue
 * (qr_nn_matmul_bias). False when it does not apply (ch unchanged). */
static bool qr__run_lastb(const QrGraph *g, const QrRunOpts *o, const int *uses, const bool *st, const QrRunPlan *pl,
                          QrRunChain *ch, const QrTensor *y) {
    const QrNode *h = &g->nodes[ch->nodes[0]];
    int bi, slot;
    if (h->n_in != 2 || h->in[0] < 0 || h->in[1] < 0 || g->values[h->in[0]].t.rank < 2 || g->values[h->in[1]].t.rank < 2 ||
        y->rank < 2 || !qr__run_internal(g, o, uses, ch->out, &bi, &slot) || pl->chain_of[bi] >= 0)
        return false;
    const QrNode *b = &g->nodes[bi];
    const int bo = qr__run_single_out(b);
    if (bo < 0 || (st && st[bo]) || !qr__run_node_runs(g, o, bi) || !qr__run_is(b, "Add") || b->opset < 7 ||
        b->n_in != 2 || b->in[0] == b->in[1] || !qr__run_same_f32(&g->values[bo].t, y))
        return false;
    const QrTensor *c = qr__run_static(g, o, b->in[1 - slot]);
    const int64_t N = y->dims[y->rank - 1];
    if (!c || c->dtype != QR_DT_F32 || !c->data || c->rank < 1 || c->rank > y->rank || c->numel != N ||
        c->dims[c->rank - 1] != N)
        return false;
    ch->kind = QR__HEAD_MATMUL;
    ch->lastb = c->data;
    ch->lastb_swap = slot == 1;
    ch->nodes[ch->n++] = bi;
    ch->out = bo;
    return true;
}

/* One float32 value of the Constant / initializer node ni reads at input k, into *c. */
static bool qr__run_scalar(const QrGraph *g, const QrRunOpts *o, const QrNode *n, int k, float *c) {
    const QrTensor *t = n->n_in > k && n->in[k] >= 0 ? qr__run_static(g, o, n->in[k]) : NULL;
    if (!t || t->dtype != QR_DT_F32 || t->numel != 1 || !t->data) return false;
    *c = *(const float *)t->data;
    return true;
}

/* Node ni (of op type `op`, fused neither with another chain nor static) reads value v at input
 * slot and writes one float32 value of y's shape, which *out receives; the node's other input,
 * when it has two, is one float32 constant (*c). */
static bool qr__run_gelu_node(const QrGraph *g, const QrRunOpts *o, const bool *st, const QrRunPlan *pl, int ni,
                              const char *op, int v, int slot, const QrTensor *y, int *out, float *c) {
    const QrNode *n = &g->nodes[ni];
    if (!qr__run_is(n, op) || pl->chain_of[ni] >= 0 || !qr__run_node_runs(g, o, ni) || n->in[slot] != v) return false;
    *out = qr__run_single_out(n);
    if (*out < 0 || (st && st[*out]) || !qr__run_same_f32(&g->values[*out].t, y)) return false;
    if (n->n_in == 1) return true;
    return n->n_in == 2 && n->opset >= 7 && n->in[0] != n->in[1] && (!c || qr__run_scalar(g, o, n, 1 - slot, c));
}

/* The exact GELU PyTorch exports after the chain's value x (ch->out, float32 of shape y, read
 * by two nodes): Div(x, c0) -> Erf -> Add(c1) -> Mul(x) -> Mul(c2), c0..c2 single float32
 * constants, every value between them read once and by nothing else. It joins the chain as
 * its GELU (gelu_at, computed by qr_ew_gelu_erf_run with the five nodes' bits). False when it
 * does not apply (ch unchanged). */
static bool qr__run_gelu(const QrGraph *g, const QrRunOpts *o, const int *uses, const bool *st, const QrRunPlan *pl,
                         QrRunChain *ch, const QrTensor *y) {
    const int x = ch->out;
    const QrUse *u;
    if (ch->gelu_at >= 0 || ch->kind == QR__HEAD_CONV || ch->kind == QR__HEAD_FQ || ch->n + 5 > QR__RUN_CHAIN_MAX ||
        !qr__run_hidden(g, o, uses, x, 2) || qr_graph_readers(g, x, &u) != 2)
        return false;
    const int d = qr__run_is(&g->nodes[u[0].node], "Div") ? 0 : 1;
    const int di = u[d].node, mi = u[1 - d].node, mslot = u[1 - d].input;
    float c[3];
    int dv, ev, av, mv, fv, ei, es, ai, as, xi, xs, fi, fs;
    if (u[d].input != 0 || !qr__run_gelu_node(g, o, st, pl, di, "Div", x, 0, y, &dv, &c[0]) ||
        !qr__run_internal(g, o, uses, dv, &ei, &es) || !qr__run_gelu_node(g, o, st, pl, ei, "Erf", dv, 0, y, &ev, NULL) ||
        !qr__run_internal(g, o, uses, ev, &ai, &as) || !qr__run_gelu_node(g, o, st, pl, ai, "Add", ev, as, y, &av, &c[1]) ||
        !qr__run_internal(g, o, uses, av, &xi, &xs) || xi != mi || xs != 1 - mslot ||
        !qr__run_gelu_node(g, o, st, pl, mi, "Mul", x, mslot, y, &mv, NULL) || !qr__run_internal(g, o, uses, mv, &fi, &fs) ||
        !qr__run_gelu_node(g, o, st, pl, fi, "Mul", mv, fs, y, &fv, &c[2]))
        return false;
    ch->gelu_at = ch->ns;
    memcpy(ch->gelu_c, c, sizeof c);
    const int add[5] = { di, ei, ai, mi, fi };
    for (int k = 0; k < 5; k++) ch->nodes[ch->n++] = add[k];
    ch->out = fv;
    return true;
}

/* Finds the chains of this run (pl->chain_of[node] = -1 everywhere when nothing fuses). */
static QrStatus qr__run_plan(const QrGraph *g, const QrRunOpts *o, const int *uses, const bool *st, QrRunPlan *pl) {
    memset(pl, 0, sizeof *pl);
    pl->chain_of = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
    pl->pos = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
    if (!pl->chain_of || !pl->pos) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) { pl->chain_of[i] = -1; pl->pos[g->order[i]] = i; }
    if (!g->shapes_inferred || getenv("QR_NO_FUSE")) return QR_OK;
    for (int oi = 0; oi < g->n_nodes; oi++) {
        int hi = g->order[oi];
        const QrNode *h = &g->nodes[hi];
        int hv = qr__run_single_out(h);
        if (pl->chain_of[hi] >= 0 || hv < 0 || !qr__run_node_runs(g, o, hi) || g->values[hv].is_dynamic) continue;
        if (st && st[hv]) continue;   /* cached constants are materialized */
        QrRunChain ch = { .axis = -1, .x = -1, .gelu_at = -1, .pair_c = -1, .pair_p = -1, .pair_node = -1 };
        ch.nodes[ch.n++] = hi;
        ch.out = hv;
        const QrTensor *y = &g->values[hv].t;
        int dq;
        if (!strcmp(h->op_type, "QuantizeLinear")) {
            const QrTensor *x = &g->values[h->in[0] >= 0 ? h->in[0] : hv].t;
            if (h->n_in < 1 || h->in[0] < 0 || g->values[h->in[0]].is_dynamic || !qr__run_fq(g, o, uses, pl, &ch, hi, x, &dq))
                continue;
            int dv = qr__run_single_out(&g->nodes[dq]);
            if (!qr__run_same_f32(&g->values[dv].t, x)) continue;
            ch.kind = QR__HEAD_FQ;
            ch.x = h->in[0];
            ch.nodes[ch.n++] = dq;
            ch.out = dv;
            y = &g->values[dv].t;
        } else if (y->dtype != QR_DT_F32) {
            continue;
        } else if (qr__run_is(h, "Conv") && h->n_in >= 2) {
            bool f32 = true;
            for (int k = 0; k < h->n_in && k < 3; k++) f32 = f32 && (h->in[k] < 0 || g->values[h->in[k]].t.dtype == QR_DT_F32);
            if (!f32 || y->rank < 3) continue;
            ch.kind = QR__HEAD_CONV;
            ch.axis = 1;
        } else {
            ch.kind = QR__HEAD_GENERIC;
            if (qr__run_is(h, "MatMul")) qr__run_lastb(g, o, uses, st, pl, &ch, y);
        }
        for (;;) {
            int bi, slot;
            if (qr__run_gelu(g, o, uses, st, pl, &ch, y)) continue;
            if (!qr__run_internal(g, o, uses, ch.out, &bi, &slot) || pl->chain_of[bi] >= 0) break;
            if (st && qr__run_single_out(&g->nodes[bi]) >= 0 && st[qr__run_single_out(&g->nodes[bi])]) break;
            if (!qr__run_member(g, o, uses, pl, &ch, oi, bi, slot, y)) break;
        }
        if (ch.n < 2) continue;
        if (ch.axis < 0) ch.axis = 1;
        if (pl->n == pl->cap) {
            int nc = pl->cap ? 2 * pl->cap : 16;
            QrRunChain *nch = realloc(pl->chains, (size_t)nc * sizeof *nch);
            if (!nch) return qr_errf(QR_ERR_NOMEM, "out of memory");
            pl->chains = nch;
            pl->cap = nc;
        }
        for (int k = 0; k < ch.n; k++) pl->chain_of[ch.nodes[k]] = pl->n;
        pl->chains[pl->n++] = ch;
    }
    return QR_OK;
}

/* Whether MatMul / Gemm m, reading B of x's shape, runs a GEMM (which dequantizes a quantized B
 * as it packs it) by the inferred shapes, rather than a batch-1 or one-column kernel that reads
 * B as floats (ops/nn.c would dequantize the whole B first, on one thread: no gain) — except a
 * batch-1 Gemm with transB, whose kernel dequantizes in registers (qr_f32_gemv_m1t_q8). */
static bool qr__run_dq_gemm_rows(const QrGraph *g, const QrNode *m, const QrTensor *x) {
    const QrTensor *a = &g->values[m->in[0]].t;
    const bool gm = qr__run_is(m, "Gemm"), tb = gm && qr_attr_int(m, "transB", 0) != 0;
    const int64_t N = tb ? x->dims[0] : x->dims[x->rank - 1];
    if (a->rank < (gm ? 2 : 1) || N <= 1) return false;
    if (gm) return tb || a->dims[qr_attr_int(m, "transA", 0) ? 1 : 0] > 1;
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1, nb = 1;
    for (int d = 0; d + 2 < a->rank; d++) nb *= a->dims[d];
    bool b_flat = true;   /* B's batch dims all 1: one B for every matrix of A (nn.c's b_shared) */
    for (int d = 0; d + 2 < x->rank; d++) b_flat = b_flat && x->dims[d] == 1;
    return M > 1 || (nb > 1 && b_flat && a->rank >= x->rank);
}

/* Whether DequantizeLinear node di fuses into the MatMul / Gemm reading its output as B (see
 * qr__run_plan_dq); fills *fz. zero points converted to int32 go into pl->mem. */
static bool qr__run_dq_fusable(const QrGraph *g, const QrRunOpts *o, const int *uses, const bool *st,
                               const bool *dead, QrRunPlan *pl, int di, QrRunDqFuse *fz) {
    const QrNode *d = &g->nodes[di];
    const int dv = qr__run_single_out(d);
    int mi, slot;
    if (!qr__run_is(d, "DequantizeLinear") || d->n_in < 2 || d->in[0] < 0 || d->in[1] < 0 || dv < 0 ||
        !qr_run_uncached(g, dv) || !qr__run_node_runs(g, o, di) || (dead && dead[di]) || pl->chain_of[di] >= 0 ||
        !qr__run_internal(g, o, uses, dv, &mi, &slot) || slot != 1)
        return false;
    const QrNode *m = &g->nodes[mi];
    const bool mm = qr__run_is(m, "MatMul"), gm = qr__run_is(m, "Gemm");
    const int mo = qr__run_single_out(m);
    if ((!mm && !gm) || mo < 0 || !qr__run_node_runs(g, o, mi) || (dead && dead[mi]) || (st && st[mo]) ||
        g->values[mo].t.dtype != QR_DT_F32 || m->in[0] < 0 || g->values[m->in[0]].t.dtype != QR_DT_F32 ||
        (gm && m->n_in > 2 && m->in[2] >= 0 && g->values[m->in[2]].t.dtype != QR_DT_F32))
        return false;
    const bool has_zp = d->n_in > 2 && d->in[2] >= 0;
    const QrTensor *x = qr__run_static(g, o, d->in[0]), *sc = qr__run_static(g, o, d->in[1]);
    const QrTensor *zp = has_zp ? qr__run_static(g, o, d->in[2]) : NULL, *y = &g->values[dv].t;
    if (!x || !sc || (has_zp && !zp) || (x->dtype != QR_DT_S8 && x->dtype != QR_DT_U8) || !x->data || x->rank < 2 ||
        sc->dtype != QR_DT_F32 || !sc->data || sc->numel < 1 || y->dtype != QR_DT_F32 || !qr_tensor_same_shape(x, y) ||
        qr_attr_int(d, "block_size", 0) != 0 || (gm && x->rank != 2))
        return false;
    if (zp && (zp->dtype != x->dtype || zp->numel != sc->numel || !zp->data)) return false;
    if (!qr__run_dq_gemm_rows(g, m, x)) return false;
    int64_t ss = 0;
    if (sc->numel > 1) {   /* per axis: the axis must be B's N (a MatMul's last; a Gemm's 1, or 0 with transB) */
        int64_t ax = qr_attr_int(d, "axis", 1);
        if (ax < 0) ax += x->rank;
        const int64_t nax = mm ? x->rank - 1 : qr_attr_int(m, "transB", 0) ? 0 : 1;
        if (ax != nax || sc->rank != 1 || sc->dims[0] != x->dims[ax]) return false;
        ss = 1;
    }
    int32_t *z = NULL;
    if (zp) {
        z = qr_arena_array(&pl->mem, (size_t)zp->numel, sizeof *z);
        if (!z) return false;
        for (int64_t k = 0; k < zp->numel; k++) z[k] = (int32_t)qr_tensor_get_i64(zp, k);
    }
    *fz = (QrRunDqFuse){ .dq = di, .reader = mi, .out = dv,
                         .qb = { x->data, x->dtype == QR_DT_S8, sc->data, ss, z, z ? ss : 0 } };
    return true;
}

/* The weight DequantizeLinear nodes of this run that fuse into their reader (pl->dqf): an 8-bit
 * initializer of more than QR_FOLD_MAX_ELEMS elements (qr_run_uncached: never cached) dequantized
 * per tensor or per column of B, whose output is read once, as B of a float32 MatMul or Gemm, and
 * may stay unmaterialized by the rule every fusion follows (qr__run_internal: not a graph output,
 * tapped, fed, substituted, aliased, clamped or edited); both nodes run this run (live, not dead,
 * outputs not overridden) and the reader's output is not a cached constant. Sim runs of QDQ
 * transformers: every weight. Not when the reader's inferred shapes send it to a kernel that
 * reads B as floats (qr__run_dq_gemm_rows). Nothing under QR_NO_FUSE or without inferred shapes. */
static QrStatus qr__run_plan_dq(const QrGraph *g, const QrRunOpts *o, const int *uses, const bool *st, const bool *dead,
                                QrRunPlan *pl) {
    if (!g->shapes_inferred || getenv("QR_NO_FUSE")) return QR_OK;
    for (int di = 0; di < g->n_nodes; di++) {
        QrRunDqFuse fz;
        if (!qr__run_dq_fusable(g, o, uses, st, dead, pl, di, &fz)) continue;
        if (!pl->dqf_of) {
            pl->dqf_of = malloc(((size_t)g->n_nodes + 1) * sizeof *pl->dqf_of);
            pl->dqf = malloc(((size_t)g->n_nodes + 1) * sizeof *pl->dqf);
            if (!pl->dqf_of || !pl->dqf) return qr_errf(QR_ERR_NOMEM, "out of memory");
            for (int k = 0; k < g->n_nodes; k++) pl->dqf_of[k] = -1;
        }
        if (pl->dqf_of[fz.reader] >= 0) continue;
        pl->dqf_of[di] = pl->dqf_of[fz.reader] = pl->n_dqf;
        pl->dqf[pl->n_dqf++] = fz;
    }
    return QR_OK;
}

/* (outer, C, inner) of shape y around axis ax (C = 1, inner = everything when ax < 0). */
static void qr__run_split(const QrTensor *y, int ax, int64_t *outer, int64_t *C, int64_t *inner) {
    *outer = 1;
    *C = 1;
    *inner = 1;
    for (int d = 0; d < y->rank; d++) {
        if (d < ax) *outer *= y->dims[d];
        else if (d == ax) *C = y->dims[d];
        else *inner *= y->dims[d];
    }
}

/* ==== executor ====================================================================== */

/* The state of one qr_run. */
typedef struct QrRunState {
    const QrGraph *g;
    const QrRunOpts *o;
    QrTensor *vals;
    size_t *cap;                /* per value: pooled buffer capacity, 0 = not pooled */
    int *uses;
    const QrTensor **in;
    QrTensor **out;
    QrArena scratch;
    QrRunPlan plan;
    QrRunCache *cache;          /* opts->cache when it belongs to g, else NULL */
    bool *st;                   /* with a cache: per value, qr__run_statics */
    bool *dead;                 /* per node: qr__run_dead */
    uint8_t *defer;             /* per node: 1 deferred until a reader runs (qr__run_deferrable), 2 done */
    int64_t *rows;              /* per node (NULL: none): the leading rows of its output it computes, 0 all */
    uint8_t *rows_in;           /* per node: bit k, input k is read on those rows (qr__run_rows_plan) */
    int pair_out;               /* > 0: value pair_out - 1, a pair's first output, is bound without data */
} QrRunState;

/* ==== leading rows ==================================================================
 * A run computes of some values only the leading rows its observers need: a value read
 * only by a Gather of a few indices along its first axis longer than 1 (a ViT's class token,
 * torchvision's x[:, 0]), and what that value is computed from row by row — elementwise
 * layers with broadcast, QuantizeLinear / DequantizeLinear per tensor, LayerNormalization and
 * Softmax over later axes, MatMul's A, Gemm's A, Transpose, Reshape-like copies — back to where
 * a value has a reader that needs every row (attention's K and V), a tap, an edit, an override
 * or a graph output. The rows kept are a prefix of the first axis longer than 1, whose earlier
 * axes are all 1: a prefix of the value's memory, so a reader of a whole value takes its first
 * rows as a view, no copy. At least two rows are kept: with one row MatMul and Gemm would go
 * to ONNX Runtime's batch-1 kernels, which sum in another order; with two or more every
 * element of the GEMM gets the sums of the whole product (kern/gemm.c) and every row-wise
 * kernel the operations of its row, so the values computed are the whole run's bits. */

#define QR__RUN_ROWS_MIN 2

/* The first axis of t longer than 1 (its rows), or -1 (every axis 1). */
static int qr__run_lead(const QrTensor *t) {
    for (int d = 0; d < t->rank; d++) if (t->dims[d] != 1) return d;
    return -1;
}

/* Byte-addressed element types (a prefix of rows is a prefix of bytes). */
static bool qr__run_row_dtype(QrDType dt) {
    return dt == QR_DT_F32 || dt == QR_DT_U8 || dt == QR_DT_S8 || dt == QR_DT_U16 || dt == QR_DT_S16 ||
           dt == QR_DT_S32 || dt == QR_DT_S64 || dt == QR_DT_F16 || dt == QR_DT_BF16;
}

/* Input k of n has its rows on axis b (by the inferred shapes), as many as y's. */
static bool qr__run_row_in(const QrGraph *g, const QrNode *n, int k, int b, const QrTensor *ty, int a) {
    if (k >= n->n_in || n->in[k] < 0) return false;
    const QrTensor *x = &g->values[n->in[k]].t;
    return qr__run_row_dtype(x->dtype) && qr__run_lead(x) == b && x->dims[b] == ty->dims[a];
}

static bool qr__run_is_any(const QrNode *n, const char *const *ops) {
    for (int i = 0; ops[i]; i++) if (qr__run_is(n, ops[i])) return true;
    return false;
}

/* Axis attribute `name` of n normalized for rank (dflt when absent), or -1 out of range. */
static int qr__run_axis(const QrNode *n, const char *name, int64_t dflt, int rank) {
    int64_t ax = qr_attr_int(n, name, dflt);
    if (ax < 0) ax += rank;
    return ax >= 0 && ax < rank ? (int)ax : -1;
}

/* Broadcasting elementwise n: each input either has y's rows (its axis aligned from the right)
 * or is broadcast along them (read whole). */
static bool qr__run_row_bcast(const QrGraph *g, const QrNode *n, const QrTensor *ty, int a, uint8_t *mask) {
    for (int k = 0; k < n->n_in; k++) {
        if (n->in[k] < 0) continue;
        const QrTensor *x = &g->values[n->in[k]].t;
        const int b = a - (ty->rank - x->rank);
        if (x->rank > ty->rank) return false;
        if (b < 0 || x->dims[b] == 1) continue;
        if (!qr__run_row_in(g, n, k, b, ty, a)) return false;
        *mask |= (uint8_t)(1u << k);
    }
    return *mask != 0;
}

/* Whether node n computes the leading rows of its output y (axis a = y's lead) from the leading
 * rows of its inputs in *mask (bit k: input k) and the whole of the others, each element with the
 * operations the whole run gives it. */
static bool qr__run_row_map(const QrGraph *g, const QrNode *n, int y, uint8_t *mask) {
    static const char *const unary[] = { "Relu", "Erf", "Sigmoid", "Tanh", "Exp", "Log", "Abs", "Neg", "Sqrt",
                                         "Reciprocal", "Cast", "Clip", "LeakyRelu", "HardSigmoid", "HardSwish",
                                         "Gelu", "Floor", "Ceil", "Round", "Sign", NULL };
    static const char *const binary[] = { "Add", "Sub", "Mul", "Div", "Pow", "Where", NULL };
    const QrTensor *ty = &g->values[y].t;
    const int a = qr__run_lead(ty), ry = ty->rank;
    *mask = 0;
    if (a < 0 || n->n_in > 8 || !n->def || n->domain[0]) return false;
    if (n->def->exec == qr__sh_copy_exec) {   /* Reshape, Flatten, Squeeze, Unsqueeze, Identity */
        const QrTensor *x = &g->values[n->in[0]].t;
        const int b = qr__run_lead(x);
        *mask = 1;
        return b >= 0 && x->numel == ty->numel && qr__run_row_in(g, n, 0, b, ty, a);
    }
    if (qr__run_is_any(n, binary)) return qr__run_row_bcast(g, n, ty, a, mask);
    *mask = 1;
    if (qr__run_is_any(n, unary)) return qr__run_row_in(g, n, 0, a, ty, a) && g->values[n->in[0]].t.rank == ry;
    if (qr__run_is(n, "QuantizeLinear") || qr__run_is(n, "DequantizeLinear")) {
        const QrTensor *sc = n->n_in > 1 && n->in[1] >= 0 ? &g->values[n->in[1]].t : NULL;
        if (!sc || qr_attr_int(n, "block_size", 0) != 0 || !qr__run_row_in(g, n, 0, a, ty, a)) return false;
        return sc->numel == 1 || qr__run_axis(n, "axis", 1, ry) > a;
    }
    if (qr__run_is(n, "LayerNormalization"))
        return qr__run_axis(n, "axis", -1, ry) > a && qr__run_row_in(g, n, 0, a, ty, a);
    if (qr__run_is(n, "Softmax") || qr__run_is(n, "LogSoftmax"))
        return qr__run_axis(n, "axis", n->opset >= 13 ? -1 : 1, ry) > a && qr__run_row_in(g, n, 0, a, ty, a);
    if (qr__run_is(n, "MatMul"))   /* rows of A's matrix (its batch axes before are 1), one B */
        return n->n_in == 2 && n->in[1] >= 0 && ry >= 2 && a == ry - 2 && g->values[n->in[0]].t.rank == ry &&
               g->values[n->in[1]].t.rank == 2 && qr__run_row_in(g, n, 0, a, ty, a);
    if (qr__run_is(n, "Gemm")) {
        if (ry != 2 || a != 0 || qr_attr_int(n, "transA", 0) != 0 || !qr__run_row_in(g, n, 0, 0, ty, 0)) return false;
        const QrTensor *c = n->n_in > 2 && n->in[2] >= 0 ? &g->values[n->in[2]].t : NULL;
        if (!c || c->rank < 2 || c->dims[0] == 1) return true;   /* C broadcast over the rows */
        *mask |= 4;
        return qr__run_row_in(g, n, 2, 0, ty, 0);
    }
    if (qr__run_is(n, "Transpose")) {
        const int64_t *perm;
        int np = qr_attr_ints(n, "perm", &perm);
        int b = np < 0 ? ry - 1 - a : np == ry && perm[a] >= 0 && perm[a] < ry ? (int)perm[a] : -1;
        return b >= 0 && qr__run_row_in(g, n, 0, b, ty, a);
    }
    return false;
}

/* The leading rows of input 0 that Gather node n reads, when its indices are constants all within
 * the first rows of the data's lead axis (0: every row). */
static int64_t qr__run_row_gather(const QrGraph *g, const QrRunOpts *o, const QrNode *n) {
    if (!qr__run_is(n, "Gather") || n->n_in != 2 || n->in[0] < 0 || n->in[1] < 0) return 0;
    const QrTensor *x = &g->values[n->in[0]].t, *idx = qr__run_static(g, o, n->in[1]);
    const int ax = qr__run_axis(n, "axis", 0, x->rank);
    if (ax < 0 || qr__run_lead(x) != ax || !idx || !idx->data || (idx->dtype != QR_DT_S64 && idx->dtype != QR_DT_S32))
        return 0;
    int64_t last = 0;
    for (int64_t i = 0; i < idx->numel; i++) {
        int64_t k = qr_tensor_get_i64(idx, i);
        if (k < 0) k += x->dims[ax];
        if (k < 0 || k >= x->dims[ax]) return 0;
        last = QR_MAX(last, k);
    }
    const int64_t rows = QR_MAX(last + 1, QR__RUN_ROWS_MIN);
    return rows < x->dims[ax] ? rows : 0;
}

/* Value y may be computed on its leading `rows` rows: produced this run (not overridden, fed,
 * edited or a cached constant) with rows fewer than its lead axis has. */
static bool qr__run_row_value(const QrGraph *g, const QrRunOpts *o, const bool *st, int y, int64_t rows) {
    const QrTensor *t = &g->values[y].t;
    const int a = qr__run_lead(t);
    return a >= 0 && rows < t->dims[a] && !g->values[y].is_dynamic && qr__run_row_dtype(t->dtype) &&
           !qr__run_overridden(o, y) && !(o->feed && o->feed[y]) && !qr__run_edited(o, y) && !(st && st[y]);
}

static void qr__run_row_want(int64_t *dem, int v, int64_t rows) {
    dem[v] = dem[v] < 0 || rows < 0 ? -1 : QR_MAX(dem[v], rows);
}

/* The rows of this run (see the section's comment), walked from the last node back: dem[v] the
 * rows of v some reader needs (-1 every row, 0 none); r->rows[n] the rows node n computes
 * (0: all), r->rows_in[n] the inputs it reads on those rows. Both stay NULL when no node is cut. */
static QrStatus qr__run_rows_plan(QrRunState *r) {
    const QrGraph *g = r->g;
    const QrRunOpts *o = r->o;
    if (!g->shapes_inferred || o->no_row_cut) return QR_OK;
    int64_t *dem = calloc((size_t)g->n_values + 1, sizeof *dem), *rows = calloc((size_t)g->n_nodes + 1, sizeof *rows);
    uint8_t *in = calloc((size_t)g->n_nodes + 1, 1);
    if (!dem || !rows || !in) { free(dem); free(rows); free(in); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    for (int i = 0; i < g->n_outputs; i++) dem[qr__run_resolve(o, g->outputs[i])] = -1;
    for (int v = 0; v < g->n_values; v++) {
        if ((o->tap && (!o->tap_only || o->tap_only[v])) || qr__run_edited(o, v)) dem[v] = -1;
        if (qr__run_clamped(o, v)) dem[qr__run_resolve(o, o->alias[v])] = -1;
    }
    bool any = false;
    for (int oi = g->n_nodes - 1; oi >= 0; oi--) {
        const int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        if ((o->live && !o->live[ni]) || (r->dead && r->dead[ni]) || !n->def) continue;
        const int y = qr__run_single_out(n);
        const int64_t want = y >= 0 ? dem[y] : -1, gr = qr__run_row_gather(g, o, n);
        uint8_t mask = 0;
        const bool cut = want > 0 && qr__run_row_value(g, o, r->st, y, want) && qr__run_row_map(g, n, y, &mask);
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                qr__run_row_want(dem, qr__run_resolve(o, n->in[k]),
                                 cut && (mask >> k & 1) ? want : k == 0 && gr > 0 ? gr : -1);
        if (cut) { rows[ni] = want; in[ni] = mask; any = true; }
    }
    free(dem);
    if (!any) { free(rows); free(in); return QR_OK; }
    r->rows = rows;
    r->rows_in = in;
    return QR_OK;
}

/* x as a reader of node ni's leading rows sees it: its first `rows` rows (a view), or x when it has
 * no more. NULL when out of memory. */
static const QrTensor *qr__run_rows_view(QrRunState *r, const QrTensor *x, int64_t rows) {
    const int a = qr__run_lead(x);
    if (a < 0 || x->dims[a] <= rows) return x;
    QrTensor *v = qr_arena_alloc(&r->scratch, sizeof *v);
    if (!v) return NULL;
    *v = *x;
    v->owned = false;
    v->numel = x->numel / x->dims[a] * rows;
    v->dims[a] = rows;
    return v;
}

/* Node n's shape function (c bound); a Reshape-like copy (qr__sh_copy_exec) that computes leading
 * rows gets the inferred shape with its rows cut instead (its shape input names the whole value's). */
static QrStatus qr__run_shape(const QrRunState *r, const QrNode *n, QrOpCtx *c) {
    if (!r->rows || r->rows[n - r->g->nodes] <= 0 || n->def->exec != qr__sh_copy_exec) return n->def->shape(c);
    const QrTensor *t = &r->g->values[qr__run_single_out(n)].t;
    int64_t dims[QR_MAX_RANK];
    memcpy(dims, t->dims, sizeof dims);
    dims[qr__run_lead(t)] = r->rows[n - r->g->nodes];
    return qr_op_set_out(c, 0, t->dtype, t->rank, dims);
}

/* Node n's outputs are all static this run (with a cache: they go into it). */
static bool qr__run_node_static(const QrRunState *r, const QrNode *n) {
    if (!r->st) return false;
    bool any = false;
    for (int k = 0; k < n->n_out; k++) {
        if (n->out[k] < 0) continue;
        if (!r->st[n->out[k]]) return false;
        any = true;
    }
    return any;
}

/* Value v is the output of one of the first k nodes of chain ch (only its shape exists). */
static bool qr__run_chain_value(const QrGraph *g, const QrRunChain *ch, int k, int v) {
    for (int i = 0; ch && i < k; i++)
        if (qr__run_single_out(&g->nodes[ch->nodes[i]]) == v) return true;
    return false;
}

/* The fused DequantizeLinear -> MatMul / Gemm pair node ni belongs to this run (either node), or
 * NULL (none, or it was switched off when it ran). */
static QrRunDqFuse *qr__run_dqf(const QrRunState *r, int ni) {
    if (!r->plan.dqf_of || r->plan.dqf_of[ni] < 0) return NULL;
    QrRunDqFuse *fz = &r->plan.dqf[r->plan.dqf_of[ni]];
    return fz->off ? NULL : fz;
}

/* Binds node n's inputs (as readers see them) and outputs; fails on a missing input other
 * than the outputs of chain ch's first k nodes (chain values: only their shapes exist) and a
 * fused DequantizeLinear's output (its reader's B, given as integers). */
/* QrOpCtx.prep of a run with a constant cache: the data prepared for (node, key) when every
 * input in deps is a constant of this run that the cache may hold (qr__run_statics, not
 * qr_run_uncached), filled under the cache's lock the first time. */
static const void *qr__run_prep(const QrOpCtx *c, unsigned deps, uint64_t key, size_t bytes, QrOpPrepFill fill,
                                void *fill_ctx) {
    QrRunState *r = c->prep_user;
    const QrNode *n = c->node;
    const int ni = (int)(n - r->g->nodes);
    for (int k = 0; k < n->n_in; k++) {
        if (k >= 32 || !(deps >> k & 1u)) continue;
        const int v = n->in[k];
        if (v < 0 || !r->st[v] || qr_run_uncached(r->g, v)) return NULL;
    }
    QrRunCache *cache = r->cache;
    void *data = NULL;
    pthread_mutex_lock(&cache->mu);
    for (int i = 0; i < cache->n_prep; i++)
        if (cache->prep[i].node == ni && cache->prep[i].key == key) {
            data = cache->prep[i].bytes == bytes ? cache->prep[i].data : NULL;
            pthread_mutex_unlock(&cache->mu);
            return data;
        }
    if (cache->n_prep == cache->cap_prep) {
        const int cap = cache->cap_prep ? 2 * cache->cap_prep : 16;
        QrRunPrep *p = realloc(cache->prep, (size_t)cap * sizeof *p);
        if (p) {
            cache->prep = p;
            cache->cap_prep = cap;
        }
    }
    if (cache->n_prep < cache->cap_prep && (data = qr_aligned_alloc(bytes))) {
        fill(fill_ctx, data);
        cache->prep[cache->n_prep++] = (QrRunPrep){ ni, key, bytes, data };
        cache->bytes += bytes;
    }
    pthread_mutex_unlock(&cache->mu);
    return data;
}

static QrStatus qr__run_bind_io(QrRunState *r, const QrNode *n, QrOpCtx *c, const QrRunChain *ch, int k_ch,
                                const QrTensor **in, QrTensor **out) {
    qr__run_ctx_init(c, r->g, n, r->vals, &r->scratch, in, out);
    c->alias = r->o->alias;
    if (r->cache && r->cache->keep_prep) {
        c->prep = qr__run_prep;
        c->prep_user = r;
    }
    const QrRunDqFuse *fz = qr__run_dqf(r, (int)(n - r->g->nodes));
    const int fused_b = fz && fz->reader == (int)(n - r->g->nodes) ? fz->out : -1;
    for (int k = 0; k < n->n_in; k++) if (n->in[k] >= 0) in[k] = qr__run_read(r->o, r->vals, n->in[k]);
    const int64_t rows = r->rows ? r->rows[n - r->g->nodes] : 0;
    for (int k = 0; rows > 0 && k < n->n_in; k++)
        if (n->in[k] >= 0 && (r->rows_in[n - r->g->nodes] >> k & 1) && !(in[k] = qr__run_rows_view(r, in[k], rows)))
            return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && !in[k]->data && in[k]->numel > 0 && !qr__run_chain_value(r->g, ch, k_ch, n->in[k]) &&
            n->in[k] != fused_b && n->in[k] != r->pair_out - 1)
            return qr_errf(QR_ERR_INVALID, "node '%s' (%s) reads '%s', which this run neither computed nor was given",
                           n->name, n->op_type, r->g->values[n->in[k]].name);
    return QR_OK;
}

static QrStatus qr__run_bind(QrRunState *r, const QrNode *n, QrOpCtx *c, const QrRunChain *ch, int k_ch) {
    return qr__run_bind_io(r, n, c, ch, k_ch, r->in, r->out);
}

static QrStatus qr__run_wrap(QrStatus st, const QrNode *n) {
    if (st != QR_OK && !strstr(qr_err_msg(), n->name)) st = qr_err_wrap(st, "node '%s' (%s)", n->name, n->op_type);
    return st;
}

#ifdef QR_TESTING
QR_TESTAPI QrRunCount qr_run_count;
#define QR__RUN_COUNT(field, k) __atomic_add_fetch(&qr_run_count.field, (k), __ATOMIC_RELAXED)
/* One more qr_run in progress (k = 1) or one fewer (k = -1); max_active keeps the most at once. */
static void qr__run_active(int64_t k) {
    int64_t now = __atomic_add_fetch(&qr_run_count.active, k, __ATOMIC_RELAXED);
    int64_t m = __atomic_load_n(&qr_run_count.max_active, __ATOMIC_RELAXED);
    while (now > m && !__atomic_compare_exchange_n(&qr_run_count.max_active, &m, now, false, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED)) {}
}
#define QR__RUN_ACTIVE(k) qr__run_active(k)
#else
#define QR__RUN_ACTIVE(k) ((void)0)
#define QR__RUN_COUNT(field, k) ((void)0)
#endif

/* After n's shape function (c bound): a node whose output is its input's bytes (Reshape, Flatten,
 * Squeeze, Unsqueeze, Identity: ops/shape.c's copy; a Transpose that moves no byte) takes the input's pooled buffer instead of
 * copying it when this node is the input's last reader (nothing reads it after: no other node,
 * no graph output; its taps and edits came when it was computed). True when it did. */
static bool qr__run_steal(QrRunState *r, const QrNode *n, const QrOpCtx *c) {
    const int v = n->n_in >= 1 ? n->in[0] : -1, o = qr__run_single_out(n);
    const bool tr = n->def->exec == qr__sh_transpose_exec;
    if ((n->def->exec != qr__sh_copy_exec && !tr) || v < 0 || o < 0 || r->in[0] != &r->vals[v] || !r->cap[v] || r->uses[v] != 1 ||
        !r->vals[v].data || !r->out[0] || qr_tensor_nbytes(r->out[0]) != qr_tensor_nbytes(&r->vals[v]))
        return false;
    if (tr && !qr_op_transpose_is_copy(c)) return false;
    r->out[0]->data = r->vals[v].data;
    r->out[0]->owned = false;
    r->cap[o] = r->cap[v];
    r->cap[v] = 0;
    r->vals[v].data = NULL;
    return true;
}

/* Runs node n's exec, bound in c; a MatMul / Gemm whose B is a fused DequantizeLinear's output
 * (qr__run_plan_dq) gets that B as its integers. */
static QrStatus qr__run_exec(QrRunState *r, const QrNode *n, QrOpCtx *c) {
    const int ni = (int)(n - r->g->nodes);
    const QrRunDqFuse *fz = qr__run_dqf(r, ni);
    if (!fz || fz->reader != ni) return n->def->exec(c);
    if (qr__run_is(n, "Gemm")) return qr_nn_gemm_qb(c, &fz->qb);
    return qr_nn_matmul_bias(c, NULL, false, &fz->qb);
}

/* Runs node n on its own. */
static QrStatus qr__run_one(QrRunState *r, const QrNode *n) {
    QrOpCtx c;
    QR_TRY(qr__run_bind(r, n, &c, NULL, 0));
    if (r->o->n_exec) (*r->o->n_exec)++;
    QR__RUN_COUNT(nodes, 1);
    if (r->rows && r->rows[n - r->g->nodes] > 0) QR__RUN_COUNT(row_cut, 1);
    QrStatus st = qr__run_shape(r, n, &c);
    if (st == QR_OK && qr__run_steal(r, n, &c)) return QR_OK;
    bool zero = !qr__run_writes_all(n);
    for (int k = 0; st == QR_OK && k < n->n_out; k++)
        if (r->out[k]) st = qr__run_alloc(r->out[k], &r->cap[n->out[k]], zero);
    if (st == QR_OK) st = qr__run_exec(r, n, &c);
    return qr__run_wrap(st, n);
}

/* The shapes of chain ch's values, node by node (a chain value is shape-only: no data), and the
 * tensors its ADD_T steps add; *fallback: the run's shapes or tensors are not the plan's (run
 * its nodes one by one). */
static QrStatus qr__run_chain_shapes(QrRunState *r, QrRunChain *ch, bool *fallback) {
    const QrGraph *g = r->g;
    *fallback = false;
    QrOpCtx c;
    QrStatus st = QR_OK;
    int prev = -1;
    for (int k = 0; k < ch->n && st == QR_OK; k++) {
        const QrNode *n = &g->nodes[ch->nodes[k]];
        st = qr__run_bind(r, n, &c, ch, k);
        /* A member's parameter may come from a node after the head in the topological order
         * (a late Constant: Relu -> Constant -> Div, as older exporters write it): the plan
         * took it from the shape-inferred graph, so the shapes are checked on that same tensor. */
        for (int j = 0; st == QR_OK && k > 0 && j < n->n_in; j++) {
            if (n->in[j] < 0 || n->in[j] == prev || r->in[j]->data) continue;
            const QrTensor *s = qr__run_static(g, r->o, n->in[j]);
            if (s) r->in[j] = s;
        }
        prev = qr__run_single_out(n);
        if (st == QR_OK) st = qr__run_wrap(qr__run_shape(r, n, &c), n);
        if (st != QR_OK) break;
        int v = qr__run_single_out(n);
        const QrTensor *want = &g->values[v].t;
        if (r->vals[v].dtype != want->dtype || !qr_tensor_same_shape(&r->vals[v], want)) {
            *fallback = true;
            return QR_OK;
        }
    }
    if (st != QR_OK) return st;
    for (int k = 0; k < ch->ns; k++) {   /* tensors added by ADD_T steps */
        if (ch->t_value[k] < 0) continue;
        const QrTensor *t = qr__run_read(r->o, r->vals, ch->t_value[k]);
        if (!t->data || !qr__run_same_f32(t, &r->vals[ch->out])) { *fallback = true; return QR_OK; }
        ch->steps[k].t = t->data;
    }
    return QR_OK;
}

/* Runs chain ch: shapes of every node first (when one differs from the plan's, *fallback
 * is set and nothing has been done), then one buffer for its output, the head writing into
 * it and the steps applied on the way (conv epilogue) or after it. */
static QrStatus qr__run_chain(QrRunState *r, QrRunChain *ch, bool *fallback) {
    const QrGraph *g = r->g;
    const QrNode *h = &g->nodes[ch->nodes[0]];
    QrOpCtx c;
    QrStatus st = qr__run_chain_shapes(r, ch, fallback);
    if (st != QR_OK || *fallback) return st;
    const QrTensor *x = NULL;
    if (ch->kind == QR__HEAD_FQ) {
        x = qr__run_read(r->o, r->vals, ch->x);
        if (!x->data) { *fallback = true; return QR_OK; }
    }
    if (r->o->n_exec) (*r->o->n_exec) += ch->n;
    QR__RUN_COUNT(nodes, ch->n);
    QrTensor *y = &r->vals[ch->out];
    st = qr__run_alloc(y, &r->cap[ch->out], ch->kind == QR__HEAD_GENERIC && !qr__run_writes_all(h));
    if (st != QR_OK) return qr__run_wrap(st, h);
    int64_t outer, C, inner;
    qr__run_split(y, ch->axis, &outer, &C, &inner);
    if (ch->kind == QR__HEAD_FQ) {
        qr_ew_steps_run(ch->steps, ch->ns, x->data, y->data, outer, C, inner);
        return QR_OK;
    }
    /* the head writes straight into the chain's buffer */
    int hv = qr__run_single_out(h);
    QrTensor hy = r->vals[hv];
    hy.data = y->data;
    hy.owned = false;
    QR_TRY(qr__run_bind(r, h, &c, NULL, 0));
    r->out[0] = &hy;
    if (ch->kind == QR__HEAD_CONV) return qr__run_wrap(qr_nn_conv_fused(&c, ch->steps, ch->ns), h);
    const QrRunDqFuse *fz = qr__run_dqf(r, ch->nodes[0]);
    if (ch->kind == QR__HEAD_MATMUL)
        st = qr__run_wrap(qr_nn_matmul_bias(&c, ch->lastb, ch->lastb_swap, fz ? &fz->qb : NULL), h);
    else st = qr__run_wrap(qr__run_exec(r, h, &c), h);
    if (st != QR_OK) return st;
    if (ch->gelu_at < 0) {
        qr_ew_steps_run(ch->steps, ch->ns, y->data, y->data, outer, C, inner);
        return QR_OK;
    }
    qr_ew_steps_run(ch->steps, ch->gelu_at, y->data, y->data, outer, C, inner);
    qr_ew_gelu_erf_run(ch->gelu_c, y->data, y->data, y->numel);
    qr_ew_steps_run(ch->steps + ch->gelu_at, ch->ns - ch->gelu_at, y->data, y->data, outer, C, inner);
    return QR_OK;
}

/* After node n ran (or was skipped): clamped aliases among its outputs, taps, and frees. */
static QrStatus qr__run_after(QrRunState *r, int ni) {
    const QrGraph *g = r->g;
    const QrRunOpts *opts = r->o;
    const QrNode *n = &g->nodes[ni];
    QrTensor *vals = r->vals;
    QrStatus st = QR_OK;
    /* Clamped aliases: materialize clamp(source). */
    for (int k = 0; st == QR_OK && k < n->n_out; k++) {
        int v = n->out[k];
        if (v < 0 || !qr__run_clamped(opts, v)) continue;
        int src = qr__run_resolve(opts, opts->alias[v]);
        const QrTensor *s = qr__run_read(opts, vals, opts->alias[v]);
        st = qr_tensor_set_shape(&vals[v], QR_DT_F32, s->rank, s->dims);
        if (st == QR_OK && s->dtype != QR_DT_F32) st = qr_errf(QR_ERR_INVALID, "clamped value '%s' is not float32", g->values[v].name);
        if (st == QR_OK && !s->data && s->numel > 0)
            st = qr_errf(QR_ERR_INVALID, "clamped value '%s' reads '%s', which this run neither computed nor was given",
                         g->values[v].name, g->values[src].name);
        if (st == QR_OK) st = qr_tensor_alloc_data(&vals[v]);
        if (st != QR_OK) break;
        float lo = opts->clamp_lo[v], hi = opts->clamp_hi[v];
        const float *px = s->data;
        float *py = vals[v].data;
        for (int64_t i = 0; i < s->numel; i++) {
            float x = px[i];
            if (lo == lo && x < lo) x = lo;
            if (hi == hi && x > hi) x = hi;
            py[i] = x;
        }
        if (--r->uses[src] == 0) qr__run_drop(vals, r->cap, src);
    }
    /* Edits: the node's own outputs, computed this run, before taps and readers. */
    for (int k = 0; st == QR_OK && k < n->n_out; k++) {
        int v = n->out[k];
        if (v < 0 || !qr__run_edited(opts, v) || qr__run_overridden(opts, v) || !vals[v].data) continue;
        const QrTensor **in = qr_arena_array(&r->scratch, (size_t)n->n_in + 1, sizeof *in);
        if (!in) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
        for (int j = 0; j < n->n_in; j++) in[j] = n->in[j] >= 0 ? qr__run_read(opts, vals, n->in[j]) : NULL;
        st = opts->edit(opts->edit_user, g, ni, v, &vals[v], in);
    }
    for (int k = 0; st == QR_OK && opts->tap && k < n->n_out; k++)
        if (n->out[k] >= 0 && qr__run_read(opts, vals, n->out[k])->data &&
            (!opts->tap_only || opts->tap_only[n->out[k]]))
            st = opts->tap(opts->tap_user, g, ni, n->out[k], qr__run_tap_view(opts, vals, n->out[k]));
    /* Free what no later node reads. */
    for (int k = 0; k < n->n_in; k++) {
        if (n->in[k] < 0) continue;
        int v = qr__run_resolve(opts, n->in[k]);
        if (--r->uses[v] == 0) qr__run_drop(vals, r->cap, v);
    }
    for (int k = 0; k < n->n_out; k++) {
        int v = n->out[k];
        if (v >= 0 && r->uses[v] == 0) qr__run_drop(vals, r->cap, v);
    }
    qr_arena_clear(&r->scratch);
    return st;
}

/* Node ni of the topological order, not part of a chain: skipped (overridden outputs, not live,
 * dead), from the constant cache, or run (its outputs going into the cache when static); then
 * qr__run_after (taps, frees). */
static QrStatus qr__run_node_at(QrRunState *r, int ni) {
    const QrGraph *g = r->g;
    const QrRunOpts *opts = r->o;
    const QrNode *n = &g->nodes[ni];
    QrTensor *vals = r->vals;
    QrStatus st = QR_OK;
    bool skip = n->n_out > 0;
    for (int k = 0; k < n->n_out; k++) if (n->out[k] >= 0 && !qr__run_overridden(opts, n->out[k])) skip = false;
    if (opts->live && !opts->live[ni]) skip = true;
    if (r->dead && r->dead[ni]) skip = true;
    const bool stat = r->cache && qr__run_node_static(r, n) && !(n->n_out > 0 && qr_run_uncached(g, n->out[0]));
    if (stat) {   /* constants: from the cache, or computed now and kept there */
        pthread_mutex_lock(&r->cache->mu);
        bool have = true;
        for (int k = 0; k < n->n_out; k++) if (n->out[k] >= 0 && !r->cache->t[n->out[k]].data) have = false;
        if (have) {
            for (int k = 0; k < n->n_out; k++) {
                int v = n->out[k];
                if (v < 0) continue;
                vals[v] = r->cache->t[v];
                vals[v].owned = false;
            }
            skip = true;
        }
        pthread_mutex_unlock(&r->cache->mu);
    }
    if (!skip) {
        st = qr__run_one(r, n);
        if (st == QR_OK && stat) pthread_mutex_lock(&r->cache->mu);
        for (int k = 0; st == QR_OK && stat && k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0 || r->cache->t[v].data || !r->cap[v]) continue;
            r->cache->t[v] = vals[v];          /* the cache takes the pooled buffer */
            r->cache->t[v].owned = true;
            r->cache->bytes += qr_tensor_nbytes(&vals[v]);
            r->cap[v] = 0;
        }
        if (st == QR_OK && stat) pthread_mutex_unlock(&r->cache->mu);
    }
    if (st == QR_OK) st = qr__run_after(r, ni);
    return st;
}

/* Nodes that read only initializers, substitutions and feeds (or the outputs of such nodes) —
 * a quantized weight's DequantizeLinear, a weight-only node's BlockDequant, a Constant — do not
 * depend on the run's inputs, and Kahn's order puts them all first: run there, every weight's
 * float copy would be alive from the start until its reader (a second float copy of every
 * weight at once: 344 MB for a ViT-B). They are deferred (r->defer[ni] = 1) and run right
 * before their first reader (qr__run_inputs_ready), or after the loop when no reader runs, so
 * each copy lives from its reader's turn to its last reader. Same nodes, same arithmetic, same
 * taps (a deferred value's tap comes later). Chain members, nodes the run skips and nodes with
 * a clamped input stay in place. */
static QrStatus qr__run_deferrable(QrRunState *r) {
    const QrGraph *g = r->g;
    const QrRunOpts *o = r->o;
    r->defer = calloc((size_t)g->n_nodes + 1, 1);
    if (!r->defer) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int oi = 0; oi < g->n_nodes; oi++) {
        int ni = g->order[oi];
        const QrNode *n = &g->nodes[ni];
        if (r->plan.chain_of[ni] >= 0 || (o->live && !o->live[ni]) || (r->dead && r->dead[ni]) || n->n_out < 1) continue;
        bool ok = false;
        for (int k = 0; k < n->n_out; k++) if (n->out[k] >= 0 && !qr__run_overridden(o, n->out[k])) ok = true;
        for (int k = 0; ok && k < n->n_in; k++) {
            if (n->in[k] < 0) continue;
            if (qr__run_clamped(o, n->in[k])) { ok = false; break; }
            int v = qr__run_resolve(o, n->in[k]), p = g->values[v].producer;
            ok = g->values[v].is_init || (o->subst && (o->subst[n->in[k]] || o->subst[v])) ||
                 (o->feed && (o->feed[n->in[k]] || o->feed[v])) || (p >= 0 && r->defer[p]);
        }
        if (ok) r->defer[ni] = 1;
    }
    return QR_OK;
}

/* The fused DequantizeLinear of pair fz, right before its reader runs: bound and its shape
 * function run (its checks, its output's shape: the reader's B), counted as executed, then
 * qr__run_after (no tap or edit can be on its output: it was fused only so). When the shape or
 * the tensors it reads are not the plan's, the pair is switched off and the node runs as usual. */
static QrStatus qr__run_dq_ready(QrRunState *r, QrRunDqFuse *fz) {
    const QrNode *d = &r->g->nodes[fz->dq];
    QrOpCtx c;
    QR_TRY(qr__run_bind(r, d, &c, NULL, 0));
    QR_TRY(qr__run_wrap(d->def->shape(&c), d));
    const QrTensor *want = &r->g->values[fz->out].t;
    if (r->vals[fz->out].dtype != want->dtype || !qr_tensor_same_shape(&r->vals[fz->out], want) ||
        r->in[0]->data != fz->qb.q || r->in[1]->data != fz->qb.scale) {
        fz->off = true;
        return qr__run_node_at(r, fz->dq);
    }
    if (r->o->n_exec) (*r->o->n_exec)++;
    QR__RUN_COUNT(nodes, 1);
    return qr__run_after(r, fz->dq);
}

/* Runs the deferred producers of node ni's inputs (and theirs, first), and the DequantizeLinear
 * fused into it (qr__run_dq_ready). */
static QrStatus qr__run_inputs_ready(QrRunState *r, int ni) {
    const QrNode *n = &r->g->nodes[ni];
    for (int k = 0; k < n->n_in; k++) {
        if (n->in[k] < 0) continue;
        int v = qr__run_resolve(r->o, n->in[k]), p = r->g->values[v].producer;
        QrRunDqFuse *fz = p >= 0 ? qr__run_dqf(r, p) : NULL;
        if (fz && fz->dq == p && fz->reader == ni && r->defer[p] != 2) {
            r->defer[p] = 2;
            QR_TRY(qr__run_inputs_ready(r, p));
            QR_TRY(qr__run_dq_ready(r, fz));
            continue;
        }
        if (p < 0 || r->defer[p] != 1) continue;
        r->defer[p] = 2;
        QR_TRY(qr__run_inputs_ready(r, p));
        QR_TRY(qr__run_node_at(r, p));
    }
    return QR_OK;
}

/* ==== Conv pairs ======================================================================
 * A Conv chain (one group: MobileNet's 1x1 expansions, its first layer, ResNet's) and the
 * depthwise Conv chain — or the MaxPool node — that alone reads its output run as one (ops/nn.c
 * qr_nn_conv_pair / qr_nn_conv_pool_pair: the second layer's output in bands of rows, the first
 * layer's rows each band reads computed just before; its output never exists whole). The plan
 * pairs them by the inferred shapes; the first chain is skipped at its turn and runs at the
 * second layer's (nothing between them reads its output, and its
 * inputs stay alive until then, as any reader's do); ops/nn.c takes the pair or declines by the
 * run's shapes, and then the first chain runs there on its own, the second layer after it. */

/* Whether node n is a float32 Conv of 4-D tensors by the inferred shapes, weights kh x kw,
 * with `group` groups (0: any), and no dynamic input. */
static bool qr__run_pair_conv(const QrGraph *g, const QrNode *n, int64_t kh, int64_t kw, int64_t group) {
    if (!qr__run_is(n, "Conv") || n->n_in < 2 || n->in[0] < 0 || n->in[1] < 0) return false;
    for (int k = 0; k < n->n_in && k < 3; k++)
        if (n->in[k] >= 0 && (g->values[n->in[k]].is_dynamic || g->values[n->in[k]].t.dtype != QR_DT_F32)) return false;
    const QrTensor *x = &g->values[n->in[0]].t, *w = &g->values[n->in[1]].t;
    if (x->rank != 4 || w->rank != 4 || (kh && (w->dims[2] != kh || w->dims[3] != kw))) return false;
    return !group || qr_attr_int(n, "group", 1) == group;
}

/* Node ni may run inside a pair: no leading-rows limit, not deferred, not dead. */
static bool qr__run_pair_node_free(const QrRunState *r, int ni) {
    return (!r->rows || !r->rows[ni]) && !r->defer[ni] && !(r->dead && r->dead[ni]);
}

/* Chain ch may join a pair: no ADD_T step (its tensor would be read by band), every node free. */
static bool qr__run_pairable(const QrRunState *r, const QrRunChain *ch) {
    for (int k = 0; k < ch->ns; k++) if (ch->t_value[k] >= 0) return false;
    for (int k = 0; k < ch->n; k++) if (!qr__run_pair_node_free(r, ch->nodes[k])) return false;
    return true;
}

/* Pairs this run's chains (QrRunChain.pair_c / pair_p): a chain whose head is a Conv of one
 * group, and the chain whose head is a depthwise Conv (a group per output channel, as many as
 * its input's) reading the first one's output as its image, its only reader by the rule every
 * fusion follows (qr__run_internal); neither with an ADD_T step, a leading-rows limit, a
 * deferred or dead node. Nothing under QR_NO_FUSE or without inferred shapes. */
static void qr__run_plan_pairs(QrRunState *r) {
    const QrGraph *g = r->g;
    QrRunPlan *pl = &r->plan;
    if (!g->shapes_inferred || getenv("QR_NO_FUSE")) return;
    for (int ci = 0; ci < pl->n; ci++) {
        QrRunChain *cc = &pl->chains[ci];
        const QrNode *hc = &g->nodes[cc->nodes[0]];
        if (cc->kind != QR__HEAD_CONV || cc->pair_c >= 0) continue;
        int v = hc->n_in > 0 ? hc->in[0] : -1, p = v >= 0 ? g->values[v].producer : -1;
        int pi = p >= 0 ? pl->chain_of[p] : -1, rd, sl;
        if (pi < 0 || pi == ci) continue;
        QrRunChain *cp = &pl->chains[pi];
        const QrNode *hp = &g->nodes[cp->nodes[0]];
        if (cp->kind != QR__HEAD_CONV || cp->out != v || cp->pair_c >= 0 || cp->pair_p >= 0) continue;
        if (!qr__run_internal(g, r->o, r->uses, v, &rd, &sl) || rd != cc->nodes[0] || sl != 0) continue;
        const int64_t M = g->values[hp->in[1]].t.dims[0];
        if (!qr__run_pair_conv(g, hp, 0, 0, 1) || !qr__run_pair_conv(g, hc, 0, 0, M) ||
            g->values[hc->in[1]].t.dims[0] != M || g->values[hc->in[1]].t.dims[1] != 1)
            continue;
        if (!qr__run_pairable(r, cp) || !qr__run_pairable(r, cc)) continue;
        cp->pair_c = ci;
        cc->pair_p = pi;
    }
    /* a Conv chain whose output only a MaxPool node reads (ResNet's first layer) */
    for (int pi = 0; pi < pl->n; pi++) {
        QrRunChain *cp = &pl->chains[pi];
        const QrNode *hp = &g->nodes[cp->nodes[0]];
        int mi, sl;
        if (cp->kind != QR__HEAD_CONV || cp->pair_c >= 0 || cp->pair_p >= 0 || !qr__run_pair_conv(g, hp, 0, 0, 1) ||
            !qr__run_internal(g, r->o, r->uses, cp->out, &mi, &sl) || sl != 0)
            continue;
        const QrNode *m = &g->nodes[mi];
        if (!qr__run_is(m, "MaxPool") || m->n_out != 1 || pl->chain_of[mi] >= 0 || !qr__run_node_runs(g, r->o, mi) ||
            !qr__run_pair_node_free(r, mi) || g->values[m->out[0]].t.rank != 4 || !qr__run_pairable(r, cp))
            continue;
        if (!pl->pool_pair) {
            pl->pool_pair = malloc(((size_t)g->n_nodes + 1) * sizeof *pl->pool_pair);
            if (!pl->pool_pair) return;   /* no pairs: the nodes run on their own */
            for (int k = 0; k < g->n_nodes; k++) pl->pool_pair[k] = -1;
        }
        cp->pair_node = mi;
        pl->pool_pair[mi] = pi;
    }
}

/* Chain ch on its own, now (its nodes one by one when the run's shapes are not the plan's). */
static QrStatus qr__run_chain_now(QrRunState *r, QrRunChain *ch) {
    bool fallback = false;
    QR_TRY(qr__run_chain(r, ch, &fallback));
    for (int k = 0; k < ch->n; k++) {
        if (!fallback) QR_TRY(qr__run_after(r, ch->nodes[k]));
        else {
            r->plan.chain_of[ch->nodes[k]] = -1;
            QR_TRY(qr__run_node_at(r, ch->nodes[k]));
        }
    }
    return QR_OK;
}

/* Binds the head of a pair's first chain cp to c with tensor arrays of its own (the second
 * layer keeps the executor's), its output the shape-only *hy: never written. */
static QrStatus qr__run_pair_bind_first(QrRunState *r, const QrRunChain *cp, QrOpCtx *c, QrTensor *hy) {
    const QrNode *hp = &r->g->nodes[cp->nodes[0]];
    const QrTensor **in = qr_arena_array(&r->scratch, (size_t)hp->n_in + 1, sizeof *in);
    QrTensor **out = qr_arena_array(&r->scratch, (size_t)hp->n_out + 1, sizeof *out);
    if (!in || !out) return qr_errf(QR_ERR_NOMEM, "out of memory");
    *hy = r->vals[qr__run_single_out(hp)];
    hy->data = NULL;
    hy->owned = false;
    QR_TRY(qr__run_bind_io(r, hp, c, NULL, 0, in, out));
    out[0] = hy;
    return QR_OK;
}

/* The depthwise chain cc (at its turn) with the Conv chain it is paired with: as a pair when
 * ops/nn.c takes it (*paired; the nodes' after-steps then run here), else that chain on its
 * own, leaving cc to the caller. */
static QrStatus qr__run_pair(QrRunState *r, QrRunChain *cc, bool *paired) {
    const QrGraph *g = r->g;
    QrRunChain *cp = &r->plan.chains[cc->pair_p];
    *paired = false;
    bool fallback = false;
    for (int k = 0; k < cp->n; k++) QR_TRY(qr__run_inputs_ready(r, cp->nodes[k]));
    QrStatus st = qr__run_chain_shapes(r, cp, &fallback);
    if (st == QR_OK && !fallback) {
        r->pair_out = cp->out + 1;
        for (int k = 0; st == QR_OK && k < cc->n; k++) st = qr__run_inputs_ready(r, cc->nodes[k]);
        if (st == QR_OK) st = qr__run_chain_shapes(r, cc, &fallback);
        r->pair_out = 0;
    }
    if (st != QR_OK) return st;
    if (fallback) return qr__run_chain_now(r, cp);
    const QrNode *hc = &g->nodes[cc->nodes[0]];
    QrTensor *y = &r->vals[cc->out];
    QrOpCtx c_p, c_c;
    QrTensor hyp, hyc = r->vals[qr__run_single_out(hc)];
    hyc.data = NULL;   /* the chain's buffer, once the pair is taken */
    hyc.owned = false;
    QR_TRY(qr__run_pair_bind_first(r, cp, &c_p, &hyp));
    r->pair_out = cp->out + 1;   /* the depthwise image, the first chain's output: bound shape-only */
    st = qr__run_bind_io(r, hc, &c_c, NULL, 0, r->in, r->out);
    r->pair_out = 0;
    if (st != QR_OK) return st;
    r->out[0] = &hyc;
    QrNnSteps fp = { cp->steps, cp->ns }, fc = { cc->steps, cc->ns };
    bool taken = false;
    size_t bytes = 0, cap = 0;
    QR_TRY(qr__run_wrap(qr_nn_conv_pair(&c_p, &fp, &c_c, &fc, NULL, &bytes, &taken), hc));
    if (!taken) return qr__run_chain_now(r, cp);
    QR_TRY(qr__run_wrap(qr__run_alloc(y, &r->cap[cc->out], false), hc));
    hyc.data = y->data;
    void *buf = qr__run_buf_get(bytes, &cap);   /* the band buffers: pooled like the values' */
    if (!buf) return qr_errf(QR_ERR_NOMEM, "node '%s': cannot allocate %zu bytes of band buffers", hc->name, bytes);
    st = qr__run_wrap(qr_nn_conv_pair(&c_p, &fp, &c_c, &fc, buf, &bytes, &taken), hc);
    qr__run_buf_put(buf, cap);
    if (st != QR_OK) return st;
    if (r->o->n_exec) (*r->o->n_exec) += cp->n + cc->n;
    QR__RUN_COUNT(nodes, cp->n + cc->n);
    *paired = true;
    for (int k = 0; k < cp->n; k++) QR_TRY(qr__run_after(r, cp->nodes[k]));
    for (int k = 0; k < cc->n; k++) QR_TRY(qr__run_after(r, cc->nodes[k]));
    return QR_OK;
}

/* The MaxPool node ni (at its turn) with the Conv chain it is paired with: as a pair when ops/nn.c
 * takes it (*paired; the nodes' after-steps then run here), else that chain on its own, leaving
 * the node to the caller. */
static QrStatus qr__run_pool_pair(QrRunState *r, int ni, bool *paired) {
    const QrGraph *g = r->g;
    const QrNode *m = &g->nodes[ni];
    QrRunChain *cp = &r->plan.chains[r->plan.pool_pair[ni]];
    *paired = false;
    bool fallback = false;
    for (int k = 0; k < cp->n; k++) QR_TRY(qr__run_inputs_ready(r, cp->nodes[k]));
    QR_TRY(qr__run_chain_shapes(r, cp, &fallback));
    if (fallback) return qr__run_chain_now(r, cp);
    QR_TRY(qr__run_inputs_ready(r, ni));
    QrOpCtx c_p, c_m;
    QrTensor hyp;
    QR_TRY(qr__run_pair_bind_first(r, cp, &c_p, &hyp));
    r->pair_out = cp->out + 1;   /* the pool's input, the chain's output: bound shape-only */
    QrStatus st = qr__run_bind(r, m, &c_m, NULL, 0);
    r->pair_out = 0;
    if (st == QR_OK) st = qr__run_wrap(qr__run_shape(r, m, &c_m), m);
    if (st != QR_OK) return st;
    QrNnSteps fp = { cp->steps, cp->ns };
    bool taken = false;
    size_t bytes = 0, cap = 0;
    QR_TRY(qr__run_wrap(qr_nn_conv_pool_pair(&c_p, &fp, &c_m, NULL, &bytes, &taken), m));
    if (!taken) return qr__run_chain_now(r, cp);
    QR_TRY(qr__run_wrap(qr__run_alloc(r->out[0], &r->cap[m->out[0]], false), m));
    void *buf = qr__run_buf_get(bytes, &cap);   /* the band buffers: pooled like the values' */
    if (!buf) return qr_errf(QR_ERR_NOMEM, "node '%s': cannot allocate %zu bytes of band buffers", m->name, bytes);
    st = qr__run_wrap(qr_nn_conv_pool_pair(&c_p, &fp, &c_m, buf, &bytes, &taken), m);
    qr__run_buf_put(buf, cap);
    if (st != QR_OK) return st;
    if (r->o->n_exec) (*r->o->n_exec) += cp->n + 1;
    QR__RUN_COUNT(nodes, cp->n + 1);
    *paired = true;
    for (int k = 0; k < cp->n; k++) QR_TRY(qr__run_after(r, cp->nodes[k]));
    return qr__run_after(r, ni);
}

static QrStatus qr_run(const QrGraph *g, const QrTensor *inputs, const QrRunOpts *opts, QrTensor *outputs) {
    QrRunOpts none = {0};
    if (!opts) opts = &none;
    qr_kern_init();                 /* idempotent; library users need not call it */
    QR__RUN_COUNT(graphs, 1);
    if (!opts->alias && !opts->subst && !opts->feed && !opts->live) QR__RUN_COUNT(plain, 1);
    QR_TRY(qr_run_check_supported(g));
    for (int i = 0; i < g->n_inputs; i++) {
        QR_TRY(qr_run_check_input(g, i, &inputs[i]));
        if (!inputs[i].data) return qr_errf(QR_ERR_INVALID, "input '%s' has no data", g->values[g->inputs[i]].name);
    }
    int nv = g->n_values;
    QR__RUN_ACTIVE(1);
    QrRunState r = { .g = g, .o = opts };
    r.vals = calloc((size_t)nv + 1, sizeof *r.vals);
    r.cap = calloc((size_t)nv + 1, sizeof *r.cap);
    r.uses = calloc((size_t)nv + 1, sizeof *r.uses);
    r.in = malloc((size_t)(g->max_io + 1) * sizeof *r.in);
    r.out = malloc((size_t)(g->max_io + 1) * sizeof *r.out);
    QrTensor *vals = r.vals;
    int *uses = r.uses;
    QrStatus st = vals && r.cap && uses && r.in && r.out ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        /* Reader counts after overrides decide when a value can be freed. */
        for (int ni = 0; ni < g->n_nodes; ni++)
            for (int k = 0; k < g->nodes[ni].n_in; k++)
                if (g->nodes[ni].in[k] >= 0) uses[qr__run_resolve(opts, g->nodes[ni].in[k])]++;
        for (int i = 0; i < g->n_outputs; i++) uses[qr__run_resolve(opts, g->outputs[i])]++;
        for (int v = 0; v < nv; v++) if (qr__run_clamped(opts, v)) uses[qr__run_resolve(opts, opts->alias[v])]++;
        for (int v = 0; v < nv; v++)
            if (g->values[v].is_init) { vals[v] = g->values[v].t; vals[v].owned = false; }
        for (int i = 0; i < g->n_inputs; i++) {
            vals[g->inputs[i]] = inputs[i];
            vals[g->inputs[i]].owned = false;
            if (opts->tap && (!opts->tap_only || opts->tap_only[g->inputs[i]]))
                st = opts->tap(opts->tap_user, g, -1, g->inputs[i], &inputs[i]);
            if (st != QR_OK) break;
        }
    }
    if (st == QR_OK && opts->cache && opts->cache->g == g) {
        r.cache = opts->cache;
        r.st = malloc(((size_t)nv + 1) * sizeof *r.st);
        if (!r.st) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        else qr__run_statics(g, opts, r.st);
    }
    if (st == QR_OK) {
        int *need = malloc(((size_t)nv + 1) * sizeof *need);
        r.dead = malloc(((size_t)g->n_nodes + 1) * sizeof *r.dead);
        if (!need || !r.dead) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        else qr__run_dead(g, opts, uses, outputs != NULL, need, r.dead);
        free(need);
    }
    if (st == QR_OK) st = qr__run_plan(g, opts, uses, r.st, &r.plan);
    if (st == QR_OK) st = qr__run_plan_dq(g, opts, uses, r.st, r.dead, &r.plan);
    if (st == QR_OK) st = qr__run_deferrable(&r);
    if (st == QR_OK) st = qr__run_rows_plan(&r);
    if (st == QR_OK) qr__run_plan_pairs(&r);
    for (int oi = 0; st == QR_OK && oi < g->n_nodes; oi++) {
        int ni = g->order[oi];
        int ci = r.plan.chain_of[ni];
        if (ci >= 0 && r.plan.chains[ci].nodes[0] != ni) continue;   /* ran with its chain's head */
        const double t_node = opts->node_sec ? qr_time_now() : 0;
        if (ci >= 0 && r.dead) {   /* a chain nothing reads (e.g. a twin's unselected float product) */
            bool all_dead = true;
            for (int k = 0; k < r.plan.chains[ci].n; k++) all_dead = all_dead && r.dead[r.plan.chains[ci].nodes[k]];
            if (all_dead) continue;
        }
        if (ci >= 0 && (r.plan.chains[ci].pair_c >= 0 || r.plan.chains[ci].pair_node >= 0)) continue;   /* at its pair's turn */
        if (ci < 0 && r.plan.pool_pair && r.plan.pool_pair[ni] >= 0 && r.defer[ni] != 1) {
            bool paired = false;
            st = qr__run_pool_pair(&r, ni, &paired);
            if (st != QR_OK) break;
            if (paired) {
                if (opts->node_sec) opts->node_sec[ni] += qr_time_now() - t_node;
                continue;
            }
        }
        if (ci >= 0 && r.plan.chains[ci].pair_p >= 0) {
            bool paired = false;
            st = qr__run_pair(&r, &r.plan.chains[ci], &paired);
            if (st != QR_OK) break;
            if (paired) {
                if (opts->node_sec) opts->node_sec[ni] += qr_time_now() - t_node;
                continue;
            }
        }
        if (ci >= 0) {
            QrRunChain *ch = &r.plan.chains[ci];
            bool fallback = false;
            for (int k = 0; st == QR_OK && k < ch->n; k++) st = qr__run_inputs_ready(&r, ch->nodes[k]);
            if (st == QR_OK) st = qr__run_chain(&r, ch, &fallback);
            if (st != QR_OK) break;
            if (st == QR_OK && fallback) {
                for (int k = 0; k < ch->n; k++) r.plan.chain_of[ch->nodes[k]] = -1;
            } else {
                for (int k = 0; st == QR_OK && k < ch->n; k++) st = qr__run_after(&r, ch->nodes[k]);
                if (opts->node_sec) opts->node_sec[ni] += qr_time_now() - t_node;
                continue;
            }
        }
        if (r.defer[ni] == 1) continue;   /* runs right before its first reader (or after the loop) */
        const QrRunDqFuse *fz = qr__run_dqf(&r, ni);
        if (fz && fz->dq == ni && r.defer[ni] != 2) continue;   /* with its reader (qr__run_inputs_ready) */
        st = qr__run_inputs_ready(&r, ni);
        if (st == QR_OK) st = qr__run_node_at(&r, ni);
        if (opts->node_sec) opts->node_sec[ni] += qr_time_now() - t_node;
    }
    /* deferred nodes no reader asked for (their readers skipped): run where they would have run */
    for (int oi = 0; st == QR_OK && oi < g->n_nodes; oi++)
        if (r.defer[g->order[oi]] == 1) { r.defer[g->order[oi]] = 2; st = qr__run_node_at(&r, g->order[oi]); }
    for (int i = 0; st == QR_OK && outputs && i < g->n_outputs; i++) {
        const QrTensor *src = qr__run_read(opts, vals, g->outputs[i]);
        if (!src->data && src->numel > 0) {
            st = qr_errf(QR_ERR_INVALID, "graph output '%s' was neither computed nor given", g->values[g->outputs[i]].name);
            break;
        }
        memset(&outputs[i], 0, sizeof outputs[i]);
        st = qr_tensor_set_shape(&outputs[i], src->dtype, src->rank, src->dims);
        if (st == QR_OK) st = qr_tensor_alloc_data(&outputs[i]);
        if (st == QR_OK) memcpy(outputs[i].data, src->data, qr_tensor_nbytes(src));
    }
    if (st != QR_OK && outputs)
        for (int i = 0; i < g->n_outputs; i++) if (outputs[i].owned) qr_tensor_free_data(&outputs[i]);
    if (vals) for (int v = 0; v < nv; v++) if (vals[v].data) qr__run_drop(vals, r.cap, v);
    qr__run_plan_free(&r.plan);
    qr_arena_free(&r.scratch);
    free(r.st);
    free(r.dead);
    free(r.defer);
    free(r.rows);
    free(r.rows_in);
    free(vals);
    free(r.cap);
    free(uses);
    free(r.in);
    free(r.out);
    QR__RUN_ACTIVE(-1);
    return st;
}

static QrStatus qr_run_node(const QrGraph *g, int node, const QrTensor *const *inputs, QrTensor *outputs) {
    const QrNode *n = &g->nodes[node];
    if (!n->def) return qr_errf(QR_ERR_UNSUPPORTED, "node '%s': operator %s is not supported", n->name, n->op_type);
    qr_kern_init();
    QrArena scratch = {0};
    QrTensor **out = malloc((size_t)(n->n_out + 1) * sizeof *out);
    if (!out) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n->n_out; k++) { memset(&outputs[k], 0, sizeof outputs[k]); out[k] = n->out[k] >= 0 ? &outputs[k] : NULL; }
    QrOpCtx c = { g, n, n->n_in, n->n_out, inputs, out, &scratch, NULL, NULL, NULL };
    QrStatus st = n->def->shape(&c);
    for (int k = 0; st == QR_OK && k < n->n_out; k++) if (out[k]) st = qr_tensor_alloc_data(out[k]);
    if (st == QR_OK) st = n->def->exec(&c);
    if (st != QR_OK) for (int k = 0; k < n->n_out; k++) qr_tensor_free_data(&outputs[k]);
    qr_arena_free(&scratch);
    free(out);
    return st;
}

/* ==== model warnings ===============================================================
 * What ONNX Runtime refuses to load but qreport can run: reported, never fatal. */

static int qr_run_lint(const QrGraph *g, void (*emit)(void *user, const char *msg), void *user) {
    int n = 0;
    char msg[1024];
    for (int ni = 0; ni < g->n_nodes; ni++) {
        const QrNode *nd = &g->nodes[ni];
        bool qdq = !strcmp(nd->op_type, "QuantizeLinear") || !strcmp(nd->op_type, "DequantizeLinear");
        if (!nd->domain[0] && qdq && qr_attr_int(nd, "block_size", 0) != 0 && nd->opset < 21) {
            snprintf(msg, sizeof msg, "%s: node '%s' (%s) has block_size=%lld, which needs opset 21 (the model imports "
                     "opset %d): ONNX Runtime rejects it, qreport runs it as blocked quantization", g->path, nd->name,
                     nd->op_type, (long long)qr_attr_int(nd, "block_size", 0), (int)nd->opset);
            emit(user, msg);
            n++;
        }
    }
    for (int v = 0; v < g->n_values; v++) {
        const QrValue *val = &g->values[v];
        if (!val->has_decl || val->is_input || val->is_init || val->is_dynamic || val->producer < 0) continue;
        if (!qr_dtype_supported(val->decl_dtype) || !qr_dtype_supported(val->t.dtype) || val->decl_dtype == val->t.dtype)
            continue;
        const QrNode *p = &g->nodes[val->producer];
        snprintf(msg, sizeof msg, "%s: node '%s' (%s) writes '%s' as %s, but the model declares it %s (%s): ONNX Runtime "
                 "rejects such a model; qreport goes by the inferred type", g->path, p->name, p->op_type, val->name,
                 qr_dtype_name(val->t.dtype), qr_dtype_name(val->decl_dtype), val->is_output ? "graph output" : "value_info");
        emit(user, msg);
        n++;
    }
    return n;
}
