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

/* Why an existing file cannot be written by us ("" if it can). */
static void db_why_readonly(const char *path, char *why, size_t len)
{
    why[0] = '\0';
    if (access(path, W_OK) == 0)
        return;
    if (errno == EROFS)
        db_fmt(why, len, "read-only file system");
    else if (errno == EACCES || errno == EPERM)
        db_fmt(why, len, "no write permission on the file");
    else
        db_fmt(why, len, "not writable: %s", strerror(errno));
}

/* Checks path before SQLite sees it: missing (created folder if mode is
 * DB_OPEN_CREATE, else AT_ERR_NOT_FOUND), a folder (AT_ERR_IO), a foreign
 * file (AT_ERR_DB_CORRUPT, untouched). Sets *exists, *empty_file and why
 * (the reason it is read-only, "" if writable); reason in err. */
static at_status db_check_path(const char *path, int mode, int *exists, int *empty_file,
                               char *why, size_t whylen, char *err, size_t errlen)
{
    struct stat sb;
    *exists = *empty_file = 0;
    why[0] = '\0';
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT) {
            db_fmt(err, errlen, "cannot access %s: %s", path, strerror(errno));
            return AT_ERR_IO;
        }
        if (mode != DB_OPEN_CREATE) {
            db_fmt(err, errlen, "no tuning database at %s", path);
            return AT_ERR_NOT_FOUND;
        }
        return db_mkdir_parent(path, err, errlen) ? AT_OK : AT_ERR_IO;
    }
    if (S_ISDIR(sb.st_mode)) {
        db_fmt(err, errlen, "%s is a directory, not a tuning database", path);
        return AT_ERR_IO;
    }
    at_status s = db_check_header(path, empty_file, err, errlen);
    if (s != AT_OK)
        return s;
    *exists = 1;
    if (mode == DB_OPEN_READONLY || mode == DB_OPEN_SHIPPED)
        db_fmt(why, whylen, "opened read-only");
    else
        db_why_readonly(path, why, whylen);
    return AT_OK;
}

at_status db_connect(db *d, const char *filename, int flags)
{
    sqlite3_close(d->h);
    d->h = NULL;
    int rc = sqlite3_open_v2(filename, &d->h, flags, NULL);
    if (rc != SQLITE_OK) {
        at_status s = db_fail(d, rc == SQLITE_CANTOPEN ? AT_ERR_IO : db_status_of(rc),
                              "cannot open %s: %s", d->path,
                              d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(rc));
        sqlite3_close(d->h);
        d->h = NULL;
        return s;
    }
    sqlite3_extended_result_codes(d->h, 1);
    sqlite3_busy_timeout(d->h, DB_BUSY_TIMEOUT_MS);
    if (!d->readonly && sqlite3_db_readonly(d->h, "main") == 1) {
        d->readonly = 1;
        db_copy(d->ro_reason, sizeof d->ro_reason, "SQLite opened it read-only");
    }
    return AT_OK;
}

int db_side_files_blocked(const db *d)
{
    int code = d->h ? sqlite3_errcode(d->h) & 0xff : SQLITE_CANTOPEN;
    return code == SQLITE_READONLY || code == SQLITE_CANTOPEN;
}

/* Connects and validates: writable where the file allows it, else (or
 * when the folder refuses the WAL's side files) read-only, through
 * db_open_readonly's fallbacks. Reason on the handle. */
static at_status db_attach(db *d, int mode, int exists, int empty_file)
{
    int create = mode == DB_OPEN_CREATE;
    if (mode == DB_OPEN_SHIPPED && exists)
        return db_open_readonly(d, empty_file);
    int flags = d->readonly ? SQLITE_OPEN_READONLY
                            : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    at_status s = db_connect(d, d->path, flags);
    if (s == AT_OK)
        s = db_setup(d, create, empty_file);
    if (s != AT_OK && exists && !d->readonly && db_side_files_blocked(d)) {
        /* a writable file in a folder we cannot write: WAL needs its
         * -wal and -shm there, so it can only be read */
        d->readonly = 1;
        db_fmt(d->ro_reason, sizeof d->ro_reason, "its folder is not writable, and "
               "SQLite's WAL needs %s-wal and -shm beside it", d->path);
        s = db_connect(d, d->path, SQLITE_OPEN_READONLY);
        if (s == AT_OK)
            s = db_setup(d, 0, empty_file);
    }
    if (s != AT_OK && exists && d->readonly && db_side_files_blocked(d))
        s = db_open_readonly(d, empty_file);
    return s;
}

at_status db_open(db **out, const char *path, int mode, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out) {
        db_fmt(err, errlen, "db_open: out is NULL");
        return AT_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (mode != DB_OPEN_EXISTING && mode != DB_OPEN_CREATE && mode != DB_OPEN_READONLY &&
        mode != DB_OPEN_SHIPPED) {
        db_fmt(err, errlen, "db_open: unknown mode %d", mode);
        return AT_ERR_INVALID_ARG;
    }
    char defpath[4096];
    if (!path || !*path) {
        db_default_path(defpath, sizeof defpath);
        path = defpath;
    }
    if (strlen(path) >= sizeof ((db *)0)->path) {
        db_fmt(err, errlen, "database path too long");
        return AT_ERR_INVALID_ARG;
    }
    int exists = 0, empty_file = 0;
    char why[sizeof ((db *)0)->ro_reason];
    at_status s = db_check_path(path, mode, &exists, &empty_file, why, sizeof why,
                                err, errlen);
    if (s != AT_OK)
        return s;
    db *d = calloc(1, sizeof *d);
    if (!d) {
        db_fmt(err, errlen, "out of memory");
        return AT_ERR_NO_MEMORY;
    }
    db_copy(d->path, sizeof d->path, path);
    d->readonly = why[0] != '\0';
    db_copy(d->ro_reason, sizeof d->ro_reason, why);
    s = db_attach(d, mode, exists, empty_file);
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

const char *db_readonly_reason(const db *d)
{
    if (!d)
        return "no database handle";
    return d->readonly ? d->ro_reason : "";
}
