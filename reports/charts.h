/* charts.h: the report's charts as inline SVG (comparison bars, ranking,
 * trajectory, parameter panels, roofline), drawn from the figures. */
#ifndef RP_CHARTS_H
#define RP_CHARTS_H

#include "figures.h"
#include "text.h"

#define RP_TUNED   "#2563eb"
#define RP_VENDOR  "#6b7280"
#define RP_SEED    "#ea580c"
#define RP_DEFAULT "#16a34a"
#define RP_FAIL    "#dc2626"
#define RP_LIGHT   "#93c5fd"

/* The colour a kind of figure is drawn in. */
const char *rp_kind_color(rp_kind kind);

/* Horizontal bars, one per entry, the value (and note) at the end. */
void rp_chart_bars(rp_buf *b, const char *title, const rp_bar *bars, int n, const char *unit);
/* Every verified configuration of g as a bar, fastest first, with the
 * best, the default and the seeds marked and the failures counted. */
void rp_chart_ranked(rp_buf *b, const rp_group *g);
/* Best so far against seconds since each of g's newest sessions began. */
void rp_chart_trajectory(rp_buf *b, const rp_group *g);
/* The best performance reached at each value of parameter p of g (whose
 * best value must be positive). */
void rp_chart_param(rp_buf *b, const rp_group *g, const rp_param *p);
/* Log-log roofline of the best of every group of rd against its ceilings;
 * 0 (and nothing written) without a point or an FP32 ceiling. */
int rp_chart_roofline(rp_buf *b, const rp_device *rd);

/* ---- the first screen (reports/glance.c) ---- */
/* 1 if group j of rd is the first of its series (kernel and kind). */
int rp_series_first(const rp_device *rd, int j);
/* Log-log chart of the best of every size of group j's series (kernel and
 * kind) with the vendor library, the ceiling and the launch floor; nothing
 * if no size has a verified best. */
void rp_chart_sizes(rp_buf *b, const rp_device *rd, int j);
/* A table of the problems tuned on any device, a column per device. */
void rp_devices_table(rp_buf *b, const rp_report *rep);

#endif
