/* report/zip — implementation. See zip.h. */

#include "minizip/zip.h"
#include <ftw.h>
#include <dirent.h>
#include <signal.h>

/* ==== fault injection (test builds only) ============================================ */

#ifdef QR_TESTING
static int qr__zip_fail_at;     /* 0: off; else the step number that fails */
static int qr__zip_steps;       /* steps taken since the hook was armed */
static int qr__zip_stop_at;     /* 0: off; else the step before which the process stops */

QR_TESTAPI void qr_zip_test_fail_write(int nth) { qr__zip_fail_at = nth; qr__zip_steps = 0; }
QR_TESTAPI void qr_zip_test_stop_at(int nth) { qr__zip_stop_at = nth; qr__zip_steps = 0; }
#endif

/* Counts one file-system write step; false (errno = EIO) when it is the injected failure
 * (always true outside test builds). */
static bool qr__zip_step(void) {
#ifndef QR_TESTING
    return true;
#else
    if (qr__zip_fail_at <= 0 && qr__zip_stop_at <= 0) return true;
    ++qr__zip_steps;
    if (qr__zip_steps == qr__zip_stop_at) raise(SIGSTOP);
    if (qr__zip_steps != qr__zip_fail_at) return true;
    errno = EIO;
    return false;
#endif
}

/* ==== the entry set ================================================================ */

static QrStatus qr_zip_init(QrZip *z) {
    memset(z, 0, sizeof *z);
    z->level = 6;
    z->pack_max = QR_ZIP_PACK_MAX;
    QR_TRY(qr_strmap_init(&z->by_name, &z->arena, 64));
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde && *sde) {
        char *end;
        errno = 0;
        long long v = strtoll(sde, &end, 10);
        if (*end || errno || v < 0 || !isdigit((unsigned char)sde[0]))
            return qr_errf(QR_ERR_INVALID, "SOURCE_DATE_EPOCH='%s' is not a number of seconds since 1970", sde);
        z->mtime = v;
    } else {
        z->mtime = (int64_t)time(NULL);
    }
    return QR_OK;
}

static void qr_zip_free(QrZip *z) {
    for (int i = 0; i < z->n; i++) free(z->entries[i].data);
    free(z->entries);
    qr_arena_free(&z->arena);
    memset(z, 0, sizeof *z);
}

static QrStatus qr__zip_check_name(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > 1024) return qr_errf(QR_ERR_INVALID, "bundle entry name '%.80s' is empty or too long", name);
    if (name[0] == '/') return qr_errf(QR_ERR_INVALID, "bundle entry name '%s' is absolute", name);
    for (const char *c = name; *c; c++)
        if (*c == '\\' || (unsigned char)*c < 0x20 || *c == 0x7f)
            return qr_errf(QR_ERR_INVALID, "bundle entry name '%s' has a backslash or control character", name);
    for (const char *seg = name;;) {
        const char *slash = strchr(seg, '/');
        size_t len = slash ? (size_t)(slash - seg) : strlen(seg);
        if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
            return qr_errf(QR_ERR_INVALID, "bundle entry name '%s' has an empty, '.' or '..' component", name);
        if (!slash) break;
        seg = slash + 1;
    }
    return QR_OK;
}

static QrZipMethod qr__zip_method_for(const char *name) {
    static const char *const stored[] = { ".png", ".jpg", ".jpeg", ".gif", ".webp", ".zip", ".gz", ".xz", ".zst", ".bz2" };
    size_t n = strlen(name);
    for (int i = 0; i < QR_ARRAY_LEN(stored); i++) {
        size_t k = strlen(stored[i]);
        if (n > k && !strcasecmp(name + n - k, stored[i])) return QR_ZIP_STORE;
    }
    if ((n > 4 && !strcasecmp(name + n - 4, ".npy")) || (n > 5 && !strcasecmp(name + n - 5, ".onnx"))) return QR_ZIP_DEFLATE_FAST;
    return QR_ZIP_DEFLATE;
}

/* The deflate level of entry e (0: stored). */
static int qr__zip_level(const QrZip *z, const QrZipEntry *e) {
    return e->method == QR_ZIP_STORE ? 0 : e->method == QR_ZIP_DEFLATE_FAST ? QR_MIN(1, z->level) : z->level;
}

