/* tune.c: the tuning driver: the loop over families and problems, each
 * prepared (prepare.c), planned (plan.c), searched through the pipeline
 * (pipeline.c) and recorded (record.c); the session around them. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tune_core.h"

/* The default run time shared by the problems of guided and random
 * searches without --budget (plan.c clamps each share). */
#define TN_RUN_SECONDS 80.0

volatile sig_atomic_t tn_interrupts;
volatile pid_t tn_worker_pids[TN_MAX_DEVICES];

static void tn_on_signal(int sig)
{
    (void)sig;
    tn_interrupts++;
    for (int i = 0; tn_interrupts >= 2 && i < TN_MAX_DEVICES; i++)
        if (tn_worker_pids[i] > 0)
            kill(-tn_worker_pids[i], SIGKILL);   /* second ^C: stop now */
}

double tn_run_seconds(void)
{
    return TN_RUN_SECONDS;
}

/* ---- one problem ---- */

/* Prepares, plans, searches and summarizes one problem. 0 normally, -1
 * if it failed or was skipped (message printed; its results stored so far
 * are kept; c->fatal if the run cannot go on). */
int tn_tune_problem(tn_ctx *c, const tpl_family *fam, const tpl_problem *p)
{
    tn_prob pr;
    tn_prepare_problem(c, &pr, fam, p);
    int rc = tn_plan_problem(c, &pr);
    if (rc == 0) {
        rc = tn_pipeline_run(c, &pr);
        tn_progress_end(&pr.pg);
        if (rc == 0 && !pr.second_look)
            tn_measure_vendor(c, &pr);
        pr.stats.seconds = tn_now() - pr.t_start;
        tn_problem_summary(&pr);
        if (rc == 0)
            tn_retime_problem(c, &pr);
    }
    if (c->skip) {
        fprintf(stderr, "autotune: %s %s skipped: %s; its %lld results stored are kept, "
                "the other problems go on\n", fam->name, pr.size, c->skip_msg,
                pr.stats.previously + pr.stats.evaluated);
        fflush(stderr);
        c->skipped++;
    }
    free(pr.old);
    free(pr.extras);
    if (pr.st)
        pr.strat->destroy(pr.st);
    free(pr.valid);
    return rc;
}

/* ---- the whole run ---- */

int tn_family_selected(const tn_options *o, const tpl_family *fam)
{
    if (o->n_families == 0)
        return !fam->hidden;
    for (int i = 0; i < o->n_families; i++)
        if (o->families[i] == fam)
            return 1;
    return 0;
}

/* Problems of fam for this run (the --size or the defaults; none with
 * items_only: the items are tuned on their own, tn_run_chunks). */
int tn_problems_of(const tn_options *o, const tpl_family *fam, const tpl_problem **list)
{
    if (o->items_only && !o->have_size)
        return 0;
    if (o->have_size) {
        if (!tpl_family_accepts(fam, &o->size))
            return 0;
        *list = &o->size;
        return 1;
    }
    *list = fam->tuning_problems;
    if (o->n_families == 0 && fam->n_default_tuning_problems > 0 &&
        fam->n_default_tuning_problems < fam->n_tuning_problems)
        return fam->n_default_tuning_problems;
    return fam->n_tuning_problems;
}

int tn_second_looks(const tn_options *o, int n)
{
    return o->have_size || n < 2 ? 0 : n - 1;
}

int tn_run_chunks(const tn_options *o, tn_chunk **out)
{
    *out = calloc((size_t)o->n_items + (size_t)tpl_family_count() + 1, sizeof **out);
    if (!*out)
        return -1;
    int n = 0;
    for (int k = 0; k < o->n_items; k++)
        if (o->items[k].fam && tn_family_selected(o, o->items[k].fam))
            (*out)[n++] = (tn_chunk){o->items[k].fam, &o->items[k].problem, 1, 0};
    for (int i = 0; i < tpl_family_count(); i++) {
        const tpl_family *fam = tpl_family_at(i);
        const tpl_problem *list = NULL;
        int m = tn_family_selected(o, fam) ? tn_problems_of(o, fam, &list) : 0;
        if (m > 0)
            (*out)[n++] = (tn_chunk){fam, list, m, tn_second_looks(o, m)};
    }
    return n;
}

/* Prints what will be tuned; returns the number of problems and the summed
 * weights (tn_family_weight) of those the guided search shares the run's
 * default time among (problems whose applicable space is small enough for
 * the exhaustive search take none) in *weights. */
