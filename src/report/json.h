/* report/json — a streaming JSON writer into a growable buffer (summary.json,
 * manifest.json, sensitive_ops.json) and a small strict parser that tests use to
 * check what the writer and the bundle produce. */
#ifndef QR_JSON_H
#define QR_JSON_H

#define QR_JSON_MAX_DEPTH 64

/* Writer. Output is pretty-printed with a 2-space indent; a container opened with
 * the *_compact variant is written on one line ("[1, 3, 224, 224]"), and so is
 * everything nested in it.
 *   - strings: '"', '\\' and control characters escaped (\n \t \r \b \f, else
 *     \u00XX); bytes that are not valid UTF-8 (overlong forms, surrogates, code
 *     points above U+10FFFF, truncated sequences) become U+FFFD, one per byte.
 *   - numbers: the shortest form that reads back to the same value (at most
 *     %.17g for double, %.9g for float); NaN, +Inf and -Inf are written as null,
 *     because JSON has no spelling for them.
 * Errors are sticky: misuse (a value in an object without a key, a key in an
 * array, unbalanced ends, nesting deeper than QR_JSON_MAX_DEPTH) or out of
 * memory records the first error, later calls do nothing, and qr_json_finish
 * returns it. So a writer can be driven without checking every call. */
typedef struct QrJson {
    char *buf;
    size_t len, cap;
    int depth;
    char kind[QR_JSON_MAX_DEPTH];     /* 'o' object, 'a' array, per open level */
    int count[QR_JSON_MAX_DEPTH];     /* members written so far, per open level */
    int compact_from;                 /* depth at which one-line output started; 0 = none */
    bool have_key;                    /* a key was written and awaits its value */
    bool done;                        /* the top-level value is complete */
    QrStatus err;                     /* first error (sticky) */
    const char *err_what;             /* its description (a string literal) */
} QrJson;

static void qr_json_init(QrJson *j);
/* Frees the buffer (safe after qr_json_finish handed it over). */
static void qr_json_free(QrJson *j);
/* Checks that exactly one complete value was written; on success hands over the
 * malloc'd, NUL-terminated text (ending in '\n') to *out (caller frees) and resets
 * the writer. On failure returns the first recorded error and frees nothing the
 * caller owns (call qr_json_free). */
static QrStatus qr_json_finish(QrJson *j, char **out, size_t *len);

static void qr_json_obj_begin(QrJson *j);
static void qr_json_obj_begin_compact(QrJson *j);
static void qr_json_obj_end(QrJson *j);
static void qr_json_arr_begin(QrJson *j);
static void qr_json_arr_begin_compact(QrJson *j);
static void qr_json_arr_end(QrJson *j);
/* The key of the next member (inside an object only). */
static void qr_json_key(QrJson *j, const char *key);

static void qr_json_str(QrJson *j, const char *s);            /* NULL writes null */
static void qr_json_strn(QrJson *j, const char *s, size_t n); /* n bytes, may hold NULs (escaped) */
static void qr_json_num(QrJson *j, double v);                 /* round-trips a double */
#ifdef QR_TESTING
QR_TESTAPI void qr_json_f32(QrJson *j, float v);                  /* round-trips a float, shorter */
static void qr_json_int(QrJson *j, int64_t v);
#endif
static void qr_json_bool(QrJson *j, bool v);
static void qr_json_null(QrJson *j);

/* key + value shorthands for objects. */
static void qr_json_kv_str(QrJson *j, const char *key, const char *s);
static void qr_json_kv_num(QrJson *j, const char *key, double v);
#ifdef QR_TESTING
QR_TESTAPI void qr_json_kv_f32(QrJson *j, const char *key, float v);
#endif
static void qr_json_kv_int(QrJson *j, const char *key, int64_t v);
static void qr_json_kv_bool(QrJson *j, const char *key, bool v);
static void qr_json_kv_null(QrJson *j, const char *key);

/* Writes a JSON number for `v` (shortest round-trip, %.17g at most; float_precision
 * uses the float's %.9g bound) into buf; returns false for NaN/Inf (nothing written). */
static bool qr_json_format_num(double v, bool float_precision, char buf[32]);

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 when the bytes at s
 * (n of them available) do not start one. Shared with report/html. */
static int qr_json_utf8_len(const unsigned char *s, size_t n);

/* ---- parser ------------------------------------------------------------------ */

typedef enum QrJsonType { QR_JSON_NULL, QR_JSON_BOOL, QR_JSON_NUM, QR_JSON_STR, QR_JSON_ARR, QR_JSON_OBJ } QrJsonType;

typedef struct QrJsonVal {
    QrJsonType type;
    bool b;
    double num;
    const char *str;              /* STR: decoded UTF-8, NUL-terminated (may hold NULs: see str_len) */
    size_t str_len;
    int n;                        /* ARR/OBJ: number of members */
    struct QrJsonVal **items;     /* ARR/OBJ: members in document order */
    const char **keys;            /* OBJ: keys, parallel to items */
} QrJsonVal;

#ifdef QR_TESTING
/* Parses exactly one JSON text (RFC 8259, strict): no comments, no trailing commas,
 * no leading zeros, no NaN/Infinity, no raw control characters or invalid UTF-8
 * in strings, unpaired surrogate escapes rejected, duplicate keys in one object
 * rejected, nesting at most 256, only whitespace after the value. The tree lives
 * in `a` (caller frees the arena). Failure: QR_ERR_PARSE with the byte offset. */
QR_TESTAPI QrStatus qr_json_parse(QrArena *a, const char *text, size_t len, QrJsonVal **out);
/* Member of an object by key, or NULL (also when v is not an object). */
QR_TESTAPI const QrJsonVal *qr_json_get(const QrJsonVal *v, const char *key);
/* Element i of an array, or NULL when out of range / not an array. */
QR_TESTAPI const QrJsonVal *qr_json_at(const QrJsonVal *v, int i);
#endif

#endif
