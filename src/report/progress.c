/* report/progress — implementation. See progress.h. */

#include <sys/ioctl.h>
#include <sys/resource.h>

static void qr_progress_format_duration(double s, char *buf, size_t cap) {
    if (!(s >= 0)) s = 0;
    if (s < 10) snprintf(buf, cap, "%.1fs", s);
    else if (s < 60) snprintf(buf, cap, "%.0fs", s);
    else {
        /* A display string: hours beyond the buffer are cut, which the return value records. */
        long t = s < 3600 ? lround(s) : lround(s / 60);
        int n = snprintf(buf, cap, s < 3600 ? "%ldm%02lds" : "%ldh%02ldm", t / 60, t % 60);
        if (n < 0 && cap) buf[0] = 0;
    }
}

static void qr_progress_cpu(double *user, double *sys) {
    struct rusage ru;
    *user = *sys = 0;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return;
    *user = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec;
    *sys = (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static void qr_progress_init(QrProgress *p, FILE *out, bool quiet) {
    memset(p, 0, sizeof *p);
    p->out = out;
    p->quiet = quiet || !out;
    p->now = qr_time_now;
    p->interval = 2.0;
    p->width = 80;
    if (out) {
        const char *term = getenv("TERM");
        p->tty = isatty(fileno(out)) && !(term && !strcmp(term, "dumb"));
        struct winsize ws;
        if (p->tty && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) p->width = ws.ws_col;
    }
    p->t_init = p->now();
}

/* Builds the bar line (without "\r") into buf. */
static void qr__prog_bar(const QrProgress *p, int64_t done, double t, char *buf, size_t cap) {
    char tail[96], eta[24] = "";
    double el = t - p->t_begin;
    if (p->total > 0) {
        int64_t d = QR_MIN(done, p->total);
        if (d > 0 && d < p->total && el >= 1.0) {
            char dur[16];
            qr_progress_format_duration(el * (double)(p->total - d) / (double)d, dur, sizeof dur);
            snprintf(eta, sizeof eta, "  ETA %s", dur);
        }
        snprintf(tail, sizeof tail, "  %lld/%lld  %3d%%%s", (long long)d, (long long)p->total,
                 (int)(100 * d / p->total), eta);
        /* Bar width: what is left of the line, 10..40 columns. */
        int room = p->width - 1 - (int)strlen(p->stage) - 6 - (int)strlen(tail);
        int bw = QR_MAX(10, QR_MIN(40, room));
        int fill = (int)((double)bw * (double)d / (double)p->total);
        char bar[48];
        for (int i = 0; i < bw; i++) bar[i] = i < fill ? '#' : '-';
        bar[bw] = 0;
        snprintf(buf, cap, "  %s  [%s]%s", p->stage, bar, tail);
    } else {
        char dur[16];
        qr_progress_format_duration(el, dur, sizeof dur);
        snprintf(buf, cap, "  %s  %lld steps  %s", p->stage, (long long)done, dur);
    }
    if ((int)strlen(buf) > p->width - 1) buf[p->width - 1] = 0;
}

static void qr__prog_plain(const QrProgress *p, double t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void qr__prog_plain(const QrProgress *p, double t, const char *fmt, ...) {
    fprintf(p->out, "[%6.1fs] %s: ", t - p->t_init, p->stage);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->out, fmt, ap);
    va_end(ap);
    fputc('\n', p->out);
    fflush(p->out);
}

/* Clears the bar line (terminal mode) before other output. */
static void qr__prog_clear(QrProgress *p) {
    if (p->tty && p->active) fputs("\r\x1b[K", p->out);
}

/* Redraws / prints a progress line if due. force: draw regardless of the rate limit. */
static void qr__prog_draw(QrProgress *p, bool force) {
    if (p->quiet || !p->active) return;
    if (__atomic_exchange_n(&p->drawing, 1, __ATOMIC_ACQUIRE)) return;   /* another thread draws */
    double t = p->now();
    int64_t done = __atomic_load_n(&p->done, __ATOMIC_RELAXED);
    if (p->tty) {
        if (force || t - p->t_last_draw >= 0.1) {
            char line[512];
            qr__prog_bar(p, done, t, line, sizeof line);
            fprintf(p->out, "\r%s\x1b[K", line);
            fflush(p->out);
            p->t_last_draw = t;
        }
    } else if (!force && t - p->t_last_draw >= p->interval) {
        char eta[40] = "";
        double el = t - p->t_begin;
        if (p->total > 0 && done > 0 && done < p->total) {
            char dur[16];
            qr_progress_format_duration(el * (double)(p->total - done) / (double)done, dur, sizeof dur);
            snprintf(eta, sizeof eta, ", ETA %s", dur);
        }
        if (p->total > 0)
            qr__prog_plain(p, t, "%lld/%lld (%d%%)%s", (long long)done, (long long)p->total,
                              (int)(100 * QR_MIN(done, p->total) / p->total), eta);
        else
            qr__prog_plain(p, t, "%lld steps", (long long)done);
        p->t_last_draw = t;
    }
    __atomic_store_n(&p->drawing, 0, __ATOMIC_RELEASE);
}

static void qr_progress_begin(QrProgress *p, const char *stage, int64_t total) {
    if (p->active) qr_progress_end(p, QR_OK);
    snprintf(p->stage, sizeof p->stage, "%s", stage ? stage : "stage");
    p->total = total > 0 ? total : 0;
    p->done = 0;
    p->active = true;
    p->t_begin = p->t_last_draw = p->now();
    qr_progress_cpu(&p->u_begin, &p->s_begin);
    if (p->quiet) return;
    if (p->tty) qr__prog_draw(p, true);   /* plain lines: progress only once a stage runs long, then the end */
}

static void qr_progress_update(QrProgress *p, int64_t done) {
    if (!p->active) return;
    __atomic_store_n(&p->done, done, __ATOMIC_RELAXED);
    qr__prog_draw(p, false);
}

static void qr_progress_step(QrProgress *p) {
    if (!p->active) return;
    __atomic_add_fetch(&p->done, 1, __ATOMIC_RELAXED);
    qr__prog_draw(p, false);
}

static void qr__prog_hook_fn(void *ctx, int64_t done, int64_t total) {
    QrProgress *p = ctx;
    if (!p->active) return;
    if (total > 0) p->total = total;
    qr_progress_update(p, done);
}

static QrStepHook qr_progress_hook(QrProgress *p) { return (QrStepHook){ qr__prog_hook_fn, p }; }

static void qr_progress_end(QrProgress *p, QrStatus st) {
    if (!p->active) return;
    double t = p->now(), secs = t - p->t_begin;
    if (p->n_stages < QR_PROGRESS_MAX_STAGES) {
        QrProgressStage *s = &p->stages[p->n_stages++];
        snprintf(s->name, sizeof s->name, "%s", p->stage);
        s->seconds = secs;
        qr_progress_cpu(&s->user, &s->sys);
        s->user -= p->u_begin;
        s->sys -= p->s_begin;
        s->ok = st == QR_OK;
    }
    if (!p->quiet) {
        char dur[16];
        qr_progress_format_duration(secs, dur, sizeof dur);
        if (p->tty) {
            qr__prog_clear(p);
            fprintf(p->out, "  %s: %s %s\n", p->stage, st == QR_OK ? "done in" : "failed after", dur);
            fflush(p->out);
        } else {
            qr__prog_plain(p, t, "%s %s", st == QR_OK ? "done in" : "failed after", dur);
        }
    }
    p->active = false;
}

#ifdef QR_TESTING
QR_TESTAPI void qr_progress_message(QrProgress *p, const char *fmt, ...) {
    if (p->quiet) return;
    qr__prog_clear(p);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->out, fmt, ap);
    va_end(ap);
    fputc('\n', p->out);
    if (p->tty && p->active) qr__prog_draw(p, true);
    fflush(p->out);
}
#endif

static int64_t qr_progress_peak_rss(void) {
    /* VmHWM: the high-water mark of this process's own address space. getrusage's ru_maxrss
     * also keeps what the process held before exec (a fork of a large parent counts it). */
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        long long kb = -1;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "VmHWM:", 6)) { kb = strtoll(line + 6, NULL, 10); break; }
        fclose(f);
        if (kb > 0) return (int64_t)kb * 1024;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (int64_t)ru.ru_maxrss * 1024;     /* Linux reports kilobytes */
}
