/* test_db.c: CPU-tier tests of the tuning database (db/): round trips of every table, unique
 * results, best and candidate queries, resume (the file itself: test_db_files.c). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "th_db.h"
#include "th_sql.h"

/* ---- tests ---- */

TEST(db_round_trip_every_table)
{
    char dir[4200], path[4300], err[512];
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(path, sizeof path, "%s/deep/er/tuning.db", dir);
    db *d = NULL;
    CHECK_EQ(db_open(&d, path, 0, err, sizeof err), AT_ERR_NOT_FOUND);
    CHECK(!tdb_exists(path));
    CHECK_MSG(db_open(&d, path, 1, err, sizeof err) == AT_OK, "open: %s", err);
    CHECK(!db_is_readonly(d));

    at_device_info info;
    tdb_device(&info, "GPU-12345678-abcd-ef01-2345-6789abcdef01", "NVIDIA H100 80GB HBM3", 9, 0);
    CHECK_OK(db_put_device(d, &info, "13.0"));
    long long sid = 0;
    long long open = -1;
    CHECK_OK(db_open_sessions(d, &open));
    CHECK_EQ(open, 0);
    CHECK_OK(db_begin_session(d, info.uuid, "autotune --device 0", "{\"clock\":1980}", &sid));
    CHECK(sid > 0);
    CHECK_OK(db_open_sessions(d, &open));
    CHECK_EQ(open, 1);

    db_result r;
    tdb_result(&r, info.uuid, "matmul", "0123456789abcdef", tdb_problem(3, 1000, 999, 1001),
               "TILE=16,UNROLL=4", DB_OK, 1.25, 1);
    r.session_id = sid;
    r.time_min_ms = 1.125;
    r.time_max_ms = 1.5;
    r.runs = 42;
    r.gflops = 1597.5;
    r.gbs = 12.5;
    r.rel_error = 3.5e-7;
    r.compile_ms = 88.25;
    snprintf(r.binary_key, sizeof r.binary_key, "%s", "key-0001");
    snprintf(r.error, sizeof r.error, "%s", "");
    CHECK_OK(db_store_result(d, &r));
    CHECK(r.id > 0);
    /* created: UTC ISO 8601 with milliseconds. */
    CHECK_EQ(strlen(r.created), 24);
    CHECK(r.created[4] == '-' && r.created[10] == 'T' && r.created[19] == '.' &&
          r.created[23] == 'Z');

    db_result bad;
    tdb_result(&bad, info.uuid, "matmul", "0123456789abcdef", tdb_problem(3, 1000, 999, 1001),
               "TILE=32,UNROLL=8", DB_COMPILE_ERROR, 0, 0);
    snprintf(bad.error, sizeof bad.error, "%s", "line 1\nline 2: error: too many resources\t(x)");
    bad.rel_error = -1;
    bad.session_id = sid;
    CHECK_OK(db_store_result(d, &bad));

    unsigned char blob[300];
    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (unsigned char)((i * 37) & 0xff);
    blob[0] = 0x7f;
    blob[1] = 0;
    blob[2] = 0;
    blob[299] = 0;
    CHECK_OK(db_put_binary(d, "key-0001", "matmul", "0123456789abcdef", r.config, "sm_90",
                           "13.0", "-arch=sm_90 -DTILE=16", blob, sizeof blob));

    db_measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.device_uuid, sizeof m.device_uuid, "%s", info.uuid);
    snprintf(m.kernel, sizeof m.kernel, "%s", "matmul");
    m.problem = tdb_problem(3, 1000, 999, 1001);
    snprintf(m.name, sizeof m.name, "%s", "cublas");
    m.time_ms = 0.5;
    m.gflops = 3990.25;
    m.rel_error = 1e-6;
    snprintf(m.note, sizeof m.note, "%s", "cublasSgemm, row-major via transpose");
    CHECK_OK(db_put_measurement(d, &m));
    CHECK_EQ(strlen(m.created), 24);
    CHECK_OK(db_end_session(d, sid, "{\"clock\":1900}", "completed"));
    CHECK_OK(db_open_sessions(d, &open));
    CHECK_EQ(open, 0);
    CHECK_EQ(db_end_session(d, sid + 100, "", "x"), AT_ERR_NOT_FOUND);
    db_close(d);

    /* The file is WAL, our schema version, marked as ours. */
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM meta WHERE key = 'created_by' "
                              "AND value = 'autotune'"), 1);
    CHECK_EQ(th_sql_int(path, "SELECT value FROM meta WHERE key = 'schema_version'"),
             DB_SCHEMA_VERSION);
    {
        size_t n = 0;
        unsigned char *bytes = tdb_slurp(path, &n);
        CHECK(bytes && n >= 100);
        int wal = bytes[18] == 2 && bytes[19] == 2;    /* header: WAL versions */
        free(bytes);
        CHECK_MSG(wal, "database header is not in WAL mode");
    }
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM session WHERE outcome = 'completed' "
                              "AND ended IS NOT NULL"), 1);

    CHECK_MSG(db_open(&d, path, 0, err, sizeof err) == AT_OK, "reopen: %s", err);
    db_device dv;
    CHECK_OK(db_get_device(d, info.uuid, &dv));
    CHECK_STR(dv.info.name, info.name);
    CHECK_STR(dv.info.uuid, info.uuid);
    CHECK_STR(dv.info.arch, "sm_90");
    CHECK_STR(dv.nvrtc_version, "13.0");
    CHECK_EQ(dv.info.ordinal, info.ordinal);
    CHECK_EQ(dv.info.cc_major, 9);
    CHECK_EQ(dv.info.cc_minor, 0);
    CHECK_EQ(dv.info.sm_count, info.sm_count);
    CHECK_EQ(dv.info.memory_bytes, info.memory_bytes);
    CHECK_EQ(dv.info.l2_bytes, info.l2_bytes);
    CHECK_EQ(dv.info.smem_per_block_optin, info.smem_per_block_optin);
    CHECK_EQ(dv.info.smem_per_sm, info.smem_per_sm);
    CHECK_EQ(dv.info.regs_per_block, info.regs_per_block);
    CHECK_EQ(dv.info.regs_per_sm, info.regs_per_sm);
    CHECK_EQ(dv.info.max_threads_per_block, info.max_threads_per_block);
    CHECK_EQ(dv.info.max_threads_per_sm, info.max_threads_per_sm);
    CHECK_EQ(dv.info.clock_khz, info.clock_khz);
    CHECK_EQ(dv.info.mem_clock_khz, info.mem_clock_khz);
    CHECK_EQ(dv.info.mem_bus_bits, info.mem_bus_bits);
    CHECK_EQ(dv.info.driver_version, info.driver_version);
    CHECK_EQ(db_get_device(d, "GPU-none", &dv), AT_ERR_NOT_FOUND);

    db_device *devs = NULL;
    int nd = 0;
    CHECK_OK(db_list_devices(d, &devs, &nd));
    CHECK_EQ(nd, 1);
    CHECK_STR(devs[0].info.uuid, info.uuid);
    free(devs);

    db_result *rs = NULL;
    int n = 0;
    CHECK_OK(db_results(d, info.uuid, "matmul", &rs, &n));
    CHECK_EQ(n, 2);
    const db_result *g = &rs[0];
    CHECK_EQ(g->id, r.id);
    CHECK_EQ(g->session_id, sid);
    CHECK_STR(g->device_uuid, info.uuid);
    CHECK_STR(g->kernel, "matmul");
    CHECK_STR(g->source_hash, "0123456789abcdef");
    CHECK_EQ(g->problem.n_dims, 3);
    CHECK_EQ(g->problem.dims[0], 1000);
    CHECK_EQ(g->problem.dims[1], 999);
    CHECK_EQ(g->problem.dims[2], 1001);
    CHECK_STR(g->config, "TILE=16,UNROLL=4");
    CHECK_STR(g->status, DB_OK);
    CHECK(g->time_ms == 1.25 && g->time_min_ms == 1.125 && g->time_max_ms == 1.5);
    CHECK_EQ(g->runs, 42);
    CHECK(g->gflops == 1597.5 && g->gbs == 12.5);
    CHECK(g->rel_error == 3.5e-7);
    CHECK(g->compile_ms == 88.25);
    CHECK_STR(g->binary_key, "key-0001");
    CHECK_STR(g->error, "");
    CHECK_STR(g->created, r.created);
    CHECK_EQ(g->deterministic, 1);
    CHECK_STR(rs[1].status, DB_COMPILE_ERROR);
    CHECK_STR(rs[1].error, bad.error);
    CHECK(rs[1].rel_error == -1);
    CHECK_EQ(rs[1].deterministic, 0);
    CHECK(strcmp(rs[0].created, rs[1].created) <= 0);
    free(rs);
    CHECK_OK(db_results(d, NULL, "sum", &rs, &n));
    CHECK_EQ(n, 0);
    free(rs);

    void *cubin = NULL;
    size_t size = 0;
    CHECK_OK(db_get_binary(d, "key-0001", &cubin, &size));
    CHECK_EQ(size, sizeof blob);
    CHECK(memcmp(cubin, blob, sizeof blob) == 0);
    free(cubin);
    CHECK_EQ(db_get_binary(d, "key-none", &cubin, &size), AT_ERR_NOT_FOUND);

    db_measurement *ms = NULL;
    int nm = 0;
    CHECK_OK(db_measurements(d, info.uuid, "matmul", &ms, &nm));
    CHECK_EQ(nm, 1);
    CHECK_STR(ms[0].name, "cublas");
    CHECK_STR(ms[0].note, m.note);
    CHECK_STR(ms[0].device_uuid, info.uuid);
    CHECK_EQ(ms[0].problem.n_dims, 3);
    CHECK_EQ(ms[0].problem.dims[1], 999);
    CHECK(ms[0].time_ms == 0.5 && ms[0].gflops == 3990.25 && ms[0].rel_error == 1e-6);
    free(ms);
    /* Same (device, kernel, problem, name): replaced, not added. */
    m.gflops = 4000;
    CHECK_OK(db_put_measurement(d, &m));
    CHECK_OK(db_measurements(d, NULL, NULL, &ms, &nm));
    CHECK_EQ(nm, 1);
    CHECK(ms[0].gflops == 4000);
    free(ms);
    db_close(d);
}

