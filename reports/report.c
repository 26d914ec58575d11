/* report.c: renders the tuning database as one self-contained HTML file:
 * inline CSS and SVG charts drawn here, no scripts, fonts or network. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "report.h"
#include "tpl.h"

#define RP_TUNED   "#2563eb"
#define RP_VENDOR  "#6b7280"
#define RP_SEED    "#ea580c"
#define RP_DEFAULT "#16a34a"
#define RP_FAIL    "#dc2626"
#define RP_LIGHT   "#93c5fd"
#define RP_GRID    "#e5e7eb"
#define RP_MAX_FAILURE_ROWS 12
#define RP_MAX_SESSIONS 6

static const char *const rp_palette[RP_MAX_SESSIONS] = {
    "#2563eb", "#db2777", "#059669", "#7c3aed", "#d97706", "#0891b2",
};

/* ---- growable text buffer ---- */

typedef struct rp_buf {
    char *p;
    size_t len, cap;
    int oom;
} rp_buf;

static void rb_putn(rp_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void rb_put(rp_buf *b, const char *s)
{
    rb_putn(b, s, strlen(s));
}

static void rb_printf(rp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rb_printf(rp_buf *b, const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        rb_putn(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    rb_putn(b, big, (size_t)n);
    free(big);
}

/* The entity for c, or NULL if c stands for itself. */
static const char *rp_entity(char c)
{
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    default: return NULL;
    }
}

/* Appends s escaped (at most max bytes of it when max > 0, then "..."). */
static void rb_esc_max(rp_buf *b, const char *s, size_t max)
{
    if (!s)
        return;
    size_t i = 0;
    for (; s[i] && (max == 0 || i < max); i++) {
        const char *e = rp_entity(s[i]);
        if (e)
            rb_put(b, e);
        else
            rb_putn(b, &s[i], 1);
    }
    if (s[i])
        rb_put(b, "...");
}

static void rb_esc(rp_buf *b, const char *s)
{
    rb_esc_max(b, s, 0);
}

void rp_escape_html(const char *s, char *out, size_t len)
{
    if (!out || len == 0)
        return;
    size_t n = strnlen(out, len);
    if (n >= len)
        n = len - 1;
    for (; s && *s; s++) {
        const char *e = rp_entity(*s);
        size_t k = e ? strlen(e) : 1;
        if (n + k >= len)
            break;                     /* never cut an entity in half */
        memcpy(out + n, e ? e : s, k);
        n += k;
    }
    out[n] = '\0';
}

/* ---- numbers and text ---- */

/* Short human number: 66908, 812.4, 3.25, 0.0123. */
static const char *rp_num(char *out, size_t len, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(out, len, "-");
    else if (a >= 1000)
        snprintf(out, len, "%.0f", v);
    else if (a >= 100)
        snprintf(out, len, "%.1f", v);
    else if (a >= 1)
        snprintf(out, len, "%.2f", v);
    else if (a == 0)
        snprintf(out, len, "0");
    else
        snprintf(out, len, "%.3g", v);
    return out;
}

/* Axis tick: 0, 0.5, 250, 2500, 1e+05 style without trailing zeros. */
static const char *rp_tick(char *out, size_t len, double v)
{
    if (fabs(v) < 1e-12)
        v = 0;
    snprintf(out, len, "%g", v);
    return out;
}

/* "1000x999x1001", "4096x4096x4096:bf16" (tpl_problem_format) */
static void rp_problem_text(const tpl_problem *p, char *out, size_t len)
{
    tpl_problem_format(p, out, len);
    if (!out[0])
        snprintf(out, len, "-");
}

/* "m=1000, n=999, k=1001" where the family names its dimensions. */
static void rp_problem_named(const tpl_family *fam, const tpl_problem *p, char *out,
                             size_t len)
{
    if (!fam) {
        rp_problem_text(p, out, len);
        return;
    }
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < p->n_dims && i < TPL_MAX_DIMS; i++) {
        const char *name = i < fam->n_dims && fam->dim_names[i] ? fam->dim_names[i] : "d";
        int w = snprintf(out + n, len - n, "%s%s=%lld", i ? ", " : "", name, p->dims[i]);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    if (!tpl_problem_plain(p) && n < len) {       /* the kind, as the text form writes it */
        tpl_problem kind = *p;
        kind.n_dims = 0;
        tpl_problem_format(&kind, out + n, len - n);
    }
}

static int rp_same_problem(const tpl_problem *a, const tpl_problem *b)
{
    return tpl_problem_equal(a, b);
}

/* Seconds since the epoch of "2026-01-02T03:04:05.678Z"; -1 if unparsable. */
static double rp_time_of(const char *iso)
{
    int y, mo, d, h, mi;
    double s;
    if (sscanf(iso, "%d-%d-%dT%d:%d:%lf", &y, &mo, &d, &h, &mi, &s) != 6)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    return (double)timegm(&tm) + s;
}

/* The value of NAME in "A=1,NAME=v,..." into val; 0 if absent. */
static int rp_config_get(const char *config, const char *name, char *val, size_t len)
{
    size_t nl = strlen(name);
    const char *p = config;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t seg = end ? (size_t)(end - p) : strlen(p);
        if (seg > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            size_t vl = seg - nl - 1;
            if (vl >= len)
                vl = len - 1;
            memcpy(val, p + nl + 1, vl);
            val[vl] = '\0';
            return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* 1 if two configurations are the same: compared parameter by parameter
 * where the family parses both, else as text. */
static int rp_same_config(const tpl_family *fam, const char *a, const char *b)
{
    if (fam) {
        int ca[TPL_MAX_PARAMS], cb[TPL_MAX_PARAMS];
        char err[256];
        if (tpl_config_parse(fam, a, ca, err, sizeof err) == AT_OK &&
            tpl_config_parse(fam, b, cb, err, sizeof err) == AT_OK)
            return memcmp(ca, cb, sizeof(int) * (size_t)fam->n_params) == 0;
    }
    return strcmp(a, b) == 0;
}

/* ---- the data of one report ---- */

typedef struct rp_group {
    const tpl_family *fam;          /* NULL for a kernel not in this build */
    char kernel[32];
    char hash[20];
    tpl_problem problem;
    int *idx;                       /* results of this group, in created order */
    int n, cap;
    int n_ok;
    int best;                       /* index into results, -1 if none ok */
    int is_flops;
} rp_group;

typedef struct rp_device {
    db_device dev;
    db_result *res;
    int n_res;
    db_measurement *ms;
    int n_ms;
    rp_group *groups;
    int n_groups;
    double peak_gflops, bw_gbs;
    const char *peak_src, *bw_src;
} rp_device;

static double rp_value(const rp_group *g, const db_result *r)
{
    double v = g->is_flops ? r->gflops : r->gbs;
    if (v <= 0 && g->fam && g->fam->work && r->time_ms > 0) {
        double flops = 0, bytes = 0;
        g->fam->work(&r->problem, &flops, &bytes);
        v = (g->is_flops ? flops : bytes) / (r->time_ms * 1e6);
    }
    return v > 0 && isfinite(v) ? v : 0;
}

static double rp_mvalue(const rp_group *g, const db_measurement *m)
{
    double v = g->is_flops ? m->gflops : m->gbs;
    if (v <= 0 && g->fam && g->fam->work && m->time_ms > 0) {
        double flops = 0, bytes = 0;
        g->fam->work(&m->problem, &flops, &bytes);
        v = (g->is_flops ? flops : bytes) / (m->time_ms * 1e6);
    }
    return v > 0 && isfinite(v) ? v : 0;
}

static const char *rp_unit(const rp_group *g)
{
    return g->is_flops ? "GFLOP/s" : "GB/s";
}

static int rp_is_ok(const db_result *r)
{
    return strcmp(r->status, DB_OK) == 0 && r->time_ms > 0;
}

static int rp_group_cmp(const void *pa, const void *pb)
{
    const rp_group *a = pa, *b = pb;
    int c = strcmp(a->kernel, b->kernel);
    if (c)
        return c;
    c = strcmp(a->hash, b->hash);
    if (c)
        return c;
    for (int i = 0; i < TPL_MAX_DIMS; i++) {
        long long x = i < a->problem.n_dims ? a->problem.dims[i] : 0;
        long long y = i < b->problem.n_dims ? b->problem.dims[i] : 0;
        if (x != y)
            return x < y ? -1 : 1;
    }
    char ta[128], tb[128];          /* same sizes: the plain kind first, then by suffix */
    tpl_problem_format(&a->problem, ta, sizeof ta);
    tpl_problem_format(&b->problem, tb, sizeof tb);
    return strcmp(ta, tb);
}

/* Splits the device's results into (kernel, source hash, problem) groups. */
static int rp_build_groups(rp_device *rd)
{
    for (int i = 0; i < rd->n_res; i++) {
        const db_result *r = &rd->res[i];
        rp_group *g = NULL;
        for (int k = 0; k < rd->n_groups; k++) {
            rp_group *c = &rd->groups[k];
            if (strcmp(c->kernel, r->kernel) == 0 && strcmp(c->hash, r->source_hash) == 0 &&
                rp_same_problem(&c->problem, &r->problem)) {
                g = c;
                break;
            }
        }
        if (!g) {
            rp_group *ng = realloc(rd->groups, sizeof *ng * (size_t)(rd->n_groups + 1));
            if (!ng)
                return 0;
            rd->groups = ng;
            g = &rd->groups[rd->n_groups++];
            memset(g, 0, sizeof *g);
            snprintf(g->kernel, sizeof g->kernel, "%s", r->kernel);
            snprintf(g->hash, sizeof g->hash, "%s", r->source_hash);
            g->problem = r->problem;
            g->fam = tpl_find(r->kernel);
            g->best = -1;
        }
        if (g->n == g->cap) {
            int cap = g->cap ? g->cap * 2 : 32;
            int *p = realloc(g->idx, sizeof *p * (size_t)cap);
            if (!p)
                return 0;
            g->idx = p;
            g->cap = cap;
        }
        g->idx[g->n++] = i;
    }
    for (int k = 0; k < rd->n_groups; k++) {
        rp_group *g = &rd->groups[k];
        if (g->fam) {
            g->is_flops = g->fam->metric_is_flops;
        } else {
            g->is_flops = 0;
            for (int j = 0; j < g->n; j++)
                if (rd->res[g->idx[j]].gflops > 0)
                    g->is_flops = 1;
        }
        for (int j = 0; j < g->n; j++) {
            const db_result *r = &rd->res[g->idx[j]];
            if (!rp_is_ok(r))
                continue;
            g->n_ok++;
            if (g->best < 0 || r->time_ms < rd->res[g->best].time_ms)
                g->best = g->idx[j];
        }
    }
    if (rd->n_groups > 1)
        qsort(rd->groups, (size_t)rd->n_groups, sizeof *rd->groups, rp_group_cmp);
    return 1;
}

static void rp_ceilings(rp_device *rd)
{
    const at_device_info *i = &rd->dev.info;
    rd->peak_gflops = 0;
    rd->bw_gbs = 0;
    rd->peak_src = rd->bw_src = "unknown";
    for (int k = 0; k < rd->n_ms; k++) {
        const db_measurement *m = &rd->ms[k];
        if (strcmp(m->kernel, "device") != 0)
            continue;
        if (strcmp(m->name, "fp32_peak") == 0 && m->gflops > 0) {
            rd->peak_gflops = m->gflops;
            rd->peak_src = "measured";
        } else if (strcmp(m->name, "copy_bandwidth") == 0 && m->gbs > 0) {
            rd->bw_gbs = m->gbs;
            rd->bw_src = "measured";
        }
    }
    if (rd->peak_gflops <= 0 && i->sm_count > 0 && i->clock_khz > 0) {
        /* SMs x 128 FP32 lanes x 2 flops per FMA x clock. */
        rd->peak_gflops = (double)i->sm_count * 128.0 * 2.0 * (double)i->clock_khz / 1e6;
        rd->peak_src = "theoretical";
    }
    if (rd->bw_gbs <= 0 && i->mem_clock_khz > 0 && i->mem_bus_bits > 0) {
        /* Double data rate x bus width. */
        rd->bw_gbs = 2.0 * (double)i->mem_clock_khz * 1e3 * (double)i->mem_bus_bits / 8.0 / 1e9;
        rd->bw_src = "theoretical";
    }
}

static double rp_ceiling_of(const rp_device *rd, const rp_group *g)
{
    return g->is_flops ? rd->peak_gflops : rd->bw_gbs;
}

/* ---- chart helpers (inline SVG) ---- */

/* A "nice" step near range / target ticks: 1, 2 or 5 x 10^k. */
static double rp_nice_step(double range, int target)
{
    if (range <= 0 || !isfinite(range))
        return 1;
    double raw = range / target;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void rp_svg_open(rp_buf *b, int w, int h, const char *label)
{
    rb_printf(b, "<svg class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
                 "role=\"img\" aria-label=\"", w, h, w, h);
    rb_esc(b, label);
    rb_put(b, "\">\n");
}

/* Text element, escaped. anchor: start, middle, end. */
static void rp_svg_text(rp_buf *b, double x, double y, const char *anchor, const char *cls,
                        const char *text)
{
    rb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", x, y,
              anchor, cls);
    rb_esc(b, text);
    rb_put(b, "</text>\n");
}

/* Linear value axis along y from 0 to *max (rounded up), plot box
 * [x0, x1] x [y0 (top), y1 (bottom)]; draws grid lines and labels. */
static void rp_axis_y(rp_buf *b, double x0, double x1, double y0, double y1, double *max,
                      const char *unit)
{
    double step = rp_nice_step(*max, 5);
    double top = ceil(*max / step) * step;
    if (top <= 0)
        top = 1;
    *max = top;
    char num[32];
    for (double v = 0; v <= top + step / 2; v += step) {
        double y = y1 - (y1 - y0) * v / top;
        rb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                  x0, y, x1, y, RP_GRID);
        rp_svg_text(b, x0 - 6, y + 4, "end", "tick", rp_tick(num, sizeof num, v));
    }
    rb_printf(b, "<text transform=\"translate(14,%.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "class=\"axis\">", (y0 + y1) / 2);
    rb_esc(b, unit);
    rb_put(b, "</text>\n");
}

/* One bar of a comparison chart. */
typedef struct rp_bar {
    char label[96];
    double value;
    const char *color;
    char note[64];
} rp_bar;

/* Horizontal bars, one per entry, value printed at the end. */
static void rp_chart_bars(rp_buf *b, const char *title, const rp_bar *bars, int n,
                          const char *unit)
{
    const int w = 760, left = 230, right = 120, top = 28, row = 26;
    int h = top + n * row + 44;
    double max = 0;
    for (int i = 0; i < n; i++)
        if (bars[i].value > max)
            max = bars[i].value;
    if (max <= 0)
        max = 1;
    double step = rp_nice_step(max, 5);
    double axis_max = ceil(max / step) * step;
    double plot = w - left - right;
    rp_svg_open(b, w, h, title);
    rp_svg_text(b, 8, 16, "start", "title", title);
    char num[32], text[160];
    double ybot = top + n * row;
    for (double v = 0; v <= axis_max + step / 2; v += step) {
        double x = left + plot * v / axis_max;
        rb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                  x, top - 4, x, ybot, RP_GRID);
        rp_svg_text(b, x, ybot + 14, "middle", "tick", rp_tick(num, sizeof num, v));
    }
    snprintf(text, sizeof text, "%s (higher is better)", unit);
    rp_svg_text(b, left + plot / 2, ybot + 32, "middle", "axis", text);
    for (int i = 0; i < n; i++) {
        double y = top + i * row;
        double bw = plot * bars[i].value / axis_max;
        rp_svg_text(b, left - 8, y + row / 2.0 + 4, "end", "label", bars[i].label);
        if (bars[i].value > 0) {
            rb_printf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
                         "<title>", left, y + 4, bw < 1 ? 1 : bw, row - 8, bars[i].color);
            rb_esc(b, bars[i].label);
            rb_printf(b, ": %s %s</title></rect>\n", rp_num(num, sizeof num, bars[i].value), unit);
            snprintf(text, sizeof text, "%s%s%s", rp_num(num, sizeof num, bars[i].value),
                     bars[i].note[0] ? " " : "", bars[i].note);
        } else {
            snprintf(text, sizeof text, "%s", bars[i].note[0] ? bars[i].note : "no data");
        }
        rp_svg_text(b, left + (bars[i].value > 0 ? bw : 0) + 6, y + row / 2.0 + 4, "start",
                    "value", text);
    }
    rb_put(b, "</svg>\n");
}

/* ---- sections ---- */

static const char rp_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
    "margin:0;background:#f8fafc;color:#111827;line-height:1.45}\n"
    "main{max-width:1100px;margin:0 auto;padding:24px}\n"
    "h1{font-size:26px;margin:0 0 4px}h2{font-size:21px;margin:32px 0 8px;"
    "border-bottom:2px solid #cbd5e1;padding-bottom:4px}h3{font-size:17px;margin:24px 0 6px}\n"
    "h4{font-size:14px;margin:14px 0 4px;color:#374151}\n"
    ".card{background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:14px 18px;"
    "margin:12px 0}\n"
    "table{border-collapse:collapse;font-size:13px;margin:6px 0}"
    "th,td{border:1px solid #e2e8f0;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#f1f5f9}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;"
    "word-break:break-all}\n"
    ".muted{color:#6b7280;font-size:13px}.fail{color:" RP_FAIL "}.good{color:#15803d}\n"
    "pre.err{white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px;"
    "max-height:6em;overflow:auto}\n"
    "svg.chart{display:block;max-width:100%;height:auto;margin:8px 0;background:#fff}\n"
    "svg text{font-family:system-ui,Helvetica,Arial,sans-serif;fill:#111827}\n"
    "svg .title{font-size:14px;font-weight:600}svg .tick{font-size:11px;fill:#4b5563}\n"
    "svg .axis{font-size:12px;fill:#374151}svg .label{font-size:12px}"
    "svg .value{font-size:12px;fill:#111827}svg .small{font-size:10px;fill:#374151}\n"
    ".panels{display:flex;flex-wrap:wrap;gap:8px}.panels svg{margin:0}\n"
    ".legend span{display:inline-block;margin-right:14px;font-size:13px}"
    ".legend i{display:inline-block;width:12px;height:12px;margin-right:4px;"
    "vertical-align:-1px}\n";

static void rp_fact(rp_buf *b, const char *name, const char *value)
{
    rb_put(b, "<tr><th>");
    rb_esc(b, name);
    rb_put(b, "</th><td>");
    rb_esc(b, value);
    rb_put(b, "</td></tr>\n");
}

static void rp_device_facts(rp_buf *b, const rp_device *rd)
{
    const at_device_info *i = &rd->dev.info;
    char v[256], num[32];
    rb_put(b, "<div class=\"card\"><table>\n");
    rp_fact(b, "Device", i->name);
    rp_fact(b, "UUID", i->uuid);
    snprintf(v, sizeof v, "%d.%d (%s)", i->cc_major, i->cc_minor, i->arch);
    rp_fact(b, "Compute capability", v);
    snprintf(v, sizeof v, "%d", i->sm_count);
    rp_fact(b, "Streaming multiprocessors", v);
    snprintf(v, sizeof v, "%.1f GiB", (double)i->memory_bytes / (1024.0 * 1024 * 1024));
    rp_fact(b, "Memory", v);
    snprintf(v, sizeof v, "%.1f MiB", (double)i->l2_bytes / (1024.0 * 1024));
    rp_fact(b, "L2 cache", v);
    snprintf(v, sizeof v, "%d KiB per block (opt-in), %d KiB per SM",
             i->smem_per_block_optin / 1024, i->smem_per_sm / 1024);
    rp_fact(b, "Shared memory", v);
    snprintf(v, sizeof v, "SM %d MHz, memory %d MHz, %d-bit bus", i->clock_khz / 1000,
             i->mem_clock_khz / 1000, i->mem_bus_bits);
    rp_fact(b, "Clocks (max)", v);
    snprintf(v, sizeof v, "%d.%d", i->driver_version / 1000, (i->driver_version % 1000) / 10);
    rp_fact(b, "CUDA driver", v);
    rp_fact(b, "NVRTC", rd->dev.nvrtc_version[0] ? rd->dev.nvrtc_version : "unknown");
    snprintf(v, sizeof v, "%s GFLOP/s (%s)",
             rd->peak_gflops > 0 ? rp_num(num, sizeof num, rd->peak_gflops) : "-", rd->peak_src);
    rp_fact(b, "FP32 ceiling", v);
    snprintf(v, sizeof v, "%s GB/s (%s)",
             rd->bw_gbs > 0 ? rp_num(num, sizeof num, rd->bw_gbs) : "-", rd->bw_src);
    rp_fact(b, "Memory bandwidth ceiling", v);
    rb_put(b, "</table>\n<p class=\"muted\">Theoretical FP32 peak = SMs &times; 128 FP32 "
              "lanes &times; 2 flops per FMA &times; SM clock; theoretical bandwidth = 2 "
              "&times; memory clock &times; bus width. Measured ceilings, where stored, "
              "come from the <code>device</code> measurements (fp32_peak, "
              "copy_bandwidth).</p></div>\n");
}

/* Comparison points of a group: tuned, vendor, seeds, default. */
typedef struct rp_compare {
    rp_bar bars[32];
    int n;
    double vendor_best, seed_best, default_value;
    char vendor_name[64], seed_name[64];
} rp_compare;

static void rp_add_bar(rp_compare *c, const char *label, double value, const char *color,
                       const char *note)
{
    if (c->n >= (int)(sizeof c->bars / sizeof c->bars[0]))
        return;
    rp_bar *bar = &c->bars[c->n++];
    snprintf(bar->label, sizeof bar->label, "%s", label);
    bar->value = value;
    bar->color = color;
    snprintf(bar->note, sizeof bar->note, "%s", note ? note : "");
}

/* Finds the result of configuration cfg in the group, -1 if not tried. */
static int rp_find_config(const rp_device *rd, const rp_group *g, const char *cfg)
{
    for (int j = 0; j < g->n; j++)
        if (rp_same_config(g->fam, rd->res[g->idx[j]].config, cfg))
            return g->idx[j];
    return -1;
}

static void rp_compare_group(const rp_device *rd, const rp_group *g, rp_compare *c)
{
    memset(c, 0, sizeof *c);
    char label[96];
    if (g->best >= 0)
        rp_add_bar(c, "tuned (best found)", rp_value(g, &rd->res[g->best]), RP_TUNED, "");
    for (int k = 0; k < rd->n_ms; k++) {
        const db_measurement *m = &rd->ms[k];
        if (strcmp(m->kernel, g->kernel) != 0 || !rp_same_problem(&m->problem, &g->problem))
            continue;
        double v = rp_mvalue(g, m);
        int seed = strncmp(m->name, "seed_", 5) == 0;
        snprintf(label, sizeof label, "%s%s", m->name, seed ? " (measured)" : "");
        rp_add_bar(c, label, v, seed ? RP_SEED : RP_VENDOR, "");
        if (seed && v > c->seed_best) {
            c->seed_best = v;
            snprintf(c->seed_name, sizeof c->seed_name, "%s", m->name);
        } else if (!seed && v > c->vendor_best) {
            c->vendor_best = v;
            snprintf(c->vendor_name, sizeof c->vendor_name, "%s", m->name);
        }
    }
    if (g->fam) {
        for (int k = 0; k < g->fam->n_baselines; k++) {
            const tpl_baseline *bl = &g->fam->baselines[k];
            int i = rp_find_config(rd, g, bl->config);
            if (i < 0)
                continue;
            const db_result *r = &rd->res[i];
            double v = rp_is_ok(r) ? rp_value(g, r) : 0;
            rp_add_bar(c, bl->name, v, RP_SEED, rp_is_ok(r) ? "" : r->status);
            if (v > c->seed_best) {
                c->seed_best = v;
                snprintf(c->seed_name, sizeof c->seed_name, "%s", bl->name);
            }
        }
        if (g->fam->default_config) {
            int i = rp_find_config(rd, g, g->fam->default_config);
            if (i >= 0) {
                const db_result *r = &rd->res[i];
                c->default_value = rp_is_ok(r) ? rp_value(g, r) : 0;
                rp_add_bar(c, "built-in default", c->default_value, RP_DEFAULT,
                           rp_is_ok(r) ? "" : r->status);
            }
        }
    }
}

/* "2.35x" of a over b, or "-" */
static const char *rp_ratio(char *out, size_t len, double a, double b)
{
    if (a > 0 && b > 0)
        snprintf(out, len, "%.2f&times;", a / b);
    else
        snprintf(out, len, "-");
    return out;
}

static void rp_summary_table(rp_buf *b, const rp_device *rd, int dev_index)
{
    char num[32], t[64], r1[32], r2[32], r3[32], prob[96];
    rb_put(b, "<div class=\"card\"><table>\n<tr><th>Kernel</th><th>Problem</th>"
              "<th>Best configuration</th><th>Time (ms)</th><th>Performance</th>"
              "<th>% of ceiling</th><th>vs default</th><th>vs best seed</th>"
              "<th>vs vendor</th><th>Tried (ok / failed)</th></tr>\n");
    for (int k = 0; k < rd->n_groups; k++) {
        const rp_group *g = &rd->groups[k];
        rp_compare c;
        rp_compare_group(rd, g, &c);
        rp_problem_text(&g->problem, prob, sizeof prob);
        rb_printf(b, "<tr><td><a href=\"#d%dg%d\">", dev_index, k);
        rb_esc(b, g->kernel);
        rb_put(b, "</a></td><td>");
        rb_esc(b, prob);
        rb_put(b, "</td>");
        if (g->best >= 0) {
            const db_result *r = &rd->res[g->best];
            double v = rp_value(g, r), ceil_v = rp_ceiling_of(rd, g);
            rb_put(b, "<td><code>");
            rb_esc(b, r->config);
            rb_printf(b, "</code></td><td class=\"n\">%s</td>", rp_num(t, sizeof t, r->time_ms));
            rb_printf(b, "<td class=\"n\">%s %s</td>", rp_num(num, sizeof num, v), rp_unit(g));
            if (ceil_v > 0)
                rb_printf(b, "<td class=\"n\">%.1f%%</td>", 100.0 * v / ceil_v);
            else
                rb_put(b, "<td class=\"n\">-</td>");
            rb_printf(b, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>",
                      rp_ratio(r1, sizeof r1, v, c.default_value),
                      rp_ratio(r2, sizeof r2, v, c.seed_best),
                      rp_ratio(r3, sizeof r3, v, c.vendor_best));
        } else {
            rb_put(b, "<td colspan=\"7\" class=\"fail\">no configuration passed "
                      "verification</td>");
        }
        rb_printf(b, "<td class=\"n\">%d / %d</td></tr>\n", g->n_ok, g->n - g->n_ok);
    }
    rb_put(b, "</table>\n<p class=\"muted\">Ratios are performance of the tuned "
              "configuration over the built-in default, the best seed baseline and the best "
              "vendor library measurement (above 1: tuned is faster).</p></div>\n");
}

/* Every ok configuration sorted by performance, failures counted. */
static void rp_chart_sorted(rp_buf *b, const rp_device *rd, const rp_group *g)
{
    int n = 0;
    double *vals = malloc(sizeof *vals * (size_t)(g->n ? g->n : 1));
    int *kind = malloc(sizeof *kind * (size_t)(g->n ? g->n : 1));
    if (!vals || !kind) {
        free(vals);
        free(kind);
        b->oom = 1;
        return;
    }
    for (int j = 0; j < g->n; j++) {
        const db_result *r = &rd->res[g->idx[j]];
        if (!rp_is_ok(r))
            continue;
        int k = 0;
        if (g->idx[j] == g->best)
            k = 1;
        else if (g->fam && g->fam->default_config &&
                 rp_same_config(g->fam, r->config, g->fam->default_config))
            k = 2;
        else if (g->fam)
            for (int q = 0; q < g->fam->n_baselines; q++)
                if (rp_same_config(g->fam, r->config, g->fam->baselines[q].config))
                    k = 3;
        vals[n] = rp_value(g, r);
        kind[n] = k;
        n++;
    }
    /* insertion sort, descending (kinds follow their values) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && vals[j] > vals[j - 1]; j--) {
            double tv = vals[j];
            vals[j] = vals[j - 1];
            vals[j - 1] = tv;
            int tk = kind[j];
            kind[j] = kind[j - 1];
            kind[j - 1] = tk;
        }
    /* failure counts by status */
    char failures[512] = "";
    size_t fl = 0;
    static const char *const statuses[] = {
        DB_COMPILE_ERROR, DB_WRONG_RESULT, DB_LAUNCH_ERROR, DB_CRASHED, DB_TIMEOUT,
        DB_ABANDONED, DB_INVALID,
    };
    int other = 0;
    for (size_t s = 0; s < sizeof statuses / sizeof statuses[0]; s++) {
        int count = 0;
        for (int j = 0; j < g->n; j++)
            if (strcmp(rd->res[g->idx[j]].status, statuses[s]) == 0)
                count++;
        if (count && fl < sizeof failures)
            fl += (size_t)snprintf(failures + fl, sizeof failures - fl, "%s%s %d",
                                   fl ? ", " : "", statuses[s], count);
    }
    for (int j = 0; j < g->n; j++) {
        const db_result *r = &rd->res[g->idx[j]];
        if (rp_is_ok(r))
            continue;
        int known = 0;
        for (size_t s = 0; s < sizeof statuses / sizeof statuses[0]; s++)
            if (strcmp(r->status, statuses[s]) == 0)
                known = 1;
        if (!known)
            other++;
    }
    if (other && fl < sizeof failures)
        fl += (size_t)snprintf(failures + fl, sizeof failures - fl, "%sother %d",
                               fl ? ", " : "", other);

    const int w = 760, h = 280, x0 = 70, x1 = 740, y0 = 34, y1 = 230;
    char title[160], text[640];
    snprintf(title, sizeof title, "Every configuration tried: %d ok, sorted (fastest first)", n);
    rp_svg_open(b, w, h, title);
    rp_svg_text(b, 8, 16, "start", "title", title);
    double max = n ? vals[0] : 1;
    rp_axis_y(b, x0, x1, y0, y1, &max, rp_unit(g));
    static const char *const colors[] = { RP_LIGHT, RP_TUNED, RP_DEFAULT, RP_SEED };
    double bw = n ? (double)(x1 - x0) / n : 0;
    if (bw > 36)
        bw = 36;                        /* a few configurations: slim bars */
    if (n > 0 && n <= 400) {
        for (int i = 0; i < n; i++) {
            double hh = (y1 - y0) * vals[i] / max;
            rb_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                         "fill=\"%s\"/>\n", x0 + i * bw, y1 - hh, bw > 2 ? bw - 0.5 : bw,
                      hh, colors[kind[i]]);
        }
    } else if (n > 400) {
        rb_printf(b, "<path fill=\"%s\" d=\"M%d %d", RP_LIGHT, x0, y1);
        for (int i = 0; i < n; i++) {
            double y = y1 - (y1 - y0) * vals[i] / max;
            rb_printf(b, " L%.2f %.2f L%.2f %.2f", x0 + i * bw, y, x0 + (i + 1) * bw, y);
        }
        rb_printf(b, " L%.2f %d Z\"/>\n", x0 + n * bw, y1);
    }
    for (int i = 0; i < n; i++)            /* mark the special ones on top */
        if (kind[i] && n > 40) {
            double y = y1 - (y1 - y0) * vals[i] / max;
            rb_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\" "
                         "stroke=\"#fff\"/>\n", x0 + (i + 0.5) * bw, y, colors[kind[i]]);
        }
    rb_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#374151\"/>\n",
              x0, y1, x1, y1);
    rp_svg_text(b, (x0 + x1) / 2.0, y1 + 18, "middle", "axis",
                "configurations, ranked by performance");
    snprintf(text, sizeof text, "failed: %s", failures[0] ? failures : "none");
    rp_svg_text(b, x0, h - 10, "start", failures[0] ? "value" : "small", text);
    rb_printf(b, "<g class=\"small\"><rect x=\"480\" y=\"6\" width=\"10\" height=\"10\" "
                 "fill=\"%s\"/><text x=\"494\" y=\"15\" class=\"small\">best</text>"
                 "<rect x=\"530\" y=\"6\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                 "<text x=\"544\" y=\"15\" class=\"small\">default</text>"
                 "<rect x=\"595\" y=\"6\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                 "<text x=\"609\" y=\"15\" class=\"small\">seed baseline</text>"
                 "<rect x=\"685\" y=\"6\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                 "<text x=\"699\" y=\"15\" class=\"small\">other</text></g>\n",
              RP_TUNED, RP_DEFAULT, RP_SEED, RP_LIGHT);
    rb_put(b, "</svg>\n");
    free(vals);
    free(kind);
}

