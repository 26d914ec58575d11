/* gc.c: the space the database takes, and reclaiming the cubins that no
 * lookup can serve (never a result row): the keep set, deletion, VACUUM. */
#include <string.h>
#include <sys/stat.h>
#include "db_internal.h"

static long long db_file_size(const char *path, const char *suffix)
{
    char name[4200];
    db_fmt(name, sizeof name, "%s%s", path, suffix);
    struct stat sb;
    return stat(name, &sb) == 0 ? (long long)sb.st_size : 0;
}

at_status db_usage_of(db *d, db_usage *out)
{
    if (!d || !out)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_usage_of: NULL argument")
                 : AT_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    out->file_bytes = db_file_size(d->path, "");
    out->wal_bytes = db_file_size(d->path, "-wal");
    long long free_pages = 0, page_size = 0;
    at_status s;
    if ((s = db_query_int(d, "SELECT count(*) FROM result", NULL, &out->n_results,
                          "counting results")) != AT_OK ||
        (s = db_query_int(d, "SELECT count(*) FROM binary", NULL, &out->n_binaries,
                          "counting cubins")) != AT_OK ||
        (s = db_query_int(d, "SELECT coalesce(sum(size), 0) FROM binary", NULL,
                          &out->binary_bytes, "counting cubins")) != AT_OK ||
        (s = db_query_int(d, "PRAGMA freelist_count", NULL, &free_pages,
                          "reading the free pages")) != AT_OK ||
        (s = db_query_int(d, "PRAGMA page_size", NULL, &page_size,
                          "reading the page size")) != AT_OK)
        return s;
    out->free_bytes = free_pages * page_size;
    return AT_OK;
}

/* The keys of the cubins gc keeps, as CTEs over ?1 (per problem) and ?2
 * (recent): `best` mirrors the lookup's queries (db_best is the first of
 * db_candidates' ranks, by DB_RANK): per device, kernel (name and source) and problem,
 * and per architecture, kernel and problem, the ?1 fastest ok results, of
 * all and of the deterministic ones; `recent` is the cubins of the ?2
 * newest results and the ?2 newest cubins. */
#define DB_GC_KEEP \
    "WITH ok AS (SELECT r.id, r.binary_key AS key, " DB_RANK("r") " AS rank_key, " \
    "r.deterministic AS det, " \
    "r.device_id, r.kernel_id, r.problem_id, d.arch FROM result r " \
    "JOIN device d ON d.id = r.device_id " \
    "WHERE r.status = 'ok' AND r.time_ms > 0 AND r.binary_key != ''), " \
    "ranked AS (SELECT key, det, " \
    "ROW_NUMBER() OVER (PARTITION BY device_id, kernel_id, problem_id " \
    "ORDER BY rank_key, id) AS by_dev, " \
    "ROW_NUMBER() OVER (PARTITION BY arch, kernel_id, problem_id " \
    "ORDER BY rank_key, id) AS by_arch, " \
    "ROW_NUMBER() OVER (PARTITION BY device_id, kernel_id, problem_id, det " \
    "ORDER BY rank_key, id) AS by_dev_det, " \
    "ROW_NUMBER() OVER (PARTITION BY arch, kernel_id, problem_id, det " \
    "ORDER BY rank_key, id) AS by_arch_det FROM ok), " \
    "best AS (SELECT key FROM ranked WHERE by_dev <= ?1 OR by_arch <= ?1 " \
    "OR (det = 1 AND (by_dev_det <= ?1 OR by_arch_det <= ?1))), " \
    "recent AS (SELECT key FROM (SELECT binary_key AS key FROM result " \
    "WHERE binary_key != '' ORDER BY created DESC, id DESC LIMIT ?2) " \
    "UNION SELECT key FROM (SELECT key FROM binary ORDER BY created DESC, rowid DESC " \
    "LIMIT ?2)) "

#define DB_GC_DOOMED "key NOT IN (SELECT key FROM best) AND key NOT IN (SELECT key FROM recent)"