TEST(db_store_result_unique_replace)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    db_result r;
    tdb_result(&r, "GPU-A", "sum", "h1", tdb_problem(1, 1000003, 0, 0), "BLOCK=256",
               DB_WRONG_RESULT, 0.0, 0);
    snprintf(r.error, sizeof r.error, "%s", "error 0.5 > tolerance");
    CHECK_OK(db_store_result(d, &r));
    long long first = r.id;
    tdb_result(&r, "GPU-A", "sum", "h1", tdb_problem(1, 1000003, 0, 0), "BLOCK=256",
               DB_OK, 0.75, 1);
    CHECK_OK(db_store_result(d, &r));
    CHECK_EQ(r.id, first);
    /* Another source hash is another kernel row: a separate result. */
    tdb_result(&r, "GPU-A", "sum", "h2", tdb_problem(1, 1000003, 0, 0), "BLOCK=256",
               DB_OK, 0.5, 1);
    CHECK_OK(db_store_result(d, &r));
    CHECK(r.id != first);
    db_result *rs = NULL;
    int n = 0;
    CHECK_OK(db_results(d, "GPU-A", "sum", &rs, &n));
    CHECK_EQ(n, 2);
    int seen_h1 = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(rs[i].source_hash, "h1") == 0) {
            seen_h1 = 1;
            CHECK_STR(rs[i].status, DB_OK);
            CHECK(rs[i].time_ms == 0.75);
            CHECK_STR(rs[i].error, "");
            CHECK_EQ(rs[i].id, first);
        }
    }
    free(rs);
    CHECK(seen_h1);
    /* A runtime trial's unverified time (ok, rel_error -1, no session) leaves a verified row
     * as it was; it does replace another unverified one, and a verified row replaces it. */
    tdb_result(&r, "GPU-A", "sum", "h1", tdb_problem(1, 1000003, 0, 0), "BLOCK=256",
               DB_OK, 0.25, 1);
    r.rel_error = -1;
    r.session_id = 0;
    CHECK_OK(db_store_result(d, &r));
    db_result best;
    CHECK_OK(db_best(d, "GPU-A", "sum", "h1", &r.problem, 0, &best));
    CHECK(best.time_ms == 0.75 && best.rel_error >= 0);
    tdb_result(&r, "GPU-A", "sum", "h1", tdb_problem(1, 1000003, 0, 0), "BLOCK=512",
               DB_OK, 0.5, 1);
    r.rel_error = -1;
    CHECK_OK(db_store_result(d, &r));
    r.time_ms = r.time_min_ms = r.time_max_ms = 0.4;
    CHECK_OK(db_store_result(d, &r));
    CHECK_OK(db_best(d, "GPU-A", "sum", "h1", &r.problem, 0, &best));
    CHECK(best.time_ms == 0.4 && best.rel_error == -1);
    r.rel_error = 1e-7;
    r.time_ms = r.time_min_ms = r.time_max_ms = 0.6;
    CHECK_OK(db_store_result(d, &r));
    CHECK_OK(db_best(d, "GPU-A", "sum", "h1", &r.problem, 0, &best));
    CHECK(best.time_ms == 0.6 && best.rel_error >= 0);
    /* A result for an unrecorded device is refused. */
    tdb_result(&r, "GPU-unknown", "sum", "h1", tdb_problem(1, 5, 0, 0), "BLOCK=256",
               DB_OK, 1.0, 1);
    CHECK_EQ(db_store_result(d, &r), AT_ERR_NOT_FOUND);
    CHECK(strstr(db_errmsg(d), "GPU-unknown") != NULL);
    db_close(d);
}