/* Best-so-far against seconds since each session's first result. */
static void rp_chart_trajectory(rp_buf *b, const rp_device *rd, const rp_group *g)
{
    long long sessions[RP_MAX_SESSIONS];
    int n_sessions = 0;
    /* the most recent sessions (results are in created order) */
    for (int j = g->n - 1; j >= 0 && n_sessions < RP_MAX_SESSIONS; j--) {
        long long s = rd->res[g->idx[j]].session_id;
        int seen = 0;
        for (int q = 0; q < n_sessions; q++)
            if (sessions[q] == s)
                seen = 1;
        if (!seen)
            sessions[n_sessions++] = s;
    }
    double tmax = 0, vmax = 0;
    double t0[RP_MAX_SESSIONS];
    for (int q = 0; q < n_sessions; q++) {
        t0[q] = -1;
        for (int j = 0; j < g->n; j++) {
            const db_result *r = &rd->res[g->idx[j]];
            if (r->session_id != sessions[q])
                continue;
            double t = rp_time_of(r->created);
            if (t < 0)
                continue;
            if (t0[q] < 0)
                t0[q] = t;
            if (t - t0[q] > tmax)
                tmax = t - t0[q];
            if (rp_is_ok(r) && rp_value(g, r) > vmax)
                vmax = rp_value(g, r);
        }
    }
    const int w = 760, h = 290, x0 = 70, x1 = 740, y0 = 34, y1 = 232;
    const char *title = "Search trajectory: best so far against tuning time";
    rp_svg_open(b, w, h, title);
    rp_svg_text(b, 8, 16, "start", "title", title);
    if (vmax <= 0)
        vmax = 1;
    rp_axis_y(b, x0, x1, y0, y1, &vmax, rp_unit(g));
    if (tmax <= 0)
        tmax = 1;
    double step = rp_nice_step(tmax, 6);
    double tend = ceil(tmax / step) * step;
    char num[32], label[96];
    for (double t = 0; t <= tend + step / 2; t += step) {
        double x = x0 + (x1 - x0) * t / tend;
        rb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n",
                  x, y0, x, y1, RP_GRID);
        rp_svg_text(b, x, y1 + 14, "middle", "tick", rp_tick(num, sizeof num, t));
    }
    rp_svg_text(b, (x0 + x1) / 2.0, y1 + 30, "middle", "axis",
                "seconds since the session's first result for this problem");
    int total_points = 0;
    for (int q = n_sessions - 1; q >= 0; q--) {
        const char *color = rp_palette[q % RP_MAX_SESSIONS];
        double best = 0, lastx = x0;
        int started = 0;
        rp_buf line = { 0 };
        for (int j = 0; j < g->n; j++) {
            const db_result *r = &rd->res[g->idx[j]];
            double t = rp_time_of(r->created);
            if (r->session_id != sessions[q] || t < 0)
                continue;
            double x = x0 + (x1 - x0) * (t - t0[q]) / tend;
            if (!rp_is_ok(r)) {
                rb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
                             "stroke-width=\"1\"/>\n", x, y1, x, y1 - 5, RP_FAIL);
                continue;
            }
            double v = rp_value(g, r);
            double y = y1 - (y1 - y0) * v / vmax;
            if (++total_points <= 3000)
                rb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\" "
                             "fill-opacity=\"0.5\"/>\n", x, y, color);
            if (v > best) {
                double yb = y1 - (y1 - y0) * best / vmax;
                if (!started)
                    rb_printf(&line, "M%.1f %.1f", x, y);
                else
                    rb_printf(&line, " L%.1f %.1f L%.1f %.1f", x, yb, x, y);
                started = 1;
                best = v;
            }
            lastx = x;
        }
        if (started) {
            rb_printf(&line, " L%.1f %.1f", lastx, y1 - (y1 - y0) * best / vmax);
            rb_printf(b, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                      line.p ? line.p : "", color);
        }
        free(line.p);
        if (sessions[q] > 0)
            snprintf(label, sizeof label, "session %lld", sessions[q]);
        else
            snprintf(label, sizeof label, "no session");
        double lx = 470 + (q % 3) * 90, ly = 12 + (q / 3) * 13;
        rb_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"3\" fill=\"%s\"/>\n",
                  lx, ly, color);
        rp_svg_text(b, lx + 18, ly + 4, "start", "small", label);
    }
    rp_svg_text(b, x0, h - 6, "start", "small",
                "line: best so far; dots: each verified configuration; red ticks: failures");
    rb_put(b, "</svg>\n");
}

