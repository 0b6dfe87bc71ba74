/* deploy/promote — implementation. See promote.h. The plan, the 16-bit substitutes and the
 * prediction are the what-if's own (analysis/whatif.c: qr_whatif_groups, qr_whatif_plan, qr_whatif_promote,
 * qr_whatif_run_job), so the model written is the graph the what-if ran. */

static QrStatus qr_promote_nodes(const QrSession *s, const char *list, QrArena *a, int **out, int *n) {
    const QrGraph *tg = &s->tw.g;
    int cap = 1;
    for (const char *p = list; *p; p++) cap += *p == ',';
    int *v = qr_arena_array(a, (size_t)cap + 1, sizeof *v);
    char *buf = qr_arena_strdup(a, list);
    if (!v || !buf) return qr_errf(QR_ERR_NOMEM, "out of memory");
    *n = 0;
    for (char *sv = NULL, *tok = strtok_r(buf, ",", &sv); tok; tok = strtok_r(NULL, ",", &sv)) {
        /* twin nodes standing for the name (a QOperator node's twin is DequantizeLinear -> op ->
         * QuantizeLinear, all with its name): the one owning the most quantizers */
        int found = -1, best = -1;
        for (int k = 0; k < tg->n_nodes; k++) {
            bool cand = !strcmp(qr_dist_node_name(s, k), tok);
            for (int i = 0; i < s->m.n && !cand; i++) {
                const QrMatch *m = &s->m.m[i];
                cand = m->a_node >= 0 && s->tw.origin[k] == m->a_node &&
                       (!strcmp(s->b->nodes[m->b_node].name, tok) || (m->b_twin >= 0 && !strcmp(s->b->nodes[m->b_twin].name, tok)));
            }
            if (!cand) continue;
            int owned = 0;
            for (int i = 0; i < s->qt.n; i++) owned += s->qt.q[i].owner == k && s->qt.q[i].kind != QR_QK_BIAS;
            if (owned > best) { best = owned; found = k; }
        }
        if (found < 0) {
            const char **names = qr_arena_array(a, (size_t)tg->n_nodes + (size_t)s->m.n + 1, sizeof *names);
            if (!names) return qr_errf(QR_ERR_NOMEM, "out of memory");
            int nn = 0;
            for (int k = 0; k < tg->n_nodes; k++) {
                const char *op = tg->nodes[k].op_type;
                if (strcmp(op, "QuantizeLinear") && strcmp(op, "DequantizeLinear")) names[nn++] = qr_dist_node_name(s, k);
            }
            for (int i = 0; i < s->m.n; i++) names[nn++] = s->b->nodes[s->m.m[i].b_node].name;
            return qr_errf(QR_ERR_INVALID, "no node '%s' in %s or %s%s", tok, s->a->path, s->b->path,
                           qr_dump_suggest(a, tok, names, nn));
        }
        bool dup = false;
        for (int k = 0; k < *n; k++) dup |= v[k] == found;
        if (!dup) v[(*n)++] = found;
    }
    if (!*n) return qr_errf(QR_ERR_INVALID, "--nodes: no node named");
    *out = v;
    return QR_OK;
}

/* ---- writing a twin-shaped graph under overrides ---- */

typedef struct QrPmEmit {
    const QrGraph *g;
    const QrTensor *const *subst;    /* per value: an initializer replacing it, or NULL */
    const int *alias;                /* per value: the value it takes (a disabled quantizer), or -1 / NULL */
    const float *clo, *chi;          /* per value: clamp of an aliased value (NaN: none), or NULL */
    const char *const *domain;       /* per node: another operator domain, or NULL / NULL entries */
} QrPmEmit;

static bool qr__pm_clamped(const QrPmEmit *e, int v) {
    return e->clo && (e->clo[v] == e->clo[v] || e->chi[v] == e->chi[v]);
}

/* The value a reader of v reads in the written model. */
static int qr__pm_resolve(const QrPmEmit *e, int v) {
    for (int hop = 0; hop < 64 && e->alias && v >= 0 && e->alias[v] >= 0 && !e->subst[v] && !qr__pm_clamped(e, v); hop++)
        v = e->alias[v];
    return v;
}

static bool qr__pm_replaced(const QrPmEmit *e, int v) {
    return v >= 0 && (e->subst[v] || (e->alias && e->alias[v] >= 0));
}

