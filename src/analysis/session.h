/* analysis/session — one baseline/analysis pair prepared for every analysis:
 * quantizer tables, the match, the float twin that toggled runs execute, the
 * baseline float weights for integer weights, and the equivalence check. */
#ifndef QR_SESSION_H
#define QR_SESSION_H

typedef struct QrSession {
    const QrGraph *b, *a;    /* baseline and analysis model as loaded (shape-inferred; owned by the caller) */
    const QrTensor *inputs;  /* one per graph input (borrowed) */
    QrQuantTable qa;         /* quantizers of the analysis model as given (structure check, match) */
    QrMatchResult m;         /* baseline node output ⇄ analysis value */
    QrTwin tw;               /* what toggled runs execute (a copy of a for QDQ models) */
    QrQuantTable qt;         /* quantizers of the twin: the ones analyses toggle */
    const QrTensor **fw;     /* per qt quantizer: the baseline float weight that replaces it when disabled */
    QrTensor *fw_owned;      /* per qt quantizer: a derived float weight (e.g. transposed) that fw points to */
    int *fw_src;             /* per qt quantizer: the baseline value fw comes from, -1 */
    int n_weight_mismatch;   /* baseline float weights that do not quantize to the integer weights */
    int *vis;                /* per match: the twin value its consumers see, -1 when unmatched */
    int *vis_quant;          /* per match: qt quantizer to dequantize vis with when it holds integers, else -1 */
    /* Baseline values (qr_session_run_baseline): float32 copies, computed once. */
    QrTensor *base;          /* per match: the baseline node's output */
    QrTensor *base_out;      /* per baseline graph output */
    uint8_t *base_gone;      /* per match: its value was dropped (qr_session_base_drop) until qr_session_base_need, or NULL */
    int64_t n_base_exec;     /* nodes executed by the baseline run */
    bool base_quant_off;     /* single-model form: the baseline is a copy of the analysis model run with every one of
                              * its quantizers disabled (set by the caller before the baseline run) */
    /* Quantized baseline (QAT vs quantized, int16 vs int8, QDQ vs its QOperator form; qr_session_baseline_form):
     * the baseline runs twice — with every one of its quantizers disabled, for the pair verification (base_off),
     * and as given, for the comparison (base, at the values its consumers see: b_vis). */
    QrQuantTable qb;         /* quantizers of the baseline itself (none for a float baseline) */
    bool base_quant;         /* the baseline has quantizers of its own (also true in the single-model form) */
    int *b_vis;              /* per match: the baseline value its consumers see (after its own Q->DQ), else b_value */
    QrTensor *base_off;      /* per match: the baseline value with its quantizers off (quantized pair form only), or NULL */
    bool base_off_stale;     /* base_off belongs to other inputs: once the match is fixed (data sets), a baseline run
                              * does not repeat the quantizers-off run, which only proves pairs (qr_session_base_off_need) */
    QrStepHook progress;     /* set by the caller: long analyses (sensitivity, cumulative error, what-if,
                              * distributions) report their steps through it */
    struct QrSeRef *ref;     /* the all-on reference (qr_session_ref), NULL until built */
    struct QrSeMemo *memo;   /* model-output metrics of runs under other overrides (qr_session_memo_*), or NULL */
    /* A cache an analysis above the session keeps for the current inputs (sensitivity's reference
     * run done ahead, which tests make: qr_sens_reference), or NULL, and the function that frees it:
     * qr_session_next_inputs and qr_session_close call input_cache_free(input_cache, twin values). */
    void *input_cache;
    void (*input_cache_free)(void *cache, int n_values);
    /* Optional, set by the caller before a comparison (compare --save-values): that comparison
     * keeps float32 copies of what it compared — keep_vals[2*i] the analysis value of match i,
     * keep_vals[2*i+1] its local (shadow) value; keep_outs[k] the analysis model's output k. */
    QrTensor *keep_vals, *keep_outs;
    bool no_incremental;     /* no all-on reference: cumulative error and what-if re-run the whole twin every
                              * time (tests compare both; qr_session_low_memory sets it) */
    bool low_memory;         /* --max-memory (qr_session_low_memory): jobs one at a time, no all-on reference */
    bool int16_integer;      /* --int16 integer: the int mode lowers 16-bit Q/DQ groups too (quant/lower) */
    bool no_error_split;     /* --no-error-split: comparisons measure no error split (analysis/compare: no part runs,
                              * the rows' split stays unmeasured) */
    /* Data sets (qr_session_next_inputs): the baseline values belong to earlier inputs; the next
     * baseline run refills their buffers in place (no per-sample allocations). */
    bool base_stale;
    /* Data sets: set once the match has been verified on the first sample; later baseline runs
     * (other samples) keep it instead of verifying again (one model run fewer per sample, and the
     * rows stay the same for every sample). */
    bool match_fixed;
    /* The equivalence check's result as the verification run computed it (the same run: the twin
     * with every quantizer off against these baseline values), kept when that verification moved no
     * pair; qr_session_equivalence copies it instead of running again. NULL otherwise. */
    struct QrEquivResult *eq_kept;
} QrSession;

