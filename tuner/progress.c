/* progress.c: the one updating status line on a terminal (kernel, size,
 * done/total, per GPU when several split it, failures, best so far,
 * elapsed, ETA); silent otherwise. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tn.h"

void tn_progress_begin(tn_progress *pg, const tpl_family *fam,
                       const tpl_problem *p, long long total)
{
    memset(pg, 0, sizeof *pg);
    pg->tty = isatty(2);
    pg->fam = fam;
    tn_format_size(p, pg->size, sizeof pg->size);
    pg->total = total;
    pg->start = tn_now();
}

static void fmt_duration(double s, char *out, size_t len)
{
    if (s < 0)
        snprintf(out, len, "?");
    else if (s < 60)
        snprintf(out, len, "%.0fs", s);
    else
        snprintf(out, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
}

void tn_progress_update(tn_progress *pg, int force)
{
    if (!pg->tty)
        return;
    double now = tn_now();
    if (!force && now - pg->last_draw < 0.1)
        return;
    pg->last_draw = now;
    double elapsed = now - pg->start;
    char el[32], eta[32], best[64] = "-";
    fmt_duration(elapsed, el, sizeof el);
    long long now_done = pg->done - pg->base;
    double left = now_done > 0 && pg->total >= pg->done
                      ? elapsed / (double)now_done * (double)(pg->total - pg->done) : -1;
    if (pg->budget_s > 0 && (left < 0 || left > pg->budget_s - elapsed))
        left = pg->budget_s > elapsed ? pg->budget_s - elapsed : 0;
    fmt_duration(left, eta, sizeof eta);
    if (pg->best_ms > 0)
        snprintf(best, sizeof best, "%.1f %s (%.3f ms)", pg->best_metric,
                 pg->fam->metric_is_flops ? "GFLOP/s" : "GB/s", pg->best_ms);
    char gpus[256] = "";
    size_t used = 0;
    for (int g = 0; pg->n_gpus > 1 && g < pg->n_gpus && used + 32 < sizeof gpus; g++)
        used += (size_t)snprintf(gpus + used, sizeof gpus - used, "%sGPU%d %lld",
                                 g ? ", " : " [", pg->gpu[g], pg->by_gpu[g]);
    if (used)
        snprintf(gpus + used, sizeof gpus - used, "]");
    fprintf(stderr, "\r\033[K%s %s: %lld/%lld%s, %lld failed, best %s, %s elapsed, ETA %s",
            pg->fam->name, pg->size, pg->done, pg->total, gpus, pg->failures, best, el, eta);
    fflush(stderr);
}

void tn_progress_end(tn_progress *pg)
{
    if (pg->tty) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
}
