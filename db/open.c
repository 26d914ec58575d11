/* open.c: where the database lives, opening it (created, writable or
 * read-only, WAL side files unreachable) and closing it. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include "db_internal.h"

#define DB_BUSY_TIMEOUT_MS 5000

/* ---- default path ---- */

void db_default_path(char *out, size_t len)
{
    const char *env = getenv("AUTOTUNE_DB");
    if (env && *env) {
        db_copy(out, len, env);
        return;
    }
    /* XDG: a relative $XDG_CACHE_HOME is invalid and ignored. */
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') {
        db_fmt(out, len, "%s/autotune/tuning.db", xdg);
        return;
    }
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw && pw->pw_dir ? pw->pw_dir : ".";
    }
    db_fmt(out, len, "%s/.cache/autotune/tuning.db", home);
}

/* ---- open / close ---- */

/* mkdir -p of the folder holding path. */
static int db_mkdir_parent(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    db_copy(dir, sizeof dir, path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 1;
    *slash = '\0';
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
                db_fmt(err, errlen, "cannot create folder %s: %s", dir, strerror(errno));
                return 0;
            }
            struct stat sb;
            if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
                db_fmt(err, errlen, "cannot create folder %s: not a directory", dir);
                return 0;
            }
            *p = saved;
            if (saved == '\0')
                break;
        }
    }
    return 1;
}

/* Checks the first bytes of an existing file: AT_OK if SQLite's header (or
 * an empty file, *empty = 1), AT_ERR_DB_CORRUPT if foreign, AT_ERR_IO if
 * unreadable. Never modifies the file. The bytes are read through SQLite's
 * own file layer, never fopen/fclose: closing any descriptor of the file
 * drops every POSIX lock this process holds on it, those of its other open
 * connections too, after which another process may checkpoint and reset
 * the WAL under them ("database disk image is malformed"); SQLite defers
 * such a close while its connections hold locks. */
static at_status db_check_header(const char *path, int *empty, char *err, size_t errlen)
{
    static const char magic[16] = "SQLite format 3";
    unsigned char head[100];
    *empty = 0;
    sqlite3 *h = NULL;
    sqlite3_file *file = NULL;
    sqlite3_int64 size = 0;
    int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_file_control(h, "main", SQLITE_FCNTL_FILE_POINTER, &file);
    if (rc == SQLITE_OK && (!file || !file->pMethods))
        rc = SQLITE_CANTOPEN;
    if (rc == SQLITE_OK)
        rc = file->pMethods->xFileSize(file, &size);
    if (rc == SQLITE_OK && size >= (sqlite3_int64)sizeof head)
        rc = file->pMethods->xRead(file, head, (int)sizeof head, 0);
    if (rc != SQLITE_OK) {
        db_fmt(err, errlen, "cannot read %s: %s", path,
               h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
        sqlite3_close(h);
        return AT_ERR_IO;
    }
    sqlite3_close(h);
    if (size == 0) {
        *empty = 1;
        return AT_OK;
    }
    if (size < (sqlite3_int64)sizeof head || memcmp(head, magic, sizeof magic) != 0) {
        db_fmt(err, errlen, "%s is not an SQLite database (not a tuning database; "
               "left untouched)", path);
        return AT_ERR_DB_CORRUPT;
    }
    return AT_OK;
}

/* 1 if opening a read-only database failed for want of a writable -shm and
 * no -wal holds pending changes. */
static int db_wal_unreachable(db *d)
{
    int code = sqlite3_errcode(d->h) & 0xff;
    if (code != SQLITE_READONLY && code != SQLITE_CANTOPEN)
        return 0;
    char wal[sizeof d->path + 8];
    db_fmt(wal, sizeof wal, "%s-wal", d->path);
    struct stat sb;
    return stat(wal, &sb) != 0 || sb.st_size == 0;
}

/* "file:PATH?immutable=1" with PATH percent-escaped. */
static void db_uri(char *out, size_t len, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    const char *prefix = "file:";
    for (; *prefix && n + 1 < len; prefix++)
        out[n++] = *prefix;
    for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 < len; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20 || *p >= 0x7f) {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        } else {
            out[n++] = (char)*p;
        }
    }
    out[n] = '\0';
    size_t used = strlen(out);
    db_fmt(out + used, len - used, "?immutable=1");
}

