/* html.c: the report document: page and style, the first screen (per device
 * a row per family and kind), the charts by size in the order of what users
 * run, contents, device facts, the summary table and per problem its best,
 * charts and failures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "charts.h"
#include "html.h"
#include "overview.h"

#define RP_MAX_FAILURE_ROWS 12

static const char rp_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
    "margin:0;background:#f8fafc;color:#111827;line-height:1.45}\n"
    "main{max-width:1180px;margin:0 auto;padding:24px}\n"
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
    ".card{overflow-x:auto}h2,h3{overflow-wrap:anywhere}td,th{overflow-wrap:break-word}"
    "td.p{overflow-wrap:anywhere;min-width:5em}\n"
    ".glance{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,430px),1fr));"
    "gap:10px}.glance svg.chart{margin:0}\n"
    "@media (max-width:600px){main{padding:10px}.card{padding:10px}"
    ".card svg.chart{min-width:600px}}\n"
    "table.overview{width:100%}table.overview td.kind{white-space:nowrap}"
    "table.overview td.cov{font-size:12px;color:#374151}"
    "tr.untuned td{color:#6b7280;font-style:italic}\n"
    ".legend span{display:inline-block;margin-right:14px;font-size:13px}"
    ".legend i{display:inline-block;width:12px;height:12px;margin-right:4px;"
    "vertical-align:-1px}\n";

/* ---- device facts ---- */

static void rp_fact(rp_buf *b, const char *name, const char *value)
{
    rp_put(b, "<tr><th>");
    rp_esc(b, name);
    rp_put(b, "</th><td>");
    rp_esc(b, value);
    rp_put(b, "</td></tr>\n");
}

/* "51234 GFLOP/s (measured: how)", "- GB/s (unknown)". */
static void rp_ceiling_fact(rp_buf *b, const char *name, const rp_ceiling *c, const char *unit)
{
    char v[512], num[32];
    snprintf(v, sizeof v, "%s %s (%s%s%s)", c->value > 0 ? rp_num(num, sizeof num, c->value) : "-",
             unit, c->source, c->note[0] ? ": " : "", c->note);
    rp_fact(b, name, v);
}

static void rp_device_facts(rp_buf *b, const rp_device *rd)
{
    const at_device_info *i = &rd->dev.info;
    char v[256];
    rp_put(b, "<div class=\"card\"><table>\n");
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
    rp_ceiling_fact(b, "FP32 ceiling", &rd->fp32, "GFLOP/s");
    rp_ceiling_fact(b, "FP64 ceiling", &rd->fp64, "GFLOP/s");
    rp_ceiling_fact(b, "BF16/FP16 tensor ceiling", &rd->tensor16, "GFLOP/s");
    rp_ceiling_fact(b, "TF32 tensor ceiling", &rd->tf32, "GFLOP/s");
    if (rd->tensor8.value > 0)
        rp_ceiling_fact(b, "FP8 tensor ceiling", &rd->tensor8, "GFLOP/s");
    rp_ceiling_fact(b, "Read bandwidth ceiling", &rd->bandwidth, "GB/s");
    rp_ceiling_fact(b, "Copy bandwidth (read + write)", &rd->copy, "GB/s");
    if (rd->floor_ms > 0)
        snprintf(v, sizeof v, "%.4f ms (an empty kernel, measured)", rd->floor_ms);
    else
        snprintf(v, sizeof v, "unknown (not measured)");
    rp_fact(b, "Launch floor", v);
    rp_put(b, "</table>\n<p class=\"muted\">Each problem is judged against the ceiling of "
              "its kind: GEMM in FP32 against the FP32 FMA peak, BF16/FP16/TF32 against the "
              "tensor-core peak of the type, FP64 against FP64; sum, dot and Jacobi against "
              "the read bandwidth. Measured ceilings come from the tuner's "
              "<code>device</code> measurements; theoretical ones are SMs &times; flops per "
              "clock &times; the maximum clock, or 2 &times; memory clock &times; bus width. "
              "A problem so small that at its ceiling it would take less than an empty "
              "kernel launch is shown as a multiple of that launch floor instead.</p></div>\n");
}

