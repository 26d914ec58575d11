/* charts.c: the report's charts, laid out here and drawn with the pieces of
 * svg.c from the figures that figures.c computed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "charts.h"
#include "svg.h"

static const char *const rp_palette[RP_MAX_SESSIONS] = {
    "#2563eb", "#db2777", "#059669", "#7c3aed", "#d97706", "#0891b2",
};

const char *rp_kind_color(rp_kind kind)
{
    switch (kind) {
    case RP_KIND_TUNED: return RP_TUNED;
    case RP_KIND_DEFAULT: return RP_DEFAULT;
    case RP_KIND_SEED: return RP_SEED;
    case RP_KIND_VENDOR: return RP_VENDOR;
    case RP_KIND_OTHER: return RP_LIGHT;
    }
    return RP_LIGHT;
}

/* A chart's frame and title. */
static void rp_chart_open(rp_buf *b, int w, int h, double title_y, const char *title)
{
    rp_svg_open(b, w, h, title);
    rp_svg_text(b, 8, title_y, "start", "title", title);
}

/* ---- comparison bars ---- */

void rp_chart_bars(rp_buf *b, const char *title, const rp_bar *bars, int n, const char *unit)
{
    const int w = 760, left = 230, right = 120, top = 28, row = 26;
    int h = top + n * row + 44;
    double max = 0;
    for (int i = 0; i < n; i++)
        if (bars[i].value > max)
            max = bars[i].value;
    if (max <= 0)
        max = 1;
    double step, axis_max = rp_nice_top(max, 5, &step);
    double plot = w - left - right, ybot = top + n * row;
    rp_chart_open(b, w, h, 16, title);
    rp_axis ax = { { 0, axis_max, left, w - right, 0 }, RP_CI(top - 4), RP_C(ybot), ybot + 14,
                   0, "tick" };
    rp_svg_grid_x(b, &ax, step, axis_max);
    char num[32], text[160], tip[256];
    snprintf(text, sizeof text, "%s (higher is better)", unit);
    rp_svg_text(b, left + plot / 2, ybot + 32, "middle", "axis", text);
    for (int i = 0; i < n; i++) {
        double y = top + i * row;
        double bw = plot * bars[i].value / axis_max;
        rp_svg_text(b, left - 8, y + row / 2.0 + 4, "end", "label", bars[i].label);
        if (bars[i].value > 0) {
            rp_num(num, sizeof num, bars[i].value);
            snprintf(tip, sizeof tip, "%s: %s %s", bars[i].label, num, unit);
            rp_svg_rect(b, RP_CI(left), RP_C(y + 4), RP_C(bw < 1 ? 1 : bw), RP_CI(row - 8),
                        rp_kind_color(bars[i].kind), NULL, tip);
            snprintf(text, sizeof text, "%s%s%s", num, bars[i].note[0] ? " " : "",
                     bars[i].note);
        } else {
            snprintf(text, sizeof text, "%s", bars[i].note[0] ? bars[i].note : "no data");
        }
        rp_svg_text(b, left + (bars[i].value > 0 ? bw : 0) + 6, y + row / 2.0 + 4, "start",
                    "value", text);
    }
    rp_svg_close(b);
}

/* ---- every configuration, ranked ---- */

/* "compile_error 4, timeout 1, other 2" into out; "" if nothing failed. */
static void rp_failure_text(const rp_group *g, char *out, size_t len)
{
    size_t fl = 0;
    out[0] = '\0';
    for (int s = 0; s < RP_N_FAIL_STATUSES; s++)
        if (g->fails[s] && fl < len)
            fl += (size_t)snprintf(out + fl, len - fl, "%s%s %d", fl ? ", " : "",
                                   rp_fail_statuses[s], g->fails[s]);
    if (g->fails_other && fl < len)
        snprintf(out + fl, len - fl, "%sother %d", fl ? ", " : "", g->fails_other);
}

