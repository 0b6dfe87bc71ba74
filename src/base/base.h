/* base — types, errors, arenas, strings, file I/O and CPU detection.
 * Everything else in qreport stands on this module; it depends only on libc.
 * Library code reports failure as a QrStatus plus a thread-local message. */
#ifndef QR_BASE_H
#define QR_BASE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>

#define QR_VERSION "0.1.0"
#ifndef QR_BUILD_FLAGS
#define QR_BUILD_FLAGS "unknown"
#endif

#define QR_ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define QR_MIN(a, b) ((a) < (b) ? (a) : (b))
#define QR_MAX(a, b) ((a) > (b) ? (a) : (b))
#define QR_ALIGN 64
#define QR_UNUSED(x) ((void)(x))
/* Test-only API. Every function is `static` in the unity build and -Wunused-function is
 * on, so a function the binary never calls does not compile silently. Functions only
 * tests/, fuzz/ and bench/ call sit in `#ifdef QR_TESTING` (declaration and definition)
 * and are declared QR_TESTAPI: external linkage there, so each test binary may use any
 * subset of them; the release binary does not contain them. qr_cli_main is QR_TESTAPI
 * too: the test binaries have no main of qreport's and run the CLI as a child process. */
#ifdef QR_TESTING
#define QR_TESTAPI
#else
#define QR_TESTAPI static
#endif

/* A progress hook for long loops in library code (which never prints): fn(ctx, done,
 * total) before each step and once at the end; total 0 = unknown. fn NULL = no hook. */
typedef struct QrStepHook {
    void (*fn)(void *ctx, int64_t done, int64_t total);
    void *ctx;
} QrStepHook;
static inline void qr_step(const QrStepHook *h, int64_t done, int64_t total) {
    if (h && h->fn) h->fn(h->ctx, done, total);
}

/* ---- errors ------------------------------------------------------------ */

typedef enum QrStatus {
    QR_OK = 0,
    QR_ERR_IO,          /* a file could not be opened, read or written */
    QR_ERR_PARSE,       /* malformed file contents */
    QR_ERR_INVALID,     /* well-formed but semantically invalid model/input */
    QR_ERR_UNSUPPORTED, /* valid but not implemented by qreport */
    QR_ERR_NOMEM,       /* allocation failed or a size limit was exceeded */
    QR_ERR_SHAPE,       /* shapes do not fit */
    QR_ERR_NUMERIC,     /* NaN/Inf where it is not allowed */
    QR_ERR_DYNAMIC,     /* a shape depends on values only known when the graph runs */
} QrStatus;