int tn_announce_problems(const tn_options *o, double *weights)
{
    int n_problems = 0;
    *weights = 0;
    if (o->n_items > 0) {
        printf("tuning first, in this order:");
        for (int k = 0; k < o->n_items; k++) {
            char s[64];
            if (!o->items[k].fam || !tn_family_selected(o, o->items[k].fam))
                continue;
            tn_format_size(&o->items[k].problem, s, sizeof s);
            printf("%s %s %s", n_problems ? "," : "", o->items[k].fam->name, s);
            n_problems++;
            *weights += tn_family_weight(o->items[k].fam);
        }
        printf("\n");
        if (o->items_only && !o->have_size)
            return n_problems;
    }
    printf("tuning sizes:");
    for (int i = 0; i < tpl_family_count(); i++) {
        const tpl_family *fam = tpl_family_at(i);
        const tpl_problem *list = NULL;
        if (!tn_family_selected(o, fam))
            continue;
        int n = tn_problems_of(o, fam, &list);
        if (n == 0)
            continue;
        printf("%s %s", n_problems ? ";" : "", fam->name);
        for (int k = 0; k < n; k++) {
            char s[64];
            tn_format_size(&list[k], s, sizeof s);
            printf("%s%s", k ? ", " : " ", s);
        }
        n_problems += n;
        /* a problem searched exhaustively takes no share of the guided time */
        long long *valid = NULL;
        long long n_valid = tpl_valid_configs_cached(fam, NULL, &valid);
        for (int k = 0; k < n; k++) {
            long long serving = tn_serving_configs(fam, valid, n_valid, &list[k],
                                                   TN_EXHAUSTIVE_MAX, NULL);
            if (o->strategy || n_valid < 0 || serving > TN_EXHAUSTIVE_MAX)
                *weights += tn_family_weight(fam);
        }
        free(valid);
    }
    printf("\n");
    return n_problems;
}

/* The signal handlers of a run: ^C and SIGTERM counted, SIGPIPE ignored. */
void tn_signals_catch(tn_signals *s)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tn_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &s->old_int);
    sigaction(SIGTERM, &sa, &s->old_term);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &s->old_pipe);
}

void tn_signals_restore(const tn_signals *s)
{
    sigaction(SIGINT, &s->old_int, NULL);
    sigaction(SIGTERM, &s->old_term, NULL);
    sigaction(SIGPIPE, &s->old_pipe, NULL);
}

int tn_begin_device(tn_ctx *c, const char *extra)
{
    const tn_options *o = c->opt;
    if (db_put_device(c->d, &c->dev, tpl_nvrtc_version()) != AT_OK) {
        fprintf(stderr, "autotune: %s\n", db_errmsg(c->d));
        return -1;
    }
    char gpu[512], facts[4096], cmd_esc[256];
    tn_gpu_facts(c->dev.uuid, gpu, sizeof gpu);
    tn_json_escape(o->strategy ? o->strategy : "auto", cmd_esc, sizeof cmd_esc);
    snprintf(facts, sizeof facts,
             "{\"strategy\": \"%s\", \"budget_s\": %g, \"budget_evals\": %lld, "
             "\"seed\": %llu, \"jobs\": %d, \"timeout_s\": %g, \"nvrtc\": \"%s\", %s%s}",
             cmd_esc, o->budget_s, o->budget_evals, c->seed, c->jobs, o->timeout_s,
             tpl_nvrtc_version(), gpu, extra);
    if (db_begin_session(c->d, c->dev.uuid, o->command, facts, &c->session_id) != AT_OK) {
        fprintf(stderr, "autotune: %s\n", db_errmsg(c->d));
        return -1;
    }
    return 0;
}

/* Starts the worker, opens the database, records the device and begins
 * the session. 0, or -1 with the message printed. */