/* ---- summary ---- */

/* "2.35&times;" for a ratio, "-" for none (0). */
static const char *rp_ratio_text(char *out, size_t len, double ratio)
{
    if (ratio > 0)
        snprintf(out, len, "%.2f&times;", ratio);
    else
        snprintf(out, len, "-");
    return out;
}

/* "% of ceiling", or "N.NN&times; floor" for a latency-bound problem; a
 * share above 100% is shown as it is, marked: the ceiling is then wrong. */
static void rp_share_cell(rp_buf *b, const rp_group *g)
{
    if (g->latency_bound && g->floor_ratio > 0)
        rp_printf(b, "<td class=\"n\" title=\"latency-bound: best time over an empty "
                     "launch\">%.2f&times; floor</td>", g->floor_ratio);
    else if (g->ceiling.value > 0 && g->pct > 100)
        rp_printf(b, "<td class=\"n fail\">%.1f%% (above the %s ceiling: it is wrong)</td>",
                  g->pct, g->ceiling.source);
    else if (g->ceiling.value > 0)
        rp_printf(b, "<td class=\"n\">%.1f%%</td>", g->pct);
    else
        rp_put(b, "<td class=\"n\">-</td>");
}

/* The tuned best over the vendor library's, named; else why there is none. */
static void rp_vendor_cell(rp_buf *b, const rp_group *g, char *r, size_t len)
{
    if (g->vs_vendor > 0) {
        rp_printf(b, "<td class=\"n\">%s <span class=\"muted\">", rp_ratio_text(r, len,
                                                                             g->vs_vendor));
        rp_esc(b, g->cmp.vendor_name);
        rp_put(b, "</span></td>");
    } else {
        rp_put(b, "<td class=\"muted\">");
        rp_esc(b, g->vendor_note[0] ? g->vendor_note : "-");
        rp_put(b, "</td>");
    }
}

static void rp_summary_row(rp_buf *b, const rp_group *g, int dev_index, int k)
{
    char num[32], t[64], r1[32], r2[32], r3[32], prob[96];
    rp_problem_text(&g->problem, prob, sizeof prob);
    rp_printf(b, "<tr><td><a href=\"#d%dg%d\">", dev_index, k);
    rp_esc(b, g->kernel);
    rp_put(b, "</a></td><td>");
    rp_esc(b, prob);
    rp_put(b, "</td>");
    if (g->best >= 0) {
        const db_result *r = g->e[g->best].r;
        rp_put(b, "<td><code>");
        rp_esc(b, r->config);
        rp_printf(b, "</code></td><td class=\"n\">%s</td>", rp_num(t, sizeof t, r->time_ms));
        rp_printf(b, "<td class=\"n\">%s %s</td>", rp_num(num, sizeof num, g->best_value),
                  g->unit);
        rp_share_cell(b, g);
        rp_printf(b, "<td class=\"n\">%s</td><td class=\"n\">%s</td>",
                  rp_ratio_text(r1, sizeof r1, g->vs_default),
                  rp_ratio_text(r2, sizeof r2, g->vs_seed));
        rp_vendor_cell(b, g, r3, sizeof r3);
    } else {
        rp_put(b, "<td colspan=\"7\" class=\"fail\">no configuration passed "
                  "verification</td>");
    }
    rp_printf(b, "<td class=\"n\">%d / %d</td></tr>\n", g->n_ok, g->n - g->n_ok);
}

static void rp_summary_table(rp_buf *b, const rp_device *rd, const rp_overview *ov,
                             int dev_index)
{
    rp_put(b, "<div class=\"card\"><table>\n<tr><th>Kernel</th><th>Problem</th>"
              "<th>Best configuration</th><th>Time (ms)</th><th>Performance</th>"
              "<th>% of ceiling (or &times; launch floor)</th><th>vs default</th><th>vs best seed</th>"
              "<th>vs vendor</th><th>Tried (ok / failed)</th></tr>\n");
    for (int i = 0; i < rd->n_groups; i++)
        rp_summary_row(b, &rd->groups[ov->order[i]], dev_index, ov->order[i]);
    rp_put(b, "</table>\n<p class=\"muted\">Ratios are performance of the tuned "
              "configuration over the built-in default, the best seed baseline and the best "
              "vendor library measurement (above 1: tuned is faster).</p></div>\n");
}