/* Appends an entry; takes ownership of `data` (freed on failure). */
static QrStatus qr__zip_push(QrZip *z, const char *name, unsigned char *data, size_t len, const char *src_path) {
    QrStatus st = qr__zip_check_name(name);
    if (st == QR_OK && qr_strmap_get(&z->by_name, name) >= 0)
        st = qr_errf(QR_ERR_INVALID, "bundle entry '%s' added twice", name);
    if (st == QR_OK && z->n == z->cap) {
        int cap = z->cap ? z->cap * 2 : 32;
        QrZipEntry *ne = realloc(z->entries, (size_t)cap * sizeof *ne);
        if (!ne) st = qr_errf(QR_ERR_NOMEM, "out of memory adding '%s'", name);
        else { z->entries = ne; z->cap = cap; }
    }
    QrZipEntry e = { .data = data, .len = len, .method = qr__zip_method_for(name) };
    if (st == QR_OK) {
        e.name = qr_arena_strdup(&z->arena, name);
        e.src_path = src_path ? qr_arena_strdup(&z->arena, src_path) : NULL;
        if (!e.name || (src_path && !e.src_path)) st = qr_errf(QR_ERR_NOMEM, "out of memory adding '%s'", name);
    }
    if (st == QR_OK) st = qr_strmap_put(&z->by_name, &z->arena, e.name, z->n);
    if (st != QR_OK) { free(data); return st; }
    z->entries[z->n++] = e;
    return QR_OK;
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_zip_add(QrZip *z, const char *name, const void *data, size_t len) {
    unsigned char *copy = malloc(len ? len : 1);
    if (!copy) return qr_errf(QR_ERR_NOMEM, "out of memory adding '%s' (%zu bytes)", name, len);
    if (len) memcpy(copy, data, len);
    return qr__zip_push(z, name, copy, len, NULL);
}

QR_TESTAPI QrStatus qr_zip_add_owned(QrZip *z, const char *name, void *data, size_t len) {
    return qr__zip_push(z, name, data, len, NULL);
}

QR_TESTAPI QrStatus qr_zip_add_str(QrZip *z, const char *name, const char *text) {
    return qr_zip_add(z, name, text, strlen(text));
}
#endif

static QrStatus qr_zip_add_file(QrZip *z, const char *name, const char *src_path) {
    struct stat sb;
    if (stat(src_path, &sb) != 0) return qr_errf(QR_ERR_IO, "%s: %s", src_path, strerror(errno));
    if (!S_ISREG(sb.st_mode)) return qr_errf(QR_ERR_IO, "%s: not a regular file", src_path);
    if (access(src_path, R_OK) != 0) return qr_errf(QR_ERR_IO, "%s: %s", src_path, strerror(errno));
    return qr__zip_push(z, name, NULL, (size_t)sb.st_size, src_path);
}

#ifdef QR_TESTING
QR_TESTAPI const QrZipEntry *qr_zip_find(const QrZip *z, const char *name) {
    int i = qr_strmap_get(&z->by_name, name);
    return i >= 0 ? &z->entries[i] : NULL;
}
#endif

static int qr__zip_cmp(const void *a, const void *b) {
    return strcmp(((const QrZipEntry *)a)->name, ((const QrZipEntry *)b)->name);
}

/* Sorts the entries and checks that no name is also a folder of another name. */
static QrStatus qr__zip_prepare(QrZip *z) {
    if (z->n > 1) qsort(z->entries, (size_t)z->n, sizeof *z->entries, qr__zip_cmp);
    for (int i = 0; i < z->n; i++) QR_TRY(qr_strmap_put(&z->by_name, &z->arena, z->entries[i].name, i));
    char prefix[1100];
    for (int i = 0; i < z->n; i++) {
        const char *name = z->entries[i].name;
        for (const char *s = strchr(name, '/'); s; s = strchr(s + 1, '/')) {
            memcpy(prefix, name, (size_t)(s - name));
            prefix[s - name] = 0;
            if (qr_strmap_get(&z->by_name, prefix) >= 0)
                return qr_errf(QR_ERR_INVALID, "bundle entry '%s' is also the folder of '%s'", prefix, name);
        }
    }
    return QR_OK;
}

/* Streams an entry's bytes to `sink` in chunks (file entries are read from disk). */
typedef QrStatus (*QrBdZipSink)(void *ctx, const void *buf, size_t len);

static QrStatus qr__zip_stream(const QrZipEntry *e, QrBdZipSink sink, void *ctx) {
    enum { CHUNK = 1 << 16 };
    if (!e->src_path) {
        for (size_t off = 0; off < e->len; off += CHUNK) QR_TRY(sink(ctx, e->data + off, QR_MIN((size_t)CHUNK, e->len - off)));
        return QR_OK;
    }
    int fd = open(e->src_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return qr_errf(QR_ERR_IO, "%s: cannot open: %s", e->src_path, strerror(errno));
    unsigned char *buf = malloc(CHUNK);
    if (!buf) { close(fd); return qr_errf(QR_ERR_NOMEM, "out of memory"); }
    QrStatus st = QR_OK;
    for (;;) {
        ssize_t r = read(fd, buf, CHUNK);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) { st = qr_errf(QR_ERR_IO, "%s: read failed: %s", e->src_path, strerror(errno)); break; }
        if (r == 0) break;
        if ((st = sink(ctx, buf, (size_t)r)) != QR_OK) break;
    }
    free(buf);
    close(fd);
    return st;
}

/* Best-effort fsync of the folder holding `path`, so a rename survives a crash. */
static void qr__zip_sync_parent(const char *path) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) { fsync(fd); close(fd); }
}

