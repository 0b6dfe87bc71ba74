/* analysis/select — implementation. See select.h. */

/* ==== suggestions ===================================================================== */

/* Edit distance of a and b (insert, delete, substitute; case-insensitive), capped at cap + 1. */
static int qr__sel_dist(const char *a, const char *b, int cap) {
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (abs(la - lb) > cap) return cap + 1;
    if (lb > 255) return cap + 1;
    int prev[257], cur[257];
    for (int j = 0; j <= lb; j++) prev[j] = j;
    for (int i = 1; i <= la; i++) {
        cur[0] = i;
        int best = cur[0];
        for (int j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int v = QR_MIN(sub, QR_MIN(prev[j] + 1, cur[j - 1] + 1));
            cur[j] = v;
            best = QR_MIN(best, v);
        }
        if (best > cap) return cap + 1;
        memcpy(prev, cur, (size_t)(lb + 1) * sizeof(int));
    }
    return prev[lb];
}

static void qr_select_suggest(const char *name, const char *const *cands, int n, char *out, size_t cap) {
    out[0] = 0;
    int len = (int)strlen(name);
    int limit = QR_MAX(2, len / 3);
    const char *best[3] = { 0 };
    int bd[3] = { INT32_MAX, INT32_MAX, INT32_MAX };
    for (int k = 0; k < n; k++) {
        const char *c = cands[k];
        if (!c || !*c) continue;
        int d = qr__sel_dist(name, c, limit);
        /* a candidate that contains the name (or the other way round) is close too */
        if (d > limit && len >= 3 && (strstr(c, name) || strstr(name, c))) d = limit;
        if (d > limit) continue;
        bool dup = false;
        for (int j = 0; j < 3; j++) dup |= best[j] && !strcmp(best[j], c);
        if (dup) continue;
        for (int j = 0; j < 3; j++) {
            if (d < bd[j] || (d == bd[j] && best[j] && strcmp(c, best[j]) < 0)) {
                for (int m = 2; m > j; m--) { best[m] = best[m - 1]; bd[m] = bd[m - 1]; }
                best[j] = c;
                bd[j] = d;
                break;
            }
        }
    }
    if (!best[0]) return;
    size_t o = (size_t)snprintf(out, cap, " (did you mean ");
    for (int j = 0; j < 3 && best[j] && o < cap; j++)
        o += (size_t)snprintf(out + o, cap - o, "%s'%s'", j ? ", " : "", best[j]);
    if (o < cap) snprintf(out + o, cap - o, "?)");
}

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
    qr_select_suggest(name, names, n, sug, sizeof sug);
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

/* ==== sensitivity rows ================================================================ */

static QrStatus qr_node_type_parse(const char *s, QrNodeType *out) {
    if (!strcmp(s, "activation")) *out = QR_NODE_TYPE_ACTIVATION;
    else if (!strcmp(s, "weight")) *out = QR_NODE_TYPE_WEIGHT;
    else if (!strcmp(s, "node")) *out = QR_NODE_TYPE_NODE;
    else if (!strcmp(s, "all")) *out = QR_NODE_TYPE_ALL;
    else return qr_errf(QR_ERR_INVALID, "--node-type '%s': expected activation, weight, node or all", s);
    return QR_OK;
}

static QrStatus qr_select_sens_rows(const QrSession *s, const QrSensOpts *o, QrSensResult *r) {
    bool *want = NULL;
    if (o->nodes) {
        want = calloc((size_t)s->qt.n + 1, sizeof *want);
        char *list = strdup(o->nodes);
        QrStatus st = want && list ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
        char *save = NULL;
        for (char *tok = list ? strtok_r(list, ",", &save) : NULL; st == QR_OK && tok; tok = strtok_r(NULL, ",", &save))
            if (*tok) st = qr_select_quantizers(s, tok, want);
        free(list);
        if (st != QR_OK) { free(want); return qr_err_wrap(st, "--nodes"); }
    }
    int kept = 0;
    for (int k = 0; k < r->n; k++) {
        const QrSensRow *row = &r->rows[k];
        bool keep = true;
        if (want) {
            keep = false;
            for (int j = 0; j < row->n_q; j++) keep |= want[row->q[j]];
        }
        if (o->node_type == QR_NODE_TYPE_ACTIVATION) keep &= row->type == QR_SENS_ACTIVATION;
        else if (o->node_type == QR_NODE_TYPE_WEIGHT) keep &= row->type == QR_SENS_WEIGHT;
        else if (o->node_type == QR_NODE_TYPE_NODE && row->type != QR_SENS_BOTH) {
            /* the node's only row stands for the node when it has no "both" row */
            for (int j = 0; j < r->n; j++)
                if (r->rows[j].type == QR_SENS_BOTH && r->rows[j].node == row->node && row->node >= 0) keep = false;
        }
        if (keep) r->rows[kept++] = *row;
    }
    r->n = kept;
    free(want);
    return QR_OK;
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
