/* base/pool — a pthread pool with one operation, a parallel-for whose caller works too.
 * Results are identical for any thread count because a task's work depends only on its
 * index; the thread id exists for per-thread scratch. Size: QR_THREADS or online CPUs. */
#ifndef QR_POOL_H
#define QR_POOL_H

#define QR_POOL_MAX_THREADS 64

/* Runs task `task` of a parallel-for. `tid` in [0, qr_pool_threads()) names the thread
 * running it (worker k is k, any other thread 0; two tasks of one parallel-for that run at
 * the same time have different tids) and may only select per-thread scratch: whatever a task
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
 * are handed out in index order from one segment of consecutive tasks per thread, thread k's
 * segment k first, then the others' (dynamic balance; number tasks in the order of the data
 * they write, so that consecutive jobs give a thread the same share). Nesting is
 * parallel: a parallel-for called from inside a task is published like any other, and an
 * idle worker, or a caller that has run out of its own tasks and waits for the threads still
 * running them, takes tasks of it. A waiting caller takes tasks only of jobs nested deeper than
 * the one it waits for (never a sibling of a task it is inside: per-thread state of an outer
 * job stays with one task at a time), and runs them at the next scratch level (below). One thread
 * that is not a worker publishes at a time: a call from another one, while that thread's
 * parallel-for runs, runs its tasks serially on the calling thread, the calls nested in them
 * too. */
static void qr_pool_for(int64_t n_tasks, QrPoolFn fn, void *ctx);
/* qr_pool_for with the tasks handed out in index order from one queue, whichever thread asks:
 * for jobs whose tasks are whole model runs (qr_session_jobs), in the order their caller chose,
 * where what a thread wrote before does not matter. */
static void qr_pool_for_queue(int64_t n_tasks, QrPoolFn fn, void *ctx);
/* Per-thread scratch levels: a caller that waits for its job's helpers may run other jobs'
 * tasks meanwhile, while those helpers still read the scratch it lent them (a GEMM's packed
 * panels). Per-thread scratch that kernel tasks or the calls in them take must be indexed by
 * qr_pool_scratch_level() in [0, QR_POOL_SCRATCH_LEVELS): the level rises by one while the
 * thread runs tasks as a waiting caller (it stops helping at the last level). Whole model runs
 * (tasks that run operators, whose per-thread buffers are not levelled) are never published
 * from inside a kernel's task, so a waiting caller never runs one over its own. */
#define QR_POOL_SCRATCH_LEVELS 4
static int qr_pool_scratch_level(void);
/* memcpy(dst, src, n), split over the pool from 256 KB on (64 KB a task): the bytes do not
 * depend on it. For copies a caller makes while the other threads wait, e.g. a model run's tap
 * keeping a value. */
static void qr_pool_memcpy(void *dst, const void *src, size_t n);
/* Stops and joins the workers; the next qr_pool_for starts them again. */
static void qr_pool_shutdown(void);

#endif
