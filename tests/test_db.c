/* test_db.c: CPU-tier tests of the tuning database (db/): round trips,
 * best/candidate queries, resume, paths, foreign/corrupt/read-only files. */
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
#include "th_sql.h"

/* ---- fixtures ---- */

static void tdb_path(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", th_tmpdir(), name);
}

static void tdb_device(at_device_info *i, const char *uuid, const char *name,
                       int major, int minor)
{
    memset(i, 0, sizeof *i);
    i->ordinal = 1;
    snprintf(i->name, sizeof i->name, "%s", name);
    snprintf(i->uuid, sizeof i->uuid, "%s", uuid);
    i->cc_major = major;
    i->cc_minor = minor;
    i->sm_count = 132;
    i->memory_bytes = 85520809984LL;
    i->l2_bytes = 52428800;
    i->smem_per_block_optin = 232448;
    i->smem_per_sm = 233472;
    i->regs_per_block = 65536;
    i->regs_per_sm = 65537;
    i->max_threads_per_block = 1024;
    i->max_threads_per_sm = 2048;
    i->clock_khz = 1980000;
    i->mem_clock_khz = 2619000;
    i->mem_bus_bits = 5120;
    i->driver_version = 13000;
}

static tpl_problem tdb_problem(int n, long long a, long long b, long long c)
{
    tpl_problem p;
    memset(&p, 0, sizeof p);
    p.n_dims = n;
    p.dims[0] = a;
    if (n > 1)
        p.dims[1] = b;
    if (n > 2)
        p.dims[2] = c;
    return p;
}

static void tdb_result(db_result *r, const char *uuid, const char *kernel,
                       const char *hash, tpl_problem p, const char *config,
                       const char *status, double time_ms, int deterministic)
{
    memset(r, 0, sizeof *r);
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", uuid);
    snprintf(r->kernel, sizeof r->kernel, "%s", kernel);
    snprintf(r->source_hash, sizeof r->source_hash, "%s", hash);
    r->problem = p;
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->status, sizeof r->status, "%s", status);
    r->time_ms = time_ms;
    r->time_min_ms = time_ms * 0.9;
    r->time_max_ms = time_ms * 1.1;
    r->runs = 7;
    r->gflops = time_ms > 0 ? 1.0 / time_ms : 0;
    r->rel_error = 1e-7;
    r->deterministic = deterministic;
}

/* Opens a fresh database with one sm_90 device "GPU-A". */
static db *tdb_fresh(char *path, size_t len)
{
    char err[512];
    db *d = NULL;
    tdb_path(path, len, "tuning.db");
    if (db_open(&d, path, 1, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_open: %s", err);
        return NULL;
    }
    at_device_info info;
    tdb_device(&info, "GPU-A", "NVIDIA H100 80GB HBM3", 9, 0);
    if (db_put_device(d, &info, "13.0") != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_put_device: %s", db_errmsg(d));
        db_close(d);
        return NULL;
    }
    return d;
}

/* malloc'd contents of a file (NULL if unreadable). */
static unsigned char *tdb_slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            unsigned char *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    fclose(f);
    *size = n;
    return buf;
}

static int tdb_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

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

/* Sets or unsets an environment variable (value NULL = unset). */
static void tdb_env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

