/* test_kinds.c: CPU tests that kinds never serve each other: element type, math, ops, order,
 * batch class and epilogue each keep their stored winners apart in the database and the lookup,
 * measurements included. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "th_sql.h"
#include "lookup.h"
#include "tpl.h"
#include "th_migrate.h"

/* ---- kinds never serve each other ---- */

/* A lookup and what it must find: the level and the configuration stored for the kind. */
typedef struct tk_case {
    const char *size;               /* the problem's text form */
    at_lookup_level level;
    const char *config;
} tk_case;

/* Each case looked up on dev, then on other (a device of the architecture, another model):
 * the same configuration, one level down (ARCH), where dev finds a stored one. 0 after
 * failing the test at the first case that differs. */
static int tk_lookups(db *d, const at_device_info *dev, const at_device_info *other,
                      const tk_case *cases, size_t n)
{
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    for (size_t i = 0; i < n; i++) {
        tpl_problem q = tm_problem(cases[i].size);
        at_lookup_level lv = lk_choose(d, dev, &tm_any_kind, &q, 0, cfg, config);
        if (lv != cases[i].level || strcmp(config, cases[i].config) != 0) {
            th_fail(__FILE__, __LINE__, "%s: level %d %s, expected level %d %s",
                    cases[i].size, lv, config, cases[i].level, cases[i].config);
            return 0;
        }
        if (cases[i].level == AT_LOOKUP_DEFAULT)
            continue;
        lv = lk_choose(d, other, &tm_any_kind, &q, 0, cfg, config);
        if (lv != AT_LOOKUP_ARCH || strcmp(config, cases[i].config) != 0) {
            th_fail(__FILE__, __LINE__, "%s on another device: level %d %s", cases[i].size, lv,
                    config);
            return 0;
        }
    }
    return 1;
}

