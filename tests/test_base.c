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
        uint16_t back = qr_f32_to_f16(f);
        if (f != f) QT_CHECK((back & 0x7c00) == 0x7c00 && (back & 0x3ff));
        else QT_CHECKF(back == h, "h=%04x f=%g back=%04x", h, f, back);
    }
    QT_CHECK(qr_f32_to_f16(65520.0f) == 0x7c00);           /* rounds to inf */
    QT_CHECK(qr_f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00); /* tie to even */
    QT_CHECK(qr_f32_to_f16(5.9604645e-08f) == 0x0001);     /* smallest subnormal */
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

static void qt_base_all(void) {
    QT_RUN(test_arena);
    QT_RUN(test_strmap);
    QT_RUN(test_f16);
    QT_RUN(test_shape_overflow);
    QT_RUN(test_npy_roundtrip);
    QT_RUN(test_npy_rejects);
    QT_RUN(test_pb_roundtrip);
}