TEST(db_default_path_precedence)
{
    const char *names[] = { "AUTOTUNE_DB", "XDG_CACHE_HOME", "HOME" };
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        saved[i] = v ? strdup(v) : NULL;
    }
    char out[4096];
    int ok = 1;
    tdb_env("AUTOTUNE_DB", "/x/explicit.db");
    tdb_env("XDG_CACHE_HOME", "/x/cache");
    tdb_env("HOME", "/x/home");
    db_default_path(out, sizeof out);
    if (strcmp(out, "/x/explicit.db") != 0) {
        th_fail(__FILE__, __LINE__, "AUTOTUNE_DB not first: %s", out);
        ok = 0;
    }
    tdb_env("AUTOTUNE_DB", "");
    db_default_path(out, sizeof out);
    if (ok && strcmp(out, "/x/cache/autotune/tuning.db") != 0) {
        th_fail(__FILE__, __LINE__, "XDG_CACHE_HOME not second: %s", out);
        ok = 0;
    }
    tdb_env("AUTOTUNE_DB", NULL);
    tdb_env("XDG_CACHE_HOME", NULL);
    db_default_path(out, sizeof out);
    if (ok && strcmp(out, "/x/home/.cache/autotune/tuning.db") != 0) {
        th_fail(__FILE__, __LINE__, "HOME not third: %s", out);
        ok = 0;
    }
    tdb_env("XDG_CACHE_HOME", "relative/cache");   /* invalid per XDG: ignored */
    db_default_path(out, sizeof out);
    if (ok && strcmp(out, "/x/home/.cache/autotune/tuning.db") != 0) {
        th_fail(__FILE__, __LINE__, "relative XDG_CACHE_HOME used: %s", out);
        ok = 0;
    }
    for (int i = 0; i < 3; i++) {
        tdb_env(names[i], saved[i]);
        free(saved[i]);
    }
}

/* Runs db_open(create) on path and checks it is refused as corrupt while the
 * file stays byte-identical and no WAL/journal files appear. */
static void tdb_refused_untouched(const char *path, int line)
{
    size_t n0 = 0, n1 = 0;
    unsigned char *before = tdb_slurp(path, &n0);
    if (!before) {
        th_fail(__FILE__, line, "cannot read %s", path);
        return;
    }
    for (int create = 0; create <= 1; create++) {
        db *d = NULL;
        char err[512] = "";
        at_status s = db_open(&d, path, create, err, sizeof err);
        if (s != AT_ERR_DB_CORRUPT || d != NULL) {
            th_fail(__FILE__, line, "create=%d: %s (%s), expected AT_ERR_DB_CORRUPT", create,
                    at_status_string(s), err);
            db_close(d);
            free(before);
            return;
        }
        if (!err[0]) {
            th_fail(__FILE__, line, "no message for a refused database");
            free(before);
            return;
        }
    }
    unsigned char *after = tdb_slurp(path, &n1);
    if (!after || n0 != n1 || memcmp(before, after, n0) != 0)
        th_fail(__FILE__, line, "%s changed (%zu -> %zu bytes)", path, n0, n1);
    char side[4400];
    for (int i = 0; i < 3; i++) {
        static const char *const suffix[] = { "-wal", "-shm", "-journal" };
        snprintf(side, sizeof side, "%s%s", path, suffix[i]);
        if (tdb_exists(side))
            th_fail(__FILE__, line, "%s was created", side);
    }
    free(before);
    free(after);
}

TEST(db_corrupt_file_refused_untouched)
{
    char path[4300];
    tdb_path(path, sizeof path, "random.db");
    FILE *f = fopen(path, "wb");
    CHECK(f);
    unsigned long long x = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 8192; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        fputc((int)(x & 0xff), f);
    }
    fclose(f);
    tdb_refused_untouched(path, __LINE__);
    CHECK(!th_failed());

    /* SQLite's magic followed by garbage: SQLite itself must reject it. */
    tdb_path(path, sizeof path, "magic.db");
    f = fopen(path, "wb");
    CHECK(f);
    fwrite("SQLite format 3", 1, 16, f);
    for (int i = 16; i < 4096; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        fputc((int)(x & 0xff), f);
    }
    fclose(f);
    tdb_refused_untouched(path, __LINE__);
    CHECK(!th_failed());

    /* A text file. */
    tdb_path(path, sizeof path, "notes.txt");
    f = fopen(path, "wb");
    CHECK(f);
    fputs("these are my notes, not a database\n", f);
    fclose(f);
    tdb_refused_untouched(path, __LINE__);
}

