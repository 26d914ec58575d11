/* record.c: recording what the search learns: result rows and cubins in
 * the database, the best so far under the noise rule, the summaries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune_core.h"

/* GFLOP/s or GB/s of fam on p at ms (0 if ms <= 0). */
double tn_metric_of(const tpl_family *fam, const tpl_problem *p, double ms)
{
    double flops = 0, bytes = 0;
    if (ms <= 0)
        return 0;
    fam->work(p, &flops, &bytes);
    return (fam->metric_is_flops ? flops : bytes) / (ms * 1e6);
}

/* A result row of the current problem for it, not yet evaluated. */
void tn_result_init(tn_ctx *c, const tn_item *it, db_result *r)
{
    memset(r, 0, sizeof *r);
    r->session_id = c->session_id;
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", c->dev.uuid);
    snprintf(r->kernel, sizeof r->kernel, "%s", c->fam->name);
    snprintf(r->source_hash, sizeof r->source_hash, "%s", tpl_source_hash(c->fam));
    r->problem = c->problem;
    snprintf(r->config, sizeof r->config, "%s", it->config);
    r->rel_error = -1;
    r->compile_ms = it->from_db ? 0.0 : it->job.compile_ms;
    r->deterministic = c->fam->deterministic ? c->fam->deterministic(it->job.cfg) : 0;
}

/* What a failed write stops the run with: every result stored before is
 * kept (each is one transaction), so a rerun resumes. */
#define TN_WRITE_FAILED "; every result stored before is kept: make room (autotune gc " \
    "reclaims cubins) or pick another --db, then rerun the same command to resume"

/* Stores one result row; a failure makes the run fatal (c->fatal_msg). */
void tn_store(tn_ctx *c, db_result *r)
{
    if (db_store_result(c->d, r) == AT_OK) {
        c->stored++;
    } else {
        c->fatal = 1;
        snprintf(c->fatal_msg, sizeof c->fatal_msg, "storing a result failed: %s"
                 TN_WRITE_FAILED, db_errmsg(c->d));
    }
}

/* 1 unless the status is ok or abandoned (measured either way). */
int tn_is_failure(const char *status)
{
    return strcmp(status, DB_OK) != 0 && strcmp(status, DB_ABANDONED) != 0;
}

/* Applies the noise rule: a challenger becomes the announced best only if
 * its median beats the incumbent's by more than the measured noise, the
 * larger (median - min) of the two measurements (a one-sided spread that
 * rare slow outliers, which inflate max, do not widen). */
int tn_beats(const tn_best *inc, double median, double min, double max)
{
    (void)max;
    if (!inc->have)
        return 1;
    double noise = fmax(inc->median - inc->min, median - min);
    return median < inc->median - noise;
}

/* Makes r the best so far. */
void tn_best_take(tn_best *b, const db_result *r, double metric)
{
    b->have = 1;
    b->median = r->time_ms;
    b->min = r->time_min_ms;
    b->max = r->time_max_ms;
    b->metric = metric;
    snprintf(b->config, sizeof b->config, "%s", r->config);
}

/* Stores a cubin under its key; skipped once the run is fatal. A failure
 * (a full disk, a read-only database) stops the run: results stored
 * without their cubins would make the runtime compile what was tuned. */
void tn_store_binary(tn_ctx *c, const tpl_family *fam, const int *cfg, const char *key,
                     const char *config, const void *cubin, size_t size)
{
    char opts[2048];
    if (c->fatal || !cubin || !size)
        return;
    tpl_options_string(fam, cfg, c->arch, opts, sizeof opts);
    if (db_put_binary(c->d, key, fam->name, tpl_source_hash(fam), config, c->arch,
                      tpl_nvrtc_version(), opts, cubin, size) != AT_OK) {
        c->fatal = 1;
        snprintf(c->fatal_msg, sizeof c->fatal_msg, "storing a cubin failed: %s"
                 TN_WRITE_FAILED, db_errmsg(c->d));
    }
}

