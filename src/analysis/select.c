/* analysis/select — implementation. See select.h. */

/* ==== names ========================================================================= */

static const char **qr_select_graph_names(const QrGraph *g1, const QrGraph *g2, int *n) {
    const QrGraph *gs[2] = { g1, g2 };
    int total = 0;
    for (int k = 0; k < 2; k++) if (gs[k]) total += gs[k]->n_nodes + gs[k]->n_values;
    const char **names = malloc(((size_t)total + 1) * sizeof *names);
    *n = 0;
    if (!names) return NULL;
    for (int k = 0; k < 2; k++) {
        if (!gs[k]) continue;
        for (int i = 0; i < gs[k]->n_nodes; i++) names[(*n)++] = gs[k]->nodes[i].name;
        for (int i = 0; i < gs[k]->n_values; i++) names[(*n)++] = gs[k]->values[i].name;
    }
    return names;
}

static bool qr_select_name_known(const QrGraph *g1, const QrGraph *g2, const char *name) {
    const QrGraph *gs[2] = { g1, g2 };
    for (int k = 0; k < 2; k++) {
        if (!gs[k]) continue;
        if (qr_graph_find(gs[k], name) >= 0) return true;
        for (int i = 0; i < gs[k]->n_nodes; i++) if (!strcmp(gs[k]->nodes[i].name, name)) return true;
    }
    return false;
}

/* ==== names -> quantizers ============================================================= */

/* Whether twin node n is called name: its own name, its analysis node's, or that of a
 * baseline node matched to its analysis node. */
static bool qr__sel_node_is(const QrSession *s, int n, const char *name) {
    if (n < 0) return false;
    if (!strcmp(s->tw.g.nodes[n].name, name)) return true;
    int src = s->tw.origin ? s->tw.origin[n] : -1;
    if (src < 0) return false;
    if (!strcmp(s->a->nodes[src].name, name)) return true;
    for (int i = 0; i < s->m.n; i++)
        if (s->m.m[i].a_node == src && !strcmp(s->b->nodes[s->m.m[i].b_node].name, name)) return true;
    return false;
}

static QrStatus qr_select_quantizers(const QrSession *s, const char *name, bool *mask) {
    const QrGraph *g = &s->tw.g;
    bool any = false;
    /* a compute node: all its quantizers */
    for (int i = 0; i < s->qt.n; i++)
        if (qr__sel_node_is(s, s->qt.q[i].owner, name)) { mask[i] = true; any = true; }
    if (any) return QR_OK;
    /* a QuantizeLinear / DequantizeLinear node, or a value of one quantizer */
    int v = qr_graph_find(g, name);
    for (int i = 0; i < s->qt.n; i++) {
        const QrQuantizer *q = &s->qt.q[i];
        bool hit = q->q_node >= 0 && !strcmp(g->nodes[q->q_node].name, name);
        for (int d = 0; d < q->n_dq; d++) hit |= !strcmp(g->nodes[q->dq_nodes[d]].name, name);
        hit |= v >= 0 && (q->float_value == v || q->int_value == v || q->out_value == v);
        if (hit) { mask[i] = true; any = true; }
    }
    if (any) return QR_OK;
    int n = 0;
    const char **names = qr_select_graph_names(s->b, g, &n);
    char sug[512];
    qr_str_suggest(name, names, n, sug, sizeof sug);
    free(names);
    bool known = qr_select_name_known(s->b, s->a, name);
    return qr_errf(QR_ERR_INVALID, "'%s' %s%s", name,
                   known ? "has no quantizer in the analysis model (no quantized output, weight or input)"
                         : "is no node or value of either model", sug);
}

/* ==== cumulative-error settings ======================================================= */

static QrStatus qr_select_acc_sets(const QrSession *s, const char *spec, bool quantize, QrAccSets *sets) {
    const char *p = spec;
    while (p && *p) {
        size_t len = strcspn(p, ";");
        if (sets->n == QR_ARRAY_LEN(sets->set))
            return qr_errf(QR_ERR_INVALID, "at most %d node sets for the cumulative error", QR_ARRAY_LEN(sets->set));
        char *one = qr_arena_printf(&sets->arena, "%.*s", (int)len, p);
        bool *mask = qr_arena_array(&sets->arena, (size_t)s->qt.n + 1, sizeof(bool));
        bool *chosen = qr_arena_array(&sets->arena, (size_t)s->qt.n + 1, sizeof(bool));
        if (!one || !mask || !chosen) return qr_errf(QR_ERR_NOMEM, "out of memory");
        int names = 0;
        char *label = qr_arena_printf(&sets->arena, "%s[", quantize ? "quantize_node" : "non_quantize_node");
        char *save = NULL;
        for (char *tok = strtok_r(one, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            while (*tok == ' ') tok++;
            size_t tl = strlen(tok);
            while (tl && tok[tl - 1] == ' ') tok[--tl] = 0;
            if (!*tok) continue;
            QrStatus st = qr_select_quantizers(s, tok, chosen);
            if (st != QR_OK)
                return qr_err_wrap(st, "--%s", quantize ? "quantize-nodes" : "non-quantize-nodes");
            label = qr_arena_printf(&sets->arena, "%s%s%s", label, names ? ";" : "", tok);
            names++;
        }
        if (!names)
            return qr_errf(QR_ERR_INVALID, "--%s '%s': an empty node set", quantize ? "quantize-nodes" : "non-quantize-nodes", spec);
        for (int i = 0; i < s->qt.n; i++) mask[i] = quantize ? chosen[i] : !chosen[i];
        sets->set[sets->n++] = (QrAccSet){ qr_arena_printf(&sets->arena, "%s]", label), mask };
        p += len;
        if (*p == ';') p++;
    }
    return QR_OK;
}

static void qr_select_acc_sets_free(QrAccSets *sets) {
    qr_arena_free(&sets->arena);
    memset(sets, 0, sizeof *sets);
}

static QrStatus qr_select_output(const QrGraph *b, const char *name, int *out) {
    *out = -1;
    if (!name) return QR_OK;
    for (int k = 0; k < b->n_outputs; k++)
        if (!strcmp(b->values[b->outputs[k]].name, name)) { *out = k; return QR_OK; }
    char list[1024];
    size_t n = 0;
    list[0] = 0;
    for (int k = 0; k < b->n_outputs && n < sizeof list; k++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", k ? ", " : "", b->values[b->outputs[k]].name);
    return qr_errf(QR_ERR_INVALID, "--rank-output '%s' is no graph output of %s (its outputs: %s)", name,
                   b->path ? b->path : "the baseline", list);
}