static QrStatus qr__pm_emit(const QrPmEmit *e, const char *path) {
    const QrGraph *g = e->g;
    QrOnnxOut x;
    QR_TRY(qr_onnxw_init(&x, g, g->name && g->name[0] ? g->name : "qreport_promoted"));
    QrArena ar = { 0 };
    bool *live = calloc((size_t)g->n_values + 1, sizeof *live), *keep = calloc((size_t)g->n_nodes + 1, sizeof *keep);
    const char **names = calloc((size_t)g->n_values + 1, sizeof *names);
    QrStatus st = live && keep && names ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int v = 0; st == QR_OK && v < g->n_values; v++) names[v] = g->values[qr__pm_resolve(e, v)].name;
    /* liveness from the graph outputs, through the resolved reads */
    for (int i = 0; st == QR_OK && i < g->n_outputs; i++) { live[g->outputs[i]] = true; live[qr__pm_resolve(e, g->outputs[i])] = true; }
    for (int k = g->n_nodes - 1; st == QR_OK && k >= 0; k--) {
        int n = g->order[k];
        const QrNode *nd = &g->nodes[n];
        bool all_replaced = true, any_live = false;
        for (int o = 0; o < nd->n_out; o++) {
            int v = nd->out[o];
            if (v < 0) continue;
            all_replaced &= qr__pm_replaced(e, v);
            if (live[v] && !qr__pm_replaced(e, v)) any_live = true;
            if (live[v] && e->alias && e->alias[v] >= 0 && !e->subst[v])     /* aliased: its source is needed */
                live[qr__pm_resolve(e, e->alias[v])] = true;
        }
        if (all_replaced || !any_live) continue;
        keep[n] = true;
        for (int i = 0; i < nd->n_in; i++) if (nd->in[i] >= 0) live[qr__pm_resolve(e, nd->in[i])] = true;
    }
    for (int i = 0; st == QR_OK && i < g->n_inputs; i++) {
        const QrValue *v = &g->values[g->inputs[i]];
        st = qr_onnxw_input(&x, v->name, v->t.dtype, v->t.rank, v->t.dims);
    }
    /* substitutes first, so they take the names of what they replace; a substitute for a computed
     * value (a float weight or bias in place of a DequantizeLinear output) stays computed, through an
     * Identity: kernels sum differently for initializers (ONNX Runtime packs them), and the prediction
     * ran with a computed value */
    for (int v = 0; st == QR_OK && v < g->n_values; v++) {
        if (!e->subst[v] || !live[v]) continue;
        if (g->values[v].is_init) { st = qr_onnxw_init_tensor(&x, g->values[v].name, e->subst[v]); continue; }
        const char *src = qr_arena_printf(&ar, "%s_value", g->values[v].name), *out[1] = { g->values[v].name };
        st = src ? qr_onnxw_init_tensor(&x, src, e->subst[v]) : qr_errf(QR_ERR_NOMEM, "out of memory");
        if (st == QR_OK) st = qr_onnxw_node(&x, qr_arena_printf(&ar, "%s_Identity", g->values[v].name), "Identity", "", 1, &src, 1,
                                        out, 0, NULL);
    }
    for (int k = 0; st == QR_OK && k < g->n_nodes; k++) {
        int n = g->order[k];
        const QrNode *nd = &g->nodes[n];
        if (keep[n] && e->domain && e->domain[n]) {    /* 16-bit Q/DQ before opset 21: ONNX Runtime's contrib ops */
            const char *in[64], *out[64];
            for (int i = 0; i < nd->n_in && i < 64; i++) in[i] = nd->in[i] < 0 ? "" : names[nd->in[i]];
            for (int i = 0; i < nd->n_out && i < 64; i++) out[i] = nd->out[i] < 0 ? "" : names[nd->out[i]];
            st = qr_onnxw_node(&x, nd->name, nd->op_type, e->domain[n], nd->n_in, in, nd->n_out, out, nd->n_attr, nd->attr);
            continue;
        }
        if (keep[n]) { st = qr_onnxw_node_from(&x, n, names); continue; }
        for (int o = 0; st == QR_OK && o < nd->n_out; o++) {    /* a disabled quantizer that implemented an activation */
            int v = nd->out[o];
            if (v < 0 || !live[v] || e->subst[v] || !e->alias || e->alias[v] < 0 || !qr__pm_clamped(e, v)) continue;
            QrTensor *lo = qr_arena_alloc(&ar, sizeof *lo), *hi = qr_arena_alloc(&ar, sizeof *hi);
            if (!lo || !hi) { st = qr_errf(QR_ERR_NOMEM, "out of memory"); break; }
            const char *in[3] = { g->values[qr__pm_resolve(e, e->alias[v])].name, "", "" };
            if (e->clo[v] == e->clo[v]) {
                st = qr_tensor_set_shape(lo, QR_DT_F32, 0, NULL);
                if (st == QR_OK && !(lo->data = qr_arena_alloc(&ar, sizeof(float)))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
                if (st == QR_OK) { *(float *)lo->data = e->clo[v]; in[1] = qr_arena_printf(&ar, "%s_clip_min", g->values[v].name); }
                if (st == QR_OK) st = qr_onnxw_init_tensor(&x, in[1], lo);
            }
            if (st == QR_OK && e->chi[v] == e->chi[v]) {
                st = qr_tensor_set_shape(hi, QR_DT_F32, 0, NULL);
                if (st == QR_OK && !(hi->data = qr_arena_alloc(&ar, sizeof(float)))) st = qr_errf(QR_ERR_NOMEM, "out of memory");
                if (st == QR_OK) { *(float *)hi->data = e->chi[v]; in[2] = qr_arena_printf(&ar, "%s_clip_max", g->values[v].name); }
                if (st == QR_OK) st = qr_onnxw_init_tensor(&x, in[2], hi);
            }
            const char *out[1] = { g->values[v].name };
            if (st == QR_OK) st = qr_onnxw_node(&x, qr_arena_printf(&ar, "%s_Clip", g->values[v].name), "Clip", "", in[2][0] ? 3 : 2,
                                            in, 1, out, 0, NULL);
        }
    }
    for (int i = 0; st == QR_OK && i < g->n_outputs; i++) {
        int v = g->outputs[i], r = qr__pm_resolve(e, v);
        const QrValue *val = &g->values[v];
        if (r != v) {                                  /* an aliased graph output keeps its name */
            const char *in[1] = { g->values[r].name }, *out[1] = { val->name };
            st = qr_onnxw_node(&x, qr_arena_printf(&ar, "%s_Identity", val->name), "Identity", "", 1, in, 1, out, 0, NULL);
        }
        if (st == QR_OK) st = qr_onnxw_output(&x, val->name, val->t.dtype, val->t.rank, val->t.dims);
    }
    if (st == QR_OK) st = qr_onnxw_used_inits(&x);
    if (st == QR_OK) st = qr_onnxw_write(&x, path);
    qr_onnxw_free(&x);
    qr_arena_free(&ar);
    free(live);
    free(keep);
    free(names);
    return st;
}

