/* test_report_browser.c: the report rendered in a real browser (headless
 * Chromium) from a database of two GPUs with several sizes per family,
 * vendor measurements and ceilings: every section present, no console
 * error, nothing wider than the page at a desktop and a narrow width, no
 * chart text on chart text; the checker shown to catch planted defects;
 * screenshots into build/report-screens/ (CI artifacts). CPU tier. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "db.h"
#include "harness.h"
#include "figures.h"
#include "report.h"

extern const tpl_family tpl_matmul, tpl_tcgemm, tpl_sum, tpl_dot, tpl_jacobi;

typedef struct rb_gpu {
    const char *uuid, *name;
    int mem_clock_khz, mem_bus_bits;
    double speed;                       /* this GPU's results relative to the first */
} rb_gpu;

static const rb_gpu rb_gpus[2] = {
    { "GPU-11111111-2222-3333-4444-555555555555", "NVIDIA H200", 3201000, 6144, 1.0 },
    { "GPU-66666666-7777-8888-9999-000000000000", "NVIDIA H100 80GB HBM3", 2619000, 5120, 0.7 },
};

/* One tuned problem of the fixture: its best time on the first GPU and
 * the vendor library's (0: none measured; -1: "not found" note). */
typedef struct rb_problem {
    const tpl_family *fam;
    const char *text;
    double best_ms, vendor_ms;
    const char *vendor;
} rb_problem;

static const rb_problem rb_problems[] = {
    { &tpl_matmul, "1024x1024x1024", 0.070, 0.066, "cublas" },
    { &tpl_matmul, "2048x2048x2048", 0.380, 0.390, "cublas" },
    { &tpl_matmul, "4096x4096x4096", 2.65, 2.70, "cublas" },
    { &tpl_tcgemm, "4096x4096x4096:bf16", 0.181, 0.178, "cublas" },
    { &tpl_tcgemm, "8192x8192x1024:bf16", 0.196, 0.197, "cublas" },
    { &tpl_tcgemm, "4096x4096x4096:tf32", 0.360, -1, "cublas" },
    { &tpl_sum, "1024", 0.0041, 0.0044, "cub" },
    { &tpl_sum, "65536", 0.0056, 0.0061, "cub" },
    { &tpl_sum, "1048576", 0.0068, 0.0089, "cub" },
    { &tpl_sum, "16777216", 0.0256, 0.0278, "cub" },
    { &tpl_sum, "268435456", 0.2400, 0.2455, "cub" },
    { &tpl_dot, "1048576", 0.0090, 0.0120, "cublas" },
    { &tpl_dot, "268435456", 0.4800, 0.4950, "cub" },
    { &tpl_jacobi, "1024", 0.126, 0, NULL },
    { &tpl_jacobi, "4096", 1.90, 0, NULL },
};
#define RB_N_PROBLEMS ((int)(sizeof rb_problems / sizeof rb_problems[0]))

static void rb_metric(const tpl_family *fam, const tpl_problem *p, double ms, double *gflops,
                      double *gbs)
{
    double flops = 0, bytes = 0;
    fam->work(p, &flops, &bytes);
    *gflops = fam->metric_is_flops ? flops / (ms * 1e6) : 0;
    *gbs = fam->metric_is_flops ? 0 : bytes / (ms * 1e6);
}

static int rb_result(db *d, const rb_gpu *gpu, long long session, const tpl_family *fam,
                     const tpl_problem *p, const char *config, double ms)
{
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", gpu->uuid);
    snprintf(r.kernel, sizeof r.kernel, "%s", fam->name);
    snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(fam));
    r.problem = *p;
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.status, sizeof r.status, "%s", DB_OK);
    r.time_ms = ms;
    r.time_min_ms = ms * 0.98;
    r.time_max_ms = ms * 1.04;
    r.runs = 40;
    rb_metric(fam, p, ms, &r.gflops, &r.gbs);
    r.rel_error = 1e-7;
    r.session_id = session;
    return db_store_result(d, &r) == AT_OK;
}

