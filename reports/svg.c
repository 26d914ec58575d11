/* svg.c: the inline SVG pieces of the report's charts; every text they
 * write from outside goes through rp_esc. */
#include <math.h>
#include <stdio.h>
#include "svg.h"

double rp_scale_at(const rp_scale *s, double v)
{
    double t = s->log ? log10(v) : v;
    return s->p0 + (s->p1 - s->p0) * (t - s->lo) / (s->hi - s->lo);
}

double rp_nice_step(double range, int target)
{
    if (range <= 0 || !isfinite(range))
        return 1;
    double raw = range / target;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

double rp_nice_top(double max, int target, double *step)
{
    *step = rp_nice_step(max, target);
    double top = ceil(max / *step) * *step;
    return top > 0 ? top : 1;
}

/* A coordinate with its decimals. */
static void rp_co_put(rp_buf *b, const char *name, rp_co c)
{
    rp_printf(b, " %s=\"%.*f\"", name, c.dp, c.v);
}

void rp_svg_grid_x(rp_buf *b, const rp_axis *ax, double step, double top)
{
    char num[32];
    for (double v = 0; v <= top + step / 2; v += step) {
        double x = rp_scale_at(&ax->s, v);
        rp_svg_line(b, RP_C(x), ax->from, RP_C(x), ax->to, RP_GRID, NULL);
        rp_svg_text(b, x, ax->label_at, "middle", ax->cls, rp_tick(num, sizeof num, v));
    }
}

void rp_svg_grid_y(rp_buf *b, const rp_axis *ax, double step, double top)
{
    char num[32];
    for (double v = 0; v <= top + step / 2; v += step) {
        double y = rp_scale_at(&ax->s, v);
        rp_svg_line(b, ax->from, RP_C(y), ax->to, RP_C(y), RP_GRID, NULL);
        rp_svg_text(b, ax->label_at, y + ax->label_dy, "end", ax->cls,
                    rp_tick(num, sizeof num, v));
    }
}

/* A decade's label: 0.01 ... 10000 as numbers, beyond that 1e5, 1e-3. */
static const char *rp_decade_text(char *out, size_t len, double e)
{
    if (e >= 5 || e <= -3)
        snprintf(out, len, "1e%.0f", e);
    else
        rp_tick(out, len, pow(10, e));
    return out;
}

void rp_svg_decades_x(rp_buf *b, const rp_axis *ax)
{
    char num[32];
    for (double e = ceil(ax->s.lo); e <= ax->s.hi; e += 1) {
        double x = rp_scale_at(&ax->s, pow(10, e));
        rp_svg_line(b, RP_C(x), ax->from, RP_C(x), ax->to, RP_GRID, NULL);
        rp_svg_text(b, x, ax->label_at, "middle", ax->cls, rp_decade_text(num, sizeof num, e));
    }
}

void rp_svg_decades_y(rp_buf *b, const rp_axis *ax)
{
    char num[32];
    for (double e = ceil(ax->s.lo); e <= ax->s.hi; e += 1) {
        double y = rp_scale_at(&ax->s, pow(10, e));
        rp_svg_line(b, ax->from, RP_C(y), ax->to, RP_C(y), RP_GRID, NULL);
        rp_svg_text(b, ax->label_at, y + ax->label_dy, "end", ax->cls,
                    rp_decade_text(num, sizeof num, e));
    }
}

void rp_svg_value_axis(rp_buf *b, double x0, double x1, double y0, double y1, double *max,
                       const char *unit)
{
    double step;
    *max = rp_nice_top(*max, 5, &step);
    rp_axis ax = { { 0, *max, y1, y0, 0 }, RP_C(x0), RP_C(x1), x0 - 6, 4, "tick" };
    rp_svg_grid_y(b, &ax, step, *max);
    rp_svg_vtext(b, 14, (y0 + y1) / 2, "axis", unit);
}

void rp_svg_open(rp_buf *b, int w, int h, const char *label)
{
    rp_printf(b, "<svg class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
                 "role=\"img\" aria-label=\"", w, h, w, h);
    rp_esc(b, label);
    rp_put(b, "\">\n");
}

void rp_svg_close(rp_buf *b)
{
    rp_put(b, "</svg>\n");
}

void rp_svg_text(rp_buf *b, double x, double y, const char *anchor, const char *cls,
                 const char *text)
{
    rp_svg_text_at(b, RP_C(x), RP_C(y), anchor, cls, NULL, text);
}

void rp_svg_text_at(rp_buf *b, rp_co x, rp_co y, const char *anchor, const char *cls,
                    const char *extra, const char *text)
{
    rp_put(b, "<text");
    rp_co_put(b, "x", x);
    rp_co_put(b, "y", y);
    if (anchor)
        rp_printf(b, " text-anchor=\"%s\"", anchor);
    rp_printf(b, " class=\"%s\"%s%s>", cls, extra ? " " : "", extra ? extra : "");
    rp_esc(b, text);
    rp_put(b, "</text>\n");
}

void rp_svg_vtext(rp_buf *b, int x, double y, const char *cls, const char *text)
{
    rp_printf(b, "<text transform=\"translate(%d,%.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "class=\"%s\">", x, y, cls);
    rp_esc(b, text);
    rp_put(b, "</text>\n");
}

void rp_svg_line(rp_buf *b, rp_co x1, rp_co y1, rp_co x2, rp_co y2, const char *stroke,
                 const char *extra)
{
    rp_put(b, "<line");
    rp_co_put(b, "x1", x1);
    rp_co_put(b, "y1", y1);
    rp_co_put(b, "x2", x2);
    rp_co_put(b, "y2", y2);
    rp_printf(b, " stroke=\"%s\"%s%s/>\n", stroke, extra ? " " : "", extra ? extra : "");
}

/* The end of a shape: its extra attributes, then a tooltip or "/>". */
static void rp_shape_end(rp_buf *b, const char *element, const char *extra, const char *title)
{
    if (extra)
        rp_printf(b, " %s", extra);
    if (!title) {
        rp_put(b, "/>\n");
        return;
    }
    rp_put(b, "><title>");
    rp_esc(b, title);
    rp_printf(b, "</title></%s>\n", element);
}

void rp_svg_rect(rp_buf *b, rp_co x, rp_co y, rp_co w, rp_co h, const char *fill,
                 const char *extra, const char *title)
{
    rp_put(b, "<rect");
    rp_co_put(b, "x", x);
    rp_co_put(b, "y", y);
    rp_co_put(b, "width", w);
    rp_co_put(b, "height", h);
    rp_printf(b, " fill=\"%s\"", fill);
    rp_shape_end(b, "rect", extra, title);
}

void rp_svg_circle(rp_buf *b, rp_co cx, rp_co cy, rp_co r, const char *fill,
                   const char *extra, const char *title)
{
    rp_put(b, "<circle");
    rp_co_put(b, "cx", cx);
    rp_co_put(b, "cy", cy);
    rp_co_put(b, "r", r);
    rp_printf(b, " fill=\"%s\"", fill);
    rp_shape_end(b, "circle", extra, title);
}

void rp_path_move(rp_buf *d, rp_co x, rp_co y)
{
    rp_printf(d, "M%.*f %.*f", x.dp, x.v, y.dp, y.v);
}

void rp_path_line(rp_buf *d, rp_co x, rp_co y)
{
    rp_printf(d, " L%.*f %.*f", x.dp, x.v, y.dp, y.v);
}

void rp_path_close(rp_buf *d)
{
    rp_put(d, " Z");
}

void rp_svg_path(rp_buf *b, const char *before, const char *d, const char *after)
{
    rp_printf(b, "<path%s%s d=\"%s\"%s%s/>\n", before ? " " : "", before ? before : "",
              d ? d : "", after ? " " : "", after ? after : "");
}

void rp_svg_keys(rp_buf *b, const rp_key *keys, int n, int y)
{
    rp_put(b, "<g class=\"small\">");
    for (int i = 0; i < n; i++) {
        rp_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                     "<text x=\"%d\" y=\"%d\" class=\"small\">", keys[i].x, y, keys[i].color,
                  keys[i].x + 14, y + 9);
        rp_esc(b, keys[i].label);
        rp_put(b, "</text>");
    }
    rp_put(b, "</g>\n");
}

