/* merge.c: copying the rows of one tuning database into another
 * (db_merge; cubins are code and are never copied: db_servable_needs names
 * those to compile here), and the row upserts it shares with `autotune
 * import`: on a result key stored in both, the better row is kept. */
#include <stdlib.h>
#include <string.h>
#include "db_internal.h"

/* ---- upserts shared with import.c ---- */

/* The result columns in the order of ?1 .. ?19, ?29 of the upsert. */
#define MERGE_RESULT_COLS \
    "device_id, kernel_id, problem_id, config, status, time_ms, time_min_ms, " \
    "time_max_ms, runs, gflops, gbs, rel_error, compile_ms, binary_key, error, " \
    "deterministic, session_id, created, sustained_ms, rank_ms"

/* A servable row (what db_best and db_candidates read) of table t. */
#define MERGE_SERVABLE(t) "(" t ".status = 'ok' AND " t ".time_ms > 0)"

at_status db_prepare_result_upsert(db *d, sqlite3_stmt **st)
{
    /* the incoming row replaces the stored one only if it is better: a
     * servable row beats one that is not, then a re-timed row (its
     * sustained time is kept) one that is not, then the lower rank
     * (DB_RANK), then the lower median, then the newer, then the smaller
     * text of the remaining fields; a total order, so merging in any order
     * keeps the same row */
    return db_prepare(d, st,
        "INSERT INTO result (" MERGE_RESULT_COLS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
        "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?29) "
        "ON CONFLICT (device_id, kernel_id, problem_id, config) DO UPDATE SET "
        "status = excluded.status, time_ms = excluded.time_ms, "
        "time_min_ms = excluded.time_min_ms, time_max_ms = excluded.time_max_ms, "
        "runs = excluded.runs, gflops = excluded.gflops, gbs = excluded.gbs, "
        "rel_error = excluded.rel_error, compile_ms = excluded.compile_ms, "
        "binary_key = excluded.binary_key, error = excluded.error, "
        "deterministic = excluded.deterministic, session_id = excluded.session_id, "
        "created = excluded.created, sustained_ms = excluded.sustained_ms, "
        "rank_ms = excluded.rank_ms "
        "WHERE " MERGE_SERVABLE("excluded") " > " MERGE_SERVABLE("result") " OR ("
        MERGE_SERVABLE("excluded") " = " MERGE_SERVABLE("result") " AND ("
        "(excluded.rank_ms IS NOT NULL) > (result.rank_ms IS NOT NULL) OR ("
        "(excluded.rank_ms IS NOT NULL) = (result.rank_ms IS NOT NULL) AND ("
        DB_RANK("excluded") " < " DB_RANK("result") " OR (" DB_RANK("excluded") " = "
        DB_RANK("result") " AND ("
        "excluded.time_ms < result.time_ms OR (excluded.time_ms = result.time_ms AND ("
        "excluded.created > result.created OR (excluded.created = result.created AND "
        "printf('%s|%s|%d|%s|%.17g|%.17g|%.17g|%.17g|%d|%.17g', excluded.status, "
        "excluded.error, excluded.runs, excluded.binary_key, excluded.time_min_ms, "
        "excluded.time_max_ms, excluded.gflops + excluded.gbs, excluded.rel_error, "
        "excluded.deterministic, excluded.sustained_ms) < "
        "printf('%s|%s|%d|%s|%.17g|%.17g|%.17g|%.17g|%d|%.17g', result.status, result.error, "
        "result.runs, result.binary_key, result.time_min_ms, result.time_max_ms, "
        "result.gflops + result.gbs, result.rel_error, result.deterministic, "
        "result.sustained_ms))))))))))");
}

