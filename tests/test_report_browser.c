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
#include "overview.h"
#include "report.h"

extern const tpl_family tpl_matmul, tpl_tcgemm, tpl_dgemm, tpl_bgemm, tpl_sum, tpl_dot, tpl_jacobi;

typedef struct rb_gpu {
    const char *uuid, *name;
    int mem_clock_khz, mem_bus_bits;
    double speed;                       /* this GPU's results relative to the first */
} rb_gpu;

static const rb_gpu rb_gpus[2] = {
    { "GPU-11111111-2222-3333-4444-555555555555", "NVIDIA H200", 3201000, 6144, 1.0 },
    { "GPU-66666666-7777-8888-9999-000000000000", "NVIDIA H100 80GB HBM3", 2619000, 5120, 0.7 },
};

/* One tuned problem of the fixture: the best time and the fastest vendor
 * library's of the H200's default run of 2026-11-28 (commit b9e6adb,
 * bench/results/2026-11-28-H200-default-run-s16.txt; 0: no vendor call),
 * and the row of the first screen's table it belongs to. The second GPU
 * runs every problem 0.7 times as fast, tunes no FP16 GEMM and no FP64
 * Jacobi (so its table shows those kinds as untuned) and has no cuBLAS for
 * TF32 (a "not found" note). */
typedef struct rb_problem {
    const tpl_family *fam;
    const char *text;
    double best_ms, vendor_ms;
    const char *vendor;
    const char *row;
} rb_problem;