void rp_svg_key_line(rp_buf *b, double x, double y, const char *color, const char *label)
{
    rp_svg_rect(b, RP_CI(x), RP_CI(y), RP_CI(14), RP_CI(3), color, NULL, NULL);
    rp_svg_text(b, x + 18, y + 4, "start", "small", label);
}

void rp_svg_key_dot(rp_buf *b, int x, double y, const char *color, const char *label)
{
    rp_svg_circle(b, RP_CI(x), RP_C(y - 4), RP_CI(4), color, NULL, NULL);
    rp_svg_text(b, x + 8, y, "start", "small", label);
}

void rp_svg_key_stroke(rp_buf *b, double x, double y, const char *color, const char *dash,
                       int mark, const char *label)
{
    char extra[96];
    snprintf(extra, sizeof extra, "stroke-width=\"2\"%s%s%s", dash ? " stroke-dasharray=\"" : "",
             dash ? dash : "", dash ? "\"" : "");
    rp_svg_line(b, RP_C(x), RP_C(y), RP_C(x + 20), RP_C(y), color, extra);
    if (mark == 1)
        rp_svg_circle(b, RP_C(x + 10), RP_C(y), RP_CI(4), color, NULL, NULL);
    else if (mark == 2)
        rp_svg_rect(b, RP_C(x + 6.5), RP_C(y - 3.5), RP_CI(7), RP_CI(7), color, NULL, NULL);
    rp_svg_text(b, x + 24, y + 4, "start", "small", label);
}
