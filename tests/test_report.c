/* test_report.c: CPU-tier tests of the HTML report (reports/report.c) on a
 * fixture database: self-contained, escaped, well-formed, error statuses. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "db.h"
#include "harness.h"
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
