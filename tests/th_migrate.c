/* th_migrate.c: fixtures of the schema and kind tests (test_migrate.c, test_kinds.c): a query's
 * rows as text, the fake worker's device, a family that takes every kind, its results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "th_migrate.h"
#include "tpl.h"

/* The rows of a query as one malloc'd text ('|' between columns, '\n'
 * after rows); NULL on failure. */
char *tm_text(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    char *out = NULL;
    size_t len = 0, cap = 0;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(h);
        return NULL;
    }
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK;
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            const char *v = (const char *)sqlite3_column_text(st, c);
            size_t n = strlen(v ? v : "NULL") + 2;
            if (len + n + 1 > cap) {
                cap = (len + n + 1) * 2;
                char *bigger = realloc(out, cap);
                if (!bigger) {
                    ok = 0;
                    break;
                }
                out = bigger;
            }
            len += (size_t)sprintf(out + len, "%s%c", v ? v : "NULL",
                                   c + 1 < sqlite3_column_count(st) ? '|' : '\n');
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out ? out : calloc(1, 1);
}

/* The fake worker's device (tuner/worker.c of the release) under uuid. */
at_device_info tm_device(const char *uuid)
{
    at_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    snprintf(d.name, sizeof d.name, "Fake GPU (autotune tests)");
    snprintf(d.arch, sizeof d.arch, "sm_90");
    d.cc_major = 9;
    d.sm_count = 132;
    d.smem_per_block_optin = 227 << 10;
    d.smem_per_sm = 228 << 10;
    d.regs_per_block = d.regs_per_sm = 65536;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    return d;
}

/* A family that takes every kind (no applicable()): only the database and
 * the lookup can keep kinds apart. */
static int tm_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    (void)cfg, (void)dev, (void)why, (void)len;
    return 1;
}

static int tm_accepts(const tpl_problem *p)
{
    (void)p;
    return 1;
}

const tpl_family tm_any_kind = {
    .name = "tm_any_kind", .source = "reference.cu", .fixed_options = "",
    .n_dims = 3, .dim_names = {"m", "n", "k"},
    .n_params = 1, .params = {{"A", 9, {1, 2, 3, 4, 5, 6, 7, 8, 9}, "which row won"}},
    .valid = tm_valid, .accepts = tm_accepts, .epilogues = 1,
    .default_config = "A=9",
};

tpl_problem tm_problem(const char *text)
{
    tpl_problem p;
    char err[256];
    if (tpl_problem_parse(text, &p, err, sizeof err) != AT_OK)
        th_fail(__FILE__, __LINE__, "%s: %s", text, err);
    return p;
}

at_status tm_store(db *d, const char *uuid, const char *size, const char *config,
                          double ms)
{
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", uuid);
    snprintf(r.kernel, sizeof r.kernel, "%s", tm_any_kind.name);
    snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(&tm_any_kind));
    r.problem = tm_problem(size);
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.status, sizeof r.status, "%s", DB_OK);
    r.time_ms = r.time_min_ms = r.time_max_ms = ms;
    r.runs = 3;
    r.deterministic = 1;
    return db_store_result(d, &r);
}
