/* base/pool — implementation. See pool.h.
 * One job at a time. The caller publishes a job record (on its stack) under the mutex,
 * bumps the generation and wakes the workers; a worker that sees the new generation while
 * the job is still published joins it (counted in the record) and claims task indices
 * from the record's atomic counter. When the caller runs out of tasks it unpublishes the
 * job and waits only for the workers that joined: a worker the OS has not scheduled yet
 * (the machine may be shared) never holds the caller up, it just finds no job. Waiting
 * spins briefly before it sleeps on a condition variable (kernels follow each other
 * closely). */

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define QR__POOL_SPIN 5000    /* pause iterations before sleeping (~100-250 us on x86: PAUSE is 20-50 ns); measured
                                 * against 500 (2 threads, int mode): MobileNetV2 1.13x -> 1.10x ORT, ResNet-18
                                 * 0.98x -> 0.91x, float unchanged — the worker is still awake for the next layer */

typedef struct QrPoolJob {
    QrPoolFn fn;
    void *ctx;
    int64_t n_tasks;
    _Alignas(64) _Atomic int64_t next;   /* next task index to claim */
    _Alignas(64) _Atomic int active;     /* workers inside the job */
} QrPoolJob;

/* Per-worker state, one cache line each. */
typedef struct QrPoolWorker {
    _Alignas(64) pthread_t th;
    int tid;
} QrPoolWorker;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    pthread_mutex_t busy;            /* held by the thread whose job is running */
    int n_threads;                   /* caller included; 0 = not initialised */
    int n_workers;                   /* workers actually started */
    QrPoolWorker workers[QR_POOL_MAX_THREADS];
    QrPoolJob *job;                  /* the published job (under mu), NULL when none */
    bool stop;
    _Alignas(64) _Atomic uint64_t gen;
} qr__pool_pool = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv_work = PTHREAD_COND_INITIALIZER,
               .cv_done = PTHREAD_COND_INITIALIZER, .busy = PTHREAD_MUTEX_INITIALIZER };

static _Thread_local bool qr__pool_inside;   /* this thread is running pool tasks */

static inline void qr__pool_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static void qr__pool_drain(QrPoolJob *j, int tid) {
    for (;;) {
        int64_t t = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (t >= j->n_tasks) break;
        j->fn(j->ctx, t, tid);
    }
}

static void *qr__pool_main(void *arg) {
    QrPoolWorker *w = arg;
    qr__pool_inside = true;
    uint64_t seen = 0;
    for (;;) {
        for (int i = 0; atomic_load_explicit(&qr__pool_pool.gen, memory_order_acquire) == seen && i < QR__POOL_SPIN; i++)
            qr__pool_pause();
        pthread_mutex_lock(&qr__pool_pool.mu);
        while (atomic_load_explicit(&qr__pool_pool.gen, memory_order_relaxed) == seen && !qr__pool_pool.stop)
            pthread_cond_wait(&qr__pool_pool.cv_work, &qr__pool_pool.mu);
        if (qr__pool_pool.stop) { pthread_mutex_unlock(&qr__pool_pool.mu); return NULL; }
        seen = atomic_load_explicit(&qr__pool_pool.gen, memory_order_relaxed);
        QrPoolJob *j = qr__pool_pool.job;
        if (j) atomic_fetch_add_explicit(&j->active, 1, memory_order_relaxed);
        pthread_mutex_unlock(&qr__pool_pool.mu);
        if (!j) continue;
        qr__pool_drain(j, w->tid);
        /* j may be gone as soon as active drops to 0: touch only the pool afterwards */
        if (atomic_fetch_sub_explicit(&j->active, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&qr__pool_pool.mu);
            pthread_cond_broadcast(&qr__pool_pool.cv_done);
            pthread_mutex_unlock(&qr__pool_pool.mu);
        }
    }
}

static void qr_pool_shutdown(void) {
    if (qr__pool_pool.n_threads == 0) return;
    pthread_mutex_lock(&qr__pool_pool.mu);
    qr__pool_pool.stop = true;
    pthread_cond_broadcast(&qr__pool_pool.cv_work);
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

static void qr_pool_for(int64_t n_tasks, QrPoolFn fn, void *ctx) {
    if (n_tasks <= 0) return;
    bool serial = n_tasks == 1 || qr__pool_inside || qr_pool_threads() == 1 ||
                  pthread_mutex_trylock(&qr__pool_pool.busy) != 0;
    if (serial) {
        for (int64_t t = 0; t < n_tasks; t++) fn(ctx, t, 0);
        return;
    }
    QrPoolJob j = { .fn = fn, .ctx = ctx, .n_tasks = n_tasks };
    atomic_init(&j.next, 0);
    atomic_init(&j.active, 0);
    pthread_mutex_lock(&qr__pool_pool.mu);
    qr__pool_pool.job = &j;
    atomic_fetch_add_explicit(&qr__pool_pool.gen, 1, memory_order_release);
    pthread_cond_broadcast(&qr__pool_pool.cv_work);
    pthread_mutex_unlock(&qr__pool_pool.mu);
    qr__pool_inside = true;
    qr__pool_drain(&j, 0);
    qr__pool_inside = false;
    pthread_mutex_lock(&qr__pool_pool.mu);
    qr__pool_pool.job = NULL;   /* no new joiners; wait for those inside */
    pthread_mutex_unlock(&qr__pool_pool.mu);
    for (int i = 0; atomic_load_explicit(&j.active, memory_order_acquire) > 0 && i < QR__POOL_SPIN; i++)
        qr__pool_pause();
    pthread_mutex_lock(&qr__pool_pool.mu);
    while (atomic_load_explicit(&j.active, memory_order_acquire) > 0) pthread_cond_wait(&qr__pool_pool.cv_done, &qr__pool_pool.mu);
    pthread_mutex_unlock(&qr__pool_pool.mu);
    pthread_mutex_unlock(&qr__pool_pool.busy);
}
