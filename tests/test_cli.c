/* tests/cli — runs the qreport binary ($QR_BIN, default ./qreport) on good and
 * bad input: exit codes, messages that name the file/node/tensor, no crashes
 * and no sanitizer reports. */

#include <sys/wait.h>

typedef struct QtCli { int code; bool crashed; char err[8192], out[8192]; } QtCli;

static void qt_slurp(const char *path, char *dst, size_t n) {
    dst[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return;
    size_t r = fread(dst, 1, n - 1, f);
    dst[r] = 0;
    fclose(f);
}

/* Runs "$QR_BIN <args>" through the shell; captures stdout/stderr. */
static void qt_cli(QtCli *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void qt_cli(QtCli *r, const char *fmt, ...) {
    const char *bin = getenv("QR_BIN");
    if (!bin) bin = "./qreport";
    char args[4096], cmd[8192], eo[512], so[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(eo, sizeof eo, "%s/cli.err", qt_tmpdir());
    snprintf(so, sizeof so, "%s/cli.out", qt_tmpdir());
    snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s </dev/null", bin, args, so, eo);
    int st = system(cmd);
    r->crashed = st == -1 || WIFSIGNALED(st);
    r->code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    qt_slurp(eo, r->err, sizeof r->err);
    qt_slurp(so, r->out, sizeof r->out);
    if (strstr(r->err, "Sanitizer") || strstr(r->err, "runtime error:")) r->crashed = true;
}

/* argv of "qreport <args>" split at spaces (args has none inside a word) into buf. */
static int qt_cli_argv(char *args, char **argv, int cap) {
    int n = 0;
    argv[n++] = "qreport";
    for (char *sv = NULL, *t = strtok_r(args, " ", &sv); t && n < cap - 1; t = strtok_r(NULL, " ", &sv)) argv[n++] = t;
    argv[n] = NULL;
    return n;
}

/* Starts `qreport <args>` in a child process that runs the CLI in-process (qr_cli_main) with
 * runall's fault injection f (runall.h; a test-build hook, so it runs in this binary, not in
 * $QR_BIN); stdout and stderr go to out / err (paths; NULL: /dev/null). The pool runs one thread
 * across the fork (the child has no worker threads). Returns the child's pid (-1 on failure). */
static pid_t qt_cli_faults_start(const QrRunallFaults *f, const char *out, const char *err, const char *args) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", args);
    qr_pool_init(1);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(98);
        char *argv[256];
        int argc = qt_cli_argv(buf, argv, 256);
        qr_runall_test_faults(f);
        int code = qr_cli_main(argc, argv);
        fflush(stdout);
        fflush(stderr);
        _exit(code);
    }
    qr_pool_init(0);
    return pid;
}

/* qt_cli with runall's fault injection f (qt_cli_faults_start); the exit code and output in r. */
static void qt_cli_faults(QtCli *r, const QrRunallFaults *f, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void qt_cli_faults(QtCli *r, const QrRunallFaults *f, const char *fmt, ...) {
    char args[4096], eo[512], so[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(eo, sizeof eo, "%s/cli.err", qt_tmpdir());
    snprintf(so, sizeof so, "%s/cli.out", qt_tmpdir());
    pid_t pid = qt_cli_faults_start(f, so, eo, args);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) st = -1;
    r->crashed = st == -1 || WIFSIGNALED(st);
    r->code = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    qt_slurp(eo, r->err, sizeof r->err);
    qt_slurp(so, r->out, sizeof r->out);
}

#define QT_CLI_FAILS(r, ...) do { \
    QT_CHECKF(!(r).crashed, "crashed: %s", (r).err); \
    QT_CHECKF((r).code == 1, "exit code %d (want 1); stderr: %s", (r).code, (r).err); \
    const char *qt__needles[] = { __VA_ARGS__ }; \
    for (int qt__i = 0; qt__i < QR_ARRAY_LEN(qt__needles); qt__i++) \
        QT_CHECKF(strstr((r).err, qt__needles[qt__i]), "stderr lacks '%s': %s", qt__needles[qt__i], (r).err); \
} while (0)

static QrStatus qt_write_npy_f(const char *path, QrDType dt, int rank, const int64_t *dims, double fill) {
    QrTensor t = {0};
    QR_TRY(qr_tensor_set_shape(&t, dt, rank, dims));
    QR_TRY(qr_tensor_alloc_data(&t));
    for (int64_t i = 0; i < t.numel; i++) qr_tensor_set_f64(&t, i, fill * (double)((i % 7) - 3));
    QrStatus st = qr_npy_write(path, &t);
    qr_tensor_free_data(&t);
    return st;
}

static void test_cli_usage(void) {
    QtCli r;
    qt_cli(&r, "--version");
    QT_CHECKF(r.code == 0 && strstr(r.out, "qreport ") && strstr(r.out, "isa:") && strstr(r.out, "build:"), "%s", r.out);
    qt_cli(&r, "frobnicate");
    QT_CHECK(r.code == 2 && strstr(r.err, "unknown command"));
    qt_cli(&r, "run");
    QT_CHECK(r.code == 2 && strstr(r.err, "missing MODEL.onnx"));
    qt_cli(&r, "run --bogus x.onnx");
    QT_CHECK(r.code == 2 && strstr(r.err, "unknown option"));
    qt_cli(&r, "run --help");
    QT_CHECK(r.code == 0 && strstr(r.out, "usage: qreport run"));
    qt_cli(&r, "profile --help");
    QT_CHECK(r.code == 0 && strstr(r.out, "usage: qreport profile"));
    /* qreport ops lists the op table: every operator, the count last (read whole: > r.out) */
    qt_cli(&r, "ops");
    char path[512], *all = malloc(1 << 16);
    snprintf(path, sizeof path, "%s/cli.out", qt_tmpdir());
    qt_slurp(path, all, 1 << 16);
    int lines = 0;
    for (const char *p = all; (p = strstr(p, " inputs ")); p++) lines++;
    char want[64];
    snprintf(want, sizeof want, "\n%d operators\n", qr_op_count());
    QT_CHECKF(r.code == 0 && lines == qr_op_count() && strstr(all, want), "%d lines, %d ops", lines, qr_op_count());
    QT_CHECKF(strstr(all, "com.microsoft  GatherBlockQuantized         inputs 3..4\n") &&
              strstr(all, "QLinearAdd                   inputs 7..8 [2] [5]\n"), "%s", all);
    free(all);
}

static void test_cli_run_fixture(void) {
    QtCli r;
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/run_out", qt_tmpdir());
    qt_cli(&r, "run fixtures/cnn_residual/model.onnx -i fixtures/cnn_residual/input.npy -o %s", dir);
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    snprintf(path, sizeof path, "%s/output.npy", dir);
    QrTensor out = {0}, want = {0};
    QT_OK(qr_npy_read(path, &out));
    /* The graph output equals ONNX Runtime's (the golden of 'output'). */
    QrStatus st = qr_npy_read("fixtures/cnn_residual/golden/v26.npy", &want);
    char msg[256] = "";
    bool ok = st == QR_OK && qt_tensors_close(&out, &want, 1e-4, 1e-5, msg, sizeof msg);
    qr_tensor_free_data(&out);
    qr_tensor_free_data(&want);
    QT_CHECKF(ok, "%s", msg);
    /* Without -i: a deterministic random input and a warning. */
    qt_cli(&r, "run fixtures/transformer/model.onnx -o %s", dir);
    QT_CHECKF(r.code == 0 && strstr(r.err, "warning") && strstr(r.err, "random"), "exit %d: %s", r.code, r.err);
}

static void test_cli_bad_models(void) {
    QtCli r;
    char path[600];
    unsigned char *buf;
    size_t len;
    QT_OK(qr_file_read("fixtures/cnn_residual/model.onnx", 0, &buf, &len));
    snprintf(path, sizeof path, "%s/truncated.onnx", qt_tmpdir());
    QrStatus st = qr_file_write_atomic(path, buf, len / 2);
    qr_aligned_free(buf);
    QT_OK(st);
    qt_cli(&r, "run %s", path);
    QT_CLI_FAILS(r, "truncated.onnx", "truncated or corrupt");
    snprintf(path, sizeof path, "%s/garbage.onnx", qt_tmpdir());
    QT_OK(qr_file_write_atomic(path, "this is not a protobuf at all\xff\xff\xff\xff", 33));
    qt_cli(&r, "profile %s", path);
    QT_CLI_FAILS(r, "garbage.onnx");
    qt_cli(&r, "run %s/does_not_exist.onnx", qt_tmpdir());
    QT_CLI_FAILS(r, "does_not_exist.onnx", "No such file");

    int64_t d4[1] = { 4 };
    QtModel mb;
    qt_mb_init(&mb, 17);
    qt_mb_init_external(&mb, "w_ext", QR_DT_F32, 1, d4, "missing_weights.bin", "0", "16");
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d4);
    qt_mb_output(&mb, "y", QR_DT_F32, 1, d4);
    qt_mb_node(&mb, "Add", "add", "x,w_ext", "y");
    snprintf(path, sizeof path, "%s/ext_missing.onnx", qt_tmpdir());
    st = qt_mb_write(&mb, path);
    qt_mb_free(&mb);
    QT_OK(st);
    qt_cli(&r, "run %s", path);
    QT_CLI_FAILS(r, "missing_weights.bin", "'w_ext'");

    qt_mb_init(&mb, 17);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d4);
    qt_mb_output(&mb, "z", QR_DT_F32, 1, d4);
    qt_mb_node(&mb, "Relu", "ok_node", "x", "a");
    qt_mb_node(&mb, "WeirdOp", "weird1", "a", "b");
    qt_mb_node(&mb, "com.vendor.Magic", "magic2", "b", "z");
    snprintf(path, sizeof path, "%s/unsupported.onnx", qt_tmpdir());
    st = qt_mb_write(&mb, path);
    qt_mb_free(&mb);
    QT_OK(st);
    qt_cli(&r, "run %s", path);
    QT_CLI_FAILS(r, "WeirdOp (node 'weird1')", "com.vendor.Magic (node 'magic2')", "2 nodes");

    qt_mb_init(&mb, 17);
    int64_t huge[2] = { 1ll << 40, 1ll << 40 };
    qt_mb_init_raw(&mb, "giant", QR_DT_F32, 2, huge, "x", 1);
    qt_mb_input(&mb, "x", QR_DT_F32, 1, d4);
    qt_mb_output(&mb, "x", QR_DT_F32, 1, d4);
    snprintf(path, sizeof path, "%s/overflow.onnx", qt_tmpdir());
    st = qt_mb_write(&mb, path);
    qt_mb_free(&mb);
    QT_OK(st);
    qt_cli(&r, "run %s", path);
    QT_CLI_FAILS(r, "'giant'", "overflow");
}

