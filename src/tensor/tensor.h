/* tensor — dtypes, dense tensors, element conversion and .npy read/write.
 * Dtype numbers are ONNX's TensorProto.DataType values so conversion is free.
 * Sub-byte types (int4/uint4/int2/uint2/float4e2m1) are stored unpacked, one element per
 * byte; float8 and float4 elements are stored as their byte codes. */
#ifndef QR_TENSOR_H
#define QR_TENSOR_H

#define QR_MAX_RANK 8
/* Largest single tensor we agree to allocate (refused up front beyond it). */
#define QR_MAX_TENSOR_BYTES ((int64_t)1 << 36)

typedef enum QrDType {
    QR_DT_UNDEF = 0,
    QR_DT_F32 = 1, QR_DT_U8 = 2, QR_DT_S8 = 3, QR_DT_U16 = 4, QR_DT_S16 = 5,
    QR_DT_S32 = 6, QR_DT_S64 = 7, QR_DT_STRING = 8, QR_DT_BOOL = 9, QR_DT_F16 = 10,
    QR_DT_F64 = 11, QR_DT_U32 = 12, QR_DT_U64 = 13, QR_DT_BF16 = 16,
    QR_DT_F8E4M3FN = 17, QR_DT_F8E4M3FNUZ = 18, QR_DT_F8E5M2 = 19, QR_DT_F8E5M2FNUZ = 20,
    QR_DT_U4 = 21, QR_DT_S4 = 22, QR_DT_F4E2M1 = 23, QR_DT_F8E8M0 = 24, QR_DT_U2 = 25, QR_DT_S2 = 26,
} QrDType;

typedef struct QrTensor {
    QrDType dtype;
    int rank;
    int64_t dims[QR_MAX_RANK];
    int64_t numel;
    void *data;        /* NULL when only dtype and shape are known */
    bool owned;        /* data came from qr_tensor_alloc_data and is freed with the tensor */
} QrTensor;

static const char *qr_dtype_name(QrDType dt);      /* "float32", "int8", ... */
static size_t qr_dtype_size(QrDType dt);           /* bytes per stored element, 0 if unsupported */
static bool qr_dtype_is_float(QrDType dt);
static bool qr_dtype_is_int(QrDType dt);           /* integer types incl. bool */
static bool qr_dtype_is_signed(QrDType dt);
static bool qr_dtype_supported(QrDType dt);
static bool qr_dtype_is_minifloat(QrDType dt);     /* float8 (all five) and float4e2m1: one code per byte */
static int qr_dtype_packed_bits(QrDType dt);       /* 4 or 2 for types packed low bits first in files, else 0 */

/* Sets shape and numel; fails on negative dims, rank > QR_MAX_RANK, overflow, or
 * a byte size over QR_MAX_TENSOR_BYTES. Does not allocate. */
static QrStatus qr_tensor_set_shape(QrTensor *t, QrDType dt, int rank, const int64_t *dims);
static QrStatus qr_tensor_alloc_data(QrTensor *t);          /* zeroed, aligned, owned */
static void qr_tensor_free_data(QrTensor *t);
static size_t qr_tensor_nbytes(const QrTensor *t);
static bool qr_tensor_same_shape(const QrTensor *a, const QrTensor *b);
static char *qr_shape_str(char *buf, size_t n, int rank, const int64_t *dims); /* "1x3x224x224" */
static char *qr_shape_str_brackets(char *buf, size_t n, int rank, const int64_t *dims); /* "[1, 3, 224, 224]" */
static QrStatus qr_shape_parse(const char *s, int *rank, int64_t *dims);     /* "1x3x224x224" */

/* Element access as double / int64 regardless of storage dtype. */
static double qr_tensor_get_f64(const QrTensor *t, int64_t i);
static int64_t qr_tensor_get_i64(const QrTensor *t, int64_t i);
static void qr_tensor_set_f64(QrTensor *t, int64_t i, double v);
static void qr_tensor_set_i64(QrTensor *t, int64_t i, int64_t v);
/* Converts every element of src into dst (same numel); float→int truncates like ONNX Cast,
 * integers wrap into narrower integer types, float8 targets saturate (Cast's default). */
static QrStatus qr_tensor_convert(const QrTensor *src, QrTensor *dst);
/* Copies into a new float32 tensor (owned). */
static QrStatus qr_tensor_to_f32(const QrTensor *src, QrTensor *dst);

static float qr_f16_to_f32(uint16_t h);
static uint16_t qr_tensor_f32_to_f16(float f);        /* round to nearest even */
static float qr_bf16_to_f32(uint16_t h);
static uint16_t qr_tensor_f32_to_bf16(float f);

/* float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0) and float4e2m1 codes, per ONNX's Float8
 * and Float4 documents. Decoding is exact (NaN codes give NaN, e5m2's Inf codes give Inf).
 * Encoding rounds to nearest even; out of range (and Inf) gives the largest finite value
 * with `saturate`, else NaN (FN/UZ types) or Inf (e5m2); float4 always saturates and maps
 * NaN to 6; UZ types have no -0 (0x80 is their only NaN). e8m0 rounds up (see below). */
static double qr_f8_to_f64(uint8_t code, QrDType dt);
static uint8_t qr_f64_to_f8(double v, QrDType dt, bool saturate);
/* e8m0 (a power of two 2^(code-127), 0xff NaN) from a float32, as Cast's round_mode says;
 * the sign is ignored, NaN and Inf give 0xff, overflow saturates to 0xfe or gives NaN. */
typedef enum QrE8m0Round { QR_E8M0_UP, QR_E8M0_DOWN, QR_E8M0_NEAREST } QrE8m0Round;
static uint8_t qr_tensor_f32_to_e8m0(float f, bool saturate, QrE8m0Round mode);

/* .npy: versions 1-3, little-endian, C order. */
static QrStatus qr_npy_parse(const unsigned char *buf, size_t len, QrTensor *out);   /* owned copy */
static QrStatus qr_npy_read(const char *path, QrTensor *out);
/* The same, and the sha256 of the file's bytes as read (sha: NULL, or QR_SHA256_LEN bytes): a file
 * read once for its tensor and its hash (runall -i: the manifest's). */
static QrStatus qr_npy_read_sha(const char *path, QrTensor *out, uint8_t *sha);
static QrStatus qr_npy_encode(const QrTensor *t, unsigned char **out, size_t *out_len); /* malloc'd */
static QrStatus qr_npy_write(const char *path, const QrTensor *t);

#endif
