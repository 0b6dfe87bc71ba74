/* tests/harness — a tiny test harness: named tests, checks that record the
 * first failure with file:line, a skipped state, and a
 * "N passed, N failed, N skipped" summary (the last line test_main prints).
 *
 * API
 *   QT_RUN(fn)                  runs `static void fn(void)` as the test named "fn".
 *   QT_CHECK(cond)              fails the current test at file:line and returns.
 *   QT_CHECKF(cond, fmt, ...)   the same with a printf-style message.
 *   QT_OK(expr)                 fails unless the QrStatus expression is QR_OK (prints qr_err_msg()).
 *   QT_SKIP(fmt, ...)           the current test checked nothing because something it
 *                               needs is missing (a tool, a folder, a CPU level, a mount
 *                               permission): records it as skipped with that reason and
 *                               returns. Always printed ("skip NAME: reason"). A test that
 *                               failed before it skips stays failed. Never skip what could
 *                               have run: skipped is not passed.
 *   qt_skip(fmt, ...)           the same without the return (for helpers; the caller returns).
 *   qt_record(name, ok, fmt, ...)      data-driven tests: record one named result directly.
 *   qt_record_skip(name, fmt, ...)     ... or one named skipped result (e.g. an optional
 *                               independent check whose tool is not installed).
 * Counters: qt_passed, qt_failed, qt_skipped. */
#ifndef QR_HARNESS_H
#define QR_HARNESS_H

static int qt_passed, qt_failed, qt_skipped, qt_cur_failed, qt_cur_skipped;
static const char *qt_cur_name;
static bool qt_verbose;
static char qt_cur_skip_why[512];

#define QT_CHECK(cond) do { if (!(cond)) { qt_fail(__FILE__, __LINE__, "%s", #cond); return; } } while (0)
#define QT_CHECKF(cond, ...) do { if (!(cond)) { qt_fail(__FILE__, __LINE__, __VA_ARGS__); return; } } while (0)
#define QT_OK(expr) do { QrStatus qt__s = (expr); if (qt__s != QR_OK) { \
    qt_fail(__FILE__, __LINE__, "%s -> %s: %s", #expr, qr_status_name(qt__s), qr_err_msg()); return; } } while (0)
#define QT_SKIP(...) do { qt_skip(__VA_ARGS__); return; } while (0)

static void qt_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void qt_fail(const char *file, int line, const char *fmt, ...) {
    if (qt_cur_failed++) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stdout, "FAIL %s (%s:%d): ", qt_cur_name, file, line);
    vfprintf(stdout, fmt, ap);
    fprintf(stdout, "\n");
    va_end(ap);
}

/* snprintf for tests: a text or path cut at the buffer's size fails the current test (a cut
 * path would name another file; nothing in the suite is that long, and this shows if it becomes
 * so). Returns the buffer. */
#define qt_fmt(buf, cap, ...) qt__fmt(__FILE__, __LINE__, (buf), (cap), __VA_ARGS__)
static char *qt__fmt(const char *file, int line, char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static char *qt__fmt(const char *file, int line, char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap) qt_fail(file, line, "qt_fmt: %d bytes do not fit in %zu", n, cap);
    return buf;
}

/* Marks the current test skipped with a reason (see QT_SKIP). */
static void qt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void qt_skip(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(qt_cur_skip_why, sizeof qt_cur_skip_why, fmt, ap);
    va_end(ap);
    qt_cur_skipped = 1;
}

/* A test that hangs fails by name instead of running into CI's 90-minute limit: each test
 * gets QT_TEST_TIMEOUT seconds (environment; default 1800, 0 = none; the slowest test takes a
 * few minutes under qemu), then the harness prints "FAIL NAME: timed out" and exits 1. */
static void qt_timeout(int sig) {
    (void)sig;
    static const char a[] = "FAIL ", b[] = ": timed out (QT_TEST_TIMEOUT)\n";
    if (write(1, a, sizeof a - 1) < 0 || write(1, qt_cur_name, strlen(qt_cur_name)) < 0 || write(1, b, sizeof b - 1) < 0) {}
    _exit(1);
}

static void qt_arm_timeout(void) {
    static int secs = -1;
    if (secs < 0) {
        const char *e = getenv("QT_TEST_TIMEOUT");
        secs = e ? atoi(e) : 1800;
        if (secs < 0) secs = 0;
        signal(SIGALRM, qt_timeout);
    }
    alarm((unsigned)secs);
}

/* Runs one test function and records its result. */
static void qt_run(const char *name, void (*fn)(void)) {
    qt_cur_name = name;
    qt_arm_timeout();
    qt_cur_failed = 0;
    qt_cur_skipped = 0;
    qt_cur_skip_why[0] = 0;
    qr_err_clear();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fn();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* --verbose shows each test's wall time (with the processes it starts): where the suite's time goes. */
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (qt_cur_failed) qt_failed++;
    else if (qt_cur_skipped) { qt_skipped++; printf("skip %s: %s\n", name, qt_cur_skip_why); }
    else { qt_passed++; if (qt_verbose) printf("ok   %s (%.2f s)\n", name, secs); }
    alarm(0);
}

/* For data-driven tests (conformance, golden): record a named result directly. */
static void qt_record(const char *name, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void qt_record(const char *name, bool ok, const char *fmt, ...) {
    if (ok) { qt_passed++; if (qt_verbose) printf("ok   %s\n", name); return; }
    qt_failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* Records a named skipped result directly, with its reason. */
static void qt_record_skip(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void qt_record_skip(const char *name, const char *fmt, ...) {
    qt_skipped++;
    va_list ap;
    va_start(ap, fmt);
    printf("skip %s: ", name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

#define QT_RUN(fn) qt_run(#fn, fn)

#endif
