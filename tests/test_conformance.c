/* tests/conformance — runs the ONNX backend node tests and the PyTorch-converted
 * tests in ../shared/conformance (or $QR_CONFORMANCE_DIR). One line per test:
 * pass, FAIL (worst element) or unsupported (missing operator/attribute).
 * Unsupported tests are listed and counted, never counted as passes. */

#include <dirent.h>

typedef enum { QT_CONF_PASS, QT_CONF_FAIL, QT_CONF_UNSUPPORTED } QtConfResult;

/* Compares got with want: exact for integers, |g-w| <= atol + rtol*|w| for floats. */
static bool qt_tensors_close(const QrTensor *got, const QrTensor *want, double rtol, double atol, char *msg, size_t n) {
    char a[128], b[128];
    if (got->dtype != want->dtype) {
        snprintf(msg, n, "dtype %s, expected %s", qr_dtype_name(got->dtype), qr_dtype_name(want->dtype));
        return false;
    }
    if (!qr_tensor_same_shape(got, want)) {
        snprintf(msg, n, "shape %s, expected %s", qr_shape_str_brackets(a, sizeof a, got->rank, got->dims),
                 qr_shape_str_brackets(b, sizeof b, want->rank, want->dims));
        return false;
    }
    int64_t worst = -1;
    double worst_excess = 0;
    for (int64_t i = 0; i < got->numel; i++) {
        if (qr_dtype_is_float(want->dtype)) {
            double g = qr_tensor_get_f64(got, i), w = qr_tensor_get_f64(want, i);
            if (w != w && g != g) continue;
            if (isinf(w) && g == w) continue;
            double diff = fabs(g - w), tol = atol + rtol * fabs(w);
            if (!(diff <= tol) && (worst < 0 || diff - tol > worst_excess || diff != diff)) {
                worst = i;
                worst_excess = diff != diff ? INFINITY : diff - tol;
            }
        } else if (qr_tensor_get_i64(got, i) != qr_tensor_get_i64(want, i) && worst < 0) {
            worst = i;
        }
    }
    if (worst >= 0) {
        snprintf(msg, n, "element %lld: got %.9g, expected %.9g", (long long)worst, qr_tensor_get_f64(got, worst),
                 qr_tensor_get_f64(want, worst));
        return false;
    }
    return true;
}

static QtConfResult qt_conformance_one(const char *dir, char *msg, size_t msg_len) {
    char path[4096];
    QrGraph *g = NULL;
    qt_fmt(path, sizeof path, "%s/model.onnx", dir);
    QrStatus st = qr_run_load(path, &g);
    if (st != QR_OK) {
        snprintf(msg, msg_len, "%s", qr_err_msg());
        return st == QR_ERR_UNSUPPORTED ? QT_CONF_UNSUPPORTED : QT_CONF_FAIL;
    }
    char list[1024];
    if (qr_run_unsupported(g, list, sizeof list)) {
        snprintf(msg, msg_len, "operator %s", list);
        qr_graph_free(g);
        free(g);
        return QT_CONF_UNSUPPORTED;
    }
    QtConfResult res = QT_CONF_PASS;
    int n_sets = 0;
    for (int set = 0; res == QT_CONF_PASS; set++) {
        char sdir[4096];
        qt_fmt(sdir, sizeof sdir, "%s/test_data_set_%d", dir, set);
        DIR *d = opendir(sdir);
        if (!d) break;
        closedir(d);
        n_sets++;
        QrTensor *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
        QrTensor *want = calloc((size_t)g->n_outputs + 1, sizeof *want);
        QrTensor *got = calloc((size_t)g->n_outputs + 1, sizeof *got);
        st = QR_OK;
        for (int i = 0; st == QR_OK && i < g->n_inputs; i++) {
            qt_fmt(path, sizeof path, "%s/input_%d.pb", sdir, i);
            st = qr_pb_read(path, &in[i], NULL, 0);
        }
        for (int i = 0; st == QR_OK && i < g->n_outputs; i++) {
            qt_fmt(path, sizeof path, "%s/output_%d.pb", sdir, i);
            st = qr_pb_read(path, &want[i], NULL, 0);
        }
        if (st == QR_OK) st = qr_run_infer(g, in);
        if (st == QR_OK) st = qr_run(g, in, NULL, got);
        if (st != QR_OK) {
            snprintf(msg, msg_len, "%s", qr_err_msg());
            res = st == QR_ERR_UNSUPPORTED ? QT_CONF_UNSUPPORTED : QT_CONF_FAIL;
        }
        for (int i = 0; res == QT_CONF_PASS && i < g->n_outputs; i++) {
            char m[512];
            if (!qt_tensors_close(&got[i], &want[i], 1e-3, 1e-5, m, sizeof m)) {
                snprintf(msg, msg_len, "output %d ('%s'): %s", i, g->values[g->outputs[i]].name, m);
                res = QT_CONF_FAIL;
            }
        }
        for (int i = 0; i < g->n_inputs; i++) qr_tensor_free_data(&in[i]);
        for (int i = 0; i < g->n_outputs; i++) { qr_tensor_free_data(&want[i]); qr_tensor_free_data(&got[i]); }
        free(in);
        free(want);
        free(got);
    }
    if (n_sets == 0 && res == QT_CONF_PASS) { snprintf(msg, msg_len, "no test_data_set_0"); res = QT_CONF_FAIL; }
    qr_graph_free(g);
    free(g);
    return res;
}

static int qt_strcmp_ptr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Runs every test folder under root/sub; filter (substring) limits which. */
static void qt_conformance_suite(const char *root, const char *sub, const char *filter, int *n_unsup) {
    char base[4096];
    snprintf(base, sizeof base, "%s/%s", root, sub);
    DIR *d = opendir(base);
    if (!d) return;
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "test_", 5) != 0) continue;
        if (filter && !strstr(e->d_name, filter)) continue;
        if (n == cap) { cap = cap ? cap * 2 : 256; names = realloc(names, (size_t)cap * sizeof *names); }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, (size_t)n, sizeof *names, qt_strcmp_ptr);
    int pass = 0, fail = 0, unsup = 0;
    for (int i = 0; i < n; i++) {
        char dir[4096], msg[2048] = "", name[512];
        qt_fmt(dir, sizeof dir, "%s/%s", base, names[i]);
        snprintf(name, sizeof name, "conformance/%s/%s", sub, names[i]);
        QtConfResult r = qt_conformance_one(dir, msg, sizeof msg);
        if (r == QT_CONF_UNSUPPORTED) { unsup++; printf("unsupported %s: %s\n", name, msg); }
        else {
            if (r == QT_CONF_PASS) { pass++; printf("pass %s\n", name); }
            else fail++;
            qt_record(name, r == QT_CONF_PASS, "%s", msg);
        }
        free(names[i]);
    }
    free(names);
    printf("conformance %s: %d passed, %d failed, %d unsupported (of %d)\n", sub, pass, fail, unsup, n);
    *n_unsup += unsup;
}

static void qt_conformance_all(const char *filter) {
    const char *root = getenv("QR_CONFORMANCE_DIR");
    if (!root) root = "../shared/conformance";
    DIR *d = opendir(root);
    if (!d) { qt_record_skip("conformance", "%s not found (set QR_CONFORMANCE_DIR)", root); return; }
    closedir(d);
    int unsup = 0;
    qt_conformance_suite(root, "onnx-node", filter, &unsup);
    qt_conformance_suite(root, "pytorch-converted", filter, &unsup);
    printf("conformance: %d unsupported tests in total (listed above, not counted as passes)\n", unsup);
}
