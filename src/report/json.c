/* report/json — implementation. See json.h. */

/* ==== UTF-8 ===================================================================== */

static int qr_json_utf8_len(const unsigned char *s, size_t n) {
    if (n == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xc2) return 0;                        /* stray continuation or overlong 2-byte lead */
    if (c < 0xe0) return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c < 0xf0) {
        if (n < 3) return 0;
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;   /* overlong, surrogates */
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (c < 0xf5) {
        if (n < 4) return 0;
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;   /* overlong, > U+10FFFF */
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4 : 0;
    }
    return 0;
}

/* ==== writer ==================================================================== */

static void qr_json_init(QrJson *j) { memset(j, 0, sizeof *j); }

static void qr_json_free(QrJson *j) { free(j->buf); memset(j, 0, sizeof *j); }

static void qr__json_fail(QrJson *j, QrStatus st, const char *what) {
    if (j->err) return;
    j->err_what = what;
    j->err = qr_errf(st, "json writer: %s", what);
}

static void qr__json_put(QrJson *j, const char *s, size_t n) {
    if (j->err) return;
    if (j->len + n + 1 > j->cap) {
        size_t nc = QR_MAX(j->cap * 2, j->len + n + 4096);
        char *nb = realloc(j->buf, nc);
        if (!nb) { qr__json_fail(j, QR_ERR_NOMEM, "out of memory"); return; }
        j->buf = nb;
        j->cap = nc;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = 0;
}

static void qr__json_puts(QrJson *j, const char *s) { qr__json_put(j, s, strlen(s)); }

static bool qr__json_compact(const QrJson *j) { return j->compact_from && j->depth >= j->compact_from; }

/* Newline plus indent for the current depth, or a space in one-line mode. */
static void qr__json_newline(QrJson *j, int depth) {
    if (qr__json_compact(j)) return;
    static const char spaces[] = "                                                                ";
    qr__json_put(j, "\n", 1);
    for (int n = 2 * depth; n > 0; n -= 64) qr__json_put(j, spaces, (size_t)QR_MIN(n, 64));
}

/* Writes the separator a new member of the open container needs. */
static void qr__json_member_sep(QrJson *j) {
    int *count = &j->count[j->depth - 1];
    if (*count) qr__json_put(j, qr__json_compact(j) ? ", " : ",", qr__json_compact(j) ? 2 : 1);
    qr__json_newline(j, j->depth);
    ++*count;
}

/* Checks that a value may be written here and writes what precedes it. */
static bool qr__json_pre_value(QrJson *j) {
    if (j->err) return false;
    if (j->done) { qr__json_fail(j, QR_ERR_INVALID, "a second top-level value"); return false; }
    if (j->depth == 0) return true;
    if (j->kind[j->depth - 1] == 'o') {
        if (!j->have_key) { qr__json_fail(j, QR_ERR_INVALID, "a value in an object without a key"); return false; }
        j->have_key = false;
        return true;
    }
    qr__json_member_sep(j);
    return true;
}

static void qr__json_post_value(QrJson *j) { if (j->depth == 0 && !j->err) j->done = true; }

static void qr__json_begin(QrJson *j, char kind, bool compact) {
    if (!qr__json_pre_value(j)) return;
    if (j->depth == QR_JSON_MAX_DEPTH) { qr__json_fail(j, QR_ERR_INVALID, "nesting too deep"); return; }
    qr__json_put(j, kind == 'o' ? "{" : "[", 1);
    j->kind[j->depth] = kind;
    j->count[j->depth] = 0;
    j->depth++;
    if (compact && !j->compact_from) j->compact_from = j->depth;
}

static void qr__json_end(QrJson *j, char kind) {
    if (j->err) return;
    if (j->depth == 0 || j->kind[j->depth - 1] != kind) {
        qr__json_fail(j, QR_ERR_INVALID, kind == 'o' ? "object end without an open object" : "array end without an open array");
        return;
    }
    if (j->have_key) { qr__json_fail(j, QR_ERR_INVALID, "a key without a value"); return; }
    if (j->count[j->depth - 1]) qr__json_newline(j, j->depth - 1);
    qr__json_put(j, kind == 'o' ? "}" : "]", 1);
    if (j->compact_from == j->depth) j->compact_from = 0;
    j->depth--;
    qr__json_post_value(j);
}

static void qr_json_obj_begin(QrJson *j) { qr__json_begin(j, 'o', false); }
static void qr_json_obj_begin_compact(QrJson *j) { qr__json_begin(j, 'o', true); }
static void qr_json_obj_end(QrJson *j) { qr__json_end(j, 'o'); }
static void qr_json_arr_begin(QrJson *j) { qr__json_begin(j, 'a', false); }
static void qr_json_arr_begin_compact(QrJson *j) { qr__json_begin(j, 'a', true); }
static void qr_json_arr_end(QrJson *j) { qr__json_end(j, 'a'); }

/* Writes s[0..n) as a quoted, escaped JSON string. */
static void qr__json_quote(QrJson *j, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    qr__json_put(j, "\"", 1);
    size_t run = 0;   /* start of the pending run of bytes copied verbatim */
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        const char *esc = NULL;
        char ubuf[7];
        int ulen = 1;
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\n') esc = "\\n";
        else if (c == '\t') esc = "\\t";
        else if (c == '\r') esc = "\\r";
        else if (c == '\b') esc = "\\b";
        else if (c == '\f') esc = "\\f";
        else if (c < 0x20) {
            memcpy(ubuf, "\\u00", 4);
            ubuf[4] = hex[c >> 4]; ubuf[5] = hex[c & 15]; ubuf[6] = 0;
            esc = ubuf;
        } else if (c >= 0x80) {
            ulen = qr_json_utf8_len(p + i, n - i);
            if (ulen == 0) { esc = "\xef\xbf\xbd"; ulen = 1; }   /* U+FFFD for each invalid byte */
        }
        if (esc) {
            qr__json_put(j, s + run, i - run);
            qr__json_puts(j, esc);
            run = i + (size_t)ulen;
        }
        i += (size_t)ulen;
    }
    qr__json_put(j, s + run, n - run);
    qr__json_put(j, "\"", 1);
}

