/* test_report.c: CPU-tier tests of the HTML report (reports/report.c) on a
 * fixture database: self-contained, escaped, well-formed, error statuses. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "db.h"
#include "figures.h"
#include "harness.h"
#include "html.h"
#include "report.h"

/* Strong references: link the families from the static library (the
 * registry only refers to them weakly). */
extern const tpl_family tpl_matmul, tpl_sum;
static const tpl_family *const tr_families[] = { &tpl_matmul, &tpl_sum };

#define TR_UUID "GPU-0a1b2c3d-aaaa-bbbb-cccc-0123456789ab"
#define TR_EVIL "<script>alert(1)</script>"
#define TR_EVIL_ESC "&lt;script&gt;alert(1)&lt;/script&gt;"

static void tr_device(at_device_info *i, const char *uuid, const char *name)
{
    memset(i, 0, sizeof *i);
    snprintf(i->uuid, sizeof i->uuid, "%s", uuid);
    snprintf(i->name, sizeof i->name, "%s", name);
    i->cc_major = 9;
    i->cc_minor = 0;
    i->sm_count = 132;
    i->memory_bytes = 85520809984LL;
    i->l2_bytes = 52428800;
    i->smem_per_block_optin = 232448;
    i->smem_per_sm = 233472;
    i->max_threads_per_block = 1024;
    i->clock_khz = 1980000;
    i->mem_clock_khz = 2619000;
    i->mem_bus_bits = 5120;
    i->driver_version = 13000;
}

static char *tr_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf) {
        size_t got = fread(buf, 1, (size_t)n, f);
        buf[got] = '\0';
    }
    fclose(f);
    return buf;
}

static int tr_count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* 1 if word occurs with no letter on either side ("nan" but not "dominant"). */
static int tr_has_word(const char *hay, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(hay, word); p; p = strstr(p + 1, word)) {
        int before = p > hay && ((p[-1] | 32) >= 'a' && (p[-1] | 32) <= 'z');
        int after = (p[n] | 32) >= 'a' && (p[n] | 32) <= 'z';
        if (!before && !after)
            return 1;
    }
    return 0;
}

static int tr_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

typedef struct tr_fixture {
    char dir[4200];
    char db_path[4300];
    char best_matmul[TPL_CONFIG_LEN];
    double best_gflops;
    double peak;
} tr_fixture;

static void tr_store(db *d, long long session, const char *kernel, tpl_problem p,
                     const char *config, const char *status, double time_ms, double gflops,
                     double gbs, const char *error)
{
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", TR_UUID);
    snprintf(r.kernel, sizeof r.kernel, "%s", kernel);
    const tpl_family *fam = tpl_find(kernel);
    snprintf(r.source_hash, sizeof r.source_hash, "%s", fam ? tpl_source_hash(fam) : "feed");
    r.problem = p;
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.status, sizeof r.status, "%s", status);
    r.time_ms = time_ms;
    r.time_min_ms = time_ms * 0.98;
    r.time_max_ms = time_ms * 1.05;
    r.runs = 20;
    r.gflops = gflops;
    r.gbs = gbs;
    r.rel_error = strcmp(status, DB_OK) == 0 ? 2e-7 : -1;
    r.session_id = session;
    snprintf(r.error, sizeof r.error, "%s", error ? error : "");
    if (db_store_result(d, &r) != AT_OK)
        th_fail(__FILE__, __LINE__, "store %s %s: %s", kernel, config, db_errmsg(d));
}

static void tr_measure(db *d, const char *kernel, tpl_problem p, const char *name,
                       double time_ms, double gflops, double gbs)
{
    db_measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.device_uuid, sizeof m.device_uuid, "%s", TR_UUID);
    snprintf(m.kernel, sizeof m.kernel, "%s", kernel);
    m.problem = p;
    snprintf(m.name, sizeof m.name, "%s", name);
    m.time_ms = time_ms;
    m.gflops = gflops;
    m.gbs = gbs;
    m.rel_error = -1;
    if (db_put_measurement(d, &m) != AT_OK)
        th_fail(__FILE__, __LINE__, "measurement %s: %s", name, db_errmsg(d));
}

/* A device, results for matmul and sum (incl. failures, a seed baseline, the
 * default, hostile text), a kernel with only failures, and measurements. */
