/* analysis/dataset — analyses over a whole data set (hmct's calibration_data): the sample
 * listing, and the per-layer comparison pooled over every sample with per-sample columns,
 * one row per graph output and the per-sample ranking. Only accumulators are kept. */
#ifndef QR_DATASET_H
#define QR_DATASET_H

/* The set (QrDsSet: its listing and reading) is analysis/dsset's. */

/* ==== the comparison over a data set ================================================== */

typedef struct QrDsSplit {   /* a row's error split pooled over the samples (exact sums) */
    int64_t samples, n, n_clip;
    uint8_t parts;           /* QR_SPLIT_* */
    bool per_channel;        /* a per-channel output quantizer: steps_rms is not pooled */
    int w_channel;           /* the weight's worst channel (the same weights in every sample), -1 */
    int w_quant, i_quant;    /* the layer's weight / input quantizer, -1 */
    double w_share;
    QrXSum s[6];             /* sw, si, s_round, s_clip, s_noise, su2 */
} QrDsSplit;

typedef struct QrDsRow {     /* one compare_per_layer_out row */
    int match;
    QrDsPool pool, local;    /* the full run's metrics, the shadow run's */
    QrDsList list;           /* per sample: Cosine, SQNR, KL terms */
    int64_t n_m, n_local;    /* samples that gave the row metrics */
    bool has_lsb;
    int64_t lsb_n, lsb_diff, lsb_max, lsb_ties;   /* --mode both: summed over samples (max: largest) */
    QrDsSplit split;
} QrDsRow;

typedef struct QrDsOut {     /* one graph output */
    QrDsPool pool;
    QrDsList list;
    bool cls;                /* 2-D [batch, classes]: top-k columns */
    int64_t rows, agree;     /* batch rows seen, rows whose top-1 agrees */
    int64_t top5_hits, top5_den;   /* classes shared by the two top-5 sets, and the possible */
    int32_t *flips;          /* per sample: rows whose top-1 flips */
    bool tok_out;            /* a logits output: judged per token (analysis/tokens; labels: input_ids shifted) */
    QrTokAcc tok;
} QrDsOut;

/* The worst sample so far's own comparison (runall: qr_ds_compare_worst before the pass), what
 * the analyses of the worst sample take from the pass instead of comparing that sample again. */
typedef struct QrDsWorst {
    bool on;
    int k;                   /* the sample (-1: none yet) */
    QrMetricKind metric;     /* ranked as qr_ds_rank_samples(metric) ranks: k ends as its first */
    QrCompare cmp;           /* its rows and output metrics as its pass measured them (first_drop -1; the shadow
                              * run's rows carry no Rtol, which no table reads; split_exec: its own runs') */
    bool want_outs;
    QrTensor *outs;          /* want_outs: its analysis outputs as float32 ([s->b->n_outputs]) */
    QrStats *a_last;         /* [a->n_values]: each sample's analysis-model statistics, filled by the caller's
                              * hooks->tap (analysis/dsstat's QrStatSet.last; NULL: not kept) */
    const bool *a_seen;      /* the values that tap sees (every sample's run taps the same ones) */
    QrStats *stats;          /* the worst's copy of a_last, when hooks->tap saw the analysis model's run */
    /* qr_ds_compare_worst_base: its baseline values too (what the session's baseline run on it would give) */
    int base_k;              /* the sample whose baseline values these are (-1: none) */
    int n_base;              /* s->m.n */
    QrTensor *base, *base_out, *base_off;   /* copies of s->base [m.n], base_out [b->n_outputs], base_off [m.n] (NULL
                                             * unless the pass computed them on it: its first sample);
                                             * their buffers reused from one worst to the next */
    QrStats *b_last;         /* [b->n_values]: each sample's baseline statistics, filled by the caller's base_tap
                              * (analysis/dsstat's QrStatSet.last) */
    const bool *b_seen;      /* the values that tap sees */
    QrStats *b_stats;        /* the worst's copy of b_last */
} QrDsWorst;

