/* base/pool — a pthread pool with one operation, a parallel-for whose caller works too.
 * Results are identical for any thread count because a task's work depends only on its
 * index; the thread id exists for per-thread scratch. Size: QR_THREADS or online CPUs. */
#ifndef QR_POOL_H
#define QR_POOL_H

#define QR_POOL_MAX_THREADS 64

/* Runs task `task` of a parallel-for. `tid` in [0, qr_pool_threads()) names the thread
 * running it (0 = the caller) and may only select per-thread scratch: whatever a task
 * writes must depend on `task` alone, never on `tid` or on the order tasks run in. */
typedef void (*QrPoolFn)(void *ctx, int64_t task, int tid);

/* Sets the thread count (caller included): n > 0 is used as given (capped at
 * QR_POOL_MAX_THREADS); n <= 0 takes QR_THREADS from the environment, else the online
 * CPUs. Restarts the workers if the pool already ran with another count. Not thread-safe
 * against a concurrent qr_pool_for. Fails only if the count is invalid (QR_THREADS not a
 * number); when threads cannot be created the pool runs with those it has (maybe 1). */
static QrStatus qr_pool_init(int n_threads);
/* Threads a qr_pool_for uses (starts the pool with the default count if needed). */
static int qr_pool_threads(void);
/* Runs fn(ctx, t, tid) for every t in [0, n_tasks) and returns when all are done. Tasks
 * are handed out in index order from a shared counter (dynamic balance). Called from
 * inside a task, or while another thread's parallel-for is running, it runs the tasks
 * serially on the calling thread (tid 0): nesting is safe but not parallel. */
static void qr_pool_for(int64_t n_tasks, QrPoolFn fn, void *ctx);
/* Stops and joins the workers; the next qr_pool_for starts them again. */
static void qr_pool_shutdown(void);

#endif
