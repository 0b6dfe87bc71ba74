/* report/progress — stage progress on stderr for long runs, and the numbers the
 * manifest records about them: time per stage, total time, peak memory (RSS).
 * A terminal gets one updating bar; a log file gets plain lines; --quiet gets nothing. */
#ifndef QR_PROGRESS_H
#define QR_PROGRESS_H

#define QR_PROGRESS_MAX_STAGES 64

typedef struct QrProgressStage {
    char name[64];
    double seconds;          /* wall time from begin to end (monotonic clock) */
    double user, sys;        /* CPU seconds of the whole process (every thread) from begin to end (getrusage) */
    bool ok;                 /* false when the stage ended with an error */
} QrProgressStage;

/* Output:
 *  - terminal (isatty): one line redrawn at most 10 times a second:
 *      "  sensitivity  [#########---------]  37/120  31%  ETA 12s"
 *    replaced at the end of the stage by "  sensitivity: done in 6.5s" (kept);
 *  - otherwise, lines prefixed with the time since init (one line for a short stage):
 *      "[   2.0s] sensitivity: 37/120 (31%), ETA 12s"  (every `interval` s while it runs)
 *      "[   6.5s] sensitivity: done in 6.5s"            (end; "failed after" on error)
 *  - quiet: nothing, but stage times are still recorded.
 * begin/end/message are called from one thread; step/update may be called from
 * worker threads (the count is atomic, a redraw is skipped when another thread is
 * drawing). The progress display is the one part of report/ that prints: that is
 * its purpose, and it only ever writes to the FILE it was given. */
typedef struct QrProgress {
    FILE *out;
    bool quiet, tty;
    int width;                          /* terminal columns (tty) */
    double interval;                    /* plain mode: seconds between progress lines (2) */
    double (*now)(void);                /* monotonic clock; tests substitute a fake one */
    double t_init;
    /* the running stage */
    char stage[64];
    bool active;
    int64_t total, done;                /* total 0: unknown */
    double t_begin, t_last_draw;
    double u_begin, s_begin;            /* process CPU seconds (user, system) at begin */
    int drawing;                        /* a thread is drawing (atomic flag) */
    /* finished stages, in order; stages beyond QR_PROGRESS_MAX_STAGES are not recorded */
    QrProgressStage stages[QR_PROGRESS_MAX_STAGES];
    int n_stages;
} QrProgress;

/* Sets up progress on `out` (normally stderr): terminal mode when out is a TTY and
 * TERM is not "dumb"; nothing is printed when quiet. */
static void qr_progress_init(QrProgress *p, FILE *out, bool quiet);
/* Starts a stage (ending a running one as successful). total = number of steps, 0 if unknown. */
static void qr_progress_begin(QrProgress *p, const char *stage, int64_t total);
/* Sets the number of finished steps / adds one. */
static void qr_progress_update(QrProgress *p, int64_t done);
static void qr_progress_step(QrProgress *p);
/* A hook for library loops (QrSession.progress, qr_badcase_search): each call sets the
 * running stage's total (when given) and its count of finished steps. */
static QrStepHook qr_progress_hook(QrProgress *p);
/* Ends the running stage (st != QR_OK: reported as failed) and records its time. */
static void qr_progress_end(QrProgress *p, QrStatus st);
#ifdef QR_TESTING
/* A line of its own (a warning) that does not garble the bar. */
QR_TESTAPI void qr_progress_message(QrProgress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
/* CPU seconds of this process so far, every thread: user and system (getrusage; 0 if unknown). */
static void qr_progress_cpu(double *user, double *sys);
/* Peak resident memory of this process in bytes (/proc/self/status VmHWM, else getrusage
 * ru_maxrss), 0 if unknown. */
static int64_t qr_progress_peak_rss(void);
/* "42s", "3m05s", "1h02m" — durations for humans. */
static void qr_progress_format_duration(double seconds, char *buf, size_t cap);

#endif