/* ---- one tuned problem ---- */

/* Heading, the family's summary and which template version it ran. */
static void rp_group_intro(rp_buf *b, const rp_group *g, int dev_index, int k)
{
    char prob[160];
    rp_problem_named(g->fam, &g->problem, prob, sizeof prob);
    rp_printf(b, "<h3 id=\"d%dg%d\">", dev_index, k);
    rp_esc(b, g->kernel);
    rp_put(b, " &middot; ");
    rp_esc(b, prob);
    rp_put(b, "</h3>\n<div class=\"card\">\n<p class=\"muted\">");
    if (g->fam && g->fam->summary) {
        rp_esc(b, g->fam->summary);
        rp_put(b, ". ");
    } else if (!g->fam) {
        rp_put(b, "Kernel not in this build of autotune. ");
    }
    rp_put(b, "Template source hash <code>");
    rp_esc(b, g->hash);
    rp_put(b, "</code>");
    if (g->hash_current == 1)
        rp_put(b, " (current)");
    else if (g->hash_current == 0)
        rp_put(b, " (an older template version)");
    rp_put(b, ".</p>\n");
}

/* The best configuration: performance, timing spread, its parameters. */
static void rp_group_best(rp_buf *b, const rp_group *g)
{
    char num[32], t[32];
    if (g->best < 0) {
        rp_put(b, "<p class=\"fail\">No configuration passed verification for this "
                  "problem.</p>\n");
        return;
    }
    const db_result *r = g->e[g->best].r;
    rp_printf(b, "<p><b>Best:</b> %s %s in %s ms", rp_num(num, sizeof num, g->best_value),
              g->unit, rp_num(t, sizeof t, r->time_ms));
    if (g->latency_bound && g->floor_ratio > 0)
        rp_printf(b, " (latency-bound: %.2f&times; the launch floor)", g->floor_ratio);
    else if (g->ceiling.value > 0)
        rp_printf(b, " (%.1f%% of the %s %s ceiling)", g->pct, g->ceiling.source,
                  g->ceiling_name);
    rp_printf(b, ", median of %d runs (min %s, max %s ms), relative error %.2g%s.</p>\n",
              r->runs, rp_num(num, sizeof num, r->time_min_ms),
              rp_num(t, sizeof t, r->time_max_ms), r->rel_error,
              r->deterministic ? ", bit-reproducible" : "");
    if (g->best_sustained_value > 0)
        rp_printf(b, "<p><b>Back to back:</b> %s %s in %s ms, first of the %d configurations "
                     "the tuner re-timed under sustained load (runs queued as a program's loop "
                     "queues them, at the GPU's steady clock); the time above is the search's "
                     "short timing, taken after idle gaps.</p>\n",
                  rp_num(num, sizeof num, g->best_sustained_value), g->unit,
                  rp_num(t, sizeof t, r->sustained_ms), g->n_retimed);
    rp_put(b, "<table><tr><th>Parameter</th><th>Value</th><th>Meaning</th></tr>\n");
    for (int i = 0; i < g->n_params; i++) {
        const rp_param *p = &g->params[i];
        if (!p->in_best)
            continue;
        rp_put(b, "<tr><td><code>");
        rp_esc(b, p->name);
        rp_put(b, "</code></td><td class=\"n\">");
        rp_esc(b, p->best_value);
        rp_put(b, "</td><td class=\"muted\">");
        if (p->meaning)
            rp_esc(b, p->meaning);
        rp_put(b, "</td></tr>\n");
    }
    rp_put(b, "</table>\n<p class=\"muted\">Configuration: <code>");
    rp_esc(b, r->config);
    rp_put(b, "</code></p>\n");
}

