/* tests/base — base, tensor and file-format units. */

static void test_arena(void) {
    QrArena a = {0};
    char *p = qr_arena_alloc(&a, 10);
    QT_CHECK(p && ((uintptr_t)p % QR_ALIGN) == 0);
    QrArenaMark m = qr_arena_mark(&a);
    void *big = qr_arena_alloc(&a, 3u << 20);
    QT_CHECK(big != NULL);
    qr_arena_reset(&a, m);
    QT_CHECK(a.total == m.total);
    char *s = qr_arena_printf(&a, "%s-%d", "x", 42);
    QT_CHECK(s && !strcmp(s, "x-42"));
    QT_CHECK(qr_arena_array(&a, SIZE_MAX / 2, 4) == NULL);
    qr_arena_alloc(&a, 3u << 20);                 /* a second block */
    qr_arena_clear(&a);
    QT_CHECK(a.cur && !a.cur->prev && a.cur->used == 0 && a.total == 0);
    QT_CHECK(qr_arena_alloc(&a, 100) == a.cur->data);   /* the kept block is reused */
    qr_arena_free(&a);
}

static void test_strmap(void) {
    QrArena a = {0};
    QrStrMap m;
    QT_OK(qr_strmap_init(&m, &a, 2));
    char keys[1000][16];
    for (int i = 0; i < 1000; i++) { snprintf(keys[i], 16, "k%d", i); QT_OK(qr_strmap_put(&m, &a, keys[i], i)); }
    for (int i = 0; i < 1000; i++) QT_CHECK(qr_strmap_get(&m, keys[i]) == i);
    QT_CHECK(qr_strmap_get(&m, "nope") == -1);
    qr_arena_free(&a);
}

static void test_f16(void) {
    /* Every half value survives f16 -> f32 -> f16 (NaNs stay NaN). */
    for (uint32_t h = 0; h < 65536; h++) {
        float f = qr_f16_to_f32((uint16_t)h);
        uint16_t back = qr_tensor_f32_to_f16(f);
        if (f != f) QT_CHECK((back & 0x7c00) == 0x7c00 && (back & 0x3ff));
        else QT_CHECKF(back == h, "h=%04x f=%g back=%04x", h, f, back);
    }
    QT_CHECK(qr_tensor_f32_to_f16(65520.0f) == 0x7c00);           /* rounds to inf */
    QT_CHECK(qr_tensor_f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00); /* tie to even */
    QT_CHECK(qr_tensor_f32_to_f16(5.9604645e-08f) == 0x0001);     /* smallest subnormal */
}

static void test_shape_overflow(void) {
    QrTensor t = {0};
    int64_t dims[3] = { 1ll << 40, 1ll << 30, 16 };
    QT_CHECK(qr_tensor_set_shape(&t, QR_DT_F32, 3, dims) == QR_ERR_SHAPE);
    int64_t neg[2] = { 3, -1 };
    QT_CHECK(qr_tensor_set_shape(&t, QR_DT_F32, 2, neg) == QR_ERR_SHAPE);
    int64_t huge[2] = { 1ll << 20, 1ll << 20 };
    QT_CHECK(qr_tensor_set_shape(&t, QR_DT_F32, 2, huge) == QR_ERR_NOMEM);
}