static void test_cli_bad_inputs(void) {
    QtCli r;
    char path[600];
    int64_t small[4] = { 1, 3, 16, 16 }, ok[4] = { 1, 3, 32, 32 };
    snprintf(path, sizeof path, "%s/wrong_shape.npy", qt_tmpdir());
    QT_OK(qt_write_npy_f(path, QR_DT_F32, 4, small, 0.1));
    qt_cli(&r, "run fixtures/cnn_residual/model.onnx -i %s", path);
    QT_CLI_FAILS(r, "input 'input'", "[1, 3, 32, 32]", "[1, 3, 16, 16]");
    snprintf(path, sizeof path, "%s/wrong_dtype.npy", qt_tmpdir());
    QT_OK(qt_write_npy_f(path, QR_DT_F64, 4, ok, 0.1));
    qt_cli(&r, "run fixtures/cnn_residual/model.onnx -i %s", path);
    QT_CLI_FAILS(r, "input 'input'", "float32", "float64");
    snprintf(path, sizeof path, "%s/broken.npy", qt_tmpdir());
    QT_OK(qr_file_write_atomic(path, "\x93NUMPY\x01\x00\x10\x00{'descr': '<f4',", 26));
    qt_cli(&r, "run fixtures/cnn_residual/model.onnx -i %s", path);
    QT_CLI_FAILS(r, "broken.npy");
    qt_cli(&r, "run fixtures/cnn_residual/model.onnx -i a.npy -i b.npy");
    QT_CLI_FAILS(r, "1 input", "2 -i files");
    /* Unwritable output location: a path below a regular file. */
    qt_cli(&r, "run fixtures/cnn_residual/model.onnx -i fixtures/cnn_residual/input.npy -o fixtures/README.md/out");
    QT_CLI_FAILS(r, "fixtures/README.md");
}