/* Values seen for one parameter, with the best performance at each. */
typedef struct rp_pval {
    char value[32];
    double best;
    int tried;
} rp_pval;

static int rp_pval_cmp(const void *pa, const void *pb)
{
    const rp_pval *a = pa, *b = pb;
    char *ea, *eb;
    double x = strtod(a->value, &ea), y = strtod(b->value, &eb);
    if (*ea == '\0' && *eb == '\0' && a->value[0] && b->value[0])
        return x < y ? -1 : x > y;
    return strcmp(a->value, b->value);
}

/* Parameter names of a group, in family order or order of first use. */
static int rp_param_names(const rp_device *rd, const rp_group *g, char names[][32], int max)
{
    int n = 0;
    if (g->fam) {
        for (int i = 0; i < g->fam->n_params && n < max; i++)
            snprintf(names[n++], 32, "%s", g->fam->params[i].name);
        return n;
    }
    for (int j = 0; j < g->n; j++) {
        const char *p = rd->res[g->idx[j]].config;
        while (p && *p && n < max) {
            const char *eq = strchr(p, '='), *end = strchr(p, ',');
            if (!eq || (end && end < eq))
                break;
            char name[32];
            size_t l = (size_t)(eq - p) < sizeof name - 1 ? (size_t)(eq - p) : sizeof name - 1;
            memcpy(name, p, l);
            name[l] = '\0';
            int seen = 0;
            for (int q = 0; q < n; q++)
                if (strcmp(names[q], name) == 0)
                    seen = 1;
            if (!seen)
                snprintf(names[n++], 32, "%s", name);
            p = end ? end + 1 : NULL;
        }
    }
    return n;
}

