/* test_gc.c: the database's size and gc: a model of many results and cubins, every best kept
 * and no other cubin, keep-recent and dry runs through db_ (the command on a read-only
 * database and the size line a run ends with: test_storage.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "th_storage.h"
#include "tpl.h"

/* ---- size and gc ---- */

/* A database of many results and cubins written through db_: 3 devices
 * (two sm_90, one sm_80), kernel "ga" of two sources and "gb", 4 sizes,
 * 40 configurations each with noisy times, some deterministic, some
 * failed, one ok row of time 0; a cubin per (arch, kernel, source,
 * configuration) as the tuner keys them, and cubins no result names. */
#define GC_NDEV 3
#define GC_NKER 3
#define GC_NPROB 4
#define GC_NCFG 40
#define GC_NROWS (GC_NDEV * GC_NKER * GC_NPROB * GC_NCFG)
#define GC_NORPHAN 5

typedef struct gc_row {
    int dev, ker, prob, cfg;
    char status[16];
    double ms;
    int det;
    char key[40];
} gc_row;

static const char *const gc_uuid[GC_NDEV] = {"GPU-g0", "GPU-g1", "GPU-g2"};
static const char *const gc_arch[GC_NDEV] = {"sm_90", "sm_90", "sm_80"};
static const char *const gc_kname[GC_NKER] = {"ga", "ga", "gb"};
static const char *const gc_khash[GC_NKER] = {"h-new", "h-old", "h-new"};

static unsigned long long gc_rng(unsigned long long *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Fills rows (in storing order) from a seed: the test's own record. */
static void gc_rows(gc_row *rows, unsigned long long seed)
{
    int n = 0;
    for (int d = 0; d < GC_NDEV; d++)
        for (int k = 0; k < GC_NKER; k++)
            for (int p = 0; p < GC_NPROB; p++)
                for (int c = 0; c < GC_NCFG; c++) {
                    gc_row *r = &rows[n++];
                    memset(r, 0, sizeof *r);
                    r->dev = d, r->ker = k, r->prob = p, r->cfg = c;
                    unsigned long long x = gc_rng(&seed);
                    /* a configuration's quality carries across sizes and
                     * devices, with noise; determinism is its own */
                    double base = 1.0 + (double)(c * 7919 % GC_NCFG) / 8.0;
                    r->ms = base * (1.0 + (double)(x % 1000003) / 2000006.0);
                    r->det = c % 3 != 0;
                    int fail = (int)((x >> 32) % 10);
                    snprintf(r->status, sizeof r->status, "%s",
                             fail == 0 ? DB_WRONG_RESULT : fail == 1 ? DB_CRASHED :
                             fail == 2 ? DB_ABANDONED : DB_OK);
                    if (c == 0 && p == 0)
                        r->ms = 0.0;             /* ok but never served */
                    snprintf(r->key, sizeof r->key, "%s-%s-%s-C%d", gc_arch[d], gc_kname[k],
                             gc_khash[k], c);
                }
}

/* Writes rows through db_ into a new database at path; "" or why. */
static void gc_make(const char *path, const gc_row *rows, char *why, size_t len)
{
    db *d = NULL;
    char err[512];
    why[0] = '\0';
    if (db_open(&d, path, DB_OPEN_CREATE, err, sizeof err) != AT_OK) {
        snprintf(why, len, "%s", err);
        return;
    }
    for (int i = 0; i < GC_NDEV && !why[0]; i++) {
        at_device_info info;
        memset(&info, 0, sizeof info);
        snprintf(info.uuid, sizeof info.uuid, "%s", gc_uuid[i]);
        info.cc_major = gc_arch[i][3] - '0';
        info.cc_minor = 0;
        if (db_put_device(d, &info, "13.0") != AT_OK)
            snprintf(why, len, "%s", db_errmsg(d));
    }
    char cubin[600];
    for (int i = 0; i < GC_NROWS && !why[0]; i++) {
        const gc_row *g = &rows[i];
        memset(cubin, 'a' + i % 26, sizeof cubin);
        if (db_put_binary(d, g->key, gc_kname[g->ker], gc_khash[g->ker], "C", gc_arch[g->dev],
                          "13.0", "", cubin, sizeof cubin) != AT_OK)
            snprintf(why, len, "%s", db_errmsg(d));
        db_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.device_uuid, sizeof r.device_uuid, "%s", gc_uuid[g->dev]);
        snprintf(r.kernel, sizeof r.kernel, "%s", gc_kname[g->ker]);
        snprintf(r.source_hash, sizeof r.source_hash, "%s", gc_khash[g->ker]);
        r.problem.n_dims = 1;
        r.problem.dims[0] = 1000 << g->prob;
        snprintf(r.config, sizeof r.config, "C=%d", g->cfg);
        snprintf(r.status, sizeof r.status, "%s", g->status);
        r.time_ms = r.time_min_ms = r.time_max_ms = g->ms;
        r.deterministic = g->det;
        snprintf(r.binary_key, sizeof r.binary_key, "%s", g->key);
        if (!why[0] && db_store_result(d, &r) != AT_OK)
            snprintf(why, len, "%s", db_errmsg(d));
    }
    for (int i = 0; i < GC_NORPHAN && !why[0]; i++) {
        char key[40];
        snprintf(key, sizeof key, "orphan-%d", i);
        if (db_put_binary(d, key, "ga", "h-new", "C", "sm_90", "13.0", "", cubin, 100) != AT_OK)
            snprintf(why, len, "%s", db_errmsg(d));
    }
    db_close(d);
}