TEST(db_foreign_sqlite_refused_untouched)
{
    char path[4300];
    tdb_path(path, sizeof path, "foreign.db");
    CHECK_EQ(th_sql_exec(path, "CREATE TABLE contacts (name TEXT, phone TEXT);"
                               "INSERT INTO contacts VALUES ('ada', '555');"), SQLITE_OK);
    tdb_refused_untouched(path, __LINE__);
    CHECK(!th_failed());
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM contacts"), 1);
    /* Even one that has a table called meta, but not ours. */
    tdb_path(path, sizeof path, "foreign_meta.db");
    CHECK_EQ(th_sql_exec(path, "CREATE TABLE meta (key TEXT, value TEXT);"
                               "INSERT INTO meta VALUES ('created_by', 'someone else');"
                               "PRAGMA user_version = 1;"), SQLITE_OK);
    tdb_refused_untouched(path, __LINE__);
}

TEST(db_newer_schema_refused)
{
    char path[4300], err[512];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    db_close(d);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", DB_SCHEMA_VERSION + 1);
    CHECK_EQ(th_sql_exec(path, sql), SQLITE_OK);
    d = NULL;
    CHECK_EQ(db_open(&d, path, 0, err, sizeof err), AT_ERR_DB_CORRUPT);
    CHECK(d == NULL);
    CHECK_MSG(strstr(err, "newer") != NULL, "message: %s", err);
    CHECK_EQ(db_open(&d, path, 1, err, sizeof err), AT_ERR_DB_CORRUPT);
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION + 1);
    /* Back to our version: usable again (the refusal changed nothing). */
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", DB_SCHEMA_VERSION);
    CHECK_EQ(th_sql_exec(path, sql), SQLITE_OK);
    CHECK_MSG(db_open(&d, path, 0, err, sizeof err) == AT_OK, "%s", err);
    db_close(d);
    /* Our schema with a table dropped is not usable either. */
    CHECK_EQ(th_sql_exec(path, "DROP TABLE measurement"), SQLITE_OK);
    CHECK_EQ(db_open(&d, path, 0, err, sizeof err), AT_ERR_DB_CORRUPT);
    CHECK_MSG(strstr(err, "measurement") != NULL, "message: %s", err);
}

TEST(db_missing_file_not_found)
{
    char path[4300], err[512] = "";
    tdb_path(path, sizeof path, "absent.db");
    db *d = (db *)&err;                          /* must be reset to NULL */
    CHECK_EQ(db_open(&d, path, 0, err, sizeof err), AT_ERR_NOT_FOUND);
    CHECK(d == NULL);
    CHECK(err[0] != '\0');
    CHECK(!tdb_exists(path));
    /* An empty file is not a database of ours unless we may create it. */
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(db_open(&d, path, 0, err, sizeof err), AT_ERR_DB_CORRUPT);
    CHECK_MSG(db_open(&d, path, 1, err, sizeof err) == AT_OK, "%s", err);
    db_close(d);
    CHECK_MSG(db_open(&d, path, 0, err, sizeof err) == AT_OK, "%s", err);
    db_close(d);
    /* A path whose folder is a file cannot be created. */
    char bad[4400];
    snprintf(bad, sizeof bad, "%s/sub/x.db", path);
    CHECK_EQ(db_open(&d, bad, 1, err, sizeof err), AT_ERR_IO);
}

/* The read-only checks, run as an unprivileged user where we are root
 * (root writes through permissions). Returns "" or the failure. */
