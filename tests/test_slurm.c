/* tests/slurm — the single-node Slurm harness of tests/slurm/ (README there): a real munged,
 * slurmctld and slurmd started as root in a temp directory, job arrays submitted to it, the
 * cluster stopped. Skipped, with the reason, where Slurm is not installed (Debian slurm-wlm,
 * munge), we are not root, or its daemons do not start.
 *
 * For tests that run qreport under Slurm (shards):
 *   char why[512];
 *   int rc = qt_slurm_start(why, sizeof why);       0 up, 77 skip (why), else failed (why)
 *   rc = qt_slurm_array(4, "cmd using $SLURM_ARRAY_TASK_ID ...", log, sizeof log);
 *                                                   0: all tasks exited 0; log: per-task lines
 *   qt_slurm_stop();                                always, once started
 * The command runs with bash in the test's directory with the test's environment (QR_BIN...). */

/* Runs a shell command line with stdout+stderr into a temp file; its exit code (-1: no exit),
 * and the output's last CAP-1 bytes in OUT. */
static int qt_slurm_sh(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int qt_slurm_sh(char *out, size_t cap, const char *fmt, ...) {
    char cmd[8192], log[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    out[0] = 0;
    if (n < 0 || (size_t)n >= sizeof cmd - sizeof log - 16) { snprintf(out, cap, "command too long"); return -1; }
    snprintf(log, sizeof log, "%s/slurm_sh.log", qt_tmpdir());
    snprintf(cmd + n, sizeof cmd - (size_t)n, " > '%s' 2>&1", log);
    int st = system(cmd);
    FILE *f = fopen(log, "rb");
    if (f) {
        long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : 0;
        if (len > (long)cap - 1) fseek(f, len - ((long)cap - 1), SEEK_SET);
        else rewind(f);
        size_t r = fread(out, 1, cap - 1, f);
        out[r] = 0;
        fclose(f);
    }
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The reason after "skip: " in a script's output (else the whole output), trailing newlines cut. */
static const char *qt_slurm_why(char *log) {
    size_t n = strlen(log);
    while (n && (log[n - 1] == '\n' || log[n - 1] == '\r')) log[--n] = 0;
    const char *p = strstr(log, "skip: ");
    return p ? p + 6 : log;
}

/* Starts the cluster (tests/slurm/start.sh) and exports QR_SLURM_DIR and SLURM_CONF into this
 * process's environment, so qt_slurm_array and every child use it. 0 up; 77 skipped and
 * WHY says why; other: failed and WHY holds the script's output. */
static int qt_slurm_start(char *why, size_t cap) {
    char env[600], log[4096];
    snprintf(env, sizeof env, "%s/slurm_env.sh", qt_tmpdir());
    int rc = qt_slurm_sh(log, sizeof log, "(tests/slurm/start.sh > '%s')", env);
    if (rc != 0) { snprintf(why, cap, "%s", rc == 77 ? qt_slurm_why(log) : log); return rc; }
    /* One line: export QR_SLURM_DIR=/tmp/qr-slurm.XXXXXX SLURM_CONF=/tmp/qr-slurm.XXXXXX/slurm.conf */
    char line[1024] = {0}, dir[512] = {0}, conf[512] = {0};
    FILE *f = fopen(env, "r");
    if (f) { if (!fgets(line, sizeof line, f)) line[0] = 0; fclose(f); }
    if (sscanf(line, "export QR_SLURM_DIR=%511s SLURM_CONF=%511s", dir, conf) != 2 || strncmp(dir, "/tmp/qr-slurm.", 14)) {
        snprintf(why, cap, "start.sh printed '%s'", line);
        return -1;
    }
    setenv("QR_SLURM_DIR", dir, 1);
    setenv("SLURM_CONF", conf, 1);
    why[0] = 0;
    return 0;
}

/* Stops the cluster qt_slurm_start started (tests/slurm/stop.sh) and forgets it. */
static void qt_slurm_stop(void) {
    const char *dir = getenv("QR_SLURM_DIR");
    if (!dir) return;
    char log[2048];
    if (qt_slurm_sh(log, sizeof log, "tests/slurm/stop.sh '%s'", dir) != 0) printf("warning: tests/slurm/stop.sh: %s\n", log);
    unsetenv("QR_SLURM_DIR");
    unsetenv("SLURM_CONF");
}

/* Runs CMD as a job array of N tasks on the running cluster (tests/slurm/run_array.sh; without
 * a running cluster it starts and stops one itself). The script's exit code: 0 every task
 * exited 0, 1 some task failed (LOG: "task I: STATE exit CODE" lines and the failed tasks'
 * output), 77 skipped (LOG: "skip: REASON"). */
static int qt_slurm_array(int n, const char *cmd, char *log, size_t cap) {
    char q[4096];   /* cmd in single quotes for the shell: ' -> '\'' */
    size_t k = 0;
    q[k++] = '\'';
    for (const char *p = cmd; *p && k + 6 < sizeof q; p++) {
        if (*p == '\'') { memcpy(q + k, "'\\''", 4); k += 4; }
        else q[k++] = *p;
    }
    q[k++] = '\'';
    q[k] = 0;
    return qt_slurm_sh(log, cap, "tests/slurm/run_array.sh %d %s", n, q);
}

static void qt_slurm_array_body(const char *dir) {
    char cmd[1024], log[8192], path[700], got[64];
    /* Each task writes its own index and the array's size where only that task writes. */
    snprintf(cmd, sizeof cmd,
             "printf '%%s %%s %%s\\n' \"$SLURM_ARRAY_TASK_ID\" \"$SLURM_ARRAY_TASK_COUNT\" \"$QT_SLURM_MARK\" "
             "> '%s'/task_\"$SLURM_ARRAY_TASK_ID\".txt",
             dir);
    int rc = qt_slurm_array(4, cmd, log, sizeof log);
    QT_CHECKF(rc == 0, "run_array.sh 4 exit %d:\n%s", rc, log);
    for (int i = 0; i < 4; i++) {
        char want[64], line[32];
        snprintf(path, sizeof path, "%s/task_%d.txt", dir, i);
        qt_slurp(path, got, sizeof got);
        snprintf(want, sizeof want, "%d 4 m%ld\n", i, (long)getpid());   /* the caller's environment too */
        QT_CHECKF(!strcmp(got, want), "%s: '%s', want '%s'", path, got, want);
        qt_fmt(line, sizeof line, "task %d: COMPLETED exit 0:0", i);
        QT_CHECKF(strstr(log, line), "no '%s' in:\n%s", line, log);
    }
    snprintf(path, sizeof path, "%s/task_4.txt", dir);
    QT_CHECKF(access(path, F_OK) != 0, "a fifth task ran: %s", path);

    /* The status is each task's: one task exiting 3 fails the array and is named. */
    rc = qt_slurm_array(3, "echo output of $SLURM_ARRAY_TASK_ID; [ \"$SLURM_ARRAY_TASK_ID\" != 1 ] || exit 3", log, sizeof log);
    QT_CHECKF(rc == 1, "a failing task: run_array.sh exit %d, want 1:\n%s", rc, log);
    QT_CHECKF(strstr(log, "task 0: COMPLETED exit 0:0") && strstr(log, "task 1: FAILED exit 3:0") &&
                  strstr(log, "task 2: COMPLETED exit 0:0") && strstr(log, "output of 1"),
              "per-task status or the failed task's output missing:\n%s", log);
    QT_CHECKF(!strstr(log, "output of 0"), "only failed tasks' output is shown:\n%s", log);
}

/* A 4-task array writes SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT into one file per task;
 * a failing task makes the array fail; stop.sh leaves nothing behind. */
static void test_slurm_array(void) {
    char dir[600], why[4096], cwd[400];
    QT_CHECK(getcwd(cwd, sizeof cwd));
    qt_fmt(dir, sizeof dir, "%s/%s/slurm_array", cwd, qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    char mark[32];
    snprintf(mark, sizeof mark, "m%ld", (long)getpid());
    setenv("QT_SLURM_MARK", mark, 1);
    int rc = qt_slurm_start(why, sizeof why);
    if (rc == 77) QT_SKIP("%s", why);
    QT_CHECKF(rc == 0, "tests/slurm/start.sh exit %d:\n%s", rc, why);
    char state[512];
    snprintf(state, sizeof state, "%s", getenv("QR_SLURM_DIR"));
    qt_slurm_array_body(dir);   /* its failures are recorded; the cluster is stopped either way */
    qt_slurm_stop();
    unsetenv("QT_SLURM_MARK");
    QT_CHECKF(access(state, F_OK) != 0, "stop.sh left %s", state);
}

static void qt_slurm_all(void) {
    QT_RUN(test_slurm_array);
}
