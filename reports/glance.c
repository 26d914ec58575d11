/* glance.c: the report's charts by size: per family and kind the best
 * performance against problem size with the vendor library, the ceiling
 * and the launch floor (never drawn above the ceiling); and the tuned
 * problems of several GPUs side by side. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "charts.h"
#include "overview.h"
#include "svg.h"

#define RP_GL_W 480
#define RP_GL_H 300
#define RP_GL_X0 62
#define RP_GL_X1 462
#define RP_GL_Y0 52
#define RP_GL_Y1 248
#define RP_FLOOR_COLOR "#d97706"

/* One point per verified group of a series, by size; x_px is where its
 * marks are drawn (dodged apart from a neighbour at nearly the same size). */
typedef struct rp_gpoint {
    double x, tuned, vendor, floor_v;
    double x_px;
    int dodged;                     /* 0: alone; -k: the k-th of its cluster left of the
                                       middle, k: the k-th right of it */
    const tpl_problem *p;
} rp_gpoint;

static int rp_gpoint_cmp(const void *a, const void *b)
{
    double x = ((const rp_gpoint *)a)->x, y = ((const rp_gpoint *)b)->x;
    return (x > y) - (x < y);
}

static int rp_series_points(const rp_device *rd, const int *groups, int n_groups, rp_gpoint *pts,
                            int max)
{
    int n = 0;
    for (int i = 0; i < n_groups && n < max; i++) {
        const rp_group *g = &rd->groups[groups[i]];
        if (g->best < 0 || g->best_value <= 0)
            continue;
        double t = g->e[g->best].r->time_ms;
        memset(&pts[n], 0, sizeof pts[n]);
        pts[n].x = rp_size_of(&g->problem);
        pts[n].tuned = g->best_value;
        pts[n].vendor = g->cmp.vendor_best;
        pts[n].floor_v = rd->floor_ms > 0 && t > 0 ? g->best_value * t / rd->floor_ms : 0;
        pts[n].p = &g->problem;
        n++;
    }
    qsort(pts, (size_t)n, sizeof *pts, rp_gpoint_cmp);
    return n;
}

/* Log scales that hold every point, the ceiling and the floor below it,
 * whole decades. */