/* Tuned vs vendor vs seeds vs default, with its legend. */
static void rp_group_bars(rp_buf *b, const rp_group *g)
{
    if (g->cmp.n <= 0)
        return;
    char title[160];
    snprintf(title, sizeof title, "Tuned vs vendor library vs seeds vs default (%s)", g->unit);
    rp_chart_bars(b, title, g->cmp.bars, g->cmp.n, g->unit);
    rp_printf(b, "<p class=\"legend\"><span><i style=\"background:%s\"></i>tuned</span>"
                 "<span><i style=\"background:%s\"></i>vendor library</span>"
                 "<span><i style=\"background:%s\"></i>seed baselines</span>"
                 "<span><i style=\"background:%s\"></i>built-in default</span></p>\n",
              RP_TUNED, RP_VENDOR, RP_SEED, RP_DEFAULT);
}

/* A panel per parameter that took several values; the others listed. */
static void rp_group_sensitivity(rp_buf *b, const rp_group *g)
{
    if (g->best_value <= 0 || g->n_params == 0) {
        rp_put(b, "<p class=\"muted\">No parameter sensitivity: no verified "
                  "configuration.</p>\n");
        return;
    }
    rp_buf fixed = { 0 };
    rp_put(b, "<div class=\"panels\">\n");
    for (int i = 0; i < g->n_params; i++) {
        const rp_param *p = &g->params[i];
        if (p->nv == 1)
            rp_printf(&fixed, "%s%s=%s", fixed.len ? ", " : "", p->name, p->vals[0].value);
        else if (p->nv > 1)
            rp_chart_param(b, g, p);
    }
    rp_put(b, "</div>\n");
    if (fixed.len) {
        rp_put(b, "<p class=\"muted\">Held at one value in every configuration tried: <code>");
        rp_esc(b, fixed.p);
        rp_put(b, "</code></p>\n");
    }
    if (fixed.oom)
        b->oom = 1;
    free(fixed.p);
}

/* The first failed configurations with their messages. */
static void rp_failure_table(rp_buf *b, const rp_group *g)
{
    int n_fail = g->n - g->n_ok, shown = 0;
    if (n_fail == 0)
        return;
    rp_printf(b, "<h4>Failed configurations (%d)</h4>\n<table><tr><th>Status</th>"
                 "<th>Configuration</th><th>Message</th></tr>\n", n_fail);
    for (int j = 0; j < g->n && shown < RP_MAX_FAILURE_ROWS; j++) {
        const db_result *r = g->e[j].r;
        if (g->e[j].ok)
            continue;
        shown++;
        rp_put(b, "<tr><td class=\"fail\">");
        rp_esc(b, r->status);
        rp_put(b, "</td><td><code>");
        rp_esc(b, r->config);
        rp_put(b, "</code></td><td><pre class=\"err\">");
        rp_esc_max(b, r->error, 400);
        rp_put(b, "</pre></td></tr>\n");
    }
    rp_put(b, "</table>\n");
    if (n_fail > shown)
        rp_printf(b, "<p class=\"muted\">and %d more.</p>\n", n_fail - shown);
}

static void rp_group_section(rp_buf *b, const rp_group *g, int dev_index, int k)
{
    rp_group_intro(b, g, dev_index, k);
    rp_group_best(b, g);
    if (g->fam && g->fam->default_config) {
        rp_put(b, "<p class=\"muted\">Built-in default: <code>");
        rp_esc(b, g->fam->default_config);
        rp_put(b, "</code></p>\n");
    }
    rp_group_bars(b, g);
    if (g->n_ok > 0) {
        rp_chart_ranked(b, g);
        rp_chart_trajectory(b, g);
        rp_put(b, "<h4>Parameter sensitivity: the best performance reached at each "
                  "value</h4>\n");
        rp_group_sensitivity(b, g);
    }
    rp_failure_table(b, g);
    rp_put(b, "</div>\n");
}

/* ---- the first screen: how well each GPU is tuned ---- */

/* "1.02&times;" coloured: below 0.9 red, from 1 green. */
static void rp_ratio_span(rp_buf *b, double r)
{
    rp_printf(b, "<span class=\"%s\">%.2f&times;</span>", r < 0.9 ? "fail" : r >= 1 ? "good" : "",
              r);
}