static const rb_problem rb_problems[] = {
    { &tpl_matmul, "1024x1024x1024", 0.0593, 0.06653, "cublas", "FP32 GEMM" },
    { &tpl_matmul, "2048x2048x2048", 0.3472, 0.3492, "cublas", "FP32 GEMM" },
    { &tpl_matmul, "4096x4096x4096", 2.6609, 2.711, "cublas", "FP32 GEMM" },
    { &tpl_matmul, "1000x1000x1000", 0.0609, 0.06595, "cublas", "FP32 GEMM" },
    { &tpl_matmul, "8192x8192x128", 0.4289, 0.4745, "cublas", "FP32 GEMM" },
    { &tpl_matmul, "128x8192x8192", 0.3638, 0.3441, "cublas", "FP32 GEMM" },
    { &tpl_matmul, "8192x64x8192", 0.2095, 0.2205, "cublas", "FP32 GEMM" },
    { &tpl_matmul, "4096x4096x4096:NT", 2.7359, 2.735, "cublas", "FP32 GEMM NT" },
    { &tpl_sum, "1024", 0.0037, 0.004672, "cub", "FP32 sum" },
    { &tpl_sum, "4096", 0.004, 0.004032, "cub", "FP32 sum" },
    { &tpl_sum, "16384", 0.005, 0.007104, "cub", "FP32 sum" },
    { &tpl_sum, "65536", 0.0049, 0.007136, "cub", "FP32 sum" },
    { &tpl_sum, "262144", 0.0054, 0.007376, "cub", "FP32 sum" },
    { &tpl_sum, "1048576", 0.0068, 0.0088, "cub", "FP32 sum" },
    { &tpl_sum, "4194304", 0.0108, 0.01328, "cub", "FP32 sum" },
    { &tpl_sum, "16777216", 0.0254, 0.02816, "cub", "FP32 sum" },
    { &tpl_sum, "67108864", 0.0676, 0.07291, "cub", "FP32 sum" },
    { &tpl_sum, "268435456", 0.2404, 0.251, "cub", "FP32 sum" },
    { &tpl_sum, "1000003", 0.0068, 0.009008, "cub", "FP32 sum" },
    { &tpl_sum, "1048576:f64", 0.0082, 0.01042, "cub", "FP64 sum" },
    { &tpl_sum, "134217728:f64", 0.2448, 0.251, "cub", "FP64 sum" },
    { &tpl_dot, "1024", 0.0039, 0.005152, "cub", "FP32 dot" },
    { &tpl_dot, "4096", 0.0043, 0.004256, "cub", "FP32 dot" },
    { &tpl_dot, "16384", 0.0048, 0.00712, "cublas", "FP32 dot" },
    { &tpl_dot, "65536", 0.0052, 0.007936, "cublas", "FP32 dot" },
    { &tpl_dot, "262144", 0.0058, 0.008896, "cub", "FP32 dot" },
    { &tpl_dot, "1048576", 0.0083, 0.01075, "cub", "FP32 dot" },
    { &tpl_dot, "4194304", 0.0158, 0.01918, "cub", "FP32 dot" },
    { &tpl_dot, "16777216", 0.038, 0.04427, "cub", "FP32 dot" },
    { &tpl_dot, "67108864", 0.1273, 0.1357, "cub", "FP32 dot" },
    { &tpl_dot, "268435456", 0.4722, 0.4915, "cub", "FP32 dot" },
    { &tpl_dot, "1000003", 0.0081, 0.01074, "cub", "FP32 dot" },
    { &tpl_dot, "1048576:f64", 0.0108, 0.01304, "cub", "FP64 dot" },
    { &tpl_dot, "134217728:f64", 0.4782, 0.4882, "cub", "FP64 dot" },
    { &tpl_jacobi, "1024", 0.1352, 0, NULL, "FP32 Jacobi" },
    { &tpl_jacobi, "4096", 0.3437, 0, NULL, "FP32 Jacobi" },
    { &tpl_jacobi, "8192", 0.954, 0, NULL, "FP32 Jacobi" },
    { &tpl_jacobi, "16384", 3.5511, 0, NULL, "FP32 Jacobi" },
    { &tpl_jacobi, "8192:f64", 4.1311, 0, NULL, "FP64 Jacobi" },
    { &tpl_tcgemm, "4096x4096x4096:bf16", 0.1779, 0.1734, "cublas", "BF16 GEMM" },
    { &tpl_tcgemm, "4097x4097x4097:bf16", 0.2871, 1.017, "cublas", "BF16 GEMM" },
    { &tpl_tcgemm, "8192x8192x1024:bf16", 0.1944, 0.1937, "cublas", "BF16 GEMM" },
    { &tpl_tcgemm, "4096x4096x4096:f16", 0.1829, 0.1778, "cublas", "FP16 GEMM" },
    { &tpl_tcgemm, "4097x4097x4097:f16", 0.3054, 1.034, "cublas", "FP16 GEMM" },
    { &tpl_tcgemm, "8192x8192x1024:f16", 0.1989, 0.1997, "cublas", "FP16 GEMM" },
    { &tpl_tcgemm, "4096x4096x4096:tf32", 0.3371, 0.3635, "cublas", "TF32 GEMM" },
    { &tpl_tcgemm, "4097x4097x4097:tf32", 0.5239, 1.192, "cublas", "TF32 GEMM" },
    { &tpl_tcgemm, "8192x8192x1024:tf32", 0.3831, 0.4297, "cublas", "TF32 GEMM" },
    { &tpl_dgemm, "4096x4096x4096:f64", 2.4317, 2.41, "cublas", "FP64 GEMM" },
    { &tpl_dgemm, "1024x1024x1024:f64", 0.049, 0.04394, "cublas", "FP64 GEMM" },
    { &tpl_bgemm, "16x16x16:b16384", 0.0235, 0.04595, "cublas", "batched FP32 GEMM" },
    { &tpl_bgemm, "16x16x16:f64:b16384", 0.0334, 0.0633, "cublas", "batched FP64 GEMM" },
};
#define RB_N_PROBLEMS ((int)(sizeof rb_problems / sizeof rb_problems[0]))

/* The first GPU's first-screen table: a row per family and kind, in the
 * order of what users run (GEMM by type, batched, reductions, Jacobi). */
