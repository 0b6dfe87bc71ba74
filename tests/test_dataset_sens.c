/* tests/test_dataset_sens — data-set sensitivity, cumulative-error curves over samples, the
 * .qrpart section hook and sharded sensitivity/runall merges (analysis/sens, analysis/dspart).
 * Included after test_dataset.c (uses its QtDs helpers). */

/* ---- .qrpart sections ----------------------------------------------------------------- */

typedef struct QtSec { QrXSum sum; int64_t count; int merged; } QtSec;
static void qt_sec_put(QrDsW *w, const void *acc) {
    const QtSec *s = acc;
    qr_dspart_put_xsum(w, &s->sum);
    qr_dspart_put_u64(w, (uint64_t)s->count);
}
static QrStatus qt_sec_merge(QrDsR *r, void *acc) {
    QtSec *s = acc;
    QrXSum x;
    qr_dspart_get_xsum(r, &x);
    int64_t c = (int64_t)qr_dspart_get_u64(r);
    if (qr_dspart_bad(r)) return qr_errf(QR_ERR_INVALID, "short");
    qr_xsum_merge(&s->sum, &x);
    s->count += c;
    s->merged++;
    return QR_OK;
}

/* An extra section travels with a part: written by shards, read back and merged by name; a
 * part without it, or with one the merge does not expect, is refused naming file and section. */
static void test_dataset_sens_section(void) {
    QtDs t;
    QrStatus st = qt_ds_open(&t, "ort_qdq", NULL);
    QrDsCompare d[2], m;
    memset(d, 0, sizeof d);
    memset(&m, 0, sizeof m);
    QtSec acc[2], into;
    memset(acc, 0, sizeof acc);
    memset(&into, 0, sizeof into);
    const char *keys[] = { "command" }, *vals[] = { "compare" };
    char path[2][600];
    double want = 0;
    for (int k = 0; st == QR_OK && k < 2; k++) {
        st = qt_ds_run(&t, "sim", 2, k, &d[k]);
        for (int i = 0; i < 5; i++) { double v = 0.1 * (k + 1) + i * 1e-17; qr_xsum_add(&acc[k].sum, v); want += v; }
        acc[k].count = 5 + k;
        snprintf(path[k], sizeof path[k], "%s/sec%d.qrpart", qt_tmpdir(), k);
        QrDsSection sec = { "qt_sec", &acc[k], qt_sec_put, qt_sec_merge };
        if (st == QR_OK) st = qr_dspart_write(path[k], "compare", &d[k], &t.ds, &t.se, keys, vals, 1, k, 2, &sec, 1);
    }
    QrDsPart p[2];
    memset(p, 0, sizeof p);
    if (st == QR_OK) st = qr_dspart_read(path[0], &p[0]);
    if (st == QR_OK) st = qr_dspart_read(path[1], &p[1]);
    if (st == QR_OK) st = qr_dspart_check(p, 2);
    if (st == QR_OK) st = qr_ds_compare_init(&m, &t.se, t.ds.n, t.ds.names);
    QrDsSection sec = { "qt_sec", &into, qt_sec_put, qt_sec_merge };
    for (int k = 1; st == QR_OK && k >= 0; k--) st = qr_dspart_load(&p[k], &t.se, &m, &sec, 1);
    QT_OK(st);
    QrXSum ref;
    memset(&ref, 0, sizeof ref);
    for (int k = 0; k < 2; k++) qr_xsum_merge(&ref, &acc[k].sum);
    QT_CHECKF(into.merged == 2 && into.count == 11 && qr_xsum_value(&into.sum) == qr_xsum_value(&ref),
              "merged %d count %lld", into.merged, (long long)into.count);
    QT_CHECK(m.n_done == t.ds.n);
    /* not requested / missing */
    QrDsCompare m2 = {0};
    QT_OK(qr_ds_compare_init(&m2, &t.se, t.ds.n, t.ds.names));
    st = qr_dspart_load(&p[0], &t.se, &m2, NULL, 0);
    QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), "sec0.qrpart") && strstr(qr_err_msg(), "'qt_sec'"), "%s", qr_err_msg());
    qr_err_clear();
    QrDsSection other = { "qt_other", &into, qt_sec_put, qt_sec_merge };
    st = qr_dspart_load(&p[1], &t.se, &m2, &other, 1);
    QT_CHECKF(st != QR_OK && strstr(qr_err_msg(), "sec1.qrpart") && strstr(qr_err_msg(), "no section 'qt_other'"), "%s",
              qr_err_msg());
    qr_err_clear();
    qr_ds_compare_free(&m2);
    (void)want;
    for (int k = 0; k < 2; k++) { qr_dspart_free(&p[k]); qr_ds_compare_free(&d[k]); }
    qr_ds_compare_free(&m);
    qt_ds_close(&t);
}

static void qt_dataset_sens_all(void) {
    QT_RUN(test_dataset_sens_section);
}
