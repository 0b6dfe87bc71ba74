/* base — implementation. See base.h. */

#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include <signal.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/mman.h>

/* ==== errors ============================================================== */

static _Thread_local char qr__base_errbuf[2048];

static QrStatus qr_errf(QrStatus st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(qr__base_errbuf, sizeof qr__base_errbuf, fmt, ap);
    va_end(ap);
    return st;
}

static QrStatus qr_err_wrap(QrStatus st, const char *fmt, ...) {
    char ctx[1024], old[sizeof qr__base_errbuf];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    memcpy(old, qr__base_errbuf, sizeof old);
    size_t n = strlen(ctx);
    if (n > sizeof qr__base_errbuf - 3) n = sizeof qr__base_errbuf - 3;
    memcpy(qr__base_errbuf, ctx, n);
    memcpy(qr__base_errbuf + n, ": ", 2);
    size_t room = sizeof qr__base_errbuf - n - 3, m = strlen(old);
    if (m > room) m = room;
    memcpy(qr__base_errbuf + n + 2, old, m);
    qr__base_errbuf[n + 2 + m] = 0;
    return st;
}

static const char *qr_err_msg(void) { return qr__base_errbuf[0] ? qr__base_errbuf : "unknown error"; }
static void qr_err_clear(void) { qr__base_errbuf[0] = 0; }

#ifdef QR_TESTING
QR_TESTAPI const char *qr_status_name(QrStatus st) {
    switch (st) {
    case QR_OK: return "ok";
    case QR_ERR_IO: return "I/O error";
    case QR_ERR_PARSE: return "parse error";
    case QR_ERR_INVALID: return "invalid";
    case QR_ERR_UNSUPPORTED: return "unsupported";
    case QR_ERR_NOMEM: return "out of memory";
    case QR_ERR_SHAPE: return "shape error";
    case QR_ERR_NUMERIC: return "numeric error";
    case QR_ERR_DYNAMIC: return "data-dependent shape";
    }
    return "error";
}
#endif

/* ==== arenas ============================================================== */

#define QR_ARENA_BLOCK (1u << 20)

/* ==== large blocks ========================================================
 * Buffers of QR__BLK_MIN bytes or more (values, packed weights, decoded initializers, copies)
 * are mapped by qreport itself and, when freed, kept for the next request of about their size: a
 * model's buffers come in the same sizes run after run and analysis after analysis, and a kept
 * block is used again without its pages being faulted in and zeroed by the kernel again (a runall
 * of ResNet-18: 175k page faults -> 127k; issue 30). Bounded: what is mapped
 * never exceeds the peak of the blocks in use so far. A request no kept block fits (one of at
 * least its size and at most twice it) first unmaps kept blocks, the longest kept first, of at
 * least its size; a kept block used for a smaller request unmaps its tail, so a block in use maps
 * its request rounded up to pages and no more. Arenas' blocks, used in part, come from the heap
 * (qr__heap_aligned_alloc). qr_blk_keep(false) keeps none (--max-memory: the
 * memory estimate counts the blocks in use). Under AddressSanitizer every buffer comes from the
 * heap, where ASan watches it. Blocks are known by address (a hash set): qr_aligned_free also
 * frees heap pointers (qr_file_read's buffers, small buffers) with free(). */

#if defined(__SANITIZE_ADDRESS__)
#define QR__BLK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QR__BLK_ASAN 1
#endif
#endif
#ifndef QR__BLK_ASAN
#define QR__BLK_ASAN 0
#endif

#define QR__BLK_MIN ((size_t)64 << 10)
/* The page size blocks are mapped, reused and trimmed in (4 KiB on x86-64; 4, 16 or 64 KiB on aarch64). */
static _Atomic size_t qr__blk_pagesz;   /* 0 until first asked */

static size_t qr__blk_page(void) {
    size_t p = qr__blk_pagesz;
    if (!p) {
        long v = sysconf(_SC_PAGESIZE);
        qr__blk_pagesz = p = v > 0 ? (size_t)v : 4096;
    }
    return p;
}
#define QR__BLK_PAGE qr__blk_page()