/* 1 if row i is among the `top` fastest ok rows (det_only: deterministic
 * ones) of its partition: same kernel, source and problem, and the same
 * device (by_arch 0) or architecture (by_arch 1). By a scan of rows. */
static int gc_in_top(const gc_row *rows, int i, int top, int by_arch, int det_only)
{
    const gc_row *a = &rows[i];
#define GC_SERVABLE(r) (strcmp((r)->status, DB_OK) == 0 && (r)->ms > 0 && (!det_only || (r)->det))
    if (!GC_SERVABLE(a))
        return 0;
    int faster = 0;
    for (int j = 0; j < GC_NROWS; j++) {
        const gc_row *b = &rows[j];
        int same = b->ker == a->ker && b->prob == a->prob &&
                   (by_arch ? strcmp(gc_arch[b->dev], gc_arch[a->dev]) == 0 : b->dev == a->dev);
        if (same && GC_SERVABLE(b) && (b->ms < a->ms || (b->ms == a->ms && j < i)))
            faster++;
    }
#undef GC_SERVABLE
    return faster < top;
}

/* The keys gc must keep with keep_recent = 0: a scan of the test's rows. */
static int gc_must_keep(const gc_row *rows, const char *key)
{
    for (int i = 0; i < GC_NROWS; i++)
        if (strcmp(rows[i].key, key) == 0)
            for (int v = 0; v < 4; v++)
                if (gc_in_top(rows, i, LK_PER_PROBLEM, v & 1, v >> 1))
                    return 1;
    return 0;
}

/* The stored cubin keys, read with SQLite itself, "\n"-framed. */
static int gc_keys(const char *path, char *out, size_t len, int *n)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    size_t used = (size_t)snprintf(out, len, "\n");
    *n = 0;
    int ok = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
             sqlite3_prepare_v2(h, "SELECT key FROM binary ORDER BY key", -1, &st,
                                NULL) == SQLITE_OK;
    while (ok && sqlite3_step(st) == SQLITE_ROW && used < len) {
        used += (size_t)snprintf(out + used, len - used, "%s\n", sqlite3_column_text(st, 0));
        (*n)++;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return ok && used < len;
}

static int gc_has_key(const char *keys, const char *key)
{
    char framed[128];
    snprintf(framed, sizeof framed, "\n%.100s\n", key);
    return strstr(keys, framed) != NULL;
}

