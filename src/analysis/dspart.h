/* analysis/dspart — the partial state of a sharded data-set run (.qrpart): the mergeable
 * accumulators of analysis/dataset plus provenance (model sha256s, options, sample names,
 * shard id), versioned and checksummed; and the checks a merge makes before combining. */
#ifndef QR_DSPART_H
#define QR_DSPART_H

/* File format, version 1 (all integers little-endian):
 *   "QRPART\n" 0x00 · u32 version · u32 payload length · payload · 32-byte SHA-256 of all before
 *   payload: strings (u32 length + bytes), u64 integers, f64 as their bits, in the order
 *   qr_dspart_write emits them: kind, models (path, sha256 hex) x2, options (count, key/value),
 *   shard, shard count, data folder (dir, layout, found, inputs + folders), sample names, then
 *   the accumulators (rows, outputs, per-sample values; exact sums in canonical limb form). */
#define QR_DSPART_VERSION 1

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
    const uint8_t *body;                 /* the accumulators, for qr_dspart_load */
    size_t body_len;
    uint8_t *data;                       /* the file (owned) */
} QrDsPart;

/* Writes path atomically: d (samples of shard `shard` of n_shards) with its provenance. */
static QrStatus qr_dspart_write(const char *path, const QrDsCompare *d, const QrDsSet *ds, const QrSession *s,
                                const char *const *opt_key, const char *const *opt_val, int n_opts, int shard, int n_shards);
/* Reads and verifies a part (magic, version, checksum, structure); errors name the file. */
static QrStatus qr_dspart_read(const char *path, QrDsPart *p);
static void qr_dspart_free(QrDsPart *p);
/* Checks that parts[n] come from the same models, options and sample list, and that their
 * shards are 0..N-1 exactly once (errors list the missing and duplicated shards, or name the
 * differing model/option and the two files). */
static QrStatus qr_dspart_check(const QrDsPart *parts, int n);
/* Adds a part's accumulators to d (initialized for the same session and sample list). */
static QrStatus qr_dspart_load(const QrDsPart *p, const QrSession *s, QrDsCompare *d);
/* Samples of shard k of n over n_samples: the contiguous block [k·n_samples/n, (k+1)·n_samples/n). */
static void qr_ds_shard_range(int n_samples, int k, int n, int *lo, int *hi);
/* "K/N" (0-based K), or "auto": SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT,
 * else JOB_COMPLETION_INDEX of QR_SHARD_COUNT ("auto/N" gives the count). */
static QrStatus qr_ds_shard_parse(const char *spec, int *k, int *n);

#endif