static void test_npy_roundtrip(void) {
    QrDType types[] = { QR_DT_F32, QR_DT_F64, QR_DT_F16, QR_DT_S8, QR_DT_U8, QR_DT_S16, QR_DT_U16,
                        QR_DT_S32, QR_DT_S64, QR_DT_BOOL };
    for (int k = 0; k < QR_ARRAY_LEN(types); k++) {
        QrTensor t = {0}, u = {0};
        int64_t dims[3] = { 2, 3, 5 };
        QT_OK(qr_tensor_set_shape(&t, types[k], k % 4, dims));
        QT_OK(qr_tensor_alloc_data(&t));
        for (int64_t i = 0; i < t.numel; i++) qr_tensor_set_f64(&t, i, (double)((i * 7) % 5) - 1);
        unsigned char *buf = NULL;
        size_t len = 0;
        QT_OK(qr_npy_encode(&t, &buf, &len));
        QT_CHECK(len % 64 == 0 || len - qr_tensor_nbytes(&t) == 128 || (len - qr_tensor_nbytes(&t)) % 64 == 0);
        QT_OK(qr_npy_parse(buf, len, &u));
        QT_CHECK(u.dtype == t.dtype && qr_tensor_same_shape(&t, &u));
        QT_CHECK(memcmp(t.data, u.data, qr_tensor_nbytes(&t)) == 0);
        /* Every truncation fails cleanly. */
        for (size_t cut = 0; cut < len; cut += 7) {
            QrTensor v = {0};
            if (qr_npy_parse(buf, cut, &v) == QR_OK) { qr_tensor_free_data(&v); QT_CHECKF(cut >= len, "cut %zu", cut); }
        }
        free(buf);
        qr_tensor_free_data(&t);
        qr_tensor_free_data(&u);
    }
}

static void test_npy_rejects(void) {
    const char *hdrs[] = {
        "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
        "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
        "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }",
    };
    for (int k = 0; k < QR_ARRAY_LEN(hdrs); k++) {
        unsigned char buf[256] = "\x93NUMPY\x01\x00";
        size_t hl = strlen(hdrs[k]);
        buf[8] = (unsigned char)hl;
        buf[9] = 0;
        memcpy(buf + 10, hdrs[k], hl);
        QrTensor t = {0};
        QrStatus st = qr_npy_parse(buf, 10 + hl + 16, &t);
        QT_CHECKF(st != QR_OK, "header %d accepted", k);
        QT_CHECK(strlen(qr_err_msg()) > 10);
    }
    /* Version 2 header (4-byte length) is accepted. */
    const char *h = "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }";
    unsigned char buf[256] = "\x93NUMPY\x02\x00";
    size_t hl = strlen(h);
    buf[8] = (unsigned char)hl; buf[9] = buf[10] = buf[11] = 0;
    memcpy(buf + 12, h, hl);
    int16_t vals[3] = { -1, 2, 300 };
    memcpy(buf + 12 + hl, vals, 6);
    QrTensor t = {0};
    QT_OK(qr_npy_parse(buf, 12 + hl + 6, &t));
    QT_CHECK(t.dtype == QR_DT_S16 && t.numel == 3 && ((int16_t *)t.data)[2] == 300);
    qr_tensor_free_data(&t);
}

static void test_pb_roundtrip(void) {
    QrTensor t = {0}, u = {0};
    int64_t dims[2] = { 3, 5 };
    QT_OK(qr_tensor_set_shape(&t, QR_DT_S4, 2, dims));
    QT_OK(qr_tensor_alloc_data(&t));
    for (int64_t i = 0; i < t.numel; i++) ((int8_t *)t.data)[i] = (int8_t)((i % 16) - 8);
    char path[] = "build/test_pb_roundtrip.pb";
    QT_OK(qr_pb_write(path, &t, "w"));
    char name[32];
    QT_OK(qr_pb_read(path, &u, name, sizeof name));
    QT_CHECK(!strcmp(name, "w") && u.dtype == QR_DT_S4 && qr_tensor_same_shape(&t, &u));
    QT_CHECK(memcmp(t.data, u.data, (size_t)t.numel) == 0);
    qr_tensor_free_data(&t);
    qr_tensor_free_data(&u);
    remove(path);
}

