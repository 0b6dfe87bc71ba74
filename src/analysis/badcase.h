/* analysis/badcase — bad-case search (QuantAnalysis.auto_find_bad_case): run the baseline
 * and the analysis model on every sample of a data folder, measure the model outputs, keep
 * the per-sample metric list and the worst sample as the bad case. */
#ifndef QR_BADCASE_H
#define QR_BADCASE_H

/* The data folder layouts: analysis/dsset.h. */
typedef struct QrBadcaseSample {
    const char *file;        /* file name ("0.npy") */
    QrMetrics m;             /* all model outputs concatenated, baseline vs analysis */
} QrBadcaseSample;

typedef struct QrBadcase {
    QrArena arena;
    const char *dir;
    bool folders;            /* layout used */
    QrMetricKind metric;
    int n_inputs;
    const char **input_names;
    int n;                   /* samples evaluated */
    QrBadcaseSample *samples;
    int n_total;             /* samples found in the folder (n <= n_total with --num-steps) */
    int worst;               /* index into samples: the largest qr_metric_badness (NaN counts as worst) */
    QrTensor *inputs;        /* [n_inputs] the worst sample's tensors (owned) */
} QrBadcase;

/* Runs b and a (the analysis model as given: sim mode) on up to num_steps samples of dir
 * (<= 0: all). Graphs are re-inferred when a sample's shapes differ from the current ones
 * and are left inferred on the worst sample's shapes. Fails naming the file for unreadable,
 * malformed or mismatching (dtype/shape) samples, a missing input folder, or an empty folder.
 * progress (may be NULL) hears of every sample. */
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_badcase_search(QrGraph *b, QrGraph *a, const char *dir, int num_steps, QrMetricKind metric,
                                  const QrStepHook *progress, QrBadcase *out);
#endif
/* The same, measured at graph output `only` alone (--rank-output; -1 = all outputs). */
static QrStatus qr_badcase_search_at(QrGraph *b, QrGraph *a, const char *dir, int num_steps, QrMetricKind metric, int only,
                                     const QrStepHook *progress, QrBadcase *out);
static void qr_badcase_free(QrBadcase *bc);
/* Into dir: badcase.npy (single-input models) or badcase_<input>.npy per input (several
 * inputs; names made file-safe), and badcase_list.txt/.csv: index, sample, L1, Cosine,
 * MSE, KL, SQNR, nonfinite, worst — one row per sample in data order. */
static QrStatus qr_badcase_write(const QrBadcase *bc, const char *dir);
#endif