static void tdb_readonly_checks(const char *path, char *why, size_t len)
{
    db *d = NULL;
    char err[512];
    at_status s = db_open(&d, path, 0, err, sizeof err);
    if (s != AT_OK) {
        snprintf(why, len, "open read-only file: %s (%s)", at_status_string(s), err);
        return;
    }
    if (!db_is_readonly(d)) {
        snprintf(why, len, "db_is_readonly is 0 for a 0444 file");
        db_close(d);
        return;
    }
    tpl_problem p = tdb_problem(1, 1000, 0, 0);
    db_result best;
    s = db_best(d, "GPU-A", "sum", "h", &p, 0, &best);
    if (s != AT_OK || strcmp(best.config, "B=128") != 0) {
        snprintf(why, len, "read from read-only: %s (%s)", at_status_string(s), db_errmsg(d));
        db_close(d);
        return;
    }
    void *cubin = NULL;
    size_t size = 0;
    s = db_get_binary(d, "k", &cubin, &size);
    free(cubin);
    if (s != AT_OK || size != 3) {
        snprintf(why, len, "cubin from read-only: %s", at_status_string(s));
        db_close(d);
        return;
    }
    db_result r;
    tdb_result(&r, "GPU-A", "sum", "h", p, "B=1", DB_OK, 1.0, 1);
    s = db_store_result(d, &r);
    if (s != AT_ERR_DB || !strstr(db_errmsg(d), "read-only")) {
        snprintf(why, len, "store into read-only: %s (%s)", at_status_string(s), db_errmsg(d));
        db_close(d);
        return;
    }
    s = db_put_binary(d, "k2", "sum", "h", "B=1", "sm_90", "13.0", "", "abc", 3);
    if (s != AT_ERR_DB) {
        snprintf(why, len, "put_binary into read-only: %s", at_status_string(s));
        db_close(d);
        return;
    }
    at_device_info info;
    tdb_device(&info, "GPU-Z", "x", 9, 0);
    if (db_put_device(d, &info, "13.0") != AT_ERR_DB) {
        snprintf(why, len, "put_device into read-only succeeded");
        db_close(d);
        return;
    }
    db_close(d);
    why[0] = '\0';
}

TEST(db_readonly_file)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    db_result r;
    tdb_result(&r, "GPU-A", "sum", "h", tdb_problem(1, 1000, 0, 0), "B=128", DB_OK, 0.5, 1);
    CHECK_OK(db_store_result(d, &r));
    CHECK_OK(db_put_binary(d, "k", "sum", "h", "B=128", "sm_90", "13.0", "", "a\0b", 3));
    db_close(d);
    CHECK_EQ(chmod(path, 0444), 0);

    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char why[1024] = "";
        close(fds[0]);
        if (geteuid() == 0) {
            /* Let the unprivileged user reach the file through the test's own
             * folders (the database's folder and its parent). */
            char dir[4300];
            snprintf(dir, sizeof dir, "%s", path);
            for (int up = 0; up < 2; up++) {
                char *slash = strrchr(dir, '/');
                if (!slash || slash == dir)
                    break;
                *slash = '\0';
                struct stat sb;
                if (stat(dir, &sb) == 0 && !(sb.st_mode & S_IXOTH))
                    chmod(dir, (sb.st_mode & 07777) | S_IXOTH);
            }
            if (setgid(65534) != 0 || setuid(65534) != 0)
                snprintf(why, sizeof why, "cannot drop root: %s", strerror(errno));
            else if (access(path, R_OK) != 0)
                _exit(77);          /* a folder above the test's is closed */
        }
        if (!why[0])
            tdb_readonly_checks(path, why, sizeof why);
        ssize_t wr = write(fds[1], why, strlen(why));
        (void)wr;
        _exit(why[0] ? 1 : 0);
    }
    close(fds[1]);
    char msg[1024] = "";
    ssize_t got = read(fds[0], msg, sizeof msg - 1);
    if (got > 0)
        msg[got] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        printf("     note: read-only checks not run: the unprivileged user cannot "
               "reach %s\n", path);
        return;
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "read-only child: %s", msg);
    /* Nothing was written: still one result. */
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result"), 1);
}

TEST(db_injection_stored_verbatim)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    const char *kernel = "k'); DROP TABLE device;--";
    const char *config = "TILE=1'); DELETE FROM result; --\"; SELECT '";
    db_result r;
    tdb_result(&r, "GPU-A", kernel, "h'--", tdb_problem(1, 10, 0, 0), config, DB_OK, 1.0, 1);
    snprintf(r.error, sizeof r.error, "%s", "'; DROP TABLE binary; --");
    CHECK_OK(db_store_result(d, &r));
    tdb_result(&r, "GPU-A", "sum", "h", tdb_problem(1, 10, 0, 0), "B=1", DB_OK, 1.0, 1);
    CHECK_OK(db_store_result(d, &r));
    tpl_problem p = tdb_problem(1, 10, 0, 0);
    db_result best;
    CHECK_OK(db_best(d, "GPU-A", kernel, "h'--", &p, 0, &best));
    CHECK_STR(best.kernel, kernel);
    CHECK_STR(best.config, config);
    CHECK_STR(best.source_hash, "h'--");
    CHECK_STR(best.error, "'; DROP TABLE binary; --");
    CHECK_EQ(db_has_result(d, "GPU-A' OR '1'='1", kernel, "h'--", &p, config), 0);
    db_close(d);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result"), 2);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM device"), 1);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'binary'"), 1);
}

