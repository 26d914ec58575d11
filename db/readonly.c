/* readonly.c: reading a database whose WAL side files (-shm, -wal) cannot
 * be opened or created: as an immutable file, or from a private snapshot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "db_internal.h"

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

/* Copies file src to dst (created, 0600); 0 with errno set on failure. */
static int db_copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb");
    if (!in)
        return 0;
    FILE *out = fopen(dst, "wbx");
    if (!out) {
        int e = errno;
        fclose(in);
        errno = e;
        return 0;
    }
    char buf[65536];
    size_t n;
    int ok = 1;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    ok = ok && !ferror(in);
    int e = errno;
    fclose(in);
    ok = fclose(out) == 0 && ok;
    errno = ok ? 0 : e ? e : EIO;
    return ok;
}

/* The database and its pending -wal, copied into a fresh private folder
 * under $TMPDIR and opened read-only there: SQLite builds its -shm beside
 * the copy. The copies are unlinked once the handle has read the schema
 * (it keeps them open), so nothing is left behind. Reason on failure. */
static at_status db_open_snapshot(db *d, int empty_file)
{
    const char *tmp = getenv("TMPDIR");
    char dir[sizeof d->path], copy[sizeof d->path + 64], side[sizeof d->path + 80];
    db_fmt(dir, sizeof dir, "%s/autotune-snapshot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return db_fail(d, AT_ERR_IO, "cannot read %s-wal through a snapshot: %s: %s",
                       d->path, dir, strerror(errno));
    db_fmt(copy, sizeof copy, "%s/tuning.db", dir);
    char wal[sizeof d->path + 8];
    db_fmt(wal, sizeof wal, "%s-wal", d->path);
    db_fmt(side, sizeof side, "%s-wal", copy);
    at_status s;
    if (!db_copy_file(d->path, copy) || !db_copy_file(wal, side)) {
        s = db_fail(d, AT_ERR_IO, "cannot copy %s and its -wal into %s: %s", d->path, dir,
                    strerror(errno));
    } else {
        s = db_connect(d, copy, SQLITE_OPEN_READONLY);
        if (s == AT_OK)
            s = db_setup(d, 0, empty_file);
    }
    unlink(side);
    db_fmt(side, sizeof side, "%s-shm", copy);
    unlink(side);
    unlink(copy);
    rmdir(dir);
    return s;
}

at_status db_open_readonly(db *d, int empty_file)
{
    char wal[sizeof d->path + 8];
    db_fmt(wal, sizeof wal, "%s-wal", d->path);
    struct stat sb;
    int pending = stat(wal, &sb) == 0 && sb.st_size > 0;
    size_t used = strlen(d->ro_reason);
    if (pending && db_open_snapshot(d, empty_file) == AT_OK) {
        db_fmt(d->ro_reason + used, sizeof d->ro_reason - used, "; no -shm can be used "
               "beside it: read from a private copy taken at open");
        return AT_OK;
    }
    /* No pending -wal: the file alone is the whole database. */
    char uri[3 * sizeof d->path + 32];
    db_uri(uri, sizeof uri, d->path);
    at_status s = db_connect(d, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
    if (s == AT_OK)
        s = db_setup(d, 0, empty_file);
    if (s == AT_OK)
        db_fmt(d->ro_reason + used, sizeof d->ro_reason - used, "; no -shm can be used "
               "beside it: read as an unchanging file%s%s%s", pending ? " (the changes "
               "pending in " : "", pending ? wal : "", pending ? " could not be read)" : "");
    return s;
}