static void rp_sensitivity(rp_buf *b, const rp_device *rd, const rp_group *g)
{
    char names[TPL_MAX_PARAMS][32];
    int n_names = rp_param_names(rd, g, names, TPL_MAX_PARAMS);
    double top = g->best >= 0 ? rp_value(g, &rd->res[g->best]) : 0;
    if (top <= 0 || n_names == 0) {
        rb_put(b, "<p class=\"muted\">No parameter sensitivity: no verified "
                  "configuration.</p>\n");
        return;
    }
    rp_buf fixed = { 0 };
    rb_put(b, "<div class=\"panels\">\n");
    for (int p = 0; p < n_names; p++) {
        rp_pval vals[64];
        int nv = 0;
        for (int j = 0; j < g->n; j++) {
            const db_result *r = &rd->res[g->idx[j]];
            char v[32];
            if (!rp_config_get(r->config, names[p], v, sizeof v))
                continue;
            int k = 0;
            while (k < nv && strcmp(vals[k].value, v) != 0)
                k++;
            if (k == nv) {
                if (nv == 64)
                    continue;
                memset(&vals[nv], 0, sizeof vals[nv]);
                snprintf(vals[nv].value, sizeof vals[nv].value, "%s", v);
                nv++;
            }
            vals[k].tried++;
            if (rp_is_ok(r) && rp_value(g, r) > vals[k].best)
                vals[k].best = rp_value(g, r);
        }
        if (nv == 0)
            continue;
        if (nv == 1) {
            rb_printf(&fixed, "%s%s=%s", fixed.len ? ", " : "", names[p], vals[0].value);
            continue;
        }
        qsort(vals, (size_t)nv, sizeof vals[0], rp_pval_cmp);
        char best_value[32] = "";
        rp_config_get(rd->res[g->best].config, names[p], best_value, sizeof best_value);
        const int w = 250, h = 170, x0 = 44, x1 = 240, y0 = 26, y1 = 130;
        char title[96], num[32];
        snprintf(title, sizeof title, "%.31s", names[p]);
        rp_svg_open(b, w, h, title);
        rp_svg_text(b, 8, 15, "start", "title", title);
        double max = top;
        double step = rp_nice_step(max, 3);
        max = ceil(max / step) * step;
        for (double v = 0; v <= max + step / 2; v += step) {
            double y = y1 - (y1 - y0) * v / max;
            rb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                      x0, y, x1, y, RP_GRID);
            rp_svg_text(b, x0 - 4, y + 3, "end", "small", rp_tick(num, sizeof num, v));
        }
        double slot = (double)(x1 - x0) / nv;
        for (int k = 0; k < nv; k++) {
            double x = x0 + k * slot;
            double hh = (y1 - y0) * vals[k].best / max;
            int is_best = strcmp(vals[k].value, best_value) == 0;
            if (vals[k].best > 0) {
                rb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                             "fill=\"%s\"><title>", x + slot * 0.15, y1 - hh, slot * 0.7, hh,
                          is_best ? RP_TUNED : RP_LIGHT);
                rb_esc(b, names[p]);
                rb_put(b, "=");
                rb_esc(b, vals[k].value);
                rb_printf(b, ": best %s %s, %d tried</title></rect>\n",
                          rp_num(num, sizeof num, vals[k].best), rp_unit(g), vals[k].tried);
            } else {
                rb_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
                             "class=\"small\" fill=\"%s\">none ok</text>\n",
                          x + slot / 2, y1 - 4, RP_FAIL);
            }
            rp_svg_text(b, x + slot / 2, y1 + 13, "middle", "small", vals[k].value);
        }
        rp_svg_text(b, (x0 + x1) / 2.0, y1 + 28, "middle", "small", "parameter value");
        snprintf(title, sizeof title, "best %s at each value", rp_unit(g));
        rp_svg_text(b, (x0 + x1) / 2.0, y1 + 40, "middle", "small", title);
        rb_put(b, "</svg>\n");
    }
    rb_put(b, "</div>\n");
    if (fixed.len) {
        rb_put(b, "<p class=\"muted\">Held at one value in every configuration tried: <code>");
        rb_esc(b, fixed.p);
        rb_put(b, "</code></p>\n");
    }
    free(fixed.p);
}