/* float8 / float4: every code decodes and encodes back to itself (NaN codes stay NaN). */
static void test_minifloat_roundtrip(void) {
    QrDType types[] = { QR_DT_F8E4M3FN, QR_DT_F8E4M3FNUZ, QR_DT_F8E5M2, QR_DT_F8E5M2FNUZ, QR_DT_F8E8M0, QR_DT_F4E2M1 };
    int nan_count[] = { 2, 1, 6, 1, 1, 0 };
    for (int k = 0; k < QR_ARRAY_LEN(types); k++) {
        QrDType dt = types[k];
        int ncodes = dt == QR_DT_F4E2M1 ? 16 : 256, nans = 0;
        for (int c = 0; c < ncodes; c++) {
            double v = qr_f8_to_f64((uint8_t)c, dt);
            for (int sat = 0; sat < 2; sat++) {
                uint8_t back = qr_f64_to_f8(v, dt, sat);
                if (v != v) QT_CHECKF(qr_f8_to_f64(back, dt) != qr_f8_to_f64(back, dt), "%s %02x", qr_dtype_name(dt), c);
                else if (isinf(v) && sat) QT_CHECKF(back == (c & 0x80 ? 0xfb : 0x7b), "%s %02x", qr_dtype_name(dt), c);
                else QT_CHECKF(back == c, "%s %02x -> %g -> %02x (sat %d)", qr_dtype_name(dt), c, v, back, sat);
            }
            nans += v != v;
        }
        QT_CHECKF(nans == nan_count[k], "%s has %d NaN codes", qr_dtype_name(dt), nans);
    }
    /* Largest finite values and a few known codes. */
    QT_CHECK(qr_f8_to_f64(0x7e, QR_DT_F8E4M3FN) == 448 && qr_f8_to_f64(0x7f, QR_DT_F8E4M3FNUZ) == 240);
    QT_CHECK(qr_f8_to_f64(0x7b, QR_DT_F8E5M2) == 57344 && qr_f8_to_f64(0x7f, QR_DT_F8E5M2FNUZ) == 57344);
    QT_CHECK(qr_f8_to_f64(0x7, QR_DT_F4E2M1) == 6 && qr_f8_to_f64(0xd, QR_DT_F4E2M1) == -3);
    QT_CHECK(qr_f8_to_f64(0x01, QR_DT_F8E4M3FN) == ldexp(1, -9) && qr_f8_to_f64(0x01, QR_DT_F8E5M2FNUZ) == ldexp(1, -17));
    QT_CHECK(qr_f8_to_f64(0xed, QR_DT_F8E4M3FN) == -104 && qr_f8_to_f64(0x7c, QR_DT_F8E5M2) == INFINITY);
    QT_CHECK(qr_f8_to_f64(127, QR_DT_F8E8M0) == 1 && qr_f8_to_f64(0, QR_DT_F8E8M0) == ldexp(1, -127));
}