TEST(kinds_never_serve_each_other)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/kinds.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    at_device_info dev = tm_device("GPU-kinds"), other = tm_device("GPU-other");
    snprintf(other.name, sizeof other.name, "Fake GPU, another model");   /* a model is one */
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    CHECK_OK(db_put_device(d, &other, "13.0"));
    /* every other kind is faster at the same sizes: a kind-blind lookup
     * would take it */
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024", "A=1", 5.0));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:bf16", "A=2", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:col:NT", "A=3", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:b8", "A=4", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:tf32", "A=5", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "1000x1000x1000:bf16", "A=6", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "1000x1000x1000:col:NT", "A=7", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "4096x4096x4096", "A=8", 1.0));
    /* stored and read back whole, readable in SQL */
    db_result *rs = NULL;
    int n = 0;
    CHECK_OK(db_results(d, dev.uuid, tm_any_kind.name, &rs, &n));
    CHECK_EQ(n, 8);
    static const char *const texts[] = {
        "1024x1024x1024", "1024x1024x1024:bf16", "1024x1024x1024:col:NT", "1024x1024x1024:b8",
        "1024x1024x1024:tf32", "1000x1000x1000:bf16", "1000x1000x1000:col:NT", "4096x4096x4096",
    };
    for (int i = 0; i < n; i++) {
        char text[64];
        tpl_problem_format(&rs[i].problem, text, sizeof text);
        CHECK_STR(text, texts[i]);
    }
    free(rs);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE dtype = 'bf16' AND math = '' AND "
                              "layout = 'row' AND batch = 1"), 2);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE op_a = 'N' AND op_b = 'T' AND "
                              "layout = 'col'"), 2);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE math = 'tf32' AND "
                              "dtype = 'f32'"), 1);
    CHECK_EQ(th_sql_int(path, "SELECT batch FROM problem WHERE batch <> 1"), 8);

    static const tk_case cases[] = {
        /* exact: the row of this kind, never a faster one of another */
        {"1024x1024x1024", AT_LOOKUP_EXACT, "A=1"},
        {"1024x1024x1024:bf16", AT_LOOKUP_EXACT, "A=2"},
        {"1024x1024x1024:col:NT", AT_LOOKUP_EXACT, "A=3"},
        {"1024x1024x1024:b8", AT_LOOKUP_EXACT, "A=4"},
        {"1024x1024x1024:tf32", AT_LOOKUP_EXACT, "A=5"},
        /* nearest: among problems of the kind only */
        {"1000x1000x1000", AT_LOOKUP_NEAREST, "A=1"},       /* not bf16's or NT's 1000^3 */
        {"1100x1100x1100:bf16", AT_LOOKUP_NEAREST, "A=2"},  /* 1024^3 is nearer than 1000^3 */
        {"1010x1010x1010:bf16", AT_LOOKUP_NEAREST, "A=6"},
        {"3000x3000x3000", AT_LOOKUP_NEAREST, "A=8"},
        {"1024x1024x1024:b6", AT_LOOKUP_NEAREST, "A=4"},    /* batch 8 nearer than batch 1 */
        {"1024x1024x1024:b2", AT_LOOKUP_NEAREST, "A=4"},    /* batches serve batches only */
        {"1024x1024x1024:TN:col", AT_LOOKUP_DEFAULT, "A=9"},    /* no TN tuned */
        {"1024x1024x1024:f16", AT_LOOKUP_DEFAULT, "A=9"},
        {"1024x1024x1024:row:NT", AT_LOOKUP_DEFAULT, "A=9"},
    };
    if (!tk_lookups(d, &dev, &other, cases, sizeof cases / sizeof cases[0]))
        return;
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];

    /* the queries themselves */
    db_result best;
    tpl_problem q = tm_problem("1024x1024x1024:bf16");
    CHECK_OK(db_best(d, dev.uuid, tm_any_kind.name, NULL, &q, 0, &best));
    CHECK_STR(best.config, "A=2");
    CHECK(tpl_problem_equal(&best.problem, &q));
    q = tm_problem("1000x1000x1000");
    CHECK_EQ(db_best(d, dev.uuid, tm_any_kind.name, NULL, &q, 0, &best), AT_ERR_NOT_FOUND);
    CHECK_EQ(db_has_result(d, dev.uuid, tm_any_kind.name, NULL, &q, "A=6"), 0);
    q = tm_problem("1000x1000x1000:bf16");
    CHECK_EQ(db_has_result(d, dev.uuid, tm_any_kind.name, NULL, &q, "A=6"), 1);
    q.batch = 1;                                /* 0 and 1: one product */
    CHECK_EQ(db_has_result(d, dev.uuid, tm_any_kind.name, NULL, &q, "A=6"), 1);
    q.batch = 2;
    CHECK_EQ(db_has_result(d, dev.uuid, tm_any_kind.name, NULL, &q, "A=6"), 0);
    static const struct { const char *kind; int count; } kinds[] = {
        {"1x1x1", 3}, {"1x1x1:bf16", 2}, {"1x1x1:col:NT", 2}, {"1x1x1:tf32", 1},
        {"1x1x1:f64", 0}, {"1x1x1:b5", 3},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        q = tm_problem(kinds[i].kind);
        CHECK_OK(db_candidates(d, dev.uuid, NULL, tm_any_kind.name, NULL, &q, 0, 0, &rs, &n));
        int ok = n == kinds[i].count;
        for (int k = 0; k < n; k++)
            ok &= tpl_problem_same_kind(&rs[k].problem, &q);
        free(rs);
        CHECK_MSG(ok, "candidates of kind %s: %d, expected %d", kinds[i].kind, n,
                  kinds[i].count);
    }
    CHECK_OK(db_candidates(d, dev.uuid, NULL, tm_any_kind.name, NULL, NULL, 0, 0, &rs, &n));
    free(rs);
    CHECK_EQ(n, 8);

    /* a problem whose kind has no name is refused, not stored as another */
    db_result bad;
    memset(&bad, 0, sizeof bad);
    snprintf(bad.device_uuid, sizeof bad.device_uuid, "%s", dev.uuid);
    snprintf(bad.kernel, sizeof bad.kernel, "%s", tm_any_kind.name);
    bad.problem = tm_problem("8x8x8");
    bad.problem.dtype = (at_dtype)77;
    snprintf(bad.config, sizeof bad.config, "A=1");
    snprintf(bad.status, sizeof bad.status, "%s", DB_OK);
    CHECK_EQ(db_store_result(d, &bad), AT_ERR_INVALID_ARG);
    db_close(d);

    /* a kind written by a later release reads as unknown and serves no one */
    CHECK_EQ(th_sql_exec(path, "INSERT INTO problem (kernel, n_dims, d0, d1, d2, dtype) VALUES "
                               "('tm_any_kind', 3, 1000, 1000, 1000, 'f8e4m3');"
                               "INSERT INTO result (device_id, kernel_id, problem_id, config, "
                               "status, time_ms, created) SELECT d.id, k.id, "
                               "last_insert_rowid(), 'A=7', 'ok', 0.001, 'x' "
                               "FROM device d, kernel k "
                               "WHERE d.uuid = 'GPU-kinds' AND k.name = 'tm_any_kind'"), SQLITE_OK);
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    CHECK_OK(db_results(d, dev.uuid, tm_any_kind.name, &rs, &n));
    int unknown = n == 9 && rs[8].problem.dtype == (at_dtype)TPL_KIND_UNKNOWN;
    free(rs);
    CHECK(unknown);
    q = tm_problem("1000x1000x1000");
    CHECK_EQ(lk_choose(d, &dev, &tm_any_kind, &q, 0, cfg, config), AT_LOOKUP_NEAREST);
    CHECK_STR(config, "A=1");
    db_close(d);
}

