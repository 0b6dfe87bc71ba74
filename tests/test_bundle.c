/* tests/bundle — the building blocks of the report bundle: SHA-256 (FIPS 180-4
 * vectors, sha256sum), the JSON writer and strict parser (python's json as a
 * second reader), the zip writer (minizip's unzip, `unzip -t`, determinism,
 * injected write failures), the HTML builder (rendered in headless Chromium) and
 * the progress display (a fake clock). */

#include <sys/wait.h>
#include <dirent.h>
#include "minizip/unzip.h"

/* ---- helpers ------------------------------------------------------------------------ */

/* Runs a shell command quietly; returns its exit code (-1 if it did not exit). */
static int qt_bd_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int qt_bd_sh(const char *fmt, ...) {
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool qt_bd_have(const char *prog) { return qt_bd_sh("command -v %s >/dev/null 2>&1", prog) == 0; }

/* Whole file into malloc'd memory (stdio: independent of the code under test). */
static QrStatus qt_bd_read(const char *path, unsigned char **out, size_t *len) {
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return qr_errf(QR_ERR_IO, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) { unsigned char *nb = realloc(buf, cap *= 2); if (!nb) free(buf); buf = nb; }
    }
    fclose(f);
    if (!buf) return qr_errf(QR_ERR_NOMEM, "out of memory");
    *out = buf;
    *len = n;
    return QR_OK;
}

static bool qt_bd_file_equals(const char *path, const void *data, size_t len) {
    unsigned char *buf = NULL;
    size_t n = 0;
    if (qt_bd_read(path, &buf, &n) != QR_OK) return false;
    bool eq = n == len && (len == 0 || memcmp(buf, data, len) == 0);
    free(buf);
    return eq;
}

static bool qt_bd_exists(const char *path) { struct stat sb; return lstat(path, &sb) == 0; }

/* Names in `dir` other than . and .., joined with spaces into buf (sorted by readdir order). */
static int qt_bd_list_dir(const char *dir, char *buf, size_t cap) {
    buf[0] = 0;
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "%s%s", n ? " " : "", de->d_name);
        n++;
    }
    closedir(d);
    return n;
}

static void qt_bd_fill_random(unsigned char *p, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(qr_rng_next(&seed) >> 56);
}

/* ---- SHA-256 ------------------------------------------------------------------------------ */

