/* ops/registry — the one op table: every module's QrOpDef array, searched by
 * (domain, op_type). Lookup happens once per node at load time. */

static const struct { const QrOpDef *defs; int count; } qr__op_tables[] = {
    { qr_ops_elementwise, QR_ARRAY_LEN(qr_ops_elementwise) },
    { qr_ops_shape, QR_ARRAY_LEN(qr_ops_shape) },
    { qr_ops_nn, QR_ARRAY_LEN(qr_ops_nn) },
    { qr_ops_qdq, QR_ARRAY_LEN(qr_ops_qdq) },
    { qr_ops_qmatmul, QR_ARRAY_LEN(qr_ops_qmatmul) },
    { qr_ops_qconv, QR_ARRAY_LEN(qr_ops_qconv) },
    { qr_ops_qlinear, QR_ARRAY_LEN(qr_ops_qlinear) },
    { qr_ops_contrib_wq, QR_ARRAY_LEN(qr_ops_contrib_wq) },
    { qr_ops_contrib_int, QR_ARRAY_LEN(qr_ops_contrib_int) },
    { qr_ops_contrib_llm, QR_ARRAY_LEN(qr_ops_contrib_llm) },
};

static const QrOpDef *qr_op_find(const char *domain, const char *op_type) {
    if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
    for (int t = 0; t < QR_ARRAY_LEN(qr__op_tables); t++)
        for (int i = 0; i < qr__op_tables[t].count; i++) {
            const QrOpDef *d = &qr__op_tables[t].defs[i];
            if (d->op_type && strcmp(d->op_type, op_type) == 0 && strcmp(d->domain, domain) == 0) return d;
        }
    return NULL;
}

/* The i-th operator of all tables (0 <= i < qr_op_count()), for listings and tests. */
static int qr_op_count(void) {
    int n = 0;
    for (int t = 0; t < QR_ARRAY_LEN(qr__op_tables); t++) n += qr__op_tables[t].count;
    return n;
}

static const QrOpDef *qr_op_at(int i) {
    for (int t = 0; t < QR_ARRAY_LEN(qr__op_tables); t++) {
        if (i < qr__op_tables[t].count) return &qr__op_tables[t].defs[i];
        i -= qr__op_tables[t].count;
    }
    return NULL;
}