/* Halfway between neighbouring codes rounds to the even code; just off it rounds to the nearer. */
static void test_minifloat_ties(void) {
    QrDType types[] = { QR_DT_F8E4M3FN, QR_DT_F8E4M3FNUZ, QR_DT_F8E5M2, QR_DT_F8E5M2FNUZ, QR_DT_F4E2M1 };
    uint8_t max_code[] = { 0x7e, 0x7f, 0x7b, 0x7f, 0x7 };
    for (int k = 0; k < QR_ARRAY_LEN(types); k++) {
        QrDType dt = types[k];
        uint8_t neg = dt == QR_DT_F4E2M1 ? 0x8 : 0x80;
        for (int c = 0; c < max_code[k]; c++) {
            double lo = qr_f8_to_f64((uint8_t)c, dt), hi = qr_f8_to_f64((uint8_t)(c + 1), dt), mid = (lo + hi) / 2;
            uint8_t even = (uint8_t)(c & 1 ? c + 1 : c);
            QT_CHECKF(qr_f64_to_f8(mid, dt, true) == even, "%s tie %g", qr_dtype_name(dt), mid);
            QT_CHECKF(qr_f64_to_f8(nextafter(mid, 0), dt, true) == c, "%s below %g", qr_dtype_name(dt), mid);
            QT_CHECKF(qr_f64_to_f8(nextafter(mid, 1e300), dt, false) == c + 1, "%s above %g", qr_dtype_name(dt), mid);
            /* negative side mirrors (UZ: 0 has no negative twin) */
            uint8_t nz = (uint8_t)(even == 0 && (dt == QR_DT_F8E4M3FNUZ || dt == QR_DT_F8E5M2FNUZ) ? 0 : even | neg);
            QT_CHECKF(qr_f64_to_f8(-mid, dt, true) == nz, "%s tie %g", qr_dtype_name(dt), -mid);
        }
    }
    QT_CHECK(qr_f64_to_f8(100, QR_DT_F8E4M3FN, true) == 0x6c);     /* 1.5625*2^6: tie -> 96 */
    QT_CHECK(qr_f64_to_f8(5, QR_DT_F4E2M1, true) == 0x6 && qr_f64_to_f8(0.25, QR_DT_F4E2M1, true) == 0);
    QT_CHECK(qr_f64_to_f8(1.25, QR_DT_F4E2M1, true) == 0x2 && qr_f64_to_f8(-2.5, QR_DT_F4E2M1, true) == 0xc);
    /* -0 keeps its sign except in UZ types; tiny values underflow to (signed) zero. */
    QT_CHECK(qr_f64_to_f8(-0.0, QR_DT_F8E4M3FN, true) == 0x80 && qr_f64_to_f8(-0.0, QR_DT_F8E5M2FNUZ, true) == 0);
    QT_CHECK(qr_f64_to_f8(-1e-7, QR_DT_F8E4M3FNUZ, false) == 0 && qr_f64_to_f8(-1e-7, QR_DT_F8E5M2, true) == 0x80);
    QT_CHECK(qr_f64_to_f8(-0.0, QR_DT_F4E2M1, true) == 0x8 && qr_f64_to_f8(ldexp(1, -10), QR_DT_F8E4M3FN, 1) == 0);
}

/* Out of range and Inf: largest finite with saturate, else NaN (FN, UZ) or Inf (e5m2). */
static void test_minifloat_saturate(void) {
    struct { QrDType dt; double v; uint8_t sat, nosat; } cases[] = {
        { QR_DT_F8E4M3FN, 464, 0x7e, 0x7e },          /* ties to 448 (even) */
        { QR_DT_F8E4M3FN, 465, 0x7e, 0x7f },
        { QR_DT_F8E4M3FN, 480, 0x7e, 0x7f },
        { QR_DT_F8E4M3FN, -1e6, 0xfe, 0xff },
        { QR_DT_F8E4M3FN, INFINITY, 0x7e, 0x7f },
        { QR_DT_F8E4M3FN, -INFINITY, 0xfe, 0xff },
        { QR_DT_F8E4M3FNUZ, 248, 0x7f, 0x80 },        /* tie 240 (odd code 0x7f) / 256: rounds to 256, overflows */
        { QR_DT_F8E4M3FNUZ, 1e6, 0x7f, 0x80 },
        { QR_DT_F8E4M3FNUZ, -INFINITY, 0xff, 0x80 },
        { QR_DT_F8E5M2, 61439, 0x7b, 0x7b },
        { QR_DT_F8E5M2, 61440, 0x7b, 0x7c },
        { QR_DT_F8E5M2, -1e6, 0xfb, 0xfc },
        { QR_DT_F8E5M2, INFINITY, 0x7b, 0x7c },
        { QR_DT_F8E5M2FNUZ, 1e300, 0x7f, 0x80 },
        { QR_DT_F8E5M2FNUZ, INFINITY, 0x7f, 0x80 },
        { QR_DT_F4E2M1, 7, 0x7, 0x7 },
        { QR_DT_F4E2M1, -1e6, 0xf, 0xf },
        { QR_DT_F4E2M1, -INFINITY, 0xf, 0xf },
        { QR_DT_F4E2M1, NAN, 0x7, 0x7 },
        { QR_DT_F8E4M3FN, NAN, 0x7f, 0x7f },
        { QR_DT_F8E4M3FNUZ, NAN, 0x80, 0x80 },
    };
    for (int k = 0; k < QR_ARRAY_LEN(cases); k++) {
        QT_CHECKF(qr_f64_to_f8(cases[k].v, cases[k].dt, true) == cases[k].sat, "case %d", k);
        QT_CHECKF(qr_f64_to_f8(cases[k].v, cases[k].dt, false) == cases[k].nosat, "case %d", k);
    }
    /* e8m0: powers of two, rounding modes, saturation. */
    QT_CHECK(qr_tensor_f32_to_e8m0(1.0f, true, QR_E8M0_UP) == 127 && qr_tensor_f32_to_e8m0(1.1f, true, QR_E8M0_UP) == 128);
    QT_CHECK(qr_tensor_f32_to_e8m0(1.1f, true, QR_E8M0_DOWN) == 127 && qr_tensor_f32_to_e8m0(1.1f, true, QR_E8M0_NEAREST) == 127);
    QT_CHECK(qr_tensor_f32_to_e8m0(1.5f, true, QR_E8M0_NEAREST) == 128 && qr_tensor_f32_to_e8m0(0.124f, true, QR_E8M0_UP) == 124);
    QT_CHECK(qr_tensor_f32_to_e8m0(0.0f, true, QR_E8M0_UP) == 0 && qr_tensor_f32_to_e8m0(NAN, true, QR_E8M0_UP) == 0xff);
    QT_CHECK(qr_tensor_f32_to_e8m0(FLT_MAX, true, QR_E8M0_UP) == 0xfe && qr_tensor_f32_to_e8m0(FLT_MAX, false, QR_E8M0_UP) == 0xff);
    QT_CHECK(qr_tensor_f32_to_e8m0(INFINITY, true, QR_E8M0_UP) == 0xff);
}