/* A model of one Cast: float32 input x [n] -> y of dtype `to` (the graph output). */
static void qt_cast_model(QtModel *mb, int opset, int64_t n, QrDType to) {
    qt_mb_init(mb, opset);
    int64_t d[1] = { n };
    qt_mb_input(mb, "x", QR_DT_F32, 1, d);
    qt_mb_output(mb, "y", to, 1, d);
    Onnx__NodeProto *node = qt_mb_node(mb, "Cast", "cast", "x", "y");
    Onnx__AttributeProto *a = qt_mb_attr(mb, node, "to", QR_ATTR_INT);
    a->has_i = 1;
    a->i = to;
}

/* A float8 graph output is written widened to float32 (.npy has no float8). */
static void test_cli_float8_output(void) {
    QtModel mb;
    qt_cast_model(&mb, 21, 4, QR_DT_F8E4M3FN);
    int64_t d[1] = { 4 };
    char model[600], in[600], dir[600], out[700];
    snprintf(model, sizeof model, "%s/f8.onnx", qt_tmpdir());
    snprintf(in, sizeof in, "%s/f8_in.npy", qt_tmpdir());
    snprintf(dir, sizeof dir, "%s/f8_out", qt_tmpdir());
    QrStatus st = qt_mb_write(&mb, model);
    qt_mb_free(&mb);
    QT_OK(st);
    QrTensor x = {0}, y = {0};
    QT_OK(qr_tensor_set_shape(&x, QR_DT_F32, 1, d));
    QT_OK(qr_tensor_alloc_data(&x));
    float xs[4] = { 1.0f, -0.3f, 1000.0f, 0.0f };
    memcpy(x.data, xs, sizeof xs);
    st = qr_npy_write(in, &x);
    qr_tensor_free_data(&x);
    QT_OK(st);
    QtCli r;
    qt_cli(&r, "run %s -i %s -o %s --quiet", model, in, dir);
    QT_CHECKF(r.code == 0, "exit %d: %s", r.code, r.err);
    snprintf(out, sizeof out, "%s/y.npy", dir);
    QT_OK(qr_npy_read(out, &y));
    const float *p = y.data;
    /* e4m3fn: 1.0 exact, -0.3 -> -0.3125 (nearest), 1000 saturates to 448 */
    bool ok = y.dtype == QR_DT_F32 && p[0] == 1.0f && p[1] == -0.3125f && p[2] == 448.0f && p[3] == 0.0f;
    qr_tensor_free_data(&y);
    QT_CHECK(ok);
}