static db *tr_build(tr_fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    snprintf(fx->dir, sizeof fx->dir, "%s", th_tmpdir());
    snprintf(fx->db_path, sizeof fx->db_path, "%s/tuning.db", fx->dir);
    char err[512];
    db *d = NULL;
    if (db_open(&d, fx->db_path, 1, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_open: %s", err);
        return NULL;
    }
    at_device_info info;
    tr_device(&info, TR_UUID, "NVIDIA H100 80GB HBM3");
    if (db_put_device(d, &info, "13.0") != AT_OK) {
        th_fail(__FILE__, __LINE__, "put_device: %s", db_errmsg(d));
        db_close(d);
        return NULL;
    }
    long long session = 0;
    if (db_begin_session(d, TR_UUID, "autotune --device 0", "{}", &session) != AT_OK) {
        th_fail(__FILE__, __LINE__, "session: %s", db_errmsg(d));
        db_close(d);
        return NULL;
    }
    const tpl_family *mm = tr_families[0];
    tpl_problem pm = TPL_PROBLEM(3, {1000, 999, 1001});
    double flops = 2.0 * 1000 * 999 * 1001;
    /* Ordinary configurations from the family's space; the fastest is the
     * one whose time is smallest below. */
    double best_t = 1e30;
    if (mm) {
        long long space = tpl_space_size(mm);
        for (int i = 0; i < 24 && i < space; i++) {
            int cfg[TPL_MAX_PARAMS];
            char text[TPL_CONFIG_LEN];
            tpl_config_from_index(mm, (long long)(i + 1) * 7919 % space, cfg);
            tpl_config_format(mm, cfg, text, sizeof text);
            int special = mm->default_config && strcmp(text, mm->default_config) == 0;
            for (int b = 0; b < mm->n_baselines; b++)
                if (strcmp(text, mm->baselines[b].config) == 0)
                    special = 1;
            if (special)
                continue;               /* stored below with their own times */
            double t = 0.9 + 0.37 * ((i * 13) % 24);
            if (i % 6 == 5) {
                tr_store(d, session, "matmul", pm, text, DB_COMPILE_ERROR, 0, 0, 0,
                         "ptxas error: too much shared data (0x1c000 bytes, 0xc000 max)");
                continue;
            }
            tr_store(d, session, "matmul", pm, text, DB_OK, t, flops / (t * 1e6), 0, NULL);
            if (t < best_t) {
                best_t = t;
                snprintf(fx->best_matmul, sizeof fx->best_matmul, "%s", text);
            }
        }
        if (mm->n_baselines > 0)
            tr_store(d, session, "matmul", pm, mm->baselines[0].config, DB_OK, 30.0,
                     flops / 30e6, 0, NULL);
        if (mm->default_config)
            tr_store(d, session, "matmul", pm, mm->default_config, DB_OK, 2.5,
                     flops / 2.5e6, 0, NULL);
    }
    /* Faster than everything but wrong: must never be shown as the best. */
    tr_store(d, session, "matmul", pm, "ALGO=9," TR_EVIL, DB_WRONG_RESULT, 0.01,
             flops / 1e4, 0, "relative error 0.5 > 1e-5 " TR_EVIL);
    fx->best_gflops = flops / (best_t * 1e6);

    tpl_problem ps = TPL_PROBLEM(1, {1000003});
    const tpl_family *sum = tr_families[1];
    if (sum && sum->default_config)
        tr_store(d, session, "sum", ps, sum->default_config, DB_OK, 0.02, 0,
                 4.0 * 1000003 / 0.02e6, NULL);
    if (sum && sum->n_baselines > 0)
        tr_store(d, session, "sum", ps, sum->baselines[0].config, DB_OK, 0.09, 0,
                 4.0 * 1000003 / 0.09e6, NULL);
    tr_store(d, session, "sum", ps, "STYLE=7,FINISH=0", DB_TIMEOUT, 0, 0, 0,
             "watchdog: 10 s");
    /* A kernel with failures only (partial data). */
    tr_store(d, session, "jacobi", (tpl_problem)TPL_PROBLEM(1, {4096}), "CHECK=1", DB_CRASHED, 0,
             0, 0, "worker died: signal 11");

    tr_measure(d, "matmul", pm, "cublas", 0.2, flops / 0.2e6, 0);
    tr_measure(d, "matmul", pm, "seed_naive_cuda", 45.0, flops / 45e6, 0);
    tr_measure(d, "sum", ps, "cub", 0.015, 0, 4.0 * 1000003 / 0.015e6);
    tr_measure(d, "device", (tpl_problem)TPL_PROBLEM(0, {0}), "copy_bandwidth", 0, 0, 3012.5);
    tr_measure(d, "device", (tpl_problem)TPL_PROBLEM(0, {0}), "fp32_peak", 0, 51234.0, 0);
    fx->peak = 51234.0;
    db_end_session(d, session, "{}", "completed");
    return d;
}

TEST(report_fixture_self_contained_and_escaped)
{
    tr_fixture fx;
    db *d = tr_build(&fx);
    CHECK(d);
    CHECK_MSG(tpl_find("matmul") && fx.best_matmul[0], "matmul family missing from the build");
    char outdir[4300], out[4400], err[512] = "";
    snprintf(outdir, sizeof outdir, "%s/out", fx.dir);
    CHECK_EQ(mkdir(outdir, 0755), 0);
    snprintf(out, sizeof out, "%s/report.html", outdir);
    at_status s = rp_write(d, out, NULL, err, sizeof err);
    db_close(d);
    CHECK_MSG(s == AT_OK, "rp_write: %s (%s)", at_status_string(s), err);
    CHECK_EQ(tr_entries(outdir), 1);                 /* one file, no leftovers */
    char *html = tr_slurp(out);
    CHECK(html);
    int ok = 1;
#define TR_EXPECT(cond, ...) do { if (ok && !(cond)) { \
    th_fail(__FILE__, __LINE__, __VA_ARGS__); ok = 0; } } while (0)
    TR_EXPECT(strncmp(html, "<!DOCTYPE html>", 15) == 0, "no doctype");
    TR_EXPECT(tr_count(html, "<html") == 1 && tr_count(html, "</html>") == 1, "html element");
    TR_EXPECT(strstr(html, "</html>") > strstr(html, "</body>"), "</html> is not last");
    TR_EXPECT(!strstr(html, "http://") && !strstr(html, "https://"), "network reference");
    TR_EXPECT(!strstr(html, "<script"), "a script element");
    TR_EXPECT(!strstr(html, "<link") && !strstr(html, "@import") && !strstr(html, "url("),
              "an external resource");
    TR_EXPECT(strstr(html, "NVIDIA H100 80GB HBM3") != NULL, "device name missing");
    TR_EXPECT(strstr(html, TR_UUID) != NULL, "UUID missing");
    TR_EXPECT(strstr(html, fx.best_matmul) != NULL, "best config %s missing", fx.best_matmul);
    TR_EXPECT(strstr(html, TR_EVIL_ESC) != NULL, "hostile text not shown escaped");
    TR_EXPECT(!strstr(html, TR_EVIL), "hostile text not escaped");
    /* The best is the fastest ok configuration, at its share of the ceiling. */
    char pct[64];
    snprintf(pct, sizeof pct, "%.1f%%", 100.0 * fx.best_gflops / fx.peak);
    TR_EXPECT(strstr(html, pct) != NULL, "percent of ceiling %s missing", pct);
    TR_EXPECT(strstr(html, "51234") != NULL, "measured FP32 ceiling missing");
    TR_EXPECT(strstr(html, "cublas") && strstr(html, "cub<") != NULL, "vendor bars missing");
    TR_EXPECT(strstr(html, tpl_find("matmul")->baselines[0].name) != NULL, "seed missing");
    TR_EXPECT(strstr(html, "seed_naive_cuda") != NULL, "seed measurement missing");
    TR_EXPECT(strstr(html, "built-in default") != NULL, "default missing");
    TR_EXPECT(strstr(html, "no configuration passed verification") != NULL,
              "failure-only kernel not reported");
    TR_EXPECT(strstr(html, "compile_error 4") != NULL, "failure count by status missing");
    TR_EXPECT(!strstr(html, "Back to back"), "a back-to-back time without a re-timing");
    TR_EXPECT(strstr(html, "Roofline") && strstr(html, "Search trajectory") &&
              strstr(html, "Parameter sensitivity"), "a chart is missing");
    int open_svg = tr_count(html, "<svg"), close_svg = tr_count(html, "</svg>");
    TR_EXPECT(open_svg >= 8 && open_svg == close_svg, "svg %d opened, %d closed", open_svg,
              close_svg);
    TR_EXPECT(tr_count(html, "<table") == tr_count(html, "</table>"), "unbalanced tables");
    TR_EXPECT(tr_count(html, "<text") == tr_count(html, "</text>"), "unbalanced svg text");
    TR_EXPECT(tr_count(html, "<div") == tr_count(html, "</div>"), "unbalanced divs");
    /* No NaN/inf leaks into coordinates. */
    TR_EXPECT(!tr_has_word(html, "nan") && !tr_has_word(html, "inf"),
              "non-finite number in the SVG");
