/* analysis/dsstat — statistics over a whole data set: ModelProfiler's min/max/mean/var of every
 * value pooled over all samples' elements (exact, mergeable, order-independent), `profile
 * --data`, and runall --data's consumer of each sample's runs (both models' profiles and the
 * distributions over the set, analysis/dist). */
#ifndef QR_DSSTAT_H
#define QR_DSSTAT_H

/* One value over the set. Each sample's tensor enters through its QrStats (qr_stats_tensor: a
 * deterministic function of that tensor); the pooled mean and variance come from exact sums
 * (QrXSum) of n_s·mean_s (with its rounding error), n_s·mean_s² and m2_s — the same for any
 * grouping of the samples (shards) and any order — and min/max in the total order (-0.0 below
 * +0.0), so merged parts give the single run's bits. */
typedef struct QrStatAcc {
    int64_t n, n_nan, n_posinf, n_neginf, n_samples;
    double min, max;
    QrXSum sx, sx2, m2;
} QrStatAcc;

/* Every value of one model. */
typedef struct QrStatSet {
    const QrGraph *g;
    QrStatAcc *acc;              /* [g->n_values] */
    bool *seen;                  /* values some sample's run produced */
    QrStats *last;               /* optional [g->n_values]: each value's statistics in the last sample's run (its
                                  * qr_stats_tensor, as qr_stats_tap computes them), set by the caller */
} QrStatSet;

static QrStatus qr_statset_init(QrStatSet *ss, const QrGraph *g);
static void qr_statset_free(QrStatSet *ss);
/* A run tap (user: QrStatSet) adding the sample's value to its accumulator. */
static QrStatus qr_statset_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t);
static void qr_statacc_add(QrStatAcc *a, const QrStats *sample);
static void qr_statacc_merge(QrStatAcc *a, const QrStatAcc *b);
/* a += b (same graph). */
static QrStatus qr_statset_merge(QrStatSet *a, const QrStatSet *b);
/* The pooled statistics as a QrStats (m2 = Σ(x − mean)² over all samples' finite elements). */
static void qr_statacc_finish(const QrStatAcc *a, QrStats *out);
/* statistic.txt/.csv (analysis/stats' table) of the pooled values into dir; the initializers
 * (the same in every sample) from the graph. head: a line written above the table. */
static QrStatus qr_statset_write(const QrStatSet *ss, const char *dir, const char *prefix, const QrProfileSel *sel,
                                 const char *head, int *n_nonfinite);
/* Byte form of the accumulators (little-endian, exact sums in canonical limb form), appended
 * to *buf; read back into ss (initialized for the same graph), *used the bytes consumed. */
static QrStatus qr_statset_put(const QrStatSet *ss, uint8_t **buf, size_t *len, size_t *cap);
static QrStatus qr_statset_get(QrStatSet *ss, const uint8_t *p, size_t avail, size_t *used);

/* `profile --data`: runs g on every sample of ds and writes statistic.txt/.csv over all of
 * them into dir (errors name the sample). */
struct QrDsSet;
static QrStatus qr_dsstat_profile_data(const QrGraph *g, const struct QrDsSet *ds, const QrProfileSel *sel, const char *dir,
                                QrStepHook *progress, int *n_nonfinite);

/* ==== runall --data: the consumer of each sample's runs ================================
 * Taps (analysis/dataset's QrDsCompare base_tap / hooks, user = the QrDsStatRun): the
 * baseline's values into prof[0], the analysis model's into prof[1] (sim mode; the int modes
 * run the lowering, whose values are not the model's: prof[1] stays the worst sample's), each
 * compared pair into the distributions over the set (dist). */
typedef struct QrDsStatRun {
    bool on;
    QrStatSet prof[2];
    QrCmpHooks hooks;
    QrDistAcc dist;              /* analysis/dist: the requested activations over the set */
    QrDistAcc all;               /* the pass's candidates (qr_dsstat_dist_all), until qr_dsstat_dist_begin takes them */
    const QrSession *s;          /* with all: the session whose baseline values the pairs are */
    QrDistSet *dset;             /* runall's distributions (worst sample), updated by finish */
    int n_samples;               /* samples the taps saw */
} QrDsStatRun;

static QrStatus qr_dsstat_run_init(QrDsStatRun *r, const QrSession *s, QrDistSet *dset);
/* runall --data: the distributions to accumulate are chosen by the analyses of the worst sample,
 * known only after the pass, unless --plot-nodes names them (names[n_names]): then the pass
 * accumulates those (analysis/dist's candidates, qr_dist_acc_init_all; have_axis/axis:
 * --channel-axis). Called before the pass; sets the match hook. */
static QrStatus qr_dsstat_dist_all(QrDsStatRun *r, const QrSession *s, bool have_axis, int axis, const char *const *names,
                                   int n_names);
/* After the pass: sets up the requested distributions (dset: runall's), takes their data from
 * the candidates (which are freed) and returns in *pending how many are left without data (no
 * candidate of that value and geometry: the caller runs the samples again for them, through the
 * match hook, which then feeds only those). */
static QrStatus qr_dsstat_dist_begin(QrDsStatRun *r, const QrSession *s, QrDistSet *dset, int *pending);
static QrStatus qr_dsstat_base_tap(void *user, const QrGraph *g, int node, int value, const QrTensor *t);
/* After the samples: the profiles over the set written into dir (model0_/model1_statistic.*,
 * replacing the worst sample's), the distributions' data replaced by the set's. */
static QrStatus qr_dsstat_run_finish(QrDsStatRun *r, const QrSession *s, const char *data_dir, const char *dir);
static void qr_dsstat_run_free(QrDsStatRun *r);
/* Its .qrpart sections (put / merge): analysis/dspart (qr_dspart_dsstat_*, qr_dspart_dsprof_*). */
/* r's profiles += b's (same graphs), with b's sample count and coverage. */
static QrStatus qr_dsstat_prof_add(QrDsStatRun *r, const QrDsStatRun *b);

#endif