typedef struct QrBlkSlot { uintptr_t p; size_t cap; } QrBlkSlot;   /* p: 0 empty, 1 deleted */

static struct {
    pthread_mutex_t mu;
    QrBlkSlot *set;          /* every mapped block, in use or kept: open addressing, n_set of cap_set */
    size_t n_set, used_set, cap_set;
    QrBlkSlot *kept;         /* the kept blocks, longest kept first */
    int n_kept, cap_kept;
    size_t kept_bytes;
    size_t mapped;           /* bytes of every block in the set */
    bool keep_none;          /* qr_blk_keep(false) */
} qr__blk = { .mu = PTHREAD_MUTEX_INITIALIZER };

static size_t qr__blk_hash(uintptr_t p, size_t cap) { return (size_t)((p >> 12) * 0x9E3779B97F4A7C15ull) & (cap - 1); }

/* Slot of block p in the set (NULL: not a block). Under qr__blk.mu. */
static QrBlkSlot *qr__blk_find(uintptr_t p) {
    if (!qr__blk.cap_set) return NULL;
    for (size_t i = qr__blk_hash(p, qr__blk.cap_set), k = 0; k < qr__blk.cap_set; k++, i = (i + 1) & (qr__blk.cap_set - 1)) {
        if (qr__blk.set[i].p == p) return &qr__blk.set[i];
        if (!qr__blk.set[i].p) return NULL;
    }
    return NULL;
}

/* Adds block p to the set (false: out of memory). Under qr__blk.mu. */
static bool qr__blk_add(uintptr_t p, size_t cap) {
    if (2 * (qr__blk.used_set + 1) > qr__blk.cap_set) {   /* grow (and drop deleted slots) at half full */
        size_t nc = qr__blk.cap_set ? qr__blk.cap_set : 256;
        while (2 * (qr__blk.n_set + 1) > nc / 2) nc *= 2;
        QrBlkSlot *ns = calloc(nc, sizeof *ns);
        if (!ns) return false;
        for (size_t i = 0; i < qr__blk.cap_set; i++) {
            uintptr_t q = qr__blk.set[i].p;
            if (q <= 1) continue;
            size_t j = qr__blk_hash(q, nc);
            while (ns[j].p) j = (j + 1) & (nc - 1);
            ns[j] = qr__blk.set[i];
        }
        free(qr__blk.set);
        qr__blk.set = ns;
        qr__blk.cap_set = nc;
        qr__blk.used_set = qr__blk.n_set;
    }
    size_t j = qr__blk_hash(p, qr__blk.cap_set);
    while (qr__blk.set[j].p > 1) j = (j + 1) & (qr__blk.cap_set - 1);
    if (!qr__blk.set[j].p) qr__blk.used_set++;
    qr__blk.set[j] = (QrBlkSlot){ p, cap };
    qr__blk.n_set++;
    qr__blk.mapped += cap;
    return true;
}

static void qr__blk_unmap(uintptr_t p, size_t cap) { munmap((void *)p, cap); }