#undef TR_EXPECT
    free(html);
}

/* A re-timed problem: the report's best is the sustained winner (the one
 * ranking rule), with its back-to-back time and the count re-timed. */
TEST(report_shows_the_back_to_back_time)
{
    tr_fixture fx;
    db *d = tr_build(&fx);
    CHECK(d);
    const tpl_family *mm = tpl_find("matmul");
    CHECK(mm);
    tpl_problem pm = TPL_PROBLEM(3, {1000, 999, 1001});
    db_result *rows = NULL;
    int n = 0;
    CHECK_OK(db_problem_results(d, TR_UUID, "matmul", tpl_source_hash(mm), &pm, &rows, &n));
    CHECK_MSG(n >= 3, "%d matmul rows", n);
    /* the second fastest by short time runs fastest back to back */
    long long ids[3] = {rows[0].id, rows[1].id, rows[2].id};
    double t1 = rows[1].time_ms;
    double sus[3] = {t1 * 1.08, t1 * 1.02, t1 * 1.15};
    double rank[3];
    for (int k = 0; k < 3; k++)
        rank[k] = rows[0].time_ms * sus[k] / sus[1];
    const char *uuids[1] = {TR_UUID};
    CHECK_OK(db_store_sustained(d, uuids, 1, "matmul", tpl_source_hash(mm), &pm, ids, sus, rank,
                                3));
    char winner[TPL_CONFIG_LEN], out[4400], err[512] = "", ms[32], want[TPL_CONFIG_LEN + 64];
    snprintf(winner, sizeof winner, "%s", rows[1].config);
    rp_num(ms, sizeof ms, sus[1]);
    free(rows);
    snprintf(out, sizeof out, "%s/retimed.html", fx.dir);
    at_status s = rp_write(d, out, NULL, err, sizeof err);
    db_close(d);
    CHECK_MSG(s == AT_OK, "rp_write: %s (%s)", at_status_string(s), err);
    char *html = tr_slurp(out);
    CHECK(html);
    snprintf(want, sizeof want, "<td><code>%s</code></td>", winner);
    int best_shown = strstr(html, want) != NULL;
    snprintf(want, sizeof want, "in %s ms, first of the 3 configurations the tuner re-timed", ms);
    int said = tr_count(html, want);
    free(html);
    CHECK_MSG(best_shown, "the sustained winner %s is not the best shown", winner);
    CHECK_MSG(said == 1, "'%s' %d times", want, said);
}

TEST(report_errors)
{
    char dir[4200], path[4300], err[512];
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(path, sizeof path, "%s/empty.db", dir);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, 1, err, sizeof err) == AT_OK, "%s", err);
    char out[4400];
    snprintf(out, sizeof out, "%s/empty.html", dir);
    err[0] = '\0';
    CHECK_EQ(rp_write(d, out, NULL, err, sizeof err), AT_ERR_NOT_FOUND);
    CHECK(err[0] != '\0');
    struct stat sb;
    CHECK(stat(out, &sb) != 0);
    /* A device with no results is still "no results". */
    at_device_info info;
    tr_device(&info, "GPU-empty", "Idle GPU");
    CHECK_OK(db_put_device(d, &info, "13.0"));
    CHECK_EQ(rp_write(d, out, NULL, err, sizeof err), AT_ERR_NOT_FOUND);
    db_close(d);

    tr_fixture fx;
    d = tr_build(&fx);
    CHECK(d);
    err[0] = '\0';
    CHECK_EQ(rp_write(d, "/nonexistent-autotune-dir/sub/report.html", NULL, err, sizeof err),
             AT_ERR_IO);
    CHECK(strstr(err, "nonexistent-autotune-dir") != NULL);
    CHECK_EQ(rp_write(d, fx.dir, NULL, err, sizeof err), AT_ERR_IO);   /* a directory */
    CHECK_EQ(rp_write(d, out, "GPU-unknown", err, sizeof err), AT_ERR_NOT_FOUND);
    CHECK_EQ(rp_write(d, NULL, NULL, err, sizeof err), AT_ERR_INVALID_ARG);
    /* One device by UUID works. */
    CHECK_OK(rp_write(d, out, TR_UUID, err, sizeof err));
    CHECK(stat(out, &sb) == 0 && sb.st_size > 1000);
    db_close(d);
}

TEST(report_escape_html)
{
    char out[64] = "";
    rp_escape_html("a<b>&\"c'", out, sizeof out);
    CHECK_STR(out, "a&lt;b&gt;&amp;&quot;c&#39;");
    /* Appends. */
    rp_escape_html("<", out, sizeof out);
    CHECK_STR(out, "a&lt;b&gt;&amp;&quot;c&#39;&lt;");
    /* Truncates without cutting an entity and stays terminated. */
    char small[8] = "";
    rp_escape_html("ab<cd", small, sizeof small);
    CHECK_STR(small, "ab&lt;c");
    char tiny[5] = "";
    rp_escape_html("x&y", tiny, sizeof tiny);
    CHECK_STR(tiny, "x");
    rp_escape_html(NULL, tiny, sizeof tiny);
    CHECK_STR(tiny, "x");
    char one[1] = { 'z' };
    rp_escape_html("abc", one, sizeof one);
    CHECK_EQ(one[0], 0);
}

/* ---- a rich fixture: the recorded H200 tunings of tests/data, five
 * devices, every status, several sessions, unknown kernels, an older
 * template version and hostile text; checked against what was stored ---- */

#define TR_UUID_B "GPU-0a1b2c3d-bbbb-cccc-dddd-0123456789ab"
#define TR_UUID_C "GPU-0a1b2c3d-cccc-dddd-eeee-0123456789ab"
#define TR_UUID_D "GPU-0a1b2c3d-dddd-eeee-ffff-0123456789ab"
#define TR_UUID_E "GPU-0a1b2c3d-eeee-ffff-0000-0123456789ab"
#define TR_OLD_HASH "0123456789abcdef"
#define TR_MAX_GROUPS 24

/* What the fixture stored for one (device, kernel, hash, problem). */
typedef struct tr_group {
    char uuid[48], kernel[32], hash[20];
    tpl_problem problem;
    int n, n_ok, n_compile_error;
    double best_ms;
    char best[TPL_CONFIG_LEN];
} tr_group;