static const char *const rb_rows[] = {
    "BF16 GEMM", "FP16 GEMM", "TF32 GEMM", "FP32 GEMM", "FP32 GEMM NT", "FP64 GEMM",
    "batched FP32 GEMM", "batched FP64 GEMM", "FP32 sum", "FP64 sum", "FP32 dot", "FP64 dot",
    "FP32 Jacobi", "FP64 Jacobi",
};
#define RB_N_ROWS ((int)(sizeof rb_rows / sizeof rb_rows[0]))

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
           rb_measure(d, g, "device", &one, "read_bandwidth", 0.25, 0, 4464 * g->speed,
                      "read-only kernel") &&
           rb_measure(d, g, "device", &one, "copy_bandwidth", 0.5, 0, 4192 * g->speed,
                      "cuMemcpyDtoDAsync") &&
           rb_measure(d, g, "device", &one, "fp32_peak", 8.7, 65206 * g->speed, 0, "FMA") &&
           rb_measure(d, g, "device", &one, "fp64_peak", 4.2, 33338 * g->speed, 0, "FMA");
}

/* 1 if GPU g tuned problem q: the first every one, the second all but
 * FP16 GEMM and FP64 Jacobi. */
static int rb_on_gpu(const rb_gpu *g, const rb_problem *q)
{
    return g == &rb_gpus[0] ||
           (strcmp(q->row, "FP16 GEMM") != 0 && strcmp(q->row, "FP64 Jacobi") != 0);
}

/* The number of problems GPU g tuned. */
static int rb_count_on(const rb_gpu *g)
{
    int n = 0;
    for (int i = 0; i < RB_N_PROBLEMS; i++)
        n += rb_on_gpu(g, &rb_problems[i]);
    return n;
}

/* Every problem of the fixture on one GPU: the default, a seed, four other
 * configurations, the best, and the vendor measurement. */
