/* tensor — implementation. See tensor.h. */

/* ==== dtypes ================================================================= */

static const char *qr_dtype_name(QrDType dt) {
    switch (dt) {
    case QR_DT_F32: return "float32";  case QR_DT_U8: return "uint8";
    case QR_DT_S8: return "int8";      case QR_DT_U16: return "uint16";
    case QR_DT_S16: return "int16";    case QR_DT_S32: return "int32";
    case QR_DT_S64: return "int64";    case QR_DT_STRING: return "string";
    case QR_DT_BOOL: return "bool";    case QR_DT_F16: return "float16";
    case QR_DT_F64: return "float64";  case QR_DT_U32: return "uint32";
    case QR_DT_U64: return "uint64";   case QR_DT_BF16: return "bfloat16";
    case QR_DT_U4: return "uint4";     case QR_DT_S4: return "int4";
    case QR_DT_U2: return "uint2";     case QR_DT_S2: return "int2";
    case QR_DT_F8E4M3FN: return "float8e4m3fn";     case QR_DT_F8E4M3FNUZ: return "float8e4m3fnuz";
    case QR_DT_F8E5M2: return "float8e5m2";         case QR_DT_F8E5M2FNUZ: return "float8e5m2fnuz";
    case QR_DT_F8E8M0: return "float8e8m0";         case QR_DT_F4E2M1: return "float4e2m1";
    default: return "unknown";
    }
}

static size_t qr_dtype_size(QrDType dt) {
    switch (dt) {
    case QR_DT_F32: case QR_DT_S32: case QR_DT_U32: return 4;
    case QR_DT_U8: case QR_DT_S8: case QR_DT_BOOL: case QR_DT_U4: case QR_DT_S4: return 1;
    case QR_DT_U2: case QR_DT_S2: case QR_DT_F8E4M3FN: case QR_DT_F8E4M3FNUZ: case QR_DT_F8E5M2:
    case QR_DT_F8E5M2FNUZ: case QR_DT_F8E8M0: case QR_DT_F4E2M1: return 1;
    case QR_DT_U16: case QR_DT_S16: case QR_DT_F16: case QR_DT_BF16: return 2;
    case QR_DT_S64: case QR_DT_F64: case QR_DT_U64: return 8;
    default: return 0;
    }
}

static bool qr_dtype_supported(QrDType dt) { return qr_dtype_size(dt) != 0; }
static bool qr_dtype_is_minifloat(QrDType dt) {
    return (dt >= QR_DT_F8E4M3FN && dt <= QR_DT_F8E5M2FNUZ) || dt == QR_DT_F4E2M1 || dt == QR_DT_F8E8M0;
}
static bool qr_dtype_is_float(QrDType dt) {
    return dt == QR_DT_F32 || dt == QR_DT_F16 || dt == QR_DT_F64 || dt == QR_DT_BF16 || qr_dtype_is_minifloat(dt);
}
static int qr_dtype_packed_bits(QrDType dt) {
    return dt == QR_DT_S4 || dt == QR_DT_U4 || dt == QR_DT_F4E2M1 ? 4 : dt == QR_DT_S2 || dt == QR_DT_U2 ? 2 : 0;
}
static bool qr_dtype_is_int(QrDType dt) { return qr_dtype_supported(dt) && !qr_dtype_is_float(dt); }
static bool qr_dtype_is_signed(QrDType dt) {
    return dt == QR_DT_S8 || dt == QR_DT_S16 || dt == QR_DT_S32 || dt == QR_DT_S64 || dt == QR_DT_S4 ||
           dt == QR_DT_S2;
}

/* ==== half precision =========================================================== */

static float qr_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) bits = sign | 0x7f800000u | (man << 13);
    else if (exp != 0) bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (man == 0) bits = sign;
    else {                                           /* subnormal: normalise */
        int e = -1;
        do { man <<= 1; e++; } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t qr_tensor_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00);          /* overflow → inf */
    if (ax < 0x38800000u) {                                              /* subnormal or zero */
        if (ax < 0x33000000u) return (uint16_t)sign;
        uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e;                                        /* 14..24 */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((ax >> 13) - (112u << 10));
    uint32_t rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (uint16_t)(sign | r);
}

