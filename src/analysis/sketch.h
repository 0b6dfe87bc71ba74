/* analysis/sketch — a deterministic, mergeable streaming quantile sketch for float values
 * (box plots over a whole data set): bounded memory, a guaranteed rank-error bound that the
 * sketch tracks itself, exact results while it holds every value, and a byte form for .qrpart.
 *
 * Design (a compactor sketch with equal capacities, Manku-Rajagopalan-Lindsay / KLL without
 * randomness). Values are stored as ordered 32-bit keys of the float (the keys' unsigned order
 * is the numeric order, -0.0 just below +0.0). Level h holds items of weight 2^h. When a level
 * holds k or more items (k even) it is sorted and an even number m >= k of its smallest items
 * is compacted: every other one (offset 0 or 1, alternating per level) moves to level h+1 with
 * twice the weight; an odd leftover (the largest) stays. Total weight stays n.
 *
 * Rank-error bound. One compaction at level h changes the sketch's count of items <= y by at
 * most 2^h for every y; the sketch adds 2^h to `err` at each compaction, so for every y
 *   |#{sketch items <= y, weighted} - #{values <= y}| <= err,
 * and a quantile read at rank j is a value v with #{x < v} <= j + err and #{x <= v} >= j+1-err.
 * Each compaction at level h consumes >= k items of weight 2^h and at most n/2^h ever enter
 * that level (also across merges), so
 *   err <= sum over h with k*2^h <= n of floor(n / (k*2^h)) * 2^h  <=  L*n/k,
 *   L = floor(log2(n/k)) + 1 (0 while n < k: then the sketch is exact)
 * (qr_sketch_bound_max). With k = 512 and n = 1e6 values that is 2.1% of n; memory is at most
 * k*(L+2) keys (4 bytes each). Merging adds the two bounds and the compactions it makes; the
 * merged sketch depends on the merge order (its quantiles do not equal one pass bitwise) but
 * stays within its own bound of the exact quantiles. n, the NaN/Inf counts, min and max are
 * exact and order-independent.
 *
 * NaN and +-Inf are counted apart (n_nan, n_pinf, n_ninf) and left out of the quantiles, min
 * and max: the box plots show the finite values and say how many were not. */
#ifndef QR_SKETCH_H
#define QR_SKETCH_H

#define QR_SKETCH_K 512          /* default capacity per level (even) */
#define QR_SKETCH_MAX_LEVELS 48

typedef struct QrSketch {
    int k;                       /* capacity per level (even, >= 2) */
    int n_levels;                /* levels in use */
    uint32_t *item[QR_SKETCH_MAX_LEVELS];   /* per level: ordered keys (malloc'd) */
    int32_t len[QR_SKETCH_MAX_LEVELS], cap[QR_SKETCH_MAX_LEVELS];
    uint8_t parity[QR_SKETCH_MAX_LEVELS];   /* the next compaction's kept offset */
    int64_t n;                   /* finite values added */
    int64_t n_nan, n_pinf, n_ninf;
    uint32_t min_key, max_key;   /* of the finite values (valid when n > 0) */
    int64_t err;                 /* guaranteed rank-error bound (see above) */
} QrSketch;

/* An empty sketch of capacity k per level (k <= 0: QR_SKETCH_K; odd k is rounded up). */
static void qr_sketch_init(QrSketch *s, int k);
static void qr_sketch_free(QrSketch *s);
/* Adds v[0..n) (float32). Fails only when out of memory (the sketch stays valid). */
static QrStatus qr_sketch_add_f32(QrSketch *s, const float *v, int64_t n);
/* a += b (same k, else QR_ERR_INVALID). */
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_sketch_merge(QrSketch *a, const QrSketch *b);
#endif
/* Quantiles q[0..nq) in [0, 1] of the finite values, numpy's default definition (linear
 * interpolation between the order statistics at ranks floor and floor+1 of q*(n-1)) applied
 * to the sketch's weighted items; q = 0 and 1 give the exact min and max. NaN when empty.
 * Exact (the same bits as sorting every value) while err == 0. */
static QrStatus qr_sketch_quantiles(const QrSketch *s, const double *q, int nq, double *out);
static double qr_sketch_min(const QrSketch *s);
static double qr_sketch_max(const QrSketch *s);
/* The documented worst case of err for n values at capacity k (see above). */
#ifdef QR_TESTING
QR_TESTAPI int64_t qr_sketch_bound_max(int64_t n, int k);
#endif
/* Bytes held by the items. */
#ifdef QR_TESTING
QR_TESTAPI size_t qr_sketch_bytes(const QrSketch *s);
#endif

/* Byte form (little-endian; the items in level order): appended to *buf (realloc'd, *len
 * bytes used of *cap); read back by qr_sketch_read from p[0..avail), *used set to the bytes
 * consumed. A malformed form (counts out of range, items unordered keys of NaN, sizes past
 * the end) fails with QR_ERR_INVALID and leaves s empty. */
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_sketch_write(const QrSketch *s, uint8_t **buf, size_t *len, size_t *cap);
#endif
#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_sketch_read(QrSketch *s, const uint8_t *p, size_t avail, size_t *used);
#endif

/* Little-endian integers for byte forms (also the data-set accumulators'): put appends the
 * low nbytes of v to *buf (realloc'd); get reads nbytes at *off, setting *bad (and returning 0)
 * past avail or once *bad is set. */
static QrStatus qr_sketch_put_le(uint8_t **buf, size_t *len, size_t *cap, uint64_t v, int nbytes);
static uint64_t qr_sketch_get_le(const uint8_t *p, size_t avail, size_t *off, int nbytes, bool *bad);

/* Ordered 32-bit key of a float and back (NaN has no key: callers filter it). */
static inline uint32_t qr_sketch_key(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}
static inline float qr_sketch_unkey(uint32_t k) {
    uint32_t u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