static void qr_json_key(QrJson *j, const char *key) {
    if (j->err) return;
    if (j->depth == 0 || j->kind[j->depth - 1] != 'o') { qr__json_fail(j, QR_ERR_INVALID, "a key outside an object"); return; }
    if (j->have_key) { qr__json_fail(j, QR_ERR_INVALID, "two keys in a row"); return; }
    qr__json_member_sep(j);
    qr__json_quote(j, key ? key : "", key ? strlen(key) : 0);
    qr__json_put(j, ": ", 2);
    j->have_key = true;
}

static void qr_json_strn(QrJson *j, const char *s, size_t n) {
    if (!qr__json_pre_value(j)) return;
    qr__json_quote(j, s, n);
    qr__json_post_value(j);
}

static void qr_json_str(QrJson *j, const char *s) {
    if (!s) { qr_json_null(j); return; }
    qr_json_strn(j, s, strlen(s));
}

static void qr__json_literal(QrJson *j, const char *lit) {
    if (!qr__json_pre_value(j)) return;
    qr__json_puts(j, lit);
    qr__json_post_value(j);
}

static bool qr_json_format_num(double v, bool float_precision, char buf[32]) {
    if (!isfinite(v)) return false;
    /* A normal value whose shortest decimal has p <= 15 (float: 6) digits prints as
     * exactly that decimal at precision 15 (6) already, so three or four tries
     * suffice; subnormals carry fewer digits and start from 1. */
    double av = fabs(v);
    bool sub = av != 0 && (float_precision ? av < FLT_MIN : av < DBL_MIN);
    int p0 = sub ? 1 : float_precision ? 6 : 15, p1 = float_precision ? 9 : 17;
    for (int p = p0; p <= p1; p++) {
        snprintf(buf, 32, "%.*g", p, v);
        for (char *c = buf; *c; c++) if (*c == ',') *c = '.';     /* a non-C LC_NUMERIC */
        double back = strtod(buf, NULL);
        if (float_precision ? (float)back == (float)v : back == v) break;
    }
    return true;
}

static void qr__json_number(QrJson *j, double v, bool float_precision) {
    char buf[32];
    if (!qr_json_format_num(v, float_precision, buf)) { qr__json_literal(j, "null"); return; }
    qr__json_literal(j, buf);
}