typedef struct tr_rich {
    char dir[4200], db_path[4300];
    tr_group g[TR_MAX_GROUPS];
    int n_groups;
    int total;                      /* results stored, every device */
} tr_rich;

/* Stores one result and tallies it into its group (the independent
 * reference of the checks); 0 on failure. */
static int tr_put(db *d, tr_rich *fx, const char *uuid, long long session, const char *kernel,
                  const char *hash, tpl_problem p, const char *config, const char *status,
                  double time_ms, double gflops, double gbs, int runs, const char *error)
{
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", uuid);
    snprintf(r.kernel, sizeof r.kernel, "%s", kernel);
    snprintf(r.source_hash, sizeof r.source_hash, "%s", hash);
    r.problem = p;
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.status, sizeof r.status, "%s", status);
    r.time_ms = time_ms;
    r.time_min_ms = time_ms * 0.97;
    r.time_max_ms = time_ms * 1.08;
    r.runs = runs;
    r.gflops = gflops;
    r.gbs = gbs;
    r.rel_error = strcmp(status, DB_OK) == 0 ? 3e-7 : -1;
    r.deterministic = (int)(strlen(config) % 2);
    r.session_id = session;
    snprintf(r.error, sizeof r.error, "%s", error ? error : "");
    if (db_store_result(d, &r) != AT_OK) {
        th_fail(__FILE__, __LINE__, "store %s %s: %s", kernel, config, db_errmsg(d));
        return 0;
    }
    tr_group *g = NULL;
    for (int i = 0; i < fx->n_groups && !g; i++)
        if (strcmp(fx->g[i].uuid, uuid) == 0 && strcmp(fx->g[i].kernel, kernel) == 0 &&
            strcmp(fx->g[i].hash, hash) == 0 && tpl_problem_equal(&fx->g[i].problem, &p))
            g = &fx->g[i];
    if (!g && fx->n_groups < TR_MAX_GROUPS) {
        g = &fx->g[fx->n_groups++];
        snprintf(g->uuid, sizeof g->uuid, "%s", uuid);
        snprintf(g->kernel, sizeof g->kernel, "%s", kernel);
        snprintf(g->hash, sizeof g->hash, "%s", hash);
        g->problem = p;
    }
    if (!g)
        return 0;
    g->n++;
    fx->total++;
    if (strcmp(status, DB_COMPILE_ERROR) == 0)
        g->n_compile_error++;
    if (strcmp(status, DB_OK) == 0 && time_ms > 0) {
        g->n_ok++;
        if (g->n_ok == 1 || time_ms < g->best_ms) {
            g->best_ms = time_ms;
            snprintf(g->best, sizeof g->best, "%s", config);
        }
    }
    return 1;
}

/* The status a recorded row is stored with: mostly ok, every failure kind
 * now and then, one status no release knows, one ok row without a time. */
static const char *tr_status_of(int row)
{
    static const struct { int mod, rem; const char *status; } kinds[] = {
        { 97, 5, DB_WRONG_RESULT }, { 89, 7, DB_COMPILE_ERROR }, { 83, 11, DB_ABANDONED },
        { 79, 13, DB_TIMEOUT }, { 73, 17, DB_CRASHED }, { 71, 19, DB_LAUNCH_ERROR },
        { 67, 23, DB_INVALID }, { 61, 29, "quarantined" },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (row % kinds[i].mod == kinds[i].rem)
            return kinds[i].status;
    return DB_OK;
}

/* Loads tests/data/NAME as matmul results of problem p spread over
 * n_sessions sessions in file order; gflops stored only if with_gflops
 * (else the report derives it from the family's work). 0 on failure. */
static int tr_load_recording(db *d, tr_rich *fx, const char *uuid, const char *name,
                             tpl_problem p, const char *hash, int n_sessions, int with_gflops)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/%s", name);
    FILE *f = fopen(path, "r");
    if (!f) {
        th_fail(__FILE__, __LINE__, "cannot open %s (run from the repository root)", path);
        return 0;
    }
    int rows = 0;
    char line[1024];
    while (fgets(line, sizeof line, f))
        rows++;
    rewind(f);
    long long sessions[8] = { 0 };
    for (int s = 0; s < n_sessions && s < 8; s++)
        if (db_begin_session(d, uuid, "autotune --kernel matmul", "{}", &sessions[s]) != AT_OK)
            return fclose(f), 0;
    double flops = 2.0 * (double)p.dims[0] * (double)p.dims[1] * (double)p.dims[2];
    int row = 0, ok = 1;
    while (ok && fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = '\0';
        double ms = strtod(tab + 1, &tab);
        int runs = (int)strtol(tab, NULL, 10);
        const char *status = tr_status_of(row);
        int good = strcmp(status, DB_OK) == 0;
        double t = row == 3 ? 0 : strcmp(status, DB_WRONG_RESULT) == 0 ? ms / 100 : ms;
        char err[600];
        snprintf(err, sizeof err, "%s%0500d", good ? "" : "ptxas <error> & 'more' ", row);
        ok = tr_put(d, fx, uuid, sessions[row * n_sessions / rows], "matmul", hash, p, line,
                    status, t, with_gflops && good && t > 0 ? flops / (t * 1e6) : 0, 0,
                    runs ? runs : 20, good ? NULL : err);
        row++;
    }
    fclose(f);
    return ok;
}

/* Results of a known family's first configurations at problem p, with
 * times from a formula; every seventh a compile error. */
static int tr_family_results(db *d, tr_rich *fx, const char *uuid, long long session,
                             const char *kernel, tpl_problem p, int count)
{
    const tpl_family *fam = tpl_find(kernel);
    if (!fam)
        return 0;
    long long space = tpl_space_size(fam);
    double flops = 0, bytes = 0;
    fam->work(&p, &flops, &bytes);
    int ok = 1;
    for (int i = 0; ok && i < count && i < space; i++) {
        int cfg[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN];
        tpl_config_from_index(fam, (long long)i * 104729 % space, cfg);
        tpl_config_format(fam, cfg, text, sizeof text);
        double t = 0.05 + 0.013 * ((i * 37) % 41);
        int bad = i % 7 == 6;
        ok = tr_put(d, fx, uuid, session, kernel, tpl_source_hash(fam), p, text,
                    bad ? DB_COMPILE_ERROR : DB_OK, bad ? 0 : t,
                    fam->metric_is_flops ? flops / (t * 1e6) : 0,
                    fam->metric_is_flops ? 0 : bytes / (t * 1e6), 10 + i % 5,
                    bad ? "nvrtc: error" : NULL);
    }
    return ok;
}