typedef struct QrDsCompare {
    int n_samples;           /* samples in the set (indices 0 .. n_samples-1) */
    const char *const *names;   /* [n_samples] (borrowed) */
    int n_rows;
    QrDsRow *rows;
    int n_outs;
    QrDsOut *outs;
    QrMetrics *smp;          /* per sample: model outputs concatenated (or output rank_output alone) */
    int rank_output;         /* -1 (qr_ds_compare_init), or the graph output the samples are ranked by (--rank-output) */
    int64_t *smp_in_bad;     /* per sample: NaN/Inf elements in its inputs */
    uint8_t *done;           /* per sample: processed */
    int n_done;
    /* Optional per-sample consumers (set by the caller after init; not merged): base_tap sees
     * every value of each sample's baseline run, hooks the analysis model's run (compare.h
     * QrCmpHooks) — the same runs the comparison reads, nothing run twice. */
    QrTapFn base_tap;
    void *base_tap_user;
    QrStats *base_stats;     /* optional [s->b->n_values]: the baseline run's statistics (QrBaseRunOpts.stats/seen) */
    bool *base_seen;
    QrCmpHooks *hooks;
    /* Optional: called once a sample is compared (d->smp[k] set), the session still on it (its
     * baseline values are sample k's). */
    QrStatus (*sample_done)(void *user, QrSession *s, int k, const QrTensor *in);
    void *sample_done_user;
    bool skip_bad;           /* --skip-bad-samples: qr_ds_pass records a sample that cannot be read and goes on */
    uint8_t *skipped;        /* per sample: skipped (unreadable, wrong shape / dtype) */
    char **skip_why;         /* per skipped sample: the error naming it (malloc'd) */
    int n_skipped;
    bool part;               /* a shard's pass (--shard): a range whose samples were all skipped is no error (merge checks the set) */
    /* The pass's keeper (qr_ds_compare_keep, before the pass): the `keep` worst samples by
     * keep_metric so far (qr_ds_rank_samples' order: the kept set ends as that ranking's first
     * `keep`), each with its tensors and the baseline's outputs on it — what the steps after the
     * pass take instead of reading a sample again or running its baseline: the worst sample's
     * tensors (runall's analyses, badcase.npy) and the data-set sensitivity's samples. */
    int keep, n_kept;
    QrMetricKind keep_metric;
    QrSensSample *kept;      /* [keep], any order */
    int n_in;                /* the session's graph inputs (a kept sample's tensors) */
    QrDsWorst worst;         /* qr_ds_compare_worst */
    /* the prepared comparison, reused by every sample (qr_ds_compare_sample .. qr_ds_compare_end) */
    QrSession *s;
    struct QrCmpPlan *plan;
    QrCompare cmp;
    QrMetricAcc *acc;        /* per match: the full and shadow run's of the current sample */
    QrTensor *cur_outs;      /* the current sample's analysis outputs */
} QrDsCompare;

/* Sets up the rows of s (matched values, in compare's order) for n samples named names. */
static QrStatus qr_ds_compare_init(QrDsCompare *d, const QrSession *s, int n, const char *const *names);
static void qr_ds_compare_free(QrDsCompare *d);
/* The pass keeps the keep worst samples by metric (keep <= 0: none); call after init, before the
 * pass. The kept samples are freed with d (qr_ds_compare_free) or by qr_ds_kept_free. */
static QrStatus qr_ds_compare_keep(QrDsCompare *d, int keep, QrMetricKind metric);
/* The pass keeps the worst sample so far's own comparison in d->worst (by metric; want_outs:
 * its analysis outputs too; a_stats: keep its analysis-model statistics, which the caller's
 * hooks->tap writes into d->worst.a_last, a [s->a->n_values] array allocated here, for the
 * values a_seen marks). Call after init, before the pass; freed with d or by qr_ds_worst_free. */
static QrStatus qr_ds_compare_worst(QrDsCompare *d, const QrSession *s, QrMetricKind metric, bool want_outs, bool a_stats,
                                    const bool *a_seen);
/* The same keeps the worst sample so far's baseline values (d->worst.base, base_out, base_off) and
 * statistics, which the caller's base_tap writes into d->worst.b_last, a [s->b->n_values] array
 * allocated here, for the values b_seen marks. Call after qr_ds_compare_worst. */
static QrStatus qr_ds_compare_worst_base(QrDsCompare *d, const QrSession *s, const bool *b_seen);
static void qr_ds_worst_free(QrDsCompare *d);
/* Sample k if the pass kept it, else NULL. */
static const QrSensSample *qr_ds_kept(const QrDsCompare *d, int k);
static void qr_ds_kept_free(QrDsCompare *d);
/* Runs the comparison of sample k (inputs in: the session is pointed at them with
 * qr_session_next_inputs) and adds it to d. The first call prepares the comparison (the plan,
 * the int lowering, the match verified once — or kept when s already verified it); every later
 * call runs only the sample's model runs through it (mode must stay the same). base_tap and
 * hooks, when set before the first call, hear every value of the runs. */