/* int2 / uint2 / float4 / float8 survive qr_pb_write (packed low bits first) and qr_pb_read;
 * integers wrap into the narrow types. */
static void test_subbyte_pb_roundtrip(void) {
    QrDType types[] = { QR_DT_S2, QR_DT_U2, QR_DT_F4E2M1, QR_DT_F8E5M2, QR_DT_S4 };
    for (int k = 0; k < QR_ARRAY_LEN(types); k++) {
        QrTensor t = {0}, u = {0};
        int64_t dims[2] = { 3, 5 };                       /* 15: not a multiple of 4 */
        QT_OK(qr_tensor_set_shape(&t, types[k], 2, dims));
        QT_OK(qr_tensor_alloc_data(&t));
        for (int64_t i = 0; i < t.numel; i++) {
            if (qr_dtype_is_float(t.dtype)) ((uint8_t *)t.data)[i] = (uint8_t)((i * 37 + 3) % (t.dtype == QR_DT_F4E2M1 ? 16 : 256));
            else qr_tensor_set_i64(&t, i, i - 7);
        }
        char path[] = "build/test_subbyte_pb.pb";
        QT_OK(qr_pb_write(path, &t, "x"));
        QT_OK(qr_pb_read(path, &u, NULL, 0));
        QT_CHECK(u.dtype == t.dtype && qr_tensor_same_shape(&t, &u));
        QT_CHECKF(memcmp(t.data, u.data, (size_t)t.numel) == 0, "%s", qr_dtype_name(t.dtype));
        if (t.dtype == QR_DT_S2) {                          /* -7 wraps to 1, -2..1 stay, 2 wraps to -2 */
            QT_CHECK(qr_tensor_get_i64(&u, 0) == 1 && qr_tensor_get_i64(&u, 5) == -2 && qr_tensor_get_i64(&u, 8) == 1);
            QT_CHECK(qr_tensor_get_i64(&u, 9) == -2 && qr_tensor_get_i64(&u, 10) == -1);
        }
        if (t.dtype == QR_DT_U2) QT_CHECK(qr_tensor_get_i64(&u, 0) == 1 && qr_tensor_get_i64(&u, 10) == 3);
        if (t.dtype == QR_DT_S4) QT_CHECK(qr_tensor_get_i64(&u, 0) == -7 && qr_tensor_get_i64(&u, 14) == 7);
        qr_tensor_free_data(&t);
        qr_tensor_free_data(&u);
        remove(path);
    }
    /* Bit layout: int2 elements 1, -2, -1, 0 pack to 0b00111001 (0x39). */
    QrTensor t = {0};
    int64_t n = 4;
    QT_OK(qr_tensor_set_shape(&t, QR_DT_S2, 1, &n));
    QT_OK(qr_tensor_alloc_data(&t));
    int vals[4] = { 1, -2, -1, 0 };
    for (int i = 0; i < 4; i++) qr_tensor_set_i64(&t, i, vals[i]);
    char path[] = "build/test_subbyte_pb.pb";
    QT_OK(qr_pb_write(path, &t, "x"));
    unsigned char *buf;
    size_t len;
    QT_OK(qr_file_read(path, 0, &buf, &len));
    QT_CHECK(len > 3 && buf[len - 1] == 0x39 && buf[len - 2] == 1);   /* raw_data: length 1, byte 0x39 */
    qr_aligned_free(buf);
    qr_tensor_free_data(&t);
    remove(path);
    /* .npy refuses float8 with a clear message. */
    QrTensor f = {0};
    QT_OK(qr_tensor_set_shape(&f, QR_DT_F8E4M3FN, 1, &n));
    QT_OK(qr_tensor_alloc_data(&f));
    unsigned char *nb = NULL;
    size_t nl = 0;
    QT_CHECK(qr_npy_encode(&f, &nb, &nl) == QR_ERR_UNSUPPORTED && strstr(qr_err_msg(), "float8e4m3fn"));
    qr_tensor_free_data(&f);
}