static int rb_measure(db *d, const rb_gpu *gpu, const char *kernel, const tpl_problem *p,
                      const char *name, double ms, double gflops, double gbs, const char *note)
{
    db_measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.device_uuid, sizeof m.device_uuid, "%s", gpu->uuid);
    snprintf(m.kernel, sizeof m.kernel, "%s", kernel);
    m.problem = *p;
    snprintf(m.name, sizeof m.name, "%s", name);
    m.time_ms = ms;
    m.gflops = gflops;
    m.gbs = gbs;
    m.rel_error = -1;
    snprintf(m.note, sizeof m.note, "%s", note);
    return db_put_measurement(d, &m) == AT_OK;
}

/* The device's ceilings as the tuner stores them. */
static int rb_ceilings(db *d, const rb_gpu *g)
{
    tpl_problem one = TPL_PROBLEM(1, {1});
    return rb_measure(d, g, "device", &one, "launch_floor", 0.0027, 0, 0, "empty kernel") &&
           rb_measure(d, g, "device", &one, "read_bandwidth", 0.25, 0, 4460 * g->speed,
                      "read-only kernel") &&
           rb_measure(d, g, "device", &one, "copy_bandwidth", 0.5, 0, 4190 * g->speed,
                      "cuMemcpyDtoDAsync") &&
           rb_measure(d, g, "device", &one, "fp32_peak", 8.7, 65000 * g->speed, 0, "FMA") &&
           rb_measure(d, g, "device", &one, "fp64_peak", 4.2, 33000 * g->speed, 0, "FMA");
}

/* Every problem of the fixture on one GPU: the default, a seed, four other
 * configurations, the best, and the vendor measurement. */
