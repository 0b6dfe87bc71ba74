/* quant/twkit — implementation. See twkit.h. */

static bool qr_twk_is(const QrNode *n, const char *op) { return strcmp(n->op_type, op) == 0; }

static QrStatus qr_twk_add(QrTwCtx *cx, const char *name, const char *op, const char *domain, int n_in, const int *in,
                           int n_out, const int *out, int n_attr, const QrAttr *attr) {
    QrTwin *tw = cx->tw;
    int idx = -1;
    QR_TRY(qr_run_add_node(&tw->g, name, op, domain, n_in, in, n_out, out, n_attr, attr, &idx));
    if (idx >= cx->cap_origin) {
        int cap = QR_MAX(64, cx->cap_origin * 2);
        int *no = realloc(tw->origin, (size_t)cap * sizeof(int));
        if (!no) return qr_errf(QR_ERR_NOMEM, "out of memory");
        tw->origin = no;
        cx->cap_origin = cap;
    }
    tw->origin[idx] = cx->origin;
    return QR_OK;
}

/* A new float value of the twin named after `base`. */
static QrStatus qr_twk_value(QrTwCtx *cx, const char *base, const char *suffix, int *v) {
    QrGraph *g = &cx->tw->g;
    char buf[512];
    snprintf(buf, sizeof buf, "%s%s", base, suffix);
    const char *name = qr_graph_fresh_name(g, buf);
    if (!name) return qr_errf(QR_ERR_NOMEM, "out of memory");
    return qr_graph_value(g, name, v);
}

/* A new constant of the twin (takes ownership of t's data). */
static QrStatus qr_twk_const(QrTwCtx *cx, const char *base, QrTensor *t, int *v) {
    QR_TRY(qr_twk_value(cx, base, "", v));
    QrValue *val = &cx->tw->g.values[*v];
    val->t = *t;
    val->is_init = val->is_const = true;
    memset(t, 0, sizeof *t);
    return QR_OK;
}