/* qr_pool_memcpy: the bytes of memcpy at 1, 2 and 3 threads, below, at and above the size from
 * which it splits the copy (256 KB) and with a last task shorter than the others; unaligned ends. */
static void test_pool_memcpy(void) {
    const size_t sizes[] = { 0, 1, 4096, (256 << 10) - 1, 256 << 10, (256 << 10) + 1, (1 << 20) + 13, (3 << 20) + 7 };
    const size_t cap = (3 << 20) + 16;
    unsigned char *src = malloc(cap), *dst = malloc(cap);
    QT_CHECK(src && dst);
    uint32_t r = 12345u;
    for (size_t i = 0; i < cap; i++) { r = r * 1664525u + 1013904223u; src[i] = (unsigned char)(r >> 24); }
    const int saved = qr_pool_threads();
    int bad = 0;
    char msg[160] = "";
    for (int th = 1; th <= 3; th++) {
        qr_pool_init(th);
        for (int k = 0; k < QR_ARRAY_LEN(sizes); k++)
            for (int off = 0; off < 2; off++) {
                const size_t n = sizes[k];
                memset(dst, 0xa5, cap);
                qr_pool_memcpy(dst + off, src + 3 - off, n);
                bool ok = !memcmp(dst + off, src + 3 - off, n);
                for (size_t i = 0; i < (size_t)off; i++) ok = ok && dst[i] == 0xa5;
                for (size_t i = n + (size_t)off; i < cap; i++) ok = ok && dst[i] == 0xa5;
                if (!ok && !bad++) snprintf(msg, sizeof msg, "%d threads, %zu bytes, offset %d", th, n, off);
            }
    }
    qr_pool_init(saved);
    free(src);
    free(dst);
    QT_CHECKF(bad == 0, "%d copies differ from memcpy; first: %s", bad, msg);
}

/* base.c's large blocks: reuse, the tail given back, eviction that keeps what is mapped within the
 * peak of the blocks in use, heap pointers through qr_aligned_free, qr_blk_keep(false), threads. */