/* Two kernels this build does not know: one with GFLOP/s, a parameter held
 * at one value and more than 64 values of another; one with failures only. */
static int tr_unknown_kernels(db *d, tr_rich *fx, long long session)
{
    tpl_problem p = TPL_PROBLEM(2, { 640, 480 });
    int ok = 1;
    for (int i = 0; ok && i < 90; i++) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "X=%d,Y=3,Z=%s", i, i % 3 ? "a<b" : "c&d");
        double t = 1.0 + 0.01 * ((i * 53) % 97);
        ok = tr_put(d, fx, TR_UUID, i < 45 ? 0 : session, "mystery<k>", "feedfacefeedface", p,
                    cfg, DB_OK, t, 1000.0 / t, 0, 5, NULL);
    }
    for (int i = 0; ok && i < 2; i++)         /* a value no verified run had */
        ok = tr_put(d, fx, TR_UUID, session, "mystery<k>", "feedfacefeedface", p,
                    i ? "X=1,Y=3,Z=zz" : "X=2,Y=3,Z=zz", DB_WRONG_RESULT, 0.5, 2000, 0, 5,
                    "off by one");
    for (int i = 0; ok && i < 3; i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "W=%d", i);
        ok = tr_put(d, fx, TR_UUID, session, "oddity", "feedfacefeedface",
                    (tpl_problem)TPL_PROBLEM(1, { 77 }), cfg, DB_CRASHED, 0, 0, 0, 0, "signal 11");
    }
    return ok;
}

static int tr_measure_on(db *d, const char *uuid, const char *kernel, tpl_problem p,
                         const char *name, double time_ms, double gflops, double gbs)
{
    db_measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.device_uuid, sizeof m.device_uuid, "%s", uuid);
    snprintf(m.kernel, sizeof m.kernel, "%s", kernel);
    m.problem = p;
    snprintf(m.name, sizeof m.name, "%s", name);
    m.time_ms = time_ms;
    m.gflops = gflops;
    m.gbs = gbs;
    m.rel_error = -1;
    if (db_put_measurement(d, &m) == AT_OK)
        return 1;
    th_fail(__FILE__, __LINE__, "measurement %s: %s", name, db_errmsg(d));
    return 0;
}

/* Device C: an FP32 ceiling but no bandwidth; a failed default next to a
 * verified seed baseline. Device D: no ceilings, one kernel this build does
 * not know with more verified results than a trajectory draws. */
static int tr_bare_devices(db *d, tr_rich *fx)
{
    long long sc = 0, sd = 0;
    if (db_begin_session(d, TR_UUID_C, "autotune", "{}", &sc) != AT_OK ||
        db_begin_session(d, TR_UUID_D, "autotune", "{}", &sd) != AT_OK)
        return 0;
    const tpl_family *mm = tpl_find("matmul");
    tpl_problem p768 = TPL_PROBLEM(3, { 768, 768, 768 });
    int ok = mm && mm->default_config && mm->n_baselines > 0 &&
             tr_family_results(d, fx, TR_UUID_C, sc, "sum", (tpl_problem)TPL_PROBLEM(1, { 4096 }), 30) &&
             tr_family_results(d, fx, TR_UUID_C, sc, "matmul",
                               (tpl_problem)TPL_PROBLEM(3, { 512, 512, 512 }), 20) &&
             tr_put(d, fx, TR_UUID_C, sc, "matmul", tpl_source_hash(mm), p768,
                    mm->default_config, DB_TIMEOUT, 0, 0, 0, 0, "watchdog") &&
             tr_put(d, fx, TR_UUID_C, sc, "matmul", tpl_source_hash(mm), p768,
                    mm->baselines[0].config, DB_OK, 12.0, 0, 0, 9, NULL);
    for (int i = 0; ok && i < 3100; i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "A=%d,B=%d", i % 50, i / 50);
        double t = 2.0 + 0.001 * ((i * 7919) % 3001);
        ok = tr_put(d, fx, TR_UUID_D, sd, "bulk", "abcdefabcdefabcd", (tpl_problem)TPL_PROBLEM(1, { 9 }),
                    cfg, DB_OK, t, 0, 64.0 / t, 3, NULL);
    }
    return ok;
}

/* Device A (measured ceilings, hostile name), device B (theoretical
 * ceilings), devices C and D (tr_bare_devices) and device E (no clocks, no
 * results). */