static float qr_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t qr_tensor_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ==== float8 / float4 =========================================================== */

/* A small float format: exponent and mantissa widths, exponent bias and the code of the
 * largest finite magnitude (codes grow with magnitude, NaN/Inf codes sit above it). */
typedef struct QrMiniFloat { int ebits, mbits, bias; unsigned max_code; } QrMiniFloat;

static bool qr__tn_minifloat(QrDType dt, QrMiniFloat *f) {
    switch (dt) {
    case QR_DT_F8E4M3FN: *f = (QrMiniFloat){ 4, 3, 7, 0x7e }; return true;      /* max 448 */
    case QR_DT_F8E4M3FNUZ: *f = (QrMiniFloat){ 4, 3, 8, 0x7f }; return true;    /* max 240 */
    case QR_DT_F8E5M2: *f = (QrMiniFloat){ 5, 2, 15, 0x7b }; return true;       /* max 57344 */
    case QR_DT_F8E5M2FNUZ: *f = (QrMiniFloat){ 5, 2, 16, 0x7f }; return true;   /* max 57344 */
    case QR_DT_F4E2M1: *f = (QrMiniFloat){ 2, 1, 1, 0x7 }; return true;         /* max 6 */
    default: return false;
    }
}

static double qr_f8_to_f64(uint8_t code, QrDType dt) {
    if (dt == QR_DT_F8E8M0) return code == 0xff ? NAN : ldexp(1.0, (int)code - 127);
    QrMiniFloat f;
    if (!qr__tn_minifloat(dt, &f)) return NAN;
    int sb = f.ebits + f.mbits;                            /* sign bit position */
    unsigned mag = code & ((1u << sb) - 1), neg = (code >> sb) & 1;
    if (dt == QR_DT_F8E4M3FNUZ || dt == QR_DT_F8E5M2FNUZ) {
        if (code == 0x80) return NAN;
    } else if (dt == QR_DT_F8E4M3FN) {
        if (mag == 0x7f) return neg ? -NAN : NAN;
    } else if (dt == QR_DT_F8E5M2 && mag >= 0x7c) {
        return mag == 0x7c ? (neg ? -INFINITY : INFINITY) : (neg ? -NAN : NAN);
    }
    unsigned e = mag >> f.mbits, m = mag & ((1u << f.mbits) - 1);
    double v = e ? ldexp((double)((1u << f.mbits) | m), (int)e - f.bias - f.mbits)
                 : ldexp((double)m, 1 - f.bias - f.mbits);   /* subnormal */
    return neg ? -v : v;
}

static uint8_t qr_f64_to_f8(double v, QrDType dt, bool saturate) {
    if (dt == QR_DT_F8E8M0) return qr_tensor_f32_to_e8m0((float)v, saturate, QR_E8M0_UP);
    QrMiniFloat f;
    if (!qr__tn_minifloat(dt, &f)) return 0;
    bool uz = dt == QR_DT_F8E4M3FNUZ || dt == QR_DT_F8E5M2FNUZ, f4 = dt == QR_DT_F4E2M1;
    unsigned sign = signbit(v) ? 1u << (f.ebits + f.mbits) : 0;
    if (isnan(v)) return (uint8_t)(uz ? 0x80 : f4 ? 0x7 : sign | 0x7f);
    double a = fabs(v);
    unsigned code = ~0u;                                   /* overflow unless set below */
    if (!isinf(a)) {
        int e;
        frexp(a, &e);                                      /* a = m * 2^e, m in [0.5, 1) */
        e -= 1;                                            /* a = 1.x * 2^e */
        if (a == 0 || e < 1 - f.bias) e = 1 - f.bias;      /* subnormal range: fixed quantum */
        /* a in units of the last mantissa bit (exact scaling), rounded half to even. */
        double k = rint(ldexp(a, f.mbits - e));
        if (k == 0) return (uint8_t)(uz ? 0 : sign);       /* UZ types have no -0 */
        if (k >= (double)(2u << f.mbits)) { k = ldexp(k, -1); e++; }  /* rounded up to the next binade */
        unsigned ki = (unsigned)k;
        unsigned ef = ki >> f.mbits ? (unsigned)(e + f.bias) : 0;
        code = (ef << f.mbits) | (ki & ((1u << f.mbits) - 1));
    }
    if (code > f.max_code) {
        if (saturate || f4) code = f.max_code;
        else if (uz) return 0x80;
        else code = dt == QR_DT_F8E5M2 ? 0x7c : 0x7f;     /* e5m2: Inf; e4m3fn: NaN */
    }
    return (uint8_t)(sign | code);
}