#if !QR__BLK_ASAN
static size_t qt_blk_pages(size_t n) { size_t pg = QR__BLK_PAGE; return ((n + 2 * QR_ALIGN - 1) / QR_ALIGN * QR_ALIGN + pg - 1) / pg * pg; }

typedef struct QtBlkLive { unsigned char *p; size_t n; unsigned char tag; } QtBlkLive;

static bool qt_blk_intact(const QtBlkLive *l) {
    for (size_t i = 0; i < l->n; i += 97) if (l->p[i] != l->tag) return false;
    return l->p[l->n - 1] == l->tag;
}

static void *qt_blk_thread(void *arg) {
    int bad = 0;
    uint32_t r = (uint32_t)(uintptr_t)arg;
    QtBlkLive live[8] = {{0}};
    for (int it = 0; it < 4000; it++) {
        r = r * 1664525u + 1013904223u;
        QtBlkLive *l = &live[(r >> 8) % 8];
        if (l->p) {
            if (!qt_blk_intact(l)) bad++;
            qr_aligned_free(l->p);
            l->p = NULL;
        } else {
            l->n = (size_t)(64 << 10) + (r >> 12) % (1u << 20);
            l->tag = (unsigned char)(r >> 3);
            l->p = qr_aligned_alloc(l->n);
            if (!l->p) { bad++; continue; }
            memset(l->p, l->tag, l->n);
        }
    }
    for (int k = 0; k < 8; k++) if (live[k].p) { if (!qt_blk_intact(&live[k])) bad++; qr_aligned_free(live[k].p); }
    return (void *)(intptr_t)bad;
}

#endif