/* Stores the result of an item (a failure makes the run fatal) and
 * accounts for it: counts, the strategy, the best, the progress line. */
void tn_record(tn_ctx *c, tn_prob *pr, const tn_item *it, db_result *r)
{
    tn_store(c, r);
    pr->evals_this_run++;
    pr->stats.evaluated++;
    int failed = tn_is_failure(r->status);
    if (failed)
        pr->stats.failures++;
    if (it->index >= 0 && tn_space_position(&pr->space, it->index) >= 0)
        pr->strat->tell(pr->st, it->index, failed ? INFINITY : r->time_ms);
    if (strcmp(r->status, DB_OK) == 0 &&
        tn_beats(&pr->best, r->time_ms, r->time_min_ms, r->time_max_ms)) {
        tn_best_take(&pr->best, r, tn_metric_of(pr->fam, pr->p, r->time_ms));
        pr->pg.best_ms = pr->best.median;
        pr->pg.best_metric = pr->best.metric;
    }
    pr->pg.done++;
    pr->pg.failures += failed;
    if (c->member >= 0 && c->member < TN_MAX_DEVICES) {
        pr->stats.by_gpu[c->member]++;
        pr->pg.by_gpu[c->member]++;
    }
    tn_progress_update(&pr->pg, 0);
}

/* A second look's line, only when it measured something: how many
 * winners of other sizes, and the best before and after. */
static void second_look_summary(const tn_prob *pr)
{
    const tn_stats *s = &pr->stats;
    const tn_best *best = &pr->best;
    if (s->evaluated == 0)
        return;
    printf("%s%s %s: second look, %lld winners of other sizes measured in %.1f s (%lld "
           "failed)", pr->tag, pr->fam->name, pr->size, s->evaluated, s->seconds, s->failures);
    if (best->have && pr->best_before_ms > 0 && best->median < pr->best_before_ms)
        printf(": best %.4f ms, was %.4f ms (%.2fx faster) %s\n", best->median,
               pr->best_before_ms, pr->best_before_ms / best->median, best->config);
    else if (best->have)
        printf(": best kept (%.4f ms)\n", best->median);
    else
        printf(": none passed\n");
    fflush(stdout);
}

/* One GPU's evaluations in the time budget at the look's mean worker round trip (within the
 * evaluation budget); -1 before the first evaluation or without a time budget. */
static double one_gpu_evaluations(const tn_prob *pr)
{
    if (pr->budget_s <= 0 || pr->stats.evaluated <= 0 || pr->stats.eval_s <= 0)
        return -1;
    double one_gpu = pr->budget_s * (double)pr->stats.evaluated / pr->stats.eval_s;
    if (pr->budget_evals > 0 && one_gpu > (double)pr->budget_evals)
        one_gpu = (double)pr->budget_evals;
    return one_gpu;
}

/* 1 if a look on N GPUs may end t seconds after its start, before its time budget: the
 * GPUs share the evaluations, not the time, so it ends after 1/N of the time once it has
 * the evaluations one GPU would have made in the whole time at this look's own worker
 * round trip (compile waits are left out, so the estimate is never below one GPU's
 * count). */
static int shared_end_at(const tn_prob *pr, double t)
{
    double one_gpu = one_gpu_evaluations(pr);
    return pr->n_peers > 1 && one_gpu > 0 && t >= pr->budget_s / pr->n_peers &&
           (double)(pr->stats.previously + pr->stats.evaluated) >= one_gpu;
}

/* Whether pr's time budget is spent: alone, when its time is up; on N GPUs also as
 * shared_end_at says. */
int tn_time_spent(const tn_prob *pr)
{
    if (pr->budget_s <= 0)
        return 0;
    double t = tn_now() - pr->t_start;
    return t >= pr->budget_s || shared_end_at(pr, t);
}

/* The budget the problem had and what ended its search: "  budget 120
 * evaluations or 4.7 s on 2 GPUs: 120 evaluations, ended by the evaluation
 * budget". */