/* For a normal float32 the code is its exponent field, plus one when rounding up (up: any
 * fraction; nearest: fraction >= 1/2, ties up), as onnx.numpy_helper.to_float8e8m0 computes.
 * Zero and subnormals (below 2^-126 = code 1) are rounded exactly against code 0 = 2^-127. */
static uint8_t qr_tensor_f32_to_e8m0(float f, bool saturate, QrE8m0Round mode) {
    uint32_t b;
    memcpy(&b, &f, 4);
    uint32_t e = (b >> 23) & 0xff, frac = b & 0x7fffff;
    if (e == 0xff) return 0xff;
    if (e == 0)                                  /* |f| = frac * 2^-149; 2^-127 is frac 0x400000 */
        return (uint8_t)(mode == QR_E8M0_UP ? frac > 0x400000 : mode == QR_E8M0_NEAREST ? frac >= 0x600000 : 0);
    bool up = mode == QR_E8M0_UP ? frac != 0 : mode == QR_E8M0_NEAREST ? frac >= 0x400000 : false;
    if (up && e == 0xfe && saturate) up = false;
    return (uint8_t)(e + up);
}

/* ==== tensors ================================================================= */

static QrStatus qr_tensor_set_shape(QrTensor *t, QrDType dt, int rank, const int64_t *dims) {
    if (rank < 0 || rank > QR_MAX_RANK)
        return qr_errf(QR_ERR_UNSUPPORTED, "rank %d is not supported (max %d)", rank, QR_MAX_RANK);
    if (!qr_dtype_supported(dt))
        return qr_errf(QR_ERR_UNSUPPORTED, "data type %s (%d) is not supported", qr_dtype_name(dt), (int)dt);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return qr_errf(QR_ERR_SHAPE, "negative dimension %lld", (long long)dims[i]);
        if (qr_mul_overflow_i64(n, dims[i], &n))
            return qr_errf(QR_ERR_SHAPE, "the product of the dimensions overflows");
    }
    int64_t bytes;
    if (qr_mul_overflow_i64(n, (int64_t)qr_dtype_size(dt), &bytes) || bytes > QR_MAX_TENSOR_BYTES)
        return qr_errf(QR_ERR_NOMEM, "tensor of %lld elements is larger than the limit of %lld bytes",
                       (long long)n, (long long)QR_MAX_TENSOR_BYTES);
    t->dtype = dt;
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
    for (int i = rank; i < QR_MAX_RANK; i++) t->dims[i] = 1;
    t->numel = n;
    return QR_OK;
}

static size_t qr_tensor_nbytes(const QrTensor *t) { return (size_t)t->numel * qr_dtype_size(t->dtype); }

static QrStatus qr_tensor_alloc_data(QrTensor *t) {
    size_t n = qr_tensor_nbytes(t);
    t->data = qr_aligned_alloc(n ? n : 1);
    if (!t->data) return qr_errf(QR_ERR_NOMEM, "cannot allocate %zu bytes for a tensor", n);
    memset(t->data, 0, n);
    t->owned = true;
    return QR_OK;
}

static void qr_tensor_free_data(QrTensor *t) {
    if (t->owned) qr_aligned_free(t->data);
    t->data = NULL;
    t->owned = false;
}

static bool qr_tensor_same_shape(const QrTensor *a, const QrTensor *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++) if (a->dims[i] != b->dims[i]) return false;
    return true;
}

