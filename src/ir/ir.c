/* ir — implementation. See ir.h. */

static void qr_graph_free(QrGraph *g) {
    if (!g) return;
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i].t.owned) qr_tensor_free_data(&g->values[i].t);
    qr_arena_free(&g->arena);
}

static int qr_graph_find(const QrGraph *g, const char *name) { return qr_strmap_get(&g->names, name); }

static QrStatus qr_graph_value(QrGraph *g, const char *name, int *out) {
    int idx = qr_strmap_get(&g->names, name);
    if (idx >= 0) { *out = idx; return QR_OK; }
    if (g->n_values == g->cap_values) {
        int cap = g->cap_values ? g->cap_values * 2 : 64;
        QrValue *nv = qr_arena_array(&g->arena, (size_t)cap, sizeof *nv);
        if (!nv) return qr_errf(QR_ERR_NOMEM, "out of memory for values");
        if (g->n_values) memcpy(nv, g->values, (size_t)g->n_values * sizeof *nv);
        g->values = nv;
        g->cap_values = cap;
    }
    idx = g->n_values++;
    QrValue *v = &g->values[idx];
    memset(v, 0, sizeof *v);
    v->name = qr_arena_strdup(&g->arena, name);
    if (!v->name) return qr_errf(QR_ERR_NOMEM, "out of memory");
    v->producer = -1;
    QR_TRY(qr_strmap_put(&g->names, &g->arena, v->name, idx));
    *out = idx;
    return QR_OK;
}

static QrStatus qr_graph_clone_values(const QrGraph *src, QrGraph *dst, int node_capacity) {
    memset(dst, 0, sizeof *dst);
    QrArena *a = &dst->arena;
    dst->path = src->path;
    dst->dir = src->dir;
    dst->name = src->name;
    dst->producer = src->producer;
    dst->ir_version = src->ir_version;
    dst->opset = src->opset;
    dst->opset_ms = src->opset_ms;
    QR_TRY(qr_strmap_init(&dst->names, a, (uint32_t)src->n_values + 16));
    for (int i = 0; i < src->n_values; i++) {
        int v;
        QR_TRY(qr_graph_value(dst, src->values[i].name, &v));
        QrValue *d = &dst->values[v];
        const QrValue *s = &src->values[i];
        const char *name = d->name;
        *d = *s;
        d->name = name;
        d->producer = -1;
        d->n_uses = 0;
        d->is_folded = d->is_dynamic = false;
        d->is_const = s->is_init;
        if (s->is_init) d->t.owned = false;          /* borrowed from src */
        else memset(&d->t, 0, sizeof d->t);
    }
    dst->n_inputs = src->n_inputs;
    dst->n_outputs = src->n_outputs;
    dst->inputs = qr_arena_array(a, (size_t)src->n_inputs + 1, sizeof(int));
    dst->outputs = qr_arena_array(a, (size_t)src->n_outputs + 1, sizeof(int));
    dst->cap_nodes = QR_MAX(node_capacity, 1);
    dst->nodes = qr_arena_array(a, (size_t)dst->cap_nodes, sizeof(QrNode));
    if (!dst->inputs || !dst->outputs || !dst->nodes) return qr_errf(QR_ERR_NOMEM, "out of memory cloning a graph");
    memcpy(dst->inputs, src->inputs, (size_t)src->n_inputs * sizeof(int));
    memcpy(dst->outputs, src->outputs, (size_t)src->n_outputs * sizeof(int));
    return QR_OK;
}