static void rp_failures(rp_buf *b, const rp_device *rd, const rp_group *g)
{
    int n_fail = g->n - g->n_ok, shown = 0;
    if (n_fail == 0)
        return;
    rb_printf(b, "<h4>Failed configurations (%d)</h4>\n<table><tr><th>Status</th>"
                 "<th>Configuration</th><th>Message</th></tr>\n", n_fail);
    for (int j = 0; j < g->n && shown < RP_MAX_FAILURE_ROWS; j++) {
        const db_result *r = &rd->res[g->idx[j]];
        if (rp_is_ok(r))
            continue;
        shown++;
        rb_put(b, "<tr><td class=\"fail\">");
        rb_esc(b, r->status);
        rb_put(b, "</td><td><code>");
        rb_esc(b, r->config);
        rb_put(b, "</code></td><td><pre class=\"err\">");
        rb_esc_max(b, r->error, 400);
        rb_put(b, "</pre></td></tr>\n");
    }
    rb_put(b, "</table>\n");
    if (n_fail > shown)
        rb_printf(b, "<p class=\"muted\">and %d more.</p>\n", n_fail - shown);
}

static void rp_group_section(rp_buf *b, const rp_device *rd, const rp_group *g,
                             int dev_index, int k)
{
    char prob[160], num[32], t[32];
    rp_problem_named(g->fam, &g->problem, prob, sizeof prob);
    rb_printf(b, "<h3 id=\"d%dg%d\">", dev_index, k);
    rb_esc(b, g->kernel);
    rb_put(b, " &middot; ");
    rb_esc(b, prob);
    rb_put(b, "</h3>\n<div class=\"card\">\n<p class=\"muted\">");
    if (g->fam && g->fam->summary) {
        rb_esc(b, g->fam->summary);
        rb_put(b, ". ");
    } else if (!g->fam) {
        rb_put(b, "Kernel not in this build of autotune. ");
    }
    rb_put(b, "Template source hash <code>");
    rb_esc(b, g->hash);
    rb_put(b, "</code>");
    if (g->fam) {
        const char *cur = tpl_source_hash(g->fam);
        if (cur && strcmp(cur, g->hash) == 0)
            rb_put(b, " (current)");
        else if (cur)
            rb_put(b, " (an older template version)");
    }
    rb_put(b, ".</p>\n");

    if (g->best >= 0) {
        const db_result *r = &rd->res[g->best];
        double v = rp_value(g, r), c = rp_ceiling_of(rd, g);
        rb_printf(b, "<p><b>Best:</b> %s %s in %s ms", rp_num(num, sizeof num, v), rp_unit(g),
                  rp_num(t, sizeof t, r->time_ms));
        if (c > 0)
            rb_printf(b, " (%.1f%% of the %s %s ceiling)", 100.0 * v / c,
                      g->is_flops ? rd->peak_src : rd->bw_src,
                      g->is_flops ? "FP32" : "bandwidth");
        rb_printf(b, ", median of %d runs (min %s, max %s ms), relative error %.2g%s.</p>\n",
                  r->runs, rp_num(num, sizeof num, r->time_min_ms),
                  rp_num(t, sizeof t, r->time_max_ms), r->rel_error,
                  r->deterministic ? ", bit-reproducible" : "");
        rb_put(b, "<table><tr><th>Parameter</th><th>Value</th><th>Meaning</th></tr>\n");
        char names[TPL_MAX_PARAMS][32];
        int n_names = rp_param_names(rd, g, names, TPL_MAX_PARAMS);
        for (int p = 0; p < n_names; p++) {
            char v2[32];
            if (!rp_config_get(r->config, names[p], v2, sizeof v2))
                continue;
            rb_put(b, "<tr><td><code>");
            rb_esc(b, names[p]);
            rb_put(b, "</code></td><td class=\"n\">");
            rb_esc(b, v2);
            rb_put(b, "</td><td class=\"muted\">");
            if (g->fam && p < g->fam->n_params && g->fam->params[p].meaning)
                rb_esc(b, g->fam->params[p].meaning);
            rb_put(b, "</td></tr>\n");
        }
        rb_put(b, "</table>\n<p class=\"muted\">Configuration: <code>");
        rb_esc(b, r->config);
        rb_put(b, "</code></p>\n");
    } else {
        rb_put(b, "<p class=\"fail\">No configuration passed verification for this "
                  "problem.</p>\n");
    }
    if (g->fam && g->fam->default_config) {
        rb_put(b, "<p class=\"muted\">Built-in default: <code>");
        rb_esc(b, g->fam->default_config);
        rb_put(b, "</code></p>\n");
    }

    rp_compare c;
    rp_compare_group(rd, g, &c);
    if (c.n > 0) {
        char title[160];
        snprintf(title, sizeof title, "Tuned vs vendor library vs seeds vs default (%s)",
                 rp_unit(g));
        rp_chart_bars(b, title, c.bars, c.n, rp_unit(g));
        rb_printf(b, "<p class=\"legend\"><span><i style=\"background:%s\"></i>tuned</span>"
                     "<span><i style=\"background:%s\"></i>vendor library</span>"
                     "<span><i style=\"background:%s\"></i>seed baselines</span>"
                     "<span><i style=\"background:%s\"></i>built-in default</span></p>\n",
                  RP_TUNED, RP_VENDOR, RP_SEED, RP_DEFAULT);
    }
    if (g->n_ok > 0) {
        rp_chart_sorted(b, rd, g);
        rp_chart_trajectory(b, rd, g);
        rb_put(b, "<h4>Parameter sensitivity: the best performance reached at each "
                  "value</h4>\n");
        rp_sensitivity(b, rd, g);
    }
    rp_failures(b, rd, g);
    rb_put(b, "</div>\n");
}