/* The ranked values as bars (up to 400) or as one filled outline. */
static void rp_ranked_values(rp_buf *b, const rp_group *g, double x0, double y0, double y1,
                             double bw, double max)
{
    int n = g->n_ranked;
    if (n > 0 && n <= 400) {
        for (int i = 0; i < n; i++) {
            double hh = (y1 - y0) * g->ranked[i] / max;
            rp_svg_rect(b, RP_C2(x0 + i * bw), RP_C2(y1 - hh), RP_C2(bw > 2 ? bw - 0.5 : bw),
                        RP_C2(hh), rp_kind_color(g->ranked_kind[i]), NULL, NULL);
        }
    } else if (n > 400) {
        rp_buf d = { 0 };
        rp_path_move(&d, RP_CI(x0), RP_CI(y1));
        for (int i = 0; i < n; i++) {
            double y = y1 - (y1 - y0) * g->ranked[i] / max;
            rp_path_line(&d, RP_C2(x0 + i * bw), RP_C2(y));
            rp_path_line(&d, RP_C2(x0 + (i + 1) * bw), RP_C2(y));
        }
        rp_path_line(&d, RP_C2(x0 + n * bw), RP_CI(y1));
        rp_path_close(&d);
        if (d.oom)
            b->oom = 1;
        rp_svg_path(b, "fill=\"" RP_LIGHT "\"", d.p, NULL);
        free(d.p);
    }
    for (int i = 0; i < n; i++)            /* mark the special ones on top */
        if (g->ranked_kind[i] != RP_KIND_OTHER && n > 40) {
            double y = y1 - (y1 - y0) * g->ranked[i] / max;
            rp_svg_circle(b, RP_C2(x0 + (i + 0.5) * bw), RP_C2(y), RP_CI(4),
                          rp_kind_color(g->ranked_kind[i]), "stroke=\"#fff\"", NULL);
        }
}

void rp_chart_ranked(rp_buf *b, const rp_group *g)
{
    const int w = 760, h = 280, x0 = 70, x1 = 740, y0 = 34, y1 = 230;
    int n = g->n_ranked;
    char title[160], failures[512], text[640];
    snprintf(title, sizeof title, "Every configuration tried: %d ok, sorted (fastest first)", n);
    rp_chart_open(b, w, h, 16, title);
    double max = n ? g->ranked[0] : 1;
    rp_svg_value_axis(b, x0, x1, y0, y1, &max, g->unit);
    double bw = n ? (double)(x1 - x0) / n : 0;
    if (bw > 36)
        bw = 36;                        /* a few configurations: slim bars */
    rp_ranked_values(b, g, x0, y0, y1, bw, max);
    rp_svg_line(b, RP_CI(x0), RP_CI(y1), RP_CI(x1), RP_CI(y1), "#374151", NULL);
    rp_svg_text(b, (x0 + x1) / 2.0, y1 + 18, "middle", "axis",
                "configurations, ranked by performance");
    rp_failure_text(g, failures, sizeof failures);
    snprintf(text, sizeof text, "failed: %s", failures[0] ? failures : "none");
    rp_svg_text(b, x0, h - 10, "start", failures[0] ? "value" : "small", text);
    static const rp_key keys[] = {
        { "best", RP_TUNED, 480 }, { "default", RP_DEFAULT, 530 },
        { "seed baseline", RP_SEED, 595 }, { "other", RP_LIGHT, 685 },
    };
    rp_svg_keys(b, keys, 4, 6);
    rp_svg_close(b);
}

/* ---- search trajectory ---- */

/* One session q: a dot per verified configuration, a tick per failure and
 * the best-so-far line, then its key; returns the dots drawn so far. */
static int rp_trajectory_session(rp_buf *b, const rp_group *g, int q, const rp_scale *sx,
                                 const rp_scale *sy, int points)
{
    const rp_trajectory *t = &g->traj;
    const char *color = rp_palette[q % RP_MAX_SESSIONS];
    double best = 0, lastx = sx->p0, y1 = sy->p0;
    int started = 0;
    rp_buf line = { 0 };
    for (int j = 0; j < g->n; j++) {
        const rp_entry *e = &g->e[j];
        if (e->r->session_id != t->session[q] || e->when < 0)
            continue;
        double x = rp_scale_at(sx, e->when - t->t0[q]);
        if (!e->ok) {
            rp_svg_line(b, RP_C(x), RP_CI(y1), RP_C(x), RP_CI(y1 - 5), RP_FAIL,
                        "stroke-width=\"1\"");
            continue;
        }
        double y = rp_scale_at(sy, e->value);
        if (++points <= 3000)
            rp_svg_circle(b, RP_C(x), RP_C(y), RP_C(2.5), color, "fill-opacity=\"0.5\"", NULL);
        if (e->value > best) {
            if (!started) {
                rp_path_move(&line, RP_C(x), RP_C(y));
            } else {
                rp_path_line(&line, RP_C(x), RP_C(rp_scale_at(sy, best)));
                rp_path_line(&line, RP_C(x), RP_C(y));
            }
            started = 1;
            best = e->value;
        }
        lastx = x;
    }
    if (started) {
        char style[96];
        rp_path_line(&line, RP_C(lastx), RP_C(rp_scale_at(sy, best)));
        snprintf(style, sizeof style, "fill=\"none\" stroke=\"%s\" stroke-width=\"2\"", color);
        rp_svg_path(b, NULL, line.p, style);
    }
    free(line.p);
    char label[96];
    if (t->session[q] > 0)
        snprintf(label, sizeof label, "run %lld", t->session[q]);
    else
        snprintf(label, sizeof label, "no run");
    rp_svg_key_line(b, 470 + (q % 3) * 90, 12 + (q / 3) * 13, color, label);
    return points;
}