static char *qr_shape_str(char *buf, size_t n, int rank, const int64_t *dims) {
    size_t o = 0;
    buf[0] = 0;
    if (rank == 0) { snprintf(buf, n, "scalar"); return buf; }
    for (int i = 0; i < rank && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, i ? "x%lld" : "%lld", (long long)dims[i]);
    return buf;
}

static char *qr_shape_str_brackets(char *buf, size_t n, int rank, const int64_t *dims) {
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, i ? ", %lld" : "%lld", (long long)dims[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
    return buf;
}

static QrStatus qr_shape_parse(const char *s, int *rank, int64_t *dims) {
    int r = 0;
    const char *p = s;
    if (!*p) return qr_errf(QR_ERR_INVALID, "empty shape");
    while (*p) {
        char *end;
        if (r >= QR_MAX_RANK) return qr_errf(QR_ERR_INVALID, "shape '%s' has more than %d dims", s, QR_MAX_RANK);
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0) return qr_errf(QR_ERR_INVALID, "bad shape '%s' (expected e.g. 1x3x224x224)", s);
        dims[r++] = v;
        p = end;
        if (*p == 'x' || *p == ',' || *p == 'X') p++;
        else if (*p) return qr_errf(QR_ERR_INVALID, "bad shape '%s' (expected e.g. 1x3x224x224)", s);
    }
    *rank = r;
    return QR_OK;
}

/* ==== element access =========================================================== */

static double qr_tensor_get_f64(const QrTensor *t, int64_t i) {
    const void *d = t->data;
    switch (t->dtype) {
    case QR_DT_F32: return ((const float *)d)[i];
    case QR_DT_F64: return ((const double *)d)[i];
    case QR_DT_F16: return qr_f16_to_f32(((const uint16_t *)d)[i]);
    case QR_DT_BF16: return qr_bf16_to_f32(((const uint16_t *)d)[i]);
    case QR_DT_U64: return (double)((const uint64_t *)d)[i];
    case QR_DT_F8E4M3FN: case QR_DT_F8E4M3FNUZ: case QR_DT_F8E5M2: case QR_DT_F8E5M2FNUZ:
    case QR_DT_F8E8M0: case QR_DT_F4E2M1: return qr_f8_to_f64(((const uint8_t *)d)[i], t->dtype);
    default: return (double)qr_tensor_get_i64(t, i);
    }
}

static int64_t qr_tensor_get_i64(const QrTensor *t, int64_t i) {
    const void *d = t->data;
    switch (t->dtype) {
    case QR_DT_U8: case QR_DT_BOOL: case QR_DT_U4: case QR_DT_U2: return ((const uint8_t *)d)[i];
    case QR_DT_S8: case QR_DT_S4: case QR_DT_S2: return ((const int8_t *)d)[i];
    case QR_DT_U16: return ((const uint16_t *)d)[i];
    case QR_DT_S16: return ((const int16_t *)d)[i];
    case QR_DT_S32: return ((const int32_t *)d)[i];
    case QR_DT_U32: return ((const uint32_t *)d)[i];
    case QR_DT_S64: return ((const int64_t *)d)[i];
    case QR_DT_U64: return (int64_t)((const uint64_t *)d)[i];
    default: {
        double v = qr_tensor_get_f64(t, i);
        if (!(v == v)) return 0;
        if (v >= 9.2e18) return INT64_MAX;
        if (v <= -9.2e18) return INT64_MIN;
        return (int64_t)v;
    }
    }
}

