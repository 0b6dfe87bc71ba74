/* analysis/dspart — the partial state of a sharded data-set run (.qrpart): the mergeable
 * accumulators of analysis/dataset plus provenance (model sha256s, options, sample names,
 * shard id), versioned and checksummed; and the checks a merge makes before combining. */
#ifndef QR_DSPART_H
#define QR_DSPART_H

/* File format, version 3 (all integers little-endian):
 *   "QRPART\n" 0x00 · u32 version · u64 payload length · payload · 32-byte SHA-256 of all before
 *   payload: strings (u64 length + bytes), u64 integers, f64 as their bits, in the order
 *   qr_dspart_write emits them: kind, models (path, sha256 hex) x2, options (count, key/value),
 *   shard, shard count, data folder (dir, layout, found, inputs + folders), sample names, then
 *   the sections: u64 count, and per section its name, u64 byte length and bytes. Section
 *   "compare" (always first) holds analysis/dataset's accumulators (rows, outputs, per-sample
 *   values; exact sums in canonical limb form; per sample its state: 0 not in this part, 1 done and its
 *   output metrics, 2 skipped by --skip-bad-samples and the error naming it — version 3; each row's
 *   pooled error split — version 4); other
 *   analyses add their own (QrDsSection). */
#define QR_DSPART_VERSION 4

/* ==== sections: how an analysis adds its accumulators to a part ========================
 * An analysis whose accumulators a sharded run must carry adds a section, with two functions
 * in its own file:
 *   void     put(QrDsW *w, const void *acc)    writes acc with qr_dspart_put_* (any layout;
 *                                              exact sums through qr_dspart_put_xsum);
 *   QrStatus merge(QrDsR *r, void *acc)        reads what put wrote with qr_dspart_get_* and
 *                                              ADDS it into acc (acc starts empty, for the same
 *                                              session and sample list, and receives every part).
 * The command that writes parts passes {name, acc, put, merge} to qr_dspart_write; qreport merge
 * passes the same list (fresh accumulators) to qr_dspart_load. A part lacking a requested
 * section, holding one not requested, or whose section is not read to its exact end is refused
 * naming the file and the section. A read past the section's end sets the reader bad (no crash);
 * merge should check qr_dspart_bad(r) before trusting counts it read. Merges must not depend on
 * the parts' order (exact sums, minima/maxima, per-sample entries by index), or docs/DATASET.md
 * must state the bound. */
typedef struct QrDsW { uint8_t *p; size_t len, cap; bool oom; } QrDsW;
typedef struct QrDsR { const uint8_t *p; size_t len, off; bool bad; } QrDsR;
typedef struct QrDsSection {
    const char *name;        /* unique in a part ("compare" is taken) */
    void *acc;
    void (*put)(QrDsW *w, const void *acc);
    QrStatus (*merge)(QrDsR *r, void *acc);
} QrDsSection;

static void qr_dspart_put_u64(QrDsW *w, uint64_t v);
static void qr_dspart_put_f64(QrDsW *w, double v);
static void qr_dspart_put_str(QrDsW *w, const char *s);
static void qr_dspart_put_bytes(QrDsW *w, const void *v, size_t n);
static void qr_dspart_put_xsum(QrDsW *w, const QrXSum *s);
static uint64_t qr_dspart_get_u64(QrDsR *r);
static double qr_dspart_get_f64(QrDsR *r);
/* A count no larger than lim (else the reader turns bad and 0 is returned). */
static int qr_dspart_get_int(QrDsR *r, int64_t lim);
/* n bytes (NULL and bad when fewer remain); the pointer is into the part. */
static const uint8_t *qr_dspart_get_bytes(QrDsR *r, size_t n);
static void qr_dspart_get_xsum(QrDsR *r, QrXSum *s);
static bool qr_dspart_bad(const QrDsR *r);

typedef struct QrDsPart {
    QrArena arena;
    const char *path;
    const char *kind;                    /* "compare" */
    const char *model_path[2], *model_sha[2];
    int n_opts;
    const char *opt_key[16], *opt_val[16];
    int shard, n_shards;
    const char *dir;
    bool folders;
    int n_found, n_inputs, n_samples;
    const char **input_names, **folder, **names;
    int n_sec;                           /* sections (names, bytes into data) */
    const char *sec_name[32];
    const uint8_t *sec[32];
    size_t sec_len[32];
    uint8_t *data;                       /* the file (owned) */
} QrDsPart;

/* Writes path atomically: d (samples of shard `shard` of n_shards) with its provenance, kind
 * ("compare", "sensitivity", "runall": the command that wrote it) and the extra sections. */
static QrStatus qr_dspart_write(const char *path, const char *kind, const QrDsCompare *d, const QrDsSet *ds,
                                const QrSession *s, const char *const *opt_key, const char *const *opt_val, int n_opts,
                                int shard, int n_shards, const QrDsSection *sec, int n_sec);
/* Reads and verifies a part (magic, version, checksum, structure); errors name the file. */
static QrStatus qr_dspart_read(const char *path, QrDsPart *p);
static void qr_dspart_free(QrDsPart *p);
/* Checks that parts[n] come from the same models, options and sample list, and that their
 * shards are 0..N-1 exactly once (errors list the missing and duplicated shards, or name the
 * differing model/option and the two files). */
static QrStatus qr_dspart_check(const QrDsPart *parts, int n);
/* Adds a part's accumulators to d (initialized for the same session and sample list) and its
 * sections to sec[n_sec] (each part must hold exactly these sections). */
static QrStatus qr_dspart_load(const QrDsPart *p, const QrSession *s, QrDsCompare *d, const QrDsSection *sec, int n_sec);
/* The value of option key in p (NULL when absent). */
static const char *qr_dspart_opt(const QrDsPart *p, const char *key);
/* Samples of shard k of n over n_samples: the contiguous block [k·n_samples/n, (k+1)·n_samples/n). */
static void qr_dspart_shard_range(int n_samples, int k, int n, int *lo, int *hi);
/* "K/N" (0-based K), or "auto": SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT,
 * else JOB_COMPLETION_INDEX of QR_SHARD_COUNT ("auto/N" gives the count). */
static QrStatus qr_dspart_shard_parse(const char *spec, int *k, int *n);

/* analysis/dsstat's .qrpart section (a QrDsSection, acc = a QrDsStatRun initialized for the
 * session): put writes both profiles and the distributions; merge reads one part's and adds
 * them (profiles and histograms exactly; sketches within their bounds). */
#ifdef QR_TESTING
QR_TESTAPI void qr_dspart_dsstat_put(QrDsW *w, const void *acc);
QR_TESTAPI QrStatus qr_dspart_dsstat_merge(QrDsR *r, void *acc);
#endif
/* runall --shard's section "dsprof": both profiles only (put / merge as above; the merge of runall
 * parts accumulates the distributions itself, their selection being the merged worst sample's). */
static void qr_dspart_dsprof_put(QrDsW *w, const void *acc);
static QrStatus qr_dspart_dsprof_merge(QrDsR *r, void *acc);

#endif