static QrStatus qr_promote_model_rank(QrSession *s, QrWiNode *rank, int n, bool to_float, const char *onnx_path,
                                  QrPromoteResult *r);

static QrStatus qr_promote_model(QrSession *s, const int *twin_nodes, int n, bool to_float, const char *onnx_path,
                                 QrPromoteResult *r) {
    int nq = s->qt.n;
    QrWiNode *rank = calloc((size_t)n + 1, sizeof *rank);
    if (!rank) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int j = 0; j < n; j++) {                    /* the nodes as what-if rows: every quantizer they own */
        rank[j].node = twin_nodes[j];
        rank[j].name = qr_dist_node_name(s, twin_nodes[j]);
        for (int i = 0; i < nq && rank[j].n_q < QR_WHATIF_NODE_MAXQ; i++)
            if (s->qt.q[i].owner == twin_nodes[j] && s->qt.q[i].kind != QR_QK_BIAS) rank[j].q[rank[j].n_q++] = i;
    }
    QrStatus st = qr_promote_model_rank(s, rank, n, to_float, onnx_path, r);
    free(rank);
    return st;
}

/* The promotion of the first n rows of a what-if ranking (qr_whatif_rank or built from nodes). */
static QrStatus qr_promote_model_rank(QrSession *s, QrWiNode *rank, int n, bool to_float, const char *onnx_path,
                                  QrPromoteResult *r) {
    memset(r, 0, sizeof *r);
    r->to_float = to_float;
    QR_TRY(qr_session_run_baseline(s));
    int nq = s->qt.n;
    QrWhatIf w = { 0 };
    QrWhatIfStep step = { .k = n };
    QrWiStepPlan plan = { 0 };
    QrWiGroups gr = { 0 };
    plan.state = malloc(((size_t)nq + 1) * sizeof(int));
    plan.mask = malloc((size_t)nq + 1);
    QrStatus st = plan.state && plan.mask ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK) st = qr_whatif_groups(s, &w.arena, &gr);
    if (st == QR_OK) st = qr_whatif_plan(s, rank, &gr, &w, &step, &plan);
    QrWiRunJob job = { s, &gr, &step, &plan };
    if (st == QR_OK) st = qr_whatif_run_job(&job, to_float ? 1 : 0, 0);
    if (st == QR_OK) r->predicted = to_float ? step.fp : step.int16;
    /* the graph the prediction ran, written as ONNX */
    if (st == QR_OK && !to_float) {
        int npv = gr.pg.n_values;
        const QrTensor **subst = calloc((size_t)npv + 1, sizeof *subst);
        QrWiSubst ts = { calloc((size_t)nq * 3 + 3, sizeof(QrTensor)), 0, nq * 3 + 3 };
        st = ts.t && subst ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int i = 0; st == QR_OK && i < nq; i++) {     /* as qr_whatif_run_job's 16-bit run */
            if (plan.state[i] == 4 && s->fw[i] && s->qt.q[i].out_value >= 0) subst[s->qt.q[i].out_value] = s->fw[i];
            if (plan.state[i] < 2 || plan.state[i] == 4) continue;
            st = qr_whatif_promote(s, &gr, i, &ts, subst);
        }
        /* ONNX's QuantizeLinear / DequantizeLinear take 16-bit types from opset 21; before it the
         * promoted quantizers' nodes use com.microsoft's, which ONNX Runtime has for 16 bits */
        const char **dom = calloc((size_t)gr.pg.n_nodes + 1, sizeof *dom);
        if (st == QR_OK && !dom) st = qr_errf(QR_ERR_NOMEM, "out of memory");
        for (int i = 0; st == QR_OK && gr.pg.opset < 21 && i < nq; i++) {
            if (plan.state[i] != 2 && plan.state[i] != 3) continue;
            const QrQuantizer *q = &s->qt.q[i];
            if (q->q_node >= 0 && !gr.pg.nodes[q->q_node].domain[0]) dom[q->q_node] = "com.microsoft";
            for (int d = 0; d < q->n_dq; d++) if (!gr.pg.nodes[q->dq_nodes[d]].domain[0]) dom[q->dq_nodes[d]] = "com.microsoft";
        }
        QrPmEmit e = { &gr.pg, subst, NULL, NULL, NULL, dom };
        if (st == QR_OK) st = qr__pm_emit(&e, onnx_path);
        free(dom);
        qr_whatif_subst_free(&ts);
        free(subst);
    } else if (st == QR_OK) {
        QrOverrides ov = { 0 };
        st = qr_session_overrides_alloc(s, &ov);
        if (st == QR_OK) {
            qr_session_overrides(s, plan.mask, &ov);
            QrPmEmit e = { &s->tw.g, ov.subst, ov.alias, ov.clamp_lo, ov.clamp_hi, NULL };
            st = qr__pm_emit(&e, onnx_path);
        }
        qr_session_overrides_free(&ov);
    }
    if (st == QR_OK) {
        r->n_nodes = n;
        r->nodes = step.nodes;
        r->base_nodes = step.base_nodes;
        r->n_promoted = step.n_promoted;
        r->promoted = step.promoted;
        r->n_also = step.n_also;
        r->also = step.also;
        r->n_not = step.n_not;
        r->not_promoted = step.not_promoted;
        r->n_not_disabled = step.n_not_disabled;
        r->n_ort = step.n_ort;
        r->ort_overrides = step.ort_overrides;
        r->ort_types = step.ort_types;
        r->arena = w.arena;                            /* the lists live there */
        w.arena = (QrArena){ 0 };
    }
    qr_whatif_groups_free(&gr);
    qr_arena_free(&w.arena);
    free(plan.state);
    free(plan.mask);
    return st;
}