static int rb_gpu_results(db *d, const rb_gpu *g, long long session)
{
    for (int i = 0; i < RB_N_PROBLEMS; i++) {
        const rb_problem *q = &rb_problems[i];
        tpl_problem p;
        char err[256], cfg[TPL_CONFIG_LEN];
        if (tpl_problem_parse(q->text, &p, err, sizeof err) != AT_OK)
            return 0;
        double best = q->best_ms / g->speed;
        int ok = rb_result(d, g, session, q->fam, &p, q->fam->default_config, best * 1.6);
        if (ok && q->fam->n_baselines > 0)
            ok = rb_result(d, g, session, q->fam, &p, q->fam->baselines[0].config, best * 3.1);
        long long space = tpl_space_size(q->fam);
        for (int k = 0; ok && k < 5; k++) {
            int c[TPL_MAX_PARAMS];
            tpl_config_from_index(q->fam, (k * 7919LL + i * 104729LL) % space, c);
            tpl_config_format(q->fam, c, cfg, sizeof cfg);
            ok = rb_result(d, g, session, q->fam, &p, cfg, k == 0 ? best : best * (1.1 + 0.2 * k));
        }
        if (!ok)
            return 0;
        if (q->vendor_ms > 0) {
            double gf, gb;
            rb_metric(q->fam, &p, q->vendor_ms / g->speed, &gf, &gb);
            ok = rb_measure(d, g, q->fam->name, &p, q->vendor, q->vendor_ms / g->speed, gf, gb,
                            "vendor call, version");
        } else if (q->vendor_ms < 0) {
            ok = rb_measure(d, g, q->fam->name, &p, q->vendor, 0, 0, 0,
                            "cuBLAS not found (libcublas.so.13, .12, .11 or libcublas.so)");
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* Writes the two-GPU database at path; 0 on failure (reason printed). */
static int rb_build(const char *path)
{
    char err[512];
    db *d = NULL;
    if (db_open(&d, path, DB_OPEN_CREATE, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_open: %s", err);
        return 0;
    }
    int ok = 1;
    for (int i = 0; ok && i < 2; i++) {
        const rb_gpu *g = &rb_gpus[i];
        at_device_info info;
        memset(&info, 0, sizeof info);
        snprintf(info.uuid, sizeof info.uuid, "%s", g->uuid);
        snprintf(info.name, sizeof info.name, "%s", g->name);
        snprintf(info.arch, sizeof info.arch, "sm_90");
        info.cc_major = 9;
        info.sm_count = 132;
        info.memory_bytes = 150000000000LL;
        info.l2_bytes = 52428800;
        info.clock_khz = 1980000;
        info.mem_clock_khz = g->mem_clock_khz;
        info.mem_bus_bits = g->mem_bus_bits;
        info.driver_version = 13000;
        long long session = 0;
        ok = db_put_device(d, &info, "13.0") == AT_OK &&
             db_begin_session(d, g->uuid, "autotune --device 0", "{}", &session) == AT_OK &&
             rb_ceilings(d, g) && rb_gpu_results(d, g, session) &&
             db_end_session(d, session, "{}", "complete") == AT_OK;
    }
    if (!ok)
        th_fail(__FILE__, __LINE__, "building the fixture: %s", db_errmsg(d));
    db_close(d);
    return ok;
}

/* ---- the browser ---- */

/* In <head>: records errors (scripts, failed loads) before the page loads. */
static const char rb_head_js[] =
    "<script>window.AT_ERRORS=[];window.addEventListener('error',function(e){"
    "AT_ERRORS.push('error: '+(e.message||((e.target&&(e.target.src||e.target.href))||"
    "'a resource')))},true);(function(){var ce=console.error;console.error=function(){"
    "AT_ERRORS.push('console.error: '+Array.prototype.join.call(arguments,' '));"
    "return ce.apply(console,arguments)}})();</script>";

/* Before </body>: the checks, on the page and on three planted defects
 * (a too wide element, a section gone, a chart label on another). */
static const char rb_check_js[] =
    "<script>(function(){"
    "function clipped(e){for(var p=e.parentElement;p&&p!==document.body;p=p.parentElement){"
    "var o=getComputedStyle(p).overflowX;if(o=='auto'||o=='scroll'||o=='hidden')return true}"
    "return false}"
    "function overlap(a,b){var x=Math.min(a.right,b.right)-Math.max(a.left,b.left),"
    "y=Math.min(a.bottom,b.bottom)-Math.max(a.top,b.top);if(x<=1||y<=1)return false;"
    "return x*y>0.2*Math.min(a.width*a.height,b.width*b.height)}"
    "var W0=parseInt((location.search.match(/w=([0-9]+)/)||[])[1]||'0');"
    "if(W0)document.documentElement.style.width=W0+'px';"
    "function check(){var f=[];"
    "AT_EXPECT.forEach(function(id){if(!document.getElementById(id))f.push('missing section #'+id)});"
    "var W=W0||document.documentElement.clientWidth;"
    "var SW=W0?document.body.scrollWidth:document.documentElement.scrollWidth;"
    "if(SW>W+1)f.push('page wider than the window: '+SW+' > '+W);"
    "var all=document.body.getElementsByTagName('*');"
    "for(var i=0;i<all.length&&f.length<30;i++){var e=all[i];"
    "if(e.closest('svg')&&e.tagName.toLowerCase()!='svg')continue;"
    "var r=e.getBoundingClientRect();if(!r.width&&!r.height)continue;"
    "if(r.right>W+1&&!clipped(e))f.push('wider than the page: <'+e.tagName.toLowerCase()+"
    "(e.id?' id='+e.id:'')+'> to '+Math.round(r.right)+' of '+W)}"
    "var svgs=document.querySelectorAll('svg.chart');"
    "for(var s=0;s<svgs.length&&f.length<30;s++){var sr=svgs[s].getBoundingClientRect(),"
    "t=[],ts=svgs[s].querySelectorAll('text');"
    "for(var k=0;k<ts.length;k++){if(ts[k].getAttribute('transform'))continue;"
    "var tr=ts[k].getBoundingClientRect();if(!tr.width)continue;t.push([tr,ts[k].textContent]);"
    "if(tr.left<sr.left-1||tr.right>sr.right+1)f.push('chart text outside its chart: \"'+"
    "ts[k].textContent+'\" in '+svgs[s].getAttribute('aria-label'))}"
    "for(var a=0;a<t.length;a++)for(var b=a+1;b<t.length;b++)if(overlap(t[a][0],t[b][0]))"
    "f.push('chart texts overlap: \"'+t[a][1]+'\" and \"'+t[b][1]+'\" in '+"
    "svgs[s].getAttribute('aria-label'))}"
    "document.querySelectorAll('[src],link[href]').forEach(function(e){"
    "f.push('fetches '+(e.getAttribute('src')||e.getAttribute('href')))});"
    "return f.concat(AT_ERRORS)}"
    "var out=['page\\t'+check().join(' | ')];"
    "var d=document.createElement('div');d.style.width='3000px';d.textContent='planted';"
    "document.querySelector('main').appendChild(d);out.push('wide\\t'+check().join(' | '));"
    "d.remove();"
    "var sec=document.getElementById(AT_EXPECT[AT_EXPECT.length-1]);sec.removeAttribute('id');"
    "out.push('missing\\t'+check().join(' | '));sec.id=AT_EXPECT[AT_EXPECT.length-1];"
    "var tx=document.querySelector('svg.chart text.title');var c=tx.cloneNode(true);"
    "tx.parentNode.appendChild(c);out.push('overlap\\t'+check().join(' | '));c.remove();"
    "var pre=document.createElement('pre');pre.id='at-check';"
    "pre.textContent='\\n'+out.join('\\n')+'\\n';document.body.appendChild(pre)})();</script>";

/* The Chromium binary: Debian's real one, else one on the PATH; NULL if none. */
static const char *rb_chromium(void)
{
    static const char *const paths[] = {
        "/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (access(paths[i], X_OK) == 0)
            return paths[i];
    return NULL;
}

/* Runs Chromium headless on url at width x height with args (--dump-dom or
 * --screenshot=...); its stdout+stderr in *out. The exit status. */
static int rb_run(const char *chromium, const char *dir, const char *args, int width, int height,
                  const char *url, char **out)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "timeout 60 '%s' --headless --no-sandbox --disable-gpu --no-first-run --no-zygote "
             "--hide-scrollbars --user-data-dir='%s/profile' --enable-logging=stderr --v=0 "
             "--window-size=%d,%d %s '%s'", chromium, dir, width, height, args, url);
    return th_run(cmd, out);
}

static char *rb_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf)
        buf[fread(buf, 1, (size_t)n, f)] = '\0';
    fclose(f);
    return buf;
}

/* The report with the checks injected and the sections it must have. */
static int rb_check_page(const char *html, const char *path, int n_groups[2])
{
    const char *head = strstr(html, "<head>"), *body = strstr(html, "</body>");
    FILE *f = fopen(path, "wb");
    if (!head || !body || !f) {
        if (f)
            fclose(f);
        return 0;
    }
    head += strlen("<head>");
    fwrite(html, 1, (size_t)(head - html), f);
    fputs(rb_head_js, f);
    fwrite(head, 1, (size_t)(body - head), f);
    fputs("<script>window.AT_EXPECT=['glance','glance-devices','glance-d0','glance-d1',"
          "'contents','d0','d0-summary','d1','d1-summary'", f);
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < n_groups[d]; k++)
            fprintf(f, ",'d%dg%d'", d, k);
    fputs("];</script>", f);
    fputs(rb_check_js, f);
    fputs(body, f);
    return fclose(f) == 0;
}