void rp_chart_trajectory(rp_buf *b, const rp_group *g)
{
    const int w = 760, h = 290, x0 = 70, x1 = 740, y0 = 34, y1 = 232;
    rp_chart_open(b, w, h, 16, "Search trajectory: best so far against tuning time");
    double vmax = g->traj.vmax > 0 ? g->traj.vmax : 1;
    rp_svg_value_axis(b, x0, x1, y0, y1, &vmax, g->unit);
    double step, tend = rp_nice_top(g->traj.tmax > 0 ? g->traj.tmax : 1, 6, &step);
    rp_axis ax = { { 0, tend, x0, x1, 0 }, RP_CI(y0), RP_CI(y1), y1 + 14, 0, "tick" };
    rp_svg_grid_x(b, &ax, step, tend);
    rp_svg_text(b, (x0 + x1) / 2.0, y1 + 30, "middle", "axis",
                "seconds since the tuning run's first result for this problem");
    rp_scale sy = { 0, vmax, y1, y0, 0 };
    int points = 0;
    for (int q = g->traj.n_sessions - 1; q >= 0; q--)
        points = rp_trajectory_session(b, g, q, &ax.s, &sy, points);
    rp_svg_text(b, x0, h - 6, "start", "small",
                "line: best so far; dots: each verified configuration; red ticks: failures");
    rp_svg_close(b);
}

/* ---- parameter sensitivity ---- */

void rp_chart_param(rp_buf *b, const rp_group *g, const rp_param *p)
{
    const int w = 250, h = 170, x0 = 44, x1 = 240, y0 = 26, y1 = 130;
    char title[96], num[32], tip[160];
    snprintf(title, sizeof title, "%.31s", p->name);
    rp_chart_open(b, w, h, 15, title);
    double step, max = rp_nice_top(g->best_value, 3, &step);
    rp_axis ax = { { 0, max, y1, y0, 0 }, RP_CI(x0), RP_CI(x1), x0 - 4, 3, "small" };
    rp_svg_grid_y(b, &ax, step, max);
    double slot = (double)(x1 - x0) / p->nv;
    for (int k = 0; k < p->nv; k++) {
        const rp_pval *v = &p->vals[k];
        double x = x0 + k * slot;
        double hh = (y1 - y0) * v->best / max;
        if (v->best > 0) {
            snprintf(tip, sizeof tip, "%s=%s: best %s %s, %d tried", p->name, v->value,
                     rp_num(num, sizeof num, v->best), g->unit, v->tried);
            rp_svg_rect(b, RP_C(x + slot * 0.15), RP_C(y1 - hh), RP_C(slot * 0.7), RP_C(hh),
                        strcmp(v->value, p->best_value) == 0 ? RP_TUNED : RP_LIGHT, NULL, tip);
        } else {
            rp_svg_text_at(b, RP_C(x + slot / 2), RP_CI(y1 - 4), "middle", "small",
                           "fill=\"" RP_FAIL "\"", "none ok");
        }
        rp_svg_text(b, x + slot / 2, y1 + 13, "middle", "small", v->value);
    }
    rp_svg_text(b, (x0 + x1) / 2.0, y1 + 28, "middle", "small", "parameter value");
    snprintf(title, sizeof title, "best %s at each value", g->unit);
    rp_svg_text(b, (x0 + x1) / 2.0, y1 + 40, "middle", "small", title);
    rp_svg_close(b);
}

/* ---- roofline ---- */

#define RP_ROOF_X0 80
#define RP_ROOF_X1 600
#define RP_ROOF_Y0 30
#define RP_ROOF_Y1 330

