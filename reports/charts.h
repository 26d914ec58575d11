/* charts.h: the report's charts as inline SVG (comparison bars, ranking,
 * trajectory, parameter panels, roofline), drawn from the figures. */
#ifndef RP_CHARTS_H
#define RP_CHARTS_H

#include "figures.h"
#include "overview.h"
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
/* Log-log roofline of the best of every group of rd against its ceilings,
 * a colour and a legend entry (naming its kinds) per family; 0 (and
 * nothing written) without a point or an FP32 ceiling. */
int rp_chart_roofline(rp_buf *b, const rp_device *rd, const rp_overview *ov);

/* ---- charts by size (reports/glance.c) ---- */
/* Log-log chart of the best of each of the n groups of rd (one kernel and
 * kind, titled by kind, "BF16 GEMM") against size, with the vendor library,
 * the ceiling and the launch floor up to the ceiling; sizes that would share
 * an x are drawn apart and labelled. Nothing if no group has a verified best. */
void rp_chart_sizes(rp_buf *b, const rp_device *rd, const int *groups, int n, const char *kind);
/* A table of the problems tuned on any device, a column per device. */
void rp_devices_table(rp_buf *b, const rp_report *rep);

#endif
