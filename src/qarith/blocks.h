/* qarith/blocks — the block formats of ONNX Runtime's weight-only quantized operators
 * (com.microsoft MatMulNBits, MatMulBnb4, GatherBlockQuantized): the geometry a node's
 * attributes and inputs declare, checked, and access to its packed codes and zero points.
 * Shared by the operators (ops/contrib_wq.c) and the twin that turns a weight-only node into a
 * toggleable weight quantizer (quant/twin_wq.c), so that the twin accepts exactly what the
 * operator accepts. Below ops/: these functions see a node and its input tensors, not an
 * operator context; their errors carry no node name (the operators prefix it). */
#ifndef QR_QUANT_BLOCKS_H
#define QR_QUANT_BLOCKS_H

/* MatMulNBits(A, B, scales, [zero_points], [g_idx], [bias]) with K, N, bits, block_size,
 * accuracy_level: Y = A @ dequant(B)^T (+ bias). A (..., K) float; B uint8 (N, k_blocks, blob)
 * with K split in k_blocks = ceil(K / block_size) blocks of block_size codes of `bits` bits,
 * packed low bits first; scales (N, k_blocks); zero_points packed like B codes
 * (N, ceil(k_blocks * bits / 8) bytes), or float like scales (not quantized), absent =
 * 2^(bits-1); g_idx int32 (K): the block of column k (GPTQ act-order), absent = k / block_size;
 * bias (N). */
enum { QR_BLK_NB_A, QR_BLK_NB_B, QR_BLK_NB_SCALES, QR_BLK_NB_ZP, QR_BLK_NB_GIDX, QR_BLK_NB_BIAS };
typedef struct QrBlkNBits {
    int64_t K, N, bits, bs, nb, blob, zp_row, acc;
    int64_t M;               /* rows of A (product of its leading dims) */
    bool zp_float;           /* zero points are floats (T1), not packed codes */
    bool int8_act;           /* accuracy_level 4 as ORT's CPU kernel: int8 activations */
} QrBlkNBits;
/* Reads node's attributes and checks every input's type and size (in[i] NULL: omitted; no data
 * needed). */
static QrStatus qr_blk_nbits_geom(const QrNode *node, const QrTensor *const *in, int n_in, QrBlkNBits *g);
/* Code k of row n (0 <= k < nb * bs; codes past K are padding). */
static inline int32_t qr_blk_nbits_code(const QrBlkNBits *g, const uint8_t *b, int64_t n, int64_t k);
/* Integer zero point of block kb of row n (packed codes zp, or the default 2^(bits-1) when NULL). */
static inline int32_t qr_blk_nbits_zp(const QrBlkNBits *g, const uint8_t *zp, int64_t n, int64_t kb);

/* MatMulBnb4(A, B, absmax) with K, N, block_size, quant_type, transB = 1: W (N, K) flattened
 * row-major is quantized in blocks of block_size values, two codes per byte of B (the first in
 * the high nibble), w = table[code] * absmax[i / block_size]. */
typedef struct QrBlkBnb4 { int64_t K, N, bs, M; const float *table; } QrBlkBnb4;
static QrStatus qr_blk_bnb4_geom(const QrNode *node, const QrTensor *const *in, int n_in, QrBlkBnb4 *g);
/* Code of element i of W (N, K) flattened. */
static inline int32_t qr_blk_bnb4_code(const uint8_t *b, int64_t i) { return i & 1 ? b[i / 2] & 0xf : b[i / 2] >> 4; }

/* GatherBlockQuantized(data, indices, scales, [zero_points]) with gather_axis (0), quantize_axis
 * (1), block_size (128), bits (4). data is uint4 / int4 (any axes; zero point default 0), or uint8
 * holding 8 / bits codes per byte low bits first (bits 2, 4 or 8; gather_axis 0 and quantize_axis
 * last; the last dimension counts bytes, the logical dims count codes; zero points packed the same
 * way per row of blocks, default 2^(bits-1)). scales (and zero points) have data's shape with
 * ceil(dim / block_size) blocks along quantize_axis. */
typedef struct QrBlkGbq {
    int rank, gax, qax;
    bool u8;                      /* uint8 data: per codes per byte, packed zero points */
    int64_t bits, per, bs;
    int64_t dims[QR_MAX_RANK];    /* logical data dims (codes) */
    int64_t gM, gdim, gblock, nidx, qdim, qN, nblk;
} QrBlkGbq;
static QrStatus qr_blk_gbq_geom(const QrNode *node, const QrTensor *const *in, int n_in, QrBlkGbq *g);
/* Code of logical element e of data t (row-major over the logical dims). */
static inline int32_t qr_blk_gbq_code(const QrBlkGbq *g, const QrTensor *t, int64_t e);
/* Zero point of scale index si (zero points z, or NULL: the type's default). */
static inline int32_t qr_blk_gbq_zp(const QrBlkGbq *g, const QrTensor *z, int64_t si);

/* One dequantized value of a weight-only node's weight: code q with scale s and zero point p of
 *   table (16 float32 values, FP4 / NF4):  table[q] * s
 *   uint8 zero points zu:                   (float)(q - zu[p]) * s          (one rounding)
 *   else (float zero points zf, or none):  fl(q * s) + (-(s * zf[p]))      (ORT's DequantizeBlockwise)
 * in float32. */
static inline float qr_blk_value(int32_t q, float s, const uint8_t *zu, const float *zf, int64_t p, const float *table);

#endif