static void test_cli_nonfinite_input(void) {
    QtCli r;
    char path[600], dir[600], csv[700];
    int64_t d[4] = { 1, 3, 32, 32 };
    QrTensor t = {0};
    QT_OK(qr_tensor_set_shape(&t, QR_DT_F32, 4, d));
    QT_OK(qr_tensor_alloc_data(&t));
    float *p = t.data;
    for (int64_t i = 0; i < t.numel; i++) p[i] = (float)((i % 11) - 5) * 0.1f;
    p[5] = NAN;
    p[100] = INFINITY;
    p[200] = -INFINITY;
    snprintf(path, sizeof path, "%s/nonfinite.npy", qt_tmpdir());
    QrStatus st = qr_npy_write(path, &t);
    qr_tensor_free_data(&t);
    QT_OK(st);
    snprintf(dir, sizeof dir, "%s/nonfinite_out", qt_tmpdir());
    qt_cli(&r, "run fixtures/cnn_residual/model.onnx -i %s -o %s", path, dir);
    QT_CHECKF(r.code == 0 && !r.crashed && strstr(r.err, "1 NaN and 2 Inf"), "exit %d: %s", r.code, r.err);
    qt_cli(&r, "profile fixtures/cnn_residual/model.onnx -i %s -o %s", path, dir);
    QT_CHECKF(r.code == 0 && !r.crashed, "exit %d: %s", r.code, r.err);
    snprintf(csv, sizeof csv, "%s/statistic.csv", dir);
    static char text[1 << 16];
    qt_slurp(csv, text, sizeof text);
    /* The first data row is the stem conv's input: 1 NaN, 2 Inf. */
    QT_CHECKF(strncmp(text, "Index,Op Name,Mod Name,Attr,Dtype,Scale,Min,Max,Mean,Var,Shape", 62) == 0, "%.200s", text);
    char *row = strchr(text, '\n');
    QT_CHECK(row && strstr(row, ",input,float32,") && strstr(row, ",/stem/Conv,"));
    char *eol = strchr(row + 1, '\n');
    QT_CHECK(eol && eol - row > 10 && !strncmp(eol - 4, ",1,2", 4));
    snprintf(csv, sizeof csv, "%s/statistic.txt", dir);
    qt_slurp(csv, text, sizeof text);
    QT_CHECK(strstr(text, "sorted by range") && strstr(text, "WARNING") && strstr(text, "1 NaN, 1 +Inf, 1 -Inf"));
}