at_status db_open(db **out, const char *path, int create, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out) {
        db_fmt(err, errlen, "db_open: out is NULL");
        return AT_ERR_INVALID_ARG;
    }
    *out = NULL;
    char defpath[4096];
    if (!path || !*path) {
        db_default_path(defpath, sizeof defpath);
        path = defpath;
    }
    if (strlen(path) >= sizeof ((db *)0)->path) {
        db_fmt(err, errlen, "database path too long");
        return AT_ERR_INVALID_ARG;
    }

    struct stat sb;
    int empty_file = 0, readonly = 0;
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT) {
            db_fmt(err, errlen, "cannot access %s: %s", path, strerror(errno));
            return AT_ERR_IO;
        }
        if (!create) {
            db_fmt(err, errlen, "no tuning database at %s", path);
            return AT_ERR_NOT_FOUND;
        }
        if (!db_mkdir_parent(path, err, errlen))
            return AT_ERR_IO;
    } else {
        if (S_ISDIR(sb.st_mode)) {
            db_fmt(err, errlen, "%s is a directory, not a tuning database", path);
            return AT_ERR_IO;
        }
        at_status s = db_check_header(path, &empty_file, err, errlen);
        if (s != AT_OK)
            return s;
        readonly = access(path, W_OK) != 0;
    }

    db *d = calloc(1, sizeof *d);
    if (!d) {
        db_fmt(err, errlen, "out of memory");
        return AT_ERR_NO_MEMORY;
    }
    db_copy(d->path, sizeof d->path, path);
    int flags = readonly ? SQLITE_OPEN_READONLY
                         : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &d->h, flags, NULL);
    if (rc != SQLITE_OK) {
        db_fmt(err, errlen, "cannot open %s: %s", path,
               d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(rc));
        sqlite3_close(d->h);
        free(d);
        return rc == SQLITE_CANTOPEN ? AT_ERR_IO : db_status_of(rc);
    }
    sqlite3_extended_result_codes(d->h, 1);
    sqlite3_busy_timeout(d->h, DB_BUSY_TIMEOUT_MS);
    d->readonly = readonly || sqlite3_db_readonly(d->h, "main") == 1;

    at_status s = db_setup(d, create, empty_file);
    if (s != AT_OK && d->readonly && db_wal_unreachable(d)) {
        /* A read-only WAL file whose -shm cannot be created (folder not
         * ours): with no pending -wal the file alone is the whole database,
         * so open it as immutable. */
        sqlite3_close(d->h);
        d->h = NULL;
        char uri[3 * sizeof d->path + 32];
        db_uri(uri, sizeof uri, path);
        rc = sqlite3_open_v2(uri, &d->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_extended_result_codes(d->h, 1);
            s = db_setup(d, 0, empty_file);
        } else {
            s = db_fail(d, AT_ERR_DB, "cannot open read-only %s: %s", path,
                        d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(rc));
        }
    }
    if (s != AT_OK) {
        db_copy(err, errlen, d->errmsg);
        sqlite3_close(d->h);
        free(d);
        return s;
    }
    d->errmsg[0] = '\0';
    *out = d;
    return AT_OK;
}

void db_close(db *d)
{
    if (!d)
        return;
    sqlite3_close(d->h);
    free(d);
}

const char *db_errmsg(const db *d)
{
    if (!d)
        return "no database handle";
    return d->errmsg;
}

int db_is_readonly(const db *d)
{
    return d ? d->readonly : 1;
}