static int rb_gpu_results(db *d, const rb_gpu *g, long long session)
{
    for (int i = 0; i < RB_N_PROBLEMS; i++) {
        const rb_problem *q = &rb_problems[i];
        if (!rb_on_gpu(g, q))
            continue;
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
        if (g != &rb_gpus[0] && strstr(q->text, ":tf32")) {
            ok = rb_measure(d, g, q->fam->name, &p, "cublas", 0, 0, 0,
                            "cuBLAS not found (libcublas.so.13, .12, .11 or libcublas.so)");
        } else if (q->vendor_ms > 0) {
            double gf, gb;
            rb_metric(q->fam, &p, q->vendor_ms / g->speed, &gf, &gb);
            ok = rb_measure(d, g, q->fam->name, &p, q->vendor, q->vendor_ms / g->speed, gf, gb,
                            "vendor call, version");
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
    /* the first screen (desktop): the per-family table within 1100 px, its rows */
    "if(!W0){var ov=document.getElementById('overview-d0');"
    "if(!ov)f.push('no per-family table');else{"
    "var ob=ov.getBoundingClientRect().bottom+window.scrollY;"
    "if(ob>1100)f.push('first screen: the per-family table ends at '+Math.round(ob)+' px');"
    "var got=[];for(var q=1;q<ov.rows.length;q++)got.push(ov.rows[q].cells[0].firstChild.textContent);"
    "if(got.join('|')!=AT_ROWS.join('|'))f.push('first screen rows: '+got.join('|'))}}"
    /* charts by size: floor under the ceiling, the key as its line, one x per size */
    "var sz=document.querySelectorAll('svg.chart[aria-label*=\"by size\"]');"
    "for(var s=0;s<sz.length;s++){var g=sz[s],nm=g.getAttribute('aria-label'),"
    "cl=g.querySelector('line.ceiling'),fp=g.querySelector('path.floor');"
    "if(cl&&fp){var cy=+cl.getAttribute('y1'),nu=fp.getAttribute('d').match(/-?[0-9.]+/g);"
    "for(var k=1;k<nu.length;k+=2)if(+nu[k]<cy-0.5){f.push('launch floor above the ceiling in '+nm);break}}"
    "if(cl){var kl=[].filter.call(g.querySelectorAll('text'),function(e){return e.textContent=='ceiling'})[0];"
    "while(kl&&kl.tagName.toLowerCase()!='line')kl=kl.previousElementSibling;"
    "if(!kl||kl.getAttribute('stroke')!=cl.getAttribute('stroke')||"
    "kl.getAttribute('stroke-dasharray')!=cl.getAttribute('stroke-dasharray')||"
    "kl.getAttribute('stroke-width')!=cl.getAttribute('stroke-width'))"
    "f.push('the ceiling key is not drawn as its line in '+nm)}"
    "var cs=[].filter.call(g.querySelectorAll('circle'),function(c){"
    "return c.getAttribute('fill')=='#2563eb'&&+c.getAttribute('cy')>45});"
    "for(var a=0;a<cs.length;a++)for(var b=a+1;b<cs.length;b++)"
    "if(Math.abs(cs[a].getAttribute('cx')-cs[b].getAttribute('cx'))<4)"
    "f.push('two sizes on one x in '+nm)}"
    "return f.concat(AT_ERRORS)}"
    "var out=['page\\t'+check().join(' | ')];"
    "var d=document.createElement('div');d.style.width='3000px';d.textContent='planted';"
    "document.querySelector('main').appendChild(d);out.push('wide\\t'+check().join(' | '));"
    "d.remove();"
    "var sec=document.getElementById(AT_EXPECT[AT_EXPECT.length-1]);sec.removeAttribute('id');"
    "out.push('missing\\t'+check().join(' | '));sec.id=AT_EXPECT[AT_EXPECT.length-1];"
    "var tx=document.querySelector('svg.chart text.title');var c=tx.cloneNode(true);"
    "tx.parentNode.appendChild(c);out.push('overlap\\t'+check().join(' | '));c.remove();"
    "if(!W0){var pd=document.createElement('div');pd.style.height='1200px';"
    "var h=document.getElementById('glance');h.parentNode.insertBefore(pd,h);"
    "out.push('screen\\t'+check().join(' | '));pd.remove()}"
    "var fl=document.querySelector('path.floor'),fd=fl.getAttribute('d');"
    "fl.setAttribute('d',fd+' L100 1');out.push('floor\\t'+check().join(' | '));fl.setAttribute('d',fd);"
    "var kk=document.querySelector('svg.chart[aria-label*=\"by size\"] line.ceiling');"
    "var kt=[].filter.call(kk.parentNode.querySelectorAll('text'),function(e){return e.textContent=='ceiling'})[0];"
    "while(kt.tagName.toLowerCase()!='line')kt=kt.previousElementSibling;"
    "kt.setAttribute('stroke-dasharray','1 1');out.push('key\\t'+check().join(' | '));"
    "kt.setAttribute('stroke-dasharray',kk.getAttribute('stroke-dasharray'));"
    "var tc=[].filter.call(document.querySelectorAll('svg.chart[aria-label*=\"by size\"] circle'),"
    "function(c){return c.getAttribute('fill')=='#2563eb'&&+c.getAttribute('cy')>45})[0],"
    "tc2=tc.cloneNode(true);tc2.setAttribute('cy',+tc.getAttribute('cy')+30);tc.parentNode.appendChild(tc2);"
    "out.push('stack\\t'+check().join(' | '));tc2.remove();"
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
    fputs("<script>window.AT_EXPECT=['glance','glance-d0','glance-d1','calls','charts',"
          "'charts-d0','charts-d1','glance-devices','contents','d0','d0-summary','d1',"
          "'d1-summary'", f);
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < n_groups[d]; k++)
            fprintf(f, ",'d%dg%d'", d, k);
    fputs("];window.AT_ROWS=[", f);
    for (int r = 0; r < RB_N_ROWS; r++)
        fprintf(f, "%s'%s'", r ? "," : "", rb_rows[r]);
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

/* One width: the page has no findings (at the desktop width: the first
 * screen holds the per-family table with the fixture's rows), each planted
 * defect is found (a table pushed below the first screen, a launch floor
 * above the ceiling, a ceiling key unlike its line, two sizes on one x), and
 * the browser logged no console message; the same launch writes the
 * screenshot png (the checks run, and undo their planted defects, at load).
 * Headless Chromium's window is at least 500 px wide: below that the page's
 * root element is given the width (the URL's ?w=), so layout, checks and
 * the screenshot's crop all see it. */
static void rb_check_width(const char *chromium, const char *dir, const char *url, int width,
                           int height, const char *png)
{
    char *out = NULL, line[4096], args[4600];
    snprintf(args, sizeof args, "--dump-dom --screenshot='%s'", png);
    unlink(png);
    int rc = rb_run(chromium, dir, args, width, height, url, &out);
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
    int screen = width < 500 || (rb_line(out, "screen", line, sizeof line) &&
                                 strstr(line, "first screen: the per-family table ends at"));
    int floor_found = rb_line(out, "floor", line, sizeof line) &&
                      strstr(line, "launch floor above the ceiling");
    int key = rb_line(out, "key", line, sizeof line) && strstr(line, "ceiling key is not drawn");
    int stack = rb_line(out, "stack", line, sizeof line) && strstr(line, "two sizes on one x");
    free(out);
    CHECK_MSG(screen && floor_found && key && stack,
              "width %d: a planted defect went unnoticed (screen %d, floor %d, key %d, stack %d)",
              width, screen, floor_found, key, stack);
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

/* A bench_calls table of 60 calls spread over the types, times and ratios (with long call
 * texts), for the random-calls section. */
static int rb_calls_file(const char *path)
{
    static const char *const types[] = {"bf16", "fp16", "tf32", "fp32", "fp64"};
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    fputs("i\ttype\torder\tops\tm\tn\tk\tbatch\tours_us\tcublas_us\tratio\tloop_ours_us\t"
          "loop_cublas_us\tlevel\tvendor\terror\tconfig\tours_read_gbs\tcublas_read_gbs\t"
          "ours_of_sum\tcall\n", f);
    for (int i = 0; i < 60; i++) {
        double us = 8.0 * pow(10.0, (i % 12) / 4.0), ratio = 0.3 * pow(2.0, (i * 7 % 20) / 5.0);
        fprintf(f, "%d\t%s\trow\tTN\t%d\t%d\t%d\t%d\t1\t%.3f\t%.4f\t-1\t-1\t2\t%d\t0\tX=1\t"
                   "1\t1\tnan\t%dx%dx%d:%s:col:TN:b%d\n", i, types[i % 5], 17 + i, 4099 + i,
                111 + i, 1 + i % 7, us, ratio, i % 9 == 0, 17 + i, 4099 + i, 111 + i,
                types[i % 5], 1 + i % 7);
    }
    return fclose(f) == 0;
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
    char err[512] = "", calls[4300];
    snprintf(calls, sizeof calls, "%s/calls.tsv", dir);
    CHECK_MSG(rb_calls_file(calls), "could not write %s", calls);
    const char *call_files[1] = {calls};
    db *d = NULL;
    CHECK_OK(db_open(&d, db_path, DB_OPEN_READONLY, err, sizeof err));
    at_status s = rp_write_calls(d, report, NULL, call_files, 1, err, sizeof err);
    db_close(d);
    CHECK_MSG(s == AT_OK, "rp_write_calls: %s", err);
    char *html = rb_slurp(report);
    CHECK(html);
    int n_groups[2] = { rb_count_on(&rb_gpus[0]), rb_count_on(&rb_gpus[1]) };
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
    rb_check_width(chromium, dir, url, 1400, 1100, png);
    if (th_failed())
        return;
    snprintf(url, sizeof url, "file://%s?w=375", checked);
    snprintf(png, sizeof png, "%s/first-screen-narrow.png", shots);
    rb_check_width(chromium, dir, url, 375, 1600, png);
    if (th_failed())
        return;
    /* the first screen of the first GPU's own report, 1400 x 1100 */
    char one[4400], args[4600], *out = NULL;
    snprintf(one, sizeof one, "%s/one-gpu.html", dir);
    CHECK_OK(db_open(&d, db_path, DB_OPEN_READONLY, err, sizeof err));
    s = rp_write(d, one, rb_gpus[0].uuid, err, sizeof err);
    db_close(d);
    CHECK_MSG(s == AT_OK, "rp_write: %s", err);
    snprintf(png, sizeof png, "%s/first-screen-one-gpu.png", shots);
    snprintf(args, sizeof args, "--screenshot='%s'", png);
    snprintf(url, sizeof url, "file://%s", one);
    unlink(png);
    int rc = rb_run(chromium, dir, args, 1400, 1100, url, &out);
    free(out);
    struct stat st;
    CHECK_MSG(rc == 0 && stat(png, &st) == 0 && st.st_size > 10000, "screenshot %s: exit %d",
              png, rc);
    /* one problem's section: the report cut to start there */
    char section[4400];
    out = NULL;
    snprintf(section, sizeof section, "%s/section.html", dir);
    CHECK_MSG(rb_section_page(report, "<h3 id=\"d0g6\">", section), "no section d0g6");
    snprintf(png, sizeof png, "%s/problem-section.png", shots);
    snprintf(args, sizeof args, "--screenshot='%s'", png);
    snprintf(url, sizeof url, "file://%s", section);
    unlink(png);
    rc = rb_run(chromium, dir, args, 1280, 2000, url, &out);
    free(out);
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
        CHECK_EQ(rd->n_groups, rb_count_on(g));
        CHECK(rd->floor_ms == 0.0027);
        /* FP64 dot of 2^27 reads 4491 GB/s x speed (of 2^28: 4548), above the stored
         * 4464 x speed: the read ceiling falls back to 2 x memory clock x bus
         * width, the note naming the first problem (in group order) above it */
        double theory = 2.0 * g->mem_clock_khz * 1e3 * g->mem_bus_bits / 8 / 1e9;
        CHECK_MSG(strcmp(rd->bandwidth.source, "theoretical") == 0 &&
                      fabs(rd->bandwidth.value - theory) < 1e-6 * theory &&
                      strstr(rd->bandwidth.note, "below dot 134217728:f64"),
                  "read ceiling %g (%s: %s)", rd->bandwidth.value, rd->bandwidth.source,
                  rd->bandwidth.note);
        CHECK(strcmp(rd->fp32.source, "measured") == 0 && rd->fp32.value == 65206 * g->speed);
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
            if (i == 1 && strstr(q->text, ":tf32"))
                CHECK(strstr(gr->vendor_note, "cuBLAS not found") != NULL && gr->vs_vendor == 0);
            else if (q->vendor_ms > 0)
                CHECK_MSG(fabs(gr->vs_vendor - q->vendor_ms / q->best_ms) < 1e-9,
                          "%s %s: vs vendor %g, want %g", gr->kernel, prob, gr->vs_vendor,
                          q->vendor_ms / q->best_ms);
            else
                CHECK(strstr(gr->vendor_note, "no vendor call for jacobi") != NULL);
            /* latency-bound: the time at the ceiling is below the floor */
            double at_ceiling = q->best_ms / g->speed * gr->best_value / gr->ceiling.value;
            CHECK_EQ(gr->latency_bound, at_ceiling < 0.0027);
        }
    }
    /* sum of 1024 floats is latency-bound: 0.0037 ms over the 0.0027 ms floor */
    const rp_device *rd = &rep.devs[0];
    for (int k = 0; k < rd->n_groups; k++)
        if (strcmp(rd->groups[k].kernel, "sum") == 0 && rd->groups[k].problem.dims[0] == 1024)
            CHECK(rd->groups[k].latency_bound &&
                  fabs(rd->groups[k].floor_ratio - 0.0037 / 0.0027) < 1e-9);
    rp_report_free(&rep);
}

/* The first screen's rows from the same database, against the fixture's
 * own numbers: the rows in order, problems per row, the geometric mean and
 * the lowest of vendor / best, BF16's share of its theoretical tensor peak,
 * coverage, the untuned kinds of the second GPU; the groups in display
 * order (kinds as rows are, larger problems first). */
TEST(report_first_screen_rows_from_the_fixture)
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
    rp_overview ov;
    CHECK(rp_overview_build(&rep.devs[0], &ov));
    CHECK_EQ(ov.n_rows, RB_N_ROWS);
    for (int r = 0; r < ov.n_rows && r < RB_N_ROWS; r++) {
        const rp_kindrow *row = &ov.rows[r];
        CHECK_MSG(strcmp(row->label, rb_rows[r]) == 0, "row %d: %s, want %s", r, row->label,
                  rb_rows[r]);
        int n = 0, n_vendor = 0;
        double log_sum = 0, lowest = 0;
        for (int i = 0; i < RB_N_PROBLEMS; i++) {
            const rb_problem *q = &rb_problems[i];
            if (strcmp(q->row, rb_rows[r]) != 0)
                continue;
            n++;
            if (q->vendor_ms > 0) {
                double ratio = q->vendor_ms / q->best_ms;
                log_sum += log(ratio);
                lowest = n_vendor++ == 0 || ratio < lowest ? ratio : lowest;
            }
        }
        CHECK_MSG(row->n_tuned == n && row->n_failed == 0 && !row->untuned, "%s: %d tuned, want %d",
                  row->label, row->n_tuned, n);
        CHECK_EQ(row->n_vendor, n_vendor);
        if (n_vendor > 0)
            CHECK_MSG(fabs(row->vendor_geomean - exp(log_sum / n_vendor)) < 1e-9 &&
                          fabs(row->vendor_min - lowest) < 1e-9,
                      "%s: geomean %g lowest %g, want %g %g", row->label, row->vendor_geomean,
                      row->vendor_min, exp(log_sum / n_vendor), lowest);
        CHECK_MSG((row->roof_pct > 0 && row->roof_pct <= 100) ||
                      (row->roof_pct == 0 && row->n_latency == row->n_tuned),
                  "%s: %.1f%% of the roofline, %d latency-bound", row->label, row->roof_pct,
                  row->n_latency);
    }
    /* BF16: 4096^3 in 0.1779 ms against 132 SMs x 4096 flop/clock x 1980 MHz */
    double bf16 = 100 * 2.0 * 4096 * 4096 * 4096 / (0.1779e-3) / (132 * 4096 * 1.98e9);
    CHECK_MSG(fabs(ov.rows[0].roof_pct - bf16) < 1e-6, "BF16 %.3f%%, want %.3f%%",
              ov.rows[0].roof_pct, bf16);
    CHECK_STR(ov.coverage[ov.rows[0].series], "tuned: NN; defaults only: NT, TN, TT");
    CHECK_STR(ov.coverage[ov.rows[3].series], "tuned: NN, NT; defaults only: TN, TT");
    CHECK(ov.rows[3].series == ov.rows[4].series && ov.rows[4].series != ov.rows[5].series);
    CHECK_STR(ov.coverage[ov.rows[8].series], "sizes 1024 to 268435456");
    /* display order: BF16 first, larger first (8192x8192x1024 is as large as 4096^3) */
    const rp_device *rd = &rep.devs[0];
    const char *first[3] = { "4097x4097x4097:bf16", "4096x4096x4096:bf16", "8192x8192x1024:bf16" };
    for (int i = 0; i < 3; i++) {
        char prob[96];
        tpl_problem_format(&rd->groups[ov.order[i]].problem, prob, sizeof prob);
        CHECK_MSG(strcmp(prob, first[i]) == 0, "shown %d: %s, want %s", i, prob, first[i]);
    }
    rp_overview_free(&ov);
    /* the second GPU tuned no FP16 GEMM and no FP64 Jacobi: untuned rows, in place */
    CHECK(rp_overview_build(&rep.devs[1], &ov));
    CHECK_EQ(ov.n_rows, RB_N_ROWS);
    for (int r = 0; r < ov.n_rows && r < RB_N_ROWS; r++) {
        int untuned = strcmp(rb_rows[r], "FP16 GEMM") == 0 || strcmp(rb_rows[r], "FP64 Jacobi") == 0;
        CHECK_MSG(strcmp(ov.rows[r].label, rb_rows[r]) == 0 && ov.rows[r].untuned == untuned &&
                      (ov.rows[r].n_tuned == 0) == untuned,
                  "second GPU row %d: %s untuned %d", r, ov.rows[r].label, ov.rows[r].untuned);
        if (untuned)
            CHECK_STR(ov.coverage[ov.rows[r].series],
                      "nothing tuned: built-in defaults serve every call");
    }
    rp_overview_free(&ov);
    rp_report_free(&rep);
}