static QrStatus qr_ds_compare_sample(QrDsCompare *d, QrSession *s, const char *mode, int k, const QrTensor *in);
#ifdef QR_TESTING
/* Test-only, process-wide: qr_ds_compare_sample calls (atomic): the samples compared through the pass. */
QR_TESTAPI extern int64_t qr_ds_compared;
#endif
/* Ends a pass: frees the prepared comparison and the per-sample buffers (the accumulators stay).
 * s->inputs still points at the last sample's. Called by qr_ds_compare_free too. */
static void qr_ds_compare_end(QrDsCompare *d);
/* One pass over the samples [lo, hi) of ds: each read (checked against ref's dtypes and shapes),
 * compared into d, its tensors freed before the next is read; then qr_ds_compare_end. With
 * d->skip_bad, a sample that cannot be read (corrupt, wrong shape or dtype) is recorded in d
 * (skipped, skip_why) and the pass goes on; it fails when no sample is left.
 * Progress steps through hook (optional). */
static QrStatus qr_ds_pass(QrDsCompare *d, QrSession *s, const QrDsSet *ds, const char *mode, int lo, int hi,
                           const QrTensor *ref, const QrStepHook *hook);
/* a += b (same rows; every sample in at most one of them: a sample in both fails, named). */
static QrStatus qr_ds_compare_merge(QrDsCompare *a, const QrDsCompare *b);
/* Samples ranked worst first by metric (NaN first), ties by index: order[n_done]. */
static void qr_ds_rank_samples(const QrDsCompare *d, QrMetricKind metric, int *order);
/* compare_per_layer_out.txt/.csv (REPORT.md columns pooled + the data-set columns),
 * compare_outputs.txt/.csv, samples.txt/.csv and badcase.npy (badcase_<input>.npy for
 * several inputs; the worst sample by metric: kept by the pass, else — a merged comparison —
 * read from the set) into dir. */
static QrStatus qr_ds_compare_write(const QrDsCompare *d, const QrSession *s, const QrDsSet *ds, QrMetricKind metric,
                                    const char *dir);
/* The pooled metrics of row k / output j. */
static void qr_ds_row_metrics(const QrDsRow *r, QrMetrics *m, QrMetrics *local);
static void qr_ds_out_metrics(const QrDsOut *o, QrMetrics *m);

#endif

/* ==== runall --data (runall/runall.c's hooks) =============================================
 * One pass over the set before runall's analyses (the bad-case search of earlier versions is
 * this pass): every sample compared through one prepared comparison, the samples ranked, and
 * the worst one read for the analyses that need one concrete input. Its tables go into
 * DIR/dataset/, summarized in summary.json ("dataset") and the HTML (a data-set section). */
typedef struct QrDsRunall {
    bool on, ok;
    QrDsCompare dc;
    QrDsStatRun x;           /* analysis/dsstat: both profiles and the distributions over the set */
    QrMetricKind metric;
    const QrDsSet *ds;
    int worst;               /* the worst sample's index (by metric at the model outputs) */
    QrTensor *worst_in;      /* its tensors, one per graph input: the analyses' inputs */
    const char *one_name;    /* qr_ds_runall_one: the sample's name */
} QrDsRunall;
/* The pass (ref: the first sample's tensors the graphs were inferred on; progress through
 * s->progress; rank_output: -1, or the one graph output the samples are ranked by), then the
 * worst sample's tensors in r->worst_in and the session pointed at it. The pass's runs also feed
 * both profiles over the set (analysis/dsstat) through the comparison's taps and, when names
 * (--plot-nodes, n_names > 0; have_axis/axis: --channel-axis) choose the distributions before
 * the pass, the distributions over the set of the activations among them (analysis/dist's
 * candidates). Its keeper keeps the `keep` worst samples' tensors and baseline outputs (r->dc.kept:
 * the data-set sensitivity's samples, qr_ds_runall_sens; keep <= 0: QR_SENS_SAMPLES_DEFAULT); the
 * worst sample's tensors are copied from there rather than read again. */
static QrStatus qr_ds_runall_pass(QrDsRunall *r, const QrDsSet *ds, QrMetricKind metric, int rank_output, bool skip_bad,
                                  QrSession *s, const char *mode, const QrTensor *ref, bool have_axis, int axis,
                                  const char *const *names, int n_names, int keep);
