/* glance.c: the report's first screen: per family and kind a chart of the
 * best performance against problem size with the vendor library, the
 * ceiling and the launch floor; and the tuned problems of several GPUs
 * side by side. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "charts.h"
#include "svg.h"

#define RP_GL_W 480
#define RP_GL_H 300
#define RP_GL_X0 62
#define RP_GL_X1 462
#define RP_GL_Y0 52
#define RP_GL_Y1 248
#define RP_FLOOR_COLOR "#d97706"

/* A problem's size on the chart: the product of its dimensions and batch. */
static double rp_size_of(const tpl_problem *p)
{
    double v = 1;
    for (int i = 0; i < p->n_dims && i < TPL_MAX_DIMS; i++)
        v *= (double)p->dims[i];
    return v * (double)tpl_problem_batch(p);
}

/* 1 if group j starts a series: no earlier group of its kernel and kind. */
int rp_series_first(const rp_device *rd, int j)
{
    const rp_group *g = &rd->groups[j];
    for (int k = 0; k < j; k++)
        if (strcmp(rd->groups[k].kernel, g->kernel) == 0 &&
            tpl_problem_same_kind(&rd->groups[k].problem, &g->problem) &&
            rd->groups[k].problem.n_dims == g->problem.n_dims)
            return 0;
    return 1;
}

/* One point per verified group of the series of group j, by size. */
typedef struct rp_gpoint {
    double x, tuned, vendor, floor_v;
} rp_gpoint;

static int rp_gpoint_cmp(const void *a, const void *b)
{
    double x = ((const rp_gpoint *)a)->x, y = ((const rp_gpoint *)b)->x;
    return (x > y) - (x < y);
}

static int rp_series_points(const rp_device *rd, int j, rp_gpoint *pts, int max)
{
    const rp_group *s = &rd->groups[j];
    int n = 0;
    for (int k = 0; k < rd->n_groups && n < max; k++) {
        const rp_group *g = &rd->groups[k];
        if (strcmp(g->kernel, s->kernel) != 0 || !tpl_problem_same_kind(&g->problem, &s->problem) ||
            g->problem.n_dims != s->problem.n_dims || g->best < 0 || g->best_value <= 0)
            continue;
        double t = g->e[g->best].r->time_ms;
        pts[n].x = rp_size_of(&g->problem);
        pts[n].tuned = g->best_value;
        pts[n].vendor = g->cmp.vendor_best;
        pts[n].floor_v = rd->floor_ms > 0 && t > 0 ? g->best_value * t / rd->floor_ms : 0;
        n++;
    }
    qsort(pts, (size_t)n, sizeof *pts, rp_gpoint_cmp);
    return n;
}

/* Log scales that hold every point and the ceiling, whole decades. */
static void rp_series_scales(const rp_gpoint *p, int n, double ceiling, rp_scale *sx,
                             rp_scale *sy)
{
    double xlo = p[0].x, xhi = p[n - 1].x, ylo = 1e300, yhi = ceiling;
    for (int i = 0; i < n; i++) {
        ylo = fmin(ylo, p[i].tuned);
        yhi = fmax(yhi, p[i].tuned);
        if (p[i].vendor > 0)
            ylo = fmin(ylo, p[i].vendor), yhi = fmax(yhi, p[i].vendor);
    }
    double lx0 = floor(log10(xlo)), lx1 = ceil(log10(xhi));
    if (lx1 - lx0 < 1)
        lx1 = lx0 + 1;
    double ly1 = log10(yhi * 1.6), ly0 = floor(log10(ylo));
    if (ly1 - ly0 < 1)
        ly0 = floor(ly1 - 1);
    *sx = (rp_scale){ lx0, lx1, RP_GL_X0, RP_GL_X1, 1 };
    *sy = (rp_scale){ ly0, ly1, RP_GL_Y1, RP_GL_Y0, 1 };
}