static void qt_sha256_vectors_once(void) {
    /* FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional") */
    static const struct { const char *msg; const char *hex; } v[] = {
        { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
        { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
        { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
        { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
          "mnopqrstnopqrstu", "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
    };
    uint8_t d[QR_SHA256_LEN];
    char hex[65];
    for (int i = 0; i < QR_ARRAY_LEN(v); i++) {
        qr_sha256(v[i].msg, strlen(v[i].msg), d);
        qr_sha256_hex(d, hex);
        QT_CHECKF(!strcmp(hex, v[i].hex), "vector %d: %s", i, hex);
        /* Any split of the input gives the same digest. */
        size_t n = strlen(v[i].msg);
        for (size_t cut = 0; cut <= n; cut++) {
            QrSha256 s;
            qr_sha256_init(&s);
            qr_sha256_update(&s, v[i].msg, cut);
            qr_sha256_update(&s, v[i].msg + cut, n - cut);
            qr_sha256_final(&s, d);
            qr_sha256_hex(d, hex);
            QT_CHECKF(!strcmp(hex, v[i].hex), "vector %d split at %zu", i, cut);
        }
    }
    /* One million 'a', fed in odd-sized pieces. */
    static char a[1000];
    memset(a, 'a', sizeof a);
    QrSha256 s;
    qr_sha256_init(&s);
    size_t left = 1000000, piece = 1;
    while (left) { size_t k = QR_MIN(left, piece); qr_sha256_update(&s, a, k); left -= k; piece = piece * 7 % 997 + 1; }
    qr_sha256_final(&s, d);
    qr_sha256_hex(d, hex);
    QT_CHECKF(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"), "1M a: %s", hex);
}

/* The vectors through each block function this machine has (portable, SHA extensions),
 * and both on random data of many lengths. */
static void test_sha256_vectors(void) {
    QrCpu cpu;
    qr_cpu_detect(&cpu);
    int saved = qr__sha_ni;
    qr__sha_ni = -1;
    qt_sha256_vectors_once();
    if (!cpu.sha) { printf("  sha256: no SHA extensions on this CPU, portable block function only\n"); qr__sha_ni = saved; return; }
    qr__sha_ni = 1;
    qt_sha256_vectors_once();
    unsigned char *buf = malloc(5000);
    QT_CHECK(buf);
    if (!buf) return;
    qt_bd_fill_random(buf, 5000, 11);
    int bad = 0;
    for (size_t n = 0; n <= 5000; n += 1 + n / 7) {
        uint8_t d1[QR_SHA256_LEN], d2[QR_SHA256_LEN];
        qr__sha_ni = -1;
        qr_sha256(buf, n, d1);
        qr__sha_ni = 1;
        qr_sha256(buf, n, d2);
        bad += memcmp(d1, d2, sizeof d1) != 0;
    }
    free(buf);
    qr__sha_ni = saved;
    QT_CHECKF(bad == 0, "%d lengths where the SHA-extension digest differs", bad);
}

static void test_sha256_file(void) {
    /* Sizes around the 64-byte block and the 64 KiB read chunk. */
    static const size_t sizes[] = { 0, 55, 56, 63, 64, 65, 65535, 65536, 65537, 200003 };
    unsigned char *buf = malloc(200003);
    QT_CHECK(buf);
    qt_bd_fill_random(buf, 200003, 7);
    char path[512], hex[65], hex2[65], line[256];
    uint8_t d[QR_SHA256_LEN], d2[QR_SHA256_LEN];
    bool sum = qt_bd_have("sha256sum");
    for (int i = 0; i < QR_ARRAY_LEN(sizes); i++) {
        snprintf(path, sizeof path, "%s/sha_%zu.bin", qt_tmpdir(), sizes[i]);
        QrStatus st = qr_file_write_atomic(path, buf, sizes[i]);
        if (st != QR_OK) { free(buf); QT_OK(st); }
        st = qr_sha256_file(path, d);
        if (st != QR_OK) { free(buf); QT_OK(st); }
        qr_sha256(buf, sizes[i], d2);
        qr_sha256_hex(d, hex);
        qr_sha256_hex(d2, hex2);
        if (strcmp(hex, hex2)) { free(buf); QT_CHECKF(0, "size %zu: file %s, memory %s", sizes[i], hex, hex2); }
        if (sum) {   /* coreutils as an independent oracle */
            char out[600];
            snprintf(out, sizeof out, "%s.sum", path);
            qt_bd_sh("sha256sum '%s' > '%s'", path, out);
            qt_slurp(out, line, sizeof line);
            if (strncmp(line, hex, 64)) { free(buf); QT_CHECKF(0, "size %zu: sha256sum %.64s, ours %s", sizes[i], line, hex); }
        }
    }
    free(buf);
    if (!sum) qt_record_skip("test_sha256_file coreutils", "sha256sum not found; file digests checked against the in-memory digest only");
    else qt_record("test_sha256_file coreutils", true, "%s", "");
    snprintf(path, sizeof path, "%s/no_such_file", qt_tmpdir());
    QT_CHECK(qr_sha256_file(path, d) == QR_ERR_IO && strstr(qr_err_msg(), "no_such_file"));
}

/* ---- JSON -------------------------------------------------------------------------------- */

static void test_json_writer_exact(void) {
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_kv_int(&j, "schema_version", 1);
    qr_json_kv_str(&j, "s", "q\"b\\n\n\t\x01\x7f\xc3\xa9");
    qr_json_key(&j, "shape");
    qr_json_arr_begin_compact(&j);
    qr_json_int(&j, 1); qr_json_int(&j, 3); qr_json_int(&j, 224);
    qr_json_arr_end(&j);
    qr_json_key(&j, "empty");
    qr_json_arr_begin(&j);
    qr_json_arr_end(&j);
    qr_json_key(&j, "v");
    qr_json_arr_begin(&j);
    qr_json_num(&j, 0.1); qr_json_num(&j, NAN); qr_json_num(&j, -INFINITY); qr_json_bool(&j, true); qr_json_null(&j);
    qr_json_obj_begin_compact(&j);
    qr_json_kv_f32(&j, "f", 0.1f);
    qr_json_kv_bool(&j, "b", false);
    qr_json_obj_end(&j);
    qr_json_arr_end(&j);
    qr_json_kv_str(&j, "bad_utf8", "a\xff\xc3(\xed\xa0\x80z");
    qr_json_obj_end(&j);
    char *text = NULL;
    size_t len = 0;
    QT_OK(qr_json_finish(&j, &text, &len));
    /* Written by hand from json.h's rules: 2-space indent, one-line compact containers,
     * escapes, U+FFFD for each invalid byte, NaN/Inf as null. */
    const char *want =
        "{\n"
        "  \"schema_version\": 1,\n"
        "  \"s\": \"q\\\"b\\\\n\\n\\t\\u0001\x7f\xc3\xa9\",\n"
        "  \"shape\": [1, 3, 224],\n"
        "  \"empty\": [],\n"
        "  \"v\": [\n"
        "    0.1,\n"
        "    null,\n"
        "    null,\n"
        "    true,\n"
        "    null,\n"
        "    {\"f\": 0.1, \"b\": false}\n"
        "  ],\n"
        "  \"bad_utf8\": \"a\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz\"\n"
        "}\n";
    bool ok = len == strlen(want) && !strcmp(text, want);
    if (!ok) printf("got:\n%s\nwant:\n%s\n", text, want);
    free(text);
    QT_CHECK(ok);
}

static void test_json_numbers(void) {
    char buf[32];
    struct { double v; bool f; const char *want; } cases[] = {
        { 0.1, false, "0.1" }, { 1.0 / 3.0, false, "0.3333333333333333" }, { 1e300, false, "1e+300" },
        { -0.0, false, "-0" }, { 5e-324, false, "5e-324" }, { 100, false, "100" },
        { 0.1f, true, "0.1" }, { 16777217.0f, true, "16777216" }, { 1.0f / 3.0f, true, "0.33333334" },
        { 0.1f, false, "0.10000000149011612" },
    };
    for (int i = 0; i < QR_ARRAY_LEN(cases); i++) {
        QT_CHECK(qr_json_format_num(cases[i].v, cases[i].f, buf));
        QT_CHECKF(!strcmp(buf, cases[i].want), "%d: %s want %s", i, buf, cases[i].want);
    }
    QT_CHECK(!qr_json_format_num(NAN, false, buf) && !qr_json_format_num(INFINITY, true, buf));
    /* Random bit patterns: every finite double and float reads back exactly, and no
     * shorter precision would have (so the output is the shortest %g form). */
    uint64_t seed = 99;
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = qr_rng_next(&seed);
        double d;
        memcpy(&d, &bits, 8);
        if (!isfinite(d)) continue;
        QT_CHECK(qr_json_format_num(d, false, buf));
        QT_CHECKF(strtod(buf, NULL) == d, "%s", buf);
        uint32_t b32 = (uint32_t)bits;
        float f;
        memcpy(&f, &b32, 4);
        if (!isfinite(f)) continue;
        QT_CHECK(qr_json_format_num(f, true, buf));
        QT_CHECKF((float)strtod(buf, NULL) == f, "%s", buf);
        char shorter[40];
        int digits = 0;
        for (const char *c = buf; *c && *c != 'e'; c++) if (isdigit((unsigned char)*c)) digits++;
        if (digits > 1 && !strchr(buf, 'e')) {
            qt_fmt(shorter, sizeof shorter, "%.*g", digits - 1, (double)f);
            QT_CHECKF((float)strtod(shorter, NULL) != f || strlen(shorter) >= strlen(buf), "%s vs %s", buf, shorter);
        }
    }
}

static void test_json_misuse(void) {
    char *t = NULL;
    QrJson j;
    qr_json_init(&j); qr_json_obj_begin(&j); qr_json_int(&j, 1); qr_json_obj_end(&j);
    QT_CHECK(qr_json_finish(&j, &t, NULL) == QR_ERR_INVALID && strstr(qr_err_msg(), "without a key"));
    qr_json_free(&j);
    qr_json_init(&j); qr_json_arr_begin(&j); qr_json_key(&j, "k");
    QT_CHECK(qr_json_finish(&j, &t, NULL) == QR_ERR_INVALID && strstr(qr_err_msg(), "outside an object"));
    qr_json_free(&j);
    qr_json_init(&j); qr_json_arr_begin(&j);
    QT_CHECK(qr_json_finish(&j, &t, NULL) == QR_ERR_INVALID && strstr(qr_err_msg(), "unclosed"));
    qr_json_free(&j);
    qr_json_init(&j); qr_json_int(&j, 1); qr_json_int(&j, 2);
    QT_CHECK(qr_json_finish(&j, &t, NULL) == QR_ERR_INVALID && strstr(qr_err_msg(), "second top-level"));
    qr_json_free(&j);
    qr_json_init(&j); qr_json_arr_begin(&j); qr_json_obj_end(&j);
    QT_CHECK(qr_json_finish(&j, &t, NULL) == QR_ERR_INVALID);
    qr_json_free(&j);
    qr_json_init(&j);
    for (int i = 0; i < QR_JSON_MAX_DEPTH + 1; i++) qr_json_arr_begin(&j);
    QT_CHECK(qr_json_finish(&j, &t, NULL) == QR_ERR_INVALID && strstr(qr_err_msg(), "too deep"));
    qr_json_free(&j);
    QT_CHECK(t == NULL);
}

static void test_json_parser(void) {
    static const char *const bad[] = {
        "", " ", "[1,]", "{\"a\":1,}", "01", "-01", "1.", ".5", "+1", "NaN", "Infinity", "[1 2]", "\"\\x\"",
        "\"a\nb\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\\ud800\\u0041\"", "{\"a\":1,\"a\":2}", "1 2", "tru",
        "{a:1}", "'a'", "1e999", "[", "{\"a\"}", "{\"a\" 1}", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
        "\"\\u12\"", "[1,,2]", "nul", "1e", "1e+", "-", "// c\n1", "\"abc",
    };
    QrArena a = {0};
    QrJsonVal *v;
    for (int i = 0; i < QR_ARRAY_LEN(bad); i++) {
        QrStatus st = qr_json_parse(&a, bad[i], strlen(bad[i]), &v);
        QT_CHECKF(st == QR_ERR_PARSE, "accepted bad[%d] '%s'", i, bad[i]);
    }
    char deep[600];
    memset(deep, '[', 300); memset(deep + 300, ']', 300);
    QT_CHECK(qr_json_parse(&a, deep, 600, &v) == QR_ERR_PARSE && strstr(qr_err_msg(), "256"));
    QT_OK(qr_json_parse(&a, deep + 100, 400, &v));   /* 200 deep is fine */

    const char *good = " {\"n\": -0.5e-3, \"z\": 0, \"arr\": [1, 2.5E2, true, false, null, {}], "
                       "\"s\": \"x\\u00e9\\ud83d\\ude00\\n\\/\\\"\", \"e\": \"\", \"u\": \"\xe2\x82\xac\"} \n";
    QT_OK(qr_json_parse(&a, good, strlen(good), &v));
    QT_CHECK(v->type == QR_JSON_OBJ && v->n == 6);
    const QrJsonVal *n = qr_json_get(v, "n"), *arr = qr_json_get(v, "arr"), *s = qr_json_get(v, "s");
    QT_CHECK(n && n->type == QR_JSON_NUM && n->num == -0.5e-3);
    QT_CHECK(arr && arr->n == 6 && qr_json_at(arr, 1)->num == 250 && qr_json_at(arr, 2)->b && !qr_json_at(arr, 3)->b);
    QT_CHECK(qr_json_at(arr, 4)->type == QR_JSON_NULL && qr_json_at(arr, 5)->type == QR_JSON_OBJ && !qr_json_at(arr, 6));
    QT_CHECK(s && !strcmp(s->str, "x\xc3\xa9\xf0\x9f\x98\x80\n/\""));
    QT_CHECK(!strcmp(qr_json_get(v, "u")->str, "\xe2\x82\xac") && qr_json_get(v, "e")->str_len == 0);
    QT_CHECK(!qr_json_get(v, "missing") && !qr_json_get(arr, "n"));
    qr_arena_free(&a);
}

/* Writer output read back by our parser and by python's json module. */
static void test_json_roundtrip(void) {
    QrJson j;
    qr_json_init(&j);
    qr_json_obj_begin(&j);
    qr_json_key(&j, "rows");
    qr_json_arr_begin(&j);
    uint64_t seed = 5;
    double vals[200];
    char names[200][24];
    for (int i = 0; i < 200; i++) {
        uint64_t r = qr_rng_next(&seed);
        vals[i] = ldexp((double)(int64_t)r, -40 - (int)(r % 40));
        for (int k = 0; k < 23; k++) names[i][k] = (char)(1 + (qr_rng_next(&seed) % 255));   /* any byte but NUL */
        names[i][23] = 0;
        qr_json_obj_begin(&j);
        qr_json_kv_str(&j, "name", names[i]);
        qr_json_kv_num(&j, "v", vals[i]);
        qr_json_obj_end(&j);
    }
    qr_json_arr_end(&j);
    qr_json_obj_end(&j);
    char *text;
    size_t len;
    QT_OK(qr_json_finish(&j, &text, &len));
    QrArena a = {0};
    QrJsonVal *v;
    QrStatus st = qr_json_parse(&a, text, len, &v);
    if (st != QR_OK) { free(text); qr_arena_free(&a); QT_OK(st); }
    const QrJsonVal *rows = qr_json_get(v, "rows");
    bool ok = rows && rows->n == 200;
    for (int i = 0; ok && i < 200; i++) {
        const QrJsonVal *row = qr_json_at(rows, i);
        ok = qr_json_get(row, "v")->num == vals[i];
        /* Valid UTF-8 survives; each invalid byte is one U+FFFD. */
        const unsigned char *p = (const unsigned char *)names[i];
        char want[100];
        size_t o = 0;
        for (size_t k = 0; k < 23;) {
            int ul = qr_json_utf8_len(p + k, 23 - k);
            if (ul) { memcpy(want + o, p + k, (size_t)ul); o += (size_t)ul; k += (size_t)ul; }
            else { memcpy(want + o, "\xef\xbf\xbd", 3); o += 3; k++; }
        }
        want[o] = 0;
        if (ok) ok = !strcmp(qr_json_get(row, "name")->str, want);
        if (!ok) printf("row %d differs\n", i);
    }
    qr_arena_free(&a);
    char path[512];
    snprintf(path, sizeof path, "%s/rt.json", qt_tmpdir());
    st = qr_file_write_atomic(path, text, len);
    free(text);
    QT_OK(st);
    QT_CHECK(ok);
    if (qt_bd_have("/usr/bin/python3")) {   /* an independent reader, counted on its own */
        int rc = qt_bd_sh("/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1],encoding=\"utf-8\")); "
                          "sys.exit(0 if len(d[\"rows\"])==200 else 3)' '%s'", path);
        qt_record("test_json_roundtrip python3", rc == 0, "python json rejected %s (rc %d)", path, rc);
    } else {
        qt_record_skip("test_json_roundtrip python3", "/usr/bin/python3 not found; JSON checked with our parser only");
    }
}

/* ---- zip ----------------------------------------------------------------------------------- */

typedef struct QtBdEntry { const char *name; unsigned char *data; size_t len; } QtBdEntry;

/* The sample bundle: text, JSON, a "PNG" (incompressible, stored), an empty file,
 * a non-ASCII name, a large compressible file and one entry streamed from disk. */
static int qt_bd_sample(QtBdEntry *e, const char *disk_path) {
    static unsigned char png[5000], big[3 << 20], disk[150000];
    static const char html[] = "<!DOCTYPE html><title>t</title>";
    static const char json[] = "{\"schema_version\": 1}\n";
    qt_bd_fill_random(png, sizeof png, 1);
    for (size_t i = 0; i < sizeof big; i++) big[i] = (unsigned char)("layer,0.99,inf\n"[i % 15]);
    qt_bd_fill_random(disk, sizeof disk, 3);
    memset(disk, 'x', 70000);
    qr_file_write_atomic(disk_path, disk, sizeof disk);
    int n = 0;
    e[n++] = (QtBdEntry){ "summary.json", (unsigned char *)json, strlen(json) };
    e[n++] = (QtBdEntry){ "plots/per_layer_metrics.png", png, sizeof png };
    e[n++] = (QtBdEntry){ "index.html", (unsigned char *)html, strlen(html) };
    e[n++] = (QtBdEntry){ "empty.txt", (unsigned char *)"", 0 };
    e[n++] = (QtBdEntry){ "plots/distribution/conv_\xc3\xa9t\xc3\xa9.png", png, 100 };
    e[n++] = (QtBdEntry){ "compare_per_layer_out.csv", big, sizeof big };
    e[n++] = (QtBdEntry){ "badcase.npy", disk, sizeof disk };    /* added from disk_path */
    return n;
}

static QrStatus qt_bd_build(QrZip *z, const QtBdEntry *e, int n, const char *disk_path, bool reverse) {
    QR_TRY(qr_zip_init(z));
    for (int k = 0; k < n; k++) {
        int i = reverse ? n - 1 - k : k;
        if (!strcmp(e[i].name, "badcase.npy")) QR_TRY(qr_zip_add_file(z, e[i].name, disk_path));
        else if (!strcmp(e[i].name, "index.html")) QR_TRY(qr_zip_add_str(z, e[i].name, (const char *)e[i].data));
        else QR_TRY(qr_zip_add(z, e[i].name, e[i].data, e[i].len));
    }
    return QR_OK;
}

/* Reads a zip back with minizip's unzip: names in sorted order, contents, methods, time. */
static void qt_bd_check_zip(const char *path, const QtBdEntry *e, int n, bool *ok) {
    *ok = false;
    unzFile uf = unzOpen64(path);
    QT_CHECKF(uf, "unzOpen %s", path);
    unz_global_info64 gi;
    QT_CHECK(unzGetGlobalInfo64(uf, &gi) == UNZ_OK && gi.number_entry == (ZPOS64_T)n);
    const char *prev = "";
    int seen = 0;
    bool good = true;
    for (int r = unzGoToFirstFile(uf); r == UNZ_OK && good; r = unzGoToNextFile(uf)) {
        char name[512];
        unz_file_info64 fi;
        good = unzGetCurrentFileInfo64(uf, &fi, name, sizeof name, NULL, 0, NULL, 0) == UNZ_OK;
        if (!good) break;
        int k = -1;
        for (int i = 0; i < n; i++) if (!strcmp(e[i].name, name)) k = i;
        bool png = strstr(name, ".png") != NULL;
        /* 1700000000 = 2023-11-14T22:13:20Z */
        good = k >= 0 && strcmp(prev, name) < 0 && fi.uncompressed_size == e[k].len &&
               fi.compression_method == (png ? 0u : (uLong)Z_DEFLATED) && fi.size_file_extra == 0 &&
               fi.size_file_comment == 0 && fi.tmu_date.tm_year == 2023 && fi.tmu_date.tm_mon == 10 &&
               fi.tmu_date.tm_mday == 14 && fi.tmu_date.tm_hour == 22 && fi.tmu_date.tm_min == 13 &&
               fi.tmu_date.tm_sec == 20 && fi.external_fa == (0100644ul << 16) && fi.version == (3u << 8 | 20) &&
               ((fi.flag & 0x800) != 0) == (strchr(name, '\xc3') != NULL);
        if (!good) { printf("entry '%s' (k=%d): size %llu method %lu extra %lu date %u-%u-%u %u:%u:%u fa %lo ver %lx flag %lx\n",
                            name, k, (unsigned long long)fi.uncompressed_size, fi.compression_method, fi.size_file_extra,
                            fi.tmu_date.tm_year, fi.tmu_date.tm_mon, fi.tmu_date.tm_mday, fi.tmu_date.tm_hour,
                            fi.tmu_date.tm_min, fi.tmu_date.tm_sec, fi.external_fa, fi.version, fi.flag); break; }
        if (png) good = fi.compressed_size == fi.uncompressed_size;
        else if (!strcmp(name, "compare_per_layer_out.csv")) good = fi.compressed_size < e[k].len / 100;   /* repetitive */
        unsigned char *buf = malloc(e[k].len + 1);
        good = good && buf && unzOpenCurrentFile(uf) == UNZ_OK;
        int got = good ? unzReadCurrentFile(uf, buf, (unsigned)e[k].len + 1) : -1;
        good = good && got == (int)e[k].len && memcmp(buf, e[k].data, e[k].len) == 0 && unzCloseCurrentFile(uf) == UNZ_OK;
        free(buf);
        prev = e[k].name;
        seen++;
    }
    unzClose(uf);
    QT_CHECKF(good && seen == n, "zip content differs (seen %d of %d)", seen, n);
    *ok = true;
}

static void test_zip_roundtrip(void) {
    char path[512], disk[512], sde_old[64] = "";
    const char *old = getenv("SOURCE_DATE_EPOCH");
    if (old) snprintf(sde_old, sizeof sde_old, "%s", old);
    setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
    snprintf(disk, sizeof disk, "%s/badcase_src.npy", qt_tmpdir());
    QtBdEntry e[16];
    int n = qt_bd_sample(e, disk);
    QrZip z;
    QrStatus st = qt_bd_build(&z, e, n, disk, false);
    if (old) setenv("SOURCE_DATE_EPOCH", sde_old, 1); else unsetenv("SOURCE_DATE_EPOCH");
    if (st != QR_OK) { qr_zip_free(&z); QT_OK(st); }
    QT_CHECK(z.mtime == 1700000000);
    QT_CHECK(qr_zip_find(&z, "index.html") && qr_zip_find(&z, "badcase.npy")->src_path && !qr_zip_find(&z, "nope"));
    QT_CHECK(qr_zip_find(&z, "plots/per_layer_metrics.png")->method == QR_ZIP_STORE);
    QT_CHECK(qr_zip_find(&z, "badcase.npy")->method == QR_ZIP_DEFLATE_FAST && qr_zip_find(&z, "index.html")->method == QR_ZIP_DEFLATE);
    snprintf(path, sizeof path, "%s/bundle.zip", qt_tmpdir());
    st = qr_zip_write(&z, path);
    qr_zip_free(&z);
    QT_OK(st);
    bool ok;
    qt_bd_check_zip(path, e, n, &ok);
    if (!ok) return;
    /* Independent readers, when installed, each counted on its own. */
    if (qt_bd_have("unzip"))
        qt_record("test_zip_roundtrip unzip", qt_bd_sh("unzip -tq '%s' >/dev/null 2>&1", path) == 0, "unzip -t failed on %s", path);
    else qt_record_skip("test_zip_roundtrip unzip", "unzip not found; zip checked with minizip only");
    if (qt_bd_have("/usr/bin/python3"))
        qt_record("test_zip_roundtrip python3", qt_bd_sh("/usr/bin/python3 -m zipfile -t '%s' >/dev/null 2>&1", path) == 0,
                  "python zipfile -t failed on %s", path);
    else qt_record_skip("test_zip_roundtrip python3", "/usr/bin/python3 not found; zip checked with minizip only");
    /* SOURCE_DATE_EPOCH must be a number. */
    setenv("SOURCE_DATE_EPOCH", "yesterday", 1);
    st = qr_zip_init(&z);
    if (old) setenv("SOURCE_DATE_EPOCH", sde_old, 1); else unsetenv("SOURCE_DATE_EPOCH");
    qr_zip_free(&z);
    QT_CHECK(st == QR_ERR_INVALID && strstr(qr_err_msg(), "SOURCE_DATE_EPOCH"));
}

static void test_zip_deterministic(void) {
    char disk[512], p[3][512];
    snprintf(disk, sizeof disk, "%s/badcase_src2.npy", qt_tmpdir());
    QtBdEntry e[16];
    int n = qt_bd_sample(e, disk);
    char tz_old[64] = "";
    const char *tz = getenv("TZ");
    if (tz) snprintf(tz_old, sizeof tz_old, "%s", tz);
    for (int run = 0; run < 3; run++) {
        /* Different insertion order and time zone per run; run 2 has another mtime. */
        setenv("TZ", run == 1 ? "Asia/Tokyo" : "America/Los_Angeles", 1);
        tzset();
        QrZip z;
        QrStatus st = qt_bd_build(&z, e, n, disk, run == 1);
        z.mtime = run == 2 ? 1700000002 : 1700000000;
        snprintf(p[run], sizeof p[run], "%s/det%d.zip", qt_tmpdir(), run);
        if (st == QR_OK) st = qr_zip_write(&z, p[run]);
        qr_zip_free(&z);
        QT_OK(st);
    }
    if (tz) setenv("TZ", tz_old, 1); else unsetenv("TZ");
    tzset();
    unsigned char *a = NULL, *b = NULL, *c = NULL;
    size_t na = 0, nb = 0, nc = 0;
    QrStatus st = qt_bd_read(p[0], &a, &na);
    if (st == QR_OK) st = qt_bd_read(p[1], &b, &nb);
    if (st == QR_OK) st = qt_bd_read(p[2], &c, &nc);
    bool same01 = st == QR_OK && na == nb && !memcmp(a, b, na);
    bool same02 = st == QR_OK && na == nc && !memcmp(a, c, na);
    free(a); free(b); free(c);
    QT_OK(st);
    QT_CHECKF(same01, "two runs with the same input differ");
    QT_CHECKF(!same02, "the timestamp is not in the zip");
}

/* Entries deflated ahead on the thread pool (QrZip.pack_max) give the zip minizip's own streamed
 * deflate gives, byte for byte: the same compressed streams, CRCs, sizes, the text flag of the
 * central directory (the sample's CSV, JSON and HTML) and the write steps; here all packed, none
 * packed, and only the small ones packed. */
static void test_zip_packed(void) {
    char disk[512], p[3][512];
    snprintf(disk, sizeof disk, "%s/badcase_src3.npy", qt_tmpdir());
    QtBdEntry e[16];
    int n = qt_bd_sample(e, disk);
    const size_t pack_max[3] = { QR_ZIP_PACK_MAX, 0, 100000 };
    for (int run = 0; run < 3; run++) {
        QrZip z;
        QrStatus st = qt_bd_build(&z, e, n, disk, false);
        z.mtime = 1700000000;
        z.pack_max = pack_max[run];
        snprintf(p[run], sizeof p[run], "%s/packed%d.zip", qt_tmpdir(), run);
        if (st == QR_OK) st = qr_zip_write(&z, p[run]);
        qr_zip_free(&z);
        QT_OK(st);
    }
    bool ok = true;
    qt_bd_check_zip(p[0], e, n, &ok);
    QT_CHECKF(ok, "the packed zip does not read back");
    for (int run = 1; run < 3; run++) {
        unsigned char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        QrStatus st = qt_bd_read(p[0], &a, &na);
        if (st == QR_OK) st = qt_bd_read(p[run], &b, &nb);
        size_t at = 0;
        while (st == QR_OK && at < na && at < nb && a[at] == b[at]) at++;
        bool same = st == QR_OK && na == nb && at == na;
        free(a); free(b);
        QT_OK(st);
        QT_CHECKF(same, "packed zip (%zu bytes) differs from pack_max %zu's (%zu bytes) at byte %zu", na, pack_max[run], nb, at);
    }
}

/* Float payloads (.npy, .onnx) that a level-1 deflate of their first 64 KiB shrinks by less than an
 * eighth are stored; compressible ones and other entries are deflated; the same bytes whether
 * compressed ahead on the pool (at 1 or 2 threads) or streamed through minizip (pack_max 0). */
static void test_zip_store_probe(void) {
    enum { N = 200000 };
    unsigned char *rnd = malloc(N), *zero = calloc(1, N);
    QT_CHECK(rnd && zero);
    uint32_t r = 7u;
    for (int i = 0; i < N; i++) { r = r * 1664525u + 1013904223u; rnd[i] = (unsigned char)(r >> 24); }
    char disk[512], p[3][512];
    snprintf(disk, sizeof disk, "%s/probe_src.onnx", qt_tmpdir());
    QrStatus st = qr_file_write_atomic(disk, rnd, N / 2);
    const size_t pack_max[3] = { QR_ZIP_PACK_MAX, QR_ZIP_PACK_MAX, 0 };
    const int threads[3] = { 1, 2, 1 };
    const int saved = qr_pool_threads();
    for (int run = 0; st == QR_OK && run < 3; run++) {
        QrZip z;
        st = qr_zip_init(&z);
        if (st == QR_OK) st = qr_zip_add(&z, "a_random.npy", rnd, N);
        if (st == QR_OK) st = qr_zip_add(&z, "b_zeros.npy", zero, N);
        if (st == QR_OK) st = qr_zip_add(&z, "c_random.txt", rnd, N);
        if (st == QR_OK) st = qr_zip_add_file(&z, "d_random.onnx", disk);
        z.mtime = 1700000000;
        z.pack_max = pack_max[run];
        snprintf(p[run], sizeof p[run], "%s/probe%d.zip", qt_tmpdir(), run);
        qr_pool_init(threads[run]);
        if (st == QR_OK) st = qr_zip_write(&z, p[run]);
        qr_pool_init(saved);
        qr_zip_free(&z);
    }
    free(zero);
    if (st != QR_OK) { free(rnd); QT_OK(st); }
    unzFile uf = unzOpen64(p[0]);
    QT_CHECK(uf);
    static const char *const names[4] = { "a_random.npy", "b_zeros.npy", "c_random.txt", "d_random.onnx" };
    static const uLong method[4] = { 0, Z_DEFLATED, Z_DEFLATED, 0 };
    int k = 0;
    bool good = true;
    for (int rc = unzGoToFirstFile(uf); rc == UNZ_OK && good; rc = unzGoToNextFile(uf), k++) {
        char name[64];
        unz_file_info64 fi;
        good = k < 4 && unzGetCurrentFileInfo64(uf, &fi, name, sizeof name, NULL, 0, NULL, 0) == UNZ_OK &&
               !strcmp(name, names[k]) && fi.compression_method == method[k] && (k != 1 || fi.compressed_size < N / 100);
        size_t want = k == 3 ? N / 2 : N;
        unsigned char *buf = good ? malloc(want + 1) : NULL;
        good = good && buf && unzOpenCurrentFile(uf) == UNZ_OK &&
               unzReadCurrentFile(uf, buf, (unsigned)want + 1) == (int)want && unzCloseCurrentFile(uf) == UNZ_OK &&
               !memcmp(buf, k == 1 ? (const unsigned char *)"" : rnd, k == 1 ? 0 : want);
        if (good && k == 1) for (size_t i = 0; i < want; i++) good = good && buf[i] == 0;
        free(buf);
        if (!good) printf("probe zip: entry %d '%s' method %lu\n", k, k < 4 ? names[k] : "?", k < 4 ? fi.compression_method : 0);
    }
    unzClose(uf);
    free(rnd);
    QT_CHECKF(good && k == 4, "the probed zip does not read back as expected (%d entries)", k);
    for (int run = 1; run < 3; run++) {
        unsigned char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        st = qt_bd_read(p[0], &a, &na);
        if (st == QR_OK) st = qt_bd_read(p[run], &b, &nb);
        bool same = st == QR_OK && na == nb && !memcmp(a, b, na);
        free(a); free(b);
        QT_OK(st);
        QT_CHECKF(same, "probe zip %d differs from the first (threads %d, pack_max %zu)", run, threads[run], pack_max[run]);
    }
}

static void test_zip_names(void) {
    QrZip z;
    QT_OK(qr_zip_init(&z));
    static const char *const bad[] = { "", "/abs", "a/../b", "a//b", "./a", "a/.", "..", "a\\b", "a\nb", "dir/" };
    for (int i = 0; i < QR_ARRAY_LEN(bad); i++) {
        QrStatus st = qr_zip_add(&z, bad[i], "x", 1);
        if (st != QR_ERR_INVALID) { qr_zip_free(&z); QT_CHECKF(0, "accepted name '%s'", bad[i]); }
    }
    QT_OK(qr_zip_add(&z, "plots", "x", 1));
    QT_CHECK(qr_zip_add(&z, "plots", "y", 1) == QR_ERR_INVALID && strstr(qr_err_msg(), "twice"));
    void *owned = malloc(8);
    QT_CHECK(qr_zip_add_owned(&z, "a//b", owned, 8) == QR_ERR_INVALID);   /* freed by the call (ASan checks) */
    QT_OK(qr_zip_add(&z, "plots/a.png", "x", 1));
    char path[512];
    snprintf(path, sizeof path, "%s/conflict.zip", qt_tmpdir());
    QrStatus st = qr_zip_write(&z, path);
    QT_CHECK(z.n == 2);
    qr_zip_free(&z);
    QT_CHECK(st == QR_ERR_INVALID && strstr(qr_err_msg(), "also the folder"));
    QT_CHECK(!qt_bd_exists(path));
    snprintf(path, sizeof path, "%s/does_not_exist.bin", qt_tmpdir());
    QT_OK(qr_zip_init(&z));
    st = qr_zip_add_file(&z, "x.bin", path);
    qr_zip_free(&z);
    QT_CHECK(st == QR_ERR_IO && strstr(qr_err_msg(), "does_not_exist.bin"));

    char out[64];
    qr_zip_safe_component(out, sizeof out, "/backbone/conv:0 (q)");
    QT_CHECKF(!strcmp(out, "_backbone_conv_0__q_"), "%s", out);
    qr_zip_safe_component(out, sizeof out, "..x");
    QT_CHECKF(!strcmp(out, "_.x"), "%s", out);
    qr_zip_safe_component(out, sizeof out, "");
    QT_CHECK(!strcmp(out, "_"));
    qr_zip_safe_component(out, sizeof out, "conv_\xc3\xa9\xff");
    QT_CHECKF(!strcmp(out, "conv_\xc3\xa9_"), "%s", out);
    qr_zip_safe_component(out, 7, "abcd\xc3\xa9\xc3\xa9");   /* no split UTF-8 at the cut */
    QT_CHECKF(!strcmp(out, "abcd\xc3\xa9"), "%s", out);
}

/* Every injected write failure leaves the destination as it was and no temporary;
 * the first n without a failure gives a valid zip. */
static void test_zip_write_faults(void) {
    char dir[512], path[512], names[4096], disk[512];
    snprintf(dir, sizeof dir, "%s/faults", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    qt_fmt(path, sizeof path, "%s/report.zip", dir);
    snprintf(disk, sizeof disk, "%s/badcase_src3.npy", qt_tmpdir());
    QtBdEntry e[16];
    int n = qt_bd_sample(e, disk);
    for (int pass = 0; pass < 2; pass++) {      /* 0: no earlier zip; 1: an earlier zip is kept */
        if (pass == 1) QT_OK(qr_file_write_atomic(path, "OLD", 3));
        else unlink(path);
        int steps = 0;
        for (int nth = 1; nth < 1000; nth++) {
            QrZip z;
            QrStatus st = qt_bd_build(&z, e, n, disk, false);
            z.mtime = 1700000000;
            qr_zip_test_fail_write(nth);
            if (st == QR_OK) st = qr_zip_write(&z, path);
            qr_zip_test_fail_write(0);
            qr_zip_free(&z);
            if (st == QR_OK) { steps = nth; break; }
            QT_CHECKF(st == QR_ERR_IO && strstr(qr_err_msg(), "report.zip"), "step %d: %s", nth, qr_err_msg());
            int k = qt_bd_list_dir(dir, names, sizeof names);
            if (pass == 0) QT_CHECKF(k == 0, "step %d left: %s", nth, names);
            else QT_CHECKF(k == 1 && qt_bd_file_equals(path, "OLD", 3), "step %d: %s", nth, names);
        }
        /* create + several zip writes + fsync + rename */
        QT_CHECKF(steps > 6, "only %d write steps: the hook is not reached", steps);
        bool ok;
        qt_bd_check_zip(path, e, n, &ok);
        if (!ok) return;
        QT_CHECK(qt_bd_list_dir(dir, names, sizeof names) == 1);
    }
}

static bool qt_bd_tree_matches(const char *dir, const QtBdEntry *e, int n) {
    char p[1024];
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, e[i].name);
        if (!qt_bd_file_equals(p, e[i].data, e[i].len)) { printf("differs: %s\n", p); return false; }
        struct stat sb;
        if (stat(p, &sb) != 0 || sb.st_mtime != 1700000000) { printf("mtime: %s\n", p); return false; }
    }
    return true;
}

static void test_zip_keep_dir(void) {
    char base[512], dir[512], p[1024], names[4096], disk[512];
    snprintf(base, sizeof base, "%s/keep", qt_tmpdir());
    QT_OK(qr_mkdir_p(base));
    qt_fmt(dir, sizeof dir, "%s/bundle", base);
    snprintf(disk, sizeof disk, "%s/badcase_src4.npy", qt_tmpdir());
    QtBdEntry e[16];
    int n = qt_bd_sample(e, disk);
    QrZip z;
    QrStatus st = qt_bd_build(&z, e, n, disk, true);
    z.mtime = 1700000000;
    if (st == QR_OK) st = qr_zip_write_dir(&z, dir, "summary.json");
    QT_OK(st);
    QT_CHECK(qt_bd_tree_matches(dir, e, n));
    /* An earlier bundle (it has the marker) is replaced: its extra file is gone. */
    snprintf(p, sizeof p, "%s/stale.txt", dir);
    QT_OK(qr_file_write_atomic(p, "stale", 5));
    QT_OK(qr_zip_write_dir(&z, dir, "summary.json"));
    QT_CHECK(!qt_bd_exists(p) && qt_bd_tree_matches(dir, e, n));
    QT_CHECKF(qt_bd_list_dir(base, names, sizeof names) == 1, "left: %s", names);
    /* A folder that is not a bundle is refused and untouched. */
    char other[512];
    qt_fmt(other, sizeof other, "%s/home", base);
    QT_OK(qr_mkdir_p(other));
    snprintf(p, sizeof p, "%s/precious.txt", other);
    QT_OK(qr_file_write_atomic(p, "mine", 4));
    st = qr_zip_write_dir(&z, other, "summary.json");
    QT_CHECK(st == QR_ERR_IO && strstr(qr_err_msg(), "not replacing"));
    QT_CHECK(qt_bd_file_equals(p, "mine", 4));
    st = qr_zip_write_dir(&z, other, NULL);
    QT_CHECK(st == QR_ERR_IO && qt_bd_file_equals(p, "mine", 4));
    /* Faults: the earlier bundle stays whole, nothing else is left beside it. */
    snprintf(p, sizeof p, "%s/index.html", dir);
    int steps = 0;
    for (int nth = 1; nth < 1000 && !steps; nth++) {
        QT_OK(qr_file_write_atomic(p, "OLD", 3));
        qr_zip_test_fail_write(nth);
        st = qr_zip_write_dir(&z, dir, "summary.json");
        qr_zip_test_fail_write(0);
        if (st == QR_OK) { steps = nth; break; }
        QT_CHECKF(st == QR_ERR_IO, "step %d: %s", nth, qr_err_msg());
        QT_CHECKF(qt_bd_file_equals(p, "OLD", 3), "step %d: earlier bundle damaged", nth);
        QT_CHECKF(qt_bd_list_dir(base, names, sizeof names) == 2, "step %d left: %s", nth, names);
    }
    qr_zip_free(&z);
    QT_CHECKF(steps > n + 3, "only %d steps", steps);
    QT_CHECK(qt_bd_tree_matches(dir, e, n));
    QT_CHECKF(qt_bd_list_dir(base, names, sizeof names) == 2, "left: %s", names);
}

/* ---- HTML ----------------------------------------------------------------------------------- */

static int qt_bd_count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static QrHtmlLevel qt_bd_cos_level(const QrTable *t, int row, int col, void *ctx) {
    QR_UNUSED(ctx);
    if (strcmp(t->cols[col], "Cosine")) return QR_HTML_NONE;
    double v = atof(t->rows[row][col]);
    return v < 0.9 ? QR_HTML_BAD : v < 0.99 ? QR_HTML_WARN : QR_HTML_NONE;
}

static void test_html_structure(void) {
    QrHtml h;
    qr_html_init(&h, "model <a> & \"b\"");
    qr_html_subtitle(&h, "base.onnx vs anal.onnx");
    qr_html_verdict_begin(&h, QR_HTML_BAD, "Output cosine 0.91");
    qr_html_metric(&h, "Output cosine", "0.91", QR_HTML_BAD, "want >= 0.99");
    qr_html_metric(&h, "SQNR", "12.5 dB", QR_HTML_WARN, NULL);
    qr_html_para(&h, "Worst layer: <conv1>");
    qr_html_verdict_end(&h);
    qr_html_section(&h, NULL, "Per-layer comparison");
    static const char *const cols[] = { "mod_name", "Cosine", "shape" };
    QrTable t;
    QT_OK(qr_table_init(&t, 3, cols));
    for (int i = 0; i < 12; i++) {
        int r;
        QT_OK(qr_table_add_row(&t, &r));
        QT_OK(qr_table_setf(&t, r, 0, "<layer %d> \xff", i));
        QT_OK(qr_table_setf(&t, r, 1, "%s", i == 3 ? "inf" : i == 4 ? "" : i == 5 ? "0.5" : "0.995"));
        QT_OK(qr_table_set(&t, r, 2, "1x3x8x8"));
    }
    qr_html_table(&h, &t, &(QrHtmlTableOpts){ .caption = "Layers", .cell_level = qt_bd_cos_level, .max_rows = 11 });
    qr_html_table(&h, &t, &(QrHtmlTableOpts){ .filter_min_rows = -1 });
    qr_table_free(&t);
    qr_html_subsection(&h, "plots", "Plots");
    qr_html_image(&h, "plots/a b#1.png", "alt \"x\"", "caption", 640, 400);
    static const char *const files[] = { "compare_per_layer_out.txt", "compare per layer.csv" };
    qr_html_files(&h, files, 2);
    qr_html_section(&h, NULL, "Per-layer comparison");        /* same title: a unique anchor */
    qr_html_failed(&h, "Sensitivity", "node 'x': out of memory <42>");
    qr_html_list_begin(&h, true);
    qr_html_itemf(&h, "%d & %s", 5, "<b>");
    qr_html_list_end(&h);
    qr_html_kv_begin(&h);
    qr_html_kv(&h, "ISA", "avx2");
    qr_html_kv_end(&h);
    char *page = NULL;
    size_t len = 0;
    QT_OK(qr_html_finish(&h, &page, &len));
    QT_CHECK(len == strlen(page));
    const char *want[] = {
        "<title>model &lt;a&gt; &amp; &quot;b&quot;</title>", "<p class=\"qr-sub\">base.onnx vs anal.onnx</p>",
        "<section class=\"qr-verdict qr-bad\" id=\"verdict\">", "<div class=\"qr-metric qr-bad\">",
        "<p>Worst layer: &lt;conv1&gt;</p>", "id=\"per-layer-comparison\"", "id=\"per-layer-comparison-2\"",
        "<a href=\"#per-layer-comparison-2\">Per-layer comparison</a>", "<a href=\"#plots\">Plots</a>",
        "<td>&lt;layer 3&gt; \xef\xbf\xbd</td>", "<th scope=\"col\" class=\"num\">Cosine</th>",
        "<td class=\"num qr-c-bad\">0.5</td>", "<td class=\"num\">inf</td>", "<td class=\"num\"></td>",
        "<th scope=\"col\">shape</th>", "First 11 of 12 rows shown.", "placeholder=\"Filter 11 rows",
        "<img src=\"plots/a%20b%231.png\" alt=\"alt &quot;x&quot;\" loading=\"lazy\" decoding=\"async\" width=\"640\" height=\"400\">",
        "<a href=\"compare%20per%20layer.csv\">compare per layer.csv</a>",
        "Sensitivity failed</strong>", "node &#39;x&#39;: out of memory &lt;42&gt;", "<li>5 &amp; &lt;b&gt;</li>",
        "<dt>ISA</dt><dd>avx2</dd>", "document.body.classList.add(\"qr-js\")",
    };
    bool ok = true;
    for (int i = 0; i < QR_ARRAY_LEN(want) && ok; i++)
        if (!strstr(page, want[i])) { printf("missing: %s\n", want[i]); ok = false; }
    /* Balanced structure; one filter box (the second table asked for none); no network. */
    ok = ok && qt_bd_count(page, "<section") == qt_bd_count(page, "</section>") && qt_bd_count(page, "<section") == 3;
    ok = ok && qt_bd_count(page, "<table") == 2 && qt_bd_count(page, "</table>") == 2;
    ok = ok && qt_bd_count(page, "<div") == qt_bd_count(page, "</div>");
    ok = ok && qt_bd_count(page, "class=\"qr-filter\"") == 1;
    ok = ok && !strstr(page, "http://") && !strstr(page, "https://") && !strstr(page, "<layer");
    if (!ok) printf("%s\n", page);
    free(page);
    QT_CHECK(ok);

    /* Misuse is reported by finish. */
    qr_html_init(&h, "x");
    qr_html_item(&h, "outside");
    QT_CHECK(qr_html_finish(&h, &page, &len) == QR_ERR_INVALID && strstr(qr_err_msg(), "outside a list"));
    qr_html_free(&h);
    qr_html_init(&h, "x");
    qr_html_subsection(&h, NULL, "orphan");
    QT_CHECK(qr_html_finish(&h, &page, &len) == QR_ERR_INVALID);
    qr_html_free(&h);
}

/* A small valid RGB PNG (a line plot look-alike) through zlib: signature, IHDR, IDAT, IEND. */
static QrStatus qt_bd_write_png(const char *path, int w, int hgt, int variant) {
    size_t stride = (size_t)w * 3 + 1, raw_len = stride * (size_t)hgt;
    unsigned char *raw = malloc(raw_len);
    if (!raw) return QR_ERR_NOMEM;
    for (int y = 0; y < hgt; y++) {
        unsigned char *row = raw + stride * (size_t)y;
        row[0] = 0;
        for (int x = 0; x < w; x++) {
            unsigned char *px = row + 1 + 3 * x;
            px[0] = px[1] = px[2] = 255;
            if (x == 60 || y == hgt - 40) px[0] = px[1] = px[2] = 60;                     /* axes */
            else if (x > 60 && (x - 60) % 80 == 0 && y < hgt - 40) px[0] = px[1] = px[2] = 232;   /* grid */
            double fx = (double)(x - 60) / (w - 80);
            double c = variant ? 0.5 + 0.35 * cos(9 * fx) * exp(-fx) : 0.2 + 0.7 * fx * fx;
            int cy = (int)((1 - c) * (hgt - 60)) + 10;
            if (x > 60 && abs(y - cy) <= 1) { px[0] = variant ? 220 : 37; px[1] = variant ? 38 : 99; px[2] = variant ? 38 : 235; }
        }
    }
    uLongf zlen = compressBound(raw_len);
    unsigned char *z = malloc(zlen + 64);
    if (!z || compress2(z, &zlen, raw, raw_len, 6) != Z_OK) { free(raw); free(z); return QR_ERR_NOMEM; }
    free(raw);
    size_t cap = zlen + 128, n = 0;
    unsigned char *png = malloc(cap);
    if (!png) { free(z); return QR_ERR_NOMEM; }
    memcpy(png, "\x89PNG\r\n\x1a\n", 8); n = 8;
    unsigned char ihdr[13] = { 0, 0, (unsigned char)(w >> 8), (unsigned char)w, 0, 0, (unsigned char)(hgt >> 8),
                               (unsigned char)hgt, 8, 2, 0, 0, 0 };
    const struct { const char *type; const unsigned char *d; size_t len; } ch[3] = {
        { "IHDR", ihdr, 13 }, { "IDAT", z, zlen }, { "IEND", NULL, 0 } };
    for (int k = 0; k < 3; k++) {
        unsigned char *c = png + n;
        c[0] = (unsigned char)(ch[k].len >> 24); c[1] = (unsigned char)(ch[k].len >> 16);
        c[2] = (unsigned char)(ch[k].len >> 8); c[3] = (unsigned char)ch[k].len;
        memcpy(c + 4, ch[k].type, 4);
        if (ch[k].len) memcpy(c + 8, ch[k].d, ch[k].len);
        uLong crc = crc32(0, c + 4, (uInt)(4 + ch[k].len));
        c[8 + ch[k].len] = (unsigned char)(crc >> 24); c[9 + ch[k].len] = (unsigned char)(crc >> 16);
        c[10 + ch[k].len] = (unsigned char)(crc >> 8); c[11 + ch[k].len] = (unsigned char)crc;
        n += 12 + ch[k].len;
    }
    free(z);
    QrStatus st = qr_file_write_atomic(path, png, n);
    free(png);
    return st;
}

/* The sample report page: a verdict, a 500-row table, two plots, links, a failure box. */
static QrStatus qt_bd_sample_page(char **page, size_t *len) {
    QrHtml h;
    qr_html_init(&h, "qreport \xe2\x80\x94 resnet18_int8.onnx vs resnet18.onnx");
    qr_html_subtitle(&h, "baseline resnet18.onnx \xc2\xb7 analysis resnet18_int8.onnx (QDQ, int8) \xc2\xb7 "
                         "input badcase.npy \xc2\xb7 qreport " QR_VERSION " \xc2\xb7 avx2, 2 threads");
    qr_html_verdict_begin(&h, QR_HTML_WARN, "Output similarity is acceptable, but 3 layers lose most of it");
    qr_html_metric(&h, "Output cosine", "0.99412", QR_HTML_GOOD, "threshold 0.99");
    qr_html_metric(&h, "Output SQNR", "18.7 dB", QR_HTML_WARN, "below 20 dB");
    qr_html_metric(&h, "Worst layer cosine", "0.8731", QR_HTML_BAD, "layer3.0.conv1");
    qr_html_metric(&h, "Matched values", "498 / 500", QR_HTML_NONE, "2 unmatched (Q/DQ only)");
    qr_html_list_begin(&h, false);
    qr_html_item(&h, "First drop in similarity: /backbone/layer3/layer3.0/conv1/Conv (cosine 0.8731)");
    qr_html_item(&h, "Top sensitive ops: layer3.0.conv1 (weight), fc (activation), layer1.0.conv2 (both)");
    qr_html_item(&h, "Recommended: keep /backbone/layer3/layer3.0/conv1/Conv in int16 (output cosine 0.99412 \xe2\x86\x92 0.99871)");
    qr_html_list_end(&h);
    qr_html_verdict_end(&h);

    qr_html_section(&h, "per-layer", "Per-layer comparison");
    qr_html_para(&h, "One row per matched baseline node output, in topological order. Click a header to sort; "
                     "type in the box to filter.");
    static const char *const cols[] = { "Index", "mod_name", "base_op_type", "quant_dtype", "Cosine", "SQNR", "MSE", "Atol" };
    QrTable t;
    QR_TRY(qr_table_init(&t, 8, cols));
    static const char *const ops[] = { "Conv", "Relu", "Add", "MaxPool", "Gemm" };
    uint64_t seed = 11;
    QrStatus st = QR_OK;
    for (int i = 0; i < 500 && st == QR_OK; i++) {
        int r;
        st = qr_table_add_row(&t, &r);
        if (st != QR_OK) break;
        double cosv = 1.0 - 0.02 * (double)(qr_rng_next(&seed) % 1000) / 1000.0 * (i % 97 == 13 ? 6 : 1);
        qr_table_setf(&t, r, 0, "%d", i);
        qr_table_setf(&t, r, 1, "/backbone/layer%d/layer%d.%d/%s%d/%s_output_0_with_a_long_suffix_%d", i / 100 + 1,
                      i / 100 + 1, (i / 10) % 10, ops[i % 5], i % 3, ops[i % 5], i);
        qr_table_set(&t, r, 2, ops[i % 5]);
        qr_table_set(&t, r, 3, i % 5 == 1 ? "" : "int8");
        qr_table_setf(&t, r, 4, "%.7f", cosv);
        if (i == 7) qr_table_set(&t, r, 5, "inf");
        else qr_table_setf(&t, r, 5, "%.4f", -10 * log10(1 - cosv + 1e-9));
        qr_table_setf(&t, r, 6, "%.6g", (1 - cosv) * 0.37);
        st = qr_table_setf(&t, r, 7, "%.6g", (1 - cosv) * 4.1);
    }
    if (st == QR_OK) qr_html_table(&h, &t, &(QrHtmlTableOpts){ .cell_level = qt_bd_cos_level });
    qr_table_free(&t);
    static const char *const files[] = { "compare_per_layer_out.txt", "compare_per_layer_out.csv" };
    qr_html_files(&h, files, 2);
    qr_html_subsection(&h, "per-layer-plots", "Plots");
    qr_html_gallery_begin(&h);
    qr_html_image(&h, "plots/per_layer_metrics.png", "Cosine and SQNR per layer", "Cosine and SQNR per layer", 640, 400);
    qr_html_image(&h, "plots/accumulated error.png", "Accumulated error along the graph",
                  "Similarity along the graph (weight-only, activation-only, full)", 640, 400);
    qr_html_gallery_end(&h);

    qr_html_section(&h, "sensitivity", "Sensitivity");
    qr_html_failed(&h, "Sensitivity analysis", "node '/backbone/layer4/Conv': unsupported attribute 'auto_pad=SAME_LOWER'");
    qr_html_section(&h, "run", "Run information");
    qr_html_kv_begin(&h);
    qr_html_kv(&h, "Command", "qreport runall resnet18.onnx resnet18_int8.onnx -i badcase.npy -o report.zip");
    qr_html_kv(&h, "Peak memory", "412 MiB");
    qr_html_kv_end(&h);
    return qr_html_finish(&h, page, len);
}

static void test_html_render(void) {
    char dir[512], path[600], shot[600];
    snprintf(dir, sizeof dir, "%s/html/plots", qt_tmpdir());
    QT_OK(qr_mkdir_p(dir));
    snprintf(path, sizeof path, "%s/per_layer_metrics.png", dir);
    QT_OK(qt_bd_write_png(path, 640, 400, 0));
    snprintf(path, sizeof path, "%s/accumulated error.png", dir);
    QT_OK(qt_bd_write_png(path, 640, 400, 1));
    char *page;
    size_t len;
    QT_OK(qt_bd_sample_page(&page, &len));
    snprintf(path, sizeof path, "%s/html/index.html", qt_tmpdir());
    QrStatus st = qr_file_write_atomic(path, page, len);
    free(page);
    QT_OK(st);
    QT_OK(qr_mkdir_p("build/artifacts"));
    snprintf(shot, sizeof shot, "build/artifacts/html_sample.png");
    int rc = qt_bd_sh("sh tests/render_html.sh '%s' '%s' > '%s/render.log' 2>&1", path, shot, qt_tmpdir());
    if (rc == 77) QT_SKIP("chromium not found (install Debian 'chromium' to run it)");
    char log[8192];
    snprintf(shot, sizeof shot, "%s/render.log", qt_tmpdir());
    qt_slurp(shot, log, sizeof log);
    QT_CHECKF(rc == 0, "render_html.sh exit %d:\n%s", rc, log);
    QT_CHECK(qt_bd_exists("build/artifacts/html_sample.png"));

    /* The script works: a copy of the page with a self-test that sorts and filters
     * the 500-row table and records what it sees on <body>. */
    static const char selftest[] =
        "<script>(function(){var th=document.querySelectorAll('.qr-table th'),out=[];\n"
        "function col(c){return [].map.call(document.querySelectorAll('.qr-table tbody tr'),function(r){return r.cells[c].textContent;});}\n"
        "th[5].click();var v=col(5),ok=v[v.length-1]==='inf';\n"
        "for(var i=1;i<v.length-1;i++)if(Number(v[i-1])>Number(v[i]))ok=false;\n"
        "out.push(ok?'asc-ok':'asc-bad');th[5].click();out.push(col(5)[0]);\n"
        "th[0].click();th[0].click();out.push(col(0)[0]);\n"
        "var f=document.querySelector('.qr-filter');f.value='LAYER3 maxpool';f.dispatchEvent(new Event('input'));\n"
        "out.push([].filter.call(document.querySelectorAll('.qr-table tbody tr'),function(r){return !r.hidden;}).length);\n"
        "out.push(document.querySelector('.qr-count').textContent);\n"
        "document.body.setAttribute('data-selftest',out.join('|'));})();</script>\n</body>";
    char *self = NULL;
    size_t self_len = 0;
    QT_OK(qt_bd_read(path, (unsigned char **)&self, &self_len));
    char *body_end = self ? strstr(self, "</body>") : NULL;
    if (!body_end) { free(self); QT_CHECK(!"no </body>"); }
    char selfpath[600], dompath[600];
    snprintf(selfpath, sizeof selfpath, "%s/html/selftest.html", qt_tmpdir());
    snprintf(dompath, sizeof dompath, "%s/selftest.dom", qt_tmpdir());
    FILE *f = fopen(selfpath, "wb");
    if (f) { fwrite(self, 1, (size_t)(body_end - self), f); fputs(selftest, f); fputs(body_end + 7, f); fclose(f); }
    free(self);
    snprintf(shot, sizeof shot, "%s/selftest.png", qt_tmpdir());
    rc = qt_bd_sh("QR_RENDER_DOM='%s' sh tests/render_html.sh '%s' '%s' > '%s/render2.log' 2>&1", dompath, selfpath, shot,
                  qt_tmpdir());
    static char dom[1 << 20];
    qt_slurp(dompath, dom, sizeof dom);
    /* ascending: numbers in order, inf last; descending: inf first; Index twice: 499
     * (a numeric sort; a text sort would give 99); "layer3" and "maxpool": rows 203..298 step 5 */
    QT_CHECKF(rc == 0 && strstr(dom, "data-selftest=\"asc-ok|inf|499|20|20 of 500 rows\""), "exit %d, %s", rc,
              strstr(dom, "data-selftest") ? strstr(dom, "data-selftest") : "no self-test result");

    /* The checker must be able to fail: a page whose script throws. */
    snprintf(path, sizeof path, "%s/html/broken.html", qt_tmpdir());
    const char *broken = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>b</title></head><body><p>x</p>"
                         "<script>document.body.classList.add(\"qr-js\");undefinedFunction();</script></body></html>";
    QT_OK(qr_file_write_atomic(path, broken, strlen(broken)));
    snprintf(shot, sizeof shot, "%s/broken.png", qt_tmpdir());
    rc = qt_bd_sh("sh tests/render_html.sh '%s' '%s' >/dev/null 2>&1", path, shot);
    QT_CHECKF(rc == 1, "a page with a script error passed (exit %d)", rc);
}

/* ---- progress ---------------------------------------------------------------------------------- */

static double qt_bd_clock;
static double qt_bd_fake_now(void) { return qt_bd_clock; }

static void test_progress(void) {
    char path[512], text[8192];
    snprintf(path, sizeof path, "%s/progress.txt", qt_tmpdir());
    for (int mode = 0; mode < 3; mode++) {      /* 0 plain, 1 terminal, 2 quiet */
        FILE *f = fopen(path, "w+");
        QT_CHECK(f);
        qt_bd_clock = 100;
        QrProgress p;
        qr_progress_init(&p, f, mode == 2);
        p.now = qt_bd_fake_now;
        p.t_init = 100;
        p.tty = mode == 1;
        qr_progress_begin(&p, "sensitivity", 40);
        for (int i = 1; i <= 40; i++) { qt_bd_clock = 100 + 0.125 * i; qr_progress_step(&p); }   /* 5 s, exact in binary */
        qr_progress_end(&p, QR_OK);
        qt_bd_clock = 106;
        qr_progress_begin(&p, "plots", 0);
        qr_progress_message(&p, "warning: %s", "something");
        qt_bd_clock = 106.25;
        qr_progress_end(&p, QR_ERR_IO);
        fclose(f);
        qt_slurp(path, text, sizeof text);
        QT_CHECK(p.n_stages == 2 && !strcmp(p.stages[0].name, "sensitivity") && p.stages[0].ok && !p.stages[1].ok);
        QT_CHECK(fabs(p.stages[0].seconds - 5.0) < 1e-9 && fabs(p.stages[1].seconds - 0.25) < 1e-9);
        if (mode == 0) {
            /* a line at 2 s and 4 s (every 2 s), end; no terminal control codes */
            QT_CHECKF(strstr(text, "[   2.0s] sensitivity: 16/40 (40%), ETA 3.0s\n"), "%s", text);
            QT_CHECKF(strstr(text, "[   4.0s] sensitivity: 32/40 (80%), ETA 1.0s\n"), "%s", text);
            QT_CHECKF(strstr(text, "[   5.0s] sensitivity: done in 5.0s\n"), "%s", text);
            QT_CHECKF(strstr(text, "warning: something\n") && strstr(text, "plots: failed after 0.2s"), "%s", text);
            QT_CHECKF(qt_bd_count(text, "sensitivity:") == 3 && !strchr(text, '\r') && !strchr(text, '\x1b'), "%s", text);
        } else if (mode == 1) {
            /* steps 0.125 s apart, redraws at most every 0.1 s: one at begin + one per step */
            int draws = qt_bd_count(text, "\r  sensitivity  [");
            QT_CHECKF(draws == 41, "%d redraws", draws);
            QT_CHECKF(strstr(text, "]  20/40   50%  ETA 2.5s\x1b[K"), "%s", text);
            QT_CHECKF(strstr(text, "]  4/40   10%\x1b[K"), "%s", text);      /* no ETA in the first second */
            QT_CHECKF(strstr(text, "  sensitivity: done in 5.0s\n") && strstr(text, "  plots: failed after"), "%s", text);
            QT_CHECK(strstr(text, "\r\x1b[Kwarning: something\n"));
            const char *line = strstr(text, "\r  sensitivity  [");
            const char *end = strstr(line + 1, "\x1b[K");
            QT_CHECK(end && end - line - 1 <= p.width - 1);      /* never wraps */
        } else {
            QT_CHECKF(text[0] == 0, "quiet printed: %s", text);
        }
    }
    char d[16];
    qr_progress_format_duration(125, d, sizeof d);
    QT_CHECK(!strcmp(d, "2m05s"));
    qr_progress_format_duration(7260, d, sizeof d);
    QT_CHECK(!strcmp(d, "2h01m"));
    /* Peak RSS is at least (about) the current RSS from /proc, an independent source;
     * the kernel updates its high-water mark lazily, so allow a few percent. */
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) { if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0; fclose(f); }
    int64_t peak = qr_progress_peak_rss();
    QT_CHECKF(peak > 0 && peak >= (int64_t)rss * sysconf(_SC_PAGESIZE) * 9 / 10, "peak %lld rss %ld pages", (long long)peak, rss);
    /* The CPU seconds a stage records: the process's user time from getrusage lies between two
     * readings of /proc/self/stat's utime (clock ticks, an independent source), within a tick. */
    unsigned long ut[2] = { 0, 0 };
    double u = -1, sy = -1;
    for (int k = 0; k < 2; k++) {
        if (k == 1) qr_progress_cpu(&u, &sy);
        char stat[1024] = "";
        f = fopen("/proc/self/stat", "r");
        if (f) { if (!fgets(stat, sizeof stat, f)) stat[0] = 0; fclose(f); }
        const char *p = strrchr(stat, ')');     /* fields after the command name: state is field 3 */
        for (int fld = 2; p && *p && fld < 14; p++) if (*p == ' ') fld++;
        if (p && sscanf(p, "%lu", &ut[k]) != 1) ut[k] = 0;
    }
    double hz = (double)sysconf(_SC_CLK_TCK);
    QT_CHECKF(u >= 0 && sy >= 0, "getrusage user %.3f s, system %.3f s", u, sy);
    /* qemu's user-mode emulation writes its own /proc/self/stat with utime 0 (make test-aarch64):
     * no independent reading there, only the check above */
    if (ut[1] == 0 && u > 5.0 / hz) return;
    QT_CHECKF(u >= (double)ut[0] / hz - 1.0 / hz && u <= (double)ut[1] / hz + 2.0 / hz,
              "getrusage user %.3f s, /proc utime %lu..%lu ticks", u, ut[0], ut[1]);
}

static void qt_bundle_all(void) {
    QT_RUN(test_sha256_vectors);
    QT_RUN(test_sha256_file);
    QT_RUN(test_json_writer_exact);
    QT_RUN(test_json_numbers);
    QT_RUN(test_json_misuse);
    QT_RUN(test_json_parser);
    QT_RUN(test_json_roundtrip);
    QT_RUN(test_zip_roundtrip);
    QT_RUN(test_zip_deterministic);
    QT_RUN(test_zip_packed);
    QT_RUN(test_zip_store_probe);
    QT_RUN(test_zip_names);
    QT_RUN(test_zip_write_faults);
    QT_RUN(test_zip_keep_dir);
    QT_RUN(test_html_structure);
    QT_RUN(test_html_render);
    QT_RUN(test_progress);
}