/* The device's ceiling of that name, NULL if none. */
static const rp_ceiling *rp_ceiling_of_kind(const rp_device *rd, const char *name)
{
    const rp_ceiling *all[] = { &rd->fp32, &rd->fp64, &rd->tensor16, &rd->tf32, &rd->tensor8 };
    for (int i = 0; i < 5; i++)
        if (all[i]->name && strcmp(all[i]->name, name) == 0 && all[i]->value > 0)
            return all[i];
    return NULL;
}

/* The roofline's log scales and ceilings. */
typedef struct rp_roof_frame {
    rp_scale x, y;                  /* arithmetic intensity, GFLOP/s */
    double peak, bw, ridge;
} rp_roof_frame;

/* Decades that hold every point, the ridge and the ceilings. */
static void rp_roof_range(const rp_device *rd, rp_roof_frame *f)
{
    double ai_lo = 1e9, ai_hi = 0, gf_lo = 1e30, gf_hi = rd->fp32.value;
    for (int k = 0; k < rd->n_groups; k++) {
        const rp_roof *p = &rd->groups[k].roof;
        if (!p->valid)
            continue;
        ai_lo = fmin(ai_lo, p->ai);
        ai_hi = fmax(ai_hi, p->ai);
        gf_lo = fmin(gf_lo, p->gflops);
    }
    f->peak = rd->fp32.value;
    f->bw = rd->bandwidth.value;
    f->ridge = f->bw > 0 ? f->peak / f->bw : 0;
    double lx0 = floor(log10(fmin(ai_lo, f->ridge > 0 ? f->ridge : ai_lo))) - 0.5;
    double lx1 = ceil(log10(fmax(ai_hi, f->ridge > 0 ? f->ridge : ai_hi))) + 0.5;
    if (lx1 - lx0 < 2)
        lx1 = lx0 + 2;
    for (int k = 0; k < rd->n_groups; k++)
        if (rd->groups[k].roof.valid) {
            gf_hi = fmax(gf_hi, fmax(rd->groups[k].roof.gflops,
                                     rd->groups[k].roof.vendor_gflops));
            if (rd->groups[k].is_flops)
                gf_hi = fmax(gf_hi, rd->groups[k].ceiling.value);
        }
    double ly1 = ceil(log10(gf_hi * 1.5));
    double ly0 = floor(log10(fmin(gf_lo, f->bw > 0 ? f->bw * pow(10, lx0) : gf_lo)));
    if (ly1 - ly0 > 7)
        ly0 = ly1 - 7;
    if (ly1 - ly0 < 2)
        ly0 = ly1 - 2;
    f->x = (rp_scale){ lx0, lx1, RP_ROOF_X0, RP_ROOF_X1, 1 };
    f->y = (rp_scale){ ly0, ly1, RP_ROOF_Y1, RP_ROOF_Y0, 1 };
}

/* Decade grids and the axis titles. */
static void rp_roof_axes(rp_buf *b, const rp_roof_frame *f)
{
    const int x0 = RP_ROOF_X0, x1 = RP_ROOF_X1, y0 = RP_ROOF_Y0, y1 = RP_ROOF_Y1;
    rp_axis ax = { f->x, RP_CI(y0), RP_CI(y1), y1 + 14, 0, "tick" };
    rp_svg_decades_x(b, &ax);
    rp_axis ay = { f->y, RP_CI(x0), RP_CI(x1), x0 - 6, 4, "tick" };
    rp_svg_decades_y(b, &ay);
    rp_svg_text(b, (x0 + x1) / 2.0, y1 + 32, "middle", "axis",
                "arithmetic intensity (flops per byte of minimum DRAM traffic, log)");
    rp_svg_vtext(b, 16, (y0 + y1) / 2.0, "axis", "GFLOP/s (log)");
}