TEST(db_best_ignores_failures)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    at_device_info other;
    tdb_device(&other, "GPU-B", "NVIDIA H200", 9, 0);
    CHECK_OK(db_put_device(d, &other, "13.0"));
    tpl_problem p = tdb_problem(3, 512, 512, 512), q = tdb_problem(3, 512, 512, 513);
    struct { const char *uuid, *hash; tpl_problem p; const char *cfg, *status; double t; } rows[] = {
        { "GPU-A", "h", p, "T=1", DB_OK, 2.0 },
        { "GPU-A", "h", p, "T=2", DB_OK, 1.5 },
        { "GPU-A", "h", p, "T=3", DB_WRONG_RESULT, 0.5 },
        { "GPU-A", "h", p, "T=4", DB_CRASHED, 0.1 },
        { "GPU-A", "h", p, "T=5", DB_TIMEOUT, 0.05 },
        { "GPU-A", "h", p, "T=6", DB_OK, 0.0 },          /* no timing: not a best */
        { "GPU-A", "h", q, "T=7", DB_OK, 0.2 },          /* other problem */
        { "GPU-B", "h", p, "T=8", DB_OK, 0.3 },          /* other device */
        { "GPU-A", "g", p, "T=9", DB_OK, 0.4 },          /* other source hash */
        { "GPU-A", "h", p, "T=10", DB_OK, 1.75 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        db_result r;
        tdb_result(&r, rows[i].uuid, "matmul", rows[i].hash, rows[i].p, rows[i].cfg,
                   rows[i].status, rows[i].t, 1);
        CHECK_OK(db_store_result(d, &r));
    }
    db_result best;
    CHECK_OK(db_best(d, "GPU-A", "matmul", "h", &p, 0, &best));
    CHECK_STR(best.config, "T=2");
    CHECK(best.time_ms == 1.5);
    CHECK_OK(db_best(d, "GPU-A", "matmul", "h", &q, 0, &best));
    CHECK_STR(best.config, "T=7");
    CHECK_OK(db_best(d, "GPU-B", "matmul", "h", &p, 0, &best));
    CHECK_STR(best.config, "T=8");
    CHECK_OK(db_best(d, "GPU-A", "matmul", "g", &p, 0, &best));
    CHECK_STR(best.config, "T=9");
    tpl_problem none = tdb_problem(3, 1, 2, 3);
    CHECK_EQ(db_best(d, "GPU-A", "matmul", "h", &none, 0, &best), AT_ERR_NOT_FOUND);
    CHECK_EQ(db_best(d, "GPU-A", "dot", "h", &p, 0, &best), AT_ERR_NOT_FOUND);
    /* Only failures stored: nothing is best. */
    db_result r;
    tdb_result(&r, "GPU-A", "dot", "h", tdb_problem(1, 77, 0, 0), "B=1", DB_WRONG_RESULT, 0.01, 1);
    CHECK_OK(db_store_result(d, &r));
    tpl_problem p77 = tdb_problem(1, 77, 0, 0);
    CHECK_EQ(db_best(d, "GPU-A", "dot", "h", &p77, 0, &best), AT_ERR_NOT_FOUND);
    db_close(d);
}