at_status db_upsert_device(db *d, const db_device *dev, const char *first_seen,
                           const char *last_seen, long long *id)
{
    const at_device_info *i = &dev->info;
    char arch[16];
    if (i->arch[0])
        db_copy(arch, sizeof arch, i->arch);
    else
        tpl_arch_name(i->cc_major, i->cc_minor, arch, sizeof arch);
    /* the facts of the later sighting win; first_seen is the earliest */
    at_status s = db_write_device(d, i, arch, dev->nvrtc_version, first_seen, last_seen, 1);
    if (s != AT_OK)
        return s;
    sqlite3_stmt *st;
    s = db_prepare(d, &st, "UPDATE device SET first_seen = min(first_seen, ?2) WHERE uuid = ?1");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, i->uuid);
    db_bind_text(st, 2, first_seen);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "recording a device");
    return db_device_id(d, i->uuid, id);
}

at_status db_prepare_binary_insert(db *d, sqlite3_stmt **st)
{
    /* a key names its cubin's whole NVRTC input: the stored one is kept */
    return db_prepare(d, st, "INSERT OR IGNORE INTO binary (key, kernel, source_hash, config, "
                             "arch, nvrtc_version, options, cubin, size, created) VALUES "
                             "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
}

/* ---- id maps: a source id to the destination's ---- */

typedef struct merge_map {
    long long *src, *dst;           /* sorted by src (rows come ORDER BY id) */
    int n, cap;
} merge_map;

static int map_add(merge_map *m, long long src, long long dst)
{
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 64;
        long long *a = realloc(m->src, (size_t)cap * sizeof *a);
        if (!a)
            return 0;
        m->src = a;
        long long *b = realloc(m->dst, (size_t)cap * sizeof *b);
        if (!b)
            return 0;
        m->dst = b;
        m->cap = cap;
    }
    m->src[m->n] = src;
    m->dst[m->n++] = dst;
    return 1;
}