/* The bandwidth slope up to the ridge, then the flat FP32 peak, labelled. */
static void rp_roof_ceilings(rp_buf *b, const rp_device *rd, const rp_roof_frame *f)
{
    const int x0 = RP_ROOF_X0, x1 = RP_ROOF_X1, y0 = RP_ROOF_Y0, y1 = RP_ROOF_Y1;
    const rp_scale *sx = &f->x, *sy = &f->y;
    double ax0 = pow(10, sx->lo), ax1 = pow(10, sx->hi);
    rp_buf d = { 0 };
    if (f->bw > 0) {
        double start = fmax(ax0, pow(10, sy->lo) / f->bw);
        rp_path_move(&d, RP_C(rp_scale_at(sx, start)), RP_C(rp_scale_at(sy, f->bw * start)));
        rp_path_line(&d, RP_C(rp_scale_at(sx, f->ridge)), RP_C(rp_scale_at(sy, f->peak)));
    } else {
        rp_path_move(&d, RP_C(rp_scale_at(sx, ax0)), RP_C(rp_scale_at(sy, f->peak)));
    }
    rp_path_line(&d, RP_C(rp_scale_at(sx, ax1)), RP_C(rp_scale_at(sy, f->peak)));
    if (d.oom)
        b->oom = 1;
    rp_svg_path(b, "fill=\"none\" stroke=\"#111827\" stroke-width=\"2\"", d.p, NULL);
    free(d.p);
    char num[32], label[160], rot[160];
    snprintf(label, sizeof label, "FP32 %s %s GFLOP/s", rd->fp32.source,
             rp_num(num, sizeof num, f->peak));
    rp_svg_text(b, x1 - 4, rp_scale_at(sy, f->peak) - 6, "end", "small", label);
    if (f->bw > 0) {
        snprintf(label, sizeof label, "read %s %s GB/s", rd->bandwidth.source,
                 rp_num(num, sizeof num, f->bw));
        double lxa = fmax(ax0, pow(10, sy->lo) / f->bw) * 1.6;
        double x = rp_scale_at(sx, lxa), y = rp_scale_at(sy, f->bw * lxa) - 6;
        snprintf(rot, sizeof rot, "transform=\"rotate(%.1f %.1f %.1f)\"",
                 -atan2((y1 - y0) / (sy->hi - sy->lo), (x1 - x0) / (sx->hi - sx->lo)) * 180 /
                     M_PI, x, y);
        rp_svg_text_at(b, RP_C(x), RP_C(y), NULL, "small", rot, label);
    }
}

/* The compute ceiling of every other kind on the roofline (BF16/FP16,
 * TF32 tensor, FP64), from its ridge on; labels at the left where two
 * lines would put them within 14 pixels of each other. */
static void rp_roof_more(rp_buf *b, const rp_device *rd, const rp_roof_frame *f)
{
    const rp_ceiling *shown[4] = { &rd->fp32 };
    int n = 1;
    double last_y = rp_scale_at(&f->y, f->peak);
    for (int k = 0; k < rd->n_groups; k++) {
        const rp_group *g = &rd->groups[k];
        if (!g->roof.valid || !g->is_flops || g->ceiling.value <= 0)
            continue;
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= strcmp(shown[i]->name, g->ceiling.name) == 0;
        if (seen || n == 4)
            continue;
        const rp_ceiling *c = rp_ceiling_of_kind(rd, g->ceiling.name);
        if (!c)
            continue;
        shown[n++] = c;
        double y = rp_scale_at(&f->y, c->value);
        double xr = f->bw > 0 ? rp_scale_at(&f->x, fmax(c->value / f->bw, pow(10, f->x.lo)))
                              : RP_ROOF_X0;
        rp_svg_line(b, RP_C(xr), RP_C(y), RP_CI(RP_ROOF_X1), RP_C(y), "#111827",
                    "stroke-dasharray=\"6 3\"");
        char num[32], label[128];
        snprintf(label, sizeof label, "%s %s %s GFLOP/s", c->name, c->source,
                 rp_num(num, sizeof num, c->value));
        int left = fabs(y - last_y) < 14;
        rp_svg_text(b, left ? RP_ROOF_X0 + 4 : RP_ROOF_X1 - 4, y - 6, left ? "start" : "end",
                    "small", label);
        last_y = y;
    }
}

/* Colours of the roofline's series (family and kind). */
static const char *const rp_series_palette[] = {
    "#2563eb", "#db2777", "#059669", "#7c3aed", "#d97706", "#0891b2", "#65a30d", "#dc2626",
    "#4f46e5", "#a16207", "#0f766e", "#9333ea",
};
#define RP_N_SERIES_COLORS ((int)(sizeof rp_series_palette / sizeof rp_series_palette[0]))

/* The colour index of group k: its kernel's place among the kernels of
 * ov's rows in row order (one family, one colour); -1 if it has no row. */
static int rp_roof_color_of(const rp_device *rd, const rp_overview *ov, int k,
                            char kernels[][32], int *n_kernels)
{
    if (ov->row_of[k] < 0)
        return -1;
    for (int i = 0; i < *n_kernels; i++)
        if (strcmp(kernels[i], rd->groups[k].kernel) == 0)
            return i;
    if (*n_kernels == RP_MAX_ROWS)
        return -1;
    snprintf(kernels[*n_kernels], 32, "%s", rd->groups[k].kernel);
    return (*n_kernels)++;
}

