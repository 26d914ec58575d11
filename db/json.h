/* json.h: a small JSON writer (escaped strings, base64) and a strict
 * RFC 8259 reader into a tree, for the export format (db/export.c). */
#ifndef DB_JSON_H
#define DB_JSON_H

#include <stddef.h>
#include <stdio.h>
#include "autotune.h"

typedef enum db_json_type {
    DB_JSON_NULL, DB_JSON_FALSE, DB_JSON_TRUE, DB_JSON_NUMBER, DB_JSON_STRING,
    DB_JSON_ARRAY, DB_JSON_OBJECT
} db_json_type;

/* One value. Object members keep the file's order; names are unique. */
typedef struct db_json {
    db_json_type type;
    double number;                  /* NUMBER */
    char *string;                   /* STRING: UTF-8, NUL-terminated, no NUL inside */
    size_t length;                  /* its byte count */
    char *key;                      /* member name inside an object, else NULL */
    struct db_json *items;          /* ARRAY elements / OBJECT members */
    int n_items;
    long long offset;               /* byte offset in the text, for messages */
} db_json;

/* Parses text[0..len) as exactly one JSON value (RFC 8259, strict: no
 * comments, trailing commas, leading zeros, control characters in strings,
 * invalid UTF-8, lone surrogates, \u0000, duplicate member names, nesting
 * deeper than 64, anything after the value). AT_ERR_INVALID_ARG with
 * "line L, column C: why" in err; AT_ERR_NO_MEMORY. *out NULL on failure;
 * free with db_json_free. */
at_status db_json_parse(const char *text, size_t len, db_json **out, char *err, size_t errlen);
void db_json_free(db_json *v);                          /* NULL is a no-op */
/* The member `key` of an object, NULL if absent or v is not an object. */
const db_json *db_json_get(const db_json *v, const char *key);
/* "line L, column C" of v's offset in text. */
void db_json_where(const char *text, size_t len, long long offset, char *out, size_t outlen);

/* ---- writing ---- */
/* s (NULL: "") as a quoted JSON string: ", \ and control characters
 * escaped, bytes >= 0x80 copied (the caller writes UTF-8). */
void db_json_put_string(FILE *f, const char *s);
/* A finite number as the shortest text that reads back to the same double;
 * NaN and infinities (not JSON) as null. */
void db_json_put_number(FILE *f, double x);
/* data as a quoted base64 string (RFC 4648, with padding). */
void db_json_put_base64(FILE *f, const void *data, size_t size);
/* Decodes strict base64 (RFC 4648 alphabet, padding required, no
 * whitespace) into a malloc'd buffer. AT_ERR_INVALID_ARG if malformed,
 * AT_ERR_NO_MEMORY. */
at_status db_base64_decode(const char *text, size_t len, void **out, size_t *size);

#endif