static void test_profile_values(void);
static void qt_cli_all(void) {
    QT_RUN(test_cli_usage);
    QT_RUN(test_profile_values);
    QT_RUN(test_cli_run_fixture);
    QT_RUN(test_cli_bad_models);
    QT_RUN(test_cli_bad_inputs);
    QT_RUN(test_cli_nonfinite_input);
    QT_RUN(test_cli_float8_output);
}

/* profile's statistics equal an independent two-pass computation over ONNX Runtime's values. */
static void test_profile_values(void) {
    QtCli r;
    char dir[600], csv[700];
    snprintf(dir, sizeof dir, "%s/profile_out", qt_tmpdir());
    qt_cli(&r, "profile fixtures/cnn_residual/model.onnx -i fixtures/cnn_residual/input.npy -o %s --quiet", dir);
    QT_CHECKF(r.code == 0, "%s", r.err);
    snprintf(csv, sizeof csv, "%s/statistic.csv", dir);
    static char text[1 << 17];
    qt_slurp(csv, text, sizeof text);
    const char *tensors[] = { "/block1/bn2/BatchNormalization_output_0", "/gap/GlobalAveragePool_output_0", "output" };
    const char *files[] = { "v7.npy", "v24.npy", "v26.npy" };
    for (int k = 0; k < 3; k++) {
        char key[256], path[256];
        snprintf(key, sizeof key, ",output,float32,,");
        /* find the output row of this tensor */
        const char *line = text, *hit = NULL;
        while (line && *line) {
            const char *eol = strchr(line, '\n');
            size_t len = eol ? (size_t)(eol - line) : strlen(line);
            char buf[1024];
            snprintf(buf, sizeof buf, "%.*s", (int)QR_MIN(len, sizeof buf - 1), line);
            char tcol[300];
            snprintf(tcol, sizeof tcol, "]\",%s,0,0", tensors[k]);
            if (strstr(buf, key) && strstr(buf, tcol)) { hit = line; break; }
            line = eol ? eol + 1 : NULL;
        }
        QT_CHECKF(hit, "no output row for %s", tensors[k]);
        /* columns: Index,Op Name,Mod Name,Attr,Dtype,Scale,Min,Max,Mean,Var,... */
        double v[4];
        const char *p = hit;
        for (int c = 0; c < 6; c++) p = strchr(p, ',') + 1;
        QT_CHECK(sscanf(p, "%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3]) == 4);
        snprintf(path, sizeof path, "fixtures/cnn_residual/golden/%s", files[k]);
        QrTensor g = {0};
        QT_OK(qr_npy_read(path, &g));
        double mn = INFINITY, mx = -INFINITY, sum = 0, ss = 0;
        const float *x = g.data;
        for (int64_t i = 0; i < g.numel; i++) { mn = fmin(mn, x[i]); mx = fmax(mx, x[i]); sum += x[i]; }
        double mean = sum / (double)g.numel;
        for (int64_t i = 0; i < g.numel; i++) ss += (x[i] - mean) * (x[i] - mean);
        double var = ss / (double)g.numel;
        qr_tensor_free_data(&g);
        double want[4] = { mn, mx, mean, var };
        for (int c = 0; c < 4; c++)
            QT_CHECKF(fabs(v[c] - want[c]) <= 1e-4 * fabs(want[c]) + 1e-6, "%s col %d: %g vs %g", tensors[k], c, v[c], want[c]);
    }
    QT_CHECK(strstr(text, "BatchNormalization") && !strstr(text, ",Constant,"));
}
