/* tests/harness — a tiny test harness: named tests, checks that record the
 * first failure with file:line, and a "N passed, N failed" summary. */
#ifndef QR_HARNESS_H
#define QR_HARNESS_H

static int qt_passed, qt_failed, qt_cur_failed;
static const char *qt_cur_name;
static bool qt_verbose;

#define QT_CHECK(cond) do { if (!(cond)) { qt_fail(__FILE__, __LINE__, "%s", #cond); return; } } while (0)
#define QT_CHECKF(cond, ...) do { if (!(cond)) { qt_fail(__FILE__, __LINE__, __VA_ARGS__); return; } } while (0)
#define QT_OK(expr) do { QrStatus qt__s = (expr); if (qt__s != QR_OK) { \
    qt_fail(__FILE__, __LINE__, "%s -> %s: %s", #expr, qr_status_name(qt__s), qr_err_msg()); return; } } while (0)

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

/* Runs one test function and records its result. */
static void qt_run(const char *name, void (*fn)(void)) {
    qt_cur_name = name;
    qt_cur_failed = 0;
    qr_err_clear();
    fn();
    if (qt_cur_failed) qt_failed++;
    else { qt_passed++; if (qt_verbose) printf("ok   %s\n", name); }
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

#define QT_RUN(fn) qt_run(#fn, fn)

#endif