/* Sets the thread's error message (printf-style) and returns `st`. */
static QrStatus qr_errf(QrStatus st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepends "<context>: " to the current message; returns `st` unchanged. */
static QrStatus qr_err_wrap(QrStatus st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *qr_err_msg(void);
#ifdef QR_TESTING
QR_TESTAPI const char *qr_status_name(QrStatus st);
#endif
static void qr_err_clear(void);

#define QR_TRY(expr) do { QrStatus qr__st = (expr); if (qr__st != QR_OK) return qr__st; } while (0)

/* ---- arenas -------------------------------------------------------------- */

/* A chain of blocks; allocations are 64-byte aligned and zeroed. Freed all at
 * once with qr_arena_free, or back to a mark with qr_arena_reset. */
typedef struct QrArenaBlock {
    struct QrArenaBlock *prev;
    size_t cap, used;
    unsigned char *data;
} QrArenaBlock;

typedef struct QrArena {
    QrArenaBlock *cur;
    size_t total;        /* bytes handed out, for statistics */
    size_t limit;        /* 0 = unlimited; allocations beyond fail */
} QrArena;

typedef struct QrArenaMark { QrArenaBlock *block; size_t used; size_t total; } QrArenaMark;

static void *qr_arena_alloc(QrArena *a, size_t size);
static void *qr_arena_array(QrArena *a, size_t count, size_t elem); /* overflow-checked */
static char *qr_arena_strdup(QrArena *a, const char *s);
static char *qr_arena_strndup(QrArena *a, const char *s, size_t n);
static char *qr_arena_printf(QrArena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static QrArenaMark qr_arena_mark(QrArena *a);
static void qr_arena_reset(QrArena *a, QrArenaMark m);
static void qr_arena_free(QrArena *a);
/* Empties the arena but keeps its oldest block for reuse (per-node scratch). */
static void qr_arena_clear(QrArena *a);

/* 64-byte aligned memory with QR_ALIGN bytes of readable padding, not zeroed: from the heap, or
 * from 64 KiB on a block of pages kept for reuse when freed (base.c, "large blocks").
 * qr_aligned_free frees either, and heap pointers (as free()); only it frees a block. */
static void *qr_aligned_alloc(size_t size);
static void qr_aligned_free(void *p);
/* keep: freed blocks are kept for reuse (the default); false unmaps the kept ones and keeps none. */
static void qr_blk_keep(bool keep);

/* ---- checked arithmetic -------------------------------------------------- */

static inline bool qr_mul_overflow_i64(int64_t a, int64_t b, int64_t *out) {
    return __builtin_mul_overflow(a, b, out);
}

/* ---- string map (name -> int) ---------------------------------------------- */

typedef struct QrStrMap {
    const char **keys;
    int *vals;
    uint32_t cap, count;
} QrStrMap;

static QrStatus qr_strmap_init(QrStrMap *m, QrArena *a, uint32_t expected);
static int qr_strmap_get(const QrStrMap *m, const char *key);      /* -1 if absent */
static QrStatus qr_strmap_put(QrStrMap *m, QrArena *a, const char *key, int val);
static uint64_t qr_hash_str(const char *s);

/* ---- suggestions ---- */
/* " (did you mean 'a', 'b'?)" for the (at most 3) candidates closest to name by edit
 * distance, or "" when none is close; written to out (cap bytes). cands may hold NULLs. */
static void qr_str_suggest(const char *name, const char *const *cands, int n, char *out, size_t cap);

/* ---- files -------------------------------------------------------------- */
static void qr_safe_filename(char *dst, size_t n, const char *name);

/* Maps a whole regular file read-only (qr_file_unmap), its pages read in at once: a decoder reads
 * the page cache in place instead of a copy in a buffer. Same limits and messages as qr_file_read;
 * QR_ERR_UNSUPPORTED when the file system cannot map it (then read it, qr_file_read). (A file
 * truncated by another process while mapped would fault the reader: for inputs read once, right away.) */
static QrStatus qr_file_map(const char *path, size_t max_bytes, const unsigned char **out, size_t *out_len);
static void qr_file_unmap(const unsigned char *p, size_t len);

/* Reads a whole file into malloc'd memory (caller frees). Refuses files larger
 * than `max_bytes` (0 = no limit) with QR_ERR_NOMEM. */
static QrStatus qr_file_read(const char *path, size_t max_bytes, unsigned char **out, size_t *out_len);
/* Reads [offset, offset+len) of a file into dst. */
static QrStatus qr_file_read_range(const char *path, uint64_t offset, uint64_t len, void *dst);
static QrStatus qr_file_size(const char *path, uint64_t *size);
#ifdef QR_TESTING
/* Test-only, process-wide: the opens for reading of the file named qr_file_watch (qr_file_read_range,
 * base/sha256's qr_sha256_file; atomic) — how many times a command reads an input file. */
QR_TESTAPI extern const char *qr_file_watch;
QR_TESTAPI extern int64_t qr_file_watch_opens;
/* Test-only: qr_file_map fails as on a file system that cannot map (its callers then read). */
QR_TESTAPI extern bool qr_file_map_unsupported;
#define QR__FILE_WATCH(path) do { if (qr_file_watch && !strcmp(qr_file_watch, (path))) \
    __atomic_add_fetch(&qr_file_watch_opens, 1, __ATOMIC_RELAXED); } while (0)
#else
#define QR__FILE_WATCH(path) do { } while (0)
#endif
/* Writes a file atomically: temp file in the same folder, fsync, rename. */
static QrStatus qr_file_write_atomic(const char *path, const void *data, size_t len);
static QrStatus qr_mkdir_p(const char *path);
static char *qr_path_dirname(QrArena *a, const char *path);

/* ---- removal of temporaries on SIGINT / SIGTERM ------------------------------ */
/* Writers register what an interrupted run would leave behind (a temporary file, a
 * staging folder) for as long as it exists: qr_cleanup_add returns a slot (-1 when all
 * QR_CLEANUP_SLOTS are taken or the path is too long: then it is simply not removed on
 * a signal), qr_cleanup_drop(slot) unregisters it (slot -1: nothing). Thread-safe.
 * qr_cleanup_install (the CLI, once, before any thread) installs the handler: on
 * SIGINT/SIGTERM it removes every registered file and folder tree with
 * async-signal-safe calls only (open, getdents64, unlinkat, close), then dies of the
 * signal (exit status 128 + signal in a shell). A signal delivered to another thread
 * is forwarded to the installing thread, so the tree is removed while the thread that
 * writes into it is stopped. */
#define QR_CLEANUP_SLOTS 8
static int qr_cleanup_add(const char *path, bool tree);
static void qr_cleanup_drop(int slot);
static void qr_cleanup_install(void);

/* ---- misc ----------------------------------------------------------------- */

static double qr_time_now(void);   /* monotonic seconds */
static uint64_t qr_rng_next(uint64_t *state);          /* splitmix64 */
static float qr_rng_normal(uint64_t *state);           /* standard normal */

/* ---- CPU features ------------------------------------------------------------ */

typedef enum QrIsa { QR_ISA_REF = 0, QR_ISA_AVX2, QR_ISA_AVX512, QR_ISA_VNNI, QR_ISA_NEON, QR_ISA_DOT, QR_ISA_I8MM } QrIsa;
typedef struct QrCpu {
    bool avx2, fma, avx512f, avx512bw, avx512vl, avx512vnni, neon, dotprod, i8mm;
    bool sha;                /* x86 SHA extensions (base/sha256) */
    int n_cpus;
} QrCpu;
static void qr_cpu_detect(QrCpu *cpu);
static const char *qr_isa_name(QrIsa isa);

#endif