TEST(kinds_in_measurements)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/m.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    at_device_info dev = tm_device("GPU-m");
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    static const char *const sizes[] = {"4096x4096x4096", "4096x4096x4096:bf16",
                                        "4096x4096x4096:tf32", "4096x4096x4096:col:TT:b3"};
    for (int i = 0; i < 4; i++) {
        db_measurement m;
        memset(&m, 0, sizeof m);
        snprintf(m.device_uuid, sizeof m.device_uuid, "%s", dev.uuid);
        snprintf(m.kernel, sizeof m.kernel, "matmul");
        snprintf(m.name, sizeof m.name, "cublas");
        m.problem = tm_problem(sizes[i]);
        m.gflops = 1000.0 * (i + 1);
        CHECK_OK(db_put_measurement(d, &m));
    }
    db_measurement *ms = NULL;
    int n = 0;
    CHECK_OK(db_measurements(d, NULL, "matmul", &ms, &n));
    CHECK_EQ(n, 4);
    for (int i = 0; i < 4; i++) {
        tpl_problem want = tm_problem(sizes[i]);
        int k = 0;
        while (k < n && !tpl_problem_equal(&ms[k].problem, &want))
            k++;
        CHECK_MSG(k < n && ms[k].gflops == 1000.0 * (i + 1), "%s not read back", sizes[i]);
    }
    free(ms);
    db_close(d);
}

/* Epilogue kinds never serve each other nor the plain kind, at any lookup level, and a
 * measurement (the vendor's) of one is never another's. */