static void qr_json_num(QrJson *j, double v) { qr__json_number(j, v, false); }
#ifdef QR_TESTING
QR_TESTAPI void qr_json_f32(QrJson *j, float v) { qr__json_number(j, (double)v, true); }
#endif
static void qr_json_int(QrJson *j, int64_t v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    qr__json_literal(j, buf);
}
static void qr_json_bool(QrJson *j, bool v) { qr__json_literal(j, v ? "true" : "false"); }
static void qr_json_null(QrJson *j) { qr__json_literal(j, "null"); }

static void qr_json_kv_str(QrJson *j, const char *key, const char *s) { qr_json_key(j, key); qr_json_str(j, s); }
static void qr_json_kv_num(QrJson *j, const char *key, double v) { qr_json_key(j, key); qr_json_num(j, v); }
#ifdef QR_TESTING
QR_TESTAPI void qr_json_kv_f32(QrJson *j, const char *key, float v) { qr_json_key(j, key); qr_json_f32(j, v); }
#endif
static void qr_json_kv_int(QrJson *j, const char *key, int64_t v) { qr_json_key(j, key); qr_json_int(j, v); }
static void qr_json_kv_bool(QrJson *j, const char *key, bool v) { qr_json_key(j, key); qr_json_bool(j, v); }
static void qr_json_kv_null(QrJson *j, const char *key) { qr_json_key(j, key); qr_json_null(j); }

static QrStatus qr_json_finish(QrJson *j, char **out, size_t *len) {
    if (!j->err && !j->done) qr__json_fail(j, QR_ERR_INVALID, j->depth ? "unclosed object or array" : "no value written");
    if (!j->err) qr__json_put(j, "\n", 1);
    if (j->err) return qr_errf(j->err, "json writer: %s", j->err_what);
    *out = j->buf;
    if (len) *len = j->len;
    j->buf = NULL;
    qr_json_free(j);
    return QR_OK;
}

/* ==== parser ==================================================================== */

typedef struct QrBdJsonParser {
    QrArena *a;
    const unsigned char *s;
    size_t n, i;
    int depth;
} QrBdJsonParser;

static QrStatus qr__json_jp_err(QrBdJsonParser *p, const char *what) {
    return qr_errf(QR_ERR_PARSE, "json: %s at byte %zu", what, p->i);
}

static void qr__json_jp_ws(QrBdJsonParser *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}

static bool qr__json_jp_lit(QrBdJsonParser *p, const char *lit) {
    size_t k = strlen(lit);
    if (p->n - p->i < k || memcmp(p->s + p->i, lit, k) != 0) return false;
    p->i += k;
    return true;
}