static void qr_tensor_set_f64(QrTensor *t, int64_t i, double v) {
    void *d = t->data;
    switch (t->dtype) {
    case QR_DT_F32: ((float *)d)[i] = (float)v; return;
    case QR_DT_F64: ((double *)d)[i] = v; return;
    case QR_DT_F16: ((uint16_t *)d)[i] = qr_tensor_f32_to_f16((float)v); return;
    case QR_DT_BF16: ((uint16_t *)d)[i] = qr_tensor_f32_to_bf16((float)v); return;
    case QR_DT_F8E4M3FN: case QR_DT_F8E4M3FNUZ: case QR_DT_F8E5M2: case QR_DT_F8E5M2FNUZ:
    case QR_DT_F8E8M0: case QR_DT_F4E2M1: ((uint8_t *)d)[i] = qr_f64_to_f8(v, t->dtype, true); return;
    case QR_DT_BOOL: ((uint8_t *)d)[i] = v != 0; return;
    case QR_DT_U64: ((uint64_t *)d)[i] = v >= 1.8e19 ? UINT64_MAX : v <= 0 ? 0 : (uint64_t)v; return;
    default: {
        int64_t iv = !(v == v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
        qr_tensor_set_i64(t, i, iv);
    }
    }
}

static void qr_tensor_set_i64(QrTensor *t, int64_t i, int64_t v) {
    void *d = t->data;
    switch (t->dtype) {
    case QR_DT_U8: ((uint8_t *)d)[i] = (uint8_t)v; return;
    case QR_DT_U4: case QR_DT_U2: ((uint8_t *)d)[i] = (uint8_t)(v & (t->dtype == QR_DT_U4 ? 0xf : 0x3)); return;
    case QR_DT_BOOL: ((uint8_t *)d)[i] = v != 0; return;
    case QR_DT_S8: ((int8_t *)d)[i] = (int8_t)v; return;
    case QR_DT_S4: ((int8_t *)d)[i] = (int8_t)(((v & 0xf) ^ 8) - 8); return;      /* keep the low bits, sign-extend */
    case QR_DT_S2: ((int8_t *)d)[i] = (int8_t)(((v & 0x3) ^ 2) - 2); return;
    case QR_DT_U16: ((uint16_t *)d)[i] = (uint16_t)v; return;
    case QR_DT_S16: ((int16_t *)d)[i] = (int16_t)v; return;
    case QR_DT_S32: ((int32_t *)d)[i] = (int32_t)v; return;
    case QR_DT_U32: ((uint32_t *)d)[i] = (uint32_t)v; return;
    case QR_DT_S64: ((int64_t *)d)[i] = v; return;
    case QR_DT_U64: ((uint64_t *)d)[i] = (uint64_t)v; return;
    default: qr_tensor_set_f64(t, i, (double)v);
    }
}

static QrStatus qr_tensor_convert(const QrTensor *src, QrTensor *dst) {
    if (src->numel != dst->numel) return qr_errf(QR_ERR_SHAPE, "convert: element counts differ");
    int64_t n = src->numel;
    if (src->dtype == dst->dtype) { memcpy(dst->data, src->data, qr_tensor_nbytes(src)); return QR_OK; }
    if (src->dtype == QR_DT_F32 && dst->dtype == QR_DT_F16) {
        const float *s = src->data; uint16_t *d = dst->data;
        for (int64_t i = 0; i < n; i++) d[i] = qr_tensor_f32_to_f16(s[i]);
    } else if (src->dtype == QR_DT_F16 && dst->dtype == QR_DT_F32) {
        const uint16_t *s = src->data; float *d = dst->data;
        for (int64_t i = 0; i < n; i++) d[i] = qr_f16_to_f32(s[i]);
    } else if (qr_dtype_is_float(src->dtype) || qr_dtype_is_float(dst->dtype) || dst->dtype == QR_DT_BOOL) {
        for (int64_t i = 0; i < n; i++) qr_tensor_set_f64(dst, i, qr_tensor_get_f64(src, i));
    } else {
        for (int64_t i = 0; i < n; i++) qr_tensor_set_i64(dst, i, qr_tensor_get_i64(src, i));
    }
    return QR_OK;
}

static QrStatus qr_tensor_to_f32(const QrTensor *src, QrTensor *dst) {
    memset(dst, 0, sizeof *dst);
    QR_TRY(qr_tensor_set_shape(dst, QR_DT_F32, src->rank, src->dims));
    QR_TRY(qr_tensor_alloc_data(dst));
    return qr_tensor_convert(src, dst);
}

/* ==== .npy ======================================================================= */

static const struct { const char *descr; QrDType dt; } qr__npy_types[] = {
    { "f4", QR_DT_F32 }, { "f8", QR_DT_F64 }, { "f2", QR_DT_F16 }, { "i1", QR_DT_S8 },
    { "u1", QR_DT_U8 }, { "i2", QR_DT_S16 }, { "u2", QR_DT_U16 }, { "i4", QR_DT_S32 },
    { "u4", QR_DT_U32 }, { "i8", QR_DT_S64 }, { "u8", QR_DT_U64 }, { "b1", QR_DT_BOOL },
};

/* Finds `'key':` in a numpy header dict and returns a pointer past the colon. */
static const char *qr__tn_npy_key(const char *hdr, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(hdr, pat);
    if (!p) { snprintf(pat, sizeof pat, "\"%s\"", key); p = strstr(hdr, pat); }
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

static QrStatus qr_npy_parse(const unsigned char *buf, size_t len, QrTensor *out) {
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return qr_errf(QR_ERR_PARSE, "not a .npy file (bad magic)");
    int major = buf[6];
    size_t hlen, hoff;
    if (major == 1) { hlen = (size_t)buf[8] | ((size_t)buf[9] << 8); hoff = 10; }
    else if (major == 2 || major == 3) {
        if (len < 12) return qr_errf(QR_ERR_PARSE, "truncated .npy header");
        hlen = (size_t)buf[8] | ((size_t)buf[9] << 8) | ((size_t)buf[10] << 16) | ((size_t)buf[11] << 24);
        hoff = 12;
    } else return qr_errf(QR_ERR_PARSE, ".npy format version %d is not supported (1-3 are)", major);
    if (hlen > len - hoff || hlen > (1u << 20)) return qr_errf(QR_ERR_PARSE, "truncated .npy header");
    char hdr[4096];
    if (hlen >= sizeof hdr) return qr_errf(QR_ERR_PARSE, ".npy header too long (%zu bytes)", hlen);
    memcpy(hdr, buf + hoff, hlen);
    hdr[hlen] = 0;

    const char *p = qr__tn_npy_key(hdr, "descr");
    if (!p || (*p != '\'' && *p != '"')) return qr_errf(QR_ERR_PARSE, ".npy header has no 'descr'");
    char q = *p++;
    char descr[32];
    size_t dn = 0;
    while (*p && *p != q && dn < sizeof descr - 1) descr[dn++] = *p++;
    descr[dn] = 0;
    if (dn < 2) return qr_errf(QR_ERR_UNSUPPORTED, ".npy dtype '%s' is not supported", descr);
    char order = descr[0];
    const char *code = descr + 1;
    if (order != '<' && order != '|' && order != '=')
        return qr_errf(QR_ERR_UNSUPPORTED, ".npy dtype '%s' is big-endian; only little-endian arrays are supported "
                       "(convert with arr.astype(arr.dtype.newbyteorder('<')))", descr);
    QrDType dt = QR_DT_UNDEF;
    for (int i = 0; i < QR_ARRAY_LEN(qr__npy_types); i++)
        if (strcmp(code, qr__npy_types[i].descr) == 0) dt = qr__npy_types[i].dt;
    if (dt == QR_DT_UNDEF) return qr_errf(QR_ERR_UNSUPPORTED, ".npy dtype '%s' is not supported", descr);

    p = qr__tn_npy_key(hdr, "fortran_order");
    if (!p) return qr_errf(QR_ERR_PARSE, ".npy header has no 'fortran_order'");
    if (strncmp(p, "True", 4) == 0)
        return qr_errf(QR_ERR_UNSUPPORTED, ".npy array is in Fortran order; save it in C order "
                       "(np.ascontiguousarray)");
    if (strncmp(p, "False", 5) != 0) return qr_errf(QR_ERR_PARSE, ".npy 'fortran_order' is malformed");

    p = qr__tn_npy_key(hdr, "shape");
    if (!p || *p != '(') return qr_errf(QR_ERR_PARSE, ".npy header has no 'shape'");
    p++;
    int rank = 0;
    int64_t dims[QR_MAX_RANK];
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0) return qr_errf(QR_ERR_PARSE, ".npy 'shape' is malformed");
        if (rank >= QR_MAX_RANK) return qr_errf(QR_ERR_UNSUPPORTED, ".npy array has more than %d dims", QR_MAX_RANK);
        dims[rank++] = v;
        p = end;
        while (*p == 'L') p++;
    }
    QR_TRY(qr_tensor_set_shape(out, dt, rank, dims));
    size_t need = qr_tensor_nbytes(out), have = len - hoff - hlen;
    if (have < need)
        return qr_errf(QR_ERR_PARSE, ".npy data is truncated: %zu bytes for shape %s need %zu",
                       have, qr_shape_str(hdr, sizeof hdr, rank, dims), need);
    QR_TRY(qr_tensor_alloc_data(out));
    memcpy(out->data, buf + hoff + hlen, need);
    return QR_OK;
}