/* A dot per best (a square for the vendor's) in its family's colour, and a
 * key per family at the right naming its kinds, in the order of the rows. */
static void rp_roof_points(rp_buf *b, const rp_device *rd, const rp_overview *ov,
                           const rp_roof_frame *f)
{
    double floor_gf = pow(10, f->y.lo);
    char kernels[RP_MAX_ROWS][32];
    int n_kernels = 0, shown[RP_MAX_ROWS] = { 0 };
    for (int i = 0; i < rd->n_groups; i++)          /* colours in display order */
        rp_roof_color_of(rd, ov, ov->order[i], kernels, &n_kernels);
    for (int k = 0; k < rd->n_groups; k++) {
        const rp_group *g = &rd->groups[k];
        int c = rp_roof_color_of(rd, ov, k, kernels, &n_kernels);
        if (!g->roof.valid || c < 0)
            continue;
        const char *color = rp_series_palette[c % RP_N_SERIES_COLORS];
        char prob[96], num[32], text[256];
        rp_problem_text(&g->problem, prob, sizeof prob);
        double x = rp_scale_at(&f->x, g->roof.ai);
        double y = rp_scale_at(&f->y, fmax(g->roof.gflops, floor_gf));
        snprintf(text, sizeof text, "%s %s: %s GFLOP/s at %.3g flop/byte", g->kernel, prob,
                 rp_num(num, sizeof num, g->roof.gflops), g->roof.ai);
        rp_svg_circle(b, RP_C(x), RP_C(y), RP_CI(5), color, "fill-opacity=\"0.85\"", text);
        if (g->roof.vendor_gflops > 0) {
            char style[64];
            snprintf(style, sizeof style, "stroke=\"%s\" stroke-width=\"1.5\"", color);
            double yv = rp_scale_at(&f->y, fmax(g->roof.vendor_gflops, floor_gf));
            rp_svg_rect(b, RP_C(x - 4.5), RP_C(yv - 4.5), RP_CI(9), RP_CI(9), "none", style,
                        NULL);
        }
        shown[c] = 1;
    }
    int n_keys = 0;
    for (int c = 0; c < n_kernels; c++) {
        if (!shown[c])
            continue;
        char label[160] = "";                         /* its kinds: "BF16, FP16, TF32 GEMM" */
        int seen[RP_MAX_ROWS] = { 0 };
        for (int i = 0; i < rd->n_groups; i++) {
            int k = ov->order[i], r = ov->row_of[k];
            if (r < 0 || strcmp(rd->groups[k].kernel, kernels[c]) != 0 || seen[ov->rows[r].series])
                continue;
            seen[ov->rows[r].series] = 1;
            size_t n = strlen(label);
            snprintf(label + n, sizeof label - n, "%s%s", n ? ", " : "",
                     ov->series_label[ov->rows[r].series]);
        }
        if (strlen(label) > 40)
            snprintf(label + 37, sizeof label - 37, "...");
        double ly = RP_ROOF_Y0 + 14 + n_keys * 16;
        if (ly < RP_ROOF_Y1)
            rp_svg_key_dot(b, RP_ROOF_X1 + 16, ly, rp_series_palette[c % RP_N_SERIES_COLORS],
                           label);
        n_keys++;
    }
}

int rp_chart_roofline(rp_buf *b, const rp_device *rd, const rp_overview *ov)
{
    int n = 0;
    for (int k = 0; k < rd->n_groups; k++)
        n += rd->groups[k].roof.valid;
    if (n == 0 || rd->fp32.value <= 0)
        return 0;
    rp_roof_frame f;
    rp_roof_range(rd, &f);
    rp_chart_open(b, 860, 400, 16,
                  "Roofline: every best against arithmetic intensity and the ceilings");
    rp_roof_axes(b, &f);
    rp_roof_ceilings(b, rd, &f);
    rp_roof_more(b, rd, &f);
    rp_roof_points(b, rd, ov, &f);
    rp_svg_text(b, RP_ROOF_X0, 400 - 8, "start", "small",
                "circles: tuned best, coloured by family; hollow squares: vendor library on the same "
                "problem; lines: ceilings (dashed: tensor cores, FP64)");
    rp_svg_close(b);
    return 1;
}
