/* run — implementation. See run.h. */

static QrStatus qr_graph_check_supported(const QrGraph *g) {
    char list[1536];
    int n = qr_graph_unsupported(g, list, sizeof list);
    if (n == 0) return QR_OK;
    return qr_errf(QR_ERR_UNSUPPORTED, "%s: %d node%s use%s operators qreport does not support: %s", g->path, n,
                   n == 1 ? "" : "s", n == 1 ? "s" : "", list);
}

static QrStatus qr_graph_input_shapes(const QrGraph *g, const QrTensor *const *given, QrTensor *out) {
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
        for (int d = 0; d < v->decl_rank; d++)
            if (v->decl_dims[d] < 0)
                return qr_errf(QR_ERR_INVALID, "%s: input '%s' has a dynamic dimension %d ('%s'); give the shape "
                               "with --shape %s=...", g->path, v->name, d,
                               v->decl_dim_names[d] ? v->decl_dim_names[d] : "?", v->name);
        QrStatus st = qr_tensor_set_shape(&out[i], v->decl_dtype, v->decl_rank, v->decl_dims);
        if (st != QR_OK) return qr_err_wrap(st, "%s: input '%s'", g->path, v->name);
    }
    return QR_OK;
}

static QrStatus qr_graph_check_input(const QrGraph *g, int i, const QrTensor *t) {
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
static QrStatus qr__ctx_init(QrOpCtx *c, const QrGraph *g, const QrNode *n, QrTensor *vals, QrArena *scratch,
                             const QrTensor **in, QrTensor **out) {
    c->g = g;
    c->node = n;
    c->n_in = n->n_in;
    c->n_out = n->n_out;
    c->scratch = scratch;
    for (int k = 0; k < n->n_in; k++) in[k] = n->in[k] >= 0 ? &vals[n->in[k]] : NULL;
    for (int k = 0; k < n->n_out; k++) out[k] = n->out[k] >= 0 ? &vals[n->out[k]] : NULL;
    c->in = in;
    c->out = out;
    return QR_OK;
}

static QrStatus qr_graph_infer(QrGraph *g, const QrTensor *inputs) {
    QR_TRY(qr_graph_check_supported(g));
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
        qr__ctx_init(&c, g, n, vals, &scratch, in, out);
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

static bool qr__clamped(const QrRunOpts *o, int v) {
    return o->clamp_lo && o->alias && o->alias[v] >= 0 && (o->clamp_lo[v] == o->clamp_lo[v] || o->clamp_hi[v] == o->clamp_hi[v]);
}

/* Follows alias chains; returns the value whose data v takes (itself if none).
 * Clamped aliases are materialized values of their own. */
static int qr__resolve(const QrRunOpts *o, int v) {
    for (int hops = 0; o->alias && o->alias[v] >= 0 && !qr__clamped(o, v) && hops < 64; hops++) v = o->alias[v];
    return v;
}

static bool qr__overridden(const QrRunOpts *o, int v) {
    return (o->alias && o->alias[v] >= 0) || (o->subst && o->subst[v]);
}

/* The tensor a reader of value v sees. */
static const QrTensor *qr__read(const QrRunOpts *o, QrTensor *vals, int v) {
    if (o->subst && o->subst[v]) return o->subst[v];
    if (o->feed && o->feed[v]) return o->feed[v];
    if (qr__clamped(o, v)) return &vals[v];
    int r = qr__resolve(o, v);
    if (r != v && o->subst && o->subst[r]) return o->subst[r];
    if (r != v && o->feed && o->feed[r]) return o->feed[r];
    return &vals[r];
}

/* What a tap sees for value v: the value as computed (feeds are for readers only). */
static const QrTensor *qr__tap_view(const QrRunOpts *o, QrTensor *vals, int v) {
    if (o->feed && o->feed[v] && !(o->subst && o->subst[v]) && vals[v].data) return &vals[v];
    return qr__read(o, vals, v);
}

static QrStatus qr_run(const QrGraph *g, const QrTensor *inputs, const QrRunOpts *opts, QrTensor *outputs) {
    QrRunOpts none = {0};
    if (!opts) opts = &none;
    qr_kern_init();                 /* idempotent; library users need not call it */
    QR_TRY(qr_graph_check_supported(g));
    for (int i = 0; i < g->n_inputs; i++) {
        QR_TRY(qr_graph_check_input(g, i, &inputs[i]));
        if (!inputs[i].data) return qr_errf(QR_ERR_INVALID, "input '%s' has no data", g->values[g->inputs[i]].name);
    }
    int nv = g->n_values;
    QrTensor *vals = calloc((size_t)nv + 1, sizeof *vals);
    int *uses = calloc((size_t)nv + 1, sizeof *uses);
    const QrTensor **in = malloc((size_t)g->max_io * sizeof *in);
    QrTensor **out = malloc((size_t)g->max_io * sizeof *out);
    QrArena scratch = {0};
    QrStatus st = vals && uses && in && out ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) {
        /* Reader counts after overrides decide when a value can be freed. */
        for (int ni = 0; ni < g->n_nodes; ni++)
            for (int k = 0; k < g->nodes[ni].n_in; k++)
                if (g->nodes[ni].in[k] >= 0) uses[qr__resolve(opts, g->nodes[ni].in[k])]++;
        for (int i = 0; i < g->n_outputs; i++) uses[qr__resolve(opts, g->outputs[i])]++;
        for (int v = 0; v < nv; v++) if (qr__clamped(opts, v)) uses[qr__resolve(opts, opts->alias[v])]++;
        for (int v = 0; v < nv; v++)
            if (g->values[v].is_init) { vals[v] = g->values[v].t; vals[v].owned = false; }
        for (int i = 0; i < g->n_inputs; i++) {
            vals[g->inputs[i]] = inputs[i];
            vals[g->inputs[i]].owned = false;
            if (opts->tap) st = opts->tap(opts->tap_user, g, -1, g->inputs[i], &inputs[i]);
            if (st != QR_OK) break;
        }
    }
    for (int oi = 0; st == QR_OK && oi < g->n_nodes; oi++) {
        const QrNode *n = &g->nodes[g->order[oi]];
        bool skip = n->n_out > 0;
        for (int k = 0; k < n->n_out; k++) if (n->out[k] >= 0 && !qr__overridden(opts, n->out[k])) skip = false;
        if (opts->live && !opts->live[g->order[oi]]) skip = true;
        if (!skip) {
            QrOpCtx c;
            qr__ctx_init(&c, g, n, vals, &scratch, in, out);
            for (int k = 0; k < n->n_in; k++) if (n->in[k] >= 0) in[k] = qr__read(opts, vals, n->in[k]);
            for (int k = 0; k < n->n_in && st == QR_OK; k++)
                if (n->in[k] >= 0 && !in[k]->data && in[k]->numel > 0)
                    st = qr_errf(QR_ERR_INVALID, "node '%s' (%s) reads '%s', which this run neither computed nor was given",
                                 n->name, n->op_type, g->values[n->in[k]].name);
            if (st != QR_OK) break;
            if (opts->n_exec) (*opts->n_exec)++;
            st = n->def->shape(&c);
            for (int k = 0; st == QR_OK && k < n->n_out; k++)
                if (out[k]) st = qr_tensor_alloc_data(out[k]);
            if (st == QR_OK) st = n->def->exec(&c);
            if (st != QR_OK && !strstr(qr_err_msg(), n->name))
                st = qr_err_wrap(st, "node '%s' (%s)", n->name, n->op_type);
        }
        /* Clamped aliases: materialize clamp(source). */
        for (int k = 0; st == QR_OK && k < n->n_out; k++) {
            int v = n->out[k];
            if (v < 0 || !qr__clamped(opts, v)) continue;
            int src = qr__resolve(opts, opts->alias[v]);
            const QrTensor *s = qr__read(opts, vals, opts->alias[v]);
            st = qr_tensor_set_shape(&vals[v], QR_DT_F32, s->rank, s->dims);
            if (st == QR_OK && s->dtype != QR_DT_F32) st = qr_errf(QR_ERR_INVALID, "clamped value '%s' is not float32", g->values[v].name);
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
            if (--uses[src] == 0 && vals[src].owned) qr_tensor_free_data(&vals[src]);
        }
        for (int k = 0; st == QR_OK && opts->tap && k < n->n_out; k++)
            if (n->out[k] >= 0 && qr__read(opts, vals, n->out[k])->data)
                st = opts->tap(opts->tap_user, g, g->order[oi], n->out[k], qr__tap_view(opts, vals, n->out[k]));
        /* Free what no later node reads. */
        for (int k = 0; k < n->n_in; k++) {
            if (n->in[k] < 0) continue;
            int v = qr__resolve(opts, n->in[k]);
            if (--uses[v] == 0 && vals[v].owned) qr_tensor_free_data(&vals[v]);
        }
        for (int k = 0; k < n->n_out; k++) {
            int v = n->out[k];
            if (v >= 0 && uses[v] == 0 && vals[v].owned) qr_tensor_free_data(&vals[v]);
        }
        qr_arena_clear(&scratch);
    }
    for (int i = 0; st == QR_OK && outputs && i < g->n_outputs; i++) {
        const QrTensor *src = qr__read(opts, vals, g->outputs[i]);
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
    if (vals) for (int v = 0; v < nv; v++) if (vals[v].owned) qr_tensor_free_data(&vals[v]);
    qr_arena_free(&scratch);
    free(vals);
    free(uses);
    free(in);
    free(out);
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
    QrOpCtx c = { g, n, n->n_in, n->n_out, inputs, out, &scratch };
    QrStatus st = n->def->shape(&c);
    for (int k = 0; st == QR_OK && k < n->n_out; k++) if (out[k]) st = qr_tensor_alloc_data(out[k]);
    if (st == QR_OK) st = n->def->exec(&c);
    if (st != QR_OK) for (int k = 0; k < n->n_out; k++) qr_tensor_free_data(&outputs[k]);
    qr_arena_free(&scratch);
    free(out);
    return st;
}