TEST(kinds_epilogues_never_serve_each_other)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/epi.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    at_device_info dev = tm_device("GPU-epi"), other = tm_device("GPU-epi-other");
    snprintf(other.name, sizeof other.name, "Fake GPU, another model");
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    CHECK_OK(db_put_device(d, &other, "13.0"));
    /* each epilogue's row is faster than the plain one: a kind-blind lookup would take it */
    CHECK_OK(tm_store(d, dev.uuid, "4096x4096x4096:bf16", "A=1", 5.0));
    CHECK_OK(tm_store(d, dev.uuid, "4096x4096x4096:bf16:bias_col:gelu", "A=2", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "4096x4096x4096:bf16:bias_row:gelu", "A=3", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "4096x4096x4096:bf16:relu", "A=4", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "4096x4096x4096:bf16:gelu_erf", "A=5", 1.0));
    static const tk_case cases[] = {
        {"4096x4096x4096:bf16", AT_LOOKUP_EXACT, "A=1"},
        {"4096x4096x4096:bf16:bias_col:gelu", AT_LOOKUP_EXACT, "A=2"},
        {"4096x4096x4096:bf16:bias_row:gelu", AT_LOOKUP_EXACT, "A=3"},
        {"4096x4096x4096:bf16:relu", AT_LOOKUP_EXACT, "A=4"},
        {"4096x4096x4096:bf16:gelu_erf", AT_LOOKUP_EXACT, "A=5"},
        {"4000x4000x4000:bf16", AT_LOOKUP_NEAREST, "A=1"},
        {"4000x4000x4000:bf16:bias_col:gelu", AT_LOOKUP_NEAREST, "A=2"},
        {"4000x4000x4000:bf16:relu", AT_LOOKUP_NEAREST, "A=4"},
        {"4096x4096x4096:bf16:gelu", AT_LOOKUP_DEFAULT, "A=9"},          /* none tuned */
        {"4096x4096x4096:bf16:bias_col", AT_LOOKUP_DEFAULT, "A=9"},
        {"4096x4096x4096:bf16:bias_col:relu", AT_LOOKUP_DEFAULT, "A=9"},
        {"4096x4096x4096:f16:bias_col:gelu", AT_LOOKUP_DEFAULT, "A=9"},
    };
    if (!tk_lookups(d, &dev, &other, cases, sizeof cases / sizeof cases[0]))
        return;
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    /* read back whole, and as text in SQL */
    db_result *rs = NULL;
    int n = 0;
    CHECK_OK(db_results(d, dev.uuid, tm_any_kind.name, &rs, &n));
    CHECK_EQ(n, 5);
    int seen = 0;
    for (int i = 0; i < n; i++)
        seen |= 1 << rs[i].problem.epilogue;
    free(rs);
    CHECK_EQ(seen, 1 << 0 | 1 << TPL_EPI(TPL_BIAS_COL, 2) | 1 << TPL_EPI(TPL_BIAS_ROW, 2) |
                   1 << 1 | 1 << 3);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE epilogue IN "
                              "('bias_col:gelu', 'bias_row:gelu', 'relu', 'gelu_erf', '')"), 5);
    /* a measurement of an epilogue problem is read back as its own */
    db_measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.device_uuid, sizeof m.device_uuid, "%s", dev.uuid);
    snprintf(m.kernel, sizeof m.kernel, "%s", tm_any_kind.name);
    snprintf(m.name, sizeof m.name, "cublaslt");
    m.problem = tm_problem("4096x4096x4096:bf16:bias_col:gelu");
    m.time_ms = 1.0;
    CHECK_OK(db_put_measurement(d, &m));
    m.problem = tm_problem("4096x4096x4096:bf16");
    m.time_ms = 2.0;
    CHECK_OK(db_put_measurement(d, &m));
    db_measurement *ms = NULL;
    CHECK_OK(db_measurements(d, dev.uuid, tm_any_kind.name, &ms, &n));
    CHECK_EQ(n, 2);
    for (int i = 0; i < n; i++)
        CHECK(ms[i].time_ms == (ms[i].problem.epilogue ? 1.0 : 2.0));
    free(ms);
    /* an epilogue written by a later release reads as unknown and serves no one */
    db_close(d);
    CHECK_EQ(th_sql_exec(path, "UPDATE problem SET epilogue = 'bias_col:swiglu' "
                               "WHERE epilogue = 'relu'"), SQLITE_OK);
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    tpl_problem q = tm_problem("4096x4096x4096:bf16:relu");
    CHECK_EQ(lk_choose(d, &dev, &tm_any_kind, &q, 0, cfg, config), AT_LOOKUP_DEFAULT);
    CHECK_OK(db_results(d, dev.uuid, tm_any_kind.name, &rs, &n));
    int unknown = 0;
    for (int i = 0; i < n; i++)
        unknown += rs[i].problem.epilogue == TPL_KIND_UNKNOWN;
    free(rs);
    CHECK_EQ(unknown, 1);
    db_close(d);
}