/* log-log roofline of the best result of every group of the device. */
static void rp_roofline(rp_buf *b, const rp_device *rd)
{
    typedef struct { double ai, gf, vendor_gf; int group; } pt;
    pt *pts = malloc(sizeof *pts * (size_t)(rd->n_groups ? rd->n_groups : 1));
    if (!pts) {
        b->oom = 1;
        return;
    }
    int n = 0;
    for (int k = 0; k < rd->n_groups; k++) {
        const rp_group *g = &rd->groups[k];
        if (g->best < 0 || !g->fam || !g->fam->work)
            continue;
        double flops = 0, bytes = 0;
        g->fam->work(&g->problem, &flops, &bytes);
        const db_result *r = &rd->res[g->best];
        if (flops <= 0 || bytes <= 0 || r->time_ms <= 0)
            continue;
        pts[n].ai = flops / bytes;
        pts[n].gf = flops / (r->time_ms * 1e6);
        pts[n].vendor_gf = 0;
        for (int m = 0; m < rd->n_ms; m++) {
            const db_measurement *ms = &rd->ms[m];
            if (strcmp(ms->kernel, g->kernel) == 0 && strncmp(ms->name, "seed_", 5) != 0 &&
                rp_same_problem(&ms->problem, &g->problem) && ms->time_ms > 0) {
                double vg = flops / (ms->time_ms * 1e6);
                if (vg > pts[n].vendor_gf)
                    pts[n].vendor_gf = vg;
            }
        }
        pts[n].group = k;
        n++;
    }
    if (n == 0 || rd->peak_gflops <= 0) {
        rb_put(b, "<p class=\"muted\">No roofline: it needs a verified result of a known "
                  "kernel and the device's FP32 ceiling.</p>\n");
        free(pts);
        return;
    }
    double ai_lo = 1e9, ai_hi = 0, gf_lo = 1e30;
    for (int i = 0; i < n; i++) {
        ai_lo = fmin(ai_lo, pts[i].ai);
        ai_hi = fmax(ai_hi, pts[i].ai);
        gf_lo = fmin(gf_lo, pts[i].gf);
    }
    double peak = rd->peak_gflops, bw = rd->bw_gbs;
    double ridge = bw > 0 ? peak / bw : 0;
    double lx0 = floor(log10(fmin(ai_lo, ridge > 0 ? ridge : ai_lo))) - 0.5;
    double lx1 = ceil(log10(fmax(ai_hi, ridge > 0 ? ridge : ai_hi))) + 0.5;
    if (lx1 - lx0 < 2)
        lx1 = lx0 + 2;
    double gf_hi = peak;
    for (int i = 0; i < n; i++)
        gf_hi = fmax(gf_hi, fmax(pts[i].gf, pts[i].vendor_gf));
    double ly1 = ceil(log10(gf_hi * 1.5));
    double ly0 = floor(log10(fmin(gf_lo, bw > 0 ? bw * pow(10, lx0) : gf_lo))) ;
    if (ly1 - ly0 > 7)
        ly0 = ly1 - 7;
    if (ly1 - ly0 < 2)
        ly0 = ly1 - 2;
    const int w = 760, h = 380, x0 = 80, x1 = 600, y0 = 30, y1 = 330;
#define RX(ai) (x0 + (x1 - x0) * (log10(ai) - lx0) / (lx1 - lx0))
#define RY(gf) (y1 - (y1 - y0) * (log10(gf) - ly0) / (ly1 - ly0))
    const char *title = "Roofline: achieved FP32 throughput against arithmetic intensity";
    rp_svg_open(b, w, h, title);
    rp_svg_text(b, 8, 16, "start", "title", title);
    char num[32], label[160];
    for (double e = ceil(lx0); e <= lx1; e += 1) {
        double x = RX(pow(10, e));
        rb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n",
                  x, y0, x, y1, RP_GRID);
        rp_svg_text(b, x, y1 + 14, "middle", "tick", rp_tick(num, sizeof num, pow(10, e)));
    }
    for (double e = ceil(ly0); e <= ly1; e += 1) {
        double y = RY(pow(10, e));
        rb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                  x0, y, x1, y, RP_GRID);
        rp_svg_text(b, x0 - 6, y + 4, "end", "tick", rp_tick(num, sizeof num, pow(10, e)));
    }
    rp_svg_text(b, (x0 + x1) / 2.0, y1 + 32, "middle", "axis",
                "arithmetic intensity (flops per byte of minimum DRAM traffic, log)");
    rb_printf(b, "<text transform=\"translate(16,%.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "class=\"axis\">GFLOP/s (log)</text>\n", (y0 + y1) / 2.0);
    /* ceilings: bandwidth slope up to the ridge, then the flat FP32 peak */
    double ax0 = pow(10, lx0), ax1 = pow(10, lx1);
    rb_put(b, "<path fill=\"none\" stroke=\"#111827\" stroke-width=\"2\" d=\"");
    if (bw > 0) {
        double start = fmax(ax0, pow(10, ly0) / bw);
        rb_printf(b, "M%.1f %.1f L%.1f %.1f ", RX(start), RY(bw * start), RX(ridge), RY(peak));
    } else {
        rb_printf(b, "M%.1f %.1f ", RX(ax0), RY(peak));
    }
    rb_printf(b, "L%.1f %.1f\"/>\n", RX(ax1), RY(peak));
    snprintf(label, sizeof label, "FP32 %s %s GFLOP/s", rd->peak_src,
             rp_num(num, sizeof num, peak));
    rp_svg_text(b, x1 - 4, RY(peak) - 6, "end", "small", label);
    if (bw > 0) {
        snprintf(label, sizeof label, "memory %s %s GB/s", rd->bw_src, rp_num(num, sizeof num, bw));
        double lxa = fmax(ax0, pow(10, ly0) / bw) * 1.6;
        rb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\" transform=\"rotate(%.1f "
                     "%.1f %.1f)\">", RX(lxa), RY(bw * lxa) - 6,
                  -atan2((y1 - y0) / (ly1 - ly0), (x1 - x0) / (lx1 - lx0)) * 180 / M_PI,
                  RX(lxa), RY(bw * lxa) - 6);
        rb_esc(b, label);
        rb_put(b, "</text>\n");
    }
    for (int i = 0; i < n; i++) {
        const rp_group *g = &rd->groups[pts[i].group];
        const char *color = rp_palette[i % RP_MAX_SESSIONS];
        char prob[96];
        rp_problem_text(&g->problem, prob, sizeof prob);
        double x = RX(pts[i].ai), y = RY(fmax(pts[i].gf, pow(10, ly0)));
        rb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>", x, y, color);
        rb_esc(b, g->kernel);
        rb_printf(b, " %s: %s GFLOP/s at %.3g flop/byte</title></circle>\n", prob,
                  rp_num(num, sizeof num, pts[i].gf), pts[i].ai);
        if (pts[i].vendor_gf > 0)
            rb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" fill=\"none\" "
                         "stroke=\"%s\" stroke-width=\"1.5\"/>\n", x - 4.5,
                      RY(fmax(pts[i].vendor_gf, pow(10, ly0))) - 4.5, color);
        /* legend at the right */
        double ly = y0 + 14 + i * 15;
        if (ly < y1) {
            rb_printf(b, "<circle cx=\"%d\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", x1 + 16,
                      ly - 4, color);
            snprintf(label, sizeof label, "%s %s", g->kernel, prob);
            rp_svg_text(b, x1 + 24, ly, "start", "small", label);
        }
    }
    rp_svg_text(b, x0, h - 8, "start", "small",
                "filled circles: tuned best; hollow squares: vendor library on the same "
                "problem; black line: ceilings");
    rb_put(b, "</svg>\n");