/* A block of exactly `cap` bytes (a multiple of the page), kept or newly mapped; NULL when out of memory. */
static void *qr__blk_get(size_t cap) {
    QrBlkSlot trim = {0};
    uintptr_t got = 0;
    pthread_mutex_lock(&qr__blk.mu);
    int best = -1;
    for (int i = 0; i < qr__blk.n_kept; i++) {
        size_t c = qr__blk.kept[i].cap;
        if (c >= cap && c / 2 <= cap && (best < 0 || c < qr__blk.kept[best].cap)) best = i;
    }
    if (best >= 0) {
        QrBlkSlot k = qr__blk.kept[best];
        memmove(&qr__blk.kept[best], &qr__blk.kept[best + 1], (size_t)(qr__blk.n_kept - best - 1) * sizeof k);
        qr__blk.n_kept--;
        qr__blk.kept_bytes -= k.cap;
        if (k.cap > cap) {
            qr__blk_find(k.p)->cap = cap;
            qr__blk.mapped -= k.cap - cap;
            trim = (QrBlkSlot){ k.p + cap, k.cap - cap };
        }
        got = k.p;
    } else {
        size_t freed = 0;       /* the longest kept first, until the request's size is given back */
        int n_ev = 0;
        for (; freed < cap && n_ev < qr__blk.n_kept; n_ev++) {
            const QrBlkSlot e = qr__blk.kept[n_ev];
            qr__blk_find(e.p)->p = 1;
            qr__blk.n_set--;
            qr__blk.mapped -= e.cap;
            freed += e.cap;
            qr__blk_unmap(e.p, e.cap);   /* under the lock: a miss that gives memory back is rare */
        }
        memmove(&qr__blk.kept[0], &qr__blk.kept[n_ev], (size_t)(qr__blk.n_kept - n_ev) * sizeof trim);
        qr__blk.n_kept -= n_ev;
        qr__blk.kept_bytes -= freed;
    }
    pthread_mutex_unlock(&qr__blk.mu);
    if (trim.p) qr__blk_unmap(trim.p, trim.cap);
    if (got) {
#ifdef QR_TESTING
        memset((void *)got, 0xa5, cap);     /* tests: a kept block's old contents never pass for zeros */
#endif
        return (void *)got;
    }
    void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    pthread_mutex_lock(&qr__blk.mu);
    bool ok = qr__blk_add((uintptr_t)p, cap);
    pthread_mutex_unlock(&qr__blk.mu);
    if (!ok) { munmap(p, cap); return NULL; }
#ifdef QR_TESTING
    memset(p, 0xa5, cap);                   /* nor do fresh pages' zeros */
#endif
    return p;
}

/* Frees p if it is a block (kept, or unmapped when none may be kept); false: p is not a block. */
static bool qr__blk_put(void *p) {
    uintptr_t u = (uintptr_t)p;
    pthread_mutex_lock(&qr__blk.mu);
    QrBlkSlot *s = qr__blk_find(u);
    if (!s) { pthread_mutex_unlock(&qr__blk.mu); return false; }
    QrBlkSlot b = *s;
    bool keep = !qr__blk.keep_none;
    if (keep && qr__blk.n_kept == qr__blk.cap_kept) {
        int nc = qr__blk.cap_kept ? 2 * qr__blk.cap_kept : 64;
        QrBlkSlot *nk = realloc(qr__blk.kept, (size_t)nc * sizeof *nk);
        if (nk) { qr__blk.kept = nk; qr__blk.cap_kept = nc; }
        else keep = false;
    }
    if (keep) {
        qr__blk.kept[qr__blk.n_kept++] = b;
        qr__blk.kept_bytes += b.cap;
    } else {
        s->p = 1;
        qr__blk.n_set--;
        qr__blk.mapped -= b.cap;
    }
    pthread_mutex_unlock(&qr__blk.mu);
    if (!keep) qr__blk_unmap(b.p, b.cap);
    return true;
}

/* keep: freed blocks are kept for reuse (the default); false unmaps the kept ones and keeps none. */
static void qr_blk_keep(bool keep) {
    pthread_mutex_lock(&qr__blk.mu);
    qr__blk.keep_none = !keep;
    QrBlkSlot *k = qr__blk.kept;
    int n = keep ? 0 : qr__blk.n_kept;
    if (!keep) {
        for (int i = 0; i < n; i++) { qr__blk_find(k[i].p)->p = 1; qr__blk.n_set--; qr__blk.mapped -= k[i].cap; }
        qr__blk.kept = NULL;
        qr__blk.n_kept = qr__blk.cap_kept = 0;
        qr__blk.kept_bytes = 0;
    }
    pthread_mutex_unlock(&qr__blk.mu);
    for (int i = 0; i < n; i++) qr__blk_unmap(k[i].p, k[i].cap);
    if (!keep) free(k);
}

#ifdef QR_TESTING
/* Tests: the bytes of the kept blocks and of every block (kept or in use). */
QR_TESTAPI void qr_blk_bytes(size_t *kept, size_t *mapped) {
    pthread_mutex_lock(&qr__blk.mu);
    *kept = qr__blk.kept_bytes;
    *mapped = qr__blk.mapped;
    pthread_mutex_unlock(&qr__blk.mu);
}
#endif