static mode_t qr__zip_umask(void) {
    mode_t m = umask(0);
    umask(m);
    return m;
}

static mode_t qr__zip_file_mode(void) { return 0644 & ~qr__zip_umask(); }

/* ==== zip through minizip over our own file descriptor ============================= */

typedef struct QrBdZipIo {
    int fd;
    int err_no;          /* first write/seek error; sticky so minizip cannot write past it */
} QrBdZipIo;

static voidpf qr__zip_zio_open(voidpf opaque, const void *filename, int mode) {
    QR_UNUSED(opaque); QR_UNUSED(mode);
    return (voidpf)filename;     /* "filename" is our QrBdZipIo */
}

static uLong qr__zip_zio_read(voidpf opaque, voidpf stream, void *buf, uLong size) {
    QR_UNUSED(opaque);
    QrBdZipIo *io = stream;
    ssize_t r = read(io->fd, buf, size);
    return r < 0 ? 0 : (uLong)r;
}

/* A failed write is recorded in io->err_no and then *reported to minizip as done*,
 * and every later write is dropped: minizip 1.1 leaks the entry's central-header
 * buffer when the local header write fails inside zipOpenNewFileInZip, so it must
 * never see an error. Its state machine runs to the end and frees everything; we
 * check err_no after each call and throw the temporary file away. */
