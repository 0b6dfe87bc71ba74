/* report/zip — the bundle's file set: named entries (bytes in memory or a file on
 * disk) written as one deterministic zip (minizip + zlib) or as a folder tree
 * (--keep-dir), each atomically: a temporary in the destination folder, renamed. */
#ifndef QR_ZIP_H
#define QR_ZIP_H

/* QR_ZIP_DEFLATE_FAST: deflate at level 1, for float payloads (.npy, .onnx: weights, inputs),
 * which level 6 shrinks by 7-8% at several times level 1's CPU (ResNet-18's runall bundle: a
 * third of its deflate time on 2.6 MB of them). */
typedef enum QrZipMethod { QR_ZIP_DEFLATE = 0, QR_ZIP_STORE, QR_ZIP_DEFLATE_FAST } QrZipMethod;

typedef struct QrZipEntry {
    const char *name;           /* path inside the bundle: "index.html", "plots/x.png" */
    unsigned char *data;        /* in-memory bytes, malloc'd, owned by the QrZip */
    size_t len;
    const char *src_path;       /* or: a file read (streamed) when written */
    QrZipMethod method;         /* chosen from the name: stored for already-compressed
                                   formats (.png .jpg .gif .webp .zip .gz .xz .zst .bz2), deflate
                                   fast for .npy .onnx, else deflate */
} QrZipEntry;

/* Determinism: entries are written sorted by name (byte order), whatever order they
 * were added in; every entry carries the same timestamp `mtime`, as an MS-DOS time
 * in UTC (no local time zone; clamped to 1980-01-01..2107-12-31), the same
 * attributes (regular file, 0644, "made by" Unix) and no extra fields; deflate
 * level `level` of the linked zlib (1 for QR_ZIP_DEFLATE_FAST entries). So identical entries + identical mtime give a
 * byte-identical zip. qr_zip_init takes mtime from SOURCE_DATE_EPOCH when set,
 * else the current time (so a user's unzip shows when the report was made). */
typedef struct QrZip {
    QrArena arena;              /* names and source paths */
    QrStrMap by_name;           /* name -> entry index, for duplicate detection */
    QrZipEntry *entries;        /* malloc'd array, n used of cap */
    int n, cap;
    int64_t mtime;              /* seconds since the Unix epoch, stamped on every entry */
    int level;                  /* deflate level 1..9, default 6 */
    size_t pack_max;            /* deflated entries of at most this many bytes are compressed ahead, side
                                   by side on the thread pool (QR_ZIP_PACK_MAX; 0: none), larger ones
                                   streamed through minizip: the same bytes either way */
} QrZip;

/* qr_zip_init's pack_max, and the input bytes compressed ahead at a time (what their compressed
 * copies may hold in memory). */
#define QR_ZIP_PACK_MAX ((size_t)64 << 20)

/* Starts an empty set. Fails (QR_ERR_INVALID) when SOURCE_DATE_EPOCH is set but is
 * not a non-negative decimal integer, as the reproducible-builds spec asks. */
static QrStatus qr_zip_init(QrZip *z);
/* Frees every entry (including data handed over with qr_zip_add_owned). */
static void qr_zip_free(QrZip *z);

#ifdef QR_TESTING
/* Adds a copy of data[0..len). Names: relative, '/'-separated, no empty, "." or ".."
 * component, no backslash or control character, at most 1024 bytes; a name may not
 * repeat. Bad names fail with QR_ERR_INVALID; nothing is added then. */
QR_TESTAPI QrStatus qr_zip_add(QrZip *z, const char *name, const void *data, size_t len);
/* Adds malloc'd `data` without copying; the QrZip owns it from now on, also when
 * this call fails (it is freed then). */
QR_TESTAPI QrStatus qr_zip_add_owned(QrZip *z, const char *name, void *data, size_t len);
/* Adds a NUL-terminated text (copied, without the NUL). */
QR_TESTAPI QrStatus qr_zip_add_str(QrZip *z, const char *name, const char *text);
#endif
/* Adds a file on disk, read in chunks when the zip/folder is written (so it need
 * not fit in memory). The file must be a readable regular file now (QR_ERR_IO). */
static QrStatus qr_zip_add_file(QrZip *z, const char *name, const char *src_path);
#ifdef QR_TESTING
/* The entry of that name, or NULL. */
QR_TESTAPI const QrZipEntry *qr_zip_find(const QrZip *z, const char *name);
#endif

/* Writes the entries as a zip at `zip_path`: into "<zip_path>.tmp-XXXXXX" in the same
 * folder, fsync, rename over zip_path (which is replaced only on success). On any
 * failure the temporary is removed and zip_path is untouched; QR_ERR_IO names the
 * file. Sorts z->entries by name. The folder of zip_path must exist. */
static QrStatus qr_zip_write(QrZip *z, const char *zip_path);
/* Writes the same entries as a folder tree at `dir`: built in "<dir>.tmp-XXXXXX",
 * then renamed to dir. An existing `dir` is replaced (again only on success) when
 * it is empty, or when `replace_marker` is non-NULL and dir/<replace_marker> exists
 * (i.e. it looks like an earlier bundle, e.g. "manifest.json"); any other existing
 * dir is refused with QR_ERR_IO before anything is written, so a mistyped path
 * never deletes a user's folder. Files get mode 0644 (minus umask) and mtime. */
static QrStatus qr_zip_write_dir(QrZip *z, const char *dir, const char *replace_marker);

/* Turns an arbitrary node name into one safe file-name component (for
 * plots/distribution/<node>.png): bytes other than [A-Za-z0-9._-] and valid UTF-8
 * letters become '_', a leading '.' becomes '_', empty becomes "_"; truncated to
 * cap-1 bytes at a character boundary. Distinct names can map to the same result;
 * the caller makes them unique. */
static void qr_zip_safe_component(char *dst, size_t cap, const char *name);

/* Test hook (SQLite-style fault injection): the nth file-system write step from now
 * fails as if with EIO (n = 0 disables). Steps are: creating the temporary file or
 * folder, every write of zip bytes, every mkdir, file creation and chunk written in
 * a folder tree, the fsync, moving an earlier folder aside and the final rename.
 * Exactly one step fails; the writers must then fail, leave the destination as it
 * was and remove their temporaries. Not thread-safe. */
#ifdef QR_TESTING
QR_TESTAPI void qr_zip_test_fail_write(int nth);
/* Test hook: the process stops itself (SIGSTOP) before the nth write step from now (same
 * steps; n = 0 disables), so a test can interrupt it at a known point of writing. */
QR_TESTAPI void qr_zip_test_stop_at(int nth);
#endif

#endif