#undef RX
#undef RY
    free(pts);
}

static void rp_device_section(rp_buf *b, const rp_device *rd, int dev_index)
{
    rb_printf(b, "<h2 id=\"d%d\">", dev_index);
    rb_esc(b, rd->dev.info.name);
    rb_put(b, " <span class=\"muted\">");
    rb_esc(b, rd->dev.info.uuid);
    rb_put(b, "</span></h2>\n");
    rp_device_facts(b, rd);
    if (rd->n_res == 0) {
        rb_put(b, "<p class=\"muted\">No tuning results for this device.</p>\n");
        return;
    }
    rb_put(b, "<h3>Summary</h3>\n");
    rp_summary_table(b, rd, dev_index);
    rb_put(b, "<div class=\"card\">\n");
    rp_roofline(b, rd);
    rb_put(b, "</div>\n");
    for (int k = 0; k < rd->n_groups; k++)
        rp_group_section(b, rd, &rd->groups[k], dev_index, k);
}

static void rp_free_devices(rp_device *devs, int n)
{
    for (int i = 0; i < n; i++) {
        free(devs[i].res);
        free(devs[i].ms);
        for (int k = 0; k < devs[i].n_groups; k++)
            free(devs[i].groups[k].idx);
        free(devs[i].groups);
    }
    free(devs);
}