static void test_blocks(void) {
#if QR__BLK_ASAN
    QT_SKIP("blocks are heap memory under AddressSanitizer");
#else
    qr_blk_keep(false);
    qr_blk_keep(true);
    size_t kept, m0, m;
    qr_blk_bytes(&kept, &m0);
    QT_CHECK(kept == 0);
    unsigned char *a = qr_aligned_alloc(1 << 20);
    QT_CHECK(a && (uintptr_t)a % QR_ALIGN == 0);
    memset(a, 7, (1 << 20) + QR_ALIGN);                    /* the readable padding is there */
    qr_blk_bytes(&kept, &m);
    QT_CHECKF(m - m0 == qt_blk_pages(1 << 20), "mapped %zu", m - m0);
    qr_aligned_free(a);
    qr_blk_bytes(&kept, &m);
    QT_CHECK(kept == qt_blk_pages(1 << 20) && m - m0 == kept);
    unsigned char *b = qr_aligned_alloc(1 << 20);           /* kept: the same block, not zeroed */
    QT_CHECK(b == a && b[0] == 0xa5);
    qr_aligned_free(b);
    unsigned char *c = qr_aligned_alloc(600 << 10);         /* at least half the block: its tail goes */
    qr_blk_bytes(&kept, &m);
    QT_CHECKF(c == a && kept == 0 && m - m0 == qt_blk_pages(600 << 10), "kept %zu mapped %zu", kept, m - m0);
    qr_aligned_free(c);
    unsigned char *d = qr_aligned_alloc(2 << 20);           /* no kept block fits: it is unmapped first */
    qr_blk_bytes(&kept, &m);
    QT_CHECKF(d && kept == 0 && m - m0 == qt_blk_pages(2 << 20), "kept %zu mapped %zu", kept, m - m0);
    unsigned char *e = qr_aligned_alloc(4000);              /* small: the heap */
    QT_CHECK(e && (uintptr_t)e % QR_ALIGN == 0);
    qr_aligned_free(e);
    qr_aligned_free(malloc(100 << 10));                     /* heap pointers are freed as free() does */
    qr_blk_bytes(&kept, &m);
    QT_CHECK(kept == 0 && m - m0 == qt_blk_pages(2 << 20));
    qr_aligned_free(d);
    qr_blk_keep(false);                                     /* the kept block goes, and so do later frees */
    qr_blk_bytes(&kept, &m);
    QT_CHECK(kept == 0 && m == m0);
    d = qr_aligned_alloc(2 << 20);
    qr_aligned_free(d);
    qr_blk_bytes(&kept, &m);
    QT_CHECK(kept == 0 && m == m0);
    qr_blk_keep(true);

    /* Random sizes: every block keeps its contents, and what is mapped never exceeds the peak in use. */
    QtBlkLive live[16] = {{0}};
    size_t in_use = 0, peak = 0;
    uint32_t r = 99u;
    int bad = 0;
    char msg[160] = "";
    for (int it = 0; it < 3000; it++) {
        r = r * 1664525u + 1013904223u;
        QtBlkLive *l = &live[(r >> 8) % 16];
        if (l->p) {
            if (!qt_blk_intact(l) && !bad++) snprintf(msg, sizeof msg, "step %d: a block's contents changed", it);
            qr_aligned_free(l->p);
            in_use -= qt_blk_pages(l->n);
            l->p = NULL;
        } else {
            static const size_t sz[] = { 64 << 10, 100 << 10, 300 << 10, 1 << 20, 3 << 20, (3 << 20) + 5000 };
            l->n = sz[(r >> 12) % QR_ARRAY_LEN(sz)] + (r >> 20) % 4096;
            l->tag = (unsigned char)(it + 1);
            l->p = qr_aligned_alloc(l->n);
            if (!l->p) { bad++; break; }
            memset(l->p, l->tag, l->n);
            in_use += qt_blk_pages(l->n);
            peak = QR_MAX(peak, in_use);
        }
        qr_blk_bytes(&kept, &m);
        if (m - m0 > peak && !bad++) snprintf(msg, sizeof msg, "step %d: %zu bytes mapped, peak in use %zu", it, m - m0, peak);
    }
    for (int k = 0; k < 16; k++) if (live[k].p) qr_aligned_free(live[k].p);
    QT_CHECKF(bad == 0, "%d bad steps; first: %s", bad, msg);

    /* A miss larger than many small kept blocks together unmaps all it needs (here all 48). */
    qr_blk_keep(false);
    qr_blk_keep(true);
    void *sm[48];
    for (int k = 0; k < 48; k++) sm[k] = qr_aligned_alloc(64 << 10);
    for (int k = 0; k < 48; k++) qr_aligned_free(sm[k]);
    void *big = qr_aligned_alloc(4 << 20);
    qr_blk_bytes(&kept, &m);
    QT_CHECKF(big && kept == 0 && m - m0 == qt_blk_pages(4 << 20), "kept %zu mapped %zu after a miss of 4 MiB", kept, m - m0);
    qr_aligned_free(big);

    pthread_t th[2];
    for (int t = 0; t < 2; t++) QT_CHECK(pthread_create(&th[t], NULL, qt_blk_thread, (void *)(uintptr_t)(t + 5)) == 0);
    for (int t = 0; t < 2; t++) { void *res; pthread_join(th[t], &res); bad += (int)(intptr_t)res; }
    QT_CHECKF(bad == 0, "%d blocks changed or failed with two threads", bad);
    qr_blk_keep(false);
    qr_blk_keep(true);
    qr_blk_bytes(&kept, &m);
    QT_CHECK(kept == 0 && m == m0);
#endif
}

static void qt_base_all(void) {
    QT_RUN(test_arena);
    QT_RUN(test_strmap);
    QT_RUN(test_f16);
    QT_RUN(test_shape_overflow);
    QT_RUN(test_npy_roundtrip);
    QT_RUN(test_npy_rejects);
    QT_RUN(test_pb_roundtrip);
    QT_RUN(test_minifloat_roundtrip);
    QT_RUN(test_minifloat_ties);
    QT_RUN(test_minifloat_saturate);
    QT_RUN(test_subbyte_pb_roundtrip);
    QT_RUN(test_pool_memcpy);
    QT_RUN(test_blocks);
}