static db *tr_build_rich(tr_rich *fx)
{
    memset(fx, 0, sizeof *fx);
    snprintf(fx->dir, sizeof fx->dir, "%s", th_tmpdir());
    snprintf(fx->db_path, sizeof fx->db_path, "%s/rich.db", fx->dir);
    char err[512];
    db *d = NULL;
    if (db_open(&d, fx->db_path, 1, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_open: %s", err);
        return NULL;
    }
    at_device_info a, b, c, dd, e;
    tr_device(&a, TR_UUID, "NVIDIA H200 " TR_EVIL);
    tr_device(&b, TR_UUID_B, "NVIDIA H100 80GB HBM3");
    tr_device(&c, TR_UUID_C, "Bare GPU");
    c.mem_clock_khz = 0;
    tr_device(&dd, TR_UUID_D, "Clockless GPU");
    dd.clock_khz = dd.mem_clock_khz = 0;
    tr_device(&e, TR_UUID_E, "Idle GPU");
    e.clock_khz = e.mem_clock_khz = 0;
    long long s1 = 0, s2 = 0;
    tpl_problem p4096 = TPL_PROBLEM(3, { 4096, 4096, 4096 }), p1000 = TPL_PROBLEM(3, { 1000, 1000, 1000 });
    tpl_problem pflat = TPL_PROBLEM(3, { 8192, 8192, 128 }), p2048 = TPL_PROBLEM(3, { 2048, 2048, 2048 });
    tpl_problem ptall = TPL_PROBLEM(3, { 128, 8192, 8192 }), psum = TPL_PROBLEM(1, { 1 << 20 });
    tpl_problem pdot = TPL_PROBLEM(1, { 1 << 24 }), pjac = TPL_PROBLEM(1, { 4096 });
    int ok = db_put_device(d, &a, "13.0") == AT_OK && db_put_device(d, &b, "12.8") == AT_OK &&
             db_put_device(d, &c, "12.4") == AT_OK && db_put_device(d, &dd, "") == AT_OK &&
             db_put_device(d, &e, "") == AT_OK &&
             db_begin_session(d, TR_UUID, "autotune", "{}", &s1) == AT_OK &&
             db_begin_session(d, TR_UUID_B, "autotune", "{}", &s2) == AT_OK;
    const char *mm = tpl_find("matmul") ? tpl_source_hash(tpl_find("matmul")) : "";
    ok = ok && tr_load_recording(d, fx, TR_UUID, "h200-matmul-4096-ffma.tsv", p4096, mm, 7, 1) &&
         tr_load_recording(d, fx, TR_UUID, "h200-matmul-4096.tsv", p4096, TR_OLD_HASH, 1, 1) &&
         tr_load_recording(d, fx, TR_UUID, "h200-matmul-1000x1000x1000.tsv", p1000, mm, 1, 0) &&
         tr_load_recording(d, fx, TR_UUID, "h200-matmul-8192x8192x128.tsv", pflat, mm, 2, 1) &&
         tr_load_recording(d, fx, TR_UUID_B, "h200-matmul-2048x2048x2048.tsv", p2048, mm, 1, 1) &&
         tr_load_recording(d, fx, TR_UUID_B, "h200-matmul-128x8192x8192.tsv", ptall, mm, 3, 1) &&
         tr_family_results(d, fx, TR_UUID, s1, "sum", psum, 60) &&
         tr_family_results(d, fx, TR_UUID, s1, "dot", pdot, 40) &&
         tr_family_results(d, fx, TR_UUID, s1, "jacobi", pjac, 12) &&
         tr_family_results(d, fx, TR_UUID_B, s2, "sum", psum, 20) &&
         tr_unknown_kernels(d, fx, s1) && tr_bare_devices(d, fx);
    double f4096 = 2.0 * 4096 * 4096 * 4096;
    ok = ok && tr_measure_on(d, TR_UUID, "matmul", p4096, "cublas", 2.9, f4096 / 2.9e6, 0) &&
         tr_measure_on(d, TR_UUID, "matmul", p4096, "seed_naive_cuda", 90, f4096 / 90e6, 0) &&
         tr_measure_on(d, TR_UUID, "matmul", p1000, "cublas", 0.1, 0, 0) &&
         tr_measure_on(d, TR_UUID, "matmul", p4096, "cublas-failed", 0, 0, 0) &&
         tr_measure_on(d, TR_UUID, "matmul", (tpl_problem)TPL_PROBLEM(3, { 5, 5, 5 }), "cublas", 1, 1, 0) &&
         tr_measure_on(d, TR_UUID, "sum", psum, "cub", 0.004, 0, 4.0 * (1 << 20) / 4e3) &&
         tr_measure_on(d, TR_UUID, "dot", pdot, "vendor " TR_EVIL, 0.03, 0, 0) &&
         tr_measure_on(d, TR_UUID, "device", (tpl_problem)TPL_PROBLEM(0, { 0 }), "copy_bandwidth", 0,
                       0, 4105.2) &&
         tr_measure_on(d, TR_UUID, "device", (tpl_problem)TPL_PROBLEM(0, { 0 }), "fp32_peak", 0,
                       61003.0, 0) &&
         tr_measure_on(d, TR_UUID_B, "matmul", p2048, "cublas", 0.4, 0, 0);
    if (!ok) {
        th_fail(__FILE__, __LINE__, "building the rich fixture failed");
        db_close(d);
        return NULL;
    }
    return d;
}

static const tr_group *tr_find_group(const tr_rich *fx, const char *uuid, const char *hash,
                                     long long m)
{
    for (int i = 0; i < fx->n_groups; i++)
        if (strcmp(fx->g[i].uuid, uuid) == 0 && strcmp(fx->g[i].hash, hash) == 0 &&
            strcmp(fx->g[i].kernel, "matmul") == 0 && fx->g[i].problem.dims[0] == m)
            return &fx->g[i];
    return NULL;
}

TEST(report_rich_fixture)
{
    tr_rich fx;
    db *d = tr_build_rich(&fx);
    CHECK(d);
    char out[4400], err[512] = "";
    snprintf(out, sizeof out, "%s/rich.html", fx.dir);
    at_status s = rp_write(d, out, NULL, err, sizeof err);
    CHECK_MSG(s == AT_OK, "rp_write: %s (%s)", at_status_string(s), err);
    char *html = tr_slurp(out);
    CHECK(html);
    int ok = 1;
#define TR_EXPECT(cond, ...) do { if (ok && !(cond)) { \
    th_fail(__FILE__, __LINE__, __VA_ARGS__); ok = 0; } } while (0)
    char text[TPL_CONFIG_LEN + 64];
    snprintf(text, sizeof text, "5 devices, %d results", fx.total);
    TR_EXPECT(strstr(html, text) != NULL, "\"%s\" missing", text);
    /* Every group: its best and its count of verified configurations. */
    for (int i = 0; i < fx.n_groups; i++) {
        const tr_group *g = &fx.g[i];
        if (g->n_ok == 0 || strchr(g->kernel, '<'))
            continue;
        snprintf(text, sizeof text, "<td><code>%s</code></td>", g->best);
        TR_EXPECT(strstr(html, text) != NULL, "best of %s %lld: %s missing", g->kernel,
                  g->problem.dims[0], g->best);
        snprintf(text, sizeof text, "Every configuration tried: %d ok,", g->n_ok);
        TR_EXPECT(strstr(html, text) != NULL, "\"%s\" missing (%s)", text, g->kernel);
    }
    const tr_group *g4096 = tr_find_group(&fx, TR_UUID, tpl_source_hash(tpl_find("matmul")),
                                          4096);
    TR_EXPECT(g4096 && g4096->n - g4096->n_ok > 12, "too few failures in the fixture");
    if (g4096) {
        snprintf(text, sizeof text, "and %d more.", g4096->n - g4096->n_ok - 12);
        TR_EXPECT(strstr(html, text) != NULL, "\"%s\" missing", text);
        snprintf(text, sizeof text, "compile_error %d", g4096->n_compile_error);
        TR_EXPECT(strstr(html, text) != NULL, "\"%s\" missing", text);
    }
    TR_EXPECT(strstr(html, "(current)") && strstr(html, "(an older template version)"),
              "template versions not told apart");
    TR_EXPECT(strstr(html, "Kernel not in this build of autotune"), "unknown kernel");
    TR_EXPECT(strstr(html, "Held at one value in every configuration tried: <code>Y=3"),
              "fixed parameter missing");
    TR_EXPECT(strstr(html, "No tuning results for this device."), "idle device");
    TR_EXPECT(strstr(html, "run 1<") || strstr(html, "run 2<"), "tuning runs missing");
    TR_EXPECT(strstr(html, "no run<"), "results without a tuning run");
    TR_EXPECT(strstr(html, "No roofline: "), "a device without ceilings has a roofline");
    TR_EXPECT(strstr(html, ">none ok</text>"), "a value no verified run had");
    TR_EXPECT(strstr(html, "class=\"value\">not measured</text>"),
              "a measurement without data");
    TR_EXPECT(strstr(html, "class=\"value\">timeout</text>"), "the failed default's status");
    TR_EXPECT(strstr(html, "<td>- GB/s (unknown)</td>"), "an unknown bandwidth");
    TR_EXPECT(!strstr(html, TR_EVIL) && !strstr(html, "<k>") && !strstr(html, "a<b") &&
              !strstr(html, "<error>"), "hostile text not escaped");
    TR_EXPECT(strstr(html, "mystery&lt;k&gt;") && strstr(html, "a&lt;b") &&
              strstr(html, "c&amp;d") && strstr(html, "ptxas &lt;error&gt; &amp; &#39;more"),
              "hostile text not shown escaped");
    TR_EXPECT(tr_count(html, "<svg") == tr_count(html, "</svg>") &&
              tr_count(html, "<text") == tr_count(html, "</text>") &&
              tr_count(html, "<table") == tr_count(html, "</table>") &&
              tr_count(html, "<div") == tr_count(html, "</div>") &&
              tr_count(html, "<title>") == tr_count(html, "</title>"), "unbalanced elements");
    TR_EXPECT(!tr_has_word(html, "nan") && !tr_has_word(html, "inf"), "non-finite number");
    free(html);
    /* One device by UUID: only its problems. */
    snprintf(out, sizeof out, "%s/rich-b.html", fx.dir);
    CHECK_OK(rp_write(d, out, TR_UUID_B, err, sizeof err));
    html = tr_slurp(out);
    CHECK(html);
    TR_EXPECT(strstr(html, "1 device, ") && strstr(html, "NVIDIA H100 80GB HBM3") &&
              !strstr(html, "NVIDIA H200") && !strstr(html, "mystery"), "device filter");