static int open_run(tn_ctx *c, const char *path)
{
    char err[4096] = "";
    at_status st = tn_worker_up(c, err, sizeof err);
    if (st == AT_ERR_CRASHED || st == AT_ERR_IO) {
        fprintf(stderr, "autotune: the worker cannot start: %s\n", err);
        return -1;
    }
    if (st != AT_OK) {
        fprintf(stderr, "autotune: no CUDA driver/device: %s\n", err);
        return -1;
    }
    if (db_open(&c->d, path, 1, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune: cannot open the database %s: %s\n", path, err);
        return -1;
    }
    printf("device %d: %s (%s, %d SMs, %.1f GiB), database %s\n", c->device, c->dev.name,
           c->arch, c->dev.sm_count, (double)c->dev.memory_bytes / (1 << 30), path);
    fflush(stdout);
    return tn_begin_device(c, "");
}

void tn_end_device(tn_ctx *c, double total)
{
    char gpu[512], end_facts[1024];
    tn_gpu_facts(c->dev.uuid, gpu, sizeof gpu);
    snprintf(end_facts, sizeof end_facts,
             "{\"seconds\": %.3f, \"results_stored\": %lld, \"worker_respawns\": %lld, "
             "\"retried_after_worker_death\": %lld, \"problems_skipped\": %lld, %s}",
             total, c->stored, c->respawns, c->retries, c->skipped, gpu);
    const char *outcome = tn_interrupts ? "interrupted" : c->fatal ? "failed" : "complete";
    db_end_session(c->d, c->session_id, end_facts, outcome);
}

/* Ends the session and prints the run's summary; returns the exit status:
 * 130 interrupted, 1 failed, else exit_code. */
static int finish_run(tn_ctx *c, double total, int exit_code)
{
    tn_end_device(c, total);
    if (tn_interrupts) {
        printf("interrupted: %lld results stored; rerun the same command to resume\n",
               c->stored);
        exit_code = 130;
    } else if (c->fatal) {
        fprintf(stderr, "autotune: %s\n", c->fatal_msg);
        exit_code = 1;
    } else {
        printf("done: %lld results stored in %.1f s (%lld worker restarts", c->stored,
               total, c->respawns);
        if (c->retries)
            printf(", %lld retried after the worker died", c->retries);
        if (c->spec_submitted)
            printf(", %lld speculative compiles, %lld of them used", c->spec_submitted,
                   c->spec_used);
        printf(")\n");
        fflush(stdout);
        if (c->skipped)
            fprintf(stderr, "autotune: %lld problem%s skipped (see above)\n", c->skipped,
                    c->skipped > 1 ? "s" : "");
    }
    return exit_code;
}

int tn_tune(const tn_options *o)
{
    if (o->all_devices || o->n_devices > 1)
        return tn_tune_multi(o);
    tn_ctx c;
    memset(&c, 0, sizeof c);
    c.opt = o;
    c.device = o->n_devices == 1 ? o->devices[0] : o->device;
    c.spec = c.spec_own;
    c.worker.pid = -1;
    c.seed = o->seed;
    c.jobs = o->jobs > 0 ? o->jobs : tn_cpu_count();
    tn_interrupts = 0;
    memset((void *)tn_worker_pids, 0, sizeof tn_worker_pids);

    double weights = 0;
    if (tn_announce_problems(o, &weights) == 0) {
        fprintf(stderr, "autotune: no kernel has problems of that size; see autotune --help\n");
        return 2;
    }
    c.guided_unit_s = TN_RUN_SECONDS / (weights > 0 ? weights : 1.0);
    printf("seed %llu (--seed %llu repeats the inputs and the search)\n", c.seed, c.seed);
    fflush(stdout);

    char path[4096];
    tn_db_path(o->db_path, path, sizeof path);
    tn_signals sigs;
    tn_signals_catch(&sigs);

    int exit_code = 1;
    if (open_run(&c, path) != 0)
        goto out;
    tn_measure_ceiling(&c);
    c.pool = tn_pool_create(c.jobs);
    if (!c.pool) {
        fprintf(stderr, "autotune: could not start compile threads\n");
        goto out;
    }
    tn_prefetch pf;
    memset(&pf, 0, sizeof pf);
    c.pre = &pf;
    tn_prefetch_start(&c, &pf);
    exit_code = 0;
    double t0 = tn_now();
    tn_chunk *chunks = NULL;
    int n_chunks = tn_run_chunks(o, &chunks);
    for (int i = 0; i < n_chunks && !tn_interrupts && !c.fatal; i++) {
        const tpl_family *fam = chunks[i].fam;
        const tpl_problem *list = chunks[i].list;
        int n = chunks[i].n;
        unsigned char *failed = calloc((size_t)n + 1, 1);
        for (int k = 0; k < n && !tn_interrupts && !c.fatal; k++)
            if (tn_tune_problem(&c, fam, &list[k]) != 0 && !c.fatal) {
                exit_code = 1;
                if (failed)
                    failed[k] = 1;
            }
        c.second_look = 1;           /* none without the list of failures (out of memory) */
        for (int k = 0; failed && k < chunks[i].looks && !tn_interrupts && !c.fatal; k++)
            if (!failed[k] && tn_tune_problem(&c, fam, &list[k]) != 0 && !c.fatal)
                exit_code = 1;
        c.second_look = 0;
        free(failed);
    }
    free(chunks);
    if (n_chunks < 0) {
        fprintf(stderr, "autotune: out of memory\n");
        exit_code = 1;
    }
    tn_spec_finish(&c);
    tn_prefetch_finish(&c, &pf);
    c.pre = NULL;
    exit_code = finish_run(&c, tn_now() - t0, exit_code);
    tn_print_db_size(c.d);
out:
    tn_pool_destroy(c.pool);
    if (c.worker_up)
        tn_proc_stop(&c.worker);
    else if (c.worker.pid > 0)
        tn_proc_kill(&c.worker, NULL, 0);
    tn_worker_pids[0] = 0;
    db_close(c.d);
    fflush(stdout);
    tn_signals_restore(&sigs);
    return exit_code;
}