/* Holds a write lock on the file for ~300 ms from another connection; released is the moment it lets go. */
typedef struct tdb_locker {
    const char *path;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int locked;
    int rc;
    struct timespec released;
} tdb_locker;

static void *tdb_lock_thread(void *arg)
{
    tdb_locker *l = arg;
    sqlite3 *h = NULL;
    l->rc = sqlite3_open(l->path, &h);
    if (l->rc == SQLITE_OK)
        l->rc = sqlite3_exec(h, "BEGIN IMMEDIATE; UPDATE meta SET value = value "
                                "WHERE key = 'created';", NULL, NULL, NULL);
    pthread_mutex_lock(&l->mu);
    l->locked = 1;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    struct timespec ts = { 0, 300 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    clock_gettime(CLOCK_MONOTONIC, &l->released);     /* before COMMIT: no writer can finish earlier */
    if (l->rc == SQLITE_OK)
        l->rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(h);
    return NULL;
}

TEST(db_concurrent_writers_wait)
{
    char path[4300];
    db *d = tdb_fresh(path, sizeof path);
    CHECK(d);
    tdb_locker l = { .path = path, .mu = PTHREAD_MUTEX_INITIALIZER,
                     .cv = PTHREAD_COND_INITIALIZER };
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, tdb_lock_thread, &l), 0);
    pthread_mutex_lock(&l.mu);
    while (!l.locked)
        pthread_cond_wait(&l.cv, &l.mu);
    pthread_mutex_unlock(&l.mu);
    struct timespec t1;
    db_result r;
    tdb_result(&r, "GPU-A", "sum", "h", tdb_problem(1, 10, 0, 0), "B=1", DB_OK, 1.0, 1);
    at_status s = db_store_result(d, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    /* The store ends after the lock's release, however late this thread ran: it waited.  (A fixed minimum wait
     * failed when a loaded machine delayed this thread after the lock was taken.) */
    double after_release = (double)(t1.tv_sec - l.released.tv_sec) * 1e3
                           + (double)(t1.tv_nsec - l.released.tv_nsec) / 1e6;
    CHECK_EQ(l.rc, SQLITE_OK);
    CHECK_MSG(s == AT_OK, "store while locked: %s (%s)", at_status_string(s), db_errmsg(d));
    CHECK_MSG(after_release >= 0, "store finished %.1f ms before the lock was let go", -after_release);
    db_close(d);

    /* Two processes storing 100 results each into the same file. */
    pid_t pids[2];
    for (int w = 0; w < 2; w++) {
        pids[w] = fork();
        CHECK(pids[w] >= 0);
        if (pids[w] == 0) {
            db *c = NULL;
            char err[512];
            if (db_open(&c, path, 0, err, sizeof err) != AT_OK)
                _exit(2);
            for (int i = 0; i < 100; i++) {
                db_result x;
                char cfg[64];
                snprintf(cfg, sizeof cfg, "W=%d,I=%d", w, i);
                tdb_result(&x, "GPU-A", "dot", "h", tdb_problem(1, 1000 + i % 3, 0, 0), cfg,
                           DB_OK, 1.0 + i, 1);
                if (db_store_result(c, &x) != AT_OK)
                    _exit(3);
            }
            db_close(c);
            _exit(0);
        }
    }
    for (int w = 0; w < 2; w++) {
        int status = 0;
        waitpid(pids[w], &status, 0);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d exit %d", w,
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result r JOIN kernel k "
                              "ON k.id = r.kernel_id WHERE k.name = 'dot'"), 200);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE kernel = 'dot'"), 3);
}