#undef TR_EXPECT
    free(html);
    db_close(d);
}

/* ---- the two halves of the report: figures collected from the database
 * (reports/figures.h) and the document rendered from figures alone
 * (reports/html.h) ---- */

static const rp_group *tr_group_of(const rp_device *rd, const char *kernel)
{
    for (int k = 0; k < rd->n_groups; k++)
        if (strcmp(rd->groups[k].kernel, kernel) == 0)
            return &rd->groups[k];
    return NULL;
}

static int tr_fail_count(const rp_group *g, const char *status)
{
    for (int s = 0; s < RP_N_FAIL_STATUSES; s++)
        if (strcmp(rp_fail_statuses[s], status) == 0)
            return g->fails[s];
    return -1;
}

static int tr_close(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

TEST(report_figures_collected)
{
    tr_fixture fx;
    db *d = tr_build(&fx);
    CHECK(d);
    rp_report rep;
    char err[256];
    CHECK_OK(rp_collect(d, NULL, &rep, err, sizeof err));
    CHECK_EQ(rep.n_devs, 1);
    const rp_device *rd = &rep.devs[0];
    CHECK_EQ(rep.total, rd->n_res);
    CHECK(tr_close(rd->fp32.value, fx.peak) && strcmp(rd->fp32.source, "measured") == 0);
    /* copy bandwidth is a fact; with no read bandwidth measured, the read
     * ceiling is the theoretical 2 x 2619 MHz x 5120 bits */
    CHECK(tr_close(rd->copy.value, 3012.5));
    CHECK(tr_close(rd->bandwidth.value, 2.0 * 2619e6 * 5120 / 8 / 1e9) &&
          strcmp(rd->bandwidth.source, "theoretical") == 0);
    CHECK_EQ(rd->n_groups, 3);                   /* sorted by kernel */
    CHECK_STR(rd->groups[0].kernel, "jacobi");
    CHECK_STR(rd->groups[1].kernel, "matmul");
    CHECK_STR(rd->groups[2].kernel, "sum");
    const rp_group *mm = tr_group_of(rd, "matmul"), *jc = tr_group_of(rd, "jacobi");
    const rp_group *sm = tr_group_of(rd, "sum");
    const tpl_family *fam = tpl_find("matmul");
    CHECK(mm && jc && sm && fam && mm->best >= 0);
    double flops = 2.0 * 1000 * 999 * 1001;
    CHECK_STR(mm->e[mm->best].r->config, fx.best_matmul);
    CHECK(mm->is_flops && strcmp(mm->unit, "GFLOP/s") == 0);
    CHECK(tr_close(mm->best_value, fx.best_gflops));
    CHECK(tr_close(mm->pct, 100.0 * fx.best_gflops / fx.peak));
    CHECK(tr_close(mm->cmp.vendor_best, flops / 0.2e6));
    CHECK(tr_close(mm->cmp.seed_best, flops / 30e6));   /* the baseline beats the seed */
    CHECK(tr_close(mm->cmp.default_value, flops / 2.5e6));
    CHECK(tr_close(mm->vs_vendor, fx.best_gflops / (flops / 0.2e6)));
    CHECK(tr_close(mm->vs_default, fx.best_gflops / (flops / 2.5e6)));
    CHECK_EQ(tr_fail_count(mm, DB_COMPILE_ERROR), 4);
    CHECK_EQ(tr_fail_count(mm, DB_WRONG_RESULT), 1);
    CHECK_EQ(mm->n_ok + 5, mm->n);
    /* Ranked: every verified value, fastest first, the best first. */
    CHECK_EQ(mm->n_ranked, mm->n_ok);
    CHECK(mm->ranked_kind[0] == RP_KIND_TUNED && tr_close(mm->ranked[0], mm->best_value));
    int defaults = 0, seeds = 0;
    for (int i = 0; i < mm->n_ranked; i++) {
        CHECK(i == 0 || mm->ranked[i] <= mm->ranked[i - 1]);
        defaults += mm->ranked_kind[i] == RP_KIND_DEFAULT;
        seeds += mm->ranked_kind[i] == RP_KIND_SEED;
    }
    CHECK(defaults == 1 && seeds == 1);
    /* The best configuration's parameters, as the family parses it. */
    int cfg[TPL_MAX_PARAMS];
    CHECK_OK(tpl_config_parse(fam, fx.best_matmul, cfg, err, sizeof err));
    CHECK_EQ(mm->n_params, fam->n_params);
    for (int p = 0; p < mm->n_params; p++) {
        CHECK(mm->params[p].in_best && mm->params[p].nv >= 1);
        CHECK_EQ(atoi(mm->params[p].best_value), cfg[p]);
    }
    CHECK(mm->roof.valid && tr_close(mm->roof.gflops, fx.best_gflops));
    /* Failures only; a bandwidth kernel against the read bandwidth. */
    CHECK(jc->best < 0 && jc->n_ok == 0 && tr_fail_count(jc, DB_CRASHED) == 1);
    CHECK(!sm->is_flops && strcmp(sm->unit, "GB/s") == 0 &&
          sm->ceiling.value == rd->bandwidth.value);
    CHECK(tr_close(sm->best_value, 4.0 * 1000003 / 0.02e6));
    CHECK(tr_close(sm->cmp.vendor_best, 4.0 * 1000003 / 0.015e6));
    CHECK_EQ(tr_fail_count(sm, DB_TIMEOUT), 1);
    rp_report_free(&rep);
    CHECK(rep.devs == NULL && rep.n_devs == 0);
    /* A device filter that matches nothing collects nothing. */
    CHECK_OK(rp_collect(d, "GPU-unknown", &rep, err, sizeof err));
    CHECK(rep.n_devs == 0 && rep.total == 0);
    rp_report_free(&rep);
    db_close(d);
}

/* The document from figures made here, no database: one device with a
 * hostile name, one kernel this build does not know, hostile configurations. */
TEST(report_render_without_database)
{
    db_result res[3];
    memset(res, 0, sizeof res);
    const char *cfgs[3] = { "P=1,Q=<a>", "P=2,Q=<a>", "P=3,Q=<a>" };
    for (int i = 0; i < 3; i++) {
        snprintf(res[i].config, sizeof res[i].config, "%s", cfgs[i]);
        snprintf(res[i].status, sizeof res[i].status, "%s", i == 2 ? DB_CRASHED : DB_OK);
        res[i].time_ms = i == 2 ? 0 : 2.0 - i;
        res[i].runs = 7;
        res[i].session_id = 3;
    }
    snprintf(res[2].error, sizeof res[2].error, "%s", TR_EVIL);
    rp_entry e[3] = {
        { &res[0], 1, 100.0, 1e9, RP_KIND_OTHER },
        { &res[1], 1, 200.0, 1e9 + 2, RP_KIND_TUNED },
        { &res[2], 0, 0, 1e9 + 3, RP_KIND_OTHER },
    };
    double ranked[2] = { 200.0, 100.0 };
    rp_kind kinds[2] = { RP_KIND_TUNED, RP_KIND_OTHER };
    rp_pval pv[2] = { { "1", 100.0, 1 }, { "2", 200.0, 1 } }, qv[1] = { { "<a>", 200.0, 3 } };
    rp_device dev;
    memset(&dev, 0, sizeof dev);
    tr_device(&dev.dev.info, TR_UUID, "GPU " TR_EVIL);
    dev.n_res = 3;
    dev.fp32 = (rp_ceiling){ 400.0, "measured", "FP32", "" };
    dev.bandwidth = (rp_ceiling){ 0, "unknown", "read bandwidth", "" };
    static rp_group g;
    memset(&g, 0, sizeof g);
    snprintf(g.kernel, sizeof g.kernel, "k<1>");
    snprintf(g.hash, sizeof g.hash, "feed");
    g.hash_current = -1;
    g.problem = (tpl_problem)TPL_PROBLEM(2, { 64, 32 });
    g.e = e;
    g.n = 3;
    g.n_ok = 2;
    g.best = 1;
    g.is_flops = 1;
    g.unit = "GFLOP/s";
    g.best_value = 200.0;
    g.ceiling = dev.fp32;
    g.ceiling_name = "FP32";
    g.pct = 50.0;
    g.cmp.bars[0] = (rp_bar){ "tuned (best found)", 200.0, RP_KIND_TUNED, "" };
    g.cmp.bars[1] = (rp_bar){ "vendor <v>", 0, RP_KIND_VENDOR, "" };
    g.cmp.n = 2;
    g.ranked = ranked;
    g.ranked_kind = kinds;
    g.n_ranked = 2;
    g.fails[3] = 1;                                      /* crashed */
    g.traj = (rp_trajectory){ 1, { 3 }, { 1e9 }, 3, 200.0 };
    g.params[0] = (rp_param){ "P", NULL, 1, "2", pv, 2 };
    g.params[1] = (rp_param){ "Q", NULL, 1, "<a>", qv, 1 };
    g.n_params = 2;
    dev.groups = &g;
    dev.n_groups = 1;
    rp_report rep = { &dev, 1, 3 };
    rp_buf b = { 0 };
    rp_render_html(&b, &rep, "WHEN<>", NULL, 0);
    CHECK(b.p && !b.oom);
    const char *html = b.p;
    int ok = 1;
#define TR_EXPECT(cond, ...) do { if (ok && !(cond)) { \
    th_fail(__FILE__, __LINE__, __VA_ARGS__); ok = 0; } } while (0)
    TR_EXPECT(strstr(html, "Generated WHEN<> from the tuning database: 1 device, 3 results"),
              "heading");
    TR_EXPECT(!strstr(html, TR_EVIL) && !strstr(html, "k<1>") && !strstr(html, "=<a>"),
              "outside text not escaped");
    TR_EXPECT(strstr(html, "GPU " TR_EVIL_ESC) && strstr(html, "k&lt;1&gt;") &&
              strstr(html, "P=2,Q=&lt;a&gt;") && strstr(html, "<pre class=\"err\">" TR_EVIL_ESC),
              "outside text not shown");
    TR_EXPECT(strstr(html, "<td class=\"n\">50.0%</td>"), "share of the ceiling");
    TR_EXPECT(strstr(html, "<td class=\"n\">2 / 1</td>"), "ok / failed");
    TR_EXPECT(strstr(html, "Every configuration tried: 2 ok"), "ranking");
    TR_EXPECT(strstr(html, "failed: crashed 1"), "failure count");
    TR_EXPECT(strstr(html, "run 3<"), "trajectory");
    TR_EXPECT(strstr(html, "Held at one value in every configuration tried: <code>Q=&lt;a&gt;"),
              "fixed parameter");
    TR_EXPECT(strstr(html, "No roofline"), "roofline of an unknown kernel");
    TR_EXPECT(strstr(html, ">vendor &lt;v&gt;</text>") && strstr(html, ">no data</text>"),
              "comparison");
    TR_EXPECT(tr_count(html, "<svg") == tr_count(html, "</svg>") &&
              tr_count(html, "<svg") == 5 && tr_count(html, "<div") == tr_count(html, "</div>"),
              "elements");
#undef TR_EXPECT
    free(b.p);
}