/* Whether a request of `padded` bytes is a block, and the bytes it then maps (its pages). */
static bool qr__blk_is(size_t padded) { return !QR__BLK_ASAN && padded >= QR__BLK_MIN; }
static size_t qr__blk_bytes(size_t padded) { return (padded + QR__BLK_PAGE - 1) & ~(QR__BLK_PAGE - 1); }

/* 64-byte aligned heap memory with QR_ALIGN bytes of readable padding, never a block: for buffers
 * used in part (an arena's blocks: a kept block would bring its previous user's pages, resident, under
 * a few bytes of use — MobileNetV2's runall --data peaked 10 MB higher) and for buffers callers free
 * with free() (qr_file_read's). */
static void *qr__heap_aligned_alloc(size_t size) {
    void *p = NULL;
    if (size > SIZE_MAX - 2 * QR_ALIGN) return NULL;
    return posix_memalign(&p, QR_ALIGN, (size + 2 * QR_ALIGN - 1) & ~(size_t)(QR_ALIGN - 1)) ? NULL : p;
}

static void *qr_aligned_alloc(size_t size) {
    if (size > SIZE_MAX - 2 * QR__BLK_PAGE) return NULL;
    size_t padded = (size + 2 * QR_ALIGN - 1) & ~(size_t)(QR_ALIGN - 1);
    return qr__blk_is(padded) ? qr__blk_get(qr__blk_bytes(padded)) : qr__heap_aligned_alloc(size);
}

static void qr_aligned_free(void *p) {
    if (p && !QR__BLK_ASAN && qr__blk_put(p)) return;
    free(p);
}

static void *qr_arena_alloc(QrArena *a, size_t size) {
    if (size > SIZE_MAX / 2) return NULL;
    size = (size + QR_ALIGN - 1) & ~(size_t)(QR_ALIGN - 1);
    if (size == 0) size = QR_ALIGN;
    if (a->limit && a->total + size > a->limit) return NULL;
    QrArenaBlock *b = a->cur;
    if (!b || b->used + size > b->cap) {
        size_t cap = size > QR_ARENA_BLOCK ? size : QR_ARENA_BLOCK;
        QrArenaBlock *nb = malloc(sizeof *nb);
        if (!nb) return NULL;
        nb->data = qr__heap_aligned_alloc(cap);    /* used in part: not a block (qr__heap_aligned_alloc) */
        if (!nb->data) { free(nb); return NULL; }
        nb->cap = cap;
        nb->used = 0;
        nb->prev = b;
        a->cur = b = nb;
    }
    void *p = b->data + b->used;
    b->used += size;
    a->total += size;
    memset(p, 0, size);
    return p;
}

static void *qr_arena_array(QrArena *a, size_t count, size_t elem) {
    size_t n;
    if (__builtin_mul_overflow(count, elem, &n)) return NULL;
    return qr_arena_alloc(a, n);
}

static char *qr_arena_strndup(QrArena *a, const char *s, size_t n) {
    char *d = qr_arena_alloc(a, n + 1);
    if (d) { memcpy(d, s, n); d[n] = 0; }
    return d;
}

static char *qr_arena_strdup(QrArena *a, const char *s) { return qr_arena_strndup(a, s, strlen(s)); }

static char *qr_arena_printf(QrArena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *d = n >= 0 ? qr_arena_alloc(a, (size_t)n + 1) : NULL;
    if (d) vsnprintf(d, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return d;
}

static QrArenaMark qr_arena_mark(QrArena *a) {
    QrArenaMark m = { a->cur, a->cur ? a->cur->used : 0, a->total };
    return m;
}

static void qr_arena_reset(QrArena *a, QrArenaMark m) {
    while (a->cur && a->cur != m.block) {
        QrArenaBlock *prev = a->cur->prev;
        qr_aligned_free(a->cur->data);
        free(a->cur);
        a->cur = prev;
    }
    if (a->cur) a->cur->used = m.used;
    a->total = m.total;
}

static void qr_arena_clear(QrArena *a) {
    while (a->cur && a->cur->prev) {
        QrArenaBlock *prev = a->cur->prev;
        qr_aligned_free(a->cur->data);
        free(a->cur);
        a->cur = prev;
    }
    if (a->cur) a->cur->used = 0;
    a->total = 0;
}

static void qr_arena_free(QrArena *a) {
    QrArenaMark zero = { NULL, 0, 0 };
    qr_arena_reset(a, zero);
}

/* ==== string map ============================================================ */

static uint64_t qr_hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;                 /* FNV-1a */
    while (*s) { h ^= (unsigned char)*s++; h *= 1099511628211ull; }
    return h;
}

