/* json.c: the JSON writer (strings, numbers, base64) and the strict
 * reader behind `autotune import` (db/json.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"

#define JSON_MAX_DEPTH 64

/* ---- reader ---- */

typedef struct jp {
    const char *s;
    size_t len, pos;
    char *err;
    size_t errlen;
    at_status status;               /* AT_OK until the first failure */
} jp;

void db_json_where(const char *text, size_t len, long long offset, char *out, size_t outlen)
{
    long long line = 1, col = 1;
    for (long long i = 0; i < offset && (size_t)i < len; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    snprintf(out, outlen, "line %lld, column %lld", line, col);
}

/* Records the first failure at the current position; returns 0. */
static int jp_fail(jp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jp_fail(jp *p, const char *fmt, ...)
{
    if (p->status != AT_OK)
        return 0;
    p->status = AT_ERR_INVALID_ARG;
    char where[64], why[256];
    db_json_where(p->s, p->len, (long long)p->pos, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (p->err && p->errlen)
        snprintf(p->err, p->errlen, "%s: %s%s", where, why,
                 p->pos >= p->len ? " (the text ends there: truncated?)" : "");
    return 0;
}

static int jp_nomem(jp *p)
{
    if (p->status == AT_OK) {
        p->status = AT_ERR_NO_MEMORY;
        if (p->err && p->errlen)
            snprintf(p->err, p->errlen, "out of memory reading JSON");
    }
    return 0;
}

static void jp_space(jp *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static int jp_literal(jp *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return jp_fail(p, "unexpected text (expected a JSON value)");
    p->pos += n;
    return 1;
}

/* The number grammar of RFC 8259, then strtod on the checked text. */
static int jp_number(jp *p, db_json *v)
{
    size_t start = p->pos, i = p->pos;
    const char *s = p->s;
    if (i < p->len && s[i] == '-')
        i++;
    if (i >= p->len || s[i] < '0' || s[i] > '9')
        return jp_fail(p, "bad number");
    if (s[i] == '0' && i + 1 < p->len && s[i + 1] >= '0' && s[i + 1] <= '9')
        return jp_fail(p, "bad number (leading zero)");
    while (i < p->len && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i < p->len && s[i] == '.') {
        i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9')
            return jp_fail(p, "bad number (no digit after '.')");
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9')
            return jp_fail(p, "bad number (no digit in the exponent)");
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    char buf[64];
    if (i - start >= sizeof buf)
        return jp_fail(p, "number too long");
    memcpy(buf, s + start, i - start);
    buf[i - start] = '\0';
    errno = 0;
    v->number = strtod(buf, NULL);
    if (!isfinite(v->number))
        return jp_fail(p, "number out of range");
    v->type = DB_JSON_NUMBER;
    p->pos = i;
    return 1;
}

static int jp_hex4(jp *p, size_t at, unsigned *out)
{
    if (p->len - at < 4)
        return 0;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p->s[at + k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return 0;
    }
    *out = v;
    return 1;
}

/* Length of the well-formed UTF-8 sequence at s[0..n), 0 if malformed. */
static size_t utf8_length(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t k = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
             : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (k == 0 || k > n)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
        (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
        return 0;                   /* overlong, surrogate, above U+10FFFF */
    return k;
}

static size_t utf8_put(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A \u escape at p->pos (after the backslash and 'u'), a surrogate pair
 * taken whole; the code point in *cp. */
static int jp_unicode(jp *p, unsigned *cp)
{
    unsigned hi;
    if (!jp_hex4(p, p->pos, &hi))
        return jp_fail(p, "bad \\u escape");
    p->pos += 4;
    if (hi >= 0xdc00 && hi <= 0xdfff)
        return jp_fail(p, "lone low surrogate in \\u escape");
    if (hi >= 0xd800 && hi <= 0xdbff) {
        unsigned lo;
        if (p->len - p->pos < 6 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
            !jp_hex4(p, p->pos + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
            return jp_fail(p, "lone high surrogate in \\u escape");
        p->pos += 6;
        hi = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (hi == 0)
        return jp_fail(p, "\\u0000 is not accepted in a string");
    *cp = hi;
    return 1;
}

/* A string at p->pos (on the opening quote) into a malloc'd buffer. */
static int jp_string(jp *p, char **out, size_t *outlen)
{
    size_t start = ++p->pos, end = start;
    while (end < p->len && p->s[end] != '"')
        end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->len)
        return jp_fail(p, "unterminated string");
    char *buf = malloc(end - start + 1);       /* escapes never grow */
    if (!buf)
        return jp_nomem(p);
    size_t n = 0;
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c < 0x20) {
            free(buf);
            return jp_fail(p, "control character in a string (escape it)");
        }
        if (c != '\\') {
            size_t k = utf8_length((const unsigned char *)p->s + p->pos, end - p->pos);
            if (k == 0) {
                free(buf);
                return jp_fail(p, "invalid UTF-8 in a string");
            }
            memcpy(buf + n, p->s + p->pos, k);
            n += k;
            p->pos += k;
            continue;
        }
        char e = p->s[p->pos + 1];
        p->pos += 2;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *hit = e ? strchr(from, e) : NULL;
        unsigned cp = 0;
        if (hit) {
            buf[n++] = to[hit - from];
        } else if (e == 'u' && jp_unicode(p, &cp)) {
            n += utf8_put(buf + n, cp);
        } else {
            free(buf);
            p->pos -= 2;
            return jp_fail(p, "bad escape in a string");
        }
    }
    buf[n] = '\0';
    p->pos = end + 1;
    *out = buf;
    *outlen = n;
    return 1;
}

static int jp_value(jp *p, db_json *v, int depth);

/* Appends a zeroed child to v; NULL if out of memory. */
static db_json *jp_child(jp *p, db_json *v, int *cap)
{
    if (v->n_items == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        db_json *items = realloc(v->items, (size_t)ncap * sizeof *items);
        if (!items) {
            jp_nomem(p);
            return NULL;
        }
        v->items = items;
        *cap = ncap;
    }
    db_json *c = &v->items[v->n_items++];
    memset(c, 0, sizeof *c);
    return c;
}

/* An array or object at p->pos (on '[' or '{'). */
static int jp_container(jp *p, db_json *v, int depth)
{
    int object = p->s[p->pos] == '{', cap = 0;
    char close = object ? '}' : ']';
    v->type = object ? DB_JSON_OBJECT : DB_JSON_ARRAY;
    if (depth >= JSON_MAX_DEPTH)
        return jp_fail(p, "nested deeper than %d", JSON_MAX_DEPTH);
    p->pos++;
    jp_space(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return 1;
    }
    for (;;) {
        jp_space(p);
        db_json *c = jp_child(p, v, &cap);
        if (!c)
            return 0;
        if (object) {
            size_t klen;
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return jp_fail(p, "expected a member name in quotes");
            size_t at = p->pos;
            if (!jp_string(p, &c->key, &klen))
                return 0;
            for (int i = 0; i + 1 < v->n_items; i++)
                if (strcmp(v->items[i].key, c->key) == 0) {
                    p->pos = at;
                    return jp_fail(p, "duplicate member \"%.100s\"", c->key);
                }
            jp_space(p);
            if (p->pos >= p->len || p->s[p->pos] != ':')
                return jp_fail(p, "expected ':' after a member name");
            p->pos++;
            jp_space(p);
        }
        if (!jp_value(p, c, depth + 1))
            return 0;
        jp_space(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            jp_space(p);
            if (p->pos < p->len && p->s[p->pos] == close)
                return jp_fail(p, "trailing comma");
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            return 1;
        }
        return jp_fail(p, p->pos >= p->len ? "unexpected end of the text (truncated?)"
                                           : "expected ',' or '%c'", close);
    }
}

static int jp_value(jp *p, db_json *v, int depth)
{
    v->offset = (long long)p->pos;
    if (p->pos >= p->len)
        return jp_fail(p, "unexpected end of the text (truncated?)");
    char c = p->s[p->pos];
    if (c == '{' || c == '[')
        return jp_container(p, v, depth);
    if (c == '"') {
        v->type = DB_JSON_STRING;
        return jp_string(p, &v->string, &v->length);
    }
    if (c == 't') {
        v->type = DB_JSON_TRUE;
        return jp_literal(p, "true");
    }
    if (c == 'f') {
        v->type = DB_JSON_FALSE;
        return jp_literal(p, "false");
    }
    if (c == 'n') {
        v->type = DB_JSON_NULL;
        return jp_literal(p, "null");
    }
    return jp_number(p, v);
}

static void json_free_items(db_json *v)
{
    for (int i = 0; i < v->n_items; i++)
        json_free_items(&v->items[i]);
    free(v->items);
    free(v->string);
    free(v->key);
}

void db_json_free(db_json *v)
{
    if (!v)
        return;
    json_free_items(v);
    free(v);
}

at_status db_json_parse(const char *text, size_t len, db_json **out, char *err, size_t errlen)
{
    jp p = {text, len, 0, err, errlen, AT_OK};
    if (err && errlen)
        err[0] = '\0';
    *out = NULL;
    db_json *v = calloc(1, sizeof *v);
    if (!v)
        return jp_nomem(&p), p.status;
    jp_space(&p);
    if (jp_value(&p, v, 0)) {
        jp_space(&p);
        if (p.pos != len)
            jp_fail(&p, "unexpected text after the JSON value");
    }
    if (p.status != AT_OK) {
        db_json_free(v);
        return p.status;
    }
    *out = v;
    return AT_OK;
}

const db_json *db_json_get(const db_json *v, const char *key)
{
    if (!v || v->type != DB_JSON_OBJECT)
        return NULL;
    for (int i = 0; i < v->n_items; i++)
        if (strcmp(v->items[i].key, key) == 0)
            return &v->items[i];
    return NULL;
}

/* ---- writer ---- */

void db_json_put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", f);
        else if (*c == '\t')
            fputs("\\t", f);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

void db_json_put_number(FILE *f, double x)
{
    if (!isfinite(x)) {
        fputs("null", f);
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    fputs(buf, f);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void db_json_put_base64(FILE *f, const void *data, size_t size)
{
    const unsigned char *s = data;
    fputc('"', f);
    for (size_t i = 0; i < size; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < size ? (unsigned)s[i + 1] << 8 : 0) |
                     (i + 2 < size ? s[i + 2] : 0);
        fputc(b64[v >> 18], f);
        fputc(b64[(v >> 12) & 63], f);
        fputc(i + 1 < size ? b64[(v >> 6) & 63] : '=', f);
        fputc(i + 2 < size ? b64[v & 63] : '=', f);
    }
    fputc('"', f);
}

at_status db_base64_decode(const char *text, size_t len, void **out, size_t *size)
{
    *out = NULL;
    *size = 0;
    if (len % 4 != 0)
        return AT_ERR_INVALID_ARG;
    unsigned char *buf = malloc(len / 4 * 3 + 1);
    if (!buf)
        return AT_ERR_NO_MEMORY;
    size_t n = 0;
    for (size_t i = 0; i < len; i += 4) {
        unsigned v = 0;
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            const char *hit = text[i + k] ? strchr(b64, text[i + k]) : NULL;
            int last = i + 4 == len;
            if (text[i + k] == '=' && last && k >= 2 && (k == 3 || text[i + 3] == '=')) {
                pad++;
                v <<= 6;
            } else if (hit && !pad) {
                v = v << 6 | (unsigned)(hit - b64);
            } else {
                free(buf);
                return AT_ERR_INVALID_ARG;
            }
        }
        buf[n++] = (unsigned char)(v >> 16);
        if (pad < 2)
            buf[n++] = (unsigned char)(v >> 8);
        if (pad < 1)
            buf[n++] = (unsigned char)v;
    }
    *out = buf;
    *size = n;
    return AT_OK;
}