/* A polyline through the values (those > 0, clipped to the plot) of one
 * field of the points; dash: a stroke-dasharray or NULL. */
static void rp_series_line(rp_buf *b, const rp_gpoint *p, int n, size_t field, const rp_scale *sx,
                           const rp_scale *sy, const char *color, const char *dash, int marks)
{
    rp_buf d = { 0 };
    int started = 0;
    double ymin = pow(10, sy->lo), ymax = pow(10, sy->hi);
    for (int i = 0; i < n; i++) {
        double v = *(const double *)((const char *)&p[i] + field);
        if (v <= 0)
            continue;
        v = fmin(fmax(v, ymin), ymax);
        rp_co x = RP_C(rp_scale_at(sx, p[i].x)), y = RP_C(rp_scale_at(sy, v));
        if (started)
            rp_path_line(&d, x, y);
        else
            rp_path_move(&d, x, y);
        started = 1;
        if (marks == 1)
            rp_svg_circle(b, x, y, RP_CI(4), color, NULL, NULL);
        else if (marks == 2)
            rp_svg_rect(b, RP_C(x.v - 3.5), RP_C(y.v - 3.5), RP_CI(7), RP_CI(7), color, NULL,
                        NULL);
    }
    if (started) {
        char style[128];
        snprintf(style, sizeof style, "fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s",
                 color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
        rp_svg_path(b, NULL, d.p, style);
    }
    if (d.oom)
        b->oom = 1;
    free(d.p);
}

void rp_chart_sizes(rp_buf *b, const rp_device *rd, int j)
{
    rp_gpoint pts[64];
    int n = rp_series_points(rd, j, pts, 64);
    if (n == 0)
        return;
    const rp_group *g = &rd->groups[j];
    char title[160], kind[64] = "", num[32], label[128];
    tpl_problem k = g->problem;
    k.n_dims = 0;
    tpl_problem_format(&k, kind, sizeof kind);
    snprintf(title, sizeof title, "%.31s%s%s: best %s by size", g->kernel, kind[0] ? " " : "",
             kind[0] == ':' ? kind + 1 : kind, g->unit);
    rp_svg_open(b, RP_GL_W, RP_GL_H, title);
    rp_svg_text(b, 8, 18, "start", "title", title);
    static const rp_key keys[] = {
        { "tuned", RP_TUNED, 8 }, { "vendor", RP_VENDOR, 72 },
        { "ceiling", "#111827", 144 }, { "launch floor", RP_FLOOR_COLOR, 220 },
    };
    rp_svg_keys(b, keys, 4, 28);
    rp_scale sx, sy;
    double ceiling = g->ceiling.value;
    rp_series_scales(pts, n, ceiling, &sx, &sy);
    rp_axis ax = { sx, RP_CI(RP_GL_Y0), RP_CI(RP_GL_Y1), RP_GL_Y1 + 14, 0, "tick" };
    rp_svg_decades_x(b, &ax);
    rp_axis ay = { sy, RP_CI(RP_GL_X0), RP_CI(RP_GL_X1), RP_GL_X0 - 6, 4, "tick" };
    rp_svg_decades_y(b, &ay);
    const char *dims = g->problem.n_dims == 3 ? "m·n·k" : "n";
    snprintf(label, sizeof label, "problem size %s%s (log)", dims,
             tpl_problem_batch(&g->problem) > 1 ? " · batch" : "");
    rp_svg_text(b, (RP_GL_X0 + RP_GL_X1) / 2.0, RP_GL_Y1 + 32, "middle", "axis", label);
    snprintf(label, sizeof label, "%s (log)", g->unit);
    rp_svg_vtext(b, 14, (RP_GL_Y0 + RP_GL_Y1) / 2.0, "axis", label);
    if (ceiling > 0) {
        double y = rp_scale_at(&sy, ceiling);
        rp_svg_line(b, RP_CI(RP_GL_X0), RP_C(y), RP_CI(RP_GL_X1), RP_C(y), "#111827",
                    "stroke-dasharray=\"6 4\"");
        snprintf(label, sizeof label, "%s %s %s", g->ceiling.source,
                 rp_num(num, sizeof num, ceiling), g->unit);
        rp_svg_text(b, RP_GL_X0 + 4, y - 5, "start", "small", label);
    }
    rp_series_line(b, pts, n, offsetof(rp_gpoint, floor_v), &sx, &sy, RP_FLOOR_COLOR, "2 4", 0);
    rp_series_line(b, pts, n, offsetof(rp_gpoint, vendor), &sx, &sy, RP_VENDOR, "5 3", 2);
    rp_series_line(b, pts, n, offsetof(rp_gpoint, tuned), &sx, &sy, RP_TUNED, NULL, 1);
    rp_svg_text(b, 8, RP_GL_H - 6, "start", "small",
                "floor: the rate if a call took only an empty launch");
    rp_svg_close(b);
}

/* ---- several GPUs side by side ---- */

/* The group of rd with g's kernel and problem, NULL if none. */
static const rp_group *rp_same_group(const rp_device *rd, const rp_group *g)
{
    for (int k = 0; k < rd->n_groups; k++)
        if (strcmp(rd->groups[k].kernel, g->kernel) == 0 &&
            tpl_problem_equal(&rd->groups[k].problem, &g->problem) && rd->groups[k].best >= 0)
            return &rd->groups[k];
    return NULL;
}

/* 1 if no device before d holds g's kernel and problem. */
static int rp_first_holder(const rp_report *rep, int d, const rp_group *g)
{
    for (int i = 0; i < d; i++)
        if (rp_same_group(&rep->devs[i], g))
            return 0;
    return 1;
}

static void rp_compare_cell(rp_buf *b, const rp_group *h)
{
    char num[32];
    if (!h) {
        rp_put(b, "<td class=\"muted\">not tuned</td>");
        return;
    }
    rp_printf(b, "<td class=\"n\">%s %s", rp_num(num, sizeof num, h->best_value), h->unit);
    if (h->vs_vendor > 0) {
        rp_printf(b, "<br><span class=\"muted\">%.2f&times; ", h->vs_vendor);
        rp_esc(b, h->cmp.vendor_name);
        rp_put(b, "</span>");
    } else {
        rp_put(b, "<br><span class=\"muted\">");
        rp_esc(b, h->vendor_note[0] ? h->vendor_note : "no vendor measurement");
        rp_put(b, "</span>");
    }
    rp_put(b, "</td>");
}

void rp_devices_table(rp_buf *b, const rp_report *rep)
{
    rp_put(b, "<div class=\"card wide\"><table>\n<tr><th>Kernel</th><th>Problem</th>");
    for (int i = 0; i < rep->n_devs; i++) {
        rp_put(b, "<th>");
        rp_esc(b, rep->devs[i].dev.info.name);
        rp_put(b, " <span class=\"muted\">(best, vs vendor)</span></th>");
    }
    rp_put(b, "</tr>\n");
    for (int d = 0; d < rep->n_devs; d++)
        for (int k = 0; k < rep->devs[d].n_groups; k++) {
            const rp_group *g = &rep->devs[d].groups[k];
            if (g->best < 0 || !rp_first_holder(rep, d, g))
                continue;
            char prob[96];
            rp_problem_text(&g->problem, prob, sizeof prob);
            rp_put(b, "<tr><td>");
            rp_esc(b, g->kernel);
            rp_put(b, "</td><td class=\"p\">");
            rp_esc(b, prob);
            rp_put(b, "</td>");
            for (int i = 0; i < rep->n_devs; i++)
                rp_compare_cell(b, rp_same_group(&rep->devs[i], g));
            rp_put(b, "</tr>\n");
        }
    rp_put(b, "</table>\n<p class=\"muted\">The same problems on each device: the best "
              "performance tuned there and its ratio to the vendor library measured on the "
              "same device.</p></div>\n");
}