/* Prepares the pair (b and a shape-inferred on inputs). */
static QrStatus qr_session_open(QrSession *s, const QrGraph *b, const QrGraph *a, const QrTensor *inputs);
static void qr_session_close(QrSession *s);
/* Single-model form (runall ANALYSIS.onnx; b a copy of a): the baseline run disables b's quantizers
 * (integer weights stay at their dequantized values; a quantizer whose zero point is its type's
 * minimum keeps its clip at 0, the Relu it implements). Call after open, before the baseline run. */
static void qr_session_single_model(QrSession *s);

/* The baseline form, as the report names it: "float vs quantized", "QAT vs quantized" (fake-quantized
 * float weights vs integer-stored ones), "quantized vs quantized (int16 vs int8)" (or e.g. "int8 vs int8
 * QOperator"), "single model: quantizers off vs on". Set by qr_session_open and qr_session_single_model
 * (s->m.form, in the match's arena); "" when it could not be kept (out of memory). */
static const char *qr_session_baseline_form(const QrSession *s);
/* One sentence saying what the baseline of that form is and how pairs are proven (a literal). */
static const char *qr_session_baseline_form_text(const QrSession *s);

/* Runs the baseline once and keeps its matched values and outputs. The models
 * must have the same number of graph outputs (compared by position). A quantized
 * baseline (s->base_quant outside the single-model form) runs twice: with its
 * quantizers off (base_off, what the pairs are proven on) and as given (base, base_out:
 * what every analysis compares with); one whose quantizers cannot be disabled
 * (QOperator / integer-op) is refused. */
static QrStatus qr_session_run_baseline(QrSession *s);
/* The same, feeding o's consumers (all optional) when this call runs the baseline (it has not run
 * yet, or is stale): stats and seen (n_values entries of b each; both or neither) filled as
 * qr_stats_collect(b) would (runall's baseline profile); tap called on every value of the run
 * (data sets: the profile and distributions over every sample, analysis/dataset's taps). */
typedef struct QrBaseRunOpts {
    QrStats *stats;
    bool *seen;
    QrTapFn tap;
    void *tap_user;
    /* Optional, per match: only these values are wanted (analysis/compare's pairs-only runs: runall
     * --data's distributions' second pass). With the match fixed and no stats or tap, the run computes
     * the graph only up to them (no graph outputs, no quantizers-off run) and refills only them, with
     * the bits a whole run gives them; s stays stale (its other values, base_out and base_off are
     * another input's). */
    const uint8_t *want;
} QrBaseRunOpts;
static QrStatus qr_session_run_baseline_ex(QrSession *s, const QrBaseRunOpts *o);
/* Data sets: the baseline values of s's current inputs from an earlier run on the same tensors (runall
 * --data: the pass kept the worst sample's, analysis/dataset's QrDsWorst) instead of running it again:
 * base [m.n], base_out [b->n_outputs] and base_off ([m.n], or NULL: then s's stay stale, run when read:
 * qr_session_base_off_need) are swapped with s's stale ones, which the caller gets back to free; s is
 * no longer stale. False, nothing done, when
 * s has no baseline values to swap with (no run yet) or is not stale. */
