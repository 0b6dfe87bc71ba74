/* analysis/tokens — a language model's output judged per token: for a logits output
 * ([batch, sequence, vocab], or named "logits"), each token's KL(baseline || analysis) of the softmax
 * over the vocabulary, top-1 / top-5 agreement, the change of the baseline top token's probability,
 * and with labels the negative log-likelihood of both models (docs/REPORT.md, compare_outputs). */
#ifndef QR_TOKENS_H
#define QR_TOKENS_H

#define QR_TOK_WORST 5           /* worst tokens kept (by KL) */

typedef struct QrTokWorst {
    double kld;
    int sample;                  /* data-set sample index (0 for one input) */
    int64_t batch, pos;          /* where in the output: batch row, position along the sequence */
    int64_t base_top1, ana_top1; /* each model's arg-max token */
} QrTokWorst;

/* Accumulates the tokens of one output over one input or many samples. Every per-token value is
 * kept (the percentiles need them) and the statistics sum sorted copies, so they do not depend on the
 * order tokens or samples were added in, bit for bit (data-set shards merge to the same numbers). */
typedef struct QrTokAcc {
    int64_t vocab;
    int64_t tokens;              /* tokens scored (finite logits on both sides) */
    int64_t nonfinite;           /* tokens left out: a NaN / Inf logit on either side */
    int64_t agree;               /* arg-max agrees */
    int64_t top5_hits, top5_den; /* tokens shared by the two top-5 sets, and the possible */
    double *kld, *dp;            /* [tokens]: KL, and q[t*] - p[t*] of the baseline's top token t* */
    int64_t cap;
    int64_t nll_tokens;          /* tokens with a label */
    double *nll_b, *nll_a;       /* [nll_tokens]: -ln p(label), -ln q(label) */
    int64_t nll_cap;
    QrTokWorst worst[QR_TOK_WORST];   /* largest KL first; ties: lower sample, then earlier token */
    int n_worst;
} QrTokAcc;

typedef struct QrTokStats {
    int64_t tokens, nonfinite;
    double top1_agree, top5_overlap, kld_mean, kld_p90, kld_p99, kld_max, dp_rms;
    int64_t nll_tokens;          /* 0: no labels (the nll fields are NaN) */
    double nll_base, nll_analysis, ln_ppl_ratio;
} QrTokStats;

/* Whether a graph output is judged per token: rank 3 with a last dim >= 2 ([batch, sequence, vocab]),
 * or named "logits" with rank >= 2 (the last dim is the vocabulary). */
static bool qr_tok_is_logits(const char *name, const QrTensor *t);
/* Indices of the k largest of v[n] (ties: the lower index first; NaN never before a number):
 * the top-k of per-token and classifier outputs alike (tokens.c, dataset.c). */
static void qr_tok_topk(const float *v, int64_t n, int k, int64_t *idx);
/* Adds the tokens of one output pair: x the baseline's, y the analysis model's (float32, same shape);
 * labels (NULL: none) one int64 token id per token (a negative id: not scored); sample names the
 * data-set sample for the worst-token list. Fails on a shape mismatch or out of memory. */
static QrStatus qr_tok_add(QrTokAcc *a, const QrTensor *x, const QrTensor *y, const QrTensor *labels, int sample);
static void qr_tok_stats(const QrTokAcc *a, QrTokStats *s);
static void qr_tok_free(QrTokAcc *a);
/* The labels for a logits output of shape [batch, sequence, vocab]: the file (int32 / int64 .npy or
 * .pb of batch x sequence elements, any shape) when given, else the next-token shift of the graph
 * input "input_ids" ([batch, sequence]: the label of position s is input_ids[s + 1]; the last
 * position is not scored). *have false (out untouched) when neither applies. out is int64. */
static QrStatus qr_tok_labels(const QrGraph *g, const QrTensor *inputs, const char *file, const QrTensor *logits,
                              QrTensor *out, bool *have);
/* Adds src's tokens to dst (the same output of other samples: a data-set merge). */
static QrStatus qr_tok_merge(QrTokAcc *dst, const QrTokAcc *src);
/* "b0:t4" for a worst token (into buf). */
static const char *qr_tok_where(const QrTokWorst *w, char *buf, size_t n);
/* compare_outputs.txt/.csv for one input: one row per graph output (outs_b / outs_a: each model's
 * outputs as float32), the output metrics and, for logits outputs, the per-token columns (acc[j],
 * NULL entries for other outputs). */
static QrStatus qr_tok_write_outputs(const QrGraph *b, const QrMetrics *m, const QrTokAcc *const *acc, const char *dir);
/* Whether any graph output of b is a logits output. */
static bool qr_tok_any(const QrGraph *b);
/* The session's logits outputs: acc[j] (n_outputs entries, zeroed by the caller; only logits
 * outputs get tokens) takes the pair (s->base_out[j], outs[j]: the analysis model's output, any
 * float dtype) with the labels of --labels FILE (NULL: input_ids shifted, when there is one). */
static QrStatus qr_tok_session(const QrSession *s, const QrTensor *outs, const char *labels, int sample, QrTokAcc *acc);
/* The session's output metrics m[j] (n_outputs entries), each output of outs against s->base_out. */
static QrStatus qr_tok_session_metrics(const QrSession *s, const QrTensor *outs, QrMetrics *m);
/* compare_outputs.txt/.csv into dir for one input: the output metrics m (qr_tok_session_metrics) and acc's tokens. */
static QrStatus qr_tok_write_session(const QrGraph *b, const QrMetrics *m, const QrTokAcc *acc, const char *dir);
/* Both: the metrics from s and outs, then the files. */
static QrStatus qr_tok_session_write(const QrSession *s, const QrTensor *outs, const QrTokAcc *acc, const char *dir);
/* The per-token cells of a row from column col: tokens, [top1_agree, top5_overlap,] kld_mean, kld_p90, kld_p99,
 * kld_max, dp_rms, nll_tokens, nll_base, nll_analysis, ln_ppl_ratio, worst_tokens; names: the data set's sample
 * names (worst tokens as "<sample>:b0:t3"), NULL for one input. Returns the column after the last. */
static int qr_tok_cells(QrTable *t, int row, int col, const QrTokAcc *a, const char *const *names, bool with_top, bool csv);
/* compare_outputs' table (txt cells, or csv's %.9g): one row per graph output of b. */
static QrStatus qr_tok_table(const QrGraph *b, const QrMetrics *m, const QrTokAcc *const *acc, bool csv, QrTable *t);
/* summary.json "tokens": an array with one object per logits output (acc[j].vocab != 0). */
static void qr_tok_json(QrJson *j, const QrGraph *b, const QrTokAcc *acc);

#endif