static void qr_promote_free(QrPromoteResult *r) {
    qr_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}

static QrStatus qr__pm_json_out(QrJson *j, const char *dir, const char *prefix, const char *file) {
    char *txt = NULL, path[4096];
    size_t len = 0;
    QrStatus st = qr_json_finish(j, &txt, &len);
    snprintf(path, sizeof path, "%s/%s%s", dir, prefix, file);
    if (st == QR_OK) st = qr_file_write_atomic(path, txt, len);
    free(txt);
    qr_json_free(j);
    return st;
}

static QrStatus qr_promote_write_lists(const QrPromoteResult *r, const char *dir, const char *prefix, const char *model_file) {
    QrArena a = { 0 };
    /* the baseline (float model) names: what a quantizer run on the float model calls them */
    const char **bn = qr_arena_array(&a, (size_t)r->n_nodes + 1, sizeof *bn);
    if (!bn) return qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int k = 0; k < r->n_nodes; k++) bn[k] = r->base_nodes[k] ? r->base_nodes[k] : r->nodes[k];
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_kv_str(&j, "model", model_file);
    qr_json_kv_str(&j, "to", r->to_float ? "float" : "int16");
    qr_whatif_js_strs(&j, "nodes", r->nodes, r->n_nodes);
    qr_whatif_js_strs(&j, "base_nodes", bn, r->n_nodes);
    qr_json_key(&j, "predicted");
    qr_json_obj_begin(&j);
    qr_json_kv_num(&j, "Cosine", r->predicted.cosine);
    qr_json_kv_num(&j, "SQNR", r->predicted.sqnr);
    qr_json_kv_num(&j, "L1", r->predicted.l1);
    qr_json_kv_num(&j, "MSE", r->predicted.mse);
    qr_json_obj_end(&j);
    if (!r->to_float) {
        qr_whatif_js_strs(&j, "promoted_tensors", r->promoted, r->n_promoted);
        qr_whatif_js_strs(&j, "also_promoted", r->also, r->n_also);
        qr_whatif_js_strs(&j, "not_promoted", r->not_promoted, r->n_not);
    } else qr_json_kv_int(&j, "quantizers_not_disabled", r->n_not_disabled);
    qr_json_kv_str(&j, "note", "the model is qreport's analysis graph (QOperator / integer-op nodes in their "
                   "DequantizeLinear -> op -> QuantizeLinear form) with the promotion applied (float weights that replace a "
                   "DequantizeLinear output are fed through an Identity, as the prediction computed them); running it gives "
                   "'predicted' (the mixed-precision what-if's model-output metrics against the baseline)");
    qr_json_obj_end(&j);
    QrStatus st = qr__pm_json_out(&j, dir, prefix, "promotion.json");
    if (st == QR_OK) {                              /* ONNX Runtime quantize_static(...) */
        qr_json_init(&j);
        qr_json_obj_begin(&j);
        if (r->to_float) qr_whatif_js_strs(&j, "nodes_to_exclude", bn, r->n_nodes);
        else {
            qr_whatif_js_strs(&j, "nodes_to_exclude", NULL, 0);
            qr_json_key(&j, "extra_options");
            qr_json_obj_begin(&j);
            qr_json_key(&j, "TensorQuantOverrides");
            qr_json_obj_begin(&j);
            for (int k = 0; k < r->n_ort; k++) {
                qr_json_key(&j, r->ort_overrides[k]);
                qr_json_arr_begin_compact(&j);
                qr_json_obj_begin(&j);
                qr_json_kv_str(&j, "quant_type", r->ort_types[k]);
                qr_json_obj_end(&j);
                qr_json_arr_end(&j);
            }
            qr_json_obj_end(&j);
            qr_json_obj_end(&j);
        }
        qr_json_kv_str(&j, "usage", r->to_float ? "onnxruntime.quantization.quantize_static(..., nodes_to_exclude=<nodes_to_exclude>)"
                                               : "onnxruntime.quantization.quantize_static(..., extra_options=<extra_options>)");
        qr_json_obj_end(&j);
        st = qr__pm_json_out(&j, dir, prefix, "nodes_to_exclude.json");
    }
    if (st == QR_OK) {                              /* TensorRT Model Optimizer style */
        qr_json_init(&j);
        qr_json_obj_begin(&j);
        qr_whatif_js_strs(&j, "nodes_to_exclude", bn, r->n_nodes);
        qr_json_key(&j, "quant_cfg");
        qr_json_obj_begin(&j);
        for (int k = 0; k < r->n_nodes; k++) {
            qr_json_key(&j, qr_arena_printf(&a, "*%s*", bn[k]));
            qr_json_obj_begin_compact(&j);
            if (r->to_float) qr_json_kv_bool(&j, "enable", false);
            else qr_json_kv_int(&j, "num_bits", 16);
            qr_json_obj_end(&j);
        }
        qr_json_obj_end(&j);
        qr_json_kv_str(&j, "usage", "modelopt.onnx.quantization.quantize(..., nodes_to_exclude=<nodes_to_exclude>) or the "
                       "quant_cfg entries merged into a modelopt.torch.quantization config");
        qr_json_obj_end(&j);
        st = qr__pm_json_out(&j, dir, prefix, "modelopt_exclude.json");
    }
    if (st == QR_OK) {
        char *t = NULL;
        size_t tl = 0, tc = 0;
        for (int k = 0; st == QR_OK && k < r->n_nodes; k++) st = qr_buf_printf(&t, &tl, &tc, "%s\n", bn[k]);
        char path[4096];
        snprintf(path, sizeof path, "%s/%sexclude_nodes.txt", dir, prefix);
        if (st == QR_OK) st = qr_file_write_atomic(path, t ? t : "", tl);
        free(t);
    }
    qr_arena_free(&a);
    return st;
}