static QrStatus qr_strmap_init(QrStrMap *m, QrArena *a, uint32_t expected) {
    uint32_t cap = 16;
    while (cap < expected * 2 + 2) {
        if (cap > (1u << 30)) return qr_errf(QR_ERR_NOMEM, "name table too large (%u names)", expected);
        cap <<= 1;
    }
    m->keys = qr_arena_array(a, cap, sizeof *m->keys);
    m->vals = qr_arena_array(a, cap, sizeof *m->vals);
    if (!m->keys || !m->vals) return qr_errf(QR_ERR_NOMEM, "out of memory for name table");
    m->cap = cap;
    m->count = 0;
    return QR_OK;
}

static int qr_strmap_get(const QrStrMap *m, const char *key) {
    if (!m->cap) return -1;
    uint32_t i = (uint32_t)qr_hash_str(key) & (m->cap - 1);
    while (m->keys[i]) {
        if (strcmp(m->keys[i], key) == 0) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}

static QrStatus qr_strmap_put(QrStrMap *m, QrArena *a, const char *key, int val) {
    if ((m->count + 1) * 2 > m->cap) {
        QrStrMap bigger;
        QR_TRY(qr_strmap_init(&bigger, a, m->count + 1));
        for (uint32_t i = 0; i < m->cap; i++)
            if (m->keys[i]) QR_TRY(qr_strmap_put(&bigger, a, m->keys[i], m->vals[i]));
        *m = bigger;
    }
    uint32_t i = (uint32_t)qr_hash_str(key) & (m->cap - 1);
    while (m->keys[i]) {
        if (strcmp(m->keys[i], key) == 0) { m->vals[i] = val; return QR_OK; }
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return QR_OK;
}

/* ==== files ================================================================= */

/* A file name for a value/node name: characters outside [A-Za-z0-9._-] become '_'
 * (a leading '.' too, so no hidden or relative names). */
static void qr_safe_filename(char *dst, size_t n, const char *name) {
    size_t i = 0;
    for (; name[i] && i + 1 < n; i++) {
        char ch = name[i];
        dst[i] = (isalnum((unsigned char)ch) || ch == '.' || ch == '_' || ch == '-') ? ch : '_';
    }
    dst[i] = 0;
    if (i == 0 || dst[0] == '.') dst[0] = '_';
}


static QrStatus qr_file_size(const char *path, uint64_t *size) {
    struct stat st;
    if (stat(path, &st) != 0) return qr_errf(QR_ERR_IO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return qr_errf(QR_ERR_IO, "%s: not a regular file", path);
    *size = (uint64_t)st.st_size;
    return QR_OK;
}

#ifdef QR_TESTING
QR_TESTAPI bool qr_file_map_unsupported;
#endif

static QrStatus qr_file_map(const char *path, size_t max_bytes, const unsigned char **out, size_t *out_len) {
    static const unsigned char empty[1];
#ifdef QR_TESTING
    if (qr_file_map_unsupported) return qr_errf(QR_ERR_UNSUPPORTED, "%s: cannot map (qr_file_map_unsupported)", path);
#endif
    QR__FILE_WATCH(path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return qr_errf(QR_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    QrStatus s = QR_OK;
    if (fstat(fd, &st) != 0) s = qr_errf(QR_ERR_IO, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode)) s = qr_errf(QR_ERR_IO, "%s: not a regular file", path);
    else if (max_bytes && (uint64_t)st.st_size > max_bytes)
        s = qr_errf(QR_ERR_NOMEM, "%s: file is %llu bytes, more than the limit of %zu", path,
                    (unsigned long long)st.st_size, max_bytes);
    else if ((uint64_t)st.st_size > SIZE_MAX / 2) s = qr_errf(QR_ERR_NOMEM, "%s: file too large", path);
    if (s != QR_OK) { close(fd); return s; }
    size_t n = (size_t)st.st_size;
    void *p = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : (void *)empty;
    int err = errno;
    close(fd);
    if (p == MAP_FAILED) return qr_errf(QR_ERR_UNSUPPORTED, "%s: cannot map: %s", path, strerror(err));
    *out = p;
    *out_len = n;
    return QR_OK;
}

static void qr_file_unmap(const unsigned char *p, size_t len) {
    if (p && len) munmap((void *)p, len);
}

static QrStatus qr_file_read(const char *path, size_t max_bytes, unsigned char **out, size_t *out_len) {
    uint64_t size;
    QR_TRY(qr_file_size(path, &size));
    if (max_bytes && size > max_bytes)
        return qr_errf(QR_ERR_NOMEM, "%s: file is %llu bytes, more than the limit of %zu",
                       path, (unsigned long long)size, max_bytes);
    if (size > SIZE_MAX - 2 * QR_ALIGN) return qr_errf(QR_ERR_NOMEM, "%s: file too large", path);
    unsigned char *buf = qr__heap_aligned_alloc((size_t)size + 1);   /* callers free() or realloc it */
    if (!buf) return qr_errf(QR_ERR_NOMEM, "%s: cannot allocate %llu bytes", path, (unsigned long long)size);
    QrStatus st = qr_file_read_range(path, 0, size, buf);
    if (st != QR_OK) { free(buf); return st; }
    buf[size] = 0;
    *out = buf;
    *out_len = (size_t)size;
    return QR_OK;
}

#ifdef QR_TESTING
QR_TESTAPI const char *qr_file_watch;
QR_TESTAPI int64_t qr_file_watch_opens;
#endif

static QrStatus qr_file_read_range(const char *path, uint64_t offset, uint64_t len, void *dst) {
    QR__FILE_WATCH(path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return qr_errf(QR_ERR_IO, "%s: %s", path, strerror(errno));
    unsigned char *p = dst;
    uint64_t done = 0;
    while (done < len) {
        size_t chunk = (size_t)QR_MIN(len - done, (uint64_t)1 << 30);
        ssize_t r = pread(fd, p + done, chunk, (off_t)(offset + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            close(fd);
            if (r == 0)
                return qr_errf(QR_ERR_IO, "%s: file ends at byte %llu, expected data up to byte %llu",
                               path, (unsigned long long)(offset + done), (unsigned long long)(offset + len));
            return qr_errf(QR_ERR_IO, "%s: %s", path, strerror(errno));
        }
        done += (uint64_t)r;
    }
    close(fd);
    return QR_OK;
}

static QrStatus qr_file_write_atomic(const char *path, const void *data, size_t len) {
    size_t n = strlen(path);
    char *tmp = malloc(n + 32);
    if (!tmp) return qr_errf(QR_ERR_NOMEM, "out of memory");
    snprintf(tmp, n + 32, "%s.tmp.%ld", path, (long)getpid());
    const int slot = qr_cleanup_add(tmp, false);     /* before it exists: removed on SIGINT/SIGTERM */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        QrStatus st = qr_errf(QR_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        qr_cleanup_drop(slot);
        free(tmp);
        return st;
    }
    const unsigned char *p = data;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            QrStatus st = qr_errf(QR_ERR_IO, "%s: write failed: %s", path, w < 0 ? strerror(errno) : "no space");
            close(fd); unlink(tmp); qr_cleanup_drop(slot); free(tmp);
            return st;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        QrStatus st = qr_errf(QR_ERR_IO, "%s: %s", path, strerror(errno));
        unlink(tmp); qr_cleanup_drop(slot); free(tmp);
        return st;
    }
    qr_cleanup_drop(slot);
    free(tmp);
    return QR_OK;
}

static QrStatus qr_mkdir_p(const char *path) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return qr_errf(QR_ERR_IO, "bad directory path '%s'", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return qr_errf(QR_ERR_IO, "%s: cannot create directory: %s", buf, strerror(errno));
            buf[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return qr_errf(QR_ERR_IO, "%s: not a directory", path);
    return QR_OK;
}

static char *qr_path_dirname(QrArena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return qr_arena_strdup(a, ".");
    if (slash == path) return qr_arena_strdup(a, "/");
    return qr_arena_strndup(a, path, (size_t)(slash - path));
}

/* ==== removal of temporaries on SIGINT / SIGTERM ============================== */

/* state: 0 free, 1 being filled or emptied, 2 armed (the handler removes it). */
static struct { int state; bool tree; char path[4096]; } qr__cleanup[QR_CLEANUP_SLOTS];
static pid_t qr__base_cleanup_tid;            /* the thread that installed the handler */

static int qr_cleanup_add(const char *path, bool tree) {
    size_t n = strlen(path);
    if (n >= sizeof qr__cleanup[0].path) return -1;
    for (int i = 0; i < QR_CLEANUP_SLOTS; i++) {
        int want = 0;
        if (!__atomic_compare_exchange_n(&qr__cleanup[i].state, &want, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            continue;
        memcpy(qr__cleanup[i].path, path, n + 1);
        qr__cleanup[i].tree = tree;
        __atomic_store_n(&qr__cleanup[i].state, 2, __ATOMIC_RELEASE);
        return i;
    }
    return -1;
}

static void qr_cleanup_drop(int slot) {
    if (slot >= 0 && slot < QR_CLEANUP_SLOTS) __atomic_store_n(&qr__cleanup[slot].state, 0, __ATOMIC_RELEASE);
}

/* Removes everything inside the open folder dfd (depth-first, at most `depth` levels),
 * with async-signal-safe system calls only. */
static void qr__base_cleanup_empty(int dfd, int depth) {
    char buf[4096] __attribute__((aligned(8)));
    for (bool removed = true; removed;) {              /* until a listing removes nothing */
        removed = false;
        if (lseek(dfd, 0, SEEK_SET) != 0) return;      /* entries removed: list again from the start */
        for (ssize_t n; (n = getdents64(dfd, buf, sizeof buf)) > 0;)
            for (ssize_t off = 0; off < n;) {
                struct dirent64 *e = (struct dirent64 *)(buf + off);
                off += e->d_reclen;
                const char *nm = e->d_name;
                if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2]))) continue;
                if (unlinkat(dfd, nm, 0) == 0) { removed = true; continue; }
                if (depth <= 0) continue;
                int sub = openat(dfd, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0) continue;
                qr__base_cleanup_empty(sub, depth - 1);
                close(sub);
                if (unlinkat(dfd, nm, AT_REMOVEDIR) == 0) removed = true;
            }
    }
}

static void qr__base_cleanup_handler(int sig) {
    const int saved = errno;
    if (qr__base_cleanup_tid && (pid_t)syscall(SYS_gettid) != qr__base_cleanup_tid) {
        syscall(SYS_tgkill, (pid_t)getpid(), qr__base_cleanup_tid, sig);   /* to the installing thread */
        errno = saved;
        return;
    }
    for (int i = 0; i < QR_CLEANUP_SLOTS; i++) {
        if (__atomic_load_n(&qr__cleanup[i].state, __ATOMIC_ACQUIRE) != 2) continue;
        if (qr__cleanup[i].tree) {
            int fd = open(qr__cleanup[i].path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0) {
                qr__base_cleanup_empty(fd, 8);
                close(fd);
            }
            rmdir(qr__cleanup[i].path);
        } else {
            unlink(qr__cleanup[i].path);
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

static void qr_cleanup_install(void) {
    qr__base_cleanup_tid = (pid_t)syscall(SYS_gettid);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = qr__base_cleanup_handler;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* ==== misc ================================================================== */

static double qr_time_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t qr_rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static float qr_rng_normal(uint64_t *s) {
    /* Box-Muller on two 53-bit uniforms in (0,1]. */
    double u1 = ((double)(qr_rng_next(s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    double u2 = (double)(qr_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* ==== CPU features ============================================================ */

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
static void qr_cpu_detect(QrCpu *cpu) {
    memset(cpu, 0, sizeof *cpu);
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
        cpu->fma = (c >> 12) & 1;
        uint64_t xcr0 = 0;
        if (osxsave) {
            unsigned lo, hi;
            __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
            xcr0 = ((uint64_t)hi << 32) | lo;
        }
        bool ymm = avx && (xcr0 & 6) == 6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
        if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
            cpu->avx2 = ymm && ((b >> 5) & 1);
            cpu->avx512f = zmm && ((b >> 16) & 1);
            cpu->avx512bw = zmm && ((b >> 30) & 1);
            cpu->avx512vl = zmm && ((b >> 31) & 1);
            cpu->avx512vnni = zmm && ((c >> 11) & 1);
            cpu->sha = (b >> 29) & 1;
        }
        cpu->fma = cpu->fma && ymm;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu->n_cpus = n > 0 ? (int)n : 1;
}
#else
static void qr_cpu_detect(QrCpu *cpu) {
    memset(cpu, 0, sizeof *cpu);
#if defined(__aarch64__)
    unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    cpu->neon = (hw >> 1) & 1;        /* HWCAP_ASIMD */
    cpu->dotprod = (hw >> 20) & 1;    /* HWCAP_ASIMDDP */
    cpu->i8mm = (hw2 >> 13) & 1;      /* HWCAP2_I8MM */
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu->n_cpus = n > 0 ? (int)n : 1;
}
#endif

static const char *qr_isa_name(QrIsa isa) {
    static const char *const names[] = { "ref", "avx2", "avx512", "vnni", "neon", "dot", "i8mm" };
    return (unsigned)isa < QR_ARRAY_LEN(names) ? names[isa] : "?";
}

/* ---- "did you mean" suggestions ----================================================================= */

/* Edit distance of a and b (insert, delete, substitute; case-insensitive), capped at cap + 1. */
static int qr__base_edit_dist(const char *a, const char *b, int cap) {
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (abs(la - lb) > cap) return cap + 1;
    if (lb > 255) return cap + 1;
    int prev[257], cur[257];
    for (int j = 0; j <= lb; j++) prev[j] = j;
    for (int i = 1; i <= la; i++) {
        cur[0] = i;
        int best = cur[0];
        for (int j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int v = QR_MIN(sub, QR_MIN(prev[j] + 1, cur[j - 1] + 1));
            cur[j] = v;
            best = QR_MIN(best, v);
        }
        if (best > cap) return cap + 1;
        memcpy(prev, cur, (size_t)(lb + 1) * sizeof(int));
    }
    return prev[lb];
}

static void qr_str_suggest(const char *name, const char *const *cands, int n, char *out, size_t cap) {
    out[0] = 0;
    int len = (int)strlen(name);
    int limit = QR_MAX(2, len / 3);
    const char *best[3] = { 0 };
    int bd[3] = { INT32_MAX, INT32_MAX, INT32_MAX };
    for (int k = 0; k < n; k++) {
        const char *c = cands[k];
        if (!c || !*c) continue;
        int d = qr__base_edit_dist(name, c, limit);
        /* a candidate that contains the name (or the other way round) is close too */
        if (d > limit && len >= 3 && (strstr(c, name) || strstr(name, c))) d = limit;
        if (d > limit) continue;
        bool dup = false;
        for (int j = 0; j < 3; j++) dup |= best[j] && !strcmp(best[j], c);
        if (dup) continue;
        for (int j = 0; j < 3; j++) {
            if (d < bd[j] || (d == bd[j] && best[j] && strcmp(c, best[j]) < 0)) {
                for (int m = 2; m > j; m--) { best[m] = best[m - 1]; bd[m] = bd[m - 1]; }
                best[j] = c;
                bd[j] = d;
                break;
            }
        }
    }
    if (!best[0]) return;
    size_t o = (size_t)snprintf(out, cap, " (did you mean ");
    for (int j = 0; j < 3 && best[j] && o < cap; j++)
        o += (size_t)snprintf(out + o, cap - o, "%s'%s'", j ? ", " : "", best[j]);
    if (o < cap) snprintf(out + o, cap - o, "?)");
}
