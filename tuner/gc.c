/* gc.c: the database's size (the line that ends a tuning run) and
 * `autotune gc`: reclaim the cubins no lookup serves, then VACUUM. */
#include <stdio.h>
#include <string.h>
#include "lookup.h"
#include "tn.h"

/* "12.3 MiB", "4.0 KiB", "512 B" */
static void format_bytes(long long n, char *out, size_t len)
{
    if (n >= (1ll << 20))
        snprintf(out, len, "%.1f MiB", (double)n / (1 << 20));
    else if (n >= 1024)
        snprintf(out, len, "%.1f KiB", (double)n / 1024);
    else
        snprintf(out, len, "%lld B", n);
}

/* "3.2 MiB (file 3.0 MiB + WAL 0.2 MiB), 120 results, 80 cubins of 2.9 MiB" */
static void format_usage(const db_usage *u, char *out, size_t len)
{
    char total[32], file[32], wal[32], bins[32];
    format_bytes(u->file_bytes + u->wal_bytes, total, sizeof total);
    format_bytes(u->file_bytes, file, sizeof file);
    format_bytes(u->wal_bytes, wal, sizeof wal);
    format_bytes(u->binary_bytes, bins, sizeof bins);
    snprintf(out, len, "%s (file %s + WAL %s), %lld results, %lld cubins of %s", total, file,
             wal, u->n_results, u->n_binaries, bins);
}

void tn_print_db_size(db *d, int gc_applied)
{
    db_usage u;
    char text[256];
    /* what the file holds once the run's WAL is copied back (best effort:
     * a reader elsewhere may keep part of it in the WAL) */
    db_checkpoint(d);
    if (db_usage_of(d, &u) != AT_OK) {
        printf("database size: unknown (%s)\n", db_errmsg(d));
        return;
    }
    format_usage(&u, text, sizeof text);
    printf("database: %s%s\n", text,
           gc_applied ? "" : "; autotune gc reclaims the cubins no lookup serves");
}

int tn_gc_after_run(db *d)
{
    db_gc_stats st;
    char bytes[32];
    long long open = 0;
    if (db_is_readonly(d))
        return 0;
    /* another run's cubins may be waiting for their results: its end (or autotune gc) applies
     * the rules then */
    if (db_open_sessions(d, &open) != AT_OK || open > 0) {
        printf("gc: deferred: %lld other tuning run%s of the last day still open on this "
               "database (autotune gc applies the rules)\n", open, open == 1 ? " is" : "s are");
        return 0;
    }
    if (db_gc_binaries(d, LK_PER_PROBLEM, 0, 0, &st) != AT_OK) {
        printf("gc: not applied (%s); every cubin kept\n", db_errmsg(d));
        return 0;
    }
    format_bytes(st.deleted_bytes, bytes, sizeof bytes);
    printf("gc: kept the %lld cubins lookups can serve, deleted %lld (%s) no lookup serves "
           "(--keep-all-cubins keeps them)\n", st.n_best, st.n_deleted, bytes);
    if (st.n_deleted > 0 && db_vacuum(d) != AT_OK)
        printf("gc: %s; the deleted cubins' pages stay in the file, where later writes "
               "reuse them\n", db_errmsg(d));
    return 1;
}

/* Deletes (or counts, dry_run) and reports; the exit status. */
static int gc_run(db *d, const char *path, long long keep_recent, int dry_run)
{
    db_usage u;
    char text[256], bytes[32];
    if (db_usage_of(d, &u) != AT_OK) {
        fprintf(stderr, "autotune: cannot read %s: %s\n", path, db_errmsg(d));
        return 1;
    }
    format_usage(&u, text, sizeof text);
    printf("database %s: %s\n", path, text);
    db_gc_stats st;
    if (db_gc_binaries(d, LK_PER_PROBLEM, keep_recent, dry_run, &st) != AT_OK) {
        fprintf(stderr, "autotune: gc failed: %s; nothing was deleted\n", db_errmsg(d));
        return 1;
    }
    printf("keeping %lld cubins: %lld that lookups can serve (the %d fastest per device "
           "or architecture, kernel and size, also among deterministic ones), %lld more "
           "of the %lld newest results and cubins (--keep-recent)\n", st.n_best + st.n_recent,
           st.n_best, LK_PER_PROBLEM, st.n_recent, keep_recent);
    format_bytes(st.deleted_bytes, bytes, sizeof bytes);
    if (dry_run) {
        printf("would delete %lld cubins (%s); nothing changed (--dry-run)\n", st.n_deleted,
               bytes);
        return 0;
    }
    printf("deleted %lld cubins (%s); no result row deleted\n", st.n_deleted, bytes);
    if (db_vacuum(d) != AT_OK) {
        fprintf(stderr, "autotune: %s; the deleted cubins' pages stay in the file, where "
                "later writes reuse them\n", db_errmsg(d));
        return 1;
    }
    if (db_usage_of(d, &u) == AT_OK) {
        format_usage(&u, text, sizeof text);
        printf("after VACUUM: %s\n", text);
    }
    return 0;
}

int tn_gc(const char *db_path, long long keep_recent, int dry_run)
{
    char path[4096], err[1024];
    tn_db_path(db_path, path, sizeof path);
    db *d = NULL;
    at_status s = db_open(&d, path, dry_run ? DB_OPEN_READONLY : DB_OPEN_EXISTING, err,
                          sizeof err);
    if (s == AT_ERR_NOT_FOUND) {
        printf("no database at %s: nothing to reclaim\n", path);
        return 0;
    }
    if (s != AT_OK) {
        fprintf(stderr, "autotune: cannot open the database %s: %s\n", path, err);
        return 1;
    }
    if (!dry_run && db_is_readonly(d)) {
        fprintf(stderr, "autotune: cannot gc %s: the database is read-only (%s); nothing "
                "was deleted\n", path, db_readonly_reason(d));
        db_close(d);
        return 1;
    }
    int rc = gc_run(d, path, keep_recent, dry_run);
    db_close(d);
    return rc;
}