TEST(db_best_deterministic_only)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    tpl_problem p = tdb_problem(1, 1 << 20, 0, 0);
    db_result r;
    tdb_result(&r, "GPU-A", "dot", "h", p, "FINISH=atomic", DB_OK, 1.0, 0);
    CHECK_OK(db_store_result(d, &r));
    tdb_result(&r, "GPU-A", "dot", "h", p, "FINISH=two_pass", DB_OK, 1.2, 1);
    CHECK_OK(db_store_result(d, &r));
    tdb_result(&r, "GPU-A", "dot", "h", p, "FINISH=two_pass_slow", DB_OK, 1.4, 1);
    CHECK_OK(db_store_result(d, &r));
    db_result best;
    CHECK_OK(db_best(d, "GPU-A", "dot", "h", &p, 0, &best));
    CHECK_STR(best.config, "FINISH=atomic");
    CHECK_EQ(best.deterministic, 0);
    CHECK_OK(db_best(d, "GPU-A", "dot", "h", &p, 1, &best));
    CHECK_STR(best.config, "FINISH=two_pass");
    CHECK_EQ(best.deterministic, 1);
    db_result *rs = NULL;
    int n = 0;
    CHECK_OK(db_candidates(d, "GPU-A", NULL, "dot", "h", NULL, 5, 1, &rs, &n));
    CHECK_EQ(n, 2);
    CHECK(rs[0].deterministic && rs[1].deterministic);
    free(rs);
    db_close(d);
}