static void rp_series_scales(const rp_gpoint *p, int n, double ceiling, rp_scale *sx,
                             rp_scale *sy)
{
    double xlo = p[0].x, xhi = p[n - 1].x, ylo = 1e300, yhi = ceiling;
    for (int i = 0; i < n; i++) {
        ylo = fmin(ylo, p[i].tuned);
        yhi = fmax(yhi, p[i].tuned);
        if (p[i].vendor > 0)
            ylo = fmin(ylo, p[i].vendor), yhi = fmax(yhi, p[i].vendor);
        if (p[i].floor_v > 0 && (ceiling <= 0 || p[i].floor_v < ceiling))
            ylo = fmin(ylo, p[i].floor_v);
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

/* Points closer than RP_GL_DODGE pixels on x to their neighbour form a
 * cluster (two sizes such as 4096^3 and 4097^3 would otherwise share one x):
 * its points are drawn RP_GL_DODGE apart around their middle and labelled
 * with their sizes, the left half's labels to the left, the rest to the right. */
#define RP_GL_DODGE 10
static void rp_series_dodge(rp_gpoint *p, int n, const rp_scale *sx)
{
    for (int i = 0; i < n; i++) {
        p[i].x_px = rp_scale_at(sx, p[i].x);
        p[i].dodged = 0;
    }
    for (int i = 0; i < n;) {
        int c = 1;
        while (i + c < n && p[i + c].x_px - p[i + c - 1].x_px < RP_GL_DODGE)
            c++;
        if (c > 1) {
            double mid = (p[i].x_px + p[i + c - 1].x_px) / 2;
            for (int k = 0; k < c; k++) {
                p[i + k].x_px = mid + (k - (c - 1) / 2.0) * RP_GL_DODGE;
                p[i + k].dodged = k < c / 2 ? -1 - (c / 2 - 1 - k) : 1 + (k - c / 2);
            }
        }
        i += c;
    }
}

/* "4097³" for a cube, else the sizes ("8192x8192x1024"). */
static void rp_size_label(const tpl_problem *p, char *out, size_t len)
{
    if (p->n_dims == 3 && p->dims[0] == p->dims[1] && p->dims[1] == p->dims[2] &&
        tpl_problem_batch(p) <= 1)
        snprintf(out, len, "%lld\xc2\xb3", p->dims[0]);
    else
        rp_dims_text(p, out, len);
}

/* A line through one field of the points (those > 0) at their x_px, clipped below to the plot and above to cap (> 0: the part above it
 * is not drawn, the line ends where it meets cap); dash: a
 * stroke-dasharray or NULL; marks: 1 circles, 2 squares. */
static void rp_series_line(rp_buf *b, const rp_gpoint *p, int n, size_t field, const rp_scale *sy,
                           double cap, const char *color, const char *dash, int marks,
                           const char *cls)
{
    rp_buf d = { 0 };
    double ymin = pow(10, sy->lo), ymax = pow(10, sy->hi);
    double top = cap > 0 ? fmin(cap, ymax) : ymax;
    double top_px = rp_scale_at(sy, top);
    int have_prev = 0, prev_in = 0;
    double px = 0, py = 0;
    for (int i = 0; i < n; i++) {
        double v = *(const double *)((const char *)&p[i] + field);
        if (v <= 0)
            continue;
        int in = v <= top;
        double x = p[i].x_px, y = rp_scale_at(sy, fmin(fmax(v, ymin), top));
        if (!in)
            y = rp_scale_at(sy, fmax(v, ymin));
        if (have_prev && in != prev_in) {
            double t = (top_px - py) / (y - py);           /* where the segment meets cap */
            rp_co cx = RP_C(px + t * (x - px)), cy = RP_C(top_px);
            if (prev_in)
                rp_path_line(&d, cx, cy);
            else
                rp_path_move(&d, cx, cy);
        }
        if (in) {
            if (have_prev)              /* from the last point or where it met cap */
                rp_path_line(&d, RP_C(x), RP_C(y));
            else
                rp_path_move(&d, RP_C(x), RP_C(y));
            if (marks == 1)
                rp_svg_circle(b, RP_C(x), RP_C(y), RP_CI(4), color, NULL, NULL);
            else if (marks == 2)
                rp_svg_rect(b, RP_C(x - 3.5), RP_C(y - 3.5), RP_CI(7), RP_CI(7), color, NULL,
                            NULL);
        }
        have_prev = 1;
        prev_in = in;
        px = x;
        py = y;
    }
    if (d.len) {
        char style[160];
        snprintf(style, sizeof style, "class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s",
                 cls, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
        rp_svg_path(b, NULL, d.p, style);
    }
    if (d.oom)
        b->oom = 1;
    free(d.p);
}

/* The sizes of dodged points beside them: the left half's to their left,
 * the rest to their right, each further one on a side a line lower; a label
 * that would leave the chart goes to the other side, two lines lower. */
static void rp_series_size_labels(rp_buf *b, const rp_gpoint *p, int n, const rp_scale *sy)
{
    char label[64];
    for (int i = 0; i < n; i++) {
        if (!p[i].dodged)
            continue;
        rp_size_label(p[i].p, label, sizeof label);
        double width = 6.0 * (double)strlen(label);    /* 10 px text, a generous estimate */
        int side = p[i].dodged < 0 ? -1 : 1, line = abs(p[i].dodged) - 1;
        if ((side > 0 && p[i].x_px + 7 + width > RP_GL_W - 2) ||
            (side < 0 && p[i].x_px - 7 - width < 2)) {
            side = -side;
            line += 2;
        }
        double y = rp_scale_at(sy, fmax(p[i].tuned, pow(10, sy->lo))) + 4 + 12 * line;
        rp_svg_text(b, p[i].x_px + 7 * side, y, side < 0 ? "end" : "start", "small", label);
    }
}

void rp_chart_sizes(rp_buf *b, const rp_device *rd, const int *groups, int n_groups,
                    const char *kind)
{
    rp_gpoint pts[64];
    int n = rp_series_points(rd, groups, n_groups, pts, 64);
    if (n == 0)
        return;
    const rp_group *g = &rd->groups[groups[0]];
    char title[160], num[32], label[128];
    snprintf(title, sizeof title, "%.63s (%.31s): best %s by size", kind, g->kernel, g->unit);
    rp_svg_open(b, RP_GL_W, RP_GL_H, title);
    rp_svg_text(b, 8, 18, "start", "title", title);
    rp_svg_key_stroke(b, 8, 33, RP_TUNED, NULL, 1, "tuned");
    rp_svg_key_stroke(b, 78, 33, RP_VENDOR, "5 3", 2, "vendor");
    rp_svg_key_stroke(b, 154, 33, "#111827", "6 4", 0, "ceiling");
    rp_svg_key_stroke(b, 232, 33, RP_FLOOR_COLOR, "2 4", 0, "launch floor");
    rp_scale sx, sy;
    double ceiling = g->ceiling.value;
    rp_series_scales(pts, n, ceiling, &sx, &sy);
    rp_series_dodge(pts, n, &sx);
    rp_axis ax = { sx, RP_CI(RP_GL_Y0), RP_CI(RP_GL_Y1), RP_GL_Y1 + 17, 0, "tick" };
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
                    "class=\"ceiling\" stroke-width=\"2\" stroke-dasharray=\"6 4\"");
        snprintf(label, sizeof label, "ceiling: %s %s %s", g->ceiling.source,
                 rp_num(num, sizeof num, ceiling), g->unit);
        rp_svg_text(b, RP_GL_X0 + 4, y - 5, "start", "small", label);
    }
    rp_series_line(b, pts, n, offsetof(rp_gpoint, floor_v), &sy, ceiling, RP_FLOOR_COLOR, "2 4",
                   0, "floor");
    rp_series_line(b, pts, n, offsetof(rp_gpoint, vendor), &sy, 0, RP_VENDOR, "5 3", 2, "vendor");
    rp_series_line(b, pts, n, offsetof(rp_gpoint, tuned), &sy, 0, RP_TUNED, NULL, 1, "tuned");
    rp_series_size_labels(b, pts, n, &sy);
    rp_svg_text(b, 8, RP_GL_H - 6, "start", "small",
                "launch floor: the rate if a call took only an empty launch (up to the ceiling)");
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
