/* analysis/stats — one-pass tensor statistics (min, max, mean, population
 * variance over the finite values, with NaN/Inf counted separately) and the
 * ModelProfiler-style statistic table. */
#ifndef QR_STATS_H
#define QR_STATS_H

typedef struct QrStats {
    int64_t n;          /* finite values */
    int64_t n_nan, n_posinf, n_neginf;
    double min, max, mean, m2;   /* over finite values; m2 = Σ(x-mean)² */
} QrStats;

static void qr_stats_init(QrStats *s);
static void qr_stats_tensor(QrStats *s, const QrTensor *t);      /* accumulates */
static void qr_stats_merge(QrStats *a, const QrStats *b);         /* Chan et al. */
static double qr_stats_var(const QrStats *s);                     /* population variance */

/* qr_kern.f32_pair_stats(x, y, n, s) with the blocks computed side by side on the thread pool
 * and merged into *s in block order: the bits of the one call, whatever the thread count. Below
 * QR_STATS_PAR_MIN elements (or on one thread) it is that call (no pool overhead). Safe from a
 * tap and from inside a pool task (a nested parallel-for). */
#define QR_STATS_PAR_MIN (16 * QR_KERN_STATS_BLOCK)
static void qr_stats_pair(const float *x, const float *y, int64_t n, QrF32PairStats *s);

/* Runs the graph once and fills stats[v] for every value it produces and every
 * initializer (seen[v] = true for those). Both arrays have n_values entries. */
static QrStatus qr_stats_collect(const QrGraph *g, const QrTensor *inputs, QrStats *stats, bool *seen);
/* The same in pieces, for a run that also serves other taps: qr_stats_tap (user: a
 * QrStatsCollect) on every value of the run, then qr_stats_inits for the initializers. */
typedef struct QrStatsCollect { QrStats *stats; bool *seen; } QrStatsCollect;
static QrStatus qr_stats_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t);
static void qr_stats_inits(const QrGraph *g, QrStats *stats, bool *seen);

/* `qreport profile`: writes statistic.txt/.csv into dir from stats/seen (as
 * filled by qr_stats_collect), or runs the graph once itself when stats is NULL.
 * Rows: every node's inputs (activation "input", initializer "weight"/"bias")
 * and outputs, in topological order; then the same rows sorted by range. */
static QrStatus qr_profile_write(const QrGraph *g, const QrTensor *inputs, const QrStats *stats, const bool *seen,
                                 const char *dir, const char *prefix, int *n_nonfinite);

/* ModelProfiler's table(prefixes, types): only the nodes whose name starts with one of the
 * comma-separated prefixes (a leading '/' of the node name may be left out) and whose op type
 * is one of types (case-insensitive); NULL lists select everything. Index keeps the layer
 * number of the whole model. */
typedef struct QrProfileSel { const char *prefixes, *types; } QrProfileSel;
static QrStatus qr_profile_write_sel(const QrGraph *g, const QrTensor *inputs, const QrStats *stats, const bool *seen,
                                     const char *dir, const char *prefix, const QrProfileSel *sel, int *n_nonfinite);
/* The same with a head: text written above the .txt table (NULL: none). */
static QrStatus qr_profile_write_ex(const QrGraph *g, const QrTensor *inputs, const QrStats *stats, const bool *seen,
                                   const char *dir, const char *prefix, const QrProfileSel *sel, const char *head,
                                   int *n_nonfinite);
/* Fails, naming the entry and close names, when a prefix or type selects no node of g. */
static QrStatus qr_profile_sel_check(const QrGraph *g, const QrProfileSel *sel);

#endif
