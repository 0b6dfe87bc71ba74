/* base/pool — implementation. See pool.h.
 * Jobs are published on a list (under the mutex) and the generation is bumped to wake the
 * workers. A thread joins a published job that has unclaimed tasks and claims task indices
 * from atomic counters: a job's tasks are cut into one segment of consecutive tasks per thread,
 * thread k claims from segment k first and then from the others in turn. Kernels number their
 * tasks in the order of the data they write (a convolution's rows, a GEMM's column slices), so
 * a thread gets about the same share of consecutive layers and mostly reads what it wrote
 * itself, from its own caches. (On the 2-vCPU Zen 4 host of session 27, in phases where one
 * thread ran as fast as ever but two threads' copies ran 4-5x slower — the vCPUs, it seems, on
 * different L3 caches — tasks from one shared counter made ResNet-18's float run 1.35x slower,
 * ONNX Runtime's 1.04x; bench/RESULTS_CNN.md.) An owner that runs out of tasks
 * unpublishes its job and waits only for the threads that joined: a worker the OS has not
 * scheduled yet (the machine may be shared) never holds the caller up, it just finds no job.
 * While it waits, the owner runs tasks of jobs nested deeper than its own (the kernels a
 * joiner's task calls), so a job whose tasks are whole model runs keeps every thread busy
 * to its end. Waiting spins briefly before it sleeps on the condition variable (kernels
 * follow each other closely). */

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define QR__POOL_SPIN 5000    /* pause iterations before sleeping (~100-250 us on x86: PAUSE is 20-50 ns); measured
                                 * against 500 (2 threads, int mode): MobileNetV2 1.13x -> 1.10x ORT, ResNet-18
                                 * 0.98x -> 0.91x, float unchanged — the worker is still awake for the next layer */

/* A job's tasks [begin, end) that thread `tid % nseg` claims first, from `next` on. */
typedef struct QrPoolSeg {
    _Alignas(64) _Atomic int64_t next;
    int64_t end;
} QrPoolSeg;

typedef struct QrPoolJob {
    QrPoolFn fn;
    void *ctx;
    int depth;                           /* tasks its owner was inside when it published it */
    int nseg;                            /* segments: min(threads, tasks) */
    struct QrPoolJob *up;                /* the next published job (under mu) */
    _Alignas(64) _Atomic int active;     /* threads other than the owner inside the job */
    QrPoolSeg seg[QR_POOL_MAX_THREADS];
} QrPoolJob;

/* Per-worker state, one cache line each. */
typedef struct QrPoolWorker {
    _Alignas(64) pthread_t th;
    int tid;
} QrPoolWorker;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;               /* a job published, a job's last joiner left, stop */
    pthread_mutex_t busy;            /* held by the non-worker thread whose outermost job runs */
    int n_threads;                   /* caller included; 0 = not initialised */
    int n_workers;                   /* workers actually started */
    QrPoolWorker workers[QR_POOL_MAX_THREADS];
    QrPoolJob *jobs;                 /* the published jobs (under mu), newest first */
    bool stop;
    _Alignas(64) _Atomic uint64_t gen;
} qr__pool_pool = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
                    .busy = PTHREAD_MUTEX_INITIALIZER };

static _Thread_local int qr__pool_tid;     /* worker k: k; any other thread 0 */
static _Thread_local int qr__pool_depth;   /* pool tasks this thread is inside */
static _Thread_local int qr__pool_level;   /* jobs this thread waits for while running other tasks */
static _Thread_local bool qr__pool_owner;  /* this non-worker thread holds busy */

static inline void qr__pool_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static int qr_pool_scratch_level(void) { return qr__pool_level; }

/* Job j of n_tasks tasks in min(nseg, n_tasks) segments of consecutive tasks, as even as
 * they go; its depth is the calling thread's. */
static void qr__pool_job_init(QrPoolJob *j, int64_t n_tasks, int nseg, QrPoolFn fn, void *ctx) {
    j->fn = fn;
    j->ctx = ctx;
    j->depth = qr__pool_depth;
    j->up = NULL;
    j->nseg = (int)QR_MAX((int64_t)1, QR_MIN((int64_t)QR_MIN(nseg, QR_POOL_MAX_THREADS), n_tasks));
    for (int g = 0; g < j->nseg; g++) {
        atomic_init(&j->seg[g].next, n_tasks * g / j->nseg);
        j->seg[g].end = n_tasks * (g + 1) / j->nseg;
    }
    atomic_init(&j->active, 0);
}

/* Whether job j has a task no thread has claimed. */
static bool qr__pool_left(QrPoolJob *j) {
    for (int s = 0; s < j->nseg; s++)
        if (atomic_load_explicit(&j->seg[s].next, memory_order_relaxed) < j->seg[s].end) return true;
    return false;
}