/* The first group of row r in display order, -1 if none. */
static int rp_row_first_group(const rp_device *rd, const rp_overview *ov, int r)
{
    for (int i = 0; i < rd->n_groups; i++)
        if (ov->row_of[ov->order[i]] == r)
            return ov->order[i];
    return -1;
}

static void rp_overview_vendor_cells(rp_buf *b, const rp_device *rd, const rp_kindrow *row,
                                     int first)
{
    char dims[96];
    if (row->n_vendor > 0) {
        rp_put(b, "<td class=\"n\">");
        rp_ratio_span(b, row->vendor_geomean);
        if (row->n_vendor < row->n_tuned)
            rp_printf(b, " <span class=\"muted\">(%d of %d)</span>", row->n_vendor,
                      row->n_tuned);
        rp_put(b, "</td><td class=\"n\">");
        rp_ratio_span(b, row->vendor_min);
        rp_dims_text(&rd->groups[row->vendor_min_group].problem, dims, sizeof dims);
        rp_put(b, " <span class=\"muted\">");
        rp_esc(b, dims);
        rp_put(b, "</span></td>");
    } else if (row->n_tuned > 0 && first >= 0) {
        rp_put(b, "<td class=\"muted\" colspan=\"2\">");
        rp_esc_max(b, rd->groups[first].vendor_note[0] ? rd->groups[first].vendor_note
                                                       : "not measured", 60);
        rp_put(b, "</td>");
    } else {
        rp_put(b, "<td class=\"n\">-</td><td class=\"n\">-</td>");
    }
}

static void rp_overview_roof_cell(rp_buf *b, const rp_device *rd, const rp_kindrow *row)
{
    char dims[96];
    if (row->roof_group >= 0) {
        rp_dims_text(&rd->groups[row->roof_group].problem, dims, sizeof dims);
        rp_printf(b, "<td class=\"n\">%.0f%% <span class=\"muted\">", row->roof_pct);
        rp_esc(b, dims);
        rp_put(b, "</span></td>");
    } else if (row->n_latency > 0 && row->floor_ratio > 0) {
        rp_printf(b, "<td class=\"n\" title=\"at the ceiling a call would take less than an "
                     "empty launch\">latency-bound: %.2f&times; floor</td>", row->floor_ratio);
    } else {
        rp_put(b, "<td class=\"n\">-</td>");
    }
}

static void rp_overview_row(rp_buf *b, const rp_device *rd, const rp_overview *ov, int r,
                            int dev_index)
{
    const rp_kindrow *row = &ov->rows[r];
    int first = rp_row_first_group(rd, ov, r);
    rp_printf(b, "<tr%s><td class=\"kind\">", row->untuned ? " class=\"untuned\"" : "");
    if (first >= 0)
        rp_printf(b, "<a href=\"#d%dg%d\">", dev_index, first);
    rp_esc(b, row->label);
    rp_put(b, first >= 0 ? "</a>" : "");
    if (row->kernels[0]) {
        rp_put(b, " <span class=\"muted\">");
        rp_esc(b, row->kernels);
        rp_put(b, "</span>");
    }
    rp_printf(b, "</td><td class=\"n\">%d", row->n_tuned);
    if (row->n_failed)
        rp_printf(b, " <span class=\"fail\">+%d failed</span>", row->n_failed);
    rp_put(b, "</td>");
    rp_overview_vendor_cells(b, rd, row, first);
    rp_overview_roof_cell(b, rd, row);
    if (r == 0 || ov->rows[r - 1].series != row->series) {  /* coverage, once per series */
        int span = 1;
        while (r + span < ov->n_rows && ov->rows[r + span].series == row->series)
            span++;
        rp_printf(b, "<td class=\"cov\" rowspan=\"%d\">", span);
        rp_esc(b, ov->coverage[row->series]);
        rp_put(b, "</td>");
    }
    rp_put(b, "</tr>\n");
}