static QrStatus qr_graph_add_node(QrGraph *g, const char *name, const char *op_type, const char *domain, int n_in,
                                  const int *in, int n_out, const int *out, int n_attr, const QrAttr *attr, int *idx) {
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? g->cap_nodes * 2 : 16;
        QrNode *nn = qr_arena_array(&g->arena, (size_t)cap, sizeof *nn);
        if (!nn) return qr_errf(QR_ERR_NOMEM, "out of memory adding node '%s'", name);
        if (g->n_nodes) memcpy(nn, g->nodes, (size_t)g->n_nodes * sizeof *nn);
        g->nodes = nn;
        g->cap_nodes = cap;
    }
    QrNode *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = qr_arena_strdup(&g->arena, name);
    n->op_type = qr_arena_strdup(&g->arena, op_type);
    n->domain = qr_arena_strdup(&g->arena, domain ? domain : "");
    n->in = qr_arena_array(&g->arena, (size_t)n_in + 1, sizeof(int));
    n->out = qr_arena_array(&g->arena, (size_t)n_out + 1, sizeof(int));
    n->attr = qr_arena_array(&g->arena, (size_t)n_attr + 1, sizeof(QrAttr));
    if (!n->name || !n->op_type || !n->domain || !n->in || !n->out || !n->attr)
        return qr_errf(QR_ERR_NOMEM, "out of memory adding node '%s'", name);
    n->n_in = n_in;
    n->n_out = n_out;
    n->n_attr = n_attr;
    if (n_in) memcpy(n->in, in, (size_t)n_in * sizeof(int));
    if (n_out) memcpy(n->out, out, (size_t)n_out * sizeof(int));
    if (n_attr) memcpy(n->attr, attr, (size_t)n_attr * sizeof(QrAttr));   /* attribute payloads are shared */
    n->opset = n->domain[0] == 0 ? g->opset : strcmp(n->domain, "com.microsoft") == 0 ? g->opset_ms : 1;
    if (idx) *idx = g->n_nodes;
    g->n_nodes++;
    return QR_OK;
}

static const char *qr_graph_fresh_name(QrGraph *g, const char *base) {
    if (qr_graph_find(g, base) < 0) return qr_arena_strdup(&g->arena, base);
    for (int k = 1;; k++) {
        const char *s = qr_arena_printf(&g->arena, "%s#%d", base, k);
        if (!s || qr_graph_find(g, s) < 0) return s;
    }
}

static QrStatus qr_graph_finalize(QrGraph *g) {
    for (int i = 0; i < g->n_values; i++) { g->values[i].producer = -1; g->values[i].n_uses = 0; }
    for (int ni = 0; ni < g->n_nodes; ni++) {
        QrNode *n = &g->nodes[ni];
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0) continue;
            QrValue *val = &g->values[v];
            if (val->producer >= 0)
                return qr_errf(QR_ERR_INVALID, "value '%s' is produced twice (by nodes '%s' and '%s')",
                               val->name, g->nodes[val->producer].name, n->name);
            if (val->is_init || val->is_input)
                return qr_errf(QR_ERR_INVALID, "node '%s' writes '%s', which is a graph %s",
                               n->name, val->name, val->is_init ? "initializer" : "input");
            val->producer = ni;
        }
    }
    /* Kahn's algorithm; counts unresolved inputs per node. */
    int *pending = qr_arena_array(&g->arena, (size_t)g->n_nodes + 1, sizeof(int));
    int *first_use = qr_arena_array(&g->arena, (size_t)g->n_values + 1, sizeof(int));
    int *next_use = NULL, n_edges = 0;
    for (int ni = 0; ni < g->n_nodes; ni++) n_edges += g->nodes[ni].n_in;
    next_use = qr_arena_array(&g->arena, (size_t)n_edges + 1, sizeof(int));
    int *use_node = qr_arena_array(&g->arena, (size_t)n_edges + 1, sizeof(int));
    g->order = qr_arena_array(&g->arena, (size_t)g->n_nodes + 1, sizeof(int));
    if (!pending || !first_use || !next_use || !use_node || !g->order)
        return qr_errf(QR_ERR_NOMEM, "out of memory ordering the graph");
    for (int i = 0; i < g->n_values; i++) first_use[i] = -1;
    int e = 0;
    for (int ni = 0; ni < g->n_nodes; ni++) {
        QrNode *n = &g->nodes[ni];
        for (int k = 0; k < n->n_in; k++) {
            int v = n->in[k];
            if (v < 0) continue;
            QrValue *val = &g->values[v];
            val->n_uses++;
            if (val->producer < 0 && !val->is_init && !val->is_input)
                return qr_errf(QR_ERR_INVALID, "node '%s' (%s) reads '%s', which no node produces and which "
                               "is neither a graph input nor an initializer", n->name, n->op_type, val->name);
            if (val->producer >= 0) {
                pending[ni]++;
                use_node[e] = ni;
                next_use[e] = first_use[v];
                first_use[v] = e++;
            }
        }
    }
    for (int k = 0; k < g->n_outputs; k++) {
        QrValue *val = &g->values[g->outputs[k]];
        val->n_uses++;
        if (val->producer < 0 && !val->is_init && !val->is_input)
            return qr_errf(QR_ERR_INVALID, "graph output '%s' is never produced", val->name);
    }
    int head = 0, tail = 0;
    for (int ni = 0; ni < g->n_nodes; ni++) if (pending[ni] == 0) g->order[tail++] = ni;
    while (head < tail) {
        QrNode *n = &g->nodes[g->order[head++]];
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0) continue;
            for (int u = first_use[v]; u >= 0; u = next_use[u])
                if (--pending[use_node[u]] == 0) g->order[tail++] = use_node[u];
        }
    }
    if (tail != g->n_nodes) {
        for (int ni = 0; ni < g->n_nodes; ni++)
            if (pending[ni] > 0)
                return qr_errf(QR_ERR_INVALID, "the graph has a cycle (node '%s' (%s) is part of it or depends on it)",
                               g->nodes[ni].name, g->nodes[ni].op_type);
    }
    g->max_io = 1;
    for (int ni = 0; ni < g->n_nodes; ni++) g->max_io = QR_MAX(g->max_io, QR_MAX(g->nodes[ni].n_in, g->nodes[ni].n_out));
    /* Reader lists (CSR), in topological order, so analyses never scan all nodes per value. */
    g->use_start = qr_arena_array(&g->arena, (size_t)g->n_values + 2, sizeof(int));
    g->uses = qr_arena_array(&g->arena, (size_t)n_edges + 1, sizeof(QrUse));
    if (!g->use_start || !g->uses) return qr_errf(QR_ERR_NOMEM, "out of memory indexing the graph");
    for (int ni = 0; ni < g->n_nodes; ni++)
        for (int k = 0; k < g->nodes[ni].n_in; k++)
            if (g->nodes[ni].in[k] >= 0) g->use_start[g->nodes[ni].in[k] + 1]++;
    for (int v = 0; v < g->n_values; v++) g->use_start[v + 1] += g->use_start[v];
    int *fill = first_use;                         /* reuse: per-value write cursor */
    for (int v = 0; v < g->n_values; v++) fill[v] = g->use_start[v];
    for (int oi = 0; oi < g->n_nodes; oi++) {
        const QrNode *n = &g->nodes[g->order[oi]];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) g->uses[fill[n->in[k]]++] = (QrUse){ g->order[oi], k };
    }
    return QR_OK;
}