/* Writes the buffer to path through a temporary file and a rename. */
static at_status rp_save(const rp_buf *b, const char *path, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return AT_ERR_IO;
    }
    size_t wrote = fwrite(b->p, 1, b->len, f);
    int bad = wrote != b->len || ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return AT_ERR_IO;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return AT_ERR_IO;
    }
    return AT_OK;
}

at_status rp_write(db *d, const char *path, const char *device_uuid,
                   char *err, size_t errlen)
{
    char dummy[8];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (!d || !path || !*path) {
        snprintf(err, errlen, "rp_write: no database or no output path");
        return AT_ERR_INVALID_ARG;
    }
    db_device *list = NULL;
    int n_list = 0;
    at_status s = db_list_devices(d, &list, &n_list);
    if (s != AT_OK) {
        snprintf(err, errlen, "%s", db_errmsg(d));
        return s;
    }
    rp_device *devs = calloc((size_t)(n_list ? n_list : 1), sizeof *devs);
    if (!devs) {
        free(list);
        snprintf(err, errlen, "out of memory");
        return AT_ERR_NO_MEMORY;
    }
    int n_devs = 0, total = 0;
    for (int i = 0; i < n_list; i++) {
        if (device_uuid && strcmp(list[i].info.uuid, device_uuid) != 0)
            continue;
        rp_device *rd = &devs[n_devs++];
        rd->dev = list[i];
        if ((s = db_results(d, rd->dev.info.uuid, NULL, &rd->res, &rd->n_res)) != AT_OK ||
            (s = db_measurements(d, rd->dev.info.uuid, NULL, &rd->ms, &rd->n_ms)) != AT_OK) {
            snprintf(err, errlen, "%s", db_errmsg(d));
            free(list);
            rp_free_devices(devs, n_devs);
            return s;
        }
        if (!rp_build_groups(rd)) {
            snprintf(err, errlen, "out of memory");
            free(list);
            rp_free_devices(devs, n_devs);
            return AT_ERR_NO_MEMORY;
        }
        rp_ceilings(rd);
        total += rd->n_res;
    }
    free(list);
    if (total == 0) {
        if (device_uuid && n_devs == 0)
            snprintf(err, errlen, "device %s is not in the database", device_uuid);
        else
            snprintf(err, errlen, "the database holds no tuning results%s%s",
                     device_uuid ? " for device " : "", device_uuid ? device_uuid : "");
        rp_free_devices(devs, n_devs);
        return AT_ERR_NOT_FOUND;
    }

    rp_buf b = { 0 };
    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", &tm);
    rb_put(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<title>autotune report</title>\n<style>\n");
    rb_put(&b, rp_css);
    rb_put(&b, "</style>\n</head>\n<body>\n<main>\n<h1>autotune report</h1>\n");
    rb_printf(&b, "<p class=\"muted\">Generated %s from the tuning database: %d device%s, "
                  "%d results. Self-contained: no scripts, fonts or network.</p>\n",
              now, n_devs, n_devs == 1 ? "" : "s", total);
    rb_put(&b, "<div class=\"card\"><b>Contents</b><ul>\n");
    for (int i = 0; i < n_devs; i++) {
        rb_printf(&b, "<li><a href=\"#d%d\">", i);
        rb_esc(&b, devs[i].dev.info.name);
        rb_printf(&b, "</a> &middot; %d results", devs[i].n_res);
        if (devs[i].n_groups) {
            rb_put(&b, "<ul>");
            for (int k = 0; k < devs[i].n_groups; k++) {
                char prob[96];
                rp_problem_text(&devs[i].groups[k].problem, prob, sizeof prob);
                rb_printf(&b, "<li><a href=\"#d%dg%d\">", i, k);
                rb_esc(&b, devs[i].groups[k].kernel);
                rb_put(&b, " ");
                rb_esc(&b, prob);
                rb_put(&b, "</a></li>");
            }
            rb_put(&b, "</ul>");
        }
        rb_put(&b, "</li>\n");
    }
    rb_put(&b, "</ul></div>\n");
    for (int i = 0; i < n_devs; i++)
        rp_device_section(&b, &devs[i], i);
    rb_put(&b, "</main>\n</body>\n</html>\n");
    rp_free_devices(devs, n_devs);
    if (b.oom) {
        free(b.p);
        snprintf(err, errlen, "out of memory building the report");
        return AT_ERR_NO_MEMORY;
    }
    s = rp_save(&b, path, err, errlen);
    free(b.p);
    return s;
}
