/* analysis/advkit — implementation. See advkit.h. */

static QrFinding *qr_advk_find(QrAdvList *b, QrAdvKind kind, QrSeverity sev, const char *node, const char *op_type) {
    QrAdvice *a = b->a;
    if (a->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 32;
        QrFinding *nf = qr_arena_array(&a->arena, (size_t)cap, sizeof *nf);
        if (!nf) return NULL;
        if (a->n) memcpy(nf, a->f, (size_t)a->n * sizeof *nf);
        a->f = nf;
        b->cap = cap;
    }
    QrFinding *f = &a->f[a->n];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->sev = sev;
    f->node = qr_arena_strdup(&a->arena, node ? node : "");
    f->op_type = qr_arena_strdup(&a->arena, op_type ? op_type : "");
    f->match = f->q = -1;
    f->seq = a->n++;
    return f;
}

static void qr_advk_ev(QrFinding *f, const char *name, double v) {
    if (f->n_ev < QR_ADV_MAX_EV) { f->ev_name[f->n_ev] = name; f->ev[f->n_ev++] = v; }
}

/* Baseline node matched to the source node of twin node n, or NULL. */
static const char *qr_advk_base_node_of(const QrSession *s, int n) {
    int src = n >= 0 ? s->tw.origin[n] : -1;
    for (int i = 0; src >= 0 && i < s->m.n; i++)
        if (s->m.m[i].a_node == src || (s->m.m[i].a_node >= 0 && s->m.m[i].a_op == src)) return s->b->nodes[s->m.m[i].b_twin >= 0 ? s->m.m[i].b_twin : s->m.m[i].b_node].name;
    return NULL;
}