static uLong qr__zip_zio_write(voidpf opaque, voidpf stream, const void *buf, uLong size) {
    QR_UNUSED(opaque);
    QrBdZipIo *io = stream;
    if (io->err_no) return size;
    if (!qr__zip_step()) { io->err_no = errno; return size; }
    const unsigned char *p = buf;
    uLong done = 0;
    while (done < size) {
        ssize_t w = write(io->fd, p + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { io->err_no = w < 0 ? errno : ENOSPC; return size; }
        done += (uLong)w;
    }
    return done;
}

static ZPOS64_T qr__zip_zio_tell(voidpf opaque, voidpf stream) {
    QR_UNUSED(opaque);
    QrBdZipIo *io = stream;
    off_t o = lseek(io->fd, 0, SEEK_CUR);
    return o < 0 ? (ZPOS64_T)-1 : (ZPOS64_T)o;
}

static long qr__zip_zio_seek(voidpf opaque, voidpf stream, ZPOS64_T offset, int origin) {
    QR_UNUSED(opaque);
    QrBdZipIo *io = stream;
    int whence = origin == ZLIB_FILEFUNC_SEEK_SET ? SEEK_SET : origin == ZLIB_FILEFUNC_SEEK_CUR ? SEEK_CUR : SEEK_END;
    if (lseek(io->fd, (off_t)offset, whence) < 0) { if (!io->err_no) io->err_no = errno; return -1; }
    return 0;
}

static int qr__zip_zio_close(voidpf opaque, voidpf stream) { QR_UNUSED(opaque); QR_UNUSED(stream); return 0; }
static int qr__zip_zio_error(voidpf opaque, voidpf stream) { QR_UNUSED(opaque); QR_UNUSED(stream); return 0; }

typedef struct QrBdZipSinkCtx { zipFile zf; const char *zip_path; const char *name; QrBdZipIo *io; } QrBdZipSinkCtx;

static QrStatus qr__zip_sink(void *ctx, const void *buf, size_t len) {
    QrBdZipSinkCtx *c = ctx;
    if (zipWriteInFileInZip(c->zf, buf, (unsigned)len) != ZIP_OK || c->io->err_no)
        return qr_errf(QR_ERR_IO, "%s: writing '%s' failed: %s", c->zip_path, c->name,
                       c->io->err_no ? strerror(c->io->err_no) : "zip error");
    return QR_OK;
}

/* MS-DOS date/time of t in UTC, clamped to the range the format can hold. */
static uLong qr__zip_dos_time(int64_t t) {
    if (t < 315532800) t = 315532800;                  /* 1980-01-01T00:00:00Z */
    if (t > 4354819198LL) t = 4354819198LL;            /* 2107-12-31T23:59:58Z */
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    return (uLong)(tm.tm_year + 1900 - 1980) << 25 | (uLong)(tm.tm_mon + 1) << 21 | (uLong)tm.tm_mday << 16 |
           (uLong)tm.tm_hour << 11 | (uLong)tm.tm_min << 5 | (uLong)(tm.tm_sec / 2);
}

/* ==== entries deflated ahead, side by side ========================================== */

/* One entry compressed before it is written: the raw deflate stream minizip itself would write
 * (deflateInit2 with the zip's level, -MAX_WBITS, memory level 8, the default strategy, fed
 * with Z_NO_FLUSH and finished with Z_FINISH: zlib's output does not depend on how its input
 * and output are cut), the input's CRC-32 and size, and the type zlib detected (minizip marks a
 * text entry in the central directory). st/msg: the task's failure. */
typedef struct QrZipPacked {
    z_stream zs;
    bool zs_live;
    unsigned char *out;
    size_t len, cap;
    uLong crc;
    uint64_t n_in;
    bool stored;             /* a float payload found incompressible (qr__zip_incompressible): written stored */
    QrStatus st;
    char *msg;               /* malloc'd */
} QrZipPacked;

/* Deflates buf[0..n) into p->out (grown as needed) with the given flush. */
static QrStatus qr__zip_pack_run(QrZipPacked *p, const void *buf, size_t n, int flush) {
    p->zs.next_in = (Bytef *)(uintptr_t)buf;
    p->zs.avail_in = (uInt)n;
    for (;;) {
        if (p->len == p->cap) {
            size_t nc = p->cap ? p->cap * 2 : 1 << 16;
            unsigned char *np = realloc(p->out, nc);
            if (!np) return qr_errf(QR_ERR_NOMEM, "out of memory compressing a bundle entry");
            p->out = np;
            p->cap = nc;
        }
        p->zs.next_out = p->out + p->len;
        p->zs.avail_out = (uInt)QR_MIN(p->cap - p->len, (size_t)UINT_MAX);
        int r = deflate(&p->zs, flush);
        p->len = (size_t)(p->zs.next_out - p->out);
        if (r == Z_STREAM_END) return QR_OK;
        if (r != Z_OK && r != Z_BUF_ERROR) return qr_errf(QR_ERR_IO, "deflate failed (%d)", r);
        if (flush == Z_NO_FLUSH && p->zs.avail_in == 0 && p->zs.avail_out > 0) return QR_OK;
    }
}

static QrStatus qr__zip_pack_sink(void *ctx, const void *buf, size_t len) {
    QrZipPacked *p = ctx;
    p->crc = crc32(p->crc, buf, (uInt)len);        /* qr__zip_stream's chunks are at most 64 KiB */
    p->n_in += len;
    return qr__zip_pack_run(p, buf, len, Z_NO_FLUSH);
}

/* A float payload (QR_ZIP_DEFLATE_FAST: .npy, .onnx) whose first QR__ZIP_PROBE bytes a level-1 deflate
 * shrinks by less than an eighth: float32 values of a model's activations and weights mostly, whose
 * deflate costs most of the zip's CPU to save 7% (ResNet-18's badcase.npy, the repro subgraphs); a
 * payload of few distinct values (a fake-quantized tensor's, zeros) still deflates. Decided from the
 * entry's own bytes: the same zip at any thread count. */
#define QR__ZIP_PROBE ((size_t)64 << 10)

static QrStatus qr__zip_incompressible(const QrZipEntry *e, bool *out) {
    *out = false;
    if (e->method != QR_ZIP_DEFLATE_FAST || !e->len) return QR_OK;
    size_t n = QR_MIN(e->len, QR__ZIP_PROBE);
    unsigned char *in = NULL, *out_buf = malloc(compressBound((uLong)n));
    const unsigned char *src = e->data;
    QrStatus st = out_buf ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    if (st == QR_OK && e->src_path) {
        in = malloc(n);
        st = in ? qr_file_read_range(e->src_path, 0, n, in) : qr_errf(QR_ERR_NOMEM, "out of memory");
        src = in;
    }
    if (st == QR_OK) {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (deflateInit2(&zs, 1, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) st = qr_errf(QR_ERR_NOMEM, "cannot start deflate");
        else {
            zs.next_in = (Bytef *)(uintptr_t)src;
            zs.avail_in = (uInt)n;
            zs.next_out = out_buf;
            zs.avail_out = (uInt)compressBound((uLong)n);
            if (deflate(&zs, Z_FINISH) == Z_STREAM_END) *out = 8 * (uint64_t)zs.total_out > 7 * (uint64_t)n;
            deflateEnd(&zs);
        }
    }
    free(in);
    free(out_buf);
    return st;
}

typedef struct QrZipPackJob { const QrZip *z; const QrZipEntry *e; QrZipPacked *p; } QrZipPackJob;

static void qr__zip_pack_task(void *ctx, int64_t k, int tid) {
    QR_UNUSED(tid);
    const QrZipPackJob *j = ctx;
    QrZipPacked *p = &j->p[k];
    p->crc = crc32(0L, Z_NULL, 0);
    QrStatus st = qr__zip_incompressible(&j->e[k], &p->stored);
    if (st == QR_OK && p->stored) { p->st = QR_OK; return; }
    if (st == QR_OK)
        st = deflateInit2(&p->zs, qr__zip_level(j->z, &j->e[k]), Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK
           ? QR_OK : qr_errf(QR_ERR_NOMEM, "cannot start deflate");
    p->zs_live = st == QR_OK;
    if (st == QR_OK) st = qr__zip_stream(&j->e[k], qr__zip_pack_sink, p);
    if (st == QR_OK) st = qr__zip_pack_run(p, NULL, 0, Z_FINISH);
    p->st = st;
    if (st != QR_OK) {
        p->msg = strdup(qr_err_msg());
        qr_err_clear();
    }
}

static void qr__zip_pack_free(QrZipPacked *p) {
    if (p->zs_live) deflateEnd(&p->zs);
    free(p->out);
    free(p->msg);
    memset(p, 0, sizeof *p);
}

/* Whether entry e is compressed ahead (qr__zip_entries). */
static bool qr__zip_packs(const QrZip *z, const QrZipEntry *e) {
    return e->method != QR_ZIP_STORE && e->len <= z->pack_max && z->pack_max > 0;
}

/* Writes entry e into the open zipFile: p (compressed ahead) as a raw entry, else streamed
 * through minizip's own deflate. */
static QrStatus qr__zip_entry(const QrZip *z, const QrZipEntry *e, const QrZipPacked *p, zipFile zf, QrBdZipIo *io,
                              const char *zip_path) {
    zip_fileinfo zi;
    memset(&zi, 0, sizeof zi);
    zi.dosDate = qr__zip_dos_time(z->mtime);
    zi.external_fa = (uLong)0100644 << 16;                /* regular file, rw-r--r-- */
    if (p) zi.internal_fa = p->zs.data_type == Z_TEXT ? 1 : 0;   /* what minizip sets after its own deflate */
    const uLong made_by = 3u << 8 | 20;                    /* Unix, spec 2.0 */
    bool utf8 = false;
    for (const char *c = e->name; *c; c++) if ((unsigned char)*c >= 0x80) utf8 = true;
    int method = e->method == QR_ZIP_STORE ? 0 : Z_DEFLATED;
    int level = qr__zip_level(z, e);
    int zip64 = e->len >= 0xffffffffu;
    if (zipOpenNewFileInZip4_64(zf, e->name, &zi, NULL, 0, NULL, 0, NULL, method, level, p != NULL, -MAX_WBITS,
                                8, Z_DEFAULT_STRATEGY, NULL, 0, made_by, utf8 ? 0x800 : 0, zip64) != ZIP_OK ||
        io->err_no)
        return qr_errf(QR_ERR_IO, "%s: cannot start entry '%s': %s", zip_path, e->name,
                       io->err_no ? strerror(io->err_no) : "zip error");
    QrBdZipSinkCtx ctx = { zf, zip_path, e->name, io };
    if (p) {
        for (size_t off = 0; off < p->len; off += 1 << 16)
            QR_TRY(qr__zip_sink(&ctx, p->out + off, QR_MIN((size_t)1 << 16, p->len - off)));
    } else {
        QR_TRY(qr__zip_stream(e, qr__zip_sink, &ctx));
    }
    if ((p ? zipCloseFileInZipRaw64(zf, p->n_in, p->crc) : zipCloseFileInZip(zf)) != ZIP_OK || io->err_no)
        return qr_errf(QR_ERR_IO, "%s: cannot finish entry '%s': %s", zip_path, e->name,
                       io->err_no ? strerror(io->err_no) : "zip error");
    return QR_OK;
}

/* Writes all entries into the open zipFile, in runs of consecutive entries: those of a run that
 * qr__zip_packs are deflated side by side first (at most QR_ZIP_PACK_MAX input bytes a run, so
 * their compressed copies stay bounded), then the run is written in order. */
static QrStatus qr__zip_entries(QrZip *z, zipFile zf, QrBdZipIo *io, const char *zip_path) {
    QrZipPacked *pk = calloc((size_t)z->n + 1, sizeof *pk);
    int *slot = malloc(((size_t)z->n + 1) * sizeof *slot);
    QrZipEntry *todo = malloc(((size_t)z->n + 1) * sizeof *todo);
    QrStatus st = pk && slot && todo ? QR_OK : qr_errf(QR_ERR_NOMEM, "out of memory");
    for (int i0 = 0; st == QR_OK && i0 < z->n;) {
        int i1 = i0, np = 0;
        size_t bytes = 0;
        for (; i1 < z->n && (i1 == i0 || bytes < QR_ZIP_PACK_MAX); i1++) {
            const QrZipEntry *e = &z->entries[i1];
            slot[i1] = -1;
            if (!qr__zip_packs(z, e)) continue;
            slot[i1] = np;
            todo[np++] = *e;
            bytes += e->len;
        }
        QrZipPackJob job = { z, todo, pk };
        if (np) qr_pool_for(np, qr__zip_pack_task, &job);
        for (int k = 0; st == QR_OK && k < np; k++)
            if (pk[k].st != QR_OK)
                st = qr_errf(pk[k].st, "%s: cannot compress '%s': %s", zip_path, todo[k].name, pk[k].msg ? pk[k].msg : "?");
        for (int i = i0; st == QR_OK && i < i1; i++) {
            QrZipEntry e = z->entries[i];
            const QrZipPacked *p = slot[i] >= 0 ? &pk[slot[i]] : NULL;
            bool stored = p && p->stored;
            if (!p) st = qr__zip_incompressible(&e, &stored);     /* not compressed ahead: decided here */
            if (stored) { e.method = QR_ZIP_STORE; p = NULL; }
            if (st == QR_OK) st = qr__zip_entry(z, &e, p, zf, io, zip_path);
        }
        for (int k = 0; k < np; k++) qr__zip_pack_free(&pk[k]);
        i0 = i1;
    }
    free(pk);
    free(slot);
    free(todo);
    return st;
}

static QrStatus qr_zip_write(QrZip *z, const char *zip_path) {
    QR_TRY(qr__zip_prepare(z));
    size_t pn = strlen(zip_path);
    char tmp[4096];
    if (pn + 16 > sizeof tmp) return qr_errf(QR_ERR_IO, "%s: path too long", zip_path);
    struct stat sb;
    if (stat(zip_path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return qr_errf(QR_ERR_IO, "%s: exists and is not a regular file", zip_path);
    snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", zip_path);
    QrBdZipIo io = { .fd = -1 };
    if (!qr__zip_step() || (io.fd = mkostemp(tmp, O_CLOEXEC)) < 0)
        return qr_errf(QR_ERR_IO, "%s: cannot create a temporary file: %s", zip_path, strerror(errno));
    const int slot = qr_cleanup_add(tmp, false);    /* removed on SIGINT/SIGTERM */

    QrStatus st = QR_OK;
    zlib_filefunc64_def ff = {
        .zopen64_file = qr__zip_zio_open, .zread_file = qr__zip_zio_read, .zwrite_file = qr__zip_zio_write,
        .ztell64_file = qr__zip_zio_tell, .zseek64_file = qr__zip_zio_seek, .zclose_file = qr__zip_zio_close,
        .zerror_file = qr__zip_zio_error, .opaque = NULL,
    };
    zipFile zf = zipOpen2_64(&io, APPEND_STATUS_CREATE, NULL, &ff);
    if (!zf) st = qr_errf(QR_ERR_IO, "%s: cannot start the zip", zip_path);
    if (st == QR_OK) st = qr__zip_entries(z, zf, &io, zip_path);
    if (zf) {
        int zr = zipClose(zf, NULL);           /* also frees minizip's state after a failure */
        if (st == QR_OK && (zr != ZIP_OK || io.err_no))
            st = qr_errf(QR_ERR_IO, "%s: cannot finish the zip: %s", zip_path, io.err_no ? strerror(io.err_no) : "zip error");
    }
    if (st == QR_OK && fchmod(io.fd, qr__zip_file_mode()) != 0)
        st = qr_errf(QR_ERR_IO, "%s: chmod: %s", tmp, strerror(errno));
    if (st == QR_OK && (!qr__zip_step() || fsync(io.fd) != 0))
        st = qr_errf(QR_ERR_IO, "%s: fsync failed: %s", zip_path, strerror(errno));
    if (close(io.fd) != 0 && st == QR_OK) st = qr_errf(QR_ERR_IO, "%s: close failed: %s", zip_path, strerror(errno));
    if (st == QR_OK && (!qr__zip_step() || rename(tmp, zip_path) != 0))
        st = qr_errf(QR_ERR_IO, "%s: cannot rename the temporary file into place: %s", zip_path, strerror(errno));
    if (st != QR_OK) unlink(tmp);
    else qr__zip_sync_parent(zip_path);
    qr_cleanup_drop(slot);
    return st;
}

/* ==== folder tree =================================================================== */

typedef struct QrBdDirSinkCtx { int fd; const char *path; } QrBdDirSinkCtx;

static QrStatus qr__zip_dir_sink(void *ctx, const void *buf, size_t len) {
    QrBdDirSinkCtx *c = ctx;
    const unsigned char *p = buf;
    if (!qr__zip_step()) return qr_errf(QR_ERR_IO, "%s: write failed: %s", c->path, strerror(errno));
    while (len) {
        ssize_t w = write(c->fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return qr_errf(QR_ERR_IO, "%s: write failed: %s", c->path, w < 0 ? strerror(errno) : "no space");
        p += w;
        len -= (size_t)w;
    }
    return QR_OK;
}

static int qr__zip_rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    QR_UNUSED(sb); QR_UNUSED(ftw);
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Removes a tree we created (never follows symlinks). */
static void qr__zip_rm_tree(const char *path) { nftw(path, qr__zip_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

static bool qr__zip_dir_empty(const char *path) {
    DIR *d = opendir(path);
    if (!d) return false;
    struct dirent *de;
    bool empty = true;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) { empty = false; break; }
    closedir(d);
    return empty;
}

/* Whether `dir` may be replaced: 0 absent, 1 replaceable, -1 refused (message set). */
static int qr__zip_dir_replaceable(const char *dir, const char *marker) {
    struct stat sb;
    if (lstat(dir, &sb) != 0) return 0;
    if (!S_ISDIR(sb.st_mode)) { qr_errf(QR_ERR_IO, "%s: exists and is not a folder", dir); return -1; }
    if (qr__zip_dir_empty(dir)) return 1;
    if (marker) {
        char m[4200];
        snprintf(m, sizeof m, "%s/%s", dir, marker);
        if (lstat(m, &sb) == 0) return 1;
    }
    qr_errf(QR_ERR_IO, "%s: folder exists and does not look like an earlier bundle (no %s); not replacing it", dir,
            marker ? marker : "marker");
    return -1;
}

static QrStatus qr__zip_dir_entries(QrZip *z, const char *tmp) {
    char path[4200];
    mode_t mode = qr__zip_file_mode();
    struct timespec times[2] = { { .tv_sec = (time_t)z->mtime }, { .tv_sec = (time_t)z->mtime } };
    for (int i = 0; i < z->n; i++) {
        const QrZipEntry *e = &z->entries[i];
        if (snprintf(path, sizeof path, "%s/%s", tmp, e->name) >= (int)sizeof path)
            return qr_errf(QR_ERR_IO, "%s/%s: path too long", tmp, e->name);
        /* Folders of this entry (sorted order creates a folder before its files). */
        for (char *s = strchr(path + strlen(tmp) + 1, '/'); s; s = strchr(s + 1, '/')) {
            *s = 0;
            struct stat sb;
            if (stat(path, &sb) != 0 && (!qr__zip_step() || mkdir(path, 0755) != 0)) {
                QrStatus st = qr_errf(QR_ERR_IO, "%s: cannot create folder: %s", path, strerror(errno));
                *s = '/';
                return st;
            }
            *s = '/';
        }
        int fd = -1;
        if (!qr__zip_step() || (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)) < 0)
            return qr_errf(QR_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        QrBdDirSinkCtx ctx = { fd, path };
        QrStatus st = qr__zip_stream(e, qr__zip_dir_sink, &ctx);
        if (st == QR_OK) futimens(fd, times);
        if (close(fd) != 0 && st == QR_OK) st = qr_errf(QR_ERR_IO, "%s: close failed: %s", path, strerror(errno));
        QR_TRY(st);
    }
    return QR_OK;
}

static QrStatus qr_zip_write_dir(QrZip *z, const char *dir, const char *replace_marker) {
    QR_TRY(qr__zip_prepare(z));
    char clean[4096];
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    if (n == 0 || n + 16 > sizeof clean) return qr_errf(QR_ERR_IO, "'%s': bad folder path", dir);
    memcpy(clean, dir, n);
    clean[n] = 0;
    if (qr__zip_dir_replaceable(clean, replace_marker) < 0) return QR_ERR_IO;

    char tmp[4200], old[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", clean);
    if (!qr__zip_step() || !mkdtemp(tmp))
        return qr_errf(QR_ERR_IO, "%s: cannot create a temporary folder: %s", clean, strerror(errno));
    int slot = qr_cleanup_add(tmp, true);                      /* removed on SIGINT/SIGTERM */
    QrStatus st = qr__zip_dir_entries(z, tmp);
    if (st == QR_OK) chmod(tmp, 0755 & ~qr__zip_umask());       /* mkdtemp made it 0700 */
    int state = st == QR_OK ? qr__zip_dir_replaceable(clean, replace_marker) : 0;   /* again: it may have appeared */
    if (st == QR_OK && state < 0) st = QR_ERR_IO;
    bool moved_old = false;
    if (st == QR_OK && state == 1 && !qr__zip_dir_empty(clean)) {
        /* rename() replaces only an empty folder: move the old bundle aside first. */
        snprintf(old, sizeof old, "%s.old-XXXXXX", clean);
        if (!qr__zip_step() || !mkdtemp(old) || rename(clean, old) != 0) {
            st = qr_errf(QR_ERR_IO, "%s: cannot move the earlier folder aside: %s", clean, strerror(errno));
            rmdir(old);
        } else {
            moved_old = true;
        }
    }
    if (st == QR_OK && (!qr__zip_step() || rename(tmp, clean) != 0)) {
        st = qr_errf(QR_ERR_IO, "%s: cannot rename the temporary folder into place: %s", clean, strerror(errno));
        if (moved_old && rename(old, clean) == 0) moved_old = false;    /* put the earlier bundle back */
    }
    if (st != QR_OK) qr__zip_rm_tree(tmp);
    qr_cleanup_drop(slot);
    /* the earlier bundle, replaced: removed on a signal from here on too */
    slot = moved_old && st == QR_OK ? qr_cleanup_add(old, true) : -1;
    if (moved_old && st == QR_OK) qr__zip_rm_tree(old);
    qr_cleanup_drop(slot);
    if (st == QR_OK) qr__zip_sync_parent(clean);
    return st;
}

/* ==== names ============================================================================ */

static void qr_zip_safe_component(char *dst, size_t cap, const char *name) {
    if (cap == 0) return;
    const unsigned char *s = (const unsigned char *)name;
    size_t o = 0, n = strlen(name);
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        int ul = c >= 0x80 ? qr_json_utf8_len(s + i, n - i) : 1;
        if (ul > 1) {                                       /* keep non-ASCII letters whole */
            if (o + (size_t)ul >= cap) break;
            memcpy(dst + o, s + i, (size_t)ul);
            o += (size_t)ul;
            i += (size_t)ul;
            continue;
        }
        if (o + 1 >= cap) break;
        bool ok = isalnum(c) || c == '-' || c == '_' || (c == '.' && o > 0);
        dst[o++] = ok && c < 0x80 ? (char)c : '_';
        i++;
    }
    if (o == 0 && cap > 1) dst[o++] = '_';
    dst[o] = 0;
}