/* Fills the counts of st (what gc keeps and deletes) in one snapshot. */
static at_status db_gc_count(db *d, int per_problem, long long keep_recent, db_gc_stats *st)
{
    sqlite3_stmt *q;
    at_status s = db_prepare(d, &q, DB_GC_KEEP "SELECT "
        "(SELECT count(*) FROM binary), (SELECT coalesce(sum(size), 0) FROM binary), "
        "(SELECT count(*) FROM binary WHERE key IN (SELECT key FROM best)), "
        "(SELECT count(*) FROM binary WHERE key NOT IN (SELECT key FROM best) "
        "AND key IN (SELECT key FROM recent)), "
        "(SELECT count(*) FROM binary WHERE " DB_GC_DOOMED "), "
        "(SELECT coalesce(sum(size), 0) FROM binary WHERE " DB_GC_DOOMED ")");
    if (s != AT_OK)
        return s;
    sqlite3_bind_int(q, 1, per_problem);
    sqlite3_bind_int64(q, 2, keep_recent);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        st->n_binaries = sqlite3_column_int64(q, 0);
        st->binary_bytes = sqlite3_column_int64(q, 1);
        st->n_best = sqlite3_column_int64(q, 2);
        st->n_recent = sqlite3_column_int64(q, 3);
        st->n_deleted = sqlite3_column_int64(q, 4);
        st->deleted_bytes = sqlite3_column_int64(q, 5);
    } else {
        s = db_sqlfail(d, rc, "choosing the cubins to keep");
    }
    sqlite3_finalize(q);
    return s;
}

at_status db_gc_binaries(db *d, int per_problem, long long keep_recent, int dry_run,
                         db_gc_stats *out)
{
    if (!d || !out || per_problem < 1 || keep_recent < 0)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_gc_binaries: bad argument")
                 : AT_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (dry_run)
        return db_gc_count(d, per_problem, keep_recent, out);
    at_status s = db_check_writable(d, "reclaiming cubins");
    if (s != AT_OK || (s = db_begin(d)) != AT_OK)
        return s;
    s = db_gc_count(d, per_problem, keep_recent, out);
    sqlite3_stmt *del = NULL;
    if (s == AT_OK)
        s = db_prepare(d, &del, DB_GC_KEEP "DELETE FROM binary WHERE " DB_GC_DOOMED);
    if (s == AT_OK) {
        sqlite3_bind_int(del, 1, per_problem);
        sqlite3_bind_int64(del, 2, keep_recent);
        int rc = sqlite3_step(del);
        if (rc != SQLITE_DONE)
            s = db_sqlfail(d, rc, "deleting cubins");
        else if (sqlite3_changes(d->h) != out->n_deleted)
            s = db_fail(d, AT_ERR_INTERNAL, "deleting cubins: %d deleted, %lld counted",
                        sqlite3_changes(d->h), out->n_deleted);
    }
    sqlite3_finalize(del);
    if (s != AT_OK) {
        db_rollback(d);
        return s;
    }
    return db_commit(d);
}

at_status db_vacuum(db *d)
{
    if (!d)
        return AT_ERR_INVALID_ARG;
    at_status s = db_check_writable(d, "compacting");
    if (s != AT_OK || !db_exec(d, "VACUUM", "compacting (VACUUM)", &s))
        return s;
    /* VACUUM went through the WAL: copy it back and truncate both files */
    return db_checkpoint(d);
}

at_status db_checkpoint(db *d)
{
    if (!d)
        return AT_ERR_INVALID_ARG;
    at_status s = db_check_writable(d, "checkpointing");
    if (s != AT_OK)
        return s;
    int log = 0, done = 0;
    int rc = sqlite3_wal_checkpoint_v2(d->h, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
    if (rc != SQLITE_OK)
        return db_sqlfail(d, rc, "checkpointing the WAL");
    return AT_OK;
}
