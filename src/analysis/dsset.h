/* analysis/dsset — data folders (hmct-debugger's calibration_data): the layouts, the sample
 * files in natural order, and a set's listing and reading, checked against the model's inputs.
 * Below everything that runs a data set (sens, badcase, dsstat, dataset, dspart). */
#ifndef QR_DSSET_H
#define QR_DSSET_H

/* Data folder layouts (hmct-debugger's calibration_data):
 *   folders: DIR/<input name>/0.npy, 1.npy, ... — one folder per model input; a folder may
 *            also be named after the input with characters outside [A-Za-z0-9._-] replaced
 *            by '_'. Samples are matched across inputs by file name.
 *   flat:    DIR/<name>.npy — single-input models only.
 * Samples are ordered by file name, numeric names ("2.npy" < "10.npy") first. */
/* Sample files: a .npy, or a .pb (an ONNX TensorProto, as in ONNX's test data). */
static QrStatus qr_dsset_sample_read(const char *path, QrTensor *t);
/* qsort order of sample file names: numeric stems first, by value, then the rest by strcmp. */
static int qr_dsset_file_cmp(const void *pa, const void *pb);
static bool qr_dsset_is_dir(const char *path);
/* The regular *.npy and *.pb files of dir, sorted (names in a). */
static QrStatus qr_dsset_list_npy(QrArena *a, const char *dir, const char ***out, int *n_out);

/* A data folder (the layouts above): folders[k] for input k, and the sample
 * file names in natural order (numeric stems first: 2.npy < 10.npy), the same set in every
 * input folder. */
typedef struct QrDsSet {
    QrArena arena;
    const char *dir;
    bool folders;            /* one sub-folder per input (else flat, one input) */
    int n_inputs;
    const char **input_names;
    const char **folder;     /* per input */
    int n;                   /* samples used (the first --samples N, else all) */
    int n_found;             /* samples in the folder */
    const char **names;      /* [n] file names */
    int held;                /* the sample a command read while loading the model (its graphs are inferred on
                              * it; cli's qr__cli_prepare), whose tensors it passes to the pass as ref: not read
                              * again (qr_ds_pass); -1: none (qr_dsset_list) */
} QrDsSet;

/* Lists dir for b's inputs; max_samples <= 0: all. Fails naming the folder for a missing
 * input folder, an empty folder, and file sets that differ between input folders. */
static QrStatus qr_dsset_list(const QrGraph *b, const char *dir, int max_samples, QrDsSet *out);
static void qr_dsset_free(QrDsSet *ds);
/* Reads sample k into in[n_inputs] (caller frees the data) and checks it against b's inputs
 * and, when ref is given, against ref's dtypes and shapes (the first sample's: graphs are
 * inferred once). Errors name the file. */
static QrStatus qr_dsset_read(const QrDsSet *ds, const QrGraph *b, int k, const QrTensor *ref, QrTensor *in);
#ifdef QR_TESTING
/* Test-only, process-wide: samples qr_dsset_read has read (atomic). Tests count how often a
 * command reads each sample (issue 30: once). */
QR_TESTAPI extern int64_t qr_dsset_reads;
#endif

#endif