/* Independent reference for db_candidates: for each problem, the per_problem
 * fastest ok rows among those passing the filters. */
typedef struct tdb_row { const char *uuid, *arch; long long n; const char *cfg, *status; double t; } tdb_row;

static int tdb_expect(const tdb_row *rows, int nrows, const char *uuid, const char *arch,
                      int per_problem, const tdb_row **out)
{
    int n = 0;
    long long sizes[] = { 1000, 4096 };
    for (int s = 0; s < 2; s++) {
        const tdb_row *pick[64];
        int np = 0;
        for (int i = 0; i < nrows; i++) {
            const tdb_row *r = &rows[i];
            if (r->n != sizes[s] || strcmp(r->status, DB_OK) != 0)
                continue;
            if (uuid && strcmp(r->uuid, uuid) != 0)
                continue;
            if (arch && strcmp(r->arch, arch) != 0)
                continue;
            pick[np++] = r;
        }
        for (int i = 1; i < np; i++)             /* insertion sort by time */
            for (int j = i; j > 0 && pick[j]->t < pick[j - 1]->t; j--) {
                const tdb_row *tmp = pick[j];
                pick[j] = pick[j - 1];
                pick[j - 1] = tmp;
            }
        for (int i = 0; i < np && (per_problem <= 0 || i < per_problem); i++)
            out[n++] = pick[i];
    }
    return n;
}