static int qr__json_jp_hex4(const unsigned char *s) {
    int v = 0;
    for (int k = 0; k < 4; k++) {
        int c = s[k], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Parses a string at p->i (the opening quote) into arena memory. */
static QrStatus qr__json_jp_string(QrBdJsonParser *p, const char **out, size_t *out_len) {
    p->i++;
    size_t start = p->i, cap = 0;
    /* The decoded text is never longer than the source span. */
    for (size_t k = start; k < p->n && p->s[k] != '"'; k++) { cap++; if (p->s[k] == '\\') { k++; cap++; } }
    char *dst = qr_arena_alloc(p->a, cap + 1);
    if (!dst) return qr_errf(QR_ERR_NOMEM, "json: out of memory");
    size_t o = 0;
    for (;;) {
        if (p->i >= p->n) return qr__json_jp_err(p, "unterminated string");
        unsigned c = p->s[p->i];
        if (c == '"') { p->i++; break; }
        if (c < 0x20) return qr__json_jp_err(p, "control character in string");
        if (c == '\\') {
            if (p->i + 1 >= p->n) return qr__json_jp_err(p, "unterminated escape");
            unsigned e = p->s[p->i + 1];
            const char *map = strchr("\"\\/bfnrt", (int)e);
            if (e && map) {
                static const char to[] = "\"\\/\b\f\n\r\t";
                dst[o++] = to[map - "\"\\/bfnrt"];
                p->i += 2;
                continue;
            }
            if (e != 'u') return qr__json_jp_err(p, "invalid escape");
            if (p->n - p->i < 6) return qr__json_jp_err(p, "short \\u escape");
            int cp = qr__json_jp_hex4(p->s + p->i + 2);
            if (cp < 0) return qr__json_jp_err(p, "bad hex in \\u escape");
            p->i += 6;
            if (cp >= 0xdc00 && cp <= 0xdfff) return qr__json_jp_err(p, "unpaired low surrogate");
            if (cp >= 0xd800 && cp <= 0xdbff) {
                int lo = p->n - p->i >= 6 && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u' ? qr__json_jp_hex4(p->s + p->i + 2) : -1;
                if (lo < 0xdc00 || lo > 0xdfff) return qr__json_jp_err(p, "unpaired high surrogate");
                p->i += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (cp < 0x80) dst[o++] = (char)cp;
            else if (cp < 0x800) { dst[o++] = (char)(0xc0 | cp >> 6); dst[o++] = (char)(0x80 | (cp & 63)); }
            else if (cp < 0x10000) {
                dst[o++] = (char)(0xe0 | cp >> 12); dst[o++] = (char)(0x80 | ((cp >> 6) & 63)); dst[o++] = (char)(0x80 | (cp & 63));
            } else {
                dst[o++] = (char)(0xf0 | cp >> 18); dst[o++] = (char)(0x80 | ((cp >> 12) & 63));
                dst[o++] = (char)(0x80 | ((cp >> 6) & 63)); dst[o++] = (char)(0x80 | (cp & 63));
            }
            continue;
        }
        int ul = qr_json_utf8_len(p->s + p->i, p->n - p->i);
        if (ul == 0) return qr__json_jp_err(p, "invalid UTF-8 in string");
        memcpy(dst + o, p->s + p->i, (size_t)ul);
        o += (size_t)ul;
        p->i += (size_t)ul;
    }
    dst[o] = 0;
    *out = dst;
    if (out_len) *out_len = o;
    return QR_OK;
}

static QrStatus qr__json_jp_number(QrBdJsonParser *p, double *out) {
    size_t st = p->i;
    const unsigned char *s = p->s;
    #define QR__JSON_DIGIT(k) ((k) < p->n && s[k] >= '0' && s[k] <= '9')
    if (p->i < p->n && s[p->i] == '-') p->i++;
    if (!QR__JSON_DIGIT(p->i)) return qr__json_jp_err(p, "invalid number");
    if (s[p->i] == '0') { p->i++; if (QR__JSON_DIGIT(p->i)) return qr__json_jp_err(p, "leading zero in number"); }
    else while (QR__JSON_DIGIT(p->i)) p->i++;
    if (p->i < p->n && s[p->i] == '.') {
        p->i++;
        if (!QR__JSON_DIGIT(p->i)) return qr__json_jp_err(p, "digit expected after '.'");
        while (QR__JSON_DIGIT(p->i)) p->i++;
    }
    if (p->i < p->n && (s[p->i] == 'e' || s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (s[p->i] == '+' || s[p->i] == '-')) p->i++;
        if (!QR__JSON_DIGIT(p->i)) return qr__json_jp_err(p, "digit expected in exponent");
        while (QR__JSON_DIGIT(p->i)) p->i++;
    }
    #undef QR__JSON_DIGIT
    char buf[400];
    size_t k = p->i - st;
    if (k >= sizeof buf) return qr__json_jp_err(p, "number too long");
    memcpy(buf, s + st, k);
    buf[k] = 0;
    *out = strtod(buf, NULL);
    if (!isfinite(*out)) return qr__json_jp_err(p, "number out of range");
    return QR_OK;
}

static QrStatus qr__json_jp_value(QrBdJsonParser *p, QrJsonVal **out);

/* Appends v (and key) to a container, growing its arrays in the arena. */
static QrStatus qr__json_jp_push(QrBdJsonParser *p, QrJsonVal *c, int *cap, const char *key, QrJsonVal *v) {
    if (c->n == *cap) {
        int nc = *cap ? *cap * 2 : 8;
        QrJsonVal **ni = qr_arena_array(p->a, (size_t)nc, sizeof *ni);
        const char **nk = c->type == QR_JSON_OBJ ? qr_arena_array(p->a, (size_t)nc, sizeof *nk) : NULL;
        if (!ni || (c->type == QR_JSON_OBJ && !nk)) return qr_errf(QR_ERR_NOMEM, "json: out of memory");
        if (c->n) memcpy(ni, c->items, (size_t)c->n * sizeof *ni);
        if (nk && c->n) memcpy(nk, c->keys, (size_t)c->n * sizeof *nk);
        c->items = ni;
        if (nk) c->keys = nk;
        *cap = nc;
    }
    if (key) c->keys[c->n] = key;
    c->items[c->n++] = v;
    return QR_OK;
}

static QrStatus qr__json_jp_container(QrBdJsonParser *p, QrJsonVal *v, bool obj) {
    if (++p->depth > 256) return qr__json_jp_err(p, "nesting deeper than 256");
    v->type = obj ? QR_JSON_OBJ : QR_JSON_ARR;
    p->i++;
    int cap = 0;
    qr__json_jp_ws(p);
    if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) { p->i++; p->depth--; return QR_OK; }
    for (;;) {
        const char *key = NULL;
        if (obj) {
            qr__json_jp_ws(p);
            if (p->i >= p->n || p->s[p->i] != '"') return qr__json_jp_err(p, "object key expected");
            size_t at = p->i;
            QR_TRY(qr__json_jp_string(p, &key, NULL));
            for (int k = 0; k < v->n; k++)
                if (!strcmp(v->keys[k], key)) { p->i = at; return qr__json_jp_err(p, "duplicate key"); }
            qr__json_jp_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') return qr__json_jp_err(p, "':' expected");
            p->i++;
        }
        QrJsonVal *item;
        QR_TRY(qr__json_jp_value(p, &item));
        QR_TRY(qr__json_jp_push(p, v, &cap, key, item));
        qr__json_jp_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') { p->i++; continue; }
        if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) { p->i++; break; }
        return qr__json_jp_err(p, obj ? "',' or '}' expected" : "',' or ']' expected");
    }
    p->depth--;
    return QR_OK;
}

static QrStatus qr__json_jp_value(QrBdJsonParser *p, QrJsonVal **out) {
    qr__json_jp_ws(p);
    QrJsonVal *v = qr_arena_alloc(p->a, sizeof *v);
    if (!v) return qr_errf(QR_ERR_NOMEM, "json: out of memory");
    *out = v;
    if (p->i >= p->n) return qr__json_jp_err(p, "value expected");
    unsigned c = p->s[p->i];
    if (c == '{' || c == '[') return qr__json_jp_container(p, v, c == '{');
    if (c == '"') { v->type = QR_JSON_STR; return qr__json_jp_string(p, &v->str, &v->str_len); }
    if (c == '-' || (c >= '0' && c <= '9')) { v->type = QR_JSON_NUM; return qr__json_jp_number(p, &v->num); }
    if (qr__json_jp_lit(p, "true")) { v->type = QR_JSON_BOOL; v->b = true; return QR_OK; }
    if (qr__json_jp_lit(p, "false")) { v->type = QR_JSON_BOOL; return QR_OK; }
    if (qr__json_jp_lit(p, "null")) { v->type = QR_JSON_NULL; return QR_OK; }
    return qr__json_jp_err(p, "value expected");
}

#ifdef QR_TESTING
QR_TESTAPI QrStatus qr_json_parse(QrArena *a, const char *text, size_t len, QrJsonVal **out) {
    QrBdJsonParser p = { .a = a, .s = (const unsigned char *)text, .n = len };
    *out = NULL;
    QrJsonVal *v;
    QR_TRY(qr__json_jp_value(&p, &v));
    qr__json_jp_ws(&p);
    if (p.i != p.n) return qr__json_jp_err(&p, "trailing characters after the value");
    *out = v;
    return QR_OK;
}

QR_TESTAPI const QrJsonVal *qr_json_get(const QrJsonVal *v, const char *key) {
    if (!v || v->type != QR_JSON_OBJ) return NULL;
    for (int k = 0; k < v->n; k++) if (!strcmp(v->keys[k], key)) return v->items[k];
    return NULL;
}

QR_TESTAPI const QrJsonVal *qr_json_at(const QrJsonVal *v, int i) {
    if (!v || v->type != QR_JSON_ARR || i < 0 || i >= v->n) return NULL;
    return v->items[i];
}
#endif