static void budget_line(const tn_prob *pr)
{
    const tn_stats *s = &pr->stats;
    long long total = s->previously + s->evaluated;
    printf("  budget ");
    if (pr->budget_evals > 0)
        printf("%lld evaluations", pr->budget_evals);
    if (pr->budget_s > 0)
        printf("%s%.1f s", pr->budget_evals > 0 ? " or " : "", pr->budget_s);
    if (pr->budget_evals <= 0 && pr->budget_s <= 0)
        printf("the whole space (%lld)", s->valid);
    char shared[128];
    snprintf(shared, sizeof shared, "one GPU's evaluations in the time budget (%.0f at %.0f ms "
             "per round trip)", one_gpu_evaluations(pr),
             s->evaluated > 0 ? s->eval_s * 1e3 / s->evaluated : 0.0);
    const char *end = tn_interrupts ? "interrupted"
                      : pr->budget_evals > 0 && total >= pr->budget_evals ? "the evaluation budget"
                      : pr->budget_s > 0 && s->seconds >= pr->budget_s ? "the time budget"
                      : pr->budget_s > 0 && shared_end_at(pr, s->seconds) ? shared
                      : "the strategy (nothing more to propose)";
    printf("%s%d GPU%s: %lld evaluations of this problem (%lld in this run), ended by %s\n",
           " on ", pr->n_peers > 1 ? pr->n_peers : 1, pr->n_peers > 1 ? "s" : "", total,
           s->evaluated, end);
}

/* Prints the problem's summary: counts, time, best. */
void tn_problem_summary(const tn_prob *pr)
{
    const tpl_family *fam = pr->fam;
    const tn_stats *s = &pr->stats;
    const tn_best *best = &pr->best;
    const char *unit = fam->metric_is_flops ? "GFLOP/s" : "GB/s";
    if (pr->second_look) {
        second_look_summary(pr);
        return;
    }
    printf("%s%s %s: %lld evaluated", pr->tag, fam->name, pr->size, s->evaluated);
    if (s->previously)
        printf(" (+%lld stored before)", s->previously);
    for (int g = 0; pr->n_peers > 1 && g < pr->n_peers; g++)
        printf("%sGPU %d: %lld%s", g ? ", " : " (", pr->peer_ordinal[g], s->by_gpu[g],
               g == pr->n_peers - 1 ? ")" : "");
    printf(", %lld failed, %lld compiled, %lld cubins reused, %.1f s", s->failures,
           s->compiled, s->reused, s->seconds);
    if (s->evaluated > 0)
        printf(" (%.0f ms per configuration)", s->seconds * 1000.0 / (double)s->evaluated);
    printf("\n");
    budget_line(pr);
    char ahead[192] = "";
    if (s->ahead || s->ready_hints)
        snprintf(ahead, sizeof ahead, " (%lld taken ahead of one whose cubin was compiling, "
                 "%lld proposed because their cubin was there)", s->ahead, s->ready_hints);
    if (s->evaluated > 0) {
        /* alone, the rest of the problem's time: planning, proposing, storing */
        double rest = s->seconds - s->eval_s - s->await_s;
        char other[64] = "";
        if (pr->n_peers <= 1 && rest >= 0.05)
            snprintf(other, sizeof other, ", %.1f s else", rest);
        printf("  time: %.1f s in the worker%s evaluations (%.0f ms each), %.1f s waiting for "
               "compiles%s%s\n", s->eval_s, pr->n_peers > 1 ? "s'" : "'s",
               s->eval_s * 1000.0 / (double)s->evaluated, s->await_s, ahead, other);
    }
    if (best->have)
        printf("  best %.1f %s (%.4f ms, min %.4f, max %.4f) %s\n", best->metric, unit,
               best->median, best->min, best->max, best->config);
    else
        printf("  no configuration passed\n");
    fflush(stdout);
}