/* The destination id of src, 0 if unmapped. */
static long long map_get(const merge_map *m, long long src)
{
    int lo = 0, hi = m->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (m->src[mid] == src)
            return m->dst[mid];
        if (m->src[mid] < src)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

static void map_free(merge_map *m)
{
    free(m->src);
    free(m->dst);
}

typedef struct merge_ctx {
    db *dst, *src;
    merge_map dev, ses, ker, prob;
    db_merge_stats *st;
} merge_ctx;

/* Prepares sql on the source, failing on dst's handle with src's message. */
static at_status merge_select(merge_ctx *m, sqlite3_stmt **q, const char *sql)
{
    int rc = sqlite3_prepare_v2(m->src->h, sql, -1, q, NULL);
    if (rc != SQLITE_OK) {
        *q = NULL;
        return db_fail(m->dst, db_status_of(rc), "reading %s: %s", m->src->path,
                       sqlite3_errmsg(m->src->h));
    }
    return AT_OK;
}

static at_status merge_read_fail(merge_ctx *m, int rc)
{
    return db_fail(m->dst, db_status_of(rc), "reading %s: %s", m->src->path,
                   sqlite3_errmsg(m->src->h));
}

static at_status merge_devices(merge_ctx *m)
{
    sqlite3_stmt *q;
    at_status s = merge_select(m, &q, "SELECT id, uuid, first_seen, last_seen FROM device "
                                      "ORDER BY id");
    int rc = SQLITE_DONE;
    while (s == AT_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        char uuid[48], first[32], last[32];
        db_col_text(q, 1, uuid, sizeof uuid);
        db_col_text(q, 2, first, sizeof first);
        db_col_text(q, 3, last, sizeof last);
        db_device dev;
        long long id = 0;
        if (db_get_device(m->src, uuid, &dev) != AT_OK) {
            s = db_fail(m->dst, AT_ERR_DB, "reading %s: %s", m->src->path,
                        db_errmsg(m->src));
            break;
        }
        if ((s = db_upsert_device(m->dst, &dev, first, last, &id)) == AT_OK &&
            !map_add(&m->dev, sqlite3_column_int64(q, 0), id))
            s = db_fail(m->dst, AT_ERR_NO_MEMORY, "out of memory merging devices");
        m->st->devices++;
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = merge_read_fail(m, rc);
    sqlite3_finalize(q);
    return s;
}

/* A session of the source: the destination's of the same device, start
 * and command if there is one (a database merged twice), else a copy. */
static at_status merge_session(merge_ctx *m, sqlite3_stmt *q, long long *id)
{
    long long dev = sqlite3_column_type(q, 1) == SQLITE_NULL
                        ? 0 : map_get(&m->dev, sqlite3_column_int64(q, 1));
    sqlite3_stmt *st;
    at_status s = db_prepare(m->dst, &st, "SELECT id FROM session WHERE device_id IS ?1 AND "
                                          "started = ?2 AND command = ?3");
    if (s != AT_OK)
        return s;
    if (dev)
        sqlite3_bind_int64(st, 1, dev);
    else
        sqlite3_bind_null(st, 1);
    sqlite3_bind_value(st, 2, sqlite3_column_value(q, 6));
    sqlite3_bind_value(st, 3, sqlite3_column_value(q, 2));
    int rc = sqlite3_step(st);
    *id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return AT_OK;
    if (rc != SQLITE_DONE)
        return db_sqlfail(m->dst, rc, "looking up a session");
    s = db_prepare(m->dst, &st, "INSERT INTO session (device_id, command, start_facts, "
                                "end_facts, outcome, started, ended) VALUES "
                                "(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (s != AT_OK)
        return s;
    if (dev)
        sqlite3_bind_int64(st, 1, dev);
    else
        sqlite3_bind_null(st, 1);
    for (int k = 2; k <= 7; k++)
        sqlite3_bind_value(st, k, sqlite3_column_value(q, k));
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(m->dst, rc, "copying a session");
    *id = sqlite3_last_insert_rowid(m->dst->h);
    m->st->sessions++;
    return AT_OK;
}

/* Sessions, kernels and problems of the source, each mapped to the
 * destination's row (found or added). */
static at_status merge_keys(merge_ctx *m)
{
    sqlite3_stmt *q;
    at_status s = merge_select(m, &q, "SELECT id, device_id, command, start_facts, end_facts, "
                                      "outcome, started, ended FROM session ORDER BY id");
    int rc = SQLITE_DONE;
    long long id = 0;
    while (s == AT_OK && (rc = sqlite3_step(q)) == SQLITE_ROW)
        if ((s = merge_session(m, q, &id)) == AT_OK &&
            !map_add(&m->ses, sqlite3_column_int64(q, 0), id))
            s = db_fail(m->dst, AT_ERR_NO_MEMORY, "out of memory merging sessions");
    if (s == AT_OK && rc != SQLITE_DONE)
        s = merge_read_fail(m, rc);
    sqlite3_finalize(q);
    if (s == AT_OK)
        s = merge_select(m, &q, "SELECT id, name, source_hash FROM kernel ORDER BY id");
    while (s == AT_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        char name[64], hash[64];
        db_col_text(q, 1, name, sizeof name);
        db_col_text(q, 2, hash, sizeof hash);
        if ((s = db_kernel_id(m->dst, name, hash, &id)) == AT_OK &&
            !map_add(&m->ker, sqlite3_column_int64(q, 0), id))
            s = db_fail(m->dst, AT_ERR_NO_MEMORY, "out of memory merging kernels");
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = merge_read_fail(m, rc);
    sqlite3_finalize(q);
    return s;
}

/* Problems are copied by their raw key columns, so a kind this build does
 * not know keeps its names. */
static at_status merge_problems(merge_ctx *m)
{
    sqlite3_stmt *q, *ins = NULL, *get = NULL;
    at_status s = merge_select(m, &q, "SELECT id, kernel, n_dims, " DB_KEY_COLS
                                      " FROM problem ORDER BY id");
    if (s == AT_OK)
        s = db_prepare(m->dst, &ins, "INSERT INTO problem (kernel, n_dims, " DB_KEY_COLS
                       ") VALUES (?1, ?2, " DB_KEY_VALUES ") ON CONFLICT (kernel, "
                       DB_KEY_COLS ") DO NOTHING");
    if (s == AT_OK)
        s = db_prepare(m->dst, &get, "SELECT id FROM problem p WHERE p.kernel = ?1 AND "
                       DB_PROBLEM_IS("p"));
    int rc = SQLITE_DONE;
    while (s == AT_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        sqlite3_stmt *both[2] = {ins, get};
        for (int b = 0; b < 2; b++) {
            sqlite3_reset(both[b]);
            sqlite3_bind_value(both[b], 1, sqlite3_column_value(q, 1));
            sqlite3_bind_value(both[b], 2, sqlite3_column_value(q, 2));
            for (int k = 0; k < DB_N_KEY_COLS; k++)
                sqlite3_bind_value(both[b], 20 + k, sqlite3_column_value(q, 3 + k));
        }
        int wrc = sqlite3_step(ins);
        if (wrc != SQLITE_DONE) {
            s = db_sqlfail(m->dst, wrc, "copying a problem");
            break;
        }
        wrc = sqlite3_step(get);
        if (wrc != SQLITE_ROW) {
            s = db_sqlfail(m->dst, wrc, "looking up a problem");
            break;
        }
        if (!map_add(&m->prob, sqlite3_column_int64(q, 0), sqlite3_column_int64(get, 0)))
            s = db_fail(m->dst, AT_ERR_NO_MEMORY, "out of memory merging problems");
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = merge_read_fail(m, rc);
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    sqlite3_finalize(get);
    return s;
}

static at_status merge_results(merge_ctx *m)
{
    sqlite3_stmt *q, *up = NULL;
    long long before = 0, after = 0;
    at_status s = db_query_int(m->dst, "SELECT count(*) FROM result", NULL, &before,
                               "counting results");
    if (s == AT_OK)
        s = merge_select(m, &q, "SELECT " MERGE_RESULT_COLS " FROM result ORDER BY id");
    if (s == AT_OK)
        s = db_prepare_result_upsert(m->dst, &up);
    int rc = SQLITE_DONE;
    long long changed = 0;
    while (s == AT_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        long long dev = map_get(&m->dev, sqlite3_column_int64(q, 0));
        long long ker = map_get(&m->ker, sqlite3_column_int64(q, 1));
        long long prob = map_get(&m->prob, sqlite3_column_int64(q, 2));
        if (!dev || !ker || !prob) {
            s = db_fail(m->dst, AT_ERR_DB_CORRUPT, "%s: a result refers to a missing device, "
                        "kernel or problem", m->src->path);
            break;
        }
        sqlite3_reset(up);
        sqlite3_bind_int64(up, 1, dev);
        sqlite3_bind_int64(up, 2, ker);
        sqlite3_bind_int64(up, 3, prob);
        for (int k = 3; k < 19; k++)
            sqlite3_bind_value(up, k + 1, sqlite3_column_value(q, k));
        sqlite3_bind_value(up, 29, sqlite3_column_value(q, 19));       /* rank_ms */
        long long ses = sqlite3_column_type(q, 16) == SQLITE_NULL
                            ? 0 : map_get(&m->ses, sqlite3_column_int64(q, 16));
        if (ses)
            sqlite3_bind_int64(up, 17, ses);
        else
            sqlite3_bind_null(up, 17);
        int wrc = sqlite3_step(up);
        if (wrc != SQLITE_DONE) {
            s = db_sqlfail(m->dst, wrc, "copying a result");
            break;
        }
        changed += sqlite3_changes(m->dst->h);
        m->st->results_read++;
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = merge_read_fail(m, rc);
    sqlite3_finalize(q);
    sqlite3_finalize(up);
    if (s == AT_OK)
        s = db_query_int(m->dst, "SELECT count(*) FROM result", NULL, &after,
                         "counting results");
    if (s == AT_OK) {
        m->st->results_added += after - before;
        m->st->results_replaced += changed - (after - before);
    }
    return s;
}

/* Side measurements (the newer kept, then the lower time); the source's
 * cubins only counted: code from outside is never copied (a lookup's
 * cubin is compiled here, db_servable_needs). */
static at_status merge_measurements(merge_ctx *m)
{
    sqlite3_stmt *q, *ins = NULL;
    at_status s = merge_select(m, &q, "SELECT count(*) FROM binary");
    int rc = SQLITE_DONE;
    if (s == AT_OK && (rc = sqlite3_step(q)) == SQLITE_ROW)
        m->st->cubins_read += sqlite3_column_int64(q, 0);
    else if (s == AT_OK)
        s = merge_read_fail(m, rc);
    sqlite3_finalize(q);
    if (s == AT_OK)
        s = merge_select(m, &q, "SELECT device_id, kernel, n_dims, " DB_KEY_COLS ", name, "
                         "time_ms, gflops, gbs, rel_error, note, created FROM measurement");
    if (s == AT_OK)
        s = db_prepare(m->dst, &ins,
            "INSERT INTO measurement (device_id, kernel, n_dims, " DB_KEY_COLS ", name, "
            "time_ms, gflops, gbs, rel_error, note, created) VALUES (?1, ?2, ?3, "
            DB_KEY_VALUES ", ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (device_id, kernel, "
            DB_KEY_COLS ", name) DO UPDATE SET n_dims = excluded.n_dims, "
            "time_ms = excluded.time_ms, gflops = excluded.gflops, gbs = excluded.gbs, "
            "rel_error = excluded.rel_error, note = excluded.note, created = excluded.created "
            "WHERE excluded.created > measurement.created OR (excluded.created = "
            "measurement.created AND excluded.time_ms < measurement.time_ms)");
    while (s == AT_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, map_get(&m->dev, sqlite3_column_int64(q, 0)));
        sqlite3_bind_value(ins, 2, sqlite3_column_value(q, 1));
        sqlite3_bind_value(ins, 3, sqlite3_column_value(q, 2));
        for (int k = 0; k < DB_N_KEY_COLS; k++)
            sqlite3_bind_value(ins, 20 + k, sqlite3_column_value(q, 3 + k));
        for (int k = 0; k < 7; k++)
            sqlite3_bind_value(ins, 4 + k, sqlite3_column_value(q, 3 + DB_N_KEY_COLS + k));
        int wrc = sqlite3_step(ins);
        if (wrc != SQLITE_DONE)
            s = db_sqlfail(m->dst, wrc, "copying a measurement");
        m->st->measurements++;
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = merge_read_fail(m, rc);
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    return s;
}

at_status db_merge(db *dst, db *src, db_merge_stats *stats)
{
    if (!dst || !src)
        return dst ? db_fail(dst, AT_ERR_INVALID_ARG, "db_merge: NULL source")
                   : AT_ERR_INVALID_ARG;
    db_merge_stats local;
    merge_ctx m;
    memset(&m, 0, sizeof m);
    memset(&local, 0, sizeof local);
    m.dst = dst;
    m.src = src;
    m.st = stats ? stats : &local;
    at_status s = db_check_writable(dst, "merging into a database");
    if (s != AT_OK)
        return s;
    if (dst == src || strcmp(dst->path, src->path) == 0)
        return db_fail(dst, AT_ERR_INVALID_ARG, "cannot merge %s into itself", dst->path);
    /* a consistent snapshot of the source for the whole copy */
    int rc = sqlite3_exec(src->h, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return merge_read_fail(&m, rc);
    if ((s = db_begin(dst)) == AT_OK) {
        if ((s = merge_devices(&m)) != AT_OK || (s = merge_keys(&m)) != AT_OK ||
            (s = merge_problems(&m)) != AT_OK || (s = merge_results(&m)) != AT_OK ||
            (s = merge_measurements(&m)) != AT_OK)
            db_rollback(dst);
        else
            s = db_commit(dst);
    }
    sqlite3_exec(src->h, "COMMIT", NULL, NULL, NULL);
    map_free(&m.dev);
    map_free(&m.ses);
    map_free(&m.ker);
    map_free(&m.prob);
    return s;
}

/* ---- the cubins a lookup serves, to compile here ---- */

/* The configurations of the results a lookup can serve, as gc's keep set
 * ranks them (db/gc.c): per device, kernel (name and source) and problem,
 * and per arch, kernel and problem, the ?1 fastest ok results, of all and
 * of the deterministic ones. */
#define MERGE_SERVED \
    "WITH ok AS (SELECT r.id, r.config, k.name, k.source_hash, d.arch, " DB_RANK("r") \
    " AS rank_key, r.deterministic AS det, r.device_id, r.kernel_id, r.problem_id " \
    "FROM result r JOIN device d ON d.id = r.device_id JOIN kernel k ON k.id = r.kernel_id " \
    "WHERE r.status = 'ok' AND r.time_ms > 0), " \
    "ranked AS (SELECT name, source_hash, config, arch, det, " \
    "ROW_NUMBER() OVER (PARTITION BY device_id, kernel_id, problem_id " \
    "ORDER BY rank_key, id) AS by_dev, " \
    "ROW_NUMBER() OVER (PARTITION BY arch, kernel_id, problem_id " \
    "ORDER BY rank_key, id) AS by_arch, " \
    "ROW_NUMBER() OVER (PARTITION BY device_id, kernel_id, problem_id, det " \
    "ORDER BY rank_key, id) AS by_dev_det, " \
    "ROW_NUMBER() OVER (PARTITION BY arch, kernel_id, problem_id, det " \
    "ORDER BY rank_key, id) AS by_arch_det FROM ok) " \
    "SELECT DISTINCT name, source_hash, config, arch FROM ranked WHERE by_dev <= ?1 OR " \
    "by_arch <= ?1 OR (det = 1 AND (by_dev_det <= ?1 OR by_arch_det <= ?1)) " \
    "ORDER BY name, config, arch"

at_status db_servable_needs(db *d, int per_problem, db_import_need **out, int *count)
{
    if (!d || !out || !count || per_problem < 1)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_servable_needs: bad argument")
                 : AT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    sqlite3_stmt *q;
    at_status s = db_prepare(d, &q, MERGE_SERVED);
    if (s != AT_OK)
        return s;
    sqlite3_bind_int(q, 1, per_problem);
    db_import_need *needs = NULL;
    int n = 0, cap = 0, rc = SQLITE_DONE;
    while (s == AT_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        char name[64], hash[64], arch[16], err[256];
        db_import_need nd;
        memset(&nd, 0, sizeof nd);
        db_col_text(q, 0, name, sizeof name);
        db_col_text(q, 1, hash, sizeof hash);
        db_col_text(q, 2, nd.config, sizeof nd.config);
        db_col_text(q, 3, arch, sizeof arch);
        nd.fam = tpl_find(name);
        /* another source's or an unknown kernel's rows are never served */
        if (!nd.fam || strcmp(hash, tpl_source_hash(nd.fam)) != 0 ||
            tpl_config_parse(nd.fam, nd.config, nd.cfg, err, sizeof err) != AT_OK ||
            !tpl_target_arch(nd.fam, nd.cfg, arch))
            continue;
        tpl_config_format(nd.fam, nd.cfg, nd.config, sizeof nd.config);
        db_copy(nd.arch, sizeof nd.arch, arch);
        tpl_binary_key(nd.fam, nd.cfg, arch, nd.key, sizeof nd.key);
        int dup = 0;
        for (int k = 0; k < n && !dup; k++)
            dup = strcmp(needs[k].key, nd.key) == 0;
        int have = dup ? 1 : db_has_binary(d, nd.key);
        if (have < 0) {
            s = AT_ERR_DB;
            break;
        }
        if (have)
            continue;
        if (n == cap) {
            int bigger = cap ? cap * 2 : 64;
            db_import_need *a = realloc(needs, (size_t)bigger * sizeof *a);
            if (!a) {
                s = db_fail(d, AT_ERR_NO_MEMORY, "out of memory listing cubins");
                break;
            }
            needs = a;
            cap = bigger;
        }
        needs[n++] = nd;
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = db_sqlfail(d, rc, "listing the cubins a lookup serves");
    sqlite3_finalize(q);
    if (s != AT_OK) {
        free(needs);
        return s;
    }
    *out = needs;
    *count = n;
    return AT_OK;
}
