/* svg.h: inline SVG pieces the report's charts are built from: scales,
 * axes and grids, text, lines, rectangles, dots, paths and legends. */
#ifndef RP_SVG_H
#define RP_SVG_H

#include "text.h"

#define RP_GRID "#e5e7eb"           /* grid lines */

/* A coordinate and the decimals it is written with (0: as an integer). */
typedef struct rp_co {
    double v;
    int dp;
} rp_co;
#define RP_C(x) ((rp_co){ (x), 1 })
#define RP_CI(x) ((rp_co){ (x), 0 })
#define RP_C2(x) ((rp_co){ (x), 2 })

/* Values [lo, hi] (their log10 where log) onto pixels [p0, p1]. */
typedef struct rp_scale {
    double lo, hi;
    double p0, p1;
    int log;
} rp_scale;
double rp_scale_at(const rp_scale *s, double v);

/* A "nice" step near range / target ticks: 1, 2 or 5 x 10^k (1 for an
 * empty or non-finite range). */
double rp_nice_step(double range, int target);
/* max rounded up to a multiple of the nice step for target ticks (stored
 * in *step); 1 where that is not positive. */
double rp_nice_top(double max, int target, double *step);

/* The grid of one axis: grid lines from `from` to `to` across the plot,
 * tick labels (class cls) at `label_at` (below an x axis: their y; left
 * of a y axis: their x, right-aligned, label_dy below the line). */
typedef struct rp_axis {
    rp_scale s;
    rp_co from, to;
    double label_at, label_dy;
    const char *cls;
} rp_axis;
/* Lines and labels at 0, step, ... up to top (linear axes). */
void rp_svg_grid_x(rp_buf *b, const rp_axis *ax, double step, double top);
void rp_svg_grid_y(rp_buf *b, const rp_axis *ax, double step, double top);
/* Lines and labels at every power of ten in the range (log axes); labels
 * 0.01 to 10000 as numbers, beyond as 1e5, 1e-3. */
void rp_svg_decades_x(rp_buf *b, const rp_axis *ax);
void rp_svg_decades_y(rp_buf *b, const rp_axis *ax);
/* A value axis from 0 on the left of the plot box [x0, x1] x [y0 (top),
 * y1]: *max is rounded up to a nice top, grid, ticks and the unit. */
void rp_svg_value_axis(rp_buf *b, double x0, double x1, double y0, double y1, double *max,
                       const char *unit);

/* <svg> with an escaped accessible label, and its end. */
void rp_svg_open(rp_buf *b, int w, int h, const char *label);
void rp_svg_close(rp_buf *b);

/* Text, escaped. anchor: start, middle, end. rp_svg_text_at: NULL anchor
 * leaves it out; extra (attributes, or NULL) follows the class. */
void rp_svg_text(rp_buf *b, double x, double y, const char *anchor, const char *cls,
                 const char *text);
void rp_svg_text_at(rp_buf *b, rp_co x, rp_co y, const char *anchor, const char *cls,
                    const char *extra, const char *text);
/* Text turned to read upwards, centred on (x, y): a y axis title. */
void rp_svg_vtext(rp_buf *b, int x, double y, const char *cls, const char *text);

/* Shapes. extra: more attributes or NULL; title: an escaped tooltip or NULL. */
void rp_svg_line(rp_buf *b, rp_co x1, rp_co y1, rp_co x2, rp_co y2, const char *stroke,
                 const char *extra);
void rp_svg_rect(rp_buf *b, rp_co x, rp_co y, rp_co w, rp_co h, const char *fill,
                 const char *extra, const char *title);
void rp_svg_circle(rp_buf *b, rp_co cx, rp_co cy, rp_co r, const char *fill,
                   const char *extra, const char *title);

/* Path data into d ("M x y", " L x y", " Z"), then the path element with
 * the attributes before and after d (either may be NULL). */
void rp_path_move(rp_buf *d, rp_co x, rp_co y);
void rp_path_line(rp_buf *d, rp_co x, rp_co y);
void rp_path_close(rp_buf *d);
void rp_svg_path(rp_buf *b, const char *before, const char *d, const char *after);

/* Legends. A row of coloured boxes with labels at the given x and y; a
 * line swatch with its label; a dot with its label. */
typedef struct rp_key {
    const char *label;
    const char *color;
    int x;
} rp_key;
void rp_svg_keys(rp_buf *b, const rp_key *keys, int n, int y);
void rp_svg_key_line(rp_buf *b, double x, double y, const char *color, const char *label);
void rp_svg_key_dot(rp_buf *b, int x, double y, const char *color, const char *label);
/* A legend entry drawn as the line it names: 20 px of stroke (dash: its
 * stroke-dasharray or NULL) centred on y, with its mark (1 circle, 2
 * square, 0 none) in the middle, then the label. */
void rp_svg_key_stroke(rp_buf *b, double x, double y, const char *color, const char *dash,
                       int mark, const char *label);

#endif