/* Runs tasks of j until none is left: its own segment's first (tid % nseg), then the others'. */
static void qr__pool_drain(QrPoolJob *j) {
    const int depth = qr__pool_depth;
    qr__pool_depth = j->depth + 1;
    const int me = qr__pool_tid % j->nseg;
    for (int i = 0; i < j->nseg; i++) {
        QrPoolSeg *g = &j->seg[(me + i) % j->nseg];
        for (;;) {
            int64_t t = atomic_fetch_add_explicit(&g->next, 1, memory_order_relaxed);
            if (t >= g->end) break;
            j->fn(j->ctx, t, qr__pool_tid);
        }
    }
    qr__pool_depth = depth;
}

/* A published job deeper than min_depth with unclaimed tasks, joined (under mu), or NULL. */
static QrPoolJob *qr__pool_find(int min_depth) {
    for (QrPoolJob *j = qr__pool_pool.jobs; j; j = j->up)
        if (j->depth > min_depth && qr__pool_left(j)) {
            atomic_fetch_add_explicit(&j->active, 1, memory_order_relaxed);
            return j;
        }
    return NULL;
}

/* Runs tasks of the joined job j (called without mu), then leaves it. */
static void qr__pool_help(QrPoolJob *j) {
    qr__pool_drain(j);
    /* j may be gone as soon as active drops to 0: touch only the pool afterwards */
    if (atomic_fetch_sub_explicit(&j->active, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_lock(&qr__pool_pool.mu);
        pthread_cond_broadcast(&qr__pool_pool.cv);
        pthread_mutex_unlock(&qr__pool_pool.mu);
    }
}

/* Spins (without mu, which it is called and returns with) until the generation moves, *done
 * holds or the spin budget *spins runs out. */
static void qr__pool_spin(int *spins, _Atomic int *active) {
    const uint64_t seen = atomic_load_explicit(&qr__pool_pool.gen, memory_order_relaxed);
    pthread_mutex_unlock(&qr__pool_pool.mu);
    while (*spins < QR__POOL_SPIN && atomic_load_explicit(&qr__pool_pool.gen, memory_order_acquire) == seen &&
           (!active || atomic_load_explicit(active, memory_order_acquire) > 0)) {
        qr__pool_pause();
        (*spins)++;
    }
    pthread_mutex_lock(&qr__pool_pool.mu);
}

static void *qr__pool_main(void *arg) {
    QrPoolWorker *w = arg;
    qr__pool_tid = w->tid;
    int spins = 0;
    pthread_mutex_lock(&qr__pool_pool.mu);
    while (!qr__pool_pool.stop) {
        QrPoolJob *j = qr__pool_find(-1);
        if (j) {
            pthread_mutex_unlock(&qr__pool_pool.mu);
            qr__pool_help(j);
            pthread_mutex_lock(&qr__pool_pool.mu);
            spins = 0;
        } else if (spins < QR__POOL_SPIN) {
            qr__pool_spin(&spins, NULL);
        } else {
            pthread_cond_wait(&qr__pool_pool.cv, &qr__pool_pool.mu);
        }
    }
    pthread_mutex_unlock(&qr__pool_pool.mu);
    return NULL;
}

/* Waits (after its own tasks ran out and it left the list) until no thread is inside the
 * owner's job j, running meanwhile tasks of jobs deeper than j at the next scratch level. */
static void qr__pool_wait(QrPoolJob *j) {
    const bool help = qr__pool_level + 1 < QR_POOL_SCRATCH_LEVELS;
    int spins = 0;
    pthread_mutex_lock(&qr__pool_pool.mu);
    while (atomic_load_explicit(&j->active, memory_order_acquire) > 0) {
        QrPoolJob *h = help ? qr__pool_find(j->depth) : NULL;
        if (h) {
            pthread_mutex_unlock(&qr__pool_pool.mu);
            qr__pool_level++;
            qr__pool_help(h);
            qr__pool_level--;
            pthread_mutex_lock(&qr__pool_pool.mu);
            spins = 0;
        } else if (spins < QR__POOL_SPIN) {
            qr__pool_spin(&spins, &j->active);
        } else {
            pthread_cond_wait(&qr__pool_pool.cv, &qr__pool_pool.mu);
        }
    }
    pthread_mutex_unlock(&qr__pool_pool.mu);
}

static void qr_pool_shutdown(void) {
    if (qr__pool_pool.n_threads == 0) return;
    pthread_mutex_lock(&qr__pool_pool.mu);
    qr__pool_pool.stop = true;
    pthread_cond_broadcast(&qr__pool_pool.cv);
    pthread_mutex_unlock(&qr__pool_pool.mu);
    for (int i = 0; i < qr__pool_pool.n_workers; i++) pthread_join(qr__pool_pool.workers[i].th, NULL);
    qr__pool_pool.stop = false;
    qr__pool_pool.n_workers = 0;
    qr__pool_pool.n_threads = 0;
}

/* The default thread count: QR_THREADS when set (0 on a malformed value), else online CPUs. */
static int qr__pool_default(void) {
    const char *env = getenv("QR_THREADS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end || v < 1) return 0;
        return (int)QR_MIN(v, (long)QR_POOL_MAX_THREADS);
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return (int)QR_MAX(1L, QR_MIN(n, (long)QR_POOL_MAX_THREADS));
}

static QrStatus qr_pool_init(int n_threads) {
    int n = n_threads > 0 ? QR_MIN(n_threads, QR_POOL_MAX_THREADS) : qr__pool_default();
    if (n < 1) return qr_errf(QR_ERR_INVALID, "QR_THREADS='%s' is not a positive integer", getenv("QR_THREADS"));
    if (qr__pool_pool.n_threads == n) return QR_OK;
    qr_pool_shutdown();
    for (int i = 0; i < n - 1; i++) {
        QrPoolWorker *w = &qr__pool_pool.workers[qr__pool_pool.n_workers];
        w->tid = qr__pool_pool.n_workers + 1;
        if (pthread_create(&w->th, NULL, qr__pool_main, w) != 0) break;
        qr__pool_pool.n_workers++;
    }
    qr__pool_pool.n_threads = qr__pool_pool.n_workers + 1;
    return QR_OK;
}

static int qr_pool_threads(void) {
    if (qr__pool_pool.n_threads == 0 && qr_pool_init(0) != QR_OK) {
        qr_err_clear();
        qr_pool_init(1);
    }
    return qr__pool_pool.n_threads;
}

/* qr_pool_for with nseg segments (1: one queue in index order). */
static void qr__pool_for(int64_t n_tasks, QrPoolFn fn, void *ctx, int nseg) {
    if (n_tasks <= 0) return;
    QrPoolJob j;
    qr__pool_job_init(&j, n_tasks, nseg, fn, ctx);
    /* workers publish, and one non-worker thread at a time (busy's holder, nested calls too);
     * another non-worker thread runs its tasks serially, nested calls included */
    bool took = false;
    if (n_tasks > 1 && qr__pool_tid == 0 && !qr__pool_owner && qr_pool_threads() > 1)
        took = qr__pool_owner = pthread_mutex_trylock(&qr__pool_pool.busy) == 0;
    if (n_tasks == 1 || qr_pool_threads() == 1 || (qr__pool_tid == 0 && !qr__pool_owner)) {
        qr__pool_drain(&j);
        return;
    }
    pthread_mutex_lock(&qr__pool_pool.mu);
    j.up = qr__pool_pool.jobs;
    qr__pool_pool.jobs = &j;
    atomic_fetch_add_explicit(&qr__pool_pool.gen, 1, memory_order_release);
    pthread_cond_broadcast(&qr__pool_pool.cv);
    pthread_mutex_unlock(&qr__pool_pool.mu);
    qr__pool_drain(&j);
    pthread_mutex_lock(&qr__pool_pool.mu);
    QrPoolJob **p = &qr__pool_pool.jobs;   /* no new joiners; wait for those inside */
    while (*p != &j) p = &(*p)->up;
    *p = j.up;
    pthread_mutex_unlock(&qr__pool_pool.mu);
    qr__pool_wait(&j);
    if (took) {
        qr__pool_owner = false;
        pthread_mutex_unlock(&qr__pool_pool.busy);
    }
}

static void qr_pool_for(int64_t n_tasks, QrPoolFn fn, void *ctx) { qr__pool_for(n_tasks, fn, ctx, qr_pool_threads()); }

static void qr_pool_for_queue(int64_t n_tasks, QrPoolFn fn, void *ctx) { qr__pool_for(n_tasks, fn, ctx, 1); }

typedef struct QrPoolCopy { char *dst; const char *src; size_t n; } QrPoolCopy;

enum { QR__POOL_COPY_TASK = 64 << 10, QR__POOL_COPY_MIN = 256 << 10 };

static void qr__pool_copy_task(void *ctx, int64_t t, int tid) {
    QR_UNUSED(tid);
    const QrPoolCopy *c = ctx;
    const size_t o = (size_t)t * QR__POOL_COPY_TASK;
    memcpy(c->dst + o, c->src + o, QR_MIN((size_t)QR__POOL_COPY_TASK, c->n - o));
}

static void qr_pool_memcpy(void *dst, const void *src, size_t n) {
    if (n < QR__POOL_COPY_MIN || qr_pool_threads() < 2) {
        if (n) memcpy(dst, src, n);
        return;
    }
    QrPoolCopy c = { dst, src, n };
    qr_pool_for((int64_t)((n + QR__POOL_COPY_TASK - 1) / QR__POOL_COPY_TASK), qr__pool_copy_task, &c);
}