static int qr_graph_single_reader(const QrGraph *g, int v) {
    const QrUse *u;
    int n = qr_graph_readers(g, v, &u);
    for (int i = 1; i < n; i++) if (u[i].node != u[0].node) return -1;
    return n ? u[0].node : -1;
}

static const QrAttr *qr_node_attr(const QrNode *n, const char *name) {
    for (int i = 0; i < n->n_attr; i++) if (strcmp(n->attr[i].name, name) == 0) return &n->attr[i];
    return NULL;
}

static int64_t qr_attr_int(const QrNode *n, const char *name, int64_t dflt) {
    const QrAttr *a = qr_node_attr(n, name);
    return a && a->type == QR_ATTR_INT ? a->i : dflt;
}

static float qr_attr_float(const QrNode *n, const char *name, float dflt) {
    const QrAttr *a = qr_node_attr(n, name);
    if (!a) return dflt;
    if (a->type == QR_ATTR_FLOAT) return a->f;
    if (a->type == QR_ATTR_INT) return (float)a->i;
    return dflt;
}

static const char *qr_attr_str(const QrNode *n, const char *name, const char *dflt) {
    const QrAttr *a = qr_node_attr(n, name);
    return a && a->type == QR_ATTR_STRING ? a->s : dflt;
}

static int qr_attr_ints(const QrNode *n, const char *name, const int64_t **out) {
    const QrAttr *a = qr_node_attr(n, name);
    if (!a || a->type != QR_ATTR_INTS) { *out = NULL; return -1; }
    *out = a->ints;
    return a->n;
}

static int qr_attr_floats(const QrNode *n, const char *name, const float **out) {
    const QrAttr *a = qr_node_attr(n, name);
    if (!a || a->type != QR_ATTR_FLOATS) { *out = NULL; return -1; }
    *out = a->floats;
    return a->n;
}