/* The findings of one line of the checker's output ("" if none); NULL if absent. */
static const char *rb_line(const char *dom, const char *tag, char *out, size_t len)
{
    const char *pre = strstr(dom, "id=\"at-check\">");
    char key[32];
    snprintf(key, sizeof key, "\n%s\t", tag);
    const char *p = pre ? strstr(pre, key) : NULL;
    if (!p)
        return NULL;
    p += strlen(key);
    size_t n = strcspn(p, "\n");
    if (n >= len)
        n = len - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

/* One width: the page has no findings, each planted defect is found, and
 * the browser logged no console message; the same launch writes the
 * screenshot png (the checks run, and undo their planted defects, at load).
 * Headless Chromium's window is at least 500 px wide: below that the page's
 * root element is given the width (the URL's ?w=), so layout, checks and
 * the screenshot's crop all see it. */
static void rb_check_width(const char *chromium, const char *dir, const char *url, int width,
                           const char *png)
{
    char *out = NULL, line[4096], args[4600];
    snprintf(args, sizeof args, "--dump-dom --screenshot='%s'", png);
    unlink(png);
    int rc = rb_run(chromium, dir, args, width, 1600, url, &out);
    CHECK_MSG(rc == 0 && out && strstr(out, "id=\"at-check\""),
              "chromium --dump-dom at width %d: exit %d, no checker output:\n%.2000s", width, rc,
              out ? out : "");
    const char *console = strstr(out, ":CONSOLE");
    if (console) {
        snprintf(line, sizeof line, "%.300s", console);
        free(out);
        CHECK_MSG(0, "width %d: console message: %s", width, line);
    }
    const char *page = rb_line(out, "page", line, sizeof line);
    int clean = page && !page[0];
    if (!clean) {
        char why[4096];
        snprintf(why, sizeof why, "%s", page ? page : "no page line");
        free(out);
        CHECK_MSG(0, "width %d: %s", width, why);
    }
    int wide = rb_line(out, "wide", line, sizeof line) && strstr(line, "wider than the page");
    int missing = rb_line(out, "missing", line, sizeof line) && strstr(line, "missing section");
    int overlap = rb_line(out, "overlap", line, sizeof line) && strstr(line, "overlap");
    free(out);
    CHECK_MSG(wide && missing && overlap,
              "width %d: a planted defect went unnoticed (wide %d, missing %d, overlap %d)", width,
              wide, missing, overlap);
    struct stat st;
    CHECK_MSG(stat(png, &st) == 0 && st.st_size > 10000, "no screenshot %s", png);
}

/* The report from the section that starts with marker on: the page up to
 * <main>, then the section and everything after it (a screenshot starts
 * there). 0 if the marker is not in the report. */
static int rb_section_page(const char *report, const char *marker, const char *path)
{
    char *html = rb_slurp(report);
    const char *main_at = html ? strstr(html, "<main>") : NULL;
    const char *at = html ? strstr(html, marker) : NULL;
    FILE *f = main_at && at ? fopen(path, "wb") : NULL;
    if (f) {
        fwrite(html, 1, (size_t)(main_at - html) + strlen("<main>"), f);
        fputs(at, f);
        fclose(f);
    }
    free(html);
    return f != NULL;
}

TEST(report_browser_every_section_no_overflow_no_overlap)
{
    const char *chromium = rb_chromium();
    if (!chromium) {
        th_skip("Chromium not installed (Debian package chromium; .ci/run installs it)");
        return;
    }
    char dir[4200], db_path[4300], report[4300], checked[4300], url[4700], shots[4300];
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(db_path, sizeof db_path, "%s/two-gpus.db", dir);
    snprintf(report, sizeof report, "%s/report.html", dir);
    snprintf(checked, sizeof checked, "%s/checked.html", dir);
    if (!rb_build(db_path))
        return;
    char err[512] = "";
    db *d = NULL;
    CHECK_OK(db_open(&d, db_path, DB_OPEN_READONLY, err, sizeof err));
    at_status s = rp_write(d, report, NULL, err, sizeof err);
    db_close(d);
    CHECK_MSG(s == AT_OK, "rp_write: %s", err);
    char *html = rb_slurp(report);
    CHECK(html);
    int n_groups[2] = { RB_N_PROBLEMS, RB_N_PROBLEMS };
    int ok = rb_check_page(html, checked, n_groups);
    free(html);
    CHECK_MSG(ok, "could not write %s", checked);
    /* screenshots (CI artifacts) under the build folder, made absolute */
    char cwd[2048] = "";
    const char *build = th_build_dir();
    if (build[0] != '/' && !getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    snprintf(shots, sizeof shots, "%s%s%s/report-screens", cwd, cwd[0] ? "/" : "", build);
    mkdir(shots, 0755);
    char png[4500];
    snprintf(url, sizeof url, "file://%s", checked);
    snprintf(png, sizeof png, "%s/first-screen-desktop.png", shots);
    rb_check_width(chromium, dir, url, 1280, png);
    if (th_failed())
        return;
    snprintf(url, sizeof url, "file://%s?w=375", checked);
    snprintf(png, sizeof png, "%s/first-screen-narrow.png", shots);
    rb_check_width(chromium, dir, url, 375, png);
    if (th_failed())
        return;
    /* one problem's section: the report cut to start there */
    char section[4400], args[4600], *out = NULL;
    snprintf(section, sizeof section, "%s/section.html", dir);
    CHECK_MSG(rb_section_page(report, "<h3 id=\"d0g6\">", section), "no section d0g6");
    snprintf(png, sizeof png, "%s/problem-section.png", shots);
    snprintf(args, sizeof args, "--screenshot='%s'", png);
    snprintf(url, sizeof url, "file://%s", section);
    unlink(png);
    int rc = rb_run(chromium, dir, args, 1280, 2000, url, &out);
    free(out);
    struct stat st;
    CHECK_MSG(rc == 0 && stat(png, &st) == 0 && st.st_size > 10000, "screenshot %s: exit %d",
              png, rc);
}

/* The same database without a browser: the figures behind the first
 * screen and the summary, against the fixture's own numbers. */
TEST(report_two_gpus_vendor_on_every_row_nothing_above_its_ceiling)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/two-gpus.db", th_tmpdir());
    if (!rb_build(path))
        return;
    db *d = NULL;
    CHECK_OK(db_open(&d, path, DB_OPEN_READONLY, err, sizeof err));
    rp_report rep;
    at_status s = rp_collect(d, NULL, &rep, err, sizeof err);
    db_close(d);
    CHECK_MSG(s == AT_OK, "rp_collect: %s", err);
    CHECK_EQ(rep.n_devs, 2);
    for (int i = 0; i < 2; i++) {
        const rp_device *rd = &rep.devs[i];
        const rb_gpu *g = &rb_gpus[i];
        CHECK_EQ(rd->n_groups, RB_N_PROBLEMS);
        CHECK(rd->floor_ms == 0.0027);
        /* sum and dot of 2^28 read 4474 GB/s x speed, above the stored 4460 x speed:
         * the read ceiling falls back to 2 x memory clock x bus width */
        double theory = 2.0 * g->mem_clock_khz * 1e3 * g->mem_bus_bits / 8 / 1e9;
        CHECK_MSG(strcmp(rd->bandwidth.source, "theoretical") == 0 &&
                      fabs(rd->bandwidth.value - theory) < 1e-6 * theory &&
                      strstr(rd->bandwidth.note, "below ") && strstr(rd->bandwidth.note, " 268435456"),
                  "read ceiling %g (%s: %s)", rd->bandwidth.value, rd->bandwidth.source,
                  rd->bandwidth.note);
        CHECK(strcmp(rd->fp32.source, "measured") == 0 && rd->fp32.value == 65000 * g->speed);
        for (int k = 0; k < rd->n_groups; k++) {
            const rp_group *gr = &rd->groups[k];
            char prob[96];
            tpl_problem_format(&gr->problem, prob, sizeof prob);
            CHECK_MSG(gr->vs_vendor > 0 || gr->vendor_note[0], "%s %s: no vendor ratio or note",
                      gr->kernel, prob);
            CHECK_MSG(gr->latency_bound || (gr->pct > 0 && gr->pct <= 100), "%s %s: %.1f%%",
                      gr->kernel, prob, gr->pct);
            const rb_problem *q = NULL;
            for (int j = 0; j < RB_N_PROBLEMS; j++) {
                tpl_problem p;
                if (strcmp(rb_problems[j].fam->name, gr->kernel) == 0 &&
                    tpl_problem_parse(rb_problems[j].text, &p, err, sizeof err) == AT_OK &&
                    tpl_problem_equal(&p, &gr->problem))
                    q = &rb_problems[j];
            }
            CHECK_MSG(q, "%s %s is not in the fixture", gr->kernel, prob);
            if (q->vendor_ms > 0)
                CHECK_MSG(fabs(gr->vs_vendor - q->vendor_ms / q->best_ms) < 1e-9,
                          "%s %s: vs vendor %g, want %g", gr->kernel, prob, gr->vs_vendor,
                          q->vendor_ms / q->best_ms);
            else if (q->vendor_ms < 0)
                CHECK(strstr(gr->vendor_note, "cuBLAS not found") != NULL);
            else
                CHECK(strstr(gr->vendor_note, "no vendor call for jacobi") != NULL);
            /* latency-bound: the time at the ceiling is below the floor */
            double at_ceiling = q->best_ms / g->speed * gr->best_value / gr->ceiling.value;
            CHECK_EQ(gr->latency_bound, at_ceiling < 0.0027);
        }
    }
    /* sum of 1024 floats is latency-bound: 0.0041 ms over the 0.0027 ms floor */
    const rp_device *rd = &rep.devs[0];
    for (int k = 0; k < rd->n_groups; k++)
        if (strcmp(rd->groups[k].kernel, "sum") == 0 && rd->groups[k].problem.dims[0] == 1024)
            CHECK(rd->groups[k].latency_bound &&
                  fabs(rd->groups[k].floor_ratio - 0.0041 / 0.0027) < 1e-9);
    rp_report_free(&rep);
}
