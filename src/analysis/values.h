/* analysis/values — the per-layer values of a comparison saved to a folder and read back
 * (QuantAnalysis run() + set_model_profiler_dir, Numeric Suite loggers): compare
 * --save-values DIR writes every matched value of both models as .npy with an index, and
 * compare --from-values DIR recomputes the tables from them without running the models. */
#ifndef QR_VALUES_H
#define QR_VALUES_H

/* Writes into dir: input_<k>.npy (the inputs), base_<k>.npy / analysis_<k>.npy / local_<k>.npy
 * for row k of c (the baseline value, the analysis value and the layer re-run on the baseline's
 * inputs, float32 as compared), out_base_<k>.npy / out_analysis_<k>.npy per graph output, and
 * index.tsv: "kind\tindex\tname\tbaseline_file\tanalysis_file\tlocal_file\tbaseline_value\t
 * analysis_value\tverify\tequiv_rel" with kind input, layer (name: baseline node; the pair's
 * verification status and equivalence error) or output, and one "verification" line (ran /
 * not_run). The
 * comparison must have run with s->keep_vals / s->keep_outs set (qr_values_keep). */
static QrStatus qr_values_save(const QrSession *s, const QrCompare *c, const char *dir);
/* Allocates s->keep_vals / keep_outs so the next comparison keeps its values; freed by
 * qr_values_keep_free. */
static QrStatus qr_values_keep(QrSession *s);
static void qr_values_keep_free(QrSession *s);
/* The saved inputs of dir (input_<k>.npy, in order): paths[0..*n) are arena copies (at most
 * cap). Fails when dir has no index.tsv or lists no input. */
static QrStatus qr_values_inputs(const char *dir, QrArena *a, const char **paths, int cap, int *n);
/* Fills c as qr_compare_run would from the values saved in dir for the pair of s (opened,
 * not run): every row's metrics from the saved baseline / analysis / local values, the
 * model-output metrics from the saved outputs. The saved baseline values become the session's
 * (s->base / base_out, as if qr_session_run_baseline had run), so later analyses such as the
 * advisor do not run the baseline either, and the saved pair verification is restored (a pair
 * the saved run's verification moved elsewhere fails: compare directly). Fails, naming the file or row, when dir was
 * saved for other models or a file is missing or malformed. */
static QrStatus qr_values_load_compare(QrSession *s, const char *dir, double cos_threshold, QrCompare *c);

#endif