static bool qr_session_base_swap(QrSession *s, QrTensor *base, QrTensor *base_out, QrTensor *base_off);
/* Baseline values kept only while a consumer reads them (memory: for a transformer they are about
 * the sum of its activations, as much as the models' weights). qr_session_base_drop frees every
 * value of s->base that keep (per match; NULL: none) does not mark: readers then see data == NULL,
 * and qr_session_run_baseline does not bring it back. qr_session_base_need brings back the dropped
 * values want marks (per match; NULL: all) with one more baseline run that keeps only those: the
 * same bits (same graph, inputs and overrides; no verification, statistics or taps). base_out and
 * base_off stay. Without a baseline run yet, base_need runs it (qr_session_run_baseline). */
/* A quantized baseline's quantizers-off values (base_off) for the current inputs, which the equivalence
 * check reads: run when they belong to other inputs (a data set's baseline runs after the first sample
 * skip that run: the match is fixed; base_off_stale) and the baseline values are current. */
static QrStatus qr_session_base_off_need(QrSession *s);
#ifdef QR_TESTING
/* Test-only, process-wide: the quantized baseline's quantizers-off runs made (atomic). */
QR_TESTAPI extern int64_t qr_session_base_off_runs;
#endif
static void qr_session_base_drop(QrSession *s, const bool *keep);
static QrStatus qr_session_base_need(QrSession *s, const bool *want);
/* Data sets: points s at the next sample's inputs (same dtypes and shapes). The baseline values
 * become stale (the next qr_session_run_baseline refills their buffers, without another
 * verification once match_fixed is set); the all-on and sensitivity references, which belong to
 * the old inputs, are freed. */
static void qr_session_next_inputs(QrSession *s, const QrTensor *inputs);

/* Executor overrides for a mask over s->qt (enabled[i]; NULL = all enabled).
 * The arrays are per twin value, allocated by the caller (qr_session_overrides_alloc). */
typedef struct QrOverrides {
    int *alias;
    const QrTensor **subst;
    float *clamp_lo, *clamp_hi;
} QrOverrides;
static QrStatus qr_session_overrides_alloc(const QrSession *s, QrOverrides *o);
static void qr_session_overrides_free(QrOverrides *o);
static void qr_session_overrides(const QrSession *s, const bool *enabled, QrOverrides *o);
static QrRunOpts qr_session_run_opts(const QrOverrides *o, QrTapFn tap, void *user);

/* The twin value of match i as float32 (dequantized when it holds integers). */
static QrStatus qr_session_visible_f32(const QrSession *s, int i, const QrTensor *t, QrTensor *out);
/* The same without a copy when t already is float32: *data points into t, or into *tmp
 * (then owned by the caller: free with qr_tensor_free_data; tmp is zeroed otherwise). */
static QrStatus qr_session_visible_view(const QrSession *s, int i, const QrTensor *t, QrTensor *tmp, const float **data);

/* Independent jobs (model runs) on the thread pool: fn(ctx, k, tid) for every k in [0, n),
 * one job per task (kernels called inside run serially), tid selecting per-thread scratch.
 * Each job's result must depend on k alone, so any thread count gives the same bits. The
 * progress hook (optional) hears (jobs started, n) before each job, in order. Returns the
 * status of the lowest failing k with its message (each job's message is kept), else QR_OK. */
typedef QrStatus (*QrSeJobFn)(void *ctx, int k, int tid);
/* s (optional): its low_memory runs the jobs one at a time, in order, on the caller's thread. */
static QrStatus qr_session_jobs(const QrSession *s, int n, QrSeJobFn fn, void *ctx, const QrStepHook *progress);

/* Memory over time (--max-memory, whose estimate counts one execution and no reference): s's
 * jobs run one at a time and it keeps no all-on reference (no_incremental). Call right after
 * qr_session_open, before any analysis. */
static void qr_session_low_memory(QrSession *s);