static QrStatus qr_npy_read(const char *path, QrTensor *out) { return qr_npy_read_sha(path, out, NULL); }

static QrStatus qr_npy_read_sha(const char *path, QrTensor *out, uint8_t *sha) {
    unsigned char *buf;
    size_t len;
    QR_TRY(qr_file_read(path, 0, &buf, &len));
    if (sha) qr_sha256(buf, len, sha);
    QrStatus st = qr_npy_parse(buf, len, out);
    qr_aligned_free(buf);
    if (st != QR_OK) return qr_err_wrap(st, "%s", path);
    return QR_OK;
}

static QrStatus qr_npy_encode(const QrTensor *t, unsigned char **out, size_t *out_len) {
    const char *descr = NULL;
    for (int i = 0; i < QR_ARRAY_LEN(qr__npy_types); i++)
        if (qr__npy_types[i].dt == t->dtype) descr = qr__npy_types[i].descr;
    if (t->dtype == QR_DT_S4) descr = "i1";
    if (t->dtype == QR_DT_U4) descr = "u1";
    if (t->dtype == QR_DT_S2) descr = "i1";
    if (t->dtype == QR_DT_U2) descr = "u1";
    if (qr_dtype_is_minifloat(t->dtype))
        return qr_errf(QR_ERR_UNSUPPORTED, "cannot write %s tensors to .npy (numpy has no such type); cast them to "
                       "float32 first", qr_dtype_name(t->dtype));
    if (!descr) return qr_errf(QR_ERR_UNSUPPORTED, "cannot write %s tensors to .npy", qr_dtype_name(t->dtype));
    char hdr[512], shape[256];
    size_t o = 0;
    o += (size_t)snprintf(shape + o, sizeof shape - o, "(");
    for (int i = 0; i < t->rank; i++)
        o += (size_t)snprintf(shape + o, sizeof shape - o, "%lld%s", (long long)t->dims[i],
                              t->rank == 1 ? "," : (i + 1 < t->rank ? ", " : ""));
    snprintf(shape + o, sizeof shape - o, ")");
    int hl = snprintf(hdr, sizeof hdr, "{'descr': '%c%s', 'fortran_order': False, 'shape': %s, }",
                      descr[1] == '1' ? '|' : '<', descr, shape);
    size_t total_h = 10 + (size_t)hl + 1;
    size_t pad = (64 - total_h % 64) % 64;
    size_t hlen = (size_t)hl + pad + 1;
    size_t nbytes = qr_tensor_nbytes(t);
    unsigned char *buf = malloc(10 + hlen + nbytes);
    if (!buf) return qr_errf(QR_ERR_NOMEM, "out of memory writing .npy");
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, hdr, (size_t)hl);
    memset(buf + 10 + hl, ' ', pad);
    buf[10 + hlen - 1] = '\n';
    if (nbytes) memcpy(buf + 10 + hlen, t->data, nbytes);
    *out = buf;
    *out_len = 10 + hlen + nbytes;
    return QR_OK;
}

static QrStatus qr_npy_write(const char *path, const QrTensor *t) {
    unsigned char *buf = NULL;
    size_t len = 0;
    QR_TRY(qr_npy_encode(t, &buf, &len));
    QrStatus st = qr_file_write_atomic(path, buf, len);
    free(buf);
    return st;
}