/* One device's table: a row per family and kind. */
static void rp_overview_table(rp_buf *b, const rp_device *rd, const rp_overview *ov,
                              int dev_index)
{
    const at_device_info *i = &rd->dev.info;
    char floor_text[64] = "";
    if (rd->floor_ms > 0)
        snprintf(floor_text, sizeof floor_text, ", launch floor %.1f &micro;s", rd->floor_ms * 1e3);
    rp_printf(b, "<h3 id=\"glance-d%d\">", dev_index);
    rp_esc(b, i->name);
    rp_put(b, " <span class=\"muted\">");
    rp_esc(b, i->arch);
    rp_printf(b, ", %d SMs%s, %d results</span></h3>\n", i->sm_count, floor_text, rd->n_res);
    rp_printf(b, "<div class=\"card\"><table class=\"overview\" id=\"overview-d%d\">\n"
                 "<tr><th>Kind</th><th>Problems tuned</th><th>vs vendor library "
                 "(geomean)</th><th>Lowest vs vendor</th><th>Of the roofline (best)</th>"
                 "<th>Coverage</th></tr>\n", dev_index);
    for (int r = 0; r < ov->n_rows; r++)
        rp_overview_row(b, rd, ov, r, dev_index);
    rp_put(b, "</table>\n<p class=\"muted\">vs vendor: the tuned best over the vendor "
              "library (cuBLAS, CUB) the tuner timed on the same problem, above 1 faster. "
              "Roofline: the kind's ceiling, or read bandwidth &times; arithmetic intensity "
              "where that is lower. Coverage: layouts (op pairs) with tuned problems and "
              "those the built-in defaults alone serve.</p></div>\n");
}

/* ---- the document ---- */

static void rp_device_section(rp_buf *b, const rp_device *rd, const rp_overview *ov,
                              int dev_index)
{
    rp_printf(b, "<h2 id=\"d%d\">", dev_index);
    rp_esc(b, rd->dev.info.name);
    rp_put(b, " <span class=\"muted\">");
    rp_esc(b, rd->dev.info.uuid);
    rp_put(b, "</span></h2>\n");
    rp_device_facts(b, rd);
    if (rd->n_res == 0) {
        rp_put(b, "<p class=\"muted\">No tuning results for this device.</p>\n");
        return;
    }
    rp_printf(b, "<h3 id=\"d%d-summary\">Summary</h3>\n", dev_index);
    rp_summary_table(b, rd, ov, dev_index);
    for (int i = 0; i < rd->n_groups; i++)
        rp_group_section(b, &rd->groups[ov->order[i]], dev_index, ov->order[i]);
}

/* 1 if group order[pos] is the first in display order of its row and kernel. */
static int rp_chart_first(const rp_device *rd, const rp_overview *ov, int pos)
{
    int j = ov->order[pos];
    for (int q = 0; q < pos; q++) {
        int k = ov->order[q];
        if (ov->row_of[k] == ov->row_of[j] && strcmp(rd->groups[k].kernel, rd->groups[j].kernel) == 0)
            return 0;
    }
    return 1;
}

/* Per device a chart per kind and kernel in display order, then the roofline. */
static void rp_charts(rp_buf *b, const rp_report *rep, const rp_overview *ovs)
{
    rp_put(b, "<h2 id=\"charts\">Performance by problem size</h2>\n");
    for (int i = 0; i < rep->n_devs; i++) {
        const rp_device *rd = &rep->devs[i];
        const rp_overview *ov = &ovs[i];
        if (rd->n_groups == 0)
            continue;
        int *list = malloc(sizeof *list * (size_t)rd->n_groups);
        if (!list) {
            b->oom = 1;
            return;
        }
        rp_printf(b, "<h3 id=\"charts-d%d\">", i);
        rp_esc(b, rd->dev.info.name);
        rp_put(b, ": performance by problem size</h3>\n<div class=\"glance\">\n");
        for (int pos = 0; pos < rd->n_groups; pos++) {
            if (!rp_chart_first(rd, ov, pos))
                continue;
            int j = ov->order[pos], n = 0;
            for (int q = pos; q < rd->n_groups; q++) {
                int k = ov->order[q];
                if (ov->row_of[k] == ov->row_of[j] &&
                    strcmp(rd->groups[k].kernel, rd->groups[j].kernel) == 0)
                    list[n++] = k;
            }
            rp_chart_sizes(b, rd, list, n, ov->row_of[j] >= 0 ? ov->rows[ov->row_of[j]].label
                                                               : rd->groups[j].kernel);
        }
        free(list);
        rp_put(b, "</div>\n<div class=\"card\">\n");
        if (!rp_chart_roofline(b, rd, ov))
            rp_put(b, "<p class=\"muted\">No roofline: it needs a verified result of a "
                      "known kernel and the device's FP32 ceiling.</p>\n");
        rp_put(b, "</div>\n");
    }
    if (rep->n_devs > 1) {
        rp_put(b, "<h3 id=\"glance-devices\">The devices side by side</h3>\n");
        rp_devices_table(b, rep);
    }
}