/* ==== the all-on reference: incremental re-runs of the twin ============================
 * The twin with every quantizer on runs once; every value it computes is kept (constants,
 * e.g. weights through QuantizeLinear -> DequantizeLinear, in a run cache, the rest as
 * copies). A run under other overrides then executes only the cone of nodes that read an
 * overridden value, and everything downstream of them, and reads the rest from the
 * reference: the results are those of a full run (tests compare both). Cumulative error,
 * what-if and distributions use it; the caller frees it when they are done (memory). */
typedef struct QrSeRef {
    QrTensor *vals;          /* per twin value: copy of the all-on value (computed, not cached constants) */
    QrRunCache *consts;      /* the twin's constants */
    QrMetrics out;           /* model-output metrics under all-on */
    QrMetrics *per_match;    /* per match under all-on (built by the cumulative error), or NULL */
    bool per_match_kl;       /* per_match includes KL */
} QrSeRef;

/* Model-output metrics of twin runs under other overrides (qr_session_memo_*): the cumulative
 * error's settings, which what-if's float runs may repeat. Made by qr_session_open (s->memo) and
 * emptied with the all-on reference (qr_session_ref_free: the inputs change, or its last user is
 * done), not built with it: a whole run's metrics (runall's cumulative error) serve the
 * incremental runs after it (the same bits, tests/test_incr.c). */
typedef struct QrSeMemo {
    struct { QrOverrides ov; QrMetrics out; } e[16];
    int n;
    pthread_mutex_t mu;
} QrSeMemo;

/* Builds s->ref unless it exists (*built, optional, tells). The building run also calls tap
 * (optional) for the values tap_only marks (NULL: all) — e.g. per-match metrics under
 * all-on, which the caller may store in s->ref->per_match (malloc'd; freed with the ref).
 * Fails only on run errors / out of memory (s->ref stays NULL). */
static QrStatus qr_session_ref(QrSession *s, QrTapFn tap, void *user, const bool *tap_only, bool *built);
/* The same, the building run also carrying ride's edit (edit, edit_user, edit_on; NULL: none) — an
 * edit that changes nothing, e.g. the fragility's unperturbed record (qr_frag_ride_opts), so that run is
 * made once for both — and handing its outputs to outs_keep (optional, tw.g's n_outputs tensors; the
 * caller frees their data) when this call builds the reference. */
static QrStatus qr_session_ref_ride(QrSession *s, QrTapFn tap, void *user, const bool *tap_only, const QrRunOpts *ride,
                                    QrTensor *outs_keep, bool *built);
static void qr_session_ref_free(QrSession *s);
/* Remembers the model-output metrics of a twin run under overrides ov (a copy is kept; at
 * most 16 entries), and finds those of a run under the same effective overrides (alias,
 * substitution and clamp arrays equal). Thread-safe; no-ops without s->memo (out of memory). */
static void qr_session_memo_put(QrSession *s, const QrOverrides *ov, const QrMetrics *out);
static bool qr_session_memo_get(QrSession *s, const QrOverrides *ov, QrMetrics *out);
/* Runs g — the twin, or a copy of it that keeps the twin's node and value indices and adds
 * values after them (what-if) — under ro's overrides, edits and taps, re-executing only the cone
 * of nodes that read an overridden value and of the nodes of edited values (ro->edit_on); outputs as qr_run. ro must not set live, feed or
 * cache. live (optional, g->n_nodes entries) receives the cone: a tap sees only values of
 * nodes in it (others equal the reference's). Needs s->ref. */
static QrStatus qr_session_run_inc(const QrSession *s, const QrGraph *g, const QrRunOpts *ro, QrTensor *outs, bool *live);


/* The equivalence check (QrEquivResult: analysis/match.h). */
static QrStatus qr_session_equivalence(const QrSession *s, QrEquivResult *out);

/* Model-output metrics of an analysis-model run: its outputs outs against the baseline's
 * (s->base_out), KL per token for logits outputs. */
static QrStatus qr_session_compare_outputs(const QrSession *s, const QrTensor *outs, QrMetrics *m);
/* The same at one graph output (only: its index; -1 = all, as qr_session_compare_outputs). */
static QrStatus qr_session_compare_outputs_sel(const QrSession *s, const QrTensor *outs, int only, QrMetrics *m);

#endif