/* After the analyses of the worst sample: the dataset/ tables into dir/dataset, the profiles
 * over the set (model0/1_statistic, replacing the worst sample's) and, when dist (runall's
 * distributions of the worst sample; NULL: none) holds activations that can be accumulated,
 * their data over the set: taken from the pass when --plot-nodes chose them before it, else (the
 * most sensitive ones of the worst sample, known only after the pass) by a second pass: each
 * sample's baseline and analysis runs once more, without the shadow run, tapping only those
 * activations. r->ok records the outcome for the json / HTML. */
static QrStatus qr_ds_runall_write(QrDsRunall *r, QrSession *s, const char *mode, QrDistSet *dist, const char *dir);
static void qr_ds_runall_json(QrJson *j, const QrDsRunall *r, const QrSession *s);
static void qr_ds_runall_html(QrHtml *h, const QrDsRunall *r, const QrSession *s, const char *dir);
/* runall --data: sensitivity (o) and the cumulative error on the k worst samples of r's
 * comparison (k <= 0: the default; analysis/sens's qr_sens_set_run, on the samples the pass kept:
 * only the variant runs; the kept samples are freed afterwards), written into DIR/dataset/
 * (sensitive_ops.*, accumulated_error.csv) with plots/dataset_samples.png (the samples ranked)
 * and plots/dataset_accumulated_error.png (mean with the p05-p95 band); summary.json
 * "dataset_sensitivity" and the HTML data-set section (qr_sens_set_json / _html). worst_rows
 * (optional): the worst sample's rows as runall's sensitivity stage ran them (qr_sens_run_keep),
 * taken for that sample instead of running them again. */
static QrStatus qr_ds_runall_sens(QrSensSet *ss, QrSession *s, QrDsRunall *r, const QrSensOpts *o, int k,
                                  const int *topk, int n_topk, const QrAccSets *sets, QrMetricKind acc_metric,
                                  const QrSensResult *worst_rows,
                                  const char *dir);
/* runall with one input (-i, or random inputs): the same pass over a one-sample set (in, named
 * name in errors), whose comparison the match stage takes as --data's worst sample's
 * (qr_ds_runall_take_worst). base_stats/base_seen receive the baseline run's statistics, hooks
 * (optional) hear the analysis model's run. The session stays on in, its baseline values those of
 * the pass; r->on stays false (no data-set tables). On failure nothing is kept (qr_ds_runall_free). */
static QrStatus qr_ds_runall_one(QrDsRunall *r, QrSession *s, const char *mode, const QrTensor *in, const char *name,
                                 QrStats *base_stats, bool *base_seen, QrCmpHooks *hooks);
/* runall's match stage: the worst sample's comparison as the pass measured it, moved into *c
 * (first_drop by cos_threshold), its analysis outputs into keep_outs (when given: s->keep_outs)
 * and, when the pass saw the analysis model's own run (sim, both), its statistics into stats /
 * seen (*stats_done). False, nothing set, when the pass kept none (qreport merge): then compare
 * it. After qr_ds_runall_one, the one-sample set is freed. */
/* runall --data's prepare stage, after the pass: the worst sample's baseline values as the pass's
 * baseline run made them, moved into s (qr_session_base_swap: no baseline run on it again), and its
 * statistics into stats / seen (both optional; initializers added as qr_session_run_baseline_ex adds
 * them). False, nothing set, when the pass kept none (--max-memory, qreport merge, out of memory). */
static bool qr_ds_runall_take_base(QrDsRunall *r, QrSession *s, QrStats *stats, bool *seen);
static bool qr_ds_runall_take_worst(QrDsRunall *r, const QrSession *s, double cos_threshold, QrCompare *c,
                                    QrTensor *keep_outs, QrStats *stats, bool *seen, bool *stats_done);
static void qr_ds_runall_free(QrDsRunall *r);
/* The same with the comparison already merged from parts (qreport merge of runall --shard parts;
 * merged: for the same rows and sample list) and, when stat is given, both profiles merged from
 * the parts' "dsprof" sections; the distributions over the set are accumulated here (a pass of
 * this process's own, as qr_ds_runall_write's for activations without a candidate; worst: the worst sample's tensors, the session's inputs). */
static QrStatus qr_ds_runall_merged(QrDsRunall *r, const QrDsSet *ds, QrMetricKind metric, int rank_output, QrSession *s,
                                    const QrDsCompare *merged, const QrDsStatRun *stat, const char *mode, QrDistSet *dist,
                                    const QrTensor *worst, const char *dir);