TEST(db_candidates_per_problem_and_arch)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);     /* GPU-A, sm_90 */
    CHECK(d);
    at_device_info b, c;
    tdb_device(&b, "GPU-B", "NVIDIA H200", 9, 0);
    tdb_device(&c, "GPU-C", "NVIDIA A100-SXM4-80GB", 8, 0);
    CHECK_OK(db_put_device(d, &b, "13.0"));
    CHECK_OK(db_put_device(d, &c, "13.0"));
    static const tdb_row rows[] = {
        { "GPU-A", "sm_90", 1000, "B=64", DB_OK, 3.0 },
        { "GPU-A", "sm_90", 1000, "B=128", DB_OK, 2.0 },
        { "GPU-A", "sm_90", 1000, "B=256", DB_OK, 2.5 },
        { "GPU-A", "sm_90", 1000, "B=512", DB_WRONG_RESULT, 0.1 },
        { "GPU-B", "sm_90", 1000, "B=64", DB_OK, 1.9 },
        { "GPU-B", "sm_90", 1000, "B=128", DB_OK, 2.2 },
        { "GPU-C", "sm_80", 1000, "B=64", DB_OK, 0.5 },
        { "GPU-C", "sm_80", 1000, "B=128", DB_OK, 0.6 },
        { "GPU-A", "sm_90", 4096, "B=64", DB_OK, 9.0 },
        { "GPU-A", "sm_90", 4096, "B=128", DB_OK, 7.0 },
        { "GPU-A", "sm_90", 4096, "B=256", DB_OK, 8.0 },
        { "GPU-B", "sm_90", 4096, "B=512", DB_OK, 6.5 },
        { "GPU-B", "sm_90", 4096, "B=1024", DB_CRASHED, 0.01 },
        { "GPU-C", "sm_80", 4096, "B=1024", DB_OK, 1.0 },
    };
    int nrows = (int)(sizeof rows / sizeof rows[0]);
    for (int i = 0; i < nrows; i++) {
        db_result r;
        tdb_result(&r, rows[i].uuid, "sum", "h", tdb_problem(1, rows[i].n, 0, 0), rows[i].cfg,
                   rows[i].status, rows[i].t, 1);
        CHECK_OK(db_store_result(d, &r));
    }
    /* A different hash must never appear. */
    db_result other;
    tdb_result(&other, "GPU-A", "sum", "old", tdb_problem(1, 1000, 0, 0), "B=32", DB_OK, 0.01, 1);
    CHECK_OK(db_store_result(d, &other));

    struct { const char *uuid, *arch; int per; } cases[] = {
        { "GPU-A", NULL, 1 }, { "GPU-A", NULL, 2 }, { "GPU-A", NULL, 0 },
        { NULL, "sm_90", 1 }, { NULL, "sm_90", 2 }, { NULL, "sm_90", 3 },
        { NULL, "sm_80", 5 }, { "GPU-B", NULL, 10 }, { NULL, "sm_70", 3 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const tdb_row *want[64];
        int nw = tdb_expect(rows, nrows, cases[k].uuid, cases[k].arch, cases[k].per, want);
        db_result *got = NULL;
        int ng = -1;
        CHECK_OK(db_candidates(d, cases[k].uuid, cases[k].arch, "sum", "h", NULL, cases[k].per,
                               0, &got, &ng));
        CHECK_MSG(ng == nw, "case %zu: %d candidates, expected %d", k, ng, nw);
        for (int i = 0; i < nw; i++) {
            CHECK_MSG(strcmp(got[i].device_uuid, want[i]->uuid) == 0 &&
                      strcmp(got[i].config, want[i]->cfg) == 0 &&
                      got[i].problem.dims[0] == want[i]->n,
                      "case %zu row %d: got %s %s n=%lld, expected %s %s n=%lld", k, i,
                      got[i].device_uuid, got[i].config, got[i].problem.dims[0],
                      want[i]->uuid, want[i]->cfg, want[i]->n);
            CHECK_STR(got[i].source_hash, "h");
            CHECK_STR(got[i].status, DB_OK);
        }
        free(got);
    }
    db_close(d);
}

TEST(db_has_result_resume)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    tpl_problem p = tdb_problem(1, 4096, 0, 0);
    CHECK_EQ(db_has_result(d, "GPU-A", "jacobi", "h", &p, "CHECK=10"), 0);
    db_result r;
    tdb_result(&r, "GPU-A", "jacobi", "h", p, "CHECK=10", DB_TIMEOUT, 0, 1);
    CHECK_OK(db_store_result(d, &r));
    CHECK_EQ(db_has_result(d, "GPU-A", "jacobi", "h", &p, "CHECK=10"), 1);
    CHECK_EQ(db_has_result(d, "GPU-A", "jacobi", "h", &p, "CHECK=1"), 0);
    CHECK_EQ(db_has_result(d, "GPU-A", "jacobi", "other", &p, "CHECK=10"), 0);
    CHECK_EQ(db_has_result(d, "GPU-B", "jacobi", "h", &p, "CHECK=10"), 0);
    tpl_problem q = tdb_problem(1, 4097, 0, 0);
    CHECK_EQ(db_has_result(d, "GPU-A", "jacobi", "h", &q, "CHECK=10"), 0);
    db_close(d);
    /* Survives a reopen. */
    char err[512];
    CHECK_MSG(db_open(&d, path, 0, err, sizeof err) == AT_OK, "%s", err);
    CHECK_EQ(db_has_result(d, "GPU-A", "jacobi", "h", &p, "CHECK=10"), 1);
    db_close(d);
}
