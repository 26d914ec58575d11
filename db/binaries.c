/* binaries.c: the cubin cache, keyed by tpl_binary_key: storing a cubin
 * and reading it back. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "db_internal.h"

at_status db_put_binary(db *d, const char *key, const char *kernel,
                        const char *source_hash, const char *config,
                        const char *arch, const char *nvrtc_version,
                        const char *options, const void *cubin, size_t size)
{
    if (!d || !key || !*key || !cubin || size == 0 || size > INT_MAX)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_put_binary: no key or empty cubin")
                 : AT_ERR_INVALID_ARG;
    at_status s = db_check_writable(d, "storing a cubin");
    if (s != AT_OK)
        return s;
    char now[32];
    db_now(now, sizeof now);
    sqlite3_stmt *st;
    s = db_prepare(d, &st, "INSERT OR REPLACE INTO binary (key, kernel, source_hash, "
                           "config, arch, nvrtc_version, options, cubin, size, created) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, key);
    db_bind_text(st, 2, kernel ? kernel : "");
    db_bind_text(st, 3, source_hash ? source_hash : "");
    db_bind_text(st, 4, config ? config : "");
    db_bind_text(st, 5, arch ? arch : "");
    db_bind_text(st, 6, nvrtc_version ? nvrtc_version : "");
    db_bind_text(st, 7, options ? options : "");
    sqlite3_bind_blob(st, 8, cubin, (int)size, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 9, (long long)size);
    db_bind_text(st, 10, now);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "storing a cubin");
    return AT_OK;
}

at_status db_get_binary(db *d, const char *key, void **cubin, size_t *size)
{
    if (!d || !key || !cubin || !size)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_get_binary: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *cubin = NULL;
    *size = 0;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT cubin, size FROM binary WHERE key = ?1");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, key);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const void *blob = sqlite3_column_blob(st, 0);
        int n = sqlite3_column_bytes(st, 0);
        if (!blob || n <= 0 || n != sqlite3_column_int64(st, 1)) {
            s = db_fail(d, AT_ERR_DB_CORRUPT, "stored cubin %s is damaged (%d bytes, "
                        "%lld recorded)", key, n, (long long)sqlite3_column_int64(st, 1));
        } else {
            void *copy = malloc((size_t)n);
            if (!copy) {
                s = db_fail(d, AT_ERR_NO_MEMORY, "out of memory reading a cubin");
            } else {
                memcpy(copy, blob, (size_t)n);
                *cubin = copy;
                *size = (size_t)n;
            }
        }
    } else if (rc == SQLITE_DONE) {
        s = db_fail(d, AT_ERR_NOT_FOUND, "no cubin stored for key %s", key);
    } else {
        s = db_sqlfail(d, rc, "reading a cubin");
    }
    sqlite3_finalize(st);
    return s;
}

int db_has_binary(db *d, const char *key)
{
    if (!d || !key) {
        if (d)
            db_fail(d, AT_ERR_INVALID_ARG, "db_has_binary: NULL argument");
        return -1;
    }
    sqlite3_stmt *st;
    if (db_prepare(d, &st, "SELECT 1 FROM binary WHERE key = ?1 AND size > 0") != AT_OK)
        return -1;
    db_bind_text(st, 1, key);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    db_sqlfail(d, rc, "looking up a cubin");
    return -1;
}