/* The first screen: per device with results, a row per family and kind. */
static void rp_glance(rp_buf *b, const rp_report *rep, const rp_overview *ovs)
{
    rp_printf(b, "<h2 id=\"glance\">How well %s tuned</h2>\n",
              rep->n_devs == 1 ? "is this GPU" : "is each GPU");
    for (int i = 0; i < rep->n_devs; i++)
        if (rep->devs[i].n_groups > 0)
            rp_overview_table(b, &rep->devs[i], &ovs[i], i);
}

/* Every device and its problems, linked to their sections. */
static void rp_contents(rp_buf *b, const rp_report *rep, const rp_overview *ovs, int n_calls)
{
    rp_put(b, "<div class=\"card\" id=\"contents\"><b>Contents</b><ul>\n");
    if (n_calls > 0)
        rp_put(b, "<li><a href=\"#calls\">Random calls against cuBLAS</a></li>\n");
    for (int i = 0; i < rep->n_devs; i++) {
        const rp_device *rd = &rep->devs[i];
        rp_printf(b, "<li><a href=\"#d%d\">", i);
        rp_esc(b, rd->dev.info.name);
        rp_printf(b, "</a> &middot; %d results", rd->n_res);
        if (rd->n_groups) {
            rp_put(b, "<ul>");
            for (int q = 0; q < rd->n_groups; q++) {
                int k = ovs[i].order[q];
                char prob[96];
                rp_problem_text(&rd->groups[k].problem, prob, sizeof prob);
                rp_printf(b, "<li><a href=\"#d%dg%d\">", i, k);
                rp_esc(b, rd->groups[k].kernel);
                rp_put(b, " ");
                rp_esc(b, prob);
                rp_put(b, "</a></li>");
            }
            rp_put(b, "</ul>");
        }
        rp_put(b, "</li>\n");
    }
    rp_put(b, "</ul></div>\n");
}

void rp_render_html(rp_buf *b, const rp_report *rep, const char *generated,
                    const rp_calls *calls, int n_calls)
{
    rp_put(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
              "<title>autotune report</title>\n<style>\n");
    rp_put(b, rp_css);
    rp_put(b, "</style>\n</head>\n<body>\n<main>\n<h1>autotune report</h1>\n");
    rp_printf(b, "<p class=\"muted\">Generated %s from the tuning database: %d device%s, "
                 "%d results. Self-contained: no scripts, fonts or network.</p>\n",
              generated, rep->n_devs, rep->n_devs == 1 ? "" : "s", rep->total);
    rp_overview *ovs = calloc((size_t)(rep->n_devs ? rep->n_devs : 1), sizeof *ovs);
    int ok = ovs != NULL;
    for (int i = 0; ok && i < rep->n_devs; i++)
        ok = rp_overview_build(&rep->devs[i], &ovs[i]);
    if (ok) {
        int tuned = rep->total > 0;     /* with random calls, a database may hold no results */
        if (tuned)
            rp_glance(b, rep, ovs);
        rp_calls_section(b, calls, n_calls);
        if (tuned) {
            rp_charts(b, rep, ovs);
            rp_contents(b, rep, ovs, n_calls);
            for (int i = 0; i < rep->n_devs; i++)
                rp_device_section(b, &rep->devs[i], &ovs[i], i);
        }
        rp_put(b, "</main>\n</body>\n</html>\n");
    } else {
        b->oom = 1;
    }
    for (int i = 0; ovs && i < rep->n_devs; i++)
        rp_overview_free(&ovs[i]);
    free(ovs);
}