TEST(storage_gc_keeps_every_best_and_no_other_cubin)
{
    static gc_row rows[GC_NROWS];
    static char before[1 << 18], after[1 << 18], keys[1 << 16], out[1 << 14];
    char path[4400], why[1024], cmd[9000];
    snprintf(path, sizeof path, "%s/gc.db", th_tmpdir());
    gc_rows(rows, 0x9e3779b97f4a7c15ull);
    gc_make(path, rows, why, sizeof why);
    CHECK_MSG(!why[0], "%s", why);
    int intact = 0, n_keys = 0;
    CHECK(st_dump(path, before, sizeof before, &intact) && intact);
    CHECK(gc_keys(path, keys, sizeof keys, &n_keys));
    /* expected: from the test's own rows */
    int n_keep = 0, n_all = 0;
    for (const char *p = keys + 1; *p; p = strchr(p, '\n') + 1) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(strchr(p, '\n') - p), p);
        n_all++;
        n_keep += gc_must_keep(rows, key);
    }
    CHECK_EQ(n_all, n_keys);
    CHECK_MSG(n_keep > 10 && n_keep < n_all - GC_NORPHAN - 10, "keep %d of %d", n_keep, n_all);

    /* --dry-run: counts, changes nothing */
    unsigned long long hash = st_file_hash(path);
    snprintf(cmd, sizeof cmd, "%s/autotune gc --db %s --dry-run --keep-recent 0",
             th_build_dir(), path);
    int rc = st_shell(ST_AS_USER, "/", 0, cmd, out, sizeof out);
    CHECK_MSG(rc == 0, "dry run exit %d: %s", rc, out);
    char want[128];
    snprintf(want, sizeof want, "would delete %d cubins", n_all - n_keep);
    CHECK_MSG(strstr(out, want), "want '%s' in %s", want, out);
    CHECK(st_file_hash(path) == hash);
    CHECK(st_dump(path, after, sizeof after, &intact) && intact);
    CHECK_STR(after, before);

    /* gc: the kept set exactly, every result row unchanged, smaller file */
    long long size_before = st_size(path);
    snprintf(cmd, sizeof cmd, "%s/autotune gc --db %s --keep-recent 0", th_build_dir(), path);
    rc = st_shell(ST_AS_USER, "/", 0, cmd, out, sizeof out);
    CHECK_MSG(rc == 0, "gc exit %d: %s", rc, out);
    printf("%s", out);
    snprintf(want, sizeof want, "deleted %d cubins", n_all - n_keep);
    CHECK_MSG(strstr(out, want) && strstr(out, "after VACUUM"), "want '%s' in %s", want, out);
    CHECK(st_dump(path, after, sizeof after, &intact) && intact);
    /* the result rows: the same lines, up to the first cubin line */
    size_t n_results = (size_t)(strstr(before, "\nbinary ") - before);
    CHECK_EQ(strstr(after, "\nbinary ") - after, (long long)n_results);
    CHECK(strncmp(before, after, n_results) == 0);
    snprintf(want, sizeof want, "\nresult %d|", GC_NROWS);
    CHECK(strstr(before, want));
    snprintf(want, sizeof want, "\nresult %d|", GC_NROWS + 1);
    CHECK(!strstr(before, want));
    static char kept[1 << 16];
    int n_kept = 0;
    CHECK(gc_keys(path, kept, sizeof kept, &n_kept));
    CHECK_EQ(n_kept, n_keep);
    for (const char *p = keys + 1; *p; p = strchr(p, '\n') + 1) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(strchr(p, '\n') - p), p);
        CHECK_MSG(gc_has_key(kept, key) == gc_must_keep(rows, key), "cubin %s: kept %d", key,
                  gc_has_key(kept, key));
    }
    /* every best (fastest, fastest deterministic; per device) keeps its cubin */
    for (int i = 0; i < GC_NROWS; i++)
        for (int det = 0; det < 2; det++)
            if (gc_in_top(rows, i, 1, 0, det))
                CHECK_MSG(gc_has_key(kept, rows[i].key), "best %s lost its cubin", rows[i].key);
    CHECK_MSG(st_size(path) < size_before, "%lld -> %lld bytes", size_before, st_size(path));
}

TEST(storage_gc_keep_recent_and_dry_run_through_db)
{
    static gc_row rows[GC_NROWS];
    static char keys[1 << 16], kept[1 << 16];
    char path[4400], why[1024];
    snprintf(path, sizeof path, "%s/gc.db", th_tmpdir());
    gc_rows(rows, 12345);
    gc_make(path, rows, why, sizeof why);
    CHECK_MSG(!why[0], "%s", why);
    int n_keys = 0, n_kept = 0;
    CHECK(gc_keys(path, keys, sizeof keys, &n_keys));
    /* recent: the 7 newest results (the last rows stored) and the 7 newest
     * cubins (the 5 orphans, then the last two rows' keys, stored again) */
    const int recent = 7;
    db *d = NULL;
    char err[512];
    CHECK_OK(db_open(&d, path, DB_OPEN_EXISTING, err, sizeof err));
    db_gc_stats dry, st;
    CHECK_OK(db_gc_binaries(d, LK_PER_PROBLEM, recent, 1, &dry));
    CHECK_OK(db_gc_binaries(d, LK_PER_PROBLEM, recent, 0, &st));
    db_close(d);
    CHECK(gc_keys(path, kept, sizeof kept, &n_kept));
    int want_best = 0, want_recent = 0;
    for (const char *p = keys + 1; *p; p = strchr(p, '\n') + 1) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(strchr(p, '\n') - p), p);
        int best = gc_must_keep(rows, key), is_recent = strncmp(key, "orphan-", 7) == 0;
        for (int i = GC_NROWS - recent; i < GC_NROWS; i++)
            is_recent |= strcmp(rows[i].key, key) == 0;
        want_best += best;
        want_recent += !best && is_recent;
        CHECK_MSG(gc_has_key(kept, key) == (best || is_recent), "cubin %s", key);
    }
    CHECK_EQ(st.n_best, want_best);
    CHECK_EQ(st.n_recent, want_recent);
    CHECK_EQ(st.n_binaries, n_keys);
    CHECK_EQ(st.n_deleted, n_keys - n_kept);
    CHECK(st.n_deleted > 0 && st.deleted_bytes >= st.n_deleted * 100);
    /* the dry run counted the same and deleted nothing before it */
    CHECK(memcmp(&dry, &st, sizeof st) == 0);
    /* a second gc finds nothing more to delete */
    CHECK_OK(db_open(&d, path, DB_OPEN_EXISTING, err, sizeof err));
    CHECK_OK(db_gc_binaries(d, LK_PER_PROBLEM, recent, 0, &st));
    CHECK_EQ(st.n_deleted, 0);
    db_close(d);
}
